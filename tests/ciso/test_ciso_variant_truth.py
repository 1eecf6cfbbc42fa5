"""The catalogue controls' variants are true to Kubernetes: a gap variant takes the other values that violate
what a field is about, and the compliant example's guards beside the violation (`drop: [ALL]` beside an added
NET_RAW); no variant is an object the API server refuses (a required field left out) or stores otherwise (a port
of a pod on the host's network gets its hostPort)."""

from __future__ import annotations

import pytest

from itbench_dsl import ciso
from itbench_dsl.ciso import variation
from itbench_dsl.compiler import compile_source
from itbench_dsl.diagnostics import Diagnostics
from itbench_dsl.runtime import evaluator
from itbench_dsl.runtime.state import server_defaulted
from itbench_dsl.validate import validate_object

SOURCE = '''scenario "{slug}-test" {{
  domain ciso
  complexity medium
  description "A control of the catalogue alone."
  tags ["CIS"]
  control "{control}"
  task {task}
  topology {{
    namespace "ciso-target"
  }}
}}
'''


def spec_for(control: str, task: str = "kyverno_policy") -> dict:
    from itbench_dsl.analysis.corpus import all_cases

    text = SOURCE.format(slug=control.replace(".", "-"), control=control, task=task)
    result = compile_source(text.encode(), f"{control}.itb", Diagnostics())
    return all_cases(result.scenario)[0]


def policy(validate: dict, kinds=("Pod",)) -> tuple:
    rule = {"name": "r0", "match": {"any": [{"resources": {"kinds": list(kinds)}}]},
            "validate": {"message": "violates the control", **validate}}
    return ("kyverno", [{"apiVersion": "kyverno.io/v1", "kind": "ClusterPolicy", "metadata": {"name": "agent-policy"},
                         "spec": {"validationFailureAction": "Audit", "background": True, "rules": [rule]}}])


def verdict(spec: dict, artifact) -> tuple[bool, dict]:
    out = evaluator.evaluate(spec, None, None, task="policy", artifact=artifact)
    return out["passed"], {c["id"]: c for c in out["checks"]}


def _all(spec: dict, side: str) -> list[dict]:
    return spec["ciso"][side] + spec["ciso"]["variants"][side]


def _add(obj: dict) -> list:
    pod = variation._pod(obj) or {}
    return [a for c in variation._containers(pod)
            for a in ((c.get("securityContext") or {}).get("capabilities") or {}).get("add") or []]


# a policy keyed on the one literal the gap holds, not on what the field is about
def deny_added(cap: str) -> dict:
    return {"deny": {"conditions": {"any": [{"key": cap, "operator": "AnyIn", "value":
            "{{ request.object.spec.[containers, initContainers][].securityContext.capabilities.add[] || `[]` }}"}]}}}


ONE_HOST_PATH = {"pattern": {"spec": {"=(volumes)": [{"=(hostPath)": {"path": "!/var/log"}}]}}}
DROPPED = "{{ element.securityContext.capabilities.drop[] || `[]` }}"
DROP_ALL_ONLY = {"foreach": [{"list": "request.object.spec.[containers, initContainers][]", "deny": {"conditions": {
    "all": [{"key": "ALL", "operator": "AnyNotIn", "value": DROPPED}]}}}]}


@pytest.mark.parametrize("control, validate", [
    ("cis-k8s-5.2.9", deny_added("SYS_ADMIN")),
    ("cis-k8s-5.2.12", ONE_HOST_PATH),
    ("cis-k8s-5.2.8", DROP_ALL_ONLY),
], ids=["5.2.9 one capability", "5.2.12 one host path", "5.2.8 drop ALL alone"])
def test_a_policy_keyed_on_the_gaps_literal_or_the_guard_alone_fails_general(control, validate):
    passed, checks = verdict(spec_for(control), policy(validate))
    assert not passed and not checks["ciso.general"]["passed"], checks["ciso.general"]["detail"]


def test_gap_variants_take_other_violating_values():
    spec = spec_for("cis-k8s-5.2.9")
    assert {"NET_ADMIN", "SYS_PTRACE", "ALL"} <= {a for g in _all(spec, "gaps") for a in _add(g)}
    paths = {v["hostPath"]["path"] for g in _all(spec_for("cis-k8s-5.2.12"), "gaps")
             for v in (variation._pod(g) or {}).get("volumes") or [] if "hostPath" in v}
    assert {"/var/log", "/", "/etc"} <= paths


def test_a_gap_drops_all_and_adds_net_raw_back():
    spec = spec_for("cis-k8s-5.2.8")
    assert any("NET_RAW" in ((c.get("securityContext") or {}).get("capabilities") or {}).get("add", [])
               and "ALL" in c["securityContext"]["capabilities"].get("drop", [])
               for g in _all(spec, "gaps") for c in variation._containers(variation._pod(g) or {}))


@pytest.mark.parametrize("control", [c for c in ciso.k8s.CONTROLS], ids=lambda c: c.id)
def test_no_variant_is_refused_or_changed_by_the_api_server(control):
    """Every variant is an object the API server admits (no required field left out: an env var's name, a
    Secret key selector's name and key) and stores as judged (its defaults leave its side unchanged)."""
    for violating in (True, False):
        for obj in control.objects("ciso-target", violating):
            if bool(control.probe([obj])) != violating or validate_object(obj):
                continue
            for graded in (True, False):
                for copy_ in variation.variants(control, obj, violating, other_controls_graded=graded):
                    assert validate_object(copy_) == [], (copy_["metadata"]["name"], validate_object(copy_))
                    assert bool(control.probe([server_defaulted(copy_)])) == violating, copy_["metadata"]["name"]


# Kyverno's own Pod Security Baseline policy for host ports (kyverno/policies, disallow-host-ports)
UPSTREAM_HOST_PORTS = {"pattern": {"spec": {
    "=(ephemeralContainers)": [{"=(ports)": [{"=(hostPort)": 0}]}],
    "=(initContainers)": [{"=(ports)": [{"=(hostPort)": 0}]}],
    "containers": [{"=(ports)": [{"=(hostPort)": 0}]}]}}}


def test_kyvernos_host_ports_policy_passes_5_2_13():
    """A compliant variant on the host's network has its ports' hostPort once stored: it is no compliant object."""
    spec = spec_for("cis-k8s-5.2.13")
    assert not any((variation._pod(o) or {}).get("hostNetwork") for o in _all(spec, "compliant"))
    passed, checks = verdict(spec, policy(UPSTREAM_HOST_PORTS))
    assert passed, [c["detail"] for c in checks.values() if not c["passed"]]


def test_secret_env_variants_keep_the_required_fields():
    spec = spec_for("cis-k8s-5.4.1", "opa_kubectl")
    for gap in _all(spec, "gaps"):
        for c in variation._containers(variation._pod(gap) or {}):
            for e in c.get("env") or []:
                ref = (e.get("valueFrom") or {}).get("secretKeyRef")
                assert e.get("name") and (ref is None or (ref.get("name") and ref.get("key"))), e
