"""Every mitigate verdict carries `repair` (docs/evaluator.md): doing nothing on an incident scores 0, the
solved state 1, and a control (nothing broken) scores whether its verdict passes."""

from __future__ import annotations

import pytest

from tests.runtime.test_evaluator import SCENARIOS, derived, mitigate

GRADED = sorted(name for name, path in SCENARIOS.items() if "ciso" not in path.parts)


@pytest.mark.parametrize("name", GRADED)
def test_every_mitigate_verdict_carries_repair(name):
    faulty, solved = mitigate(name, derived(name, "faulty")), mitigate(name, derived(name, "solved"))
    assert "repair" in faulty["metrics"] and "repair" in solved["metrics"], name
    assert solved["passed"] and solved["metrics"]["repair"] == 1.0, name
    if faulty["passed"]:  # a control or false alarm: nothing broken, doing nothing is right
        assert faulty["metrics"]["repair"] == 1.0, name


def test_a_fault_whose_field_change_the_statement_decides_still_has_repair():
    name = "otel-cart-service-target-port"
    verdict = mitigate(name, derived(name, "faulty"))
    assert not verdict["passed"] and verdict["metrics"]["repair"] == 0.0
