"""pass@k, mean ± standard error, and `itbench score` (itbench_dsl/runtime/scoring.py)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from click.testing import CliRunner

from itbench_dsl import cli as cli_module
from itbench_dsl.runtime.scoring import (
    ScoringError,
    aggregate,
    load_verdicts,
    mean_and_stderr,
    pass_at_k,
)


def invoke(*args: str):
    try:
        runner = CliRunner(mix_stderr=False)
    except TypeError:  # click >= 8.2 keeps them apart
        runner = CliRunner()
    return runner.invoke(cli_module.cli, list(args), catch_exceptions=False)


# ---- the estimator, against values computed by hand ---------------------------------------------------


def test_pass_at_k_hand_computed():
    # n=5, c=2: pass@1 = 1 - C(3,1)/C(5,1) = 1 - 3/5; pass@3 = 1 - C(3,3)/C(5,3) = 1 - 1/10
    assert pass_at_k(5, 2, 1) == pytest.approx(0.4, abs=1e-15)
    assert pass_at_k(5, 2, 3) == pytest.approx(0.9, abs=1e-15)
    # n=10, c=3, k=5: 1 - C(7,5)/C(10,5) = 1 - 21/252
    assert pass_at_k(10, 3, 5) == pytest.approx(1 - 21 / 252, abs=1e-15)


def test_pass_at_k_edges():
    assert pass_at_k(5, 0, 1) == 0.0 and pass_at_k(5, 0, 5) == 0.0  # nothing passed
    assert pass_at_k(5, 5, 1) == 1.0 and pass_at_k(5, 5, 5) == 1.0  # everything passed
    assert pass_at_k(5, 3, 3) == 1.0  # fewer failures than k: a draw of k always holds a pass
    assert pass_at_k(1, 1, 1) == 1.0 and pass_at_k(1, 0, 1) == 0.0
    assert pass_at_k(5, 2, 5) == 1.0


def test_pass_at_k_is_exact_for_large_n():
    # a float formula loses precision here; math.comb with a Fraction does not
    assert pass_at_k(1000, 1, 1) == pytest.approx(0.001, rel=1e-12)
    assert 0.0 < pass_at_k(1000, 1, 999) < 1.0


@pytest.mark.parametrize("n,c,k,message", [
    (3, 1, 5, "pass@5 needs at least 5 trials, there are 3"),
    (5, 6, 1, "0 <= c <= n"),
    (5, -1, 1, "0 <= c <= n"),
    (5, 2, 0, "k must be at least 1"),
    (0, 0, 1, "at least one trial"),
])
def test_pass_at_k_refuses(n, c, k, message):
    with pytest.raises(ScoringError, match=message.replace("(", r"\(").replace(")", r"\)")):
        pass_at_k(n, c, k)


def test_mean_and_stderr():
    mean, se = mean_and_stderr([1.0, 0.0, 1.0, 0.0])
    assert mean == 0.5
    assert se == pytest.approx(math.sqrt((4 * 0.25 / 3) / 4))
    assert mean_and_stderr([0.7]) == (0.7, 0.0)
    with pytest.raises(ScoringError):
        mean_and_stderr([])


# ---- aggregation and the command -------------------------------------------------------------------------


def _write(folder: Path, verdicts: list[tuple[str, bool, float]]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for index, (scenario, passed, score) in enumerate(verdicts):
        verdict = {"scenario": scenario, "passed": passed, "score": score, "metrics": {}, "checks": []}
        (folder / f"trial-{index:03d}.json").write_text(json.dumps(verdict), encoding="utf-8")


TRIALS = [("a", True, 1.0), ("a", False, 0.5), ("a", True, 1.0), ("a", False, 0.0), ("a", False, 0.0),
          ("b", True, 1.0), ("b", True, 1.0), ("b", True, 0.8)]


def test_aggregate_per_scenario_and_overall(tmp_path: Path):
    _write(tmp_path / "r", TRIALS)
    report = aggregate(load_verdicts(tmp_path / "r"), [3])
    assert report["k"] == [1, 3]
    a, b = report["scenarios"]
    assert (a["scenario"], a["trials"], a["passed"]) == ("a", 5, 2)
    assert a["pass_at_k"] == {"1": pytest.approx(0.4), "3": pytest.approx(0.9)}
    assert a["mean_score"] == pytest.approx(0.5)
    assert b["pass_at_k"] == {"1": 1.0, "3": 1.0}
    (overall,) = report["overall"]
    assert overall["scenarios"] == 2 and overall["trials"] == 8 and overall["passed"] == 5
    assert overall["pass_at_k"]["1"] == pytest.approx((0.4 + 1.0) / 2)  # each scenario weighs the same
    assert overall["mean_score"] == pytest.approx((0.5 + 2.8 / 3) / 2)


def test_aggregate_refuses_k_above_a_scenarios_trials(tmp_path: Path):
    _write(tmp_path / "r", TRIALS)
    with pytest.raises(ScoringError, match="scenario `b` has 3 trials: pass@5 needs at least 5"):
        aggregate(load_verdicts(tmp_path / "r"), [5])


def test_score_table(tmp_path: Path):
    _write(tmp_path / "r", TRIALS)
    result = invoke("score", str(tmp_path / "r"), "--k", "3")
    assert result.exit_code == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].split() == ["scenario", "trials", "passed", "pass@1", "pass@3", "mean", "±", "se"]
    assert lines[2].split() == ["a", "5", "2", "0.400", "0.900", "0.500", "±", "0.224"]
    assert lines[3].split()[:5] == ["b", "3", "3", "1.000", "1.000"]
    assert lines[-1].startswith("overall (2 scenarios)")
    assert invoke("score", str(tmp_path / "r"), "--k", "3").stdout == result.stdout  # deterministic


def test_score_json(tmp_path: Path):
    _write(tmp_path / "r", TRIALS)
    result = invoke("score", str(tmp_path / "r"), "--k", "2", "--format", "json")
    assert result.exit_code == 0
    report = json.loads(result.stdout)
    assert report["k"] == [1, 2]
    # n=5, c=2, k=2: 1 - C(3,2)/C(5,2) = 1 - 3/10
    assert report["scenarios"][0]["pass_at_k"]["2"] == pytest.approx(0.7)
    assert set(report["overall"][0]) == {"task", "scenarios", "trials", "passed", "no_verdict", "mean_score", "stderr",
                                         "pass_at_k"}


@pytest.mark.parametrize("setup,message", [
    (lambda d: None, "no .json verdict files"),
    (lambda d: (d / "x.json").write_text("{not json", encoding="utf-8"), "not a readable JSON file"),
    (lambda d: (d / "x.json").write_text("[]", encoding="utf-8"), "a verdict is a JSON object"),
    (lambda d: (d / "x.json").write_text('{"passed": true, "score": 1}', encoding="utf-8"), "no `scenario`"),
    (lambda d: (d / "x.json").write_text('{"scenario": "a", "passed": "yes", "score": 1}', encoding="utf-8"),
     "`passed` must be true or false"),
    (lambda d: (d / "x.json").write_text('{"scenario": "a", "passed": true, "score": "1"}', encoding="utf-8"),
     "`score` must be a number"),
])
def test_score_unusable_input_exits_2(tmp_path: Path, setup, message, capsys):
    folder = tmp_path / "r"
    folder.mkdir()
    setup(folder)
    with pytest.raises(SystemExit) as exit_info:
        cli_module.main(["score", str(folder)])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and message in err


def test_score_messages(tmp_path: Path, capsys):
    folder = tmp_path / "r"
    _write(folder, TRIALS)
    for args, message in ((["score", str(tmp_path / "missing")], "not a folder"),
                          (["score", str(folder), "--k", "4"], "pass@4 needs at least 4"),
                          (["score", str(folder), "--k", "0"], "k must be at least 1")):
        with pytest.raises(SystemExit) as exit_info:
            cli_module.main(args)
        assert exit_info.value.code == 2
        err = capsys.readouterr().err
        assert message in err and "Traceback" not in err


def test_a_scenarios_tasks_are_never_pooled(tmp_path: Path):
    """A verdict of both tasks (an evaluator run without --task) counts once per task."""
    folder = tmp_path / "r"
    folder.mkdir()
    for index, (diagnosed, mitigated) in enumerate([(True, False), (True, True), (False, False)]):
        verdict = {"scenario": "s", "task": "diagnose+mitigate", "passed": diagnosed and mitigated, "score": 0.5,
                   "tasks": {"diagnose": {"scenario": "s", "task": "diagnose", "passed": diagnosed,
                                          "score": float(diagnosed)},
                             "mitigate": {"scenario": "s", "task": "mitigate", "passed": mitigated,
                                          "score": float(mitigated)}}}
        (folder / f"t{index}.json").write_text(json.dumps(verdict), encoding="utf-8")
    report = aggregate(load_verdicts(folder), [])
    rows = {r["task"]: r for r in report["scenarios"]}
    assert set(rows) == {"diagnose", "mitigate"}
    assert rows["diagnose"]["passed"] == 2 and rows["mitigate"]["passed"] == 1
    assert [o["task"] for o in report["overall"]] == ["diagnose", "mitigate"]
    table = invoke("score", str(folder)).stdout
    assert "diagnose" in table and "mitigate" in table


@pytest.mark.parametrize("score,message", [(27.0, "between 0 and 1"), (-0.5, "between 0 and 1"),
                                           (1e308, "between 0 and 1")])
def test_scores_outside_zero_and_one_are_refused(tmp_path: Path, score, message):
    folder = tmp_path / "r"
    folder.mkdir()
    (folder / "x.json").write_text(json.dumps({"scenario": "a", "passed": True, "score": score}), encoding="utf-8")
    with pytest.raises(ScoringError, match=message):
        load_verdicts(folder)


def test_names_are_shown_escaped_and_one_trial_has_no_spread(tmp_path: Path):
    folder = tmp_path / "r"
    _write(folder, [("evil\x1b[31mred\nline", True, 1.0)])
    table = invoke("score", str(folder)).stdout
    assert "\x1b" not in table and "\\x1b" in table and "\\n" in table
    assert "(1 trial)" in table and "± 0.000" not in table


def test_deep_json_is_refused_not_a_traceback(tmp_path: Path):
    folder = tmp_path / "r"
    folder.mkdir()
    (folder / "x.json").write_text("[" * 100_000 + "]" * 100_000, encoding="utf-8")
    with pytest.raises(ScoringError, match="not a readable JSON file"):
        load_verdicts(folder)


def _run_folder(results: Path, scenario: str, run_id: str, verdict: dict | None, record: dict | None) -> Path:
    """A run folder as `itbench run` leaves it: timeline.jsonl, run.json, and verdict.json when it graded."""
    folder = results / scenario / run_id
    folder.mkdir(parents=True)
    (folder / "timeline.jsonl").write_text('{"phase": "run", "event": "start"}\n', encoding="utf-8")
    (folder / "state.json").write_text('{"resources": {"items": []}}', encoding="utf-8")
    if record is not None:
        (folder / "run.json").write_text(json.dumps(record), encoding="utf-8")
    if verdict is not None:
        (folder / "verdict.json").write_text(json.dumps(verdict), encoding="utf-8")
    return folder


def test_a_run_that_ended_without_a_verdict_is_a_failed_trial(tmp_path: Path):
    """One graded pass and two runs that failed before grading: pass@1 is 1/3, not 1.0, and the table says
    how many trials have no verdict."""
    results = tmp_path / "results"
    both = {"scenario": "s", "task": "diagnose+mitigate", "passed": True, "score": 1.0,
            "tasks": {"diagnose": {"scenario": "s", "task": "diagnose", "passed": True, "score": 1.0},
                      "mitigate": {"scenario": "s", "task": "mitigate", "passed": True, "score": 1.0}}}
    _run_folder(results, "s", "r1", both, {"scenario": "s", "status": "graded", "tasks": ["diagnose", "mitigate"]})
    _run_folder(results, "s", "r2", None, {"scenario": "s", "status": "failed", "error": "cluster gone",
                                           "tasks": ["diagnose", "mitigate"]})
    _run_folder(results, "s", "r3", None, None)  # killed before it wrote run.json: its folder names the scenario
    report = aggregate(load_verdicts(results), [])
    rows = {r["task"]: r for r in report["scenarios"]}
    assert set(rows) == {"diagnose", "mitigate"}
    for row in rows.values():
        assert (row["trials"], row["passed"], row["no_verdict"]) == (3, 1, 2)
        assert row["pass_at_k"]["1"] == pytest.approx(1 / 3) and row["mean_score"] == pytest.approx(1 / 3)
    result = invoke("score", str(results))
    assert result.exit_code == 0, result.stderr
    lines = result.stdout.splitlines()
    assert "no verdict" in lines[0]
    assert lines[2].split()[:6] == ["s", "diagnose", "3", "1", "2", "0.333"]


def test_only_runs_without_a_verdict_still_score(tmp_path: Path):
    results = tmp_path / "results"
    _run_folder(results, "s", "r1", None, {"scenario": "s", "status": "interrupted", "tasks": ["policy"]})
    report = aggregate(load_verdicts(results), [])
    assert report["scenarios"][0]["passed"] == 0 and report["scenarios"][0]["no_verdict"] == 1
    assert report["scenarios"][0]["task"] == "policy"


def test_run_folders_planted_inside_a_run_are_never_counted(tmp_path: Path):
    """An agent writes into its workspace, inside its own run folder: run folders it plants there (a
    timeline.jsonl beside a passing verdict.json) are not the harness's, and nothing below a run folder is read."""
    results = tmp_path / "results"
    failed = {"scenario": "s", "task": "localize", "passed": False, "score": 0.25}
    run = _run_folder(results, "s", "r1", failed, {"scenario": "s", "status": "graded", "tasks": ["localize"]})
    for i in range(5):
        planted = run / "workspace" / ".cache" / f"r{i}"
        planted.mkdir(parents=True)
        (planted / "timeline.jsonl").write_text("{}\n")
        (planted / "verdict.json").write_text(json.dumps({**failed, "passed": True, "score": 1.0}))
    (run / "workspace" / "verdict.json").write_text(json.dumps({**failed, "passed": True, "score": 1.0}))
    verdicts = load_verdicts(results)
    assert [(v["passed"], v["score"]) for v in verdicts] == [(False, 0.25)]


