"""Task types (`tasks detect, localize, analyze, mitigate`): the statement, its checks, the prompt's sections
and their contracts, and the grading of each task, adversarially (docs/language.md and docs/evaluator.md, Tasks)."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from support.compiling import SCENARIOS, compile_text
from itbench_dsl import checking, tasks
from itbench_dsl.backends.evaluator import evaluator_spec
from itbench_dsl import parse
from itbench_dsl.printer import print_document
from itbench_dsl.runtime.evaluator import evaluate, label_key
from itbench_dsl.runtime.state import InputError
from itbench_dsl.runtime.scoring import aggregate, load_verdicts
from itbench_dsl.analysis.states import objects, perfect_answer, render

TOPOLOGY = '''
  topology {
    namespace "shop"
    deployment "cart" {
      image = "ghcr.io/example/cart:1.4.0"
      port "grpc" = 7070
      env {
        REDIS_ADDR = "redis:6379"
      }
    }
    deployment "redis" {
      image = "redis:7.2"
      port "redis" = 6379
    }
    service "cart" {
      port "grpc" = 7070
    }
    service "redis" {
      port "redis" = 6379
    }
    "cart" -> "redis"
  }
'''


def scenario(tasks_line: str = "", fault: bool = True, expect: str = "", name: str = "shop-cart") -> str:
    body = f'''scenario "{name}" {{
  domain sre
  complexity low
  description "The cart service is redeployed with a wrong address for its cache."
  {tasks_line}
{TOPOLOGY}'''
    if fault:
        body += '''
  fault modified_env on deployment "cart" {
    name = "REDIS_ADDR"
    value = "redis:6380"
  }
  expect {
    alert HighRequestErrorRate on service "cart"
    mitigated when {
      deployment "cart" ready
    }
    %s
  }
  solution "Restore the address" {
    step "Roll back" run "kubectl -n shop rollout undo deployment/cart"
  }
}
''' % expect
    else:
        body += '''
  metadata {
    control = true
  }
  expect {
    mitigated when {
      deployment "cart" ready
    }
    %s
  }
}
''' % expect
    return body


def compiled(text: str):
    result, diags = compile_text(text, "s.itb")
    assert not diags.errors(), [d.message for d in diags.errors()]
    return result


def errors(text: str) -> list[tuple[str, str]]:
    _, diags = compile_text(text, "s.itb")
    return [(d.code, f"{d.message} ({d.help})") for d in diags.errors()]


FULL = "tasks mitigate, detect within 10m, localize, analyze"
INJECTED = "2026-03-01T10:00:00Z"


@pytest.fixture(scope="module")
def faulted():
    result = compiled(scenario(FULL))
    return result, evaluator_spec(result.scenario)


@pytest.fixture(scope="module")
def control():
    result = compiled(scenario("tasks detect within 10m, mitigate", fault=False))
    return result, evaluator_spec(result.scenario)


def verdict(spec, answer, task, **kw):
    """The verdict of `task` on `answer`, given as the agent's work folder gives it (JSON null included)."""
    return evaluate(spec, None, None, task=task, answers={task: answer}, **kw)


# ---- the statement -----------------------------------------------------------------------------------------


def test_tasks_are_posed_in_incident_order_with_their_window(faulted):
    result, spec = faulted
    assert spec["tasks"] == ["detect", "localize", "analyze", "mitigate"]
    assert spec["detection"] == {"fault": True, "window_seconds": 600.0}
    assert spec["answers"] == {"detect": "detection.json", "localize": "diagnosis.json", "analyze": "analysis.json"}
    # the fault kind supplies the labels (modified_env: the application's configuration)
    assert (spec["analysis"]["system_level"], spec["analysis"]["fault_type"]) == ("application", "misconfiguration")


def test_the_statement_prints_back_as_written():
    doc, diags = parse(scenario(FULL), "s.itb")
    assert not diags.errors()
    printed = print_document(doc)
    assert "tasks mitigate, detect within 10m, localize, analyze" in printed
    again, _ = parse(printed, "s.itb")
    assert print_document(again) == printed


