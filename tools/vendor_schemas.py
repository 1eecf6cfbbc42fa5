#!/usr/bin/env python3
"""Vendor the JSON Schemas that ``itbench_dsl.validate`` checks emitted manifests against.

Maintainer script: run it once after changing a pin, commit what it writes. It is re-runnable and
its output is deterministic (sorted keys, compact JSON), so a second run changes nothing and
``--check`` can verify in CI that the vendored files match their sources.

It writes, under ``itbench_dsl/schemas/``:

* ``kubernetes/v1.33-strict.json``: the built-in kinds the compiler emits, taken from the
  strict JSON Schemas bundled in the PyPI package ``kubernetes-validate`` (Kubernetes v1.33.0),
  with the transitive closure of the shared ``$defs`` they reference, in one self-contained file.
* ``chaos-mesh/v1alpha1.json``: every Chaos Mesh CRD kind, converted from the CRDs'
  ``openAPIV3Schema`` (OpenAPI 3.0 + Kubernetes extensions) to JSON Schema 2020-12.
* ``kyverno/v1.json``: Kyverno's ClusterPolicy and Policy, from datree's CRDs-catalog JSON Schemas,
  translated like the Chaos Mesh CRDs.
* ``istio/v1.json``: Istio's PeerAuthentication and AuthorizationPolicy (``security.istio.io/v1``), and
  ``gateway-api/v1.json``: the Gateway API Gateway (``gateway.networking.k8s.io/v1``), from the schemas that
  the npm packages ``@kubernetes-models/istio`` and ``@kubernetes-models/gateway-api`` embed (generated
  there from the upstream CRDs), translated like the Chaos Mesh CRDs. The registry cannot be reached at
  build time, so the unpacked packages are read from folders given on the command line; without them
  the vendored files are kept as they are (``--check`` still checks the rest)::

      mkdir -p /tmp/npm-schemas && cd /tmp/npm-schemas
      npm pack @kubernetes-models/istio@2.3.0 @kubernetes-models/gateway-api@0.5.1
      mkdir istio gateway-api
      tar xzf kubernetes-models-istio-2.3.0.tgz -C istio
      tar xzf kubernetes-models-gateway-api-0.5.1.tgz -C gateway-api
      cd - && python tools/vendor_schemas.py --istio-package /tmp/npm-schemas/istio/package \
          --gateway-api-package /tmp/npm-schemas/gateway-api/package

  (Later releases of the packages ship compiled validators instead of the schema literals.)
* ``SOURCES.md``, ``LICENSE-APACHE-2.0``, ``LICENSE-MIT-datree-crds-catalog`` and
  ``LICENSE-MIT-kubernetes-models``: provenance and the upstream licenses.

Both schema files are JSON Schema 2020-12 documents: ``{"$schema": ..., "kinds": {key: schema},
"$defs": {...}}`` where ``key`` is ``<apiVersion>/<kind>`` (``v1/Service``, ``apps/v1/Deployment``)
and every ``$ref`` is a local ``#/$defs/<name>`` pointer into the same file.

Usage::

    python tools/vendor_schemas.py            # (re)write the vendored files
    python tools/vendor_schemas.py --check    # exit 1 if they are out of date
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any, Callable

import yaml

REPO_ROOT = Path(__file__).resolve().parents[1]
OUT_DIR = REPO_ROOT / "itbench_dsl" / "schemas"
SHARED_REFERENCE = REPO_ROOT.parent / "shared" / "reference"

DIALECT = "https://json-schema.org/draft/2020-12/schema"

KUBERNETES_VALIDATE_VERSION = "1.37.0"
KUBERNETES_VERSION = "1.33.0"
KUBERNETES_SCHEMA_FOLDER = f"v{KUBERNETES_VERSION}-local-strict"
KUBERNETES_OUT = Path("kubernetes") / "v1.33-strict.json"

# (apiVersion, kind) of every built-in kind the compiler may emit.
KUBERNETES_KINDS: list[tuple[str, str]] = [
    ("v1", "Namespace"),
    ("v1", "Service"),
    ("v1", "ConfigMap"),
    ("v1", "Secret"),
    ("v1", "ServiceAccount"),
    ("v1", "Pod"),
    ("v1", "PersistentVolumeClaim"),
    ("v1", "PersistentVolume"),
    ("v1", "ResourceQuota"),
    ("v1", "LimitRange"),
    ("apps/v1", "Deployment"),
    ("apps/v1", "StatefulSet"),
    ("apps/v1", "DaemonSet"),
    ("autoscaling/v2", "HorizontalPodAutoscaler"),
    ("rbac.authorization.k8s.io/v1", "Role"),
    ("rbac.authorization.k8s.io/v1", "RoleBinding"),
    ("rbac.authorization.k8s.io/v1", "ClusterRole"),
    ("rbac.authorization.k8s.io/v1", "ClusterRoleBinding"),
    ("networking.k8s.io/v1", "NetworkPolicy"),
    ("networking.k8s.io/v1", "Ingress"),
    ("policy/v1", "PodDisruptionBudget"),
    ("scheduling.k8s.io/v1", "PriorityClass"),
    ("storage.k8s.io/v1", "StorageClass"),
    ("batch/v1", "Job"),
    ("batch/v1", "CronJob"),
    ("admissionregistration.k8s.io/v1", "ValidatingWebhookConfiguration"),
    ("admissionregistration.k8s.io/v1", "ValidatingAdmissionPolicy"),
    ("admissionregistration.k8s.io/v1", "ValidatingAdmissionPolicyBinding"),
    ("admissionregistration.k8s.io/v1", "MutatingWebhookConfiguration"),
]

CHAOS_MESH_COMMIT = "608b61e7"
CHAOS_MESH_VERSION = "v1alpha1"
CHAOS_MESH_CRDS = SHARED_REFERENCE / "chaos-mesh" / "crds"
CHAOS_MESH_LICENSE = SHARED_REFERENCE / "chaos-mesh" / "LICENSE"
CHAOS_MESH_OUT = Path("chaos-mesh") / f"{CHAOS_MESH_VERSION}.json"

# Kyverno's policy kinds, as published in datree's CRDs-catalog (JSON Schema converted from the
# Kyverno CRDs' openAPIV3Schema), copy in shared/reference/kyverno.
KYVERNO_SCHEMAS = SHARED_REFERENCE / "kyverno" / "schemas" / "kyverno.io"
KYVERNO_LICENSE = SHARED_REFERENCE / "kyverno" / "LICENSE-datree-catalog"
KYVERNO_KINDS = [("clusterpolicy_v1.json", "ClusterPolicy"), ("policy_v1.json", "Policy")]
KYVERNO_OUT = Path("kyverno") / "v1.json"

# Istio and Gateway API kinds the faults create or name, from the schema literals embedded in the npm
# packages of kubernetes-models-ts (MIT), generated there from the upstream CRDs (Apache-2.0).
ISTIO_PACKAGE = ("@kubernetes-models/istio", "2.3.0")
ISTIO_CRDS = "istio/istio 1.18.0, manifests/charts/base/crds/crd-all.gen.yaml"
# (file in the package, apiVersion to vendor it as, kind)
ISTIO_KINDS = [
    ("security.istio.io/v1/AuthorizationPolicy.js", "security.istio.io/v1", "AuthorizationPolicy"),
    # Istio 1.18 serves PeerAuthentication as v1beta1 only; from 1.22 on it also serves v1, with the same schema
    ("security.istio.io/v1beta1/PeerAuthentication.js", "security.istio.io/v1", "PeerAuthentication"),
]
# AuthorizationPolicy.spec.targetRef (policy attachment to a Gateway API Gateway) came after Istio 1.18;
# its schema as Istio 1.29.2's CRD states it (the compiled validator of @kubernetes-models/istio 3.0.1).
ISTIO_TARGET_REF = {
    "type": ["object", "null"],
    "additionalProperties": False,
    "required": ["kind", "name"],
    "properties": {
        "group": {"type": "string", "maxLength": 253,
                  "pattern": "^$|^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"},
        "kind": {"type": "string", "minLength": 1, "maxLength": 63, "pattern": "^[a-zA-Z]([-a-zA-Z0-9]*[a-zA-Z0-9])?$"},
        "name": {"type": "string", "minLength": 1, "maxLength": 253},
        "namespace": {"type": "string"},
    },
}
ISTIO_OUT = Path("istio") / "v1.json"
GATEWAY_API_PACKAGE = ("@kubernetes-models/gateway-api", "0.5.1")
GATEWAY_API_CRDS = "kubernetes-sigs/gateway-api v1.0.0, standard-install.yaml"
GATEWAY_API_KINDS = [("gateway.networking.k8s.io/v1/Gateway.js", "gateway.networking.k8s.io/v1", "Gateway")]
GATEWAY_API_OUT = Path("gateway-api") / "v1.json"
KUBERNETES_MODELS_LICENSE = "LICENSE-MIT-kubernetes-models"

# The engines the compiler writes for (`itbench compile --target chainsaw|argo`, `itbench plan`) and the
# PrometheusRule of a bundle's alert rules, from shared/reference/engines: (source file, apiVersion, kinds,
# output). Argo's WorkflowTemplate schema is also a Workflow's (the same spec).
ENGINES = SHARED_REFERENCE / "engines"
ENGINE_SCHEMAS = [
    ("prometheus-operator/prometheusrule_v1.json", "monitoring.coreos.com/v1", ("PrometheusRule",),
     Path("engines") / "prometheus-operator-v1.json"),
    ("chainsaw/test-chainsaw-v1alpha1.json", "chainsaw.kyverno.io/v1alpha1", ("Test",),
     Path("engines") / "chainsaw-v1alpha1.json"),
    ("argo/workflowtemplate_v1alpha1.json", "argoproj.io/v1alpha1", ("Workflow", "WorkflowTemplate"),
     Path("engines") / "argo-v1alpha1.json"),
]


# --------------------------------------------------------------------------------------------
# Schema-aware tree rewriting
# --------------------------------------------------------------------------------------------
#
# A schema is rewritten node by node. Only *schema positions* are visited: the values of
# ``properties``/``$defs`` are maps of name -> schema, ``items``/``additionalProperties``/``not``
# hold one schema, ``allOf``/``anyOf``/``oneOf`` a list of schemas. Everything else (``enum``,
# ``required``, ``x-kubernetes-list-map-keys``, ...) is data and copied verbatim. This matters
# because some property *names* collide with keywords (PriorityClass has a ``description`` field).

_SCHEMA_MAPS = ("properties", "patternProperties", "$defs")
_SCHEMA_SINGLE = ("items", "additionalProperties", "not")
_SCHEMA_LISTS = ("allOf", "anyOf", "oneOf")

NodeFn = Callable[[dict[str, Any]], dict[str, Any]]


def rewrite(schema: Any, node_fn: NodeFn) -> Any:
    """Rebuild ``schema`` bottom-up, applying ``node_fn`` to each schema object."""
    if not isinstance(schema, dict):  # boolean schemas (additionalProperties: false)
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key in _SCHEMA_MAPS:
            out[key] = {name: rewrite(sub, node_fn) for name, sub in value.items()}
        elif key in _SCHEMA_SINGLE:
            out[key] = rewrite(value, node_fn)
        elif key in _SCHEMA_LISTS:
            out[key] = [rewrite(sub, node_fn) for sub in value]
        else:
            out[key] = value
    return node_fn(out)


def iter_refs(schema: Any):
    """Yield every ``$ref`` value in ``schema``."""
    if isinstance(schema, dict):
        for key, value in schema.items():
            if key == "$ref":
                yield value
            elif key in _SCHEMA_MAPS:
                for sub in value.values():
                    yield from iter_refs(sub)
            elif key in _SCHEMA_SINGLE:
                yield from iter_refs(value)
            elif key in _SCHEMA_LISTS:
                for sub in value:
                    yield from iter_refs(sub)


# --------------------------------------------------------------------------------------------
# Kubernetes built-in kinds
# --------------------------------------------------------------------------------------------

# Keys that do not constrain a value: documentation, client-side merge hints, and the
# group/version/kind tag (the kind is the key in "kinds" already). Kept on purpose:
# ``x-kubernetes-list-type`` / ``x-kubernetes-list-map-keys`` (they state which list entries must
# be unique), ``format`` (int32/int64/date-time...: a checker may enforce them).
_K8S_DROP = frozenset(
    {
        "description",
        "$id",
        "$schema",
        "x-kubernetes-group-version-kind",
        "x-kubernetes-patch-strategy",
        "x-kubernetes-patch-merge-key",
        "x-kubernetes-map-type",
        "x-kubernetes-unions",
    }
)
_K8S_REF_PREFIXES = ("/api/_definitions.json#/$defs/", "#/$defs/")


def _k8s_node(node: dict[str, Any]) -> dict[str, Any]:
    for key in _K8S_DROP.intersection(node):
        del node[key]
    ref = node.get("$ref")
    if ref is not None:
        for prefix in _K8S_REF_PREFIXES:
            if ref.startswith(prefix):
                node["$ref"] = "#/$defs/" + ref[len(prefix):]
                break
        else:
            raise ValueError(f"unexpected $ref {ref!r}")
    return node


def kubernetes_schema_dir() -> Path:
    installed = importlib.metadata.version("kubernetes-validate")
    if installed != KUBERNETES_VALIDATE_VERSION:
        sys.exit(
            f"kubernetes-validate {installed} is installed; this script is pinned to "
            f"{KUBERNETES_VALIDATE_VERSION} (pip install kubernetes-validate=={KUBERNETES_VALIDATE_VERSION})"
        )
    import kubernetes_validate  # imported late: only this part of the script needs it

    return Path(kubernetes_validate.__file__).parent / "kubernetes-json-schema" / KUBERNETES_SCHEMA_FOLDER


def _gvk_index(schema_dir: Path) -> dict[tuple[str, str], Path]:
    """Map (apiVersion, kind) -> per-kind schema file, from each file's group-version-kind tag.

    Reading the tag rather than guessing file names (``deployment-apps-v1.json``) makes a
    missing or renamed kind an explicit error instead of a silent skip.
    """
    index: dict[tuple[str, str], Path] = {}
    for path in sorted(schema_dir.glob("*.json")):
        if path.name in ("_definitions.json", "all.json"):
            continue
        schema = json.loads(path.read_text())
        for gvk in schema.get("x-kubernetes-group-version-kind", []):
            api_version = f"{gvk['group']}/{gvk['version']}" if gvk["group"] else gvk["version"]
            index[(api_version, gvk["kind"])] = path
    return index


def build_kubernetes(schema_dir: Path) -> dict[str, Any]:
    definitions = json.loads((schema_dir / "_definitions.json").read_text())["$defs"]
    index = _gvk_index(schema_dir)

    kinds: dict[str, Any] = {}
    for api_version, kind in KUBERNETES_KINDS:
        path = index.get((api_version, kind))
        if path is None:
            raise SystemExit(f"{api_version} {kind}: no schema in {schema_dir}")
        kinds[f"{api_version}/{kind}"] = rewrite(json.loads(path.read_text()), _k8s_node)

    # Transitive closure of the definitions the chosen kinds reference.
    defs: dict[str, Any] = {}
    pending = [ref for schema in kinds.values() for ref in iter_refs(schema)]
    while pending:
        name = pending.pop().removeprefix("#/$defs/")
        if name in defs:
            continue
        defs[name] = rewrite(definitions[name], _k8s_node)
        pending.extend(iter_refs(defs[name]))

    return {
        "$schema": DIALECT,
        "kubernetesVersion": KUBERNETES_VERSION,
        "kinds": kinds,
        "$defs": defs,
    }


# --------------------------------------------------------------------------------------------
# Chaos Mesh CRDs: OpenAPI 3.0 structural schemas -> JSON Schema 2020-12
# --------------------------------------------------------------------------------------------

# Keywords JSON Schema 2020-12 reads the same way as OpenAPI 3.0 (exclusiveMinimum/Maximum are
# not among them: OpenAPI 3.0 spells them as booleans that modify minimum/maximum).
_SAME_MEANING = frozenset(
    {
        "type", "properties", "additionalProperties", "items", "required", "enum", "pattern",
        "minimum", "maximum", "minLength", "maxLength", "minItems", "maxItems", "uniqueItems",
        "minProperties", "maxProperties", "multipleOf", "allOf", "anyOf", "oneOf", "not", "format",
        # Kept as annotations: they state which list entries must be unique.
        "x-kubernetes-list-type", "x-kubernetes-list-map-keys",
    }
)
# Keywords handled below, then removed.
_CONVERTED = frozenset(
    {
        "nullable", "x-kubernetes-int-or-string", "x-kubernetes-preserve-unknown-fields",
        "exclusiveMinimum", "exclusiveMaximum",
    }
)
# Keywords that do not constrain a value: documentation, defaulting, merge hints.
_CRD_DROP = frozenset({"description", "default", "example", "title", "x-kubernetes-map-type"})

_INT_OR_STRING_ANY_OF = [{"type": "integer"}, {"type": "string"}]


def _crd_node(node: dict[str, Any]) -> dict[str, Any]:
    unknown = set(node) - _SAME_MEANING - _CONVERTED - _CRD_DROP
    if unknown:
        # E.g. x-kubernetes-validations (CEL) or x-kubernetes-embedded-resource: decide how to
        # translate them rather than dropping a constraint silently.
        raise ValueError(f"no translation for OpenAPI keyword(s) {sorted(unknown)}")

    out = {key: value for key, value in node.items() if key in _SAME_MEANING}

    if node.get("x-kubernetes-int-or-string"):
        # The CRD spells it anyOf [integer, string] (+ the extension); one type list gives the
        # same constraint, and a clearer error ("must be of type integer or string").
        if out.get("anyOf") == _INT_OR_STRING_ANY_OF:
            del out["anyOf"]
        out["type"] = ["integer", "string"]

    for exclusive, bound in (("exclusiveMinimum", "minimum"), ("exclusiveMaximum", "maximum")):
        if node.get(exclusive) is True:
            out[exclusive] = out.pop(bound)

    if node.get("nullable"):
        types = out.get("type")
        if types is not None:
            types = [types] if isinstance(types, str) else list(types)
            out["type"] = types + ["null"]
        if "enum" in out and None not in out["enum"]:
            out["enum"] = out["enum"] + [None]

    # Structural-schema pruning: a field not declared in `properties` is dropped by the API
    # server, and rejected under strict field validation (kubectl's default), unless the schema
    # preserves unknown fields. An object with no `properties` at all (only `metadata`, which
    # the API server validates as ObjectMeta itself) is left open.
    if (
        "properties" in out
        and "additionalProperties" not in out
        and not node.get("x-kubernetes-preserve-unknown-fields")
    ):
        out["additionalProperties"] = False
    return out


def build_chaos_mesh(crd_dir: Path) -> dict[str, Any]:
    kinds: dict[str, Any] = {}
    for path in sorted(crd_dir.glob("*.yaml")):
        for crd in yaml.safe_load_all(path.read_text()):
            if not crd or crd.get("kind") != "CustomResourceDefinition":
                continue
            spec = crd["spec"]
            group, kind = spec["group"], spec["names"]["kind"]
            for version in spec["versions"]:
                if version["name"] != CHAOS_MESH_VERSION or not version.get("served", True):
                    continue
                try:
                    schema = rewrite(version["schema"]["openAPIV3Schema"], _crd_node)
                except ValueError as exc:
                    raise SystemExit(f"{path.name}: {exc}") from exc
                api_version = f"{group}/{version['name']}"
                # The API server only accepts the exact group/version and kind at this endpoint.
                schema["properties"]["apiVersion"] = {"type": "string", "enum": [api_version]}
                schema["properties"]["kind"] = {"type": "string", "enum": [kind]}
                schema["required"] = sorted(set(schema.get("required", [])) | {"apiVersion", "kind"})
                kinds[f"{api_version}/{kind}"] = schema
    if not kinds:
        raise SystemExit(f"no {CHAOS_MESH_VERSION} CRD found in {crd_dir}")
    return {"$schema": DIALECT, "kinds": kinds, "$defs": hoist_repeated(kinds)}


def build_kyverno(schema_dir: Path) -> dict[str, Any]:
    """Kyverno's ClusterPolicy and Policy (kyverno.io/v1), translated like the Chaos Mesh CRDs."""
    kinds: dict[str, Any] = {}
    for file_name, kind in KYVERNO_KINDS:
        try:
            schema = rewrite(json.loads((schema_dir / file_name).read_text()), _crd_node)
        except ValueError as exc:
            raise SystemExit(f"{file_name}: {exc}") from exc
        api_version = "kyverno.io/v1"
        schema["properties"]["apiVersion"] = {"type": "string", "enum": [api_version]}
        schema["properties"]["kind"] = {"type": "string", "enum": [kind]}
        schema["required"] = sorted(set(schema.get("required", [])) | {"apiVersion", "kind"})
        kinds[f"{api_version}/{kind}"] = schema
    return {"$schema": DIALECT, "kinds": kinds, "$defs": hoist_repeated(kinds)}


