"""`itbench apps`: the applications a scenario can import."""

from __future__ import annotations

import click


@click.command("apps")
def command() -> None:
    """List the applications `use app "NAME"` can import.

    \b
    Example:
      itbench apps
    """
    from ..topology import app_names, load_app

    for name in app_names():
        app = load_app(name)[0]
        description = next((s.text for s in app.statements if type(s).__name__ == "Description"), "") if app else ""
        click.echo(f"{name}  {description}")
