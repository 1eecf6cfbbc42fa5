"""Offline state snapshots of a scenario, and the self-validation of its evaluator.

From what the compiler emits (the topology manifests and the fault plan of backends/faults.py),
three snapshots in the evaluator's state format are derived, with no cluster:

* healthy: the topology as a cluster would report it once it settled: workloads with their
  status (every replica ready), one Running, Ready pod per replica, and no alert firing;
* faulty: after the injection: patched objects replaced, created objects added, deleted objects
  removed; the workloads a fault keeps from running get pods that are not ready (or none), and
  the scenario's expected alerts fire, labelled with the namespace and name of their target;
* solved: the faulty state after the revert manifests are applied: what a right fix achieves
  (the scenario's solutions, replayed by solutions.py, must reach a state that passes as well).

A scenario's probes (commands run in pods, which no manifest shows) give the results they declare:
their `healthy` result on the healthy and solved states, their `faulty` one on the faulty state
(and on a settled state while a fault still holds; an exec fault holds until its revert command ran).

The state format (docs/evaluator.md): `{"resources": {"kind": "List", "items": [...]},
"captured": ["<namespace>/<Kind>", ...], "alerts": {Prometheus /api/v1/alerts}, "policyReports":
[...], "costs": {...}}`. Everything is deterministic: pod names come from a hash of the pod
template, timestamps are fixed.

`corpus.self_validate` grades the scenario's adversarial corpus (corpus.py: these states, and states and
answers derived from them) with its evaluator (runtime.evaluator.evaluate on
backends/evaluator.evaluator_spec); `settle` gives the state a cluster settles into from changed
manifests (a replayed solution, solutions.py).
"""

from __future__ import annotations

import base64
import copy
import fnmatch
import hashlib
import json
from dataclasses import dataclass, field

from .. import ir
from ..memo import IdentityMemo, copy_data

TIMESTAMP = "2026-01-01T00:00:00Z"
NODE = "itbench-worker"
# Kubernetes' own alphabet for generated names (no vowels, no look-alike characters)
_SAFE = "bcdfghjklmnpqrstvwxz2456789"

_WORKLOAD_KINDS = ("Deployment", "StatefulSet")


# ---- the three states ----------------------------------------------------------------------------------


@dataclass
class Objects:
    """The manifests of a scenario's three moments, before any status: what `derive` renders, and what
    the adversarial corpus (corpus.py) changes before rendering its own states."""

    healthy: dict[tuple, dict]
    faulty: dict[tuple, dict]
    solved: dict[tuple, dict]
    effects: dict  # workload key -> (readiness effect, replicas before the fault), on the faulty state
    static: set[tuple]  # the static pods' mirror pods
    captured: list[str]  # `<namespace>/<Kind>` the states hold (what the evaluator reads)
    # the probes' results (`probes` of the state, name -> {exit_code, stdout, stderr}): what each declared
    # probe gives on the healthy application, and with the faults injected (the probe's `healthy`, `faulty`)
    probes: dict = field(default_factory=dict)
    faulty_probes: dict = field(default_factory=dict)
    # workload key -> the ConfigMaps and Secrets its restarted pods need (`_needs`): a pod a waiter starts
    # again while one of them is gone cannot start (its volume cannot mount, its env cannot be read)
    needs: dict = field(default_factory=dict)


def objects(scenario: ir.Scenario) -> Objects:
    from ..backends import faults as fault_backend
    from ..backends import manifests as manifest_backend
    from ..backends.cover import inject_manifests
    from ..backends.decoys import application_manifests
    from ..render import static_pod_name

    topology = application_manifests(scenario, provided=True)
    topology += manifest_backend.scenario_agent_access(scenario)  # deployed with the topology (manifests/agent-access.yaml)
    _, inject_delete, revert_apply, revert_delete = fault_backend.plan(scenario)

    # what the revert applies is each object's healthy form (a fault may know what the installation sets
    # beyond the topology, such as a mesh's namespace label)
    index = _index(topology)
    healthy = _apply(index, [o for o in revert_apply if _key(o) in index], [])
    # what the injection applies: the faults' objects, the cover writes and the decoys (backends/cover.py)
    injected = _apply(healthy, inject_manifests(scenario), inject_delete)
    faulty = _scaled(injected, scenario)
    # objects the fault deleted come back with the revert; keep the healthy order where it can be kept
    solved = _reorder(_apply(injected, revert_apply, revert_delete), healthy)
    # static pods' mirror pods: the kubelet runs them, so they are Running in every state
    static = {("Pod", w.namespace, static_pod_name(w)) for w in scenario.topology.workloads
              if w.kind == "Pod"}
    healthy_probes, faulty_probes = probe_results(scenario)
    return Objects(healthy, faulty, solved, _fault_effects(scenario), static, captured_kinds(scenario),
                   healthy_probes, faulty_probes, _needs(scenario, healthy))


