"""The generated evaluator.py, tried as an adversary and as a careful agent would: unfixed states and wrong
answers must fail, right ones that follow the prompt must pass, and inputs it cannot use are refused.

The cases here are written by hand, one per class of trick (docs/evaluator.md), on states taken from the
compiler's derived ones and edited as an agent or a capture would edit them: they do not come from the
adversarial corpus (tests/analysis/test_corpus.py), so the two check each other.
"""

from __future__ import annotations

import ast
import base64
import copy
import dataclasses
import json
import subprocess
import sys
from functools import cache, lru_cache
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from itbench_dsl.analysis import states
from itbench_dsl.backends import evaluator as backend
from itbench_dsl.backends import evaluator_file
from itbench_dsl.checking import check_source
from itbench_dsl.compiler import compile_source
from itbench_dsl.diagnostics import Diagnostics

ROOT = Path(__file__).resolve().parents[2]
SCENARIOS = {p.stem: p for p in sorted((ROOT / "scenarios").rglob("*.itb"))}


# A library Chaos Mesh scenario posed with `mitigate` (`NAME+mitigate`), its prompt handing the agent the tool's
# kinds: the library poses their diagnosis only (the agent may not end a Chaos Mesh object, E2037), and the runtime
# still grades the mitigation of such a fault where the agent is given the tool.
MITIGATED = "+mitigate"
TOOL_COMMANDS = ("kubectl get schedules,podchaos,httpchaos,networkchaos -A",
                 "kubectl -n chaos-mesh delete schedules,podchaos,httpchaos,networkchaos x")


@cache
def bundle(name: str):
    """(scenario, {file: bytes}) of a library scenario."""
    from unittest import mock

    from itbench_dsl import access

    base = name.removesuffix(MITIGATED)
    text = SCENARIOS[base].read_bytes()
    if name != base:
        assert b"\n  tasks diagnose\n" in text, name
        text = text.replace(b"\n  tasks diagnose\n", b"\n  tasks diagnose, mitigate\n", 1)
    with mock.patch.dict(access.DOMAIN_COMMANDS, {"sre": TOOL_COMMANDS if name != base else ()}):
        result = compile_source(text, str(SCENARIOS[base]), Diagnostics())
    assert result.files, name
    return result.scenario, result.files


@cache
def evaluator(name: str) -> dict:
    """The bundle's evaluator.py, executed as a module: its namespace (SPEC, evaluate, main, InputError)."""
    namespace: dict = {"__name__": "bundle_evaluator"}
    exec(compile(bundle(name)[1]["evaluator.py"], f"{name}/evaluator.py", "exec"), namespace)  # noqa: S102
    return namespace


def run(name, answer, state, **kw) -> dict:
    ns = evaluator(name)
    return ns["evaluate"](ns["SPEC"], copy.deepcopy(answer), state, **kw)


def refused(name, answer, state, **kw) -> str:
    """The reason the evaluator refuses the inputs (the test fails when it grades them)."""
    ns = evaluator(name)
    with pytest.raises(ns["InputError"]) as info:
        ns["evaluate"](ns["SPEC"], answer, state, **kw)
    return str(info.value)


@cache
def _derived(name: str) -> dict:
    return states.derive(bundle(name)[0])


def derived(name: str, which: str) -> dict:
    return copy.deepcopy(_derived(name)[which])


def obj(state: dict, kind: str, name: str) -> dict:
    return next(o for o in state["resources"]["items"] if o["kind"] == kind and o["metadata"]["name"] == name)


def mitigate(name, state) -> dict:
    return run(name, None, state, task="mitigate")


def failed(verdict: dict) -> list[str]:
    return [c["id"] for c in verdict["checks"] if not c["passed"]]


# ---- the generated file ------------------------------------------------------------------------------


def test_every_bundle_has_a_parsable_deterministic_evaluator():
    for name in SCENARIOS:
        scenario, files = bundle(name)
        source = files["evaluator.py"].decode("utf-8")
        tree = ast.parse(source)
        assert source.startswith(evaluator_file.runtime_source().rstrip("\n"))
        assert source == backend.evaluator_source(scenario)
        assigns = [n for n in tree.body if isinstance(n, ast.Assign) and getattr(n.targets[0], "id", "") == "SPEC"]
        assert len(assigns) == 1
        assert backend.spec_of(source) == backend.evaluator_spec(scenario)


# ---- mitigation means observed health, compared by meaning ------------------------------------------------

TARGET_PORT = "otel-ad-modified-target-port"


def _target_port(state: dict, value) -> dict:
    port = next(p for p in obj(state, "Service", "ad")["spec"]["ports"] if p.get("name") == "tcp-service")
    port["targetPort"] = value
    return state


def test_another_wrong_target_port_is_no_fix():
    """9999 -> 9998 differs from the faulty value, and is still wrong: no container listens there."""
    verdict = mitigate(TARGET_PORT, _target_port(derived(TARGET_PORT, "solved"), 9998))
    assert not verdict["passed"]
    assert {"fields.otel-demo/Service/ad", "health.service.otel-demo/Service/ad"} <= set(failed(verdict))


def test_a_named_target_port_is_the_right_port():
    """The container names its port `service`: `targetPort: service` is 8080 by meaning."""
    verdict = mitigate(TARGET_PORT, _target_port(derived(TARGET_PORT, "solved"), "service"))
    assert verdict["passed"], failed(verdict)
    assert not mitigate(TARGET_PORT, _target_port(derived(TARGET_PORT, "solved"), "no-such-port"))["passed"]


def test_list_items_are_matched_by_identity_not_position():
    name = "shop-cart-modified-env"
    scenario = bundle(name)[0]
    variable = scenario.injections()[0].args["name"]
    for which, want in (("faulty", False), ("solved", True)):
        state = derived(name, which)
        container = obj(state, "Deployment", "cart")["spec"]["template"]["spec"]["containers"][0]
        container["env"] = [{"name": "AN_EXTRA", "value": "1"}] + list(reversed(container["env"]))
        if which == "faulty":  # the fault kept, the pods made to look fine
            state = states.render(states.objects(scenario).faulty, states.objects(scenario))
            container = obj(state, "Deployment", "cart")["spec"]["template"]["spec"]["containers"][0]
            container["env"] = [{"name": "AN_EXTRA", "value": "1"}] + list(reversed(container["env"]))
        verdict = mitigate(name, state)
        assert verdict["passed"] is want, (which, failed(verdict))
        assert any(e["name"] == variable for e in container["env"])


FLAG = "otel-ad-failure-flag"


def _flag_json(state: dict, transform) -> dict:
    configmap = next(o for o in state["resources"]["items"] if o["kind"] == "ConfigMap"
                     and any(k.endswith(".json") for k in o.get("data", {})))
    key = next(k for k in configmap["data"] if k.endswith(".json"))
    configmap["data"][key] = json.dumps(transform(json.loads(configmap["data"][key])), indent=7, sort_keys=True)
    return state


def test_configmap_json_is_compared_as_data():
    scenario = bundle(FLAG)[0]
    found = states.objects(scenario)
    faulty_but_ready = states.render(found.faulty, found)
    verdict = mitigate(FLAG, _flag_json(faulty_but_ready, lambda data: data))  # re-serialised, flag still on
    assert not verdict["passed"] and "fields" in " ".join(failed(verdict))
    assert mitigate(FLAG, _flag_json(derived(FLAG, "solved"), lambda data: data))["passed"]  # reformatted, right

    def broken(data):
        return "{not json"

    state = derived(FLAG, "solved")
    configmap = next(o for o in state["resources"]["items"] if o["kind"] == "ConfigMap"
                     and any(k.endswith(".json") for k in o.get("data", {})))
    key = next(k for k in configmap["data"] if k.endswith(".json"))
    configmap["data"][key] = "{not json"
    verdict = mitigate(FLAG, state)
    assert not verdict["passed"] and any("not valid JSON" in c["detail"] for c in verdict["checks"])


def test_secrets_are_compared_decoded():
    name = "otel-grafana-corrupted-secret"
    solved = derived(name, "solved")
    secret = obj(solved, "Secret", "grafana")
    assert "stringData" not in secret and secret["data"]  # as the API server returns it
    assert mitigate(name, solved)["passed"]
    secret["data"]["admin-password"] = base64.b64encode(b"itbench-corrupted-credentials-2").decode()
    assert not mitigate(name, solved)["passed"]


def test_what_the_api_server_adds_is_not_a_change():
    from itbench_dsl.analysis.corpus import as_served

    for name in ("otel-frontend-failing-dns-policy", "bookinfo-ambient-mode-disabled", TARGET_PORT,
                 "otel-checkout-nonexistent-image"):
        found = states.objects(bundle(name)[0])
        verdict = mitigate(name, states.render(as_served(found.solved), found))
        assert verdict["passed"], (name, failed(verdict))


def test_the_fault_kept_while_every_pod_reports_ready_fails():
    for name in ("otel-checkout-nonexistent-image", "otel-accounting-scaled-to-zero", FLAG,
                 "otel-frontend-misconfigured-readiness-probe", "otel-checkout-insufficient-quota"):
        found = states.objects(bundle(name)[0])
        assert not mitigate(name, states.render(found.faulty, found))["passed"], name


def test_a_workload_running_another_program_is_no_fix():
    name = "otel-checkout-payment-network-loss" + MITIGATED  # a chaos fault: the experiment deleted, checkout replaced
    state = derived(name, "solved")
    container = obj(state, "Deployment", "checkout")["spec"]["template"]["spec"]["containers"][0]
    container["image"] = "docker.io/library/busybox:1.36"
    verdict = mitigate(name, state)
    assert "health.program.otel-demo/Deployment/checkout" in failed(verdict)


def test_scaling_back_to_more_replicas_is_accepted():
    name = "otel-accounting-scaled-to-zero"
    state = derived(name, "solved")
    deployment = obj(state, "Deployment", "accounting")
    deployment["spec"]["replicas"] = 3
    deployment["status"].update(replicas=3, readyReplicas=3, availableReplicas=3, updatedReplicas=3)
    assert mitigate(name, state)["passed"]


def _workload(kind: str, replicas=3, generation=4, **status) -> dict:
    return {"apiVersion": "apps/v1", "kind": kind, "metadata": {"name": "w", "namespace": "n", "generation": generation},
            "spec": {"replicas": replicas}, "status": {"observedGeneration": generation, **status}}


