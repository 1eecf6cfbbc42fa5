"""`itbench explain` lists the checks the evaluator grades, with the figures it grades by: the same check ids
as the verdict, the contracted chain's edge count, the predicate that decides a field."""

from __future__ import annotations

import re

import pytest

from itbench_dsl.analysis import states
from itbench_dsl.grading import grading_checks
from itbench_dsl.runtime.evaluator import Diagnosis
from itbench_dsl.runtime.state import EMPTY_STATE, State
from tests.runtime.test_evaluator import bundle, derived, evaluator, mitigate, run

SAMPLE = ["otel-ad-modified-target-port", "k8sbench-fix-oomkilled", "otel-checkout-insufficient-quota",
          "otel-frontend-hpa-misconfigured", "otel-cart-service-target-port", "k8sbench-fix-service-routing"]


def _listed(name: str, task: str) -> list[str]:
    return [c.id for c in grading_checks(bundle(name)[0]) if c.task == task and not c.on_failure]


@pytest.mark.parametrize("name", SAMPLE)
def test_explain_lists_the_mitigate_verdicts_checks(name):
    verdict = mitigate(name, derived(name, "solved"))
    assert _listed(name, "mitigate") == [c["id"] for c in verdict["checks"]]


@pytest.mark.parametrize("name", [n for n in SAMPLE if "diagnose" in evaluator(n)["SPEC"]["tasks"]])
def test_explain_lists_the_diagnose_verdicts_checks_and_the_graded_edge_count(name):
    scenario = bundle(name)[0]
    spec = evaluator(name)["SPEC"]
    state = derived(name, "faulty")
    verdict = run(name, states.perfect_answer(scenario, state), state, task="diagnose")
    assert _listed(name, "diagnose") == [c["id"] for c in verdict["checks"]]
    text = next((c.requires for c in grading_checks(scenario) if c.id == "diagnosis.propagation"), None)
    if text is not None:
        graded = Diagnosis(spec, State(EMPTY_STATE)).graded_chain()
        assert re.search(rf"\b{len(graded[0])} edge\(s\) graded", text), text


def test_the_raw_edge_count_is_not_quoted_as_the_graded_one():
    text = next(c.requires for c in grading_checks(bundle("otel-ad-modified-target-port")[0])
                if c.id == "diagnosis.propagation")
    assert "2 edge(s) graded" in text


@pytest.mark.parametrize("name", ["k8sbench-fix-oomkilled", "otel-cart-service-target-port"])
def test_a_field_its_statement_decides_is_graded_by_that_statement_alone(name):
    """No check of the verdict passes the fault left in place: a field check whose every change a `mitigated when`
    statement decides would pass in any state, so the statement is its only check, listed and graded."""
    verdict = mitigate(name, derived(name, "faulty"))
    faulty = {c["id"]: c["passed"] for c in verdict["checks"]}
    listed = {c.id for c in grading_checks(bundle(name)[0]) if c.task == "mitigate"}
    m = evaluator(name)["SPEC"]["mitigation"]
    deciders = {c["governed_by"] for f in m["faults"] for e in f["fields"] for c in e["changes"] if c.get("governed_by")}
    assert deciders and all(faulty[d] is False for d in deciders)
    assert not any(passed for i, passed in faulty.items() if i.startswith("fields."))
    assert set(faulty) <= listed
    assert verdict["metrics"]["repair"] == 0
