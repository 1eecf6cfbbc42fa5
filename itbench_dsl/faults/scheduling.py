"""Faults that keep a workload's pods from being scheduled or from starting: nodes, affinity, volumes, priorities, DNS."""

from __future__ import annotations

import copy

from .. import ir
from ..topology import CLUSTER_STORAGE_CLASSES, DNS1123_LABEL, label_problem
from ..units import parse_cpu
from .base import (
    CREATABLE_KINDS,
    Acceptance,
    Arg,
    Checked,
    Effect,
    FaultInput,
    FaultKind,
    container_named,
    kobj,
    original,
    patched,
    pick_container,
)

CREATABLE_KINDS["daemonset"] = ("apps/v1", "DaemonSet")
CREATABLE_KINDS["persistentvolumeclaim"] = ("v1", "PersistentVolumeClaim")

HOSTNAME_LABEL = "kubernetes.io/hostname"


# the node the selector asks for: named as a cloud names its nodes, never after the fault (the agent reads the
# pods' nodeSelector: agent_view.py); no cluster the harness makes has it
ABSENT_NODE = "ip-10-0-113-27.ec2.internal"

# ---- nonexistent node -----------------------------------------------------------------------------------


def _check_nonexistent_node(f: FaultInput) -> Checked | None:
    workload: ir.Workload = f.obj
    block = f.body.block("node_selector")
    if block is not None:
        # node labels no node carries, in place of a host name (a peer benchmark's problem: a pool label such
        # as `environment: production-gpu`); ITBench's injection only pins host names (ITBench roles/faults/tasks/
        # inject_nonexistent_kubernetes_workload_node.yaml: nodeSelector kubernetes.io/hostname)
        if f.body.has("node"):
            f.body.attr("node", "str")  # read, so that it is not reported as unknown as well
            f.error("E2010", "give `node` or `node_selector`, not both", f.body.attr_span("node"), "both given")
            return None
        selector = block.as_string_map(label_problem)
        if not selector:
            f.error("E2010", "the node selector is empty: it would select every node", f.body.attr_span("node_selector"),
                    "empty selector", help='give at least one label: `node_selector { environment = "gpu" }`')
            return None
        if all(workload.node_selector.get(k) == v for k, v in selector.items()):
            f.error("E2027", f"{workload.kind.lower()} `{workload.name}` already selects these node labels: the fault "
                    "would change nothing", f.body.attr_span("node_selector"), "same selector")
            return None
        return Checked({"node_selector": dict(selector), "original_node_selector": dict(workload.node_selector)},
                       {"kubernetesObject": kobj(f.target)}, itbench_id="")
    node = f.body.attr("node", "str", default=ABSENT_NODE)
    if node is None:
        return None
    problem = label_problem(HOSTNAME_LABEL, node)
    if problem is not None:
        f.error("E2010", f"`{node}` is not a valid node name for a node selector (a label value)", f.body.attr_span("node"),
                "not a label value", help="node names are at most 63 letters, digits, `-`, `_` and `.`")
        return None
    if workload.node_selector.get(HOSTNAME_LABEL) == node:
        f.error("E2027", f"{workload.kind.lower()} `{workload.name}` already selects node `{node}`: the fault would "
                "change nothing", f.body.attr_span("node") if f.body.has("node") else f.fault.target.span, "same node")
        return None
    return Checked({"node": node, "original_node_selector": dict(workload.node_selector)},
                   {"kubernetesObject": kobj(f.target)})


def _inject_nonexistent_node(injection, topology):
    selector = injection.args.get("node_selector") or {HOSTNAME_LABEL: injection.args["node"]}
    return patched(topology, injection, lambda w, a: setattr(w, "node_selector", {**w.node_selector, **selector}))


# ---- unschedulable pod anti-affinity ----------------------------------------------------------------------

# ITBench's injection runs a DaemonSet (a pod on every schedulable node) and makes the workload's pods
# refuse any node that runs one of its pods.
OPERATOR = "application-operator"
OPERATOR_LABELS = {"app.kubernetes.io/name": OPERATOR}
OPERATOR_IMAGE = ("registry.access.redhat.com/ubi10-minimal:10.2-1787204459"
                  "@sha256:07ab7c0a596785afa1de1963c1cac07f2b9df2e762b9d20d3433cff18ac1af18")
ANTI_AFFINITY_TERM = {
    "labelSelector": {"matchExpressions": [{"key": "app.kubernetes.io/name", "operator": "In", "values": [OPERATOR]}]},
    "topologyKey": HOSTNAME_LABEL,
}