# Chainsaw's schema is JSON Schema generated from its Go types (not a CRD): it already closes its objects
# with `additionalProperties: false`; only annotations are dropped.
_JSON_SCHEMA_DROP = frozenset({"description", "default", "$schema", "title"})


def _json_schema_node(node: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in node.items() if k not in _JSON_SCHEMA_DROP and not k.startswith("x-kubernetes-")}


def build_engine(source: str, api_version: str, kinds: tuple[str, ...]) -> dict[str, Any]:
    """One engine schema from shared/reference/engines: a CRD-derived schema (datree's catalog) is
    translated like the Kyverno ones, Chainsaw's JSON Schema only loses its annotations."""
    raw = json.loads((ENGINES / source).read_text())
    node_fn = _json_schema_node if source.startswith("chainsaw/") else _crd_node
    try:
        base = rewrite(raw, node_fn)
    except ValueError as exc:
        raise SystemExit(f"{source}: {exc}") from exc
    out: dict[str, Any] = {}
    for kind in kinds:
        schema = json.loads(json.dumps(base))
        schema["properties"]["apiVersion"] = {"type": "string", "enum": [api_version]}
        schema["properties"]["kind"] = {"type": "string", "enum": [kind]}
        schema["required"] = sorted(set(schema.get("required", [])) | {"apiVersion", "kind"})
        out[f"{api_version}/{kind}"] = schema
    return {"$schema": DIALECT, "kinds": out, "$defs": hoist_repeated(out)}


