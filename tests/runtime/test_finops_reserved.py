"""FinOps `finops.reserved`: what the whole application reserves, never the one field the fault changed.

A fix that makes the measured figure right while the application reserves as much CPU and memory as before
(requests raised beside a lowered maxReplicas, the replicas moved into a copy under another name, bare pods,
a sidecar) fails with both figures; the right fix, one that reserves less, and an autoscaler still scaling
in pass.
"""

from __future__ import annotations

import copy

from test_evaluator import derived, evaluator, obj, refused, run

IDLE = "otel-recommendation-idle-replicas"
HPA = "otel-frontend-hpa-misconfigured"
REQUESTS = "otel-cart-overprovisioned-requests"


def check(verdict: dict, check_id: str = "finops.reserved") -> dict:
    return next(c for c in verdict["checks"] if c["id"] == check_id)


def mitigate(name: str, state: dict) -> dict:
    return run(name, None, state, task="mitigate")


def copy_of(state: dict, kind: str, name: str, new_name: str, replicas: int) -> dict:
    """A workload of the state under another name, its pod template (labels included) unchanged, ready."""
    twin = copy.deepcopy(obj(state, kind, name))
    twin["metadata"] = {"name": new_name, "namespace": twin["metadata"]["namespace"], "generation": 1}
    twin["spec"]["replicas"] = replicas
    twin["status"] = {"observedGeneration": 1, "replicas": replicas, "readyReplicas": replicas,
                      "availableReplicas": replicas, "updatedReplicas": replicas}
    state["resources"]["items"].append(twin)
    return twin


def bare_pod(state: dict, like: str, name: str) -> dict:
    """A pod of the workload `like`'s, renamed and owned by nothing."""
    pod = copy.deepcopy(next(o for o in state["resources"]["items"] if o["kind"] == "Pod"
                             and o["metadata"]["name"].startswith(like + "-")))
    pod["metadata"]["name"] = name
    pod["metadata"].pop("ownerReferences", None)
    pod["metadata"]["labels"].pop("pod-template-hash", None)
    state["resources"]["items"].append(pod)
    return pod


def containers(state: dict, kind: str, name: str) -> list:
    return obj(state, kind, name)["spec"]["template"]["spec"]["containers"]


def test_the_right_fix_reserves_what_the_healthy_state_does():
    for name in (IDLE, HPA, REQUESTS):
        verdict = mitigate(name, derived(name, "solved"))
        assert verdict["passed"], [c for c in verdict["checks"] if not c["passed"]]
        assert check(verdict)["passed"]


def test_replicas_moved_into_a_copy_fail():
    state = derived(IDLE, "solved")
    copy_of(state, "Deployment", "recommendation", "recommendation-v2", 9)
    verdict = mitigate(IDLE, state)
    assert check(verdict, "finops.spend")["passed"]  # every workload of the topology costs what it did
    reserved = check(verdict)
    assert not verdict["passed"] and not reserved["passed"]
    assert "healthy 1.3 CPU, 6080 MiB memory" in reserved["detail"]
    assert "10580 MiB memory" in reserved["detail"] and "Deployment recommendation-v2" in reserved["detail"]


def test_a_copy_counts_at_its_replicas_and_its_pods_once():
    ns = evaluator(IDLE)
    state = derived(IDLE, "solved")
    before, _ = ns["app_spend"](ns["SPEC"], ns["State"](state))
    twin = copy_of(state, "Deployment", "recommendation", "recommendation-v2", 2)
    pod = bare_pod(state, "recommendation", "recommendation-v2-abc12-xyz34")
    pod["metadata"]["labels"]["pod-template-hash"] = "abc12"
    pod["metadata"]["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "controller": True,
                                           "name": "recommendation-v2-abc12"}]
    after, beyond = ns["app_spend"](ns["SPEC"], ns["State"](state))
    assert beyond == ["Deployment recommendation-v2"]
    assert after["memory"] - before["memory"] == 2 * 500 * 2 ** 20
    twin["spec"]["replicas"] = 0  # a copy left at zero reserves nothing
    assert ns["app_spend"](ns["SPEC"], ns["State"](state))[0] == before
    assert check(mitigate(IDLE, state))["passed"]


def test_bare_pods_and_a_daemonsets_pods_count():
    state = derived(IDLE, "solved")
    bare_pod(state, "recommendation", "recommendation-extra")
    verdict = mitigate(IDLE, state)
    assert not check(verdict)["passed"] and "Pod recommendation-extra" in check(verdict)["detail"]
    state = derived(IDLE, "solved")
    bare_pod(state, "recommendation", "recommendation-5d8f7c-x2k9q")  # named as the Deployment's pods are
    assert not check(mitigate(IDLE, state))["passed"]
    state = derived(IDLE, "solved")
    pod = bare_pod(state, "recommendation", "recommendation-node-a")
    pod["metadata"]["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": "DaemonSet", "controller": True,
                                           "name": "recommendation-everywhere"}]
    assert not check(mitigate(IDLE, state))["passed"]
    pod["status"]["phase"] = "Succeeded"  # a pod that finished reserves nothing
    assert check(mitigate(IDLE, state))["passed"]


