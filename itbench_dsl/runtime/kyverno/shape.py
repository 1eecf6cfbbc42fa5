"""The shape of what the matcher reads, checked before it reads it, and what it does not support.

Every value the matcher takes from a policy has the type declared here, so that evaluation never
meets a list where it reads a map: `check_policy` walks a policy against `POLICY` (Kyverno's
ClusterPolicy/Policy schema, field by field) and raises `Malformed` naming the path of the first value
of the wrong type; `check_resource` does the same for the envelope of a resource (`apiVersion`,
`kind`, `metadata`), whose body the matcher reads only through type-checking code; `check_tree`
bounds any document's nesting and refuses values that are not JSON data.

The same walk finds every construct the matcher does not implement: a field marked `_Unsupported`
below is reported with its path (`spec.rules[2].mutate`) and the reason, so that the rule using it is
reported unsupported, never evaluated wrongly. `UNSUPPORTED` is the machine-readable list of those
fields (schema paths, `[]` for any list index; `Test.` and `Values.` for the fields of kyverno-test.yaml
and of its Values file, whose shapes are here too) and `UNSUPPORTED_VALUES` the constructs that depend
on a value rather than a field (docs/policy-test.md lists both; a test keeps them in step).
"""

from typing import Any

from .outcomes import Malformed


MAX_DEPTH = 100  # levels of maps and lists; Kubernetes objects and Kyverno policies nest far less

STRING, BOOLEAN, INTEGER, ANY, SCALAR, CONDITIONS = "string", "boolean", "integer", "any", "scalar", "conditions"


class _Unsupported:
    """A field whose presence makes a rule (or the policy) unsupported; its value must still have `shape`
    (the type of whatever the matcher reads of it, autogen for instance)."""

    def __init__(self, reason: str, shape: Any = ANY) -> None:
        self.reason, self.shape = reason, shape


class _Required:
    def __init__(self, shape: Any) -> None:
        self.shape = shape


def _list(item: Any) -> tuple:
    return ("list", item)


def _map_of(value: Any) -> tuple:
    return ("map-of", value)


_SELECTOR = {"matchLabels": _map_of(SCALAR),
             "matchExpressions": _list({"key": _Required(STRING), "operator": _Required(STRING),
                                        "values": _list(SCALAR)})}
_RESOURCES = {
    "kinds": _list(STRING), "name": STRING, "names": _list(STRING), "namespaces": _list(STRING),
    "annotations": _map_of(SCALAR), "selector": _SELECTOR, "operations": _list(STRING),
    # given by a Values file's `namespaceSelector` (namespace labels); otherwise unsupported (policy.py)
    "namespaceSelector": _SELECTOR,
}
_SUBJECT = {"kind": STRING, "name": STRING, "namespace": STRING, "apiGroup": STRING}
_FILTER = {"resources": _RESOURCES, "subjects": _list(_SUBJECT), "roles": _list(STRING),
           "clusterRoles": _list(STRING)}
_MATCH = {"any": _list(_FILTER), "all": _list(_FILTER), **_FILTER}
_CONTEXT = {
    "name": _Required(STRING),
    "variable": {"value": ANY, "jmesPath": STRING, "default": ANY},
    # these four read the cluster or a registry: usable only when the test's Values give the variable
    "configMap": {"name": STRING, "namespace": STRING},
    "apiCall": {"urlPath": STRING, "jmesPath": STRING, "method": STRING, "data": ANY, "service": ANY,
                "default": ANY},
    "globalReference": {"name": STRING, "jmesPath": STRING},
    "imageRegistry": {"reference": STRING, "jmesPath": STRING, "imageRegistryCredentials": ANY},
}
_DENY = {"conditions": CONDITIONS}
_FOREACH: dict = {
    "list": _Required(STRING), "context": _list(_CONTEXT), "preconditions": CONDITIONS, "pattern": ANY,
    "anyPattern": _list(ANY), "deny": _DENY, "elementScope": BOOLEAN,
}
_FOREACH["foreach"] = _list(_FOREACH)
_NO_EFFECT = ANY  # read by Kyverno in a cluster (enforcement, webhooks, reports): no effect on a result