def _check_anti_affinity(f: FaultInput) -> Checked | None:
    workload: ir.Workload = f.obj
    if all(workload.labels.get(k) == v for k, v in OPERATOR_LABELS.items()):
        f.error("E2011", f"the pods of `{workload.name}` carry the label `app.kubernetes.io/name: {OPERATOR}` the "
                "anti-affinity rule avoids: they would be confused with the DaemonSet's pods", f.fault.target.span,
                "carries the operator's label", help="pick a workload whose pods are not labelled as the operator")
        return None
    terms = ((workload.affinity or {}).get("podAntiAffinity") or {}).get("requiredDuringSchedulingIgnoredDuringExecution")
    if terms == [ANTI_AFFINITY_TERM]:
        f.error("E2027", f"{workload.kind.lower()} `{workload.name}` already avoids the nodes of `{OPERATOR}`: the "
                "fault would change nothing", f.fault.target.span, "same rule")
        return None
    daemonset = ir.ObjectRef("apps/v1", "DaemonSet", workload.namespace, OPERATOR)
    return Checked({"daemonset": OPERATOR}, {"kubernetesObject": kobj(f.target)}, created=[daemonset],
                   agent_resources=["daemonsets"])


def _operator_daemonset(namespace: str) -> dict:
    return {
        "apiVersion": "apps/v1", "kind": "DaemonSet",
        "metadata": {"name": OPERATOR, "namespace": namespace, "labels": {**OPERATOR_LABELS}},
        "spec": {
            "selector": {"matchLabels": dict(OPERATOR_LABELS)},
            "template": {
                "metadata": {"labels": dict(OPERATOR_LABELS)},
                "spec": {"containers": [{"name": "worker", "image": OPERATOR_IMAGE, "command": ["/bin/sh"],
                                         "args": ["-c", "sleep infinity"]}]},
            },
        },
    }


def _inject_anti_affinity(injection, topology):
    def change(workload, args):
        affinity = copy.deepcopy(workload.affinity or {})
        affinity["podAntiAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution": [copy.deepcopy(ANTI_AFFINITY_TERM)]}
        workload.affinity = affinity

    effect = patched(topology, injection, change)
    return Effect([_operator_daemonset(injection.target.namespace), *effect.apply], [])


def _revert_anti_affinity(injection, topology):
    daemonset = ir.ObjectRef("apps/v1", "DaemonSet", injection.target.namespace, OPERATOR)
    return Effect(original(injection, topology).apply, [daemonset])


# ---- nonexistent persistent volume claim -------------------------------------------------------------------

# ITBench's injection creates a claim (named after the workload) of a storage class that does not exist,
# so it stays Pending and so do the pods that mount it.
PVC_VOLUME = "database"
PVC_MOUNT = "/data/database"
PVC_STORAGE_CLASS = "standard-rwo-2"  # named as a cluster names its classes: no word of the fault (agent_view.py)


