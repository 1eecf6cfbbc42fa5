"""`itbench apps`: the applications a scenario can import, and what one of them holds."""

from __future__ import annotations

import click

from .common import UserError


@click.command("apps")
@click.argument("name", required=False)
@click.option("--json", "as_json", is_flag=True, help="Print JSON (the same facts) instead of text.")
def command(name: str | None, as_json: bool) -> None:
    """List the applications `use app "NAME"` can import, or show one.

    With NAME, print the application's namespaces, its objects by kind, its workloads (replicas, and
    each container's image, ports, requests and limits) and its services (with their ports and the
    workloads they select). `--json` prints the same as one JSON document.

    \b
    Example:
      itbench apps
      itbench apps hotel-reservation
      itbench apps opentelemetry-demo --json | jq '.workloads[] | select(.name == "cart")'
    """
    import json

    from ..diagnostics import did_you_mean
    from ..applications import app_names, app_topology, load_app

    names = app_names()
    if name is None:
        listing = []
        for app_name in names:
            app = load_app(app_name)[0]
            description = next((s.text for s in app.statements if type(s).__name__ == "Description"), "") if app else ""
            listing.append({"name": app_name, "description": description})
        if as_json:
            click.echo(json.dumps({"applications": listing}, indent=2, ensure_ascii=False))
            return
        for entry in listing:
            click.echo(f"{entry['name']}  {entry['description']}")
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
    shown = describe(name, description, build)
    if as_json:
        click.echo(json.dumps(shown, indent=2, ensure_ascii=False))
        return
    click.echo(f"{name}  {description}".rstrip())
    for key, value in shown["metadata"].items():
        click.echo(f"  {key}: {value}")
    click.echo("namespaces: " + ", ".join(n["name"] + (" (provided)" if n["provided"] else "")
                                          for n in shown["namespaces"]))
    click.echo("objects:")
    for kind, object_names in shown["objects"].items():
        click.echo(f"  {kind} ({len(object_names)}): {', '.join(object_names)}")
    click.echo("workloads:")
    for workload in shown["workloads"]:
        click.echo(f"  {workload['kind'].lower()} {workload['namespace']}/{workload['name']}"
                   f" (replicas {workload['replicas']})")
        for init, container in [("init ", c) for c in workload["init_containers"]] + \
                [("", c) for c in workload["containers"]]:
            click.echo(f"    {init}container {container['name']}: {container['image']}")
            if container["ports"]:
                click.echo("      ports: " + ", ".join(f"{p['name'] + '=' if p['name'] else ''}{p['port']}"
                                                     + (f"/{p['protocol']}" if p["protocol"] != "TCP" else "")
                                                     for p in container["ports"]))
            for which in ("requests", "limits"):
                values = container["resources"].get(which)
                if values:
                    click.echo(f"      {which}: " + ", ".join(f"{k}={v}" for k, v in values.items()))
    click.echo("services:")
    for service in shown["services"]:
        ports = ", ".join(f"{p['name'] + '=' if p['name'] else ''}{p['port']}" for p in service["ports"])
        click.echo(f"  {service['namespace']}/{service['name']} [{ports}] -> "
                   f"{', '.join(service['selects']) or 'no workload'}")


def describe(name: str, description: str, build) -> dict:
    """What `itbench apps NAME` shows, as plain data (the text and the JSON print the same facts)."""

    def container(c) -> dict:
        return {"name": c.name, "image": c.image,
                "ports": [{"name": p.name, "port": p.port, "protocol": p.protocol} for p in c.ports],
                "resources": {k: dict(sorted(v.items())) for k, v in sorted((c.resources or {}).items())
                              if isinstance(v, dict)}}

    by_kind: dict[str, list[str]] = {}
    for kind, _namespace, object_name in build.declared:
        by_kind.setdefault(kind, []).append(object_name)
    workloads = [{"kind": w.kind, "namespace": w.namespace, "name": w.name, "replicas": w.replicas,
                  "containers": [container(c) for c in w.containers],
                  "init_containers": [container(c) for c in w.init_containers]}
                 for w in sorted(build.workloads, key=lambda w: (w.namespace, w.name, w.kind))]
    services = []
    for service in sorted(build.services, key=lambda s: (s.namespace, s.name)):
        selected = sorted(w.name for w in build.workloads if w.namespace == service.namespace and service.selector
                          and all(w.labels.get(k) == v for k, v in service.selector.items()))
        services.append({"namespace": service.namespace, "name": service.name,
                         "ports": [{"name": p.name, "port": p.port, "target_port": p.target_port} for p in service.ports],
                         "selects": selected})
    return {
        "name": name,
        "description": description,
        "metadata": dict(sorted(build.app_metadata.items())),
        "namespaces": [{"name": n.name, "provided": bool(n.provided)} for n in build.namespaces],
        "objects": {kind: sorted(by_kind[kind]) for kind in sorted(by_kind)},
        "workloads": workloads,
        "services": services,
    }
