"""Fault injection and revert: the manifests that apply a scenario's faults and undo them.

Faults are applied in order to a working copy of the topology, so two faults on one object
compose into one patched object. Revert restores every changed object to its topology
form and deletes every object a fault created.
"""

from __future__ import annotations

import copy
import dataclasses

from .. import ciso, ir
from . import ciso as ciso_backend
from ..faults.base import find_object
from ..faults.declared import exec_steps as exec_steps_of
from ..faults.declared import patch_manifest
from ..memo import IdentityMemo
from .manifests import render_object


def _key(obj) -> tuple:
    if isinstance(obj, dict):
        meta = obj["metadata"]
        return (obj["apiVersion"], obj["kind"], meta.get("namespace"), meta["name"])
    rendered = render_object(obj)
    return (rendered["apiVersion"], rendered["kind"], rendered["metadata"].get("namespace"), rendered["metadata"]["name"])


def _replace(topology: ir.Topology, obj) -> None:
    for pool in (topology.workloads, topology.services, topology.configmaps, topology.secrets, topology.autoscalers,
                 topology.ingresses):
        for index, existing in enumerate(pool):
            if type(existing) is type(obj) and existing.name == obj.name and existing.namespace == obj.namespace:
                pool[index] = obj
                return


def plan(scenario: ir.Scenario) -> tuple[list[dict], list[ir.ObjectRef], list[dict], list[ir.ObjectRef]]:
    """(inject apply, inject delete, revert apply, revert delete), computed once per scenario object
    (the bundle's files, the evaluator's spec and the derived states all need it; do not mutate it)."""
    return _plan_memo(scenario)


def _plan(scenario: ir.Scenario) -> tuple[list[dict], list[ir.ObjectRef], list[dict], list[ir.ObjectRef]]:
    # Faults deep-copy the objects they change; the working topology only needs its own lists.
    working = copy.copy(scenario.topology)
    for pool in ("workloads", "services", "configmaps", "secrets", "autoscalers", "ingresses"):
        setattr(working, pool, list(getattr(working, pool)))
    inject_apply: dict[tuple, dict] = {}
    inject_delete: list[ir.ObjectRef] = []
    revert_apply: dict[tuple, dict] = {}
    revert_delete: list[ir.ObjectRef] = []
    # A declared kind's patches (faults/declared.py) change the target's manifest, not its IR object: they are
    # kept per object and applied again over what a later Python fault renders for it, so faults compose.
    declared: dict[tuple, list[ir.Injection]] = {}
    made_by: dict[tuple, ir.Injection] = {}  # what each object the faults apply -> the first fault that applies it
    for injection in scenario.injections():
        kind = injection.kind
        spec = kind.declared
        if spec is not None and spec.patches:
            key = _key(injection.target.itbench())
            base = inject_apply.get(key)
            if base is None:
                base = render_object(find_object(working, injection.target))
            inject_apply[key] = patch_manifest(spec, injection, base)
            declared.setdefault(key, []).append(injection)
            # the rest of what it does: the objects it creates (its patched target is the one above)
            whole = kind.inject(injection, working)
            effect = dataclasses.replace(whole, apply=[o for o in whole.apply if not (isinstance(o, dict)
                                                                                       and _key(o) == key)])
        else:
            effect = kind.inject(injection, working)
        for obj in effect.apply if effect is not None else ():
            if not isinstance(obj, dict):
                _replace(working, obj)
            rendered = render_object(obj)
            for earlier in declared.get(_key(obj), ()):
                rendered = patch_manifest(earlier.kind.declared, earlier, rendered)
            inject_apply[_key(obj)] = rendered
            made_by.setdefault(_key(obj), injection)
        inject_delete.extend(r for r in (effect.delete if effect is not None else ()) if r not in inject_delete)
        undo = kind.revert(injection, scenario.topology)
        for obj in undo.apply:
            revert_apply.setdefault(_key(obj), render_object(obj))
        revert_delete.extend(r for r in undo.delete if r not in revert_delete)
    if scenario.compliance is not None:
        # A CISO scenario's "fault" is the policy gap: the violating objects are deployed by the injection
        # and removed by the revert, as ITBench's fault_inject/fault_remove tasks do.
        for obj in gap_objects(scenario):
            rendered = render_object(obj)
            inject_apply[_key(rendered)] = rendered
        # a catalogue control's violating objects are finished manifests (itbench_dsl/ciso)
        for rendered in ciso_backend.k8s_objects(scenario)[0]:
            inject_apply[_key(rendered)] = rendered
        for ref in scenario.compliance.gaps:
            # a host control's gap is an inventory group: its Ansible plays open and close it, not a manifest
            if ref not in revert_delete and ref.kind != ciso.HOST_KIND:
                revert_delete.append(ref)
    if scenario.compliance is None and inject_apply:
        from .manifests import topology_manifests

        manifests = topology_manifests(scenario.topology, provided=True)
        existing = {_key(o): o for o in manifests}
        common = common_labels(scenario.topology)
        for key, obj in inject_apply.items():
            if key not in existing:  # an object the faults create
                _wear(obj, common.get(key[2], {}))
                creator = made_by.get(key)
                related = existing.get(_key(creator.target.itbench())) if creator is not None else None
                _wear(obj, per_object_labels(scenario.topology, key[2], related, key[3]))
    return list(inject_apply.values()), inject_delete, list(revert_apply.values()), revert_delete