def _scaled(objects: dict[tuple, dict], scenario: ir.Scenario) -> dict[tuple, dict]:
    """The faulty manifests with the replicas a `wait after scale` step sets: the fault's scale-out is part of
    the state it leaves (a quota then refuses the new pods)."""
    out = dict(objects)
    for group in scenario.faults:
        for waiter in group.waiters:
            key = (waiter.target.kind, waiter.target.namespace, waiter.target.name)
            if waiter.kind == "scale" and waiter.when == "after" and key in out and "replicas" in waiter.args:
                obj = copy.copy(out[key])
                obj["spec"] = {**obj.get("spec", {}), "replicas": int(waiter.args["replicas"])}
                out[key] = obj
    return out


def _utilization_targets(hpa: dict) -> list:
    return [((m.get("resource") or {}).get("target") or {}).get("averageUtilization")
            for m in (hpa.get("spec") or {}).get("metrics") or [] if isinstance(m, dict)]


def _autoscaled(manifests: dict[tuple, dict], healthy: dict[tuple, dict]) -> dict[tuple, dict]:
    """`manifests` with the replicas their autoscalers give: a workload whose HorizontalPodAutoscaler targets a
    lower utilisation than the healthy one runs at the autoscaler's maxReplicas (a target below what the
    pods use idle keeps it scaled out); every other workload keeps its replicas (the healthy state's load)."""
    out = None
    for key, hpa in manifests.items():
        if key[0] != "HorizontalPodAutoscaler" or key not in healthy:
            continue
        lowered = [t is not None and h is not None and t < h
                   for t, h in zip(_utilization_targets(hpa), _utilization_targets(healthy[key]))]
        ref = (hpa.get("spec") or {}).get("scaleTargetRef") or {}
        target = (ref.get("kind"), key[1], ref.get("name"))
        maximum = (hpa.get("spec") or {}).get("maxReplicas")
        if not any(lowered) or target not in manifests or not isinstance(maximum, int):
            continue
        out = dict(manifests) if out is None else out
        obj = copy.copy(out[target])
        obj["spec"] = {**obj.get("spec", {}), "replicas": maximum}
        out[target] = obj
    return manifests if out is None else out


def _needs(scenario: ir.Scenario, healthy: dict[tuple, dict]) -> dict[tuple, frozenset]:
    """Workload key -> the ConfigMaps and Secrets of the healthy topology its pods mount or read (not
    `optional`), for the workloads whose pods a waiter starts again (`restart`, `delete_pods`, a namespace's
    `redeploy`). A running pod keeps what it mounted when a ConfigMap goes; a new one waits for it."""
    restarted = {(w.target.kind, w.target.namespace, w.target.name) for g in scenario.faults for w in g.waiters
                 if w.kind in ("restart", "delete_pods")}
    redeployed = {w.target.name for g in scenario.faults for w in g.waiters if w.kind == "redeploy"}
    out = {}
    for key, obj in healthy.items():
        if key[0] not in _WORKLOAD_KINDS or (key not in restarted and key[1] not in redeployed):
            continue
        needed = {(kind, key[1], name) for kind, name in _config_refs(obj)} & set(healthy)
        if needed:
            out[key] = frozenset(needed)
    return out


def _waits(key: tuple, obj: dict, manifests: dict[tuple, dict], found: Objects) -> bool:
    """Whether a workload's new pods wait for a ConfigMap or Secret that `manifests` do not hold: pods a waiter
    restarted (`found.needs`), and those of a template that names other ones than its healthy template (its
    pods roll out again), need what their template names now; one the cluster provides (named by the healthy
    template, not in the topology) is there."""
    healthy = found.healthy.get(key)
    before = {(kind, key[1], name) for kind, name in _config_refs(healthy)} if healthy is not None else set()
    now = {(kind, key[1], name) for kind, name in _config_refs(obj)}
    if key not in found.needs and now == before:
        return False
    return any(k not in manifests and (k in found.healthy or k not in before) for k in now)


def _config_refs(workload: dict) -> set[tuple[str, str]]:
    """(kind, name) of each ConfigMap and Secret a workload's pod template needs to start."""
    from ..runtime.state import pod_references

    return {(kind, name) for kind, name in pod_references(workload.get("spec", {}).get("template"))
            if kind in ("ConfigMap", "Secret")}


