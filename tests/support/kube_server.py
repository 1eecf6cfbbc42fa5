"""A small stateful Kubernetes API server on loopback, for tests that drive the real kubernetes client.

It serves what `itbench run` and `itbench snapshot` ask of a cluster, with the API's own shapes:
discovery (`/version`, `/api`, `/apis`, `/api/v1`, `/apis/G/V`), namespaced and cluster CRUD, server-side
apply (`PATCH` with `application/apply-patch+yaml`: the applied form replaces the object's fields, the
server's own fields kept, as with one field manager), merge patches, deletion (a Namespace terminates
and takes its objects with it; a workload takes its pods), `watch=true` streams (chunked JSON lines
from a resourceVersion, with `timeoutSeconds`), TokenRequest, SelfSubjectAccessReview, pods/exec (the websocket channel
protocol `v4.channel.k8s.io`: the handshake, stdout, stderr and the error channel's Status; what a
command prints and its exit code come from `exec_result`, and every exec is recorded in `execs`) and a fake
Prometheus (`/prometheus/api/v1/alerts`). A tiny controller gives each Deployment and StatefulSet
its pods, which turn Ready after `ready_delay` seconds, and then the workload's status.

Knobs for breaking things on purpose: `fail` ({(method, kind, name): status}: that request fails), `raw`
({(method, path): (status, bytes)}: that request gets this answer as is), `watch_holds` (watches ignore
`timeoutSeconds` and stay open),
`deny` ({(verb, resource)}: the access review says no), `on_change` (a controller's stand-in, called after each
store or removal), `exec_result` (a function of the server, the
namespace, pod, container and command that returns (exit code, stdout, stderr), or a Status dict sent as
is; it may sleep to stand for a command that hangs), `groups` (API groups to serve: leave
`chaos-mesh.org` out and its kinds are not served), `unready` (a predicate on pods that never
turn Ready), `alerts` (a function of the server that returns the firing alert names).

Not a real API server: no validation beyond names and namespaces, no admission, no field ownership
across managers, one version per group.
"""

from __future__ import annotations

import base64
import copy
import hashlib
import json
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import yaml

# (group, version, kind, plural, namespaced, subresources)
RESOURCES = [
    ("", "v1", "Namespace", "namespaces", False, ()),
    ("", "v1", "Pod", "pods", True, ("log", "status")),
    ("", "v1", "Service", "services", True, ("status",)),
    ("", "v1", "ConfigMap", "configmaps", True, ()),
    ("", "v1", "Secret", "secrets", True, ()),
    ("", "v1", "ServiceAccount", "serviceaccounts", True, ("token",)),
    ("", "v1", "PersistentVolumeClaim", "persistentvolumeclaims", True, ("status",)),
    ("", "v1", "PersistentVolume", "persistentvolumes", False, ("status",)),
    ("", "v1", "ResourceQuota", "resourcequotas", True, ("status",)),
    ("", "v1", "Endpoints", "endpoints", True, ()),
    ("", "v1", "Event", "events", True, ()),
    ("", "v1", "Node", "nodes", False, ("status",)),
    ("apps", "v1", "Deployment", "deployments", True, ("scale", "status")),
    ("apps", "v1", "StatefulSet", "statefulsets", True, ("scale", "status")),
    ("apps", "v1", "DaemonSet", "daemonsets", True, ("status",)),
    ("apps", "v1", "ReplicaSet", "replicasets", True, ("scale", "status")),
    ("autoscaling", "v2", "HorizontalPodAutoscaler", "horizontalpodautoscalers", True, ("status",)),
    ("policy", "v1", "PodDisruptionBudget", "poddisruptionbudgets", True, ("status",)),
    ("networking.k8s.io", "v1", "NetworkPolicy", "networkpolicies", True, ()),
    ("rbac.authorization.k8s.io", "v1", "Role", "roles", True, ()),
    ("rbac.authorization.k8s.io", "v1", "RoleBinding", "rolebindings", True, ()),
    ("rbac.authorization.k8s.io", "v1", "ClusterRole", "clusterroles", False, ()),
    ("rbac.authorization.k8s.io", "v1", "ClusterRoleBinding", "clusterrolebindings", False, ()),
    ("scheduling.k8s.io", "v1", "PriorityClass", "priorityclasses", False, ()),
    ("admissionregistration.k8s.io", "v1", "ValidatingAdmissionPolicy", "validatingadmissionpolicies", False,
     ("status",)),
    ("admissionregistration.k8s.io", "v1", "ValidatingAdmissionPolicyBinding", "validatingadmissionpolicybindings",
     False, ()),
    ("authorization.k8s.io", "v1", "SelfSubjectAccessReview", "selfsubjectaccessreviews", False, ()),
    ("authentication.k8s.io", "v1", "SelfSubjectReview", "selfsubjectreviews", False, ()),
    ("monitoring.coreos.com", "v1", "PrometheusRule", "prometheusrules", True, ()),
    ("monitoring.coreos.com", "v1", "Prometheus", "prometheuses", True, ("status",)),
    ("kyverno.io", "v1", "ClusterPolicy", "clusterpolicies", False, ("status",)),
    ("kyverno.io", "v1", "Policy", "policies", True, ("status",)),
    ("wgpolicyk8s.io", "v1alpha2", "PolicyReport", "policyreports", True, ()),
    ("wgpolicyk8s.io", "v1alpha2", "ClusterPolicyReport", "clusterpolicyreports", False, ()),
    ("security.istio.io", "v1", "PeerAuthentication", "peerauthentications", True, ()),
    ("security.istio.io", "v1", "AuthorizationPolicy", "authorizationpolicies", True, ()),
    *[("chaos-mesh.org", "v1alpha1", k, k.lower() + ("s" if k == "Schedule" else ""), True, ())
      for k in ("Schedule", "PodChaos", "NetworkChaos", "StressChaos", "IOChaos", "TimeChaos", "DNSChaos",
                "HTTPChaos", "JVMChaos")],
]

