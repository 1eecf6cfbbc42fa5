"""The scoring runtime of a bundle's evaluator.py (standard library only).

This file is copied verbatim into every bundle; the compiler appends one `SPEC = json.loads(...)`
line (the scenario's ground truth as data) and a `__main__` guard. Nothing here reads the
scenario's text as code: every scenario string arrives through SPEC.

    python evaluator.py --agent-output A.json --state S.json [--gap-only] [--task diagnose|mitigate]
                        [--artifact policy.json|policy.rego] [--opa-result recorded.json]
prints one JSON verdict {scenario, passed, score, metrics, checks[{id, passed, detail}]};
exit 0 when it ran (pass or fail), 2 when an input is unusable (the reason on stderr).

SRE: an agent output with `entities` or `propagations` is graded as a diagnosis, otherwise the
state is graded as a mitigation (`--task` chooses). FinOps: proximity to each optimum, the
`mitigated when` predicates and, with an agent output, the named resources. CISO: PolicyReports
in the state, or the agent's artefact offline (Kyverno: the embedded matcher; Rego: regopy, or a
recorded `opa eval` result per object); `--gap-only` grades the gap alone, as ITBench does.
"""

import argparse
import json
import os
import re
import sys
import types

RUNTIME_VERSION = 1
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
    if isinstance(value, str):
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
    if op in ("==", "="):
        return same(observed, expected)
    if op == "!=":
        return not same(observed, expected)
    x, y = number(observed), number(expected)
    if x is None or y is None:
        return False
    return {"<": x < y, "<=": x <= y, ">": x > y, ">=": x >= y}.get(op, False)


# ---- the state -----------------------------------------------------------------------------------------


class State:
    """The snapshot, indexed once: objects by (kind, namespace, name), firing alerts by name."""

    def __init__(self, state):
        if not isinstance(state, dict):
            raise InputError("the state must be a JSON object with a `resources` List")
        resources = state.get("resources")
        if not isinstance(resources, dict) or not isinstance(resources.get("items"), list):
            raise InputError("the state's `resources` must be a `kubectl get -o json` List (an object with `items`)")
        self.objects = {}
        self.by_kind = {}
        for item in resources["items"]:
            if not isinstance(item, dict) or not isinstance(item.get("metadata"), dict):
                raise InputError("every item of the state's `resources` must be a Kubernetes object with metadata")
            meta = item["metadata"]
            key = (str(item.get("kind", "")), meta.get("namespace") or None, str(meta.get("name", "")))
            self.objects[key] = item
            self.by_kind.setdefault((key[0], key[1]), []).append(item)
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
        self.policy_reports = reports or []
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


def exact(obj, path):
    """The value at a revert path: keys, list indexes and ["name", X] element selectors."""
    node = obj
    for seg in path:
        if isinstance(seg, list) and isinstance(node, list):
            node = next((v for v in node if isinstance(v, dict) and v.get(seg[0]) == seg[1]), _MISSING)
        elif isinstance(seg, int) and isinstance(node, list):
            node = node[seg] if seg < len(node) else _MISSING
        elif isinstance(seg, str) and isinstance(node, dict):
            node = node.get(seg, _MISSING)
        else:
            return _MISSING
        if node is _MISSING:
            return _MISSING
    return node


def show_path(path):
    return ".".join(f"[{s[0]}={s[1]}]" if isinstance(s, list) else str(s) for s in path)


def ref_text(ref):
    return f"{ref.get('namespace') or ''}/{ref['kind']}/{ref['name']}"


def workload_ready(obj):
    if obj.get("kind") == "Pod":
        status = obj.get("status") or {}
        ready = any(c.get("type") == "Ready" and c.get("status") == "True" for c in status.get("conditions") or []
                    if isinstance(c, dict))
        return status.get("phase") == "Running" and ready
    want = number((obj.get("spec") or {}).get("replicas", 1))
    have = number((obj.get("status") or {}).get("readyReplicas", 0)) or 0.0
    return want is not None and want > 0 and have >= want


# ---- SRE diagnosis ---------------------------------------------------------------------------------------


