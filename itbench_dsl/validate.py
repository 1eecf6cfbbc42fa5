"""Validation of the manifests the compiler emits.

Every object is checked against the JSON Schema vendored for its ``apiVersion``/``kind``
(``itbench_dsl/schemas/``, see ``SOURCES.md`` there): Kubernetes v1.33 built-in kinds in their
strict form (unknown fields are errors, as with ``kubectl apply``'s strict field validation), the
Chaos Mesh ``chaos-mesh.org/v1alpha1`` kinds, Kyverno's policies, Istio's PeerAuthentication and
AuthorizationPolicy, the Gateway API Gateway, and the engine kinds (PrometheusRule, Chainsaw's Test,
Argo's Workflow and WorkflowTemplate). A kind with no vendored schema is an issue, never silently accepted.

On top of the schemas, the checks the API server performs in code and that schemas cannot
express (each issue names its ``rule``):

* ``selector-mismatch``: a Deployment/StatefulSet/DaemonSet/Job (and a CronJob's job template)
  selector must select the pod template's labels (``matchLabels`` and ``matchExpressions``);
  an apps/v1 selector may not be empty.
* ``missing-field``: ``metadata.name`` (and ``apiVersion``/``kind``) must be present.
* ``dns1123-name``: ``metadata.name`` is a DNS-1123 subdomain for most kinds, a DNS-1123 label
  for Namespace, an RFC-1035 label for Service (the API server requires a leading letter), a
  path segment for RBAC kinds (``system:aggregate-to-view`` is a valid ClusterRole name); a
  CronJob name is at most 52 characters; ``metadata.namespace``, container and volume names and
  Chaos Mesh selector namespaces are DNS-1123 labels (the API server does not check the last: a
  selector namespace that is not one selects no pod).
* ``label-syntax``: label keys/values, annotation keys (and the 256 KiB annotation total), label
  selectors, Service selectors and Chaos Mesh label/annotation selectors (Chaos Mesh, not the API
  server, parses those when it selects pods: chaos-mesh pkg/selector/generic/label/selector.go,
  metav1.LabelSelectorAsSelector; the experiment then fails).
* ``port-range``: container ports, probe and lifecycle handler ports, Service ``port``/
  ``targetPort`` (when an integer)/``nodePort``, NetworkPolicy ports: 1..65535. ``hostPort``,
  ``targetPort`` and ``nodePort`` may also be 0, which the API server reads as "unset" (targetPort
  then defaults to port; upstream charts emit ``targetPort: 0``).
* ``security-context``: ``allowPrivilegeEscalation: false`` beside ``privileged: true`` or an added
  ``CAP_SYS_ADMIN`` in one container's securityContext (ValidateSecurityContext).
* ``duplicate``: a port name twice in one container (validateContainerPorts; the same
  containerPort/protocol twice is only a warning upstream, so it is not checked), a volume name
  twice in a pod (ValidateVolumes), a mountPath twice in a container (ValidateVolumeMounts), a
  protocol/hostIP/hostPort twice among the regular containers or within one init container
  (checkHostPortConflicts).
* ``volume-source``: a volume with several sources (validateVolumeSource), or with none (the server's
  defaulting makes that an emptyDir: the compiler's own rule).
* ``volume-mount``: a volumeMount naming no volume of the pod (ValidateVolumeMounts); a
  StatefulSet's volumeClaimTemplates count as volumes, as its controller adds them to each pod.
* ``resource-limits``: a container's request above its limit, compared by value (``500m`` < ``1``,
  ``512Mi`` < ``1Gi``); for resources that cannot be overcommitted (hugepages, extended resources)
  a request needs an equal limit (validateResourceRequirements).
* ``handler``: a probe (exec, httpGet, tcpSocket, grpc) or lifecycle hook (exec, httpGet,
  tcpSocket, sleep) without exactly one handler (validateHandler).
* ``env-source``: an environment variable's ``valueFrom`` beside a non-empty ``value``, or naming
  no source or several (validateEnvVarValueFrom).
* ``schema``: schema violations, plus duplicate container names across initContainers, containers
  and ephemeralContainers (validateContainers) and invalid container port names
  (validateContainerPorts). Also a duplicate environment variable name in a container: the API
  server accepts it with a warning only (``pkg/api/pod/warnings.go``, "hides previous definition"),
  the later value winning; it is refused here as the compiler's own rule, since no scenario means it.

The function names are those of kubernetes ``pkg/apis/core/validation/validation.go`` (v1.33, the
version of the vendored schemas), whose rules these mirror; the name rules are apimachinery's
``pkg/api/validation`` (NameIsDNSSubdomain, NameIsDNSLabel, NameIsDNS1035Label) as
ValidateNamespaceName, ValidateServiceName and rbac's ValidateRBACName (path segment) pick them,
and the CronJob bound is ``pkg/apis/batch/validation`` ValidateCronJobCreate (63 - 11). The
rules Kubernetes enforces are listed with an offending object each in ``tests/support/apiserver_rules.py``,
which tests/backends/test_apiserver_rules.py checks here and, given a cluster, against its API server. Every pod spec the compiler emits is checked: a Pod's, and the pod template
of a Deployment, StatefulSet, DaemonSet, Job and CronJob (the API server validates a StatefulSet's
template only when its controller creates the pods, which it then refuses).

Speed: one validator per kind, built on first use. Schema files are parsed once per process and
their ``$ref``s are replaced by the (shared, not copied) definitions, which makes ``jsonschema``
about 1.5x faster than resolving references while validating. Results are memoized by a hash of
the object's canonical JSON, so validating an identical object again is a dictionary lookup.
"""

from __future__ import annotations

import difflib
import functools
import hashlib
import json
import re
from dataclasses import dataclass
from fractions import Fraction
from importlib import resources

from . import cache
from .memo import IdentityMemo
from typing import TYPE_CHECKING, Any, Callable, Generator, Iterable, Iterator

# jsonschema is imported where a validator is built: a check whose objects were validated before reads their
# results from disk (validate_all) and never needs it
if TYPE_CHECKING:
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import ValidationError

__all__ = ["SchemaIssue", "validate_all", "validate_object", "known_kinds"]


@dataclass(frozen=True)
class SchemaIssue:
    path: str  # JSON path into the object, e.g. "$.spec.template.spec.containers[0].ports[0].containerPort"
    message: str  # one clear sentence
    # "schema", "unknown-kind", "selector-mismatch", "dns1123-name", "label-syntax", "port-range", "missing-field",
    # "security-context", "duplicate", "volume-source", "volume-mount", "resource-limits", "handler" or "env-source"
    rule: str


