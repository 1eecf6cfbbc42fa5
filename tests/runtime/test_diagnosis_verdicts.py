"""Diagnosis verdicts tried by hand (docs/evaluator.md, `diagnose`): the names an answer gives against the
truth's objects as the cluster shows them (a Schedule's experiments, a second fault, objects a fault created, a
pod replaced since), the chain over what the root cause reaches, and names that must not be credited (a Service
aliased to the root cause, a FinOps bare name whose `type` names another kind). The states are the compiler's
derived ones, edited as a cluster or an agent would."""

from __future__ import annotations

import copy
import re
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

from test_evaluator import bundle, derived, run  # noqa: E402

from itbench_dsl.analysis.states import perfect_answer  # noqa: E402
from itbench_dsl.backends.decoys import decoys  # noqa: E402


def perfect(name: str, state: dict | None) -> dict:
    return perfect_answer(bundle(name)[0], state)


def created(name: str, text: str) -> str:
    """`text` with each `{Kind}` replaced by the name of the object of that kind the fault creates, read from the
    faulty state: the compiler names them, and the test must not guess how."""
    items = derived(name, "faulty")["resources"]["items"]
    # the application's objects and its decoys (created by the injection too: backends/cover.py)
    healthy = {(o["kind"], o["metadata"]["name"]) for o in [*derived(name, "healthy")["resources"]["items"],
                                                             *decoys(bundle(name)[0])]}
    return re.sub(r"\{(\w+)\}", lambda m: next(o["metadata"]["name"] for o in items if o["kind"] == m.group(1)
                                                and (o["kind"], o["metadata"]["name"]) not in healthy), text)


def diagnose(name: str, entities, state, propagations=None, task="diagnose") -> dict:
    answer = perfect(name, state)
    answer["entities"] = [{"name": n, "contributing_factor": True} for n in entities]
    if propagations is not None:
        answer["propagations"] = [{"source": a, "target": b} for a, b in propagations]
    return run(name, answer, state, task=task)


# ---- FinOps: a bare name whose `type` says a kind ------------------------------------------------------------

HPA = "otel-frontend-hpa-misconfigured"


@pytest.mark.parametrize("kind_type, passes", [
    ("misconfigured_hpa", True),                       # no kind said: the name alone
    ("Deployment: misconfigured_hpa", True),
    ("HorizontalPodAutoscaler: misconfigured_hpa", True),
    ("hpa: HPA target too low", True),
    ("no: misconfigured_hpa", False),                  # `no` followed by `:` is Node's short name
    ("Service: misconfigured_hpa", False),             # the Service frontend wastes nothing
    ("ConfigMap: misconfigured_hpa", False),           # no ConfigMap frontend: names nothing
    ("configmaps misconfigured_hpa", False),
])
def test_a_finops_bare_name_is_of_the_kind_its_type_says(kind_type, passes):
    state = derived(HPA, "faulty")
    verdict = run(HPA, {"resource": [{"name": "frontend", "type": kind_type}]}, state, task="diagnose")
    assert verdict["passed"] is passes, verdict["checks"]


# ---- a Schedule's fault, through the experiments it spawns ---------------------------------------------------

LOSS = "otel-checkout-payment-network-loss"


def _with_experiment(state: dict, name: str, owner: str) -> dict:
    state = copy.deepcopy(state)
    state["resources"]["items"].append({
        "apiVersion": "chaos-mesh.org/v1alpha1", "kind": "NetworkChaos",
        "metadata": {"name": name, "namespace": "chaos-mesh", "ownerReferences": [
            {"apiVersion": "chaos-mesh.org/v1alpha1", "kind": "Schedule", "name": owner, "uid": "1"}]}, "spec": {}})
    state["captured"] = sorted(set(state.get("captured", ())) | {"chaos-mesh/NetworkChaos"})
    return state


