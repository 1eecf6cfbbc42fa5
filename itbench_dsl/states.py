"""Offline state snapshots of a scenario, and the self-validation of its evaluator.

From what the compiler emits (the topology manifests and the fault plan of backends/faults.py),
three snapshots in the evaluator's state format are derived, with no cluster:

* healthy: the topology as a cluster would report it once it settled: workloads with their
  status (every replica ready), one Running, Ready pod per replica, and no alert firing;
* faulty: after the injection: patched objects replaced, created objects added, deleted objects
  removed; the workloads a fault keeps from running get pods that are not ready (or none), and
  the scenario's expected alerts fire, labelled with the namespace and name of their target;
* solved: the faulty state after the revert manifests are applied. A scenario's `solution` is
  prose and shell commands we do not interpret, so "solved" is always the revert, which is what
  the declared solution must achieve.

The state format: `{"resources": {"kind": "List", "items": [...]}, "alerts": {Prometheus
/api/v1/alerts}, "policyReports": [...], "costs": {...}}`. Everything is deterministic: pod
names come from a hash of the pod template, timestamps are fixed.

`self_validate` runs the scenario's evaluator (evaluator_runtime.evaluate on
backends/evaluator.evaluator_spec) on the three states: it must fail on faulty and pass on
healthy and solved, and the perfect diagnosis must score 1 where an empty one scores 0.
"""

from __future__ import annotations

import copy
import fnmatch
import hashlib
import json

from . import ir
from .memo import IdentityMemo

TIMESTAMP = "2026-01-01T00:00:00Z"
NODE = "itbench-worker"
# Kubernetes' own alphabet for generated names (no vowels, no look-alike characters)
_SAFE = "bcdfghjklmnpqrstvwxz2456789"

# How a fault mechanism (FaultKind.mechanism) affects the pods of the workload it targets:
#   image      Pending, container waiting in ImagePullBackOff
#   crash      Running, container waiting in CrashLoopBackOff, not ready
#   init       Pending, an init container never completes
#   unready    Running, containers running but the readiness probe fails
#   pending    Pending, not scheduled
#   absent     no pod is created (a quota refuses them)
#   pending-new  the pods beyond the original replica count stay Pending (the rest keep running)
# A mechanism not listed leaves the pods ready: only the alerts tell the fault.
READINESS: dict[str, str] = {
    "workload.container.image:unpullable": "image",
    "workload.container.image:foreign-architecture": "crash",
    "workload.container.command:invalid": "crash",
    "workload.container.resources:insufficient": "crash",
    "valkey.container.memory:exhausted": "crash",
    "workload.init-container:crashing": "init",
    "workload.init-container:hanging": "init",
    "workload.container.readinessProbe:misconfigured": "unready",
    "workload.nodeSelector:nonexistent-node": "pending",
    "workload.affinity.podAntiAffinity:unschedulable": "pending",
    "workload.volumes.persistentVolumeClaim:unbound": "pending",
    "workload.priorityClassName:preempted": "pending",
    "node.unschedulable:cordoned": "pending-new",
    "resourcequota:insufficient": "absent",
}
# Chaos Mesh PodChaos by action: pod-failure swaps the containers for a pause image (not ready),
# container-kill leaves them restarting; pod-kill pods come back, so a snapshot sees them ready.
_POD_CHAOS = {"pod-failure": "unready", "container-kill": "crash"}

_WORKLOAD_KINDS = ("Deployment", "StatefulSet")


# ---- the three states ----------------------------------------------------------------------------------


def derive(scenario: ir.Scenario) -> dict[str, dict]:
    """{"healthy", "faulty", "solved"} state snapshots of a checked scenario.

    The snapshots share unchanged objects with the manifest backend's memo: treat them as read-only
    (serialise them, or deep-copy before changing anything)."""
    from . import ciso
    from .backends import faults as fault_backend
    from .backends import manifests as manifest_backend

    gaps = [id(o) for o in fault_backend.gap_objects(scenario)]
    topology = manifest_backend.topology_manifests(scenario.topology, exclude=gaps, provided=True) \
        + ciso.k8s_objects(scenario)[1]
    topology += manifest_backend.agent_access(scenario.agent)  # deployed with the topology (manifests/agent-access.yaml)
    inject_apply, inject_delete, revert_apply, revert_delete = fault_backend.plan(scenario)

    healthy_objects = _index(topology)
    faulty_objects = _apply(healthy_objects, inject_apply, inject_delete)
    solved_objects = _apply(faulty_objects, revert_apply, revert_delete)
    # objects the fault deleted come back with the revert; keep the healthy order where it can be kept
    solved_objects = _reorder(solved_objects, healthy_objects)

    effects = _fault_effects(scenario)
    # static pods' mirror pods: the kubelet runs them, so they are Running in every state
    static = {("Pod", w.namespace, manifest_backend.static_pod_name(w)) for w in scenario.topology.workloads
              if w.kind == "Pod"}
    return {
        "healthy": _state(healthy_objects, {}, [], static),
        "faulty": _state(faulty_objects, effects, _alerts(scenario, faulty_objects), static),
        "solved": _state(solved_objects, {}, [], static),
    }


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


