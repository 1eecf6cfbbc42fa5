"""CISO and FinOps verdicts by meaning: each class of wrong verdict the red team found, by hand.

CISO: twins of the compliant objects, gap sets of what the control reads, updates that keep what their rules
checked, the other existing policies left unchanged, checks that cannot run, Rego over every object at once,
Pod policies without autogen, List-shaped inputs. FinOps: the spend of every workload (an autoscaler's floor,
a control's right answer is no change, damage elsewhere), the container a predicate reads, the answer's
`type`, an answer that says a key twice.
"""

from __future__ import annotations

import copy
import json
import subprocess
import sys

import pytest

from itbench_dsl import ciso
from itbench_dsl.backends import ciso as ciso_backend
from test_evaluator import bundle, derived, evaluator, obj, run


def spec_of(name: str) -> dict:
    return evaluator(name)["SPEC"]


def failed(verdict: dict) -> set:
    return {c["id"] for c in verdict["checks"] if not c["passed"]}


def _content_policy(name: str, rules: list, policy_name: str = "agent-policy", annotations=None) -> dict:
    meta = {"name": policy_name, **({"annotations": annotations} if annotations else {})}
    return {"apiVersion": "kyverno.io/v1", "kind": "ClusterPolicy", "metadata": meta,
            "spec": {"validationFailureAction": "Audit", "background": True, "rules": rules}}


# the root rule of CIS 5.2.7: non-root set for the pod or for each container
ROOT = ciso.CATALOGUE["cis-k8s-5.2.7"].validation
PRIVILEGED = {"name": "privileged", "match": {"any": [{"resources": {"kinds": ["Pod"]}}]},
              "validate": {"message": "no privileged containers", "pattern": {"spec": {"containers": [
                  {"=(securityContext)": {"=(privileged)": "false"}}], "=(initContainers)": [
                  {"=(securityContext)": {"=(privileged)": "false"}}], "=(ephemeralContainers)": [
                  {"=(securityContext)": {"=(privileged)": "false"}}]}}}}  # every container: init, ephemeral ones too


# ---- CISO ------------------------------------------------------------------------------------------------


def test_a_policy_that_spares_the_compliant_objects_by_name_fails_their_twins():
    name = "cis-k8s-5-2-2-privileged-kyverno"
    spared = [o["metadata"]["name"] for o in spec_of(name)["ciso"]["compliant"]]
    cheat = _content_policy(name, [{"name": "allowlist", "match": {"any": [{"resources": {"kinds": ["Deployment"]}}]},
                                    "exclude": {"any": [{"resources": {"names": spared}}]},
                                    "validate": {"message": "not allowlisted", "deny": {}}}])
    verdict = run(name, None, None, task="policy", artifact=("kyverno", [cheat]))
    assert not verdict["passed"] and "ciso.general" in failed(verdict)
    assert "compliant objects" in next(c["detail"] for c in verdict["checks"] if c["id"] == "ciso.general")
    right = run(name, None, None, task="policy", artifact=("kyverno", [_content_policy(name, [PRIVILEGED])]))
    assert right["passed"], failed(right)


def test_gap_sets_hold_only_what_the_control_reads():
    cluster_admin = spec_of("cis-k8s-5-1-1-cluster-admin-kyverno")["ciso"]
    assert [o["kind"] for o in cluster_admin["gaps"]] == ["ClusterRoleBinding"]
    assert [o["kind"] for o in cluster_admin["context"]] == ["ServiceAccount"]
    secret_env = spec_of("cis-k8s-5-4-1-secret-env-opa")["ciso"]
    assert [o["kind"] for o in secret_env["gaps"]] == ["Deployment"]
    # a right policy (bindings to cluster-admin) passes without flagging the service account beside the binding
    rule = {"name": "no-cluster-admin", "match": {"any": [{"resources": {"kinds": ["ClusterRoleBinding"]}}]},
            "validate": {"message": "cluster-admin", "deny": {"conditions": {"any": [
                {"key": "{{ request.object.roleRef.name }}", "operator": "Equals", "value": "cluster-admin"}]}}}}
    verdict = run("cis-k8s-5-1-1-cluster-admin-kyverno", None, None, task="policy",
                  artifact=("kyverno", [_content_policy("x", [rule])]))
    assert verdict["passed"], failed(verdict)