def parse_name(text):
    """(namespace, kind, name) from `ns/Kind/name`, `/Kind/name` or `Kind/name`; kind None for a bare name."""
    parts = str(text).strip().split("/")
    if len(parts) >= 3:
        return parts[0] or None, parts[1], "/".join(parts[2:])
    if len(parts) == 2:
        return None, parts[0], parts[1]
    return None, None, parts[0]


class Diagnosis:
    def __init__(self, spec):
        self.spec = spec
        self.groups = {g["id"]: g for g in spec["groups"]}
        self.filters = {g["id"]: [re.compile(f) for f in g["filter"]] for g in spec["groups"]}
        # aliases join groups of one component: a class id per group
        self.klass = {}
        for index, ids in enumerate(spec["aliases"]):
            for gid in ids:
                self.klass.setdefault(gid, f"alias{index}")
        for gid in self.groups:
            self.klass.setdefault(gid, gid)
        self.true_classes = sorted({self.klass[g["id"]] for g in spec["groups"] if g.get("root_cause")})
        adjacency = {}
        for a, b in spec["graph"]["edges"]:
            adjacency.setdefault(a, set()).add(b)
            adjacency.setdefault(b, set()).add(a)
        self.adjacency = adjacency
        self.true_components = {g["component"] for g in spec["groups"] if g.get("root_cause")}
        self._hops = self._distances(self.true_components)

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

    def match(self, text):
        """The groups an agent's entity names: a group id, or an object matched by kind, namespace, filter."""
        if text in self.groups:
            return [text]
        namespace, kind, name = parse_name(text)
        out, whole = [], []
        for gid, group in self.groups.items():
            if kind is not None and kind.lower() != group["kind"].lower():
                continue
            if namespace and group.get("namespace") and namespace != group["namespace"]:
                continue
            if any(f.match(name) for f in self.filters[gid]):
                out.append(gid)
                if any(f.fullmatch(name) for f in self.filters[gid]):
                    whole.append(gid)
        # `frontend\b` also matches `frontend-proxy`: a group naming the whole name is the better match
        return whole or out

    def component(self, text):
        """The topology component an entity belongs to, also when it matches no group."""
        groups = self.match(text)
        if groups:
            return self.groups[groups[0]]["component"]
        namespace, kind, name = parse_name(text)
        kind = (kind or "").lower()
        for w in self.spec["workloads"]:
            if namespace and namespace != w["namespace"]:
                continue
            if kind in ("deployment", "statefulset", "") and name == w["name"]:
                return w["name"]
            if kind in ("pod", "replicaset") and pod_owner_pattern(w).fullmatch(name):
                return w["name"]
        for s in self.spec["services"]:
            if kind in ("service", "") and name == s["name"] and (not namespace or namespace == s["namespace"]):
                return s["component"]
        if kind == "namespace":
            return f"Namespace:{name}"
        return None

    def credit(self, text):
        component = self.component(text)
        hops = self._hops.get(component) if component is not None else None
        return 0.0 if hops is None else 1.0 / (1 + hops)

    def evaluate(self, output, checks, metrics):
        predicted = root_cause_entities(output)
        seen = []
        for name in predicted:
            if name not in seen:
                seen.append(name)
        classes_of = [sorted({self.klass[g] for g in self.match(n)}) for n in seen]
        correct = [any(c in self.true_classes for c in cs) for cs in classes_of]
        found = {c for cs in classes_of for c in cs if c in self.true_classes}
        precision = sum(correct) / len(seen) if seen else 0.0
        recall = len(found) / len(self.true_classes) if self.true_classes else 0.0
        f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
        metrics["root_cause_precision"] = round(precision, 6)
        metrics["root_cause_recall"] = round(recall, 6)
        metrics["root_cause_f1"] = round(f1, 6)
        for k in (1, 3):
            top = {c for cs in classes_of[:k] for c in cs if c in self.true_classes}
            metrics[f"root_cause_recall_at_{k}"] = round(len(top) / len(self.true_classes), 6) if self.true_classes else 0.0
        credits = [1.0 if ok else self.credit(n) for n, ok in zip(seen, correct)]
        topology = sum(credits) / len(credits) if credits else 0.0
        metrics["topology_credit"] = round(topology, 6)
        chain = self.chain_f1(output)
        if chain is not None:
            metrics["propagation_f1"] = round(chain, 6)
        missed = [c for c in self.true_classes if c not in found]
        wrong = [n for n, ok in zip(seen, correct) if not ok]
        checks.append({"id": "diagnosis.root_cause", "passed": precision == 1.0 and recall == 1.0,
                       "detail": f"{len(seen)} named, {sum(correct)} correct; root causes missed: {len(missed)}"
                                 + (f"; not root causes: {', '.join(wrong[:5])}" if wrong else "")})
        return max(f1, topology) if f1 < 1.0 else 1.0

    # propagation chains -------------------------------------------------------------------------------

    def chain_f1(self, output):
        truth = [(self.klass[p["source"]], self.klass[p["target"]]) for p in self.spec["propagations"]]
        if not any(a != b for a, b in truth):  # no chain between components: nothing to grade
            return None
        predicted = []
        for p in (output.get("propagations") or [])[:MAX_EDGES]:
            if not isinstance(p, dict):
                continue
            src, dst = self.match(str(p.get("source", ""))), self.match(str(p.get("target", "")))
            # an endpoint that names no group keeps its own identity: it can only lower the score
            a = self.klass[src[0]] if src else f"?{p.get('source')}"
            b = self.klass[dst[0]] if dst else f"?{p.get('target')}"
            predicted.append((a, b))
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


