"""The fault and waiter library: typed arguments, preconditions, injection and revert.

Each fault kind of the language maps to one ITBench fault id. Its arguments are read and
checked against the topology at compile time (the preconditions ITBench only discovers on
a cluster), and its injection and revert are computed from the objects the compiler owns:
the exact patched object, or the side object the fault creates, with stable names.
Descriptions, expected alerts and solution templates come from ITBench's own library
entries (vendored in `data/itbench`), so derived ground truth matches ITBench.
"""

from __future__ import annotations

import copy
import functools
import json
import re
from dataclasses import dataclass
from importlib import resources
from typing import Callable

from jinja2 import StrictUndefined
from jinja2.sandbox import SandboxedEnvironment

from . import ast, ir
from .reader import Body, Context
from .topology import DNS1123_LABEL, TopologyBuild
from .units import format_duration


@functools.lru_cache(maxsize=None)
def itbench_entry(kind: str, entry_id: str) -> dict:
    """An ITBench library entry (`faults`, `waiters` or `applications`) by id."""
    text = resources.files("itbench_dsl").joinpath(f"data/itbench/{kind}/{entry_id}.json").read_text("utf-8")
    return json.loads(text)


@functools.lru_cache(maxsize=1)
def _template_env() -> SandboxedEnvironment:
    return SandboxedEnvironment(undefined=StrictUndefined, autoescape=False, keep_trailing_newline=False)


@functools.lru_cache(maxsize=None)
def _template(text: str):
    return _template_env().from_string(text)


def render_solutions(itbench_id: str, itbench_args: dict) -> list[dict]:
    """ITBench's solution templates for a fault, rendered with the injection's arguments."""
    entry = itbench_entry("faults", itbench_id)
    out = []
    for template in entry.get("solutions", {}).get("templates", []):
        steps = []
        for step in template["steps"]:
            rendered = {}
            if "command" in step:
                rendered["command"] = _template(step["command"]).render(args=itbench_args)
            rendered["text"] = _template(step["text"]).render(args=itbench_args)
            steps.append(rendered)
        out.append({"steps": steps})
    return out


def library_alerts(itbench_id: str) -> list[str]:
    alerts = itbench_entry("faults", itbench_id).get("alerts", {})
    return sorted({name for names in alerts.values() for name in names})


@dataclass
class Effect:
    """What injecting or reverting does: objects to apply, then objects to delete."""

    apply: list  # IR topology objects (rendered by the manifest backend) or finished manifests (dict)
    delete: list[ir.ObjectRef]


@dataclass
class Checked:
    args: dict
    itbench_args: dict
    side_objects: list[ir.ObjectRef]


@dataclass(frozen=True)
class FaultKind:
    name: str
    itbench_id: str
    mechanism: str
    targets: tuple[str, ...]  # language object kinds
    summary: str
    check: Callable[["FaultInput"], Checked | None]
    inject: Callable[[ir.Injection, ir.Topology], Effect]
    revert: Callable[[ir.Injection, ir.Topology], Effect]
    domains: tuple[str, ...] = ("sre",)


@dataclass
class FaultInput:
    """Everything a fault's check needs: where to report, the arguments, the resolved target."""

    ctx: Context
    body: Body
    fault: ast.Fault
    target: ir.ObjectRef
    obj: object  # the IR object of the target (Workload, Service, ...)
    build: TopologyBuild
    scenario_name: str

    def error(self, code: str, message: str, span=None, label: str = "", help: str = "") -> None:
        self.ctx.error(code, message, span or self.fault.span, label, help)


# ---- helpers shared by several faults ------------------------------------------------------------


def _find_object(topology: ir.Topology, ref: ir.ObjectRef):
    pools = {
        "Deployment": topology.workloads, "StatefulSet": topology.workloads, "Service": topology.services,
        "ConfigMap": topology.configmaps, "Secret": topology.secrets, "HorizontalPodAutoscaler": topology.autoscalers,
    }
    for obj in pools.get(ref.kind, []):
        if obj.name == ref.name and obj.namespace == ref.namespace and getattr(obj, "kind", ref.kind) == ref.kind:
            return obj
    raise KeyError(ref.key())


