"""Evaluating a policy against one resource: the rule's context, validate (pattern, anyPattern, deny,
foreach), and the results of every rule, autogen included.

Entry points: `evaluate_policy(policy, resource, operation)` -> list of `RuleResult` (it raises
`Unsupported` when the policy uses a feature this matcher does not implement, and `Malformed` when a
value of the policy or of the resource's envelope has the wrong type), and `evaluate_rule` for one rule.

The policy's shape is checked once (shape.py, through autogen's memo), so the code below reads its
fields with the types declared there; the body of a resource is free data, read only through `_dig`
and the type-checking pattern and JMESPath code.
"""

import json
from typing import Any

from .autogen import _cached_rules
from .conditions import _resolve, evaluate_conditions, substitute
from .jmespath import NotFound
from .outcomes import ERROR, FAIL, NOT_SUPPORTED, PASS, SKIP, WARN, KyvernoError, Malformed, RuleResult, \
    Unsupported, _dotted
from .patterns import match_pattern
from .pss import evaluate as pss_evaluate
from .cel import Budget as CelBudget
from .cel import validate as cel_validate
from .cel import matched as cel_matched
from .resources import _block_matches, _selector_matches
from .shape import check_resource


def _dig(value: Any, *keys: str) -> Any:
    """value[k1][k2]... where each step is a map holding the key; None otherwise."""
    for key in keys:
        if not isinstance(value, dict):
            return None
        value = value.get(key)
    return value


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
    kind = resource.get("kind")
    if kind == "CronJob":
        spec = _dig(resource, "spec", "jobTemplate", "spec", "template", "spec")
    elif kind != "Pod":
        spec = _dig(resource, "spec", "template", "spec")
    else:
        spec = _dig(resource, "spec")
    out: dict = {}
    for key in ("initContainers", "containers", "ephemeralContainers"):
        items = _dig(spec, key)
        if isinstance(items, list) and items:
            out[key] = {str(c.get("name", "")): _image_info(str(c["image"])) for c in items
                        if isinstance(c, dict) and isinstance(c.get("image"), (str, int, float))}
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


def _validate(validate: dict, resource: dict, ctx: dict, given: frozenset = frozenset()) -> tuple[str, str]:
    message = validate.get("message") or ""
    if validate.get("foreach") is not None:
        status, detail = _foreach(validate["foreach"], resource, ctx, 0, given)
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
    if validate.get("podSecurity") is not None:
        return pss_evaluate(validate["podSecurity"], resource)
    if validate.get("cel") is not None:
        return cel_validate(validate["cel"], resource, ctx, message)
    if validate.get("deny") is not None:
        deny = validate["deny"] or {}
        holds, _ = evaluate_conditions(deny.get("conditions"), ctx, soft=False)
        if holds:
            return FAIL, str(substitute(message, ctx, soft=True)) if "{{" in message else message
        return PASS, ""
    raise Unsupported("a validate rule without pattern, anyPattern or deny")


def _foreach(entries: Any, resource: dict, ctx: dict, nesting: int, given: frozenset) -> tuple[str, str]:
    """validate.foreach: every element of each list must pass; skip when none applied."""
    if not isinstance(entries, list):
        raise KyvernoError("foreach must be a list")
    applied = 0
    for entry in entries:
        expr = entry["list"].strip()
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
            _load_context(entry.get("context"), inner, given)
            holds, _ = evaluate_conditions(entry.get("preconditions"), inner, soft=True)
            if not holds:
                continue
            if entry.get("foreach") is not None:
                status, detail = _foreach(entry["foreach"], target, inner, nesting + 1, given)
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


