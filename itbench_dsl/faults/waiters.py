"""Waiters: what ITBench waits for before and after an injection (`waitFor`)."""

from __future__ import annotations

from dataclasses import dataclass


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
