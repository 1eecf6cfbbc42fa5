"""The `itbench` command line.

Exit codes: 0 clean, 1 findings (diagnostics of error severity, or files `fmt --check`
would change), 2 usage, I/O or internal errors. No traceback reaches a user unless
`--debug` is given. Only commands that talk to a cluster may import the kubernetes client.
"""

from __future__ import annotations

import difflib
import os
import sys
from pathlib import Path

import click

from . import __version__

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2
FORMATS = ("human", "concise", "json")


class UserError(click.ClickException):
    """An I/O or usage problem, reported as one line and exit code 2."""

    exit_code = EXIT_ERROR

    def show(self, file=None) -> None:
        click.echo(f"error: {self.format_message()}", err=True)


def _collect(paths: tuple[str, ...]) -> list[Path]:
    """Files named on the command line, and every `.itb` below each folder, in sorted order."""
    files: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            found = sorted(p for p in path.rglob("*.itb") if p.is_file())
            if not found:
                raise UserError(f"{raw}: no .itb files in this folder")
            files.extend(found)
        elif path.is_file():
            files.append(path)
        elif path.exists():
            raise UserError(f"{raw}: not a regular file")
        else:
            raise UserError(f"{raw}: no such file or folder")
    return files


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as exc:
        raise UserError(f"{path}: cannot read: {exc.strerror or exc}") from exc


def _display(path: Path) -> str:
    try:
        return os.path.relpath(path)
    except ValueError:
        return str(path)


def _report(diags, fmt: str) -> None:
    from .diagnostics import RENDERERS, render_human

    if fmt == "human":
        color = sys.stderr.isatty() and "NO_COLOR" not in os.environ
        text = render_human(diags, color=color)
        if text:
            click.echo(text, err=True, nl=False)
        return
    text = RENDERERS[fmt](diags)
    if text:
        click.echo(text, nl=False)


def _summary(diags, files: int, verb: str) -> str:
    errors = len(diags.errors())
    warnings = sum(1 for d in diags.items if d.severity == "warning")
    parts = [f"{files} file{'s' * (files != 1)} {verb}"]
    parts.append(f"{errors} error{'s' * (errors != 1)}")
    if warnings:
        parts.append(f"{warnings} warning{'s' * (warnings != 1)}")
    return ", ".join(parts)


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, "--version", prog_name="itbench")
@click.option("--debug", is_flag=True, help="Show Python tracebacks for internal errors.")
@click.pass_context
def cli(ctx: click.Context, debug: bool) -> None:
    """Write ITBench scenarios as short .itb files; compile them to everything a benchmark run needs.

    \b
    A first session:
      itbench check scenarios/                     # check every scenario, write nothing
      itbench compile scenarios/sre/otel-checkout-nonexistent-image.itb -o out/
      itbench fmt --check scenarios/               # are the files formatted?
      itbench explain E2003                        # what does this diagnostic mean?

    Exit codes: 0 clean, 1 findings, 2 usage, I/O or internal errors.
    """
    ctx.obj = {"debug": debug}


@cli.command()
@click.argument("files", nargs=-1, required=True, type=click.Path())
@click.option("-o", "--output", "output", required=True, type=click.Path(file_okay=False),
              help="Folder that receives one bundle folder per scenario (DIR/<scenario-name>/).")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="human", show_default=True,
              help="How diagnostics are printed.")
@click.option("-q", "--quiet", is_flag=True, help="Print nothing but diagnostics.")
def compile(files: tuple[str, ...], output: str, fmt: str, quiet: bool) -> None:
    """Compile scenarios into bundles.

    Each FILE (or every .itb below a folder) becomes OUTPUT/<scenario-name>/ with
    manifests/, inject/, revert/, itbench/ (scenario.yaml, groundtruth.yaml,
    groundtruth_v1.yaml), prompt.md, scenario.json and bundle.lock. A bundle is written
    atomically: a scenario with errors leaves nothing behind.

    \b
    Example:
      itbench compile scenarios/sre/otel-checkout-nonexistent-image.itb -o out/
    """
    from .bundle import BundleError, write_bundle
    from .compiler import compile_source
    from .diagnostics import Diagnostics

    paths = _collect(files)
    diags = Diagnostics()
    compiled = []
    names: dict[str, str] = {}
    for path in paths:
        before = len(diags.errors())
        result = compile_source(_read(path), _display(path), diags)
        if len(diags.errors()) > before or not result.files:
            continue
        if result.name in names:  # refused before anything is written
            raise UserError(f"{_display(path)}: scenario `{result.name}` is also compiled from {names[result.name]}; "
                            "scenario names must be unique")
        names[result.name] = _display(path)
        compiled.append((path, result))
    for path, result in compiled:
        try:
            target = write_bundle(Path(output), result.name, result.files)
        except BundleError as exc:
            raise UserError(str(exc)) from exc
        if not quiet and fmt == "human":
            click.echo(f"compiled {_display(path)} -> {_display(target)}/ ({len(result.files)} files)", err=True)
    _report(diags, fmt)
    if not quiet and fmt == "human":
        click.echo(_summary(diags, len(paths), "compiled"), err=True)
    sys.exit(EXIT_FINDINGS if diags.has_errors else EXIT_CLEAN)


@cli.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path())
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="human", show_default=True,
              help="human: with source excerpts; concise: one line each; json: for tools.")