def _pick_container(f: FaultInput, required_when_many: bool = True) -> ir.Container | None:
    workload: ir.Workload = f.obj
    name = f.body.attr("container", "str")
    names = [c.name for c in workload.containers]
    if name is None:
        if len(names) == 1:
            return workload.containers[0]
        f.error("E2007", f"{workload.kind.lower()} `{workload.name}` has {len(names)} containers "
                f"({', '.join(names)}): say which with `container`", f.fault.target.span, "which container?",
                help=f'add `container = "{names[0]}"`' if names else "")
        return None
    for container in workload.containers:
        if container.name == name:
            return container
    from .diagnostics import did_you_mean

    hint = did_you_mean(name, names)
    f.error("E2011", f"{workload.kind.lower()} `{workload.name}` has no container `{name}`",
            f.body.attr_span("container"), "no such container",
            help=f"did you mean `{hint}`?" if hint else f"its containers: {', '.join(names)}")
    return None


def _kobj(target: ir.ObjectRef) -> dict:
    return target.itbench()


def _patched(topology: ir.Topology, injection: ir.Injection, change: Callable) -> Effect:
    obj = copy.deepcopy(_find_object(topology, injection.target))
    change(obj, injection.args)
    return Effect([obj], [])


def _original(injection: ir.Injection, topology: ir.Topology) -> Effect:
    return Effect([copy.deepcopy(_find_object(topology, injection.target))], [])


def _container(workload: ir.Workload, name: str) -> ir.Container:
    return next(c for c in workload.containers if c.name == name)


# ---- nonexistent image -------------------------------------------------------------------------


def _check_nonexistent_image(f: FaultInput) -> Checked | None:
    container = _pick_container(f)
    image = f.body.attr("image", "str")
    if container is None:
        return None
    if image is None:
        repository = container.image.rsplit(":", 1)[0] if ":" in container.image.rsplit("/", 1)[-1] else container.image
        image = f"{repository}:itbench-nonexistent"
    if image == container.image:
        f.error("E2011", "the fault's image is the container's current image: the fault would change nothing",
                f.body.attr_span("image"), "same image")
        return None
    return Checked(
        {"container": container.name, "image": image, "original_image": container.image},
        {"container": {"name": container.name}, "kubernetesObject": _kobj(f.target)},
        [],
    )


def _inject_image(injection, topology):
    return _patched(topology, injection, lambda w, a: setattr(_container(w, a["container"]), "image", a["image"]))


# ---- modified environment variable ----------------------------------------------------------------


def _check_modified_env(f: FaultInput) -> Checked | None:
    container = _pick_container(f)
    name = f.body.attr("name", "str", required=True)
    value = f.body.attr("value", "str", required=True)
    if container is None or name is None or value is None:
        return None
    current = {e.name: e for e in container.env}
    if name not in current:
        from .diagnostics import did_you_mean

        hint = did_you_mean(name, current)
        f.error("E2011", f"container `{container.name}` has no environment variable `{name}` to modify",
                f.body.attr_span("name"), "not set in the container",
                help=f"did you mean `{hint}`?" if hint else "the fault modifies an existing variable; "
                "to add one, change the topology")
        return None
    if current[name].value == value:
        f.error("E2011", f"`{name}` is already `{value}`: the fault would change nothing", f.body.attr_span("value"),
                "same value")
        return None
    return Checked(
        {"container": container.name, "name": name, "value": value, "original_value": current[name].value},
        {"container": {"env": {"name": name, "value": value}, "name": container.name}, "kubernetesObject": _kobj(f.target)},
        [],
    )


def _inject_env(injection, topology):
    def change(workload, args):
        for env in _container(workload, args["container"]).env:
            if env.name == args["name"]:
                env.value, env.value_from = args["value"], None

    return _patched(topology, injection, change)


# ---- scaled to zero ----------------------------------------------------------------------------------


def _check_scaled_to_zero(f: FaultInput) -> Checked | None:
    workload: ir.Workload = f.obj
    if workload.replicas == 0:
        f.error("E2011", f"{workload.kind.lower()} `{workload.name}` already has 0 replicas: the fault would change "
                "nothing", f.fault.target.span, "already at zero")
        return None
    return Checked({"original_replicas": workload.replicas}, {"kubernetesObject": _kobj(f.target)}, [])