def probe_results(scenario: ir.Scenario) -> tuple[dict, dict]:
    """The results of the scenario's probes on the healthy application and with its faults injected, by name
    (a probe that says no `faulty` result gives its healthy one; one that says no `healthy` result is left out:
    the checker refuses a mitigation that reads it)."""
    healthy = {p.name: dict(p.healthy) for p in scenario.probes if p.healthy is not None}
    faulty = {p.name: dict(p.faulty if p.faulty is not None else p.healthy) for p in scenario.probes
              if p.healthy is not None}
    return healthy, faulty if scenario.injections() else dict(healthy)


def derive(scenario: ir.Scenario) -> dict[str, dict]:
    """{"healthy", "faulty", "solved"} state snapshots of a checked scenario.

    The snapshots share unchanged objects with the manifest backend's memo: treat them as read-only
    (serialise them, or deep-copy before changing anything)."""
    found = objects(scenario)
    return {
        "healthy": render(found.healthy, found),
        "faulty": render(found.faulty, found, found.effects, _alerts(scenario, found.faulty), found.faulty_probes),
        "solved": render(found.solved, found),
    }


def render(manifests: dict[tuple, dict], found: Objects, effects: dict | None = None,
           alerts: list[dict] | None = None, probes: dict | None = None) -> dict:
    """A state snapshot of `manifests`: workloads with their status and pods (those in `effects` not
    ready as the fault leaves them, every other one ready), the given alerts firing, the probes giving
    `probes` (default: their healthy results; a state of manifests the faults still hold passes
    `found.faulty_probes`)."""
    effects = dict(effects or {})
    manifests = _autoscaled(manifests, found.healthy)
    for key, obj in manifests.items():  # restarted pods wait for what is gone
        if key[0] in _WORKLOAD_KINDS and key not in effects and _waits(key, obj, manifests, found):
            effects[key] = ("config", 0)
    state = _state(manifests, effects, alerts or [], found.static, found.captured)
    results = found.probes if probes is None else probes
    if results:  # only a scenario with probes has the key: the others' states keep their bytes
        state["probes"] = copy.deepcopy(results)
    return state


def captured_kinds(scenario: ir.Scenario) -> list[str]:
    """What a capture of the scenario's state holds (`<namespace>/<Kind>`): what its evaluator reads."""
    from ..backends.evaluator import evaluator_spec

    return [f"{ns}/{kind}" for ns, kind in evaluator_spec(scenario)["requires"]["kinds"]]


def _key(obj: dict) -> tuple:
    meta = obj.get("metadata", {})
    return (obj.get("kind"), meta.get("namespace"), meta.get("name"))


def _index(objects: list[dict]) -> dict[tuple, dict]:
    return {_key(o): o for o in objects}


def _apply(objects: dict[tuple, dict], apply: list[dict], delete: list[ir.ObjectRef]) -> dict[tuple, dict]:
    out = dict(objects)
    for obj in apply:
        out[_key(obj)] = obj  # replaces in place (dict order kept) or appends
    for ref in delete:
        out.pop((ref.kind, ref.namespace, ref.name), None)
    return out


def _reorder(objects: dict[tuple, dict], reference: dict[tuple, dict]) -> dict[tuple, dict]:
    ordered = {k: objects[k] for k in reference if k in objects}
    ordered.update((k, v) for k, v in objects.items() if k not in ordered)
    return ordered


def _fault_effects(scenario: ir.Scenario, only: set[int] | None = None) -> dict[tuple, tuple[str, int]]:
    """(kind, namespace, name) of a workload -> (its readiness effect, its replicas before the fault), for
    every injection (or the injections whose indexes are in `only`)."""
    from ..faults.base import find_object

    effects: dict[tuple, tuple[str, int]] = {}
    for index, injection in enumerate(scenario.injections()):
        if only is not None and index not in only:
            continue
        effect = injection.kind.pod_effect(injection.args)  # faults.base.POD_EFFECTS
        target = injection.target
        if not effect or target.kind not in (*_WORKLOAD_KINDS, "Pod"):  # a bare pod's effect is its own
            continue
        try:
            replicas = find_object(scenario.topology, target).replicas
        except KeyError:
            replicas = 1
        if effect == "absent" and not _recreated(scenario, target):
            effect = "absent-new"  # its running pods stay: the quota counted them
        effects[(target.kind, target.namespace, target.name)] = (effect, replicas)
    return effects


def _recreated(scenario: ir.Scenario, target: ir.ObjectRef) -> bool:
    """Whether a waiter's restart deletes the workload's running pods before their replacements are admitted
    (a StatefulSet's or a `Recreate` Deployment's rollout; a rolling Deployment keeps its old pods while a
    new one is refused)."""
    from ..faults.base import find_object

    restarted = any((w.kind in ("restart", "delete_pods") and (w.target.kind, w.target.namespace, w.target.name)
                     == (target.kind, target.namespace, target.name))
                    or (w.kind == "redeploy" and w.target.name == target.namespace)
                    for g in scenario.faults for w in g.waiters)
    if not restarted:
        return False
    if any(w.kind == "delete_pods" and w.target.name == target.name for g in scenario.faults for w in g.waiters):
        return True
    try:
        workload = find_object(scenario.topology, target)
    except KeyError:
        return True
    return target.kind == "StatefulSet" or getattr(workload, "strategy", None) == "Recreate"


