"""An object a fault created is judged by what it does, under any name (docs/evaluator.md, "Objects a fault
created"): deleting it by name while a copy with its acting part is left (a twin), or renaming it, leaves the
fault, and fails; deleting it passes; another object of its kind that acts otherwise (an allow-all policy the
agent added, a paused experiment) is no twin, and passes.
"""

from __future__ import annotations

import copy
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))
TESTS = HERE.parent
if str(TESTS) not in sys.path:
    sys.path.insert(0, str(TESTS))

from test_evaluator import MITIGATED, bundle, derived, evaluator, failed, mitigate, refused  # noqa: E402

from itbench_dsl.backends.decoys import decoys  # noqa: E402

from itbench_dsl.runtime import evaluator as rt  # noqa: E402

POLICY = "otel-frontend-ingress-blocked"  # a NetworkPolicy denying the frontend's ingress
# (posed with `mitigate`, the prompt handing the agent Chaos Mesh's kinds: test_evaluator.MITIGATED)
SCHEDULE = "otel-ad-http-response-delay" + MITIGATED  # a Chaos Mesh Schedule of HTTPChaos
PODCHAOS = "otel-checkout-pod-kill-once" + MITIGATED  # a PodChaos
GATEWAY = "bookinfo-gateway-denies-get"  # an Istio AuthorizationPolicy denying GET at the gateway
QUOTA = "otel-checkout-insufficient-quota"  # a ResourceQuota below what the namespace runs
KINDS = {POLICY: "NetworkPolicy", SCHEDULE: "Schedule", PODCHAOS: "PodChaos", GATEWAY: "AuthorizationPolicy",
         QUOTA: "ResourceQuota"}


def _created(name: str) -> dict:
    """The fault's object, as the faulty state holds it."""
    # the application's objects, and its decoys (created by the injection too: backends/cover.py)
    known = {(o["kind"], o["metadata"].get("namespace"), o["metadata"]["name"])
             for o in [*derived(name, "healthy")["resources"]["items"], *decoys(bundle(name)[0])]}
    return next(o for o in derived(name, "faulty")["resources"]["items"] if o["kind"] == KINDS[name]
                and (o["kind"], o["metadata"].get("namespace"), o["metadata"]["name"]) not in known)


def _solved_with(name: str, *objects: dict) -> dict:
    """The solved state (the fault's object deleted) with `objects` added."""
    state = derived(name, "solved")
    state["resources"]["items"] += [copy.deepcopy(o) for o in objects]
    return state


def _renamed(obj: dict, name: str, namespace: str | None = None, labels: dict | None = None) -> dict:
    out = copy.deepcopy(obj)
    out["metadata"]["name"] = name
    if namespace is not None:
        out["metadata"]["namespace"] = namespace
    if labels is not None:
        out["metadata"]["labels"] = labels
    return out


def _created_check(name: str, verdict: dict) -> dict:
    original = _created(name)
    ref = f"{original['metadata']['namespace']}/{original['kind']}/{original['metadata']['name']}"
    return next(c for c in verdict["checks"] if c["id"] == f"created.{ref}")


@pytest.mark.parametrize("name", sorted(KINDS))
def test_the_true_deletion_passes(name):
    verdict = mitigate(name, derived(name, "solved"))
    assert verdict["passed"], failed(verdict)


@pytest.mark.parametrize("name", sorted(KINDS))
def test_a_twin_left_under_another_name_fails(name):
    twin = _renamed(_created(name), "copy-of-the-fault", labels={"owner": "agent"})  # labels are not what acts
    verdict = mitigate(name, _solved_with(name, twin))
    check = _created_check(name, verdict)
    assert not verdict["passed"] and not check["passed"], failed(verdict)
    assert "copy-of-the-fault does what it did" in check["detail"]


@pytest.mark.parametrize("name", [SCHEDULE, PODCHAOS])
def test_a_chaos_twin_in_the_application_namespace_fails(name):
    # an experiment's selector names the namespaces it acts on: where the object lives changes nothing
    twin = _renamed(_created(name), "moved", namespace="otel-demo")
    verdict = mitigate(name, _solved_with(name, twin))
    assert not _created_check(name, verdict)["passed"], failed(verdict)