def test_a_run_that_died_before_run_json_counts_for_the_tasks_its_timeline_names(tmp_path: Path):
    """The timeline's first step records the scenario and its tasks: a run killed before run.json is a
    failed trial of each task, in that task's totals (never a task-less row of its own)."""
    results = tmp_path / "results"
    folder = _run_folder(results, "s", "r1", None, None)
    (folder / "timeline.jsonl").write_text(json.dumps({"phase": "run", "event": "start", "scenario": "s",
                                                       "tasks": ["localize", "mitigate"]}) + "\n")
    report = aggregate(load_verdicts(results), [])
    assert {(r["task"], r["trials"], r["no_verdict"]) for r in report["scenarios"]} == {("localize", 1, 1),
                                                                                        ("mitigate", 1, 1)}


def _graded(scenario: str, *tasks: str, passed: bool = True) -> dict:
    parts = {t: {"scenario": scenario, "task": t, "passed": passed, "score": 1.0 if passed else 0.0} for t in tasks}
    if len(parts) == 1:
        return next(iter(parts.values()))
    return {"scenario": scenario, "task": "+".join(tasks), "passed": passed, "score": 1.0 if passed else 0.0,
            "tasks": parts}


@pytest.mark.parametrize("verdict", [
    "{not json", "[]", '{"scenario": "s", "passed": "yes", "score": 1}', '{"scenario": "s", "passed": true}',
    '{"scenario": "s", "passed": true, "score": 1, "tasks": []}',
    '{"scenario": "s", "passed": true, "score": 1, "tasks": {"localize": 1}}',
])
def test_a_run_with_a_malformed_verdict_is_a_failed_trial_said_so(tmp_path: Path, verdict: str):
    """A run folder's verdict.json that is not a verdict neither stops the scoring of every other run nor is
    dropped (which would lift pass@1): the run is a failed trial of each of its tasks, and a note says why."""
    results = tmp_path / "results"
    _run_folder(results, "s", "r1", _graded("s", "localize"), {"scenario": "s", "status": "graded",
                                                                "tasks": ["localize"]})
    bad = _run_folder(results, "s", "r2", None, {"scenario": "s", "status": "graded", "tasks": ["localize"]})
    (bad / "verdict.json").write_text(verdict, encoding="utf-8")
    report = aggregate(load_verdicts(results), [])
    row = report["scenarios"][0]
    assert (row["trials"], row["passed"], row["no_verdict"]) == (2, 1, 1) and row["pass_at_k"]["1"] == 0.5
    result = invoke("score", str(results))
    assert result.exit_code == 0 and "Traceback" not in result.stderr
    assert "r2: localize counted as a failed trial: malformed verdict" in result.stderr