MAX_EDGES = 500  # of an agent's propagations: beyond, the chain score is bounded work all the same


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


_OWNER_PATTERNS = {}


def pod_owner_pattern(workload):
    """Names of a workload's pods: `name-<ordinal>` (StatefulSet), `name-<hash>-<suffix>` (Deployment),
    `name-<node>` (a static pod's mirror pod)."""
    key = (workload["kind"], workload["name"])
    if key not in _OWNER_PATTERNS:
        name = re.escape(workload["name"])
        tail = {"StatefulSet": r"-\d+", "Pod": r"-[a-z0-9][-a-z0-9.]*"}.get(workload["kind"], r"-[a-z0-9]{1,10}(-[a-z0-9]{5})?")
        _OWNER_PATTERNS[key] = re.compile(name + tail)
    return _OWNER_PATTERNS[key]


# ---- mitigation ------------------------------------------------------------------------------------------


def predicate_check(pred, state):
    kind = pred["kind"]
    if kind == "alert":
        # an alert counts in the scenario's own namespaces (or with no namespace label): the same alert
        # firing for another tenant of the cluster neither blocks nor fakes a mitigation
        where = state.firing.get(pred["alert"], set())
        namespaces = pred.get("namespaces")
        firing = bool(where) if not namespaces else any(n is None or n in namespaces for n in where)
        ok = firing if pred["firing"] else not firing
        note = "" if state.has_alerts else " (the state has no alerts)"
        scope = f" in {', '.join(namespaces)}" if namespaces else ""
        return ok, f"alert {pred['alert']} {'firing' if firing else 'not firing'}{scope}{note}"
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
    shown = "absent" if observed is _MISSING else json.dumps(observed)
    ok = observed is not _MISSING and compare(observed, pred["op"], pred["value"])
    return ok, f"{ref_text(ref)} {'.'.join(pred['path'])} is {shown}, wants {pred['op']} {json.dumps(pred['value'])}"


