"""Faults at the cluster level: network policies, resource quotas, API server load, namespace deletion."""

from __future__ import annotations

import copy

from .. import ir
from ..topology import DNS1123_LABEL
from .base import CREATABLE_KINDS, Arg, Checked, Effect, FaultInput, FaultKind, application_name, itbench_entry, kobj

CREATABLE_KINDS["networkpolicy"] = ("networking.k8s.io/v1", "NetworkPolicy")
CREATABLE_KINDS["resourcequota"] = ("v1", "ResourceQuota")

def _unmanage(injection: ir.Injection, topology: ir.Topology) -> Effect:
    """Revert of a fault that only creates objects: delete them."""
    return Effect([], list(injection.created))


# ---- ingress-port-blocking network policy -----------------------------------------------------------------


def _policy_name(f: FaultInput, fault: str, api_version: str, kind: str) -> str:
    """The name of the object a fault of this module creates: `name = "..."` of the fault, else one as the
    application names its objects (base.application_name: neither the target's name nor the fault's words,
    `deny-all-cart`, `cart-ingress`, nor a hash)."""
    return f.body.attr("name", "str") or application_name(f, api_version, kind, f.obj.namespace, fault, f.obj.kind,
                                                          f.obj.name)


def _itbench_ingress_solutions() -> tuple:
    """ITBench's solutions of the ingress-blocking policy, naming the policy the injection created (`args.policy`)
    where ITBench's spell its own name (`<workload>-ingress`)."""
    import json

    templates = itbench_entry("faults", "ingress-port-blocking-network-policy").get("solutions", {}).get("templates", [])
    text = json.dumps(templates).replace("{{ args.kubernetesObject.metadata.name }}-ingress", "{{ args.policy }}")
    return tuple(json.loads(text))


NAME_ARG = Arg("name", "string", default="`<component>-<word>` (`currency-main`)",
               help="the created object's name; the default is named as the application names its objects, after "
                    "another of its components than the target, and says nothing of the fault")


def _check_network_policy(f: FaultInput) -> Checked | None:
    workload: ir.Workload = f.obj
    ports = sorted({p.port for c in workload.containers for p in c.ports})
    if not ports:
        f.error("E2022", f"{workload.kind.lower()} `{workload.name}` declares no container port: there is no ingress "
                "to block", f.fault.target.span, "no port",
                help="target a workload whose containers serve ports (`port \"http\" = 8080`)")
        return None
    policy = ir.ObjectRef("networking.k8s.io/v1", "NetworkPolicy", workload.namespace,
                          _policy_name(f, "ingress_port_blocking_network_policy", "networking.k8s.io/v1",
                                       "NetworkPolicy"))
    return Checked({"policy": policy.name, "pod_selector": dict(workload.selector), "ports": ports},
                   {"kubernetesObject": kobj(f.target)}, side_objects=[policy], created=[policy],
                   agent_namespaces=[workload.namespace], agent_resources=["networkpolicies"],
                   # ITBench's injection task names it `<workload>-ingress`
                   itbench_names={policy.name: f"{workload.name[:55]}-ingress"})


def _inject_network_policy(injection, topology):
    args = injection.args
    policy = {
        "apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
        "metadata": {"name": args["policy"], "namespace": injection.target.namespace},
        # Ingress listed with no rule: every connection to the selected pods' ports is refused
        "spec": {"podSelector": {"matchLabels": dict(args["pod_selector"])}, "policyTypes": ["Ingress"], "ingress": []},
    }
    return Effect([policy], [])


# ---- insufficient resource quota ----------------------------------------------------------------------------

QUOTA_SOLUTIONS = (
    {"steps": [{"command": "kubectl -n {{ args.kubernetesObject.metadata.namespace }} edit resourcequota "
                           "{{ args.quota }}",
                "text": "Manually edit the manifest(s) and increase the values of the resource quota(s)."}]},
    {"steps": [{"command": "kubectl -n {{ args.kubernetesObject.metadata.namespace }} delete resourcequota "
                           "{{ args.quota }}",
                "text": "Delete the offending resource quota(s) if it is no longer required."}]},
)




