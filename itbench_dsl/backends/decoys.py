"""Decoys: harmless objects of the application of the kinds faults create (docs/fault-kinds.md, "Decoys").

A fault that creates the only NetworkPolicy (ResourceQuota, AuthorizationPolicy) of its
namespace is found by listing that kind, however well it is named (W2018, `agent_view.lone_kinds`); and if only
the scenarios whose fault is a quota had quotas, their presence would say the fault. So every incident scenario
gives each namespace of its application that runs workloads a few objects of each of these kinds (the Istio
ones where the namespace is in the mesh), each for another of its components, made so that they change
nothing a cluster does:

- NetworkPolicy: admits every connection into one component's pods (`ingress: [{}]`): a policy that admits
  everything isolates nothing;
- ResourceQuota: a count ten times (at least 100) what the namespace holds of pods (the most its workloads
  run, autoscalers at their maximum), ConfigMaps, Secrets or Services; never a compute resource (a cpu or
  memory quota would refuse pods that declare no requests);
- AuthorizationPolicy: `ALLOW` with a rule every request matches, for one component.

A decoy is never put on a component where a fault's object of its kind would lose its effect (an allow-all
beside a deny-all would undo it). No PeerAuthentication is made: Istio lets the oldest of a workload's policies
win, so one the application held would shadow the policy an agent adds to a workload as its fix. Decoys are application objects:
in its derived states and in the evaluator's known objects, named and labelled
as an object a fault creates is (`faults.base.NAME_WORDS`, `per_object_labels`), every decoy of a kind with one
word: where a fault creates objects of the kind, in their style (`<component>-<the fault's object's suffix>`),
else a word chosen by a hash of the namespace and the kind. Each kind lists OBJECTS_PER_KIND objects, the
fault's included, so that neither the number nor the style of the names singles out the fault's kind. The injection creates them
beside the fault's objects, in name order (backends/cover.py), so they are as old as the fault's; the revert
deletes them with what else the injection created.
"""

from __future__ import annotations

import hashlib
import re

from .. import ir
from ..faults.base import NAME_WORDS
from ..runtime.state import as_template, selector_matches
from .faults import _key, common_labels, per_object_labels, plan
from .manifests import provided_namespaces, topology_manifests

DECOYS_PER_KIND = 2
# the objects of each decoy kind a namespace holds after the injection, the fault's included: the decoys make up
# the number, so that no kind has more than the others where the fault creates one
OBJECTS_PER_KIND = DECOYS_PER_KIND + 1
WORKLOAD_KINDS = frozenset({"Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Pod", "Job", "CronJob"})
# what a decoy quota counts (never a compute resource: a cpu or memory quota would refuse pods that declare no
# requests), with what it is compared to: "Pod" is the most pods the workloads run (_running_pods)
QUOTA_COUNTS = (("pods", "Pod"), ("count/configmaps", "ConfigMap"), ("count/secrets", "Secret"),
                ("services", "Service"))


def _group(api_version: str) -> str:
    return api_version.rpartition("/")[0] if "/" in api_version else ""


def _pod_labels(workload: dict) -> dict:
    template = (as_template(workload).get("spec") or {}).get("template") or {}
    return (template.get("metadata") or {}).get("labels") or {}


def _network_policy(component: dict, index: int, counts: dict) -> dict | None:
    labels = _pod_labels(component)
    if not labels:
        return None
    return {"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
            "spec": {"podSelector": {"matchLabels": dict(labels)}, "policyTypes": ["Ingress"], "ingress": [{}]}}


def _resource_quota(component: dict, index: int, counts: dict) -> dict:
    resource, kind = QUOTA_COUNTS[index % len(QUOTA_COUNTS)]
    return {"apiVersion": "v1", "kind": "ResourceQuota",
            "spec": {"hard": {resource: str(max(100, 10 * counts.get(kind, 0)))}}}


def _authorization_policy(component: dict, index: int, counts: dict) -> dict | None:
    labels = _pod_labels(component)
    if not labels:
        return None
    return {"apiVersion": "security.istio.io/v1", "kind": "AuthorizationPolicy",
            "spec": {"selector": {"matchLabels": dict(labels)}, "action": "ALLOW", "rules": [{}]}}


def harmless(obj: dict) -> bool:
    """Whether `obj` is made as a decoy is (the recipes above): what reads a bundle's files tells the decoys the
    injection creates from the fault's objects by this (agent_view.lone_kinds)."""
    spec = obj.get("spec") or {}
    kind = obj.get("kind")
    if kind == "NetworkPolicy":
        return spec.get("ingress") == [{}] and spec.get("policyTypes") == ["Ingress"] and "egress" not in spec
    if kind == "ResourceQuota":
        hard = spec.get("hard") or {}
        counts = {resource for resource, _ in QUOTA_COUNTS}
        return bool(hard) and set(hard) <= counts and all(str(v).isdigit() and int(v) >= 100 for v in hard.values()) \
            and not spec.get("scopes") and not spec.get("scopeSelector")
    if kind == "AuthorizationPolicy":
        return spec.get("action", "ALLOW") == "ALLOW" and spec.get("rules") == [{}] and "targetRef" not in spec \
            and "targetRefs" not in spec
    return False


