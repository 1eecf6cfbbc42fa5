"""Evaluating a policy against one resource: the rule's context, validate (pattern, anyPattern, deny,
foreach), and the results of every rule, autogen included.

Entry points: `evaluate_policy(policy, resource, operation)` -> list of `RuleResult` (it raises
`Unsupported` when the policy uses a feature this matcher does not implement), and `evaluate_rule`
for one rule.
"""

import json
from typing import Any

from .autogen import _cached_rules
from .conditions import _resolve, evaluate_conditions, substitute
from .jmespath import NotFound
from .outcomes import ERROR, FAIL, PASS, SKIP, WARN, KyvernoError, RuleResult, Unsupported
from .patterns import match_pattern
from .resources import _block_matches


def _image_info(image: str) -> dict:
    ref = image
    digest = ""
    if "@" in ref:
        ref, digest = ref.split("@", 1)
    tag = ""
    slash = ref.rfind("/")
    colon = ref.rfind(":")
    if colon > slash:
        ref, tag = ref[:colon], ref[colon + 1:]
    first, _, rest = ref.partition("/")
    if rest and ("." in first or ":" in first or first == "localhost"):
        registry, path = first, rest
    else:
        registry, path = "docker.io", ref
    if not tag and not digest:
        tag = "latest"
    info = {"registry": registry, "path": path, "name": path.rsplit("/", 1)[-1], "tag": tag,
            "digest": digest, "reference": f"{registry}/{path}" + (f":{tag}" if tag else "") + (f"@{digest}" if digest else ""),
            "referenceWithTag": f"{registry}/{path}:{tag}" if tag else ""}
    return info


def _images(resource: dict) -> dict:
    spec = resource.get("spec") or {}
    kind = resource.get("kind")
    if kind == "CronJob":
        spec = ((((spec.get("jobTemplate") or {}).get("spec") or {}).get("template") or {}).get("spec")) or {}
    elif kind != "Pod":
        spec = ((spec.get("template") or {}).get("spec")) or {}
    out: dict = {}
    for key in ("initContainers", "containers", "ephemeralContainers"):
        items = spec.get(key) or []
        if items:
            out[key] = {c.get("name", ""): _image_info(str(c.get("image", ""))) for c in items
                        if isinstance(c, dict) and c.get("image")}
    return out


def _build_context(resource: dict | None, operation: str, old: dict | None, values: dict | None,
                   user: dict | None = None) -> dict:
    obj = resource if operation != "DELETE" else None
    ctx: dict = {
        "request": {"operation": operation, "object": obj, "oldObject": old,
                    "userInfo": user or {}, "namespace": ((resource or {}).get("metadata") or {}).get("namespace")},
        "images": _images(resource or {}),
    }
    for dotted, val in (values or {}).items():
        parts = str(dotted).split(".")
        cur = ctx
        for p in parts[:-1]:
            nxt = cur.get(p)
            if not isinstance(nxt, dict):
                nxt = cur[p] = {}
            cur = nxt
        cur[parts[-1]] = val
    return ctx


_VARS_MEMO: dict[int, tuple[Any, bool]] = {}


def _has_variables(value: Any) -> bool:
    """Whether a (long-lived) pattern contains `{{` or `$(` anywhere; memoised by identity."""
    hit = _VARS_MEMO.get(id(value))
    if hit is not None and hit[0] is value:
        return hit[1]
    result = "{{" in json.dumps(value) or "$(" in json.dumps(value)
    if len(_VARS_MEMO) > 20000:
        _VARS_MEMO.clear()
    _VARS_MEMO[id(value)] = (value, result)
    return result


