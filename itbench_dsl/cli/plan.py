"""`itbench plan`: an Argo Workflow that runs many scenarios, agents and repeats across clusters."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import click

from .common import EXIT_CLEAN, EXIT_FINDINGS, FORMATS, UserError, collect, display, read, report, summary

_AGENT = re.compile(r"([a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?)=(.+)\Z", re.S)
_SECRET = re.compile(r"[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?\Z")


@click.command("plan")
@click.argument("files", nargs=-1, required=True, type=click.Path())
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False),
              help="The Workflow's YAML file (written atomically).")
@click.option("--agent", "agents", multiple=True, required=True, metavar="NAME=COMMAND",
              help="An agent: its name (a DNS label) and the command that runs it. Repeatable.")
@click.option("--cluster", "clusters", multiple=True, required=True, metavar="SECRET",
              help="A cluster: the Secret (key `config`) holding its kubeconfig, in the Workflow's namespace. Repeatable; "
                   "runs are dealt to clusters in turn, one at a time per cluster.")
@click.option("--repeats", type=click.IntRange(1, 100), default=1, show_default=True, help="Runs per scenario and agent.")
@click.option("--parallelism", type=click.IntRange(1, 1000), default=4, show_default=True,
              help="Runs at once (at most one per cluster).")
@click.option("--image", required=True, help="The image the runs' pods use: sh, kubectl, curl and python3.")
@click.option("--prometheus", default="", help="The Prometheus URL the runs read alerts from.")
@click.option("--name", default="itbench-plan", show_default=True, help="The Workflow's name.")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="human", show_default=True,
              help="How diagnostics are printed.")
def command(files: tuple[str, ...], output: str, agents: tuple[str, ...], clusters: tuple[str, ...], repeats: int,
            parallelism: int, image: str, prometheus: str, name: str, fmt: str) -> None:
    """Write an Argo Workflow that runs scenarios x agents x repeats.

    Each run is a child Workflow of the scenario's WorkflowTemplate (`itbench compile --target
    argo`; apply those first), at most PARALLELISM at once and one at a time per cluster. Every
    FILE (or .itb below a folder) is compiled first: a scenario with errors is reported and left
    out of the plan.

    \b
    Example:
      itbench compile scenarios/sre/ -o templates/ --target argo
      itbench plan scenarios/sre/ --agent baseline='python -m my_agent' --cluster kind-1 --cluster kind-2 \\
          --repeats 3 --parallelism 2 --image ghcr.io/me/runner:1 -o plan.yaml
    """
    from ..backends.argo import plan_workflow
    from ..bundle import BundleError, write_file
    from ..compiler import compile_source
    from ..serialize import dump_yaml
    from ..diagnostics import Diagnostics

    parsed = []
    for agent in agents:
        match = _AGENT.match(agent)
        if match is None:
            raise UserError(f"--agent {agent!r}: write NAME=COMMAND, NAME a DNS label (lower-case letters, digits, `-`)")
        parsed.append((match.group(1), match.group(3)))
    if len({a for a, _ in parsed}) != len(parsed):
        raise UserError("--agent: each agent needs its own name")
    for secret in clusters:
        if not _SECRET.match(secret):
            raise UserError(f"--cluster {secret!r}: not a Secret name (lower-case letters, digits, `-` and `.`)")
    if len(set(clusters)) != len(clusters):
        raise UserError("--cluster: a Secret is given twice")
    paths = collect(files)
    diags = Diagnostics()
    scenarios: dict[str, str] = {}
    for path in paths:
        before = len(diags.errors())
        result = compile_source(read(path), display(path), diags)
        if len(diags.errors()) > before or not result.files:
            continue
        if result.name in scenarios:
            raise UserError(f"{display(path)}: scenario `{result.name}` is also compiled from {scenarios[result.name]}")
        scenarios[result.name] = display(path)
    workflow = plan_workflow(sorted(scenarios), parsed, repeats, parallelism, list(clusters), image, prometheus, name)
    try:
        write_file(Path(output), dump_yaml([workflow]))
    except (BundleError, OSError) as exc:
        raise UserError(f"{display(output)}: cannot write: {getattr(exc, 'strerror', None) or exc}") from exc
    report(diags, fmt)
    if fmt == "human":
        runs = len(scenarios) * len(parsed) * repeats
        click.echo(f"planned {runs} runs ({len(scenarios)} scenarios x {len(parsed)} agents x {repeats}) on "
                   f"{len(clusters)} clusters -> {display(output)}", err=True)
        click.echo(summary(diags, len(paths), "compiled"), err=True)
    sys.exit(EXIT_FINDINGS if diags.has_errors else EXIT_CLEAN)
