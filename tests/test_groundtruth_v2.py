"""ITBench's v2 ground truth lists the alerts a scenario expects, and those ITBench's fault library says its faults
raise that the documented monitoring stack defines: every alert it names fires (tests/test_alert_rules.py checks
the library)."""

from __future__ import annotations

import yaml

from conftest import SCENARIOS, compile_ok


def _v2_alerts(text: str) -> list[str]:
    files = compile_ok(text).files
    return [a["name"] for a in yaml.safe_load(files["itbench/groundtruth.yaml"])["spec"]["alerts"]]


def _expected(text: str) -> set[str]:
    return {line.split()[1] for line in text.splitlines() if line.strip().startswith("alert ") and " on " in line
            and "not firing" not in line and " on group " not in line}


def test_an_expected_alert_is_in_the_v2_file():
    text = (SCENARIOS / "sre" / "otel-checkout-nonexistent-image.itb").read_text("utf-8")
    alerts = _v2_alerts(text)
    assert "HighRequestErrorRate" in alerts  # the scenario's `expect`
    assert "KubePodNotReady" in alerts  # ITBench's library says the fault raises it, and kube-prometheus-stack has it
    assert alerts == sorted(set(alerts))


def test_a_library_alert_no_rule_defines_is_not_listed():
    """The fault library says scaling a workload to zero raises HighRequestErrorRate; this scenario does not
    expect it, so no rule of it ships, the monitoring stack has none, and it would never fire."""
    text = (SCENARIOS / "sre" / "otel-accounting-scaled-to-zero.itb").read_text("utf-8")
    assert "HighRequestErrorRate" not in _expected(text)
    assert "HighRequestErrorRate" not in _v2_alerts(text)


def test_an_inline_topology_lists_its_expected_alerts():
    text = (SCENARIOS / "sre" / "shop-cart-modified-env.itb").read_text("utf-8")
    assert _expected(text) and _expected(text) <= set(_v2_alerts(text))


def test_an_alert_on_a_v1_group_is_not_a_v2_alert():
    """`alert NAME on group "ID"` records ITBench's v1 causal graph, which the v2 file does not carry."""
    text = (SCENARIOS / "sre" / "bookinfo-ambient-mode-disabled.itb").read_text("utf-8")
    assert "NoRequestsOpened" not in _v2_alerts(text)