def _label_census(topology: ir.Topology) -> tuple[dict, dict, dict]:
    """Namespace (None: cluster-scoped) -> {(label key, value): objects carrying it}; namespace -> the
    application's objects there; namespace -> {label key: objects whose value of it is their own name}."""
    from .manifests import topology_manifests

    counts: dict[str | None, dict[tuple[str, str], int]] = {}
    totals: dict[str | None, int] = {}
    own_named: dict[str | None, dict[str, int]] = {}
    for obj in topology_manifests(topology):
        meta = obj.get("metadata") or {}
        where = meta.get("namespace") if obj.get("kind") != "Namespace" else None
        totals[where] = totals.get(where, 0) + 1
        for key, value in (meta.get("labels") or {}).items():
            pair = (str(key), str(value))
            counts.setdefault(where, {})[pair] = counts.setdefault(where, {}).get(pair, 0) + 1
            if str(value) == str(meta.get("name")):
                own_named.setdefault(where, {})[str(key)] = own_named.setdefault(where, {}).get(str(key), 0) + 1
    return counts, totals, own_named


_label_census_memo = IdentityMemo(_label_census, size=16)


def _most_common(topology: ir.Topology, majority: bool) -> dict[str | None, dict[str, str]]:
    """Namespace -> each label key's most common value there (the first in order on a tie); with `majority`,
    only values more than half of the namespace's objects carry."""
    counts, totals, _ = _label_census_memo(topology)
    out: dict[str | None, dict[str, str]] = {}
    for where, pairs in counts.items():
        best: dict[str, tuple[int, str]] = {}
        for (key, value), n in sorted(pairs.items()):
            if (not majority or n * 2 > totals[where]) and n > best.get(key, (0, ""))[0]:
                best[key] = (n, value)
        out[where] = {key: value for key, (_, value) in sorted(best.items())}
    return out


def common_labels(topology: ir.Topology) -> dict[str | None, dict[str, str]]:
    """Namespace (None: cluster-scoped) -> the labels more than half of the application's objects there carry
    (`app.kubernetes.io/version`, `part-of`), each with its most common value. An object a fault creates wears
    them too: without them, `kubectl get -l app.kubernetes.io/part-of!=...` would list the fault's objects."""
    return _most_common(topology, majority=True)