def _check_nonexistent_pvc(f: FaultInput) -> Checked | None:
    workload: ir.Workload = f.obj
    container = pick_container(f)
    # ITBench's injection names everything itself; the optional arguments (a peer benchmark's problem: a claim
    # named and mounted as its application does) make a use ITBench has no id for
    claim_name = f.body.attr("claim", "str", default=workload.name)
    storage_class = f.body.attr("storage_class", "str", default=PVC_STORAGE_CLASS)
    volume = f.body.attr("volume", "str", default=PVC_VOLUME)
    mount = f.body.attr("path", "str", default=PVC_MOUNT)
    storage = f.body.attr("storage", "memory", default="25Mi")
    if None in (container, claim_name, storage_class, volume, mount, storage):
        return None
    for key, value in (("claim", claim_name), ("volume", volume)):
        if len(value) > 63 or not DNS1123_LABEL.match(value):
            f.error("E2014", f"`{value}` is not a valid Kubernetes name", f.body.attr_span(key), "invalid name",
                    help="use lower-case letters, digits and `-`, starting and ending with a letter or digit")
            return None
    if not mount.startswith("/"):
        f.error("E2010", f"the mount path `{mount}` must be absolute", f.body.attr_span("path"), "not absolute")
        return None
    classes = ({c.name for c in f.build.storage_classes} | set(CLUSTER_STORAGE_CLASSES)
               | {v.storage_class for v in f.build.persistent_volumes if v.storage_class})
    if storage_class in classes:
        f.error("E2011", f"storage class `{storage_class}` exists: the claim would bind", f.body.attr_span("storage_class"),
                "an existing class", help="name a storage class the cluster does not have")
        return None
    if ("persistentvolumeclaim", workload.namespace, claim_name) in f.build.declared:
        f.error("E2011", f"the topology already declares persistentvolumeclaim `{claim_name}`: the fault's claim would "
                "replace it", f.body.attr_span("claim") if f.body.has("claim") else f.fault.target.span, "claim exists",
                help="name a claim the namespace does not have")
        return None
    if any(v.get("name") == volume for v in workload.volumes):
        f.error("E2011", f"{workload.kind.lower()} `{workload.name}` already has a volume `{volume}`: the fault's "
                "claim would replace it", f.body.attr_span("volume") if f.body.has("volume") else f.fault.target.span,
                f"has a `{volume}` volume",
                help=f"the fault mounts its claim through a volume named `{volume}`; pick a workload without one")
        return None
    if any(m.get("mountPath") == mount for m in container.volume_mounts):
        f.error("E2011", f"container `{container.name}` already mounts a volume at {mount}",
                f.body.attr_span("path") if f.body.has("path") else f.fault.target.span,
                "path taken", help=f"the fault mounts its claim at {mount}; pick a container that does not use it")
        return None
    claim = ir.ObjectRef("v1", "PersistentVolumeClaim", workload.namespace, claim_name)
    args = {"container": container.name, "claim": claim_name, "storage_class": storage_class}
    own = {"volume": volume, "path": mount, "storage": storage}
    defaults = {"volume": PVC_VOLUME, "path": PVC_MOUNT, "storage": "25Mi"}
    args.update({k: v for k, v in own.items() if v != defaults[k]})  # ITBench's uses keep their arguments
    ours = any(f.body.has(k) for k in ("claim", "storage_class", "volume", "path", "storage"))
    return Checked(args, {"container": {"name": container.name}, "kubernetesObject": kobj(f.target)}, created=[claim],
                   agent_resources=["persistentvolumeclaims"], itbench_id="" if ours else None)


def _claim(injection: ir.Injection) -> dict:
    return {
        "apiVersion": "v1", "kind": "PersistentVolumeClaim",
        "metadata": {"name": injection.args["claim"], "namespace": injection.target.namespace},
        "spec": {"accessModes": ["ReadWriteOnce"],
                 "resources": {"requests": {"storage": injection.args.get("storage", "25Mi")}},
                 "storageClassName": injection.args["storage_class"]},
    }


def _inject_nonexistent_pvc(injection, topology):
    def change(workload: ir.Workload, args):
        container = container_named(workload, args["container"])
        volume = args.get("volume", PVC_VOLUME)
        container.volume_mounts = [*container.volume_mounts, {"name": volume, "mountPath": args.get("path", PVC_MOUNT)}]
        workload.security_context = {**(workload.security_context or {}), "fsGroup": 1000}
        workload.volumes = [*workload.volumes, {"name": volume, "persistentVolumeClaim": {"claimName": args["claim"]}}]

    effect = patched(topology, injection, change)
    return Effect([_claim(injection), *effect.apply], [])


def _revert_nonexistent_pvc(injection, topology):
    claim = ir.ObjectRef("v1", "PersistentVolumeClaim", injection.target.namespace, injection.args["claim"])
    return Effect(original(injection, topology).apply, [claim])


# ---- failing name resolution (DNS policy) -------------------------------------------------------------------

# dnsPolicy Default: the pods use their node's resolver, which knows no cluster service name.


def _check_dns_policy(f: FaultInput) -> Checked | None:
    workload: ir.Workload = f.obj
    if workload.dns_policy == "Default":
        f.error("E2027", f"{workload.kind.lower()} `{workload.name}` already has dnsPolicy Default: the fault would "
                "change nothing", f.fault.target.span, "already Default")
        return None
    callees = [b for a, b in f.build.edges if a == workload.name]
    if not callees:
        f.error("E2011", f"`{workload.name}` calls no other component of the topology: failing to resolve service "
                "names would change nothing it does", f.fault.target.span, "calls nothing",
                help="pick a workload with dependency edges to other components (`\"a\" -> \"b\"`)")
        return None
    return Checked({"dns_policy": "Default", "original_dns_policy": workload.dns_policy},
                   {"kubernetesObject": kobj(f.target)})


