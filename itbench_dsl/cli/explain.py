"""`itbench explain`: what a diagnostic code means."""

from __future__ import annotations

import click

from .common import UserError


@click.command("explain")
@click.argument("code", required=False)
def command(code: str | None) -> None:
    """Explain a diagnostic code (E2003), or list them all.

    \b
    Examples:
      itbench explain E2003
      itbench explain            # every code with its title
    """
    from ..codes import CODES
    from ..codes import explain as explain_code

    if code is None:
        for entry in CODES.values():
            click.echo(f"{entry.code}  {entry.title}")
        return
    page = explain_code(code)
    if page is None:
        raise UserError(f"no diagnostic code {code}; `itbench explain` lists them")
    click.echo(page, nl=False)
