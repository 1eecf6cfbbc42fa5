"""evaluator.py: the bundle's standalone scorer.

The generated file is `itbench_dsl/runtime/evaluator.py` with the state model (`runtime/state.py`) in
place of its import (backends/evaluator_file.py), then one line holding the
scenario's ground truth as a JSON spec inside a Python string literal, then the `__main__`
guard. Scenario text therefore only ever reaches the file as data inside that literal (`repr`
of the JSON text), never as code: see tests/runtime/test_evaluator.py for the property.

This module computes the spec: what each task of the scenario is graded against. The grading
rules themselves live in the runtime and are described in docs/evaluator.md.
"""

from __future__ import annotations

import json
import re

from .. import ciso, ir
from ..ciso import variation
from . import ciso as ciso_backend
from .. import tasks as task_types
from . import faults as fault_backend
from . import itbench as itbench_backend
from ..runtime.evaluator import acting, container_ports, other_requests, port_number, RUN_PLACEMENT, type_key
from ..runtime.evaluator import CLUSTER_DNS, dns_path
from ..runtime.state import (as_template, config_reads, CONTAINER_LISTS, identity_key, image_defaults_dropped,
                             labels_match, nested,
                             POD_BEHAVIOUR, pod_references, pod_requests, pod_reserves, POD_TEMPLATE_KINDS,
                             template_path)
from .evaluator_file import source_for_spec, spec_of  # noqa: F401  (spec_of: the public API)
from .decoys import decoys
from .manifests import topology_manifests
from ..serialize import YamlError, load_yaml

SPEC_VERSION = 2
PROXIMITY_THRESHOLD = 0.9  # FinOps: how close to the optimum a figure must come to pass
# Objects a fault creates that act only when something refers to them: their references (a volume
# naming the claim, an env var naming the secret) are what a fix must remove, so they may stay.
# Everything else a fault creates (a chaos experiment, a quota, a policy, a workload) acts on its
# own and must be gone.
INERT_KINDS = frozenset({"ConfigMap", "Secret", "PersistentVolumeClaim", "ServiceAccount", "Role", "RoleBinding",
                         "ClusterRole", "ClusterRoleBinding", "PriorityClass"})
WORKLOAD_KINDS = ("Deployment", "StatefulSet")
# the workloads whose program `programs` reads: every kind that owns pods (a Job's, a CronJob's runs too)
PROGRAM_KINDS = POD_TEMPLATE_KINDS + ("CronJob",)
COMPLETING_KINDS = ("Job", "CronJob")  # they keep no replica ready: their runs complete


def _ref(ref: ir.ObjectRef) -> dict:
    return {"apiVersion": ref.api_version, "kind": ref.kind, "namespace": ref.namespace, "name": ref.name}


def _key(obj: dict) -> tuple:
    meta = obj.get("metadata") or {}
    return (obj.get("kind"), meta.get("namespace"), meta.get("name"))


def _manifest_ref(obj: dict) -> dict:
    meta = obj["metadata"]
    return {"apiVersion": obj.get("apiVersion"), "kind": obj["kind"], "namespace": meta.get("namespace"),
            "name": meta["name"]}


# ---- what the fault changed, by identity and by meaning ----------------------------------------------

def _parsed(text) -> tuple[object, str] | None:
    """A ConfigMap value that holds JSON or YAML (an object or a list), parsed, with its form; None for any
    other text."""
    if not isinstance(text, str):
        return None
    if text.lstrip().startswith(("{", "[")):
        try:
            value = json.loads(text)
        except ValueError:
            value = None
        if isinstance(value, (dict, list)):
            return value, "json"
    if "\n" in text.strip() and ":" in text:
        try:
            value = load_yaml(text)
        except YamlError:
            return None
        if isinstance(value, (dict, list)):
            return value, "yaml"
    return None


def diff(original, faulty, path: list, out: list, parse_strings: bool = False) -> None:
    """The fields where `faulty` differs from `original`, as changes {path, healthy | absent, faulty}.

    Dicts are compared key by key down to their leaves, on both sides: a field the fault adds is a
    change whose healthy state is `absent`, a field it removes keeps its healthy value. Lists of
    objects are matched by identity (runtime.state.IDENTITY_KEYS), never by position; a list
    without identity is one value. With `parse_strings` (a ConfigMap's data), JSON or YAML held in a
    string is compared as data: the path goes on inside it after a `{"parse": "json"}` (or `"yaml"`)
    step."""
    if isinstance(original, dict) and isinstance(faulty, dict):
        for key in list(original) + [k for k in faulty if k not in original]:
            if key not in faulty:
                _removed(original[key], path + [key], out)
            elif key not in original:
                _added(faulty[key], path + [key], out)
            else:
                # a ConfigMap's data values are the strings that may hold JSON
                diff(original[key], faulty[key], path + [key], out,
                     parse_strings and (path == [] and key == "data" or path == ["data"]))
        return
    if isinstance(original, list) and isinstance(faulty, list):
        key = identity_key(original, faulty) if original and faulty else None
        if key is not None:
            before = {str(nested(i, key)): i for i in original}
            after = {str(nested(i, key)): i for i in faulty}
            for name in list(before) + [n for n in after if n not in before]:
                selector = [key, nested((before.get(name) or after.get(name)), key)]
                if name not in after:
                    out.append({"path": path + [selector], "healthy": before[name], "faulty": None})
                elif name not in before:
                    out.append({"path": path + [selector], "absent": True, "faulty": after[name]})
                else:
                    diff(before[name], after[name], path + [selector], out)
            return
    if parse_strings and original != faulty:
        a, b = _parsed(original), _parsed(faulty)
        if a is not None and b is not None and a[1] == b[1]:
            diff(a[0], b[0], path + [{"parse": a[1]}], out)
            return
    if original != faulty:
        out.append({"path": path, "healthy": original, "faulty": faulty})


def _removed(value, path: list, out: list) -> None:
    if isinstance(value, dict) and value:
        for key, item in value.items():
            _removed(item, path + [key], out)
    else:
        out.append({"path": path, "healthy": value, "faulty": None})


def _added(value, path: list, out: list) -> None:
    if isinstance(value, dict) and value:
        for key, item in value.items():
            _added(item, path + [key], out)
    else:
        out.append({"path": path, "absent": True, "faulty": value})


def dotted(path: list) -> str:
    """A change's path as acceptances and predicates name it: string keys only."""
    return ".".join(str(seg) for seg in path if isinstance(seg, str))


def _as_data(obj: dict) -> dict:
    """A Secret as the API server returns it, read back: `stringData` folded into `data` (as text)."""
    if obj.get("kind") != "Secret" or "stringData" not in obj:
        return obj
    out = {k: v for k, v in obj.items() if k != "stringData"}
    out["data"] = {**(obj.get("data") or {}), **obj["stringData"]}
    return out


def _programs(scenario: ir.Scenario, ready: list[dict], fields: list[dict], others: bool = False) -> list[dict]:
    """What each workload that must be ready must still run: its pod labels and each container's image,
    command and arguments as its healthy manifest has them, and the fields of its pod spec that change what
    its pods do (POD_BEHAVIOUR), but for the fields a change leaves open (an acceptance, or the scenario's own
    statement about it). A fix that swaps the program for another one (an image that happens to start) is
    no fix. With `others`, the same for every other workload of the topology (health.application), each with
    the resource limits of its containers no fault changes: a limit squeezed below them starves it."""
    _, _, revert_apply, _ = fault_backend.plan(scenario)
    originals = {_key(o): o for o in topology_manifests(scenario.topology, provided=True)}
    originals.update({_key(o): o for o in revert_apply})
    changes = {(f["object"]["kind"], f["object"]["namespace"], f["object"]["name"]): f["changes"] for f in fields}
    # a bare pod keeps its program as a workload does, and so does a Job or a CronJob (it keeps no replica
    # ready: a run that completes as `true` is no run of its program): one a fault acts on beside the ready ones,
    # any other with the other workloads (a static pod's is the kubelet's, not the fix's)
    bare = {(w.kind, w.namespace, w.name) for w in scenario.topology.workloads if w.kind == "Pod" and w.bare}
    acted = [{"kind": k, "namespace": n, "name": x} for k, n, x in sorted(bare & set(changes))]
    scheduled = [f["object"] for f in fields if f["object"]["kind"] in COMPLETING_KINDS]
    named = {(r["kind"], r["namespace"], r["name"]) for r in ready + acted + scheduled}
    refs = ready + acted + scheduled if not others else [
        {"kind": w.kind, "namespace": w.namespace, "name": w.name} for w in scenario.topology.workloads
        if (w.kind in PROGRAM_KINDS or (w.kind, w.namespace, w.name) in bare)
        and (w.kind, w.namespace, w.name) not in named]
    # a FinOps optimum may size a workload's resources below what it was deployed with
    sized = {(o.target.kind, o.target.namespace, o.target.name) for o in scenario.optimal}
    # a fault whose harm is an option of a container's program (FaultKind.harm_option) judges that option: the
    # program is read without it
    options = {}
    for injection in scenario.injections():
        if injection.kind.harm_option:
            t = injection.target
            options.setdefault((t.kind, t.namespace, t.name), {})[injection.args.get("container") or "*"] = \
                injection.kind.harm_option
    out = []
    for ref in refs:
        key = (ref["kind"], ref["namespace"], ref["name"])
        keep = _program(originals[key], changes.get(key, [])) if key in originals else None
        if not keep:
            continue
        if ref["kind"] == "Pod":
            _selected_labels(keep, ref["namespace"], originals.values())
        entry = {"object": ref, "keep": keep}
        if ref["kind"] == "CronJob" and not (originals[key].get("spec") or {}).get("suspend"):
            entry["runs"] = True  # it keeps starting runs: not suspended, on a schedule that fires
            cadence = _cadence(originals[key], changes.get(key, []))
            if cadence:
                entry["cadence"] = cadence
            placement = _run_placement(originals[key], changes.get(key, []))
            if placement is not None:
                entry["placement"] = placement  # where its runs' pods may run
        if key in options:
            entry["options"] = options[key]
        env = _env(originals[key], changes.get(key, []))
        if env:
            entry["env"] = env
        mounts = _mounts(originals[key], changes.get(key, []))
        if mounts:
            entry["mounts"] = mounts
        probes = _probes(originals[key], changes.get(key, []))
        if probes:
            entry["probes"] = probes
        security = _security(originals[key], changes.get(key, []))
        if security:
            entry["security"] = security
        if others and key not in sized:
            limits = _limits(originals[key], changes.get(key, []))
            if limits:
                entry["limits"] = limits
        out.append(entry)
    return out


def _cadence(original: dict, changes: list) -> dict:
    """How often a healthy CronJob starts a run and how long a run may take, as `cadence_problem` reads them:
    its schedule (and time zone), its starting deadline, its jobs' deadline (`activeDeadlineSeconds`), but for
    the fields a change leaves open (an acceptance, or the scenario's own statement about it)."""
    spec = original.get("spec") or {}
    job = (spec.get("jobTemplate") or {}).get("spec") or {}
    out = {"schedule": spec.get("schedule"), "timeZone": spec.get("timeZone"),
           "startingDeadlineSeconds": spec.get("startingDeadlineSeconds"),
           "activeDeadlineSeconds": job.get("activeDeadlineSeconds")}
    for change in changes:
        path = change["path"]
        if (change.get("accept") or change.get("governed_by")) and path[:1] == ["spec"]:
            field = path[-1] if path[:3] == ["spec", "jobTemplate", "spec"] and len(path) == 4 else \
                path[1] if len(path) == 2 else None
            out.pop(field, None)
    return {k: v for k, v in out.items() if v is not None}


def _selected_labels(keep: dict, namespace: str, manifests) -> None:
    """A bare pod's labels kept only where something selects pods by them (a Service's selector, a
    NetworkPolicy's pod selector): no controller reads them, so `kubectl run`'s `run=NAME` for the healthy
    `app=NAME` is the same pod to everything else."""
    read = set()
    for o in manifests:
        if (o.get("metadata") or {}).get("namespace") not in (None, namespace):
            continue
        if o.get("kind") == "Service":
            read |= set(((o.get("spec") or {}).get("selector") or {}))
        elif o.get("kind") == "NetworkPolicy":
            stack = [o.get("spec")]
            while stack:
                node = stack.pop()
                if isinstance(node, dict):
                    read |= set(node.get("matchLabels") or {}) if isinstance(node.get("matchLabels"), dict) else set()
                    read |= {e.get("key") for e in node.get("matchExpressions") or [] if isinstance(e, dict)}
                    stack.extend(node.values())
                elif isinstance(node, list):
                    stack.extend(node)
    template = keep["spec"]["template"]
    labels = {k: v for k, v in ((template.get("metadata") or {}).get("labels") or {}).items() if k in read}
    if labels:
        template["metadata"] = {"labels": labels}
    else:
        template.pop("metadata", None)