def _inject_dns_policy(injection, topology):
    return patched(topology, injection, lambda w, a: setattr(w, "dns_policy", a["dns_policy"]))


# ---- priority preemption -------------------------------------------------------------------------------------

# ITBench's injection pins the workload to one worker node at the lowest priority, then fills that node with
# a higher-priority Deployment whose pods preempt the workload's.
CRITICAL, NON_CRITICAL = "application-critical", "application-non-critical"
COLLECTOR = "critical-data-collector"
COLLECTOR_LABELS = {"app.kubernetes.io/name": COLLECTOR}
COLLECTOR_SHARES = 20  # each collector pod requests 1/20 of the node's CPU but one core; there are 21 of them
SCHEDULING_API = "scheduling.k8s.io/v1"
CREATABLE_KINDS["priorityclass"] = (SCHEDULING_API, "PriorityClass")


def _node_name(f: FaultInput, required: bool) -> str | None:
    node = f.body.attr("node", "str", required=required)
    if node is not None and label_problem(HOSTNAME_LABEL, node) is not None:
        f.error("E2010", f"`{node}` is not a valid node name for a node selector (a label value)", f.body.attr_span("node"),
                "not a label value", help="node names are at most 63 letters, digits, `-`, `_` and `.`")
        return None
    return node


def _check_priority(f: FaultInput) -> Checked | None:
    workload: ir.Workload = f.obj
    node = _node_name(f, required=True)
    node_cpu = f.body.attr("node_cpu", "cpu", required=True)
    if node is None or node_cpu is None:
        return None
    cores = parse_cpu(node_cpu)
    if cores <= 1:
        f.error("E2010", f"a node with {node_cpu} CPU leaves nothing to fill once a core is kept for the system",
                f.body.attr_span("node_cpu"), "at most one core", help="give the node's allocatable CPU, e.g. `node_cpu = 4`")
        return None
    if any(w.name == COLLECTOR and w.namespace == workload.namespace for w in f.build.workloads):
        f.error("E2011", f"the topology already declares a workload `{COLLECTOR}` in `{workload.namespace}`: the fault's "
                "Deployment would replace it", f.fault.target.span, "name taken",
                help=f"rename the topology's `{COLLECTOR}`")
        return None
    pinned = workload.node_selector.get(HOSTNAME_LABEL)
    if pinned is not None and pinned != node:
        f.error("E2011", f"{workload.kind.lower()} `{workload.name}` is pinned to node `{pinned}`, not `{node}`",
                f.body.attr_span("node"), "another node", help=f'write `node = "{pinned}"`')
        return None
    millicores = int((cores - 1) / COLLECTOR_SHARES * 1000)
    created = [ir.ObjectRef(SCHEDULING_API, "PriorityClass", None, CRITICAL),
               ir.ObjectRef(SCHEDULING_API, "PriorityClass", None, NON_CRITICAL),
               ir.ObjectRef("apps/v1", "Deployment", workload.namespace, COLLECTOR)]
    return Checked({"node": node, "collector_cpu": f"{millicores}m", "collector_replicas": COLLECTOR_SHARES + 1},
                   {"kubernetesObject": kobj(f.target)}, created=created)


def _priority_class(name: str, value: int, description: str) -> dict:
    return {"apiVersion": SCHEDULING_API, "kind": "PriorityClass",
            "metadata": {"name": name, "labels": {"app.kubernetes.io/component": "workload"}},
            "value": value, "globalDefault": False, "description": description}


def _collector(injection: ir.Injection) -> dict:
    args = injection.args
    return {
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": COLLECTOR, "namespace": injection.target.namespace, "labels": {**COLLECTOR_LABELS}},
        "spec": {
            "replicas": args["collector_replicas"],
            "selector": {"matchLabels": dict(COLLECTOR_LABELS)},
            "template": {
                "metadata": {"labels": dict(COLLECTOR_LABELS)},
                "spec": {
                    "containers": [{"name": "worker", "image": OPERATOR_IMAGE, "command": ["/bin/sh"],
                                    "args": ["-c", "sleep infinity"],
                                    "resources": {"requests": {"cpu": args["collector_cpu"], "memory": "1Mi"}}}],
                    "nodeSelector": {HOSTNAME_LABEL: args["node"]},
                    "priorityClassName": CRITICAL,
                },
            },
        },
    }


