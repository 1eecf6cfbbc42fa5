"""Waiters: what ITBench waits for before and after an injection (`waitFor`).

Each waiter reads its arguments from the `wait` statement's body and spells them as ITBench's
waiter library entry (`data/itbench/waiters/<id>.json`, `arguments.jsonSchema`) does.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from .. import ir
from ..reader import Body
from ..units import format_duration


def _no_args(body: Body) -> dict:
    return {}


def _scale_args(body: Body) -> dict | None:
    replicas = body.attr("replicas", "nonneg_int", required=True)
    if replicas is None:
        return None
    if replicas == 0:
        body.ctx.error("E2010", "`wait scale` takes at least 1 replica", body.attr_span("replicas"), "zero replicas",
                       help="ITBench's scale waiter scales to a positive count; to stop a workload, use the "
                       "`scaled_to_zero` fault")
        return None
    return {"replicas": replicas}


def _pause_args(body: Body) -> dict | None:
    duration = body.attr("duration", "duration", required=True)
    if duration is None:
        return None
    if duration != int(duration):
        body.ctx.error("E2010", f"`wait pause` waits whole seconds, not {format_duration(duration)}", body.attr_span("duration"),
                       "not whole seconds", help=f"write `duration = {max(int(duration), 1)}s`")
        return None
    return {"seconds": int(duration)}


def _redeploy_args(body: Body) -> dict | None:
    timeout = body.attr("timeout", "duration", default=300.0)
    if timeout is None:
        return None
    if timeout < 1 or timeout != int(timeout):
        body.ctx.error("E2010", f"`wait redeploy` waits whole seconds, at least one, not {format_duration(timeout)}",
                       body.attr_span("timeout"), "not whole seconds", help="write `timeout = 5m`")
        return None
    return {"timeout_seconds": int(timeout)}


def _redeploy_itbench(waiter: ir.Waiter) -> dict:
    return {"kubernetesObject": waiter.target.itbench(), "timeoutSeconds": waiter.args["timeout_seconds"]}


def _workload_itbench(waiter: ir.Waiter) -> dict:
    return {"kubernetesObject": waiter.target.itbench(), **waiter.args}


def _pause_itbench(waiter: ir.Waiter) -> dict:
    return {"seconds": waiter.args["seconds"]}


@dataclass(frozen=True)
class WaiterKind:
    name: str
    itbench_id: str | None  # None: ITBench has no such waiter (the bundle's runner carries it out)
    targets: tuple[str, ...]
    read: Callable[[Body], dict | None] = _no_args  # the typed arguments, or None after reporting an error
    itbench_args: Callable[[ir.Waiter], dict] = _workload_itbench  # ITBench's `args` of the waiter
    summary: str = ""  # what it waits for, for people


WAITERS: dict[str, WaiterKind] = {
    w.name: w
    for w in [
        WaiterKind("restart", "restart-kubernetes-workload", ("deployment", "statefulset")),
        WaiterKind("scale", "scale-kubernetes-workload", ("deployment", "statefulset"), _scale_args),
        WaiterKind("delete_pods", "delete-workload-pods", ("deployment", "statefulset")),
        WaiterKind("pause", "pause-execution", ("deployment", "statefulset", "namespace"), _pause_args, _pause_itbench),
        # after a namespace is recreated (`namespace_delete`'s revert, an agent's fix): every workload of the
        # namespace has its replicas ready and every claim of the namespace is Bound, within `timeout` (5m)
        WaiterKind("redeploy", None, ("namespace",), _redeploy_args, _redeploy_itbench,
                   "until the namespace's workloads are back with every replica ready and its volume claims Bound"),
    ]
}


# waiters that leave a trace on the workload they act on (a `restartedAt` annotation and a new ReplicaSet
# revision; younger pods): acting on the fault's target alone would point at it, so they act on every
# workload of its namespace alike (docs/running.md, What the agent can see)
SPREAD = ("restart", "delete_pods")


def spread(waiters: list[ir.Waiter], workloads: list[ir.Workload], provided: set[str] = frozenset(),
           refusing: set[str] = frozenset()) -> list[ir.Waiter]:
    """`waiters` with each SPREAD waiter standing for the same waiter on every running Deployment and
    StatefulSet of its target's namespace, in name order (so that its target is neither alone nor first);
    the other waiters keep their place. In a namespace of `refusing` (where a fault creates a ResourceQuota or
    LimitRange, whose admission would refuse or change every pod started again) a waiter acts on its own target
    only: spread, it would take the whole namespace into the fault."""
    out: list[ir.Waiter] = []
    done: set[tuple] = set()
    for waiter in waiters:
        if waiter.kind not in SPREAD or waiter.target.namespace in provided or waiter.target.namespace in refusing:
            out.append(waiter)
            continue
        key = (waiter.kind, waiter.when, waiter.target.namespace)
        if key in done:
            continue
        done.add(key)
        named = {(w.target.kind, w.target.name) for w in waiters if (w.kind, w.when, w.target.namespace) == key}
        peers = [w for w in workloads if w.namespace == waiter.target.namespace
                 and w.kind in ("Deployment", "StatefulSet") and (w.replicas > 0 or (w.kind, w.name) in named)]
        refs = {(w.kind, w.name): ir.ObjectRef("apps/v1", w.kind, w.namespace, w.name) for w in peers}
        for kind, name in named:  # a target the topology does not run stays
            refs.setdefault((kind, name), next(w.target for w in waiters if (w.target.kind, w.target.name) == (kind, name)))
        for (_, name), ref in sorted(refs.items(), key=lambda item: (item[0][1], item[0][0])):
            out.append(ir.Waiter(waiter.kind, waiter.itbench_id, waiter.when, ref, dict(waiter.args)))
    return out