def embedded_schema(path: Path) -> dict[str, Any]:
    """The ``const schema = {...};`` literal of a kubernetes-models ``<Kind>.js`` file (it is JSON)."""
    text = path.read_text()
    start = text.index("const schema = ") + len("const schema = ")
    end = text.index("\n};\n", start) + 2
    return json.loads(text[start:end])


def _models_node(node: dict[str, Any]) -> dict[str, Any]:
    """kubernetes-models' rendering of a CRD schema, back to the CRD's own terms, then translated.

    Its generator drops ``x-kubernetes-preserve-unknown-fields`` and writes such an object (``status``)
    as ``properties: {}``; a map keeps its ``additionalProperties``. An object with no declared
    property is therefore left open, as the CRD leaves it.
    """
    out = _crd_node(node)
    if out.get("properties") == {} and out.get("additionalProperties") is False:
        del out["additionalProperties"]
    return out


def build_models(package_dir: Path, kinds: list[tuple[str, str, str]]) -> dict[str, Any]:
    """Kinds from an unpacked kubernetes-models npm package, translated like the Chaos Mesh CRDs."""
    out: dict[str, Any] = {}
    for file_name, api_version, kind in kinds:
        raw = embedded_schema(package_dir / file_name)
        # `metadata` is a $ref to the package's ObjectMeta: open here, validate.py checks it as ObjectMeta
        raw["properties"]["metadata"] = {"type": "object"}
        try:
            schema = rewrite(raw, _models_node)
        except ValueError as exc:
            raise SystemExit(f"{file_name}: {exc}") from exc
        schema["properties"]["apiVersion"] = {"type": "string", "enum": [api_version]}
        schema["properties"]["kind"] = {"type": "string", "enum": [kind]}
        schema["required"] = sorted(set(schema.get("required", [])) | {"apiVersion", "kind"})
        out[f"{api_version}/{kind}"] = schema
    return out


