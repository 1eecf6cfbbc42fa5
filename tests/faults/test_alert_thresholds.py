"""W2019: an expected latency alert whose threshold the faults' delay does not cross, the comparison the
generators skip a variant by (faults/alerting.latency_short_of_alerts)."""

from __future__ import annotations

from pathlib import Path

from itbench_dsl.checking import check_source

FIXTURE = Path(__file__).resolve().parents[1] / "cases" / "errors" / "W2019-delay-below-latency-threshold" / "input.itb"


def _check(delay: str):
    text = FIXTURE.read_text().replace("delay = 1s", f"delay = {delay}")
    return check_source(text.encode(), "input.itb")


def test_a_delay_below_the_threshold_is_located_at_its_alert():
    checked = _check("1s")
    found = [d for d in checked.diagnostics if d.code == "W2019"]
    assert len(found) == 1, [str(d) for d in checked.diagnostics]
    assert found[0].span.line == 21  # the `alert HighRequestLatency` statement
    assert "1.5s" in found[0].message and "add 1s" in found[0].message


def test_a_delay_at_the_threshold_still_does_not_cross_it():
    assert any(d.code == "W2019" for d in _check("1500ms").diagnostics)


def test_a_delay_above_the_threshold_passes():
    checked = _check("3s")
    assert checked.result.scenario is not None
    assert not [d for d in checked.diagnostics if d.code == "W2019"], [d.message for d in checked.diagnostics]


JVM = Path(__file__).resolve().parents[2] / "scenarios" / "sre" / "otel-ad-jvm-latency-getads.itb"


def _jvm(latency: str):
    text = JVM.read_text()
    assert "latency = 3000ms" in text
    return check_source(text.replace("latency = 3000ms", f"latency = {latency}").encode(), "jvm.itb")


def test_a_jvm_latency_below_the_threshold_is_reported():
    """A JVMChaos `latency` sleeps once per call of its method: a fixed delay like HTTPChaos's, compared alike."""
    found = [d for d in _jvm("100ms").diagnostics if d.code == "W2019"]
    assert found and all("add 0.1s" in d.message for d in found), [str(d) for d in found]


def test_a_jvm_latency_above_the_threshold_passes():
    assert not [d for d in _jvm("3000ms").diagnostics if d.code == "W2019"]
