"""Diagnosis verdicts tried by hand (docs/evaluator.md, `diagnose`): the names an answer gives against the
truth's objects as the cluster shows them (a Schedule's experiments, a second fault, objects a fault created, a
pod replaced since), the chain over what the root cause reaches, and names that must not be credited (a Service
aliased to the root cause, a FinOps bare name whose `type` names another kind). The states are the compiler's
derived ones, edited as a cluster or an agent would."""

from __future__ import annotations

import copy
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

from test_evaluator import bundle, derived, run  # noqa: E402

from itbench_dsl.analysis.states import perfect_answer  # noqa: E402


def perfect(name: str, state: dict | None) -> dict:
    return perfect_answer(bundle(name)[0], state)


def diagnose(name: str, entities, state, propagations=None, task="diagnose") -> dict:
    answer = perfect(name, state)
    answer["entities"] = [{"name": n, "contributing_factor": True} for n in entities]
    if propagations is not None:
        answer["propagations"] = [{"source": a, "target": b} for a, b in propagations]
    return run(name, answer, state, task=task)


# ---- FinOps: a bare name whose `type` says a kind ------------------------------------------------------------

HPA = "otel-frontend-hpa-misconfigured"


@pytest.mark.parametrize("kind_type, passes", [
    ("misconfigured hpa", True),                       # no kind said: the name alone
    ("Deployment: hpa utilization target too low", True),
    ("HorizontalPodAutoscaler: utilization target 1%", True),
    ("hpa: utilization target 1%", True),
    ("no utilization target to speak of", True),       # `no` here is English, not Node's short name
    ("Service: hpa utilization target too low", False),  # the Service frontend wastes nothing
    ("ConfigMap: hpa utilization target too low", False),  # no ConfigMap frontend: names nothing
    ("configmaps hpa utilization target", False),
])
def test_a_finops_bare_name_is_of_the_kind_its_type_says(kind_type, passes):
    state = derived(HPA, "faulty")
    verdict = run(HPA, {"resource": [{"name": "frontend", "type": kind_type}]}, state, task="diagnose")
    assert verdict["passed"] is passes, verdict["checks"]