@pytest.mark.parametrize("line, code, words", [
    ("tasks detect, locate", "E2010", "did you mean `localize`"),
    ("tasks detect, detect", "E2002", "posed twice"),
    ("tasks localize, diagnose", "E2036", "pose one of them"),
    ("tasks mitigate within 5m", "E2010", "detection window"),
    ("tasks detect within 0s", "E2010", "longer than 0"),
    ("tasks kyverno_policy", "E2010", "write `task kyverno_policy`"),
    ("tasks detect\n  tasks mitigate", "E2002", "given twice"),
])
def test_statement_errors(line, code, words):
    found = errors(scenario(line))
    assert any(c == code and words in m for c, m in found), found


def test_errors_name_their_line():
    _, diags = compile_text(scenario("tasks detect, locate"), "s.itb")
    (error,) = diags.errors()
    assert error.code == "E2010" and error.span.line == 5 and error.span.column > 1


@pytest.mark.parametrize("line", ["tasks detect, localize", "tasks analyze", "tasks diagnose, mitigate"])
def test_a_control_cannot_be_asked_to_localize_or_analyze(line):
    assert [c for c, _ in errors(scenario(line, fault=False))] == ["E2036"]


def test_a_control_declares_no_analysis():
    text = scenario("tasks detect", fault=False,
                    expect='analysis { system_level = "application"  fault_type = "misconfiguration" }')
    assert [c for c, _ in errors(text)] == ["E2036"]


def test_analysis_labels_are_checked_and_normalised():
    text = scenario("tasks analyze", expect='analysis { system_level = "Application"  fault_type = "Code Defect" }')
    spec = evaluator_spec(compiled(text).scenario)
    assert (spec["analysis"]["system_level"], spec["analysis"]["fault_type"]) == ("application", "code_defect")
    bad = errors(scenario("tasks analyze", expect='analysis { system_level = "aplication"  fault_type = "bug" }'))
    assert [c for c, _ in bad] == ["E2010", "E2010"]
    assert "did you mean `application`" in str(bad)
    missing = errors(scenario("tasks analyze", expect='analysis { system_level = "application" }'))
    assert [c for c, _ in missing] == ["E2007"]


def test_analyze_needs_labels_when_the_fault_gives_none():
    text = scenario("tasks analyze").replace(
        'fault modified_env on deployment "cart" {\n    name = "REDIS_ADDR"\n    value = "redis:6380"\n  }',
        'fault pod_chaos on deployment "cart" { action = pod_kill }')
    found = errors(text)
    assert [c for c, _ in found] == ["E2013"] and "pod_chaos" in found[0][1]


def test_every_fault_kinds_labels_are_in_the_vocabulary():
    from itbench_dsl.faults import FAULTS

    labelled = [kind.labels for kind in FAULTS.values() if kind.labels is not None]
    assert len(labelled) > 30
    for level, kind in labelled:
        assert level in tasks.SYSTEM_LEVELS and kind in tasks.FAULT_TYPES


def test_no_tasks_statement_keeps_every_library_bundle_as_it_was():
    """Without `tasks`, nothing the statement adds reaches a bundle: the IR, the spec and the prompt are
    those of the domain's default (ITBench's combined diagnose-and-mitigate)."""
    from itbench_dsl.backends.prompt import template_name

    files = sorted(SCENARIOS.rglob("*.itb"))
    assert files
    for path in files:
        result, diags = compile_text(path.read_bytes(), str(path), validate=False)
        if result.scenario is None or result.scenario.tasks is not None:
            continue  # a file other work is changing (its own tests say so), or one that poses its tasks
        scenario_json = json.loads(result.files["scenario.json"])
        assert "tasks" not in scenario_json and "analysis" not in scenario_json, path
        spec = evaluator_spec(result.scenario)
        assert spec["tasks"] == list(tasks.DEFAULT[result.scenario.domain]), path
        assert not {"answers", "detection", "analysis"} & set(spec), path
        assert "unchanged" not in (spec["mitigation"] or {}), path
        assert template_name(result.scenario) != "prompt/tasks.md.j2", path


