"""The intermediate representation: what a checked scenario means, with no syntax left.

Backends read only this. Every class is a plain dataclass of JSON-compatible fields, so
`to_json` is mechanical and the JSON Schema is derived from the type hints
(`json_schema()`), which keeps the published schema and the code from drifting apart.
Kubernetes-shaped fragments (resources, probes, volumes, env sources) are kept in their
Kubernetes form as `dict`s: they are copied into manifests as they are.
"""

from __future__ import annotations

import dataclasses
import typing
from dataclasses import dataclass, field
from typing import Any, Optional

from .memo import IdentityMemo

# Fields added after the first IR version: left out of the JSON while they hold their default, so
# scenarios that do not use them keep their bytes.
_OMIT = {"omit_default": True}
# Fields a compile carries in memory and never writes (scenario.json, the schema): the resolved fault kind
# of an injection, which holds code.
_IN_MEMORY = {"in_memory": True}

SCHEMA_ID = "https://itbench.dev/schemas/scenario-ir/v1.json"
IR_VERSION = 1


@dataclass(frozen=True)
class ObjectRef:
    api_version: str
    kind: str
    namespace: Optional[str]
    name: str  # for kind Pod, a glob over pod names ("checkout-*")

    def key(self) -> str:
        return f"{self.namespace or ''}/{self.kind}/{self.name}"

    def group_id(self) -> str:
        """The id of the object's derived group in ITBench's v1 ground truth (`checkout-deployment-1`)."""
        base = self.name.replace("*", "").strip("-.") or "any"
        return f"{base}-{self.kind.lower()}-1"

    def itbench(self) -> dict:
        meta = {"name": self.name}
        if self.namespace:
            meta["namespace"] = self.namespace
        return {"apiVersion": self.api_version, "kind": self.kind, "metadata": meta}


@dataclass
class EnvVar:
    name: str
    value: Optional[str] = None
    value_from: Optional[dict] = None  # Kubernetes EnvVarSource


@dataclass
class ContainerPort:
    port: int
    name: Optional[str] = None
    protocol: str = "TCP"


@dataclass
class Container:
    name: str
    image: str
    image_pull_policy: Optional[str] = None
    command: list[str] = field(default_factory=list)
    args: list[str] = field(default_factory=list)
    ports: list[ContainerPort] = field(default_factory=list)
    env: list[EnvVar] = field(default_factory=list)
    resources: dict = field(default_factory=dict)  # Kubernetes ResourceRequirements
    probes: dict = field(default_factory=dict)  # readinessProbe/livenessProbe/startupProbe -> Probe
    volume_mounts: list[dict] = field(default_factory=list)
    security_context: Optional[dict] = None


@dataclass
class Workload:
    kind: str  # Deployment | StatefulSet | Job | CronJob | Pod (a static pod, or a bare pod: `bare`)
    name: str
    namespace: str
    replicas: int
    labels: dict[str, str]  # pod template labels
    selector: dict[str, str]  # spec.selector.matchLabels
    containers: list[Container]
    object_labels: dict[str, str] = field(default_factory=dict)
    init_containers: list[Container] = field(default_factory=list)
    volumes: list[dict] = field(default_factory=list)  # Kubernetes Volume
    service_account: Optional[str] = None
    service_name: Optional[str] = None  # StatefulSet only
    annotations: dict[str, str] = field(default_factory=dict)  # pod template annotations
    object_annotations: dict[str, str] = field(default_factory=dict)
    strategy: Optional[str] = None  # Deployment: Recreate | RollingUpdate
    pod_management_policy: Optional[str] = None  # StatefulSet: OrderedReady | Parallel
    automount_service_account_token: Optional[bool] = None
    termination_grace_period_seconds: Optional[int] = None
    security_context: Optional[dict] = None  # Kubernetes PodSecurityContext
    affinity: Optional[dict] = None  # Kubernetes Affinity, as written
    host_network: Optional[bool] = None
    host_pid: Optional[bool] = None
    host_ipc: Optional[bool] = None
    node_selector: dict[str, str] = field(default_factory=dict)
    dns_policy: Optional[str] = None  # ClusterFirst | ClusterFirstWithHostNet | Default | None
    priority_class_name: Optional[str] = None
    # Job and CronJob (whose job template holds them): replicas is 0, the run is to completion
    completions: Optional[int] = field(default=None, metadata=_OMIT)
    parallelism: Optional[int] = field(default=None, metadata=_OMIT)
    backoff_limit: Optional[int] = field(default=None, metadata=_OMIT)
    active_deadline_seconds: Optional[int] = field(default=None, metadata=_OMIT)
    restart_policy: Optional[str] = field(default=None, metadata=_OMIT)  # Never | OnFailure
    schedule: Optional[str] = field(default=None, metadata=_OMIT)  # CronJob only: cron fields or a macro
    concurrency_policy: Optional[str] = field(default=None, metadata=_OMIT)  # CronJob: Allow | Forbid | Replace
    suspend: Optional[bool] = field(default=None, metadata=_OMIT)  # CronJob
    # Pod only: a Pod the scenario deploys itself, no controller owning it (`pod "NAME"`); a Pod without it is
    # a static pod (the kubelet runs it, the cluster provides it). A bare pod is replaced, never rolled out.
    bare: Optional[bool] = field(default=None, metadata=_OMIT)


