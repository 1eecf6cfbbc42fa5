"""Field paths of `mitigated when` predicates, against the vendored schemas; and their regular expressions.

A predicate's path (`spec.ports[name="http"].targetPort`) is read by the evaluator from the object, or
from its spec, its pod spec or a container (runtime/state.lookup): `deployment "x" replicas`,
`resources.limits.memory`. `field_type` walks the schema of the target's kind (validate.py's vendored
schemas: Kubernetes, Chaos Mesh, Istio...) from each of those bases, the way the evaluator will, and
returns the type of what the path reaches, or the step where no base goes on (with the names that
would). A kind with no vendored schema, a field the schema leaves open, or anything inside `as json`
is of type `any`: the checker then types the comparison by its value alone.

`regex_problem` says why a `matches` pattern is refused: the evaluator's `re.fullmatch` must behave as
the RE2 subset the language documents (no backreferences, lookaround, atomic groups or conditionals)
and must stay linear (no nested unbounded repetition, bounded counts and length).
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field

MAX_REGEX_LENGTH = 1000
MAX_REPEAT_COUNT = 1000  # RE2's own bound on {n,m}

_QUANTITY_REF = "io.k8s.apimachinery.pkg.api.resource.Quantity"
_INT_OR_STRING_REF = "io.k8s.apimachinery.pkg.util.intstr.IntOrString"
_OBJECT_META = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
_WORKLOAD_KINDS = ("Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Job")


@dataclass(frozen=True)
class FieldType:
    """What a path reaches: string, integer, number, boolean, quantity, int-or-string, object, list, any."""

    name: str
    base: str = ""  # where the path starts: "" (the object), "spec", "pod spec", "container"


@dataclass(frozen=True)
class PathProblem:
    step: int  # the index of the step no base goes past
    message: str
    help: str = ""
    names: list[str] = field(default_factory=list)


def field_type(api_version: str, kind: str, path: list) -> FieldType | PathProblem:
    """The type `path` (IR steps: str keys, int indexes, [key, value] selections, {"parse": form}) reaches
    on an object of this kind, from the first base it resolves in; a PathProblem when it resolves in none."""
    root = _root(api_version, kind)
    if root is None:
        return FieldType("any")
    defs, schema = root
    bases = [("", schema)]
    spec = _child(defs, schema, "spec")
    if spec is not None:
        bases.append(("spec", spec))
        pod = _pod_spec(defs, spec, kind)
        if pod is not None:
            bases.append(("pod spec", pod))
            containers = _child(defs, pod, "containers")
            item = _items(defs, containers) if containers is not None else None
            if item is not None:
                bases.append(("container", item))
    elif kind == "Pod":
        pass
    best: PathProblem | None = None
    for base, start in bases:
        found = _walk(defs, start, path)
        if isinstance(found, FieldType):
            return FieldType(found.name, base)
        if best is None or found.step > best.step:
            best = found
    if best is not None and best.step == 0:
        names = sorted({n for _, start in bases for n in _names(defs, start)})
        hint = difflib.get_close_matches(str(path[0]), names, n=1)
        best = PathProblem(0, f"{kind} has no field `{path[0]}` (from the object, its spec"
                           + (", its pod spec or a container" if len(bases) > 2 else "") + ")",
                           f"did you mean `{hint[0]}`?" if hint else "", names)
    return best  # type: ignore[return-value]


def _root(api_version: str, kind: str):
    from . import validate

    key = f"{api_version}/{kind}"
    index = validate._kinds().get(key)
    if index is None:
        return None
    bundle = validate._bundle(index)
    schema = dict(bundle["kinds"][key])
    if index != 0:  # a custom resource's metadata is ObjectMeta, as the API server reads it
        k8s = validate._bundle(0)["$defs"]
        props = dict(schema.get("properties") or {})
        props["metadata"] = k8s[_OBJECT_META]
        schema["properties"] = props
        return _Defs(bundle["$defs"], k8s), schema
    return _Defs(bundle["$defs"], {}), schema


class _Defs:
    """The `$defs` of a schema file (and Kubernetes' own, for the ObjectMeta of custom resources)."""

    def __init__(self, own: dict, k8s: dict) -> None:
        self.own, self.k8s = own, k8s

    def get(self, name: str):
        return self.own.get(name) if name in self.own else self.k8s.get(name)


def _resolve(defs: _Defs, schema):
    """(the schema with `$ref`s followed, the name of the last definition followed)."""
    name = None
    for _ in range(32):
        if not isinstance(schema, dict) or "$ref" not in schema:
            break
        ref = schema["$ref"]
        if not isinstance(ref, str) or not ref.startswith("#/$defs/"):
            return {}, name
        name = ref[len("#/$defs/"):]
        schema = defs.get(name) or {}
    return (schema if isinstance(schema, dict) else {}), name


def _types(schema: dict) -> set:
    t = schema.get("type")
    return set(t) if isinstance(t, list) else {t} if isinstance(t, str) else set()


def _kind_of(defs: _Defs, schema) -> str:
    schema, name = _resolve(defs, schema)
    if name == _QUANTITY_REF:
        return "quantity"
    if name == _INT_OR_STRING_REF or schema.get("x-kubernetes-int-or-string"):
        return "int-or-string"
    types = _types(schema) - {"null"}
    if "array" in types:
        return "list"
    if "object" in types or "properties" in schema or "additionalProperties" in schema:
        return "object" if (schema.get("properties") or isinstance(schema.get("additionalProperties"), dict)
                            or schema.get("additionalProperties") is False) else "any"
    for t in ("string", "integer", "number", "boolean"):
        if t in types:
            return t
    return "any"


def _child(defs: _Defs, schema, key: str):
    schema, _ = _resolve(defs, schema)
    props = schema.get("properties") or {}
    if key in props:
        return props[key]
    extra = schema.get("additionalProperties")
    if isinstance(extra, dict):
        return extra
    return None


def _items(defs: _Defs, schema):
    schema, _ = _resolve(defs, schema)
    items = schema.get("items")
    return items if isinstance(items, dict) else None


def _names(defs: _Defs, schema) -> list[str]:
    schema, _ = _resolve(defs, schema)
    if _kind_of(defs, schema) == "list":
        schema, _ = _resolve(defs, _items(defs, schema) or {})
    return sorted(schema.get("properties") or {})


def _pod_spec(defs: _Defs, spec, kind: str):
    if kind == "Pod":
        return None  # a Pod's spec is its pod spec: the `spec` base already is
    if kind == "CronJob":
        job = _child(defs, spec, "jobTemplate")
        spec = _child(defs, job, "spec") if job is not None else None
        if spec is None:
            return None
    template = _child(defs, spec, "template")
    return _child(defs, template, "spec") if template is not None else None


def _walk(defs: _Defs, schema, path: list) -> FieldType | PathProblem:
    for index, step in enumerate(path):
        kind = _kind_of(defs, schema)
        if kind == "any":
            return FieldType("any")
        if isinstance(step, dict):  # `as json`: the text there, parsed; the schema ends
            if kind not in ("string", "any"):
                return PathProblem(index, f"`as {step.get('parse')}` reads text, and this field is {_an(kind)}")
            return FieldType("any")
        if isinstance(step, (list, int)) and not isinstance(step, bool):
            if kind != "list":
                what = "a selection" if isinstance(step, list) else "an index"
                return PathProblem(index, f"{what} reads a list, and this field is {_an(kind)}")
            item = _items(defs, schema)
            if item is None:
                return FieldType("any")
            if isinstance(step, list):
                probe = _walk(defs, item, str(step[0]).split("."))
                if isinstance(probe, PathProblem):
                    names = _names(defs, item)
                    hint = difflib.get_close_matches(str(step[0]), names, n=1)
                    return PathProblem(index, f"the items of this list have no field `{step[0]}` to select by",
                                       f"did you mean `{hint[0]}`?" if hint else "", names)
            schema = item
            continue
        if kind == "list":  # a key through a list: every item (the first that holds the rest is read)
            item = _items(defs, schema)
            if item is None:
                return FieldType("any")
            schema, kind = item, _kind_of(defs, item)
            if kind == "any":
                return FieldType("any")
        if kind != "object":
            help = "quote a key that holds dots: `data[\"a.json\"]`, and read JSON in it with `as json`" \
                if kind == "string" else ""
            return PathProblem(index, f"`{step}` goes into {_an(kind)}", help)
        misspelt = _misspelt_key(defs, schema, str(step))
        if misspelt is not None:
            return PathProblem(index, f"`{step}` is not a {misspelt[0]}", f"did you mean `{misspelt[1]}`?",
                               list(misspelt[2]))
        child = _child(defs, schema, str(step))
        if child is None:
            names = _names(defs, schema)
            hint = difflib.get_close_matches(str(step), names, n=1)
            return PathProblem(index, f"no field `{step}` here", f"did you mean `{hint[0]}`?" if hint else "", names)
        schema = child
    return FieldType(_kind_of(defs, schema))


# Maps whose keys the schema leaves open but Kubernetes names by convention: a key one typing slip away from
# one of these (and not itself one) is refused with the name meant; any other key (an extended resource
# `example.com/gpu`, a label) passes. By the map's value type: a ResourceList's values are quantities.
_CONVENTIONAL_KEYS = {
    _QUANTITY_REF: ("resource name", ("cpu", "memory", "ephemeral-storage", "storage", "pods", "services",
                                      "persistentvolumeclaims", "configmaps", "secrets", "replicationcontrollers",
                                      "resourcequotas", "services.loadbalancers", "services.nodeports",
                                      "requests.cpu", "requests.memory", "requests.storage", "limits.cpu",
                                      "limits.memory", "requests.ephemeral-storage", "limits.ephemeral-storage")),
}


def _misspelt_key(defs: _Defs, schema, key: str) -> tuple[str, str, tuple[str, ...]] | None:
    """(what the map's keys are, the key meant, the conventional keys) when `key` reads as a slip of one."""
    resolved, _ = _resolve(defs, schema)
    extra = resolved.get("additionalProperties")
    if resolved.get("properties") or not isinstance(extra, dict):
        return None
    _, value_type = _resolve(defs, extra)
    known = _CONVENTIONAL_KEYS.get(value_type or "")
    if known is None or key in known[1] or "/" in key or key.startswith("hugepages-"):
        return None
    hint = difflib.get_close_matches(key, known[1], n=1, cutoff=0.75)
    return (known[0], hint[0], known[1]) if hint else None


def _an(kind: str) -> str:
    return {"string": "text", "integer": "an integer", "number": "a number", "boolean": "a boolean",
            "quantity": "a quantity", "int-or-string": "an integer or text", "object": "an object",
            "list": "a list"}.get(kind, "a value")


# ---- regular expressions ----------------------------------------------------------------------------------


def regex_problem(pattern: str) -> str | None:
    """Why `pattern` is refused as a `matches` operand; None when it is accepted."""
    if len(pattern) > MAX_REGEX_LENGTH:
        return f"the expression is {len(pattern)} characters long; the limit is {MAX_REGEX_LENGTH}"
    try:
        from re import _parser as sre_parse  # Python 3.11+
    except ImportError:  # pragma: no cover
        import sre_parse  # type: ignore[no-redef]
    try:
        tree = sre_parse.parse(pattern)
    except re.error as exc:
        return f"not a regular expression: {exc}"
    return _regex_walk(tree)


def _regex_walk(items) -> str | None:
    c = sre_constants()
    for op, arg in items:
        if op in (c.GROUPREF, getattr(c, "GROUPREF_EXISTS", None), getattr(c, "GROUPREF_IGNORE", None)):
            return "backreferences and conditionals are not in RE2: they are not accepted"
        if op in (c.ASSERT, c.ASSERT_NOT):
            return "lookahead and lookbehind are not in RE2: they are not accepted"
        if op in (getattr(c, "ATOMIC_GROUP", None), getattr(c, "POSSESSIVE_REPEAT", None)):
            return "atomic groups and possessive repetition are not in RE2: they are not accepted"
        if op in (c.MAX_REPEAT, c.MIN_REPEAT):
            low, high, sub = arg
            if low > MAX_REPEAT_COUNT or (high != c.MAXREPEAT and high > MAX_REPEAT_COUNT):
                return f"a repetition count above {MAX_REPEAT_COUNT} is not accepted (RE2's limit)"
            if (high == c.MAXREPEAT or high > 1) and _unbounded(sub, c):
                return ("an unbounded repetition inside a repetition (`(a+)+`, `(a*b)*`) can take exponential "
                        "time here: write it without nesting")
            problem = _regex_walk(sub)
        elif op == c.SUBPATTERN:
            problem = _regex_walk(arg[-1])
        elif op == c.BRANCH:
            problem = next((p for p in map(_regex_walk, arg[1]) if p), None)
        else:
            problem = None
        if problem:
            return problem
    return None


def _unbounded(items, c) -> bool:
    for op, arg in items:
        if op in (c.MAX_REPEAT, c.MIN_REPEAT) and arg[1] == c.MAXREPEAT:
            return True
        if op in (c.MAX_REPEAT, c.MIN_REPEAT) and _unbounded(arg[2], c):
            return True
        if op == c.SUBPATTERN and _unbounded(arg[-1], c):
            return True
        if op == c.BRANCH and any(_unbounded(b, c) for b in arg[1]):
            return True
    return False


def sre_constants():
    try:
        from re import _constants  # Python 3.11+
        return _constants
    except ImportError:  # pragma: no cover
        import sre_constants as constants
        return constants
