"""`itbench docs`: a Markdown page per scenario, with its picture, and an index of the library."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import click

from .common import EXIT_CLEAN, EXIT_FINDINGS, UserError, collect, display, read, report


def library_items(files: list[Path], out_dir: Path, diags) -> list:
    """Checked scenarios of `files` as `scenario_docs.Item`s linking from `out_dir`; errors go to `diags`."""
    from ..compiler import compile_source
    from ..scenario_docs import Item

    items = []
    names: dict[str, str] = {}
    target = out_dir.resolve()
    for path in files:
        before = len(diags.errors())
        result = compile_source(read(path), display(path), diags)
        if len(diags.errors()) > before or result.scenario is None:
            continue  # errors are reported; an application file has no page
        scenario = result.scenario
        if scenario.name in names:
            raise UserError(f"{display(path)}: scenario `{scenario.name}` is also in {names[scenario.name]}; "
                            "scenario names must be unique")
        if scenario.name.lower() == "readme":
            raise UserError(f"{display(path)}: a scenario named `{scenario.name}` would overwrite the index README.md")
        names[scenario.name] = display(path)
        link = os.path.relpath(path.resolve(), target).replace(os.sep, "/")
        items.append(Item(scenario, link))
    return items


@click.command("docs")
@click.argument("paths", nargs=-1, required=True, type=click.Path())
@click.option("-o", "--output", "output", required=True, type=click.Path(file_okay=False),
              help="Folder of the pages; replaced as a whole (it must hold only pages `itbench docs` wrote).")
def command(paths: tuple[str, ...], output: str) -> None:
    """Write a Markdown page per scenario and an index table (README.md) of them.

    Each page has the scenario's description, domain, complexity, ITBench id, tags, faults
    with their arguments, expected alerts, root causes, propagation, mitigation criteria,
    solutions, its picture as a Mermaid diagram (rendered by GitHub) and a link to its .itb
    file. The folder is replaced atomically: pages of removed scenarios disappear, and a
    scenario with errors leaves the previous pages as they were (exit code 1).

    \b
    Example:
      itbench docs scenarios/ -o docs/scenarios/
    """
    from ..diagnostics import Diagnostics
    from ..scenario_docs import DocsError, render_library, write_library

    files = collect(paths)
    out_dir = Path(output)
    diags = Diagnostics()
    items = library_items(files, out_dir, diags)
    if diags.has_errors:
        report(diags, "human")
        click.echo(f"{len(files)} file{'s' * (len(files) != 1)} checked, errors found: nothing written", err=True)
        sys.exit(EXIT_FINDINGS)
    try:
        write_library(out_dir, render_library(items))
    except DocsError as exc:
        raise UserError(str(exc)) from exc
    report(diags, "human")
    click.echo(f"wrote {len(items)} scenario page{'s' * (len(items) != 1)} and README.md to {display(out_dir)}/",
               err=True)
    sys.exit(EXIT_CLEAN)