@pytest.mark.parametrize("named, passes", [
    ("chaos-mesh/NetworkChaos/{Schedule}", True),   # the Schedule by its experiments' kind
    ("networkchaos/{Schedule}", True),
    ("chaos-mesh/PodChaos/{Schedule}", False),      # not the kind it spawns
    ("chaos-mesh/NetworkChaos/{Schedule}-0a1b2", True),  # spawned, owned by it in the state
    ("chaos-mesh/NetworkChaos/other-0a1b2", True),  # the owner says, whatever the name
])
def test_a_schedule_is_named_through_its_experiments(named, passes):
    named = created(LOSS, named)
    state = _with_experiment(derived(LOSS, "faulty"), named.rpartition("/")[2], created(LOSS, "{Schedule}")) \
        if named.endswith("0a1b2") else derived(LOSS, "faulty")
    verdict = diagnose(LOSS, [named], state)
    assert verdict["passed"] is passes, verdict["checks"]


def test_an_experiment_owned_by_another_schedule_names_another_fault():
    spawned = created(LOSS, "{Schedule}-bcdfg")
    state = _with_experiment(derived(LOSS, "faulty"), spawned, "someone-else")
    assert not diagnose(LOSS, ["chaos-mesh/NetworkChaos/" + spawned], state)["passed"]


# ---- a Service aliased to the root cause is not the root cause ------------------------------------------------

@pytest.mark.parametrize("name, service, task", [
    ("sregym-liveness-probe-misconfiguration-social-network", "social-network/Service/user-service", "localize"),
    ("otel-valkey-cart-out-of-memory", "otel-demo/Service/valkey-cart", "diagnose"),  # ITBench's own alias
])
def test_an_unchanged_service_aliased_to_the_root_cause_fails(name, service, task):
    state = derived(name, "faulty")
    right = diagnose(name, [e["name"] for e in perfect(name, state)["entities"]], state, task=task)
    assert right["passed"] and right["score"] == 1.0
    wrong = diagnose(name, [service], state, task=task)
    assert not wrong["passed"] and wrong["score"] < 1.0
    # another Service with the same selector names no root cause either
    twin = copy.deepcopy(next(o for o in state["resources"]["items"] if o["kind"] == "Service"
                              and o["metadata"]["name"] == service.rpartition("/")[2]))
    twin["metadata"] = {"name": "twin", "namespace": twin["metadata"]["namespace"]}
    state["resources"]["items"].append(twin)
    assert not diagnose(name, [service.rpartition("/")[0] + "/twin"], state, task=task)["passed"]


def test_a_bare_component_name_names_its_workload_with_its_service():
    name = "otel-checkout-nonexistent-image"  # root cause: Deployment checkout; `checkout` is it and its Service
    state = derived(name, "faulty")
    assert diagnose(name, ["checkout"], state)["passed"]
    assert not diagnose(name, ["otel-demo/Service/checkout"], state)["passed"]


def test_a_service_the_truth_names_as_the_root_cause_is_credited():
    name = "bookinfo-productpage-strict-mtls"
    state = derived(name, "faulty")
    assert diagnose(name, ["book-info/Service/productpage-v1"], state)["passed"]


# ---- every injected fault, and what it created, names a cause -------------------------------------------------

@pytest.mark.parametrize("name, entities, passes", [
    # a second fault the truth leaves out: right to name beside the root cause, not the root cause alone
    ("otel-ad-cart-nonexistent-node", ["otel-demo/Deployment/ad", "otel-demo/Deployment/cart"], True),
    ("otel-ad-cart-nonexistent-node", ["otel-demo/Deployment/ad"], True),
    ("otel-ad-cart-nonexistent-node", ["otel-demo/Deployment/cart"], False),
    # the second fault's Schedule stands for the root cause its target's pods are
    ("otel-cart-unassigned-limits", ["chaos-mesh/Schedule/{Schedule}"], True),
    ("otel-cart-unassigned-limits", ["otel-demo/Deployment/cart", "chaos-mesh/StressChaos/{Schedule}"], True),
    # objects Istio faults create
    ("bookinfo-gateway-denies-get", ["book-info/AuthorizationPolicy/{AuthorizationPolicy}"], True),
    ("bookinfo-productpage-strict-mtls", ["book-info/PeerAuthentication/{PeerAuthentication}"], True),
    ("bookinfo-productpage-strict-mtls", ["book-info/Deployment/productpage-v1"], False),  # unchanged
    # a fault's target the truth names another object for stays a wrong prediction
    ("otel-checkout-quota-load-surge", ["otel-demo/Deployment/checkout", "otel-demo/ConfigMap/flagd-config"], False),
])
def test_each_injected_fault_names_a_cause(name, entities, passes):
    entities = [created(name, e) for e in entities]
    state = derived(name, "faulty")
    for at in (state, None):
        verdict = diagnose(name, entities, at)
        assert verdict["passed"] is passes, (at is None, verdict["checks"])