def _existing(name: str) -> list:
    return ciso_backend.existing_policy(bundle(name)[0])


def test_an_update_keeps_what_its_rules_checked():
    name = "cis-k8s-5-2-7-root-user-kyverno-update"
    existing = _existing(name)[0]
    root = {"name": "run-as-non-root", "match": {"any": [{"resources": {"kinds": ["Pod"]}}]},
            "validate": {"message": "non-root", **ROOT}}
    good = copy.deepcopy(existing)
    good["spec"]["rules"].append(root)
    verdict = run(name, None, None, task="policy", artifact=("kyverno", [good]))
    assert verdict["passed"], failed(verdict)
    gutted = copy.deepcopy(good)
    for rule in gutted["spec"]["rules"][:-1]:
        rule["validate"]["pattern"] = {"spec": {"containers": [{"name": "*"}]}}  # holds for every pod
    verdict = run(name, None, None, task="policy", artifact=("kyverno", [gutted]))
    assert "ciso.kept" in failed(verdict) and not verdict["passed"]
    narrowed = copy.deepcopy(good)
    for rule in narrowed["spec"]["rules"][:-1]:
        rule["match"]["any"][0]["resources"]["namespaces"] = ["elsewhere"]
    assert "ciso.kept" in failed(run(name, None, None, task="policy", artifact=("kyverno", [narrowed])))


def test_an_update_grades_the_policy_it_names_alone():
    # the new rule in a new policy beside the named one, left as it was, does not update it: offline as live,
    # only the named policy's results count, and the verdict says which policy it graded
    name = "cis-k8s-5-2-7-root-user-kyverno-update"
    existing = _existing(name)[0]
    root = {"name": "run-as-non-root", "match": {"any": [{"resources": {"kinds": ["Pod"]}}]},
            "validate": {"message": "non-root", **ROOT}}
    beside = _content_policy(name, [root], policy_name="extra-root")
    verdict = run(name, None, None, task="policy", artifact=("kyverno", [copy.deepcopy(existing), beside]))
    assert not verdict["passed"] and any(c.startswith("ciso.gap.") for c in failed(verdict)), failed(verdict)
    gap = next(c for c in verdict["checks"] if c["id"].startswith("ciso.gap."))
    assert f"`{existing['metadata']['name']}` alone" in gap["detail"], gap
    # the same rule in the named policy, with another policy beside it, passes
    good = copy.deepcopy(existing)
    good["spec"]["rules"].append(root)
    assert run(name, None, None, task="policy", artifact=("kyverno", [good, beside]))["passed"]


def test_the_other_existing_policies_stay_unchanged():
    name = "trusted-registry-kyverno-update"
    policies = _existing(name)
    assert spec_of(name)["ciso"]["others"], "the scenario declares another existing policy"
    other = copy.deepcopy(policies[1])
    other["spec"]["rules"] = other["spec"]["rules"][:-1] or [{"name": "emptied"}]
    verdict = run(name, None, None, task="policy", artifact=("kyverno", [policies[0], other]))
    assert "ciso.others" in failed(verdict)
    same = copy.deepcopy(policies[1])
    same["spec"]["admission"] = True  # a default Kyverno writes back changes nothing
    verdict = run(name, None, None, task="policy", artifact=("kyverno", [policies[0], same]))
    assert "ciso.others" not in failed(verdict)


