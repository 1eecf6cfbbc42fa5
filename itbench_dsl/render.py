"""IR topology objects as Kubernetes manifests: the one renderer, below the fault library (which renders the
objects it patches) and the backends (which write them).

Objects are built as plain dicts in the conventional key order (apiVersion, kind, metadata,
spec) so the YAML reads like hand-written manifests; empty optional fields are left out.
"""

from __future__ import annotations

from . import ir
from .memo import IdentityMemo


def _meta(name: str, namespace: str | None = None, labels: dict | None = None, annotations: dict | None = None) -> dict:
    meta: dict = {"name": name}
    if namespace is not None:
        meta["namespace"] = namespace
    if labels:
        meta["labels"] = dict(labels)
    if annotations:
        meta["annotations"] = dict(annotations)
    return meta


def render_object(obj) -> dict:
    """One IR topology object as a Kubernetes manifest (the same dict for the same object: do not mutate it)."""
    if isinstance(obj, dict):  # already a manifest (Chaos Mesh objects)
        return obj
    return _render_memo(obj)


def _render(obj) -> dict:
    return _RENDERERS[type(obj)](obj)


_render_memo = IdentityMemo(_render)


def _namespace(ns: ir.Namespace) -> dict:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": _meta(ns.name, labels=ns.labels)}


def _container(c: ir.Container) -> dict:
    out: dict = {"name": c.name, "image": c.image}
    if c.image_pull_policy:
        out["imagePullPolicy"] = c.image_pull_policy
    if c.command:
        out["command"] = list(c.command)
    if c.args:
        out["args"] = list(c.args)
    if c.ports:
        ports = []
        for p in c.ports:
            port: dict = {"containerPort": p.port}
            if p.name:
                port["name"] = p.name
            if p.protocol != "TCP":
                port["protocol"] = p.protocol
            ports.append(port)
        out["ports"] = ports
    if c.env:
        env = []
        for e in c.env:
            item: dict = {"name": e.name}
            if e.value_from is not None:
                item["valueFrom"] = e.value_from
            else:
                item["value"] = e.value if e.value is not None else ""
            env.append(item)
        out["env"] = env
    if c.resources:
        out["resources"] = {k: dict(v) for k, v in c.resources.items()}
    for key in ("livenessProbe", "readinessProbe", "startupProbe"):
        if key in c.probes:
            out[key] = c.probes[key]
    if c.volume_mounts:
        out["volumeMounts"] = [dict(m) for m in c.volume_mounts]
    if c.security_context:
        out["securityContext"] = dict(c.security_context)
    return out


# the node a static pod runs on, in the states derived offline (kind names its control plane so)
CONTROL_PLANE_NODE = "itbench-control-plane"


def static_pod_name(w: ir.Workload) -> str:
    """The mirror pod the API server shows for a static pod: `<name>-<node>`."""
    return f"{w.name}-{CONTROL_PLANE_NODE}"


def _workload(w: ir.Workload) -> dict:
    pod_spec: dict = {}
    if w.service_account:
        pod_spec["serviceAccountName"] = w.service_account
    if w.automount_service_account_token is not None:
        pod_spec["automountServiceAccountToken"] = w.automount_service_account_token
    if w.security_context:
        pod_spec["securityContext"] = dict(w.security_context)
    if w.termination_grace_period_seconds is not None:
        pod_spec["terminationGracePeriodSeconds"] = w.termination_grace_period_seconds
    if w.affinity:
        pod_spec["affinity"] = w.affinity
    for key, value in (("hostNetwork", w.host_network), ("hostPID", w.host_pid), ("hostIPC", w.host_ipc)):
        if value is not None:
            pod_spec[key] = value
    if w.node_selector:
        pod_spec["nodeSelector"] = dict(w.node_selector)
    if w.dns_policy:
        pod_spec["dnsPolicy"] = w.dns_policy
    if w.priority_class_name:
        pod_spec["priorityClassName"] = w.priority_class_name
    if w.init_containers:
        pod_spec["initContainers"] = [_container(c) for c in w.init_containers]
    pod_spec["containers"] = [_container(c) for c in w.containers]
    if w.volumes:
        pod_spec["volumes"] = [dict(v) for v in w.volumes]
    if w.kind == "Pod" and w.bare:  # a pod of its own: its labels and annotations are the object's
        if w.restart_policy:
            pod_spec = {"restartPolicy": w.restart_policy, **pod_spec}
        return {"apiVersion": "v1", "kind": "Pod", "metadata": _meta(w.name, w.namespace, w.labels, w.annotations),
                "spec": pod_spec}
    if w.kind == "Pod":  # a static pod's mirror pod, as the cluster shows it
        pod_spec["nodeName"] = CONTROL_PLANE_NODE
        meta = _meta(static_pod_name(w), w.namespace, w.labels, w.annotations)
        return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": pod_spec}
    if w.kind in ("Job", "CronJob"):
        return _job(w, pod_spec)
    spec: dict = {"replicas": w.replicas, "selector": {"matchLabels": dict(w.selector)}}
    if w.kind == "StatefulSet":
        spec["serviceName"] = w.service_name or w.name
        if w.pod_management_policy:
            spec["podManagementPolicy"] = w.pod_management_policy
    if w.strategy:
        spec["strategy"] = {"type": w.strategy}
    spec["template"] = {"metadata": _meta_template(w), "spec": pod_spec}
    return {"apiVersion": "apps/v1", "kind": w.kind,
            "metadata": _meta(w.name, w.namespace, w.object_labels, w.object_annotations), "spec": spec}


