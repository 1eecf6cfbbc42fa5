"""Every mitigate verdict carries `repair` (docs/evaluator.md): doing nothing on an incident scores 0, the
solved state 1, and a control (nothing broken) scores whether its verdict passes."""

from __future__ import annotations

import pytest

from itbench_dsl.runtime.evaluator import REPAIR_CHECKS
from itbench_dsl.backends.decoys import decoys
from tests.runtime.test_evaluator import SCENARIOS, bundle, derived, evaluator, mitigate

GRADED = sorted(name for name, path in SCENARIOS.items() if "ciso" not in path.parts)


@pytest.mark.parametrize("name", GRADED)
def test_every_mitigate_verdict_carries_repair(name):
    if "mitigate" not in (evaluator(name)["SPEC"].get("tasks") or ["mitigate"]):
        pytest.skip("the scenario poses no mitigation (its fault is the agent's to diagnose only)")
    faulty, solved = mitigate(name, derived(name, "faulty")), mitigate(name, derived(name, "solved"))
    assert "repair" in faulty["metrics"] and "repair" in solved["metrics"], name
    assert solved["passed"] and solved["metrics"]["repair"] == 1.0, name
    if faulty["passed"]:  # a control or false alarm: nothing broken, doing nothing is right
        assert faulty["metrics"]["repair"] == 1.0, name
    else:  # the derived faulty state holds every effect of the fault: no check of what it broke passes there
        mended = [c["id"] for c in faulty["checks"] if c["id"].startswith(REPAIR_CHECKS) and c["passed"]
                  and c["id"] in {d["id"] for d in solved["checks"]}]
        assert faulty["metrics"]["repair"] == 0.0, (name, mended)


def test_a_fault_whose_field_change_the_statement_decides_still_has_repair():
    name = "otel-cart-service-target-port"
    verdict = mitigate(name, derived(name, "faulty"))
    assert not verdict["passed"] and verdict["metrics"]["repair"] == 0.0


def test_a_quota_fault_leaves_the_namespace_at_its_quota_and_the_scale_out_refused():
    name = "otel-checkout-insufficient-quota"
    faulty = derived(name, "faulty")
    items = faulty["resources"]["items"]
    made = {o["metadata"]["name"] for o in decoys(bundle(name)[0])}
    quota = next(o for o in items if o["kind"] == "ResourceQuota" and o["metadata"]["name"] not in made)  # not a decoy
    checkout = next(o for o in items if o["kind"] == "Deployment" and o["metadata"]["name"] == "checkout")
    assert checkout["spec"]["replicas"] == 2 and checkout["status"]["replicas"] == 1  # the scale-out, refused
    assert sum(o["kind"] == "Pod" for o in items) == int(quota["spec"]["hard"]["pods"])
    assert mitigate(name, faulty)["metrics"]["repair"] == 0.0


def test_a_lowered_autoscaler_target_keeps_its_workload_at_the_maximum():
    name = "otel-frontend-hpa-misconfigured"
    items = derived(name, "faulty")["resources"]["items"]
    frontend = next(o for o in items if o["kind"] == "Deployment" and o["metadata"]["name"] == "frontend")
    hpa = next(o for o in items if o["kind"] == "HorizontalPodAutoscaler")
    assert frontend["spec"]["replicas"] == hpa["spec"]["maxReplicas"]
    solved = next(o for o in derived(name, "solved")["resources"]["items"]
                  if o["kind"] == "Deployment" and o["metadata"]["name"] == "frontend")
    assert solved["spec"]["replicas"] == 1  # the restored target scales it back