def test_a_run_whose_verdict_lacks_one_of_its_tasks_fails_that_task(tmp_path: Path):
    results = tmp_path / "results"
    _run_folder(results, "s", "r1", _graded("s", "detect"), {"scenario": "s", "status": "graded",
                                                              "tasks": ["detect", "localize"]})
    rows = {r["task"]: r for r in aggregate(load_verdicts(results), [])["scenarios"]}
    assert (rows["detect"]["passed"], rows["localize"]["passed"], rows["localize"]["no_verdict"]) == (1, 0, 1)
    assert "the verdict lacks this task" in invoke("score", str(results)).stderr


def test_a_run_copied_into_the_results_twice_is_refused(tmp_path: Path):
    """The same run (scenario and run id) in two folders is one trial: counted twice it would weigh twice."""
    import shutil

    results = tmp_path / "results"
    run = _run_folder(results, "s", "20260101T000000Z-abcdef", _graded("s", "mitigate"),
                      {"scenario": "s", "run_id": "20260101T000000Z-abcdef", "status": "graded", "tasks": ["mitigate"]})
    _run_folder(results, "s", "r2", _graded("s", "mitigate", passed=False),
                {"scenario": "s", "run_id": "r2", "status": "graded", "tasks": ["mitigate"]})
    (run / "timeline.jsonl").write_text(json.dumps({"t": "2026-01-01T00:00:00.123Z", "phase": "run", "event": "start",
                                                    "scenario": "s", "tasks": ["mitigate"]}) + "\n")
    shutil.copytree(run, results / "backup" / "s" / run.name)
    with pytest.raises(ScoringError, match="is there twice"):
        load_verdicts(results)
    result = invoke("score", str(results))
    assert result.exit_code == 2 and "is there twice" in result.stderr and "Traceback" not in result.stderr
    # two runs given one --run-id in two results folders are two trials: they began apart
    (results / "backup" / "s" / run.name / "timeline.jsonl").write_text(json.dumps(
        {"t": "2026-01-02T00:00:00.456Z", "phase": "run", "event": "start", "scenario": "s"}) + "\n")
    assert len(load_verdicts(results)) == 3