@pytest.mark.parametrize("obj, ready", [
    (_workload("Deployment", readyReplicas=3, updatedReplicas=3, availableReplicas=3, replicas=3), True),
    # the status describes an older spec: the fix is not rolled out yet
    (dict(_workload("Deployment", readyReplicas=3, updatedReplicas=3, availableReplicas=3, replicas=3),
          metadata={"name": "w", "namespace": "n", "generation": 5}), False),
    (_workload("Deployment", generation=5, readyReplicas=3, updatedReplicas=3, availableReplicas=3, replicas=3,
               observedGeneration=None), False),
    # a replica of the old spec is left, or the new ones are not all available
    (_workload("Deployment", readyReplicas=3, updatedReplicas=3, availableReplicas=3, replicas=4), False),
    (_workload("Deployment", readyReplicas=3, updatedReplicas=3, availableReplicas=2, replicas=3), False),
    (_workload("Deployment", readyReplicas=3, availableReplicas=3, replicas=3), False),  # updatedReplicas omitted: 0
    (_workload("Deployment", readyReplicas=3, updatedReplicas=3, availableReplicas=3, replicas=3,
               conditions=[{"type": "Progressing", "status": "False", "reason": "ProgressDeadlineExceeded"}]), False),
    (_workload("StatefulSet", readyReplicas=3, updatedReplicas=3, currentRevision="w-1", updateRevision="w-1"), True),
    (_workload("StatefulSet", readyReplicas=3, updatedReplicas=3, currentRevision="w-1", updateRevision="w-2"), False),
    (_workload("StatefulSet", readyReplicas=2, updatedReplicas=3), False),
    ({**_workload("DaemonSet", desiredNumberScheduled=2, numberReady=2, updatedNumberScheduled=2, numberAvailable=2),
      "spec": {}}, True),
    ({**_workload("DaemonSet", desiredNumberScheduled=2, numberReady=2, numberAvailable=2), "spec": {}}, False),
    (dict(_workload("Deployment", readyReplicas=3, updatedReplicas=3, availableReplicas=3, replicas=3),
          metadata={"name": "w", "namespace": "n", "generation": 4, "deletionTimestamp": "2026-01-01T00:00:00Z"}), False),
])
def test_ready_means_the_rollout_is_complete(obj, ready):
    """As `kubectl rollout status` judges it (docs/evaluator.md): a status of an older spec, an old replica
    left, a missed progress deadline, a StatefulSet between revisions, an object being deleted: not ready."""
    from itbench_dsl.runtime.state import workload_ready

    obj = copy.deepcopy(obj)
    if obj["status"].get("observedGeneration") is None:
        obj["status"].pop("observedGeneration")
    assert workload_ready(obj) is ready


