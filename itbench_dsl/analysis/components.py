"""Components of a scenario's topology: a workload with its pods, the services that select it and its
autoscaler is one component (the unit lint's rules, the alert placement check and the generators reason
about); an object a fault creates belongs to the component of the fault's target."""

from __future__ import annotations

import fnmatch

from .. import ir


class Components:
    """Which component (workload) each object of a topology belongs to, for topology-aware rules.

    A workload is its own component; a service belongs to the workload it selects, an autoscaler
    to the workload it scales, pods (by name pattern) to the workload that owns them, and an object
    a fault creates to the component of the fault's target. Anything else is a component of its own.
    """

    def __init__(self, scenario: ir.Scenario) -> None:
        topology = scenario.topology
        self.workloads = topology.workloads
        self.by_key: dict[tuple[str, str], str] = {}
        for w in topology.workloads:
            self.by_key[(w.kind, w.name)] = w.name
        for s in topology.services:
            owner = self._selected(s)
            if owner is not None:
                self.by_key[("Service", s.name)] = owner
        for a in topology.autoscalers:
            self.by_key[("HorizontalPodAutoscaler", a.name)] = a.target.name
        for injection in scenario.injections():
            component = self.of(injection.target)
            for created in injection.created + ([injection.root] if injection.root else []):
                self.by_key.setdefault((created.kind, created.name), component)

    def _selected(self, service: ir.Service) -> str | None:
        if not service.selector:
            return None
        wanted = service.selector.items()
        for w in self.workloads:
            if w.namespace == service.namespace and wanted <= w.labels.items():
                return w.name
        return None

    def of(self, ref: ir.ObjectRef) -> str:
        """The component of an object: a workload's name, or `Kind/name` for anything else."""
        if ref.kind == "Pod":
            stem = ref.name[:-1].rstrip("-") if ref.name.endswith("*") else None
            if stem and any(w.name == stem for w in self.workloads):  # `cart-*` is cart's, not cart-proxy's
                return stem
            owners = [w for w in self.workloads if fnmatch.fnmatchcase(f"{w.name}-7d4b9c8f6-x2x9q", ref.name)
                      or fnmatch.fnmatchcase(f"{w.name}-0", ref.name)]
            if owners:
                return max(owners, key=lambda w: len(w.name)).name
        if ref.kind == "Service" and (ref.kind, ref.name) not in self.by_key \
                and any(w.name == ref.name for w in self.workloads):
            return ref.name  # a service named as the workload it stands for (no selector of its own)
        return self.by_key.get((ref.kind, ref.name), f"{ref.kind}/{ref.name}")
