"""`validate.cel` (runtime/kyverno/cel.py) against Kyverno v1.19.1: each expression's verdict on two pods as
`kyverno apply` gave it (recorded below), again from the CLI where it is built, and the bounds."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

from itbench_dsl.runtime.kyverno import Unsupported, evaluate_policy

EXPRESSIONS = {
    "hostnet": "!has(object.spec.hostNetwork) || object.spec.hostNetwork == false",
    "priv": "object.spec.containers.all(c, !has(c.securityContext) || !has(c.securityContext.privileged) "
            "|| c.securityContext.privileged == false)",
    "image": "object.spec.containers.exists(c, c.image.startsWith('nginx'))",
    "names": "size(object.spec.containers) > 0 && 'c' in object.spec.containers.map(c, c.name)",
    "missing": "object.spec.missing == 1",
    "matches": "object.spec.containers[0].image.matches('^nginx:[0-9]+$')",
    "absorb": "object.spec.missing == 1 || true",
    "ternary": "(has(object.spec.hostPID) ? object.spec.hostPID : false) == false",
    "filter": "object.spec.containers.filter(c, has(c.ports)).size() == 0",
    "one": "object.spec.containers.exists_one(c, c.name == 'c')",
    "arith": "1 + 2 * 3 == 7 && 7 / 2 == 3 && 7 % 3 == 1",
    "str": "object.metadata.name + '-x' == 'a-x' || object.metadata.name.size() > 0",
    "labels": "!('team' in object.metadata.labels) || object.metadata.labels['team'] != 'x'",
    # cel-go's strings extension and dyn(), which Kyverno's CEL environment provides
    "split": "object.metadata.name.split('-').size() == 1 && 'a,b,c'.split(',', 2) == ['a', 'b,c'] "
             "&& 'ab'.split('') == ['a', 'b'] && 'a,b'.split(',', 0) == []",
    "join": "object.spec.containers.map(c, c.name).join(',') != 'c' && ['x', 'y'].join() == 'xy'",
    "indexOf": "object.spec.containers[0].image.indexOf(':') >= 0 && 'a:b:c'.indexOf(':', 2) == 3",
    "lastIndexOf": "'a:b:c'.lastIndexOf(':') == 3 && 'a:b:c'.lastIndexOf(':', 2) == 1 && 'abc'.lastIndexOf('') == 3",
    "replace": "'a-b-c'.replace('-', '+') == 'a+b+c' && 'a-b-c'.replace('-', '+', 1) == 'a+b-c'",
    "dyn": "dyn(object.spec).?hostNetwork.orValue(false) == false",
    "range": "'abc'.indexOf('b', 4) == 1",
}
PODS = [
    {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "a", "namespace": "n", "labels": {"team": "x"}},
     "spec": {"hostNetwork": True, "containers": [{"name": "c", "image": "nginx:1", "securityContext": {"privileged": True}}]}},
    {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "b", "namespace": "n"},
     "spec": {"containers": [{"name": "d", "image": "busybox", "ports": [{"containerPort": 80}]},
                             {"name": "c", "image": "nginx:latest"}]}},
]
# as `kyverno apply` (v1.19.1) reports them: a CEL error fails the rule
KYVERNO = {
    "a": {"hostnet": "fail", "priv": "fail", "missing": "fail", "labels": "fail", "join": "fail", "dyn": "fail",
          "range": "fail"},
    "b": {"missing": "fail", "matches": "fail", "filter": "fail", "labels": "fail", "indexOf": "fail",
          "range": "fail"},
}
POLICY = {"apiVersion": "kyverno.io/v1", "kind": "ClusterPolicy", "metadata": {"name": "cel"},
          "spec": {"background": True, "rules": [
              {"name": k, "match": {"any": [{"resources": {"kinds": ["Pod"]}}]},
               "validate": {"cel": {"expressions": [{"expression": v}]}}} for k, v in EXPRESSIONS.items()]}}


def _expected(pod: str, rule: str) -> str:
    return KYVERNO[pod].get(rule, "pass")


@pytest.mark.parametrize("pod", PODS, ids=lambda p: p["metadata"]["name"])
def test_cel_expressions_agree_with_kyverno(pod):
    name = pod["metadata"]["name"]
    results = {r.rule: r.status for r in evaluate_policy(POLICY, pod)}
    assert {k: results[k] for k in EXPRESSIONS} == {k: _expected(name, k) for k in EXPRESSIONS}
    # a Deployment running the pod: the autogen rules read its template
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name, "namespace": "n"},
                  "spec": {"template": {"metadata": {}, "spec": pod["spec"]}}}
    results = {r.rule: r.status for r in evaluate_policy(POLICY, deployment)}
    shifted = {k for k in EXPRESSIONS if "object.spec" in EXPRESSIONS[k]}
    assert {k: results[f"autogen-{k}"] for k in shifted} == {k: _expected(name, k) for k in shifted}


def test_unsupported_cel_is_named_and_bounds_hold():
    def rule(expression):
        return {**POLICY, "spec": {"rules": [{"name": "r", "match": {"any": [{"resources": {"kinds": ["Pod"]}}]},
                                              "validate": {"cel": {"expressions": [{"expression": expression}]}}}]}}
    with pytest.raises(Unsupported, match="quantity"):
        evaluate_policy(rule("quantity('1Gi') > quantity('1Mi')"), PODS[0])
    (result,) = [r for r in evaluate_policy(rule("(" * 500 + "true" + ")" * 500), PODS[0]) if r.rule == "r"]
    assert result.status == "error" and "nest" in result.message
    # a macro over a macro over a list: bounded by the evaluation budget, never a hang
    big = {**PODS[0], "spec": {"containers": [{"name": str(i), "image": "x"} for i in range(2000)]}}
    (result,) = [r for r in evaluate_policy(rule(
        "object.spec.containers.all(a, object.spec.containers.all(b, a.name != b.name || a == b))"), big)
        if r.rule == "r"]
    assert result.status == "error" and "budget" in result.message


def test_the_recorded_results_are_the_kyverno_clis(tmp_path):
    tool = Path(__file__).resolve().parents[2] / "tools" / "build_ecosystem.py"
    spec = importlib.util.spec_from_file_location("build_ecosystem_cel", tool)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    binary = module.binary_path("kyverno") if module.go_binary() else None
    if binary is None or not binary.is_file():
        pytest.skip("the Kyverno CLI is not built (python tools/build_ecosystem.py kyverno)")
    yaml = pytest.importorskip("yaml")
    (tmp_path / "policy.yaml").write_text(yaml.safe_dump(POLICY))
    (tmp_path / "pods.yaml").write_text("".join("---\n" + json.dumps(p) + "\n" for p in PODS))
    out = subprocess.run([str(binary), "apply", str(tmp_path / "policy.yaml"), "--resource", str(tmp_path / "pods.yaml"),
                          "--policy-report"], capture_output=True, text=True, timeout=300)
    assert "apiVersion" in out.stdout, out.stderr[-2000:]
    report = yaml.safe_load(out.stdout[out.stdout.index("apiVersion"):])
    got = {(res["name"], r["rule"]): r["result"] for r in report["results"] for res in r.get("resources", [])}
    for pod in ("a", "b"):
        for rule in EXPRESSIONS:
            assert got[(pod, rule)] == _expected(pod, rule), (pod, rule)


def test_the_budget_bounds_every_rule_of_a_policy_together(monkeypatch):
    """A policy of many rules, each of an expression beyond the budget, spends one budget against a resource,
    not one per rule: grading it takes the bound's time once, however many rules it has."""
    from itbench_dsl.runtime.kyverno import KyvernoError, cel

    spent = {"steps": 0}
    run = cel._Eval.run

    def counted(self, node, scope):
        spent["steps"] += 1
        return run(self, node, scope)

    monkeypatch.setattr(cel._Eval, "run", counted)
    numbers = "[" + ",".join(str(i) for i in range(1000)) + "]"
    heavy = f"{numbers}.all(x, {numbers}.all(y, x >= 0))"  # a million steps
    rules = [{"name": f"r{i}", "match": {"any": [{"resources": {"kinds": ["Pod"]}}]},
              "validate": {"cel": {"expressions": [{"expression": heavy}]}}} for i in range(16)]
    policy = {"apiVersion": "kyverno.io/v1", "kind": "ClusterPolicy", "metadata": {"name": "p"},
              "spec": {"validationFailureAction": "Audit", "background": True, "rules": rules}}
    try:
        evaluate_policy(policy, PODS[0])
    except KyvernoError as exc:
        assert "budget" in str(exc)
    assert spent["steps"] <= cel.MAX_STEPS + 16 * 2, spent