def test_an_empty_results_folder_says_so(tmp_path: Path):
    (tmp_path / "results" / "s" / "r1").mkdir(parents=True)
    result = invoke("score", str(tmp_path / "results"))
    assert result.exit_code == 2 and "no .json verdict files and no run folders" in result.stderr


def test_fifos_and_devices_named_like_verdicts_are_never_waited_on(tmp_path: Path):
    import os
    import signal

    results = tmp_path / "results"
    _run_folder(results, "s", "r1", _graded("s", "localize"), {"scenario": "s", "status": "graded",
                                                                "tasks": ["localize"]})
    os.mkfifo(results / "loose.json")  # not a regular file: no verdict
    (results / "zero.json").symlink_to("/dev/zero")
    piped = _run_folder(results, "s", "r2", None, {"scenario": "s", "status": "graded", "tasks": ["localize"]})
    os.mkfifo(piped / "verdict.json")
    blocked = _run_folder(results, "s", "r3", None, None)
    (blocked / "timeline.jsonl").unlink()
    (blocked / "state.json").unlink()
    os.mkfifo(blocked / "timeline.jsonl")  # a FIFO timeline: no run folder of the harness's

    def hung(signum, frame):
        raise AssertionError("scoring waited on a FIFO")

    previous = signal.signal(signal.SIGALRM, hung)
    signal.alarm(20)
    try:
        verdicts = load_verdicts(results)
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    assert sorted((v["passed"], v.get("status", "")) for v in verdicts) == [
        (False, "malformed verdict: " + f"{piped / 'verdict.json'}: not a regular file"), (True, "")]
