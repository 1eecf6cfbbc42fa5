"""Variants of a control's graded objects in what the control does not decide on.

`ciso.general` grades a policy on twins of the gap and compliant objects; twins differ in names and labels
only, so a policy keyed on anything else the scenario's objects happen to share (an image, a container's
name or position, an env-var name, the workload kind, the hardened baseline's exact values) would pass
them. `variants(control, obj, violating)` gives copies of `obj` that differ from it in such things:

- every container's image, every container's name, every env var's name and Secret key;
- the containers' positions: a compliant sidecar in front of them, or (for a gap the control still sees
  there) the containers moved to `initContainers` behind a compliant one, or to a bare Pod's
  `ephemeralContainers` (less what an ephemeral container may not hold: ports, probes, resources);
- a list's order: a compliant item before the violating one in each list the control reads (`BENIGN_ITEMS`);
- the workload kind: the same pod template as a Deployment, StatefulSet, DaemonSet, Job or bare Pod;
- the security fields: a `false` left implicit, a positive id or port another one (`101` -> `1101`); on a
  gap too, each one the control does not read (a `true` left implicit as well, and the pod's
  `automountServiceAccountToken`): a precondition on a baseline value the gap objects share (`runAsGroup:
  101`, `containerPort: 8080`, `automountServiceAccountToken: false`) no longer narrows a policy to them;
- for a gap, each field the control reads left out in turn (`runAsUser: 0` gone, `runAsNonRoot: false`
  kept), and a secret passed by `envFrom` instead of `valueFrom`;
- for a binding, a subject of another kind and (compliant) another read-only role;
- on the compliant side, the benign neighbours of what controls read: a plain env var, one from a ConfigMap,
  a ConfigMap's `envFrom`, an `emptyDir` and a ConfigMap volume mounted; and, where no other control is graded
  (`other_controls_graded` false: a new policy, not an update), the hardened baseline relaxed, each setting
  of a `securityContext` the control does not read left out in turn and all at once: a policy that flags the
  whole feature (any env var, any volume) or enforces the whole hardened baseline (Pod Security Restricted)
  rather than this control flags these compliant objects, and fails (each relaxed setting no catalogue
  control asks for: see below);
- the object as a cluster holds it (`_as_on_a_cluster`, gap and compliant): the ServiceAccount token's
  projected volume mounted in every container, resource requests and limits, a pod `fsGroup`, an init
  container and three containers, three replicas; on a gap, also with the hardened baseline relaxed. A policy
  narrowed by a precondition on their absence (no volume, no limits, at most two containers) misses the gap.

A variant is kept only where the control's definition (its `probe`) still reads it as it reads `obj`: a gap
variant still violates the control, a compliant variant does not and violates no catalogue control the
compliant object did not (a policy is never required to accept what breaks another CIS control: Kyverno's
`disallow-host-namespaces`, flagging hostPID, hostIPC and hostNetwork together, is a right policy of each).
Deterministic: each variant is named by a hash of `obj`'s name and the change."""

from __future__ import annotations

import copy
import hashlib
import json

from ..runtime.state import server_defaulted

POD_KINDS = ("Deployment", "StatefulSet", "DaemonSet", "Job")
OTHER_IMAGE = "registry.example.org/platform/web-server:2.4.1"
SIDECAR = {"name": "log-shipper", "image": "registry.example.org/platform/log-shipper:0.9.3",
           "securityContext": {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]},
                               "readOnlyRootFilesystem": True}}


def _pod(obj: dict) -> dict | None:
    spec = obj.get("spec") if isinstance(obj.get("spec"), dict) else None
    if spec is None:
        return None
    if obj.get("kind") == "Pod":
        return spec
    if obj.get("kind") in POD_KINDS:
        template = spec.get("template")
        if isinstance(template, dict) and isinstance(template.get("spec"), dict):
            return template["spec"]
    return None


def _containers(pod: dict) -> list[dict]:
    return [c for key in ("initContainers", "containers", "ephemeralContainers") for c in pod.get(key) or []
            if isinstance(c, dict)]


# what an ephemeral container may not hold (the API server refuses it: validateEphemeralContainers)
NOT_EPHEMERAL = ("ports", "livenessProbe", "readinessProbe", "startupProbe", "lifecycle", "resources", "resizePolicy",
                 "restartPolicy")


