"""The model of a captured cluster state (standard library only): what the evaluator grades and what the
compiler's self-validation derives, read the same way on both sides.

Values (Kubernetes quantities, Go durations, comparison by meaning), the state itself (`State`: objects
by kind, namespace and name, earlier observations, probe outputs), field paths into an object (`at`,
`lookup`, `walk`), the API server's defaults applied to both sides of a comparison, health (a workload's
readiness, its pods, a Job's completion) and the shapes of Kubernetes objects that grading reads (pod
templates, what they request and which ConfigMaps and Secrets they read, selectors).

A bundle's evaluator.py holds this file's text in place of `evaluator.py`'s `from .state import (...)`
(backends/evaluator_file.py), so nothing here may import another module of the package, and every name
the evaluator uses from here is public.
"""

import base64
import binascii
import json
import re
import sys
import types

MISSING = object()


class InputError(Exception):
    """An input the evaluator cannot use (exit 2)."""


# ---- values ----------------------------------------------------------------------------------------------

_QUANTITY = re.compile(r"^([+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E)?$", re.ASCII)
_SUFFIX = {None: 1, "n": 1e-9, "u": 1e-6, "m": 1e-3, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15,
           "E": 1e18, "Ki": 2 ** 10, "Mi": 2 ** 20, "Gi": 2 ** 30, "Ti": 2 ** 40, "Pi": 2 ** 50, "Ei": 2 ** 60}