def test_a_rollout_still_under_way_or_an_object_being_deleted_is_no_fix():
    name = "otel-checkout-nonexistent-image"
    state = derived(name, "solved")
    obj(state, "Deployment", "checkout")["metadata"]["generation"] = 7  # the fix applied, not yet rolled out
    assert "health.ready.otel-demo/Deployment/checkout" in failed(mitigate(name, state))
    state = derived(name, "solved")
    obj(state, "Deployment", "checkout")["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    assert "safeguards" in failed(mitigate(name, state))
    # the broken pods on their way out beside the fixed ones are no failure
    state, faulty = derived(name, "solved"), derived(name, "faulty")
    names = {(o["kind"], o["metadata"]["name"]) for o in state["resources"]["items"]}
    leaving = [copy.deepcopy(o) for o in faulty["resources"]["items"]
               if o["kind"] == "Pod" and ("Pod", o["metadata"]["name"]) not in names]
    assert leaving
    for pod in leaving:
        pod["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    state["resources"]["items"] += leaving
    verdict = mitigate(name, state)
    assert verdict["passed"], failed(verdict)


def test_an_object_of_another_api_group_is_not_the_one_a_check_names():
    """A custom resource `Deployment` of example.com in the fixed object's place is another object."""
    name = "otel-checkout-nonexistent-image"
    state = derived(name, "solved")
    obj(state, "Deployment", "checkout")["apiVersion"] = "example.com/v1"
    verdict = mitigate(name, state)
    assert not verdict["passed"] and "health.ready.otel-demo/Deployment/checkout" in failed(verdict)
    state = derived(name, "solved")
    obj(state, "Deployment", "checkout")["apiVersion"] = "apps/v1beta2"  # another version of the group is the kind
    assert mitigate(name, state)["passed"]


def test_a_pending_alert_is_neither_quiet_nor_firing():
    """Its condition holds, not yet for its `for` duration (Prometheus restarted): the incident is not over."""
    name = "otel-frontend-hpa-misconfigured"  # its mitigation waits for KubeHpaMaxedOut to stop
    state, faulty = derived(name, "solved"), derived(name, "faulty")
    alerts = faulty["alerts"]["data"]["alerts"]
    assert alerts
    state["alerts"]["data"]["alerts"] = [dict(a, state="pending") for a in alerts]
    verdict = mitigate(name, state)
    assert any(i.startswith("mitigation.alert.") for i in failed(verdict))
    assert "pending" in next(c["detail"] for c in verdict["checks"] if c["id"].startswith("mitigation.alert."))
    state["alerts"]["data"]["alerts"] = [dict(a, state="inactive") for a in alerts]
    assert mitigate(name, state)["passed"]


def test_an_inert_object_the_fault_created_may_stay():
    """`rollout undo` takes the volume off the pods and leaves the claim the fault created: it is a fix."""
    name = "bookinfo-reviews-nonexistent-pvc"
    scenario = bundle(name)[0]
    found = states.objects(scenario)
    undone = dict(found.solved)
    for key, manifest in found.faulty.items():
        if key[0] == "PersistentVolumeClaim":
            undone[key] = manifest
    assert any(k[0] == "PersistentVolumeClaim" for k in undone)
    verdict = mitigate(name, states.render(undone, found))
    assert verdict["passed"], failed(verdict)


def test_what_the_state_omits_is_not_taken_as_absent():
    name = "otel-cart-deleted-service"
    solved = derived(name, "solved")
    without_alerts = {k: v for k, v in solved.items() if k != "alerts"}
    assert "alerts" in refused(name, None, without_alerts, task="mitigate")
    chaos = "otel-checkout-payment-network-loss" + MITIGATED
    faulty = derived(chaos, "faulty")
    everyday = {"Pod", "Service", "Deployment", "StatefulSet", "ReplicaSet"}
    get_all = {**faulty, "resources": {**faulty["resources"], "items": [
        o for o in faulty["resources"]["items"] if o["kind"] in everyday]}, "captured": []}
    assert "chaos-mesh/Schedule" in refused(chaos, None, get_all, task="mitigate")
    # declared as captured, the absence of the Schedule means it was deleted: then it is graded
    # the safeguards read the flags' ConfigMap and what the pods need (ConfigMaps, Secrets, their ServiceAccount);
    # the Schedule where the application runs too, where a copy of it would act
    # (and the experiment kind it spawns, of which a copy or a child left would act)
    get_all["captured"] = ["chaos-mesh/Schedule", "otel-demo/Schedule", "otel-demo/ConfigMap", "otel-demo/Secret",
                           "otel-demo/ServiceAccount", "chaos-mesh/NetworkChaos", "otel-demo/NetworkChaos",
                           # what the application stands on: its nodes, its own policies, its Services' endpoints
                           "/Node", "otel-demo/EndpointSlice", "otel-demo/NetworkPolicy", "otel-demo/ResourceQuota",
                           # what admits its next pods: the namespace's LimitRanges and Pod Security labels
                           "otel-demo/LimitRange", "/Namespace",
                           # the CronJobs whose runs' pods could join its Services
                           "otel-demo/CronJob",
                           # what an agent may add around it: autoscalers, Istio authorization
                           "otel-demo/HorizontalPodAutoscaler", "otel-demo/AuthorizationPolicy"]
    assert "created.chaos-mesh/Schedule/postgresql-main" not in failed(mitigate(chaos, get_all))


def test_alerts_count_only_in_the_scenarios_namespaces():
    name = "otel-cart-deleted-service"

    def with_alert(labels):
        state = derived(name, "solved")
        state["alerts"] = {"status": "success", "data": {"alerts": [
            {"labels": {"alertname": "HighRequestErrorRate", **labels}, "state": "firing"}]}}
        return mitigate(name, state)

    assert with_alert({"namespace": "another-team"})["passed"]  # another tenant's alert does not block
    assert not with_alert({"namespace": "otel-demo"})["passed"]
    assert not with_alert({})["passed"]  # no namespace label: it may be ours, so it counts


@pytest.mark.parametrize("attempt", ["scaled", "deleted service", "relabelled pods"])
def test_gaming_the_safeguards_fails(attempt):
    name = "otel-shipping-quote-address"
    state = derived(name, "solved")
    items = state["resources"]["items"]
    if attempt == "scaled":
        deployment = obj(state, "Deployment", "shipping")
        deployment["spec"]["replicas"] = 0
        state["resources"]["items"] = [o for o in items if not (o["kind"] == "Pod"
                                                                and o["metadata"]["name"].startswith("shipping-"))]
    elif attempt == "deleted service":
        state["resources"]["items"] = [o for o in items if not (o["kind"] == "Service"
                                                                and o["metadata"]["name"] == "shipping")]
    else:
        for pod in items:
            if pod["kind"] == "Pod" and pod["metadata"]["name"].startswith("shipping-"):
                pod["metadata"]["labels"] = {"quarantined": "true"}
    verdict = mitigate(name, state)
    assert not verdict["passed"] and "safeguards" in failed(verdict)


# ---- the diagnosis: names refer to objects -----------------------------------------------------------------


def perfect(name: str) -> dict:
    return states.perfect_answer(bundle(name)[0], _derived(name)["faulty"])


def diagnose(name, answer, state=None) -> dict:
    return run(name, answer, derived(name, "faulty") if state is None else state, task="diagnose")


@pytest.mark.parametrize("name", ["otel-shipping-quote-address", "otel-checkout-nonexistent-image", TARGET_PORT,
                                  "otel-cart-deleted-service", "bookinfo-details-invalid-selector",
                                  "otel-etcd-io-latency"])
def test_the_perfect_diagnosis_passes_and_an_empty_one_scores_zero(name):
    verdict = diagnose(name, perfect(name))
    assert verdict["passed"] and verdict["score"] == 1.0, failed(verdict)
    from itbench_dsl.backends.itbench import group_id_in
    scenario = bundle(name)[0]
    itbench_2025 = {"entities": [{"id": group_id_in(scenario, r), "root_cause": True} for r in scenario.root_causes],
                    "propagations": perfect(name)["propagations"]}
    assert diagnose(name, itbench_2025)["passed"]
    empty = diagnose(name, {"entities": []})
    assert not empty["passed"] and empty["score"] == 0.0


def test_a_right_root_cause_without_its_propagation_does_not_pass():
    name = "otel-shipping-quote-address"
    verdict = diagnose(name, {"entities": perfect(name)["entities"]})
    assert not verdict["passed"] and verdict["score"] < 1.0
    assert verdict["metrics"]["root_cause_entity_f1"] == 1.0 and verdict["metrics"]["propagation_chain"] == 0.0


@pytest.mark.parametrize("name", ["otel-checkout-nonexistent-image", "otel-shipping-quote-address"])
def test_the_chain_is_graded_by_directed_edges(name):
    """A reversed edge, or an invented one out of the root cause, never counts: the chain reversed, or one
    junk edge in place of the chain, scores 0 and fails (the paths' common subsequences credited one node)."""
    answer = perfect(name)
    root = answer["entities"][0]["name"]
    reversed_ = dict(answer, propagations=[dict(p, source=p["target"], target=p["source"])
                                           for p in answer["propagations"]])
    verdict = diagnose(name, reversed_)
    assert verdict["metrics"]["propagation_chain"] == 0.0 and not verdict["passed"], failed(verdict)
    junk = dict(answer, propagations=[{"source": root, "target": "otel-demo/Deployment/accounting"}])
    verdict = diagnose(name, junk)
    assert verdict["metrics"]["propagation_chain"] == 0.0 and not verdict["passed"], failed(verdict)
    # the right chain with every edge also given backwards: half of what it says is wrong
    both = dict(answer, propagations=answer["propagations"] + reversed_["propagations"])
    assert diagnose(name, both)["metrics"]["propagation_chain"] < 1.0


def test_a_flood_of_edges_after_the_chain_lowers_its_precision():
    name = "otel-checkout-nonexistent-image"
    answer = perfect(name)
    root = answer["entities"][0]["name"]
    flood = [{"source": root, "target": f"otel-demo/Deployment/ghost-{i}"} for i in range(600)]
    verdict = diagnose(name, dict(answer, propagations=answer["propagations"] + flood))
    assert verdict["metrics"]["propagation_chain"] < 0.01 and not verdict["passed"]


def test_edge_f1_contracts_and_directs():
    ns = evaluator("otel-checkout-nonexistent-image")
    f1 = ns["edge_f1"]
    assert f1([("a", "b"), ("b", "c")], [("a", "b")]) == pytest.approx(2 / 3)
    assert f1([("a", "b")], [("b", "a")]) == 0.0
    assert f1([("a", "a"), ("a", "b")], [("a", "a"), ("a", "b"), ("a", "b")]) == 1.0  # in one node: no edge
    assert f1([("a", "b")], [("a", "x")]) == 0.0
    assert f1([("a", "b")], []) == 0.0


def test_a_prefix_sibling_is_never_the_object():
    """ITBench's filters `frontend\\b` and `frontend-.*` also match frontend-proxy: names here refer to objects,
    and a pod belongs to the workload that owns it."""
    ns = evaluator(TARGET_PORT)
    state = derived(TARGET_PORT, "faulty")
    diagnosis = ns["Diagnosis"](ns["SPEC"], ns["State"](state))
    klass = diagnosis.klass
    pods = [o["metadata"]["name"] for o in state["resources"]["items"] if o["kind"] == "Pod"]
    proxy_pod = next(p for p in pods if p.startswith("frontend-proxy-"))
    frontend_pod = next(p for p in pods if p.startswith("frontend-") and not p.startswith("frontend-proxy-"))
    assert diagnosis.named(f"otel-demo/Pod/{frontend_pod}")[1] == {klass["frontend-pod-1"]}
    assert diagnosis.named(f"otel-demo/Pod/{proxy_pod}")[1] == {klass["frontend-proxy-pod-1"]}
    assert diagnosis.named("otel-demo/Service/frontend-proxy")[1] == {klass["frontend-proxy-service-1"]}
    assert diagnosis.named("otel-demo/Service/frontend-prox")[1] == set()  # exists nowhere
    assert diagnosis.named("otel-demo/Pod/frontend-proxy")[1] == set()


def test_names_of_absent_objects_score_nothing():
    name = "otel-checkout-nonexistent-image"
    for ghost in ("otel-demo/Deployment/checkout-v2", "otel-demo/Pod/checkout-7d4b9c8f6-x2x9q",
                  "otel-demo/Deployment/checkou", "elsewhere/Deployment/checkout"):
        verdict = diagnose(name, {"entities": [{"name": ghost, "contributing_factor": True}]})
        assert verdict["metrics"]["root_cause_entity_recall"] == 0.0, ghost
        assert verdict["metrics"]["root_cause_proximity"] == 0.0, ghost


def test_a_real_pod_names_its_workload():
    name = "otel-checkout-nonexistent-image"
    state = derived(name, "faulty")
    pod = next(o["metadata"]["name"] for o in state["resources"]["items"]
               if o["kind"] == "Pod" and o["metadata"]["name"].startswith("checkout-"))
    verdict = diagnose(name, {"entities": [{"name": f"otel-demo/Pod/{pod}", "contributing_factor": True}]})
    assert verdict["metrics"]["root_cause_proximity"] == 1.0


def test_spellings_of_one_object_count_once():
    name = "otel-checkout-nonexistent-image"
    answer = perfect(name)
    truth = answer["entities"][0]["name"]
    spellings = [truth, "Deployment/checkout", "otel-demo/deployment/checkout", "otel-demo/deploy/checkout", "checkout"]
    right = diagnose(name, {**answer, "entities": [{"name": s, "contributing_factor": True} for s in spellings]})
    assert right["passed"] and right["metrics"]["root_cause_entity_precision"] == 1.0
    wrong = ["otel-demo/Deployment/cart", "Deployment/cart", "otel-demo/DEPLOYMENT/cart", "otel-demo/deploy/cart"]
    flood = diagnose(name, {**answer, "entities": [{"name": s, "contributing_factor": True}
                                                   for s in [truth, *wrong]]})
    assert flood["metrics"]["root_cause_entity_precision"] == 0.5  # two objects named, one right


def test_listing_every_object_as_root_cause_fails():
    name = "otel-shipping-quote-address"
    state = derived(name, "faulty")
    everything = [f"{o['metadata'].get('namespace', '')}/{o['kind']}/{o['metadata']['name']}"
                  for o in state["resources"]["items"]]
    verdict = diagnose(name, {"entities": [{"name": n, "contributing_factor": True} for n in everything],
                              "propagations": perfect(name)["propagations"]})
    assert verdict["metrics"]["root_cause_entity_recall"] == 1.0
    assert verdict["metrics"]["root_cause_entity_precision"] < 0.05 and not verdict["passed"]


def test_neighbours_get_partial_credit():
    name = "otel-shipping-quote-address"
    near = diagnose(name, {"entities": [{"name": "otel-demo/Deployment/checkout", "contributing_factor": True}]})
    far = diagnose(name, {"entities": [{"name": "otel-demo/Deployment/accounting", "contributing_factor": True}]})
    # one hop from the root cause: 1/(2+1), averaged with the missed root cause's 0
    assert near["metrics"]["root_cause_proximity"] == pytest.approx(1 / 6, abs=1e-6) and not near["passed"]
    assert far["score"] < near["score"]


def test_the_task_is_never_guessed_from_the_answer():
    name = "otel-checkout-nonexistent-image"
    state = derived(name, "solved")
    assert "entities" in refused(name, {"verdict": "fixed it"}, state, task="diagnose")
    assert "agent-output" in refused(name, None, state, task="diagnose")
    assert "agent-output" in refused(name, None, state)  # every task the bundle poses: the diagnosis needs the answer
    assert "state" in refused(name, perfect(name), None, task="mitigate")
    assert "not policy" in refused(name, perfect(name), state, task="policy")
    both = run(name, perfect(name), state)
    assert set(both["tasks"]) == {"diagnose", "mitigate"} and both["passed"]


def test_a_control_scenario_poses_only_what_has_an_answer_without_a_fault():
    """A no-fault control (the `control` generator's variant): nothing is wrong, so it poses no diagnosis (there is
    no cause to name) and refuses one; the state as it is passes the mitigation, and a change to it fails."""
    from itbench_dsl import variants as gen
    from itbench_dsl.diagnostics import Diagnostics as Found

    path = SCENARIOS["otel-checkout-nonexistent-image"]
    parent = gen.load_input(path.read_bytes(), str(path), Found())
    result = gen.run([parent], [("control", gen.load_generator("control"))], 1)
    (variant,) = result.variants
    scenario = variant.scenario
    assert not scenario.injections()
    spec = backend.evaluator_spec(scenario)
    assert spec["tasks"] == ["mitigate"]
    state = states.derive(scenario)["faulty"]
    ns = evaluator("otel-checkout-nonexistent-image")
    with pytest.raises(ns["InputError"], match="not diagnose"):
        ns["evaluate"](spec, {"entities": []}, state, task="diagnose")
    assert ns["evaluate"](spec, None, state, task="mitigate")["passed"]
    changed = copy.deepcopy(state)
    deployment = next(o for o in changed["resources"]["items"]
                      if o["kind"] == "Deployment" and o["metadata"]["name"] == "checkout")
    deployment["spec"]["replicas"] = 0
    assert not ns["evaluate"](spec, None, changed, task="mitigate")["passed"]


def test_caps_refuse_with_a_clear_reason():
    name = "otel-checkout-nonexistent-image"
    limit = evaluator(name)["MAX_ENTITIES"]
    many = {"entities": [{"name": f"otel-demo/Pod/p-{i}", "contributing_factor": True} for i in range(limit + 1)]}
    assert f"{limit:,}" in refused(name, many, None, task="diagnose")


# ---- FinOps: the prompt's own contract ------------------------------------------------------------------------


def test_finops_answers_that_follow_the_prompt_pass():
    name = "otel-frontend-hpa-misconfigured"
    scenario = bundle(name)[0]
    injection = scenario.injections()[0]
    faulty = derived(name, "faulty")

    def answer(*names):
        return run(name, {"resource": [{"name": n, "type": "misconfigured autoscaler"} for n in names]}, faulty,
                   task="diagnose")

    target = f"{injection.target.namespace}/{injection.target.kind}/{injection.target.name}"
    assert answer(target)["passed"]
    for side in injection.side_objects:  # the misconfigured autoscaler itself is a right answer
        assert answer(f"{side.namespace}/{side.kind}/{side.name}")["passed"]
    assert not answer("otel-demo/Deployment/cart")["passed"]
    assert not answer(target + "-v2")["passed"]
    bare = run(name, {"resource": [{"name": injection.target.name,
                                    "type": f"{injection.target.kind}: autoscaler target too low"}]}, faulty,
               task="diagnose")
    assert bare["passed"]
    # the kind alone says nothing of what is wasteful
    kind_only = run(name, {"resource": [{"name": injection.target.name, "type": injection.target.kind}]}, faulty,
                    task="diagnose")
    assert not kind_only["passed"] and "finops.type" in [c["id"] for c in kind_only["checks"] if not c["passed"]]


def test_finops_proximity():
    name = "otel-cart-overprovisioned-requests"
    solved = run(name, None, derived(name, "solved"), task="mitigate")
    assert solved["passed"] and solved["metrics"]["proximity"] == 1.0 and solved["score"] == 1.0
    faulty = run(name, None, derived(name, "faulty"), task="mitigate")
    assert not faulty["passed"] and faulty["metrics"]["proximity"] == 0.0  # ten times the optimum


def test_quantities_compare_by_value():
    rt = evaluator("otel-checkout-nonexistent-image")
    assert rt["same"]("1Gi", "1024Mi") and rt["same"]("500m", 0.5) and not rt["same"]("1", True)
    assert rt["compare"]("2", ">=", 1) and not rt["compare"]("abc", "<", 3)
    assert rt["compare"]("b", "in", ["a", "b"]) and rt["compare"]("v1.2", "matches", r"v1\..*")


# ---- CISO ---------------------------------------------------------------------------------------------------

KYVERNO = ["cis-k8s-5-2-2-privileged-kyverno", "cis-5-2-5-host-network-kyverno", "cis-k8s-5-7-2-seccomp-kyverno"]
GOOD_POLICY = {"apiVersion": "kyverno.io/v1", "kind": "ClusterPolicy", "metadata": {"name": "agent-policy"},
               "spec": {"validationFailureAction": "Audit", "background": True, "rules": [{"name": "check"}]}}


def reports(name: str, gap: str, compliant: str) -> list[dict]:
    spec = evaluator(name)["SPEC"]["ciso"]
    results = []
    for o, verdict in [(o, gap) for o in spec["gaps"]] + [(o, compliant) for o in spec["compliant"]]:
        meta = o["metadata"]
        results.append({"policy": "agent-policy", "rule": "check", "result": verdict,
                        "resources": [{"kind": o["kind"], "namespace": meta.get("namespace"), "name": meta["name"]}]})
    return [{"apiVersion": "wgpolicyk8s.io/v1alpha2", "kind": "PolicyReport", "results": results}]


def good_policy(name: str) -> dict:
    """A right policy for the scenario, one the embedded matcher reads as Kyverno does (ciso.general judges it
    on the twins): the corpus's, by content."""
    from itbench_dsl.analysis.corpus import _perfect_policy

    return _perfect_policy(bundle(name)[0], evaluator(name)["SPEC"])


def ciso_state(name, gap, compliant, policy=None) -> dict:
    policy = good_policy(name) if policy is None else policy
    items = [policy] if policy else []
    # a new policy's state says which policies are the agent's, as a run records them
    agents = {} if evaluator(name)["SPEC"]["ciso"]["contract"].get("name") else {"gradedPolicies": ["agent-policy"]}
    return {"resources": {"kind": "List", "items": items}, "captured": ["/ClusterPolicy"],
            "policyReports": reports(name, gap, compliant), **agents}


@pytest.mark.parametrize("name", KYVERNO)
def test_kyverno_policy_reports(name):
    good = run(name, None, ciso_state(name, "fail", "pass"))
    assert good["passed"] and good["score"] == 1.0
    deny_all = run(name, None, ciso_state(name, "fail", "fail"), gap_only=True)
    assert not deny_all["passed"]  # the compliant objects are always graded
    assert deny_all["metrics"]["itbench_gap_only_passed"] is True  # ITBench's rule is fooled by it
    assert not run(name, None, ciso_state(name, "pass", "pass"))["passed"]
    assert "policyReports" in refused(name, None, {"resources": {"kind": "List", "items": []}})


@pytest.mark.parametrize("broken", [{"validationFailureAction": "Enforce"}, {"background": False},
                                    {"apiVersion": "kyverno.io/v2beta1"}, {"kind": "Policy"}])
def test_the_prompts_artefact_contract_is_enforced(broken):
    name = "cis-k8s-5-2-2-privileged-kyverno"
    policy = copy.deepcopy(good_policy(name))
    if "validationFailureAction" in broken or "background" in broken:
        policy["spec"].update(broken)
    else:
        policy.update(broken)
    verdict = run(name, None, ciso_state(name, "fail", "pass", policy))
    assert not verdict["passed"] and "ciso.contract" in failed(verdict) and verdict["score"] == 0.0


@pytest.mark.parametrize("where", ["policy", "rule", "verify"])
def test_an_enforce_override_breaks_the_audit_contract(where):
    """Kyverno's `validationFailureActionOverrides` (and a rule's `failureActionOverrides`) apply their
    action in the namespaces they select: an Enforce override blocks there, whatever the policy's own
    action says; so does a verifyImages rule's `failureAction: Enforce`."""
    name = "cis-k8s-5-2-2-privileged-kyverno"
    policy = dict(copy.deepcopy(NO_PRIVILEGED), metadata={"name": "agent-policy"})  # the reports' policy
    override = [{"action": "Enforce", "namespaces": ["ciso-target"]}]
    if where == "policy":
        policy["spec"]["validationFailureActionOverrides"] = override
    elif where == "rule":
        policy["spec"]["rules"][0]["validate"]["failureActionOverrides"] = override
    else:
        policy["spec"]["rules"].append({"name": "signed", "match": NO_PRIVILEGED["spec"]["rules"][0]["match"],
                                        "verifyImages": [{"imageReferences": ["*"], "failureAction": "Enforce"}]})
    verdict = run(name, None, ciso_state(name, "fail", "pass", policy))
    assert not verdict["passed"] and "ciso.contract" in failed(verdict) and verdict["score"] == 0.0
    audit = dict(copy.deepcopy(NO_PRIVILEGED), metadata={"name": "agent-policy"})
    audit["spec"]["validationFailureActionOverrides"] = [{"action": "Audit", "namespaces": ["ciso-target"]}]
    assert run(name, None, ciso_state(name, "fail", "pass", audit))["passed"]  # an Audit override keeps it


REGO_GOOD = """package check
import rego.v1

default result := true

result := false if {
	some item in input.items
	object.get(item.spec, "template", {"spec": item.spec}).spec.hostNetwork == true
}
"""
REGO_ALWAYS_FALSE = "package check\n\nresult := false\n"


def test_rego_recorded_results():
    name = "cis-k8s-5-2-5-host-network-opa"
    spec = evaluator(name)["SPEC"]

    def record(gap_value, ok_value):
        out = {}
        for o, value in [(o, gap_value) for o in spec["ciso"]["gaps"]] + [(o, ok_value) for o in spec["ciso"]["compliant"]]:
            meta = o["metadata"]
            out[f"{meta.get('namespace') or ''}/{o['kind']}/{meta['name']}"] = {
                "result": [{"expressions": [{"value": value, "text": "data.check.result"}]}]}
        return out

    right = run(name, None, None, opa_result=record(False, True))
    # every object graded right, but the twins cannot be judged from a recording: no pass, said so
    assert set(failed(right)) == {"ciso.general"} and right["score"] == 1.0 and not right["passed"]
    assert "cannot be checked" in next(c["detail"] for c in right["checks"] if c["id"] == "ciso.general")
    assert not run(name, None, None, opa_result=record(False, False))["passed"]
    assert not run(name, None, None, opa_result=record(False, False), gap_only=True)["passed"]


def test_rego_evaluated_with_regopy():
    pytest.importorskip("regopy")
    name = "cis-k8s-5-2-5-host-network-opa"
    good = run(name, None, None, artifact=("rego", REGO_GOOD))
    assert good["passed"], good["checks"]
    assert not run(name, None, None, artifact=("rego", REGO_ALWAYS_FALSE))["passed"]
    # the agent's Rego that does not compile is graded, a fail saying why (never an unusable input)
    broken = run(name, None, None, artifact=("rego", "package check\nresult := = bad\n"))
    assert not broken["passed"] and broken["score"] == 0.0
    assert "does not evaluate" in next(c["detail"] for c in broken["checks"] if c["id"] == "ciso.verdicts")


NO_PRIVILEGED = {"apiVersion": "kyverno.io/v1", "kind": "ClusterPolicy", "metadata": {"name": "disallow-privileged"},
                 "spec": {"validationFailureAction": "Audit", "background": True,
                          "rules": [{"name": "privileged", "match": {"any": [{"resources": {"kinds": ["Pod"]}}]},
                                     "validate": {"message": "privileged containers are not allowed", "pattern": {
                                         "spec": {"containers": [{"=(securityContext)": {"=(privileged)": "false"}}],
                                                  "=(initContainers)": [{"=(securityContext)": {"=(privileged)": "false"}}],
                                                  "=(ephemeralContainers)": [
                                                      {"=(securityContext)": {"=(privileged)": "false"}}]}}}}]}}
ALWAYS_FAIL = {"apiVersion": "kyverno.io/v1", "kind": "ClusterPolicy", "metadata": {"name": "always-fail"},
               "spec": {"rules": [{"name": "all", "match": {"any": [{"resources": {"kinds": ["Deployment"]}}]},
                                   "validate": {"message": "no", "deny": {}}}]}}


def test_kyverno_offline_with_the_real_matcher():
    name = "cis-k8s-5-2-2-privileged-kyverno"
    assert "_KYVERNO_SOURCE" in bundle(name)[1]["evaluator.py"].decode()
    good = run(name, None, None, artifact=("kyverno", [NO_PRIVILEGED]))  # a Pod rule, autogen for the Deployment
    assert good["passed"], good["checks"]
    assert not run(name, None, None, artifact=("kyverno", [ALWAYS_FAIL]))["passed"]
    enforce = copy.deepcopy(NO_PRIVILEGED)
    enforce["spec"]["validationFailureAction"] = "Enforce"
    assert not run(name, None, None, artifact=("kyverno", [enforce]))["passed"]


@pytest.mark.parametrize("rule", [
    # the violating object singled out by name: right on the objects shown, wrong on every other one
    {"match": {"any": [{"resources": {"kinds": ["Deployment"]}}]},
     "validate": {"message": "m", "pattern": {"metadata": {"name": "!privileged-b"}}}},
    {"match": {"any": [{"resources": {"kinds": ["Deployment"], "names": ["privileged-b"]}}]},
     "validate": {"message": "m", "deny": {}}},
    # keyed on a name prefix the compliant object does not share, or on the label value the gap carries
    {"match": {"any": [{"resources": {"kinds": ["Deployment"], "names": ["privileged-b*"]}}]},
     "validate": {"message": "m", "deny": {}}},
    {"match": {"any": [{"resources": {"kinds": ["Deployment"], "selector": {"matchLabels": {"app": "privileged-b"}}}}]},
     "validate": {"message": "m", "deny": {}}},
])
def test_a_policy_that_names_the_violations_fails(rule):
    name = "cis-k8s-5-2-2-privileged-kyverno"
    policy = {"apiVersion": "kyverno.io/v1", "kind": "ClusterPolicy", "metadata": {"name": "p"},
              "spec": {"validationFailureAction": "Audit", "background": True, "rules": [dict(rule, name="r")]}}
    verdict = run(name, None, None, artifact=("kyverno", [policy]))
    assert failed(verdict) == ["ciso.general"], verdict["checks"]
    detail = next(c["detail"] for c in verdict["checks"] if c["id"] == "ciso.general")
    # the twin named by the object it copies (kind, namespace, name), not by its fresh name alone
    assert "twins of the gap objects" in detail and "Deployment/ciso-target/privileged-b (as `" in detail, detail
    good = run(name, None, None, artifact=("kyverno", [NO_PRIVILEGED]))
    assert "ciso.general" in [c["id"] for c in good["checks"]] and good["passed"]


def test_a_policy_read_back_from_the_cluster_grades_as_written():
    """`kubectl get clusterpolicy -o yaml` adds the server's metadata and a status: the same policy."""
    name = "cis-k8s-5-2-2-privileged-kyverno"
    served = copy.deepcopy(NO_PRIVILEGED)
    served["metadata"].update(uid="6f1c", resourceVersion="4242", generation=1, creationTimestamp="2026-01-01T00:00:00Z",
                              managedFields=[{"manager": "kubectl", "operation": "Apply"}], finalizers=["kyverno"])
    served["status"] = {"ready": True, "conditions": [{"type": "Ready", "status": "True"}]}
    verdict = run(name, None, None, artifact=("kyverno", [served]))
    assert verdict["passed"], verdict["checks"]


NO_PRIVILEGED_YAML = """\
apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata:
  name: disallow-privileged   # written by an agent, in YAML
spec:
  validationFailureAction: Audit
  background: true
  rules:
  - name: privileged
    match:
      any:
      - resources:
          kinds: [Pod]
    validate:
      message: >-
        privileged containers
        are not allowed
      pattern:
        spec:
          containers:
          - =(securityContext):
              =(privileged): "false"
          =(initContainers):
          - =(securityContext):
              =(privileged): "false"
          =(ephemeralContainers):
          - =(securityContext):
              =(privileged): "false"
"""


def test_a_yaml_policy_is_graded_by_the_standalone_evaluator(tmp_path):
    # the evaluator has only the standard library: it reads the agent's YAML with the embedded reader
    name = "cis-k8s-5-2-2-privileged-kyverno"
    source = bundle(name)[1]["evaluator.py"].decode()
    assert "_YAML_SOURCE" in source
    (tmp_path / "evaluator.py").write_text(source)

    def grade(policy_text):
        (tmp_path / "policy.yaml").write_text(policy_text)
        return subprocess.run([sys.executable, "-S", "evaluator.py", "--artifact", "policy.yaml"],
                              check=False, capture_output=True, text=True, cwd=tmp_path)

    good = grade(NO_PRIVILEGED_YAML)
    assert good.returncode == 0, good.stderr
    assert json.loads(good.stdout)["passed"], good.stdout
    always_fail = grade("apiVersion: kyverno.io/v1\nkind: ClusterPolicy\nmetadata: {name: always-fail}\nspec:\n"
                        "  rules:\n  - name: all\n    match: {any: [{resources: {kinds: [Deployment]}}]}\n"
                        "    validate: {message: 'no', deny: {}}\n")
    assert always_fail.returncode == 0 and not json.loads(always_fail.stdout)["passed"], always_fail.stdout
    # YAML with anchors reads as PyYAML, kubectl and Kyverno read it
    anchored = grade(NO_PRIVILEGED_YAML.replace("containers:\n          - =(securityContext):",
                                                "containers:\n          - &c\n            =(securityContext):")
                     .replace("      =(privileged): \"false\"\n          =(initContainers):\n          - =(securityContext):\n              =(privileged): \"false\"\n",
                              "      =(privileged): \"false\"\n          =(initContainers):\n          - *c\n"))
    assert anchored.returncode == 0 and json.loads(anchored.stdout)["passed"], anchored.stdout + anchored.stderr
    # what the agent submits is graded: an artefact that cannot be read, or holds no policy, fails saying why
    for text, words in (("a: 1\n? complex\n: v\n", "line 2, column 1"), ("kind: ConfigMap\n", "no Kyverno")):
        unread = grade(text)
        assert unread.returncode == 0, unread.stderr
        verdict = json.loads(unread.stdout)
        assert not verdict["passed"] and verdict["score"] == 0
        assert any(c["id"] == "ciso.contract" and words in c["detail"] for c in verdict["checks"]), verdict["checks"]


# ---- the command line ----------------------------------------------------------------------------------------


def test_cli_exit_codes_and_hostile_inputs(tmp_path):
    name = "otel-shipping-quote-address"
    script = tmp_path / "evaluator.py"
    script.write_bytes(bundle(name)[1]["evaluator.py"])
    (tmp_path / "state.json").write_text(json.dumps(derived(name, "solved")))
    (tmp_path / "out.json").write_text(json.dumps(perfect(name)))
    (tmp_path / "bad.json").write_text("{not json")
    (tmp_path / "shape.json").write_text(json.dumps({"resources": [1, 2]}))
    (tmp_path / "entities.json").write_text(json.dumps({"entities": "all of them"}))
    (tmp_path / "deep.json").write_text("[" * 100_000 + "]" * 100_000)
    (tmp_path / "huge.json").write_text(json.dumps({"entities": [{"name": 1e308, "contributing_factor": True}]}))

    def call(*args):
        return subprocess.run([sys.executable, str(script), *args], check=False, capture_output=True, text=True,
                              cwd=tmp_path)

    ok = call("--agent-output", "out.json", "--state", "state.json")
    assert ok.returncode == 0 and json.loads(ok.stdout)["passed"], ok.stderr
    mitigated = call("--state", "state.json", "--task", "mitigate")
    assert mitigated.returncode == 0 and json.loads(mitigated.stdout)["passed"]
    assert call("--agent-output", "huge.json", "--task", "diagnose").returncode == 0
    for args in (["--state", "missing.json"], ["--state", "bad.json", "--task", "mitigate"],
                 ["--state", "shape.json", "--task", "mitigate"],
                 ["--agent-output", "bad.json", "--state", "state.json"],
                 ["--agent-output", "entities.json", "--state", "state.json"], [],
                 ["--agent-output", "deep.json", "--task", "diagnose"], ["--state", "deep.json", "--task", "mitigate"]):
        result = call(*args)
        assert result.returncode == 2 and result.stderr.strip() and "Traceback" not in result.stderr, args
    requirements = call("--requirements")
    assert requirements.returncode == 0
    needs = json.loads(requirements.stdout)
    assert "otel-demo/Deployment" in needs["captured"] and needs["commands"]


def test_capture_runs_kubectl_and_writes_a_gradable_state(tmp_path):
    """`--capture` with a stand-in kubectl that prints the solved state's objects."""
    name = "otel-checkout-payment-network-loss"
    solved = derived(name, "solved")
    (tmp_path / "objects.json").write_text(json.dumps({"kind": "List", "items": solved["resources"]["items"]}))
    kubectl = tmp_path / "kubectl"
    kubectl.write_text(f"#!/bin/sh\ncat {tmp_path / 'objects.json'}\n")
    kubectl.chmod(0o755)
    script = tmp_path / "evaluator.py"
    script.write_bytes(bundle(name)[1]["evaluator.py"])
    done = subprocess.run([sys.executable, str(script), "--capture", "state.json", "--kubectl", str(kubectl)],
                          check=False, capture_output=True, text=True, cwd=tmp_path)
    if evaluator(name)["SPEC"]["requires"]["alerts"]:
        assert done.returncode == 2 and "--prometheus" in done.stderr
        return
    assert done.returncode == 0, done.stderr
    state = json.loads((tmp_path / "state.json").read_text())
    assert "chaos-mesh/Schedule" in state["captured"]


# ---- scenario text is data --------------------------------------------------------------------------------------

texts = st.text(st.characters(blacklist_categories=("Cs",)), max_size=40)


def _without_spec(source: str) -> str:
    tree = ast.parse(source)
    for node in tree.body:
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", None) == "SPEC":
            node.value.args[0] = ast.Constant("")
    return ast.dump(tree)


@lru_cache(maxsize=1)
def _baseline():
    scenario = bundle("otel-shipping-quote-address")[0]
    return scenario, _without_spec(backend.evaluator_source(scenario))


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(name=texts, description=texts, condition=texts, effect=texts, step=texts, alert=texts, title=texts)
def test_scenario_text_never_changes_the_evaluator(name, description, condition, effect, step, alert, title):
    base, base_tree = _baseline()
    # a shallow copy keeps the (memoised) topology objects; only the text fields are replaced
    scenario = dataclasses.replace(base, name=name, description=description)
    scenario.propagations = [dataclasses.replace(e, condition=condition, effect=effect) for e in scenario.propagations]
    scenario.solutions = [dataclasses.replace(s, title=title, steps=[dataclasses.replace(x, text=step, command=step)
                                                                     for x in s.steps]) for s in scenario.solutions]
    scenario.alerts = [dataclasses.replace(a, description=alert) for a in scenario.alerts]
    source = backend.evaluator_source(scenario)
    assert _without_spec(source) == base_tree  # the strings are inside the SPEC literal, nowhere else
    namespace: dict = {"__name__": "fuzzed"}
    exec(compile(source, "evaluator.py", "exec"), namespace)  # noqa: S102 - the generated evaluator
    state = _derived("otel-shipping-quote-address")["faulty"]
    for output, task in ((perfect("otel-shipping-quote-address"), "diagnose"), (None, "mitigate")):
        got = namespace["evaluate"](namespace["SPEC"], copy.deepcopy(output), state, task=task)
        want = run("otel-shipping-quote-address", output, state, task=task)
        assert got["scenario"] == name
        assert {**got, "scenario": None} == {**want, "scenario": None}


def test_check_is_clean_for_the_library_with_the_corpus():
    """`itbench check` grades every scenario's adversarial corpus (tests/analysis/test_corpus.py has the figures)."""
    one = check_source(SCENARIOS[FLAG].read_bytes(), "f.itb")
    assert not one.has_errors, [d.message for d in one.errors()]


def test_a_state_holding_an_object_twice_is_refused():
    """A healthy copy appended after the faulty object must not hide it: a cluster holds one object of a name."""
    name = "otel-checkout-nonexistent-image"
    faulty, solved = derived(name, "faulty"), derived(name, "solved")
    faulty["resources"]["items"].append(obj(solved, "Deployment", "checkout"))
    assert "twice" in refused(name, None, faulty, task="mitigate")


def test_a_paused_chaos_schedule_no_longer_acts():
    name = "otel-checkout-payment-network-loss" + MITIGATED
    faulty = derived(name, "faulty")
    solved = derived(name, "solved")
    schedule = next(o for o in faulty["resources"]["items"] if o["kind"] == "Schedule")
    kept = {**solved, "resources": {**solved["resources"], "items": solved["resources"]["items"] + [copy.deepcopy(schedule)]}}
    assert not mitigate(name, kept)["passed"]
    schedule = next(o for o in kept["resources"]["items"] if o["kind"] == "Schedule")
    schedule["metadata"].setdefault("annotations", {})["experiment.chaos-mesh.org/pause"] = "true"
    created = "created.chaos-mesh/Schedule/postgresql-main"
    # paused, it no longer acts (an `absent` predicate reads a created object the same way: test_created_twins)
    assert created not in failed(mitigate(name, kept))
    schedule["metadata"]["annotations"]["experiment.chaos-mesh.org/pause"] = "True"  # Chaos Mesh reads "true" only
    assert created in failed(mitigate(name, kept))


def test_yaml_held_in_a_configmap_is_compared_as_data():
    """The diff goes into YAML as into JSON; the runtime reads it with the YAML reader (embedded in a bundle
    that needs it), so a reformatted file with the value kept is the same, and a changed value is not."""
    from itbench_dsl.runtime import evaluator as rt

    healthy = {"kind": "ConfigMap", "data": {"config.yaml": "receivers:\n  otlp:\n    port: 4317\nlevel: info\n"}}
    faulty = {"kind": "ConfigMap", "data": {"config.yaml": "receivers:\n  otlp:\n    port: 9999\nlevel: info\n"}}
    changes: list = []
    backend.diff(healthy, faulty, [], changes, parse_strings=True)
    (change,) = changes
    assert change["path"] == ["data", "config.yaml", {"parse": "yaml"}, "receivers", "otlp", "port"]
    assert change["healthy"] == 4317 and change["faulty"] == 9999
    reformatted = {"data": {"config.yaml": "level: info\nreceivers: {otlp: {port: 4317}}\n"}}
    assert rt.owns(change["healthy"], rt.at(reformatted, change["path"]))
    kept = {"data": {"config.yaml": "level: info\nreceivers: {otlp: {port: 9999}}\n"}}
    assert not rt.owns(change["healthy"], rt.at(kept, change["path"]))
    broken = rt.at({"data": {"config.yaml": "receivers: [unclosed\n"}}, change["path"])
    assert isinstance(broken, rt.InvalidValue)
    source = backend.source_for_spec({"scenario": "x", "tasks": ["mitigate"], "ciso": None,
                                      "mitigation": {"faults": [{"fields": [{"changes": [change]}]}]}})
    assert "_YAML_SOURCE = " in source
    plain = dict(change, path=["data", "level"])  # a bundle whose spec reads no YAML embeds no reader
    assert "_YAML_SOURCE = " not in backend.source_for_spec({
        "scenario": "x", "tasks": ["mitigate"], "ciso": None,
        "mitigation": {"faults": [{"fields": [{"changes": [plain]}]}]}})


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-2**70, 2**70) | st.floats(allow_nan=False) | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=20)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(answer=json_values, state=json_values, key=st.sampled_from(["resources", "alerts", "captured", "policyReports",
                                                                   "entities", "propagations", "metadata", "spec"]),
       junk=json_values, task=st.sampled_from([None, "diagnose", "mitigate"]))