def _limits(original: dict, changes: list) -> dict:
    """The resource limits of each container of a workload's healthy manifest, but those a fault changes."""
    def changed(name, resource):
        for change in changes:
            path = change["path"]
            if path[:4] == ["spec", "template", "spec", "containers"] and len(path) < 5:
                return True
            held = path[5:] == ["resources", "limits", resource][:len(path[5:])]
            if path[:4] == ["spec", "template", "spec", "containers"] and held and \
                    (not isinstance(path[4], list) or str(path[4][1]) == name):
                return True
        return False
    out = {}
    for c in ((original.get("spec") or {}).get("template") or {}).get("spec", {}).get("containers", []):
        limits = {k: v for k, v in ((c.get("resources") or {}).get("limits") or {}).items()
                  if not changed(str(c.get("name")), k)}
        if limits:
            out[str(c.get("name"))] = limits
    return out


def _program(original: dict, changes: list) -> dict | None:
    if original.get("kind") not in PROGRAM_KINDS and original.get("kind") != "Pod":
        return None
    # a bare Pod, a CronJob, as the template it is, its changes' paths alike; the image's own program spelled out
    # as its command and arguments is the program it runs with none (as the state is read: image_defaults_dropped)
    original = as_template(image_defaults_dropped(original))
    template = (original.get("spec") or {}).get("template") or {}
    pod = template.get("spec") or {}
    # a container with no command or arguments of its own runs its image's: null says they must stay absent; a
    # pod with no init containers has none (null), one with some runs those and no more
    keep = {"spec": {"template": {"spec": {
        key: [{k: c.get(k) for k in ("name", "image", "command", "args", "lifecycle")
               if k in c or k in ("command", "args", "lifecycle")}
              for c in pod[key]] if pod.get(key) else None for key in CONTAINER_LISTS}}}}
    keep["spec"]["template"]["spec"].update({k: pod.get(k, v) for k, v in POD_BEHAVIOUR.items()})
    if pod.get("serviceAccount") and not pod.get("serviceAccountName"):  # the old spelling the server mirrors
        keep["spec"]["template"]["spec"]["serviceAccountName"] = pod["serviceAccount"]
    labels = (template.get("metadata") or {}).get("labels")
    if labels:
        keep["spec"]["template"]["metadata"] = {"labels": dict(labels)}
    for change in changes:
        path = template_path(original.get("kind"), change["path"])
        if change.get("accept") or change.get("governed_by"):
            _drop(keep, path)
        if path[:3] == ["spec", "template", "spec"] and len(path) > 3 and path[3] in POD_BEHAVIOUR:
            # a pod field a fault changes is its check's to judge (undone by any part too); the DNS fields are one
            # setting, the resolver the kubelet writes from both, which the fault's check judges (pod_resolver)
            for field in DNS_FIELDS if path[3] in DNS_FIELDS else (path[3],):
                _drop(keep, path[:3] + [field])
        if path[:3] == ["spec", "template", "spec"] and len(path) == 4 and path[3] in CONTAINER_LISTS:
            _drop(keep, path)  # a fault that rewrites a whole list: its check judges the containers
    return keep


def _env(original: dict, changes: list) -> dict:
    """Each container's healthy `env` and `envFrom` (container name to them), with `open`: the variables a
    fault changes (its check judges them, and the variables whose value expands them); none for a container
    whose whole environment a fault changes."""
    original = as_template(original)
    out = {}
    for c in (((original.get("spec") or {}).get("template") or {}).get("spec") or {}).get("containers") or []:
        own, open_ = {k: c[k] for k in ("env", "envFrom") if c.get(k)}, set()
        for change in changes:
            path = template_path(original.get("kind"), change["path"])
            if path[:4] != ["spec", "template", "spec", "containers"] or \
                    (len(path) > 4 and isinstance(path[4], list) and str(path[4][1]) != str(c.get("name"))):
                continue
            rest = path[5:]
            if not rest or (rest[0] in ("env", "envFrom") and (len(rest) == 1 or not isinstance(rest[1], list))):
                own = None  # the whole list, the whole container, or its whole environment
            elif rest[0] == "env":
                open_.add(str(rest[1][1]))
            elif rest[0] == "envFrom":
                own = None
        if own is not None:  # a container with no environment of its own is judged too: nothing added
            out[str(c.get("name"))] = {**own, **({"open": sorted(open_)} if open_ else {})}
    return out


def _run_placement(original: dict, changes: list) -> dict | None:
    """The fields of a CronJob's healthy job template that say which nodes its runs' pods may run on
    (RUN_PLACEMENT); None where a fault changes one (its check judges them)."""
    original = as_template(original)
    pod = ((original.get("spec") or {}).get("template") or {}).get("spec") or {}
    for change in changes:
        path = template_path(original.get("kind"), change["path"])
        if path[:3] == ["spec", "template", "spec"] and (len(path) == 3 or path[3] in RUN_PLACEMENT):
            return None
    return {k: pod.get(k) for k in RUN_PLACEMENT}


def _mounts(original: dict, changes: list) -> dict:
    """The paths each container (and init container) of a workload's healthy manifest mounts a volume at
    (container name to the sorted paths), but for a container whose mounts or whose pod's volumes a fault
    changes (its check judges them): a volume mounted over another path hides what the image holds there."""
    original = as_template(original)
    pod = ((original.get("spec") or {}).get("template") or {}).get("spec") or {}
    paths = [template_path(original.get("kind"), change["path"]) for change in changes]
    if any(p[:4] == ["spec", "template", "spec", "volumes"] or p[:3] == ["spec", "template", "spec"] and len(p) == 3
           for p in paths):
        return {}
    out = {}
    for key in CONTAINER_LISTS:
        for c in pod.get(key) or []:
            if not isinstance(c, dict):
                continue
            touched = any(p[:4] == ["spec", "template", "spec", key] and (
                len(p) == 4 or not isinstance(p[4], list) or str(p[4][1]) == str(c.get("name"))) and
                (len(p) <= 5 or p[5] == "volumeMounts") for p in paths)
            if not touched:
                out[str(c.get("name"))] = sorted({str(m.get("mountPath")).rstrip("/") or "/"
                                                  for m in c.get("volumeMounts") or [] if isinstance(m, dict)})
    return out


def _security(original: dict, changes: list) -> dict:
    """The healthy securityContexts of a workload's pod (`pod`) and of each container and init container
    (`containers`, container name to its own, `{}` where it has none), as runtime.security_restricted reads
    them: empty where a fault changes a securityContext, the pod spec or a container list whole (its check
    judges them)."""
    original = as_template(original)
    pod = ((original.get("spec") or {}).get("template") or {}).get("spec") or {}
    paths = [template_path(original.get("kind"), change["path"]) for change in changes]
    if any(p[:3] == ["spec", "template", "spec"] and (len(p) <= 4 or "securityContext" in p) for p in paths):
        return {}
    containers = {str(c.get("name")): dict(c.get("securityContext") or {}) for key in CONTAINER_LISTS
                  for c in pod.get(key) or [] if isinstance(c, dict)}
    if not containers:
        return {}
    return {"pod": dict(pod.get("securityContext") or {}), "containers": containers}


# the probes on whose failures the kubelet restarts a container (a readiness probe only takes it out of service)
RESTARTING_PROBES = ("livenessProbe", "startupProbe")


def _probes(original: dict, changes: list) -> dict:
    """Each container's (and init container's) healthy liveness and startup probes (null: none) and the ports
    it serves (`serves`: the numbers it declares, and those its healthy probes check), container name to them,
    but for a container whose probes or ports a fault changes (its check judges them): a probe added or
    changed on a port outside them, or running a command that always fails, restarts the container once the
    kubelet acts on it, however late (runtime.probes_added)."""
    original = as_template(original)
    pod = ((original.get("spec") or {}).get("template") or {}).get("spec") or {}
    paths = [template_path(original.get("kind"), change["path"]) for change in changes]
    if any(p[:3] == ["spec", "template", "spec"] and len(p) == 3 for p in paths):
        return {}
    out = {}
    for key in CONTAINER_LISTS:
        for c in pod.get(key) or []:
            if not isinstance(c, dict):
                continue
            touched = any(p[:4] == ["spec", "template", "spec", key] and (
                len(p) == 4 or not isinstance(p[4], list) or str(p[4][1]) == str(c.get("name"))) and
                (len(p) <= 5 or p[5] in RESTARTING_PROBES + ("ports",)) for p in paths)
            if touched:
                continue
            named = {p["name"]: p["containerPort"] for p in c.get("ports") or []
                     if isinstance(p, dict) and p.get("name") and "containerPort" in p}
            serves = {p["containerPort"] for p in c.get("ports") or [] if isinstance(p, dict) and "containerPort" in p}
            for probe in PROBES:
                for handler in ("httpGet", "tcpSocket", "grpc"):
                    port = (((c.get(probe) or {}).get(handler) or {}) if isinstance(c.get(probe), dict) else {}).get("port")
                    port = named.get(port, port)
                    if isinstance(port, int):
                        serves.add(port)
            out[str(c.get("name"))] = {**{probe: c.get(probe) for probe in RESTARTING_PROBES}, "serves": sorted(serves)}
    return out


DNS_FIELDS = ("dnsPolicy", "dnsConfig")


def _drop(tree, path: list) -> None:
    """Remove the value at a change's path from `tree` (keys and [key, value] selectors), if it is there."""
    node = tree
    for index, seg in enumerate(path):
        last = index == len(path) - 1
        if isinstance(seg, list) and isinstance(node, list):
            found = [i for i, item in enumerate(node) if isinstance(item, dict) and nested(item, seg[0]) == seg[1]]
            if not found:
                return
            if last:
                del node[found[0]]
                return
            node = node[found[0]]
        elif isinstance(seg, str) and isinstance(node, dict) and seg in node:
            if last:
                del node[seg]
                return
            node = node[seg]
        else:
            return


def _relates(leaf: list[str], other: list[str]) -> bool:
    """Whether a statement's path (a predicate's, an optimum's: relative to the object, its spec, its pod
    spec or a container) names the changed field `leaf`, or a field inside it, or one that holds it."""
    n = len(other)
    if any(leaf[i:i + n] == other for i in range(len(leaf) - n + 1)):
        return True
    return any(other[:len(leaf) - i] == leaf[i:] for i in range(len(leaf)))


def _accepted_root(kinds: list, path: list) -> list | None:
    """The field a `changed` acceptance is about, for a change at `path`: the shortest start of the path its
    pattern matches (the whole probe for `.*\\.readinessProbe(\\..*)?`), so that "any value but the fault's"
    is judged on that field as a whole, never leaf by leaf."""
    for kind in kinds:
        for accept in kind.accept:
            if accept.op == "changed" and re.fullmatch(accept.path, dotted(path)):
                for end in range(1, len(path) + 1):
                    if isinstance(path[end - 1], str) and re.fullmatch(accept.path, dotted(path[:end])):
                        return path[:end]
    return None


def _by_accepted_field(changes: list, kinds: list, original: dict, faulty: dict) -> list:
    """The changes with every `changed` leaf under one accepted field folded into one change of that field:
    a probe whose port is corrected is another probe, though its period is still the fault's."""
    from ..runtime.state import at, MISSING

    out, seen = [], {}
    for change in changes:
        root = None if change.get("governed_by") or (change.get("accept") or {}).get("op") != "changed" \
            else _accepted_root(kinds, change["path"])
        if root is None or root == change["path"]:
            out.append(change)
            continue
        key = json.dumps(root)
        if key in seen:
            continue
        healthy, bad = at(original, root), at(faulty, root)
        folded = {"path": root, **({"absent": True} if healthy is MISSING else {"healthy": healthy}),
                  "faulty": None if bad is MISSING else bad, "governed_by": None, "accept": change["accept"]}
        seen[key] = folded
        out.append(folded)
    return out


def _port_identities(changes: list, original: dict) -> None:
    """A change inside a Service port selected by its name also carries the port's number and protocol
    (`"port_item"`): a Service recreated with `kubectl expose` (one unnamed port) or with the port renamed holds
    the same port, found by what it serves on, never by its name alone."""
    ports = (original.get("spec") or {}).get("ports") or []
    for change in changes:
        path = change["path"]
        if len(path) > 3 and path[:2] == ["spec", "ports"] and isinstance(path[2], list) and path[2][0] == "name":
            item = next((p for p in ports if isinstance(p, dict) and p.get("name") == path[2][1]), None)
            if item is not None and "port" in item:
                change["port_item"] = {"port": item["port"], "protocol": item.get("protocol") or "TCP"}


PROBES = ("livenessProbe", "readinessProbe", "startupProbe")


