"""The embedded Kyverno matcher against Kyverno v1.19.1 (round 7 of fidelity checks).

Each expectation here was read off the Kyverno v1.19.1 source and its CLI (`kyverno apply`,
`kyverno jp query`) on the same policy and resource.
"""

from __future__ import annotations

import pytest

from itbench_dsl.runtime import kyverno as k


def pod(spec: dict | None = None, kind: str = "Pod") -> dict:
    return {"apiVersion": "v1", "kind": kind, "metadata": {"name": "p", "namespace": "default"},
            "spec": spec or {"containers": [{"name": "c", "image": "nginx"}]}}


def deployment(pod_spec: dict) -> dict:
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d", "namespace": "default"},
            "spec": {"selector": {"matchLabels": {"app": "a"}},
                     "template": {"metadata": {"labels": {"app": "a"}}, "spec": pod_spec}}}


def policy(rule: dict, kinds=("Pod",), **spec) -> dict:
    rule = {"name": "r", "match": {"any": [{"resources": {"kinds": list(kinds)}}]}, **rule}
    return {"apiVersion": "kyverno.io/v1", "kind": "ClusterPolicy", "metadata": {"name": "pol"},
            "spec": {"rules": [rule], **spec}}


def statuses(pol: dict, res: dict) -> dict:
    return {r.rule: r.status for r in k.evaluate_policy(pol, res)}


def pat(pattern) -> dict:
    return policy({"validate": {"message": "m", "pattern": pattern}})


# --- JMESPath: where a missing key is null rather than "not found" ------------------------------

@pytest.mark.parametrize("expr,want", [
    ("spec.x || false", None), ("spec.x || spec.z", None), ("spec.x.q || `3`", 3),
    ("not_null(spec.x, `1`)", 1), ("to_string(spec.x)", "null"), ("spec.x | @", None),
    ("[spec.x]", [None]), ("spec.x == null", True),
])
def test_missing_key_is_null_outside_bare_paths(expr, want) -> None:
    assert k.jmespath_search(expr, {"spec": {"y": {}}, "a": 1}) == want


@pytest.mark.parametrize("expr", ["spec.x", "spec.y.q", "a && spec.x", "spec.x[0]"])
def test_missing_key_on_a_bare_path_is_not_found(expr) -> None:
    with pytest.raises(k.NotFound):
        k.jmespath_search(expr, {"spec": {"y": {}}, "a": 1})


def test_or_fallback_on_a_missing_field_judges_the_object() -> None:
    rule = {"validate": {"message": "m", "foreach": [{
        "list": "request.object.spec.containers",
        "deny": {"conditions": {"any": [{"key": "{{ element.securityContext.privileged || false }}",
                                         "operator": "Equals", "value": True}]}}}]}}
    p = policy(rule)
    assert statuses(p, pod())["r"] == "pass"
    bad = pod({"containers": [{"name": "c", "image": "x", "securityContext": {"privileged": True}}]})
    assert statuses(p, bad)["r"] == "fail"
    rule2 = {"validate": {"message": "m", "foreach": [{
        "list": "request.object.spec.containers",
        "deny": {"conditions": {"any": [{"key": "{{ not_null(element.securityContext.privileged, `false`) }}",
                                         "operator": "Equals", "value": True}]}}}]}}
    assert statuses(policy(rule2), pod())["r"] == "pass"
    assert statuses(policy(rule2), bad)["r"] == "fail"


# --- autogen shifts the rule-level context like the rest of the rule -----------------------------

def test_autogen_shifts_rule_context_to_the_pod_template() -> None:
    rule = {"context": [{"name": "podseccomp", "variable": {
                "jmesPath": "request.object.spec.securityContext.seccompProfile.type", "default": "unset"}}],
            "validate": {"message": "m", "foreach": [{
                "list": "request.object.spec.containers",
                "deny": {"conditions": {"any": [{
                    "key": "{{ element.securityContext.seccompProfile.type || podseccomp }}",
                    "operator": "AnyNotIn", "value": ["RuntimeDefault", "Localhost"]}]}}}]}}
    p = policy(rule)
    good = {"securityContext": {"seccompProfile": {"type": "RuntimeDefault"}},
            "containers": [{"name": "c", "image": "x"}]}
    assert statuses(p, deployment(good))["autogen-r"] == "pass"
    assert statuses(p, deployment({"containers": [{"name": "c", "image": "x"}]}))["autogen-r"] == "fail"
    auto = [r for r in k.expand_rules(p) if r["name"] == "autogen-cronjob-r"][0]
    assert auto["context"][0]["variable"]["jmesPath"] == \
        "request.object.spec.jobTemplate.spec.template.spec.securityContext.seccompProfile.type"


# --- patterns: lists of scalars, global anchors on absent keys ------------------------------------

def _caps(add=None, drop=None) -> dict:
    caps = {}
    if add is not None:
        caps["add"] = add
    if drop is not None:
        caps["drop"] = drop
    return pod({"containers": [{"name": "c", "image": "x", "securityContext": {"capabilities": caps}}]})


@pytest.mark.parametrize("pattern_list,resource_list,want", [
    (["CHOWN | NET_BIND_SERVICE"], ["CHOWN", "SYS_ADMIN"], "fail"),
    (["CHOWN | NET_BIND_SERVICE"], ["SYS_ADMIN", "CHOWN"], "fail"),
    (["CHOWN | NET_BIND_SERVICE"], ["CHOWN"], "pass"),
    (["CHOWN | NET_BIND_SERVICE"], [], "pass"),
    (["ALL"], ["ALL", "NET_RAW"], "fail"),
    (["ALL", "NET_RAW"], ["ALL"], "pass"),
])
def test_scalar_pattern_list_checks_every_element(pattern_list, resource_list, want) -> None:
    p = pat({"spec": {"containers": [{"=(securityContext)": {"=(capabilities)": {"=(add)": pattern_list}}}]}})
    assert statuses(p, _caps(add=resource_list))["r"] == want


