"""`itbench explain` and `itbench faults NAME`: one entry of the code list or of the fault library."""

from __future__ import annotations

import pytest

from itbench_dsl.faults import FAULTS
from test_cli import invoke


def test_explain_faults_lists_the_library():
    result = invoke("explain", "faults")
    assert result.exit_code == 0
    listed = {line.split()[0] for line in result.stdout.splitlines() if line and not line.startswith(" ")}
    assert listed == set(FAULTS)


@pytest.mark.parametrize("name", sorted(FAULTS)[:: max(1, len(FAULTS) // 8)])
def test_one_fault_shows_its_arguments_targets_and_alerts(name: str):
    kind = FAULTS[name]
    result = invoke("faults", name)
    assert result.exit_code == 0
    page = result.stdout
    assert page.startswith(f"# `{name}`") and "## Arguments" in page and "## Alerts it raises" in page
    assert all(f"`{t}`" in page for t in kind.targets)
    assert all(f"| `{a.name}` |" in page for a in kind.args)
    assert invoke("explain", name).stdout == page


def test_an_unknown_fault_names_the_closest():
    name = sorted(FAULTS)[0]
    result = invoke("faults", name[:-1] + "x")
    assert result.exit_code == 2 and f"did you mean `{name}`?" in result.stderr
    assert "Traceback" not in result.stderr


def test_codes_stay_explained_in_either_case():
    assert invoke("explain", "e2003").stdout == invoke("explain", "E2003").stdout != ""
    assert invoke("explain", "codes").stdout == invoke("explain").stdout


def test_an_unknown_topic_is_a_usage_error():
    result = invoke("explain", "nothing-like-it")
    assert result.exit_code == 2 and "neither a diagnostic code nor a fault" in result.stderr


# ---- `itbench explain SCENARIO.itb`: every check that grades it ------------------------------------------

GRADED = ["sre/otel-checkout-nonexistent-image.itb", "sre/otel-payment-failure-unreachable-flags.itb",
          "sre/bookinfo-ambient-mode-disabled.itb", "sre/hotel-reservation-noop-detection.itb",
          "finops/otel-ad-missing-memory-limit.itb", "finops/otel-three-hpas-misconfigured.itb"]


def _listed(stdout: str) -> dict[str, list[str]]:
    tasks: dict[str, list[str]] = {}
    current = None
    for line in stdout.splitlines()[1:]:
        if line and not line.startswith(" "):
            current = tasks.setdefault(line, [])
        elif line.startswith("  ") and not line.startswith("    ") and current is not None:
            if "only when it fails]" not in line:  # such a check is in a verdict that fails it alone
                current.append(line.split()[0])
    return tasks


@pytest.mark.parametrize("name", GRADED)
def test_explain_a_scenario_lists_every_check_its_verdict_has(name: str):
    """The listing is the verdict's checks, each once: on the faulty state for mitigate, on an empty answer for
    diagnose (every check is in the verdict whatever the answer)."""
    from support.compiling import SCENARIOS
    from itbench_dsl.backends.evaluator import evaluator_spec
    from itbench_dsl.checking import check_source
    from itbench_dsl.runtime import evaluator as runtime
    from itbench_dsl.analysis.states import derive

    path = SCENARIOS / name
    result = invoke("explain", str(path))
    assert result.exit_code == 0, result.stderr
    listed = _listed(result.stdout)
    scenario = check_source(path.read_bytes(), str(path), lint=False).scenario
    spec = evaluator_spec(scenario)
    assert sorted(listed) == sorted(spec["tasks"])
    if "mitigate" in spec["tasks"]:
        verdict = runtime.evaluate(spec, None, derive(scenario)["faulty"], task="mitigate")
        assert listed["mitigate"] == [c["id"] for c in verdict["checks"]]
    if "diagnose" in spec["tasks"]:
        answer = {"entities": []} if scenario.domain == "sre" else {"resource": []}
        verdict = runtime.evaluate(spec, answer, None, task="diagnose")
        assert listed["diagnose"] == [c["id"] for c in verdict["checks"]]


def test_explain_a_scenario_says_where_each_check_comes_from():
    from support.compiling import SCENARIOS

    path = SCENARIOS / "finops" / "otel-ad-missing-memory-limit.itb"
    out = invoke("explain", str(path)).stdout
    assert f"[optimum, {path}:15]" in out and "within 10% of 300Mi" in out
    assert f"[predicate, {path}:17]" in out and 'deployment "ad" ready' in out
    assert "[health rule]" in out and "[safeguard rule]" in out
    # the fault's one field is decided by the optimum: finops.proximity.0 is its check, no field check beside it
    assert "finops.proximity.0" in out and f"[fault, {path}:11]" not in out


def test_explain_a_scenario_with_errors_shows_them(tmp_path):
    broken = tmp_path / "broken.itb"
    broken.write_text('scenario "broken" {\n  domain sre\n  fault nonexistent_image on deployment "nope"\n}\n')
    result = invoke("explain", str(broken))
    assert result.exit_code == 1 and "has errors" in result.stderr
    assert invoke("explain", str(tmp_path / "missing.itb")).exit_code == 2


@pytest.mark.parametrize("name", GRADED)
def test_a_missing_answer_fails_on_the_check_explain_lists_for_it(name: str):
    """Every task graded on an answer lists the check its verdict holds when the answer is missing, and a
    control's detection lists no time check (its right answer is `false`, whatever its time)."""
    from support.compiling import SCENARIOS
    from itbench_dsl.backends.evaluator import evaluator_spec
    from itbench_dsl.checking import check_source
    from itbench_dsl.grading import grading_checks
    from itbench_dsl.runtime import evaluator as runtime

    scenario = check_source((SCENARIOS / name).read_bytes(), str(SCENARIOS / name), lint=False).scenario
    spec = evaluator_spec(scenario)
    listed = grading_checks(scenario)
    for task in (t for t in spec["tasks"] if t in runtime.ANSWER_TASKS):
        verdict = runtime.grade(spec, task, runtime.MISSING, None, None, None, False)
        only = {c.id for c in listed if c.task == task and c.on_failure}
        assert [c["id"] for c in verdict["checks"]] == sorted(only), task
    if "detect" in spec["tasks"]:
        timed = any(c.id == "detection.noticed_at" for c in listed)
        assert timed == bool(spec["detection"]["fault"])