def _probe_serves(changes: list, original: dict) -> None:
    """A `changed` probe of a container also carries the ports that container serves when healthy (`"serves"`:
    the numbers it declares, and those its healthy probes check): a probe on a port outside them can never
    succeed, whatever else of it is changed and however late it starts."""
    for change in changes:
        path = change["path"]
        if (change.get("accept") or {}).get("op") != "changed" or len(path) < 2 or path[-1] not in PROBES \
                or not (isinstance(path[-2], list) and path[-2][0] == "name"):
            continue
        template = path[:path.index("containers")] if "containers" in path else None
        pod = nested(original, ".".join(str(s) for s in template)) if template else None
        container = next((c for c in (pod or {}).get("containers") or [] if isinstance(c, dict)
                          and c.get("name") == path[-2][1]), None)
        if container is None:
            continue
        named = {p["name"]: p["containerPort"] for p in container.get("ports") or []
                 if isinstance(p, dict) and p.get("name") and "containerPort" in p}
        serves = {p["containerPort"] for p in container.get("ports") or [] if isinstance(p, dict) and "containerPort" in p}
        for probe in PROBES:
            for handler in ("httpGet", "tcpSocket", "grpc"):
                port = ((container.get(probe) or {}).get(handler) or {}).get("port")
                port = named.get(port, port)
                if isinstance(port, int):
                    serves.add(port)
        if serves:
            change["serves"] = sorted(serves)


def _flag_root(path: list) -> list | None:
    """For a change inside a flagd flag (`{"parse": ...}`, `flags`, the flag's name, then its fields), the path
    of that flag; None for any other change."""
    for index, seg in enumerate(path):
        if isinstance(seg, dict) and "parse" in seg:
            rest = path[index + 1:]
            if len(rest) >= 2 and rest[0] == "flags" and isinstance(rest[1], str):
                return path[:index + 3]
            return None
    return None


def _by_flag(changes: list, original: dict, faulty: dict) -> list:
    """The changes inside one flagd flag folded into one change of the flag, compared by what it evaluates to
    (`"compare": "flagd"`): a flag whose variants were remapped, or whose targeting turns it on, keeps the
    fault though its `defaultVariant` reads healthy. A flag a statement of the scenario governs, or a fault
    kind's acceptance names, keeps its changes leaf by leaf."""
    from ..runtime.state import at, MISSING

    out, seen = [], set()
    for change in changes:
        root = _flag_root(change["path"])
        healthy = at(original, root) if root else MISSING
        if root is None or change.get("governed_by") or change.get("accept") or not isinstance(healthy, dict) \
                or not isinstance(healthy.get("variants"), dict):
            out.append(change)
            continue
        key = json.dumps(root)
        if key in seen:
            continue
        seen.add(key)
        bad = at(faulty, root)
        out.append({"path": root, "healthy": healthy, "faulty": None if bad is MISSING else bad,
                    "governed_by": None, "accept": None, "compare": "flagd"})
    return out


def _acceptance(kinds: list, leaf: str) -> dict | None:
    for kind in kinds:
        for accept in kind.accept:
            if re.fullmatch(accept.path, leaf):
                return {"op": accept.op, "value": accept.value}
    return None


def _changes(scenario: ir.Scenario) -> tuple[list, list, list]:
    """(fields the faults changed, objects they created that act on their own, objects they deleted)."""
    inject_apply, inject_delete, revert_apply, _ = fault_backend.plan(scenario)
    # an object's healthy form is what the revert applies (a fault knows what the installation sets, such as
    # a mesh's namespace label), else the topology's manifest
    originals = {_key(o): o for o in topology_manifests(scenario.topology, provided=True)}
    originals.update({_key(o): o for o in revert_apply})
    kinds_by_target: dict[tuple, list] = {}
    for injection in scenario.injections():
        for ref in (injection.target, *injection.side_objects):
            kinds_by_target.setdefault((ref.kind, ref.namespace, ref.name), []).append(injection.kind)
    every_kind = [i.kind for i in scenario.injections()]
    # a predicate's path as the changes name fields: its keys (indexes, selections and parse steps left out)
    governing = [(p.target, [s for s in p.path if isinstance(s, str)], f"mitigation.predicate.{i}") for i, p in
                 enumerate(scenario.mitigation.predicates if scenario.mitigation else []) if p.kind == "field"]
    # the predicate that decides a field is one that compares its value: an `exists` test holds on the faulty
    # value too, so it decides only where no comparison of the field is stated (sorted is stable)
    governing.sort(key=lambda g: scenario.mitigation.predicates[int(g[2].rsplit(".", 1)[1])].op
                   in ("exists", "not exists"))
    governing += [(o.target, o.path, f"finops.proximity.{i}") for i, o in enumerate(scenario.optimal)]
    fields, created = [], []
    for obj in inject_apply:
        original = originals.get(_key(obj))
        if original is None:
            if obj["kind"] not in INERT_KINDS or (obj.get("globalDefault") is True):
                # what it does, whatever it is called: a copy left under another name is judged by it
                created.append({**_manifest_ref(obj), "acting": acting(obj)})
            continue
        changes: list = []
        diff(_as_data(original), _as_data(obj), [], changes, parse_strings=obj["kind"] == "ConfigMap")
        kinds = kinds_by_target.get(_key(obj)) or every_kind
        for change in changes:
            leaf = [s for s in change["path"] if isinstance(s, str)]
            change["governed_by"] = next((check for target, path, check in governing
                                          if (target.kind, target.namespace, target.name) == _key(obj)
                                          and _relates(leaf, list(path))), None)
            change["accept"] = _acceptance(kinds, dotted(change["path"]))
        # a field any value of which is right (a limit raised with the requests it rose over: no spend) is no part
        # of the fault: nothing to mend, nothing the fault's effects hang on
        changes = [c for c in changes if (c.get("accept") or {}).get("op") != "any"]
        changes = _by_accepted_field(changes, kinds, _as_data(original), _as_data(obj))
        changes = _by_flag(changes, _as_data(original), _as_data(obj))
        if obj["kind"] == "Service":
            _port_identities(changes, original)
        _probe_serves(changes, original)
        if changes:
            entry = {"object": _manifest_ref(obj), "changes": changes}
            claims = _fault_claims(obj, inject_apply)
            if claims:
                entry["claims"] = claims
            readers = _config_readers(obj, {c["path"][1] for c in changes if len(c["path"]) > 1 and c["path"][0] == "data"},
                                      originals.values())
            if readers:
                entry["readers"] = readers
            if obj["kind"] in ("Role", "ClusterRole"):
                # who the role serves: a grant restored through another role must reach these subjects
                namespace = (obj.get("metadata") or {}).get("namespace")
                entry["subjects"] = [
                    {**s, **({"namespace": s.get("namespace") or b.namespace} if s.get("kind") == "ServiceAccount" else {})}
                    for b in scenario.topology.role_bindings if b.role_ref.get("kind") == obj["kind"]
                    and b.role_ref.get("name") == (obj.get("metadata") or {}).get("name")
                    and (obj["kind"] == "ClusterRole" or b.namespace == namespace) for s in b.subjects]
            fields.append(entry)
    deleted = []
    for ref in inject_delete:
        original = originals.get((ref.kind, ref.namespace, ref.name))
        if original is not None:
            owned = {k: v for k, v in _as_data(original).items() if k not in ("apiVersion", "kind", "status")}
            entry = {"object": _ref(ref), "owned": owned}
            if ref.kind == "ConfigMap":  # JSON or YAML held in a value: compared as data once recreated
                forms = {k: {"parse": p[1]} for k, v in sorted((owned.get("data") or {}).items())
                         if (p := _parsed(v)) is not None}
                if forms:
                    entry["forms"] = forms
            # back when what the workloads read of it is, under whatever name (runtime.restored_check)
            readers = _config_readers(original, set(owned.get("data") or {}), originals.values())
            if readers:
                entry["readers"] = readers
            deleted.append(entry)
    return fields, created, deleted


def _config_readers(obj: dict, keys, healthy) -> dict:
    """{key: [{workload, container, env | file}]}: where the healthy workloads of a ConfigMap's or a Secret's
    namespace read each of `keys` (runtime.config_reads), so the object is judged by what they read
    (runtime.read_texts), not by its name."""
    if obj["kind"] not in ("ConfigMap", "Secret"):
        return {}
    meta = obj.get("metadata") or {}
    out: dict = {}
    for key in sorted(keys):
        for workload in healthy:
            if workload.get("kind") not in POD_TEMPLATE_KINDS or \
                    (workload.get("metadata") or {}).get("namespace") != meta.get("namespace"):
                continue
            for read in config_reads((workload.get("spec") or {}).get("template"), obj["kind"], meta.get("name"), key):
                out.setdefault(key, []).append({"workload": _manifest_ref(workload), **read})
    return out


# ---- observed health -----------------------------------------------------------------------------------


def _health(scenario: ir.Scenario) -> tuple[list, list]:
    """The workloads that must be ready once the incident is over (those the faults act on and those the
    ground truth names), and the services the faults act on, whose endpoints and ports must work."""
    topology = scenario.topology
    refs = [r for i in scenario.injections() for r in (i.target, *i.side_objects, *([i.root] if i.root else []))]
    refs += list(scenario.root_causes) + [r for e in scenario.propagations for r in (e.source, e.target)]
    components = {}
    for ref in refs:
        component = itbench_backend._component(ref, scenario)
        if component is not None:
            components.setdefault(component, ref.namespace)
    workloads = []
    every = scenario.domain == "finops"  # spend cut by breaking another service is no saving
    for w in topology.workloads:
        if w.replicas > 0 and (every or w.name in components and components[w.name] in (None, w.namespace)):
            workloads.append({"kind": w.kind, "namespace": w.namespace, "name": w.name})
    services = []
    targets = {(r.namespace, r.name) for i in scenario.injections() for r in (i.target, *i.side_objects)
               if r.kind == "Service"}
    for s in topology.services:
        if (s.namespace, s.name) in targets and s.selector:
            services.append({"kind": "Service", "namespace": s.namespace, "name": s.name})
    return workloads, services


def _safeguards(scenario: ir.Scenario) -> tuple[list, list]:
    zero_ok = {(o.target.kind, o.target.namespace, o.target.name) for o in scenario.optimal
               if o.path and o.path[-1] == "replicas" and o.value == 0}
    # the capacity the application was deployed with: at least as many replicas as deployed (more serve too);
    # an autoscaler's workload down to the autoscaler's minimum, a FinOps optimum on the count down to one
    scaled = {(a.target.kind, a.target.namespace, a.target.name): max(1, a.min_replicas)
              for a in scenario.topology.autoscalers}
    optimised = {(o.target.kind, o.target.namespace, o.target.name) for o in scenario.optimal
                 if o.path and o.path[-1] == "replicas"}

    def least(w) -> int:
        key = (w.kind, w.namespace, w.name)
        if w.replicas == 0 or key in zero_ok:
            return 0
        if key in optimised:
            return 1
        return min(w.replicas, scaled.get(key, w.replicas))

    # a bare pod says so (`bare`): a Pod without it is a static pod's, which the kubelet keeps whatever happens
    workloads = [{"kind": w.kind, "namespace": w.namespace, "name": w.name, "min_replicas": least(w),
                  **({"bare": True} if w.bare else {})} for w in scenario.topology.workloads]
    # the pod templates of the healthy application: the ports its programs listen on are those their containers
    # declare (a container port is only a declaration: renumbering it moves no program, but a Service port
    # that targets it by name follows the new number)
    templates = [((o.get("metadata") or {}).get("namespace"), as_template(o)["spec"]["template"])
                 for o in topology_manifests(scenario.topology, provided=True)
                 if o.get("kind") in POD_TEMPLATE_KINDS + ("Pod",)]
    services = []
    for s in scenario.topology.services:
        ref = ir.ObjectRef("v1", "Service", s.namespace, s.name)
        selected = [t for t in templates if t[0] == s.namespace and s.selector
                    and labels_match((t[1].get("metadata") or {}).get("labels") or {}, dict(s.selector))]
        pods = [{"spec": t.get("spec") or {}} for _, t in selected]
        ports = []
        for p in s.ports:
            target = p.target_port if p.target_port is not None else p.port
            port = {"port": p.port, "protocol": p.protocol or "TCP", "targetPort": target}
            listened = port_number(target, container_ports(pods, p.protocol or "TCP")[0]) if pods else None
            if listened is not None:
                port["number"] = listened  # the port the program behind it listens on, where the target leads
            ports.append(port)
        entry = {"kind": "Service", "namespace": s.namespace, "name": s.name, "selector": dict(s.selector),
                 "component": itbench_backend._component(ref, scenario), "ports": ports}
        if s.type != "ClusterIP":
            entry["type"] = s.type  # how far it exposes its pods when healthy (`exposure_widened`)
        listening = sorted(container_ports(pods)[1]) if pods else []
        if listening:
            entry["listening"] = listening  # every port the programs of its pods listen on
        services.append(entry)
    return workloads, services


def _alert_scope(scenario: ir.Scenario, name: str) -> list[str]:
    """Where an alert counts: the namespaces `expect` names it in, else every namespace of the scenario."""
    named = {a.target.namespace for a in scenario.alerts if a.name == name and a.target.namespace}
    return sorted(named or {n.name for n in scenario.topology.namespaces})


