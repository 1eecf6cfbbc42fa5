"""Kubernetes manifests for the topology and for the agent's access (each object rendered by `render.py`)."""

from __future__ import annotations

from .. import ir
from ..access import POD_SUBRESOURCES, missing
from ..render import _meta, render_object
from ..topology import AGENT_RESOURCES

MANAGED_BY = {"app.kubernetes.io/managed-by": "itbench"}


READ_VERBS = ["get", "list", "watch"]
WRITE_VERBS = ["create", "delete", "patch", "update"]
# The cluster's namespaces and nodes are changed (a namespace relabelled, a node cordoned), never removed: deleting
# a namespace deletes all in it. A namespace may be made (the application's, deleted by a fault, made again), never
# a node
FIXED_RESOURCES = ("namespaces", "nodes")
CHANGE_VERBS = ["patch", "update"]
# A namespace the agent may only read (the cluster's own, kube-system) is read without its Secrets: they hold the
# cluster's tokens and keys, not the scenario's
UNREAD_IN_READ_ONLY = ("secrets",)


# What runs pods, by API group: whoever creates one names the service account it runs as, and whoever changes its
# pod spec runs code as that account (RBAC does not ask whether the creator may act as it). With Secrets, whose
# service-account-token type has the token controller fill in any account's token, they are the resources the
# agent's admission policy guards (`pod_guard`)
POD_RUNNERS = {"": ("pods", "replicationcontrollers"), "apps": ("daemonsets", "deployments", "replicasets",
                                                                "statefulsets"),
               "batch": ("cronjobs", "jobs")}
TOKEN_SECRET = "kubernetes.io/service-account-token"


def scenario_agent_access(scenario: ir.Scenario) -> list[dict]:
    """manifests/agent-access.yaml of a scenario: its declared access and what its prompt's commands need, and the
    admission policy that keeps the agent from running as a wider service account (`pod_guard`)."""
    from ..access import cited_commands

    objects = agent_access(scenario.agent, cited_commands(scenario))
    return objects + pod_guard(scenario.agent, objects, topology_manifests(scenario.topology, provided=True))


def narrow_accounts(access: ir.AgentAccess, objects: list[dict], cluster: list[dict]) -> list[str]:
    """`namespace/name` of the service accounts (the application's, and each namespace's `default`) of the namespaces
    the agent may write in that may do no more than the agent with its access `objects` (access.wider_than)."""
    from ..access import wider_than

    home = access.namespaces[0]
    writable = [n for n in access.namespaces if n not in access.read_only]
    accounts = {(n, "default") for n in writable} | {
        ((o.get("metadata") or {}).get("namespace"), (o.get("metadata") or {}).get("name"))
        for o in cluster if o.get("kind") == "ServiceAccount"}
    return sorted(f"{ns}/{name}" for ns, name in accounts if ns in writable and isinstance(name, str)
                  and wider_than(cluster, name, ns, objects, access.service_account, home) is None)


