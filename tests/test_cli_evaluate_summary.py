"""`itbench evaluate`: a summary for a reader (failed checks first, each once), the JSON for scripts, and a
verdict that says what its score means, with a `repair` metric that is 0 for doing nothing in SRE and FinOps."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from itbench_dsl.checking import check_source
from itbench_dsl.cli import cli
from itbench_dsl.analysis.states import derive

REPO = Path(__file__).resolve().parents[1]
SRE = "scenarios/sre/otel-checkout-nonexistent-image.itb"
FINOPS = "scenarios/finops/otel-ad-missing-memory-limit.itb"


def bundle_and_states(tmp_path, source):
    out = tmp_path / "out"
    result = CliRunner().invoke(cli, ["compile", str(REPO / source), "-o", str(out)])
    assert result.exit_code == 0, result.output
    states = derive(check_source((REPO / source).read_bytes(), source).scenario)
    paths = {}
    for name in ("faulty", "solved"):
        paths[name] = tmp_path / f"{name}.json"
        paths[name].write_text(json.dumps(states[name]))
    return next(out.iterdir()), paths


def evaluate(*args):
    return CliRunner().invoke(cli, ["evaluate", *map(str, args)])


def test_json_when_not_a_terminal_and_with_json(tmp_path):
    bundle, states = bundle_and_states(tmp_path, SRE)
    for extra in ((), ("--json",)):
        result = evaluate(bundle, "--task", "mitigate", "--state", states["faulty"], *extra)
        verdict = json.loads(result.output)
        assert verdict["passed"] is False and verdict["score_means"].startswith("the fraction")


def test_summary_lists_failed_checks_first_each_once(tmp_path):
    bundle, states = bundle_and_states(tmp_path, SRE)
    verdict = json.loads(evaluate(bundle, "--task", "mitigate", "--state", states["faulty"], "--json").output)
    text = evaluate(bundle, "--task", "mitigate", "--state", states["faulty"], "--human").output
    lines = text.splitlines()
    assert lines[0].startswith("otel-checkout-nonexistent-image mitigate: FAILED, score")
    marks = [line.split()[0] for line in lines if line.startswith("  FAIL") or line.startswith("  ok")]
    assert marks == sorted(marks, key=lambda m: m != "FAIL")  # every failure before every pass
    for check in verdict["checks"]:
        assert sum(f" {check['id']}" in line for line in lines) == 1, check["id"]
        if not check["passed"]:
            assert f"FAIL {check['id']}: {check['detail']}" in text


def test_summary_of_every_task_lists_each_check_once(tmp_path):
    bundle, states = bundle_and_states(tmp_path, SRE)
    answer = tmp_path / "answer.json"
    answer.write_text(json.dumps({"entities": [{"name": "otel-demo/Deployment/checkout", "contributing_factor": True}]}))
    verdict = json.loads(evaluate(bundle, "--agent-output", answer, "--state", states["solved"], "--json").output)
    assert verdict["tasks"] and len(verdict["checks"]) == sum(len(v["checks"]) for v in verdict["tasks"].values())
    text = evaluate(bundle, "--agent-output", answer, "--state", states["solved"], "--human").output
    ids = [line.split()[1].rstrip(":") for line in text.splitlines() if line.startswith("    ")
           and line.split()[0] in ("FAIL", "ok")]
    assert len(ids) == len(verdict["checks"])  # once each, not twice


@pytest.mark.parametrize("source", [SRE, FINOPS])
def test_doing_nothing_repairs_nothing_in_every_domain(tmp_path, source):
    bundle, states = bundle_and_states(tmp_path, source)
    nothing = json.loads(evaluate(bundle, "--task", "mitigate", "--state", states["faulty"], "--json").output)
    fixed = json.loads(evaluate(bundle, "--task", "mitigate", "--state", states["solved"], "--json").output)
    assert nothing["metrics"]["repair"] == 0.0 and fixed["metrics"]["repair"] == 1.0
    assert nothing["score_means"] != "" and "repair" in nothing["score_means"]