ADDON_DEPLOYMENTS = [  # (namespace, name, labels): the controllers a cluster with the add-ons runs
    ("chaos-mesh", "chaos-controller-manager", {"app.kubernetes.io/component": "controller-manager",
                                                "app.kubernetes.io/instance": "chaos-mesh"}),
    ("istio-system", "istiod", {"app": "istiod"}),
    ("monitoring", "prometheus-operator", {"app.kubernetes.io/name": "prometheus-operator"}),
    ("kyverno", "kyverno-admission-controller", {"app.kubernetes.io/part-of": "kyverno"}),
]


def _group_version(group: str, version: str) -> str:
    return f"{group}/{version}" if group else version


class KubeServer:
    """Start with `with KubeServer() as server:`; `server.url`, `server.kubeconfig(path)`, `server.snapshot()`."""

    def __init__(self, groups: set[str] | None = None, ready_delay: float = 0.05, delete_delay: float = 0.05,
                 addons: bool = True):
        always = ("", "authorization.k8s.io", "authentication.k8s.io", "admissionregistration.k8s.io")  # built in
        self.resources = [r for r in RESOURCES if groups is None or r[0] in groups or r[0] in always]
        self.by_path = {(r[0], r[3]): r for r in self.resources}
        self.by_kind = {(r[0], r[2]): r for r in self.resources}
        self.ready_delay, self.delete_delay = ready_delay, delete_delay
        self.lock = threading.Condition()
        self.objects: dict[tuple[str, str, str, str], dict] = {}  # (group, plural, namespace, name) -> object
        self.events: list[tuple[int, str, tuple, dict]] = []
        self.rv = 100
        self.fail: dict[tuple[str, str, str], int] = {}
        # {(method, path): (status, body bytes)}: that request is answered so, as is (a 503 from a group's
        # discovery, an answer that is not JSON or not an object)
        self.raw: dict[tuple[str, str], tuple[int, bytes]] = {}
        self.watch_holds = False  # watches ignore `timeoutSeconds` and stay open, silent, until the server closes
        self.deny: set[tuple[str, str]] = set()
        self.unready = lambda pod: False
        self.alerts = lambda server: []
        # called (under the lock) after an object is stored or removed: a test's stand-in for a controller
        # (Kyverno writing PolicyReports for a ClusterPolicy, say)
        self.on_change = lambda server, event, obj: None
        self.exec_result = lambda server, namespace, pod, container, command: (0, "", "")
        self.execs: list[tuple[str, str, str, list[str]]] = []  # (namespace, pod, container, command)
        self.rules_loaded = True  # whether its Prometheus loads the PrometheusRules (`/prometheus/api/v1/rules`)
        self.requests: list[tuple[str, str, str]] = []  # (method, path, bearer token)
        self.tokens: dict[str, str] = {}  # token -> "namespace/serviceaccount"
        self.timers: list[threading.Timer] = []
        self.closed = False
        with self.lock:
            self._seed(addons)
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def _seed(self, addons: bool) -> None:
        for name in ("default", "kube-system", "kube-public"):
            self._put(self._new("", "v1", "Namespace", None, name, {}))
        if addons:
            for namespace, name, labels in ADDON_DEPLOYMENTS:
                self._put(self._new("", "v1", "Namespace", None, namespace, {}))
                deploy = self._new("apps", "v1", "Deployment", namespace, name, {
                    "spec": {"replicas": 1, "selector": {"matchLabels": labels},
                             "template": {"metadata": {"labels": labels},
                                          "spec": {"containers": [{"name": name, "image": f"{name}:1"}]}}}},
                    labels=labels)
                deploy["status"] = {"observedGeneration": 1, "replicas": 1, "readyReplicas": 1, "updatedReplicas": 1,
                                    "availableReplicas": 1}
                self._put(deploy)

    # -- lifecycle of the server ---------------------------------------------------------------------

    def __enter__(self) -> "KubeServer":
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        with self.lock:
            self.closed = True
            self.lock.notify_all()
            for timer in self.timers:
                timer.cancel()
        self.httpd.shutdown()
        self.httpd.server_close()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    @property
    def prometheus(self) -> str:
        return self.url + "/prometheus"

    def kubeconfig(self, path, token: str = "admin-token") -> str:
        config = {"apiVersion": "v1", "kind": "Config", "current-context": "test",
                  "clusters": [{"name": "test", "cluster": {"server": self.url}}],
                  "users": [{"name": "admin", "user": {"token": token}}],
                  "contexts": [{"name": "test", "context": {"cluster": "test", "user": "admin"}}]}
        with open(path, "w", encoding="utf-8") as handle:
            yaml.safe_dump(config, handle)
        return str(path)

    def snapshot(self) -> dict[tuple, dict]:
        """The store without bookkeeping, for comparing before and after a run."""
        with self.lock:
            return {k: v for k, v in sorted(self.objects.items())}

    def keys(self) -> set[tuple]:
        with self.lock:
            return set(self.objects)

    def find(self, kind: str, namespace: str | None, name: str) -> dict | None:
        with self.lock:
            for (group, plural, ns, n), obj in self.objects.items():
                if obj["kind"] == kind and (ns or None) == namespace and n == name:
                    return copy.deepcopy(obj)
        return None

    # -- the store ----------------------------------------------------------------------------------

    def _new(self, group, version, kind, namespace, name, body, labels=None) -> dict:
        obj = copy.deepcopy(body)
        obj["apiVersion"], obj["kind"] = _group_version(group, version), kind
        meta = obj.setdefault("metadata", {})
        meta["name"] = name
        if namespace:
            meta["namespace"] = namespace
        if labels:
            meta.setdefault("labels", {}).update(labels)
        return obj

    def _put(self, obj: dict, event: str | None = None) -> dict:
        """Store an object (under the lock), with its server fields, and record the watch event."""
        group = obj["apiVersion"].rpartition("/")[0]
        res = self.by_kind[(group, obj["kind"])]
        meta = obj["metadata"]
        key = (group, res[3], meta.get("namespace") or "", meta["name"])
        old = self.objects.get(key)
        self.rv += 1
        meta["resourceVersion"] = str(self.rv)
        meta.setdefault("uid", hashlib.sha1(repr(key).encode() + str(self.rv).encode()).hexdigest()[:32])
        meta.setdefault("creationTimestamp", "2025-01-01T00:00:00Z")
        if old is None:
            meta["generation"] = 1
        else:
            meta["uid"] = old["metadata"]["uid"]
            meta["creationTimestamp"] = old["metadata"]["creationTimestamp"]
            same = {k: v for k, v in old.items() if k not in ("metadata", "status")} == \
                   {k: v for k, v in obj.items() if k not in ("metadata", "status")}
            meta["generation"] = old["metadata"].get("generation", 1) + (0 if same else 1)
        if obj["kind"] == "Namespace":
            obj.setdefault("status", {"phase": "Active"})
            meta.setdefault("labels", {})["kubernetes.io/metadata.name"] = meta["name"]
        self.objects[key] = obj
        self.events.append((self.rv, event or ("ADDED" if old is None else "MODIFIED"), key, copy.deepcopy(obj)))
        self.lock.notify_all()
        self.on_change(self, "put", obj)
        return obj

    def _remove(self, key) -> None:
        obj = self.objects.pop(key, None)
        if obj is None:
            return
        self.rv += 1
        obj = copy.deepcopy(obj)
        obj["metadata"]["resourceVersion"] = str(self.rv)
        self.events.append((self.rv, "DELETED", key, obj))
        if obj["kind"] in ("Deployment", "StatefulSet", "DaemonSet", "ReplicaSet"):
            for pod_key in [k for k, o in self.objects.items() if _owned_by(o, obj)]:
                self._remove(pod_key)
        self.lock.notify_all()
        self.on_change(self, "remove", obj)

    def _later(self, delay: float, fn) -> None:
        def run():
            with self.lock:
                if not self.closed:
                    fn()
        timer = threading.Timer(delay, run)
        timer.daemon = True
        self.timers.append(timer)
        timer.start()

    # -- the controller: pods of workloads --------------------------------------------------------------

    def _reconcile(self, obj: dict) -> None:
        """Give a Deployment or StatefulSet new pods (not Ready yet) and make them Ready after a delay."""
        if obj["kind"] not in ("Deployment", "StatefulSet"):
            return
        meta, spec = obj["metadata"], obj.get("spec") or {}
        namespace, name = meta["namespace"], meta["name"]
        owners = {meta["uid"]} | {o["metadata"]["uid"] for o in self.objects.values()
                                  if o["kind"] == "ReplicaSet" and _owned_by(o, obj)}
        for key in [k for k, o in self.objects.items() if o["kind"] in ("Pod", "ReplicaSet") and any(
                r.get("uid") in owners for r in o["metadata"].get("ownerReferences") or [])]:
            self._remove(key)
        template = spec.get("template") or {}
        digest = hashlib.sha1(json.dumps(template, sort_keys=True).encode()).hexdigest()
        controller_uid = meta["uid"]
        if obj["kind"] == "Deployment":  # a Deployment's pods are its current ReplicaSet's, as upstream's
            rs_labels = dict((template.get("metadata") or {}).get("labels") or {}, **{"pod-template-hash": digest[:10]})
            rs = self._new("apps", "v1", "ReplicaSet", namespace, f"{name}-{digest[:10]}",
                           {"spec": {"replicas": spec.get("replicas", 1), "template": copy.deepcopy(template)}},
                           labels=rs_labels)
            rs["metadata"]["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": "Deployment", "name": name,
                                                  "uid": meta["uid"], "controller": True}]
            controller_uid = self._put(rs)["metadata"]["uid"]
        replicas = spec.get("replicas", 1)
        pods = []
        for index in range(replicas):
            pod_name = f"{name}-{index}" if obj["kind"] == "StatefulSet" else \
                f"{name}-{digest[:10]}-{hashlib.sha1(f'{digest}{index}'.encode()).hexdigest()[:5]}"
            labels = dict((template.get("metadata") or {}).get("labels") or {})
            if obj["kind"] == "Deployment":
                labels["pod-template-hash"] = digest[:10]
            pod = self._new("", "v1", "Pod", namespace, pod_name, {"spec": copy.deepcopy(template.get("spec") or {})},
                            labels=labels)
            pod["metadata"]["ownerReferences"] = [{
                "apiVersion": "apps/v1", "kind": "ReplicaSet" if obj["kind"] == "Deployment" else "StatefulSet",
                "name": f"{name}-{digest[:10]}" if obj["kind"] == "Deployment" else name,
                "uid": controller_uid, "controller": True}]
            pod["status"] = _pod_status(pod, ready=False)
            pods.append(self._put(pod)["metadata"]["name"])
        obj["status"] = {"observedGeneration": meta["generation"], "replicas": replicas, "readyReplicas": 0,
                         "updatedReplicas": replicas, "availableReplicas": 0}
        self._put(obj, "MODIFIED")
        generation = meta["generation"]

        def become_ready():
            current = self.objects.get(("apps", _plural_of(self, obj), namespace, name))
            if current is None or current["metadata"]["generation"] != generation:
                return
            ready = 0
            for pod_name in pods:
                pod = self.objects.get(("", "pods", namespace, pod_name))
                if pod is None or self.unready(pod):
                    continue
                pod["status"] = _pod_status(pod, ready=True)
                self._put(pod, "MODIFIED")
                ready += 1
            current["status"] = dict(current["status"], readyReplicas=ready, availableReplicas=ready)
            self._put(current, "MODIFIED")

        self._later(self.ready_delay, become_ready)

    # -- requests ------------------------------------------------------------------------------------

    def discovery(self, path: str):
        if path == "/version":
            return {"major": "1", "minor": "31", "gitVersion": "v1.31.0-kube-server", "platform": "linux/amd64"}
        if path == "/api":
            return {"kind": "APIVersions", "versions": ["v1"], "serverAddressByClientCIDRs": []}
        if path == "/apis":
            groups = sorted({(r[0], r[1]) for r in self.resources if r[0]})
            return {"kind": "APIGroupList", "apiVersion": "v1", "groups": [
                {"name": g, "versions": [{"groupVersion": f"{g}/{v}", "version": v}],
                 "preferredVersion": {"groupVersion": f"{g}/{v}", "version": v}} for g, v in groups]}
        parts = path.strip("/").split("/")
        if parts[0] == "api" and len(parts) == 2:
            group, version = "", parts[1]
        elif parts[0] == "apis" and len(parts) == 3:
            group, version = parts[1], parts[2]
        else:
            return None
        mine = [r for r in self.resources if r[0] == group and r[1] == version]
        if not mine:
            return None
        out = []
        for g, v, kind, plural, namespaced, subs in mine:
            verbs = ["create"] if kind == "SelfSubjectAccessReview" else \
                ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"]
            out.append({"name": plural, "singularName": kind.lower(), "namespaced": namespaced, "kind": kind,
                        "verbs": verbs})
            for sub in subs:
                out.append({"name": f"{plural}/{sub}", "singularName": "", "namespaced": namespaced,
                            "kind": {"scale": "Scale", "token": "TokenRequest"}.get(sub, kind),
                            **({"group": "autoscaling", "version": "v1"} if sub == "scale" else {}),
                            **({"group": "authentication.k8s.io", "version": "v1"} if sub == "token" else {}),
                            "verbs": ["create"] if sub == "token" else ["get", "patch", "update"]})
        return {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": _group_version(group, version),
                "resources": out}

    def parse(self, path: str):
        """(resource record, namespace, name, subresource) of a resource path, or None."""
        parts = path.strip("/").split("/")
        if parts[0] == "api" and len(parts) >= 3:
            group, rest = "", parts[2:]
        elif parts[0] == "apis" and len(parts) >= 4:
            group, rest = parts[1], parts[3:]
        else:
            return None
        namespace = None
        if len(rest) >= 3 and rest[0] == "namespaces" and (group, rest[2]) in self.by_path:
            namespace, rest = rest[1], rest[2:]
        res = self.by_path.get((group, rest[0]))
        if res is None or (namespace is None and res[4] and len(rest) > 1):
            return None
        return res, namespace, rest[1] if len(rest) > 1 else None, rest[2] if len(rest) > 2 else None