def _check_resource_quota(f: FaultInput) -> Checked | None:
    workload: ir.Workload = f.obj
    # one name for the quota, used by the injection, both ground truths and the solutions; ITBench's export
    # names it as ITBench's task creates it (inject_insufficient_kubernetes_resource_quota.yaml: `memory`, with
    # `hard: {memory: 1Gi}`, whatever the scenario says: W3002 reports the `pods` it cannot carry)
    name = _policy_name(f, "insufficient_resource_quota", "v1", "ResourceQuota")
    if len(name) > 63:
        f.error("E2014", f"the quota's name `{name}` is longer than 63 characters", f.fault.target.span)
        return None
    if workload.replicas == 0:
        f.error("E2011", f"{workload.kind.lower()} `{workload.name}` has 0 replicas: a quota would not take running "
                "pods away, and the workload has none to starve", f.fault.target.span, "no pods",
                help="target a workload that runs pods")
        return None
    # The quota admits the pods that run now and no other: a rollout or a scale-out of the workload is refused.
    # It counts pods rather than memory: a memory quota would also refuse every pod whose containers (init
    # containers included) request no memory, far beyond the target.
    pods = sum(w.replicas for w in f.build.workloads if w.namespace == workload.namespace)
    quota = ir.ObjectRef("v1", "ResourceQuota", workload.namespace, name)
    return Checked({"quota": name, "pods": pods}, {"kubernetesObject": kobj(f.target)},
                   side_objects=[quota], created=[quota], agent_namespaces=[workload.namespace],
                   agent_resources=["resourcequotas"], itbench_names={name: "memory"})


def _inject_resource_quota(injection, topology):
    args = injection.args
    quota = {
        "apiVersion": "v1", "kind": "ResourceQuota",
        "metadata": {"name": args["quota"], "namespace": injection.target.namespace},
        "spec": {"hard": {"pods": str(args["pods"])}},
    }
    return Effect([quota], [])


# ---- network policy isolating a workload (ingress and egress) ---------------------------------------------




def _check_isolating_policy(f: FaultInput) -> Checked | None:
    workload: ir.Workload = f.obj
    callees = [b for a, b in f.build.edges if a == workload.name]
    ports = sorted({p.port for c in workload.containers for p in c.ports})
    if not (ports or callees):
        f.error("E2011", f"{workload.kind.lower()} `{workload.name}` serves no port and calls no other component: "
                "isolating its pods would cut nothing", f.fault.target.span, "no traffic",
                help="target a workload that serves ports or has dependency edges (`\"a\" -> \"b\"`)")
        return None
    if workload.replicas == 0:
        f.error("E2011", f"{workload.kind.lower()} `{workload.name}` has 0 replicas: there are no pods to isolate",
                f.fault.target.span, "no pods", help="target a workload that runs pods")
        return None
    # SREGym names it `deny-all-<workload>`: whoever lists the policies would read the fault in it
    policy = ir.ObjectRef("networking.k8s.io/v1", "NetworkPolicy", workload.namespace,
                          _policy_name(f, "isolating_network_policy", "networking.k8s.io/v1", "NetworkPolicy"))
    return Checked({"policy": policy.name, "pod_selector": dict(workload.selector)},
                   {"kubernetesObject": kobj(f.target)}, side_objects=[policy], created=[policy],
                   agent_namespaces=[workload.namespace], agent_resources=["networkpolicies"])


def _inject_isolating_policy(injection, topology):
    args = injection.args
    policy = {
        "apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
        "metadata": {"name": args["policy"], "namespace": injection.target.namespace},
        # both directions listed with no rule: nothing reaches the pods and nothing leaves them (DNS included)
        "spec": {"podSelector": {"matchLabels": dict(args["pod_selector"])}, "policyTypes": ["Ingress", "Egress"],
                 "ingress": [], "egress": []},
    }
    return Effect([policy], [])