def settle(scenario: ir.Scenario, manifests: dict[tuple, dict], found: Objects, spec: dict,
           undone_execs: frozenset = frozenset()) -> dict:
    """The state a cluster settles into from `manifests` (the faulty state changed by an agent, or by a
    replayed solution): a fault's effect on its workload's pods, its alerts and the probes' faulty results
    last while anything it did is still there (an object it created that acts on its own, a field it
    changed still at the fault's value, an object it deleted still missing, a command it ran in a pod
    whose revert command was not run: `undone_execs` holds the indexes of the injections whose was)."""
    holding = {i for i in range(len(scenario.injections())) if _still_there(i, manifests, spec, scenario, undone_execs)}
    alerts = _alerts(scenario, manifests) if holding else []
    return render(manifests, found, _fault_effects(scenario, holding), alerts,
                  found.faulty_probes if holding else found.probes)


def exec_injections(scenario: ir.Scenario) -> dict[int, dict]:
    """The injections that run a command in a pod (a declared kind's `exec`), by index: their revert step
    (namespace, workload, container, command), as `revert/exec.json` lists it."""
    from ..faults.declared import exec_steps

    out = {}
    for index, injection in enumerate(scenario.injections()):
        kind = injection.kind
        steps = exec_steps(kind.declared, injection) if kind.declared is not None else None
        if steps is not None:
            out[index] = steps[1]
    return out


def _still_there(index: int, manifests: dict, spec: dict, scenario: ir.Scenario | None = None,
                 undone_execs: frozenset = frozenset()) -> bool:
    """Whether the injection's fault still holds in `manifests` (its parts, as the evaluator spec lists them:
    all of them undone undoes it, or any one for a fault undone by any; a command run in a pod is undone
    by its revert command only)."""
    from ..runtime.evaluator import acts
    from ..runtime.state import at, decoded_secret, empty, MISSING, owns

    m = spec["mitigation"]
    fault = m["faults"][index]
    parts: list[bool] = []  # per part: still there
    if scenario is not None and index in exec_injections(scenario):
        parts.append(index not in undone_execs)
    for ref in fault["created"]:
        obj = manifests.get((ref["kind"], ref["namespace"], ref["name"]))
        parts.append(obj is not None and acts(obj))
    for entry in fault["fields"]:
        key = (entry["object"]["kind"], entry["object"]["namespace"], entry["object"]["name"])
        obj = manifests.get(key)
        if obj is None:
            continue
        obj = decoded_secret(obj) if obj.get("kind") == "Secret" else obj
        for change in entry["changes"]:
            observed = at(obj, change["path"])
            faulty = change.get("faulty")
            if faulty is None:  # the fault removed it: it is there while it is still missing
                parts.append(observed is MISSING or empty(observed))
            else:
                parts.append(observed is not MISSING and owns(faulty, observed))
    if any((r["object"]["kind"], r["object"]["namespace"], r["object"]["name"]) not in manifests
           for r in m["restored"]):
        parts.append(True)
    if not parts:
        return False
    return all(parts) if fault["undone_by"] == "any" else any(parts)


def _alerts(scenario: ir.Scenario, objects: dict[tuple, dict]) -> list[dict]:
    """The scenario's expected alerts, firing, and the alerts its mitigation waits for (`alert X not
    firing`) that its faults are known to raise (ITBench's fault library), on the fault's target."""
    from ..faults import library_alerts

    out: list[dict] = []
    seen: set[tuple] = set()

    def fire(name: str, target: ir.ObjectRef) -> None:
        resource = target.name
        if target.kind == "Pod":  # a pod pattern: a pod of the state it matches, as Prometheus would name it
            resource = next((p for p in _pod_names(objects) if fnmatch.fnmatchcase(p, target.name)), target.name)
        labels = {"alertname": name, "severity": "warning"}
        if target.namespace:
            labels["namespace"] = target.namespace
        labels[target.kind.lower()] = resource
        key = tuple(sorted(labels.items()))
        if key in seen:
            return
        seen.add(key)
        out.append({"labels": labels, "annotations": {"summary": f"{name} on {target.kind} {resource}"},
                    "state": "firing", "activeAt": TIMESTAMP, "value": "1e+00"})

    for alert in scenario.alerts:
        fire(alert.name, alert.target)
    raised = {a for i in scenario.injections() for a in library_alerts(i.kind)}
    first_target = scenario.injections()[0].target if scenario.injections() else None
    if scenario.mitigation is not None and first_target is not None:
        expected = {a.name for a in scenario.alerts}
        for predicate in scenario.mitigation.predicates:
            if predicate.kind == "alert" and predicate.firing is False and predicate.alert in raised \
                    and predicate.alert not in expected:
                fire(predicate.alert, first_target)
    return out


