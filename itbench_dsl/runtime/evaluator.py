"""The scoring runtime of a bundle's evaluator.py (standard library only).

This file (itbench_dsl/runtime/evaluator.py) is copied into every bundle, with the text of the state
model (runtime/state.py) in place of its `from .state import (...)`; the compiler appends the sources
of the runtime modules a task needs (the Kyverno matcher, the YAML reader) as string literals, one
`SPEC = json.loads(...)` line (the scenario's ground truth as data) and a `__main__` guard. Nothing
here reads the scenario's text as code: every scenario string arrives through SPEC.

    python evaluator.py [--task TASK] [--agent-output A.json|DIR] [--injected-at TIME] [--state S.json]
                        [--artifact policy.yaml|policy.rego] [--opa PATH] [--opa-result recorded.json] [--gap-only]
    python evaluator.py --requirements          what a state must hold, and the commands that capture it
    python evaluator.py --capture S.json [--prometheus URL] [--kubectl PATH]   capture it with kubectl
    python evaluator.py --capture S.json --before B.json                      CISO: B.json captured before the agent

prints one JSON verdict {scenario, task, passed, score, metrics, checks[{id, passed, detail}]}
(with `tasks`, one verdict per task, when it grades several); exit 0 when it ran (pass or fail),
2 when an input is unusable (the reason on stderr). docs/evaluator.md defines every verdict.

A bundle poses tasks (SPEC["tasks"]): SRE and FinOps `diagnose` (the agent's answer) and
`mitigate` (the cluster's state), CISO `policy` (the agent's artefact, or the PolicyReports of the
state); a scenario's `tasks` statement poses others (`detect`, `localize`, `analyze`), each graded on
its own answer file (`--agent-output` then takes the agent's work folder). The evaluator grades the task it is told (`--task`) or every task the bundle poses; an
input a task needs that is missing, of the wrong shape, or a state that lacks what the task reads,
is unusable: it is never graded as another task, and never passes.
"""

import argparse
import functools
import json
import os
import re
import shutil
import stat
import subprocess
import sys
import types

# the model of a captured state (state.py): a bundle holds that file's text here, in place of this import
# (backends/evaluator_file.py)
from .state import (  # noqa: I001 - replaced by state.py's text in a bundle
    api_group, as_ref, as_stored, as_template, at, binary_data, compare, compared, config_sources, content_hidden,
    container_request, CONTAINER_LISTS, containers_named, cronjob_idle, decoded_secret, DEFAULT_SHAPES, defaulted, duration,
    earlier_pods, embedded_module, empty, EMPTY_STATE, ENV_NAME, gone, identity_key, image_defaults, image_digest,
    image_filesystem, image_ref,
    InputError, InvalidValue,
    job_complete, json_int, kept_names, kind_groups, kind_plural, labels_match, lookup, lookup_bases, MISSING,
    nested, number, owns, owns_pod, parse_text, POD_BEHAVIOUR, pod_bounded, pod_level, pod_ready,
    pod_references, pod_requests, pod_reserves, pod_spec, POD_TEMPLATE_KINDS, pod_unstable, policy_types,
    projected_key, reached_from, ref_text, replaced, rfc3339, same, selected_pods, selector_matches,
    same_image, selects_same, settled_problem, show_path, shown, State, tag_digests, templated_pod, terminating, typed_same,
    unlisted,
    cron_longest_wait, _instant, _repository,
    walk, with_defaults, workload_pod_refusal, workload_pods, workload_ready,
)

RUNTIME_VERSION = 2
MAX_INPUT_BYTES = 256 * 1024 * 1024  # of any input file
MAX_ENTITIES = 100_000  # of an answer's entities or resources
MAX_EDGES = 10_000  # of an answer's propagations
CHAIN_PASS = 0.5  # a diagnosis passes with its chain's recall at least this and its precision above it


# ---- names in an answer --------------------------------------------------------------------------------

# kubectl's short names -> (kind, API group): those the API server's discovery gives the built-in kinds
# (`kubectl api-resources`, Kubernetes 1.30+) and those the CRDs of Istio, Gateway API, Chaos Mesh and Kyverno
# declare (`spec.names.shortNames`). A kind's own name and its resource name (singular, plural) are read from
# the kind (kind_spellings), so only these are a table.
SHORT_NAMES = {
    **{short: (kind, "") for short, kind in (
        ("cs", "ComponentStatus"), ("cm", "ConfigMap"), ("ep", "Endpoints"), ("ev", "Event"),
        ("limits", "LimitRange"), ("ns", "Namespace"), ("no", "Node"), ("pvc", "PersistentVolumeClaim"),
        ("pv", "PersistentVolume"), ("po", "Pod"), ("rc", "ReplicationController"), ("quota", "ResourceQuota"),
        ("sa", "ServiceAccount"), ("svc", "Service"))},
    **{short: (kind, "apps") for short, kind in (
        ("ds", "DaemonSet"), ("deploy", "Deployment"), ("rs", "ReplicaSet"), ("sts", "StatefulSet"))},
    "crd": ("CustomResourceDefinition", "apiextensions.k8s.io"),
    "crds": ("CustomResourceDefinition", "apiextensions.k8s.io"),
    "hpa": ("HorizontalPodAutoscaler", "autoscaling"),
    "cj": ("CronJob", "batch"),
    "csr": ("CertificateSigningRequest", "certificates.k8s.io"),
    "ing": ("Ingress", "networking.k8s.io"), "netpol": ("NetworkPolicy", "networking.k8s.io"),
    "pdb": ("PodDisruptionBudget", "policy"),
    "pc": ("PriorityClass", "scheduling.k8s.io"),
    "sc": ("StorageClass", "storage.k8s.io"),
    # Istio
    **{short: (kind, "networking.istio.io") for short, kind in (
        ("gw", "Gateway"), ("vs", "VirtualService"), ("dr", "DestinationRule"), ("se", "ServiceEntry"),
        ("we", "WorkloadEntry"), ("wg", "WorkloadGroup"))},
    **{short: (kind, "security.istio.io") for short, kind in (
        ("pa", "PeerAuthentication"), ("ra", "RequestAuthentication"), ("ap", "AuthorizationPolicy"))},
    # Gateway API
    "gtw": ("Gateway", "gateway.networking.k8s.io"), "gc": ("GatewayClass", "gateway.networking.k8s.io"),
    "refgrant": ("ReferenceGrant", "gateway.networking.k8s.io"),
    # Chaos Mesh, Kyverno
    "wf": ("Workflow", "chaos-mesh.org"),
    "cpol": ("ClusterPolicy", "kyverno.io"), "pol": ("Policy", "kyverno.io"),
    "cpolr": ("ClusterPolicyReport", "wgpolicyk8s.io"), "polr": ("PolicyReport", "wgpolicyk8s.io"),
}


_API_VERSION = re.compile(r"v[0-9]+(?:(?:alpha|beta)[0-9]+)?")


_SPELLINGS = {}


def kind_spellings(kind):
    """The lower-case names kubectl resolves to `kind`: the kind itself and its resource name, plural as
    the API server's rule makes it (`networkpolicies`, `ingresses`, `jvmchaos`) or as custom resources
    declare it (`gateways`). Computed once per kind (a state's every object asks)."""
    spellings = _SPELLINGS.get(kind)
    if spellings is None:
        lowered = kind.lower()
        spellings = (lowered, kind_plural(kind)) + ((lowered + "s",) if lowered.endswith("y") else ())
        _SPELLINGS[kind] = spellings  # gateways: a custom resource's declared plural
    return spellings


def names_of(spec, state):
    """The `Names` of a state for a spec, made once per (state, spec): the diagnosis and the safeguards of
    every case graded on one indexed state read the same names (its caches are memos, never results)."""
    cached = state.names_cache
    known = cached.get(id(spec))
    if known is None or known[0] is not spec:
        known = cached[id(spec)] = (spec, Names(spec, state))
    return known[1]


def parse_name(text):
    """(namespace, kind, name) from `ns/Kind/name`, `/Kind/name` or `Kind/name`; kind None for a bare name."""
    parts = str(text).strip().split("/")
    if len(parts) >= 3:
        return parts[0] or None, parts[1], "/".join(parts[2:])
    if len(parts) == 2:
        return None, parts[0], parts[1]
    return None, None, parts[0]


_GENERATED = re.compile(r"[bcdfghjklmnpqrstvwxz2456789]{5}")  # apimachinery's names.SimpleNameGenerator suffix
_POD_HASH = re.compile(r"[a-z0-9]{6,10}")
_POD_SUFFIX = re.compile(r"[a-z0-9]{5}")


class Names:
    """What the names of an answer refer to: objects of the state, or (for what the state does not hold,
    or with no state) objects of the scenario. A name that refers to no object refers to nothing."""

    def __init__(self, spec, state):
        self.state = state
        self.by_name = {}
        self.kinds = {}
        self.groups = kind_groups(spec)
        self.spelled = set()  # the kinds of the objects added so far (_add)
        for kind in self.groups:
            for spelling in kind_spellings(kind):
                self.kinds.setdefault(spelling, kind)
        for kind, namespace, name in spec["objects"]:
            self._add((kind, namespace or None, name))
        for key in state.objects:
            self._add(key)
        for key in state.incident:  # objects the agent saw, since replaced (a crash-looping pod): names refer to them
            if key not in state.objects:
                self._add(key)
        self.workloads = {}
        for w in spec["workloads"]:
            self.workloads.setdefault(w["name"], []).append(w)
        self.static = [w for w in spec["workloads"] if w["kind"] == "Pod" and not w.get("bare")]
        self.cache = {}
        self.owners = {}
        self.spawners = {}  # (experiment kind, namespace) -> the Schedules that spawn such experiments there

    def _add(self, key):
        self.by_name.setdefault(key[2], []).append(key)
        kind = key[0]
        if kind not in self.spelled:  # each kind's spellings once (the first kind to claim one keeps it)
            self.spelled.add(kind)
            if "." not in kind:  # `Kind.group`: an object of another group than its kind's (State)
                for spelling in kind_spellings(kind):
                    self.kinds.setdefault(spelling, kind)

    def kind_of(self, text):
        """The kind a name's kind part means, read as kubectl reads a resource: a short name (`deploy`),
        the kind or its resource name (singular or plural) in any case, optionally qualified by its API
        group (`networkpolicies.networking.k8s.io`, `deployments.v1.apps`). A group that is not the
        kind's names another resource: the text is kept, and names no object."""
        text = str(text).strip()
        base, _, group = text.lower().partition(".")
        kind = self.kinds.get(base)
        if kind is None and base in SHORT_NAMES:
            kind, declared = SHORT_NAMES[base]
            if self.groups.get(kind, declared) != declared:  # `gtw` is Gateway API's Gateway, not Istio's
                return text
        if kind is None:
            return text
        if group:
            version, _, rest = group.partition(".")
            if rest and _API_VERSION.fullmatch(version):
                group = rest  # resource.version.group
            if self.groups.get(kind, group) != group:
                return text
        return kind

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
        # a namespace given for a cluster-scoped object is ignored, as kubectl ignores -n for it
        found = {k for k in self.by_name.get(name, ()) if (kind is None or k[0] == kind)
                 and (namespace is None or k[1] == namespace or k[1] is None)}
        if not found and kind in (None, "Pod"):
            found = self._offline_pod(namespace, name)
        if kind in (None, "ReplicaSet") and (not found or any(k[0] == "ReplicaSet" for k in found)):
            # a Deployment's ReplicaSet carries its pod template: it names the Deployment (the state may not
            # capture ReplicaSets; its pods' owner references show the ones that exist)
            owned = self._replicaset_owner(namespace, name)
            if owned is not None:
                found = {k for k in found if k[0] != "ReplicaSet"} | {owned}
        if not found and self.spawners:
            found = self._offline_spawned(namespace, kind, name) or self._scheduled_as(namespace, kind, name)
        return found

    def _replicaset_owner(self, namespace, name):
        """The Deployment key a ReplicaSet `name` belongs to, as the ReplicaSet's owner references say, else
        those of a pod it owns (final state or incident); None when nothing shows such a ReplicaSet."""
        for source in (self.state.objects, self.state.incident):
            for key, obj in source.items():
                if key[0] not in ("ReplicaSet", "Pod") or (namespace is not None and key[1] != namespace):
                    continue
                meta = obj.get("metadata") if isinstance(obj, dict) else None
                refs = (meta.get("ownerReferences") or []) if isinstance(meta, dict) else []
                if key[0] == "ReplicaSet":
                    if key[2] != name:
                        continue
                    owner = next((r.get("name") for r in refs if isinstance(r, dict) and r.get("kind") == "Deployment"), None)
                elif any(isinstance(r, dict) and r.get("kind") == "ReplicaSet" and r.get("name") == name for r in refs):
                    controller = pod_controller(obj)
                    owner = controller[1] if controller and controller[0] == "Deployment" else None
                else:
                    continue
                deployment = ("Deployment", key[1], owner)
                if owner and deployment in self.by_name.get(owner, ()):
                    return deployment
        return None

    def _scheduled_as(self, namespace, kind, name):
        """A Schedule named by the kind of the experiments it spawns (`NetworkChaos/<schedule>`): a Schedule of
        NetworkChaos is the NetworkChaos fault, whether or not an experiment of that name exists."""
        return {(k, ns, name) for (k, ns), schedules in self.spawners.items()
                if (kind is None or k == kind) and namespace in (None, ns) and name in schedules}

    def add_spawner(self, kind, namespace, schedule):
        known = self.spawners.setdefault((kind, namespace), [])
        if schedule not in known:
            known.append(schedule)
        for spelling in kind_spellings(kind):  # `networkchaos/...` names the kind a Schedule spawns
            self.kinds.setdefault(spelling, kind)

    def spawner(self, key):
        """The Schedule that spawned an experiment named `<schedule>-<5 random characters>` (Kubernetes'
        name generator, which Chaos Mesh's schedule controller uses), when the state does not say another
        owner; None for any other object."""
        schedules = self.spawners.get((key[0], key[1]), ())
        if not schedules:
            return None
        obj = self.state.objects.get(key) or self.state.incident.get(key)
        meta = obj.get("metadata") if isinstance(obj, dict) else None
        refs = meta.get("ownerReferences") if isinstance(meta, dict) else None
        if isinstance(refs, list) and refs:  # the state says who owns it: a Schedule of the truth, whatever its name
            return next((r["name"] for r in refs if isinstance(r, dict) and r.get("kind") == "Schedule"
                         and r.get("name") in schedules), None)
        for schedule in schedules:
            if key[2].startswith(schedule + "-") and _GENERATED.fullmatch(key[2][len(schedule) + 1:]):
                return schedule
        return None

    def _offline_spawned(self, namespace, kind, name):
        """An experiment a Schedule spawned, named as the controller names them: only where the state did
        not capture that kind there (where it did, an experiment it lacks does not exist)."""
        found = set()
        for (k, ns), schedules in self.spawners.items():
            if (kind is not None and k != kind) or (namespace is not None and ns != namespace) or self.state.has(ns, k):
                continue
            if self.spawner((k, ns, name)) is not None:
                found.add((k, ns, name))
        return found

    def _offline_pod(self, namespace, name):
        """A pod the state does not hold, named as its workload's pods are named: where the state did not
        capture the pods of that namespace; where it did, a pod its controller replaced or deleted since (the
        truth's pod group stands for the workload's pods, not for one live object): a Deployment's pod of a
        ReplicaSet the state shows (its pods' `pod-template-hash`, in the final state or the incident, its
        ReplicaSets); a StatefulSet's pod of an ordinal below its replicas. A name no ReplicaSet the state shows
        makes (nothing shows a workload scaled to zero made it), or an ordinal past the replicas, names nothing."""
        owner = owner_from_name(name, namespace, self.workloads, self.static)
        if owner is None:
            return set()
        key = ("Pod", owner["namespace"], name)
        if not self.state.has(owner["namespace"], "Pod") or self._existed(owner, name):
            return {key}
        return set()

    def _existed(self, owner, name):
        """Whether `name` is a pod name `owner`'s controller gave (docs in _offline_pod)."""
        ns, workload = owner["namespace"], owner["name"]
        if owner["kind"] == "StatefulSet":
            sts = self.state.objects.get(("StatefulSet", ns, workload))
            spec = sts.get("spec") if isinstance(sts, dict) else None
            replicas = spec.get("replicas") if isinstance(spec, dict) else None
            replicas = replicas if isinstance(replicas, int) and not isinstance(replicas, bool) else 1
            ordinal = name.rpartition("-")[2]
            return ordinal.isascii() and ordinal.isdigit() and len(ordinal) <= 6 and int(ordinal) < replicas
        if owner["kind"] != "Deployment":
            return False
        return name.split("-")[-2] in self._template_hashes().get((ns, workload), ())

    def _template_hashes(self):
        """{(namespace, Deployment): the pod-template hashes the state shows for it}: its pods' (final state and
        incident) and its ReplicaSets'. Computed once per state."""
        if getattr(self, "_hashes", None) is None:
            self._hashes = {}
            for source in (self.state.objects, self.state.incident):
                for key, obj in source.items():
                    meta = obj.get("metadata") if isinstance(obj, dict) else None
                    if key[0] not in ("Pod", "ReplicaSet") or not isinstance(meta, dict):
                        continue
                    labels = meta.get("labels") if isinstance(meta.get("labels"), dict) else {}
                    hash_ = labels.get("pod-template-hash")
                    if key[0] == "Pod":
                        owner = self.owner(key)
                        hash_ = hash_ or (key[2].split("-")[-2] if key[2].count("-") >= 2 else None)
                    else:
                        owner = (key[1], key[2].rpartition("-")[0])
                        hash_ = hash_ or key[2].rpartition("-")[2]
                    if owner is not None and isinstance(hash_, str):
                        self._hashes.setdefault(owner, set()).add(hash_)
        return self._hashes

    def owner(self, key):
        """(namespace, workload) a pod belongs to, from its owner references, else from its name."""
        if key in self.owners:
            return self.owners[key]
        found = None
        pod = self.state.objects.get(key) or self.state.incident.get(key)
        controller = pod_controller(pod)
        if controller is not None:
            found = (key[1], controller[1])
        if found is None:
            w = owner_from_name(key[2], key[1], self.workloads, self.static)
            found = (w["namespace"], w["name"]) if w else None
        self.owners[key] = found
        return found


def pod_controller(pod):
    """(kind, name) of the workload a pod's owner references say runs it: a ReplicaSet's Deployment (its name
    without the pod-template hash), a StatefulSet, a DaemonSet, a Job; None for a pod no such owner names."""
    meta = pod.get("metadata") if isinstance(pod, dict) else None
    for ref in (meta.get("ownerReferences") or []) if isinstance(meta, dict) else ():
        if not isinstance(ref, dict) or ref.get("kind") not in ("ReplicaSet", "StatefulSet", "DaemonSet", "Job"):
            continue
        owner = str(ref.get("name", ""))
        if ref["kind"] == "ReplicaSet":
            labels = meta.get("labels") if isinstance(meta.get("labels"), dict) else {}
            hash_ = labels.get("pod-template-hash")
            owner = owner[:-len(hash_) - 1] if hash_ and owner.endswith("-" + str(hash_)) else owner.rpartition("-")[0]
            return ("Deployment", owner)
        return (ref["kind"], owner)
    return None


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
        self.names = names_of(spec, state)
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
        # a Schedule and the experiments it spawns are one fault: (kind, namespace, name) -> the keys it stands for
        self.scheduled = {}
        for schedule in truth.get("schedules") or []:
            ns, name = schedule["namespace"], schedule["name"]
            for kind in schedule["kinds"]:
                self.scheduled[("Schedule", ns, name)] = self.scheduled.get(("Schedule", ns, name), ()) + ((kind, ns, name),)
                self.names.add_spawner(kind, ns, name)
        self._fault_objects(truth.get("faults") or [])

    def _fault_objects(self, faults):
        """The injected faults' objects, as root causes: an object a fault created or changed (a Schedule, an
        Istio policy, a quota) stands for the root causes the fault does, those an object of it belongs to, else
        those of its target's component, else (a scenario's only fault) every root cause; a fault no root cause
        stands for (a second fault the truth leaves out) is a cause of its own, target included, that is right
        to name and not required (`optional`)."""
        self.by_fault, self.optional = {}, set()
        true = set(self.true_classes)
        for index, fault in enumerate(faults):
            target = (fault["target"][0], fault["target"][1] or None, fault["target"][2])
            objects = [(k, ns or None, n) for k, ns, n in fault["objects"]]
            classes = {self.klass[g] for key in [target, *objects] for g in self.groups_of(key)} & true
            if not classes:
                component = self.component(target)
                classes = {self.klass[g["id"]] for g in self.groups.values()
                           if g.get("root_cause") and g["component"] == component}
            if not classes and len(faults) == 1:
                classes = true
            if not classes:
                classes = {f"fault:{index}"}
                self.optional |= classes
                objects.append(target)
            for key in objects:
                self.by_fault.setdefault(key, set()).update(classes)

    def _fault_classes(self, key):
        """The root causes an object stands for as an injected fault's object (a pod, as its workload's)."""
        found = set(self.by_fault.get(key, ()))
        if key[0] == "Pod" and self.by_fault:
            owner = self.names.owner(key)
            if owner is not None:
                for kind in ("Deployment", "StatefulSet", "DaemonSet"):
                    found |= self.by_fault.get((kind, owner[0], owner[1]), set())
        return found

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
        for other in self._spawned(key):
            found += [g for g in self.by_object.get(other, ()) if g not in found]
        if key[0] == "Pod":
            owner = self.names.owner(key)
            if owner is not None:
                found += self.by_owner.get(owner, [])
        elif not found and key[0] in ("Deployment", "StatefulSet"):
            found = list(self.by_owner.get((key[1], key[2]), ()))
        return found

    def _spawned(self, key):
        """The keys a Schedule's objects stand for: the Schedule its experiment (the one the scenario names
        after it) and that experiment its Schedule; an experiment the Schedule spawned (`<schedule>-<5>`,
        owned by it in the state) both."""
        if key in self.scheduled:
            return self.scheduled[key]
        spawner = self.names.spawner(key)
        if spawner is not None:
            return ((key[0], key[1], spawner), ("Schedule", key[1], spawner))
        if ("Schedule", key[1], key[2]) in self.scheduled and key in self.scheduled[("Schedule", key[1], key[2])]:
            return (("Schedule", key[1], key[2]),)
        return ()

    def named(self, text):
        """(the objects a name refers to, the classes of the groups they belong to); a group id (ITBench's
        2025 answers) names its group."""
        if text in self.groups:
            return (("group", text),), {self.klass[text]}
        keys = self.names.resolve(text)
        return keys, {self.klass[g] for key in keys for g in self.groups_of(key)}

    def names_cause(self, keys):
        """The root-cause classes a name is credited with: a name that refers to several objects (a bare
        `frontend` naming both the Deployment and the Service, a kind without a namespace) names a root
        cause only when every object it can name is one; a hedge across objects is never credited."""
        if not keys:
            return set()
        true = set(self.true_classes) | self.optional
        per_key = [({self.klass[g] for g in self._cause_groups(key)}
                    | (self._fault_classes(key) if key[0] != "group" else set())) & true for key in keys]
        if not all(per_key):
            # a bare name of a component (`web`: its Deployment and its Service) names the root cause its
            # workload is: the Service, named with it, carries its alias to it (named alone, it does not)
            credited = set().union(*per_key)
            per_key = [found or ({self.klass[g] for g in self.groups_of(key)} & credited
                                 if key[0] == "Service" and any(k[0] != "Service" and self.component(k) == self.component(key)
                                                                for k in keys) else set())
                       for key, found in zip(keys, per_key)]
        if not all(per_key):
            return set()
        return set().union(*per_key)

    def _cause_groups(self, key):
        """The groups whose root-cause credit an object carries: those it belongs to, except that a Service
        carries a root cause only where a root-cause group names the Service itself. An alias joins a Service to
        its component's pods for the chain, but an unchanged Service that selects the root cause's pods (or
        another with the same selector) is not the object that broke."""
        ids = [key[1]] if key[0] == "group" else self.groups_of(key)
        if key[0] == "Service" or (key[0] == "group" and self.groups[key[1]]["kind"] == "Service"):
            return [g for g in ids if self.groups[g].get("root_cause")]
        return ids

    def component(self, key):
        if key[0] == "group":
            return self.groups[key[1]]["component"]
        spawner = self.names.spawner(key)
        if spawner is not None:
            key = (key[0], key[1], spawner)
        if key[0] in ("Deployment", "StatefulSet"):
            return key[2]
        if key[0] == "Pod":
            owner = self.names.owner(key)
            return owner[1] if owner else None
        if key[0] == "Service":
            return self.services.get((key[1], key[2]))
        return f"{key[0]}:{key[2]}"

    def credit(self, keys):
        """A wrong prediction's proximity: 1/(2+hops) from its component to the nearest root cause, so a
        wrong object in the root cause's own component earns 1/2, never the 1 of the right object; a name
        of several objects earns the least of theirs (0 when one is off the graph)."""
        worst = None
        for key in keys:
            hops = self._hops.get(self.component(key))
            value = 1.0 / (2 + hops) if hops is not None else 0.0
            worst = value if worst is None else min(worst, value)
        return worst or 0.0

    def evaluate(self, output, checks, metrics):
        predictions, seen = [], set()
        for text in root_cause_entities(output):
            keys, classes = self.named(text)
            identity = keys or ("unresolved", text.strip().lower())
            if identity in seen:  # spellings of one object count once
                continue
            seen.add(identity)
            predictions.append((text, keys, classes))
        credited = [self.names_cause(keys) for _, keys, _ in predictions]
        correct = [bool(classes) for classes in credited]
        # a fault no root cause stands for is right to name, and never required
        credited = [classes - self.optional for classes in credited]
        found = {c for classes in credited for c in classes}
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
            top = {c for classes in credited[:k] for c in classes}
            metrics[f"root_cause_entity_k@{k}"] = round(len(top) / len(self.true_classes), 6) \
                if self.true_classes else (1.0 if not predictions else 0.0)
        credits = [1.0 if ok else self.credit(keys) for (_, keys, _), ok in zip(predictions, correct)]
        missed = [c for c in self.true_classes if c not in found]
        # a root cause the answer misses counts as a prediction of 0: only the exact answer reaches 1
        credits += [0.0] * len(missed) if predictions else []
        proximity = sum(credits) / len(credits) if credits else (1.0 if not self.true_classes else 0.0)
        metrics["root_cause_proximity"] = round(proximity, 6)
        unresolved = [text for text, keys, _ in predictions if not keys]
        wrong = [text for (text, _, _), ok in zip(predictions, correct) if not ok]
        exact = precision == 1.0 and recall == 1.0
        checks.append({"id": "diagnosis.root_cause", "passed": exact,
                       "detail": f"{len(predictions)} named, {sum(correct)} correct; root causes missed: {len(missed)}"
                                 + (f"; not root causes: {', '.join(wrong[:5])}" if wrong else "")
                                 + (f"; naming no object: {', '.join(unresolved[:5])}" if unresolved else "")})
        graded = self.chain_stats(output)
        root = 1.0 if exact else max(f1, proximity)
        if graded is None:
            return root
        chain_precision, chain_recall, chain, contradicted = graded
        metrics["propagation_chain"] = round(chain, 6)
        metrics["propagation_chain_precision"] = round(chain_precision, 6)
        metrics["propagation_chain_recall"] = round(chain_recall, 6)
        ok = chain_recall >= CHAIN_PASS and chain_precision > CHAIN_PASS
        checks.append({"id": "diagnosis.propagation", "passed": ok,
                       "detail": f"propagation chain F1 {chain:.3f}, precision {chain_precision:.3f}, recall "
                                 f"{chain_recall:.3f} (passes with recall at least {CHAIN_PASS} and precision above "
                                 f"it)" + (f"; {contradicted} edge(s) given in both directions, credited in neither"
                                           if contradicted else "")})
        return (root + chain) / 2

    # propagation chains -------------------------------------------------------------------------------

    def _chain_nodes(self):
        """The chain's nodes: the groups joined by alias and by component (a workload, its pods and its
        Service are one node of the spread, whichever of them the truth's edges name), as
        {class id or "component:NAME": its node}."""
        if getattr(self, "_chain", None) is None:
            parent = {}

            def find(x):
                parent.setdefault(x, x)
                while parent[x] != x:
                    parent[x] = parent[parent[x]]
                    x = parent[x]
                return x

            for g in self.groups.values():
                a, b = find(self.klass[g["id"]]), find("component:" + str(g["component"]))
                if a != b:
                    parent[max(a, b)] = min(a, b)
            self._chain = {x: find(x) for x in list(parent)}
        return self._chain

    def node(self, text):
        chain = self._chain_nodes()
        keys, classes = self.named(text)
        if not keys:
            # a pod the state no longer holds (replaced since the agent saw it), named as its workload names
            # pods: on the chain, which spreads between components, it is a node of its workload's component
            # (a name of a real pod of that workload would be the same node, so a made-up one gains nothing)
            namespace, kind, name = parse_name(text)
            if self.names.kind_of(kind) in ("Pod",) if kind else True:
                w = owner_from_name(name, namespace, self.names.workloads, self.names.static)
                if w is not None:
                    keys = (("Pod", w["namespace"], name),)
        nodes = {chain[c] for c in classes}
        for key in keys:  # an object of a component the truth's groups stand for is that component's node
            found = chain.get("component:" + str(self.component(key)))
            if found is not None:
                nodes.add(found)
        if len(nodes) == 1:
            return nodes.pop()
        # an endpoint that names no group, or several nodes at once, keeps its own identity: it can only lower
        # the score
        return "?" + (json.dumps(keys) if keys else text.strip().lower())

    def chain_stats(self, output):
        """(precision, recall, F1, edges said both ways) of the answer's chain, None when there is none to grade.
        The truth's edges graded are those the spread takes from a root cause (reachable from one along the
        truth's edges); an edge of the truth no root cause reaches is neither required nor counted against an
        answer that gives it."""
        graded = self.graded_chain()
        if graded is None:  # no chain between components: nothing to grade
            return None
        truth, off_path, reached, beyond = graded
        said = set(truth) | off_path  # the truth's every edge: one said backwards is never a bridge
        predicted = []
        for p in output.get("propagations") or []:  # every one (at most MAX_EDGES): a flood lowers the precision
            if not isinstance(p, dict):
                continue
            edge = (self.node(str(p.get("source", ""))), self.node(str(p.get("target", ""))))
            if edge in off_path or (edge[0] in reached and edge[1] in beyond and edge[0] != edge[1]
                                    and (edge[1], edge[0]) not in said and edge not in said):
                continue  # a truth edge no root cause reaches, or a bridge over a gap of the truth: neither way
            predicted.append(edge)
        return edge_stats(truth, predicted)

    def graded_chain(self):
        """(the truth's edges graded, its edges left out, the nodes the root cause reaches, the nodes past a
        gap) of the contracted chain, None when there is none. The edges graded are those the spread takes from
        a root cause (reachable from one along the truth's edges). Where the root cause reaches none of them (the
        truth's chain starts at the fault's target, say, with no edge from the Schedule or the Gateway), the gap
        is contracted: the chain's entries (nodes no truth edge enters) join the root cause. A gap is a place the
        truth does not say how the spread went: an answer's edge from a node the root cause reaches to a node of
        the truth's chain past a gap (an entry joined to it, a node of an edge left out) says it, and is neither
        credited nor counted against the answer."""
        if getattr(self, "_graded", None) is None:
            chain = self._chain_nodes()
            edges = [(chain[self.klass[p["source"]]], chain[self.klass[p["target"]]])
                     for p in self.spec["diagnosis"]["propagations"]]
            truth = list(dict.fromkeys((a, b) for a, b in edges if a != b))
            if not truth:
                self._graded = (None,)
                return None
            roots = {chain[c] for c in self.true_classes}
            reached = reached_from(roots, truth)
            entries = set()
            if not any(a in reached for a, _ in truth):
                ends = {b for _, b in truth}
                entries = {a for a, _ in truth if a not in ends} or {a for a, _ in truth}  # a cycle: all of it
                reached = reached_from(roots | entries, truth)
            on_path = [(a, b) for a, b in truth if a in reached]
            off_path = set(truth) - set(on_path)
            nodes = {n for edge in truth for n in edge}
            beyond = entries | (nodes - reached)
            self._graded = (on_path, off_path, reached, beyond)
        return None if self._graded == (None,) else self._graded

    def chain_f1(self, output):
        graded = self.chain_stats(output)
        return None if graded is None else graded[2]


def contracted_edges(edges):
    """The directed edges of a propagation graph contracted by component: an edge inside one node (a pod
    to its own workload, two aliases of one component) is no edge; an edge given twice is one."""
    return {(a, b) for a, b in edges if a != b}


def edge_stats(truth, predicted):
    """(precision, recall, F1, contradicted) of the answer's directed edges against the truth's, both
    contracted (contracted_edges): an edge counts only when the truth has it in that direction, so a
    reversed or an invented edge never counts and lowers the precision; a truth edge the answer lacks
    lowers the recall. An edge the answer gives in both directions (A -> B and B -> A, where the truth
    does not) says the spread went both ways: a contradiction, credited in neither direction."""
    true_edges, said = contracted_edges(truth), contracted_edges(predicted)
    # a truth edge said also backwards (where the truth is no cycle through the two) is contradicted
    contradicted = {(a, b) for a, b in true_edges & said if (b, a) in said and (b, a) not in true_edges}
    hits = len(true_edges & said) - len(contradicted)
    if not hits:
        return 0.0, 0.0, 0.0, len(contradicted)
    precision, recall = hits / len(said), hits / len(true_edges)
    return precision, recall, 2 * precision * recall / (precision + recall), len(contradicted)


def edge_f1(truth, predicted):
    """F1 of the answer's directed edges against the truth's (edge_stats)."""
    return edge_stats(truth, predicted)[2]


def _true(value):
    """A flag an answer sets: JSON `true`, or the text "true" (any case) that YAML-minded writers give;
    nothing else (1, "yes") is read as true."""
    return value is True or (isinstance(value, str) and value.strip().lower() == "true")


def root_cause_entities(output):
    out = []
    for entity in output.get("entities") or []:
        if not isinstance(entity, dict):
            continue
        flagged = _true(entity.get("root_cause")) or _true(entity.get("contributing_factor"))
        name = entity.get("name", entity.get("id"))
        if flagged and name is not None:
            out.append(str(name))
    return out


# ---- mitigation: observed health -------------------------------------------------------------------------


def predicate_check(pred, state, created=None):
    """Whether a `mitigated when` predicate holds. `created`: {(kind, namespace, name): reference} of the
    objects the faults create; `X absent` on one of them holds once it no longer has the fault's effect
    (`acts`) under any name (`twin_acting`), as its `created` check judges it: a deny policy edited to admit
    all traffic is undone as surely as deleted, one copied under another name is not."""
    created = created or {}
    kind = pred["kind"]
    if kind == "alert":
        return alert_check(pred["alert"], pred.get("namespaces"), pred["firing"], state)
    if kind == "scope":
        return scope_check(pred, state)
    if kind == "probe":
        return probe_check(pred, state)
    if kind == "access":
        return access_check(pred, state)
    ref = pred["target"]
    objects = state.matching(ref)
    if kind == "state":
        if pred["state"] == "absent":
            made = created.get((ref["kind"], ref.get("namespace"), ref["name"]))
            twin = twin_acting(made, state) if made is not None else None
            if twin is not None:
                return False, f"{ref_text(ref)}'s effect is still there: {ref_text(as_ref(obj_ref(twin)))} does what it did"
            inert = [o for o in objects if (ref["kind"], ref.get("namespace"), o["metadata"].get("name")) in created
                     and not terminating(o) and not acts(o, state, made.get("acting") if made else None)]
            if objects and len(inert) == len(objects):
                return True, f"{ref_text(ref)} present but no longer has the fault's effect"
            return not objects, f"{ref_text(ref)} {'present' if objects else 'absent'}"
        if pred["state"] == "exists":
            if not objects and pred.get("readers"):
                # a ConfigMap or Secret the workloads read exists, in meaning, where what they read of it is
                # there: recreated under another name, the readers pointed at it (its data: `restored`)
                unread = [f"{where}: nothing ({why})" for reads in pred["readers"].values()
                          for where, text, _, why in read_texts(reads, state) if text is None]
                return not unread, f"{ref_text(ref)} absent" + (
                    f": {'; '.join(unread[:3])}" if unread else ", what its readers read of it is there under another name")
            return bool(objects), f"{ref_text(ref)} {'present' if objects else 'absent'}"
        if not objects:
            return False, f"{ref_text(ref)} absent"
        if pred["state"] == "complete":
            done = all(job_complete(o, state.fixed_at, state) for o in objects)
            return done, f"{ref_text(ref)} {'complete' if done else 'not complete'}"
        if ref["kind"] == "Ingress":
            problem = next((p for p in (ingress_problem(o, state) for o in objects) if p), None)
            return problem is None, f"{ref_text(ref)} " + (f"does not route: {problem}" if problem else
                                                           "routes every path to ready pods")
        ready = all(workload_ready(o) for o in objects)
        problem = next((p for p in (settled_problem(o, state) for o in objects) if p), None) if ready else None
        if problem:
            return False, f"{ref_text(ref)} not settled: {problem}"
        lapse = readiness_lapse(ref, state) if ready and "*" not in ref["name"] else None
        if lapse:
            return False, f"{ref_text(ref)} did not hold: {lapse}"
        return ready, f"{ref_text(ref)} {'ready' if ready else 'not ready'}"
    if pred.get("readers"):
        # a ConfigMap's or a Secret's key the workloads read: the predicate holds on what each of them reads,
        # from whichever object supplies it now (nothing read: the key absent)
        wrong = []
        for where, text, _, why in read_texts(pred["readers"], state):
            seen = {"kind": ref["kind"], "metadata": {"name": ref["name"], "namespace": ref.get("namespace")},
                    "data": {} if text is None else {pred["path"][1]: text}}
            ok, detail = _field_holds(pred, seen, state, where + ("" if text is not None else f" (nothing: {why})"))
            if not ok:
                wrong.append(detail)
        return not wrong, "; ".join(wrong[:3]) if wrong else \
            f"{ref_text(ref)} {show_path(pred['path'])} holds in what every workload reading it reads"
    if not objects:
        return False, f"{ref_text(ref)} absent"
    return _field_holds(pred, objects[0], state, f"{ref_text(ref)} {show_path(pred['path'])}")


def _field_holds(pred, obj, state, where):
    """Whether a field predicate holds on one object (`where`: how the detail names what it read)."""
    observed = lookup(obj, pred["path"])
    if _env_path(pred["path"]) and pred.get("op") in ("==", "!=", "in", "matches", "contains"):
        # the value the container gets, through envFrom, valueFrom or `$(NAME)` as well as a literal value
        namespace = obj.get("metadata", {}).get("namespace")
        got = env_value(obj, pred["path"], state, namespace)
        observed = MISSING if got is None else got
        if pred["op"] in ("==", "!=") and isinstance(got, str) and isinstance(pred["value"], str) and \
                pred.get("type") != "text":
            # an address, as `fields` compares one (`same_address`): one home for what names one endpoint
            ok = same_address(pred["value"], got, namespace, state) == (pred["op"] == "==")
            return ok, f"{where} is {shown(got)}, wants {pred['op']} {shown(pred['value'])}"
    if isinstance(observed, InvalidValue):
        return False, f"{where}: {observed.why}"
    op = pred["op"]
    if op in ("==", "!=", "in"):  # a named port is the number it names
        observed, value = resolved_ports(obj, pred["path"], state, observed, pred["value"])
        pred = {**pred, "value": value}
    if op in FIELD_TESTS:
        return FIELD_TESTS[op](observed, pred["value"], pred.get("type"), where)
    return compared(observed, pred, where)


# ---- RBAC, as the API server's authorizer decides (plugin/pkg/auth/authorizer/rbac) ------------------------


def subject_user(subject):
    """(user name, groups) a subject authenticates as: a ServiceAccount as `system:serviceaccount:NS:NAME`
    in `system:serviceaccounts`, `system:serviceaccounts:NS` and `system:authenticated`; a User by name."""
    if subject["kind"] == "ServiceAccount":
        namespace = subject.get("namespace") or ""
        return (f"system:serviceaccount:{namespace}:{subject['name']}",
                {"system:serviceaccounts", f"system:serviceaccounts:{namespace}", "system:authenticated"})
    if subject["kind"] == "Group":
        return "", {subject["name"], "system:authenticated"}
    return subject["name"], {"system:authenticated"}


def binds(binding, user, groups, namespace):
    """Whether one of a binding's subjects is the user: a User by name, a Group the user is in, a
    ServiceAccount by its user name (a subject without a namespace takes `namespace`, the binding's for
    a RoleBinding, none for a ClusterRoleBinding)."""
    for subject in binding.get("subjects") or []:
        if not isinstance(subject, dict):
            continue
        kind, name = subject.get("kind"), str(subject.get("name", ""))
        if kind == "User" and name == user:
            return True
        if kind == "Group" and name in groups:
            return True
        if kind == "ServiceAccount":
            home = subject.get("namespace") or namespace
            if home and f"system:serviceaccount:{home}:{name}" == user:
                return True
    return False


def rule_allows(rule, verb, group, resource, subresource, name):
    """One PolicyRule against a resource request: the verb (or `*`), the API group (or `*`), the resource
    (`*`, `resource`, `resource/subresource`, `*/subresource`), and the resource names (none: every name;
    some: a request for one of them, so never a list or a create, which name nothing)."""
    if not isinstance(rule, dict):
        return False

    def listed(key):
        value = rule.get(key)
        return [str(v) for v in value] if isinstance(value, list) else []

    combined = f"{resource}/{subresource}" if subresource else resource
    names = listed("resourceNames")
    return (any(v in ("*", verb) for v in listed("verbs"))
            and any(g in ("*", group) for g in listed("apiGroups"))
            and any(r in ("*", combined) or (subresource and r == "*/" + subresource) for r in listed("resources"))
            and (not names or (name is not None and name in names)))


def bound_role(state, ref, where):
    """The Role or ClusterRole a binding's `roleRef` names, as the state holds it (None: not held): a Role
    only in the binding's own namespace (`where`; None for a ClusterRoleBinding, which lends no Role)."""
    if ref.get("kind") == "Role" and where:
        return state.objects.get(("Role", where, str(ref.get("name", ""))))
    if ref.get("kind") == "ClusterRole":
        return state.objects.get(("ClusterRole", None, str(ref.get("name", ""))))
    return None


def allowed(state, subject, verb, resource, namespace=None, group="", subresource="", name=None):
    """Whether the subject may do `verb` on the resource, as the RBAC authorizer decides: the rules of every
    ClusterRoleBinding that binds it, then, in `namespace` (None: a cluster-wide request), of every
    RoleBinding there that binds it (its Role of that namespace, or a ClusterRole). Returns (allowed, the
    binding and role that allow it, or why not). Only the state's RBAC objects are read: a role the
    state lacks grants nothing."""
    user, groups = subject_user(subject)
    bindings = [(b, None) for b in state.by_kind.get(("ClusterRoleBinding", None), [])]
    if namespace:
        bindings += [(b, namespace) for b in state.by_kind.get(("RoleBinding", namespace), [])]
    for binding, where in bindings:
        if not binds(binding, user, groups, where):
            continue
        ref = binding.get("roleRef") if isinstance(binding.get("roleRef"), dict) else {}
        for rule in (bound_role(state, ref, where) or {}).get("rules") or []:
            if rule_allows(rule, verb, group, resource, subresource, name):
                meta = binding.get("metadata") or {}
                return True, (f"allowed by {binding.get('kind')} {meta.get('name')} ({ref.get('kind')} "
                              f"{ref.get('name')})")
    return False, "no binding of the subject grants it"


def _rule_names(rule, verb, group, resource, name):
    """Whether a PolicyRule grants a request by naming it: the verb, the API group and the resource each
    written out (a `*` only grants a request for `*`, as a wildcard the healthy rule held), and no
    resourceNames, or the request's name among them."""
    if not isinstance(rule, dict):
        return False
    listed = lambda key: [str(v) for v in rule.get(key)] if isinstance(rule.get(key), list) else []  # noqa: E731
    names = listed("resourceNames")
    return (verb in listed("verbs") and group in listed("apiGroups") and resource in listed("resources")
            and (not names or name in names))


def role_access_kept(obj, path, healthy, state, served=None):
    """Whether the subjects of a Role (or ClusterRole) whose rules the fault changed may still do what its
    healthy rules grant, as the RBAC authorizer decides: every subject of every binding of the role may do
    each request of the healthy rules through some binding of its own (a new Role and RoleBinding do it as
    well as the role edited back), by a rule that names the request (a wildcard grant is no restoration); so
    must the subjects the role served in the healthy topology (`served`). False where no subject is known,
    or the healthy rules cannot be told."""
    if path == ["rules"]:
        rules = healthy
    elif len(path) >= 2 and path[0] == "rules" and isinstance(path[1], int) and isinstance(obj.get("rules"), list):
        rules = json.loads(json.dumps(obj["rules"]))
        node = rules
        for seg in path[1:-1]:
            node = node[seg] if isinstance(node, list) and isinstance(seg, int) and seg < len(node) else \
                node.get(seg) if isinstance(node, dict) else None
            if node is None:
                return False
        if not isinstance(node, (dict, list)) or (isinstance(node, list) and not isinstance(path[-1], int)):
            return False
        try:
            node[path[-1]] = healthy
        except (IndexError, TypeError):
            return False
    else:
        return False
    requests = [(str(v), str(g), str(r), str(n) if n is not None else None)
                for rule in (rules if isinstance(rules, list) else []) if isinstance(rule, dict)
                for v in rule.get("verbs") or [] for g in rule.get("apiGroups") or [""]
                for r in rule.get("resources") or [] for n in (rule.get("resourceNames") or [None])]
    if not requests:
        return False
    kind, meta = obj.get("kind"), obj.get("metadata") or {}
    namespace = meta.get("namespace")
    role_bindings = [(b, None) for b in state.by_kind.get(("ClusterRoleBinding", None), [])]
    role_bindings += [(b, n) for (k, n), items in state.by_kind.items() if k == "RoleBinding" for b in items]
    mine = [(b, n) for b, n in role_bindings if isinstance(b.get("roleRef"), dict)
            and b["roleRef"].get("kind") == kind and b["roleRef"].get("name") == meta.get("name")
            and (kind == "ClusterRole" or n == namespace)]
    subjects = [(s, n) for b, n in mine for s in b.get("subjects") or [] if isinstance(s, dict)
                and s.get("kind") in ("ServiceAccount", "User", "Group")]
    # the subjects the role served in the healthy topology (`served`, from the spec) too: re-pointing its
    # binding elsewhere serves someone else
    subjects += [(s, namespace) for s in served or [] if isinstance(s, dict)]
    if not subjects:
        return False
    for subject, where in subjects:
        subject = {**subject, "namespace": subject.get("namespace") or where}
        user, groups = subject_user({"kind": subject["kind"], "name": str(subject.get("name", "")),
                                     "namespace": subject["namespace"]})
        scope = where or namespace  # a RoleBinding's requests are of its namespace; a ClusterRole's, cluster-wide
        for verb, group, resource, name in requests:
            granted = False
            for binding, at_ns in role_bindings:
                if (at_ns is not None and at_ns != scope) or not binds(binding, user, groups, at_ns):
                    continue
                ref = binding.get("roleRef") if isinstance(binding.get("roleRef"), dict) else {}
                role = state.objects.get(("Role", at_ns, str(ref.get("name", "")))) if ref.get("kind") == "Role" \
                    and at_ns else state.objects.get(("ClusterRole", None, str(ref.get("name", "")))) \
                    if ref.get("kind") == "ClusterRole" else None
                if role is not None and not terminating(role) and not terminating(binding) and any(
                        _rule_names(rule, verb, group, resource, name) for rule in role.get("rules") or []):
                    granted = True
                    break
            if not granted:
                return False
    return True


def parse_resource(text):
    """(resource, API group, subresource) of `deployments.apps`, `pods/log`, `pods`, as kubectl names them."""
    head, _, subresource = str(text).partition("/")
    resource, _, group = head.partition(".")
    return resource, group, subresource


def access_check(pred, state):
    """`can serviceaccount "x" "list" "pods" [in namespace "y"]` (or `cannot`): the authorizer's decision."""
    subject = pred["target"]
    verb, text = pred["path"][0], pred["path"][1]
    resource, group, subresource = parse_resource(text)
    namespace = pred.get("namespace")
    ok, why = allowed(state, subject, verb, resource, namespace, group, subresource)
    want = pred["op"] == "can"
    where = f"in namespace {namespace}" if namespace else "cluster-wide"
    return ok == want, (f"{ref_text(subject)} {'can' if ok else 'cannot'} {verb} {text} {where} ({why})"
                        + ("" if ok == want else f", wants it {'allowed' if want else 'refused'}"))


def probe_check(pred, state):
    """`probe "NAME" FIELD TEST`: the probe's result in the state; none (or a malformed one) fails."""
    name, field = pred["path"]
    where = f"probe {name} {field}"
    result = state.probes.get(name)
    if not isinstance(result, dict):
        return False, f"probe {name}: the state holds no result of it"
    observed = result.get(field, MISSING)
    if observed is MISSING:
        return False, f"{where}: absent from the probe's result"
    if field == "exit_code" and (not isinstance(observed, int) or isinstance(observed, bool)):
        return False, f"{where}: not an integer"
    if field != "exit_code" and not isinstance(observed, str):
        return False, f"{where}: not text"
    op = pred["op"]
    if op == "contains" and isinstance(observed, str):  # a command's output is text: `contains` is a substring
        ok = isinstance(pred["value"], str) and pred["value"] in observed[:MAX_PROBE_TEXT]
        return ok, f"{where} {'contains' if ok else 'does not contain'} {shown(pred['value'])}"
    if op in FIELD_TESTS:
        return FIELD_TESTS[op](observed, pred["value"], pred.get("type"), where)
    return compared(observed, pred, where)


def vet_probes(spec, state):
    """A probe's result counts only as its workload's own pod's answer: where the result names the pod it ran
    in (`pod`, as `itbench run` and `--capture` record it), that pod must be in the state and be the workload's
    (workload_pod_refusal: its controller chain leads to the workload and it runs the workload's pod
    template); a result from another pod, one that merely carries the labels or claims the ReplicaSet, is
    replaced by a failed one saying why, so the predicates reading it fail."""
    for name, result in list(state.probes.items()):
        probe = (spec.get("probes") or {}).get(name)
        if not isinstance(result, dict) or not isinstance(probe, dict) or "pod" not in result:
            continue
        workload = dict(probe["workload"], namespace=probe["namespace"])
        obj = state.get(workload)
        pod = state.get({"kind": "Pod", "namespace": probe["namespace"], "name": str(result["pod"])})
        why = ("its workload is not in the state" if obj is None else "the state holds no such pod" if pod is None
               else workload_pod_refusal(obj, pod))
        if why:
            state.probes[name] = {"exit_code": -1, "stdout": "", "stderr": f"the probe ran in pod {result['pod']}, "
                                  f"not one of {workload['kind']} {workload['name']}'s own: {why}"}


MAX_PROBE_TEXT = 1024 * 1024  # of a probe's output, what `contains` reads
MAX_MATCHED_TEXT = 64 * 1024  # `matches` reads at most this much text: the expression's work stays bounded


def kind_of(value):
    if value is MISSING or value is None:
        return "absent" if value is MISSING else "null"
    return "a list" if isinstance(value, list) else "a map" if isinstance(value, dict) else \
        "text" if isinstance(value, str) else "a boolean" if isinstance(value, bool) else "a number"


def exists_test(observed, _value, _type, where):
    ok = observed is not MISSING and observed is not None
    return ok, f"{where} {'exists' if ok else 'is ' + kind_of(observed)}, wants it to exist"


def missing_test(observed, _value, _type, where):
    ok = observed is MISSING or observed is None
    return ok, f"{where} is {shown(observed) if not ok else kind_of(observed)}, wants it absent"


def holds(expected, observed):
    """Whether `observed` holds the entries of `expected`, as `contains` reads a map: each key's value held,
    a list by its elements, in any order and among others (a rule that allows `get` and `list` holds
    `verbs = ["list"]`), scalars by meaning."""
    if isinstance(expected, dict):
        return isinstance(observed, dict) and all(k in observed and holds(v, observed[k]) for k, v in expected.items())
    if isinstance(expected, list):
        return isinstance(observed, list) and all(any(holds(e, o) for o in observed) for e in expected)
    return not isinstance(observed, (dict, list)) and same(expected, observed)


def contains_test(observed, value, vtype, where):
    """A list holds an element equal to `value` (a map value: an element holding those entries); a map holds
    the entries of a map `value`, or the key `value`. Never a substring: text is not a list."""
    if isinstance(observed, list):
        if isinstance(value, dict):
            ok = any(isinstance(item, dict) and holds(value, item) for item in observed)
        else:
            ok = any(not isinstance(item, (dict, list)) and typed_same(item, value, vtype) for item in observed)
    elif isinstance(observed, dict):
        ok = holds(value, observed) if isinstance(value, dict) else isinstance(value, str) and value in observed
    else:
        return False, f"{where} is {kind_of(observed)}, not a list or a map: wants it to contain {shown(value)}"
    return ok, f"{where} {'contains' if ok else 'does not contain'} {shown(value)}"


def in_test(observed, value, vtype, where):
    ok = isinstance(value, list) and not isinstance(observed, (dict, list)) and observed is not MISSING \
        and observed is not None and any(typed_same(observed, v, vtype) for v in value)
    return ok, f"{where} is {shown(observed)}, wants one of {shown(value)}"


def matches_test(observed, value, _type, where):
    """The whole value matches (re.fullmatch: anchored at both ends); only text is matched."""
    if not isinstance(observed, str):
        return False, f"{where} is {kind_of(observed)}, wants text matching {shown(value)}"
    if len(observed) > MAX_MATCHED_TEXT:
        return False, f"{where} is {len(observed):,} characters long: at most {MAX_MATCHED_TEXT:,} are matched"
    try:
        ok = re.fullmatch(str(value), observed) is not None
    except re.error:
        ok = False
    return ok, f"{where} is {shown(observed)}, wants it to match {shown(value)}"


FIELD_TESTS = {"exists": exists_test, "not exists": missing_test, "contains": contains_test, "in": in_test,
               "matches": matches_test}


def scope_check(pred, state):
    """`all KIND ... ready`: every pod (phase Running, condition Ready) or workload (every desired replica
    ready and available) in the namespaces, with the labels; the topology's workloads it covers present and
    ready; and at least one of them: an empty scope is not a healthy one. Held over the state's earlier
    captures as `X ready` is: once the scope was all ready at one (the fix rolled out), it is at every later
    one, a lapse of one pod or workload in between fails it, whatever the last capture says."""
    ok, detail = _scope_now(pred, state)
    if not ok:
        return ok, detail
    since = None
    for at, seen in state.observations:
        ready, why = _scope_now(pred, seen)
        if ready and since is None:
            since = at
        elif not ready and since is not None:
            return False, f"did not hold: ready at {_moment(since)}, not at {_moment(at)}: {why}"
    return ok, detail


def of_application(pod, state):
    """Whether a pod is the application's: a bare pod of it, a pod some workload of it owns (through the
    owners the state holds: a ReplicaSet's Deployment) or selects (its controller adopts an orphan its
    selector matches), or one a Service of it selects. A pod whose owner the state does not hold, or a state
    that does not say what the application is, is taken as its."""
    known = getattr(state, "known", None)
    meta = pod.get("metadata") or {}
    namespace = meta.get("namespace")
    if known is None or ("Pod", namespace, meta.get("name")) in known:
        return True
    labels = meta.get("labels") or {}
    for kind in ("Service", *POD_TEMPLATE_KINDS):
        for obj in state.by_kind.get((kind, namespace), []):
            selector = (obj.get("spec") or {}).get("selector")
            if kind != "Service" and isinstance(selector, dict):
                selector = selector.get("matchLabels") if not selector.get("matchExpressions") else None
            if (kind, namespace, (obj.get("metadata") or {}).get("name")) in known and isinstance(selector, dict) \
                    and selector and labels_match(labels, selector):
                return True
    owners, seen = list(meta.get("ownerReferences") or []), set()
    while owners:
        owner = owners.pop()
        key = (owner.get("kind"), namespace, owner.get("name")) if isinstance(owner, dict) else None
        if key is None or key in seen:
            continue
        seen.add(key)
        if key in known:
            return True
        obj = state.get({"kind": key[0], "namespace": namespace, "name": key[2]})
        if obj is None:
            return True  # an owner the state does not hold: which workload it is cannot be told
        owners += list((obj.get("metadata") or {}).get("ownerReferences") or [])
    return False


def _scope_now(pred, state):
    selector = pred.get("selector") or {}
    namespaces = pred["namespaces"]
    scope = f"{pred['scope']}" + (f" {shown(selector)}" if selector else "") + f" in {', '.join(namespaces)}"
    found, bad = 0, []
    for namespace in namespaces:
        for kind in pred["kinds"]:
            for obj in state.by_kind.get((kind, namespace), []):
                meta = obj.get("metadata") or {}
                if kind == "Pod":
                    labels = meta.get("labels")
                    phase = (obj.get("status") or {}).get("phase")
                    if phase == "Succeeded" or terminating(obj) or replaced(obj) or \
                            (phase == "Failed" and not of_application(obj, state)):
                        # a completed job's pod, one leaving, one evicted, a finished run that is none of the
                        # application's (a one-shot diagnostic pod that exited non-zero): none is unhealthy
                        continue
                    ok = pod_ready(obj) and not pod_unstable(obj, state.fixed_at, earlier_pods(obj, state))
                else:
                    labels = (((obj.get("spec") or {}).get("template") or {}).get("metadata") or {}).get("labels")
                    ok = workload_ready(obj, zero_ok=True) and not settled_problem(obj, state)
                if selector and not (isinstance(labels, dict) and all(labels.get(k) == v for k, v in selector.items())):
                    continue
                found += 1
                if not ok:
                    bad.append(f"{kind} {meta.get('name')}")
    for ref in pred.get("expected", []):
        obj = state.get(ref)
        if obj is None or not workload_ready(obj) or settled_problem(obj, state):
            bad.append(f"{ref['kind']} {ref['name']} " + ("missing" if obj is None else "not ready"))
    if not found:
        return False, f"all {scope}: none found (an empty scope is not healthy)"
    if bad:
        return False, f"all {scope}: {len(bad)} not ready ({', '.join(sorted(set(bad))[:5])})"
    return True, f"all {scope}: {found} ready"


def alert_check(name, namespaces, want_firing, state):
    """Whether the alert fires (`want_firing`), or is quiet. An alert counts in the scenario's own namespaces
    (or with no namespace label): the same alert firing for another tenant of the cluster neither blocks nor
    fakes a mitigation. A pending alert (its condition holds, not yet for its `for` duration) is no proof
    of firing, and no proof of quiet either: the problem it watches is still there."""

    def active(table):
        where = table.get(name, set())
        return bool(where) if not namespaces else any(n is None or n in namespaces for n in where)

    firing, pending = active(state.firing), active(state.pending)
    scope = f" in {', '.join(namespaces)}" if namespaces else ""
    if want_firing:
        return firing, f"alert {name} {'firing' if firing else 'pending, not yet firing' if pending else 'not firing'}{scope}"
    quiet = not firing and not pending
    return quiet, f"alert {name} {'firing' if firing else 'pending (its condition still holds)' if pending else 'not firing'}{scope}"


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
    problem = settled_problem(obj, state) if ok else None
    if problem:
        return False, f"{ref_text(ref)} not settled: {problem}"
    lapse = readiness_lapse(ref, state) if ok else None
    if lapse:
        return False, f"{ref_text(ref)} did not hold: {lapse}"
    status = obj.get("status") or {}
    return ok, (f"{ref_text(ref)} ready" if ok else
                f"{ref_text(ref)} not ready ({shown(status.get('readyReplicas', 0))} of "
                f"{shown((obj.get('spec') or {}).get('replicas', 1))} replicas ready)")


def readiness_lapse(ref, state):
    """Why a workload's readiness did not hold over the state's earlier captures (None when it did): once ready
    at one (its fix rolled out), it is ready at every later one. A rollout still under way at the first
    captures is no lapse; a workload ready, then not (a pod crashing, a probe failing between captures) is."""
    since = None
    for at, seen in state.observations:
        obj = seen.get(ref)
        ready = obj is not None and workload_ready(obj) and not settled_problem(obj, seen)
        if ready and since is None:
            since = at
        elif not ready and since is not None:
            moment = _moment(at)
            return f"ready at {_moment(since)}, not at {moment}" + ("" if obj is not None else " (missing)")
    return None


def _moment(seconds):
    import datetime

    return datetime.datetime.fromtimestamp(seconds, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def container_ports(pods, protocol=None):
    """{name: number} and the set of numbers the pods' containers declare (of `protocol` only, when given: a
    Service port resolves a named target through the container ports of its own protocol)."""
    names, numbers = {}, set()
    for pod in pods:
        for c in ((pod.get("spec") or {}).get("containers") or []):
            for p in (c.get("ports") or []) if isinstance(c, dict) else ():
                if protocol is not None and isinstance(p, dict) and str(p.get("protocol") or "TCP") != protocol:
                    continue
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


PROBE_KEYS = ("livenessProbe", "readinessProbe", "startupProbe")


def port_names(obj, path, state):
    """{name: number} through which a named port at `path` resolves, as Kubernetes resolves it; None where the
    path holds no port a name can stand for. A Service's `targetPort` names a port of the containers of the
    pods it selects (those running, and those its namespace's workloads will run from their templates); a
    probe handler's `port` (`httpGet`, `tcpSocket`, `grpc`) a port of the container that holds the probe."""
    keys = [s for s in path if isinstance(s, str)]
    if not keys or not isinstance(obj, dict):
        return None
    if obj.get("kind") == "Service" and keys[-1] == "targetPort":
        selector = (obj.get("spec") or {}).get("selector") or {}
        namespace = (obj.get("metadata") or {}).get("namespace")
        pods = selected_pods(obj, state) if state is not None else []
        for kind in ("Deployment", "StatefulSet", "DaemonSet", "ReplicaSet"):
            for w in (state.by_kind.get((kind, namespace), []) if state is not None else []):
                template = (w.get("spec") or {}).get("template") or {}
                if labels_match((template.get("metadata") or {}).get("labels"), selector):
                    pods.append(template)
        names = {}
        for pod in pods:  # a name several containers give other numbers resolves to none of them
            for name, value in container_ports([pod])[0].items():
                names[name] = value if names.get(name, value) == value else None
        return {k: v for k, v in names.items() if v is not None}
    if keys[-1] == "port" and len(keys) >= 2 and keys[-2] in ("httpGet", "tcpSocket", "grpc") \
            and any(k in PROBE_KEYS for k in keys):
        at_probe = max(i for i, s in enumerate(path) if s in PROBE_KEYS)
        holder = lookup(obj, path[:at_probe]) if at_probe else MISSING
        if not (isinstance(holder, dict) and ("image" in holder or "ports" in holder)):
            return None
        return container_ports([{"spec": {"containers": [holder]}}])[0]
    return None


def resolved_ports(obj, path, state, observed, expected):
    """A port and the value it is compared with, each a name resolved to its number where `port_names` says
    what the name stands for (`targetPort: service` is 8080 where the container names 8080 `service`); both
    as they are otherwise."""
    named = lambda v: isinstance(v, str) and number(v) is None  # noqa: E731
    if not (named(observed) or named(expected) or (isinstance(expected, list) and any(named(v) for v in expected))):
        return observed, expected
    names = port_names(obj, path, state)
    if not names:
        return observed, expected

    def resolve(v):
        return names.get(v, v) if named(v) else v

    return resolve(observed), [resolve(v) for v in expected] if isinstance(expected, list) else resolve(expected)


def _ingress_backends(spec):
    """(where, service backend) of each backend an Ingress spec names: its default backend, each rule's paths."""
    out = []
    default = spec.get("defaultBackend")
    if isinstance(default, dict):
        out.append(("the default backend", default))
    for rule in spec.get("rules") or []:
        if not isinstance(rule, dict):
            continue
        for path in ((rule.get("http") or {}).get("paths") or []):
            if isinstance(path, dict):
                out.append((f"{rule.get('host') or '*'}{path.get('path') or '/'}", path.get("backend") or {}))
    return out


def ingress_problem(obj, state):
    """`ready` on an Ingress: why a controller of its class would not route it to ready pods (None when it
    would). It has a class (`ingressClassName`, or the older `kubernetes.io/ingress.class` annotation), and each
    backend resolves as the controller resolves it: a Service of the ingress's namespace, one of whose ports is
    the backend's (its number, or its name), selecting ready pods whose programs answer that port's target (as
    `service_check` reads it)."""
    spec = obj.get("spec") or {}
    annotations = (obj.get("metadata") or {}).get("annotations") or {}
    if not spec.get("ingressClassName") and not annotations.get("kubernetes.io/ingress.class"):
        return "no ingress class: no controller serves it"
    backends = _ingress_backends(spec)
    if not backends:
        return "no rule or default backend"
    namespace = (obj.get("metadata") or {}).get("namespace")
    for where, backend in backends:
        service = backend.get("service") if isinstance(backend, dict) else None
        if not isinstance(service, dict):
            continue  # a resource backend (a bucket, say) is the controller's own to serve
        name, port = service.get("name"), service.get("port") or {}
        target = state.get({"kind": "Service", "namespace": namespace, "name": name})
        if target is None or terminating(target):
            return f"{where} -> service {name}, which does not exist"
        wanted = port.get("name") if port.get("name") is not None else port.get("number")
        ports = [p for p in (target.get("spec") or {}).get("ports") or [] if isinstance(p, dict)]
        found = next((p for p in ports if (port.get("name") is not None and p.get("name") == port["name"]) or
                      (port.get("number") is not None and number(p.get("port")) == number(port["number"]))), None)
        if found is None:
            return f"{where} -> service {name} has no port {shown(wanted)}"
        ready = [p for p in selected_pods(target, state) if pod_ready(p)]
        if not ready:
            return f"{where} -> service {name} selects no ready pod"
        names, numbers = container_ports(ready)
        numbers = _listening({"namespace": namespace, "name": name}, state) or numbers  # as service_check reads it
        resolved = port_number(found.get("targetPort", found.get("port")), names)
        if resolved is None or (numbers and resolved not in numbers):
            return f"{where} -> service {name} port {shown(wanted)}: no container port answers it"
    return None


# ingress-nginx's annotations that change what a request of a location reaches beside its Service port and path:
# a redirect answers it instead, a canary splits it, another protocol is spoken to the backend; and those that
# refuse it before it reaches the backend: a client allow-list or deny-list (403), an authentication it must
# pass (basic auth, an external auth service), raw nginx configuration (`return 503;`), a rate limit, another
# backend or error page for its failures
_NGINX = "nginx.ingress.kubernetes.io/"
ROUTE_ANNOTATIONS = tuple(_NGINX + a for a in (
    "permanent-redirect", "temporal-redirect", "canary", "canary-weight", "canary-by-header",
    "canary-by-header-value", "canary-by-cookie", "backend-protocol",
    "whitelist-source-range", "allowlist-source-range", "denylist-source-range", "auth-type", "auth-secret",
    "auth-url", "auth-tls-verify-client", "auth-tls-secret", "server-snippet", "configuration-snippet",
    "limit-rps", "limit-rpm", "limit-connections", "limit-rate", "default-backend", "custom-http-errors"))


def ingress_class(obj):
    """The class an Ingress asks for: `spec.ingressClassName`, or the older `kubernetes.io/ingress.class`."""
    annotations = (obj.get("metadata") or {}).get("annotations") or {}
    return (obj.get("spec") or {}).get("ingressClassName") or annotations.get("kubernetes.io/ingress.class")


def _class_controller(name, state):
    found = state.get({"kind": "IngressClass", "namespace": None, "name": name}) if name else None
    return ((found or {}).get("spec") or {}).get("controller")


def _served_alike(name, healthy, state):
    """Whether a controller of the healthy class serves an Ingress of class `name`: the same class, or an
    IngressClass the state holds naming the healthy class's controller."""
    if name == healthy:
        return True
    controller = _class_controller(healthy, state)
    return controller is not None and _class_controller(name, state) == controller


def _path_match(kind, path, request, regex):
    """How long a match a path of an Ingress makes of a request's path (None: none), as ingress-nginx matches
    it: a regular expression at its start (`use-regex`, `rewrite-target`), `Exact` the whole path, `Prefix`
    element by element (`/api` matches `/api` and `/api/x`, not `/apix`), ImplementationSpecific a prefix."""
    if regex:
        try:
            return len(path) if re.match(path, request, re.IGNORECASE) else None
        except re.error:
            return None
    if kind == "Exact":
        return len(path) if request == path else None
    if kind == "Prefix":
        base = path.rstrip("/")
        return len(path) if not base or request == base or request.startswith(base + "/") else None
    return len(path) if request.startswith(path) else None


def _route_outcome(ingress, backend, path, request, regex, state):
    """What a request a location of an Ingress matches reaches: the pods and port of theirs its Service sends
    it to (`_route_backend`) and the path the backend is sent (`rewrite-target`, its `$n` from the match), or the
    redirect that answers it instead; with the annotations that change it further."""
    meta = ingress.get("metadata") or {}
    annotations = meta.get("annotations") or {}
    for key in (_NGINX + "permanent-redirect", _NGINX + "temporal-redirect"):
        if annotations.get(key):
            return ("redirect", annotations[key])
    if annotations.get(_NGINX + "app-root") and request == "/":
        return ("redirect", annotations[_NGINX + "app-root"])
    service = (backend or {}).get("service") if isinstance(backend, dict) else None
    if not isinstance(service, dict):
        return ("resource", json.dumps((backend or {}).get("resource"), sort_keys=True), request)
    backend_of = _route_backend(meta.get("namespace"), service, state)
    upstream = request
    rewrite = annotations.get(_NGINX + "rewrite-target")
    if isinstance(rewrite, str):
        found = None
        try:
            found = re.match(path, request, re.IGNORECASE) if path else None
        except re.error:
            pass
        groups = found.groups() if found else ()
        upstream = re.sub(r"\$(\d)", lambda g: (groups[int(g.group(1)) - 1] or "") if 0 < int(g.group(1)) <= len(groups)
                          else "", rewrite, flags=re.ASCII)
    extra = tuple((k, str(annotations[k])) for k in ROUTE_ANNOTATIONS if k in annotations)
    return ("service", backend_of, upstream, extra)


def _route_backend(namespace, service, state):
    """What a backend of an Ingress reaches, as the controller sends to it: the pods the Service selects and the
    port of theirs its port targets (a Service under another name selecting the same pods on the same port
    reaches the same); a Service the state lacks, or a port it has not, by the name and port asked for."""
    port = service.get("port") or {}
    wanted = port.get("number") if port.get("name") is None else port.get("name")
    target = state.get({"kind": "Service", "namespace": namespace, "name": service.get("name")})
    found = None
    for p in ((target or {}).get("spec") or {}).get("ports") or []:
        if isinstance(p, dict) and ((port.get("name") is not None and p.get("name") == port["name"]) or
                                    (port.get("number") is not None and same(p.get("port"), port["number"]))):
            found = p
    if target is None or terminating(target) or found is None:
        return ("missing", str(service.get("name")), str(wanted))
    goes = found.get("targetPort", found.get("port"))
    value = number(goes)
    goes = str(int(value)) if value is not None and value == int(value) else str(goes)
    selector = (target.get("spec") or {}).get("selector") or {}
    if not selector:  # its endpoints or external name are its own: the Service itself is what is reached
        return ("service", str(service.get("name")), goes)
    return ("pods", json.dumps(selector, sort_keys=True), goes)


def _host_match(rule_host, host):
    if not rule_host:
        return "any"
    if rule_host.startswith("*."):
        head, _, rest = host.partition(".")
        return "wildcard" if head and rest == rule_host[2:] else None
    return "exact" if rule_host == host else None


def ingress_route(ingresses, host, request, state):
    """Where a request (host, path) goes through the Ingresses a controller serves together: the rules of the
    most specific host (exact, then a wildcard, then rules of no host), the longest path that matches it
    (`Exact` before a prefix of the same length), else a default backend; the set of outcomes
    (`_route_outcome`), more than one where Ingresses tie, empty where nothing takes it."""
    candidates = {"exact": [], "wildcard": [], "any": []}
    for ingress in ingresses:
        annotations = (ingress.get("metadata") or {}).get("annotations") or {}
        regex = str(annotations.get(_NGINX + "use-regex")).lower() == "true" or \
            _NGINX + "rewrite-target" in annotations
        for rule in (ingress.get("spec") or {}).get("rules") or []:
            if not isinstance(rule, dict):
                continue
            level = _host_match(rule.get("host") or "", host)
            if level is None:
                continue
            for path in ((rule.get("http") or {}).get("paths") or []):
                if isinstance(path, dict):
                    candidates[level].append((ingress, path, regex))
    for level in ("exact", "wildcard", "any"):
        scored = []
        for ingress, path, regex in candidates[level]:
            text = path.get("path") or "/"
            length = _path_match(path.get("pathType") or "ImplementationSpecific", text, request, regex)
            if length is not None:
                scored.append(((length, path.get("pathType") == "Exact"), ingress, path, text, regex))
        if scored:
            best = max(score for score, *_ in scored)
            return {_route_outcome(ingress, path.get("backend"), text, request, regex, state)
                    for score, ingress, path, text, regex in scored if score == best}
        if candidates[level]:
            break  # the host's own server answers: a path it has not goes to no Service of these Ingresses
    return {_route_outcome(i, i["spec"]["defaultBackend"], "", request, False, state) for i in ingresses
            if isinstance((i.get("spec") or {}).get("defaultBackend"), dict)}


def _route_probes(healthy):
    """The requests an Ingress's healthy rules route: each path of each host (a wildcard host's by a name under
    it, rules of no host by a name no rule has), and for a path that is a prefix, a path under it; a request
    for the default backend."""
    probes = []
    for rule in (healthy.get("spec") or {}).get("rules") or []:
        if not isinstance(rule, dict):
            continue
        host = rule.get("host") or "unrouted.invalid"
        host = "probe." + host[2:] if host.startswith("*.") else host
        for path in ((rule.get("http") or {}).get("paths") or []):
            if not isinstance(path, dict):
                continue
            text = path.get("path") or "/"
            probes.append((host, text))
            if path.get("pathType") != "Exact":
                probes.append((host, text.rstrip("/") + "/probe"))
    if isinstance((healthy.get("spec") or {}).get("defaultBackend"), dict):
        probes.append(("unrouted.invalid", "/probe"))
    return list(dict.fromkeys(probes))


def _shown_route(outcomes):
    if not outcomes:
        return "nothing"
    out = []
    for o in sorted(outcomes, key=str):
        if o[0] == "service" and o[1][0] in ("missing", "service"):
            out.append(f"service {o[1][1]} port {o[1][2]}" + (", which is not there" if o[1][0] == "missing" else "")
                       + f" as {o[2]}")
        elif o[0] == "service":
            out.append(f"the pods of selector {o[1][1]} on port {o[1][2]} as {o[2]}" +
                       "".join(f" ({k[len(_NGINX):]}={v})" for k, v in o[3]))
        else:
            out.append(f"{o[0]} {o[1]}")
    return " or ".join(out)


def routes_problem(entry, routes, state):
    """How an Ingress of the healthy application no longer routes as it did (None when it does): each request
    its healthy rules route (`_route_probes`) reaches, through the Ingresses of the namespace a controller of
    its class serves, the Service port and path it reached through the healthy Ingresses of that class
    (`ingress_route`). Another route re-pointed, a path made `Exact` (its sub-paths no longer match), a class
    no controller of the healthy one serves, a rewrite of the path the backend is sent, all change it."""
    ref = entry["object"]
    healthy_class = ingress_class(entry["healthy"])
    healthy = [{"metadata": {"namespace": r["object"]["namespace"], "name": r["object"]["name"],
                             "annotations": r["healthy"].get("annotations") or {}}, "spec": r["healthy"]["spec"]}
               for r in routes if r["object"].get("namespace") == ref.get("namespace")
               and ingress_class(r["healthy"]) == healthy_class]
    observed = [o for o in state.by_kind.get(("Ingress", ref.get("namespace") or None), [])
                if not terminating(o) and _served_alike(ingress_class(o), healthy_class, state)]
    own = state.get(ref)
    moved = f"; it asks for class {ingress_class(own)!r}, which no controller of class {healthy_class!r} serves" \
        if own is not None and not _served_alike(ingress_class(own), healthy_class, state) else ""
    for host, path in _route_probes(entry["healthy"]):
        want, got = ingress_route(healthy, host, path, state), ingress_route(observed, host, path, state)
        if want != got:
            return f"{host}{path} reaches {_shown_route(got)}, where it reached {_shown_route(want)}{moved}"
    return None


def _listening(ref, state):
    """The ports the programs behind a Service of the healthy application listen on: those their healthy
    containers declare (the spec's `listening`); None where the spec does not say. A container port is a
    declaration only: renumbering it moves no program."""
    healthy = (getattr(state, "healthy_services", None) or {}).get((ref.get("namespace"), ref.get("name")))
    return set(healthy["listening"]) if healthy and healthy.get("listening") else None


def service_check(ref, state):
    """A service the fault acts on works again: it selects ready pods, and every port reaches a port their
    programs listen on: the target a number, or a name resolved among the ready pods' container ports of its
    protocol (as the endpoints controller resolves it), and that number one the healthy containers declare
    (`_listening`: a container port renumbered under its name leads a named target where nothing listens;
    a number as it is, whatever the containers declare now); where the spec does not say, one the pods'
    containers declare."""
    obj = state.get(ref)
    if obj is None:
        return False, f"{ref_text(ref)} is missing"
    pods = selected_pods(obj, state)
    ready = [p for p in pods if pod_ready(p)]
    if not ready:
        return False, f"{ref_text(ref)} selects no ready pod ({len(pods)} selected)"
    numbers = _listening(ref, state) or container_ports(ready)[1]
    broken = []
    for p in (obj.get("spec") or {}).get("ports") or []:
        if not isinstance(p, dict):
            continue
        target = service_target(obj, p)
        resolved = port_number(target, container_ports(ready, str(p.get("protocol") or "TCP"))[0])
        if resolved is None or (numbers and resolved not in numbers):
            broken.append(f"port {shown(p.get('port'))} -> {shown(target)}")
    if broken:
        return False, f"{ref_text(ref)}: no container port answers {', '.join(broken)}"
    return True, f"{ref_text(ref)} selects {len(ready)} ready pod(s) and reaches their ports"


def expand_env(text, env, links=None):
    """`text` with `$(NAME)` replaced by NAME's value where `env` defines it, else the Services' variables
    `links` (`service_links`), as the kubelet expands an environment variable's value
    (third_party/forked/golang/expansion, MappingFuncFor): `$$` is one `$`, a reference to an undefined name
    and an unclosed `$(` stay as written, a `$` before any other character stays."""
    if "$" not in text:  # most values reference nothing
        return text
    links = links or {}
    out, i, n = [], 0, len(text)
    while i < n:
        ch = text[i]
        if ch != "$" or i + 1 >= n:
            out.append(ch)
            i += 1
            continue
        nxt = text[i + 1]
        if nxt == "$":
            out.append("$")
            i += 2
        elif nxt == "(":
            close = text.find(")", i + 2)
            if close < 0:
                out.append("$(")
                i += 2
            else:
                name = text[i + 2:close]
                value = env.get(name) if name in env else links.get(name)
                out.append(value if isinstance(value, str) else f"$({name})")
                i = close + 1
        else:
            out.append("$" + nxt)
            i += 2
    return "".join(out)


def _source_data(state, kind, namespace, name, files=False):
    """A ConfigMap's or a Secret's data as text (None when the state does not hold it). With `files`, what a
    volume of it holds: a ConfigMap's `binaryData` keys too, base64-decoded, which the kubelet writes as files
    like its `data` keys (pkg/volume/configmap, MakePayload); a variable (`envFrom`, `configMapKeyRef`) reads
    `data` alone."""
    held = state.get({"kind": kind, "namespace": namespace, "name": name})
    if held is None:
        return None
    data = (decoded_secret(held) if kind == "Secret" else held).get("data") or {}
    data = data if isinstance(data, dict) else {}
    if kind == "ConfigMap" and files:
        data = {**binary_data(held), **data}  # the API server refuses a key in both
    return data


def service_target(service, port):
    """The port of the selected pods a Service port reaches: its `targetPort` (the port itself when left out),
    which kube-proxy forwards to; for a headless Service (`clusterIP: None`) the port itself: no proxy stands
    between, DNS answers with the pods' IPs and clients connect to them on the port they call, so a
    `targetPort` that differs is never applied."""
    spec = service.get("spec") if isinstance(service.get("spec"), dict) else {}
    if spec.get("clusterIP") == "None":
        return port.get("port")
    return port.get("targetPort", port.get("port"))


def service_ip(service):
    """A Service's cluster IP as the state holds it; None for a headless Service, one without an IP (an
    ExternalName) or one whose IP the capture lacks."""
    spec = service.get("spec") if isinstance(service.get("spec"), dict) else {}
    ip = spec.get("clusterIP")
    return ip if isinstance(ip, str) and ip and ip != "None" else None


def service_links(state, namespace, pod=None):
    """The variables the kubelet gives every container for the Services of its namespace (kubelet_pods.go,
    getServiceEnvVarMap; pkg/kubelet/envvars), unless the pod sets `enableServiceLinks: false`: for each
    Service with a cluster IP, `<NAME>_SERVICE_HOST`, `<NAME>_SERVICE_PORT` (its first port),
    `<NAME>_SERVICE_PORT_<PORT NAME>` and the Docker link variables (`<NAME>_PORT=tcp://ip:port`, ...), NAME
    the Service's name upper-cased with `-` as `_`."""
    if isinstance(pod, dict) and pod.get("enableServiceLinks") is False:
        return {}
    # the same for every container of a namespace in one state: made once (a state is not changed once read)
    made = state.__dict__.setdefault("_service_links", {}) if hasattr(state, "__dict__") else {}
    if namespace not in made:
        made[namespace] = _service_links(state, namespace)
    return made[namespace]


def _service_links(state, namespace):
    out = {}
    for service in state.by_kind.get(("Service", namespace or None), []):
        ip = service_ip(service)
        ports = [p for p in ((service.get("spec") or {}).get("ports") or []) if isinstance(p, dict) and
                 isinstance(p.get("port"), int)]
        if ip is None or not ports:
            continue
        name = str(service["metadata"].get("name", "")).upper().replace("-", "_")
        out[f"{name}_SERVICE_HOST"] = ip
        out[f"{name}_SERVICE_PORT"] = str(ports[0]["port"])
        for p in ports:
            if isinstance(p.get("name"), str) and p["name"]:
                out[f"{name}_SERVICE_PORT_{p['name'].upper().replace('-', '_')}"] = str(p["port"])
        for i, p in enumerate(ports):
            proto = str(p.get("protocol") or "TCP")
            prefix = f"{name}_PORT_{p['port']}_{proto.upper()}"
            url = f"{proto.lower()}://{ip}:{p['port']}"
            if i == 0:
                out[f"{name}_PORT"] = url
            out.update({prefix: url, f"{prefix}_PROTO": proto.lower(), f"{prefix}_PORT": str(p["port"]),
                        f"{prefix}_ADDR": ip})
    return out


def container_env(container, state, namespace, pod=None):
    """The environment a container starts with, as the kubelet makes it (kubelet_pods.go,
    makeEnvironmentVariables): each `envFrom` source in order (a ConfigMap's or a Secret's keys, each under the
    source's `prefix`, a later source overriding an earlier one, keys that are no variable name skipped), then
    each `env` entry in order overriding them: a `value` with `$(NAME)` expanded from what is defined so far,
    a `valueFrom` ConfigMap or Secret key read from the state. {name: text}, a value None where the state
    cannot tell it (a source it does not hold, a field or resource reference); None for the whole environment
    when a required source is missing (the container does not start). `$(NAME)` also expands the Services'
    variables (`service_links`, as the pod `pod` allows), which the kubelet adds last where no entry set them."""
    env = {}
    if not isinstance(container, dict):
        return env
    links = service_links(state, namespace, pod)
    for source in container.get("envFrom") or []:
        if not isinstance(source, dict):
            continue
        for key, kind in (("configMapRef", "ConfigMap"), ("secretRef", "Secret")):
            ref = source.get(key)
            if not isinstance(ref, dict):
                continue
            data = _source_data(state, kind, namespace, ref.get("name"))
            if data is None:
                if ref.get("optional") is True:
                    continue
                return None
            prefix = source.get("prefix") or ""
            for k in sorted(data):
                if isinstance(data[k], str) and ENV_NAME.match(f"{prefix}{k}"):
                    env[f"{prefix}{k}"] = data[k]
    for entry in container.get("env") or []:
        if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
            continue
        name, source = entry["name"], entry.get("valueFrom")
        if not isinstance(source, dict):
            value = entry.get("value", "")
            env[name] = expand_env(value, env, links) if isinstance(value, str) else (None if value is not None else "")
            continue
        env[name] = None
        for key, kind in (("configMapKeyRef", "ConfigMap"), ("secretKeyRef", "Secret")):
            ref = source.get(key)
            if isinstance(ref, dict):
                data = _source_data(state, kind, namespace, ref.get("name"))
                value = None if data is None else data.get(ref.get("key"))
                if isinstance(value, str):
                    env[name] = value
                elif ref.get("optional") is True:
                    env.pop(name)  # an optional key that is not there sets nothing
                elif data is not None:
                    return None
    for name, value in links.items():
        env.setdefault(name, value)
    return env


def env_container(obj, path):
    """The container an environment variable's path names, found as `lookup` finds a path (a predicate's
    `containers[name=c]` starts at the pod spec); the object itself, not a copy. None when there is none."""
    return next((v[0] for v in (walk(base, path[:-3]) for base in lookup_bases(obj)) if v
                 and isinstance(v[0], dict)), None)


def env_value(obj, path, state, namespace):
    """The value a container's environment variable takes, as the kubelet sets it (`container_env`): through
    `env` (the last entry of a name wins, `$(NAME)` expanded), `valueFrom` or `envFrom`. None when the variable
    is not set or the state cannot tell its value."""
    container = env_container(obj, path)
    env = container_env(container, state, namespace, pod_spec(obj)) if isinstance(container, dict) else None
    value = (env or {}).get(str(path[-2][1]))
    return value if isinstance(value, str) else None


def _env_path(path):
    """Whether a path names an environment variable's value (`...containers[name=c].env[name=V].value`)."""
    return len(path) >= 4 and path[-1] == "value" and path[-3] == "env" and isinstance(path[-2], (list, tuple)) \
        and len(path[-2]) == 2 and path[-2][0] == "name"


ADDRESS = re.compile(r"^(?:(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*)://)?(?P<host>[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?\.?)"
                      r"(?::(?P<port>[0-9]+))?(?P<rest>/.*)?$")


def same_address(healthy, observed, namespace, state):
    """Whether two addresses (`host`, `host:port`, `scheme://host:port/path`) name the same endpoint as the
    cluster's DNS resolves them: a Service of the namespace by its short name, `svc.ns`, `svc.ns.svc` or
    `svc.ns.svc.cluster.local` (a trailing dot too) is one name, when that Service exists; scheme, port and
    path compare as written. Any other text compares as written."""
    if healthy == observed:
        return True
    a, b = ADDRESS.match(healthy), ADDRESS.match(observed)
    if a is None or b is None or (a["scheme"] or "").lower() != (b["scheme"] or "").lower() or \
            a["port"] != b["port"] or (a["rest"] or "") != (b["rest"] or ""):
        return False
    x, y = _service_fqdn(a["host"], namespace, state), _service_fqdn(b["host"], namespace, state)
    return x is not None and x == y


def _service_fqdn(host, namespace, state):
    """A host name as the fully qualified name of a Service of the state, searched as a pod of `namespace`
    searches (`<ns>.svc.cluster.local`, `svc.cluster.local`, `cluster.local`); None when it names none."""
    name = host.rstrip(".").lower()
    if re.fullmatch(r"[0-9.]+|[0-9a-f:]+", name) and any(c in name for c in ".:"):
        # an IP: the Service whose cluster IP it is (unique in the cluster), whatever its namespace
        held = [svc for (kind, _), items in state.by_kind.items() if kind == "Service" for svc in items
                if service_ip(svc) and (service_ip(svc) == name or name in ((svc.get("spec") or {}).get("clusterIPs") or []))]
        if len(held) != 1:
            return None  # no Service, or several claiming it (a capture that cannot be a cluster's): none
        return f"{held[0]['metadata'].get('name')}.{held[0]['metadata'].get('namespace')}.svc.cluster.local"
    if name.endswith(".svc.cluster.local"):
        name = name[:-len(".svc.cluster.local")]
    elif name.endswith(".svc"):
        name = name[:-len(".svc")]
    parts = name.split(".")
    if len(parts) == 1 and namespace:
        parts.append(namespace)
    if len(parts) != 2 or state.get({"kind": "Service", "namespace": parts[1], "name": parts[0]}) is None:
        return None
    return f"{parts[0]}.{parts[1]}.svc.cluster.local"


def unlimited(path, observed):
    """Whether a resource limit a fault lowered is now absent: a container with no limit is bounded by its
    node, never by a limit, so "at least the healthy limit" holds."""
    keys = [s for s in path if isinstance(s, str)]
    return len(keys) >= 2 and keys[-2] == "limits" and "resources" in keys and \
        (observed is MISSING or observed is None)


def port_by_number(obj, path, item):
    """A change's path into a Service port named as before, pointed instead at the one port that serves on
    the same number and protocol when no port has that name any more (renamed, or recreated unnamed); the path
    unchanged when there is none, or several (two protocols on one number: the name told them apart)."""
    ports = (obj.get("spec") or {}).get("ports")
    if not isinstance(ports, list):
        return path
    found = [p for p in ports if isinstance(p, dict) and same(p.get("port"), item["port"])
             and str(p.get("protocol") or "TCP") == item["protocol"]]
    if len(found) != 1:
        return path
    return [*path[:2], ["port", found[0].get("port")], *path[3:]]


def application_check(spec, state, checks):
    """The whole application serves, not only what the faults touched: a fix that breaks another workload or
    Service of the topology is no fix. Every workload deployed with replicas has finished its rollout, and
    every Service that selects one of them still selects ready pods and reaches their ports, as a ClusterIP
    Service (not turned into an ExternalName one). The workloads and services the mitigation already reads
    (`health.ready`, `health.service`) are left to their own checks."""
    m = spec["mitigation"]
    read = {(r["kind"], r["namespace"], r["name"]) for r in m["ready"] + m["services"]}
    running = {(w["namespace"], w["name"]) for w in spec["workloads"]
               if (w["kind"] != "Pod" or w.get("bare")) and w["min_replicas"] > 0}
    broken = []
    for w in spec["workloads"]:
        if (w["namespace"], w["name"]) not in running or (w["kind"], w["namespace"], w["name"]) in read:
            continue
        obj = state.get(w)
        if obj is not None and not terminating(obj) and not workload_ready(obj):
            broken.append(f"{ref_text(w)} not ready")
        elif obj is not None and not terminating(obj) and w["kind"] != "Pod":
            problem = settled_problem(obj, state)  # stable since the fix, as health.ready's workloads are
            if problem:
                broken.append(f"{ref_text(w)} not settled: {problem}")
    # every other workload runs what it ran, as health.program's do, and no container limit is squeezed below
    # its healthy one (`mitigated when only` grades neither)
    for entry in [] if m.get("only") else m.get("application", []):
        obj = state.get(entry["object"])
        if obj is None or terminating(obj):
            continue  # the safeguards say it
        problem = program_problem(entry, obj, state)
        if problem:
            broken.append(f"{ref_text(entry['object'])} no longer runs what it ran: {problem}")
        elif program_idle(entry, obj, state):
            broken.append(f"{ref_text(entry['object'])} no longer runs: {program_idle(entry, obj, state)}")
        lowered = limits_lowered(entry.get("limits") or {}, obj)
        if lowered:
            broken.append(f"{ref_text(entry['object'])}: {lowered}")
    for s in spec["services"]:
        if not s["selector"] or (s["namespace"], s["component"]) not in running:
            continue
        faulted = ("Service", s["namespace"], s["name"]) in read
        obj = state.get(s)
        if obj is None or terminating(obj):
            continue  # the safeguards say it
        if (obj.get("spec") or {}).get("type") == "ExternalName":
            broken.append(f"{ref_text(s)} turned into an ExternalName Service")
            continue
        pods = [p for p in selected_pods(obj, state) if pod_ready(p)]
        if not pods and faulted:
            pods = selected_pods(obj, state)  # whether they are ready is health.service's to say
        elif not pods:
            broken.append(f"{ref_text(s)} selects no ready pod")
            continue
        # a Service a fault acts on keeps, beside what the fault changed, the meaning of its other fields: each
        # healthy port on its number and protocol, leading where it did (a field the fault changed and the
        # scenario or the fault kind judges otherwise is left to that check)
        moved = ports_moved(_unjudged_ports(s, m) if faulted else s.get("ports") or [], obj, pods)
        if moved:
            broken.append(f"{ref_text(s)}: {moved}")
        stranded = local_traffic_stranded(obj, pods, state, s.get("component"))
        if stranded:
            broken.append(f"{ref_text(s)}: {stranded}")
    checks.append({"id": "health.application", "passed": not broken, "detail": "; ".join(broken[:5]) + (
        f"; and {len(broken) - 5} more" if len(broken) > 5 else "") if broken else
        "every workload of the application ready, every Service selecting ready pods and reaching their ports"})


def local_traffic_stranded(service, pods, state, component=None):
    """Where a Service routes in-cluster traffic to node-local endpoints only (`internalTrafficPolicy: Local`:
    kube-proxy drops a connection from a node that runs none of its ready endpoints), the first node running a
    client of it that holds none of them, as text; None when every such node holds one, or the Service routes
    cluster-wide (`Cluster`, the default). Its clients: the pods of the workloads the call graph says call
    `component` (`state.traffic`), else (it names none) every pod of its namespace; a pod whose node the state
    does not tell is not read."""
    if (service.get("spec") or {}).get("internalTrafficPolicy") != "Local":
        return None
    served = {at(p, ["spec", "nodeName"]) for p in pods if pod_ready(p)}
    namespace = (service.get("metadata") or {}).get("namespace")
    callers = {a for a, b in (getattr(state, "traffic", None) or ((), ()))[0] if b == component and a != component}
    clients = [p for kind in ("Deployment", "StatefulSet", "DaemonSet")
               for w in state.by_kind.get((kind, namespace), [])
               if (w.get("metadata") or {}).get("name") in callers for p in workload_pods(w, state)] + \
        [p for p in state.by_kind.get(("Pod", namespace), []) if (p.get("metadata") or {}).get("name") in callers]
    for pod in clients or state.by_kind.get(("Pod", namespace), []):
        node = at(pod, ["spec", "nodeName"])
        if isinstance(node, str) and node and node not in served and not terminating(pod) and \
                (pod.get("status") or {}).get("phase") in ("Running", "Pending", None):
            return f"internalTrafficPolicy Local leaves {pod['metadata'].get('name')} on node {node} without an " \
                "endpoint on its node: its calls are dropped"
    return None


def _unjudged_ports(service, m):
    """A faulted Service's healthy ports as the collateral check reads them: a port whose number a statement
    of the scenario or an acceptance judges is left out, and so is the target of one whose target it judges."""
    judged = {}
    for fault in m["faults"]:
        for entry in fault["fields"]:
            ref = entry["object"]
            if (ref["kind"], ref["namespace"], ref["name"]) != ("Service", service["namespace"], service["name"]):
                continue
            for change in entry["changes"]:
                item = change.get("port_item") or {}
                path = change["path"]
                if not item and len(path) > 2 and isinstance(path[2], list) and path[2][0] == "port":
                    item = {"port": path[2][1], "protocol": "TCP"}
                leaf = change["path"][-1] if change["path"] else None
                if (change.get("governed_by") or change.get("accept")) and item:
                    judged[(str(item.get("port")), str(item.get("protocol")))] = leaf
    out = []
    for port in service.get("ports") or []:
        what = judged.get((str(port["port"]), str(port["protocol"])))
        if what == "targetPort":
            out.append({**port, "targetPort": None})
        elif what is None:
            out.append(port)
    return out


def ports_moved(healthy, obj, pods):
    """How a Service's ports differ in meaning from its healthy ones (None when they do not): each healthy
    port, by number and protocol, must still lead to the same container port (a name resolved through the
    selected pods' containers of the port's protocol, as the endpoints controller resolves it: a name no ready
    pod's container gives a port of that protocol leads nowhere; a number as it is: a container need not
    declare the port it listens on). Where the spec gives the number the healthy target led to (`number`), the
    target now must lead to that number: a container port renumbered under the name the target gives moves
    the Service's traffic, not the program, which listens where it did."""
    observed = [p for p in with_defaults((obj.get("spec") or {}).get("ports") or [], ["servicePort"])
                if isinstance(p, dict)]
    for want in healthy:
        found = [p for p in observed if same(p.get("port"), want["port"]) and str(p.get("protocol")) == want["protocol"]]
        if len(found) != 1:
            return f"port {shown(want['port'])}/{want['protocol']} gone"
        got = service_target(obj, found[0])
        if want["targetPort"] is None:
            continue  # its target is judged by the fault's check
        names, _ = container_ports(pods, want["protocol"])
        a, b = port_number(want["targetPort"], names), port_number(got, names)
        if isinstance(got, str) and number(got) is None and b is None:
            return f"port {shown(want['port'])} leads to {shown(got)}, which no ready pod's container names as a " \
                f"{want['protocol']} port"
        if want.get("number") is not None and b != want["number"]:
            return f"port {shown(want['port'])} leads to {shown(got)} ({b}), not {shown(want['targetPort'])} " \
                f"({want['number']}), where its pods listen"
        if (a is None or a != b) and not same(want["targetPort"], got):
            return f"port {shown(want['port'])} leads to {shown(got)}, not {shown(want['targetPort'])}"
    return None


def program_kept(keep, obj, options=None):
    """Whether a workload (or a bare Pod, read as the template it is: `as_template`) runs what `keep` (a
    `programs` entry's) says: `owns`, the pod spec's behaviour fields (POD_BEHAVIOUR) read with their defaults
    where the state leaves them out, its containers matched by name or, one renamed, by elimination
    (`containers_named`), and no container or init container beyond the healthy ones (an added one runs too).
    `options` ({container name, or `*` for each: option}) are the options a fault's harm is (`harm_option`): its
    own check judges them, so the container's command and arguments are read without them (and their values)."""
    obj = as_template(containers_named(obj, kept_names(keep)))
    template = at(obj, ["spec", "template"])
    pod = at(obj, ["spec", "template", "spec"])
    if isinstance(pod, dict) and isinstance(template, dict):
        pod = {**{k: v for k, v in POD_BEHAVIOUR.items() if v is not None},
               **{k: v for k, v in pod.items() if v is not None}}
        if options and isinstance(pod.get("containers"), list):
            pod["containers"] = [_without_option(c, options.get(c.get("name"), options.get("*")))
                                 if isinstance(c, dict) else c for c in pod["containers"]]
        obj = {**obj, "spec": {**obj["spec"], "template": {**template, "spec": pod}}}
    for key, names in kept_names(keep).items():
        observed = pod.get(key) if isinstance(pod, dict) else None
        if any(isinstance(c, dict) and c.get("name") not in names for c in observed or []):
            return False
    return owns(keep, obj)


def program_idle(entry, obj, state=None):
    """Why a workload a `programs` entry reads runs its program no more, None when it runs: a CronJob the
    healthy application runs on a schedule (`runs`) suspended, or on a schedule that never fires."""
    if not (entry.get("runs") and obj is not None and obj.get("kind") == "CronJob"):
        return None
    return cronjob_idle(obj) or cadence_problem(entry.get("cadence") or {}, obj, state)


# the least time a run's pod takes to be scheduled, pull its image and start: a job deadline the healthy jobs ran
# without, set shorter than this, kills every run
CRON_MIN_RUN = 60
# the CronJob controller looks for missed runs every ten seconds: a starting deadline shorter than that may skip
# every run (the Kubernetes documentation's warning)
CRON_MIN_STARTING_DEADLINE = 10


def _minutes(value):
    if value is None:
        return "never"
    for unit, size in (("day", 1440), ("hour", 60)):
        if value >= size and value % size == 0:
            return f"{value // size:g} {unit}{'s' if value != size else ''}"
    return f"{value:g} minute{'s' if value != 1 else ''}"


def longest_run(obj, state):
    """The longest a finished Job of a CronJob took (its `completionTime` after its `startTime`), in seconds;
    None when the state shows none."""
    if state is None:
        return None
    namespace, name = (obj.get("metadata") or {}).get("namespace") or None, (obj.get("metadata") or {}).get("name")
    runs = []
    for job in state.by_kind.get(("Job", namespace), []):
        owners = (job.get("metadata") or {}).get("ownerReferences") or []
        if any(isinstance(o, dict) and o.get("kind") == "CronJob" and o.get("name") == name for o in owners):
            status = job.get("status") or {}
            start, end = _instant(status.get("startTime")), _instant(status.get("completionTime"))
            if start is not None and end is not None and end >= start:
                runs.append(end - start)
    return max(runs) if runs else None


def cadence_problem(cadence, obj, state=None):
    """Why a CronJob no longer runs on its healthy cadence or its runs can no longer finish (None when they
    do), against the healthy values `cadence` records: its schedule leaves a longer wait between runs than
    the healthy one (`cron_longest_wait`: a date that rarely or never comes, `@yearly`, the 29th of
    February), a starting deadline the controller cannot meet (below CRON_MIN_STARTING_DEADLINE seconds)
    where the healthy one could, its jobs made to start no pod (suspended, `parallelism: 0`, `completions: 0`), or a job
    deadline (`activeDeadlineSeconds`) shorter than the healthy one, or one the healthy jobs ran without
    below the longest run the state shows finished."""
    spec = obj.get("spec") if isinstance(obj.get("spec"), dict) else {}
    job = at(obj, ["spec", "jobTemplate", "spec"])
    job = job if isinstance(job, dict) else {}
    if "schedule" in cadence:
        healthy, now = cron_longest_wait(cadence["schedule"]), cron_longest_wait(spec.get("schedule"))
        if healthy and now != 0 and (now is None or now > healthy):
            return (f"its schedule {spec.get('schedule')!r} waits up to {_minutes(now)} between runs, where the "
                    f"healthy {cadence['schedule']!r} waits at most {_minutes(healthy)}")
    deadline, healthy = number(spec.get("startingDeadlineSeconds")), number(cadence.get("startingDeadlineSeconds"))
    if deadline is not None and deadline < CRON_MIN_STARTING_DEADLINE and (healthy is None or deadline < healthy):
        return (f"its startingDeadlineSeconds {shown(deadline)} is shorter than the controller's "
                f"{CRON_MIN_STARTING_DEADLINE}s check: a run may never start")
    if job.get("suspend") is True:
        return "its jobs are created suspended: they start no pod"
    if number(job.get("parallelism")) == 0:
        return "its jobs' parallelism is 0: they start no pod"
    if number(job.get("completions")) == 0:
        return "its jobs' completions is 0: they complete at once, running no pod"
    deadline, healthy = number(job.get("activeDeadlineSeconds")), number(cadence.get("activeDeadlineSeconds"))
    if deadline is not None and healthy is not None and deadline < healthy:
        return (f"its jobs' activeDeadlineSeconds {shown(deadline)} is below the healthy {shown(healthy)}: "
                "a run is killed before it can finish")
    if deadline is not None and healthy is None:
        longest = longest_run(obj, state)
        floor = max(longest or 0, CRON_MIN_RUN)
        if deadline < floor:
            return (f"its jobs' activeDeadlineSeconds {shown(deadline)}, which the healthy jobs ran without, is "
                    f"below {shown(floor)}s: a run is killed before it can finish")
    return None


def _without_option(container, option):
    """A container with `option` (`--opt VALUE`, `--opt=VALUE`) taken out of its command and arguments; a list
    left empty is none."""
    if not option:
        return container
    out = dict(container)
    for key in ("command", "args"):
        words = container.get(key)
        if not isinstance(words, list):
            continue
        kept, skip = [], False
        for w in words:
            if skip:
                skip = False
            elif w == option:
                skip = True
            elif not (isinstance(w, str) and w.startswith(option + "=")):
                kept.append(w)
        if kept:
            out[key] = kept
        else:
            out.pop(key, None)
    return out


def option_value(container, env, option):
    """The value a container's program gets for `option` (`--opt VALUE` or `--opt=VALUE` among its command and
    arguments, the last one given), each word's `$(NAME)` expanded from its environment `env` as the kubelet
    expands them (`expand_env`); None when none gives it."""
    words = [expand_env(w, env) if isinstance(w, str) else str(w)
             for key in ("command", "args") for w in (container.get(key) or [] if isinstance(container.get(key), list) else [])]
    value = None
    for i, w in enumerate(words):
        if w == option:
            value = words[i + 1] if i + 1 < len(words) else ""
        elif w.startswith(option + "="):
            value = w[len(option) + 1:]
    return value


def option_relieved(fault, state):
    """Whether the option a fault's harm is (`harm_option`: `--requirepass`) no longer acts on its container:
    the program gets none, or an empty value, its `$(NAME)` expanded from the container's environment
    (`container_env`, the Secret's value as the state holds it). (ok, detail), None for a fault without one."""
    spec = fault.get("option")
    if not spec:
        return None
    ref, option = spec["object"], spec["option"]
    obj = state.get(ref)
    if obj is None or terminating(obj):
        return False, f"{ref_text(ref)} is {'missing' if obj is None else 'being deleted'}"
    pod = pod_spec(obj)
    namespace = (obj.get("metadata") or {}).get("namespace")
    containers = [c for c in pod.get("containers") or [] if isinstance(c, dict)
                  and spec.get("container") in (None, c.get("name"))]
    if not containers:
        return False, f"{ref_text(ref)} has no container {spec.get('container')}"
    for c in containers:
        env = container_env(c, state, namespace, pod)
        if env is None:
            return False, f"{ref_text(ref)} container {c.get('name')}'s environment names a source that is missing"
        value = option_value(c, {k: v for k, v in env.items() if v is not None}, option)
        if value:
            return False, f"{ref_text(ref)} container {c.get('name')} still gets {option} {shown(value)}"
    return True, f"{ref_text(ref)}'s program gets no {option}, or an empty one: the fault no longer acts"


def env_changed(envs, obj, state):
    """The first environment variable a workload's containers (or a bare Pod's) write whose value differs in
    meaning from its healthy one, as text; None when there is none. `envs`: container name to its healthy `env`
    and `envFrom`; each variable the healthy `env` writes as a `value` is compared, resolved as the kubelet
    resolves it (`container_env`: `$(NAME)` expanded) with the value the container gets now from whatever source;
    an address naming the same Service (`same_address`) is the same value, a value the state cannot tell is not
    compared, a variable removed differs. A variable a fault changes (`open`) is its check's, one read from a
    ConfigMap or a Secret is judged where that object is, and so is one whose healthy value expands either."""
    namespace = (obj.get("metadata") or {}).get("namespace")
    pod = pod_spec(obj)
    for c in pod.get("containers") or []:
        want = envs.get(str(c.get("name"))) if isinstance(c, dict) else None
        if want is None:
            continue
        healthy, got = container_env(want, state, namespace, pod), container_env(c, state, namespace, pod)
        if healthy is None or got is None:
            continue  # a source missing: the container does not start, which readiness says
        # the values the container spec writes: one read from a ConfigMap or a Secret is judged where that object
        # is (a fault's readers, the references kept), which may be another one holding the healthy data now
        declared = {e.get("name"): e.get("value") for e in want.get("env") or [] if isinstance(e, dict)}
        opened = set(want.get("open") or []) | set(_env_sourced(want))
        opened |= {n for n, raw in declared.items() if isinstance(raw, str) and any(f"$({o})" in raw for o in opened)}
        for name, value in healthy.items():
            if name not in declared or not isinstance(value, str) or name in opened:
                continue  # the Services' variables, a value read from elsewhere or a fault's, one the state cannot tell
            if name not in got:
                return f"container {c.get('name')}'s {name} unset"
            if isinstance(value, str) and isinstance(got[name], str) and \
                    not same_address(value, got[name], namespace, state):
                return f"container {c.get('name')}'s {name} is {shown(got[name])}, not {shown(value)}"
        added = env_added(want, healthy, got)
        if added:
            return f"container {c.get('name')} given {added}, which its healthy spec does not set"
    return None


# Variables a program reads whatever its own code: its runtime's, its loader's, its HTTP, gRPC, TLS and
# OpenTelemetry libraries' (grpc-go and grpc-js read grpc_proxy and https_proxy; the OpenTelemetry SDKs their
# OTEL_ configuration). One the healthy spec never set, added, changes what the program does.
PLATFORM_ENV = frozenset(n for name in (
    "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY", "GRPC_PROXY", "SSL_CERT_FILE", "SSL_CERT_DIR",
    "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE", "NODE_EXTRA_CA_CERTS", "NODE_TLS_REJECT_UNAUTHORIZED", "NODE_OPTIONS",
    "NODE_ENV", "JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "JDK_JAVA_OPTIONS", "JAVA_OPTS", "PYTHONPATH", "PYTHONHOME",
    "PYTHONSTARTUP", "PYTHONOPTIMIZE", "GODEBUG", "GOMAXPROCS", "GOGC", "GOMEMLIMIT", "GOTRACEBACK", "RUBYOPT",
    "PERL5OPT", "PATH", "HOME", "TZ", "LANG", "TMPDIR", "OTEL_SDK_DISABLED", "OTEL_TRACES_EXPORTER",
    "OTEL_METRICS_EXPORTER", "OTEL_LOGS_EXPORTER", "OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_PROTOCOL",
    "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", "OTEL_EXPORTER_OTLP_LOGS_ENDPOINT",
    "OTEL_EXPORTER_OTLP_HEADERS", "OTEL_TRACES_SAMPLER", "OTEL_TRACES_SAMPLER_ARG", "OTEL_PROPAGATORS",
    "OTEL_SERVICE_NAME", "OTEL_RESOURCE_ATTRIBUTES", "OTEL_METRIC_EXPORT_INTERVAL", "OTEL_BSP_SCHEDULE_DELAY")
    for n in (name, name.lower()))
# whole families a runtime or library reads by prefix (the dynamic loader's, glibc's allocator, gRPC core's,
# .NET's)
PLATFORM_ENV_PREFIXES = ("GRPC_", "LD_", "MALLOC_", "DOTNET_", "ASPNETCORE_", "COMPLUS_")


def env_added(want, healthy, got):
    """The first variable a container gets now (`got`, as `container_env` makes it) that its healthy one
    (`healthy`, from the healthy `env` and `envFrom` `want`) does not, and that a program reads whatever its
    own code (`PLATFORM_ENV`: a proxy, `HTTPS_PROXY`, `grpc_proxy`, reroutes every call; a runtime option,
    `JAVA_TOOL_OPTIONS`, `NODE_OPTIONS`, `OTEL_SDK_DISABLED`, changes what it does), as text; None when there is
    none. One added is a change of the program, as a command is; a name no library reads (a helper another
    variable expands, `$(PART)`) reaches only a program that asks for it, which the healthy one did not. A
    variable a fault changes (`open`) is its check's."""
    opened = set(want.get("open") or [])
    for name in sorted(got):
        if name in healthy or name in opened:
            continue
        if name in PLATFORM_ENV or name.upper().startswith(PLATFORM_ENV_PREFIXES):
            return f"{name}={shown(got[name])}" if isinstance(got[name], str) else name
    return None


def mounts_added(mounts, obj):
    """The first path a workload's container (or init container) mounts a volume at that its healthy one does
    not (`mounts`: container name to its healthy mount paths), as text; None when there is none. A volume
    mounted over a path hides what the image holds there (an `emptyDir` over nginx's document root serves
    nothing, its pods still ready): a change of what the program runs on, as a command is."""
    pod = pod_spec(obj)
    for key in CONTAINER_LISTS:
        for c in pod.get(key) or [] if isinstance(pod.get(key), list) else []:
            want = mounts.get(str(c.get("name"))) if isinstance(c, dict) else None
            if want is None:
                continue  # a container the healthy spec has not: the program check says it
            for m in c.get("volumeMounts") or [] if isinstance(c.get("volumeMounts"), list) else []:
                path = (str(m.get("mountPath")).rstrip("/") or "/") if isinstance(m, dict) else None
                if path is not None and path not in want:
                    return f"container {c.get('name')} mounts the volume {m.get('name')} over {path}, which its healthy spec does not mount"
    return None


def _covered(path, mounts):
    """Whether a volume mounted at one of `mounts` (paths) holds `path`: mounted there or over a directory above."""
    return any(m == "/" or path == m or path.startswith(m.rstrip("/") + "/") for m in mounts)


def _capabilities_dropped(sc):
    """The capabilities a container's securityContext takes from it (`drop`, `ALL` for every one), less those it
    adds back: a set of names, `ALL` among them for every capability not added."""
    caps = sc.get("capabilities") if isinstance(sc.get("capabilities"), dict) else {}
    drop = {str(c).upper().removeprefix("CAP_") for c in caps.get("drop") or [] if isinstance(c, str)} \
        if isinstance(caps.get("drop"), list) else set()
    add = {str(c).upper().removeprefix("CAP_") for c in caps.get("add") or [] if isinstance(c, str)} \
        if isinstance(caps.get("add"), list) else set()
    return drop - add, add


def security_problems(container, pod_sc, sc, mounts):
    """What `container` cannot do for its program under its securityContext `sc` and its pod's
    `pod_sc` (the container's fields winning), with volumes mounted at `mounts` (writable ones), as
    {what: text}; empty where it can, or where the image is not known (IMAGE_FILESYSTEM) but for what holds of
    any image. The kubelet refuses to start a container that must run as non-root (`runAsNonRoot`) as uid 0, or
    whose image's user is root or a name it cannot check; a read-only root filesystem refuses the writes of the
    program outside its volumes (the image's declared VOLUMEs are writable directories of the node); a uid other
    than root and the owner of the data paths it writes cannot write them (unless a volume covers them); a
    program started as root whose entrypoint switches user loses that switch with SETUID or SETGID dropped.
    The capabilities are judged only where the image's entrypoint runs (no `command` of its own), the paths
    where it does too and, for a store whose writes its configuration decides (`configured`: redis' and
    valkey's `save`), where it runs with no arguments but its image's CMD."""
    pod_sc = pod_sc if isinstance(pod_sc, dict) else {}
    sc = sc if isinstance(sc, dict) else {}
    image = container.get("image") if isinstance(container, dict) else None
    known = image_filesystem(image)
    if known is not None:
        defaults = image_defaults(image) or ([], [])
        command, args = container.get("command"), container.get("args")
        entrypoint = empty(command) or command == defaults[0]
        default = entrypoint and ((empty(command) and empty(args)) or args == defaults[1])
        if not entrypoint:
            known = {**known, "writes": (), "owned": (), "caps": ()}
        elif known.get("configured") and not default:
            known = {**known, "writes": (), "owned": ()}
    user = sc.get("runAsUser") if sc.get("runAsUser") is not None else pod_sc.get("runAsUser")
    non_root = sc.get("runAsNonRoot") if sc.get("runAsNonRoot") is not None else pod_sc.get("runAsNonRoot")
    uid = number(user) if user is not None else None
    out = {}
    if non_root is True:
        if uid == 0:
            out["runAsNonRoot"] = "must run as non-root (runAsNonRoot) as uid 0: the kubelet refuses to start it"
        elif uid is None and known is not None:
            image_user = known["user"]
            if image_user is None or image_user in ("root", "0"):
                out["runAsNonRoot"] = "must run as non-root (runAsNonRoot) while its image runs as root: the kubelet " \
                    "refuses to start it"
            elif not str(image_user).isdigit():
                out["runAsNonRoot"] = f"must run as non-root (runAsNonRoot) while its image's user is the name " \
                    f"{shown(image_user)}, which the kubelet cannot check: it refuses to start it"
    if known is None:
        return out
    writable = [m for m in mounts] + list(known["volumes"])
    if sc.get("readOnlyRootFilesystem") is True:
        refused = [w for w in known["writes"] if not _covered(w, writable)]
        if refused:
            out["readOnlyRootFilesystem"] = f"has a read-only root filesystem while its program writes to " \
                f"{', '.join(refused)}, which no volume covers"
    as_uid = uid if uid is not None else (0 if known["user"] is None else None)
    if as_uid is not None and as_uid not in (0, known["owner"]):
        refused = [w for w in known["owned"] if not _covered(w, mounts)]
        if refused:
            out["runAsUser"] = f"runs as uid {shown(user)}, which cannot write {', '.join(refused)} (its image's " \
                f"uid {known['owner']} owns it)"
    if as_uid == 0 and known["caps"]:
        dropped, added = _capabilities_dropped(sc)
        lost = [c for c in known["caps"] if c in dropped or ("ALL" in dropped and c not in added)]
        if lost:
            out["capabilities"] = f"starts as root with the capabilities {', '.join(lost)} dropped, which its " \
                "entrypoint needs to start its program"
    return out


def security_restricted(security, obj):
    """The first container of a workload whose securityContext (or its pod's) keeps its program from doing
    what it did with its healthy one (`security`: the healthy pod's and containers' securityContexts), as text;
    None when there is none. Judged by `security_problems`, the container's image and its writable volumes
    as they are now: a problem the healthy securityContexts have too is none the change made. Hardening the
    program tolerates (`allowPrivilegeEscalation: false`, a seccomp profile, capabilities it does not need
    dropped) passes."""
    if not isinstance(security, dict):
        return None
    pod = pod_spec(obj)
    pod_sc = pod.get("securityContext") if isinstance(pod.get("securityContext"), dict) else {}
    healthy_pod = security.get("pod") if isinstance(security.get("pod"), dict) else {}
    for key in CONTAINER_LISTS:
        for c in pod.get(key) or [] if isinstance(pod.get(key), list) else []:
            if not isinstance(c, dict) or str(c.get("name")) not in (security.get("containers") or {}):
                continue
            healthy = security["containers"][str(c.get("name"))]
            mounts = [str(m.get("mountPath")).rstrip("/") or "/" for m in c.get("volumeMounts") or []
                      if isinstance(m, dict) and not m.get("readOnly")] if isinstance(c.get("volumeMounts"), list) else []
            now = security_problems(c, pod_sc, c.get("securityContext"), mounts)
            before = security_problems(c, healthy_pod, healthy, mounts)
            for what, text in now.items():
                if what not in before:
                    return f"container {c.get('name')} {text}: its securityContext restricts it where the healthy " \
                        "one did not"
    return None


def hooks_added(keep, obj):
    """The first lifecycle hook (`postStart`, `preStop`) a workload's container runs that its healthy one does
    not, as text; None when there is none. A hook is a command the kubelet runs in the container (`exec`) or a
    request it makes to it: one added changes what the program does, as a command does (`owns` reads the hooks
    the healthy container has; this, one added beside them)."""
    observed = pod_spec(obj)
    for key, wanted in pod_spec(keep).items():
        if key not in CONTAINER_LISTS or not isinstance(wanted, list):
            continue
        for want in wanted:
            got = next((c for c in observed.get(key) or [] if isinstance(c, dict)
                        and c.get("name") == want.get("name")), None)
            hooks = (got or {}).get("lifecycle")
            healthy = want.get("lifecycle") if isinstance(want.get("lifecycle"), dict) else {}
            for hook in sorted(hooks) if isinstance(hooks, dict) else []:
                if not empty(hooks[hook]) and hook not in healthy:
                    return f"container {want.get('name')} given a {hook} hook its healthy spec has not"
    return None


# exec commands that exit non-zero whatever the container does: a probe running one never succeeds
NEVER_SUCCEEDING = ({"false"}, {"/bin/false"}, {"/usr/bin/false"})


def probe_never_succeeds(action, serves):
    """Why a probe's check (`probe_action`, named ports resolved) can never succeed, None when it may: a port
    none of `serves` (the ports its container serves when healthy: `unserved_port`), or an exec of a command
    that always fails (`false`, `sh -c 'exit 1'`)."""
    port = unserved_port(action, serves)
    if port is not None:
        return f"checks port {shown(port)}, which the container does not serve (it serves " \
            f"{', '.join(str(p) for p in serves)})"
    command = ((action or {}).get("exec") or {}).get("command") if isinstance(action, dict) else None
    if isinstance(command, list) and command and all(isinstance(a, str) for a in command):
        if len(command) == 3 and command[0] in ("sh", "/bin/sh", "bash", "/bin/bash") and command[1] == "-c":
            command = [command[2].strip()]
        text = command[0].strip() if len(command) == 1 else None
        code = text.split()[1] if text and len(text.split()) == 2 and text.split()[0] == "exit" else None
        if {text} in NEVER_SUCCEEDING or (code is not None and code.isdigit() and int(code) != 0):
            return f"runs {shown(command[0] if len(command) == 1 else command)}, which always fails"
    return None


def probes_added(probes, obj):
    """The first liveness or startup probe of a workload's container that differs from its healthy one (one
    added, or its check changed; `probes`: container name to its healthy probes and the ports it serves) and
    can never succeed (`probe_never_succeeds`), as text; None when there is none. The kubelet restarts a
    container whose liveness (or startup) probe keeps failing, once its delay has passed: a check that cannot
    succeed, delayed past the capture, is a restart loop to come, as a fault's probe is. A probe that checks
    what the healthy one checks (its timing aside), one on a port the container serves, or a command that may
    succeed, passes."""
    pod = pod_spec(obj)
    for key in CONTAINER_LISTS:
        for c in pod.get(key) or [] if isinstance(pod.get(key), list) else []:
            want = probes.get(str(c.get("name"))) if isinstance(c, dict) else None
            if want is None:
                continue
            for kind in ("livenessProbe", "startupProbe"):
                action = probe_action(c.get(kind), c)
                if action is None or probe_never_fails(c.get(kind)) or action == probe_action(want.get(kind), c):
                    continue
                why = probe_never_succeeds(action, want.get("serves") or [])
                if why:
                    return f"container {c.get('name')}'s {kind} {why}: the kubelet restarts it once the probe acts"
    return None


def _env_sourced(container):
    """The variables a container's healthy `env` reads from another object (`valueFrom`)."""
    return [e.get("name") for e in container.get("env") or [] if isinstance(e, dict) and "value" not in e]


def pinned_elsewhere(healthy, observed, state):
    """Why an image `observed` that pins the tag `healthy` names to a digest (`repo:tag@sha256:X` for
    `repo:tag`, one image to `same_image`) is another image: the runtime pulls it by its digest alone, and the
    state's pods show that tag running as other digests only (`tag_digests`, from their `imageID`). None where
    it is no such pin, or the state shows the tag as no digest (an offline state: the digest is taken as the
    tag's)."""
    if not isinstance(healthy, str) or not isinstance(observed, str) or image_digest(healthy) is not None:
        return None
    pinned = image_digest(observed)
    tag = image_ref(observed).partition("@")[0] if pinned else None
    seen = tag_digests(state).get(tag) if tag == image_ref(healthy) and state is not None else None
    if seen and pinned not in seen:
        return f"{shown(observed)} runs the digest {pinned}, not the one {shown(healthy)} runs here " \
            f"({', '.join(sorted(seen))})"
    return None


def images_pinned_elsewhere(keep, obj, state):
    """The first container of a workload whose image pins its healthy tag to a digest the tag does not run as
    (`pinned_elsewhere`), as text; None when there is none."""
    observed = pod_spec(containers_named(obj, kept_names(keep)))
    for key, wanted in pod_spec(keep).items():
        for want in wanted if key in ("containers", "initContainers") and isinstance(wanted, list) else ():
            got = next((c for c in observed.get(key) or [] if isinstance(c, dict)
                        and c.get("name") == want.get("name")), None)
            why = pinned_elsewhere(want.get("image"), (got or {}).get("image"), state)
            if why:
                return f"container {want.get('name')}: {why}"
    return None


def program_problem(entry, obj, state):
    """How a workload no longer runs what its `programs` entry says (None when it does): its program
    (`program_kept`, its images as the state's pods show them run: `images_pinned_elsewhere`) or its containers'
    environment (`env_changed`)."""
    if not program_kept(entry["keep"], obj, entry.get("options")):
        return ("its containers' images, commands or arguments or lifecycle hooks, its containers, its pod labels, "
                "or how its pods resolve names, whose network and identity they use and how long they may run, differ from the healthy ones")
    pinned = images_pinned_elsewhere(entry["keep"], obj, state)
    if pinned:
        return pinned
    named = containers_named(obj, kept_names(entry["keep"]))
    hooked = hooks_added(entry["keep"], named)
    if hooked:
        return hooked
    patched = pods_patched(obj, state)
    if patched:
        return patched
    probed = probes_added(entry.get("probes") or {}, named)
    if probed:
        return probed
    mounted = mounts_added(entry.get("mounts") or {}, named)
    if mounted:
        return mounted
    restricted = security_restricted(entry.get("security"), obj)
    if restricted:
        return restricted
    changed = env_changed(entry.get("env") or {}, named, state)
    if changed:
        return f"its environment: {changed}"
    return runs_unplaced(entry, obj, state)


def pods_patched(obj, state):
    """Why a running pod of a Deployment or a StatefulSet runs other than the pod template it was made from
    (None when none does): the fields an update may change on a live pod, a container's `image` (the kubelet
    restarts it with the new one; its controller never reconciles a pod's spec) and `activeDeadlineSeconds`
    (the kubelet kills it that long after it started), patched in place. The template is the pod's
    ReplicaSet's where the state holds it, else the workload's; a StatefulSet's pod of another revision than
    its controller's update revision is not read against the workload's template."""
    if obj.get("kind") not in ("Deployment", "StatefulSet"):
        return None
    meta = obj.get("metadata") or {}
    status = obj.get("status") if isinstance(obj.get("status"), dict) else {}
    for pod in workload_pods(obj, state):
        if (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
            continue
        pod_meta = pod.get("metadata") or {}
        labels = pod_meta.get("labels") if isinstance(pod_meta.get("labels"), dict) else {}
        template = obj
        if obj.get("kind") == "Deployment":
            owner = [o for o in pod_meta.get("ownerReferences") or [] if isinstance(o, dict) and o.get("controller")]
            rs = state.objects.get(("ReplicaSet", meta.get("namespace") or None, str(owner[0].get("name"))))\
                if owner else None
            template = rs if isinstance(rs, dict) else obj
        elif status.get("updateRevision") and labels.get("controller-revision-hash") not in (
                None, status.get("updateRevision")):
            continue
        want, got = pod_spec(template), pod.get("spec") if isinstance(pod.get("spec"), dict) else {}
        name = pod_meta.get("name")
        deadline = number(got.get("activeDeadlineSeconds"))
        healthy = number(want.get("activeDeadlineSeconds"))
        if deadline is not None and (healthy is None or deadline < healthy):
            return f"its pod {name} is patched to be killed {shown(got.get('activeDeadlineSeconds'))} seconds after it started " \
                   "(activeDeadlineSeconds), which its pod template does not say"
        for key in CONTAINER_LISTS:
            theirs = {c.get("name"): c for c in got.get(key) or [] if isinstance(c, dict)}
            for c in want.get(key) or [] if isinstance(want.get(key), list) else []:
                mine = theirs.get(c.get("name")) if isinstance(c, dict) else None
                if mine is None or not isinstance(c.get("image"), str) or not isinstance(mine.get("image"), str):
                    continue
                if not same_image(c["image"], mine["image"]):
                    return f"its pod {name}'s container {c.get('name')} runs {shown(mine['image'])}, patched in " \
                           f"place, not its pod template's {shown(c['image'])}"
    return None


# the fields of a pod spec that say which nodes may run it, beside tolerations (a CronJob's runs: `runs_unplaced`)
RUN_PLACEMENT = ("nodeSelector", "affinity", "nodeName")


def runs_unplaced(entry, obj, state):
    """Why a CronJob the healthy application runs (its `programs` entry's `placement`: the healthy job template's
    RUN_PLACEMENT fields) places its runs' pods where none may run, None when they may: a placement other than
    the healthy one must admit a node of the state (its `nodeName`, node selector and required node affinity
    matched, its scheduling taints and a cordon tolerated); with no Node in the state, another placement is not
    shown to run at all. A pod no node admits stays Pending: the Job runs nothing until its deadline, while the
    CronJob looks scheduled."""
    want = entry.get("placement")
    if want is None or obj is None or obj.get("kind") != "CronJob":
        return None
    pod = pod_spec(obj)
    got = {k: pod.get(k) for k in RUN_PLACEMENT}
    if all((empty(want.get(k)) and empty(got[k])) or json.dumps(want.get(k), sort_keys=True) ==
           json.dumps(got[k], sort_keys=True) for k in RUN_PLACEMENT):
        return None
    nodes = state.by_kind.get(("Node", None), []) if state is not None else []
    if not nodes:
        return "its runs' pods are placed otherwise than the healthy ones (node selector, affinity, node name), " \
               "on nodes the state does not show"
    affinity = got["affinity"] if isinstance(got["affinity"], dict) else {}
    required = (affinity.get("nodeAffinity") or {}).get("requiredDuringSchedulingIgnoredDuringExecution") or {}
    terms = required.get("nodeSelectorTerms") if isinstance(required, dict) else None
    for node in nodes:
        meta = node.get("metadata") or {}
        labels = meta.get("labels") or {}
        if got["nodeName"] and got["nodeName"] != meta.get("name"):
            continue
        if any(labels.get(k) != v for k, v in (got["nodeSelector"] if isinstance(got["nodeSelector"], dict)
                                                else {}).items()):
            continue
        if terms and not any(_node_term_holds(t, node) for t in terms):
            continue
        taints = [t for t in (node.get("spec") or {}).get("taints") or [] if isinstance(t, dict)
                  and t.get("effect") in ("NoSchedule", "NoExecute")]
        if (node.get("spec") or {}).get("unschedulable") and not got["nodeName"]:
            taints.append(UNSCHEDULABLE_TAINT)
        if all(_tolerates(pod.get("tolerations"), t) for t in taints):
            return None
    return "no node of the state admits its runs' pods (node selector, affinity, node name): each run stays Pending"


def limits_lowered(limits, obj):
    """The first container limit of a workload below its healthy one (`limits`: container name to its
    limits), None when there is none: a limit removed is no limit."""
    containers = at(obj, ["spec", "template", "spec", "containers"])
    for c in containers if isinstance(containers, list) else []:
        want = limits.get(str(c.get("name"))) if isinstance(c, dict) else None
        got = at(c, ["resources", "limits"]) if want else None
        for resource, healthy in (want or {}).items():
            now = got.get(resource) if isinstance(got, dict) else None
            if now is None or empty(now):
                continue
            a, b = number(now), number(healthy)
            if a is None or (b is not None and a < b):
                return f"container {c.get('name')}'s {resource} limit {shown(now)}, below its healthy {shown(healthy)}"
    return None


def claim_bound(claim, want, state=None):
    """Whether a PersistentVolumeClaim serves as the claim a fault pointed pods at (`want`, the backend's
    `claims` entry): not being deleted, `Bound`, of another storage class than the fault's (a claim of that
    class never binds) unless the state holds a StorageClass of that name now and the claim is bound to a
    volume (`spec.volumeName`: the class was created and provisioned it), asking at least the fault's
    storage (by value), with at least its access modes."""
    if not isinstance(claim, dict) or terminating(claim):
        return False
    spec = claim.get("spec") if isinstance(claim.get("spec"), dict) else {}
    status = claim.get("status") if isinstance(claim.get("status"), dict) else {}
    if status.get("phase") != "Bound":
        return False
    if spec.get("storageClassName") == want.get("faulty_class"):
        made = state is not None and isinstance(spec.get("storageClassName"), str) and \
            state.get({"kind": "StorageClass", "name": spec["storageClassName"]}) is not None
        if not (made and isinstance(spec.get("volumeName"), str) and spec["volumeName"]):
            return False
    asked = number(((spec.get("resources") or {}).get("requests") or {}).get("storage"))
    needed = number(want.get("storage")) if want.get("storage") is not None else 0.0
    if asked is None or needed is None or asked < needed:
        return False
    modes = spec.get("accessModes") if isinstance(spec.get("accessModes"), list) else []
    return all(m in modes for m in want.get("accessModes") or [])


def claims_kept(entry, obj, state):
    """The volumes of `entry["claims"]` the workload's template mounts from a claim that serves
    (`claim_bound`): by its name as the fault left it, or any other claim of the namespace. A volume mounted
    that way, its mount and the pod's `fsGroup` the fault set beside them are no fault left, unless a container
    mounts it over the content its image serves (`content_hidden`: a new, empty volume over nginx's document
    root serves 403 and 404 while the pods are ready)."""
    kept = set()
    template = at(obj, ["spec", "template", "spec"])
    if not isinstance(template, dict):
        return kept
    hiding = {m.get("name") for key in CONTAINER_LISTS for c in template.get(key) or [] if isinstance(c, dict)
              for m in c.get("volumeMounts") or [] if isinstance(m, dict)
              and content_hidden(c.get("image"), m.get("mountPath"))}
    namespace = (obj.get("metadata") or {}).get("namespace")
    for volume in template.get("volumes") or []:
        want = (entry.get("claims") or {}).get((volume or {}).get("name")) if isinstance(volume, dict) else None
        source = volume.get("persistentVolumeClaim") if want is not None else None
        if isinstance(source, dict) and volume.get("name") not in hiding and claim_bound(
                state.get({"kind": "PersistentVolumeClaim", "namespace": namespace, "name": source.get("claimName")}),
                want, state):
            kept.add(volume["name"])
    return kept


def _claim_change(change, kept):
    """Whether a change concerns only volumes of `kept`: the volume or its mount (by name, or lists of them),
    or the pod's `fsGroup` while a claim is kept."""
    path = change["path"]
    keys = [s for s in path if isinstance(s, str)]
    if not kept:
        return False
    if keys[-2:] == ["securityContext", "fsGroup"]:
        return True
    if not keys or keys[-1] not in ("volumes", "volumeMounts"):
        return False
    named = [s[1] for s in path if isinstance(s, list) and len(s) == 2 and s[0] == "name"]
    if path and isinstance(path[-1], list):
        return bool(named) and named[-1] in kept
    items = change.get("faulty") if isinstance(change.get("faulty"), list) else None
    return bool(items) and all(isinstance(i, dict) and i.get("name") in kept for i in items)


def field_check(entry, state):
    """Every field the fault changed holds its healthy value, or a value the fault (or the scenario)
    accepts; a field the fault added is gone (absent, empty or the API server's default). A ConfigMap's or
    a Secret's key that workloads read (the entry's `readers`) is judged by what they read now, from whichever
    object supplies it: a new ConfigMap the workload reads instead is the fix, the named one restored while
    the workload reads another is none."""
    ref = entry["object"]
    readers = entry.get("readers") or {}
    read = [c for c in entry["changes"] if c["path"][1:2] and c["path"][1] in readers]
    rest = [c for c in entry["changes"] if c not in read]
    wrong = []
    for change in read:
        for where, text, _, why in read_texts(readers[change["path"][1]], state):
            if text is None:
                wrong.append(f"{where}: nothing ({why})")
                continue
            seen = {"kind": ref["kind"], "metadata": {"name": ref["name"], "namespace": ref.get("namespace")},
                    "data": {change["path"][1]: text}}
            ok, why = _fields_hold({**entry, "changes": [change]}, seen, state)
            if not ok:
                wrong.append(f"{where}: {why}")
    if rest or not read:
        ok, why = _fields_hold({**entry, "changes": rest}, None, state)
        if not ok:
            wrong.append(why)
    if wrong:
        return False, "; ".join(wrong[:5]) + (f"; and {len(wrong) - 5} more" if len(wrong) > 5 else "")
    return True, "every field the fault changed is healthy again"


def cluster_dns_ip(state):
    """The cluster IP of the cluster's DNS Service (kube-system's Service labelled `k8s-app: kube-dns`, or
    named kube-dns) as the state holds it: the nameserver the kubelet writes for ClusterFirst. None when the
    state does not hold it."""
    for service in state.by_kind.get(("Service", CLUSTER_DNS[0]), []):
        labels = (service.get("metadata") or {}).get("labels") or {}
        if service["metadata"].get("name") == "kube-dns" or all(labels.get(k) == v for k, v in CLUSTER_DNS[1].items()):
            if service_ip(service):
                return service_ip(service)
    return None


def pod_resolver(pod, namespace, state):
    """The resolver a pod's containers get, as the kubelet writes their resolv.conf (pkg/kubelet/network/dns,
    getPodDNSType and appendDNSConfig): (nameservers, search domains, options). ClusterFirst (the default) is
    the cluster's DNS with the namespace's search domains and `ndots:5`, except on the host network, where it
    is the node's (`Default`); ClusterFirstWithHostNet is the cluster's on any network; `None` is only what
    `dnsConfig` says. `dnsConfig` is merged in: its nameservers and searches appended (duplicates dropped), its
    options overriding. The cluster DNS Service's IP (`cluster_dns_ip`) is the cluster's nameserver. None for
    a policy the API server refuses."""
    policy = pod.get("dnsPolicy") or "ClusterFirst"
    config = pod.get("dnsConfig") if isinstance(pod.get("dnsConfig"), dict) else {}
    if policy == "ClusterFirstWithHostNet" or (policy == "ClusterFirst" and pod.get("hostNetwork") is not True):
        servers, searches = ["<cluster>"], [f"{namespace}.svc.cluster.local", "svc.cluster.local", "cluster.local"]
        options = {"ndots": "5"}
    elif policy in ("ClusterFirst", "Default"):
        servers, searches, options = ["<node>"], ["<node>"], {}
    elif policy == "None":
        servers, searches, options = [], [], {}
    else:
        return None
    dns = cluster_dns_ip(state)
    for server in config.get("nameservers") or []:
        server = "<cluster>" if dns is not None and server == dns else server
        if server not in servers:
            servers.append(server)
    for domain in config.get("searches") or []:
        domain = str(domain).rstrip(".").lower()
        if domain not in searches:
            searches.append(domain)
    for option in config.get("options") or []:
        if isinstance(option, dict) and option.get("name"):
            options[str(option["name"])] = None if option.get("value") is None else str(option["value"])
    return tuple(servers), tuple(searches), tuple(sorted(options.items()))


def dns_path(path):
    """Whether a change's path is a pod's DNS settings (`dnsPolicy`, `dnsConfig`, of a pod or a template)."""
    keys = [k for k in path if isinstance(k, str)]
    return bool(keys) and ("dnsPolicy" in keys[-1:] or "dnsConfig" in keys) and keys[0] == "spec"


def resolver_restored(entry, obj, state):
    """Whether the pods of `obj` resolve names as the healthy ones did (`pod_resolver`), the fault's DNS
    changes (of `entry`, all of them where it is one part of a fault) at their healthy values or absent."""
    now, healthy = resolvers(entry, obj, state)
    return now is not None and now == healthy


def resolver_serves(now, healthy):
    """Whether a pod's resolver (`pod_resolver`) resolves names where the healthy one did: the healthy first
    nameserver first (the resolver asks the next ones only when it does not answer), the healthy search
    domains first, the healthy options kept. Nameservers and searches appended after them (a `dnsConfig`
    beside `ClusterFirst`) change nothing of it; another first nameserver (`Default`: the node's) does."""
    if now is None or healthy is None:
        return False
    (servers, searches, options), (want_servers, want_searches, want_options) = now, healthy
    return servers[:1] == want_servers[:1] and searches[:len(want_searches)] == want_searches and \
        set(want_options) <= set(options)


def resolvers_relieved(fault, state):
    """Whether the pods of each object whose DNS settings a fault changed resolve names again where the healthy
    ones did (`resolver_serves`), whichever of its changes undid that. (ok, detail) each."""
    out = []
    for entry in fault["fields"]:
        if not any(dns_path(c["path"]) for c in entry["changes"]):
            continue
        obj = state.get(entry["object"])
        if obj is None or terminating(obj):
            out.append((False, f"{ref_text(entry['object'])} is {'missing' if obj is None else 'being deleted'}"))
            continue
        now, healthy = resolvers(entry, obj, state)
        ok = resolver_serves(now, healthy)
        out.append((ok, f"{ref_text(entry['object'])}'s pods resolve names " + (
            "where the healthy ones did" if ok else
            f"through {', '.join(now[0]) or 'no nameserver'} first, not {', '.join(healthy[0]) if healthy else '?'}"
            if now is not None else "through a dnsPolicy the API server refuses")))
    return out


def resolvers(entry, obj, state):
    """The resolver the pods of `obj` get now and the one they got with the fault's DNS changes (of `entry`,
    all of them where it is one part of a fault) at their healthy values or absent (`pod_resolver`); (None,
    None) where it changed none."""
    changes = [c for c in entry.get("siblings", entry["changes"]) if dns_path(c["path"])]
    if not changes:
        return None, None
    healthy = json.loads(json.dumps(obj))
    for c in changes:
        *parents, last = c["path"]
        node = healthy
        for key in parents:  # the DNS settings are maps all the way down
            node = node.setdefault(key, {}) if isinstance(node, dict) and isinstance(key, str) else None
        if not isinstance(node, dict) or not isinstance(last, str):
            return None, None
        if c.get("absent") or c.get("healthy") is None:
            node.pop(last, None)
        else:
            node[last] = c["healthy"]
    namespace = (obj.get("metadata") or {}).get("namespace")
    return pod_resolver(pod_spec(obj), namespace, state), pod_resolver(pod_spec(healthy), namespace, state)


def _fields_hold(entry, obj, state):
    """field_check on one object: the state's object the entry names, or `obj` (what a workload reads)."""
    ref = entry["object"]
    obj = state.get(ref) if obj is None else obj
    if obj is None:
        return False, f"{ref_text(ref)} is missing"
    if terminating(obj):
        return False, f"{ref_text(ref)} is being deleted"
    # a container a path names is found by its name, or, renamed, by elimination (`containers_named`)
    obj = containers_named(obj, (getattr(state, "programs", None) or {}).get((ref["kind"], ref.get("namespace"),
                                                                              ref["name"])))
    wrong = []
    kept = claims_kept(entry, obj, state) if entry.get("claims") else set()
    for change in entry["changes"]:
        if change.get("governed_by"):
            continue  # the scenario's own statement about this field decides (its check is in the verdict)
        if change.get("absent") and _claim_change(change, kept):
            continue  # the pods mount a bound claim of the meaning the fault's claim had
        path = change["path"]
        observed = at(obj, path)
        if observed is MISSING and change.get("port_item"):
            path = port_by_number(obj, path, change["port_item"])
            observed = at(obj, path)
        if isinstance(observed, InvalidValue):
            wrong.append(f"{show_path(path)}: {observed.why}")
            continue
        if dns_path(path) and resolver_restored(entry, obj, state):
            continue  # another spelling of the healthy resolver (ClusterFirstWithHostNet off the host network)
        if ref["kind"] == "Namespace" and path == ["metadata", "labels", PSA_ENFORCE]:
            refused = pod_security_refused(obj, state)
            if refused is not None:  # judged by what the level refuses, not by the label's text
                if refused:
                    wrong.append(f"{show_path(path)} is {shown(observed)}, which refuses the pods of "
                                 + ", ".join(refused[:3]) + (f" and {len(refused) - 3} more" if len(refused) > 3 else ""))
                continue
        accept = change.get("accept")
        kind, leaf = ref["kind"], next((s for s in reversed(path) if isinstance(s, str)), None)
        if accept is not None:
            moved = quantity_moved(path, observed, change)
            if moved is not None:  # a quantity: changed far enough, to the healthy side of the fault
                ok = moved
            elif accept["op"] == "changed":  # any value but the fault's (readiness tells whether it works)
                # both sides as the API server stores them: a fix that keeps a field the server would default to
                # the fault's value has still changed the rest
                now = defaulted(observed, kind, path)
                bad = defaulted(change["faulty"], kind, path)
                dead = None
                if probe_action(bad) is not None and probe_action(bad) != probe_action(change.get("healthy")):
                    # the fault changed what the probe checks: the kubelet restarts (or unreadies) on a check that
                    # cannot succeed however late or seldom it runs, so only another check (or none) undoes it
                    container = at(obj, path[:-1])
                    container = container if isinstance(container, dict) else None
                    now, bad = probe_action(now, container), probe_action(bad, container)
                    if unserved_port(bad, change.get("serves")) is not None:
                        # the fault's check is on a port the container does not serve: a check still on one (the
                        # fault's, or another) cannot succeed either, whatever its path or delay
                        dead = unserved_port(now, change.get("serves"))
                ok = dead is None and not (now is not MISSING and now is not None and owns(bad, now, leaf))
                if dead is not None:
                    wrong.append(f"{show_path(path)} checks port {shown(dead)}, which the container does not serve "
                                 f"(it serves {', '.join(str(p) for p in change['serves'])}): it can never succeed")
                    continue
            elif accept["op"] in ("any", "present"):
                ok = compare(observed, accept["op"], None)
            elif accept["op"] in (">=", ">") and unlimited(path, observed):
                ok = True  # no limit is no too-low limit: the container may use what the node has
            elif accept["value"] != "healthy":
                ok = compare(observed, accept["op"], accept["value"])
            elif "healthy" in change:
                ok = compare(observed, accept["op"], change["healthy"])
            else:  # compared with a healthy value that is absent: only absence compares
                ok = gone(observed, path, kind)
        elif change.get("compare") == "flagd":
            ok, why = flag_restored(observed, change["healthy"])
            if not ok:
                wrong.append(f"{show_path(path)}: {why}")
            continue
        elif change.get("absent"):
            ok = gone(observed, path, kind)
        elif ref["kind"] == "Service" and path and path[-1] == "targetPort":
            names, _ = container_ports(selected_pods(obj, state))
            # the healthy target as the number it led to (a name through the healthy containers' ports, which
            # a renumbered container port does not move), where the spec gives it
            led = next((p["number"] for p in ((getattr(state, "healthy_services", None) or {}).get(
                (ref.get("namespace"), ref.get("name"))) or {}).get("ports") or []
                if p.get("number") is not None and same(p.get("targetPort"), change["healthy"])), None)
            ok = observed is not MISSING and port_number(observed, names) is not None and \
                port_number(observed, names) == (led if led is not None else port_number(change["healthy"], names))
        elif leaf == "value" and len(path) >= 3 and path[-3] == "env" and isinstance(change.get("healthy"), str):
            observed = env_value(obj, path, state, ref.get("namespace"))
            ok = isinstance(observed, str) and same_address(change["healthy"], observed, ref.get("namespace"), state)
            if observed is None:
                observed = MISSING
        else:
            now, healthy = defaulted(observed, kind, path), defaulted(change["healthy"], kind, path)
            now, healthy = resolved_ports(obj, path, state, now, healthy)  # a probe's named port: its number
            ok = now is not MISSING and owns(change["healthy"] if healthy is MISSING else healthy, now, leaf)
            if ok and leaf == "image" and pinned_elsewhere(change["healthy"], now, state):
                wrong.append(f"{show_path(path)}: {pinned_elsewhere(change['healthy'], now, state)}")
                continue
        if not ok and kind in ("Role", "ClusterRole") and path and path[0] == "rules" and "healthy" in change:
            # granted again through another role
            ok = role_access_kept(obj, path, change["healthy"], state, entry.get("subjects"))
        if not ok:
            wants = (f"{accept['op']} {shown(change.get('healthy')) if accept['value'] == 'healthy' else shown(accept['value'])}"
                     if accept else "absent" if change.get("absent") else shown(change["healthy"]))
            wrong.append(f"{show_path(path)} is {shown(observed)}, wants {wants}")
    return not wrong, ("; ".join(wrong[:5]) + (f"; and {len(wrong) - 5} more" if len(wrong) > 5 else "")) if wrong \
        else "every field the fault changed is healthy again"


# `changed` on a quantity: when the healthy value is absent, how far past the fault's value a fix must move it
# (a limit set too low raised to at least twice it, a request set too high lowered to at most half of it)
QUANTITY_MARGIN = 2.0


def quantity_field(path):
    """What a quantity field at `path` is: "limit" (a resource limit: absent is no limit), "request" (a resource
    request: absent is none asked), "count" (replicas, an autoscaler's bounds: absent is 1), or None."""
    keys = [s for s in path if isinstance(s, str)]
    if len(keys) >= 3 and keys[-3] == "resources" and keys[-2] in ("limits", "requests"):
        return "limit" if keys[-2] == "limits" else "request"
    if keys and keys[-1] in ("replicas", "minReplicas", "maxReplicas") and "template" not in keys:
        return "count"
    return None


def quantity_moved(path, observed, change):
    """For a `changed` acceptance on a quantity (a resource request or limit, replicas): whether the value has
    moved to the healthy side of the fault's value far enough to undo it; None when the field is no quantity.
    With a healthy value known, a fault that lowered the quantity is undone at or above it (a limit removed
    too: no limit is no too-low limit), one that raised it at or below it. Without one (the field was absent),
    the fault's direction is read from what absence means: a limit absent is no limit, so the fault lowered
    it and the fix raises it to at least QUANTITY_MARGIN times the fault's value (or removes it); a request
    absent asks for nothing, so the fix lowers it to at most the fault's value / QUANTITY_MARGIN (or removes
    it); replicas absent is 1. Any other value (5Mi set for a 10Mi fault, 11Mi for it) leaves it acting."""
    kind = quantity_field(path)
    faulty = number(change.get("faulty"))
    accept = change.get("accept") or {}
    # "at least the healthy limit" where the healthy form had none: absence tells the direction, as for `changed`
    at_least_absent = kind == "limit" and accept.get("op") in (">=", ">") and accept.get("value") == "healthy" \
        and change.get("healthy") is None
    if kind is None or faulty is None or (accept.get("op") != "changed" and not at_least_absent):
        return None
    healthy = number(change.get("healthy")) if change.get("healthy") is not None else None
    if change.get("healthy") is not None and healthy is None:
        return None  # a healthy value that is no quantity: the plain `changed`
    now = None if observed is MISSING or observed is None or empty(observed) else number(observed)
    if now is None and not (observed is MISSING or observed is None or empty(observed)):
        return False  # not a quantity at all: the API server refuses it, the fault's value stays
    if healthy is None:
        if kind == "limit":
            return now is None or now >= faulty * QUANTITY_MARGIN
        if kind == "request":
            return now is None or now <= faulty / QUANTITY_MARGIN
        healthy = 1.0
    if now is None:  # removed: no limit, no request, one replica
        now = {"limit": None, "request": 0.0, "count": 1.0}[kind]
        if now is None:
            return faulty < healthy
    if faulty < healthy:
        return now >= healthy
    if faulty > healthy:
        return now <= healthy
    return None


PROBE_ACTIONS = ("httpGet", "tcpSocket", "exec", "grpc")


def probe_action(probe, container=None):
    """What a probe checks, without when and how often: its handler (`httpGet`, `tcpSocket`, `exec`, `grpc`);
    None for anything that is no probe. A liveness probe's timing (`initialDelaySeconds`, `periodSeconds`,
    `failureThreshold`) only says when the kubelet acts on the check's failures, never whether it fails.
    Given the container holding the probe, a named port is the number the kubelet probes: the container's
    port of that name (`port: http` where the container declares 8080 `http` is 8080)."""
    if not isinstance(probe, dict) or not any(k in probe for k in PROBE_ACTIONS):
        return None
    action = {k: probe[k] for k in PROBE_ACTIONS if k in probe}
    names = container_ports([{"spec": {"containers": [container]}}])[0] if isinstance(container, dict) else {}
    for k in ("httpGet", "tcpSocket", "grpc"):
        handler = action.get(k)
        if isinstance(handler, dict) and isinstance(handler.get("port"), str) and handler["port"] in names:
            action[k] = {**handler, "port": names[handler["port"]]}
    return action


def unserved_port(action, serves):
    """The port a probe's handler (`probe_action`, named ports resolved) checks that is none of `serves` (the
    ports its container serves when healthy), None when it checks a served one, none at all (`exec`), or
    nothing is known of what the container serves."""
    if not isinstance(action, dict) or not serves:
        return None
    for handler in ("httpGet", "tcpSocket", "grpc"):
        port = (action.get(handler) or {}).get("port") if isinstance(action.get(handler), dict) else None
        if port is not None and not any(same(port, p) for p in serves):
            return port
    return None


def flag_outcomes(flag):
    """The values a flagd flag can evaluate to, as flagd evaluates it: an `ENABLED` flag gives its default
    variant's value, or a variant its `targeting` returns (any variant name the rule holds, a `fractional`
    bucket of weight 0 excepted; a `$ref` to a shared evaluator may return any variant). None for a flag
    that is absent, disabled or broken: flagd then answers with an error and the application falls back on
    the default its code passes, which the configuration does not say."""
    if not isinstance(flag, dict) or flag.get("state", "ENABLED") != "ENABLED":
        return None
    variants = flag.get("variants")
    if not isinstance(variants, dict) or flag.get("defaultVariant") not in variants:
        return None
    names = {flag["defaultVariant"]}
    pending = [flag.get("targeting")]
    while pending:
        node = pending.pop()
        if isinstance(node, dict):
            if "$ref" in node:
                names.update(variants)
            for op, arg in node.items():
                if op == "fractional" and isinstance(arg, list):
                    arg = [b for b in arg if not (isinstance(b, list) and len(b) == 2 and number(b[1]) == 0)]
                pending.append(arg)
        elif isinstance(node, list):
            pending.extend(node)
        elif isinstance(node, str) and node in variants:
            names.add(node)
    return [variants[n] for n in sorted(names)]


def flag_restored(observed, healthy):
    """Whether a flagd flag evaluates to what its healthy form does, whatever its variants are called."""
    want, got = flag_outcomes(healthy), flag_outcomes(observed)
    if got is None:
        return False, ("is absent" if observed is MISSING else "is disabled or has no valid default variant: "
                       "the application falls back on its code's default, which the configuration does not say")
    if want is None:
        return True, ""
    stray = [v for v in got if not any(same(v, w) for w in want)]
    if stray:
        return False, f"evaluates to {shown(stray[0])}, wants {shown(want[0]) if len(want) == 1 else shown(want)}"
    return True, ""


CHAOS_PAUSE = "experiment.chaos-mesh.org/pause"


def _every_peer(peer) -> bool:
    """Whether a NetworkPolicy peer admits every endpoint: no field (`{}`), a `namespaceSelector: {}` (every
    namespace) with no pod selector or `podSelector: {}`, or an `ipBlock` of every address with no `except`."""
    if not isinstance(peer, dict):
        return False
    if not peer:
        return True
    block = peer.get("ipBlock")
    if isinstance(block, dict) and not block.get("except") and block.get("cidr") in ("0.0.0.0/0", "::/0") \
            and len(peer) == 1:
        return True
    return peer.get("namespaceSelector") == {} and peer.get("podSelector") in (None, {}) and "ipBlock" not in peer


def _rule_admits_all(rule, direction) -> bool:
    """Whether one ingress (`from`) or egress (`to`) rule admits every peer on every port: peers left out or
    empty (every peer) or one that admits every endpoint, and ports left out or empty (every port)."""
    if not isinstance(rule, dict):
        return False
    peers = rule.get("from" if direction == "Ingress" else "to")
    return (not peers or (isinstance(peers, list) and any(_every_peer(p) for p in peers))) and not rule.get("ports")


def _allows_all(rules, direction="Ingress") -> bool:
    """Whether a NetworkPolicy's ingress or egress rules hold one that admits every peer on every port:
    policies only add what they allow, so that rule undoes the isolation the policy makes for that direction."""
    return isinstance(rules, list) and any(_rule_admits_all(r, direction) for r in rules)


def _isolates(policy) -> bool:
    """Whether a NetworkPolicy, read alone, still isolates the pods it selects in some direction it declares:
    no rule of that direction admits all."""
    spec = policy.get("spec") or {}
    return any(not _allows_all(spec.get("ingress" if t == "Ingress" else "egress"), t) for t in policy_types(policy))


def _pod_labels(state, namespace):
    """The labels of the pods a namespace runs and will run: its pods that have not finished and its workloads'
    pod templates."""
    out = [(p.get("metadata") or {}).get("labels") or {} for p in state.by_kind.get(("Pod", namespace), [])
           if (p.get("status") or {}).get("phase") not in ("Succeeded", "Failed")]
    for kind in ("Deployment", "StatefulSet", "DaemonSet", "ReplicaSet"):
        for w in state.by_kind.get((kind, namespace), []):
            out.append((((w.get("spec") or {}).get("template") or {}).get("metadata") or {}).get("labels") or {})
    return out


def _namespace_labels(state, namespace):
    """A namespace's labels as a namespaceSelector reads them: the state's Namespace object's, and the name
    label the API server sets on every namespace."""
    found = state.objects.get(("Namespace", None, str(namespace))) if state is not None else None
    labels = dict(((found or {}).get("metadata") or {}).get("labels") or {})
    labels["kubernetes.io/metadata.name"] = str(namespace)
    return labels


def _pod_addresses(state, namespace=None, labels=None):
    """The addresses of the pods of the state that have not finished (`status.podIPs`, else `status.podIP`),
    one list per pod that has some: of `namespace` with `labels` among theirs, or every pod's."""
    import ipaddress
    out = []
    for (kind, where), pods in (state.by_kind.items() if state is not None else ()):
        if kind != "Pod" or (namespace is not None and where != namespace):
            continue
        for pod in pods:
            status = pod.get("status") if isinstance(pod.get("status"), dict) else {}
            own = (pod.get("metadata") or {}).get("labels") or {}
            if status.get("phase") in ("Succeeded", "Failed") or \
                    (labels is not None and not all(own.get(a) == b for a, b in labels.items())):
                continue
            texts = [i.get("ip") for i in status.get("podIPs") or [] if isinstance(i, dict)] or [status.get("podIP")]
            addresses = []
            for text in texts:
                try:
                    addresses.append(ipaddress.ip_address(str(text)))
                except ValueError:
                    pass
            if addresses:
                out.append(addresses)
    return out


def _block_admits(block, namespace, labels, state):
    """Whether an ipBlock admits the pods labelled `labels` in `namespace`: each of them has an address in its
    `cidr` and in none of its `except` ranges, read from the addresses the state holds for those pods; for pods
    the state holds no address of (the cluster's DNS), from every pod address the state holds (the cluster's
    pods share its pod network); with no pod address at all, only a block of every address admits them."""
    import ipaddress
    if not isinstance(block, dict):
        return False
    try:
        network = ipaddress.ip_network(str(block.get("cidr")), strict=False)
        excepted = [ipaddress.ip_network(str(e), strict=False) for e in block.get("except") or []]
    except ValueError:
        return False
    pods = _pod_addresses(state, namespace, labels) or _pod_addresses(state)
    if not pods:
        return network.prefixlen == 0 and not excepted
    return all(any(a in network and not any(a in e for e in excepted) for a in addresses) for addresses in pods)


def _peer_admits(peer, policy_namespace, namespace, labels, state):
    """Whether one NetworkPolicy peer admits the pods labelled `labels` in `namespace`: a podSelector alone
    selects pods of the policy's namespace, a namespaceSelector the pods of the namespaces it selects (and its
    podSelector, if any, among them); an ipBlock the pods whose addresses it holds (_block_admits)."""
    if not isinstance(peer, dict):
        return False
    if not peer:
        return True
    if "ipBlock" in peer:
        return _block_admits(peer.get("ipBlock"), namespace, labels, state)
    if "namespaceSelector" in peer:
        if not selector_matches(peer.get("namespaceSelector"), _namespace_labels(state, namespace)):
            return False
    elif namespace != policy_namespace:
        return False
    return "podSelector" not in peer or selector_matches(peer.get("podSelector"), labels)


def _port_admits(entries, port, protocol, names):
    """Whether a rule's `ports` admit a port (number, protocol) of the destination pod, whose containers name
    their ports `names`: none listed admits every port; an entry without a port every port of its protocol."""
    if not entries:
        return True
    for entry in entries if isinstance(entries, list) else []:
        if not isinstance(entry, dict) or str(entry.get("protocol") or "TCP") != protocol:
            continue
        want = entry.get("port")
        if want is None:
            return True
        low = names.get(want) if isinstance(want, str) and number(want) is None else number(want)
        high = number(entry.get("endPort")) if entry.get("endPort") is not None else low
        if low is not None and high is not None and low <= port <= high:
            return True
    return False


def _template_labels(workload):
    return ((((workload.get("spec") or {}).get("template") or {}).get("metadata") or {}).get("labels") or {})


def _workload_of(name, namespace, state):
    """(namespace, pod template) of the workload a component of the call graph names: of `namespace` first."""
    spaces = [namespace] + sorted({str(n) for (_, n) in state.by_kind if n and n != namespace})
    for where in spaces:
        for kind in ("Deployment", "StatefulSet", "DaemonSet"):
            found = state.objects.get((kind, where, str(name)))
            if found is not None:
                return where, ((found.get("spec") or {}).get("template") or {})
    return None


def served_ports(component, template, services):
    """(port, protocol) the pods of a component serve its callers on: its Services' target ports (a named one
    through its containers), else every port its containers declare."""
    names, numbers = container_ports([template])
    out = []
    for service in services:
        if service.get("component") == component:
            for p in service.get("ports") or []:
                n = port_number(p.get("targetPort", p.get("port")), names)
                if n is not None:
                    out.append((n, str(p.get("protocol") or "TCP")))
    return out or [(n, "TCP") for n in sorted(numbers)]


# the cluster's DNS, which every pod that calls another by name needs to reach (egress)
CLUSTER_DNS = ("kube-system", {"k8s-app": "kube-dns"}, [(53, "UDP"), (53, "TCP")])


def _calls_admitted(direction, labels, namespace, policies, state):
    """Whether the NetworkPolicies of `namespace` admit, for the pods labelled `labels`, every call the
    application makes through them in `direction`, as the scenario's call graph (`state.traffic`) says: into
    them from each workload that calls theirs (on the ports their Services lead to), out of them to each
    workload theirs calls (on that one's ports) and to the cluster's DNS. False when the graph does not say
    what their workload calls or is called by: then only a rule admitting all undoes the isolation."""
    traffic = getattr(state, "traffic", None)
    if not traffic:
        return False
    graph, services = traffic
    own = [w for kind in ("Deployment", "StatefulSet", "DaemonSet") for w in state.by_kind.get((kind, namespace), [])
           if _template_labels(w) and all(labels.get(a) == b for a, b in _template_labels(w).items())]
    if len(own) != 1:
        return False
    name = str((own[0].get("metadata") or {}).get("name"))
    template = (own[0].get("spec") or {}).get("template") or {}
    needs = []  # (pods labelled, their namespace, destination's containers' port names, port, protocol, peer)
    for a, b in graph:
        if direction == "Ingress" and b == name and _workload_of(a, namespace, state) is not None:
            where, caller = _workload_of(a, namespace, state)
            peer = (where, (caller.get("metadata") or {}).get("labels") or {})
            names = container_ports([template])[0]
            needs += [(peer, names, port, protocol) for port, protocol in served_ports(name, template, services)]
        if direction == "Egress" and a == name and _workload_of(b, namespace, state) is not None:
            where, callee = _workload_of(b, namespace, state)
            peer = (where, (callee.get("metadata") or {}).get("labels") or {})
            names = container_ports([callee])[0]
            needs += [(peer, names, port, protocol) for port, protocol in served_ports(b, callee, services)]
    if not needs:
        return False
    if direction == "Egress":
        needs += [((CLUSTER_DNS[0], CLUSTER_DNS[1]), {}, port, protocol) for port, protocol in CLUSTER_DNS[2][:1]]
    key, side = ("ingress", "from") if direction == "Ingress" else ("egress", "to")
    selecting = [p for p in policies if direction in policy_types(p)
                 and selector_matches((p.get("spec") or {}).get("podSelector"), labels)]
    for (peer_ns, peer_labels), names, port, protocol in needs:
        if not any(isinstance(rule, dict)
                   and (not rule.get(side) or any(_peer_admits(x, (p.get("metadata") or {}).get("namespace"), peer_ns,
                                                                peer_labels, state) for x in rule.get(side) or []))
                   and _port_admits(rule.get("ports"), port, protocol, names)
                   for p in selecting for rule in ((p.get("spec") or {}).get(key) or [])):
            return False
    return True


def _policy_isolates(policy, state) -> bool:
    """Whether a NetworkPolicy a fault created still refuses traffic, as Kubernetes reads policies: a pod is
    isolated in a direction when some policy of its namespace selects it with that type, and then admits what
    any of those policies' rules admit (policies are a union). So the policy acts while some pod it selects, in
    some direction it declares, is admitted all traffic by none of the policies that select it: an allow-all
    rule in it, or another policy (an empty `podSelector` selects every pod) admitting every peer on every port,
    undoes it. Read alone where the state holds no pod of its namespace."""
    namespace = (policy.get("metadata") or {}).get("namespace")
    pods = _pod_labels(state, namespace) if state is not None else []
    if not pods:
        return _isolates(policy)
    spec = policy.get("spec") if isinstance(policy.get("spec"), dict) else {}
    # each distinct set of labels once (a workload's pods and its template share theirs, bar the template hash)
    chosen = [dict(k) for k in sorted({tuple(sorted((str(a), str(b)) for a, b in labels.items()
                                                     if a != "pod-template-hash"))
                                       for labels in pods if isinstance(labels, dict)
                                       and selector_matches(spec.get("podSelector"), labels)})]
    others = [p for p in state.by_kind.get(("NetworkPolicy", namespace), [])
              if str(p.get("apiVersion", "")).startswith("networking.k8s.io/")]
    for direction in policy_types(policy):
        key = "ingress" if direction == "Ingress" else "egress"
        for labels in chosen:
            if not any(direction in policy_types(p) and selector_matches((p.get("spec") or {}).get("podSelector"), labels)
                       and _allows_all((p.get("spec") or {}).get(key), direction) for p in [policy, *others]) \
                    and not _calls_admitted(direction, labels, namespace, [policy, *others], state):
                return True
    return False


QUOTA_PER_POD = {"pods": lambda c: 0, "count/pods": lambda c: 0, "cpu": ("requests", "cpu"),
                  "memory": ("requests", "memory"), "requests.cpu": ("requests", "cpu"),
                  "requests.memory": ("requests", "memory"), "limits.cpu": ("limits", "cpu"),
                  "limits.memory": ("limits", "memory"), "ephemeral-storage": ("requests", "ephemeral-storage"),
                  "requests.ephemeral-storage": ("requests", "ephemeral-storage"),
                  "limits.ephemeral-storage": ("limits", "ephemeral-storage")}


def pod_amount(pod, resource):
    """What one pod counts against a quota's `resource` (its containers' requests or limits; 1 for `pods`,
    `count/pods`; `memory` is `requests.memory`, as the quota system reads it); None when a container
    declares no amount of it: a quota on a compute resource makes admission refuse such a pod (`must
    specify memory`), so the quota binds."""
    if resource in ("pods", "count/pods"):
        return 1.0
    side, name = QUOTA_PER_POD[resource]
    total = 0.0
    for c in ((pod.get("spec") or {}).get("containers") or []):
        declared = (c.get("resources") or {}) if isinstance(c, dict) else {}
        amount = number((declared.get(side) or {}).get(name))
        if amount is None and side == "requests":  # a request left out defaults to the limit
            amount = number((declared.get("limits") or {}).get(name))
        if amount is None:
            return None
        total += amount
    return total


def _refuses(quota, state, unread=True) -> bool:
    """Whether a ResourceQuota refuses pods the namespace needs: some hard amount of a pod resource
    (`QUOTA_PER_POD`) does not admit what the namespace's pods count against it (those not finished) and
    one more of its largest pod, the pod a rolling update adds before it removes one; a pod that declares no
    amount of a compute resource the quota limits is refused outright. Each pod is read as admission makes it
    anew (`admitted`): the LimitRanger plugin, which runs before ResourceQuota, gives a container that declares
    no amount the namespace's LimitRange default, so a LimitRange supplying it neutralises a quota the
    defaults fit in. `unread`: the verdict for an amount of a resource the evaluator does not read, or a quota
    with scopes (which pods it counts is the scope's)."""
    spec = quota.get("spec") or {}
    if state is None or spec.get("scopes") or spec.get("scopeSelector"):
        return unread
    namespace = (quota.get("metadata") or {}).get("namespace")
    pods = [p for p in state.by_kind.get(("Pod", namespace), [])
            if (p.get("status") or {}).get("phase") not in ("Succeeded", "Failed")]
    for resource, hard in (spec.get("hard") or {}).items():
        limit = number(hard)
        if resource not in QUOTA_PER_POD or limit is None:
            if unread:
                return True
            continue
        amounts = [pod_amount(admitted(p, state), resource) for p in pods]
        if any(a is None for a in amounts) or sum(amounts) + max(amounts, default=1.0) > limit:
            return True
    return False


PSA_ENFORCE = "pod-security.kubernetes.io/enforce"
PSA_LEVELS = ("privileged", "baseline", "restricted")
# the kinds whose pods a namespace needs admitted again: each makes them from its template
POD_MAKERS = ("Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Job", "CronJob")


def pod_security_refused(namespace, state):
    """The workloads of a namespace whose pods its enforced Pod Security level refuses, as the PodSecurity
    admission plugin checks each pod on creation (the Pod Security Standards, `pss_evaluate` of the embedded
    Kyverno matcher): the level its `enforce` label names (none: `privileged`; a value that is no level:
    `restricted`, as the plugin fails closed), against the pod template of every workload of the namespace
    (a ReplicaSet or Job a controller owns is its owner's). So the label is judged by what it refuses: kept,
    with every workload meeting the level, it refuses nothing. None where the evaluator holds no checker."""
    matcher = embedded_module("kyverno")
    check = getattr(matcher, "pss_evaluate", None) if matcher is not None else None
    if check is None:  # the Pod Security checks alone (`_PSS_SOURCES`), where the bundle embeds no matcher
        check = getattr(embedded_module("pss"), "evaluate", None)
    if check is None:
        return None
    name = (namespace.get("metadata") or {}).get("name")
    level = ((namespace.get("metadata") or {}).get("labels") or {}).get(PSA_ENFORCE, "privileged")
    level = level if level in PSA_LEVELS else "restricted"
    refused = []
    for kind in POD_MAKERS:
        for w in state.by_kind.get((kind, name), []):
            meta = w.get("metadata") or {}
            if kind in ("ReplicaSet", "Job") and meta.get("ownerReferences") or terminating(w):
                continue
            if check({"level": level}, w)[0] == "fail":
                refused.append(f"{kind} {meta.get('name')}")
    return refused


def _binds(quota, state) -> bool:
    """Whether a ResourceQuota a fault created still refuses pods the namespace needs (`_refuses`); an amount
    of another resource, or a quota with scopes, is taken as binding."""
    return _refuses(quota, state)


def _quota_twin(ref, want, state):
    """The ResourceQuota of another name in the fault's namespace that refuses pods the namespace needs, as
    Kubernetes enforces every quota of a namespace (`_refuses`, by the pods it refuses, not its amounts: a
    stricter limit, `requests.memory` for `memory`, an extra key are the fault still). Amounts of resources
    no pod counts against (`configmaps`) refuse no pod; a quota with scopes is no twin unless its acting
    part is the fault's. The quotas of the healthy application (`state.known`) are not the fault's."""
    namespace = want.get("namespace")
    known = getattr(state, "known", set())
    for quota in state.by_kind.get(("ResourceQuota", namespace), []):
        name = str((quota.get("metadata") or {}).get("name"))
        if name != ref["name"] and ("ResourceQuota", namespace, name) not in known \
                and _refuses(quota, state, unread=False):
            return quota
    return None


def _istio_rule_matches_all(rule) -> bool:
    """Whether an AuthorizationPolicy rule matches every request: each of its `from`, `to` and `when` left out
    or empty, or holding an entry with no condition (`{}`, `source: {}`, `operation: {}`): an empty rule is
    always matched."""
    if not isinstance(rule, dict):
        return False
    for key, inner in (("from", "source"), ("to", "operation")):
        entries = rule.get(key)
        if entries and not (isinstance(entries, list) and any(
                isinstance(e, dict) and not e.get(inner) for e in entries)):
            return False
    return not rule.get("when")


ISTIO_ROOT_NAMESPACE = "istio-system"  # meshConfig.rootNamespace's default: a policy there applies mesh-wide
_ISTIO_FIELDS = {"source": ("principals", "requestPrincipals", "namespaces", "ipBlocks", "remoteIpBlocks"),
                 "operation": ("hosts", "ports", "methods", "paths")}


def _istio_values_meet(x, y) -> bool:
    """Whether two values of an AuthorizationPolicy field can match one request: Istio matches a value
    exactly, by prefix (`abc*`), by suffix (`*abc`) or any (`*`); an IP block by its addresses."""
    x, y = str(x), str(y)
    if x == y or "*" in (x, y):
        return True
    if "/" in x or "/" in y or x.count(".") == 3 or y.count(".") == 3 or ":" in x or ":" in y:
        import ipaddress
        try:
            return ipaddress.ip_network(x, strict=False).overlaps(ipaddress.ip_network(y, strict=False))
        except ValueError:
            pass
    for a, b in ((x, y), (y, x)):
        if a.endswith("*") and (b.startswith(a[:-1]) or (b.endswith("*") and (a[:-1].startswith(b[:-1])))):
            return True
        if a.startswith("*") and (b.endswith(a[1:]) or (b.startswith("*") and (a[1:].endswith(b[1:])))):
            return True
        if (a.endswith("*") and b.startswith("*")) or (a.startswith("*") and b.endswith("*")):
            return True  # a prefix and a suffix: some text has both
    return False


def _istio_field_meets(a, b, field) -> bool:
    """Whether two sources (or two operations) can match one request, field by field: a field both list
    needs a value of each that can match together; a value one lists that the other excludes exactly
    (`notMethods`) cannot. A field only one side has constrains nothing the other asks."""
    not_field = "not" + field[0].upper() + field[1:]
    mine, theirs = a.get(field), b.get(field)
    if isinstance(mine, list) and mine and isinstance(theirs, list) and theirs and \
            not any(_istio_values_meet(x, y) for x in mine for y in theirs):
        return False
    for pos, neg in ((mine, b.get(not_field)), (theirs, a.get(not_field))):
        if isinstance(pos, list) and pos and isinstance(neg, list) and all(str(v) in [str(n) for n in neg] for v in pos):
            return False
    return True


# The requests an application may be sent, where nothing says which: any method a web application serves, on
# any host, port or path, from any source (TRACE and CONNECT, a proxy's and a diagnostic's, which applications
# do not serve and hardening denies, excepted). A DENY rule matching one of them refuses a request the
# application may serve.
HTTP_METHODS = ("GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS")
APPLICATION_REQUESTS = {"to": [{"operation": {"methods": list(HTTP_METHODS)}}]}


def istio_rules_overlap(a, b) -> bool:
    """Whether some request matches both AuthorizationPolicy rules: some `from` source of each, some `to`
    operation of each and their `when` conditions can hold together (a condition key both test with no value
    in common cannot). Unknown or negated conditions are taken to overlap."""
    if not isinstance(a, dict) or not isinstance(b, dict):
        return True
    for key, inner in (("from", "source"), ("to", "operation")):
        xs = [e.get(inner) or {} for e in a.get(key) or [] if isinstance(e, dict)] or [{}]
        ys = [e.get(inner) or {} for e in b.get(key) or [] if isinstance(e, dict)] or [{}]
        if not any(isinstance(x, dict) and isinstance(y, dict) and all(_istio_field_meets(x, y, f)
                                                                        for f in _ISTIO_FIELDS[inner])
                   for x in xs for y in ys):
            return False
    conditions = {}
    for c in [*(a.get("when") or []), *(b.get("when") or [])]:
        if isinstance(c, dict) and isinstance(c.get("values"), list) and c.get("values"):
            conditions.setdefault(str(c.get("key")), []).append(c["values"])
    return all(any(all(any(_istio_values_meet(v, w) for w in other) for other in lists) for v in lists[0])
               for lists in conditions.values())


def _istio_applies(obj, state) -> bool:
    """Whether an AuthorizationPolicy applies to anything the state runs: a `selector` selecting some pod (not
    finished) or workload pod template of its namespace (of every namespace from the root namespace), a
    `targetRef` naming an object the state holds. True where the state cannot tell (the kind not captured
    there), and for a policy with neither (its whole namespace)."""
    spec = obj.get("spec") if isinstance(obj.get("spec"), dict) else {}
    namespace = (obj.get("metadata") or {}).get("namespace")
    refs = [r for r in [spec.get("targetRef"), *(spec.get("targetRefs") or [])] if isinstance(r, dict)]
    if state is None:
        return True
    if refs:
        return any(not state.has(r.get("namespace") or namespace, r.get("kind")) or
                   state.get({"kind": r.get("kind"), "namespace": r.get("namespace") or namespace,
                              "name": r.get("name")}) is not None for r in refs)
    selector = spec.get("selector")
    labels = selector.get("matchLabels") if isinstance(selector, dict) else None
    if not isinstance(labels, dict) or not labels:
        return True
    spaces = {ns for (ns, kind) in state.captured if kind == "Pod"} if namespace == ISTIO_ROOT_NAMESPACE \
        else {namespace or ""}
    if not spaces:
        return True
    for ns in sorted(spaces):
        if not state.has(ns, "Pod"):
            return True
        for pod in state.by_kind.get(("Pod", ns or None), []):
            if (pod.get("status") or {}).get("phase") not in ("Succeeded", "Failed") and \
                    labels_match((pod.get("metadata") or {}).get("labels") or {}, labels):
                return True
        for kind in POD_TEMPLATE_KINDS:
            for w in state.by_kind.get((kind, ns or None), []):
                template = ((w.get("spec") or {}).get("template") or {}).get("metadata") or {}
                if labels_match(template.get("labels") or {}, labels):
                    return True
    return False


_MTLS_MODES = ("STRICT", "PERMISSIVE", "DISABLE")  # UNSET (or none) inherits the mode of the level above


def _pa_labels(spec):
    """The labels a PeerAuthentication's selector names; None for a namespace-wide (or mesh-wide) one."""
    selector = spec.get("selector")
    labels = selector.get("matchLabels") if isinstance(selector, dict) else None
    return labels if isinstance(labels, dict) and labels else None


def _pa_in_force(candidates, policy):
    """Of the PeerAuthentications at one level for a workload (several workload-specific ones, several of a
    namespace, several mesh-wide ones), the one Istio takes: the oldest by `creationTimestamp`, then by name and
    namespace, as pilot orders its configs (ComposePeerAuthentication keeps the first of that order and ignores
    the others). A state without the times of two of them cannot order them: the fault's `policy` is then taken
    as the one in force. None where there is none."""
    def key(p):
        meta = p.get("metadata") if isinstance(p.get("metadata"), dict) else {}
        return rfc3339(meta.get("creationTimestamp")), str(meta.get("name", "")), str(meta.get("namespace", ""))

    if not candidates:
        return None
    if any(c is policy for c in candidates):
        mine = key(policy)
        older = [c for c in candidates if c is not policy and key(c)[0] is not None and mine[0] is not None
                 and key(c) < mine]
        return min(older, key=key) if older else policy
    dated = [c for c in candidates if key(c)[0] is not None]
    return min(dated, key=key) if len(dated) == len(candidates) else candidates[0]


def _strict_in_force(policy, state) -> bool:
    """Whether a STRICT PeerAuthentication is the one in force for some workload it applies to, as Istio
    resolves policies: at each level (a workload's own policies, their selector matching its pods; its
    namespace's; the mesh's, in the root namespace) Istio takes one policy, the oldest (`_pa_in_force`), and a
    workload's mode is its own policy's where that says one (UNSET inherits), else its namespace's, else the
    mesh's. So a policy acts for a workload where it is the one taken at its level and no more specific one taken
    sets a mode. Only workloads the call graph shows a call into (from a workload) are read where it shows one
    (STRICT refuses calls into a workload; the mesh's own gateways speak mutual TLS), every workload it
    applies to otherwise; a policy where the state holds no workload it applies to is taken as acting."""
    spec = policy.get("spec") if isinstance(policy.get("spec"), dict) else {}
    if state is None:
        return True
    namespace = (policy.get("metadata") or {}).get("namespace")
    mesh_wide = namespace == ISTIO_ROOT_NAMESPACE and _pa_labels(spec) is None
    workloads = [(where, str((w.get("metadata") or {}).get("name")), _template_labels(w))
                 for (kind, where), found in state.by_kind.items()
                 if kind in ("Deployment", "StatefulSet", "DaemonSet") and (mesh_wide or where == namespace)
                 for w in found]
    if _pa_labels(spec) is not None:
        workloads = [w for w in workloads if labels_match(w[2], _pa_labels(spec))]
    if not workloads:
        return True
    graph = (getattr(state, "traffic", None) or ((), ()))[0]
    called = {str(b) for a, b in graph if _workload_of(a, namespace or "", state) is not None}
    targets = [w for w in workloads if w[1] in called] or workloads

    def istio(other):
        return other is not policy and str(other.get("apiVersion", "")).startswith("security.istio.io/")

    def held(where):  # the policies of a namespace, the policy judged among them wherever the state holds it
        return [p for p in state.by_kind.get(("PeerAuthentication", where), []) if istio(p)] \
            + ([policy] if where == namespace else [])

    def sets_mode(other):
        mtls = (other.get("spec") or {}).get("mtls") if other and isinstance(other.get("spec"), dict) else None
        return isinstance(mtls, dict) and mtls.get("mode") in _MTLS_MODES

    for where, _, labels in targets:
        here = held(where)
        own = _pa_in_force([p for p in here if where != ISTIO_ROOT_NAMESPACE and _pa_labels(p.get("spec") or {})
                            and labels_match(labels, _pa_labels(p.get("spec") or {}))], policy)
        local = _pa_in_force([p for p in here if where != ISTIO_ROOT_NAMESPACE
                              and not _pa_labels(p.get("spec") or {})], policy)
        mesh = _pa_in_force([p for p in held(ISTIO_ROOT_NAMESPACE) if not _pa_labels(p.get("spec") or {})], policy)
        levels = [own, local, mesh]  # the most specific first
        taken = next((i for i, p in enumerate(levels) if p is policy), None)
        if taken is not None and not any(sets_mode(p) for p in levels[:taken]):
            return True
    return False


def _istio_acts(obj, state=None, fault=None) -> bool:
    """Whether an Istio object a fault created still has an effect, as Istio reads it: a PeerAuthentication
    while it requires mutual TLS (`mtls.mode` or a `portLevelMtls` mode `STRICT`: `PERMISSIVE`, `DISABLE` and
    `UNSET` refuse no plain-text connection) of some workload, as Istio resolves policies (`_strict_in_force`:
    a workload's own policy with a mode of its own overrides a namespace-wide one for that workload, a
    namespace's a mesh-wide one); an AuthorizationPolicy by its `action`: `AUDIT` only logs, a
    `DENY` policy with no rule never matches, an `ALLOW` policy with a rule that matches every request admits
    all (any other `ALLOW` denies what it does not match; `CUSTOM` defers to an extension, taken as acting);
    a `DENY`, `ALLOW` or `CUSTOM` policy applying to no workload the state runs (`_istio_applies`) does
    nothing; a `DENY` policy acts while one of its rules can match a request one of the fault's rules
    (`fault`, its acting part) matched or one the application may be sent (`APPLICATION_REQUESTS`, by
    `istio_rules_overlap`): re-aimed at the methods the fault left alone it refuses the application's other
    requests, edited to deny only what no request is (a method HTTP has not) it refuses nothing;
    a VirtualService while a route injects a fault (a delay or an abort, unless at 0 percent) or does more
    than send its hosts' traffic to those hosts (a timeout, retries, a rewrite, a redirect, a direct response,
    a mirror, another host or a subset); a DestinationRule while it sets a traffic policy (for the host, a
    port or a subset). Any other Istio kind acts while it is there."""
    spec = obj.get("spec") if isinstance(obj.get("spec"), dict) else {}
    kind = obj.get("kind")
    if kind == "PeerAuthentication":
        modes = [(spec.get("mtls") or {}).get("mode") if isinstance(spec.get("mtls"), dict) else None]
        levels = spec.get("portLevelMtls")
        modes += [m.get("mode") for m in (levels.values() if isinstance(levels, dict) else []) if isinstance(m, dict)]
        return "STRICT" in modes and _strict_in_force(obj, state)
    if kind == "AuthorizationPolicy":
        action = spec.get("action") or "ALLOW"
        rules = spec.get("rules") if isinstance(spec.get("rules"), list) else []
        if action == "AUDIT":
            return False
        if action in ("DENY", "ALLOW", "CUSTOM") and not _istio_applies(obj, state):
            return False  # it applies to no workload the state runs
        if action == "DENY":
            # judged by what it refuses: a rule that can match a request the fault's own rules denied (a rule
            # narrowed to part of that still denies that part) or any request the application may be sent (a
            # DENY re-aimed at the methods the fault left alone refuses the application's other requests)
            denied = (fault or {}).get("rules") if (fault or {}).get("action") == "DENY" else None
            denied = [d for d in denied if isinstance(d, dict)] if isinstance(denied, list) else []
            return any(istio_rules_overlap(r, d) for r in rules for d in [*denied, APPLICATION_REQUESTS])
        if action == "ALLOW":
            return not any(_istio_rule_matches_all(r) for r in rules)
        return True
    if kind == "VirtualService":
        hosts = {str(h).split(".")[0] for h in spec.get("hosts") or [] if isinstance(h, (str, int))}
        for proto in ("http", "tcp", "tls"):
            for route in spec.get(proto) or []:
                if not isinstance(route, dict):
                    return True
                fault = route.get("fault")
                if isinstance(fault, dict) and any(
                        isinstance(fault.get(k), dict) and number(((fault[k].get("percentage") or {}).get("value")
                                                                   if isinstance(fault[k].get("percentage"), dict)
                                                                   else None)) != 0 for k in ("delay", "abort")):
                    return True
                if set(route) - {"match", "route", "name", "fault"}:
                    return True
                for dest in route.get("route") or []:
                    target = (dest.get("destination") or {}) if isinstance(dest, dict) else None
                    if not isinstance(target, dict) or target.get("subset") or \
                            str(target.get("host", "")).split(".")[0] not in hosts:
                        return True
        return False
    if kind == "DestinationRule":
        subsets = spec.get("subsets") if isinstance(spec.get("subsets"), list) else []
        return bool(spec.get("trafficPolicy")) or any(isinstance(s, dict) and s.get("trafficPolicy") for s in subsets)
    return True


def acts(obj, state=None, fault=None):
    """Whether an object a fault created still has its effect: a workload only while it runs pods, a pod only
    until it has finished (`Succeeded`, `Failed`), a Chaos Mesh experiment or schedule only while it is not
    paused (and, read against the state and the fault's acting part, while it still does some of the fault's
    harm: `_chaos_acts`), a NetworkPolicy only while some pod it selects is isolated in a direction it declares with no
    policy admitting it all traffic (read against the state's pods and policies), an Istio object only while
    Istio gives it an effect (`_istio_acts`), a ResourceQuota only while it refuses pods the namespace runs
    (read against the state's pods: `_binds`), a DaemonSet only while it places a pod on some node (`daemon_nodes`). Anything else acts while it is there. `fault`: the acting part of the
    object as the fault made it (`acting`), which an object edited in place is read against."""
    kind = obj.get("kind")
    if kind in ("Deployment", "StatefulSet", "ReplicaSet"):
        return number((obj.get("spec") or {}).get("replicas", 1)) != 0
    if kind == "DaemonSet" and state is not None:
        return daemon_nodes(obj, state) != set()  # by the pods it places: none, confined to no node
    if kind == "Pod":
        return (obj.get("status") or {}).get("phase") not in ("Succeeded", "Failed")
    if kind == "NetworkPolicy" and str(obj.get("apiVersion", "")).startswith("networking.k8s.io/"):
        return _policy_isolates(obj, state)
    if str(obj.get("apiVersion", "")).split("/")[0] in ("security.istio.io", "networking.istio.io"):
        return _istio_acts(obj, state, fault)
    if kind == "ResourceQuota":
        return _binds(obj, state)
    annotations = (obj.get("metadata") or {}).get("annotations") or {}
    if str(obj.get("apiVersion", "")).startswith("chaos-mesh.org/") and annotations.get(CHAOS_PAUSE) == "true":
        return False
    parts = _chaos_parts(obj) if api_group(obj.get("apiVersion")) == "chaos-mesh.org" else None
    if parts is not None and state is not None and isinstance(fault, dict) and isinstance(fault.get("selector"), dict):
        return _chaos_acts(obj, parts, fault, (obj.get("metadata") or {}).get("namespace"), state)
    return True


def _plain(value):
    """A value with the keys that say nothing left out (null, `{}`, `[]`), at every depth: `ingress: []` and no
    `ingress` isolate alike. A list keeps every item (`[{}]`, a rule admitting all, is not `[]`)."""
    if isinstance(value, dict):
        out = {str(k): _plain(v) for k, v in value.items()}
        return {k: v for k, v in out.items() if v is not None and v != {} and v != []}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def _policy_rules(rules):
    """NetworkPolicy rules with a port's protocol as the API server defaults it (TCP)."""
    out = []
    for rule in rules if isinstance(rules, list) else []:
        if isinstance(rule, dict) and isinstance(rule.get("ports"), list):
            rule = {**rule, "ports": [{"protocol": "TCP", **p} if isinstance(p, dict) else p for p in rule["ports"]]}
        out.append(rule)
    return out


def _chaos_acting(kind, spec):
    """What a Chaos Mesh experiment does to whom: its selector (namespaces in any order), action, mode, the
    peers a NetworkChaos acts toward (`target`, `externalTargets`) and the harms it does (`_chaos_effects`:
    none where its magnitude is nil); its duration, the size of its parameters and its schedule are how long
    and how hard, not whom and what. One without a selector of its own (a Workflow, whose templates select)
    acts by its whole spec."""
    if not isinstance(spec.get("selector"), dict):
        return {"spec": spec}
    selector = dict(spec.get("selector")) if isinstance(spec.get("selector"), dict) else {}
    if isinstance(selector.get("namespaces"), list):
        selector["namespaces"] = sorted(str(n) for n in selector["namespaces"])
    out = {"selector": selector, "action": spec.get("action"), "mode": spec.get("mode"),
           "effects": sorted(_chaos_effects(kind, spec))}
    if kind == "NetworkChaos":
        out.update(target=spec.get("target"), externalTargets=spec.get("externalTargets"))
    return out


def _some(value, parse) -> bool:
    """Whether a Chaos Mesh magnitude (a percentage, a duration) is more than nothing; one left out or not
    read is taken as some."""
    amount = parse(value.strip().rstrip("%") if isinstance(value, str) and parse is number else value)
    return amount is None or amount > 0


# a NetworkChaos action's harm: packets dropped (a loss; a partition drops them all), delayed, duplicated,
# corrupted, its field and how its magnitude reads
NETEM = {"loss": ("drop", "loss", number), "delay": ("delay", "latency", duration),
         "duplicate": ("duplicate", "duplicate", number), "corrupt": ("corrupt", "corrupt", number)}


def _chaos_effects(kind, spec) -> set:
    """The harms a Chaos Mesh experiment does, as classes, none where its magnitude is nil: a NetworkChaos
    drops packets (`loss`, `partition`), delays, duplicates or corrupts them (`netem` any of those), limits
    the bandwidth; a loss, duplication or corruption of 0 %, a delay of 0 (and no jitter) does nothing. An
    HTTPChaos aborts, delays (not by 0), replaces or patches; with none of them it does nothing. An IOChaos
    `latency` of 0 does nothing. Any other experiment does its action."""
    spec = spec if isinstance(spec, dict) else {}
    if kind == "NetworkChaos":
        action = spec.get("action") or "delay"  # the CRD's default
        if action in ("partition", "bandwidth"):
            return {"drop" if action == "partition" else "bandwidth"}
        out = set()
        for name in (NETEM if action == "netem" else [action] if action in NETEM else []):
            harm, field, parse = NETEM[name]
            detail = spec.get(name) if isinstance(spec.get(name), dict) else None
            if detail is None and action == "netem":
                continue
            detail = detail or {}
            if _some(detail.get(field), parse) or (name == "delay" and detail.get("jitter") is not None
                                                   and _some(detail.get("jitter"), duration)):
                out.add(harm)
        return out
    if kind == "HTTPChaos":
        out = {k for k in ("replace", "patch") if spec.get(k)}
        if spec.get("abort") is True:
            out.add("abort")
        if spec.get("delay") is not None and _some(spec.get("delay"), duration):
            out.add("delay")
        return out
    if kind == "IOChaos" and spec.get("action") == "latency" and spec.get("delay") is not None \
            and not _some(spec.get("delay"), duration):
        return set()
    return {str(spec.get("action") or kind)}


def acting(obj):
    """The part of an object a fault created that has its effect, whatever the object is called: equal for
    two objects of one kind that act alike. A NetworkPolicy's pod selector, directions (`policyTypes` as the
    API server defaults them) and rules; a Chaos Mesh experiment's selector, action, mode, peers and harms
    (`_chaos_acting`; a Schedule's: its type and its experiment's); an AuthorizationPolicy's selector or target, action and rules; a
    PeerAuthentication's selector and modes; a ResourceQuota's amounts (by value) and scopes; anything else
    its whole content but its metadata and status, with the API server's defaults. An object that acts on
    its own namespace (all but a chaos experiment, whose selector names namespaces) carries it."""
    kind = str(obj.get("kind", ""))
    spec = obj.get("spec") if isinstance(obj.get("spec"), dict) else {}
    namespace = (obj.get("metadata") or {}).get("namespace")
    if api_group(obj.get("apiVersion")) == "chaos-mesh.org":
        if kind == "Schedule":
            kind = str(spec.get("type", ""))
            # its experiment under the type's name, first letters lower case (`httpChaos`, `ioChaos`)
            inner = next((v for k, v in spec.items() if str(k).lower() == kind.lower()), None)
            return _plain({"type": kind, **_chaos_acting(kind, inner if isinstance(inner, dict) else {})})
        return _plain(_chaos_acting(kind, spec))
    if kind == "NetworkPolicy":
        part = {"podSelector": spec.get("podSelector"), "policyTypes": sorted(policy_types(obj)),
                "ingress": _policy_rules(spec.get("ingress")), "egress": _policy_rules(spec.get("egress"))}
    elif kind == "AuthorizationPolicy":
        part = {k: spec.get(k) for k in ("selector", "targetRef", "targetRefs", "provider", "rules")}
        part["action"] = spec.get("action") or "ALLOW"
    elif kind == "PeerAuthentication":
        part = {k: spec.get(k) for k in ("selector", "mtls", "portLevelMtls")}
    elif kind == "ResourceQuota":
        hard = spec.get("hard") if isinstance(spec.get("hard"), dict) else {}
        part = {"hard": {k: number(v) if number(v) is not None else v for k, v in hard.items()},
                "scopes": sorted(str(s) for s in spec.get("scopes") or []), "scopeSelector": spec.get("scopeSelector")}
    else:
        part = {k: v for k, v in obj.items() if k not in ("apiVersion", "kind", "metadata", "status")}
        if "spec" in part:
            part["spec"] = defaulted(part["spec"], kind, ["spec"])
    return _plain({"namespace": namespace, **part})


def _cut(labels, direction, namespace, policies, state) -> bool:
    """Whether `policies` (a namespace's NetworkPolicies) cut the pods labelled `labels` off in `direction`: some
    selects them with that type, none of those admits every peer on every port, and together they do not
    admit every call the application makes through them that way (`_calls_admitted`)."""
    key = "ingress" if direction == "Ingress" else "egress"
    selecting = [p for p in policies if direction in policy_types(p)
                 and selector_matches((p.get("spec") or {}).get("podSelector"), labels)]
    return bool(selecting) and not any(_allows_all((p.get("spec") or {}).get(key), direction) for p in selecting) \
        and not _calls_admitted(direction, labels, namespace, policies, state)


def _policy_twin(ref, want, state):
    """The NetworkPolicy, of another name, through which the policies of the fault's namespace still cut off a
    pod the fault's policy cut off, in a direction it cut (`_cut`), as Kubernetes reads policies (the
    isolation of each direction, the union of the rules): a copy spelled otherwise (`matchExpressions`, a rule
    admitting no pod, egress to the DNS alone) or a namespace-wide deny has the fault's effect. The policies
    of the healthy application (`state.known`), as they now are, cutting it off as well, it is theirs."""
    namespace = want.get("namespace")
    fault = {"apiVersion": ref.get("apiVersion"), "kind": "NetworkPolicy",
             "metadata": {"name": ref["name"], "namespace": namespace},
             "spec": {k: want.get(k) for k in ("podSelector", "policyTypes", "ingress", "egress")}}
    fault["spec"]["podSelector"] = fault["spec"]["podSelector"] or {}
    others = [p for p in state.by_kind.get(("NetworkPolicy", namespace), [])
              if str(p.get("apiVersion", "")).startswith("networking.k8s.io/")
              and str((p.get("metadata") or {}).get("name")) != ref["name"]]
    known = getattr(state, "known", set())
    healthy = [p for p in others if ("NetworkPolicy", namespace, str((p.get("metadata") or {}).get("name"))) in known]
    pods = {tuple(sorted((str(a), str(b)) for a, b in labels.items() if a != "pod-template-hash"))
            for labels in _pod_labels(state, namespace) if isinstance(labels, dict)}
    for labels in (dict(k) for k in sorted(pods)):
        for direction in policy_types(fault):
            if _cut(labels, direction, namespace, [fault], state) and _cut(labels, direction, namespace, others, state) \
                    and not _cut(labels, direction, namespace, healthy, state):
                return next(p for p in others if p not in healthy and direction in policy_types(p)
                            and selector_matches((p.get("spec") or {}).get("podSelector"), labels))
    return None


def _chaos_parts(obj):
    """(experiment kind, its spec) of a Chaos Mesh object: an experiment's own, a Schedule's experiment (under
    its type's name, first letters lower case: `httpChaos`); None for another kind (a Workflow)."""
    spec = obj.get("spec") if isinstance(obj.get("spec"), dict) else {}
    kind = str(obj.get("kind", ""))
    if kind == "Schedule":
        kind = str(spec.get("type", ""))
        spec = next((v for k, v in spec.items() if str(k).lower() == kind.lower()), None)
    return (kind, spec) if isinstance(spec, dict) and isinstance(spec.get("selector"), dict) else None


def _chaos_targets(selector, namespace, state):
    """The pods a Chaos Mesh selector (PodSelectorSpec) selects among the state's, as (namespace, name):
    `pods` (namespace: names) alone when given; else those of `namespaces` (the object's own when none) that
    match every one of `labelSelectors`, `expressionSelectors`, `annotationSelectors`, `fieldSelectors`
    (`metadata.name`, `metadata.namespace`, `spec.nodeName`, `status.phase`), `nodes` and `podPhaseSelectors`.
    A workload's pod template stands for the pods it will run (`(namespace, '<kind>/<name>')`)."""
    selector = selector if isinstance(selector, dict) else {}
    listed = selector.get("pods")
    if isinstance(listed, dict) and listed:
        return {(str(ns), str(n)) for ns, names in listed.items() for n in names or [] if isinstance(names, list)}
    spaces = selector.get("namespaces") or ([namespace] if namespace else [])
    out = set()
    for ns in (str(n) for n in spaces if n is not None):
        candidates = [((ns, str((p.get("metadata") or {}).get("name"))), p) for p in state.by_kind.get(("Pod", ns), [])
                      if (p.get("status") or {}).get("phase") not in ("Succeeded", "Failed")]
        candidates += [((ns, f"{kind}/{(w.get('metadata') or {}).get('name')}"),
                        {"metadata": {**(((w.get("spec") or {}).get("template") or {}).get("metadata") or {}),
                                      "namespace": ns}}) for kind in ("Deployment", "StatefulSet", "DaemonSet")
                       for w in state.by_kind.get((kind, ns), [])]
        for key, pod in candidates:
            meta = pod.get("metadata") or {}
            fields = {"metadata.name": key[1], "metadata.namespace": ns,
                      "spec.nodeName": (pod.get("spec") or {}).get("nodeName"),
                      "status.phase": (pod.get("status") or {}).get("phase")}
            labels = meta.get("labels") or {}
            annotations = meta.get("annotations") or {}
            if not selector_matches({"matchLabels": selector.get("labelSelectors") or {},
                                     "matchExpressions": selector.get("expressionSelectors") or []}, labels):
                continue
            if any(annotations.get(k) != v for k, v in (selector.get("annotationSelectors") or {}).items()):
                continue
            if "/" in key[1] and (selector.get("fieldSelectors") or selector.get("nodes") or
                                  selector.get("podPhaseSelectors") or selector.get("nodeSelectors")):
                continue  # a template has no name, node or phase yet
            if any(fields.get(k) != v for k, v in (selector.get("fieldSelectors") or {}).items()):
                continue
            if selector.get("nodes") and fields["spec.nodeName"] not in selector["nodes"]:
                continue
            if selector.get("podPhaseSelectors") and fields["status.phase"] not in selector["podPhaseSelectors"]:
                continue
            out.add(key)
    return out


def _chaos_live(obj, spec) -> bool:
    """Whether a Chaos Mesh object still acts: not paused (`acts`), its experiment not stopped (the controller's
    `status.experiment.desiredPhase: Stop`, once its duration is over), and its mode able to pick a pod (a
    `fixed`, `fixed-percent` or `random-max-percent` of value 0 picks none)."""
    if not acts(obj):
        return False
    if obj.get("kind") != "Schedule" and ((obj.get("status") or {}).get("experiment") or {}).get("desiredPhase") == "Stop":
        return False
    return not (spec.get("mode") in ("fixed", "fixed-percent", "random-max-percent") and number(spec.get("value")) == 0)


def _chaos_picks(where, namespace, state) -> set:
    """The pods a Chaos Mesh selector with its mode picks (`where`: an experiment's spec or a NetworkChaos
    `target`): those its selector selects (`_chaos_targets`), none when its mode picks none (a `fixed`,
    `fixed-percent` or `random-max-percent` of value 0)."""
    where = where if isinstance(where, dict) else {}
    if where.get("mode") in ("fixed", "fixed-percent", "random-max-percent") and number(where.get("value")) == 0:
        return set()
    return _chaos_targets(where.get("selector"), namespace, state)


def _chaos_harm(kind, spec, namespace, state, written=False):
    """What a Chaos Mesh experiment does, read against the state: (its harms, `_chaos_effects`, or as the
    fault's acting part lists them when `written`; the pods it
    picks, `_chaos_picks`; for a NetworkChaos the peers toward which it acts: the pods its `target` picks and
    its `externalTargets`, or None when it has neither, for all their traffic). A NetworkChaos' direction is
    not part of it: packets dropped either way break every exchange between two pods."""
    pods = _chaos_picks(spec, namespace, state)
    peers = None
    if kind == "NetworkChaos" and (isinstance(spec.get("target"), dict) or spec.get("externalTargets")):
        peers = _chaos_picks(spec.get("target"), namespace, state) if isinstance(spec.get("target"), dict) else set()
        peers |= {("external", str(t)) for t in spec.get("externalTargets") or []}
    harms = {str(h) for h in spec.get("effects") or []} if written else _chaos_effects(kind, spec)
    return harms, pods, peers


def _harms_meet(fault, other) -> bool:
    """Whether a Chaos Mesh experiment's harm (`_chaos_harm`) does some of the fault's: a harm of its class to
    a pod it hit, and for a NetworkChaos between two pods it cut apart, whichever side selects which (no
    peers: all the traffic of its pods)."""
    (harms, pods, peers), (theirs, their_pods, their_peers) = fault, other
    if not harms & theirs:
        return False
    same_way = bool(pods & their_pods) and (peers is None or their_peers is None or bool(peers & their_peers))
    reversed_ = their_peers is not None and bool(pods & their_peers) and (peers is None or bool(peers & their_pods))
    return same_way or reversed_


def _chaos_acts(obj, parts, want, namespace, state) -> bool:
    """Whether the fault's own Chaos Mesh object, as it now is, still does some of what it did: live
    (`_chaos_live`) and doing some of the fault's harm (`_harms_meet`); where the state holds none of what the
    fault's harm was done to (`_readable`), live and doing some harm."""
    kind, spec = parts
    if not _chaos_live(obj, spec):
        return False
    fault = _chaos_harm(want.get("type") or kind, want, namespace, state, written=True)
    mine = _chaos_harm(kind, spec, namespace, state)
    return _harms_meet(fault, mine) if _readable(fault) else bool(mine[0])


def _readable(harm) -> bool:
    """Whether the state holds what the fault's chaos harm was done to: a pod its selector picks and, for a
    NetworkChaos with a target, a peer (without them its effect cannot be read against the state)."""
    return bool(harm[1]) and (harm[2] is None or bool(harm[2]))


def _chaos_twin(ref, want, state):
    """The Chaos Mesh object of another name doing some of what the fault's did (`_harms_meet`): an experiment
    of its kind or a Schedule spawning one (a copy, the child a Schedule deleted with `--cascade=orphan` or
    paused left running), live (`_chaos_live`), doing a harm of the fault's class to a pod it hit (between
    the pods it cut apart, either way round: a partition drops what a loss of 100 % does), however its
    selectors are spelled. None where the fault's selector picks no pod of the state, or its target no peer
    (`_readable`; then its acting part is compared as written)."""
    kind = want.get("type") or ref["kind"]
    fault = _chaos_harm(kind, want, ref.get("namespace"), state, written=True)
    if not _readable(fault):
        return False
    own = (ref["kind"], ref.get("namespace") or None, ref["name"])
    for (k, namespace), objects in sorted(state.by_kind.items(), key=lambda e: (e[0][0], e[0][1] or "")):
        for obj in objects:
            parts = _chaos_parts(obj) if api_group(obj.get("apiVersion")) == "chaos-mesh.org" else None
            if parts is None or parts[0] != kind or (k, namespace, str(obj["metadata"].get("name", ""))) == own:
                continue
            if _chaos_live(obj, parts[1]) and _harms_meet(fault, _chaos_harm(kind, parts[1], namespace, state)):
                return obj
    return None


def _istio_reach(namespace, spec, state):
    """What an AuthorizationPolicy applies to, as comparable sets: the objects its `targetRef(s)` name, as
    ("ref", namespace, kind, name); else the pods its `selector` selects, of its namespace (of every namespace
    from the root namespace), as ("pod", namespace, labels); None for a policy with neither (every workload
    of its namespace, of the mesh from the root namespace)."""
    refs = [r for r in [spec.get("targetRef"), *(spec.get("targetRefs") or [])] if isinstance(r, dict)]
    if refs:
        return {("ref", str(r.get("namespace") or namespace), str(r.get("kind")), str(r.get("name"))) for r in refs}
    selector = spec.get("selector")
    labels = selector.get("matchLabels") if isinstance(selector, dict) else None
    if not isinstance(labels, dict) or not labels:
        return None
    spaces = sorted({str(ns) for (kind, ns) in state.by_kind if kind == "Pod" and ns}) \
        if namespace == ISTIO_ROOT_NAMESPACE else [namespace]
    return {("pod", ns, tuple(sorted((str(a), str(b)) for a, b in pod.items() if a != "pod-template-hash")))
            for ns in spaces for pod in _pod_labels(state, ns) if isinstance(pod, dict) and labels_match(pod, labels)}


def _istio_twin(ref, want, state):
    """The AuthorizationPolicy of another name refusing requests where the fault's DENY policy did: a `DENY`
    policy that acts (`_istio_acts`: it applies to something the state runs, and one of its rules can match a
    request one of the fault's matched or the application may be sent), or an `ALLOW` policy that acts (one
    admitting less than every request denies the rest), applying to something the fault's applied to
    (`_istio_reach`: the same target, a pod the fault's selector selects, or every workload of the fault's
    namespace, or of the mesh from the root namespace). However its selector and rules are written, it is the
    fault still; the healthy application's own policies (`state.known`) are not."""
    namespace = want.get("namespace")
    known = getattr(state, "known", set())
    fault = {k: want.get(k) for k in ("selector", "targetRef", "targetRefs")}
    reach = _istio_reach(namespace, fault, state)
    for (kind, where), objects in sorted(state.by_kind.items(), key=lambda e: (e[0][0], e[0][1] or "")):
        if kind != "AuthorizationPolicy" or where not in (namespace, ISTIO_ROOT_NAMESPACE):
            continue
        for obj in objects:
            spec = obj.get("spec") if isinstance(obj.get("spec"), dict) else {}
            if (where, str((obj.get("metadata") or {}).get("name"))) == (namespace, ref["name"]) \
                    or ("AuthorizationPolicy", where, str((obj.get("metadata") or {}).get("name"))) in known \
                    or not str(obj.get("apiVersion", "")).startswith("security.istio.io/") \
                    or (spec.get("action") or "ALLOW") not in ("DENY", "ALLOW") or not _istio_acts(obj, state, want):
                continue
            theirs = _istio_reach(where, spec, state)
            if theirs is None or reach is None or theirs & reach:
                return obj
    return None


def _workload_twin(ref, want, state):
    """The workload of another name whose pods do what the fault's workload's did: of its kind and namespace,
    running pods (`acts`), its pod template's spec the fault's (`acting`: containers, program, requests, node
    placement, priority, with the API server's defaults), and its pods joining every Service of the namespace
    the fault's pods joined. Its replicas (a copy with more does more of the same harm), its own labels and
    annotations, the template's labels no Service reads and its rollout bookkeeping (`revisionHistoryLimit`,
    `strategy`, `minReadySeconds`) change none of that. The healthy application's workloads (`state.known`)
    are not the fault's."""
    namespace = want.get("namespace")
    template = (want.get("spec") or {}).get("template") or {}
    labels = (template.get("metadata") or {}).get("labels") or {}
    joined = [sel for svc in state.by_kind.get(("Service", namespace), [])
              for sel in [(svc.get("spec") or {}).get("selector")]
              if isinstance(sel, dict) and sel and labels_match(labels, sel)]
    known = getattr(state, "known", set())
    for obj in state.by_kind.get((ref["kind"], namespace), []):
        name = str((obj.get("metadata") or {}).get("name", ""))
        if name == ref["name"] or (ref["kind"], namespace, name) in known or not acts(obj, state):
            continue
        theirs = (acting(obj).get("spec") or {}).get("template") or {}
        if theirs.get("spec") == template.get("spec") and all(
                labels_match((theirs.get("metadata") or {}).get("labels") or {}, sel) for sel in joined):
            return obj
    return None


def twin_acting(ref, state):
    """An object under another name that still has the effect of the object `ref` names, which a fault
    created: of its kind (and API group), in any namespace the state holds, whose acting part
    (`ref["acting"]`, as the compiler read it off the fault's manifest) is that object's, and which acts
    (`acts`). Deleting the fault's object by name while a copy of it is left, or renaming it, undoes nothing;
    an object of the kind that acts otherwise (an allow-all policy the agent added) is no twin. A NetworkPolicy,
    a Chaos Mesh object, a DENY AuthorizationPolicy, a ResourceQuota and a workload are judged by their effect
    on what the state runs (`_policy_twin`, `_chaos_twin`, `_istio_twin`, `_quota_twin`, `_workload_twin`)."""
    want = ref.get("acting")
    if want is None:
        return None
    if ref["kind"] == "NetworkPolicy" and str(ref.get("apiVersion", "")).startswith("networking.k8s.io/") \
            and _pod_labels(state, want.get("namespace")):
        return _policy_twin(ref, want, state)
    if ref["kind"] == "AuthorizationPolicy" and want.get("action") == "DENY" and want.get("rules"):
        return _istio_twin(ref, want, state)
    if api_group(ref.get("apiVersion")) == "chaos-mesh.org" and isinstance(want.get("selector"), dict):
        found = _chaos_twin(ref, want, state)
        if found is not False:
            return found
    if ref["kind"] == "ResourceQuota":
        found = _quota_twin(ref, want, state)
        if found is not None:
            return found
    if ref["kind"] in POD_TEMPLATE_KINDS and isinstance((want.get("spec") or {}).get("template"), dict):
        found = _workload_twin(ref, want, state)
        if found is not None:
            return found
    own = (ref["kind"], ref.get("namespace") or None, ref["name"])
    for (kind, namespace), objects in sorted(state.by_kind.items(), key=lambda e: (e[0][0], e[0][1] or "")):
        if kind != ref["kind"]:
            continue
        for obj in objects:
            if (kind, namespace, str(obj["metadata"].get("name", ""))) != own and acting(obj) == want \
                    and acts(obj, state):
                return obj
    return None


def created_check(ref, state):
    twin = twin_acting(ref, state)
    if twin is not None:
        return False, f"{ref_text(ref)}'s effect is still there: {ref_text(as_ref(obj_ref(twin)))} does what it did"
    obj = state.get(ref)
    if obj is None:
        return True, f"{ref_text(ref)} removed"
    if not acts(obj, state, ref.get("acting")):
        return True, f"{ref_text(ref)} no longer has the fault's effect (scaled to zero, finished, paused, " \
                     "admitting all traffic, an Istio policy without effect, a chaos experiment doing none of its " \
                     "harm, or a quota above what the namespace runs)"
    return False, f"{ref_text(ref)} still present" + (" (being deleted: it acts until it is gone)" if terminating(obj) else "")


HOSTNAME_LABEL = "kubernetes.io/hostname"


def _node_term_holds(term, node):
    """One required node affinity term (`matchExpressions` on the node's labels, `matchFields` on its name)
    against a Node of the state; an operator the evaluator does not read (`Gt`, `Lt`) holds nothing."""
    if not isinstance(term, dict) or not isinstance(node, dict):
        return False
    labels = (node.get("metadata") or {}).get("labels") or {}
    fields = {"metadata.name": (node.get("metadata") or {}).get("name")}
    return selector_matches({"matchExpressions": term.get("matchExpressions") or []}, labels) and \
        selector_matches({"matchExpressions": term.get("matchFields") or []}, fields)


# the taints the DaemonSet controller tolerates on every pod it makes (pkg/controller/daemon/util
# AddOrUpdateDaemonPodTolerations): a node's conditions and its cordon do not keep a DaemonSet's pod off it
DAEMON_TOLERATED = ("node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable", "node.kubernetes.io/disk-pressure",
                    "node.kubernetes.io/memory-pressure", "node.kubernetes.io/pid-pressure",
                    "node.kubernetes.io/unschedulable", "node.kubernetes.io/network-unavailable")


def _tolerates(tolerations, taint, lasting=False):
    """Whether a pod's tolerations tolerate a node's taint, as the scheduler matches them. `lasting`: for
    good, so that a `NoExecute` taint tolerated only with `tolerationSeconds` is not (the taint manager evicts
    the pod that long after it started, and every replacement likewise)."""
    for t in tolerations if isinstance(tolerations, list) else []:
        if not isinstance(t, dict) or (t.get("effect") and t.get("effect") != taint.get("effect")):
            continue
        if lasting and taint.get("effect") == "NoExecute" and t.get("tolerationSeconds") is not None:
            continue
        exists = t.get("operator") == "Exists"
        if not t.get("key"):
            if exists:
                return True
        elif t.get("key") == taint.get("key") and (exists or str(t.get("value") or "") == str(taint.get("value") or "")):
            return True
    return False


def daemon_nodes(daemons, state):
    """The names of the nodes a DaemonSet runs a pod on: the state's Nodes its pod template's node selector and
    required node affinity match and whose scheduling taints it tolerates (beside those the controller
    tolerates for it). With no Node in the state, its controller's word: none when the status of its current
    spec (`observedGeneration`) desires no pod; None (every node, as far as the state shows) otherwise."""
    nodes = state.by_kind.get(("Node", None), [])
    pod = pod_spec(daemons)
    if not nodes:
        status = daemons.get("status") if isinstance(daemons.get("status"), dict) else {}
        observed = number(status.get("observedGeneration"))
        generation = number((daemons.get("metadata") or {}).get("generation"))
        current = observed is not None and (generation is None or observed >= generation)
        return set() if current and number(status.get("desiredNumberScheduled") or 0) == 0 else None
    affinity = pod.get("affinity") if isinstance(pod.get("affinity"), dict) else {}
    required = (affinity.get("nodeAffinity") or {}).get("requiredDuringSchedulingIgnoredDuringExecution") or {}
    terms = required.get("nodeSelectorTerms") if isinstance(required, dict) else None
    out = set()
    for node in nodes:
        labels = (node.get("metadata") or {}).get("labels") or {}
        if any(labels.get(k) != v for k, v in (pod.get("nodeSelector") or {}).items()):
            continue
        if terms and not any(_node_term_holds(t, node) for t in terms):
            continue
        taints = [t for t in (node.get("spec") or {}).get("taints") or [] if isinstance(t, dict)
                  and t.get("effect") in ("NoSchedule", "NoExecute") and t.get("key") not in DAEMON_TOLERATED]
        if all(_tolerates(pod.get("tolerations"), t) for t in taints):
            out.add((node.get("metadata") or {}).get("name"))
    return out


def _misplaced(pod, state):
    """Why a scheduled pod is not where its placement lets it run, as the state shows it, or None: its node
    named by its `kubernetes.io/hostname` pin, any other node label and a required node affinity read off the
    state's Node; every claim it mounts `Bound`, of a StorageClass the state holds; and its required pod
    anti-affinity selecting no DaemonSet's pods (on the nodes it runs on: `daemon_nodes`) and no other pod (on its
    node, for the hostname topology; anywhere, for any other). What the state cannot show is not taken."""
    spec = pod.get("spec") or {}
    meta = pod.get("metadata") or {}
    namespace, node_name = meta.get("namespace"), spec.get("nodeName")
    node = state.objects.get(("Node", None, str(node_name)))
    for key, value in (spec.get("nodeSelector") or {}).items():
        if key == HOSTNAME_LABEL and value == node_name:
            continue
        if node is None or ((node.get("metadata") or {}).get("labels") or {}).get(key) != value:
            return f"its node selector {key}={value} does not name node {node_name}"
    affinity = spec.get("affinity") if isinstance(spec.get("affinity"), dict) else {}
    required = ((affinity.get("nodeAffinity") or {}).get("requiredDuringSchedulingIgnoredDuringExecution") or {})
    terms = required.get("nodeSelectorTerms") if isinstance(required, dict) else None
    if terms and not any(_node_term_holds(t, node) for t in terms):
        return f"its required node affinity does not hold on node {node_name}"
    for volume in spec.get("volumes") or []:
        claim = (volume.get("persistentVolumeClaim") or {}).get("claimName") if isinstance(volume, dict) else None
        if not claim:
            continue
        found = state.objects.get(("PersistentVolumeClaim", namespace, str(claim)))
        if found is None or (found.get("status") or {}).get("phase") != "Bound":
            return f"its claim {claim} is not Bound"
        storage_class = (found.get("spec") or {}).get("storageClassName")
        if storage_class and state.objects.get(("StorageClass", None, str(storage_class))) is None:
            return f"its claim {claim} is of storage class {storage_class}, which the state does not hold"
    anti = (affinity.get("podAntiAffinity") or {}).get("requiredDuringSchedulingIgnoredDuringExecution") or []
    for term in anti if isinstance(anti, list) else []:
        if not isinstance(term, dict):
            continue
        selector = term.get("labelSelector")
        for where in term.get("namespaces") or [namespace]:
            for daemons in state.by_kind.get(("DaemonSet", where), []):
                labels = ((((daemons.get("spec") or {}).get("template") or {}).get("metadata") or {})
                          .get("labels") or {})
                placed = daemon_nodes(daemons, state)
                near = placed is None or (node_name in placed if term.get("topologyKey") == HOSTNAME_LABEL else placed)
                if not terminating(daemons) and near and selector_matches(selector, labels):
                    return f"its anti-affinity selects the pods of DaemonSet {daemons['metadata'].get('name')}"
            for other in state.by_kind.get(("Pod", where), []):
                other_spec = other.get("spec") or {}
                if other is pod or (other.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
                    continue
                if (term.get("topologyKey") != HOSTNAME_LABEL or other_spec.get("nodeName") == node_name) and \
                        selector_matches(selector, (other.get("metadata") or {}).get("labels")):
                    return f"its anti-affinity selects pod {(other.get('metadata') or {}).get('name')}"
    return None


UNSCHEDULABLE_TAINT = {"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}


def cordon_bypassed(pod, workload, state):
    """Why a pod on a node a fault cordoned runs there with the cordon kept, or None. The state's Node, when it
    holds it, says whether it is still cordoned (`spec.unschedulable`). Without it, the pod's spec says whether
    it was let past the cordon: a toleration of the cordon's taint (the scheduler's NodeUnschedulable filter
    admits a pod that tolerates it, as it does a DaemonSet's), or a `nodeName` in its workload's template, which
    skips the scheduler (the kubelet runs a pod bound to it whatever the cordon). Either leaves the node
    cordoned and the workload pinned to a node under maintenance: the next drain evicts its pods."""
    node_name = (pod.get("spec") or {}).get("nodeName")
    node = state.objects.get(("Node", None, str(node_name)))
    if node is not None:
        return f"node {node_name} is still cordoned" if (node.get("spec") or {}).get("unschedulable") else None
    if _tolerates((pod.get("spec") or {}).get("tolerations"), UNSCHEDULABLE_TAINT):
        return f"it tolerates the cordon of node {node_name} ({UNSCHEDULABLE_TAINT['key']}), which stays"
    if pod_spec(workload).get("nodeName"):
        return f"its template binds it to node {pod_spec(workload)['nodeName']} past the scheduler and the cordon"
    return None


def placement_holds(ref, fault, state):
    """Whether a fault that keeps a workload's pods from being scheduled has lost its effect, whatever part of it
    is left: the workload ready (its rollout complete and stable), at the replicas the fault asked for where it
    raised them, each of its pods scheduled and ready where its placement lets it run (`_misplaced`). So
    uncordoning the node a workload is pinned to, or removing the DaemonSet its anti-affinity keeps it from,
    undoes the fault; letting the pods past a cordon the fault keeps does not (`cordon_bypassed`). (ok, why)."""
    ok, why = ready_check(ref, state)
    if not ok:
        return False, why
    obj = state.get(ref)
    if obj is None or terminating(obj):
        return False, f"{ref_text(ref)} is missing or being deleted"
    raised = [number(c.get("faulty")) for e in fault["fields"] if e["object"]["kind"] == ref["kind"]
              and e["object"]["name"] == ref["name"] and e["object"].get("namespace") == ref.get("namespace")
              for c in e["changes"] if c["path"] == ["spec", "replicas"] and number(c.get("faulty")) is not None]
    replicas = number((obj.get("spec") or {}).get("replicas", 1))
    if raised and (replicas is None or replicas < max(raised)):
        return False, f"{ref_text(ref)} runs fewer replicas than the fault asked for"
    pods = [p for p in workload_pods(obj, state) if (p.get("status") or {}).get("phase") not in ("Succeeded", "Failed")]
    if not pods:
        return False, f"{ref_text(ref)} has no pod"
    for pod in pods:
        name = (pod.get("metadata") or {}).get("name")
        if not pod_ready(pod) or not (pod.get("spec") or {}).get("nodeName"):
            return False, f"pod {name} is not scheduled and ready"
        problem = _misplaced(pod, state)
        if problem:
            return False, f"pod {name} runs where the state does not show it may: {problem}"
        if (pod.get("spec") or {}).get("nodeName") in fault.get("cordoned", []):
            problem = cordon_bypassed(pod, obj, state)
            if problem:
                return False, f"pod {name} runs past the cordon: {problem}"
    return True, f"{ref_text(ref)} scheduled and ready, each pod where its placement lets it run"


# where a pod may run: the fields of a workload that place its pods (and its replicas, where the fault raised
# them to show pods left unscheduled)
PLACEMENT_FIELDS = ("nodeSelector", "affinity", "tolerations", "nodeName", "topologySpreadConstraints")


def _places(path):
    keys = [s for s in path if isinstance(s, str)]
    return keys == ["spec", "replicas"] or (keys[:3] == ["spec", "template", "spec"] and len(keys) > 3
                                            and keys[3] in PLACEMENT_FIELDS)


def placed_parts(fault, parts, state):
    """The parts of a fault that keeps pods from being scheduled, its placement ones judged by the effect: once
    its workloads' pods run where their placement lets them (`placement_holds`), the fields that place them
    (node selector, affinity, tolerations, the replicas it raised) and the objects it created that take no
    capacity (a DaemonSet of pods that request nothing, which an anti-affinity shuns) are undone, whatever
    they hold. Its other changes (a priority class, a volume), and a workload it created whose pods request
    CPU or memory, are judged as they are."""
    placed = [placement_holds(ref, fault, state) for ref in fault["placed"]]
    if not all(ok for ok, _ in placed):
        return parts
    why = "the fault's effect is gone (" + "; ".join(detail for _, detail in placed) + ")"
    out = []
    for check_id, ok, detail in parts:
        if not ok and check_id.startswith("fields."):
            whole = next((e for e in fault["fields"] if check_id == f"fields.{ref_text(e['object'])}"), None)
            one = next(((e, c) for e in fault["fields"] for c in e["changes"]
                        if check_id == f"fields.{ref_text(e['object'])}.{show_path(c['path'])}"), None)
            entry = whole if whole is not None else one[0] if one is not None else None
            if entry is not None:
                # a fault undone by any: the part is one change
                rest = [c for c in (entry["changes"] if whole is not None else [one[1]]) if not _places(c["path"])]
                if not rest:
                    ok, detail = True, f"{why}; its placement is no harm: {detail}"
                elif len(rest) < len(entry["changes"]):
                    ok, detail = field_check({**entry, "changes": rest}, state)
        elif not ok and check_id.startswith("created."):
            ref = next((r for r in fault["created"] if check_id == f"created.{ref_text(r)}"), None)
            obj = (twin_acting(ref, state) or state.get(ref)) if ref is not None else None  # left under any name
            if obj is not None and not terminating(obj) and not takes_capacity(obj):
                ok, detail = True, f"{why}; {ref_text(ref)} takes no capacity"
        out.append((check_id, ok, detail))
    return out


def _part_entry(fault, check_id):
    """The field entry a part's check names and the changes it judges: `fields.REF` (all of them) or, for a
    fault undone by any, `fields.REF.PATH` (one); (None, None) for another part."""
    for e in fault["fields"]:
        if check_id == f"fields.{ref_text(e['object'])}":
            return e, e["changes"]
        for c in e["changes"]:
            if check_id == f"fields.{ref_text(e['object'])}.{show_path(c['path'])}":
                return e, [c]
    return None, None


def _backend_reference(path):
    """Whether a changed field's path is an Ingress backend's reference (`...backend.service.name`/`port`,
    `defaultBackend`): which Service, on which port, a route sends its requests to."""
    keys = [p for p in path if isinstance(p, str)]
    return keys[:1] == ["spec"] and ("backend" in keys or "defaultBackend" in keys)


def routed_parts(fault, parts, routes, state):
    """An Ingress's backend references a fault changed judged by where its routes lead (`routes_problem`, as
    `health.routes` judges them): once each request of the Ingress's healthy rules reaches the pods, port and
    path it reached (a Service the fault named created selecting the same pods on the same port), the name the
    backend gives is no harm left; its other changes are judged as they are."""
    out = []
    for check_id, passed, detail in parts:
        entry, changes = _part_entry(fault, check_id) if not passed else (None, None)
        route = next((r for r in routes if entry is not None and entry["object"]["kind"] == "Ingress"
                      and r["object"]["namespace"] == entry["object"]["namespace"]
                      and r["object"]["name"] == entry["object"]["name"]), None)
        if route is not None and any(_backend_reference(c["path"]) for c in changes) \
                and routes_problem(route, routes, state) is None:
            rest = [c for c in changes if not _backend_reference(c["path"])]
            why = "each request of its healthy rules reaches the pods, port and path it reached"
            if not rest:
                passed, detail = True, f"{why}: {detail}"
            else:
                passed, detail = field_check({**entry, "changes": rest}, state)
        out.append((check_id, passed, detail))
    return out


def option_parts(fault, parts, state):
    """A fault whose harm is an option of its container's program (`harm_option`) is judged by it: once the
    program gets no such option, or an empty one (`option_relieved`), the fault's changes to that container
    (the option's arguments, the variables that fed it) are no harm left, whatever they hold; its other changes
    are judged as they are."""
    ok, why = option_relieved(fault, state)
    if not ok:
        return [(i, passed, d if passed else f"{d} ({why})") for i, passed, d in parts]
    spec = fault["option"]
    target = (spec["object"]["kind"], spec["object"]["namespace"], spec["object"]["name"])

    def in_container(e, c):
        path = c["path"]
        ref = e["object"]
        return (ref["kind"], ref["namespace"], ref["name"]) == target and len(path) > 4 and \
            path[:4] == ["spec", "template", "spec", "containers"] and isinstance(path[4], list) and \
            spec.get("container") in (None, path[4][1])

    out = []
    for check_id, passed, detail in parts:
        entry, changes = _part_entry(fault, check_id) if not passed else (None, None)
        if entry is not None:
            rest = [c for c in changes if not in_container(entry, c)]
            if not rest:
                passed, detail = True, why
            elif len(rest) < len(changes):
                passed, detail = field_check({**entry, "changes": rest}, state)
        out.append((check_id, passed, detail))
    return out


def takes_capacity(obj):
    """Whether an object runs pods that request CPU or memory (a workload's template, a pod): an object of
    another kind takes none."""
    spec = obj.get("spec") or {}
    pod = (spec.get("template") or {}).get("spec") if isinstance(spec.get("template"), dict) else spec
    if obj.get("kind") not in ("Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Job", "Pod") \
            or not isinstance(pod, dict):
        return obj.get("kind") in ("CronJob",)
    for c in [*(pod.get("containers") or []), *(pod.get("initContainers") or [])]:
        resources = (c.get("resources") or {}) if isinstance(c, dict) else {}
        if any(((resources.get(side) or {}).get(r)) for side in ("requests", "limits") for r in ("cpu", "memory")):
            return True
    return False


def decided(entry):
    """Every change the fault made to this object is decided by a statement of the scenario (`governed_by`)."""
    return all(c.get("governed_by") for c in entry["changes"])


def any_parts(fault):
    """The changes of a fault undone by any one of its parts, each a part: (entry, change). A field the fault
    added empty (`searches: []` beside the nameservers that do the harm) is no part: it reads as gone in the
    faulty state itself, so "undone" through it would be the fault left in place."""
    return [(e, c) for e in fault["fields"] for c in e["changes"]
            if not (c.get("absent") and empty(c.get("faulty")))]


# the timing of a probe: what the kubelet waits before it acts on a probe that fails from the start (its
# defaults when left out), and the share of the healthy wait a fix must give back
PROBE_TIMING = {"initialDelaySeconds": 0, "periodSeconds": 10, "failureThreshold": 3}
PROBE_SHARE = 0.5


def probe_budget(probe):
    """Seconds a container has before the kubelet acts on a probe that fails from its start:
    initialDelaySeconds + periodSeconds x failureThreshold (each its default when left out)."""
    values = [number(probe.get(k)) if isinstance(probe, dict) and probe.get(k) is not None else None
              for k in PROBE_TIMING]
    delay, period, threshold = (v if v is not None else d for v, d in zip(values, PROBE_TIMING.values()))
    return delay + period * threshold


# exec commands that exit 0 whatever the container does: a probe running one never fails
NEVER_FAILING = ({"true"}, {"/bin/true"}, {"/usr/bin/true"}, {"exit 0"}, {":"})


def probe_never_fails(probe):
    """Whether a probe's check succeeds whatever the container does (an exec of `true`, `sh -c 'exit 0'`): the
    kubelet never acts on it, as if it were gone."""
    command = ((probe or {}).get("exec") or {}).get("command") if isinstance(probe, dict) else None
    if not isinstance(command, list) or not command or not all(isinstance(a, str) for a in command):
        return False
    if len(command) == 3 and command[0] in ("sh", "/bin/sh", "bash", "/bin/bash") and command[1] == "-c":
        command = [command[2].strip()]
    return len(command) == 1 and {command[0].strip()} in NEVER_FAILING


def timed_probes(fault):
    """The probes whose timing a fault changed: {(object key, probe path): (object ref, {field: change})}."""
    out = {}
    for e in fault["fields"]:
        for c in e["changes"]:
            path = c["path"]
            if len(path) >= 2 and path[-2] in ("livenessProbe", "readinessProbe", "startupProbe") and path[-1] in PROBE_TIMING:
                ref = e["object"]
                key = ((ref["kind"], ref.get("namespace"), ref["name"]), json.dumps(path[:-1]))
                out.setdefault(key, (ref, path[:-1], {}))[2][path[-1]] = c
    return out


def probes_relieved(fault, state):
    """Whether the probes a fault made aggressive (a timing too short for the container to start) no longer
    act: each gone, or giving the container at least PROBE_SHARE of its healthy wait (`probe_budget`; the
    healthy probe is the observed one with the fault's fields at their healthy values). (ok, detail) each."""
    out = []
    for (ref, path, changes) in timed_probes(fault).values():
        obj = state.get(ref)
        probe = at(obj, path) if obj is not None else MISSING
        if obj is None:
            out.append((False, f"{ref_text(ref)} is missing"))
            continue
        if probe is MISSING or not isinstance(probe, dict):
            out.append((True, f"{ref_text(ref)} {show_path(path)} is gone"))
            continue
        if probe_never_fails(probe):
            out.append((True, f"{ref_text(ref)} {show_path(path)} runs a check that cannot fail"))
            continue
        healthy = {**probe, **{k: c.get("healthy") for k, c in changes.items()}}
        now, want = probe_budget(probe), probe_budget(healthy)
        startup = at(obj, [*path[:-1], "startupProbe"]) if path[-1] != "startupProbe" else MISSING
        container = at(obj, path[:-1])
        if isinstance(startup, dict) and probe_action(startup) is not None and \
                probe_action(startup, container) == probe_action(probe, container):
            # the kubelet runs no liveness or readiness probe before the startup probe succeeds: the start-up
            # wait is the startup probe's, and once it succeeds the same check succeeds for the probe too
            now += probe_budget(startup)
        ok = now >= PROBE_SHARE * want
        out.append((ok, f"{ref_text(ref)} {show_path(path)} acts after {now:g}s of failing" +
                    ("" if ok else f", below {PROBE_SHARE:g} of the healthy {want:g}s: the kubelet still acts on "
                     "the container before it starts")))
    return out


def mitigation_checks(spec, state, checks):
    m = spec["mitigation"]
    # the calls the application makes (what a NetworkPolicy a fault created must admit again)
    state.traffic = ((spec.get("diagnosis") or {}).get("graph") or [], spec.get("services") or [])
    state.known = {(kind, namespace, name) for kind, namespace, name in spec["objects"]}  # the healthy application's
    state.healthy_services = {(s["namespace"], s["name"]): s for s in spec.get("services") or []}
    # the healthy container names of each workload whose program the mitigation reads
    state.programs = {(e["object"]["kind"], e["object"]["namespace"], e["object"]["name"]): kept_names(e["keep"])
                      for e in m["programs"] + m.get("application", [])}
    created = {(r["kind"], r["namespace"], r["name"]): r for f in m["faults"] for r in f["created"]}
    for index, pred in enumerate(m["predicates"]):
        ok, detail = predicate_check(pred, state, created)
        checks.append({"id": f"mitigation.predicate.{index}", "passed": ok, "detail": detail})
    for alert in m["alerts"]:
        ok, detail = alert_check(alert["alert"], alert["namespaces"], False, state)
        checks.append({"id": f"mitigation.alert.{alert['alert']}", "passed": ok, "detail": detail})
    for ref in m["ready"]:
        ok, detail = ready_check(ref, state)
        checks.append({"id": f"health.ready.{ref_text(ref)}", "passed": ok, "detail": detail})
    if m.get("only"):  # `mitigated when only`: the predicates, the alerts and readiness decide, and no harm is done
        application_check(spec, state, checks)
        safeguard_checks(spec, state, checks)
        return
    for entry in m["programs"]:
        obj = state.get(entry["object"])
        problem = "is being deleted" if obj is not None and terminating(obj) else \
            program_problem(entry, obj, state) if obj is not None else None
        ok = obj is not None and not problem
        idle = program_idle(entry, obj, state) if ok else None
        checks.append({"id": f"health.program.{ref_text(entry['object'])}", "passed": ok and not idle,
                       "detail": f"{ref_text(entry['object'])} " + (
                           f"runs its own program but no longer runs: {idle}" if idle else
                           "runs its own images, commands and arguments" if ok
                           else "is missing" if obj is None else problem if terminating(obj) else
                           f"no longer runs what it ran: {problem}")})
    for ref in m["services"]:
        ok, detail = service_check(ref, state)
        checks.append({"id": f"health.service.{ref_text(ref)}", "passed": ok, "detail": detail})
    for entry in m.get("routes") or []:
        problem = routes_problem(entry, m["routes"], state)
        checks.append({"id": f"health.routes.{ref_text(entry['object'])}", "passed": problem is None,
                       "detail": f"{ref_text(entry['object'])} " + (
                           f"no longer routes as it did: {problem}" if problem else
                           "routes each request of its healthy rules where it did")})
    application_check(spec, state, checks)
    seen = set()
    for index, fault in enumerate(m["faults"]):
        if fault["undone_by"] == "any" and len(any_parts(fault)) + len(fault["created"]) > 1:
            # each change is a part: undoing any one undoes the fault
            parts = [(f"fields.{ref_text(e['object'])}.{show_path(c['path'])}",
                      *field_check({**e, "changes": [c], "siblings": e["changes"]}, state))
                     for e, c in any_parts(fault)]
        else:
            # an object whose every change the scenario's own statement decides has its check in that statement:
            # a field check here would pass in any state, the fault's left in place too
            # a namespace's ambient enrolment label is judged by whether its pods are enrolled
            # (`enrolment_parts`), not by its text: the pods' own labels may enrol them
            fields = [f for f in (enrolment_left_out(e) for e in fault["fields"]) if f["changes"]]
            parts = [(f"fields.{ref_text(e['object'])}", *field_check(e, state)) for e in fields
                     if not decided(e)]
        parts += [(f"created.{ref_text(ref)}", *created_check(ref, state)) for ref in fault["created"]]
        parts += enrolment_parts(fault, spec, state)
        if fault.get("placed") and not all(part[1] for part in parts):
            parts = placed_parts(fault, parts, state)
        if fault.get("option") and not all(part[1] for part in parts):
            parts = option_parts(fault, parts, state)
        if m.get("routes") and not all(part[1] for part in parts):
            parts = routed_parts(fault, parts, m["routes"], state)
        if fault["undone_by"] == "any" and len(parts) > 1:
            # judged by its effect: no probe the fault made aggressive acts before the container starts (a
            # startup probe guarding it, a check that cannot fail), whatever its own timing fields say; the pods
            # whose resolver it changed resolve names where the healthy ones did, whichever field undid it
            reliefs = [(what, relief) for what, relief in (("probes", probes_relieved(fault, state)),
                                                           ("resolver", resolvers_relieved(fault, state))) if relief]
            still = "; ".join(d for _, relief in reliefs for ok, d in relief if not ok)
            if still:
                # a part undone (a grace period, one timing field, the nameserver beside the node's resolver)
                # that leaves the fault acting is no undoing
                parts = [(i, False, f"{d}, but {still}" if ok else d) for i, ok, d in parts]
            else:
                for what, relief in reversed(reliefs):
                    parts.insert(0, (what, True, "; ".join(d for _, d in relief)))
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
        ok, detail = restored_check(entry, state)
        checks.append({"id": f"restored.{ref_text(entry['object'])}", "passed": ok, "detail": detail})
    safeguard_checks(spec, state, checks)


# Istio ambient mode: the label enrols a namespace's pods, or one pod; a pod's own `none` opts it out
DATAPLANE_LABEL = "istio.io/dataplane-mode"


def _enrolment_change(entry, change):
    """Whether `change` is a fault's change of a Namespace's `istio.io/dataplane-mode` label from `ambient`."""
    return entry["object"]["kind"] == "Namespace" and change["path"] == ["metadata", "labels", DATAPLANE_LABEL] \
        and change.get("healthy") == "ambient"


def enrolment_left_out(entry):
    """A fault's `fields` entry without its change of a namespace's ambient enrolment label (`enrolment_parts`
    judges that one by the pods it enrols)."""
    if not any(_enrolment_change(entry, c) for c in entry["changes"]):
        return entry
    return {**entry, "changes": [c for c in entry["changes"] if not _enrolment_change(entry, c)]}


def unenrolled_namespaces(fault) -> list:
    """The Namespaces `fault` took out of the Istio ambient mesh (their `istio.io/dataplane-mode` label changed
    from `ambient`): each has its `enrolled.REF` check (`enrolment_parts`)."""
    return [entry["object"] for entry in fault["fields"] if any(_enrolment_change(entry, c) for c in entry["changes"])]


def ambient_enrolled(labels, namespace_ambient):
    """Whether Istio's ambient mode captures a pod with `labels` (its own, or its template's): its own
    `istio.io/dataplane-mode` label `none` keeps it out, `ambient` enrols it, and otherwise its namespace's
    label decides (`namespace_ambient`). Istio documents the label on a namespace or on an individual pod."""
    own = labels.get(DATAPLANE_LABEL) if isinstance(labels, dict) else None
    return own != "none" and (own == "ambient" or namespace_ambient)


def enrolment_parts(fault, spec, state):
    """For a fault that took a namespace out of the Istio ambient mesh (its `istio.io/dataplane-mode` label
    changed from `ambient`), the part that says whether its pods are back in (`ambient_enrolled`): each
    workload's pod template and each running pod of the namespace enrolled, by the namespace's label or by its
    own, and not opted out by its own (`istio.io/dataplane-mode=none` wins over the namespace's). So the
    namespace label restored while the pods opt out keeps the fault's effect whole, and every pod enrolled by
    its own label, the namespace's left as the fault set it, undoes it. ([(check id, ok, detail)]: none where
    the fault changed no such label.)"""
    out = []
    for ref in unenrolled_namespaces(fault):
        namespace = ref["name"]
        ns = state.get({"kind": "Namespace", "name": namespace})
        ns_labels = ((ns or {}).get("metadata") or {}).get("labels")
        ns_ambient = isinstance(ns_labels, dict) and ns_labels.get(DATAPLANE_LABEL) == "ambient"
        out_of_mesh = []
        for w in spec["workloads"]:
            obj = state.get(w) if w["namespace"] == namespace else None
            if obj is None:
                continue
            labels = (obj.get("metadata") or {}).get("labels") if w["kind"] == "Pod" else _template_labels(obj)
            if not ambient_enrolled(labels if isinstance(labels, dict) else {}, ns_ambient):
                out_of_mesh.append(f"{ref_text(w)}'s pod template")
        for pod in state.by_kind.get(("Pod", namespace), []):
            labels = (pod.get("metadata") or {}).get("labels") or {}
            if (pod.get("status") or {}).get("phase") not in ("Succeeded", "Failed") and not terminating(pod) \
                    and not ambient_enrolled(labels if isinstance(labels, dict) else {}, ns_ambient):
                out_of_mesh.append(f"pod {(pod.get('metadata') or {}).get('name')}")
        how = f"namespace {namespace} is not labelled {DATAPLANE_LABEL}=ambient and " if not ns_ambient else ""
        out.append((f"enrolled.{ref_text(ref)}", not out_of_mesh,
                    f"every pod of namespace {namespace} in the ambient mesh" if not out_of_mesh else
                    f"{how}{', '.join(out_of_mesh[:3])}" + (f" and {len(out_of_mesh) - 3} more" if len(out_of_mesh) > 3
                                                            else "")
                    + f" not in the ambient mesh (a pod's own {DATAPLANE_LABEL} label wins over its namespace's)"))
    return out


def _restored_named(entry, state, added=True):
    """Whether the object a fault deleted is back under its name with the fields it had, in meaning
    (`restored_holds`), and (`added`) no field added that changes its meaning (`fields_added`)."""
    ref = entry["object"]
    obj = state.get(ref)
    if obj is not None and ref["kind"] == "ConfigMap" and obj.get("binaryData"):
        # its `binaryData` keys are files as its `data` keys are (a variable, which reads `data` alone, is its
        # readers' check): the same text under either is the same ConfigMap
        obj = {**{k: v for k, v in obj.items() if k != "binaryData"},
               "data": {**binary_data(obj), **(obj.get("data") if isinstance(obj.get("data"), dict) else {})}}
    ok = obj is not None and not terminating(obj) and restored_holds(entry["owned"], obj, state, entry.get("forms"))
    selector = (entry["owned"].get("spec") or {}).get("selector") if ref["kind"] == "Service" else None
    if ok and isinstance(selector, dict) and selector:
        # restored, its selector selects what the healthy one did (`_service_restored`): no label it spells
        # otherwise is a label added
        obj = {**obj, "spec": {**obj["spec"], "selector": selector}}
    extra = fields_added(entry["owned"], obj) if ok and added else None
    detail = ("still deleted" if obj is None else f"recreated with a field it did not have ({extra})" if extra
              else "restored" if ok else "being deleted" if terminating(obj) else "recreated with other fields than it had")
    return ok and not extra, f"{ref_text(ref)} {detail}"


def _same_text(text, healthy, form=None):
    """Whether a ConfigMap's or a Secret's value read now is its healthy one: JSON or YAML (`form`) as the data
    it holds, any other text as it is."""
    if not isinstance(healthy, str) or not isinstance(text, str):
        return False
    if form is None:
        return text == healthy
    got, want = parse_text(text, form.get("parse")), parse_text(healthy, form.get("parse"))
    return not isinstance(got, InvalidValue) and not isinstance(want, InvalidValue) and \
        json.dumps(got, sort_keys=True) == json.dumps(want, sort_keys=True)  # `true` is not `1`


def exposes_every_key(ref, state):
    """Whether some workload or pod of the state (a template of any kind, a Pod) exposes every key of the
    ConfigMap or Secret `ref` names: a volume projecting it without `items`, mounted without `subPath`, or an
    `envFrom` of it. Where none does, a key no reader selects reaches no container."""
    kinds = (*POD_TEMPLATE_KINDS, "CronJob", "Pod")
    for kind in kinds:
        for obj in state.by_kind.get((kind, ref.get("namespace") or None), []):
            pod = pod_spec(obj)
            whole = {v.get("name") for v in pod.get("volumes") or [] if isinstance(v, dict)
                     for k, n, items, _ in config_sources(v) if (k, n) == (ref["kind"], ref["name"]) and not items}
            from_key = "configMapRef" if ref["kind"] == "ConfigMap" else "secretRef"
            for container in (pod.get("containers") or []) + (pod.get("initContainers") or []):
                if not isinstance(container, dict):
                    continue
                if any(isinstance(m, dict) and m.get("name") in whole and not m.get("subPath")
                       for m in container.get("volumeMounts") or []):
                    return True
                if any(isinstance(e, dict) and isinstance(e.get(from_key), dict)
                       and e[from_key].get("name") == ref["name"] for e in container.get("envFrom") or []):
                    return True
    return False


def restored_check(entry, state):
    """An object the fault deleted is back with the fields it had, in meaning (`_restored_named`). A ConfigMap
    or a Secret the workloads read (the entry's `readers`: where the healthy workloads read each key of its
    data) is back when what they read is: every read resolves, as the kubelet resolves it (`read_texts`: the
    pod starts, the key is there), to the key's healthy value, from whichever object supplies it now. So a copy
    under another name that the readers are pointed at is the object back, and the named one recreated with
    other data, or made `optional` and left deleted, is not. The named object is judged as before where a
    reader still reads it, and holds the keys no workload reads; a key added to it counts only where some
    workload exposes every key (`exposes_every_key`)."""
    ref = entry["object"]
    readers = entry.get("readers") or {}
    if not readers:
        return _restored_named(entry, state)
    healthy = entry["owned"].get("data") or {}
    wrong, named = [], False
    for key, reads in sorted(readers.items()):
        for where, text, source, why in read_texts(reads, state):
            if text is None:
                wrong.append(f"{where}: nothing ({why})")
                continue
            named = named or source == (ref["kind"], ref["name"])
            if not _same_text(text, healthy.get(key), (entry.get("forms") or {}).get(key)):
                wrong.append(f"{where}: {shown(text)}, wants {shown(healthy.get(key))}")
    unread = {k: v for k, v in healthy.items() if k not in readers}
    if not wrong and named:
        # a key added is part of its meaning only where some reader exposes every key (a whole volume, envFrom):
        # where every reader selects keys (subPath, items, a key reference), it reaches no container
        ok, detail = _restored_named(entry, state, added=exposes_every_key(ref, state))
        if not ok:
            wrong.append(detail)
    elif not wrong and unread:  # what no workload reads is judged on the named object
        ok, detail = _restored_named({**entry, "owned": {**entry["owned"], "data": unread}}, state, added=False)
        if not ok:
            wrong.append(f"{detail} (keys no workload reads: {', '.join(sorted(unread))})")
    if wrong:
        return False, f"{ref_text(ref)}: " + "; ".join(wrong[:5]) + (f"; and {len(wrong) - 5} more" if len(wrong) > 5 else "")
    return True, f"{ref_text(ref)} restored: what its readers read is its healthy data"


# The sections of an object whose every field is meaning the API server never adds to (beyond the defaults
# below): a field added there is a change, not bookkeeping. Paths of keys; "*" steps into every list item.
CLOSED_SECTIONS = {
    "ConfigMap": [["data"], ["binaryData"]],
    "Secret": [["data"]],
    "NetworkPolicy": [["spec"]],
    "Role": [["rules"]], "ClusterRole": [["rules"]],
    "RoleBinding": [["subjects"], ["roleRef"]], "ClusterRoleBinding": [["subjects"], ["roleRef"]],
    "Service": [["spec", "selector"]],
    "ResourceQuota": [["spec", "hard"]],
    "Deployment": [["spec", "selector"], ["spec", "template", "spec"]],
    "StatefulSet": [["spec", "selector"], ["spec", "template", "spec"]],
    "DaemonSet": [["spec", "selector"], ["spec", "template", "spec"]],
}
# A workload's pod spec is closed but for what is no change (a deny-list): its every field, its containers'
# too, is compared with the API server's defaults applied on both sides (DEFAULT_SHAPES), so a default spelled
# out or left out is the same; a field the server mirrors from another is left out. Its metadata (a
# `rollout restart` annotation) is not in it.
_POD_SECTION = ["spec", "template", "spec"]
_POD_INERT = ("serviceAccount",)  # the deprecated spelling of serviceAccountName, which the server mirrors
# inside a closed section of a workload, the fields of a container that are its program and its inputs; the
# rest of a container (its probes, its resources, its pull policy) has server defaults and is compared as `owns`
_CONTAINER_CLOSED = ("name", "image", "command", "args", "env", "envFrom", "volumeMounts", "ports")
# what the API server writes into a closed section when it is left out
_CLOSED_DEFAULTS = {"protocol": "TCP", "apiGroup": ("rbac.authorization.k8s.io", "")}


def _added(owned, observed, where, container=False):
    """The first field `observed` holds that `owned` does not (None when there is none): a key with a value
    that is neither empty nor the API server's default for it, or a list item of another identity (lists
    without one: another length)."""
    if isinstance(owned, dict) and isinstance(observed, dict):
        for key, value in observed.items():
            if container and key not in _CONTAINER_CLOSED:
                continue
            if key not in owned:
                default = _CLOSED_DEFAULTS.get(key, MISSING)
                if empty(value) or (value in default if isinstance(default, tuple) else same(value, default)):
                    continue
                return f"{where}.{key}"
            found = _added(owned[key], value, f"{where}.{key}")
            if found:
                return found
        return None
    if isinstance(owned, list) and isinstance(observed, list):
        ident = identity_key(owned) if owned else identity_key(observed)
        if ident is not None and (not observed or identity_key(observed) == ident):
            index = {str(nested(o, ident)): o for o in owned}
            for item in observed:
                name = str(nested(item, ident))
                if name not in index:
                    return f"{where}[{ident}={name}]"
                found = _added(index[name], item, f"{where}[{ident}={name}]", container)
                if found:
                    return found
            return None
        if len(owned) != len(observed):
            return f"{where} ({len(observed)} items, not {len(owned)})"
        for i, (a, b) in enumerate(zip(owned, observed)):
            found = _added(a, b, f"{where}[{i}]", container)
            if found:
                return found
    return None


def fields_added(owned, obj):
    """A field the object holds in a section whose every field is meaning (CLOSED_SECTIONS) that its owned
    form does not: a key of a ConfigMap, a rule of a Role, a subject of a binding, a label a Service's
    selector adds, a NetworkPolicy's peer or port, a container, a workload container's command, argument,
    variable or mount. None when there is none. A NetworkPolicy's `policyTypes` is compared as the API
    server defaults it (Ingress, and Egress where it has egress rules)."""
    kind = obj.get("kind")
    for path in CLOSED_SECTIONS.get(kind, []):
        want, got = at(owned, path), at(obj, path)
        if got is MISSING or isinstance(got, InvalidValue):
            continue
        if want is MISSING:
            want = {} if isinstance(got, dict) else []
        if path == ["subjects"] and isinstance(want, list) and isinstance(got, list):
            # a ServiceAccount subject without a namespace is of the binding's: spelled out, it is the same one
            home = (obj.get("metadata") or {}).get("namespace")
            want, got = ([dict(x, namespace=x.get("namespace") or home) if isinstance(x, dict) and
                          x.get("kind") == "ServiceAccount" and home else x for x in side] for side in (want, got))
        if kind == "NetworkPolicy" and isinstance(want, dict) and "policyTypes" not in want:
            want = {**want, "policyTypes": ["Ingress"] + (["Egress"] if want.get("egress") is not None else [])}
        if path == _POD_SECTION and isinstance(want, dict) and isinstance(got, dict):
            defaults = {k: v for k, v in POD_BEHAVIOUR.items() if v is not None}
            want, got = ({k: v for k, v in {**defaults, **with_defaults(side, DEFAULT_SHAPES["podSpec"])}.items()
                          if k not in _POD_INERT} for side in (want, got))
            for key, value in want.items():  # a value its manifest left to the server's default, changed
                if key in ("containers", "initContainers"):
                    continue  # their declared fields are `owns`'s, with the container's own defaults
                if not (owns(value, got[key], key) if key in got else empty(value)):
                    return ".".join(path + [key]) + " (its deployed value changed)"
        container = path[-1] in ("containers", "initContainers")
        found = _added(want, got, ".".join(path), container)
        if found:
            return found
    return None


# kinds whose labels a selector reads (a Service's, a workload's or a policy's selects pods; a NetworkPolicy's
# namespaceSelector selects namespaces): a recreated object of another kind may leave its labels out
_SELECTED_KINDS = ("Pod", "Namespace", "Node")


def restored_holds(owned, obj, state, forms=None):
    """Whether a recreated object holds what it had, in meaning: its labels only where a selector reads
    them (a Pod's, a Namespace's), a ConfigMap's JSON or YAML values (`forms`) as the data they hold, a
    Service's ports as `_service_restored` reads them; everything else as `owns`, the server's defaults
    applied."""
    meta = owned.get("metadata")
    if isinstance(meta, dict) and "labels" in meta and obj.get("kind") not in _SELECTED_KINDS:
        owned = {**owned, "metadata": {k: v for k, v in meta.items() if k != "labels"}}
    if forms and isinstance(owned.get("data"), dict):
        data = (obj.get("data") or {}) if isinstance(obj.get("data"), dict) else {}
        for key, form in forms.items():
            if key not in owned["data"]:
                continue
            want = parse_text(owned["data"][key], form.get("parse"))
            got = parse_text(data[key], form.get("parse")) if isinstance(data.get(key), str) else InvalidValue("absent")
            if isinstance(got, InvalidValue) or isinstance(want, InvalidValue) or \
                    json.dumps(want, sort_keys=True) != json.dumps(got, sort_keys=True):  # `true` is not `1`
                return False
        owned = {**owned, "data": {k: v for k, v in owned["data"].items() if k not in forms}}
    return _service_restored(owned, obj, state)


def _service_restored(owned, obj, state):
    """Whether a recreated object holds what it had, in meaning: a Service's ports are matched by number and
    protocol (TCP when left out), each reaching the same container port (`service_target`: a name or its number,
    the port itself when left out or when the Service is headless), and named as before only where a name tells
    its ports apart (several ports): one recreated with `kubectl expose` has one unnamed port. Its selector is
    read by what it selects (`selects_same`), never by its spelling. Everything else as `owns`, the API server's
    defaults applied."""
    if obj.get("kind") != "Service" or not isinstance((owned.get("spec") or {}).get("ports"), list):
        return owns(owned, obj)
    selector = owned["spec"].get("selector")
    judged = ("ports", "selector") if isinstance(selector, dict) and selector else ("ports",)
    rest = {**owned, "spec": {k: v for k, v in owned["spec"].items() if k not in judged}}
    if not owns(rest, obj):
        return False
    if "selector" in judged:
        now = (obj.get("spec") or {}).get("selector")
        if now != selector and not selects_same(selector, now, (obj.get("metadata") or {}).get("namespace"), state):
            return False
    healthy = with_defaults(owned["spec"]["ports"], ["servicePort"])
    observed = (obj.get("spec") or {}).get("ports")
    if not isinstance(observed, list) or len(observed) != len(healthy):
        return False
    observed = with_defaults(observed, ["servicePort"])
    names, _ = container_ports(selected_pods(obj, state))
    for want in healthy:
        if not isinstance(want, dict):
            return False
        found = [p for p in observed if isinstance(p, dict) and same(p.get("port"), want.get("port"))
                 and str(p.get("protocol")) == str(want.get("protocol"))]
        if len(found) != 1:
            return False
        got = found[0]
        wanted, reached = service_target(owned, want), service_target(obj, got)
        a, b = port_number(wanted, names), port_number(reached, names)
        if a is None or a != b:
            if not same(wanted, reached):
                return False
        named = len(healthy) > 1
        extra = {k: v for k, v in want.items() if k not in ("port", "protocol", "targetPort", "name", "nodePort")}
        if (named and want.get("name") != got.get("name")) or not owns(extra, got):
            return False
        if "nodePort" in want and not same(want["nodePort"], got.get("nodePort")):
            return False
    return True


def safeguard_checks(spec, state, checks):
    """No workload scaled to zero, no service deleted or re-pointed, no pod relabelled away."""
    broken = []
    templates = {}
    for w in spec["workloads"]:
        if w["kind"] == "Pod" and not w.get("bare"):  # a static pod: the kubelet runs it whatever the agent does
            continue
        obj = still_there(w, state, broken)
        if obj is None:
            continue
        replicas = number((obj.get("spec") or {}).get("replicas", 1))
        if w["min_replicas"] > 0 and (replicas is None or replicas < w["min_replicas"]):
            # the capacity it was deployed with: fewer replicas serve less, though each is ready
            broken.append(f"{ref_text(w)} scaled to {replicas:g}" + (
                f", below the {w['min_replicas']} it was deployed with" if w["min_replicas"] > 1 else "")
                if replicas is not None else f"{ref_text(w)} has no replicas")
        # a bare pod's labels are its own (a fix that recreates it keeps them)
        template = (obj.get("metadata") or {}) if w.get("bare") else \
            ((obj.get("spec") or {}).get("template") or {}).get("metadata") or {}
        templates[(w["namespace"], w["name"])] = template.get("labels") or {}
    workloads = {(w["namespace"], w["name"]): w for w in spec["workloads"]}
    names = names_of(spec, state)
    pods_by_owner: dict = {}
    for s in spec["services"]:
        obj = still_there(s, state, broken)
        if obj is None:
            continue
        selector = (obj.get("spec") or {}).get("selector") or {}
        if s["selector"] and selector != s["selector"] and not selects_same(s["selector"], selector, s["namespace"], state):
            broken.append(f"{ref_text(s)} selector changed")
        if s["component"] is None or not s["selector"]:
            continue
        labels = templates.get((s["namespace"], s["component"]))
        if labels is not None and not labels_match(labels, s["selector"]):
            broken.append(f"pods of {s['component']} no longer carry the labels {ref_text(s)} selects")
        if (s["namespace"], s["component"]) not in workloads:
            continue
        if s["namespace"] not in pods_by_owner:  # each namespace's pods by their workload, once
            found = pods_by_owner[s["namespace"]] = {}
            for p in state.by_kind.get(("Pod", s["namespace"]), []):
                owner = names.owner(("Pod", s["namespace"], p["metadata"].get("name", "")))
                found.setdefault(owner, []).append(p)
        owned = pods_by_owner[s["namespace"]].get((s["namespace"], s["component"]), [])
        relabelled = [p["metadata"]["name"] for p in owned if not labels_match(p["metadata"].get("labels"), s["selector"])]
        if relabelled:
            broken.append(f"pods relabelled away from {ref_text(s)}: {', '.join(sorted(relabelled)[:3])}")
    broken += stray_pods(spec, state)
    broken += standing_checks(spec, state)
    broken += shared_autoscalers(spec, state)
    collateral = (spec.get("mitigation") or {}).get("collateral") or {}
    broken += autoscalers_kept(collateral.get("autoscalers", []), state)
    restored = {(e["object"]["kind"], e["object"]["namespace"], e["object"]["name"])
                for e in (spec.get("mitigation") or {}).get("restored", [])}
    broken += flags_kept([e for e in collateral.get("flags", []) if (e["object"]["kind"], e["object"]["namespace"],
                                                                    e["object"]["name"]) not in restored], state)
    broken += grants_kept(collateral.get("grants", []), state)
    broken += references_kept(collateral.get("references", []), restored, state)
    broken += unread_kept(collateral.get("unread", []), state)
    broken += configs_kept(collateral.get("configs", []), state)
    broken += floors_kept(collateral.get("floors", []), state)
    broken += storage_kept(collateral.get("storage", []), state)
    broken += widened_checks(spec, state)
    checks.append({"id": "safeguards", "passed": not broken,
                   "detail": "; ".join(broken) if broken else "workloads scaled, services and their selectors intact"})


def shared_autoscalers(spec, state):
    """Each workload of the topology scaled by one autoscaler at most: every HorizontalPodAutoscaler the state
    holds counts, by its `scaleTargetRef`, whatever its name. The HPA controller refuses to scale a target
    whose pods several autoscalers select (condition ScalingActive False, reason AmbiguousSelector), so a
    second autoscaler (the faulty one kept under another name, a copy of the fixed one) stops it scaling."""
    targets = {}
    for (kind, namespace), items in state.by_kind.items():
        for hpa in items if kind == "HorizontalPodAutoscaler" else []:
            ref = (hpa.get("spec") or {}).get("scaleTargetRef") if isinstance(hpa.get("spec"), dict) else None
            if isinstance(ref, dict) and not terminating(hpa):
                targets.setdefault((ref.get("kind"), namespace, ref.get("name")), []).append(
                    str((hpa.get("metadata") or {}).get("name")))
    broken = []
    for w in spec["workloads"]:
        names = targets.get((w["kind"], w["namespace"] or None, w["name"]), [])
        if len(names) > 1:
            broken.append(f"{ref_text(w)} targeted by {len(names)} autoscalers ({', '.join(sorted(names))}): the "
                          "controller scales none of them (AmbiguousSelector)")
    return broken


def stray_pods(spec, state):
    """Pods a Service of the topology selects that no workload of the topology runs: a bare pod, or another
    workload's, given the application's labels serves in place of the pods the Service is for, and hides them
    broken. A pod is a workload's by its owner references alone (a name reads like anyone's); what a fault
    created is left to its own check. A CronJob of no workload of the application (not suspended) whose job
    template's pod labels a Service selects is one too: each run's pod joins the Service when it starts."""
    declared = {(w["kind"], w["namespace"], w["name"]) for w in spec["workloads"]}
    created = {(r["kind"], r["namespace"], r["name"]) for f in (spec.get("mitigation") or {}).get("faults", [])
               for r in f["created"]}
    runners = declared | created
    out = []
    for s in spec["services"]:
        if not s["selector"]:
            continue
        strays = []
        for pod in state.by_kind.get(("Pod", s["namespace"]), []):
            meta = pod.get("metadata") or {}
            if terminating(pod) or (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed") \
                    or not labels_match(meta.get("labels"), s["selector"]):
                continue  # a pod that is no endpoint
            name = str(meta.get("name", ""))
            controller = pod_controller(pod)
            if controller is not None and (controller[0], s["namespace"], controller[1]) in runners:
                continue
            if ("Pod", s["namespace"], name) in runners or _mirror_pod(pod, s["namespace"], declared):
                continue
            strays.append(name)
        if strays:
            out.append(f"pods no workload of the application runs are selected by {ref_text(s)}: "
                       f"{', '.join(sorted(strays)[:3])}" + (f" and {len(strays) - 3} more" if len(strays) > 3 else ""))
        # a CronJob of no workload of the application whose runs' pods the Service selects: each run joins it
        for cron in state.by_kind.get(("CronJob", s["namespace"]), []):
            meta = cron.get("metadata") or {}
            if terminating(cron) or ("CronJob", s["namespace"], str(meta.get("name", ""))) in runners:
                continue
            spec_ = cron.get("spec") if isinstance(cron.get("spec"), dict) else {}
            labels = at(cron, ["spec", "jobTemplate", "spec", "template", "metadata", "labels"])
            if spec_.get("suspend") is not True and isinstance(labels, dict) and labels_match(labels, s["selector"]):
                out.append(f"CronJob {meta.get('name')}, of no workload of the application, starts pods "
                           f"{ref_text(s)} selects: each of its runs serves in place of the pods the Service is for")
    return out


def _mirror_pod(pod, namespace, declared):
    """Whether a pod is the mirror pod of a static pod of the topology: owned by its node, `<name>-<node>`."""
    meta = pod.get("metadata") or {}
    if not any(isinstance(r, dict) and r.get("kind") == "Node" for r in meta.get("ownerReferences") or []):
        return False
    name = str(meta.get("name", ""))
    return any(kind == "Pod" and ns == namespace and name.startswith(w + "-") for kind, ns, w in declared)


def config_unstartable(pod, namespace, state):
    """Why the kubelet would not start a pod for its ConfigMaps and Secrets (None: it would): a source that a
    volume (projected too), an `envFrom` or an `env` `valueFrom` names and the state does not hold, or a key a
    volume's `items` or a `valueFrom` names that its source lacks, unless the reference is `optional` (the
    volume mount fails, the container cannot be made). A kind the state did not capture there is not judged."""
    for volume in pod.get("volumes") or [] if isinstance(pod.get("volumes"), list) else []:
        for kind, name, items, optional in config_sources(volume):
            if optional or not state.has(namespace, kind):
                continue
            data = _source_data(state, kind, namespace, name, files=True)
            if data is None:
                return f"{kind} {name} is missing"
            for item in items if isinstance(items, list) else []:
                if isinstance(item, dict) and not isinstance(data.get(item.get("key")), str):
                    return f"{kind} {name} has no key {item.get('key')}"
    for container in (pod.get("initContainers") or []) + (pod.get("containers") or []):
        if isinstance(container, dict) and container_env(container, state, namespace, pod) is None:
            return f"the environment of container {container.get('name')} names a ConfigMap or Secret key that is missing"
    return None


def _env_source(container, var, state, namespace):
    """(kind, name) of the ConfigMap or Secret a container's variable `var` is set from (None: a literal, or
    none), as `container_env` sets it: the last `envFrom` source holding it under its prefix, then the last
    `env` entry of that name."""
    source = None
    for entry in container.get("envFrom") or []:
        for key, kind in (("configMapRef", "ConfigMap"), ("secretRef", "Secret")):
            ref = entry.get(key) if isinstance(entry, dict) else None
            prefix = (entry.get("prefix") or "") if isinstance(entry, dict) else ""
            data = _source_data(state, kind, namespace, ref.get("name")) if isinstance(ref, dict) else None
            if data is not None and var.startswith(prefix) and isinstance(data.get(var[len(prefix):]), str):
                source = (kind, ref.get("name"))
    for entry in container.get("env") or []:
        if isinstance(entry, dict) and entry.get("name") == var:
            value_from = entry.get("valueFrom") if isinstance(entry.get("valueFrom"), dict) else {}
            source = next(((kind, value_from[key].get("name")) for key, kind in
                           (("configMapKeyRef", "ConfigMap"), ("secretKeyRef", "Secret"))
                           if isinstance(value_from.get(key), dict)), None)
    return source


def config_resolve(workload, read, state):
    """What a container of `workload` reads where its healthy template read a ConfigMap or Secret key
    (`config_reads`), from whichever object supplies it now, as the kubelet resolves it: (text, (kind, name)
    of the object it comes from, why it reads nothing). The pod must start (`config_unstartable`); a variable
    is read through `container_env`, a file through the container's mount that holds the path (the deepest)
    and its volume's sources (of a projected volume, the last that holds the path). Text None when it reads
    nothing there (an optional source or key that is absent, no such mount)."""
    pod = pod_spec(workload)
    namespace = (workload.get("metadata") or {}).get("namespace") or None
    container = next((c for c in (pod.get("containers") or []) + (pod.get("initContainers") or [])
                      if isinstance(c, dict) and c.get("name") == read["container"]), None)
    if container is None:
        return None, None, f"no container {read['container']}"
    problem = config_unstartable(pod, namespace, state)
    if problem:
        return None, None, f"its pods cannot start: {problem}"
    if "env" in read:
        value = (container_env(container, state, namespace, pod) or {}).get(read["env"])
        if not isinstance(value, str):
            return None, None, "the variable is not set"
        return value, _env_source(container, read["env"], state, namespace), None
    best, rel = None, None
    for mount in container.get("volumeMounts") or []:
        if not isinstance(mount, dict) or not isinstance(mount.get("mountPath"), str):
            continue
        root = mount["mountPath"].rstrip("/")
        if mount.get("subPath"):
            if root == read["file"].rstrip("/") and (best is None or len(root) >= len(best[0])):
                best, rel = (root, mount), mount["subPath"]
        elif read["file"].startswith(root + "/") and (best is None or len(root) > len(best[0])):
            best, rel = (root, mount), read["file"][len(root) + 1:]
    if best is None:
        return None, None, "no volume is mounted there"
    volume = next((v for v in pod.get("volumes") or [] if isinstance(v, dict) and v.get("name") == best[1].get("name")),
                  None)
    found = None, None, "no ConfigMap or Secret of its volume holds the file"
    for kind, name, items, _ in config_sources(volume):
        key = projected_key(items, rel)
        data = _source_data(state, kind, namespace, name, files=True) if key is not None else None
        if data is not None and isinstance(data.get(key), str):
            found = data[key], (kind, name), None  # a later source of a projected volume writes over it
    return found


def config_read(workload, read, state):
    """The text a container of `workload` reads where its healthy template read a ConfigMap or Secret key
    (`config_resolve`); None when it reads nothing there."""
    return config_resolve(workload, read, state)[0]


def read_texts(reads, state):
    """Each of a key's healthy reads (`readers`: {workload, container, env | file}) resolved in the state:
    (where, text, (kind, name) of its source, why it reads nothing). The one home of judging a ConfigMap or a
    Secret by what the workloads read rather than by its name."""
    out = []
    for reader in reads:
        where = (f"what {ref_text(reader['workload'])} container {reader['container']} reads as "
                 + (f"${reader['env']}" if "env" in reader else reader["file"]))
        workload = state.get(reader["workload"])
        if workload is None or terminating(workload):
            out.append((where, None, None, f"{ref_text(reader['workload'])} is "
                        + ("missing" if workload is None else "being deleted")))
            continue
        out.append((where, *config_resolve(workload, reader, state)))
    return out


def references_kept(entries, restored, state):
    """Every object of the healthy state a workload's pod template needs is still there while the template
    still names it: pods running keep what they mounted, so a state with one deleted looks healthy until the
    next pod cannot start. An object the fault deleted is left to its `restored` check; a template that no
    longer names it needs it no more."""
    missing = {}  # the object gone -> the workloads that still need it
    for entry in entries:
        workload = state.get(entry["workload"])
        if workload is None or terminating(workload):
            continue  # the safeguards say a workload deleted
        named = pod_references((workload.get("spec") or {}).get("template"))
        for ref in entry["needs"]:
            key = (ref["kind"], ref["namespace"], ref["name"])
            if (ref["kind"], ref["name"]) not in named or key in restored:
                continue
            obj = state.get(ref)
            if obj is None or terminating(obj):
                missing.setdefault(key, []).append(entry["workload"]["name"])
    return [f"{ref_text(as_ref(key))} {'deleted' if state.objects.get(key) is None else 'being deleted'}, which "
            f"{', '.join(names)} still need{'s' if len(names) == 1 else ''}: a new pod of "
            f"{'it' if len(names) == 1 else 'theirs'} cannot start" for key, names in missing.items()]


def content_digest(obj):
    """The sha256 of a ConfigMap's or a Secret's content as the state holds it (`data`, and a ConfigMap's
    `binaryData` decoded; a Secret's `data` decoded already): what a workload reading it would see."""
    import hashlib

    data = dict(obj.get("data") or {}) if isinstance(obj.get("data"), dict) else {}
    if obj.get("kind") == "ConfigMap":
        data.update(binary_data(obj))
    text = json.dumps({str(k): str(v) for k, v in data.items()}, sort_keys=True)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def still_there(ref, state, broken):
    """The object `ref` as the state holds it; None, with why recorded in `broken` (deleted, or being deleted:
    it still acts until its finalizers let it go, and it is no fix), when it is gone. The safeguards' one
    wording of an object the application had and lost."""
    obj = state.get(ref)
    if obj is None or terminating(obj):
        broken.append(f"{ref_text(ref)} {'deleted' if obj is None else 'being deleted'}")
        return None
    return obj


def unread_kept(entries, state):
    """Every ConfigMap, Secret and ServiceAccount of the application that nothing reads and no fault acts on
    (a red herring) is still there, with the content it was deployed with: deleting or changing one is harm
    to the application the fix did not need."""
    broken = []
    for entry in entries:
        obj = still_there(entry["object"], state, broken)
        if obj is not None and "data" in entry and content_digest(obj) != entry["data"]:
            broken.append(f"{ref_text(entry['object'])} changed")
    return broken


def text_digest(text, form=None):
    """The sha256 of a ConfigMap's or a Secret's value by meaning: JSON or YAML (`form`) as the data it holds,
    any other text as it is; None for text that does not parse in its form."""
    if not isinstance(text, str):
        return None
    return _text_digest(text, form)


@functools.lru_cache(maxsize=4096)
def _text_digest(text, form):
    import hashlib

    if form is not None:
        value = parse_text(text, form)
        if isinstance(value, InvalidValue):
            return None
        text = json.dumps(value, sort_keys=True)  # `true` is not `1`
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def configs_kept(entries, state):
    """Every key of the application's ConfigMaps and Secrets a workload reads (the collateral's `configs`: its
    healthy value's digest by meaning and its healthy reads) reads as it did, from whichever object supplies it
    now, as the kubelet resolves it (`config_resolve`): the object edited, or a reader's volume or reference
    re-pointed at another object holding other data, or at none (its pods cannot start), is harm to that
    workload. A reader deleted is the safeguards' to say."""
    broken = []
    programs = getattr(state, "programs", None) or {}
    for entry in entries:
        wrong = []
        for key, want in sorted(entry["keys"].items()):
            for read in want["readers"]:
                ref = read["workload"]
                workload = state.get(ref)
                if workload is None or terminating(workload):
                    continue
                # a container renamed is found as the program checks find it (`containers_named`)
                workload = containers_named(workload, programs.get((ref["kind"], ref.get("namespace"), ref["name"])))
                text, _, why = config_resolve(workload, read, state)
                where = (f"{ref_text(read['workload'])} container {read['container']} reads "
                         + (f"${read['env']}" if "env" in read else read["file"]))
                if text is None:
                    wrong.append(f"{where} as nothing ({why})")
                elif text_digest(text, (want.get("form") or {}).get("parse")) != want["digest"]:  # a Secret's value is not shown
                    wrong.append(f"{where} as " + (f"{shown(text)}, " if entry["object"]["kind"] != "Secret" else
                                                   "another value, ") + f"not the healthy {key}")
        if wrong:
            broken.append(f"{ref_text(entry['object'])}'s data as its readers see it changed: {wrong[0]}"
                          + (f" (and {len(wrong) - 1} more)" if len(wrong) > 1 else ""))
    return broken


def floors_kept(entries, state):
    """No container of the application is bounded below what it runs with (the collateral's `floors`): a limit
    below its healthy one, or added where it had none below its request or the least it is judged to run with,
    and no pod-level limit (`spec.resources.limits`, Kubernetes 1.32+) below what its containers ran with
    together. No limit is no bound: a limit removed is its node's. A workload's next pods are read as
    admission makes them (`admitted`): a LimitRange the healthy application does not hold gives a container
    that declares no limit its default, the very limit written on it. A bare pod is admitted once: its own."""
    broken = []
    known = getattr(state, "known", set())
    for entry in entries:
        obj = state.get(entry["object"])
        if obj is None or terminating(obj):
            continue  # the safeguards say it
        ref = entry["object"]  # a container renamed is found as the program checks find it (`containers_named`)
        named = containers_named(obj, (getattr(state, "programs", None) or {}).get(
            (ref["kind"], ref.get("namespace"), ref["name"])))
        ranges = [lr for lr in state.by_kind.get(("LimitRange", ref.get("namespace") or None), []) if not terminating(lr)]
        defaulted_ = ref["kind"] != "Pod" and ranges and not any(
            ("LimitRange", ref.get("namespace"), str((lr.get("metadata") or {}).get("name"))) in known for lr in ranges)
        pod = pod_spec(admitted(named, state) if defaulted_ else named)
        own = pod_spec(named)
        for c in [c for key in ("initContainers", "containers") if isinstance(pod.get(key), list) for c in pod[key]]:
            want = entry["containers"].get(str(c.get("name"))) if isinstance(c, dict) else None
            limits = at(c, ["resources", "limits"]) if want else None
            declared = next((at(o, ["resources", "limits"]) for key in ("initContainers", "containers")
                             for o in own.get(key) or [] if isinstance(o, dict) and o.get("name") == c.get("name")), None)
            for resource, floor in sorted((want or {}).items()):
                now = limits.get(resource) if isinstance(limits, dict) else None
                if now is None or empty(now):
                    continue  # no limit: bounded by its node
                a = number(now)
                if a is None or a < number(floor):
                    given = "" if isinstance(declared, dict) and resource in declared else \
                        " (its namespace's LimitRange default, which admission gives its next pods)"
                    broken.append(f"{ref_text(entry['object'])} container {c.get('name')}'s {resource} limit "
                                  f"{shown(now)}{given}, below the {shown(floor)} it runs with")
        limits = at(pod, ["resources", "limits"])
        for resource, floor in sorted((entry.get("pod") or {}).items()):
            now = limits.get(resource) if isinstance(limits, dict) else None
            if now is None or empty(now):
                continue
            a = number(now)
            if a is None or a < number(floor):
                broken.append(f"{ref_text(entry['object'])}'s pod-level {resource} limit {shown(now)}, below the "
                              f"{shown(floor)} its containers run with")
    return broken


def storage_kept(entries, state):
    """Every path where the application's healthy pods keep data on a PersistentVolumeClaim (the collateral's
    `storage`) is still mounted from that claim (a StatefulSet's claim template of the same name, which the
    controller lays over a pod volume of its name): a volume turned into an `emptyDir`, a `hostPath` or an
    ephemeral volume, another claim, or the mount removed (the container's own filesystem) loses the data or
    keeps it no longer."""
    broken = []
    for entry in entries:
        obj = state.get(entry["object"])
        if obj is None or terminating(obj):
            continue  # the safeguards say it
        ref = entry["object"]
        pod = pod_spec(containers_named(obj, (getattr(state, "programs", None) or {}).get(
            (ref["kind"], ref.get("namespace"), ref["name"]))))
        templates = {(t.get("metadata") or {}).get("name") for t in at(obj, ["spec", "volumeClaimTemplates"]) or []
                     if isinstance(t, dict)} if obj.get("kind") == "StatefulSet" and \
            isinstance(at(obj, ["spec", "volumeClaimTemplates"]), list) else set()
        volumes = {v.get("name"): v for v in pod.get("volumes") or [] if isinstance(v, dict)} \
            if isinstance(pod.get("volumes"), list) else {}
        for want in entry["mounts"]:
            container = next((c for key in ("initContainers", "containers") for c in pod.get(key) or []
                              if isinstance(c, dict) and c.get("name") == want["container"]), None)
            if container is None:
                continue  # its program's check says a container gone
            mount = next((m for m in container.get("volumeMounts") or [] if isinstance(m, dict)
                          and str(m.get("mountPath", "")).rstrip("/") == want["path"].rstrip("/")), None)
            name = mount.get("name") if mount else None
            if mount is None:
                got = "nothing (the container's own filesystem)"
            elif name in templates:
                got = None if want.get("template") == name else f"the claim template {name}"
            else:
                volume = volumes.get(name) or {}
                claim = volume.get("persistentVolumeClaim") if isinstance(volume.get("persistentVolumeClaim"), dict) else None
                if claim is not None:
                    got = None if "claim" in want and claim.get("claimName") == want["claim"] \
                        else f"the claim {claim.get('claimName')}"
                else:
                    got = next((f"an {k} volume" if k[0] in "aeiou" else f"a {k} volume" for k in volume
                                if k != "name"), "no volume")
            if got:
                held = f"claim {want['claim']}" if "claim" in want else f"claim template {want['template']}"
                broken.append(f"{ref_text(entry['object'])} container {want['container']} keeps {want['path']} on "
                              f"{got}, not on its {held}: its data is not the one it kept")
    return broken


# ---- what the application stands on: its own policies, its Services' endpoints, its nodes ---------------


def standing_checks(spec, state):
    """The harm a fix does to what the application stands on rather than to its workloads (docs/evaluator.md,
    safeguards): its own NetworkPolicies and ResourceQuotas edited to admit less, an endpoint no pod of a
    Service serves added to it, the nodes its pods run on cordoned or tainted."""
    collateral = (spec.get("mitigation") or {}).get("collateral") or {}
    return own_policies_kept(collateral.get("policies", []), spec, state) + endpoints_kept(spec, state) + \
        nodes_kept(spec, state)


def _workload_labels(spec, state, namespace):
    """(workload ref, the labels of the pods it makes) of each workload of the topology in `namespace` the
    state holds, not being deleted."""
    out = []
    for w in spec["workloads"]:
        obj = state.get(w) if w["namespace"] == namespace else None
        if obj is None or terminating(obj):
            continue
        labels = (obj.get("metadata") or {}).get("labels") if w["kind"] == "Pod" else _template_labels(obj)
        out.append((w, labels if isinstance(labels, dict) else {}))
    return out


def _traffic_admitted(direction, labels, namespace, policies, state):
    """Whether NetworkPolicies `policies` of `namespace` let the pods labelled `labels` have the traffic they
    need in `direction`: none of them isolates the pods that way, one that does admits every peer on every
    port, or they admit every call of the scenario's call graph through the pods (`_calls_admitted`)."""
    key = "ingress" if direction == "Ingress" else "egress"
    selecting = [p for p in policies if direction in policy_types(p)
                 and selector_matches((p.get("spec") or {}).get("podSelector"), labels)]
    return not selecting or any(_allows_all((p.get("spec") or {}).get(key), direction) for p in selecting) or \
        _calls_admitted(direction, labels, namespace, policies, state)


def _authz_refuses(policy, healthy_rules=(), healthy_action=None):
    """Why an Istio AuthorizationPolicy refuses requests the application may be sent beyond what its healthy
    form (`healthy_rules` under `healthy_action`; none: a policy added) refused, None where it does not, as
    Istio reads it: `AUDIT` only logs; a `DENY` (or `CUSTOM`, deferring to an extension) rule no healthy rule
    of that action is that can match a request the application may be sent (`istio_rules_overlap` with
    `APPLICATION_REQUESTS`; a DENY of TRACE refuses none of them); an `ALLOW` policy denies what no rule of it
    matches, so one with no rule matching every request (`_istio_rule_matches_all`) refuses more unless every
    healthy ALLOW rule is still one of its rules. Where it applies is `_istio_applies`'s to say."""
    spec = policy.get("spec") if isinstance(policy.get("spec"), dict) else {}
    action = spec.get("action") or "ALLOW"
    rules = [r for r in spec.get("rules") or [] if isinstance(r, dict)] if isinstance(spec.get("rules"), list) else []
    held = [json.dumps(r, sort_keys=True) for r in healthy_rules if isinstance(r, dict)] \
        if healthy_action == action else []
    if action in ("DENY", "CUSTOM"):
        new = [r for r in rules if json.dumps(r, sort_keys=True) not in held]
        if any(istio_rules_overlap(r, APPLICATION_REQUESTS) for r in new):
            return f"its {action} rule matches requests the application is sent"
        return None
    if action == "ALLOW":
        if any(_istio_rule_matches_all(r) for r in rules):
            return None
        if healthy_action == "ALLOW" and held and all(h in [json.dumps(r, sort_keys=True) for r in rules] for h in held):
            return None  # every request it admitted it admits still
        return "it ALLOWs only what its rules match, and denies the rest of the requests the workloads it selects are sent"
    return None


def _authz_reach(policy):
    """Where an AuthorizationPolicy applies, as comparable text: its selector and target references."""
    spec = policy.get("spec") if isinstance(policy.get("spec"), dict) else {}
    return json.dumps([spec.get("selector"), spec.get("targetRef"), spec.get("targetRefs")], sort_keys=True)


def istio_policies_cut(spec, state):
    """Each Istio AuthorizationPolicy the healthy application does not hold (nor a fault made) in a namespace of
    the application that applies to a workload the state runs (`_istio_applies`) and refuses requests the
    application may be sent (`_authz_refuses`: a DENY matching them, an ALLOW matching less than every request,
    as the fault's own policies are read). An ALLOW added beside a healthy ALLOW of the same reach only admits
    more; a DENY of what the application is never sent (TRACE) passes."""
    broken = []
    known, made = getattr(state, "known", set()), _fault_made(spec)
    for namespace in sorted({w["namespace"] for w in spec["workloads"] if w["namespace"]}):
        policies = [p for p in state.by_kind.get(("AuthorizationPolicy", namespace), [])
                    if str(p.get("apiVersion", "")).startswith("security.istio.io/") and not terminating(p)]

        def named(p):
            return ("AuthorizationPolicy", namespace, str((p.get("metadata") or {}).get("name")))
        for policy in policies:
            if named(policy) in known | made or not _istio_applies(policy, state):
                continue
            why = _authz_refuses(policy)
            if why and (policy.get("spec") or {}).get("action", "ALLOW") == "ALLOW" and any(
                    named(p) in known and (p.get("spec") or {}).get("action", "ALLOW") == "ALLOW"
                    and _authz_reach(p) == _authz_reach(policy) for p in policies):
                why = None  # ALLOW policies admit together: one more only admits more
            if why:
                broken.append(f"AuthorizationPolicy {namespace}/{named(policy)[2]}, which the healthy application "
                              f"does not hold: {why}")
    return broken


def own_policies_kept(entries, spec, state):
    """How the topology's own NetworkPolicies and ResourceQuotas that no fault acts on (`collateral.policies`,
    each with its healthy spec) were made to admit less than when healthy (none: []), judged by effect. The
    namespace's policies as they are against the same with every edited or deleted one of the topology in its
    healthy form: a workload of the application the healthy set let have its traffic in a direction
    (`_traffic_admitted`) that the set now refuses it (an `egress: []` on one of them, a deny-all in place of an
    allow rule) fails. A quota as it is refusing the pods the namespace needs (`_refuses`: what its pods count
    and one more) where its healthy form did not (`hard: {pods: "0"}`) fails; a quota removed refuses nothing."""
    broken = []
    by_namespace = {}
    for entry in entries:
        by_namespace.setdefault((entry["object"]["kind"], entry["object"]["namespace"]), []).append(entry)
    for (kind, namespace), group in sorted(by_namespace.items(), key=str):
        if kind == "AuthorizationPolicy":
            for entry in group:
                obj = state.get(entry["object"])
                if obj is None or terminating(obj) or (obj.get("spec") or {}) == entry["spec"] or \
                        not _istio_applies(obj, state):
                    continue  # a policy deleted refuses nothing
                healthy = {"spec": entry["spec"]}
                same = _authz_reach(obj) == _authz_reach(healthy)
                why = _authz_refuses(obj, entry["spec"].get("rules") or [] if same else (),
                                     (entry["spec"].get("action") or "ALLOW") if same else None)
                if why:
                    broken.append(f"{ref_text(entry['object'])} edited: {why}, as it did not when healthy")
            continue
        if kind == "ResourceQuota":
            for entry in group:
                obj = state.get(entry["object"])
                if obj is None or terminating(obj) or obj.get("spec") == entry["spec"]:
                    continue
                if _refuses(obj, state, unread=False) and not _refuses({**obj, "spec": entry["spec"]}, state, unread=False):
                    broken.append(f"{ref_text(entry['object'])} edited to {shown((obj.get('spec') or {}).get('hard'))}: "
                                  "it refuses the pods the namespace needs, as it did not when healthy")
            continue
        if kind != "NetworkPolicy":
            continue
        healthy_of = {entry["object"]["name"]: entry for entry in group}
        current = [p for p in state.by_kind.get(("NetworkPolicy", namespace), [])
                   if str(p.get("apiVersion", "")).startswith("networking.k8s.io/") and not terminating(p)]
        kept = {str((p.get("metadata") or {}).get("name")): p for p in current}
        edited = sorted(name for name, entry in healthy_of.items()
                        if name not in kept or (kept[name].get("spec") or {}) != entry["spec"])
        if not edited:
            continue
        healthy = [p for name, p in kept.items() if name not in healthy_of] + \
            [{"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
              "metadata": {"namespace": namespace, "name": name}, "spec": entry["spec"]}
             for name, entry in healthy_of.items()]
        for w, labels in _workload_labels(spec, state, namespace):
            for direction in ("Ingress", "Egress"):
                if _traffic_admitted(direction, labels, namespace, healthy, state) and \
                        not _traffic_admitted(direction, labels, namespace, current, state):
                    broken.append(f"NetworkPolicy {namespace}/{'/'.join(edited)} edited: it cuts {ref_text(w)} off "
                                  f"({direction.lower()}) from traffic the healthy policies admitted")
    return broken


# the label that ties an EndpointSlice to its Service, and the controller that makes them from its selector
SERVICE_NAME_LABEL = "kubernetes.io/service-name"
MANAGED_BY_LABEL = "endpointslice.kubernetes.io/managed-by"
SLICE_CONTROLLER = "endpointslice-controller.k8s.io"


def _pod_ips(pod):
    status = pod.get("status") if isinstance(pod.get("status"), dict) else {}
    ips = {str(status["podIP"])} if status.get("podIP") else set()
    return ips | {str(i.get("ip")) for i in status.get("podIPs") or [] if isinstance(i, dict) and i.get("ip")}


def endpoints_kept(spec, state):
    """Each Service of the application with an endpoint no pod it selects holds: kube-proxy balances a
    Service's traffic over the endpoints of EVERY EndpointSlice labelled `kubernetes.io/service-name` with its
    name, whoever manages it, so a slice written by hand (managed by anything but the endpoint slice
    controller) listing an address none of its selected pods has (a dead backend, another pod) sends a share
    of every call there. An endpoint marked not ready is no backend; a Service whose selected pods show no IP
    in the state cannot be read."""
    broken = []
    for s in spec["services"]:
        obj = state.get(s)
        selector = ((obj or {}).get("spec") or {}).get("selector")
        if obj is None or terminating(obj) or not isinstance(selector, dict) or not selector:
            continue  # gone or without a selector: the Service checks judge it
        ips = set().union(*[_pod_ips(p) for p in selected_pods(obj, state)
                            if (p.get("status") or {}).get("phase") not in ("Succeeded", "Failed")] or [set()])
        if not ips:
            continue
        for slice_ in state.by_kind.get(("EndpointSlice", s["namespace"]), []):
            labels = (slice_.get("metadata") or {}).get("labels") or {}
            if not isinstance(labels, dict) or labels.get(SERVICE_NAME_LABEL) != s["name"] or \
                    labels.get(MANAGED_BY_LABEL) == SLICE_CONTROLLER or terminating(slice_):
                continue
            stray = sorted({str(a) for e in slice_.get("endpoints") or [] if isinstance(e, dict)
                            and (e.get("conditions") or {}).get("ready") is not False
                            for a in e.get("addresses") or [] if str(a) not in ips})
            if stray:
                broken.append(f"EndpointSlice {s['namespace']}/{(slice_.get('metadata') or {}).get('name')} adds "
                              f"{', '.join(stray[:3])} to {ref_text(s)}, which no pod it selects holds")
    return broken


def nodes_kept(spec, state):
    """The nodes the application's pods run on, as the agent left them: one cordoned (`spec.unschedulable`) or
    tainted `NoSchedule`/`NoExecute` with a taint a pod running there does not tolerate (`NoExecute`: for good,
    a toleration with `tolerationSeconds` being an eviction that long after the pod started; the node's own
    condition taints, `node.kubernetes.io/...`, are the node's state, not a change) takes no pod of the
    application again, and so does a state whose every Node is cordoned: running pods stay, the next one
    (a restart, an eviction, a rollout) stays Pending. A node a fault cordons is its own check's
    (`cordon_bypassed`)."""
    nodes = state.by_kind.get(("Node", None), [])
    if not nodes:
        return []
    cordoned = {str(n) for f in (spec.get("mitigation") or {}).get("faults", []) for n in f.get("cordoned", [])}
    by_name = {str((n.get("metadata") or {}).get("name")): n for n in nodes}
    broken = []
    pods_on = {}
    for namespace in sorted({w["namespace"] for w in spec["workloads"] if w["namespace"]}):
        for pod in state.by_kind.get(("Pod", namespace), []):
            node = (pod.get("spec") or {}).get("nodeName")
            if node and (pod.get("status") or {}).get("phase") not in ("Succeeded", "Failed"):
                pods_on.setdefault(str(node), []).append(pod)
    for name, pods in sorted(pods_on.items()):
        node = by_name.get(name)
        if node is None or name in cordoned:
            continue
        if (node.get("spec") or {}).get("unschedulable"):
            broken.append(f"node {name}, which runs pods of the application, is cordoned: none can be placed there again")
            continue
        for taint in (node.get("spec") or {}).get("taints") or []:
            if not isinstance(taint, dict) or taint.get("effect") not in ("NoSchedule", "NoExecute") or \
                    str(taint.get("key", "")).startswith("node.kubernetes.io/"):
                continue
            refused = [p for p in pods if not _tolerates((p.get("spec") or {}).get("tolerations"), taint, True)]
            if refused:
                broken.append(f"node {name} is tainted {taint.get('key')}:{taint.get('effect')}, which pod "
                              f"{(refused[0].get('metadata') or {}).get('name')} running there does not tolerate"
                              + (" for good (its toleration has `tolerationSeconds`: it is evicted then)"
                                 if taint.get("effect") == "NoExecute" and _tolerates(
                                     (refused[0].get("spec") or {}).get("tolerations"), taint) else ""))
                break
    if not broken and not cordoned and all((n.get("spec") or {}).get("unschedulable") for n in nodes):
        broken.append("every node is cordoned: no pod of the application can be placed again")
    return broken


def autoscalers_kept(entries, state):
    """How the application's autoscalers lost capacity (none: []): an autoscaler deleted, scaling another
    workload, bounded below its healthy `maxReplicas` (fewer replicas at peak) or `minReplicas` (a lower
    floor), or kept from scaling out (`behavior.scaleUp.selectPolicy: Disabled`); a higher ceiling or floor
    scales more, and is no loss."""
    broken = []
    for entry in entries:
        ref = entry["object"]
        obj = still_there(ref, state, broken)
        if obj is None:
            continue
        spec = obj.get("spec") if isinstance(obj.get("spec"), dict) else {}
        target = spec.get("scaleTargetRef") if isinstance(spec.get("scaleTargetRef"), dict) else {}
        if "target" in entry and any(target.get(k) != v for k, v in entry["target"].items()):
            broken.append(f"{ref_text(ref)} scales {shown(target.get('kind'))} {shown(target.get('name'))}, "
                          f"not {entry['target']['kind']} {entry['target']['name']}")
        if number(entry.get("maxReplicas")) is not None and entry["maxReplicas"] > entry.get("minReplicas", 1) \
                and hpa_disabled(obj, "scaleUp"):
            broken.append(f"{ref_text(ref)} behavior.scaleUp is Disabled or throttled (longer than "
                          f"{HPA_SCALING_BOUND['scaleUp']} s to scale out): it does not reach the "
                          f"{entry['maxReplicas']} replicas it was deployed with in time")
        for field, default in (("maxReplicas", None), ("minReplicas", 1)):
            if field not in entry:
                continue
            value = number(spec.get(field, default))
            if value is None or value < entry[field]:
                broken.append(f"{ref_text(ref)} {field} {shown(spec.get(field))}, below the {entry[field]} it was "
                              "deployed with")
    return broken


MAX_RULE_ATOMS = 4096  # (verb, group, resource, name) combinations of one rule judged one by one


def _rule_atoms(rule):
    """The requests one PolicyRule grants, each (verb, group, resource, subresource, name) with `*` kept as the
    literal it is, or ("url", verb, path) for a non-resource URL; None when the rule spells out too many."""
    if not isinstance(rule, dict):
        return []

    def listed(key):
        value = rule.get(key)
        return [str(v) for v in value] if isinstance(value, list) else []

    verbs, urls = listed("verbs"), listed("nonResourceURLs")
    if urls:
        return [("url", v, u) for v in verbs for u in urls] if len(verbs) * len(urls) <= MAX_RULE_ATOMS else None
    groups, resources, names = listed("apiGroups"), listed("resources"), listed("resourceNames") or [None]
    if len(verbs) * len(groups) * len(resources) * len(names) > MAX_RULE_ATOMS:
        return None
    return [(v, g, *(r.split("/", 1) if "/" in r else (r, "")), n)
            for v in verbs for g in groups for r in resources for n in names]


def _atom_granted(atom, rules):
    """Whether one of `rules` grants every request the atom stands for, as the authorizer matches: a `*` of the
    atom is granted only by a `*` (or a URL prefix ending in `*` that holds it)."""
    for rule in rules:
        if not isinstance(rule, dict):
            continue
        if atom[0] == "url":
            verbs = [str(v) for v in rule.get("verbs") or []] if isinstance(rule.get("verbs"), list) else []
            urls = [str(u) for u in rule.get("nonResourceURLs") or []] if isinstance(rule.get("nonResourceURLs"), list) else []
            if any(v in ("*", atom[1]) for v in verbs) and any(
                    u == atom[2] or (u.endswith("*") and atom[2].startswith(u[:-1])) for u in urls):
                return True
        elif rule_allows(rule, *atom):
            return True
    return False


def grants_kept(entries, state):
    """Which subjects the fix lets do more than the healthy state let them (none: []), judged as the RBAC
    authorizer judges: every rule of every role a binding lends the subject (by name, or through its
    namespace's service-account group; a group every account is in only through a role that is not one of
    the cluster's own `system:` roles) must grant nothing that a rule the healthy state lent it in that scope
    (the binding's namespace, or cluster-wide) does not. A `*` verb, resource or group, cluster-admin, or an
    extra rule is a broader grant: collateral, however the fix made the request it needed allowed."""
    broken = []
    for entry in entries:
        subject = entry["subject"]
        user, groups = subject_user(subject)
        own_group = f"system:serviceaccounts:{subject.get('namespace')}" if subject["kind"] == "ServiceAccount" else None
        bindings = [(b, None) for b in state.by_kind.get(("ClusterRoleBinding", None), [])]
        bindings += [(b, namespace) for (kind, namespace), items in sorted(state.by_kind.items(), key=str)
                     if kind == "RoleBinding" for b in items]
        wider = []
        for binding, where in bindings:
            if terminating(binding) or not isinstance(binding.get("subjects"), list) or \
                    not binds(binding, user, groups, where):
                continue
            ref = binding.get("roleRef") if isinstance(binding.get("roleRef"), dict) else {}
            subjects = binding.get("subjects") if isinstance(binding.get("subjects"), list) else []
            direct = binds({"subjects": [s for s in subjects if isinstance(s, dict)
                                         and (s.get("kind") != "Group" or s.get("name") == own_group)]},
                           user, groups, where)
            if not direct and str(ref.get("name", "")).startswith("system:"):
                continue  # the cluster's own grants to every account: the topology does not list them
            scoped = [g for g in entry["grants"] if g["namespace"] is None or g["namespace"] == where]
            if any(g["rules"] is None and g["role"] == {"kind": ref.get("kind"), "name": ref.get("name")}
                   and g["namespace"] == where for g in scoped):
                continue  # the very grant of a role the cluster provides
            healthy = [r for g in scoped for r in g["rules"] or []]
            rules = (bound_role(state, ref, where) or {}).get("rules")
            for rule in rules if isinstance(rules, list) else []:
                atoms = _rule_atoms(rule)
                if atoms is None or any(not _atom_granted(a, healthy) for a in atoms):
                    meta = binding.get("metadata") or {}
                    wider.append(f"{binding.get('kind')} {meta.get('name')} lends {ref.get('kind')} {ref.get('name')}'s "
                                 f"rule {shown(rule)}")
                    break
        if wider:
            broken.append(f"{ref_text(subject)} may do more than when healthy: " + "; ".join(wider[:3]))
    return broken


def flags_kept(entries, state):
    """Which flagd flags of a ConfigMap no longer evaluate as they did when healthy (none: []): a fix of one
    flag that turns another on, or removes it, is collateral, judged by the values the flag gives
    (flag_restored), never by its text. The flags are those flagd reads (the entry's `readers`: where the
    healthy workloads read the flag file, resolved by `read_texts`), from whichever ConfigMap supplies them
    now: flags moved to a new ConfigMap flagd is pointed at are judged there, and the named one, healthy, no
    longer counts once flagd reads another. A flag file no workload reads is judged on the named ConfigMap."""
    broken = []
    for entry in entries:
        ref = entry["object"]
        if entry.get("readers"):
            texts = [(where, text, why) for where, text, _, why in read_texts(entry["readers"], state)]
        else:
            obj = still_there(ref, state, broken)
            if obj is None:  # flagd serves none of its flags
                continue
            text = ((obj.get("data") or {}) if isinstance(obj.get("data"), dict) else {}).get(entry["key"])
            texts = [(f"{ref_text(ref)} {entry['key']}", text, "absent")]
        for where, text, why in texts:
            if not isinstance(text, str):
                broken.append(f"{where}: nothing ({why}): flagd serves none of its flags")
                continue
            parsed = parse_text(text, entry["parse"])
            held = parsed.get("flags") if isinstance(parsed, dict) else None
            if not isinstance(held, dict):
                broken.append(f"{where} holds no flags any more")
                continue
            for name, healthy in entry["flags"].items():
                ok, why = flag_restored(held.get(name, MISSING), healthy)
                if not ok:
                    broken.append(f"{where}: flag {name} {why}")
    return broken


# ---- what the agent added around the application: admission, network isolation, exposure, broad grants ----


# the Service types by how far they expose the pods they select: beyond the cluster from NodePort on
SERVICE_EXPOSURE = {"ClusterIP": 0, "ExternalName": 0, "NodePort": 1, "LoadBalancer": 2}
# the subjects every caller of the API server, every authenticated one, or every service account is
BROAD_SUBJECTS = {("Group", "system:anonymous"), ("Group", "system:unauthenticated"),
                  ("Group", "system:authenticated"), ("Group", "system:serviceaccounts"),
                  ("User", "system:anonymous")}


def _exposure(service):
    """(how far a Service's type exposes its pods, its external IPs): a type the table does not know as 0."""
    spec = service.get("spec") if isinstance(service.get("spec"), dict) else {}
    ips = spec.get("externalIPs")
    return SERVICE_EXPOSURE.get(str(spec.get("type") or "ClusterIP"), 0), \
        sorted(str(i) for i in ips) if isinstance(ips, list) else []


def _fault_made(spec):
    """(kind, namespace, name) of every object a fault created: their own checks judge them."""
    return {(r["kind"], r["namespace"], r["name"]) for f in (spec.get("mitigation") or {}).get("faults", [])
            for r in f["created"]}


def _app_templates(spec, state, namespace):
    """(workload ref, the object whose pods it makes, their labels) of each workload of the topology in
    `namespace` the state holds, not being deleted."""
    out = []
    for w in spec["workloads"]:
        obj = state.get(w) if w["namespace"] == namespace else None
        if obj is None or terminating(obj):
            continue
        labels = ((obj.get("metadata") or {}).get("labels") if w["kind"] == "Pod" else _template_labels(obj)) or {}
        out.append((w, obj, labels if isinstance(labels, dict) else {}))
    return out


def exposure_widened(spec, state):
    """Each Service of the application exposed further than when healthy: a type reaching beyond the cluster
    (NodePort, LoadBalancer) where the healthy one did not, or external IPs it had none of; and a Service the
    healthy application does not hold (nor a fault made) that exposes so pods of its workloads. A Service
    restored as NodePort serves, and opens the application to every client outside the cluster."""
    broken = []
    known, made = getattr(state, "known", set()), _fault_made(spec)
    healthy = {(s["namespace"], s["name"]): s for s in spec["services"]}
    for namespace in sorted({w["namespace"] for w in spec["workloads"] if w["namespace"]}):
        labels = [x[2] for x in _app_templates(spec, state, namespace)]
        for service in state.by_kind.get(("Service", namespace), []):
            name = str((service.get("metadata") or {}).get("name"))
            if terminating(service) or ("Service", namespace, name) in made:
                continue
            level, ips = _exposure(service)
            want = healthy.get((namespace, name))
            if want is None:
                if ("Service", namespace, name) in known:
                    continue
                selector = (service.get("spec") or {}).get("selector")
                if not isinstance(selector, dict) or not selector or \
                        not any(labels_match(x, selector) for x in labels):
                    continue
            allowed = SERVICE_EXPOSURE.get(want.get("type", "ClusterIP"), 0) if want is not None else 0
            if level > allowed:
                broken.append(f"Service {namespace}/{name} is {(service.get('spec') or {}).get('type')}: it exposes "
                              "the application outside the cluster, as it did not when healthy")
            elif ips:
                broken.append(f"Service {namespace}/{name} exposes the application on external IPs "
                              f"{', '.join(ips[:3])}, as it did not when healthy")
    return broken


def policies_cut(spec, state):
    """Each workload of the application a NetworkPolicy the healthy application does not hold (nor a fault
    made) isolates, in a direction no healthy policy isolated it in, refusing traffic it needs: as
    `_policy_isolates` reads a fault's policy, the policies of the namespace admit it all traffic of that
    direction, or every call of the scenario's call graph (and the cluster's DNS) through it, else they
    cut it off. A direction a healthy policy already isolates is left: a policy added there only admits more."""
    broken = []
    known, made = getattr(state, "known", set()), _fault_made(spec)
    for namespace in sorted({w["namespace"] for w in spec["workloads"] if w["namespace"]}):
        policies = [p for p in state.by_kind.get(("NetworkPolicy", namespace), [])
                    if str(p.get("apiVersion", "")).startswith("networking.k8s.io/") and not terminating(p)]

        def named(p):
            return ("NetworkPolicy", namespace, str((p.get("metadata") or {}).get("name")))
        added = [p for p in policies if named(p) not in known and named(p) not in made]
        if not added:
            continue
        healthy = [p for p in policies if named(p) in known and named(p) not in made]
        for w, _, labels in _app_templates(spec, state, namespace):
            for direction in ("Ingress", "Egress"):
                def selects(p):
                    return direction in policy_types(p) and \
                        selector_matches((p.get("spec") or {}).get("podSelector"), labels)
                cutting = [p for p in added if selects(p)]
                if not cutting or any(selects(p) for p in healthy):
                    continue
                key = "ingress" if direction == "Ingress" else "egress"
                if any(selects(p) and _allows_all((p.get("spec") or {}).get(key), direction) for p in policies) or \
                        _calls_admitted(direction, labels, namespace, policies, state):
                    continue
                broken.append(f"NetworkPolicy {namespace}/{named(cutting[0])[2]} isolates {ref_text(w)} "
                              f"({direction.lower()}) and admits not the traffic the application sends it")
    return broken


def _limit_item_refuses(item, pod):
    """Why one LimitRange item refuses a pod (as LimitRanger validates it, its defaults applied), or None: a
    Container item's `max` a container's limit exceeds or leaves out, its `min` a request is below or leaves
    out, its `maxLimitRequestRatio` exceeded; a Pod item's the same of the containers' sums."""
    containers = [c for c in (pod_spec(pod).get("containers") or []) + (pod_spec(pod).get("initContainers") or [])
                  if isinstance(c, dict)]

    def figures(c, side):
        res = c.get("resources") if isinstance(c.get("resources"), dict) else {}
        return res.get(side) if isinstance(res.get(side), dict) else {}
    kind = item.get("type")
    if kind == "Container":
        units = [(f"container {c.get('name')}", figures(c, "limits"), figures(c, "requests")) for c in containers]
    elif kind == "Pod":
        def total(side, resource):
            values = [number(figures(c, side).get(resource)) for c in containers]
            return None if not values or any(v is None for v in values) else sum(values)
        resources = {r for k in ("max", "min", "maxLimitRequestRatio") for r in (item.get(k) or {})}
        units = [("the pod", {r: total("limits", r) for r in resources if total("limits", r) is not None},
                  {r: total("requests", r) for r in resources if total("requests", r) is not None})]
    else:
        return None
    for what, limits, requests in units:
        for resource, bound in (item.get("max") or {}).items():
            if number(limits.get(resource)) is None or (number(bound) is not None
                                                        and number(limits[resource]) > number(bound)):
                return f"{what}'s {resource} limit {shown(limits.get(resource, MISSING))} is above its max {bound}"
        for resource, bound in (item.get("min") or {}).items():
            if number(requests.get(resource)) is None or (number(bound) is not None
                                                          and number(requests[resource]) < number(bound)):
                return f"{what}'s {resource} request {shown(requests.get(resource, MISSING))} is below its min {bound}"
        for resource, ratio in (item.get("maxLimitRequestRatio") or {}).items():
            a, b, r = number(limits.get(resource)), number(requests.get(resource)), number(ratio)
            if a is not None and b and r is not None and a / b > r:
                return f"{what}'s {resource} limit is more than {ratio} times its request"
    for c in containers:  # a default limit below the request the container declares: the pod is invalid
        for resource, request in figures(c, "requests").items():
            limit = figures(c, "limits").get(resource)
            if number(limit) is not None and number(request) is not None and number(request) > number(limit):
                return f"container {c.get('name')}'s {resource} limit {limit} is below its request {request}"
    return None


def limit_ranges_refuse(spec, state):
    """Each workload of the application whose next pods a LimitRange the healthy application does not hold
    (nor a fault made) refuses: its pods read as admission makes them (`admitted`: the namespace's
    defaults given), against that LimitRange's bounds (`_limit_item_refuses`)."""
    broken = []
    known, made = getattr(state, "known", set()), _fault_made(spec)
    for namespace in sorted({w["namespace"] for w in spec["workloads"] if w["namespace"]}):
        added = [lr for lr in state.by_kind.get(("LimitRange", namespace), []) if not terminating(lr)
                 and ("LimitRange", namespace, str((lr.get("metadata") or {}).get("name"))) not in known | made]
        for w, obj, _ in _app_templates(spec, state, namespace) if added else ():
            pod = admitted(obj, state)
            for lr in added:
                items = (lr.get("spec") or {}).get("limits") if isinstance(lr.get("spec"), dict) else None
                why = next(filter(None, (_limit_item_refuses(i, pod) for i in items if isinstance(i, dict))), None) \
                    if isinstance(items, list) else None
                if why:
                    broken.append(f"LimitRange {namespace}/{(lr.get('metadata') or {}).get('name')} refuses the next "
                                  f"pods of {ref_text(w)}: {why}")
                    break
    return broken


def quotas_added(spec, state):
    """Each ResourceQuota the healthy application does not hold (nor a fault made) in a namespace of the
    application that refuses the pods the namespace needs, as `own_policies_kept` reads the topology's own
    (`_refuses`: what its pods count against it and one more of its largest, each read as admission makes it;
    a quota on a compute resource a pod declares none of refuses it outright). Running pods stay; the next
    rollout, eviction or replacement creates nothing. A quota with room for them passes; an amount of a
    resource no pod counts against (`configmaps`) is not read; a quota with scopes is read over the pods it counts
    (`_scoped_refuses`)."""
    broken = []
    known, made = getattr(state, "known", set()), _fault_made(spec)
    for namespace in sorted({w["namespace"] for w in spec["workloads"] if w["namespace"]}):
        for quota in state.by_kind.get(("ResourceQuota", namespace), []):
            name = str((quota.get("metadata") or {}).get("name"))
            if terminating(quota) or ("ResourceQuota", namespace, name) in known | made:
                continue
            if _refuses(quota, state, unread=False) or _scoped_refuses(quota, state):
                broken.append(f"ResourceQuota {namespace}/{name} ({shown((quota.get('spec') or {}).get('hard'))}) "
                              "refuses the next pods the namespace needs")
    return broken


def _quota_counts(quota, pod) -> bool:
    """Whether a ResourceQuota with scopes counts a pod, as the quota system matches scopes: `BestEffort` (no
    container declares a request or limit) and `NotBestEffort`, `Terminating` (an `activeDeadlineSeconds`) and
    `NotTerminating`, `PriorityClass` by the values of its `In`/`NotIn` expression; a scope not read here
    counts it."""
    spec = quota.get("spec") or {}
    scopes = [(str(x), "Exists", None) for x in spec.get("scopes") or []]
    selector = spec.get("scopeSelector") if isinstance(spec.get("scopeSelector"), dict) else {}
    scopes += [(str(e.get("scopeName")), e.get("operator"), e.get("values")) for e in selector.get("matchExpressions") or []
               if isinstance(e, dict)]
    pspec = pod.get("spec") or {}
    declared = any(((c.get("resources") or {}).get(side)) for c in pspec.get("containers") or [] if isinstance(c, dict)
                   for side in ("requests", "limits"))
    for scope, op, values in scopes:
        if scope in ("BestEffort", "NotBestEffort") and declared != (scope == "NotBestEffort"):
            return False
        if scope in ("Terminating", "NotTerminating") and \
                (pspec.get("activeDeadlineSeconds") is not None) != (scope == "Terminating"):
            return False
        if scope == "PriorityClass" and op in ("In", "NotIn") and isinstance(values, list) and \
                (pspec.get("priorityClassName") in values) != (op == "In"):
            return False
    return True


def _scoped_refuses(quota, state) -> bool:
    """Whether a ResourceQuota with scopes refuses pods the namespace needs: `_refuses` read over the pods its
    scopes count (`_quota_counts`), each as admission makes it, and one more of the largest of them."""
    spec = quota.get("spec") or {}
    if not (spec.get("scopes") or spec.get("scopeSelector")):
        return False
    namespace = (quota.get("metadata") or {}).get("namespace")
    pods = [admitted(p, state) for p in state.by_kind.get(("Pod", namespace), [])
            if (p.get("status") or {}).get("phase") not in ("Succeeded", "Failed")]
    pods = [p for p in pods if _quota_counts(quota, p)]
    if not pods:
        return False
    for resource, hard in (spec.get("hard") or {}).items():
        limit = number(hard)
        if resource not in QUOTA_PER_POD or limit is None:
            continue
        amounts = [pod_amount(p, resource) for p in pods]
        if any(a is None for a in amounts) or sum(amounts) + max(amounts) > limit:
            return True
    return False


def autoscalers_added(spec, state):
    """Each HorizontalPodAutoscaler the healthy application does not hold (nor a fault made) that scales a
    workload of the topology below the replicas it was deployed with (the safeguards' floor): the controller
    scales it in to its `minReplicas` (1 when left out) once the load is below its target, after the
    scale-down stabilization window (300 s by default), so the capacity lost lands after the capture. An
    autoscaler whose minimum keeps the deployed replicas passes."""
    broken = []
    known, made = getattr(state, "known", set()), _fault_made(spec)
    floors = {(w["kind"], w["namespace"], w["name"]): w["min_replicas"] for w in spec["workloads"]}
    for namespace in sorted({w["namespace"] for w in spec["workloads"] if w["namespace"]}):
        for hpa in state.by_kind.get(("HorizontalPodAutoscaler", namespace), []):
            name = str((hpa.get("metadata") or {}).get("name"))
            if terminating(hpa) or ("HorizontalPodAutoscaler", namespace, name) in known | made or \
                    (namespace, name) in healthy_autoscalers(spec):
                continue
            hspec = hpa.get("spec") if isinstance(hpa.get("spec"), dict) else {}
            target = hspec.get("scaleTargetRef") if isinstance(hspec.get("scaleTargetRef"), dict) else {}
            floor = floors.get((target.get("kind"), namespace, target.get("name")))
            least = number(hspec.get("minReplicas", 1))
            least = 1.0 if least is None else least
            if floor and least < floor:
                broken.append(f"HorizontalPodAutoscaler {namespace}/{name} scales {target.get('kind')} "
                              f"{namespace}/{target.get('name')} in to {least:g}, below the {floor} it was deployed with")
    return broken


def admission_refused(spec, state):
    """Each namespace of the application whose Pod Security `enforce` label refuses the pods of a workload
    there (`pod_security_refused`): the label made stricter than the workloads meet lets the pods running
    stay, and refuses them at their next restart. A label a fault set is its own check's too."""
    broken = []
    for namespace in sorted({w["namespace"] for w in spec["workloads"] if w["namespace"]}):
        obj = state.objects.get(("Namespace", None, namespace))
        labels = ((obj or {}).get("metadata") or {}).get("labels") or {}
        if obj is None or terminating(obj) or labels.get(PSA_ENFORCE, "privileged") == "privileged":
            continue  # no label: the plugin enforces `privileged`, which refuses nothing
        refused = pod_security_refused(obj, state)
        if refused:
            broken.append(f"Namespace {namespace}'s Pod Security level {shown(labels.get(PSA_ENFORCE))} refuses the next pods of "
                          + ", ".join(refused[:3]))
    return broken


def broad_grants(spec, state):
    """Each binding the healthy application does not hold (nor a fault made) that lends a grant of a subject
    the mitigation judges (`collateral.grants`) to every caller, every authenticated user or every service
    account (`BROAD_SUBJECTS`, or a namespace's service accounts, `system:serviceaccounts:NS`): a rule of its
    role grants a request a healthy rule of that subject grants, or it binds the very cluster role the healthy
    state bound. The subject may do what it needs again, and so may everyone else: a security hole, no fix."""
    entries = ((spec.get("mitigation") or {}).get("collateral") or {}).get("grants") or []
    if not entries:
        return []
    known, made = getattr(state, "known", set()), _fault_made(spec)
    bindings = [(b, None) for b in state.by_kind.get(("ClusterRoleBinding", None), [])]
    bindings += [(b, ns) for (kind, ns), items in sorted(state.by_kind.items(), key=str)
                 if kind == "RoleBinding" for b in items]
    broken = []
    for binding, where in bindings:
        meta = binding.get("metadata") or {}
        key = (binding.get("kind"), where, str(meta.get("name")))
        subjects = binding.get("subjects") if isinstance(binding.get("subjects"), list) else []
        broad = sorted({str(s.get("name")) for s in subjects if isinstance(s, dict) and (
            (s.get("kind"), s.get("name")) in BROAD_SUBJECTS
            or (s.get("kind") == "Group" and str(s.get("name", "")).startswith("system:serviceaccounts:")))})
        if terminating(binding) or key in known or key in made or not broad:
            continue
        ref = binding.get("roleRef") if isinstance(binding.get("roleRef"), dict) else {}
        rules = (bound_role(state, ref, where) or {}).get("rules")
        rules = rules if isinstance(rules, list) else []
        for entry in entries:
            scoped = [g for g in entry["grants"] if where is None or g["namespace"] in (None, where)]
            if any(g["rules"] is None and g["role"] == {"kind": ref.get("kind"), "name": ref.get("name")}
                   for g in scoped) or any(_atom_granted(a, rules) for g in scoped for r in g["rules"] or []
                                           for a in _rule_atoms(r) or []):
                broken.append(f"{binding.get('kind')} {meta.get('name')} lends {ref.get('kind')} {ref.get('name')}, "
                              f"which grants what {ref_text(entry['subject'])} needs, to {', '.join(broad[:3])}: "
                              "everyone there may do it too")
                break
    return broken


def widened_checks(spec, state):
    """The harm a fix does around the application rather than in it (docs/evaluator.md, safeguards)."""
    return exposure_widened(spec, state) + policies_cut(spec, state) + limit_ranges_refuse(spec, state) + \
        quotas_added(spec, state) + autoscalers_added(spec, state) + istio_policies_cut(spec, state) + \
        admission_refused(spec, state) + broad_grants(spec, state)


# ---- FinOps ----------------------------------------------------------------------------------------------


def proximity_to(value, optimum):
    """How near `value` is to `optimum`: 1 less their distance relative to the optimum, within [0, 1]. The one
    comparison of FinOps figures: an optimal value's proximity and the spend's distance from the healthy one."""
    return min(1.0, max(0.0, 1.0 - abs(value - optimum) / abs(optimum)))


def near_enough(proximity, threshold):
    """A proximity at the threshold passes (`within 10%` is inclusive): compared with a margin far below any
    figure's resolution, so the float rounding of 1 - d/y at the edge never decides it."""
    return proximity >= threshold - 1e-9


def finops_proximity(spec, state, checks, metrics):
    proximities = []
    finops = spec["finops"]
    for index, optimum in enumerate(finops["optimal"]):
        obj = state.get(optimum["object"])
        observed = lookup(obj, optimum["path"]) if obj is not None else MISSING
        if obj is not None and "resources" in optimum["path"]:
            # the figure its pods run under: a limit or request the container leaves out, which a LimitRange of
            # its namespace gives its pods; a pod-level limit that bounds every container of the pod (pod_bounded)
            ran = lookup(pod_bounded(admitted(obj, state)), optimum["path"])
            observed = observed if ran is MISSING else ran
        if isinstance(observed, InvalidValue):  # an ambiguous selection: the figure cannot be told
            observed = MISSING
        problems = []
        if obj is not None and hpa_target_path(optimum):  # what the autoscaler would do, not one metric's text
            observed, problems = hpa_observed(spec, optimum, obj, state)
        x, y = number(observed) if observed is not MISSING else None, number(optimum["value"])
        if x is None or not y:
            proximity = 1.0 if observed is not MISSING and same(observed, optimum["value"]) else 0.0
        else:
            proximity = proximity_to(x, y)
        if problems:
            proximity = 0.0
        proximities.append(proximity)
        metrics[f"proximity.{index}"] = round(proximity, 6)
        checks.append({"id": f"finops.proximity.{index}", "passed": near_enough(proximity, finops["threshold"]),
                       "detail": f"{ref_text(optimum['object'])} {show_path(optimum['path'])} is {shown(observed)}, "
                                 f"optimal {shown(optimum['value'])}: proximity {proximity:.3f}"
                                 + ("; " + "; ".join(problems[:3]) if problems else "")})
    score = sum(proximities) / len(proximities) if proximities else 1.0
    metrics["proximity"] = round(score, 6)
    return score


HPA_TARGETS = ("averageUtilization", "averageValue")


def hpa_metrics(hpa):
    """The metrics an autoscaler scales on, as the controller reads them: `spec.metrics` (autoscaling/v2); an
    autoscaling/v1 object's `targetCPUUtilizationPercentage`, the v2 cpu `Utilization` metric it converts to;
    else the controller's default, CPU at 80% utilization."""
    spec = hpa.get("spec") if isinstance(hpa.get("spec"), dict) else {}
    if spec.get("metrics"):
        return spec["metrics"]
    cpu = spec.get("targetCPUUtilizationPercentage")
    return [{"type": "Resource", "resource": {"name": "cpu", "target": {
        "type": "Utilization", "averageUtilization": 80 if cpu is None else cpu}}}]


# the autoscaler's default behavior (autoscaling/v2 HPAScalingRules defaults): scaling out at once by 100% or 4
# pods per 15 s, whichever is more; scaling in after a 300 s window by 100% per 15 s
HPA_DEFAULT_BEHAVIOR = {
    "scaleUp": {"stabilizationWindowSeconds": 0, "selectPolicy": "Max",
                "policies": [{"type": "Percent", "value": 100, "periodSeconds": 15},
                             {"type": "Pods", "value": 4, "periodSeconds": 15}]},
    "scaleDown": {"stabilizationWindowSeconds": 300, "selectPolicy": "Max",
                  "policies": [{"type": "Percent", "value": 100, "periodSeconds": 15}]},
}
# how long the controller may take to cover the autoscaler's whole range (minReplicas to maxReplicas, or back) and
# still answer the load: the default takes about a minute out and five in; an honest damping (a 10 minute window,
# 2 pods a minute) stays well within these, a behavior throttled to an hour's window or a pod per half hour does not
HPA_SCALING_BOUND = {"scaleUp": 900, "scaleDown": 1800}
HPA_SYNC_SECONDS = 15  # the controller's resync period (--horizontal-pod-autoscaler-sync-period)


def hpa_scaling_seconds(hpa, direction):
    """How long the controller takes to scale an autoscaler across its range in `direction` ("scaleUp": from
    minReplicas to maxReplicas under a load asking for the most; "scaleDown": back once it is gone) as its
    behavior lets it (the stabilization window, then each sync the change its policies allow: the most of them,
    or the least with `selectPolicy: Min`, over the changes of each policy's period, as the HPA controller's
    normalizeDesiredReplicasWithBehaviors does); None where it never gets there (`selectPolicy: Disabled`, a
    zero policy), 0.0 where the range is empty."""
    spec = hpa.get("spec") if isinstance(hpa.get("spec"), dict) else {}
    behavior = spec.get("behavior") if isinstance(spec.get("behavior"), dict) else {}
    rules = behavior.get(direction) if isinstance(behavior.get(direction), dict) else {}
    default = HPA_DEFAULT_BEHAVIOR[direction]
    if rules.get("selectPolicy") == "Disabled":
        return None
    low, high = number(spec.get("minReplicas", 1)), number(spec.get("maxReplicas"))
    if low is None or high is None or high <= low:
        return 0.0
    window = number(rules.get("stabilizationWindowSeconds", default["stabilizationWindowSeconds"]))
    window = max(window or 0.0, 0.0)
    policies = [p for p in (rules.get("policies") or default["policies"]) if isinstance(p, dict)]
    policies = [(p.get("type"), number(p.get("value")), number(p.get("periodSeconds"))) for p in policies]
    policies = [(t, v, max(period, 1.0)) for t, v, period in policies if t in ("Pods", "Percent")
                and v is not None and period is not None]
    if not policies:
        return None
    least = rules.get("selectPolicy") == "Min"
    up = direction == "scaleUp"
    replicas, events, elapsed = (low if up else high), [], 0.0
    bound = HPA_SCALING_BOUND[direction] * 4  # beyond it the answer is "too slow" however slow
    while (replicas < high if up else replicas > low):
        if elapsed > bound:
            return None
        limits = []
        for kind, value, period in policies:
            moved = sum(change for at, change in events if at > elapsed - period)
            start = replicas - moved if up else replicas + moved
            if kind == "Pods":
                limits.append(start + value if up else start - value)
            else:
                limits.append(-(-(start * (100 + value)) // 100) if up else int(start * (1 - value / 100.0)))
        limit = (min(limits) if least else max(limits)) if up else (max(limits) if least else min(limits))
        new = min(limit, high) if up else max(limit, low)
        if (new > replicas) if up else (new < replicas):
            events.append((elapsed, abs(new - replicas)))
            replicas = new
        if (replicas < high if up else replicas > low):
            elapsed += HPA_SYNC_SECONDS
    return window + elapsed


def hpa_disabled(hpa, direction):
    """Whether an autoscaler does not scale in `direction` ("scaleUp" or "scaleDown") in time to answer the load:
    its behavior's `selectPolicy: Disabled` (the controller then keeps the replicas it has in that direction), or
    a stabilization window and policies that make it take longer than HPA_SCALING_BOUND to cover its range
    (hpa_scaling_seconds: a window of an hour, a pod per half hour)."""
    seconds = hpa_scaling_seconds(hpa, direction)
    return seconds is None or seconds > HPA_SCALING_BOUND[direction]


def hpa_target_path(optimum):
    """The resource an optimum on an autoscaler's target names (`spec.metrics.[resource.name=memory].resource.
    target.averageUtilization`), else None."""
    path = optimum["path"]
    if optimum["object"].get("kind") != "HorizontalPodAutoscaler" or len(path) != 6 or path[:2] != ["spec", "metrics"]:
        return None
    if not (isinstance(path[2], (list, tuple)) and len(path[2]) == 2 and path[2][0] == "resource.name"):
        return None
    return path[2][1] if list(path[3:5]) == ["resource", "target"] and path[5] in HPA_TARGETS else None


def hpa_pod_request(hpa, state, resource, container=None):
    """What one pod of the workload an autoscaler scales requests of `resource`, the figure a `Utilization`
    target is a percentage of (the HPA controller sums its containers' requests, sidecars among them, and
    cannot compute a utilization when one of them requests none: calculatePodRequests); None when unknown."""
    spec = hpa.get("spec") if isinstance(hpa.get("spec"), dict) else {}
    ref = spec.get("scaleTargetRef") if isinstance(spec.get("scaleTargetRef"), dict) else {}
    namespace = (hpa.get("metadata") or {}).get("namespace") or None
    workload = next((o for o in state.by_kind.get((ref.get("kind"), namespace), [])
                     if (o.get("metadata") or {}).get("name") == ref.get("name")), None)
    if workload is None:
        return None
    pod = pod_spec(admitted(workload, state))
    containers = [c for c in pod.get("containers") or [] if isinstance(c, dict)]
    containers += [c for c in pod.get("initContainers") or [] if isinstance(c, dict) and c.get("restartPolicy") == "Always"]
    if container is not None:
        containers = [c for c in containers if c.get("name") == container]
    requests = [container_request(c, resource) for c in containers]
    return sum(requests) if requests and all(requests) else None


def hpa_signals(hpa, metrics, state):
    """{signal: target} of an autoscaler's metrics: a Resource or ContainerResource target as a utilization
    percentage of the pods' requests (an `AverageValue` target is `utilization x request`: one figure), else
    ("value", quantity); another metric's (its type and value). Where metrics share a signal the tightest
    (smallest) target holds: the controller takes the largest replica count its metrics propose."""
    out = {}
    for metric in metrics if isinstance(metrics, list) else []:
        if not isinstance(metric, dict):
            continue
        kind = metric.get("type")
        field = {"Resource": "resource", "ContainerResource": "containerResource", "Pods": "pods",
                 "Object": "object", "External": "external"}.get(kind)
        source = metric.get(field) if field and isinstance(metric.get(field), dict) else {}
        target = source.get("target") if isinstance(source.get("target"), dict) else {}
        if kind in ("Resource", "ContainerResource"):
            key = (kind, source.get("name"), source.get("container") if kind == "ContainerResource" else None)
            request = hpa_pod_request(hpa, state, source.get("name"), key[2])
            if target.get("type") == "Utilization":
                value = number(target.get("averageUtilization"))
                if request is None:  # the controller cannot compute this utilization
                    value = ("no request", value)
            else:
                value = number(target.get("averageValue", target.get("value")))
                value = (value * 100.0 / request) if value is not None and request else ("value", value)
        else:
            key = (kind, json.dumps({k: v for k, v in source.items() if k != "target"}, sort_keys=True, default=str))
            value = (target.get("type"), number(target.get("averageValue", target.get("value"))))
        held = out.get(key)
        if held is None or (type(held) is type(value) and value is not None and _tighter(value, held)):
            out[key] = value
    return out


def _tighter(a, b, factor=1.0):
    """Whether target `a` is below `b` (times `factor`): a smaller target scales out sooner."""
    x = a[1] if isinstance(a, tuple) else a
    y = b[1] if isinstance(b, tuple) else b
    return x is not None and (y is None or x < y * factor)


def _signal_text(key):
    return f"{key[0]} {key[1]}" + (f" of container {key[2]}" if len(key) > 2 and key[2] else "")


def hpa_observed(spec, optimum, hpa, state):
    """The figure an autoscaler's target optimum is graded on, and why the autoscaler would scale beyond it:
    the tightest target of its metrics on the optimum's resource, in the optimum's unit (a `Utilization`
    target and its equivalent `AverageValue` are one figure); every other signal it scales on must be one the
    healthy autoscaler scales on (the scenario's `collateral.autoscalers`), no tighter than it was: the
    controller takes the largest replica count its metrics propose, so an extra metric (a second one at 1%)
    keeps it scaled out whatever the optimum's metric says."""
    resource = hpa_target_path(optimum)
    observed = hpa_signals(hpa, hpa_metrics(hpa), state)
    key = ("Resource", resource, None)
    value = observed.get(key, MISSING)
    if isinstance(value, tuple) or value is None:
        value = MISSING if value is None or value[0] != "value" or value[1] is None \
            or optimum["path"][5] != "averageValue" else value[1]
    elif value is not MISSING and optimum["path"][5] == "averageValue":
        request = hpa_pod_request(hpa, state, resource)
        value = value * request / 100.0 if request else MISSING
    if value is not MISSING and optimum["path"][5] == "averageUtilization":
        value = round(value, 6)
    collateral = (spec.get("mitigation") or {}).get("collateral") or {}
    entry = next((e for e in collateral.get("autoscalers", []) if e["object"] == optimum["object"]), None)
    if entry is not None and "metrics" in entry:
        healthy = hpa_signals(hpa, entry["metrics"], state)
    else:
        healthy = {("Resource", hpa_target_path(o), None): None for o in spec["finops"]["optimal"]
                   if o["object"] == optimum["object"] and hpa_target_path(o)}
    named = {("Resource", hpa_target_path(o), None) for o in spec["finops"]["optimal"]
             if o["object"] == optimum["object"] and hpa_target_path(o)}
    problems = []
    if hpa_disabled(hpa, "scaleDown"):
        problems.append("its behavior.scaleDown is Disabled or throttled (longer than "
                        f"{HPA_SCALING_BOUND['scaleDown']} s to scale in): the replicas a load raised stay, whatever "
                        "its targets say")
    floor = number(optimum["value"]) if optimum["path"][5] == "averageUtilization" else None
    for signal, target in sorted(observed.items(), key=str):
        if signal in named:
            continue
        if signal not in healthy:
            # the controller takes the largest replica count its metrics propose, and never scales in while one
            # metric cannot be computed (computeReplicasForMetrics): an extra utilization target passes only where
            # it can be computed and is no tighter than the optimum's
            if signal[0] in ("Resource", "ContainerResource") and isinstance(target, tuple) and target[0] == "no request":
                problems.append(f"it also scales on {_signal_text(signal)}, a utilization the controller cannot "
                                "compute (a container requests none of it), so it never scales in")
            elif signal[0] in ("Resource", "ContainerResource") and floor is not None and \
                    target is not None and target >= floor * spec["finops"]["threshold"]:
                continue
            else:
                problems.append(f"it also scales on {_signal_text(signal)} (target {shown(target)}), which the "
                                "healthy autoscaler does not, tighter than the optimum or unbounded: the controller "
                                "takes the largest replica count its metrics propose")
        elif healthy[signal] is not None and type(target) is type(healthy[signal]) \
                and _tighter(target, healthy[signal], spec["finops"]["threshold"]):
            problems.append(f"its {_signal_text(signal)} target {shown(target)} is tighter than the healthy "
                            f"{shown(healthy[signal])}: the controller takes the largest replica count its metrics propose")
    return value, problems


def limitrange_defaults(state, namespace):
    """{"limits": {resource: quantity}, "requests": {...}}: what the LimitRanger admission plugin gives a container
    of a pod in `namespace` that declares none, from the namespace's LimitRanges (items of type Container, as
    the API server defaults them: a default limit from `max`, a default request from `default`, else from
    `min`: SetDefaults_LimitRangeItem); the first LimitRange by name to give a figure sets it. Empty without
    one."""
    out = {"limits": {}, "requests": {}}
    for lr in sorted(state.by_kind.get(("LimitRange", namespace or None), []),
                     key=lambda o: str((o.get("metadata") or {}).get("name"))):
        if terminating(lr):
            continue
        items = (lr.get("spec") or {}).get("limits") if isinstance(lr.get("spec"), dict) else None
        for item in items if isinstance(items, list) else []:
            if not isinstance(item, dict) or item.get("type") != "Container":
                continue
            figures = {k: dict(item.get(k)) if isinstance(item.get(k), dict) else {}
                       for k in ("default", "defaultRequest", "max", "min")}
            default = {**figures["max"], **figures["default"]}
            request = {**figures["min"], **default, **figures["defaultRequest"]}
            for resource, value in default.items():
                out["limits"].setdefault(resource, value)
            for resource, value in request.items():
                out["requests"].setdefault(resource, value)
    return out


def admitted(obj, state):
    """A Pod or workload as its pods are admitted where the namespace holds a LimitRange: each container's
    missing limit its default, each missing request its own limit (the API server's defaulting, which runs
    first), else the default request (LimitRanger's mergeContainerResources); `obj` itself otherwise."""
    if not isinstance(obj, dict):
        return obj
    namespace = (obj.get("metadata") or {}).get("namespace") if isinstance(obj.get("metadata"), dict) else None
    defaults = limitrange_defaults(state, namespace)
    if not defaults["limits"] and not defaults["requests"]:
        return obj
    out = json.loads(json.dumps(obj))
    pod = pod_spec(out)
    for container in list(pod.get("containers") or []) + list(pod.get("initContainers") or []):
        if not isinstance(container, dict):
            continue
        res = container.setdefault("resources", {})
        if not isinstance(res, dict):
            continue
        limits = res.get("limits") if isinstance(res.get("limits"), dict) else {}
        requests = res.get("requests") if isinstance(res.get("requests"), dict) else {}
        requests = {**{k: v for k, v in limits.items() if k not in requests}, **requests}
        for resource, value in defaults["limits"].items():
            limits.setdefault(resource, value)
        for resource, value in defaults["requests"].items():
            requests.setdefault(resource, value)
        res["limits"], res["requests"] = limits, requests
    return out


def healthy_autoscalers(spec):
    """(namespace, name) of the autoscalers the healthy topology holds (the safeguards' `collateral.autoscalers`,
    the spend entries' `autoscaler`)."""
    refs = [e["object"] for e in ((spec.get("mitigation") or {}).get("collateral") or {}).get("autoscalers", [])]
    refs += [e["autoscaler"] for e in (spec.get("finops") or {}).get("spend", []) if e.get("autoscaler")]
    return {(r.get("namespace") or None, r.get("name")) for r in refs}


def replica_floor(obj, state, spec=None):
    """The replicas a workload keeps at least, as the HPA controller scales it: under one autoscaler of the healthy
    topology, its minReplicas (the others come and go with the load, and an autoscaler takes a while to scale
    in after a fix); under one the healthy topology does not hold (`spec` given: an autoscaler added), its
    maxReplicas, where its own target may hold it (the scenario models no load that says less: a 1% target
    keeps it there); under several, none of which the controller scales (AmbiguousSelector), the replicas it
    runs; else its replicas."""
    meta = obj.get("metadata") or {}
    namespace = meta.get("namespace") or None
    replicas = number((obj.get("spec") or {}).get("replicas", 1)) if isinstance(obj.get("spec"), dict) else None
    replicas = 1.0 if replicas is None else replicas
    scaling = []
    for hpa in state.by_kind.get(("HorizontalPodAutoscaler", namespace), []):
        target = ((hpa.get("spec") or {}).get("scaleTargetRef") or {}) if isinstance(hpa.get("spec"), dict) else {}
        if isinstance(target, dict) and target.get("kind") == obj.get("kind") and target.get("name") == meta.get("name") \
                and not terminating(hpa):
            scaling.append(hpa)
    if len(scaling) > 1:
        return replicas
    for hpa in scaling:
        floor = number(hpa["spec"].get("minReplicas", 1))
        floor = 1.0 if floor is None else floor
        if spec is not None and (namespace, (hpa.get("metadata") or {}).get("name")) not in healthy_autoscalers(spec):
            return max(floor, replicas, number(hpa["spec"].get("maxReplicas")) or 0.0)
        return floor
    return replicas


def other_requests(obj):
    """What a Pod or a workload's pods request of every resource beyond CPU and memory (GPUs and other extended
    resources, `hugepages-*`, `ephemeral-storage`), {container or "pod": {resource: amount}}: each container's
    request, else its limit (as the API server defaults it; an extended resource's request is its limit), and
    the pod-level ones under "pod". Only what is requested at all."""
    pod = pod_spec(obj)
    out = {}
    holders = [(c.get("name"), c.get("resources")) for c in list(pod.get("containers") or [])
               + list(pod.get("initContainers") or []) if isinstance(c, dict)]
    holders.append(("pod", pod.get("resources")))
    for name, res in holders:
        res = res if isinstance(res, dict) else {}
        amounts = {}
        for part in ("limits", "requests"):  # the request over the limit
            values = res.get(part) if isinstance(res.get(part), dict) else {}
            for resource, value in values.items():
                if resource not in ("cpu", "memory") and isinstance(resource, str):
                    amounts[resource] = number(value) or 0.0
        amounts = {r: v for r, v in amounts.items() if v}
        if amounts and isinstance(name, str):
            out[name] = amounts
    return out


def finops_spend(spec, state, checks):
    """Spend is cut where the fault made it, never moved elsewhere nor raised: for every workload of the
    topology and each of its healthy containers, its replica floor (replica_floor) times what the container
    requests stays within the threshold of what the healthy manifests cost, above it or below (a request
    slashed starves the service). A raised minReplicas multiplies the spend however well the target is set;
    a control's right answer is to change nothing."""
    threshold = spec["finops"]["threshold"]
    over = []
    for entry in spec["finops"].get("spend", []):
        obj = state.get(entry["object"])
        if obj is None:
            continue  # a missing workload is the health checks' to fail
        floor = replica_floor(obj, state, spec)
        asked = pod_requests(admitted(obj, state))  # its pods' requests, a LimitRange's defaults among them
        # a pod-level request (its limit where it has none) is what the pod reserves of its resource, whichever
        # container uses it: held against the healthy containers' figures together
        level = {r: number(v) or 0.0 for r, v in pod_level(obj)["requests"].items() if r in ("cpu", "memory")}
        shares = [(f"pod {resource}", floor * figure, sum(h.get(resource, 0.0) for h in entry["requests"].values()))
                  for resource, figure in level.items()]
        shares += [(f"container {container} {resource}", floor * (asked.get(container) or {}).get(resource, 0.0),
                    figure) for container, healthy in entry["requests"].items()
                   for resource, figure in healthy.items() if resource not in level]
        # every other resource (a GPU, hugepages, local storage) is reserved on a node as CPU and memory are: one
        # the healthy manifests do not request, or more of it, is spend the fix added
        healthy_other = entry.get("others") or {}
        for holder, amounts in other_requests(admitted(obj, state)).items():
            for resource, figure in amounts.items():
                what = f"{'pod' if holder == 'pod' else 'container ' + holder} {resource}"
                healthy = (healthy_other.get(holder) or {}).get(resource, 0.0)
                if not healthy:
                    over.append(f"{ref_text(entry['object'])} {what}: {floor * figure:g} at {floor:g} replica(s) "
                                "at least, none in the healthy manifests")
                else:
                    shares.append((what, floor * figure, healthy))
        for what, cost, figure in shares:
            budget = entry["replicas"] * figure
            # held as an optimal value is (proximity_to): `within 10%` of the healthy figure, inclusive
            if budget and not near_enough(proximity_to(cost, budget), threshold):  # no request at all: nothing to hold
                over.append(f"{ref_text(entry['object'])} {what}: {cost:g} at "
                            f"{floor:g} replica(s) at least, healthy {budget:g}")
    checks.append({"id": "finops.spend", "passed": not over,
                   "detail": ("spend away from the healthy one: " + "; ".join(over[:3])) if over else
                             "every workload costs what its healthy manifests cost (replica floor times requests)"})


# what the application may reserve above its healthy figure, for each of CPU and memory
RESERVED_SLACK = 0.05


def _containers(obj):
    pod = pod_spec(obj)
    return [c for c in list(pod.get("containers") or []) + list(pod.get("initContainers") or [])
            if isinstance(c, dict)]


def _argv(container):
    """A container's command and arguments as written, () where it sets neither (the image's own)."""
    words = [w for part in ("command", "args") for w in (container.get(part) if isinstance(container.get(part), list)
                                                          else [])]
    return tuple(str(w) for w in words)


def app_programs(workloads, state):
    """The programs the application runs, (image repositories, commands): the repository of each container's
    image (image_ref, tag and digest aside: another version of the program is the program) in the workloads'
    templates and in the pods they own, and each container's command and arguments where it sets them."""
    repositories, commands = set(), set()
    for w in workloads:
        for obj in [w] + workload_pods(w, state):
            for c in _containers(obj):
                if isinstance(c.get("image"), str) and c["image"].strip():
                    repositories.add(_repository(c["image"]))
                if _argv(c):
                    commands.add(_argv(c))
    return repositories, commands


def runs_program(pod, programs):
    """Whether a pod runs one of the application's programs (app_programs): a container of one of its image
    repositories, or running one of its commands."""
    repositories, commands = programs
    return any((isinstance(c.get("image"), str) and c["image"].strip() and _repository(c["image"]) in repositories)
               or (_argv(c) and _argv(c) in commands) for c in _containers(pod))


def app_spend(spec, state):
    """What the application reserves in a state, ({"cpu": cores, "memory": bytes}, what counts beyond the
    topology): each workload of the topology, and each other Deployment or StatefulSet of its namespaces
    (a copy under another name, selected by the healthy selectors or relabelled away from them: it costs
    all the same), at its replica floor times what its pod reserves; and each running pod of its namespaces
    that none of these workloads owns, whoever else owns it (a bare pod, a DaemonSet's, a Job's, a CronJob's),
    where the healthy selectors select it or it runs one of the application's programs (app_programs: a
    container of one of these workloads' images, or of one of their commands), at what it reserves: the
    scheduler reserves a running pod's requests whatever owns it. A pod of another program (a debugging shell,
    a probe) is not the application's. The healthy figure is the topology's alone (`reserves` per workload)."""
    entries = spec["finops"].get("spend", [])
    selectors = [e["selector"] for e in entries if e.get("selector")]
    namespaces = list(dict.fromkeys(e["object"].get("namespace") or None for e in entries))

    def selected(obj):
        labels = (obj.get("metadata") or {}).get("labels")
        return any(selector_matches(s, labels) for s in selectors)

    workloads = [o for o in (state.get(e["object"]) for e in entries) if o is not None]
    beyond = []
    for namespace in namespaces:
        for kind in ("Deployment", "StatefulSet"):
            for w in state.by_kind.get((kind, namespace), []):
                template = (w.get("spec") or {}).get("template") if isinstance(w.get("spec"), dict) else None
                if all(w is not o for o in workloads) and isinstance(template, dict) and not terminating(w):
                    workloads.append(w)
                    beyond.append(f"{kind} {(w.get('metadata') or {}).get('name')}")
    programs = app_programs(workloads, state)
    total = {"cpu": 0.0, "memory": 0.0}
    for w in workloads:
        floor = replica_floor(w, state, spec)
        # the overhead its RuntimeClass adds to each pod at admission is on the pods, not the template
        pods = [p for p in workload_pods(w, state) if not terminating(p)]
        template_overhead = pod_spec(w).get("overhead") if isinstance(pod_spec(w).get("overhead"), dict) else {}
        for resource, figure in pod_reserves(admitted(w, state)).items():
            extra = max([number((p.get("spec") or {}).get("overhead", {}).get(resource)) or 0.0 for p in pods
                         if isinstance((p.get("spec") or {}).get("overhead"), dict)] + [0.0])
            if template_overhead.get(resource) is None:
                figure += extra
            total[resource] += floor * figure
    for namespace in namespaces:
        for pod in state.by_kind.get(("Pod", namespace), []):
            controlled = any(isinstance(o, dict) and o.get("controller")
                             for o in (pod.get("metadata") or {}).get("ownerReferences") or [])
            # a pod no controller owns is bare, however it is named (owns_pod would read the name)
            if terminating(pod) or (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed") \
                    or not (selected(pod) or runs_program(pod, programs)) \
                    or (controlled and any(owns_pod(w, pod) for w in workloads)):
                continue
            for resource, figure in pod_reserves(pod).items():
                total[resource] += figure
            beyond.append(f"Pod {(pod.get('metadata') or {}).get('name')}")
    return total, beyond


def finops_reserved(spec, state, checks):
    """A saving is no saving when the application reserves as much as before: however the measured figure
    reads, the CPU and memory the application reserves (app_spend) stay at most the healthy figure, within
    RESERVED_SLACK. Requests raised beside a lowered maxReplicas, or replicas moved to a copy, fail."""
    healthy = {"cpu": 0.0, "memory": 0.0}
    for entry in spec["finops"].get("spend", []):
        for resource, figure in (entry.get("reserves") or {}).items():
            healthy[resource] += entry["replicas"] * figure
    now, beyond = app_spend(spec, state)
    over = [r for r in ("cpu", "memory") if now[r] > healthy[r] * (1 + RESERVED_SLACK) + 1e-9]

    def figures(t):
        return f"{t['cpu']:g} CPU, {t['memory'] / 2 ** 20:g} MiB memory"

    detail = (f"the application reserves {figures(now)}; healthy {figures(healthy)}, at most "
              f"{RESERVED_SLACK:.0%} more" + (f" ({', '.join(over)} over)" if over else "")
              + (f"; beyond the topology: {', '.join(beyond[:5])}" if beyond else ""))
    checks.append({"id": "finops.reserved", "passed": not over, "detail": detail})


def type_key(text):
    """A FinOps `type` as answers are compared: its words, lower case, a plural's `s` dropped, run together
    ("Over-provisioned requests", "overprovisioned_requests" and "OverprovisionedRequest" are one key)."""
    words = re.findall(r"[a-z0-9]+", str(text)[:200].lower())
    return "".join(w[:-1] if len(w) > 3 and w.endswith("s") and not w.endswith("ss") else w for w in words)


def finops_type(spec, names, text):
    """The one value of the FinOps type vocabulary a `type` text says (a kind leading it, `Deployment: idle
    replicas`, aside); None for any other text: a negation, a hedge, two values."""
    if not isinstance(text, str):
        return None
    head, colon, rest = text.partition(":")
    head = head.strip().lower()
    if colon and head and names.kind_of(head) != head:  # a kind (any case, a short name) leads it
        text = rest
    return (spec["finops"].get("types") or {}).get(type_key(text))


def _type_kind(names, text):
    """The kind a FinOps answer's `type` leads with (`"Deployment: 3 idle replicas"`, `"hpa target 1%"`), or
    None: the kind spelled out, a resource name, or a short name of three letters or more (a two-letter one,
    `no`, `ns`, `po`, is read as a kind only followed by `:`, since `"no memory limit"` says no kind; so is
    `limits`, LimitRange's, since `"limits too high"` says none). A bare name whose `type` says a kind names
    only an object of that kind."""
    match = re.match(r"\s*([A-Za-z][A-Za-z0-9.-]*)\s*(:?)", text)
    if match is None:
        return None
    word, colon = match.groups()
    base = word.lower().partition(".")[0]
    if not (base in SHORT_NAMES or names.kinds.get(base)) or ((len(word) < 3 or base == "limits") and not colon):
        return None
    return names.kind_of(word)


def finops_answer(spec, output, state, checks, metrics):
    """The resources the answer names (`<ns>/<Kind>/<name>`, as the prompt asks; a bare name with its
    kind in `type` too) against the objects each fault makes waste."""
    names = names_of(spec, state)
    findings = [{(r["kind"], r.get("namespace") or None, r["name"]) for r in refs} for refs in spec["finops"]["findings"]]
    predictions, seen, seen_types = [], set(), {}
    for item in output["resource"]:
        if not isinstance(item, dict) or not isinstance(item.get("name"), str):
            raise InputError("each `resource` of the answer must be an object with a `name` string")
        text = item["name"]
        kind_text = item.get("type") if isinstance(item.get("type"), str) else ""
        # a bare name's kind may lead its `type` ("HorizontalPodAutoscaler: memory target 1%")
        keys = names.resolve(text, _type_kind(names, kind_text) if "/" not in text else None)
        identity = keys or ("unresolved", text.strip().lower())
        if identity in seen:
            seen_types[identity].append(kind_text)
            continue
        seen.add(identity)
        seen_types[identity] = [kind_text]
        predictions.append((text, set(keys), seen_types[identity]))
    hits = [any(keys & f for f in findings) for _, keys, _ in predictions]
    found = sum(1 for f in findings if any(keys & f for _, keys, _ in predictions))
    accept = spec["finops"].get("accept")
    if accept is not None and findings:
        # `type` is one value of the closed vocabulary, one that says what this object of the finding wastes
        # (named twice, each of its types must)
        refs = [[(r["kind"], r.get("namespace") or None, r["name"]) for r in group] for group in spec["finops"]["findings"]]
        untold = [text for text, keys, types in predictions for index, group in enumerate(refs) if accept[index]
                  for ref, values in zip(group, accept[index]) if ref in keys
                  and not all(finops_type(spec, names, t) in values for t in types)]
        untold = list(dict.fromkeys(untold))
        vocabulary = sorted(set((spec["finops"].get("types") or {}).values()))
        checks.append({"id": "finops.type", "passed": not untold,
                       "detail": (f"the `type` of {', '.join(untold[:3])} is not the kind of waste it is: one value "
                                  f"of {', '.join(vocabulary)}") if untold else
                                 "each found object's `type` is the kind of waste it is"})
    if not findings:  # a control: nothing is wasted, and the right answer names nothing
        precision = recall = f1 = 0.0 if predictions else 1.0
    else:
        precision = sum(hits) / len(predictions) if predictions else 0.0
        recall = found / len(findings)
        f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    metrics["resource_precision"], metrics["resource_recall"] = round(precision, 6), round(recall, 6)
    metrics["resource_f1"] = round(f1, 6)
    wrong = [text for (text, _, _), ok in zip(predictions, hits) if not ok]
    checks.append({"id": "finops.resource", "passed": precision == 1.0 and recall == 1.0,
                   "detail": f"{len(predictions)} named, {sum(hits)} correct, {found} of {len(findings)} found"
                             + (f"; not wasteful: {', '.join(wrong[:5])}" if wrong else "")})
    return f1


# ---- CISO ------------------------------------------------------------------------------------------------


def report_verdicts(reports, only=None):
    """{(kind, namespace, name): set of results} from PolicyReports (per-resource `scope` or per-result
    resources), and the names of the policies that reported. With `only` (a set of policy names), the
    results of other policies are left out."""
    verdicts, policies = {}, set()
    for report in reports:
        if not isinstance(report, dict):
            continue
        scope = report.get("scope") if isinstance(report.get("scope"), dict) else None
        for result in report.get("results") or []:
            if not isinstance(result, dict):
                continue
            if only is not None and str(result.get("policy", "")) not in only:
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
        actions = failure_actions(spec)
        if contract.get("audit") and any(a is not None and str(a).lower() != "audit" for a in actions):
            problems.append(f"`{name}` blocks (Enforce): the prompt asks it to report (Audit)")
        if contract.get("background") and spec.get("background") is False:
            problems.append(f"`{name}` sets background: false: the prompt asks it to check existing objects")
        refused = background_refusal(policy) if spec.get("background") is not False else None
        if refused:
            problems.append(f"Kyverno refuses `{name}`: {refused}")
        problems += admission_refusals(policy, name, meta, spec)
        problems += schema_refusals(contract.get("schema") or [], policy, name)
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


# A cluster-scoped object's name (the API server's ValidateObjectMeta: a DNS-1123 subdomain)
_DNS1123_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
# the fields of a rule's `validate` of which Kyverno takes exactly one (api/kyverno/v1 Validation.Validate,
# validationElemCount: "Only one of pattern, anyPattern, deny, foreach, podSecurity, cel, assert can be specified")
VALIDATE_ELEMENTS = ("pattern", "anyPattern", "deny", "foreach", "podSecurity", "cel", "manifests", "assert")


def admission_refusals(policy, name, meta, spec):
    """What the API server or Kyverno's admission of the policy refuses, so that the policy never runs in
    the cluster: a name that is no DNS-1123 subdomain, two rules of one name (Kyverno's ValidateRuleNames), a
    rule's `validate` with more than one of (or none of) VALIDATE_ELEMENTS."""
    problems = []
    given = meta.get("name")
    if not isinstance(given, str) or len(given) > 253 or not _DNS1123_SUBDOMAIN.fullmatch(given):
        problems.append(f"the API server refuses `{name}`: metadata.name must be a DNS-1123 subdomain (lower case "
                        "letters, digits, '-' and '.', starting and ending with a letter or digit)")
    elif len(given) > 63:  # Kyverno's policy validation: the name labels the policy's reports
        problems.append(f"Kyverno refuses `{name}`: a policy name of {len(given)} characters (at most 63)")
    rules = [r for r in spec.get("rules") or [] if isinstance(r, dict)] if isinstance(spec.get("rules"), list) else []
    seen = set()
    for rule in rules:
        rule_name = rule.get("name")
        if rule_name in seen:
            problems.append(f"Kyverno refuses `{name}`: duplicate rule name `{rule_name}`")
        seen.add(rule_name)
        validate = rule.get("validate")
        if isinstance(validate, dict):
            given_elements = [k for k in VALIDATE_ELEMENTS if validate.get(k) not in (None, [], {})]
            if len(given_elements) > 1:
                problems.append(f"Kyverno refuses `{name}`: rule `{rule_name}` gives {', '.join(given_elements)} in "
                                "one validate block (only one of pattern, anyPattern, deny, foreach, podSecurity, "
                                "cel, assert can be specified)")
        problems += [f"Kyverno refuses `{name}`: rule `{rule_name}`: {why}"
                     for why in match_refusals(rule, spec.get("background") is not False)]
    return problems


# A variable in a rule's match or exclude block (Kyverno's pkg/validation/policy regexVariables)
_MATCH_VARIABLE = re.compile(r"\{\{[^{}]*\}\}")


def _filters(block):
    """A match or exclude block's resource descriptions: [(where, description)] of its `any`/`all` items, or its
    legacy `resources` when it has neither."""
    if not isinstance(block, dict):
        return []
    for key in ("any", "all"):
        items = block.get(key)
        if isinstance(items, list) and items:
            return [(f"{key}[{i}]", f.get("resources") if isinstance(f.get("resources"), dict) else {})
                    for i, f in enumerate(items) if isinstance(f, dict)]
    return [("resources", block.get("resources") if isinstance(block.get("resources"), dict) else {})]


def match_refusals(rule, background):
    """Why Kyverno's policy validation (pkg/validation/policy validate.go, v1.19) refuses a rule for its match
    and exclude blocks: `any`/`all` beside the legacy `resources` (validateResources), a match description
    without kinds (the kind attribute is mandatory), the wildcard kind `*` in background mode, beside another
    kind or in a foreach rule (validateWildcard), a `{{ variable }}` in match or exclude
    (ruleForbiddenSectionsHaveVariables)."""
    problems = []
    match, exclude = rule.get("match"), rule.get("exclude")
    for word, block in (("match", match), ("exclude", exclude)):
        if not isinstance(block, dict):
            continue
        lists = [k for k in ("any", "all") if isinstance(block.get(k), list) and block.get(k)]
        if lists and block.get("resources") not in (None, {}):
            problems.append(f"can't specify any/all together with {word} resources")
        if word == "exclude" and len(lists) == 2:
            problems.append("can't specify any and all together")
    described = _filters(match)
    if not described or any(not d.get("kinds") for _, d in described):
        problems.append("at least one element must be specified in a kind block, the kind attribute is mandatory "
                        "when working with the resources element")
    foreach = isinstance(rule.get("validate"), dict) and rule["validate"].get("foreach") is not None
    for word, block in (("match", match), ("exclude", exclude)):
        for where, desc in _filters(block):
            kinds = desc.get("kinds") if isinstance(desc.get("kinds"), list) else []
            if "*" not in kinds:
                continue
            if background:
                problems.append(f"{word}.{where}: wildcard policy not allowed in background mode (kinds: [\"*\"] "
                                "needs background: false)")
            elif len(kinds) > 1:
                problems.append(f"{word}.{where}: wildcard policy can not deal with more than one kind")
            elif foreach or rule.get("generate") or rule.get("verifyImages"):
                problems.append(f"{word}.{where}: wildcard policy does not support rule type")
    for word, block in (("exclude", exclude), ("match", match)):
        if block is not None and _MATCH_VARIABLE.search(json.dumps(block)):
            problems.append(f"should not have variables in {word} section")
    return problems


def schema_refusals(constraints, policy, name):
    """What the API server refuses in the policy's values by its CRD's schema (the contract's `schema`, from
    the vendored ClusterPolicy schema: each [dotted path with `*` for any item or key, rule, value]): a value
    outside an enum (a rule-level `failureAction: audit`), a string too long (a rule name over 63 characters),
    a number below its minimum."""
    problems = []

    def values(node, parts, at):
        if not parts:
            yield at, node
        elif parts[0] == "*":
            items = enumerate(node) if isinstance(node, list) else node.items() if isinstance(node, dict) else ()
            for key, item in items:
                yield from values(item, parts[1:], at + [str(key)])
        elif isinstance(node, dict) and parts[0] in node:
            yield from values(node[parts[0]], parts[1:], at + [parts[0]])

    for path, rule, bound in constraints:
        for at, value in values(policy, path.split("."), []):
            where = ".".join(at)
            if rule == "enum" and isinstance(value, (str, int, float, bool)) and value not in bound:
                problems.append(f"the API server refuses `{name}`: {where} is {shown(value)}, not one of "
                                f"{', '.join(map(str, bound))}")
            elif rule in ("maxLength", "minLength") and isinstance(value, str) and (
                    len(value) > bound if rule == "maxLength" else len(value) < bound):
                problems.append(f"the API server refuses `{name}`: {where} has {len(value)} characters "
                                f"({'at most' if rule == 'maxLength' else 'at least'} {bound})")
            elif rule in ("minimum", "maximum") and number(value) is not None and not isinstance(value, bool) and (
                    number(value) < bound if rule == "minimum" else number(value) > bound):
                problems.append(f"the API server refuses `{name}`: {where} is {shown(value)} "
                                f"({'at least' if rule == 'minimum' else 'at most'} {bound})")
            elif rule == "pattern" and isinstance(value, str) and re.search(bound, value) is None:
                problems.append(f"the API server refuses `{name}`: {where} does not match {bound}")
    return problems


# Rego v0 rule heads OPA 1.0 refuses: a body without `if` (`p { ... }`, `p[x] { ... }`, `f(x) { ... }`)
_V0_HEAD = re.compile(r"[A-Za-z_][\w]*(\.[A-Za-z_][\w]*)*\s*(\[[^\]]*\]|\([^)]*\))?\s*\{", re.ASCII)


def rego_v0_heads(source):
    """The lines (1-based) of rule heads in Rego v0 syntax, which OPA 1.0 does not parse: a rule or function
    whose body follows its head without `if`, a partial set rule `p[x] { ... }` without `contains`. Strings
    and comments are left out; only heads at the top level (outside any brace) are read."""
    found, depth = [], 0
    for number, line in enumerate(str(source).splitlines(), 1):
        text = re.sub(r'"(\\.|[^"\\])*"|`[^`]*`', '""', line).split("#", 1)[0]
        if depth == 0 and not re.match(r"\s*(package|import|default)\b", text) and _V0_HEAD.match(text.strip()):
            found.append(number)
        depth = max(0, depth + text.count("{") + text.count("[") + text.count("(")
                    - text.count("}") - text.count("]") - text.count(")"))
    return found


# Kyverno's policy validation (pkg/validation/policy/background.go, v1.19): in background mode (the default)
# a policy may not read who made the request, which a background scan does not know: no variable naming
# these, and no match or exclude block naming roles, cluster roles or subjects. Kyverno refuses such a policy.
_KYVERNO_VARIABLE = re.compile(r"(^|[^\\])(\{\{(?:\{[^{}]*\}|[^{}])*\}\})")
_USER_VARIABLES = [re.compile(r"[^\.](" + word + r")\b") for word in
                   ("serviceAccountName", "serviceAccountNamespace", r"request\.userInfo", r"request\.roles",
                    r"request\.clusterRoles")]
MAX_POLICY_TEXT = 200_000  # characters of a policy's JSON that are searched for variables


def background_refusal(policy):
    """Why Kyverno refuses `policy` in background mode (None when it admits it): a variable that reads the
    requesting user (`{{request.userInfo...}}`, `serviceAccountName`, `request.roles`, ...), or a match or
    exclude block naming `roles`, `clusterRoles` or `subjects` (Kyverno's containsUserVariables)."""
    spec = policy.get("spec") if isinstance(policy.get("spec"), dict) else {}
    for index, rule in enumerate(spec.get("rules") or []):
        if not isinstance(rule, dict):
            continue
        for block in ("match", "exclude"):
            holder = rule.get(block)
            filters = [holder] if isinstance(holder, dict) else []
            for key in ("any", "all"):
                items = holder.get(key) if isinstance(holder, dict) else None
                filters += [f for f in items if isinstance(f, dict)] if isinstance(items, list) else []
            for flt in filters:
                for field in ("roles", "clusterRoles", "subjects"):
                    if flt.get(field):
                        return (f"rule {index} names `{field}` in its {block} block, which a background scan "
                                "cannot know (set background: false, or match on what the objects are)")
    meta = dict(policy.get("metadata")) if isinstance(policy.get("metadata"), dict) else {}
    annotations = meta.get("annotations")
    if isinstance(annotations, dict) and "kubectl.kubernetes.io/last-applied-configuration" in annotations:
        meta["annotations"] = {**annotations, "kubectl.kubernetes.io/last-applied-configuration": ""}
    try:
        text = json.dumps({**policy, "metadata": meta}, sort_keys=True)[:MAX_POLICY_TEXT]
    except (TypeError, ValueError):
        return None
    for match in _KYVERNO_VARIABLE.finditer(text):
        variable = match.group(2)
        for banned in _USER_VARIABLES:
            found = banned.search(variable)
            if found:
                return (f"the variable {shown(variable, 80)} reads `{found.group(1)}`, which a background scan "
                        "does not know (only select variables are allowed in background mode)")
    return None


def failure_actions(spec):
    """Every failure action a Kyverno policy spec applies, as Kyverno resolves each rule's (its validate
    handlers, ComputeEnforceBehavior): a validate rule's own `failureAction`, else the policy's
    `validationFailureAction`; its own `failureActionOverrides[].action`, else the policy's
    `validationFailureActionOverrides` (an override applies its action in the namespaces it selects); each
    `verifyImages[].failureAction`, else the policy's. The policy-level fields count only where a rule falls
    back on them (a policy with no rule: as written). A policy reports only (Audit) when none of them is
    another action: one `Enforce` a rule resolves to blocks."""
    def overrides(holder, key):
        items = holder.get(key) if isinstance(holder, dict) else None
        return [o.get("action") for o in items if isinstance(o, dict)] if isinstance(items, list) else (
            [] if items is None else ["(unreadable overrides)"])

    policy_action = spec.get("validationFailureAction")
    policy_overrides = overrides(spec, "validationFailureActionOverrides")
    rules = [r for r in spec.get("rules") or [] if isinstance(r, dict)] if isinstance(spec.get("rules"), list) else []
    if not rules:
        return [policy_action] + policy_overrides
    actions = []
    for rule in rules:
        validate = rule.get("validate")
        if isinstance(validate, dict):
            own = validate.get("failureAction")
            actions.append(policy_action if own is None else own)
            actions += overrides(validate, "failureActionOverrides") or policy_overrides
        for verify in rule.get("verifyImages") or []:
            if isinstance(verify, dict):
                own = verify.get("failureAction")
                actions.append(policy_action if own is None else own)
    return actions


def ciso(spec, verdicts, checks, metrics, gap_only, source):
    """verdicts: {(kind, namespace, name): set of pass/fail/...} for the gap and compliant objects. The
    compliant objects are always graded (a policy that fails everything never passes); `gap_only`
    reports ITBench's own rule, which grades the gap alone, as a metric beside the verdict."""
    ciso_spec = spec["ciso"]
    if source.endswith("not evaluated)") and not any(verdicts.values()):
        # the policy could not be judged (a construct the matcher lacks): no object is judged either way
        for part, objects in (("gap", ciso_spec["gaps"]), ("compliant", graded_compliant(ciso_spec))):
            for obj in objects:
                checks.append({"id": f"ciso.{part}.{ref_text(as_ref(obj_ref(obj)))}", "passed": False,
                               "unchecked": True, "detail": f"{source}: not judged: the policy could not be "
                                                            "evaluated (ciso.verdicts says why)"})
        metrics["judged"] = False  # and no gaps_flagged, compliant_passed: nothing was judged
        return 0.0
    flagged = kept = 0
    for obj in ciso_spec["gaps"]:
        ref = obj_ref(obj)
        got = verdicts.get(ref, set())
        ok = "fail" in got or "false" in got
        flagged += ok
        checks.append({"id": f"ciso.gap.{ref_text(as_ref(ref))}", "passed": ok,
                       "detail": f"{source}: {', '.join(sorted(got)) or 'no result'} (must fail)"})
    system = {obj_ref(o) for o in ciso_spec.get("system", [])}
    for obj in graded_compliant(ciso_spec):
        ref = obj_ref(obj)
        got = verdicts.get(ref, set())
        # a compliant object must not fail; a recorded Rego run must also cover it (what Kubernetes keeps in a
        # namespace is no object of the scenario's: the run holds no result on it unless the policy flags it)
        ok = not ({"fail", "false", "error"} & got) and (bool(got) or ref in system or not source.startswith("opa"))
        kept += ok
        why = " (must pass: Kubernetes itself keeps it there)" if ref in system else " (must pass)"
        checks.append({"id": f"ciso.compliant.{ref_text(as_ref(ref))}", "passed": ok,
                       "detail": f"{source}: {', '.join(sorted(got)) or 'no result'}{why}"})
    gaps, compliant = len(ciso_spec["gaps"]), len(graded_compliant(ciso_spec))
    metrics["gaps_flagged"] = round(flagged / gaps, 6) if gaps else 1.0
    metrics["compliant_passed"] = round(kept / compliant, 6) if compliant else 1.0
    if gap_only:
        metrics["itbench_gap_only_passed"] = flagged == gaps
    return (flagged + kept) / (gaps + compliant) if gaps + compliant else 0.0


def graded_compliant(ciso_spec):
    """The objects a policy must pass: the scenario's compliant objects and, for a control on where objects
    live, those Kubernetes itself keeps in the gap's namespaces (`ciso.system`: the Service `kubernetes`, the
    ServiceAccount `default`, the ConfigMap `kube-root-ca.crt`), which are never twinned."""
    return ciso_spec["compliant"] + ciso_spec.get("system", [])


def twins(objects, salt=""):
    """Copies of `objects` that differ from them in every name and label a control does not read: each
    object's name, and every other string equal to one of those names (a binding's subject, a role
    reference, a selector's label), becomes a fresh name sharing not even its first character with it; every
    label key and value (of `labels`, `matchLabels`, a Service's `selector`) becomes a fresh one, the same
    throughout, so selectors still select. What the controls read stays: the namespace, the spec, and names
    the objects do not own (`cluster-admin`, `default`, `system:masters`). A fresh name is a keyed hash of the
    old one (`_fresh`), all of one length: nothing in it says which side (gap or compliant) it came from."""
    names = {}
    for obj in objects:
        name = str((obj.get("metadata") or {}).get("name") or "")
        if name and name not in names:
            names[name] = _fresh(name, salt)
    labels = {}

    def label_map(mapping):
        out = {}
        for key, value in mapping.items():
            for text in (key, value):
                if isinstance(text, str) and text not in labels and text not in names:
                    labels[text] = _fresh(text, salt + "\0label")
            out[labels.get(key, names.get(key, key))] = labels.get(value, names.get(value, value)) \
                if isinstance(value, str) else value
        return out

    def copy_of(node, key=None, parent=None):
        if isinstance(node, dict):
            if key in ("labels", "matchLabels") or (key == "selector" and parent == "Service"):
                return label_map(node)
            return {k: copy_of(v, k, node.get("kind") if isinstance(node.get("kind"), str) else parent)
                    for k, v in node.items()}
        if isinstance(node, list):
            return [copy_of(v, key, parent) for v in node]
        if isinstance(node, str) and key != "namespace":
            return names.get(node, node)
        return node

    return [copy_of(obj) for obj in objects]


def _fresh(text, salt):
    """A fresh name for `text`: a letter and 11 hex digits of a hash keyed by `salt` (the scenario's objects,
    which the agent's prompt never holds), the letter never `text`'s first. Every fresh name has one length
    and one form, so a twin's name says nothing of the side of the object it copies."""
    import hashlib

    digest = hashlib.sha256(f"{salt}\0{text}".encode("utf-8", "surrogatepass")).hexdigest()
    letters = [c for c in "bcdfghjkmnpqrstvwxz" if c != text[:1].lower()]
    return letters[int(digest[:8], 16) % len(letters)] + digest[8:19]


def twin_salt(spec):
    """The key of the twins' names: a hash of the scenario's graded objects (deterministic per scenario)."""
    import hashlib

    ciso_spec = spec.get("ciso") or {}
    text = json.dumps([ciso_spec.get("control"), ciso_spec.get("gaps"), ciso_spec.get("compliant"),
                       ciso_spec.get("context")], sort_keys=True, default=str)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:32]


VARIED = True  # grade the scenario's variants beside its twins (off: the twins alone)


def general_checks(spec, judge, checks):
    """A policy judges what objects are, not what they are called: twins of the scenario's objects
    (`twins`: other names, other labels) keep their verdicts, every gap twin fails and every compliant twin
    passes. A policy that singles the violating objects out by name, by a name prefix or by a label value
    passes the gap twins; one that spares the compliant objects by their names or labels (`*-ok`, an
    allowlist) fails the compliant twins. `judge(objects)` gives {(kind, namespace, name): results} as the
    graded verdicts do; `objects` is (gap twins, compliant twins, context twins)."""
    ciso_spec = spec["ciso"]
    gaps = [obj for obj in ciso_spec["gaps"] if (obj.get("metadata") or {}).get("name")]
    compliant = [obj for obj in ciso_spec["compliant"] if (obj.get("metadata") or {}).get("name")]
    context = [obj for obj in ciso_spec.get("context", []) if (obj.get("metadata") or {}).get("name")]
    if not gaps:
        return
    if VARIED:  # the variants in what the control does not read (ciso/variation.py), graded as their originals
        varied = ciso_spec.get("variants") or {}
        gaps = gaps + [obj for obj in varied.get("gaps", []) if (obj.get("metadata") or {}).get("name")]
        compliant = compliant + [obj for obj in varied.get("compliant", []) if (obj.get("metadata") or {}).get("name")]
    copies = twins(gaps + compliant + context, twin_salt(spec))  # one renaming throughout: bindings still reach their roles
    gap_twins, ok_twins = copies[:len(gaps)], copies[len(gaps):len(gaps) + len(compliant)]
    try:
        verdicts = judge((gap_twins, ok_twins, copies[len(gaps) + len(compliant):]))
    except InputError as exc:  # the policy cannot be evaluated on the twins: no pass
        unchecked(checks, "ciso.general", str(exc)[:300])
        return
    except RegoRefused as exc:  # the agent's policy goes over its budget on the twins: a fail, saying why
        checks.append({"id": "ciso.general", "passed": False, "detail": str(exc)[:600]})
        return
    missed = [twin_text(o, c) for o, c in zip(gaps, gap_twins)
              if not ({"fail", "false"} & verdicts.get(obj_ref(c), set()))]
    refused = [twin_text(o, c) for o, c in zip(compliant, ok_twins)
               if {"fail", "false", "error"} & verdicts.get(obj_ref(c), set())]
    problems = []
    if missed:
        problems.append(f"twins of the gap objects under other names and labels pass: {', '.join(missed[:3])} (a "
                        "policy that singles out the violating objects by name or label, or by what else they "
                        "happen to share (an image, a container's name or place, the workload's kind), flags "
                        "nothing else)")
    if refused:
        problems.append(f"twins of the compliant objects under other names and labels fail: {', '.join(refused[:3])} "
                        "(a policy that spares the compliant objects by name or label, or by the exact values "
                        "they happen to hold beyond the control, refuses every other)")
    checks.append({"id": "ciso.general", "passed": not problems,
                   "detail": "; ".join(problems) if problems else
                             "the policy judges objects by what they are: twins of the gap objects (other names, "
                             "other labels) fail and twins of the compliant objects pass"})


def twin_text(original, twin):
    """A twin named for a reader: the object it copies, by kind, namespace and name, then its own fresh name
    (`Deployment/shop/privileged-b (as bc1f...)`), which alone says nothing of which object failed."""
    kind, namespace, name = obj_ref(original)
    return "/".join(str(x) for x in (kind, namespace, name) if x) + f" (as `{obj_ref(twin)[2]}`)"


def unchecked(checks, check_id, why):
    """A check that cannot run is no pass: it is recorded as failed, saying why (`unchecked`)."""
    checks.append({"id": check_id, "passed": False, "unchecked": True, "detail": f"cannot be checked: {why}"})


def kept_checks(spec, policies, checks):
    """An update keeps what the existing policy checked: every object it flagged before the agent touched it
    (`kept`: violations of catalogue controls and the scenario's objects, each with variants in names, labels,
    images, container names and namespace) the updated policy still flags, judged by effect. A rule
    gutted (its pattern emptied) or narrowed (to other kinds, names, namespaces) under its old name flags
    them no longer. `policies`: the updated policy, as the artefact or the cluster holds it."""
    kept = spec["ciso"].get("kept") or []
    if not kept:
        return
    try:
        verdicts = kyverno_offline(spec, policies, [k["object"] for k in kept])
    except InputError as exc:
        unchecked(checks, "ciso.kept", f"the updated policy cannot be evaluated offline ({str(exc)[:160]})")
        return
    lost = [f"{ref_text(as_ref(obj_ref(k['object'])))} (rule {', '.join(k['rules'])})" for k in kept
            if "fail" not in verdicts.get(obj_ref(k["object"]), set())]
    checks.append({"id": "ciso.kept", "passed": not lost,
                   "detail": (f"the existing policy's checks still flag all {len(kept)} of its violations" if not lost
                              else f"the updated policy no longer flags what its existing rules flagged: "
                                   f"{'; '.join(lost[:3])}" + (f" and {len(lost) - 3} more" if len(lost) > 3 else ""))})


_POLICY_BOOKKEEPING = ("uid", "resourceVersion", "generation", "creationTimestamp", "managedFields",
                       "selfLink", "finalizers", "ownerReferences")


# fields Kyverno's webhook writes into a policy it admits, with the values it writes (a policy read back
# from the cluster spells them out; they change nothing it checks)
_KYVERNO_DEFAULTS = {"admission": True, "background": True, "emitWarning": False, "skipBackgroundRequests": True,
                     "allowExistingViolations": True, "validationFailureAction": "Audit", "failurePolicy": "Fail",
                     "webhookTimeoutSeconds": 10, "applyRules": "All", "schemaValidation": True,
                     "useServerSideApply": False}


def _says_same(original, held):
    """Whether `held` (a policy's spec as the artefact or the cluster holds it) says what `original` says:
    equal, but for fields Kyverno writes with their default value."""
    if isinstance(original, dict) and isinstance(held, dict):
        for key in set(original) | set(held):
            if key in original and key in held:
                if not _says_same(original[key], held[key]):
                    return False
            elif key in held and not (key in _KYVERNO_DEFAULTS and same(held[key], _KYVERNO_DEFAULTS[key])):
                return False
            elif key in original and not (key in _KYVERNO_DEFAULTS and same(original[key], _KYVERNO_DEFAULTS[key])):
                return False
        return True
    if isinstance(original, list) and isinstance(held, list):
        return len(original) == len(held) and all(_says_same(a, b) for a, b in zip(original, held))
    return same(original, held)


# annotations that change what Kyverno does with a policy: the pod controllers its Pod rules are carried over
# to (`none`: none; Kyverno's pkg/autogen, api/kyverno/constants.go), and whether its failures count
_BEHAVIOUR_ANNOTATIONS = ("pod-policies.kyverno.io/autogen-controllers", "policies.kyverno.io/scored")


def _behaviour(policy):
    """What Kyverno makes of a policy beyond its spec: the names and kinds of the rules it evaluates (autogen
    rules included, as the embedded matcher expands them) and whether its failures count. Without the matcher,
    the behaviour annotations themselves (a missing autogen annotation is Kyverno's default)."""
    meta = policy.get("metadata") if isinstance(policy.get("metadata"), dict) else {}
    annotations = meta.get("annotations") if isinstance(meta.get("annotations"), dict) else {}
    scored = str(annotations.get(_BEHAVIOUR_ANNOTATIONS[1], "true")).strip().lower() != "false"
    matcher = embedded_module("kyverno")
    # the embedded entry module holds it; inside the package, its `policy` module does
    rules = getattr(matcher, "_cached_rules", None) or getattr(getattr(matcher, "policy", None), "_cached_rules", None)
    if rules is None:
        return (str(annotations.get(_BEHAVIOUR_ANNOTATIONS[0], "")).strip(), scored)
    try:
        expanded = rules(policy)
    except Exception:  # noqa: BLE001 - a policy the matcher cannot read: compare what it says
        return (str(annotations.get(_BEHAVIOUR_ANNOTATIONS[0], "")).strip(), scored)
    kinds = []
    for rule, _ in expanded:
        match = rule.get("match") if isinstance(rule.get("match"), dict) else {}
        filters = [match] + [f for key in ("any", "all") for f in (match.get(key) or []) if isinstance(f, dict)]
        found = sorted(str(k) for f in filters for k in ((f.get("resources") or {}).get("kinds") or []))
        kinds.append((str(rule.get("name")), tuple(found)))
    return (tuple(sorted(kinds)), scored)


def others_checks(spec, policies, checks, complete):
    """The other existing policies of an update are left unchanged: each one `policies` holds must say what it
    said. With `complete` (the cluster's ClusterPolicies, as captured), each must also still be there."""
    others = spec["ciso"].get("others") or []
    if not others:
        return
    held = {}
    for p in policies:
        if isinstance(p, dict) and isinstance(p.get("metadata"), dict):
            held.setdefault(p["metadata"].get("name"), []).append(p)
    problems = []
    for original in others:
        name = original["metadata"]["name"]
        found = held.get(name, [])
        if not found:
            if complete:
                problems.append(f"`{name}` is gone")
            continue
        if any(p.get("kind") != original.get("kind") or not _says_same(original.get("spec"), p.get("spec"))
               for p in found):
            problems.append(f"`{name}` was changed")
        elif any(_behaviour(p) != _behaviour(original) for p in found):
            problems.append(f"`{name}` was changed in what Kyverno makes of it (its annotations "
                            f"{', '.join(_BEHAVIOUR_ANNOTATIONS)}: the rules it carries over to pod controllers, "
                            "whether its failures count)")
    checks.append({"id": "ciso.others", "passed": not problems,
                   "detail": "; ".join(problems) + " (the prompt asks to leave the other policies unchanged)"
                   if problems else f"the other existing policies ({len(others)}) are unchanged"})


def obj_ref(obj):
    meta = obj.get("metadata") or {}
    return (obj.get("kind"), meta.get("namespace") or None, meta.get("name"))


def kyverno_offline(spec, policies, objects=None):
    """Run the agent's Kyverno policy over the embedded gap and compliant manifests (or `objects`)."""
    matcher = embedded_module("kyverno")
    if matcher is None:
        raise InputError("this evaluator has no embedded Kyverno matcher: grade from PolicyReports in the state")
    verdicts = {}
    targets = spec["ciso"]["gaps"] + graded_compliant(spec["ciso"]) if objects is None else objects
    labels = namespace_labels(spec, targets)
    for obj in targets:
        results = set()
        # a workload is judged with the Pod its template makes: a rule on Pods that Kyverno carries over to
        # no controller (`pod-policies.kyverno.io/autogen-controllers: none`) flags the pods it runs
        for target in [as_stored(obj)] + ([templated_pod(obj)] if templated_pod(obj) is not None else []):
            for policy in policies:
                try:
                    outcome = matcher.evaluate_policy(policy, target, namespace_labels=labels)
                except Exception as exc:  # noqa: BLE001 - Unsupported (a feature the matcher lacks), a malformed policy
                    raise InputError(f"the Kyverno policy cannot be evaluated offline: {type(exc).__name__}: {exc}")
                for result in outcome:
                    status = getattr(result, "status", None) or getattr(result, "result", "")
                    results.add(str(status))
        verdicts[obj_ref(obj)] = results
    return verdicts


def namespace_labels(spec, objects):
    """{namespace: labels} of every namespace `objects` live in, for a policy's namespaceSelector: the labels
    the scenario gives its namespaces (the spec's `ciso.namespaces`), with the one Kubernetes gives every
    namespace (`kubernetes.io/metadata.name`)."""
    given = spec["ciso"].get("namespaces") or {}
    out = {}
    for obj in objects:
        meta = obj.get("metadata") if isinstance(obj, dict) and isinstance(obj.get("metadata"), dict) else {}
        namespace = meta.get("name") if obj.get("kind") == "Namespace" else meta.get("namespace")
        if isinstance(namespace, str) and namespace not in out:
            labels = given.get(namespace) if isinstance(given.get(namespace), dict) else {}
            out[namespace] = {**labels, "kubernetes.io/metadata.name": namespace}
    return out


def rego_verdicts(spec, rego_source, opa_result, objects=None):
    """Per-object verdicts of a Rego `package check` rule `result` (false means a violation). The policy reads
    every collected object at once (a Deployment is covered by a NetworkPolicy beside it), so each verdict
    comes from inputs (`rego_inputs`) whose answer depends on what the objects are, never on their count,
    order or size: a compliant object passes when every input of compliant objects gives true, a gap object
    fails when every input holding it gives false. `objects`: (gaps, compliant, context) to judge instead of
    the embedded ones (the twins)."""
    gaps, compliant, context = (spec["ciso"]["gaps"], graded_compliant(spec["ciso"]), spec["ciso"].get("context", [])) \
        if objects is None else objects
    verdicts = {}
    if rego_source is not None:
        engine = rego_engine()
        if engine is not None:
            name, run = engine
            said = {}  # what each object's inputs gave: the first one that breaks its verdict, if any
            inputs = rego_inputs(gaps, compliant, context, spec["ciso"].get("unit"))
            stored = {}  # the objects as stored, once each: the inputs hold the same objects many times
            found = run(rego_source, [rego_input(spec, world, stored) for _, world, _ in inputs])
            for (what, world, gap), verdict in zip(inputs, found):
                want = "pass" if gap is None else "fail"
                for obj in (compliant if gap is None else [gap]):
                    if verdict != want:
                        said.setdefault(obj_ref(obj), {verdict, f"on the input of {what}"})
            for want, group in (("pass", compliant), ("fail", gaps)):
                for obj in group:
                    verdicts[obj_ref(obj)] = said.get(obj_ref(obj), {want})
            return verdicts, f"rego ({name})"
        if opa_result is None:
            raise InputError("no Rego engine: give OPA v1's binary (--opa PATH, or `opa` on PATH), install regopy, "
                             "or give a recorded `opa eval` result with --opa-result FILE")
    objects = list(gaps) + list(compliant)
    if opa_result is None:
        raise InputError("a Rego artefact needs --artifact FILE.rego (with OPA or regopy) or --opa-result FILE")
    # a recorded result, one `opa eval` per object (input: a List holding that object alone):
    # {"namespace/Kind/name": <`opa eval --format json` output, or the bare boolean>}
    if not isinstance(opa_result, dict):
        raise InputError("the --opa-result file must map `namespace/Kind/name` to an `opa eval` result")
    for obj in objects:
        key = obj_ref(obj)
        value = opa_result.get(ref_text(as_ref(key)), MISSING)
        if value is MISSING:
            continue
        if isinstance(value, dict):
            try:
                value = value["result"][0]["expressions"][0]["value"]
            except (KeyError, IndexError, TypeError):
                raise InputError(f"the recorded result of {ref_text(as_ref(key))} is not `opa eval --format json` output")
        verdicts[key] = {"pass" if value is True else "fail"}
    return verdicts, "opa eval (recorded)"


def rego_inputs(gaps, compliant, context, unit=None):
    """The inputs a Rego policy is graded on, (what, objects, the gap object it must flag or None for true):
    the compliant objects with the gap's context, in reverse order, with one more compliant object (as many
    objects as an input with a gap object), and beside their twins (twice as many); each gap object beside
    them, alone with the context, first before them reversed, and beside the doubled compliant input. A policy
    keyed on the number of objects, their order or the input's size gives some of them the wrong answer.

    A control judged per namespace (`unit` "namespace", CIS 5.3.2: a namespace has NetworkPolicies or not)
    never puts a gap object beside the compliant objects, which would make its namespace compliant: each gap
    object is judged alone with its context, beside another gap object, and beside its own twins in reverse
    order, so that a gap input holds as many objects as a compliant one and the count still says nothing."""
    base = list(compliant) + list(context)
    doubled = base + twins(base)
    inputs = []
    if compliant:
        inputs += [("the compliant objects", base, None), ("the compliant objects in reverse order", base[::-1], None),
                   ("the compliant objects and another compliant object", base + [_renamed(compliant[0])], None),
                   ("the compliant objects and their twins", doubled, None)]
    for gap in gaps:
        alone = [gap] + list(context)
        if unit == "namespace":
            inputs += [("a gap object alone (with its context)", alone, gap),
                       ("a gap object and another gap object", alone + [_renamed(gap)], gap),
                       ("a gap object beside its twins, in reverse order", (alone + twins(alone))[::-1], gap)]
            continue
        inputs += [("the compliant objects and a gap object", base + [gap], gap),
                   ("a gap object alone (with its context)", alone, gap),
                   ("a gap object first, the compliant objects after it", [gap] + base[::-1], gap),
                   ("the compliant objects, their twins and a gap object", doubled + [gap], gap)]
    return inputs


def _renamed(obj):
    """A copy of `obj` under another name (its labels and spec kept): another object of its content."""
    copy = json.loads(json.dumps(obj))
    meta = copy.get("metadata") if isinstance(copy.get("metadata"), dict) else {}
    meta["name"] = f"{meta.get('name') or 'object'}-copy"
    copy["metadata"] = meta
    return copy


def rego_input(spec, objects, stored=None):
    """A Rego input in the shape the prompt states (ciso/tasks.py, INPUT_SHAPES): `kubectl get -o json`'s
    List of the objects as the API server stores them, each workload followed by the Pod it runs (as
    kyverno_offline judges it: `kubectl get pods` on the cluster lists them), or for a host control one item per
    host with its settings. `stored`: id(object) -> its items, kept across the inputs of one grading (whose
    objects it holds alive); the items are shared, never changed."""
    if spec["ciso"].get("input") == "hosts":
        return {"hosts": [{"name": (o.get("metadata") or {}).get("name"), **(o.get("host") or {})} for o in objects]}
    stored = {} if stored is None else stored
    items = []
    for obj in objects:
        if id(obj) not in stored:
            pod = templated_pod(obj)
            stored[id(obj)] = [as_stored(obj)] + ([pod] if pod is not None else [])
        items += stored[id(obj)]
    return {"apiVersion": "v1", "kind": "List", "items": items}


# The engines that grade Rego (docs/evaluator.md, `policy`): OPA v1 itself, the engine the prompt names, when
# its binary is found; else regopy (rego-cpp), which departs from OPA in a few constructs the docs list.
OPA_VARIABLE = "ITBENCH_OPA"  # the `opa` binary to grade with, or `none` for regopy
OPA_OPTION = None  # main()'s --opa, which goes before the environment
_OPA_VERSIONS = {}  # binary -> its OPA version (None: not OPA v1), asked once


def rego_engine():
    """(name, run) of the engine that grades Rego, run(source, documents) giving the verdict on each input:
    ("opa X.Y.Z", ...) for OPA v1's binary (--opa PATH, else $ITBENCH_OPA, else `opa` on PATH), else ("regopy",
    ...) when regopy is installed, else None. `none` for either leaves OPA out. A binary named explicitly that
    is not OPA v1 is an unusable input; an `opa` on PATH that is not (OPA 0.x reads Rego v0) is passed over."""
    choice = OPA_OPTION if OPA_OPTION is not None else os.environ.get(OPA_VARIABLE) or None
    if choice is not None and choice != "none":
        binary = shutil.which(choice) or choice
        version = opa_version(binary)
        if version is None:
            given = "--opa" if OPA_OPTION is not None else OPA_VARIABLE
            raise InputError(f"{given} {choice}: not the binary of OPA v1 (`{choice} version` must say Version: 1.x)")
        return f"opa {version}", lambda source, documents: _opa_verdicts(binary, source, documents)
    if choice is None:
        binary = shutil.which("opa")
        version = opa_version(binary) if binary else None
        if version is not None:
            return f"opa {version}", lambda source, documents: _opa_verdicts(binary, source, documents)
    try:
        # regopy wraps rego-cpp, Microsoft's Rego engine that tracks OPA's v1 semantics (`if`/`contains`
        # keywords, v1 defaults); the pure-Python engines stop at pre-1.0 Rego.
        import regopy
    except ImportError:
        return None
    return "regopy", lambda source, documents: _regopy_verdicts(regopy, source, documents)


def opa_version(binary):
    """The version `binary version` states when it is OPA 1.x or later (`1.22.4`), else None."""
    if binary not in _OPA_VERSIONS:
        try:
            said = subprocess.run([binary, "version"], capture_output=True, text=True, timeout=60, check=False).stdout
        except (OSError, subprocess.SubprocessError, ValueError):
            said = ""
        found = re.search(r"^Version:\s*v?(([0-9]+)\.[0-9]+\S*)", said, re.M | re.ASCII)
        _OPA_VERSIONS[binary] = found.group(1) if found and int(found.group(2)) >= 1 else None
    return _OPA_VERSIONS[binary]


class RegoRefused(Exception):
    """The agent's Rego artefact does not compile, or its evaluation goes over its budget: the policy is
    graded (every verdict failed, with this reason), never refused as an unusable input."""


# The budget of one evaluation of the agent's Rego (docs/evaluator.md, `policy`): the engine (rego-cpp) runs in
# a child process whose address space may grow by REGO_MEMORY bytes and which may use REGO_SECONDS of CPU, so
# that a policy building a value without end (`numbers.range(1, 200000000)`, a comprehension over it, a
# string repeated) stops there, as the Kyverno matcher's CEL stops at its step budget (kyverno/cel.py).
REGO_MEMORY = 768 * 1024 * 1024
REGO_SECONDS = 20


def _address_space():
    """The bytes of address space this process maps now (Linux: /proc/self/statm; elsewhere 0)."""
    try:
        with open("/proc/self/statm") as handle:
            return int(handle.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


_BUDGET_CHILD = False  # set in a child `bounded` started: renew_cpu_budget acts there only


def renew_cpu_budget():
    """Give the next of several inputs evaluated in one bounded child its own REGO_SECONDS of CPU (the soft
    limit moves past what the child used so far; the hard one bounds the whole batch)."""
    if not _BUDGET_CHILD:
        return
    import resource

    usage = resource.getrusage(resource.RUSAGE_SELF)
    _, hard = resource.getrlimit(resource.RLIMIT_CPU)
    soft = int(usage.ru_utime + usage.ru_stime) + 1 + REGO_SECONDS
    resource.setrlimit(resource.RLIMIT_CPU, (soft if hard == resource.RLIM_INFINITY else min(soft, hard), hard))


def bounded(run, inputs=1):
    """run() in a child process under the Rego budget (REGO_MEMORY, REGO_SECONDS); its JSON-able result, or
    RegoRefused when the child ran out of its budget. Where there is no fork (Windows) it runs in process.
    A run over several `inputs` calls renew_cpu_budget() before each: each gets REGO_SECONDS of CPU."""
    global _BUDGET_CHILD
    try:
        import resource
    except ImportError:
        return run()
    if not hasattr(os, "fork"):
        return run()
    import tempfile

    sys.stdout.flush()
    sys.stderr.flush()
    said = tempfile.TemporaryFile()  # what the engine writes on stdout and stderr
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: evaluate under the budget, write (kind, value) as JSON, and leave
        code = 0
        try:
            os.close(read_end)
            os.dup2(said.fileno(), 1)
            os.dup2(said.fileno(), 2)
            if "faulthandler" in sys.modules:
                sys.modules["faulthandler"].disable()  # an engine aborting out of memory is the budget, no crash
            base = _address_space()
            if base:
                resource.setrlimit(resource.RLIMIT_AS, (base + REGO_MEMORY, base + REGO_MEMORY))
            resource.setrlimit(resource.RLIMIT_CPU, (REGO_SECONDS, (REGO_SECONDS + 1) * max(1, inputs) + 1))
            _BUDGET_CHILD = True
            try:
                outcome = ["ok", run()]
            except RegoRefused as exc:
                outcome = ["refused", str(exc)]
            except InputError as exc:
                outcome = ["input", str(exc)]
            except MemoryError:
                outcome = ["budget", "memory"]
            data = json.dumps(outcome).encode()
            while data:
                data = data[os.write(write_end, data):]
        except BaseException:  # noqa: BLE001 - the child reports nothing; the parent reads that as the budget
            code = 1
        finally:
            os._exit(code)
    os.close(write_end)
    chunks = []
    while True:
        chunk = os.read(read_end, 1 << 16)
        if not chunk:
            break
        chunks.append(chunk)
    os.close(read_end)
    os.waitpid(pid, 0)
    try:
        kind, value = json.loads(b"".join(chunks).decode())
    except ValueError:
        kind, value = "budget", "ended"
    # what the engine wrote (its compile errors) belongs to the verdict's reason, never to the grader's own
    # output: a check of many policies would print each malformed one's errors
    said.seek(0)
    text = " ".join(said.read(1 << 16).decode("utf-8", "replace").split())
    said.close()
    if kind == "refused" and text and text[:200] not in value:
        value = f"{value}; the engine said: {text[:400]}"
    if kind == "ok":
        return value
    if kind == "input":
        raise InputError(value)
    if kind == "refused":
        raise RegoRefused(value)
    raise _over_budget()


def _regopy_verdicts(regopy, source, documents):
    """The policy's verdict on each input, in one bounded child with one interpreter: a fork and a compile
    per input cost more than most evaluations. Each input keeps its own CPU budget."""
    def run():
        interpreter = _quiet(lambda: _compiled(regopy, source))
        verdicts = []
        for document in documents:
            renew_cpu_budget()
            verdicts.append(_regopy_run(interpreter, document))
        return verdicts

    return bounded(run, len(documents)) if documents else []


def _quiet(step):
    """step() with what rego-cpp prints on stdout (compile errors, where the verdict goes) sent to stderr; an
    engine error is a RegoRefused."""
    sys.stdout.flush()
    saved = os.dup(1)
    os.dup2(2, 1)
    try:
        return step()
    except MemoryError:
        raise
    except Exception as exc:  # noqa: BLE001 - regopy raises RegoError for a module that does not compile
        raise RegoRefused(f"the Rego artefact does not evaluate: {' '.join(str(exc).split())[:500]}")
    finally:
        os.dup2(saved, 1)
        os.close(saved)


def _compiled(regopy, source):
    interpreter = regopy.Interpreter()
    interpreter.add_module("check", source)
    return interpreter


def _regopy_run(interpreter, document):
    def query():
        interpreter.set_input(document)  # rego_input: the shape the prompt states
        # bound to a variable: a bare query whose value is `false` reads as undefined
        return interpreter.query("x := data.check.result")

    text = str(_quiet(query)).strip()
    if text == "undefined":
        return "error"  # `result` must be defined for every object
    if text.startswith("Error") or text.startswith("{\"errors"):  # a module that does not compile, said as output
        raise RegoRefused(f"the Rego artefact does not evaluate: {' '.join(text.split())[:500]}")
    try:
        value = json.loads(text).get("bindings", {}).get("x")
    except (ValueError, AttributeError):
        # rego-cpp reports a module it refuses (a wildcard `_` inside a call's argument, which OPA
        # accepts) as `<error>` after writing why on stderr
        raise RegoRefused("the Rego engine (rego-cpp) does not evaluate the policy: "
                          f"{' '.join(text.split())[:200]}")
    return "pass" if value is True else "fail" if value is False else "error"


# what one `opa eval` may write: its verdicts are booleans, so a value or an error beyond this is over the budget
OPA_OUTPUT = 1024 * 1024
# the wall-clock bound of one `opa eval` (CPU is bounded by REGO_SECONDS; a loaded machine stretches wall time,
# and a policy may wait: `http.send`)
OPA_SECONDS = 3 * REGO_SECONDS
# One `opa eval` over every input of a grading (a list, given as `--input`): the result as the prompt defines
# it on each input in turn, each replacing `input` whole (`with`), as `--input input.json` would; a pair per
# input whose `result` is defined. OPA starting up costs more than most evaluations.
OPA_BATCH_QUERY = "[[i, v] | some i; doc := input[i]; v := data.check.result with input as doc]"


def _opa_verdicts(binary, source, documents):
    """The policy's verdict on each input, from one `opa eval --data policy.rego --input inputs.json` of
    OPA_BATCH_QUERY over them all, under the Rego budget: REGO_MEMORY of data, REGO_SECONDS of CPU, OPA_SECONDS
    of wall time, OPA_OUTPUT bytes of output. An evaluation error stops the whole query (Rego cannot catch a
    conflict between rule values on one input), as does a module OPA does not compile or a bound: then each
    input is evaluated alone, in order (`_opa_run`), so that the one that errs says so as it did on its own:
    a RegoRefused with OPA's reason, or over the budget."""
    import tempfile

    with tempfile.TemporaryDirectory(prefix="itbench-rego-") as folder:
        with open(os.path.join(folder, "policy.rego"), "w", encoding="utf-8") as handle:
            handle.write(source)
        if len(documents) > 1:
            found = _opa_batch(binary, folder, documents)
            if found is not None:
                return found
        return [_opa_run(binary, folder, document) for document in documents]


def _opa_limits():
    """In the `opa eval` child: the budget as resource limits (RLIMIT_DATA bounds Go's heap, which RLIMIT_AS
    would not leave room to start its threads in; RLIMIT_FSIZE the output it writes to its file)."""
    import resource

    resource.setrlimit(resource.RLIMIT_CPU, (REGO_SECONDS, REGO_SECONDS + 1))
    resource.setrlimit(resource.RLIMIT_DATA, (REGO_MEMORY, REGO_MEMORY))
    resource.setrlimit(resource.RLIMIT_FSIZE, (OPA_OUTPUT, OPA_OUTPUT))


def _opa_eval(binary, folder, document, input_name, query):
    """One bounded `opa eval` of `query` on `document` (written to `input_name`): (exit code, its JSON output
    or None, its text). Over the wall-clock bound: None."""
    import tempfile

    with open(os.path.join(folder, input_name), "w", encoding="utf-8") as handle:
        # rego_input: the shape the prompt states; json.dumps, as json.dump to a file encodes in pure Python
        handle.write(json.dumps(document))
    try:
        import resource  # noqa: F401 - POSIX: the budget as resource limits; elsewhere the wall-clock bound alone
        limits = _opa_limits
    except ImportError:
        limits = None
    command = [binary, "eval", "--format", "json", "--data", "policy.rego", "--input", input_name, query]
    with tempfile.TemporaryFile(dir=folder) as said:
        try:
            proc = subprocess.run(command, cwd=folder, stdin=subprocess.DEVNULL, stdout=said, stderr=subprocess.STDOUT,
                                  timeout=OPA_SECONDS, preexec_fn=limits, check=False)
        except subprocess.TimeoutExpired:
            return None
        except OSError as exc:
            raise InputError(f"{binary}: cannot run: {exc.strerror or exc}") from None
        said.seek(0)
        text = said.read(OPA_OUTPUT).decode("utf-8", "replace")
    try:
        out = json.loads(text)
    except ValueError:
        out = None
    return proc.returncode, out, text


def _opa_batch(binary, folder, documents):
    """The verdicts of one `opa eval` over every input (OPA_BATCH_QUERY), or None when that evaluation did not
    end with a value for the batch (an error, a bound): the inputs are then evaluated one by one."""
    ran = _opa_eval(binary, folder, documents, "inputs.json", OPA_BATCH_QUERY)
    if ran is None or ran[0] != 0 or not isinstance(ran[1], dict):
        return None
    try:
        pairs = ran[1]["result"][0]["expressions"][0]["value"]
    except (KeyError, IndexError, TypeError):
        return None
    if not isinstance(pairs, list):
        return None
    verdicts = ["error"] * len(documents)  # an input left out: `result` undefined there, which must be defined
    for pair in pairs:
        if not (isinstance(pair, list) and len(pair) == 2 and type(pair[0]) is int and 0 <= pair[0] < len(documents)):
            return None
        verdicts[pair[0]] = "pass" if pair[1] is True else "fail" if pair[1] is False else "error"
    return verdicts


def _opa_run(binary, folder, document):
    """The verdict of one `opa eval --data policy.rego --input input.json data.check.result` (the result as the
    prompt defines it) on one input."""
    ran = _opa_eval(binary, folder, document, "input.json", "data.check.result")
    if ran is None:
        raise _over_budget()
    returncode, out, text = ran
    if returncode == 0 and isinstance(out, dict):
        try:
            value = out["result"][0]["expressions"][0]["value"]
        except (KeyError, IndexError, TypeError):
            return "error"  # undefined: `result` must be defined for every object
        return "pass" if value is True else "fail" if value is False else "error"
    if isinstance(out, dict) and isinstance(out.get("errors"), list):
        reasons = []
        for error in out["errors"][:5]:
            error = error if isinstance(error, dict) else {"message": str(error)}
            where = error.get("location") if isinstance(error.get("location"), dict) else {}
            at_line = f"{where.get('file')}:{where.get('row')}: " if where.get("row") else ""
            reasons.append(f"{at_line}{error.get('code') or 'error'}: {error.get('message')}")
        raise RegoRefused(f"the Rego artefact does not evaluate (OPA): {' '.join('; '.join(reasons).split())[:500]}")
    # killed at its CPU or output bound, or out of its memory (Go's fatal error)
    raise _over_budget(" ".join(text.split())[:200])


def _over_budget(said=""):
    return RegoRefused(f"the Rego policy's evaluation goes over its budget ({REGO_MEMORY // (1024 * 1024)} MiB of "
                       f"memory, {REGO_SECONDS} s of CPU for one input): a value it builds is too large "
                       "(numbers.range, a comprehension, a repeated string) or it does not end"
                       + (f"; the engine said: {said}" if said else ""))


def graded_policies(contract, st):
    """The names of the policies a policy task grades from PolicyReports: the one the task names (an
    update), else the agent's own as the run recorded them (the state's `gradedPolicies`: those that
    were not in the cluster before the agent). The results of other policies (another tenant's, a cluster
    default) never count, so a state that does not say which policies are the agent's is refused: graded on
    every reporting policy, a policy already in the cluster would answer for the agent."""
    if contract.get("name"):
        return {contract["name"]}
    names = st.graded_policies
    if names is None:
        raise InputError("the state does not say which policies are the agent's (`gradedPolicies`, the policies "
                         "that were not in the cluster before it): capture it with `--capture FILE --before "
                         "BEFORE.json` (BEFORE.json captured before the agent) or `--graded-policies NAME,...`")
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise InputError("the state's `gradedPolicies` must be a list of policy names")
    return set(names)


def live_general_checks(spec, policies, checks):
    """`ciso.general` for a policy graded from the cluster's reports: the policies, as read back from the
    cluster, judged by the embedded matcher on the twins, when the matcher reads the gap objects as Kyverno
    reported them. A policy the matcher cannot evaluate, or reads otherwise, leaves the check unrun: it is
    recorded failed with the reason (`unchecked`), never a pass."""
    if embedded_module("kyverno") is None:
        unchecked(checks, "ciso.general", "this evaluator embeds no Kyverno matcher to judge the twins with")
        return
    try:
        gaps = spec["ciso"]["gaps"]
        seen = kyverno_offline(spec, policies, gaps)
        if not all({"fail", "false"} & seen.get(obj_ref(o), set()) for o in gaps):
            unchecked(checks, "ciso.general", "the embedded matcher does not flag the gap objects with this policy, "
                      "so its verdicts on their twins prove nothing")
            return
        general_checks(spec, lambda objs: kyverno_offline(spec, policies, objs[0] + objs[1]), checks)
    except InputError as exc:
        unchecked(checks, "ciso.general", str(exc)[:200])


def _update_target(contract, policies):
    """The policy an update grades (the one the contract names) among `policies`; all of them otherwise."""
    if not contract.get("name"):
        return policies
    return [p for p in policies if (p.get("metadata") or {}).get("name") == contract["name"]]


def policy_task(spec, st, artifact, opa_result, gap_only, checks, metrics):
    contract = spec["ciso"].get("contract") or {}
    problems = None
    # the agent's artefact is graded whatever it holds: one that cannot be read, or holds no policy, fails
    unread = artifact[1] if artifact is not None and artifact[0] == "unreadable" else None
    if artifact is not None and artifact[0] == "kyverno":
        policies = [d for d in unlisted(artifact[1]) if isinstance(d, dict)]
        # a ValidatingPolicy is evaluated too (the contract says whether the prompt accepts its kind)
        kyverno = [p for p in policies if p.get("kind") in ("ClusterPolicy", "Policy", "ValidatingPolicy",
                                                           "NamespacedValidatingPolicy")]
        if not kyverno:
            unread = "the artefact holds no Kyverno ClusterPolicy or Policy"
    if unread is not None:
        problems = [unread]
        verdicts = {obj_ref(obj): {"error"} for obj in spec["ciso"]["gaps"] + graded_compliant(spec["ciso"])}
        source = "the artefact (not read)"
    elif artifact is not None and artifact[0] == "kyverno":
        problems = contract_problems(contract, policies) if contract.get("artefact") == "kyverno" else []
        # an update grades the policy the prompt names, as the live path does (`graded_policies`): a new
        # policy beside an unchanged one does not do its work
        graded = _update_target(contract, kyverno)
        source = "kyverno (offline)" + (f" of `{contract['name']}` alone" if contract.get("name") else "")
        try:
            verdicts = kyverno_offline(spec, graded)
        except InputError as exc:
            if embedded_module("kyverno") is None:
                raise
            # a policy the matcher cannot evaluate (a construct it lacks, a regular expression beyond its
            # bounds) is graded no pass: the verdicts are recorded failed, saying why
            unchecked(checks, "ciso.verdicts", str(exc)[:300])
            verdicts, source = {}, "kyverno (offline: not evaluated)"
        else:
            general_checks(spec, lambda objs: kyverno_offline(spec, graded, objs[0] + objs[1]), checks)
            kept_checks(spec, graded, checks)
        others_checks(spec, kyverno, checks, complete=False)
    elif artifact is not None or opa_result is not None:
        v0 = rego_v0_heads(artifact[1]) if artifact is not None and artifact[0] == "rego" else []
        if v0:  # the prompt asks for Rego v1 (OPA 1.0), which refuses these heads
            problems = [f"the policy is Rego v0: OPA 1.0 refuses the rule head(s) on line(s) "
                        f"{', '.join(map(str, v0[:5]))} (a rule body needs `if`, a partial set rule `contains`)"]
        try:
            verdicts, source = rego_verdicts(spec, artifact[1] if artifact else None, opa_result)
        except RegoRefused as exc:
            # the agent's own policy does not compile or goes over its budget: graded, every verdict failed
            checks.append({"id": "ciso.verdicts", "passed": False, "detail": str(exc)[:600]})
            verdicts = {obj_ref(obj): {"error"} for obj in spec["ciso"]["gaps"] + graded_compliant(spec["ciso"])}
            source = f"rego ({rego_engine()[0]}: not evaluated)"
        if source.endswith("not evaluated)"):
            pass  # the failed verdicts say why
        elif source.startswith("rego"):
            general_checks(spec, lambda objs: rego_verdicts(spec, artifact[1], None, objs)[0], checks)
        else:
            unchecked(checks, "ciso.general", "a recorded `opa eval` result holds no verdicts on the twins; grade "
                      "the .rego itself (--artifact, with OPA or regopy)")
    else:
        if st is None or st.policy_reports is None:
            raise InputError("the policy task needs the agent's artefact (--artifact, --opa-result) or a state "
                             "with `policyReports`")
        graded = graded_policies(contract, st)
        verdicts, reporting = report_verdicts(st.policy_reports, graded)
        # a workload's pods speak for it: a policy on Pods without autogen rules reports the pods it runs
        for obj in spec["ciso"]["gaps"] + spec["ciso"]["compliant"]:
            held = st.objects.get(obj_ref(obj))
            if held is not None and obj.get("kind") in POD_TEMPLATE_KINDS:
                for pod in workload_pods(held, st):
                    got = verdicts.get(obj_ref(pod))
                    if got:
                        verdicts.setdefault(obj_ref(obj), set()).update(got)
        source = "policyReports" + (f" of {', '.join(sorted(graded)) or 'no policy'}" if graded is not None else "")
        if contract.get("artefact") == "kyverno":
            # the graded policies as the state holds them (read back from the cluster)
            cluster = [o for (kind, _, name), o in st.objects.items() if kind in ("ClusterPolicy", "Policy")]
            deployed = [o for o in cluster if (o.get("metadata") or {}).get("name") in reporting | set(graded or ())]
            if st.has("", "ClusterPolicy") or deployed:
                problems = contract_problems(contract, deployed)
                kyverno = [p for p in deployed if isinstance(p.get("spec"), dict)]
                if kyverno:
                    live_general_checks(spec, kyverno, checks)
                    kept_checks(spec, _update_target(contract, kyverno), checks)
                others_checks(spec, cluster, checks, complete=st.has("", "ClusterPolicy"))
            else:
                unchecked(checks, "ciso.contract", "the state holds no ClusterPolicy (capture `/ClusterPolicy`), so "
                          "the graded policy cannot be read back")
            if not any(c["id"] == "ciso.general" for c in checks) and any(
                    (g.get("metadata") or {}).get("name") for g in spec["ciso"]["gaps"]):
                unchecked(checks, "ciso.general", "the state holds no graded Kyverno policy to read back, so its "
                          "verdicts on the gap objects' twins cannot be judged")
    if problems is not None:
        checks.append({"id": "ciso.contract", "passed": not problems,
                       "detail": "; ".join(problems) if problems else "the policy keeps the prompt's contract"})
    score = ciso(spec, verdicts, checks, metrics, gap_only, source)
    if any(c.get("unchecked") for c in checks):
        metrics["unchecked"] = [c["id"] for c in checks if c.get("unchecked")]
    return 0.0 if problems else score


# ---- detection and analysis (docs/evaluator.md, Tasks) ----------------------------------------------------

ANALYSIS_KEYS = ("system_level", "fault_type")


class _Null:
    """An answer file that holds JSON `null`: an answer (graded, and wrong), unlike no answer at all (None)."""

    def __repr__(self):
        return "null"


NULL_ANSWER = _Null()
MAX_ANSWER_TEXT = 200  # characters of an answer's label or time: longer is no label, and is never read further
# the tasks graded on the agent's answer; the others read the cluster's state (or, CISO, the policy)
ANSWER_TASKS = ("diagnose", "detect", "localize", "analyze")
# the word a task's checks begin with in a verdict (`detection.anomaly`): its answer's contract check is WORD.answer
CHECK_WORD = {"diagnose": "diagnosis", "detect": "detection", "localize": "localization", "analyze": "analysis"}


def label_key(text):
    """An analysis label as answers are compared: lower case, each run of spaces, `-`, `/` and `_` one `_`
    ("Operating System", "operating-system" and " operating_system " are one label)."""
    return re.sub(r"[\s_/-]+", "_", text.strip().lower()).strip("_")


def answer_shape(answer, fields, required):
    """Why an answer breaks its contract (None when it keeps it): `fields` maps each key to the types its
    value may have; `required` are the keys it must hold. A string longer than MAX_ANSWER_TEXT is refused."""
    if not isinstance(answer, dict):
        return f"the answer must be a JSON object, not {'null' if answer is NULL_ANSWER else type(answer).__name__}"
    extra = [k for k in answer if k not in fields]
    if extra:
        return "the answer has keys the contract does not: " + ", ".join(shown(str(k), 40) for k in sorted(extra)[:5])
    missing = [k for k in required if k not in answer]
    if missing:
        return "the answer lacks " + ", ".join(f"`{k}`" for k in missing)
    for key, allowed in fields.items():
        if key not in answer:
            continue
        value = answer[key]
        # JSON's true is not a number here, and a number is not a boolean
        if not any(type(value) is t for t in allowed):
            wanted = " or ".join("null" if t is type(None) else {bool: "a boolean", str: "a string"}[t] for t in allowed)
            return f"`{key}` must be {wanted}, not {shown(value, 40)}"
        if isinstance(value, str) and len(value) > MAX_ANSWER_TEXT:
            return f"`{key}` is {len(value):,} characters long: a label or a time is at most {MAX_ANSWER_TEXT}"
    return None


def detect_task(spec, answer, injected_at, checks, metrics, answered_at=None):
    """Is anything wrong: `{"anomaly": true|false, "noticed_at": RFC 3339 | null}`. A control (no fault) passes
    `false` and fails a false alarm; a fault passes `true` noticed after the injection and within the window.
    `answered_at` (POSIX seconds), when the harness saw the answer file appear, bounds the self-reported
    `noticed_at`: nothing is noticed after it is written (the earlier of the two is the detection's time),
    and an answer that appeared after the window is late whatever time it claims."""
    detection = spec["detection"]
    problem = answer_shape(answer, {"anomaly": (bool,), "noticed_at": (str, type(None))}, ("anomaly",))
    if problem is None and answer["anomaly"] is True and answer.get("noticed_at") is None:
        problem = "an anomaly needs `noticed_at`, the time it was noticed (RFC 3339)"
    if problem is None and answer["anomaly"] is False and answer.get("noticed_at") is not None:
        problem = "`noticed_at` is for an anomaly: with `\"anomaly\": false` it is null or left out"
    if problem is not None:
        checks.append({"id": "detection.answer", "passed": False, "detail": problem})
        return 0.0
    said = answer["anomaly"]
    right = said is detection["fault"]
    metrics["detection_correct"] = 1.0 if right else 0.0
    checks.append({"id": "detection.anomaly", "passed": right, "detail": (
        "an anomaly, and there is one" if said and right else "no anomaly, and there is none" if right else
        "a false alarm: nothing is wrong in this scenario" if said else "no anomaly, but a fault was injected")})
    if not (said and detection["fault"]):
        return 1.0 if right else 0.0
    noticed = rfc3339(answer["noticed_at"])
    window = detection["window_seconds"]
    if noticed is None:
        ok, detail = False, f"`noticed_at` {shown(answer['noticed_at'], 40)} is not an RFC 3339 time with a zone"
    else:
        if answered_at is not None:
            noticed = min(noticed, answered_at)
        delay = noticed - injected_at
        metrics["time_to_detect_seconds"] = round(delay, 3)
        ok = 0 <= delay <= window
        detail = (f"noticed {delay:g} s after the injection (within {window:g} s)" if ok else
                  f"noticed {-delay:g} s before the injection" if delay < 0 else
                  f"noticed {delay:g} s after the injection, beyond the {window:g} s window")
        if ok and answered_at is not None and answered_at - injected_at > window:
            ok = False
            detail = (f"the answer appeared {answered_at - injected_at:g} s after the injection, beyond the "
                      f"{window:g} s window (it says it was noticed {delay:g} s after)")
    checks.append({"id": "detection.noticed_at", "passed": ok, "detail": detail})
    return (1.0 + ok) / 2


def analyze_task(spec, answer, checks, metrics):
    """Classify the fault: `{"system_level": ..., "fault_type": ...}` against the scenario's labels, each
    compared by `label_key`."""
    analysis = spec["analysis"]
    problem = answer_shape(answer, {k: (str,) for k in ANALYSIS_KEYS}, ANALYSIS_KEYS)
    if problem is not None:
        checks.append({"id": "analysis.answer", "passed": False, "detail": problem})
        return 0.0
    right = 0
    for key in ANALYSIS_KEYS:
        said, truth = label_key(answer[key]), analysis[key]
        ok = said == truth
        right += ok
        known = said in analysis["vocabulary"][key]
        checks.append({"id": f"analysis.{key}", "passed": ok, "detail": (
            f"{key} {truth}" if ok else f"{key} {shown(answer[key], 40)} is not the right one" if known else
            f"{shown(answer[key], 40)} is not a {key} (one of {', '.join(analysis['vocabulary'][key])})")})
    metrics["analysis_accuracy"] = round(right / len(ANALYSIS_KEYS), 6)
    return right / len(ANALYSIS_KEYS)


def legacy_diagnosis(spec):
    """ITBench's SRE diagnosis file (a bundle without a `tasks` statement: no `answers`): refused (exit 2) when it
    is no JSON, says a key twice or has another shape, one rule for every malformation. Every other answer the
    agent writes (FinOps's, a work folder's) is graded: a fail with the reason, for every malformation."""
    return spec.get("domain") == "sre" and not spec.get("answers")


def diagnosis_problem(output, domain):
    """Why an answer is not a diagnosis (SRE: `entities`, FinOps: `resource`), or None."""
    if not isinstance(output, dict):
        return "the answer must be a JSON object"
    key = "entities" if domain == "sre" else "resource"
    if not isinstance(output.get(key), list):
        return (f"the answer has no `{key}` list: a {'diagnosis' if domain == 'sre' else 'FinOps answer'} "
                f"names {'entities' if domain == 'sre' else 'resources'} (the prompt shows the shape)")
    if len(output[key]) > MAX_ENTITIES:
        return f"the answer names {len(output[key]):,} {key}: at most {MAX_ENTITIES:,} are read"
    if domain == "finops" and not all(isinstance(item, dict) and isinstance(item.get("name"), str)
                                      for item in output[key]):
        return "each `resource` of the answer must be an object with a `name` string (the prompt shows the shape)"
    if domain == "sre":
        if output.get("propagations") is not None and not isinstance(output["propagations"], list):
            return "the answer's `propagations` must be a list"
        if len(output.get("propagations") or []) > MAX_EDGES:
            return f"the answer has {len(output['propagations']):,} propagations: at most {MAX_EDGES:,} are read"
    return None


def localize_task(spec, output, st, checks, metrics):
    """Which components caused the incident: the diagnosis's root causes, the chain reported but not required."""
    problem = diagnosis_problem(output, "sre")
    if problem is not None:
        checks.append({"id": "localization.answer", "passed": False, "detail": problem})
        return 0.0
    found = []
    Diagnosis(spec, st or State(EMPTY_STATE)).evaluate(output, found, metrics)
    root = next(c for c in found if c["id"] == "diagnosis.root_cause")
    checks.append(dict(root, id="localization.root_cause"))
    if root["passed"]:
        return 1.0
    return max(metrics["root_cause_entity_f1"], metrics["root_cause_proximity"])


def unchanged_checks(m, state, checks):
    """A control's mitigation: every object of the topology keeps the fields it was deployed with."""
    for entry in m.get("unchanged", []):
        ref = entry["object"]
        obj = state.get(ref)
        ok = obj is not None and owns(entry["owned"], obj)
        added = fields_added(entry["owned"], obj) if ok else None
        detail = ("deleted" if obj is None else f"changed: {added} added, and nothing was broken" if added
                  else "as deployed" if ok else "changed: nothing was broken")
        ok = ok and not added
        checks.append({"id": f"unchanged.{ref_text(ref)}", "passed": ok, "detail": f"{ref_text(ref)} {detail}"})


# ---- tasks and verdicts ----------------------------------------------------------------------------------


def required_missing(spec, st):
    """What the mitigation reads that the state does not hold (a kind not captured, no alerts)."""
    missing = [f"{ns}/{kind}" for ns, kind in spec["requires"]["kinds"] if not st.has(ns, kind)]
    if spec["requires"]["alerts"] and not st.has_alerts:
        missing.append("alerts (Prometheus /api/v1/alerts)")
    missing.extend(f"probes.{name}" for name in spec["requires"].get("probes", []) if name not in st.probes)
    return missing


def grade(spec, task, output, st, artifact, opa_result, gap_only, injected_at=None, answered_at=None):
    checks, metrics = [], {}
    domain = spec["domain"]
    if task in ANSWER_TASKS and output is MISSING:  # a work folder without this task's answer file
        checks.append({"id": f"{CHECK_WORD[task]}.answer", "passed": False,
                       "detail": f"no {(spec.get('answers') or {}).get(task, 'answer')} was written: the task was "
                                 "not answered"})
        return {"scenario": spec["scenario"], "task": task, "passed": False, "score": 0.0, "metrics": metrics,
                "checks": checks}
    if task in ANSWER_TASKS and isinstance(output, Unreadable):
        checks.append({"id": f"{CHECK_WORD[task]}.answer", "passed": False, "detail": output.reason})
        return {"scenario": spec["scenario"], "task": task, "passed": False, "score": 0.0, "metrics": metrics,
                "checks": checks}
    if task in ANSWER_TASKS and output is None:
        raise InputError(f"the {task} task grades the agent's answer: give --agent-output"
                         + (" (or --task mitigate)" if "mitigate" in spec["tasks"] else ""))
    if task == "detect":
        score = detect_task(spec, output, injected_at, checks, metrics, answered_at)
    elif task == "analyze":
        score = analyze_task(spec, output, checks, metrics)
    elif task == "localize":
        score = localize_task(spec, output, st, checks, metrics)
    elif task == "diagnose":
        problem = diagnosis_problem(output, domain)
        if problem is not None and legacy_diagnosis(spec):
            raise InputError(problem)  # ITBench's SRE diagnosis file: refused for every malformation, as it was
        if problem is not None:  # the agent's answer, of the wrong shape: a fail saying why, never refused
            checks.append({"id": f"{CHECK_WORD[task]}.answer", "passed": False, "detail": problem})
            return {"scenario": spec["scenario"], "task": task, "passed": False, "score": 0.0, "metrics": metrics,
                    "checks": checks}
        if domain == "sre":
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
        vet_probes(spec, st)
        proximity = finops_proximity(spec, st, checks, metrics) if domain == "finops" else None
        mitigation_checks(spec, st, checks)
        unchanged_checks(spec["mitigation"], st, checks)
        if domain == "finops" and "spend" in spec["finops"]:
            finops_spend(spec, st, checks)
            finops_reserved(spec, st, checks)
        healthy = all(c["passed"] for c in checks if not c["id"].startswith("finops.proximity"))
        if proximity is not None:
            score = proximity if healthy else 0.0  # a fix that breaks the service scores nothing
        else:
            score = sum(c["passed"] for c in checks) / len(checks) if checks else 0.0
    else:
        score = policy_task(spec, st, artifact, opa_result, gap_only, checks, metrics)
    if task == "mitigate":
        repair = [c for c in checks if c["id"].startswith(REPAIR_CHECKS)]
        # comparable across domains: what the incident broke that is mended (doing nothing: 0); with no such
        # check (a control, or a fault whose only field change the statement decides), whether the verdict passes
        metrics["repair"] = (round(sum(c["passed"] for c in repair) / len(repair), 6) if repair
                             else float(bool(checks) and all(c["passed"] for c in checks)))
    passed = bool(checks) and all(c["passed"] for c in checks)
    return {"scenario": spec["scenario"], "task": task, "passed": passed, "score": round(score, 6),
            "metrics": metrics, "checks": checks, "score_means": score_means(domain, task)}


# the mitigate checks an incident fails and a fix mends (the others, health and safeguards, hold in a cluster
# left as the fault left it as well): the `repair` metric, 0 for doing nothing in every domain
REPAIR_CHECKS = ("fault.", "fields.", "created.", "mitigation.alert.", "finops.proximity.", "restored.")
SCORE_MEANS = {
    ("sre", "mitigate"): "the fraction of the mitigation checks that pass; health and safeguard checks hold in a "
                         "cluster left as the fault left it, so doing nothing scores above 0: compare runs by "
                         "`passed` or by metrics.repair (the fraction of what the incident broke that is mended, "
                         "0 for doing nothing)",
    ("finops", "mitigate"): "the mean proximity of each measured figure to its optimum, 0 when any other check "
                            "fails; doing nothing leaves the waste, so it scores its proximity (usually 0); "
                            "metrics.repair is the same measure as SRE's",
    ("sre", "diagnose"): "the mean of the root-cause part and the propagation part (docs/evaluator.md)",
    ("finops", "diagnose"): "the F1 of the resources named against the resources the faults made waste",
    "detect": "the fraction of the detection checks passed (the right yes or no, then its time)",
    "localize": "1 when the named root cause is exact, else the larger of its F1 and its proximity in the topology "
                "(a wrong object earns at most 1/2, a missed root cause 0: only the exact answer scores 1)",
    "analyze": "the fraction of the analysis labels right",
    "policy": "the fraction of the policy checks that pass (a broken contract scores 0)",
}


def score_means(domain, task):
    """What a task's score measures, said in the verdict."""
    return SCORE_MEANS.get((domain, task)) or SCORE_MEANS.get(task) or "the fraction of the checks that pass"


def evaluate(spec, agent_output, state, gap_only=False, task=None, artifact=None, opa_result=None,
             injected_at=None, answers=None, indexed=None, answered_at=None):
    """The verdict of one run: of `task`, or of every task the bundle poses (then with `tasks`).

    `agent_output` is the answer of the one task graded on an answer; `answers` ({task: answer}, from the
    agent's work folder) gives each its own, `MISSING` for a file the agent did not write. `injected_at`
    (RFC 3339) is when the fault was injected: the detect task of a scenario with a fault reads it.
    `indexed`, a dict a caller keeps for one spec, holds the states already indexed (the adversarial corpus
    grades one state under several cases)."""
    if agent_output is not None and not isinstance(agent_output, (dict, Unreadable)) and legacy_diagnosis(spec):
        raise InputError("the agent output must be a JSON object")
    if agent_output is not None and not isinstance(agent_output, (dict, Unreadable)) and "answers" not in spec:
        # the agent's answer that is JSON but no object (a list, a number, null): graded, a fail saying why
        agent_output = Unreadable("the answer must be a JSON object, not "
                                  + ("null" if agent_output is NULL_ANSWER else type(agent_output).__name__))
    tasks = spec["tasks"]
    if task is not None and task not in tasks:
        raise InputError(f"this bundle poses {', '.join(tasks)}, not {task}")
    graded = [task] if task is not None else tasks
    read = [t for t in graded if t in ANSWER_TASKS]
    if answers is None and agent_output is not None and len(read) > 1:
        raise InputError(f"{', '.join(read)} each grade their own answer: give the agent's work folder "
                         f"(--agent-output DIR, with {', '.join(spec['answers'][t] for t in read)}) or one --task")
    if "detect" in graded and spec["detection"]["fault"]:
        if injected_at is None:
            raise InputError("the detect task grades when the anomaly was noticed: give --injected-at, the time "
                             "the fault was injected (RFC 3339)")
        injected_at = rfc3339(injected_at)
        if injected_at is None:
            raise InputError("--injected-at must be an RFC 3339 time with a zone (2025-06-01T12:00:00Z)")
    if answered_at is not None:  # the harness's own record: when the detection answer appeared
        answered_at = rfc3339(answered_at)
        if answered_at is None:
            raise InputError("--answered-at must be an RFC 3339 time with a zone (2025-06-01T12:00:00Z)")

    def answer(t):
        if answers is None:
            return agent_output
        given = answers.get(t, MISSING)
        return NULL_ANSWER if given is None else given  # the agent wrote `null`

    st = None
    if state is not None:
        known = indexed.get(id(state)) if indexed is not None else None
        if known is None or known[0] is not state:
            known = (state, State(state, kind_groups(spec)))
            if indexed is not None:
                indexed[id(state)] = known
        st = known[1]
    if task is not None:
        return grade(spec, task, answer(task), st, artifact, opa_result, gap_only, injected_at, answered_at)
    verdicts = {t: grade(spec, t, answer(t), st, artifact, opa_result, gap_only, injected_at, answered_at)
                for t in tasks}
    if len(verdicts) == 1:
        return verdicts[tasks[0]]
    return {"scenario": spec["scenario"], "task": "+".join(tasks),
            "passed": all(v["passed"] for v in verdicts.values()),
            "score": round(sum(v["score"] for v in verdicts.values()) / len(verdicts), 6),
            "metrics": {f"{t}.score": v["score"] for t, v in verdicts.items()},
            "checks": [dict(c, id=f"{t}.{c['id']}") for t, v in verdicts.items() for c in v["checks"]],
            "tasks": verdicts}


# ---- capturing a state ------------------------------------------------------------------------------------


def resource_names(spec):
    """{namespace: [kubectl resource names]} of what the state must hold ("" for cluster-scoped)."""
    groups = kind_groups(spec)
    out = {}
    for namespace, kind in spec["requires"]["kinds"]:
        group = groups.get(kind, "")
        out.setdefault(namespace, []).append(kind_plural(kind) + (f".{group}" if group else ""))
    return {ns: sorted(set(names)) for ns, names in sorted(out.items())}


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
    for name in spec["requires"].get("probes", []):  # each result goes into the state's `probes`, by name
        commands.append(" ".join(_quoted(part) for part in probe_command(spec["probes"][name])))
    return {"scenario": spec["scenario"], "tasks": spec["tasks"],
            "captured": [f"{ns}/{kind}" for ns, kind in spec["requires"]["kinds"]],
            "alerts": spec["requires"]["alerts"], "policyReports": spec["requires"]["policy_reports"],
            **({"probes": list(spec["requires"]["probes"])} if spec["requires"].get("probes") else {}),
            "commands": commands,
            **({"fixed_at": "when the agent's work ended, RFC 3339 (`--capture --fixed-at TIME`): a container that "
                            "restarts from then on fails the fix; without it, any failed last termination does"}
               if "mitigate" in spec["tasks"] else {}),
            **({"gradedPolicies": "the Kyverno policies the agent deployed (those not in the cluster before it): "
                                  "capture once before the agent and give that file to `--capture --before "
                                  "BEFORE.json`, or name them (`--graded-policies NAME,...`); a state that does not "
                                  "say is refused, as a policy already there would answer for the agent"}
               if "policy" in spec["tasks"] and not ((spec.get("ciso") or {}).get("contract") or {}).get("name") else {}),
            "note": "`python evaluator.py --capture state.json [--prometheus URL] [--fixed-at TIME] [--before "
                    "BEFORE.json]` runs these commands and writes the state with its `captured` list"}


POLICY_KINDS = ("ClusterPolicy", "Policy")  # the Kyverno policies a run tells apart before and after the agent


def policies_added(before, after):
    """The names of the Kyverno policies of the state `after` that the state `before` (captured before the agent)
    does not hold, by kind, namespace and name: the agent's own, as `itbench run` records them."""
    def held(state, what):
        items = ((state or {}).get("resources") or {}).get("items") if isinstance(state, dict) else None
        if not isinstance(items, list):
            raise InputError(f"the {what} holds no `resources.items` to read the Kyverno policies from")
        return {(o.get("kind"), (o.get("metadata") or {}).get("namespace"), (o.get("metadata") or {}).get("name"))
                for o in items if isinstance(o, dict) and o.get("kind") in POLICY_KINDS
                and isinstance(o.get("metadata"), dict)}

    return sorted({name for _, _, name in held(after, "state") - held(before, "--before state") if name})


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
    if spec["requires"].get("probes"):
        state["probes"] = {name: run_probe(spec["probes"][name], kubectl, timeout, items)
                           for name in spec["requires"]["probes"]}
    return state


def probe_command(probe, kubectl="kubectl"):
    """The kubectl command that runs a probe in one pod of its workload (docs/evaluator.md, probes)."""
    workload = probe["workload"]
    return [kubectl, "exec", "-n", probe["namespace"], f"{workload['kind'].lower()}/{workload['name']}",
            "-c", probe["container"], "--", *probe["command"]]


def _quoted(part):
    return part if re.fullmatch(r"[A-Za-z0-9_./:=@-]+", part) else "'" + part.replace("'", "'\\''") + "'"


MAX_PROBE_OUTPUT = 1024 * 1024  # of each stream a captured probe keeps


def run_probe(probe, kubectl="kubectl", timeout=120, items=None):
    """A probe's result, `{exit_code, stdout, stderr}`: a command that cannot run is a failed result, not a
    missing one (the predicates then say why). Given the captured objects (`items`), it runs in the first ready
    pod that is the workload's own (workload_pod_refusal) and records it (`pod`), never in another pod that
    merely carries the workload's labels."""
    command = probe_command(probe, kubectl)
    pod = None
    if items is not None:
        workload = next((o for o in items if o.get("kind") == probe["workload"]["kind"]
                         and (o.get("metadata") or {}).get("name") == probe["workload"]["name"]
                         and (o.get("metadata") or {}).get("namespace") == probe["namespace"]), None)
        own = sorted(str(o["metadata"].get("name")) for o in items if workload is not None
                     and o.get("kind") == "Pod" and (o.get("metadata") or {}).get("namespace") == probe["namespace"]
                     and not terminating(o) and pod_ready(o) and workload_pod_refusal(workload, o) is None)
        if own:
            pod = own[0]
            command = command[:4] + [f"pod/{pod}"] + command[5:]
        elif workload is not None and any(o.get("kind") == "Pod" and (o.get("metadata") or {}).get("namespace")
                                          == probe["namespace"] for o in items):
            return {"exit_code": -1, "stdout": "", "stderr": f"the probe cannot run: {probe['workload']['kind']} "
                    f"{probe['workload']['name']} has no ready pod of its own"}
    try:
        proc = subprocess.run(command, capture_output=True, timeout=timeout, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return {"exit_code": -1, "stdout": "", "stderr": f"cannot run {' '.join(command[:6])}: {exc}"}
    return {"exit_code": proc.returncode,
            "stdout": proc.stdout[:MAX_PROBE_OUTPUT].decode("utf-8", "replace"),
            "stderr": proc.stderr[:MAX_PROBE_OUTPUT].decode("utf-8", "replace"), **({"pod": pod} if pod else {})}


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
    """The text of the regular file `path`, as the commands read their inputs: a FIFO, a device or a folder
    is refused without reading it (opening a FIFO does not wait for a writer, /dev/zero is never read), and
    so is a file over MAX_INPUT_BYTES (checked again on what was read: a file that grows while read)."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        raise InputError(f"cannot read the {what} {path}: {exc.strerror or exc}")
    try:
        with os.fdopen(fd, "rb") as handle:
            info = os.fstat(handle.fileno())
            if not stat.S_ISREG(info.st_mode):
                raise InputError(f"the {what} {path} is not a regular file")
            if info.st_size > MAX_INPUT_BYTES:
                raise InputError(f"the {what} {path} is {info.st_size:,} bytes: the limit is {MAX_INPUT_BYTES:,}")
            data = handle.read(MAX_INPUT_BYTES + 1)
    except OSError as exc:
        raise InputError(f"cannot read the {what} {path}: {exc.strerror or exc}")
    if len(data) > MAX_INPUT_BYTES:
        raise InputError(f"the {what} {path} is over the limit of {MAX_INPUT_BYTES:,} bytes")
    try:
        return data.decode("utf-8-sig")  # a byte order mark, as some editors write, is no content
    except UnicodeDecodeError as exc:
        raise InputError(f"cannot read the {what} {path}: {exc}")


def _unique_keys(pairs):
    """A JSON object whose keys are unique. Parsers disagree on a key given twice (most keep the last, some
    the first), so an answer or a state holding one says two things: it is refused, never read one way."""
    out = {}
    for key, value in pairs:
        if key in out:
            raise ValueError(f"the key {json.dumps(key)[:80]} is given twice in one object")
        out[key] = value
    return out


def loads(text):
    """JSON text as the evaluator reads every input: keys unique (_unique_keys), integers of any length."""
    return json.loads(text, object_pairs_hook=_unique_keys, parse_int=json_int)


def _load_json(path, what):
    text = _read(path, what)
    try:
        return loads(text)
    except (ValueError, RecursionError) as exc:
        raise InputError(f"the {what} {path} is not valid JSON: {str(exc)[:200]}")


class Unreadable:
    """An answer file the agent wrote that is not JSON (or says a key twice): its task fails with the
    reason, as an answer that breaks its contract does; it is the agent's answer, not an unusable input."""

    def __init__(self, reason):
        self.reason = reason

    def __repr__(self):
        return "unreadable"


def _load_answer(path, what):
    text = _read(path, what)  # a file that cannot be read at all is refused
    try:
        return loads(text)
    except (ValueError, RecursionError) as exc:
        return Unreadable(f"the {what} is not valid JSON: {str(exc)[:200]}")


def _load_artifact(path):
    text = _read(path, "artefact")
    if path.endswith(".rego"):
        return ("rego", text)
    try:
        data = json.loads(text, parse_int=json_int)
        docs = data if isinstance(data, list) else [data]
    except RecursionError:
        return ("unreadable", "the artefact is nested too deeply to be read")
    except ValueError:
        reader = embedded_module("yaml")
        if reader is None:
            raise InputError(f"the artefact {path} is not JSON, and this evaluator has no YAML reader: convert it "
                             "with `yq -o json`")
        try:
            docs = reader.load_all(text)
        except reader.YAMLSubsetError as exc:
            # the agent's answer, graded (a fail saying why), never refused as an unusable input
            return ("unreadable", f"the artefact cannot be read as JSON or YAML: {exc}")
        except RecursionError:
            return ("unreadable", "the artefact is nested too deeply to be read")
    return ("kyverno", docs)


def _load_answers(spec, folder):
    """{task: answer} from the agent's work folder, `MISSING` for a file the agent did not write."""
    files = spec.get("answers")
    if not files:
        raise InputError("this bundle grades one answer file: give it with --agent-output (not a folder)")
    out = {}
    root = os.path.realpath(folder)
    for task, name in files.items():
        path = os.path.join(folder, name)
        if not os.path.lexists(path):
            out[task] = MISSING
            continue
        target = os.path.realpath(path)
        if target != root and not target.startswith(root.rstrip(os.sep) + os.sep):
            # read through, a link out of the folder would grade whatever it leads to (a file still being
            # written, the bundle's own truth): the agent's answer is a file it wrote in its folder
            out[task] = Unreadable(f"the {task} answer {name} is a link to {shown(_link_text(path), 120)}, outside "
                                   "the agent's folder: an answer is a file the agent wrote there")
            continue
        try:  # a FIFO, a device, a folder or a file too large is refused by _read, never waited on or read
            out[task] = _load_answer(path, f"{task} answer")  # null: None
        except InputError as exc:  # the agent's answer, unusable: its task fails with the reason, the others are graded
            out[task] = Unreadable(str(exc))
    return out


def _link_text(path):
    try:
        return os.readlink(path)
    except OSError:
        return path


def main(spec, argv=None):
    parser = argparse.ArgumentParser(description=f"Evaluate a run of scenario {spec['scenario']} (tasks: "
                                                 f"{', '.join(spec['tasks'])}).")
    parser.add_argument("--task", choices=spec["tasks"], help="grade this task only (default: every task the bundle poses)")
    parser.add_argument("--agent-output", help="the agent's answer (JSON): what the diagnose task grades; or the "
                        "agent's work folder, where each task graded on an answer reads its own file")
    parser.add_argument("--injected-at", help="when the fault was injected (RFC 3339): what detect times against")
    parser.add_argument("--answered-at", help="when the harness saw the detection answer appear (RFC 3339): "
                        "nothing is noticed after it is written")
    parser.add_argument("--state", help="the state snapshot (JSON): what the mitigate task grades")
    parser.add_argument("--artifact", help="CISO: the agent's policy (Kyverno JSON/YAML or .rego)")
    parser.add_argument("--opa-result", help="CISO Rego: a recorded `opa eval` result per object")
    parser.add_argument("--opa", metavar="PATH", help=f"CISO Rego: the OPA v1 binary that grades the policy (default: "
                        f"${OPA_VARIABLE}, else `opa` on PATH, else regopy; `none`: regopy)")
    parser.add_argument("--gap-only", action="store_true", help="CISO: also report ITBench's gap-only rule as a metric")
    parser.add_argument("--requirements", action="store_true", help="print what a state must hold and how to capture it")
    parser.add_argument("--capture", metavar="FILE", help="capture the state from the current cluster into FILE")
    parser.add_argument("--prometheus", help="with --capture: the Prometheus URL to read the firing alerts from")
    parser.add_argument("--kubectl", default="kubectl", help="with --capture: the kubectl to run")
    parser.add_argument("--fixed-at", help="with --capture: when the agent's work ended (RFC 3339), kept in the state "
                        "as `fixed_at`: restarts from then on are restarts under the fix")
    parser.add_argument("--before", metavar="FILE", help="with --capture, CISO: a state captured before the agent; "
                        "the Kyverno policies it does not hold are the agent's (`gradedPolicies`)")
    parser.add_argument("--graded-policies", metavar="NAMES", help="with --capture, CISO: the agent's policies, "
                        "comma-separated (`gradedPolicies`)")
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:
        return 2 if exc.code else 0
    global OPA_OPTION
    OPA_OPTION = args.opa
    try:
        if args.requirements:
            print(json.dumps(requirements(spec), indent=2))
            return 0
        if args.capture:
            if args.fixed_at is not None and rfc3339(args.fixed_at) is None:
                raise InputError(f"--fixed-at {args.fixed_at!r} is not an RFC 3339 time with a zone")
            if args.before is not None and args.graded_policies is not None:
                raise InputError("give --before or --graded-policies, not both")
            before = _load_json(args.before, "--before state") if args.before is not None else None
            state = capture(spec, args.kubectl, args.prometheus)
            if args.fixed_at is not None:
                state["fixed_at"] = args.fixed_at
            if before is not None:
                state["gradedPolicies"] = policies_added(before, state)
            elif args.graded_policies is not None:
                state["gradedPolicies"] = sorted({n.strip() for n in args.graded_policies.split(",") if n.strip()})
            with open(args.capture, "w", encoding="utf-8") as handle:
                json.dump(state, handle)
            print(f"evaluator: wrote {args.capture} ({len(state['resources']['items'])} objects)", file=sys.stderr)
            return 0
        answers = None
        if args.agent_output and os.path.isdir(args.agent_output):
            answers = _load_answers(spec, args.agent_output)
            output = None
        else:
            # an answer the agent wrote that is no JSON, or says a key twice, fails its task with the reason;
            # ITBench's SRE diagnosis file is refused, as it was
            load = _load_json if legacy_diagnosis(spec) else _load_answer
            output = load(args.agent_output, "agent output") if args.agent_output else None
            if args.agent_output and output is None:
                output = NULL_ANSWER  # a file that holds `null` is an answer, and not a JSON object
        state = _load_json(args.state, "state") if args.state else None
        artifact = _load_artifact(args.artifact) if args.artifact else None
        opa = _load_json(args.opa_result, "recorded opa result") if args.opa_result else None
        verdict = evaluate(spec, output, state, gap_only=args.gap_only, task=args.task, artifact=artifact,
                           opa_result=opa, injected_at=args.injected_at, answers=answers,
                           answered_at=args.answered_at)
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