def test_a_lowered_max_replicas_with_raised_requests_fails():
    state = derived(HPA, "faulty")
    hpa = obj(state, "HorizontalPodAutoscaler", "frontend")
    hpa["spec"]["maxReplicas"] = hpa["spec"]["minReplicas"]
    frontend = obj(state, "Deployment", "frontend")
    frontend["spec"]["replicas"] = frontend["status"]["replicas"] = 1
    for key in ("readyReplicas", "availableReplicas", "updatedReplicas"):
        frontend["status"][key] = 1
    for c in containers(state, "Deployment", "frontend"):
        c["resources"] = {"requests": {"memory": "4Gi", "cpu": "2"}, "limits": {"memory": "4Gi"}}
    verdict = mitigate(HPA, state)
    reserved = check(verdict)
    assert not reserved["passed"] and "(cpu, memory over)" in reserved["detail"]


def test_a_sidecar_holding_the_cut_request_fails():
    state = derived(REQUESTS, "solved")
    containers(state, "Deployment", "cart").append(
        {"name": "cache", "image": "busybox", "resources": {"requests": {"memory": "1440Mi"}}})
    verdict = mitigate(REQUESTS, state)
    assert check(verdict, "finops.spend")["passed"]  # the healthy containers request what they did
    assert not check(verdict)["passed"]


def test_an_init_container_reserves_the_larger_of_it_and_the_pod():
    ns = evaluator(REQUESTS)
    pod = {"kind": "Pod", "spec": {
        "containers": [{"name": "a", "resources": {"requests": {"cpu": "100m"}, "limits": {"memory": "1Gi"}}}],
        "initContainers": [{"name": "setup", "resources": {"requests": {"cpu": "2", "memory": "10Mi"}}},
                           {"name": "proxy", "restartPolicy": "Always", "resources": {"requests": {"memory": "1Gi"}}}]}}
    assert ns["pod_reserves"](pod) == {"cpu": 2.0, "memory": 2 * 2 ** 30}


def test_a_fix_that_reserves_less_passes():
    state = derived(REQUESTS, "solved")
    cart = next(c for c in containers(state, "Deployment", "cart") if c["name"] == "cart")
    cart["resources"] = {"requests": {"memory": "150Mi"}, "limits": {"memory": "160Mi"}}  # 160Mi is optimal
    verdict = mitigate(REQUESTS, state)
    assert verdict["passed"], [c for c in verdict["checks"] if not c["passed"]]


def test_an_autoscaler_still_scaling_in_counts_at_its_floor():
    state = derived(HPA, "solved")
    frontend = obj(state, "Deployment", "frontend")
    frontend["spec"]["replicas"] = 10  # the autoscaler's stabilisation window: it scales in minutes after the fix
    for key in ("replicas", "readyReplicas", "availableReplicas", "updatedReplicas"):
        frontend["status"][key] = 10
    assert check(mitigate(HPA, state))["passed"]


def test_the_run_captures_the_pods():
    spec = evaluator(IDLE)["SPEC"]
    assert ["otel-demo", "Pod"] in spec["requires"]["kinds"]
    state = derived(IDLE, "solved")
    state["resources"]["items"] = [o for o in state["resources"]["items"] if o["kind"] != "Pod"]
    state["captured"] = [c for c in state["captured"] if not c.endswith("/Pod")]
    assert "otel-demo/Pod" in refused(IDLE, None, state, task="mitigate")


def test_replicas_moved_into_a_relabelled_copy_fail():
    # its pods selected by no healthy selector serve nothing, and cost all the same
    for name, workload in ((IDLE, "recommendation"), (HPA, "frontend")):
        state = derived(name, "solved")
        twin = copy_of(state, "Deployment", workload, f"{workload}-warm", 9)
        twin["spec"]["selector"] = {"matchLabels": {"app": f"{workload}-warm"}}
        twin["spec"]["template"]["metadata"]["labels"] = {"app": f"{workload}-warm"}
        verdict = mitigate(name, state)
        assert not verdict["passed"] and not check(verdict)["passed"]
        assert f"Deployment {workload}-warm" in check(verdict)["detail"]


# ---- one autoscaler a workload: every HPA of the state counted by its target ------------------------------


def _second_hpa(state: dict, target: int | None) -> dict:
    hpa = copy.deepcopy(obj(state, "HorizontalPodAutoscaler", "frontend"))
    hpa["metadata"] = {"name": "frontend-old", "namespace": hpa["metadata"]["namespace"]}
    for metric in hpa["spec"]["metrics"] if target is not None else []:
        metric["resource"]["target"]["averageUtilization"] = target
    state["resources"]["items"].append(hpa)
    return hpa