_VALIDATE = {
    "message": STRING, "pattern": ANY, "anyPattern": _list(ANY), "deny": _DENY, "foreach": _list(_FOREACH),
    "failureAction": STRING, "failureActionOverrides": _NO_EFFECT, "allowExistingViolations": BOOLEAN,
    # the Pod Security Standards (pss.py), every version read as `latest`; exclusions unsupported
    "podSecurity": {"level": STRING, "version": STRING,
                    "exclude": _Unsupported("Pod Security Standards exclusions (validate.podSecurity.exclude)",
                                            _list(ANY))},
    # a CEL subset (cel.py); parameters unsupported, audit annotations without effect on a result
    "cel": {"expressions": _list({"expression": _Required(STRING), "message": STRING, "messageExpression": ANY,
                                  "reason": ANY}),
            "variables": _list({"name": _Required(STRING), "expression": _Required(STRING)}),
            "paramKind": _Unsupported("CEL parameters (validate.cel.paramKind)", _map_of(ANY)),
            "paramRef": _Unsupported("CEL parameters (validate.cel.paramRef)", _map_of(ANY)),
            "auditAnnotations": _NO_EFFECT, "generate": _NO_EFFECT},
    "manifests": _Unsupported("signed manifests (validate.manifests)", _map_of(ANY)),
    "assert": _Unsupported("assertion trees (validate.assert)", _map_of(ANY)),
}
_RULE = {
    "name": _Required(STRING),
    "match": _MATCH, "exclude": _MATCH, "context": _list(_CONTEXT), "preconditions": CONDITIONS,
    "validate": _VALIDATE,
    "celPreconditions": _Unsupported("CEL preconditions (celPreconditions)", _list(ANY)),
    "mutate": _Unsupported("mutate rules (a test of them compares patched resources)", _map_of(ANY)),
    "generate": _Unsupported("generate rules (a test of them compares generated resources)", _map_of(ANY)),
    "verifyImages": _Unsupported("image signature verification (verifyImages)", _list(ANY)),
    "imageExtractors": _Unsupported("custom image extractors (imageExtractors)", _map_of(ANY)),
    "reportProperties": _NO_EFFECT, "skipBackgroundRequests": _NO_EFFECT,
}
_SPEC = {
    "rules": _list(_RULE),
    "applyRules": STRING,  # One: evaluation stops at the first rule that applies (policy.py)
    "validationFailureAction": STRING, "validationFailureActionOverrides": _NO_EFFECT,
    "background": BOOLEAN, "admission": BOOLEAN, "failurePolicy": STRING, "emitWarning": BOOLEAN,
    "webhookTimeoutSeconds": INTEGER, "webhookConfiguration": _NO_EFFECT, "schemaValidation": BOOLEAN,
    "useServerSideApply": BOOLEAN, "generateExisting": BOOLEAN, "generateExistingOnPolicyUpdate": BOOLEAN,
    "mutateExistingOnPolicyUpdate": BOOLEAN,
}
# ObjectMeta: what a policy says, and what the API server adds to a policy read back from a cluster
# (`kubectl get clusterpolicy -o yaml`), which changes nothing of what it checks
_METADATA = {"name": STRING, "namespace": STRING, "labels": _map_of(SCALAR), "annotations": _map_of(SCALAR),
             **dict.fromkeys(("uid", "resourceVersion", "generation", "creationTimestamp", "managedFields",
                              "finalizers", "ownerReferences", "deletionTimestamp", "deletionGracePeriodSeconds",
                              "generateName", "selfLink"), _NO_EFFECT)}
POLICY = {"apiVersion": STRING, "kind": _Required(STRING), "metadata": _Required(_METADATA),
          "spec": _Required(_SPEC), "status": _NO_EFFECT}