@dataclass
class ServicePort:
    port: int
    target_port: Any  # int or port name (str)
    name: Optional[str] = None
    protocol: str = "TCP"
    app_protocol: Optional[str] = None


@dataclass
class Service:
    name: str
    namespace: str
    ports: list[ServicePort]
    selector: dict[str, str]
    labels: dict[str, str] = field(default_factory=dict)
    type: str = "ClusterIP"
    cluster_ip: Optional[str] = None
    annotations: dict[str, str] = field(default_factory=dict)
    publish_not_ready_addresses: Optional[bool] = None


@dataclass
class IngressBackend:
    service: str  # a Service of the ingress's namespace
    port: Any  # int or port name (str): one of the Service's ports, by number or by name


@dataclass
class IngressPath:
    path: str
    backend: IngressBackend
    path_type: str = "Prefix"  # Prefix | Exact | ImplementationSpecific


@dataclass
class IngressRule:
    host: Optional[str]  # None: every host
    paths: list[IngressPath]


@dataclass
class Ingress:
    """A networking.k8s.io/v1 Ingress: the rules an ingress controller of its class routes by."""
    name: str
    namespace: str
    class_name: Optional[str]  # spec.ingressClassName: the controller that serves it
    rules: list[IngressRule]
    default_backend: Optional[IngressBackend] = None
    labels: dict[str, str] = field(default_factory=dict)
    annotations: dict[str, str] = field(default_factory=dict)


def ingress_backends(ingress: Ingress) -> list[IngressBackend]:
    """Every backend an ingress names: its default backend, then each rule's paths'."""
    return ([ingress.default_backend] if ingress.default_backend else []) + [
        p.backend for rule in ingress.rules for p in rule.paths]


@dataclass
class ConfigMap:
    name: str
    namespace: str
    data: dict[str, str]
    labels: dict[str, str] = field(default_factory=dict)


@dataclass
class Secret:
    name: str
    namespace: str
    data: dict[str, str]  # decoded values, emitted as stringData
    type: str = "Opaque"
    labels: dict[str, str] = field(default_factory=dict)


@dataclass
class ServiceAccount:
    name: str
    namespace: str
    labels: dict[str, str] = field(default_factory=dict)
    automount_service_account_token: Optional[bool] = None


@dataclass
class Autoscaler:
    name: str
    namespace: str
    target: ObjectRef
    min_replicas: int
    max_replicas: int
    cpu_utilization: Optional[int] = None
    memory_utilization: Optional[int] = None


@dataclass
class StorageClass:
    """A storage.k8s.io/v1 StorageClass (cluster-scoped)."""

    name: str
    provisioner: str
    parameters: dict[str, str] = field(default_factory=dict)
    reclaim_policy: Optional[str] = None  # Delete | Retain
    volume_binding_mode: Optional[str] = None  # Immediate | WaitForFirstConsumer
    allow_volume_expansion: Optional[bool] = None
    labels: dict[str, str] = field(default_factory=dict)