def _predicate(scenario: ir.Scenario, p) -> dict:
    out = {"kind": p.kind, "target": _ref(p.target) if p.target else None, "state": p.state, "path": list(p.path),
           "op": p.op, "value": p.value, "alert": p.alert, "firing": p.firing}
    if p.kind == "field" and p.target is not None and p.target.kind in WORKLOAD_KINDS and p.path \
            and p.path[0] not in ("spec", "metadata", "status") and all(isinstance(s, str) for s in p.path):
        # `resources.limits.memory` on a Deployment: read off the container the fault changed (else the one
        # that holds the path), by its name, never off whichever container comes first (a sidecar)
        key = (p.target.kind, p.target.namespace, p.target.name)
        healthy = {_key(o): o for o in topology_manifests(scenario.topology, provided=True)}.get(key)
        faulty = {_key(o): o for o in fault_backend.plan(scenario)[0]}.get(key)
        path = identified_path(healthy, faulty if faulty is not None else healthy, list(p.path))
        if any(isinstance(s, list) for s in path):
            out["path"] = path
    if p.target is not None and p.target.kind in ("ConfigMap", "Secret") and "*" not in p.target.name:
        # a ConfigMap or Secret the workloads read is judged by what they read (runtime.predicate_check): it
        # exists where what they read of it is; a predicate on one of its keys holds on what they read there
        healthy = topology_manifests(scenario.topology, provided=True)
        obj = next((_as_data(o) for o in healthy if _key(o) == (p.target.kind, p.target.namespace, p.target.name)), None)
        if obj is not None and p.kind == "state" and p.state == "exists":
            readers = _config_readers(obj, set(obj.get("data") or {}), healthy)
            if readers:
                out["readers"] = readers
        elif obj is not None and p.kind == "field" and len(p.path) >= 2 and p.path[0] == "data" \
                and isinstance(p.path[1], str):
            readers = _config_readers(obj, {p.path[1]}, healthy).get(p.path[1])
            if readers:
                out["readers"] = readers
    if p.kind == "alert":
        out["namespaces"] = _alert_scope(scenario, p.alert)
    if p.value_type is not None:  # how the evaluator compares when not by plain meaning (a duration, exact text)
        out["type"] = p.value_type
    if p.kind == "scope":
        out.update(_scope(scenario, p))
    if p.kind == "access":  # the namespace of the request (None: cluster-wide)
        out["namespace"] = p.namespace
    return out


SCOPE_KINDS = {"pods": ["Pod"], "workloads": ["Deployment", "StatefulSet", "DaemonSet"],
               "deployments": ["Deployment"], "statefulsets": ["StatefulSet"]}


def _scope(scenario: ir.Scenario, p) -> dict:
    """`all KIND ... ready`: the kinds and namespaces it reads, and the topology's workloads it covers, which
    must be there and ready (so that deleting a broken workload, or the whole namespace, is no pass)."""
    namespaces = [p.namespace] if p.namespace else sorted({n.name for n in scenario.topology.namespaces}
                                                          | {w.namespace for w in scenario.topology.workloads})
    selector = p.selector or {}
    kinds = SCOPE_KINDS[p.scope]
    expected = [{"kind": w.kind, "namespace": w.namespace, "name": w.name} for w in scenario.topology.workloads
                if w.namespace in namespaces and w.replicas > 0 and w.kind in ("Deployment", "StatefulSet")
                and (p.scope in ("pods", "workloads") or w.kind in kinds)
                and all(w.labels.get(k) == v for k, v in selector.items())]
    return {"scope": p.scope, "kinds": kinds, "selector": selector, "namespaces": namespaces, "expected": expected}


def _faults(scenario: ir.Scenario, fields: list, created: list) -> list[dict]:
    """Each injection's parts: the fields it changed and the objects it created that act on their own, and
    whether undoing all of them, or any one, undoes it (FaultKind.undone_by)."""
    out = []
    for injection in scenario.injections():
        touched = {(r.kind, r.namespace, r.name) for r in (injection.target, *injection.side_objects)}
        made = {(r.kind, r.namespace, r.name) for r in injection.created}
        entry = {"fault": injection.fault, "undone_by": injection.kind.undone_by,
                 "fields": [f for f in fields if (f["object"]["kind"], f["object"]["namespace"],
                                                  f["object"]["name"]) in touched],
                 "created": [c for c in created if (c["kind"], c["namespace"], c["name"]) in made]}
        target = injection.target
        if injection.kind.harm_option and target.kind in WORKLOAD_KINDS:
            # its harm is an option of the container's program: judged on what the program gets
            entry["option"] = {"object": {"apiVersion": target.api_version, "kind": target.kind, "name": target.name,
                                          "namespace": target.namespace},
                               "container": injection.args.get("container"), "option": injection.kind.harm_option}
        if injection.kind.pod_effect(injection.args) in ("pending", "pending-new") \
                and target.kind in ("Deployment", "StatefulSet"):
            # its harm is pods left unscheduled: once they run where their placement lets them, it is undone
            # whatever part is left (the node uncordoned, the DaemonSet an anti-affinity shuns removed)
            entry["placed"] = [{"apiVersion": target.api_version, "kind": target.kind, "name": target.name,
                                "namespace": target.namespace}]
            if injection.cordoned:  # the nodes it cordons: only uncordoning them undoes the fault
                entry["cordoned"] = list(injection.cordoned)
        out.append(entry)
    return out


def _decided(scenario: ir.Scenario, fields: list, obj: dict, leaf: list[str]) -> bool:
    """Whether a field of a healthy object is the fault's or the scenario's to judge: the fault changed it (its
    `fields` check decides), or a statement of the scenario (a predicate, an optimum) names it."""
    key = _key(obj)
    for entry in fields:
        if (entry["object"]["kind"], entry["object"]["namespace"], entry["object"]["name"]) == key and any(
                _relates([s for s in c["path"] if isinstance(s, str)], leaf) for c in entry["changes"]):
            return True
    statements = [(p.target, [s for s in p.path if isinstance(s, str)]) for p in
                  (scenario.mitigation.predicates if scenario.mitigation else []) if p.kind == "field"]
    statements += [(o.target, list(o.path)) for o in scenario.optimal]
    return any(t is not None and (t.kind, t.namespace, t.name) == key and _relates(leaf, list(path))
               for t, path in statements)


def _collateral(scenario: ir.Scenario, fields: list) -> dict:
    """What the safeguards keep besides the workloads' replicas and the services: each autoscaler's capacity
    (its scale target, `minReplicas` and `maxReplicas`), and the flagd flags of each ConfigMap that holds
    them, every flag evaluating as it did when healthy; a field the fault changed or a statement of the
    scenario names is left to its own check."""
    from ..runtime.evaluator import flag_outcomes

    healthy = topology_manifests(scenario.topology, provided=True)
    autoscalers, flags = [], []
    for obj in healthy:
        spec = obj.get("spec") if isinstance(obj.get("spec"), dict) else {}
        if obj.get("kind") == "HorizontalPodAutoscaler":
            entry = {"object": _manifest_ref(obj), "target": {k: (spec.get("scaleTargetRef") or {}).get(k)
                                                             for k in ("kind", "name")}}
            for field, default in (("minReplicas", 1), ("maxReplicas", None)):
                if not _decided(scenario, fields, obj, ["spec", field]) and spec.get(field, default) is not None:
                    entry[field] = spec.get(field, default)
            if _decided(scenario, fields, obj, ["spec", "scaleTargetRef"]):
                del entry["target"]
            # the signals the healthy autoscaler scales on (none listed: the controller's default, CPU at 80%)
            entry["metrics"] = spec.get("metrics") or [{"type": "Resource", "resource": {
                "name": "cpu", "target": {"type": "Utilization", "averageUtilization": 80}}}]
            autoscalers.append(entry)
        elif obj.get("kind") == "ConfigMap":
            for key, text in sorted((obj.get("data") or {}).items()):
                parsed = _parsed(text)
                held = parsed[0].get("flags") if parsed and isinstance(parsed[0], dict) else None
                if not isinstance(held, dict):
                    continue
                kept = {name: flag for name, flag in sorted(held.items()) if flag_outcomes(flag) is not None
                        and not _decided(scenario, fields, obj, ["data", key, "flags", name])}
                if kept:
                    entry = {"object": _manifest_ref(obj), "key": key, "parse": parsed[1], "flags": kept}
                    # the flags flagd reads, from whichever ConfigMap it is pointed at (runtime.flags_kept)
                    readers = _config_readers(obj, {key}, healthy).get(key)
                    if readers:
                        entry["readers"] = readers
                    flags.append(entry)
    out = {}
    grants = _grants(scenario, healthy)
    if grants:
        out["grants"] = grants
    if autoscalers:
        out["autoscalers"] = autoscalers
    if flags:
        out["flags"] = flags
    references = _references(scenario, healthy)
    if references:
        out["references"] = references
    unread = _unread(scenario, fields, healthy, references)
    if unread:
        out["unread"] = unread
    touched = _fault_paths(scenario)
    configs = _configs_read(scenario, fields, healthy, touched)
    if configs:
        out["configs"] = configs
    floors = _limit_floors(scenario, healthy, touched)
    if floors:
        out["floors"] = floors
    storage = _persistent_mounts(healthy, touched)
    if storage:
        out["storage"] = storage
    policies = _own_policies(scenario, fields, healthy + decoys(scenario))
    if policies:
        out["policies"] = policies
    return out


# the objects of the topology that say what its namespaces admit: traffic (NetworkPolicy), new pods (ResourceQuota)
POLICY_KINDS = ("NetworkPolicy", "ResourceQuota", "AuthorizationPolicy")


def _own_policies(scenario: ir.Scenario, fields: list, healthy: list[dict]) -> list[dict]:
    """The NetworkPolicies, ResourceQuotas and Istio AuthorizationPolicies of the topology (its decoys too) that
    no fault acts on, each with
    its healthy spec: edited to admit less than it did (runtime.own_policies_kept), it harms the application a fix did not
    need to touch. Those of a provided namespace are the cluster's."""
    acted = {(r.kind, r.namespace, r.name) for i in scenario.injections()
             for r in (i.target, *i.side_objects, *i.created, *([i.root] if i.root else []))}
    acted |= {(e["object"]["kind"], e["object"]["namespace"], e["object"]["name"]) for e in fields}
    acted |= {(p.target.kind, p.target.namespace, p.target.name)
              for p in (scenario.mitigation.predicates if scenario.mitigation else []) if p.target is not None}
    provided = {n.name for n in scenario.topology.namespaces if n.provided}
    out = []
    for obj in healthy:
        key = _key(obj)
        if obj.get("kind") in POLICY_KINDS and key[1] not in provided and key not in acted:
            out.append({"object": _manifest_ref(obj), "spec": obj.get("spec") or {}})
    return out


def _fault_paths(scenario: ir.Scenario) -> dict:
    """{object key: [path, ...]}: every field any fault's injection changes on a healthy object, as `diff`
    finds them, those a fault kind accepts at any value too: what the fault touches is its checks' to judge."""
    inject_apply, _, revert_apply, _ = fault_backend.plan(scenario)
    originals = {_key(o): o for o in topology_manifests(scenario.topology, provided=True)}
    originals.update({_key(o): o for o in revert_apply})
    out: dict = {}
    for obj in inject_apply:
        original = originals.get(_key(obj))
        if original is None:
            continue
        changes: list = []
        diff(_as_data(original), _as_data(obj), [], changes)
        out.setdefault(_key(obj), []).extend(c["path"] for c in changes)
    return out


# the pod template fields through which a container reads a ConfigMap or a Secret, or mounts a volume
_READ_FIELDS = frozenset({"volumes", "volumeMounts", "env", "envFrom", "volumeClaimTemplates"} | set(CONTAINER_LISTS))


def _reads_touched(paths: list, container: str | None = None) -> bool:
    """Whether a fault's changes to a workload (`paths`) touch how its pods read their ConfigMaps, Secrets or
    volumes: a volume, a claim template, a whole container list, or (of `container`, of any container when
    None) its mounts or its environment."""
    for path in paths:
        keys = [s for s in path if isinstance(s, str)]
        named = [s[1] for s in path if isinstance(s, list) and len(s) == 2 and s[0] == "name"]
        if keys and keys[-1] in CONTAINER_LISTS and not named:
            return True  # a whole list of containers rewritten
        if "volumes" in keys or "volumeClaimTemplates" in keys:
            return True
        if _READ_FIELDS & set(keys) and (container is None or not named or container in named):
            return True
    return False