def _load_context(entries: Any, ctx: dict, given: frozenset = frozenset()) -> None:
    """Rule `context` entries. `variable` entries are evaluated; the others read a cluster or a
    registry, so, as `kyverno test` does, they take the value the test's Values give (`given`: the
    names of the variables the Values set) and are unsupported otherwise."""
    for entry in entries or []:
        name = entry["name"]
        variable = entry.get("variable")
        if variable is None:
            if name in given:
                continue
            kinds = [k for k in ("configMap", "apiCall", "imageRegistry", "globalReference") if k in entry]
            raise Unsupported(f"the context entry {name!r} of type {kinds[0] if kinds else '(none)'}, which "
                              "reads the cluster and which the test's Values do not give,")
        value = None
        if "value" in variable:
            value = substitute(variable["value"], ctx)
        if variable.get("jmesPath"):
            path = substitute(variable["jmesPath"], ctx)
            if not isinstance(path, str):
                raise KyvernoError(f"context variable {name!r}: jmesPath is not a string after substitution")
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


def _unsupported(name: str, findings: list) -> Unsupported:
    where, reason = findings[0]
    return Unsupported(f"rule {name!r}: {_dotted(where)}: {reason} is {NOT_SUPPORTED}")


def _is_match_field(where: tuple) -> bool:
    return where[:2] != ("spec", "rules") or (len(where) > 3 and where[3] in ("match", "exclude"))


def evaluate_rule(policy_name: str, rule: dict, resource: dict, operation: str = "CREATE",
                  old_resource: dict | None = None, values: dict | None = None,
                  namespace: str | None = None, ctx: dict | None = None, findings: list | tuple = (),
                  namespace_labels: dict | None = None, budget: bool = True) -> RuleResult:
    """One rule against the resource (`budget`: with its own CEL budget; a policy's rules share one). `findings` are the rule's unsupported fields (shape.py): those of
    its match and exclude (and of the whole policy) make it unsupported before matching, the others
    only when the resource matches (Kyverno evaluates nothing else of a rule that does not apply).
    An unsupported construct found while evaluating is raised naming the rule."""
    if budget:
        CelBudget.open()
    try:
        return _evaluate_rule(policy_name, rule, resource, operation, old_resource, values, namespace, ctx,
                              findings, namespace_labels)
    except Unsupported as exc:
        if exc.feature.startswith("rule "):
            raise
        said = "" if NOT_SUPPORTED in exc.feature else f" is {NOT_SUPPORTED}"
        raise Unsupported(f"rule {rule['name']!r}: {exc.feature}{said}") from None


def _evaluate_rule(policy_name: str, rule: dict, resource: dict, operation: str, old_resource: dict | None,
                   values: dict | None, namespace: str | None, ctx: dict | None, findings: list | tuple,
                   namespace_labels: dict | None) -> RuleResult:
    name = rule["name"]
    target = resource if operation != "DELETE" else (old_resource or resource)
    if namespace and ((target.get("metadata") or {}).get("namespace") or "") != namespace:
        return RuleResult(policy_name, name, SKIP, "outside the Policy's namespace", matched=False)
    before = [f for f in findings if _is_match_field(f[0])]
    if before:
        raise _unsupported(name, before)
    if not _block_matches(rule.get("match"), target, operation, namespace_labels):
        return RuleResult(policy_name, name, SKIP, "resource does not match", matched=False)
    if _block_matches(rule.get("exclude"), target, operation, namespace_labels):
        return RuleResult(policy_name, name, SKIP, "resource is excluded", matched=False)
    if findings:
        raise _unsupported(name, list(findings))
    if rule.get("validate") is None:
        raise Unsupported(f"rule {name!r}: a rule without validate, mutate, generate or verifyImages is "
                          f"{NOT_SUPPORTED}")
    if ctx is None:
        ctx = _context_for(resource, operation, old_resource, values)
    given = frozenset(str(k).split(".", 1)[0] for k in (values or {}))
    try:
        if rule.get("context"):
            ctx = dict(ctx)  # the policy's rules share one context; keep variables per rule
            _load_context(rule["context"], ctx, given)
        holds, _ = evaluate_conditions(rule.get("preconditions"), ctx, soft=True)
        if not holds:
            return RuleResult(policy_name, name, SKIP, "preconditions not met")
        status, message = _validate(rule["validate"], target, ctx, given)
    except Malformed:
        raise
    except KyvernoError as exc:
        return RuleResult(policy_name, name, ERROR, str(exc))
    return RuleResult(policy_name, name, status, message)