def test_a_schedule_twin_with_another_period_and_delay_still_fails():
    twin = _renamed(_created(SCHEDULE), "slower")
    twin["spec"].update(schedule="@every 10m", historyLimit=5)
    twin["spec"]["httpChaos"].update(delay="1s", duration="30s")  # how long and how hard, not whom and what
    verdict = mitigate(SCHEDULE, _solved_with(SCHEDULE, twin))
    assert not _created_check(SCHEDULE, verdict)["passed"], failed(verdict)


@pytest.mark.parametrize("name", [SCHEDULE, PODCHAOS])
def test_a_paused_chaos_twin_passes(name):
    twin = _renamed(_created(name), "paused")
    twin["metadata"]["annotations"] = {rt.CHAOS_PAUSE: "true"}
    verdict = mitigate(name, _solved_with(name, twin))
    assert verdict["passed"], failed(verdict)


def _harmless(name: str, obj: dict) -> None:
    spec = obj["spec"]
    if name == POLICY:  # the agent's allow-all policy for the same pods
        spec["ingress"] = [{}]
    elif name == SCHEDULE:  # an experiment on pods of no one
        spec["httpChaos"]["selector"] = {"labelSelectors": {"app": "nothing-runs-this"}, "namespaces": ["otel-demo"]}
    elif name == PODCHAOS:
        spec["selector"] = {"labelSelectors": {"app": "nothing-runs-this"}, "namespaces": ["otel-demo"]}
    elif name == GATEWAY:
        spec["action"] = "AUDIT"
    elif name == QUOTA:
        spec["hard"] = {"pods": "1000"}


@pytest.mark.parametrize("name", sorted(KINDS))
def test_a_harmless_object_of_the_same_kind_passes(name):
    other = _renamed(_created(name), "agent-added")
    _harmless(name, other)
    verdict = mitigate(name, _solved_with(name, other))
    assert verdict["passed"], failed(verdict)


def test_the_fault_object_kept_and_neutralised_beside_its_harmless_copy_passes():
    policy = _created(POLICY)
    allow = copy.deepcopy(policy)
    allow["spec"]["ingress"] = [{}]
    verdict = mitigate(POLICY, _solved_with(POLICY, allow, _renamed(allow, "agent-allow")))
    assert verdict["passed"], failed(verdict)


def test_an_object_in_another_namespace_acting_on_its_own_pods_is_no_twin():
    # a NetworkPolicy acts on the pods of its namespace: the same spec elsewhere selects others
    policy = _renamed(_created(POLICY), "jaeger-system", namespace="elsewhere")
    assert rt.acting(policy) != rt.acting(_created(POLICY))


# ---- acting: the part that acts, as the API server stores it -----------------------------------------------


def _policy(spec: dict, name: str = "p") -> dict:
    return {"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
            "metadata": {"name": name, "namespace": "n", "labels": {"a": "b"}, "resourceVersion": "7"},
            "spec": spec}


def test_acting_reads_a_network_policy_as_the_api_server_stores_it():
    written = _policy({"podSelector": {"matchLabels": {"app": "x"}}, "ingress": [{"ports": [{"port": 80}]}]})
    served = _policy({"podSelector": {"matchLabels": {"app": "x"}}, "policyTypes": ["Ingress"],
                      "ingress": [{"ports": [{"port": 80, "protocol": "TCP"}]}]}, name="q")
    served["metadata"] = {"name": "q", "namespace": "n", "uid": "u"}
    assert rt.acting(written) == rt.acting(served)
    # a deny-all ingress is one however spelled; a rule admitting all is another policy
    deny = rt.acting(_policy({"podSelector": {}, "policyTypes": ["Ingress"]}))
    assert deny == rt.acting(_policy({"podSelector": {}, "policyTypes": ["Ingress"], "ingress": []}))
    assert deny != rt.acting(_policy({"podSelector": {}, "policyTypes": ["Ingress"], "ingress": [{}]}))
    assert deny != rt.acting(_policy({"podSelector": {}, "policyTypes": ["Ingress", "Egress"]}))