def mitigation_checks(spec, state, checks):
    mitigation = spec.get("mitigation")
    for index, pred in enumerate(mitigation["predicates"] if mitigation else []):
        ok, detail = predicate_check(pred, state)
        checks.append({"id": f"mitigation.predicate.{index}", "passed": ok, "detail": detail})
    for revert in spec.get("reverts", []):
        ref = revert["object"]
        obj = state.get(ref)
        if obj is None:
            checks.append({"id": f"revert.{ref_text(ref)}", "passed": False, "detail": f"{ref_text(ref)} is missing"})
            continue
        still = []
        for change in revert["changes"]:
            current = exact(obj, change["path"])
            if change.get("removed"):
                if current is _MISSING:
                    still.append(f"{show_path(change['path'])} still removed")
            elif current is not _MISSING and same_tree(current, change["faulty"]):
                still.append(f"{show_path(change['path'])} still {json.dumps(change['faulty'])[:80]}")
        checks.append({"id": f"revert.{ref_text(ref)}", "passed": not still,
                       "detail": "; ".join(still) if still else "the fault's change is gone"})
    for ref in spec.get("created", []):
        present = state.get(ref) is not None
        checks.append({"id": f"revert.created.{ref_text(ref)}", "passed": not present,
                       "detail": f"{ref_text(ref)} {'still present' if present else 'removed'}"})
    for ref in spec.get("deleted", []):
        present = state.get(ref) is not None
        checks.append({"id": f"revert.deleted.{ref_text(ref)}", "passed": present,
                       "detail": f"{ref_text(ref)} {'restored' if present else 'still deleted'}"})
    safeguard_checks(spec, state, checks)


def same_tree(a, b):
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same_tree(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same_tree(x, y) for x, y in zip(a, b))
    return same(a, b)


def matches(labels, selector):
    return bool(selector) and isinstance(labels, dict) and all(labels.get(k) == v for k, v in selector.items())


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
        if labels is not None and not matches(labels, s["selector"]):
            broken.append(f"pods of {s['component']} no longer carry the labels {ref_text(s)} selects")
        workload = workloads.get((s["namespace"], s["component"]))
        if workload is None:
            continue
        pattern = pod_owner_pattern(workload)
        pods = state.by_kind.get(("Pod", s["namespace"]), [])
        owned = [p for p in pods if pattern.fullmatch(p["metadata"].get("name", ""))]
        relabelled = [p["metadata"]["name"] for p in owned if not matches(p["metadata"].get("labels"), s["selector"])]
        if relabelled:
            broken.append(f"pods relabelled away from {ref_text(s)}: {', '.join(sorted(relabelled)[:3])}")
    checks.append({"id": "safeguards", "passed": not broken,
                   "detail": "; ".join(broken) if broken else "workloads scaled, services and their selectors intact"})


# ---- FinOps ----------------------------------------------------------------------------------------------


def finops(spec, output, state, checks, metrics):
    proximities = []
    for index, optimum in enumerate(spec["optimal"]):
        obj = state.get(optimum["object"])
        observed = lookup(obj, optimum["path"]) if obj is not None else _MISSING
        x, y = number(observed) if observed is not _MISSING else None, number(optimum["value"])
        if x is None or not y:
            proximity = 1.0 if observed is not _MISSING and same(observed, optimum["value"]) else 0.0
        else:
            proximity = min(1.0, max(0.0, 1.0 - abs(x - y) / abs(y)))
        proximities.append(proximity)
        metrics[f"proximity.{index}"] = round(proximity, 6)
        shown = "absent" if observed is _MISSING else json.dumps(observed)
        checks.append({"id": f"finops.proximity.{index}", "passed": proximity >= spec["proximity_threshold"],
                       "detail": f"{ref_text(optimum['object'])} {'.'.join(optimum['path'])} is {shown}, "
                                 f"optimal {json.dumps(optimum['value'])}: proximity {proximity:.3f}"})
    score = sum(proximities) / len(proximities) if proximities else 0.0
    metrics["proximity"] = round(score, 6)
    if output is not None and "resource" in output:
        named = []
        for r in output.get("resource") or []:
            if isinstance(r, dict):
                named.append((str(r.get("type", "")).lower(), str(r.get("name", ""))))
        truth = [(t["kind"].lower(), t["name"]) for t in spec["finops_targets"]]
        aliases = {"hpa": "horizontalpodautoscaler", "deploy": "deployment", "sts": "statefulset"}
        hits = [n for n in named if (aliases.get(n[0], n[0]), n[1]) in truth or ("", n[1]) == n and n[1] in {t[1] for t in truth}]
        found = {t for t in truth if any(h[1] == t[1] for h in hits)}
        precision = len(hits) / len(named) if named else 0.0
        recall = len(found) / len(truth) if truth else 0.0
        metrics["resource_precision"], metrics["resource_recall"] = round(precision, 6), round(recall, 6)
        checks.append({"id": "finops.resource", "passed": precision == 1.0 and recall == 1.0,
                       "detail": f"{len(named)} named, {len(hits)} correct, {len(found)} of {len(truth)} found"})
        score = (score + recall * precision) / 2
    return score