def _configs_read(scenario: ir.Scenario, fields: list, healthy: list[dict], touched: dict) -> list[dict]:
    """Each ConfigMap and Secret of the application that pod templates read, with each key they read: the
    digest of its healthy value by meaning (runtime.text_digest: JSON or YAML as data) and where they read it
    (`_config_readers`). A fix keeps what every reader reads (runtime.configs_kept): an edit of another
    workload's configuration, or a reader's volume or reference re-pointed at other data, is harm the fix did
    not need. Left to their own checks: what a fault deletes or creates, a key a fault changes or a statement
    of the scenario names, a flagd flag file (`flags`), and the reads of a workload whose reading a fault
    changes (its volumes, its mounts, its environment)."""
    from ..runtime.evaluator import text_digest
    from ..runtime.state import decoded_secret

    _, inject_delete, _, revert_delete = fault_backend.plan(scenario)
    gone = {(r.kind, r.namespace, r.name) for r in [*inject_delete, *revert_delete]}
    gone |= {(r.kind, r.namespace, r.name) for i in scenario.injections() for r in i.created}
    provided = {n.name for n in scenario.topology.namespaces if n.provided}
    out = []
    for obj in healthy:
        key = _key(obj)
        if obj.get("kind") not in ("ConfigMap", "Secret") or key[1] in provided or key in gone:
            continue
        data = (decoded_secret(obj) if obj["kind"] == "Secret" else obj).get("data") or {}
        changed = {p[1] for p in touched.get(key, []) if len(p) > 1 and p[0] in ("data", "stringData")
                   and isinstance(p[1], str)}
        if any(len(p) < 2 and p[:1] in (["data"], ["stringData"], []) for p in touched.get(key, [])):
            continue  # its whole data is the fault's
        keys = {}
        for name, text in sorted(data.items()):
            if not isinstance(text, str) or name in changed or _decided(scenario, fields, obj, ["data", name]):
                continue
            parsed = _parsed(text) if obj["kind"] == "ConfigMap" else None
            if parsed and isinstance(parsed[0], dict) and isinstance(parsed[0].get("flags"), dict):
                continue  # flagd's flags: judged by what they evaluate to (`flags`)
            reads = [r for r in _config_readers(obj, {name}, healthy).get(name, [])
                     if not _reads_touched(touched.get((r["workload"]["kind"], r["workload"]["namespace"],
                                                        r["workload"]["name"]), []), r["container"])]
            if reads:
                form = parsed[1] if parsed else None
                keys[name] = {"digest": text_digest(text, form), **({"form": {"parse": form}} if form else {}),
                             "readers": reads}  # `{"parse": "yaml"}`: the bundle then carries its YAML reader
        if keys:
            out.append({"object": _manifest_ref(obj), "keys": keys})
    return out


# The least of each resource a container of the application is judged to run with where its healthy
# manifest sets no limit and asks less: a limit added below it (or below what the container asks) starves it.
# Every resource the kubelet bounds: cpu (throttled), memory (OOM-killed), local ephemeral storage (the pod
# evicted once its writable layer and logs exceed the limit; the kubelet alone keeps up to 50Mi of a
# container's logs, containerLogMaxSize 10Mi x containerLogMaxFiles 5).
LIMIT_FLOORS = {"cpu": "100m", "memory": "64Mi", "ephemeral-storage": "256Mi"}
# the resources a pod-level limit (`spec.resources.limits`, PodLevelResources) may bound
POD_LEVEL_LIMITS = ("cpu", "memory")


def _limit_floors(scenario: ir.Scenario, healthy: list[dict], touched: dict) -> list[dict]:
    """Each workload of the topology with, for each resource of each container (init containers too), the
    least limit it runs with: its healthy limit, else (none: a limit added) its request, at least LIMIT_FLOORS;
    and for its pod the least pod-level limit (`spec.resources.limits`) it runs with: its healthy one, else each
    container's healthy limit or that floor, summed (runtime.floors_kept). A workload whose resources a fault
    changes, or a FinOps optimum sizes, is left to those checks."""
    from ..runtime.evaluator import number

    sized = {(o.target.kind, o.target.namespace, o.target.name) for o in scenario.optimal}
    out = []
    for obj in healthy:
        key = _key(obj)
        if obj.get("kind") not in PROGRAM_KINDS + ("Pod",) or key in sized:
            continue
        if obj["kind"] == "Pod" and not any(w.bare for w in scenario.topology.workloads
                                            if (w.kind, w.namespace, w.name) == key):
            continue  # a static pod's is the kubelet's
        paths = touched.get(key, [])
        if any("resources" in [s for s in p if isinstance(s, str)] for p in paths) or \
                any([s for s in p if isinstance(s, str)][-1:] == ["containers"] for p in paths if p):
            continue
        pod = (as_template(obj).get("spec") or {}).get("template", {}).get("spec") or {}
        containers, total = {}, {}
        for c in (pod.get("initContainers") or []) + (pod.get("containers") or []):
            if not isinstance(c, dict):
                continue
            res = c.get("resources") if isinstance(c.get("resources"), dict) else {}
            limits = res.get("limits") if isinstance(res.get("limits"), dict) else {}
            requests = res.get("requests") if isinstance(res.get("requests"), dict) else {}
            for resource, least in sorted(LIMIT_FLOORS.items()):
                if resource in limits:
                    figure = number(limits[resource])
                    if figure is not None:  # the healthy limit: a limit squeezed below it starves the container
                        containers.setdefault(str(c.get("name")), {})[resource] = limits[resource]
                    if c in (pod.get("initContainers") or []):
                        continue  # an init container is done before the others start: its limit is no share
                else:
                    asked = number(requests.get(resource)) if resource in requests else None
                    figure = max(asked or 0.0, number(least))
                    containers.setdefault(str(c.get("name")), {})[resource] = \
                        requests[resource] if asked is not None and asked >= number(least) else least
                    if c in (pod.get("initContainers") or []):
                        continue
                if figure is not None and resource in POD_LEVEL_LIMITS:
                    total[resource] = total.get(resource, 0.0) + figure
        own = ((pod.get("resources") or {}).get("limits") or {}) if isinstance(pod.get("resources"), dict) else {}
        floor = {r: own[r] if r in own else _quantity(r, v) for r, v in sorted(total.items())}
        if containers or floor:
            out.append({"object": _manifest_ref(obj), "containers": containers, "pod": floor})
    return out


def _quantity(resource: str, figure: float) -> str:
    """A figure of cores or bytes as a Kubernetes quantity: millicores, or bytes."""
    if resource == "cpu":
        return f"{round(figure * 1000)}m"
    figure = int(round(figure))
    return f"{figure // 2 ** 20}Mi" if figure % 2 ** 20 == 0 else str(figure)


def _persistent_mounts(healthy: list[dict], touched: dict) -> list[dict]:
    """Each workload whose healthy pods keep data on a PersistentVolumeClaim, with each such mount: the
    container, its path, and the claim (a claim template of a StatefulSet: `template`). A fix keeps the data
    there (runtime.storage_kept): the path mounted from the same claim, not from an `emptyDir`, a `hostPath`,
    an ephemeral volume or the container's own filesystem. A workload whose volumes or mounts a fault changes
    is left to its checks."""
    out = []
    for obj in healthy:
        if obj.get("kind") not in PROGRAM_KINDS + ("Pod",) or _reads_touched(touched.get(_key(obj), [])):
            continue
        mounts = []
        templated = as_template(obj)
        pod = ((templated.get("spec") or {}).get("template") or {}).get("spec") or {}
        for c in (pod.get("initContainers") or []) + (pod.get("containers") or []):
            for m in c.get("volumeMounts") or [] if isinstance(c, dict) else []:
                source = _claim_source(obj, pod, m.get("name")) if isinstance(m, dict) else None
                if source is not None and isinstance(m.get("mountPath"), str):
                    mounts.append({"container": c.get("name"), "path": m["mountPath"], **source})
        if mounts:
            out.append({"object": _manifest_ref(obj), "mounts": mounts})
    return out


def _claim_source(obj: dict, pod: dict, volume: str | None) -> dict | None:
    """The claim a pod's volume `volume` mounts: {"template": name} for a StatefulSet's claim template (the
    controller lays it over a pod volume of that name), {"claim": name} for a `persistentVolumeClaim` volume;
    None for any other source."""
    if obj.get("kind") == "StatefulSet" and any(
            isinstance(t, dict) and (t.get("metadata") or {}).get("name") == volume
            for t in (obj.get("spec") or {}).get("volumeClaimTemplates") or []):
        return {"template": volume}
    for v in pod.get("volumes") or []:
        if isinstance(v, dict) and v.get("name") == volume and isinstance(v.get("persistentVolumeClaim"), dict):
            return {"claim": v["persistentVolumeClaim"].get("claimName")}
    return None


def _unread(scenario: ir.Scenario, fields: list, healthy: list[dict], references: list[dict]) -> list[dict]:
    """The ConfigMaps, Secrets and ServiceAccounts of the application that no pod template reads, no fault acts
    on and no statement of the scenario names (a `noise` red herring, say): deleting or changing one is harm
    to the application a fix did not need (runtime.unread_kept). Each with the digest of its data."""
    from ..runtime.evaluator import content_digest
    from ..runtime.state import decoded_secret

    read = {(r["kind"], r["namespace"], r["name"]) for e in references for r in e["needs"]}
    acted = {(r.kind, r.namespace, r.name) for i in scenario.injections()
             for r in (i.target, *i.side_objects, *i.created, *([i.root] if i.root else []))}
    acted |= {(e["object"]["kind"], e["object"]["namespace"], e["object"]["name"]) for e in fields}
    acted |= {(p.target.kind, p.target.namespace, p.target.name)
              for p in (scenario.mitigation.predicates if scenario.mitigation else []) if p.target is not None}
    acted |= {(o.target.kind, o.target.namespace, o.target.name) for o in scenario.optimal}
    provided = {n.name for n in scenario.topology.namespaces if n.provided}
    out = []
    for obj in healthy:
        key = _key(obj)
        if obj.get("kind") not in ("ConfigMap", "Secret", "ServiceAccount") or key[1] in provided \
                or key in read or key in acted:
            continue
        entry = {"object": _manifest_ref(obj)}
        if obj["kind"] != "ServiceAccount":
            entry["data"] = content_digest(decoded_secret(obj) if obj["kind"] == "Secret" else obj)
        out.append(entry)
    return out


def _references(scenario: ir.Scenario, healthy: list[dict]) -> list[dict]:
    """Each workload of the topology with the objects of the healthy state its pod template needs
    (runtime.pod_references) that the fix keeps: what the faults delete is judged as restored, and an
    object the revert removes is none a fix must keep."""
    _, inject_delete, _, revert_delete = fault_backend.plan(scenario)
    removed = {(r.kind, r.namespace, r.name) for r in [*inject_delete, *revert_delete]}
    present = {_key(o) for o in healthy} - removed
    out = []
    for obj in healthy:
        if obj.get("kind") not in POD_TEMPLATE_KINDS:
            continue
        namespace = (obj.get("metadata") or {}).get("namespace")
        needs = [{"kind": kind, "namespace": namespace, "name": name} for kind, name in
                 sorted(pod_references((obj.get("spec") or {}).get("template"))) if (kind, namespace, name) in present]
        if needs:
            out.append({"workload": _manifest_ref(obj), "needs": needs})
    return out


RBAC_KINDS = ("Role", "ClusterRole", "RoleBinding", "ClusterRoleBinding")


def _grants(scenario: ir.Scenario, healthy: list[dict]) -> list[dict]:
    """Where a fault acts on RBAC, or the mitigation asks what a subject may do: each subject of the topology's
    bindings and of the access predicates, with what the healthy state grants it: each binding's scope (its
    namespace; None: cluster-wide), its role, and that role's rules (None: a role the cluster provides, which
    the topology does not hold). A fix grants no more than this (safeguards)."""
    predicates = [p for p in (scenario.mitigation.predicates if scenario.mitigation else []) if p.kind == "access"]
    rbac = any(r.kind in RBAC_KINDS for i in scenario.injections() for r in (i.target, *i.side_objects))
    if not predicates and not rbac:
        return []
    roles = {_key(o): o for o in healthy if o.get("kind") in ("Role", "ClusterRole")}
    subjects: dict[tuple, dict] = {}
    for p in predicates:
        t = p.target
        subjects.setdefault((t.kind, t.namespace, t.name), {"kind": t.kind, "name": t.name, "namespace": t.namespace})
    bindings = [o for o in healthy if o.get("kind") in ("RoleBinding", "ClusterRoleBinding")]
    for b in bindings:
        where = (b.get("metadata") or {}).get("namespace") if b["kind"] == "RoleBinding" else None
        for sub in b.get("subjects") or []:
            if sub.get("kind") in ("ServiceAccount", "User"):
                namespace = sub.get("namespace") or where if sub["kind"] == "ServiceAccount" else None
                subjects.setdefault((sub["kind"], namespace, sub.get("name")),
                                    {"kind": sub["kind"], "name": sub.get("name"), "namespace": namespace})
    from ..runtime.evaluator import binds, subject_user

    out = []
    for key in sorted(subjects, key=lambda k: tuple(str(x) for x in k)):
        subject = subjects[key]
        user, groups = subject_user(subject)
        grants = []
        for b in bindings:
            where = (b.get("metadata") or {}).get("namespace") if b["kind"] == "RoleBinding" else None
            if not binds(b, user, groups, where):
                continue
            ref = b.get("roleRef") or {}
            role = roles.get((ref.get("kind"), where if ref.get("kind") == "Role" else None, ref.get("name")))
            grants.append({"namespace": where, "role": {"kind": ref.get("kind"), "name": ref.get("name")},
                           "rules": None if role is None else list(role.get("rules") or [])})
        out.append({"subject": subject, "grants": grants})
    return out