def number(value):
    """A Kubernetes quantity or a plain number as a float; None when it is neither."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str) and len(value) < 64:
        match = _QUANTITY.match(value.strip())
        if match:
            return float(match.group(1)) * _SUFFIX[match.group(2)]
    return None


def same(a, b) -> bool:
    """Equality where `1Gi` equals `1024Mi` and `"3"` equals 3."""
    if a == b:
        return True
    if isinstance(a, bool) or isinstance(b, bool):
        return False
    x, y = number(a), number(b)
    return x is not None and y is not None and abs(x - y) <= 1e-9 * max(abs(x), abs(y), 1.0)


def compare(observed, op, expected, vtype=None) -> bool:
    """`observed OP expected` by meaning: quantities as numbers, `in` a list, `matches` a whole-value
    regular expression, `present` any value, `any` always. `vtype` (a predicate's `type`): `duration`
    compares Go durations (`90s` = `1m30s`), `text` compares text exactly (`"01"` is not `"1"`)."""
    if op == "any":
        return True
    if op == "present":
        return observed is not MISSING and not empty(observed)
    if observed is MISSING or isinstance(observed, InvalidValue):
        return False
    if op in ("==", "="):
        return typed_same(observed, expected, vtype)
    if op == "!=":
        return observed is not None and not isinstance(observed, (dict, list)) and not typed_same(observed, expected, vtype)
    if op == "in":
        return isinstance(expected, list) and any(typed_same(observed, e, vtype) for e in expected)
    if op == "matches":
        try:
            return isinstance(observed, (str, int, float)) and re.fullmatch(str(expected), str(observed)) is not None
        except re.error:
            return False
    x, y = (duration(observed), duration(expected)) if vtype == "duration" else (number(observed), number(expected))
    if x is None or y is None:
        return False
    return {"<": x < y, "<=": x <= y, ">": x > y, ">=": x >= y}.get(op, False)


def typed_same(observed, expected, vtype=None) -> bool:
    if vtype == "duration":
        x, y = duration(observed), duration(expected)
        return x is not None and y is not None and abs(x - y) <= 1e-9
    if vtype == "text":
        return isinstance(observed, str) and observed == expected
    return same(observed, expected)


_GO_DURATION = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h)", re.ASCII)
_GO_UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}


def duration(value):
    """Seconds of a Go duration (`1m30s`, `1.5h`, `0`); None for anything else (a bare number included)."""
    if not isinstance(value, str) or len(value) > 64:
        return None
    text = value.strip()
    sign = -1.0 if text.startswith("-") else 1.0
    body = text.lstrip("+-")
    if body == "0":
        return 0.0
    pos, total = 0, 0.0
    for match in _GO_DURATION.finditer(body):
        if match.start() != pos:
            return None
        total += float(match.group(1)) * _GO_UNITS[match.group(2)]
        pos = match.end()
    return sign * total if pos == len(body) and pos else None


def empty(value) -> bool:
    return value is None or value == {} or value == [] or value == ""


def shown(value, limit=80):
    text = "absent" if value is MISSING else json.dumps(value, sort_keys=True)
    return text if len(text) <= limit else text[:limit - 3] + "..."


# ---- the state -----------------------------------------------------------------------------------------


def binary_data(obj):
    """A ConfigMap's `binaryData`, base64-decoded to text: the files the kubelet writes of it beside its
    `data` keys. A value that is no base64 of UTF-8 text is kept as it is, so it cannot equal the text expected."""
    out = {}
    for key, value in (obj.get("binaryData") or {}).items() if isinstance(obj.get("binaryData"), dict) else ():
        try:
            out[key] = base64.b64decode(str(value), validate=True).decode("utf-8")
        except (binascii.Error, ValueError, UnicodeDecodeError):
            out[key] = value
    return out


def decoded_secret(obj):
    """A Secret as its data reads: `data` base64-decoded to text, `stringData` laid over it (as the API
    server merges them), so the evaluator compares what the workload sees, not its encoding."""
    data = {}
    for key, value in (obj.get("data") or {}).items() if isinstance(obj.get("data"), dict) else ():
        try:
            data[key] = base64.b64decode(str(value), validate=True).decode("utf-8")
        except (binascii.Error, ValueError, UnicodeDecodeError):
            data[key] = value  # not base64 text: kept as it is, so it cannot equal the text expected
    if isinstance(obj.get("stringData"), dict):
        data.update(obj["stringData"])
    out = {k: v for k, v in obj.items() if k != "stringData"}
    out["data"] = data
    return out


# The API group of each built-in kind a check may name (core kinds: ""). A capture asks for these
# groups (`kubectl get deployments.apps`); an object of a same-named kind of another group (a custom
# resource `Deployment` of example.com) is another kind, never the one a check names.
KIND_GROUPS = {
    **dict.fromkeys(("Pod", "Service", "ConfigMap", "Secret", "Namespace", "ServiceAccount", "Endpoints",
                     "PersistentVolumeClaim", "PersistentVolume", "Node", "ResourceQuota", "LimitRange"), ""),
    **dict.fromkeys(("Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "ControllerRevision"), "apps"),
    **dict.fromkeys(("Job", "CronJob"), "batch"),
    "HorizontalPodAutoscaler": "autoscaling",
    **dict.fromkeys(("NetworkPolicy", "Ingress", "IngressClass"), "networking.k8s.io"),
    **dict.fromkeys(("Role", "RoleBinding", "ClusterRole", "ClusterRoleBinding"), "rbac.authorization.k8s.io"),
    "StorageClass": "storage.k8s.io",
    "EndpointSlice": "discovery.k8s.io",
    "PodDisruptionBudget": "policy",
    "PriorityClass": "scheduling.k8s.io",
    "ClusterPolicy": "kyverno.io",
    **dict.fromkeys(("Schedule", *(CHAOS_EXPERIMENTS := ("PodChaos", "NetworkChaos", "StressChaos", "IOChaos",
                                                        "HTTPChaos", "DNSChaos", "TimeChaos", "JVMChaos",
                                                        "KernelChaos", "BlockChaos"))), "chaos-mesh.org"),
}


_GROUPS_SEEN = {}  # apiVersion -> its group: a state repeats a handful of apiVersions thousands of times


def api_group(api_version):
    """"apps" of "apps/v1", "" of "v1"."""
    text = str(api_version or "")
    group = _GROUPS_SEEN.get(text)
    if group is None:
        group = text.rpartition("/")[0]
        if len(_GROUPS_SEEN) < 1024:
            _GROUPS_SEEN[text] = group
    return group


def kind_groups(spec):
    """{kind: API group} of every kind this bundle's checks may name: the built-in ones, and the groups
    its references declare (Chaos Mesh, Istio, Kyverno kinds)."""
    groups = dict(KIND_GROUPS)
    for ref in _refs(spec):
        if ref.get("apiVersion"):
            groups[ref["kind"]] = api_group(ref["apiVersion"])
    return groups


def unlisted(items, depth=0):
    """Objects with every `kind: List` (or `*List`: `PolicyReportList`, `ClusterPolicyList`) opened into its
    `items`, as `kubectl get -o json` writes several objects and `kubectl apply` reads them."""
    out = []
    for item in items:
        kind = item.get("kind") if isinstance(item, dict) else None
        if isinstance(kind, str) and kind.endswith("List") and isinstance(item.get("items"), list) and depth < 8:
            out.extend(unlisted(item["items"], depth + 1))
        else:
            out.append(item)
    return out


class State:
    """The snapshot, indexed once: objects by (kind, namespace, name), what was captured, firing alerts.

    With `groups` ({kind: API group}), an object whose apiVersion is of another group than its kind's
    is indexed as `Kind.group`, a kind no check names."""

    def __init__(self, state, groups=None):
        if not isinstance(state, dict):
            raise InputError("the state must be a JSON object with a `resources` List")
        resources = state.get("resources")
        if not isinstance(resources, dict) or not isinstance(resources.get("items"), list):
            raise InputError("the state's `resources` must be a `kubectl get -o json` List (an object with `items`)")
        self.objects = {}
        self.by_kind = {}
        self.captured = set()  # (namespace or "", kind)
        self.names_cache = {}  # id(spec) -> (spec, Names): names_of
        for item in unlisted(resources["items"]):
            if not isinstance(item, dict) or not isinstance(item.get("metadata"), dict):
                raise InputError("every item of the state's `resources` must be a Kubernetes object with metadata")
            meta = item["metadata"]
            kind = str(item.get("kind", ""))
            if groups and kind in groups and "apiVersion" in item and api_group(item["apiVersion"]) != groups[kind]:
                kind = f"{kind}.{api_group(item['apiVersion']) or 'core'}"
            if kind == "Secret":
                item = decoded_secret(item)
            item = image_defaults_dropped(item)  # the image's own program spelled out is the program it runs
            key = (kind, str(meta["namespace"]) if meta.get("namespace") else None, str(meta.get("name", "")))
            if key in self.objects:  # a cluster holds one object of a name: a second one is a forged or merged capture
                raise InputError(f"the state holds {ref_text(as_ref(key))} twice")
            self.objects[key] = item
            self.by_kind.setdefault((key[0], key[1]), []).append(item)
            self.captured.add((key[1] or "", kind))  # an object of a kind there shows the kind was captured
        declared = state.get("captured", [])
        if not isinstance(declared, list) or not all(isinstance(c, str) and "/" in c for c in declared):
            raise InputError("the state's `captured` must be a list of `<namespace>/<Kind>` strings "
                             "(`/<Kind>` for cluster-scoped kinds)")
        for entry in declared:
            namespace, _, kind = entry.rpartition("/")
            self.captured.add((namespace, kind))
        alerts = state.get("alerts")
        self.has_alerts = alerts is not None
        self.firing = {}  # alert name -> the namespaces it fires in (None: an alert with no namespace label)
        self.pending = {}  # the same, of alerts whose condition holds but not yet for their `for` duration
        if alerts is not None:
            data = alerts.get("data") if isinstance(alerts, dict) else None
            items = data.get("alerts") if isinstance(data, dict) else None
            if not isinstance(items, list):
                raise InputError("the state's `alerts` must be Prometheus /api/v1/alerts JSON ({data: {alerts: [...]}})")
            for alert in items:
                phase = alert.get("state", "firing") if isinstance(alert, dict) else None
                if phase in ("firing", "pending"):
                    labels = alert.get("labels") if isinstance(alert.get("labels"), dict) else {}
                    namespace = labels.get("namespace")
                    (self.firing if phase == "firing" else self.pending).setdefault(
                        str(labels.get("alertname", "")), set()).add(str(namespace) if namespace else None)
        reports = state.get("policyReports")
        if isinstance(reports, dict) and isinstance(reports.get("items"), list):
            reports = [reports]  # `kubectl get policyreports -A -o json`: one List
        if reports is not None and not isinstance(reports, list):
            raise InputError("the state's `policyReports` must be a list of PolicyReport objects (or a List of them)")
        self.policy_reports = unlisted(reports) if reports is not None else None
        self.graded_policies = state.get("gradedPolicies")  # CISO: the agent's policies, as a run records them
        self.costs = state.get("costs") if isinstance(state.get("costs"), dict) else {}
        # `probes: {NAME: {exit_code, stdout, stderr}}`: the results of the scenario's probes (docs/evaluator.md)
        probes = state.get("probes")
        if probes is not None and not isinstance(probes, dict):
            raise InputError("the state's `probes` must be a map of probe name to {exit_code, stdout, stderr}")
        self.probes = probes or {}
        # `fixed_at`: when the agent's work ended (RFC 3339); a container's restart from then on is one under the fix
        self.fixed_at = None
        if state.get("fixed_at") is not None:
            self.fixed_at = rfc3339(state["fixed_at"])
            if self.fixed_at is None:
                raise InputError("the state's `fixed_at` must be an RFC 3339 time with a zone (2026-01-01T10:00:00Z)")
        self.observations = _observations(state.get("observations"), self.fixed_at, groups)
        self.incident = _incident(state.get("incident"))
        self._digests_named()

    def _digests_named(self):
        """Each container image pinned by its digest alone (`repo@sha256:D`) that the state's pods show a tag of
        that repository running as (`tag_digests`) read as that tag pinned to it (`repo:tag@sha256:D`): the runtime
        pulls both by the digest alone, so it is the one image the tag ran as (the first tag by name where the
        state shows one digest under several)."""
        named = {}
        for tag, digests in sorted(tag_digests(self).items()):
            for digest in sorted(digests):
                named.setdefault((tag.rpartition(":")[0], digest), tag)
        if not named:
            return
        for key, obj in list(self.objects.items()):
            if not isinstance(obj, dict) or obj.get("kind") not in POD_TEMPLATE_KINDS + ("Pod", "CronJob"):
                continue
            pod = pod_spec(obj)
            pinned = [c for k in CONTAINER_LISTS for c in (pod.get(k) if isinstance(pod.get(k), list) else [])
                      if isinstance(c, dict) and isinstance(c.get("image"), str) and _tagless_pin(c["image"]) in named]
            if not pinned:
                continue
            out = json.loads(json.dumps(obj))
            pod = pod_spec(out)
            for c in [c for k in CONTAINER_LISTS for c in (pod.get(k) if isinstance(pod.get(k), list) else [])]:
                if isinstance(c, dict) and isinstance(c.get("image"), str) and _tagless_pin(c["image"]) in named:
                    c["image"] = named[_tagless_pin(c["image"])] + "@" + image_digest(c["image"])
            self.objects[key] = out
            found = self.by_kind[(key[0], key[1])]
            found[next(i for i, o in enumerate(found) if o is obj)] = out

    def get(self, ref):
        return self.objects.get((ref["kind"], ref.get("namespace") or None, ref["name"]))

    def matching(self, ref):
        """Objects a reference names; a Pod reference is a glob over pod names."""
        if "*" in ref["name"] or "?" in ref["name"]:
            pattern = glob_regex(ref["name"])
            return [o for o in self.by_kind.get((ref["kind"], ref.get("namespace") or None), [])
                    if pattern.fullmatch(o["metadata"].get("name", ""))]
        obj = self.get(ref)
        return [obj] if obj is not None else []

    def has(self, namespace, kind):
        return ((namespace or ""), kind) in self.captured


MAX_OBSERVATIONS = 100  # earlier captures a state may carry


def _incident(value):
    """`incident` (optional): the workloads and pods as the agent found them when it started
    ({"at", "resources": List}), by (kind, namespace, name): what an answer's names may refer to besides
    the final state's objects (a crash-looping pod the fix has since replaced)."""
    if value is None:
        return {}
    resources = value.get("resources") if isinstance(value, dict) else None
    items = resources.get("items") if isinstance(resources, dict) else None
    if not isinstance(items, list) or (value.get("at") is not None and rfc3339(value.get("at")) is None):
        raise InputError("the state's `incident` must be {\"at\": RFC 3339 time, \"resources\": a `kubectl get -o "
                         "json` List}")
    out = {}
    for item in items[:MAX_INCIDENT_OBJECTS]:
        meta = item.get("metadata") if isinstance(item, dict) else None
        if not isinstance(meta, dict):
            raise InputError("every item of the state's `incident` must be a Kubernetes object with metadata")
        key = (str(item.get("kind", "")), str(meta["namespace"]) if meta.get("namespace") else None,
               str(meta.get("name", "")))
        out.setdefault(key, item)
    return out


MAX_INCIDENT_OBJECTS = 100000


def _observations(value, fixed_at, groups):
    """The state's earlier captures (`observations`: [{"at": RFC 3339, "resources": List}], made after the fix,
    oldest first), each indexed as a State dated by the state's `fixed_at`; [] without any."""
    if value is None:
        return []
    if not isinstance(value, list) or len(value) > MAX_OBSERVATIONS:
        raise InputError(f"the state's `observations` must be a list of at most {MAX_OBSERVATIONS} earlier captures "
                         "({at, resources})")
    out = []
    for index, item in enumerate(value):
        at = rfc3339(item.get("at")) if isinstance(item, dict) else None
        if at is None or isinstance(item.get("observations"), list):
            raise InputError(f"the state's observation {index} must be {{\"at\": RFC 3339 time, \"resources\": List}}")
        seen = State({"resources": item.get("resources"), "captured": []}, groups)
        seen.fixed_at = fixed_at
        out.append((at, seen))
    return sorted(out, key=lambda pair: pair[0])


EMPTY_STATE = {"resources": {"kind": "List", "items": []}}


def glob_regex(glob):
    return re.compile("".join(".*" if c == "*" else "." if c == "?" else re.escape(c) for c in glob))


def walk(node, segments):
    """Values at a predicate's path; a key on a list fans out over its elements (`spec.metrics.resource...`).
    Steps: keys, indexes (int), selections [key, value] of the one item whose key holds the value, and
    {"parse": "json"|"yaml"} into text. An InvalidValue when a selection is ambiguous (two items hold the
    value) or the text does not parse: what the path names cannot be told."""
    values = [node]
    for seg in segments:
        found = []
        for value in values:
            if isinstance(seg, dict):
                if isinstance(value, str):
                    parsed = parse_text(value, seg.get("parse"))
                    if isinstance(parsed, InvalidValue):
                        return [parsed]
                    found.append(parsed)
            elif isinstance(seg, list):
                if isinstance(value, list):
                    items = [v for v in value if isinstance(v, dict) and nested(v, str(seg[0])) is not None
                             and same(nested(v, str(seg[0])), seg[1])]
                    if len(items) > 1:
                        return [InvalidValue(f"{len(items)} items have {seg[0]}={seg[1]}")]
                    found.extend(items)
            elif isinstance(seg, int) and not isinstance(seg, bool):
                if isinstance(value, list) and 0 <= seg < len(value):
                    found.append(value[seg])
            elif isinstance(value, dict):
                if seg in value:
                    found.append(value[seg])
            elif isinstance(value, list):
                if isinstance(seg, str) and seg.isdigit() and int(seg) < len(value):
                    found.append(value[int(seg)])
                else:
                    found.extend(v[seg] for v in value if isinstance(v, dict) and seg in v)
        values = found
        if not values:
            return []
    return values


def lookup_bases(obj):
    """Where a predicate's path may start: the object, its spec, its pod spec, each of its containers."""
    spec = obj.get("spec") if isinstance(obj.get("spec"), dict) else {}
    pod = spec.get("template", {}).get("spec", {}) if isinstance(spec.get("template"), dict) else spec
    return [obj, spec, pod] + [c for c in (pod.get("containers") or []) if isinstance(c, dict)]


def lookup(obj, path):
    """The value a predicate or an optimum names: the path from the object, from its spec, or from
    its containers (`resources.requests.memory` on a Deployment). MISSING when absent."""
    for base in lookup_bases(obj):
        values = walk(base, path)
        if values:
            return values[0]
    if "requests" in path:
        # Kubernetes defaults a container's requests to its limits when only limits are set
        return lookup(obj, [("limits" if seg == "requests" else seg) for seg in path])
    return MISSING


# keys that identify the items of a list of objects (the compiler's backends/evaluator.IDENTITY_KEYS)
IDENTITY_KEYS = ("name", "containerPort", "port", "mountPath", "resource.name", "pods.metric.name",
                 "external.metric.name", "object.metric.name", "ip", "key", "topologyKey", "host", "path")


def nested(item, key):
    value = item
    for part in key.split("."):
        if not isinstance(value, dict) or part not in value:
            return None
        value = value[part]
    return value


def identity_key(*lists):
    """The key that tells the items of each of these lists apart (present, scalar and unique in each), if
    any (the compiler's diff and the runtime's comparison share it)."""
    if not lists or any(not items or not all(isinstance(i, dict) for i in items) for items in lists):
        return None
    for key in IDENTITY_KEYS:
        if all(_identifies(items, key) for items in lists):
            return key
    return None


def _identifies(items, key):
    values = [nested(i, key) for i in items]
    return all(v is not None and not isinstance(v, (dict, list)) for v in values) and \
        len(set(map(str, values))) == len(values)


def parse_text(text, form):
    """JSON or YAML held in a string (a ConfigMap's value), as data; InvalidValue when it does not parse."""
    if form == "yaml":
        reader = yaml_reader()
        if reader is None:
            raise InputError("this evaluator reads YAML held in a ConfigMap but carries no YAML reader")
        try:
            documents = reader.load_all(text)
        except (ValueError, RecursionError):
            return InvalidValue("not valid YAML (as the evaluator reads it)")
        return documents[0] if len(documents) == 1 else InvalidValue("not one YAML document")
    try:
        return json.loads(text, parse_int=json_int)
    except (ValueError, RecursionError):
        return InvalidValue("not valid JSON")


def yaml_reader():
    """The YAML reader: the one embedded in a bundle's evaluator.py, or the package's own (in process)."""
    reader = embedded_module("yaml")
    if reader is None and __package__:
        from . import miniyaml as reader
    return reader


def at(obj, path):
    """The value at a change's path: keys, [key, value] selectors of list items by identity, and
    {"parse": "json"} steps into JSON held in a string. MISSING when absent; a string that should hold
    JSON and does not gives an InvalidValue."""
    node = obj
    for seg in path:
        if isinstance(seg, dict):
            if not isinstance(node, str):
                return MISSING
            node = parse_text(node, seg.get("parse"))
            if isinstance(node, InvalidValue):
                return node
        elif isinstance(seg, list) and isinstance(node, list):
            found = [v for v in node if isinstance(v, dict) and str(nested(v, seg[0])) == str(seg[1])]
            node = found[0] if len(found) == 1 else MISSING
        elif isinstance(seg, str) and isinstance(node, dict):
            node = node.get(seg, MISSING)
        else:
            return MISSING
        if node is MISSING:
            return MISSING
    return node


class InvalidValue:
    def __init__(self, why):
        self.why = why


def owns(expected, observed, key=None):
    """Whether `observed` holds what `expected` declares: every declared key with a value it owns (the
    API server's defaults and additions are not compared), list items matched by identity, scalars by
    meaning, container images as one image however spelled (`nginx` = `docker.io/library/nginx:latest`).
    A declared null is a field that must be absent or empty (a program with no command of its own)."""
    if expected is None:
        return empty(observed)
    if isinstance(expected, dict):
        if not isinstance(observed, dict):
            return False
        return all(owns(v, observed[k], k) if k in observed else empty(v) for k, v in expected.items())
    if isinstance(expected, list):
        if not isinstance(observed, list):
            return False
        ident = identity_key(expected)
        if ident is not None and identity_key(observed) == ident:
            index = {str(nested(o, ident)): o for o in observed}
            return all(str(nested(e, ident)) in index and owns(e, index[str(nested(e, ident))]) for e in expected)
        return len(expected) == len(observed) and all(owns(e, o) for e, o in zip(expected, observed))
    if key == "image" and isinstance(expected, str) and isinstance(observed, str):
        return same_image(expected, observed)
    return same(expected, observed)


_DIGEST = re.compile(r"@[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}$")


def image_ref(text):
    """A container image reference in its one full spelling, as the container runtime resolves it: a name
    without a registry is Docker Hub's (`docker.io`, `index.docker.io` its old name), a Docker Hub name of
    one part is under `library/`, and a reference with neither tag nor digest is `:latest`. So `nginx`,
    `nginx:latest` and `docker.io/library/nginx:latest` are one image; `nginx:1.25` is another."""
    text = text.strip()
    digest = ""
    match = _DIGEST.search(text)
    if match:
        text, digest = text[:match.start()], match.group(0)
    first, slash, rest = text.partition("/")
    if slash and ("." in first or ":" in first or first == "localhost" or first != first.lower()):
        domain, remainder = first, rest
    else:
        domain, remainder = "docker.io", text
    if domain == "index.docker.io":
        domain = "docker.io"
    name, colon, tag = remainder.rpartition(":") if ":" in remainder.rpartition("/")[2] else (remainder, "", "")
    if domain == "docker.io" and "/" not in name:
        name = "library/" + name
    if not colon and not digest:
        tag, colon = "latest", ":"
    return f"{domain}/{name}{colon}{tag}{digest}"


def same_image(a, b):
    """Whether two image references are one image: one spelling (image_ref), or one tag where a single side
    pins it to a digest (`repo:tag@sha256:...` for `repo:tag`). The runtime pulls such a reference by its
    digest, and a state cannot say which digest a tag names (a pod's imageID shows the pinned one), so the
    digest is taken as the tag's. Two digests are compared as digests; a digest without a tag is no tag's."""
    a, b = image_ref(a), image_ref(b)
    if a == b:
        return True
    (a_name, a_at, _), (b_name, b_at, _) = a.partition("@"), b.partition("@")
    return a_at != b_at and a_name == b_name and ":" in a_name.rpartition("/")[2]


def _tagless_pin(image):
    """(repository, digest) of an image reference pinned by its digest without a tag (`repo@sha256:D`), else None."""
    ref = image_ref(image)
    name, at, digest = ref.partition("@")
    if not at or ":" in name.rpartition("/")[2]:
        return None
    return name, digest


def image_digest(text):
    """The digest an image reference names (`nginx:1.25@sha256:...`), or a container status's `imageID` with its
    repository (`docker.io/library/nginx@sha256:...`, `docker-pullable://nginx@sha256:...`); None for one that
    names none (a bare image id, `sha256:...`, names the image's config, not what a reference pins)."""
    match = _DIGEST.search(text.strip()) if isinstance(text, str) else None
    return match.group(0)[1:] if match else None


def tag_digests(state):
    """{image reference named by its tag alone (as image_ref spells it): the digests the state's pods show it
    running as}: each container status's `imageID` where the container's spec names its image without a digest
    (the runtime resolved the tag when it pulled it; a tag re-pushed since shows two), of the pods of the state,
    of its `incident` (the pods the agent found, the healthy ones a rollout had not yet replaced among them) and
    of its earlier captures. Empty where none holds an `imageID` (an offline state)."""
    cached = getattr(state, "_tag_digests", None)
    if cached is not None:
        return cached
    out = {}
    pods = [p for (kind, _), found in state.by_kind.items() if kind == "Pod" for p in found]
    pods += [p for key, p in (getattr(state, "incident", None) or {}).items() if key[0] == "Pod"]
    pods += [p for _, seen in getattr(state, "observations", None) or () for (kind, _), found in seen.by_kind.items()
             if kind == "Pod" for p in found]
    for pod in pods:
        if isinstance(pod, dict):
            spec, status = _dict(pod.get("spec")), _dict(pod.get("status"))
            images = {c.get("name"): c.get("image") for key in CONTAINER_LISTS
                      for c in (spec.get(key) if isinstance(spec.get(key), list) else []) if isinstance(c, dict)}
            for s in [s for key in ("containerStatuses", "initContainerStatuses")
                      for s in (status.get(key) if isinstance(status.get(key), list) else [])]:
                image = images.get(s.get("name")) if isinstance(s, dict) else None
                digest = image_digest(s.get("imageID")) if isinstance(image, str) else None
                if digest and image_digest(image) is None:
                    out.setdefault(image_ref(image), set()).add(digest)
    state._tag_digests = out
    return out


# What the API server fills in for a pod template field left out: a field a fault added is gone again
# when it is absent, empty, or this default.
SERVER_DEFAULTS = {
    "dnsPolicy": "ClusterFirst", "restartPolicy": "Always", "schedulerName": "default-scheduler",
    "terminationGracePeriodSeconds": 30, "priorityClassName": "", "priority": 0, "enableServiceLinks": True,
    "hostNetwork": False, "hostPID": False, "hostIPC": False, "shareProcessNamespace": False,
    "preemptionPolicy": "PreemptLowerPriority",
}

# ---- the API server's defaults: one model, applied to both sides of a comparison --------------------------
# Each shape: the values the API server sets on a field left out (k8s.io/kubernetes pkg/apis/core/v1 and
# apps/v1 defaults.go, and the `+default` markers of k8s.io/api), and the shapes of the fields it holds
# (a list of one shape: its items). A fault that leaves a field at what the server would have put there
# anyway has not changed it; a fix that spells out a default has not changed it either.
_PROBE = {"defaults": {"timeoutSeconds": 1, "periodSeconds": 10, "successThreshold": 1, "failureThreshold": 3},
          "fields": {"httpGet": "httpGet", "grpc": "grpc"}}
# The fields of a pod spec, beside its containers, that change what its pods do: how they resolve names, whose
# network, processes and identity they run with, how long they may run at all (`activeDeadlineSeconds`: the
# kubelet kills the pod that long after it started, and nothing recreates a bare pod, so a pod set right in
# place with a deadline its healthy spec lacks looks healthy only until then), whether the kubelet restarts its
# containers when they exit (`restartPolicy`: a bare pod recreated with Never or OnFailure stays down once its
# server exits, and a Job's pods retry or not by it). Each with what the API server
# (or the pod's admission) puts there when it is left out (None: nothing); a workload keeps them at their
# healthy values (health.program, health.application), read with these defaults on both sides.
POD_BEHAVIOUR = {"dnsPolicy": "ClusterFirst", "dnsConfig": None, "hostNetwork": False, "hostPID": False,
                 "hostIPC": False, "shareProcessNamespace": False, "hostAliases": None,
                 "serviceAccountName": "default", "activeDeadlineSeconds": None,
                 "restartPolicy": "Always"}

# The lists of a pod spec that hold containers: the init containers, run first, then the containers proper.
CONTAINER_LISTS = ("initContainers", "containers")


JOB_TEMPLATE = ["spec", "jobTemplate", "spec", "template"]  # where a CronJob keeps its pod template


def _dict(value):
    return value if isinstance(value, dict) else {}


def as_template(obj):
    """A bare Pod, or a CronJob, seen as a workload whose pod template is `spec.template` (a Pod's labels and
    spec; a CronJob's job template's pod template, its own spec beside), so that what a workload must keep
    reads them alike; any other object as it is."""
    if not isinstance(obj, dict) or obj.get("kind") not in ("Pod", "CronJob"):
        return obj
    if obj["kind"] == "CronJob":
        spec = _dict(obj.get("spec"))
        return {**obj, "spec": {**spec, "template": _dict(_dict(_dict(spec.get("jobTemplate")).get("spec")).get("template"))}}
    meta = _dict(obj.get("metadata"))
    labels = {"labels": meta["labels"]} if isinstance(meta.get("labels"), dict) else {}
    return {**obj, "spec": {"template": {"metadata": labels, "spec": obj.get("spec") or {}}}}


def template_path(kind, path):
    """A path into a bare Pod (`spec...`, `metadata.labels...`) or into a CronJob's job template as the same path
    into its `as_template` view; a workload's path as it is."""
    if kind == "CronJob" and list(path[:len(JOB_TEMPLATE)]) == JOB_TEMPLATE:
        return ["spec", "template", *path[len(JOB_TEMPLATE):]]
    if kind != "Pod" or not path:
        return list(path)
    if path[0] == "spec":
        return ["spec", "template", "spec", *path[1:]]
    if path[0] == "metadata" and path[1:2] == ["labels"]:
        return ["spec", "template", "metadata", *path[1:]]
    return list(path)


def renamed_containers(healthy, observed):
    """A pod spec's container list `observed` with one container given back the healthy name it stands for.
    Kubernetes identifies a container by its name within its pod only (unique among the pod's containers; the
    kubelet keys its status by it), and nothing outside the pod reaches a container through it: a Service, an
    endpoint or a probe goes to a port. So where exactly one of the healthy names `healthy` is gone and exactly
    one container bears a name that is none of them (`kubectl run app` names its container `app`), that
    container is the one the gone name addressed. The list as it is otherwise (two renamed are ambiguous)."""
    if not isinstance(observed, list) or not isinstance(healthy, list):
        return observed
    have = {str(c.get("name")) for c in observed if isinstance(c, dict)}
    gone = [str(n) for n in healthy if str(n) not in have]
    strays = [i for i, c in enumerate(observed) if isinstance(c, dict) and str(c.get("name")) not in map(str, healthy)]
    if len(gone) != 1 or len(strays) != 1:
        return observed
    return [{**c, "name": gone[0]} if i == strays[0] else c for i, c in enumerate(observed)]


def containers_named(obj, healthy):
    """A Pod or a workload with each container list of its pod spec read through `renamed_containers`
    (`healthy`: {list: the healthy container names}); the object itself where nothing is renamed."""
    if not isinstance(obj, dict) or not healthy:
        return obj
    spec = pod_spec(obj)
    renamed = {k: renamed_containers(healthy.get(k), spec.get(k)) for k in CONTAINER_LISTS if healthy.get(k)}
    renamed = {k: v for k, v in renamed.items() if v is not spec.get(k)}
    if not renamed:
        return obj
    return with_pod_spec(obj, {**spec, **renamed})


def with_pod_spec(obj, spec):
    """A Pod or a workload (a CronJob's in its job template) with its pod spec replaced by `spec`."""
    if obj.get("kind") == "Pod":
        return {**obj, "spec": spec}
    path = JOB_TEMPLATE if obj.get("kind") == "CronJob" else ["spec", "template"]
    node = spec
    for depth in range(len(path), 0, -1):  # rebuilt outward: the object given is left as it is
        held = obj
        for key in path[:depth]:
            held = _dict(held.get(key))
        node = {**held, "spec" if depth == len(path) else path[depth]: node}
    return {**obj, path[0]: node}


def kept_names(keep):
    """The healthy container names of each container list a `programs` entry's `keep` holds."""
    pod = ((keep.get("spec") or {}).get("template") or {}).get("spec") or {}
    return {k: [c.get("name") for c in pod[k] if isinstance(c, dict)] for k in CONTAINER_LISTS
            if isinstance(pod.get(k), list)}


DEFAULT_SHAPES = {
    "probe": _PROBE,
    "httpGet": {"defaults": {"path": "/", "scheme": "HTTP"}},
    "grpc": {"defaults": {"service": ""}},
    "containerPort": {"defaults": {"protocol": "TCP"}},
    "servicePort": {"defaults": {"protocol": "TCP"}},
    "container": {"defaults": {"terminationMessagePath": "/dev/termination-log", "terminationMessagePolicy": "File"},
                  "fields": {"livenessProbe": "probe", "readinessProbe": "probe", "startupProbe": "probe",
                             "ports": ["containerPort"]}},
    "volume": {"fields": {"secret": "modeVolume", "configMap": "modeVolume", "downwardAPI": "modeVolume",
                          "projected": "modeVolume"}},
    "modeVolume": {"defaults": {"defaultMode": 420}},
    "podSpec": {"defaults": {**SERVER_DEFAULTS, "securityContext": {}},
                "fields": {"containers": ["container"], "initContainers": ["container"], "volumes": ["volume"]}},
    "podTemplate": {"fields": {"spec": "podSpec"}},
    "Deployment.spec": {"defaults": {"replicas": 1, "revisionHistoryLimit": 10, "progressDeadlineSeconds": 600},
                        "fields": {"template": "podTemplate", "strategy": "deploymentStrategy"}},
    "deploymentStrategy": {"defaults": {"type": "RollingUpdate"}, "fields": {"rollingUpdate": "rollingDeployment"}},
    "rollingDeployment": {"defaults": {"maxSurge": "25%", "maxUnavailable": "25%"}},
    "StatefulSet.spec": {"defaults": {"replicas": 1, "revisionHistoryLimit": 10, "podManagementPolicy": "OrderedReady"},
                         "fields": {"template": "podTemplate", "updateStrategy": "statefulStrategy"}},
    "statefulStrategy": {"defaults": {"type": "RollingUpdate"}, "fields": {"rollingUpdate": "rollingStateful"}},
    "rollingStateful": {"defaults": {"partition": 0}},
    "DaemonSet.spec": {"defaults": {"revisionHistoryLimit": 10}, "fields": {"template": "podTemplate"}},
    "Pod.spec": {"defaults": {**SERVER_DEFAULTS, "securityContext": {}},
                 "fields": {"containers": ["container"], "initContainers": ["container"], "volumes": ["volume"]}},
    "Service.spec": {"defaults": {"type": "ClusterIP", "sessionAffinity": "None"}, "fields": {"ports": ["servicePort"]}},
    "Secret": {"defaults": {"type": "Opaque"}},
}


def reached_from(starts, edges) -> set:
    """The nodes `edges` (pairs) lead to from `starts`, these included."""
    reached = set(starts)
    grew = True
    while grew:
        grew = False
        for a, b in edges:
            if a in reached and b not in reached:
                reached.add(b)
                grew = True
    return reached


def compared(observed, pred, where: str):
    """(whether the observed value passes the predicate's comparison, the detail): images compared as one
    reference however spelled (`redis:7.2` is `docker.io/library/redis:7.2`)."""
    op, value = pred["op"], pred["value"]
    leaf = next((s for s in reversed(pred["path"]) if isinstance(s, str)), None)
    if leaf == "image" and op in ("==", "!=", "in") and isinstance(observed, str) and pred.get("type") != "text":
        observed = image_ref(observed)
        value = [image_ref(v) if isinstance(v, str) else v for v in value] if isinstance(value, list) else \
            image_ref(value) if isinstance(value, str) else value
        listed = value if isinstance(value, list) else [value] if op != "in" else []
        hit = any(isinstance(v, str) and same_image(v, observed) for v in listed)  # a tag pinned to a digest too
        ok = (not hit) if op == "!=" else hit
        return ok, f"{where} is {shown(observed)}, wants {op} {shown(value)}"
    ok = compare(observed, op, value, pred.get("type"))
    return ok, f"{where} is {shown(observed)}, wants {op} {shown(value)}"

def _shape_at(kind, path):
    """The shape of the value at `path` of an object of `kind` (None: one the model does not know); a list
    of one shape is returned as the list."""
    shape = {"fields": {"spec": f"{kind}.spec"}} if f"{kind}.spec" in DEFAULT_SHAPES else DEFAULT_SHAPES.get(kind)
    for seg in path:
        if isinstance(shape, list):
            if not isinstance(seg, list) and not (isinstance(seg, int) and not isinstance(seg, bool)):
                return None
            shape = DEFAULT_SHAPES.get(shape[0])
            continue
        if not isinstance(shape, dict) or not isinstance(seg, str):
            return None
        sub = (shape.get("fields") or {}).get(seg)
        shape = [sub[0]] if isinstance(sub, list) else DEFAULT_SHAPES.get(sub) if sub else None
    return shape


def default_at(kind, path):
    """What the API server puts at `path` of an object of `kind` when it is left out; MISSING when nothing."""
    if not path or not isinstance(path[-1], str):
        return MISSING
    parent = _shape_at(kind, path[:-1])
    if isinstance(parent, dict) and path[-1] in (parent.get("defaults") or {}):
        return parent["defaults"][path[-1]]
    return MISSING


def with_defaults(value, shape):
    """A copy of `value` with the API server's defaults of `shape` filled in where it leaves them out."""
    if isinstance(shape, list):
        return [with_defaults(v, DEFAULT_SHAPES.get(shape[0])) for v in value] if isinstance(value, list) else value
    if not isinstance(shape, dict) or not isinstance(value, dict):
        return value
    out = dict(value)
    for k, v in (shape.get("defaults") or {}).items():
        if k not in out or out[k] is None:
            out[k] = v
    if shape is DEFAULT_SHAPES["container"] and "imagePullPolicy" not in out and isinstance(out.get("image"), str):
        out["imagePullPolicy"] = "Always" if image_ref(out["image"]).endswith(":latest") else "IfNotPresent"
    if shape is DEFAULT_SHAPES["servicePort"] and out.get("targetPort") in (None, 0, "") and "port" in out:
        out["targetPort"] = out["port"]
    for k, sub in (shape.get("fields") or {}).items():
        if k in out:
            out[k] = with_defaults(out[k], [sub[0]] if isinstance(sub, list) else DEFAULT_SHAPES.get(sub))
    return out


def defaulted(value, kind, path):
    """The value at `path` of an object of `kind` as the API server stores it: its default when left out,
    else the value with the defaults of what it holds filled in."""
    if value is MISSING or value is None:
        return default_at(kind, path)
    if isinstance(value, (dict, list)):
        return with_defaults(value, _shape_at(kind, path))
    return value


def gone(observed, path, kind=None):
    if observed is MISSING or empty(observed):
        return True
    if kind is not None and default_at(kind, path) is not MISSING:
        return same(observed, default_at(kind, path))
    last = next((s for s in reversed(path) if isinstance(s, str)), None)
    return last in SERVER_DEFAULTS and same(observed, SERVER_DEFAULTS[last])


def show_path(path):
    parts = []
    for s in path:
        if isinstance(s, list):
            parts.append(f"[{s[0]}={s[1]}]")
        elif isinstance(s, int) and not isinstance(s, bool):
            parts.append(f"[{s}]")
        elif isinstance(s, dict):
            parts.append("(json)")
        else:
            parts.append(str(s))
    return ".".join(parts)


def ref_text(ref):
    return f"{ref.get('namespace') or ''}/{ref['kind']}/{ref['name']}"


def terminating(obj):
    """An object the API server is deleting (`metadata.deletionTimestamp`): it still acts until its
    finalizers let it go, and it is no fix."""
    return bool((obj.get("metadata") or {}).get("deletionTimestamp"))


def _instant(text):
    """An RFC 3339 time of the API server (`2026-01-02T03:04:05Z`) as seconds, None when it is no such time."""
    import datetime

    if not isinstance(text, str):
        return None
    try:
        return datetime.datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def job_stalled(job):
    """Whether a Job (or a CronJob's job template's spec, `job` being that spec's holder) starts no pod: created
    suspended (`spec.suspend`, or its `Suspended` condition True) or at `parallelism: 0` (the Jobs
    documentation: it creates no pod until resumed)."""
    spec = job.get("spec") if isinstance(job.get("spec"), dict) else {}
    if spec.get("suspend") is True or number(spec.get("parallelism")) == 0:
        return True
    status = job.get("status") if isinstance(job.get("status"), dict) else {}
    return any(isinstance(c, dict) and c.get("type") == "Suspended" and c.get("status") == "True"
               for c in status.get("conditions") or [])


def run_in_progress(obj, state=None):
    """Whether a CronJob has a run in progress: a Job in its `status.active` that runs a pod. Its Jobs are made
    from its job template, so one created suspended or at `parallelism: 0` (`job_stalled`) runs nothing, and
    with `concurrencyPolicy: Forbid` blocks every later run; a Job of `status.active` the state holds is read
    itself, one it does not hold is taken as running."""
    status = obj.get("status") if isinstance(obj.get("status"), dict) else {}
    active = [a for a in status.get("active") or [] if isinstance(a, dict)]
    if not active or job_stalled(_dict(_dict(obj.get("spec")).get("jobTemplate"))):
        return False
    if state is None:
        return True
    namespace = _dict(obj.get("metadata")).get("namespace")
    for ref in active:
        job = state.objects.get(("Job", ref.get("namespace") or namespace, str(ref.get("name"))))
        if job is None or not job_stalled(job):
            return True
    return False


def job_complete(obj, fixed_at=None, state=None):
    """`complete`: a Job finished, as `kubectl wait --for=condition=complete` judges it (its Complete
    condition True; failing that, at least its completions succeeded, one when unset) and not Failed; a
    CronJob whose last scheduled run succeeded (`status.lastSuccessfulTime` at or after
    `lastScheduleTime`; a CronJob that never succeeded is not complete). The controller sets
    `lastScheduleTime` when it starts a run and `lastSuccessfulTime` when one finishes, so a run in progress
    (`status.active`, `run_in_progress`: a Job that starts a pod) after a success at or after the fix (`fixed_at`,
    a timestamp) is no failure: the last finished run succeeded under the fix. Nothing being deleted is."""
    if terminating(obj):
        return False
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    if obj.get("kind") == "CronJob":
        succeeded, scheduled = _instant(status.get("lastSuccessfulTime")), _instant(status.get("lastScheduleTime"))
        if succeeded is None:
            return False
        running = run_in_progress(obj, state) and fixed_at is not None and succeeded >= fixed_at
        return scheduled is None or succeeded >= scheduled or running
    conditions = [c for c in status.get("conditions") or [] if isinstance(c, dict)]
    if any(c.get("type") == "Failed" and c.get("status") == "True" for c in conditions):
        return False
    if any(c.get("type") == "Complete" and c.get("status") == "True" for c in conditions):
        return True
    want = number(spec.get("completions", 1))
    done = number(status.get("succeeded", 0))
    return want is not None and done is not None and done >= max(want, 1)


def workload_ready(obj, zero_ok=False):
    """A Pod running and ready; a workload whose rollout is complete, as `kubectl rollout status` judges
    it: its controller has observed the current spec (`observedGeneration`), every desired replica is
    updated, ready and available, and no replica of an older spec is left; a DaemonSet with every
    scheduled pod updated and available. Nothing being deleted is ready. Counts the API server leaves
    out are zero (it omits zero counts). Zero desired replicas is ready only when `zero_ok` (a scope
    asks nothing of it; a workload a check names must run)."""
    if terminating(obj):
        return False
    kind = obj.get("kind")
    if kind == "Pod":
        return pod_ready(obj)
    spec, status, meta = obj.get("spec") or {}, obj.get("status") or {}, obj.get("metadata") or {}
    generation = number(meta.get("generation"))
    if generation is not None and (number(status.get("observedGeneration", 0)) or 0) < generation:
        return False  # the status describes an older spec

    def count(key):
        value = number(status.get(key, 0))
        return -1 if value is None else value

    want = number(status.get("desiredNumberScheduled", 0) if kind == "DaemonSet" else spec.get("replicas", 1))
    if want is None or want < 0:
        return False
    if want == 0:
        return zero_ok
    if kind == "DaemonSet":
        return all(count(k) >= want for k in ("numberReady", "updatedNumberScheduled", "numberAvailable"))
    if count("readyReplicas") < want:
        return False
    if kind == "Deployment":
        progressing = [c for c in status.get("conditions") or [] if isinstance(c, dict) and c.get("type") == "Progressing"]
        if any(c.get("reason") == "ProgressDeadlineExceeded" for c in progressing):
            return False
        updated = count("updatedReplicas")
        return updated >= want and count("replicas") <= updated and count("availableReplicas") >= want
    if kind == "StatefulSet":
        # every pod at the current revision, whatever the strategy: a rollout staged by a partition or left to
        # OnDelete keeps pods of the older (faulty) spec running, and ready
        if count("updatedReplicas") < want:
            return False
        strategy = spec.get("updateStrategy") or {}
        revisions = status.get("currentRevision"), status.get("updateRevision")
        # the controller moves currentRevision to updateRevision only under RollingUpdate (completeRollingUpdate);
        # under OnDelete the pods' own revisions say it (stale_pods)
        return strategy.get("type") == "OnDelete" or None in revisions or revisions[0] == revisions[1]
    return True


REVISION_LABEL = "controller-revision-hash"


def workload_pods(obj, state):
    """The pods a Deployment's ReplicaSets or a StatefulSet own (owns_pod), but those leaving or replaced."""
    meta = obj.get("metadata") or {}
    # asked by many checks of one state, for the same object: found once (a state is not changed once read)
    made = state.__dict__.setdefault("_workload_pods", {}) if hasattr(state, "__dict__") else {}
    key = (obj.get("kind"), meta.get("namespace"), meta.get("name"))
    if key in made and (made[key][0] is obj or made[key][0] == obj):
        return list(made[key][1])
    pods = [pod for pod in state.by_kind.get(("Pod", meta.get("namespace") or None), [])
            if not terminating(pod) and not replaced(pod) and owns_pod(obj, pod)]
    made[key] = (obj, pods)
    return list(pods)


def owns_pod(obj, pod):
    """Whether a Deployment (through its ReplicaSet) or a StatefulSet owns a pod: by owner reference, a pod
    without one by its name, `<statefulset>-<n>`, `<deployment>-<hash>-<suffix>`."""
    name, kind = str((obj.get("metadata") or {}).get("name", "")), obj.get("kind")
    pod_meta = pod.get("metadata") or {}
    owners = [o for o in pod_meta.get("ownerReferences") or [] if isinstance(o, dict) and o.get("controller")]
    labels = pod_meta.get("labels") if isinstance(pod_meta.get("labels"), dict) else {}
    if owners:
        owner = owners[0]
        return (kind == "StatefulSet" and owner.get("kind") == "StatefulSet" and owner.get("name") == name) or \
            (kind == "Deployment" and owner.get("kind") == "ReplicaSet"
             and owner.get("name") == f"{name}-{labels.get('pod-template-hash', '')}")
    pod_name = str(pod_meta.get("name", ""))
    return re.fullmatch(re.escape(name) + (r"-[0-9]+" if kind == "StatefulSet" else r"-[a-z0-9]+-[a-z0-9]+"),
                        pod_name) is not None


def pod_unstable(pod, since=None, earlier=()):
    """Why a pod is not stable (None when it is): a container waiting to restart (CrashLoopBackOff), or one
    that restarted under the fix, whatever its exit code (a server that exits 0 and is restarted is no more
    stable than one that crashes): its last termination finished at or after `since` (when the agent's work
    ended, the state's `fixed_at`, to the second), or its `restartCount` grew since an earlier capture of
    the same pod (`earlier`, the state's observations, made after the fix); without `since`, any last
    termination counts, since the state cannot date it before the fix."""
    status = pod.get("status") or {}
    before = {}
    for seen in earlier:
        statuses = ((seen.get("status") or {}) if isinstance(seen.get("status"), dict) else {}).get("containerStatuses")
        for c in statuses if isinstance(statuses, list) else []:
            if isinstance(c, dict) and number(c.get("restartCount")) is not None:
                before.setdefault(str(c.get("name")), number(c.get("restartCount")))
    for c in status.get("containerStatuses") or []:
        if not isinstance(c, dict):
            continue
        waiting = ((c.get("state") or {}).get("waiting") or {}) if isinstance(c.get("state"), dict) else {}
        if isinstance(waiting, dict) and waiting.get("reason") in ("CrashLoopBackOff", "RunContainerError"):
            return f"container {c.get('name')} {waiting['reason']}"
        count = number(c.get("restartCount"))
        if str(c.get("name")) in before and count is not None and count > before[str(c.get("name"))]:
            return f"container {c.get('name')} restarted while observed after the fix (restart count " \
                   f"{before[str(c.get('name'))]:g}, then {count:g})"
        last = (c.get("lastState") or {}).get("terminated") if isinstance(c.get("lastState"), dict) else None
        if not isinstance(last, dict):
            continue
        finished = rfc3339(last.get("finishedAt"))
        reason = last.get("reason") or f"exit code {last.get('exitCode')}"
        if since is not None:
            if finished is None or finished >= int(since):
                return f"container {c.get('name')} restarted after the fix ({reason}, restart count {c.get('restartCount')})"
        else:
            return f"container {c.get('name')} restarted ({reason}, restart count {c.get('restartCount')}); " \
                   "the state has no `fixed_at` to date it before the fix"
    return None


def earlier_pods(pod, state):
    """The same pod (by namespace, name and uid where both give one) in the state's earlier captures."""
    meta = pod.get("metadata") or {}
    key = ("Pod", str(meta["namespace"]) if meta.get("namespace") else None, str(meta.get("name", "")))
    out = []
    for _, seen in state.observations:
        other = seen.objects.get(key)
        uid = (other.get("metadata") or {}).get("uid") if other is not None else None
        if other is not None and (not uid or not meta.get("uid") or uid == meta.get("uid")):
            out.append(other)
    return out


def settled_problem(obj, state):
    """Why a workload whose status is ready is not settled on the fix (None when it is): a pod of a StatefulSet
    not at its update revision, or a pod that is not stable (pod_unstable)."""
    update = (obj.get("status") or {}).get("updateRevision") if obj.get("kind") == "StatefulSet" else None
    for pod in workload_pods(obj, state):
        pod_meta = pod.get("metadata") or {}
        revision = (pod_meta.get("labels") or {}).get(REVISION_LABEL) if isinstance(pod_meta.get("labels"), dict) else None
        if update and revision is not None and revision != update:
            return f"pod {pod_meta.get('name')} runs revision {revision}, not the update revision {update}"
        why = pod_unstable(pod, state.fixed_at, earlier_pods(pod, state))
        if why:
            return f"pod {pod_meta.get('name')}: {why}"
    return replaced_since(obj, state)


def _pod_times(pod):
    """Every time a pod's status dates: its start, its containers' starts and ends, its conditions' changes."""
    status = pod.get("status") if isinstance(pod.get("status"), dict) else {}
    times = [status.get("startTime")]
    for c in (status.get("containerStatuses") or []) + (status.get("initContainerStatuses") or []):
        for state in (c.get("state"), c.get("lastState")) if isinstance(c, dict) else ():
            for part in (state or {}).values() if isinstance(state, dict) else ():
                if isinstance(part, dict):
                    times += [part.get("startedAt"), part.get("finishedAt")]
    times += [c.get("lastTransitionTime") for c in status.get("conditions") or [] if isinstance(c, dict)]
    return [t for t in (rfc3339(x) for x in times if x) if t is not None]


def replaced_since(obj, state):
    """Why a workload is not settled on the fix by the pods its controller replaced (None when none): a pod
    of it Failed for good (evicted, shut down: `replaced`) that started or ended at or after the fix
    (`fixed_at`). The replacement starts with no restart, so an eviction loop shows only in the records the
    evicted pods leave: each is the workload's pod killed under the fix, as a restart is. A record the state
    cannot date after the fix (no `fixed_at`, or every time it holds before it) is a past pod's."""
    since = state.fixed_at
    if since is None:
        return None
    meta = obj.get("metadata") or {}
    for pod in state.by_kind.get(("Pod", meta.get("namespace") or None), []):
        if replaced(pod) and owns_pod(obj, pod) and any(t >= int(since) for t in _pod_times(pod)):
            status = pod.get("status") or {}
            why = status.get("reason") or "Failed"
            return f"pod {(pod.get('metadata') or {}).get('name')} was {why.lower() if why == 'Evicted' else why} " \
                   f"after the fix and replaced ({str(status.get('message') or '').strip()[:120] or 'no message'})"
    return None


# the controllers that replace a pod that failed for good (evicted, shut down with its node): its replacement
# is another pod, which the scope reads, and the workload's own readiness counts it
REPLACING_OWNERS = ("ReplicaSet", "StatefulSet", "DaemonSet")


def replaced(pod):
    """A pod in phase Failed that its controller replaces (a ReplicaSet's, a StatefulSet's, a DaemonSet's:
    they run with `restartPolicy: Always`, so Failed means the node evicted or shut it down, `status.reason`
    Evicted): a record of a past pod, left until garbage collection, not a pod that runs."""
    if (pod.get("status") or {}).get("phase") != "Failed":
        return False
    owners = (pod.get("metadata") or {}).get("ownerReferences") or []
    return any(isinstance(o, dict) and o.get("controller") is True and o.get("kind") in REPLACING_OWNERS for o in owners)


def pod_ready(pod):
    status = pod.get("status") or {}
    ready = any(c.get("type") == "Ready" and c.get("status") == "True" for c in status.get("conditions") or []
                if isinstance(c, dict))
    return status.get("phase") == "Running" and ready and not terminating(pod)


def labels_match(labels, selector):
    return bool(selector) and isinstance(labels, dict) and all(labels.get(k) == v for k, v in selector.items())


def selects_same(healthy, selector, namespace, state):
    """Whether a Service's selector, spelled otherwise than its healthy one, selects the same pods: the same
    pods of the namespace now, and the same workloads' pod templates (the pods they will make), at least one.
    A selector is read by what it selects, never by its spelling: `app.kubernetes.io/name: cart` for
    `opentelemetry.io/name: cart` is the same Service where every cart pod carries both."""
    if not isinstance(selector, dict) or not selector:
        return False
    labelled = [(p.get("metadata") or {}).get("labels") for p in state.by_kind.get(("Pod", namespace), [])]
    for kind in ("Deployment", "StatefulSet", "DaemonSet", "ReplicaSet"):
        for w in state.by_kind.get((kind, namespace), []):
            labelled.append((((w.get("spec") or {}).get("template") or {}).get("metadata") or {}).get("labels"))
    before = [labels_match(labels, healthy) for labels in labelled]
    return any(before) and before == [labels_match(labels, selector) for labels in labelled]


def as_ref(key):
    return {"kind": key[0], "namespace": key[1], "name": key[2]}


def _refs(spec):
    m = spec.get("mitigation") or {}
    refs = [p["target"] for p in m.get("predicates", []) if p.get("target")]
    for fault in m.get("faults", []):
        refs += fault["created"] + [e["object"] for e in fault["fields"]]
    refs += [e["object"] for e in m.get("restored", []) + m.get("unchanged", [])]
    refs += [o["object"] for o in (spec.get("finops") or {}).get("optimal", [])]
    return refs


# ---- Kubernetes objects: pod templates, what they request and read, selectors ------------------------------


def _stable_hash(*parts, length=10):
    """A short lowercase hash of `parts`, in the alphabet Kubernetes' generated names use (no vowels)."""
    import hashlib

    digest = hashlib.sha256("\0".join(parts).encode("utf-8")).digest()
    alphabet = "bcdfghjklmnpqrstvwxz2456789"
    return "".join(alphabet[b % len(alphabet)] for b in digest[:length])


def _controller_made(kind, name, template):
    """The name, labels and owner a controller gives the pods it makes (kube-controller-manager: the ReplicaSet
    of a Deployment adds `pod-template-hash`, a StatefulSet `controller-revision-hash` and the pod's name and
    index, a DaemonSet its revision and generation, a Job its name and uid): what a policy reading a live pod
    sees, so that no rule can tell the grader's pods from a cluster's by their absence."""
    labels = dict(((template.get("metadata") or {}).get("labels") or {}))
    revision = _stable_hash(kind, name, json.dumps(template, sort_keys=True, default=str))
    owner_kind, owner = kind, name
    if kind == "Deployment":
        labels["pod-template-hash"] = revision
        owner_kind, owner = "ReplicaSet", f"{name}-{revision}"
        pod = f"{owner}-{_stable_hash(owner, length=5)}"
    elif kind == "StatefulSet":
        pod = f"{name}-0"
        labels.update({"controller-revision-hash": f"{name}-{revision}", "statefulset.kubernetes.io/pod-name": pod,
                       "apps.kubernetes.io/pod-index": "0"})
    elif kind == "DaemonSet":
        labels.update({"controller-revision-hash": revision, "pod-template-generation": "1"})
        pod = f"{name}-{_stable_hash(name, length=5)}"
    elif kind == "Job":
        uid = _stable_uid("Job", name)
        labels.update({"batch.kubernetes.io/controller-uid": uid, "batch.kubernetes.io/job-name": name,
                       "controller-uid": uid, "job-name": name})
        pod = f"{name}-{_stable_hash(name, length=5)}"
    else:
        pod = f"{name}-{_stable_hash(name, length=5)}"
    return {"name": pod, "labels": labels, "ownerReferences": [
        {"apiVersion": "batch/v1" if owner_kind == "Job" else ("v1" if owner_kind == "ReplicationController" else "apps/v1"),
         "kind": owner_kind, "name": owner, "uid": _stable_uid(owner_kind, owner), "controller": True,
         "blockOwnerDeletion": True}]}


def _stable_uid(*parts):
    import hashlib

    text = hashlib.sha256("\0".join(parts).encode("utf-8")).hexdigest()
    return f"{text[:8]}-{text[8:12]}-{text[12:16]}-{text[16:20]}-{text[20:32]}"


# when the objects the grader judges offline were stored (any fixed instant: only its presence matters)
_STORED_AT = "2026-01-01T00:00:00Z"


# The defaults of SERVER_DEFAULTS the API server does not write into a stored pod spec: a `false` or `""` of a
# field Go serializes with `omitempty` is never shown, and a pod template gets only SetDefaults_PodSpec's (a Pod's
# `enableServiceLinks` is SetDefaults_Pod's, its `priority` and `preemptionPolicy` the Priority admission's).
_UNWRITTEN = {"Pod": {"priorityClassName", "hostNetwork", "hostPID", "hostIPC", "shareProcessNamespace"},
              "template": {"priorityClassName", "hostNetwork", "hostPID", "hostIPC", "shareProcessNamespace",
                           "enableServiceLinks", "priority", "preemptionPolicy"}}


def _stored_pod_spec(given, spec, unwritten):
    """A pod spec defaulted by with_defaults as the server stores it: the fields in `unwritten` it left out
    stay out; every container holds `resources` (`{}` when it sets none); a container port of a pod on the
    host's network has its `hostPort` (SetDefaults_PodSpec)."""
    if not isinstance(given, dict) or not isinstance(spec, dict):
        return spec
    spec = {k: v for k, v in spec.items() if k in given or k not in unwritten}
    for key in ("containers", "initContainers"):
        if isinstance(spec.get(key), list):
            spec[key] = [{"resources": {}, **c} if isinstance(c, dict) else c for c in spec[key]]
            if spec.get("hostNetwork") is True:
                spec[key] = [{**c, "ports": [{"hostPort": p.get("containerPort"), **p} if isinstance(p, dict)
                                             and "containerPort" in p else p for p in c["ports"]]}
                             if isinstance(c, dict) and isinstance(c.get("ports"), list) else c for c in spec[key]]
    return spec


def server_defaulted(obj):
    """`obj` with what the API server's defaulting writes into it on create (k8s.io/kubernetes
    pkg/apis/core/v1 and apps/v1 defaults.go; DEFAULT_SHAPES): a pod spec's `securityContext: {}`,
    `dnsPolicy`, `restartPolicy`, `schedulerName`, a container's `imagePullPolicy`, `terminationMessagePath`,
    a Deployment's `replicas` ... A copy; what the object says is kept."""
    kind = obj.get("kind") if isinstance(obj, dict) else None
    if not isinstance(kind, str) or not isinstance(obj.get("spec", {}), dict):
        return obj
    shape = {"fields": {"spec": f"{kind}.spec"}} if f"{kind}.spec" in DEFAULT_SHAPES else DEFAULT_SHAPES.get(kind)
    out = with_defaults(obj, shape)
    if out is obj or not isinstance(out.get("spec"), dict):
        return out
    if kind == "Pod":
        out["spec"] = _stored_pod_spec(obj["spec"], out["spec"], _UNWRITTEN["Pod"])
    elif isinstance(out["spec"].get("template"), dict) and isinstance(obj["spec"].get("template"), dict):
        template = dict(out["spec"]["template"])
        template["spec"] = _stored_pod_spec(obj["spec"]["template"].get("spec"), template.get("spec"),
                                            _UNWRITTEN["template"])
        out["spec"] = {**out["spec"], "template": template}
    return out


def as_stored(obj):
    """`obj` as the API server holds it and `kubectl get -o json` or Kyverno's background scan read it: with the
    server's defaults (server_defaulted), a Pod as admission admits it (admitted_pod_spec), and the metadata
    the server writes (`uid`, `creationTimestamp`, `resourceVersion`, `generation`) filled in where the
    manifest has none, so a policy that fires only on objects never stored (`uid` absent), or on a field the server always fills in left out, flags nothing here
    either. A copy; what the object says is kept."""
    if not isinstance(obj, dict) or not isinstance(obj.get("metadata", {}), dict):
        return obj
    obj = server_defaulted(obj)
    if obj.get("kind") == "Pod" and isinstance(obj.get("spec"), dict):
        obj = {**obj, "spec": admitted_pod_spec(obj["spec"])}
    meta = dict(obj.get("metadata") or {})
    meta.setdefault("uid", _stable_uid(str(obj.get("kind")), str(meta.get("namespace") or ""), str(meta.get("name"))))
    meta.setdefault("creationTimestamp", _STORED_AT)
    meta.setdefault("resourceVersion", "1")
    meta.setdefault("generation", 1)
    return {**obj, "metadata": meta}


# What admission writes on every pod that leaves it out: the ServiceAccount plugin its account, the Priority
# plugin its priority, DefaultTolerationSeconds its tolerations of a node not ready or unreachable.
_ADMITTED_TOLERATIONS = [{"key": f"node.kubernetes.io/{taint}", "operator": "Exists", "effect": "NoExecute",
                          "tolerationSeconds": 300} for taint in ("not-ready", "unreachable")]


def admitted_pod_spec(spec):
    """A pod spec as admission leaves it (a copy): `serviceAccountName` (and the older `serviceAccount`)
    `default` when it names none, `priority: 0` and `preemptionPolicy` without a priority class, the default
    tolerations of a node not ready or unreachable where it tolerates neither."""
    spec = dict(spec)
    account = spec.get("serviceAccountName") or spec.get("serviceAccount") or "default"
    spec["serviceAccountName"] = spec["serviceAccount"] = account
    if not spec.get("priorityClassName"):
        spec.setdefault("priority", 0)
    spec.setdefault("preemptionPolicy", "PreemptLowerPriority")
    tolerations = [t for t in spec.get("tolerations") or [] if isinstance(t, dict)]
    added = [t for t in _ADMITTED_TOLERATIONS if not any(
        o.get("key") in (t["key"], None) and o.get("effect") in (t["effect"], None) for o in tolerations)]
    if added:
        spec["tolerations"] = list(spec.get("tolerations") or []) + [dict(t) for t in added]
    return spec


POD_TEMPLATE_KINDS = ("Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Job", "ReplicationController")


# robfig/cron (the CronJob controller's parser): each field's bounds and names; February has its 29th every
# fourth year, so a day of month fires in a month where it can fall
_CRON_FIELDS = ((0, 59, {}), (0, 23, {}), (1, 31, {}), (1, 12, {m: i + 1 for i, m in enumerate(
    ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"))}),
    (0, 6, {d: i for i, d in enumerate(("sun", "mon", "tue", "wed", "thu", "fri", "sat"))}))
_MONTH_DAYS = (31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)


def _cron_values(text, low, high, names):
    """The values a cron field takes and whether it is `*` or `?` without a step (robfig/cron's star bit);
    None for a field it does not parse."""
    values, star = set(), False
    for part in text.split(","):
        body, slash, step = part.partition("/")
        if slash and (not step.isdigit() or int(step) == 0):
            return None
        step = int(step) if slash else 1
        if body in ("*", "?"):
            start, end, star = low, high, star or step == 1
        else:
            bounds = [int(b) if b.isdigit() else names.get(b.lower()) for b in body.split("-", 1)]
            if None in bounds:
                return None
            start, end = bounds[0], bounds[1] if len(bounds) == 2 else high if slash else bounds[0]
        values.update(range(max(start, low), min(end, high) + 1, step))
    return values, star


def cron_fires(schedule):
    """Whether a CronJob's schedule ever fires, as robfig/cron matches it: a day of month and a month where
    it falls (`0 0 31 2 *`, the 31st of February, never comes), the day of month and of week both asked for
    when either is `*`, either one when both are restricted. A descriptor fires; a schedule the parser does
    not read is the API server's to refuse, not taken to be idle."""
    spec = schedule.strip() if isinstance(schedule, str) else ""
    if spec.startswith(("TZ=", "CRON_TZ=")):
        spec = spec.split(None, 1)[1] if len(spec.split(None, 1)) > 1 else ""
    fields = spec.split()
    if spec.startswith("@") or len(fields) != 5:
        return True
    parsed = [_cron_values(f, *bounds) for f, bounds in zip(fields, _CRON_FIELDS)]
    if None in parsed:
        return True
    (minutes, _), (hours, _), (days, day_star), (months, _), (weekdays, weekday_star) = parsed
    falls = any(d <= _MONTH_DAYS[m - 1] for m in months for d in days)
    on_day = falls and bool(weekdays) if day_star or weekday_star else falls or bool(weekdays) and bool(months)
    return bool(minutes) and bool(hours) and on_day


def cronjob_idle(obj):
    """Why a CronJob starts no more runs (suspended, a schedule that never fires), None when it runs."""
    spec = obj.get("spec") if isinstance(obj.get("spec"), dict) else {}
    if spec.get("suspend") is True:
        return "it is suspended: it starts no run"
    if not cron_fires(spec.get("schedule")):
        return f"its schedule {spec.get('schedule')!r} never fires"
    return None


# robfig/cron's descriptors (`cron.ParseStandard`, the CronJob controller's parser) as the schedules they stand for
_CRON_MACROS = {"@yearly": "0 0 1 1 *", "@annually": "0 0 1 1 *", "@monthly": "0 0 1 * *", "@weekly": "0 0 * * 0",
                "@daily": "0 0 * * *", "@midnight": "0 0 * * *", "@hourly": "0 * * * *"}
# the days a schedule's longest wait is read over: eight years from a leap year's first day and a little more, so a
# schedule that fires on the 29th of February fires at least twice within them
_CRON_SPAN = 8 * 366 + 2


def _every_minutes(text):
    """`@every DURATION` (Go's duration: `1h30m`, `90s`) in minutes; None for one the parser does not read."""
    parts = re.fullmatch(r"(?:(\d+(?:\.\d+)?)(ms|us|µs|ns|h|m|s))+", text.strip(), re.ASCII)
    if not parts:
        return None
    scale = {"h": 60, "m": 1, "s": 1 / 60, "ms": 1 / 60000, "us": 1 / 6e7, "µs": 1 / 6e7, "ns": 1 / 6e10}
    return sum(float(n) * scale[u] for n, u in re.findall(r"(\d+(?:\.\d+)?)(ms|us|µs|ns|h|m|s)", text, re.ASCII))


def cron_longest_wait(schedule):
    if schedule not in _CRON_WAITS:
        _CRON_WAITS[schedule] = _cron_longest_wait(schedule) if isinstance(schedule, str) else 0
    return _CRON_WAITS[schedule]


_CRON_WAITS = {}


def _cron_longest_wait(schedule):
    """The longest a CronJob's schedule leaves between two runs, in minutes, as robfig/cron matches it (five
    fields or a descriptor, `@every` among them; a time zone prefix moves no gap): read over eight years, the
    longest of the waits between consecutive runs and from the span's start to its first run and from its
    last run to the span's end. None for a schedule that never fires within them (the 31st of February; the
    29th of February fires, every fourth year, and waits that long); 0 for one the parser does not read (the
    API server's to refuse)."""
    import datetime
    spec = schedule.strip() if isinstance(schedule, str) else ""
    if spec.startswith(("TZ=", "CRON_TZ=")):
        spec = spec.split(None, 1)[1] if len(spec.split(None, 1)) > 1 else ""
    if spec.startswith("@every"):
        every = _every_minutes(spec[len("@every"):])
        return every if every else 0
    spec = _CRON_MACROS.get(spec.lower(), spec)
    fields = spec.split()
    if len(fields) != 5:
        return 0
    parsed = [_cron_values(f, *bounds) for f, bounds in zip(fields, _CRON_FIELDS)]
    if None in parsed:
        return 0
    (minutes, _), (hours, _), (days, day_star), (months, _), (weekdays, weekday_star) = parsed
    times = sorted(h * 60 + m for h in hours for m in minutes)
    if not times:
        return None
    inside = max([b - a for a, b in zip(times, times[1:])] or [0])
    start = datetime.date(2028, 1, 1)
    fired = []
    for offset in range(_CRON_SPAN):
        day = start + datetime.timedelta(days=offset)
        weekday = (day.weekday() + 1) % 7  # cron counts from Sunday
        if day.month not in months:
            continue
        on_dom, on_dow = day.day in days, weekday in weekdays
        if on_dom and on_dow if day_star or weekday_star else on_dom or on_dow:
            fired.append(offset)
    if not fired:
        return None
    waits = [fired[0] * 1440 + times[0], (_CRON_SPAN - fired[-1]) * 1440 - times[-1]]
    waits += [(b - a) * 1440 + times[0] - times[-1] for a, b in zip(fired, fired[1:])]
    return max(waits + [inside])


def templated_pod(obj):
    """The Pod a workload's template makes (its namespace, the template's labels and spec), as the cluster
    runs it: stored as admission admits it (as_stored); None for an object without a pod template."""
    if not isinstance(obj, dict) or obj.get("kind") not in POD_TEMPLATE_KINDS:
        return None
    template = (obj.get("spec") or {}).get("template") if isinstance(obj.get("spec"), dict) else None
    if not isinstance(template, dict) or not isinstance(template.get("spec"), dict):
        return None
    meta = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
    tmeta = template.get("metadata") if isinstance(template.get("metadata"), dict) else {}
    pod_meta = {k: v for k, v in tmeta.items() if k in ("labels", "annotations")}
    pod_meta.update(_controller_made(obj.get("kind"), str(meta.get("name", "pod")), template))
    if meta.get("namespace"):
        pod_meta["namespace"] = meta["namespace"]
    return as_stored({"apiVersion": "v1", "kind": "Pod", "metadata": pod_meta, "spec": template["spec"]})


# The process an image runs when a container names no command or arguments of its own: its ENTRYPOINT and CMD
# (repository, as `image_ref` spells it without its tag, to them), for the library's images whose published
# Dockerfiles declare them the same on every tag the library runs (docker-library: nginx's
# `/docker-entrypoint.sh` + `nginx -g 'daemon off;'`, the databases' `docker-entrypoint.sh` + their server).
IMAGE_DEFAULTS = {
    "docker.io/library/nginx": (["/docker-entrypoint.sh"], ["nginx", "-g", "daemon off;"]),
    "docker.io/library/redis": (["docker-entrypoint.sh"], ["redis-server"]),
    "docker.io/library/mongo": (["docker-entrypoint.sh"], ["mongod"]),
    "docker.io/library/memcached": (["docker-entrypoint.sh"], ["memcached"]),
    "docker.io/valkey/valkey": (["docker-entrypoint.sh"], ["valkey-server"]),
    "docker.io/library/busybox": ([], ["sh"]),
}


# Where an image ships the content its program serves (repository, as IMAGE_DEFAULTS keys it, to the paths): a
# volume mounted there, or over a directory holding it, hides it (nginx's document root, httpd's `htdocs`; an
# empty new volume there serves 403 and 404 while the pods are ready).
IMAGE_CONTENT = {
    "docker.io/library/nginx": ("/usr/share/nginx/html",),
    "docker.io/library/httpd": ("/usr/local/apache2/htdocs",),
}


# What the program of an image needs of its filesystem and its user (repository, as IMAGE_DEFAULTS keys it): the
# paths it writes as it runs (`writes`: a read-only root filesystem refuses them unless a volume covers them),
# those of them its image declares as VOLUMEs (`volumes`: containerd, the runtime of the clusters the benchmark
# runs on, bind-mounts a writable directory of the node at each, a read-only root filesystem or not), the uid
# owning the data paths it writes (`owner`, with `owned`: a process of another uid, root aside, cannot write
# them), its image's USER (`user`: None for root) and the capabilities its start needs when it starts as root
# (`caps`: its entrypoint switches to its own user, su-exec and gosu need SETUID and SETGID; nginx's master
# creates its temporary paths for its workers' user), and whether what it writes is its configuration's to say
# (`configured`: redis' and valkey's `save`, judged where they run with their defaults). An image not listed is
# not judged (`security_problems`).
IMAGE_FILESYSTEM = {
    "docker.io/library/nginx": {"writes": ("/var/cache/nginx",), "volumes": (), "owner": 0,
                                "owned": ("/var/cache/nginx",), "user": None, "caps": ("CHOWN", "SETUID", "SETGID")},
    "docker.io/valkey/valkey": {"writes": ("/data",), "volumes": ("/data",), "owner": 999, "owned": ("/data",),
                                "user": None, "caps": ("SETUID", "SETGID"), "configured": True},
    "docker.io/library/redis": {"writes": ("/data",), "volumes": ("/data",), "owner": 999, "owned": ("/data",),
                                "user": None, "caps": ("SETUID", "SETGID"), "configured": True},
    "docker.io/library/mongo": {"writes": ("/data/db", "/tmp"), "volumes": ("/data/db", "/data/configdb"),
                                "owner": 999, "owned": ("/data/db",), "user": None,
                                "caps": ("SETUID", "SETGID")},
    "docker.io/library/memcached": {"writes": (), "volumes": (), "owner": None, "owned": (), "user": "memcache",
                                    "caps": ()},
    "docker.io/library/busybox": {"writes": (), "volumes": (), "owner": None, "owned": (), "user": None, "caps": ()},
}


def image_filesystem(image):
    """What the program of `image` needs of its filesystem and its user (IMAGE_FILESYSTEM), None when unknown."""
    if not isinstance(image, str) or not image.strip():
        return None
    return IMAGE_FILESYSTEM.get(_repository(image))


def _repository(image):
    ref = image_ref(image).partition("@")[0]
    return ref.rpartition(":")[0] if ":" in ref.rpartition("/")[2] else ref


def content_hidden(image, path):
    """The content path of an image (IMAGE_CONTENT) a volume mounted at `path` hides (mounted there or over a
    directory above it), None when it hides none or the image is not known."""
    if not isinstance(image, str) or not image.strip() or not isinstance(path, str):
        return None
    path = path.rstrip("/") or "/"
    for content in IMAGE_CONTENT.get(_repository(image), ()):
        if content == path or content.startswith(path.rstrip("/") + "/"):
            return content
    return None


def image_defaults(image):
    """(ENTRYPOINT, CMD) of an image IMAGE_DEFAULTS knows, None for another one."""
    if not isinstance(image, str) or not image.strip():
        return None
    ref = image_ref(image).partition("@")[0]
    repository = ref.rpartition(":")[0] if ":" in ref.rpartition("/")[2] else ref
    return IMAGE_DEFAULTS.get(repository)


def image_defaults_dropped(obj):
    """A Pod or a workload whose containers spell out their image's own ENTRYPOINT and CMD as `command` and
    `args` (`/docker-entrypoint.sh` + `nginx -g 'daemon off;'`, or `args` alone equal to the CMD) read as
    containers without them: the kubelet runs `command` in place of the ENTRYPOINT and `args` in place of the
    CMD (a `command` alone drops the CMD), so the process is the one the image runs (`image_defaults`). Any
    other object, or a container of another argv or image, as it is."""
    if not isinstance(obj, dict) or obj.get("kind") not in POD_TEMPLATE_KINDS + ("Pod", "CronJob"):
        return obj
    pod = pod_spec(obj)
    if not any(_spells_defaults(c) for key in CONTAINER_LISTS
               for c in (pod.get(key) if isinstance(pod.get(key), list) else [])):
        return obj
    out = json.loads(json.dumps(obj))
    pod = pod_spec(out)
    for key in CONTAINER_LISTS:
        for c in pod.get(key) if isinstance(pod.get(key), list) else []:
            if _spells_defaults(c):
                c.pop("command", None)
                c.pop("args", None)
    return out


def _spells_defaults(container):
    if not isinstance(container, dict) or not (container.get("command") or container.get("args")):
        return False
    defaults = image_defaults(container.get("image"))
    command, args = container.get("command"), container.get("args")
    if defaults is None or not all(isinstance(v, list) or v is None for v in (command, args)):
        return False
    argv = (command or defaults[0]) + (args if args else ([] if command else defaults[1]))
    return [str(w) for w in argv] == defaults[0] + defaults[1] and all(isinstance(w, str) for w in argv)


def pod_spec(obj):
    """A Pod's spec, or a workload's pod template's (a CronJob's in its job template)."""
    spec = obj.get("spec") if isinstance(obj.get("spec"), dict) else {}
    if obj.get("kind") == "CronJob":
        spec = _dict(_dict(spec.get("jobTemplate")).get("spec"))
    if obj.get("kind") != "Pod":
        template = spec.get("template") if isinstance(spec.get("template"), dict) else {}
        spec = template.get("spec") if isinstance(template.get("spec"), dict) else {}
    return spec


def container_request(container, resource):
    """What a container requests of `cpu` (cores) or `memory` (bytes): its request, else its limit, as
    Kubernetes defaults a request left out; 0 when it declares neither."""
    res = container.get("resources") if isinstance(container.get("resources"), dict) else {}
    for part in ("requests", "limits"):
        values = res.get(part) if isinstance(res.get(part), dict) else {}
        if values.get(resource) is not None:
            return round(number(values[resource]) or 0.0, 9)
    return 0.0


def pod_requests(obj):
    """What each container of a workload's pods requests, {name: {"cpu": cores, "memory": bytes}} (init
    containers too)."""
    pod = pod_spec(obj)
    return {c["name"]: {r: container_request(c, r) for r in ("cpu", "memory")}
            for c in list(pod.get("containers") or []) + list(pod.get("initContainers") or [])
            if isinstance(c, dict) and isinstance(c.get("name"), str)}


def pod_level(obj):
    """The pod-level resources of a Pod or a workload's pods (`spec.resources`, PodLevelResources), {"limits":
    {resource: quantity}, "requests": {...}}: a request left out is its limit, as the API server defaults it.
    Empty without them."""
    res = pod_spec(obj).get("resources")
    res = res if isinstance(res, dict) else {}
    limits = dict(res["limits"]) if isinstance(res.get("limits"), dict) else {}
    requests = dict(res["requests"]) if isinstance(res.get("requests"), dict) else {}
    return {"limits": limits, "requests": {**limits, **requests}}


def pod_bounded(obj):
    """A Pod or workload with each container's limit the one it runs under: where the pod sets a pod-level limit
    on a resource, the pod's cgroup bounds every container in it, so a container's limit is the smaller of its
    own and the pod's (the pod's where it declares none). `obj` itself without pod-level limits."""
    limits = pod_level(obj)["limits"]
    if not limits:
        return obj
    out = json.loads(json.dumps(obj))
    pod = pod_spec(out)
    for container in list(pod.get("containers") or []) + list(pod.get("initContainers") or []):
        res = container.setdefault("resources", {}) if isinstance(container, dict) else None
        if not isinstance(res, dict):
            continue
        own = res.setdefault("limits", {}) if isinstance(res.get("limits", {}), dict) else None
        for resource, value in limits.items() if own is not None else ():
            if own.get(resource) is None or (number(value) or 0) < (number(own[resource]) or 0):
                own[resource] = value
    return out


def pod_reserves(obj):
    """What one pod of a Pod or a workload reserves on its node, {"cpu": cores, "memory": bytes}, as the
    scheduler counts it: its containers' requests (sidecars, init containers that keep running, among them),
    or the largest init container's where that is more; a pod-level request (`spec.resources`, PodLevelResources:
    its request, else its limit, as the API server defaults it) stands instead for its resource; and the
    pod's `spec.overhead` (a RuntimeClass's) on top (k8s.io/component-helpers resource.PodRequests)."""
    pod = pod_spec(obj)
    inits = [c for c in pod.get("initContainers") or [] if isinstance(c, dict)]
    running = [c for c in pod.get("containers") or [] if isinstance(c, dict)]
    running += [c for c in inits if c.get("restartPolicy") == "Always"]
    reserves = {r: max([sum(container_request(c, r) for c in running)]
                       + [container_request(c, r) for c in inits if c.get("restartPolicy") != "Always"])
                for r in ("cpu", "memory")}
    level = {"resources": pod_level(obj)}
    overhead = pod.get("overhead") if isinstance(pod.get("overhead"), dict) else {}
    for r in reserves:
        if container_request(level, r):
            reserves[r] = container_request(level, r)
        if overhead.get(r) is not None:
            reserves[r] = round(reserves[r] + (number(overhead[r]) or 0.0), 9)
    return reserves


# the kinds of objects a pod template may need for its pods to start (pod_references)
REFERENCED_KINDS = ("ConfigMap", "Secret", "ServiceAccount", "PersistentVolumeClaim")


def pod_references(template):
    """(kind, name) of each object a pod template needs for a new pod to start: the ConfigMaps and Secrets
    its volumes (projected ones too), its containers' `env` and `envFrom` read, its ServiceAccount, its image
    pull Secrets, its PersistentVolumeClaims. A reference marked `optional` is left out: the pod starts
    without it."""
    pod = template.get("spec") if isinstance(template, dict) else None
    if not isinstance(pod, dict):
        return set()
    found = set()

    def add(kind, ref, key="name"):
        if isinstance(ref, dict) and ref.get(key) and not ref.get("optional"):
            found.add((kind, str(ref[key])))

    def items(node, key):
        value = node.get(key) if isinstance(node, dict) else None
        return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []

    for volume in items(pod, "volumes"):
        add("ConfigMap", volume.get("configMap"))
        add("Secret", volume.get("secret"), "secretName")
        add("PersistentVolumeClaim", volume.get("persistentVolumeClaim"), "claimName")
        for source in items(volume.get("projected"), "sources"):
            add("ConfigMap", source.get("configMap"))
            add("Secret", source.get("secret"))
    for container in items(pod, "containers") + items(pod, "initContainers"):
        for env in items(container, "env"):
            value_from = env.get("valueFrom") if isinstance(env.get("valueFrom"), dict) else {}
            add("ConfigMap", value_from.get("configMapKeyRef"))
            add("Secret", value_from.get("secretKeyRef"))
        for source in items(container, "envFrom"):
            add("ConfigMap", source.get("configMapRef"))
            add("Secret", source.get("secretRef"))
    for secret in items(pod, "imagePullSecrets"):
        add("Secret", secret)
    account = pod.get("serviceAccountName") or pod.get("serviceAccount")
    if isinstance(account, str) and account:
        found.add(("ServiceAccount", account))
    return found


def config_sources(volume):
    """(kind, name, items, optional) of each ConfigMap or Secret a pod volume projects (projected ones too)."""
    out = []
    if not isinstance(volume, dict):
        return out
    for kind, node, key in (("ConfigMap", volume.get("configMap"), "name"), ("Secret", volume.get("secret"), "secretName")):
        if isinstance(node, dict):
            out.append((kind, node.get(key), node.get("items"), node.get("optional") is True))
    projected = volume.get("projected") if isinstance(volume.get("projected"), dict) else {}
    for source in projected.get("sources") or [] if isinstance(projected.get("sources"), list) else []:
        for kind in ("ConfigMap", "Secret"):
            node = source.get(kind[0].lower() + kind[1:]) if isinstance(source, dict) else None
            if isinstance(node, dict):
                out.append((kind, node.get("name"), node.get("items"), node.get("optional") is True))
    return out


def projected_key(items, rel):
    """The key a volume source projects at relative path `rel`: the item whose `path` it is, else (no items)
    the key of that name; None when it projects none there."""
    if isinstance(items, list) and items:
        return next((i.get("key") for i in items if isinstance(i, dict) and i.get("path") == rel), None)
    return rel if "/" not in rel else None


ENV_NAME = re.compile(r"^[-._a-zA-Z][-._a-zA-Z0-9]*$")  # validation.IsEnvVarName


def config_reads(template, kind, name, key):
    """Where a pod template reads key `key` of the ConfigMap or Secret `name`: [{"container": c, "env": VAR}]
    for a variable it sets from it (`env` valueFrom, `envFrom` under its prefix), [{"container": c, "file":
    path}] for a file a volume mounts from it (its items' paths, a `subPath` mount). What the fix must keep is
    what these read, from whichever object supplies them."""
    pod = template.get("spec") if isinstance(template, dict) else None
    if not isinstance(pod, dict):
        return []
    reads = []
    relpaths = {}  # volume name -> the relative paths the key is projected at
    for volume in pod.get("volumes") or [] if isinstance(pod.get("volumes"), list) else []:
        for k, n, items, _ in config_sources(volume):
            if k == kind and n == name:
                paths = [i.get("path") for i in items if isinstance(i, dict) and i.get("key") == key] \
                    if isinstance(items, list) and items else [key]
                relpaths.setdefault(volume.get("name"), []).extend(p for p in paths if isinstance(p, str))
    ref_key = "configMapKeyRef" if kind == "ConfigMap" else "secretKeyRef"
    from_key = "configMapRef" if kind == "ConfigMap" else "secretRef"
    for container in (pod.get("containers") or []) + (pod.get("initContainers") or []):
        if not isinstance(container, dict):
            continue
        where = container.get("name")
        for source in container.get("envFrom") or []:
            ref = source.get(from_key) if isinstance(source, dict) else None
            if isinstance(ref, dict) and ref.get("name") == name and ENV_NAME.match(f"{source.get('prefix') or ''}{key}"):
                reads.append({"container": where, "env": f"{source.get('prefix') or ''}{key}"})
        for entry in container.get("env") or []:
            ref = ((entry.get("valueFrom") or {}) if isinstance(entry, dict) else {}).get(ref_key)
            if isinstance(ref, dict) and ref.get("name") == name and ref.get("key") == key:
                reads.append({"container": where, "env": entry.get("name")})
        for mount in container.get("volumeMounts") or []:
            if not isinstance(mount, dict) or not isinstance(mount.get("mountPath"), str):
                continue
            for rel in relpaths.get(mount.get("name"), []):
                if mount.get("subPath"):
                    if mount["subPath"] == rel:
                        reads.append({"container": where, "file": mount["mountPath"]})
                else:
                    reads.append({"container": where, "file": mount["mountPath"].rstrip("/") + "/" + rel})
    unique = []
    for read in reads:
        if read not in unique:
            unique.append(read)
    return unique


def selector_matches(selector, labels):
    """Whether a label selector (`matchLabels`, `matchExpressions`: In, NotIn, Exists, DoesNotExist) selects
    labels; an empty selector `{}` selects everything, a malformed one nothing."""
    if not isinstance(selector, dict):
        return False
    labels = labels if isinstance(labels, dict) else {}
    wanted = selector.get("matchLabels") or {}
    if not isinstance(wanted, dict) or any(labels.get(k) != v for k, v in wanted.items()):
        return False
    for expr in selector.get("matchExpressions") or []:
        if not isinstance(expr, dict):
            return False
        key, op, values = expr.get("key"), expr.get("operator"), expr.get("values") or []
        if op == "In" and labels.get(key) not in values:
            return False
        if op == "NotIn" and key in labels and labels.get(key) in values:
            return False
        if op == "Exists" and key not in labels:
            return False
        if op == "DoesNotExist" and key in labels:
            return False
        if op not in ("In", "NotIn", "Exists", "DoesNotExist"):
            return False
    return True


def selected_pods(service, state):
    selector = (service.get("spec") or {}).get("selector") or {}
    namespace = service["metadata"].get("namespace")
    # asked by many checks of one state: found once per selector (a state is not changed once read)
    made = state.__dict__.setdefault("_selected_pods", {}) if hasattr(state, "__dict__") else {}
    key = (namespace, json.dumps(selector, sort_keys=True, default=str))
    if key not in made:
        made[key] = [p for p in state.by_kind.get(("Pod", namespace), [])
                     if labels_match(p["metadata"].get("labels"), selector)]
    return list(made[key])


def policy_types(policy):
    """The directions a NetworkPolicy isolates (`policyTypes`; Ingress, and Egress where it has egress rules,
    when left out), as the API server defaults them."""
    spec = policy.get("spec") if isinstance(policy.get("spec"), dict) else {}
    declared = spec.get("policyTypes")
    if isinstance(declared, list) and declared:
        return [str(t) for t in declared]
    return ["Ingress"] + (["Egress"] if spec.get("egress") is not None else [])


def kind_plural(kind):
    lowered = kind.lower()
    if lowered.endswith("chaos"):
        return lowered
    if lowered.endswith("y"):
        return lowered[:-1] + "ies"
    if lowered.endswith("s"):
        return lowered + "es"
    return lowered + "s"


# ---- reading: times, JSON integers, the embedded modules ------------------------------------------------------


# RFC 3339's time-secfrac is "." 1*DIGIT: a fraction of any length (read to the microsecond)
_RFC3339 = re.compile(r"(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?([Zz]|[+-]\d{2}:\d{2})", re.ASCII)


def rfc3339(text):
    """An RFC 3339 time (`2025-06-01T12:00:00Z`, an offset or `Z` required) as POSIX seconds; None otherwise."""
    import datetime

    if not isinstance(text, str) or len(text) > 1024:
        return None
    match = _RFC3339.fullmatch(text.strip())
    if match is None:
        return None
    year, month, day, hour, minute, second, fraction, zone = match.groups()
    if zone in ("Z", "z"):
        offset = datetime.timedelta(0)
    else:
        sign = -1 if zone[0] == "-" else 1
        offset = sign * datetime.timedelta(hours=int(zone[1:3]), minutes=int(zone[4:6]))
    # a leap second (`23:59:60Z`, RFC 3339 section 5.7) is the instant after 23:59:59, which datetime cannot hold
    leap = second == "60"
    try:
        moment = datetime.datetime(int(year), int(month), int(day), int(hour), int(minute),
                                   59 if leap else int(second),
                                   int((fraction or "0").ljust(6, "0")[:6]), datetime.timezone(offset))
    except ValueError:
        return None
    return moment.timestamp() + (1 if leap else 0)


def json_int(text):
    """A JSON integer: JSON sets no limit on its digits, Python's str-to-int conversion does (4300); one
    longer than that is read as the nearest float (infinity), never refused as "not JSON"."""
    return int(text) if len(text) <= 4000 else float(text)


def _package_module(name):
    """Inside the package (the corpus grades in process), the runtime's own module of that name (the Kyverno
    matcher's package, the YAML reader); None in a standalone evaluator.py that embeds none: its grading
    needs none."""
    package = globals().get("__package__")  # absent where the evaluator runs as a script or exec'd text
    if not package:
        return None
    import importlib

    try:
        return importlib.import_module({"kyverno": ".kyverno", "yaml": ".miniyaml", "pss": ".kyverno.pss"}.get(name, "." + name), package)
    except ImportError:
        return None


def embedded_module(name):
    """A module whose source the compiler embedded in this file as data; None when it embedded none.

    `_YAML_SOURCE` is one module (`itbench_yaml`). `_KYVERNO_SOURCES` is a package (`itbench_kyverno`):
    its modules as (name, source) pairs in dependency order, which import each other relatively, so each
    runs as `itbench_kyverno.<name>`, registered in sys.modules before it runs; the module returned is
    the last one, the package's entry point (the Kyverno matcher's `evaluate_policy`)."""
    source = globals().get(f"_{name.upper()}_SOURCE")
    if source:
        module = types.ModuleType(f"itbench_{name}")
        sys.modules.setdefault(f"itbench_{name}", module)
        exec(compile(source, f"<itbench {name}>", "exec"), module.__dict__)  # noqa: S102 - our own embedded module
        return module
    sources = globals().get(f"_{name.upper()}_SOURCES")
    if not sources:
        return _package_module(name)
    package = types.ModuleType(f"itbench_{name}")
    package.__path__ = []  # a package: `from .values import ...` finds its modules in sys.modules
    sys.modules[package.__name__] = package
    module = None
    for part, text in sources:
        module = types.ModuleType(f"{package.__name__}.{part}")
        module.__package__ = package.__name__
        sys.modules[module.__name__] = module
        setattr(package, part, module)
        exec(compile(text, f"<itbench {name}/{part}.py>", "exec"), module.__dict__)  # noqa: S102 - embedded
    return module


TOKEN_MOUNT = "/var/run/secrets/kubernetes.io/serviceaccount"
POD_RUN_FIELDS = ("image", "command", "args", "env", "envFrom", "workingDir")


def _mounts(container):
    """A container's volume mounts but the one the ServiceAccount admission adds to every pod."""
    return [m for m in container.get("volumeMounts") or [] if isinstance(m, dict)
            and m.get("mountPath") != TOKEN_MOUNT and not str(m.get("name", "")).startswith("kube-api-access-")]


def template_refusal(template_spec, pod_spec):
    """Why a pod does not run its workload's pod template (None when it does): each of the template's
    containers (and init containers) is in the pod with the same image, command, arguments, environment,
    working directory and volume mounts (but the ServiceAccount token's), each volume they mount is the
    template's, and no container the template lacks (a sidecar an admission webhook injects) mounts one of
    them; the process namespace is shared only if the template shares it. A pod that claims a workload's
    controller but runs another program (a wrapper in place of the command, a volume over its binary) is
    not the workload's pod, whatever its labels and owner references say."""
    template_spec = template_spec if isinstance(template_spec, dict) else {}
    pod_spec = pod_spec if isinstance(pod_spec, dict) else {}
    if bool(template_spec.get("shareProcessNamespace")) != bool(pod_spec.get("shareProcessNamespace")):
        return "its process namespace sharing differs from the pod template's"
    used = set()
    for field in ("initContainers", "containers"):
        theirs = {c.get("name"): c for c in pod_spec.get(field) or [] if isinstance(c, dict)}
        wanted = [c for c in template_spec.get(field) or [] if isinstance(c, dict)]
        for container in wanted:
            name = container.get("name")
            mine = theirs.get(name)
            if mine is None:
                return f"it has no container {name} of the pod template"
            for key in POD_RUN_FIELDS:
                if mine.get(key) != container.get(key):
                    return f"its container {name}'s {key} is not the pod template's"
            if _mounts(mine) != _mounts(container):
                return f"its container {name}'s volume mounts are not the pod template's"
            used.update(m.get("name") for m in _mounts(container))
        names = {c.get("name") for c in wanted}
        for extra in theirs.values():
            if extra.get("name") not in names and any(m.get("name") in used for m in _mounts(extra)):
                return f"its container {extra.get('name')}, not of the pod template, mounts the template's volumes"
    volumes = {v.get("name"): v for v in template_spec.get("volumes") or [] if isinstance(v, dict)}
    theirs = {v.get("name"): v for v in pod_spec.get("volumes") or [] if isinstance(v, dict)}
    for name in used:
        if theirs.get(name) != volumes.get(name):
            return f"its volume {name} is not the pod template's"
    return None


def workload_pod_refusal(workload, pod, replicasets=None):
    """Why `pod` is not one of `workload`'s own pods (None when it is), the pod a command meant for the workload
    may run in: its controller is the workload (a Deployment's: the workload's current ReplicaSet, whose own
    controller is the Deployment, by uid where the objects carry one; `replicasets`, when given, are the
    namespace's ReplicaSets to follow that chain through), and it runs the workload's pod template
    (template_refusal). Labels alone, which any pod may carry, never make a pod the workload's."""
    meta = workload.get("metadata") or {}
    pod_meta = pod.get("metadata") or {}
    kind, name, uid = workload.get("kind"), meta.get("name"), meta.get("uid")
    owners = [o for o in pod_meta.get("ownerReferences") or [] if isinstance(o, dict) and o.get("controller")]
    if not owners:
        return "it has no controller"
    owner = owners[0]
    labels = pod_meta.get("labels") if isinstance(pod_meta.get("labels"), dict) else {}
    if kind == "Deployment":
        hash_ = labels.get("pod-template-hash", "")
        if owner.get("kind") != "ReplicaSet" or owner.get("name") != f"{name}-{hash_}":
            return f"its controller is not a ReplicaSet of Deployment {name} for its template hash"
        if not re.fullmatch(re.escape(f"{name}-{hash_}-") + "[a-z0-9]{5}", str(pod_meta.get("name", ""))):
            return "its name is not one its ReplicaSet generates"
        if replicasets is not None:
            found = [rs for rs in replicasets if (rs.get("metadata") or {}).get("name") == owner.get("name")]
            if not found:
                return f"its ReplicaSet {owner.get('name')} does not exist"
            rs_meta = found[0].get("metadata") or {}
            if owner.get("uid") != rs_meta.get("uid"):
                return f"it names ReplicaSet {owner.get('name')} by another uid"
            rs_owner = [o for o in rs_meta.get("ownerReferences") or [] if isinstance(o, dict) and o.get("controller")]
            if not rs_owner or rs_owner[0].get("kind") != "Deployment" or rs_owner[0].get("name") != name \
                    or (uid and rs_owner[0].get("uid") != uid):
                return f"its ReplicaSet {owner.get('name')} is not controlled by Deployment {name}"
            revision = "deployment.kubernetes.io/revision"
            mine = (meta.get("annotations") or {}).get(revision)
            if mine and (rs_meta.get("annotations") or {}).get(revision) != mine:
                return f"its ReplicaSet {owner.get('name')} is not the Deployment's current one"
    else:
        if owner.get("kind") != kind or owner.get("name") != name:
            return f"its controller is not {kind} {name}"
        if kind == "StatefulSet" and not re.fullmatch(re.escape(f"{name}-") + "[0-9]+", str(pod_meta.get("name", ""))):
            return "its name is not one its StatefulSet gives"
    if uid and owner.get("uid") and kind != "Deployment" and owner.get("uid") != uid:
        return f"it names {kind} {name} by another uid"
    template = ((workload.get("spec") or {}).get("template") or {}).get("spec")
    return template_refusal(template, pod.get("spec"))