def per_object_labels(topology: ir.Topology, namespace: str | None, related: dict | None,
                      name: str | None = None) -> dict[str, str]:
    """The labels more than half of the application's objects in `namespace` carry, each with a value of its
    own (`app.kubernetes.io/component`, `app.kubernetes.io/name`, `io.kompose.service`: no value is shared by
    most, so common_labels leaves them out). An object a fault creates wears them: an object without the
    `component` label every object of the application has is the fault's, whatever its name. The value: the
    object's own `name` where most of the application's objects carrying the key hold their own name in it
    (otel-demo's `opentelemetry.io/name`: a created object labelled with its target's name would be the one
    object whose label is not its name); else that of `related` (the fault's target, when it is in that
    namespace and carries it); else the namespace's most common value."""
    keys = shared_label_keys(topology).get(namespace, set())
    counts, _, own_named = _label_census_memo(topology)
    carriers: dict[str, int] = {}
    for (key, _), n in counts.get(namespace, {}).items():
        carriers[key] = carriers.get(key, 0) + n
    if related is None or (related.get("metadata") or {}).get("namespace") != namespace:
        related = None
    own = ((related or {}).get("metadata") or {}).get("labels") or {}
    fallback = _most_common(topology, majority=False).get(namespace, {})
    out = {}
    for key in sorted(keys):
        if name is not None and own_named.get(namespace, {}).get(key, 0) * 2 > carriers.get(key, 0):
            out[key] = name
        elif key in own:
            out[key] = str(own[key])
        elif key in fallback:
            out[key] = fallback[key]
    return out


def shared_label_keys(topology: ir.Topology) -> dict[str | None, set[str]]:
    """Namespace (None: cluster-scoped) -> the label keys more than half of the application's objects there
    carry, whatever their values: what an object that belongs there is expected to carry (agent_view.py
    flags an object a fault creates without them)."""
    counts, totals, _ = _label_census_memo(topology)
    out: dict[str | None, set[str]] = {}
    for where, pairs in counts.items():
        keys: dict[str, int] = {}
        for (key, _), n in pairs.items():
            keys[key] = keys.get(key, 0) + n
        out[where] = {k for k, n in keys.items() if n * 2 > totals[where]}
    return out


def _wear(obj: dict, labels: dict[str, str]) -> None:
    """Give a created object the labels it lacks of `labels` (its own keep their values)."""
    if not labels or not isinstance(obj.get("metadata"), dict):
        return
    own = obj["metadata"].get("labels") or {}
    missing = {k: v for k, v in labels.items() if k not in own}
    if missing:
        obj["metadata"]["labels"] = {**own, **missing}


def exec_steps(scenario: ir.Scenario) -> tuple[list[dict], list[dict]]:
    """The commands the injection runs in pods, in fault order, and the revert's, in reverse order
    (`inject/exec.json`, `revert/exec.json`; docs/fault-kinds.md). Empty when no fault has an `exec`."""
    inject, revert = [], []
    for injection in scenario.injections():
        spec = injection.kind.declared
        steps = exec_steps_of(spec, injection) if spec is not None else None
        if steps is not None:
            inject.append({"fault": injection.fault, **steps[0]})
            revert.append({"fault": injection.fault, **steps[1]})
    return inject, list(reversed(revert))


def recreated(scenario: ir.Scenario) -> list[ir.ObjectRef]:
    """The targets the injection deletes and creates again changed, and the revert deletes and creates again as
    they were (`inject/recreate.yaml`, `revert/recreate.yaml`): those of declared kinds that say `recreate` for
    their kind, whose changed fields the API server refuses on update (docs/fault-kinds.md)."""
    from ..topology import KINDS

    out: list[ir.ObjectRef] = []
    for injection in scenario.injections():
        spec = injection.kind.declared
        kinds = {KINDS[k][1] for k in spec.recreate if k in KINDS} if spec is not None else set()
        if injection.target.kind in kinds and injection.target not in out:
            out.append(injection.target)
    return out


def gap_objects(scenario: ir.Scenario) -> list:
    """The topology objects that open a CISO scenario's policy gap."""
    if scenario.compliance is None:
        return []
    gaps = {(r.kind, r.namespace, r.name) for r in scenario.compliance.gaps}
    out = []
    for pool in (scenario.topology.workloads, scenario.topology.services, scenario.topology.configmaps,
                 scenario.topology.secrets, scenario.topology.service_accounts, scenario.topology.autoscalers):
        for obj in pool:
            rendered = render_object(obj)
            if (rendered["kind"], rendered["metadata"].get("namespace"), rendered["metadata"]["name"]) in gaps:
                out.append(obj)
    return out


def delete_manifest(ref: ir.ObjectRef) -> dict:
    meta = {"name": ref.name}
    if ref.namespace:
        meta["namespace"] = ref.namespace
    return {"apiVersion": ref.api_version, "kind": ref.kind, "metadata": meta}


_plan_memo = IdentityMemo(_plan, size=16)
