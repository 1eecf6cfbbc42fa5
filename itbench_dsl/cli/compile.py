"""`itbench compile`: scenarios into bundles (or into ITBench's own layout)."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from .common import EXIT_CLEAN, EXIT_FINDINGS, FORMATS, HINT_LEVELS, UserError, collect, display, read, report, summary


@click.command("compile")
@click.argument("files", nargs=-1, required=True, type=click.Path())
@click.option("-o", "--output", "output", required=True, type=click.Path(file_okay=False),
              help="Folder that receives one bundle folder per scenario (DIR/<scenario-name>/).")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="human", show_default=True,
              help="How diagnostics are printed.")
@click.option("-q", "--quiet", is_flag=True, help="Print nothing but diagnostics.")
@click.option("--hints", type=click.Choice(HINT_LEVELS), default="none", show_default=True,
              help="What the agent's prompt gives away: none (the application and namespaces), topology (also the "
                   "components and their calls), localized (also where the symptoms are, never the root cause).")
@click.option("--target", type=click.Choice(("bundle", "itbench")), default="bundle", show_default=True,
              help="bundle: the full bundle; itbench: only ITBench's own files, in its layout (OUTPUT/<ITBench folder>/).")
def command(files: tuple[str, ...], output: str, fmt: str, quiet: bool, hints: str, target: str) -> None:
    """Compile scenarios into bundles.

    Each FILE (or every .itb below a folder) becomes OUTPUT/<scenario-name>/ with
    manifests/, inject/, revert/, itbench/ (scenario.yaml, groundtruth.yaml,
    groundtruth_v1.yaml), prompt.md, scenario.json and bundle.lock. A bundle is written
    atomically: a scenario with errors leaves nothing behind.

    With --target itbench, each scenario becomes OUTPUT/<folder>/ holding only ITBench's files
    (scenario.yaml, groundtruth.yaml, groundtruth_v1.yaml; for CISO also info.json, input.json,
    goal.txt, manifests/, tasks/ and eval_config.yaml), named as ITBench names it (scenario_<id>
    for SRE and FinOps, the id for CISO, the scenario's name when it has no ITBench id).

    \b
    Example:
      itbench compile scenarios/sre/otel-checkout-nonexistent-image.itb -o out/
      itbench compile scenarios/ciso/ -o itbench-out/ --target itbench
    """
    from ..backends.itbench_ciso import export_files, export_folder
    from ..bundle import BundleError, write_bundle
    from ..compiler import compile_source
    from ..diagnostics import Diagnostics

    paths = collect(files)
    diags = Diagnostics()
    compiled = []
    names: dict[str, str] = {}
    for path in paths:
        before = len(diags.errors())
        result = compile_source(read(path), display(path), diags, hints=hints)
        if len(diags.errors()) > before or not result.files:
            continue
        folder = result.name if target == "bundle" else export_folder(result.scenario)
        if folder in names:  # refused before anything is written
            what = f"scenario `{folder}`" if target == "bundle" else f"ITBench folder `{folder}`"
            raise UserError(f"{display(path)}: {what} is also compiled from {names[folder]}; "
                            f"scenario names{'' if target == 'bundle' else ' and ITBench ids'} must be unique")
        names[folder] = display(path)
        compiled.append((path, folder, result.files if target == "bundle" else export_files(result.files)))
    for path, folder, written in compiled:
        try:
            where = write_bundle(Path(output), folder, written)
        except BundleError as exc:
            raise UserError(str(exc)) from exc
        if not quiet and fmt == "human":
            click.echo(f"compiled {display(path)} -> {display(where)}/ ({len(written)} files)", err=True)
    report(diags, fmt)
    if not quiet and fmt == "human":
        click.echo(summary(diags, len(paths), "compiled"), err=True)
    sys.exit(EXIT_FINDINGS if diags.has_errors else EXIT_CLEAN)
