"""FinOps: a pod-level limit (`spec.resources`, PodLevelResources) is the limit the pod's containers run under.

`finops.proximity` and `finops.spend` read it as `finops.reserved` does (state.pod_level, state.pod_bounded): a
missing memory limit fixed at the pod level passes, a pod-level limit away from the optimum or a pod-level
request that reserves more than the healthy containers did fails.
"""

from __future__ import annotations

from test_evaluator import derived, obj, run

LIMIT = "otel-ad-missing-memory-limit"


def at_pod_level(memory: str, request: str | None = None) -> dict:
    """The solved state with the ad container's resources moved to the pod level (its Deployment and pods)."""
    state = derived(LIMIT, "solved")
    for item in state["resources"]["items"]:
        if item["kind"] == "Deployment" and item["metadata"]["name"] == "ad":
            spec, pod = item["spec"]["template"]["spec"], False
        elif item["kind"] == "Pod" and item["metadata"]["name"].startswith("ad-"):
            spec, pod = item["spec"], True
        else:
            continue
        for c in spec["containers"]:
            if c["name"] == "ad":
                c.pop("resources", None)
        spec["resources"] = {"limits": {"memory": memory}}
        if request or pod:  # the API server defaults a pod's request from its limit
            spec["resources"]["requests"] = {"memory": request or memory}
    assert obj(state, "Deployment", "ad")["spec"]["template"]["spec"]["resources"]
    return state


def checks(verdict: dict) -> dict:
    return {c["id"]: c for c in verdict["checks"]}


def test_a_pod_level_limit_fixes_a_missing_container_limit():
    verdict = run(LIMIT, None, at_pod_level("300Mi"), task="mitigate")
    assert verdict["passed"], [c for c in verdict["checks"] if not c["passed"]]
    assert checks(verdict)["finops.proximity.0"]["passed"] and checks(verdict)["finops.spend"]["passed"]


def test_a_pod_level_limit_far_from_the_optimum_fails():
    found = checks(run(LIMIT, None, at_pod_level("3000Mi"), task="mitigate"))
    assert not found["finops.proximity.0"]["passed"], found["finops.proximity.0"]


def test_a_pod_level_request_above_the_healthy_spend_fails():
    found = checks(run(LIMIT, None, at_pod_level("300Mi", request="900Mi"), task="mitigate"))
    assert not found["finops.spend"]["passed"] and "pod memory" in found["finops.spend"]["detail"]