def _plural_of(server: KubeServer, obj: dict) -> str:
    return server.by_kind[(obj["apiVersion"].rpartition("/")[0], obj["kind"])][3]


def _owned_by(pod: dict, workload: dict) -> bool:
    return pod["kind"] in ("Pod", "ReplicaSet") and any(r.get("uid") == workload["metadata"]["uid"]
                                        for r in pod["metadata"].get("ownerReferences") or [])


def _pod_status(pod: dict, ready: bool) -> dict:
    flag = "True" if ready else "False"
    containers = (pod.get("spec") or {}).get("containers") or []
    return {"phase": "Running" if ready else "Pending",
            "conditions": [{"type": "Ready", "status": flag}, {"type": "ContainersReady", "status": flag}],
            "containerStatuses": [{"name": c.get("name"), "image": c.get("image"), "ready": ready, "restartCount": 0,
                                   "started": ready,
                                   "state": {"running": {"startedAt": "2025-01-01T00:00:00Z"}} if ready else
                                   {"waiting": {"reason": "ContainerCreating"}}} for c in containers]}


def _merge(target, patch):
    """RFC 7386 merge patch (the strategic merge patch of these tests' maps is the same)."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    out = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            out.pop(key, None)
        else:
            out[key] = _merge(out.get(key), value)
    return out


def _labels_match(obj: dict, selector: str | None) -> bool:
    if not selector:
        return True
    labels = obj["metadata"].get("labels") or {}
    for term in selector.split(","):
        key, _, value = term.partition("=")
        if labels.get(key) != value:
            return False
    return True


def _status(code: int, reason: str, message: str) -> dict:
    return {"kind": "Status", "apiVersion": "v1", "status": "Failure", "message": message, "reason": reason,
            "code": code}


def _handler(server: KubeServer):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True  # headers and body in separate segments would wait for delayed ACKs
        wbufsize = 1 << 16

        def log_message(self, *args):  # quiet
            pass

        def _send(self, code: int, body) -> None:
            data = json.dumps(body).encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _body(self):
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            if not raw:
                return {}
            try:
                return json.loads(raw)  # clients send apply patches as JSON, which is YAML
            except ValueError:
                if "yaml" not in (self.headers.get("Content-Type") or ""):
                    raise
                return yaml.load(raw.decode(), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))

        def do_GET(self):
            self._dispatch("GET")

        def do_POST(self):
            self._dispatch("POST")

        def do_PATCH(self):
            self._dispatch("PATCH")

        def do_PUT(self):
            self._dispatch("PUT")

        def do_DELETE(self):
            self._dispatch("DELETE")

        def _dispatch(self, method: str) -> None:
            url = urllib.parse.urlsplit(self.path)
            query = dict(urllib.parse.parse_qsl(url.query))
            token = (self.headers.get("Authorization") or "").removeprefix("Bearer ")
            with server.lock:
                server.requests.append((method, url.path, token))
            try:
                body = self._body() if method in ("POST", "PATCH", "PUT") else None
            except (ValueError, yaml.YAMLError) as exc:
                return self._send(400, _status(400, "BadRequest", f"body: {exc}"))
            if url.path.startswith("/prometheus/api/v1/rules"):  # a Prometheus that loads every PrometheusRule
                with server.lock:
                    groups = [g for o in server.objects.values() if o["kind"] == "PrometheusRule"
                              for g in (o.get("spec") or {}).get("groups") or []]
                return self._send(200, {"status": "success", "data": {"groups": [
                    {"name": g.get("name"), "rules": []} for g in groups if server.rules_loaded]}})
            if url.path.startswith("/prometheus/api/v1/alerts"):
                with server.lock:
                    names = list(server.alerts(server))
                return self._send(200, {"status": "success", "data": {"alerts": [
                    {"labels": {"alertname": n, "severity": "critical"}, "state": "firing", "annotations": {},
                     "activeAt": "2025-01-01T00:00:00Z", "value": "1"} for n in names]}})
            with server.lock:
                raw = server.raw.get((method, url.path))
            if raw is not None:
                self.send_response(raw[0])
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw[1])))
                self.end_headers()
                self.wfile.write(raw[1])
                return
            if method == "GET":
                found = server.discovery(url.path)
                if found is not None:
                    return self._send(200, found)
            parsed = server.parse(url.path)
            if parsed is None:
                return self._send(404, _status(404, "NotFound", f"the server could not find {url.path}"))
            res, namespace, name, sub = parsed
            with server.lock:
                code = server.fail.get((method, res[2], name or ""))
            if code:
                return self._send(code, _status(code, "InternalError", f"injected failure of {method} {url.path}"))
            if method == "GET" and query.get("watch") in ("true", "1"):
                return self._watch(res, namespace, query)
            if res[2] == "Pod" and sub == "exec" and method in ("GET", "POST"):
                return self._exec(namespace, name, urllib.parse.parse_qsl(url.query))
            with server.lock:
                code, answer = self._handle(method, res, namespace, name, sub, query, body)
            self._send(code, answer)

        def _handle(self, method, res, namespace, name, sub, query, body):
            group, version, kind, plural, namespaced, _ = res
            if kind == "SelfSubjectAccessReview" and method == "POST":
                attrs = (body.get("spec") or {}).get("resourceAttributes") or {}
                resource = attrs.get("resource", "") + (f"/{attrs['subresource']}" if attrs.get("subresource") else "")
                allowed = (attrs.get("verb"), resource) not in server.deny
                return 201, dict(body, status={"allowed": allowed})
            if kind == "SelfSubjectReview" and method == "POST":  # who the bearer token is (TokenRequest's)
                bearer = (self.headers.get("Authorization") or "").removeprefix("Bearer ").strip()
                account = server.tokens.get(bearer)
                user = (f"system:serviceaccount:{account.replace('/', ':')}" if account else "kubernetes-admin")
                return 201, dict(body, status={"userInfo": {"username": user}})
            key = (group, plural, namespace or "", name or "")
            if sub == "token" and method == "POST":
                if key not in server.objects:
                    return 404, _status(404, "NotFound", f'serviceaccounts "{name}" not found')
                token = "sa-" + hashlib.sha1(f"{namespace}/{name}/{server.rv}".encode()).hexdigest()[:20]
                server.tokens[token] = f"{namespace}/{name}"
                server.rv += 1
                return 201, {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
                             "metadata": {"name": name, "namespace": namespace}, "spec": body.get("spec") or {},
                             "status": {"token": token, "expirationTimestamp": "2030-01-01T00:00:00Z"}}
            if namespaced and namespace and method in ("POST", "PATCH", "PUT"):
                ns = server.objects.get(("", "namespaces", "", namespace))
                if ns is None:
                    return 404, _status(404, "NotFound", f'namespaces "{namespace}" not found')
                if ns["status"].get("phase") == "Terminating" and (key not in server.objects or method == "POST"):
                    return 403, _status(403, "Forbidden", f"namespace {namespace} is being terminated")
            if name is None:
                if method == "GET":
                    items = [copy.deepcopy(o) for (g, p, ns, n), o in sorted(server.objects.items())
                             if g == group and p == plural and (namespace is None or ns == namespace)
                             and _labels_match(o, query.get("labelSelector"))]
                    for item in items:
                        item.pop("apiVersion", None), item.pop("kind", None)
                    return 200, {"apiVersion": _group_version(group, version), "kind": kind + "List",
                                 "metadata": {"resourceVersion": str(server.rv)}, "items": items}
                if method == "POST":
                    name = (body.get("metadata") or {}).get("name")
                    key = (group, plural, namespace or "", name or "")
                    if not name:
                        return 422, _status(422, "Invalid", "metadata.name: Required value")
                    if key in server.objects:
                        return 409, _status(409, "AlreadyExists", f'{plural} "{name}" already exists')
                    obj = server._put(server._new(group, version, kind, namespace, name, body))
                    server._reconcile(obj)
                    return 201, obj
                if method == "DELETE":
                    doomed = [k for (k, o) in server.objects.items() if k[:3] == key[:3]
                              and _labels_match(o, query.get("labelSelector"))]
                    for k in doomed:
                        server._remove(k)
                    return 200, {"kind": "Status", "status": "Success"}
                return 405, _status(405, "MethodNotAllowed", method)
            current = server.objects.get(key)
            if method == "GET":
                if current is None:
                    return 404, _status(404, "NotFound", f'{plural}.{group or "core"} "{name}" not found')
                return 200, copy.deepcopy(current)
            if method == "DELETE":
                if current is None:
                    return 404, _status(404, "NotFound", f'{plural}.{group or "core"} "{name}" not found')
                if kind == "Namespace":
                    if current["status"].get("phase") != "Terminating":
                        current = copy.deepcopy(current)
                        current["status"] = {"phase": "Terminating"}
                        current["metadata"]["deletionTimestamp"] = "2025-01-01T00:00:00Z"
                        server._put(current, "MODIFIED")

                        def finish(ns=name):
                            for k in [k for k in server.objects if k[2] == ns]:
                                server._remove(k)
                            server._remove(("", "namespaces", "", ns))

                        server._later(server.delete_delay, finish)
                    return 200, copy.deepcopy(current)
                server._remove(key)
                return 200, {"kind": "Status", "status": "Success"}
            if method == "PATCH":
                content = self.headers.get("Content-Type") or ""
                if sub == "scale":
                    if current is None:
                        return 404, _status(404, "NotFound", name)
                    body = {"spec": {"replicas": (body.get("spec") or {}).get("replicas")}}
                    sub = None
                if "apply-patch" in content:
                    if query.get("fieldManager") in (None, ""):
                        return 400, _status(400, "BadRequest", "fieldManager is required for apply requests")
                    if (body.get("metadata") or {}).get("name") != name or body.get("kind") != kind:
                        return 400, _status(400, "BadRequest", "the applied object does not match the path")
                    obj = server._new(group, version, kind, namespace, name, body)
                    if current is not None:
                        obj["metadata"] = {**{k: v for k, v in current["metadata"].items() if k not in ("labels",
                                           "annotations")}, **obj["metadata"]}
                        if "status" in current and "status" not in body:
                            obj["status"] = current["status"]
                    obj = server._put(obj)
                else:
                    if current is None:
                        return 404, _status(404, "NotFound", f'{plural}.{group or "core"} "{name}" not found')
                    obj = server._put(_merge(copy.deepcopy(current), body))
                if current is None or obj["metadata"]["generation"] != current["metadata"]["generation"]:
                    server._reconcile(obj)
                return (201 if current is None else 200), copy.deepcopy(server.objects[key])
            return 405, _status(405, "MethodNotAllowed", method)

        def _exec(self, namespace, name, params):
            """pods/exec over a websocket (RFC 6455), subprotocol v4.channel.k8s.io: each server frame is binary,
            its first byte the channel (1 stdout, 2 stderr, 3 the error channel's Status), then a close frame."""
            command = [v for k, v in params if k == "command"]
            container = next((v for k, v in params if k == "container"), "")
            with server.lock:
                pod = server.objects.get(("", "pods", namespace, name))
                names = [c.get("name") for c in ((pod or {}).get("spec") or {}).get("containers") or []]
            if pod is None:
                return self._send(404, _status(404, "NotFound", f'pods "{name}" not found'))
            if container not in names:
                return self._send(400, _status(400, "BadRequest", f"container {container} is not valid for pod {name}"))
            key = self.headers.get("Sec-WebSocket-Key")
            offered = [p.strip() for p in (self.headers.get("Sec-WebSocket-Protocol") or "").split(",")]
            if (self.headers.get("Upgrade") or "").lower() != "websocket" or not key:
                return self._send(400, _status(400, "BadRequest", "exec needs a websocket upgrade"))
            if "v4.channel.k8s.io" not in offered:
                return self._send(400, _status(400, "BadRequest", f"unsupported subprotocols {offered}"))
            accept = base64.b64encode(hashlib.sha1((key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11").encode())
                                      .digest()).decode()
            self.send_response(101, "Switching Protocols")
            self.send_header("Upgrade", "websocket")
            self.send_header("Connection", "Upgrade")
            self.send_header("Sec-WebSocket-Accept", accept)
            self.send_header("Sec-WebSocket-Protocol", "v4.channel.k8s.io")
            self.end_headers()
            self.wfile.flush()
            self.close_connection = True
            with server.lock:
                server.execs.append((namespace, name, container, command))
            answer = server.exec_result(server, namespace, name, container, command)
            try:
                if isinstance(answer, dict):  # a Status of a failure that is not an exit code
                    self._frame(3, json.dumps(answer).encode())
                else:
                    code, out, err = answer
                    for channel, text in ((1, out), (2, err)):
                        data = text.encode() if isinstance(text, str) else text
                        for start in range(0, len(data), 256 * 1024):  # long output spans frames
                            self._frame(channel, data[start:start + 256 * 1024])
                    status = {"metadata": {}, "status": "Success"} if code == 0 else {
                        "metadata": {}, "status": "Failure", "reason": "NonZeroExitCode",
                        "message": f"command terminated with non-zero exit code: exit code {code}",
                        "details": {"causes": [{"reason": "ExitCode", "message": str(code)}]}}
                    self._frame(3, json.dumps(status).encode())
                self.wfile.write(b"\x88\x02\x03\xe8")  # close, 1000 (normal)
                self.wfile.flush()
                self._read_close()
            except (BrokenPipeError, ConnectionResetError, OSError):
                pass

        def _frame(self, channel: int, data: bytes) -> None:
            payload = bytes([channel]) + data
            length = len(payload)
            if length < 126:
                header = bytes([0x82, length])
            elif length < 1 << 16:
                header = bytes([0x82, 126]) + length.to_bytes(2, "big")
            else:
                header = bytes([0x82, 127]) + length.to_bytes(8, "big")
            self.wfile.write(header + payload)

        def _read_close(self) -> None:
            """The client's answer to the close frame (masked, as every client frame), read and dropped."""
            self.connection.settimeout(2.0)
            head = self.rfile.read(2)
            if len(head) == 2:
                length = head[1] & 0x7F
                if length == 126:
                    length = int.from_bytes(self.rfile.read(2), "big")
                elif length == 127:
                    length = int.from_bytes(self.rfile.read(8), "big")
                self.rfile.read(4 + min(length, 1 << 16))

        def _watch(self, res, namespace, query):
            group, plural = res[0], res[3]
            since = int(query.get("resourceVersion") or 0)
            deadline = time.monotonic() + float(query.get("timeoutSeconds") or 30)
            field = query.get("fieldSelector") or ""
            only = field.removeprefix("metadata.name=") if field.startswith("metadata.name=") else None
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            position = 0
            try:
                while True:
                    with server.lock:
                        batch = []
                        while position < len(server.events):
                            rv, kind, key, obj = server.events[position]
                            position += 1
                            if rv > since and key[0] == group and key[1] == plural and \
                                    (namespace is None or key[2] == namespace) and (only is None or key[3] == only):
                                batch.append({"type": kind, "object": obj})
                        if not batch:
                            remaining = deadline - time.monotonic()
                            if server.watch_holds and not server.closed:
                                remaining = 1.0
                            if remaining <= 0 or server.closed:
                                break
                            server.lock.wait(min(remaining, 0.5))
                            continue
                    for event in batch:
                        line = json.dumps(event).encode() + b"\n"
                        self.wfile.write(f"{len(line):x}\r\n".encode() + line + b"\r\n")
                    self.wfile.flush()
                self.wfile.write(b"0\r\n\r\n")
                self.wfile.flush()
            except (BrokenPipeError, ConnectionResetError):
                pass
            self.close_connection = True

    return Handler