def build_istio(package_dir: Path) -> dict[str, Any]:
    kinds = build_models(package_dir, ISTIO_KINDS)
    spec = kinds["security.istio.io/v1/AuthorizationPolicy"]["properties"]["spec"]
    spec["properties"]["targetRef"] = ISTIO_TARGET_REF
    return {"$schema": DIALECT, "kinds": kinds, "$defs": hoist_repeated(kinds)}


def build_gateway_api(package_dir: Path) -> dict[str, Any]:
    kinds = build_models(package_dir, GATEWAY_API_KINDS)
    return {"$schema": DIALECT, "kinds": kinds, "$defs": hoist_repeated(kinds)}


def hoist_repeated(kinds: dict[str, Any], min_size: int = 400) -> dict[str, Any]:
    """Move subschemas that occur more than once into ``$defs``; return the ``$defs``.

    Schedule and Workflow embed every chaos kind's spec (Workflow twice: in templates and in
    schedule templates), so the same subschema is repeated several times. Each repeated
    subschema whose compact JSON is at least ``min_size`` bytes (below that a ``$ref`` saves
    little) is stored once, under the path of its first occurrence in sorted order (e.g.
    ``NetworkChaos.spec``), and replaced by a ``$ref``. Replacement is top-down, so the outermost
    repeated subtree wins; repeats nested in it are shared through its single copy.
    """
    def canonical(schema: Any) -> str:
        return json.dumps(schema, sort_keys=True, separators=(",", ":"))

    # Count every subschema occurrence, remembering the first (sorted) path that reached it.
    counts: Counter[str] = Counter()
    first_path: dict[str, str] = {}

    def visit(schema: Any, path: str) -> None:
        if not isinstance(schema, dict):
            return
        text = canonical(schema)
        if len(text) >= min_size:
            counts[text] += 1
            first_path.setdefault(text, path)
        for key in sorted(schema):
            value = schema[key]
            if key in ("properties", "patternProperties"):
                for name in sorted(value):
                    visit(value[name], f"{path}.{name}")
            elif key in _SCHEMA_SINGLE:
                visit(value, f"{path}.{key}")
            elif key in _SCHEMA_LISTS:
                for i, sub in enumerate(value):
                    visit(sub, f"{path}.{key}.{i}")

    for key in sorted(kinds):
        visit(kinds[key], key.rsplit("/", 1)[1])

    repeated = sorted((t for t, n in counts.items() if n > 1), key=lambda t: (-len(t), first_path[t]))
    defs: dict[str, Any] = {}
    names: dict[str, str] = {}  # canonical text -> $defs name
    for text in repeated:
        name = first_path[text]
        while name in defs:  # a property named like a keyword ("items") can repeat a path
            name += "_"
        names[text] = name
        defs[name] = None  # filled below, once inner repeats are replaced too

    def replace(schema: Any, top: str | None = None) -> Any:
        if not isinstance(schema, dict):
            return schema
        name = names.get(canonical(schema))
        if name is not None and name != top:
            return {"$ref": f"#/$defs/{name}"}
        out: dict[str, Any] = {}
        for key, value in schema.items():
            if key in ("properties", "patternProperties"):
                out[key] = {prop: replace(sub) for prop, sub in value.items()}
            elif key in _SCHEMA_SINGLE:
                out[key] = replace(value)
            elif key in _SCHEMA_LISTS:
                out[key] = [replace(sub) for sub in value]
            else:
                out[key] = value
        return out

    for text, name in names.items():
        defs[name] = replace(json.loads(text), top=name)
    for key in kinds:
        kinds[key] = replace(kinds[key])

    # A subschema counted twice only because it sat inside a larger repeated one is, once that
    # one is hoisted, referenced a single time: put it back inline.
    uses = Counter(ref for schema in [*kinds.values(), *defs.values()] for ref in iter_refs(schema))
    once = {name: defs.pop(name) for name in list(defs) if uses[f"#/$defs/{name}"] < 2}

    def inline(node: dict[str, Any]) -> dict[str, Any]:
        name = node.get("$ref", "").removeprefix("#/$defs/")
        return rewrite(once[name], inline) if name in once else node

    for key in kinds:
        kinds[key] = rewrite(kinds[key], inline)
    for name in defs:
        defs[name] = rewrite(defs[name], inline)
    return defs


