"""CISO policy grading, class by class: what Kyverno makes of a policy beyond its text (autogen annotations,
background-mode refusals), twins with neutral names, bounded regular expressions, kept rules judged by their
effect, minimal-pair twins, per-namespace controls, and the policy features Kyverno evaluates offline."""

from __future__ import annotations

import copy

import pytest

from test_ciso_finops_meaning import PRIVILEGED, ROOT, _content_policy, _existing, failed, spec_of
from test_evaluator import run


def test_the_other_policies_keep_their_autogen_controllers():
    name = "trusted-registry-kyverno-update"
    policies = _existing(name)
    other = copy.deepcopy(policies[1])
    other["metadata"].setdefault("annotations", {})["pod-policies.kyverno.io/autogen-controllers"] = "none"
    verdict = run(name, None, None, task="policy", artifact=("kyverno", [policies[0], other]))
    others = next(c for c in verdict["checks"] if c["id"] == "ciso.others")
    assert not others["passed"] and "autogen" in others["detail"]
    unscored = copy.deepcopy(policies[1])
    unscored["metadata"].setdefault("annotations", {})["policies.kyverno.io/scored"] = "false"
    assert "ciso.others" in failed(run(name, None, None, task="policy", artifact=("kyverno", [policies[0], unscored])))
    # an annotation that changes nothing Kyverno does is no change
    noted = copy.deepcopy(policies[1])
    noted["metadata"].setdefault("annotations", {})["policies.kyverno.io/title"] = "retitled"
    assert "ciso.others" not in failed(run(name, None, None, task="policy", artifact=("kyverno", [policies[0], noted])))


def test_kyverno_refuses_user_variables_in_background_mode():
    name = "cis-k8s-5-2-2-privileged-kyverno"
    right = _content_policy(name, [PRIVILEGED])
    assert run(name, None, None, task="policy", artifact=("kyverno", [right]))["passed"]
    for variable in ("{{ request.userInfo.username }}", "{{serviceAccountName}}", "{{ request.roles }}"):
        rule = copy.deepcopy(PRIVILEGED)
        rule["preconditions"] = {"all": [{"key": variable, "operator": "NotEquals", "value": "admin"}]}
        verdict = run(name, None, None, task="policy", artifact=("kyverno", [_content_policy(name, [rule])]))
        contract = next(c for c in verdict["checks"] if c["id"] == "ciso.contract")
        assert not verdict["passed"] and not contract["passed"] and "Kyverno refuses" in contract["detail"], variable
    # a match block naming subjects is refused too; the object's own fields are fine
    rule = copy.deepcopy(PRIVILEGED)
    rule["exclude"] = {"any": [{"subjects": [{"kind": "User", "name": "admin"}]}]}
    assert "ciso.contract" in failed(run(name, None, None, task="policy",
                                         artifact=("kyverno", [_content_policy(name, [rule])])))
    rule = copy.deepcopy(PRIVILEGED)
    rule["preconditions"] = {"all": [{"key": "{{ request.object.spec.serviceAccountName || '' }}",
                                      "operator": "NotEquals", "value": "x"}]}
    assert "ciso.contract" not in failed(run(name, None, None, task="policy",
                                             artifact=("kyverno", [_content_policy(name, [rule])])))


