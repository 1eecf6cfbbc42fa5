"""`itbench import`: an ITBench scenario (index file or compiled folder) as a formatted `.itb` file."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import click

from .common import EXIT_CLEAN, EXIT_FINDINGS, FORMATS, UserError, display, report


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
    diags = Diagnostics()
    text = import_path(path, diags)
    report(diags, fmt)
    if text is None or diags.errors():
        sys.exit(EXIT_FINDINGS)
    if output is None:
        click.echo(text, nl=False)
    else:
        _write(output, text)
        click.echo(f"imported {display(path)} -> {display(output)}", err=True)
    sys.exit(EXIT_CLEAN)


def _write(path: Path, text: str) -> None:
    """Write atomically: a failure leaves no half-written file."""
    temporary = path.with_name(f".{path.name}.import-tmp")
    try:
        if path.parent and not path.parent.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
        temporary.write_text(text, encoding="utf-8")
        os.replace(temporary, path)
    except OSError as exc:
        try:
            temporary.unlink()
        except OSError:
            pass
        raise UserError(f"{display(path)}: cannot write: {exc.strerror or exc}") from exc