# ---- memory resource quota ----------------------------------------------------------------------------------

MEMORY_QUOTA_KEYS = ("memory", "requests.memory", "limits.memory")


def _declares(workload: ir.Workload, key: str) -> bool:
    """Whether every container of the workload (init containers included) declares what a quota on `key` asks."""
    sections = ("limits",) if key == "limits.memory" else ("requests", "limits")  # a limit stands for a missing request
    return all(any((c.resources.get(s) or {}).get("memory") is not None for s in sections)
               for c in (*workload.containers, *workload.init_containers))


def _check_memory_quota(f: FaultInput) -> Checked | None:
    namespace: ir.Namespace = f.obj
    name = f.body.attr("name", "str", default="memory-limit-quota")
    memory = f.body.attr("memory", "memory", default="1Gi")
    key = f.body.attr("resource", "str", default="memory")
    if None in (name, memory, key):
        return None
    if key not in MEMORY_QUOTA_KEYS:
        f.error("E2010", f"`{key}` is not a memory quota resource", f.body.attr_span("resource"), "not a memory resource",
                help="one of " + ", ".join(f"`{k}`" for k in MEMORY_QUOTA_KEYS))
        return None
    if len(name) > 63 or not DNS1123_LABEL.match(name):
        f.error("E2014", f"`{name}` is not a valid Kubernetes name", f.body.attr_span("name"), "invalid name")
        return None
    workloads = [w for w in f.build.workloads if w.namespace == namespace.name and w.kind != "Pod" and w.replicas > 0]
    # the quota refuses every new pod whose containers do not declare memory: a workload must have such pods
    refused = sorted(w.name for w in workloads if not _declares(w, key))
    if not refused:
        f.error("E2011", f"every workload of namespace `{namespace.name}` declares its memory: a quota on `{key}` "
                "would refuse none of their pods", f.fault.target.span, "refuses nothing",
                help="the fault needs a workload whose containers declare no memory request or limit")
        return None
    quota = ir.ObjectRef("v1", "ResourceQuota", namespace.name, name)
    return Checked({"quota": name, "resource": key, "memory": memory, "refused": refused},
                   {"kubernetesObject": kobj(f.target), "resourceQuota": {"name": name}}, side_objects=[quota],
                   created=[quota], root=quota,
                   agent_namespaces=[namespace.name], agent_resources=["resourcequotas"])


def _inject_memory_quota(injection, topology):
    args = injection.args
    quota = {
        "apiVersion": "v1", "kind": "ResourceQuota",
        "metadata": {"name": args["quota"], "namespace": injection.target.name},
        "spec": {"hard": {args["resource"]: args["memory"]}},
    }
    return Effect([quota], [])


# ---- API server request surge -------------------------------------------------------------------------------

SCANNER = "workload-scanner"  # the name ITBench's solutions use for the load generator
SCANNER_IMAGE = "curlimages/curl:8.10.1"
SCANNER_SCRIPT = """TOKEN="$(cat /var/run/secrets/kubernetes.io/serviceaccount/token)"
while true; do
  curl --silent --cacert /var/run/secrets/kubernetes.io/serviceaccount/ca.crt --output /dev/null --parallel --parallel-max 64 --rate "${REQUESTS_PER_SECOND}/s" \\
    --header "Authorization: Bearer ${TOKEN}" \\
    "https://kubernetes.default.svc/api/v1/namespaces/${NAMESPACE}/pods?request=[1-100000]"
done
"""