def test_acting_reads_a_quota_by_value_and_a_chaos_selector_in_any_order():
    quota = {"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": "q", "namespace": "n"},
             "spec": {"hard": {"memory": "1Gi"}}}
    other = copy.deepcopy(quota)
    other["spec"]["hard"]["memory"] = "1024Mi"
    assert rt.acting(quota) == rt.acting(other)
    chaos = {"apiVersion": "chaos-mesh.org/v1alpha1", "kind": "PodChaos", "metadata": {"name": "c", "namespace": "x"},
             "spec": {"action": "pod-kill", "mode": "one", "selector": {"namespaces": ["a", "b"]}}}
    moved = copy.deepcopy(chaos)
    moved["metadata"]["namespace"] = "y"
    moved["spec"]["selector"]["namespaces"] = ["b", "a"]
    assert rt.acting(chaos) == rt.acting(moved)
    moved["spec"]["action"] = "container-kill"
    assert rt.acting(chaos) != rt.acting(moved)


def test_an_absent_predicate_on_a_created_object_fails_while_its_twin_acts():
    policy = _created(POLICY)
    ref = {"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy", "namespace": "otel-demo",
           "name": policy["metadata"]["name"], "acting": rt.acting(policy)}
    pred = {"kind": "state", "state": "absent", "target": ref}
    created = {("NetworkPolicy", "otel-demo", ref["name"]): ref}
    state = rt.State(_solved_with(POLICY, _renamed(policy, "twin")))
    ok, detail = rt.predicate_check(pred, state, created)
    assert not ok and "twin does what it did" in detail
    assert rt.predicate_check(pred, rt.State(derived(POLICY, "solved")), created)[0]


# ---- what a state must hold ---------------------------------------------------------------------------------


def test_the_state_must_hold_the_chaos_kind_where_the_application_runs():
    spec = evaluator(SCHEDULE)["SPEC"]
    assert ["otel-demo", "Schedule"] in spec["requires"]["kinds"]
    assert ["chaos-mesh", "Schedule"] in spec["requires"]["kinds"]
    state = derived(SCHEDULE, "solved")
    state["captured"] = [c for c in state["captured"] if c != "otel-demo/Schedule"]
    assert "otel-demo/Schedule" in refused(SCHEDULE, None, state, task="mitigate")


def test_a_run_captures_the_chaos_kind_in_its_api_group_where_the_application_runs(tmp_path):
    from support.compiling import SCENARIOS, compile_ok
    from itbench_dsl.run import lifecycle

    name = SCHEDULE.removesuffix(MITIGATED)
    result = compile_ok((SCENARIOS / "sre" / f"{name}.itb").read_bytes(), f"{name}.itb")
    for name, data in result.files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_bytes(data)
    b = lifecycle.load_bundle(tmp_path)
    paths = {s.detail["path"] for s in lifecycle.plan(b, lifecycle.PlanOptions(agent="true"))
             if s.phase == "snapshot" and s.action == "capture"}
    assert "/apis/chaos-mesh.org/v1alpha1/namespaces/otel-demo/schedules" in paths
    assert ("list", "chaos-mesh.org", "schedules", "otel-demo") in lifecycle.access_checks(b)


# ---- by effect: the pods a copy acts on, however it is written ----------------------------------------------


def _as_expressions(labels: dict) -> list:
    return [{"key": k, "operator": "In", "values": [v]} for k, v in sorted(labels.items())]


def test_a_policy_copy_written_with_match_expressions_fails():
    twin = _renamed(_created(POLICY), "respelled")
    labels = twin["spec"]["podSelector"]["matchLabels"]
    twin["spec"]["podSelector"] = {"matchExpressions": _as_expressions(labels)}
    check = _created_check(POLICY, mitigate(POLICY, _solved_with(POLICY, twin)))
    assert not check["passed"] and "respelled does what it did" in check["detail"]