def pod_guard(access: ir.AgentAccess, objects: list[dict], cluster: list[dict]) -> list[dict]:
    """A ValidatingAdmissionPolicy and its binding that refuse the agent's requests (by its ServiceAccount's user
    name, and those of each of `narrow_accounts`, the accounts it may run pods as: a pod of its own is the agent
    too, whatever the agent binds to that pod's account) that would hand it a wider token than its Roles give: a Secret of type service-account-token (the token
    controller fills in the named account's token, which the agent then reads), and a pod or workload (POD_RUNNERS)
    that runs as a service account not among `narrow_accounts` - unless an update leaves its pod spec as it was
    (scaled, relabelled, restarted by `kubectl rollout restart`). None when the agent may create none of them."""
    from ..access import Request, allows

    if not access.namespaces:
        return []
    home, name = access.namespaces[0], access.service_account
    guarded = [(group, resource) for group, resources in POD_RUNNERS.items() for resource in resources + (
        ("secrets",) if group == "" else ())]
    if not any(allows(objects, name, home, Request(verb, group, resource, namespace))
               for group, resource in guarded for verb in ("create", "update", "patch")
               for namespace in access.namespaces):
        return []
    narrow = narrow_accounts(access, objects, cluster)
    allowed = ", ".join(f"'{a}'" for a in narrow)
    # whose requests it holds: the agent's, and those of every account the agent may run pods as (a pod of the
    # agent's running as `default`, whose token the agent's own RoleBinding may lend the agent's Role to, is
    # the agent acting under another name); so no pod of an account the agent can act as runs a wider account
    # or reaches its node, whatever rights the agent binds to that account
    users = ", ".join(f"'system:serviceaccount:{a.replace('/', ':')}'"
                      for a in [f"{home}/{name}"] + [a for a in narrow if a != f"{home}/{name}"])

    def template(obj: str) -> str:  # what holds the pod's metadata and spec
        return (f"request.resource.resource == 'pods' ? {obj} : request.resource.resource == 'cronjobs' ? "
                f"{obj}.spec.jobTemplate.spec.template : {obj}.spec.template")

    policy = {
        "apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy", "metadata": _meta(name),
        "spec": {
            "failurePolicy": "Fail",
            "matchConstraints": {"resourceRules": [
                {"apiGroups": [group], "apiVersions": ["v1"], "operations": ["CREATE", "UPDATE"],
                 "resources": sorted(resources + (("secrets",) if group == "" else ()))}
                for group, resources in POD_RUNNERS.items()]},
            "matchConditions": [{"name": "agent", "expression": f"request.userInfo.username in [{users}]"}],
            "variables": [
                {"name": "template", "expression": template("object")},
                {"name": "pod", "expression": "variables.template.spec"},
                {"name": "oldTemplate", "expression": template("oldObject")},
                {"name": "oldPod", "expression": "variables.oldTemplate.spec"},
                {"name": "account", "expression":
                    "has(variables.pod.serviceAccountName) && variables.pod.serviceAccountName != '' ? "
                    "variables.pod.serviceAccountName : has(variables.pod.serviceAccount) && "
                    "variables.pod.serviceAccount != '' ? variables.pod.serviceAccount : 'default'"},
                # what the pod holds of its node beyond Pod Security's baseline level, and what of it the old object
                # held already (`node_reach`)
                {"name": "containers", "expression": CEL_CONTAINERS.format("variables.pod")},
                {"name": "annotations", "expression": CEL_ANNOTATIONS.format("variables.template")},
                {"name": "reach", "expression": node_reach("variables.pod", "variables.containers",
                                                           "variables.annotations")},
                {"name": "oldContainers", "expression": CEL_CONTAINERS.format("variables.oldPod")},
                {"name": "oldAnnotations", "expression": CEL_ANNOTATIONS.format("variables.oldTemplate")},
                {"name": "kept", "expression": "request.operation == 'UPDATE' ? " + node_reach(
                    "variables.oldPod", "variables.oldContainers", "variables.oldAnnotations") + " : []"},
            ],
            "validations": [
                {"expression": f"request.resource.resource != 'secrets' || !has(object.type) || "
                               f"object.type != '{TOKEN_SECRET}'",
                 "message": f"Secrets of type {TOKEN_SECRET} are not yours to make"},
                {"expression": f"request.resource.resource == 'secrets' || "
                               f"(request.namespace + '/' + variables.account) in [{allowed}] || "
                               f"(request.operation == 'UPDATE' && variables.pod == variables.oldPod)",
                 "messageExpression": "'service account ' + variables.account + ' may do more than you: "
                                      "you may not run pods as it, nor change the pods that run as it'"},
                {"expression": "request.resource.resource == 'secrets' || variables.reach.all(x, x in variables.kept)",
                 "messageExpression": "'a pod of yours may not reach its node beyond the Pod Security baseline "
                                      "level: ' + variables.reach.filter(x, !(x in variables.kept)).join(', ')"},
            ],
        },
    }
    binding = {"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicyBinding",
               "metadata": _meta(name), "spec": {"policyName": name, "validationActions": ["Deny"]}}
    return [policy, binding]


# CEL: the containers of a pod spec `{0}`, and the annotations of a pod template `{0}` (a map of strings, typed as
# the annotations are, when it has none)
CEL_CONTAINERS = " + ".join(f"(has({{0}}.{key}) ? {{0}}.{key} : [])"
                            for key in ("initContainers", "containers", "ephemeralContainers"))
CEL_ANNOTATIONS = "has({0}.metadata) && has({0}.metadata.annotations) ? {0}.metadata.annotations : {{'': ''}}"


