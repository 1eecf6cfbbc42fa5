"""The bounds of what the evaluator grades: what the agent submits is graded, never refused or left to run.

A Rego policy that builds a value without end stops at its budget and fails, saying why; the agent's own
malformed answer or artefact (a Rego module that does not compile, a FinOps answer of another shape) fails
with the reason, as an answer that is no JSON does, and exit 2 stays for the harness's inputs.
"""

from __future__ import annotations

import pytest

from test_evaluator import derived, evaluator, run

OPA = "cis-k8s-5-4-1-secret-env-opa"
HPA = "otel-frontend-hpa-misconfigured"

BOMB = "package check\n\ndefault result := false\n\nbig := numbers.range(1, {n})\n\nresult if count(big) > 0\n"


def check(verdict: dict, check_id: str) -> dict:
    return next(c for c in verdict["checks"] if c["id"] == check_id)


# ---- class 1: a Rego memory bomb stops at the budget, a failed and explained check --------------------------

def test_rego_value_over_the_memory_budget_fails_explained(monkeypatch):
    pytest.importorskip("regopy")
    ns = evaluator(OPA)
    monkeypatch.setitem(ns, "REGO_MEMORY", 64 * 1024 * 1024)  # a small budget, so the test stays light
    verdict = run(OPA, None, None, artifact=("rego", BOMB.format(n=20_000_000)))
    assert not verdict["passed"] and verdict["score"] == 0.0
    assert "over its budget" in check(verdict, "ciso.verdicts")["detail"]


def test_rego_within_budget_still_graded():
    pytest.importorskip("regopy")
    # a small range is a value like any other: the policy is graded on what it says (true: the gap passes)
    verdict = run(OPA, None, None, artifact=("rego", BOMB.format(n=1000)))
    assert not verdict["passed"]
    assert not any(c["id"] == "ciso.verdicts" for c in verdict["checks"])
    assert any(c["id"].startswith("ciso.gap.") and not c["passed"] for c in verdict["checks"])


def test_rego_evaluation_is_bounded_in_a_child_process():
    pytest.importorskip("regopy")
    ns = evaluator(OPA)
    with pytest.raises(ns["RegoRefused"]) as info:
        ns["bounded"](lambda: bytearray(ns["REGO_MEMORY"] * 2))
    assert "over its budget" in str(info.value)
    assert ns["bounded"](lambda: "pass") == "pass"


def _spin(seconds: float) -> None:
    import time

    end = time.process_time() + seconds
    while time.process_time() < end:
        pass


def test_each_input_of_a_batch_keeps_its_own_cpu_budget(monkeypatch):
    # the inputs of one policy are evaluated in one child: each gets the budget, not the batch as a whole
    ns = evaluator(OPA)
    monkeypatch.setitem(ns, "REGO_SECONDS", 1)

    def batch():
        for _ in range(3):
            ns["renew_cpu_budget"]()
            _spin(0.7)
        return "pass"

    assert ns["bounded"](batch, 3) == "pass"
    with pytest.raises(ns["RegoRefused"]):  # one input over its second is still stopped
        ns["bounded"](lambda: _spin(2.5), 3)


# ---- class 2: the agent's malformed answer or artefact fails with the reason ---------------------------------

def test_rego_that_does_not_compile_fails_with_the_reason():
    pytest.importorskip("regopy")
    verdict = run(OPA, None, None, artifact=("rego", "package check\n\nresult := true if {\n"))
    assert not verdict["passed"] and verdict["score"] == 0.0
    assert "does not evaluate" in check(verdict, "ciso.verdicts")["detail"]


@pytest.mark.parametrize("answer", [
    {}, {"resource": None}, {"resource": {"name": "otel-demo/hpa/frontend", "type": "misconfigured_hpa"}},
    [{"name": "otel-demo/hpa/frontend", "type": "misconfigured_hpa"}], {"resource": ["otel-demo/hpa/frontend"]},
    {"resource": [{"name": 1, "type": "misconfigured_hpa"}]}, 7, "text",
], ids=["empty", "null", "object", "top-list", "strings", "number-name", "number", "string"])
def test_finops_answer_of_another_shape_fails_with_the_reason(answer):
    verdict = run(HPA, answer, derived(HPA, "faulty"), task="diagnose")
    assert not verdict["passed"] and verdict["score"] == 0.0
    assert check(verdict, "diagnosis.answer")["detail"]


def test_itbench_diagnosis_file_refused_for_every_malformation():
    """ITBench's SRE diagnosis file (a bundle without a `tasks` statement) keeps one rule of its own: refused."""
    name = "otel-checkout-nonexistent-image"
    ns = evaluator(name)
    assert ns["legacy_diagnosis"](ns["SPEC"])
    for answer in ({"resolution": "restarted it"}, [{"name": "x"}], {"entities": "all"}):
        with pytest.raises(ns["InputError"]):
            run(name, answer, derived(name, "faulty"), task="diagnose")


def test_harness_inputs_still_refused():
    ns = evaluator(HPA)
    with pytest.raises(ns["InputError"]):
        run(HPA, None, None, task="mitigate")  # no state: the harness's input is missing


# ---- class 3: artefacts the cluster or OPA 1.0 would refuse fail the contract --------------------------------

KYVERNO = "cis-k8s-5-2-2-privileged-kyverno"
PRIVILEGED_RULE = {"name": "priv", "match": {"any": [{"resources": {"kinds": ["Pod"]}}]},
                   "validate": {"message": "no privileged", "pattern": {"spec": {"containers": [
                       {"=(securityContext)": {"=(privileged)": "false"}}]}}}}