def _as_kind(obj: dict, kind: str) -> dict | None:
    """The same pod template as another workload kind (or a bare Pod)."""
    if obj.get("kind") not in POD_KINDS or kind == obj.get("kind"):
        return None
    spec = obj["spec"]
    template = copy.deepcopy(spec["template"])
    meta = copy.deepcopy(obj.get("metadata") or {})
    if kind == "Pod":
        meta["labels"] = dict((template.get("metadata") or {}).get("labels") or meta.get("labels") or {})
        pod = template["spec"]
        return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": pod}
    out = {"apiVersion": "batch/v1" if kind == "Job" else "apps/v1", "kind": kind, "metadata": meta,
           "spec": {"template": template}}
    if kind == "Job":
        template["spec"].setdefault("restartPolicy", "Never")
        out["spec"]["backoffLimit"] = 0
    else:
        out["spec"]["selector"] = copy.deepcopy(spec.get("selector") or {})
    if kind == "StatefulSet":
        out["spec"]["serviceName"] = meta.get("name", "workload")
        out["spec"]["replicas"] = 1
    return out


def _security_leaves(node, path=(), true=False):
    """(path, value) of the booleans and positive integers under a `securityContext` or a `ports` list (with
    `true`, the `true` booleans too)."""
    if isinstance(node, dict):
        for key, value in node.items():
            yield from _security_leaves(value, path + (key,), true)
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from _security_leaves(value, path + (index,), true)
    elif ("securityContext" in path or "ports" in path) and (
            node is False or (true and node is True) or (isinstance(node, int) and not isinstance(node, bool) and node > 0)):
        yield path, node
    elif true and path[-1:] == ("automountServiceAccountToken",) and isinstance(node, bool):
        yield path, node  # the pod's token mount, a baseline value too


def _unread(obj: dict, reads: tuple[str, ...]):
    """The security leaves of `obj` (`_security_leaves`, `true` ones too) its control does not read: a policy's
    precondition could key on them (`runAsGroup: 101`, `containerPort: 8080`) though the control does not."""
    from .k8s import _covered

    for path, value in _security_leaves(obj, true=True):
        if not _covered(tuple(str(p) for p in path), reads):
            yield path, value


def _set(obj, path, value) -> None:
    node = obj
    for key in path[:-1]:
        node = node[key]
    if value is ...:
        node.pop(path[-1])
    else:
        node[path[-1]] = value


def _other(value):
    """Another compliant-looking value: a `false` (or, on a gap, a `true`) left implicit, a positive id or port
    moved by 1000."""
    return ... if isinstance(value, bool) else value + 1000


# the settings Kubernetes lets a pod's securityContext and each container's hold, a container's own applying over
# the pod's (core/v1 PodSecurityContext and SecurityContext)
SHARED_SETTINGS = ("runAsUser", "runAsGroup", "runAsNonRoot", "seccompProfile", "seLinuxOptions", "appArmorProfile",
                   "windowsOptions")


def _placed(control) -> list[str]:
    """The shared settings (SHARED_SETTINGS) the control reads by name at both levels, the pod's and its
    containers': where it lets them live, a variant moves them."""
    from .k8s import _covered

    named = {r.rsplit(".", 1)[-1] for r in control.reads if ".securityContext." in r}
    return [s for s in SHARED_SETTINGS if s in named
            and _covered(("spec", "template", "spec", "securityContext", s), control.reads)
            and _covered(("spec", "template", "spec", "containers", "0", "securityContext", s), control.reads)]


def _compliant_pod_context(control) -> dict:
    """The pod-level securityContext of the control's compliant example."""
    build = getattr(control, "build", None)
    if build is None:
        return {}
    pods = [_pod(o) for o in build("example", "example", False)]
    return next(((p.get("securityContext") or {}) for p in pods if p is not None), {})


# what a compliant workload commonly holds beside what a control reads: settings that are no secret, scratch space
NEIGHBOUR_ENV = ({"name": "LOG_LEVEL", "value": "info"},
                 {"name": "APP_MODE", "valueFrom": {"configMapKeyRef": {"name": "app-settings", "key": "mode"}}})
NEIGHBOUR_ENV_FROM = {"configMapRef": {"name": "app-settings"}}
NEIGHBOUR_VOLUMES = (({"name": "scratch", "emptyDir": {}}, {"name": "scratch", "mountPath": "/tmp"}),
                     ({"name": "settings", "configMap": {"name": "app-settings"}},
                      {"name": "settings", "mountPath": "/etc/app", "readOnly": True}))


