"""`itbench import`: an ITBench scenario (index file or compiled folder) as a formatted `.itb` file."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from .common import EXIT_CLEAN, EXIT_FINDINGS, FORMATS, UserError, display, replace_file, report


@click.command("import")
@click.argument("path", type=click.Path(path_type=Path))
@click.option("-o", "--output", type=click.Path(path_type=Path), default=None,
              help="Write the scenario to this .itb file (default: standard output).")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="human", show_default=True,
              help="How to print diagnostics.")
def command(path: Path, output: Path | None, fmt: str) -> None:
    """Import an ITBench scenario as a .itb file.

    PATH is an ITBench scenario index file (library/scenarios/N.json) or a compiled scenario folder
    (scenario_N/ with scenario.yaml, groundtruth.yaml and groundtruth_v1.yaml), or an ITBench CISO
    scenario folder. Defects of the ITBench files are reported as warnings that point into them; the
    scenario written carries the correction. Without -o the scenario is printed.

    \b
    Examples:
      itbench import ITBench/scenarios/sre/scenario_16 -o scenarios/sre/otel-shipping-quote-address.itb
      itbench import ITBench/library/scenarios/16.json
      itbench import ITBench/scenarios/ciso/1.gen-cis-b-k8s-kyverno -o cis-host-network.itb
    """
    from ..diagnostics import Diagnostics
    from ..importer import import_path

    if not path.exists():
        raise UserError(f"{display(path)}: no such file or folder")
    from ..checking import check_source

    diags = Diagnostics()
    text = import_path(path, diags)
    if text is None or diags.errors():
        report(diags, fmt)
        sys.exit(EXIT_FINDINGS)
    # the scenario must pass what `itbench check` asks of it (self-validation included), not only compile:
    # what it lacks is reported against the file written, which is still written for the author to finish
    checked = check_source(text.encode("utf-8"), display(output) if output is not None else "<imported>", lint=False)
    diags.extend(checked.errors())
    diags.sources.update(checked.sources)
    report(diags, fmt)
    if output is None:
        click.echo(text, nl=False)
    else:
        replace_file(output, text)
        click.echo(f"imported {display(path)} -> {display(output)}", err=True)
    if checked.has_errors:
        click.echo("the imported scenario does not pass `itbench check` yet: complete it as the errors say", err=True)
        sys.exit(EXIT_FINDINGS)
    sys.exit(EXIT_CLEAN)
