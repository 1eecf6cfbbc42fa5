"""Grading against what real objects hold: CISO policies narrowed to bare test pods or to hosts hardened on an
unrelated setting, Kyverno's own per-family policy for a control, and FinOps fixes whose autoscaler is throttled
by valid values or whose workload requests resources (GPUs, hugepages, local storage) the healthy one never did.
"""

from __future__ import annotations

import copy

import pytest

from itbench_dsl import ciso
from itbench_dsl.ciso import variation
from itbench_dsl.runtime.evaluator import hpa_disabled, hpa_scaling_seconds
from test_ciso_finops_meaning import PRIVILEGED, _content_policy, failed
from test_evaluator import derived, obj, run

HOST_NETWORK = {"name": "host-network", "match": {"any": [{"resources": {"kinds": ["Pod"]}}]},
                "validate": {"message": "no host network", "pattern": {"spec": {"=(hostNetwork)": False}}}}


@pytest.mark.parametrize("name, rule, precondition", [
    ("cis-k8s-5-2-2-privileged-kyverno", PRIVILEGED,
     {"key": "{{ length(request.object.spec.volumes || `[]`) }}", "operator": "Equals", "value": 0}),
    ("cis-5-2-5-host-network-kyverno", HOST_NETWORK,
     {"key": "{{ request.object.spec.containers[0].resources.limits || 'none' }}", "operator": "Equals",
      "value": "none"}),
    ("cis-k8s-5-2-2-privileged-kyverno", PRIVILEGED,
     {"key": "{{ request.object.spec.securityContext.fsGroup || 'none' }}", "operator": "Equals", "value": "none"}),
    ("cis-k8s-5-2-2-privileged-kyverno", PRIVILEGED,
     {"key": "{{ length(request.object.spec.containers) }}", "operator": "LessThanOrEquals", "value": 2}),
])
def test_a_policy_narrowed_to_bare_test_pods_fails(name, rule, precondition):
    right = run(name, None, None, task="policy", artifact=("kyverno", [_content_policy(name, [rule])]))
    assert right["passed"], failed(right)
    narrowed = dict(copy.deepcopy(rule), preconditions={"all": [precondition]})
    verdict = run(name, None, None, task="policy", artifact=("kyverno", [_content_policy(name, [narrowed])]))
    assert not verdict["passed"] and "ciso.general" in failed(verdict)


def test_a_gap_variant_holds_what_a_pod_on_a_cluster_holds():
    control = ciso.CATALOGUE["cis-k8s-5.2.2"]
    gap = control.objects("ciso-target", True)[0]
    held = [variation._pod(v) for v in variation.variants(control, gap, True)]
    held = [p for p in held if p and any(vol.get("projected") for vol in p.get("volumes") or [])]
    assert held
    pod = held[0]
    assert pod["securityContext"].get("fsGroup") and len(pod["containers"]) >= 3 and pod.get("initContainers")
    assert all(c.get("resources", {}).get("limits") for c in pod["containers"])


def test_kyverno_disallow_host_namespaces_is_a_right_policy_of_each_host_namespace_control():
    # hostPID, hostIPC and hostNetwork judged together: no compliant variant breaks another CIS control
    rule = {"name": "host-namespaces", "match": {"any": [{"resources": {"kinds": ["Pod"]}}]},
            "validate": {"message": "no host namespaces", "pattern": {"spec": {
                "=(hostPID)": "false", "=(hostIPC)": "false", "=(hostNetwork)": "false"}}}}
    name = "cis-5-2-5-host-network-kyverno"
    verdict = run(name, None, None, task="policy", artifact=("kyverno", [_content_policy(name, [rule])]))
    assert verdict["passed"], failed(verdict)
    control = ciso.CATALOGUE["cis-k8s-5.2.5"]
    for obj_ in control.objects("ciso-target", False):
        for v in variation.variants(control, obj_, False, other_controls_graded=False):
            assert not variation._violations(v) - variation._violations(obj_), v["metadata"]["name"]