# ---- CISO ------------------------------------------------------------------------------------------------


def report_verdicts(reports):
    """{(kind, namespace, name): set of results} from PolicyReports (per-resource `scope` or per-result resources)."""
    verdicts = {}
    for report in reports:
        if not isinstance(report, dict):
            continue
        scope = report.get("scope") if isinstance(report.get("scope"), dict) else None
        for result in report.get("results") or []:
            if not isinstance(result, dict):
                continue
            targets = result.get("resources") or ([scope] if scope else [])
            for res in targets:
                if isinstance(res, dict):
                    key = (res.get("kind"), res.get("namespace") or None, res.get("name"))
                    verdicts.setdefault(key, set()).add(str(result.get("result", "")))
    return verdicts


def ciso(spec, verdicts, checks, metrics, gap_only, source):
    """verdicts: {(kind, namespace, name): set of pass/fail/...} for the gap and compliant objects."""
    ciso_spec = spec["ciso"]
    flagged = 0
    for obj in ciso_spec["gaps"]:
        ref = obj_ref(obj)
        got = verdicts.get(ref, set())
        ok = "fail" in got or "false" in got
        flagged += ok
        checks.append({"id": f"ciso.gap.{ref_text(as_ref(ref))}", "passed": ok,
                       "detail": f"{source}: {', '.join(sorted(got)) or 'no result'} (must fail)"})
    kept = 0
    if not gap_only:
        for obj in ciso_spec["compliant"]:
            ref = obj_ref(obj)
            got = verdicts.get(ref, set())
            # a compliant object must not fail; a recorded Rego run must also cover it
            ok = not ({"fail", "false", "error"} & got) and (bool(got) or not source.startswith("opa"))
            kept += ok
            checks.append({"id": f"ciso.compliant.{ref_text(as_ref(ref))}", "passed": ok,
                           "detail": f"{source}: {', '.join(sorted(got)) or 'no result'} (must pass)"})
    gaps, compliant = len(ciso_spec["gaps"]), 0 if gap_only else len(ciso_spec["compliant"])
    metrics["gaps_flagged"] = round(flagged / gaps, 6) if gaps else 1.0
    if not gap_only:
        metrics["compliant_passed"] = round(kept / compliant, 6) if compliant else 1.0
    return (flagged + kept) / (gaps + compliant) if gaps + compliant else 0.0


def obj_ref(obj):
    meta = obj.get("metadata") or {}
    return (obj.get("kind"), meta.get("namespace") or None, meta.get("name"))


def as_ref(key):
    return {"kind": key[0], "namespace": key[1], "name": key[2]}


def kyverno_offline(spec, policy_docs):
    """Run the agent's Kyverno policy over the embedded gap and compliant manifests."""
    matcher = embedded_kyverno()
    if matcher is None:
        raise InputError("this evaluator has no embedded Kyverno matcher: grade from PolicyReports in the state")
    verdicts = {}
    policies = [d for d in policy_docs if isinstance(d, dict) and d.get("kind") in ("ClusterPolicy", "Policy")]
    if not policies:
        raise InputError("the artefact holds no Kyverno ClusterPolicy or Policy")
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
    """A module whose source the compiler embedded in this file (`_KYVERNO_SOURCE`, `_YAML_SOURCE`)."""
    source = globals().get(f"_{name.upper()}_SOURCE")
    if not source:
        return None
    module = types.ModuleType(f"itbench_{name}")
    sys.modules.setdefault(f"itbench_{name}", module)
    exec(compile(source, f"<itbench {name}>", "exec"), module.__dict__)  # noqa: S102 - our own embedded module
    return module


