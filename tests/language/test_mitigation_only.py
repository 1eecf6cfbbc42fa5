"""`mitigated when only { ... }` (docs/language.md, mitigated when): the predicates, the expected alerts and
every workload ready decide the mitigation, as a peer's readiness oracle does; the fault's changes need not
be undone. Without `only`, a fix that runs another image fails; with it, it passes."""

from __future__ import annotations

from pathlib import Path

from itbench_dsl.analysis.corpus import _edited, _replace_images
from itbench_dsl.analysis.states import derive, objects, render
from itbench_dsl.backends.evaluator import evaluator_spec
from itbench_dsl.checking import check_source
from itbench_dsl.parser import parse_text
from itbench_dsl.printer import print_document
from itbench_dsl.runtime.evaluator import evaluate

CASE = Path(__file__).resolve().parents[1] / "cases/compile/inline-readiness-decides/input.itb"
KEY = ("Deployment", "shop", "cart")


def checked(text: str):
    result = check_source(text.encode(), "input.itb")
    assert not result.has_errors, result.diagnostics
    return result.scenario


def verdicts(text: str) -> dict[str, bool]:
    scenario = checked(text)
    spec, found = evaluator_spec(scenario), objects(scenario)
    states = {"faulty": derive(scenario)["faulty"], "solved": render(found.solved, found),
              "another image": render(_edited(found.solved, KEY, _replace_images), found)}
    return {name: evaluate(spec, None, state, task="mitigate")["passed"] for name, state in states.items()}


def test_only_is_parsed_printed_and_carried_to_the_ir():
    text = CASE.read_text()
    document = parse_text(text)
    assert document is not None
    assert "mitigated when only {" in print_document(document)
    assert checked(text).mitigation.only is True
    assert checked(text.replace("mitigated when only {", "mitigated when {")).mitigation.only is None


def test_readiness_alone_decides_with_only():
    assert verdicts(CASE.read_text()) == {"faulty": False, "solved": True, "another image": True}


def test_without_only_the_image_must_come_back():
    plain = CASE.read_text().replace("mitigated when only {", "mitigated when {")
    assert verdicts(plain) == {"faulty": False, "solved": True, "another image": False}


def test_only_stays_out_of_the_json_of_scenarios_without_it():
    plain = CASE.read_text().replace("mitigated when only {", "mitigated when {")
    files = check_source(plain.encode(), "input.itb").result.files
    assert b'"only"' not in files["scenario.json"]