def _pod_names(objects: dict[tuple, dict]) -> list[str]:
    return [k[2] for k in objects if k[0] == "Pod"]


def _state(objects: dict[tuple, dict], effects: dict, alerts: list[dict], static: set[tuple],
           captured: list[str]) -> dict:
    items: list[dict] = []
    pods: list[dict] = []
    storage = _storage_status(objects)
    for key, obj in objects.items():
        if key[0] == "Secret":
            obj = as_served(obj)
        if key in storage:
            obj = {**obj, "status": storage[key]}
        if key[0] in _WORKLOAD_KINDS:
            effect, original = effects.get(key, ("", 0))
            # a running workload of a shared application object is the same from scenario to scenario
            workload, workload_pods = _running(obj) if effect == "" else _run_workload(obj, effect, original)
            items.append(workload)
            pods.extend(workload_pods)
        elif key[0] in _COMPLETING_KINDS:
            items.append(_run_job(obj, effects.get(key, ("", 0))[0]))
        elif key in static:  # a static pod's mirror pod, running, owned by its node
            node = obj.get("spec", {}).get("nodeName", NODE)
            owner = {"apiVersion": "v1", "kind": "Node", "name": node, "uid": _uid(f"node/{node}"), "controller": True}
            meta = {**obj["metadata"], "ownerReferences": [owner]}
            pods.append({**obj, "metadata": meta, "status": _pod_status(obj.get("spec", {}), "")})
        elif key[0] == "Pod":  # a bare pod: no controller, the kubelet reports its status as the fault leaves it
            pods.append({**obj, "status": _pod_status(obj.get("spec", {}), effects.get(key, ("", 0))[0])})
        else:
            items.append(obj)
    items.extend(pods)
    return {
        "resources": {"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""}, "items": items},
        "captured": captured,
        "alerts": {"status": "success", "data": {"alerts": alerts}},
        "policyReports": [],
        "costs": {},
    }


def _storage_status(objects: dict[tuple, dict]) -> dict[tuple, dict]:
    """The status the volume controllers give claims and volumes that say none: a claim a workload of the state
    mounts, or one bound by name to a volume there, is `Bound` (`Lost` when the volume it names is gone,
    `Pending` when nothing uses it, as a WaitForFirstConsumer class leaves it); a volume a claim binds (or
    whose `claimRef` names a claim there) is `Bound`, another `Available`."""
    claims = {k: o for k, o in objects.items() if k[0] == "PersistentVolumeClaim"}
    volumes = {k[2]: o for k, o in objects.items() if k[0] == "PersistentVolume"}
    if not claims and not volumes:
        return {}
    mounted = set()
    for key, obj in objects.items():
        if key[0] in (*_WORKLOAD_KINDS, "Pod"):  # a workload's pod template, or a pod's own spec
            spec = obj.get("spec") or {}
            pod = spec if key[0] == "Pod" else (spec.get("template") or {}).get("spec") or {}
            for volume in pod.get("volumes") or []:
                claim = (volume.get("persistentVolumeClaim") or {}).get("claimName")
                if claim:
                    mounted.add(("PersistentVolumeClaim", key[1], claim))
            for template in (obj.get("spec") or {}).get("volumeClaimTemplates") or []:
                name = (template.get("metadata") or {}).get("name")
                replicas = int((obj.get("spec") or {}).get("replicas", 1))
                mounted.update(("PersistentVolumeClaim", key[1], f"{name}-{key[2]}-{i}") for i in range(replicas))
    out: dict[tuple, dict] = {}
    bound_volumes = set()
    for key, claim in claims.items():
        if "status" in claim:
            continue
        spec = claim.get("spec") or {}
        volume = spec.get("volumeName")
        if volume and volume not in volumes:
            out[key] = {"phase": "Lost"}
            continue
        if volume:
            bound_volumes.add(volume)
        if volume or key in mounted:
            requested = ((spec.get("resources") or {}).get("requests") or {}).get("storage")
            out[key] = {"phase": "Bound", "accessModes": list(spec.get("accessModes") or []),
                        **({"capacity": {"storage": requested}} if requested else {})}
        else:
            out[key] = {"phase": "Pending"}
    for key, volume in objects.items():
        if key[0] != "PersistentVolume" or "status" in volume:
            continue
        ref = (volume.get("spec") or {}).get("claimRef") or {}
        named = ("PersistentVolumeClaim", ref.get("namespace"), ref.get("name")) in claims
        out[key] = {"phase": "Bound" if key[2] in bound_volumes or named else "Available"}
    return out


def as_served(secret: dict) -> dict:
    """A Secret as the API server returns it: `stringData` is write-only, folded into base64 `data`."""
    if "stringData" not in secret:
        return secret
    data = dict(secret.get("data") or {})
    for key, value in secret["stringData"].items():
        data[key] = base64.b64encode(str(value).encode("utf-8")).decode("ascii")
    return {**{k: v for k, v in secret.items() if k != "stringData"}, "data": data}


# ---- workloads and their pods ----------------------------------------------------------------------------


def _hash(text: str, length: int) -> str:
    digest = hashlib.sha256(text.encode("utf-8")).digest()
    return "".join(_SAFE[b % len(_SAFE)] for b in digest[:length])


def _run_workload(obj: dict, effect: str, original_replicas: int) -> tuple[dict, list[dict]]:
    """The workload with the status a cluster reports, and its pods."""
    spec = obj.get("spec", {})
    replicas = int(spec.get("replicas", 1))
    template = spec.get("template", {})
    meta = obj["metadata"]
    template_hash = _hash(json.dumps(template, sort_keys=True), 10)
    # a quota admits the pods that ran when it was made: the ones beyond that count are never created
    created = min(replicas, original_replicas) if effect == "absent-new" else 0 if effect == "absent" else replicas
    pods = []
    ready = 0
    for index in range(created):
        pod_effect = effect
        if effect == "pending-new":
            pod_effect = "pending" if index >= original_replicas else ""
        elif effect == "absent-new":
            pod_effect = ""
        if obj["kind"] == "StatefulSet":
            name = f"{meta['name']}-{index}"
        else:
            name = f"{meta['name']}-{template_hash}-{_hash(f'{template_hash}/{index}', 5)}"
        pod = _pod(obj, name, template, template_hash, pod_effect)
        pods.append(pod)
        ready += pod_effect == ""
    status = {"observedGeneration": 1, "replicas": created, "readyReplicas": ready, "availableReplicas": ready}
    if obj["kind"] == "Deployment":
        status["updatedReplicas"] = created
        status["unavailableReplicas"] = replicas - ready
        status["conditions"] = [
            _condition("Available", ready >= replicas, "MinimumReplicasAvailable" if ready >= replicas
                       else "MinimumReplicasUnavailable"),
            _condition("Progressing", True, "NewReplicaSetAvailable"),
        ]
    else:
        status["currentReplicas"] = created
        status["updatedReplicas"] = created
    if ready == 0:  # Kubernetes omits zero counts
        del status["readyReplicas"], status["availableReplicas"]
    if status.get("unavailableReplicas") == 0:
        del status["unavailableReplicas"]
    if created == 0:
        del status["replicas"]
    workload = copy.copy(obj)
    workload["metadata"] = {**meta, "generation": 1}
    workload["status"] = status
    return workload, pods


_COMPLETING_KINDS = ("Job", "CronJob")
# when the derived states' Jobs ran: a CronJob's last run scheduled at SCHEDULED, succeeded at SUCCEEDED (a healthy
# one), or its last success an earlier run's (a faulty one: its last run failed)
_SCHEDULED, _SUCCEEDED, _EARLIER = "2026-01-01T00:05:00Z", "2026-01-01T00:05:40Z", "2026-01-01T00:00:40Z"


def _run_job(obj: dict, effect: str) -> dict:
    """A Job with the status the Job controller reports once it finished (Complete, or Failed under a fault),
    or a CronJob with its last run's (succeeded, or failed under a fault: the last success is an earlier run's)."""
    job = copy.copy(obj)
    job["metadata"] = {**obj["metadata"], "generation": 1}
    if obj["kind"] == "CronJob":
        job["status"] = {"lastScheduleTime": _SCHEDULED, "lastSuccessfulTime": _EARLIER if effect else _SUCCEEDED}
        return job
    spec = obj.get("spec", {})
    completions = int(spec.get("completions", 1))
    if effect:
        job["status"] = {"failed": int(spec.get("backoffLimit", 6)) + 1, "startTime": _SCHEDULED,
                         "conditions": [{"type": "Failed", "status": "True", "reason": "BackoffLimitExceeded"}]}
    else:
        job["status"] = {"succeeded": completions, "startTime": _SCHEDULED, "completionTime": _SUCCEEDED,
                         "conditions": [{"type": "Complete", "status": "True"}]}
    return job


_running = IdentityMemo(lambda obj: _run_workload(obj, "", 0), size=4096)


def _condition(kind: str, ok: bool, reason: str | None = None) -> dict:
    out = {"type": kind, "status": "True" if ok else "False", "lastTransitionTime": TIMESTAMP}
    if reason:
        out["reason"] = reason
    return out


def _pod(owner: dict, name: str, template: dict, template_hash: str, effect: str) -> dict:
    meta = owner["metadata"]
    labels = dict(template.get("metadata", {}).get("labels", {}))
    if owner["kind"] == "Deployment":
        labels["pod-template-hash"] = template_hash
        owner_ref = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": f"{meta['name']}-{template_hash}"}
    else:
        labels["statefulset.kubernetes.io/pod-name"] = name
        owner_ref = {"apiVersion": "apps/v1", "kind": "StatefulSet", "name": meta["name"]}
    owner_ref.update(uid=_uid(f"{meta.get('namespace')}/{owner_ref['name']}"), controller=True, blockOwnerDeletion=True)
    pod_meta: dict = {"name": name, "namespace": meta.get("namespace"), "labels": labels, "ownerReferences": [owner_ref]}
    annotations = template.get("metadata", {}).get("annotations")
    if annotations:
        pod_meta["annotations"] = dict(annotations)
    spec = copy_data(template.get("spec", {}))
    for container in spec.get("initContainers", []) + spec.get("containers", []):
        _default_requests(container)
    scheduled = effect not in ("pending",)
    if scheduled:
        spec["nodeName"] = NODE
    return {"apiVersion": "v1", "kind": "Pod", "metadata": pod_meta, "spec": spec,
            "status": _pod_status(spec, effect)}


def _default_requests(container: dict) -> None:
    """The API server's pod defaulting: a resource with a limit and no request requests its limit."""
    resources = container.get("resources")
    if not resources or not resources.get("limits"):
        return
    requests = resources.setdefault("requests", {})
    for name, value in resources["limits"].items():
        requests.setdefault(name, value)


def _uid(text: str) -> str:
    h = hashlib.sha256(text.encode("utf-8")).hexdigest()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:32]}"