def _check_request_surge(f: FaultInput) -> Checked | None:
    namespace: ir.Namespace = f.obj
    rate = f.body.attr("requests_per_second", "nonneg_int", required=True)
    if rate is None:
        return None
    if rate == 0:
        f.error("E2010", "`requests_per_second` must be at least 1", f.body.attr_span("requests_per_second"),
                "no load", help="ITBench's scenario uses `requests_per_second = 1000`")
        return None
    if not any(w.namespace == namespace.name for w in f.build.workloads):
        f.error("E2011", f"namespace `{namespace.name}` runs no workload of the topology: the surge would slow "
                "nothing the scenario observes", f.fault.target.span, "no workloads",
                help="target the namespace of the application")
        return None
    created = [ir.ObjectRef("apps/v1", "Deployment", namespace.name, SCANNER),
               ir.ObjectRef("v1", "ServiceAccount", namespace.name, SCANNER),
               ir.ObjectRef("rbac.authorization.k8s.io/v1", "Role", namespace.name, SCANNER),
               ir.ObjectRef("rbac.authorization.k8s.io/v1", "RoleBinding", namespace.name, SCANNER)]
    return Checked({"requests_per_second": rate, "name": SCANNER, "image": SCANNER_IMAGE},
                   {"kubernetesObject": kobj(f.target), "loadGenerator": {"options": {"requestsPerSecond": rate}}},
                   created=created)


def _inject_request_surge(injection, topology):
    args, namespace = injection.args, injection.target.name
    name = args["name"]
    labels = {"app.kubernetes.io/name": name}

    def meta():
        return {"name": name, "namespace": namespace, "labels": dict(labels)}

    account = {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": meta()}
    role = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role", "metadata": meta(),
            "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list"]}]}
    binding = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding", "metadata": meta(),
               "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": name},
               "subjects": [{"kind": "ServiceAccount", "name": name, "namespace": namespace}]}
    deployment = {
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": meta(),
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"app.kubernetes.io/name": name}},
            "template": {
                "metadata": {"labels": dict(labels)},
                "spec": {
                    "serviceAccountName": name,
                    "containers": [{
                        "name": "scanner", "image": args["image"], "command": ["/bin/sh", "-c", SCANNER_SCRIPT],
                        "env": [{"name": "REQUESTS_PER_SECOND", "value": str(args["requests_per_second"])},
                                {"name": "NAMESPACE", "value": namespace}],
                        "resources": {"requests": {"cpu": "100m", "memory": "64Mi"},
                                      "limits": {"cpu": "1", "memory": "256Mi"}},
                    }],
                },
            },
        },
    }
    return Effect([account, role, binding, deployment], [])


# ---- deleted namespace --------------------------------------------------------------------------------------

# the topology objects a namespace holds, in the order they are applied (what uses a thing comes after it)
_NAMESPACED_POOLS = ("service_accounts", "roles", "role_bindings", "configmaps", "secrets", "claims", "workloads",
                     "services", "autoscalers", "ingresses")

NAMESPACE_SOLUTIONS = (
    {"steps": [
        {"command": "kubectl create namespace {{ args.kubernetesObject.metadata.name }}",
         "text": "Recreate the deleted namespace {{ args.kubernetesObject.metadata.name }}."},
        {"command": "kubectl apply -f manifests/topology.yaml",
         "text": "Redeploy the application's objects of the namespace from its manifests (its claims bind their "
                 "volumes again), and wait until its workloads are ready."},
    ]},
)


def namespace_objects(topology, namespace: str) -> list:
    """The topology's objects in `namespace` (the Namespace first), as they are deployed: bare Pods, Ingresses,
    Roles and RoleBindings too (a static pod's mirror is the kubelet's, and lives only in a provided namespace)."""
    out = [n for n in topology.namespaces if n.name == namespace]
    for pool in _NAMESPACED_POOLS:
        out += [o for o in getattr(topology, pool) if o.namespace == namespace
                and (getattr(o, "kind", "") != "Pod" or getattr(o, "bare", False))]
    return out