# --------------------------------------------------------------------------------------------
# Provenance
# --------------------------------------------------------------------------------------------

def sources_md(kube: dict[str, Any], chaos: dict[str, Any], kyverno: dict[str, Any] | None = None) -> str:
    kube_kinds = ", ".join(kube["kinds"])
    chaos_kinds = ", ".join(k.rsplit("/", 1)[1] for k in chaos["kinds"])
    return f"""# Vendored schemas

Generated by `python tools/vendor_schemas.py` (run from the repository root; `--check` verifies the
files are up to date). Do not edit the JSON files by hand. All are JSON Schema 2020-12 documents
laid out as `{{"$schema", "kinds": {{"<apiVersion>/<kind>": schema}}, "$defs"}}`; every `$ref` is a
local `#/$defs/...` pointer. Runtime use: `itbench_dsl/validate.py`.

## `kubernetes/v1.33-strict.json`

- Upstream: PyPI package [kubernetes-validate](https://github.com/willthames/kubernetes-validate)
  {KUBERNETES_VALIDATE_VERSION}, bundled schemas `kubernetes-json-schema/{KUBERNETES_SCHEMA_FOLDER}`, which are
  derived from the Kubernetes OpenAPI document of v{KUBERNETES_VERSION} (strict variant: objects
  carry `additionalProperties: false`).
- License: Apache-2.0 (Kubernetes and kubernetes-validate), see `LICENSE-APACHE-2.0`.
- Kinds ({len(kube["kinds"])}): {kube_kinds}.
- Transformation: the per-kind schema files are selected by their `x-kubernetes-group-version-kind`
  tag; references to `/api/_definitions.json#/$defs/X` are rewritten to `#/$defs/X` and only the
  transitive closure of referenced definitions ({len(kube["$defs"])} of them) is kept. Removed, as
  they do not constrain values: `description`, `$id`/`$schema` of each file (one `$schema` at the
  top), `x-kubernetes-group-version-kind`, `x-kubernetes-patch-strategy`,
  `x-kubernetes-patch-merge-key`, `x-kubernetes-map-type`, `x-kubernetes-unions`. Everything else
  is kept as is (including `format` and `x-kubernetes-list-type`/`-list-map-keys`).
- Regenerate: `pip install kubernetes-validate=={KUBERNETES_VALIDATE_VERSION} && python tools/vendor_schemas.py`.

## `chaos-mesh/{CHAOS_MESH_VERSION}.json`

- Upstream: [chaos-mesh/chaos-mesh](https://github.com/chaos-mesh/chaos-mesh) `helm/chaos-mesh/crds`,
  commit {CHAOS_MESH_COMMIT} (copy read from `shared/reference/chaos-mesh/crds`, next to this repository).
- License: Apache-2.0, see `LICENSE-APACHE-2.0` (copied from the Chaos Mesh repository).
- Kinds ({len(chaos["kinds"])}, `chaos-mesh.org/{CHAOS_MESH_VERSION}`): {chaos_kinds}.
- Transformation of each CRD's `openAPIV3Schema` (OpenAPI 3.0 structural schema) to JSON Schema:
  - `nullable: true` adds `"null"` to `type` (and to `enum` if any);
  - `x-kubernetes-int-or-string: true` becomes `type: ["integer", "string"]` (its `anyOf` dropped);
  - OpenAPI 3.0 boolean `exclusiveMinimum`/`exclusiveMaximum` become the 2020-12 numeric form;
  - `format` (int32, int64, date-time, byte) is kept as an annotation, not turned into bounds;
  - structural-schema pruning, as enforced by `kubectl apply` strict field validation: an object
    schema with `properties`, no `additionalProperties` and no `x-kubernetes-preserve-unknown-fields`
    gets `additionalProperties: false` (the root object included; `metadata` stays open here:
    the API server validates it as ObjectMeta, and so does `validate.py`, with the schema above);
  - `apiVersion` and `kind` are required and constrained to their exact values;
  - `description`, `default`, `example`, `x-kubernetes-map-type` are removed; any other keyword
    without a known translation (e.g. CEL `x-kubernetes-validations`) stops the script;
  - subschemas repeated across kinds (Schedule and Workflow embed every chaos spec) are stored
    once in `$defs`, named after their first occurrence (e.g. `NetworkChaos.spec`).
- Regenerate: `python tools/vendor_schemas.py --crd-dir <chaos-mesh checkout>/helm/chaos-mesh/crds`.

## `LICENSE-APACHE-2.0`

The Apache License 2.0 text, copied from the Chaos Mesh repository (commit {CHAOS_MESH_COMMIT}).
""" + (kyverno_sources_md(kyverno) if kyverno is not None else "")


