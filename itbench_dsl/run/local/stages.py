"""kwok Stages that give a scenario's faulty pods the status a kubelet would give them.

kwok's default stages make every pod Running and Ready. The fault model says how a fault leaves the
pods of its target (`FaultKind.readiness`, one of `faults.POD_EFFECTS`, the same the derived states of
analysis/states.py render): this module turns each injection's effect into a Stage whose selector reads
the pod's spec only, as a kubelet would: a pod whose container runs the image the fault set (an image
the registry does not have), whose readiness probe is the fault's (a port nothing serves), whose memory
limit is the fault's (below what the application uses)... gets that effect's status. The values are the
fault's own (the evaluator spec's `mitigation.faults[i].fields[].changes[].faulty`), so nothing on the
injected objects marks them: the agent sees what it would see on a real cluster.

Effects and what a Stage writes (a pod Pending because no node fits is the real scheduler's, and a pod
refused by a quota the real admission's: neither needs a Stage):

- image: Pending, each container waiting in ImagePullBackOff;
- crash: Running, each container waiting in CrashLoopBackOff, its restart count rising every 10 s
  (its last state OOMKilled where the fault sets a memory limit, else Error);
- unready: Running, the containers running and not ready;
- init: Pending, the init containers waiting in CrashLoopBackOff, the others in PodInitializing;
- config: a new pod (not yet running) that needs a ConfigMap or Secret which is gone: Pending, its
  containers waiting in CreateContainerConfigError (`config_stages`: kwok cannot see other objects, so
  the caller names what is missing now, and stages again when that changes).

A fault Stage has weight 1: kwok picks it over its default pod-ready stage (weight 0) whenever both
match. Its status is written from the pod's own creation time, so writing it again changes nothing
(no update, no loop), but for the crash loop's restart count.
"""

from __future__ import annotations

import json

STAGE_API = "kwok.x-k8s.io/v1alpha1"
EFFECTS = ("image", "crash", "unready", "init")  # the effects a Stage gives (POD_EFFECTS' others: the scheduler's)
CRASH_PERIOD_MS = 10_000  # between two restarts of a crash-looping container


def scenario_stages(scenario, spec: dict | None = None) -> list[dict]:
    """The Stages of a checked scenario's injections (its evaluator spec: backends/evaluator.evaluator_spec)."""
    if spec is None:
        from ...backends.evaluator import evaluator_spec

        spec = evaluator_spec(scenario)
    faults = ((spec.get("mitigation") or {}).get("faults")) or []
    stages: list[dict] = []
    for index, injection in enumerate(scenario.injections()):
        effect = injection.kind.pod_effect(injection.args)
        target = injection.target
        if effect not in EFFECTS or index >= len(faults):
            continue
        for entry in faults[index].get("fields") or []:
            obj = entry["object"]
            if (obj["kind"], obj["namespace"], obj["name"]) != (target.kind, target.namespace, target.name):
                continue
            for number, change in enumerate(entry.get("changes") or []):
                selectors = pod_selectors(change["path"], change.get("faulty"))
                if selectors is None:
                    continue
                reason = "OOMKilled" if _is_memory_limit(change["path"]) else "Error"
                name = f"itbench-{effect}-{index}-{number}"
                stages.append(stage(name, effect, [_namespace(target.namespace), *selectors], reason))
    return stages


def config_stages(missing: list[tuple[str, str, str]]) -> list[dict]:
    """Stages for new pods of the namespaces that need a ConfigMap or Secret of `missing` ((kind,
    namespace, name) of objects that are gone now): they wait in CreateContainerConfigError."""
    stages = []
    for number, (kind, namespace, name) in enumerate(sorted(missing)):
        if kind == "ConfigMap":
            refs = ('[.spec.volumes[]?.configMap.name, .spec.volumes[]?.projected.sources[]?.configMap.name, '
                    '(.spec.containers[], .spec.initContainers[]?) | (.env[]?.valueFrom.configMapKeyRef.name, '
                    '.envFrom[]?.configMapRef.name)]')
        elif kind == "Secret":
            refs = ('[.spec.volumes[]?.secret.secretName, .spec.volumes[]?.projected.sources[]?.secret.name, '
                    '(.spec.containers[], .spec.initContainers[]?) | (.env[]?.valueFrom.secretKeyRef.name, '
                    '.envFrom[]?.secretRef.name)]')
        else:
            continue
        selectors = [_namespace(namespace),
                     {"key": f"{refs} | map(select(. != null)) | index([{json.dumps(name)}]) != null | tostring",
                      "operator": "In", "values": ["true"]},
                     {"key": ".status.phase", "operator": "NotIn", "values": ["Running", "Succeeded", "Failed"]}]
        stages.append(stage(f"itbench-config-{number}", "config", selectors))
    return stages