def evaluate_policy(policy: dict, resource: dict, operation: str = "CREATE",
                    old_resource: dict | None = None, values: dict | None = None,
                    namespace_labels: dict | None = None) -> list[RuleResult]:
    """Every rule (autogen included) of a Kyverno policy against one resource.

    Raises Unsupported when the policy uses a feature this matcher does not implement, Malformed
    (a KyvernoError) when the policy or the resource's envelope has a value of the wrong type.
    `namespace_labels` maps a namespace to its labels, for namespaceSelector filters (without it, a
    namespaceSelector is Unsupported).
    """
    return _evaluate(policy, resource, operation, old_resource, values, strict=True,
                     namespace_labels=namespace_labels)


_UNSUPPORTED = "unsupported"


def _evaluate(policy: dict, resource: dict, operation: str, old_resource: dict | None,
              values: dict | None, strict: bool, rule_values: dict | None = None,
              namespace_labels: dict | None = None) -> list[RuleResult]:
    """evaluate_policy; when not `strict`, a rule using an unsupported feature yields a result with
    status "unsupported" (the feature as message) instead of raising. `rule_values` maps a rule's
    name to the variables the test's Values give that rule; `namespace_labels` maps a namespace to
    its labels (a Values file's namespaceSelector), for namespaceSelector filters."""
    CelBudget.open()  # every rule's CEL against this resource draws on one budget
    if isinstance(policy, dict) and policy.get("kind") in VALIDATING_POLICY_KINDS:
        return _validating_policy(policy, resource, operation, old_resource, namespace_labels)
    if not isinstance(policy, dict) or policy.get("kind") not in ("ClusterPolicy", "Policy"):
        raise KyvernoError("not a Kyverno ClusterPolicy or Policy")
    rules = _cached_rules(policy)  # checks the policy's shape (Malformed)
    check_resource(resource)
    if old_resource is not None:
        check_resource(old_resource)
    meta = policy["metadata"]
    name = meta["name"]
    namespace = (meta.get("namespace") or "default") if policy["kind"] == "Policy" else None
    ctx = _context_for(resource, operation, old_resource, values) if rules else None
    one = str(policy["spec"].get("applyRules") or "") == "One"
    results: list[RuleResult] = []
    for rule, findings in rules:
        rule_name = rule["name"]
        if one and any(r.matched and r.status != SKIP for r in results):
            results.append(RuleResult(name, rule_name, SKIP, "applyRules is One and an earlier rule applied"))
            continue
        own = (rule_values or {}).get(_source_name(rule_name))
        rule_ctx, merged = ctx, values
        if own:
            merged = {**(values or {}), **own}
            rule_ctx = _context_for(resource, operation, old_resource, merged)
        try:
            results.append(evaluate_rule(name, rule, resource, operation, old_resource, merged, namespace,
                                         rule_ctx, findings, namespace_labels, budget=False))
        except Unsupported as exc:
            if strict:
                raise
            results.append(RuleResult(name, rule_name, _UNSUPPORTED, exc.feature))
    if str((meta.get("annotations") or {}).get("policies.kyverno.io/scored", "")).lower() == "false":
        # an unscored policy reports its failures as warnings
        results = [RuleResult(r.policy, r.rule, WARN, r.message, r.matched) if r.status == FAIL else r
                   for r in results]
    return results


def _source_name(rule_name: str) -> str:
    """The rule an autogen rule comes from (its Values are the source rule's)."""
    for prefix in ("autogen-cronjob-", "autogen-"):
        if rule_name.startswith(prefix):
            return rule_name[len(prefix):]
    return rule_name


