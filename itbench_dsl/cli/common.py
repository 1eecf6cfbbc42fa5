"""What the `itbench` commands share: exit codes, option choices, the one-line user error, reading
the files named on the command line, printing diagnostics, and writing files atomically.

Only the standard library and click are imported here: every command module imports this one,
and `itbench --help` imports every command module.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import click

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2
FORMATS = ("human", "concise", "json", "github", "sarif")  # diagnostics.RENDERERS, without importing it here
HINT_LEVELS = ("none", "topology", "localized")  # backends/prompt.HINT_LEVELS, without importing Jinja here


class UserError(click.ClickException):
    """An I/O or usage problem, reported as one line and exit code 2."""

    exit_code = EXIT_ERROR

    def show(self, file=None) -> None:
        click.echo(f"error: {terminal(self.format_message())}", err=True)


def collect(paths: tuple[str, ...], pattern: str = "*.itb") -> list[Path]:
    """Files named on the command line, and every file matching `pattern` below each folder, in sorted order."""
    files: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            found = sorted(p for p in path.rglob(pattern) if p.is_file())
            if not found:
                raise UserError(f"{terminal(raw)}: no {pattern.lstrip('*')} files in this folder")
            files.extend(found)
        elif path.is_file():
            files.append(path)
        elif path.exists():
            raise UserError(f"{terminal(raw)}: not a regular file")
        else:
            raise UserError(f"{terminal(raw)}: no such file or folder")
    return files


READ_LIMIT = 16 * 1024 * 1024  # bytes read of any input; the parser's own limit (E1008) is lower


def read(path: Path) -> bytes:
    """The bytes of the regular file `path`. A FIFO, a device or a folder is refused without reading it
    (opening a FIFO does not wait for a writer), and so is a file over READ_LIMIT."""
    import stat

    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0))
    except OSError as exc:
        raise UserError(f"{display(path)}: cannot read: {exc.strerror or exc}") from exc
    with os.fdopen(fd, "rb") as handle:
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode):
                raise UserError(f"{display(path)}: not a regular file")
            if info.st_size > READ_LIMIT:
                raise UserError(f"{display(path)}: {info.st_size:,} bytes, larger than any input itbench reads "
                                f"({READ_LIMIT:,})")
            data = handle.read(READ_LIMIT + 1)
        except OSError as exc:
            raise UserError(f"{display(path)}: cannot read: {exc.strerror or exc}") from exc
    if len(data) > READ_LIMIT:  # it grew while we read
        raise UserError(f"{display(path)}: larger than any input itbench reads ({READ_LIMIT:,} bytes)")
    return data


def display(path: Path) -> str:
    """A path as the user wrote it: absolute stays absolute, relative stays relative (normalised); safe on a
    terminal (`terminal`)."""
    return terminal(os.path.normpath(path))


def terminal(text: str) -> str:
    """`text` with the characters a terminal acts on escaped (diagnostics.escape_controls)."""
    from ..diagnostics import escape_controls

    return escape_controls(text)


def report(diags, fmt: str) -> None:
    """Print `diags` in the format `fmt` (FORMATS): human to standard error, the others to standard output."""
    from ..diagnostics import RENDERERS, render_human

    if fmt == "human":
        color = sys.stderr.isatty() and "NO_COLOR" not in os.environ
        text = render_human(diags, color=color)
        if text:
            click.echo(text, err=True, nl=False)
        return
    text = RENDERERS[fmt](diags)
    if text:
        click.echo(text, nl=False)


def summary(diags, files: int, verb: str) -> str:
    errors = len(diags.errors())
    warnings = sum(1 for d in diags.items if d.severity == "warning")
    parts = [f"{files} file{'s' * (files != 1)} {verb}"]
    parts.append(f"{errors} error{'s' * (errors != 1)}")
    if warnings:
        parts.append(f"{warnings} warning{'s' * (warnings != 1)}")
    return ", ".join(parts)


def replace_file(path: Path, text: str) -> None:
    """Write `text` to `path` atomically (bundle.write_file: a unique temporary file renamed into place)."""
    from ..bundle import BundleError, write_file

    try:
        write_file(path, text.encode("utf-8"))
    except BundleError as exc:
        raise UserError(str(exc)) from exc


def write_atomically(target: Path, files: dict[str, bytes], ours=None,
                     what: str = "the output of an earlier `itbench generate`") -> None:
    """Make the folder `target` hold exactly `files`, atomically (bundle.write_folder).

    An existing `target` is replaced only when it is empty or `ours` recognises it (default: an earlier
    run's output of `itbench generate`, generate_owner)."""
    from ..bundle import BundleError, write_folder

    try:
        write_folder(target, files, ours if ours is not None else generate_owner(), what)
    except BundleError as exc:
        raise UserError(str(exc)) from exc


def generate_owner():
    """An earlier output of `itbench generate`, strictly: its index.json (variants.index_listing) lists
    every `.itb` file of the folder, which holds nothing else but index.csv (bundle.Listed)."""
    from ..bundle import Listed
    from ..variants import index_listing

    return Listed("index.json", index_listing, also=frozenset({"index.csv"}), exact=True)


def refuse_destination(target: Path, ours, what: str) -> None:
    """UserError, before anything is computed or written, unless `target` may be replaced (bundle.check_destination)."""
    from ..bundle import BundleError, check_destination

    try:
        check_destination(target, ours, what)
    except BundleError as exc:
        raise UserError(str(exc)) from exc