def _container_status(container: dict, ready: bool, state: dict, restarts: int = 0) -> dict:
    return {"name": container["name"], "image": container.get("image", ""), "imageID": "", "ready": ready,
            "restartCount": restarts, "started": "running" in state, "state": state}


def _pod_status(spec: dict, effect: str) -> dict:
    containers = spec.get("containers", [])
    inits = spec.get("initContainers", [])
    running = {"running": {"startedAt": TIMESTAMP}}
    if effect == "pending":
        return {"phase": "Pending", "qosClass": "Burstable", "conditions": [
            {**_condition("PodScheduled", False, "Unschedulable"), "message": "0/1 nodes are available"}]}
    if effect == "config":  # scheduled, waiting for a ConfigMap or Secret to mount or read
        return {"phase": "Pending", "hostIP": "10.0.0.2", "qosClass": "Burstable", "startTime": TIMESTAMP,
                "conditions": [_condition("PodScheduled", True), _condition("Initialized", True),
                               _condition("ContainersReady", False, "ContainersNotReady"),
                               _condition("Ready", False, "ContainersNotReady")],
                "containerStatuses": [_container_status(c, False, {"waiting": {"reason": "ContainerCreating"}})
                                      for c in containers]}
    status: dict = {"hostIP": "10.0.0.2", "podIP": "10.244.0.10", "qosClass": "Burstable", "startTime": TIMESTAMP}
    if effect == "":
        status["phase"] = "Running"
        status["conditions"] = [_condition(c, True) for c in ("PodScheduled", "Initialized", "ContainersReady", "Ready")]
        if inits:
            status["initContainerStatuses"] = [_container_status(c, True, {"terminated": {
                "exitCode": 0, "reason": "Completed", "startedAt": TIMESTAMP, "finishedAt": TIMESTAMP}}) for c in inits]
        status["containerStatuses"] = [_container_status(c, True, running) for c in containers]
        return status
    initialized = effect != "init"
    status["phase"] = "Pending" if effect in ("image", "init") else "Running"
    status["conditions"] = [_condition("PodScheduled", True), _condition("Initialized", initialized),
                            _condition("ContainersReady", False, "ContainersNotReady"),
                            _condition("Ready", False, "ContainersNotReady")]
    if effect == "init":
        status["initContainerStatuses"] = [_container_status(c, False, {"waiting": {"reason": "CrashLoopBackOff"}}, 5)
                                           for c in inits]
        waiting = {"waiting": {"reason": "PodInitializing"}}
        status["containerStatuses"] = [_container_status(c, False, waiting) for c in containers]
    elif effect == "image":
        status["containerStatuses"] = [_container_status(c, False, {"waiting": {"reason": "ImagePullBackOff"}})
                                       for c in containers]
    elif effect == "crash":
        status["containerStatuses"] = [_container_status(c, False, {"waiting": {"reason": "CrashLoopBackOff"}}, 5)
                                       for c in containers]
    else:  # unready
        status["containerStatuses"] = [_container_status(c, False, running) for c in containers]
    return status