def test_a_second_autoscaler_on_the_same_workload_fails():
    for target in (1, None):  # the faulty one kept under another name, a copy of the fixed one
        state = derived(HPA, "solved")
        _second_hpa(state, target)
        verdict = mitigate(HPA, state)
        guard = check(verdict, "safeguards")
        assert not verdict["passed"] and not guard["passed"] and "AmbiguousSelector" in guard["detail"]
        assert verdict["score"] == 0.0


def test_a_second_autoscaler_on_another_workload_is_not_the_frontends():
    state = derived(HPA, "solved")
    other = _second_hpa(state, None)
    other["spec"]["scaleTargetRef"]["name"] = "not-in-the-topology"
    verdict = mitigate(HPA, state)
    assert check(verdict, "safeguards")["passed"]


def _cart_resources(state: dict, resources: dict) -> dict:
    for o in state["resources"]["items"]:
        if o["kind"] in ("Deployment", "Pod") and o["metadata"]["name"].startswith("cart"):
            spec = o["spec"]["template"]["spec"] if o["kind"] == "Deployment" else o["spec"]
            for c in spec["containers"]:
                if c["name"] == "cart":
                    c["resources"] = copy.deepcopy(resources)
    return state


def test_a_requests_fix_keeping_a_larger_limit_passes():
    """The waste is the request: a limit the fault raised with it costs nothing, so a fix that brings the request
    to the optimum and keeps a larger limit (headroom against OOM kills), or the fault's, is right."""
    for limit in ("256Mi", "1600Mi"):
        state = _cart_resources(derived(REQUESTS, "solved"),
                                {"requests": {"memory": "160Mi"}, "limits": {"memory": limit}})
        verdict = mitigate(REQUESTS, state)
        assert verdict["passed"], [c["detail"] for c in verdict["checks"] if not c["passed"]]
    # the request is still what is graded
    state = _cart_resources(derived(REQUESTS, "solved"),
                            {"requests": {"memory": "1600Mi"}, "limits": {"memory": "1600Mi"}})
    assert not mitigate(REQUESTS, state)["passed"]


def added_autoscaler(state: dict, workload: str, target: int, max_replicas: int = 20) -> dict:
    """An autoscaler the healthy topology does not hold, on `workload`, at a memory utilization `target`."""
    namespace = obj(state, "Deployment", workload)["metadata"]["namespace"]
    hpa = {"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
           "metadata": {"name": f"{workload}-autoscale", "namespace": namespace},
           "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": workload},
                    "minReplicas": 1, "maxReplicas": max_replicas,
                    "metrics": [{"type": "Resource", "resource": {"name": "memory", "target": {
                        "type": "Utilization", "averageUtilization": target}}}]}}
    state["resources"]["items"].append(hpa)
    return hpa


def test_an_added_autoscaler_counts_at_what_its_target_may_hold_it():
    """Its minReplicas is no floor: the healthy topology does not autoscale the workload, and a 1% target keeps
    it at maxReplicas; a workload the healthy autoscaler scales keeps its minReplicas floor."""
    for name in (HPA, "otel-autoscaling-spend-false-alarm"):
        state = derived(name, "solved") if name == HPA else derived(name, "healthy")
        added_autoscaler(state, "cart", 1)
        verdict = mitigate(name, state)
        assert not verdict["passed"], name
        assert not check(verdict, "finops.spend")["passed"] and not check(verdict)["passed"]
        assert "20 replica(s) at least" in check(verdict, "finops.spend")["detail"]
    state = derived(HPA, "solved")
    added_autoscaler(state, "cart", 80, max_replicas=1)  # it cannot scale beyond what cart runs
    assert mitigate(HPA, state)["passed"]


def _cart_memory(state: dict, memory: str) -> dict:
    for o in state["resources"]["items"]:
        if o["kind"] in ("Deployment", "Pod") and o["metadata"]["name"].startswith("cart") \
                and not o["metadata"]["name"].startswith("cart-internal"):
            spec = o["spec"]["template"]["spec"] if o["kind"] == "Deployment" else o["spec"]
            for c in spec["containers"]:
                if c["name"] == "cart":
                    c.setdefault("resources", {}).setdefault("requests", {})["memory"] = memory
    return state


def test_spend_and_proximity_share_the_inclusive_band():
    """A request exactly 10% from the healthy (and optimal) 160Mi passes both finops.proximity and finops.spend (one
    comparison, `within 10%` inclusive); one step beyond fails both."""
    for memory, passed in (("144Mi", True), ("176Mi", True), ("143Mi", False), ("177Mi", False)):
        verdict = mitigate(REQUESTS, _cart_memory(derived(REQUESTS, "solved"), memory))
        spend = check(verdict, "finops.spend")
        near = [c for c in verdict["checks"] if c["id"].startswith("finops.proximity.")]
        assert spend["passed"] is passed and all(c["passed"] is passed for c in near), (memory, spend, near)