def test_host_variants_hold_stock_and_violating_other_settings():
    control = ciso.CATALOGUE["rhel9-sshd-permit-root-login"]
    for violating in (True, False):
        hosts = dict(control.variants(violating))
        stock = hosts["the other settings stock"]
        assert "PASS_MAX_DAYS" not in stock["files"]["/etc/login.defs"]
        assert control.setting(stock) == control.setting(control.facts(violating))
        bad = hosts["the other settings violating"]
        assert bad["files"]["/etc/login.defs"]["PASS_MAX_DAYS"] == "99999"
        assert bad["services"]["auditd.service"]["status"] == "disabled"
    auditd = dict(ciso.CATALOGUE["rhel9-auditd-enabled"].variants(True))
    assert "MaxAuthTries" not in auditd["the other settings stock"]["files"]["/etc/ssh/sshd_config"]


def _hpa(behavior, low=1, high=10):
    return {"spec": {"minReplicas": low, "maxReplicas": high, "behavior": behavior}}


THROTTLED = {"stabilizationWindowSeconds": 3600, "selectPolicy": "Min",
             "policies": [{"type": "Pods", "value": 1, "periodSeconds": 1800}]}


@pytest.mark.parametrize("direction", ["scaleUp", "scaleDown"])
def test_an_autoscaler_throttled_by_valid_values_does_not_scale_in_time(direction):
    assert not hpa_disabled(_hpa({}), direction)
    assert hpa_disabled(_hpa({direction: {"selectPolicy": "Disabled"}}), direction)
    assert hpa_disabled(_hpa({direction: THROTTLED}), direction)
    assert hpa_disabled(_hpa({direction: {"policies": [{"type": "Pods", "value": 1, "periodSeconds": 1800}]}}), direction)
    # damping as operators set it: a 10 minute window, 50% a minute
    assert not hpa_disabled(_hpa({direction: {"stabilizationWindowSeconds": 600}}), direction)
    assert not hpa_disabled(_hpa({direction: {"policies": [{"type": "Percent", "value": 50, "periodSeconds": 60}]}}),
                            direction)
    assert hpa_scaling_seconds(_hpa({}, 3, 3), direction) == 0.0


@pytest.mark.parametrize("direction", ["scaleUp", "scaleDown"])
def test_a_finops_fix_with_a_throttled_autoscaler_fails(direction):
    name = "otel-frontend-hpa-misconfigured"
    state = derived(name, "solved")
    obj(state, "HorizontalPodAutoscaler", "frontend")["spec"]["behavior"] = {direction: copy.deepcopy(THROTTLED)}
    assert not run(name, None, state, task="mitigate")["passed"]


@pytest.mark.parametrize("amounts, limited", [({"nvidia.com/gpu": "4"}, True), ({"hugepages-2Mi": "8Gi"}, True),
                                               ({"ephemeral-storage": "500Gi"}, False)])
def test_a_finops_fix_requesting_other_resources_fails(amounts, limited):
    name = "otel-cart-overprovisioned-requests"
    state = derived(name, "solved")
    assert run(name, None, state, task="mitigate")["passed"]
    targets = [obj(state, "Deployment", "cart")["spec"]["template"]["spec"]]
    targets += [o["spec"] for o in state["resources"]["items"] if o["kind"] == "Pod"
                and o["metadata"]["name"].startswith("cart-")]
    for spec in targets:
        res = next(c for c in spec["containers"] if c["name"] == "cart").setdefault("resources", {})
        res.setdefault("requests", {}).update(amounts)
        if limited:
            res.setdefault("limits", {}).update(amounts)
    verdict = run(name, None, state, task="mitigate")
    spend = next(c for c in verdict["checks"] if c["id"] == "finops.spend")
    assert not verdict["passed"] and not spend["passed"] and next(iter(amounts)) in spend["detail"]
