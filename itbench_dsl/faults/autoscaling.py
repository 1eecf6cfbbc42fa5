"""When a fix of an autoscaler shows: the HorizontalPodAutoscaler scales a workload in only after its scale-down
stabilization window (kubernetes pkg/controller/podautoscaler/horizontal.go, `stabilizeRecommendation...`: the
highest recommendation of the window is used; `behavior.scaleDown.stabilizationWindowSeconds`, 300 s by default,
the controller's `--horizontal-pod-autoscaler-downscale-stabilization`), on its next sync (every 15 s,
`--horizontal-pod-autoscaler-sync-period`).

A scenario whose faults scale a workload out through its autoscaler, and whose `mitigate` grading reads what
only the scale-in brings back (the workload's replicas, bounded from above by an optimum or a predicate; an
alert whose rule reads the autoscaler's replicas, KubeHpaMaxedOut), grades a right fix as a failure until that
window has passed. A run waits for the checks to hold as long as the scenario declares (`mitigated when within
D` and the predicates' own `within`: docs/running.md), and no longer: the declared window must cover the
scale-in (W2021, checking.py).
"""

from __future__ import annotations

from dataclasses import dataclass

from .. import ir

HPA = "HorizontalPodAutoscaler"
DEFAULT_STABILIZATION = 300.0  # behavior.scaleDown.stabilizationWindowSeconds when left out
SYNC_PERIOD = 15.0  # the HPA controller's sync period: the scale-in happens on the next sync after the window
# an alert resolves once a scrape has seen the scale-in and an evaluation the rule false: Prometheus' default
# scrape and evaluation intervals are a minute each
ALERT_LAG = 120.0
_BOUNDED_ABOVE = ("<", "<=", "==", "in")


@dataclass(frozen=True)
class LateRead:
    """A graded check the scale-in decides: `where` is ("optimal", index), ("predicate", index) or ("alert", name)."""

    where: tuple
    what: str
    lag: float = 0.0  # seconds after the scale-in before the check can see it


def declared_window(scenario: ir.Scenario) -> float:
    """The window a run waits for the mitigation's checks to hold, as the bundle carries it
    (run/lifecycle.mitigation_window_of): the longest of `mitigated when within` and the predicates' `within`."""
    mitigation = scenario.mitigation
    if mitigation is None:
        return 0.0
    windows = [w for w in [mitigation.within_seconds, *(p.within_seconds for p in mitigation.predicates)]
               if isinstance(w, (int, float)) and w > 0]
    return float(max(windows)) if windows else 0.0


def stabilization(manifests: list[dict], ref: ir.ObjectRef) -> float | None:
    """The scale-down stabilization window of autoscaler `ref` in the manifests the bundle deploys (None: its
    scale-down is disabled, `selectPolicy: Disabled`, and no window brings replicas down)."""
    for obj in manifests:
        meta = obj.get("metadata") or {}
        if obj.get("kind") != HPA or meta.get("name") != ref.name or (meta.get("namespace") or None) != ref.namespace:
            continue
        down = ((obj.get("spec") or {}).get("behavior") or {}).get("scaleDown") or {}
        if down.get("selectPolicy") == "Disabled":
            return None
        value = down.get("stabilizationWindowSeconds")
        return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else DEFAULT_STABILIZATION
    return DEFAULT_STABILIZATION


def scaled_out(scenario: ir.Scenario) -> dict[tuple, ir.ObjectRef]:
    """The workloads the faults scale out through an autoscaler, (kind, namespace, name) -> the autoscaler: those of
    the autoscalers a fault changes or creates, and of a fault with the `scaling` symptom on a workload an
    autoscaler scales."""
    autoscalers = {(a.namespace, a.name): a for a in scenario.topology.autoscalers}
    out: dict[tuple, ir.ObjectRef] = {}
    for injection in scenario.injections():
        refs = [injection.target, *injection.side_objects, *injection.created]
        for ref in refs:
            hpa = autoscalers.get((ref.namespace, ref.name)) if ref.kind == HPA else None
            if hpa is not None:
                out.setdefault((hpa.target.kind, hpa.target.namespace, hpa.target.name), ref)
        if "scaling" in (getattr(injection.kind, "symptoms", ()) or ()):
            for hpa in autoscalers.values():
                if (hpa.target.kind, hpa.target.namespace, hpa.target.name) == \
                        (injection.target.kind, injection.target.namespace, injection.target.name):
                    out.setdefault((hpa.target.kind, hpa.namespace, hpa.target.name),
                                   ir.ObjectRef("autoscaling/v2", HPA, hpa.namespace, hpa.name))
    return out