def _job(w: ir.Workload, pod_spec: dict) -> dict:
    """A Job, or a CronJob whose job template is that Job's spec; the Job controller writes the selector."""
    pod_spec = {"restartPolicy": w.restart_policy or "Never", **pod_spec}
    job: dict = {}
    for key, value in (("completions", w.completions), ("parallelism", w.parallelism),
                       ("backoffLimit", w.backoff_limit), ("activeDeadlineSeconds", w.active_deadline_seconds)):
        if value is not None:
            job[key] = value
    job["template"] = {"metadata": _meta_template(w), "spec": pod_spec}
    meta = _meta(w.name, w.namespace, w.object_labels, w.object_annotations)
    if w.kind == "Job":
        return {"apiVersion": "batch/v1", "kind": "Job", "metadata": meta, "spec": job}
    spec: dict = {"schedule": w.schedule or "@hourly"}
    if w.concurrency_policy:
        spec["concurrencyPolicy"] = w.concurrency_policy
    if w.suspend is not None:
        spec["suspend"] = w.suspend
    spec["jobTemplate"] = {"spec": job}
    return {"apiVersion": "batch/v1", "kind": "CronJob", "metadata": meta, "spec": spec}


def _meta_template(w: ir.Workload) -> dict:
    meta: dict = {"labels": dict(w.labels)}
    if w.annotations:
        meta["annotations"] = dict(w.annotations)
    return meta


def _service(s: ir.Service) -> dict:
    ports = []
    for p in s.ports:
        port: dict = {}
        if p.name:
            port["name"] = p.name
        port["port"] = p.port
        port["targetPort"] = p.target_port
        if p.protocol != "TCP":
            port["protocol"] = p.protocol
        if p.app_protocol:
            port["appProtocol"] = p.app_protocol
        ports.append(port)
    spec: dict = {}
    if s.type != "ClusterIP":
        spec["type"] = s.type
    if s.cluster_ip:
        spec["clusterIP"] = s.cluster_ip
    if s.publish_not_ready_addresses is not None:
        spec["publishNotReadyAddresses"] = s.publish_not_ready_addresses
    spec["selector"] = dict(s.selector)
    spec["ports"] = ports
    return {"apiVersion": "v1", "kind": "Service", "metadata": _meta(s.name, s.namespace, s.labels, s.annotations),
            "spec": spec}


def _configmap(c: ir.ConfigMap) -> dict:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": _meta(c.name, c.namespace, c.labels), "data": dict(c.data)}


def _secret(s: ir.Secret) -> dict:
    return {"apiVersion": "v1", "kind": "Secret", "metadata": _meta(s.name, s.namespace, s.labels), "type": s.type,
            "stringData": dict(s.data)}