# ---- the perfect answer ----------------------------------------------------------------------------------


def entity_name(ref: ir.ObjectRef, state: dict | None = None, scenario: ir.Scenario | None = None) -> str:
    """`namespace/Kind/name` as agents write entities; a pod pattern becomes a pod of the state that its
    workload owns (`frontend-*` stands for frontend's pods, never for frontend-proxy's)."""
    name = ref.name
    if ref.kind == "Pod" and state is not None:
        from ..backends.itbench import _component

        owner = _component(ref, scenario) if scenario is not None else None
        for item in state["resources"]["items"]:
            meta = item.get("metadata", {})
            if item.get("kind") != "Pod" or meta.get("namespace") != ref.namespace:
                continue
            if not fnmatch.fnmatchcase(meta.get("name", ""), ref.name):
                continue
            if owner is None or _pod_owner(item) in (owner, None) and meta["name"].startswith(owner + "-"):
                name = meta["name"]
                break
    return f"{ref.namespace or ''}/{ref.kind}/{name}"


def _pod_owner(pod: dict) -> str | None:
    meta = pod.get("metadata", {})
    for ref in meta.get("ownerReferences", []):
        if ref.get("kind") == "ReplicaSet":
            hash_ = meta.get("labels", {}).get("pod-template-hash", "")
            return ref["name"][:-len(hash_) - 1] if hash_ and ref["name"].endswith("-" + hash_) else ref["name"]
        if ref.get("kind") == "StatefulSet":
            return ref["name"]
        if ref.get("kind") == "Node":
            return None
    return None