# ---- ValidatingPolicy (policies.kyverno.io): a ValidatingAdmissionPolicy's CEL, with Kyverno's autogen ----

VALIDATING_POLICY_KINDS = ("ValidatingPolicy", "NamespacedValidatingPolicy")
_VPOL_KNOWN = {"validationActions", "matchConstraints", "matchConditions", "variables", "validations",
               "auditAnnotations", "autogen", "evaluation", "failurePolicy", "webhookConfiguration", "admission",
               "background"}
# the plural resource of a kind, as the API server names it (its REST mapping), for matchConstraints
_PLURALS = {"Pod": "pods", "Deployment": "deployments", "StatefulSet": "statefulsets", "DaemonSet": "daemonsets",
            "ReplicaSet": "replicasets", "Job": "jobs", "CronJob": "cronjobs", "ReplicationController":
            "replicationcontrollers", "NetworkPolicy": "networkpolicies", "Ingress": "ingresses",
            "PodSecurityPolicy": "podsecuritypolicies", "StorageClass": "storageclasses",
            "IngressClass": "ingressclasses", "PriorityClass": "priorityclasses", "RuntimeClass": "runtimeclasses"}
_CONTROLLERS = {"deployments": "Deployment", "statefulsets": "StatefulSet", "daemonsets": "DaemonSet",
                "replicasets": "ReplicaSet", "jobs": "Job", "cronjobs": "CronJob",
                "replicationcontrollers": "ReplicationController"}


def _plural(kind: str) -> str:
    return _PLURALS.get(kind) or (kind.lower() + "s")


def _rule_matches(rule: Any, resource: dict, operation: str, namespace_labels: dict | None, kind: str | None = None,
                  group: str | None = None) -> bool:
    """One NamedRuleWithOperations of a matchConstraints against the resource (as its `kind` when given)."""
    if not isinstance(rule, dict):
        raise Malformed("a resourceRules entry must be a map")
    api = str(resource.get("apiVersion") or "")
    own_group, _, version = api.rpartition("/")
    group = own_group if group is None else group
    plural = _plural(kind or str(resource.get("kind") or ""))
    def listed(key: str, value: str) -> bool:
        items = rule.get(key)
        return isinstance(items, list) and any(str(i) == "*" or str(i) == value for i in items)
    if not listed("apiGroups", group) or not listed("resources", plural) or not listed("operations", operation):
        return False
    if rule.get("apiVersions") is not None and kind is None and not listed("apiVersions", version):
        return False
    names = rule.get("resourceNames")
    name = str((resource.get("metadata") or {}).get("name") or "")
    return not (isinstance(names, list) and names and name not in [str(n) for n in names])


def _constraints_match(constraints: dict, resource: dict, operation: str, namespace_labels: dict | None,
                       kind: str | None = None, group: str | None = None) -> bool:
    if not isinstance(constraints, dict):
        raise Malformed("spec.matchConstraints must be a map")
    if not any(_rule_matches(r, resource, operation, namespace_labels, kind, group)
               for r in constraints.get("resourceRules") or []):
        return False
    if any(_rule_matches(r, resource, operation, namespace_labels, kind, group)
           for r in constraints.get("excludeResourceRules") or []):
        return False
    meta = resource.get("metadata") if isinstance(resource.get("metadata"), dict) else {}
    if constraints.get("objectSelector") and not _selector_matches(constraints["objectSelector"], meta.get("labels") or {}):
        return False
    if constraints.get("namespaceSelector") and meta.get("namespace"):
        if namespace_labels is None:
            raise Unsupported(f"a namespaceSelector without the namespaces' labels is {NOT_SUPPORTED}")
        if not _selector_matches(constraints["namespaceSelector"], namespace_labels.get(meta["namespace"]) or {}):
            return False
    return True