def test_no_input_makes_the_evaluator_crash(tmp_path_factory, answer, state, key, junk, task):
    """Whatever the answer and the state hold, the evaluator grades (exit 0) or refuses (exit 2): never a
    traceback. Real inputs with one part replaced by junk reach deeper than random ones."""
    import contextlib
    import io

    name = "otel-shipping-quote-address"
    ns = evaluator(name)
    folder = tmp_path_factory.mktemp("fuzz")
    real_state = derived(name, "solved")
    real_answer = copy.deepcopy(perfect(name))
    real_state[key] = junk
    real_answer[key] = junk
    if real_state["resources"] and isinstance(real_state["resources"], dict) and real_state["resources"].get("items"):
        real_state["resources"]["items"][0] = {"kind": "Deployment", "metadata": {"name": junk, "namespace": "otel-demo"},
                                                "spec": junk, "status": junk}
    for answer_value, state_value in ((answer, state), (real_answer, real_state)):
        (folder / "a.json").write_text(json.dumps(answer_value))
        (folder / "s.json").write_text(json.dumps(state_value))
        argv = ["--agent-output", str(folder / "a.json"), "--state", str(folder / "s.json")] + (
            ["--task", task] if task else [])
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = ns["main"](ns["SPEC"], argv)
        assert code in (0, 2), err.getvalue()
        assert (code == 0) == bool(out.getvalue()) and "Traceback" not in err.getvalue()


