"""A CISO policy is graded on the objects as a cluster holds them: with the API server's defaults (a pod spec's
`securityContext: {}`), each workload's pod as admission admits it (`serviceAccountName: default`), the pods
in a Rego input beside their workloads, and what Kubernetes keeps in the gap's namespace (its Namespace, the
ServiceAccount `default`, the ConfigMap `kube-root-ca.crt`) required to pass. Each test fails without its
mechanism (runtime/state.py `as_stored`, `templated_pod`; runtime/evaluator.py `rego_input`; the compiler's
`ciso.system`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from itbench_dsl.compiler import compile_source
from itbench_dsl.diagnostics import Diagnostics
from itbench_dsl.runtime import evaluator
from itbench_dsl.runtime.state import as_stored, templated_pod

SCENARIOS = Path(__file__).resolve().parents[2] / "scenarios" / "ciso"
DEPLOYMENT = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "ns"},
              "spec": {"selector": {"matchLabels": {"app": "web"}}, "template": {
                  "metadata": {"labels": {"app": "web"}},
                  "spec": {"containers": [{"name": "app", "image": "nginx:1.27"}]}}}}


def spec_of(name: str) -> dict:
    from itbench_dsl.analysis.corpus import all_cases

    path = SCENARIOS / f"{name}.itb"
    return all_cases(compile_source(path.read_bytes(), str(path), Diagnostics()).scenario)[0]


def grade(spec, artifact):
    verdict = evaluator.evaluate(spec, None, None, task="policy", artifact=artifact)
    return verdict["passed"], {c["id"] for c in verdict["checks"] if not c["passed"]}


def test_stored_objects_hold_the_server_defaults():
    stored = as_stored(DEPLOYMENT)
    pod_spec = stored["spec"]["template"]["spec"]
    assert pod_spec["securityContext"] == {} and pod_spec["dnsPolicy"] == "ClusterFirst"
    assert pod_spec["containers"][0]["imagePullPolicy"] == "IfNotPresent"
    assert pod_spec["containers"][0]["resources"] == {}
    assert stored["spec"]["replicas"] == 1
    # what Go's JSON omits (a `false`, a `""`) and what only a Pod gets stay out of a template
    assert not {"hostNetwork", "priorityClassName", "priority", "enableServiceLinks"} & set(pod_spec)
    assert "securityContext" not in DEPLOYMENT["spec"]["template"]["spec"]  # a copy


def test_templated_pod_is_admitted():
    pod = templated_pod(DEPLOYMENT)["spec"]
    assert pod["serviceAccountName"] == pod["serviceAccount"] == "default"
    assert pod["securityContext"] == {} and pod["priority"] == 0 and pod["enableServiceLinks"] is True
    assert {t["key"] for t in pod["tolerations"]} == {"node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable"}
    assert "hostNetwork" not in pod


ABSENT_POD_SC = {"apiVersion": "kyverno.io/v1", "kind": "ClusterPolicy", "metadata": {"name": "agent-policy"},
                 "spec": {"validationFailureAction": "Audit", "background": True, "rules": [{
                     "name": "pod-sc", "match": {"any": [{"resources": {"kinds": ["Pod"]}}]},
                     "validate": {"message": "m", "pattern": {"spec": {"securityContext": "*"}}}}]}}


def test_policy_on_a_field_the_server_always_fills_fails():
    spec = spec_of("cis-k8s-5-2-2-privileged-kyverno")
    # a gap whose pod leaves securityContext out is no gap such a policy finds on a cluster
    for gap in spec["ciso"]["gaps"]:
        gap["spec"]["template"]["spec"].pop("securityContext", None)
    verdicts = evaluator.kyverno_offline(spec, [ABSENT_POD_SC], spec["ciso"]["gaps"])
    assert all("fail" not in got for got in verdicts.values())


PODS_REGO = """package check

default result := false

result if count(violations) == 0

violations contains name if {
	some item in input.items
	item.kind == "Pod"
	item.spec.hostNetwork == true
	name := item.metadata.name
}
"""


@pytest.mark.skipif(evaluator.rego_engine() is None, reason="no Rego engine")
def test_rego_inputs_hold_the_workloads_pods():
    passed, failed = grade(spec_of("cis-k8s-5-2-5-host-network-opa"), ("rego", PODS_REGO))
    assert passed, failed


STAR = {"apiVersion": "kyverno.io/v1", "kind": "ClusterPolicy", "metadata": {"name": "agent-policy"},
        "spec": {"validationFailureAction": "Audit", "background": True, "rules": [{
            "name": "star", "match": {"any": [{"resources": {"kinds": ["*"]}}]},
            "validate": {"message": "m", "anyPattern": [
                {"spec": {"containers": [{"=(securityContext)": {"=(privileged)": "false"}}]}},
                {"spec": {"template": {"spec": {"containers": [{"=(securityContext)": {"=(privileged)": "false"}}]}}}}]}}]}}


def test_objects_of_other_kinds_must_pass():
    spec = spec_of("cis-k8s-5-2-2-privileged-kyverno")
    kinds = {o["kind"] for o in spec["ciso"]["system"]}
    assert {"Namespace", "ServiceAccount", "ConfigMap"} <= kinds
    passed, failed = grade(spec, ("kyverno", [STAR]))
    assert not passed and any(f.startswith("ciso.compliant.") and "Namespace" in f for f in failed)


CATALOGUE_SCENARIO = '''scenario "{slug}" {{
  domain ciso
  complexity low
  description "A workload breaks the control; the agent must write a Kyverno policy that reports it."
  tags ["CIS", "Kyverno"]
  control "{control}"
  task kyverno_policy
  topology {{
    namespace "ciso-target"
  }}
}}
'''


@pytest.mark.parametrize("control", ["cis-k8s-5.1.5", "cis-k8s-5.7.3"])
def test_catalogue_controls_pass_self_validation(control, tmp_path):
    """CIS 5.1.5 (a pod's `serviceAccountName` left out is `default`) and 5.7.3 (every stored pod holds a
    `securityContext`) with kyverno_policy: the corpus's right policies pass, the wrong ones fail (E4004)."""
    from itbench_dsl.checking import check_source

    path = tmp_path / "s.itb"
    path.write_text(CATALOGUE_SCENARIO.format(slug=control.replace(".", "-") + "-kyverno", control=control))
    checked = check_source(path.read_bytes(), str(path), lint=False)
    assert not checked.has_errors, [d.message[:300] for d in checked.diagnostics]