def embedded_kyverno():
    return embedded_module("kyverno")


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


# ---- entry points ----------------------------------------------------------------------------------------


def evaluate(spec, agent_output, state, gap_only=False, task=None, artifact=None, opa_result=None):
    """The verdict of one run. `task` is diagnose or mitigate (SRE); by default diagnose when the agent's
    output names entities or propagations, else mitigate."""
    if agent_output is not None and not isinstance(agent_output, dict):
        raise InputError("the agent output must be a JSON object")
    for key in ("entities", "propagations", "resource"):
        if agent_output and agent_output.get(key) is not None and not isinstance(agent_output[key], list):
            raise InputError(f"the agent output's `{key}` must be a list")
    st = State(state)
    checks, metrics = [], {}
    domain = spec["domain"]
    if domain == "sre":
        if task is None:
            task = "diagnose" if agent_output and ("entities" in agent_output or "propagations" in agent_output) else "mitigate"
        if task == "diagnose":
            score = Diagnosis(spec).evaluate(agent_output or {}, checks, metrics)
        else:
            mitigation_checks(spec, st, checks)
            score = sum(c["passed"] for c in checks) / len(checks) if checks else 0.0
        metrics["task"] = task
    elif domain == "finops":
        score = finops(spec, agent_output, st, checks, metrics)
        mitigation_checks(spec, st, checks)
    else:
        if artifact is not None and artifact[0] == "kyverno":
            verdicts, source = kyverno_offline(spec, artifact[1]), "kyverno (offline)"
        elif artifact is not None or opa_result is not None:
            verdicts, source = rego_verdicts(spec, artifact[1] if artifact else None, opa_result)
        else:
            verdicts, source = report_verdicts(st.policy_reports), "policyReports"
        score = ciso(spec, verdicts, checks, metrics, gap_only, source)
        metrics["gap_only"] = gap_only
    passed = bool(checks) and all(c["passed"] for c in checks)
    return {"scenario": spec["scenario"], "passed": passed, "score": round(score, 6), "metrics": metrics,
            "checks": checks}


def _load_json(path, what):
    try:
        with open(path, encoding="utf-8") as handle:
            return json.load(handle)
    except OSError as exc:
        raise InputError(f"cannot read the {what} {path}: {exc.strerror or exc}")
    except (ValueError, RecursionError) as exc:
        raise InputError(f"the {what} {path} is not valid JSON: {exc}")


def _load_artifact(path):
    try:
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read the artefact {path}: {exc}")
    if path.endswith(".rego"):
        return ("rego", text)
    try:
        data = json.loads(text)
        docs = data if isinstance(data, list) else [data]
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
    parser = argparse.ArgumentParser(description=f"Evaluate a run of scenario {spec['scenario']}.")
    parser.add_argument("--agent-output", help="the agent's output JSON")
    parser.add_argument("--state", required=True, help="the state snapshot JSON")
    parser.add_argument("--gap-only", action="store_true", help="CISO: grade only the gap, as ITBench does")
    parser.add_argument("--task", choices=("diagnose", "mitigate"), help="SRE: what to grade")
    parser.add_argument("--artifact", help="CISO: the agent's policy (Kyverno JSON/YAML or .rego)")
    parser.add_argument("--opa-result", help="CISO Rego: a recorded `opa eval` result per object")
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:
        return 2 if exc.code else 0
    try:
        output = _load_json(args.agent_output, "agent output") if args.agent_output else None
        state = _load_json(args.state, "state")
        artifact = _load_artifact(args.artifact) if args.artifact else None
        opa = _load_json(args.opa_result, "recorded opa result") if args.opa_result else None
        verdict = evaluate(spec, output, state, gap_only=args.gap_only, task=args.task, artifact=artifact,
                           opa_result=opa)
    except InputError as exc:
        print(f"evaluator: {exc}", file=sys.stderr)
        return 2
    except (KeyError, TypeError, AttributeError, ValueError) as exc:  # a shape the checks above did not foresee
        print(f"evaluator: an input has an unexpected shape: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 2
    print(json.dumps(verdict, indent=2, sort_keys=False))
    return 0
