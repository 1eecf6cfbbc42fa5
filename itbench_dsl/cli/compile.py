"""`itbench compile`: scenarios into bundles (or into ITBench's own layout)."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from .common import EXIT_CLEAN, EXIT_FINDINGS, FORMATS, HINT_LEVELS, UserError, collect, display, read, report, summary


# compiler.TARGETS' names (named here so that `--help` needs no compiler import; tests/backends/test_engine_targets.py
# checks that the two agree)
TARGET_NAMES = ("bundle", "itbench", "chainsaw", "argo")


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
@click.option("--target", type=click.Choice(TARGET_NAMES), default="bundle", show_default=True,
              help="bundle: the full bundle; itbench: only ITBench's own files, in its layout (OUTPUT/<ITBench folder>/); "
                   "chainsaw: the bundle with a Chainsaw Test that runs it; argo: an Argo WorkflowTemplate per scenario "
                   "(docs/running.md).")
@click.option("--app-path", "app_path", multiple=True, type=click.Path(file_okay=False),
              help="A folder where `use app \"NAME\"` looks for NAME.itb (repeatable), before itbench.toml's "
                   "`[apps] path` and the standard library.")
def command(files: tuple[str, ...], output: str, fmt: str, quiet: bool, hints: str, target: str,
            app_path: tuple[str, ...] = ()) -> None:
    """Compile scenarios into bundles.

    Each FILE (or every .itb below a folder) becomes OUTPUT/<scenario-name>/ with
    manifests/, inject/, revert/, itbench/ (scenario.yaml, groundtruth.yaml,
    groundtruth_v1.yaml), prompt.md, evaluator.py (the grader, standard library only),
    scenario.json and bundle.lock. A bundle is written atomically: a scenario with errors
    leaves nothing behind. An existing OUTPUT/<scenario-name> is replaced only when it is
    empty or an earlier bundle (its bundle.lock lists every file in it); a file, a link or another
    folder there is refused, and then nothing is written.
    Compiles running at once into one OUTPUT each succeed, and the last complete bundle stays.

    With --target itbench, each scenario becomes OUTPUT/<folder>/ holding only ITBench's files
    (scenario.yaml, groundtruth.yaml, groundtruth_v1.yaml; for CISO also info.json, input.json,
    goal.txt, manifests/, tasks/, and eval_config.yaml for the Kyverno update class), named as ITBench names it (scenario_<id>
    for SRE and FinOps, the id for CISO, the scenario's name when it has no ITBench id).

    With --target chainsaw, OUTPUT/<scenario-name>/ is the bundle plus chainsaw-test.yaml, a
    Chainsaw Test of the whole run (`chainsaw test OUTPUT/`); with --target argo, it holds
    workflowtemplate.yaml, an Argo WorkflowTemplate with the bundle inside (`itbench plan` runs
    many). See docs/running.md.

    \b
    Example:
      itbench compile scenarios/sre/otel-checkout-nonexistent-image.itb -o out/
      itbench compile scenarios/ciso/ -o itbench-out/ --target itbench
    """
    from ..backends.itbench_ciso import export_findings
    from ..applications import app_search_path
    from ..bundle import LOCK, BundleError, bundle_owner, check_destination, same_layout, write_bundle
    from ..compiler import TARGETS, compile_source, target_files
    from ..diagnostics import Diagnostics

    paths = collect(files)
    diags = Diagnostics()
    compiled = []
    names: dict[str, str] = {}
    for path in paths:
        before = len(diags.errors())
        with app_search_path(app_path):
            result = compile_source(read(path), display(path), diags, hints=hints)
        if len(diags.errors()) > before or not result.files:
            continue
        folder = TARGETS[target].folder(result)
        if folder in names:  # the second of one name is not written (E2002, as `itbench check` reports it)
            what = f"ITBench folder `{folder}`" if target == "itbench" else f"scenario `{folder}`"
            span = result.source_map.scenario if result.source_map is not None else result.document.name_span
            diags.error("E2002", f"{what} is also compiled from {names[folder]}", display(path), span,
                        "second scenario of this name", help=f"a bundle's folder is its scenario's "
                        f"{'ITBench id' if target == 'itbench' else 'name'}: give each scenario its own")
            continue
        names[folder] = display(path)
        if target == "itbench":
            found = export_findings(result)
            diags.extend(found)
            if any(d.severity == "error" for d in found):  # ITBench would run nothing of it: not written
                continue
        written = target_files(result, target, diags)
        if written:
            compiled.append((path, folder, written))
    for path, folder, written in compiled:  # every destination checked before any is written
        try:
            check_destination(Path(output) / folder, bundle_owner(written) if LOCK in written else same_layout(written),
                              "a bundle folder itbench wrote" if LOCK in written else "a folder itbench wrote")
        except BundleError as exc:
            raise UserError(str(exc)) from exc
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
