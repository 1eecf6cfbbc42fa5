"""Fixes judged by what they do, as Kubernetes does it, not by how they are spelled: a Pod Security label kept
while every workload meets it, a recreated Service's selector spelled otherwise, a headless Service (no proxy
applies its target ports), a cordon the pods are let past instead of lifted."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from test_evaluator import derived, failed, mitigate, obj  # noqa: E402

from itbench_dsl.runtime import evaluator as rt  # noqa: E402
from itbench_dsl.runtime.state import State  # noqa: E402

PSA = "sregym-psa-restricted-blocks-recreation-hotel-reservation"
ENFORCE = "pod-security.kubernetes.io/enforce"


def _restricted(pod: dict) -> None:
    pod.setdefault("securityContext", {}).update(runAsNonRoot=True, runAsUser=65534,
                                                 seccompProfile={"type": "RuntimeDefault"})
    for c in pod.get("initContainers", []) + pod.get("containers", []):
        c.setdefault("securityContext", {}).update(allowPrivilegeEscalation=False, capabilities={"drop": ["ALL"]})


def _labelled(level: str, spare: str | None = None) -> dict:
    """The solved state with the namespace enforcing `level` again and every workload (and pod) of it made to
    meet the restricted level, but `spare`'s."""
    state = derived(PSA, "solved")
    obj(state, "Namespace", "hotel-reservation")["metadata"].setdefault("labels", {})[ENFORCE] = level
    for o in state["resources"]["items"]:
        name = o["metadata"]["name"]
        if o["metadata"].get("namespace") != "hotel-reservation" or spare and name.startswith(spare):
            continue
        if o["kind"] in ("Deployment", "StatefulSet"):
            _restricted(o["spec"]["template"]["spec"])
        elif o["kind"] == "Pod":
            _restricted(o["spec"])
    return state


@pytest.mark.parametrize("level, spare, passes", [
    ("restricted", None, True),  # the label kept: every pod it will check meets it
    ("restricted", "recommendation", False),  # the refused workload's next pods are refused still
    ("restricted", "geo", False),  # another workload's: admitted before the label, refused at its next pod
    ("not-a-level", None, True),  # a level the plugin cannot read enforces `restricted`, which they meet
])
def test_a_pod_security_label_is_judged_by_the_pods_it_refuses(level, spare, passes):
    verdict = mitigate(PSA, _labelled(level, spare))
    assert verdict["passed"] is passes, failed(verdict)
    assert ("fields./Namespace/hotel-reservation" in failed(verdict)) is not passes


def test_a_pod_security_label_relaxed_to_a_level_a_workload_breaks_still_refuses():
    state = derived(PSA, "solved")
    obj(state, "Namespace", "hotel-reservation")["metadata"].setdefault("labels", {})[ENFORCE] = "baseline"
    geo = obj(state, "Deployment", "geo")["spec"]["template"]["spec"]
    geo["hostNetwork"] = True  # baseline refuses the host's network
    assert "fields./Namespace/hotel-reservation" in failed(mitigate(PSA, state))


CART = "otel-cart-deleted-service"


@pytest.mark.parametrize("name, service, selector, passes", [
    (CART, "cart", {"app.kubernetes.io/name": "cart"}, True),  # the very pods and templates the healthy one selects
    (CART, "cart", {"app.kubernetes.io/name": "ad"}, False),  # other pods
    ("sregym-missing-service-social-network", "user-service", {"app": "user-service"}, True),
])
def test_a_recreated_service_selector_is_read_by_what_it_selects(name, service, selector, passes):
    state = derived(name, "solved")
    obj(state, "Service", service)["spec"]["selector"] = selector
    verdict = mitigate(name, state)
    assert verdict["passed"] is passes, failed(verdict)


def test_a_recreated_service_made_headless_reaches_the_pods_where_each_port_is_its_target():
    state = derived(CART, "solved")
    obj(state, "Service", "cart")["spec"].update(clusterIP="None", clusterIPs=["None"])  # 8080 -> 8080
    verdict = mitigate(CART, state)
    assert verdict["passed"], failed(verdict)
    obj(state, "Service", "grafana")["spec"].update(clusterIP="None", clusterIPs=["None"])  # 80 -> grafana (3000)
    assert "health.application" in failed(mitigate(CART, state))


def _web(headless: bool) -> tuple[dict, State]:
    """A Service port 80 -> 8080 of one ready pod serving 8080."""
    service = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web", "namespace": "shop"},
               "spec": {"selector": {"app": "web"}, "ports": [{"name": "http", "port": 80, "targetPort": 8080}],
                        **({"clusterIP": "None", "clusterIPs": ["None"]} if headless else {})}}
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web-1", "namespace": "shop", "labels": {"app": "web"}},
           "spec": {"containers": [{"name": "web", "ports": [{"containerPort": 8080}]}]},
           "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}}
    return service, State({"resources": {"items": [service, pod]}, "captured": ["shop/Service", "shop/Pod"]})


@pytest.mark.parametrize("headless", [False, True])
def test_a_headless_service_reaches_its_pods_on_its_port_not_its_target(headless):
    service, state = _web(headless)
    healthy = {k: v for k, v in service.items() if k != "spec"} | {"spec": {
        "selector": {"app": "web"}, "ports": [{"name": "http", "port": 80, "targetPort": 8080}]}}
    ok, _ = rt.service_check({"kind": "Service", "namespace": "shop", "name": "web"}, state)
    assert ok is not headless  # clients call web:80 on the pod's IP, where nothing listens
    assert rt._service_restored(healthy, service, state) is not headless
    assert (rt.ports_moved([{"port": 80, "protocol": "TCP", "targetPort": 8080}], service,
                           state.by_kind[("Pod", "shop")]) is None) is not headless


CORDONED = "otel-payment-cordoned-node"
UNSCHEDULABLE = {"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoSchedule"}


def _past_the_cordon(edit, nodes=()) -> dict:
    """Every part of the fault left, the payment pods running on the cordoned node, the template edited."""
    from test_mitigation_effects import _faulty_running, _on_node

    def change(manifests):
        edit(manifests[("Deployment", "otel-demo", "payment")]["spec"]["template"]["spec"])
    state = _on_node(_faulty_running(CORDONED, change), "payment", "kind-worker")
    state["resources"]["items"] += [{"apiVersion": "v1", "kind": "Node", "metadata": {
        "name": "kind-worker", "labels": {"kubernetes.io/hostname": "kind-worker"}},
        "spec": {"unschedulable": True} if cordoned else {}} for cordoned in nodes]
    return state


@pytest.mark.parametrize("edit, nodes, passes", [
    (lambda pod: pod.setdefault("tolerations", []).append(UNSCHEDULABLE), (), False),
    (lambda pod: pod.setdefault("tolerations", []).append({"operator": "Exists"}), (), False),  # tolerates all
    (lambda pod: pod.update(nodeName="kind-worker"), (), False),  # the scheduler, and its cordon check, skipped
    (lambda pod: pod.setdefault("tolerations", []).append(  # another taint's toleration lets nothing past
        {"key": "dedicated", "operator": "Exists", "effect": "NoSchedule"}), (), True),
    (lambda pod: pod.setdefault("tolerations", []).append(UNSCHEDULABLE), (False,), True),  # uncordoned: no harm
    (lambda pod: None, (True,), False),  # the node captured, still cordoned
])
def test_pods_let_past_a_cordon_the_fault_keeps_are_no_fix(edit, nodes, passes):
    verdict = mitigate(CORDONED, _past_the_cordon(edit, nodes))
    assert verdict["passed"] is passes, failed(verdict)