# ---- a truth chain with gaps: graded over what the root cause reaches, the gaps contracted ---------------------

def _chain(name: str, edges) -> dict:
    state = derived(name, "faulty")
    answer = perfect(name, state)
    answer["propagations"] = [{"source": created(name, a), "target": created(name, b)} for a, b in edges]
    return run(name, answer, state, task="diagnose")


@pytest.mark.parametrize("name, edges, passes", [
    # the truth's chain starts at the Schedule's target, with no edge from the Schedule: contracted
    ("otel-checkout-payment-network-loss", [("chaos-mesh/Schedule/{Schedule}", "otel-demo/Service/checkout"),
                                            ("otel-demo/Service/checkout", "otel-demo/Service/frontend")], True),
    ("otel-checkout-payment-network-loss", [("otel-demo/Service/checkout", "otel-demo/Service/frontend")], True),
    ("otel-checkout-payment-network-loss", [("otel-demo/Service/frontend", "otel-demo/Service/checkout")], False),
    ("bookinfo-gateway-denies-get", [("book-info/Gateway/bookinfo-gateway", "book-info/Service/productpage"),
                                     ("book-info/Service/productpage", "book-info/Service/reviews")], True),
    # the truth says flagd-config -> flagd and ad -> frontend: the answer's flagd -> ad bridges the gap
    ("otel-ad-failure-flag", [("otel-demo/ConfigMap/flagd-config", "otel-demo/Service/flagd"),
                              ("otel-demo/Service/flagd", "otel-demo/Service/ad"),
                              ("otel-demo/Service/ad", "otel-demo/Service/frontend")], True),
    # a bridge into a node the truth's chain does not hold is an invented edge
    ("otel-ad-failure-flag", [("otel-demo/ConfigMap/flagd-config", "otel-demo/Service/flagd"),
                              ("otel-demo/Service/flagd", "otel-demo/Service/cart")], False),
    # bridges alone say none of the truth's edges
    ("otel-ad-failure-flag", [("otel-demo/Service/flagd", "otel-demo/Service/ad")], False),
    # a side branch into the root cause, said backwards, is no bridge
    ("otel-ad-priority-preemption", [("otel-demo/Deployment/ad", "otel-demo/Service/frontend"),
                                     ("otel-demo/Deployment/ad", "/PriorityClass/application-critical")], False),
])
def test_a_chain_with_gaps_is_graded_over_what_the_root_cause_reaches(name, edges, passes):
    verdict = _chain(name, edges)
    assert verdict["passed"] is passes, verdict["checks"]


# ---- a truth pod the cluster no longer holds ---------------------------------------------------------------

OOM = "otel-valkey-cart-out-of-memory"


def _pods_gone(state: dict, named: str, how: str) -> dict:
    state = copy.deepcopy(state)
    items = []
    for o in state["resources"]["items"]:
        if o["kind"] == "Pod" and o["metadata"]["name"] == named:
            ref = o["metadata"]["ownerReferences"][0]["name"]
            if how == "replaced":  # a new pod of the same ReplicaSet
                items.append({**o, "metadata": {**o["metadata"], "name": ref + "-q8w2m"}})
            elif how == "deleted, its ReplicaSet left":
                items.append({"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {
                    "name": ref, "namespace": o["metadata"]["namespace"]}, "spec": {"replicas": 0}})
            continue
        items.append(o)
    state["resources"]["items"] = items
    return state