def test_a_policy_copy_admitting_no_pod_or_another_port_fails():
    nobody = _renamed(_created(POLICY), "admits-nobody")
    nobody["spec"]["ingress"] = [{"from": [{"podSelector": {"matchLabels": {"corpus": "no-pod"}}}]}]
    port = _renamed(_created(POLICY), "port-one")
    port["spec"]["ingress"] = [{"ports": [{"port": 1}]}]
    for twin in (nobody, port):
        assert not _created_check(POLICY, mitigate(POLICY, _solved_with(POLICY, twin)))["passed"], twin


def test_a_namespace_wide_default_deny_fails():
    deny = _renamed(_created(POLICY), "default-deny")
    deny["spec"] = {"podSelector": {}, "policyTypes": ["Ingress"]}
    assert not _created_check(POLICY, mitigate(POLICY, _solved_with(POLICY, deny)))["passed"]


def test_a_policy_admitting_the_calls_the_application_makes_passes():
    # isolated, but every caller of the frontend admitted on the ports its Service leads to: no fault
    open_ = _renamed(_created(POLICY), "admits-callers")
    open_["spec"]["ingress"] = [{"from": [{"namespaceSelector": {}}]}]
    verdict = mitigate(POLICY, _solved_with(POLICY, open_))
    assert verdict["passed"], failed(verdict)


def _experiment(schedule: dict) -> tuple[dict, dict]:
    """The experiment a Schedule spawns (as the controller names it), and its spec."""
    kind = schedule["spec"]["type"]
    inner = next(v for k, v in schedule["spec"].items() if k.lower() == kind.lower())
    child = {"apiVersion": schedule["apiVersion"], "kind": kind,
             "metadata": {"name": schedule["metadata"]["name"] + "-qzxwv", "namespace": schedule["metadata"]["namespace"],
                          "ownerReferences": [{"kind": "Schedule", "name": schedule["metadata"]["name"]}]},
             "spec": copy.deepcopy(inner)}
    return child, child["spec"]


def test_a_schedule_copied_as_a_plain_experiment_or_orphaned_child_fails():
    child, _ = _experiment(_created(SCHEDULE))
    check = _created_check(SCHEDULE, mitigate(SCHEDULE, _solved_with(SCHEDULE, child)))
    assert not check["passed"] and "-qzxwv does what it did" in check["detail"]


def test_a_paused_schedule_whose_child_runs_fails_and_a_stopped_child_passes():
    schedule = _created(SCHEDULE)
    schedule["metadata"]["annotations"] = {rt.CHAOS_PAUSE: "true"}
    child, _ = _experiment(_created(SCHEDULE))
    state = derived(SCHEDULE, "solved")
    state["resources"]["items"] += [schedule, child]
    assert not mitigate(SCHEDULE, state)["passed"]
    child["status"] = {"experiment": {"desiredPhase": "Stop"}}  # its duration over: the controller stopped it
    verdict = mitigate(SCHEDULE, _solved_with(SCHEDULE, child))
    assert verdict["passed"], failed(verdict)


def test_the_schedule_capture_holds_its_experiment_kind():
    kinds = evaluator(SCHEDULE)["SPEC"]["requires"]["kinds"]
    assert ["otel-demo", "HTTPChaos"] in kinds and ["chaos-mesh", "HTTPChaos"] in kinds


@pytest.mark.parametrize("name", [SCHEDULE, PODCHAOS])
def test_a_chaos_copy_selecting_the_same_pods_otherwise_fails(name):
    twin = _renamed(_created(name), "respelled")
    spec = twin["spec"] if name == PODCHAOS else next(  # a Schedule's experiment, under its type's name
        v for k, v in twin["spec"].items() if k.lower() == twin["spec"]["type"].lower())
    labels = spec["selector"].pop("labelSelectors")
    spec["selector"]["expressionSelectors"] = _as_expressions(labels)
    spec.update(mode="fixed-percent", value="100")
    assert not _created_check(name, mitigate(name, _solved_with(name, twin)))["passed"]
    spec.update(value="0")  # picks no pod
    verdict = mitigate(name, _solved_with(name, twin))
    assert verdict["passed"], failed(verdict)