def _validate(validate: dict, resource: dict, ctx: dict) -> tuple[str, str]:
    for key in ("podSecurity", "cel", "manifests", "assert"):
        if validate.get(key) is not None:
            raise Unsupported(f"validate.{key}")
    message = validate.get("message") or ""
    if validate.get("foreach") is not None:
        status, detail = _foreach(validate["foreach"], resource, ctx, 0)
        return status, (detail if status == PASS else f"{message} {detail}".strip())
    if "pattern" in validate and validate["pattern"] is not None:
        pattern = substitute(validate["pattern"], ctx) if _has_variables(validate["pattern"]) \
            else validate["pattern"]
        status, detail = match_pattern(resource, pattern)
        return status, (detail if status == PASS else f"{message} {detail}".strip())
    if validate.get("anyPattern") is not None:
        patterns = substitute(validate["anyPattern"], ctx) if _has_variables(validate["anyPattern"]) \
            else validate["anyPattern"]
        if not isinstance(patterns, list):
            raise KyvernoError("anyPattern must be a list")
        statuses = []
        for p in patterns:
            status, detail = match_pattern(resource, p)
            if status == PASS:
                return PASS, ""
            statuses.append((status, detail))
        if statuses and all(s == SKIP for s, _ in statuses):
            return SKIP, "; ".join(d for _, d in statuses)
        return FAIL, f"{message} " + "; ".join(d for s, d in statuses if s == FAIL)
    if validate.get("deny") is not None:
        deny = validate["deny"] or {}
        holds, _ = evaluate_conditions(deny.get("conditions"), ctx, soft=False)
        if holds:
            return FAIL, str(substitute(message, ctx, soft=True)) if "{{" in message else message
        return PASS, ""
    raise Unsupported("a validate rule without pattern, anyPattern or deny")


def _foreach(entries: Any, resource: dict, ctx: dict, nesting: int) -> tuple[str, str]:
    """validate.foreach: every element of each list must pass; skip when none applied."""
    if not isinstance(entries, list):
        raise KyvernoError("foreach must be a list")
    applied = 0
    for entry in entries:
        expr = str(entry.get("list") or "").strip()
        if expr.startswith("{{") and expr.endswith("}}"):
            expr = expr[2:-2]
        try:
            items = _resolve(expr, ctx)
        except NotFound:
            continue  # Kyverno skips a foreach whose list cannot be evaluated
        if not isinstance(items, list):
            items = [items]
        scope = entry.get("elementScope")
        for index, element in enumerate(items):
            if element is None:
                continue
            inner = dict(ctx)
            inner.update({"element": element, "elementIndex": index,
                          f"element{nesting}": element, f"elementIndex{nesting}": index})
            scoped = isinstance(element, dict) if scope is None else bool(scope)
            if scoped and not isinstance(element, dict):
                raise KyvernoError("elementScope: true needs elements that are objects")
            target = element if scoped else resource
            _load_context(entry.get("context"), inner)
            holds, _ = evaluate_conditions(entry.get("preconditions"), inner, soft=True)
            if not holds:
                continue
            if entry.get("foreach") is not None:
                status, detail = _foreach(entry["foreach"], target, inner, nesting + 1)
            else:
                status, detail = _validate({k: entry[k] for k in ("pattern", "anyPattern", "deny") if k in entry},
                                           target, inner)
            if status == SKIP:
                continue
            if status != PASS:
                return status, f"validation failure at element {index}: {detail}".strip()
            applied += 1
    if applied == 0:
        return SKIP, "no element of the foreach lists applied"
    return PASS, ""


def _load_context(entries: Any, ctx: dict) -> None:
    """Rule `context` entries; only `variable` entries can be evaluated offline."""
    for entry in entries or []:
        name = entry.get("name")
        variable = entry.get("variable")
        if variable is None:
            kinds = [k for k in ("configMap", "apiCall", "imageRegistry", "globalReference") if k in entry]
            raise Unsupported(f"rule context entry {kinds[0] if kinds else '?'} ({name})")
        value = None
        if "value" in variable:
            value = substitute(variable["value"], ctx)
        if variable.get("jmesPath"):
            path = substitute(variable["jmesPath"], ctx)
            try:
                value = _resolve(str(path), value if "value" in variable else ctx)
            except NotFound:
                value = None
        if value is None:
            if "default" not in variable:
                raise KyvernoError(f"context variable {name!r} resolved to null and has no default")
            value = substitute(variable["default"], ctx)
        ctx[name] = value


