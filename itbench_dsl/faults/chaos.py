"""Chaos Mesh faults, injected through a Schedule as ITBench does."""

from __future__ import annotations

import copy

from .. import ir
from ..diagnostics import did_you_mean
from .base import (
    Arg, Checked, Effect, FaultInput, FaultKind,
)
from ..topology import DNS1123_LABEL
from ..units import format_duration
from .base import CHAOS_NAMESPACE, CREATABLE_KINDS

CREATABLE_KINDS["networkchaos"] = ("chaos-mesh.org/v1alpha1", "NetworkChaos")

# ---- Chaos Mesh: NetworkChaos in a Schedule ---------------------------------------------------------

NETWORK_ACTIONS = ("delay", "loss", "duplicate", "corrupt", "partition", "bandwidth")
CHAOS_MODES = ("all", "one", "fixed", "fixed-percent", "random-max-percent")


def _selector_for(f: FaultInput, workload: ir.Workload, override_key: str) -> dict | None:
    override = f.body.block(override_key)
    labels = override.as_string_map() if override is not None else dict(workload.selector)
    matched = [w for w in f.build.workloads
               if w.namespace == workload.namespace and all(w.labels.get(k) == v for k, v in labels.items())]
    if not matched:
        f.error("E2026", f"the selector {labels} matches no pod of the topology", f.body.attr_span(override_key),
                "selects nothing", help="use labels of the target workload's pod template")
        return None
    return {"labelSelectors": labels, "namespaces": [workload.namespace]}


def _check_network_chaos(f: FaultInput) -> Checked | None:
    workload: ir.Workload = f.obj
    body = f.body
    action = body.attr("action", "symbol", required=True)
    if action is not None and action not in NETWORK_ACTIONS:
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
    experiments = ir.ObjectRef("chaos-mesh.org/v1alpha1", "NetworkChaos", CHAOS_NAMESPACE, schedule_name)
    return Checked(
        {"schedule": schedule_name, "every": format_duration(interval), "chaos_type": "NetworkChaos", "spec": chaos},
        {"kubernetesObject": schedule_ref.itbench(), "scheduleSpec": {"networkChaos": chaos, "type": "NetworkChaos"}},
        created=[schedule_ref, experiments],
        root=schedule_ref,
        agent_namespaces=[CHAOS_NAMESPACE],
        agent_resources=["schedules", "networkchaos"],
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


FAULTS = [
    FaultKind(
        "network_chaos", "scheduled-chaos-mesh-experiment", "chaos-mesh.schedule:NetworkChaos",
        ("deployment", "statefulset"),
        "Injects network chaos (delay, loss, duplicate, corrupt, partition, bandwidth) into a workload's pods "
        "through a Chaos Mesh Schedule.",
        _check_network_chaos, _inject_schedule, _revert_schedule,
        args=(Arg("action", "name", required=True, help="delay, loss, duplicate, corrupt, partition or bandwidth"),
              Arg("duration", "duration", required=True, help="how long each experiment lasts"),
              Arg("every", "duration", help="the Schedule's interval; longer than `duration`"),
              Arg("direction", "name", default="to", help="to, from or both"),
              Arg("mode", "name", default="all", help="which pods: all, one, fixed, fixed-percent, random-max-percent"),
              Arg("peer", "string", help="the workload on the other side of the traffic"),
              Arg("selector", "labels", default="the workload's selector", help="pod labels of the target"),
              Arg("peer_selector", "labels", default="the peer's selector", help="pod labels of the peer"),
              Arg("name", "string", default="`<workload>-network-<action>`", help="the Schedule's name"),
              Arg("loss / latency / jitter / correlation / duplicate / corrupt / rate", "per action",
                  help="the action's figures: `loss = 100%`, `latency = 200ms` ...")),
        preconditions=("The selectors match at least one pod of the topology.", "A partition has a peer.",
                       "`every` is longer than `duration`."),
        creates="a Chaos Mesh Schedule in namespace chaos-mesh, which creates NetworkChaos experiments",
    ),
]
