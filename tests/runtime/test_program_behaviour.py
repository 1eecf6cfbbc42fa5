"""What a workload runs, judged by meaning and behaviour (docs/evaluator.md, `health.program` and
`health.application`): a bare pod keeps its program as a Deployment does, a container renamed is matched by
elimination, the environment by the value the container gets, no container added; a Service's named targetPort
resolved through its pods' container ports of its protocol, its node-local traffic policy by where its clients
run. The states are the compiler's derived ones, edited as an agent would.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

from test_evaluator import derived, failed, mitigate, obj  # noqa: E402

from itbench_dsl.runtime import state as model  # noqa: E402

BARE = "k8sbench-fix-image-pull-bare-pod"
IMAGE = "otel-checkout-nonexistent-image"
MISSING = "sregym-missing-service-hotel-reservation"


def _kubectl_run(state: dict, command=None) -> None:
    """Pod app recreated as `kubectl run app --image=nginx [--command -- ...]` makes it."""
    pod = obj(state, "Pod", "app")
    for c in pod["spec"]["containers"] + (pod.get("status") or {}).get("containerStatuses", []):
        c["name"] = "app"
    pod["metadata"]["labels"] = {"run": "app"}
    if command:
        pod["spec"]["containers"][0]["command"] = command


def test_a_bare_pod_keeps_its_program():
    state = derived(BARE, "solved")
    obj(state, "Pod", "app")["spec"]["containers"][0]["command"] = ["sleep", "infinity"]
    assert "health.program.debug/Pod/app" in failed(mitigate(BARE, state))


def test_a_bare_pod_fixed_in_place_with_a_deadline_fails():
    """`activeDeadlineSeconds` on a running bare pod: the kubelet kills it that long after it started and
    nothing recreates it, though every capture until then shows it ready."""
    state = derived(BARE, "solved")
    obj(state, "Pod", "app")["spec"]["activeDeadlineSeconds"] = 300
    assert "health.program.debug/Pod/app" in failed(mitigate(BARE, state))


@pytest.mark.parametrize("command, passes", [(None, True), (["sleep", "infinity"], False)])
def test_a_bare_pod_recreated_by_kubectl_run_is_matched_by_its_one_container(command, passes):
    state = derived(BARE, "solved")
    _kubectl_run(state, command)
    verdict = mitigate(BARE, state)
    assert verdict["passed"] is passes, [c for c in verdict["checks"] if not c["passed"]]


def test_a_container_renamed_is_matched_by_elimination_only():
    healthy = ["grafana-sc-alerts", "grafana"]
    assert [c["name"] for c in model.renamed_containers(healthy, [{"name": "grafana-sc-alerts"}, {"name": "x"}])] \
        == healthy
    two = [{"name": "x"}, {"name": "y"}]  # both renamed: which is which is not told
    assert model.renamed_containers(healthy, two) is two


def _ad(state: dict) -> dict:
    return obj(state, "Deployment", "ad")["spec"]["template"]["spec"]


def _env(state: dict, workload: str, name: str, value: str) -> None:
    for e in obj(state, "Deployment", workload)["spec"]["template"]["spec"]["containers"][0]["env"]:
        if e["name"] == name:
            e["value"] = value


@pytest.mark.parametrize("edit, passes", [
    (lambda s: _env(s, "ad", "FLAGD_HOST", "nowhere"), False),  # an address that names no Service
    (lambda s: _env(s, "ad", "FLAGD_HOST", "flagd.otel-demo.svc.cluster.local"), True),  # the same Service
    (lambda s: _env(s, "ad", "FLAGD_PORT", "8014"), False),
    (lambda s: _ad(s)["containers"][0].update(env=[e for e in _ad(s)["containers"][0]["env"]
                                                   if e["name"] != "FLAGD_HOST"]), False),  # a variable removed
    (lambda s: _ad(s)["containers"].append({"name": "extra", "image": "busybox:1.36"}), False),
    (lambda s: _ad(s).update(initContainers=[{"name": "init", "image": "busybox:1.36"}]), False),
    (lambda s: _ad(s)["containers"][0].update(name="renamed"), True),  # its one container, whatever its name
])
def test_another_workload_keeps_its_environment_and_containers(edit, passes):
    state = derived(IMAGE, "solved")
    edit(state)
    verdict = mitigate(IMAGE, state)
    assert verdict["passed"] is passes, [c for c in verdict["checks"] if not c["passed"]]
    if not passes:
        assert failed(verdict) == ["health.application"]


def test_a_named_workloads_environment_is_its_program():
    state = derived(IMAGE, "solved")
    _env(state, "checkout", "CART_ADDR", "nowhere:8080")
    assert "health.program.otel-demo/Deployment/checkout" in failed(mitigate(IMAGE, state))
    _env(state, "checkout", "CART_ADDR", "cart.otel-demo:8080")
    assert mitigate(IMAGE, state)["passed"]


def _grafana_port(state: dict, **change) -> None:
    pods = [o for o in state["resources"]["items"]
            if o["kind"] == "Pod" and o["metadata"]["name"].startswith("grafana")]
    for holder in [obj(state, "Deployment", "grafana")["spec"]["template"]] + pods:
        for c in holder["spec"]["containers"]:
            for p in c.get("ports") or []:
                if p.get("name") == "grafana":
                    p.update(change)


@pytest.mark.parametrize("change, passes", [
    ({"name": "http"}, False),  # Service grafana's targetPort `grafana` names no container port any more
    ({"protocol": "UDP"}, False),  # a TCP Service port resolves a name among the TCP ports only
    ({"protocol": "TCP"}, True),
])
def test_a_named_target_port_is_resolved_through_the_pods_ports_of_its_protocol(change, passes):
    state = derived(IMAGE, "solved")
    _grafana_port(state, **change)
    verdict = mitigate(IMAGE, state)
    assert verdict["passed"] is passes, [c for c in verdict["checks"] if not c["passed"]]
    if not passes:
        assert "Service/grafana" in next(c for c in verdict["checks"] if c["id"] == "health.application")["detail"]


@pytest.mark.parametrize("spread, passes", [(True, False), (False, True)])
def test_a_node_local_service_strands_the_clients_on_other_nodes(spread, passes):
    state = derived(MISSING, "solved")
    obj(state, "Service", "mongodb-rate")["spec"]["internalTrafficPolicy"] = "Local"
    for pod in (o for o in state["resources"]["items"] if o["kind"] == "Pod"):
        local = pod["metadata"]["name"].startswith("mongodb-rate")
        pod["spec"]["nodeName"] = "worker-b" if spread and local else "worker-a"
    verdict = mitigate(MISSING, state)
    assert verdict["passed"] is passes, [c for c in verdict["checks"] if not c["passed"]]
    if not passes:
        assert "internalTrafficPolicy Local" in next(
            c for c in verdict["checks"] if c["id"] == "health.application")["detail"]


def test_a_variable_a_fault_changes_is_its_checks_and_so_are_those_expanding_it():
    from itbench_dsl.runtime import evaluator as rt

    state = model.State({"resources": {"items": []}})
    healthy = {"env": [{"name": "HOST", "value": "a"}, {"name": "URL", "value": "http://$(HOST):1"}]}
    pod = {"kind": "Pod", "metadata": {"namespace": "n"},
           "spec": {"containers": [{"name": "c", "env": [{"name": "HOST", "value": "b"},
                                                         {"name": "URL", "value": "http://$(HOST):1"}]}]}}
    assert "HOST" in rt.env_changed({"c": healthy}, pod, state)
    assert rt.env_changed({"c": {**healthy, "open": ["HOST"]}}, pod, state) is None


def test_a_variable_read_from_a_secret_is_judged_where_the_secret_is():
    """A fix may point the reader at a copy holding the healthy data, the named Secret left faulty: the
    environment check does not read the named one as the healthy value (the fault's readers check does)."""
    from itbench_dsl.runtime import evaluator as rt

    def secret(name, value):
        return {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": name, "namespace": "n"},
                "stringData": {"k": value}}
    state = model.State({"resources": {"items": [secret("s", "faulty"), secret("copy", "healthy")]}})
    healthy = {"env": [{"name": "P", "valueFrom": {"secretKeyRef": {"name": "s", "key": "k"}}},
                       {"name": "URL", "value": "x://$(P)"}]}
    env = [{"name": "P", "valueFrom": {"secretKeyRef": {"name": "copy", "key": "k"}}},
           {"name": "URL", "value": "x://$(P)"}]
    pod = {"kind": "Pod", "metadata": {"namespace": "n"}, "spec": {"containers": [{"name": "c", "env": env}]}}
    assert rt.env_changed({"c": healthy}, pod, state) is None


def test_a_node_local_service_whose_callers_the_graph_does_not_name_reads_every_pod():
    from itbench_dsl.runtime import evaluator as rt

    def pod(name, node):
        return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "n"},
                "spec": {"nodeName": node}, "status": {"phase": "Running", "conditions": [
                    {"type": "Ready", "status": "True"}]}}
    db, client = pod("db", "b"), pod("client", "a")
    state = model.State({"resources": {"items": [db, client]}})
    state.traffic = ([["Namespace:n", "db"]], [])  # a graph node that is no workload
    service = {"kind": "Service", "metadata": {"name": "db", "namespace": "n"},
               "spec": {"internalTrafficPolicy": "Local"}}
    assert "client" in rt.local_traffic_stranded(service, [db], state, "db")
