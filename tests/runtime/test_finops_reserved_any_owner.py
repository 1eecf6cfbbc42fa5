"""FinOps `finops.reserved` counts every running pod of the application's program in its namespaces, whatever
owns it: the waste the fault added kept as a Job's, a DaemonSet's or bare unlabelled pods beside the fixed
autoscaler is reserved by the scheduler all the same and fails; a pod of another program (a probe) and
finished pods do not count."""

from __future__ import annotations

import copy

from test_evaluator import derived, run

HPA = "otel-frontend-hpa-misconfigured"


def reserved(state: dict) -> dict:
    verdict = run(HPA, None, state, task="mitigate")
    return next(c for c in verdict["checks"] if c["id"] == "finops.reserved")


def kept(owner, phase="Running", image=None) -> dict:
    """The solved state beside nine copies of a frontend pod (the replicas the faulty autoscaler added),
    owned by `owner` (None: bare), labelled for no Service."""
    state = derived(HPA, "solved")
    items = state["resources"]["items"]
    pod = next(o for o in items if o["kind"] == "Pod" and o["metadata"]["name"].startswith("frontend-")
               and not o["metadata"]["name"].startswith("frontend-proxy"))
    for k in range(9):
        p = copy.deepcopy(pod)
        p["metadata"] = {"name": f"warm-pool-{k:05d}", "namespace": pod["metadata"]["namespace"], "uid": f"u-{k}",
                         "labels": {"job-name": "warm-pool"} if owner == "Job" else {}}
        if owner:
            p["metadata"]["ownerReferences"] = [{"kind": owner, "name": "warm-pool", "uid": "u-o", "controller": True,
                                                 "apiVersion": "batch/v1" if owner == "Job" else "apps/v1"}]
        if image:
            for c in p["spec"]["containers"]:
                c["image"], c["command"] = image, ["sleep", "3600"]
        p["status"] = {**p.get("status", {}), "phase": phase}
        items.append(p)
    return state


def test_the_waste_kept_as_pods_of_another_controller_fails():
    for owner in ("Job", "DaemonSet", None):
        check = reserved(kept(owner))
        assert not check["passed"], (owner, check)
        assert "warm-pool-00000" in check["detail"]


def test_another_tag_of_the_program_is_the_program():
    assert not reserved(kept("Job", image="ghcr.io/open-telemetry/demo:9.9.9-frontend"))["passed"]


def test_finished_pods_and_pods_of_another_program_pass():
    assert reserved(derived(HPA, "solved"))["passed"]
    assert reserved(kept("Job", phase="Succeeded"))["passed"]
    assert reserved(kept("Job", image="docker.io/curlimages/curl:8.8.0"))["passed"]