@dataclass
class PersistentVolume:
    """A v1 PersistentVolume (cluster-scoped); `source` is its volume source in Kubernetes form ({"hostPath": ...})."""

    name: str
    capacity: str  # a storage quantity, as Kubernetes spells it (1Gi)
    access_modes: list[str]
    source: dict
    storage_class: Optional[str] = None
    reclaim_policy: Optional[str] = None  # Retain | Delete | Recycle
    volume_mode: Optional[str] = None  # Filesystem | Block
    labels: dict[str, str] = field(default_factory=dict)


@dataclass
class PersistentVolumeClaim:
    name: str
    namespace: str
    storage: str  # the requested size, a storage quantity
    access_modes: list[str]
    storage_class: Optional[str] = None  # None: the cluster's default class; "": no class (static binding only)
    volume_name: Optional[str] = None  # a PersistentVolume to bind to
    volume_mode: Optional[str] = None
    labels: dict[str, str] = field(default_factory=dict)


@dataclass
class Role:
    """An rbac.authorization.k8s.io/v1 Role, or with no namespace a ClusterRole; `rules` in Kubernetes form
    (apiGroups, resources, verbs, resourceNames, nonResourceURLs)."""

    name: str
    namespace: Optional[str]  # None: a ClusterRole
    rules: list[dict] = field(default_factory=list)
    labels: dict[str, str] = field(default_factory=dict)


@dataclass
class RoleBinding:
    """A RoleBinding, or with no namespace a ClusterRoleBinding; `role_ref` and `subjects` in Kubernetes form
    (a ServiceAccount subject carries its namespace, so a moved application's bindings follow it)."""

    name: str
    namespace: Optional[str]  # None: a ClusterRoleBinding
    role_ref: dict  # {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role"|"ClusterRole", "name": ...}
    subjects: list[dict] = field(default_factory=list)
    labels: dict[str, str] = field(default_factory=dict)


# The namespaces every Kubernetes cluster creates (the API server's `default`, `kube-system`, `kube-public`,
# `kube-node-lease`): a scenario that names one means the cluster's own, which it does not own and cannot rename
# (the CISO twins keep them too: a control on where objects live reads them).
CLUSTER_NAMESPACES = frozenset({"default", "kube-system", "kube-public", "kube-node-lease"})


@dataclass
class Namespace:
    name: str
    labels: dict[str, str] = field(default_factory=dict)
    # the cluster provides the namespace and what the scenario declares in it (kube-system): referenced,
    # checked and present in the derived states, but never deployed
    provided: Optional[bool] = field(default=None, metadata=_OMIT)


@dataclass
class Topology:
    application: Optional[str]  # standard-library app id, when imported with `use app`
    namespaces: list[Namespace]
    workloads: list[Workload]
    services: list[Service]
    configmaps: list[ConfigMap]
    secrets: list[Secret]
    service_accounts: list[ServiceAccount]
    autoscalers: list[Autoscaler]
    edges: list[list[str]]  # [caller, callee] between components (workload names)
    application_key: Optional[str] = None  # ITBench's key for the application in scenario.yaml
    # ITBench's install options of the application (`use app "x" { options { ... } }`), as ITBench spells them
    application_options: Optional[dict] = field(default=None, metadata=_OMIT)
    # storage: cluster-scoped classes and volumes, namespaced claims
    storage_classes: list[StorageClass] = field(default_factory=list, metadata=_OMIT)
    persistent_volumes: list[PersistentVolume] = field(default_factory=list, metadata=_OMIT)
    claims: list[PersistentVolumeClaim] = field(default_factory=list, metadata=_OMIT)
    # the application's name for people (prompts): a standard or local app's name, or an inline topology's
    # `topology "NAME"`; None for an unnamed inline topology
    display_name: Optional[str] = field(default=None, metadata=_OMIT)
    # RBAC: Roles and ClusterRoles, RoleBindings and ClusterRoleBindings of the application's own components
    roles: list[Role] = field(default_factory=list, metadata=_OMIT)
    role_bindings: list[RoleBinding] = field(default_factory=list, metadata=_OMIT)
    ingresses: list[Ingress] = field(default_factory=list, metadata=_OMIT)


