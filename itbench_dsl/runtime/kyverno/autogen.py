"""Autogen: the rules Kyverno adds to a policy for the controllers of Pods.

A rule that matches Pods gets an `autogen-` twin for Deployments, DaemonSets, Jobs, StatefulSets,
ReplicaSets and ReplicationControllers (the pod template at `spec.template`) and an `autogen-cronjob-`
twin for CronJobs (at `spec.jobTemplate.spec.template`), unless the policy's annotation says
otherwise or the rule's match cannot be carried over. `expand_rules(policy)` is the whole list.
"""

import json
import re
from typing import Any

from .shape import check_policy, rule_findings


_POD_CONTROLLERS = ["DaemonSet", "Deployment", "Job", "StatefulSet", "ReplicaSet", "ReplicationController"]
_AUTOGEN_ANNOTATION = "pod-policies.kyverno.io/autogen-controllers"


def _descriptions(rule: dict) -> list[dict]:
    out = []
    for key in ("match", "exclude"):
        block = rule.get(key) or {}
        if block.get("resources"):
            out.append(block["resources"])
        for f in (block.get("any") or []) + (block.get("all") or []):
            out.append(f.get("resources") or {})
    return out


def _autogen_controllers(policy: dict) -> list[str]:
    ann = (policy.get("metadata") or {}).get("annotations") or {}
    requested = ann.get(_AUTOGEN_ANNOTATION)
    requested = None if requested is None else str(requested)
    if requested is not None and requested.strip() == "none":
        return []
    needed = False
    for rule in policy.get("spec", {}).get("rules") or []:
        if rule.get("generate") or (rule.get("mutate") or {}).get("patchesJson6902") or rule.get("verifyImages"):
            return []
        for desc in _descriptions(rule):
            kinds = desc.get("kinds") or []
            if desc.get("name") or desc.get("names") or desc.get("selector") is not None \
                    or desc.get("annotations") is not None:
                return []
            if len(kinds) > 1 and "Pod" in kinds:
                return []
            needed = needed or "Pod" in kinds
    if not needed:
        return []
    if requested:
        return [c.strip() for c in requested.split(",") if c.strip()]
    return _POD_CONTROLLERS + ["CronJob"]


def _shift_variables(value: Any, prefix: str) -> Any:
    """Rewrite request.object/oldObject .spec/.metadata references to the pod template."""
    if isinstance(value, str):
        if "request.o" not in value:
            return value
        value = re.sub(r"request\.(object|oldObject)\.spec\b", rf"request.\1.{prefix}.spec", value)
        value = re.sub(r"request\.(object|oldObject)\.metadata\b", rf"request.\1.{prefix}.metadata", value)
        return value
    if isinstance(value, list):
        return [_shift_variables(v, prefix) for v in value]
    if isinstance(value, dict):
        return {k: _shift_variables(v, prefix) for k, v in value.items()}
    return value


def _shift_cel(cel: Any, prefix: str) -> Any:
    """CEL expressions read the pod template (Kyverno's pkg/autogen/v1 rule.go, podCELReplacementRules and
    cronJobCELReplacementRules, applied in order to the rule's text)."""
    text = json.dumps(cel)
    for old in ("object.spec", "oldObject.spec", "object.metadata", "oldObject.metadata"):
        root, _, field = old.partition(".")
        text = text.replace(old, f"{root}.{prefix}.{field}")
    return json.loads(text)


def _retarget(block: Any, kinds: list[str]) -> Any:
    if not block:
        return block
    out = json.loads(json.dumps(block))
    for desc in _descriptions({"match": out}):
        if "Pod" in (desc.get("kinds") or []):
            desc["kinds"] = list(kinds)
    return out


def _autogen_rules(rule: dict, controllers: list[str]) -> list[dict]:
    match_kinds = [k for d in _descriptions({"match": rule.get("match")}) for k in (d.get("kinds") or [])]
    if "Pod" not in match_kinds:
        return []
    rules = []
    plain = [c for c in controllers if c != "CronJob"]
    variants = []
    if plain:
        variants.append((f"autogen-{rule['name']}", plain, "spec.template", ["spec", "template"]))
    if "CronJob" in controllers:
        variants.append((f"autogen-cronjob-{rule['name']}", ["CronJob"], "spec.jobTemplate.spec.template",
                         ["spec", "jobTemplate", "spec", "template"]))
    for name, kinds, prefix, nest in variants:
        # Kyverno rewrites the marshalled rule as a whole (pkg/autogen/v1 convertRule/updateFields): the
        # rule-level context (jmesPath, value, apiCall urls) reads the pod template like the rest
        new = {k: _shift_variables(v, prefix) for k, v in rule.items()
               if k not in ("name", "match", "exclude", "validate", "preconditions")}
        new["name"] = name
        new["match"] = _retarget(rule.get("match"), kinds)
        if rule.get("exclude"):
            new["exclude"] = _retarget(rule.get("exclude"), kinds)
        if "preconditions" in rule:
            new["preconditions"] = _shift_variables(rule["preconditions"], prefix)
        validate = dict(rule.get("validate") or {})

        def wrap(p: Any, nest: list[str] = nest) -> Any:
            for key in reversed(nest):
                p = {key: p}
            return p
        if "pattern" in validate:
            validate["pattern"] = wrap(_shift_variables(validate["pattern"], prefix))
        if "anyPattern" in validate:
            validate["anyPattern"] = [wrap(_shift_variables(p, prefix)) for p in validate["anyPattern"]]
        for key in ("deny", "foreach", "message"):
            if key in validate:
                validate[key] = _shift_variables(validate[key], prefix)
        if "cel" in validate:
            validate["cel"] = _shift_cel(validate["cel"], prefix)
        new["validate"] = validate
        rules.append(new)
    return rules


_RULES_MEMO: dict[int, tuple[dict, Any, list[tuple[dict, list]]]] = {}


def _cached_rules(policy: dict) -> list[tuple[dict, list[tuple[tuple, str]]]]:
    """The policy's rules, autogen included, each with the unsupported fields that concern it
    (shape.check_policy, which first raises Malformed for a value of the wrong type); memoised per
    policy object (by identity of the policy and its spec; a caller that edits a policy's rules in
    place should pass a new dict)."""
    spec = policy.get("spec")
    hit = _RULES_MEMO.get(id(policy))
    if hit is not None and hit[0] is policy and hit[1] is spec:
        return hit[2]
    found = check_policy(policy)
    rules = [(rule, rule_findings(found, index)) for rule, index in _expand(policy)]
    if len(_RULES_MEMO) > 512:
        _RULES_MEMO.clear()
    _RULES_MEMO[id(policy)] = (policy, spec, rules)
    return rules


def expand_rules(policy: dict) -> list[dict]:
    """The policy's rules followed by the autogen rules Kyverno would add."""
    return [rule for rule, _ in _expand(policy)]


def _expand(policy: dict) -> list[tuple[dict, int]]:
    """Every rule with the index of the rule it comes from."""
    rules = list((policy.get("spec") or {}).get("rules") or [])
    out = [(rule, index) for index, rule in enumerate(rules)]
    controllers = _autogen_controllers(policy)
    if controllers:
        for index, rule in enumerate(rules):
            out.extend((new, index) for new in _autogen_rules(rule, controllers))
    return out
