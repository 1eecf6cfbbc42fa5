"""The scoring runtime of a bundle's evaluator.py (standard library only).

This file (itbench_dsl/runtime/evaluator.py) is copied verbatim into every bundle; the compiler
appends the sources of the runtime modules a task needs (the Kyverno matcher, the YAML reader) as
string literals, one `SPEC = json.loads(...)` line (the scenario's ground truth as data) and a
`__main__` guard. Nothing here reads the scenario's text as code: every scenario string arrives
through SPEC.

    python evaluator.py [--task TASK] [--agent-output A.json] [--state S.json]
                        [--artifact policy.yaml|policy.rego] [--opa-result recorded.json] [--gap-only]
    python evaluator.py --requirements          what a state must hold, and the commands that capture it
    python evaluator.py --capture S.json [--prometheus URL] [--kubectl PATH]   capture it with kubectl

prints one JSON verdict {scenario, task, passed, score, metrics, checks[{id, passed, detail}]}
(with `tasks`, one verdict per task, when it grades several); exit 0 when it ran (pass or fail),
2 when an input is unusable (the reason on stderr). docs/evaluator.md defines every verdict.

A bundle poses tasks (SPEC["tasks"]): SRE and FinOps `diagnose` (the agent's answer) and
`mitigate` (the cluster's state), CISO `policy` (the agent's artefact, or the PolicyReports of the
state). The evaluator grades the task it is told (`--task`) or every task the bundle poses; an
input a task needs that is missing, of the wrong shape, or a state that lacks what the task reads,
is unusable: it is never graded as another task, and never passes.
"""

import argparse
import base64
import binascii
import json
import os
import re
import subprocess
import sys
import types

RUNTIME_VERSION = 2
MAX_INPUT_BYTES = 256 * 1024 * 1024  # of any input file
MAX_ENTITIES = 100_000  # of an answer's entities or resources
MAX_EDGES = 10_000  # of an answer's propagations
CHAIN_EDGES = 500  # the propagations the chain score reads: beyond, the score is bounded work all the same
CHAIN_PASS = 0.5  # a diagnosis passes with its propagation chain F1 at least this (docs/evaluator.md)
_MISSING = object()


class InputError(Exception):
    """An input the evaluator cannot use (exit 2)."""


# ---- values ----------------------------------------------------------------------------------------------

_QUANTITY = re.compile(r"^([+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E)?$")
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


def compare(observed, op, expected) -> bool:
    """`observed OP expected` by meaning: quantities as numbers, `in` a list, `matches` a whole-value
    regular expression, `present` any value, `any` always."""
    if op == "any":
        return True
    if op == "present":
        return observed is not _MISSING and not empty(observed)
    if observed is _MISSING:
        return False
    if op in ("==", "="):
        return same(observed, expected)
    if op == "!=":
        return not same(observed, expected)
    if op == "in":
        return isinstance(expected, list) and any(same(observed, e) for e in expected)
    if op == "matches":
        try:
            return isinstance(observed, (str, int, float)) and re.fullmatch(str(expected), str(observed)) is not None
        except re.error:
            return False
    x, y = number(observed), number(expected)
    if x is None or y is None:
        return False
    return {"<": x < y, "<=": x <= y, ">": x > y, ">=": x >= y}.get(op, False)


def empty(value) -> bool:
    return value is None or value == {} or value == [] or value == ""


def shown(value, limit=80):
    text = "absent" if value is _MISSING else json.dumps(value, sort_keys=True)
    return text if len(text) <= limit else text[:limit - 3] + "..."


# ---- the state -----------------------------------------------------------------------------------------


def _decoded_secret(obj):
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


class State:
    """The snapshot, indexed once: objects by (kind, namespace, name), what was captured, firing alerts."""

    def __init__(self, state):
        if not isinstance(state, dict):
            raise InputError("the state must be a JSON object with a `resources` List")
        resources = state.get("resources")
        if not isinstance(resources, dict) or not isinstance(resources.get("items"), list):
            raise InputError("the state's `resources` must be a `kubectl get -o json` List (an object with `items`)")
        self.objects = {}
        self.by_kind = {}
        self.captured = set()  # (namespace or "", kind)
        for item in resources["items"]:
            if not isinstance(item, dict) or not isinstance(item.get("metadata"), dict):
                raise InputError("every item of the state's `resources` must be a Kubernetes object with metadata")
            meta = item["metadata"]
            kind = str(item.get("kind", ""))
            if kind == "Secret":
                item = _decoded_secret(item)
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
        if alerts is not None:
            data = alerts.get("data") if isinstance(alerts, dict) else None
            items = data.get("alerts") if isinstance(data, dict) else None
            if not isinstance(items, list):
                raise InputError("the state's `alerts` must be Prometheus /api/v1/alerts JSON ({data: {alerts: [...]}})")
            for alert in items:
                if isinstance(alert, dict) and alert.get("state", "firing") == "firing":
                    labels = alert.get("labels") if isinstance(alert.get("labels"), dict) else {}
                    namespace = labels.get("namespace")
                    self.firing.setdefault(str(labels.get("alertname", "")), set()).add(
                        str(namespace) if namespace else None)
        reports = state.get("policyReports")
        if reports is not None and not isinstance(reports, list):
            raise InputError("the state's `policyReports` must be a list of PolicyReport objects")
        self.policy_reports = reports
        self.costs = state.get("costs") if isinstance(state.get("costs"), dict) else {}

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


EMPTY_STATE = {"resources": {"kind": "List", "items": []}}


def glob_regex(glob):
    return re.compile("".join(".*" if c == "*" else "." if c == "?" else re.escape(c) for c in glob))


def walk(node, segments):
    """Values at a dotted path; a list fans out over its elements (`spec.metrics.resource...`)."""
    values = [node]
    for seg in segments:
        found = []
        for value in values:
            if isinstance(value, dict):
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


def lookup(obj, path):
    """The value a predicate or an optimum names: the path from the object, from its spec, or from
    its containers (`resources.requests.memory` on a Deployment). _MISSING when absent."""
    spec = obj.get("spec") if isinstance(obj.get("spec"), dict) else {}
    pod = spec.get("template", {}).get("spec", {}) if isinstance(spec.get("template"), dict) else spec
    bases = [obj, spec, pod] + [c for c in (pod.get("containers") or []) if isinstance(c, dict)]
    for base in bases:
        values = walk(base, path)
        if values:
            return values[0]
    if "requests" in path:
        # Kubernetes defaults a container's requests to its limits when only limits are set
        return lookup(obj, [("limits" if seg == "requests" else seg) for seg in path])
    return _MISSING


