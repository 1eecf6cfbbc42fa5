"""What the injection writes beyond the faults, so that the newest write does not single out the fault's object.

Whoever sorts a namespace's objects by what the API server records of each write (managedFields times,
resourceVersion, generation, a Deployment's newest ReplicaSet, creationTimestamp) finds the last object written;
if the injection wrote only the fault's objects, that is the answer. So `inject/apply.yaml` (`inject_manifests`)
holds, beside the faults' objects (backends/faults.plan):

- cover writes: where a fault changes an object of the application, every object of its kind in its namespace is
  applied again with the same change of one annotation (COVER_ANNOTATION, set to COVER_STAMP): on the pod template
  of a Deployment, StatefulSet or DaemonSet, as `kubectl rollout restart` does (each gets a new generation and a
  new ReplicaSet or revision, its pods are replaced), on the object's own metadata for every other kind (a new
  resourceVersion and managedFields time for each). The one field manager (run/lifecycle.FIELD_MANAGER) applies
  each whole, as deployed, so nothing else of it changes. A namespace whose pods a fault's object would refuse
  or starve when started again (a ResourceQuota or LimitRange it creates, a ConfigMap, Secret or claim it
  deletes that a workload names) gets no workload restart;
- the decoys (backends/decoys.py), created beside the fault's objects;

each group of objects of one kind in one namespace (the fault's and the others) in name order, where the fault's
first one was, so that the order of the writes says nothing either.

The faults' plan, the evaluator and the revert do not see them: the revert applies the fault's object as
deployed (the manager then drops the annotation of it alone, after the agent) and deletes the decoys with what
else the injection created; the annotation left on the others is what a `rollout restart` leaves, which no
verdict takes for a change (analysis/corpus.py grades states that hold it).
"""

from __future__ import annotations

import copy
import json

from .. import ir
from .decoys import application_manifests, decoys
from .faults import _key, plan

COVER_ANNOTATION = "kubectl.kubernetes.io/restartedAt"  # kubectl's own, from `kubectl rollout restart`
# the annotation's value: kubectl writes the time of the restart; a bundle is the same whenever it is compiled
COVER_STAMP = "2026-01-01T00:00:00Z"
TEMPLATE_KINDS = ("Deployment", "StatefulSet", "DaemonSet")  # a restart is a pod template change
# what an object a fault creates may do to pods started again in its namespace (a restart of every workload)
_ADMISSION_KINDS = ("ResourceQuota", "LimitRange")
_NEEDED_KINDS = ("ConfigMap", "Secret", "PersistentVolumeClaim")


def _group(key: tuple) -> tuple:
    """(API group, kind, namespace): the objects a cover write spreads over."""
    api_version, kind, namespace, _ = key
    return (api_version.rpartition("/")[0], kind, namespace)


def _stamped(obj: dict) -> dict:
    out = copy.deepcopy(obj)
    if out.get("kind") in TEMPLATE_KINDS and isinstance((out.get("spec") or {}).get("template"), dict):
        meta = out["spec"]["template"].setdefault("metadata", {})
    else:
        meta = out.setdefault("metadata", {})
    meta["annotations"] = {**(meta.get("annotations") or {}), COVER_ANNOTATION: COVER_STAMP}
    return out


def _restart_unsafe(namespace: str | None, faults: list[dict], deleted: list[ir.ObjectRef], workload: dict) -> bool:
    """Whether starting `workload`'s pods again would meet a fault's effect: a quota or limit a fault creates in
    its namespace, or a ConfigMap, Secret or claim the injection deletes that its pod template names."""
    if any(o.get("kind") in _ADMISSION_KINDS and (o.get("metadata") or {}).get("namespace") == namespace
           for o in faults):
        return True
    template = json.dumps((workload.get("spec") or {}).get("template") or {})
    return any(r.kind in _NEEDED_KINDS and r.namespace == namespace and json.dumps(r.name) in template
               for r in deleted)


def inject_manifests(scenario: ir.Scenario) -> list[dict]:
    """`inject/apply.yaml`: the faults' objects (faults.plan), the cover writes and the decoys (module doc)."""
    inject_apply, inject_delete, _, _ = plan(scenario)
    if scenario.compliance is not None:
        return list(inject_apply)
    deployed = application_manifests(scenario)
    known = {_key(o): o for o in deployed}
    faults = [o for o in inject_apply if _key(o) not in known]
    out: dict[tuple, dict] = {_key(o): o for o in inject_apply}
    covered: set[tuple] = set()
    for key in [k for k in out if k in known]:  # an object of the application a fault changes
        group = _group(key)
        if group in covered:
            continue
        covered.add(group)
        peers = [k for k, o in known.items() if _group(k) == group]
        if group[1] in TEMPLATE_KINDS and any(_restart_unsafe(group[2], faults, inject_delete, known[k]) for k in peers):
            continue
        for peer in peers:
            out[peer] = _stamped(out.get(peer, known[peer]))
    for decoy in decoys(scenario):
        out.setdefault(_key(decoy), decoy)
    return _ordered(list(out.values()), [_key(o) for o in inject_apply])


def _ordered(objects: list[dict], first: list[tuple]) -> list[dict]:
    """`objects` with each (group, kind, namespace)'s objects in name order, at the place of its first object in
    the faults' order (`first`; a group the faults do not write comes after, in the order given)."""
    rank = {}
    for key in first:
        rank.setdefault(_group(key), len(rank))
    groups: dict[tuple, list[dict]] = {}
    for obj in objects:
        groups.setdefault(_group(_key(obj)), []).append(obj)
    order = sorted(groups, key=lambda g: rank.get(g, len(rank)))  # stable: the others keep their order
    return [o for g in order for o in sorted(groups[g], key=lambda o: str(o["metadata"]["name"]))]
