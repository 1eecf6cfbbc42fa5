"""CIS Kubernetes Benchmark (v1.9) section 5 controls as reusable policy gaps.

Each control renders, into one namespace, a *violating* set of objects (the gap, deployed by
the injection and removed by the revert) and a *compliant* counterpart (deployed with the
topology), as finished manifests with stable names. Workloads start from one hardened
baseline (non-root, RuntimeDefault seccomp, no privilege escalation, all capabilities
dropped, no service-account token) and each control changes only the fields it is about, so
the violating object breaks this control and no other pod-security control.
"""

from __future__ import annotations

import copy
import hashlib
import json
from dataclasses import dataclass
from typing import Callable

from .tasks import TASK_CLASSES

MANAGED = {"app.kubernetes.io/managed-by": "itbench"}  # what the harness itself deploys (an existing policy)
IMAGE = "nginxinc/nginx-unprivileged:1.27"
K8S_BENCHMARK = "CIS Kubernetes Benchmark"


@dataclass(frozen=True)
class K8sControl:
    id: str  # "cis-k8s-5.2.5"
    section: str  # "5.2.5"
    slug: str  # names the rendered objects: "<slug>-a" and "<slug>-b" (object_names)
    title: str  # the CIS recommendation, the default goal text
    violating: str  # what the gap object does, in a phrase
    compliant: str  # what its compliant counterpart does instead
    build: Callable[[str, str, bool], list[dict]]  # (namespace, name, violating) -> manifests
    probe: Callable[[list[dict]], bool]  # True when the objects violate the control (tests, docs)
    # Kyverno validate pattern for Pods enforcing the control (a list: Kyverno's `anyPattern`, a pod complying
    # when one of them holds, as for a setting the pod or each container may hold; None: not expressible as a
    # pod pattern)
    pattern: dict | list | None = None
    # controls whose rules make up the too-weak existing policy of a kyverno_update scenario
    update_from: tuple[str, ...] = ()
    # the agent of an opa_kubectl task can collect the objects with its default access (namespaced
    # workloads and network policies of its namespace; not RBAC objects, not the default namespace)
    collectable: bool = True
    benchmark: str = K8S_BENCHMARK
    # the fields the control reads, as dotted paths from the object (`*` any key or list index; a path covers
    # everything below it): a compliant object differs from its gap object in these alone (`off_control`)
    reads: tuple[str, ...] = ()
    # what the control is judged over: "object" (each object on its own) or "namespace" (a namespace complies
    # or not as a whole: the gap and compliant objects are then graded each in a namespace of its own)
    unit: str = "object"
    classes: tuple[str, ...] = ()  # derived below
    # violating values of settings the gap leaves out, spelled out ((setting, value): `seccompProfile`
    # `Unconfined`): a container holding one over a compliant pod violates (ciso/variation.py)
    spelled: tuple[tuple[str, object], ...] = ()

    @property
    def validation(self) -> dict:
        """The `validate` fields of a Kyverno rule enforcing `pattern`."""
        return {"anyPattern" if isinstance(self.pattern, list) else "pattern": copy.deepcopy(self.pattern)}

    def objects(self, namespace: str, violating: bool) -> list[dict]:
        return self.build(namespace, object_names(self.slug)[0 if violating else 1], violating)

    def counterpart(self, gap: dict | None, taken: set[str]) -> dict | None:
        """A compliant copy of `gap` (another object's manifest, an imported one): the fields the control
        reads (`reads`) set as the catalogue's compliant example sets them, or removed where it leaves them
        out, in every container where they sit under one; everything else kept, so the pair differs in what
        the control reads alone. Named `<gap's name>-<hash>`, a name outside `taken`. None when the control
        declares no reads, `gap` is of no kind its example has, or the copy would still violate it."""
        if not isinstance(gap, dict) or not self.reads:
            return None
        try:
            return self._counterpart(gap, taken)
        except (KeyError, TypeError, ValueError, AttributeError, IndexError):
            return None  # a manifest of a shape the control's probe cannot read: no copy of it

    def _counterpart(self, gap: dict, taken: set[str]) -> dict | None:
        meta = gap.get("metadata") if isinstance(gap.get("metadata"), dict) else {}
        namespace, name = meta.get("namespace") or "default", str(meta.get("name") or "")
        bad = next((o for o in self.build(namespace, name, True) if o.get("kind") == gap.get("kind")), None)
        good = next((o for o in self.build(namespace, name, False) if o.get("kind") == gap.get("kind")), None)
        if bad is None or good is None:
            return None
        mended = copy.deepcopy(gap)
        wanted = dict(_leaves(good))
        for path, value in _leaves(bad):
            if _covered(path, self.reads) and wanted.get(path, ...) != value:
                _set_everywhere(mended, path, wanted.get(path, ...))
        for path, value in wanted.items():
            if _covered(path, self.reads):
                _set_everywhere(mended, path, value)
        suffix = hashlib.sha256(json.dumps(mended, sort_keys=True).encode("utf-8")).hexdigest()
        copy_name = next(f"{name[:50]}-{suffix[i:i + 5]}" for i in range(0, 60, 5)
                         if f"{name[:50]}-{suffix[i:i + 5]}" not in taken)
        mended.setdefault("metadata", {})["name"] = copy_name
        # its own pods: the selector's label values renamed alike wherever they label (two workloads of one
        # selector would fight over their pods); label values are not what a control reads
        selector = ((mended.get("spec") or {}).get("selector") or {}).get("matchLabels")
        renamed = {v: f"{v[:56]}-{copy_name[-5:]}" for v in (selector or {}).values() if isinstance(v, str)}
        _relabel(mended, renamed)
        return None if self.probe([mended]) else mended