def _ref(obj) -> ir.ObjectRef:
    from ..render import render_object

    manifest = render_object(obj)
    return ir.ObjectRef(manifest["apiVersion"], manifest["kind"], manifest["metadata"].get("namespace"),
                        manifest["metadata"]["name"])


def _check_namespace_delete(f: FaultInput) -> Checked | None:
    namespace: ir.Namespace = f.obj
    if namespace.provided:
        f.error("E2011", f"namespace `{namespace.name}` is the cluster's own: deleting it takes the cluster down, not "
                "an application", f.fault.target.span, "provided by the cluster",
                help="delete a namespace the scenario deploys")
        return None
    workloads = [w for w in f.build.workloads if w.namespace == namespace.name and w.replicas > 0]
    if not workloads:
        f.error("E2011", f"namespace `{namespace.name}` runs no workload of the topology: deleting it would stop "
                "nothing the scenario observes", f.fault.target.span, "no workloads",
                help="delete the namespace of the application's workloads")
        return None
    return Checked({"namespace": namespace.name}, {"kubernetesObject": kobj(f.target)},
                   agent_namespaces=[namespace.name], agent_resources=["persistentvolumeclaims", "namespaces"])


def _inject_namespace_delete(injection, topology):
    # deleting the namespace deletes what it holds: every one of them is listed, so that the evaluator
    # checks each is back as it was
    objects = namespace_objects(topology, injection.target.name)
    return Effect([], [injection.target, *(_ref(o) for o in objects[1:])])


def _revert_namespace_delete(injection, topology):
    return Effect(copy.deepcopy(namespace_objects(topology, injection.target.name)), [])


