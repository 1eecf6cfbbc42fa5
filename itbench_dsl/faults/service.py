"""Faults that change a Service."""

from __future__ import annotations

from .. import ir
from ..topology import label_problem
from .base import (
    Arg,
    Checked,
    Effect,
    FaultInput,
    FaultKind,
    kobj,
    original,
    patched,
)

# ---- modified service target port -------------------------------------------------------------------


# what ITBench's injection writes into the port it selects (ITBench roles/faults/tasks/
# inject_modified_target_port_kubernetes_service.yaml: `targetPort: 9999`)
ITBENCH_TARGET_PORT = 9999


def _check_target_port(f: FaultInput) -> Checked | None:
    service: ir.Service = f.obj
    target_port = f.body.attr("target_port", "port", default=ITBENCH_TARGET_PORT)
    port_name = f.body.attr("port", "str")
    current = f.body.attr("from_target_port", "port")
    if not service.ports:
        return None
    if port_name is not None and current is not None:
        f.error("E2010", "give `port` or `from_target_port`, not both: each names the service port to change",
                f.body.attr_span("from_target_port"), "second choice of port",
                help="`port` names it, `from_target_port` gives the target port it has now (ITBench's `targetPort`)")
        return None
    if current is not None:
        matches = [p for p in service.ports if p.target_port == current]
        if len(matches) != 1:
            targets = ", ".join(f"{p.name or p.port} -> {p.target_port}" for p in service.ports)
            f.error("E2022", f"service `{service.name}` has {'no' if not matches else len(matches)} port(s) "
                    f"targeting {current}" + ("" if not matches else ": say which with `port`"),
                    f.body.attr_span("from_target_port"), "no such target port" if not matches else "ambiguous",
                    help=f"its ports: {targets}")
            return None
        chosen = matches[0]
    elif port_name is None:
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
                f.body.attr_span("target_port") if f.body.has("target_port") else f.fault.target.span,
                "same target port", help="give `target_port` a port nothing listens on")
        return None
    served = sorted({w.name for w in f.build.workloads if w.namespace == service.namespace and service.selector
                     and all(w.labels.get(k) == v for k, v in service.selector.items())
                     for c in w.containers for p in c.ports if p.port == target_port})
    if served:
        f.error("E2011", f"the pods of `{served[0]}` listen on port {target_port}: the service would still reach them",
                f.body.attr_span("target_port") if f.body.has("target_port") else f.fault.target.span,
                "a port the pods serve", help="pick a port no container of the selected pods listens on")
        return None
    # ITBench's `targetPort` selects the service port by the target port it has now; its injection writes 9999
    return Checked(
        {"port": chosen.name, "port_number": chosen.port, "target_port": target_port, "original_target_port": chosen.target_port},
        {"kubernetesObject": kobj(f.target), "targetPort": chosen.target_port},
        [],
    )


def _inject_target_port(injection, topology):
    def change(service, args):
        for port in service.ports:
            if port.port == args["port_number"] and port.name == args["port"]:
                port.target_port = args["target_port"]

    return patched(topology, injection, change)


# ---- deleted service ------------------------------------------------------------------------------------


def _selected_workloads(f: FaultInput, namespace: str, selector: dict) -> list[str]:
    return sorted(w.name for w in f.build.workloads if w.namespace == namespace and selector
                  and all(w.labels.get(k) == v for k, v in selector.items()))


def _check_deleted_service(f: FaultInput) -> Checked | None:
    service: ir.Service = f.obj
    if not _selected_workloads(f, service.namespace, service.selector):
        f.error("E2011", f"service `{service.name}` selects no pod of the topology: deleting it would cut nothing off",
                f.fault.target.span, "selects no workload",
                help="delete a service that routes to a workload (its selector matches the workload's pod labels)")
        return None
    return Checked({}, {"kubernetesObject": kobj(f.target)})


def _inject_deleted_service(injection, topology):
    return Effect([], [injection.target])