def test_an_optimum_reads_the_metric_it_names_not_the_first():
    """A cpu metric at the optimum put before the memory metric the fault set to 1% hides nothing."""
    name = "otel-frontend-hpa-misconfigured"
    state = copy.deepcopy(derived(name, "solved"))
    hpa = obj(state, "HorizontalPodAutoscaler", "frontend")
    memory = hpa["spec"]["metrics"][0]
    assert memory["resource"]["name"] == "memory"
    cpu = copy.deepcopy(memory)
    cpu["resource"]["name"] = "cpu"
    memory["resource"]["target"]["averageUtilization"] = 1
    hpa["spec"]["metrics"] = [cpu, memory]
    verdict = mitigate(name, state)
    assert not verdict["passed"] and verdict["metrics"]["proximity.0"] < 0.1, failed(verdict)
    hpa["spec"]["metrics"] = [cpu, dict(memory, resource=dict(memory["resource"], target={
        "type": "Utilization", "averageUtilization": 80}))]
    # both at the optimum, the memory one second: the right fix, where the controller can compute the cpu
    # utilization; the frontend requests no cpu, and a metric it cannot compute stops it ever scaling in
    assert not mitigate(name, state)["passed"]
    frontend = obj(state, "Deployment", "frontend")["spec"]["template"]["spec"]["containers"]
    for container in frontend:
        container.setdefault("resources", {}).setdefault("requests", {})["cpu"] = "100m"
    assert "finops.proximity.0" not in failed(mitigate(name, state))