def _fault_effects(scenario: ir.Scenario) -> dict[tuple, tuple[str, int]]:
    """(kind, namespace, name) of a workload -> (its readiness effect, its replicas before the fault)."""
    from .faults.base import find_object

    effects: dict[tuple, tuple[str, int]] = {}
    for injection in scenario.injections():
        effect = READINESS.get(injection.mechanism)
        if injection.mechanism == "chaos-mesh.schedule:PodChaos":
            effect = _POD_CHAOS.get(str(injection.args.get("spec", {}).get("action")))
        target = injection.target
        if effect is None or target.kind not in _WORKLOAD_KINDS:
            continue
        try:
            replicas = find_object(scenario.topology, target).replicas
        except KeyError:
            replicas = 1
        effects[(target.kind, target.namespace, target.name)] = (effect, replicas)
    return effects


def _alerts(scenario: ir.Scenario, objects: dict[tuple, dict]) -> list[dict]:
    """The scenario's expected alerts, firing, and the alerts its mitigation waits for (`alert X not
    firing`) that its faults are known to raise (ITBench's fault library), on the fault's target."""
    from .faults import FAULTS, library_alerts

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
    raised = {a for i in scenario.injections() for a in library_alerts(FAULTS[i.fault])}
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


def _state(objects: dict[tuple, dict], effects: dict, alerts: list[dict], static: set[tuple]) -> dict:
    items: list[dict] = []
    pods: list[dict] = []
    for key, obj in objects.items():
        if key[0] in _WORKLOAD_KINDS:
            effect, original = effects.get(key, ("", 0))
            # a running workload of a shared application object is the same from scenario to scenario
            workload, workload_pods = _running(obj) if effect == "" else _run_workload(obj, effect, original)
            items.append(workload)
            pods.extend(workload_pods)
        elif key in static:  # a static pod's mirror pod, running, owned by its node
            node = obj.get("spec", {}).get("nodeName", NODE)
            owner = {"apiVersion": "v1", "kind": "Node", "name": node, "uid": _uid(f"node/{node}"), "controller": True}
            meta = {**obj["metadata"], "ownerReferences": [owner]}
            pods.append({**obj, "metadata": meta, "status": _pod_status(obj.get("spec", {}), "")})
        else:
            items.append(obj)
    items.extend(pods)
    return {
        "resources": {"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""}, "items": items},
        "alerts": {"status": "success", "data": {"alerts": alerts}},
        "policyReports": [],
        "costs": {},
    }


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
    created = 0 if effect == "absent" else replicas
    pods = []
    ready = 0
    for index in range(created):
        pod_effect = effect
        if effect == "pending-new":
            pod_effect = "pending" if index >= original_replicas else ""
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
    spec = copy.deepcopy(template.get("spec", {}))
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


def entity_name(ref: ir.ObjectRef, state: dict | None = None) -> str:
    """`namespace/Kind/name` as agents write entities; a pod pattern becomes a pod of the state it matches."""
    name = ref.name
    if ref.kind == "Pod" and state is not None:
        for item in state["resources"]["items"]:
            if item.get("kind") == "Pod" and item["metadata"].get("namespace") == ref.namespace \
                    and fnmatch.fnmatchcase(item["metadata"]["name"], ref.name):
                name = item["metadata"]["name"]
                break
    return f"{ref.namespace or ''}/{ref.kind}/{name}"


def perfect_answer(scenario: ir.Scenario, state: dict | None = None) -> dict:
    """The ground truth as an agent would submit it (ITBench's 2026 shape)."""
    entities = [{"name": entity_name(ref, state), "contributing_factor": True,
                 "reasoning": "the fault acts on this object", "evidence": "ground truth"}
                for ref in scenario.root_causes]
    propagations = [{"source": entity_name(e.source, state), "target": entity_name(e.target, state),
                     "condition": e.condition, "effect": e.effect} for e in scenario.propagations]
    return {"entities": entities, "propagations": propagations,
            "alerts_explained": sorted({a.name for a in scenario.alerts})}


EMPTY_ANSWER = {"entities": [], "propagations": [], "alerts_explained": []}


# ---- self-validation -------------------------------------------------------------------------------------


def self_validate(scenario: ir.Scenario, states: dict[str, dict] | None = None) -> list[tuple[str, str]]:
    """Problems of the scenario's evaluator on its own states, as (code, message); empty when sound.

    SRE and FinOps (E4004): with no agent answer, the verdict must fail on faulty and pass on
    healthy and solved. CISO (E4004): the agent's artefact is graded, not the cluster, so on the
    faulty state the policy reports of a perfect policy (gaps fail, compliant objects pass) must
    pass, and no report or an always-fail policy must not. Diagnosis, SRE scenarios with a root
    cause (E4005): the perfect answer scores 1 (propagation F1 1 too), the empty one 0.
    """
    from .backends.evaluator import evaluator_spec
    from .evaluator_runtime import evaluate

    states = states if states is not None else derive(scenario)
    spec = evaluator_spec(scenario)
    problems: list[tuple[str, str]] = []

    def verdict(answer: dict | None, state: dict) -> dict:
        try:
            return evaluate(spec, copy.deepcopy(answer), state)
        except Exception as exc:  # noqa: BLE001 - the generated evaluator must grade every state we derive
            return {"passed": None, "score": None, "metrics": {}, "checks": [
                {"id": "evaluator", "passed": False, "detail": f"it raised {type(exc).__name__}: {exc}"}]}

    if scenario.domain == "ciso":
        wrong = []
        for name, reports, want in (("a perfect policy's reports", policy_reports(scenario, perfect=True), True),
                                    ("no policy report", [], False),
                                    ("an always-fail policy's reports", policy_reports(scenario, perfect=False), False)):
            outcome = verdict(None, {**states["faulty"], "policyReports": reports})
            if outcome.get("passed") is not want:
                why = _failed_checks(outcome) if want else (
                    "no compliant object is declared for it to fail" if not scenario.compliance.compliant else "")
                wrong.append(f"{'fails' if want else 'passes'} {name}" + (f" ({why})" if why else ""))
        if wrong:
            problems.append(("E4004", "the evaluator cannot tell a policy that detects the gap from one that does "
                             "not: it " + "; ".join(wrong)))
        return problems

    outcomes = {name: verdict(None, states[name]) for name in ("healthy", "faulty", "solved")}
    wrong = []
    if not scenario.faults:  # a control scenario (no fault): the cluster is healthy in every state
        if outcomes["faulty"].get("passed") is not True:
            wrong.append(f"it fails the faulty state of a control with no fault ({_failed_checks(outcomes['faulty'])})")
    elif outcomes["faulty"].get("passed") is not False:
        wrong.append("it passes the faulty state" if outcomes["faulty"].get("passed")
                     else f"it cannot grade the faulty state ({_failed_checks(outcomes['faulty'])})")
    for name in ("healthy", "solved"):
        if outcomes[name].get("passed") is not True:
            wrong.append(f"it fails the {name} state ({_failed_checks(outcomes[name])})")
    if wrong:
        problems.append(("E4004", "the evaluator cannot tell the faulty state from the healthy one: " + "; ".join(wrong)))

    if scenario.domain == "sre" and scenario.root_causes:
        perfect = verdict(perfect_answer(scenario, states["faulty"]), states["faulty"])
        empty = verdict(EMPTY_ANSWER, states["faulty"])
        score, chain = _number(perfect.get("score")), _number(perfect.get("metrics", {}).get("propagation_f1", 1.0))
        if score is None or abs(score - 1.0) > 1e-9 or chain is None or abs(chain - 1.0) > 1e-9:
            message = f"the perfect diagnosis does not score 1: score {score}, propagation F1 {chain}"
            problems.append(("E4005", f"{message} ({_failed_checks(perfect)})"))
        empty_score = _number(empty.get("score"))
        if empty_score is None or abs(empty_score) > 1e-9:
            message = f"the perfect diagnosis does not score 1 more than an empty one: the empty diagnosis scores {empty_score}"
            problems.append(("E4005", f"{message}, not 0"))
    return problems


def policy_reports(scenario: ir.Scenario, perfect: bool) -> list[dict]:
    """Kyverno PolicyReports (wgpolicyk8s.io/v1alpha2) of an agent's policy over a CISO scenario's objects:
    a perfect policy fails the gap objects and passes the compliant ones; the other fails them all."""
    if scenario.compliance is None:
        return []
    results = []
    for refs, verdict in ((scenario.compliance.gaps, "fail"), (scenario.compliance.compliant, "pass" if perfect else "fail")):
        for ref in refs:
            resource = {"apiVersion": ref.api_version, "kind": ref.kind, "name": ref.name}
            if ref.namespace:
                resource["namespace"] = ref.namespace
            results.append({"policy": "agent-policy", "rule": "check", "result": verdict, "resources": [resource]})
    return [{"apiVersion": "wgpolicyk8s.io/v1alpha2", "kind": "PolicyReport",
             "metadata": {"name": "agent-policy"}, "results": results}]


def _number(value) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _failed_checks(verdict: dict) -> str:
    failed = [f"{c.get('id')}: {c.get('detail')}" for c in verdict.get("checks", []) if not c.get("passed")]
    more = f"; and {len(failed) - 3} more" if len(failed) > 3 else ""
    return "; ".join(failed[:3]) + more or "no failed check reported"