def check(paths: tuple[str, ...], fmt: str) -> None:
    """Check scenarios as compile does, including output validation; write nothing.

    A folder means every .itb file below it. Exit code 1 when any error is found.

    \b
    Examples:
      itbench check scenarios/
      itbench check --format json scenarios/sre/otel-checkout-nonexistent-image.itb
    """
    from .compiler import compile_source
    from .diagnostics import Diagnostics

    files = _collect(paths)
    diags = Diagnostics()
    checked = []
    for path in files:
        result = compile_source(_read(path), _display(path), diags)
        checked.append((result.path, result.scenario if result.files else None))  # only scenarios without errors
    from .mechanisms import (
        duplicate_diagnostics,  # W2001: two scenarios measure the same thing
    )

    diags.extend(duplicate_diagnostics(checked, diags))
    _report(diags, fmt)
    if fmt == "human":
        click.echo(_summary(diags, len(files), "checked"), err=True)
    sys.exit(EXIT_FINDINGS if diags.has_errors else EXIT_CLEAN)


@cli.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path())
@click.option("--check", "check_only", is_flag=True, help="Change nothing; exit 1 if a file is not formatted.")
@click.option("--diff", "show_diff", is_flag=True, help="Change nothing; print what would change.")
def fmt(paths: tuple[str, ...], check_only: bool, show_diff: bool) -> None:
    """Format .itb files in the canonical layout (comments are kept).

    \b
    Examples:
      itbench fmt scenarios/
      itbench fmt --check scenarios/      # in CI
    """
    from .diagnostics import Diagnostics
    from .parser import decode, parse_source
    from .printer import print_document

    files = _collect(paths)
    diags = Diagnostics()
    changed = []
    for path in files:
        data = _read(path)
        source = decode(data, _display(path), diags)
        document = parse_source(source, diags) if source is not None else None
        if document is None:
            continue
        formatted = print_document(document, source.text)
        if formatted == source.text:
            continue
        changed.append(path)
        if show_diff:
            click.echo("".join(difflib.unified_diff(source.text.splitlines(True), formatted.splitlines(True),
                                                    f"a/{_display(path)}", f"b/{_display(path)}")), nl=False)
        elif check_only:
            click.echo(f"would reformat {_display(path)}", err=True)
        else:
            _replace_file(path, formatted)
            click.echo(f"reformatted {_display(path)}", err=True)
    _report(diags, "human")
    if diags.has_errors:
        sys.exit(EXIT_FINDINGS)
    if (check_only or show_diff) and changed:
        sys.exit(EXIT_FINDINGS)
    sys.exit(EXIT_CLEAN)


def _replace_file(path: Path, text: str) -> None:
    temporary = path.with_name(f".{path.name}.fmt-tmp")
    try:
        temporary.write_text(text, encoding="utf-8")
        os.replace(temporary, path)
    except OSError as exc:
        temporary.unlink(missing_ok=True)
        raise UserError(f"{path}: cannot write: {exc.strerror or exc}") from exc


@cli.command()
@click.argument("code", required=False)
def explain(code: str | None) -> None:
    """Explain a diagnostic code (E2003), or list them all.

    \b
    Examples:
      itbench explain E2003
      itbench explain            # every code with its title
    """
    from .codes import CODES
    from .codes import explain as explain_code

    if code is None:
        for entry in CODES.values():
            click.echo(f"{entry.code}  {entry.title}")
        return
    page = explain_code(code)
    if page is None:
        raise UserError(f"no diagnostic code {code}; `itbench explain` lists them")
    click.echo(page, nl=False)


@cli.command()
def schema() -> None:
    """Print the JSON Schema of the scenario IR (the scenario.json of every bundle).

    \b
    Example:
      itbench schema > scenario-ir.schema.json
    """
    import json

    from .ir import json_schema

    click.echo(json.dumps(json_schema(), indent=2))


@cli.command()
def apps() -> None:
    """List the applications `use app "NAME"` can import.

    \b
    Example:
      itbench apps
    """
    from .topology import app_names, load_app

    for name in app_names():
        app = load_app(name)[0]
        description = next((s.text for s in app.statements if type(s).__name__ == "Description"), "") if app else ""
        click.echo(f"{name}  {description}")


@cli.command()
def faults() -> None:
    """List the faults `fault KIND on TARGET` accepts, with their ITBench ids.

    \b
    Example:
      itbench faults
    """
    from .faults import FAULTS

    width = max(len(name) for name in FAULTS)
    for kind in FAULTS.values():
        click.echo(f"{kind.name:{width}}  on {'|'.join(kind.targets):24} {kind.itbench_id or '(not in ITBench)'}")
        click.echo(f"{'':{width}}     {kind.summary}")


def main(argv: list[str] | None = None) -> None:
    debug = "--debug" in (argv if argv is not None else sys.argv[1:])
    try:
        cli.main(args=argv, prog_name="itbench", standalone_mode=False)
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
    except click.ClickException as exc:
        exc.show()
        sys.exit(EXIT_ERROR)
    except click.exceptions.Abort:
        click.echo("aborted", err=True)
        sys.exit(EXIT_ERROR)
    except KeyboardInterrupt:
        sys.exit(130)
    except SystemExit:
        raise
    except BaseException as exc:  # an internal error: never a traceback unless asked for
        if debug:
            raise
        click.echo(f"internal error: {type(exc).__name__}: {exc}\n"
                   "This is a bug in itbench; run again with --debug for the traceback.", err=True)
        sys.exit(EXIT_ERROR)