def perfect_answer(scenario: ir.Scenario, state: dict | None = None) -> dict:
    """The ground truth as an agent would submit it: ITBench's 2026 shape for SRE, the prompt's
    `resource` list for FinOps."""
    if scenario.domain == "finops":
        # `type` says what is wasteful: the fault's kind in words ("misconfigured hpa", "idle replicas")
        named: dict = {}
        for i in scenario.injections():
            named.setdefault(entity_name(i.target, state, scenario), i.fault.replace("_", " "))
        return {"resource": [{"name": n, "type": t} for n, t in named.items()]}
    entities = [{"name": entity_name(ref, state, scenario), "contributing_factor": True,
                 "reasoning": "the fault acts on this object", "evidence": "ground truth"}
                for ref in scenario.root_causes]
    propagations = [{"source": _chain_name(e.source, state, scenario), "target": _chain_name(e.target, state, scenario),
                     "condition": e.condition, "effect": e.effect} for e in scenario.propagations]
    return {"entities": entities, "propagations": propagations,
            "alerts_explained": sorted({a.name for a in scenario.alerts})}


def _chain_name(ref: ir.ObjectRef, state: dict | None, scenario: ir.Scenario) -> str:
    """A propagation endpoint as the agent can name it: a pod group whose workload has no pod in the
    state (scaled to zero, refused by a quota) is named by its workload."""
    name = entity_name(ref, state, scenario)
    if ref.kind == "Pod" and name.endswith("/" + ref.name):  # no pod of the state matched
        from ..backends.itbench import _component

        owner = _component(ref, scenario)
        workload = next((w for w in scenario.topology.workloads if w.name == owner), None)
        if workload is not None:
            return f"{workload.namespace}/{workload.kind}/{workload.name}"
    return name


EMPTY_ANSWER = {"entities": [], "propagations": [], "alerts_explained": []}


def policy_reports(scenario: ir.Scenario, perfect: bool, policy: str = "agent-policy", gaps: str = "fail") -> list[dict]:
    """Kyverno PolicyReports (wgpolicyk8s.io/v1alpha2) of an agent's policy over a CISO scenario's objects:
    a perfect policy fails the gap objects (`gaps`) and passes the compliant ones; the other fails them all."""
    if scenario.compliance is None:
        return []
    results = []
    for refs, verdict in ((scenario.compliance.gaps, gaps), (scenario.compliance.compliant, "pass" if perfect else "fail")):
        for ref in refs:
            resource = {"apiVersion": ref.api_version, "kind": ref.kind, "name": ref.name}
            if ref.namespace:
                resource["namespace"] = ref.namespace
            results.append({"policy": policy, "rule": "check", "result": verdict, "resources": [resource]})
    return [{"apiVersion": "wgpolicyk8s.io/v1alpha2", "kind": "PolicyReport",
             "metadata": {"name": policy}, "results": results}]
