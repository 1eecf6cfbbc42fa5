"""The fault and waiter library.

Two routes lead to a fault kind of the library, and `FAULTS` gathers both:
- a `fault_kind` declaration in `stdlib/faults/*.itb` (docs/fault-kinds.md), the preferred route for a kind
  that patches, creates or deletes objects, runs a command in a pod or reads arguments;
- a `FaultKind` in the Python module of its family (each defines `FAULTS`, a list), for what a declaration
  cannot say (Chaos Mesh experiments, FinOps optima, checks that read the whole scenario).
A kind has one definition, and with it (a scenario, a test and, through `tools/gen_docs.py`, its page).

`FAULTS` is the library only, and nothing writes to it. The kinds a scenario declares with `use faults`
belong to that compile: the checker resolves every fault statement once, and each `ir.Injection` carries
its kind (`injection.kind`), which every later stage reads.
"""

from __future__ import annotations

from . import admission, base, chaos, cluster, config, declared, finops, istio, rbac, scheduling, service, workload
from .base import (
    CHAOS_NAMESPACE,
    CREATABLE_KINDS,
    POD_EFFECTS,
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

_FAMILIES = (workload, scheduling, service, config, cluster, admission, istio, chaos, finops, rbac)


def _python_registry() -> dict[str, FaultKind]:
    registry: dict[str, FaultKind] = {}
    for family in _FAMILIES:
        for kind in family.FAULTS:
            if kind.name in registry:
                raise ValueError(f"fault kind {kind.name} is defined twice")
            registry[kind.name] = kind
    return registry


def _registry() -> dict[str, FaultKind]:
    registry = _python_registry()
    for kind in declared.load_stdlib(registry):  # a declared kind may not take a Python kind's name (E2053)
        registry[kind.name] = kind
    return registry


FAULTS: dict[str, FaultKind] = _registry()
base.LIBRARY.update(FAULTS)

__all__ = [
    "CHAOS_NAMESPACE", "CREATABLE_KINDS", "FAULTS", "POD_EFFECTS", "WAITERS", "Arg", "Checked", "Effect", "FaultInput", "FaultKind",
    "WaiterKind", "fault_description", "itbench_entry", "library_alerts", "render_solutions", "slug",
]