def node_reach(spec: str, containers: str, annotations: str) -> str:
    """A CEL list of what the pod `spec` (its `containers`, CEL_CONTAINERS; its `annotations`) holds of its node that Pod
    Security's baseline level forbids (the Pod Security Standards, as runtime/kyverno/pss.py checks them), one string
    a setting: `privileged container web`, `hostPath /var/log`, `capabilities NET_ADMIN of web`. The agent's policy
    (`pod_guard`) refuses a pod or template that holds one its old object did not: an application's own host settings
    may stay through a fix, none may be added."""
    from ..runtime.kyverno.pss import APPARMOR_ANNOTATION, CAPABILITIES_BASELINE, SELINUX_TYPES, SYSCTLS_BASELINE

    def has(base: str, path: str) -> str:  # `base.path` is set (each step of a dotted path)
        steps = path.split(".")
        return " && ".join(f"has({base}.{'.'.join(steps[:i + 1])})" for i in range(len(steps)))

    def strings(values) -> str:
        return "[" + ", ".join(f"'{v}'" for v in sorted(values)) + "]"

    def each(condition: str, item: str) -> str:  # one item per container `c` that meets `condition`
        return f"{containers}.filter(c, {condition}).map(c, {item})"

    def security(setting: str, bad, what: str) -> list[str]:  # in the pod's securityContext and each container's
        return [f"({has(spec, 'securityContext.' + setting)} && {bad(f'{spec}.securityContext.{setting}')} ? "
                f"['{what} of the pod'] : [])",
                each(f"{has('c', 'securityContext.' + setting)} && {bad('c.securityContext.' + setting)}",
                     f"'{what} of ' + c.name")]

    def selinux(options: str) -> str:
        return (f"(({has(options, 'type')} && !({options}.type in {strings(SELINUX_TYPES)})) || "
                f"({has(options, 'user')} && {options}.user != '') || ({has(options, 'role')} && {options}.role != ''))")

    probes = [f"{p}.{kind}" for p in ("livenessProbe", "readinessProbe", "startupProbe", "lifecycle.postStart",
                                      "lifecycle.preStop") for kind in ("httpGet", "tcpSocket")]
    extra = f"c.securityContext.capabilities.add.filter(a, !(a in {strings(CAPABILITIES_BASELINE)}))"
    ports = "c.ports.filter(p, has(p.hostPort) && p.hostPort != 0)"
    parts = [f"({has(spec, field)} && {spec}.{field} ? ['{field}'] : [])"
             for field in ("hostNetwork", "hostPID", "hostIPC")]
    parts += security("windowsOptions.hostProcess", lambda v: v, "hostProcess")
    parts += [each(f"{has('c', 'securityContext.privileged')} && c.securityContext.privileged",
                   "'privileged container ' + c.name"),
              each(f"{has('c', 'securityContext.capabilities.add')} && size({extra}) > 0",
                   f"'capabilities ' + {extra}.join(',') + ' of ' + c.name"),
              f"(has({spec}.volumes) ? {spec}.volumes.filter(v, has(v.hostPath)).map(v, 'hostPath ' + v.hostPath.path) "
              f": [])",
              each(f"has(c.ports) && size({ports}) > 0",
                   f"'hostPort ' + {ports}.map(p, string(p.hostPort)).join(',') + ' of ' + c.name"),
              f"{annotations}.filter(k, k.startsWith('{APPARMOR_ANNOTATION}') && {annotations}[k] != 'runtime/default' "
              f"&& !{annotations}[k].startsWith('localhost/')).map(k, 'AppArmor ' + k + '=' + {annotations}[k])"]
    parts += security("appArmorProfile.type", lambda v: f"!({v} in ['RuntimeDefault', 'Localhost'])",
                      "AppArmor profile")
    parts += security("seLinuxOptions", selinux, "seLinuxOptions")
    parts += [each(f"{has('c', 'securityContext.procMount')} && c.securityContext.procMount != 'Default'",
                   "'procMount of ' + c.name")]
    parts += security("seccompProfile.type", lambda v: f"{v} == 'Unconfined'", "seccomp Unconfined")
    parts += [f"({has(spec, 'securityContext.sysctls')} ? {spec}.securityContext.sysctls.filter(y, "
              f"!(y.name in {strings(SYSCTLS_BASELINE)})).map(y, 'sysctl ' + y.name) : [])",
              each(" || ".join(f"({has('c', p + '.host')} && c.{p}.host != '')" for p in probes),
                   "'a probe or hook on another host in ' + c.name")]
    return " + ".join(parts)


def agent_access(access: ir.AgentAccess, commands: tuple[str, ...] = ()) -> list[dict]:
    """A ServiceAccount for the agent and, per namespace, a Role and RoleBinding with the declared access;
    a ClusterRole for cluster-scoped access. They carry no label of the harness's (`MANAGED_BY`): the agent reads
    its own access objects, and a label only the harness's objects carry would list the others beside them (the
    run knows what it created from the bundle, not from a label). `commands`, the kubectl commands the prompt cites
    (`access.cited_commands`), add the rights they need that the declared access does not give."""
    if not access.namespaces:
        return []
    objects = _declared_access(access)
    return _grant(objects, access, missing(objects, access.service_account, access.namespaces[0], commands))


