"""`itbench apps`: the applications a scenario can import, and what one of them holds."""

from __future__ import annotations

import click

from .common import UserError


@click.command("apps")
@click.argument("name", required=False)
def command(name: str | None) -> None:
    """List the applications `use app "NAME"` can import, or show one.

    With NAME, print the application's namespaces, its objects by kind and its services
    (with their ports and the workloads they select).

    \b
    Example:
      itbench apps
      itbench apps hotel-reservation
    """
    from ..diagnostics import did_you_mean
    from ..applications import app_names, app_topology, load_app

    names = app_names()
    if name is None:
        for app_name in names:
            app = load_app(app_name)[0]
            description = next((s.text for s in app.statements if type(s).__name__ == "Description"), "") if app else ""
            click.echo(f"{app_name}  {description}")
        return
    if name not in names:
        hint = did_you_mean(name, names)
        raise UserError(f"unknown application `{name}`" + (f"; did you mean `{hint}`?" if hint else
                                                             f"; known: {', '.join(names)}"))
    build = app_topology(name)[0]
    if build is None:
        raise UserError(f"application `{name}` does not build: run `itbench check` on its file")
    app = load_app(name)[0]
    description = next((s.text for s in app.statements if type(s).__name__ == "Description"), "") if app else ""
    click.echo(f"{name}  {description}".rstrip())
    for key, value in sorted(build.app_metadata.items()):
        click.echo(f"  {key}: {value}")
    click.echo("namespaces: " + ", ".join(n.name + (" (provided)" if n.provided else "") for n in build.namespaces))
    click.echo("objects:")
    by_kind: dict[str, list[str]] = {}
    for kind, namespace, object_name in build.declared:
        by_kind.setdefault(kind, []).append(object_name)
    for kind in sorted(by_kind):
        click.echo(f"  {kind} ({len(by_kind[kind])}): {', '.join(sorted(by_kind[kind]))}")
    click.echo("services:")
    for service in sorted(build.services, key=lambda s: (s.namespace, s.name)):
        ports = ", ".join(f"{p.name + '=' if p.name else ''}{p.port}" for p in service.ports)
        selected = sorted(w.name for w in build.workloads if w.namespace == service.namespace and service.selector
                          and all(w.labels.get(k) == v for k, v in service.selector.items()))
        click.echo(f"  {service.namespace}/{service.name} [{ports}] -> {', '.join(selected) or 'no workload'}")
