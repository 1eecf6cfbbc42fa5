"""The offline Kyverno matcher (itbench_dsl/runtime/kyverno/) and `itbench policy-test`.

The reference suites are kyverno/policies test folders in ../shared; each must pass, or
fail only because the suite itself is unusable (a file it names is not shipped).
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from itbench_dsl.cli import cli
from itbench_dsl.runtime import kyverno as k

SHARED = Path(__file__).resolve().parents[3] / "shared"
SUITES_ROOT = SHARED / "reference" / "kyverno" / "policy-tests"
SUITES = sorted(SUITES_ROOT.rglob("kyverno-test.yaml")) if SUITES_ROOT.is_dir() else []


def _load(path: str) -> list:
    with open(path, encoding="utf-8") as f:
        return [d for d in yaml.safe_load_all(f) if d is not None]


def _missing_files(suite: Path) -> list[str]:
    test = _load(str(suite))[0]
    names = list(test.get("policies") or []) + list(test.get("resources") or [])
    return [n for n in names if not (suite.parent / n).exists()]


@pytest.mark.skipif(not SUITES, reason=f"reference suites not found under {SUITES_ROOT}")
@pytest.mark.parametrize("suite", SUITES, ids=[str(s.relative_to(SUITES_ROOT).parent.parent) for s in SUITES]
                         if SUITES else [])
def test_reference_suite(suite: Path) -> None:
    missing = _missing_files(suite)
    if missing:
        pytest.skip(f"suite names files that are not in the reference copy: {', '.join(missing[:3])}")
    report = k.run_test_suite(_load(str(suite))[0], str(suite.parent), _load, os.path.join)
    assert not report.unsupported, f"unsupported: {report.unsupported}"
    assert not report.error, report.error
    unmet = [f"{r.rule} {r.kind}/{r.resource}: want {r.expected}, got {r.actual} ({r.detail})"
             for r in report.results if not r.met]
    assert not unmet, "\n".join(unmet)


# --- helpers ------------------------------------------------------------------------------

def pod(spec: dict | None = None, **meta) -> dict:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default", **meta},
            "spec": spec or {"containers": [{"name": "c", "image": "nginx"}]}}


def policy(rule: dict, annotations: dict | None = None, kinds=("Pod",)) -> dict:
    rule = {"name": "r", "match": {"any": [{"resources": {"kinds": list(kinds)}}]}, **rule}
    return {"apiVersion": "kyverno.io/v1", "kind": "ClusterPolicy",
            "metadata": {"name": "pol", "annotations": annotations or {}}, "spec": {"rules": [rule]}}


def status(pol: dict, res: dict, rule: str = "r", **kw) -> str:
    return {r.rule: r.status for r in k.evaluate_policy(pol, res, **kw)}[rule]


def pat(pattern) -> dict:
    return policy({"validate": {"message": "m", "pattern": pattern}})


# --- pattern values -----------------------------------------------------------------------

@pytest.mark.parametrize("pattern,value,ok", [
    ("?*", "x", True), ("?*", "", False), ("*", None, False), ("nginx*", "nginx:1", True),
    ("!default", "default", False), ("!default", "prod", True),
    (">1", 2, True), (">1", 1, False), (">=1", 1, True), ("<=2Gi", "1Gi", True), ("<1Gi", "2Gi", False),
    ("1-10", 5, True), ("1-10", 11, False), ("1!-10", 11, True), ("1!-10", 5, False),
    ("a | b", "b", True), ("a | b", "c", False), (">1 & <5", 3, True), (">1 & <5", 6, False),
    ("<1h", "30m", True), (">=500m", "1", True),
    (1, "1", True), (1, 1.0, True), (True, "true", False), (None, "", True), (None, 0, True), (None, "x", False),
])
def test_value_operators(pattern, value, ok) -> None:
    assert k.validate_value(value, pattern) is ok


def test_required_field_and_arrays() -> None:
    p = pat({"spec": {"containers": [{"image": "!*:latest"}]}})
    assert status(p, pod({"containers": [{"name": "a", "image": "x:1"}, {"name": "b", "image": "x:2"}]})) == "pass"
    assert status(p, pod({"containers": [{"name": "a", "image": "x:1"}, {"name": "b", "image": "x:latest"}]})) == "fail"
    assert status(pat({"spec": {"hostNetwork": "*"}}), pod()) == "fail"


# --- anchors ------------------------------------------------------------------------------

def test_conditional_anchor_skips_when_nothing_applies() -> None:
    p = pat({"spec": {"containers": [{"(name)": "web*", "image": "registry/*"}]}})
    assert status(p, pod({"containers": [{"name": "db", "image": "x"}]})) == "skip"
    assert status(p, pod({"containers": [{"name": "web1", "image": "registry/a"}, {"name": "db", "image": "x"}]})) == "pass"
    assert status(p, pod({"containers": [{"name": "web1", "image": "x"}]})) == "fail"


def test_equality_negation_existence_global_anchors() -> None:
    eq = pat({"spec": {"=(hostNetwork)": False}})
    assert status(eq, pod()) == "pass"
    assert status(eq, pod({"hostNetwork": True, "containers": []})) == "fail"
    neg = pat({"spec": {"X(hostPID)": "null"}})
    assert status(neg, pod()) == "pass"
    assert status(neg, pod({"hostPID": False, "containers": []})) == "fail"
    ex = pat({"spec": {"^(containers)": [{"image": "nginx"}]}})
    assert status(ex, pod({"containers": [{"image": "a"}, {"image": "nginx"}]})) == "pass"
    assert status(ex, pod({"containers": [{"image": "a"}]})) == "fail"
    glob = pat({"spec": {"containers": [{"<(image)": "nginx", "name": "web"}]}})
    assert status(glob, pod({"containers": [{"image": "other", "name": "x"}]})) == "skip"
    assert status(glob, pod({"containers": [{"image": "nginx", "name": "x"}]})) == "fail"
    add = pat({"metadata": {"+(labels)": {"a": "b"}}})
    assert status(add, pod()) == "pass"


def test_wildcard_keys_in_metadata() -> None:
    p = pat({"metadata": {"labels": {"app.kubernetes.io/*": "?*"}}})
    assert status(p, pod(labels={"app.kubernetes.io/name": "x"})) == "pass"
    assert status(p, pod(labels={"team": "x"})) == "fail"


def test_any_pattern() -> None:
    p = policy({"validate": {"message": "m", "anyPattern": [
        {"spec": {"securityContext": {"runAsNonRoot": True}}},
        {"spec": {"containers": [{"securityContext": {"runAsNonRoot": True}}]}}]}})
    assert status(p, pod({"securityContext": {"runAsNonRoot": True}, "containers": [{"name": "c"}]})) == "pass"
    assert status(p, pod({"containers": [{"name": "c", "securityContext": {"runAsNonRoot": True}}]})) == "pass"
    assert status(p, pod()) == "fail"


# --- conditions ---------------------------------------------------------------------------

@pytest.mark.parametrize("op,key,value,ok", [
    ("Equals", "abc", "a*", True), ("NotEquals", "abc", "a*", False), ("Equals", 3, "3", True),
    ("Equals", "1Gi", "1024Mi", True), ("Equals", {"a": 1}, {"a": 1}, True),
    ("AnyIn", ["a", "z"], ["a", "b"], True), ("AllIn", ["a", "z"], ["a", "b"], False),
    ("AnyNotIn", ["a", "z"], ["a", "b"], True), ("AllNotIn", ["x", "z"], ["a", "b"], True),
    ("AnyIn", 5555, "5000-6000", True), ("AnyNotIn", [80], "5000-6000", True),
    ("In", "a", ["a", "b"], True), ("NotIn", "c", ["a", "b"], True),
    ("GreaterThan", "2Gi", "1Gi", True), ("LessThanOrEquals", 3, 3, True), ("GreaterThan", "2h", "90m", True),
    ("DurationGreaterThan", "2h", "1h", True), ("DurationLessThan", "2h", "1h", False),
])
def test_operators(op, key, value, ok) -> None:
    assert k.evaluate_operator(op, key, value) is ok


def test_unknown_operator_is_unsupported() -> None:
    with pytest.raises(k.Unsupported, match="Frobnicate"):
        k.evaluate_operator("Frobnicate", 1, 1)


def test_preconditions_and_deny() -> None:
    p = policy({
        "preconditions": {"all": [{"key": "{{ request.operation || 'BACKGROUND' }}", "operator": "AnyIn",
                                   "value": ["CREATE", "UPDATE"]}]},
        "validate": {"message": "no {{ request.object.metadata.name }}",
                     "deny": {"conditions": {"any": [{"key": "{{ request.object.metadata.labels.team || '' }}",
                                                      "operator": "Equals", "value": ""}]}}}})
    assert status(p, pod(labels={"team": "a"})) == "pass"
    assert status(p, pod()) == "fail"
    assert status(p, pod(), operation="DELETE") == "skip"
    # a missing key without a default is a rule error in deny, "" in preconditions
    bad = policy({"validate": {"message": "m", "deny": {"conditions": [
        {"key": "{{ request.object.metadata.labels.team }}", "operator": "Equals", "value": ""}]}}})
    assert status(bad, pod()) == "error"
    soft = policy({"preconditions": [{"key": "{{ request.object.metadata.labels.team }}", "operator": "Equals",
                                      "value": ""}], "validate": {"message": "m", "pattern": {"kind": "Pod"}}})
    assert status(soft, pod()) == "pass"


# --- JMESPath -----------------------------------------------------------------------------

DOC = {"spec": {"containers": [{"name": "a", "ports": [{"p": 1}, {"p": 2}]}, {"name": "b", "ports": [{"p": 3}]}],
                "labels": {"x": "1"}}}


@pytest.mark.parametrize("expr,result", [
    ("spec.containers[0].name", "a"), ("spec.containers[-1].name", "b"), ("spec.containers[*].name", ["a", "b"]),
    ("spec.containers[].ports[].p", [1, 2, 3]), ("spec.containers[?name=='b'].name | [0]", "b"),
    ("spec.containers[] | length(@)", 2), ("spec.labels.keys(@)", ["x"]), ("spec.missing || `[]`", []),
    ("to_string(spec.labels)", '{"x":"1"}'), ("spec.[labels, nothing][]", [{"x": "1"}]),
    ("contains(spec.containers[].name, 'a')", True), ("merge(spec.labels, {y: 'z'})", {"x": "1", "y": "z"}),
    ("regex_match('^[0-9]+%$', '50%')", True), ("spec.containers[?ports[?p > `1`]].name", ["a", "b"]),
])
def test_jmespath(expr, result) -> None:
    assert k.jmespath_search(expr, DOC) == result


def test_jmespath_missing_key_and_unsupported_function() -> None:
    with pytest.raises(k.NotFound):
        k.jmespath_search("spec.nothing.deeper", DOC)
    with pytest.raises(k.Unsupported, match="time_now"):
        k.jmespath_search("time_now()", DOC)


def test_nested_variables_and_interpolation() -> None:
    ctx = {"request": {"object": {"spec": {"minAvailable": "50%"}, "metadata": {"name": "n"}}}}
    assert k.substitute("{{ regex_match('^[0-9]+%$', '{{ request.object.spec.minAvailable }}') }}", ctx) is True
    assert k.substitute("name={{ request.object.metadata.name }}", ctx) == "name=n"


# --- match, exclude, autogen --------------------------------------------------------------

def test_kinds_forms_names_namespaces() -> None:
    dep = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web-1", "namespace": "prod"},
           "spec": {"template": {"spec": {"containers": []}}}}
    for kinds, ok in ((["apps/v1/Deployment"], True), (["v1/Deployment"], True), (["*/Deployment"], True),
                      (["batch/v1/Deployment"], False), (["Deploy*"], True), (["Deployment/scale"], False)):
        assert k._kind_matches(kinds, dep) is ok, kinds
    flt = {"resources": {"kinds": ["Deployment"], "names": ["web-*"], "namespaces": ["pr?d"]}}
    assert k._filter_matches(flt, dep, "CREATE")
    flt["resources"]["operations"] = ["UPDATE"]
    assert not k._filter_matches(flt, dep, "CREATE")
    p = pat({"metadata": {"name": "x"}})
    p["spec"]["rules"][0]["exclude"] = {"any": [{"resources": {"namespaces": ["kube-*"]}}]}
    assert status(p, pod(namespace="kube-system")) == "skip"


def test_autogen_rules() -> None:
    p = pat({"spec": {"containers": [{"image": "!*:latest"}]}})
    rules = [r["name"] for r in k.expand_rules(p)]
    assert rules == ["r", "autogen-r", "autogen-cronjob-r"]
    dep = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
           "spec": {"template": {"spec": {"containers": [{"name": "c", "image": "x:latest"}]}}}}
    cron = {"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "c"},
            "spec": {"jobTemplate": {"spec": {"template": {"spec": {"containers": [{"name": "c", "image": "x:1"}]}}}}}}
    assert status(p, dep, "autogen-r") == "fail"
    assert status(p, cron, "autogen-cronjob-r") == "pass"
    assert status(p, dep, "r") == "skip"
    none = pat({"spec": {"containers": [{"image": "!*:latest"}]}})
    none["metadata"]["annotations"] = {"pod-policies.kyverno.io/autogen-controllers": "none"}
    assert [r["name"] for r in k.expand_rules(none)] == ["r"]
    # variables are shifted onto the pod template
    deny = policy({"validate": {"message": "m", "deny": {"conditions": [
        {"key": "{{ request.object.spec.hostNetwork || `false` }}", "operator": "Equals", "value": True}]}}})
    dep["spec"]["template"]["spec"]["hostNetwork"] = True
    assert status(deny, dep, "autogen-r") == "fail"


def test_foreach_and_context_variables() -> None:
    p = policy({"context": [{"name": "banned", "variable": {"value": ["latest"]}}],
                "validate": {"message": "m", "foreach": [{
                    "list": "request.object.spec.containers",
                    "preconditions": [{"key": "{{ element.name }}", "operator": "NotEquals", "value": "sidecar"}],
                    "deny": {"conditions": [{"key": "{{ split(element.image, ':')[1] || 'latest' }}",
                                             "operator": "AnyIn", "value": "{{ banned }}"}]}}]}})
    assert status(p, pod({"containers": [{"name": "a", "image": "x:1"}]})) == "pass"
    assert status(p, pod({"containers": [{"name": "a", "image": "x:1"}, {"name": "b", "image": "x:latest"}]})) == "fail"
    assert status(p, pod({"containers": [{"name": "sidecar", "image": "x:latest"}]})) == "skip"
    scoped = policy({"validate": {"message": "m", "foreach": [
        {"list": "request.object.spec.containers", "pattern": {"image": "!*:latest"}}]}})
    assert status(scoped, pod({"containers": [{"name": "a", "image": "x:latest"}]})) == "fail"
    dep = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
           "spec": {"template": {"spec": {"containers": [{"name": "c", "image": "x:latest"}]}}}}
    assert status(scoped, dep, "autogen-r") == "fail"


def test_unsupported_features_are_named() -> None:
    p = policy({"context": [{"name": "cm", "configMap": {"name": "x", "namespace": "y"}}],
                "validate": {"message": "m", "pattern": {"kind": "Pod"}}})
    with pytest.raises(k.Unsupported, match="configMap"):
        k.evaluate_policy(p, pod())
    p = policy({"mutate": {"patchStrategicMerge": {}}})
    with pytest.raises(k.Unsupported, match=r"rule 'r': spec\.rules\[0\]\.mutate: .* not supported"):
        k.evaluate_policy(p, pod())


def test_speed_one_policy_one_resource() -> None:
    p = pat({"spec": {"=(securityContext)": {"=(runAsNonRoot)": True},
                      "containers": [{"(name)": "*", "image": "!*:latest", "=(securityContext)": {"=(privileged)": False}}]}})
    res = pod({"containers": [{"name": f"c{i}", "image": "x:1"} for i in range(3)]})
    k.evaluate_policy(p, res)
    n = 2000
    start = time.perf_counter()
    for _ in range(n):
        k.evaluate_policy(p, res)
    per_call = (time.perf_counter() - start) / n
    assert per_call < 0.002, f"{per_call * 1e3:.3f} ms per evaluation"


# --- the command --------------------------------------------------------------------------

def _suite(tmp_path: Path, expected: str) -> Path:
    (tmp_path / "policy.yaml").write_text(yaml.safe_dump(pat({"metadata": {"labels": {"team": "?*"}}})))
    (tmp_path / "resources.yaml").write_text(yaml.safe_dump(pod()))
    test = {"apiVersion": "cli.kyverno.io/v1alpha1", "kind": "Test", "metadata": {"name": "t"},
            "policies": ["policy.yaml"], "resources": ["resources.yaml"],
            "results": [{"policy": "pol", "rule": "r", "resources": ["p"], "kind": "Pod", "result": expected}]}
    (tmp_path / "kyverno-test.yaml").write_text(yaml.safe_dump(test))
    return tmp_path


def test_cli_met_and_unmet(tmp_path: Path) -> None:
    runner = CliRunner()
    ok = runner.invoke(cli, ["policy-test", str(_suite(tmp_path, "fail"))])
    assert ok.exit_code == 0, ok.output
    assert "1/1 results met" in ok.output
    bad = runner.invoke(cli, ["policy-test", "--format", "json", str(_suite(tmp_path, "pass"))])
    assert bad.exit_code == 1
    data = json.loads(bad.stdout)
    assert data["summary"] == {"suites": 1, "passed": 0, "failed": 1, "unsupported": 0, "errors": 0,
                               "results": 1, "met": 0, "results_unsupported": 0}
    assert data["suites"][0]["results"][0]["actual"] == "fail"


def test_cli_unusable_and_unsupported(tmp_path: Path) -> None:
    runner = CliRunner()
    assert runner.invoke(cli, ["policy-test", str(tmp_path / "nothing")]).exit_code == 2
    (tmp_path / "kyverno-test.yaml").write_text("policies: [missing.yaml]\nresources: []\nresults: []\n")
    res = runner.invoke(cli, ["policy-test", str(tmp_path)])
    assert res.exit_code == 2 and "cannot read" in res.output
    suite = _suite(tmp_path, "fail")
    p = policy({"validate": {"message": "m", "cel": {"expressions": [], "paramKind": {"kind": "ConfigMap"}}}})
    (suite / "policy.yaml").write_text(yaml.safe_dump(p))
    res = runner.invoke(cli, ["policy-test", str(suite)])
    assert res.exit_code == 1 and "UNSUPPORTED" in res.output and "validate.cel.paramKind" in res.output


def test_unscored_policy_warns() -> None:
    p = pat({"spec": {"hostNetwork": False}})
    p["metadata"]["annotations"] = {"policies.kyverno.io/scored": "false"}
    assert status(p, pod({"hostNetwork": True, "containers": []})) == "warn"


def test_suite_ignores_unsupported_rules_it_does_not_ask_about(tmp_path: Path) -> None:
    suite = _suite(tmp_path, "fail")
    p = pat({"metadata": {"labels": {"team": "?*"}}})
    p["spec"]["rules"].append({"name": "m", "match": {"any": [{"resources": {"kinds": ["Pod"]}}]},
                               "mutate": {"patchStrategicMerge": {"metadata": {"labels": {"a": "b"}}}}})
    (suite / "policy.yaml").write_text(yaml.safe_dump(p))
    report = k.run_test_suite(_load(str(suite / "kyverno-test.yaml"))[0], str(suite), _load, os.path.join)
    assert report.passed, report
    test = _load(str(suite / "kyverno-test.yaml"))[0]
    test["results"][0]["rule"] = "m"
    report = k.run_test_suite(test, str(suite), _load, os.path.join)
    assert report.status == "unsupported" and "spec.rules[1].mutate" in report.unsupported
    assert report.results[0].unsupported and not report.results[0].met


def test_apply_rules_one_stops_at_the_first_rule_that_applies() -> None:
    p = pat({"metadata": {"labels": {"team": "?*"}}})
    second = {**p["spec"]["rules"][0], "name": "second"}
    p["spec"]["rules"].append(second)
    def own(results):
        return [r for r in results if not r.rule.startswith("autogen-")]
    assert [r.status for r in own(k.evaluate_policy(p, pod()))] == ["fail", "fail"]
    p = {**p, "spec": {**p["spec"], "applyRules": "One"}}
    results = own(k.evaluate_policy(p, pod()))
    assert [r.status for r in results] == ["fail", "skip"] and "applyRules" in results[1].message


def _run(suite: Path, **result) -> k.SuiteReport:
    test = _load(str(suite / "kyverno-test.yaml"))[0]
    test["results"][0].update(result)
    return k.run_test_suite(test, str(suite), _load, os.path.join)


@pytest.mark.parametrize("expected", ["pass", "fail", "skip"])
def test_a_rule_with_no_response_is_met_whatever_was_expected(tmp_path: Path, expected: str) -> None:
    """As `kyverno test` (its "Excluded" rows): an expected result whose rule gives no response for
    the resource is met, whatever it expected."""
    suite = _suite(tmp_path, expected)
    # the rule is not in the policy
    report = _run(suite, rule="no-such-rule")
    assert report.passed and report.results[0].actual == "excluded", report
    assert "not in the policy" in report.results[0].detail
    # the rule's match leaves the resource out (a Pod policy, a ConfigMap resource of the same name)
    (suite / "resources.yaml").write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "ConfigMap",
                                                          "metadata": {"name": "p", "namespace": "default"}}))
    report = _run(suite, kind="ConfigMap")
    assert report.passed and report.results[0].actual == "excluded", report
    # ... or its exclude does
    p = pat({"metadata": {"labels": {"team": "?*"}}})
    p["spec"]["rules"][0]["exclude"] = {"any": [{"resources": {"names": ["p"]}}]}
    (suite / "policy.yaml").write_text(yaml.safe_dump(p))
    (suite / "resources.yaml").write_text(yaml.safe_dump(pod()))
    report = _run(suite)
    assert report.passed and report.results[0].actual == "excluded", report


def test_a_rule_that_responds_is_still_compared(tmp_path: Path) -> None:
    suite = _suite(tmp_path, "skip")  # the rule applies and fails: neither skip nor pass is met
    assert _run(suite).status == "fail"
    assert _run(suite, result="pass").status == "fail"
    # a policy or a resource that is not in the suite is never met (kyverno test: "Not found")
    assert _run(suite, result="fail", policy="other").status == "fail"
    assert _run(suite, result="fail", resources=["other"]).status == "fail"


def test_apply_rules_one_later_rules_give_no_response(tmp_path: Path) -> None:
    suite = _suite(tmp_path, "pass")
    p = pat({"metadata": {"labels": {"team": "?*"}}})
    p["spec"]["rules"].append({**p["spec"]["rules"][0], "name": "second"})
    p["spec"]["applyRules"] = "One"
    (suite / "policy.yaml").write_text(yaml.safe_dump(p))
    report = _run(suite, rule="second")  # Kyverno stopped at the first rule: no response, met
    assert report.passed and report.results[0].actual == "excluded", report
    assert _run(suite, rule="r").status == "fail"  # the first rule applied and failed


def test_shapes_are_checked_before_evaluation() -> None:
    p = pat({"spec": {"containers": [{"image": "!*:latest"}]}})
    p["spec"]["rules"][0]["match"]["any"][0]["resources"]["kinds"] = "Pod"
    with pytest.raises(k.Malformed, match=r"spec\.rules\[0\]\.match\.any\[0\]\.resources\.kinds: expected a list"):
        k.evaluate_policy(p, pod())
    with pytest.raises(k.Malformed, match=r"metadata\.labels: expected a map"):
        k.evaluate_policy(pat({"kind": "Pod"}), pod(labels=["a"]))
    template = {"apiVersion": "template.openshift.io/v1", "kind": "Template", "metadata": {"name": "t"},
                "spec": {"template": ["not", "a", "map"]}}
    anything = pat({"kind": "Template"})
    anything["spec"]["rules"][0]["match"]["any"][0]["resources"]["kinds"] = ["*"]
    assert status(anything, template) == "pass"