def _grant(objects: list[dict], access: ir.AgentAccess, requests: list) -> list[dict]:
    """Add rules for `requests` (access.Request): cluster-wide ones to the ClusterRole (made when absent),
    namespaced ones to that namespace's Role."""
    if not requests:
        return objects
    wanted: dict[str | None, dict[tuple[str, str], set[str]]] = {}
    for r in requests:
        wanted.setdefault(r.namespace, {}).setdefault((r.group, r.resource), set()).add(r.verb)
    name, home = access.service_account, access.namespaces[0]
    for namespace, grants in wanted.items():
        kind = "ClusterRole" if namespace is None else "Role"
        role = next((o for o in objects if o["kind"] == kind and o["metadata"].get("namespace") == namespace), None)
        if role is None:
            binding_kind = "ClusterRoleBinding" if namespace is None else "RoleBinding"
            role = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": kind,
                    "metadata": _meta(name, namespace), "rules": []}
            objects += [role, {
                "apiVersion": "rbac.authorization.k8s.io/v1", "kind": binding_kind,
                "metadata": _meta(name, namespace),
                "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": kind, "name": name},
                "subjects": [{"kind": "ServiceAccount", "name": name, "namespace": home}]}]
        by_verbs: dict[tuple[str, tuple[str, ...]], list[str]] = {}
        for (group, resource), verbs in sorted(grants.items()):
            by_verbs.setdefault((group, tuple(sorted(verbs))), []).append(resource)
        role["rules"] = role["rules"] + [{"apiGroups": [group], "resources": sorted(resources), "verbs": list(verbs)}
                                         for (group, verbs), resources in sorted(by_verbs.items())]
    return objects


def _declared_access(access: ir.AgentAccess) -> list[dict]:
    home = access.namespaces[0]
    objects = [{"apiVersion": "v1", "kind": "ServiceAccount", "metadata": _meta(access.service_account, home)}]
    rules = _rules(access.read, READ_VERBS) + _rules(access.write, WRITE_VERBS)
    # no shell into a namespace whose pods hold a wider token than the agent's (expectations.wide_token_namespaces)
    narrow = _rules(access.read, READ_VERBS) + _rules([r for r in access.write if r not in POD_SUBRESOURCES],
                                                      WRITE_VERBS)
    read_only = _rules([r for r in access.read if r not in UNREAD_IN_READ_ONLY], READ_VERBS)
    for namespace in access.namespaces:
        name = f"{access.service_account}"
        objects.append({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
                        "metadata": _meta(name, namespace),
                        "rules": read_only if namespace in access.read_only else
                        narrow if namespace in access.no_exec else rules})
        objects.append({
            "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding", "metadata": _meta(name, namespace),
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": name},
            "subjects": [{"kind": "ServiceAccount", "name": access.service_account, "namespace": home}],
        })
    cluster_rules = (_rules(access.cluster_read, READ_VERBS)
                     + _rules([r for r in access.cluster_write if r not in FIXED_RESOURCES], WRITE_VERBS)
                     + _rules([r for r in access.cluster_write if r == "namespaces"], ["create", *CHANGE_VERBS])
                     + _rules([r for r in access.cluster_write if r == "nodes"], CHANGE_VERBS))
    if cluster_rules:
        name = access.service_account
        objects.append({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
                        "metadata": _meta(name), "rules": cluster_rules})
        objects.append({
            "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding", "metadata": _meta(name),
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": name},
            "subjects": [{"kind": "ServiceAccount", "name": access.service_account, "namespace": home}],
        })
    return objects


def _rules(resources: list[str], verbs: list[str]) -> list[dict]:
    by_group: dict[str, list[str]] = {}
    for resource in resources:
        if resource not in AGENT_RESOURCES:  # a rule under a wrong group grants nothing the agent needs
            raise ValueError(f"the agent's access names `{resource}`, whose API group is not known "
                             "(topology.AGENT_RESOURCES)")
        by_group.setdefault(AGENT_RESOURCES[resource], []).append(resource)
    return [{"apiGroups": [group], "resources": sorted(names), "verbs": list(verbs)} for group, names in sorted(by_group.items())]


def provided_namespaces(topology: ir.Topology) -> set[str]:
    return {n.name for n in topology.namespaces if n.provided}


def topology_manifests(topology: ir.Topology, exclude: list[int] = (), provided: bool = False) -> list[dict]:
    """Every topology object (but those whose id() is in `exclude`), namespaces first, then by kind.

    What the cluster provides (a namespace marked `provided` and everything in it) is not deployed:
    it is left out, unless `provided` asks for the cluster as it runs (the derived states)."""
    objects: list = []
    objects += topology.namespaces
    objects += topology.storage_classes  # storage before the workloads that mount it
    objects += topology.persistent_volumes
    objects += topology.claims
    objects += topology.service_accounts
    objects += topology.roles  # RBAC after the service accounts it binds
    objects += topology.role_bindings
    objects += topology.configmaps
    objects += topology.secrets
    objects += topology.workloads
    objects += topology.services
    objects += topology.ingresses  # after the Services they route to
    objects += topology.autoscalers
    skip = set() if provided else provided_namespaces(topology)
    if skip:
        objects = [o for o in objects if (o.name if isinstance(o, ir.Namespace) else getattr(o, "namespace", None))
                   not in skip]
    return [render_object(o) for o in objects if id(o) not in exclude]