def test_a_check_that_cannot_run_fails_saying_why():
    name = "cis-k8s-5-2-2-privileged-kyverno"
    spec = spec_of(name)
    faulty = derived(name, "faulty")
    cel = _content_policy(name, [{"name": "cel", "match": {"any": [{"resources": {"kinds": ["Deployment"]}}]},
                                  "validate": {"cel": {"expressions": [{"expression": "true"}]}}}])
    results = [{"policy": "agent-policy", "result": "fail" if gap else "pass",
                "resources": [{"kind": o["kind"], "namespace": o["metadata"]["namespace"], "name": o["metadata"]["name"]}]}
               for gap, objs in ((True, spec["ciso"]["gaps"]), (False, spec["ciso"]["compliant"])) for o in objs]
    state = {**faulty, "gradedPolicies": ["agent-policy"],
             "policyReports": [{"kind": "PolicyReport", "metadata": {"name": "r"}, "results": results}],
             "resources": {**faulty["resources"], "items": faulty["resources"]["items"] + [cel]}}
    verdict = run(name, None, state, task="policy")
    general = next(c for c in verdict["checks"] if c["id"] == "ciso.general")
    assert not verdict["passed"] and general["unchecked"] and "cannot be checked" in general["detail"]
    assert verdict["metrics"]["unchecked"] == ["ciso.general"]


def test_a_recorded_opa_result_cannot_judge_the_twins():
    name = "cis-k8s-5-2-5-host-network-opa"
    spec = spec_of(name)
    recorded = {f"{o['metadata']['namespace']}/{o['kind']}/{o['metadata']['name']}": gap
                for gap, objs in ((False, spec["ciso"]["gaps"]), (True, spec["ciso"]["compliant"])) for o in objs}
    verdict = run(name, None, None, task="policy", opa_result=recorded)
    assert not verdict["passed"] and "ciso.general" in failed(verdict)


NETWORK_POLICY_REGO = """package check

default result := false

result if count(violations) == 0

selected(dep) if {
  some p in input.items
  p.kind == "NetworkPolicy"
  p.metadata.namespace == dep.metadata.namespace
  every k, v in p.spec.podSelector.matchLabels {
    dep.spec.template.metadata.labels[k] == v
  }
}

violations contains dep.metadata.name if {
  some dep in input.items
  dep.kind == "Deployment"
  not selected(dep)
}
"""


def test_rego_reads_every_object_at_once():
    pytest.importorskip("regopy")
    name = "cis-k8s-5-3-2-network-policy-opa"
    verdict = run(name, None, None, task="policy", artifact=("rego", NETWORK_POLICY_REGO))
    assert verdict["passed"], failed(verdict)
    present = [o["metadata"]["name"] for o in spec_of(name)["ciso"]["compliant"]]
    cheat = ("package check\n\ndefault result := false\n\nresult if {\n  every n in " + json.dumps(present)
             + " {\n    some item in input.items\n    item.metadata.name == n\n  }\n}\n")
    assert not run(name, None, None, task="policy", artifact=("rego", cheat))["passed"]


def test_pod_policies_without_autogen_judge_the_pods_a_workload_runs():
    name = "cis-k8s-5-2-2-privileged-kyverno"
    none = _content_policy(name, [PRIVILEGED], annotations={"pod-policies.kyverno.io/autogen-controllers": "none"})
    verdict = run(name, None, None, task="policy", artifact=("kyverno", [none]))
    assert verdict["passed"], failed(verdict)
    # a Pod policy that allows everything still flags nothing
    lax = copy.deepcopy(none)
    lax["spec"]["rules"][0]["validate"]["pattern"] = {"spec": {"containers": [{"name": "*"}]}}
    assert not run(name, None, None, task="policy", artifact=("kyverno", [lax]))["passed"]


def test_list_shaped_inputs_are_opened():
    name = "cis-k8s-5-2-2-privileged-kyverno"
    policy = _content_policy(name, [PRIVILEGED])
    verdict = run(name, None, None, task="policy",
                  artifact=("kyverno", [{"apiVersion": "v1", "kind": "List", "items": [policy]}]))
    assert verdict["passed"], failed(verdict)


def _cel_policy(expression: str, variables=()) -> dict:
    return _content_policy("cel", [{"name": "r", "match": {"any": [{"resources": {"kinds": ["Pod"]}}]},
                                    "validate": {"message": "m", "cel": {"variables": list(variables),
                                                                         "expressions": [{"expression": expression}]}}}])