def kyverno_sources_md(kyverno: dict[str, Any]) -> str:
    kinds = ", ".join(k.rsplit("/", 1)[1] for k in kyverno["kinds"])
    return f"""
## `{KYVERNO_OUT.as_posix()}`

- Upstream: the JSON Schemas `kyverno.io/clusterpolicy_v1.json` and `kyverno.io/policy_v1.json` of
  [datreeio/CRDs-catalog](https://github.com/datreeio/CRDs-catalog), converted there from the
  [Kyverno](https://github.com/kyverno/kyverno) CRDs' `openAPIV3Schema` (copy read from
  `shared/reference/kyverno/schemas`, next to this repository).
- License: the catalog's MIT license, see `LICENSE-MIT-datree-crds-catalog` (Kyverno itself is Apache-2.0,
  see `LICENSE-APACHE-2.0`).
- Kinds ({len(kyverno["kinds"])}, `kyverno.io/v1`): {kinds}.
- Transformation: the one applied to the Chaos Mesh CRDs above (same code path): `description`,
  `default` and `x-kubernetes-map-type` removed, `additionalProperties: false` where the API server
  prunes unknown fields (the root object included, `metadata` validated as ObjectMeta by
  `validate.py`), `apiVersion` and `kind` required and constrained; the subschemas the two kinds
  share are stored once in `$defs`.
- Regenerate: `python tools/vendor_schemas.py` (reads `shared/reference/kyverno`).
"""