def _inject_priority(injection, topology):
    def change(workload: ir.Workload, args):
        workload.node_selector = {**workload.node_selector, HOSTNAME_LABEL: args["node"]}
        workload.priority_class_name = NON_CRITICAL

    effect = patched(topology, injection, change)
    classes = [_priority_class(CRITICAL, 10000, "High priority class for application workloads"),
               _priority_class(NON_CRITICAL, 1, "Lower priority class for application workloads")]
    return Effect([*classes, *effect.apply, _collector(injection)], [])


def _revert_priority(injection, topology):
    collector = ir.ObjectRef("apps/v1", "Deployment", injection.target.namespace, COLLECTOR)
    classes = [ir.ObjectRef(SCHEDULING_API, "PriorityClass", None, name) for name in (CRITICAL, NON_CRITICAL)]
    return Effect(original(injection, topology).apply, [collector, *classes])


# ---- cordoned worker node --------------------------------------------------------------------------------------

# The cluster's nodes are not part of the topology, so the cordon itself cannot be a manifest of the bundle:
# inject/apply.yaml pins the workload to the node (and asks for one more replica, as ITBench does), and the
# cordon is a step of its own (ir.Injection.cordoned): `kubectl cordon NODE` before applying it, `kubectl
# uncordon NODE` after the revert, which `itbench run`, the Chainsaw Test, the Argo workflow and ITBench's own
# injection task perform.


def _check_cordoned(f: FaultInput) -> Checked | None:
    workload: ir.Workload = f.obj
    node = _node_name(f, required=True)
    if node is None:
        return None
    pinned = workload.node_selector.get(HOSTNAME_LABEL)
    if pinned is not None and pinned != node:
        f.error("E2011", f"{workload.kind.lower()} `{workload.name}` is pinned to node `{pinned}`, not `{node}`",
                f.body.attr_span("node"), "another node", help=f'write `node = "{pinned}"`')
        return None
    return Checked({"node": node, "replicas": workload.replicas + 1, "original_replicas": workload.replicas},
                   {"kubernetesObject": kobj(f.target)})


def _inject_cordoned(injection, topology):
    def change(workload: ir.Workload, args):
        workload.node_selector = {**workload.node_selector, HOSTNAME_LABEL: args["node"]}
        workload.replicas = args["replicas"]

    return patched(topology, injection, change)


