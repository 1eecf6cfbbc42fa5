"""Scenarios that pose no `mitigate` (docs/language.md, Tasks): nothing assumes a repair is graded. W2003 (no
observable success criterion) and W2004 (no solution) are not raised, a solution that does not mitigate is
W2010 rather than E4006, and with no expected alert the prompt does not say that alerts fire."""

from __future__ import annotations

from pathlib import Path

from itbench_dsl.checking import check_source

CASE = Path(__file__).resolve().parents[1] / "cases/compile/inline-diagnosis-only-no-alert/input.itb"


def codes(text: str) -> list[str]:
    return [d.code for d in check_source(text.encode(), "input.itb").diagnostics]


def test_a_diagnosis_only_scenario_checks_clean():
    assert codes(CASE.read_text()) == []


def test_posing_mitigate_brings_the_warnings_back():
    text = CASE.read_text().replace("tasks localize, analyze", "tasks localize, analyze, mitigate")
    assert {"W2003", "W2004"} <= set(codes(text))


WRONG_SOLUTION = '''
  solution "Scale it to zero again" {
    step "Scale the cart to zero" run "kubectl scale deployment cart --replicas=0 -n shop"
  }
}
'''


def test_a_solution_that_does_not_mitigate_is_an_error_only_when_mitigate_is_posed():
    text = CASE.read_text().rstrip().removesuffix("}") + WRONG_SOLUTION
    assert "E4006" not in codes(text) and "W2010" in codes(text)
    posed = text.replace("tasks localize, analyze", "tasks localize, analyze, mitigate")
    assert "E4006" in codes(posed)


def test_the_prompt_says_alerts_fire_only_when_the_scenario_expects_one():
    result = check_source(CASE.read_bytes(), "input.itb").result
    prompt = result.files["prompt.md"].decode()
    assert "Alerts have started to fire" not in prompt and "Something is wrong with the application." in prompt