# ---- detection -----------------------------------------------------------------------------------------------


def test_detection_right_answers_pass(faulted, control):
    _, spec = faulted
    ok = verdict(spec, {"anomaly": True, "noticed_at": "2026-03-01T10:02:00Z"}, "detect", injected_at=INJECTED)
    assert ok["passed"] and ok["score"] == 1.0 and ok["metrics"]["time_to_detect_seconds"] == 120
    # another zone, the same instant window
    assert verdict(spec, {"anomaly": True, "noticed_at": "2026-03-01T11:09:59+01:00"}, "detect",
                   injected_at=INJECTED)["passed"]
    _, cspec = control
    for answer in ({"anomaly": False}, {"anomaly": False, "noticed_at": None}):
        assert verdict(cspec, answer, "detect")["passed"]


@pytest.mark.parametrize("answer, why", [
    ({"anomaly": False}, "no anomaly"),
    ({"anomaly": True, "noticed_at": "2026-03-01T09:59:59Z"}, "before the injection"),
    ({"anomaly": True, "noticed_at": "2027-03-01T10:00:00Z"}, "beyond"),
    ({"anomaly": True, "noticed_at": "2026-03-01T10:10:01Z"}, "beyond"),
    ({"anomaly": True, "noticed_at": "2026-03-01T10:05:00"}, "not an RFC 3339 time"),
    ({"anomaly": True, "noticed_at": "2026-03-01"}, "not an RFC 3339 time"),
    ({"anomaly": True, "noticed_at": "2026-02-30T10:05:00Z"}, "not an RFC 3339 time"),
    ({"anomaly": True}, "needs `noticed_at`"),
    ({"anomaly": "yes", "noticed_at": "2026-03-01T10:05:00Z"}, "must be a boolean"),
    ({"anomaly": 1, "noticed_at": "2026-03-01T10:05:00Z"}, "must be a boolean"),
    ({"anomaly": True, "noticed_at": 1772359500}, "must be a string or null"),
    ({"noticed_at": "2026-03-01T10:05:00Z"}, "lacks `anomaly`"),
    ({"anomaly": True, "noticed_at": "2026-03-01T10:05:00Z", "confidence": 0.9}, "keys the contract does not"),
    ({"anomaly": True, "noticed_at": "2026-03-01T10:05:00Z" + " " * 10_000}, "characters long"),
    ({"anomaly": False, "noticed_at": "2026-03-01T10:05:00Z"}, "null or left out"),
    ([True], "must be a JSON object"),
    ("yes", "must be a JSON object"),
])
def test_detection_wrong_or_malformed_answers_fail_with_a_reason(faulted, answer, why):
    _, spec = faulted
    result = verdict(spec, answer, "detect", injected_at=INJECTED)
    assert result["passed"] is False
    assert any(why in c["detail"] for c in result["checks"] if not c["passed"]), result["checks"]


def test_a_false_alarm_on_a_control_fails(control):
    _, spec = control
    result = verdict(spec, {"anomaly": True, "noticed_at": "2026-03-01T10:02:00Z"}, "detect")
    assert not result["passed"] and "false alarm" in result["checks"][0]["detail"]


def test_detection_needs_the_injection_time_when_there_is_a_fault(faulted, control):
    _, spec = faulted
    with pytest.raises(InputError, match="--injected-at"):
        verdict(spec, {"anomaly": False}, "detect")
    with pytest.raises(InputError, match="RFC 3339"):
        verdict(spec, {"anomaly": False}, "detect", injected_at="yesterday")
    _, cspec = control  # nothing was injected: nothing to time against
    assert verdict(cspec, {"anomaly": False}, "detect")["passed"]


_json = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=30),
                     lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=12), inner, max_size=4),
                     max_leaves=12)