def _inject_zero(injection, topology):
    return _patched(topology, injection, lambda w, a: setattr(w, "replicas", 0))


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
            f.error("E2011", f"service `{service.name}` has no port named `{port_name}`", f.body.attr_span("port"),
                    "no such port", help="its ports: " + ", ".join(str(p.name) for p in service.ports))
            return None
        chosen = matches[0]
    if target_port is None:
        return None
    if chosen.target_port == target_port:
        f.error("E2011", f"the port already targets {target_port}: the fault would change nothing",
                f.body.attr_span("target_port"), "same target port")
        return None
    return Checked(
        {"port": chosen.name, "port_number": chosen.port, "target_port": target_port, "original_target_port": chosen.target_port},
        {"kubernetesObject": _kobj(f.target), "targetPort": target_port},
        [],
    )


def _inject_target_port(injection, topology):
    def change(service, args):
        for port in service.ports:
            if port.port == args["port_number"] and port.name == args["port"]:
                port.target_port = args["target_port"]

    return _patched(topology, injection, change)


# ---- misconfigured autoscaler (FinOps) ----------------------------------------------------------------


def _check_misconfigured_hpa(f: FaultInput) -> Checked | None:
    workload: ir.Workload = f.obj
    hpas = [h for h in f.build.autoscalers if h.target.name == workload.name and h.namespace == workload.namespace]
    utilization = f.body.attr("utilization", "percent", default=1)
    if not hpas:
        f.error("E2011", f"{workload.kind.lower()} `{workload.name}` has no HorizontalPodAutoscaler to misconfigure",
                f.fault.target.span, "no autoscaler", help=f'declare `hpa "{workload.name}" {{ workload = "{workload.name}" ... }}`')
        return None
    hpa = hpas[0]
    resource = "cpu" if hpa.cpu_utilization is not None else "memory"
    current = hpa.cpu_utilization if resource == "cpu" else hpa.memory_utilization
    # Utilisation is measured against requests (a limit alone sets the request): without one the
    # autoscaler reports "missing request" and the misconfiguration has no effect.
    bare = [c.name for c in workload.containers
            if resource not in c.resources.get("requests", {}) and resource not in c.resources.get("limits", {})]
    if bare:
        f.error("E2011", f"container `{bare[0]}` of `{workload.name}` has no {resource} request: the autoscaler cannot "
                f"compute {resource} utilisation, so the fault would change nothing", f.fault.target.span,
                f"no {resource} request", help=f"scale on a resource the containers request, or add "
                f"`resources {{ requests {{ {resource} = ... }} }}`")
        return None
    if utilization == current:
        f.error("E2011", f"the autoscaler already targets {utilization}% {resource}: the fault would change nothing",
                f.body.attr_span("utilization"), "same target")
        return None
    hpa_ref = ir.ObjectRef("autoscaling/v2", "HorizontalPodAutoscaler", hpa.namespace, hpa.name)
    return Checked(
        {"autoscaler": hpa.name, "resource": resource, "utilization": utilization, "original_utilization": current},
        {"kubernetesObject": _kobj(f.target)},
        [hpa_ref],
    )


def _hpa_ref(injection: ir.Injection) -> ir.ObjectRef:
    return ir.ObjectRef("autoscaling/v2", "HorizontalPodAutoscaler", injection.target.namespace, injection.args["autoscaler"])


def _inject_hpa(injection, topology):
    hpa = copy.deepcopy(_find_object(topology, _hpa_ref(injection)))
    setattr(hpa, f"{injection.args['resource']}_utilization", injection.args["utilization"])
    return Effect([hpa], [])


def _revert_hpa(injection, topology):
    return Effect([copy.deepcopy(_find_object(topology, _hpa_ref(injection)))], [])


# ---- Chaos Mesh: NetworkChaos in a Schedule ---------------------------------------------------------

CHAOS_NAMESPACE = "chaos-mesh"
NETWORK_ACTIONS = ("delay", "loss", "duplicate", "corrupt", "partition", "bandwidth")
CHAOS_MODES = ("all", "one", "fixed", "fixed-percent", "random-max-percent")


def _selector_for(f: FaultInput, workload: ir.Workload, override_key: str) -> dict | None:
    override = f.body.block(override_key)
    labels = override.as_string_map() if override is not None else dict(workload.selector)
    matched = [w for w in f.build.workloads
               if w.namespace == workload.namespace and all(w.labels.get(k) == v for k, v in labels.items())]
    if not matched:
        f.error("E2011", f"the selector {labels} matches no pod of the topology", f.body.attr_span(override_key),
                "selects nothing", help="use labels of the target workload's pod template")
        return None
    return {"labelSelectors": labels, "namespaces": [workload.namespace]}