# what a pod on a real cluster carries beside what a control reads, which a manifest written for a test rarely
# holds: the ServiceAccount admission plugin's projected token volume (mounted in every container unless the pod
# opts out of the token), resource requests and limits, a pod-level `fsGroup`, an init container and more than
# one sidecar, several replicas. A gap variant holding all of them at once defeats a policy narrowed by a
# precondition on their absence (no volume, no limits, at most two containers), which would miss nearly every
# real pod
TOKEN_VOLUME = {"name": "kube-api-access-7x2kq", "projected": {"defaultMode": 420, "sources": [
    {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
    {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
    {"downwardAPI": {"items": [{"path": "namespace", "fieldRef": {"apiVersion": "v1",
                                                                  "fieldPath": "metadata.namespace"}}]}}]}}
TOKEN_MOUNT = {"name": "kube-api-access-7x2kq", "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount",
               "readOnly": True}
RESOURCES = {"requests": {"cpu": "100m", "memory": "128Mi"}, "limits": {"cpu": "500m", "memory": "256Mi"}}
# what an init container may not hold (the API server refuses probes and lifecycle hooks on one)
NOT_INIT = ("ports", "livenessProbe", "readinessProbe", "startupProbe", "lifecycle")


def _as_on_a_cluster(obj: dict, reads: tuple[str, ...], token: bool = False):
    """Give a workload what a pod on a real cluster carries (TOKEN_VOLUME, RESOURCES, ...), each only where the
    control reads none of it and the pod lacks it; `token`: the ServiceAccount token mounted even where the pod
    opts out of it (a gap: its `automountServiceAccountToken: false` then left out, where the control does not
    read it). False where nothing changed."""
    p = _pod(obj)
    if p is None or not p.get("containers"):
        return False
    def read(*path):  # the reads are spelled on a workload's pod template, a bare Pod's too
        return _covered_or_holds(("spec", "template", "spec") + path, reads)

    changed = False
    first = p["containers"][0]
    init = {k: copy.deepcopy(v) for k, v in first.items() if k not in NOT_INIT}
    init.update(name="init-setup", image=OTHER_IMAGE)
    p["initContainers"] = [init] + list(p.get("initContainers") or [])
    changed = True
    if len(p["containers"]) < 3:
        for name in ("metrics-exporter", "config-reloader")[:3 - len(p["containers"])]:
            extra = {k: copy.deepcopy(v) for k, v in first.items() if k != "ports"}
            extra.update(name=name, image=OTHER_IMAGE)
            p["containers"].append(extra)
        changed = True
    if token and p.get("automountServiceAccountToken") is False and not read("automountServiceAccountToken"):
        p.pop("automountServiceAccountToken")
    if not read("volumes") and not read("containers", "0", "volumeMounts"):
        token = p.get("automountServiceAccountToken") is not False
        volume = TOKEN_VOLUME if token else {"name": "kube-api-access-7x2kq", "emptyDir": {}}
        if not any(isinstance(v, dict) and v.get("name") == volume["name"] for v in p.get("volumes") or []):
            p["volumes"] = list(p.get("volumes") or []) + [copy.deepcopy(volume)]
            for c in _containers(p):
                c["volumeMounts"] = list(c.get("volumeMounts") or []) + [copy.deepcopy(
                    TOKEN_MOUNT if token else {k: v for k, v in TOKEN_MOUNT.items() if k != "readOnly"})]
            changed = True
    if not read("containers", "0", "resources"):
        for key in ("initContainers", "containers"):
            for c in p.get(key) or []:
                if isinstance(c, dict) and not c.get("resources"):
                    c["resources"] = copy.deepcopy(RESOURCES)
                    changed = True
    if not read("securityContext", "fsGroup") and "fsGroup" not in (p.get("securityContext") or {}):
        p.setdefault("securityContext", {})["fsGroup"] = 2000
        changed = True
    if obj.get("kind") in ("Deployment", "StatefulSet") and (obj["spec"].get("replicas") or 1) < 3:
        obj["spec"]["replicas"] = 3
        changed = True
    return changed


def _unread_settings(node, reads: tuple[str, ...], path=()):
    """Paths of the settings of every `securityContext` in `node` that the control does not read and that hold
    no field it reads (`capabilities`, `seccompProfile`, `allowPrivilegeEscalation` for a control on
    `privileged`)."""
    if isinstance(node, dict):
        for key, value in node.items():
            here = path + (key,)
            if key == "securityContext" and isinstance(value, dict):
                for setting in value:
                    spelled = tuple(str(p) for p in here + (setting,))
                    if not _covered_or_holds(spelled, reads):
                        yield here + (setting,)
            else:
                yield from _unread_settings(value, reads, here)
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from _unread_settings(value, reads, path + (index,))


def _covered_or_holds(path: tuple, reads: tuple[str, ...]) -> bool:
    from .k8s import _covered

    return _covered(path, reads) or any(
        len(read.split(".")) > len(path) and all(p == "*" or p == q for p, q in zip(read.split("."), path))
        for read in reads)


def _read_leaves(obj: dict, reads: tuple[str, ...]):
    from .k8s import _covered, _leaves

    for path, value in _leaves(obj):
        if _covered(path, reads) and not isinstance(value, (dict, list)):
            yield tuple(int(p) if p.isdigit() else p for p in path), value


# other values of a field that violate what the field is about, whatever the gap holds there (keyed by the field's
# last keys, list indexes left out): every added capability, every host path, every host port, every verb and
# resource of an RBAC rule a wildcard. A gap variant holds one in place of the gap's own; the control's probe
# keeps those that still violate it (`NET_ADMIN` in place of `NET_RAW` does not violate 5.2.8 where ALL is dropped)
VIOLATING_VALUES: dict[tuple[str, ...], tuple] = {
    ("capabilities", "add"): ("NET_ADMIN", "SYS_PTRACE", "ALL"),
    ("hostPath", "path"): ("/", "/etc", "/var/run/docker.sock"),
    ("ports", "hostPort"): (443, 30080),
    ("rules", "verbs"): ("*",),
    ("rules", "resources"): ("*",),
}


# a compliant item of each list whose items a control reads (keyed like VIOLATING_VALUES): a gap variant puts one
# before the list's first item, so the violating item is no longer the first (a policy reading `rules[0]`,
# `volumes[0]`, `env[0]`, `ports[0]` or `add[0]` alone, or comparing a list with `["*"]`, misses it); the control's
# probe keeps the variant only where it still violates
BENIGN_ITEMS: dict[tuple[str, ...], object] = {
    ("rules",): {"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get"]},
    ("rules", "apiGroups"): "",
    ("rules", "resources"): "configmaps",
    ("rules", "verbs"): "get",
    ("subjects",): {"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "team-operator"},
    ("volumes",): {"name": "scratch", "emptyDir": {}},
    ("volumeMounts",): {"name": "scratch", "mountPath": "/tmp"},
    ("env",): {"name": "LOG_LEVEL", "value": "info"},
    ("envFrom",): {"configMapRef": {"name": "app-settings"}},
    ("ports",): {"containerPort": 9091},
    ("capabilities", "add"): "CHOWN",
}


def _benign_first(obj: dict, reads: tuple[str, ...]) -> bool:
    """Put a compliant item (BENIGN_ITEMS) first in each list holding a field the control reads; False where
    none changed."""
    lists = {path[:i] for path, _ in _read_leaves(obj, reads) for i, p in enumerate(path) if isinstance(p, int)}
    changed = False
    for path in sorted(lists, key=len, reverse=True):  # the inner lists first: the outer indexes stay valid
        keys = tuple(p for p in path if isinstance(p, str))
        item = next((v for suffix, v in BENIGN_ITEMS.items() if keys[-len(suffix):] == suffix), None)
        node = obj
        for key in path:
            node = node[key]
        if item is None or not isinstance(node, list) or item in node:
            continue
        if isinstance(item, dict) and "name" in item and any(
                isinstance(i, dict) and i.get("name") == item["name"] for i in node):
            continue  # a name the list already holds (two volumes of one name are refused)
        node.insert(0, copy.deepcopy(item))
        changed = True
    return changed


def _cluster_role(obj: dict) -> bool:
    """A Role as the ClusterRole of the same rules (cluster-scoped); False for any other kind."""
    if obj.get("kind") != "Role":
        return False
    obj["kind"] = "ClusterRole"
    obj["metadata"].pop("namespace", None)
    return True


def _other_violating(path: tuple, value) -> tuple:
    keys = tuple(p for p in path if isinstance(p, str))
    return next((tuple(v for v in values if v != value) for suffix, values in VIOLATING_VALUES.items()
                 if keys[-len(suffix):] == suffix), ())


def _with_guards(control, obj: dict):
    """Add to `obj` (a gap) each field the control reads that the control's compliant example holds and `obj`
    lacks (the pod spec's, for a workload of any kind); False where there is none."""
    build = getattr(control, "build", None)
    if build is None:
        return False
    good = next((o for o in build("example", "example", False)
                 if (_pod(o) is not None and _pod(obj) is not None) or o.get("kind") == obj.get("kind")), None)
    if good is None:
        return False
    if _pod(obj) is not None and _pod(good) is not None:
        mine, theirs, at = _pod(obj), _pod(good), ("spec", "template", "spec")
    else:
        mine, theirs, at = obj, good, ()
    return _merge(mine, theirs, at, control.reads) or False


def _merge(mine, theirs, path: tuple, reads: tuple[str, ...]) -> bool:
    from .k8s import _covered

    changed = False
    if isinstance(mine, dict) and isinstance(theirs, dict):
        for key, value in theirs.items():
            here = path + (key,)
            if key not in mine:
                if _covered(here, reads):
                    mine[key] = copy.deepcopy(value)
                    changed = True
            elif _covered_or_holds(here, reads):
                changed = _merge(mine[key], value, here, reads) or changed
    elif isinstance(mine, list) and isinstance(theirs, list):
        for index, (a, b) in enumerate(zip(mine, theirs)):
            changed = _merge(a, b, path + (str(index),), reads) or changed
    return changed


def candidates(control, obj: dict, violating: bool, relax: bool = False) -> list[tuple[str, dict]]:
    """(change, copy) pairs before the control's probe judges them; `relax`: the compliant side's hardened
    baseline relaxed too."""
    out = []

    def variant(change, edit):
        copy_ = copy.deepcopy(obj)
        try:
            if edit(copy_) is False:
                return
        except (KeyError, IndexError, TypeError, AttributeError):
            return
        out.append((change, copy_))

    pod = _pod(obj)
    if pod is not None:
        def images(o):
            for c in _containers(_pod(o)):
                c["image"] = OTHER_IMAGE

        def names(o):
            for n, c in enumerate(_containers(_pod(o))):
                c["name"] = f"worker-{n}"

        def sidecar(o):
            p = _pod(o)
            p["containers"] = [copy.deepcopy(SIDECAR)] + list(p.get("containers") or [])

        def init(o):
            p = _pod(o)
            if not p.get("containers"):
                return False
            p["initContainers"] = list(p.get("initContainers") or []) + p["containers"]
            p["containers"] = [copy.deepcopy(SIDECAR)]

        def ephemeral(o):
            # a bare Pod (only a Pod holds ephemeral containers) running a compliant container, the gap's
            # containers added as ephemeral ones (`kubectl debug --profile=sysadmin` adds a privileged one)
            if o.get("kind") != "Pod":
                if _as_kind(o, "Pod") is None:
                    return False
                o.update(_as_kind(o, "Pod"))
            p = _pod(o)
            if not p.get("containers"):
                return False
            p["ephemeralContainers"] = [{k: v for k, v in c.items() if k not in NOT_EPHEMERAL} for c in p["containers"]]
            p["containers"] = [copy.deepcopy(SIDECAR)]
            bare = copy.deepcopy(o)
            bare["spec"].pop("ephemeralContainers")
            if control.probe([bare]):
                return False  # the pod violates without them: the variant would be one more bare Pod

        def env_names(o):
            changed = False
            for c in _containers(_pod(o)):
                for n, e in enumerate(c.get("env") or []):
                    if isinstance(e, dict):
                        e["name"] = f"SETTING_{n}"
                        ref = (e.get("valueFrom") or {}).get("secretKeyRef")
                        if isinstance(ref, dict) and "key" in ref:
                            ref["key"] = f"item-{n}"
                        changed = True
            return changed

        def env_from(o):
            changed = False
            for c in _containers(_pod(o)):
                refs = [(e.get("valueFrom") or {}).get("secretKeyRef") for e in c.get("env") or []
                        if isinstance(e, dict)]
                refs = [r for r in refs if isinstance(r, dict) and r.get("name")]
                if refs:
                    c.pop("env")
                    c["envFrom"] = [{"secretRef": {"name": refs[0]["name"]}}]
                    changed = True
            return changed

        def neighbour_env(o):
            for c in _pod(o).get("containers") or []:
                c["env"] = list(c.get("env") or []) + copy.deepcopy(list(NEIGHBOUR_ENV))

        def neighbour_env_from(o):
            for c in _pod(o).get("containers") or []:
                c["envFrom"] = list(c.get("envFrom") or []) + [copy.deepcopy(NEIGHBOUR_ENV_FROM)]

        def neighbour_volumes(o):
            p = _pod(o)
            if not p.get("containers"):
                return False
            p["volumes"] = list(p.get("volumes") or []) + [copy.deepcopy(v) for v, _ in NEIGHBOUR_VOLUMES]
            first = p["containers"][0]
            first["volumeMounts"] = list(first.get("volumeMounts") or []) + [copy.deepcopy(m) for _, m in NEIGHBOUR_VOLUMES]

        # where the setting lives: Kubernetes reads a container's own over the pod's, so a policy reading one
        # level misses a root container under a non-root pod, or flags containers that each set it
        shared = _placed(control)
        spelled = dict(getattr(control, "spelled", ()))

        def in_containers(o):
            p = _pod(o)
            psc = p.get("securityContext") or {}
            moved = {k: psc.pop(k) for k in shared if k in psc}
            if not moved or not p.get("containers"):
                return False
            for c in _containers(p):
                for k, v in moved.items():
                    c.setdefault("securityContext", {}).setdefault(k, copy.deepcopy(v))

        def over_pod(o):
            p, good = _pod(o), _compliant_pod_context(control)
            psc = p.setdefault("securityContext", {})
            changed = False
            for k in shared:
                bad = psc.get(k, spelled.get(k, ...))
                if bad is ... or k not in good or not p.get("containers"):
                    continue
                psc[k] = copy.deepcopy(good[k])
                for c in p["containers"]:
                    c.setdefault("securityContext", {})[k] = copy.deepcopy(bad)
                changed = True
            return changed

        def spelled_out(o):
            psc = _pod(o).setdefault("securityContext", {})
            missing = {k: v for k, v in spelled.items() if k in shared and k not in psc}
            psc.update(copy.deepcopy(missing))
            return bool(missing)

        variant("in the containers", in_containers)
        if violating:
            variant("a container over the pod", over_pod)
            variant("spelled out", spelled_out)
        else:
            for k in shared:
                if k in (pod.get("securityContext") or {}):
                    variant(f"pod without {k}", lambda o, k=k: (_pod(o)["securityContext"].pop(k), None)[1])
        if not violating:
            variant("plain and ConfigMap env", neighbour_env)
            variant("ConfigMap envFrom", neighbour_env_from)
            variant("scratch and ConfigMap volumes", neighbour_volumes)
        variant("image", images)
        variant("container names", names)
        variant("env names", env_names)
        variant("sidecar first", sidecar)
        if violating:
            variant("init containers", init)
            variant("ephemeral containers", ephemeral)
            variant("envFrom", env_from)
        for kind in (*POD_KINDS, "Pod"):
            if kind != obj.get("kind"):
                variant(f"kind {kind}", lambda o, k=kind: o.update(_as_kind(o, k) or {}) if _as_kind(o, k) else False)
        variant("kind Pod, sidecar first",
                lambda o: (o.update(_as_kind(o, "Pod")), sidecar(o)) if _as_kind(o, "Pod") else False)
    if violating:
        for path, value in list(_read_leaves(obj, control.reads)):
            variant(f"without {'.'.join(map(str, path))}", lambda o, p=path: _set(o, p, ...))
            # the violating value itself varied: a policy keyed on the one literal the gap holds (`SYS_ADMIN`,
            # hostPath `/var/log`) misses the others
            for other in _other_violating(path, value):
                variant(f"{'.'.join(map(str, path))} {other}", lambda o, p=path, v=other: _set(o, p, v))
        # the compliant example's guards beside the violation (`drop: [ALL]` beside `add: [NET_RAW]`, which the
        # runtime applies after the drop): a policy that reads the guard alone misses it
        variant("with the compliant guards", lambda o: _with_guards(control, o))
        # the violating item behind a compliant one in each list it sits in (alone and beside the guards)
        variant("benign items first", lambda o: _benign_first(o, control.reads))
        variant("with the compliant guards, benign items first",
                lambda o: _with_guards(control, o) is not False and _benign_first(o, control.reads))
        # the gap as a cluster holds it (a token volume, limits, an fsGroup, init and extra containers, replicas),
        # and with its hardened baseline relaxed besides: a policy judging only bare, hardened pods misses them
        variant("as a cluster holds it", lambda o: _as_on_a_cluster(o, control.reads, token=True))
        settings = list(_unread_settings(obj, control.reads))
        if settings:
            variant("as a cluster holds it, the hardened baseline relaxed", lambda o: (
                [_set(o, p, ...) for p in settings[::-1]], _as_on_a_cluster(o, control.reads, token=True))[1])
        # the rules of a Role as a ClusterRole's: the control is about both
        variant("kind ClusterRole", _cluster_role)
        variant("kind ClusterRole, benign items first",
                lambda o: _cluster_role(o) and _benign_first(o, control.reads))
        # what the control does not read varies on a gap too: a policy narrowed by a precondition on a baseline
        # value the gap objects happen to share (their group id, their port) misses these
        unread = list(_unread(obj, control.reads))
        for path, value in unread:
            variant(f"other {'.'.join(map(str, path))}", lambda o, p=path, v=value: _set(o, p, _other(v)))
        if len(unread) > 1:
            variant("other unread values", lambda o: [_set(o, p, _other(v)) for p, v in unread[::-1]] and None)
    else:
        for path, value in list(_read_leaves(obj, control.reads)):
            if value is False:  # `hostNetwork: false` left implicit, as most manifests leave it
                variant(f"implicit {'.'.join(map(str, path))}", lambda o, p=path: _set(o, p, ...))
        variant("as a cluster holds it", lambda o: _as_on_a_cluster(o, control.reads))
        leaves = list(_security_leaves(obj))
        for path, value in leaves:
            variant(f"other {'.'.join(map(str, path))}", lambda o, p=path, v=value: _set(o, p, _other(v)))
        if len(leaves) > 1:
            variant("other security values", lambda o: [_set(o, p, _other(v)) for p, v in leaves[::-1]] and None)
        if relax:
            settings = list(_unread_settings(obj, control.reads))
            for path in settings:
                variant(f"without {'.'.join(map(str, path))}", lambda o, p=path: _set(o, p, ...))
            if len(settings) > 1:
                variant("the hardened baseline relaxed", lambda o: [_set(o, p, ...) for p in settings[::-1]] and None)
    if obj.get("kind") in ("ClusterRoleBinding", "RoleBinding") and isinstance(obj.get("subjects"), list):
        def subjects(kind):
            def edit(o):
                o["subjects"] = [{"apiGroup": "rbac.authorization.k8s.io", "kind": kind,
                                  "name": "team-operator" if kind == "User" else "team-operators"}]
            return edit
        variant("User subject", subjects("User"))
        variant("Group subject", subjects("Group"))
        if not violating and (obj.get("roleRef") or {}).get("kind") == "ClusterRole":
            variant("role edit", lambda o: o["roleRef"].update(name="edit"))
    return out


def _meaning(names: set[str]):
    """(fields, judge) of the meaning (k8s.MEANINGS) of fields of these names, None where none holds them all."""
    from .k8s import MEANINGS

    return next(((fields, judge) for fields, judge in MEANINGS if names and set(names) <= fields), None)


def mislabelled(obj: dict, names: set[str]) -> bool:
    """Whether `obj`, labelled a gap on account of fields of these names, complies by what the fields mean
    (k8s.MEANINGS): a container with `runAsUser: 1000` and no `runAsNonRoot` runs as UID 1000, no root."""
    meaning = _meaning(names)
    try:
        return meaning is not None and not meaning[1]([obj])
    except (KeyError, TypeError, AttributeError, IndexError):
        return False


def _violations(obj: dict) -> set[str]:
    from . import k8s

    out = set()
    for control in k8s.CONTROLS:
        try:
            if control.probe([obj]):
                out.add(control.id)
        except (KeyError, TypeError, AttributeError, IndexError):
            out.add(control.id)
    return out


def variants(control, obj: dict, violating: bool, other_controls_graded: bool = True) -> list[dict]:
    """The copies of `obj` (`candidates`) the control reads as it reads `obj`, each under a fresh name.
    `other_controls_graded`: the task also grades other controls on these objects (an update's existing rules),
    so the compliant side's hardened baseline is not relaxed. A compliant variant never violates a catalogue
    control `obj` does not: no policy is required to accept what breaks another CIS control."""
    if not isinstance(obj, dict) or not isinstance(obj.get("metadata"), dict) or not obj["metadata"].get("name"):
        return []
    try:
        if bool(control.probe([obj])) != violating:
            return []
        before = _violations(obj)
    except (KeyError, TypeError, AttributeError, IndexError):
        return []
    out, seen = [], set()
    refused = _refused(obj)
    for change, copy_ in candidates(control, obj, violating, relax=not other_controls_graded):
        try:
            # as given and as the API server stores it (a port of a pod on the host's network gets its hostPort)
            if any(bool(control.probe([o])) != violating for o in (copy_, server_defaulted(copy_))):
                continue
            if violating and mislabelled(copy_, {r.rsplit(".", 1)[-1] for r in control.reads}):
                continue
            if not violating and not _violations(server_defaulted(copy_)) <= before:
                continue
        except (KeyError, TypeError, AttributeError, IndexError):
            continue
        if _refused(copy_) - refused:
            continue  # an object the API server refuses (a required field left out): no cluster holds it
        _named(obj, change, copy_)
        key = json.dumps({k: v for k, v in copy_.items() if k != "metadata"}, sort_keys=True)
        if key in seen:
            continue
        seen.add(key)
        out.append(copy_)
    return out


def _refused(obj: dict) -> set:
    """Why the API server would refuse `obj` (validate.py: its schema's required fields and the server's own
    rules), as (path, rule) pairs."""
    from ..validate import validate_object

    return {(str(issue.path), issue.rule) for issue in validate_object(obj)}


def _named(obj: dict, change: str, copy_: dict) -> dict:
    digest = hashlib.sha256(f"{obj['metadata']['name']}\0{change}".encode()).hexdigest()
    copy_["metadata"]["name"] = f"{obj['metadata']['name'][:40]}-{digest[:6]}"
    return copy_


def host_variants(control, obj: dict, violating: bool) -> list[dict]:
    """Copies of a host group `obj` (its `host` facts a host control's `facts`) holding the control's other
    violating (or compliant) settings (`HostControl.variants`), each under a fresh name."""
    if not isinstance(obj, dict) or not isinstance(obj.get("metadata"), dict) or not obj["metadata"].get("name") \
            or not isinstance(obj.get("host"), dict):
        return []
    out = []
    for change, facts in control.variants(violating):
        out.append(_named(obj, change, {**copy.deepcopy(obj), "host": facts}))
    return out


def _groups(reads: tuple[str, ...], gap: dict, compliant: dict) -> list[list[tuple]]:
    """The fields the control reads where `gap` and `compliant` differ, grouped by the object holding them
    (the containers' `image`; their `securityContext`'s `runAsNonRoot` and `runAsUser`): fields of one object
    state one requirement together, fields of different objects independent ones. Each field as (path in
    `gap`, its value in `compliant`, `...` where absent)."""
    from .k8s import _covered, _leaves

    def read(obj):
        return {path: value for path, value in _leaves(obj)
                if _covered(path, reads) and not isinstance(value, (dict, list))}

    bad, good = read(gap), read(compliant)
    groups: dict[tuple, list] = {}
    for path in sorted(set(bad) | set(good), key=str):
        if bad.get(path, ...) != good.get(path, ...):
            if path not in bad and not _parent(gap, path[:-1]):
                return []  # the compliant object's field has no place in the gap's: not comparable
            key = tuple(int(p) if p.isdigit() else p for p in path)
            groups.setdefault(key[:-1], []).append((key, good.get(path, ...)))
    return list(groups.values())


def _parent(obj, path) -> bool:
    node = obj
    for p in path:
        if isinstance(node, list) and p.isdigit() and int(p) < len(node):
            node = node[int(p)]
        elif isinstance(node, dict) and p in node:
            node = node[p]
        else:
            return False
    return isinstance(node, dict)


def isolated(reads: tuple[str, ...], gap: dict, compliant: list[dict]) -> list[dict]:
    """For a control a scenario declares itself, with no catalogue control (and no probe) to define it: where
    its `reads` cover several independent requirements (`_groups`: the gap and compliant object differ in
    fields of different objects, a registry and a security context), a gap variant per requirement violating
    it alone, the gap object with every other group set as the compliant object holds it. A policy that misses
    any one requirement passes the variant violating only that one."""
    if not isinstance(gap, dict) or not isinstance(gap.get("metadata"), dict) or not gap["metadata"].get("name"):
        return []
    same = [c for c in compliant if isinstance(c, dict) and c.get("kind") == gap.get("kind")]
    if not reads or not same:
        return []
    groups = _groups(tuple(reads), gap, same[0])
    out = []
    if len(groups) == 1:
        out += _registry_variants(gap, groups[0], same[0], gap)
    if len(groups) < 2:
        return out
    for keep, group in enumerate(groups):
        copy_ = copy.deepcopy(gap)
        for other in groups[:keep] + groups[keep + 1:]:
            for path, value in other:
                if value is not ... or _parent_has(copy_, path):  # a field only the gap holds, left out
                    _set(copy_, path, value)
        names = {str(p[-1]) for p, _ in group}
        if mislabelled(copy_, names):
            # the group's difference is no violation of its own (an extra guard the compliant object adds, beside
            # a field of the same meaning that already complies): that field left out too, where that violates
            for path, _ in group:
                node = copy_
                for key in path[:-1]:
                    node = node[key]
                for field in _meaning(names)[0] - names:
                    node.pop(field, None)
            if mislabelled(copy_, names):
                continue
        change = "only " + ", ".join(".".join(map(str, p)) for p, _ in group)
        out += _registry_variants(gap, group, same[0], copy.deepcopy(copy_))
        out.append(_named(gap, change, copy_))
    return out


def _registry(image) -> tuple[str, str] | None:
    """(registry host, the rest) of an image reference that names its registry (a first segment holding a `.`
    and no port, as Docker reads it: `trusted-registry.com/team/app:1`), None otherwise."""
    if not isinstance(image, str) or "/" not in image:
        return None
    host, _, rest = image.partition("/")
    if "." not in host or ":" in host or not rest:
        return None
    return host, rest


def _registry_variants(gap: dict, group: list[tuple], compliant: dict, base: dict) -> list[dict]:
    """Where a requirement is the image's registry (the group's `image`, whose host differs between the gap and
    the compliant object), more gap variants violating it (from `base`, the gap violating that requirement
    alone): the image from a look-alike host that the trusted one's name begins (`trusted-registry.com.attacker.example`,
    `trusted-registry.com-mirror.example.org`: a registry is the host up to the first `/`, so a prefix
    `trusted-registry.com*` admits them), and the gap's containers as init containers behind the compliant
    object's (init containers run their images too)."""
    images = [(path, value) for path, value in group if path and path[-1] == "image"]
    out = []
    for path, good in images:
        node = gap
        for key in path:
            node = node[key] if isinstance(node, (dict, list)) else None
        trusted, mine = _registry(good), _registry(node)
        if trusted is None or mine is None or trusted[0] == mine[0]:
            continue
        for host in (f"{trusted[0]}.attacker.example", f"{trusted[0]}-mirror.example.org"):
            copy_ = copy.deepcopy(base)
            _set(copy_, path, f"{host}/{trusted[1]}")
            out.append(_named(gap, f"image from {host}", copy_))
        pod, good_pod = _pod(base), _pod(compliant)
        if pod is not None and good_pod is not None and pod.get("containers") and good_pod.get("containers"):
            copy_ = copy.deepcopy(base)
            p = _pod(copy_)
            moved = [{k: v for k, v in c.items() if k not in NOT_INIT} for c in p["containers"]]
            for n, c in enumerate(moved):
                c["name"] = f"init-{n}"
            p["initContainers"] = list(p.get("initContainers") or []) + moved
            p["containers"] = copy.deepcopy(good_pod["containers"])
            out.append(_named(gap, "the image in init containers", copy_))
        break
    return out


def _parent_has(obj, path) -> bool:
    node = obj
    for p in path[:-1]:
        node = node[p]
    return path[-1] in node
