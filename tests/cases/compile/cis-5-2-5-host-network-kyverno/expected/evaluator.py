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
        if not truth:
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

_KYVERNO_SOURCE = '"""An offline matcher of Kyverno validation semantics, standard library only.\n\nThis module is self-contained on purpose: the `evaluator.py` of every bundle embeds its\nsource to grade Kyverno artefacts without a cluster, so it imports nothing from the rest\nof the package. It implements what `kyverno test` needs for validate rules: match and\nexclude, preconditions, `validate.pattern`, `anyPattern` and `deny`, the anchors and\nvalue operators of patterns, a JMESPath subset for `{{ variables }}`, and autogen rules\nfor pod controllers. A feature it does not implement raises `Unsupported` naming it,\nso that a caller can say why it cannot grade, never pass silently.\n\nAnnotations are evaluated (no `from __future__ import annotations`) so that dataclasses\nwork when this source is exec\'d outside a module, as the generated evaluators do.\n\nEntry points: `evaluate_policy(policy, resource, operation)` -> list of `RuleResult`, and\n`run_test_suite(test_document, base_folder, load_yaml)` for Kyverno CLI test suites.\n"""\n\nimport base64\nimport functools\nimport json\nimport math\nimport re\nfrom collections.abc import Callable\nfrom dataclasses import dataclass, field\nfrom fractions import Fraction\nfrom typing import Any\n\n__all__ = [\n    "ExpectedResult",\n    "RuleResult",\n    "SuiteReport",\n    "Unsupported",\n    "evaluate_conditions",\n    "evaluate_policy",\n    "jmespath_search",\n    "match_pattern",\n    "run_test_suite",\n    "substitute",\n]\n\nPASS, FAIL, SKIP, ERROR, WARN = "pass", "fail", "skip", "error", "warn"\n\n\nclass Unsupported(Exception):\n    """A Kyverno feature this matcher does not implement; the message names it."""\n\n    def __init__(self, feature: str) -> None:\n        super().__init__(f"unsupported: {feature}")\n        self.feature = feature\n\n\nclass KyvernoError(Exception):\n    """A policy that Kyverno itself would report as a rule error (bad variable, bad syntax)."""\n\n\n@dataclass(frozen=True)\nclass RuleResult:\n    policy: str\n    rule: str\n    status: str  # pass | fail | skip | error | warn\n    message: str = ""\n    matched: bool = True  # False when the rule\'s match/exclude leaves the resource out\n\n\n# ---------------------------------------------------------------------------------------\n# Wildcards (`*` any run, `?` one character), as Kyverno\'s wildcard.Match.\n\n_WILDCARD_CACHE: dict[str, re.Pattern] = {}\n\n\ndef wildcard_match(pattern: str, text: str) -> bool:\n    if "*" not in pattern and "?" not in pattern:\n        return pattern == text\n    rx = _WILDCARD_CACHE.get(pattern)\n    if rx is None:\n        parts = ["." if c == "?" else ".*" if c == "*" else re.escape(c) for c in pattern]\n        rx = _WILDCARD_CACHE[pattern] = re.compile("".join(parts), re.DOTALL)\n    return rx.fullmatch(text) is not None\n\n\ndef _has_wildcard(text: str) -> bool:\n    return "*" in text or "?" in text\n\n\n# ---------------------------------------------------------------------------------------\n# Quantities (Kubernetes resource.Quantity) and durations (Go time.ParseDuration).\n\n_QUANTITY = re.compile(r"([+-]?(?:\\d+\\.?\\d*|\\.\\d+))(?:([eE][+-]?\\d+)|(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE])?)")\n_SUFFIX = {\n    "": 1, "n": Fraction(1, 10**9), "u": Fraction(1, 10**6), "m": Fraction(1, 1000), "k": 10**3,\n    "M": 10**6, "G": 10**9, "T": 10**12, "P": 10**15, "E": 10**18, "Ki": 2**10, "Mi": 2**20,\n    "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60,\n}\n_DURATION_PART = re.compile(r"(\\d+\\.?\\d*|\\.\\d+)(ns|us|µs|μs|ms|s|m|h)")\n_DURATION_UNIT = {"ns": Fraction(1, 10**9), "us": Fraction(1, 10**6), "µs": Fraction(1, 10**6),\n                  "μs": Fraction(1, 10**6), "ms": Fraction(1, 1000), "s": 1, "m": 60, "h": 3600}\n\n\ndef parse_quantity(text: Any) -> Fraction | None:\n    if isinstance(text, bool):\n        return None\n    if isinstance(text, (int, float)):\n        return Fraction(text) if not (isinstance(text, float) and not math.isfinite(text)) else None\n    if not isinstance(text, str):\n        return None\n    m = _QUANTITY.fullmatch(text.strip())\n    if not m:\n        return None\n    number = Fraction(m.group(1))\n    if m.group(2):\n        exp = int(m.group(2)[1:])\n        return number * (Fraction(10) ** exp)\n    return number * _SUFFIX[m.group(3) or ""]\n\n\ndef parse_duration(text: Any) -> Fraction | None:\n    """Seconds of a Go duration string such as `1h30m`, `-5s`, `0`; None if not one."""\n    if not isinstance(text, str):\n        return None\n    s = text.strip()\n    sign = 1\n    if s[:1] in "+-" and s:\n        sign = -1 if s[0] == "-" else 1\n        s = s[1:]\n    if s == "0":\n        return Fraction(0)\n    if not s:\n        return None\n    pos, total = 0, Fraction(0)\n    for m in _DURATION_PART.finditer(s):\n        if m.start() != pos:\n            return None\n        total += Fraction(m.group(1)) * _DURATION_UNIT[m.group(2)]\n        pos = m.end()\n    if pos != len(s):\n        return None\n    return sign * total\n\n\ndef _to_go_string(value: Any) -> str:\n    """How Kyverno prints a scalar with fmt.Sprint / JSON."""\n    if value is None:\n        return "<nil>"\n    if isinstance(value, bool):\n        return "true" if value else "false"\n    if isinstance(value, float) and value.is_integer():\n        return str(int(value))\n    if isinstance(value, (int, float, str)):\n        return str(value)\n    return json.dumps(value, separators=(",", ":"), sort_keys=True)\n\n\n# ---------------------------------------------------------------------------------------\n# JMESPath subset. Kyverno\'s fork reports a missing map key as "not found" (an error that\n# `||` absorbs and that preconditions turn into ""); this implementation does the same.\n\nclass NotFound(Exception):\n    pass\n\n\nclass JMESPathError(Exception):\n    pass\n\n\n_TOKEN_RX = re.compile(r"""\n    (?P<ws>\\s+)\n  | (?P<number>-?\\d+)\n  | (?P<ident>[A-Za-z_][A-Za-z0-9_]*)\n  | (?P<quoted>"(?:\\\\.|[^"\\\\])*")\n  | (?P<raw>\'(?:\\\\.|[^\'\\\\])*\')\n  | (?P<literal>`(?:\\\\.|[^`\\\\])*`)\n  | (?P<op>\\[\\?|\\[\\]|\\|\\||&&|==|!=|<=|>=|[.\\[\\]*@|(),:{}<>!&])\n""", re.VERBOSE)\n\n_BP = {"eof": 0, "|": 1, "||": 2, "&&": 3, "==": 5, "!=": 5, "<": 5, "<=": 5, ">": 5, ">=": 5,\n       "[]": 9, "*": 20, "[?": 21, ".": 40, "!": 45, "{": 50, "[": 55, "(": 60}\n\n\ndef _tokenize(expr: str) -> list[tuple[str, Any]]:\n    tokens: list[tuple[str, Any]] = []\n    pos = 0\n    while pos < len(expr):\n        m = _TOKEN_RX.match(expr, pos)\n        if not m:\n            raise JMESPathError(f"unexpected character {expr[pos]!r} at {pos} in {expr!r}")\n        pos = m.end()\n        kind = m.lastgroup\n        text = m.group()\n        if kind == "ws":\n            continue\n        if kind == "number":\n            tokens.append(("number", int(text)))\n        elif kind == "ident":\n            tokens.append(("ident", text))\n        elif kind == "quoted":\n            tokens.append(("ident", json.loads(text)))\n        elif kind == "raw":\n            tokens.append(("literal", text[1:-1].replace("\\\\\'", "\'")))\n        elif kind == "literal":\n            body = text[1:-1].replace("\\\\`", "`").strip()\n            try:\n                tokens.append(("literal", json.loads(body)))\n            except ValueError:\n                tokens.append(("literal", body))  # legacy: bare string inside backticks\n        else:\n            tokens.append((text, None))\n    tokens.append(("eof", None))\n    return tokens\n\n\nclass _Parser:\n    def __init__(self, expr: str) -> None:\n        self.expr = expr\n        self.tokens = _tokenize(expr)\n        self.i = 0\n\n    def peek(self, k: int = 0) -> str:\n        return self.tokens[self.i + k][0]\n\n    def next(self) -> tuple[str, Any]:\n        tok = self.tokens[self.i]\n        self.i += 1\n        return tok\n\n    def expect(self, kind: str) -> Any:\n        tok = self.next()\n        if tok[0] != kind:\n            raise JMESPathError(f"expected {kind!r}, found {tok[0]!r} in {self.expr!r}")\n        return tok[1]\n\n    def parse(self) -> tuple:\n        node = self.expression(0)\n        if self.peek() != "eof":\n            raise JMESPathError(f"unexpected {self.peek()!r} in {self.expr!r}")\n        return node\n\n    def expression(self, bp: int) -> tuple:\n        kind, value = self.next()\n        left = self.nud(kind, value)\n        while bp < _BP.get(self.peek(), 0):\n            kind, value = self.next()\n            left = self.led(kind, left)\n        return left\n\n    def nud(self, kind: str, value: Any) -> tuple:\n        if kind == "literal":\n            return ("literal", value)\n        if kind == "ident":\n            return ("field", value)\n        if kind == "@":\n            return ("current",)\n        if kind == "*":\n            return ("vproject", ("current",), self.projection_rhs(_BP["*"]))\n        if kind == "[?":\n            return self.filter(("current",))\n        if kind == "[]":\n            return ("project", ("flatten", ("current",)), self.projection_rhs(_BP["[]"]))\n        if kind == "!":\n            return ("not", self.expression(_BP["!"]))\n        if kind == "(":\n            node = self.expression(0)\n            self.expect(")")\n            return node\n        if kind == "{":\n            return self.multi_hash()\n        if kind == "&":\n            return ("expref", self.expression(0))\n        if kind == "[":\n            if self.peek() in ("number", ":"):\n                return self.index(("current",))\n            if self.peek() == "*" and self.peek(1) == "]":\n                self.next(), self.next()\n                return ("project", ("current",), self.projection_rhs(_BP["*"]))\n            return self.multi_list()\n        raise JMESPathError(f"unexpected {kind!r} in {self.expr!r}")\n\n    def led(self, kind: str, left: tuple) -> tuple:\n        if kind == ".":\n            if self.peek() == "*":\n                self.next()\n                return ("vproject", left, self.projection_rhs(_BP["*"]))\n            return ("sub", left, self.dot_rhs(_BP["."]))\n        if kind == "|":\n            return ("pipe", left, self.expression(_BP["|"]))\n        if kind in ("||", "&&"):\n            return ("or" if kind == "||" else "and", left, self.expression(_BP[kind]))\n        if kind in ("==", "!=", "<", "<=", ">", ">="):\n            return ("cmp", kind, left, self.expression(_BP[kind]))\n        if kind == "[]":\n            return ("project", ("flatten", left), self.projection_rhs(_BP["[]"]))\n        if kind == "[?":\n            return self.filter(left)\n        if kind == "(":\n            if left[0] != "field":\n                raise JMESPathError(f"invalid function call in {self.expr!r}")\n            args = []\n            while self.peek() != ")":\n                args.append(self.expression(0))\n                if self.peek() == ",":\n                    self.next()\n            self.next()\n            return ("call", left[1], args)\n        if kind == "[":\n            if self.peek() in ("number", ":"):\n                return self.index(left)\n            self.expect("*")\n            self.expect("]")\n            return ("project", left, self.projection_rhs(_BP["*"]))\n        raise JMESPathError(f"unexpected {kind!r} in {self.expr!r}")\n\n    def index(self, left: tuple) -> tuple:\n        parts: list[int | None] = [None, None, None]\n        n = 0\n        while self.peek() != "]":\n            if self.peek() == ":":\n                self.next()\n                n += 1\n                if n > 2:\n                    raise JMESPathError(f"bad slice in {self.expr!r}")\n            else:\n                parts[n] = self.expect("number")\n        self.next()\n        if n == 0:\n            return ("index", left, parts[0])\n        return ("project", ("slice", left, parts[0], parts[1], parts[2]), self.projection_rhs(_BP["*"]))\n\n    def filter(self, left: tuple) -> tuple:\n        cond = self.expression(0)\n        self.expect("]")\n        return ("filter", left, cond, self.projection_rhs(_BP["[?"]))\n\n    def projection_rhs(self, bp: int) -> tuple:\n        nxt = self.peek()\n        if _BP.get(nxt, 0) < 10:\n            return ("current",)\n        if nxt in ("[", "[?", "[]"):\n            return self.expression(bp)\n        if nxt == ".":\n            self.next()\n            return self.dot_rhs(bp)\n        raise JMESPathError(f"unexpected {nxt!r} after a projection in {self.expr!r}")\n\n    def dot_rhs(self, bp: int) -> tuple:\n        nxt = self.peek()\n        if nxt in ("ident", "*", "@"):\n            return self.expression(bp)\n        if nxt == "[":\n            self.next()\n            return self.multi_list()\n        if nxt == "{":\n            self.next()\n            return self.multi_hash()\n        raise JMESPathError(f"unexpected {nxt!r} after \'.\' in {self.expr!r}")\n\n    def multi_list(self) -> tuple:\n        items = []\n        while True:\n            items.append(self.expression(0))\n            if self.peek() == ",":\n                self.next()\n                continue\n            self.expect("]")\n            return ("mlist", items)\n\n    def multi_hash(self) -> tuple:\n        pairs = []\n        while True:\n            key = self.expect("ident")\n            self.expect(":")\n            pairs.append((key, self.expression(0)))\n            if self.peek() == ",":\n                self.next()\n                continue\n            self.expect("}")\n            return ("mhash", pairs)\n\n\n_AST_CACHE: dict[str, tuple] = {}\n\n\ndef compile_jmespath(expr: str) -> tuple:\n    node = _AST_CACHE.get(expr)\n    if node is None:\n        node = _AST_CACHE[expr] = _Parser(expr).parse()\n    return node\n\n\ndef jmespath_search(expr: str, data: Any) -> Any:\n    """Evaluate `expr`; raises NotFound for a missing key outside projections."""\n    return _eval(compile_jmespath(expr), data)\n\n\ndef _truthy(v: Any) -> bool:\n    return not (v is None or v is False or v == "" or v == [] or v == {})\n\n\ndef _soft(node: tuple, data: Any) -> Any:\n    try:\n        return _eval(node, data)\n    except NotFound:\n        return None\n\n\ndef _eq(a: Any, b: Any) -> bool:\n    if isinstance(a, bool) or isinstance(b, bool):\n        return a is b\n    return a == b\n\n\ndef _eval(node: tuple, data: Any) -> Any:\n    kind = node[0]\n    if kind == "field":\n        if isinstance(data, dict):\n            if node[1] in data:\n                return data[node[1]]\n            raise NotFound(node[1])\n        return None\n    if kind == "sub":\n        left = _eval(node[1], data)\n        return _eval(node[2], left)\n    if kind == "current":\n        return data\n    if kind == "literal":\n        return node[1]\n    if kind == "index":\n        left = _eval(node[1], data)\n        if isinstance(left, list):\n            try:\n                return left[node[2]]\n            except IndexError:\n                return None\n        return None\n    if kind == "slice":\n        left = _soft(node[1], data)\n        if not isinstance(left, list):\n            return None\n        return left[slice(node[2], node[3], node[4])]\n    if kind == "flatten":\n        # a projection over a missing key is null, not "not found" (Kyverno\'s fork)\n        left = _soft(node[1], data)\n        if not isinstance(left, list):\n            return None\n        out = []\n        for item in left:\n            out.extend(item) if isinstance(item, list) else out.append(item)\n        return out\n    if kind in ("project", "vproject", "filter"):\n        left = _soft(node[1], data)\n        if kind == "vproject":\n            if not isinstance(left, dict):\n                return None\n            items = list(left.values())\n        else:\n            if not isinstance(left, list):\n                return None\n            items = left\n        if kind == "filter":\n            items = [x for x in items if _truthy(_soft(node[2], x))]\n            rhs = node[3]\n        else:\n            rhs = node[2]\n        out = []\n        for item in items:\n            v = _soft(rhs, item)\n            if v is not None:\n                out.append(v)\n        return out\n    if kind == "pipe":\n        return _eval(node[2], _eval(node[1], data))\n    if kind == "or":\n        left = _soft(node[1], data)\n        return left if _truthy(left) else _eval(node[2], data)\n    if kind == "and":\n        left = _soft(node[1], data)\n        return _eval(node[2], data) if _truthy(left) else left\n    if kind == "not":\n        return not _truthy(_soft(node[1], data))\n    if kind == "cmp":\n        a, b = _soft(node[2], data), _soft(node[3], data)\n        op = node[1]\n        if op == "==":\n            return _eq(a, b)\n        if op == "!=":\n            return not _eq(a, b)\n        if not (isinstance(a, (int, float)) and isinstance(b, (int, float))) or \\\n                isinstance(a, bool) or isinstance(b, bool):\n            return None\n        return {"<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b}[op]\n    if kind == "mlist":\n        if data is None:\n            return None\n        return [_soft(n, data) for n in node[1]]\n    if kind == "mhash":\n        if data is None:\n            return None\n        return {k: _soft(n, data) for k, n in node[1]}\n    if kind == "expref":\n        return ("expref", node[1])\n    if kind == "call":\n        fn = _FUNCTIONS.get(node[1])\n        if fn is None:\n            raise Unsupported(f"JMESPath function {node[1]}()")\n        args = [_eval(a, data) if a[0] != "expref" else ("expref", a[1]) for a in node[2]]\n        return fn(*args)\n    raise Unsupported(f"JMESPath expression {kind}")\n\n\ndef _type(v: Any) -> str:\n    if v is None:\n        return "null"\n    if isinstance(v, bool):\n        return "boolean"\n    if isinstance(v, (int, float)):\n        return "number"\n    if isinstance(v, str):\n        return "string"\n    if isinstance(v, list):\n        return "array"\n    if isinstance(v, dict):\n        return "object"\n    return "expref"\n\n\ndef _need(v: Any, *types: str) -> Any:\n    if _type(v) not in types:\n        raise JMESPathError(f"invalid type {_type(v)}, expected {\'/\'.join(types)}")\n    return v\n\n\ndef _to_string(v: Any) -> str:\n    return v if isinstance(v, str) else json.dumps(v, separators=(",", ":"))\n\n\ndef _to_number(v: Any) -> Any:\n    if isinstance(v, bool):\n        return None\n    if isinstance(v, (int, float)):\n        return v\n    if isinstance(v, str):\n        try:\n            return int(v)\n        except ValueError:\n            try:\n                return float(v)\n            except ValueError:\n                return None\n    return None\n\n\ndef _num(v: Any) -> Any:\n    if isinstance(v, str):\n        q = parse_quantity(v)\n        if q is None:\n            raise JMESPathError(f"not a number: {v!r}")\n        return q\n    return _need(v, "number")\n\n\ndef _arith(op: Callable[[Any, Any], Any]) -> Callable[[Any, Any], Any]:\n    def fn(a: Any, b: Any) -> Any:\n        r = op(Fraction(_num(a)), Fraction(_num(b)))\n        return int(r) if r.denominator == 1 else float(r)\n    return fn\n\n\ndef _go_replacement(template: str) -> str:\n    """Go\'s `${1}` / `$1` replacement syntax as Python\'s `\\\\g<1>`."""\n    out = template.replace("\\\\", "\\\\\\\\")\n    return re.sub(r"\\$\\{?(\\w+)\\}?", lambda m: f"\\\\g<{m.group(1)}>", out)\n\n\ndef _by(fn: Callable, items: Any, ref: Any) -> Any:\n    _need(items, "array")\n    if not (isinstance(ref, tuple) and ref[0] == "expref"):\n        raise JMESPathError("expected an expression reference (&expr)")\n    return fn(items, key=lambda x: _eval(ref[1], x)) if items else None\n\n\n_FUNCTIONS: dict[str, Callable[..., Any]] = {\n    "length": lambda v: len(_need(v, "string", "array", "object")),\n    "keys": lambda v: list(_need(v, "object").keys()),\n    "values": lambda v: list(_need(v, "object").values()),\n    "contains": lambda s, x: (x in s) if isinstance(_need(s, "string", "array"), list)\n    else (isinstance(x, str) and x in s),\n    "starts_with": lambda s, p: _need(s, "string").startswith(_need(p, "string")),\n    "ends_with": lambda s, p: _need(s, "string").endswith(_need(p, "string")),\n    "to_string": _to_string,\n    "to_number": _to_number,\n    "to_array": lambda v: v if isinstance(v, list) else [v],\n    "type": _type,\n    "not_null": lambda *a: next((x for x in a if x is not None), None),\n    "join": lambda sep, xs: _need(sep, "string").join(_need(x, "string") for x in _need(xs, "array")),\n    "merge": lambda *objs: {k: v for o in objs for k, v in _need(o, "object").items()},\n    "max": lambda xs: max(_need(xs, "array")) if xs else None,\n    "min": lambda xs: min(_need(xs, "array")) if xs else None,\n    "sum": lambda xs: sum(_need(xs, "array")),\n    "avg": lambda xs: (sum(xs) / len(xs)) if _need(xs, "array") else None,\n    "abs": lambda x: abs(_need(x, "number")),\n    "ceil": lambda x: math.ceil(_need(x, "number")),\n    "floor": lambda x: math.floor(_need(x, "number")),\n    "reverse": lambda v: _need(v, "string", "array")[::-1],\n    "sort": lambda xs: sorted(_need(xs, "array")),\n    "sort_by": lambda xs, ref: sorted(_need(xs, "array"), key=lambda x: _eval(ref[1], x)),\n    "max_by": lambda xs, ref: _by(max, xs, ref),\n    "min_by": lambda xs, ref: _by(min, xs, ref),\n    "map": lambda ref, xs: [_soft(ref[1], x) for x in _need(xs, "array")],\n    # Kyverno\'s own functions.\n    "regex_match": lambda rx, s: re.search(_need(rx, "string"), _to_go_string(s)) is not None,\n    "pattern_match": lambda p, s: wildcard_match(_need(p, "string"), _to_go_string(s)),\n    "regex_replace_all": lambda rx, s, new: re.sub(_need(rx, "string"), _go_replacement(_to_go_string(new)),\n                                                   _to_go_string(s)),\n    "regex_replace_all_literal": lambda rx, s, new: re.sub(_need(rx, "string"), lambda _m: _to_go_string(new),\n                                                           _to_go_string(s)),\n    "split": lambda s, sep: _need(s, "string").split(_need(sep, "string")),\n    "to_upper": lambda s: _need(s, "string").upper(),\n    "to_lower": lambda s: _need(s, "string").lower(),\n    "trim": lambda s, cut: _need(s, "string").strip(_need(cut, "string")),\n    "trim_prefix": lambda s, p: _need(s, "string").removeprefix(_need(p, "string")),\n    "replace_all": lambda s, old, new: _need(s, "string").replace(old, new),\n    "replace": lambda s, old, new, n: _need(s, "string").replace(old, new, int(n)),\n    "truncate": lambda s, n: _need(s, "string")[: int(n)],\n    "equal_fold": lambda a, b: _need(a, "string").casefold() == _need(b, "string").casefold(),\n    "compare": lambda a, b: (a > b) - (a < b),\n    "base64_decode": lambda s: base64.b64decode(_need(s, "string")).decode("utf-8", "replace"),\n    "base64_encode": lambda s: base64.b64encode(_need(s, "string").encode()).decode(),\n    "parse_json": lambda s: json.loads(_need(s, "string")),\n    "label_match": lambda sel, labels: all((labels or {}).get(k) == v for k, v in _need(sel, "object").items()),\n    "add": _arith(lambda a, b: a + b),\n    "subtract": _arith(lambda a, b: a - b),\n    "multiply": _arith(lambda a, b: a * b),\n    "divide": _arith(lambda a, b: a / b),\n    "modulo": _arith(lambda a, b: a % b),\n}\n\n\n# ---------------------------------------------------------------------------------------\n# Variable substitution: `{{ expr }}`, innermost first, as Kyverno does.\n\n_VARIABLE = re.compile(r"\\{\\{(?:\\{[^{}]*\\}|[^{}])*\\}\\}")\n\n\ndef _resolve(expr: str, ctx: dict) -> Any:\n    expr = expr.strip()\n    if expr == "@":\n        raise Unsupported("{{@}} (the value at the pattern\'s own path)")\n    try:\n        return jmespath_search(expr, ctx)\n    except JMESPathError as exc:\n        raise KyvernoError(f"variable {{{{{expr}}}}}: {exc}") from exc\n    except (TypeError, ValueError, re.error, ZeroDivisionError) as exc:\n        raise KyvernoError(f"variable {{{{{expr}}}}}: {exc}") from exc\n\n\ndef substitute(value: Any, ctx: dict, soft: bool = False) -> Any:\n    """Replace every `{{ expr }}` in strings of `value` (recursively).\n\n    A string that is exactly one variable becomes the variable\'s value; otherwise values are\n    printed into the string. A missing key raises KyvernoError, or gives "" when `soft`\n    (Kyverno\'s rule for preconditions).\n    """\n    if isinstance(value, str):\n        return _substitute_string(value, ctx, soft)\n    if isinstance(value, list):\n        return [substitute(v, ctx, soft) for v in value]\n    if isinstance(value, dict):\n        return {substitute(k, ctx, soft) if "{{" in k else k: substitute(v, ctx, soft) for k, v in value.items()}\n    return value\n\n\ndef _substitute_string(text: str, ctx: dict, soft: bool) -> Any:\n    if "$(" in text:\n        raise Unsupported("$(...) references in patterns")\n    while "{{" in text:\n        m = _VARIABLE.search(text)\n        if not m:\n            return text\n        inner = m.group()[2:-2]\n        if inner.strip().startswith("-"):\n            # `{{- ...}}` escapes a variable: Kyverno leaves it as text.\n            raise Unsupported("escaped variables {{- }}")\n        try:\n            value = _resolve(inner, ctx)\n        except NotFound as exc:\n            if not soft:\n                raise KyvernoError(f"variable {{{{{inner.strip()}}}}} not found: key {exc} is missing") from exc\n            value = ""\n        if m.start() == 0 and m.end() == len(text):\n            return value\n        text = text[: m.start()] + (value if isinstance(value, str) else _to_go_string(value)) + text[m.end():]\n    return text\n\n\n# ---------------------------------------------------------------------------------------\n# Condition operators (preconditions and deny).\n\n_RANGE = re.compile(r"^(!?)(-?\\d+(?:\\.\\d+)?[A-Za-z]*)-(-?\\d+(?:\\.\\d+)?[A-Za-z]*)$")\n\n\ndef _scalar_equal(key: Any, value: Any) -> bool:\n    """Kyverno\'s Equals for a scalar key: durations, then quantities, then wildcards."""\n    if isinstance(key, bool) or isinstance(value, bool):\n        return isinstance(key, bool) and isinstance(value, bool) and key == value\n    if isinstance(key, str):\n        dk, dv = parse_duration(key), parse_duration(value)\n        if dk is not None and dv is not None and not _plain_number(key):\n            return dk == dv\n        qk = parse_quantity(key)\n        qv = parse_quantity(value) if isinstance(value, (str, int, float)) else None\n        if qk is not None and qv is not None and not _plain_number(key) and isinstance(value, str):\n            return qk == qv\n        if isinstance(value, str):\n            return wildcard_match(value, key)\n        if isinstance(value, (int, float)) and qk is not None:\n            return qk == Fraction(value)\n        return False\n    if isinstance(key, (int, float)):\n        if isinstance(value, (int, float)):\n            return key == value\n        if isinstance(value, str):\n            q = parse_quantity(value)\n            return q is not None and q == Fraction(key)\n        return False\n    return False\n\n\ndef _plain_number(s: str) -> bool:\n    return re.fullmatch(r"-?\\d+(\\.\\d+)?", s.strip()) is not None\n\n\ndef _equals(key: Any, value: Any) -> bool:\n    if key is None:\n        return False\n    if isinstance(key, (dict, list)):\n        return key == value\n    return _scalar_equal(key, value)\n\n\ndef _in_values(key: str, values: Any) -> bool | None:\n    """Whether the string `key` is in `values` (wildcards both ways, numeric ranges)."""\n    if isinstance(values, list):\n        for v in values:\n            sv = _to_go_string(v)\n            if wildcard_match(sv, key) or wildcard_match(key, sv):\n                return True\n            if isinstance(v, str) and _in_range(key, v):\n                return True\n        return False\n    if isinstance(values, str):\n        if wildcard_match(values, key) or _in_range(key, values):\n            return True\n        try:\n            arr = json.loads(values)\n        except ValueError:\n            return False\n        return isinstance(arr, list) and key in [_to_go_string(a) for a in arr]\n    return None  # invalid type\n\n\ndef _in_range(key: str, text: str) -> bool:\n    """`key` within a numeric range value such as `5000-6000`."""\n    m = _RANGE.match(text)\n    if not m or m.group(1):\n        return False\n    k, lo, hi = parse_quantity(key), parse_quantity(m.group(2)), parse_quantity(m.group(3))\n    return None not in (k, lo, hi) and lo <= k <= hi\n\n\ndef _set_op(key: Any, value: Any, quantifier: str, negate: bool) -> bool:\n    if isinstance(key, (str, int, float)):\n        keys = [_to_go_string(key)]\n    elif isinstance(key, list):\n        keys = [_to_go_string(k) for k in key]\n    else:\n        return False\n    found = [_in_values(k, value) for k in keys]\n    if any(f is None for f in found):\n        return False\n    hits = [(not f) if negate else f for f in found]\n    if quantifier == "any":\n        return any(hits)\n    return all(hits)\n\n\ndef _comparable(v: Any) -> tuple[str, Any] | None:\n    if isinstance(v, bool) or v is None:\n        return None\n    if isinstance(v, (int, float)):\n        return ("num", Fraction(v))\n    if isinstance(v, str):\n        d = parse_duration(v)\n        if d is not None and not _plain_number(v):\n            return ("dur", d)\n        q = parse_quantity(v)\n        if q is not None:\n            return ("num", q)\n        m = re.fullmatch(r"v?(\\d+)\\.(\\d+)\\.(\\d+)", v.strip())\n        if m:\n            return ("semver", tuple(int(x) for x in m.groups()))\n    return None\n\n\ndef _numeric(key: Any, value: Any, op: str) -> bool:\n    a, b = _comparable(key), _comparable(value)\n    if a is None or b is None:\n        return False\n    if a[0] != b[0]:\n        # a bare number against a duration compares seconds\n        if {a[0], b[0]} == {"num", "dur"}:\n            a, b = ("x", a[1]), ("x", b[1])\n        else:\n            return False\n    x, y = a[1], b[1]\n    return {">": x > y, ">=": x >= y, "<": x < y, "<=": x <= y}[op]\n\n\ndef _duration_op(key: Any, value: Any, op: str) -> bool:\n    def secs(v: Any) -> Fraction | None:\n        if isinstance(v, (int, float)) and not isinstance(v, bool):\n            return Fraction(v)\n        return parse_duration(v)\n    a, b = secs(key), secs(value)\n    if a is None or b is None:\n        return False\n    return {">": a > b, ">=": a >= b, "<": a < b, "<=": a <= b}[op]\n\n\ndef evaluate_operator(op: str, key: Any, value: Any) -> bool:\n    if op in ("Equals", "Equal"):\n        return _equals(key, value)\n    if op in ("NotEquals", "NotEqual"):\n        return key is not None and not _equals(key, value)\n    if op == "AnyIn":\n        return _set_op(key, value, "any", False)\n    if op in ("AllIn", "In"):\n        return _set_op(key, value, "all", False)\n    if op == "AnyNotIn":\n        return _set_op(key, value, "any", True)\n    if op in ("AllNotIn", "NotIn"):\n        return _set_op(key, value, "all", True)\n    numeric = {"GreaterThan": ">", "GreaterThanOrEquals": ">=", "LessThan": "<", "LessThanOrEquals": "<="}\n    if op in numeric:\n        return _numeric(key, value, numeric[op])\n    durations = {"DurationGreaterThan": ">", "DurationGreaterThanOrEquals": ">=",\n                 "DurationLessThan": "<", "DurationLessThanOrEquals": "<="}\n    if op in durations:\n        return _duration_op(key, value, durations[op])\n    raise Unsupported(f"condition operator {op}")\n\n\ndef evaluate_conditions(conditions: Any, ctx: dict, soft: bool) -> tuple[bool, str]:\n    """Evaluate a conditions block (a list means `all`); returns (holds, message)."""\n    if conditions is None:\n        return True, ""\n    if isinstance(conditions, list):\n        blocks = {"all": conditions}\n    elif isinstance(conditions, dict):\n        extra = set(conditions) - {"any", "all"}\n        if extra:\n            raise KyvernoError(f"unknown condition block {min(extra)!r}")\n        blocks = conditions\n    else:\n        raise KyvernoError("conditions must be a list or an any/all block")\n\n    def one(cond: dict) -> bool:\n        if not isinstance(cond, dict) or "operator" not in cond:\n            raise KyvernoError("a condition needs key, operator and value")\n        key = substitute(cond.get("key"), ctx, soft)\n        value = substitute(cond.get("value"), ctx, soft)\n        return evaluate_operator(cond["operator"], key, value)\n\n    messages = []\n    any_block = blocks.get("any")\n    if any_block:\n        results = [one(c) for c in any_block]\n        if not any(results):\n            messages = [c.get("message", "") for c in any_block if c.get("message")]\n            return False, "; ".join(messages)\n    for c in blocks.get("all") or []:\n        if not one(c):\n            return False, c.get("message", "") if isinstance(c, dict) else ""\n    return True, ""\n\n\n# ---------------------------------------------------------------------------------------\n# Patterns: anchors, value operators, arrays, as pkg/engine/validate.\n\nclass _PatternFail(Exception):\n    """A mismatch. `kind` is plain, conditional, global or negation; the first two skip."""\n\n    def __init__(self, path: str, msg: str, kind: str = "plain") -> None:\n        super().__init__(f"{msg} at {path}")\n        self.path, self.kind = path, kind\n\n    @property\n    def skip(self) -> bool:\n        return self.kind in ("conditional", "global")\n\n\n_ANCHOR = re.compile(r"^(\\(|=\\(|\\^\\(|X\\(|<\\(|\\+\\()(.*)\\)$")\n\n\n@functools.lru_cache(maxsize=4096)\ndef _anchor(key: str) -> tuple[str, str]:\n    """(anchor kind, bare key); kind \'\' for a plain key."""\n    m = _ANCHOR.match(key)\n    if not m:\n        return "", key\n    return {"(": "conditional", "=(": "equality", "^(": "existence", "X(": "negation",\n            "<(": "global", "+(": "add"}[m.group(1)], m.group(2)\n\n\n_NESTED_MEMO: dict[int, tuple[Any, bool]] = {}\n\n\ndef _has_nested_anchor(value: Any) -> bool:\n    # Patterns are long-lived (cached rules), so memoise by identity, checking the object.\n    hit = _NESTED_MEMO.get(id(value))\n    if hit is not None and hit[0] is value:\n        return hit[1]\n    result = _nested_anchor(value)\n    if isinstance(value, (dict, list)):\n        if len(_NESTED_MEMO) > 20000:\n            _NESTED_MEMO.clear()\n        _NESTED_MEMO[id(value)] = (value, result)\n    return result\n\n\ndef _nested_anchor(value: Any) -> bool:\n    if isinstance(value, dict):\n        return any(_anchor(k)[0] or _has_nested_anchor(v) for k, v in value.items())\n    if isinstance(value, list):\n        return any(_has_nested_anchor(v) for v in value)\n    return False\n\n\ndef match_pattern(resource: Any, pattern: Any) -> tuple[str, str]:\n    """Match a resource against a pattern: (pass|fail|skip, message)."""\n    try:\n        _element(resource, pattern, "/")\n    except _PatternFail as exc:\n        return (SKIP if exc.skip else FAIL), str(exc)\n    return PASS, ""\n\n\ndef _element(res: Any, pat: Any, path: str) -> None:\n    if isinstance(pat, dict):\n        if not isinstance(res, dict):\n            raise _PatternFail(path, "expected an object")\n        _map(res, pat, path)\n    elif isinstance(pat, list):\n        if not isinstance(res, list):\n            raise _PatternFail(path, "expected a list")\n        _array(res, pat, path)\n    elif pat is None or isinstance(pat, (str, int, float, bool)):\n        if isinstance(res, list):\n            for item in res:\n                if not validate_value(item, pat):\n                    raise _PatternFail(path, f"value {_to_go_string(item)!r} does not match {pat!r}")\n        elif not validate_value(res, pat):\n            raise _PatternFail(path, f"value {_to_go_string(res)!r} does not match {pat!r}")\n    else:\n        raise _PatternFail(path, "pattern contains an unknown type")\n\n\ndef _expand_wildcard_keys(pat: dict, res: dict) -> dict:\n    if not any(_has_wildcard(k) for k in pat):\n        return pat\n    out: dict = {}\n    for key, value in pat.items():\n        kind, bare = _anchor(key)\n        if not _has_wildcard(bare):\n            out[key] = value\n            continue\n        hits = [k for k in res if wildcard_match(bare, k)]\n        if not hits:\n            out[key] = value\n        for k in hits:\n            out[key.replace(bare, k) if kind else k] = value\n    return out\n\n\ndef _map(res: dict, pat: dict, path: str) -> None:\n    # Like Kyverno, wildcard keys are expanded only in metadata labels and annotations.\n    if path.endswith(("/metadata/labels/", "/metadata/annotations/")):\n        pat = _expand_wildcard_keys(pat, res)\n    anchors, plain = [], []\n    for key, value in pat.items():\n        kind, bare = _anchor(key)\n        if kind == "add":\n            continue  # add-if-not-present is a mutate anchor; validation ignores it\n        (anchors if kind in ("conditional", "global", "existence", "negation") else plain).append((kind, bare, value))\n    # Conditions first (they decide skip), then negation/existence, then the rest, nested anchors first.\n    order = {"conditional": 0, "global": 0, "negation": 1, "existence": 1}\n    anchors.sort(key=lambda t: order[t[0]])\n    if len(plain) > 1:\n        plain.sort(key=lambda t: not _has_nested_anchor(t[2]))\n    for kind, key, value in anchors + plain:\n        sub = f"{path}{key}/"\n        if kind in ("conditional", "global"):\n            if key not in res:\n                raise _PatternFail(sub, "conditional anchor key doesn\'t exist in the resource", kind)\n            try:\n                _element(res[key], value, sub)\n            except _PatternFail as exc:\n                raise _PatternFail(exc.path, f"{kind} anchor mismatch: {exc}", kind) from None\n        elif kind == "negation":\n            if key in res:\n                raise _PatternFail(sub, f"{key} is not allowed", "negation")\n        elif kind == "existence":\n            if key not in res:\n                continue\n            items = res[key]\n            if not isinstance(items, list):\n                raise _PatternFail(sub, "existence anchor ^() applies only to lists")\n            if not isinstance(value, list):\n                raise _PatternFail(sub, "existence anchor ^() needs a list pattern")\n            for p in value:\n                if not isinstance(p, dict):\n                    raise _PatternFail(sub, "existence anchor ^() needs a list of objects")\n                if not any(_quiet(item, p, sub) for item in items):\n                    raise _PatternFail(sub, "existence anchor validation failed")\n        elif kind == "equality":\n            if key in res:\n                _element(res[key], value, sub)\n        else:\n            current = res.get(key)\n            if value == "*":\n                if current is None:\n                    raise _PatternFail(sub, "field is required")\n                continue\n            _element(current, value, sub)\n\n\ndef _quiet(res: Any, pat: Any, path: str) -> bool:\n    try:\n        _element(res, pat, path)\n        return True\n    except _PatternFail:\n        return False\n\n\ndef _array(res: list, pat: list, path: str) -> None:\n    if not pat:\n        raise _PatternFail(path, "empty pattern list")\n    first = pat[0]\n    if isinstance(first, dict):\n        applied, skipped = 0, None\n        for i, item in enumerate(res):\n            try:\n                _element(item, first, f"{path}{i}/")\n            except _PatternFail as exc:\n                if exc.skip:\n                    skipped = exc\n                    continue\n                raise\n            applied += 1\n        if applied == 0 and skipped is not None:\n            raise skipped\n        return\n    if len(res) < len(pat):\n        raise _PatternFail(path, f"list has {len(res)} items, pattern needs {len(pat)}")\n    for i, p in enumerate(pat):\n        _element(res[i], p, f"{path}{i}/")\n\n\ndef validate_value(value: Any, pattern: Any) -> bool:\n    """A scalar pattern against a resource value (pattern.Validate)."""\n    if isinstance(pattern, bool):\n        return isinstance(value, bool) and value == pattern\n    if isinstance(pattern, int):\n        if isinstance(value, bool):\n            return False\n        if isinstance(value, int):\n            return value == pattern\n        if isinstance(value, float):\n            return value.is_integer() and int(value) == pattern\n        if isinstance(value, str):\n            try:\n                return int(value, 10) == pattern\n            except ValueError:\n                return False\n        return False\n    if isinstance(pattern, float):\n        if isinstance(value, bool):\n            return False\n        if isinstance(value, (int, float)):\n            return float(value) == pattern\n        if isinstance(value, str):\n            try:\n                return float(value) == pattern\n            except ValueError:\n                return False\n        return False\n    if pattern is None:\n        if isinstance(value, bool):\n            return not value\n        if isinstance(value, (int, float)):\n            return value == 0\n        if isinstance(value, str):\n            return value == ""\n        return value is None\n    if isinstance(pattern, dict):\n        return isinstance(value, dict)\n    if isinstance(pattern, str):\n        if value == pattern:\n            return True\n        return any(\n            all(_string_pattern(value, c.strip()) for c in alt.strip().split("&"))\n            for alt in pattern.split("|")\n        )\n    return False\n\n\ndef _string_pattern(value: Any, pattern: str) -> bool:\n    m = _RANGE.match(pattern)\n    if m:\n        lo, hi = m.group(2), m.group(3)\n        if m.group(1):\n            return _string_pattern(value, f"< {lo}") or _string_pattern(value, f"> {hi}")\n        return _string_pattern(value, f">= {lo}") and _string_pattern(value, f"<= {hi}")\n    op = ""\n    for candidate in (">=", "<=", ">", "<", "!"):\n        if len(pattern) >= 2 and pattern.startswith(candidate):\n            op = candidate\n            break\n    operand = pattern[len(op):].strip()\n    return _compare_duration(value, operand, op) or _compare_quantity(value, operand, op) or \\\n        _compare_string(value, operand, op)\n\n\ndef _ordered(a: Any, b: Any, op: str) -> bool:\n    return {"": a == b, "!": a != b, ">": a > b, "<": a < b, ">=": a >= b, "<=": a <= b}[op]\n\n\ndef _compare_duration(value: Any, pattern: str, op: str) -> bool:\n    if not isinstance(value, str):\n        return False\n    a, b = parse_duration(value), parse_duration(pattern)\n    return a is not None and b is not None and _ordered(a, b, op)\n\n\ndef _compare_quantity(value: Any, pattern: str, op: str) -> bool:\n    if isinstance(value, bool) or not isinstance(value, (str, int, float)):\n        return False\n    a, b = parse_quantity(value), parse_quantity(pattern)\n    return a is not None and b is not None and _ordered(a, b, op)\n\n\ndef _compare_string(value: Any, pattern: str, op: str) -> bool:\n    if op not in ("", "!") or value is None or isinstance(value, (dict, list)):\n        return False\n    matched = wildcard_match(pattern, _to_go_string(value))\n    return matched if op == "" else not matched\n\n\n# ---------------------------------------------------------------------------------------\n# Match and exclude.\n\ndef _split_kind(selector: str) -> tuple[str, str, str, str]:\n    """(group, version, kind, subresource) of a kinds entry; \'*\' where unspecified."""\n    parts = selector.split("/")\n    sub = ""\n    if len(parts) > 1 and parts[-1][:1].islower() and not parts[-2][:1].islower() and parts[-2] != "*":\n        sub = parts.pop()\n    if len(parts) == 1:\n        return "*", "*", parts[0], sub\n    if len(parts) == 2:\n        if "." in parts[0]:\n            return parts[0], "*", parts[1], sub\n        return "*", parts[0], parts[1], sub  # Version/Kind: any group\n    return parts[0], parts[1], "/".join(parts[2:]), sub\n\n\ndef _kind_matches(kinds: list, resource: dict) -> bool:\n    api = resource.get("apiVersion") or ""\n    group, _, version = api.rpartition("/")\n    kind = resource.get("kind") or ""\n    for selector in kinds:\n        g, v, k, sub = _split_kind(str(selector))\n        if sub:\n            continue  # subresources are never the object itself\n        if wildcard_match(k, kind) and wildcard_match(v, version) and wildcard_match(g, group):\n            return True\n    return False\n\n\ndef _selector_matches(selector: dict, labels: dict) -> bool:\n    for k, v in (selector.get("matchLabels") or {}).items():\n        hits = [lk for lk in labels if wildcard_match(k, lk)]\n        if not hits or not any(wildcard_match(str(v), str(labels[h])) for h in hits):\n            return False\n    for expr in selector.get("matchExpressions") or []:\n        key, op, values = expr.get("key"), expr.get("operator"), expr.get("values") or []\n        present = key in labels\n        if op == "In" and not (present and labels[key] in values):\n            return False\n        if op == "NotIn" and present and labels[key] in values:\n            return False\n        if op == "Exists" and not present:\n            return False\n        if op == "DoesNotExist" and present:\n            return False\n        if op not in ("In", "NotIn", "Exists", "DoesNotExist"):\n            raise Unsupported(f"label selector operator {op}")\n    return True\n\n\ndef _filter_matches(flt: dict, resource: dict, operation: str) -> bool:\n    """One ResourceFilter (resources + subjects/roles) against the resource."""\n    if flt.get("subjects") or flt.get("roles") or flt.get("clusterRoles"):\n        return False  # no admission user information offline: these never match\n    desc = flt.get("resources") or {}\n    meta = resource.get("metadata") or {}\n    name = meta.get("name") or ""\n    kinds = desc.get("kinds")\n    if kinds and not _kind_matches(kinds, resource):\n        return False\n    if desc.get("name") and not wildcard_match(desc["name"], name):\n        return False\n    if desc.get("names") and not any(wildcard_match(n, name) for n in desc["names"]):\n        return False\n    namespace = name if resource.get("kind") == "Namespace" else meta.get("namespace") or ""\n    if desc.get("namespaces") and not any(wildcard_match(n, namespace) for n in desc["namespaces"]):\n        return False\n    if desc.get("annotations"):\n        ann = meta.get("annotations") or {}\n        for k, v in desc["annotations"].items():\n            if not any(wildcard_match(k, ak) and wildcard_match(str(v), str(av)) for ak, av in ann.items()):\n                return False\n    if desc.get("selector") is not None and not _selector_matches(desc["selector"], meta.get("labels") or {}):\n        return False\n    if desc.get("namespaceSelector") is not None:\n        raise Unsupported("namespaceSelector (namespace labels are not known offline)")\n    return not (desc.get("operations") and operation not in desc["operations"])\n\n\ndef _block_matches(block: Any, resource: dict, operation: str) -> bool | None:\n    """match/exclude block; None when it is empty (no constraint)."""\n    if not block:\n        return None\n    if block.get("any"):\n        return any(_filter_matches(f, resource, operation) for f in block["any"])\n    if block.get("all"):\n        return all(_filter_matches(f, resource, operation) for f in block["all"])\n    if block.get("resources") or block.get("subjects") or block.get("roles") or block.get("clusterRoles"):\n        return _filter_matches(block, resource, operation)\n    return None\n\n\n# ---------------------------------------------------------------------------------------\n# Autogen for pod controllers.\n\n_POD_CONTROLLERS = ["DaemonSet", "Deployment", "Job", "StatefulSet", "ReplicaSet", "ReplicationController"]\n_AUTOGEN_ANNOTATION = "pod-policies.kyverno.io/autogen-controllers"\n\n\ndef _descriptions(rule: dict) -> list[dict]:\n    out = []\n    for key in ("match", "exclude"):\n        block = rule.get(key) or {}\n        if block.get("resources"):\n            out.append(block["resources"])\n        for f in (block.get("any") or []) + (block.get("all") or []):\n            out.append(f.get("resources") or {})\n    return out\n\n\ndef _autogen_controllers(policy: dict) -> list[str]:\n    ann = (policy.get("metadata") or {}).get("annotations") or {}\n    requested = ann.get(_AUTOGEN_ANNOTATION)\n    if requested is not None and requested.strip() == "none":\n        return []\n    needed = False\n    for rule in policy.get("spec", {}).get("rules") or []:\n        if rule.get("generate") or (rule.get("mutate") or {}).get("patchesJson6902") or rule.get("verifyImages"):\n            return []\n        for desc in _descriptions(rule):\n            kinds = desc.get("kinds") or []\n            if desc.get("name") or desc.get("names") or desc.get("selector") is not None \\\n                    or desc.get("annotations") is not None:\n                return []\n            if len(kinds) > 1 and "Pod" in kinds:\n                return []\n            needed = needed or "Pod" in kinds\n    if not needed:\n        return []\n    if requested:\n        return [c.strip() for c in requested.split(",") if c.strip()]\n    return _POD_CONTROLLERS + ["CronJob"]\n\n\ndef _shift_variables(value: Any, prefix: str) -> Any:\n    """Rewrite request.object.spec/metadata references to the pod template."""\n    if isinstance(value, str):\n        if "request.object" not in value:\n            return value\n        value = re.sub(r"request\\.object\\.spec\\b", f"request.object.{prefix}.spec", value)\n        value = re.sub(r"request\\.object\\.metadata\\b", f"request.object.{prefix}.metadata", value)\n        return value\n    if isinstance(value, list):\n        return [_shift_variables(v, prefix) for v in value]\n    if isinstance(value, dict):\n        return {k: _shift_variables(v, prefix) for k, v in value.items()}\n    return value\n\n\ndef _retarget(block: Any, kinds: list[str]) -> Any:\n    if not block:\n        return block\n    out = json.loads(json.dumps(block))\n    for desc in _descriptions({"match": out}):\n        if "Pod" in (desc.get("kinds") or []):\n            desc["kinds"] = list(kinds)\n    return out\n\n\ndef _autogen_rules(rule: dict, controllers: list[str]) -> list[dict]:\n    match_kinds = [k for d in _descriptions({"match": rule.get("match")}) for k in (d.get("kinds") or [])]\n    if "Pod" not in match_kinds:\n        return []\n    rules = []\n    plain = [c for c in controllers if c != "CronJob"]\n    variants = []\n    if plain:\n        variants.append((f"autogen-{rule[\'name\']}", plain, "spec.template", ["spec", "template"]))\n    if "CronJob" in controllers:\n        variants.append((f"autogen-cronjob-{rule[\'name\']}", ["CronJob"], "spec.jobTemplate.spec.template",\n                         ["spec", "jobTemplate", "spec", "template"]))\n    for name, kinds, prefix, nest in variants:\n        new = {k: v for k, v in rule.items() if k not in ("match", "exclude", "validate", "preconditions")}\n        new["name"] = name\n        new["match"] = _retarget(rule.get("match"), kinds)\n        if rule.get("exclude"):\n            new["exclude"] = _retarget(rule.get("exclude"), kinds)\n        if "preconditions" in rule:\n            new["preconditions"] = _shift_variables(rule["preconditions"], prefix)\n        validate = dict(rule.get("validate") or {})\n\n        def wrap(p: Any, nest: list[str] = nest) -> Any:\n            for key in reversed(nest):\n                p = {key: p}\n            return p\n        if "pattern" in validate:\n            validate["pattern"] = wrap(_shift_variables(validate["pattern"], prefix))\n        if "anyPattern" in validate:\n            validate["anyPattern"] = [wrap(_shift_variables(p, prefix)) for p in validate["anyPattern"]]\n        if "deny" in validate:\n            validate["deny"] = _shift_variables(validate["deny"], prefix)\n        if "foreach" in validate:\n            validate["foreach"] = _shift_variables(validate["foreach"], prefix)\n        new["validate"] = validate\n        rules.append(new)\n    return rules\n\n\n_RULES_MEMO: dict[int, tuple[dict, Any, list[dict]]] = {}\n\n\ndef _cached_rules(policy: dict) -> list[dict]:\n    """expand_rules, memoised per policy object (by identity of the policy and its spec;\n    a caller that edits a policy\'s rules in place should pass a new dict)."""\n    spec = policy.get("spec")\n    hit = _RULES_MEMO.get(id(policy))\n    if hit is not None and hit[0] is policy and hit[1] is spec:\n        return hit[2]\n    rules = expand_rules(policy)\n    if len(_RULES_MEMO) > 512:\n        _RULES_MEMO.clear()\n    _RULES_MEMO[id(policy)] = (policy, spec, rules)\n    return rules\n\n\ndef expand_rules(policy: dict) -> list[dict]:\n    """The policy\'s rules followed by the autogen rules Kyverno would add."""\n    rules = list((policy.get("spec") or {}).get("rules") or [])\n    controllers = _autogen_controllers(policy)\n    if not controllers:\n        return rules\n    out = list(rules)\n    for rule in rules:\n        out.extend(_autogen_rules(rule, controllers))\n    return out\n\n\n# ---------------------------------------------------------------------------------------\n# Context and rule evaluation.\n\ndef _image_info(image: str) -> dict:\n    ref = image\n    digest = ""\n    if "@" in ref:\n        ref, digest = ref.split("@", 1)\n    tag = ""\n    slash = ref.rfind("/")\n    colon = ref.rfind(":")\n    if colon > slash:\n        ref, tag = ref[:colon], ref[colon + 1:]\n    first, _, rest = ref.partition("/")\n    if rest and ("." in first or ":" in first or first == "localhost"):\n        registry, path = first, rest\n    else:\n        registry, path = "docker.io", ref\n    if not tag and not digest:\n        tag = "latest"\n    info = {"registry": registry, "path": path, "name": path.rsplit("/", 1)[-1], "tag": tag,\n            "digest": digest, "reference": f"{registry}/{path}" + (f":{tag}" if tag else "") + (f"@{digest}" if digest else ""),\n            "referenceWithTag": f"{registry}/{path}:{tag}" if tag else ""}\n    return info\n\n\ndef _images(resource: dict) -> dict:\n    spec = resource.get("spec") or {}\n    kind = resource.get("kind")\n    if kind == "CronJob":\n        spec = ((((spec.get("jobTemplate") or {}).get("spec") or {}).get("template") or {}).get("spec")) or {}\n    elif kind != "Pod":\n        spec = ((spec.get("template") or {}).get("spec")) or {}\n    out: dict = {}\n    for key in ("initContainers", "containers", "ephemeralContainers"):\n        items = spec.get(key) or []\n        if items:\n            out[key] = {c.get("name", ""): _image_info(str(c.get("image", ""))) for c in items\n                        if isinstance(c, dict) and c.get("image")}\n    return out\n\n\ndef _build_context(resource: dict | None, operation: str, old: dict | None, values: dict | None,\n                   user: dict | None = None) -> dict:\n    obj = resource if operation != "DELETE" else None\n    ctx: dict = {\n        "request": {"operation": operation, "object": obj, "oldObject": old,\n                    "userInfo": user or {}, "namespace": ((resource or {}).get("metadata") or {}).get("namespace")},\n        "images": _images(resource or {}),\n    }\n    for dotted, val in (values or {}).items():\n        parts = str(dotted).split(".")\n        cur = ctx\n        for p in parts[:-1]:\n            nxt = cur.get(p)\n            if not isinstance(nxt, dict):\n                nxt = cur[p] = {}\n            cur = nxt\n        cur[parts[-1]] = val\n    return ctx\n\n\n_VARS_MEMO: dict[int, tuple[Any, bool]] = {}\n\n\ndef _has_variables(value: Any) -> bool:\n    """Whether a (long-lived) pattern contains `{{` or `$(` anywhere; memoised by identity."""\n    hit = _VARS_MEMO.get(id(value))\n    if hit is not None and hit[0] is value:\n        return hit[1]\n    result = "{{" in json.dumps(value) or "$(" in json.dumps(value)\n    if len(_VARS_MEMO) > 20000:\n        _VARS_MEMO.clear()\n    _VARS_MEMO[id(value)] = (value, result)\n    return result\n\n\ndef _validate(rule_name: str, validate: dict, resource: dict, ctx: dict) -> tuple[str, str]:\n    for key in ("podSecurity", "cel", "manifests", "assert"):\n        if validate.get(key) is not None:\n            raise Unsupported(f"validate.{key}")\n    message = validate.get("message") or ""\n    if validate.get("foreach") is not None:\n        status, detail = _foreach(validate["foreach"], resource, ctx, 0)\n        return status, (detail if status == PASS else f"{message} {detail}".strip())\n    if "pattern" in validate and validate["pattern"] is not None:\n        pattern = substitute(validate["pattern"], ctx) if _has_variables(validate["pattern"]) \\\n            else validate["pattern"]\n        status, detail = match_pattern(resource, pattern)\n        return status, (detail if status == PASS else f"{message} {detail}".strip())\n    if validate.get("anyPattern") is not None:\n        patterns = substitute(validate["anyPattern"], ctx) if _has_variables(validate["anyPattern"]) \\\n            else validate["anyPattern"]\n        if not isinstance(patterns, list):\n            raise KyvernoError("anyPattern must be a list")\n        statuses = []\n        for p in patterns:\n            status, detail = match_pattern(resource, p)\n            if status == PASS:\n                return PASS, ""\n            statuses.append((status, detail))\n        if statuses and all(s == SKIP for s, _ in statuses):\n            return SKIP, "; ".join(d for _, d in statuses)\n        return FAIL, f"{message} " + "; ".join(d for s, d in statuses if s == FAIL)\n    if validate.get("deny") is not None:\n        deny = validate["deny"] or {}\n        holds, _ = evaluate_conditions(deny.get("conditions"), ctx, soft=False)\n        if holds:\n            return FAIL, str(substitute(message, ctx, soft=True)) if "{{" in message else message\n        return PASS, ""\n    raise Unsupported("a validate rule without pattern, anyPattern or deny")\n\n\ndef _foreach(entries: Any, resource: dict, ctx: dict, nesting: int) -> tuple[str, str]:\n    """validate.foreach: every element of each list must pass; skip when none applied."""\n    if not isinstance(entries, list):\n        raise KyvernoError("foreach must be a list")\n    applied = 0\n    for entry in entries:\n        expr = str(entry.get("list") or "").strip()\n        if expr.startswith("{{") and expr.endswith("}}"):\n            expr = expr[2:-2]\n        try:\n            items = _resolve(expr, ctx)\n        except NotFound:\n            continue  # Kyverno skips a foreach whose list cannot be evaluated\n        if not isinstance(items, list):\n            items = [items]\n        scope = entry.get("elementScope")\n        for index, element in enumerate(items):\n            if element is None:\n                continue\n            inner = dict(ctx)\n            inner.update({"element": element, "elementIndex": index,\n                          f"element{nesting}": element, f"elementIndex{nesting}": index})\n            scoped = isinstance(element, dict) if scope is None else bool(scope)\n            if scoped and not isinstance(element, dict):\n                raise KyvernoError("elementScope: true needs elements that are objects")\n            target = element if scoped else resource\n            _load_context(entry.get("context"), inner)\n            holds, _ = evaluate_conditions(entry.get("preconditions"), inner, soft=True)\n            if not holds:\n                continue\n            if entry.get("foreach") is not None:\n                status, detail = _foreach(entry["foreach"], target, inner, nesting + 1)\n            else:\n                status, detail = _validate("", {k: entry[k] for k in ("pattern", "anyPattern", "deny") if k in entry},\n                                           target, inner)\n            if status == SKIP:\n                continue\n            if status != PASS:\n                return status, f"validation failure at element {index}: {detail}".strip()\n            applied += 1\n    if applied == 0:\n        return SKIP, "no element of the foreach lists applied"\n    return PASS, ""\n\n\ndef _load_context(entries: Any, ctx: dict) -> None:\n    """Rule `context` entries; only `variable` entries can be evaluated offline."""\n    for entry in entries or []:\n        name = entry.get("name")\n        variable = entry.get("variable")\n        if variable is None:\n            kinds = [k for k in ("configMap", "apiCall", "imageRegistry", "globalReference") if k in entry]\n            raise Unsupported(f"rule context entry {kinds[0] if kinds else \'?\'} ({name})")\n        value = None\n        if "value" in variable:\n            value = substitute(variable["value"], ctx)\n        if variable.get("jmesPath"):\n            path = substitute(variable["jmesPath"], ctx)\n            try:\n                value = _resolve(str(path), value if "value" in variable else ctx)\n            except NotFound:\n                value = None\n        if value is None:\n            if "default" not in variable:\n                raise KyvernoError(f"context variable {name!r} resolved to null and has no default")\n            value = substitute(variable["default"], ctx)\n        ctx[name] = value\n\n\ndef _context_for(resource: dict, operation: str, old_resource: dict | None, values: dict | None) -> dict:\n    target = resource if operation != "DELETE" else (old_resource or resource)\n    if old_resource is None and operation == "UPDATE":\n        old_resource = resource  # the CLI evaluates an UPDATE against the object itself\n    return _build_context(target, operation, old_resource, values)\n\n\ndef evaluate_rule(policy_name: str, rule: dict, resource: dict, operation: str = "CREATE",\n                  old_resource: dict | None = None, values: dict | None = None,\n                  namespace: str | None = None, ctx: dict | None = None) -> RuleResult:\n    name = rule.get("name", "")\n    target = resource if operation != "DELETE" else (old_resource or resource)\n    if namespace and ((target.get("metadata") or {}).get("namespace") or "") != namespace:\n        return RuleResult(policy_name, name, SKIP, "outside the Policy\'s namespace", matched=False)\n    if rule.get("validate") is None:\n        raise Unsupported(f"rule {name!r}: only validate rules are supported")\n    if not _block_matches(rule.get("match"), target, operation):\n        return RuleResult(policy_name, name, SKIP, "resource does not match", matched=False)\n    if _block_matches(rule.get("exclude"), target, operation):\n        return RuleResult(policy_name, name, SKIP, "resource is excluded", matched=False)\n    if ctx is None:\n        ctx = _context_for(resource, operation, old_resource, values)\n    try:\n        if rule.get("context"):\n            ctx = dict(ctx)  # the policy\'s rules share one context; keep variables per rule\n            _load_context(rule["context"], ctx)\n        holds, _ = evaluate_conditions(rule.get("preconditions"), ctx, soft=True)\n        if not holds:\n            return RuleResult(policy_name, name, SKIP, "preconditions not met")\n        status, message = _validate(name, rule["validate"], target, ctx)\n    except KyvernoError as exc:\n        return RuleResult(policy_name, name, ERROR, str(exc))\n    return RuleResult(policy_name, name, status, message)\n\n\ndef evaluate_policy(policy: dict, resource: dict, operation: str = "CREATE",\n                    old_resource: dict | None = None, values: dict | None = None) -> list[RuleResult]:\n    """Every rule (autogen included) of a Kyverno policy against one resource.\n\n    Raises Unsupported when the policy uses a feature this matcher does not implement.\n    """\n    return _evaluate(policy, resource, operation, old_resource, values, strict=True)\n\n\n_UNSUPPORTED = "unsupported"\n\n\ndef _evaluate(policy: dict, resource: dict, operation: str, old_resource: dict | None,\n              values: dict | None, strict: bool) -> list[RuleResult]:\n    """evaluate_policy; when not `strict`, a rule using an unsupported feature yields a\n    result with status "unsupported" (the feature as message) instead of raising."""\n    if not isinstance(policy, dict) or policy.get("kind") not in ("ClusterPolicy", "Policy"):\n        raise KyvernoError("not a Kyverno ClusterPolicy or Policy")\n    meta = policy.get("metadata") or {}\n    name = meta.get("name", "")\n    namespace = meta.get("namespace") or "default" if policy["kind"] == "Policy" else None\n    rules = _cached_rules(policy)\n    ctx = _context_for(resource, operation, old_resource, values) if rules else None\n    results = []\n    for rule in rules:\n        try:\n            results.append(evaluate_rule(name, rule, resource, operation, old_resource, values, namespace, ctx))\n        except Unsupported as exc:\n            if strict:\n                raise\n            results.append(RuleResult(name, rule.get("name", ""), _UNSUPPORTED, exc.feature))\n    if str((meta.get("annotations") or {}).get("policies.kyverno.io/scored", "")).lower() == "false":\n        # an unscored policy reports its failures as warnings\n        results = [RuleResult(r.policy, r.rule, WARN, r.message, r.matched) if r.status == FAIL else r\n                   for r in results]\n    return results\n\n\n# ---------------------------------------------------------------------------------------\n# Kyverno CLI test suites.\n\n@dataclass\nclass ExpectedResult:\n    policy: str\n    rule: str\n    resource: str\n    kind: str\n    expected: str\n    actual: str = ""\n    detail: str = ""\n\n    @property\n    def met(self) -> bool:\n        return self.expected == self.actual\n\n\n@dataclass\nclass SuiteReport:\n    path: str\n    name: str\n    results: list[ExpectedResult] = field(default_factory=list)\n    unsupported: str = ""\n    error: str = ""\n\n    @property\n    def passed(self) -> bool:\n        return not self.unsupported and not self.error and all(r.met for r in self.results)\n\n\ndef _documents(load_yaml: Callable[[str], list], path: str) -> list[dict]:\n    out = []\n    for doc in load_yaml(path):\n        if isinstance(doc, dict) and doc.get("kind") == "List" and isinstance(doc.get("items"), list):\n            out.extend(d for d in doc["items"] if isinstance(d, dict))\n        elif isinstance(doc, dict):\n            out.append(doc)\n    return out\n\n\ndef _values_for(values_doc: dict | None, policy: str, resource: str) -> dict:\n    """Per-resource variables from a Values file (global values, then policy/resource values)."""\n    if not values_doc:\n        return {}\n    merged: dict = {}\n    merged.update(values_doc.get("globalValues") or {})\n    for p in values_doc.get("policies") or []:\n        if p.get("name") != policy:\n            continue\n        for r in p.get("resources") or []:\n            if r.get("name") == resource:\n                merged.update(r.get("values") or {})\n    return merged\n\n\ndef run_test_suite(test: dict, base: str, load_yaml: Callable[[str], list],\n                   join: Callable[[str, str], str]) -> SuiteReport:\n    """Run one kyverno-test.yaml document. `load_yaml(path)` returns its documents."""\n    name = str((test.get("metadata") or {}).get("name") or test.get("name") or "")\n    report = SuiteReport(path=base, name=name)\n    try:\n        policies: dict[str, dict] = {}\n        for p in test.get("policies") or []:\n            for doc in _documents(load_yaml, join(base, p)):\n                if doc.get("kind") in ("ClusterPolicy", "Policy"):\n                    meta = doc.get("metadata") or {}\n                    key = meta.get("name", "")\n                    policies[key] = doc\n                    if doc["kind"] == "Policy":\n                        policies[f"{meta.get(\'namespace\') or \'default\'}/{key}"] = doc\n                elif doc.get("kind"):\n                    raise Unsupported(f"policy kind {doc.get(\'kind\')}")\n        resources: list[dict] = []\n        for r in test.get("resources") or []:\n            resources.extend(_documents(load_yaml, join(base, r)))\n        values_doc = None\n        if test.get("variables"):\n            docs = load_yaml(join(base, test["variables"]))\n            values_doc = docs[0] if docs else None\n            if values_doc and (values_doc.get("subresources") or values_doc.get("namespaceSelector")):\n                raise Unsupported("Values subresources / namespaceSelector")\n        if test.get("userinfo"):\n            raise Unsupported("userinfo in a test")\n        cache: dict[tuple[str, int], dict[str, RuleResult]] = {}\n        for entry in test.get("results") or []:\n            names = entry.get("resources") or ([entry["resource"]] if entry.get("resource") else [])\n            expected = str(entry.get("result") or entry.get("status") or "")\n            pname = entry.get("policy", "")\n            for rname in names:\n                item = ExpectedResult(pname, entry.get("rule", ""), rname, entry.get("kind", ""), expected)\n                report.results.append(item)\n                policy = policies.get(pname)\n                if policy is None:\n                    item.actual, item.detail = "not found", f"policy {pname!r} is not in the suite"\n                    continue\n                found = _find_resource(resources, rname, entry)\n                if found is None:\n                    item.actual, item.detail = "not found", f"resource {rname!r} is not in the suite"\n                    continue\n                idx, resource = found\n                key = (pname, idx)\n                if key not in cache:\n                    values = _values_for(values_doc, policy["metadata"]["name"],\n                                         resource.get("metadata", {}).get("name", ""))\n                    operation = str(values.pop("request.operation", "CREATE"))\n                    results = _evaluate(policy, resource, operation, None, values, strict=False)\n                    cache[key] = {r.rule: r for r in results}\n                result = _pick(cache[key], item.rule)\n                if result is None:\n                    item.actual, item.detail = "not found", f"rule {item.rule!r} is not in the policy (nor autogen)"\n                elif result.status == _UNSUPPORTED:\n                    raise Unsupported(result.message)\n                else:\n                    item.actual, item.detail = result.status, result.message\n    except Unsupported as exc:\n        report.unsupported = exc.feature\n    except KyvernoError as exc:\n        report.error = str(exc)\n    except OSError as exc:\n        report.error = f"cannot read {getattr(exc, \'filename\', None) or \'\'}: {exc.strerror or exc}"\n    return report\n\n\ndef _pick(results: dict[str, RuleResult], rule: str) -> RuleResult | None:\n    """The result for `rule`: like `kyverno test`, a plain rule name also names its\n    autogen rules, and the one that applies to the resource\'s kind wins."""\n    candidates = [r for name, r in results.items()\n                  if name == rule or name in (f"autogen-{rule}", f"autogen-cronjob-{rule}")]\n    for r in candidates:\n        if r.matched:\n            return r\n    return candidates[0] if candidates else None\n\n\ndef _find_resource(resources: list[dict], name: str, entry: dict) -> tuple[int, dict] | None:\n    namespace = entry.get("namespace")\n    if "/" in name:\n        namespace, name = name.rsplit("/", 1)\n        if "/" in namespace:  # namespace/kind/name is not used by suites; keep the namespace part\n            namespace = namespace.split("/", 1)[0]\n    kind = entry.get("kind")\n    candidates = []\n    for i, r in enumerate(resources):\n        meta = r.get("metadata") or {}\n        if meta.get("name") != name:\n            continue\n        if kind and r.get("kind") != kind.rsplit("/", 1)[-1]:\n            continue\n        if namespace and (meta.get("namespace") or "default") != namespace:\n            continue\n        candidates.append((i, r))\n    return candidates[0] if candidates else None\n'
_YAML_SOURCE = '"""A reader for the YAML that Kubernetes manifests and policies are written in, standard library only.\n\nGenerated evaluators run where only Python is installed, yet agents write Kyverno policies in\nYAML. This reads the subset such files use: block mappings and sequences (compact `- key: v`\nitems included), flow collections (`[a, b]`, `{k: v}`), plain, single- and double-quoted\nscalars, literal and folded block scalars with chomping and indentation indicators, comments,\nand several documents separated by `---`. Plain scalars resolve as PyYAML\'s `safe_load` does\n(YAML 1.1: `yes`/`no` are booleans, `0o7`/`0x1f` integers, `.inf` floats, `~` null), so a file\nreads the same here and in the compiler\'s tests.\n\nLine breaks are LF, CRLF and CR; NEL, LS and PS are content, as in YAML 1.2 (PyYAML, which\nreads YAML 1.1, breaks lines at them).\n\nAnchors, aliases, tags other than the standard `!!str`-style ones, complex keys (`? k`) and\ndirectives are refused with `YAMLSubsetError`, which carries the line and column: a policy\nthat needs them is better converted to JSON than half-read.\n"""\n\nimport re\n\n__all__ = ["YAMLSubsetError", "load_all"]\n\n\nclass YAMLSubsetError(ValueError):\n    def __init__(self, message, line, column):\n        super().__init__(f"line {line}, column {column}: {message}")\n        self.line = line\n        self.column = column\n\n\n# YAML 1.1\'s implicit types, as PyYAML\'s SafeLoader resolves plain scalars\n# YAML\'s white space is spaces and tabs (and line breaks): str.strip() would also take a no-break space\n_BLANK = " \\t\\r\\n"\n_NULL = re.compile(r"~|null|Null|NULL|")\n_BOOL = re.compile(r"yes|Yes|YES|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF")\n_INT = re.compile(r"[-+]?0b[0-1_]+|[-+]?0[0-7_]+|[-+]?(?:0|[1-9][0-9_]*)|[-+]?0x[0-9a-fA-F_]+"\n                  r"|[-+]?[1-9][0-9_]*(?::[0-5]?[0-9])+")\n_FLOAT = re.compile(r"[-+]?(?:[0-9][0-9_]*)\\.[0-9_]*(?:[eE][-+][0-9]+)?|\\.[0-9_]+(?:[eE][-+][0-9]+)?"\n                    r"|[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\\.[0-9_]*|[-+]?\\.(?:inf|Inf|INF)|\\.(?:nan|NaN|NAN)")\n_STD_TAGS = ("!!str", "!!int", "!!float", "!!bool", "!!null", "!!map", "!!seq")\n\n\ndef _sexagesimal(text, convert):\n    sign = -1 if text.startswith("-") else 1\n    value = 0\n    for part in text.lstrip("+-").split(":"):\n        value = value * 60 + convert(part)\n    return sign * value\n\n\ndef resolve_plain(text):\n    """The value of a plain scalar, as YAML 1.1\'s resolver (PyYAML\'s) gives it."""\n    if _NULL.fullmatch(text):\n        return None\n    if _BOOL.fullmatch(text):\n        return text.lower() in ("yes", "true", "on")\n    if _INT.fullmatch(text):\n        body = text.replace("_", "")\n        sign = -1 if body.startswith("-") else 1\n        digits = body.lstrip("+-")\n        if ":" in digits:\n            return _sexagesimal(body, int)\n        if digits.startswith("0b"):\n            return sign * int(digits[2:], 2)\n        if digits.startswith("0x"):\n            return sign * int(digits[2:], 16)\n        if digits.startswith("0") and digits != "0":\n            return sign * int(digits, 8)\n        return sign * int(digits)\n    if _FLOAT.fullmatch(text):\n        body = text.replace("_", "").lower()\n        if body.endswith("inf"):\n            return float("-inf") if body.startswith("-") else float("inf")\n        if body.endswith("nan"):\n            return float("nan")\n        if ":" in body:\n            return _sexagesimal(body, float)\n        return float(body)\n    return text\n\n\ndef _tagged(tag, text, line, column):\n    if tag == "!!str":\n        return text\n    if tag == "!!null":\n        return None\n    value = resolve_plain(text)\n    if tag == "!!float" and isinstance(value, str):\n        try:\n            return float(text.replace("_", ""))\n        except ValueError:\n            raise YAMLSubsetError(f"{text!r} is not a valid float", line, column) from None\n    wanted = {"!!int": int, "!!float": (float, int), "!!bool": bool}[tag]\n    if isinstance(value, bool) != (tag == "!!bool") or not isinstance(value, wanted):\n        raise YAMLSubsetError(f"{text!r} is not a valid {tag[2:]}", line, column)\n    return float(value) if tag == "!!float" else value\n\n\nclass _Line:\n    __slots__ = ("number", "indent", "text")\n\n    def __init__(self, number, indent, text):\n        self.number = number\n        self.indent = indent\n        self.text = text\n\n\n_ESCAPES = {"0": "\\0", "a": "\\a", "b": "\\b", "t": "\\t", "\\t": "\\t", "n": "\\n", "v": "\\v", "f": "\\f", "r": "\\r",\n            "e": "\\x1b", " ": " ", \'"\': \'"\', "/": "/", "\\\\": "\\\\", "N": "\\x85", "_": "\\xa0", "L": "\\u2028",\n            "P": "\\u2029"}\n\n\nclass _Reader:\n    def __init__(self, text):\n        self.raw = text.replace("\\r\\n", "\\n").replace("\\r", "\\n").split("\\n")\n\n    # ---- documents ----------------------------------------------------------------------------------\n\n    def documents(self):\n        bounds, start = [], 0\n        for index, line in enumerate(self.raw):\n            if line.startswith("%"):\n                raise YAMLSubsetError("directives are not supported", index + 1, 1)\n            if line == "---" or line.startswith(("--- ", "---\\t")):\n                rest = line[3:].strip(_BLANK)\n                bounds.append((start, index))\n                start = index + 1\n                if rest and not rest.startswith("#"):  # `--- value`: the document starts on this line\n                    self.raw[index] = rest\n                    start = index\n            elif line == "..." or line.startswith("... "):\n                bounds.append((start, index))\n                start = index + 1\n        bounds.append((start, len(self.raw)))\n        out = []\n        for first, end in bounds:\n            lines = self._lines(first, end)\n            content = [line for line in lines if line.indent >= 0]\n            if not content:\n                continue\n            self.lines, self.pos = lines, 0\n            value = self.node(content[0].indent)\n            self._skip_blank()\n            if self.pos < len(self.lines):\n                line = self.lines[self.pos]\n                raise YAMLSubsetError("unexpected content (wrong indentation?)", line.number, line.indent + 1)\n            out.append(value)\n        return out\n\n    def _lines(self, first, end):\n        lines = []\n        for index in range(first, end):\n            text = self.raw[index]\n            stripped = text.lstrip(" ")\n            if not stripped.strip(_BLANK) or stripped.startswith("#"):\n                lines.append(_Line(index + 1, -1, text))  # blank or comment: kept for block scalars\n                continue\n            lines.append(_Line(index + 1, len(text) - len(stripped), text))\n        return lines\n\n    # ---- block structure ----------------------------------------------------------------------------\n\n    def _skip_blank(self):\n        while self.pos < len(self.lines) and self.lines[self.pos].indent < 0:\n            self.pos += 1\n\n    def node(self, indent):\n        self._skip_blank()\n        line = self.lines[self.pos]\n        content = line.text[line.indent:]\n        if content.startswith("\\t"):\n            raise YAMLSubsetError("tabs cannot indent YAML", line.number, line.indent + 1)\n        if content == "-" or content.startswith("- ") or content.startswith("-\\t"):\n            return self.sequence(line.indent)\n        if self._mapping_key(content, line) is not None:\n            return self.mapping(line.indent)\n        # a scalar or flow collection standing alone, possibly over several lines\n        self.pos += 1\n        return self.inline_value(content, line, line.indent, line.indent)\n\n    def sequence(self, indent):\n        items = []\n        while self.pos < len(self.lines):\n            self._skip_blank()\n            if self.pos >= len(self.lines):\n                break\n            line = self.lines[self.pos]\n            content = line.text[line.indent:]\n            if line.indent < indent:\n                break\n            if line.indent > indent:\n                raise YAMLSubsetError("unexpected indentation in a sequence", line.number, line.indent + 1)\n            if not (content == "-" or content.startswith("- ") or content.startswith("-\\t")):\n                break\n            rest = content[1:].lstrip(" \\t")\n            if not rest or rest.startswith("#"):\n                self.pos += 1\n                items.append(self._nested(indent))\n                continue\n            inner = indent + (len(content) - len(rest))\n            if rest.startswith("- ") or rest == "-" or self._mapping_key(rest, line) is not None:\n                # a compact nested collection: read it as if it started on its own line at `inner`\n                self.lines[self.pos] = _Line(line.number, inner, " " * inner + rest)\n                items.append(self.node(inner))\n                continue\n            self.pos += 1\n            items.append(self.inline_value(rest, line, inner, indent))\n        return items\n\n    def mapping(self, indent):\n        result = {}\n        while self.pos < len(self.lines):\n            self._skip_blank()\n            if self.pos >= len(self.lines):\n                break\n            line = self.lines[self.pos]\n            if line.indent < indent:\n                break\n            if line.indent > indent:\n                raise YAMLSubsetError("unexpected indentation in a mapping", line.number, line.indent + 1)\n            content = line.text[line.indent:]\n            if content.startswith("\\t"):\n                raise YAMLSubsetError("tabs cannot indent YAML", line.number, line.indent + 1)\n            split = self._mapping_key(content, line)\n            if split is None:\n                if content.startswith("- ") or content == "-":\n                    break\n                raise YAMLSubsetError("expected `key: value`", line.number, line.indent + 1)\n            key, rest, rest_column = split\n            if key in result:\n                raise YAMLSubsetError(f"duplicate key {key!r}", line.number, line.indent + 1)\n            self.pos += 1\n            if not rest or rest.startswith("#"):\n                result[key] = self._nested(indent, allow_sequence_at_same_indent=True)\n            else:\n                result[key] = self.inline_value(rest, line, rest_column, indent)\n        return result\n\n    def _nested(self, indent, allow_sequence_at_same_indent=False):\n        """The value on the lines below a `key:` or `-` with nothing after it."""\n        self._skip_blank()\n        if self.pos >= len(self.lines):\n            return None\n        line = self.lines[self.pos]\n        content = line.text[line.indent:]\n        if line.indent > indent:\n            return self.node(line.indent)\n        if allow_sequence_at_same_indent and line.indent == indent and (content.startswith("- ") or content == "-"):\n            return self.sequence(indent)\n        return None\n\n    def _mapping_key(self, content, line):\n        """(key, rest, column of rest) when `content` starts with `key:`; else None."""\n        if content.startswith("? "):\n            raise YAMLSubsetError("complex mapping keys are not supported", line.number, line.indent + 1)\n        if content[:1] in ("&", "*"):\n            raise YAMLSubsetError("anchors and aliases are not supported", line.number, line.indent + 1)\n        if content[:1] == "!":\n            tag, _, rest = content.partition(" ")\n            if rest.strip(_BLANK) and self._mapping_key(rest.strip(_BLANK), line) is not None:\n                raise YAMLSubsetError("tags on mapping keys are not supported", line.number, line.indent + 1)\n            return None\n        if content[:1] in (\'"\', "\'"):\n            try:\n                end, key = self._quoted(content, 0, line)\n            except _Unterminated:\n                return None\n            after = content[end:].lstrip(" ")\n            if not after.startswith(":") or (len(after) > 1 and after[1] not in " \\t"):\n                return None\n            rest = after[1:].lstrip(" \\t")\n            return key, rest, line.indent + len(content) - len(rest)\n        if content[:1] in ("[", "{", "-", "|", ">", "!", "%", "@", "`", "#"):\n            if not (content[:1] == "-" and len(content) > 1 and content[1] not in " \\t"):\n                return None\n        match = re.match(r"((?:[^:# \\t]|:(?=[^ \\t])|[ \\t]+(?=[^# \\t:]|:[^ \\t])|(?<=[^ \\t])#)*?)[ \\t]*:(?:[ \\t]+|$)", content)\n        if match is None:\n            return None\n        key_text = match.group(1)\n        if not key_text:\n            return None\n        rest = content[match.end():]\n        key = resolve_plain(key_text)\n        return key, rest.strip(" \\t") if not rest.lstrip(" \\t").startswith(("|", ">")) else rest.lstrip(" \\t"), \\\n            line.indent + match.end()\n\n    # ---- values on one line (and their continuations) ---------------------------------------------\n\n    def inline_value(self, text, line, column, parent_indent):\n        text = text.rstrip(" \\t")\n        head = text[:1]\n        if head in ("&", "*"):\n            raise YAMLSubsetError("anchors and aliases are not supported", line.number, column + 1)\n        if head == "!":\n            tag, _, rest = text.partition(" ")\n            if tag not in _STD_TAGS:\n                raise YAMLSubsetError(f"the tag {tag} is not supported", line.number, column + 1)\n            value = self.inline_value(rest.lstrip(" "), line, column + len(tag) + 1, parent_indent) if rest.strip(_BLANK) \\\n                else self._nested(parent_indent)\n            if tag in ("!!map", "!!seq"):\n                return value\n            # a scalar tag: the scalar\'s text (quoted or plain) read as the tag says\n            scalar = value if isinstance(value, str) else _strip_comment(rest.strip(_BLANK))\n            return _tagged(tag, scalar, line.number, column + 1)\n        if head in ("|", ">"):\n            return self.block_scalar(text, line, column, parent_indent)\n        if head in ("[", "{"):\n            source, start = self._gather_flow(text, line, column)\n            value, end = self.flow(source, start, line)\n            trailing = source[end:].strip(_BLANK)\n            if trailing and not trailing.startswith("#"):\n                raise YAMLSubsetError("unexpected text after a flow collection", line.number, column + end + 1)\n            return value\n        if head in (\'"\', "\'"):\n            source = text\n            while True:\n                try:\n                    end, value = self._quoted(source, 0, line)\n                    break\n                except _Unterminated:\n                    if self.pos >= len(self.lines):\n                        raise YAMLSubsetError("unterminated quoted string", line.number, column + 1) from None\n                    following = self.lines[self.pos]\n                    self.pos += 1\n                    source += "\\n" + following.text\n            trailing = source[end:].strip(_BLANK)\n            if trailing and not trailing.startswith("#"):\n                raise YAMLSubsetError("unexpected text after a quoted string", line.number, column + end + 1)\n            return value\n        value = _strip_comment(text)\n        # plain multi-line scalars: continuation lines indented deeper than the parent\n        parts = [value]\n        while self.pos < len(self.lines):\n            following = self.lines[self.pos]\n            if following.indent < 0:\n                blank_run = 0\n                probe = self.pos\n                while probe < len(self.lines) and self.lines[probe].indent < 0:\n                    if self.lines[probe].text.strip(_BLANK).startswith("#"):  # a comment ends a plain scalar\n                        return resolve_plain(value) if len(parts) == 1 else _fold_plain(parts)\n                    blank_run += 1\n                    probe += 1\n                if probe < len(self.lines) and self.lines[probe].indent > parent_indent:\n                    parts.extend([""] * blank_run)\n                    self.pos = probe\n                    continue\n                break\n            if following.indent <= parent_indent:\n                break\n            content = following.text[following.indent:]\n            if self._mapping_key(content, following) is not None or content.startswith("- "):\n                raise YAMLSubsetError("a mapping or sequence cannot follow a scalar here", following.number,\n                                      following.indent + 1)\n            parts.append(_strip_comment(content.rstrip(_BLANK)))\n            self.pos += 1\n        return resolve_plain(value) if len(parts) == 1 else _fold_plain(parts)\n\n    def block_scalar(self, header, line, column, parent_indent):\n        match = re.fullmatch(r"([|>])([1-9]?)([-+]?)([1-9]?)([ \\t]+#.*)?", header)\n        if match is None:\n            raise YAMLSubsetError(f"bad block scalar header {header!r}", line.number, column + 1)\n        style, chomp = match.group(1), match.group(3)\n        explicit = match.group(2) or match.group(4)\n        body = []\n        indent = parent_indent + int(explicit) if explicit else None\n        while self.pos < len(self.lines):\n            following = self.lines[self.pos]\n            raw = following.text\n            if not raw.strip(_BLANK):\n                body.append("")\n                self.pos += 1\n                continue\n            leading = len(raw) - len(raw.lstrip(" "))\n            if indent is None:\n                if leading <= parent_indent:\n                    break\n                indent = leading\n            if leading < indent:\n                break\n            body.append(raw[indent:])\n            self.pos += 1\n        # trailing blank lines belong to chomping\n        content = body\n        trailing = 0\n        while content and content[-1] == "":\n            content = content[:-1]\n            trailing += 1\n        if style == "|":\n            text = "\\n".join(content)\n        else:\n            text = _fold_block(content)\n        if not content:\n            return "" if chomp != "+" else "\\n" * trailing\n        if chomp == "-":\n            return text\n        if chomp == "+":\n            return text + "\\n" + "\\n" * trailing\n        return text + "\\n"\n\n    # ---- flow collections -------------------------------------------------------------------------\n\n    def _gather_flow(self, text, line, column):\n        """The flow collection\'s text, joined over lines until its brackets balance."""\n        source = text\n        while _flow_depth(source) > 0:\n            if self.pos >= len(self.lines):\n                raise YAMLSubsetError("unterminated flow collection", line.number, column + 1)\n            following = self.lines[self.pos]\n            self.pos += 1\n            source += "\\n" + following.text  # quoted scalars fold this break; elsewhere it is space\n        return source, 0\n\n    def flow(self, source, index, line):\n        opener = source[index]\n        closer = "]" if opener == "[" else "}"\n        index += 1\n        items = [] if opener == "[" else {}\n        while True:\n            index = _skip_space(source, index)\n            if index >= len(source):\n                raise YAMLSubsetError("unterminated flow collection", line.number, index + 1)\n            if source[index] == closer:\n                return items, index + 1\n            key, index = self.flow_scalar(source, index, line, stops=",:" + closer if opener == "{" else ",]:")\n            index = _skip_space(source, index)\n            if index < len(source) and source[index] == ":":\n                index = _skip_space(source, index + 1)\n                if index < len(source) and source[index] in ",}]":\n                    value = None\n                else:\n                    value, index = self.flow_scalar(source, index, line, stops="," + closer)\n                if opener == "[":\n                    items.append({key: value})\n                else:\n                    items[key] = value\n            elif opener == "{":\n                items[key] = None\n            else:\n                items.append(key)\n            index = _skip_space(source, index)\n            if index < len(source) and source[index] == ",":\n                index += 1\n            elif index < len(source) and source[index] == closer:\n                continue\n            else:\n                raise YAMLSubsetError(f"expected `,` or `{closer}` in a flow collection", line.number, index + 1)\n\n    def flow_scalar(self, source, index, line, stops):\n        head = source[index]\n        if head in ("[", "{"):\n            return self.flow(source, index, line)\n        if head in (\'"\', "\'"):\n            try:\n                end, value = self._quoted(source, index, line)\n                return value, end\n            except _Unterminated:\n                raise YAMLSubsetError("unterminated quoted string", line.number, index + 1) from None\n        if head == "?" and source[index + 1: index + 2] in (" ", "\\n", ""):\n            raise YAMLSubsetError("complex mapping keys are not supported", line.number, index + 1)\n        if head in ("&", "*", "!"):\n            raise YAMLSubsetError("anchors, aliases and tags are not supported in flow collections",\n                                  line.number, index + 1)\n        end = index\n        while end < len(source):\n            char = source[end]\n            if char in ",[]{}" and char in stops + "[]{}":\n                break\n            if char == ":" and (end + 1 >= len(source) or source[end + 1] in " ,]}"):\n                break\n            if char == "#" and source[end - 1] in " \\t\\n":\n                break\n            end += 1\n        return resolve_plain(re.sub(r"[ \\t]*\\n[ \\t]*", " ", source[index:end].strip(_BLANK))), end\n\n    def _quoted(self, source, index, line):\n        """(end, value) of the quoted scalar at `index`; raises _Unterminated at the end of `source`."""\n        quote = source[index]\n        lines = [[]]  # per source line: (character, escaped) pairs\n        joins = []  # joins[i]: line i ends in an escaped line break\n        position = index + 1\n        while True:\n            if position >= len(source):\n                raise _Unterminated()\n            char = source[position]\n            if quote == "\'" and char == "\'":\n                if source[position + 1: position + 2] == "\'":\n                    lines[-1].append(("\'", True))\n                    position += 2\n                    continue\n                return position + 1, _fold_quoted(lines, joins)\n            if quote == \'"\' and char == \'"\':\n                return position + 1, _fold_quoted(lines, joins)\n            if char == "\\n":\n                joins.append(False)\n                lines.append([])\n                position += 1\n                continue\n            if quote == \'"\' and char == "\\\\":\n                if position + 1 >= len(source):\n                    raise _Unterminated()\n                code = source[position + 1]\n                if code == "\\n":\n                    joins.append(True)\n                    lines.append([])\n                    position += 2\n                    continue\n                if code in _ESCAPES:\n                    lines[-1].append((_ESCAPES[code], True))\n                    position += 2\n                    continue\n                lengths = {"x": 2, "u": 4, "U": 8}\n                if code in lengths:\n                    digits = source[position + 2: position + 2 + lengths[code]]\n                    if len(digits) == lengths[code] and all(c in "0123456789abcdefABCDEF" for c in digits):\n                        lines[-1].append((chr(int(digits, 16)), True))\n                        position += 2 + lengths[code]\n                        continue\n                raise YAMLSubsetError(f"unknown escape \\\\{code}", line.number, position + 1)\n            lines[-1].append((char, False))\n            position += 1\n\n\nclass _Unterminated(Exception):\n    pass\n\n\ndef _fold_quoted(lines, joins):\n    """Line folding inside quoted scalars: a break becomes a space, n blank lines n breaks, an\n    escaped break joins the lines; white space around breaks goes, escaped white space stays."""\n    texts = []\n    for number, chars in enumerate(lines):\n        first, last = 0, len(chars)\n        if number > 0:\n            while first < last and chars[first][0] in " \\t" and not chars[first][1]:\n                first += 1\n        if number < len(lines) - 1 and not joins[number]:\n            while last > first and chars[last - 1][0] in " \\t" and not chars[last - 1][1]:\n                last -= 1\n        texts.append("".join(c for c, _ in chars[first:last]))\n    out, breaks = texts[0], 0\n    for number in range(1, len(texts)):\n        piece = texts[number]\n        if joins[number - 1]:\n            out += piece\n        elif not piece and number < len(texts) - 1:\n            breaks += 1\n            continue\n        else:\n            out += ("\\n" * breaks if breaks else " ") + piece\n        breaks = 0\n    return out\n\n\ndef _strip_comment(text):\n    match = re.search(r"[ \\t]#", text)\n    return (text[: match.start()] if match else text).rstrip(" \\t")\n\n\ndef _fold_plain(parts):\n    out = parts[0]\n    empties = 0\n    for piece in parts[1:]:\n        if not piece:\n            empties += 1\n            continue\n        out += ("\\n" * empties if empties else " ") + piece.strip(_BLANK)\n        empties = 0\n    return out\n\n\ndef _fold_block(lines):\n    """Folded (`>`) scalars: a single break between two ordinary lines becomes a space, n blank\n    lines give n breaks; lines indented further than the block (and breaks around them) are kept."""\n    out, previous_normal, breaks, started = "", False, 0, False\n    for line in lines:\n        if line == "":\n            breaks += 1\n            continue\n        normal = not line.startswith((" ", "\\t"))\n        if not started:\n            separator = "\\n" * breaks\n        elif previous_normal and normal:\n            separator = "\\n" * breaks if breaks else " "\n        else:\n            separator = "\\n" * (breaks + 1)\n        out += separator + line\n        started, previous_normal, breaks = True, normal, 0\n    return out\n\n\ndef _flow_depth(text):\n    depth, quote, index = 0, None, 0\n    while index < len(text):\n        char = text[index]\n        if quote:\n            if char == "\\\\" and quote == \'"\':\n                index += 1\n            elif char == quote:\n                quote = None\n        elif char in "\\"\'" and (index == 0 or text[index - 1] in " ,[{:"):\n            quote = char\n        elif char in "[{":\n            depth += 1\n        elif char in "]}":\n            depth -= 1\n        elif char == "#" and (index == 0 or text[index - 1] in " \\t"):\n            break\n        index += 1\n    return depth\n\n\ndef _skip_space(source, index):\n    while index < len(source) and source[index] in " \\t\\n":\n        index += 1\n    return index\n\n\ndef load_all(text):\n    """Every document of `text` (a str), as dicts, lists and scalars; empty documents are skipped."""\n    if text.startswith("\\ufeff"):\n        text = text[1:]\n    return [doc for doc in _Reader(text).documents() if doc is not None]\n'
SPEC = json.loads('{"aliases":[],"ciso":{"compliant":[{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"nginx-compliant","namespace":"ciso-target"},"spec":{"replicas":1,"selector":{"matchLabels":{"app":"nginx-compliant"}},"template":{"metadata":{"labels":{"app":"nginx-compliant"}},"spec":{"containers":[{"image":"nginx:1.14.2","name":"nginx-compliant","ports":[{"containerPort":80}]}]}}}}],"control":"5.2.5","gaps":[{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"nginx-deployment","namespace":"ciso-target"},"spec":{"replicas":1,"selector":{"matchLabels":{"app":"nginx"}},"template":{"metadata":{"labels":{"app":"nginx"}},"spec":{"containers":[{"image":"nginx:1.14.2","name":"nginx","ports":[{"containerPort":80}]}],"hostIPC":false,"hostNetwork":true,"hostPID":false}}}}],"task":"kyverno_policy"},"created":[],"deleted":[],"domain":"ciso","finops_targets":[],"graph":{"edges":[]},"groups":[],"mitigation":null,"optimal":[],"propagations":[],"proximity_threshold":0.9,"reverts":[],"scenario":"cis-5-2-5-host-network-kyverno","services":[],"version":1,"workloads":[{"kind":"Deployment","min_replicas":1,"name":"nginx-deployment","namespace":"ciso-target"},{"kind":"Deployment","min_replicas":1,"name":"nginx-compliant","namespace":"ciso-target"}]}')

if __name__ == "__main__":
    sys.exit(main(SPEC))