def test_a_chaos_copy_naming_the_pods_it_acts_on_fails():
    twin = _renamed(_created(PODCHAOS), "by-name")
    state = _solved_with(PODCHAOS, twin)
    hit = rt._chaos_targets(_created(PODCHAOS)["spec"]["selector"], "chaos-mesh", rt.State(state))
    pod = next(key for key in sorted(hit) if "/" not in key[1])
    twin["spec"]["selector"] = {"pods": {pod[0]: [pod[1]]}}
    assert not _created_check(PODCHAOS, mitigate(PODCHAOS, _solved_with(PODCHAOS, twin)))["passed"]


def test_a_deny_policy_copy_written_otherwise_fails_and_one_denying_else_passes():
    wider = _renamed(_created(GATEWAY), "deny-reads")
    wider["spec"]["rules"] = [{"to": [{"operation": {"methods": ["HEAD", "GET"], "paths": ["/*"]}}]}]
    assert not _created_check(GATEWAY, mitigate(GATEWAY, _solved_with(GATEWAY, wider)))["passed"]
    everywhere = _renamed(wider, "deny-reads-everywhere")
    del everywhere["spec"]["targetRef"]  # every workload of the namespace, the gateway's too
    assert not _created_check(GATEWAY, mitigate(GATEWAY, _solved_with(GATEWAY, everywhere)))["passed"]
    other = _renamed(_created(GATEWAY), "deny-nothing")
    other["spec"]["rules"] = [{"to": [{"operation": {"methods": ["NO-SUCH-METHOD"]}}]}]
    verdict = mitigate(GATEWAY, _solved_with(GATEWAY, other))
    assert verdict["passed"], failed(verdict)


# An AuthorizationPolicy is judged by what it does to the application's requests, not by overlap with the
# fault's rules: a DENY re-aimed at the methods the fault left alone, or a narrow ALLOW, refuses requests the
# application serves.
REAIMED = {"not GET": [{"to": [{"operation": {"notMethods": ["GET"]}}]}],
           "writes": [{"to": [{"operation": {"methods": ["POST", "PUT", "DELETE", "PATCH"]}}]}]}


@pytest.mark.parametrize("rules", sorted(REAIMED))
def test_the_fault_deny_policy_re_aimed_at_other_requests_fails(rules):
    kept = copy.deepcopy(_created(GATEWAY))
    kept["spec"]["rules"] = REAIMED[rules]
    assert not _created_check(GATEWAY, mitigate(GATEWAY, _solved_with(GATEWAY, kept)))["passed"]


@pytest.mark.parametrize("action, rules", [
    ("DENY", REAIMED["not GET"]),
    ("ALLOW", [{"to": [{"operation": {"methods": ["GET"], "paths": ["/productpage"]}}]}])])
def test_a_policy_added_on_the_gateway_refusing_the_application_requests_fails(action, rules):
    added = _renamed(_created(GATEWAY), "gateway-hardening")
    added["spec"].update(action=action, rules=rules)
    assert not mitigate(GATEWAY, _solved_with(GATEWAY, added))["passed"]


# ---- by effect: the fault's own object edited in place, a twin by its harm --------------------------------

NETLOSS = "otel-checkout-payment-network-loss" + MITIGATED  # a Schedule of NetworkChaos: loss 100% checkout -> payment
KINDS[NETLOSS] = "Schedule"
MEMQUOTA = "sregym-namespace-memory-limit"  # a ResourceQuota `memory: 1Gi` on pods that request no memory
KINDS[MEMQUOTA] = "ResourceQuota"


def _network(obj: dict) -> dict:
    return obj["spec"]["networkChaos"]