def test_global_anchor_with_absent_key_goes_on_validating() -> None:
    p = pat({"spec": {"containers": [{"<(securityContext)": {"<(privileged)": True}, "name": "!*"}]}})
    assert statuses(p, pod())["r"] == "fail"  # no securityContext: the anchor holds, name "!*" fails
    spelled = pod({"containers": [{"name": "c", "image": "x", "securityContext": {"privileged": False}}]})
    assert statuses(p, spelled)["r"] == "skip"
    implicit = pod({"containers": [{"name": "c", "image": "x", "securityContext": {"runAsNonRoot": True}}]})
    assert statuses(p, implicit)["r"] == "fail"
    p2 = pat({"spec": {"<(securityContext)": {"<(runAsUser)": 0}, "containers": [{"name": "!*"}]}})
    assert statuses(p2, pod())["r"] == "fail"
    # a conditional anchor on an absent key still skips
    p3 = pat({"spec": {"containers": [{"(securityContext)": {"(privileged)": True}, "name": "!*"}]}})
    assert statuses(p3, pod())["r"] == "skip"


# --- numeric ranges: where Kyverno reads them -----------------------------------------------------

@pytest.mark.parametrize("op,key,value,want", [
    ("AnyIn", [8080], ["1-65535"], False),      # a range inside a list of values is a plain string
    ("AnyIn", 8080, ["1-65535"], False),
    ("AnyIn", 8080, "1-65535", True),           # the whole value: a range
    ("AnyIn", [8080], "1-65535", True),
    ("AllIn", [5, 7], "1-10", True),
    ("In", 5, "1-10", False),                   # In/NotIn never read a range
    ("AnyNotIn", [0], ["1-65535"], True),
    ("AnyNotIn", [5], ["1-65535"], True),
    ("AnyNotIn", [5], "1-65535", False),
    ("AnyNotIn", [0], "1-65535", True),
])
def test_condition_ranges(op, key, value, want) -> None:
    assert k.evaluate_operator(op, key, value) is want


@pytest.mark.parametrize("pattern,value,ok", [
    ("1-10", 5, True), ("1-10", 11, False),
    ("1!-10", 11, True), ("1!-10", 5, False),
    ("!1-65535", 8080, True),                   # `!` on the string "1-65535", not a range
    ("!1-65535", "1-65535", False),
])
def test_pattern_ranges(pattern, value, ok) -> None:
    assert k.validate_value(value, pattern) is ok


# --- match/exclude blocks Kyverno's policy validation refuses --------------------------------------

def _refusals(match, exclude=None, background=True, validate=None) -> list[str]:
    from itbench_dsl.runtime import evaluator
    rule = {"name": "r", "match": match, "validate": validate or {"message": "m", "pattern": {"spec": {}}}}
    if exclude is not None:
        rule["exclude"] = exclude
    return evaluator.match_refusals(rule, background)


@pytest.mark.parametrize("match,exclude,background,refused", [
    ({"any": [{"resources": {"kinds": ["Pod"]}}]}, None, True, None),
    ({"resources": {"kinds": ["Pod"]}}, None, True, None),
    ({"any": [{"resources": {"kinds": ["*"]}}]}, None, True, "wildcard policy not allowed in background"),
    ({"any": [{"resources": {"kinds": ["*"]}}]}, None, False, None),
    ({"any": [{"resources": {"kinds": ["*", "Pod"]}}]}, None, False, "more than one kind"),
    ({"any": [{"resources": {"kinds": ["Pod"]}}]}, {"any": [{"resources": {"kinds": ["*"]}}]}, True,
     "wildcard policy not allowed in background"),
    ({"any": [{"resources": {"namespaces": ["ciso-target"]}}]}, None, True, "the kind attribute is mandatory"),
    ({"any": [{"resources": {"kinds": ["Pod"]}}, {"resources": {"names": ["a"]}}]}, None, True,
     "the kind attribute is mandatory"),
    ({"resources": {"namespaces": ["x"]}}, None, True, "the kind attribute is mandatory"),
    ({"resources": {"kinds": ["Pod"]}, "any": [{"resources": {"kinds": ["Pod"]}}]}, None, True,
     "can't specify any/all together with match resources"),
    ({"any": [{"resources": {"kinds": ["Pod"]}}]},
     {"resources": {"kinds": ["Pod"]}, "any": [{"resources": {"names": ["a"]}}]}, True,
     "can't specify any/all together with exclude resources"),
    ({"any": [{"resources": {"kinds": ["Pod"]}}]},
     {"any": [{"resources": {"kinds": ["Pod"], "names": ["{{ request.object.metadata.name }}"]}}]}, True,
     "should not have variables in exclude section"),
    ({"any": [{"resources": {"kinds": ["Pod"], "namespaces": ["{{ request.namespace }}"]}}]}, None, True,
     "should not have variables in match section"),
])
def test_match_blocks_kyverno_refuses(match, exclude, background, refused) -> None:
    found = _refusals(match, exclude, background)
    if refused is None:
        assert found == []
    else:
        assert any(refused in f for f in found), found


def test_wildcard_foreach_rule_is_refused_even_without_background() -> None:
    found = _refusals({"any": [{"resources": {"kinds": ["*"]}}]}, background=False,
                      validate={"message": "m", "foreach": [{"list": "request.object.spec.containers"}]})
    assert any("does not support rule type" in f for f in found)