def _isolates(fault: dict, labels: dict) -> bool:
    """A NetworkPolicy of the fault's that selects these pods: an allow-all beside it would undo it (policies add up)."""
    return selector_matches((fault.get("spec") or {}).get("podSelector") or {}, labels)


def _allows(fault: dict, labels: dict) -> bool:
    """An ALLOW AuthorizationPolicy of the fault's that applies to these pods (by its selector, or to the whole
    namespace without one): an allow-all beside it would undo the deny-by-default it brings. DENY, CUSTOM and
    AUDIT policies are evaluated before any ALLOW, and one attached by `targetRef(s)` acts on what it names."""
    spec = fault.get("spec") or {}
    if (spec.get("action") or "ALLOW") != "ALLOW" or spec.get("targetRef") or spec.get("targetRefs"):
        return False
    selector = spec.get("selector")
    return selector is None or selector_matches(selector, labels)


def _never(fault: dict, labels: dict) -> bool:
    return False


# (API group, kind) -> (how to make a harmless one for a component, None where it cannot carry one; whether an
# object of the fault's of that kind acts on the component's pods so that a decoy there would change its effect)
RECIPES = {
    ("networking.k8s.io", "NetworkPolicy"): (_network_policy, _isolates),
    ("", "ResourceQuota"): (_resource_quota, _never),
    ("security.istio.io", "AuthorizationPolicy"): (_authorization_policy, _allows),
}


MESH_LABELS = ("istio.io/dataplane-mode", "istio-injection", "istio.io/rev")  # a namespace in an Istio mesh


def _meshed(namespace: dict) -> bool:
    labels = (namespace.get("metadata") or {}).get("labels") or {}
    return any(key in labels and labels[key] not in ("none", "disabled") for key in MESH_LABELS)


def _running_pods(topology: list[dict], autoscalers: list, namespace: str) -> int:
    """The most pods the namespace's workloads run: each workload's replicas, or its autoscaler's maximum (a
    DaemonSet counted for ten nodes); what a decoy quota must leave room for many times over."""
    most = {(a.target.kind, a.target.name): a.max_replicas for a in autoscalers if a.namespace == namespace}
    total = 0
    for o in topology:
        meta = o.get("metadata") or {}
        if o.get("kind") not in WORKLOAD_KINDS or meta.get("namespace") != namespace:
            continue
        spec = o.get("spec") or {}
        replicas = 10 if o["kind"] == "DaemonSet" else 1 if o["kind"] in ("Pod", "Job", "CronJob") else \
            spec.get("replicas", 1) if isinstance(spec.get("replicas", 1), int) else 1
        total += max(replicas, most.get((o["kind"], meta.get("name")), 0))
    return total


