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
        click.echo(f"error: {self.format_message()}", err=True)


def collect(paths: tuple[str, ...], pattern: str = "*.itb") -> list[Path]:
    """Files named on the command line, and every file matching `pattern` below each folder, in sorted order."""
    files: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            found = sorted(p for p in path.rglob(pattern) if p.is_file())
            if not found:
                raise UserError(f"{raw}: no {pattern.lstrip('*')} files in this folder")
            files.extend(found)
        elif path.is_file():
            files.append(path)
        elif path.exists():
            raise UserError(f"{raw}: not a regular file")
        else:
            raise UserError(f"{raw}: no such file or folder")
    return files


def read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as exc:
        raise UserError(f"{path}: cannot read: {exc.strerror or exc}") from exc


def display(path: Path) -> str:
    try:
        return os.path.relpath(path)
    except ValueError:
        return str(path)


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
    """Write `text` to `path` atomically (a temporary file renamed into place)."""
    temporary = path.with_name(f".{path.name}.itbench-tmp")
    try:
        temporary.write_text(text, encoding="utf-8")
        os.replace(temporary, path)
    except OSError as exc:
        temporary.unlink(missing_ok=True)
        raise UserError(f"{path}: cannot write: {exc.strerror or exc}") from exc


def write_atomically(target: Path, files: dict[str, bytes]) -> None:
    """Write every file into a temporary folder beside `target`, then put it in place.

    An existing `target` is replaced only when it is empty or holds an earlier run's index.json."""
    import shutil
    import tempfile

    if target.exists():
        if not target.is_dir():
            raise UserError(f"{display(target)}: exists and is not a folder")
        if any(target.iterdir()) and not (target / "index.json").is_file():
            raise UserError(f"{display(target)}: not empty and not the output of `itbench generate`; "
                            "choose another folder")
    parent = target.resolve().parent
    try:
        parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=parent))
    except OSError as exc:
        raise UserError(f"{display(target)}: cannot write: {exc.strerror or exc}") from exc
    try:
        for name, content in files.items():
            (staging / name).write_bytes(content)
        if target.exists():
            old = Path(tempfile.mkdtemp(prefix=f".{target.name}.old.", dir=parent))
            os.replace(target, old / "previous")
            os.replace(staging, target)
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.replace(staging, target)
    except OSError as exc:
        shutil.rmtree(staging, ignore_errors=True)
        raise UserError(f"{display(target)}: cannot write: {exc.strerror or exc}") from exc