_CONDITION = {"key": ANY, "operator": _Required(STRING), "value": ANY, "message": STRING}
_OPERATORS = frozenset((
    "Equals", "NotEquals", "Equal", "NotEqual", "AnyIn", "AllIn", "AnyNotIn", "AllNotIn", "In", "NotIn",
    "GreaterThan", "GreaterThanOrEquals", "LessThan", "LessThanOrEquals", "DurationGreaterThan",
    "DurationGreaterThanOrEquals", "DurationLessThan", "DurationLessThanOrEquals"))
_UNKNOWN_FIELD = "a field unknown to Kyverno's schema"

# Kyverno CLI test files: the Test (kyverno-test.yaml) and the Values file it names.
STATUSES = ("pass", "fail", "skip", "error", "warn")

RESULT = {
    "policy": _Required(STRING), "rule": STRING, "resources": _list(STRING), "resource": STRING,
    "kind": STRING, "namespace": STRING, "result": STRING, "status": STRING,
    "patchedResources": _Unsupported("the patched resources of a mutate rule (patchedResources)"),
    "patchedResource": _Unsupported("the patched resource of a mutate rule (patchedResource)"),
    "generatedResource": _Unsupported("the generated resource of a generate rule (generatedResource)"),
    "cloneSourceResource": _Unsupported("the clone source of a generate rule (cloneSourceResource)"),
    "isValidatingAdmissionPolicy": BOOLEAN, "isValidatingPolicy": BOOLEAN, "isMutatingPolicy": BOOLEAN,
    "isGeneratingPolicy": BOOLEAN, "isDeletingPolicy": BOOLEAN, "isImageValidatingPolicy": BOOLEAN,
}
TEST = {
    "apiVersion": STRING, "kind": STRING, "metadata": {"name": STRING, "namespace": STRING,
                                                         "labels": ANY, "annotations": ANY},
    "name": STRING, "policies": _list(STRING), "resources": _list(STRING), "variables": STRING,
    "results": _Required(_list(RESULT)),
    "userinfo": _Unsupported("admission user information (userinfo)", STRING),
    "exceptions": _Unsupported("policy exceptions (exceptions)", _list(STRING)),
    "checks": _Unsupported("checks", ANY),
    "context": _Unsupported("a cluster context file (context)", STRING),
    "target": _Unsupported("target resources (target)", ANY),
    "clusterResources": _Unsupported("cluster resources (clusterResources)", ANY),
}
VALUES = {
    "apiVersion": STRING, "kind": STRING, "metadata": ANY, "globalValues": _map_of(ANY),
    "policies": _list({
        "name": _Required(STRING),
        "rules": _list({"name": _Required(STRING), "values": _map_of(ANY),
                        "foreachValues": _Unsupported("values per foreach element (foreachValues)")}),
        "resources": _list({"name": _Required(STRING), "values": _map_of(ANY)}),
    }),
    "namespaceSelector": _list({"name": _Required(STRING), "labels": _map_of(SCALAR)}),
    "subresources": _Unsupported("subresources"),
    "namespaces": _list(_map_of(ANY)),  # Namespace objects: their labels, as namespaceSelector gives them
}


# Constructs that depend on a value, not on a field: found while evaluating, named the same way.
UNSUPPORTED_VALUES = {
    "policy kinds": "kinds other than ClusterPolicy and Policy (ValidatingPolicy, MutatingPolicy, "
                    "GeneratingPolicy, ...)",
    "condition operators": "operators other than those listed as supported",
    "label selector operators": "matchExpressions operators other than In, NotIn, Exists, DoesNotExist",
    "context entries": "configMap, apiCall, globalReference and imageRegistry entries whose variable "
                       "the test's Values do not give",
    "namespaceSelector": "a namespaceSelector when the test's Values give no namespace labels",
    "JMESPath functions": "functions other than those listed as supported (time, semver, x509, YAML, ...)",
    "$(...) references": "references to other fields of the pattern",
    "{{@}}": "the value at the pattern's own path",
    "{{- }}": "escaped variables",
    "unknown fields": "a field of a policy, a test or a Values file that their schema does not have",
}