def pod_selectors(path: list, faulty) -> list[dict] | None:
    """kwok matchExpressions (jq) that hold for a pod whose spec has `faulty` at the pod-template `path`
    (the evaluator spec's form: names, and [key, value] list selectors); None where the path is not in a
    workload's pod template or the fault removed the field."""
    if faulty is None or len(path) < 3 or list(path[:2]) != ["spec", "template"] or path[2] not in ("spec", "metadata"):
        return None
    base = _jq(path[2:])
    return [{"key": f"{key} | tojson", "operator": "In", "values": [_json(value)]} for key, value in _leaves(base, faulty)]


def stage(name: str, effect: str, selectors: list[dict], reason: str = "Error") -> dict:
    """One kwok Stage: pods matching `selectors` (and scheduled, not being deleted) get `effect`'s status."""
    expressions = [{"key": ".metadata.deletionTimestamp", "operator": "DoesNotExist"},
                   {"key": ".spec.nodeName", "operator": "Exists"}, *selectors]
    body: dict = {"resourceRef": {"apiGroup": "v1", "kind": "Pod"}, "selector": {"matchExpressions": expressions},
                  "weight": 1, "next": {"statusTemplate": _TEMPLATES[effect].replace("@REASON@", reason)
                                        .replace("@EXIT@", "137" if reason == "OOMKilled" else "1")}}
    if effect in ("crash", "init"):
        # the first crash at once, each restart after it CRASH_PERIOD_MS later (kwok reads "0s" as no delay)
        statuses = "initContainerStatuses" if effect == "init" else "containerStatuses"
        body["delay"] = {"durationMilliseconds": CRASH_PERIOD_MS, "durationFrom": {"expressionFrom": (
            f'if ([.status.{statuses}[]?.state.waiting.reason] | index(["CrashLoopBackOff"])) == null '
            'then "0s" else empty end')}}
    return {"apiVersion": STAGE_API, "kind": "Stage", "metadata": {"name": name}, "spec": body}


# ---- jq ------------------------------------------------------------------------------------------------


def _namespace(namespace: str | None) -> dict:
    return {"key": ".metadata.namespace", "operator": "In", "values": [namespace or "default"]}


def _is_memory_limit(path: list) -> bool:
    return [p for p in path if isinstance(p, str)][-3:] == ["resources", "limits", "memory"]


def _json(value) -> str:
    # gojq's tojson: keys sorted, no spaces, non-ASCII as is
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _jq(path: list) -> str:
    """A jq path of the evaluator spec's form: `.["spec"] | .["containers"] | .[]? | select(.["name"] == "c")`."""
    parts = []
    for part in path:
        if isinstance(part, (list, tuple)) and len(part) == 2:
            parts.append(f".[]? | select(.[{_json(str(part[0]))}] == {_json(part[1])})")
        elif isinstance(part, int):
            parts.append(f".[{part}]?")
        else:
            parts.append(f".[{_json(str(part))}]?")
    return " | ".join(parts) or "."


def _leaves(base: str, value) -> list[tuple[str, object]]:
    """(jq, scalar or list) for each leaf of `value` below `base`; a list of named objects (containers,
    ports, env) by name, any other list whole."""
    if isinstance(value, dict):
        if not value:
            return [(base, value)]
        out = []
        for key in sorted(value):
            out += _leaves(f"{base} | .[{_json(str(key))}]", value[key])
        return out
    if isinstance(value, list) and value and all(isinstance(v, dict) and isinstance(v.get("name"), str) for v in value):
        out = []
        for item in value:
            named = f"{base} | .[]? | select(.name == {_json(item['name'])})"
            out += _leaves(named, {k: v for k, v in item.items() if k != "name"} or {"name": item["name"]})
        return out
    return [(base, value)]