# keys that identify the items of a list of objects (the compiler's backends/evaluator.IDENTITY_KEYS)
IDENTITY_KEYS = ("name", "containerPort", "port", "mountPath", "resource.name", "pods.metric.name",
                 "external.metric.name", "object.metric.name", "ip", "key", "topologyKey")


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
        return json.loads(text)
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
    {"parse": "json"} steps into JSON held in a string. _MISSING when absent; a string that should hold
    JSON and does not gives an InvalidValue."""
    node = obj
    for seg in path:
        if isinstance(seg, dict):
            if not isinstance(node, str):
                return _MISSING
            node = parse_text(node, seg.get("parse"))
            if isinstance(node, InvalidValue):
                return node
        elif isinstance(seg, list) and isinstance(node, list):
            found = [v for v in node if isinstance(v, dict) and str(nested(v, seg[0])) == str(seg[1])]
            node = found[0] if len(found) == 1 else _MISSING
        elif isinstance(seg, str) and isinstance(node, dict):
            node = node.get(seg, _MISSING)
        else:
            return _MISSING
        if node is _MISSING:
            return _MISSING
    return node


class InvalidValue:
    def __init__(self, why):
        self.why = why


def owns(expected, observed):
    """Whether `observed` holds what `expected` declares: every declared key with a value it owns (the
    API server's defaults and additions are not compared), list items matched by identity, scalars by
    meaning."""
    if isinstance(expected, dict):
        if not isinstance(observed, dict):
            return False
        return all(owns(v, observed[k]) if k in observed else empty(v) for k, v in expected.items())
    if isinstance(expected, list):
        if not isinstance(observed, list):
            return False
        key = identity_key(expected)
        if key is not None and identity_key(observed) == key:
            index = {str(nested(o, key)): o for o in observed}
            return all(str(nested(e, key)) in index and owns(e, index[str(nested(e, key))]) for e in expected)
        return len(expected) == len(observed) and all(owns(e, o) for e, o in zip(expected, observed))
    return same(expected, observed)


# What the API server fills in for a pod template field left out: a field a fault added is gone again
# when it is absent, empty, or this default.
SERVER_DEFAULTS = {
    "dnsPolicy": "ClusterFirst", "restartPolicy": "Always", "schedulerName": "default-scheduler",
    "terminationGracePeriodSeconds": 30, "priorityClassName": "", "priority": 0, "enableServiceLinks": True,
    "hostNetwork": False, "hostPID": False, "hostIPC": False, "shareProcessNamespace": False,
    "preemptionPolicy": "PreemptLowerPriority",
}


def gone(observed, path):
    if observed is _MISSING or empty(observed):
        return True
    last = next((s for s in reversed(path) if isinstance(s, str)), None)
    return last in SERVER_DEFAULTS and same(observed, SERVER_DEFAULTS[last])


def show_path(path):
    parts = []
    for s in path:
        if isinstance(s, list):
            parts.append(f"[{s[0]}={s[1]}]")
        elif isinstance(s, dict):
            parts.append("(json)")
        else:
            parts.append(str(s))
    return ".".join(parts)


def ref_text(ref):
    return f"{ref.get('namespace') or ''}/{ref['kind']}/{ref['name']}"


def workload_ready(obj):
    if obj.get("kind") == "Pod":
        return pod_ready(obj)
    want = number((obj.get("spec") or {}).get("replicas", 1))
    status = obj.get("status") or {}
    have = number(status.get("readyReplicas", 0)) or 0.0
    updated = number(status.get("updatedReplicas", have))
    return want is not None and want > 0 and have >= want and (updated is None or updated >= want)


def pod_ready(pod):
    status = pod.get("status") or {}
    ready = any(c.get("type") == "Ready" and c.get("status") == "True" for c in status.get("conditions") or []
                if isinstance(c, dict))
    return status.get("phase") == "Running" and ready


def labels_match(labels, selector):
    return bool(selector) and isinstance(labels, dict) and all(labels.get(k) == v for k, v in selector.items())


# ---- names in an answer --------------------------------------------------------------------------------

# the names agents give kinds (kubectl's short names, plurals, any case) -> the kind
KIND_NAMES = {
    "deploy": "Deployment", "deployment": "Deployment", "deployments": "Deployment",
    "sts": "StatefulSet", "statefulset": "StatefulSet", "statefulsets": "StatefulSet",
    "ds": "DaemonSet", "daemonset": "DaemonSet", "daemonsets": "DaemonSet",
    "rs": "ReplicaSet", "replicaset": "ReplicaSet", "replicasets": "ReplicaSet",
    "po": "Pod", "pod": "Pod", "pods": "Pod", "svc": "Service", "service": "Service", "services": "Service",
    "cm": "ConfigMap", "configmap": "ConfigMap", "configmaps": "ConfigMap", "secret": "Secret", "secrets": "Secret",
    "ns": "Namespace", "namespace": "Namespace", "namespaces": "Namespace",
    "hpa": "HorizontalPodAutoscaler", "horizontalpodautoscaler": "HorizontalPodAutoscaler",
    "horizontalpodautoscalers": "HorizontalPodAutoscaler", "sa": "ServiceAccount", "serviceaccount": "ServiceAccount",
    "pvc": "PersistentVolumeClaim", "persistentvolumeclaim": "PersistentVolumeClaim",
    "netpol": "NetworkPolicy", "networkpolicy": "NetworkPolicy", "quota": "ResourceQuota",
    "resourcequota": "ResourceQuota", "no": "Node", "node": "Node", "nodes": "Node",
}


def parse_name(text):
    """(namespace, kind, name) from `ns/Kind/name`, `/Kind/name` or `Kind/name`; kind None for a bare name."""
    parts = str(text).strip().split("/")
    if len(parts) >= 3:
        return parts[0] or None, parts[1], "/".join(parts[2:])
    if len(parts) == 2:
        return None, parts[0], parts[1]
    return None, None, parts[0]


_POD_HASH = re.compile(r"[a-z0-9]{6,10}")
_POD_SUFFIX = re.compile(r"[a-z0-9]{5}")


class Names:
    """What the names of an answer refer to: objects of the state, or (for what the state does not hold,
    or with no state) objects of the scenario. A name that refers to no object refers to nothing."""

    def __init__(self, spec, state):
        self.state = state
        self.by_name = {}
        self.kinds = {}
        for kind, namespace, name in spec["objects"]:
            self._add((kind, namespace or None, name))
        for key in state.objects:
            self._add(key)
        self.workloads = {}
        for w in spec["workloads"]:
            self.workloads.setdefault(w["name"], []).append(w)
        self.static = [w for w in spec["workloads"] if w["kind"] == "Pod"]
        self.cache = {}
        self.owners = {}

    def _add(self, key):
        self.by_name.setdefault(key[2], []).append(key)
        self.kinds.setdefault(key[0].lower(), key[0])

    def kind_of(self, text):
        lowered = str(text).strip().lower()
        return KIND_NAMES.get(lowered) or self.kinds.get(lowered) or self.kinds.get(lowered.split(".")[0]) or text

    def resolve(self, text, kind_hint=None):
        """The objects `text` names, as a sorted tuple of (kind, namespace, name) keys."""
        cache_key = (text, kind_hint)
        found = self.cache.get(cache_key)
        if found is None:
            found = self.cache[cache_key] = tuple(sorted(self._resolve(str(text), kind_hint),
                                                         key=lambda k: (k[0], k[1] or "", k[2])))
        return found

    def _resolve(self, text, kind_hint):
        namespace, kind, name = parse_name(text)
        if kind is None and kind_hint:
            kind = kind_hint
        kind = self.kind_of(kind) if kind else None
        found = {k for k in self.by_name.get(name, ()) if (kind is None or k[0] == kind)
                 and (namespace is None or k[1] == namespace)}
        if not found and kind in (None, "Pod"):
            found = self._offline_pod(namespace, name)
        return found

    def _offline_pod(self, namespace, name):
        """A pod the state does not hold, named as its workload's pods are named: only where the state
        did not capture the pods of that namespace (where it did, a pod it lacks does not exist)."""
        owner = owner_from_name(name, namespace, self.workloads, self.static)
        if owner is None or self.state.has(owner["namespace"], "Pod"):
            return set()
        return {("Pod", owner["namespace"], name)}

    def owner(self, key):
        """(namespace, workload) a pod belongs to, from its owner references, else from its name."""
        if key in self.owners:
            return self.owners[key]
        found = None
        pod = self.state.objects.get(key)
        meta = pod.get("metadata") if isinstance(pod, dict) else None
        for ref in (meta.get("ownerReferences") or []) if isinstance(meta, dict) else ():
            if not isinstance(ref, dict):
                continue
            owner = str(ref.get("name", ""))
            if ref.get("kind") == "ReplicaSet":
                labels = meta.get("labels") if isinstance(meta.get("labels"), dict) else {}
                hash_ = labels.get("pod-template-hash")
                owner = owner[:-len(hash_) - 1] if hash_ and owner.endswith("-" + str(hash_)) else owner.rpartition("-")[0]
            if ref.get("kind") in ("ReplicaSet", "StatefulSet", "DaemonSet", "Job"):
                found = (key[1], owner)
                break
        if found is None:
            w = owner_from_name(key[2], key[1], self.workloads, self.static)
            found = (w["namespace"], w["name"]) if w else None
        self.owners[key] = found
        return found


def owner_from_name(name, namespace, workloads, static):
    """The workload whose pods are named like `name`: `<deployment>-<hash>-<suffix>`,
    `<statefulset>-<ordinal>`, or a static pod's `<name>-<node>`."""
    parts = name.split("-")
    candidates = []
    if len(parts) >= 3 and _POD_SUFFIX.fullmatch(parts[-1]) and _POD_HASH.fullmatch(parts[-2]):
        candidates.append(("Deployment", "-".join(parts[:-2])))
    if len(parts) >= 2 and parts[-1].isdigit():
        candidates.append(("StatefulSet", "-".join(parts[:-1])))
    for kind, base in candidates:
        for w in workloads.get(base, ()):
            if w["kind"] == kind and namespace in (None, w["namespace"]):
                return w
    for w in static:
        if name.startswith(w["name"] + "-") and namespace in (None, w["namespace"]):
            return w
    return None


# ---- SRE diagnosis ---------------------------------------------------------------------------------------


class Diagnosis:
    def __init__(self, spec, state):
        truth = spec["diagnosis"]
        self.spec = spec
        self.names = Names(spec, state)
        self.groups = {g["id"]: g for g in truth["groups"]}
        self.by_object = {}
        self.by_owner = {}
        for g in truth["groups"]:
            if g["kind"] == "Pod":
                self.by_owner.setdefault((g["namespace"], g["owner"]), []).append(g["id"])
            else:
                self.by_object.setdefault((g["kind"], g["namespace"], g["name"]), []).append(g["id"])
        # aliases join groups of one component: a class id per group
        self.klass = {}
        for index, ids in enumerate(truth["aliases"] or []):
            for gid in ids:
                self.klass.setdefault(gid, f"alias{index}")
        for gid in self.groups:
            self.klass.setdefault(gid, gid)
        self.true_classes = sorted({self.klass[g["id"]] for g in truth["groups"] if g.get("root_cause")})
        adjacency = {}
        for a, b in truth["graph"]:
            adjacency.setdefault(a, set()).add(b)
            adjacency.setdefault(b, set()).add(a)
        self.adjacency = adjacency
        self.true_components = {g["component"] for g in truth["groups"] if g.get("root_cause")}
        self._hops = self._distances(self.true_components)
        self.services = {(s["namespace"], s["name"]): s["component"] for s in spec["services"]}

    def _distances(self, sources):
        dist = {s: 0 for s in sources}
        frontier = list(sources)
        while frontier:
            nxt = []
            for node in frontier:
                for other in sorted(self.adjacency.get(node, ())):
                    if other not in dist:
                        dist[other] = dist[node] + 1
                        nxt.append(other)
            frontier = nxt
        return dist

    def groups_of(self, key):
        """The groups an object belongs to: those on the object itself; for a pod, its workload's pod
        group; for a workload no group names, the group of its pods (their controller stands for them,
        as when the fault leaves the workload with no pod to name)."""
        found = list(self.by_object.get(key, ()))
        if key[0] == "Pod":
            owner = self.names.owner(key)
            if owner is not None:
                found += self.by_owner.get(owner, [])
        elif not found and key[0] in ("Deployment", "StatefulSet"):
            found = list(self.by_owner.get((key[1], key[2]), ()))
        return found

    def named(self, text):
        """(the objects a name refers to, the classes of the groups they belong to); a group id (ITBench's
        2025 answers) names its group."""
        if text in self.groups:
            return (("group", text),), {self.klass[text]}
        keys = self.names.resolve(text)
        return keys, {self.klass[g] for key in keys for g in self.groups_of(key)}

    def component(self, key):
        if key[0] == "group":
            return self.groups[key[1]]["component"]
        if key[0] in ("Deployment", "StatefulSet"):
            return key[2]
        if key[0] == "Pod":
            owner = self.names.owner(key)
            return owner[1] if owner else None
        if key[0] == "Service":
            return self.services.get((key[1], key[2]))
        return f"{key[0]}:{key[2]}"

    def credit(self, keys):
        best = 0.0
        for key in keys:
            hops = self._hops.get(self.component(key))
            if hops is not None:
                best = max(best, 1.0 / (1 + hops))
        return best

    def evaluate(self, output, checks, metrics):
        predictions, seen = [], set()
        for text in root_cause_entities(output):
            keys, classes = self.named(text)
            identity = keys or ("unresolved", text.strip().lower())
            if identity in seen:  # spellings of one object count once
                continue
            seen.add(identity)
            predictions.append((text, keys, classes))
        correct = [bool(classes & set(self.true_classes)) for _, _, classes in predictions]
        found = {c for _, _, classes in predictions for c in classes if c in self.true_classes}
        if not self.true_classes:  # a control: nothing is wrong, and the right answer names no cause
            precision = recall = f1 = 0.0 if predictions else 1.0
        else:
            precision = sum(correct) / len(predictions) if predictions else 0.0
            recall = len(found) / len(self.true_classes)
            f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
        metrics["root_cause_entity_precision"] = round(precision, 6)
        metrics["root_cause_entity_recall"] = round(recall, 6)
        metrics["root_cause_entity_f1"] = round(f1, 6)
        for k in (1, 3):
            top = {c for _, _, classes in predictions[:k] for c in classes if c in self.true_classes}
            metrics[f"root_cause_entity_k@{k}"] = round(len(top) / len(self.true_classes), 6) \
                if self.true_classes else (1.0 if not predictions else 0.0)
        credits = [1.0 if ok else self.credit(keys) for (_, keys, _), ok in zip(predictions, correct)]
        proximity = sum(credits) / len(credits) if credits else (1.0 if not self.true_classes else 0.0)
        metrics["root_cause_proximity"] = round(proximity, 6)
        unresolved = [text for text, keys, _ in predictions if not keys]
        missed = [c for c in self.true_classes if c not in found]
        wrong = [text for (text, _, _), ok in zip(predictions, correct) if not ok]
        exact = precision == 1.0 and recall == 1.0
        checks.append({"id": "diagnosis.root_cause", "passed": exact,
                       "detail": f"{len(predictions)} named, {sum(correct)} correct; root causes missed: {len(missed)}"
                                 + (f"; not root causes: {', '.join(wrong[:5])}" if wrong else "")
                                 + (f"; naming no object: {', '.join(unresolved[:5])}" if unresolved else "")})
        chain = self.chain_f1(output)
        root = 1.0 if exact else max(f1, proximity)
        if chain is None:
            return root
        metrics["propagation_chain"] = round(chain, 6)
        checks.append({"id": "diagnosis.propagation", "passed": chain >= CHAIN_PASS,
                       "detail": f"propagation chain F1 {chain:.3f} (passes from {CHAIN_PASS})"})
        return (root + chain) / 2

    # propagation chains -------------------------------------------------------------------------------

    def node(self, text):
        keys, classes = self.named(text)
        if classes:
            return sorted(classes)[0]
        # an endpoint that names no group keeps its own identity (one per object): it can only lower the score
        return "?" + (json.dumps(keys) if keys else text.strip().lower())

    def chain_f1(self, output):
        truth = [(self.klass[p["source"]], self.klass[p["target"]]) for p in self.spec["diagnosis"]["propagations"]]
        if not any(a != b for a, b in truth):  # no chain between components: nothing to grade
            return None
        predicted = []
        for p in (output.get("propagations") or [])[:CHAIN_EDGES]:
            if not isinstance(p, dict):
                continue
            predicted.append((self.node(str(p.get("source", ""))), self.node(str(p.get("target", "")))))
        true_paths, pred_paths = paths(truth), paths(predicted)
        if not pred_paths:
            return 0.0
        recall = sum(max(lcs(t, p) for p in pred_paths) for t in true_paths) / sum(len(t) for t in true_paths)
        precision = sum(max(lcs(p, t) for t in true_paths) for p in pred_paths) / sum(len(p) for p in pred_paths)
        return 2 * precision * recall / (precision + recall) if precision + recall else 0.0


def root_cause_entities(output):
    out = []
    for entity in output.get("entities") or []:
        if not isinstance(entity, dict):
            continue
        flagged = entity.get("root_cause") is True or entity.get("contributing_factor") is True
        name = entity.get("name", entity.get("id"))
        if flagged and name is not None:
            out.append(str(name))
    return out


def paths(edges, limit=100):
    """Maximal paths of a propagation graph, with equal consecutive nodes collapsed (contracted)."""
    adjacency = {}
    indegree = {}
    for a, b in edges:
        if a == b:
            continue
        adjacency.setdefault(a, [])
        if b not in adjacency[a]:
            adjacency[a].append(b)
        indegree[b] = indegree.get(b, 0) + 1
        indegree.setdefault(a, indegree.get(a, 0))
    starts = [n for n in adjacency if indegree.get(n, 0) == 0] or list(adjacency)[:1]
    out = []
    stack = [[s] for s in reversed(starts)]  # depth first, without recursion: an agent's chain may be long
    while stack and len(out) < limit:
        path = stack.pop()
        nexts = [n for n in adjacency.get(path[-1], []) if n not in path]
        if not nexts:
            out.append(tuple(path))
        stack.extend(path + [n] for n in reversed(nexts))
    return out


def lcs(a, b):
    row = [0] * (len(b) + 1)
    for x in a:
        prev = 0
        for j, y in enumerate(b):
            cur = row[j + 1]
            row[j + 1] = prev + 1 if x == y else max(row[j + 1], row[j])
            prev = cur
    return row[-1]


# ---- mitigation: observed health -------------------------------------------------------------------------


def predicate_check(pred, state):
    kind = pred["kind"]
    if kind == "alert":
        return alert_check(pred["alert"], pred.get("namespaces"), pred["firing"], state)
    ref = pred["target"]
    objects = state.matching(ref)
    if kind == "state":
        if pred["state"] == "absent":
            return not objects, f"{ref_text(ref)} {'present' if objects else 'absent'}"
        if pred["state"] == "exists":
            return bool(objects), f"{ref_text(ref)} {'present' if objects else 'absent'}"
        if not objects:
            return False, f"{ref_text(ref)} absent"
        ready = all(workload_ready(o) for o in objects)
        return ready, f"{ref_text(ref)} {'ready' if ready else 'not ready'}"
    if not objects:
        return False, f"{ref_text(ref)} absent"
    observed = lookup(objects[0], pred["path"])
    ok = compare(observed, pred["op"], pred["value"])
    return ok, f"{ref_text(ref)} {'.'.join(pred['path'])} is {shown(observed)}, wants {pred['op']} {shown(pred['value'])}"


def alert_check(name, namespaces, want_firing, state):
    # an alert counts in the scenario's own namespaces (or with no namespace label): the same alert
    # firing for another tenant of the cluster neither blocks nor fakes a mitigation
    where = state.firing.get(name, set())
    firing = bool(where) if not namespaces else any(n is None or n in namespaces for n in where)
    scope = f" in {', '.join(namespaces)}" if namespaces else ""
    return firing == want_firing, f"alert {name} {'firing' if firing else 'not firing'}{scope}"


def ready_check(ref, state):
    if ref["kind"] == "Pod":  # a static pod: its mirror pods, `<name>-<node>`; the kubelet recreates a deleted one
        pods = [p for p in state.by_kind.get(("Pod", ref["namespace"]), [])
                if str(p["metadata"].get("name", "")).startswith(ref["name"] + "-")]
        ok = all(pod_ready(p) for p in pods)
        return ok, f"{ref_text(ref)} {'not ready' if not ok else 'running and ready' if pods else 'recreated by the kubelet'}"
    obj = state.get(ref)
    if obj is None:
        return False, f"{ref_text(ref)} is missing"
    ok = workload_ready(obj)
    status = obj.get("status") or {}
    return ok, (f"{ref_text(ref)} ready" if ok else
                f"{ref_text(ref)} not ready ({shown(status.get('readyReplicas', 0))} of "
                f"{shown((obj.get('spec') or {}).get('replicas', 1))} replicas ready)")


def selected_pods(service, state):
    selector = (service.get("spec") or {}).get("selector") or {}
    namespace = service["metadata"].get("namespace")
    return [p for p in state.by_kind.get(("Pod", namespace), []) if labels_match(p["metadata"].get("labels"), selector)]


def container_ports(pods):
    """{name: number} and the set of numbers the pods' containers declare."""
    names, numbers = {}, set()
    for pod in pods:
        for c in ((pod.get("spec") or {}).get("containers") or []):
            for p in (c.get("ports") or []) if isinstance(c, dict) else ():
                if isinstance(p, dict) and number(p.get("containerPort")) is not None:
                    numbers.add(int(number(p["containerPort"])))
                    if p.get("name"):
                        names[str(p["name"])] = int(number(p["containerPort"]))
    return names, numbers


def port_number(value, names):
    """A Service targetPort as a number: a named port through the selected pods' container ports."""
    if isinstance(value, str) and number(value) is None:
        return names.get(value)
    n = number(value)
    return int(n) if n is not None else None


def service_check(ref, state):
    """A service the fault acts on works again: it selects ready pods, and every port reaches a port
    those pods' containers declare (by number, or by name)."""
    obj = state.get(ref)
    if obj is None:
        return False, f"{ref_text(ref)} is missing"
    pods = selected_pods(obj, state)
    ready = [p for p in pods if pod_ready(p)]
    if not ready:
        return False, f"{ref_text(ref)} selects no ready pod ({len(pods)} selected)"
    names, numbers = container_ports(ready)
    broken = []
    for p in (obj.get("spec") or {}).get("ports") or []:
        if not isinstance(p, dict):
            continue
        target = p.get("targetPort", p.get("port"))
        resolved = port_number(target, names)
        if resolved is None or (numbers and resolved not in numbers):
            broken.append(f"port {shown(p.get('port'))} -> {shown(target)}")
    if broken:
        return False, f"{ref_text(ref)}: no container port answers {', '.join(broken)}"
    return True, f"{ref_text(ref)} selects {len(ready)} ready pod(s) and reaches their ports"


def field_check(entry, state):
    """Every field the fault changed holds its healthy value, or a value the fault (or the scenario)
    accepts; a field the fault added is gone (absent, empty or the API server's default)."""
    ref = entry["object"]
    obj = state.get(ref)
    if obj is None:
        return False, f"{ref_text(ref)} is missing"
    wrong = []
    for change in entry["changes"]:
        if change.get("governed_by"):
            continue  # the scenario's own statement about this field decides (its check is in the verdict)
        path = change["path"]
        observed = at(obj, path)
        if isinstance(observed, InvalidValue):
            wrong.append(f"{show_path(path)}: {observed.why}")
            continue
        accept = change.get("accept")
        if accept is not None:
            if accept["op"] == "changed":  # any value but the fault's (readiness tells whether it works)
                ok = not (observed is not _MISSING and owns(change["faulty"], observed))
            elif accept["op"] in ("any", "present"):
                ok = compare(observed, accept["op"], None)
            elif accept["value"] != "healthy":
                ok = compare(observed, accept["op"], accept["value"])
            elif "healthy" in change:
                ok = compare(observed, accept["op"], change["healthy"])
            else:  # compared with a healthy value that is absent: only absence compares
                ok = gone(observed, path)
        elif change.get("absent"):
            ok = gone(observed, path)
        elif ref["kind"] == "Service" and path and path[-1] == "targetPort":
            names, _ = container_ports(selected_pods(obj, state))
            ok = observed is not _MISSING and port_number(observed, names) is not None and \
                port_number(observed, names) == port_number(change["healthy"], names)
        else:
            ok = observed is not _MISSING and owns(change["healthy"], observed)
        if not ok:
            wants = (f"{accept['op']} {shown(change.get('healthy')) if accept['value'] == 'healthy' else shown(accept['value'])}"
                     if accept else "absent" if change.get("absent") else shown(change["healthy"]))
            wrong.append(f"{show_path(path)} is {shown(observed)}, wants {wants}")
    return not wrong, ("; ".join(wrong[:5]) + (f"; and {len(wrong) - 5} more" if len(wrong) > 5 else "")) if wrong \
        else "every field the fault changed is healthy again"


CHAOS_PAUSE = "experiment.chaos-mesh.org/pause"


def acts(obj):
    """Whether an object acts on its own: a workload only while it runs pods, a Chaos Mesh experiment or
    schedule only while it is not paused."""
    if obj.get("kind") in ("Deployment", "StatefulSet", "ReplicaSet"):
        return number((obj.get("spec") or {}).get("replicas", 1)) != 0
    annotations = (obj.get("metadata") or {}).get("annotations") or {}
    if str(obj.get("apiVersion", "")).startswith("chaos-mesh.org/") and str(annotations.get(CHAOS_PAUSE)).lower() == "true":
        return False
    return True


def created_check(ref, state):
    obj = state.get(ref)
    if obj is None:
        return True, f"{ref_text(ref)} removed"
    if not acts(obj):
        return True, f"{ref_text(ref)} no longer acts (scaled to zero, or paused)"
    return False, f"{ref_text(ref)} still present"


def mitigation_checks(spec, state, checks):
    m = spec["mitigation"]
    for index, pred in enumerate(m["predicates"]):
        ok, detail = predicate_check(pred, state)
        checks.append({"id": f"mitigation.predicate.{index}", "passed": ok, "detail": detail})
    for alert in m["alerts"]:
        ok, detail = alert_check(alert["alert"], alert["namespaces"], False, state)
        checks.append({"id": f"mitigation.alert.{alert['alert']}", "passed": ok, "detail": detail})
    for ref in m["ready"]:
        ok, detail = ready_check(ref, state)
        checks.append({"id": f"health.ready.{ref_text(ref)}", "passed": ok, "detail": detail})
    for entry in m["programs"]:
        obj = state.get(entry["object"])
        ok = obj is not None and owns(entry["keep"], obj)
        checks.append({"id": f"health.program.{ref_text(entry['object'])}", "passed": ok,
                       "detail": f"{ref_text(entry['object'])} " + ("runs its own images, commands and arguments" if ok
                                 else "is missing" if obj is None else "no longer runs what it ran: its containers' "
                                 "images, commands or arguments, or its pod labels, differ from the healthy ones")})
    for ref in m["services"]:
        ok, detail = service_check(ref, state)
        checks.append({"id": f"health.service.{ref_text(ref)}", "passed": ok, "detail": detail})
    seen = set()
    for index, fault in enumerate(m["faults"]):
        parts = [(f"fields.{ref_text(e['object'])}", *field_check(e, state)) for e in fault["fields"]]
        parts += [(f"created.{ref_text(ref)}", *created_check(ref, state)) for ref in fault["created"]]
        if fault["undone_by"] == "any" and len(parts) > 1:
            undone = [part for part in parts if part[1]]
            checks.append({"id": f"fault.{index}.{fault['fault']}", "passed": bool(undone), "detail": (
                f"undone through {undone[0][0]}: {undone[0][2]}" if undone else
                "none of its parts is undone: " + "; ".join(f"{i}: {d}" for i, _, d in parts))})
            continue
        for check_id, ok, detail in parts:
            if check_id not in seen:  # an object two faults touch is checked once
                seen.add(check_id)
                checks.append({"id": check_id, "passed": ok, "detail": detail})
    for entry in m["restored"]:
        ref = entry["object"]
        obj = state.get(ref)
        ok = obj is not None and owns(entry["owned"], obj)
        detail = "still deleted" if obj is None else "restored" if ok else "recreated with other fields than it had"
        checks.append({"id": f"restored.{ref_text(ref)}", "passed": ok, "detail": f"{ref_text(ref)} {detail}"})
    safeguard_checks(spec, state, checks)


def safeguard_checks(spec, state, checks):
    """No workload scaled to zero, no service deleted or re-pointed, no pod relabelled away."""
    broken = []
    templates = {}
    for w in spec["workloads"]:
        if w["kind"] == "Pod":  # a static pod: the kubelet runs it whatever the agent does to its mirror pod
            continue
        obj = state.get(w)
        if obj is None:
            broken.append(f"{ref_text(w)} deleted")
            continue
        replicas = number((obj.get("spec") or {}).get("replicas", 1))
        if w["min_replicas"] > 0 and (replicas is None or replicas < 1):
            broken.append(f"{ref_text(w)} scaled to {replicas:g}" if replicas is not None else f"{ref_text(w)} has no replicas")
        template = ((obj.get("spec") or {}).get("template") or {}).get("metadata") or {}
        templates[(w["namespace"], w["name"])] = template.get("labels") or {}
    workloads = {(w["namespace"], w["name"]): w for w in spec["workloads"]}
    names = Names(spec, state)
    for s in spec["services"]:
        obj = state.get(s)
        if obj is None:
            broken.append(f"{ref_text(s)} deleted")
            continue
        selector = (obj.get("spec") or {}).get("selector") or {}
        if s["selector"] and selector != s["selector"]:
            broken.append(f"{ref_text(s)} selector changed")
        if s["component"] is None or not s["selector"]:
            continue
        labels = templates.get((s["namespace"], s["component"]))
        if labels is not None and not labels_match(labels, s["selector"]):
            broken.append(f"pods of {s['component']} no longer carry the labels {ref_text(s)} selects")
        if (s["namespace"], s["component"]) not in workloads:
            continue
        owned = [p for p in state.by_kind.get(("Pod", s["namespace"]), [])
                 if names.owner(("Pod", s["namespace"], p["metadata"].get("name", ""))) == (s["namespace"], s["component"])]
        relabelled = [p["metadata"]["name"] for p in owned if not labels_match(p["metadata"].get("labels"), s["selector"])]
        if relabelled:
            broken.append(f"pods relabelled away from {ref_text(s)}: {', '.join(sorted(relabelled)[:3])}")
    checks.append({"id": "safeguards", "passed": not broken,
                   "detail": "; ".join(broken) if broken else "workloads scaled, services and their selectors intact"})


# ---- FinOps ----------------------------------------------------------------------------------------------


def finops_proximity(spec, state, checks, metrics):
    proximities = []
    finops = spec["finops"]
    for index, optimum in enumerate(finops["optimal"]):
        obj = state.get(optimum["object"])
        observed = lookup(obj, optimum["path"]) if obj is not None else _MISSING
        x, y = number(observed) if observed is not _MISSING else None, number(optimum["value"])
        if x is None or not y:
            proximity = 1.0 if observed is not _MISSING and same(observed, optimum["value"]) else 0.0
        else:
            proximity = min(1.0, max(0.0, 1.0 - abs(x - y) / abs(y)))
        proximities.append(proximity)
        metrics[f"proximity.{index}"] = round(proximity, 6)
        checks.append({"id": f"finops.proximity.{index}", "passed": proximity >= finops["threshold"],
                       "detail": f"{ref_text(optimum['object'])} {'.'.join(optimum['path'])} is {shown(observed)}, "
                                 f"optimal {shown(optimum['value'])}: proximity {proximity:.3f}"})
    score = sum(proximities) / len(proximities) if proximities else 1.0
    metrics["proximity"] = round(score, 6)
    return score


def finops_answer(spec, output, state, checks, metrics):
    """The resources the answer names (`<ns>/<Kind>/<name>`, as the prompt asks; a bare name with its
    kind in `type` too) against the objects each fault makes waste."""
    names = Names(spec, state)
    findings = [{(r["kind"], r.get("namespace") or None, r["name"]) for r in refs} for refs in spec["finops"]["findings"]]
    predictions, seen = [], set()
    for item in output["resource"]:
        if not isinstance(item, dict) or not isinstance(item.get("name"), str):
            raise InputError("each `resource` of the answer must be an object with a `name` string")
        text = item["name"]
        hint = item.get("type") if isinstance(item.get("type"), str) and "/" not in text else None
        keys = names.resolve(text, hint if hint and names.kind_of(hint) != hint else None) or \
            (names.resolve(text) if hint else ())
        identity = keys or ("unresolved", text.strip().lower())
        if identity in seen:
            continue
        seen.add(identity)
        predictions.append((text, set(keys)))
    hits = [any(keys & f for f in findings) for _, keys in predictions]
    found = sum(1 for f in findings if any(keys & f for _, keys in predictions))
    precision = sum(hits) / len(predictions) if predictions else 0.0
    recall = found / len(findings) if findings else 1.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    metrics["resource_precision"], metrics["resource_recall"] = round(precision, 6), round(recall, 6)
    metrics["resource_f1"] = round(f1, 6)
    wrong = [text for (text, _), ok in zip(predictions, hits) if not ok]
    checks.append({"id": "finops.resource", "passed": precision == 1.0 and recall == 1.0,
                   "detail": f"{len(predictions)} named, {sum(hits)} correct, {found} of {len(findings)} found"
                             + (f"; not wasteful: {', '.join(wrong[:5])}" if wrong else "")})
    return f1


# ---- CISO ------------------------------------------------------------------------------------------------


def report_verdicts(reports):
    """{(kind, namespace, name): set of results} from PolicyReports (per-resource `scope` or per-result
    resources), and the names of the policies that reported."""
    verdicts, policies = {}, set()
    for report in reports:
        if not isinstance(report, dict):
            continue
        scope = report.get("scope") if isinstance(report.get("scope"), dict) else None
        for result in report.get("results") or []:
            if not isinstance(result, dict):
                continue
            if result.get("policy"):
                policies.add(str(result["policy"]))
            targets = result.get("resources") or ([scope] if scope else [])
            for res in targets:
                if isinstance(res, dict):
                    key = (res.get("kind"), res.get("namespace") or None, res.get("name"))
                    verdicts.setdefault(key, set()).add(str(result.get("result", "")))
    return verdicts, policies


def contract_problems(contract, policies):
    """How Kyverno policies break the artefact contract the prompt states (ciso/tasks.py)."""
    problems = []
    if not policies:
        return ["no Kyverno policy to check"]
    for policy in policies:
        meta = policy.get("metadata") if isinstance(policy.get("metadata"), dict) else {}
        name = str(meta.get("name", "?"))
        spec = policy.get("spec") if isinstance(policy.get("spec"), dict) else {}
        if policy.get("kind") != contract["kind"]:
            problems.append(f"`{name}` is a {policy.get('kind')}, the prompt asks for a {contract['kind']}")
        if policy.get("apiVersion") != contract["apiVersion"]:
            problems.append(f"`{name}` is {policy.get('apiVersion')}, the prompt asks for {contract['apiVersion']}")
        actions = [spec.get("validationFailureAction")] + [
            (r.get("validate") or {}).get("failureAction") for r in spec.get("rules") or []
            if isinstance(r, dict) and isinstance(r.get("validate"), dict)]
        if contract.get("audit") and any(a is not None and str(a).lower() != "audit" for a in actions):
            problems.append(f"`{name}` blocks (Enforce): the prompt asks it to report (Audit)")
        if contract.get("background") and spec.get("background") is False:
            problems.append(f"`{name}` sets background: false: the prompt asks it to check existing objects")
    if contract.get("name"):
        mine = [p for p in policies if (p.get("metadata") or {}).get("name") == contract["name"]]
        if not mine:
            problems.append(f"the policy `{contract['name']}` is not there: the prompt asks to edit it in place")
        for policy in mine:
            rules = {r.get("name") for r in (policy.get("spec") or {}).get("rules") or [] if isinstance(r, dict)}
            lost = [r for r in contract.get("rules", []) if r not in rules]
            if lost:
                problems.append(f"`{contract['name']}` lost its rule(s) {', '.join(lost)}")
    return problems


def ciso(spec, verdicts, checks, metrics, gap_only, source):
    """verdicts: {(kind, namespace, name): set of pass/fail/...} for the gap and compliant objects. The
    compliant objects are always graded (a policy that fails everything never passes); `gap_only`
    reports ITBench's own rule, which grades the gap alone, as a metric beside the verdict."""
    ciso_spec = spec["ciso"]
    flagged = kept = 0
    for obj in ciso_spec["gaps"]:
        ref = obj_ref(obj)
        got = verdicts.get(ref, set())
        ok = "fail" in got or "false" in got
        flagged += ok
        checks.append({"id": f"ciso.gap.{ref_text(as_ref(ref))}", "passed": ok,
                       "detail": f"{source}: {', '.join(sorted(got)) or 'no result'} (must fail)"})
    for obj in ciso_spec["compliant"]:
        ref = obj_ref(obj)
        got = verdicts.get(ref, set())
        # a compliant object must not fail; a recorded Rego run must also cover it
        ok = not ({"fail", "false", "error"} & got) and (bool(got) or not source.startswith("opa"))
        kept += ok
        checks.append({"id": f"ciso.compliant.{ref_text(as_ref(ref))}", "passed": ok,
                       "detail": f"{source}: {', '.join(sorted(got)) or 'no result'} (must pass)"})
    gaps, compliant = len(ciso_spec["gaps"]), len(ciso_spec["compliant"])
    metrics["gaps_flagged"] = round(flagged / gaps, 6) if gaps else 1.0
    metrics["compliant_passed"] = round(kept / compliant, 6) if compliant else 1.0
    if gap_only:
        metrics["itbench_gap_only_passed"] = flagged == gaps
    return (flagged + kept) / (gaps + compliant) if gaps + compliant else 0.0


def obj_ref(obj):
    meta = obj.get("metadata") or {}
    return (obj.get("kind"), meta.get("namespace") or None, meta.get("name"))


def as_ref(key):
    return {"kind": key[0], "namespace": key[1], "name": key[2]}


def kyverno_offline(spec, policies):
    """Run the agent's Kyverno policy over the embedded gap and compliant manifests."""
    matcher = embedded_module("kyverno")
    if matcher is None:
        raise InputError("this evaluator has no embedded Kyverno matcher: grade from PolicyReports in the state")
    verdicts = {}
    for obj in spec["ciso"]["gaps"] + spec["ciso"]["compliant"]:
        results = set()
        for policy in policies:
            try:
                outcome = matcher.evaluate_policy(policy, obj)
            except Exception as exc:  # noqa: BLE001 - Unsupported (a feature the matcher lacks), a malformed policy
                raise InputError(f"the Kyverno policy cannot be evaluated offline: {type(exc).__name__}: {exc}")
            for result in outcome:
                status = getattr(result, "status", None) or getattr(result, "result", "")
                results.add(str(status))
        verdicts[obj_ref(obj)] = results
    return verdicts


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
        return None
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


def rego_verdicts(spec, rego_source, opa_result):
    """Per-object verdicts of a Rego `package check` rule `result` (false means a violation)."""
    objects = spec["ciso"]["gaps"] + spec["ciso"]["compliant"]
    verdicts = {}
    if rego_source is not None:
        try:
            # regopy wraps rego-cpp, Microsoft's maintained Rego engine that tracks OPA's v1 semantics
            # (`if`/`contains` keywords, v1 defaults); the pure-Python engines stop at pre-1.0 Rego.
            import regopy
        except ImportError:
            regopy = None
        if regopy is not None:
            for obj in objects:
                verdicts[obj_ref(obj)] = {_regopy_verdict(regopy, rego_source, obj)}
            return verdicts, "rego (regopy)"
        if opa_result is None:
            raise InputError("regopy is not installed: give a recorded `opa eval` result with --opa-result FILE")
    if opa_result is None:
        raise InputError("a Rego artefact needs --artifact FILE.rego (with regopy) or --opa-result FILE")
    # a recorded result, one `opa eval` per object (input: a List holding that object alone):
    # {"namespace/Kind/name": <`opa eval --format json` output, or the bare boolean>}
    if not isinstance(opa_result, dict):
        raise InputError("the --opa-result file must map `namespace/Kind/name` to an `opa eval` result")
    for obj in objects:
        key = obj_ref(obj)
        value = opa_result.get(ref_text(as_ref(key)), _MISSING)
        if value is _MISSING:
            continue
        if isinstance(value, dict):
            try:
                value = value["result"][0]["expressions"][0]["value"]
            except (KeyError, IndexError, TypeError):
                raise InputError(f"the recorded result of {ref_text(as_ref(key))} is not `opa eval --format json` output")
        verdicts[key] = {"pass" if value is True else "fail"}
    return verdicts, "opa eval (recorded)"


def _regopy_verdict(regopy, source, obj):
    interpreter = regopy.Interpreter()
    # rego-cpp prints compile errors on the process's stdout, where the verdict goes: send them to stderr
    sys.stdout.flush()
    saved = os.dup(1)
    os.dup2(2, 1)
    try:
        interpreter.add_module("check", source)
        # one object at a time, in the shape the agent's fetch script writes (a `kubectl get -o json` List),
        # so each object gets its own verdict
        interpreter.set_input({"apiVersion": "v1", "kind": "List", "items": [obj]})
        # bound to a variable: a bare query whose value is `false` reads as undefined
        output = interpreter.query("x := data.check.result")
    except Exception as exc:  # noqa: BLE001 - regopy raises RegoError for a module that does not compile
        raise InputError(f"the Rego artefact does not evaluate: {str(exc).strip()[:500]}")
    finally:
        os.dup2(saved, 1)
        os.close(saved)
    text = str(output).strip()
    if text == "undefined":
        return "error"  # `result` must be defined for every object
    try:
        value = json.loads(text).get("bindings", {}).get("x")
    except ValueError:
        raise InputError(f"the Rego engine returned an unreadable result: {text[:200]}")
    return "pass" if value is True else "fail" if value is False else "error"


def policy_task(spec, st, artifact, opa_result, gap_only, checks, metrics):
    contract = spec["ciso"].get("contract") or {}
    problems = None
    if artifact is not None and artifact[0] == "kyverno":
        policies = [d for d in artifact[1] if isinstance(d, dict)]
        problems = contract_problems(contract, policies) if contract.get("artefact") == "kyverno" else []
        kyverno = [p for p in policies if p.get("kind") in ("ClusterPolicy", "Policy")]
        if not kyverno:
            raise InputError("the artefact holds no Kyverno ClusterPolicy or Policy")
        verdicts, source = kyverno_offline(spec, kyverno), "kyverno (offline)"
    elif artifact is not None or opa_result is not None:
        verdicts, source = rego_verdicts(spec, artifact[1] if artifact else None, opa_result)
    else:
        if st is None or st.policy_reports is None:
            raise InputError("the policy task needs the agent's artefact (--artifact, --opa-result) or a state "
                             "with `policyReports`")
        verdicts, reporting = report_verdicts(st.policy_reports)
        source = "policyReports"
        if contract.get("artefact") == "kyverno":
            # the policies that reported, as the state holds them (the cluster's ClusterPolicies)
            deployed = [o for (kind, _, name), o in st.objects.items() if kind in ("ClusterPolicy", "Policy")
                        and (name in reporting or name == contract.get("name"))]
            if st.has("", "ClusterPolicy") or deployed:
                problems = contract_problems(contract, deployed)
    if problems is not None:
        checks.append({"id": "ciso.contract", "passed": not problems,
                       "detail": "; ".join(problems) if problems else "the policy keeps the prompt's contract"})
    score = ciso(spec, verdicts, checks, metrics, gap_only, source)
    return 0.0 if problems else score


# ---- tasks and verdicts ----------------------------------------------------------------------------------


def required_missing(spec, st):
    """What the mitigation reads that the state does not hold (a kind not captured, no alerts)."""
    missing = [f"{ns}/{kind}" for ns, kind in spec["requires"]["kinds"] if not st.has(ns, kind)]
    if spec["requires"]["alerts"] and not st.has_alerts:
        missing.append("alerts (Prometheus /api/v1/alerts)")
    return missing


def grade(spec, task, output, st, artifact, opa_result, gap_only):
    checks, metrics = [], {}
    domain = spec["domain"]
    if task == "diagnose":
        if output is None:
            raise InputError("the diagnose task grades the agent's answer: give --agent-output (or --task mitigate)")
        key = "entities" if domain == "sre" else "resource"
        if not isinstance(output.get(key), list):
            raise InputError(f"the answer has no `{key}` list: a {'diagnosis' if domain == 'sre' else 'FinOps answer'} "
                             f"names {'entities' if domain == 'sre' else 'resources'} (the prompt shows the shape)")
        if len(output[key]) > MAX_ENTITIES:
            raise InputError(f"the answer names {len(output[key]):,} {key}: at most {MAX_ENTITIES:,} are read")
        if domain == "sre":
            if output.get("propagations") is not None and not isinstance(output["propagations"], list):
                raise InputError("the answer's `propagations` must be a list")
            if len(output.get("propagations") or []) > MAX_EDGES:
                raise InputError(f"the answer has {len(output['propagations']):,} propagations: at most "
                                 f"{MAX_EDGES:,} are read")
            score = Diagnosis(spec, st or State(EMPTY_STATE)).evaluate(output, checks, metrics)
        else:
            score = finops_answer(spec, output, st or State(EMPTY_STATE), checks, metrics)
    elif task == "mitigate":
        if st is None:
            raise InputError("the mitigate task grades the cluster's state: give --state (`--requirements` "
                             "says what it must hold)")
        missing = required_missing(spec, st)
        if missing:
            raise InputError("the state lacks what the mitigation reads: " + ", ".join(missing) + " (capture "
                             "these kinds, or list them in `captured` when they are empty; `--requirements` prints "
                             "the commands)")
        proximity = finops_proximity(spec, st, checks, metrics) if domain == "finops" else None
        mitigation_checks(spec, st, checks)
        healthy = all(c["passed"] for c in checks if not c["id"].startswith("finops.proximity"))
        if proximity is not None:
            score = proximity if healthy else 0.0  # a fix that breaks the service scores nothing
        else:
            score = sum(c["passed"] for c in checks) / len(checks) if checks else 0.0
    else:
        score = policy_task(spec, st, artifact, opa_result, gap_only, checks, metrics)
    passed = bool(checks) and all(c["passed"] for c in checks)
    return {"scenario": spec["scenario"], "task": task, "passed": passed, "score": round(score, 6),
            "metrics": metrics, "checks": checks}


def evaluate(spec, agent_output, state, gap_only=False, task=None, artifact=None, opa_result=None):
    """The verdict of one run: of `task`, or of every task the bundle poses (then with `tasks`)."""
    if agent_output is not None and not isinstance(agent_output, dict):
        raise InputError("the agent output must be a JSON object")
    tasks = spec["tasks"]
    if task is not None and task not in tasks:
        raise InputError(f"this bundle poses {', '.join(tasks)}, not {task}")
    st = State(state) if state is not None else None
    if task is not None:
        return grade(spec, task, agent_output, st, artifact, opa_result, gap_only)
    verdicts = {t: grade(spec, t, agent_output, st, artifact, opa_result, gap_only) for t in tasks}
    if len(verdicts) == 1:
        return verdicts[tasks[0]]
    return {"scenario": spec["scenario"], "task": "+".join(tasks),
            "passed": all(v["passed"] for v in verdicts.values()),
            "score": round(sum(v["score"] for v in verdicts.values()) / len(verdicts), 6),
            "metrics": {f"{t}.score": v["score"] for t, v in verdicts.items()},
            "checks": [dict(c, id=f"{t}.{c['id']}") for t, v in verdicts.items() for c in v["checks"]],
            "tasks": verdicts}


# ---- capturing a state ------------------------------------------------------------------------------------


def _plural(kind):
    lowered = kind.lower()
    if lowered.endswith("chaos"):
        return lowered
    if lowered.endswith("y"):
        return lowered[:-1] + "ies"
    if lowered.endswith("s"):
        return lowered + "es"
    return lowered + "s"


def resource_names(spec):
    """{namespace: [kubectl resource names]} of what the state must hold ("" for cluster-scoped)."""
    api = {}
    for ref in _refs(spec):
        version = ref.get("apiVersion") or ""
        api.setdefault(ref["kind"], version.split("/")[0] if "/" in version else "")
    out = {}
    for namespace, kind in spec["requires"]["kinds"]:
        group = api.get(kind, "apps" if kind in ("Deployment", "StatefulSet", "DaemonSet", "ReplicaSet") else "")
        out.setdefault(namespace, []).append(_plural(kind) + (f".{group}" if group else ""))
    return {ns: sorted(set(names)) for ns, names in sorted(out.items())}


def _refs(spec):
    m = spec.get("mitigation") or {}
    refs = [p["target"] for p in m.get("predicates", []) if p.get("target")]
    for fault in m.get("faults", []):
        refs += fault["created"] + [e["object"] for e in fault["fields"]]
    refs += [e["object"] for e in m.get("restored", [])]
    refs += [o["object"] for o in (spec.get("finops") or {}).get("optimal", [])]
    return refs


def requirements(spec):
    """What a state must hold for this bundle's tasks, and the commands that capture it."""
    names = resource_names(spec)
    commands = []
    for namespace, resources in names.items():
        where = f"-n {namespace}" if namespace else ""
        commands.append(f"kubectl get {','.join(resources)} {where} -o json".replace("  ", " "))
    if spec["requires"]["alerts"]:
        commands.append("curl -s $PROMETHEUS/api/v1/alerts")
    if spec["requires"]["policy_reports"]:
        commands.append("kubectl get policyreports.wgpolicyk8s.io -A -o json; "
                        "kubectl get clusterpolicyreports.wgpolicyk8s.io -o json")
    return {"scenario": spec["scenario"], "tasks": spec["tasks"],
            "captured": [f"{ns}/{kind}" for ns, kind in spec["requires"]["kinds"]],
            "alerts": spec["requires"]["alerts"], "policyReports": spec["requires"]["policy_reports"],
            "commands": commands,
            "note": "`python evaluator.py --capture state.json [--prometheus URL]` runs these commands and writes "
                    "the state with its `captured` list"}


def capture(spec, kubectl="kubectl", prometheus=None, timeout=120):
    """A state captured from the cluster the current kubeconfig points at (`kubectl get -o json`)."""
    items, captured = [], []
    for namespace, resources in resource_names(spec).items():
        command = [kubectl, "get", ",".join(resources), "-o", "json"] + (["-n", namespace] if namespace else [])
        items += _kubectl_items(command, timeout)
    captured = [f"{ns}/{kind}" for ns, kind in spec["requires"]["kinds"]]
    state = {"resources": {"apiVersion": "v1", "kind": "List", "items": items}, "captured": captured}
    if spec["requires"]["policy_reports"]:
        state["policyReports"] = _kubectl_items([kubectl, "get", "policyreports.wgpolicyk8s.io", "-A", "-o", "json"],
                                                timeout) + _kubectl_items(
            [kubectl, "get", "clusterpolicyreports.wgpolicyk8s.io", "-o", "json"], timeout)
    if spec["requires"]["alerts"]:
        if not prometheus:
            raise InputError("this bundle's mitigation reads the firing alerts: give --prometheus URL")
        import urllib.request

        url = prometheus.rstrip("/") + "/api/v1/alerts"
        try:
            with urllib.request.urlopen(url, timeout=timeout) as response:  # noqa: S310 - the user's Prometheus
                state["alerts"] = json.loads(response.read(MAX_INPUT_BYTES).decode("utf-8"))
        except (OSError, ValueError) as exc:
            raise InputError(f"cannot read the alerts from {url}: {exc}")
    return state


def _kubectl_items(command, timeout):
    try:
        proc = subprocess.run(command, capture_output=True, text=True, timeout=timeout, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise InputError(f"cannot run {' '.join(command)}: {exc}")
    if proc.returncode != 0:
        raise InputError(f"`{' '.join(command)}` failed: {proc.stderr.strip()[:500]}")
    try:
        data = json.loads(proc.stdout)
    except ValueError:
        raise InputError(f"`{' '.join(command)}` did not print JSON")
    return data.get("items", []) if isinstance(data, dict) else []


# ---- the command line ---------------------------------------------------------------------------------------


def _read(path, what):
    try:
        size = os.path.getsize(path)
    except OSError as exc:
        raise InputError(f"cannot read the {what} {path}: {exc.strerror or exc}")
    if size > MAX_INPUT_BYTES:
        raise InputError(f"the {what} {path} is {size:,} bytes: the limit is {MAX_INPUT_BYTES:,}")
    try:
        with open(path, encoding="utf-8") as handle:
            return handle.read()
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read the {what} {path}: {exc}")


def _load_json(path, what):
    text = _read(path, what)
    try:
        return json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise InputError(f"the {what} {path} is not valid JSON: {str(exc)[:200]}")


def _load_artifact(path):
    text = _read(path, "artefact")
    if path.endswith(".rego"):
        return ("rego", text)
    try:
        data = json.loads(text)
        docs = data if isinstance(data, list) else [data]
    except RecursionError:
        raise InputError(f"the artefact {path} is nested too deeply")
    except ValueError:
        reader = embedded_module("yaml")
        if reader is None:
            raise InputError(f"the artefact {path} is not JSON, and this evaluator has no YAML reader: convert it "
                             "with `yq -o json`")
        try:
            docs = reader.load_all(text)
        except reader.YAMLSubsetError as exc:
            raise InputError(f"the artefact {path} cannot be read: {exc} (a policy that needs more of YAML can be "
                             "given as JSON: `yq -o json`)")
        except RecursionError:
            raise InputError(f"the artefact {path} is nested too deeply")
    return ("kyverno", docs)


def main(spec, argv=None):
    parser = argparse.ArgumentParser(description=f"Evaluate a run of scenario {spec['scenario']} (tasks: "
                                                 f"{', '.join(spec['tasks'])}).")
    parser.add_argument("--task", choices=spec["tasks"], help="grade this task only (default: every task the bundle poses)")
    parser.add_argument("--agent-output", help="the agent's answer (JSON): what the diagnose task grades")
    parser.add_argument("--state", help="the state snapshot (JSON): what the mitigate task grades")
    parser.add_argument("--artifact", help="CISO: the agent's policy (Kyverno JSON/YAML or .rego)")
    parser.add_argument("--opa-result", help="CISO Rego: a recorded `opa eval` result per object")
    parser.add_argument("--gap-only", action="store_true", help="CISO: also report ITBench's gap-only rule as a metric")
    parser.add_argument("--requirements", action="store_true", help="print what a state must hold and how to capture it")
    parser.add_argument("--capture", metavar="FILE", help="capture the state from the current cluster into FILE")
    parser.add_argument("--prometheus", help="with --capture: the Prometheus URL to read the firing alerts from")
    parser.add_argument("--kubectl", default="kubectl", help="with --capture: the kubectl to run")
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:
        return 2 if exc.code else 0
    try:
        if args.requirements:
            print(json.dumps(requirements(spec), indent=2))
            return 0
        if args.capture:
            state = capture(spec, args.kubectl, args.prometheus)
            with open(args.capture, "w", encoding="utf-8") as handle:
                json.dump(state, handle)
            print(f"evaluator: wrote {args.capture} ({len(state['resources']['items'])} objects)", file=sys.stderr)
            return 0
        output = _load_json(args.agent_output, "agent output") if args.agent_output else None
        state = _load_json(args.state, "state") if args.state else None
        artifact = _load_artifact(args.artifact) if args.artifact else None
        opa = _load_json(args.opa_result, "recorded opa result") if args.opa_result else None
        verdict = evaluate(spec, output, state, gap_only=args.gap_only, task=args.task, artifact=artifact,
                           opa_result=opa)
    except InputError as exc:
        print(f"evaluator: {exc}", file=sys.stderr)
        return 2
    except RecursionError:
        print("evaluator: an input is nested too deeply", file=sys.stderr)
        return 2
    except MemoryError:
        print("evaluator: an input is too large to grade", file=sys.stderr)
        return 2
    except Exception as exc:  # noqa: BLE001 - a shape the checks did not foresee: never a traceback at a user
        print(f"evaluator: an input has an unexpected shape: {type(exc).__name__}: {str(exc)[:200]}", file=sys.stderr)
        return 2
    print(json.dumps(verdict, indent=2, sort_keys=False))
    return 0