def _type_name(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a map"
    return type(value).__name__


_EXPECTED = {STRING: "a string", BOOLEAN: "a boolean", INTEGER: "an integer", SCALAR: "a string, number or boolean"}


def _walk(value: Any, shape: Any, where: tuple, found: list, document: Any) -> None:
    """Check `value` against `shape`; append (where, reason) to `found` for each unsupported field."""
    if isinstance(shape, _Required):
        shape = shape.shape
    if isinstance(shape, _Unsupported):
        if value != []:  # an empty list asks for nothing (`exclude: []`)
            found.append((where, shape.reason))
        shape = shape.shape
    if shape == ANY:
        return
    if shape == CONDITIONS:
        _conditions(value, where, found, document)
        return

    def wrong(expected: str) -> Malformed:
        return Malformed(f"expected {expected}, found {_type_name(value)}", where, document)

    if isinstance(shape, str):
        ok = {STRING: isinstance(value, str), BOOLEAN: isinstance(value, bool),
              INTEGER: isinstance(value, int) and not isinstance(value, bool),
              SCALAR: isinstance(value, (str, int, float, bool))}[shape]
        if not ok:
            raise wrong(_EXPECTED[shape])
    elif isinstance(shape, tuple):
        if shape[0] == "list":
            if not isinstance(value, list):
                raise wrong("a list")
            for index, item in enumerate(value):
                if item is None and shape[1] != ANY:
                    raise Malformed("a list entry is null", where + (index,), document)
                _walk(item, shape[1], where + (index,), found, document)
        else:
            if not isinstance(value, dict):
                raise wrong("a map")
            for key, item in value.items():
                if item is not None:
                    _walk(item, shape[1], where + (key,), found, document)
    else:
        if not isinstance(value, dict):
            raise wrong("a map")
        for key, item in value.items():
            if key not in shape:
                found.append((where + (key,), _UNKNOWN_FIELD))
            elif item is not None:  # null is an absent field, as Kubernetes reads it
                _walk(item, shape[key], where + (key,), found, document)
        for key, field in shape.items():
            if isinstance(field, _Required) and value.get(key) is None:
                raise Malformed(f"the field {key!r} is required", where, document)


def _conditions(value: Any, where: tuple, found: list, document: Any) -> None:
    if isinstance(value, list):
        blocks = {None: value}
    elif isinstance(value, dict):
        extra = sorted(str(k) for k in value if k not in ("any", "all"))
        if extra:
            raise Malformed(f"unknown condition block {extra[0]!r} (expected any or all)", where, document)
        blocks = {k: v for k, v in value.items() if v is not None}
    else:
        raise Malformed(f"expected a list of conditions or an any/all block, found {_type_name(value)}",
                        where, document)
    for block, items in blocks.items():
        at = where if block is None else where + (block,)
        if not isinstance(items, list):
            raise Malformed(f"expected a list of conditions, found {_type_name(items)}", at, document)
        for index, cond in enumerate(items):
            _walk(cond, _CONDITION, at + (index,), found, document)
            if cond["operator"] not in _OPERATORS:
                found.append((at + (index, "operator"), f"the condition operator {cond['operator']!r}"))


walk = _walk  # for the suite runner's own shapes (kyverno-test.yaml, Values)


def check_tree(value: Any, document: Any = None, limit: int = MAX_DEPTH) -> None:
    """Refuse nesting deeper than `limit`, map keys that are not strings and values that are not JSON
    data (a value that contains itself nests without end). Iterative: no input can exhaust the stack."""
    stack: list[tuple[Any, tuple]] = [(value, ())]
    while stack:
        item, where = stack.pop()
        if len(where) > limit:
            raise Malformed(f"nesting deeper than {limit} levels", where[:limit], document)
        if isinstance(item, dict):
            for key, child in item.items():
                if not isinstance(key, str):
                    raise Malformed(f"a map key is {_type_name(key)}, not a string", where, document)
                if isinstance(child, (dict, list)):
                    stack.append((child, where + (key,)))
                elif not (child is None or isinstance(child, (str, int, float, bool))):
                    raise Malformed(f"a value of type {type(child).__name__} is not JSON data", where + (key,),
                                    document)
        elif isinstance(item, list):
            for index, child in enumerate(item):
                if isinstance(child, (dict, list)):
                    stack.append((child, where + (index,)))
                elif not (child is None or isinstance(child, (str, int, float, bool))):
                    raise Malformed(f"a value of type {type(child).__name__} is not JSON data",
                                    where + (index,), document)


def check_policy(policy: Any) -> list[tuple[tuple, str]]:
    """Raise Malformed for a value of the wrong type; return the unsupported fields as (path, reason)."""
    if not isinstance(policy, dict):
        raise Malformed(f"a policy must be a map, found {_type_name(policy)}", (), policy)
    check_tree(policy, policy)
    found: list[tuple[tuple, str]] = []
    _walk(policy, POLICY, (), found, policy)
    if (policy["metadata"].get("name") or "") == "":
        raise Malformed("the field 'name' is required", ("metadata",), policy)
    return found


def rule_findings(found: list[tuple[tuple, str]], index: int) -> list[tuple[tuple, str]]:
    """The unsupported fields that concern rule `index`: its own and those of the whole policy."""
    return [(where, reason) for where, reason in found
            if where[:2] != ("spec", "rules") or (len(where) > 2 and where[2] == index)]


def check_resource(resource: Any, document: Any = None) -> None:
    """The envelope of a resource: a map whose apiVersion and kind are strings, whose metadata is a
    map with a string name and namespace and maps of labels and annotations. Its body is free."""
    document = resource if document is None else document
    if not isinstance(resource, dict):
        raise Malformed(f"a resource must be a map, found {_type_name(resource)}", (), document)
    check_tree(resource, document)
    for key in ("apiVersion", "kind"):  # absent in some clients' list items: then no kinds filter matches
        if resource.get(key) is not None and not isinstance(resource[key], str):
            raise Malformed(f"expected a string, found {_type_name(resource[key])}", (key,), document)
    meta = resource.get("metadata")
    if meta is None:
        return
    _walk(meta, _map_of(ANY), ("metadata",), [], document)
    for key in ("name", "namespace", "generateName"):
        if meta.get(key) is not None and not isinstance(meta[key], str):
            raise Malformed(f"expected a string, found {_type_name(meta[key])}", ("metadata", key), document)
    for key in ("labels", "annotations"):
        if meta.get(key) is not None:
            _walk(meta[key], _map_of(SCALAR), ("metadata", key), [], document)


def _schema_paths(shape: Any, path: str, out: dict, seen: set) -> None:
    if isinstance(shape, _Required):
        shape = shape.shape
    if isinstance(shape, _Unsupported):
        out[path] = shape.reason
        shape = shape.shape
    if isinstance(shape, tuple):
        _schema_paths(shape[1], path + ("[]" if shape[0] == "list" else ".*"), out, seen)
    elif isinstance(shape, dict):
        if id(shape) in seen:
            return
        seen = seen | {id(shape)}
        for key, field in shape.items():
            _schema_paths(field, f"{path}.{key}" if path else key, out, seen)


def _unsupported_fields() -> dict[str, str]:
    out: dict[str, str] = {}
    _schema_paths(POLICY, "", out, set())
    _schema_paths(TEST, "Test", out, set())
    _schema_paths(VALUES, "Values", out, set())
    return dict(sorted(out.items()))


# schema path -> reason, for every field of a policy (spec...), a test (Test...) or a Values file
# (Values...) this matcher does not implement
UNSUPPORTED: dict[str, str] = _unsupported_fields()
