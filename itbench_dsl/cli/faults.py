"""`itbench faults`: the fault kinds, with their ITBench ids; `itbench faults NAME`: one fault's page."""

from __future__ import annotations

import click

from .common import UserError


@click.command("faults")
@click.argument("name", required=False)
def command(name: str | None) -> None:
    """List the faults `fault KIND on TARGET` accepts, or show one.

    Without NAME, each fault with its targets and ITBench id. With NAME, its reference page: what
    it does, its arguments (type, default, meaning), its targets, its preconditions and the codes
    that report them, what it creates, the alerts it raises and its solution templates.

    \b
    Examples:
      itbench faults
      itbench faults nonexistent_image
    """
    from ..faults import FAULTS

    if name is not None:
        click.echo(fault_page_or_error(name), nl=False)
        return
    width = max(len(kind) for kind in FAULTS)
    for kind in FAULTS.values():
        click.echo(f"{kind.name:{width}}  on {'|'.join(kind.targets):24} {kind.itbench_id or '(not in ITBench)'}")
        click.echo(f"{'':{width}}     {kind.summary}")


def fault_page_or_error(name: str) -> str:
    """The reference page of fault `name` (also `itbench explain NAME`), or a UserError naming the closest."""
    from ..diagnostics import did_you_mean
    from ..fault_docs import fault_page
    from ..faults import FAULTS

    if name not in FAULTS:
        hint = did_you_mean(name, FAULTS)
        raise UserError(f"no fault `{name}`" + (f"; did you mean `{hint}`?" if hint else "; `itbench faults` lists them"))
    return fault_page(name)
