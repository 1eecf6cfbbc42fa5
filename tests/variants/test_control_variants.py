"""Control variants (variants/builtin/control.py) are graded and prompted as controls whatever their parent
declared: a property over a sample of the library's SRE scenarios, with and without a `tasks` statement.

Every control variant poses only what a control can (no diagnose, localize or analyze), checks that nothing
was changed (`unchanged.*`), fails a healthy state with a workload's image and command replaced, passes the
healthy state, and its prompt claims no incident. A control written by hand without `tasks` is the same."""

from __future__ import annotations

import functools
import re
from pathlib import Path

import pytest

from itbench_dsl import tasks as task_types
from itbench_dsl import variants as gen
from itbench_dsl.analysis.corpus import all_cases
from itbench_dsl.analysis.states import derive
from itbench_dsl.backends.evaluator import evaluator_spec
from itbench_dsl.compiler import emit
from itbench_dsl.diagnostics import Diagnostics
from itbench_dsl.runtime.evaluator import evaluate

REPO = Path(__file__).resolve().parents[2]
SRE = sorted((REPO / "scenarios" / "sre").glob("*.itb"))


def _declares_tasks(path: Path) -> bool:
    return re.search(r"(?m)^\s*tasks\s", path.read_text("utf-8")) is not None


WITHOUT = [p for p in SRE if not _declares_tasks(p)]
WITH = [p for p in SRE if _declares_tasks(p)]
SAMPLE = WITHOUT[::9] + WITH[::5]  # every ninth scenario without `tasks`, every fifth with
# what a prompt says only when there is an incident
CLAIMS = re.compile(r"Alerts have started to fire|started to fire|(?<!anything )is wrong with the application|the incident|"
                    r"Find what caused|caused the incident|how it spread", re.IGNORECASE)


@functools.lru_cache(maxsize=None)
def control_of(path: Path) -> gen.Generated | None:
    diags = Diagnostics()
    loaded = gen.load_input(path.read_bytes(), str(path.relative_to(REPO)), diags)
    assert loaded is not None, [d.message for d in diags.items]
    result = gen.run([loaded], [("control", gen.load_generator("control"))], 0, None)
    return result.variants[0] if result.variants else None


def test_the_sample_holds_scenarios_with_and_without_tasks():
    assert len(WITHOUT) >= 20 and WITH
    assert any(p in SAMPLE for p in WITHOUT) and any(p in SAMPLE for p in WITH)


@pytest.mark.parametrize("path", SAMPLE, ids=lambda p: p.stem)
def test_a_control_variant_is_graded_and_prompted_as_a_control(path: Path):
    variant = control_of(path)
    if variant is None:
        pytest.skip("no control of this scenario (the generator says why)")
    scenario = variant.scenario
    assert task_types.is_control(scenario)
    posed = task_types.posed(scenario)
    assert posed and all(task_types.TASK_TYPES[t].control for t in posed), posed
    assert "diagnose" not in posed
    spec = evaluator_spec(scenario)
    assert spec["tasks"] == posed
    unchanged = (spec.get("mitigation") or {}).get("unchanged")
    assert unchanged, "a control's mitigation checks that nothing changed"
    # the prompt claims no incident
    _, files = emit(scenario, Diagnostics(), variant.file)
    prompt = files["prompt.md"].decode("utf-8")
    assert not CLAIMS.search(prompt), CLAIMS.search(prompt).group(0)
    # the healthy state passes; one with a workload's image and command replaced fails on `unchanged.*`
    healthy = derive(scenario)["healthy"]
    assert evaluate(spec, None, healthy, task="mitigate")["passed"] is True
    _, corpus = all_cases(scenario)
    tampered = [c for c in corpus if c.name.startswith("a control where")]
    assert tampered, "the corpus attacks the control with a changed workload"
    assert any(c.want == "fail" for c in tampered)
    for case in tampered:
        ok, what = case.run(spec)
        assert ok, what
        if case.want == "fail":  # a change, read by the control's own check or the whole application's
            assert any(c.startswith(("unchanged.", "health.application")) for c in case.failed), case.failed


def test_a_control_is_the_same_whether_or_not_its_parent_declared_tasks(tmp_path):
    """The parent's `tasks mitigate` or no `tasks` at all: one control, graded and prompted alike."""
    source = (REPO / "scenarios/sre/shop-cart-modified-env.itb").read_text("utf-8")
    assert not re.search(r"(?m)^\s*tasks\s", source)
    declared = source.replace("  complexity medium\n", "  complexity medium\n  tasks mitigate\n", 1)
    assert declared != source
    specs, prompts = [], []
    for k, text in enumerate((source, declared)):
        path = tmp_path / f"in{k}.itb"
        path.write_text(text, "utf-8")
        diags = Diagnostics()
        loaded = gen.load_input(path.read_bytes(), "in.itb", diags)
        assert loaded is not None, [d.message for d in diags.items]
        (variant,) = gen.run([loaded], [("control", gen.load_generator("control"))], 0, None).variants
        spec = evaluator_spec(variant.scenario)
        specs.append(spec)
        prompts.append(emit(variant.scenario, Diagnostics(), variant.file)[1]["prompt.md"])
    assert specs[0] == specs[1]
    assert prompts[0] == prompts[1]


def test_a_hand_written_control_without_tasks_poses_mitigate_and_checks_nothing_changed(tmp_path):
    """The checker's default for an SRE control (tasks.CONTROL_DEFAULT): no diagnose, `unchanged.*` checks,
    no incident claimed, and `itbench explain` names no empty root cause."""
    from itbench_dsl.checking import check_source

    variant = control_of(REPO / "scenarios/sre/shop-cart-modified-env.itb")
    text = gen.variant_text(variant.document)
    assert "\n  tasks mitigate\n" in text
    checked = check_source(text.replace("\n  tasks mitigate\n", "\n", 1).encode(), "hand.itb", lint=False)
    assert not checked.has_errors, [d.message for d in checked.errors()]
    scenario = checked.scenario
    assert task_types.posed(scenario) == ["mitigate"]
    spec = evaluator_spec(scenario)
    assert spec["tasks"] == ["mitigate"] and spec["mitigation"]["unchanged"]
    prompt = emit(scenario, Diagnostics(), "hand.itb")[1]["prompt.md"].decode()
    assert not CLAIMS.search(prompt)
    from click.testing import CliRunner

    from itbench_dsl.cli import cli

    path = tmp_path / "hand.itb"
    path.write_text(text.replace("\n  tasks mitigate\n", "\n", 1), "utf-8")
    result = CliRunner().invoke(cli, ["explain", str(path)])
    assert result.exit_code == 0, result.output
    assert "unchanged." in result.output and not re.search(r"named exactly: *$", result.output, re.MULTILINE)


def test_a_finops_control_keeps_what_itbench_asks():
    """ITBench's scenario 37 (a FinOps false alarm, no `tasks`): still diagnose and mitigate."""
    diags = Diagnostics()
    path = REPO / "scenarios/finops/otel-autoscaling-spend-false-alarm.itb"
    loaded = gen.load_input(path.read_bytes(), "x.itb", diags)
    assert loaded is not None and task_types.posed(loaded.scenario) == ["diagnose", "mitigate"]
