"""`itbench check`: check scenarios as compile does, self-validate and lint them; write nothing."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from .common import EXIT_CLEAN, EXIT_FINDINGS, FORMATS, HINT_LEVELS, collect, display, read, report, summary


@click.command("check")
@click.argument("paths", nargs=-1, type=click.Path())
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="human", show_default=True,
              help="human: with source excerpts; concise: one line each; json: for tools; github: GitHub Actions "
                   "annotations; sarif: SARIF 2.1.0 (code scanning).")
@click.option("--strict", is_flag=True, help="Warnings count as errors for the exit code.")
@click.option("--ignore", "ignored", multiple=True, metavar="CODE",
              help="Do not report this warning code (repeatable, or comma-separated: --ignore W2002,W2004).")
@click.option("-j", "--jobs", "processes", type=click.IntRange(min=1), default=None,
              help="Processes to check with (default: one per CPU core, up to 8, from 48 files on).")
@click.option("--hints", type=click.Choice(HINT_LEVELS), default="none", show_default=True,
              help="What the agent's prompt gives away: none (the application and namespaces), topology (also the "
                   "components and their calls), localized (also where the symptoms are, never the root cause).")
@click.option("--app-path", "app_path", multiple=True, type=click.Path(file_okay=False),
              help="A folder where `use app \"NAME\"` looks for NAME.itb (repeatable), before itbench.toml's "
                   "`[apps] path` and the standard library.")
def command(paths: tuple[str, ...], fmt: str, strict: bool, ignored: tuple[str, ...], processes: int | None,
            hints: str, app_path: tuple[str, ...] = ()) -> None:
    """Check scenarios as compile does, then lint them; write nothing.

    Everything compile checks (including output validation), the scenario's self-validation
    (its evaluator fails on the faulty state, passes on the healthy and solved ones), and the
    lint rules (W codes: `itbench explain W2002`) on every file that has no error. A folder
    means every .itb file below it; with no PATH, the `scenarios/` folder of the current folder
    when there is one (a repository's library), else every .itb file below the current folder.

    Warnings can be turned off for a run (--ignore W2002) or for one scenario, in its metadata:
    `metadata { lint_allow = ["W2002"] }` (a scenario with deliberate red herrings, say).
    Errors cannot.

    Exit code 0 clean (warnings allowed), 1 when an error is found (or a warning, with
    --strict), 2 for usage and I/O errors.

    \b
    Examples:
      itbench check                                  # scenarios/ (or every .itb here)
      itbench check --strict --format github scenarios/
      itbench check --format sarif scenarios/ > itbench.sarif
      itbench check --app-path apps/ scenarios/      # `use app "NAME"` finds apps/NAME.itb
    """
    from ..checking import check_files, workers_for
    from ..codes import CODES

    ignore = {c.strip().upper() for value in ignored for c in value.split(",") if c.strip()}
    for code in sorted(ignore):
        if code not in CODES:
            raise click.UsageError(f"--ignore {code}: no such diagnostic code (`itbench explain` lists them)")
        if CODES[code].severity != "warning":
            raise click.UsageError(f"--ignore {code}: only warnings can be ignored, {code} is an error")
    if not paths:
        paths = ("scenarios",) if Path("scenarios").is_dir() else (".",)
        if paths == (".",) and not any(p.is_file() for p in Path(".").rglob("*.itb")):
            raise click.UsageError("no PATH given, and no scenarios/ folder or .itb file below the current folder")
    files = collect(paths)
    jobs = [(display(path), read(path)) for path in files]
    diags, _ = check_files(jobs, hints, workers_for(len(jobs), processes), ignore, app_path)
    report(diags, fmt)
    if fmt in ("human", "github"):
        click.echo(summary(diags, len(files), "checked"), err=True)
    failed = diags.has_errors or (strict and bool(diags.items))
    sys.exit(EXIT_FINDINGS if failed else EXIT_CLEAN)
