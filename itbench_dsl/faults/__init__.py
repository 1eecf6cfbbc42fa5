"""The fault and waiter library.

One module per family of faults; each defines `FAULTS`, a list of `FaultKind`s, and the
registry below gathers them. Adding a fault means adding it to its family's list (and a
scenario, a test and, through `tools/gen_docs.py`, its documentation page).
"""

from __future__ import annotations

from . import admission, chaos, cluster, config, declared, finops, istio, rbac, scheduling, service, workload
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

_FAMILIES = (workload, scheduling, service, config, cluster, admission, istio, chaos, finops, rbac)


class _Registry(dict):
    """The library's fault kinds by name. A kind a scenario's project file declares (`use faults`) is found
    by name too (`FAULTS[name]`, `FAULTS.get(name)`: the backends look injections up so), but is not one of
    the library's: iterating, `len` and `in` see the library only."""

    def __missing__(self, name: str) -> FaultKind:
        return declared.PROJECT_KINDS[name]

    def get(self, name, default=None):
        return self[name] if name in self or name in declared.PROJECT_KINDS else default


def _python_registry() -> dict[str, FaultKind]:
    registry: dict[str, FaultKind] = {}
    for family in _FAMILIES:
        for kind in family.FAULTS:
            if kind.name in registry:
                raise ValueError(f"fault kind {kind.name} is defined twice")
            registry[kind.name] = kind
    return registry


def _registry() -> _Registry:
    # the standard library's declared kinds (stdlib/faults/*.itb) take the place of the Python kinds of the
    # same names: those stay in their modules, and tests compare both definitions' bundles
    registry = _Registry(PYTHON_FAULTS)
    for kind in declared.load_stdlib(PYTHON_FAULTS):
        registry[kind.name] = kind
    return registry


PYTHON_FAULTS: dict[str, FaultKind] = _python_registry()
FAULTS: dict[str, FaultKind] = _registry()

__all__ = [
    "CHAOS_NAMESPACE", "CREATABLE_KINDS", "FAULTS", "PYTHON_FAULTS", "WAITERS", "Arg", "Checked", "Effect", "FaultInput", "FaultKind",
    "WaiterKind", "fault_description", "itbench_entry", "library_alerts", "render_solutions", "slug",
]