@dataclass
class Injection:
    fault: str  # the language's fault kind, e.g. nonexistent_image
    itbench_id: str  # ITBench's fault id
    mechanism: str  # what the fault does, for duplicate detection
    target: ObjectRef
    args: dict  # typed, normalised arguments
    itbench_args: dict  # the arguments as ITBench's scenario.yaml spells them
    side_objects: list[ObjectRef] = field(default_factory=list)  # other existing objects the fault changes
    created: list[ObjectRef] = field(default_factory=list)  # objects the fault creates
    root: Optional[ObjectRef] = None  # the root cause, when it is not the target (a created Schedule, say)
    # {a created object's name: ITBench's}, where ITBench's injection task names it (faults.base.Checked)
    itbench_names: dict = field(default_factory=dict, metadata=_OMIT)
    # the cluster nodes the fault cordons: a step of every runner of the bundle (`itbench run`, the Chainsaw Test,
    # the Argo workflow) before inject/apply.yaml, undone after revert/apply.yaml; nodes are not topology objects
    cordoned: list[str] = field(default_factory=list, metadata=_OMIT)
    # the fault kind the checker resolved (faults.FaultKind: the library's, or the scenario's `use faults`
    # kind): every later stage reads the kind here, never by name from a registry
    kind: Any = field(default=None, compare=False, repr=False, metadata=_IN_MEMORY)


@dataclass
class Waiter:
    kind: str
    itbench_id: str
    when: str  # before | after
    target: ObjectRef
    args: dict


@dataclass
class FaultGroup:
    name: Optional[str]
    injections: list[Injection]
    waiters: list[Waiter] = field(default_factory=list)
    # the waiters as written, before a restart spreads to the target's whole namespace (faults/waiters.spread):
    # ITBench's scenario.yaml carries these, so its harness runs the scenario as ITBench publishes it
    declared_waiters: Optional[list[Waiter]] = field(default=None, compare=False, repr=False, metadata=_IN_MEMORY)


@dataclass
class AlertExpectation:
    name: str
    target: ObjectRef
    description: Optional[str] = None
    group: Optional[str] = field(default=None, metadata=_OMIT)  # the v1 group id it names (`on group "ID"`)


@dataclass
class AlertRuleDef:
    """An alert the scenario defines (`alert_rule "NAME" { ... }`), beside the standard catalogue (alerts.py)."""

    name: str
    expr: str  # PromQL, as written
    for_duration: str  # Prometheus duration (`for`)
    severity: str
    summary: Optional[str] = None
    description: Optional[str] = None
    labels: dict = field(default_factory=dict)


@dataclass
class PropagationEdge:
    source: ObjectRef
    target: ObjectRef
    condition: str
    effect: str
    source_group: Optional[str] = field(default=None, metadata=_OMIT)  # v1 group ids the edge names (`group "ID"`)
    target_group: Optional[str] = field(default=None, metadata=_OMIT)
    indirect: Optional[bool] = field(default=None, metadata=_OMIT)  # True: the components meet only through others


@dataclass
class GroundGroup:
    """A v1 ground-truth group the scenario names (`group "ID" REF` in `expect`)."""

    id: str
    target: ObjectRef
    filters: Optional[list[str]] = None  # the name filters; derived from the reference when None
    name: Optional[str] = None  # ITBench's `name` form of a group, instead of filters
    namespace: Optional[str] = None  # when it is not the reference's
    root_cause: bool = False


@dataclass
class Predicate:
    kind: str  # state | field | alert | scope | probe (path: [probe name, exit_code|stdout|stderr])
    target: Optional[ObjectRef] = None
    state: Optional[str] = None  # ready | exists | absent
    # keys, indexes (int), selections ([key, value]) and parse steps ({"parse": "json"}): runtime.state.walk
    path: list[Any] = field(default_factory=list)
    op: Optional[str] = None  # == != < <= > >= contains in matches exists `not exists`
    value: Any = None
    alert: Optional[str] = None
    firing: Optional[bool] = None
    within_seconds: Optional[float] = None
    value_type: Optional[str] = field(default=None, metadata=_OMIT)  # duration | text: compared as such
    scope: Optional[str] = field(default=None, metadata=_OMIT)  # `all KIND ... ready`: pods | workloads | ...
    selector: Optional[dict[str, str]] = field(default=None, metadata=_OMIT)  # the scope's pod labels
    namespace: Optional[str] = field(default=None, metadata=_OMIT)  # the scope's namespace; None: every one


