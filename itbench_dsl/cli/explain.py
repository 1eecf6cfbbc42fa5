"""`itbench explain`: what a diagnostic code means, or every check that grades a scenario."""

from __future__ import annotations

import re

import click

from pathlib import Path

from .common import EXIT_FINDINGS, UserError, display, read, report


@click.command("explain")
@click.argument("topic", required=False)
def command(topic: str | None) -> None:
    """Explain a diagnostic code (E2003), a fault (nonexistent_image) or a scenario's grading.

    TOPIC is a diagnostic code, a fault's name (its reference page, as `itbench faults NAME`
    prints it), `codes` (every code with its title, as with no TOPIC), `faults` (the fault
    library, as `itbench faults` prints it), or a scenario file: every check its evaluator
    grades, task by task, with where each comes from (a `mitigated when` predicate or an
    `optimal` statement and its line, an expected alert, the fault, or the evaluator's own
    health and safeguard rules), read off the evaluator's spec.

    \b
    Examples:
      itbench explain scenarios/finops/otel-ad-missing-memory-limit.itb
      itbench explain E2003
      itbench explain nonexistent_image
      itbench explain faults
      itbench explain            # every code with its title
    """
    from ..codes import CODES
    from ..codes import explain as explain_code
    from ..faults import FAULTS
    from .faults import command as faults_command
    from .faults import fault_page_or_error

    if topic is None or topic == "codes":
        for entry in CODES.values():
            click.echo(f"{entry.code}  {entry.title}")
        return
    if topic == "faults":
        click.get_current_context().invoke(faults_command, name=None)
        return
    if topic.endswith(".itb") or "/" in topic or _is_file(topic):
        explain_scenario(topic)
        return
    if topic in FAULTS:
        click.echo(fault_page_or_error(topic), nl=False)
        return
    page = explain_code(topic.upper()) if re.fullmatch(r"[EWew]\d{4}", topic) else None
    if page is None:
        from ..diagnostics import did_you_mean
        hint = did_you_mean(topic, [*CODES, *FAULTS, "codes", "faults"])
        raise UserError(f"`{topic}` is neither a diagnostic code nor a fault" +
                        (f"; did you mean `{hint}`?" if hint else "; `itbench explain` lists the codes, "
                         "`itbench explain faults` the faults"))
    click.echo(page, nl=False)


def _is_file(path: str) -> bool:
    """Whether `path` names a file; a name the system refuses (too long, a NUL byte) names none."""
    try:
        return Path(path).is_file()
    except (OSError, ValueError):
        return False


def explain_scenario(path: str) -> None:
    """Every check that grades the scenario at `path` (itbench_dsl/grading.py); its errors instead when it has some."""
    from .. import grading
    from ..compiler import compile_source
    from ..diagnostics import Diagnostics

    if not _is_file(path):
        raise UserError(f"{path}: no such scenario file")
    diags = Diagnostics()
    result = compile_source(read(path), display(path), diags)
    if diags.has_errors or result.scenario is None:
        report(diags, "human")
        click.echo(f"{display(path)} has errors: its grading cannot be shown", err=True)
        raise SystemExit(EXIT_FINDINGS)
    checks = grading.grading_checks(result.scenario, result.source_map, result.document)
    click.echo(grading.text(result.scenario, checks, display(path)), nl=False)