def _mitigation(scenario: ir.Scenario) -> dict:
    fields, created, deleted = _changes(scenario)
    health, services = _health(scenario)
    declared = scenario.mitigation.predicates if scenario.mitigation else []
    predicates = [_predicate(scenario, p) for p in declared]
    waited = {p.alert for p in declared if p.kind == "alert" and p.firing is False}
    # the prompt says the incident is over when its alerts stop firing (a control's alerts are the false
    # alarm it poses: they may go on firing)
    expected = {a.name for a in scenario.alerts} if scenario.injections() else set()
    alerts = [{"alert": name, "namespaces": _alert_scope(scenario, name)} for name in sorted(expected - waited)]
    out = {"within_seconds": scenario.mitigation.within_seconds if scenario.mitigation else None,
           "predicates": predicates, "alerts": alerts, "ready": health, "programs": _programs(scenario, health, fields),
           "application": _programs(scenario, health, fields, others=True), "services": services, "faults": _faults(scenario, fields, created), "restored": deleted}
    if scenario.mitigation is not None and scenario.mitigation.only:
        # `mitigated when only`: the predicates, the alerts and readiness decide, as a peer's readiness oracle
        # does; the runtime does not grade the fault's changes undone, nor the workloads running what they ran
        # (the entries stay: they say how a state settles while the fault holds)
        out["only"] = True
    collateral = _collateral(scenario, fields)
    if collateral:  # absent where there is nothing more to keep: those bundles keep their bytes
        out["collateral"] = collateral
    routes = _routes(scenario)
    if routes:  # absent where the application has no Ingress: those bundles keep their bytes
        out["routes"] = routes
    return out


def _routes(scenario: ir.Scenario) -> list[dict]:
    """Each Ingress of the healthy application as it routes (`routes_problem` reads which requests reach which
    Service port from it): its class, rules, default backend and annotations."""
    _, _, revert_apply, _ = fault_backend.plan(scenario)
    originals = {_key(o): o for o in topology_manifests(scenario.topology, provided=True)}
    originals.update({_key(o): o for o in revert_apply})
    out = []
    for (kind, namespace, name), obj in sorted(originals.items(), key=lambda kv: tuple(str(x) for x in kv[0])):
        if kind != "Ingress":
            continue
        spec = obj.get("spec") or {}
        annotations = (obj.get("metadata") or {}).get("annotations") or {}
        healthy = {"spec": {k: spec[k] for k in ("ingressClassName", "rules", "defaultBackend") if k in spec}}
        if annotations:
            healthy["annotations"] = dict(annotations)
        out.append({"object": {"kind": kind, "namespace": namespace, "name": name}, "healthy": healthy})
    return out


# ---- the diagnosis ground truth -----------------------------------------------------------------------


def _groups(scenario: ir.Scenario) -> dict:
    truth = itbench_backend.groundtruth_v1(scenario)["spec"]
    refs: dict[str, ir.ObjectRef] = {}
    for ref in [*scenario.root_causes, *(e.source for e in scenario.propagations),
                *(e.target for e in scenario.propagations), *(a.target for a in scenario.alerts)]:
        refs.setdefault(itbench_backend.group_id(ref), ref)
    refs.update({g.id: g.target for g in scenario.ground_groups})  # groups named in `expect`
    groups = []
    for group in truth["groups"]:
        ref = refs[group["id"]]
        component = itbench_backend._component(ref, scenario) or f"{ref.kind}:{ref.name}"
        # a group stands for its object; a pod group for the pods of one workload (never by name pattern:
        # `frontend-*` does not name frontend-proxy's pods)
        owner = component if ref.kind == "Pod" else None
        groups.append({"id": group["id"], "kind": ref.kind, "namespace": ref.namespace,
                       "name": None if ref.kind == "Pod" else ref.name, "owner": owner,
                       "root_cause": bool(group.get("root_cause")), "component": component})
    edges = [list(e) for e in scenario.topology.edges]
    # nodes the topology's call graph does not hold: a chaos object touches its target, a namespace
    # holds its workloads
    for injection in scenario.injections():
        target = itbench_backend._component(injection.target, scenario)
        for ref in [injection.root, *injection.created]:
            if ref is not None and target is not None:
                node = itbench_backend._component(ref, scenario) or f"{ref.kind}:{ref.name}"
                if node != target:
                    edges.append([node, target])
    for hpa in scenario.topology.autoscalers:
        edges.append([f"HorizontalPodAutoscaler:{hpa.name}", hpa.target.name])
    for group in groups:
        if group["kind"] == "Namespace":
            name = group["component"].split(":", 1)[1]
            edges.extend([group["component"], w.name] for w in scenario.topology.workloads if w.namespace == name)
    propagations = [{"source": p["source"], "target": p["target"]} for p in truth["propagations"]]
    out = {"groups": groups, "aliases": truth["aliases"], "propagations": propagations,
           "graph": [list(e) for e in sorted({tuple(e) for e in edges})]}
    schedules = _schedules(scenario)
    if schedules:
        out["schedules"] = schedules
    faults = _fault_objects(scenario)
    if faults:
        out["faults"] = faults
    return out


def _fault_objects(scenario: ir.Scenario) -> list[dict]:
    """Each injected fault's objects: its target, and what it created or changed besides (a Schedule, an Istio
    AuthorizationPolicy, a ResourceQuota). Naming one names the fault: the root cause it stands for, or, for a
    fault no root cause stands for (a scenario's second fault), a right answer the truth does not require."""
    out = []
    for injection in scenario.injections():
        objects = []
        for ref in (injection.root, *injection.created, *injection.side_objects):
            if ref is not None and [ref.kind, ref.namespace, ref.name] not in objects:
                objects.append([ref.kind, ref.namespace, ref.name])
        objects += _changed_nodes(injection)
        target = injection.target
        out.append({"target": [target.kind, target.namespace, target.name], "objects": objects})
    return out


def _changed_nodes(injection: ir.Injection) -> list[list]:
    """The Nodes outside the topology a fault changes (the node `cordoned_node` cordons): what keeps its pods
    Pending, so naming one names the fault as naming what it created does."""
    cordons = getattr(injection.kind, "cordons", None)
    name = injection.args.get(cordons) if cordons else None
    return [["Node", None, str(name)]] if isinstance(name, str) and name else []


def _schedules(scenario: ir.Scenario) -> list[dict]:
    """The Chaos Mesh Schedules the faults create, each with the kinds of the experiments it spawns: the
    Schedule, the experiment the scenario names after it and the experiments the controller creates
    (`<schedule>-<5 random characters>`) are one fault to the diagnosis."""
    out = []
    for injection in scenario.injections():
        root = injection.root
        if root is None or root.kind != "Schedule":
            continue
        kinds = sorted({c.kind for c in injection.created if c.kind != "Schedule" and c.name == root.name
                        and c.namespace == root.namespace})
        if kinds:
            out.append({"namespace": root.namespace, "name": root.name, "kinds": kinds})
    return sorted(out, key=lambda s: (s["namespace"] or "", s["name"]))


def _objects(scenario: ir.Scenario) -> list[list]:
    """Every object an answer may name without a live state: the topology's objects, what the faults
    create or change outside it (a cordoned Node), and the objects the ground truth names (a logical service with no Service object)."""
    inject_apply = fault_backend.plan(scenario)[0]
    found = {_key(o) for o in topology_manifests(scenario.topology, provided=True)}
    found |= {_key(o) for o in decoys(scenario)}
    found |= {_key(o) for o in ciso_backend.k8s_objects(scenario)[0] + ciso_backend.k8s_objects(scenario)[1]}
    found |= {_key(o) for o in inject_apply}
    found |= {tuple(node) for i in scenario.injections() for node in _changed_nodes(i)}
    for ref in [*scenario.root_causes, *(e.source for e in scenario.propagations),
                *(e.target for e in scenario.propagations), *(a.target for a in scenario.alerts),
                *(g.target for g in scenario.ground_groups)]:
        if ref.kind != "Pod":
            found.add((ref.kind, ref.namespace, ref.name))
    return sorted([list(k) for k in found if k[0] and k[2]], key=lambda k: (k[0], k[1] or "", k[2]))


# ---- FinOps and CISO -------------------------------------------------------------------------------------


def _finops(scenario: ir.Scenario) -> dict:
    """What a FinOps answer must name (per injection: the objects it makes waste, any of which names it)
    and the optima the state is measured against."""
    findings = []
    for injection in scenario.injections():
        refs = [injection.target, *injection.side_objects, *([injection.root] if injection.root else [])]
        findings.append([_ref(r) for r in dict.fromkeys(refs)])
    inject_apply = fault_backend.plan(scenario)[0]
    healthy = {_key(o): o for o in topology_manifests(scenario.topology, provided=True)}
    faulty = {_key(o): o for o in inject_apply}
    optimal = []
    for o in scenario.optimal:
        key = (o.target.kind, o.target.namespace, o.target.name)
        path = identified_path(healthy.get(key), faulty.get(key), list(o.path))
        if path == list(o.path):  # a field the healthy manifest leaves out (requests defaulted): the faulty one's
            path = identified_path(faulty.get(key), faulty.get(key), list(o.path))
        optimal.append({"object": _ref(o.target), "path": path, "value": o.value})
    return {"findings": findings, **_finops_types(scenario), "threshold": PROXIMITY_THRESHOLD, "optimal": optimal,
            "spend": _spend(scenario, healthy)}


def _spend(scenario: ir.Scenario, healthy: dict) -> list[dict]:
    """Each workload of the topology with what it may cost: its replica floor (its autoscaler's
    minReplicas, else its replicas), its pods' requests and what one pod reserves, as the healthy manifests
    have them, and its selector (the pods of a copy under another name are the application's too)."""
    hpas = {(h.target.namespace, h.target.name): h for h in scenario.topology.autoscalers}
    out = []
    for w in scenario.topology.workloads:
        manifest = healthy.get((w.kind, w.namespace, w.name))
        if manifest is None or w.kind not in WORKLOAD_KINDS:
            continue
        hpa = hpas.get((w.namespace, w.name))
        entry = {"object": {"apiVersion": manifest.get("apiVersion"), "kind": w.kind, "namespace": w.namespace,
                            "name": w.name}, "replicas": hpa.min_replicas if hpa else w.replicas}
        if hpa is not None:
            entry["autoscaler"] = {"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
                                   "namespace": hpa.namespace, "name": hpa.name}
        entry["requests"] = pod_requests(manifest)
        entry["reserves"] = pod_reserves(manifest)
        if other_requests(manifest):  # GPUs, hugepages, local storage: held like CPU and memory (finops_spend)
            entry["others"] = other_requests(manifest)
        entry["selector"] = (manifest.get("spec") or {}).get("selector") or {}
        out.append(entry)
    return out


def _finops_types(scenario: ir.Scenario) -> dict:
    """The closed vocabulary of a FinOps answer's `type` (tasks.FINOPS_TYPES): `types` maps each spelling's
    `type_key` to its value, and `accept`, for each finding and each object of it (in `findings`' order), the
    values that say what that object wastes: the fault's (by its mechanism), and for an autoscaler's fault on
    the workload it scales also `idle_replicas` (the waste is the replicas the autoscaler holds up). A fault
    of no FinOps mechanism has None: its `type` is not graded."""
    types = {}
    for value, spellings in task_types.FINOPS_TYPES.items():
        for text in (value, *spellings):
            types.setdefault(type_key(text), value)
    accept = []
    for injection in scenario.injections():
        value = task_types.FINOPS_MECHANISMS.get(_fault_kinds().get(injection.fault, ""))
        refs = list(dict.fromkeys([injection.target, *injection.side_objects,
                                   *([injection.root] if injection.root else [])]))
        if value is None:
            accept.append(None)
            continue
        scaled = value == "misconfigured_hpa"
        accept.append([[value, "idle_replicas"] if scaled and r == injection.target else [value] for r in refs])
    return {"types": types, "accept": accept}


def _fault_kinds() -> dict:
    from ..faults import FAULTS

    return {name: kind.mechanism for name, kind in FAULTS.items()}