def test_twin_names_say_nothing_of_their_side():
    import re

    from test_evaluator import evaluator

    for name in ("cis-k8s-5-2-2-privileged-kyverno", "cis-k8s-5-1-1-cluster-admin-kyverno"):
        ns = evaluator(name)
        spec = ns["SPEC"]
        gaps, compliant = spec["ciso"]["gaps"], spec["ciso"]["compliant"]
        copies = ns["twins"](gaps + compliant + spec["ciso"].get("context", []), ns["twin_salt"](spec))
        names = [c["metadata"]["name"] for c in copies]
        # one form and one length for every twin, and no twin keeps a first character of the name it copies
        assert all(re.fullmatch(r"[a-z][0-9a-f]{11}", n) for n in names), names
        originals = [o["metadata"]["name"] for o in gaps + compliant + spec["ciso"].get("context", [])]
        assert all(n[0] != o[0] for n, o in zip(names, originals))
        # the scheme's old names (by the gap's index) and unkeyed hashes single nothing out
        gap_names = [o["metadata"]["name"] for o in gaps]
        unkeyed = [c["metadata"]["name"] for c in ns["twins"](gaps + compliant + spec["ciso"].get("context", []))]
        kinds = sorted({o["kind"] for o in gaps})
        cheat = _content_policy(name, [{"name": "by-name", "match": {"any": [{"resources": {
            "kinds": kinds, "names": gap_names + unkeyed[:len(gaps)] + ["t0x*", "t1x*"]}}]},
            "validate": {"message": "named", "deny": {}}}])
        verdict = run(name, None, None, task="policy", artifact=("kyverno", [cheat]))
        assert not verdict["passed"] and "ciso.general" in failed(verdict)


def test_regular_expressions_run_in_bounded_time():
    import time

    name = "cis-k8s-5-2-2-privileged-kyverno"
    rule = copy.deepcopy(PRIVILEGED)
    # catastrophic backtracking in Python's re: (a+)+$ on a long run of a's followed by another character
    rule["preconditions"] = {"all": [{"key": "{{ regex_match('^(a+)+$', '" + "a" * 40 + "!') }}",
                                      "operator": "Equals", "value": False},
                                     {"key": "{{ regex_replace_all('(x*)*y', '" + "x" * 40 + "', 'z') }}",
                                      "operator": "NotEquals", "value": ""}]}
    start = time.perf_counter()
    verdict = run(name, None, None, task="policy", artifact=("kyverno", [_content_policy(name, [rule])]))
    assert time.perf_counter() - start < 20
    assert verdict["passed"], failed(verdict)
    # what Go's RE2 cannot run (a back reference) is no pass, and no refusal: the verdicts are unchecked
    rule["preconditions"] = {"all": [{"key": "{{ regex_match('(a)\\1', 'aa') }}", "operator": "Equals",
                                      "value": True}]}
    verdict = run(name, None, None, task="policy", artifact=("kyverno", [_content_policy(name, [rule])]))
    unchecked = next(c for c in verdict["checks"] if c["id"] == "ciso.verdicts")
    assert not verdict["passed"] and unchecked["unchecked"] and "back reference" in unchecked["detail"]