Path = tuple[str | int, ...]
_Found = tuple[Path, str, str]  # (path parts, rule, message): issues before formatting


# --------------------------------------------------------------------------------------------
# Public API
# --------------------------------------------------------------------------------------------

def validate_object(obj: dict) -> list[SchemaIssue]:
    """Return every issue of one manifest (an empty list when it is valid), sorted by path.

    ``obj`` is the manifest as plain JSON data (dicts with string keys, lists, scalars).
    """
    if isinstance(obj, dict) and obj.get("apiVersion") == "v1" and obj.get("kind") in _NOT_MEMOIZED:
        return list(_validate(obj))
    try:
        canonical = json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError):  # not JSON data (e.g. a datetime from YAML): no memo
        return list(_validate(obj))
    digest = hashlib.blake2b(canonical.encode(), digest_size=16).digest()
    cached = _MEMO.get(digest)
    if cached is None:
        cached = _validate(obj)
        if len(_MEMO) >= _MEMO_LIMIT:
            del _MEMO[next(iter(_MEMO))]  # oldest first
        _MEMO[digest] = cached
    return list(cached)


def validate_all(objects: list, validate: Callable[[Any], list[SchemaIssue]] = validate_object) \
        -> list[list[SchemaIssue]]:
    """`validate(obj)` (validate_object, or a memo of it) of each object, in order. A process that has built no
    validator yet reads the results of the same list of objects from disk when it was validated before
    (cache.py), and keeps them there otherwise: importing jsonschema and building validators costs more than a
    check of one file spends on everything else it validates. Once a validator is built, validating what the
    in-process memos lack costs less than an entry. The key is each object's canonical JSON, the package's
    files (this module and the schemas among them) and jsonschema's."""
    where = _entry(objects) if _validator.cache_info().currsize == 0 else None
    found = cache.load(where)
    if isinstance(found, list) and len(found) == len(objects) and all(isinstance(one, tuple) for one in found):
        return [list(one) for one in found]
    results = [validate(obj) for obj in objects]
    cache.store(where, [tuple(one) for one in results], keep=VALIDATION_ENTRIES)
    return results


# results of lists of objects kept on disk: one per scenario of a library and its variants being edited
VALIDATION_ENTRIES = 4096


def _canonical_digest(obj) -> bytes | None:
    try:
        canonical = json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError):  # not JSON data: not kept
        return None
    return hashlib.blake2b(canonical.encode("utf-8", "surrogatepass"), digest_size=16).digest()


# shared application objects are digested once per process (memo.py)
_digest_memo = IdentityMemo(_canonical_digest)


def _entry(objects: list):
    """Where the results of `objects` are kept (None when the cache is off or an object is not JSON data)."""
    if cache.folder() is None:
        return None
    digests = [_digest_memo(obj) for obj in objects]
    if None in digests:
        return None
    return cache.path_for("valid", cache.package_digest(), cache.module_stamp("jsonschema"), b"".join(digests))


def known_kinds() -> list[str]:
    """The ``<apiVersion>/<kind>`` keys that have a vendored schema, e.g. ``apps/v1/Deployment``."""
    return sorted(_kinds())


# Results by blake2b(canonical JSON). Bounded so that a long-running process (a watch mode, a
# test session) does not grow without limit; a scenario has ~80 objects.
_MEMO: dict[bytes, tuple[SchemaIssue, ...]] = {}
_MEMO_LIMIT = 8192
# Validating these costs a few nodes (a map of strings), while their payload (whole dashboards,
# config files: 200 KB for one otel-demo ConfigMap) makes the canonical JSON and its hash ~10x
# dearer than the validation it would save.
_NOT_MEMOIZED = ("ConfigMap", "Secret")  # of apiVersion v1


def _validate(obj: Any) -> tuple[SchemaIssue, ...]:
    found: set[_Found] = set()
    if not isinstance(obj, dict):
        found.add(((), "schema", f"A manifest must be a mapping, not {_json_type(obj)}."))
    else:
        key = _kind_key(obj, found)
        if key is not None:
            found.update(_schema_issues(_validator(key), obj))
            found.update(_rule_issues(key, obj))
    ordered = sorted(found, key=lambda item: (_path_sort_key(item[0]), item[1], item[2]))
    return tuple(SchemaIssue(_format_path(path), message, rule) for path, rule, message in ordered)