FAULTS = [
    FaultKind(
        "ingress_port_blocking_network_policy", "ingress-port-blocking-network-policy", "networkpolicy.ingress:blocked",
        ("deployment", "statefulset"),
        "Creates a NetworkPolicy that refuses every connection to a workload's pods.",
        _check_network_policy, _inject_network_policy, _unmanage,
        preconditions=("The workload's containers serve at least one port.",),
        creates="NetworkPolicy `<component>-<word>` (`name`) in the workload's namespace, selecting its pods, with no "
                "ingress rule",
        args=(NAME_ARG,),
        solutions=_itbench_ingress_solutions(),
        labels=("virtualization", "misconfiguration"),
        symptoms=('requests',),
    ),
    FaultKind(
        "insufficient_resource_quota", "insufficient-kubernetes-resource-quota", "resourcequota:insufficient",
        ("deployment", "statefulset"),
        "Creates a ResourceQuota that caps the namespace's pods at what runs now, so the workload cannot scale out "
        "or roll out new pods. The refused pods never exist: no pod-state alert (ITBench's KubePodNotReady) fires "
        "on them (E2035); the workload's missing replicas tell.",
        _check_resource_quota, _inject_resource_quota, _unmanage,
        preconditions=("The workload runs at least one pod.",),
        creates="ResourceQuota `<component>-<word>` (`name`) in the workload's namespace (`pods` = the namespace's "
                "current pod count)",
        args=(NAME_ARG,),
        solutions=QUOTA_SOLUTIONS,
        readiness="absent", labels=("virtualization", "misconfiguration"),
        symptoms=('scheduling', 'readiness'),
        itbench_injects={"pods": None},  # ITBench's task caps memory at 1Gi, and scales the workload to 0 and back
    ),
    # Faults ITBench does not have, after SREGym's problems (docs/peers.md).
    FaultKind(
        "isolating_network_policy", None, "networkpolicy.ingress-egress:blocked", ("deployment", "statefulset"),
        "Creates a NetworkPolicy that refuses every connection to and from a workload's pods (ingress and egress, "
        "DNS lookups included), isolating them from the rest of the cluster.",
        _check_isolating_policy, _inject_isolating_policy, _unmanage,
        preconditions=("The workload serves a port or calls another component.", "The workload runs pods."),
        creates="NetworkPolicy `<component>-<word>` (`name`) in the workload's namespace, selecting its pods, with no "
                "ingress and no egress rule",
        args=(NAME_ARG,),
        alerts=(),
        solutions=(
            {"steps": [{"command": "kubectl -n {{ args.kubernetesObject.metadata.namespace }} get networkpolicies",
                        "text": "Find the network policy that selects the workload's pods."},
                       {"command": "kubectl -n {{ args.kubernetesObject.metadata.namespace }} delete networkpolicy "
                                   "{{ args.policy }}",
                        "text": "Delete the policy that isolates them."}]},
        ),
        labels=("virtualization", "misconfiguration"),
        symptoms=('requests', 'readiness'),
    ),
    FaultKind(
        # kubernetes pkg/quota/v1/evaluator/core/pods.go, podEvaluator.Constraints (v1.33): "must specify memory",
        # enforced by the ResourceQuota admission plugin on pod creation only
        "memory_resource_quota", None, "resourcequota.memory:undeclared-refused", ("namespace",),
        "Creates a ResourceQuota on memory in a namespace whose workloads do not declare memory: running pods stay, "
        "but the API server refuses every new pod that does not say how much memory it requests (`must specify "
        "memory`), so a workload whose pods are recreated stays short of replicas.",
        _check_memory_quota, _inject_memory_quota, _unmanage,
        args=(Arg("name", "string", default="memory-limit-quota", help="the quota's name (SREGym's)"),
              Arg("resource", "string", default="memory",
                  help="the quota's resource: `memory` (requests), `requests.memory` or `limits.memory`"),
              Arg("memory", "memory quantity", default="1Gi", help="the quota's hard amount")),
        preconditions=("The resource is a memory quota resource and the name a valid Kubernetes name.",
                       "A workload of the namespace has containers that declare no memory (no request or limit; for "
                       "`limits.memory`, no limit)."),
        creates="ResourceQuota `<name>` in the namespace (the root cause); pair it with a waiter that recreates the "
                "pods of a workload (`wait after delete_pods`)",
        alerts=(),
        solutions=(
            {"steps": [{"command": "kubectl -n {{ args.kubernetesObject.metadata.name }} get resourcequotas",
                        "text": "Find the memory quota that refuses the pods."},
                       {"command": "kubectl -n {{ args.kubernetesObject.metadata.name }} delete resourcequota "
                                   "{{ args.resourceQuota.name }}",
                        "text": "Delete it (or declare memory requests and limits on every workload of the "
                                "namespace)."}]},
        ),
        labels=("virtualization", "misconfiguration"),
        symptoms=('scheduling', 'readiness'),
    ),
    FaultKind(
        "api_server_request_surge", "kubernetes-api-server-request-surge", "apiserver.requests:surge", ("namespace",),
        "Deploys a load generator that floods the Kubernetes API server with requests from the namespace.",
        _check_request_surge, _inject_request_surge, _unmanage,
        args=(Arg("requests_per_second", "integer", required=True, help="the load, at least 1 (ITBench uses 1000)"),),
        preconditions=("The rate is at least one request per second.", "The namespace runs workloads of the topology."),
        creates=f"Deployment `{SCANNER}` (image `{SCANNER_IMAGE}`) with its ServiceAccount, Role and RoleBinding in "
                "the namespace, listing pods through the API server at the given rate",
        symptoms=('latency',),
    ),
    FaultKind(
        "namespace_delete", None, "namespace:deleted", ("namespace",),
        "Deletes a namespace of the application, and with it every object it holds: its workloads (bare pods "
        "included), services, ingresses, configuration, roles and volume claims.",
        _check_namespace_delete, _inject_namespace_delete, _revert_namespace_delete,
        preconditions=("The namespace is one the scenario deploys, not the cluster's own.",
                       "The namespace runs at least one workload of the topology."),
        alerts=("NoRequestsReceived",),
        solutions=NAMESPACE_SOLUTIONS,
        symptoms=('readiness',),
    ),
]