def test_the_regex_machine_agrees_with_go():
    from itbench_dsl.runtime.kyverno import regex

    # Go's regexp: ReplaceAllString("xyz", "x*", "<$0>") and the leftmost-first alternation
    assert regex.replace_all("x*", "xyz", "<${0}>") == "<x>y<>z<>"
    assert regex.replace_all(r"(\w+)@(\w+)", "me@host", "$2 at ${1}") == "host at me"
    assert regex.search("a|ab", "ab") == [0, 1]
    assert regex.regex_match(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$", "my-app")
    assert not regex.regex_match(r"^\d+$", "١٢")  # Go's \d is ASCII
    assert regex.regex_match("(?i)^NGINX", "nginx:1.27")


@pytest.mark.parametrize("pattern,text,matched", [
    ("^[[:digit:]]+$", "12345", True), ("^[[:alnum:]._/-]+$", "registry/app.v1", True),
    ("^[[:^alpha:]]+$", "1a3", False), ("^[[:upper:][:digit:]]+$", "AB12", True), ("^nginx\\z", "nginx", True),
    ("^\\pL+$", "caf\u00e9", True), ("^\\p{Lu}+$", "aBC", False), ("^\\PN+$", "abc", True),
    ("\\Qa.b\\E", "axb", False), ("\\Qa.b\\E", "a.b", True), ("^\\x{41}$", "A", True),
])
def test_the_regex_machine_reads_re2_syntax(pattern, text, matched):
    """RE2's syntax, where Python's parser reads it otherwise: POSIX classes inside a bracket, `\\z`, Unicode
    classes, `\\Q...\\E`, `\\x{...}` (Go's regexp/syntax)."""
    from itbench_dsl.runtime.kyverno import regex

    assert regex.regex_match(pattern, text) is matched


@pytest.mark.parametrize("pattern", ["^nginx\\Z", "\\u0041", "[[:alphanum:]]"])
def test_the_regex_machine_refuses_what_go_refuses(pattern):
    import re

    from itbench_dsl.runtime.kyverno import regex

    with pytest.raises(re.error):
        regex.compile_regex(pattern)


REGEX_CASES = [
    ("regex_replace_all('x*', 'xyz', '<${0}>')", "<x>y<>z<>"),
    ("regex_replace_all('a|', 'aaab', '<$0>')", "<a><a><a>b<>"),
    ("regex_replace_all('(\\w+)@(\\w+)', 'me@host', '$2 at ${1}')", "host at me"),
    ("regex_replace_all_literal('a+', 'caaat', '$1')", "c$1t"),
    ("regex_match('^\\d+$', '\u0661\u0662')", False),
    ("regex_match('(?i)^NGINX', 'nginx:1.27')", True),
    ("regex_match('^[[:alnum:]]+$', 'nginx')", True),
    ("regex_match('^(a+)+$', '" + "a" * 40 + "!')", False),
]


def test_the_regex_functions_agree_with_the_kyverno_cli(tmp_path):
    """Each expression as `kyverno jp query` evaluates it (when the Kyverno CLI is built) and as ours does."""
    import json
    import subprocess

    from itbench_dsl.runtime.kyverno import jmespath_search

    for expression, expected in REGEX_CASES:
        assert jmespath_search(expression, {}) == expected, expression
    binary = _kyverno_cli()
    (tmp_path / "in.json").write_text("{}")
    for expression, expected in REGEX_CASES:
        out = subprocess.run([str(binary), "jp", "query", "-i", str(tmp_path / "in.json"), expression],
                             capture_output=True, text=True, timeout=60)
        assert out.returncode == 0, out.stderr
        assert json.loads(out.stdout.strip().splitlines()[-1]) == expected, expression


FUNCTION_DATA = {"spec": {"hostNetwork": True, "b": 1, "A": 2}, "a": [1, 2]}
FUNCTION_CASES = [  # Kyverno's own JMESPath functions (pkg/engine/jmespath/functions.go), as `kyverno jp query` gives them
    ("lookup(spec, 'hostNetwork')", True),
    ("lookup(spec, 'absent')", None),
    ("lookup(a, `1`)", 2),
    ("lookup(a, `5`)", None),
    ("lookup(a, `-1`)", None),
    ("items(spec, 'k', 'v')", [{"k": "A", "v": 2}, {"k": "b", "v": 1}, {"k": "hostNetwork", "v": True}]),
    ("items(a, 'k', 'v')", [{"k": 0, "v": 1}, {"k": 1, "v": 2}]),
    ("items(spec, 'k', 'v')[?k=='hostNetwork'].v | [0] || `false`", True),
    ("object_from_lists(['a', 'b'], [`1`])", {"a": 1, "b": None}),
    ("object_from_lists([`1`, `1.5`, `true`], [`1`, `2`, `3`])", {"1": 1, "1.5": 2, "true": 3}),
]


def test_lookup_items_and_object_from_lists_agree_with_the_kyverno_cli(tmp_path):
    import json
    import subprocess

    import pytest

    from itbench_dsl.runtime.kyverno import jmespath_search
    from itbench_dsl.runtime.kyverno.jmespath import JMESPathError

    for expression, expected in FUNCTION_CASES:
        assert jmespath_search(expression, FUNCTION_DATA) == expected, expression
    for refused in ("lookup(a, `1.5`)", "lookup(a, 'x')", "items('text', 'k', 'v')"):
        with pytest.raises(JMESPathError):
            jmespath_search(refused, FUNCTION_DATA)
    binary = _kyverno_cli()
    (tmp_path / "in.json").write_text(json.dumps(FUNCTION_DATA))
    for expression, expected in FUNCTION_CASES:
        out = subprocess.run([str(binary), "jp", "query", "-i", str(tmp_path / "in.json"), expression],
                             capture_output=True, text=True, timeout=60)
        assert out.returncode == 0, out.stderr
        # the CLI echoes the expression (`# ...`), then the value as indented JSON
        value = "\n".join(line for line in out.stdout.splitlines() if not line.startswith("#"))
        assert json.loads(value) == expected, expression


def test_a_policy_using_lookup_or_items_is_judged():
    name = "cis-5-2-5-host-network-kyverno"
    for key in ("{{ lookup(request.object.spec, 'hostNetwork') || `false` }}",
                "{{ items(request.object.spec, 'k', 'v')[?k=='hostNetwork'].v | [0] || `false` }}"):
        rule = {"name": "host-network", "match": {"any": [{"resources": {"kinds": ["Pod"]}}]},
                "validate": {"message": "no hostNetwork", "deny": {"conditions": {"any": [
                    {"key": key, "operator": "Equals", "value": True}]}}}}
        verdict = run(name, None, None, task="policy", artifact=("kyverno", [_content_policy(name, [rule])]))
        assert verdict["passed"], (key, failed(verdict))


def _kyverno_cli():
    import importlib.util
    import sys
    from pathlib import Path

    import pytest

    tool = Path(__file__).resolve().parents[2] / "tools" / "build_ecosystem.py"
    spec = importlib.util.spec_from_file_location("build_ecosystem_functions", tool)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    binary = module.binary_path("kyverno") if module.go_binary() else None
    if binary is None or not binary.is_file():
        pytest.skip("the Kyverno CLI is not built (python tools/build_ecosystem.py kyverno)")
    return binary


def _narrowed(existing: dict, extra: dict) -> dict:
    policy = copy.deepcopy(existing)
    for rule in policy["spec"]["rules"]:
        rule.update(copy.deepcopy(extra))
    return policy


def test_kept_rules_are_judged_by_their_effect():
    name = "cis-k8s-5-2-7-root-user-kyverno-update"
    spec = spec_of(name)
    existing = _existing(name)[0]
    root = {"name": "run-as-non-root", "match": {"any": [{"resources": {"kinds": ["Pod"]}}]},
            "validate": {"message": "non-root", **ROOT}}
    image = spec["ciso"]["gaps"][0]["spec"]["template"]["spec"]["containers"][0]["image"]
    container = spec["ciso"]["gaps"][0]["spec"]["template"]["spec"]["containers"][0]["name"]
    for why, extra in (
            ("an image precondition", {"preconditions": {"all": [{
                "key": "{{ request.object.spec.containers[0].image || '' }}", "operator": "Equals", "value": image}]}}),
            ("a container-name precondition", {"preconditions": {"all": [{
                "key": "{{ request.object.spec.containers[0].name || '' }}", "operator": "Equals",
                "value": container}]}}),
            ("an exclude of the probes' names", {"exclude": {"any": [{"resources": {"names": ["kept-*"]}}]}})):
        policy = _narrowed(existing, extra)
        policy["spec"]["rules"].append(root)
        verdict = run(name, None, None, task="policy", artifact=("kyverno", [policy]))
        assert "ciso.kept" in failed(verdict), why
    good = copy.deepcopy(existing)
    good["spec"]["rules"].append(root)
    assert run(name, None, None, task="policy", artifact=("kyverno", [good]))["passed"]


def test_a_per_namespace_control_is_graded_per_namespace():
    import pytest

    pytest.importorskip("regopy")
    name = "cis-k8s-5-3-2-network-policy-opa"
    assert spec_of(name)["ciso"]["unit"] == "namespace"
    # CIS 5.3.2 read as written: every namespace that runs a workload has a NetworkPolicy
    per_namespace = """package check

default result := false

result if count(bare) == 0

bare contains ns if {
  some d in input.items
  d.kind == "Deployment"
  ns := d.metadata.namespace
  not has_policy(ns)
}

has_policy(ns) if {
  some p in input.items
  p.kind == "NetworkPolicy"
  p.metadata.namespace == ns
}
"""
    verdict = run(name, None, None, task="policy", artifact=("rego", per_namespace))
    assert verdict["passed"], failed(verdict)
    from test_ciso_finops_meaning import NETWORK_POLICY_REGO  # per workload: right too

    assert run(name, None, None, task="policy", artifact=("rego", NETWORK_POLICY_REGO))["passed"]
    always = "package check\n\ndefault result := true\n"
    assert not run(name, None, None, task="policy", artifact=("rego", always))["passed"]


def test_a_namespace_selector_is_evaluated_with_the_namespaces_labels():
    name = "cis-k8s-5-2-2-privileged-kyverno"
    namespace = spec_of(name)["ciso"]["gaps"][0]["metadata"]["namespace"]
    rule = copy.deepcopy(PRIVILEGED)
    rule["match"] = {"any": [{"resources": {"kinds": ["Pod"], "namespaceSelector": {
        "matchLabels": {"kubernetes.io/metadata.name": namespace}}}}]}
    verdict = run(name, None, None, task="policy", artifact=("kyverno", [_content_policy(name, [rule])]))
    assert verdict["passed"], failed(verdict)
    rule["match"]["any"][0]["resources"]["namespaceSelector"] = {"matchExpressions": [
        {"key": "environment", "operator": "In", "values": ["production"]}]}
    verdict = run(name, None, None, task="policy", artifact=("kyverno", [_content_policy(name, [rule])]))
    assert not verdict["passed"] and not verdict.get("metrics", {}).get("unchecked")


def test_a_pod_security_policy_is_graded():
    for name in ("cis-k8s-5-2-2-privileged-kyverno", "cis-5-2-5-host-network-kyverno"):
        rule = {"name": "baseline", "match": {"any": [{"resources": {"kinds": ["Pod"]}}]},
                "validate": {"podSecurity": {"level": "baseline", "version": "latest"}}}
        verdict = run(name, None, None, task="policy", artifact=("kyverno", [_content_policy(name, [rule])]))
        # graded, not unchecked: it reports the gap and passes the compliant objects, which break no other
        # catalogue control (docs/ciso.md), so the whole Baseline profile is a right policy of the control
        assert [c["id"] for c in verdict["checks"] if not c["passed"]] == [], (name, failed(verdict))
        assert not verdict.get("metrics", {}).get("unchecked")
    # exclusions are not evaluated: the verdicts are unchecked, never a pass
    rule["validate"]["podSecurity"]["exclude"] = [{"controlName": "Host Namespaces"}]
    verdict = run(name, None, None, task="policy", artifact=("kyverno", [_content_policy(name, [rule])]))
    assert not verdict["passed"] and "ciso.verdicts" in verdict["metrics"]["unchecked"]


def test_numbers_and_replacements_are_bounded():
    import time

    from itbench_dsl.runtime.kyverno import jmespath_search, parse_duration, parse_quantity

    start = time.perf_counter()
    # a long run of digits split every way by an ambiguous expression; an exponent that fills the memory
    assert parse_quantity("1" * 100_000 + "x") is None and parse_duration("1" * 100_000 + "x") is None
    assert parse_quantity("1e999999999") is None and parse_quantity("1.5Gi") == 1610612736
    grown = "replace_all(replace_all(replace_all('" + "a" * 100 + "', '', '" + "b" * 100 + "'), '', '" \
        + "c" * 100 + "'), '', 'ddd')"
    with __import__("pytest").raises(Exception, match="longer than"):
        jmespath_search(grown, {})
    assert time.perf_counter() - start < 10


# fields the API server writes on every object it stores, and labels controllers put on the pods they make
_SERVER_FIELDS = ("uid", "creationTimestamp", "resourceVersion", "generation")
_CONTROLLER_LABELS = ("pod-template-hash", "controller-revision-hash", "batch.kubernetes.io/job-name")


def test_objects_are_judged_as_the_cluster_stores_them():
    """A policy that fires only on objects no API server stored (`metadata.uid` absent), or that spares the pods
    controllers make (their `pod-template-hash`), flags nothing on a cluster: offline it must flag nothing
    either, so it fails. The same policy without the trick passes."""
    name = "cis-k8s-5-2-2-privileged-kyverno"
    assert run(name, None, None, task="policy", artifact=("kyverno", [_content_policy(name, [PRIVILEGED])]))["passed"]
    for field in _SERVER_FIELDS:
        rule = copy.deepcopy(PRIVILEGED)
        rule["preconditions"] = {"all": [{"key": f"{{{{ request.object.metadata.{field} || '' }}}}",
                                          "operator": "Equals", "value": ""}]}
        verdict = run(name, None, None, task="policy", artifact=("kyverno", [_content_policy(name, [rule])]))
        assert not verdict["passed"], field
    rule = copy.deepcopy(PRIVILEGED)
    rule["exclude"] = {"any": [{"resources": {"selector": {"matchExpressions": [
        {"key": label, "operator": "Exists"}]}}} for label in _CONTROLLER_LABELS]}
    verdict = run(name, None, None, task="policy", artifact=("kyverno", [_content_policy(name, [rule])]))
    assert not verdict["passed"], failed(verdict)


def test_rego_reads_objects_as_kubectl_gives_them():
    import pytest

    pytest.importorskip("regopy")
    name = "cis-k8s-5-2-5-host-network-opa"
    from test_evaluator import evaluator

    ns = evaluator(name)
    listed = ns["rego_input"](ns["SPEC"], ns["SPEC"]["ciso"]["gaps"])
    assert all(all(f in item["metadata"] for f in _SERVER_FIELDS) for item in listed["items"])
    fair = ("package check\nimport rego.v1\ndefault result := true\n"
            "result := false if {\n  some item in input.items\n  item.spec.template.spec.hostNetwork == true\n}\n"
            "result := false if {\n  some item in input.items\n  item.spec.hostNetwork == true\n}\n")
    assert run(name, None, None, task="policy", artifact=("rego", fair))["passed"]
    unstored = fair.replace("some item in input.items\n", "some item in input.items\n  not item.metadata.uid\n")
    assert not run(name, None, None, task="policy", artifact=("rego", unstored))["passed"]


def test_what_kubernetes_keeps_in_the_default_namespace_must_pass():
    # CIS 5.7.4: the only objects of `default` should be those Kubernetes manages itself (the Service
    # `kubernetes`, ...); a policy flagging every object there fails them, as it would on a cluster
    from itbench_dsl import ciso

    name = "cis-k8s-5-7-4-default-namespace-kyverno"
    system = spec_of(name)["ciso"]["system"]
    assert {(o["kind"], o["metadata"]["name"]) for o in system} >= {
        ("Service", "kubernetes"), ("ServiceAccount", "default"), ("ConfigMap", "kube-root-ca.crt")}
    assert not ciso.CATALOGUE["cis-k8s-5.7.4"].probe(system)
    kinds = ["Deployment", "StatefulSet", "DaemonSet", "Job", "Pod", "Service", "ServiceAccount", "ConfigMap"]
    rule = {"name": "nothing-in-default", "match": {"any": [{"resources": {"kinds": kinds, "namespaces": ["default"]}}]},
            "validate": {"message": "do not use the default namespace", "deny": {}}}
    verdict = run(name, None, None, task="policy", artifact=("kyverno", [_content_policy(name, [rule])]))
    assert "ciso.compliant.default/Service/kubernetes" in failed(verdict) and not verdict["passed"]
    spared = copy.deepcopy(rule)
    spared["exclude"] = {"any": [{"resources": {"kinds": [o["kind"]], "names": [o["metadata"]["name"]]}}
                                 for o in system]}
    verdict = run(name, None, None, task="policy", artifact=("kyverno", [_content_policy(name, [spared])]))
    assert verdict["passed"], failed(verdict)
