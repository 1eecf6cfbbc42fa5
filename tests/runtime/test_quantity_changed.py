"""`accept: changed` on a quantity (docs/evaluator.md, "A changed quantity"): a memory limit the fault set too low
is undone only when moved to the healthy side of the fault far enough (at least the healthy value; without one,
twice the fault's value, or no limit at all), not by any other value: 10Mi -> 11Mi still OOM-kills.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))
TESTS = HERE.parent
if str(TESTS) not in sys.path:
    sys.path.insert(0, str(TESTS))

from test_evaluator import derived, failed, mitigate, obj  # noqa: E402

from itbench_dsl.runtime import evaluator as rt  # noqa: E402

OOM = "sregym-resource-request-too-small"  # mongodb-rate's memory limit set to 10Mi (healthy: none)
LIMIT = ["spec", "template", "spec", "containers", ["name", "hotel-reserv-rate-mongo"], "resources", "limits", "memory"]


def _with_limit(value):
    state = derived(OOM, "solved")
    container = next(c for c in obj(state, "Deployment", "mongodb-rate")["spec"]["template"]["spec"]["containers"]
                     if c["name"] == "hotel-reserv-rate-mongo")
    resources = container.setdefault("resources", {})
    if value is None:
        resources.get("limits", {}).pop("memory", None)
    else:
        resources.setdefault("limits", {})["memory"] = value
    return state


@pytest.mark.parametrize("value", ["11Mi", "15Mi", "19Mi", "5Mi"])
def test_a_limit_barely_raised_or_lowered_leaves_the_fault(value):
    verdict = mitigate(OOM, _with_limit(value))
    assert not verdict["passed"]
    assert any(c.startswith("fields.") for c in failed(verdict))


@pytest.mark.parametrize("value", [None, "20Mi", "1Gi"])
def test_a_limit_removed_or_raised_far_enough_passes(value):
    assert mitigate(OOM, _with_limit(value))["passed"]


def change(healthy, faulty, path=LIMIT):
    out = {"path": path, "faulty": faulty, "accept": {"op": "changed", "value": "healthy"}}
    if healthy is not None:
        out["healthy"] = healthy
    return out


def test_the_healthy_value_known_is_the_bar():
    c = change("256Mi", "128Mi")
    assert rt.quantity_moved(LIMIT, "200Mi", c) is False
    assert rt.quantity_moved(LIMIT, "256Mi", c) is True
    assert rt.quantity_moved(LIMIT, "1Gi", c) is True
    assert rt.quantity_moved(LIMIT, rt.MISSING, c) is True  # no limit is no too-low limit
    assert rt.quantity_moved(LIMIT, "lots", c) is False


def test_a_request_set_too_high_is_undone_at_or_below_healthy():
    path = [*LIMIT[:-2], "requests", "cpu"]
    c = change("100m", "8")
    assert rt.quantity_moved(path, "7", c) is False
    assert rt.quantity_moved(path, "100m", c) is True
    assert rt.quantity_moved(path, rt.MISSING, c) is True
    no_healthy = change(None, "8")
    assert rt.quantity_moved(path, "6", no_healthy) is False
    assert rt.quantity_moved(path, "4", no_healthy) is True


def test_replicas_count_from_the_healthy_value():
    c = change(3, 0, ["spec", "replicas"])
    assert rt.quantity_moved(["spec", "replicas"], 1, c) is False
    assert rt.quantity_moved(["spec", "replicas"], 3, c) is True
    assert rt.quantity_moved(["spec", "replicas"], 5, c) is True


def test_no_quantity_is_left_to_the_plain_changed():
    probe = ["spec", "template", "spec", "containers", ["name", "x"], "readinessProbe"]
    assert rt.quantity_moved(probe, {"tcpSocket": {"port": 1}}, change({"tcpSocket": {"port": 2}}, {"x": 1}, probe)) is None


INSUFFICIENT = "otel-postgresql-insufficient-resources"  # postgresql's cpu limit set to 5m (healthy: none)


def _with_cpu_limit(value):
    state = derived(INSUFFICIENT, "solved")
    container = next(c for c in obj(state, "Deployment", "postgresql")["spec"]["template"]["spec"]["containers"]
                     if c["name"] == "postgresql")
    container.setdefault("resources", {}).setdefault("limits", {})["cpu"] = value
    return state


@pytest.mark.parametrize("value, passed", [("1", True), ("10m", True), ("9m", False), ("5m", False)])
def test_at_least_a_healthy_limit_that_was_absent_is_twice_the_fault(value, passed):
    """`insufficient_resources` accepts limits at least the healthy ones; where the healthy container had no
    limit, absence tells the direction as for `changed`: twice the fault's value, not a comparison with null."""
    verdict = mitigate(INSUFFICIENT, _with_cpu_limit(value))
    assert verdict["passed"] is passed, failed(verdict)
    at_least = {"path": LIMIT, "faulty": "10Mi", "accept": {"op": ">=", "value": "healthy"}}
    assert rt.quantity_moved(LIMIT, "20Mi", at_least) is True
    assert rt.quantity_moved(LIMIT, "19Mi", at_least) is False