# The SARIF schema is copied unchanged (it is not a Kubernetes schema; `itbench check --format sarif` output
# is validated against it in tests/test_check_formats.py).
SARIF_SOURCES_MD = """
## `sarif/sarif-schema-2.1.0.json`

- Upstream: the official SARIF 2.1.0 JSON Schema (draft-04), [oasis-tcs/sarif-spec](https://github.com/oasis-tcs/sarif-spec)
  `sarif-2.1/schema/sarif-schema-2.1.0.json`, commit e0583813 (copy read from `shared/reference/sarif`, next to
  this repository); its `id` is the errata01 URI on docs.oasis-open.org.
- License: OASIS, see `sarif/LICENSE-OASIS.md` (the repository's LICENSE.md).
- Transformation: none, the file is copied byte for byte. Not used at run time: the tests validate
  `itbench check --format sarif` output against it.
- Regenerate: `cp <sarif-spec checkout>/sarif-2.1/schema/sarif-schema-2.1.0.json itbench_dsl/schemas/sarif/`.
"""


ENGINES_SOURCES_MD = """
## `engines/prometheus-operator-v1.json`, `engines/chainsaw-v1alpha1.json`, `engines/argo-v1alpha1.json`

- Upstream (copies read from `shared/reference/engines`, next to this repository):
  - `monitoring.coreos.com/v1/PrometheusRule`: [datreeio/CRDs-catalog](https://github.com/datreeio/CRDs-catalog)
    `monitoring.coreos.com/prometheusrule_v1.json` (commit 7b1e26ef), converted there from the
    [prometheus-operator](https://github.com/prometheus-operator/prometheus-operator) CRD;
  - `chainsaw.kyverno.io/v1alpha1/Test`: [kyverno/chainsaw](https://github.com/kyverno/chainsaw)
    `.schemas/json/test-chainsaw-v1alpha1.json` (commit 62507786);
  - `argoproj.io/v1alpha1/WorkflowTemplate` and `argoproj.io/v1alpha1/Workflow`: datreeio/CRDs-catalog
    `argoproj.io/workflowtemplate_v1alpha1.json` (commit 7b1e26ef), converted there from the
    [Argo Workflows](https://github.com/argoproj/argo-workflows) CRD; a Workflow's spec is a WorkflowTemplate's,
    so the one schema serves both kinds.
- License: the catalog's MIT license, see `LICENSE-MIT-datree-crds-catalog`; prometheus-operator, Chainsaw and
  Argo Workflows are Apache-2.0, see `LICENSE-APACHE-2.0`.
- Transformation: the CRD-derived schemas go through the Chaos Mesh code path above; Chainsaw's (JSON Schema
  generated from its Go types, already closed with `additionalProperties: false`) only loses its annotations
  (`description`, `default`, `x-kubernetes-*`). `apiVersion` and `kind` are required and constrained; repeated
  subschemas are stored once in `$defs`. Use: `validate.py` (the bundle's `manifests/alert-rules.yaml`, and the
  outputs of `itbench compile --target chainsaw|argo` and `itbench plan`).
- Regenerate: `python tools/vendor_schemas.py` (reads `shared/reference/engines`).
"""


