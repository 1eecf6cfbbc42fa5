"""The resource types kubectl resolves (`deploy`, `deployments.apps`, a custom resource's plural) and
the objects' keys.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .state import _Context, Key, _refused, _Stop


@dataclass(frozen=True)
class _Resource:
    kind: str
    plural: str
    group: str  # "" for the core group
    namespaced: bool
    short: tuple[str, ...] = ()
    builtin: bool = True  # a type of Kubernetes itself (strategic merge works), not a custom resource

    @property
    def names(self) -> tuple[str, ...]:
        return (self.kind.lower(), self.plural, *self.short)

    @property
    def noun(self) -> str:
        """How the API server names the type in its messages: `deployments.apps`."""
        return f"{self.plural}.{self.group}" if self.group else self.plural

    def ref(self, name: str) -> str:
        """How kubectl names an object in its messages: `deployment.apps/cart`."""
        return f"{self.kind.lower()}{'.' + self.group if self.group else ''}/{name}"


def _builtin(kind: str, plural: str, group: str, namespaced: bool = True, *short: str) -> _Resource:
    return _Resource(kind, plural, group, namespaced, short)


def _custom(kind: str, plural: str, group: str, namespaced: bool = True, *short: str) -> _Resource:
    return _Resource(kind, plural, group, namespaced, short, builtin=False)


_CHAOS_KINDS = ("PodChaos", "NetworkChaos", "StressChaos", "IOChaos", "HTTPChaos", "DNSChaos", "TimeChaos",
                "JVMChaos", "KernelChaos", "AWSChaos", "GCPChaos", "AzureChaos", "BlockChaos",
                "PhysicalMachineChaos", "PodNetworkChaos", "PodIOChaos", "PodHttpChaos")


_RESOURCES: tuple[_Resource, ...] = (
    _builtin("Pod", "pods", "", True, "po"),
    _builtin("Service", "services", "", True, "svc"),
    _builtin("ConfigMap", "configmaps", "", True, "cm"),
    _builtin("Secret", "secrets", ""),
    _builtin("ServiceAccount", "serviceaccounts", "", True, "sa"),
    _builtin("Namespace", "namespaces", "", False, "ns"),
    _builtin("Node", "nodes", "", False, "no"),
    _builtin("PersistentVolumeClaim", "persistentvolumeclaims", "", True, "pvc"),
    _builtin("PersistentVolume", "persistentvolumes", "", False, "pv"),
    _builtin("ResourceQuota", "resourcequotas", "", True, "quota"),
    _builtin("LimitRange", "limitranges", "", True, "limits"),
    _builtin("Endpoints", "endpoints", "", True, "ep"),
    _builtin("Event", "events", "", True, "ev"),
    _builtin("ReplicationController", "replicationcontrollers", "", True, "rc"),
    _builtin("Deployment", "deployments", "apps", True, "deploy"),
    _builtin("StatefulSet", "statefulsets", "apps", True, "sts"),
    _builtin("DaemonSet", "daemonsets", "apps", True, "ds"),
    _builtin("ReplicaSet", "replicasets", "apps", True, "rs"),
    _builtin("ControllerRevision", "controllerrevisions", "apps"),
    _builtin("HorizontalPodAutoscaler", "horizontalpodautoscalers", "autoscaling", True, "hpa"),
    _builtin("Job", "jobs", "batch"),
    _builtin("CronJob", "cronjobs", "batch", True, "cj"),
    _builtin("NetworkPolicy", "networkpolicies", "networking.k8s.io", True, "netpol"),
    _builtin("Ingress", "ingresses", "networking.k8s.io", True, "ing"),
    _builtin("IngressClass", "ingressclasses", "networking.k8s.io", False),
    _builtin("PodDisruptionBudget", "poddisruptionbudgets", "policy", True, "pdb"),
    _builtin("PriorityClass", "priorityclasses", "scheduling.k8s.io", False, "pc"),
    _builtin("Role", "roles", "rbac.authorization.k8s.io"),
    _builtin("RoleBinding", "rolebindings", "rbac.authorization.k8s.io"),
    _builtin("ClusterRole", "clusterroles", "rbac.authorization.k8s.io", False),
    _builtin("ClusterRoleBinding", "clusterrolebindings", "rbac.authorization.k8s.io", False),
    _builtin("StorageClass", "storageclasses", "storage.k8s.io", False, "sc"),
    _builtin("CustomResourceDefinition", "customresourcedefinitions", "apiextensions.k8s.io", False, "crd", "crds"),
    _custom("Schedule", "schedules", "chaos-mesh.org"),
    _custom("Workflow", "workflows", "chaos-mesh.org", True, "wf"),
    _custom("StatusCheck", "statuschecks", "chaos-mesh.org"),
    *(_custom(kind, kind.lower(), "chaos-mesh.org") for kind in _CHAOS_KINDS),
    _custom("AuthorizationPolicy", "authorizationpolicies", "security.istio.io", True, "ap"),
    _custom("PeerAuthentication", "peerauthentications", "security.istio.io", True, "pa"),
    _custom("RequestAuthentication", "requestauthentications", "security.istio.io", True, "ra"),
    _custom("VirtualService", "virtualservices", "networking.istio.io", True, "vs"),
    _custom("DestinationRule", "destinationrules", "networking.istio.io", True, "dr"),
    _custom("Gateway", "gateways", "networking.istio.io", True, "gw"),
    _custom("ServiceEntry", "serviceentries", "networking.istio.io", True, "se"),
    _custom("Sidecar", "sidecars", "networking.istio.io"),
    _custom("ClusterPolicy", "clusterpolicies", "kyverno.io", False, "cpol"),
    _custom("Policy", "policies", "kyverno.io", True, "pol"),
    _custom("PolicyReport", "policyreports", "wgpolicyk8s.io", True, "polr"),
    _custom("ClusterPolicyReport", "clusterpolicyreports", "wgpolicyk8s.io", False, "cpolr"),
)


# `kubectl get all` and `kubectl delete all`
_CATEGORY_ALL = ("Pod", "Service", "ReplicationController", "DaemonSet", "Deployment", "ReplicaSet", "StatefulSet",
                 "HorizontalPodAutoscaler", "CronJob", "Job")


def _group_of(api_version: Any) -> str:
    text = api_version if isinstance(api_version, str) else ""
    return text.rpartition("/")[0]


def _plural_of(kind: str) -> str:
    word = kind.lower()
    if word.endswith(("s", "x", "ch", "sh")):
        return word + "es"
    if word.endswith("y") and word[-2:-1] not in ("a", "e", "o", "u"):
        return word[:-1] + "ies"
    return word + "s"


def _known_resources(ctx: _Context) -> list[_Resource]:
    """Kubernetes' and the usual add-ons' types, then those only the objects themselves tell of."""
    known = list(_RESOURCES)
    kinds = {r.kind for r in known}
    for key in ctx.store.keys():
        kind = key[0]
        if isinstance(kind, str) and kind and kind not in kinds:
            obj = ctx.store.get(key) or {}
            known.append(_custom(kind, _plural_of(kind), _group_of(obj.get("apiVersion")), key[1] is not None))
            kinds.add(kind)
    return known


def _resource(ctx: _Context, word: str) -> _Resource:
    """The type a kubectl argument names: `deploy`, `deployments`, `Deployment`, `deployments.apps`..."""
    wanted = word.lower()
    known = _known_resources(ctx)
    for res in known:
        if wanted in res.names:
            return res
    base, dot, group = wanted.partition(".")
    if dot:
        for res in known:
            if base in res.names and res.group and (group == res.group or group.endswith("." + res.group)):
                return res
    raise _refused(f'error: the server doesn\'t have a resource type "{word}"')


def _resource_of(ctx: _Context, manifest: dict) -> _Resource:
    """The type of a manifest from a file, by kind and API group (a kind alone when the group is unknown)."""
    kind = manifest.get("kind")
    if not isinstance(kind, str) or not kind:
        raise _refused("error: error validating data: kind not set")
    group = _group_of(manifest.get("apiVersion"))
    known = _known_resources(ctx)
    for res in known:
        if res.kind == kind and res.group == group:
            return res
    for res in known:
        if res.kind == kind:
            return res
    return _custom(kind, _plural_of(kind), group, True)


def _key(res: _Resource, namespace: str | None, name: str) -> Key:
    return (res.kind, namespace if res.namespaced else None, name)


def _not_found(res: _Resource, name: str, when: str = "") -> _Stop:
    return _refused(f'Error from server (NotFound): {when}{res.noun} "{name}" not found')
