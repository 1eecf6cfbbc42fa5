"""ITBench's v2 ground truth of a scenario lists its own alerts and solutions; a port of an ITBench scenario
(`itbench_id`) keeps ITBench's file, whose lists are the fault library's."""

from __future__ import annotations

import yaml

from support.compiling import SCENARIOS, compile_ok


def _v2_alerts(text: str) -> list[str]:
    files = compile_ok(text).files
    return [a["name"] for a in yaml.safe_load(files["itbench/groundtruth.yaml"])["spec"]["alerts"]]


def _expected(text: str) -> set[str]:
    return {line.split()[1] for line in text.splitlines() if line.strip().startswith("alert ") and " on " in line
            and "not firing" not in line and " on group " not in line}


def test_an_expected_alert_is_in_the_v2_file():
    text = (SCENARIOS / "sre" / "otel-checkout-nonexistent-image.itb").read_text("utf-8")
    alerts = _v2_alerts(text)
    assert alerts == ["HighRequestErrorRate"]  # the scenario's `expect`, not the library's KubePodNotReady


def test_the_v2_solutions_are_the_scenarios_own():
    """The FinOps author restores the limit to 300Mi: that is the v2 solution, not the library's `rollout undo`."""
    text = (SCENARIOS / "finops" / "otel-ad-missing-memory-limit.itb").read_text("utf-8")
    spec = yaml.safe_load(compile_ok(text).files["itbench/groundtruth.yaml"])["spec"]
    assert [a["name"] for a in spec["alerts"]] == ["MemorySpend"]
    assert spec["solutions"] == [[{"steps": [{
        "command": "kubectl -n otel-demo set resources deployment/ad -c ad --limits=memory=300Mi",
        "text": "Set the memory limit back to 300Mi"}]}]]


def test_a_port_keeps_itbenchs_lists():
    """Scenario 40's port: ITBench's v2 file lists the library's alert and solutions, and so does the port's."""
    text = (SCENARIOS / "sre" / "otel-valkey-cart-out-of-memory.itb").read_text("utf-8")
    spec = yaml.safe_load(compile_ok(text).files["itbench/groundtruth.yaml"])["spec"]
    assert [a["name"] for a in spec["alerts"]] == ["KubePodCrashLooping"]
    assert spec["solutions"][0][0]["steps"][0]["command"] == "kubectl -n otel-demo rollout undo deployment/valkey-cart"
    stated = text.replace("  metadata {\n    itbench_id = 40\n  }\n", "")
    assert stated != text
    own = yaml.safe_load(compile_ok(stated).files["itbench/groundtruth.yaml"])["spec"]
    assert "HighRequestErrorRate" in [a["name"] for a in own["alerts"]]  # the scenario's own, on its groups
    assert own["solutions"][0][0]["steps"][0]["text"].startswith("Identify and remove the storage-filler")


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