def models_sources_md(istio: dict[str, Any], gateway_api: dict[str, Any]) -> str:
    istio_kinds = ", ".join(istio["kinds"])
    gateway_kinds = ", ".join(gateway_api["kinds"])
    return f"""
## `{ISTIO_OUT.as_posix()}` and `{GATEWAY_API_OUT.as_posix()}`

- Upstream: the npm packages `{ISTIO_PACKAGE[0]}` {ISTIO_PACKAGE[1]} and `{GATEWAY_API_PACKAGE[0]}`
  {GATEWAY_API_PACKAGE[1]} of [tommy351/kubernetes-models-ts](https://github.com/tommy351/kubernetes-models-ts)
  (the `const schema` literal of each `<group>/<version>/<Kind>.js`), generated there from the CRDs of
  [istio/istio](https://github.com/istio/istio) ({ISTIO_CRDS}) and
  [kubernetes-sigs/gateway-api](https://github.com/kubernetes-sigs/gateway-api) ({GATEWAY_API_CRDS}).
- License: the packages are MIT, see `{KUBERNETES_MODELS_LICENSE}` (copied from the packages); the schemas
  derive from the Istio and Gateway API CRDs, Apache-2.0, see `LICENSE-APACHE-2.0`.
- Kinds: {istio_kinds} (`{ISTIO_OUT.as_posix()}`); {gateway_kinds} (`{GATEWAY_API_OUT.as_posix()}`).
- Transformation: the one applied to the Chaos Mesh CRDs above (same code path), after the package's own
  rendering: `metadata` (a `$ref` to the package's ObjectMeta) is left open, `validate.py` checks it as
  ObjectMeta; an object with no declared property (`status`, which the CRDs mark
  `x-kubernetes-preserve-unknown-fields` and the package writes as `properties: {{}}`) stays open;
  `nullable: true` adds `"null"` to `type`; `description` and `default` are removed; `apiVersion` and `kind`
  are required and constrained. The package's generator had already dropped the CRDs' CEL rules
  (`x-kubernetes-validations`), so those are not checked.
- Two deliberate differences from the package, both from newer Istio CRDs:
  - Istio 1.18 serves PeerAuthentication as `security.istio.io/v1beta1` only; Istio 1.22 and later also serve
    `security.istio.io/v1`, with the same schema, which is the one vendored (under `security.istio.io/v1`).
  - `AuthorizationPolicy.spec.targetRef` (attaching a policy to a Gateway API Gateway, as ITBench's
    gateway fault does) came after Istio 1.18: it is added with the constraints of Istio 1.29.2's CRD (as
    the compiled validator of `{ISTIO_PACKAGE[0]}` 3.0.1 states them: `kind` and `name` required, string
    lengths and patterns). Releases after {ISTIO_PACKAGE[1]} ship compiled validators, not schema literals.
- Regenerate: see the `npm pack` commands in the docstring of `tools/vendor_schemas.py`, then
  `python tools/vendor_schemas.py --istio-package <dir>/package --gateway-api-package <dir>/package`.
"""


# --------------------------------------------------------------------------------------------
# Output
# --------------------------------------------------------------------------------------------

def compact_json(data: Any) -> str:
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--k8s-schema-dir", type=Path, help="override the kubernetes-validate schema folder")
    parser.add_argument("--crd-dir", type=Path, default=CHAOS_MESH_CRDS, help="Chaos Mesh CRD folder")
    parser.add_argument("--license", type=Path, default=CHAOS_MESH_LICENSE, help="Apache-2.0 license text")
    parser.add_argument("--istio-package", type=Path,
                        help="unpacked @kubernetes-models/istio package (default: keep the vendored file)")
    parser.add_argument("--gateway-api-package", type=Path,
                        help="unpacked @kubernetes-models/gateway-api package (default: keep the vendored file)")
    parser.add_argument("--check", action="store_true", help="only report whether the files are up to date")
    args = parser.parse_args(argv)

    kube = build_kubernetes(args.k8s_schema_dir or kubernetes_schema_dir())
    chaos = build_chaos_mesh(args.crd_dir)
    kyverno = build_kyverno(KYVERNO_SCHEMAS)
    # the npm packages are read when given; otherwise the vendored files stand as they are
    istio = build_istio(args.istio_package) if args.istio_package else json.loads((OUT_DIR / ISTIO_OUT).read_text())
    gateway_api = (build_gateway_api(args.gateway_api_package) if args.gateway_api_package
                   else json.loads((OUT_DIR / GATEWAY_API_OUT).read_text()))
    models_package = args.istio_package or args.gateway_api_package
    models_license = ((models_package / "LICENSE").read_text() if models_package
                      else (OUT_DIR / KUBERNETES_MODELS_LICENSE).read_text())
    outputs = {
        KUBERNETES_OUT: compact_json(kube),
        CHAOS_MESH_OUT: compact_json(chaos),
        KYVERNO_OUT: compact_json(kyverno),
        ISTIO_OUT: compact_json(istio),
        GATEWAY_API_OUT: compact_json(gateway_api),
        Path("SOURCES.md"): sources_md(kube, chaos, kyverno) + models_sources_md(istio, gateway_api) + SARIF_SOURCES_MD
                              + ENGINES_SOURCES_MD,
        Path("LICENSE-APACHE-2.0"): args.license.read_text(),
        Path("LICENSE-MIT-datree-crds-catalog"): KYVERNO_LICENSE.read_text(),
        Path(KUBERNETES_MODELS_LICENSE): models_license,
    }
    for source, api_version, kinds, out in ENGINE_SCHEMAS:
        outputs[out] = compact_json(build_engine(source, api_version, kinds))

    stale = []
    for rel, text in outputs.items():
        path = OUT_DIR / rel
        if path.exists() and path.read_text() == text:
            continue
        stale.append(rel)
        if not args.check:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
    for rel in outputs:
        state = ("stale" if args.check else "written") if rel in stale else "up to date"
        print(f"{OUT_DIR.relative_to(REPO_ROOT) / rel}: {len(outputs[rel].encode()):,} bytes, {state}")
    return 1 if args.check and stale else 0


if __name__ == "__main__":
    sys.exit(main())