def test_a_finops_control_passes_the_answer_that_names_nothing():
    name = "otel-autoscaling-spend-false-alarm"
    verdict = run(name, {"resource": []}, derived(name, "faulty"), task="diagnose")
    assert verdict["passed"] and verdict["score"] == 1.0, failed(verdict)
    named = run(name, {"resource": [{"name": "otel-demo/Deployment/frontend"}]}, derived(name, "faulty"),
                task="diagnose")
    assert not named["passed"] and named["score"] == 0.0


def test_twins_differ_in_every_name_and_label_but_what_controls_read():
    ns = evaluator("cis-k8s-5-1-1-cluster-admin-kyverno")
    gaps = ns["SPEC"]["ciso"]["gaps"] + ns["SPEC"]["ciso"]["context"]  # the binding and its service account
    copies = ns["twins"](gaps)
    for gap, twin in zip(gaps, copies):
        name, other = gap["metadata"]["name"], twin["metadata"]["name"]
        assert other[0] != name[0] and twin["metadata"].get("namespace") == gap["metadata"].get("namespace")
        assert not set((gap["metadata"].get("labels") or {}).items()) & set((twin["metadata"].get("labels") or {}).items())
    binding = next(t for t in copies if t["kind"] == "ClusterRoleBinding")
    sa = next(t for t in copies if t["kind"] == "ServiceAccount")
    assert binding["roleRef"]["name"] == "cluster-admin"  # what the control reads stays
    assert binding["subjects"][0]["name"] == sa["metadata"]["name"]  # a reference follows its object
    deployment = evaluator("cis-k8s-5-2-2-privileged-kyverno")["twins"](
        evaluator("cis-k8s-5-2-2-privileged-kyverno")["SPEC"]["ciso"]["gaps"])[0]
    assert deployment["spec"]["selector"]["matchLabels"] == deployment["spec"]["template"]["metadata"]["labels"]
    assert "privileged-gap" not in json.dumps(deployment)


def test_only_the_policy_the_task_names_is_graded():
    """An update task: another policy's reports that flag the gap do not stand for the named policy's."""
    name = "cis-k8s-5-2-7-root-user-kyverno-update"
    spec = evaluator(name)["SPEC"]
    named = spec["ciso"]["contract"]["name"]
    policy = good_policy(name)  # the existing policy with a rule that flags the gap

    def results(policy_name, gap):
        out = []
        for o, verdict in [(o, gap) for o in spec["ciso"]["gaps"]] + [(o, "pass") for o in spec["ciso"]["compliant"]]:
            meta = o["metadata"]
            out.append({"policy": policy_name, "rule": "r", "result": verdict,
                        "resources": [{"kind": o["kind"], "namespace": meta.get("namespace"), "name": meta["name"]}]})
        return out

    def state(reports):
        return {"resources": {"kind": "List", "items": [policy]}, "captured": ["/ClusterPolicy"],
                "policyReports": [{"kind": "PolicyReport", "results": reports}]}

    verdict = run(name, None, state(results("another", "fail") + results(named, "pass")))
    assert not verdict["passed"] and any(c.startswith("ciso.gap.") for c in failed(verdict)), verdict["checks"]
    assert run(name, None, state(results("another", "pass") + results(named, "fail")))["passed"]
    # a kyverno_policy task: the run names the agent's own policies (`gradedPolicies`)
    create = "cis-k8s-5-2-2-privileged-kyverno"
    mine = good_policy(create)
    others = reports(create, "fail", "pass")
    others[0]["results"] = [dict(r, policy="someone-elses") for r in others[0]["results"]]
    allow = reports(create, "pass", "pass")
    live = {"resources": {"kind": "List", "items": [mine]}, "captured": ["/ClusterPolicy"],
            "policyReports": others + allow, "gradedPolicies": ["agent-policy"]}
    assert not run(create, None, live)["passed"]
    assert run(create, None, dict(live, policyReports=others + reports(create, "fail", "pass")))["passed"]
    # a state that does not say which policies are the agent's is refused, never graded on every policy (a
    # policy already in the cluster would answer for the agent)
    unsaid = {k: v for k, v in live.items() if k != "gradedPolicies"}
    assert "gradedPolicies" in refused(create, None, unsaid)