def decoys(scenario: ir.Scenario) -> list[dict]:
    """The decoys of an incident scenario, in a stable order: in each namespace of the application that runs
    workloads (not the cluster's own), for each kind of the recipe table the namespace has none of (the
    Istio kinds where the namespace is in the mesh), up to DECOYS_PER_KIND objects, each for another
    component, chosen by a hash of the application's namespace and the kind. Every scenario of an application
    gets the same ones, whatever its fault, so that their presence says nothing of the fault; only a
    component where a fault's object of the kind would lose its effect is passed over (`interferes`)."""
    if scenario.compliance is not None:
        return []
    topology = topology_manifests(scenario.topology, provided=True)
    inject_apply = plan(scenario)[0]
    keys = {_key(o) for o in topology}
    created = [o for o in inject_apply if _key(o) not in keys]
    present = {(_group(str(o.get("apiVersion", ""))), o.get("kind"), (o.get("metadata") or {}).get("namespace"))
               for o in topology}
    taken = {((o.get("metadata") or {}).get("namespace"), (o.get("metadata") or {}).get("name"))
             for o in [*topology, *inject_apply]}
    common = common_labels(scenario.topology)
    unowned = provided_namespaces(scenario.topology)  # the cluster's: nothing of the application is deployed there
    namespaces = [o for o in topology if o.get("kind") == "Namespace" and o["metadata"]["name"] not in unowned]
    out: list[dict] = []
    for namespace_obj in namespaces:
        namespace = namespace_obj["metadata"]["name"]
        workloads = sorted((o for o in topology if o.get("kind") in WORKLOAD_KINDS
                            and (o.get("metadata") or {}).get("namespace") == namespace),
                           key=lambda o: (str(o["kind"]), str(o["metadata"]["name"])))
        if not workloads:
            continue
        counts: dict[str, int] = {"Pod": _running_pods(topology, scenario.topology.autoscalers, namespace)}
        for o in topology:
            if (o.get("metadata") or {}).get("namespace") == namespace and o.get("kind") != "Pod":
                counts[o.get("kind")] = counts.get(o.get("kind"), 0) + 1
        for (group, kind), (recipe, interferes) in RECIPES.items():
            if (group, kind, namespace) in present or (group == "security.istio.io" and not _meshed(namespace_obj)):
                continue
            faults = [o for o in created if o.get("kind") == kind and (o.get("metadata") or {}).get("namespace") == namespace]
            components = [o for o in workloads if not any(interferes(f, _pod_labels(o)) for f in faults)]
            if not components:
                continue
            seed = int(hashlib.sha256(f"{namespace}/{group}/{kind}".encode()).hexdigest(), 16)
            start = seed % len(components)
            made = 0
            # as many objects of the kind in every scenario, the fault's among them: a kind with one more than the
            # others would say the fault's kind
            wanted = max(0, OBJECTS_PER_KIND - len(faults))
            # one style per kind, the fault's where it creates one: a kind whose names alone share a suffix would too
            suffix = _suffix([str(f["metadata"]["name"]) for f in faults], workloads) or \
                NAME_WORDS[int(hashlib.sha256(f"{namespace}/{kind}".encode()).hexdigest(), 16) % len(NAME_WORDS)]
            for component in components[start:] + components[:start]:
                if made == wanted:
                    break
                decoy = recipe(component, made, counts)
                if decoy is None or suffix and (namespace, _styled(str(component["metadata"]["name"]), suffix)) in taken:
                    continue  # where the fault's style gives a taken name, another component gets the decoy
                word_seed = int(hashlib.sha256(f"{namespace}/{kind}/{component['metadata']['name']}".encode()).hexdigest(), 16)
                name = _styled(str(component["metadata"]["name"]), suffix) if suffix else \
                    _name(str(component["metadata"]["name"]), namespace, word_seed, taken)
                taken.add((namespace, name))
                labels = {**common.get(namespace, {}),
                          **per_object_labels(scenario.topology, namespace, component, name)}
                out.append({"apiVersion": decoy["apiVersion"], "kind": decoy["kind"],
                            "metadata": {"name": name, "namespace": namespace, **({"labels": labels} if labels else {})},
                            "spec": decoy["spec"]})
                made += 1
    return out


def _suffix(names: list[str], workloads: list[dict]) -> str | None:
    """The naming style of a fault's objects of a kind: what follows the component its (first) name starts with
    (`main` of `prometheus-main`), else its last word (`quota` of `memory-quota`); None without such an object.
    Decoys named `<component>-<that>` leave no odd name out (names.txt of the decoy audit)."""
    if not names:
        return None
    name = sorted(names)[0]
    suffix = name.rpartition("-")[2]
    # the component may hold digits (`reviews-v2`); what follows it is the style
    for component in sorted((str(w["metadata"]["name"]) for w in workloads), key=len, reverse=True):
        if name.startswith(component + "-") and len(name) > len(component) + 1:
            suffix = name[len(component) + 1:]
            break
    # a number, a hash: a style not worth copying
    return suffix if re.fullmatch(r"[a-z]+(-[a-z]+)*", suffix) else None


def _styled(component: str, suffix: str) -> str:
    return f"{component[:62 - len(suffix)].rstrip('-.')}-{suffix}"


def _name(component: str, namespace: str, seed: int, taken: set) -> str:
    """`<component>-<word>`, as a fault's created object is named (faults.base.application_name), the word
    chosen by the hash; a number where every word is taken."""
    words = list(NAME_WORDS)
    start = seed % len(words)
    for word in words[start:] + words[:start]:
        name = f"{component[:62 - len(word)].rstrip('-.')}-{word}"
        if (namespace, name) not in taken:
            return name
    return next(f"{component[:58]}-{n}" for n in range(2, len(taken) + 3) if (namespace, f"{component[:58]}-{n}") not in taken)


def application_manifests(scenario: ir.Scenario, provided: bool = False) -> list[dict]:
    """What the cluster holds of the application before the injection (`manifests/topology.yaml`): the topology's
    objects but a CISO gap's (deployed by the injection) and a catalogue control's compliant objects. The decoys
    are not there: the injection creates them (backends/cover.py). `provided`: with what the cluster provides
    (manifests.topology_manifests), as the derived states hold it."""
    from . import ciso as ciso_backend
    from .faults import gap_objects

    gaps = [id(o) for o in gap_objects(scenario)]
    return topology_manifests(scenario.topology, exclude=gaps, provided=provided) + ciso_backend.k8s_objects(scenario)[1]