OPTIONAL_POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "o", "namespace": "n"},
                "spec": {"initContainers": [{"name": "i", "image": "x", "securityContext": {"privileged": True}}],
                         "containers": [{"name": "c", "image": "x"}]}}


@pytest.mark.parametrize("expression, expected", [
    # optional field selection and index (cel-go's optional types, as Kyverno enables them)
    ("object.?spec.?hostNetwork.orValue(false) == false", "pass"),
    ("object.spec.?containers[?0].?name == optional.of('c')", "pass"),
    ("object.spec.containers[?5].hasValue()", "fail"),
    ("object.?metadata.?labels.?team.orValue('none') == 'none'", "pass"),
    ("object.spec.?hostPID.or(optional.of(false)).value() == false", "pass"),
    ("object.spec.?hostPID.value()", "fail"),  # none dereferenced: an error, which fails the rule
    ("has(object.?spec.?nothing.x) == false", "pass"),
    ("optional.none().orValue(1) == 1 && !optional.none().hasValue()", "pass"),
    # variables, read lazily; one made of optional selections
    ("variables.all.all(c, !c.?securityContext.?privileged.orValue(false))", "fail"),
    ("size(variables.all) == 2 && variables.names == ['c', 'i']", "pass"),
])
def test_optional_values_and_variables(expression, expected):
    policy = {**POLICY, "spec": {"rules": [{"name": "r", "match": {"any": [{"resources": {"kinds": ["Pod"]}}]},
                                            "validate": {"cel": {"variables": [
                                                {"name": "all", "expression": "object.spec.containers + "
                                                                              "object.spec.?initContainers.orValue([])"},
                                                {"name": "names", "expression": "variables.all.map(c, c.name)"}],
                                                "expressions": [{"expression": expression}]}}}]}}
    (result,) = [r for r in evaluate_policy(policy, OPTIONAL_POD) if r.rule == "r"]
    assert result.status == expected, result.message