def _reads_replicas(path) -> bool:
    return any(isinstance(step, str) and step.endswith("eplicas") and step not in ("minReplicas", "maxReplicas")
               for step in path)


def _reads_autoscaler(name: str, scenario: ir.Scenario) -> bool:
    """Whether an alert's rules read an autoscaler's replicas (kube-state-metrics' HPA series)."""
    from ..alerts import CATALOGUE

    own = {r.name: r for r in scenario.alert_rules}
    if name in own:
        exprs = [own[name].expr]
    elif name in CATALOGUE:
        exprs = [r.expr for r in CATALOGUE[name].rules_for(scenario.topology.application)]
    else:
        return False
    return any("kube_horizontalpodautoscaler_status" in e for e in exprs)


def late_reads(scenario: ir.Scenario) -> dict[tuple, list[LateRead]]:
    """Per autoscaler the faults scale out with (its ref's key), the `mitigate` checks only its scale-in passes."""
    from ..tasks import posed

    if "mitigate" not in posed(scenario) or not scenario.injections():
        return {}
    workloads = scaled_out(scenario)
    if not workloads:
        return {}
    out: dict[tuple, list[LateRead]] = {}

    def add(ref: ir.ObjectRef, read: LateRead) -> None:
        out.setdefault((ref.namespace, ref.name), []).append(read)

    for index, optimum in enumerate(scenario.optimal):
        hpa = workloads.get((optimum.target.kind, optimum.target.namespace, optimum.target.name))
        if hpa is not None and _reads_replicas(optimum.path):
            add(hpa, LateRead(("optimal", index), f"the optimum of {optimum.target.kind.lower()} "
                                                  f"`{optimum.target.name}` {'.'.join(map(str, optimum.path))} is met"))
    predicates = scenario.mitigation.predicates if scenario.mitigation is not None else []
    for index, predicate in enumerate(predicates):
        target = predicate.target
        hpa = workloads.get((target.kind, target.namespace, target.name)) if target is not None else None
        if hpa is not None and predicate.kind == "field" and predicate.op in _BOUNDED_ABOVE \
                and _reads_replicas(predicate.path):
            add(hpa, LateRead(("predicate", index), f"the predicate on {target.kind.lower()} `{target.name}` "
                                                    f"{'.'.join(map(str, predicate.path))} holds"))
    quiet = {a.name for a in scenario.alerts} | {p.alert for p in predicates if p.kind == "alert" and p.firing is False}
    for name in sorted(n for n in quiet if n and _reads_autoscaler(n, scenario)):
        for hpa in {h for h in workloads.values()}:
            add(hpa, LateRead(("alert", name), f"alert {name}, which the mitigation needs quiet, resolves", ALERT_LAG))
    return out


def too_soon(scenario: ir.Scenario, manifests: list[dict]) -> list[tuple[LateRead, str, float]]:
    """W2021: the checks the scale-in decides, graded before it can happen (the declared window shorter than the
    autoscaler's stabilization window, a sync and, for an alert, a scrape and an evaluation), each with its message
    and the window it needs; one per autoscaler, at its first check."""
    from ..units import format_duration

    window = declared_window(scenario)
    out = []
    for (namespace, name), reads in sorted(late_reads(scenario).items()):
        settle = stabilization(manifests, ir.ObjectRef("autoscaling/v2", HPA, namespace, name))
        if settle is None:
            continue
        read = max(reads, key=lambda r: r.lag)
        needed = settle + SYNC_PERIOD + read.lag
        if window >= needed:
            continue
        declared = f"the run waits {format_duration(int(window))} for it" if window else \
            "the scenario declares no window (`mitigated when within D`), so the run grades at once"
        seen = (f", and a scrape and an evaluation ({format_duration(int(read.lag))}) before the alert resolves"
                if read.lag else "")
        out.append((read, f"{read.what} only once autoscaler `{name}` scales in, "
                          f"{format_duration(int(settle))} (its scale-down stabilization window) and a "
                          f"{format_duration(int(SYNC_PERIOD))} sync after a fix{seen}; {declared}", needed))
    return out
