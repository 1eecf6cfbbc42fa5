"""The fault and waiter library.

One module per family of faults; each defines `FAULTS`, a list of `FaultKind`s, and the
registry below gathers them. Adding a fault means adding it to its family's list (and a
scenario, a test and, through `tools/gen_docs.py`, its documentation page).
"""

from __future__ import annotations

from . import chaos, cluster, config, finops, istio, scheduling, service, workload
from .base import (
    CHAOS_NAMESPACE,
    CREATABLE_KINDS,
    Arg,
    Checked,
    Effect,
    FaultInput,
    FaultKind,
    fault_description,
    itbench_entry,
    library_alerts,
    render_solutions,
    slug,
)
from .waiters import WAITERS, WaiterKind

_FAMILIES = (workload, scheduling, service, config, cluster, istio, chaos, finops)


def _registry() -> dict[str, FaultKind]:
    registry: dict[str, FaultKind] = {}
    for family in _FAMILIES:
        for kind in family.FAULTS:
            if kind.name in registry:
                raise ValueError(f"fault kind {kind.name} is defined twice")
            registry[kind.name] = kind
    return registry


FAULTS: dict[str, FaultKind] = _registry()

__all__ = [
    "CHAOS_NAMESPACE", "CREATABLE_KINDS", "FAULTS", "WAITERS", "Arg", "Checked", "Effect", "FaultInput", "FaultKind",
    "WaiterKind", "fault_description", "itbench_entry", "library_alerts", "render_solutions", "slug",
]
