"""`itbench explain`: what a diagnostic code means."""

from __future__ import annotations

import re

import click

from .common import UserError


@click.command("explain")
@click.argument("topic", required=False)
def command(topic: str | None) -> None:
    """Explain a diagnostic code (E2003) or a fault (nonexistent_image), or list them.

    TOPIC is a diagnostic code, a fault's name (its reference page, as `itbench faults NAME`
    prints it), `codes` (every code with its title, as with no TOPIC) or `faults` (the fault
    library, as `itbench faults` prints it).

    \b
    Examples:
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
