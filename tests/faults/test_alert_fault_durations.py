"""W2020: an expected alert its faults stop acting too soon to raise (a one-shot experiment shorter than the alert's
rule needs), the comparison the generators skip a variant by (faults/alerting.alerts_outlasting_faults)."""

from __future__ import annotations

from pathlib import Path

from itbench_dsl import variants as gen
from itbench_dsl.alerts import alert_holds, rule_hold
from itbench_dsl.checking import check_source
from itbench_dsl.diagnostics import Diagnostics

FIXTURE = Path(__file__).resolve().parents[1] / "cases" / "errors" / "W2020-fault-ends-before-alert" / "input.itb"


def _text(duration: str, extra: str = "") -> str:
    return FIXTURE.read_text().replace("    duration = 30s\n", f"    duration = {duration}\n{extra}")


def _w2020(text: str):
    checked = check_source(text.encode(), "input.itb")
    assert checked.result.scenario is not None, [str(d) for d in checked.diagnostics]
    return [d for d in checked.diagnostics if d.code == "W2020"]


def test_a_one_shot_abort_shorter_than_the_rule_needs_is_located_at_its_fault():
    found = _w2020(_text("30s"))
    assert len(found) == 1
    assert found[0].span.line == 11  # the `fault http_chaos` statement
    assert "must hold 3m" in found[0].message and "`duration = 30s`" in found[0].message


def test_a_fault_whose_window_carries_it_through_the_for_is_not_reported():
    # 1m of errors stays 2m in `rate(...[2m])`: the condition holds 3m, the rule's `for`
    assert not _w2020(_text("1m"))
    assert not _w2020(_text("15m"))


def test_a_fault_without_duration_acts_until_deleted():
    assert not _w2020(FIXTURE.read_text().replace("    duration = 30s\n", ""))


def test_a_schedule_whose_bursts_the_window_joins_is_not_reported_and_one_with_long_gaps_is():
    assert not _w2020(_text("30s", "    every = 1m\n"))
    assert _w2020(_text("30s", "    every = 30m\n"))


def test_an_absence_rule_needs_a_whole_window_first():
    hold = rule_hold("sum(rate(x_total{namespace=\"{namespace}\"}[5m])) == 0\n", "5m")
    assert hold.absence and hold.window == 300 and hold.longest(9 * 60) < hold.for_ <= hold.longest(10 * 60)
    rising = rule_hold("sum(rate(x_total[2m])) > 0", "3m")
    assert not rising.absence and rising.longest(60) >= rising.for_ > rising.longest(59)


def test_a_rule_over_a_recorded_series_is_not_judged():
    assert rule_hold("sum(a:b_cost:avg5m{namespace=\"x\"}) > 3", "1m") is None
    assert alert_holds("CPUSpend", "opentelemetry-demo") is None
    assert rule_hold('sum(rate(x{path="a:b"}[1m:10s])) > 0', "1m") == rule_hold("sum(rate(x[1m])) > 0", "1m")


def test_sweep_skips_the_variants_whose_fault_ends_too_soon_and_counts_them(tmp_path):
    text = _text("param(duration)").replace("  tasks diagnose\n", "  tasks diagnose\n  param duration in [30s, 10m] "
                                                                  "default 10m\n")
    path = tmp_path / "short.itb"
    path.write_text(text)
    parent = gen.load_input(path.read_bytes(), str(path), Diagnostics())
    assert parent is not None
    result = gen.run([parent], [("sweep", gen.load_generator("sweep"))], 1)
    assert not result.variants
    assert result.unraisable == 1 and "end too soon to raise" in result.skips[0].reason
