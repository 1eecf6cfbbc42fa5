"""Faults at the cluster level: network policies, resource quotas, API server load."""

from __future__ import annotations

from .. import ir
from .base import CREATABLE_KINDS, Arg, Checked, Effect, FaultInput, FaultKind, kobj

CREATABLE_KINDS["networkpolicy"] = ("networking.k8s.io/v1", "NetworkPolicy")
CREATABLE_KINDS["resourcequota"] = ("v1", "ResourceQuota")

MANAGED = {"app.kubernetes.io/managed-by": "itbench"}


def _unmanage(injection: ir.Injection, topology: ir.Topology) -> Effect:
    """Revert of a fault that only creates objects: delete them."""
    return Effect([], list(injection.created))


# ---- ingress-port-blocking network policy -----------------------------------------------------------------


def _policy_name(workload: str) -> str:
    return f"{workload[:55]}-ingress"  # the name ITBench's solutions use: `<workload>-ingress`


def _check_network_policy(f: FaultInput) -> Checked | None:
    workload: ir.Workload = f.obj
    ports = sorted({p.port for c in workload.containers for p in c.ports})
    if not ports:
        f.error("E2022", f"{workload.kind.lower()} `{workload.name}` declares no container port: there is no ingress "
                "to block", f.fault.target.span, "no port",
                help="target a workload whose containers serve ports (`port \"http\" = 8080`)")
        return None
    policy = ir.ObjectRef("networking.k8s.io/v1", "NetworkPolicy", workload.namespace, _policy_name(workload.name))
    return Checked({"policy": policy.name, "pod_selector": dict(workload.selector), "ports": ports},
                   {"kubernetesObject": kobj(f.target)}, side_objects=[policy], created=[policy],
                   agent_namespaces=[workload.namespace], agent_resources=["networkpolicies"])


def _inject_network_policy(injection, topology):
    args = injection.args
    policy = {
        "apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
        "metadata": {"name": args["policy"], "namespace": injection.target.namespace, "labels": dict(MANAGED)},
        # Ingress listed with no rule: every connection to the selected pods' ports is refused
        "spec": {"podSelector": {"matchLabels": dict(args["pod_selector"])}, "policyTypes": ["Ingress"], "ingress": []},
    }
    return Effect([policy], [])


# ---- insufficient resource quota ----------------------------------------------------------------------------

QUOTA_SOLUTIONS = (
    {"steps": [{"command": "kubectl -n {{ args.kubernetesObject.metadata.namespace }} edit resourcequota "
                           "{{ args.kubernetesObject.metadata.name }}-resource-quota",
                "text": "Manually edit the manifest(s) and increase the values of the resource quota(s)."}]},
    {"steps": [{"command": "kubectl -n {{ args.kubernetesObject.metadata.namespace }} delete resourcequota "
                           "{{ args.kubernetesObject.metadata.name }}-resource-quota",
                "text": "Delete the offending resource quota(s) if it is no longer required."}]},
)


def _quota_name(workload: str) -> str:
    # One name for the quota, used by the injection, both ground truths and the solutions (ITBench's own files
    # disagree: `strict-resource-quota` in its ground truth, `memory` in its solution template).
    return f"{workload}-resource-quota"


def _check_resource_quota(f: FaultInput) -> Checked | None:
    workload: ir.Workload = f.obj
    name = _quota_name(workload.name)
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
                   agent_resources=["resourcequotas"])


def _inject_resource_quota(injection, topology):
    args = injection.args
    quota = {
        "apiVersion": "v1", "kind": "ResourceQuota",
        "metadata": {"name": args["quota"], "namespace": injection.target.namespace, "labels": dict(MANAGED)},
        "spec": {"hard": {"pods": str(args["pods"])}},
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
    labels = {"app.kubernetes.io/name": name, **MANAGED}

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


FAULTS = [
    FaultKind(
        "ingress_port_blocking_network_policy", "ingress-port-blocking-network-policy", "networkpolicy.ingress:blocked",
        ("deployment", "statefulset"),
        "Creates a NetworkPolicy that refuses every connection to a workload's pods.",
        _check_network_policy, _inject_network_policy, _unmanage,
        preconditions=("The workload's containers serve at least one port.",),
        creates="NetworkPolicy `<workload>-ingress` in the workload's namespace, selecting its pods, with no ingress rule",
    ),
    FaultKind(
        "insufficient_resource_quota", "insufficient-kubernetes-resource-quota", "resourcequota:insufficient",
        ("deployment", "statefulset"),
        "Creates a ResourceQuota that caps the namespace's pods at what runs now, so the workload cannot scale out "
        "or roll out new pods.",
        _check_resource_quota, _inject_resource_quota, _unmanage,
        preconditions=("The workload runs at least one pod.",),
        creates="ResourceQuota `<workload>-resource-quota` in the workload's namespace (`pods` = the namespace's "
                "current pod count)",
        solutions=QUOTA_SOLUTIONS,
    ),
    FaultKind(
        "api_server_request_surge", "kubernetes-api-server-request-surge", "apiserver.requests:surge", ("namespace",),
        "Deploys a load generator that floods the Kubernetes API server with requests from the namespace.",
        _check_request_surge, _inject_request_surge, _unmanage,
        args=(Arg("requests_per_second", "integer", required=True, help="the load, at least 1 (ITBench uses 1000)"),),
        preconditions=("The rate is at least one request per second.", "The namespace runs workloads of the topology."),
        creates=f"Deployment `{SCANNER}` (image `{SCANNER_IMAGE}`) with its ServiceAccount, Role and RoleBinding in "
                "the namespace, listing pods through the API server at the given rate",
    ),
]
