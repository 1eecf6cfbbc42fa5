"""FinOps's closed `type` vocabulary and the Rego grading of the CISO OPA tasks, by hand.

FinOps: an answer's `type` is exactly one value of the vocabulary (tasks.FINOPS_TYPES), spelled any way the
vocabulary lists; a negated, hedged or many-valued text is none, and an autoscaler's workload may be named with
the replicas it holds up. Rego: the policy is graded on inputs whose verdict depends on the objects' content
(count, order and sizes do not tell them apart), in the input shape the prompt states, and a host control's
input carries the settings the control reads.
"""

from __future__ import annotations

import pytest

from itbench_dsl.tasks import FINOPS_TYPES
from test_evaluator import derived, run


def failed(verdict: dict) -> set:
    return {c["id"] for c in verdict["checks"] if not c["passed"]}


FINOPS = [("otel-cart-overprovisioned-requests", "Deployment", "cart", "overprovisioned_requests"),
          ("otel-recommendation-idle-replicas", "Deployment", "recommendation", "idle_replicas"),
          ("otel-frontend-hpa-misconfigured", "HorizontalPodAutoscaler", "frontend", "misconfigured_hpa"),
          ("otel-ad-missing-memory-limit", "Deployment", "ad", "unassigned_limits")]


def _typed(name, kind, obj, text):
    return run(name, {"resource": [{"name": f"otel-demo/{kind}/{obj}", "type": text}]}, derived(name, "faulty"),
               task="diagnose")


@pytest.mark.parametrize("name,kind,obj,value", FINOPS)
def test_the_type_is_one_value_of_the_vocabulary(name, kind, obj, value):
    for text in (value, value.replace("_", " ").upper(), value.replace("_", "-"), FINOPS_TYPES[value][0],
                 f"{kind}: {FINOPS_TYPES[value][-1]}"):
        assert _typed(name, kind, obj, text)["passed"], text
    others = [v for v in FINOPS_TYPES if v != value]
    hedged = [f"not {value.replace('_', ' ')}", f"no {value.replace('_', ' ')}", f"either {value} or {others[0]}",
              f"{value} or {others[0]}", ", ".join(FINOPS_TYPES), f"{value}, {others[0]}", f"maybe {value}",
              f"{value}?  possibly {others[1]}", others[0], "x", kind, ""]
    for text in hedged:
        verdict = _typed(name, kind, obj, text)
        assert not verdict["passed"] and "finops.type" in failed(verdict), text


def test_an_object_named_twice_must_have_every_type_right():
    name, kind, obj, value = FINOPS[0]
    answer = {"resource": [{"name": f"otel-demo/{kind}/{obj}", "type": v} for v in FINOPS_TYPES]}
    verdict = run(name, answer, derived(name, "faulty"), task="diagnose")
    assert "finops.type" in failed(verdict)


def test_an_autoscalers_workload_may_be_named_with_its_replicas():
    """A misconfigured HPA keeps its workload scaled out: naming the workload with "too many replicas" names
    the waste (the replicas the autoscaler holds up); the autoscaler itself is misconfigured, not idle."""
    name = "otel-frontend-hpa-misconfigured"
    assert _typed(name, "Deployment", "frontend", "too many replicas")["passed"]
    assert _typed(name, "Deployment", "frontend", "misconfigured_hpa")["passed"]
    assert "finops.type" in failed(_typed(name, "HorizontalPodAutoscaler", "frontend", "too many replicas"))
    assert "finops.type" in failed(_typed(name, "Deployment", "frontend", "overprovisioned_requests"))
    # on a workload scaled by hand, the autoscaler's type is not the waste
    assert "finops.type" in failed(_typed("otel-recommendation-idle-replicas", "Deployment", "recommendation",
                                          "misconfigured_hpa"))