@pytest.mark.parametrize("edit", [
    lambda s: s.update(selector={"labelSelectors": {"app": "nothing-runs-this"}, "namespaces": ["otel-demo"]}),
    lambda s: s.update(mode="fixed", value="0"),  # picks no pod
    lambda s: s["loss"].update(loss="0"),  # drops no packet
    lambda s: s["target"].update(mode="fixed-percent", value="0"),  # toward no peer
])
def test_the_fault_chaos_object_neutralised_in_place_passes(edit):
    schedule = _created(NETLOSS)
    edit(_network(schedule))
    verdict = mitigate(NETLOSS, _solved_with(NETLOSS, schedule))
    assert verdict["passed"], failed(verdict)


def test_the_fault_chaos_object_kept_with_some_of_its_effect_fails():
    schedule = _created(NETLOSS)
    _network(schedule)["loss"].update(loss="30")  # how hard, not what: packets still dropped
    assert not _created_check(NETLOSS, mitigate(NETLOSS, _solved_with(NETLOSS, schedule)))["passed"]
    schedule = _created(NETLOSS)
    _network(schedule)["selector"]["labelSelectors"] = {"app.kubernetes.io/name": "checkout"}  # the same pods
    assert not _created_check(NETLOSS, mitigate(NETLOSS, _solved_with(NETLOSS, schedule)))["passed"]


def test_a_chaos_twin_is_recognised_by_its_harm_not_its_text():
    original = _network(_created(NETLOSS))
    reversed_ = _renamed(_created(NETLOSS), "x")  # payment -> checkout dropped: every exchange still fails
    _network(reversed_)["selector"], _network(reversed_)["target"]["selector"] = \
        copy.deepcopy(original["target"]["selector"]), copy.deepcopy(original["selector"])
    partition = _renamed(_created(NETLOSS), "y")  # a partition drops what a loss of 100% drops
    _network(partition)["action"] = "partition"
    del _network(partition)["loss"]
    for twin in (reversed_, partition):
        check = _created_check(NETLOSS, mitigate(NETLOSS, _solved_with(NETLOSS, twin)))
        assert not check["passed"] and "does what it did" in check["detail"], twin["metadata"]["name"]
    delay = _renamed(_created(NETLOSS), "z")  # another harm between the same pods is not the fault's
    _network(delay).update(action="delay", delay={"latency": "10ms"})
    del _network(delay)["loss"]
    elsewhere = _renamed(_created(NETLOSS), "w")  # the same harm between other pods
    _network(elsewhere)["target"]["selector"]["labelSelectors"] = {"app.kubernetes.io/component": "currency"}
    for other in (delay, elsewhere):
        verdict = mitigate(NETLOSS, _solved_with(NETLOSS, other))
        assert verdict["passed"], (other["metadata"]["name"], failed(verdict))


@pytest.mark.parametrize("name, hard, passes", [
    (QUOTA, {"pods": "24"}, False),  # stricter than the fault's: refuses the next pod sooner
    (QUOTA, {"count/pods": "25"}, False),  # the same limit, spelled as an object count
    (QUOTA, {"pods": "25", "configmaps": "100"}, False),  # an extra key
    (QUOTA, {"pods": "1000", "configmaps": "100"}, True),  # room for every pod: a quota on another resource refuses none
    (MEMQUOTA, {"requests.memory": "1Gi"}, False),  # `memory` is `requests.memory`
    (MEMQUOTA, {"memory": "1Gi", "pods": "1000"}, False),
    (MEMQUOTA, {"memory": "512Mi"}, False),
    (MEMQUOTA, {"limits.memory": "100Gi"}, False),  # the pods declare no memory limit: refused as well
    (MEMQUOTA, {"pods": "1000"}, True),
])
def test_a_quota_twin_is_judged_by_the_pods_it_refuses(name, hard, passes):
    twin = _renamed(_created(name), "mem")
    twin["spec"]["hard"] = hard
    twin.pop("status", None)
    verdict = mitigate(name, _solved_with(name, twin))
    assert verdict["passed"] == passes, failed(verdict)
    if not passes:
        assert "mem does what it did" in _created_check(name, verdict)["detail"]


