"""Topology objects from their `.itb` bodies, and the standard library of applications.

A topology is namespaces, workloads (deployments and statefulsets with their containers),
services, configmaps, secrets, service accounts, autoscalers, storage (storage classes,
persistent volumes and their claims), RBAC (roles, cluster roles and their bindings) and dependency
edges between components.

`use app "NAME"` brings in an application written in `.itb`: one shipped in the package
(`itbench_dsl/stdlib/apps/NAME.itb`), one found on the application search path, or a local
file (`use app "./apps/x.itb"`, relative to the importing file). Loading, composing and
renaming applications is `applications.py`'s.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from . import ast, ir
from .diagnostics import did_you_mean
from .reader import MISSING, Body, Context, convert
from .source import Span
from .units import cron_syntax_problem, parse_memory

DNS1123_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?\Z")
_LABEL_NAME = re.compile(r"([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)?\Z")


def label_problem(key: str, value: str | None) -> tuple[str, str] | None:
    """Why a label (or, with value None, an annotation key) is not valid Kubernetes syntax, if it is not."""
    prefix, _, name = key.rpartition("/")
    if (prefix and (len(prefix) > 253 or not DNS1123_SUBDOMAIN.match(prefix))) or not name or len(name) > 63 \
            or not _LABEL_NAME.match(name):
        return f"`{key}` is not a valid label key", "key"
    if value is not None and (len(value) > 63 or not _LABEL_NAME.match(value)):
        return f"`{value}` is not a valid label value", "value"
    return None


def annotation_problem(key: str, value: str) -> tuple[str, str] | None:
    return label_problem(key, None)


DNS1123_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\Z")

# language kind -> (apiVersion, Kubernetes kind)
KINDS = {
    "namespace": ("v1", "Namespace"),
    "deployment": ("apps/v1", "Deployment"),
    "statefulset": ("apps/v1", "StatefulSet"),
    # run to completion: a Job's pods, and a CronJob's Jobs on a schedule (a pod template each, no replicas kept)
    "job": ("batch/v1", "Job"),
    "cronjob": ("batch/v1", "CronJob"),
    "service": ("v1", "Service"),
    "configmap": ("v1", "ConfigMap"),
    "secret": ("v1", "Secret"),
    "serviceaccount": ("v1", "ServiceAccount"),
    "hpa": ("autoscaling/v2", "HorizontalPodAutoscaler"),
    # a static pod: the kubelet runs it from a manifest on the node (etcd, the API server), and the API
    # server shows it as the mirror pod `<name>-<node>`. Only the cluster provides one.
    "static_pod": ("v1", "Pod"),
    # a Pod the scenario deploys on its own, no controller owning it: it is replaced, never rolled out
    "pod": ("v1", "Pod"),
    "storageclass": ("storage.k8s.io/v1", "StorageClass"),
    "persistentvolume": ("v1", "PersistentVolume"),
    "persistentvolumeclaim": ("v1", "PersistentVolumeClaim"),
    # RBAC of the application's own components (a collector reading pods, a dashboard's sidecar)
    "role": ("rbac.authorization.k8s.io/v1", "Role"),
    "clusterrole": ("rbac.authorization.k8s.io/v1", "ClusterRole"),
    "rolebinding": ("rbac.authorization.k8s.io/v1", "RoleBinding"),
    "clusterrolebinding": ("rbac.authorization.k8s.io/v1", "ClusterRoleBinding"),
    # the rules an ingress controller of its class routes by, to Services of its namespace
    "ingress": ("networking.k8s.io/v1", "Ingress"),
}
# kinds without a namespace
CLUSTER_SCOPED_KINDS = ("namespace", "storageclass", "persistentvolume", "clusterrole", "clusterrolebinding")
RBAC_KINDS = ("role", "clusterrole", "rolebinding", "clusterrolebinding")
# ClusterRoles every cluster has: the user-facing defaults, and the `system:` ones the API server bootstraps.
# A binding may name one without declaring it; any other role must be declared.
CLUSTER_DEFAULT_ROLES = ("cluster-admin", "admin", "edit", "view")
SYSTEM_PREFIX = "system:"
# the ServiceAccount the agent works as: the agent's access (backends/manifests.agent_access) names its
# ServiceAccount, Roles, RoleBindings, ClusterRole and ClusterRoleBinding so; a topology may not take the name
AGENT_SERVICE_ACCOUNT = "itbench-agent"
# Storage classes every cluster ITBench runs on provides: kind's default class, `standard` (the
# local-path provisioner). A claim may name one without declaring it; any other class must be a
# declared `storageclass`, or the class of a declared `persistentvolume` (static binding needs no
# StorageClass object). `""` asks for no class at all (static binding only).
CLUSTER_STORAGE_CLASSES = ("standard",)
ACCESS_MODES = ("ReadWriteOnce", "ReadOnlyMany", "ReadWriteMany", "ReadWriteOncePod")
# kinds that can be referenced but are not declared: they exist at run time
RUNTIME_KINDS = {"pod": ("v1", "Pod")}
# a Gateway API Gateway that the application's installation deploys, named by its metadata (`gateway`)
RUNTIME_KINDS["gateway"] = ("gateway.networking.k8s.io/v1", "Gateway")
WORKLOAD_KINDS = ("deployment", "statefulset", "static_pod", "pod", "job", "cronjob")
# the kinds that run to completion: `complete` tests them, `ready` does not
COMPLETING_KINDS = ("job", "cronjob")
# Istio's ambient mode enrols a namespace's pods by this namespace label
DATAPLANE_LABEL = "istio.io/dataplane-mode"
# the labels a service mesh's installation puts on an application's namespaces (`service_mesh` in its metadata)
MESH_NAMESPACE_LABELS = {"istio-ambient": {DATAPLANE_LABEL: "ambient"}}
# resources the agent's access may name (`agent { read = [...] write = [...] }`) -> their API group
AGENT_RESOURCES = {
    "pods": "", "pods/log": "", "pods/exec": "", "events": "", "services": "", "endpoints": "", "configmaps": "",
    "secrets": "", "serviceaccounts": "", "persistentvolumeclaims": "", "resourcequotas": "", "limitranges": "",
    "deployments": "apps", "statefulsets": "apps", "replicasets": "apps", "daemonsets": "apps",
    "deployments/scale": "apps", "statefulsets/scale": "apps",
    "horizontalpodautoscalers": "autoscaling", "networkpolicies": "networking.k8s.io", "ingresses": "networking.k8s.io",
    "poddisruptionbudgets": "policy", "jobs": "batch", "cronjobs": "batch",
    "policies": "kyverno.io", "policyreports": "wgpolicyk8s.io",
    "schedules": "chaos-mesh.org", "networkchaos": "chaos-mesh.org", "podchaos": "chaos-mesh.org",
    "stresschaos": "chaos-mesh.org", "httpchaos": "chaos-mesh.org", "iochaos": "chaos-mesh.org",
    "dnschaos": "chaos-mesh.org", "timechaos": "chaos-mesh.org", "jvmchaos": "chaos-mesh.org",
    "controllerrevisions": "apps",
    "peerauthentications": "security.istio.io", "authorizationpolicies": "security.istio.io",
    "gateways": "gateway.networking.k8s.io",
    "roles": "rbac.authorization.k8s.io", "rolebindings": "rbac.authorization.k8s.io",
    # cluster-scoped
    "namespaces": "", "nodes": "", "clusterpolicies": "kyverno.io", "clusterpolicyreports": "wgpolicyk8s.io",
    "persistentvolumes": "", "storageclasses": "storage.k8s.io",
}
CLUSTER_RESOURCES = {"namespaces", "nodes", "clusterpolicies", "clusterpolicyreports", "persistentvolumes",
                     "storageclasses"}


def cron_problem(schedule: str) -> str | None:
    """Why a CronJob's schedule is not one the CronJob controller parses (robfig/cron's standard parser: five
    fields or a descriptor, `@every DURATION` too), None when it is."""
    spec = schedule.strip()
    if spec.startswith("@every "):
        return None
    if not spec.startswith(("@", "TZ=", "CRON_TZ=")) and len(spec.split()) == 6:
        return "a CronJob's schedule has 5 fields (minute hour day-of-month month day-of-week), not 6"
    return cron_syntax_problem(spec)


@dataclass
class Declared:
    """Where each declared object came from, for references and duplicate reports."""

    kind: str
    name: str
    namespace: str | None
    span: Span
    path: str
    obj: object


@dataclass
class TopologyBuild:
    namespaces: list[ir.Namespace] = field(default_factory=list)
    workloads: list[ir.Workload] = field(default_factory=list)
    services: list[ir.Service] = field(default_factory=list)
    configmaps: list[ir.ConfigMap] = field(default_factory=list)
    secrets: list[ir.Secret] = field(default_factory=list)
    service_accounts: list[ir.ServiceAccount] = field(default_factory=list)
    autoscalers: list[ir.Autoscaler] = field(default_factory=list)
    edges: list[list[str]] = field(default_factory=list)
    declared: dict[tuple[str, str, str], Declared] = field(default_factory=dict)  # (kind, ns, name)
    application: str | None = None  # the standard-library application's id (ITBench's application)
    app_metadata: dict = field(default_factory=dict)
    storage_classes: list[ir.StorageClass] = field(default_factory=list)
    persistent_volumes: list[ir.PersistentVolume] = field(default_factory=list)
    claims: list[ir.PersistentVolumeClaim] = field(default_factory=list)
    display_name: str | None = None  # the application's name for people, when it is not `application`
    modules: dict[str, str] = field(default_factory=dict)  # the applications it is made of: name -> file
    roles: list[ir.Role] = field(default_factory=list)  # Roles and ClusterRoles
    role_bindings: list[ir.RoleBinding] = field(default_factory=list)  # RoleBindings and ClusterRoleBindings
    ingresses: list[ir.Ingress] = field(default_factory=list)
    # the local application files it is made of: app name -> sha256 of the bytes read (bundle.lock records them)
    module_hashes: dict[str, str] = field(default_factory=dict)

    def to_ir(self) -> ir.Topology:
        return ir.Topology(self.application, self.namespaces, self.workloads, self.services, self.configmaps,
                           self.secrets, self.service_accounts, self.autoscalers, self.edges,
                           self.app_metadata.get("itbench_key"), storage_classes=self.storage_classes,
                           persistent_volumes=self.persistent_volumes, claims=self.claims,
                           display_name=self.display_name, roles=self.roles, role_bindings=self.role_bindings,
                           ingresses=self.ingresses)

    def copy(self) -> "TopologyBuild":
        """Own lists and index, shared (never mutated) objects: faults copy an object before they change it."""
        return TopologyBuild(
            list(self.namespaces), list(self.workloads), list(self.services), list(self.configmaps),
            list(self.secrets), list(self.service_accounts), list(self.autoscalers), [list(e) for e in self.edges],
            dict(self.declared), self.application, dict(self.app_metadata), list(self.storage_classes),
            list(self.persistent_volumes), list(self.claims), self.display_name, dict(self.modules),
            list(self.roles), list(self.role_bindings), ingresses=list(self.ingresses),
            module_hashes=dict(self.module_hashes),
        )

    def find(self, kind: str, name: str) -> list[Declared]:
        return [d for (k, _, n), d in self.declared.items() if k == kind and n == name]

    def names_of(self, kind: str) -> list[str]:
        return [n for (k, _, n) in self.declared if k == kind]

    def workload(self, name: str, namespace: str | None = None) -> ir.Workload | None:
        for w in self.workloads:
            if w.name == name and (namespace is None or w.namespace == namespace):
                return w
        return None


def _binding_problem(claim: ir.PersistentVolumeClaim, volume: ir.PersistentVolume) -> str | None:
    """Why a claim that names `volume` would not bind to it, if it would not."""

    if claim.storage_class is not None and (claim.storage_class or None) != (volume.storage_class or None):
        return (f"the claim's storage class is `{claim.storage_class}`, the volume's "
                f"`{volume.storage_class or ''}`")
    if parse_memory(volume.capacity) < parse_memory(claim.storage):
        return f"the volume holds {volume.capacity}, the claim asks for {claim.storage}"
    missing = [m for m in claim.access_modes if m not in volume.access_modes]
    if missing:
        return f"the volume does not offer {', '.join(missing)}"
    return None


def pod_names(w: ir.Workload) -> tuple[str, ...]:
    """Names a workload's pods take, as a pattern is matched against them: a bare pod's own name; a
    controller's pod `<name>-<hash>-<suffix>`, or `<name>-0` (a StatefulSet's ordinal)."""
    if w.kind == "Pod" and w.bare:
        return (w.name,)
    return (f"{w.name}-7d4b9c8f6-x2x9q", f"{w.name}-0")


def pod_pattern_owner(pattern: str, owners: list[str]) -> str | None:
    """Which of `owners` (workloads whose pods `pattern` matches) the pattern was written for.

    `pod "frontend-*"` matches the pods of `frontend` and of `frontend-proxy`; it names `frontend`,
    the workload its literal part spells. Failing that, the longest owner its literal part starts
    with (`checkout-7d*` is checkout's), else the longest owner."""
    if not owners:
        return None
    literal = re.split(r"[*?\[]", pattern, maxsplit=1)[0]
    if literal.rstrip("-") in owners:
        return literal.rstrip("-")
    prefixed = [o for o in owners if literal.startswith(f"{o}-")]
    return max(prefixed or owners, key=lambda name: (len(name), name))


def app_gateways(build: TopologyBuild) -> list[tuple[str, str]]:
    """(namespace, name) of the Gateway API Gateways the application's installation deploys.

    The application's metadata names them: `gateway = "NAME"` (or a list; `"NAMESPACE/NAME"` for
    another namespace than the application's first one).
    """
    declared = build.app_metadata.get("gateway")
    names = [declared] if isinstance(declared, str) else declared if isinstance(declared, list) else []
    home = build.namespaces[0].name if build.namespaces else "default"
    out = []
    for entry in names:
        if isinstance(entry, str) and entry:
            namespace, _, name = entry.rpartition("/")
            out.append((namespace or home, name))
    return out


# ---- building ---------------------------------------------------------------------------------


class TopologyBuilder:
    def __init__(self, ctx: Context, build: TopologyBuild) -> None:
        self.ctx = ctx
        self.build = build
        # references checked once every object is known (resolve_references): a pod volume's claim
        # (namespace, claim, where, path), a claim's class and volume (claim, class span, volume span, path)
        self.claim_uses: list[tuple[str, str, Span, str]] = []
        # (namespace, backend, service span, port span, file) of each ingress backend, checked once all is declared
        self.ingress_backends: list[tuple[str, ir.IngressBackend, Span, Span, str]] = []
        self.claim_refs: list[tuple[ir.PersistentVolumeClaim, Span | None, Span | None, str]] = []
        # a binding's role and subjects: (binding, role span, [(subject, span)], path)
        self.binding_refs: list[tuple[ir.RoleBinding, Span, list[tuple[dict, Span]], str]] = []
        self._binding_spans: dict[int, tuple[Span, list[tuple[dict, Span]]]] = {}

    def add_statements(self, statements, ctx: Context | None = None) -> None:
        saved = self.ctx
        if ctx is not None:
            self.ctx = ctx
        objects = [s for s in statements if isinstance(s, ast.Object)]
        # namespaces first: other objects default to the single declared namespace
        for obj in objects:
            if obj.kind == "namespace":
                self.namespace(obj)
        for obj in objects:
            if obj.kind != "namespace":
                self.object(obj)
        for stmt in statements:
            if isinstance(stmt, ast.Edge):
                self.edge(stmt)
        self.ctx = saved

    def check_name(self, name: str, span: Span, what: str, subdomain: bool = False) -> None:
        if what in RBAC_KINDS:  # RBAC names are path segments: `system:aggregate-to-view` is one
            if name in (".", "..") or not name or any(c in name for c in "/%") or len(name) > 253:
                self.ctx.error("E2014", f"{what} name `{name}` is not a valid Kubernetes name", span, "invalid name",
                               help="an RBAC name may not be `.` or `..` nor hold `/` or `%`")
            return
        rule = DNS1123_SUBDOMAIN if subdomain else DNS1123_LABEL
        if len(name) > (253 if subdomain else 63) or not rule.match(name):
            self.ctx.error("E2014", f"{what} name `{name}` is not a valid Kubernetes name", span, "invalid name",
                           help="use lower-case letters, digits and `-`, starting and ending with a letter or digit")

    def declare(self, kind: str, name: str, namespace: str | None, span: Span, obj: object) -> bool:
        key = (kind, namespace or "", name)
        if key in self.build.declared:
            first = self.build.declared[key]
            self.ctx.error("E2002", f"{kind} `{name}` is declared twice", span, "second declaration",
                           help=f"the first is at {first.path}:{first.span.line}:{first.span.column}")
            return False
        if name == AGENT_SERVICE_ACCOUNT and kind in (*RBAC_KINDS, "serviceaccount"):
            self.ctx.error("E2002", f"{kind} `{name}` has the name of the agent's own access objects", span,
                           "name taken", help=f"the bundle's agent access declares the ServiceAccount, roles and "
                           f"bindings `{AGENT_SERVICE_ACCOUNT}`: rename this {kind}")
            return False
        self.build.declared[key] = Declared(kind, name, namespace, span, self.ctx.path, obj)
        return True

    def namespace(self, obj: ast.Object) -> None:
        self.check_name(obj.name, obj.name_span, "namespace")
        body = Body(self.ctx, obj.entries, f"namespace `{obj.name}`", obj.span)
        ns = ir.Namespace(obj.name, body.string_map("labels", label_problem))
        ns.provided = True if body.attr("provided", "bool") else None
        body.finish()
        if self.declare("namespace", obj.name, None, obj.name_span, ns):
            self.build.namespaces.append(ns)

    def resolve_namespace(self, body: Body, obj: ast.Object) -> str | None:
        declared = [n.name for n in self.build.namespaces]
        explicit = body.attr("namespace", "str")
        if explicit is not None:
            if explicit not in declared:
                hint = did_you_mean(explicit, declared)
                self.ctx.error("E2016", f"namespace `{explicit}` is not declared", body.attr_span("namespace"),
                               "unknown namespace", help=f"did you mean `{hint}`?" if hint else
                               f'declare it: `namespace "{explicit}"`')
                return None
            return explicit
        if len(declared) == 1:
            return declared[0]
        if not declared:
            self.ctx.error("E2016", f"{obj.kind} `{obj.name}` has no namespace: the topology declares none",
                           obj.kind_span, "no namespace", help='declare one: `namespace "shop"`')
        else:
            self.ctx.error("E2016", f"{obj.kind} `{obj.name}` must say its namespace: the topology declares "
                           f"{', '.join(declared)}", obj.kind_span, "which namespace?",
                           help=f'add `namespace = "{declared[0]}"`')
        return None

    def object(self, obj: ast.Object) -> None:
        builder = getattr(self, "obj_" + obj.kind, None)
        if builder is None:
            hint = did_you_mean(obj.kind, KINDS)
            self.ctx.error("E2015", f"unknown object kind `{obj.kind}`", obj.kind_span, "unknown kind",
                           help=f"did you mean `{hint}`?" if hint else "known kinds: " + ", ".join(sorted(KINDS)))
            return
        body = Body(self.ctx, obj.entries, f"{obj.kind} `{obj.name}`", obj.span)
        if obj.kind in CLUSTER_SCOPED_KINDS:
            if body.has("namespace"):
                self.ctx.error("E2006", f"a {obj.kind} is cluster-scoped: it has no namespace", body.attr_span("namespace"),
                               "cluster-scoped", help="remove `namespace`")
                body.attr("namespace", "any")
            self.check_name(obj.name, obj.name_span, obj.kind, subdomain=True)
            result = builder(obj, body)
            body.finish()
            if result is not None and self.declare(obj.kind, obj.name, None, obj.name_span, result):
                {"storageclass": self.build.storage_classes, "persistentvolume": self.build.persistent_volumes,
                 "clusterrole": self.build.roles, "clusterrolebinding": self.build.role_bindings}[obj.kind].append(result)
                if obj.kind == "clusterrolebinding":
                    self._pending_binding(result)
            return
        namespace = self.resolve_namespace(body, obj)
        self.check_name(obj.name, obj.name_span, obj.kind,
                        subdomain=obj.kind in ("configmap", "secret", "persistentvolumeclaim"))
        result = builder(obj, body, namespace or "default")
        body.finish()
        if obj.kind == "static_pod" and namespace is not None and not self.provided(namespace):
            self.ctx.error("E2029", f"static pod `{obj.name}` is in namespace `{namespace}`, which the scenario deploys",
                           obj.kind_span, "not deployable",
                           help=f"the kubelet runs static pods from the node's manifests: declare the namespace the "
                           f'cluster provides, `namespace "{namespace}" {{ provided = true }}`')
        if result is not None and namespace is not None and self.declare(obj.kind, obj.name, namespace, obj.name_span, result):
            target = {
                "deployment": self.build.workloads, "statefulset": self.build.workloads,
                "static_pod": self.build.workloads, "pod": self.build.workloads, "job": self.build.workloads, "cronjob": self.build.workloads,
                "service": self.build.services, "configmap": self.build.configmaps, "secret": self.build.secrets,
                "serviceaccount": self.build.service_accounts, "hpa": self.build.autoscalers,
                "persistentvolumeclaim": self.build.claims, "role": self.build.roles,
                "rolebinding": self.build.role_bindings, "ingress": self.build.ingresses,
            }[obj.kind]
            target.append(result)
            if obj.kind == "rolebinding":
                self._pending_binding(result)

    # ---- workloads
    def obj_deployment(self, obj: ast.Object, body: Body, namespace: str) -> ir.Workload:
        return self.workload("Deployment", obj, body, namespace)

    def obj_statefulset(self, obj: ast.Object, body: Body, namespace: str) -> ir.Workload:
        return self.workload("StatefulSet", obj, body, namespace)

    def obj_job(self, obj: ast.Object, body: Body, namespace: str) -> ir.Workload:
        return self.workload("Job", obj, body, namespace)

    def obj_cronjob(self, obj: ast.Object, body: Body, namespace: str) -> ir.Workload:
        return self.workload("CronJob", obj, body, namespace)

    def obj_static_pod(self, obj: ast.Object, body: Body, namespace: str) -> ir.Workload:
        return self.workload("Pod", obj, body, namespace)

    def obj_pod(self, obj: ast.Object, body: Body, namespace: str) -> ir.Workload:
        return self.workload("Pod", obj, body, namespace, bare=True)

    def provided(self, namespace: str) -> bool:
        return any(n.name == namespace and n.provided for n in self.build.namespaces)

    def workload(self, kind: str, obj: ast.Object, body: Body, namespace: str, bare: bool = False) -> ir.Workload:
        # a static pod: one pod per node the kubelet runs it on, selected by its labels; a bare pod: one pod
        static = kind == "Pod"
        completing = kind in ("Job", "CronJob")  # runs to completion: no replicas kept ready, no selector written
        replicas = 1 if static else 0 if completing else body.attr("replicas", "nonneg_int", default=1)
        labels = body.string_map("labels", label_problem) or {"app.kubernetes.io/name": obj.name}
        selector = dict(labels) if static or completing else body.string_map("selector", label_problem) or dict(labels)
        # a bare pod is its own object: its `labels` and `annotations` are the object's
        object_labels = {} if bare else body.string_map("object_labels", label_problem)
        service_account = body.attr("service_account", "str")
        service_name = body.attr("service_name", "str") if kind == "StatefulSet" else None
        container_blocks, init_blocks = body.blocks("container"), body.blocks("init_container")
        containers = [self.container(b, b.labels[0], f"container `{b.labels[0]}`") for b in container_blocks]
        init_containers = [self.container(b, b.labels[0], f"init container `{b.labels[0]}`") for b in init_blocks]
        # single-container shorthand: container fields directly in the workload body
        if body.has("image") or not containers:
            if containers:
                self.ctx.error("E2008", f"{obj.kind} `{obj.name}` has `container` blocks and a top-level `image`",
                               body.attr_span("image"), help="move `image` into a `container` block")
            # no image and no container block: the shorthand's fields are still read (and `image` reported missing)
            containers.insert(0, self.container_fields(body, obj.name, obj.kind_span, shorthand=True))
        spans = [b.key_span for b in container_blocks + init_blocks]
        self.unique([c.name for c in containers + init_containers], "container",
                    [obj.kind_span] * (len(containers) - len(container_blocks)) + spans)
        volume_blocks = body.blocks("volume")
        volumes = [self.volume(b) for b in volume_blocks]
        for block, volume in zip(volume_blocks, volumes):
            if volume and "persistentVolumeClaim" in volume:
                where = next((e.value.span for e in block.entries if isinstance(e, ast.Attr) and e.key == "claim"),
                             block.key_span)
                self.claim_uses.append((namespace, volume["persistentVolumeClaim"]["claimName"], where, self.ctx.path))
        workload = ir.Workload(kind, obj.name, namespace, replicas, labels, selector, containers, object_labels,
                               init_containers, [v for v in volumes if v], service_account, service_name)
        workload.annotations = body.string_map("annotations", annotation_problem)
        workload.object_annotations = {} if bare else body.string_map("object_annotations", annotation_problem)
        workload.automount_service_account_token = body.attr("automount_service_account_token", "bool")
        grace = body.attr("termination_grace_period", "duration")
        workload.termination_grace_period_seconds = int(grace) if grace is not None else None
        workload.security_context = self.security_context(body.block("security_context"), pod=True)
        affinity = body.attr("affinity", "any")
        if affinity is not None and not isinstance(affinity, dict):
            self.ctx.error("E2008", "`affinity` is a map in Kubernetes form", body.attr_span("affinity"))
            affinity = None
        workload.affinity = affinity
        workload.host_network = body.attr("host_network", "bool")
        workload.host_pid = body.attr("host_pid", "bool")
        workload.host_ipc = body.attr("host_ipc", "bool")
        workload.node_selector = body.string_map("node_selector", label_problem)
        workload.dns_policy = self.choice(body, "dns_policy", ("ClusterFirst", "ClusterFirstWithHostNet", "Default", "None"))
        workload.priority_class_name = body.attr("priority_class_name", "str")
        if kind == "Deployment":
            workload.strategy = self.choice(body, "strategy", ("Recreate", "RollingUpdate"))
        elif kind == "StatefulSet":
            workload.pod_management_policy = self.choice(body, "pod_management_policy", ("OrderedReady", "Parallel"))
        elif completing:
            self.completion(kind, obj, body, workload)
        elif bare:
            workload.bare = True
            workload.restart_policy = self.choice(body, "restart_policy", ("Always", "OnFailure", "Never"))
        return workload

    def completion(self, kind: str, obj: ast.Object, body: Body, workload: ir.Workload) -> None:
        """A Job's (or a CronJob's job template's) run: completions, parallelism, retries, restart policy;
        a CronJob's schedule."""
        workload.completions = body.attr("completions", "nonneg_int")
        workload.parallelism = body.attr("parallelism", "nonneg_int")
        workload.backoff_limit = body.attr("backoff_limit", "nonneg_int")
        deadline = body.attr("active_deadline", "duration")
        workload.active_deadline_seconds = int(deadline) if deadline is not None else None
        workload.restart_policy = self.choice(body, "restart_policy", ("Never", "OnFailure")) or "Never"
        if kind != "CronJob":
            return
        schedule = body.attr("schedule", "str", required=True)
        problem = cron_problem(schedule) if schedule is not None else None
        if problem:
            self.ctx.error("E2010", f"`{schedule}` is not a cron schedule: {problem}", body.attr_span("schedule"),
                           "invalid schedule", help='five fields, minute hour day-of-month month day-of-week: '
                           '`schedule = "*/5 * * * *"`, or a descriptor such as `@hourly`')
            schedule = None
        workload.schedule = schedule or "@hourly"
        workload.concurrency_policy = self.choice(body, "concurrency_policy", ("Allow", "Forbid", "Replace"))
        workload.suspend = body.attr("suspend", "bool")

    def choice(self, body: Body, key: str, allowed: tuple[str, ...]) -> str | None:
        value = body.attr(key, "str")
        if value is not None and value not in allowed:
            self.ctx.error("E2010", f"`{key}` must be one of {', '.join(allowed)}", body.attr_span(key),
                           f"not {' or '.join(allowed)}")
            return None
        return value

    _SECURITY_INTS = (("run_as_user", "runAsUser"), ("run_as_group", "runAsGroup"), ("fs_group", "fsGroup"))
    _SECURITY_BOOLS = (("run_as_non_root", "runAsNonRoot"), ("privileged", "privileged"),
                       ("read_only_root_filesystem", "readOnlyRootFilesystem"),
                       ("allow_privilege_escalation", "allowPrivilegeEscalation"))

    def security_context(self, security: Body | None, pod: bool = False) -> dict | None:
        """A container's (or, with pod=True, a pod's) securityContext from snake_case fields."""
        if security is None:
            return None
        context: dict = {}
        for key, k8s in self._SECURITY_INTS:
            if pod or key != "fs_group":
                value = security.attr(key, "nonneg_int")
                if value is not None:
                    context[k8s] = value
        for key, k8s in self._SECURITY_BOOLS:
            if not pod or key == "run_as_non_root":
                value = security.attr(key, "bool")
                if value is not None:
                    context[k8s] = value
        capabilities = security.block("capabilities") if not pod else None
        if capabilities is not None:
            caps = {}
            for key in ("add", "drop"):
                value = capabilities.attr(key, "str_list")
                if value is not None:
                    caps[key] = value
            capabilities.finish()
            context["capabilities"] = caps
        seccomp = security.block("seccomp_profile")
        if seccomp is not None:
            profile = {"type": seccomp.attr("type", "str", required=True) or "RuntimeDefault"}
            local = seccomp.attr("localhost_profile", "str")
            if local is not None:
                profile["localhostProfile"] = local
            seccomp.finish()
            context["seccompProfile"] = profile
        if pod:  # the container's settings, written on the pod's block: say where they go
            names = [key for key, _ in self._SECURITY_BOOLS if key != "run_as_non_root"] + ["capabilities"]
            security.finish({key: f"`{key}` is a container's setting and this `security_context` is the pod's: write "
                                  f"the container as a block, `container \"NAME\" {{ image = \"...\" security_context "
                                  f"{{ {key} = ... }} }}` (docs/language.md, Topology)" for key in names})
        else:
            security.finish()
        return context

    def unique(self, names: list[str], what: str, spans: list[Span]) -> None:
        seen = set()
        for name, span in zip(names, spans):
            if name in seen:
                self.ctx.error("E2002", f"{what} `{name}` is declared twice", span, "second one")
            seen.add(name)

    def container(self, block: ast.Block, name: str, where: str) -> ir.Container:
        body = Body(self.ctx, block.entries, where, block.span)
        self.check_name(name, block.key_span, "container")
        container = self.container_fields(body, name, block.key_span)
        body.finish()
        return container

    def container_fields(self, body: Body, name: str, span: Span, shorthand: bool = False) -> ir.Container:
        image = body.attr("image", "str")
        if image is None and not body.has("image"):
            message = f"{body.where} needs an `image` or a `container` block" if shorthand else f"{body.where} needs an `image`"
            self.ctx.error("E2007", message, body.span, "no image", help='add `image = "registry/name:tag"`')
        image = image or ""
        ports = []
        for entry in body.labelled("port"):
            ports.append(self.container_port(entry))
        env = self.env(body)
        resources = self.resources(body.block("resources"))
        probes = {}
        for block in body.blocks("probe"):
            kind = block.labels[0]
            if kind not in ("readiness", "liveness", "startup"):
                self.ctx.error("E2010", f"probe kind `{kind}` is not readiness, liveness or startup", block.key_span)
                continue
            probes[f"{kind}Probe"] = self.probe(block)
        mounts = [m for m in (self.mount(e) for e in body.labelled("mount")) if m]
        security_context = self.security_context(body.block("security_context"))
        return ir.Container(
            name=name, image=image, image_pull_policy=body.attr("image_pull_policy", "str"),
            command=body.attr("command", "str_list", default=[]), args=body.attr("args", "str_list", default=[]),
            ports=[p for p in ports if p], env=env, resources=resources, probes=probes, volume_mounts=mounts,
            security_context=security_context,
        )

    def container_port(self, entry: ast.Entry) -> ir.ContainerPort | None:
        name = entry.labels[0] if entry.labels else None
        if isinstance(entry, ast.Attr):
            port = convert(self.ctx, entry.value, "port", "`port`")
            return None if port is MISSING else ir.ContainerPort(port, name)
        body = Body(self.ctx, entry.entries, "`port`", entry.span)
        port = body.attr("port", "port", required=True)
        protocol = body.attr("protocol", "str", default="TCP")
        body.finish()
        return ir.ContainerPort(port, name, protocol) if port is not None else None

    def env(self, body: Body) -> list[ir.EnvVar]:
        env_body = body.block("env")
        if env_body is None:
            return []
        out = []
        seen = set()
        for index, entry in enumerate(env_body.entries):
            env_body.used.add(index)
            if not isinstance(entry, ast.Attr) or entry.labels:
                self.ctx.error("E2008", "`env` holds `NAME = value` pairs", entry.key_span)
                continue
            if entry.key in seen:
                self.ctx.error("E2002", f"environment variable `{entry.key}` is set twice", entry.key_span)
                continue
            seen.add(entry.key)
            value = entry.value
            if isinstance(value, ast.Str):
                out.append(ir.EnvVar(entry.key, value=value.value))
            elif isinstance(value, ast.Call):
                source = self.env_source(value)
                if source is not None:
                    out.append(ir.EnvVar(entry.key, value_from=source))
            else:
                self.ctx.error("E2008", f"environment variable `{entry.key}` takes a string or a source such as "
                               'field("status.podIP")', value.span, "expected a string")
        return out

    _ENV_SOURCES = {
        "field": (1, lambda a: {"fieldRef": {"apiVersion": "v1", "fieldPath": a[0]}}),
        "secret_key": (2, lambda a: {"secretKeyRef": {"name": a[0], "key": a[1]}}),
        "configmap_key": (2, lambda a: {"configMapKeyRef": {"name": a[0], "key": a[1]}}),
        "resource_field": (1, lambda a: {"resourceFieldRef": {"resource": a[0]}}),
    }

    def env_source(self, call: ast.Call) -> dict | None:
        spec = self._ENV_SOURCES.get(call.name)
        if spec is None:
            hint = did_you_mean(call.name, self._ENV_SOURCES)
            self.ctx.error("E2006", f"unknown environment source `{call.name}(...)`", call.span,
                           help=f"did you mean `{hint}`?" if hint else "known: " + ", ".join(sorted(self._ENV_SOURCES)))
            return None
        arity, make = spec
        args = [a.value for a in call.args if isinstance(a, ast.Str)]
        if len(call.args) != arity or len(args) != arity:
            self.ctx.error("E2008", f"`{call.name}` takes {arity} string argument(s)", call.span)
            return None
        return make(args)

    def resources(self, body: Body | None) -> dict:
        if body is None:
            return {}
        out = {}
        for section in ("requests", "limits"):
            sub = body.block(section)
            if sub is None:
                continue
            values = {}
            cpu = sub.attr("cpu", "cpu")
            memory = sub.attr("memory", "memory")
            storage = sub.attr("ephemeral_storage", "memory")
            if cpu is not None:
                values["cpu"] = cpu
            if memory is not None:
                values["memory"] = memory
            if storage is not None:
                values["ephemeral-storage"] = storage
            sub.finish()
            out[section] = values
        body.finish()
        return out

    def probe(self, block: ast.Block) -> dict:
        body = Body(self.ctx, block.entries, f"probe `{block.labels[0]}`", block.span)
        probe: dict = {}
        http = body.attr("http_get", "str")
        port = body.attr("port", "port_or_name")
        tcp = body.attr("tcp", "port_or_name")
        command = body.attr("exec", "str_list")
        grpc = body.attr("grpc", "port")
        handlers = [h for h in (http, tcp, command, grpc) if h is not None]
        if len(handlers) != 1:
            self.ctx.error("E2007", "a probe needs exactly one of `http_get`, `tcp`, `exec`, `grpc`", block.key_span)
        if http is not None:
            if port is None:
                self.ctx.error("E2007", "an `http_get` probe needs `port`", block.key_span)
            probe["httpGet"] = {"path": http, "port": port}
        if tcp is not None:
            probe["tcpSocket"] = {"port": tcp}
        if command is not None:
            probe["exec"] = {"command": command}
        if grpc is not None:
            probe["grpc"] = {"port": grpc}
        for key, k8s in (("initial_delay", "initialDelaySeconds"), ("period", "periodSeconds"),
                         ("timeout", "timeoutSeconds")):
            value = body.attr(key, "duration")
            if value is not None:
                probe[k8s] = max(1, int(value)) if k8s != "initialDelaySeconds" else int(value)
        for key, k8s in (("failure_threshold", "failureThreshold"), ("success_threshold", "successThreshold")):
            value = body.attr(key, "nonneg_int")
            if value is not None:
                probe[k8s] = value
        body.finish()
        return probe

    def mount(self, entry: ast.Entry) -> dict | None:
        if len(entry.labels) != 1:
            self.ctx.error("E2008", 'a mount is written `mount "volume" = "/path"`', entry.key_span)
            return None
        name = entry.labels[0]
        if isinstance(entry, ast.Attr):
            path = convert(self.ctx, entry.value, "str", "`mount`")
            return None if path is MISSING else {"name": name, "mountPath": path}
        body = Body(self.ctx, entry.entries, f"mount `{name}`", entry.span)
        mount = {"name": name, "mountPath": body.attr("path", "str", required=True) or "/"}
        read_only = body.attr("read_only", "bool")
        sub_path = body.attr("sub_path", "str")
        if read_only is not None:
            mount["readOnly"] = read_only
        if sub_path is not None:
            mount["subPath"] = sub_path
        body.finish()
        return mount

    def volume(self, block: ast.Block) -> dict | None:
        name = block.labels[0]
        body = Body(self.ctx, block.entries, f"volume `{name}`", block.span)
        sources = []
        if body.attr("empty_dir", "bool"):
            sources.append({"emptyDir": {}})
        configmap = body.attr("configmap", "str")
        if configmap is not None:
            sources.append({"configMap": {"name": configmap}})
        secret = body.attr("secret", "str")
        if secret is not None:
            sources.append({"secret": {"secretName": secret}})
        claim = body.attr("claim", "str")
        if claim is not None:
            sources.append({"persistentVolumeClaim": {"claimName": claim}})
        host_path = body.attr("host_path", "str")
        if host_path is not None:
            sources.append({"hostPath": {"path": host_path}})
        items = body.string_map("items")
        if items and sources and ("configMap" in sources[0] or "secret" in sources[0]):
            source = next(iter(sources[0].values()))
            source["items"] = [{"key": k, "path": v} for k, v in items.items()]
        elif items:
            self.ctx.error("E2006", "`items` applies to configmap and secret volumes", block.key_span)
        body.finish()
        if len(sources) != 1:
            self.ctx.error("E2007", f"volume `{name}` needs exactly one of `empty_dir`, `configmap`, `secret`, `claim`, "
                           "`host_path`",
                           block.key_span)
            return None
        return {"name": name, **sources[0]}

    # ---- other kinds
    def obj_service(self, obj: ast.Object, body: Body, namespace: str) -> ir.Service:
        ports = []
        for entry in body.labelled("port"):
            name = entry.labels[0] if entry.labels else None
            if isinstance(entry, ast.Attr):
                port = convert(self.ctx, entry.value, "port", "`port`")
                if port is not MISSING:
                    ports.append(ir.ServicePort(port, port, name))
                continue
            pbody = Body(self.ctx, entry.entries, "service port", entry.span)
            port = pbody.attr("port", "port", required=True)
            target = pbody.attr("target", "port_or_name", default=port)
            protocol = pbody.attr("protocol", "str", default="TCP")
            app_protocol = pbody.attr("app_protocol", "str")
            pbody.finish()
            if port is not None:
                ports.append(ir.ServicePort(port, target, name, protocol, app_protocol))
        if not ports:
            self.ctx.error("E2007", f"service `{obj.name}` needs at least one `port`", obj.kind_span, "no port",
                           help='add `port "http" = 8080`')
        selector = body.string_map("selector", label_problem) or {"app.kubernetes.io/name": obj.name}
        return ir.Service(obj.name, namespace, ports, selector, body.string_map("labels", label_problem),
                          body.attr("type", "str", default="ClusterIP"), body.attr("cluster_ip", "str"),
                          body.string_map("annotations", annotation_problem), body.attr("publish_not_ready_addresses", "bool"))

    def obj_ingress(self, obj: ast.Object, body: Body, namespace: str) -> ir.Ingress:
        """`ingress "NAME" { class = "nginx"  rule "HOST" { path "/api" { service = "api"  port = "http" } } }`:
        a rule without a host (`rule { ... }`) matches every host; `backend { service  port }` is the default
        backend. The Services are resolved once every object is declared (resolve_ingresses)."""
        rules = []
        for entry in body.labelled("rule"):
            if not isinstance(entry, ast.Block) or len(entry.labels) > 1:
                self.ctx.error("E2008", f"`rule` in ingress `{obj.name}` is a block: `rule \"HOST\" {{ path \"/\" {{ ... }} }}`",
                               entry.key_span)
                continue
            rule_body = Body(self.ctx, entry.entries, "ingress rule", entry.span)
            paths = []
            for block in rule_body.blocks("path"):
                path_body = Body(self.ctx, block.entries, f"path `{block.labels[0]}`", block.span)
                path_type = self.choice(path_body, "path_type", ("Prefix", "Exact", "ImplementationSpecific"))
                backend = self.ingress_backend(path_body, block.span, namespace)
                path_body.finish()
                if not block.labels[0].startswith("/"):
                    self.ctx.error("E2010", f"ingress path `{block.labels[0]}` is not absolute", block.key_span,
                                   "not a path", help=f'an HTTP path starts with `/`: `path "/{block.labels[0]}"`')
                if backend is not None:
                    paths.append(ir.IngressPath(block.labels[0], backend, path_type or "Prefix"))
            rule_body.finish()
            if not paths:
                self.ctx.error("E2007", f"a rule of ingress `{obj.name}` needs a `path`", entry.key_span, "no path",
                               help='add `path "/" { service = "web"  port = 80 }`')
            rules.append(ir.IngressRule(entry.labels[0] if entry.labels else None, paths))
        default = body.block("backend")
        default_backend = self.ingress_backend(default, default.span, namespace) if default is not None else None
        if default is not None:
            default.finish()
        if not rules and default_backend is None:
            self.ctx.error("E2007", f"ingress `{obj.name}` routes nothing: it needs a `rule` or a `backend`",
                           obj.kind_span, "no rule", help='add `rule { path "/" { service = "web"  port = 80 } }`')
        return ir.Ingress(obj.name, namespace, body.attr("class", "str", required=True), rules, default_backend,
                          body.string_map("labels", label_problem), body.string_map("annotations", annotation_problem))

    def ingress_backend(self, body: Body, span: Span, namespace: str) -> ir.IngressBackend | None:
        service = body.attr("service", "str", required=True)
        port = body.attr("port", "port_or_name", required=True)
        if service is None or port is None:
            return None
        backend = ir.IngressBackend(service, port)
        self.ingress_backends.append((namespace, backend, body.attr_span("service"), body.attr_span("port"),
                                      self.ctx.path))
        return backend

    def resolve_ingresses(self) -> None:
        """Each backend an ingress names is a Service of its namespace, on one of that Service's ports."""
        services = {(s.namespace, s.name): s for s in self.build.services}
        for namespace, backend, service_span, port_span, path in self.ingress_backends:
            service = services.get((namespace, backend.service))
            if service is None:
                names = sorted(n for (ns, n) in services if ns == namespace)
                hint = did_you_mean(backend.service, names)
                self._error_at(path, "E2003", f"ingress backend `{backend.service}` is not a declared service of "
                               f"namespace `{namespace}`", service_span, "no such service",
                               help=f"did you mean `{hint}`?" if hint else
                               "declared: " + ", ".join(names) if names else "declare the service it routes to")
                continue
            if not any(backend.port in (p.port, p.name) for p in service.ports):
                ports = [str(p.name or p.port) for p in service.ports]
                hint = did_you_mean(str(backend.port), ports)
                self._error_at(path, "E2003", f"service `{service.name}` has no port `{backend.port}`", port_span,
                               "not a port of the service", help=f"did you mean `{hint}`?" if hint else
                               "its ports: " + ", ".join(f"`{p}`" for p in ports))

    def obj_configmap(self, obj: ast.Object, body: Body, namespace: str) -> ir.ConfigMap:
        return ir.ConfigMap(obj.name, namespace, body.string_map("data"), body.string_map("labels", label_problem))

    def obj_secret(self, obj: ast.Object, body: Body, namespace: str) -> ir.Secret:
        return ir.Secret(obj.name, namespace, body.string_map("data"), body.attr("type", "str", default="Opaque"),
                         body.string_map("labels", label_problem))

    def obj_serviceaccount(self, obj: ast.Object, body: Body, namespace: str) -> ir.ServiceAccount:
        return ir.ServiceAccount(obj.name, namespace, body.string_map("labels", label_problem),
                                 body.attr("automount_service_account_token", "bool"))

    def obj_hpa(self, obj: ast.Object, body: Body, namespace: str) -> ir.Autoscaler | None:
        target_name = body.attr("workload", "str", required=True)
        minimum = body.attr("min", "nonneg_int", default=1)
        maximum = body.attr("max", "nonneg_int", required=True)
        cpu = body.attr("cpu", "percent")
        memory = body.attr("memory", "percent")
        if maximum is not None and minimum is not None and maximum < max(1, minimum):
            self.ctx.error("E2010", f"hpa `{obj.name}`: `max` ({maximum}) is below `min` ({minimum})",
                           body.attr_span("max"), "too small")
        if cpu is None and memory is None:
            self.ctx.error("E2007", f"hpa `{obj.name}` needs a `cpu` or `memory` utilisation target", obj.kind_span,
                           help="add `cpu = 80%`")
        if target_name is None:
            return None
        # the workload may be declared later in the file: resolved after all objects (see resolve_autoscalers)
        kind = "Deployment"
        return ir.Autoscaler(obj.name, namespace, ir.ObjectRef("apps/v1", kind, namespace, target_name),
                             minimum if minimum is not None else 1, maximum or 1, cpu, memory)

    # ---- storage
    def access_modes(self, body: Body, what: str) -> list[str]:
        modes = body.attr("access_modes", "str_list", default=["ReadWriteOnce"])
        for mode in modes:
            if mode not in ACCESS_MODES:
                hint = did_you_mean(mode, ACCESS_MODES)
                self.ctx.error("E2010", f"{what}: `{mode}` is not an access mode", body.attr_span("access_modes"),
                               "unknown access mode", help=f"did you mean `{hint}`?" if hint else
                               "one of " + ", ".join(ACCESS_MODES))
        if not modes:
            self.ctx.error("E2010", f"{what}: `access_modes` is empty", body.attr_span("access_modes"), "no mode",
                           help='write `access_modes = ["ReadWriteOnce"]`')
        return [m for m in modes if m in ACCESS_MODES]

    def obj_storageclass(self, obj: ast.Object, body: Body) -> ir.StorageClass:
        provisioner = body.attr("provisioner", "str", required=True) or ""
        return ir.StorageClass(
            obj.name, provisioner, body.string_map("parameters"),
            self.choice(body, "reclaim_policy", ("Delete", "Retain")),
            self.choice(body, "volume_binding_mode", ("Immediate", "WaitForFirstConsumer")),
            body.attr("allow_volume_expansion", "bool"), body.string_map("labels", label_problem))

    def obj_persistentvolume(self, obj: ast.Object, body: Body) -> ir.PersistentVolume | None:
        what = f"persistentvolume `{obj.name}`"
        capacity = body.attr("capacity", "memory", required=True)
        modes = self.access_modes(body, what)
        sources = []
        host_path = body.attr("host_path", "str")
        if host_path is not None:
            source: dict = {"path": host_path}
            kind = self.choice(body, "host_path_type", ("", "DirectoryOrCreate", "Directory", "FileOrCreate", "File",
                                                         "Socket", "CharDevice", "BlockDevice"))
            if kind is not None:
                source["type"] = kind
            sources.append({"hostPath": source})
        local = body.attr("local_path", "str")
        if local is not None:
            sources.append({"local": {"path": local}})
        nfs = body.block("nfs")
        if nfs is not None:
            server, path = nfs.attr("server", "str", required=True), nfs.attr("path", "str", required=True)
            nfs.finish()
            sources.append({"nfs": {"server": server or "", "path": path or "/"}})
        if len(sources) != 1:
            self.ctx.error("E2007", f"{what} needs exactly one of `host_path`, `local_path`, `nfs`", obj.kind_span,
                           "no volume source" if not sources else "several sources",
                           help='add `host_path = "/data/volumes/NAME"`')
            return None
        if capacity is None:
            return None
        return ir.PersistentVolume(
            obj.name, capacity, modes, sources[0], body.attr("storage_class", "str"),
            self.choice(body, "reclaim_policy", ("Retain", "Delete", "Recycle")),
            self.choice(body, "volume_mode", ("Filesystem", "Block")), body.string_map("labels", label_problem))

    def obj_persistentvolumeclaim(self, obj: ast.Object, body: Body, namespace: str) -> ir.PersistentVolumeClaim | None:
        storage = body.attr("storage", "memory", required=True)
        modes = self.access_modes(body, f"persistentvolumeclaim `{obj.name}`")
        claim = ir.PersistentVolumeClaim(
            obj.name, namespace, storage or "1Gi", modes, body.attr("storage_class", "str"),
            body.attr("volume_name", "str"), self.choice(body, "volume_mode", ("Filesystem", "Block")),
            body.string_map("labels", label_problem))
        if storage is None:
            return None
        self.claim_refs.append((claim, body.attr_span("storage_class") if body.has("storage_class") else None,
                                body.attr_span("volume_name") if body.has("volume_name") else None, self.ctx.path))
        return claim

    # ---- RBAC
    def rbac_rules(self, body: Body, what: str, cluster: bool) -> list[dict]:
        """`rule { api_groups = [...] resources = [...] verbs = [...] }` blocks as PolicyRules, checked as the
        API server checks them (validation.ValidatePolicyRule)."""
        rules = []
        for entry in body.labelled("rule"):
            if not isinstance(entry, ast.Block) or entry.labels:
                self.ctx.error("E2008", f"a rule of {what} is a block: `rule {{ verbs = [...] ... }}`", entry.key_span,
                               "not a rule block")
                continue
            rule_body = Body(self.ctx, entry.entries, f"a rule of {what}", entry.span)
            groups = rule_body.attr("api_groups", "str_list")
            resources = rule_body.attr("resources", "str_list")
            names = rule_body.attr("resource_names", "str_list")
            urls = rule_body.attr("non_resource_urls", "str_list")
            verbs = rule_body.attr("verbs", "str_list", required=True)
            if verbs is not None and not verbs:
                self.ctx.error("E2010", f"a rule of {what} grants no verb", rule_body.attr_span("verbs"), "empty",
                               help='list what it allows: `verbs = ["get", "list", "watch"]`')
            if urls:
                if not cluster:
                    self.ctx.error("E2010", f"{what} is namespaced: its rules cannot grant non-resource URLs",
                                   rule_body.attr_span("non_resource_urls"), "namespaced role",
                                   help="grant URLs such as /metrics in a `clusterrole`")
                elif groups or resources:
                    self.ctx.error("E2010", f"a rule of {what} names both resources and non-resource URLs",
                                   rule_body.attr_span("non_resource_urls"), "both",
                                   help="write one rule for the resources and another for the URLs")
            elif not resources:
                self.ctx.error("E2007", f"a rule of {what} needs `resources` (or, in a clusterrole, "
                               "`non_resource_urls`)", entry.key_span, "grants nothing",
                               help='add `resources = ["pods"]`')
            elif not groups:
                self.ctx.error("E2007", f"a rule of {what} needs `api_groups`", entry.key_span, "no API group",
                               help='the core group is `""`: `api_groups = [""]`')
            rule_body.finish()
            rule: dict = {}
            for key, value in (("apiGroups", groups), ("resources", resources), ("resourceNames", names),
                               ("nonResourceURLs", urls), ("verbs", verbs)):
                if value is not None and (value or key == "verbs"):
                    rule[key] = list(value)
            rules.append(rule)
        return rules

    def obj_role(self, obj: ast.Object, body: Body, namespace: str) -> ir.Role:
        return ir.Role(obj.name, namespace, self.rbac_rules(body, f"role `{obj.name}`", cluster=False),
                       body.string_map("labels", label_problem))

    def obj_clusterrole(self, obj: ast.Object, body: Body) -> ir.Role:
        return ir.Role(obj.name, None, self.rbac_rules(body, f"clusterrole `{obj.name}`", cluster=True),
                       body.string_map("labels", label_problem))

    def obj_rolebinding(self, obj: ast.Object, body: Body, namespace: str) -> ir.RoleBinding | None:
        return self.binding(obj, body, namespace)

    def obj_clusterrolebinding(self, obj: ast.Object, body: Body) -> ir.RoleBinding | None:
        return self.binding(obj, body, None)

    _SUBJECTS = {"service_account": "ServiceAccount", "user": "User", "group": "Group"}

    def binding(self, obj: ast.Object, body: Body, namespace: str | None) -> ir.RoleBinding | None:
        """A (cluster) role binding: `role = "r"` (a Role of its namespace; rolebinding only) or
        `clusterrole = "r"`, and `subjects = [service_account("name", "namespace"), group("g"), user("u")]`."""
        what = f"{obj.kind} `{obj.name}`"
        role, cluster_role = body.attr("role", "str"), body.attr("clusterrole", "str")
        if role is not None and namespace is None:
            self.ctx.error("E2006", f"{what} binds a ClusterRole: a Role is namespaced", body.attr_span("role"),
                           "a clusterrolebinding binds a clusterrole", help='write `clusterrole = "..."`')
            return None
        if (role is None) == (cluster_role is None):
            self.ctx.error("E2007", f"{what} needs exactly one of `role` and `clusterrole`", obj.kind_span,
                           "which role?", help='add `clusterrole = "view"`, or a role this topology declares')
            return None
        ref_span = body.attr_span("role" if role is not None else "clusterrole")
        subjects: list[tuple[dict, Span]] = []
        entries = [e for e in body.labelled("subjects")]
        for extra in entries[1:]:
            self.ctx.error("E2002", f"`subjects` is given twice in {what}", extra.key_span, "second one")
        value = entries[0].value if entries and isinstance(entries[0], ast.Attr) else None
        if entries and not isinstance(value, ast.ListValue):
            self.ctx.error("E2008", f"`subjects` of {what} is a list", entries[0].key_span, "expected a list",
                           help='write `subjects = [service_account("name")]`')
        for item in value.items if isinstance(value, ast.ListValue) else ():
            subject = self.subject(item, namespace, what)
            if subject is not None:
                subjects.append((subject, item.span))
        if not entries:
            self.ctx.error("E2007", f"{what} needs `subjects`", obj.kind_span, "binds no one",
                           help='add `subjects = [service_account("name")]`')
        kind = "Role" if role is not None else "ClusterRole"
        binding = ir.RoleBinding(obj.name, namespace, {"apiGroup": "rbac.authorization.k8s.io", "kind": kind,
                                                       "name": role if role is not None else cluster_role},
                                 [s for s, _ in subjects], body.string_map("labels", label_problem))
        self._binding_spans[id(binding)] = (ref_span, subjects)
        return binding

    def subject(self, item: ast.Value, namespace: str | None, what: str) -> dict | None:
        kind = self._SUBJECTS.get(item.name) if isinstance(item, ast.Call) else None
        args = [a.value for a in item.args if isinstance(a, ast.Str)] if isinstance(item, ast.Call) else []
        arity = (1, 2) if kind == "ServiceAccount" else (1,)
        if kind is None or len(args) != len(item.args) or len(args) not in arity or not all(args):
            hint = did_you_mean(item.name, self._SUBJECTS) if isinstance(item, ast.Call) else None
            self.ctx.error("E2008", f"a subject of {what} is `service_account(\"name\")`, "
                           '`service_account("name", "namespace")`, `user("name")` or `group("name")`',
                           item.span, "not a subject", help=f"did you mean `{hint}`?" if hint else "")
            return None
        if kind != "ServiceAccount":
            return {"kind": kind, "apiGroup": "rbac.authorization.k8s.io", "name": args[0]}
        home = args[1] if len(args) == 2 else namespace
        if home is None:  # a clusterrolebinding: the topology's one namespace, as objects default to
            declared = [n.name for n in self.build.namespaces]
            if len(declared) != 1:
                self.ctx.error("E2016", f"the service account `{args[0]}` of {what} must say its namespace",
                               item.span, "which namespace?",
                               help=f'write `service_account("{args[0]}", "{declared[0] if declared else "ns"}")`')
                return None
            home = declared[0]
        return {"kind": "ServiceAccount", "name": args[0], "namespace": home}

    def _pending_binding(self, binding: ir.RoleBinding) -> None:
        ref_span, subjects = self._binding_spans.pop(id(binding))
        self.binding_refs.append((binding, ref_span, subjects, self.ctx.path))

    def resolve_bindings(self) -> None:
        """Every binding names a declared role (or one every cluster has) and declared service accounts."""
        declared = self.build.declared
        for binding, ref_span, subjects, path in self.binding_refs:
            ref = binding.role_ref
            if ref["kind"] == "Role":
                known = ("role", binding.namespace or "", ref["name"]) in declared
                names = sorted(n for (k, ns, n) in declared if k == "role" and ns == binding.namespace)
            else:
                known = (("clusterrole", "", ref["name"]) in declared or ref["name"] in CLUSTER_DEFAULT_ROLES
                         or ref["name"].startswith(SYSTEM_PREFIX))
                names = sorted(n for (k, _, n) in declared if k == "clusterrole")
            if not known:
                kind = "role" if ref["kind"] == "Role" else "clusterrole"
                where = f" of namespace `{binding.namespace}`" if kind == "role" else ""
                hint = did_you_mean(ref["name"], names)
                self._error_at(path, "E2003", f"{'cluster' if binding.namespace is None else ''}rolebinding "
                               f"`{binding.name}` binds {kind} `{ref['name']}`, which is not a declared {kind}{where}",
                               ref_span, f"unknown {kind}", help=f"did you mean `{hint}`?" if hint else
                               (f'declare it: `{kind} "{ref["name"]}" {{ rule {{ ... }} }}`' +
                                ("; every cluster has " + ", ".join(CLUSTER_DEFAULT_ROLES) + " and the `system:` roles"
                                 if kind == "clusterrole" else "")))
            for subject, span in subjects:
                if subject["kind"] != "ServiceAccount" or subject["name"] == "default":  # every namespace has one
                    continue
                if ("serviceaccount", subject["namespace"], subject["name"]) in declared:
                    continue
                names = sorted(n for (k, ns, n) in declared if k == "serviceaccount" and ns == subject["namespace"])
                hint = did_you_mean(subject["name"], names)
                self._error_at(path, "E2003", f"{'cluster' if binding.namespace is None else ''}rolebinding "
                               f"`{binding.name}` binds service account `{subject['name']}`, which namespace "
                               f"`{subject['namespace']}` does not declare", span, "unknown service account",
                               help=f"did you mean `{hint}`?" if hint else
                               f'declare it: `serviceaccount "{subject["name"]}"`')

    def resolve_references(self) -> None:
        """The references that may point at objects declared later: autoscaled workloads, claims, volumes,
        the roles and service accounts of bindings."""
        self.resolve_autoscalers()
        self.resolve_storage()
        self.resolve_bindings()
        self.resolve_ingresses()

    def _error_at(self, path: str, code: str, message: str, span: Span, label: str, help: str = "") -> None:
        self.ctx.diags.error(code, message, path, span, label, help)

    def resolve_storage(self) -> None:
        build = self.build
        claims = {(c.namespace, c.name): c for c in build.claims}
        for namespace, name, span, path in self.claim_uses:
            if (namespace, name) in claims:
                continue
            names = sorted(n for (ns, n) in claims if ns == namespace)
            hint = did_you_mean(name, names)
            self._error_at(path, "E2003", f"volume claim `{name}` is not a declared persistentvolumeclaim of namespace "
                           f"`{namespace}`", span, "no such claim", help=f"did you mean `{hint}`?" if hint else
                           f'declare it: `persistentvolumeclaim "{name}" {{ storage = 1Gi }}`')
        volumes = {v.name: v for v in build.persistent_volumes}
        classes = ({c.name for c in build.storage_classes} | {v.storage_class for v in volumes.values() if v.storage_class}
                   | set(CLUSTER_STORAGE_CLASSES))
        for claim, class_span, volume_span, path in self.claim_refs:
            if claim.storage_class and claim.storage_class not in classes:
                hint = did_you_mean(claim.storage_class, sorted(classes))
                self._error_at(path, "E2003", f"persistentvolumeclaim `{claim.name}` asks for storage class "
                               f"`{claim.storage_class}`, which no storageclass or persistentvolume declares",
                               class_span, "unknown storage class", help=f"did you mean `{hint}`?" if hint else
                               f"the cluster provides {', '.join(CLUSTER_STORAGE_CLASSES)}; declare "
                               f'`storageclass "{claim.storage_class}" {{ provisioner = "..." }}`')
            if claim.volume_name is None:
                continue
            volume = volumes.get(claim.volume_name)
            if volume is None:
                hint = did_you_mean(claim.volume_name, sorted(volumes))
                self._error_at(path, "E2003", f"persistentvolumeclaim `{claim.name}` binds volume `{claim.volume_name}`, "
                               "which is not a declared persistentvolume", volume_span, "unknown volume",
                               help=f"did you mean `{hint}`?" if hint else
                               f'declare it: `persistentvolume "{claim.volume_name}" {{ ... }}`')
                continue
            problem = _binding_problem(claim, volume)
            if problem:
                self._error_at(path, "E2034", f"persistentvolumeclaim `{claim.name}` cannot bind volume "
                               f"`{volume.name}`: {problem}", volume_span, "would stay Pending",
                               help="make the claim's storage class, size and access modes fit the volume")

    def resolve_autoscalers(self) -> None:
        for hpa in self.build.autoscalers:
            workload = self.build.workload(hpa.target.name, hpa.namespace)
            declared = self.build.declared.get(("hpa", hpa.namespace, hpa.name))
            if workload is None:
                hint = did_you_mean(hpa.target.name, [w.name for w in self.build.workloads])
                self.ctx.error("E2003", f"hpa `{hpa.name}` scales `{hpa.target.name}`, which is not a declared workload",
                               declared.span if declared else Span(0, 0, 1, 1, 1, 1), "unknown workload",
                               help=f"did you mean `{hint}`?" if hint else "")
            else:
                hpa.target = ir.ObjectRef("apps/v1", workload.kind, workload.namespace, workload.name)

    def edge(self, edge: ast.Edge) -> None:
        components = {w.name for w in self.build.workloads}
        ok = True
        for name, span in zip(edge.names, edge.name_spans):
            if name not in components:
                hint = did_you_mean(name, components)
                self.ctx.error("E2003", f"`{name}` in a dependency edge is not a declared workload", span,
                               "unknown component", help=f"did you mean `{hint}`?" if hint else "")
                ok = False
        if ok:
            for a, b in zip(edge.names, edge.names[1:]):
                if [a, b] not in self.build.edges:
                    self.build.edges.append([a, b])
