"""Faults that change a Service."""

from __future__ import annotations


from .. import ir
from .base import (
    Arg, Checked, FaultInput, FaultKind, kobj, original, patched,
)


# ---- modified service target port -------------------------------------------------------------------


def _check_target_port(f: FaultInput) -> Checked | None:
    service: ir.Service = f.obj
    target_port = f.body.attr("target_port", "port", required=True)
    port_name = f.body.attr("port", "str")
    if not service.ports:
        return None
    if port_name is None:
        if len(service.ports) > 1:
            f.error("E2007", f"service `{service.name}` has {len(service.ports)} ports: say which with `port`",
                    f.fault.target.span, "which port?", help=f'add `port = "{service.ports[0].name}"`')
            return None
        chosen = service.ports[0]
    else:
        matches = [p for p in service.ports if p.name == port_name]
        if not matches:
            f.error("E2022", f"service `{service.name}` has no port named `{port_name}`", f.body.attr_span("port"),
                    "no such port", help="its ports: " + ", ".join(str(p.name) for p in service.ports))
            return None
        chosen = matches[0]
    if target_port is None:
        return None
    if chosen.target_port == target_port:
        f.error("E2027", f"the port already targets {target_port}: the fault would change nothing",
                f.body.attr_span("target_port"), "same target port")
        return None
    served = sorted({w.name for w in f.build.workloads if w.namespace == service.namespace and service.selector
                     and all(w.labels.get(k) == v for k, v in service.selector.items())
                     for c in w.containers for p in c.ports if p.port == target_port})
    if served:
        f.error("E2011", f"the pods of `{served[0]}` listen on port {target_port}: the service would still reach them",
                f.body.attr_span("target_port"), "a port the pods serve",
                help="pick a port no container of the selected pods listens on")
        return None
    return Checked(
        {"port": chosen.name, "port_number": chosen.port, "target_port": target_port, "original_target_port": chosen.target_port},
        {"kubernetesObject": kobj(f.target), "targetPort": target_port},
        [],
    )


def _inject_target_port(injection, topology):
    def change(service, args):
        for port in service.ports:
            if port.port == args["port_number"] and port.name == args["port"]:
                port.target_port = args["target_port"]

    return patched(topology, injection, change)


FAULTS = [
    FaultKind(
        "modified_target_port", "modified-target-port-kubernetes-service", "service.port.targetPort:modified",
        ("service",), "Points a service port at a container port nothing listens on.",
        _check_target_port, _inject_target_port, original,
        args=(Arg("target_port", "port", required=True, help="the new target port (1 to 65535)"),
              Arg("port", "string", help="the service port's name; required when the service has several")),
        preconditions=("The service has the named port.", "The new target port differs from the current one.",
                       "No container of the selected pods listens on the new target port."),
    ),
]
