"""`itbench faults`: the fault kinds, with their ITBench ids."""

from __future__ import annotations

import click


@click.command("faults")
def command() -> None:
    """List the faults `fault KIND on TARGET` accepts, with their ITBench ids.

    \b
    Example:
      itbench faults
    """
    from ..faults import FAULTS

    width = max(len(name) for name in FAULTS)
    for kind in FAULTS.values():
        click.echo(f"{kind.name:{width}}  on {'|'.join(kind.targets):24} {kind.itbench_id or '(not in ITBench)'}")
        click.echo(f"{'':{width}}     {kind.summary}")