@dataclass
class Probe:
    """`probe "NAME" on deployment "x" { container command }`: a command run in one of the workload's pods
    when the evaluator is asked; `probe "NAME" FIELD TEST` predicates read its result (kind "probe",
    path [NAME, FIELD])."""

    name: str
    target: ObjectRef
    container: str
    command: list[str]
    # {exit_code, stdout, stderr} it gives on the healthy application and with the faults injected: what
    # self-validation's derived states carry (states.py); faulty None: the faults leave it as when healthy
    healthy: Optional[dict] = field(default=None, metadata=_OMIT)
    faulty: Optional[dict] = field(default=None, metadata=_OMIT)


@dataclass
class Mitigation:
    within_seconds: Optional[float]
    predicates: list[Predicate]
    # `mitigated when only`: the predicates and every workload ready decide, not the fault's changes undone
    only: Optional[bool] = field(default=None, metadata=_OMIT)  # True, or None (left out of the JSON)


@dataclass
class Optimum:
    target: ObjectRef
    path: list[str]
    value: Any


@dataclass
class SolutionStep:
    text: str
    command: Optional[str] = None


@dataclass
class Solution:
    title: str
    steps: list[SolutionStep]
    id: Optional[str] = field(default=None, metadata=_OMIT)  # ITBench's v1 id, when it is not the title's slug


@dataclass
class Param:
    name: str
    domain: list
    default: Any = None


@dataclass
class AgentAccess:
    service_account: str
    namespaces: list[str]
    read: list[str]
    write: list[str]
    cluster_read: list[str] = field(default_factory=list)  # cluster-scoped resources (a ClusterRole)
    cluster_write: list[str] = field(default_factory=list)
    # of `namespaces`, those the agent may only read: the namespaces the cluster provides (kube-system)
    read_only: list[str] = field(default_factory=list, metadata=_OMIT)
    # of `namespaces`, those where the agent may not exec into, attach to or port-forward to pods: a pod there runs
    # with a service account that may do more than the agent (access.wider_than)
    no_exec: list[str] = field(default_factory=list, metadata=_OMIT)


@dataclass
class Compliance:
    control: str
    benchmark: str
    goal: str
    task: str
    gaps: list[ObjectRef]
    compliant: list[ObjectRef]
    given: bool = False  # `control { given = true }`: the prompt names the gap and compliant objects
    # kyverno_update: the existing policies the task declares (ClusterPolicy manifests, in order), and the one
    # the agent edits (`update`); without them a catalogue control provides the policy
    policies: list[dict] = field(default_factory=list, metadata=_OMIT)
    update: Optional[str] = field(default=None, metadata=_OMIT)
    # the fields the control reads (dotted paths, `*` any key or index): a compliant object differs from its
    # gap object in these alone (a catalogue control's own, or `control "ID" { reads = [...] }`)
    reads: list[str] = field(default_factory=list, metadata=_OMIT)


@dataclass
class PosedTask:
    """A task the scenario poses (`tasks detect within 10m, mitigate`: itbench_dsl/tasks.py)."""

    name: str  # detect | localize | diagnose | analyze | mitigate | policy
    within_seconds: Optional[float] = None  # detect: how long after the injection a detection counts


@dataclass
class AnalysisLabels:
    """The fault's classification the analyze task grades against (`analysis { ... }`, or its fault kinds')."""

    system_level: str
    fault_type: str


@dataclass
class Scenario:
    name: str
    domain: str
    complexity: str
    description: str
    tags: list[str]
    metadata: dict
    topology: Topology
    faults: list[FaultGroup]
    alerts: list[AlertExpectation]
    root_causes: list[ObjectRef]
    propagations: list[PropagationEdge]
    mitigation: Optional[Mitigation]
    optimal: list[Optimum]
    solutions: list[Solution]
    params: list[Param]
    agent: AgentAccess
    compliance: Optional[Compliance]
    ir_version: int = IR_VERSION
    ground_groups: list[GroundGroup] = field(default_factory=list, metadata=_OMIT)  # v1 groups named in `expect`
    aliases: Optional[list[list[str]]] = field(default=None, metadata=_OMIT)  # v1 aliases (group ids); derived when None
    causes: Optional[list[dict]] = field(default=None, metadata=_OMIT)  # v1 `fault` entries (`cause`); derived when None
    tasks: Optional[list[PosedTask]] = field(default=None, metadata=_OMIT)  # `tasks`; None: the domain's default
    analysis: Optional[AnalysisLabels] = field(default=None, metadata=_OMIT)  # the analysis labels, when known
    alert_rules: list[AlertRuleDef] = field(default_factory=list, metadata=_OMIT)  # the scenario's own alerts
    probes: list["Probe"] = field(default_factory=list, metadata=_OMIT)  # `probe` statements (docs/evaluator.md)

    def injections(self) -> list[Injection]:
        return [i for g in self.faults for i in g.injections]