def _validating_policy(policy: dict, resource: dict, operation: str, old_resource: dict | None,
                       namespace_labels: dict | None) -> list[RuleResult]:
    """A Kyverno ValidatingPolicy against one resource: matchConstraints (resource rules by plural name, their
    exclusions, object and namespace selectors), matchConditions (all must hold: one false skips the resource;
    one in error fails it, unless `failurePolicy: Ignore`), `variables` and `validations` (cel.py); for a pod
    controller listed in `spec.autogen.podControllers.controllers`, a policy on pods reads its pod template, as
    Kyverno's autogen rewrites `object.spec` to the template's. One result, named after the policy."""
    meta = policy.get("metadata") if isinstance(policy.get("metadata"), dict) else {}
    spec = policy.get("spec")
    if not isinstance(spec, dict) or not isinstance(meta.get("name"), str):
        raise Malformed("a ValidatingPolicy needs metadata.name and a spec map")
    name = meta["name"]
    check_resource(resource)
    unknown = sorted(k for k in spec if k not in _VPOL_KNOWN)
    if unknown:
        raise Unsupported(f"the ValidatingPolicy field spec.{unknown[0]}")
    if spec.get("paramKind") or spec.get("paramRef"):
        raise Unsupported("ValidatingPolicy parameters")
    evaluation = spec.get("evaluation") if isinstance(spec.get("evaluation"), dict) else {}
    if str(evaluation.get("mode") or "Kubernetes") != "Kubernetes":
        raise Unsupported(f"the ValidatingPolicy evaluation mode {evaluation.get('mode')!r}")
    if policy.get("kind") == "NamespacedValidatingPolicy" and \
            (resource.get("metadata") or {}).get("namespace") != (meta.get("namespace") or "default"):
        return [RuleResult(name, name, SKIP, "outside the policy's namespace", matched=False)]
    constraints = spec.get("matchConstraints") or {}
    target = resource
    if not _constraints_match(constraints, resource, operation, namespace_labels):
        autogen = ((spec.get("autogen") or {}).get("podControllers") or {}) if isinstance(spec.get("autogen"), dict) else {}
        controllers = [str(c).lower() for c in (autogen.get("controllers") or [])] if isinstance(autogen, dict) else []
        kind = str(resource.get("kind") or "")
        template = None
        if _plural(kind) in controllers and _constraints_match(constraints, resource, operation, namespace_labels,
                                                                kind="Pod", group=""):
            body = resource.get("spec") if isinstance(resource.get("spec"), dict) else {}
            if kind == "CronJob":
                body = ((body.get("jobTemplate") or {}).get("spec") or {}) if isinstance(body.get("jobTemplate"), dict) else {}
            template = body.get("template") if isinstance(body.get("template"), dict) else None
        if template is None:
            return [RuleResult(name, name, SKIP, "the policy's matchConstraints leave the resource out", matched=False)]
        tmeta = dict(template.get("metadata") or {}) if isinstance(template.get("metadata"), dict) else {}
        if (resource.get("metadata") or {}).get("namespace"):
            tmeta.setdefault("namespace", resource["metadata"]["namespace"])
        target = {"apiVersion": "v1", "kind": "Pod", "metadata": tmeta, "spec": template.get("spec") or {}}
    ignore = str(spec.get("failurePolicy") or "Fail") == "Ignore"
    ctx = {"request": {"operation": operation, "oldObject": old_resource}}
    cel = {"variables": spec.get("variables") or [], "expressions": spec.get("validations") or []}
    try:
        held = cel_matched(spec.get("matchConditions") or [], cel["variables"], target, ctx)
        if held is False:
            return [RuleResult(name, name, SKIP, "a matchCondition does not hold")]
        if held is not True:  # a condition in error
            return [RuleResult(name, name, SKIP if ignore else FAIL, str(held))]
        status, message = cel_validate(cel, target, ctx)
    except KyvernoError as exc:
        if isinstance(exc, Malformed):
            raise
        return [RuleResult(name, name, ERROR, str(exc))]
    if status == FAIL and ignore and "resulted in error" in message:
        status = SKIP
    return [RuleResult(name, name, status, message)]
