"""W2021: a `mitigate` grading that only an autoscaler's scale-in passes, graded before its scale-down
stabilization window has passed (faults/autoscaling.py)."""

from __future__ import annotations

from pathlib import Path

from itbench_dsl.checking import check_source
from itbench_dsl.faults.autoscaling import DEFAULT_STABILIZATION, stabilization
from itbench_dsl import ir

FIXTURE = Path(__file__).resolve().parents[1] / "cases" / "errors" / "W2021-hpa-graded-before-scale-in" / "input.itb"
OPTIMUM = '    optimal deployment "frontend" spec.replicas = 1\n'


def _w2021(text: str):
    checked = check_source(text.encode(), "input.itb")
    assert checked.result.scenario is not None, [str(d) for d in checked.diagnostics]
    return [d for d in checked.diagnostics if d.code == "W2021"]


ALERT = '    alert KubeHpaMaxedOut on hpa "frontend"\n'
MEMORY = '    alert MemorySpend on deployment "frontend"\n'


def test_no_declared_window_is_reported_at_the_check_that_needs_the_longest():
    # KubeHpaMaxedOut resolves a scrape and an evaluation after the scale-in: its statement, and 8m
    found = _w2021(FIXTURE.read_text())
    assert len(found) == 1 and found[0].span.line == 24, [str(d) for d in found]
    assert "KubeHpaMaxedOut" in found[0].message and "within 8m" in found[0].help


def test_the_replicas_optimum_alone_needs_the_stabilization_window_and_a_sync():
    text = FIXTURE.read_text().replace(ALERT, MEMORY)
    found = _w2021(text)
    assert len(found) == 1 and found[0].span.line == 26 and "within 6m" in found[0].help, [str(d) for d in found]
    window = text.replace(OPTIMUM, OPTIMUM + '    mitigated when within 5m {\n      deployment "frontend" ready\n    }\n')
    found = _w2021(window)
    assert len(found) == 1 and found[0].span.line == 27  # at the declared window
    assert not _w2021(window.replace("within 5m", "within 6m"))


def test_the_autoscaler_alert_alone_needs_the_window_too():
    found = _w2021(FIXTURE.read_text().replace(OPTIMUM, ""))
    assert len(found) == 1 and "KubeHpaMaxedOut" in found[0].message and found[0].span.line == 24
    assert not _w2021(FIXTURE.read_text().replace(OPTIMUM, OPTIMUM + '    mitigated when within 8m {\n'
                                                  '      deployment "frontend" ready\n    }\n'))


def test_a_grading_of_the_autoscaler_alone_is_not_reported():
    text = FIXTURE.read_text().replace(OPTIMUM, "").replace(ALERT, MEMORY)
    assert not _w2021(text)


def test_the_window_is_read_from_the_deployed_autoscaler():
    ref = ir.ObjectRef("autoscaling/v2", "HorizontalPodAutoscaler", "shop", "web")
    hpa = {"kind": "HorizontalPodAutoscaler", "metadata": {"name": "web", "namespace": "shop"}, "spec": {}}
    assert stabilization([hpa], ref) == DEFAULT_STABILIZATION
    hpa["spec"]["behavior"] = {"scaleDown": {"stabilizationWindowSeconds": 900}}
    assert stabilization([hpa], ref) == 900
    hpa["spec"]["behavior"]["scaleDown"]["selectPolicy"] = "Disabled"
    assert stabilization([hpa], ref) is None
