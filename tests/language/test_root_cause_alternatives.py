"""`root_cause A or B` (docs/language.md, Expectations): one cause either of whose objects is the right answer.
It is parsed and printed as written, and graded by the runtime as one class: naming A, or B, or both is the
whole answer; naming neither is wrong."""

from __future__ import annotations

from pathlib import Path

from itbench_dsl.analysis.states import derive
from itbench_dsl.backends.evaluator import evaluator_spec
from itbench_dsl.checking import check_source
from itbench_dsl.parser import parse_text
from itbench_dsl.printer import print_document
from itbench_dsl.runtime.evaluator import evaluate

CASE = Path(__file__).resolve().parents[1] / "cases/compile/inline-root-cause-alternatives/input.itb"


def scenario_of(text: str):
    checked = check_source(text.encode(), "input.itb")
    assert not checked.has_errors, checked.diagnostics
    return checked.scenario


def localize(scenario, *names: str) -> dict:
    spec = evaluator_spec(scenario)
    answer = {"entities": [{"name": f"shop/Deployment/{n}", "root_cause": True} for n in names]}
    return evaluate(spec, answer, derive(scenario)["faulty"], task="localize")


def test_alternatives_are_parsed_and_printed_back():
    document = parse_text(CASE.read_text())
    assert document is not None
    assert 'root_cause deployment "redis" or deployment "cart"' in print_document(document)


def test_either_object_or_both_is_the_whole_answer():
    scenario = scenario_of(CASE.read_text())
    for names in (("redis",), ("cart",), ("redis", "cart")):
        verdict = localize(scenario, *names)
        assert verdict["passed"] and verdict["score"] == 1.0, (names, verdict["checks"])


def test_neither_is_wrong():
    scenario = scenario_of(CASE.read_text())
    assert not localize(scenario, "frontend")["passed"]
    assert not localize(scenario)["passed"]


def test_without_or_the_second_object_is_not_a_root_cause():
    text = CASE.read_text().replace(' or deployment "cart"', "")
    scenario = scenario_of(text)
    assert localize(scenario, "redis")["passed"]
    assert not localize(scenario, "cart")["passed"]