def test_a_validating_policy_is_evaluated():
    policy = {"apiVersion": "policies.kyverno.io/v1", "kind": "ValidatingPolicy", "metadata": {"name": "priv"},
              "spec": {"validationActions": ["Audit"],
                       "matchConstraints": {"resourceRules": [{"apiGroups": [""], "apiVersions": ["v1"],
                                                               "operations": ["CREATE", "UPDATE"], "resources": ["pods"]}]},
                       "matchConditions": [{"name": "not-system",
                                            "expression": "object.metadata.?namespace.orValue('') != 'kube-system'"}],
                       "autogen": {"podControllers": {"controllers": ["deployments"]}},
                       "variables": [{"name": "all", "expression": "object.spec.containers + "
                                                                   "object.spec.?initContainers.orValue([])"}],
                       "validations": [{"expression": "variables.all.all(c, !c.?securityContext.?privileged"
                                                      ".orValue(false))", "message": "privileged"}]}}
    assert [r.status for r in evaluate_policy(policy, OPTIONAL_POD)] == ["fail"]
    clean = {**OPTIONAL_POD, "spec": {"containers": [{"name": "c", "image": "x"}]}}
    assert [r.status for r in evaluate_policy(policy, clean)] == ["pass"]
    system = {**OPTIONAL_POD, "metadata": {"name": "o", "namespace": "kube-system"}}
    assert [r.status for r in evaluate_policy(policy, system)] == ["skip"]
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d", "namespace": "n"},
                  "spec": {"template": {"metadata": {}, "spec": OPTIONAL_POD["spec"]}}}
    assert [r.status for r in evaluate_policy(policy, deployment)] == ["fail"]  # autogen: its pod template
    role = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role", "metadata": {"name": "r", "namespace": "n"}}
    assert [r.status for r in evaluate_policy(policy, role)] == ["skip"]
    with pytest.raises(Unsupported, match="paramKind"):
        evaluate_policy({**policy, "spec": {**policy["spec"], "paramKind": {"kind": "ConfigMap"}}}, OPTIONAL_POD)
