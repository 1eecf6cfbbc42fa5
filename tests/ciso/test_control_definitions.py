"""Catalogue controls defined as the CIS Kubernetes Benchmark (v1.9) audits them: the `default` ServiceAccount
as Kubernetes creates it (no `automountServiceAccountToken: false`) breaks 5.1.5 ("ensure that the
automountServiceAccountToken: false setting is in place for each default service account") and 5.1.6 ("review
pod and service account objects ... automountServiceAccountToken: false"), so it is not graded compliant; a
capability added after ALL is dropped is one assigned (5.2.10, "do not generally permit containers with
capabilities")."""

from __future__ import annotations

from itbench_dsl import ciso

from test_ciso_variant_truth import DROPPED, _add, _all, policy, spec_for, verdict

# CIS 5.1.5's audit: workloads off `default`, and the `default` account with automountServiceAccountToken: false
CIS_515 = [{"name": "r0", "match": {"any": [{"resources": {"kinds": ["Pod"]}}]},
            "validate": {"message": "m", "pattern": {"spec": {"serviceAccountName": "!default"}}}},
           {"name": "r1", "match": {"any": [{"resources": {"kinds": ["ServiceAccount"], "names": ["default"]}}]},
            "validate": {"message": "m", "pattern": {"automountServiceAccountToken": False}}}]


def test_the_default_service_account_is_not_graded_compliant_for_5_1_5():
    spec = spec_for("cis-k8s-5.1.5")
    assert not any(o["kind"] == "ServiceAccount" and o["metadata"]["name"] == "default"
                   for o in spec["ciso"].get("system", []))
    artifact = ("kyverno", [{"apiVersion": "kyverno.io/v1", "kind": "ClusterPolicy",
                             "metadata": {"name": "agent-policy"},
                             "spec": {"validationFailureAction": "Audit", "background": True, "rules": CIS_515}}])
    passed, checks = verdict(spec, artifact)
    assert passed, [c["detail"] for c in checks.values() if not c["passed"]]


def test_default_service_account_violates_5_1_5_and_5_1_6_as_created():
    default = ciso.k8s.system_objects("ciso-target")[0]
    assert default["kind"] == "ServiceAccount"
    for control in ("cis-k8s-5.1.5", "cis-k8s-5.1.6"):
        assert ciso.CATALOGUE[control].probe([default])
        assert not ciso.CATALOGUE[control].probe([{**default, "automountServiceAccountToken": False}])


DROP_ALL_ADD_NOTHING = {"foreach": [{"list": "request.object.spec.[initContainers, containers, ephemeralContainers][]",
                                      "deny": {
    "conditions": {"any": [
        {"key": "ALL", "operator": "AnyNotIn", "value": DROPPED},
        {"key": "{{ element.securityContext.capabilities.add[] || `[]` }}", "operator": "AnyNotIn",
         "value": ["NET_BIND_SERVICE"]}]}}}]}


def test_a_capability_added_after_dropping_all_is_assigned_for_5_2_10():
    spec = spec_for("cis-k8s-5.2.10")
    assert not any(_add(o) for o in _all(spec, "compliant"))
    passed, checks = verdict(spec, policy(DROP_ALL_ADD_NOTHING))
    assert passed, [c["detail"] for c in checks.values() if not c["passed"]]