def test_capture_records_the_agents_policies_from_a_capture_before_it(tmp_path):
    """`--capture --before B.json`: the Kyverno policies B.json (captured before the agent) does not hold are
    the agent's (`gradedPolicies`), so a policy already in the cluster that flags the gap does not answer for
    an agent's policy that checks nothing; `--capture` without it writes a state the policy task refuses."""
    name = "cis-k8s-5-2-2-privileged-kyverno"
    spec = evaluator(name)["SPEC"]
    existing = {"apiVersion": "kyverno.io/v1", "kind": "ClusterPolicy", "metadata": {"name": "disallow-privileged"},
                "spec": {"validationFailureAction": "Audit", "background": True, "rules": []}}
    agents = {**existing, "metadata": {"name": "agent-policy"}}
    objects = spec["ciso"]["gaps"] + spec["ciso"]["compliant"]
    flagged = reports(name, "fail", "pass")
    flagged[0]["results"] = [dict(r, policy="disallow-privileged") for r in flagged[0]["results"]]
    (tmp_path / "reports.json").write_text(json.dumps({"kind": "List", "items": flagged}))
    kubectl = tmp_path / "kubectl"
    # the namespaced kinds (`-n NS`) print the scenario's objects, the cluster-scoped ones the policies
    kubectl.write_text(f"#!/bin/sh\ncase \"$*\" in *policyreports*) cat {tmp_path / 'reports.json'};;\n"
                       f"*' -n '*) cat {tmp_path / 'objects.json'};;\n*) cat {tmp_path / 'policies.json'};; esac\n")
    (tmp_path / "objects.json").write_text(json.dumps({"kind": "List", "items": objects}))
    kubectl.chmod(0o755)
    script = tmp_path / "evaluator.py"
    script.write_bytes(bundle(name)[1]["evaluator.py"])

    def call(*args):
        return subprocess.run([sys.executable, str(script), *args, "--kubectl", str(kubectl)], check=False,
                              capture_output=True, text=True, cwd=tmp_path)

    (tmp_path / "policies.json").write_text(json.dumps({"kind": "List", "items": [existing]}))
    assert call("--capture", "before.json").returncode == 0
    (tmp_path / "policies.json").write_text(json.dumps({"kind": "List", "items": [existing, agents]}))
    done = call("--capture", "state.json", "--before", "before.json")
    assert done.returncode == 0, done.stderr
    assert json.loads((tmp_path / "state.json").read_text())["gradedPolicies"] == ["agent-policy"]
    graded = call("--task", "policy", "--state", "state.json")
    assert graded.returncode == 0 and not json.loads(graded.stdout)["passed"], graded.stdout
    # the same capture without the record of what was there before: refused, saying how to capture it
    assert call("--capture", "unsaid.json").returncode == 0
    refused_ = call("--task", "policy", "--state", "unsaid.json")
    assert refused_.returncode == 2 and "--before" in refused_.stderr, refused_.stderr
    named = call("--capture", "named.json", "--graded-policies", "agent-policy")
    assert named.returncode == 0 and json.loads((tmp_path / "named.json").read_text())["gradedPolicies"] == [
        "agent-policy"]


# ---- the answer tasks, attacked by an outside reader of the docs -------------------------------------------


def test_an_edge_and_its_reverse_together_are_credited_in_neither_direction():
    """Both directions of every truth edge say the spread went both ways: a contradiction, never F1 0.667."""
    name = "otel-checkout-nonexistent-image"
    answer = perfect(name)
    back = [dict(p, source=p["target"], target=p["source"]) for p in answer["propagations"]]
    both = diagnose(name, dict(answer, propagations=answer["propagations"] + back))
    assert both["metrics"]["propagation_chain"] == 0.0 and not both["passed"], both["checks"]
    assert "both directions" in next(c for c in both["checks"] if c["id"] == "diagnosis.propagation")["detail"]
    f1 = evaluator(name)["edge_stats"]
    assert f1([("a", "b"), ("b", "a")], [("a", "b"), ("b", "a")])[2] == 1.0  # a truth cycle said both ways
    assert f1([("a", "b"), ("b", "c")], [("a", "b"), ("b", "a"), ("b", "c")])[:2] == (1 / 3, 1 / 2)


def test_a_fan_out_of_guesses_from_the_root_does_not_pass_the_chain():
    """One right edge among three guesses is F1 0.5: the chain passes on half the truth (recall) with most of
    what is said right (precision above 0.5), so a fan-out of guesses fails and half a chain passes."""
    name = "otel-checkout-nonexistent-image"
    answer = perfect(name)
    root = answer["entities"][0]["name"]
    guesses = [{"source": root, "target": f"otel-demo/Service/{s}"} for s in ("frontend", "payment", "email")]
    verdict = diagnose(name, dict(answer, propagations=guesses))
    assert verdict["metrics"]["propagation_chain_precision"] < 0.5 and not verdict["passed"], verdict["checks"]
    two = diagnose(name, dict(answer, propagations=guesses[:2]))  # one of two right: a coin toss
    assert two["metrics"]["propagation_chain_precision"] == 0.5 and not two["passed"]
    assert diagnose(name, dict(answer, propagations=guesses[:1]))["passed"]


def test_a_name_of_several_objects_is_not_credited_as_the_root_cause():
    """`frontend` and `otel-demo//frontend` name both the Service (the root cause) and the Deployment: a hedge
    across kinds is credited only when every object it names is a root cause."""
    name = "sregym-wrong-service-selector-astronomy-shop"
    state = derived(name, "faulty")
    assert run(name, perfect(name), state, task="localize")["passed"]
    for text in ("frontend", "otel-demo//frontend", "//frontend"):
        verdict = run(name, {"entities": [{"name": text, "contributing_factor": True}]}, state, task="localize")
        assert not verdict["passed"] and verdict["metrics"]["root_cause_entity_recall"] == 0.0, (text, verdict)
    exact = run(name, {"entities": [{"name": "otel-demo/Service/frontend", "contributing_factor": True}]}, state,
                task="localize")
    assert exact["passed"] and exact["score"] == 1.0


def test_a_wrong_object_of_the_root_causes_component_never_scores_like_the_right_one():
    name = "sregym-wrong-service-selector-astronomy-shop"
    state = derived(name, "faulty")
    wrong = run(name, {"entities": [{"name": "otel-demo/Deployment/frontend", "contributing_factor": True}]}, state,
                task="localize")
    assert not wrong["passed"] and wrong["score"] <= 0.5, wrong
    # all right but one of two root causes missed: not 1 either (a missed root cause counts 0)
    ns = evaluator(name)
    d = ns["Diagnosis"](ns["SPEC"], ns["State"](state))
    assert d.credit([("Deployment", "otel-demo", "frontend")]) == 0.5


@pytest.mark.parametrize("name, spellings", [
    ("sregym-network-policy-block", ["hotel-reservation/networkpolicies/mongodb-rate-shared",
                                     "hotel-reservation/networkpolicies.networking.k8s.io/mongodb-rate-shared",
                                     "hotel-reservation/NetworkPolicy.v1.networking.k8s.io/mongodb-rate-shared"]),
    ("k8sbench-fix-rbac-wrong-resource", ["simple-rbac-setup/roles/pod-reader-role",
                                          "simple-rbac-setup/roles.rbac.authorization.k8s.io/pod-reader-role"]),
    ("sregym-namespace-memory-limit", ["hotel-reservation/resourcequotas/memory-quota"]),
    ("sregym-psa-restricted-blocks-recreation-hotel-reservation", ["/namespaces/hotel-reservation",
                                                                   "hotel-reservation/Namespace/hotel-reservation"]),
])
def test_kinds_are_read_as_kubectl_reads_resource_names(name, spellings):
    """Plural and group-qualified resource names, and a namespace given for a cluster-scoped object, name
    the object as kubectl resolves them; another group's resource of that name names nothing."""
    state = derived(name, "faulty")
    for text in spellings:
        verdict = run(name, {"entities": [{"name": text, "contributing_factor": True}]}, state, task="localize"
                      if "localize" in evaluator(name)["SPEC"]["tasks"] else "diagnose")
        assert verdict["metrics"]["root_cause_entity_recall"] == 1.0, (text, verdict["checks"])
    namespace, kind, obj_name = spellings[0].split("/", 2)
    wrong_group = f"{namespace}/{kind}.example.com/{obj_name}"
    verdict = run(name, {"entities": [{"name": wrong_group, "contributing_factor": True}]}, state,
                  task="localize" if "localize" in evaluator(name)["SPEC"]["tasks"] else "diagnose")
    assert verdict["metrics"]["root_cause_entity_recall"] == 0.0


def test_a_schedule_and_the_experiments_it_spawns_are_one_fault():
    """Chaos Mesh's schedule controller names each experiment `<schedule>-<5 characters of Kubernetes' name
    generator>`, owned by the Schedule: naming the Schedule or its real child is the root cause; a name of
    another shape, or a child the state shows does not exist, is not."""
    name = "otel-ad-jvm-heap-stress"
    state = derived(name, "faulty")
    answer = perfect(name)

    def named(text, st=state):
        entities = [{"name": text, "contributing_factor": True}]
        return diagnose(name, dict(answer, entities=entities), st)["metrics"]["root_cause_entity_recall"]

    assert named("chaos-mesh/Schedule/ad-jvm-chaos") == 1.0
    assert named("chaos-mesh/schedules.chaos-mesh.org/ad-jvm-chaos") == 1.0
    offline = dict(state, captured=[c for c in state["captured"] if not c.endswith("/JVMChaos")])
    assert named("chaos-mesh/JVMChaos/ad-jvm-chaos-x7k2p", offline) == 1.0  # the state did not capture JVMChaos
    assert named("chaos-mesh/JVMChaos/ad-jvm-chaos-x7k2p") == 0.0  # it did, and holds no such experiment
    assert named("chaos-mesh/JVMChaos/ad-jvm-chaos-x7k2pq") == 0.0
    assert named("chaos-mesh/JVMChaos/ad-jvm-chaos-aeiou") == 0.0  # no vowels in generated names
    assert named("chaos-mesh/StressChaos/ad-jvm-chaos-x7k2p") == 0.0
    schedule = obj(state, "Schedule", "ad-jvm-chaos")
    child = {"apiVersion": "chaos-mesh.org/v1alpha1", "kind": "JVMChaos",
             "metadata": {"name": "ad-jvm-chaos-x7k2p", "namespace": "chaos-mesh", "labels": {"managed-by": "ad-jvm-chaos"},
                          "ownerReferences": [{"apiVersion": "chaos-mesh.org/v1alpha1", "kind": "Schedule",
                                               "name": "ad-jvm-chaos", "uid": schedule["metadata"].get("uid", "u"),
                                               "controller": True}]},
             "spec": schedule["spec"]["jvmChaos"]}
    live = copy.deepcopy(state)
    live["resources"]["items"].append(child)
    live["captured"] = sorted(set(live.get("captured", [])) | {"chaos-mesh/JVMChaos"})
    assert named("chaos-mesh/JVMChaos/ad-jvm-chaos-x7k2p", live) == 1.0
    assert named("chaos-mesh/JVMChaos/ad-jvm-chaos-b4d9z", live) == 0.0  # captured, and not there