_FIELD_NAMES: dict[type, tuple[str, ...]] = {}
_OPTIONAL_FIELDS: dict[type, frozenset] = {}
_SCALARS = (str, int, float, bool, type(None))


def to_json(value: Any) -> Any:
    """Dataclasses to plain JSON data, field order kept (it is the declaration order)."""
    cls = type(value)
    if cls in TOPOLOGY_OBJECTS:
        return _object_json(value)
    return _to_json(value)


def _to_json(value: Any) -> Any:
    cls = type(value)
    if cls in _SCALARS:
        return value
    if cls is list or cls is tuple:
        return [to_json(v) for v in value]
    if cls is dict:
        return {k: to_json(v) for k, v in value.items()}
    names = _FIELD_NAMES.get(cls)
    if names is None:
        if not dataclasses.is_dataclass(cls):
            return value
        names = _FIELD_NAMES[cls] = field_names(cls)
        _OPTIONAL_FIELDS[cls] = frozenset(f.name for f in dataclasses.fields(cls) if f.metadata.get("omit_default"))
    optional = _OPTIONAL_FIELDS[cls]
    if not optional:
        return {name: to_json(getattr(value, name)) for name in names}
    return {name: to_json(getattr(value, name)) for name in names
            if name not in optional or getattr(value, name) not in (None, [], {})}


# Topology objects are never mutated once built, and an application's are shared by every scenario
# that uses it: their JSON is computed once (see memo.py).
TOPOLOGY_OBJECTS = {Workload, Service, ConfigMap, Secret, ServiceAccount, Autoscaler, Namespace, StorageClass,
                    PersistentVolume, PersistentVolumeClaim, Role, RoleBinding, Ingress}


_object_json = IdentityMemo(_to_json)


def field_names(cls: type) -> tuple[str, ...]:
    """The fields of an IR class that its JSON holds (in-memory fields left out)."""
    return tuple(f.name for f in _written_fields(cls))


def _written_fields(cls: type) -> list[dataclasses.Field]:
    return [f for f in dataclasses.fields(cls) if not f.metadata.get("in_memory")]


# ---- JSON Schema derived from the type hints ------------------------------------------------


def json_schema() -> dict:
    defs: dict[str, dict] = {}
    root = _schema_for(Scenario, defs)
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": SCHEMA_ID,
        "title": "itbench scenario IR",
        "description": "The checked meaning of one .itb scenario, as written to scenario.json in every bundle.",
        **root,
        "$defs": dict(sorted(defs.items())),
    }


def _schema_for(tp: Any, defs: dict[str, dict]) -> dict:
    origin = typing.get_origin(tp)
    if dataclasses.is_dataclass(tp):
        name = tp.__name__
        if name not in defs:
            defs[name] = {}  # placeholder against recursion
            hints = typing.get_type_hints(tp)
            props = {f.name: _schema_for(hints[f.name], defs) for f in _written_fields(tp)}
            required = [
                f.name for f in _written_fields(tp)
                if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
            ]
            defs[name] = {"type": "object", "properties": props, "required": required, "additionalProperties": False}
            if tp is Scenario:
                return defs.pop(name)
        return {"$ref": f"#/$defs/{name}"}
    if origin is typing.Union:
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        inner = _schema_for(args[0], defs)
        return {"anyOf": [inner, {"type": "null"}]}
    if origin is list:
        (item,) = typing.get_args(tp) or (Any,)
        return {"type": "array", "items": _schema_for(item, defs)}
    if origin is dict:
        args = typing.get_args(tp)
        return {"type": "object", "additionalProperties": _schema_for(args[1], defs) if args else {}}
    simple = {str: {"type": "string"}, int: {"type": "integer"}, float: {"type": "number"}, bool: {"type": "boolean"},
              dict: {"type": "object"}, list: {"type": "array"}}
    if tp in simple:
        return simple[tp]
    return {}  # Any