_answers = _json | st.fixed_dictionaries({"anomaly": _json}, optional={"noticed_at": _json})


@settings(max_examples=150, deadline=None)
@given(answer=_answers)
def test_any_answer_is_graded_never_crashes(faulted, control, answer):
    for spec, kw in ((faulted[1], {"injected_at": INJECTED}), (control[1], {})):
        for task in ("detect", "analyze", "localize") if "analyze" in spec["tasks"] else ("detect",):
            result = verdict(spec, answer, task, **kw)
            assert isinstance(result["passed"], bool) and 0.0 <= result["score"] <= 1.0
            if task == "detect" and result["passed"]:
                assert answer["anomaly"] is spec["detection"]["fault"]


# ---- analysis -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("answer", [
    {"system_level": "application", "fault_type": "misconfiguration"},
    {"system_level": "Application", "fault_type": "MISCONFIGURATION"},
    {"system_level": "  application\n", "fault_type": " Misconfiguration\t"},
])
def test_analysis_in_other_case_or_spacing_passes(faulted, answer):
    assert verdict(faulted[1], answer, "analyze")["passed"]


def test_label_normalisation():
    assert label_key(" Operating System ") == label_key("operating-system") == "operating_system"
    assert label_key("Network/Storage Issue") == "network_storage_issue"
    assert label_key("misconfig") != "misconfiguration"


@pytest.mark.parametrize("answer, why", [
    ({"system_level": "virtualization", "fault_type": "misconfiguration"}, "not the right one"),
    ({"system_level": "application", "fault_type": "bug"}, "is not a fault_type"),
    ({"system_level": "application"}, "lacks `fault_type`"),
    ({"system_level": "application", "fault_type": "misconfiguration", "why": "x"}, "keys the contract does not"),
    ({"system_level": ["application"], "fault_type": "misconfiguration"}, "must be a string"),
    ({"system_level": "application", "fault_type": "misconfiguration" * 1000}, "characters long"),
    (None, "must be a JSON object"),
])
def test_wrong_or_malformed_analysis_fails(faulted, answer, why):
    result = verdict(faulted[1], answer, "analyze")
    assert result["passed"] is False
    assert any(why in c["detail"] for c in result["checks"] if not c["passed"]), result["checks"]


# ---- localization -----------------------------------------------------------------------------------------------


def test_localization_grades_the_causes_only(faulted):
    result, spec = faulted
    found = objects(result.scenario)
    faulty = render(found.faulty, found)
    perfect = perfect_answer(result.scenario, faulty)
    assert verdict(spec, perfect, "localize")["passed"]
    assert verdict(spec, dict(perfect, propagations=[]), "localize")["passed"]
    wrong = verdict(spec, {"entities": [{"name": "shop/Deployment/redis", "contributing_factor": True}]}, "localize")
    assert not wrong["passed"]
    for malformed in ({"entities": "cart"}, {"causes": []}, {"entities": [], "propagations": {}}):
        graded = verdict(spec, malformed, "localize")
        assert graded["passed"] is False and graded["checks"][0]["id"] == "localization.answer"


# ---- mitigation of a control ------------------------------------------------------------------------------------


def test_a_control_mitigates_only_when_nothing_changed(control):
    result, spec = control
    found = objects(result.scenario)
    assert spec["mitigation"]["unchanged"]
    assert evaluate(spec, None, render(found.healthy, found), task="mitigate")["passed"]
    for edit in (lambda o: o["spec"]["template"]["spec"]["containers"][0].update(image="redis:6"),
                 lambda o: o["spec"]["template"]["spec"]["containers"][0]["env"][0].update(value="x:1")
                 if o["metadata"]["name"] == "cart" else None):
        for key in [k for k in found.healthy if k[0] == "Deployment"]:
            changed = {k: json.loads(json.dumps(v)) for k, v in found.healthy.items()}
            edit(changed[key])
            if changed[key] == found.healthy[key]:
                continue
            graded = evaluate(spec, None, render(changed, found), task="mitigate")
            assert not graded["passed"], key
            assert any(c["id"].startswith("unchanged.") and not c["passed"] for c in graded["checks"])