def identified_path(healthy: dict | None, faulty: dict | None, path: list) -> list:
    """An optimum's path with each list it crosses selected by identity (`spec.metrics` ->
    `spec.metrics[resource.name=memory]`, a container by its name), from the object's root: the figure is
    read off the item the fault changed (else the one item that holds the path), never off whichever
    item comes first (a cpu metric put before the faulty memory one). The path as written when the
    manifest does not hold it."""
    if not isinstance(healthy, dict):
        return path
    spec = healthy.get("spec") if isinstance(healthy.get("spec"), dict) else {}
    template = spec.get("template") if isinstance(spec.get("template"), dict) else None
    pod_prefix = ["spec", "template", "spec"] if template is not None else ["spec"]
    pod = (template.get("spec") or {}) if template is not None else spec
    bases = [([], healthy), (["spec"], spec), (pod_prefix, pod)]
    containers = [c for c in pod.get("containers") or [] if isinstance(c, dict) and c.get("name")]
    bases += [(pod_prefix + ["containers", ["name", c["name"]]], c) for c in containers]
    found = [(prefix, base) for prefix, base in bases if _selected(base, _at(faulty, prefix), path) is not None]
    changed = [(prefix, base) for prefix, base in found if _selected(base, _at(faulty, prefix), path, True) is not None]
    for prefix, base in changed or found:
        return prefix + _selected(base, _at(faulty, prefix), path, bool(changed))
    return path


def _at(obj, prefix: list):
    """The node at a prefix of keys and [key, value] selections; None when absent."""
    node = obj
    for seg in prefix:
        if isinstance(seg, list):
            items = [i for i in node if isinstance(i, dict) and i.get(seg[0]) == seg[1]] if isinstance(node, list) else []
            node = items[0] if len(items) == 1 else None
        else:
            node = node.get(seg) if isinstance(node, dict) else None
        if node is None:
            return None
    return node


def _selected(node, faulty, path: list, changed: bool = False) -> list | None:
    """`path` from `node` with a [key, value] selection before each step into a list of objects: the
    one item that holds the rest of the path (with `changed`, the one whose value there the fault
    changed). None when the path does not reach a value (or, with `changed`, no changed one)."""
    if not path:
        return [] if not changed or (faulty is not None and faulty != node) else None
    if isinstance(node, list) and isinstance(path[0], str) and not path[0].isdigit():
        key = identity_key(node, faulty if isinstance(faulty, list) else node)
        if key is None:
            return None
        picks = []
        for item in node:
            value = nested(item, key) if isinstance(item, dict) else None
            twin = None
            if isinstance(faulty, list):
                twin = next((i for i in faulty if isinstance(i, dict) and nested(i, key) == value), None)
            rest = _selected(item, twin, path, changed) if value is not None else None
            if rest is not None:
                picks.append([[key, value]] + rest)
        return picks[0] if len(picks) == 1 else None
    if isinstance(node, dict) and path[0] in node:
        rest = _selected(node[path[0]], faulty.get(path[0]) if isinstance(faulty, dict) else None, path[1:], changed)
        return None if rest is None else [path[0]] + rest
    return None


def _ciso(scenario: ir.Scenario) -> dict | None:
    compliance = scenario.compliance
    if compliance is None:
        return None
    inject_apply = fault_backend.plan(scenario)[0]
    pool = {}
    for obj in [*topology_manifests(scenario.topology), *ciso_backend.k8s_objects(scenario)[1], *inject_apply]:
        pool.setdefault(_key(obj), obj)

    def pick(refs: list[ir.ObjectRef]) -> list[dict]:
        # an object with no manifest (a host control's inventory group) is graded by its reference alone
        return [pool.get((r.kind, r.namespace, r.name)) or ir_manifest(r) for r in refs]

    contract = ciso_backend.artefact_contract(scenario)
    gaps, context = _read_gaps(scenario, pick(compliance.gaps))
    compliant = pick(compliance.compliant)
    control = ciso.CATALOGUE.get(compliance.control)
    if isinstance(control, ciso.HostControl):
        # a host control's groups carry the settings the control reads: the gap's violating, the baseline's not
        gaps = [{**g, "host": control.facts(True)} if g.get("kind") == ciso.HOST_KIND else g for g in gaps]
        compliant = [{**c, "host": control.facts(False)} if c.get("kind") == ciso.HOST_KIND else c for c in compliant]
    out = {"control": compliance.control, "task": compliance.task, "gaps": gaps,
           "compliant": compliant, "contract": contract}
    task_class = ciso.TASK_CLASSES.get(compliance.task)
    if task_class is not None and task_class.input:
        out["input"] = task_class.input
    namespaces = {o["metadata"]["name"]: dict(o["metadata"].get("labels") or {}) for o in pool.values()
                  if o.get("kind") == "Namespace" and (o.get("metadata") or {}).get("name")}
    if namespaces:
        out["namespaces"] = namespaces  # their labels, for a policy's namespaceSelector
    if isinstance(control, ciso.K8sControl) and control.unit != "object":
        out["unit"] = control.unit  # a control judged per namespace: each gap object in a world of its own
    if context:
        out["context"] = context
    if isinstance(control, ciso.K8sControl):
        # what Kubernetes itself keeps in the gap's namespaces must pass, as the cluster's reports show them: a
        # policy failing every object of another kind fails them (and, for a control judged per object, the
        # Namespace itself; a control on where objects live judges what its namespace holds by its own rule)
        places = sorted({(g.get("metadata") or {}).get("namespace") or "default" for g in gaps})
        kept = [o for ns in places for o in ciso.k8s.system_objects(ns)]
        if control.unit == "object":
            kept += [{"apiVersion": "v1", "kind": "Namespace",
                      "metadata": {"name": ns, "labels": {"kubernetes.io/metadata.name": ns,
                                                          **(namespaces.get(ns) or {})}}} for ns in places]
        declared = {_key(o) for o in gaps + compliant + context}
        system = [o for o in kept if _key(o) not in declared and not control.probe([o])]
        if system:
            out["system"] = system
    judge = control if isinstance(control, ciso.K8sControl) else _defined_by(compliance, gaps, compliant)
    if isinstance(control, ciso.HostControl):
        # the control's other violating settings on a gap host, its other compliant ones on a compliant host
        varied = {"gaps": [v for g in gaps for v in variation.host_variants(control, g, True)],
                  "compliant": [v for c in compliant for v in variation.host_variants(control, c, False)]}
        if varied["gaps"] or varied["compliant"]:
            out["variants"] = varied
    elif judge is None and getattr(compliance, "reads", None):
        # a control the scenario declares with no catalogue twin: each requirement its reads cover violated alone
        varied = [v for g in gaps for v in variation.isolated(tuple(compliance.reads), g, compliant)]
        if varied:
            out["variants"] = {"gaps": varied, "compliant": []}
    if judge is not None:
        control = judge
        # an update's existing rules judge the compliant objects too: their variants violate no other control
        graded = task_class is None or task_class.updates
        varied = {"gaps": [v for g in gaps for v in variation.variants(control, g, True)],
                  "compliant": [v for c in compliant for v in variation.variants(control, c, False, graded)]}
        if varied["gaps"] or varied["compliant"]:
            out["variants"] = varied  # graded beside the twins (ciso.general): what the control does not read varied
    out.update(_kept(scenario))
    return out


def _defined_by(compliance, gaps: list[dict], compliant: list[dict]):
    """The catalogue control that defines a control a scenario declares itself (`control "5.2.5" { reads =
    [...] }`): the one reading the same fields whose probe reads every gap object as violating and every
    compliant one as not; None when no catalogue control does (the scenario's variants then need one)."""
    reads = set(getattr(compliance, "reads", None) or [])
    for control in ciso.CATALOGUE.values():
        if not isinstance(control, ciso.K8sControl) or not reads or set(control.reads) != reads:
            continue
        try:
            if all(control.probe([g]) for g in gaps) and not any(control.probe([c]) for c in compliant):
                return control
        except (KeyError, TypeError, AttributeError, IndexError):
            continue
    return None


def _read_gaps(scenario: ir.Scenario, gaps: list[dict]) -> tuple[list[dict], list[dict]]:
    """(the gap objects graded, the others): of a catalogue control's violating objects, only those the
    control reads as violating on their own are gaps (the Role granting the risky access, the binding to
    cluster-admin, the Deployment passing a secret as a variable); the service account or Secret beside
    them is context, graded neither way (a right policy never flags it, and flagging it is no credit)."""
    control = ciso.CATALOGUE.get(scenario.compliance.control)
    if not isinstance(control, ciso.K8sControl) or not ciso_backend.k8s_objects(scenario)[0]:
        return gaps, []
    read = [o for o in gaps if control.probe([o])]
    if not read:
        return gaps, []
    return read, [o for o in gaps if o not in read]


def _kept(scenario: ir.Scenario) -> dict:
    """For an update: what the existing policies did, so that keeping a rule means keeping what it checks.
    `kept`: objects violating a catalogue control (rendered in the scenario's namespace under fresh names)
    that the policy to update flags before the agent touches it, which the updated policy must still flag
    (a rule gutted or narrowed under its old name flags them no longer); `others`: the other existing
    policies, which must be left unchanged."""
    from ..runtime import kyverno as matcher

    existing = ciso_backend.existing_policy(scenario)
    namespaces = [n.name for n in scenario.topology.namespaces]
    if not existing or not namespaces:
        return {}
    kept, seen = [], set()
    probes = [obj for control in ciso.CATALOGUE.values() if isinstance(control, ciso.K8sControl)
              for obj in control.build(namespaces[0], f"kept-{control.slug}", True) if control.probe([obj])]
    compliance = scenario.compliance
    pool = {_key(o): o for o in ciso_backend.k8s_objects(scenario)[0] + ciso_backend.k8s_objects(scenario)[1]}
    probes += [pool[(r.kind, r.namespace, r.name)] for r in compliance.gaps + compliance.compliant
               if (r.kind, r.namespace, r.name) in pool]
    for probe in probes:
        for obj in kept_variants(json.loads(json.dumps(probe))):
            key = _key(obj)
            if key in seen:
                continue
            try:
                failed = sorted({r.rule for r in matcher.evaluate_policy(existing[0], obj) if r.status == "fail"})
            except Exception:  # noqa: BLE001 - a rule the matcher cannot evaluate keeps no probe
                failed = []
            if failed:
                seen.add(key)
                kept.append({"object": obj, "rules": failed})
    out: dict = {}
    if kept:
        out["kept"] = kept
    if len(existing) > 1:
        out["others"] = existing[1:]
    return out


# what a kept rule must still flag beyond the probe itself: the probe with other names and labels, other
# images, another container name, in another namespace (each kept only where the existing policy flags it)
KEPT_IMAGES = ("registry.example.com/platform/service:2.4.1", "busybox:1.36")


def kept_variants(obj: dict) -> list[dict]:
    """The probe and its variants in what the control does not read, so that a kept rule narrowed to the
    probes' names, labels, images, container names, namespace, kind or hardened baseline values (a
    precondition, an exclude, a `kinds` list) flags them no longer. Each variant's name is a hash of the
    probe's and of the change: no variant shares a name."""
    import hashlib

    from ..runtime.evaluator import twins
    from ..runtime.state import templated_pod

    def named(variant: dict, change: str) -> dict:
        variant = json.loads(json.dumps(variant))
        meta = variant.setdefault("metadata", {})
        digest = hashlib.sha256(f"{meta.get('name')}\0{change}".encode()).hexdigest()
        meta["name"] = "k" + digest[:11]
        return variant

    def pods(variant: dict) -> list[dict]:
        spec = variant.get("spec") if isinstance(variant.get("spec"), dict) else {}
        pod = spec if variant.get("kind") == "Pod" else (spec.get("template") or {}).get("spec") \
            if templated_pod(variant) is not None else None
        return [pod] if isinstance(pod, dict) else []

    out = [obj, twins([obj], "kept")[0]]
    for index, image in enumerate(KEPT_IMAGES):
        variant = json.loads(json.dumps(obj))
        containers = [c for pod in pods(variant) for key in ("initContainers", "containers")
                      for c in pod.get(key) or [] if isinstance(c, dict)]
        if containers:
            for container in containers:
                container["image"] = image
            out.append(named(variant, f"image {index}"))
    variant = json.loads(json.dumps(obj))
    containers = [c for pod in pods(variant) for c in pod.get("containers") or [] if isinstance(c, dict)]
    if containers:
        for number, container in enumerate(containers):
            container["name"] = f"worker-{number}"
        out.append(named(variant, "container"))
    variant = json.loads(json.dumps(obj))
    numbers = [(path, value) for path, value in variation._security_leaves(variant) if value is not False]
    if numbers:  # every id and port of the baseline another (runAsGroup 101 -> 1101, containerPort 8080 -> 9080)
        for path, value in numbers:
            variation._set(variant, path, variation._other(value))
        out.append(named(variant, "numbers"))
    namespace = (obj.get("metadata") or {}).get("namespace")
    if namespace:
        variant = json.loads(json.dumps(obj))
        variant["metadata"]["namespace"] = f"{namespace}-other"[:63]
        out.append(named(variant, "namespace"))
    # the same pod template as every other kind a rule on pods reaches (a bare Pod, the controllers Kyverno's
    # autogen covers), and the hardened baseline's settings left out in turn and all at once: a rule narrowed to
    # Deployments, or by a precondition on a baseline value the probes share (a RuntimeDefault seccomp
    # profile), flags them no longer
    for kind in (*variation.POD_KINDS, "Pod"):
        if variation._as_kind(obj, kind) is not None:
            out.append(named(variation._as_kind(obj, kind), f"kind {kind}"))
    settings = list(variation._unread_settings(obj, ()))
    for path in settings + ([None] if len(settings) > 1 else []):
        variant = json.loads(json.dumps(obj))
        for each in ([path] if path is not None else settings[::-1]):
            variation._set(variant, each, ...)
        out.append(named(variant, "without " + (".".join(map(str, path)) if path is not None else "the baseline")))
    return out