# ---- the statuses --------------------------------------------------------------------------------------

_HEAD = """{{ $t := .metadata.creationTimestamp }}
{{ $root := . }}
"""
_IPS = """{{ with NodeIPWith .spec.nodeName }}
hostIP: {{ . | Quote }}
{{ end }}
startTime: {{ $t | Quote }}
"""
_CONDITIONS = """conditions:
- lastTransitionTime: {{ $t | Quote }}
  status: "True"
  type: PodScheduled
- lastTransitionTime: {{ $t | Quote }}
  status: "@INIT@"
  type: Initialized
- lastTransitionTime: {{ $t | Quote }}
  status: "False"
  reason: ContainersNotReady
  type: ContainersReady
- lastTransitionTime: {{ $t | Quote }}
  status: "False"
  reason: ContainersNotReady
  type: Ready
"""
# kwok's PodIPWith hands out a new address on every call: a pod that has one keeps it (else each write
# would change the status, and the change match the stage again)
_PODIP = """{{ with .status.podIP }}
podIP: {{ . | Quote }}
{{ else }}
podIP: {{ PodIPWith .spec.nodeName ( or .spec.hostNetwork false ) ( or .metadata.uid "" ) ( or .metadata.name "" ) ( or .metadata.namespace "" ) | Quote }}
{{ end }}
"""


def _waiting(containers: str, reason: str, restarts: bool = False) -> str:
    count = "0"
    last = ""
    if restarts:
        # one more restart each time the stage applies (every CRASH_PERIOD_MS), from the recorded count
        count = ("{{ add1 (or (and $root.status.containerStatuses (index $root.status.containerStatuses $i)"
                 ".restartCount) 0) }}") if containers == "containers" else \
                ("{{ add1 (or (and $root.status.initContainerStatuses (index $root.status.initContainerStatuses $i)"
                 ".restartCount) 0) }}")
        last = """  lastState:
    terminated:
      exitCode: @EXIT@
      reason: @REASON@
      startedAt: {{ $t | Quote }}
      finishedAt: {{ $t | Quote }}
"""
    return f"""{'initContainerStatuses' if containers == 'initContainers' else 'containerStatuses'}:
{{{{ range $i, $c := .spec.{containers} }}}}
- image: {{{{ $c.image | Quote }}}}
  name: {{{{ $c.name | Quote }}}}
  ready: false
  started: false
  restartCount: {count}
{last}  state:
    waiting:
      reason: {reason}
{{{{ end }}}}
"""


_RUNNING_UNREADY = """containerStatuses:
{{ range .spec.containers }}
- image: {{ .image | Quote }}
  name: {{ .name | Quote }}
  ready: false
  started: true
  restartCount: 0
  state:
    running:
      startedAt: {{ $t | Quote }}
{{ end }}
"""

_TEMPLATES = {
    "image": _HEAD + _CONDITIONS.replace("@INIT@", "True") + _waiting("containers", "ImagePullBackOff")
    + _IPS + _PODIP + "phase: Pending\n",
    "crash": _HEAD + _CONDITIONS.replace("@INIT@", "True") + _waiting("containers", "CrashLoopBackOff", True)
    + _IPS + _PODIP + "phase: Running\n",
    "unready": _HEAD + _CONDITIONS.replace("@INIT@", "True") + _RUNNING_UNREADY + _IPS + _PODIP + "phase: Running\n",
    "init": _HEAD + _CONDITIONS.replace("@INIT@", "False") + _waiting("initContainers", "CrashLoopBackOff", True)
    + _waiting("containers", "PodInitializing") + _IPS + _PODIP + "phase: Pending\n",
    "config": _HEAD + _CONDITIONS.replace("@INIT@", "True") + _waiting("containers", "CreateContainerConfigError")
    + _IPS + "phase: Pending\n",
}