def test_a_faulted_scenario_keeps_its_mitigation(faulted):
    assert "unchanged" not in faulted[1]["mitigation"]


# ---- the prompt --------------------------------------------------------------------------------------------------


def _blocks(prompt: str) -> list[str]:
    return re.findall(r"```json\n(.*?)```", prompt, re.S)


def test_the_detection_prompt_says_nothing_is_wrong_and_matches_its_control():
    faulted = compiled(scenario("tasks detect, mitigate")).files["prompt.md"].decode()
    control = compiled(scenario("tasks detect, mitigate", fault=False)).files["prompt.md"].decode()
    assert faulted == control
    lowered = faulted.lower()
    for word in ("alerts have started", "firing", "fire", "incident", "something is wrong with"):
        assert word not in lowered, word


def test_without_detection_the_prompt_says_alerts_fire():
    prompt = compiled(scenario("tasks localize, mitigate")).files["prompt.md"].decode()
    assert "Alerts have started to fire" in prompt and "detection.json" not in prompt


def test_each_answer_file_the_grader_reads_is_the_one_the_prompt_names(faulted):
    result, spec = faulted
    prompt = result.files["prompt.md"].decode()
    for task, name in spec["answers"].items():
        section = prompt.split("## Task ")[[t for t in spec["tasks"]].index(task) + 1]
        assert f"`/tmp/agent/{name}`" in section, task


def test_the_prompts_example_answers_pass_the_grader(faulted, control):
    result, spec = faulted
    prompt = result.files["prompt.md"].decode()
    sections = dict(re.findall(r"## Task \d+: (\w+)\n(.*?)(?=\n## |\Z)", prompt, re.S))
    # detection: the first example is a detection; it passes when the fault came shortly before it
    yes, no = (json.loads(b) for b in _blocks(sections["detect"]))
    assert verdict(spec, yes, "detect", injected_at="2025-12-31T23:59:00Z")["passed"]
    assert not verdict(spec, no, "detect", injected_at=INJECTED)["passed"]  # there is a fault
    assert verdict(control[1], no, "detect")["passed"]
    # analysis: the shape, filled with the truth, in the vocabulary the prompt lists
    (shape,) = _blocks(sections["analyze"])
    truth = spec["analysis"]
    filled = json.loads(shape.replace("<system level>", truth["system_level"]).replace("<fault type>",
                                                                                     truth["fault_type"]))
    assert verdict(spec, filled, "analyze")["passed"]
    for key, words in truth["vocabulary"].items():
        line = next(l for l in sections["analyze"].split("\n- ") if l.startswith(f"`{key}`"))
        assert re.findall(r"`([a-z_]+)`", line.split("one of", 1)[1].split("\n\n")[0]) == words
    # localization: the shape, filled with the root cause
    (shape,) = _blocks(sections["localize"])
    filled = json.loads(shape.replace("<namespace>/<Kind>/<name>", "shop/Deployment/cart"))
    assert verdict(spec, filled, "localize")["passed"]


def test_the_prompt_passes_the_leakage_lint_at_every_hint_level():
    from itbench_dsl.backends.prompt import HINT_LEVELS, render_checked

    scen = compiled(scenario(FULL)).scenario
    for level in HINT_LEVELS:
        _, leaks = render_checked(scen, level)
        assert not leaks, (level, leaks)


# ---- the evaluator as a bundle runs it --------------------------------------------------------------------------