def _check_network_chaos(f: FaultInput) -> Checked | None:
    workload: ir.Workload = f.obj
    body = f.body
    action = body.attr("action", "symbol", required=True)
    if action is not None and action not in NETWORK_ACTIONS:
        from .diagnostics import did_you_mean

        hint = did_you_mean(action, NETWORK_ACTIONS)
        f.error("E2010", f"`{action}` is not a NetworkChaos action", body.attr_span("action"), "unknown action",
                help=f"did you mean `{hint}`?" if hint else "actions: " + ", ".join(NETWORK_ACTIONS))
        action = None
    mode = body.attr("mode", "symbol", default="all")
    if mode not in CHAOS_MODES:
        f.error("E2010", f"`{mode}` is not a Chaos Mesh selection mode", body.attr_span("mode"),
                help="modes: " + ", ".join(CHAOS_MODES))
        mode = None
    direction = body.attr("direction", "symbol", default="to")
    if direction not in ("to", "from", "both"):
        f.error("E2010", f"`{direction}` is not a direction (to, from, both)", body.attr_span("direction"))
        direction = None
    duration = body.attr("duration", "duration", required=True)
    every = body.attr("every", "duration")
    name = body.attr("name", "str")
    selector = _selector_for(f, workload, "selector")
    peer_name = body.attr("peer", "str")
    spec: dict = {}
    if action == "loss":
        loss = body.attr("loss", "percent", required=True)
        correlation = body.attr("correlation", "percent", default=0)
        spec["loss"] = {"correlation": str(correlation), "loss": str(loss)}
    elif action == "delay":
        latency = body.attr("latency", "duration", required=True)
        jitter = body.attr("jitter", "duration", default=0)
        correlation = body.attr("correlation", "percent", default=0)
        if latency is not None:
            spec["delay"] = {"latency": _ms(latency), "jitter": _ms(jitter), "correlation": str(correlation)}
    elif action in ("duplicate", "corrupt"):
        amount = body.attr(action, "percent", required=True)
        correlation = body.attr("correlation", "percent", default=0)
        spec[action] = {action: str(amount), "correlation": str(correlation)}
    elif action == "bandwidth":
        rate = body.attr("rate", "str", required=True)
        limit = body.attr("limit", "nonneg_int", default=20971520)
        buffer = body.attr("buffer", "nonneg_int", default=10000)
        spec["bandwidth"] = {"rate": rate, "limit": limit, "buffer": buffer}
    elif action is None:  # missing or unknown action: its own fields cannot be checked, nor are they unknown
        for key in ("loss", "latency", "jitter", "correlation", "duplicate", "corrupt", "rate", "limit", "buffer"):
            body.labelled(key)
    if action is None or selector is None or duration is None or mode is None or direction is None:
        return None
    if every is not None and every <= duration:
        f.error("E2010", "`every` must be longer than `duration`, or experiments overlap", body.attr_span("every"))
        return None
    chaos = {"action": action, "direction": direction, "duration": format_duration(duration), **spec,
             "mode": mode, "selector": selector}
    if peer_name is not None:
        peer = f.build.workload(peer_name, workload.namespace)
        if peer is None:
            from .diagnostics import did_you_mean

            hint = did_you_mean(peer_name, [w.name for w in f.build.workloads])
            f.error("E2003", f"`peer` names `{peer_name}`, which is not a workload in `{workload.namespace}`",
                    body.attr_span("peer"), "unknown workload", help=f"did you mean `{hint}`?" if hint else "")
            return None
        peer_selector = _selector_for(f, peer, "peer_selector")
        if peer_selector is None:
            return None
        chaos["target"] = {"mode": "all", "selector": peer_selector}
    elif action == "partition":
        f.error("E2007", "a partition needs a `peer` workload to cut the target from", f.fault.span)
        return None
    schedule_name = name or f"{workload.name}-network-{action}"
    if len(schedule_name) > 63 or not DNS1123_LABEL.match(schedule_name):
        f.error("E2014", f"schedule name `{schedule_name}` is not a valid Kubernetes name", body.attr_span("name"))
        return None
    schedule_ref = ir.ObjectRef("chaos-mesh.org/v1alpha1", "Schedule", CHAOS_NAMESPACE, schedule_name)
    interval = every if every is not None else max(duration + 5, 60)
    return Checked(
        {"schedule": schedule_name, "every": format_duration(interval), "chaos_type": "NetworkChaos", "spec": chaos},
        {"kubernetesObject": schedule_ref.itbench(), "scheduleSpec": {"networkChaos": chaos, "type": "NetworkChaos"}},
        [],
    )