def _kind_key(obj: dict, found: set[_Found]) -> str | None:
    """The schema key of ``obj``, or None after recording why there is none."""
    api_version, kind = obj.get("apiVersion"), obj.get("kind")
    for field, value in (("apiVersion", api_version), ("kind", kind)):
        if not isinstance(value, str) or not value:
            found.add(((field,), "missing-field", f"Every manifest needs a non-empty string `{field}`."))
    if not isinstance(api_version, str) or not isinstance(kind, str) or not api_version or not kind:
        return None
    key = f"{api_version}/{kind}"
    if key in _kinds():
        return key
    same_kind = [k.rsplit("/", 1)[0] for k in _kinds() if k.rsplit("/", 1)[1] == kind]
    if same_kind:
        found.add((("apiVersion",), "unknown-kind",
                   f"{kind} has a vendored schema only for apiVersion {_or(same_kind)}, not {api_version!r}."))
    else:
        close = difflib.get_close_matches(key, _kinds(), n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else "; see validate.known_kinds()"
        found.add((("kind",), "unknown-kind", f"No vendored schema for {key!r}{hint}."))
    return None


# --------------------------------------------------------------------------------------------
# Schemas and validators
# --------------------------------------------------------------------------------------------

_SCHEMA_FILES = ("kubernetes/v1.33-strict.json", "chaos-mesh/v1alpha1.json", "kyverno/v1.json", "istio/v1.json",
                 "gateway-api/v1.json",
                 # the alert rules of a bundle, and what `--target chainsaw|argo` and `itbench plan` write
                 "engines/prometheus-operator-v1.json", "engines/chainsaw-v1alpha1.json", "engines/argo-v1alpha1.json")
_K8S, _CHAOS, _KYVERNO, _ISTIO, _GATEWAY_API = 0, 1, 2, 3, 4
_OBJECT_META = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"


@functools.lru_cache(maxsize=None)
def _bundle(index: int) -> dict[str, Any]:
    """One vendored schema file, parsed once per process from the package data."""
    path = resources.files("itbench_dsl").joinpath("schemas", *_SCHEMA_FILES[index].split("/"))
    return json.loads(path.read_text(encoding="utf-8"))


# what the API server refuses in a value whatever the object's shape (a CRD schema's value constraints)
VALUE_RULES = ("enum", "maxLength", "minLength", "pattern", "minimum", "maximum")


@functools.lru_cache(maxsize=None)
def value_constraints(key: str, under: str = "spec") -> tuple[tuple[str, str, Any], ...]:
    """The value constraints (VALUE_RULES) of the vendored schema of kind `key` ("kyverno.io/v1/ClusterPolicy")
    under its field `under`, each (dotted path, `*` for any list item or map key; rule; value): a rule name of
    at most 63 characters, a rule-level `failureAction` of `Audit` or `Enforce`. A recursive definition is
    walked once."""
    index = _kinds()[key]
    defs = _bundle(index)["$defs"]
    out = []

    def walk(node, path, active):
        if not isinstance(node, dict):
            return
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/"):
            name = ref[len("#/$defs/"):]
            if name not in active:
                walk(defs[name], path, active | {name})
            return
        out.extend((".".join(path), rule, node[rule]) for rule in VALUE_RULES if rule in node)
        for field, sub in sorted((node.get("properties") or {}).items()):
            walk(sub, path + (field,), active)
        for field in ("items", "additionalProperties"):
            if isinstance(node.get(field), dict):
                walk(node[field], path + ("*",), active)

    walk(_bundle(index)["kinds"][key].get("properties", {}).get(under), (under,), frozenset())
    return tuple(out)


@functools.lru_cache(maxsize=None)
def _kinds() -> dict[str, int]:
    """Schema key -> index of the file that holds it."""
    return {key: index for index in range(len(_SCHEMA_FILES)) for key in _bundle(index)["kinds"]}


@functools.lru_cache(maxsize=None)
def _inliner(index: int) -> _RefInliner:
    return _RefInliner(_bundle(index)["$defs"])


@functools.lru_cache(maxsize=None)
def _validator(key: str) -> Draft202012Validator:
    from jsonschema import Draft202012Validator

    index = _kinds()[key]
    bundle = _bundle(index)
    schema = _inliner(index)(bundle["kinds"][key])
    if index != _K8S:
        # A CRD's schema leaves `metadata` open: the API server validates the metadata of every
        # object, custom resources included, as ObjectMeta. Do the same with the Kubernetes one.
        object_meta = _inliner(_K8S)(_bundle(_K8S)["$defs"][_OBJECT_META])
        schema["properties"] = {**schema["properties"], "metadata": object_meta}
    # `$defs` stays reachable from the root for any reference left in place (recursive ones).
    return Draft202012Validator({**schema, "$defs": bundle["$defs"]})


class _RefInliner:
    """Replaces each local ``{"$ref": "#/$defs/X"}`` by the definition X itself.

    Definitions are resolved once and shared, not copied, so the result is a DAG the size of the
    file. A reference inside its own definition (recursion) is left as a ``$ref``.
    """

    _MAPS = ("properties", "patternProperties", "$defs")
    _SINGLE = ("items", "additionalProperties", "not")
    _LISTS = ("allOf", "anyOf", "oneOf")

    def __init__(self, defs: dict[str, Any]) -> None:
        self._defs = defs
        self._resolved: dict[str, Any] = {}
        self._active: set[str] = set()

    def __call__(self, schema: Any) -> Any:
        if not isinstance(schema, dict):
            return schema
        ref = schema.get("$ref")
        # Inline only when the siblings of $ref are annotations that constrain nothing.
        if isinstance(ref, str) and ref.startswith("#/$defs/") and all(
            k in ("$ref", "description") or k.startswith("x-kubernetes-") for k in schema
        ):
            name = ref[len("#/$defs/"):]
            if name in self._resolved:
                return self._resolved[name]
            if name in self._active:
                return schema
            self._active.add(name)
            try:
                resolved = self(self._defs[name])
            finally:
                self._active.discard(name)
            self._resolved[name] = resolved
            return resolved
        out: dict[str, Any] = {}
        for key, value in schema.items():
            if key in self._MAPS:
                out[key] = {name: self(sub) for name, sub in value.items()}
            elif key in self._SINGLE:
                out[key] = self(value)
            elif key in self._LISTS:
                out[key] = [self(sub) for sub in value]
            else:
                out[key] = value
        return out


# --------------------------------------------------------------------------------------------
# Schema errors -> short messages
# --------------------------------------------------------------------------------------------

def _schema_issues(validator: Draft202012Validator, obj: dict) -> Iterator[_Found]:
    for error in validator.iter_errors(obj):
        for path, message in _describe(error):
            yield path, "schema", message


def _describe(error: ValidationError) -> Iterator[tuple[Path, str]]:
    path: Path = tuple(error.absolute_path)
    keyword, expected, value = error.validator, error.validator_value, error.instance

    if keyword == "additionalProperties" and isinstance(value, dict):
        allowed = sorted(error.schema.get("properties", {}))
        patterns = list(error.schema.get("patternProperties", {}))
        for field in sorted(value, key=str):
            if field in allowed or any(re.search(p, str(field)) for p in patterns):
                continue
            close = difflib.get_close_matches(str(field), allowed, n=1)
            if close:
                hint = f"; did you mean {close[0]!r}?"
            elif allowed:
                hint = f"; allowed here: {', '.join(allowed[:15])}{', ...' if len(allowed) > 15 else ''}."
            else:
                hint = "."
            yield path + (field,), f"Unknown field {field!r}{hint}"
    elif keyword == "required" and isinstance(value, dict):
        for field in expected:
            if field not in value:
                yield path + (field,), f"Required field {field!r} is missing."
    elif keyword == "enum":
        yield path, f"Must be one of {_or([_short(v) for v in expected])}, not {_short(value)}."
    elif keyword == "type":
        types = [expected] if isinstance(expected, str) else list(expected)
        yield path, f"Must be of type {_or(types)}, not {_got(value)}."
    elif keyword in ("oneOf", "anyOf"):
        alternatives = [s.get("type") for s in expected if isinstance(s, dict) and set(s) == {"type"}]
        if len(alternatives) == len(expected):  # e.g. IntOrString: a choice of plain types
            types = sorted({t for a in alternatives for t in ([a] if isinstance(a, str) else a)} - {"null"})
            yield path, f"Must be of type {_or(types)}, not {_got(value)}."
        elif error.context:
            from jsonschema.exceptions import best_match

            yield from _describe(best_match(error.context))
        else:
            yield path, "Matches more than one of the allowed alternatives."
    elif keyword == "pattern":
        yield path, f"{_short(value)} does not match the pattern {expected}."
    elif keyword in _BOUNDS:
        yield path, f"Must be {_BOUNDS[keyword]} {expected}, not {_short(value)}."
    elif keyword in _SIZES:
        what, unit = _SIZES[keyword]
        yield path, f"Must have {what} {expected} {unit}."
    else:
        yield path, error.message if len(error.message) <= 160 else error.message[:157] + "..."


_BOUNDS = {"minimum": ">=", "maximum": "<=", "exclusiveMinimum": ">", "exclusiveMaximum": "<"}
_SIZES = {
    "minItems": ("at least", "item(s)"),
    "maxItems": ("at most", "item(s)"),
    "minLength": ("at least", "character(s)"),
    "maxLength": ("at most", "character(s)"),
    "minProperties": ("at least", "field(s)"),
    "maxProperties": ("at most", "field(s)"),
}


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def _got(value: Any) -> str:
    """What was found instead: 'string "8080"', 'null', 'an object'."""
    if value is None:
        return "null"
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "an array"
    return f"{_json_type(value)} {_short(value)}"


def _short(value: Any) -> str:
    if isinstance(value, (dict, list)):
        return "{...}" if isinstance(value, dict) else "[...]"
    text = json.dumps(value) if value is None or isinstance(value, (bool, int, float, str)) else repr(value)
    return text if len(text) <= 60 else text[:57] + '..."'


def _or(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " or " + items[-1]


# --------------------------------------------------------------------------------------------
# JSON paths
# --------------------------------------------------------------------------------------------

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _format_path(path: Path) -> str:
    parts = ["$"]
    for part in path:
        if isinstance(part, int) and not isinstance(part, bool):
            parts.append(f"[{part}]")
        elif isinstance(part, str) and _IDENTIFIER.fullmatch(part):
            parts.append(f".{part}")
        else:  # label keys such as app.kubernetes.io/name (or a non-string key from YAML)
            parts.append("['" + str(part).replace("\\", "\\\\").replace("'", "\\'") + "']")
    return "".join(parts)


def _path_sort_key(path: Path) -> tuple:
    # Numeric indices in numeric order ([2] before [10]).
    return tuple((0, part, "") if isinstance(part, int) else (1, 0, str(part)) for part in path)


# --------------------------------------------------------------------------------------------
# Own rules
# --------------------------------------------------------------------------------------------

_DNS1123_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
_DNS1123_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
_DNS1035_LABEL = re.compile(r"[a-z]([-a-z0-9]*[a-z0-9])?")
_QUALIFIED_NAME = re.compile(r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]")  # label key name part, label value
_IANA_SVC_NAME = re.compile(r"[a-z0-9]([a-z0-9-]*[a-z0-9])?")

# Where the pod template sits, per workload kind.
_POD_TEMPLATES: dict[str, Path] = {
    "apps/v1/Deployment": ("spec", "template"),
    "apps/v1/StatefulSet": ("spec", "template"),
    "apps/v1/DaemonSet": ("spec", "template"),
    "batch/v1/Job": ("spec", "template"),
    "batch/v1/CronJob": ("spec", "jobTemplate", "spec", "template"),
}
# apps/v1 requires a non-empty selector; a Job's is optional (generated when absent).
_SELECTOR_REQUIRED = {"apps/v1/Deployment", "apps/v1/StatefulSet", "apps/v1/DaemonSet"}
_RBAC_KINDS = {
    f"rbac.authorization.k8s.io/v1/{kind}" for kind in ("Role", "RoleBinding", "ClusterRole", "ClusterRoleBinding")
}
_CONTAINER_LISTS = ("initContainers", "containers", "ephemeralContainers")
_PROBES = ("livenessProbe", "readinessProbe", "startupProbe")
# Handler kinds in the order the API server counts them (validateHandler).
_PROBE_HANDLERS = ("exec", "httpGet", "tcpSocket", "grpc")
_HOOK_HANDLERS = ("exec", "httpGet", "tcpSocket", "sleep")
_ENV_SOURCES = ("fieldRef", "resourceFieldRef", "configMapKeyRef", "secretKeyRef")
_ANNOTATIONS_MAX_BYTES = 256 * 1024


def _get(obj: Any, path: Path) -> Any:
    for part in path:
        if isinstance(part, int):
            if not isinstance(obj, list) or part >= len(obj):
                return None
        elif not isinstance(obj, dict):
            return None
        obj = obj[part] if isinstance(part, int) else obj.get(part)
    return obj


def _dict_items(value: Any) -> Iterable[tuple[Any, Any]]:
    return value.items() if isinstance(value, dict) else ()


def _list_items(value: Any) -> Iterable[tuple[int, Any]]:
    return enumerate(value) if isinstance(value, list) else ()


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _rule_issues(key: str, obj: dict) -> Iterator[_Found]:
    yield from _metadata_issues(key, obj)
    template = _POD_TEMPLATES.get(key)
    if template is not None:
        yield from _labels_and_annotations(_get(obj, template + ("metadata",)), template + ("metadata",))
        yield from _selector_issues(key, obj, template[:-1])
        claims = () if key != "apps/v1/StatefulSet" else [
            _get(claim, ("metadata", "name")) for _, claim in _list_items(_get(obj, ("spec", "volumeClaimTemplates")))]
        yield from _pod_spec_issues(_get(obj, template + ("spec",)), template + ("spec",), claims)
    if key == "batch/v1/CronJob":
        job_metadata: Path = ("spec", "jobTemplate", "metadata")
        yield from _labels_and_annotations(_get(obj, job_metadata), job_metadata)
    elif key == "apps/v1/StatefulSet":
        for i, claim in _list_items(_get(obj, ("spec", "volumeClaimTemplates"))):
            claim_metadata: Path = ("spec", "volumeClaimTemplates", i, "metadata")
            yield from _labels_and_annotations(_get(claim, ("metadata",)), claim_metadata)
    elif key == "v1/Pod":
        yield from _pod_spec_issues(obj.get("spec"), ("spec",))
    elif key == "v1/Service":
        yield from _service_issues(obj.get("spec"))
    elif key == "networking.k8s.io/v1/NetworkPolicy":
        yield from _network_policy_issues(obj.get("spec"))
    elif key == "policy/v1/PodDisruptionBudget":
        yield from _selector_syntax(_get(obj, ("spec", "selector")), ("spec", "selector"))
    elif _kinds()[key] == _CHAOS:
        yield from _chaos_selector_issues(obj.get("spec"), ("spec",))


# -- metadata --------------------------------------------------------------------------------

def _metadata_issues(key: str, obj: dict) -> Iterator[_Found]:
    metadata = obj.get("metadata")
    name = metadata.get("name") if isinstance(metadata, dict) else None
    if name is None or name == "":
        yield ("metadata", "name"), "missing-field", "metadata.name is required."
    elif isinstance(name, str):
        problem = _name_problem(key, name)
        if problem:
            yield ("metadata", "name"), "dns1123-name", f"Name {name!r} {problem}."
    namespace = metadata.get("namespace") if isinstance(metadata, dict) else None
    if isinstance(namespace, str):
        problem = _dns_label_problem(namespace)
        if problem:
            yield ("metadata", "namespace"), "dns1123-name", f"Namespace {namespace!r} {problem}."
    yield from _labels_and_annotations(metadata, ("metadata",))


def _name_problem(key: str, name: str) -> str | None:
    if key in _RBAC_KINDS:
        # RBAC names are only required to be usable as a URL path segment.
        if name in (".", "..") or "/" in name or "%" in name:
            return "must not be '.' or '..' nor contain '/' or '%'"
        return None
    if key == "v1/Service":
        # Service names become DNS labels of the cluster domain. Kubernetes before v1.34 refuses one that does not
        # start with a letter (NameIsDNS1035Label); later servers relax it (RelaxedServiceNameValidation, checked
        # against a v1.37 server in tests/backends/test_apiserver_rules.py): keep to the rule every server accepts.
        if len(name) > 63 or not _DNS1035_LABEL.fullmatch(name):
            return ("is not a Service name every Kubernetes accepts (RFC 1035 label: at most 63 lowercase "
                    "letters, digits or '-', starting with a letter and ending with a letter or digit; "
                    "servers before v1.34 refuse any other)")
        return None
    if key == "v1/Namespace":
        return _dns_label_problem(name)
    if key == "batch/v1/CronJob" and len(name) > 52:
        return "is longer than 52 characters (the controller appends a suffix to name its Jobs)"
    return _dns_subdomain_problem(name)


def _dns_label_problem(value: str) -> str | None:
    if len(value) <= 63 and _DNS1123_LABEL.fullmatch(value):
        return None
    return ("is not a DNS-1123 label (at most 63 lowercase letters, digits or '-', "
            "starting and ending with a letter or digit)")


def _dns_subdomain_problem(value: str) -> str | None:
    if len(value) <= 253 and _DNS1123_SUBDOMAIN.fullmatch(value):
        return None
    return ("is not a DNS-1123 subdomain (at most 253 lowercase letters, digits, '-' or '.', "
            "each dot-separated part starting and ending with a letter or digit)")


# -- labels, annotations, selectors ------------------------------------------------------------

def _labels_and_annotations(metadata: Any, path: Path) -> Iterator[_Found]:
    yield from _label_map(_get(metadata, ("labels",)), path + ("labels",))
    annotations = _get(metadata, ("annotations",))
    total = 0
    for key, value in _dict_items(annotations):
        problem = _label_key_problem(key)
        if problem:
            yield path + ("annotations", key), "label-syntax", f"Annotation key {key!r} {problem}."
        total += len(str(key)) + len(value if isinstance(value, str) else "")
    if total > _ANNOTATIONS_MAX_BYTES:
        yield path + ("annotations",), "label-syntax", f"Annotations total {total} bytes, over the 256 KiB limit."


def _label_map(labels: Any, path: Path, what: str = "Label") -> Iterator[_Found]:
    for key, value in _dict_items(labels):
        problem = _label_key_problem(key)
        if problem:
            yield path + (key,), "label-syntax", f"{what} key {key!r} {problem}."
        if isinstance(value, str):
            problem = _label_value_problem(value)
            if problem:
                yield path + (key,), "label-syntax", f"{what} value {value!r} {problem}."


def _label_key_problem(key: Any) -> str | None:
    """Kubernetes "qualified name": [DNS-1123 subdomain prefix "/"] name."""
    if not isinstance(key, str):
        return "must be a string"
    prefix, slash, name = key.rpartition("/")
    if slash:
        if not prefix or len(prefix) > 253 or not _DNS1123_SUBDOMAIN.fullmatch(prefix):
            return "has an invalid prefix (it must be a DNS-1123 subdomain, e.g. example.com/)"
    if not name or len(name) > 63 or not _QUALIFIED_NAME.fullmatch(name):
        return ("has an invalid name part (at most 63 characters: letters, digits, '-', '_' or '.', "
                "starting and ending with a letter or digit)")
    return None


def _label_value_problem(value: str) -> str | None:
    if value == "" or (len(value) <= 63 and _QUALIFIED_NAME.fullmatch(value)):
        return None
    return ("is invalid (empty, or at most 63 characters: letters, digits, '-', '_' or '.', "
            "starting and ending with a letter or digit)")


def _selector_syntax(selector: Any, path: Path) -> Iterator[_Found]:
    """Syntax of a metav1.LabelSelector (matchLabels + matchExpressions)."""
    yield from _label_map(_get(selector, ("matchLabels",)), path + ("matchLabels",), "Selector label")
    for i, expression in _list_items(_get(selector, ("matchExpressions",))):
        key = _get(expression, ("key",))
        if isinstance(key, str):
            problem = _label_key_problem(key)
            if problem:
                yield path + ("matchExpressions", i, "key"), "label-syntax", f"Selector key {key!r} {problem}."
        if _get(expression, ("operator",)) in ("In", "NotIn"):
            for j, value in _list_items(_get(expression, ("values",))):
                if isinstance(value, str) and _label_value_problem(value):
                    yield (path + ("matchExpressions", i, "values", j), "label-syntax",
                           f"Selector value {value!r} {_label_value_problem(value)}.")


def _selector_issues(key: str, obj: dict, spec_path: Path) -> Iterator[_Found]:
    """The workload's selector must select the labels of its own pod template."""
    kind = key.rsplit("/", 1)[1]
    selector_path = spec_path + ("selector",)
    selector = _get(obj, selector_path)
    if selector is None and key not in _SELECTOR_REQUIRED:
        return
    if not isinstance(selector, dict):
        return  # missing or mistyped: reported by the schema
    yield from _selector_syntax(selector, selector_path)
    match_labels = selector.get("matchLabels") or {}
    expressions = selector.get("matchExpressions") or []
    if not match_labels and not expressions:
        if key in _SELECTOR_REQUIRED:
            yield selector_path, "selector-mismatch", f"A {kind} selector must not be empty."
        return
    labels = _get(obj, spec_path + ("template", "metadata", "labels"))
    labels = labels if isinstance(labels, dict) else {}
    for label, value in _dict_items(match_labels):
        if label not in labels:
            yield (selector_path + ("matchLabels", label), "selector-mismatch",
                   f"Selector label {label}={value} is not among the pod template labels, "
                   f"so the {kind} would not select its own pods.")
        elif labels[label] != value:
            yield (selector_path + ("matchLabels", label), "selector-mismatch",
                   f"Selector label {label}={value} differs from the pod template label {label}={labels[label]}.")
    for i, expression in _list_items(expressions):
        if isinstance(expression, dict) and not _expression_matches(expression, labels):
            yield (selector_path + ("matchExpressions", i), "selector-mismatch",
                   f"Selector expression {expression.get('key')} {expression.get('operator')} "
                   f"{expression.get('values', [])} does not match the pod template labels.")


def _expression_matches(expression: dict, labels: dict) -> bool:
    key, operator = expression.get("key"), expression.get("operator")
    values = expression.get("values") or []
    if not isinstance(key, str) or not isinstance(values, list):
        return True  # mistyped: reported by the schema
    if operator == "In":
        return key in labels and labels[key] in values
    if operator == "NotIn":
        return key not in labels or labels[key] not in values
    if operator == "Exists":
        return key in labels
    if operator == "DoesNotExist":
        return key not in labels
    return True  # unknown operator: not ours to judge here


def _chaos_selector_issues(value: Any, path: Path) -> Iterator[_Found]:
    """Chaos Mesh selectors (``selector``, ``target.selector``, nested in Schedule/Workflow)."""
    if isinstance(value, dict):
        for key, sub in value.items():
            if key == "selector" and isinstance(sub, dict):
                yield from _label_map(sub.get("labelSelectors"), path + (key, "labelSelectors"), "Selector label")
                yield from _label_map(sub.get("fieldSelectors"), path + (key, "fieldSelectors"), "Field selector")
                for annotation in _dict_items(sub.get("annotationSelectors")):
                    problem = _label_key_problem(annotation[0])
                    if problem:
                        yield (path + (key, "annotationSelectors", annotation[0]), "label-syntax",
                               f"Annotation key {annotation[0]!r} {problem}.")
                for i, namespace in _list_items(sub.get("namespaces")):
                    problem = isinstance(namespace, str) and _dns_label_problem(namespace)
                    if problem:
                        yield (path + (key, "namespaces", i), "dns1123-name", f"Namespace {namespace!r} {problem}.")
            yield from _chaos_selector_issues(sub, path + (key,))
    elif isinstance(value, list):
        for i, sub in enumerate(value):
            yield from _chaos_selector_issues(sub, path + (i,))


# -- pods, services, network policies ----------------------------------------------------------

def _port_issue(value: Any, path: Path, what: str, allow_zero: bool = False) -> Iterator[_Found]:
    if _is_int(value) and not (1 <= value <= 65535 or (allow_zero and value == 0)):
        allowed = "0 (unset) or 1..65535" if allow_zero else "1..65535"
        yield path, "port-range", f"{what} {value} is outside {allowed}."


def _handler_ports(handler: Any, path: Path) -> Iterator[_Found]:
    """httpGet / tcpSocket / grpc ports of a probe or lifecycle handler (integers only)."""
    for action in ("httpGet", "tcpSocket", "grpc"):
        yield from _port_issue(_get(handler, (action, "port")), path + (action, "port"), "Port")


def _pod_spec_issues(pod_spec: Any, path: Path, claim_templates: Iterable[str] = ()) -> Iterator[_Found]:
    """What ValidatePodSpec (kubernetes pkg/apis/core/validation) refuses and the schema cannot say.

    ``claim_templates``: the names of a StatefulSet's volumeClaimTemplates, which its controller adds
    to every pod as volumes (so a container may mount them).
    """
    volumes = yield from _volume_issues(_get(pod_spec, ("volumes",)), path + ("volumes",))
    if volumes is not None:
        volumes |= {name for name in claim_templates if isinstance(name, str)}
    seen_names: dict[str, Path] = {}
    for group in _CONTAINER_LISTS:
        for i, container in _list_items(_get(pod_spec, (group,))):
            if not isinstance(container, dict):
                continue
            cpath = path + (group, i)
            name = container.get("name")
            if isinstance(name, str):
                problem = _dns_label_problem(name)
                if problem:
                    yield cpath + ("name",), "dns1123-name", f"Container name {name!r} {problem}."
                if name in seen_names:
                    yield (cpath + ("name",), "schema",
                           f"Container name {name!r} is already used at {_format_path(seen_names[name])}.")
                else:
                    seen_names[name] = cpath
            yield from _container_port_issues(container, cpath)
            yield from _env_issues(container, cpath)
            yield from _volume_mount_issues(container, cpath, volumes)
            yield from _resource_issues(_get(container, ("resources",)), cpath + ("resources",))
            yield from _security_context_issues(_get(container, ("securityContext",)), cpath + ("securityContext",))
            for probe in _PROBES:
                yield from _handler_ports(container.get(probe), cpath + (probe,))
                if group != "ephemeralContainers":  # forbidden there outright, whatever their content
                    yield from _handler_count(container.get(probe), cpath + (probe,), _PROBE_HANDLERS, "probe")
            for hook in ("postStart", "preStop"):
                hook_path = cpath + ("lifecycle", hook)
                yield from _handler_ports(_get(container, ("lifecycle", hook)), hook_path)
                if group != "ephemeralContainers":
                    yield from _handler_count(_get(container, ("lifecycle", hook)), hook_path, _HOOK_HANDLERS,
                                              f"{hook} hook")
    # Host ports: the regular containers run together, so they share the host's ports; init
    # containers run one by one, so each is checked alone (checkHostPortConflicts).
    yield from _host_port_conflicts(
        [(path + ("containers", i), c) for i, c in _list_items(_get(pod_spec, ("containers",)))])
    for i, container in _list_items(_get(pod_spec, ("initContainers",))):
        yield from _host_port_conflicts([(path + ("initContainers", i), container)])


def _container_port_issues(container: dict, cpath: Path) -> Iterator[_Found]:
    """validateContainerPorts: ranges, IANA names, names unique within the container.

    The same containerPort/protocol twice is only a warning upstream (pkg/api/pod/warnings.go), so
    it is not checked here.
    """
    port_names: dict[str, int] = {}
    for j, port in _list_items(container.get("ports")):
        ppath = cpath + ("ports", j)
        yield from _port_issue(_get(port, ("containerPort",)), ppath + ("containerPort",), "containerPort")
        yield from _port_issue(_get(port, ("hostPort",)), ppath + ("hostPort",), "hostPort", allow_zero=True)
        port_name = _get(port, ("name",))
        if not isinstance(port_name, str) or port_name == "":
            continue
        if not _is_iana_svc_name(port_name):
            yield (ppath + ("name",), "schema",
                   f"Port name {port_name!r} is not a valid IANA service name (at most 15 lowercase "
                   "letters, digits or '-', with a letter, no '--', not starting or ending with '-').")
        elif port_name in port_names:
            yield (ppath + ("name",), "duplicate",
                   f"Port name {port_name!r} is already used at ports[{port_names[port_name]}] of this container; "
                   "port names must be unique within a container.")
        else:
            port_names[port_name] = j


def _host_port_conflicts(containers: list[tuple[Path, Any]]) -> Iterator[_Found]:
    """AccumulateUniqueHostPorts: one protocol/hostIP/hostPort once among containers running together."""
    taken: dict[tuple, Path] = {}
    for cpath, container in containers:
        for j, port in _list_items(_get(container, ("ports",))):
            host_port = _get(port, ("hostPort",))
            if not _is_int(host_port) or host_port == 0:
                continue
            protocol, host_ip = _get(port, ("protocol",)), _get(port, ("hostIP",))
            protocol = protocol if isinstance(protocol, str) and protocol else "TCP"  # the API's default
            host_ip = host_ip if isinstance(host_ip, str) else ""
            key = (protocol, host_ip, host_port)
            ppath = cpath + ("ports", j)
            if key in taken:
                on = f" on {host_ip}" if host_ip else ""
                yield (ppath + ("hostPort",), "duplicate",
                       f"hostPort {host_port}/{protocol}{on} is already bound at {_format_path(taken[key])}; "
                       "containers running together cannot bind the same host port.")
            else:
                taken[key] = ppath


def _env_issues(container: dict, cpath: Path) -> Iterator[_Found]:
    env_seen: dict[str, int] = {}
    for j, variable in _list_items(container.get("env")):
        variable_name = _get(variable, ("name",))
        if isinstance(variable_name, str):
            if variable_name in env_seen:
                yield (cpath + ("env", j, "name"), "schema",
                       f"Environment variable {variable_name!r} is already set at env[{env_seen[variable_name]}] "
                       "of this container; the later value silently wins.")
            else:
                env_seen[variable_name] = j
        # validateEnvVarValueFrom: valueFrom names exactly one source, and no non-empty value beside it.
        value_from = _get(variable, ("valueFrom",))
        if not isinstance(value_from, dict):
            continue  # absent, null or mistyped (the schema reports the last)
        what = f"Environment variable {variable_name!r}" if isinstance(variable_name, str) else "This variable"
        sources = [key for key in _ENV_SOURCES if value_from.get(key) is not None]
        value = _get(variable, ("value",))
        vpath = cpath + ("env", j, "valueFrom")
        if not sources:
            yield (vpath, "env-source",
                   f"{what} has a valueFrom with no source; it needs one of {_or(list(_ENV_SOURCES))}.")
        elif isinstance(value, str) and value != "":
            yield (vpath, "env-source",
                   f"{what} sets both `value` and `valueFrom`; the API server refuses a valueFrom beside a "
                   "non-empty value, so keep one of them.")
        elif len(sources) > 1:
            yield (vpath, "env-source",
                   f"{what} takes its value from {len(sources)} sources ({', '.join(sources)}); valueFrom takes one.")
        # validateSecretKeySelector / validateConfigMapKeySelector: the object's name (a DNS-1123 subdomain, so
        # never empty) and its key are required
        for source in ("secretKeyRef", "configMapKeyRef"):
            selector = value_from.get(source)
            if isinstance(selector, dict) and not selector.get("name"):
                yield (vpath + (source, "name"), "env-source",
                       f"{what} names no object in `{source}`; its name is required.")
    # validateEnvFrom: a Secret or ConfigMap source names its object
    for j, source in _list_items(container.get("envFrom")):
        for key in ("secretRef", "configMapRef"):
            ref = _get(source, (key,))
            if isinstance(ref, dict) and not ref.get("name"):
                yield (cpath + ("envFrom", j, key, "name"), "env-source",
                       f"An envFrom `{key}` names no object; its name is required.")


def _volume_issues(volumes: Any, path: Path) -> Generator[_Found, None, set[str] | None]:
    """ValidateVolumes: DNS-label names, unique, one source each.

    Returns the declared volume names, or None when ``volumes`` is mistyped (then which names a
    mount may use is unknown, and mounts are not checked against them).
    """
    if volumes is None:
        return set()
    if not isinstance(volumes, list):
        return None
    names: dict[str, int] = {}
    known = True
    for i, volume in enumerate(volumes):
        if not isinstance(volume, dict):
            known = False
            continue
        vpath = path + (i,)
        name = volume.get("name")
        if isinstance(name, str) and name:
            problem = _dns_label_problem(name)
            if problem:
                yield vpath + ("name",), "dns1123-name", f"Volume name {name!r} {problem}."
            if name in names:
                yield (vpath + ("name",), "duplicate",
                       f"Volume name {name!r} is already declared at volumes[{names[name]}]; volume names must be "
                       "unique in a pod.")
            else:
                names[name] = i
        else:
            known = False
        sources = sorted(str(key) for key, value in volume.items() if key != "name" and value is not None)
        label = f"Volume {name!r}" if isinstance(name, str) else "This volume"
        if not sources:
            # the API server does not refuse it: its defaulting makes it an emptyDir (SetDefaults_Volume, checked
            # against a real server in tests/backends/test_apiserver_rules.py), which a scenario rarely means
            yield (vpath, "volume-source",
                   f"{label} has no source, which the API server turns into an empty emptyDir; say the source "
                   "(emptyDir, configMap, secret, persistentVolumeClaim, hostPath, projected, ...).")
        elif len(sources) > 1:
            yield (vpath, "volume-source",
                   f"{label} has {len(sources)} sources ({', '.join(sources)}); a volume takes exactly one.")
    return set(names) if known else None


def _volume_mount_issues(container: dict, cpath: Path, volumes: set[str] | None) -> Iterator[_Found]:
    """ValidateVolumeMounts: each mount names a volume of the pod; one mount per mountPath."""
    mount_paths: dict[str, int] = {}
    for j, mount in _list_items(container.get("volumeMounts")):
        mpath = cpath + ("volumeMounts", j)
        name = _get(mount, ("name",))
        if volumes is not None and isinstance(name, str) and name and name not in volumes:
            declared = f"; the pod's volumes are {', '.join(sorted(volumes))}" if volumes else "; the pod has no volume"
            close = difflib.get_close_matches(name, sorted(volumes), n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            yield (mpath + ("name",), "volume-mount",
                   f"Volume mount {name!r} names no volume of the pod{hint}{declared}.")
        mount_path = _get(mount, ("mountPath",))
        if isinstance(mount_path, str) and mount_path:
            if mount_path in mount_paths:
                yield (mpath + ("mountPath",), "duplicate",
                       f"mountPath {mount_path!r} is already used by volumeMounts[{mount_paths[mount_path]}] of "
                       "this container; each mount needs its own path.")
            else:
                mount_paths[mount_path] = j


def _resource_issues(resources: Any, path: Path) -> Iterator[_Found]:
    """validateResourceRequirements: a request is at most its limit (equal to it for a resource that
    cannot be overcommitted: hugepages and extended resources, whose limit is then required)."""
    requests, limits = _get(resources, ("requests",)), _get(resources, ("limits",))
    limits = limits if isinstance(limits, dict) else {}
    for name, requested in _dict_items(requests):
        if not isinstance(name, str):
            continue
        overcommit = ("/" not in name or "kubernetes.io/" in name) and not name.startswith("hugepages-")
        rpath = path + ("requests", name)
        if name not in limits:
            if not overcommit:
                yield (rpath, "resource-limits",
                       f"{name} cannot be overcommitted: a request needs a limit, and the limit must equal it.")
            continue
        request_value, limit_value = _quantity(requested), _quantity(limits[name])
        if request_value is None or limit_value is None:
            continue  # not a quantity: the schema (or the compiler's units) reports it
        request_text, limit_text = _quantity_text(requested), _quantity_text(limits[name])
        if not overcommit and request_value != limit_value:
            yield (rpath, "resource-limits",
                   f"Request {request_text} of {name} differs from its limit {limit_text}; "
                   f"{name} cannot be overcommitted, so they must be equal.")
        elif request_value > limit_value:
            yield (rpath, "resource-limits",
                   f"Request {request_text} of {name} is above its limit {limit_text}; "
                   "a request must be less than or equal to the limit.")


def _security_context_issues(context: Any, path: Path) -> Iterator[_Found]:
    """ValidateSecurityContext: a container that may not escalate privileges can be neither
    privileged nor given CAP_SYS_ADMIN (both are container-level fields; the pod's securityContext
    has neither)."""
    if not isinstance(context, dict) or context.get("allowPrivilegeEscalation") is not False:
        return
    if context.get("privileged") is True:
        yield (path + ("allowPrivilegeEscalation",), "security-context",
               "`allowPrivilegeEscalation: false` contradicts `privileged: true` in this securityContext (a "
               "privileged container can always escalate), and the API server refuses it: drop one of the two.")
    for k, capability in _list_items(_get(context, ("capabilities", "add"))):
        if capability == "CAP_SYS_ADMIN":
            yield (path + ("capabilities", "add", k), "security-context",
                   "`allowPrivilegeEscalation: false` contradicts adding CAP_SYS_ADMIN, and the API server refuses it: "
               "drop one of the two.")


def _handler_count(handler: Any, path: Path, kinds: tuple[str, ...], what: str) -> Iterator[_Found]:
    """validateHandler: a probe or lifecycle hook has exactly one handler."""
    if not isinstance(handler, dict):
        return  # absent or mistyped
    present = [kind for kind in kinds if handler.get(kind) is not None]
    if not present:
        yield path, "handler", f"The {what} has no handler; it needs exactly one of {_or(list(kinds))}."
    for kind in present[1:]:
        yield (path + (kind,), "handler",
               f"The {what} sets both `{present[0]}` and `{kind}`; it takes exactly one handler ({_or(list(kinds))}).")


_QUANTITY = re.compile(r"([+-]?(?:\d+(?:\.\d*)?|\.\d+))(?:[eE]([+-]?\d+)|(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE])?)")
_QUANTITY_SUFFIXES = {
    None: Fraction(1), "n": Fraction(1, 10**9), "u": Fraction(1, 10**6), "m": Fraction(1, 1000),
    "k": Fraction(10**3), "M": Fraction(10**6), "G": Fraction(10**9), "T": Fraction(10**12), "P": Fraction(10**15),
    "E": Fraction(10**18), "Ki": Fraction(2**10), "Mi": Fraction(2**20), "Gi": Fraction(2**30), "Ti": Fraction(2**40),
    "Pi": Fraction(2**50), "Ei": Fraction(2**60),
}


def _quantity(value: Any) -> Fraction | None:
    """A resource.Quantity by value (`500m` -> 1/2, `1Gi` -> 2**30), None when it is not one."""
    if _is_int(value):
        return Fraction(value)
    if isinstance(value, float) and value == value and value not in (float("inf"), float("-inf")):
        return Fraction(repr(value))
    if not isinstance(value, str):
        return None
    match = _QUANTITY.fullmatch(value.strip())
    if match is None:
        return None
    number, exponent, suffix = match.groups()
    scale = Fraction(10) ** int(exponent) if exponent is not None else _QUANTITY_SUFFIXES[suffix]
    return Fraction(number) * scale


def _quantity_text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value)


def _is_iana_svc_name(name: str) -> bool:
    return (
        len(name) <= 15
        and _IANA_SVC_NAME.fullmatch(name) is not None
        and "--" not in name
        and any(c.isalpha() for c in name)
    )


def _service_issues(spec: Any) -> Iterator[_Found]:
    for i, port in _list_items(_get(spec, ("ports",))):
        ppath = ("spec", "ports", i)
        yield from _port_issue(_get(port, ("port",)), ppath + ("port",), "Service port")
        # 0 means "unset" to the API server: targetPort then defaults to port, nodePort is allocated.
        yield from _port_issue(_get(port, ("targetPort",)), ppath + ("targetPort",), "targetPort", allow_zero=True)
        yield from _port_issue(_get(port, ("nodePort",)), ppath + ("nodePort",), "nodePort", allow_zero=True)
    yield from _label_map(_get(spec, ("selector",)), ("spec", "selector"), "Selector label")


def _network_policy_issues(spec: Any) -> Iterator[_Found]:
    yield from _selector_syntax(_get(spec, ("podSelector",)), ("spec", "podSelector"))
    for direction, peers in (("ingress", "from"), ("egress", "to")):
        for i, rule in _list_items(_get(spec, (direction,))):
            rpath = ("spec", direction, i)
            for j, port in _list_items(_get(rule, ("ports",))):
                yield from _port_issue(_get(port, ("port",)), rpath + ("ports", j, "port"), "Port")
                yield from _port_issue(_get(port, ("endPort",)), rpath + ("ports", j, "endPort"), "endPort")
            for j, peer in _list_items(_get(rule, (peers,))):
                for selector in ("podSelector", "namespaceSelector"):
                    yield from _selector_syntax(_get(peer, (selector,)), rpath + (peers, j, selector))