def test_the_standalone_evaluator_grades_a_work_folder(tmp_path, faulted):
    result, spec = faulted
    bundle = tmp_path / "bundle"
    bundle.mkdir()
    (bundle / "evaluator.py").write_bytes(result.files["evaluator.py"])
    found = objects(result.scenario)
    (tmp_path / "state.json").write_text(json.dumps(render(found.solved, found)))
    work = tmp_path / "agent"
    work.mkdir()
    (work / "detection.json").write_text(json.dumps({"anomaly": True, "noticed_at": "2026-03-01T10:01:00Z"}))
    (work / "diagnosis.json").write_text(json.dumps({"entities": [
        {"name": "shop/Deployment/cart", "contributing_factor": True}]}))

    def run(*args):
        return subprocess.run([sys.executable, "-S", str(bundle / "evaluator.py"), *args], capture_output=True,
                              text=True, timeout=120)

    proc = run("--agent-output", str(work), "--injected-at", INJECTED, "--state", str(tmp_path / "state.json"))
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert {t: v["passed"] for t, v in out["tasks"].items()} == {
        "detect": True, "localize": True, "analyze": False, "mitigate": True}
    assert "analysis.json" in out["tasks"]["analyze"]["checks"][0]["detail"]  # not written: failed, said why
    # one answer file cannot stand for several tasks
    proc = run("--agent-output", str(work / "detection.json"), "--injected-at", INJECTED)
    assert proc.returncode == 2 and "work folder" in proc.stderr and not proc.stdout
    proc = run("--task", "detect", "--agent-output", str(work / "detection.json"), "--injected-at", INJECTED)
    assert proc.returncode == 0 and json.loads(proc.stdout)["passed"]
    # the verdicts count per task in `itbench score`
    (tmp_path / "verdicts").mkdir()
    (tmp_path / "verdicts" / "run-1.json").write_text(json.dumps(out))
    report = aggregate(load_verdicts(tmp_path / "verdicts"), [1])
    assert sorted(r["task"] for r in report["overall"]) == ["analyze", "detect", "localize", "mitigate"]


def test_answer_files_are_read_as_agents_write_them(tmp_path, faulted):
    """A byte order mark is no content; a file that is not JSON, or says a key twice (parsers keep either
    one: an answer that hedges), fails its task with the reason, never refused as an unusable input."""
    result, _ = faulted
    (tmp_path / "evaluator.py").write_bytes(result.files["evaluator.py"])
    work = tmp_path / "agent"
    work.mkdir()

    def detect(text: str) -> dict:
        (work / "detection.json").write_text(text, encoding="utf-8")
        proc = subprocess.run([sys.executable, "-S", str(tmp_path / "evaluator.py"), "--task", "detect",
                               "--agent-output", str(work), "--injected-at", INJECTED],
                              capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, proc.stderr
        return json.loads(proc.stdout)

    right = '{"anomaly": true, "noticed_at": "2026-03-01T10:01:00Z"}'
    assert detect("\ufeff" + right)["passed"]
    hedged = detect('{"anomaly": false, "anomaly": true, "noticed_at": "2026-03-01T10:01:00Z"}')
    assert not hedged["passed"] and "twice" in hedged["checks"][0]["detail"]
    broken = detect(right[:-1])
    assert not broken["passed"] and "not valid JSON" in broken["checks"][0]["detail"]
    # a state that says a key twice is refused: it is the capture that is wrong
    ns: dict = {"__name__": "bundle_evaluator"}
    exec(compile(result.files["evaluator.py"], "evaluator.py", "exec"), ns)  # noqa: S102
    with pytest.raises(ValueError, match="twice"):
        ns["loads"]('{"resources": {"items": []}, "resources": {"items": [1]}}')


def test_the_control_needs_no_solution_lint():
    check = checking.check_source(scenario("tasks detect, mitigate", fault=False).encode(), "s.itb")
    codes = [d.code for d in check.diagnostics]
    assert "W2004" not in codes and not [c for c in codes if c.startswith("E")], codes


def test_a_faulted_scenario_with_tasks_checks_clean():
    """Its self-validation grades the tasks' adversarial corpus (corpus.py) as it must."""
    check = checking.check_source(scenario(FULL).encode(), "s.itb")
    assert not [d for d in check.diagnostics if d.code.startswith("E")], [d.message for d in check.diagnostics]
