"""The adversarial corpus of a scenario: what its evaluator must fail, refuse, or pass.

A verdict is only worth what it resists. For every scenario the compiler derives cases from the
scenario's own plan, each with the verdict it must get:

* mitigation: the faulty state reporting every pod ready; each changed field set to another wrong
  value; JSON held in a ConfigMap re-serialised with the fault kept; a created object left behind; a
  deleted object recreated with a wrong field; the fault's workload running another image; the
  workload scaled to zero; an object a workload's pods need deleted beside the fix; a pod no workload of the
  topology runs (bare, or another Deployment's) carrying a Service's labels; a workload's status of an older
  spec, an unfinished rollout, a workload being deleted, a fixed object replaced by a custom resource of another API group; a state without
  the alerts, or captured with `kubectl get all` (which omits Chaos Mesh and other custom kinds); a deleted
  ConfigMap or Secret recreated with other data, or restored while its readers read a new one holding other
  data, or left deleted with its readers reading it as `optional`; flagd pointed at a new ConfigMap with
  another flag turned on, the named one healthy; another workload's ConfigMap or Secret rewritten, or its
  readers pointed at a copy holding other data or at one that is not there, or an object they read deleted
  once read as `optional`; a limit of 1Mi or 1m added to a container that had none, a pod-level limit of
  1Mi, a healthy limit of a workload the mitigation reads squeezed to 1Mi; a database's claim volume swapped
  for an `emptyDir` or a `hostPath`, or its mount removed.
  Right ones: the solved and healthy states, an object the pods need recreated as it was or deleted once read as
  `optional` where no workload read its keys, another workload's readers pointed at a copy holding the same
  data or its structured values re-serialised, generous limits added, a claim volume renamed, a ConfigMap or Secret the fault deleted recreated under another name its readers are pointed at,
  a ConfigMap recreated with its data under `binaryData` where volumes alone read it (a variable reading it: fail),
  the container port a Service's numbered target leads to declared under another number (its name kept: where a
  Service targets that name, fail),
  flagd pointed at a new ConfigMap of its healthy flags (the named one, unread, with a flag turned on), a pod of an older ReplicaSet of a workload, a debugging pod without the application's labels,
  a created object left but without its effect (a
  NetworkPolicy beside another admitting all, or admitting the calls the call graph shows and DNS (without
  DNS: fail), or admitting every address but the cloud metadata one (only addresses no pod has: fail), an Istio
  policy made PERMISSIVE, AUDIT or allow-all, a namespace-wide PeerAuthentication overridden by PERMISSIVE ones of
  every workload (a second namespace-wide one: fail, unless older than the fault's, which Istio then takes),
  the solved state as an API server returns it (its
  defaults, base64 Secret data, bookkeeping), after a `rollout restart`, with a service's target
  port named instead of numbered, with the broken pods still terminating. What a fix means and how it
  holds (`_meaning_cases`): a fixed workload's pod OOM-killed after the fix, or with a failed restart the
  state cannot date; a StatefulSet's fix staged by a partition or left to OnDelete; a command or arguments
  added where the image ran its own; the faulty state and a broken probe kept, spelled with the API
  server's defaults (fail); a restart before the fix, an OnDelete rollout done, images respelled or their
  its running pods patched in place (an image, `activeDeadlineSeconds`: fail), its images' tags pinned to a
  digest, with or without the tag (to another digest than the incident's pods show the tag ran
  as: fail), a probe
  fixed in place, a Service recreated by `kubectl expose`, or with its selector spelled with another label
  exactly its pods carry, or headless where each port targets its own number, a list read with an unrelated
  item first, an evicted pod left behind (pass); a Service of the application made headless where a port
  targets another number (fail). A Pod Security enforce label kept with every workload of the namespace
  made to meet it (pass), one left breaking it (fail). For a probe predicate
  (`probe "x" stdout contains "..."`): the probe's result absent (refused), not a result, a field
  missing, null or of another type, a wrong exit code, output without the text or holding it only past
  what is read of a huge output, the text inside a longer token for an exact test (fail).
* diagnosis: the perfect answer, with extra spellings of the same objects (also kubectl's plural,
  group-qualified and short resource names), in ITBench's 2025 shape, with every edge given twice, a Schedule's
  fault named by the Schedule or an experiment it spawned, its pods replaced by the fix and kept in the
  state's `incident` (pass); no answer, no `entities`, the root
  cause alone without its propagation, the chain reversed, the chain given in both directions, a
  fan-out of guesses from its first node, a bare name that also names an object that is no root cause,
  a wrong object of the root cause's own component (below the right answer's score), a spawned
  experiment's name of another shape, one invented edge out of the root cause for the chain, a
  sibling that shares the root cause's name as a prefix, the name of an object that exists nowhere,
  a pod named like the root cause's pods that the state does not hold, a flood of every object, a
  wrong object spelled many ways (fail or unusable).
* FinOps answers: the objects as the prompt asks (`<ns>/<Kind>/<name>`), the bare name with its
  kind, any object the fault changes, for a control the answer that names nothing (pass); another
  object, an absent one, nothing, for a control any object (fail). FinOps states: an optimum's list
  item back at its faulty value behind a twin of another identity holding the optimum; the faulted
  workload's replicas moved into a copy under another name, bare pods copied from its pods, a sidecar
  on it, every workload's requests raised by half (fail: the application reserves more than when
  healthy); the copy at zero replicas, the bare pods finished, a request at its optimum with a larger
  limit (pass).
* CISO: a perfect policy's reports, also beside another policy's (pass); allow-all and deny-all
  policies, no reports, a policy that breaks the prompt's contract (Enforce, also through
  `validationFailureActionOverrides`), another policy's reports flagging the gap while the graded
  policy flags nothing, policies that single the gap objects out by name, name prefix or label
  value (offline and from their reports), a rule flagging only the gap's own violating value of a
  field (`SYS_ADMIN`, hostPath `/var/log`) (fail); a state without PolicyReports (unusable).
* a fault that keeps pods from being scheduled: every part left with the pods on the node they are pinned
  to (uncordoned), an anti-affinity's DaemonSet removed alone or confined to no node, the anti-affinity made
  preferred (pass); a cordon kept with the pods let past it by a toleration of its taint or a template
  `nodeName`, or the node captured still cordoned (fail), the node captured uncordoned (pass).
* a Job or a CronJob a fault acts on: its command replaced by `true` (fail); a CronJob suspended, on a schedule that never fires (fail), on
  another schedule (pass); `complete` captured while a run is in progress, after a last success at the fix
  (pass) or before it (fail). A probe fault on a port the container does not serve: another check on that
  port, delayed (fail).
* a Role's rules the fault changed: the role left faulty, its healthy rules granted to its subjects by a new
  role and binding (pass), to another subject (fail).
* access predicates (`can`/`cannot`): the granting rule restricted by resourceNames, granting another
  verb, bound to another subject (fail); the grant after an unrelated rule or with the verb `*` (pass).
* detection: an answer written after the window and backdated into it (fail); one written in the
  window, one claiming a time after it was written (pass).

`self_validate` (below) grades every case (so `itbench check` refuses a scenario whose evaluator is
fooled by one), and `benchmarks/corpus.py` reports the false passes and false fails over the library.
"""

from __future__ import annotations

import base64
import hashlib
import copy
import json
import re
from dataclasses import dataclass
from typing import Iterator

from .. import ir
from ..memo import copy_data
from ..serialize import YamlError, load_yaml
from .states import EMPTY_ANSWER, Objects, entity_name, perfect_answer, policy_reports, render

PASS, FAIL, UNUSABLE = "pass", "fail", "unusable"


@dataclass
class Case:
    """One input its evaluator must grade `want` (pass, fail) or refuse as unusable."""

    name: str
    task: str
    want: str
    answer: dict | None = None
    state: dict | None = None
    artifact: tuple | None = None
    score: float | None = None  # the score a passing case must get, when it must be exact
    score_below: float | None = None  # a failing case's score must stay below this (never the right answer's)
    repair: float | None = None  # the metrics.repair a mitigate verdict must give (faulty: 0, solved: 1)
    failed: tuple = ()  # after `run`: the ids of the checks that failed
    injected_at: str | None = None  # when the fault was injected (RFC 3339): what detect times against
    answered_at: str | None = None  # when the harness saw the detection answer appear (RFC 3339)

    def run(self, spec: dict, indexed: dict | None = None) -> tuple[bool, str]:
        """(whether the evaluator grades the case as it must, what it did). `indexed`, kept by the caller
        for one spec, holds the states already indexed (id -> (state, State)): cases share states."""
        from ..runtime.evaluator import evaluate
        from ..runtime.state import InputError

        try:
            verdict = evaluate(spec, copy.deepcopy(self.answer), self.state, task=self.task, artifact=self.artifact,
                               injected_at=self.injected_at, indexed=indexed,
                               **({"answered_at": self.answered_at} if self.answered_at else {}))
        except InputError as exc:
            return self.want == UNUSABLE, f"refused it ({exc})"
        except Exception as exc:  # noqa: BLE001 - the generated evaluator must grade or refuse every case
            return False, f"raised {type(exc).__name__}: {exc}"
        got = PASS if verdict.get("passed") else FAIL
        self.failed = tuple(c["id"] for c in verdict.get("checks", []) if not c.get("passed"))
        failed = [f"{c['id']}: {c['detail']}" for c in verdict.get("checks", []) if not c.get("passed")]
        what = f"{'passed' if got == PASS else 'failed'} it" + (f" ({'; '.join(failed[:3])})" if failed else "")
        if got == PASS and self.score is not None and abs(float(verdict.get("score", 0)) - self.score) > 1e-9:
            return False, f"passed it with score {verdict.get('score')}, not {self.score}"
        if got == FAIL and self.score_below is not None and float(verdict.get("score", 0)) >= self.score_below:
            return False, f"failed it with score {verdict.get('score')}, not below {self.score_below}"
        if self.repair is not None and (verdict.get("metrics") or {}).get("repair") != self.repair:
            return False, f"{what} with repair {(verdict.get('metrics') or {}).get('repair')}, not {self.repair}"
        return got == self.want, what


# ---- building states ---------------------------------------------------------------------------------------


def _key(obj: dict) -> tuple:
    meta = obj.get("metadata", {})
    return (obj.get("kind"), meta.get("namespace"), meta.get("name"))


def _owns(owned: dict, obj: dict) -> bool:
    from ..runtime.state import owns

    return owns(owned, obj)


def _edited(manifests: dict[tuple, dict], key: tuple, edit) -> dict[tuple, dict] | None:
    """A copy of the manifests with one object changed by `edit(obj)` (None when the object is absent)."""
    if key not in manifests:
        return None
    out = dict(manifests)
    obj = copy_data(manifests[key])
    edit(obj)
    out[key] = obj
    return out


def _set_at(obj, path: list, value) -> bool:
    """Set the value at a change's path (keys, [key, value] selectors, {"parse": "json"} steps); False
    when the path does not reach a place to set."""
    from ..runtime.state import nested

    node, holder = obj, None  # holder: the container and key of the current node, for a step into its text
    for index, seg in enumerate(path):
        last = index == len(path) - 1
        if isinstance(seg, dict):  # into JSON or YAML held in the parent's string (written back as JSON, valid YAML)
            if holder is None:
                return False
            parent, key = holder
            data = _load(parent[key])
            if data is None:
                return False
            if not _set_at(data, path[index + 1:], value):
                return False
            parent[key] = json.dumps(data, indent=2)
            return True
        if isinstance(seg, list):
            if not isinstance(node, list):
                return False
            found = [i for i, v in enumerate(node) if isinstance(v, dict) and str(nested(v, seg[0])) == str(seg[1])]
            if len(found) != 1:
                return False
            if last:
                node[found[0]] = value
                return True
            holder = (node, found[0])
            node = node[found[0]]
            continue
        if not isinstance(node, dict):
            return False
        if last:
            node[seg] = value
            return True
        holder = (node, seg)
        node = node.setdefault(seg, {})
    return False


def _load(text):
    """JSON or YAML text as data; None when it is neither."""
    if not isinstance(text, str):
        return None
    try:
        return json.loads(text)
    except ValueError:
        pass
    try:
        return load_yaml(text)
    except YamlError:
        return None


def _another(value):
    """A value of the same type that is neither `value` nor its usual neighbours' meaning."""
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return value + 1
    if isinstance(value, float):
        return value * 1.5 + 1
    if isinstance(value, str):
        return value + "-other" if value else "other"
    return None


# What an API server adds to what it stores: defaults, bookkeeping, base64 Secret data. A state captured
# from a cluster holds all of it; the evaluator must not take any of it for a change.
_POD_DEFAULTS = {"dnsPolicy": "ClusterFirst", "restartPolicy": "Always", "schedulerName": "default-scheduler",
                 "securityContext": {}, "terminationGracePeriodSeconds": 30}
_CONTAINER_DEFAULTS = {"terminationMessagePath": "/dev/termination-log", "terminationMessagePolicy": "File",
                       "imagePullPolicy": "IfNotPresent", "resources": {}}


def as_served(manifests: dict[tuple, dict]) -> dict[tuple, dict]:
    out = {}
    for key, obj in manifests.items():
        obj = copy_data(obj)
        meta = obj.setdefault("metadata", {})
        meta.setdefault("uid", "00000000-0000-4000-8000-000000000000")
        meta.setdefault("resourceVersion", "12345")
        meta.setdefault("creationTimestamp", "2026-01-01T00:00:00Z")
        meta.setdefault("managedFields", [{"manager": "kubectl", "operation": "Update"}])
        kind = obj.get("kind")
        spec = obj.get("spec") if isinstance(obj.get("spec"), dict) else None
        if kind == "Namespace":
            meta.setdefault("labels", {})["kubernetes.io/metadata.name"] = meta.get("name")
        if kind in ("Deployment", "StatefulSet") and spec is not None:
            meta.setdefault("annotations", {}).setdefault("deployment.kubernetes.io/revision", "2")
            spec.setdefault("revisionHistoryLimit", 10)
            pod = spec.setdefault("template", {}).setdefault("spec", {})
            for name, value in _POD_DEFAULTS.items():
                pod.setdefault(name, copy.deepcopy(value))
            for container in pod.get("containers", []) + pod.get("initContainers", []):
                for name, value in _CONTAINER_DEFAULTS.items():
                    container.setdefault(name, copy.deepcopy(value))
                for port in container.get("ports", []):
                    port.setdefault("protocol", "TCP")
                for probe in ("livenessProbe", "readinessProbe", "startupProbe"):
                    if isinstance(container.get(probe), dict):
                        container[probe] = _served_probe(container[probe])
            if kind == "Deployment":
                spec.setdefault("progressDeadlineSeconds", 600)
                spec.setdefault("strategy", {"type": "RollingUpdate",
                                             "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"}})
            else:
                spec.setdefault("podManagementPolicy", "OrderedReady")
                spec.setdefault("updateStrategy", {"type": "RollingUpdate", "rollingUpdate": {"partition": 0}})
        if kind == "Service" and spec is not None:
            spec.setdefault("type", "ClusterIP")
            spec.setdefault("clusterIP", "10.96.0.10")
            spec.setdefault("clusterIPs", ["10.96.0.10"])
            spec.setdefault("sessionAffinity", "None")
            spec.setdefault("ipFamilies", ["IPv4"])
            for port in spec.get("ports", []):
                port.setdefault("protocol", "TCP")
                port.setdefault("targetPort", port.get("port"))
        out[key] = obj
    return out


# ---- the cases -------------------------------------------------------------------------------------------


def cases(scenario: ir.Scenario, spec: dict, found: Objects, derived: dict[str, dict]) -> Iterator[Case]:
    if spec["domain"] == "ciso":
        yield from _policy_cases(scenario, spec, derived)
        return
    posed = spec["tasks"]
    if "mitigate" in posed:
        yield from _mitigation_cases(scenario, spec, found, derived)
    if "diagnose" in posed and spec["domain"] == "sre":
        yield from _diagnosis_cases(scenario, spec, derived)
    elif "diagnose" in posed and scenario.injections():
        yield from _finops_cases(scenario, spec, derived)
    elif "diagnose" in posed and spec["domain"] == "finops":
        yield from _finops_control_cases(spec, derived)
    if "mitigate" in posed and spec["domain"] == "finops":
        yield from _optimum_cases(spec, derived)
        yield from _limit_headroom_cases(spec, derived)
        yield from _spend_cases(spec, derived)
        yield from _reserved_cases(spec, derived)
    yield from _task_cases(scenario, spec, found, derived)


def _mitigation_cases(scenario, spec, found: Objects, derived) -> Iterator[Case]:
    from ..runtime.evaluator import takes_capacity

    m = spec["mitigation"]
    yield Case("the healthy state", "mitigate", PASS, state=derived["healthy"])
    # a capture that holds none of what the evaluator reads proves nothing either way: refused, never passed
    yield Case("a state that captured none of the kinds the evaluator reads", "mitigate", UNUSABLE,
               state={"resources": {"items": []}})
    yield Case("the solved state as an API server returns it", "mitigate", PASS,
               state=render(as_served(found.solved), found))
    if not scenario.injections():  # a control: nothing is broken, so every state is right
        yield Case("the state of a control with no fault", "mitigate", PASS, state=derived["faulty"])
        return
    yield Case("the solved state", "mitigate", PASS, state=derived["solved"], repair=1.0)
    # the faulty state holds every effect of the fault: nothing the incident broke is mended there
    yield Case("the faulty state", "mitigate", FAIL, state=derived["faulty"], repair=0.0)
    if not m.get("only"):  # `mitigated when only`: readiness decides, so a faulty state all ready may pass
        yield Case("the faulty state with every pod reporting ready and no alert", "mitigate", FAIL,
                   state=render(found.faulty, found, probes=found.faulty_probes))
        # the API server's defaults on every object, the fault's fields among them: a fault is never taken for
        # gone because the server spelled out what it left
        yield Case("the faulty state as an API server returns it, every pod reporting ready", "mitigate", FAIL,
                   state=render(as_served(found.faulty), found, probes=found.faulty_probes))
    yield from _decoy_cases(scenario, derived)
    yield from _config_reader_cases(m, found)
    if not m.get("only"):  # `only`: what the fault deleted is not graded
        yield from _deleted_config_cases(m, found)
    targets = [r for i in scenario.injections() for r in (i.target,) if r.kind in ("Deployment", "StatefulSet")]
    for ref in targets[:2]:
        key = (ref.kind, ref.namespace, ref.name)
        restarted = _edited(found.solved, key, lambda o: o["spec"]["template"].setdefault("metadata", {}).setdefault(
            "annotations", {}).update({"kubectl.kubernetes.io/restartedAt": "2026-01-01T00:00:00Z"}))
        if restarted is not None:
            yield Case(f"the solved state after `rollout restart` of {ref.name}", "mitigate", PASS,
                       state=render(restarted, found))
        replaced = _edited(found.solved, key, _replace_images)
        if replaced is not None and not m.get("only"):  # `only`: readiness decides, whatever image runs
            yield Case(f"{ref.name} fixed by running another image", "mitigate", FAIL, state=render(replaced, found))
        if found.solved.get(key, {}).get("spec", {}).get("replicas", 1) > 0:
            zero = _edited(found.solved, key, lambda o: o["spec"].update(replicas=0))
            yield Case(f"{ref.name} scaled to zero", "mitigate", FAIL, state=render(zero, found))
    yield from _lifecycle_cases(spec, found)
    yield from _meaning_cases(spec, found)
    yield from _collateral_cases(spec, derived["solved"])
    yield from _kept_config_cases(spec, found)
    yield from _limit_floor_cases(spec, found)
    yield from _storage_cases(spec, found)
    yield from _widened_cases(spec, derived["solved"])
    yield from _reference_cases(spec, found)
    yield from _stray_pod_cases(spec, derived["solved"])
    yield from _kept_cases(spec, found)
    yield from _capacity_cases(spec, found)
    # `mitigated when only`: the fault's changes are not graded, so states that differ from the solved one only
    # there (a field at another wrong value, a created object left, a deleted one recreated otherwise) are not cases
    graded = not m.get("only")
    for fault in m["faults"] if graded else []:
        yield from _placement_cases(found, fault)
        yield from _option_cases(found, fault)
        for entry in fault["fields"]:
            yield from _resolver_cases(found, entry)
        if fault["undone_by"] == "any":  # one part left wrong is still a fix
            yield from _any_part_cases(found, fault)
            for ref in fault["created"]:  # its created object neutralised, every other part left faulty
                yield from _neutralised_cases(found, (ref["kind"], ref["namespace"], ref["name"]), found.faulty, spec)
                yield from _twin_cases(spec, found, ref, found.faulty)
            continue
        for entry in fault["fields"]:
            key = (entry["object"]["kind"], entry["object"]["namespace"], entry["object"]["name"])
            if entry.get("claims"):
                yield from _claim_cases(found, key, entry["claims"])
            for change in entry["changes"]:
                yield from _field_cases(found, key, change)
                yield from _regrant_cases(found, key, change)
                yield from _pod_security_cases(found, key, change)
        for ref in fault["created"]:
            key = (ref["kind"], ref["namespace"], ref["name"])
            yield from _neutralised_cases(found, key, graded=spec)
            if key in found.faulty:
                left = dict(found.solved)
                left[key] = found.faulty[key]
                # a fault that keeps pods from being scheduled is undone once they run: what it created that
                # takes no capacity (a DaemonSet of sleeping pods an anti-affinity shuns) is no harm left
                idle = fault.get("placed") and not takes_capacity(found.faulty[key])
                yield Case(f"everything fixed but {ref['kind']} {ref['name']} left in place"
                           + (", taking no capacity" if idle else ""), "mitigate", PASS if idle else FAIL,
                           state=render(left, found))
                yield from _twin_cases(spec, found, ref, want=PASS if idle else FAIL)
    for entry in m["restored"] if graded else []:
        ref = entry["object"]
        key = (ref["kind"], ref["namespace"], ref["name"])
        wrong = _edited(found.solved, key, _wrong_spec)
        # an object whose fields are all the edit leaves alone (a Namespace without labels) has no wrong form
        if wrong is not None and not _owns(entry["owned"], wrong[key]):
            yield Case(f"{ref['kind']} {ref['name']} recreated with a wrong field", "mitigate", FAIL,
                       state=render(wrong, found))
    if graded:
        yield from _added_field_cases("the recreated object", [e["object"] for e in m["restored"]], found.solved, found,
                                      selected={_key_of(e["object"]) for e in m["restored"] if e.get("readers")})
    yield from _predicate_cases(m, found)
    yield from _probe_pod_cases(spec, render(found.solved, found))
    yield from _cron_run_cases(m, derived["solved"])
    yield from _ingress_route_cases(m, found)
    yield from _standing_cases(spec, found)
    yield from _enrolment_cases(spec, found)
    yield from _security_cases(spec, found)
    if spec["requires"]["alerts"]:
        state = render(found.solved, found)
        del state["alerts"]
        yield Case("the solved state without its alerts", "mitigate", UNUSABLE, state=state)
        # Prometheus restarted, or the rule's `for` clock reset: the alerts are pending, their condition holds
        faulty = derived["faulty"]
        alerts = faulty.get("alerts", {}).get("data", {}).get("alerts", [])
        if alerts and m["alerts"]:
            pending = {**render(found.solved, found), "alerts": {
                "status": "success", "data": {"alerts": [dict(a, state="pending") for a in alerts]}}}
            yield Case("the solved state with the expected alerts pending", "mitigate", FAIL, state=pending)
    everyday = {"Pod", "Service", "Deployment", "StatefulSet", "ReplicaSet", "DaemonSet", "Job", "CronJob",
                "HorizontalPodAutoscaler"}
    if any(kind not in everyday for _, kind in spec["requires"]["kinds"]):
        # `kubectl get all` misses every other kind: the objects the fault created seem gone
        state = render({k: v for k, v in found.faulty.items() if k[0] in everyday}, found, probes=found.faulty_probes)
        state["captured"] = [c for c in state["captured"] if c.rpartition("/")[2] in everyday]
        yield Case("the faulty state captured with `kubectl get all`", "mitigate", UNUSABLE, state=state)


def _security_cases(spec: dict, found: Objects) -> Iterator[Case]:
    """A securityContext changed beside the fix on the first workload whose program's needs are known
    (runtime.security_restricted: its image in IMAGE_FILESYSTEM): hardening every program tolerates
    (`allowPrivilegeEscalation: false`, the runtime's seccomp profile) passes; a read-only root filesystem, every
    capability dropped, or another uid, each fails where the program then cannot write what it writes, start
    as its entrypoint does, or be started at all, and passes where it can (a read-only root filesystem over a
    store whose data paths are its image's volumes, every capability dropped from a program that runs as its
    own user)."""
    from ..runtime.evaluator import security_problems
    from ..runtime.state import image_filesystem, POD_TEMPLATE_KINDS

    m = spec["mitigation"]
    # an object the fault deletes is judged as recreated, field by field (health.restored: its own cases)
    recreated = {_key_of(e["object"]) for e in m.get("restored", [])}
    judged = [_key_of(e["object"]) for e in m["programs"] + m.get("application", []) if e.get("security")]
    for key in judged:
        if key in recreated:
            continue
        obj = found.solved.get(key)
        if obj is None or key[0] not in POD_TEMPLATE_KINDS:
            continue
        pod = ((obj.get("spec") or {}).get("template") or {}).get("spec") or {}
        index = next((i for i, c in enumerate(pod.get("containers") or [])
                      if isinstance(c, dict) and image_filesystem(c.get("image")) is not None), None)
        if index is None:
            continue
        c = pod["containers"][index]
        sc = dict(c.get("securityContext") or {})
        mounts = [str(v.get("mountPath")).rstrip("/") or "/" for v in c.get("volumeMounts") or []
                  if isinstance(v, dict) and not v.get("readOnly")]
        before = security_problems(c, pod.get("securityContext"), sc, mounts)

        def changed(extra):
            state = dict(found.solved)
            o = copy_data(obj)
            o["spec"]["template"]["spec"]["containers"][index]["securityContext"] = {**sc, **extra}
            state[key] = o
            return render(state, found)
        yield Case(f"{key[2]}'s container {c.get('name')} hardened (no privilege escalation, the runtime's seccomp "
                   "profile)", "mitigate", PASS,
                   state=changed({"allowPrivilegeEscalation": False, "seccompProfile": {"type": "RuntimeDefault"}}))
        for what, extra in (("a read-only root filesystem", {"readOnlyRootFilesystem": True}),
                            ("every capability dropped", {"capabilities": {"drop": ["ALL"]}}),
                            ("run as uid 1000", {"runAsUser": 1000})):
            harm = set(security_problems(c, pod.get("securityContext"), {**sc, **extra}, mounts)) - \
                set(before)
            yield Case(f"{key[2]}'s container {c.get('name')} given {what}" + (
                ", which its program cannot run with" if harm else ", which its program runs with"),
                "mitigate", FAIL if harm else PASS, state=changed(extra))
        return


def _enrolment_cases(spec: dict, found: Objects) -> Iterator[Case]:
    """A namespace a fault took out of the Istio ambient mesh, labelled `ambient` again while one workload's pods,
    or every workload's, opt out by their own label (`istio.io/dataplane-mode=none`, which wins): fail. The
    namespace's label left as the fault set it while every workload's pods enrol by their own label
    (`istio.io/dataplane-mode=ambient`, which Istio reads on a pod as on a namespace): pass; all but one
    workload's: fail."""
    from ..runtime.evaluator import DATAPLANE_LABEL
    from ..runtime.state import POD_TEMPLATE_KINDS

    for fault in spec["mitigation"]["faults"]:
        for entry in fault["fields"]:
            if entry["object"]["kind"] != "Namespace" or not any(
                    c["path"] == ["metadata", "labels", DATAPLANE_LABEL] for c in entry["changes"]):
                continue
            namespace = entry["object"]["name"]
            mine = [k for k, o in found.solved.items() if k[1] == namespace and k[0] in POD_TEMPLATE_KINDS]

            def opted_out(keys, value="none", left=False):
                state = dict(found.solved)
                ns_key = _key_of(entry["object"])
                if left and ns_key in found.faulty:
                    state[ns_key] = found.faulty[ns_key]
                for key in keys:
                    o = copy_data(state[key])
                    o.setdefault("spec", {}).setdefault("template", {}).setdefault("metadata", {}).setdefault(
                        "labels", {})[DATAPLANE_LABEL] = value
                    state[key] = o
                return render(state, found)
            if mine:
                yield Case(f"namespace {namespace} back in the ambient mesh, {mine[0][2]}'s pods opted out",
                           "mitigate", FAIL, state=opted_out(mine[:1]))
                yield Case(f"namespace {namespace} back in the ambient mesh, every workload's pods opted out",
                           "mitigate", FAIL, state=opted_out(mine))
                yield Case(f"namespace {namespace} left out of the ambient mesh, every workload's pods enrolled by "
                           "their own label", "mitigate", PASS, state=opted_out(mine, "ambient", left=True))
                if len(mine) > 1:
                    yield Case(f"namespace {namespace} left out of the ambient mesh, every workload's pods but "
                               f"{mine[-1][2]}'s enrolled by their own label", "mitigate", FAIL,
                               state=opted_out(mine[:-1], "ambient", left=True))


def _standing_cases(spec: dict, found: Objects) -> Iterator[Case]:
    """What the application stands on, harmed beside a fix (runtime.standing_checks): one of its own
    NetworkPolicies edited into a deny-all (fail), or to admit everything, or deleted (pass); one of its own
    ResourceQuotas edited to admit no pod (fail), or raised, or deleted (pass); one of its own Istio
    AuthorizationPolicies edited into a DENY of every request (fail), or its ALLOW given one more rule, or deleted
    (pass); an EndpointSlice written by hand
    for a Service, listing an address no pod of it holds (fail) or its own pod's (pass); the nodes its pods run
    on cordoned, or tainted (fail; NoExecute with the pods tolerating it for a while only, too), and the control
    plane's own taint beside them schedulable (pass)."""
    from ..runtime.state import number

    solved = found.solved
    policies = ((spec["mitigation"].get("collateral") or {}).get("policies") or [])
    for kind, edits in (("NetworkPolicy", (
            ("into a deny-all", FAIL, {"podSelector": {}, "policyTypes": ["Ingress", "Egress"], "ingress": [], "egress": []}),
            ("to admit everything", PASS, {"podSelector": {}, "policyTypes": ["Ingress", "Egress"], "ingress": [{}],
                                           "egress": [{}]}))),
                        ("ResourceQuota", (("to admit no pod", FAIL, {"hard": {"pods": "0"}}),
                                           ("to admit more", PASS, None))),
                        ("AuthorizationPolicy", (("into a DENY of every request", FAIL, "deny"),
                                                 ("to admit one more source", PASS, "allow")))):
        entry = next((e for e in policies if e["object"]["kind"] == kind and _key_of(e["object"]) in solved), None)
        if entry is None:
            continue
        key = _key_of(entry["object"])
        for what, want, new in edits:
            if new is None:
                new = {"hard": {r: str(int((number(v) or 0) * 2)) for r, v in (entry["spec"].get("hard") or {}).items()}}
            elif new == "deny":
                new = {**copy_data(entry["spec"]), "action": "DENY", "rules": [{}]}
            elif new == "allow":
                if (entry["spec"].get("action") or "ALLOW") != "ALLOW" or not entry["spec"].get("rules"):
                    continue
                new = {**copy_data(entry["spec"]), "rules": [*copy_data(entry["spec"]["rules"]), {
                    "from": [{"source": {"namespaces": [key[1]]}}]}]}
            edited = dict(solved)
            edited[key] = {**copy_data(solved[key]), "spec": new}
            yield Case(f"the application's own {kind} {key[2]} edited {what}", "mitigate", want,
                       state=render(edited, found))
        yield Case(f"the application's own {kind} {key[2]} deleted", "mitigate", PASS,
                   state=render({k: v for k, v in solved.items() if k != key}, found))
    state = render(solved, found)
    pods = [o for o in state["resources"]["items"] if o.get("kind") == "Pod" and (o.get("status") or {}).get("podIP")]
    for service in spec["services"]:
        mine = [p for p in pods if (p.get("metadata") or {}).get("namespace") == service["namespace"]
                and service["selector"] and all(((p.get("metadata") or {}).get("labels") or {}).get(a) == b
                                                for a, b in service["selector"].items())]
        if not mine or _key_of(service) not in solved:
            continue

        def endpoint_slice(address, manager):
            return {"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice", "metadata": {
                "name": f"{service['name']}-manual", "namespace": service["namespace"],
                "labels": {"kubernetes.io/service-name": service["name"],
                           "endpointslice.kubernetes.io/managed-by": manager}},
                "addressType": "IPv4", "endpoints": [{"addresses": [address], "conditions": {"ready": True}}],
                "ports": [{"port": p.get("port"), "protocol": p.get("protocol", "TCP")}
                          for p in service.get("ports") or [] if isinstance(p, dict)]}
        yield Case(f"an EndpointSlice written by hand adds a dead backend to Service {service['name']}", "mitigate",
                   FAIL, state=_with_items(state, state["resources"]["items"] + [endpoint_slice("10.255.255.1", "agent")]))
        yield Case(f"an EndpointSlice written by hand lists the pod of Service {service['name']}", "mitigate", PASS,
                   state=_with_items(state, state["resources"]["items"]
                                     + [endpoint_slice(mine[0]["status"]["podIP"], "agent")]))
        break
    used = sorted({str(p["spec"]["nodeName"]) for p in pods if (p.get("spec") or {}).get("nodeName")})
    if used:
        def node(name, unschedulable=False, taints=()):
            return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": {
                "kubernetes.io/hostname": name}}, "spec": {**({"unschedulable": True} if unschedulable else {}),
                                                          **({"taints": list(taints)} if taints else {})},
                "status": {"conditions": [{"type": "Ready", "status": "True"}]}}
        plane = node("corpus-control-plane", taints=[{"key": "node-role.kubernetes.io/control-plane",
                                                      "effect": "NoSchedule"}])
        cordon = [{"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}]
        yield Case("the nodes of the application schedulable, the control plane tainted as it is", "mitigate", PASS,
                   state=_with_items(state, state["resources"]["items"] + [plane] + [node(n) for n in used]))
        yield Case("every node of the application cordoned", "mitigate", FAIL,
                   state=_with_items(state, state["resources"]["items"] + [plane]
                                     + [node(n, True, cordon) for n in used]))
        yield Case("every node of the application tainted NoSchedule", "mitigate", FAIL,
                   state=_with_items(state, state["resources"]["items"] + [plane] + [node(n, taints=[
                       {"key": "maintenance", "value": "true", "effect": "NoSchedule"}]) for n in used]))
        # a NoExecute taint tolerated for a while only: the taint manager evicts each pod that long after, for ever
        bounded = copy_data(state["resources"]["items"])
        for pod in bounded:
            if pod.get("kind") == "Pod" and (pod.get("spec") or {}).get("nodeName") in used:
                pod["spec"]["tolerations"] = (pod["spec"].get("tolerations") or []) + [
                    {"key": "maintenance", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 600}]
        yield Case("every node of the application tainted NoExecute, its pods tolerating it for 600 seconds", "mitigate",
                   FAIL, state=_with_items(state, bounded + [plane] + [node(n, taints=[
                       {"key": "maintenance", "value": "true", "effect": "NoExecute"}]) for n in used]))


def _decoy_cases(scenario: ir.Scenario, derived: dict[str, dict]) -> Iterator[Case]:
    """The application's decoys (backends/decoys.py) change nothing a cluster does: an agent that deletes them
    (`kubectl delete networkpolicies --selector ...`, whatever looks like the fault) mends nothing and breaks
    nothing, so the verdicts stay those of the states that hold them."""
    from ..backends.decoys import decoys

    keys = {_key(o) for o in decoys(scenario)}
    if not keys:
        return
    for name, want in (("solved", PASS), ("faulty", FAIL)):
        state = copy_data(derived[name])
        state["resources"]["items"] = [o for o in state["resources"]["items"] if _key(o) not in keys]
        yield Case(f"the {name} state with the application's decoys deleted", "mitigate", want, state=state)


def _ingress_route_cases(m: dict, found) -> Iterator[Case]:
    """An Ingress is judged by which requests reach which Service port: with the fault's route fixed, another
    route of the same Ingress re-pointed at another Service, a prefix path made `Exact` (its sub-paths no
    longer match), a class no controller serves, a rewrite of the path the backend is sent, or an annotation that
    refuses every request (an allow-list, a deny-list, an external auth service), fails; a port
    named by its number instead of its name (the same port) passes, and so does the Service a fault's backend
    names created as a copy of the healthy one (on an Ingress no fault deletes: one a fault deletes must come back
    as it was, `restored.REF`)."""
    for entry in _not_restored({"mitigation": m}, m.get("routes") or [])[:2]:
        ref = entry["object"]
        key = (ref["kind"], ref["namespace"], ref["name"])
        if key not in found.solved:
            continue
        paths = [(i, j, p) for i, rule in enumerate(found.solved[key]["spec"].get("rules") or [])
                 for j, p in enumerate((rule.get("http") or {}).get("paths") or [])
                 if isinstance((p.get("backend") or {}).get("service"), dict)]
        services = sorted({n for (kind, ns, n) in found.solved if kind == "Service" and ns == ref["namespace"]})
        cases = []
        for i, j, p in paths:
            others = [n for n in services if n != p["backend"]["service"]["name"]]
            if others:
                def repoint(o, i=i, j=j, to=others[0]):
                    o["spec"]["rules"][i]["http"]["paths"][j]["backend"]["service"]["name"] = to
                cases.append((f"its route {p.get('path')} of rule {i} re-pointed at service {others[0]}", FAIL,
                              repoint))
                break
        prefixed = [(i, j, p) for i, j, p in paths if p.get("pathType") in ("Prefix", "ImplementationSpecific")]
        if prefixed:
            i, j, p = prefixed[-1]
            cases.append((f"its path {p.get('path')} of rule {i} made Exact", FAIL,
                          lambda o, i=i, j=j: o["spec"]["rules"][i]["http"]["paths"][j].update(pathType="Exact")))
        cases.append(("given a class no controller serves", FAIL,
                      lambda o: o["spec"].update(ingressClassName="itbench-unserved")))
        cases.append(("given a rewrite-target annotation", FAIL, lambda o: o["metadata"].setdefault(
            "annotations", {}).update({"nginx.ingress.kubernetes.io/rewrite-target": "/"})))
        # annotations that refuse every request before it reaches the backend (403, a failing auth subrequest)
        for what, annotation, value in (("an allow-list of 127.0.0.1/32 only", "whitelist-source-range", "127.0.0.1/32"),
                                        ("a deny-list of every address", "denylist-source-range", "0.0.0.0/0"),
                                        ("an external auth service that is not there", "auth-url",
                                         "http://auth.invalid/check")):
            if annotation not in ((entry["healthy"].get("annotations") or {}) if isinstance(entry["healthy"], dict)
                                  else {}):
                cases.append((f"given {what}", FAIL, lambda o, a=annotation, v=value: o["metadata"].setdefault(
                    "annotations", {}).update({f"nginx.ingress.kubernetes.io/{a}": v})))
        named = [(i, j, p) for i, j, p in paths if (p["backend"]["service"].get("port") or {}).get("name")]
        for i, j, p in named[:1]:
            service = found.solved.get(("Service", ref["namespace"], p["backend"]["service"]["name"]))
            port = next((q.get("port") for q in ((service or {}).get("spec") or {}).get("ports") or []
                         if q.get("name") == p["backend"]["service"]["port"]["name"]), None)
            if isinstance(port, int):
                def by_number(o, i=i, j=j, port=port):
                    o["spec"]["rules"][i]["http"]["paths"][j]["backend"]["service"]["port"] = {"number": port}
                cases.append(("a route's port named by its number", PASS, by_number))
        for what, want, edit in cases:
            changed = _edited(found.solved, key, edit)
            if changed is not None:
                yield Case(f"{ref['name']} fixed, {what}", "mitigate", want, state=render(changed, found))
        # a route sent to a copy of its Service under another name (the same pods, the same port) reaches the same
        for i, j, p in paths[:1]:
            source = found.solved.get(("Service", ref["namespace"], p["backend"]["service"]["name"]))
            if source is None or not (source.get("spec") or {}).get("selector"):
                continue
            twin = copy_data(source)
            twin["metadata"] = {k: v for k, v in twin["metadata"].items() if k in ("namespace", "labels")}
            twin["metadata"]["name"] = source["metadata"]["name"] + "-copy"
            for field in ("clusterIP", "clusterIPs"):
                twin["spec"].pop(field, None)

            def copied(o, i=i, j=j, name=twin["metadata"]["name"]):
                o["spec"]["rules"][i]["http"]["paths"][j]["backend"]["service"]["name"] = name
            changed = _edited(found.solved, key, copied)
            changed[("Service", ref["namespace"], twin["metadata"]["name"])] = twin
            yield Case(f"{ref['name']} fixed, its route {p.get('path')} of rule {i} sent to a copy of its Service",
                       "mitigate", PASS, state=render(changed, found))
        yield from _created_backend_cases(m, found, ref, key)


def _created_backend_cases(m: dict, found, ref: dict, key: tuple) -> Iterator[Case]:
    """A backend a fault pointed at a Service that does not exist, left so, the Service it names created instead: as
    a copy of the healthy backend (the same pods, the same port: pass), or selecting another Service's pods (fail)."""
    changes = [c for f in m["faults"] for e in f["fields"] if _key_of(e["object"]) == key for c in e["changes"]
               if [s for s in c["path"] if isinstance(s, str)][-3:] == ["backend", "service", "name"]
               and isinstance(c.get("healthy"), str) and isinstance(c.get("faulty"), str)]
    for change in changes[:1]:
        source = found.solved.get(("Service", ref["namespace"], change["healthy"]))
        if source is None or ("Service", ref["namespace"], change["faulty"]) in found.solved \
                or not (source.get("spec") or {}).get("selector"):
            continue
        other = next((o for k, o in sorted(found.solved.items()) if k[0] == "Service" and k[1] == ref["namespace"]
                      and (o.get("spec") or {}).get("selector") not in (None, {}, source["spec"]["selector"])), None)
        for what, want, selector in (("a copy of the healthy backend", PASS, source["spec"]["selector"]),
                                     ("selecting another Service's pods", FAIL,
                                      (other or {}).get("spec", {}).get("selector"))):
            if not selector:
                continue
            twin = copy_data(source)
            twin["metadata"] = {k: v for k, v in twin["metadata"].items() if k in ("namespace", "labels")}
            twin["metadata"]["name"] = change["faulty"]
            twin["spec"]["selector"] = dict(selector)
            for field in ("clusterIP", "clusterIPs"):
                twin["spec"].pop(field, None)
            changed = _edited(found.solved, key, lambda o: _set_at(o, change["path"], change["faulty"]))
            if changed is None:
                continue
            changed[("Service", ref["namespace"], change["faulty"])] = twin
            yield Case(f"{ref['name']}'s backend left at {change['faulty']}, that Service created as {what}",
                       "mitigate", want, state=render(changed, found))


def _cron_cadence_cases(ref: dict, key: tuple, found) -> Iterator[Case]:
    """A CronJob the fix leaves on its healthy cadence, with runs that can finish, passes: the same cadence at
    other minutes, more often, a longer starting or job deadline. One made never or rarely to run (a date
    that never comes, the 29th of February, once a year), to start no run in time (a starting deadline of 0)
    or to have every run killed or start no pod (a job deadline of a second, its jobs suspended, parallelism
    0) fails."""
    from ..runtime.state import cron_longest_wait

    cron = found.solved.get(key)
    if cron is None:
        return
    healthy = (cron.get("spec") or {}).get("schedule")
    wait = cron_longest_wait(healthy)
    job = ((cron.get("spec") or {}).get("jobTemplate") or {}).get("spec") or {}
    deadline = job.get("activeDeadlineSeconds")
    cases = [(f"on the date {s!r}", FAIL, lambda o, s=s: o["spec"].update(schedule=s))
             for s in ("0 0 30 2 *", "0 0 29 2 *", "@yearly", "@annually")]
    cases += [("with startingDeadlineSeconds 0", FAIL, lambda o: o["spec"].update(startingDeadlineSeconds=0)),
              ("with startingDeadlineSeconds 300", PASS, lambda o: o["spec"].update(startingDeadlineSeconds=300)),
              ("its jobs given activeDeadlineSeconds 1", FAIL,
               lambda o: o["spec"]["jobTemplate"]["spec"].update(activeDeadlineSeconds=1)),
              ("its jobs created suspended", FAIL, lambda o: o["spec"]["jobTemplate"]["spec"].update(suspend=True)),
              ("its jobs at parallelism 0", FAIL, lambda o: o["spec"]["jobTemplate"]["spec"].update(parallelism=0)),
              ("its jobs at completions 0", FAIL, lambda o: o["spec"]["jobTemplate"]["spec"].update(completions=0))]
    if wait and wait >= 2 and wait < 60 and 60 % wait == 0:  # every N minutes: the same cadence a minute later
        cases.append((f"on the same cadence a minute later (1-59/{wait:g})", PASS,
                      lambda o: o["spec"].update(schedule=f"1-59/{wait:g} * * * *")))
    if wait and wait > 1:
        cases.append(("run every minute", PASS, lambda o: o["spec"].update(schedule="* * * * *")))
    if isinstance(deadline, int):
        cases.append(("its jobs given a longer deadline", PASS,
                      lambda o: o["spec"]["jobTemplate"]["spec"].update(activeDeadlineSeconds=deadline * 2)))
    for what, want, edit in cases:
        changed = _edited(found.solved, key, edit)
        if changed is not None:
            yield Case(f"{ref['name']} fixed, {what}", "mitigate", want, state=render(changed, found))


def _cron_run_cases(m: dict, solved: dict) -> Iterator[Case]:
    """A CronJob `complete` names, captured while its next run is in progress (`status.active`, its schedule
    stamped, no success yet): after a last success at or after the fix, pass; after one before it (no run has
    succeeded under the fix), fail."""
    for pred in m["predicates"]:
        ref = pred.get("target") or {}
        if pred["kind"] != "state" or pred.get("state") != "complete" or ref.get("kind") != "CronJob":
            continue
        key = (ref["kind"], ref["namespace"], ref["name"])
        cron = next((o for o in solved["resources"]["items"] if _key(o) == key), None)
        succeeded = ((cron or {}).get("status") or {}).get("lastSuccessfulTime")
        if not succeeded:
            continue
        running = {**(cron.get("status") or {}), "lastScheduleTime": FIXED_AT, "active": [
            {"apiVersion": "batch/v1", "kind": "Job", "namespace": ref["namespace"], "name": f"{ref['name']}-29000010"}]}
        for fixed_at, want, when in ((succeeded, PASS, "at"), (FIXED_AT, FAIL, "before")):
            state = _with_edit(solved, key, lambda o: o.update(status=copy.deepcopy(running)))
            yield Case(f"{ref['name']}: a run in progress after a last success {when} the fix", "mitigate", want,
                       state={**state, "fixed_at": fixed_at})
        # the run listed active was created suspended: it starts no pod, so no run is in progress
        job = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {
            "name": f"{ref['name']}-29000010", "namespace": ref["namespace"],
            "ownerReferences": [{"apiVersion": "batch/v1", "kind": "CronJob", "name": ref["name"]}]},
            "spec": {**copy.deepcopy(((cron.get("spec") or {}).get("jobTemplate") or {}).get("spec") or {}),
                     "suspend": True},
            "status": {"conditions": [{"type": "Suspended", "status": "True"}]}}
        state = _with_edit(solved, key, lambda o: o.update(status=copy.deepcopy(running)))
        state = {**state, "fixed_at": succeeded,
                 "resources": {**state["resources"], "items": state["resources"]["items"] + [job]}}
        yield Case(f"{ref['name']}: the run listed in progress after a last success at the fix was created "
                   "suspended (it starts no pod)", "mitigate", FAIL, state=state)


def _repoint(template: dict, kind: str, old: str, new: str) -> None:
    """Every reference of a pod template to the ConfigMap or Secret `old` re-pointed at `new`."""
    pod = template.get("spec") or {}
    for volume in pod.get("volumes") or []:
        nodes = [(volume.get("configMap"), "name", "ConfigMap"), (volume.get("secret"), "secretName", "Secret")]
        nodes += [(src.get(k), "name", kd) for src in (volume.get("projected") or {}).get("sources") or []
                  for k, kd in (("configMap", "ConfigMap"), ("secret", "Secret"))]
        for node, key, kd in nodes:
            if isinstance(node, dict) and kd == kind and node.get(key) == old:
                node[key] = new
    ref_key, from_key = ("configMapKeyRef", "configMapRef") if kind == "ConfigMap" else ("secretKeyRef", "secretRef")
    for container in (pod.get("containers") or []) + (pod.get("initContainers") or []):
        refs = [(e.get("valueFrom") or {}).get(ref_key) for e in container.get("env") or []]
        refs += [e.get(from_key) for e in container.get("envFrom") or []]
        for ref in refs:
            if isinstance(ref, dict) and ref.get("name") == old:
                ref["name"] = new


def _moved(found: Objects, ref: dict, workloads, source: dict | None, named: dict | None,
           copy_name: str | None = None) -> dict:
    """The solved manifests with the ConfigMap or Secret `ref` held as `named` (None: deleted) and a copy of
    `source` under `copy_name` (default: NAME-fixed) that every workload of `workloads` is pointed at instead."""
    key = (ref["kind"], ref["namespace"], ref["name"])
    copy_name = copy_name or ref["name"] + "-fixed"
    out = dict(found.solved)
    if named is None:
        out.pop(key, None)
    else:
        out[key] = copy_data(named)
    if source is not None:
        twin = copy_data(source)
        twin["metadata"] = {k: v for k, v in twin["metadata"].items() if k in ("namespace", "labels")}
        twin["metadata"]["name"] = copy_name
        out[(ref["kind"], ref["namespace"], copy_name)] = twin
    for w in workloads:
        obj = copy_data(out[w])
        _repoint(obj["spec"]["template"], ref["kind"], ref["name"], copy_name)
        out[w] = obj
    return out


def _reader_workloads(reads) -> set:
    return {(r["workload"]["kind"], r["workload"]["namespace"], r["workload"]["name"]) for r in reads}


def _config_reader_cases(m: dict, found: Objects) -> Iterator[Case]:
    """A ConfigMap's or a Secret's faulty key is judged by what the workloads read: a copy under another name
    holding the healthy data, every reader pointed at it, the named object left faulty, passes; the named
    object restored while every reader is pointed at a copy holding the faulty data fails."""
    entries = {json.dumps(e["object"], sort_keys=True): e for f in m.get("faults", []) for e in f["fields"]
               if e.get("readers")}
    for entry in list(entries.values())[:2]:
        ref = entry["object"]
        key = (ref["kind"], ref["namespace"], ref["name"])
        if key not in found.solved or key not in found.faulty:
            continue
        workloads = _reader_workloads(r for rs in entry["readers"].values() for r in rs)
        if not all(w in found.solved for w in workloads):
            continue
        yield Case(f"{ref['name']}: a new {ref['kind']} with the healthy data, its readers pointed at it, the named "
                   "one left faulty", "mitigate", PASS,
                   state=render(_moved(found, ref, workloads, found.solved[key], found.faulty[key]), found))
        yield Case(f"{ref['name']}: the named {ref['kind']} restored, its readers pointed at a copy holding the "
                   "faulty data", "mitigate", FAIL,
                   state=render(_moved(found, ref, workloads, found.faulty[key], found.solved[key]), found))


def _other_data(obj: dict, forms: dict) -> dict:
    """A ConfigMap or Secret with every value of other meaning (JSON or YAML held in it as other data)."""
    out = copy_data(obj)
    for field in ("data", "stringData"):
        for k, v in (out.get(field) or {}).items():
            out[field][k] = json.dumps({"itbench-other": k}) if k in forms else f"{v}-other"
    return out


def _deleted_config_cases(m: dict, found: Objects) -> Iterator[Case]:
    """A ConfigMap or Secret the fault deleted is judged by what the workloads read: recreated under another
    name with the healthy data, its readers pointed at it, the named one left deleted, passes, and so does the
    named one recreated as it was with its readers reading it as `optional`; the named one recreated with
    other data, its readers pointed at a new one holding other data beside the named one restored, or their
    references made `optional` with it left deleted (the pods start and read nothing), fail."""
    for entry in m["restored"]:
        ref = entry["object"]
        key = (ref["kind"], ref["namespace"], ref["name"])
        if not entry.get("readers") or key not in found.solved or key in found.faulty:
            continue
        workloads = _reader_workloads(r for rs in entry["readers"].values() for r in rs)
        if not all(w in found.solved for w in workloads):
            continue
        healthy, other = found.solved[key], _other_data(found.solved[key], entry.get("forms") or {})
        kind, name = ref["kind"], ref["name"]
        yield Case(f"{name}: recreated under another name with its healthy data, its readers pointed at it, the named "
                   f"{kind} left deleted", "mitigate", PASS, state=render(_moved(found, ref, workloads, healthy, None), found))
        yield Case(f"{name}: the named {kind} recreated with other data", "mitigate", FAIL,
                   state=render(_edited(found.solved, key, lambda o: o.update(_other_data(o, entry.get("forms") or {}))),
                                found))
        if kind == "ConfigMap" and isinstance(healthy.get("data"), dict) and healthy["data"]:
            # the kubelet writes `binaryData` keys as files like `data` keys; a variable reads `data` alone
            files = all("file" in r for rs in entry["readers"].values() for r in rs)
            yield Case(f"{name}: recreated with its data under binaryData (read as "
                       f"{'files only' if files else 'a variable too'})", "mitigate", PASS if files else FAIL,
                       state=render(_edited(found.solved, key, _as_binary), found))
        yield Case(f"{name}: the named {kind} restored, its readers pointed at a new one holding other data", "mitigate",
                   FAIL, state=render(_moved(found, ref, workloads, other, healthy), found))
        optional = {k: v for k, v in found.solved.items() if k != key}
        for w in workloads:
            optional[w] = copy_data(optional[w])
            _made_optional(optional[w]["spec"]["template"], kind, name)
        yield Case(f"{name}: its readers reading it as optional, the {kind} left deleted", "mitigate", FAIL,
                   state=render(optional, found))
        optional[key] = healthy
        yield Case(f"{name}: recreated as it was, its readers reading it as optional", "mitigate", PASS,
                   state=render(optional, found))


def _option_cases(found: Objects, fault: dict) -> Iterator[Case]:
    """A fault whose harm is an option of its container's program (`harm_option`, `--requirepass`), judged by
    whether the program still gets it: the solved state with the fault's container and the objects it created
    as the fault left them, but the option taken out of its arguments, or given an empty value: pass; given
    another value: fail."""
    spec = fault.get("option")
    if not spec:
        return
    key = (spec["object"]["kind"], spec["object"]["namespace"], spec["object"]["name"])
    if key not in found.faulty or key not in found.solved:
        return
    option = spec["option"]

    def edited(how):
        out = dict(found.solved)
        out.update({k: v for k, v in found.faulty.items() if k not in found.solved})  # the Secret it reads
        obj = copy_data(found.faulty[key])
        for c in at_path(obj, ["spec", "template", "spec", "containers"]) or []:
            if spec.get("container") not in (None, c.get("name")):
                continue
            for field in ("command", "args"):
                words, kept, changed = c.get(field) or [], [], False
                for i, w in enumerate(words):
                    if i and words[i - 1] == option:
                        kept += [] if how is None else [how]
                        changed = True
                    elif w != option or how is not None:
                        kept.append(w)
                if changed:
                    c[field] = kept
                    if not kept:
                        del c[field]
        out[key] = obj
        return out

    for text, how, want in (("taken out of its arguments", None, PASS), ("given an empty value", "", PASS),
                            ("given another value", "itbench-other", FAIL)):
        yield Case(f"{key[2]}: the fault's {option} {text}, the rest of its changes left", "mitigate", want,
                   state=render(edited(how), found))


def _as_binary(obj: dict) -> bool:
    """A ConfigMap with its `data` moved to `binaryData`, base64-encoded (as `kubectl create configmap
    --from-file` writes a file it deems no UTF-8 text)."""
    obj["binaryData"] = {k: base64.b64encode(str(v).encode()).decode() for k, v in (obj.pop("data", None) or {}).items()}
    return True


def _claim_cases(found: Objects, key: tuple, claims: dict) -> Iterator[Case]:
    """A workload the fault pointed at a claim that cannot bind is mended as well by the claim it mounts made
    good: recreated under its name with another storage class and bound, larger, or another bound claim of
    that meaning the volume names instead, pass (fail where the fault mounts it over the content the image
    serves: a new volume there is empty); the claim kept of the fault's class, left Pending, asking less
    storage, or with another access mode, fails."""
    if key not in found.faulty:
        return
    for volume, want in claims.items():
        claim_key = ("PersistentVolumeClaim", key[1], want["claim"])
        if claim_key not in found.faulty:
            continue

        def state_with(edit_claim, name: str | None = None) -> dict:
            manifests = dict(found.solved)
            workload = copy.deepcopy(found.solved.get(key) or found.faulty[key])
            workload["spec"]["template"] = copy.deepcopy(found.faulty[key]["spec"]["template"])
            claim = copy.deepcopy(found.faulty[claim_key])
            claim.setdefault("status", {})["phase"] = "Bound"
            claim["spec"]["storageClassName"] = "corpus-standard"
            if name is not None:
                claim["metadata"]["name"] = name
                for v in workload["spec"]["template"]["spec"].get("volumes") or []:
                    if v.get("name") == volume:
                        v["persistentVolumeClaim"]["claimName"] = name
            edit_claim(claim)
            manifests[key] = workload
            manifests[("PersistentVolumeClaim", key[1], claim["metadata"]["name"])] = claim
            return render(manifests, found)

        def grown(claim: dict) -> None:
            claim["spec"]["resources"]["requests"]["storage"] = "100Gi"

        def shrunk(claim: dict) -> None:
            claim["spec"]["resources"]["requests"]["storage"] = "1Ki"

        def other_mode(claim: dict) -> None:
            claim["spec"]["accessModes"] = ["ReadOnlyMany"]

        from ..runtime.state import content_hidden, pod_spec
        # a claim mounted over the content the image serves hides it, bound or not (a new volume is empty)
        hides = any(content_hidden(c.get("image"), m.get("mountPath")) for k in ("containers", "initContainers")
                    for c in pod_spec(found.faulty[key]).get(k) or [] for m in c.get("volumeMounts") or []
                    if m.get("name") == volume)
        bound = FAIL if hides else PASS
        over = ", mounted over the content its image serves" if hides else ""
        label = f"{key[2]}: volume {volume}"
        yield Case(f"{label} kept, its claim recreated with a storage class that binds{over}", "mitigate", bound,
                   state=state_with(lambda c: None))
        yield Case(f"{label} kept, its claim recreated larger{over}", "mitigate", bound, state=state_with(grown))
        yield Case(f"{label} pointed at another bound claim of that meaning{over}", "mitigate", bound,
                   state=state_with(lambda c: None, name=f"{want['claim']}-corpus"))
        yield Case(f"{label} kept, its claim of the fault's storage class", "mitigate", FAIL,
                   state=state_with(lambda c: c["spec"].update(storageClassName=want.get("faulty_class"))))
        if want.get("faulty_class"):  # the missing class created: the claim of it binds
            made = state_with(lambda c: c["spec"].update(storageClassName=want["faulty_class"], volumeName="pvc-corpus"))
            made["resources"]["items"].append({"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
                                               "metadata": {"name": want["faulty_class"]},
                                               "provisioner": "rancher.io/local-path",
                                               "volumeBindingMode": "WaitForFirstConsumer"})
            yield Case(f"{label} kept, its claim of the fault's storage class bound once that class is created{over}",
                       "mitigate", bound, state=made)
        yield Case(f"{label} kept, its claim recreated but Pending", "mitigate", FAIL,
                   state=state_with(lambda c: c["status"].update(phase="Pending")))
        if want.get("storage"):
            yield Case(f"{label} kept, its claim asking less storage", "mitigate", FAIL, state=state_with(shrunk))
        if want.get("accessModes"):
            yield Case(f"{label} kept, its claim with another access mode", "mitigate", FAIL,
                       state=state_with(other_mode))
        yield Case(f"{label} pointed at another claim that is not there", "mitigate", FAIL,
                   state=_claimless(state_with(lambda c: None, name=f"{want['claim']}-corpus"), key[1]))


def _claimless(state: dict, namespace: str) -> dict:
    """The state without the PersistentVolumeClaims of a namespace (the kind still captured there)."""
    return _with_items(state, [o for o in state["resources"]["items"] if not (
        o.get("kind") == "PersistentVolumeClaim" and o.get("metadata", {}).get("namespace") == namespace)])


def _placement_cases(found: Objects, fault: dict) -> Iterator[Case]:
    """A fault that keeps pods from being scheduled is undone once they run where their placement lets them,
    whatever part is left: every part left with the pods scheduled on the node they are pinned to, where the
    fault left the pods it had running (the node exists: uncordoned); the DaemonSet an anti-affinity shuns
    removed alone; the anti-affinity made preferred, the DaemonSet left (pass)."""
    for ref in fault.get("placed") or []:
        key = (ref["kind"], ref["namespace"], ref["name"])
        workload = found.faulty.get(key)
        if workload is None:
            continue
        pod = ((workload.get("spec") or {}).get("template") or {}).get("spec") or {}
        pin = (pod.get("nodeSelector") or {}).get("kubernetes.io/hostname")
        if found.effects.get(key, ("", 0))[0] == "pending-new" and pin:
            state = copy.deepcopy(render(found.faulty, found))
            for item in state["resources"]["items"]:
                if item["kind"] == "Pod" and str(item["metadata"].get("name", "")).startswith(f"{key[2]}-"):
                    item["spec"]["nodeName"] = pin
            yield Case(f"every part of `{fault['fault']}` left, {key[2]}'s pods scheduled on {pin}, the node they "
                       "are pinned to", "mitigate", PASS, state=state)
            if pin in (fault.get("cordoned") or []):
                yield from _cordon_cases(found, fault, key, pin)
        daemons = [(c["kind"], c["namespace"], c["name"]) for c in fault["created"] if c["kind"] == "DaemonSet"]
        anti = (pod.get("affinity") or {}).get("podAntiAffinity") or {}
        terms = anti.get("requiredDuringSchedulingIgnoredDuringExecution")
        if daemons and terms:
            yield Case(f"`{fault['fault']}` undone by removing its DaemonSet alone, the anti-affinity left", "mitigate",
                       PASS, state=render({k: v for k, v in found.faulty.items() if k not in daemons}, found))
            relaxed = dict(found.faulty)
            relaxed[key] = copy.deepcopy(workload)
            spec = relaxed[key]["spec"]["template"]["spec"]["affinity"]["podAntiAffinity"]
            spec.pop("requiredDuringSchedulingIgnoredDuringExecution")
            spec["preferredDuringSchedulingIgnoredDuringExecution"] = [
                {"weight": 100, "podAffinityTerm": copy.deepcopy(t)} for t in terms]
            yield Case(f"`{fault['fault']}` undone by making the anti-affinity preferred, the DaemonSet left",
                       "mitigate", PASS, state=render(relaxed, found))
            confined = dict(found.faulty)
            for daemon in daemons:
                confined[daemon] = copy.deepcopy(found.faulty[daemon])
                confined[daemon]["spec"]["template"]["spec"]["nodeSelector"] = {"non-existing": "true"}
            state = render(confined, found)
            names = {d[2] for d in daemons}
            state["resources"]["items"] = [i for i in state["resources"]["items"] if not (i["kind"] == "Pod" and any(
                o.get("kind") == "DaemonSet" and o.get("name") in names for o in i["metadata"].get("ownerReferences") or []))]
            for item in state["resources"]["items"]:
                if _key(item) in daemons:  # its controller places no pod: no node matches
                    item["metadata"]["generation"] = 2
                    item["status"] = {"observedGeneration": 2, "desiredNumberScheduled": 0, "currentNumberScheduled": 0,
                                      "numberReady": 0, "numberMisscheduled": 0}
            yield Case(f"`{fault['fault']}` undone by confining its DaemonSet to no node, the anti-affinity left",
                       "mitigate", PASS, state=state)


def _cordon_cases(found: Objects, fault: dict, key: tuple, pin: str) -> Iterator[Case]:
    """A cordon the fault keeps is no fix once the pods are let past it: the workload's template tolerating the
    cordon's taint, or binding its pods by `nodeName` (the scheduler skipped), its pods running on the node
    (fail); the node captured uncordoned (pass, the toleration no harm then) or still cordoned (fail)."""
    def running(manifests: dict, nodes=()) -> dict:
        state = copy.deepcopy(render(manifests, found))
        for item in state["resources"]["items"]:
            if item["kind"] == "Pod" and str(item["metadata"].get("name", "")).startswith(f"{key[2]}-"):
                item["spec"]["nodeName"] = pin
        state["resources"]["items"] += [{"apiVersion": "v1", "kind": "Node", "metadata": {
            "name": pin, "labels": {"kubernetes.io/hostname": pin}}, "spec": {"unschedulable": True} if c else {}}
            for c in nodes]
        return state

    tolerant, bound = dict(found.faulty), dict(found.faulty)
    tolerant[key], bound[key] = copy.deepcopy(found.faulty[key]), copy.deepcopy(found.faulty[key])
    tolerant[key]["spec"]["template"]["spec"].setdefault("tolerations", []).append(
        {"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoSchedule"})
    bound[key]["spec"]["template"]["spec"]["nodeName"] = pin
    what = f"every part of `{fault['fault']}` left, {key[2]}'s pods on {pin}"
    yield Case(f"{what}, let past its cordon by a toleration of its taint", "mitigate", FAIL, state=running(tolerant))
    yield Case(f"{what}, bound there by nodeName past the scheduler", "mitigate", FAIL, state=running(bound))
    yield Case(f"{what}, tolerating the cordon, the node captured uncordoned", "mitigate", PASS,
               state=running(tolerant, [False]))
    yield Case(f"{what}, the node captured still cordoned", "mitigate", FAIL, state=running(found.faulty, [True]))


def _restricted(pod: dict) -> None:
    """A pod spec made to meet the restricted Pod Security Standard: non-root, the runtime's seccomp profile, no
    privilege escalation, every capability dropped, no host namespace."""
    for k in ("hostNetwork", "hostPID", "hostIPC"):
        pod.pop(k, None)
    pod.setdefault("securityContext", {}).update(runAsNonRoot=True, runAsUser=65534,
                                                 seccompProfile={"type": "RuntimeDefault"})
    for c in (pod.get("initContainers") or []) + (pod.get("containers") or []):
        sc = c.setdefault("securityContext", {})
        sc.pop("privileged", None)
        sc.update(allowPrivilegeEscalation=False, capabilities={"drop": ["ALL"]}, runAsNonRoot=True)


def _pod_security_cases(found: Objects, key: tuple, change: dict) -> Iterator[Case]:
    """A namespace's Pod Security enforce label is judged by the pods it refuses: kept at the fault's level with
    every workload of the namespace made to meet it, passes; with one workload still breaking it (the running
    pods were admitted before the label, the next ones are refused), fails."""
    from ..runtime.evaluator import POD_MAKERS, PSA_ENFORCE

    if key[0] != "Namespace" or change["path"] != ["metadata", "labels", PSA_ENFORCE] or key not in found.solved \
            or change.get("faulty") != "restricted":
        return
    labelled = copy.deepcopy(found.solved)
    labelled[key].setdefault("metadata", {}).setdefault("labels", {})[PSA_ENFORCE] = change["faulty"]
    makers = sorted(k for k, o in labelled.items() if k[0] in POD_MAKERS and k[1] == key[2]
                    and not (o.get("metadata") or {}).get("ownerReferences"))
    if not makers:
        return
    for k in makers:
        template = labelled[k]["spec"]["jobTemplate"]["spec"]["template"] if k[0] == "CronJob" \
            else labelled[k]["spec"]["template"]
        _restricted(template["spec"])
    yield Case(f"namespace {key[2]} still enforcing `{change['faulty']}`, every workload made to meet it", "mitigate",
               PASS, state=render(labelled, found))
    left = makers[0]
    labelled[left] = copy.deepcopy(found.solved[left])
    yield Case(f"namespace {key[2]} still enforcing `{change['faulty']}`, every workload made to meet it but "
               f"{left[2]}", "mitigate", FAIL, state=render(labelled, found))


def _resolver_cases(found: Objects, entry: dict) -> Iterator[Case]:
    """A pod's DNS settings the fault changed, judged by the resolver the kubelet writes: the healthy
    ClusterFirst spelled ClusterFirstWithHostNet off the host network, or `None` with the cluster DNS
    Service's IP, the namespace's search domains and `ndots:5` (that Service in the state): pass; `None`
    with another nameserver: fail."""
    from ..runtime.evaluator import CLUSTER_DNS, dns_path

    key = (entry["object"]["kind"], entry["object"]["namespace"], entry["object"]["name"])
    change = next((c for c in entry["changes"] if dns_path(c["path"]) and c["path"][-1] == "dnsPolicy"), None)
    obj = found.solved.get(key)
    if change is None or obj is None:
        return
    pod = change["path"][:-1]
    if at_path(obj, pod + ["dnsPolicy"]) not in (None, "ClusterFirst") or at_path(obj, pod + ["hostNetwork"]) is True:
        return
    dns = ("Service", CLUSTER_DNS[0], "kube-dns")
    searches = [f"{key[1]}.svc.cluster.local", "svc.cluster.local", "cluster.local"]

    def policy(name, server=None):
        def edit(o):
            _set_at(o, pod + ["dnsPolicy"], name)
            if server is not None:
                _set_at(o, pod + ["dnsConfig"], {"nameservers": [server], "searches": searches,
                                                 "options": [{"name": "ndots", "value": "5"}]})
            return True
        return edit

    cases = [("ClusterFirstWithHostNet (no host network: the cluster's resolver)", policy("ClusterFirstWithHostNet"), PASS),
             ("None with the cluster DNS Service's IP, the namespace's searches and ndots:5", policy("None", "10.96.0.10"),
              PASS),
             ("None with another nameserver, the namespace's searches and ndots:5", policy("None", "8.8.8.8"), FAIL)]
    if change.get("faulty") != "Default":
        # every other DNS field of the fault healthy (its nameserver gone), the pods given the node's resolver
        cases.append(("Default (the node's resolver), the fault's dnsConfig removed", policy("Default"), FAIL))
    for text, edit, want in cases:
        state = _edited(found.solved, key, edit)
        if state is None:
            continue
        state[dns] = {"apiVersion": "v1", "kind": "Service", "metadata": {
            "name": dns[2], "namespace": dns[1], "labels": dict(CLUSTER_DNS[1])}, "spec": {
            "clusterIP": "10.96.0.10", "selector": dict(CLUSTER_DNS[1]),
            "ports": [{"name": "dns", "port": 53, "protocol": "UDP"}]}}
        yield Case(f"{key[2]}: dnsPolicy {text}", "mitigate", want, state=render(state, found))


def at_path(obj, path: list):
    """The value at a path of plain keys (None where there is none)."""
    for seg in path:
        obj = obj.get(seg) if isinstance(obj, dict) and isinstance(seg, str) else None
    return obj


def _any_part_cases(found: Objects, fault: dict) -> Iterator[Case]:
    """A fault undone by any one of its parts (`undone_by any`, a declared kind's too): the solved state with
    every other part left as the fault made it passes, one for each part; every part left faulty fails."""
    from ..runtime.evaluator import any_parts

    parts = [("field", (e["object"]["kind"], e["object"]["namespace"], e["object"]["name"]), c)
             for e, c in any_parts(fault) if not c.get("governed_by")]
    parts += [("created", (r["kind"], r["namespace"], r["name"]), None) for r in fault["created"]]
    if len(parts) < 2:
        return

    def faulty_but(keep) -> dict | None:
        out = dict(found.solved)
        for index, (what, key, change) in enumerate(parts):
            if index == keep:
                continue
            if what == "created":
                if key not in found.faulty:
                    return None
                out[key] = found.faulty[key]
                continue
            if key not in out:
                return None
            obj = copy.deepcopy(out[key])
            if change.get("faulty") is None:
                if not _delete_at(obj, change["path"]):
                    return None
            elif not _set_at(obj, change["path"], copy.deepcopy(change["faulty"])):
                return None
            out[key] = obj
        return out

    for index, (what, key, change) in enumerate(parts):
        state = faulty_but(index)
        if state is not None:
            where = key[2] if what == "created" else f"{key[2]}: {_show(change['path'])}"
            if _part_relieves(fault, change, found.solved):
                yield Case(f"`{fault['fault']}` undone through {where} alone", "mitigate", PASS,
                           state=render(state, found))
            else:  # a part that, on its own, leaves the fault acting (a grace period beside an aggressive probe)
                yield Case(f"`{fault['fault']}` 'undone' through {where} alone, which leaves it acting", "mitigate",
                           FAIL, state=render(state, found))
    every = faulty_but(-1)
    if every is not None:
        yield from _guarded_probe_cases(found, fault, every)


def _guarded_probe_cases(found: Objects, fault: dict, every: dict) -> Iterator[Case]:
    """Every part of the fault left as it made it, each aggressive probe judged by its effect: guarded by a
    startup probe of the same check giving the healthy wait (the kubelet runs no liveness probe before it
    succeeds), or turned into a check that cannot fail: pass. A startup probe that gives no wait: fail."""
    from ..runtime.evaluator import probe_action, probe_budget, timed_probes
    from ..runtime.state import at

    timed = [(ref, path, changes) for ref, path, changes in timed_probes(fault).values()
             if path[-1] != "startupProbe"]
    if not timed:
        return

    def edited(edit) -> dict | None:
        out = dict(every)
        for ref, path, changes in timed:
            key = (ref["kind"], ref.get("namespace"), ref["name"])
            if key not in out:
                return None
            obj = copy.deepcopy(out[key])
            probe, container = at(obj, path), at(obj, path[:-1])
            if not isinstance(probe, dict) or probe_action(probe) is None or not isinstance(container, dict) \
                    or "startupProbe" in container:
                return None
            edit(container, path[-1], probe, {**probe, **{k: c.get("healthy") for k, c in changes.items()}})
            out[key] = obj
        return out

    def guard(wait):
        def edit(container, name, probe, healthy):
            period = max(1, int(probe_budget(healthy) // 10)) if wait else 1
            container["startupProbe"] = {**probe_action(probe), "periodSeconds": period if wait else 1,
                                         "failureThreshold": 10 if wait else 1}
        return edit

    def never_fails(container, name, probe, healthy):
        container[name] = {k: v for k, v in probe.items() if k not in ("httpGet", "tcpSocket", "grpc")} | \
            {"exec": {"command": ["true"]}}

    for text, edit, want in (("guarded by a startup probe of the same check giving the healthy wait", guard(True), PASS),
                             ("turned into a check that cannot fail (exec `true`)", never_fails, PASS),
                             ("'guarded' by a startup probe that gives no wait", guard(False), FAIL)):
        state = edited(edit)
        if state is not None:
            yield Case(f"`{fault['fault']}` left in place, its probe {text}", "mitigate", want,
                       state=render(state, found))


def _part_relieves(fault: dict, change: dict | None, solved: dict) -> bool:
    """Whether one part of a fault undone by any, restored alone, stops it, read off the spec: with probes the
    fault made aggressive, only when each then gives the container at least PROBE_SHARE of its healthy wait;
    with a resolver it changed, only through the pods' dnsPolicy (their DNS config alone restores no resolver).
    The probe's fields the fault left alone (a failureThreshold of 1) are read from the solved object, as the
    evaluator reads them from the observed one."""
    from ..runtime.evaluator import dns_path, probe_budget, PROBE_SHARE, timed_probes
    from ..runtime.state import at

    policies = [c for e in fault["fields"] for c in e["changes"] if dns_path(c["path"]) and c["path"][-1] == "dnsPolicy"]
    if change is not None and dns_path(change["path"]) and policies and change not in policies:
        return False  # the fault's dnsConfig undone while its dnsPolicy stays (`None` without it resolves nothing)
    for ref, path, changes in timed_probes(fault).values():
        obj = solved.get((ref["kind"], ref.get("namespace"), ref["name"]))
        probe = at(obj, path) if obj is not None else None
        base = probe if isinstance(probe, dict) else {}
        faulty = {k: c.get("faulty") for k, c in changes.items()}
        healthy = {**base, **{k: c.get("healthy") for k, c in changes.items()}}
        now = {**base, **{k: (c.get("healthy") if c is change else c.get("faulty")) for k, c in changes.items()}}
        if probe_budget(now) < PROBE_SHARE * probe_budget(healthy) and faulty != {k: healthy[k] for k in faulty}:
            return False
    return True


def _regrant_cases(found: Objects, key: tuple, change: dict) -> Iterator[Case]:
    """A Role (or ClusterRole) whose rules the fault changed, emptied while a new role and binding grant its
    healthy rules to the subjects of its bindings: the authorizer allows what it allowed, pass; the faulty
    rules kept beside that grant (the subjects may do more than when healthy), or the grant given to another
    subject, fail."""
    if key[0] not in ("Role", "ClusterRole") or change.get("path") != ["rules"] or key not in found.faulty \
            or not isinstance(change.get("healthy"), list) or change.get("governed_by"):
        return
    bindings = [b for (kind, namespace, _), b in found.solved.items()
                if kind in ("RoleBinding", "ClusterRoleBinding") and (b.get("roleRef") or {}).get("kind") == key[0]
                and (b.get("roleRef") or {}).get("name") == key[2] and (key[0] == "ClusterRole" or namespace == key[1])]
    if not bindings:
        return

    def regranted(subjects_of, emptied: bool = True) -> dict:
        out = dict(found.solved)
        out[key] = {**found.faulty[key], "rules": []} if emptied else found.faulty[key]
        name = f"{key[2]}-corpus-regrant"
        meta = {"name": name, **({"namespace": key[1]} if key[0] == "Role" else {})}
        out[(key[0], key[1], name)] = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": key[0],
                                       "metadata": dict(meta), "rules": copy.deepcopy(change["healthy"])}
        for index, binding in enumerate(bindings):
            kind = binding["kind"]
            namespace = (binding.get("metadata") or {}).get("namespace")
            meta = {"name": f"{name}-{index}", **({"namespace": namespace} if namespace else {})}
            out[(kind, namespace, meta["name"])] = {
                "apiVersion": "rbac.authorization.k8s.io/v1", "kind": kind, "metadata": meta,
                "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": key[0], "name": name},
                "subjects": subjects_of(binding)}
        return out

    same = (lambda b: copy.deepcopy(b.get("subjects") or []))
    yield Case(f"{key[2]} emptied, its healthy rules granted to its subjects by a new {key[0]} and binding",
               "mitigate", PASS, state=render(regranted(same), found))
    yield Case(f"{key[2]} left as the fault made it beside a new {key[0]} granting its healthy rules: more than "
               "healthy granted", "mitigate", FAIL, state=render(regranted(same, emptied=False), found))
    yield Case(f"{key[2]} emptied, its healthy rules granted to another subject", "mitigate",
               FAIL, state=render(regranted(lambda b: [{"kind": "User", "name": "corpus-someone-else"}]), found))


def _drop_limit(obj, path: list) -> None:
    """Remove the limit at a change's path (its container selected by identity)."""
    from ..runtime.state import nested

    node = obj
    for seg in path[:-1]:
        if isinstance(seg, list) and isinstance(node, list):
            node = next((i for i in node if isinstance(i, dict) and str(nested(i, seg[0])) == str(seg[1])), None)
        elif isinstance(seg, str) and isinstance(node, dict):
            node = node.get(seg)
        else:
            return
        if node is None:
            return
    if isinstance(node, dict):
        node.pop(path[-1], None)


def _delete_at(obj, path: list) -> bool:
    """Remove the value at a plain path of keys (a change the fault made by removing a field)."""
    node = obj
    for seg in path[:-1]:
        if not isinstance(seg, str) or not isinstance(node, dict) or seg not in node:
            return False
        node = node[seg]
    if not isinstance(path[-1], str) or not isinstance(node, dict):
        return False
    node.pop(path[-1], None)
    return True


def _calls_policy(spec: dict, found: Objects, key: tuple, faulty: dict, dns: bool = True) -> dict | None:
    """A NetworkPolicy that admits, for the pods the policy `key` selects (one workload's), every call the
    application makes through them as the call graph says (into them from their callers on the ports their
    Services lead to, out of them to their callees on theirs), and the cluster's DNS; None where the graph
    shows no call for a direction the policy isolates."""
    from ..runtime.evaluator import CLUSTER_DNS, served_ports
    from ..runtime.state import policy_types, selector_matches

    selector = (faulty.get("spec") or {}).get("podSelector")
    workloads = {k: w for k, w in found.solved.items() if k[0] in ("Deployment", "StatefulSet", "DaemonSet")}

    def template(w: dict) -> dict:
        return (w.get("spec") or {}).get("template") or {}

    selected = [k for k, w in workloads.items() if k[1] == key[1]
                and selector_matches(selector, (template(w).get("metadata") or {}).get("labels") or {})]
    if len(selected) != 1:
        return None
    name = selected[0][2]

    def peer_of(component: str):
        found_key = next((k for k in sorted(workloads, key=lambda k: k[1] != key[1]) if k[2] == component), None)
        if found_key is None:
            return None
        peer = {"podSelector": {"matchLabels": dict((template(workloads[found_key]).get("metadata") or {})
                                                     .get("labels") or {})}}
        if found_key[1] != key[1]:
            peer["namespaceSelector"] = {"matchLabels": {"kubernetes.io/metadata.name": found_key[1]}}
        return peer, template(workloads[found_key])

    ingress, egress = [], []
    own = template(workloads[selected[0]])
    for a, b in spec["diagnosis"]["graph"] if spec.get("diagnosis") else []:
        if b == name and peer_of(a) is not None:
            ports = [{"port": n, "protocol": p} for n, p in served_ports(name, own, spec["services"])]
            ingress.append({"from": [peer_of(a)[0]], "ports": ports})
        if a == name and peer_of(b) is not None:
            peer, callee = peer_of(b)
            ports = [{"port": n, "protocol": p} for n, p in served_ports(b, callee, spec["services"])]
            egress.append({"to": [peer], "ports": ports})
    types = policy_types(faulty)
    if ("Ingress" in types and not ingress) or ("Egress" in types and not egress):
        return None
    if dns:
        egress.append({"to": [{"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": CLUSTER_DNS[0]}},
                               "podSelector": {"matchLabels": dict(CLUSTER_DNS[1])}}],
                       "ports": [{"port": n, "protocol": p} for n, p in CLUSTER_DNS[2]]})
    out = {"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
           "metadata": {"name": f"{key[2]}-corpus-calls", "namespace": key[1]},
           "spec": {"podSelector": copy.deepcopy(selector), "policyTypes": list(types)}}
    if "Ingress" in types:
        out["spec"]["ingress"] = ingress
    if "Egress" in types:
        out["spec"]["egress"] = egress
    return out


def _neutralised_cases(found: Objects, key: tuple, base: dict | None = None, graded: dict | None = None) \
        -> Iterator[Case]:
    """An object the fault created is judged by whether it still has the fault's effect: a NetworkPolicy edited
    to admit all traffic in every direction it declares, or kept beside a second policy that admits all to the
    pods it selects (policies are a union; an empty podSelector selects every pod), or admitting every
    namespace's pods; an Istio PeerAuthentication made PERMISSIVE, an AuthorizationPolicy made AUDIT or an
    ALLOW policy whose empty rule matches every request; a ResourceQuota raised far above what the namespace
    runs, pass; the policy kept with an allow rule for one peer (it still isolates from every other), a second
    policy admitting one port only, the quota raised but still below what the namespace runs, fail. `base`:
    the state the object is left in (the solved one; the faulty one for a fault undone by any part); `graded`:
    the evaluator's spec, whose call graph says what calls a policy beside it must admit."""
    from ..runtime.evaluator import pod_amount, QUOTA_PER_POD
    from ..runtime.state import policy_types, State

    faulty = found.faulty.get(key)
    if faulty is None:
        return
    left = dict(found.solved if base is None else base)
    left[key] = faulty
    state = render(left, found)
    if key[0] == "NetworkPolicy":
        spec = faulty.get("spec") or {}
        types = policy_types(faulty)

        def admit_all(obj: dict) -> None:
            for t in types:
                obj["spec"]["ingress" if t == "Ingress" else "egress"] = [{}]

        def one_peer(obj: dict) -> None:
            peer = {"podSelector": {"matchLabels": {"corpus.itbench.dev/peer": "one"}}}
            for t in types:
                obj["spec"]["ingress" if t == "Ingress" else "egress"] = [
                    {"from": [peer]} if t == "Ingress" else {"to": [peer]}]

        def every_namespace(obj: dict) -> None:
            for t in types:
                obj["spec"]["ingress" if t == "Ingress" else "egress"] = [
                    {"from" if t == "Ingress" else "to": [{"namespaceSelector": {}}]}]

        def to_block(block: dict):
            def edit(obj: dict) -> None:
                for t in types:
                    obj["spec"]["ingress" if t == "Ingress" else "egress"] = [
                        {"from" if t == "Ingress" else "to": [{"ipBlock": copy.deepcopy(block)}]}]
            return edit

        def beside(selector, rule: dict) -> dict:
            allow = {"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
                     "metadata": {"name": f"{key[2]}-corpus-allow", "namespace": key[1]},
                     "spec": {"podSelector": copy.deepcopy(selector), "policyTypes": list(types)}}
            for t in types:
                allow["spec"]["ingress" if t == "Ingress" else "egress"] = [copy.deepcopy(rule)]
            return _with_items(state, [*state["resources"]["items"], allow])

        yield Case(f"NetworkPolicy {key[2]} edited to admit all traffic", "mitigate", PASS,
                   state=_with_edit(state, key, admit_all))
        yield Case(f"NetworkPolicy {key[2]} edited to admit every namespace's pods", "mitigate", PASS,
                   state=_with_edit(state, key, every_namespace))
        yield Case(f"NetworkPolicy {key[2]} edited to admit only addresses no pod has", "mitigate", FAIL,
                   state=_with_edit(state, key, to_block({"cidr": "192.0.2.0/24"})))
        yield Case(f"NetworkPolicy {key[2]} kept beside a policy admitting all to the pods it selects", "mitigate",
                   PASS, state=beside(spec.get("podSelector") or {}, {}))
        yield Case(f"NetworkPolicy {key[2]} kept beside a policy admitting all to every pod", "mitigate", PASS,
                   state=beside({}, {}))
        calls = _calls_policy(graded, found, key, faulty) if graded is not None else None
        if calls is not None:
            yield Case(f"NetworkPolicy {key[2]} kept beside a policy admitting the calls the application makes "
                       "through the pods it selects", "mitigate", PASS,
                       state=_with_items(state, [*state["resources"]["items"], calls]))
            yield Case(f"NetworkPolicy {key[2]} edited to admit every address but the cloud metadata one",
                       "mitigate", PASS, state=_with_edit(state, key, to_block(
                           {"cidr": "0.0.0.0/0", "except": ["169.254.169.254/32"]})))
            if "Egress" in types:
                yield Case(f"NetworkPolicy {key[2]} kept beside a policy admitting those calls but not the "
                           "cluster's DNS", "mitigate", FAIL, state=_with_items(
                               state, [*state["resources"]["items"], _calls_policy(graded, found, key, faulty, False)]))
        yield Case(f"NetworkPolicy {key[2]} kept, admitting one peer only", "mitigate", FAIL,
                   state=_with_edit(state, key, one_peer))
        yield Case(f"NetworkPolicy {key[2]} kept beside a policy admitting one port only", "mitigate", FAIL,
                   state=beside(spec.get("podSelector") or {}, {"ports": [{"port": 1}]}))
    elif key[0] == "PeerAuthentication" and (faulty.get("spec") or {}).get("mtls"):
        def permissive(obj: dict) -> None:
            obj["spec"]["mtls"]["mode"] = "PERMISSIVE"

        yield Case(f"PeerAuthentication {key[2]} kept, PERMISSIVE", "mitigate", PASS,
                   state=_with_edit(state, key, permissive))
        selector = (faulty.get("spec") or {}).get("selector")
        templates = {k[2]: labels for k, o in found.solved.items() if k[0] in ("Deployment", "StatefulSet", "DaemonSet")
                     and k[1] == key[1] and (labels := ((o.get("spec") or {}).get("template") or {})
                                             .get("metadata", {}).get("labels"))}
        if not (selector or {}).get("matchLabels") and templates:
            def exception(name: str, labels: dict | None) -> dict:
                return {"apiVersion": faulty.get("apiVersion", "security.istio.io/v1"), "kind": "PeerAuthentication",
                        "metadata": {"name": name, "namespace": key[1]},
                        "spec": {**({"selector": {"matchLabels": dict(labels)}} if labels else {}),
                                 "mtls": {"mode": "PERMISSIVE"}}}

            yield Case(f"PeerAuthentication {key[2]} kept, every workload of its namespace given a PERMISSIVE one of "
                       "its own", "mitigate", PASS, state=_with_items(state, [
                           *state["resources"]["items"], *(exception(f"{n}-corpus-permissive", labels)
                                                           for n, labels in sorted(templates.items()))]))
            yield Case(f"PeerAuthentication {key[2]} kept beside a second namespace-wide one, PERMISSIVE", "mitigate",
                       FAIL, state=_with_items(state, [*state["resources"]["items"],
                                                       exception(f"{key[2]}-corpus-permissive", None)]))

            # of several namespace-wide policies Istio takes the oldest: a PERMISSIVE one created before the fault's
            # is the one in force (pass), one created after it is not (fail)
            def dated(obj: dict, at: str) -> dict:
                return {**obj, "metadata": {**obj["metadata"], "creationTimestamp": at}}

            for when, want in (("2026-01-01T00:00:00Z", PASS), ("2026-01-03T00:00:00Z", FAIL)):
                items = [dated(o, "2026-01-02T00:00:00Z") if _key(o) == key else o for o in state["resources"]["items"]]
                yield Case(f"PeerAuthentication {key[2]} kept beside a second namespace-wide one, PERMISSIVE, "
                           f"{'older' if want == PASS else 'newer'} than the fault's", "mitigate", want,
                           state=_with_items(state, [*items, dated(exception(f"{key[2]}-corpus-permissive", None),
                                                                   when)]))
    elif key[0] == "AuthorizationPolicy":
        def action(name: str, rules=None):
            def edit(obj: dict) -> None:
                obj["spec"]["action"] = name
                if rules is not None:
                    obj["spec"]["rules"] = rules
            return edit

        yield Case(f"AuthorizationPolicy {key[2]} kept, AUDIT", "mitigate", PASS, state=_with_edit(state, key, action("AUDIT")))
        yield Case(f"AuthorizationPolicy {key[2]} kept, ALLOW with a rule matching every request", "mitigate", PASS,
                   state=_with_edit(state, key, action("ALLOW", [{}])))
        if (faulty.get("spec") or {}).get("rules"):
            yield Case(f"AuthorizationPolicy {key[2]} kept, ALLOW of what it denied only", "mitigate", FAIL,
                       state=_with_edit(state, key, action("ALLOW")))
        if (faulty.get("spec") or {}).get("action") == "DENY" and (faulty.get("spec") or {}).get("rules"):
            yield from _deny_edited_cases(key, faulty, state)
    elif key[0] == "ResourceQuota":
        hard = (faulty.get("spec") or {}).get("hard") or {}
        if not hard or any(r not in QUOTA_PER_POD for r in hard):
            return
        pods = [p for p in State(state).by_kind.get(("Pod", key[1]), [])
                if (p.get("status") or {}).get("phase") not in ("Succeeded", "Failed")]
        amounts = {r: [pod_amount(p, r) for p in pods] for r in hard}
        if any(a is None for v in amounts.values() for a in v):
            yield from _limit_range_cases(key, hard, pods, amounts, state)
            return
        need = {r: sum(v) for r, v in amounts.items()}
        if any(v <= 0 for v in need.values()):
            return

        def set_hard(scale):
            def edit(obj: dict) -> None:
                obj["spec"]["hard"] = {r: str(int(need[r] * scale)) for r in hard}
                obj.pop("status", None)
            return edit

        yield Case(f"ResourceQuota {key[2]} raised far above what the namespace runs", "mitigate", PASS,
                   state=_with_edit(state, key, set_hard(10)))
        yield Case(f"ResourceQuota {key[2]} raised, but below what the namespace runs", "mitigate", FAIL,
                   state=_with_edit(state, key, set_hard(0.5)))
    elif str(faulty.get("apiVersion", "")).startswith("chaos-mesh.org/"):
        yield from _chaos_edited_cases(key, faulty, state)


def _limit_range_cases(key: tuple, hard: dict, pods: list, amounts: dict, state: dict) -> Iterator[Case]:
    """A quota a fault created on a compute resource the pods declare none of, kept beside a LimitRange giving
    every container a default of it (LimitRanger runs before ResourceQuota, so no pod is refused for declaring
    none): defaults the namespace's pods fit in with one pod more, passes; a default as large as the quota
    (one pod fills it), fails."""
    from ..runtime.evaluator import number, QUOTA_PER_POD

    wanted = {QUOTA_PER_POD[r][1]: number(v) for r, v in hard.items() if isinstance(QUOTA_PER_POD[r], tuple)}
    if not wanted or any(v is None or v <= 0 for v in wanted.values()):
        return
    containers = [len((p.get("spec") or {}).get("containers") or []) + len((p.get("spec") or {}).get("initContainers")
                                                                       or []) for p in pods]
    slots = sum(containers) + max(containers, default=1)  # every container's default, and one pod more's

    def declared(r):  # what the pods that declare the amount count already
        return sum(a for a in amounts[r] if a is not None)

    def figure(resource, value):
        return f"{max(int(value * 1000), 1)}m" if resource == "cpu" else str(max(int(value), 1))

    def limit_range(per: dict) -> dict:
        figures = {res: figure(res, v) for res, v in per.items()}
        return {"apiVersion": "v1", "kind": "LimitRange", "metadata": {"name": "corpus-defaults", "namespace": key[1]},
                "spec": {"limits": [{"type": "Container", "default": figures, "defaultRequest": figures}]}}

    small = {res: (v - max(declared(r) for r in hard if isinstance(QUOTA_PER_POD[r], tuple)
                             and QUOTA_PER_POD[r][1] == res)) / (4 * slots) for res, v in wanted.items()}
    # defaults below the limit floors the safeguards hold (a 12Mi memory limit starves a database) are no fix
    from ..backends.evaluator import LIMIT_FLOORS
    from ..runtime.state import number as quantity
    if all(v * 1000 >= 1 if res == "cpu" else v >= 1 for res, v in small.items()) and all(
            v >= (quantity(LIMIT_FLOORS[res]) or 0) for res, v in small.items() if res in LIMIT_FLOORS):
        yield Case(f"ResourceQuota {key[2]} kept, a LimitRange giving the pods defaults that fit in it", "mitigate",
                   PASS, state=_with_items(state, [*state["resources"]["items"], limit_range(small)]))
    yield Case(f"ResourceQuota {key[2]} kept, a LimitRange giving each pod a default as large as it", "mitigate",
               FAIL, state=_with_items(state, [*state["resources"]["items"], limit_range(wanted)]))


def _experiment_of(obj: dict) -> tuple[str, dict | None]:
    """(experiment kind, its spec) of a Chaos Mesh object, as it is held in `obj` (a Schedule's under its type's
    name): an edit of the spec edits the object."""
    spec = obj.get("spec") if isinstance(obj.get("spec"), dict) else {}
    if obj.get("kind") != "Schedule":
        return str(obj.get("kind")), spec
    kind = str(spec.get("type", ""))
    inner = next((v for k, v in spec.items() if str(k).lower() == kind.lower()), None)
    return kind, inner if isinstance(inner, dict) and isinstance(inner.get("selector"), dict) else None


def _chaos_edited_cases(key: tuple, faulty: dict, state: dict) -> Iterator[Case]:
    """A Chaos Mesh object a fault created, edited in place: selecting no pod, picking none by its mode (`fixed`
    of value 0), or, for a NetworkChaos, acting toward no peer or dropping 0 % of the packets, passes (a
    Schedule spawns its next experiment from the edited spec); kept with a smaller but real loss, fails."""
    kind, inner = _experiment_of(faulty)
    if inner is None:
        return

    def edit(change):
        def apply(obj: dict) -> None:
            change(_experiment_of(obj)[1])
        return apply

    name = f"{key[0]} {key[2]} kept"
    yield Case(f"{name}, selecting no pod", "mitigate", PASS, state=_with_edit(state, key, edit(
        lambda spec: spec.update(selector={**spec["selector"], "labelSelectors": {"corpus.itbench.dev/selects": "nothing"}}))))
    yield Case(f"{name}, its mode picking no pod (fixed, value 0)", "mitigate", PASS,
               state=_with_edit(state, key, edit(lambda spec: spec.update(mode="fixed", value="0"))))
    if kind == "NetworkChaos" and isinstance(inner.get("target"), dict):
        yield Case(f"{name}, its target picking no peer (fixed-percent, value 0)", "mitigate", PASS,
                   state=_with_edit(state, key, edit(lambda spec: spec["target"].update(mode="fixed-percent", value="0"))))
    if kind == "NetworkChaos" and inner.get("action") == "loss" and isinstance(inner.get("loss"), dict):
        yield Case(f"{name}, a loss of 0 %", "mitigate", PASS,
                   state=_with_edit(state, key, edit(lambda spec: spec["loss"].update(loss="0"))))
        yield Case(f"{name}, a loss of 30 %", "mitigate", FAIL,
                   state=_with_edit(state, key, edit(lambda spec: spec["loss"].update(loss="30"))))


def _deny_edited_cases(key: tuple, faulty: dict, state: dict) -> Iterator[Case]:
    """An Istio DENY policy a fault created, edited in place: denying only a method no request has, or
    selecting no pod the namespace runs, passes; re-aimed at every method the fault's rules left alone,
    narrowed to part of what it denied (a path
    prefix added), selecting a pod the namespace runs, or with a rule added beside its own, fails."""
    from ..runtime.evaluator import istio_rules_overlap

    denied = faulty["spec"]["rules"]
    other = {"to": [{"operation": {"methods": ["CORPUS-UNUSED"]}}]}

    def edit(change):
        def apply(obj: dict) -> None:
            change(obj["spec"])
        return apply

    def narrowed(spec: dict) -> None:
        for rule in spec["rules"]:
            ops = [e.get("operation") for e in rule.get("to") or [] if isinstance(e, dict)]
            if not ops:
                rule["to"] = [{"operation": {"paths": ["/corpus*"]}}]
            for op in ops:
                if isinstance(op, dict) and "paths" not in op:
                    op["paths"] = ["/corpus*"]

    def selecting(labels: dict):
        def apply(spec: dict) -> None:
            for k in ("targetRef", "targetRefs"):
                spec.pop(k, None)
            spec["selector"] = {"matchLabels": labels}
        return apply

    name = f"AuthorizationPolicy {key[2]} kept, DENY"
    if not any(istio_rules_overlap(other, d) for d in denied):
        yield Case(f"{name} of a method none of its rules matched only", "mitigate", PASS,
                   state=_with_edit(state, key, edit(lambda spec: spec.update(rules=[copy.deepcopy(other)]))))
    # judged by what it does to the application's requests: re-aimed at the methods the fault left alone, it
    # refuses the application's other requests
    named = sorted({str(m) for d in denied if isinstance(d, dict) for e in d.get("to") or [] if isinstance(e, dict)
                    for m in (e.get("operation") or {}).get("methods") or []}) or ["GET"]
    yield Case(f"{name} re-aimed at every method but {', '.join(named)}", "mitigate", FAIL,
               state=_with_edit(state, key, edit(lambda spec: spec.update(
                   rules=[{"to": [{"operation": {"notMethods": named}}]}]))))
    yield Case(f"{name}, narrowed to a path prefix of what it denied", "mitigate", FAIL,
               state=_with_edit(state, key, edit(narrowed)))
    yield Case(f"{name}, another rule beside its own", "mitigate", FAIL,
               state=_with_edit(state, key, edit(lambda spec: spec.update(rules=[copy.deepcopy(other), *spec["rules"]]))))
    pods = [o for o in state["resources"]["items"] if o.get("kind") == "Pod" and
            o.get("metadata", {}).get("namespace") == key[1] and o.get("metadata", {}).get("labels")]
    if pods:
        yield Case(f"{name}, selecting no pod the namespace runs", "mitigate", PASS,
                   state=_with_edit(state, key, edit(selecting({"corpus-selects": "nothing"}))))
        labels = dict(sorted(pods[0]["metadata"]["labels"].items())[:1])
        yield Case(f"{name}, selecting a pod the namespace runs ({', '.join(f'{k}={v}' for k, v in labels.items())})",
                   "mitigate", FAIL, state=_with_edit(state, key, edit(selecting(labels))))


def _harmless(obj: dict) -> dict | None:
    """A copy of an object a fault created that acts otherwise, and to no harm: a chaos experiment selecting
    no pod, a NetworkPolicy admitting all to the pods it selected, an AuthorizationPolicy that only logs, a
    PeerAuthentication that admits plain text, a quota far above any need, a workload of no replica. None for
    a kind with no such form here."""
    out = copy_data(obj)
    spec = out.get("spec")
    if not isinstance(spec, dict):
        return None
    nothing = {"labelSelectors": {"corpus.itbench.dev/selects": "nothing"}}
    if str(out.get("apiVersion", "")).startswith("chaos-mesh.org/"):
        inner = next((v for k, v in spec.items() if str(k).lower() == str(spec.get("type", "")).lower()), spec)
        if not isinstance(inner, dict) or "selector" not in inner:
            return None
        inner["selector"] = nothing
    elif out["kind"] == "NetworkPolicy":
        for direction in ("ingress", "egress"):
            spec[direction] = [{}]
        spec["policyTypes"] = ["Ingress", "Egress"]
    elif out["kind"] == "AuthorizationPolicy":
        spec["action"] = "AUDIT"
    elif out["kind"] == "PeerAuthentication":
        spec["mtls"] = {"mode": "PERMISSIVE"}
        spec.pop("portLevelMtls", None)
    elif out["kind"] == "ResourceQuota":
        # a room for far more pods than any namespace runs: an amount of memory or CPU, however large, refuses
        # the pods that declare none
        spec["hard"] = {"pods": "100000"}
        out.pop("status", None)
    elif out["kind"] in ("Deployment", "StatefulSet", "ReplicaSet"):
        spec["replicas"] = 0
    else:
        return None
    return out


def _twin_cases(spec: dict, found: Objects, ref: dict, base: dict | None = None, want: str = FAIL) \
        -> Iterator[Case]:
    """An object the fault created is judged by what it does, never by its name: the object renamed (and
    relabelled), or copied into another namespace where its acting part names whom it acts on (a chaos
    experiment's selector), with its original gone, is the fault left (`want`: fail, unless the fault is undone
    whatever is left of it); a paused copy of a chaos experiment, or a copy that acts otherwise and to no harm
    (`_harmless`) under another name, is no fault. `base`: the state the copies are added to (the solved one;
    the faulty one for a fault undone by any part)."""
    key = (ref["kind"], ref["namespace"], ref["name"])
    faulty = found.faulty.get(key)
    if faulty is None or "acting" not in ref:
        return
    left = dict(found.solved if base is None else base)
    left.pop(key, None)

    def copied(obj: dict, name: str, namespace=None, labels=None) -> dict:
        out = copy_data(obj)
        out["metadata"] = {**out["metadata"], "name": name, "namespace": namespace or key[1]}
        if labels is not None:
            out["metadata"]["labels"] = labels
        return {**left, _key(out): out}

    name = f"{key[2]}-2"
    yield Case(f"{key[0]} {key[2]} renamed to {name}", "mitigate", want, state=render(copied(faulty, name), found))
    yield Case(f"{key[0]} {key[2]} renamed and relabelled", "mitigate", want, state=render(
        copied(faulty, f"corpus-{key[2]}", labels={"corpus.itbench.dev/copy": "yes"}), found))
    elsewhere = sorted({w["namespace"] for w in spec["workloads"] if w["namespace"] and w["namespace"] != key[1]})
    if key[1] and elsewhere and "namespace" not in ref["acting"]:
        yield Case(f"{key[0]} {key[2]} moved to namespace {elsewhere[0]}", "mitigate", want,
                   state=render(copied(faulty, key[2], namespace=elsewhere[0]), found))
    if base is not None:
        return  # the rest keeps the solved state passing: beside a faulty one, it proves nothing
    if faulty.get("apiVersion", "").startswith("chaos-mesh.org/"):
        paused = copy_data(faulty)
        paused["metadata"]["annotations"] = {**(paused["metadata"].get("annotations") or {}),
                                             "experiment.chaos-mesh.org/pause": "true"}
        yield Case(f"{key[0]} {key[2]} renamed, paused", "mitigate", PASS, state=render(copied(paused, name), found))
    harmless = _harmless(faulty)
    if harmless is not None:
        yield Case(f"{key[0]} {key[2]} deleted, another of its kind acting otherwise to no harm", "mitigate", PASS,
                   state=render(copied(harmless, f"corpus-{key[2]}"), found))
    for what, other, verdict in _copies_by_effect(faulty):
        if verdict == FAIL and "template" in (faulty.get("spec") or {}):
            verdict = want  # a workload's copy doing what it did is judged as the renamed one (the fault's effect)
        yield Case(f"{key[0]} {key[2]} deleted, {what}", "mitigate", verdict,
                   state=render(copied(other, f"corpus-{key[2]}"), found))


def _label_expressions(labels: dict) -> list:
    return [{"key": k, "operator": "In", "values": [v]} for k, v in sorted(labels.items())]


def _copies_by_effect(obj: dict) -> Iterator[tuple[str, dict, str]]:
    """Copies of an object a fault created that act on the same pods as it, written otherwise, with the verdict
    each must get: a NetworkPolicy selecting its pods by `matchExpressions`, a namespace-wide deny of its
    directions, a DENY AuthorizationPolicy applied to its whole namespace (each the fault still); a chaos
    experiment selecting its pods by `expressionSelectors` with a percentage of every pod, as the experiment
    a Schedule spawns (left by `--cascade=orphan`), both the fault still, and that experiment stopped by its
    controller (its duration over), no fault; a NetworkChaos copy with its selector and target swapped, or
    partitioning what a loss of 100 % dropped, the fault still; a ResourceQuota copy stricter by a pod, of its
    amounts under their other names (`requests.memory` for `memory`), or beside another key, the fault still; a
    DENY AuthorizationPolicy copy denying every method but the fault's, the fault still (it refuses the
    application's other requests); a workload copy with one replica more, a pod template label of its own or
    another revision history, the fault still (its pods do what the fault's did)."""
    from ..runtime.state import number

    spec = obj.get("spec") if isinstance(obj.get("spec"), dict) else {}
    if obj["kind"] == "NetworkPolicy":
        labels = (spec.get("podSelector") or {}).get("matchLabels")
        if isinstance(labels, dict) and labels and not (spec.get("podSelector") or {}).get("matchExpressions"):
            out = copy_data(obj)
            out["spec"]["podSelector"] = {"matchExpressions": _label_expressions(labels)}
            yield "a copy selecting its pods by matchExpressions", out, FAIL
            deny = copy_data(obj)
            deny["spec"] = {"podSelector": {}, "policyTypes": list(spec.get("policyTypes") or ["Ingress"])}
            yield "a namespace-wide deny of its directions", deny, FAIL
        return
    if obj["kind"] == "ResourceQuota" and spec.get("hard") and not spec.get("scopes") and not spec.get("scopeSelector"):
        hard = spec["hard"]
        alias = {"memory": "requests.memory", "cpu": "requests.cpu", "pods": "count/pods"}
        stricter = {r: str(int(number(v)) - 1) if r in ("pods", "count/pods") and number(v) else v for r, v in hard.items()}
        if stricter != hard:
            yield "a stricter quota (one pod fewer)", _with_hard(obj, stricter), FAIL
        if any(r in alias for r in hard):
            yield "a quota of its amounts under their other names", _with_hard(
                obj, {alias.get(r, r): v for r, v in hard.items()}), FAIL
        yield "a quota of its amounts beside another key", _with_hard(obj, {**hard, "configmaps": "1000"}), FAIL
        return
    if obj["kind"] == "AuthorizationPolicy" and spec.get("action") == "DENY" and spec.get("rules") \
            and (spec.get("targetRef") or spec.get("selector")):
        wide = copy_data(obj)
        for k in ("targetRef", "targetRefs", "selector"):
            wide["spec"].pop(k, None)
        yield "a copy denying as much for every workload of its namespace", wide, FAIL
        # judged by what it does to the application's requests: a DENY of the other methods refuses those
        others = copy_data(obj)
        named = sorted({str(m) for r in spec["rules"] if isinstance(r, dict) for e in r.get("to") or []
                        if isinstance(e, dict) for m in (e.get("operation") or {}).get("methods") or []}) or ["GET"]
        others["spec"]["rules"] = [{"to": [{"operation": {"notMethods": named}}]}]
        yield f"a copy denying every method but {', '.join(named)}", others, FAIL
        return
    template = spec.get("template") if isinstance(spec.get("template"), dict) else None
    if obj["kind"] in ("Deployment", "StatefulSet", "ReplicaSet", "DaemonSet", "Job") and template \
            and isinstance(template.get("spec"), dict):
        # a workload's harm is what its pods do: its replicas, labels and rollout bookkeeping change none of it
        if obj["kind"] != "DaemonSet" and obj["kind"] != "Job":
            more = copy_data(obj)
            more["spec"]["replicas"] = int(number(spec.get("replicas", 1)) or 1) + 1
            yield "a copy with one replica more", more, FAIL
        labelled = copy_data(obj)
        labelled["spec"]["template"].setdefault("metadata", {}).setdefault("labels", {})["corpus-tier"] = "copy"
        yield "a copy with a pod template label of its own", labelled, FAIL
        if obj["kind"] != "Job":
            history = copy_data(obj)
            history["spec"]["revisionHistoryLimit"] = 3
            yield "a copy keeping another revision history", history, FAIL
        return
    if not str(obj.get("apiVersion", "")).startswith("chaos-mesh.org/"):
        return
    kind, inner = obj["kind"], spec
    if kind == "Schedule":
        kind = str(spec.get("type", ""))
        inner = next((v for k, v in spec.items() if str(k).lower() == kind.lower()), None)
    selector = inner.get("selector") if isinstance(inner, dict) else None
    labels = (selector or {}).get("labelSelectors")
    if not isinstance(labels, dict) or not labels or (selector or {}).get("expressionSelectors") \
            or inner.get("mode") not in ("all", "one"):
        return
    out = copy_data(obj)
    moved = out["spec"] if out["kind"] != "Schedule" else out["spec"][next(k for k in out["spec"]
                                                                             if str(k).lower() == kind.lower())]
    moved["selector"] = {**{k: v for k, v in selector.items() if k != "labelSelectors"},
                         "expressionSelectors": _label_expressions(labels)}
    moved.update(mode="fixed-percent", value="100")
    yield "a copy selecting its pods by expressionSelectors, a fixed 100 percent of them", out, FAIL
    target = inner.get("target") if kind == "NetworkChaos" else None
    if isinstance(target, dict) and isinstance(target.get("selector"), dict):
        swapped = copy_data(obj)
        swap = _experiment_of(swapped)[1]
        swap["selector"], swap["target"]["selector"] = copy_data(target["selector"]), copy_data(selector)
        yield "a copy with its selector and target swapped (the same pods cut apart the other way)", swapped, FAIL
    if kind == "NetworkChaos" and inner.get("action") == "loss" and number((inner.get("loss") or {}).get("loss")) == 100:
        partition = copy_data(obj)
        part = _experiment_of(partition)[1]
        part["action"] = "partition"
        part.pop("loss", None)
        yield "a copy partitioning what it dropped", partition, FAIL
    if obj["kind"] == "Schedule":
        child = {"apiVersion": obj["apiVersion"], "kind": kind, "metadata": copy_data(obj["metadata"]),
                 "spec": copy_data(inner)}
        yield f"its {kind} experiment left running (the Schedule deleted with --cascade=orphan)", child, FAIL
        stopped = copy_data(child)
        stopped["status"] = {"experiment": {"desiredPhase": "Stop"}}
        yield f"its {kind} experiment left, stopped (its duration over)", stopped, PASS


def _with_hard(quota: dict, hard: dict) -> dict:
    out = copy_data(quota)
    out["spec"]["hard"] = hard
    out.pop("status", None)
    return out


def _bare_restart_cases(name: str, key: tuple, template: dict, solved: dict) -> Iterator[Case]:
    """A bare pod recreated healthy but for its `restartPolicy` (Never, OnFailure where the healthy pod has
    Always): it runs until its server first exits, and nothing restarts it, so it fails."""
    healthy = (template.get("spec") or {}).get("restartPolicy")
    if healthy not in (None, "Always"):
        return
    for policy in ("Never", "OnFailure"):
        def recreate(o, policy=policy):
            o["spec"]["restartPolicy"] = policy
            o["metadata"].update(uid=f"recreated-{name}", creationTimestamp=FIXED_AT, resourceVersion="90210")
        yield Case(f"the solved state, pod {name} recreated with restartPolicy {policy}", "mitigate", FAIL,
                   state=_with_edit(solved, key, recreate))


def _lifecycle_cases(spec: dict, found: Objects) -> Iterator[Case]:
    """What the API server's own bookkeeping says about a fix that is not done: a workload whose status
    describes an older spec or whose rollout has not finished, an object being deleted, an impostor of
    another API group in the fixed object's place; and pods of the broken spec on their way out, which
    are no failure."""
    m = spec["mitigation"]
    solved = render(found.solved, found)
    present = {_key(o) for o in solved["resources"]["items"]}
    for ref in [r for r in m["ready"] if r["kind"] in ("Deployment", "StatefulSet")][:2]:
        key = (ref["kind"], ref["namespace"], ref["name"])
        if key not in present:
            continue
        stale = _with_edit(solved, key, lambda o: o["metadata"].update(
            generation=int(o["metadata"].get("generation", 1)) + 1))
        yield Case(f"the solved state, {ref['name']}'s status of an older spec (observedGeneration behind)",
                   "mitigate", FAIL, state=stale)
        if ref["kind"] == "Deployment":  # a replica of the broken spec is left
            rolling = _with_edit(solved, key, lambda o: o["status"].update(
                replicas=int(o["status"].get("replicas", 1)) + 1))
            yield Case(f"the solved state, {ref['name']}'s rollout not finished (an old replica left)", "mitigate",
                       FAIL, state=rolling)
    for w in spec["workloads"][:2]:
        key = (w["kind"], w["namespace"], w["name"])
        if (w["kind"] != "Pod" or w.get("bare")) and key in present:
            deleting = _with_edit(solved, key, lambda o: o["metadata"].update(deletionTimestamp="2026-01-01T00:05:00Z"))
            yield Case(f"the solved state, {w['name']} being deleted", "mitigate", FAIL, state=deleting)
    # a bare pod is fixed by replacing it: the same spec under its name, created anew, is the fix; gone is not
    for w in [w for w in spec["workloads"] if w.get("bare")][:2]:
        key = (w["kind"], w["namespace"], w["name"])
        if key not in present:
            continue
        recreated = _with_edit(solved, key, lambda o: o["metadata"].update(
            uid=f"recreated-{w['name']}", creationTimestamp=FIXED_AT, resourceVersion="90210"))
        yield Case(f"the solved state, pod {w['name']} deleted and created again healthy", "mitigate", PASS,
                   state=recreated)
        yield Case(f"the solved state, pod {w['name']} deleted and not created again", "mitigate", FAIL,
                   state=_with_items(solved, [o for o in solved["resources"]["items"] if _key(o) != key]))
        # `kubectl run NAME --image=IMAGE` names its one container NAME and labels the pod run=NAME: the same pod
        # where nothing selects it by its labels; its program swapped for `sleep infinity` is none
        entry = next((e for e in m["programs"] + m.get("application", []) if _key_of(e["object"]) == key), None)
        if entry is None or m.get("only"):
            continue
        template = entry["keep"]["spec"]["template"]
        if "activeDeadlineSeconds" in template.get("spec", {}) and template["spec"]["activeDeadlineSeconds"] is None:
            # a deadline on the running pod: the kubelet kills it that long after it started, nothing recreates it
            yield Case(f"the solved state, pod {w['name']} given an activeDeadlineSeconds", "mitigate", FAIL,
                       state=_with_edit(solved, key, lambda o: o["spec"].update(activeDeadlineSeconds=300)))
        yield from _bare_restart_cases(w["name"], key, template, solved)

        def run(o, name=w["name"], labels="metadata" not in template, command=None):
            status = o.get("status") or {}
            containers = o["spec"]["containers"]
            if len(containers) == 1:
                for c in containers + (status.get("containerStatuses") or []):
                    c["name"] = name
            if labels:
                o["metadata"]["labels"] = {"run": name}
            if command:
                containers[0]["command"] = list(command)
            o["metadata"].update(uid=f"recreated-{name}", creationTimestamp=FIXED_AT, resourceVersion="90210")
        if len(template["spec"]["containers"] or []) == 1:
            yield Case(f"the solved state, pod {w['name']} recreated by `kubectl run` (its container named after it)",
                       "mitigate", PASS, state=_with_edit(solved, key, run))
        yield Case(f"the solved state, pod {w['name']} recreated running `sleep infinity`", "mitigate", FAIL,
                   state=_with_edit(solved, key, lambda o: run(o, command=["sleep", "infinity"])))
    for fault in m["faults"]:
        for entry in fault["fields"][:1]:
            ref = entry["object"]
            key = (ref["kind"], ref["namespace"], ref["name"])
            if key not in present or fault["undone_by"] == "any":
                continue
            # a custom resource of the same kind and name
            impostor = _with_edit(solved, key, lambda o: o.update(apiVersion="impostor.example.com/v1"))
            yield Case(f"{ref['kind']} {ref['name']} replaced by a custom resource of another API group", "mitigate",
                       FAIL, state=impostor)
    # pods of the broken spec still terminating beside the fixed ones: leaving, not unhealthy
    faulty = render(found.faulty, found, probes=found.faulty_probes)
    leaving = [copy.deepcopy(o) for o in faulty["resources"]["items"] if o.get("kind") == "Pod"
               and _key(o) not in present and not _pod_is_ready(o)]
    if leaving:
        for pod in leaving:
            pod["metadata"]["deletionTimestamp"] = "2026-01-01T00:05:00Z"
        yield Case("the solved state with the broken pods still terminating", "mitigate", PASS,
                   state=_with_items(solved, solved["resources"]["items"] + leaving))


# ---- what a fix means, not how it is spelled; and what a fix that is not done looks like ------------------------

FIXED_AT = "2026-01-01T00:10:00Z"  # when the corpus's agent ended its work: the derived states are of 00:00


def _meaning_cases(spec: dict, found: Objects) -> Iterator[Case]:
    """A fix judged by what it means and by how it holds: the pods of a fixed workload restarting since the fix
    (OOM-killed, seconds after the agent stopped: fail; a restart before the fix: pass); a StatefulSet's rollout
    staged by a partition or left to OnDelete with every pod at the faulty revision (fail), and an OnDelete
    rollout whose pods were all replaced (pass); a container given a command or arguments its healthy spec did
    not have (fail); images spelled another way (pass); probes fixed rather than removed (pass), and the faulty
    probe kept, spelled with the API server's defaults (fail); a deleted Service recreated as `kubectl expose`
    writes it (pass); a list a predicate reads with an unrelated item first (pass); an evicted pod left behind
    (pass), and pods of it evicted after the fix and replaced (fail)."""
    m = spec["mitigation"]
    solved = render(found.solved, found)
    present = {_key(o) for o in solved["resources"]["items"]}
    workloads = [r for r in m["ready"] if r["kind"] in ("Deployment", "StatefulSet")
                 and (r["kind"], r["namespace"], r["name"]) in present]
    for ref in workloads[:2]:
        yield from _stability_cases(solved, ref)
        yield from _evicted_cases(solved, ref)
    scopes = [p for p in m["predicates"] if p["kind"] == "scope" and "Pod" in p["kinds"] and not p.get("selector")]
    if scopes:
        namespace = scopes[0]["namespaces"][0]
        yield from _finished_pod_cases(solved, namespace)
    # every StatefulSet a check reads as ready: those the faults act on, and those a scope covers
    stateful = {(r["namespace"], r["name"]): r for r in workloads if r["kind"] == "StatefulSet"}
    for pred in m["predicates"]:
        for r in pred.get("expected", []) if pred["kind"] == "scope" else ():
            if r["kind"] == "StatefulSet" and (r["kind"], r["namespace"], r["name"]) in present:
                stateful.setdefault((r["namespace"], r["name"]), r)
    for ref in list(stateful.values())[:2]:
        yield from _revision_cases(solved, ref)
    for entry in [] if m.get("only") else m["programs"]:  # `only`: what the workloads run is not graded
        yield from _program_cases(found, entry)
    for fault in m["faults"]:
        for entry in fault["fields"]:
            key = (entry["object"]["kind"], entry["object"]["namespace"], entry["object"]["name"])
            for change in entry["changes"]:
                if (change.get("accept") or {}).get("op") == "changed" and _probe_like(change.get("faulty")):
                    yield from _probe_fix_cases(found, key, change)
                if (change.get("accept") or {}).get("op") == "changed" and not change.get("governed_by"):
                    yield from _changed_quantity_cases(found, key, change)
    for entry in m["restored"]:
        if entry["object"]["kind"] == "Service":
            yield from _exposed_cases(found, entry)
            yield from _recreated_service_cases(found, entry)
    # a Service a fault acts on, fixed, its pods declaring the port it leads to under another number
    from ..runtime.state import selected_pods, State
    held = State(solved)
    for ref in m.get("services") or []:
        service = next((s for s in spec["services"] if (s["namespace"], s["name"]) == (ref["namespace"], ref["name"])
                        and s["selector"] and s.get("ports")), None)
        if service is not None and held.get(service) is not None:
            yield from _renumbered_port_cases(service, selected_pods(held.get(service), held), solved, held)
    for index, pred in enumerate(m["predicates"]):
        if pred["kind"] == "field" and "*" not in (pred["target"] or {}).get("name", "*"):
            yield from _unordered_cases(index, pred, solved)


def _pods_of(state: dict, ref: dict) -> list[dict]:
    from ..runtime.state import State, workload_pods

    obj = next((o for o in state["resources"]["items"] if _key(o) == (ref["kind"], ref["namespace"], ref["name"])), None)
    return workload_pods(obj, State(state)) if obj is not None else []


def _with_edits(state: dict, keys: set, edit) -> dict:
    items = []
    for obj in state["resources"]["items"]:
        if _key(obj) in keys:
            obj = copy_data(obj)
            edit(obj)
        items.append(obj)
    return _with_items(state, items)


def _restarted(finished: str, reason: str = "OOMKilled", code: int = 137):
    def edit(pod: dict) -> None:
        status = pod.setdefault("status", {})
        for c in status.get("containerStatuses") or []:
            c["restartCount"] = 3
            c["lastState"] = {"terminated": {"exitCode": code, "reason": reason, "startedAt": "2026-01-01T00:00:00Z",
                                             "finishedAt": finished}}
            c["state"] = {"running": {"startedAt": finished}}
    return edit


def _with_restarts(pod: dict, count: int) -> dict:
    out = copy_data(pod)
    for c in (out.get("status") or {}).get("containerStatuses") or []:
        c["restartCount"] = count
    return out


def _stability_cases(solved: dict, ref: dict) -> Iterator[Case]:
    pods = _pods_of(solved, ref)
    if not pods:
        return
    one = {_key(pods[-1])}
    after = {**_with_edits(solved, one, _restarted("2026-01-01T00:12:00Z")), "fixed_at": FIXED_AT}
    yield Case(f"{ref['name']} ready between restarts: OOM-killed after the fix", "mitigate", FAIL, state=after)
    before = {**_with_edits(solved, one, _restarted("2026-01-01T00:05:00Z")), "fixed_at": FIXED_AT}
    yield Case(f"{ref['name']} restarted before the fix, stable since", "mitigate", PASS, state=before)
    undated = _with_edits(solved, one, _restarted("2026-01-01T00:12:00Z", "Error", 1))
    yield Case(f"{ref['name']} with a failed restart the state cannot date (no fixed_at)", "mitigate", FAIL,
               state=undated)
    # a server that exits 0 and is restarted is no more stable than one that crashes
    clean = {**_with_edits(solved, one, _restarted("2026-01-01T00:12:00Z", "Completed", 0)), "fixed_at": FIXED_AT}
    yield Case(f"{ref['name']} exiting 0 and restarted after the fix", "mitigate", FAIL, state=clean)
    yield Case(f"{ref['name']} exiting 0 and restarted, no fixed_at to date it", "mitigate", FAIL,
               state={k: v for k, v in clean.items() if k != "fixed_at"})
    # the restart count grew between a capture after the fix and the last one (the last termination misdated)
    counted = {**_with_edits(solved, one, _restarted("2026-01-01T00:05:00Z", "Completed", 0)), "fixed_at": FIXED_AT}
    counted["observations"] = [{"at": "2026-01-01T00:10:30Z", "resources": {"kind": "List", "items": [
        _with_restarts(o, 1) if _key(o) in one else o for o in solved["resources"]["items"]
        if o.get("kind") == "Pod" and (o.get("metadata") or {}).get("namespace") == ref["namespace"]]}}]
    yield Case(f"{ref['name']}'s restart count grew while observed after the fix", "mitigate", FAIL, state=counted)
    # earlier captures while the fix ran: ready, then not (it did not hold), or not yet, then ready (a rollout)
    key = (ref["kind"], ref["namespace"], ref["name"])
    watched = [o for o in solved["resources"]["items"] if o.get("kind") in ("Deployment", "StatefulSet", "Pod")
               and (o.get("metadata") or {}).get("namespace") == ref["namespace"]]

    def seen(at: str, ready: bool) -> dict:
        items = watched if ready else [_unready_copy(o) if _key(o) == key else o for o in watched]
        return {"at": at, "resources": {"kind": "List", "items": items}}
    lapsed = {**solved, "fixed_at": FIXED_AT, "observations": [seen("2026-01-01T00:10:30Z", True),
                                                             seen("2026-01-01T00:11:00Z", False)]}
    yield Case(f"{ref['name']} ready after the fix, then not at a later capture", "mitigate", FAIL, state=lapsed)
    rolled = {**solved, "fixed_at": FIXED_AT, "observations": [seen("2026-01-01T00:10:30Z", False),
                                                             seen("2026-01-01T00:11:00Z", True)]}
    yield Case(f"{ref['name']} still rolling out at the first capture after the fix, ready since", "mitigate", PASS,
               state=rolled)


def _capacity_cases(spec: dict, found: Objects) -> Iterator[Case]:
    """Replicas are capacity: a workload deployed with several, scaled below that count (each replica ready),
    fails; scaled above it, passes (more replicas serve too); a count a fault raised as its means (an
    acceptance `>=`) may stay raised."""
    workload = next((w for w in spec["workloads"] if w["kind"] in ("Deployment", "StatefulSet")
                     and w["min_replicas"] > 1 and (w["kind"], w["namespace"], w["name"]) in found.solved), None)
    if workload is not None:
        key = (workload["kind"], workload["namespace"], workload["name"])
        fewer = _edited(found.solved, key, lambda o: o["spec"].update(replicas=workload["min_replicas"] - 1))
        yield Case(f"{workload['name']} scaled below the {workload['min_replicas']} replicas it was deployed with",
                   "mitigate", FAIL, state=render(fewer, found))
        more = _edited(found.solved, key, lambda o: o["spec"].update(replicas=workload["min_replicas"] + 1))
        yield Case(f"{workload['name']} scaled above the replicas it was deployed with", "mitigate", PASS,
                   state=render(more, found))
    for fault in spec["mitigation"]["faults"]:
        for entry in fault["fields"]:
            key = (entry["object"]["kind"], entry["object"]["namespace"], entry["object"]["name"])
            for change in entry["changes"]:
                raised = change.get("faulty")
                if change["path"] == ["spec", "replicas"] and (change.get("accept") or {}).get("op") == ">=" and \
                        isinstance(raised, int) and isinstance(change.get("healthy"), int) and raised > change["healthy"]:
                    kept = _edited(found.solved, key, lambda o, n=raised: o["spec"].update(replicas=n))
                    if kept is not None:
                        yield Case(f"{key[2]}: the replicas the fault raised kept, as `rollout undo` keeps them",
                                   "mitigate", PASS, state=render(kept, found))


def _collateral_cases(spec: dict, solved: dict) -> Iterator[Case]:
    """A fix that breaks what the faults never touched is no fix: another workload of the application left
    not ready, another Service turned into an ExternalName one or its port re-pointed, fail; that Service's
    selector spelled with another label every one of its pods carries, passes."""
    from ..runtime.state import labels_match, selected_pods, State

    m = spec["mitigation"]
    read = {(r["kind"], r["namespace"], r["name"]) for r in m["ready"] + m["services"]}
    touched = {(e["object"]["kind"], e["object"]["namespace"], e["object"]["name"])
               for f in m["faults"] for e in f["fields"]} | \
        {(e["object"]["kind"], e["object"]["namespace"], e["object"]["name"]) for e in m["restored"]}
    running = {(w["namespace"], w["name"]) for w in spec["workloads"] if w["kind"] != "Pod" and w["min_replicas"] > 0}
    other = next((w for w in spec["workloads"] if (w["namespace"], w["name"]) in running
                  and (w["kind"], w["namespace"], w["name"]) not in read | touched), None)
    if other is not None:
        yield Case(f"the fix leaves another workload, {other['name']}, not ready", "mitigate", FAIL,
                   state=_with_edit(solved, (other["kind"], other["namespace"], other["name"]),
                                    lambda o: o.update(_unready_copy(o))))
        yield from _other_workload_cases(m, other, solved)
    state = State(solved)
    others = [s for s in spec["services"] if s["selector"] and (s["namespace"], s["component"]) in running
              and ("Service", s["namespace"], s["name"]) not in read | touched and s.get("ports")
              and state.get(s) is not None and selected_pods(state.get(s), state)]
    named = next((s for s in others if any(isinstance(p["targetPort"], str) for p in s["ports"])), None)
    if named is not None:
        yield from _named_port_cases(named, selected_pods(state.get(named), state), solved, state)
    service = others[0] if others else None
    if service is None:
        return
    key = ("Service", service["namespace"], service["name"])
    yield Case(f"the fix turns another Service, {service['name']}, into an ExternalName one", "mitigate", FAIL,
               state=_with_edit(solved, key, lambda o: o["spec"].update(type="ExternalName", externalName="x.example")))
    first = service["ports"][0]

    def repoint(obj: dict) -> None:
        for p in obj["spec"].get("ports") or []:
            if p.get("port") == first["port"]:
                p["targetPort"] = int(first["port"]) + 1 if isinstance(first["targetPort"], str) \
                    else int(first["targetPort"]) + 1
    yield Case(f"the fix re-points another Service's port, {service['name']}:{first['port']}", "mitigate", FAIL,
               state=_with_edit(solved, key, repoint))
    pods = selected_pods(state.get(service), state)
    yield from _renumbered_port_cases(service, pods, solved, state)
    yield from _local_traffic_cases(service, pods, solved, state)
    # another Service made headless: one with a port targeting another number (fails), else this one
    off = next((s for s in others if any(str(p["targetPort"]) != str(p["port"]) for p in s["ports"]
                                         if p["targetPort"] is not None)), service)
    yield _headless_case(off["name"], "of the application made", state.get(off)["spec"].get("ports") or [],
                         selected_pods(state.get(off), state), solved, ("Service", off["namespace"], off["name"]))
    shared = [(k, v) for k, v in sorted(((pods[0].get("metadata") or {}).get("labels") or {}).items())
              if (k, v) not in service["selector"].items()]
    for k, v in shared:
        every = [o for kind in ("Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Pod")
                 for o in state.by_kind.get((kind, service["namespace"]), [])]
        labels = [((o.get("spec") or {}).get("template") or {}).get("metadata", {}).get("labels")
                  if o["kind"] != "Pod" else o["metadata"].get("labels") for o in every]
        if [labels_match(x, service["selector"]) for x in labels] == [labels_match(x, {k: v}) for x in labels]:
            yield Case(f"Service {service['name']}'s selector spelled with another label its pods carry ({k})",
                       "mitigate", PASS, state=_with_edit(solved, key, lambda o: o["spec"].update(selector={k: v})))
            break


def _template_pod(obj: dict) -> dict | None:
    """The pod spec of a workload's manifest to edit in place (a Deployment's, a StatefulSet's, ...)."""
    spec = ((obj.get("spec") or {}).get("template") or {}).get("spec")
    return spec if isinstance(spec, dict) else None


def _other_text(text: str, parse: str | None) -> str:
    return json.dumps({"itbench-other": True}) if parse else f"{text}-other"


def _kept_config_cases(spec: dict, found: Objects) -> Iterator[Case]:
    """Another workload's configuration is the application's too (collateral `configs`): a key a workload reads
    rewritten, a reader's volume or reference re-pointed at a copy holding other data or at an object that is
    not there, fail; a reader pointed at a copy holding the same data, or the value re-serialised in another
    form of the same data, pass."""
    entries = ((spec["mitigation"].get("collateral") or {}).get("configs") or [])
    picked = [next((e for e in entries if any("file" in r for k in e["keys"].values() for r in k["readers"])), None),
              next((e for e in entries if all("env" in r for k in e["keys"].values() for r in k["readers"])), None)]
    for entry in [e for i, e in enumerate(picked) if e is not None and e not in picked[:i]]:
        ref = entry["object"]
        key = (ref["kind"], ref["namespace"], ref["name"])
        workloads = _reader_workloads(r for k in entry["keys"].values() for r in k["readers"])
        if key not in found.solved or not all(w in found.solved for w in workloads):
            continue
        how = "a file" if any("file" in r for k in entry["keys"].values() for r in k["readers"]) else "a variable"

        def rewritten(obj: dict, same: bool = False) -> None:
            for name, want in entry["keys"].items():
                for field in ("data", "stringData"):
                    held = obj.get(field) if isinstance(obj.get(field), dict) else {}
                    if name not in held:
                        continue
                    text = base64.b64decode(held[name]).decode() if ref["kind"] == "Secret" and field == "data" \
                        else held[name]
                    form = (want.get("form") or {}).get("parse")
                    if same and form:
                        new = json.dumps(load_yaml(text) if form == "yaml" else json.loads(text), indent=1)
                    else:
                        new = text if same else _other_text(text, (want.get("form") or {}).get("parse"))
                    held[name] = base64.b64encode(new.encode()).decode() if ref["kind"] == "Secret" and \
                        field == "data" else new
        yield Case(f"{ref['kind']} {ref['name']}, which another workload reads as {how}, rewritten", "mitigate", FAIL,
                   state=render(_edited(found.solved, key, rewritten), found))
        other = copy_data(found.solved[key])
        rewritten(other)
        yield Case(f"the readers of {ref['kind']} {ref['name']} pointed at a copy holding other data", "mitigate",
                   FAIL, state=render(_moved(found, ref, workloads, other, found.solved[key]), found))
        yield Case(f"the readers of {ref['kind']} {ref['name']} pointed at a {ref['kind']} that is not there",
                   "mitigate", FAIL, state=render(_moved(found, ref, workloads, None, found.solved[key],
                                                         ref["name"] + "-missing"), found))
        yield Case(f"the readers of {ref['kind']} {ref['name']} pointed at a copy holding its data", "mitigate", PASS,
                   state=render(_moved(found, ref, workloads, found.solved[key], found.solved[key]), found))
        if any(k.get("form") for k in entry["keys"].values()):
            yield Case(f"{ref['kind']} {ref['name']}'s structured values re-serialised as the same data", "mitigate",
                       PASS, state=render(_edited(found.solved, key, lambda o: rewritten(o, same=True)), found))


def _not_restored(spec: dict, entries: list) -> list:
    """The collateral entries of objects no fault deletes: one a fault deletes must come back as it was
    (`restored.REF`), so an edit a safeguard allows (a generous limit, a volume renamed) is no fix there."""
    restored = {(r["object"]["kind"], r["object"]["namespace"], r["object"]["name"])
                for r in spec["mitigation"].get("restored") or []}
    return [e for e in entries if (e["object"]["kind"], e["object"]["namespace"], e["object"]["name"]) not in restored]


def _limit_floor_cases(spec: dict, found: Objects) -> Iterator[Case]:
    """A crippling limit added where the healthy container had none (collateral `floors`): a memory limit of
    1Mi, a CPU limit of 1m or an ephemeral-storage limit of 1Mi on a container, or a pod-level limit
    (`spec.resources`) of 1Mi, fail; a generous limit added (8Gi, 4 cores, 4Gi of local storage) passes."""
    from ..runtime.state import number

    entries = _not_restored(spec, (spec["mitigation"].get("collateral") or {}).get("floors") or [])
    entry = next((e for e in entries if e["object"]["kind"] in ("Deployment", "StatefulSet")
                  and (e["object"]["kind"], e["object"]["namespace"], e["object"]["name"]) in found.solved
                  and any(not ((c.get("resources") or {}).get("limits") or {}).keys() >= {"cpu", "memory"}
                          for c in (_template_pod(found.solved[(e["object"]["kind"], e["object"]["namespace"],
                                                                e["object"]["name"])]) or {}).get("containers") or [])),
                 None)
    if entry is None:
        return
    ref = entry["object"]
    key = (ref["kind"], ref["namespace"], ref["name"])
    pod = _template_pod(found.solved.get((entry["object"]["kind"], entry["object"]["namespace"],
                                          entry["object"]["name"]), {})) or {}
    # a container that had no limit of a resource (a limit added); one that had is `health.application`'s case
    unlimited = {str(c.get("name")): {r: f for r, f in entry["containers"].get(str(c.get("name")), {}).items()
                                      if r not in ((c.get("resources") or {}).get("limits") or {})}
                 for c in (pod.get("initContainers") or []) + (pod.get("containers") or [])}
    if not any(unlimited.values()):
        return
    regular = {str(c.get("name")) for c in pod.get("containers") or []}
    name, floors = max(unlimited.items(), key=lambda item: (len(item[1]), item[0] in regular))

    def limited(**limits):
        def edit(obj: dict) -> None:
            pod = _template_pod(obj)
            for c in (pod.get("initContainers") or []) + (pod.get("containers") or []) if pod else []:
                if c.get("name") == name:
                    c.setdefault("resources", {}).setdefault("limits", {}).update(limits)
                    requests = c["resources"].get("requests") or {}
                    for resource in limits:  # a request above the limit is refused: lowered with it
                        if resource in requests and number(requests[resource]) > number(limits[resource]):
                            requests[resource] = limits[resource]
        return edit

    def pod_limited(obj: dict) -> None:
        pod = _template_pod(obj)
        if pod is not None:
            pod["resources"] = {"limits": {"memory": "1Mi"}}
    if key not in found.solved or _template_pod(found.solved[key]) is None:
        return
    if "memory" in floors:
        yield Case(f"{ref['name']} container {name} given a memory limit of 1Mi where it had none", "mitigate", FAIL,
                   state=render(_edited(found.solved, key, limited(memory="1Mi")), found))
    if "cpu" in floors:
        yield Case(f"{ref['name']} container {name} given a CPU limit of 1m where it had none", "mitigate", FAIL,
                   state=render(_edited(found.solved, key, limited(cpu="1m")), found))
    if "ephemeral-storage" in floors:  # the kubelet evicts the pod once its writable layer and logs exceed it
        yield Case(f"{ref['name']} container {name} given an ephemeral-storage limit of 1Mi where it had none",
                   "mitigate", FAIL, state=render(_edited(found.solved, key, limited(**{"ephemeral-storage": "1Mi"})), found))
    yield Case(f"{ref['name']} given a pod-level memory limit of 1Mi", "mitigate", FAIL,
               state=render(_edited(found.solved, key, pod_limited), found))
    # a limit with no request is the container's request too: in a FinOps scenario that is spend, judged there
    generous = {"memory": "8Gi", "cpu": "4", "ephemeral-storage": "4Gi"}
    if spec["domain"] != "finops":
        yield Case(f"{ref['name']} container {name} given generous limits where it had none", "mitigate", PASS,
                   state=render(_edited(found.solved, key, limited(**{r: generous[r] for r in floors})), found))
    yield from _ready_limit_cases(spec, found)


def _ready_limit_cases(spec: dict, found: Objects) -> Iterator[Case]:
    """A workload the mitigation reads (`health.ready`) keeps its containers' healthy limits no fault changes
    (collateral `floors`): one squeezed to 1Mi fails."""
    entries = {(e["object"]["kind"], e["object"]["namespace"], e["object"]["name"]): e
               for e in (spec["mitigation"].get("collateral") or {}).get("floors") or []}
    for ref in spec["mitigation"]["ready"]:
        key = (ref["kind"], ref["namespace"], ref["name"])
        pod = _template_pod(found.solved.get(key, {}))
        entry = entries.get(key)
        if pod is None or entry is None:
            continue
        for c in pod.get("containers") or []:
            held = ((c.get("resources") or {}).get("limits") or {}).get("memory")
            if held is None or "memory" not in entry["containers"].get(str(c.get("name")), {}):
                continue

            def squeezed(obj: dict, name=c.get("name")) -> None:
                for x in _template_pod(obj).get("containers") or []:
                    if x.get("name") == name:
                        x["resources"]["limits"]["memory"] = "1Mi"
                        x["resources"].get("requests", {}).pop("memory", None)
            yield Case(f"{ref['name']} container {c.get('name')}'s memory limit squeezed to 1Mi", "mitigate", FAIL,
                       state=render(_edited(found.solved, key, squeezed), found))
            return


def _storage_cases(spec: dict, found: Objects) -> Iterator[Case]:
    """A workload's PersistentVolumeClaim swapped for an ephemeral source (collateral `storage`): the claim's
    volume turned into an `emptyDir` or a `hostPath`, or the mount removed, fail; the volume renamed, still
    mounted from its claim, passes."""
    entries = _not_restored(spec, (spec["mitigation"].get("collateral") or {}).get("storage") or [])
    entry = next((e for e in entries if e["object"]["kind"] in ("Deployment", "StatefulSet")), None)
    if entry is None:
        return
    ref, mount = entry["object"], entry["mounts"][0]
    key = (ref["kind"], ref["namespace"], ref["name"])
    if key not in found.solved or _template_pod(found.solved[key]) is None:
        return

    def volume_of(pod: dict) -> str | None:
        for c in (pod.get("initContainers") or []) + (pod.get("containers") or []):
            for m in c.get("volumeMounts") or [] if c.get("name") == mount["container"] else []:
                if m.get("mountPath") == mount["path"]:
                    return m.get("name")
        return None

    def swapped(source: dict):
        def edit(obj: dict) -> None:
            pod = _template_pod(obj)
            name = volume_of(pod)
            obj["spec"]["volumeClaimTemplates"] = [t for t in obj["spec"].get("volumeClaimTemplates") or []
                                                   if (t.get("metadata") or {}).get("name") != name] or None
            if obj["spec"]["volumeClaimTemplates"] is None:
                del obj["spec"]["volumeClaimTemplates"]
            pod["volumes"] = [v for v in pod.get("volumes") or [] if v.get("name") != name] + [{"name": name, **source}]
        return edit

    def unmounted(obj: dict) -> None:
        pod = _template_pod(obj)
        for c in (pod.get("initContainers") or []) + (pod.get("containers") or []):
            if c.get("name") == mount["container"]:
                c["volumeMounts"] = [m for m in c.get("volumeMounts") or [] if m.get("mountPath") != mount["path"]]

    def renamed(obj: dict) -> None:
        pod = _template_pod(obj)
        name = volume_of(pod)
        for c in (pod.get("initContainers") or []) + (pod.get("containers") or []):
            for m in c.get("volumeMounts") or []:
                if m.get("name") == name:
                    m["name"] = name + "-renamed"
        for v in pod.get("volumes") or []:
            if v.get("name") == name:
                v["name"] = name + "-renamed"
        for t in obj["spec"].get("volumeClaimTemplates") or []:
            if (t.get("metadata") or {}).get("name") == name:
                t["metadata"]["name"] = name + "-renamed"
    yield Case(f"{ref['name']}'s data volume ({mount['path']}) swapped for an emptyDir", "mitigate", FAIL,
               state=render(_edited(found.solved, key, swapped({"emptyDir": {}})), found))
    yield Case(f"{ref['name']}'s data volume ({mount['path']}) swapped for a hostPath", "mitigate", FAIL,
               state=render(_edited(found.solved, key, swapped({"hostPath": {"path": "/tmp/data"}})), found))
    yield Case(f"{ref['name']}'s data volume ({mount['path']}) no longer mounted", "mitigate", FAIL,
               state=render(_edited(found.solved, key, unmounted), found))
    if "claim" in mount:  # a claim template renamed is another claim (its pods' claims take its name)
        yield Case(f"{ref['name']}'s data volume ({mount['path']}) renamed, mounted from its claim", "mitigate", PASS,
                   state=render(_edited(found.solved, key, renamed), found))


def _widened_cases(spec: dict, solved: dict) -> Iterator[Case]:
    """Harm done around the application rather than in it (the safeguards' `widened_checks`): a deny-all
    NetworkPolicy added to a namespace of the application, a LimitRange whose bounds refuse its next pods or
    whose default limit is crippling, a ResourceQuota admitting no pod, an autoscaler whose minimum is below the
    replicas a workload was deployed with, an Istio AuthorizationPolicy denying every request to a workload, a
    Pod Security `enforce` label its workloads break, a Service exposed beyond the cluster (NodePort, external
    IPs; a Service the fault deleted restored so too), a healthy grant lent by a new binding to every caller,
    every authenticated user or every service account: each fails. An allow-all policy, a LimitRange whose
    bounds the pods meet, a quota with room, an autoscaler keeping the deployed replicas, a DENY of TRACE, an `enforce:
    privileged` label, the grant bound to its subject alone: pass."""
    from ..runtime.evaluator import admitted, pod_security_refused, State
    from ..runtime.state import number, pod_spec

    # a healthy grant lent by a new binding to a group every caller, user or service account is in
    m = spec["mitigation"]
    items = solved["resources"]["items"]
    for entry in (m.get("collateral") or {}).get("grants", [])[:1]:
        grant = next((g for g in entry["grants"] if g["rules"] and g["namespace"]), None)
        if grant is None:
            continue
        where = grant["namespace"]
        role = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
                "metadata": {"name": "corpus-lent", "namespace": where}, "rules": copy_data(grant["rules"])}

        def binding(subject: dict) -> dict:
            return {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
                    "metadata": {"name": "corpus-lent", "namespace": where}, "subjects": [subject],
                    "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "corpus-lent"}}
        for group in ("system:anonymous", "system:unauthenticated", "system:authenticated", "system:serviceaccounts"):
            yield Case(f"the grant {entry['subject']['name']} needs lent to group {group}", "mitigate", FAIL,
                       state=_with_items(solved, [*items, role, binding(
                           {"kind": "Group", "apiGroup": "rbac.authorization.k8s.io", "name": group})]))
        yield Case(f"the grant {entry['subject']['name']} needs bound once more to it alone", "mitigate", PASS,
                   state=_with_items(solved, [*items, role, binding(
                       {k: v for k, v in entry["subject"].items() if k in ("kind", "name", "namespace")})]))
    state = State(solved)
    running = [w for w in spec["workloads"] if w["namespace"] and w["min_replicas"] > 0 and w["kind"] != "Pod"
               and state.get(w) is not None]
    if not running:
        return
    namespace = running[0]["namespace"]
    items = solved["resources"]["items"]

    def policy(name: str, body: dict) -> dict:
        return {"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
                "metadata": {"name": name, "namespace": namespace}, "spec": {"podSelector": {}, **body}}
    yield Case(f"a deny-all NetworkPolicy added to namespace {namespace}", "mitigate", FAIL,
               state=_with_items(solved, [*items, policy("corpus-deny-all", {"policyTypes": ["Ingress", "Egress"]})]))
    yield Case(f"an allow-all NetworkPolicy added to namespace {namespace}", "mitigate", PASS,
               state=_with_items(solved, [*items, policy("corpus-allow-all", {"policyTypes": ["Ingress", "Egress"],
                                                                              "ingress": [{}], "egress": [{}]})]))
    # a LimitRange whose `max` is below the smallest memory limit a container of the application declares
    declared = [number(((c.get("resources") or {}).get("limits") or {}).get("memory"))
                for w in running for c in pod_spec(admitted(state.get(w), state)).get("containers") or []]
    declared = [d for d in declared if d]
    if declared:
        bound = max(int(min(declared) // 2), 1)
        yield Case(f"a LimitRange added to namespace {namespace} whose max memory ({bound}) the pods exceed", "mitigate",
                   FAIL, state=_with_items(solved, [*items, {
                       "apiVersion": "v1", "kind": "LimitRange", "metadata": {"name": "corpus-max", "namespace": namespace},
                       "spec": {"limits": [{"type": "Container", "max": {"memory": str(bound)}}]}}]))
    yield Case(f"a LimitRange added to namespace {namespace} whose bounds the pods meet", "mitigate", PASS,
               state=_with_items(solved, [*items, {
                   "apiVersion": "v1", "kind": "LimitRange", "metadata": {"name": "corpus-wide", "namespace": namespace},
                   "spec": {"limits": [{"type": "Container", "max": {"memory": "1Ti"}, "default": {"memory": "1Ti"},
                                        "defaultRequest": {"memory": "1"}}]}}]))
    # a LimitRange whose default limit, which admission writes on every next container declaring none, is
    # crippling: the very limit `collateral.floors` fails written on the container
    floors = {(e["object"]["kind"], e["object"]["namespace"], e["object"]["name"]): e["containers"]
              for e in _not_restored(spec, (m.get("collateral") or {}).get("floors") or [])}
    if any("memory" in (floors.get((w["kind"], w["namespace"], w["name"])) or {}).get(str(c.get("name")), {})
           and "memory" not in ((c.get("resources") or {}).get("limits") or {})
           for w in running if w["namespace"] == namespace for c in pod_spec(state.get(w)).get("containers") or []):
        yield Case(f"a LimitRange added to namespace {namespace} whose default memory limit is 1Mi", "mitigate", FAIL,
                   state=_with_items(solved, [*items, {
                       "apiVersion": "v1", "kind": "LimitRange", "metadata": {"name": "corpus-default", "namespace": namespace},
                       "spec": {"limits": [{"type": "Container", "default": {"memory": "1Mi"}}]}}]))
    # a ResourceQuota added that refuses every next pod of the namespace; one with room for them
    def quota(name: str, hard: dict) -> dict:
        return {"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": name, "namespace": namespace},
                "spec": {"hard": hard}}
    yield Case(f"a ResourceQuota added to namespace {namespace} admitting no pod", "mitigate", FAIL,
               state=_with_items(solved, [*items, quota("corpus-none", {"pods": "0"})]))
    if any(o.get("kind") == "Pod" and (o.get("metadata") or {}).get("namespace") == namespace
           and (o.get("spec") or {}).get("activeDeadlineSeconds") is None for o in items):
        yield Case(f"a ResourceQuota added to namespace {namespace} admitting no long-running pod (scope NotTerminating)",
                   "mitigate", FAIL, state=_with_items(solved, [*items, {
                       **quota("corpus-scoped", {"pods": "0"}), "spec": {"hard": {"pods": "0"}, "scopes": ["NotTerminating"]}}]))
    yield Case(f"a ResourceQuota added to namespace {namespace} with room for its pods", "mitigate", PASS,
               state=_with_items(solved, [*items, quota("corpus-room", {"pods": "1000"})]))
    # an autoscaler added to a workload deployed with several replicas and none scaling it: a minimum below them
    # scales it in after the capture; one keeping them passes (FinOps counts an added autoscaler at its maximum)
    scaled = {(str((h.get("metadata") or {}).get("namespace")), str(((h.get("spec") or {}).get("scaleTargetRef") or {})
                                                                     .get("kind")),
               str(((h.get("spec") or {}).get("scaleTargetRef") or {}).get("name")))
              for h in items if h.get("kind") == "HorizontalPodAutoscaler"}
    for w in [w for w in running if w["min_replicas"] >= 2 and w["kind"] in ("Deployment", "StatefulSet")
              and (w["namespace"], w["kind"], w["name"]) not in scaled][:1]:
        def hpa(least: int, most: int) -> dict:
            return {"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
                    "metadata": {"name": "corpus-hpa", "namespace": w["namespace"]},
                    "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": w["kind"], "name": w["name"]},
                             "minReplicas": least, "maxReplicas": most,
                             "metrics": [{"type": "Resource", "resource": {"name": "cpu", "target": {
                                 "type": "Utilization", "averageUtilization": 90}}}]}}
        yield Case(f"an autoscaler added to {w['name']} with minReplicas 1, below the {w['min_replicas']} it was "
                   "deployed with", "mitigate", FAIL, state=_with_items(solved, [*items, hpa(1, w["min_replicas"])]))
        if spec["domain"] != "finops":
            yield Case(f"an autoscaler added to {w['name']} keeping the {w['min_replicas']} replicas it was deployed "
                       "with", "mitigate", PASS,
                       state=_with_items(solved, [*items, hpa(w["min_replicas"], 2 * w["min_replicas"])]))
    # an Istio AuthorizationPolicy added that DENYs every request to a workload of the application; one denying
    # only TRACE, which the application is never sent
    first = state.get(running[0]) if running[0]["namespace"] == namespace else None
    labels = ((((first or {}).get("spec") or {}).get("template") or {}).get("metadata") or {}).get("labels") or {}
    if labels:
        def authz(name: str, rule: dict) -> dict:
            return {"apiVersion": "security.istio.io/v1", "kind": "AuthorizationPolicy",
                    "metadata": {"name": name, "namespace": namespace},
                    "spec": {"selector": {"matchLabels": dict(labels)}, "action": "DENY", "rules": [rule]}}
        yield Case(f"an Istio AuthorizationPolicy added denying every request to {running[0]['name']}", "mitigate",
                   FAIL, state=_with_items(solved, [*items, authz("corpus-deny-all", {})]))
        yield Case(f"an Istio AuthorizationPolicy added denying TRACE to {running[0]['name']}", "mitigate", PASS,
                   state=_with_items(solved, [*items, authz("corpus-deny-trace", {"to": [{"operation": {
                       "methods": ["TRACE"]}}]})]))
    # a Pod Security label: `restricted` where some workload of the namespace breaks it, `privileged` always
    key = ("Namespace", None, namespace)

    def labelled(level: str):
        def edit(obj: dict) -> None:
            obj.setdefault("metadata", {}).setdefault("labels", {})["pod-security.kubernetes.io/enforce"] = level
        return edit
    if state.objects.get(key) is not None:
        restricted = _with_edit(solved, key, labelled("restricted"))
        if pod_security_refused(State(restricted).objects[key], State(restricted)):
            yield Case(f"namespace {namespace} labelled Pod Security enforce: restricted, which its workloads break",
                       "mitigate", FAIL, state=restricted)
        yield Case(f"namespace {namespace} labelled Pod Security enforce: privileged", "mitigate", PASS,
                   state=_with_edit(solved, key, labelled("privileged")))
    # a Service of the application exposed beyond the cluster; one the fault deleted, restored so
    m = spec["mitigation"]
    restored = [e["object"] for e in m["restored"] if e["object"]["kind"] == "Service"]
    services = restored + [s for s in spec["services"] if s.get("type", "ClusterIP") == "ClusterIP" and s["ports"]
                           and (s["namespace"], s["component"]) in {(w["namespace"], w["name"]) for w in running}]
    for s in services[:1]:
        skey = ("Service", s["namespace"], s["name"])
        if state.objects.get(skey) is None:
            continue
        yield Case(f"Service {s['name']} made NodePort", "mitigate", FAIL,
                   state=_with_edit(solved, skey, lambda o: o["spec"].update(type="NodePort")))
        yield Case(f"Service {s['name']} given external IPs", "mitigate", FAIL,
                   state=_with_edit(solved, skey, lambda o: o["spec"].update(externalIPs=["203.0.113.7"])))
        exposed = copy_data(state.objects[skey])
        exposed["metadata"] = {"name": f"{s['name']}-corpus-lb", "namespace": s["namespace"]}
        exposed["spec"] = {k: v for k, v in exposed["spec"].items() if k in ("selector", "ports")}
        exposed["spec"]["type"] = "LoadBalancer"
        if exposed["spec"].get("selector"):
            yield Case(f"a LoadBalancer Service added beside {s['name']}", "mitigate", FAIL,
                       state=_with_items(solved, [*items, exposed]))


def _named_port_cases(service: dict, pods: list, solved: dict, state) -> Iterator[Case]:
    """Another Service broken from its pods' side: the container port its named targetPort names renamed, or
    given another protocol, in its workload's template and pods (the endpoints controller then finds no port
    of that name and protocol), or renumbered under its name (the endpoints controller then leads the Service
    to the new number, where the program does not listen), fails."""
    from ..runtime.state import labels_match, pod_spec

    namespace = service["namespace"]
    owners = {_key(o) for kind in ("Deployment", "StatefulSet", "DaemonSet", "ReplicaSet")
              for o in state.by_kind.get((kind, namespace), [])
              if labels_match(((o.get("spec") or {}).get("template") or {}).get("metadata", {}).get("labels"),
                              service["selector"])}
    held = owners | {_key(p) for p in pods}
    named = next(p for p in service["ports"] if isinstance(p["targetPort"], str))
    for what, change in (("renamed", lambda port: port.update(name=f"{port['name']}-x")),
                         ("made another protocol", lambda port: port.update(
                             protocol="UDP" if named["protocol"] != "UDP" else "TCP")),
                         ("renumbered, its name kept (the Service follows the name, the program listens where it "
                          "did)", lambda port: port.update(containerPort=int(port["containerPort"]) + 1))):
        done: list[bool] = []

        def edit(obj, change=change, done=done):
            for c in pod_spec(obj).get("containers") or []:
                for port in c.get("ports") or []:
                    if port.get("name") == named["targetPort"]:
                        change(port)
                        done.append(True)
        edited = _with_edits(solved, held, edit)
        if done:
            yield Case(f"the fix leaves the container port {named['targetPort']} Service {service['name']} names "
                       f"{what}", "mitigate", FAIL, state=edited)


def _renumbered_port_cases(service: dict, pods: list, solved: dict, state) -> Iterator[Case]:
    """A container port is a declaration: the container port a Service's numbered targetPort leads to declared
    under another number (its name kept, and read by no probe or Service by that name) moves no program, and the
    Service still reaches it (pass)."""
    from ..runtime.state import labels_match, pod_spec

    namespace = service["namespace"]
    target = next((p["targetPort"] for p in service["ports"] if not isinstance(p["targetPort"], str)), None)
    if target is None:
        return
    # every name a Service of the namespace targets: a port of that name stays where it is
    targeted = {str(p.get("targetPort")) for o in state.by_kind.get(("Service", namespace), [])
                for p in (o.get("spec") or {}).get("ports") or [] if isinstance(p, dict)}
    owners = {_key(o) for kind in ("Deployment", "StatefulSet", "DaemonSet", "ReplicaSet")
              for o in state.by_kind.get((kind, namespace), [])
              if labels_match(((o.get("spec") or {}).get("template") or {}).get("metadata", {}).get("labels"),
                              service["selector"])}
    done: list[bool] = []

    def edit(obj):
        for c in pod_spec(obj).get("containers") or []:
            probes = json.dumps([c.get(k) for k in ("livenessProbe", "readinessProbe", "startupProbe")])
            for port in c.get("ports") or []:
                if str(port.get("containerPort")) == str(target) and port.get("name") not in targeted \
                        and (not port.get("name") or json.dumps(port["name"]) not in probes):
                    port["containerPort"] = int(port["containerPort"]) + 1
                    done.append(True)
    edited = _with_edits(solved, owners | {_key(p) for p in pods}, edit)
    if done:
        yield Case(f"the fix declares the container port Service {service['name']} leads to ({target}) under "
                   "another number", "mitigate", PASS, state=edited)


def _local_traffic_cases(service: dict, pods: list, solved: dict, state) -> Iterator[Case]:
    """Another Service's in-cluster traffic kept on each node (`internalTrafficPolicy: Local`): with its
    clients on a node without an endpoint, fails; with every pod on one node, passes."""
    namespace = service["namespace"]
    local = _with_edit(solved, ("Service", namespace, service["name"]),
                       lambda o: o["spec"].update(internalTrafficPolicy="Local"))
    served = {_key(p) for p in pods}

    def spread(pod):
        pod["spec"]["nodeName"] = "node-b" if _key(pod) in served else "node-a"
    every = {_key(p) for p in state.by_kind.get(("Pod", namespace), [])}
    if every - served:
        yield Case(f"Service {service['name']} made node-local (internalTrafficPolicy Local), its clients on another "
                   "node", "mitigate", FAIL, state=_with_edits(local, every, spread))
    yield Case(f"Service {service['name']} made node-local (internalTrafficPolicy Local), every pod on one node",
               "mitigate", PASS, state=_with_edits(local, every, lambda pod: pod["spec"].update(nodeName="node-a")))


def _reference_cases(spec: dict, found: Objects) -> Iterator[Case]:
    """What a workload's pods need to start (the safeguards' `references`), one object of each kind: deleted
    beside the fix, the running pods unharmed, fails; deleted and recreated as it was, passes; a ConfigMap or
    Secret the template then names as `optional`, deleted, passes (a new pod starts without it) unless the
    workload read keys of it (collateral `configs`: it reads nothing there now)."""
    collateral = spec["mitigation"].get("collateral") or {}
    # a ConfigMap of flagd flags is kept by its flags' own check, whoever reads it
    touched = {(e["object"]["kind"], e["object"]["namespace"], e["object"]["name"])
               for e in [e for f in spec["mitigation"]["faults"] for e in f["fields"]] + collateral.get("flags", [])}
    kinds = set()
    for entry in collateral.get("references", []):
        workload = (entry["workload"]["kind"], entry["workload"]["namespace"], entry["workload"]["name"])
        for ref in entry["needs"]:
            key = (ref["kind"], ref["namespace"], ref["name"])
            if ref["kind"] in kinds or key not in found.solved or workload not in found.solved:
                continue
            kinds.add(ref["kind"])
            gone = {k: v for k, v in found.solved.items() if k != key}
            yield Case(f"the fix also deletes {ref['kind']} {ref['name']}, which {workload[2]} needs", "mitigate",
                       FAIL, state=render(gone, found))
            again = _edited(found.solved, key, lambda o: o["metadata"].update(
                uid="00000000-0000-0000-0000-000000000001", creationTimestamp="2026-01-01T01:00:00Z"))
            yield Case(f"{ref['kind']} {ref['name']} deleted and recreated as it was", "mitigate", PASS,
                       state=render(again, found))
            if ref["kind"] in ("ConfigMap", "Secret") and not {workload, key} & (touched | set(found.needs)):
                loosened = _edited(gone, workload, lambda o: _made_optional(o["spec"]["template"], ref["kind"],
                                                                            ref["name"]))
                # a new pod starts without it; where the workload read its keys (collateral `configs`), it reads
                # nothing there now, which is harm
                read = any((c["object"]["kind"], c["object"]["namespace"], c["object"]["name"]) == key
                           for c in collateral.get("configs", []))
                yield Case(f"{ref['kind']} {ref['name']} deleted, {workload[2]} reading it as optional"
                           + (" (reading nothing of it)" if read else ""), "mitigate",
                           FAIL if read else PASS, state=render(loosened, found))


def _made_optional(template: dict, kind: str, name: str) -> None:
    """Every reference of a pod template to the ConfigMap or Secret `name` marked `optional`."""
    from ..runtime.state import pod_references

    spec = template.get("spec") or {}
    holders = []
    for volume in spec.get("volumes") or []:
        holders += [volume.get("configMap"), volume.get("secret")]
        holders += [x for s in (volume.get("projected") or {}).get("sources") or []
                    for x in (s.get("configMap"), s.get("secret"))]
    for container in (spec.get("containers") or []) + (spec.get("initContainers") or []):
        holders += [x for e in container.get("env") or [] for x in ((e.get("valueFrom") or {}).get("configMapKeyRef"),
                                                                   (e.get("valueFrom") or {}).get("secretKeyRef"))]
        holders += [x for e in container.get("envFrom") or [] for x in (e.get("configMapRef"), e.get("secretRef"))]
    for holder in holders:
        if isinstance(holder, dict) and name in (holder.get("name"), holder.get("secretName")):
            holder["optional"] = True
    assert (kind, name) not in pod_references(template)


def _stray_pod_cases(spec: dict, solved: dict) -> Iterator[Case]:
    """Pods that join a Service of the topology without a workload of the topology running them: a bare pod
    carrying the Service's labels, one also named like its workload's pods, another Deployment's pod with
    those labels, fail beside the fix; a pod of the workload from another ReplicaSet of it (a rollout under
    way), and a bare pod without the Service's labels, pass."""
    from ..runtime.state import selected_pods, State

    state = State(solved)
    service = next((s for s in spec["services"] if s["selector"] and state.get(s) is not None
                    and selected_pods(state.get(s), state)), None)
    if service is None:
        return
    pod = selected_pods(state.get(service), state)[0]

    def copied(name: str, owners: list | None, labels: dict | None = None) -> dict:
        out = copy_data(pod)
        out["metadata"] = {**out["metadata"], "name": name, "labels": labels or dict(out["metadata"]["labels"])}
        out["metadata"].pop("ownerReferences", None)
        if owners is not None:
            out["metadata"]["ownerReferences"] = owners
        return out

    items = solved["resources"]["items"]
    base = service["name"]
    owners = pod["metadata"].get("ownerReferences") or []
    yield Case(f"a bare pod carrying Service {base}'s labels beside the fix", "mitigate", FAIL,
               state=_with_items(solved, items + [copied(f"{base}-stray", None)]))
    if owners and owners[0].get("kind") == "ReplicaSet":  # a name of the ReplicaSet's pods, owned by none
        yield Case(f"a bare pod carrying Service {base}'s labels, named like its workload's pods", "mitigate", FAIL,
                   state=_with_items(solved, items + [copied(f"{owners[0]['name']}-zzzzz", None)]))
    rs = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": f"{base}-stray-7b9c6d5f4", "controller": True,
          "uid": "00000000-0000-0000-0000-000000000002"}
    yield Case(f"another Deployment's pod carrying Service {base}'s labels", "mitigate", FAIL,
               state=_with_items(solved, items + [copied(f"{base}-stray-7b9c6d5f4-zzzzz", [rs], {
                   **pod["metadata"]["labels"], "pod-template-hash": "7b9c6d5f4"})]))
    if owners and owners[0].get("kind") == "ReplicaSet":
        deployment = owners[0]["name"].rpartition("-")[0]
        older = {**owners[0], "name": f"{deployment}-5f4d3c2b1"}
        yield Case(f"a pod of {deployment} from an older ReplicaSet of it, still running", "mitigate", PASS,
                   state=_with_items(solved, items + [copied(f"{deployment}-5f4d3c2b1-zzzzz", [older], {
                       **pod["metadata"]["labels"], "pod-template-hash": "5f4d3c2b1"})]))
    # a CronJob whose runs' pods carry the Service's labels: nothing runs at the capture, each run joins it later
    for what, want, labels in ((f"carrying Service {base}'s labels", FAIL, dict(pod["metadata"]["labels"])),
                               ("without the application's labels", PASS, {"run": "report"})):
        cron = {"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": f"{base}-warmer",
                                                                          "namespace": service["namespace"]},
                "spec": {"schedule": "0 3 * * *", "jobTemplate": {"spec": {"template": {
                    "metadata": {"labels": labels},
                    "spec": {"restartPolicy": "Never", "containers": [
                        {"name": "warm", "image": "busybox:1.36", "command": ["sh", "-c", "sleep 3600"]}]}}}}}}
        yield Case(f"a CronJob the fix adds, its runs' pods {what}", "mitigate", want,
                   state=_with_items(solved, items + [cron]))
    yield Case("a bare debugging pod without the application's labels", "mitigate", PASS,
               state=_with_items(solved, items + [copied(f"{base}-debug", None, {"run": "debug"})]))


def _flag_turned(entry: dict) -> tuple | None:
    """(name, flag, variant, value) of the first flag of a safeguards' `flags` entry that evaluates to one value
    and has a variant of another value: the flag as a fix could turn it."""
    from ..runtime.evaluator import flag_outcomes
    from ..runtime.state import same

    for name, flag in entry["flags"].items():
        values = flag_outcomes(flag)
        other = next((v for n, v in sorted(flag["variants"].items()) if not any(same(v, w) for w in values)), None)
        if len(values) == 1 and other is not None:
            return name, flag, next(n for n, v in sorted(flag["variants"].items()) if same(v, other)), other
    return None


def _kept_cases(spec: dict, found: Objects) -> Iterator[Case]:
    """What the fix must leave as healthy as it found it (the safeguards' `collateral`, a faulted Service's ports):
    a Service the fault acts on with its own port moved fails; another flagd flag of a
    shared ConfigMap turned on (its healthy value under another variant, or the same values respelled with an
    unused variant added, passes); an autoscaler's `maxReplicas` lowered, its scaling out disabled
    (`behavior.scaleUp.selectPolicy: Disabled`), or its scale target re-pointed, fails (its ceiling raised
    passes)."""
    collateral = spec["mitigation"].get("collateral") or {}
    for entry in collateral.get("flags", [])[:1]:
        key = (entry["object"]["kind"], entry["object"]["namespace"], entry["object"]["name"])
        turned = _flag_turned(entry)
        if turned is None:
            continue
        name, flag, variant, other = turned
        path = ["data", entry["key"], {"parse": entry["parse"]}, "flags", name]
        on = _edited(found.solved, key, lambda o: _set_at(o, path, {**flag, "defaultVariant": variant}))
        if on is not None:
            yield Case(f"{key[2]}: the fix also turns flag {name} to {variant}", "mitigate", FAIL,
                       state=render(on, found))
        respelled = {**flag, "variants": {**flag["variants"], "itbench-unused": other}}
        kept = _edited(found.solved, key, lambda o: _set_at(o, path, respelled))
        if kept is not None:
            yield Case(f"{key[2]}: flag {name} given an unused variant, its value kept", "mitigate", PASS,
                       state=render(kept, found))
        if on is not None and entry.get("readers") and key in found.solved:
            # the flags flagd reads decide, whichever ConfigMap holds them (runtime.flags_kept)
            workloads = _reader_workloads(entry["readers"])
            if all(w in found.solved for w in workloads):
                yield Case(f"{key[2]}: the flags moved to a new ConfigMap flagd is pointed at, flag {name} turned to "
                           f"{variant} there, the named one left healthy", "mitigate", FAIL,
                           state=render(_moved(found, entry["object"], workloads, on[key], found.solved[key]), found))
                yield Case(f"{key[2]}: the flags moved to a new ConfigMap flagd is pointed at, flag {name} turned to "
                           f"{variant} in the named one, which flagd no longer reads", "mitigate", PASS,
                           state=render(_moved(found, entry["object"], workloads, found.solved[key], on[key]), found))
    # a Service a fault acts on keeps the meaning of what the fault did not change: its port moved to another
    # number (the target the fix restored kept) breaks every client of the old one
    services = {(s["namespace"], s["name"]): s for s in spec["services"]}
    for ref in spec["mitigation"]["services"][:2]:
        key = ("Service", ref["namespace"], ref["name"])
        healthy = services.get((ref["namespace"], ref["name"]))
        if key not in found.solved or not healthy or not healthy.get("ports"):
            continue
        first = healthy["ports"][0]

        def moved(obj: dict, first=first) -> None:
            for p in obj["spec"].get("ports") or []:
                if str(p.get("port")) == str(first["port"]) and str(p.get("protocol") or "TCP") == first["protocol"]:
                    p.setdefault("targetPort", first["targetPort"])
                    p["port"] = int(first["port"]) + 1
        yield Case(f"{key[2]}: the fix also moves the Service's own port {first['port']}", "mitigate", FAIL,
                   state=render(_edited(found.solved, key, moved), found))
    for entry in collateral.get("autoscalers", [])[:2]:
        key = (entry["object"]["kind"], entry["object"]["namespace"], entry["object"]["name"])
        if key not in found.solved:
            continue
        if entry.get("maxReplicas", 0) > max(1, entry.get("minReplicas", 1)):
            lower = _edited(found.solved, key, lambda o: o["spec"].update(maxReplicas=entry["maxReplicas"] - 1))
            yield Case(f"{key[2]}: the autoscaler's maxReplicas lowered", "mitigate", FAIL, state=render(lower, found))
        if entry.get("maxReplicas", 0) > entry.get("minReplicas", 1):
            frozen = _edited(found.solved, key, lambda o: o["spec"].setdefault("behavior", {}).update(
                scaleUp={"selectPolicy": "Disabled"}))
            yield Case(f"{key[2]}: the autoscaler kept from scaling out (scaleUp selectPolicy Disabled)", "mitigate",
                       FAIL, state=render(frozen, found))
            # the same harm through valid values: an hour's window, then a pod per half hour (hpa_scaling_seconds)
            slowed = _edited(found.solved, key, lambda o: o["spec"].setdefault("behavior", {}).update(
                scaleUp={"stabilizationWindowSeconds": 3600, "selectPolicy": "Min",
                         "policies": [{"type": "Pods", "value": 1, "periodSeconds": 1800}]}))
            yield Case(f"{key[2]}: the autoscaler throttled to a pod per half hour after an hour's window (scaleUp)",
                       "mitigate", FAIL, state=render(slowed, found))
            damped = _edited(found.solved, key, lambda o: o["spec"].setdefault("behavior", {}).update(
                scaleUp={"stabilizationWindowSeconds": 60, "policies": [
                    {"type": "Percent", "value": 50, "periodSeconds": 60}]},
                scaleDown={"stabilizationWindowSeconds": 600}))
            yield Case(f"{key[2]}: the autoscaler's scaling damped as operators do (a minute's and ten minutes' "
                       "windows, 50% a minute out)", "mitigate", PASS, state=render(damped, found))
        if "maxReplicas" in entry:
            higher = _edited(found.solved, key, lambda o: o["spec"].update(maxReplicas=entry["maxReplicas"] + 1))
            yield Case(f"{key[2]}: the autoscaler's maxReplicas raised", "mitigate", PASS, state=render(higher, found))
        if "target" in entry:
            other = _edited(found.solved, key, lambda o: o["spec"]["scaleTargetRef"].update(
                name=entry["target"]["name"] + "-other"))
            yield Case(f"{key[2]}: the autoscaler re-pointed at another workload", "mitigate", FAIL,
                       state=render(other, found))


def _unready_copy(workload: dict) -> dict:
    out = copy_data(workload)
    out.setdefault("status", {}).pop("readyReplicas", None)
    out["status"].pop("availableReplicas", None)
    return out


def _revision_cases(solved: dict, ref: dict) -> Iterator[Case]:
    key = (ref["kind"], ref["namespace"], ref["name"])
    pods = {_key(p) for p in _pods_of(solved, ref)}
    old, new = f"{ref['name']}-5d4f8b7c9", f"{ref['name']}-7c9d6f5b8"

    def staged(strategy: dict, current: str, pod_revision: str, updated: bool):
        def sts(obj: dict) -> None:
            replicas = int(obj["spec"].get("replicas", 1))
            obj["spec"]["updateStrategy"] = copy.deepcopy(strategy) if strategy.get("type") != "RollingUpdate" else \
                {"type": "RollingUpdate", "rollingUpdate": {"partition": replicas}}
            status = obj.setdefault("status", {})
            status.update(currentRevision=current, updateRevision=new, currentReplicas=0 if updated else replicas)
            if updated:
                status["updatedReplicas"] = replicas
            else:
                status.pop("updatedReplicas", None)  # the API server leaves zero counts out

        def pod(obj: dict) -> None:
            obj["metadata"]["labels"] = {**obj["metadata"].get("labels", {}), "controller-revision-hash": pod_revision}
        state = _with_edits(solved, {key}, sts)
        return _with_edits(state, pods, pod)

    yield Case(f"{ref['name']}: the fix staged by a partition, every pod at the faulty revision", "mitigate", FAIL,
               state=staged({"type": "RollingUpdate"}, old, old, False))
    yield Case(f"{ref['name']}: the fix left to OnDelete, every pod at the faulty revision", "mitigate", FAIL,
               state=staged({"type": "OnDelete"}, old, old, False))
    # the controller never moves currentRevision under OnDelete: the pods say the rollout is done
    yield Case(f"{ref['name']}: an OnDelete rollout with every pod replaced", "mitigate", PASS,
               state=staged({"type": "OnDelete"}, old, new, True))


def _finished_pod_cases(solved: dict, namespace: str) -> Iterator[Case]:
    """`all pods ... ready` beside a finished pod: the agent's one-shot diagnostic pod that exited non-zero
    (`kubectl run --restart=Never`, owned by nothing of the application, selected by none of its Services) is
    a finished run, no unready pod of the application (pass); a failed pod carrying a workload's pod labels
    with no controller (one its ReplicaSet would adopt, a Service selects) is the application's (fail)."""
    probe = {"apiVersion": "v1", "kind": "Pod",
             "metadata": {"name": "corpus-curl-check", "namespace": namespace, "labels": {"run": "corpus-curl-check"}},
             "spec": {"restartPolicy": "Never", "containers": [
                 {"name": "corpus-curl-check", "image": "curlimages/curl:8.10.1", "args": ["curl", "-sf", "http://x"]}]},
             "status": {"phase": "Failed", "conditions": [{"type": "Ready", "status": "False", "reason": "PodCompleted"}],
                        "startTime": "2026-01-01T00:00:00Z"}}
    yield Case("the solved state, the agent's one-shot diagnostic pod finished with an error", "mitigate", PASS,
               state=_with_items(solved, solved["resources"]["items"] + [probe]))
    pods = [o for o in solved["resources"]["items"] if o.get("kind") == "Pod" and (o.get("metadata") or {}).get(
        "namespace") == namespace and (o.get("metadata") or {}).get("ownerReferences")]
    if pods:
        orphan = copy_data(pods[0])
        orphan["metadata"]["name"] = orphan["metadata"]["name"] + "-orphan"
        orphan["metadata"].pop("ownerReferences", None)
        orphan["status"] = {"phase": "Failed", "reason": "Error", "startTime": "2026-01-01T00:00:00Z"}
        yield Case("the solved state, a failed pod with a workload's pod labels and no controller", "mitigate", FAIL,
                   state=_with_items(solved, solved["resources"]["items"] + [orphan]))


def _evicted_cases(solved: dict, ref: dict) -> Iterator[Case]:
    pods = _pods_of(solved, ref)
    if not pods:
        return
    evicted = copy_data(pods[0])
    evicted["metadata"]["name"] = evicted["metadata"]["name"] + "-evicted" if ref["kind"] == "StatefulSet" else \
        evicted["metadata"]["name"][:-5] + "zzzzz"
    evicted["status"] = {"phase": "Failed", "reason": "Evicted", "message": "The node was low on resource: memory.",
                         "startTime": "2026-01-01T00:00:00Z"}
    yield Case(f"{ref['name']} fixed, a pod of it evicted before and left behind", "mitigate", PASS,
               state=_with_items(solved, solved["resources"]["items"] + [evicted]))
    yield Case(f"{ref['name']} fixed, a pod of it evicted before the fix (dated) and left behind", "mitigate", PASS,
               state={**_with_items(solved, solved["resources"]["items"] + [evicted]), "fixed_at": FIXED_AT})
    # evicted again and again under the fix, each time replaced: an eviction loop, as a restart loop is
    loop = []
    for n, (start, end) in enumerate((("00:10:05", "00:11:00"), ("00:11:01", "00:11:59"))):
        again = copy_data(evicted)
        again["metadata"]["name"] = evicted["metadata"]["name"][:-1] + str(n)
        again["status"] = {**evicted["status"], "startTime": f"2026-01-01T{start}Z",
                           "message": "Pod ephemeral local storage usage exceeds the total limit of containers 100Mi.",
                           "containerStatuses": [{"name": "main", "ready": False, "restartCount": 0, "state": {
                               "terminated": {"exitCode": 137, "reason": "Error", "startedAt": f"2026-01-01T{start}Z",
                                              "finishedAt": f"2026-01-01T{end}Z"}}}]}
        loop.append(again)
    yield Case(f"{ref['name']} fixed, its pods evicted after the fix and replaced (an eviction loop)", "mitigate", FAIL,
               state={**_with_items(solved, solved["resources"]["items"] + loop), "fixed_at": FIXED_AT})


def _other_workload_cases(m: dict, other: dict, solved: dict) -> Iterator[Case]:
    """Another workload of the application (neither a fault's nor the ground truth's) is held to what the named
    ones are: its program replaced (`sleep infinity`, another image), its pods given another resolver or its
    limit squeezed, fail, and so does its pod OOM-killed after the fix; restarted before the fix, or rolled by
    `rollout restart`, passes."""
    from ..runtime.state import number

    key = (other["kind"], other["namespace"], other["name"])
    entry = next((e for e in m.get("application", []) if _key_of(e["object"]) == key), None)
    if entry is not None and not m.get("only"):  # `only`: what the workloads run is not graded
        def containers(obj):
            return obj["spec"]["template"]["spec"]["containers"]
        edits = [("its container's command replaced by `sleep infinity`",
                  lambda o: containers(o)[0].update(command=["sleep", "infinity"])),
                 ("its container's image replaced by busybox", lambda o: containers(o)[0].update(image="busybox:1.36")),
                 ("its pods given dnsPolicy Default", lambda o: o["spec"]["template"]["spec"].update(dnsPolicy="Default"))]
        for name, limits in sorted((entry.get("limits") or {}).items())[:1]:
            for resource in sorted(limits)[:1]:
                def squeeze(o, name=name, resource=resource, value=number(limits[resource])):
                    for c in containers(o):
                        if c.get("name") == name:
                            c["resources"]["limits"][resource] = _quantity(resource, value / 10)
                edits.append((f"its container {name}'s {resource} limit squeezed", squeeze))
        edits += [("its container given HTTPS_PROXY at a proxy that is not there", lambda o: containers(o)[0].update(
                      env=list(containers(o)[0].get("env") or []) + [dict(DEAD_PROXY)])),
                  ("a container added", lambda o: containers(o).append(
                      {"name": "extra", "image": "busybox:1.36", "command": ["sleep", "infinity"]})),
                  ("an init container added", lambda o: o["spec"]["template"]["spec"].setdefault(
                      "initContainers", []).append({"name": "extra-init", "image": "busybox:1.36"}))]
        address = _address_env(entry, solved, other["namespace"])
        if address is not None:
            name, var, value, fqdn = address

            def set_env(o, text, name=name, var=var):
                for c in containers(o):
                    for e in (c.get("env") or []) if c.get("name") == name else []:
                        if e.get("name") == var:
                            e.pop("valueFrom", None)
                            e["value"] = text
            edits.append((f"its container {name}'s {var} pointed at an address that names no Service",
                          lambda o: set_env(o, value.replace(fqdn[0], "nowhere-x", 1))))
            yield Case(f"another workload, {other['name']}: its container {name}'s {var} spelled with the Service's "
                       "full name", "mitigate", PASS,
                       state=_with_edit(solved, key, lambda o: set_env(o, value.replace(fqdn[0], fqdn[1], 1))))
        if len(entry["keep"]["spec"]["template"]["spec"]["containers"] or []) == 1:
            yield Case(f"another workload, {other['name']}: its one container renamed", "mitigate", PASS,
                       state=_with_edit(solved, key, lambda o: containers(o)[0].update(name="renamed")))
        for what, edit in edits:
            yield Case(f"the fix leaves another workload, {other['name']}, with {what}", "mitigate", FAIL,
                       state=_with_edit(solved, key, edit))
    restarted = _with_edit(solved, key, lambda o: o["spec"]["template"].setdefault("metadata", {}).setdefault(
        "annotations", {}).update({"kubectl.kubernetes.io/restartedAt": "2026-01-01T00:00:00Z"}))
    yield Case(f"another workload, {other['name']}, rolled by `rollout restart`", "mitigate", PASS, state=restarted)
    pods = _pods_of(solved, other)
    if pods:
        one = {_key(pods[-1])}
        after = {**_with_edits(solved, one, _restarted("2026-01-01T00:12:00Z")), "fixed_at": FIXED_AT}
        yield Case(f"another workload, {other['name']}, OOM-killed after the fix", "mitigate", FAIL, state=after)
        before = {**_with_edits(solved, one, _restarted("2026-01-01T00:05:00Z")), "fixed_at": FIXED_AT}
        yield Case(f"another workload, {other['name']}, restarted before the fix, stable since", "mitigate", PASS,
                   state=before)


def _address_env(entry: dict, solved: dict, namespace: str):
    """(container, variable, value, (host, the host's full Service name)) of the first literal environment
    variable of a `programs` entry's containers whose value is an address of a Service of the state by its
    short name (`cart:8080`); None when there is none."""
    from ..runtime.evaluator import ADDRESS
    from ..runtime.state import State

    state = State(solved)
    for name, env in sorted((entry.get("env") or {}).items()):
        for e in env.get("env") or []:
            value = e.get("value")
            match = ADDRESS.match(value) if isinstance(value, str) else None
            host = match["host"] if match else None
            if host and "." not in host and state.get({"kind": "Service", "namespace": namespace, "name": host}):
                return name, e["name"], value, (host, f"{host}.{namespace}.svc.cluster.local")
    return None


# a variable a program's runtime reads that its spec never set: every outbound call sent through a proxy nothing serves
DEAD_PROXY = {"name": "HTTPS_PROXY", "value": "http://10.255.255.1:3128"}


def _program_cases(found: Objects, entry: dict) -> Iterator[Case]:
    from ..runtime.state import pod_spec

    ref = entry["object"]
    key = (ref["kind"], ref["namespace"], ref["name"])
    containers = pod_spec(entry["keep"])["containers"]
    for field, value in (("command", ["sleep", "infinity"]), ("args", ["--help"])):
        bare = [c["name"] for c in containers if field in c and c[field] is None]
        if bare:
            def edit(obj, field=field, value=value, name=bare[0]):
                for c in pod_spec(obj)["containers"]:
                    if c.get("name") == name:
                        c[field] = list(value)
            changed = _edited(found.solved, key, edit)
            if changed is not None:
                yield Case(f"{ref['name']}: container {bare[0]} given a {field} its healthy spec has not "
                           f"({' '.join(value)})", "mitigate", FAIL, state=render(changed, found))
    first = containers[0]["name"] if containers else None
    for what, edit in (
            ("given HTTPS_PROXY at a proxy that is not there (a variable its healthy spec does not set)",
             lambda c: c.update(env=list(c.get("env") or []) + [dict(DEAD_PROXY)])),
            ("given an emptyDir mounted over a path its healthy spec does not mount",
             lambda c: c.update(volumeMounts=list(c.get("volumeMounts") or []) + [
                 {"name": "itbench-scratch", "mountPath": "/usr/share/itbench-shadowed"}])),
            ("given a postStart hook that runs a command",
             lambda c: c.update(lifecycle={**(c.get("lifecycle") or {}), "postStart": {
                 "exec": {"command": ["sh", "-c", "rm -rf /usr/share/nginx/html/*; true"]}}}))):
        if first is None or ("postStart" in what and "postStart" in (containers[0].get("lifecycle") or {})):
            continue

        def added(obj, edit=edit, what=what, name=first):
            spec = pod_spec(obj)
            for c in spec["containers"]:
                if c.get("name") == name:
                    edit(c)
            if "emptyDir" in what:
                spec["volumes"] = list(spec.get("volumes") or []) + [{"name": "itbench-scratch", "emptyDir": {}}]
        changed = _edited(found.solved, key, added)
        judged = entry.get("env", {}).get(first) if "HTTPS_PROXY" in what else \
            entry.get("mounts", {}).get(first) if "emptyDir" in what else True
        if changed is not None and judged is not None:
            yield Case(f"{ref['name']}: container {first} {what}", "mitigate", FAIL, state=render(changed, found))
    # a liveness probe that can never succeed, delayed past the capture (a restart loop to come), fails; one on a
    # port the container serves passes
    held = (entry.get("probes") or {}).get(first) if first is not None else None
    if held is not None:
        serves = held.get("serves") or []
        unserved = next(p for p in range(65000, 65535) if p not in serves)
        for what, probe, want in (
                ("a liveness probe that always fails (exec false), delayed 600s",
                 {"exec": {"command": ["false"]}, "initialDelaySeconds": 600}, FAIL),
                (f"a liveness probe on port {unserved}, which it does not serve, delayed 600s",
                 {"httpGet": {"path": "/", "port": unserved}, "initialDelaySeconds": 600}, FAIL if serves else None),
                (f"a liveness probe on port {serves[0] if serves else None}, which it serves",
                 {"tcpSocket": {"port": serves[0] if serves else None}, "initialDelaySeconds": 600},
                 PASS if serves else None)):
            if want is None:
                continue

            def probed(obj, probe=probe, name=first):
                for c in pod_spec(obj)["containers"]:
                    if c.get("name") == name:
                        c["livenessProbe"] = copy.deepcopy(probe)
            changed = _edited(found.solved, key, probed)
            if changed is not None:
                yield Case(f"{ref['name']}: container {first} given {what}", "mitigate", want,
                           state=render(changed, found))
    from ..runtime.state import image_defaults
    for c in containers:
        defaults = image_defaults(c.get("image"))
        if defaults is None or c.get("command") is not None or c.get("args") is not None:
            continue
        for what, spelled in (("its CMD as args", {"args": list(defaults[1])}),
                              ("its ENTRYPOINT and CMD as command and args",
                               {"command": list(defaults[0]), "args": list(defaults[1])} if defaults[0] else None),
                              ("its ENTRYPOINT alone as command (the CMD dropped: another program)",
                               {"command": list(defaults[0])} if defaults[0] else None)):
            if spelled is None:
                continue

            def spell(obj, name=c["name"], spelled=spelled):
                for x in pod_spec(obj)["containers"]:
                    if x.get("name") == name:
                        x.update(copy.deepcopy(spelled))
            changed = _edited(found.solved, key, spell)
            if changed is not None:
                yield Case(f"{ref['name']}: container {c['name']} given its image's own program, {what}", "mitigate",
                           FAIL if "alone" in what else PASS, state=render(changed, found))
        break
    if entry.get("runs") and entry.get("placement") is not None:  # its runs' pods placed on no node there is
        placed = _edited(found.solved, key, lambda o: pod_spec(o).update(
            nodeSelector={"kubernetes.io/hostname": "itbench-no-such-node"}))
        if placed is not None:
            yield Case(f"{ref['name']} fixed, its runs' pods given a node selector no node matches", "mitigate", FAIL,
                       state=render(placed, found))
    own = [c["name"] for c in containers if c.get("command")]
    if own and ref["kind"] in ("Job", "CronJob"):  # a run that succeeds as `true` is no run of the job's program
        def trivial(obj, name=own[0]):
            for c in pod_spec(obj)["containers"]:
                if c.get("name") == name:
                    c["command"] = ["true"]
                    c.pop("args", None)
        changed = _edited(found.solved, key, trivial)
        if changed is not None:
            yield Case(f"{ref['name']}: container {own[0]}'s command replaced by `true`", "mitigate", FAIL,
                       state=render(changed, found))
    if entry.get("runs"):  # a CronJob that starts no run: suspended, or on a schedule that never fires
        for what, want, edit in (
                ("suspended", FAIL, lambda o: o["spec"].update(suspend=True)),
                ("on a schedule that never fires (the 31st of February)", FAIL,
                 lambda o: o["spec"].update(schedule="0 0 31 2 *")),
                ("on a slower schedule that fires (every two hours)", FAIL,
                 lambda o: o["spec"].update(schedule="17 */2 * * *"))):
            changed = _edited(found.solved, key, edit)
            if changed is not None:
                yield Case(f"{ref['name']} fixed, {what}", "mitigate", want, state=render(changed, found))
        yield from _cron_cadence_cases(ref, key, found)
    resolver = _edited(found.solved, key, lambda o: pod_spec(o).update(
        dnsPolicy="None", dnsConfig={"nameservers": ["8.8.8.8"]}))
    if resolver is not None and pod_spec(entry["keep"]).get("dnsPolicy") != "None":
        yield Case(f"{ref['name']}: its pods given an outside resolver beside the fix", "mitigate", FAIL,
                   state=render(resolver, found))
    respelled = _edited(found.solved, key, lambda o: [c.update(image=_respelled(c["image"]))
                                                      for c in pod_spec(o)["containers"]
                                                      if isinstance(c.get("image"), str)])
    if respelled is not None and respelled[key] != found.solved[key]:
        yield Case(f"{ref['name']}: its images spelled another way (registry, library/, :latest)", "mitigate", PASS,
                   state=render(respelled, found))
    pinned = _edited(found.solved, key, lambda o: [c.update(image=_pinned(c["image"]))
                                                   for c in pod_spec(o)["containers"]
                                                   if isinstance(c.get("image"), str)])
    if pinned is not None and pinned[key] != found.solved[key]:
        yield Case(f"{ref['name']}: its images' tags pinned to a digest", "mitigate", PASS, state=render(pinned, found))
        yield from _pinned_elsewhere_cases(found, ref, pinned)
    yield from _patched_pod_cases(found, ref)


def _patched_pod_cases(found: Objects, ref: dict) -> Iterator[Case]:
    """A workload's running pods patched in place, its template left healthy: a container's image changed (the
    kubelet restarts it with that image; no controller reconciles a pod's spec), `activeDeadlineSeconds` set (the
    kubelet kills each pod that long after it started): fail."""
    if ref["kind"] not in ("Deployment", "StatefulSet"):
        return
    solved = render(found.solved, found)
    pods = {_key(p) for p in _pods_of(solved, ref)}
    if not pods:
        return

    def image(pod: dict) -> None:
        for c in pod["spec"].get("containers") or []:
            c["image"] = "docker.io/library/busybox:1.36"
        for status in (pod.get("status") or {}).get("containerStatuses") or []:
            status["image"] = "docker.io/library/busybox:1.36"
    yield Case(f"{ref['name']}: its running pods' images patched in place, its template kept", "mitigate", FAIL,
               state=_with_edits(solved, pods, image))
    yield Case(f"{ref['name']}: its running pods given activeDeadlineSeconds in place", "mitigate", FAIL,
               state=_with_edits(solved, pods, lambda pod: pod["spec"].update(activeDeadlineSeconds=900)))


def _pinned_elsewhere_cases(found: Objects, ref: dict, pinned: dict) -> Iterator[Case]:
    """A workload's images pinned to a digest, with the state's `incident` holding its healthy pods as the agent
    found them, their container statuses' `imageID` showing the digest each tag ran as: pinned to that digest
    (pass), to another one (fail: the runtime pulls by the digest alone, and runs another image)."""
    from ..runtime.state import image_digest, image_ref

    solved = render(found.solved, found)
    pods = _pods_of(solved, ref)
    if not pods:
        return
    ran = {}  # each healthy tag: the digest its pods ran as

    def ran_as(pod: dict) -> dict:
        out = copy_data(pod)
        out["metadata"]["name"] = f"{out['metadata']['name']}-found"
        images = {c.get("name"): c.get("image") for c in out["spec"].get("containers") or []}
        for status in (out.get("status") or {}).get("containerStatuses") or []:
            image = images.get(status.get("name"))
            if isinstance(image, str) and image_digest(image) is None:
                ran[image_ref(image)] = "sha256:" + hashlib.sha256(f"ran {image}".encode()).hexdigest()
                status["imageID"] = image_ref(image).rpartition(":")[0] + "@" + ran[image_ref(image)]
        return out
    incident = {"at": "2026-01-01T00:00:00Z", "resources": {"kind": "List", "items": [ran_as(p) for p in pods]}}
    if not ran:
        return
    key = (ref["kind"], ref["namespace"], ref["name"])
    for tagless in (False, True):  # `repo:tag@sha256:D`, or `repo@sha256:D` (the pod's imageID copied): one image
        for want, digest in ((PASS, lambda tag: ran[tag]), (FAIL, lambda tag: _pinned(tag).rpartition("@")[2])):
            def pin(obj: dict, digest=digest, tagless=tagless) -> None:
                from ..runtime.state import pod_spec
                for c in pod_spec(obj)["containers"]:
                    tag = image_ref(c["image"]) if isinstance(c.get("image"), str) else None
                    if tag in ran:
                        c["image"] = f"{tag.rpartition(':')[0] if tagless else tag}@{digest(tag)}"
            state = _edited(found.solved, key, pin)
            if state is None:
                continue
            state = {**render(state, found), "incident": incident}
            yield Case(f"{ref['name']}: its images pinned to {'the digest' if want == PASS else 'another digest than'} "
                       f"its pods ran as{', without their tag' if tagless else ''} (the state's incident shows it)",
                       "mitigate", want, state=state)


def _pinned(image: str) -> str:
    """An image reference with its tag (`:latest` where it has none) pinned to a digest: what the runtime pulls."""
    from ..runtime.state import image_ref

    return image if "@" in image else image_ref(image) + "@sha256:" + hashlib.sha256(image.encode()).hexdigest()


def _respelled(image: str) -> str:
    """Another spelling of one image reference: Docker Hub's registry and `library/` spelled out, `:latest`
    written, or left out where it was written."""
    if "@" in image:
        return image
    first, slash, rest = image.partition("/")
    hub = not slash or not ("." in first or ":" in first or first == "localhost")
    if hub and image.startswith(("docker.io/", "index.docker.io/")):
        bare = image.split("/", 1)[1]
        bare = bare[len("library/"):] if bare.startswith("library/") else bare
        return bare[:-len(":latest")] if bare.endswith(":latest") else bare
    if hub:
        name = image if "/" in image else f"library/{image}"
        return f"docker.io/{name}" + ("" if ":" in image.rpartition("/")[2] else ":latest")
    if ":" not in image.rpartition("/")[2]:
        return image + ":latest"
    return image


_PROBE_ACTIONS = ("httpGet", "tcpSocket", "grpc", "exec")
# the API server's defaults of a probe (SetDefaults_Probe, SetDefaults_HTTPGetAction), written here apart from
# the evaluator's model so that the corpus tests it
_SERVED_PROBE = {"timeoutSeconds": 1, "periodSeconds": 10, "successThreshold": 1, "failureThreshold": 3}


def _probe_like(value) -> bool:
    return isinstance(value, dict) and any(a in value for a in _PROBE_ACTIONS)


def _served_probe(probe: dict) -> dict:
    out = {**_SERVED_PROBE, **copy.deepcopy(probe)}
    if isinstance(out.get("httpGet"), dict):
        out["httpGet"] = {"path": "/", "scheme": "HTTP", **out["httpGet"]}
    return out


def _in_unit(value: float, like) -> str:
    """`value` (bytes, cores, a count) as a quantity in the unit of `like` (`10Mi` -> Mi) when it is whole there."""
    m = re.match(r"^[0-9.]+([A-Za-z]+)$", str(like))
    from ..runtime.state import number

    unit = number("1" + m.group(1)) if m else None
    if unit and float(value / unit).is_integer():
        return f"{int(value / unit)}{m.group(1)}"
    return str(int(value)) if float(value).is_integer() else str(value)


def _changed_quantity_cases(found: Objects, key: tuple, change: dict) -> Iterator[Case]:
    """A quantity the fault set (a memory limit too low) `changed` barely, staying on the fault's side of the
    healthy value: fail. Moved to the healthy value, past it, or (a limit) removed: pass."""
    from ..runtime.evaluator import quantity_field
    from ..runtime.state import number

    path, where, kind = change["path"], _show(change["path"]), quantity_field(change["path"])
    faulty = number(change.get("faulty"))
    healthy = number(change.get("healthy")) if change.get("healthy") is not None else None
    if kind is None or faulty is None or (change.get("healthy") is not None and healthy is None):
        return
    lowered = (healthy is None and kind == "limit") or (healthy is not None and faulty < healthy) or \
        (healthy is None and kind == "count" and faulty < 1)
    raised = (healthy is None and kind == "request") or (healthy is not None and faulty > healthy) or \
        (healthy is None and kind == "count" and faulty > 1)
    like = change.get("faulty")
    if lowered:
        barely = faulty + (1 if kind == "count" else number("1Mi") if "i" in str(like) else faulty * 0.1)
        fixes = [("raised to twice the fault's value" if healthy is None else "raised above the healthy value",
                  2 * faulty if healthy is None else 2 * healthy)]
    elif raised:
        barely = faulty - (1 if kind == "count" else faulty * 0.1)
        fixes = [("lowered to half the fault's value" if healthy is None else "lowered to the healthy value",
                  faulty / 2 if healthy is None else healthy)]
    else:
        return
    if kind == "count":
        barely = round(barely)
    wrong = _edited(found.solved, key, lambda o: _set_at(o, path, barely if kind == "count" else _in_unit(barely, like)))
    if wrong is not None and barely != faulty:
        yield Case(f"{key[2]}: {where} changed barely ({change.get('faulty')} -> {_in_unit(barely, like)}), still "
                   "on the fault's side", "mitigate", FAIL, state=render(wrong, found))
    for text, value in fixes:
        right = _edited(found.solved, key, lambda o: _set_at(o, path, round(value) if kind == "count"
                                                             else _in_unit(value, like)))
        if right is not None:
            yield Case(f"{key[2]}: {where} {text}", "mitigate", PASS, state=render(right, found))
    if kind == "limit" and lowered:
        unlimited = _edited(found.solved, key, lambda o: _drop_limit(o, path))
        if unlimited is not None:
            yield Case(f"{key[2]}: {where} removed (no limit at all)", "mitigate", PASS, state=render(unlimited, found))


def _probe_fix_cases(found: Objects, key: tuple, change: dict) -> Iterator[Case]:
    """A probe the fault broke, fixed in place (its action pointed where the healthy probe, or the container,
    answers; the rest as the fault left it, the server's defaults spelled out): pass. The faulty probe kept,
    spelled as the API server returns it: fail."""
    path, faulty = change["path"], change["faulty"]
    obj = found.solved.get(key)
    if obj is None:
        return
    healthy = change.get("healthy") if _probe_like(change.get("healthy")) else None
    fixed = _served_probe(faulty)
    if healthy is not None:
        for action in _PROBE_ACTIONS:
            fixed.pop(action, None)
        action = next(a for a in _PROBE_ACTIONS if a in healthy)
        fixed[action] = copy.deepcopy(healthy[action])
        if action == "httpGet":
            fixed[action] = {"path": "/", "scheme": "HTTP", **fixed[action]}
    else:
        port = _container_port(obj, path)
        action = next(a for a in _PROBE_ACTIONS if a in faulty)
        if port is None or action not in ("httpGet", "tcpSocket"):
            return
        fixed[action] = {**fixed[action], "port": port}
    if _served_probe(faulty) == fixed:
        return
    where = _show(path)
    edited = _edited(found.solved, key, lambda o: _set_at(o, path, fixed))
    if edited is not None:
        yield Case(f"{key[2]}: {where} fixed in place, the rest of the fault's probe and the server's defaults kept",
                   "mitigate", PASS, state=render(edited, found))
    from ..runtime.state import at

    probed = (fixed.get("httpGet") or fixed.get("tcpSocket") or {}).get("port")
    container = at(obj, path[:-1])
    if isinstance(probed, int):
        # what the probe checks, by another handler: a TCP check of the port the fixed probe reaches, and that
        # port by the container's name for it
        tcp = {**{k: v for k, v in fixed.items() if k not in _PROBE_ACTIONS}, "tcpSocket": {"port": probed}}
        switched = _edited(found.solved, key, lambda o: _set_at(o, path, tcp))
        if switched is not None:
            yield Case(f"{key[2]}: {where} fixed as a TCP check of port {probed}", "mitigate", PASS,
                       state=render(switched, found))
        name = next((p.get("name") for p in (container.get("ports") or [] if isinstance(container, dict) else [])
                     if isinstance(p, dict) and p.get("containerPort") == probed and p.get("name")), None)
        if name is not None:
            action = "httpGet" if "httpGet" in fixed else "tcpSocket"
            by_name = {**fixed, action: {**fixed[action], "port": name}}
            named = _edited(found.solved, key, lambda o: _set_at(o, path, by_name))
            if named is not None:
                yield Case(f"{key[2]}: {where} fixed with the container's name `{name}` for port {probed}",
                           "mitigate", PASS, state=render(named, found))
    kept = _edited(found.solved, key, lambda o: _set_at(o, path, _served_probe(faulty)))
    if kept is not None:
        yield Case(f"{key[2]}: {where} left as the fault made it, spelled with the server's defaults", "mitigate",
                   FAIL, state=render(kept, found))
    from ..runtime.evaluator import probe_action

    if probe_action(faulty) != probe_action(change.get("healthy")):
        # the fault's check kept, only made late or patient: the kubelet still acts on it once it runs
        for title, timing in (("delayed an hour", {"initialDelaySeconds": 3600}),
                              ("made to fail 2^31-1 times before it acts", {"failureThreshold": 2147483647}),
                              ("run once a day", {"periodSeconds": 86400})):
            late = _edited(found.solved, key, lambda o, t=timing: _set_at(o, path, {**_served_probe(faulty), **t}))
            if late is not None:
                yield Case(f"{key[2]}: {where} left checking what the fault made it check, {title}", "mitigate",
                           FAIL, state=render(late, found))
    from ..runtime.evaluator import unserved_port

    dead = unserved_port(probe_action(faulty, container if isinstance(container, dict) else None), change.get("serves"))
    if dead is not None:
        # another check on the port the container does not serve (the fault's with another path, an HTTP check
        # of a TCP one), its failure put off: it still cannot succeed, so the kubelet kills the container once it runs
        path_there = (faulty.get("httpGet") or {}).get("path")
        other = {"path": "/ready" if path_there == "/" else "/", "port": dead, "scheme": "HTTP"}
        moved = {**{k: v for k, v in _served_probe(faulty).items() if k not in _PROBE_ACTIONS},
                 "httpGet": other, "initialDelaySeconds": 600}
        late = _edited(found.solved, key, lambda o: _set_at(o, path, moved))
        if late is not None:
            yield Case(f"{key[2]}: {where} given another check on port {dead}, which the container does not serve, "
                       "delayed ten minutes", "mitigate", FAIL, state=render(late, found))


def _container_port(obj: dict, path: list):
    """The first port the container at `path` declares (its number)."""
    from ..runtime.state import at

    container = at(obj, path[:-1])
    ports = container.get("ports") if isinstance(container, dict) else None
    for port in ports or []:
        if isinstance(port, dict) and isinstance(port.get("containerPort"), int):
            return port["containerPort"]
    return None


def _exposed_cases(found: Objects, entry: dict) -> Iterator[Case]:
    """A deleted Service recreated as `kubectl expose` writes it: its one port unnamed, the target port a number
    (or, where the container names it, the name), the API server's fields added."""
    ref = entry["object"]
    key = (ref["kind"], ref["namespace"], ref["name"])
    ports = (entry["owned"].get("spec") or {}).get("ports") or []
    if len(ports) != 1 or key not in found.solved:
        return

    def expose(obj: dict, target=None) -> None:
        port = obj["spec"]["ports"][0]
        number = port.get("targetPort", port.get("port"))
        obj["spec"]["ports"] = [{"port": port["port"], "protocol": port.get("protocol", "TCP"),
                                 "targetPort": number if target is None else target}]
        # `kubectl expose --type` keeps the Service's type (a NodePort stays one, with a port the server picks)
        kind = obj["spec"].get("type") or "ClusterIP"
        obj["spec"].update(type=kind, sessionAffinity="None", clusterIP="10.96.0.42", clusterIPs=["10.96.0.42"])
        if kind in ("NodePort", "LoadBalancer"):
            obj["spec"]["ports"][0]["nodePort"] = 31042
    exposed = _edited(found.solved, key, expose)
    if exposed is not None:
        yield Case(f"Service {ref['name']} recreated with `kubectl expose` (its port unnamed)", "mitigate", PASS,
                   state=render(exposed, found))
    wrong = _edited(found.solved, key, lambda o: expose(o, int(o["spec"]["ports"][0].get("port", 80)) + 1000))
    if wrong is not None:
        yield Case(f"Service {ref['name']} recreated with `kubectl expose` to another target port", "mitigate", FAIL,
                   state=render(wrong, found))


def _headless(obj: dict) -> None:
    obj["spec"].update(clusterIP="None", clusterIPs=["None"])


def _headless_case(name: str, what: str, ports: list, pods: list, solved: dict, key: tuple) -> Case:
    """The Service made headless (`clusterIP: None`): no proxy applies its target ports, its clients reach the
    pods on the Service's port itself, so it passes where each port targets its own number, fails elsewhere."""
    from ..runtime.evaluator import container_ports, port_number

    off = [p for p in ports if isinstance(p, dict) and port_number(
        p.get("targetPort", p.get("port")), container_ports(pods, str(p.get("protocol") or "TCP"))[0])
        != port_number(p.get("port"), {})]
    return Case(f"Service {name} {what} headless (clusterIP None)" + (
        f", its port {off[0].get('port')} targeting {off[0].get('targetPort')}" if off else ", each port its target"),
        "mitigate", FAIL if off else PASS, state=_with_edit(solved, key, _headless))


def _workload_labels(state, namespace: str) -> list:
    """The labels of every pod of a namespace and of every pod template that makes them, as a selector reads them."""
    return [(o.get("metadata") or {}).get("labels") if kind == "Pod" else
            (((o.get("spec") or {}).get("template") or {}).get("metadata") or {}).get("labels")
            for kind in ("Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Pod")
            for o in state.by_kind.get((kind, namespace), [])]


def _recreated_service_cases(found: Objects, entry: dict) -> Iterator[Case]:
    """A deleted Service recreated with its selector spelled with another label that exactly its pods and their
    templates carry (pass: a selector is read by what it selects), or with a label other pods carry too (fail);
    recreated headless (`_headless_case`)."""
    from ..runtime.state import labels_match, selected_pods, State

    ref = entry["object"]
    key = (ref["kind"], ref["namespace"], ref["name"])
    selector = (entry["owned"].get("spec") or {}).get("selector")
    if key not in found.solved or not isinstance(selector, dict) or not selector:
        return
    solved = render(found.solved, found)
    state = State(solved)
    labelled = _workload_labels(state, ref["namespace"])
    before = [labels_match(x, selector) for x in labelled]
    carried = sorted({(k, v) for x, hit in zip(labelled, before) if hit for k, v in (x or {}).items()
                      if (k, v) not in selector.items()})
    same = wider = None
    for k, v in carried:
        after = [labels_match(x, {k: v}) for x in labelled]
        if same is None and after == before:
            same = (k, v)
        if wider is None and after != before and all(a for a, b in zip(after, before) if b):
            wider = (k, v)
    for pair, want, what in ((same, PASS, "exactly its pods carry"), (wider, FAIL, "other pods carry too")):
        if pair is not None:
            yield Case(f"Service {ref['name']} recreated with its selector spelled {pair[0]}={pair[1]}, a label {what}",
                       "mitigate", want, state=_with_edit(solved, key, lambda o, pair=pair: o["spec"].update(
                           selector=dict([pair]))))
    pods = selected_pods(state.get(ref), state)
    if pods:
        yield _headless_case(ref["name"], "recreated", found.solved[key]["spec"].get("ports") or [], pods, solved, key)


def _unordered_cases(index: int, pred: dict, solved: dict) -> Iterator[Case]:
    """A list the predicate reads, with an unrelated item put first (the missing item added after another one,
    or a server's other order): a predicate that selects by what the item is still holds. And, for `contains`
    of a map, the element holding more than the entries asked for."""
    from ..runtime.evaluator import predicate_check
    from ..runtime.state import CONTAINER_LISTS, State

    key = (pred["target"]["kind"], pred["target"]["namespace"], pred["target"]["name"])
    if not predicate_check(pred, State(solved))[0]:
        return
    steps = [s for s in pred["path"] if not isinstance(s, dict)]
    lists = [i for i, s in enumerate(steps) if isinstance(s, str)]
    done: list[bool] = []

    def decoy_first(obj: dict) -> None:
        for end in lists:
            route = _edit_route(obj, steps[:end + 1])
            if route is None:
                continue
            holder, k = route
            value = holder[k]
            if k in CONTAINER_LISTS and isinstance(value, list) and len(value) > 1:
                holder[k] = value[-1:] + value[:-1]  # a container added runs too: the same ones in another order
                done.append(True)
                return
            if k in CONTAINER_LISTS:
                continue
            if isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
                holder[k] = [_decoy(value[0])] + value
                done.append(True)
                return
    state = _with_edit(solved, key, decoy_first)
    if done:
        yield Case(f"predicate {index} ({_show(pred['path'])}): its list with an unrelated item first", "mitigate",
                   PASS, state=state)
    if pred["op"] == "contains" and isinstance(pred["value"], dict) and any(isinstance(v, list) for v in pred["value"].values()):
        grown: list[bool] = []

        def more(obj: dict) -> None:
            route = _edit_route(obj, steps)
            items = route[0][route[1]] if route is not None else None
            for item in items if isinstance(items, list) else []:
                if isinstance(item, dict) and all(k in item for k in pred["value"]):
                    for k, v in pred["value"].items():
                        if isinstance(v, list) and isinstance(item.get(k), list):
                            item[k] = item[k] + [_another(x) for x in item[k] if isinstance(x, str)]
                            grown.append(True)
        state = _with_edit(solved, key, more)
        if grown:
            yield Case(f"predicate {index} ({_show(pred['path'])} contains): the element holding more than asked",
                       "mitigate", PASS, state=state)


def _edit_route(obj: dict, steps: list):
    """(holder, key) of the value the evaluator reads at `steps` from the object, its spec, its pod spec or a
    container; None when the steps reach nothing."""
    spec = obj.get("spec") if isinstance(obj.get("spec"), dict) else {}
    pod = spec.get("template", {}).get("spec", {}) if isinstance(spec.get("template"), dict) else spec
    for base in [obj, spec, pod] + [c for c in (pod.get("containers") or []) if isinstance(c, dict)]:
        route = _route(base, steps)
        if route:
            return route[-1]
    return None


_IDENTITIES = ("name", "port", "containerPort", "mountPath")


def _decoy(item, top: bool = True):
    """An item that is another one than `item` and harms nothing: where the item has an identity (a name, a
    port number, a mount path), the same item under another one (a Service port 1000 higher, still reaching
    the same container port); else one unlike it in every value (another RBAC rule)."""
    if top and isinstance(item, dict) and any(k in item for k in _IDENTITIES):
        out = copy.deepcopy(item)
        for k in _IDENTITIES:
            if isinstance(out.get(k), bool):
                continue
            if isinstance(out.get(k), int):
                out[k] = out[k] + 1000
            elif isinstance(out.get(k), str):
                out[k] = out[k] + "-other"
        return out
    if isinstance(item, dict):
        return {k: _decoy(v, False) for k, v in item.items()}
    if isinstance(item, list):
        return [_decoy(v, False) for v in item]
    other = _another(item)
    return item if other is None else other


def _with_items(state: dict, items: list) -> dict:
    return {**state, "resources": {**state["resources"], "items": items}}


def _with_edit(state: dict, key: tuple, edit) -> dict:
    """The state with the object `key` copied and changed by `edit(obj)`; every other object is shared
    (render's memo holds them: they are never changed, and the evaluator only reads)."""
    items = []
    for obj in state["resources"]["items"]:
        if _key(obj) == key:
            obj = copy_data(obj)
            edit(obj)
        items.append(obj)
    return _with_items(state, items)


def _pod_is_ready(pod: dict) -> bool:
    from ..runtime.state import pod_ready

    return pod_ready(pod)


def _field_cases(found: Objects, key: tuple, change: dict) -> Iterator[Case]:
    path, where = change["path"], _show(change["path"])
    named = _port_name(found, key, change) if key[0] == "Service" and path and path[-1] == "targetPort" else None
    if named is not None:  # whoever decides the field (a scenario's predicate too) reads the name as its number
        edited = _edited(found.solved, key, lambda o: _set_at(o, path, named))
        if edited is not None:
            yield Case(f"{key[2]}: {where} set to the container's port name `{named}`", "mitigate", PASS,
                       state=render(edited, found))
    if change.get("governed_by"):
        return
    accept = change.get("accept") or {}
    if accept.get("op") in ("any", "present", "changed"):
        return
    if any(isinstance(s, dict) for s in path) and key in found.faulty:
        reserialised = dict(found.solved)
        obj = copy.deepcopy(found.faulty[key])
        data_key = path[path.index(next(s for s in path if isinstance(s, dict))) - 1]
        data = _load(obj.get("data", {}).get(data_key))
        if data is None:
            return
        obj["data"][data_key] = json.dumps(data, indent=4, sort_keys=True)  # JSON is YAML too
        reserialised[key] = obj
        yield Case(f"{key[2]}: {where} kept faulty in re-serialised data", "mitigate", FAIL,
                   state=render(reserialised, found))
    if change.get("compare") == "flagd":
        yield from _flag_cases(found, key, change)
        return
    if change.get("port_item"):
        yield from _renamed_port_cases(found, key, change)
    if len(path) >= 3 and path[-1] == "value" and path[-3] == "env" and isinstance(change.get("healthy"), str):
        yield from _env_cases(found, key, change)
    if key[0] == "Secret" and path and path[0] == "data":  # the manifest says it as `stringData`
        path = ["stringData", *path[1:]]
    base = change.get("healthy") if "healthy" in change else change.get("faulty")
    if accept.get("op") in (">=", ">") and accept.get("value") == "healthy" and change.get("healthy") is None:
        # at least a healthy limit that was absent: judged as `changed` is (twice the fault's value, or none)
        yield from _changed_quantity_cases(found, key, change)
    elif accept.get("op") in (">=", ">") and [k for k in path if isinstance(k, str)][-2:-1] == ["limits"]:
        # no limit is no too-low limit: the limit removed passes
        unlimited = _edited(found.solved, key, lambda o: _drop_limit(o, path))
        if unlimited is not None:
            yield Case(f"{key[2]}: {where} removed (no limit at all)", "mitigate", PASS, state=render(unlimited, found))
    if "healthy" in change and [k for k in path if isinstance(k, str)][-3:-1] in (["resources", "limits"],
                                                                                 ["resources", "requests"]):
        yield from _respelled_quantity_cases(found, key, change, accept)
    if accept.get("op") in (">=", ">") and isinstance(base, (int, float)) and not isinstance(base, bool):
        wrong = base - 1
    elif accept:
        return
    else:
        wrong = _another(base)
    if wrong is None:
        return
    edited = _edited(found.solved, key, lambda o: _set_at(o, path, wrong))
    if edited is not None and edited[key] != found.solved[key]:
        yield Case(f"{key[2]}: {where} set to another wrong value", "mitigate", FAIL, state=render(edited, found))


def _respelled_quantity(value) -> str | None:
    """The same Kubernetes quantity written in another unit (`1` as `1000m`, `500m` as `0.5`, `100Mi` as
    `102400Ki`); None when it is no quantity."""
    from ..runtime.state import number

    x = number(value)
    if x is None or x <= 0:
        return None
    text = str(value).strip()
    if text.endswith(("Ki", "Mi", "Gi", "Ti")):
        return f"{int(round(x / 1024))}Ki" if x % 1024 == 0 else None
    if text.endswith("m"):
        return f"{x:g}"
    return f"{int(round(x * 1000))}m" if abs(x * 1000 - round(x * 1000)) < 1e-9 else None


def _respelled_quantity_cases(found: Objects, key: tuple, change: dict, accept: dict) -> Iterator[Case]:
    """A resource quantity is its value, however written: the healthy limit or request in another unit passes;
    a limit the fault lowered raised above the healthy one passes (at least the healthy figure is what the
    fault's acceptance asks), halved fails."""
    from ..runtime.state import number

    path, healthy = change["path"], change["healthy"]
    respelled = _respelled_quantity(healthy)
    if respelled is not None:
        state = _edited(found.solved, key, lambda o: _set_at(o, path, respelled))
        if state is not None:
            yield Case(f"{key[2]}: {_show(path)} written `{respelled}` (the healthy `{healthy}`)", "mitigate", PASS,
                       state=render(state, found))
    x = number(healthy)
    if accept.get("op") == ">=" and accept.get("value") == "healthy" and x:
        unit = "m" if str(healthy).strip()[-1:] in "0123456789m" and "i" not in str(healthy) else "Ki"
        scale = 1000 if unit == "m" else 1 / 1024
        for factor, want in ((2, PASS), (0.5, FAIL)):
            value = f"{int(x * factor * scale)}{unit}"
            state = _edited(found.solved, key, lambda o, v=value: _set_at(o, path, v))
            if state is not None:
                yield Case(f"{key[2]}: {_show(path)} at {value} ({factor}x the healthy `{healthy}`)", "mitigate", want,
                           state=render(state, found))


def _env_cases(found: Objects, key: tuple, change: dict) -> Iterator[Case]:
    """An environment variable is the value the container gets: given twice, the last entry counts; taken from
    a ConfigMap's key, the key's value; an address naming a Service of the namespace, written fully qualified,
    is the same address."""
    from ..runtime.evaluator import ADDRESS

    path, healthy, faulty = change["path"], change["healthy"], change.get("faulty")
    name = path[-2][1]

    def entries(obj: dict, new: list) -> None:
        holder = obj
        for seg in path[:-3]:
            holder = next(i for i in holder if isinstance(i, dict) and str(i.get(seg[0])) == str(seg[1])) \
                if isinstance(seg, list) else holder[seg]
        holder["env"] = [e for e in holder.get("env") or [] if e.get("name") != name] + new

    if isinstance(faulty, str):
        for first, last, want in ((faulty, healthy, PASS), (healthy, faulty, FAIL)):
            state = _edited(found.solved, key, lambda o, a=first, b=last: entries(o, [{"name": name, "value": a},
                                                                                    {"name": name, "value": b}]))
            if state is not None:
                yield Case(f"{key[2]}: env {name} given twice, the {'healthy' if want == PASS else 'faulty'} value "
                           "last (the last entry counts)", "mitigate", want, state=render(state, found))
    cm = ("ConfigMap", key[1], "corpus-env")
    state = _edited(found.solved, key, lambda o: entries(o, [{"name": name, "valueFrom": {
        "configMapKeyRef": {"name": cm[2], "key": name}}}]))
    if state is not None:
        state[cm] = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": cm[2], "namespace": key[1]},
                     "data": {name: healthy}}
        yield Case(f"{key[2]}: env {name} taken from a ConfigMap key holding its healthy value", "mitigate", PASS,
                   state=render(state, found))
    yield from _env_source_cases(found, key, path, healthy, faulty)
    yield from _address_cases(found, key, path, healthy)


def _address_cases(found: Objects, key: tuple, path: list, healthy: str) -> Iterator[Case]:
    """An address naming a Service of the namespace, the value a fix gives an environment variable (a `fields`
    check's or a scenario's `==` predicate alike): written fully qualified, as the kubelet's service-link
    variables (`$(SVC_SERVICE_HOST)`), or as the Service's cluster IP, it is the same address: pass. The
    variables with `enableServiceLinks: false`, or another Service's IP: fail."""
    from ..runtime.evaluator import ADDRESS
    from ..runtime.state import pod_spec

    name = path[-2][1]
    match = ADDRESS.match(healthy)
    host = match["host"] if match else None
    if not host or "." in host or ("Service", key[1], host) not in found.solved:
        return

    def entries(obj: dict, value: str, links: bool = True) -> None:
        # a predicate's path may start at the pod spec (`containers[name=c].env[...]`), as `lookup` reads it
        holder = obj if not path or isinstance(path[0], list) or path[0] in obj else pod_spec(obj)
        for seg in path[:-3]:
            holder = next(i for i in holder if isinstance(i, dict) and str(i.get(seg[0])) == str(seg[1])) \
                if isinstance(seg, list) else holder[seg]
        holder["env"] = [e for e in holder.get("env") or [] if e.get("name") != name] + [{"name": name, "value": value}]
        if not links:
            pod_spec(obj)["enableServiceLinks"] = False

    def with_ips(state: dict | None) -> dict | None:
        if state is None:
            return None
        for i, k in enumerate(sorted(k for k in state if k[0] == "Service" and k[1] == key[1])):
            state[k] = copy.deepcopy(state[k])
            state[k].setdefault("spec", {}).update(clusterIP=f"10.96.77.{i + 1}", clusterIPs=[f"10.96.77.{i + 1}"])
        return state

    link = host.upper().replace("-", "_")
    other = next((k[2] for k in sorted(found.solved) if k[0] == "Service" and k[1] == key[1] and k[2] != host
                  and (found.solved[k].get("spec") or {}).get("clusterIP") != "None"), None)
    services = sorted(k for k in found.solved if k[0] == "Service" and k[1] == key[1])
    ip = {k[2]: f"10.96.77.{i + 1}" for i, k in enumerate(services)}
    for text, value, links, want in (
            ("naming the Service by its fully qualified name", healthy.replace(host, f"{host}.{key[1]}.svc.cluster.local", 1),
             True, PASS),
            (f"naming the Service through the kubelet's `$({link}_SERVICE_HOST)`",
             healthy.replace(host, f"$({link}_SERVICE_HOST)", 1), True, PASS),
            (f"through `$({link}_SERVICE_HOST)` in a pod with `enableServiceLinks: false`",
             healthy.replace(host, f"$({link}_SERVICE_HOST)", 1), False, FAIL),
            ("naming the Service by its cluster IP", healthy.replace(host, ip[host], 1), True, PASS),
            (f"naming another Service's cluster IP (`{other}`)", healthy.replace(host, ip.get(other, ""), 1), True, FAIL)):
        if want == FAIL and other is None and links:
            continue
        state = with_ips(_edited(found.solved, key, lambda o, v=value, l=links: entries(o, v, l)))
        if state is not None:
            yield Case(f"{key[2]}: env {name} {text}", "mitigate", want, state=render(state, found))


def _env_path(path: list) -> bool:
    """Whether a path names an environment variable's value (`...containers[name=c].env[name=V].value`)."""
    return len(path) >= 4 and path[-1] == "value" and path[-3] == "env" and isinstance(path[-2], (list, tuple)) \
        and len(path[-2]) == 2 and path[-2][0] == "name"


def _env_source_cases(found: Objects, key: tuple, path: list, healthy: str, faulty) -> Iterator[Case]:
    """An environment variable is what the kubelet makes of the container's sources: its healthy value from an
    `envFrom` ConfigMap (under a prefix too), or built by `$(NAME)` from an earlier variable, passes; the same
    with the fault's value, a `$$(NAME)` (an escaped, literal reference), an `env` entry overriding `envFrom`
    with the fault's value, or a required `envFrom` source that is not there, fails; of two `envFrom` sources
    the later holds, whichever way (a Secret after a ConfigMap)."""
    from ..runtime.evaluator import env_container

    name = path[-2][1]
    bad = faulty if isinstance(faulty, str) and faulty != healthy else _another(healthy)
    cut = max(1, len(healthy) // 2)
    head, tail = healthy[:cut], healthy[cut:]

    def sourced(data: dict | None, prefix: str = "", env=(), cm: str = "corpus-env-from",
                later: dict | None = None) -> dict | None:
        def edit(obj: dict) -> None:
            c = env_container(obj, path)
            c["env"] = [e for e in c.get("env") or [] if e.get("name") != name] + list(env)
            if data is not None:
                c["envFrom"] = list(c.get("envFrom") or []) + [{"configMapRef": {"name": cm}, **(
                    {"prefix": prefix} if prefix else {})}]
            if later is not None:  # a second source after the first: the kubelet lets it override
                c["envFrom"] = list(c.get("envFrom") or []) + [{"secretRef": {"name": f"{cm}-later"}}]
        state = _edited(found.solved, key, edit)
        if state is not None and data is not None and cm != "corpus-env-missing":
            state[("ConfigMap", key[1], cm)] = {"apiVersion": "v1", "kind": "ConfigMap",
                                                "metadata": {"name": cm, "namespace": key[1]}, "data": data}
        if state is not None and later is not None:
            state[("Secret", key[1], f"{cm}-later")] = {"apiVersion": "v1", "kind": "Secret", "metadata": {
                "name": f"{cm}-later", "namespace": key[1]}, "stringData": dict(later)}
        return state

    label = f"{key[2]}: env {name}"
    rows = [(f"{label} from an envFrom ConfigMap holding its healthy value", PASS, sourced({name: healthy}))]
    if len(name) > 1:
        rows.append((f"{label} from an envFrom ConfigMap under the prefix `{name[:1]}`", PASS,
                     sourced({name[1:]: healthy}, prefix=name[:1])))
    rows.append((f"{label} built as `$(CORPUS_PART)` from an earlier variable", PASS, sourced(None, env=[
        {"name": "CORPUS_PART", "value": tail}, {"name": name, "value": f"{head}$(CORPUS_PART)"}])))
    if isinstance(bad, str):
        rows.append((f"{label} from an envFrom ConfigMap holding the wrong value", FAIL, sourced({name: bad})))
        rows.append((f"{label} from envFrom with its healthy value, overridden by an env entry", FAIL,
                     sourced({name: healthy}, env=[{"name": name, "value": bad}])))
        rows.append((f"{label} from an envFrom ConfigMap holding its healthy value, overridden by a later envFrom "
                     "Secret holding the wrong one", FAIL, sourced({name: healthy}, later={name: bad})))
        rows.append((f"{label} from an envFrom ConfigMap holding the wrong value, overridden by a later envFrom "
                     "Secret holding the healthy one", PASS, sourced({name: bad}, later={name: healthy})))
    rows.append((f"{label} written `$$(CORPUS_PART)` (an escaped reference, taken literally)", FAIL, sourced(None, env=[
        {"name": "CORPUS_PART", "value": tail}, {"name": name, "value": f"{head}$$(CORPUS_PART)"}])))
    rows.append((f"{label} referencing a variable defined after it", FAIL, sourced(None, env=[
        {"name": name, "value": f"{head}$(CORPUS_PART)"}, {"name": "CORPUS_PART", "value": tail}])))
    rows.append((f"{label} from a required envFrom ConfigMap that is not there", FAIL,
                 sourced({name: healthy}, cm="corpus-env-missing")))
    for title, want, state in rows:
        if state is not None:
            yield Case(title, "mitigate", want, state=render(state, found))


def _renamed_port_cases(found: Objects, key: tuple, change: dict) -> Iterator[Case]:
    """A Service port is the port it serves on, whatever its name: renamed, or its name dropped (one port, as
    `kubectl expose` writes it), with the healthy value, it passes; renamed with the fault's value, it fails."""
    path = change["path"]
    selector = path[2]

    def rename(new_name, value):
        def edit(obj: dict) -> None:
            for p in obj["spec"]["ports"]:
                if p.get(selector[0]) == selector[1]:
                    if new_name is None:
                        p.pop("name", None)
                    else:
                        p["name"] = new_name
                    _set_at(p, path[3:], copy.deepcopy(value))
        return edit

    ports = (found.solved.get(key) or {}).get("spec", {}).get("ports") or []
    if "healthy" in change:
        yield Case(f"{key[2]}: port {selector[1]} renamed, {_show(path[3:])} healthy", "mitigate", PASS,
                   state=render(_edited(found.solved, key, rename("renamed-port", change["healthy"])), found))
        if len(ports) == 1:
            yield Case(f"{key[2]}: port {selector[1]} left unnamed, {_show(path[3:])} healthy", "mitigate", PASS,
                       state=render(_edited(found.solved, key, rename(None, change["healthy"])), found))
    if change.get("faulty") is not None:
        yield Case(f"{key[2]}: port {selector[1]} renamed, {_show(path[3:])} as the fault left it", "mitigate", FAIL,
                   state=render(_edited(found.solved, key, rename("renamed-port", change["faulty"])), found))


def _flag_cases(found: Objects, key: tuple, change: dict) -> Iterator[Case]:
    """A flagd flag is judged by the value it evaluates to, never by the name of its default variant: the
    healthy value under another variant's name, or a rule that never leaves it, passes; the healthy variant's
    name bound to the fault's value, a targeting rule that returns the fault's variant (always, or for a
    share of the traffic), fails."""
    from ..runtime.evaluator import flag_outcomes
    from ..runtime.state import same

    healthy, path, name = change["healthy"], change["path"], change["path"][-1]
    good, bad = flag_outcomes(healthy), flag_outcomes(change.get("faulty"))
    if not good or len(good) != 1 or not bad:
        return
    wrong = next((v for v in bad if not same(v, good[0])), None)
    if wrong is None:
        return
    default = healthy["defaultVariant"]
    faulty_name = next((n for n, v in healthy["variants"].items() if same(v, wrong)), "fault-variant")

    def flag(**edits) -> dict:
        out = copy.deepcopy(healthy)
        out["variants"] = {**out["variants"], **edits.pop("variants", {})}
        out.update(edits)
        return out

    def case(title: str, want: str, value: dict):
        state = _edited(found.solved, key, lambda o: _set_at(o, path, value))
        if state is not None:
            yield Case(f"{key[2]}: flag {name} {title}", "mitigate", want, state=render(state, found))

    yield from case("with its healthy value under another variant name", PASS,
                    flag(variants={"restored-value": good[0]}, defaultVariant="restored-value"))
    yield from case("with a targeting rule that returns its healthy variant either way", PASS,
                    flag(targeting={"if": [{"==": [{"var": "targetingKey"}, "x"]}, default, default]}))
    yield from case("with its healthy default variant bound to the fault's value", FAIL,
                    flag(variants={default: wrong}))
    yield from case("with a targeting rule that returns the fault's variant", FAIL,
                    flag(variants={faulty_name: wrong}, targeting={"if": [True, faulty_name, default]}))
    yield from case("with a fractional rule that sends all traffic to the fault's variant", FAIL,
                    flag(variants={faulty_name: wrong}, targeting={"fractional": [[faulty_name, 100], [default, 0]]}))


def _predicate_cases(m: dict, found: Objects) -> Iterator[Case]:
    """States a right evaluator must fail, for each `mitigated when` predicate that holds on the solved state:
    its field missing, null, of another type (a list where a value was expected, text holding the element
    `contains` looks for), a value the predicate refuses, JSON that does not parse, a selected list item
    twice; for `all ... ready`, one pod not ready among ready ones, and the scope emptied."""
    from ..runtime.evaluator import predicate_check
    from ..runtime.state import State

    solved = render(found.solved, found)
    probes_seen: set[str] = set()
    for index, pred in enumerate(m["predicates"]):
        if not predicate_check(pred, State(solved))[0]:
            continue  # the solved state's own case reports it
        if pred["kind"] == "probe":
            yield from _probe_cases(index, pred, solved, probes_seen)
        elif pred["kind"] == "scope":
            yield from _scope_cases(index, pred, solved)
        elif pred["kind"] == "access":
            others = [p for p in m["predicates"] if p is not pred and p["kind"] == "access"]
            yield from _access_cases(index, pred, solved, others, (m.get("collateral") or {}).get("grants", []))
        elif pred["kind"] == "field" and pred["target"]["kind"] != "Secret" and "*" not in pred["target"]["name"]:
            key = (pred["target"]["kind"], pred["target"]["namespace"], pred["target"]["name"])
            if _env_path(pred["path"]) and pred["op"] == "==" and isinstance(pred["value"], str) and key in found.solved:
                yield from _env_source_cases(found, key, pred["path"], pred["value"], None)
                yield from _address_cases(found, key, pred["path"], pred["value"])
            for what, edit in _field_edits(pred):
                done: list[bool] = []
                state = _with_edit(solved, key, lambda obj: done.append(_edit_at(obj, pred["path"], edit)))
                if any(done):
                    yield Case(f"predicate {index} ({_show(pred['path'])} {pred['op']}): {what}", "mitigate", FAIL,
                               state=state)


def _grants(pred: dict, state: dict) -> list[tuple[tuple, tuple, int]]:
    """(binding key, role key, rule index) of every rule that grants an access predicate's request on `state`."""
    from ..runtime.evaluator import binds, parse_resource, rule_allows, subject_user
    from ..runtime.state import State

    st = State(state)
    user, groups = subject_user(pred["target"])
    resource, group, subresource = parse_resource(pred["path"][1])
    namespace = pred.get("namespace")
    found = []
    bindings = [(b, None) for b in st.by_kind.get(("ClusterRoleBinding", None), [])]
    bindings += [(b, namespace) for b in st.by_kind.get(("RoleBinding", namespace), [])] if namespace else []
    for binding, where in bindings:
        if not binds(binding, user, groups, where):
            continue
        ref = binding.get("roleRef") or {}
        role = ((ref.get("kind"), where, ref.get("name")) if ref.get("kind") == "Role" else
                ("ClusterRole", None, ref.get("name")))
        for i, rule in enumerate((st.objects.get(role) or {}).get("rules") or []):
            if rule_allows(rule, pred["path"][0], group, resource, subresource, None):
                found.append((_key(binding), role, i))
    return found


def _access_cases(index: int, pred: dict, solved: dict, others: list, spec_grants=()) -> Iterator[Case]:
    """An access predicate judged as the RBAC authorizer judges: for `can`, the granting rule restricted to
    one resource name, granting another verb, or bound to another subject (another ServiceAccount, the
    same name in another namespace) fails; the healthy grant written otherwise (each rule twice) passes,
    where the other access predicates still hold on it, and a broader one (after an unrelated rule, with the
    verb `*`, cluster-admin bound besides) fails where the safeguards keep the subject's grants. For
    `cannot`, the subject bound to a ClusterRole that grants everything, by name or through its group, fails."""
    from ..runtime.evaluator import predicate_check
    from ..runtime.state import State

    def others_hold(state) -> bool:
        return all(predicate_check(p, State(state))[0] for p in others)

    label = f"predicate {index} ({pred['op']} {pred['path'][0]} {pred['path'][1]})"
    subject = pred["target"]
    if pred["op"] == "cannot":
        for how, who in (("by name", {"kind": "ServiceAccount", "name": subject["name"],
                                      "namespace": subject.get("namespace")}),
                         ("through its group", {"kind": "Group", "name": "system:serviceaccounts",
                                                "apiGroup": "rbac.authorization.k8s.io"})):
            role = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
                    "metadata": {"name": "itbench-corpus-everything"},
                    "rules": [{"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]}]}
            binding = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
                       "metadata": {"name": "itbench-corpus-everything"},
                       "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                                   "name": "itbench-corpus-everything"}, "subjects": [who]}
            yield Case(f"{label}: granted {how} by a ClusterRole of every right", "mitigate", FAIL,
                       state=_with_items(solved, solved["resources"]["items"] + [role, binding]))
        return
    grants = _grants(pred, solved)
    if not grants:
        return
    roles = {role for _, role, _ in grants}
    bindings = {binding for binding, _, _ in grants}

    def rules_edited(edit):
        state = solved
        for role in sorted(roles, key=str):
            state = _with_edit(state, role, lambda obj, role=role: [
                edit(rule) for i, rule in enumerate(obj.get("rules") or []) if (None, role, i) in
                {(None, r, j) for _, r, j in grants}])
        return state

    other_verb = "watch" if pred["path"][0] != "watch" else "get"
    yield Case(f"{label}: the granting rule restricted by resourceNames", "mitigate", FAIL,
               state=rules_edited(lambda rule: rule.__setitem__("resourceNames", ["only-this-one"])))
    yield Case(f"{label}: the granting rule grants {other_verb} instead", "mitigate", FAIL,
               state=rules_edited(lambda rule: rule.__setitem__("verbs", [other_verb])))
    # a grant broader than the healthy one is collateral (the safeguards), however it allows the request
    collateral = bool(spec_grants)
    every = rules_edited(lambda rule: rule.__setitem__("verbs", ["*"]))
    if others_hold(every):
        yield Case(f"{label}: the granting rule grants every verb (`*`)", "mitigate", FAIL if collateral else PASS,
                   state=every)

    def after_unrelated(obj):
        obj["rules"] = [{"apiGroups": ["apps"], "resources": ["replicasets"], "verbs": ["get"]}] + list(obj.get("rules") or [])

    state = solved
    for role in sorted(roles, key=str):
        state = _with_edit(state, role, after_unrelated)
    if others_hold(state):
        yield Case(f"{label}: the granting rule after an unrelated one", "mitigate", FAIL if collateral else PASS,
                   state=state)

    def written_twice(obj):  # the same grant written otherwise: each granting rule twice, a verb repeated
        rules = list(obj.get("rules") or [])
        obj["rules"] = [dict(r, verbs=list(r.get("verbs") or []) * 2) if isinstance(r, dict) else r for r in rules] + rules

    state = solved
    for role in sorted(roles, key=str):
        state = _with_edit(state, role, written_twice)
    if others_hold(state):
        yield Case(f"{label}: the healthy grant written twice", "mitigate", PASS, state=state)
    if collateral:
        admin = [{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
                  "metadata": {"name": "itbench-corpus-admin"},
                  "rules": [{"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]}]},
                 {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
                  "metadata": {"name": "itbench-corpus-admin"},
                  "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "itbench-corpus-admin"},
                  "subjects": [{"kind": "ServiceAccount", "name": subject["name"], "namespace": subject.get("namespace")}]}]
        yield Case(f"{label}: granted besides by a ClusterRole of every right (cluster-admin)", "mitigate", FAIL,
                   state=_with_items(solved, solved["resources"]["items"] + admin))
    for why, other in (("another ServiceAccount", {"name": subject["name"] + "-other"}),
                       ("the same name in another namespace", {"namespace": (subject.get("namespace") or "") + "-other"})):
        state = solved
        for binding in sorted(bindings, key=str):
            state = _with_edit(state, binding, lambda obj, other=other: obj.__setitem__("subjects", [
                {"kind": "ServiceAccount", "name": subject["name"], "namespace": subject.get("namespace"), **other}]))
        yield Case(f"{label}: the binding binds {why}", "mitigate", FAIL, state=state)


def _probe_pod_cases(spec: dict, solved: dict) -> Iterator[Case]:
    """For each probe the mitigation reads, the solved state's result as the pod that answered it records it:
    the workload's own pod passes; a pod the agent made beside it (the workload's labels, its ReplicaSet named
    as controller, a name that sorts first, another program in the probed container) or a pod the state does
    not hold answering it fails (runtime/evaluator.py vet_probes)."""
    from ..runtime.state import workload_pod_refusal

    items = solved["resources"]["items"]
    for name in spec["requires"].get("probes", []):
        probe = spec["probes"][name]
        target = dict(probe["workload"], namespace=probe["namespace"])
        workload = next((o for o in items if o.get("kind") == target["kind"]
                         and o["metadata"].get("name") == target["name"]
                         and o["metadata"].get("namespace") == target["namespace"]), None)
        pods = [o for o in items if o.get("kind") == "Pod" and o["metadata"].get("namespace") == target["namespace"]
                and workload is not None and workload_pod_refusal(workload, o) is None]
        if not pods or name not in (solved.get("probes") or {}):
            continue
        real = pods[0]

        def answered(by: str, extra=()) -> dict:
            probes = copy_data(solved["probes"])
            probes[name] = dict(probes[name], pod=by)
            return {**solved, "resources": {**solved["resources"], "items": items + list(extra)}, "probes": probes}

        yield Case(f"probe {name}: answered by the workload's own pod", "mitigate", PASS,
                   state=answered(real["metadata"]["name"]))
        mine = copy_data(real)
        mine["metadata"]["name"] = "a-" + target["name"]
        for container in mine["spec"]["containers"]:
            if container.get("name") == probe["container"]:
                container["command"] = ["sh", "-c", "exec sleep infinity"]
        yield Case(f"probe {name}: answered by the agent's pod claiming the workload's ReplicaSet", "mitigate", FAIL,
                   state=answered(mine["metadata"]["name"], [mine]))
        yield Case(f"probe {name}: answered by a pod the state does not hold", "mitigate", FAIL,
                   state=answered(target["name"] + "-gone"))


# beyond what a capture keeps of a probe's output and what `contains` reads of it (runtime/evaluator.py)
HUGE_OUTPUT = 2 * 1024 * 1024 + 7


def _probe_cases(index: int, pred: dict, solved: dict, seen: set) -> Iterator[Case]:
    """States a right evaluator must fail (or refuse), for a `probe "NAME" FIELD TEST` predicate that holds on
    the solved state: the probe's result absent (refused: the capture did not run it) or not a result; the
    field missing, null or of another type; an exit code the test refuses; output without the text
    `contains` looks for, or holding it only past what is read of a huge output; for an exact test, the text
    inside a longer token; megabytes of output the test refuses."""
    name, field = pred["path"]
    where = f"predicate {index} (probe {name} {field} {pred['op']})"

    def edited(change) -> dict | None:
        state = {**solved, "probes": copy_data(solved["probes"])}
        result = state["probes"][name]
        if change(result) is False:
            return None
        return state

    if name not in seen:
        seen.add(name)
        state = {**solved, "probes": copy_data(solved["probes"])}
        del state["probes"][name]
        yield Case(f"probe {name}: no result in the state", "mitigate", UNUSABLE, state=state)
        state = {**solved, "probes": copy_data(solved["probes"])}
        state["probes"][name] = str(solved["probes"][name].get("stdout", ""))
        yield Case(f"probe {name}: its output where its result belongs", "mitigate", FAIL, state=state)
    yield Case(f"{where}: the field missing", "mitigate", FAIL, state=edited(lambda r: r.pop(field, None)))
    yield Case(f"{where}: the field null", "mitigate", FAIL, state=edited(lambda r: r.update({field: None})))
    op, value = pred["op"], pred["value"]
    observed = solved["probes"][name][field]
    wrong: list[tuple[str, object]] = []  # (what, the field's value) that make the test false
    if field == "exit_code":
        if op == "==" and isinstance(value, int):
            wrong += [(f"exit code {value + 1 if value < 255 else value - 1}", value + 1 if value < 255 else value - 1),
                      (f"exit code as text {json.dumps(str(value))}", str(value))]
            if value in (0, 1):
                wrong.append((f"exit code as a boolean {json.dumps(bool(value))}", bool(value)))
        elif op == "!=":
            wrong.append((f"exit code {value}", value))
        elif op == "in" and isinstance(value, list):
            outside = next(code for code in range(256) if code not in value)
            wrong.append((f"exit code {outside}, outside the list", outside))
    elif isinstance(observed, str):
        if op == "contains" and isinstance(value, str) and value:
            text = observed
            while value in text:
                text = text.replace(value, "")
            wrong.append(("output without the text", text))
            filler = next((c for c in ".#~_x-0 " if c not in value), None)
            if filler is not None:
                wrong += [("the text only past the first megabyte of a huge output", filler * HUGE_OUTPUT + value),
                          ("a huge output without the text", filler * HUGE_OUTPUT)]
        elif op == "==" and isinstance(value, str):
            wrong += [("the text inside a longer token", f"x{value}"), ("the text inside a longer token", f"{value}x"),
                      ("the text followed by a huge output", value + "." * HUGE_OUTPUT)]
        elif op == "!=":
            wrong.append(("the refused text", value))
        elif op == "in" and isinstance(value, list) and value:
            wrong += [("text outside the list", f"x{value[0]}"), ("the text inside a longer token", f"{value[0]}x")]
        elif op == "matches":
            import re

            for candidate in (f"{observed}\n", f"x{observed}", ""):
                if re.fullmatch(str(value), candidate) is None:
                    wrong.append(("text the expression does not match", candidate))
                    break
        wrong.append((f"{field} as a list", [observed]))
    for what, bad in wrong:
        state = edited(lambda r: r.update({field: bad}))
        yield Case(f"{where}: {what}", "mitigate", FAIL, state=state)


def _field_edits(pred: dict) -> Iterator[tuple[str, object]]:
    """(what, edit(holder, key) -> bool) pairs that make the predicate false, whatever the evaluator does."""
    import re

    op, value = pred["op"], pred["value"]

    def setter(new):
        def edit(holder, key):
            holder[key] = copy.deepcopy(new)
            return True
        return edit

    def delete(holder, key):
        holder.pop(key) if isinstance(holder, list) else holder.pop(key, None)
        return True

    if op == "not exists":
        yield "the field set", setter("present")
        return
    yield "the field missing", delete
    yield "the field null", setter(None)
    if any(isinstance(s, dict) for s in pred["path"]):
        yield "the text is not valid JSON", "unparsable"
    if any(isinstance(s, list) for s in pred["path"]) and not _env_path(pred["path"]):
        # an environment variable given twice is the last entry's value (the kubelet's rule): no ambiguity
        yield "the selected list item twice", "duplicate"
    if op in ("==", "in", "<", "<=", ">", ">=", "matches"):
        yield "a list where a value was expected", lambda holder, key: setter([holder[key]])(holder, key)
    if op == "==" and not isinstance(value, (dict, list)):
        wrong = _another(value)
        if wrong is not None:
            yield f"set to {json.dumps(wrong)}", setter(wrong)
    elif op == "in" and value and not isinstance(value[0], (dict, list)):
        wrong = _another(value[0])
        while wrong in value and wrong is not None:
            wrong = _another(wrong)
        if wrong is not None:
            yield f"set to {json.dumps(wrong)}, outside the list", setter(wrong)
    elif op == "contains" and not isinstance(value, dict):
        yield "text holding the element instead of a list", setter(f"[{json.dumps(value)}]")
        yield "the element removed", lambda holder, key: isinstance(holder[key], list) and setter(
            [v for v in holder[key] if v != value])(holder, key)
    elif op == "matches":
        def breaking(holder, key):
            text = holder[key]
            for candidate in (f"{text}\n", f"x{text}", ""):
                if isinstance(text, str) and re.fullmatch(str(value), candidate) is None:
                    holder[key] = candidate
                    return True
            return False
        yield "text the expression does not match", breaking


def _edit_at(obj: dict, path: list, edit) -> bool:
    """Apply `edit` where the evaluator reads `path` on `obj` (from the object, its spec, its pod spec or a
    container, runtime.state.lookup), going on inside parsed text; False when the path reaches nothing."""
    spec = obj.get("spec") if isinstance(obj.get("spec"), dict) else {}
    pod = spec.get("template", {}).get("spec", {}) if isinstance(spec.get("template"), dict) else spec
    for base in [obj, spec, pod] + [c for c in (pod.get("containers") or []) if isinstance(c, dict)]:
        route = _route(base, path)
        if route is not None:
            return _apply_edit(route, path, edit)
    return False


def _route(node, path: list):
    """[(holder, key)] of the steps the evaluator takes (the first item where a key fans out over a list), up
    to a parse step; None when the path does not reach."""
    from ..runtime.state import nested, same

    route = []
    for seg in path:
        if isinstance(seg, dict):
            return route
        if isinstance(seg, list):
            found = [j for j, v in enumerate(node) if isinstance(v, dict) and nested(v, str(seg[0])) is not None
                     and same(nested(v, str(seg[0])), seg[1])] if isinstance(node, list) else []
            if len(found) != 1:
                return None
            key = found[0]
        elif isinstance(seg, int):
            if not isinstance(node, list) or not 0 <= seg < len(node):
                return None
            key = seg
        elif isinstance(node, dict):
            if seg not in node:
                return None
            key = seg
        elif isinstance(node, list):
            j = next((j for j, v in enumerate(node) if isinstance(v, dict) and seg in v), None)
            if j is None:
                return None
            route.append((node, j))
            node, key = node[j], seg
        else:
            return None
        route.append((node, key))
        node = node[key]
    return route


def _apply_edit(route: list, path: list, edit) -> bool:
    if not route:
        return False
    holder, key = route[-1]
    parse = next((i for i, s in enumerate(path) if isinstance(s, dict)), None)
    if edit == "unparsable":
        if parse is None:
            return False
        holder[key] = "{ not json: ["
        return True
    if edit == "duplicate":
        for list_holder, index in reversed(route):
            if isinstance(list_holder, list):
                list_holder.insert(index + 1, copy.deepcopy(list_holder[index]))
                return True
        return False
    if parse is not None:  # go on inside the text, then write it back as JSON (which YAML reads too)
        data = _load(holder[key])
        inner = _route(data, path[parse + 1:]) if data is not None else None
        if not inner or not _apply_edit(inner, path[parse + 1:], edit):
            return False
        holder[key] = json.dumps(data, indent=2)
        return True
    return bool(edit(holder, key))


def _scope_cases(index: int, pred: dict, solved: dict) -> Iterator[Case]:
    from ..runtime.state import labels_match

    selector = pred.get("selector") or {}

    def in_scope(obj) -> bool:
        meta = obj.get("metadata") or {}
        if meta.get("namespace") not in pred["namespaces"]:
            return False
        labels = meta.get("labels") if obj.get("kind") == "Pod" else \
            ((obj.get("spec") or {}).get("template") or {}).get("metadata", {}).get("labels")
        return not selector or labels_match(labels, selector)

    def unready(obj) -> None:
        status = obj.setdefault("status", {})
        status["conditions"] = [dict(c, status="False") if c.get("type") == "Ready" else c
                                for c in status.get("conditions") or []]

    items = solved["resources"]["items"]
    pods = [o for o in items if o.get("kind") == "Pod" and in_scope(o)]
    if pods and "Pod" in pred["kinds"]:
        yield Case(f"predicate {index} (all {pred['scope']} ready): one pod not ready among ready ones", "mitigate",
                   FAIL, state=_with_edit(solved, _key(pods[-1]), unready))
        # held over the captures since the fix: one pod's lapse between them fails, a rollout at the first does not
        watched = [o for o in items if o.get("kind") in ("Pod", "Deployment", "StatefulSet", "DaemonSet")]
        lapsed = _with_edit({"resources": {"kind": "List", "items": watched}}, _key(pods[-1]), unready)["resources"]

        def seen(at: str, ready: bool) -> dict:
            return {"at": at, "resources": {"kind": "List", "items": watched} if ready else lapsed}
        yield Case(f"predicate {index} (all {pred['scope']} ready): one pod not ready at a capture between ready ones",
                   "mitigate", FAIL, state={**solved, "fixed_at": FIXED_AT, "observations": [
                       seen("2026-01-01T00:10:10Z", True), seen("2026-01-01T00:10:20Z", False),
                       seen("2026-01-01T00:10:30Z", True)]})
        yield Case(f"predicate {index} (all {pred['scope']} ready): one pod still starting at the first capture",
                   "mitigate", PASS, state={**solved, "fixed_at": FIXED_AT, "observations": [
                       seen("2026-01-01T00:10:10Z", False), seen("2026-01-01T00:10:20Z", True)]})
    if pred["scope"] != "pods":
        workloads = [o for o in items if o.get("kind") in pred["kinds"] and in_scope(o)]
        if workloads:
            state = _with_edit(solved, _key(workloads[-1]), lambda o: o.setdefault("status", {}).update(readyReplicas=0))
            yield Case(f"predicate {index} (all {pred['scope']} ready): one workload not ready", "mitigate", FAIL,
                       state=state)
    kept = [o for o in items if not (o.get("kind") in pred["kinds"] + ["Pod", "Deployment", "StatefulSet"]
                                     and in_scope(o))]
    yield Case(f"predicate {index} (all {pred['scope']} ready): the scope emptied", "mitigate", FAIL,
               state=_with_items(solved, kept))


def _port_name(found: Objects, key: tuple, change: dict) -> str | None:
    """The name a selected container gives the port a Service's healthy targetPort numbers."""
    service = found.solved.get(key)
    healthy = change.get("healthy")
    if service is None or not isinstance(healthy, int):
        return None
    selector = service.get("spec", {}).get("selector") or {}
    for (kind, namespace, _), obj in found.solved.items():
        if kind not in ("Deployment", "StatefulSet") or namespace != key[1] or not selector:
            continue
        template = obj.get("spec", {}).get("template", {})
        labels = template.get("metadata", {}).get("labels", {})
        if all(labels.get(k) == v for k, v in selector.items()):
            for container in template.get("spec", {}).get("containers", []):
                for port in container.get("ports", []):
                    if port.get("containerPort") == healthy and port.get("name"):
                        return port["name"]
    return None


def _replace_images(obj: dict) -> None:
    for container in obj["spec"]["template"]["spec"].get("containers", []):
        container["image"] = "docker.io/library/busybox:1.36"
        container["command"] = ["sleep", "infinity"]


def _wrong_spec(obj: dict) -> None:
    spec = obj.get("spec")
    if isinstance(spec, dict) and spec.get("ports"):
        spec["ports"][0]["port"] = spec["ports"][0].get("port", 80) + 1
    elif isinstance(spec, dict) and isinstance(spec.get("template"), dict):  # a workload: other containers
        _replace_images(obj)
    elif isinstance(spec, dict) and spec.get("selector"):
        spec["selector"] = {k: v + "-other" for k, v in spec["selector"].items()}
    else:
        obj.setdefault("metadata", {})["labels"] = {"replaced": "true"}
        obj["data"] = {"replaced": "true"}


def _show(path: list) -> str:
    from ..runtime.state import show_path

    return show_path(path)


# ---- answers -------------------------------------------------------------------------------------------------


def _diagnosis_cases(scenario, spec, derived) -> Iterator[Case]:
    faulty = derived["faulty"]
    perfect = perfect_answer(scenario, faulty)
    gradable_chain = any(_chain_nodes(spec))
    if not scenario.root_causes:  # a control: the right answer names no cause
        yield Case("an answer that names no cause", "diagnose", PASS, answer=EMPTY_ANSWER, state=faulty)
        yield Case("an answer that names a cause where there is none", "diagnose", FAIL, state=faulty, answer={
            "entities": [{"name": _some_object(spec), "contributing_factor": True}]})
        return
    yield Case("the perfect diagnosis", "diagnose", PASS, answer=perfect, state=faulty, score=1.0)
    template = prompt_template(scenario)
    if template is not None:
        yield Case("the prompt's answer template filled with the truth", "diagnose", PASS,
                   answer=_filled(template, perfect), state=faulty, score=1.0)
    yield Case("the perfect diagnosis, graded without a state", "diagnose", PASS, answer=perfect, state=None)
    as_text = {**perfect, "entities": [dict(e, contributing_factor=str(e.get("contributing_factor")).lower())
                                       for e in perfect["entities"]]}
    yield Case("the perfect diagnosis with its flags written as text (\"true\")", "diagnose", PASS, answer=as_text,
               state=faulty, score=1.0)
    flagged_otherwise = {**perfect, "entities": [dict(e, contributing_factor=1 if e.get("contributing_factor") else 0)
                                                 for e in perfect["entities"]]}
    yield Case("the perfect diagnosis with its flags written as 1 and 0", "diagnose", FAIL, answer=flagged_otherwise,
               state=faulty)
    yield from _naming_cases("diagnose", "diagnosis", spec, perfect, faulty)
    yield Case("an empty answer", "diagnose", FAIL, answer=EMPTY_ANSWER, state=faulty)
    yield Case("an answer with no `entities`", "diagnose", UNUSABLE if not spec.get("answers") else FAIL,
               answer={"resolution": "restarted it"}, state=faulty)
    if gradable_chain:
        yield Case("the root cause without its propagation", "diagnose", FAIL,
                   answer={"entities": perfect["entities"], "propagations": []}, state=faulty)
        yield from _chain_cases(spec, perfect, faulty)
    yield from _ghost_pod_cases(spec, perfect, faulty)
    yield from _replaced_pod_cases(perfect, faulty)
    yield from _gone_pod_cases(perfect, faulty)
    yield from _replicaset_named_cases(perfect, faulty)


def _replicaset_named_cases(perfect: dict, faulty: dict, task: str = "diagnose") -> Iterator[Case]:
    """The perfect answer with each Deployment it names named by its ReplicaSet instead (as a pod's owner
    references show it; the state captures no ReplicaSets): the ReplicaSet carries the Deployment's pod
    template and names it, so it passes. A ReplicaSet of a name no pod shows names nothing: fail."""
    from ..runtime.evaluator import pod_controller

    sets = {}
    for item in faulty["resources"]["items"]:
        controller = pod_controller(item) if item.get("kind") == "Pod" else None
        for ref in item["metadata"].get("ownerReferences") or [] if controller else []:
            if ref.get("kind") == "ReplicaSet" and controller[0] == "Deployment":
                sets.setdefault(f"{item['metadata'].get('namespace')}/Deployment/{controller[1]}", ref["name"])
    renamed = [dict(e, name=e["name"].replace("/Deployment/", "/ReplicaSet/").rsplit("/", 1)[0] + "/" + sets[e["name"]])
               if e["name"] in sets else e for e in perfect["entities"]]
    if renamed == perfect["entities"] or perfect.get("propagations"):
        return
    yield Case("the perfect answer naming each Deployment by its ReplicaSet (shown by its pods' owner references)"
               + ("" if task == "diagnose" else f" ({task})"), task, PASS, answer={**perfect, "entities": renamed},
               state=faulty)
    invented = [dict(e, name=e["name"].rsplit("-", 1)[0] + "-zzzzzzzzzz") if "/ReplicaSet/" in e["name"] and
                e not in perfect["entities"] else e for e in renamed]
    yield Case("the perfect answer naming each Deployment by a ReplicaSet no pod shows"
               + ("" if task == "diagnose" else f" ({task})"), task, FAIL, answer={**perfect, "entities": invented},
               state=faulty)


def _chain_cases(spec: dict, perfect: dict, faulty: dict) -> Iterator[Case]:
    """The propagation graded by directed edges: the right causes with the chain reversed, or with one
    invented edge out of the root cause in its place, fail; the chain with its edges given twice passes."""
    from ..runtime.evaluator import Diagnosis
    from ..runtime.state import State

    edges = perfect["propagations"]
    diagnosis = Diagnosis(spec, State(faulty))
    node = {e["source"]: diagnosis.node(e["source"]) for e in edges} | {e["target"]: diagnosis.node(e["target"]) for e in edges}
    truth = {(node[e["source"]], node[e["target"]]) for e in edges if node[e["source"]] != node[e["target"]]}
    # the edges with a direction (a cycle through aliases, A -> B -> A, reads the same both ways)
    directed = [e for e in edges if node[e["source"]] != node[e["target"]]
                and (node[e["target"]], node[e["source"]]) not in truth]
    if directed:
        reversed_ = [{**p, "source": p["target"], "target": p["source"]} for p in directed]
        yield Case("the right root causes with the propagation chain reversed", "diagnose", FAIL,
                   answer={**perfect, "propagations": reversed_}, state=faulty)
    components = {g["component"] for g in spec["diagnosis"]["groups"]}
    other = _some_object(spec, avoid=components)
    if other is not None and perfect["entities"]:
        junk = [{"source": perfect["entities"][0]["name"], "target": other, "condition": "", "effect": ""}]
        yield Case(f"the right root causes with one invented edge ({other}) for the chain", "diagnose", FAIL,
                   answer={**perfect, "propagations": junk}, state=faulty)
    if directed:
        backwards = [{**p, "source": p["target"], "target": p["source"]} for p in directed]
        yield Case("the right root causes with every edge of the chain given in both directions", "diagnose", FAIL,
                   answer={**perfect, "propagations": edges + backwards}, state=faulty)
        others = _other_objects(spec, components, 2)
        if len(others) == 2:
            first = directed[0]
            guesses = [first] + [{**first, "target": o} for o in others]
            yield Case("a fan-out of guesses from the chain's first node, one of three right", "diagnose", FAIL,
                       answer={**perfect, "propagations": guesses}, state=faulty)
    yield Case("the perfect diagnosis with every edge given twice", "diagnose", PASS,
               answer={**perfect, "propagations": edges + copy.deepcopy(edges)}, state=faulty, score=1.0)
    # the spread from the root cause alone: an edge of the truth no root cause reaches is not required
    graded, left_out, reached, beyond = diagnosis.graded_chain()
    on_path = [e for e in edges if (node[e["source"]], node[e["target"]]) in graded]
    if on_path and len(on_path) < len(edges):
        yield Case("the perfect diagnosis with only the edges a root cause reaches", "diagnose", PASS,
                   answer={**perfect, "propagations": on_path}, state=faulty, score=1.0)
    # a gap of the truth bridged: from the root cause to each node of the chain past a gap (where the truth does
    # not say how the spread got there), beside the truth's edges
    texts = {}
    for e in edges:
        for end in ("source", "target"):
            texts.setdefault(node[e[end]], e[end])
    root = next((e["name"] for e in perfect["entities"] if diagnosis.node(e["name"]) in reached), None)
    said = set(graded) | left_out
    bridges = [{"source": root, "target": texts[n]} for n in sorted(beyond) if n in texts and root is not None
               and diagnosis.node(root) != n and (n, diagnosis.node(root)) not in said]
    if bridges:
        yield Case(f"the perfect diagnosis with each gap of the truth's chain bridged from the root cause "
                   f"({', '.join(b['target'] for b in bridges[:3])})", "diagnose", PASS,
                   answer={**perfect, "propagations": bridges + edges}, state=faulty, score=1.0)
        yield Case("the root cause's bridges over the gaps alone, none of the truth's edges", "diagnose", FAIL,
                   answer={**perfect, "propagations": bridges}, state=faulty)


def _replaced_pod_cases(perfect: dict, faulty: dict, task: str = "diagnose") -> Iterator[Case]:
    """The pods the answer names, replaced by the fix before the capture (each renamed, as a new pod of its
    ReplicaSet is), with the state's `incident` holding them as the agent found them: the perfect answer
    still passes (the pods existed; graded against the final state alone they would name nothing)."""
    named = {e["name"] for e in perfect["entities"]} | {p[k] for p in perfect.get("propagations", [])
                                                        for k in ("source", "target")}
    # states are read, never written, by the evaluator: the new state shares every object it does not rename
    items = []
    replaced = False
    for item in faulty["resources"]["items"]:
        meta = item["metadata"]
        base, _, suffix = meta["name"].rpartition("-")
        if item.get("kind") == "Pod" and f"{meta.get('namespace')}/Pod/{meta['name']}" in named and base:
            item = {**item, "metadata": {**meta, "name": f"{base}-{'q8w2m' if suffix != 'q8w2m' else 'b4d9z'}"}}
            replaced = True
        items.append(item)
    if not replaced:
        return
    state = {**faulty, "resources": {**faulty["resources"], "items": items},
             "incident": {"at": "2026-01-01T00:05:00Z",
                          "resources": {"kind": "List", "items": list(faulty["resources"]["items"])}}}
    yield Case("the perfect answer, its pods replaced by the fix and kept in the state's `incident`"
               + ("" if task == "diagnose" else f" ({task})"), task, PASS, answer=perfect, state=state, score=1.0)


def _gone_pod_cases(perfect: dict, faulty: dict, task: str = "diagnose") -> Iterator[Case]:
    """The pods the answer names, gone from the final state with no `incident` to show them: replaced by their
    controller (a new pod of the same ReplicaSet, another suffix), or deleted with their ReplicaSet left to
    show them. The perfect answer passes both: a truth pod group stands for the workload's pods, not one live
    object, and a pod of a ReplicaSet the state shows existed."""
    named = {e["name"] for e in perfect["entities"]} | {p[k] for p in perfect.get("propagations", [])
                                                        for k in ("source", "target")}

    def gone(item) -> bool:
        meta = item["metadata"]
        return item.get("kind") == "Pod" and f"{meta.get('namespace')}/Pod/{meta['name']}" in named \
            and meta["name"].count("-") >= 2
    if not any(gone(item) for item in faulty["resources"]["items"]):
        return
    replaced, deleted = [], []
    for item in faulty["resources"]["items"]:
        if gone(item):
            base, _, suffix = item["metadata"]["name"].rpartition("-")
            replaced.append({**item, "metadata": {**item["metadata"],
                                                  "name": f"{base}-{'q8w2m' if suffix != 'q8w2m' else 'b4d9z'}"}})
            continue
        replaced.append(item)
        deleted.append(item)
    for item in faulty["resources"]["items"]:  # each deleted pod's ReplicaSet, as the API server keeps it
        ref = next((r for r in item["metadata"].get("ownerReferences") or [] if r.get("kind") == "ReplicaSet"), None)
        if gone(item) and ref is not None and not any(o.get("kind") == "ReplicaSet" and o["metadata"]["name"] == ref["name"]
                                                      for o in deleted):
            deleted.append({"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {
                "name": ref["name"], "namespace": item["metadata"].get("namespace"),
                "labels": {"pod-template-hash": ref["name"].rpartition("-")[2]}}, "spec": {"replicas": 0}})
    suffix = "" if task == "diagnose" else f" ({task})"
    for items, why in ((replaced, "replaced by their controller"), (deleted, "deleted, their ReplicaSet left")):
        state = {**faulty, "resources": {**faulty["resources"], "items": items}}
        yield Case(f"the perfect answer, its pods {why}, no `incident`" + suffix, task, PASS, answer=perfect,
                   state=state, score=1.0)


def _ghost_pod_cases(spec: dict, perfect: dict, faulty: dict, task: str = "diagnose") -> Iterator[Case]:
    """A pod named as the root cause's workload names its pods (the root cause a workload or one of its
    pods), that the state does not hold: graded with the state (as `itbench run` grades), it names nothing."""
    from ..runtime.evaluator import owner_from_name

    items = faulty["resources"]["items"]
    workloads: dict = {}
    for w in spec["workloads"]:
        workloads.setdefault(w["name"], []).append(w)
    static = [w for w in spec["workloads"] if w["kind"] == "Pod"]
    for entity in perfect["entities"]:
        namespace, kind, name = entity["name"].split("/", 2)
        if kind == "Pod":
            owner = owner_from_name(name, namespace, workloads, static)
            if owner is None or owner["kind"] not in ("Deployment", "StatefulSet"):
                continue
            kind, name = owner["kind"], owner["name"]
        pods = {o["metadata"]["name"] for o in items if o.get("kind") == "Pod"
                and o["metadata"].get("namespace") == namespace}
        if kind not in ("Deployment", "StatefulSet") or (not pods and f"{namespace}/Pod" not in faulty.get("captured", ())):
            continue  # a state that holds no pod of the namespace cannot say a pod is absent
        ghost = f"{namespace}/Pod/{name}-" + ("5f7d9c8b6d-zzzzz" if kind == "Deployment" else "97")
        if ghost.rpartition("/")[2] in pods:
            continue
        answer = {**perfect, "entities": [{**entity, "name": ghost}]}
        yield Case(f"a pod that does not exist ({ghost}) as the root cause" + ("" if task == "diagnose" else f" ({task})"),
                   task, FAIL, answer=answer, state=faulty)
        return


def _naming_cases(task: str, word: str, spec, perfect: dict, faulty: dict) -> Iterator[Case]:
    """How an answer that names objects is fooled or failed, for each task that asks for causes (diagnose,
    localize): the right names spelled other ways pass; a sibling, a ghost, a truncated name, every object
    at once, or the causes with a wrong object added, fail."""
    spelled = copy.deepcopy(perfect)
    for entity in perfect["entities"]:
        namespace, kind, name = entity["name"].split("/", 2)
        spelled["entities"] += [{"name": f"{kind}/{name}", "contributing_factor": True},
                                {"name": f"{namespace}/{kind.lower()}/{name}", "contributing_factor": True}]
    yield Case(f"the perfect {word} with each root cause spelled three ways", task, PASS, answer=spelled,
               state=faulty, score=1.0)
    yield from _kubectl_name_cases(task, word, spec, perfect, faulty)
    for entity in perfect["entities"]:
        namespace, kind, name = entity["name"].split("/", 2)
        for wrong, why in ((_sibling(spec, kind, name), "a sibling whose name starts with the root cause's"),
                           (f"{namespace}/{kind}/{name}-v2", "an object that exists nowhere"),
                           (f"{namespace}/{kind}/{name[:-1]}" if len(name) > 2 else None, "a truncated name")):
            if wrong is None:
                continue
            answer = copy.deepcopy(perfect)
            answer["entities"] = [e if e is not entity else {**e, "name": wrong} for e in perfect["entities"]]
            answer["propagations"] = [{**p, "source": wrong if p["source"] == entity["name"] else p["source"],
                                       "target": wrong if p["target"] == entity["name"] else p["target"]}
                                      for p in perfect["propagations"]]
            yield Case(f"{why} ({wrong}) instead of {entity['name']}" + ("" if task == "diagnose" else f" ({word})"),
                       task, FAIL, answer=answer, state=faulty)
    every = [f"{o['metadata'].get('namespace') or ''}/{o['kind']}/{o['metadata']['name']}"
             for o in faulty["resources"]["items"]]
    flood = {"entities": [{"name": n, "contributing_factor": True} for n in every],
             "propagations": perfect["propagations"]}
    yield Case("every object named as a root cause" + ("" if task == "diagnose" else f" ({word})"), task, FAIL,
               answer=flood, state=faulty)
    roots = {g["component"] for g in spec["diagnosis"]["groups"] if g["root_cause"]}
    other = _some_object(spec, avoid=roots | {e["name"].split("/", 2)[2] for e in perfect["entities"]})
    if other is not None:
        namespace, kind, name = other.split("/", 2)
        wrong_many = copy.deepcopy(perfect)
        wrong_many["entities"] += [{"name": spelling, "contributing_factor": True}
                                   for spelling in (other, f"{kind}/{name}", f"{namespace}/{kind.upper()}/{name}")]
        yield Case(f"the root cause and a wrong object ({other}) spelled three ways"
                   + ("" if task == "diagnose" else f" ({word})"), task, FAIL, answer=wrong_many, state=faulty)


def _kubectl_name_cases(task: str, word: str, spec, perfect: dict, faulty: dict) -> Iterator[Case]:
    """Names as kubectl reads them, and names that hedge: each root cause named by its plural resource name
    and group-qualified, and by its kind's short names (pass); by its bare name where that also names an object that is no root cause, or
    another object of its own component named instead (fail, and below the right answer's score); a
    Schedule's fault named by the Schedule or by an experiment it spawned (pass), by a name of another
    shape (fail)."""
    from ..runtime.evaluator import Diagnosis, SHORT_NAMES
    from ..runtime.state import kind_groups, kind_plural, State

    suffix = "" if task == "diagnose" else f" ({word})"
    diagnosis = Diagnosis(spec, State(faulty))
    groups = kind_groups(spec)
    resource = copy.deepcopy(perfect)
    for entity in perfect["entities"]:
        namespace, kind, name = entity["name"].split("/", 2)
        group = groups.get(kind, "")
        resource["entities"].append({**entity, "name": f"{namespace}/{kind_plural(kind)}/{name}"})
        if group:
            resource["entities"].append({**entity, "name": f"{namespace}/{kind_plural(kind)}.{group}/{name}"})
    yield Case(f"the perfect {word} with each root cause also named by kubectl's resource names", task, PASS,
               answer=resource, state=faulty, score=1.0)
    short = copy.deepcopy(perfect)
    for entity in perfect["entities"]:
        namespace, kind, name = entity["name"].split("/", 2)
        short["entities"] += [{**entity, "name": f"{namespace}/{s}/{name}"} for s, (k, g) in SHORT_NAMES.items()
                              if k == kind and groups.get(kind, g) == g]
    if short != perfect:
        yield Case(f"the perfect {word} with each root cause also named by kubectl's short names", task, PASS,
                   answer=short, state=faulty, score=1.0)
    for entity in perfect["entities"]:
        namespace, kind, name = entity["name"].split("/", 2)
        keys = diagnosis.names.resolve(name)
        if len(keys) > 1 and not diagnosis.names_cause(keys):
            answer = copy.deepcopy(perfect)
            answer["entities"] = [e if e is not entity else {**e, "name": name} for e in perfect["entities"]]
            yield Case(f"the bare name {name}, which also names {', '.join(k[0] for k in keys if k[0] != kind)}"
                       + suffix, task, FAIL, answer=answer, state=faulty, score_below=1.0)
            break
    roots = {g["component"] for g in spec["diagnosis"]["groups"] if g["root_cause"]}
    for o in faulty["resources"]["items"]:
        key = (o.get("kind"), o["metadata"].get("namespace"), o["metadata"].get("name"))
        if key[0] in ("Pod", "ReplicaSet") or diagnosis.component(key) not in roots or diagnosis.names_cause((key,)):
            continue
        wrong = f"{key[1] or ''}/{key[0]}/{key[2]}"
        yield Case(f"a wrong object of the root cause's own component ({wrong}) instead of the root causes" + suffix,
                   task, FAIL, answer={**perfect, "entities": [{"name": wrong, "contributing_factor": True}]},
                   state=faulty, score_below=1.0)
        break
    for schedule in spec["diagnosis"].get("schedules") or []:
        ns, sname = schedule["namespace"], schedule["name"]
        if not diagnosis.names_cause((("Schedule", ns, sname),)):
            continue
        for text, want, why in ((f"{ns}/Schedule/{sname}", PASS, "the Schedule"),
                                (f"{ns}/{schedule['kinds'][0]}/{sname}-x7k2p", PASS, "an experiment it spawned"),
                                (f"{ns}/{schedule['kinds'][0]}/{sname}-x7k2pq", FAIL, "a name no spawned experiment has")):
            answer = copy.deepcopy(perfect)
            answer["entities"] = [e for e in perfect["entities"] if e["name"].split("/", 2)[2] != sname] + \
                [{"name": text, "contributing_factor": True}]
            if want == PASS and (len(answer["entities"]) != len(perfect["entities"])
                                 or not diagnosis.names.resolve(text)):
                continue  # a spawned experiment the state shows does not exist names nothing
            yield Case(f"the scheduled fault named by {why} ({text})" + suffix, task, want, answer=answer,
                       state=faulty, **({"score": 1.0} if want == PASS else {}))
        yield from _spawned_cases(schedule, perfect, faulty, suffix, task)
    yield from _aliased_service_cases(diagnosis, roots, perfect, faulty, suffix, task)
    yield from _fault_object_cases(diagnosis, spec, perfect, faulty, suffix, task)


def _fault_object_cases(diagnosis, spec: dict, perfect: dict, faulty: dict, suffix: str, task: str) -> Iterator[Case]:
    """Each injected fault named by its objects: what it created or changed (a Schedule, an Istio policy, a
    quota), and the target of a fault no root cause stands for (a second fault the truth leaves out), named
    beside the root causes, pass; an object a fault created that stands for every root cause, named alone
    instead of them, passes too (the node a cordon fault cordons among them; another node fails)."""
    extra, alone = [], []
    for fault in spec["diagnosis"].get("faults") or []:
        target = (fault["target"][0], fault["target"][1] or None, fault["target"][2])
        keys = [(k, ns or None, n) for k, ns, n in fault["objects"]]
        if diagnosis.by_fault.get(target, set()) & diagnosis.optional:
            keys.append(target)
        for key in keys:
            text = f"{key[1] or ''}/{key[0]}/{key[2]}"
            if not diagnosis.names.resolve(text) or text in extra:
                continue
            extra.append(text)
            if set(diagnosis.true_classes) <= diagnosis.by_fault.get(key, set()) and len(alone) < 2:
                alone.append(text)
    if not extra:
        return
    answer = {**copy.deepcopy(perfect), "entities": perfect["entities"] + [
        {"name": text, "contributing_factor": True} for text in extra]}
    yield Case(f"the perfect diagnosis with every injected fault's objects named too ({', '.join(extra[:3])})"
               + suffix, task, PASS, answer=answer, state=faulty, score=1.0)
    for text in alone:
        yield Case(f"the root cause named by an object its fault created or changed ({text})" + suffix, task, PASS,
                   answer={**copy.deepcopy(perfect), "entities": [{"name": text, "contributing_factor": True}]},
                   state=faulty, score=1.0)
    # a node the fault changed names it; another node of the cluster, which no fault touched, names nothing
    for text in [t for t in alone if t.startswith("/Node/")][:1]:
        yield Case(f"another node than the one the fault changed ({text}-other) instead of the root causes" + suffix,
                   task, FAIL, answer={**copy.deepcopy(perfect), "entities": [
                       {"name": text + "-other", "contributing_factor": True}]}, state=faulty, score_below=1.0)


def _aliased_service_cases(diagnosis, roots: set, perfect: dict, faulty: dict, suffix: str, task: str) -> Iterator[Case]:
    """A Service aliased to the root cause that no root cause names (it selects the root cause's pods; the
    fault left it as it was), and a copy of it under another name with the same selector, named instead of the
    root causes: both fail, below the right answer's score."""
    named = {(g["kind"], g["namespace"], g["name"]) for g in diagnosis.groups.values() if g["root_cause"]}
    for o in faulty["resources"]["items"]:
        key = (o.get("kind"), o["metadata"].get("namespace"), o["metadata"].get("name"))
        if key[0] != "Service" or diagnosis.component(key) not in roots or key in named:
            continue
        twin = copy.deepcopy(o)
        twin["metadata"] = {"name": key[2] + "-twin", "namespace": key[1], "labels": o["metadata"].get("labels", {})}
        state = {**faulty, "resources": {**faulty["resources"], "items": faulty["resources"]["items"] + [twin]}}
        for name, at, why in ((key[2], faulty, "an unchanged Service of the root cause's component"),
                              (key[2] + "-twin", state, "another Service with the same selector")):
            yield Case(f"{why} ({key[1]}/Service/{name}) instead of the root causes" + suffix, task, FAIL,
                       answer={**perfect, "entities": [{"name": f"{key[1]}/Service/{name}", "contributing_factor": True}]},
                       state=at, score_below=1.0)
        return


def _spawned_cases(schedule: dict, perfect: dict, faulty: dict, suffix: str, task: str) -> Iterator[Case]:
    """A Schedule's fault named through its experiments as the cluster shows them: the Schedule by the kind of
    the experiments it spawns, and an experiment the state holds owned by the Schedule, whatever its name, pass;
    the same experiment owned by another Schedule names another fault, and fails."""
    ns, sname, kind = schedule["namespace"], schedule["name"], schedule["kinds"][0]
    rest = [e for e in perfect["entities"] if e["name"].split("/", 2)[2] != sname]
    if len(rest) == len(perfect["entities"]):
        return
    answer = {**copy.deepcopy(perfect), "entities": rest + [{"name": f"{ns}/{kind}/{sname}", "contributing_factor": True}]}
    yield Case(f"the scheduled fault named by the Schedule's experiment kind ({kind}/{sname})" + suffix, task, PASS,
               answer=answer, state=faulty, score=1.0)
    child = f"{sname}-0a1b2"  # no name Kubernetes' generator makes: only its owner says whose it is
    for owner, want in ((sname, PASS), (sname + "-other", FAIL)):
        experiment = {"apiVersion": "chaos-mesh.org/v1alpha1", "kind": kind,
                      "metadata": {"name": child, "namespace": ns, "ownerReferences": [
                          {"apiVersion": "chaos-mesh.org/v1alpha1", "kind": "Schedule", "name": owner,
                           "uid": "00000000-0000-0000-0000-000000000001", "controller": True}]}, "spec": {}}
        state = {**faulty, "resources": {**faulty["resources"], "items": faulty["resources"]["items"] + [experiment]},
                 "captured": sorted(set(faulty.get("captured", ())) | {f"{ns}/{kind}"})}
        answer = {**copy.deepcopy(perfect), "entities": rest + [{"name": f"{ns}/{kind}/{child}", "contributing_factor": True}]}
        yield Case(f"the scheduled fault named by an experiment the state holds, owned by "
                   f"{'the Schedule' if want == PASS else 'another Schedule'} ({kind}/{child})" + suffix, task, want,
                   answer=answer, state=state, **({"score": 1.0} if want == PASS else {}))


def prompt_template(scenario: ir.Scenario) -> dict | None:
    """The answer template the scenario's prompt shows (its JSON code block), as data; None when the
    prompt shows none."""
    import re

    from ..backends.prompt import render

    match = re.search(r"```json\n(.*?)\n```", render(scenario), re.S)
    if match is None:
        return None
    try:
        return json.loads(match.group(1))
    except ValueError:
        return None


def _filled(template: dict, truth: dict) -> dict:
    """The prompt's template filled with an answer's names: one item per item of the answer, each the
    template's item with the answer's values laid over it (so the template's own keys are the ones graded)."""
    out = {}
    for key, items in template.items():
        if isinstance(items, list) and items and isinstance(items[0], dict):
            out[key] = [{**items[0], **{k: v for k, v in item.items() if k in items[0]}} for item in truth.get(key, [])]
        else:
            out[key] = truth.get(key, items)
    return out


def _chain_nodes(spec: dict) -> list:
    """The truth's propagations between two nodes of the chain as the evaluator contracts it (groups joined
    by alias and by component): empty when there is no chain to grade."""
    from ..runtime.evaluator import Diagnosis
    from ..runtime.state import EMPTY_STATE, State

    diagnosis = Diagnosis(spec, State(EMPTY_STATE))
    chain = diagnosis._chain_nodes()
    return [p for p in spec["diagnosis"]["propagations"]
            if chain[diagnosis.klass[p["source"]]] != chain[diagnosis.klass[p["target"]]]]


def _sibling(spec: dict, kind: str, name: str) -> str | None:
    """An object of the kind whose name starts with `name` and goes on (`frontend-proxy` for `frontend`)."""
    for k, namespace, other in spec["objects"]:
        if k == kind and other != name and other.startswith(name):
            return f"{namespace or ''}/{k}/{other}"
    return None


def _other_objects(spec: dict, avoid: set, count: int) -> list:
    """Up to `count` workloads of components outside `avoid`, as `<ns>/<Kind>/<name>`."""
    return [f"{w['namespace']}/{w['kind']}/{w['name']}" for w in spec["workloads"]
            if w["name"] not in avoid and w["kind"] != "Pod"][:count]


def _some_object(spec: dict, avoid: set = frozenset()) -> str | None:
    for w in spec["workloads"]:
        if w["name"] not in avoid and w["kind"] != "Pod":
            return f"{w['namespace']}/{w['kind']}/{w['name']}"
    return None


def _finops_cases(scenario, spec, derived) -> Iterator[Case]:
    faulty = derived["faulty"]
    perfect = perfect_answer(scenario, faulty)
    yield Case("the wasteful objects named as the prompt asks", "diagnose", PASS, answer=perfect, state=faulty,
               score=1.0)
    template = prompt_template(scenario)
    if template is not None:
        yield Case("the prompt's answer template filled with the truth", "diagnose", PASS,
                   answer=_filled(template, perfect), state=faulty, score=1.0)
        wrong = {"resource": [{"name": f"{r['name']}-v2"} for r in perfect["resource"]]}
        yield Case("the prompt's answer template filled with absent objects", "diagnose", FAIL,
                   answer=_filled(template, wrong), state=faulty)
    bare = {"resource": [{"name": r["name"].split("/", 2)[2], "type": f"{r['name'].split('/', 2)[1]}: {r['type']}"}
                         for r in perfect["resource"]]}
    yield Case("the wasteful objects by bare name, their kind in `type`", "diagnose", PASS, answer=bare, state=faulty)
    side = {entity_name(r, faulty, scenario): i.fault.replace("_", " ") for i in scenario.injections()
            for r in i.side_objects}
    if side:
        yield Case("the objects the fault misconfigured (" + ", ".join(side) + ")", "diagnose", PASS, state=faulty,
                   answer={"resource": [{"name": n, "type": t} for n, t in side.items()]})
    yield from _finops_type_cases(perfect, faulty)
    yield from _finops_kind_cases(spec, perfect, faulty)
    yield from _finops_shape_cases(perfect, faulty)
    yield Case("an answer that names nothing", "diagnose", FAIL, answer={"resource": []}, state=faulty)
    named = {r["name"].split("/", 2)[2] for r in perfect["resource"]}
    named |= {r.name for i in scenario.injections() for r in i.side_objects}
    other = _some_object(spec, avoid=named)
    if other is not None:
        yield Case(f"another object ({other})", "diagnose", FAIL, answer={"resource": [{"name": other}]}, state=faulty)
    ghost = perfect["resource"][0]["name"] + "-v2"
    yield Case(f"an object that exists nowhere ({ghost})", "diagnose", FAIL, answer={"resource": [{"name": ghost}]},
               state=faulty)


def _finops_type_cases(perfect: dict, faulty: dict) -> Iterator[Case]:
    """`type` says what is wasteful: the right objects with a type that says nothing of it fail, and so does
    an answer that says a key twice (a verdict with the reason, not a refused input)."""
    vague = {"resource": [{**r, "type": "x"} for r in perfect["resource"]]}
    yield Case("the wasteful objects named, their `type` saying nothing of the waste", "diagnose", FAIL,
               answer=vague, state=faulty)
    untyped = {"resource": [{"name": r["name"]} for r in perfect["resource"]]}
    yield Case("the wasteful objects named without a `type`", "diagnose", FAIL, answer=untyped, state=faulty)
    # `type` is one value of a closed vocabulary: the right value negated, hedged with another, or every value
    # listed says no one kind of waste
    from ..tasks import FINOPS_TYPES

    for label, say in (("negated", lambda t: f"not {t}"), ("hedged with another value", lambda t: "either " + t + " or "
                       + next(v for v in FINOPS_TYPES if v.replace("_", " ") != t)),
                       ("listing every value", lambda t: ", ".join(FINOPS_TYPES))):
        yield Case(f"the wasteful objects named, their `type` {label}", "diagnose", FAIL, state=faulty,
                   answer={"resource": [{**r, "type": say(r["type"])} for r in perfect["resource"]]})


def _finops_shape_cases(perfect: dict, faulty: dict) -> Iterator[Case]:
    """An answer of another shape than the prompt's is the agent's answer, and wrong: graded a fail with the
    reason, never refused as an unusable input (the same rule as an answer that is no JSON)."""
    first = perfect["resource"][0]
    shapes = (("an empty object", {}), ("`resource` null", {"resource": None}),
              ("`resource` one object, not a list", {"resource": first}),
              ("a list at the top, not an object", [first]),
              ("`resource` a list of bare strings", {"resource": [r["name"] for r in perfect["resource"]]}),
              ("a resource's name given as a number", {"resource": [{**first, "name": 1}]}))
    for label, answer in shapes:
        yield Case(f"a FinOps answer of another shape: {label}", "diagnose", FAIL, answer=answer, state=faulty)


def _finops_kind_cases(spec: dict, perfect: dict, faulty: dict) -> Iterator[Case]:
    """A bare name whose `type` says a kind names only an object of that kind: the wasteful objects by bare
    name, their `type` leading with a kind no finding has (the waste still told), fail."""
    kinds = {r["kind"] for refs in spec["finops"]["findings"] for r in refs}
    other = next(k for k in ("ConfigMap", "Secret", "Service") if k not in kinds)
    wrong = {"resource": [{"name": r["name"].split("/", 2)[2], "type": f"{other}: {r['type']}"}
                          for r in perfect["resource"]]}
    yield Case(f"the wasteful objects by bare name, their `type` naming another kind ({other})", "diagnose", FAIL,
               answer=wrong, state=faulty)


def _finops_control_cases(spec, derived) -> Iterator[Case]:
    """A FinOps control (nothing wasted): the answer that names nothing is the right one."""
    faulty = derived["faulty"]
    yield Case("a control's answer that names nothing", "diagnose", PASS, answer={"resource": []}, state=faulty,
               score=1.0)
    other = _some_object(spec)
    if other is not None:
        yield Case(f"a control's answer that names {other}", "diagnose", FAIL, answer={"resource": [{"name": other}]},
                   state=faulty)


def _optimum_cases(spec, derived) -> Iterator[Case]:
    """An optimum read off a list is read off the item it names: the solved state with that item back at
    its faulty value and a twin of another identity holding the optimal value put first (a cpu metric
    before the faulty memory one, a sidecar before the container) fails."""
    from ..runtime.state import walk

    solved, faulty = derived["solved"], derived["faulty"]
    for index, optimum in enumerate(spec["finops"]["optimal"]):
        path = optimum["path"]
        at = next((i for i, seg in enumerate(path) if isinstance(seg, list)), None)
        ref = optimum["object"]
        key = (ref["kind"], ref.get("namespace"), ref["name"])
        if at is None:
            continue
        bad = [o for o in faulty["resources"]["items"] if _key(o) == key]
        wrong = walk(bad[0], path[:at + 1]) if bad else []
        if len(wrong) != 1:
            continue
        selector = path[at]

        done = []

        def twin_first(obj, wrong=wrong[0], selector=selector, head=path[:at], done=done):
            items = walk(obj, head)
            if len(items) != 1 or not isinstance(items[0], list):
                return
            listed = items[0]
            for i, item in enumerate(listed):
                if isinstance(item, dict) and _nested_is(item, selector):
                    twin = copy_data(item)
                    _set_nested(twin, selector[0], _other_identity(selector[1]))
                    listed[i] = copy_data(wrong)
                    listed.insert(0, twin)
                    done.append(True)
                    return

        state = _with_edit(solved, key, twin_first)
        if done:
            yield Case(f"optimum {index}: the item {_show(path[at:at + 1])} faulty, a twin holding the optimum "
                       "put first", "mitigate", FAIL, state=state)


def _limit_headroom_cases(spec, derived) -> Iterator[Case]:
    """A request graded by its optimum leaves the limit free: the solved state with that container's limit of
    the resource at twice the optimum (headroom against OOM kills: a limit reserves nothing, costs nothing)
    passes."""
    from ..runtime.state import walk

    solved = derived["solved"]
    for index, optimum in enumerate(spec["finops"]["optimal"]):
        path, ref = list(optimum["path"]), optimum["object"]
        found = re.fullmatch(r"(\d+)([A-Za-z]*)", str(optimum.get("value")))
        if path[-3:-1] != ["resources", "requests"] or path[:3] != ["spec", "template", "spec"] or not found:
            continue
        limit = f"{2 * int(found.group(1))}{found.group(2)}"
        keys = {(o["kind"], o["metadata"].get("namespace"), o["metadata"]["name"]) for o in solved["resources"]["items"]
                if (o["kind"], o["metadata"].get("namespace"), o["metadata"]["name"]) == (ref["kind"], ref.get("namespace"), ref["name"])
                or (o["kind"] == "Pod" and o["metadata"].get("namespace") == ref.get("namespace")
                    and o["metadata"]["name"].startswith(ref["name"] + "-"))}

        def headroom(obj, path=path, limit=limit, request=optimum["value"]):
            at = path[:-2] if obj["kind"] != "Pod" else ["spec", *path[3:-2]]
            for resources in walk(obj, at):
                if isinstance(resources, dict):  # the request written out: a missing one defaults to the limit
                    resources.setdefault("requests", {}).setdefault(path[-1], request)
                    resources.setdefault("limits", {})[path[-1]] = limit

        yield Case(f"optimum {index}: the request at the optimum, its limit at {limit}", "mitigate", PASS,
                   state=_with_edits(solved, keys, headroom))


def _autoscaler_target_cases(spec, solved) -> Iterator[Case]:
    """An autoscaler's target optimum graded by what the HPA controller would do: the solved autoscaler with a
    second metric at 1% on another resource (the controller takes the largest replica count its metrics
    propose) fails, and so does the optimal target with scaling in disabled (`behavior.scaleDown.selectPolicy:
    Disabled`: the scaled-out replicas stay); its target written as the equivalent `AverageValue` (utilization x
    what one pod requests) passes, and a lone cpu target as the autoscaling/v1 `targetCPUUtilizationPercentage`
    it converts from passes (at 1%, fails)."""
    from ..runtime.state import container_request, pod_spec

    for optimum in spec["finops"]["optimal"]:
        path = optimum["path"]  # spec.metrics.[resource.name=R].resource.target.averageUtilization
        if optimum["object"]["kind"] != "HorizontalPodAutoscaler" or len(path) != 6 or path[:2] != ["spec", "metrics"] \
                or not isinstance(path[2], list) or path[2][0] != "resource.name" or path[3:] != ["resource", "target",
                                                                                                "averageUtilization"]:
            continue
        resource = path[2][1]
        key = _key_of(optimum["object"])
        hpa = next((o for o in solved["resources"]["items"] if _key(o) == key), None)
        if hpa is None:
            continue
        other = "cpu" if resource == "memory" else "memory"

        def extra(obj, other=other):
            obj["spec"].setdefault("metrics", []).append({"type": "Resource", "resource": {
                "name": other, "target": {"type": "Utilization", "averageUtilization": 1}}})

        yield Case(f"{key[2]}: a second autoscaler metric, {other} at 1%", "mitigate", FAIL,
                   state=_with_edit(solved, key, extra))
        # the HPA controller scales no target two autoscalers select the pods of (AmbiguousSelector), whatever
        # their names: the faulty one kept beside the fixed one, or a copy of the fixed one
        for what, value in (("the faulty target kept", 1), ("a copy of the fixed one", None)):
            second = copy_data(hpa)
            second["metadata"] = {"name": f"{key[2]}-second", "namespace": key[1]}
            for metric in second["spec"].get("metrics") or [] if value is not None else []:
                if (metric.get("resource") or {}).get("name") == resource:
                    metric["resource"]["target"] = {"type": "Utilization", "averageUtilization": value}
            yield Case(f"{key[2]}: a second autoscaler on its workload, {what}", "mitigate", FAIL,
                       state=_with_items(solved, solved["resources"]["items"] + [second]))

        def no_scale_in(obj):
            obj["spec"].setdefault("behavior", {})["scaleDown"] = {"selectPolicy": "Disabled"}

        yield Case(f"{key[2]}: the optimal target with scaling in disabled (scaleDown selectPolicy Disabled)",
                   "mitigate", FAIL, state=_with_edit(solved, key, no_scale_in))

        def slow_scale_in(obj):
            obj["spec"].setdefault("behavior", {})["scaleDown"] = {
                "stabilizationWindowSeconds": 3600, "selectPolicy": "Min",
                "policies": [{"type": "Pods", "value": 1, "periodSeconds": 1800}]}

        yield Case(f"{key[2]}: the optimal target with scaling in throttled (an hour's window, a pod per half hour)",
                   "mitigate", FAIL, state=_with_edit(solved, key, slow_scale_in))
        metrics = (hpa.get("spec") or {}).get("metrics") or []
        if resource == "cpu" and len(metrics) == 1:
            # autoscaling/v1 says a cpu utilization target alone: the v2 metric it converts to
            def as_v1(obj, value=optimum["value"]):
                obj["apiVersion"] = "autoscaling/v1"
                obj["spec"].pop("metrics", None)
                obj["spec"]["targetCPUUtilizationPercentage"] = int(value)

            def as_v1_faulty(obj):
                as_v1(obj, 1)

            yield Case(f"{key[2]}: the optimal target as autoscaling/v1 targetCPUUtilizationPercentage", "mitigate",
                       PASS, state=_with_edit(solved, key, as_v1))
            yield Case(f"{key[2]}: autoscaling/v1 targetCPUUtilizationPercentage at 1%", "mitigate", FAIL,
                       state=_with_edit(solved, key, as_v1_faulty))
        target = (hpa.get("spec") or {}).get("scaleTargetRef") or {}
        workload = next((o for o in solved["resources"]["items"] if o.get("kind") == target.get("kind")
                         and (o.get("metadata") or {}).get("name") == target.get("name")
                         and (o.get("metadata") or {}).get("namespace") == key[1]), None)
        containers = [c for c in (pod_spec(workload).get("containers") or [])] if workload else []
        requests = [container_request(c, resource) for c in containers if isinstance(c, dict)]
        if not requests or not all(requests):
            continue
        value = sum(requests) * float(optimum["value"]) / 100.0
        figure = f"{round(value / 1048576)}Mi" if resource == "memory" else f"{round(value * 1000)}m"

        def as_value(obj, resource=resource, figure=figure):
            for metric in obj["spec"].get("metrics") or []:
                if (metric.get("resource") or {}).get("name") == resource:
                    metric["resource"]["target"] = {"type": "AverageValue", "averageValue": figure}

        yield Case(f"{key[2]}: the optimal target as the equivalent AverageValue {figure}", "mitigate", PASS,
                   state=_with_edit(solved, key, as_value))


def _spend_cases(spec, derived) -> Iterator[Case]:
    """Spend is cut where the fault made it, not moved: the solved state (a control's: the healthy one) with
    an autoscaler's minReplicas raised fourfold, with another workload scaled up threefold, with another
    workload's requests cut tenfold, or with another workload broken (its pods not ready) fails."""
    solved = derived.get("solved") or derived["healthy"]
    spend = spec["finops"].get("spend") or []
    faulted = {(r["kind"], r.get("namespace"), r["name"]) for refs in spec["finops"]["findings"] for r in refs}
    optimum = {(o["object"]["kind"], o["object"].get("namespace"), o["object"]["name"]) for o in spec["finops"]["optimal"]}
    for entry in spend:
        if entry.get("autoscaler"):
            ref = entry["autoscaler"]

            def raise_floor(obj):
                obj.setdefault("spec", {})["minReplicas"] = 4 * max(1, int(obj["spec"].get("minReplicas") or 1))

            yield Case(f"{ref['name']}'s autoscaler minReplicas raised fourfold", "mitigate", FAIL,
                       state=_with_edit(solved, (ref["kind"], ref["namespace"], ref["name"]), raise_floor))
            break
    yield from _autoscaler_target_cases(spec, solved)
    others = [e for e in spend if not e.get("autoscaler") and _key_of(e["object"]) not in faulted | optimum
              and any(v for figures in e["requests"].values() for v in figures.values())]
    if others:
        entry = others[0]
        key = _key_of(entry["object"])

        def scale_up(obj):
            obj.setdefault("spec", {})["replicas"] = 3 * max(1, int(obj["spec"].get("replicas") or 1))

        def slash(obj):
            for c in obj["spec"]["template"]["spec"].get("containers", []):
                for part in ("requests", "limits"):
                    for resource, value in list(((c.get("resources") or {}).get(part) or {}).items()):
                        from ..runtime.state import number
                        figure = number(value)
                        if figure:
                            c["resources"][part][resource] = f"{figure / 10:g}"

        def broken(state):
            for pod in _pods_of(state, entry["object"]):
                for cond in (pod.get("status") or {}).get("conditions", []):
                    if cond.get("type") in ("Ready", "ContainersReady"):
                        cond["status"] = "False"
                for status in (pod.get("status") or {}).get("containerStatuses", []):
                    status["ready"] = False

        yield Case(f"another workload ({entry['object']['name']}) scaled up threefold", "mitigate", FAIL,
                   state=_with_edit(solved, key, scale_up))
        yield Case(f"another workload's ({entry['object']['name']}) requests cut tenfold", "mitigate", FAIL,
                   state=_with_edit(solved, key, slash))
        state = copy.deepcopy(solved)
        broken(state)
        for obj in state["resources"]["items"]:
            if _key(obj) == key:
                status = obj.setdefault("status", {})
                status["readyReplicas"] = 0
                status["availableReplicas"] = 0
        yield Case(f"another workload ({entry['object']['name']}) broken", "mitigate", FAIL, state=state)
        # an autoscaler the healthy topology lacks is no floor: its own target (1% of what a pod requests) holds
        # the workload at its maxReplicas, whatever it runs when the state is taken
        added = {"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
                 "metadata": {"name": f"{key[2]}-autoscale", "namespace": key[1]},
                 "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": key[0], "name": key[2]},
                          "minReplicas": 1, "maxReplicas": 20, "metrics": [{"type": "Resource", "resource": {
                              "name": "memory", "target": {"type": "Utilization", "averageUtilization": 1}}}]}}
        yield Case(f"an autoscaler added on another workload ({entry['object']['name']}), at a 1% target", "mitigate",
                   FAIL, state=_with_items(solved, solved["resources"]["items"] + [added]))


def _reserved_cases(spec, derived) -> Iterator[Case]:
    """What the application reserves, not the figure measured: the solved state (a control's: the healthy one)
    beside a copy of the faulted workload (a control's: the one reserving most) under another name, or beside
    bare pods copied from its pods, or with a sidecar on it, each reserving a tenth of the application more,
    or with every workload's requests raised by half, or beside its pods' copies owned by a Job, a DaemonSet or
    nothing and labelled for no Service, fails; beside the copy at zero replicas, the bare pods or the Job's
    finished, or a pod of another program, passes."""
    from ..runtime.state import pod_reserves

    solved = derived.get("solved") or derived["healthy"]
    spend = [e for e in spec["finops"].get("spend") or [] if any((e.get("reserves") or {}).values())]
    if not spend:
        return
    faulted = {(r["kind"], r.get("namespace"), r["name"]) for refs in spec["finops"]["findings"] for r in refs}
    entry = next((e for e in spend if _key_of(e["object"]) in faulted),
                 max(spend, key=lambda e: e["replicas"] * e["reserves"]["memory"]))
    key = _key_of(entry["object"])
    workload = next((o for o in solved["resources"]["items"] if _key(o) == key), None)
    if workload is None:
        return
    total = {r: sum(e["replicas"] * e["reserves"][r] for e in spend) for r in ("cpu", "memory")}
    pod = pod_reserves(workload)
    # pods enough to reserve a tenth of the application more of some resource: well past the 5% allowed
    count = min(-(-total[r] // (10 * pod[r])) + 1 for r in ("cpu", "memory") if pod[r])
    count = int(count)
    name = key[2]

    def twin(replicas):
        made = copy_data(workload)
        made["metadata"] = {"name": f"{name}-copy", "namespace": key[1], "generation": 1}
        made["spec"]["replicas"] = replicas
        made["status"] = {"observedGeneration": 1, "replicas": replicas, "readyReplicas": replicas,
                          "availableReplicas": replicas, "updatedReplicas": replicas}
        return made

    def bare(phase):
        pods = _pods_of(solved, entry["object"])
        if not pods:
            return []
        made = []
        for index in range(count):
            p = copy_data(pods[0])
            p["metadata"] = {**p["metadata"], "name": f"{name}-extra{index}",
                             "labels": {k: v for k, v in (p["metadata"].get("labels") or {}).items()
                                        if k != "pod-template-hash"}}
            p["metadata"].pop("ownerReferences", None)
            p["metadata"].pop("uid", None)
            p["status"] = {**(p.get("status") or {}), "phase": phase}
            made.append(p)
        return made

    def foreign(owner, phase="Running"):
        """Copies of its pods owned by another kind of controller (a Job's, a DaemonSet's; none: bare), labelled
        for no Service: the waste kept running as pods of the same program."""
        pods = _pods_of(solved, entry["object"])
        if not pods:
            return []
        made = []
        for index in range(count):
            p = copy_data(pods[0])
            owned = f"{name}-pool"
            p["metadata"] = {"name": f"{owned}-{index:05d}", "namespace": p["metadata"].get("namespace"),
                             "uid": f"u-{owned}-{index}", "labels": {"job-name": owned} if owner == "Job" else {}}
            if owner:
                p["metadata"]["ownerReferences"] = [{
                    "apiVersion": "batch/v1" if owner == "Job" else "apps/v1", "kind": owner, "name": owned,
                    "uid": f"u-{owned}", "controller": True, "blockOwnerDeletion": True}]
            if owner == "Job":
                p["spec"]["restartPolicy"] = "Never"
            p["status"] = {**(p.get("status") or {}), "phase": phase}
            made.append(p)
        return made

    def unrelated():
        """A Job's pod of another program (a shell the agent ran to probe the application), requesting what
        `count` of its pods reserve: not the application's, whatever it reserves."""
        pods = _pods_of(solved, entry["object"])
        made = foreign("Job")[:1] if pods else []
        for p in made:
            p["metadata"]["name"] = "probe-00000"
            p["spec"]["containers"] = [{"name": "probe", "image": "docker.io/curlimages/curl:8.8.0",
                                        "command": ["sleep", "3600"], "resources": {"requests": {
                                            r: _quantity(r, count * pod[r]) for r in ("cpu", "memory")
                                            if pod[r]}}}]
            p["spec"].pop("initContainers", None)
        return made

    def relabelled(replicas):
        made = twin(replicas)
        labels = {"app": f"{name}-copy"}
        made["spec"]["selector"] = {"matchLabels": dict(labels)}
        made["spec"]["template"].setdefault("metadata", {})["labels"] = dict(labels)
        return made

    items = solved["resources"]["items"]
    yield Case(f"{name}'s replicas moved into a copy under another name ({count} replicas)", "mitigate", FAIL,
               state=_with_items(solved, items + [twin(count)]))
    # its pods selected by no healthy selector: they serve nothing, and cost all the same
    yield Case(f"{name}'s replicas moved into a relabelled copy ({count} replicas)", "mitigate", FAIL,
               state=_with_items(solved, items + [relabelled(count)]))
    yield Case(f"a copy of {name} under another name at zero replicas", "mitigate", PASS,
               state=_with_items(solved, items + [twin(0)]))
    pods = bare("Running")
    if pods:
        yield Case(f"{count} bare pods copied from {name}'s", "mitigate", FAIL, state=_with_items(solved, items + pods))
        yield Case(f"{count} bare pods copied from {name}'s, finished", "mitigate", PASS,
                   state=_with_items(solved, items + bare("Succeeded")))
    # the same program kept running under a controller no healthy selector selects, or none: reserved all the same
    for owner, what in (("Job", "a Job's"), ("DaemonSet", "a DaemonSet's"), (None, "unlabelled bare")):
        pods = foreign(owner)
        if pods:
            yield Case(f"{count} of {name}'s pods kept as {what} pods", "mitigate", FAIL,
                       state=_with_items(solved, items + pods))
    pods = foreign("Job", "Succeeded")
    if pods:
        yield Case(f"{count} of {name}'s pods kept as a Job's pods, finished", "mitigate", PASS,
                   state=_with_items(solved, items + pods))
        yield Case("a Job's pod of another program beside the fix", "mitigate", PASS,
                   state=_with_items(solved, items + unrelated()))

    def sidecar(obj):
        obj["spec"]["template"]["spec"]["containers"].append(
            {"name": "sidecar", "image": "busybox", "resources": {"requests": {
                r: _quantity(r, count * pod[r]) for r in ("cpu", "memory") if pod[r]}}})

    def raised(obj):
        from ..runtime.state import number

        for c in obj["spec"]["template"]["spec"].get("containers", []):
            for part in ("requests", "limits"):
                for resource, value in list(((c.get("resources") or {}).get(part) or {}).items()):
                    if resource in ("cpu", "memory") and number(value):
                        c["resources"][part][resource] = _quantity(resource, 1.5 * number(value))

    yield Case(f"a sidecar on {name} requesting what {count} of its pods reserve", "mitigate", FAIL,
               state=_with_edit(solved, key, sidecar))
    yield Case("every workload's requests raised by half", "mitigate", FAIL,
               state=_with_edits(solved, {_key_of(e["object"]) for e in spend}, raised))

    # a resource the healthy manifests never request, reserved on a node as CPU and memory are (finops_spend)
    for what, amounts, limited in (("4 GPUs", {"nvidia.com/gpu": "4"}, True),
                                   ("8Gi of 2Mi hugepages", {"hugepages-2Mi": "8Gi"}, True),
                                   ("500Gi of local ephemeral storage", {"ephemeral-storage": "500Gi"}, False)):
        def other(obj, amounts=amounts, limited=limited):
            first = obj["spec"]["template"]["spec"]["containers"][0]
            res = first.setdefault("resources", {})
            res.setdefault("requests", {}).update(amounts)
            if limited:  # an extended resource's (and hugepages') request must equal its limit
                res.setdefault("limits", {}).update(amounts)

        if not any(r in (e.get("others") or {}).get(c, {}) for e in spend for c in (e.get("others") or {})
                   for r in amounts):
            yield Case(f"{name}'s first container also requesting {what}", "mitigate", FAIL,
                       state=_with_edit(solved, key, other))


def _quantity(resource: str, value: float) -> str:
    """A figure as a Kubernetes quantity: CPU in millicores, memory in bytes."""
    return f"{round(value * 1000)}m" if resource == "cpu" else str(round(value))


def _key_of(ref: dict) -> tuple:
    return (ref["kind"], ref.get("namespace"), ref["name"])


def _nested_is(item: dict, selector: list) -> bool:
    from ..runtime.state import nested, same

    value = nested(item, str(selector[0]))
    return value is not None and same(value, selector[1])


def _set_nested(item: dict, dotted: str, value) -> None:
    *parents, last = dotted.split(".")
    for part in parents:
        item = item.setdefault(part, {})
    item[last] = value


def _other_identity(value):
    """Another item's identity: the other resource of an autoscaler's metric, else a new name."""
    return {"memory": "cpu", "cpu": "memory"}.get(value, f"{value}-twin" if isinstance(value, str) else value + 1)


def _leaves(node, path=()):
    """(path, value) of every scalar under `node`, list items by position."""
    if isinstance(node, dict):
        for key, value in node.items():
            yield from _leaves(value, path + (key,))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from _leaves(value, path + (index,))
    else:
        yield path, node


def _jmes(path: tuple) -> str:
    out = "request.object"
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if part.replace("_", "").isalnum()
                                                          else f'."{part}"')
    return out


def _content_rules(spec: dict, unread: tuple[str, ...] | None = None) -> list[dict] | None:
    """Kyverno rules that flag the gap objects by what they hold, as a right policy does: for each gap object, a
    field of its own (outside its metadata but its namespace, its labels and its names) whose value no
    compliant object of its kind holds there, or one every such compliant object holds and it lacks; None when
    some gap object has neither. The field's value is the condition's pattern side (a `*` in a rule's verbs
    is then read as text, not as a wildcard)."""
    names = {(o.get("metadata") or {}).get("name") for o in spec["ciso"]["gaps"] + spec["ciso"]["compliant"]
             + spec["ciso"].get("context", [])}

    from ..ciso.k8s import _covered

    def fields(obj, false=False, named=False):
        # with `unread` (the control's reads): only the fields the control does not read; with `false`, the
        # fields held `false` alone (which `|| '<absent>'` cannot tell from absent); with `named`, those holding
        # an object's name too (a rule on their absence keys on no name: `serviceAccountName` left out)
        return {path: value for path, value in _leaves(obj)
                if path and (path[0] not in ("metadata", "apiVersion", "kind") or path == ("metadata", "namespace"))
                and "labels" not in path and "matchLabels" not in path and (named or value not in names)
                and isinstance(value, (str, bool, int)) and (value is False) == false and value != ""
                and (unread is None or not _covered(tuple(str(p) for p in path), unread))}

    rules, seen = [], set()
    # the variants graded beside the twins (ciso/variation.py) too: a right policy flags every form of the gap
    varied = spec["ciso"].get("variants") or {}
    compliant = spec["ciso"]["compliant"] + varied.get("compliant", [])
    # a workload is judged with the Pod its template makes too (the evaluator's `templated_pod`): a rule on Pods
    # reads the compliant workloads' pods as well
    pods = [{"apiVersion": "v1", "kind": "Pod", "metadata": {}, "spec": o["spec"]["template"]["spec"]}
            for o in compliant if o.get("kind") in ("Deployment", "StatefulSet", "DaemonSet", "Job")
            and isinstance(((o.get("spec") or {}).get("template") or {}).get("spec"), dict)]
    for index, gap in enumerate(spec["ciso"]["gaps"] + varied.get("gaps", [])):
        mine = fields(gap)
        others = [fields(o) for o in compliant + pods if o.get("kind") == gap.get("kind")]
        pick = next(((path, value) for path, value in mine.items() if not any(o.get(path) == value for o in others)),
                    None)
        present = {path for path, _ in _leaves(gap)}  # a field held `false` is there, for CEL's `has()`
        if pick is None and others:
            held = [fields(o, named=True) for o in compliant + pods if o.get("kind") == gap.get("kind")]
            pick = next(((path, "<absent>") for path in held[0] if path not in present
                         and all(path in o for o in held)), None)
        if pick is None and others:
            # absent from each place some compliant object holds it (a setting the pod or each container may hold)
            cover: list = []
            for o in others:
                if not any(p in o for p in cover):
                    cover.append(next((p for p in sorted(o, key=str) if p not in present), None))
            pick = (tuple(cover), "<absent>") if None not in cover else None
        if pick is None:  # a field held `false` that no compliant object holds `false` (`runAsNonRoot: false`)
            held = [fields(o, false=True) for o in compliant + pods if o.get("kind") == gap.get("kind")]
            pick = next(((path, False) for path in fields(gap, false=True) if not any(path in o for o in held)), None)
        if pick is None:
            return None
        path, value = pick
        namespace = (gap.get("metadata") or {}).get("namespace")
        if (gap["kind"], namespace, path, value) in seen:
            continue  # one rule flags both
        seen.add((gap["kind"], namespace, path, value))
        resources = {"kinds": [gap["kind"]], **({"namespaces": [namespace]} if namespace else {})}
        paths = path if path and isinstance(path[0], tuple) else (path,)  # several: each left out
        condition = {"key": value, "operator": "Equals",
                     "value": "{{ " + " || ".join(map(_jmes, paths)) + " || '<absent>' }}"}
        if value is False:
            condition = {"key": True, "operator": "Equals", "value": "{{ " + _jmes(path) + " == `false` }}"}
        rules.append({"name": f"check-{index}", "match": {"any": [{"resources": resources}]},
                      "validate": {"message": "violates the control", "deny": {"conditions": {"any": [condition]}}}})
    return rules


def _content_condition(rule: dict) -> tuple[list[str], object]:
    """(the fields' JMESPaths below `request.object`, the value flagged there) of a content rule
    (`_content_rules`): `<absent>` for fields it lacks (all of them), `false` for one it holds `false`."""
    cond = rule["validate"]["deny"]["conditions"]["any"][0]
    false = cond["value"].endswith(" == `false` }}")
    text = cond["value"][len("{{ "):-len(" == `false` }}" if false else " || '<absent>' }}")]
    return [t[len("request.object"):] for t in text.split(" || ")], (False if false else cond["key"])


def _perfect_policy(scenario, spec) -> dict:
    """The corpus's right policy: the policy to update (an update) or a new one, with rules that flag the gap
    objects by their content (`_content_rules`); a stand-in rule where no field tells them apart."""
    from ..backends import ciso as ciso_backend

    contract = spec["ciso"].get("contract") or {}
    existing = ciso_backend.existing_policy(scenario) if contract.get("name") else []
    policy = copy.deepcopy(existing[0]) if existing else {
        "apiVersion": "kyverno.io/v1", "kind": "ClusterPolicy", "metadata": {"name": "agent-policy"},
        "spec": {"validationFailureAction": "Audit", "background": True, "rules": []}}
    rules = _content_rules(spec) if contract.get("artefact") == "kyverno" else None
    policy["spec"]["rules"] = list(policy["spec"].get("rules") or []) + (rules or [{"name": "check"}])
    return policy


def _policy_cases(scenario, spec, derived) -> Iterator[Case]:
    faulty = derived["faulty"]
    contract = spec["ciso"].get("contract") or {}
    good_policy = _perfect_policy(scenario, spec)
    # the cluster as the agent leaves it: the policy it wrote or updated, the other existing policies unchanged
    others = [o for o in spec["ciso"].get("others", []) if _key(o) != _key(good_policy)]
    faulty = {**faulty, "resources": {**faulty["resources"], "items": [
        o for o in faulty["resources"]["items"] if _key(o) not in {_key(good_policy)} | {_key(p) for p in others}]
        + copy.deepcopy(others)}}

    kyverno = contract.get("artefact") == "kyverno"
    name = good_policy["metadata"]["name"]
    agents = _agents(spec, name)

    def with_reports(reports: list, policy: dict | None = None) -> dict:
        state = {**faulty, "policyReports": reports, **agents}
        policy = [policy] if isinstance(policy, dict) else policy
        if policy is not None:
            state["resources"] = {**faulty["resources"], "items": faulty["resources"]["items"] + policy}
        return state

    perfect = policy_reports(scenario, perfect=True, policy=name)
    yield Case("a perfect policy's reports", "policy", PASS, state=with_reports(perfect, good_policy if kyverno else None))
    if kyverno and _content_rules(spec) is not None:
        yield Case("a perfect policy (offline)", "policy", PASS, artifact=("kyverno", [good_policy]))
    # each with its policy deployed (the state holds the ClusterPolicies): the reports alone decide
    deployed = good_policy if kyverno else None
    yield Case("a deny-all policy's reports", "policy", FAIL,
               state=with_reports(policy_reports(scenario, perfect=False, policy=name), deployed))
    yield Case("an allow-all policy's reports", "policy", FAIL,
               state=with_reports(policy_reports(scenario, perfect=True, policy=name, gaps="pass"), deployed))
    yield Case("no report", "policy", FAIL, state=with_reports([], deployed))
    yield Case("a state without PolicyReports", "policy", UNUSABLE, state={k: v for k, v in faulty.items()
                                                                          if k != "policyReports"})
    if contract.get("artefact") == "rego":
        yield from _rego_cases(spec)
        yield from _unit_cases(spec)
    if kyverno:
        override = [{"action": "Enforce", "namespaces": sorted({(o.get("metadata") or {}).get("namespace") or "default"
                                                               for o in spec["ciso"]["gaps"]})}]
        for why, broken in (("that blocks (Enforce)", {"validationFailureAction": "Enforce"}),
                            ("that blocks through an override (validationFailureActionOverrides: Enforce)",
                             {"validationFailureActionOverrides": override}),
                            ("that skips existing objects (background: false)", {"background": False})):
            policy = copy.deepcopy(good_policy)
            policy["spec"].update(broken)
            yield Case(f"a perfect policy {why}", "policy", FAIL, state=with_reports(perfect, policy))
        policy = {**copy.deepcopy(good_policy), "apiVersion": "kyverno.io/v2beta1"}
        yield Case("a perfect policy of another API version", "policy", FAIL, state=with_reports(perfect, policy))
        yield from _admission_cases(good_policy)
        if contract.get("rules"):
            policy = copy.deepcopy(good_policy)
            policy["spec"]["rules"] = [{"name": "check"}]
            yield Case("an updated policy that lost its rules", "policy", FAIL, state=with_reports(perfect, policy))
        if contract.get("name") and _content_rules(spec) is not None:
            # an update graded on the policy it names: the new rules beside it, in a policy of their own, do nothing
            from ..backends import ciso as ciso_backend

            existing = ciso_backend.existing_policy(scenario)[0]
            kept = {r.get("name") for r in existing["spec"].get("rules") or []}
            beside = {**copy.deepcopy(good_policy), "metadata": {"name": "extra-controls"}}
            beside["spec"]["rules"] = [r for r in beside["spec"]["rules"] if r.get("name") not in kept]
            yield Case("the new rules in a new policy beside the named one, left as it was", "policy", FAIL,
                       artifact=("kyverno", [copy.deepcopy(existing), beside]))
        yield from _kyverno_semantics_cases(scenario, spec, faulty, good_policy, perfect, with_reports)
        yield from _graded_policy_cases(scenario, spec, faulty, good_policy)
        yield from _singling_out_cases(scenario, spec, faulty, good_policy)
        yield from _variation_cases(spec, good_policy)
        yield from _system_object_cases(spec, good_policy)
        yield from _policy_meaning_cases(spec, faulty, good_policy)
        yield from _listed_cases(scenario, spec, faulty, good_policy)
        yield from _pod_rule_cases(spec, faulty, good_policy)


def _cel_rules(rules: list[dict]) -> list[dict]:
    """The content rules (`_content_rules`) as `validate.cel` expressions: each flags the object whose field holds
    the rule's value (or lacks the field, for a rule keyed on its absence), every step guarded by `has()`."""
    out = []
    for rule in rules:
        texts, key = _content_condition(rule)
        held = []  # (every step of the field there, its accessor), for each field
        for text in texts:
            path = [int(p) if p.isdigit() else p for p in re.findall(r'\[(\d+)\]|\."([^"]*)"|\.([A-Za-z0-9_]+)', text)
                    for p in [next(x for x in p if x)]]
            accessor, guards = "object", []
            for part in path:
                if isinstance(part, int):
                    guards.append(f"size({accessor}) > {part}")
                    accessor += f"[{part}]"
                elif re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", part):
                    guards.append(f"has({accessor}.{part})")
                    accessor += f".{part}"
                else:
                    guards.append(f"{json.dumps(part)} in {accessor}")
                    accessor += f"[{json.dumps(part)}]"
            held.append((" && ".join(guards) or "true", accessor))
        present, accessor = held[0]
        literal = "true" if key is True else "false" if key is False else json.dumps(key)
        expression = (" || ".join(f"({p})" for p, _ in held) if key == "<absent>"
                      else f"!({present} && {accessor} == {literal})")
        out.append({"name": rule["name"], "match": rule["match"],
                    "validate": {"message": "violates the control", "cel": {"expressions": [{"expression": expression}]}}})
    return out


def _kyverno_semantics_cases(scenario, spec, faulty, good_policy, perfect, with_reports) -> Iterator[Case]:
    """What Kyverno makes of a policy, beyond its text: a perfect policy that reads the requesting user in
    background mode (Kyverno refuses it: fail); the perfect policy with a precondition whose regular expression
    backtracks catastrophically in Python's engine but not in Go's (pass, in bounded time); the perfect policy
    written in CEL (pass); another existing policy whose Pod rules Kyverno carries over to no controller
    (`autogen-controllers: none`: fail)."""
    reads = tuple(scenario.compliance.reads) if scenario.compliance is not None else ()
    unread = _content_rules(spec, reads) if reads else None
    if unread is not None:  # gap and compliant objects that are no minimal pair: a policy keyed elsewhere passes
        keyed = copy.deepcopy(good_policy)
        keyed["spec"]["rules"] = [r for r in keyed["spec"]["rules"] if not r["name"].startswith("check")] + unread
        yield Case("a policy keyed on fields the control does not read", "policy", FAIL, artifact=("kyverno", [keyed]))
    rules = _content_rules(spec)
    user = copy.deepcopy(good_policy)
    for rule in user["spec"]["rules"]:
        rule["preconditions"] = {"all": [{"key": "{{ request.userInfo.username }}", "operator": "NotEquals",
                                          "value": "cluster-admin"}]}
    yield Case("a perfect policy that reads the requesting user in background mode (Kyverno refuses it)", "policy",
               FAIL, state=with_reports(perfect, user))
    if rules is None:
        return
    yield Case("a perfect policy that reads the requesting user in background mode (offline)", "policy", FAIL,
               artifact=("kyverno", [user]))
    slow = copy.deepcopy(good_policy)
    for rule in slow["spec"]["rules"]:
        if rule["name"].startswith("check"):
            rule["preconditions"] = {"all": [{"key": "{{ regex_match('^(a+)+$', '" + "a" * 48 + "!') }}",
                                              "operator": "Equals", "value": False}]}
    yield Case("a perfect policy with a precondition Python's regular expressions would take years over", "policy",
               PASS, artifact=("kyverno", [slow]))
    cel = copy.deepcopy(good_policy)
    cel["spec"]["rules"] = [r for r in cel["spec"]["rules"] if not r["name"].startswith("check")] + _cel_rules(rules)
    yield Case("a perfect policy written in CEL (validate.cel)", "policy", PASS, artifact=("kyverno", [cel]))
    yield from _global_anchor_cases(spec, good_policy, rules)
    # a number flagged by a numeric range inside a list of values: Kyverno reads a range only as the whole value of
    # AnyIn/AllIn/AnyNotIn/AllNotIn, so `AnyIn ["0-0"]` compares the string "0-0" and flags nothing
    ranged = copy.deepcopy(good_policy)
    for rule in ranged["spec"]["rules"]:
        cond = ((((rule.get("validate") or {}).get("deny") or {}).get("conditions") or {}).get("any") or [{}])[0]
        if rule["name"].startswith("check") and isinstance(cond.get("key"), int) and \
                not isinstance(cond.get("key"), bool) and str(cond.get("value", "")).endswith(" || '<absent>' }}"):
            number = cond["key"]
            cond.update(key=cond["value"], operator="AnyIn", value=[f"{number}-{number}"])
    if ranged != good_policy:
        yield Case("a policy flagging the gap's number by a range in a list of values (AnyIn [\"N-N\"])", "policy",
                   FAIL, artifact=("kyverno", [ranged]))
    # the fallbacks written with not_null(): in Kyverno's JMESPath a missing key in a function's arguments is null
    # (only a bare path is "not found"), so the rule reads the objects lacking the field as `'<absent>'`
    fallback = copy.deepcopy(good_policy)
    for rule in fallback["spec"]["rules"]:
        cond = ((((rule.get("validate") or {}).get("deny") or {}).get("conditions") or {}).get("any") or [{}])[0]
        text = cond.get("value")
        if rule["name"].startswith("check") and isinstance(text, str) and text.endswith(" || '<absent>' }}"):
            cond["value"] = "{{ not_null(" + ", ".join(text[len("{{ "):-len(" || '<absent>' }}")].split(" || ")) + \
                ", '<absent>') }}"
    if fallback != good_policy:
        yield Case("a perfect policy whose keys fall back with not_null() on fields some objects lack", "policy", PASS,
                   artifact=("kyverno", [fallback]))
    for other in spec["ciso"].get("others") or []:
        silenced = copy.deepcopy(other)
        silenced.setdefault("metadata", {}).setdefault("annotations", {})[
            "pod-policies.kyverno.io/autogen-controllers"] = "none"
        yield Case(f"another existing policy ({other['metadata']['name']}) carried over to no controller (offline)",
                   "policy", FAIL, artifact=("kyverno", [good_policy, silenced]))


def _global_anchor_cases(spec, good_policy, rules) -> Iterator[Case]:
    """"If the item holds the violating `true`, fail it" written with global anchors on each key down to the field
    (`<(securityContext): {<(privileged): true}` beside `name: "!*"`): in Kyverno a global anchor whose key is
    absent holds (validation goes on), so an item that leaves the field out fails too; where some compliant object
    (or compliant variant) leaves it out, the policy flags it (fail)."""
    varied = (spec["ciso"].get("variants") or {}).get("compliant", [])
    for rule in rules:
        texts, key = _content_condition(rule)
        m = re.fullmatch(r"((?:\.[A-Za-z][A-Za-z0-9]*)+)\.([A-Za-z][A-Za-z0-9]*)\[0\]((?:\.[A-Za-z][A-Za-z0-9]*)+)",
                         texts[0] if len(texts) == 1 else "")
        if key is not True or m is None:
            continue
        prefix, items, suffix = m.group(1)[1:].split("."), m.group(2), m.group(3)[1:].split(".")
        kind = rule["match"]["any"][0]["resources"]["kinds"][0]

        def lacks(obj) -> bool:
            node = obj
            for part in prefix:
                node = node.get(part) if isinstance(node, dict) else None
            for item in (node or {}).get(items) or [] if isinstance(node, dict) else []:
                leaf = item
                for part in suffix:
                    leaf = leaf.get(part, ...) if isinstance(leaf, dict) else ...
                if leaf is ...:
                    return True
            return False
        if not any(o.get("kind") == kind and lacks(o) for o in spec["ciso"]["compliant"] + varied):
            continue
        match = rule["match"]
        if prefix[:3] == ["spec", "template", "spec"]:  # a rule on Pods, which Kyverno carries over to controllers
            prefix, match = ["spec"] + prefix[3:], {"any": [{"resources": {"kinds": ["Pod"]}}]}
        element: dict = {f"<({suffix[-1]})": True}
        for part in reversed(suffix[:-1]):
            element = {f"<({part})": element}
        pattern: object = {items: [{**element, "name": "!*"}]}
        if items == "containers":  # the other lists of containers too, where present
            pattern = {**{f"=({other})": [{**element, "name": "!*"}]
                          for other in ("initContainers", "ephemeralContainers")}, **pattern}
        for part in reversed(prefix):
            pattern = {part: pattern}
        policy = copy.deepcopy(good_policy)
        policy["spec"]["rules"] = [r for r in policy["spec"]["rules"] if not r["name"].startswith("check")] + [
            {"name": "check-anchored", "match": match,
             "validate": {"message": "violates the control", "pattern": pattern}}]
        yield Case("a policy failing items that hold the field true, by global anchors down to it (an item leaving "
                   "it out fails in Kyverno too)", "policy", FAIL, artifact=("kyverno", [policy]))
        return


def _agents(spec, name: str) -> dict:
    """A new policy is graded on the agent's own policies, as the run records them (`gradedPolicies`); an
    update on the policy its prompt names."""
    return {} if (spec["ciso"].get("contract") or {}).get("name") else {"gradedPolicies": [name]}


def _graded_policy_cases(scenario, spec, faulty, good_policy) -> Iterator[Case]:
    """Only the policy the task grades counts: another policy's reports that flag the gap, beside the
    graded policy's that flag nothing, fail (an update: the named policy; otherwise the agent's own, as
    the run records them in `gradedPolicies`)."""
    name = good_policy["metadata"]["name"]
    other = policy_reports(scenario, perfect=True, policy="someone-elses-policy")
    allow = policy_reports(scenario, perfect=True, policy=name, gaps="pass")
    state = {**faulty, "policyReports": other + allow,
             "resources": {**faulty["resources"], "items": faulty["resources"]["items"] + [good_policy]}}
    state.update(_agents(spec, name))
    yield Case("another policy flags the gap, the graded one flags nothing", "policy", FAIL, state=state)
    if "gradedPolicies" in state:
        # a capture that does not say which policies are the agent's (`--capture` without `--before`): a policy
        # already in the cluster would answer for it, so the state is refused, never graded on every policy
        yield Case("another policy flags the gap, the state does not say which policies are the agent's",
                   "policy", UNUSABLE, state={k: v for k, v in state.items() if k != "gradedPolicies"})
    yield Case("a perfect policy's reports beside another policy's", "policy", PASS, state={
        **state, "policyReports": other + policy_reports(scenario, perfect=True, policy=name)})


def _pod_path(path: tuple) -> tuple:
    """A workload's path (`spec.template.spec.X`) as the Pod's (`spec.X`), which a Pod rule reads."""
    return ("spec",) + tuple(path[3:]) if tuple(path[:3]) == ("spec", "template", "spec") else tuple(path)


def _variation_cases(spec, good_policy) -> Iterator[Case]:
    """Policies that key on what the graded objects happen to share beyond the control (ciso/variation.py):
    the control's own pattern over every container and every pod kind passes; the same rule kept to the gap's
    image, to Deployments, a rule that demands the whole hardened baseline besides, one that flags the gap's
    exact values of what the control reads at the gap's positions, a binding rule kept to the gap's subject
    kind, and one that allows only the compliant binding's role, each fail `ciso.general`."""
    from .. import ciso
    from ..ciso import variation
    from ..ciso.k8s import _baseline_pod, _covered, _leaves

    control = ciso.CATALOGUE.get(spec["ciso"].get("control"))
    if not isinstance(control, ciso.K8sControl) or not (spec["ciso"].get("variants") or {}):
        return
    base = [r for r in good_policy["spec"]["rules"] if not r["name"].startswith("check")]

    def with_rules(*rules):
        policy = copy.deepcopy(good_policy)
        policy["spec"]["rules"] = base + [dict(r, name=f"check-{i}") for i, r in enumerate(rules)]
        return ("kyverno", [policy])

    def rule(kinds, validate, **extra):
        return {"match": {"any": [{"resources": {"kinds": kinds}}]}, **extra,
                "validate": {"message": "violates the control", **validate}}

    gaps = spec["ciso"]["gaps"]
    pods = [g for g in gaps if g.get("kind") in ("Deployment", "StatefulSet", "DaemonSet", "Job", "Pod")]
    patterns = control.pattern if isinstance(control.pattern, list) else [control.pattern]
    if pods and control.pattern is not None and all(set(p) == {"spec"} for p in patterns):  # autogen moves no metadata
        patterns = copy.deepcopy(patterns)
        for pattern in patterns:
            inner = (pattern.get("spec") or {}).get("containers")
            if inner is not None:  # a control on containers covers all of them, ephemeral ones too
                pattern["spec"]["=(initContainers)"] = copy.deepcopy(inner)
                pattern["spec"]["=(ephemeralContainers)"] = copy.deepcopy(inner)
        right = rule(["Pod"], {"pattern": patterns[0]} if len(patterns) == 1 else {"anyPattern": patterns})
        yield Case("the control's own pattern over every container and pod kind", "policy", PASS,
                   artifact=with_rules(right))
        image = next((c.get("image") for g in pods for c in
                      ((g["spec"].get("template") or {}).get("spec") or g["spec"]).get("containers") or []), None)
        if image:
            yield Case("that rule kept to the gap's image (a precondition)", "policy", FAIL, artifact=with_rules(
                dict(right, preconditions={"all": [{"key": "{{ request.object.spec.containers[0].image }}",
                                                    "operator": "Equals", "value": image}]})))
        # narrowed to what a bare test pod lacks and a pod on a cluster holds (variation._as_on_a_cluster), where
        # a gap variant holds it (a control reading the field keeps no such gap: the narrowing then misses none)
        varied_pods = [variation._pod(g) for g in spec["ciso"]["variants"].get("gaps", []) if isinstance(g, dict)]
        for what, key, operator, value, outside in (
                ("pods without volumes", "{{ length(request.object.spec.volumes || `[]`) }}", "Equals", 0,
                 lambda p: p.get("volumes")),
                ("containers without resource limits", "{{ request.object.spec.containers[0].resources.limits || 'none' }}",
                 "Equals", "none", lambda p: ((p.get("containers") or [{}])[0].get("resources") or {}).get("limits")),
                ("pods without an fsGroup", "{{ request.object.spec.securityContext.fsGroup || 'none' }}", "Equals", "none",
                 lambda p: (p.get("securityContext") or {}).get("fsGroup") is not None),
                ("pods of at most two containers", "{{ length(request.object.spec.containers) }}", "LessThanOrEquals", 2,
                 lambda p: len(p.get("containers") or []) > 2)):
            if not any(isinstance(p, dict) and outside(p) for p in varied_pods):
                continue
            yield Case(f"that rule kept to {what} (a precondition)", "policy", FAIL, artifact=with_rules(
                dict(right, preconditions={"all": [{"key": key, "operator": operator, "value": value}]})))
        workload = [{"spec": {"template": copy.deepcopy(p)}} for p in patterns]
        if any(((g["spec"].get("template") or {}).get("spec") or g["spec"]).get("ephemeralContainers")
               for g in spec["ciso"]["variants"].get("gaps", []) if isinstance(g.get("spec"), dict)):
            blind = copy.deepcopy(right)
            for pattern in blind["validate"].get("anyPattern") or [blind["validate"].get("pattern")]:
                pattern["spec"].pop("=(ephemeralContainers)", None)
            yield Case("that rule over containers and init containers alone (no ephemeral container)", "policy", FAIL,
                       artifact=with_rules(blind))
        yield Case("that rule on Deployments alone", "policy", FAIL, artifact=with_rules(
            rule(["Deployment"], {"pattern": workload[0]} if len(workload) == 1 else {"anyPattern": workload})))
        baseline = {"spec": {"automountServiceAccountToken": False, "securityContext": _baseline_pod("x")["securityContext"],
                             "containers": [{"securityContext": _baseline_pod("x")["containers"][0]["securityContext"]}]}}
        yield Case("that rule and one demanding the whole hardened baseline", "policy", FAIL,
                   artifact=with_rules(right, rule(["Pod"], {"pattern": baseline})))
        exact = [(_pod_path(tuple(int(p) if p.isdigit() else p for p in path)), value) for path, value in _leaves(pods[0])
                 if _covered(path, control.reads) and value is not False and not isinstance(value, (dict, list))]
        from ..runtime.state import admitted_pod_spec

        # the reads' paths are the workload's; each pod as admission admits it (a `serviceAccountName` left out
        # is `default`): a variant leaving out what admission fills in with the gap's value is the gap's pod
        def admitted(g):
            g = copy.deepcopy(g)
            holder = g["spec"]["template"] if g.get("kind") != "Pod" and isinstance(g["spec"].get("template"), dict) else g
            holder["spec"] = admitted_pod_spec(holder["spec"])
            return dict((p, v) for p, v in _leaves(g) if _covered(p, control.reads))
        varied = [admitted(g) for g in spec["ciso"]["variants"].get("gaps", []) if g.get("kind") == pods[0].get("kind")]
        if exact and any(v != admitted(pods[0]) for v in varied):
            yield Case("a rule flagging the gap's own values of what the control reads, where the gap holds them",
                       "policy", FAIL, artifact=with_rules(rule(["Pod"], {"deny": {"conditions": {"all": [
                           {"key": "{{ " + _jmes(path) + " || '<absent>' }}", "operator": "Equals", "value": value}
                           for path, value in exact]}}})))
    if pods:
        yield from _literal_cases(control, spec, pods[0], rule, with_rules)
    yield from _first_item_cases(control, spec, rule, with_rules)
    bindings = [g for g in gaps if g.get("kind") in ("ClusterRoleBinding", "RoleBinding") and g.get("subjects")]
    if bindings and "roleRef" in control.reads:
        role = bindings[0]["roleRef"].get("name")
        right = rule([bindings[0]["kind"]], {"pattern": {"roleRef": {"name": f"!{role}"}}})
        yield Case("a rule on the role a binding grants", "policy", PASS, artifact=with_rules(right))
        yield Case("that rule kept to the gap's subject kind", "policy", FAIL, artifact=with_rules(
            dict(right, preconditions={"all": [{"key": "{{ request.object.subjects[0].kind }}", "operator": "Equals",
                                                "value": bindings[0]["subjects"][0].get("kind")}]})))
        allowed = sorted({(c.get("roleRef") or {}).get("name") for c in spec["ciso"]["compliant"]
                          if c.get("kind") == bindings[0]["kind"]} - {None})
        if allowed:
            yield Case("a rule allowing only the compliant binding's role", "policy", FAIL, artifact=with_rules(
                rule([bindings[0]["kind"]], {"pattern": {"roleRef": {"name": " | ".join(allowed)}}})))


def _first_item_cases(control, spec, rule, with_rules) -> Iterator[Case]:
    """A rule reading only the first item of each list the violation sits in (`rules[0]`, `volumes[0]`,
    `env[0]`, `ports[0]`, `add[0]`), over every container and both Roles and ClusterRoles, fails `ciso.general`: a gap
    variant puts a compliant item first (variation.BENIGN_ITEMS)."""
    from ..ciso import variation
    from ..ciso.k8s import CONTAINER_LISTS, _covered, _leaves

    pod_kinds = ("Deployment", "StatefulSet", "DaemonSet", "Job", "Pod")
    for gap in spec["ciso"]["gaps"][:1]:
        held = {path: value for o in spec["ciso"]["compliant"] if o.get("kind") == gap.get("kind")
                for path, value in _leaves(o)}
        conditions = []
        for path, value in _leaves(gap):
            if not _covered(path, control.reads) or isinstance(value, (dict, list)) or held.get(path, ...) == value:
                continue
            typed = _pod_path(tuple(int(p) if p.isdigit() else p for p in path)) if gap.get("kind") in pod_kinds \
                else tuple(int(p) if p.isdigit() else p for p in path)
            first = [i for i, p in enumerate(typed) if p == 0 and any(
                tuple(q for q in typed[:i] if isinstance(q, str))[-len(s):] == s for s in variation.BENIGN_ITEMS)]
            if not first:
                continue
            text = "request.object"
            for i, part in enumerate(typed[:first[-1] + 1]):
                if isinstance(part, int):
                    text += "[0]" if i in first else "[]"
                else:
                    text += f".[{', '.join(CONTAINER_LISTS)}][]" if part == "containers" else f".{part}"
            tail = typed[first[-1] + 1:]
            if not tail:  # the item itself (a capability, a verb): the first item is the violating value, as text
                if isinstance(value, str) and "'" not in value:  # (a `*` compared as a wildcard would match any)
                    conditions.append({"key": "{{ contains([" + text + "][] || `[]`, '" + value + "') }}",
                                       "operator": "Equals", "value": True})
            else:  # the first item holds the violating field
                field = ".".join(map(str, tail[:-1] if len(tail) > 1 else tail))
                conditions.append({"key": "{{ length([" + f"{text}.{field}" + "][] || `[]`) }}",
                                   "operator": "GreaterThan", "value": 0})
        if not conditions:
            continue
        kinds = ["Pod"] if gap.get("kind") in pod_kinds else sorted({gap["kind"]} | (
            {"Role", "ClusterRole"} if gap.get("kind") in ("Role", "ClusterRole") else set()))
        yield Case("a rule reading only the first item of each list the violation sits in", "policy", FAIL,
                   artifact=with_rules(rule(kinds, {"deny": {"conditions": {"any": conditions}}})))


def _literal_cases(control, spec, gap, rule, with_rules) -> Iterator[Case]:
    """A rule flagging only the gap's own violating value of a field (`SYS_ADMIN` among the added capabilities,
    hostPath `/var/log`), in every container and pod kind, fails `ciso.general`: a gap variant holds another
    value violating what the field is about (variation.VIOLATING_VALUES)."""
    from ..ciso import variation
    from ..ciso.k8s import _covered, _leaves

    varied = {o["metadata"]["name"] for o in spec["ciso"]["variants"].get("gaps", [])}
    for path, value in _leaves(gap):
        if not _covered(path, control.reads) or isinstance(value, (dict, list)):
            continue
        typed = tuple(int(p) if p.isdigit() else p for p in path)
        others = [o for o in variation._other_violating(typed, value) if variation._named(
            gap, f"{'.'.join(map(str, typed))} {o}", {"metadata": {}})["metadata"]["name"] in varied]
        if not others:
            continue
        text, previous = "request.object", None
        for part in _pod_path(typed):
            if isinstance(part, int):
                text += "[][]" if previous == "containers" else "[]"
            else:
                text += ".[containers, initContainers]" if part == "containers" else f".{part}"
            previous = part
        field = ".".join(p for p in typed if isinstance(p, str))
        yield Case(f"a rule flagging only the gap's own {field} {value!r}, not {others[0]!r}", "policy", FAIL,
                   artifact=with_rules(rule(["Pod"], {"deny": {"conditions": {"any": [
                       {"key": value, "operator": "AnyIn", "value": "{{ " + text + " || `[]` }}"}]}}})))


def _system_object_cases(spec, good_policy) -> Iterator[Case]:
    """For a control on where objects live: a rule that flags every object of the gap's namespaces fails, for it
    flags what Kubernetes itself keeps there (`ciso.system`: the Service `kubernetes`, ...); the same rule
    sparing those objects by kind and name passes. (Any other control's compliant objects share the gap's
    namespace: such a rule is no right policy of it.)"""
    from ..ciso import CATALOGUE

    system = spec["ciso"].get("system") or []
    control = CATALOGUE.get(spec["ciso"].get("control"))
    if not system or "metadata.namespace" not in (getattr(control, "reads", None) or ()):
        return
    varied = (spec["ciso"].get("variants") or {}).get("gaps", [])
    kinds = sorted({o["kind"] for o in spec["ciso"]["gaps"] + varied + system})
    places = sorted({(o.get("metadata") or {}).get("namespace") or "default" for o in spec["ciso"]["gaps"]})
    rule = {"name": "check-everything", "match": {"any": [{"resources": {"kinds": kinds, "namespaces": places}}]},
            "validate": {"message": "nothing may live here", "deny": {}}}
    policy = copy.deepcopy(good_policy)
    policy["spec"]["rules"] = [r for r in policy["spec"]["rules"] if not r["name"].startswith("check")] + [rule]
    yield Case("a rule flagging every object of the gap's namespace, what Kubernetes keeps there too", "policy",
               FAIL, artifact=("kyverno", [policy]))
    spared = copy.deepcopy(policy)
    spared["spec"]["rules"][-1]["exclude"] = {"any": [
        {"resources": {"kinds": [o["kind"]], "names": [o["metadata"]["name"]]}} for o in system]}
    yield Case("that rule sparing what Kubernetes keeps there, by kind and name", "policy", PASS,
               artifact=("kyverno", [spared]))


def _singling_out_cases(scenario, spec, faulty, good_policy) -> Iterator[Case]:
    """Policies that single the gap objects out (by name, by a name prefix, by a label value) instead of
    judging what they are: each flags the gap and passes the compliant objects, and fails `ciso.general`,
    graded offline as the agent's artefact and live from the reports with the policy read back."""
    gaps = [o for o in spec["ciso"]["gaps"] if (o.get("metadata") or {}).get("name")]
    if not gaps:
        return
    kinds = sorted({o["kind"] for o in gaps})
    names = [o["metadata"]["name"] for o in gaps]
    compliant = {o["metadata"].get("name") for o in spec["ciso"]["compliant"]}
    selectors = {"by name": {"names": names}}
    # each gap name's shortest prefix that no compliant object's name starts with (`privileged-g*`; the whole
    # name and a `*` where the names differ only in their last character)
    prefixes = sorted({next((n[:i] + "*" for i in range(1, len(n) + 1) if not any(_glob(n[:i] + "*", c) for c in compliant)),
                            None) for n in names} - {None})
    if prefixes:
        selectors["by a name prefix"] = {"names": prefixes}
    labels = [(k, v) for o in gaps for k, v in ((o["metadata"].get("labels") or {}).items())
              if not any((c.get("metadata") or {}).get("labels", {}).get(k) == v for c in spec["ciso"]["compliant"])]
    if labels and all(labels[0] in ((o["metadata"].get("labels") or {}).items()) for o in gaps):
        selectors["by a label value"] = {"selector": {"matchLabels": {labels[0][0]: labels[0][1]}}}
    # an agent that read how twins are named: the gap names and the names their twins would take, as the index
    # of the gap object (`t0x*`, an earlier scheme) or a hash without the evaluator's key would give them
    from ..runtime.evaluator import twins
    everything = gaps + list(spec["ciso"]["compliant"]) + list(spec["ciso"].get("context", []))
    guessed = [c["metadata"]["name"] for c in twins(everything)[:len(gaps)]]
    selectors["by name and the names their twins would take"] = {
        "names": names + guessed + [f"t{i}x*" for i in range(len(gaps))]}
    name = good_policy["metadata"]["name"]
    perfect = policy_reports(scenario, perfect=True, policy=name)
    for why, resources in selectors.items():
        policy = copy.deepcopy(good_policy)
        policy["spec"]["rules"] = [{"name": r["name"], "match": {"any": [{"resources": {"kinds": kinds, **resources}}]},
                                    "validate": {"message": "violates the control", "deny": {}}}
                                   for r in good_policy["spec"]["rules"]]
        yield Case(f"a policy that singles the gap objects out {why} (offline)", "policy", FAIL,
                   artifact=("kyverno", [policy]))
        state = {**faulty, "policyReports": perfect, **_agents(spec, name),
                 "resources": {**faulty["resources"], "items": faulty["resources"]["items"] + [policy]}}
        yield Case(f"a policy that singles the gap objects out {why} (its reports)", "policy", FAIL, state=state)


def _policy_meaning_cases(spec, faulty, good_policy) -> Iterator[Case]:
    """A policy is graded on what it does: one that spares the compliant objects by name (a deny of every
    object of the gap kinds but those names) fails their twins; an update whose existing rules keep their
    names but are gutted or narrowed fails `ciso.kept`; another existing policy changed fails
    `ciso.others`; a graded policy the embedded matcher cannot judge (CEL with parameters) fails, saying why."""
    perfect = [{"policy": good_policy["metadata"]["name"], "result": "fail" if g else "pass",
                "resources": [{"apiVersion": o.get("apiVersion"), "kind": o["kind"], "name": o["metadata"]["name"],
                               **({"namespace": o["metadata"]["namespace"]} if o["metadata"].get("namespace") else {})}]}
               for g, objs in ((True, spec["ciso"]["gaps"]), (False, spec["ciso"]["compliant"])) for o in objs]
    reports = [{"apiVersion": "wgpolicyk8s.io/v1alpha2", "kind": "PolicyReport", "metadata": {"name": "r"},
                "results": perfect}]

    def live(policy, extra=()):
        items = [o for o in faulty["resources"]["items"] if _key(o) not in {_key(policy)} | {_key(e) for e in extra}]
        return {**faulty, "policyReports": reports, **_agents(spec, policy["metadata"]["name"]),
                "resources": {**faulty["resources"], "items": items + [policy, *extra]}}

    kinds = sorted({o["kind"] for o in spec["ciso"]["gaps"]})
    spared = sorted({(o.get("metadata") or {}).get("name") for o in spec["ciso"]["compliant"]
                     if o.get("kind") in kinds} - {None})  # a kind no compliant object has tells nothing apart
    if spared:
        policy = copy.deepcopy(good_policy)
        policy["spec"]["rules"] = [r for r in policy["spec"]["rules"] if not r["name"].startswith("check")] + [{
            "name": "check", "match": {"any": [{"resources": {"kinds": kinds}}]},
            "exclude": {"any": [{"resources": {"names": spared}}]},
            "validate": {"message": "not on the allowlist", "deny": {}}}]
        yield Case("a policy that spares the compliant objects by name (offline)", "policy", FAIL,
                   artifact=("kyverno", [policy]))
        yield Case("a policy that spares the compliant objects by name (its reports)", "policy", FAIL,
                   state=live(policy))
    kept = spec["ciso"].get("kept") or []
    existing = [r for r in good_policy["spec"]["rules"] if not r["name"].startswith("check")]
    images = sorted({c.get("image") for o in spec["ciso"]["gaps"] + spec["ciso"]["compliant"]
                     for c in ((o.get("spec") or {}).get("template") or {}).get("spec", {}).get("containers", [])
                     if isinstance(c, dict) and isinstance(c.get("image"), str)}) or ["nginx"]
    if kept and existing:
        for why, change in (("gutted (its pattern matching anything)", lambda r: r.update(
                                validate={"message": "kept", "pattern": {"spec": {"containers": [{"name": "*"}]}}})),
                            ("narrowed (to objects named otherwise)", lambda r: r.update(
                                exclude={"any": [{"resources": {"names": ["*"]}}]})),
                            # a precondition that holds for the scenario's own objects alone: what the probes run
                            ("narrowed by a precondition on the image the scenario's objects run", lambda r: r.update(
                                preconditions={"all": [{"key": "{{ request.object.spec.containers[0].image || '' }}",
                                                        "operator": "AnyIn", "value": images}]})),
                            # every rule: a new rule may flag a probe too (a root probe, where the new rules
                            # prohibit root), and a probe any rule flags is kept
                            ("narrowed by excluding the probes' names as the docs spell them", lambda r: r.update(
                                exclude={"any": [{"resources": {"names": ["kept-*", "*-pod"]}}]}))):
            policy = copy.deepcopy(good_policy)
            for rule in policy["spec"]["rules"]:
                if not rule["name"].startswith("check") or "probes' names" in why:
                    change(rule)
            yield Case(f"an update whose existing rules keep their names, {why} (offline)", "policy", FAIL,
                       artifact=("kyverno", [policy]))
            yield Case(f"an update whose existing rules keep their names, {why} (its reports)", "policy", FAIL,
                       state=live(policy))
    for other in spec["ciso"].get("others") or []:
        changed = copy.deepcopy(other)
        changed["spec"]["rules"] = changed["spec"]["rules"][:-1] or [{"name": "emptied"}]
        yield Case(f"another existing policy ({other['metadata']['name']}) changed (offline)", "policy", FAIL,
                   artifact=("kyverno", [good_policy, changed]))
        yield Case(f"another existing policy ({other['metadata']['name']}) changed (in the cluster)", "policy", FAIL,
                   state=live(good_policy, [changed]))
    cel = copy.deepcopy(good_policy)
    cel["spec"]["rules"] = [r for r in cel["spec"]["rules"] if not r["name"].startswith("check")] + [{
        "name": "check", "match": {"any": [{"resources": {"kinds": kinds}}]},
        "validate": {"cel": {"expressions": [{"expression": "params.allowed == true"}],
                             "paramKind": {"apiVersion": "v1", "kind": "ConfigMap"}}}}]
    yield Case("a graded policy the embedded matcher cannot judge (CEL parameters), its reports perfect", "policy", FAIL,
               state=live(cel))


def _listed_cases(scenario, spec, faulty, good_policy) -> Iterator[Case]:
    """Inputs as `kubectl get -o json` writes several objects, one `kind: List`: the perfect policy as a List
    (offline), its reports as one PolicyReportList, its state's objects nested in a List (pass); a deny-all
    policy's reports as a List (fail)."""
    name = good_policy["metadata"]["name"]
    if _content_rules(spec) is not None:
        yield Case("a perfect policy given as a `kind: List`", "policy", PASS,
                   artifact=("kyverno", [{"apiVersion": "v1", "kind": "List", "items": [good_policy]}]))
    items = [o for o in faulty["resources"]["items"] if _key(o) != _key(good_policy)] + [good_policy]

    def listed(reports):
        return {**faulty, "policyReports": {"apiVersion": "wgpolicyk8s.io/v1alpha2", "kind": "PolicyReportList",
                                            "items": reports}, **_agents(spec, name),
                "resources": {"apiVersion": "v1", "kind": "List", "items": [{"apiVersion": "v1", "kind": "List",
                                                                           "items": items}]}}
    yield Case("a perfect policy's reports as a PolicyReportList, its objects nested in a List", "policy", PASS,
               state=listed(policy_reports(scenario, perfect=True, policy=name)))
    yield Case("a deny-all policy's reports as a PolicyReportList", "policy", FAIL,
               state=listed(policy_reports(scenario, perfect=False, policy=name)))


def _rego_field(path: tuple) -> str:
    return "[" + ", ".join(json.dumps(p) for p in path) + "]"


def _admission_cases(good_policy) -> Iterator[Case]:
    """A perfect policy the API server or Kyverno's admission would refuse never runs in the cluster: offline it
    fails the contract too (a name that is no DNS-1123 subdomain, a rule given twice, a validate block with both
    `pattern` and `deny`, match/exclude blocks Kyverno's policy validation refuses)."""
    rules = [r for r in good_policy["spec"].get("rules") or [] if isinstance(r, dict)]
    policy = copy.deepcopy(good_policy)
    policy["metadata"]["name"] = "Not_A_DNS_Name"
    yield Case("a perfect policy whose name is no DNS-1123 subdomain (offline)", "policy", FAIL,
               artifact=("kyverno", [policy]))
    if rules:
        policy = copy.deepcopy(good_policy)
        policy["spec"]["rules"] = rules + [copy.deepcopy(rules[0])]
        yield Case("a perfect policy with a rule given twice under one name (offline)", "policy", FAIL,
                   artifact=("kyverno", [policy]))
        # the ClusterPolicy CRD's schema: a rule name of at most 63 characters, a rule-level failureAction of Audit
        # or Enforce (lower case only in the deprecated policy-level field); Kyverno: a policy name of at most 63
        policy = copy.deepcopy(good_policy)
        policy["spec"]["rules"][-1]["name"] = ("check-" + "x" * 63)[:64]
        yield Case("a perfect policy with a rule name of 64 characters (offline)", "policy", FAIL,
                   artifact=("kyverno", [policy]))
        policy = copy.deepcopy(good_policy)
        policy["metadata"]["name"] = ("agent-policy-" + "x" * 63)[:64]
        yield Case("a perfect policy named with 64 characters (offline)", "policy", FAIL, artifact=("kyverno", [policy]))
        if all(isinstance(r.get("validate"), dict) for r in rules):
            policy = copy.deepcopy(good_policy)
            for rule in policy["spec"]["rules"]:
                rule["validate"]["failureAction"] = "audit"
            yield Case("a perfect policy whose rules say failureAction: audit, in lower case (offline)", "policy",
                       FAIL, artifact=("kyverno", [policy]))
            # Kyverno resolves each rule's action from the rule first: the policy-level Enforce applies to no rule
            policy = copy.deepcopy(good_policy)
            policy["spec"]["validationFailureAction"] = "Enforce"
            for rule in policy["spec"]["rules"]:
                rule["validate"]["failureAction"] = "Audit"
            yield Case("a perfect policy whose every rule reports (failureAction: Audit) under a policy-level Enforce "
                       "(offline)", "policy", PASS, artifact=("kyverno", [policy]))
        # Kyverno's policy validation of match/exclude blocks (validate.go): a wildcard kind in background mode, a
        # match description without kinds, `any` beside the legacy `resources`, a variable in exclude
        first = rules[0].get("match") if isinstance(rules[0].get("match"), dict) else {}
        described = [f.get("resources") for f in first.get("any") or first.get("all") or []
                     if isinstance(f, dict) and isinstance(f.get("resources"), dict)]
        if described and all(d.get("kinds") for d in described):
            kinds = sorted({k for d in described for k in d["kinds"]})
            for why, edit in (
                    ("matching every kind (kinds: [\"*\"]) in background mode",
                     lambda r: r.__setitem__("match", {"any": [{"resources": {"kinds": ["*"]}}]})),
                    ("whose match names no kind (namespaces only)",
                     lambda r: r.__setitem__("match", {"any": [{"resources": {
                         k: v for k, v in d.items() if k != "kinds"} or {"namespaces": ["*"]}} for d in described]})),
                    ("whose match gives `any` beside the legacy `resources`",
                     lambda r: r["match"].__setitem__("resources", {"kinds": kinds})),
                    ("with a variable in its exclude block",
                     lambda r: r.__setitem__("exclude", {"any": [{"resources": {
                         "kinds": kinds, "names": ["{{ request.object.metadata.name }}-spared"]}}]}))):
                policy = copy.deepcopy(good_policy)
                policy["spec"]["background"] = True
                edit(policy["spec"]["rules"][0])
                yield Case(f"a perfect policy {why}, which Kyverno refuses (offline)", "policy", FAIL,
                           artifact=("kyverno", [policy]))
        validate = rules[0].get("validate")
        if isinstance(validate, dict) and "deny" not in validate:
            policy = copy.deepcopy(good_policy)
            policy["spec"]["rules"][0]["validate"]["deny"] = {"conditions": {"any": [
                {"key": "x", "operator": "Equals", "value": "y"}]}}
            yield Case("a perfect policy with a validate block holding a deny beside its check (offline)", "policy",
                       FAIL, artifact=("kyverno", [policy]))


def _rego_engine() -> bool:
    """Whether an engine grades Rego here (docs/evaluator.md: OPA, else regopy)."""
    from ..runtime.evaluator import InputError, rego_engine

    try:
        return rego_engine() is not None
    except InputError:
        return False


def _rego_cases(spec) -> Iterator[Case]:
    """Rego policies read the input as the prompt states its shape (a `kubectl get -o json` List, or a host
    control's hosts), every object at once: a right policy by content over all the items (pass, where a field
    tells the gap apart); one that spares the compliant objects by name, one true whenever the compliant
    objects are there, reading across objects, and ones that count the items (fail: the inputs graded hold
    as many objects with a gap object as without, and more compliant ones than with one)."""
    if not _rego_engine():  # OPA or regopy: without either these cases cannot be graded
        return
    hosts = spec["ciso"].get("input") == "hosts"
    items = "input.hosts" if hosts else "input.items"
    head = "package check\n\ndefault result := false\n\nresult if count(violations) == 0\n\n"
    rules = _content_rules(spec)
    setting = _host_setting(spec) if hosts else None
    if setting is not None:
        yield from _host_setting_cases(spec, setting, head)
    elif hosts:  # a host's item holds its settings at the top (INPUT_SHAPES): a setting the gap hosts hold in a
        # value no compliant host (nor compliant variant) holds, in any case, or leave out
        yield from _host_service_cases(spec, head)
        varied = (spec["ciso"].get("variants") or {}).get("compliant") or []
        ok = [dict(_leaves(o.get("host") or {})) for o in spec["ciso"]["compliant"] + varied]
        paths = sorted({p for g in spec["ciso"]["gaps"] for p, v in _leaves(g.get("host") or {})
                        if all(o.get(p) != v for o in ok)}, key=str)
        if ok and paths and all(isinstance(o.get(p), str) for o in ok for p in paths):
            body = "".join(f"violations contains i if {{\n  some i\n  item := {items}[i]\n  not lower(object.get(item, "
                           f"{_rego_field(path)}, \"<absent>\")) in {json.dumps(sorted({o[path].lower() for o in ok}))}\n}}\n\n"
                           for path in paths)
            yield Case("a right Rego policy by content, reading every host at once", "policy", PASS,
                       artifact=("rego", head + body))
            last = body.replace(f"some i\n  item := {items}[i]", f"i := count({items}) - 1\n  item := {items}[i]")
            yield Case("that policy reading only the last host (where a gap host was once appended)", "policy", FAIL,
                       artifact=("rego", head + last))
    elif rules is not None:
        body = ""
        for rule in rules:
            kind = rule["match"]["any"][0]["resources"]["kinds"][0]
            texts, key = _content_condition(rule)
            tests = ""
            for text in texts:
                path = tuple(int(p) if p.isdigit() else p for p in text.replace("[", ".").replace("]", "").strip(".").split("."))
                # a value held: the path itself (undefined where it is not); an absence: `object.get`'s default
                test = (f"object.get(item, {_rego_field(path)}, \"<absent>\")" if key == "<absent>"
                        else "item" + "".join(f"[{json.dumps(p)}]" for p in path))
                tests += f"  {test} == {json.dumps(key)}\n"
            body += (f"violations contains i if {{\n  some i\n  item := input.items[i]\n  item.kind == {json.dumps(kind)}\n"
                     f"{tests}}}\n\n")
        yield Case("a right Rego policy by content, reading every object at once", "policy", PASS,
                   artifact=("rego", head + body))
        last = body.replace("some i\n  item := input.items[i]", "i := count(input.items) - 1\n  item := input.items[i]")
        yield Case("that policy reading only the last item (where a gap object was once appended)", "policy", FAIL,
                   artifact=("rego", head + last))
    kinds = sorted({o["kind"] for o in spec["ciso"]["gaps"]})
    names = sorted({(o.get("metadata") or {}).get("name") for o in spec["ciso"]["compliant"]} - {None})
    if names:
        field = "item.name" if hosts else "item.metadata.name"
        spare = head + (f"violations contains i if {{\n  some i\n  item := {items}[i]\n"
                        + ("" if hosts else f"  item.kind in {json.dumps(kinds)}\n")
                        + f"  not {field} in {json.dumps(names)}\n}}\n")
        yield Case("a Rego policy that spares the compliant objects by name", "policy", FAIL, artifact=("rego", spare))
        present = ("package check\n\ndefault result := false\n\nresult if {\n  every n in " + json.dumps(names)
                   + f" {{\n    some item in {items}\n    {field} == n\n  }}\n}}\n")
        yield Case("a Rego policy true whenever the compliant objects are there (read across objects)", "policy", FAIL,
                   artifact=("rego", present))
    # as many items as the compliant objects and their context: what a gap object adds, counted, not read
    size = len(spec["ciso"]["compliant"]) + len(spec["ciso"].get("context", []))
    for why, test in (("at most", f"count({items}) <= {size}"), ("exactly", f"count({items}) == {size}")):
        yield Case(f"a Rego policy true when the input holds {why} as many items as the compliant objects ({size})",
                   "policy", FAIL, artifact=("rego", f"package check\n\ndefault result := false\n\nresult if {test}\n"))
    # Rego v0 (OPA 1.0 refuses it; the prompt asks for v1): a right policy's rules written without `if`/`contains`
    yield Case("a Rego v0 policy (bodies without `if`, a partial set rule without `contains`)", "policy", FAIL,
               artifact=("rego", "package check\n\ndefault result := false\n\nresult { count(violations) == 0 }\n\n"
                                 f"violations[i] {{\n  some i\n  {items}[i].kind == \"NoSuchKind\"\n}}\n"))
    # the agent's Rego that does not compile is its artefact, and wrong: a fail with the reason, never refused
    yield Case("a Rego policy that does not compile (an unclosed body)", "policy", FAIL,
               artifact=("rego", "package check\n\nresult := true if {\n"))


def _host_service_cases(spec, head) -> Iterator[Case]:
    """A service control (enabled, CIS: `systemctl is-enabled` prints `enabled`) read as a blocklist of the states
    `disabled` and `masked`: every other unit-file state (`enabled-runtime`, `static`, ...) passes it (fail)."""
    from ..ciso import CATALOGUE, HostControl

    control = CATALOGUE.get(spec["ciso"].get("control"))
    if not isinstance(control, HostControl) or control.kind != "service":
        return
    unit = json.dumps(f"{control.key}.service")
    yield Case("a Rego policy flagging a service only when it is disabled or masked", "policy", FAIL,
               artifact=("rego", head + f"violations contains host.name if {{\n  some host in input.hosts\n"
                                        f"  host.services[{unit}].status in [\"disabled\", \"masked\"]\n}}\n\n"
                                        f"violations contains host.name if {{\n  some host in input.hosts\n"
                                        f"  host.services[{unit}].state != \"running\"\n}}\n"))
    right = head + (f"violations contains host.name if {{\n  some host in input.hosts\n"
                    f"  object.get(host.services, [{unit}, \"status\"], \"not-found\") != \"enabled\"\n}}\n")
    yield Case("a Rego policy flagging a service not enabled", "policy", PASS, artifact=("rego", right))
    yield Case("that policy judging a host only where an unrelated catalogue setting is hardened", "policy", FAIL,
               artifact=("rego", right.replace("  some host in input.hosts\n", "  some host in input.hosts\n"
                                               + _unrelated_hardened(control))))


def _unrelated_hardened(control) -> str:
    """A Rego condition that another catalogue host setting (one of another file, else another key) holds its
    compliant value (ciso/rhel9.py): true on a hardened host only."""
    from ..ciso.rhel9 import CONTROLS

    other = next(c for c in sorted(CONTROLS, key=lambda c: (c.kind != "line", c.path == control.path))
                 if c.id != control.id and c.kind == "line")
    return f"  host.files[{json.dumps(other.path)}][{json.dumps(other.key)}] == {json.dumps(other.compliant)}\n"


def _host_setting(spec):
    """The catalogue's host control of a line setting the spec grades (ciso/rhel9.py), else None."""
    from ..ciso import CATALOGUE, HostControl

    control = CATALOGUE.get(spec["ciso"].get("control"))
    return control if isinstance(control, HostControl) and control.kind == "line" else None


def _host_setting_cases(spec, control, head) -> Iterator[Case]:
    """A host setting read as its program reads it: the first drop-in (in file-name order) holding the keyword in
    any case, else the main file, else the program's default, its value compared case-insensitively with those
    the compliant hosts hold (pass); the same policy reading the main file alone, blind to the drop-ins read
    before it, one demanding the setting spelled out where the program's default complies, and a numeric bound
    blind to the program's "no limit" value (fail)."""
    varied = (spec["ciso"].get("variants") or {}).get("compliant") or []
    ok = sorted({str(control.setting(o.get("host") or {})).lower() for o in spec["ciso"]["compliant"] + varied})
    key = json.dumps(control.key.lower())
    dropins = (f"dropins(host) := [p |\n  some p\n  f := host.files[p]\n  startswith(p, {json.dumps(control.dropins + '/')})\n"
               f"  some k\n  f[k]\n  lower(k) == {key}\n]\n\n"
               f"setting(host) := value if {{\n  paths := sort(dropins(host))\n"
               f"  some k, value in host.files[paths[0]]\n  lower(k) == {key}\n}} else := value if {{\n")
    main = (f"  some k, value in host.files[{json.dumps(control.path)}]\n  lower(k) == {key}\n"
            f"}} else := {json.dumps(control.default or '<absent>')}\n\n")
    check = (f"violations contains host.name if {{\n  some host in input.hosts\n"
             f"  not lower(setting(host)) in {json.dumps(ok)}\n}}\n")
    opening = dropins if control.dropins else "setting(host) := value if {\n"
    resolved = head + opening + main + check
    yield Case("a right Rego policy reading each host's setting as its program does", "policy", PASS,
               artifact=("rego", resolved))
    last = resolved.replace("  some host in input.hosts\n", "  host := input.hosts[count(input.hosts) - 1]\n")
    yield Case("that policy reading only the last host (where a gap host was once appended)", "policy", FAIL,
               artifact=("rego", last))
    yield Case("that policy judging a host only where an unrelated catalogue setting is hardened", "policy", FAIL,
               artifact=("rego", resolved.replace("  some host in input.hosts\n", "  some host in input.hosts\n"
                                                  + _unrelated_hardened(control))))
    if control.dropins:
        yield Case("that policy reading the main file alone (blind to the drop-ins read before it)", "policy", FAIL,
                   artifact=("rego", head + "setting(host) := value if {\n" + main + check))
    if control.default is not None and control.default.lower() in ok:
        # the program's default complies (sshd's `X11Forwarding no`): a host leaving the setting out meets the control
        explicit = resolved.replace(f"}} else := {json.dumps(control.default)}\n", '} else := "<absent>"\n')
        yield Case("that policy demanding the setting spelled out (a host leaving it to its compliant default)",
                   "policy", FAIL, artifact=("rego", explicit))
    bounds = [int(v) for v in (control.compliant, *control.also_compliant) if v.lstrip("-").isdigit()]
    if control.unlimited and bounds:
        # a bound read as a figure only: the program's "no limit" value (LoginGraceTime 0, PASS_MAX_DAYS -1) is
        # below it, and a value in another unit (`5m`) is no number, so no violation
        naive = (f"violations contains host.name if {{\n  some host in input.hosts\n"
                 f"  to_number(setting(host)) > {max(bounds)}\n}}\n")
        yield Case("a numeric bound blind to the program's no-limit value and units", "policy", FAIL,
                   artifact=("rego", head + opening + main + naive))


def _unit_cases(spec) -> Iterator[Case]:
    """A control judged per namespace (the spec's `unit`) is graded at that granularity: a Rego policy that
    reads each namespace as a whole (every namespace running a workload has a policy object of the compliant
    side's kinds) passes, as does one per workload."""
    if spec["ciso"].get("unit") != "namespace":
        return
    if not _rego_engine():  # OPA or regopy: without either the case cannot be graded
        return
    workloads = sorted({o["kind"] for o in spec["ciso"]["gaps"]})
    guards = sorted({o["kind"] for o in spec["ciso"]["compliant"]} - set(workloads))
    if not guards:
        return
    source = ("package check\n\ndefault result := false\n\nresult if count(bare) == 0\n\n"
              f"bare contains ns if {{\n  some d in input.items\n  d.kind in {json.dumps(workloads)}\n"
              "  ns := d.metadata.namespace\n  not guarded(ns)\n}\n\n"
              f"guarded(ns) if {{\n  some p in input.items\n  p.kind in {json.dumps(guards)}\n"
              "  p.metadata.namespace == ns\n}\n")
    yield Case("a Rego policy that reads each namespace as a whole, for a control judged per namespace", "policy",
               PASS, artifact=("rego", source))


def _pod_rule_cases(spec, faulty, good_policy) -> Iterator[Case]:
    """A policy whose rules match Pods and that Kyverno carries over to no controller (the annotation
    `pod-policies.kyverno.io/autogen-controllers: none`) flags the pods the gap workloads run: right, offline
    (the workload judged with the Pod its template makes) and from reports on the pods alone (pass); the
    same policy matching other labels than the pods carry flags nothing (fail)."""
    from ..runtime.state import POD_TEMPLATE_KINDS, State, workload_pods

    rules = _content_rules(spec)
    if rules is None or not all(r["match"]["any"][0]["resources"]["kinds"][0] in POD_TEMPLATE_KINDS
                                and "request.object.spec.template.spec" in r["validate"]["deny"]["conditions"]["any"][0]["value"]
                                for r in rules):
        return
    policy = copy.deepcopy(good_policy)
    policy.setdefault("metadata", {}).setdefault("annotations", {})["pod-policies.kyverno.io/autogen-controllers"] = "none"
    pod_rules = copy.deepcopy(rules)
    for rule in pod_rules:
        rule["match"]["any"][0]["resources"]["kinds"] = ["Pod"]
        cond = rule["validate"]["deny"]["conditions"]["any"][0]
        cond["value"] = cond["value"].replace("request.object.spec.template.spec", "request.object.spec")
    policy["spec"]["rules"] = [r for r in policy["spec"]["rules"] if not r["name"].startswith("check")] + pod_rules
    yield Case("a policy on Pods without autogen rules (autogen-controllers: none) (offline)", "policy", PASS,
               artifact=("kyverno", [policy]))
    state = State(faulty)
    results = []
    for verdict, objs in (("fail", spec["ciso"]["gaps"]), ("pass", spec["ciso"]["compliant"])):
        for obj in objs:
            held = state.objects.get(_key(obj))
            for pod in workload_pods(held, state) if held is not None and obj.get("kind") in POD_TEMPLATE_KINDS else []:
                results.append({"policy": policy["metadata"]["name"], "rule": "check-0", "result": verdict,
                                "resources": [{"apiVersion": "v1", "kind": "Pod", "name": pod["metadata"]["name"],
                                               "namespace": pod["metadata"].get("namespace")}]})
    if not any(r["result"] == "fail" for r in results):
        return
    items = [o for o in faulty["resources"]["items"] if _key(o) != _key(policy)] + [policy]
    report = [{"apiVersion": "wgpolicyk8s.io/v1alpha2", "kind": "PolicyReport", "metadata": {"name": "pods"},
               "results": results}]
    live = {**faulty, "policyReports": report, **_agents(spec, policy["metadata"]["name"]),
            "resources": {**faulty["resources"], "items": items}}
    yield Case("a policy on Pods without autogen rules, reported on the pods alone", "policy", PASS, state=live)
    passing = [{**r, "result": "pass"} for r in results]
    yield Case("a policy on Pods without autogen rules whose reports pass every pod", "policy", FAIL,
               state={**live, "policyReports": [{**report[0], "results": passing}]})


def _glob(pattern: str, text) -> bool:
    import fnmatch

    return isinstance(text, str) and fnmatch.fnmatchcase(text, pattern)


def all_cases(scenario: ir.Scenario) -> tuple[dict, list[Case]]:
    """The scenario's evaluator spec and its corpus."""
    from ..backends.evaluator import evaluator_spec
    from .states import _alerts, objects

    found = objects(scenario)
    derived = {"healthy": render(found.healthy, found),
               "faulty": render(found.faulty, found, found.effects, _alerts(scenario, found.faulty), found.faulty_probes),
               "solved": render(found.solved, found)}
    spec = evaluator_spec(scenario)
    return spec, list(cases(scenario, spec, found, derived))


# when the derived faulty state's fault was injected: what the detection cases time their answers against
INJECTED_AT = "2026-01-01T00:00:00Z"


def _task_cases(scenario, spec, found: Objects, derived) -> Iterator[Case]:
    posed = spec["tasks"]
    faulty = derived["faulty"]
    if "detect" in posed:
        window = spec["detection"]["window_seconds"]
        at = {"injected_at": INJECTED_AT}
        if spec["detection"]["fault"]:
            yield Case("a detection in the window", "detect", PASS, answer={
                "anomaly": True, "noticed_at": "2026-01-01T00:01:00Z"}, state=faulty, score=1.0, **at)
            # RFC 3339 as people and libraries write it: another zone, fractions of a second, lower case
            yield Case("a detection in the window, in another time zone", "detect", PASS, answer={
                "anomaly": True, "noticed_at": "2025-12-31T19:01:00.250-05:00"}, **at)
            yield Case("a detection in the window, in lower case", "detect", PASS, answer={
                "anomaly": True, "noticed_at": "2026-01-01t00:01:00z"}, **at)
            yield Case("a detection whose zone puts it before the injection", "detect", FAIL, answer={
                "anomaly": True, "noticed_at": "2026-01-01T00:01:00+01:00"}, **at)
            yield Case("a detection without its time", "detect", FAIL, answer={"anomaly": True}, **at)
            yield Case("a detection noticed before the injection", "detect", FAIL, answer={
                "anomaly": True, "noticed_at": "2025-12-31T23:59:00Z"}, **at)
            yield Case("a detection noticed after the window", "detect", FAIL, answer={
                "anomaly": True, "noticed_at": _later(INJECTED_AT, window + 60)}, **at)
            yield Case("no anomaly where there is a fault", "detect", FAIL, answer={"anomaly": False}, **at)
            # the harness records when the answer appeared: a time claimed in the window does not make a late
            # answer early; a claimed time after the answer was written is read as the answer's
            yield Case("a detection written after the window and backdated into it", "detect", FAIL, answer={
                "anomaly": True, "noticed_at": "2026-01-01T00:01:00Z"}, answered_at=_later(INJECTED_AT, window + 3600),
                **at)
            yield Case("a detection written in the window", "detect", PASS, answer={
                "anomaly": True, "noticed_at": "2026-01-01T00:01:00Z"}, answered_at=_later(INJECTED_AT, min(90, window)), **at)
            yield Case("a detection that claims a time after its answer was written", "detect", PASS, answer={
                "anomaly": True, "noticed_at": _later(INJECTED_AT, window + 60)}, answered_at=_later(INJECTED_AT, min(90, window)),
                **at)
            yield Case("a detection without an injection time", "detect", UNUSABLE, answer={"anomaly": False})
        else:
            yield Case("no anomaly in a control", "detect", PASS, answer={"anomaly": False}, score=1.0)
            yield Case("a false alarm in a control", "detect", FAIL, answer={
                "anomaly": True, "noticed_at": "2026-01-01T00:01:00Z"})
        yield Case("a detection of the wrong shape", "detect", FAIL, answer={"anomaly": "yes"}, **at)
    if "localize" in posed:
        perfect = perfect_answer(scenario, faulty)
        yield Case("the perfect localization", "localize", PASS, answer=perfect, state=faulty, score=1.0)
        yield Case("the root causes without their propagation", "localize", PASS,
                   answer=dict(perfect, propagations=[]), state=faulty, score=1.0)
        yield Case("a localization that names nothing", "localize", FAIL, answer=EMPTY_ANSWER, state=faulty)
        for entity in perfect["entities"][:1]:
            namespace, kind, name = entity["name"].split("/", 2)
            for wrong in (_sibling(spec, kind, name), f"{namespace}/{kind}/{name}-v2"):
                if wrong is not None:
                    yield Case(f"a localization that names {wrong} instead of {entity['name']}", "localize", FAIL,
                               state=faulty, answer={"entities": [{"name": wrong, "contributing_factor": True}]})
        if perfect["entities"]:
            yield from _naming_cases("localize", "localization", spec, perfect, faulty)
            yield from _ghost_pod_cases(spec, perfect, faulty, "localize")
            yield from _replaced_pod_cases(perfect, faulty, "localize")
            yield from _gone_pod_cases(perfect, faulty, "localize")
            yield from _replicaset_named_cases(perfect, faulty, "localize")
        yield Case("a localization without entities", "localize", FAIL, answer={"causes": []})
    if "analyze" in posed and spec.get("analysis"):
        truth = {k: spec["analysis"][k] for k in ("system_level", "fault_type")}
        yield Case("the right analysis", "analyze", PASS, answer=truth, score=1.0)
        yield Case("the right analysis in other words' case", "analyze", PASS, answer={
            k: " " + v.replace("_", " ").title() + " " for k, v in truth.items()}, score=1.0)
        other = next(t for t in spec["analysis"]["vocabulary"]["fault_type"] if t != truth["fault_type"])
        yield Case("a wrong fault type", "analyze", FAIL, answer=dict(truth, fault_type=other))
        yield Case("every fault type at once", "analyze", FAIL, answer=dict(
            truth, fault_type=" ".join(spec["analysis"]["vocabulary"]["fault_type"])))
        yield Case("the labels as lists", "analyze", FAIL, answer={k: [v] for k, v in truth.items()})
        yield Case("an analysis without its fault type", "analyze", FAIL, answer={"system_level": truth["system_level"]})
    unchanged = (spec.get("mitigation") or {}).get("unchanged")
    if "mitigate" in posed and unchanged:
        for ref in [e["object"] for e in unchanged if e["object"]["kind"] in ("Deployment", "StatefulSet")][:1]:
            key = (ref["kind"], ref["namespace"], ref["name"])
            changed = _edited(found.healthy, key, _replace_images)
            if changed is not None:
                yield Case(f"a control where {ref['name']} was changed", "mitigate", FAIL, state=render(changed, found))
        yield from _added_field_cases("a control", [e["object"] for e in unchanged], found.healthy, found)
        for ref in [e["object"] for e in unchanged if e["object"]["kind"] in ("Deployment", "StatefulSet")][:1]:
            key = (ref["kind"], ref["namespace"], ref["name"])
            for what, fields in (("dnsPolicy Default", {"dnsPolicy": "Default"}),
                                 ("an outside resolver", {"dnsPolicy": "None",
                                                          "dnsConfig": {"nameservers": ["8.8.8.8"]}}),
                                 ("hostNetwork", {"hostNetwork": True})):
                changed = _edited(found.healthy, key, lambda o, f=fields: o["spec"]["template"]["spec"].update(f))
                yield Case(f"a control where {ref['name']}'s pods are given {what}", "mitigate", FAIL,
                           state=render(changed, found))
            # the API server's defaults and its mirror of the service account's name are no change
            spelled = _edited(as_served(found.healthy), key, lambda o: o["spec"]["template"]["spec"].update(
                serviceAccount=o["spec"]["template"]["spec"].get("serviceAccountName") or "default",
                serviceAccountName=o["spec"]["template"]["spec"].get("serviceAccountName") or "default",
                enableServiceLinks=True, hostNetwork=False))
            yield Case(f"a control where {ref['name']}'s pod spec spells out the server's defaults", "mitigate", PASS,
                       state=render(spelled, found))


def _add_field(obj: dict) -> str | None:
    """Add a field that changes what the object means where its owned form has none (docs/evaluator.md, a field
    added is a change): a key to a ConfigMap, an egress isolation to a NetworkPolicy, a rule to a Role, a label
    to a Service's selector, a variable to a workload's first container. What it added; None for another kind."""
    kind, spec = obj.get("kind"), obj.get("spec") if isinstance(obj.get("spec"), dict) else {}
    if kind == "ConfigMap":
        obj.setdefault("data", {})["itbench-corpus-added"] = "added"
        return "a key added"
    if kind == "NetworkPolicy" and "Egress" not in (spec.get("policyTypes") or []):
        spec["policyTypes"] = ["Ingress", "Egress"] if spec.get("ingress") is not None or not spec.get("policyTypes") \
            else list(spec["policyTypes"]) + ["Egress"]
        return "egress isolated too"
    if kind in ("Role", "ClusterRole"):
        obj["rules"] = list(obj.get("rules") or []) + [{"apiGroups": [""], "resources": ["secrets"], "verbs": ["get"]}]
        return "a rule added"
    if kind == "Service" and isinstance(spec.get("selector"), dict) and spec["selector"]:
        spec["selector"] = {**spec["selector"], "itbench-corpus": "added"}
        return "a label added to its selector"
    containers = ((spec.get("template") or {}).get("spec") or {}).get("containers") if kind in (
        "Deployment", "StatefulSet", "DaemonSet") else None
    if isinstance(containers, list) and containers and isinstance(containers[0], dict):
        containers[0]["env"] = list(containers[0].get("env") or []) + [{"name": "ITBENCH_CORPUS_ADDED", "value": "1"}]
        return "a variable added to its first container"
    return None


def _added_field_cases(what: str, refs: list, manifests: dict, found: Objects, selected: set = frozenset()) \
        -> Iterator[Case]:
    """An object a check keeps as it was (a control's, one the fault deleted and the fix recreates) with a field
    added that changes its meaning fails: owning the fields it had is not enough. One object of each kind. A
    ConfigMap or Secret the workloads read (`selected`: judged by what they read) given a key none reads
    passes where every reader selects keys (subPath, items, a key reference): the key reaches no container."""
    from ..runtime.evaluator import exposes_every_key
    from ..runtime.state import State

    seen = set()
    for ref in refs:
        key = (ref["kind"], ref["namespace"], ref["name"])
        if ref["kind"] in seen or key not in manifests:
            continue
        added: list = []
        state = _edited(manifests, key, lambda o: added.append(_add_field(o)))
        if added and added[0]:
            seen.add(ref["kind"])
            rendered = render(state, found)
            unread = key in selected and not exposes_every_key(ref, State(rendered))
            yield Case(f"{what}'s {ref['kind']} {ref['name']} with {added[0]}"
                       + (" (no reader exposes every key)" if unread else ""), "mitigate", PASS if unread else FAIL,
                       state=rendered)


def _later(moment: str, seconds: float) -> str:
    import datetime

    start = datetime.datetime.fromisoformat(moment.replace("Z", "+00:00"))
    return (start + datetime.timedelta(seconds=seconds)).strftime("%Y-%m-%dT%H:%M:%SZ")


# ---- self-validation -------------------------------------------------------------------------------------


def self_validate(scenario: ir.Scenario) -> list[tuple[str, str]]:
    """Problems of the scenario's evaluator on its adversarial corpus (corpus.py), as (code, message);
    empty when it grades every case as it must.

    E4004: a mitigation or policy case graded wrongly (the faulty state passes, the solved one fails,
    a deny-all policy passes, an incomplete state is graded...). E4005: a diagnosis case graded wrongly
    (the perfect answer does not pass with score 1, a wrong or absent object is credited...)."""
    return [(code, message) for code, message, _ in self_validate_located(scenario)]


def _same_reason_once(cases: list[tuple[str, str, str]]) -> list[str]:
    """`NAME (must V): it WHAT` per case, the cases graded wrongly for one reason named together, so that a
    message states each fact once: `the healthy state | the solved state (must pass): it failed it (...)`."""
    grouped: dict[tuple[str, str], list[str]] = {}
    for name, wants, what in cases:
        grouped.setdefault((wants, what), []).append(name)
    out = []
    for (wants, what), names in grouped.items():
        listed = " | ".join(names[:3]) + (f" | {len(names) - 3} more" if len(names) > 3 else "")
        out.append(f"{listed} (must {wants}): it {what}")
    return out


def self_validate_located(scenario: ir.Scenario) -> list[tuple[str, str, int | None]]:
    """`self_validate`'s problems with what they are about: the index of the `mitigated when` predicate
    that alone failed states that must pass (a path that names nothing, a value no healthy state holds),
    so that the problem points at that predicate; None for the others."""
    spec, corpus = all_cases(scenario)
    wrong: dict[tuple[str, int | None], list[str]] = {}
    indexed: dict = {}  # the states the cases share, indexed once
    for case in corpus:
        ok, what = case.run(spec, indexed)
        if not ok:
            code = "E4004" if case.task in ("mitigate", "policy") else "E4005"  # E4005: an answer task's case
            wants = {"pass": "pass", "fail": "fail", "unusable": "refuse"}[case.want]
            blamed = None
            if case.want == "pass" and case.failed and all(c.startswith("mitigation.predicate.") for c in case.failed):
                blamed = int(case.failed[0].rsplit(".", 1)[1])
            wrong.setdefault((code, blamed), []).append((case.name, wants, what))
    problems = []
    for (code, blamed), cases in sorted(wrong.items(), key=lambda item: (item[0][0], item[0][1] is not None,
                                                                        item[0][1] or 0)):
        # a blamed predicate fails each state for one reason: say it once; other cases stay one by one
        found = _same_reason_once(cases) if blamed is not None else \
            [f"{name} (must {wants}): it {what}" for name, wants, what in cases]
        more = f"; and {len(found) - 3} more" if len(found) > 3 else ""
        task = "diagnosis" if code == "E4005" else "mitigation" if scenario.domain != "ciso" else "policy"
        what = f"`mitigated when` predicate {blamed} fails states that must pass" if blamed is not None else \
            f"the {task} evaluator grades {len(cases)} case(s) of its corpus wrongly"
        problems.append((code, f"{what}: " + "; ".join(found[:3]) + more, blamed))
    return problems