def object_names(slug: str) -> tuple[str, str]:
    """(the violating objects' name, the compliant ones'): `<slug>-a` and `<slug>-b`, which is which chosen by
    a hash of the slug. Neither says which it is: the agent reads these names, and a name or label that
    only the gap objects carry (`-gap`, `app.kubernetes.io/managed-by`) would point at them (agent_view.py)."""
    first = hashlib.sha256(slug.encode("utf-8")).digest()[0] % 2 == 0
    return (f"{slug}-a", f"{slug}-b") if first else (f"{slug}-b", f"{slug}-a")


def _leaves(node, path: tuple = ()):
    if isinstance(node, dict):
        for key, value in node.items():
            yield from _leaves(value, path + (str(key),))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from _leaves(value, path + (str(index),))
    else:
        yield path, node


def _relabel(node, renamed: dict) -> None:
    """Rename the label values of `renamed` in every `labels` and `matchLabels` map under `node`."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key in ("labels", "matchLabels") and isinstance(value, dict):
                node[key] = {k: renamed.get(v, v) if isinstance(v, str) else v for k, v in value.items()}
            else:
                _relabel(value, renamed)
    elif isinstance(node, list):
        for item in node:
            _relabel(item, renamed)


def _set_everywhere(obj, path: tuple, value) -> None:
    """Set (or, for `...`, remove) `path` in `obj`; a list index under `containers` or `initContainers`
    stands for every container there, so that a copy mends each of its containers as the example mends one."""
    node = obj
    for i, key in enumerate(path[:-1]):
        if isinstance(node, list):
            if path[i - 1] in CONTAINER_LISTS if i else False:
                for item in node:
                    _set_everywhere(item, path[i + 1:], value)
                return
            index = int(key)
            if index >= len(node):
                return
            node = node[index]
            continue
        if not isinstance(node, dict):
            return
        if key not in node:
            if value is ... or path[i + 1].isdigit():
                return  # nothing to remove, or a list item the copy does not have
            node[key] = {}
        node = node[key]
    last = path[-1]
    if isinstance(node, list):
        if path[-2:-1] and path[-2] in CONTAINER_LISTS:
            return  # a whole container: nothing a control reads
        index = int(last)
        if value is ... and index < len(node):
            node.pop(index)
        elif index < len(node):
            node[index] = value
        elif value is not ...:
            node.append(value)
    elif isinstance(node, dict):
        if value is ...:
            node.pop(last, None)
        else:
            node[last] = value


def _covered(path: tuple, reads: tuple[str, ...]) -> bool:
    for read in reads:
        parts = read.split(".")
        if len(parts) <= len(path) and all(p == "*" or p == q for p, q in zip(parts, path)):
            return True
    return False


def off_control(reads: tuple[str, ...], gap: dict, compliant: dict, names: set[str]) -> list[str]:
    """The paths where `compliant` differs from `gap` outside the fields the control reads (`reads`): empty
    for a minimal pair. Names the objects own (any string equal to one of `names`, or holding one) and label
    values are not compared (twins rename them); label keys are, so that no label only one side carries
    tells the sides apart."""
    def flat(obj: dict) -> dict:
        out = {}
        for path, value in _leaves(obj):
            if path[:2] == ("metadata", "name"):
                continue
            if isinstance(value, str) and any(n and n in value for n in names):
                value = "<name>"
            if "labels" in path or "matchLabels" in path:
                value = "<label>"
            out[path] = value
        return out
    a, b = flat(gap), flat(compliant)
    return sorted(".".join(p) for p in set(a) | set(b) if a.get(p, ...) != b.get(p, ...) and not _covered(p, reads))


def minimal_pairs(reads: tuple[str, ...], gaps: list[dict], compliant: list[dict], context: list[dict] = ()) -> list[str]:
    """For each gap object, the off-control differences (`off_control`) from the compliant object of its kind
    closest to it, as `Kind/name: path, ...`; a gap object with no compliant object of its kind is reported.
    `context`: objects beside the gap (a service account) whose names the gap objects may hold."""
    names = {str((o.get("metadata") or {}).get("name")) for o in [*gaps, *compliant, *context]}
    problems = []
    for gap in gaps:
        same = [off_control(reads, gap, o, names) for o in compliant if o.get("kind") == gap.get("kind")]
        where = f"{gap.get('kind')}/{(gap.get('metadata') or {}).get('name')}"
        if not same:
            problems.append(f"{where}: no compliant object of its kind")
        elif min(same, key=len):
            problems.append(f"{where}: " + ", ".join(min(same, key=len)))
    return problems


def _meta(name: str, namespace: str | None, labels: dict | None = None) -> dict:
    meta = {"name": name}
    if namespace is not None:
        meta["namespace"] = namespace
    if labels:
        meta["labels"] = dict(labels)
    return meta


def _baseline_pod(name: str) -> dict:
    return {
        "automountServiceAccountToken": False,
        "securityContext": {"runAsNonRoot": True, "runAsUser": 101, "runAsGroup": 101,
                            "seccompProfile": {"type": "RuntimeDefault"}},
        "containers": [{
            "name": "app", "image": IMAGE, "ports": [{"containerPort": 8080}],
            "securityContext": {"allowPrivilegeEscalation": False, "privileged": False,
                                "capabilities": {"drop": ["ALL"]}},
        }],
    }


def _deployment(name: str, namespace: str, pod: dict) -> dict:
    labels = {"app": name}
    return {
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": _meta(name, namespace, labels),
        "spec": {"replicas": 1, "selector": {"matchLabels": labels},
                 "template": {"metadata": {"labels": labels}, "spec": pod}},
    }


def _workload(change: Callable[[dict, dict], None]) -> Callable[[str, str, bool], list[dict]]:
    """A Deployment from the hardened baseline; `change(pod, container)` opens the gap."""
    def build(namespace: str, name: str, violating: bool) -> list[dict]:
        pod = _baseline_pod(name)
        if violating:
            change(pod, pod["containers"][0])
        return [_deployment(name, namespace, pod)]
    return build


def _pods(objects: list[dict]) -> list[dict]:
    out = []
    for obj in objects:
        if obj["kind"] == "Pod":
            out.append(obj["spec"])
        elif obj["kind"] in ("Deployment", "StatefulSet", "DaemonSet", "Job"):
            out.append(obj["spec"]["template"]["spec"])
    return out


def _containers(objects: list[dict]) -> list[dict]:
    return [c for p in _pods(objects) for c in _pod_containers(p)]


# the container lists of a pod: its ephemeral containers too (`kubectl debug` adds them through the
# `pods/ephemeralcontainers` subresource; Pod Security Standards and Kyverno's pod-security rules read them)
CONTAINER_LISTS = ("initContainers", "containers", "ephemeralContainers")


def _pod_containers(pod: dict) -> list[dict]:
    return [c for key in CONTAINER_LISTS for c in pod.get(key) or []]


def _any_pod(test: Callable[[dict], bool]) -> Callable[[list[dict]], bool]:
    return lambda objects: any(test(p) for p in _pods(objects))


def _any_container(test: Callable[[dict], bool]) -> Callable[[list[dict]], bool]:
    return lambda objects: any(test(c) for c in _containers(objects))


def _csc(container: dict) -> dict:
    return container.get("securityContext") or {}


# ---- RBAC ----------------------------------------------------------------------------------------

def _sa(name: str, namespace: str) -> dict:
    return {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": _meta(name, namespace),
            "automountServiceAccountToken": False}


def _role(kind: str, name: str, namespace: str | None, rules: list[dict]) -> dict:
    return {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": kind,
            "metadata": _meta(name, namespace if kind == "Role" else None), "rules": rules}


def _binding(kind: str, name: str, namespace: str | None, role_kind: str, role: str, subject: dict) -> dict:
    return {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": kind,
            "metadata": _meta(name, namespace if kind == "RoleBinding" else None),
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": role_kind, "name": role},
            "subjects": [subject]}


def _sa_subject(name: str, namespace: str) -> dict:
    return {"kind": "ServiceAccount", "name": name, "namespace": namespace}


def _rules_gap(bad: list[dict], good: list[dict], cluster: bool = False) -> Callable[[str, str, bool], list[dict]]:
    """A (Cluster)Role with the risky rules bound to a service account, or a narrow counterpart."""
    def build(namespace: str, name: str, violating: bool) -> list[dict]:
        rules = bad if violating else good
        # cluster-scoped names carry the namespace, so two scenarios' objects cannot collide
        cname = f"{namespace}-{name}"
        if cluster:
            return [_sa(name, namespace), _role("ClusterRole", cname, None, copy.deepcopy(rules)),
                    _binding("ClusterRoleBinding", cname, None, "ClusterRole", cname, _sa_subject(name, namespace))]
        return [_sa(name, namespace), _role("Role", name, namespace, copy.deepcopy(rules)),
                _binding("RoleBinding", name, namespace, "Role", name, _sa_subject(name, namespace))]
    return build


def _rules(objects: list[dict]) -> list[dict]:
    return [r for o in objects if o["kind"] in ("Role", "ClusterRole") for r in o.get("rules", [])]


def _grants(resources: set[str], verbs: set[str], groups: set[str] | None = None) -> Callable[[list[dict]], bool]:
    def probe(objects: list[dict]) -> bool:
        for rule in _rules(objects):
            if groups is not None and not (set(rule.get("apiGroups", [])) & (groups | {"*"})):
                continue
            if set(rule.get("resources", [])) & (resources | {"*"}) and set(rule.get("verbs", [])) & (verbs | {"*"}):
                return True
        return False
    return probe


def _cluster_admin(namespace: str, name: str, violating: bool) -> list[dict]:
    if violating:
        return [_sa(name, namespace), _binding("ClusterRoleBinding", f"{namespace}-{name}", None, "ClusterRole",
                                               "cluster-admin", _sa_subject(name, namespace))]
    # the compliant counterpart binds the same way to a read-only role of the cluster's own (`view`)
    return [_sa(name, namespace), _binding("ClusterRoleBinding", f"{namespace}-{name}", None, "ClusterRole", "view",
                                           _sa_subject(name, namespace))]


def _binds_to(role: str) -> Callable[[list[dict]], bool]:
    return lambda objects: any(o["kind"] in ("ClusterRoleBinding", "RoleBinding") and o["roleRef"]["name"] == role
                               for o in objects)


def _masters(namespace: str, name: str, violating: bool) -> list[dict]:
    role = [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list", "watch"]}]
    subject = ({"kind": "Group", "apiGroup": "rbac.authorization.k8s.io", "name": "system:masters"} if violating
               else _sa_subject(name, namespace))
    out = [] if violating else [_sa(name, namespace)]
    return out + [_role("Role", name, namespace, role), _binding("RoleBinding", name, namespace, "Role", name, subject)]


def _binds_masters(objects: list[dict]) -> bool:
    return any(s.get("kind") == "Group" and s.get("name") == "system:masters"
               for o in objects if o["kind"].endswith("Binding") for s in o.get("subjects", []))


def _default_sa(namespace: str, name: str, violating: bool) -> list[dict]:
    pod = _baseline_pod(name)
    if violating:
        pod["serviceAccountName"] = "default"
        return [_deployment(name, namespace, pod)]
    pod["serviceAccountName"] = name
    return [_sa(name, namespace), _deployment(name, namespace, pod)]


def _automounting(objects: list[dict], name: str | None = None) -> bool:
    """Whether a ServiceAccount (of this name) mounts its token into pods: unless it says
    `automountServiceAccountToken: false`. CIS 5.1.5's audit asks it of each namespace's `default` account, 5.1.6's
    of every account ("review pod and service account objects ... automountServiceAccountToken: false"), so the
    `default` account as Kubernetes creates it violates both (and is left ungraded: k8s.system_objects)."""
    return any(o["kind"] == "ServiceAccount" and (name is None or o["metadata"].get("name") == name)
               and o.get("automountServiceAccountToken") is not False for o in objects)


def _network_policy(namespace: str, name: str, violating: bool) -> list[dict]:
    deployment = _deployment(name, namespace, _baseline_pod(name))
    if violating:
        return [deployment]
    policy = {"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy", "metadata": _meta(name, namespace),
              "spec": {"podSelector": {"matchLabels": {"app": name}}, "policyTypes": ["Ingress", "Egress"]}}
    return [deployment, policy]


def _uncovered(objects: list[dict]) -> bool:
    selectors = [o["spec"]["podSelector"].get("matchLabels", {}) for o in objects if o["kind"] == "NetworkPolicy"]
    for obj in objects:
        if obj["kind"] == "Deployment":
            labels = obj["spec"]["template"]["metadata"]["labels"]
            if not any(all(labels.get(k) == v for k, v in s.items()) for s in selectors):
                return True
    return False


def _secret_env(namespace: str, name: str, violating: bool) -> list[dict]:
    secret = {"apiVersion": "v1", "kind": "Secret", "metadata": _meta(name, namespace), "type": "Opaque",
              "stringData": {"password": "change-me"}}
    pod = _baseline_pod(name)
    container = pod["containers"][0]
    if violating:
        container["env"] = [{"name": "DB_PASSWORD",
                             "valueFrom": {"secretKeyRef": {"name": name, "key": "password"}}}]
    else:
        pod["volumes"] = [{"name": "credentials", "secret": {"secretName": name}}]
        container["volumeMounts"] = [{"name": "credentials", "mountPath": "/etc/credentials", "readOnly": True}]
    return [secret, _deployment(name, namespace, pod)]


def _secret_in_env(container: dict) -> bool:
    return any((e.get("valueFrom") or {}).get("secretKeyRef") for e in container.get("env", [])) or any(
        "secretRef" in s for s in container.get("envFrom", []))


def _default_namespace(namespace: str, name: str, violating: bool) -> list[dict]:
    return [_deployment(name, "default" if violating else namespace, _baseline_pod(name))]


# The objects Kubernetes itself keeps in a namespace: in every one, the service-account controller's
# ServiceAccount `default` and the root-CA publisher's ConfigMap `kube-root-ca.crt`; in `default`, the API
# server's own Service `kubernetes`. No control asks to remove them (CIS 5.7.4's audit: "the only entries there
# should be system managed resources such as the kubernetes service"), so a policy on where objects live must
# pass them: they are graded compliant (the spec's `ciso.system`), and never deployed nor twinned; except where the
# control's own probe fails them (CIS 5.1.5 and 5.1.6 audit the `default` account's token mount): left ungraded.
def system_objects(namespace: str) -> list[dict]:
    out = [{"apiVersion": "v1", "kind": "ServiceAccount", "metadata": _meta("default", namespace)},
           {"apiVersion": "v1", "kind": "ConfigMap", "metadata": _meta("kube-root-ca.crt", namespace),
            "data": {"ca.crt": "-----BEGIN CERTIFICATE-----\n...\n-----END CERTIFICATE-----\n"}}]
    if namespace == "default":
        out.append({"apiVersion": "v1", "kind": "Service",
                    "metadata": _meta("kubernetes", "default", {"component": "apiserver", "provider": "kubernetes"}),
                    "spec": {"type": "ClusterIP", "ports": [{"name": "https", "port": 443, "protocol": "TCP",
                                                             "targetPort": 6443}]}})
    return out


def _kept_by_kubernetes(obj: dict) -> bool:
    meta = obj.get("metadata") or {}
    return any((o["kind"], o["metadata"]["name"]) == (obj.get("kind"), meta.get("name"))
               for o in system_objects(meta.get("namespace") or "default"))


# A pod securityContext holding some setting (one pattern per setting of v1.PodSecurityContext, a value of any
# kind) and each container one of its own (a map of optional keys matches any map present).
_POD_SETTING_SET = [
    {"spec": {"securityContext": {key: value}, "containers": [{"securityContext": {"=(privileged)": "*"}}]}}
    for key, value in [*((k, "*") for k in ("runAsNonRoot", "runAsUser", "runAsGroup", "fsGroup",
                                            "fsGroupChangePolicy", "supplementalGroupsPolicy", "seLinuxChangePolicy")),
                       *((k, {}) for k in ("seccompProfile", "seLinuxOptions", "windowsOptions", "appArmorProfile"))]]


def _no_security_context(pod: dict, container: dict) -> None:
    pod.pop("securityContext")
    container.pop("securityContext")


def _set(mapping_of: Callable[[dict, dict], dict], key: str, value) -> Callable[[dict, dict], None]:
    def change(pod: dict, container: dict) -> None:
        mapping_of(pod, container)[key] = copy.deepcopy(value)
    return change


_POD = lambda pod, container: pod  # noqa: E731
_CSC = lambda pod, container: container["securityContext"]  # noqa: E731
_PSC = lambda pod, container: pod["securityContext"]  # noqa: E731


def _privileged(pod: dict, container: dict) -> None:
    # A privileged container can always escalate: the API server refuses `privileged: true` beside the
    # baseline's `allowPrivilegeEscalation: false` (kubernetes pkg/apis/core/validation/validation.go,
    # ValidateSecurityContext, v1.33), so the gap drops the latter.
    container["securityContext"]["privileged"] = True
    container["securityContext"].pop("allowPrivilegeEscalation")


def _root(pod: dict, container: dict) -> None:
    pod["securityContext"]["runAsNonRoot"] = False
    pod["securityContext"]["runAsUser"] = 0


def _runs_as_root(pod: dict) -> bool:
    # each container's own setting applies over the pod's (Kubernetes' effective security context)
    psc = pod.get("securityContext") or {}
    for container in _pod_containers(pod):
        csc = _csc(container)
        non_root = csc.get("runAsNonRoot", psc.get("runAsNonRoot"))
        user = csc.get("runAsUser", psc.get("runAsUser"))
        if not non_root or user == 0:
            return True
    return False


def _root_uid(pod: dict) -> bool:
    # who a container runs as: the UID `runAsUser` gives its process, else the image's, which `runAsNonRoot: true`
    # makes the kubelet verify is not 0; each container's own setting over the pod's. A container with neither
    # guarantee (or a UID of 0) may run as root.
    psc = pod.get("securityContext") or {}
    for container in _pod_containers(pod):
        csc = _csc(container)
        non_root = csc.get("runAsNonRoot", psc.get("runAsNonRoot"))
        user = csc.get("runAsUser", psc.get("runAsUser"))
        if user == 0 or not (non_root is True or (isinstance(user, int) and not isinstance(user, bool) and user > 0)):
            return True
    return False


# what fields mean whatever a control's own probe reads into them: (the fields' names, a judge of objects that is
# True where they violate what the fields state, read as Kubernetes reads them). A variant labelled a gap on
# account of these fields alone must be one (ciso/variation.py).
MEANINGS: tuple[tuple[frozenset[str], Callable[[list[dict]], bool]], ...] = (
    (frozenset({"runAsNonRoot", "runAsUser"}), _any_pod(_root_uid)),
)


def _seccomp_unset(pod: dict, container: dict) -> None:
    pod["securityContext"].pop("seccompProfile")


def _seccomp_off(pod: dict) -> bool:
    # a container's own profile applies over the pod's (an `Unconfined` one under a RuntimeDefault pod runs so)
    profile = (pod.get("securityContext") or {}).get("seccompProfile")
    return any((_csc(c).get("seccompProfile") or profile or {}).get("type") not in ("RuntimeDefault", "Localhost")
               for c in _pod_containers(pod))


def _add_caps(caps: list[str], drop_all: bool = True) -> Callable[[dict, dict], None]:
    def change(pod: dict, container: dict) -> None:
        capabilities = container["securityContext"]["capabilities"]
        capabilities["add"] = list(caps)
        if not drop_all:
            capabilities.pop("drop")
    return change


def _caps(container: dict) -> dict:
    return _csc(container).get("capabilities") or {}


def _host_path(pod: dict, container: dict) -> None:
    pod["volumes"] = [{"name": "host-logs", "hostPath": {"path": "/var/log", "type": "Directory"}}]
    container["volumeMounts"] = [{"name": "host-logs", "mountPath": "/host/var/log", "readOnly": True}]


def _host_port(pod: dict, container: dict) -> None:
    container["ports"][0]["hostPort"] = 8080


_CONTAINERS_PATTERN = lambda inner: {"spec": {"containers": [inner]}}  # noqa: E731

CONTROLS: list[K8sControl] = [
    # 5.1 RBAC and service accounts
    K8sControl("cis-k8s-5.1.1", "5.1.1", "cluster-admin",
               "Ensure that the cluster-admin role is only used where required.",
               "ClusterRoleBinding of a service account to cluster-admin",
               "ClusterRoleBinding of a service account to the read-only `view` role",
               _cluster_admin, _binds_to("cluster-admin"), collectable=False),
    K8sControl("cis-k8s-5.1.2", "5.1.2", "secrets-access", "Minimize access to secrets.",
               "Role granting get/list/watch on secrets", "Role granting read access to configmaps only",
               _rules_gap([{"apiGroups": [""], "resources": ["secrets"], "verbs": ["get", "list", "watch"]}],
                          [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get", "list", "watch"]}]),
               _grants({"secrets"}, {"get", "list", "watch"}, {""}), collectable=False),
    K8sControl("cis-k8s-5.1.3", "5.1.3", "rbac-wildcard", "Minimize wildcard use in Roles and ClusterRoles.",
               "Role with `*` apiGroups, resources and verbs", "Role naming its resources and verbs",
               _rules_gap([{"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]}],
                          [{"apiGroups": [""], "resources": ["pods", "services"], "verbs": ["get", "list"]}]),
               lambda objects: any("*" in r.get(k, []) for r in _rules(objects)
                                   for k in ("apiGroups", "resources", "verbs")), collectable=False),
    K8sControl("cis-k8s-5.1.4", "5.1.4", "create-pods", "Minimize access to create pods.",
               "Role granting create on pods", "Role granting get/list on pods",
               _rules_gap([{"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list", "create"]}],
                          [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list"]}]),
               _grants({"pods"}, {"create"}, {""}), collectable=False),
    K8sControl("cis-k8s-5.1.5", "5.1.5", "default-sa", "Ensure that default service accounts are not actively used.",
               "Deployment running as the `default` service account",
               "Deployment running as its own service account",
               _default_sa, lambda objects: _any_pod(lambda p: p.get("serviceAccountName", "default") == "default")(
                   objects) or _automounting(objects, "default"),
               pattern={"spec": {"serviceAccountName": "!default"}}),
    K8sControl("cis-k8s-5.1.6", "5.1.6", "sa-token", "Ensure that Service Account Tokens are only mounted where necessary.",
               "Deployment mounting the service-account token (automountServiceAccountToken: true)",
               "automountServiceAccountToken: false",
               _workload(_set(_POD, "automountServiceAccountToken", True)),
               lambda objects: _any_pod(lambda p: p.get("automountServiceAccountToken", True) is not False)(objects)
               or _automounting(objects),
               pattern={"spec": {"automountServiceAccountToken": "false"}}),
    K8sControl("cis-k8s-5.1.7", "5.1.7", "system-masters", "Avoid use of the system:masters group.",
               "RoleBinding to the group system:masters", "RoleBinding to a service account",
               _masters, _binds_masters, collectable=False),
    K8sControl("cis-k8s-5.1.8", "5.1.8", "rbac-escalate",
               "Limit use of the Bind, Impersonate and Escalate permissions in the Kubernetes cluster.",
               "ClusterRole granting bind, escalate and impersonate", "ClusterRole granting read access only",
               _rules_gap([{"apiGroups": ["rbac.authorization.k8s.io"], "resources": ["clusterroles", "roles"],
                            "verbs": ["bind", "escalate"]},
                           {"apiGroups": [""], "resources": ["users", "groups", "serviceaccounts"],
                            "verbs": ["impersonate"]}],
                          [{"apiGroups": ["rbac.authorization.k8s.io"], "resources": ["clusterroles", "roles"],
                            "verbs": ["get", "list"]}], cluster=True),
               lambda objects: any(set(r.get("verbs", [])) & {"bind", "escalate", "impersonate", "*"}
                                   for r in _rules(objects)), collectable=False),
    K8sControl("cis-k8s-5.1.9", "5.1.9", "create-pv", "Minimize access to create persistent volumes.",
               "ClusterRole granting create on persistentvolumes", "ClusterRole granting read on persistentvolumes",
               _rules_gap([{"apiGroups": [""], "resources": ["persistentvolumes"], "verbs": ["get", "list", "create"]}],
                          [{"apiGroups": [""], "resources": ["persistentvolumes"], "verbs": ["get", "list"]}],
                          cluster=True),
               _grants({"persistentvolumes"}, {"create"}, {""}), collectable=False),
    K8sControl("cis-k8s-5.1.10", "5.1.10", "node-proxy", "Minimize access to the proxy sub-resource of nodes.",
               "ClusterRole granting get on nodes/proxy", "ClusterRole granting read on nodes",
               _rules_gap([{"apiGroups": [""], "resources": ["nodes", "nodes/proxy"], "verbs": ["get", "list"]}],
                          [{"apiGroups": [""], "resources": ["nodes"], "verbs": ["get", "list"]}], cluster=True),
               _grants({"nodes/proxy"}, {"get", "list", "create", "update", "patch"}, {""}), collectable=False),
    K8sControl("cis-k8s-5.1.11", "5.1.11", "csr-approval",
               "Minimize access to the approval sub-resource of certificatesigningrequests objects.",
               "ClusterRole granting update on certificatesigningrequests/approval",
               "ClusterRole granting read on certificatesigningrequests",
               _rules_gap([{"apiGroups": ["certificates.k8s.io"],
                            "resources": ["certificatesigningrequests", "certificatesigningrequests/approval"],
                            "verbs": ["get", "list", "update"]}],
                          [{"apiGroups": ["certificates.k8s.io"], "resources": ["certificatesigningrequests"],
                            "verbs": ["get", "list"]}], cluster=True),
               _grants({"certificatesigningrequests/approval"}, {"update", "patch"}, {"certificates.k8s.io"}), collectable=False),
    K8sControl("cis-k8s-5.1.12", "5.1.12", "webhook-config", "Minimize access to webhook configuration objects.",
               "ClusterRole granting create/update on admission webhook configurations",
               "ClusterRole granting read on them",
               _rules_gap([{"apiGroups": ["admissionregistration.k8s.io"],
                            "resources": ["validatingwebhookconfigurations", "mutatingwebhookconfigurations"],
                            "verbs": ["get", "list", "create", "update", "patch", "delete"]}],
                          [{"apiGroups": ["admissionregistration.k8s.io"],
                            "resources": ["validatingwebhookconfigurations", "mutatingwebhookconfigurations"],
                            "verbs": ["get", "list"]}], cluster=True),
               _grants({"validatingwebhookconfigurations", "mutatingwebhookconfigurations"},
                       {"create", "update", "patch", "delete"}, {"admissionregistration.k8s.io"}), collectable=False),
    K8sControl("cis-k8s-5.1.13", "5.1.13", "sa-token-create", "Minimize access to the service account token creation.",
               "Role granting create on serviceaccounts/token", "Role granting read on serviceaccounts",
               _rules_gap([{"apiGroups": [""], "resources": ["serviceaccounts", "serviceaccounts/token"],
                            "verbs": ["get", "create"]}],
                          [{"apiGroups": [""], "resources": ["serviceaccounts"], "verbs": ["get", "list"]}]),
               _grants({"serviceaccounts/token"}, {"create"}, {""}), collectable=False),
    # 5.2 Pod security standards
    K8sControl("cis-k8s-5.2.2", "5.2.2", "privileged", "Minimize the admission of privileged containers.",
               "container with privileged: true", "privileged: false",
               _workload(_privileged), _any_container(lambda c: _csc(c).get("privileged") is True),
               pattern=_CONTAINERS_PATTERN({"=(securityContext)": {"=(privileged)": "false"}}),
               # not 5.2.6: a privileged container cannot set allowPrivilegeEscalation: false, so a policy
               # requiring it would already refuse the gap
               update_from=("cis-k8s-5.2.9",)),
    K8sControl("cis-k8s-5.2.3", "5.2.3", "host-pid",
               "Minimize the admission of containers wishing to share the host process ID namespace.",
               "hostPID: true", "hostPID unset (false)",
               _workload(_set(_POD, "hostPID", True)), _any_pod(lambda p: p.get("hostPID") is True),
               pattern={"spec": {"=(hostPID)": "false"}}, update_from=("cis-k8s-5.2.5",)),
    K8sControl("cis-k8s-5.2.4", "5.2.4", "host-ipc",
               "Minimize the admission of containers wishing to share the host IPC namespace.",
               "hostIPC: true", "hostIPC unset (false)",
               _workload(_set(_POD, "hostIPC", True)), _any_pod(lambda p: p.get("hostIPC") is True),
               pattern={"spec": {"=(hostIPC)": "false"}}, update_from=("cis-k8s-5.2.5",)),
    K8sControl("cis-k8s-5.2.5", "5.2.5", "host-network",
               "Minimize the admission of containers wishing to share the host network namespace.",
               "hostNetwork: true", "hostNetwork unset (false)",
               _workload(_set(_POD, "hostNetwork", True)), _any_pod(lambda p: p.get("hostNetwork") is True),
               pattern={"spec": {"=(hostNetwork)": "false"}}, update_from=("cis-k8s-5.2.3",)),
    K8sControl("cis-k8s-5.2.6", "5.2.6", "privilege-escalation",
               "Minimize the admission of containers with allowPrivilegeEscalation.",
               "allowPrivilegeEscalation: true", "allowPrivilegeEscalation: false",
               _workload(_set(_CSC, "allowPrivilegeEscalation", True)),
               _any_container(lambda c: _csc(c).get("allowPrivilegeEscalation", True) is not False),
               pattern=_CONTAINERS_PATTERN({"securityContext": {"allowPrivilegeEscalation": "false"}}),
               update_from=("cis-k8s-5.2.2",)),
    K8sControl("cis-k8s-5.2.7", "5.2.7", "root-user", "Minimize the admission of root containers.",
               "runAsUser: 0 and runAsNonRoot: false", "runAsNonRoot: true, runAsUser: 101",
               _workload(_root), _any_pod(_runs_as_root),
               # non-root set for the pod or for each container, no user 0 at either level
               pattern=[{"spec": {"securityContext": {"runAsNonRoot": "true", "=(runAsUser)": ">0"},
                                  "containers": [{"=(securityContext)": {"=(runAsNonRoot)": "true",
                                                                         "=(runAsUser)": ">0"}}]}},
                        {"spec": {"=(securityContext)": {"=(runAsUser)": ">0"},
                                  "containers": [{"securityContext": {"runAsNonRoot": "true",
                                                                      "=(runAsUser)": ">0"}}]}}],
               update_from=("cis-k8s-5.2.6", "cis-k8s-5.2.2")),
    K8sControl("cis-k8s-5.2.8", "5.2.8", "net-raw", "Minimize the admission of containers with the NET_RAW capability.",
               "capabilities add NET_RAW and drop nothing", "capabilities drop ALL",
               _workload(_add_caps(["NET_RAW"], drop_all=False)),
               _any_container(lambda c: "NET_RAW" in _caps(c).get("add", []) or not (
                   {"ALL", "NET_RAW"} & set(_caps(c).get("drop", [])))),
               # no pod pattern: `drop: [ALL]` passes a container that adds NET_RAW back (the runtime applies `add`
               # after `drop`), and Kyverno matches a list of strings by position, so "NET_RAW in no place of `add`"
               # has no pattern
               update_from=("cis-k8s-5.2.6",)),
    K8sControl("cis-k8s-5.2.9", "5.2.9", "added-caps", "Minimize the admission of containers with added capabilities.",
               "capabilities add SYS_ADMIN", "no added capabilities",
               _workload(_add_caps(["SYS_ADMIN"])), _any_container(lambda c: bool(_caps(c).get("add"))),
               pattern=_CONTAINERS_PATTERN({"=(securityContext)": {"=(capabilities)": {"X(add)": "null"}}}),
               update_from=("cis-k8s-5.2.2",)),
    K8sControl("cis-k8s-5.2.10", "5.2.10", "caps-assigned", "Minimize the admission of containers with capabilities assigned.",
               "capabilities neither dropped nor limited", "capabilities drop ALL",
               _workload(lambda pod, container: container["securityContext"].pop("capabilities")),
               # a capability added after ALL is dropped is one assigned (the runtime applies `add` after `drop`):
               # "do not generally permit containers with capabilities" (CIS 5.2.10), as Pod Security Restricted
               _any_container(lambda c: "ALL" not in _caps(c).get("drop", []) or bool(_caps(c).get("add"))),
               pattern=_CONTAINERS_PATTERN({"securityContext": {"capabilities": {"drop": ["ALL"], "X(add)": "null"}}}),
               update_from=("cis-k8s-5.2.9",)),
    K8sControl("cis-k8s-5.2.12", "5.2.12", "host-path", "Minimize the admission of HostPath volumes.",
               "hostPath volume of /var/log", "no hostPath volume",
               _workload(_host_path), _any_pod(lambda p: any("hostPath" in v for v in p.get("volumes", []))),
               pattern={"spec": {"=(volumes)": [{"X(hostPath)": "null"}]}}, update_from=("cis-k8s-5.2.5",)),
    K8sControl("cis-k8s-5.2.13", "5.2.13", "host-port", "Minimize the admission of containers which use HostPorts.",
               "container port with hostPort: 8080", "no hostPort",
               _workload(_host_port),
               _any_container(lambda c: any(p.get("hostPort") for p in c.get("ports", []))),
               pattern=_CONTAINERS_PATTERN({"=(ports)": [{"X(hostPort)": "null"}]}), update_from=("cis-k8s-5.2.5",)),
    # 5.3 network policies
    K8sControl("cis-k8s-5.3.2", "5.3.2", "network-policy", "Ensure that all Namespaces have Network Policies defined.",
               "Deployment whose pods no NetworkPolicy selects",
               "Deployment with a deny-all NetworkPolicy selecting its pods",
               _network_policy, _uncovered),
    # 5.4 secrets management
    K8sControl("cis-k8s-5.4.1", "5.4.1", "secret-env", "Prefer using secrets as files over secrets as environment variables.",
               "secret passed as an environment variable (secretKeyRef)", "secret mounted as a read-only volume",
               _secret_env, _any_container(_secret_in_env),
               pattern=_CONTAINERS_PATTERN({"=(env)": [{"=(valueFrom)": {"X(secretKeyRef)": "null"}}]}),
               update_from=("cis-k8s-5.1.6",)),
    # 5.7 general policies
    K8sControl("cis-k8s-5.7.2", "5.7.2", "seccomp",
               "Ensure that the seccomp profile is set to docker/default (RuntimeDefault) in your pod definitions.",
               "seccompProfile unset", "seccompProfile type RuntimeDefault",
               _workload(_seccomp_unset), _any_pod(_seccomp_off),
               # the pod's profile, unless each container sets its own; no container's own profile another
               pattern=[{"spec": {"securityContext": {"seccompProfile": {"type": "RuntimeDefault | Localhost"}},
                                  "containers": [{"=(securityContext)": {"=(seccompProfile)": {
                                      "type": "RuntimeDefault | Localhost"}}}]}},
                        {"spec": {"containers": [{"securityContext": {"seccompProfile": {
                            "type": "RuntimeDefault | Localhost"}}}]}}],
               update_from=("cis-k8s-5.2.6",), spelled=(("seccompProfile", {"type": "Unconfined"}),)),
    K8sControl("cis-k8s-5.7.3", "5.7.3", "security-context", "Apply Security Context to Your Pods and Containers.",
               "no pod or container securityContext", "pod and container securityContext set",
               _workload(_no_security_context),
               _any_pod(lambda p: not p.get("securityContext") or any(not c.get("securityContext")
                                                                      for c in p["containers"])),
               # a securityContext applied: the pod's holds a setting (the API server stores `{}` on every pod,
               # so its presence says nothing) and each container has one
               pattern=_POD_SETTING_SET, update_from=("cis-k8s-5.2.5",)),
    K8sControl("cis-k8s-5.7.4", "5.7.4", "default-namespace", "The default namespace should not be used.",
               "Deployment in the `default` namespace", "Deployment in the scenario's namespace",
               _default_namespace,
               lambda objects: any(o["metadata"].get("namespace") == "default" and not _kept_by_kubernetes(o)
                                   for o in objects),
               pattern={"metadata": {"namespace": "!default"}}, update_from=("cis-k8s-5.2.6",),
               collectable=False),
]

_POD_SPEC = "spec.template.spec"
_CONTAINER = "spec.template.spec.containers.*"
# the fields each control reads (K8sControl.reads): its compliant objects differ from its gap objects in these alone
READS: dict[str, tuple[str, ...]] = {
    "cis-k8s-5.1.1": ("roleRef",),
    **{c: ("rules",) for c in ("cis-k8s-5.1.2", "cis-k8s-5.1.3", "cis-k8s-5.1.4", "cis-k8s-5.1.8", "cis-k8s-5.1.9",
                               "cis-k8s-5.1.10", "cis-k8s-5.1.11", "cis-k8s-5.1.12", "cis-k8s-5.1.13")},
    "cis-k8s-5.1.5": (f"{_POD_SPEC}.serviceAccountName", "automountServiceAccountToken"),
    "cis-k8s-5.1.6": (f"{_POD_SPEC}.automountServiceAccountToken", "automountServiceAccountToken"),
    "cis-k8s-5.1.7": ("subjects",),
    # a privileged container cannot forbid privilege escalation (the API server refuses the pair)
    "cis-k8s-5.2.2": (f"{_CONTAINER}.securityContext.privileged", f"{_CONTAINER}.securityContext.allowPrivilegeEscalation"),
    "cis-k8s-5.2.3": (f"{_POD_SPEC}.hostPID",),
    "cis-k8s-5.2.4": (f"{_POD_SPEC}.hostIPC",),
    "cis-k8s-5.2.5": (f"{_POD_SPEC}.hostNetwork",),
    "cis-k8s-5.2.6": (f"{_CONTAINER}.securityContext.allowPrivilegeEscalation",),
    "cis-k8s-5.2.7": (f"{_POD_SPEC}.securityContext.runAsNonRoot", f"{_POD_SPEC}.securityContext.runAsUser",
                      f"{_CONTAINER}.securityContext.runAsNonRoot", f"{_CONTAINER}.securityContext.runAsUser"),
    "cis-k8s-5.2.8": (f"{_CONTAINER}.securityContext.capabilities",),
    "cis-k8s-5.2.9": (f"{_CONTAINER}.securityContext.capabilities",),
    "cis-k8s-5.2.10": (f"{_CONTAINER}.securityContext.capabilities",),
    "cis-k8s-5.2.12": (f"{_POD_SPEC}.volumes", f"{_CONTAINER}.volumeMounts"),
    "cis-k8s-5.2.13": (f"{_CONTAINER}.ports",),
    # the namespace's NetworkPolicies (what they select): the workloads themselves are alike
    "cis-k8s-5.3.2": ("spec.podSelector", "spec.policyTypes"),
    "cis-k8s-5.4.1": (f"{_CONTAINER}.env", f"{_CONTAINER}.envFrom", f"{_POD_SPEC}.volumes", f"{_CONTAINER}.volumeMounts"),
    "cis-k8s-5.7.2": (f"{_POD_SPEC}.securityContext.seccompProfile", f"{_CONTAINER}.securityContext.seccompProfile"),
    "cis-k8s-5.7.3": (f"{_POD_SPEC}.securityContext", f"{_CONTAINER}.securityContext"),
    "cis-k8s-5.7.4": ("metadata.namespace",),
}
UNITS = {"cis-k8s-5.3.2": "namespace"}  # K8sControl.unit where it is not "object"

for _c in CONTROLS:
    object.__setattr__(_c, "reads", READS[_c.id])
    object.__setattr__(_c, "unit", UNITS.get(_c.id, "object"))
    # a Kyverno policy can check every control judged per object (a validate rule sees one object: a control on
    # what a namespace holds needs the cluster read through an apiCall, which no offline grading evaluates); an
    # agent that collects the objects needs a control whose objects its access reaches; an existing policy can
    # be extended with a pod pattern
    object.__setattr__(_c, "classes", tuple(t.task for t in TASK_CLASSES.values() if t.platform == "k8s"
                                            and (t.artefact != "kyverno" or _c.unit == "object")
                                            and (not t.collects or _c.collectable)
                                            and (not t.updates or (_c.pattern is not None and bool(_c.update_from)))))
