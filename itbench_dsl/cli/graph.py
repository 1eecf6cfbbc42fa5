"""`itbench graph`: draw a scenario's topology with its fault, root cause and propagation."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from .common import EXIT_CLEAN, EXIT_FINDINGS, UserError, display, read, replace_file, report

INSTALL_HINT = ("install Graphviz (`apt-get install graphviz`, `brew install graphviz`, or graphviz.org/download) "
                "or draw with --format dot or --format mermaid")


def compile_scenario(path: Path, diags):
    """The checked scenario of `path`, or None when it has errors (they are in `diags`)."""
    from ..compiler import compile_source

    before = len(diags.errors())
    result = compile_source(read(path), display(path), diags)
    if len(diags.errors()) > before:
        return None
    if result.scenario is None:
        raise UserError(f"{display(path)}: an application, not a scenario; `itbench graph` draws scenarios")
    return result.scenario


def run_dot(text: str, timeout: float = 60.0) -> str:
    """SVG from DOT text, by Graphviz's `dot` on PATH; UserError when it is missing or fails."""
    import shutil
    import subprocess

    program = shutil.which("dot")
    if program is None:
        raise UserError(f"--format svg needs Graphviz's `dot` program, which is not on PATH: {INSTALL_HINT}")
    try:
        proc = subprocess.run([program, "-Tsvg"], input=text.encode("utf-8"), capture_output=True,
                              timeout=timeout, check=False)
    except subprocess.TimeoutExpired as exc:
        raise UserError(f"Graphviz `dot` ran longer than {timeout:g} s") from exc
    except OSError as exc:
        raise UserError(f"cannot run Graphviz `dot`: {exc.strerror or exc}") from exc
    if proc.returncode != 0:
        detail = " ".join(proc.stderr.decode("utf-8", "replace").split())[:400]
        raise UserError(f"Graphviz `dot` failed (exit code {proc.returncode}): {detail}")
    return proc.stdout.decode("utf-8")


@click.command("graph")
@click.argument("file", type=click.Path())
@click.option("--format", "fmt", type=click.Choice(("mermaid", "dot", "svg")), default="mermaid", show_default=True,
              help="mermaid: renders on GitHub, needs nothing; dot: Graphviz source; svg: drawn by Graphviz's `dot`.")
@click.option("-o", "--output", "output", type=click.Path(dir_okay=False),
              help="Write the picture to this file (default: standard output).")
@click.option("--focus", default="auto", show_default=True, metavar="auto|all|N",
              help="Which components to draw: those within N dependency hops of the fault targets and root causes "
                   "(plus every object the scenario names), all of them, or auto: all up to 12 components, else 1 hop.")
def command(file: str, fmt: str, output: str | None, focus: str) -> None:
    """Draw a scenario: its components, the fault target, root cause and propagation chain.

    One box per component (a workload with its pods, services and autoscaler); grey arrows are
    dependencies (caller -> callee), red numbered arrows the propagation in order. The fault
    target is orange, the root cause red, components with an expected alert yellow.

    \b
    Examples:
      itbench graph scenarios/sre/otel-cart-deleted-service.itb                 # Mermaid, to stdout
      itbench graph scenarios/sre/otel-cart-deleted-service.itb --format svg -o cart.svg
      itbench graph scenarios/sre/otel-cart-deleted-service.itb --format dot --focus all
    """
    from .. import graph
    from ..diagnostics import Diagnostics

    try:
        focus = graph.parse_focus(focus)
    except ValueError as exc:
        raise UserError(str(exc)) from exc
    path = Path(file)
    if path.is_dir():
        raise UserError(f"{file}: a folder; `itbench graph` draws one scenario file")
    if not path.exists():
        raise UserError(f"{file}: no such file")
    diags = Diagnostics()
    scenario = compile_scenario(path, diags)
    if scenario is None:
        report(diags, "human")
        sys.exit(EXIT_FINDINGS)
    text = graph.render(scenario, "dot" if fmt == "svg" else fmt, focus)
    if fmt == "svg":
        text = run_dot(text)
    if output is None:
        click.echo(text, nl=False)
    else:
        replace_file(Path(output), text)
        click.echo(f"wrote {display(Path(output))}", err=True)
    report(diags, "human")  # warnings, if any
    sys.exit(EXIT_CLEAN)