def test_two_root_causes_of_two_schedules_are_each_found():
    """Each fault of a two-schedule scenario is its own root cause: naming both Schedules is exact."""
    name = "otel-valkey-cart-stress-and-network-delay"
    groups = [g for g in evaluator(name)["SPEC"]["diagnosis"]["groups"] if g["root_cause"]]
    assert len({(g["kind"], g["namespace"], g["name"]) for g in groups}) == len(groups)
    both = dict(perfect(name), entities=[{"name": f"chaos-mesh/Schedule/{s}", "contributing_factor": True}
                                         for s in ("valkey-cart-stress-chaos", "accounting-standard")])
    verdict = diagnose(name, both)
    assert verdict["metrics"]["root_cause_entity_recall"] == 1.0
    assert verdict["metrics"]["root_cause_entity_precision"] == 1.0


def test_json_integers_of_any_length_and_time_fractions_of_any_length_are_read():
    ns = evaluator("otel-checkout-nonexistent-image")
    assert ns["loads"]('{"a": ' + "9" * 5000 + "}")["a"] == float("inf")
    assert ns["loads"]('{"a": 12}')["a"] == 12
    assert ns["rfc3339"]("2026-03-01T10:01:00.1234567890Z") == ns["rfc3339"]("2026-03-01T10:01:00.123456Z")
    assert ns["rfc3339"]("2026-03-01T10:01:00." + "5" * 40 + "+01:00") is not None
    assert ns["rfc3339"]("2026-03-01T10:01:00.Z") is None


def test_contract_values_take_ascii_digits_only_as_their_standards_do():
    """RFC 3339's and a quantity's DIGIT is 0-9: other scripts' digits (Arabic-Indic, fullwidth), which a
    Unicode-aware `\\d` and `int()` read, make no time and no quantity; a leap second is a time."""
    ns = evaluator("otel-checkout-nonexistent-image")
    assert ns["rfc3339"]("\u0662\u0660\u0662\u0666-03-01T10:05:00Z") is None
    assert ns["rfc3339"]("\uff12\uff10\uff12\uff16-03-01T10:05:00Z") is None
    assert ns["number"]("\uff11\uff10\uff10Mi") is None
    assert ns["number"]("100Mi") == 100 * 1024 * 1024
    assert ns["rfc3339"]("2016-12-31T23:59:60Z") == ns["rfc3339"]("2017-01-01T00:00:00Z")
    assert ns["rfc3339"]("2016-12-31T23:59:61Z") is None


def test_a_pod_the_agent_saw_and_the_fix_replaced_is_still_the_object_it_named():
    """Graded against the state after the fix, the crash-looping pod the agent named is gone; the state's
    `incident` (the pods as the agent found them) keeps it nameable. A pod in neither names nothing."""
    name = "sregym-liveness-probe-misconfiguration-hotel-reservation"
    faulty, solved = derived(name, "faulty"), derived(name, "solved")
    pods = [o for o in faulty["resources"]["items"] if o["kind"] == "Pod"
            and o["metadata"]["name"].startswith("recommendation-")]
    gone = [p for p in pods if not any(o["kind"] == "Pod" and o["metadata"]["name"] == p["metadata"]["name"]
                                       for o in solved["resources"]["items"])]
    if not gone:  # the derived solved state keeps the pod names: make the fix replace them
        solved["resources"]["items"] = [o for o in solved["resources"]["items"] if o not in pods or
                                        not o["metadata"]["name"].startswith("recommendation-")]
        gone = pods
    assert gone
    pod = gone[0]["metadata"]["name"]
    answer = {"entities": [{"name": "hotel-reservation/Deployment/recommendation", "contributing_factor": True},
                           {"name": f"hotel-reservation/Pod/{pod}", "contributing_factor": True}]}
    without = run(name, answer, solved, task="localize")
    assert not without["passed"], without["checks"]
    with_incident = dict(solved, incident={"at": "2026-03-01T10:00:00Z", "resources": {"kind": "List",
                                                                                         "items": faulty["resources"]["items"]}})
    verdict = run(name, answer, with_incident, task="localize")
    assert verdict["passed"] and verdict["score"] == 1.0, verdict["checks"]
    ghost = dict(answer, entities=answer["entities"][:1] + [{"name": "hotel-reservation/Pod/recommendation-5f7d9c8b6d-zzzzz",
                                                             "contributing_factor": True}])
    assert not run(name, ghost, with_incident, task="localize")["passed"]
    assert "incident" in refused(name, answer, dict(solved, incident={"resources": 3}), task="localize")


def test_the_chain_is_graded_on_the_spread_from_the_root_cause_between_components():
    """ITBench's truth for product-catalog lists checkout's fan-out, which no edge from the root cause reaches,
    and names the root's pods where an answer names its Service: the spread from the root cause, node by
    component, is what is graded; an answer that follows it passes."""
    name = "otel-product-catalog-nonexistent-image"
    natural = {"entities": [{"name": "otel-demo/Deployment/product-catalog", "contributing_factor": True}],
               "propagations": [{"source": "otel-demo/Deployment/product-catalog", "target": "otel-demo/Service/product-catalog"},
                                {"source": "otel-demo/Service/product-catalog", "target": "otel-demo/Service/frontend"},
                                {"source": "otel-demo/Service/product-catalog", "target": "otel-demo/Service/recommendation"},
                                {"source": "otel-demo/Service/frontend", "target": "otel-demo/Service/frontend-proxy"}]}
    verdict = diagnose(name, natural)
    assert verdict["passed"] and verdict["metrics"]["propagation_chain"] == 1.0, verdict["checks"]
    # checkout's own fan-out is off the path: neither required nor counted against the answer
    with_side = dict(natural, propagations=natural["propagations"] + [
        {"source": "otel-demo/Service/checkout", "target": "otel-demo/Service/payment"}])
    assert diagnose(name, with_side)["metrics"]["propagation_chain"] == 1.0
    # the spread reversed still fails
    reversed_ = dict(natural, propagations=[dict(p, source=p["target"], target=p["source"]) for p in natural["propagations"]])
    assert not diagnose(name, reversed_)["passed"]


def test_every_runtime_pattern_reading_digits_or_word_characters_is_ascii():
    """`\\d` and `\\w` match every script's digits and letters unless re.ASCII is given; the grader reads
    Kubernetes quantities, times and names, whose grammars are ASCII. A pattern added without the flag fails
    here (spell `[0-9]` or pass re.ASCII)."""
    import ast

    runtime = Path(__file__).resolve().parents[2] / "itbench_dsl" / "runtime"
    offenders = []
    for path in sorted(runtime.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and isinstance(node.func.value, ast.Name) and node.func.value.id == "re"
                    and node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
                continue
            if not any(c in node.args[0].value for c in ("\\d", "\\w")):
                continue
            flags = ast.unparse(node.args[-1]) if len(node.args) > 1 else ""
            flags += " ".join(ast.unparse(k.value) for k in node.keywords if k.arg == "flags")
            if "ASCII" not in flags and "re.A" not in flags:
                offenders.append(f"{path.name}:{node.lineno}")
    assert not offenders, offenders


@pytest.mark.parametrize("where", ["validationFailureAction", "validationFailureActionOverrides"])
def test_a_rule_level_audit_takes_precedence_over_the_policys_enforce(where):
    """Kyverno resolves a rule's action from the rule first (its failureAction, its failureActionOverrides) and
    falls back on the policy's fields only where the rule sets none: a policy-level Enforce every rule
    overrides with Audit reports only; one rule left to it blocks."""
    name = "cis-k8s-5-2-2-privileged-kyverno"
    policy = dict(copy.deepcopy(NO_PRIVILEGED), metadata={"name": "agent-policy"})
    enforce = "Enforce" if where == "validationFailureAction" else [{"action": "Enforce", "namespaces": ["ciso-target"]}]
    audit = {"failureAction": "Audit"} if where == "validationFailureAction" else {
        "failureActionOverrides": [{"action": "Audit", "namespaces": ["ciso-target"]}]}
    policy["spec"][where] = enforce
    for rule in policy["spec"]["rules"]:
        rule["validate"].update(audit)
    assert run(name, None, ciso_state(name, "fail", "pass", policy))["passed"]
    policy["spec"]["rules"].append(dict(copy.deepcopy(policy["spec"]["rules"][0]), name="left-to-the-policy"))
    for key in audit:
        del policy["spec"]["rules"][-1]["validate"][key]
    verdict = run(name, None, ciso_state(name, "fail", "pass", policy))
    assert not verdict["passed"] and "ciso.contract" in failed(verdict)


@pytest.mark.parametrize("why", ["a rule name over 63 characters", "a rule-level failureAction in lower case",
                                 "a policy name over 63 characters", "a podSecurity level outside its enum"])
def test_a_policy_the_crd_schema_or_kyverno_refuses_breaks_the_contract(why):
    """The ClusterPolicy CRD's schema (the vendored one: maxLength, enum) and Kyverno's own name rule refuse
    these: no cluster holds the policy, so it reports nothing."""
    name = "cis-k8s-5-2-2-privileged-kyverno"
    policy = dict(copy.deepcopy(NO_PRIVILEGED), metadata={"name": "agent-policy"})
    rule = policy["spec"]["rules"][0]
    if why.startswith("a rule name"):
        rule["name"] = "r" * 64
    elif why.startswith("a rule-level"):
        rule["validate"]["failureAction"] = "audit"
    elif why.startswith("a policy name"):
        policy["metadata"]["name"] = "p" * 64
    else:
        rule["validate"] = {"message": "m", "podSecurity": {"level": "Baseline", "version": "latest"}}
    spec = evaluator(name)["SPEC"]
    verdict = evaluator(name)["evaluate"](spec, None, None, task="policy", artifact=("kyverno", [policy]))
    assert not verdict["passed"] and "ciso.contract" in failed(verdict), why
