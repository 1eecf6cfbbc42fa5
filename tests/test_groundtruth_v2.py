"""ITBench's v2 ground truth lists the alerts a scenario expects: the one list the prompt, the v1 ground truth
and the evaluator name, each with a rule the bundle ships (tests/test_alert_rules.py checks the library)."""

from __future__ import annotations

import yaml

from conftest import SCENARIOS, compile_ok


def _v2_alerts(text: str) -> list[str]:
    files = compile_ok(text).files
    return [a["name"] for a in yaml.safe_load(files["itbench/groundtruth.yaml"])["spec"]["alerts"]]


def _expected(text: str) -> set[str]:
    return {line.split()[1] for line in text.splitlines() if line.strip().startswith("alert ") and " on " in line
            and "not firing" not in line}


def test_an_expected_alert_is_in_the_v2_file_and_no_other():
    text = (SCENARIOS / "sre" / "otel-checkout-nonexistent-image.itb").read_text("utf-8")
    alerts = _v2_alerts(text)
    assert "HighRequestErrorRate" in alerts  # the scenario's `expect`
    # ITBench's library says the fault raises KubePodNotReady; the scenario does not expect it, so no rule of it
    # ships and the v2 file does not name it
    assert "KubePodNotReady" not in alerts
    assert alerts == sorted(_expected(text))


def test_an_inline_topology_lists_its_expected_alerts():
    text = (SCENARIOS / "sre" / "shop-cart-modified-env.itb").read_text("utf-8")
    assert _expected(text) and set(_v2_alerts(text)) == _expected(text)


def test_an_alert_on_a_v1_group_is_a_v2_alert_too():
    """`alert NAME on group "ID"` is expected like any other: its rule ships, and both ground truths name it."""
    text = (SCENARIOS / "sre" / "bookinfo-ambient-mode-disabled.itb").read_text("utf-8")
    assert "NoRequestsOpened" in _expected(text) and "NoRequestsOpened" in _v2_alerts(text)