def ir_manifest(ref: ir.ObjectRef) -> dict:
    meta = {"name": ref.name}
    if ref.namespace:
        meta["namespace"] = ref.namespace
    return {"apiVersion": ref.api_version, "kind": ref.kind, "metadata": meta}


def _fault_claims(obj: dict, inject_apply: list) -> dict:
    """{volume name: what the claim it mounts must be} for each volume of a pod template that the injection
    points at a PersistentVolumeClaim the injection itself creates: the claim's requested storage and access
    modes, and the storage class the fault gave it (a claim of that class is the fault's, which never binds).
    The fault is undone as well by the pods mounting a claim of that meaning that is bound."""
    spec = obj.get("spec") if isinstance(obj.get("spec"), dict) else {}
    template = (spec.get("template") or {}).get("spec") if isinstance(spec.get("template"), dict) else None
    if not isinstance(template, dict):
        return {}
    made = {(o.get("metadata") or {}).get("name"): o for o in inject_apply if o.get("kind") == "PersistentVolumeClaim"
            and (o.get("metadata") or {}).get("namespace") == (obj.get("metadata") or {}).get("namespace")}
    out = {}
    for volume in template.get("volumes") or []:
        claim = made.get(((volume or {}).get("persistentVolumeClaim") or {}).get("claimName"))
        if claim is None:
            continue
        cspec = claim.get("spec") or {}
        out[volume["name"]] = {"claim": claim["metadata"]["name"],
                               "storage": ((cspec.get("resources") or {}).get("requests") or {}).get("storage"),
                               "accessModes": list(cspec.get("accessModes") or []),
                               "faulty_class": cspec.get("storageClassName")}
    return dict(sorted(out.items()))


# ---- what a state must hold ------------------------------------------------------------------------------


def _requires(spec: dict) -> dict:
    """The (namespace, kind) pairs the mitigation reads, whether it reads alerts, and whether the policy
    task reads PolicyReports: a state that lacks any of them cannot be graded (exit 2)."""
    kinds: set[tuple[str, str]] = set()

    def need(ref: dict | None) -> None:
        if ref is not None and ref.get("kind"):
            kinds.add((ref.get("namespace") or "", ref["kind"]))

    mitigation = spec.get("mitigation")
    alerts = False
    if mitigation is not None:
        for p in mitigation["predicates"]:
            need(p["target"])
            alerts = alerts or p["kind"] == "alert"
            if p["kind"] == "access":  # the authorizer reads every binding and role that may grant the request
                kinds.update({("", "ClusterRoleBinding"), ("", "ClusterRole")})
                if p.get("namespace"):
                    kinds.update({(p["namespace"], "RoleBinding"), (p["namespace"], "Role")})
            for namespace in p.get("namespaces", []) if p["kind"] == "scope" else ():
                for kind in p["kinds"] + [e["kind"] for e in p["expected"] if e["namespace"] == namespace]:
                    kinds.add((namespace, kind))
        alerts = alerts or bool(mitigation["alerts"])
        for ref in mitigation["ready"] + mitigation["services"]:
            need(ref)
        # a copy of an object a fault created may be left wherever the application runs, as well as where it was
        spaces = {w["namespace"] for w in spec["workloads"] if w["namespace"]}
        for fault in mitigation["faults"]:
            for ref in fault["created"]:
                need(ref)
                same = [ref["kind"]]
                if str(ref.get("apiVersion", "")).startswith("chaos-mesh.org/"):
                    # a copy may be the experiment a Schedule spawns, or a Schedule spawning the experiment
                    same = sorted({ref["kind"], "Schedule", (ref.get("acting") or {}).get("type") or ref["kind"]})
                    kinds.update((ref.get("namespace") or "", kind) for kind in same)
                if ref.get("namespace"):
                    kinds.update((namespace, kind) for namespace in spaces for kind in same)
                if ref["kind"] == "ResourceQuota":  # the defaults LimitRanger gives the pods a quota counts
                    kinds.add((ref.get("namespace") or "", "LimitRange"))
            for entry in fault["fields"]:
                need(entry["object"])
                if entry.get("claims"):  # a claim the pods mount instead is judged as the state holds it
                    kinds.add((entry["object"].get("namespace") or "", "PersistentVolumeClaim"))
        for entry in mitigation["restored"] + mitigation.get("unchanged", []):
            need(entry["object"])
        for w in spec["workloads"]:
            need(w)
            kinds.add((w["namespace"] or "", "Pod"))  # readiness and relabelling are read from the pods
        # what the agent may add around the application and the safeguards judge (`widened_checks`): the
        # NetworkPolicies, LimitRanges, ResourceQuotas, autoscalers and Istio AuthorizationPolicies of its
        # namespaces, their Pod Security labels (a kind the cluster does not serve is captured empty)
        for namespace in spaces:
            kinds.update({(namespace, "NetworkPolicy"), (namespace, "LimitRange"), (namespace, "ResourceQuota"),
                          (namespace, "HorizontalPodAutoscaler"), (namespace, "AuthorizationPolicy")})
        if spaces:
            kinds.add(("", "Namespace"))
        for s in spec["services"]:
            need(s)
        for entry in mitigation.get("routes", []):  # which requests each Ingress routes where: all of the namespace's
            need(entry["object"])
        collateral = mitigation.get("collateral") or {}
        for entry in collateral.get("autoscalers", []) + collateral.get("flags", []):
            need(entry["object"])
        for entry in collateral.get("unread", []) + collateral.get("floors", []) + collateral.get("storage", []):
            need(entry["object"])
        for entry in collateral.get("configs", []):
            need(entry["object"])
            for reads in entry["keys"].values():
                for read in reads["readers"]:
                    need(read["workload"])
        for entry in collateral.get("policies", []):  # the topology's own, judged as edited (own_policies_kept)
            need(entry["object"])
        if any(dns_path(c["path"]) for f in mitigation["faults"] for e in f["fields"] for c in e["changes"]):
            # the resolver a pod gets is judged as the kubelet writes it (pod_resolver): ClusterFirst's nameserver
            # is the cluster DNS Service's IP (cluster_dns_ip), which only kube-system's Services tell
            kinds.add((CLUSTER_DNS[0], "Service"))
        for s in spec["services"]:  # every slice of endpoints kube-proxy merges for it (endpoints_kept)
            kinds.add((s["namespace"] or "", "EndpointSlice"))
            if s["selector"]:  # the CronJobs that will start pods it selects (stray_pods)
                kinds.add((s["namespace"] or "", "CronJob"))
        if spec["workloads"]:  # the nodes the pods may be placed on, as the agent left them (nodes_kept)
            kinds.add(("", "Node"))
        for entry in collateral.get("references", []):
            need(entry["workload"])
            for ref in entry["needs"]:
                need(ref)
        if collateral.get("grants"):  # what the subjects may do, read as the authorizer reads it, everywhere
            kinds.update({("", "ClusterRoleBinding"), ("", "ClusterRole")})
            for namespace in sorted({w["namespace"] for w in spec["workloads"] if w["namespace"]} |
                                    {e["subject"]["namespace"] for e in collateral["grants"] if e["subject"]["namespace"]} |
                                    {g["namespace"] for e in collateral["grants"] for g in e["grants"] if g["namespace"]}):
                kinds.update({(namespace, "RoleBinding"), (namespace, "Role")})
    for optimum in (spec.get("finops") or {}).get("optimal", []):
        need(optimum["object"])
    for entry in (spec.get("finops") or {}).get("spend", []):
        need(entry["object"])
        need(entry.get("autoscaler"))
        kinds.add((entry["object"].get("namespace") or "", "Pod"))  # what the application reserves: its pods too
    for obj in (spec.get("ciso") or {}).get("gaps", []) + (spec.get("ciso") or {}).get("compliant", []):
        # graded from PolicyReports, a workload is judged by its pods' results too (a policy on Pods that Kyverno
        # carries over to no controller): the capture holds the workload, its ReplicaSets and its pods
        if obj.get("kind") in ("Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Job", "CronJob"):
            namespace = (obj.get("metadata") or {}).get("namespace") or "default"
            kinds.update({(namespace, obj["kind"]), (namespace, "Pod"), (namespace, "ReplicaSet")})
            if obj["kind"] == "CronJob":
                kinds.add((namespace, "Job"))
    if ((spec.get("ciso") or {}).get("contract") or {}).get("artefact") == "kyverno":
        kinds.add(("", "ClusterPolicy"))  # the policy graded live: its contract is checked as the cluster holds it
    out = {"kinds": sorted([ns, kind] for ns, kind in kinds), "alerts": alerts,
           "policy_reports": spec["domain"] == "ciso"}
    probes = sorted({p["path"][0] for p in (mitigation or {}).get("predicates", []) if p["kind"] == "probe"})
    if probes:  # the probe results the mitigation reads: a state without them cannot be graded
        out["probes"] = probes
    return out


def tasks_of(scenario: ir.Scenario) -> list[str]:
    """The tasks a bundle poses: the scenario's `tasks`, else its domain's (SRE and FinOps agents diagnose,
    or name the waste, and mitigate; CISO agents write a policy)."""
    return task_types.posed(scenario)


def _unchanged(scenario: ir.Scenario) -> list[dict]:
    """A control's mitigation: every object the topology deploys, with the fields it owns (an autoscaler's
    workload leaves its replicas to the autoscaler)."""
    scaled = {(a.target.kind, a.target.namespace or a.namespace, a.target.name) for a in scenario.topology.autoscalers}
    out = []
    for obj in topology_manifests(scenario.topology):
        owned = {k: v for k, v in _as_data(obj).items() if k not in ("apiVersion", "kind", "status")}
        if _key(obj) in scaled and "replicas" in (owned.get("spec") or {}):
            owned["spec"] = {k: v for k, v in owned["spec"].items() if k != "replicas"}
        out.append({"object": _manifest_ref(obj), "owned": owned})
    return out


def _task_specs(scenario: ir.Scenario, spec: dict) -> None:
    """What the tasks a `tasks` statement poses grade against: the answer files, the detection's truth and
    window, the analysis labels, a control's untouched objects. Absent without the statement, so that
    bundles of scenarios without it keep their bytes (an SRE control without it poses tasks.CONTROL_DEFAULT
    task by task: it is graded as a control)."""
    if not task_types.declared(scenario):
        return
    posed = spec["tasks"]
    spec["answers"] = task_types.answer_files(posed, scenario.domain)
    if "detect" in posed:
        spec["detection"] = {"fault": not task_types.is_control(scenario), "window_seconds": task_types.window(scenario)}
    if "analyze" in posed and scenario.analysis is not None:
        spec["analysis"] = {"system_level": scenario.analysis.system_level, "fault_type": scenario.analysis.fault_type,
                            "vocabulary": {k: list(v) for k, v in task_types.VOCABULARY.items()}}
    if "mitigate" in posed and spec["mitigation"] is not None and task_types.is_control(scenario):
        spec["mitigation"]["unchanged"] = _unchanged(scenario)


def evaluator_spec(scenario: ir.Scenario) -> dict:
    """Everything the runtime grades against, as plain JSON data."""
    workloads, services = _safeguards(scenario)
    spec = {
        "version": SPEC_VERSION,
        "scenario": scenario.name,
        "domain": scenario.domain,
        "tasks": tasks_of(scenario),
        "objects": _objects(scenario),
        "workloads": workloads,
        "services": services,
        "diagnosis": _groups(scenario) if scenario.domain == "sre" else None,
        "mitigation": _mitigation(scenario) if scenario.domain != "ciso" else None,
        "finops": _finops(scenario) if scenario.domain == "finops" else None,
        "ciso": _ciso(scenario),
    }
    _task_specs(scenario, spec)
    if scenario.probes:  # what `itbench run` executes before grading; the state carries the results (`probes`)
        spec["probes"] = {p.name: {"namespace": p.target.namespace, "workload": {"kind": p.target.kind,
                                                                               "name": p.target.name},
                                   "container": p.container, "command": list(p.command)} for p in scenario.probes}
    spec["requires"] = _requires(spec)
    return spec


def evaluator_source(scenario: ir.Scenario) -> str:
    return source_for_spec(evaluator_spec(scenario))