def _service_account(s: ir.ServiceAccount) -> dict:
    out = {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": _meta(s.name, s.namespace, s.labels)}
    if s.automount_service_account_token is not None:
        out["automountServiceAccountToken"] = s.automount_service_account_token
    return out


def _autoscaler(h: ir.Autoscaler) -> dict:
    metrics = []
    for resource, value in (("cpu", h.cpu_utilization), ("memory", h.memory_utilization)):
        if value is not None:
            metrics.append({"type": "Resource", "resource": {"name": resource, "target": {
                "type": "Utilization", "averageUtilization": int(value)}}})
    return {
        "apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler", "metadata": _meta(h.name, h.namespace),
        "spec": {
            "scaleTargetRef": {"apiVersion": h.target.api_version, "kind": h.target.kind, "name": h.target.name},
            "minReplicas": h.min_replicas, "maxReplicas": h.max_replicas, "metrics": metrics,
        },
    }


def _storage_class(c: ir.StorageClass) -> dict:
    out: dict = {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": _meta(c.name, labels=c.labels),
                 "provisioner": c.provisioner}
    if c.parameters:
        out["parameters"] = dict(c.parameters)
    if c.reclaim_policy:
        out["reclaimPolicy"] = c.reclaim_policy
    if c.volume_binding_mode:
        out["volumeBindingMode"] = c.volume_binding_mode
    if c.allow_volume_expansion is not None:
        out["allowVolumeExpansion"] = c.allow_volume_expansion
    return out


def _persistent_volume(v: ir.PersistentVolume) -> dict:
    spec: dict = {"capacity": {"storage": v.capacity}, "accessModes": list(v.access_modes)}
    if v.storage_class is not None:
        spec["storageClassName"] = v.storage_class
    if v.reclaim_policy:
        spec["persistentVolumeReclaimPolicy"] = v.reclaim_policy
    if v.volume_mode:
        spec["volumeMode"] = v.volume_mode
    spec.update({key: dict(value) for key, value in v.source.items()})
    return {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": _meta(v.name, labels=v.labels), "spec": spec}


def _claim(c: ir.PersistentVolumeClaim) -> dict:
    spec: dict = {"accessModes": list(c.access_modes)}
    if c.storage_class is not None:
        spec["storageClassName"] = c.storage_class
    if c.volume_name:
        spec["volumeName"] = c.volume_name
    if c.volume_mode:
        spec["volumeMode"] = c.volume_mode
    spec["resources"] = {"requests": {"storage": c.storage}}
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": _meta(c.name, c.namespace, c.labels),
            "spec": spec}


def _role(r: ir.Role) -> dict:
    kind = "Role" if r.namespace is not None else "ClusterRole"
    return {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": kind, "metadata": _meta(r.name, r.namespace, r.labels),
            "rules": [dict(rule) for rule in r.rules]}


def _role_binding(b: ir.RoleBinding) -> dict:
    kind = "RoleBinding" if b.namespace is not None else "ClusterRoleBinding"
    return {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": kind, "metadata": _meta(b.name, b.namespace, b.labels),
            "roleRef": dict(b.role_ref), "subjects": [dict(s) for s in b.subjects]}


def _ingress_backend(b: ir.IngressBackend) -> dict:
    port = {"name": b.port} if isinstance(b.port, str) else {"number": b.port}
    return {"service": {"name": b.service, "port": port}}


def _ingress(ing: ir.Ingress) -> dict:
    spec: dict = {}
    if ing.class_name:
        spec["ingressClassName"] = ing.class_name
    if ing.default_backend is not None:
        spec["defaultBackend"] = _ingress_backend(ing.default_backend)
    if ing.rules:
        rules = []
        for rule in ing.rules:
            out: dict = {"host": rule.host} if rule.host else {}
            out["http"] = {"paths": [{"path": p.path, "pathType": p.path_type, "backend": _ingress_backend(p.backend)}
                                     for p in rule.paths]}
            rules.append(out)
        spec["rules"] = rules
    return {"apiVersion": "networking.k8s.io/v1", "kind": "Ingress",
            "metadata": _meta(ing.name, ing.namespace, ing.labels, ing.annotations), "spec": spec}


_RENDERERS = {
    ir.Namespace: _namespace, ir.Workload: _workload, ir.Service: _service, ir.ConfigMap: _configmap,
    ir.Secret: _secret, ir.ServiceAccount: _service_account, ir.Autoscaler: _autoscaler,
    ir.StorageClass: _storage_class, ir.PersistentVolume: _persistent_volume, ir.PersistentVolumeClaim: _claim,
    ir.Role: _role, ir.RoleBinding: _role_binding, ir.Ingress: _ingress,
}