@pytest.mark.parametrize("how, passes", [("replaced", True), ("deleted, its ReplicaSet left", True),
                                         ("deleted, nothing left to show it", False)])
def test_a_pod_replaced_or_deleted_since_is_named_by_the_name_it_had(how, passes):
    faulty = derived(OOM, "faulty")
    old = perfect(OOM, faulty)["entities"][0]["name"]
    state = _pods_gone(faulty, old.rpartition("/")[2], how)
    assert diagnose(OOM, [old], state)["passed"] is passes
    if how == "replaced":  # and by the name of its replacement
        new = old.rpartition("-")[0] + "-q8w2m"
        assert diagnose(OOM, [new], state)["passed"]


def test_a_pod_of_no_replicaset_the_state_shows_names_nothing():
    faulty = derived(OOM, "faulty")
    old = perfect(OOM, faulty)["entities"][0]["name"]
    state = _pods_gone(faulty, old.rpartition("/")[2], "replaced")
    ghost = old.rsplit("-", 2)[0] + "-5f7d9c8b6d-zzzzz"
    assert not diagnose(OOM, [ghost], state)["passed"]


PROBES = "k8sbench-fix-probes"  # localize: the root cause is orders/Deployment/webapp


def _replicaset_of_webapp(state: dict) -> str:
    pod = next(o for o in state["resources"]["items"] if o["kind"] == "Pod" and o["metadata"]["name"].startswith("webapp-"))
    return next(r["name"] for r in pod["metadata"]["ownerReferences"] if r["kind"] == "ReplicaSet")


@pytest.mark.parametrize("invented, passed", [(False, True), (True, False)])
def test_a_replicaset_its_pods_show_names_its_deployment(invented, passed):
    """The state captures no ReplicaSets; a pod's owner references show webapp's: naming it names the
    Deployment (its pod template is the Deployment's). A ReplicaSet no pod shows names nothing."""
    state = derived(PROBES, "faulty")
    assert not any(o["kind"] == "ReplicaSet" for o in state["resources"]["items"])
    name = "webapp-zzzzzzzzzz" if invented else _replicaset_of_webapp(state)
    verdict = run(PROBES, {"entities": [{"name": f"orders/ReplicaSet/{name}", "contributing_factor": True}]},
                  state, task="localize")
    assert verdict["passed"] is passed, verdict["checks"]
    assert ("naming no object" in verdict["checks"][0]["detail"]) is invented


# ---- kinds by kubectl's short names -------------------------------------------------------------------------

def _respelled(answer: dict, spellings: dict) -> dict:
    """The answer with each name's kind spelled as `spellings` says (`ns/Kind/name` -> `ns/short/name`)."""
    def respell(text):
        parts = text.split("/")
        if len(parts) == 3 and parts[1] in spellings:
            parts[1] = spellings[parts[1]]
        return "/".join(parts)
    answer = copy.deepcopy(answer)
    for e in answer["entities"]:
        e["name"] = respell(e["name"])
    for p in answer.get("propagations", ()):
        p["source"], p["target"] = respell(p["source"]), respell(p["target"])
    return answer


@pytest.mark.parametrize("name, spellings, passes", [
    ("otel-ad-priority-preemption", {"PriorityClass": "pc", "Deployment": "deploy", "Service": "svc"}, True),
    ("bookinfo-gateway-denies-get", {"Gateway": "gw"}, True),          # Istio's Gateway CRD declares `gw`
    ("bookinfo-gateway-denies-get", {"Gateway": "GW"}, True),
    ("otel-ad-priority-preemption", {"PriorityClass": "pdb"}, False),  # another kind's short name
])
def test_kinds_are_read_by_kubectls_short_names(name, spellings, passes):
    state = derived(name, "faulty")
    answer = perfect(name, state)
    respelled = _respelled(answer, spellings)
    assert respelled != answer
    verdict = run(name, respelled, state, task="diagnose")
    assert verdict["passed"] is passes, verdict["checks"]