def test_cel_with_variables_and_optional_fields_is_judged():
    name = "cis-k8s-5-2-2-privileged-kyverno"
    every = [{"name": "all", "expression": "object.spec.containers + object.spec.?initContainers.orValue([]) + "
                                           "object.spec.?ephemeralContainers.orValue([])"}]
    right = _cel_policy("variables.all.all(c, !c.?securityContext.?privileged.orValue(false))", every)
    verdict = run(name, None, None, task="policy", artifact=("kyverno", [right]))
    assert verdict["passed"], failed(verdict)
    # what the matcher still lacks is said: the policy was not judged, and no object check pretends it was
    unknown = _cel_policy("object.spec.containers.all(c, quantity('1') > quantity('0'))")
    verdict = run(name, None, None, task="policy", artifact=("kyverno", [unknown]))
    assert not verdict["passed"] and verdict["metrics"]["judged"] is False and "gaps_flagged" not in verdict["metrics"]
    objects = [c for c in verdict["checks"] if c["id"].startswith(("ciso.gap.", "ciso.compliant."))]
    assert objects and all(c.get("unchecked") and "not judged" in c["detail"] for c in objects)


# ---- FinOps ----------------------------------------------------------------------------------------------


def test_a_raised_autoscaler_floor_multiplies_spend():
    name = "otel-three-hpas-misconfigured"
    solved = derived(name, "solved")
    assert run(name, None, solved, task="mitigate")["passed"]
    obj(solved, "HorizontalPodAutoscaler", "frontend")["spec"]["minReplicas"] = 4
    assert "finops.spend" in failed(run(name, None, solved, task="mitigate"))


def _hpa_metric(resource, target):
    return {"type": "Resource", "resource": {"name": resource, "target": target}}


@pytest.mark.parametrize("name", ["otel-frontend-hpa-misconfigured", "otel-three-hpas-misconfigured"])
def test_an_autoscaler_is_graded_by_what_the_controller_would_do(name):
    solved = derived(name, "solved")
    assert run(name, None, solved, task="mitigate")["passed"]
    # the controller takes the largest replica count its metrics propose: a second metric at 1% scales it out
    for extra in (_hpa_metric("cpu", {"type": "Utilization", "averageUtilization": 1}),
                  _hpa_metric("memory", {"type": "Utilization", "averageUtilization": 1}),
                  {"type": "Pods", "pods": {"metric": {"name": "requests"}, "target": {"type": "AverageValue",
                                                                                     "averageValue": "1"}}}):
        state = copy.deepcopy(solved)
        obj(state, "HorizontalPodAutoscaler", "frontend")["spec"]["metrics"].append(extra)
        verdict = run(name, None, state, task="mitigate")
        assert not verdict["passed"] and any(c.startswith("finops.proximity") for c in failed(verdict)), extra
    # with a cpu request the controller computes a cpu utilization: a cpu metric at 1% scales out sooner than
    # the optimum (fails), one at 90% does not (passes)
    for percent, passes in ((1, False), (90, True)):
        state = copy.deepcopy(solved)
        for container in obj(state, "Deployment", "frontend")["spec"]["template"]["spec"]["containers"]:
            container.setdefault("resources", {}).setdefault("requests", {})["cpu"] = "100m"
        obj(state, "HorizontalPodAutoscaler", "frontend")["spec"]["metrics"].append(
            _hpa_metric("cpu", {"type": "Utilization", "averageUtilization": percent}))
        verdict = run(name, None, state, task="mitigate")
        graded_right = not any(c.startswith("finops.proximity") for c in failed(verdict))
        assert graded_right is passes, (percent, failed(verdict))
    # a Utilization target on requests is an AverageValue target of utilization x request: the frontend
    # requests 250Mi of memory (its limit, as the API server defaults the request), 80% of it is 200Mi
    for value, passes in (("200Mi", True), ("3Mi", False)):
        state = copy.deepcopy(solved)
        obj(state, "HorizontalPodAutoscaler", "frontend")["spec"]["metrics"] = [
            _hpa_metric("memory", {"type": "AverageValue", "averageValue": value})]
        assert run(name, None, state, task="mitigate")["passed"] is passes, value


