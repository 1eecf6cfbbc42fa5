"""Every fault has a symptom the scenario shows (W2015).

A fault kind declares what it shows (`FaultKind.symptoms`, base.SYMPTOMS): some symptoms show in `kubectl
get` (pods not ready, restarting, Pending; a Service with no endpoint; an autoscaler scaling), the others
(failed or slow requests, refused access, spend) only through an alert or a probe. A scenario whose fault
shows nothing `kubectl get` sees, and that expects no alert and runs no probe, poses a task nobody can
answer by observation: its prompt says alerts fire, and none does.
"""

from __future__ import annotations

from .. import ir
from .base import SYMPTOMS


def visible(symptoms: tuple[str, ...]) -> bool:
    """Whether any of `symptoms` shows without an alert or a probe."""
    return any(SYMPTOMS.get(s, False) for s in symptoms)


def unobservable(scenario: ir.Scenario) -> list[tuple[int, str]]:
    """(injection index, message) for each fault of `scenario` whose effect nothing in it would show."""
    from . import FAULTS

    if scenario.alerts or scenario.probes:
        return []
    out = []
    for index, injection in enumerate(scenario.injections()):
        kind = FAULTS.get(injection.fault)
        symptoms = tuple(kind.symptoms) if kind is not None else ()
        if visible(symptoms):
            continue
        shows = ", ".join(symptoms) if symptoms else "no symptom declared"
        out.append((index, f"fault `{injection.fault}` on {injection.target.kind.lower()} `{injection.target.name}` "
                           f"shows only through an alert or a probe ({shows}), and the scenario expects no alert "
                           f"and runs no probe"))
    return out
