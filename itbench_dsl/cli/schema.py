"""`itbench schema`: the JSON Schema of the scenario IR."""

from __future__ import annotations

import click


@click.command("schema")
def command() -> None:
    """Print the JSON Schema of the scenario IR (the scenario.json of every bundle).

    \b
    Example:
      itbench schema > scenario-ir.schema.json
    """
    import json

    from ..ir import json_schema

    click.echo(json.dumps(json_schema(), indent=2))