def _ms(seconds) -> str:
    return f"{int(seconds * 1000)}ms"


def _schedule_manifest(injection: ir.Injection) -> dict:
    args = injection.args
    field = args["chaos_type"][0].lower() + args["chaos_type"][1:]
    return {
        "apiVersion": "chaos-mesh.org/v1alpha1",
        "kind": "Schedule",
        "metadata": {"name": args["schedule"], "namespace": CHAOS_NAMESPACE,
                     "labels": {"app.kubernetes.io/managed-by": "itbench"}},
        "spec": {
            "schedule": f"@every {args['every']}",
            "type": args["chaos_type"],
            "historyLimit": 1,
            "concurrencyPolicy": "Forbid",
            field: copy.deepcopy(args["spec"]),
        },
    }


def _inject_schedule(injection, topology):
    return Effect([_schedule_manifest(injection)], [])


def _revert_schedule(injection, topology):
    manifest = _schedule_manifest(injection)
    return Effect([], [ir.ObjectRef("chaos-mesh.org/v1alpha1", "Schedule", CHAOS_NAMESPACE, manifest["metadata"]["name"])])


# ---- the registry ----------------------------------------------------------------------------------------

FAULTS: dict[str, FaultKind] = {
    f.name: f
    for f in [
        FaultKind("nonexistent_image", "nonexistent-kubernetes-workload-container-image",
                  "workload.container.image:unpullable", ("deployment", "statefulset"),
                  "Replaces a container's image with a tag that does not exist.",
                  _check_nonexistent_image, _inject_image, _original),
        FaultKind("modified_env", "modified-kubernetes-workload-container-environment-variable",
                  "workload.container.env:modified", ("deployment", "statefulset"),
                  "Changes the value of an environment variable a container already has.",
                  _check_modified_env, _inject_env, _original),
        FaultKind("scaled_to_zero", "scaled-to-zero-kubernetes-workload", "workload.replicas:zero",
                  ("deployment", "statefulset"), "Scales a workload to zero replicas.",
                  _check_scaled_to_zero, _inject_zero, _original),
        FaultKind("modified_target_port", "modified-target-port-kubernetes-service", "service.port.targetPort:modified",
                  ("service",), "Points a service port at a container port nothing listens on.",
                  _check_target_port, _inject_target_port, _original),
        FaultKind("network_chaos", "scheduled-chaos-mesh-experiment", "chaos-mesh.schedule:NetworkChaos",
                  ("deployment", "statefulset"),
                  "Injects network chaos (delay, loss, duplicate, corrupt, partition, bandwidth) into a workload's "
                  "pods through a Chaos Mesh Schedule.",
                  _check_network_chaos, _inject_schedule, _revert_schedule),
        FaultKind("misconfigured_hpa", "misconfigured-kubernetes-horizontal-pod-autoscaler",
                  "autoscaler.target-utilization:misconfigured", ("deployment", "statefulset"),
                  "Sets a workload's autoscaler to a utilisation target that keeps it scaled out.",
                  _check_misconfigured_hpa, _inject_hpa, _revert_hpa, domains=("finops", "sre")),
    ]
}


# ---- waiters --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class WaiterKind:
    name: str
    itbench_id: str
    targets: tuple[str, ...]


WAITERS: dict[str, WaiterKind] = {
    w.name: w
    for w in [
        WaiterKind("restart", "restart-kubernetes-workload", ("deployment", "statefulset")),
        WaiterKind("scale", "scale-kubernetes-workload", ("deployment", "statefulset")),
        WaiterKind("delete_pods", "delete-workload-pods", ("deployment", "statefulset")),
        WaiterKind("pause", "pause-execution", ("deployment", "statefulset", "namespace")),
    ]
}

_SLUG = re.compile(r"[^a-z0-9]+")


def slug(text: str) -> str:
    return _SLUG.sub("_", text.lower()).strip("_")