def _context_for(resource: dict, operation: str, old_resource: dict | None, values: dict | None) -> dict:
    target = resource if operation != "DELETE" else (old_resource or resource)
    if old_resource is None and operation == "UPDATE":
        old_resource = resource  # the CLI evaluates an UPDATE against the object itself
    return _build_context(target, operation, old_resource, values)


def evaluate_rule(policy_name: str, rule: dict, resource: dict, operation: str = "CREATE",
                  old_resource: dict | None = None, values: dict | None = None,
                  namespace: str | None = None, ctx: dict | None = None) -> RuleResult:
    name = rule.get("name", "")
    target = resource if operation != "DELETE" else (old_resource or resource)
    if namespace and ((target.get("metadata") or {}).get("namespace") or "") != namespace:
        return RuleResult(policy_name, name, SKIP, "outside the Policy's namespace", matched=False)
    if rule.get("validate") is None:
        raise Unsupported(f"rule {name!r}: only validate rules are supported")
    if not _block_matches(rule.get("match"), target, operation):
        return RuleResult(policy_name, name, SKIP, "resource does not match", matched=False)
    if _block_matches(rule.get("exclude"), target, operation):
        return RuleResult(policy_name, name, SKIP, "resource is excluded", matched=False)
    if ctx is None:
        ctx = _context_for(resource, operation, old_resource, values)
    try:
        if rule.get("context"):
            ctx = dict(ctx)  # the policy's rules share one context; keep variables per rule
            _load_context(rule["context"], ctx)
        holds, _ = evaluate_conditions(rule.get("preconditions"), ctx, soft=True)
        if not holds:
            return RuleResult(policy_name, name, SKIP, "preconditions not met")
        status, message = _validate(rule["validate"], target, ctx)
    except KyvernoError as exc:
        return RuleResult(policy_name, name, ERROR, str(exc))
    return RuleResult(policy_name, name, status, message)


def evaluate_policy(policy: dict, resource: dict, operation: str = "CREATE",
                    old_resource: dict | None = None, values: dict | None = None) -> list[RuleResult]:
    """Every rule (autogen included) of a Kyverno policy against one resource.

    Raises Unsupported when the policy uses a feature this matcher does not implement.
    """
    return _evaluate(policy, resource, operation, old_resource, values, strict=True)


_UNSUPPORTED = "unsupported"


def _evaluate(policy: dict, resource: dict, operation: str, old_resource: dict | None,
              values: dict | None, strict: bool) -> list[RuleResult]:
    """evaluate_policy; when not `strict`, a rule using an unsupported feature yields a
    result with status "unsupported" (the feature as message) instead of raising."""
    if not isinstance(policy, dict) or policy.get("kind") not in ("ClusterPolicy", "Policy"):
        raise KyvernoError("not a Kyverno ClusterPolicy or Policy")
    meta = policy.get("metadata") or {}
    name = meta.get("name", "")
    namespace = meta.get("namespace") or "default" if policy["kind"] == "Policy" else None
    rules = _cached_rules(policy)
    ctx = _context_for(resource, operation, old_resource, values) if rules else None
    results = []
    for rule in rules:
        try:
            results.append(evaluate_rule(name, rule, resource, operation, old_resource, values, namespace, ctx))
        except Unsupported as exc:
            if strict:
                raise
            results.append(RuleResult(name, rule.get("name", ""), _UNSUPPORTED, exc.feature))
    if str((meta.get("annotations") or {}).get("policies.kyverno.io/scored", "")).lower() == "false":
        # an unscored policy reports its failures as warnings
        results = [RuleResult(r.policy, r.rule, WARN, r.message, r.matched) if r.status == FAIL else r
                   for r in results]
    return results