def test_an_autoscaler_that_never_scales_in_keeps_its_waste():
    """`behavior.scaleDown.selectPolicy: Disabled`: the controller never scales in, so the optimal target
    leaves the scaled-out replicas where they are."""
    name = "otel-frontend-hpa-misconfigured"
    state = derived(name, "solved")
    spec = obj(state, "HorizontalPodAutoscaler", "frontend")["spec"]
    spec["behavior"] = {"scaleDown": {"selectPolicy": "Disabled"}}
    verdict = run(name, None, state, task="mitigate")
    assert not verdict["passed"] and "finops.proximity.0" in failed(verdict)
    spec["behavior"] = {"scaleDown": {"selectPolicy": "Max"}, "scaleUp": {"selectPolicy": "Disabled"}}
    assert "finops.proximity.0" not in failed(run(name, None, state, task="mitigate"))


def test_an_autoscaling_v1_cpu_target_is_the_v2_cpu_utilization_metric():
    """autoscaling/v1 says a cpu target as `targetCPUUtilizationPercentage`, the v2 cpu `Utilization` metric it
    converts to (absent: the controller's 80%); an optimum on the cpu target is graded on it."""
    name = "otel-frontend-hpa-misconfigured"
    ns = evaluator(name)
    spec = copy.deepcopy(ns["SPEC"])
    optimum = next(o for o in spec["finops"]["optimal"] if o["object"]["kind"] == "HorizontalPodAutoscaler")
    optimum["path"][2] = ["resource.name", "cpu"]
    for entry in spec["mitigation"].get("collateral", {}).get("autoscalers", []):
        entry.pop("metrics", None)
    state = derived(name, "solved")
    for container in obj(state, "Deployment", "frontend")["spec"]["template"]["spec"]["containers"]:
        container.setdefault("resources", {}).setdefault("requests", {})["cpu"] = "100m"
    hpa = obj(state, "HorizontalPodAutoscaler", "frontend")
    hpa["apiVersion"] = "autoscaling/v1"
    hpa["spec"].pop("metrics")
    for percent, passes in ((80, True), (1, False)):
        hpa["spec"]["targetCPUUtilizationPercentage"] = percent
        verdict = ns["evaluate"](spec, None, copy.deepcopy(state), task="mitigate")
        assert ("finops.proximity.0" not in failed(verdict)) is passes, (percent, failed(verdict))


def test_a_limitrange_default_limit_is_the_containers_limit():
    """LimitRanger gives a container that declares no limit its namespace's default (and a request from the
    default request, else the limit): the memory limit restored by a LimitRange is graded as restored."""
    name = "otel-ad-missing-memory-limit"
    faulty = derived(name, "faulty")
    assert not (obj(faulty, "Deployment", "ad")["spec"]["template"]["spec"]["containers"][0].get("resources") or {}).get(
        "limits")
    faulty["resources"]["items"].append({"apiVersion": "v1", "kind": "LimitRange",
                                         "metadata": {"name": "memory", "namespace": "otel-demo"},
                                         "spec": {"limits": [{"type": "Container", "default": {"memory": "300Mi"}}]}})
    verdict = run(name, None, faulty, task="mitigate")
    assert not {"finops.proximity.0", "finops.spend"} & set(failed(verdict)), failed(verdict)
    # a default far from the optimum is graded as that figure, not as an absent one
    faulty["resources"]["items"][-1]["spec"]["limits"][0]["default"]["memory"] = "3000Mi"
    assert "finops.proximity.0" in failed(run(name, None, faulty, task="mitigate"))


def test_a_controls_right_answer_is_no_change():
    name = "otel-autoscaling-spend-false-alarm"
    healthy = derived(name, "healthy")
    assert run(name, None, healthy, task="mitigate")["passed"]
    scaled = copy.deepcopy(healthy)
    target = next(o for o in scaled["resources"]["items"] if o["kind"] == "Deployment"
                  and any((c.get("resources") or {}).get("requests") or (c.get("resources") or {}).get("limits")
                          for c in o["spec"]["template"]["spec"]["containers"]))
    target["spec"]["replicas"] = 3 * int(target["spec"].get("replicas") or 1)
    assert "finops.spend" in failed(run(name, None, scaled, task="mitigate"))


