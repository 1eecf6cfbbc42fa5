"""Kubernetes vocabulary the compiler and the run share: the workload kinds and resource names.
It imports nothing, so any layer may read it."""

from __future__ import annotations

WORKLOAD_KINDS = ("Deployment", "StatefulSet", "DaemonSet")


def plural(kind: str) -> str:
    """The resource name of a kind as discovery usually spells it; a run resolves it by discovery."""
    lowered = kind.lower()
    if lowered.endswith("chaos"):
        return lowered
    if lowered.endswith("y") and not lowered.endswith(("ay", "ey", "oy", "uy")):
        return lowered[:-1] + "ies"
    if lowered.endswith(("s", "x", "ch", "sh")):
        return lowered + "es"
    return lowered + "s"