def _suffix(service, key: str) -> str:
    """A suffix no pod's label has, derived from the service and the key (a hash, as a ReplicaSet's pod-template-hash):
    the new selector value must say nothing of the fault to whoever reads the Service (agent_view.py)."""
    import hashlib

    return hashlib.sha256(f"{service.namespace}/{service.name}/{key}".encode()).hexdigest()[:7]


# ---- invalid service selector ----------------------------------------------------------------------------


def _check_invalid_selector(f: FaultInput) -> Checked | None:
    service: ir.Service = f.obj
    block = f.body.block("selector")
    if not service.selector:
        f.error("E2011", f"service `{service.name}` has no selector to corrupt", f.fault.target.span, "no selector",
                help="a service without a selector has hand-managed endpoints; pick a service that selects pods")
        return None
    if block is not None:
        selector = block.as_string_map(label_problem)
        if len(selector) < len(block.entries):
            return None  # a refused label was reported
        if not selector:
            f.error("E2010", "the new selector is empty: it would select every pod of the namespace",
                    f.body.attr_span("selector"), "empty selector", help='give at least one label: `selector { app = "x" }`')
            return None
    else:
        selector = {k: (v[:55].rstrip("-_.") + "-" + _suffix(service, k)) for k, v in service.selector.items()}
    if selector == service.selector:
        f.error("E2027", "the new selector is the service's selector: the fault would change nothing",
                f.body.attr_span("selector"), "same selector")
        return None
    still = _selected_workloads(f, service.namespace, selector)
    if still:
        f.error("E2011", f"the new selector still matches the pods of `{still[0]}`: the service would still find "
                "its workload", f.body.attr_span("selector"), "still matches pods",
                help="use labels no pod template of the namespace carries")
        return None
    return Checked({"selector": selector, "original_selector": dict(service.selector)},
                   {"kubernetesObject": kobj(f.target)})


def _inject_invalid_selector(injection, topology):
    return patched(topology, injection, lambda service, args: setattr(service, "selector", dict(args["selector"])))


FAULTS = [
    FaultKind(
        "modified_target_port", "modified-target-port-kubernetes-service", "service.port.targetPort:modified",
        ("service",), "Points a service port at a container port nothing listens on.",
        _check_target_port, _inject_target_port, original,
        args=(Arg("target_port", "port", default=str(ITBENCH_TARGET_PORT),
                  help="the new target port (1 to 65535); ITBench's injection always writes 9999"),
              Arg("port", "string", help="the service port's name; required when the service has several"),
              Arg("from_target_port", "port", help="instead of `port`: the service port whose target port is this "
                  "one now (ITBench's `targetPort` argument)")),
        preconditions=("The service has the named port (or exactly one port with the given current target port).",
                       "The new target port differs from the current one.",
                       "No container of the selected pods listens on the new target port."),
        labels=("virtualization", "misconfiguration"),
        symptoms=('requests',),
        itbench_injects={"target_port": ITBENCH_TARGET_PORT},  # ITBench's task writes `targetPort: 9999`
    ),
    FaultKind(
        "deleted_service", "deleted-kubernetes-service", "service:deleted", ("service",),
        "Deletes a service, so the workloads that call it cannot reach its pods.",
        _check_deleted_service, _inject_deleted_service, original,
        preconditions=("The service selects the pods of a workload of the topology.",),
        labels=("virtualization", "operation_error"),
        symptoms=('requests', 'endpoints'),
    ),
    FaultKind(
        "invalid_service_selector", "invalid-kubernetes-service-selector", "service.selector:invalid", ("service",),
        "Replaces a service's selector with labels no pod carries, so the service has no endpoints.",
        _check_invalid_selector, _inject_invalid_selector, original,
        args=(Arg("selector", "labels", default="each selector label's value with a hash of the service appended (`-3f9a0c2`)",
                  help="the new selector"),),
        preconditions=("The new selector is not empty and differs from the current one.",
                       "The new selector matches no pod of the namespace."),
        labels=("virtualization", "misconfiguration"),
        symptoms=('endpoints', 'requests'),
    ),
]