FAULTS: list[FaultKind] = [
    FaultKind(
        "nonexistent_node", "nonexistent-kubernetes-workload-node", "workload.nodeSelector:nonexistent-node",
        ("deployment", "statefulset"), "Pins a workload's pods to a node that does not exist, so they stay Pending.",
        _check_nonexistent_node, _inject_nonexistent_node, original,
        args=(Arg("node", "string", default=ABSENT_NODE,
                  help="the node name put in the `kubernetes.io/hostname` node selector (ITBench draws "
                  "`invalid-node-<0..1000>` at random)"),
              Arg("node_selector", "labels", default="—",
                  help="node labels no node carries, instead of `node` (a use ITBench has no id for)")),
        preconditions=("The node name is a valid label value.",
                       "`node_selector`, when given instead of `node`, is not empty and holds valid labels.",
                       "The workload does not already select that node (or those labels)."),
        readiness="pending", labels=("virtualization", "misconfiguration"),
        symptoms=('scheduling',),
    ),
    FaultKind(
        "unschedulable_anti_affinity", "unschedulable-kubernetes-workload-pod-anti-affinity-rule",
        "workload.affinity.podAntiAffinity:unschedulable", ("deployment", "statefulset"),
        "Runs a DaemonSet on every node and gives the workload a required pod anti-affinity against its pods, so no "
        "node can take the workload's pods.",
        _check_anti_affinity, _inject_anti_affinity, _revert_anti_affinity,
        preconditions=(f"The workload's pods are not labelled `app.kubernetes.io/name: {OPERATOR}`.",
                       "The workload does not already have the anti-affinity rule."),
        creates=f"DaemonSet `{OPERATOR}` in the workload's namespace (a sleeping pod on every node)",
        readiness="pending", labels=("virtualization", "misconfiguration"),
        symptoms=('scheduling',),
    ),
    FaultKind(
        "nonexistent_pvc", "nonexistent-kubernetes-workload-persistent-volume-claim",
        "workload.volumes.persistentVolumeClaim:unbound", ("deployment", "statefulset"),
        "Mounts into a container a PersistentVolumeClaim of a storage class that does not exist, so the claim and "
        "the pods stay Pending.",
        _check_nonexistent_pvc, _inject_nonexistent_pvc, _revert_nonexistent_pvc,
        args=(Arg("container", "string", help="the container that mounts the claim; required when the workload has several"),
              Arg("claim", "string", default="the workload's name", help="the claim's name"),
              Arg("storage_class", "string", default=f"`{PVC_STORAGE_CLASS}`",
                  help="the claim's storage class, which the cluster does not have"),
              Arg("volume", "string", default=f"`{PVC_VOLUME}`", help="the pod volume that holds the claim"),
              Arg("path", "string", default=PVC_MOUNT, help="where the container mounts it"),
              Arg("storage", "memory quantity", default="25Mi", help="the storage the claim requests")),
        preconditions=("The container exists in the workload.", "The names are valid Kubernetes names.",
                       "The storage class is none the topology declares or the cluster provides.",
                       "The namespace declares no claim of that name.",
                       f"The workload has no volume of that name (`{PVC_VOLUME}`).",
                       f"The container mounts nothing at the path ({PVC_MOUNT})."),
        creates=f"PersistentVolumeClaim `<workload>` (storage class `{PVC_STORAGE_CLASS}`, 25Mi), mounted at "
                f"{PVC_MOUNT}, unless the arguments name them otherwise (a use ITBench has no id for)",
        readiness="pending", labels=("virtualization", "misconfiguration"),
        symptoms=('scheduling',),
    ),
    FaultKind(
        "failing_dns_policy", "failing-name-resolution-kubernetes-workload-dns-policy",
        "workload.dnsPolicy:node-resolver", ("deployment", "statefulset"),
        "Sets a workload's dnsPolicy to Default: its pods use the node's resolver and cannot resolve the names of "
        "the services they call.",
        _check_dns_policy, _inject_dns_policy, original,
        preconditions=("The workload's dnsPolicy is not already Default.",
                       "The workload calls at least one other component (a dependency edge)."),
        labels=("virtualization", "misconfiguration"),
        symptoms=('requests', 'restarts'),
    ),
    FaultKind(
        "priority_preemption", "priority-kubernetes-workload-priority-preemption",
        "workload.priorityClassName:preempted", ("deployment", "statefulset"),
        "Pins a workload to one node at the lowest priority and fills that node with a higher-priority Deployment, "
        "whose pods preempt the workload's.",
        _check_priority, _inject_priority, _revert_priority,
        args=(Arg("node", "string", required=True, help="the worker node to crowd (ITBench picks one at random)"),
              Arg("node_cpu", "CPU quantity", required=True,
                  help="the node's allocatable CPU: the 21 collector pods request (node_cpu - 1 core) / 20 each")),
        preconditions=("The node name is a valid label value.", "The node has more than one core.",
                       f"The topology declares no workload `{COLLECTOR}` in the namespace.",
                       "The workload is not pinned to another node."),
        creates=f"PriorityClasses `{CRITICAL}` (10000) and `{NON_CRITICAL}` (1), and Deployment `{COLLECTOR}` "
                "(21 pods at high priority on the node)",
        readiness="pending", labels=("virtualization", "misconfiguration"),
        symptoms=('scheduling',),
    ),
    FaultKind(
        "cordoned_node", "cordoned-kubernetes-worker-node", "node.unschedulable:cordoned", ("deployment", "statefulset"),
        "Pins a workload to a worker node, cordons the node and asks for one more replica: the new pods stay "
        "Pending. The cluster's nodes are not in the topology: inject/apply.yaml holds the pinned, scaled workload; "
        "the cordon is a step of its own (`kubectl cordon NODE` before applying it, `kubectl uncordon NODE` after "
        "the revert), which `itbench run`, the Chainsaw Test, the Argo workflow and ITBench's injection task perform.",
        _check_cordoned, _inject_cordoned, original,
        args=(Arg("node", "string", required=True,
                  help="the worker node to pin the workload to and cordon (ITBench picks one at random)"),),
        preconditions=("The node name is a valid label value.", "The workload is not pinned to another node."),
        readiness="pending-new", labels=("virtualization", "operation_error"),
        symptoms=('scheduling',),
        # the extra replica is the fault's means, not its harm: once the pin is gone the pods schedule and
        # serve, and `kubectl rollout undo` keeps the count (replicas are no part of a ReplicaSet's template)
        accept=(Acceptance(r"spec\.replicas", ">="),),
        cordons="node",
    ),
]