def _policy(name="disallow-privileged", rules=None) -> dict:
    return {"apiVersion": "kyverno.io/v1", "kind": "ClusterPolicy", "metadata": {"name": name},
            "spec": {"validationFailureAction": "Audit", "background": True,
                     "rules": rules if rules is not None else [PRIVILEGED_RULE]}}


def _contract(verdict: dict) -> dict:
    return check(verdict, "ciso.contract")


def test_a_policy_the_cluster_admits_keeps_the_contract():
    verdict = run(KYVERNO, None, None, artifact=("kyverno", [_policy()]))
    assert _contract(verdict)["passed"], _contract(verdict)


@pytest.mark.parametrize("policy, reason", [
    (_policy(name="Disallow_Privileged"), "DNS-1123"),
    (_policy(rules=[PRIVILEGED_RULE, PRIVILEGED_RULE]), "duplicate rule name"),
    (_policy(rules=[{**PRIVILEGED_RULE, "validate": {**PRIVILEGED_RULE["validate"], "deny": {
        "conditions": {"any": [{"key": "a", "operator": "Equals", "value": "b"}]}}}}]), "pattern, deny"),
], ids=["name", "duplicate-rule", "pattern-and-deny"])
def test_a_policy_the_cluster_refuses_fails_the_contract(policy, reason):
    verdict = run(KYVERNO, None, None, artifact=("kyverno", [policy]))
    assert not verdict["passed"] and verdict["score"] == 0.0
    assert not _contract(verdict)["passed"] and reason in _contract(verdict)["detail"]


# a right check for 5.4.1: every pod-making kind, init containers, `env` and `envFrom` alike
REGO_V1 = """package check

default result := false

result if count(violations) == 0

pod_spec(item) := item.spec if item.kind == "Pod"

pod_spec(item) := item.spec.template.spec if item.spec.template

pod_spec(item) := item.spec.jobTemplate.spec.template.spec if item.spec.jobTemplate

containers(item) := array.concat(array.concat(object.get(pod_spec(item), "containers", []),
  object.get(pod_spec(item), "initContainers", [])), object.get(pod_spec(item), "ephemeralContainers", []))

violations contains name if {
  some item in input.items
  some c in containers(item)
  some e in c.env
  e.valueFrom.secretKeyRef
  name := item.metadata.name
}

violations contains name if {
  some item in input.items
  some c in containers(item)
  some e in c.envFrom
  e.secretRef
  name := item.metadata.name
}
"""

REGO_V0 = """package check

default result = false

result { count(violations) == 0 }

violations[name] {
  item := input.items[_]
  item.spec.template.spec.containers[_].env[_].valueFrom.secretKeyRef
  name := item.metadata.name
}
"""


def test_rego_v0_fails_the_contract():
    pytest.importorskip("regopy")
    good = run(OPA, None, None, artifact=("rego", REGO_V1))
    assert good["passed"], [c for c in good["checks"] if not c["passed"]]
    verdict = run(OPA, None, None, artifact=("rego", REGO_V0))
    assert not verdict["passed"] and verdict["score"] == 0.0
    assert "Rego v0" in _contract(verdict)["detail"]


def test_rego_v0_heads_read_only_rule_heads():
    ns = evaluator(OPA)
    assert ns["rego_v0_heads"](REGO_V0) == [5, 7]
    assert ns["rego_v0_heads"](REGO_V1) == []
    # an object or set value, a string or comment holding a brace, a `default`, are no v0 heads
    assert ns["rego_v0_heads"]('package check\n\nx := {"a": 1}\ns := {1, 2}\n# p { }\ny := "q {"\ndefault result := false\n') == []


# ---- class 4: what a pod reserves, as the scheduler counts it -------------------------------------------------

CART = "otel-cart-overprovisioned-requests"


def _items(state: dict, kind: str, name: str | None = None) -> list:
    return [o for o in state["resources"]["items"] if o["kind"] == kind
            and (name is None or o["metadata"]["name"] == name or o["metadata"]["name"].startswith(name + "-"))]


def test_solved_state_still_reserves_as_healthy():
    verdict = run(CART, None, derived(CART, "solved"), task="mitigate")
    assert check(verdict, "finops.reserved")["passed"]


def test_pod_level_requests_count():
    import copy

    state = copy.deepcopy(derived(CART, "solved"))
    (cart,) = _items(state, "Deployment", "cart")
    cart["spec"]["template"]["spec"]["resources"] = {"requests": {"memory": "8Gi"}, "limits": {"memory": "8Gi"}}
    verdict = run(CART, None, state, task="mitigate")
    assert not check(verdict, "finops.reserved")["passed"]


def test_runtime_class_overhead_on_the_pods_counts():
    import copy

    state = copy.deepcopy(derived(CART, "solved"))
    pods = _items(state, "Pod", "cart")
    assert pods
    for pod in pods:
        pod["spec"]["overhead"] = {"memory": "8Gi"}
    verdict = run(CART, None, state, task="mitigate")
    assert not check(verdict, "finops.reserved")["passed"]


# ---- class 6: a capture for a CISO task graded from PolicyReports maps pod results to workloads ---------------

def test_ciso_requirements_list_what_maps_pods_to_workloads():
    ns = evaluator(KYVERNO)
    captured = ns["requirements"](ns["SPEC"])["captured"]
    namespace = ns["SPEC"]["ciso"]["gaps"][0]["metadata"]["namespace"]
    assert {f"{namespace}/Pod", f"{namespace}/ReplicaSet", f"{namespace}/Deployment"} <= set(captured)