def test_the_fault_chaos_object_kept_is_the_fault_where_the_state_lacks_its_peers():
    # without the target's pods in the state, the harm cannot be read: kept and live, it acts
    state = derived(NETLOSS, "faulty")
    state["resources"]["items"] = [o for o in state["resources"]["items"]
                                   if not (o["kind"] in ("Pod", "Deployment") and "payment" in o["metadata"]["name"])]
    assert not _created_check(NETLOSS, mitigate(NETLOSS, state))["passed"]


# ---- a workload a fault created: judged by what its pods do, whatever its name, labels or replicas ------------

PREEMPT = "otel-ad-priority-preemption"  # a Deployment of high-priority replicas pinned to one node
KINDS[PREEMPT] = "Deployment"


def _copied_workload(edit) -> dict:
    """The solved state with the fault's workload copied under another name (its pods too), `edit`ed."""
    faulty = derived(PREEMPT, "faulty")["resources"]["items"]
    original = _created(PREEMPT)
    name = original["metadata"]["name"]
    copy_ = _renamed(original, "data-collector")
    edit(copy_)
    pods = []
    for p in faulty:
        if p["kind"] == "Pod" and p["metadata"]["name"].startswith(name):
            p = _renamed(p, p["metadata"]["name"].replace(name, "data-collector"))
            for o in p["metadata"].get("ownerReferences", []):
                o["name"] = o["name"].replace(name, "data-collector")
            pods.append(p)
    return _solved_with(PREEMPT, copy_, *pods)


def _more_replicas(d):
    d["spec"]["replicas"] = int(d["spec"].get("replicas", 1)) + 1


def _template_label(d):
    d["spec"]["template"]["metadata"].setdefault("labels", {})["tier"] = "batch"


@pytest.mark.parametrize("edit", [lambda d: None, _more_replicas, _template_label,
                                  lambda d: d["spec"].update(revisionHistoryLimit=3)])
def test_a_workload_copy_doing_what_the_fault_did_fails(edit):
    assert not _created_check(PREEMPT, mitigate(PREEMPT, _copied_workload(edit)))["passed"]


def test_a_workload_copy_whose_pods_do_otherwise_passes():
    def unpinned(d):
        d["spec"]["template"]["spec"].pop("priorityClassName", None)
        d["spec"]["template"]["spec"].pop("nodeSelector", None)
        d["spec"]["template"]["spec"].pop("affinity", None)
    assert _created_check(PREEMPT, mitigate(PREEMPT, _copied_workload(unpinned)))["passed"]


def _limit_range(memory: str, request: str) -> dict:
    return {"apiVersion": "v1", "kind": "LimitRange", "metadata": {"name": "mem-defaults", "namespace": "hotel-reservation"},
            "spec": {"limits": [{"type": "Container", "default": {"memory": memory},
                                 "defaultRequest": {"memory": request}}]}}


@pytest.mark.parametrize("memory, default_request, passes", [("32Mi", "16Mi", True),  # the defaults fit in the quota
                                                     ("2Gi", "1Gi", False)])  # a pod's default alone fills it
def test_a_quota_kept_beside_a_limit_range_is_judged_by_the_pods_admission_makes(memory, default_request, passes):
    """LimitRanger runs before ResourceQuota: a pod that declares no memory gets the LimitRange's default, so
    the quota refuses it only where the defaults do not fit."""
    state = _solved_with(MEMQUOTA, _created(MEMQUOTA), _limit_range(memory, default_request))
    state["captured"] = [*state.get("captured", []), "hotel-reservation/LimitRange"]
    verdict = mitigate(MEMQUOTA, state)
    assert _created_check(MEMQUOTA, verdict)["passed"] is passes, failed(verdict)


def test_a_quota_fault_captures_the_limit_ranges_of_its_namespace():
    bundle = evaluator(MEMQUOTA)
    assert "hotel-reservation/LimitRange" in bundle["requirements"](bundle["SPEC"])["captured"]