def test_damage_outside_the_faulted_workload_fails():
    name = "otel-cart-overprovisioned-requests"
    solved = derived(name, "solved")
    frontend = obj(solved, "Deployment", "frontend")
    frontend["status"]["readyReplicas"] = 0
    frontend["status"]["availableReplicas"] = 0
    assert "health.ready.otel-demo/Deployment/frontend" in failed(run(name, None, solved, task="mitigate"))


def test_the_optimum_reads_its_container_by_name():
    name = "otel-cart-overprovisioned-requests"
    solved = derived(name, "solved")
    cart = obj(solved, "Deployment", "cart")
    containers = cart["spec"]["template"]["spec"]["containers"]
    sidecar = {"name": "sidecar", "image": "busybox", "resources": {"requests": {"memory": "1600Mi"}}}
    containers.insert(0, sidecar)
    mine = next(c for c in containers if c["name"] == "cart")
    mine["resources"] = {"requests": {"memory": "160Mi"}, "limits": {"memory": "160Mi"}}
    assert "finops.proximity.0" not in failed(run(name, None, solved, task="mitigate"))
    mine["resources"] = {"requests": {"memory": "1600Mi"}, "limits": {"memory": "1600Mi"}}
    sidecar["resources"] = {"requests": {"memory": "160Mi"}}
    assert "finops.proximity.0" in failed(run(name, None, solved, task="mitigate"))


def test_the_answer_type_must_say_what_is_wasteful():
    name = "otel-three-hpas-misconfigured"
    faulty = derived(name, "faulty")
    names = [f"otel-demo/HorizontalPodAutoscaler/{n}" for n in ("fraud-detection", "frontend", "image-provider")]
    good = run(name, {"resource": [{"name": n, "type": "HPA target too low"} for n in names]}, faulty, task="diagnose")
    assert good["passed"], failed(good)
    vague = run(name, {"resource": [{"name": n, "type": "x"} for n in names]}, faulty, task="diagnose")
    assert not vague["passed"] and "finops.type" in failed(vague)


def test_an_answer_that_says_a_key_twice_is_a_failing_verdict(tmp_path):
    name = "otel-frontend-hpa-misconfigured"
    script = tmp_path / "evaluator.py"
    script.write_bytes(bundle(name)[1]["evaluator.py"])
    answer = tmp_path / "answer.json"
    answer.write_text('{"resource":[{"name":"otel-demo/HorizontalPodAutoscaler/frontend","type":"x"}],"resource":[]}')
    done = subprocess.run([sys.executable, str(script), "--task", "diagnose", "--agent-output", str(answer)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    verdict = json.loads(done.stdout)
    assert not verdict["passed"] and "twice" in json.dumps(verdict["checks"])


def test_graded_from_reports_without_the_policy_in_the_state_general_is_unchecked():
    name = "cis-k8s-5-2-2-privileged-kyverno"
    spec = spec_of(name)
    faulty = derived(name, "faulty")
    results = [{"policy": "agent-policy", "result": "fail" if gap else "pass",
                "resources": [{"kind": o["kind"], "namespace": o["metadata"]["namespace"], "name": o["metadata"]["name"]}]}
               for gap, objs in ((True, spec["ciso"]["gaps"]), (False, spec["ciso"]["compliant"])) for o in objs]
    state = {**faulty, "gradedPolicies": ["agent-policy"],
             "policyReports": [{"kind": "PolicyReport", "metadata": {"name": "r"}, "results": results}]}
    verdict = run(name, None, state, task="policy")
    general = next(c for c in verdict["checks"] if c["id"] == "ciso.general")  # as `itbench explain` lists it
    assert not general["passed"] and general["unchecked"] and "ciso.general" in verdict["metrics"]["unchecked"]
