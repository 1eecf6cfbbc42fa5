"""What the agent is told to run, and whether its access allows it.

The commands a prompt cites are declared once, on the task class (`ciso/tasks.TaskClass.commands`)
or the domain (`DOMAIN_COMMANDS`); `cited_commands` gives a scenario's. `command_rights` maps a
kubectl command to the API requests it makes; `allows` is a small RBAC evaluator (the API
server's rule matching for Roles, ClusterRoles and their bindings) over the agent-access manifests.
`backends/manifests.agent_access` grants what the cited commands need and the declared access does
not give; the tests check, for every library scenario, that each command its prompt cites is allowed.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from typing import Iterable

# The commands each domain's prompt cites (beside those of a CISO task class).
DOMAIN_COMMANDS: dict[str, tuple[str, ...]] = {"sre": (), "finops": (), "ciso": ()}
# The API groups of fault-injection tools: their objects are the fault itself (a PodChaos names its action and its
# target). No default access grants them; only a command the prompt cites may (`_grant`, agent_view's E4010).
FAULT_TOOL_GROUPS = frozenset({"chaos-mesh.org"})
# Subresources that run a process in a pod, reach its ports or mint a token: whoever holds them acts as the pod's
# service account (`get` on pods/exec opens a shell over WebSockets on API servers before 1.31's
# AuthorizePodWebsocketUpgradeCreatePermission), so none is a read right.
POD_SUBRESOURCES = ("pods/exec", "pods/attach", "pods/portforward")
TOKEN_SUBRESOURCE = "serviceaccounts/token"
REACH_SUBRESOURCES = (*POD_SUBRESOURCES, TOKEN_SUBRESOURCE)


def request_order(request: "Request") -> tuple:
    """A sort key of requests: a cluster-wide one (namespace None) first among its kind."""
    return (request.verb, request.group, request.resource, request.namespace or "", request.name)


class UnknownCommand(ValueError):
    """A cited command whose API requests are not known: add it to the tables below."""


@dataclass(frozen=True, order=True)
class Request:
    """One API request: `namespace` None is cluster-wide (a cluster-scoped resource, or all namespaces); `name` the
    object's, "" for a request on every object (list, watch, create)."""

    verb: str
    group: str
    resource: str
    namespace: str | None
    name: str = ""


# kubectl's names of a resource (plural, singular, short names) -> (API group, plural, namespaced)
_RESOURCES: dict[str, tuple[str, str, bool]] = {}
for _names, _group, _plural, _namespaced in [
    (("po", "pod"), "", "pods", True), (("svc", "service"), "", "services", True),
    (("cm", "configmap"), "", "configmaps", True), (("secret",), "", "secrets", True),
    (("ev", "event"), "", "events", True), (("ep", "endpoint"), "", "endpoints", True),
    (("sa", "serviceaccount"), "", "serviceaccounts", True),
    (("pvc", "persistentvolumeclaim"), "", "persistentvolumeclaims", True),
    (("quota", "resourcequota"), "", "resourcequotas", True), (("limits", "limitrange"), "", "limitranges", True),
    (("ns", "namespace"), "", "namespaces", False), (("no", "node"), "", "nodes", False),
    (("deploy", "deployment"), "apps", "deployments", True), (("sts", "statefulset"), "apps", "statefulsets", True),
    (("ds", "daemonset"), "apps", "daemonsets", True), (("rs", "replicaset"), "apps", "replicasets", True),
    (("hpa", "horizontalpodautoscaler"), "autoscaling", "horizontalpodautoscalers", True),
    (("netpol", "networkpolicy"), "networking.k8s.io", "networkpolicies", True),
    (("ing", "ingress"), "networking.k8s.io", "ingresses", True),
    (("pdb", "poddisruptionbudget"), "policy", "poddisruptionbudgets", True),
    (("job",), "batch", "jobs", True), (("cj", "cronjob"), "batch", "cronjobs", True),
    (("role",), "rbac.authorization.k8s.io", "roles", True),
    (("rolebinding",), "rbac.authorization.k8s.io", "rolebindings", True),
    (("clusterrole",), "rbac.authorization.k8s.io", "clusterroles", False),
    (("clusterrolebinding",), "rbac.authorization.k8s.io", "clusterrolebindings", False),
    (("pol", "policy"), "kyverno.io", "policies", True), (("cpol", "clusterpolicy"), "kyverno.io", "clusterpolicies", False),
    (("polr", "policyreport"), "wgpolicyk8s.io", "policyreports", True),
    (("cpolr", "clusterpolicyreport"), "wgpolicyk8s.io", "clusterpolicyreports", False),
    (("schedule",), "chaos-mesh.org", "schedules", True),
    *((((k,), "chaos-mesh.org", k, True)) for k in ("networkchaos", "podchaos", "stresschaos", "httpchaos", "iochaos",
                                                    "dnschaos", "timechaos", "jvmchaos")),
    (("peerauthentication", "pa"), "security.istio.io", "peerauthentications", True),
    (("authorizationpolicy", "ap"), "security.istio.io", "authorizationpolicies", True),
]:
    for _name in (*_names, _plural):
        _RESOURCES[_name] = (_group, _plural, _namespaced)

# kubectl verb -> API verbs on the named resource (with a name; without one `get` lists)
_VERBS = {"get": ("get",), "describe": ("get",), "delete": ("delete",), "edit": ("get", "patch"),
          "patch": ("get", "patch"), "label": ("get", "patch"), "annotate": ("get", "patch")}


def cited_commands(scenario) -> tuple[str, ...]:
    """The commands the scenario's prompt cites: its domain's and its CISO task class's."""
    return commands_of(scenario.domain, scenario.compliance)


def commands_of(domain: str, compliance) -> tuple[str, ...]:
    """The commands a prompt of `domain` cites, with those of the CISO task class of `compliance` (or None)."""
    from .ciso.tasks import TASK_CLASSES

    commands = DOMAIN_COMMANDS.get(domain, ())
    if compliance is not None and compliance.task in TASK_CLASSES:
        commands += TASK_CLASSES[compliance.task].commands
    return commands


_PROMPT_COMMAND = re.compile(r"`(kubectl [^`]+)`")


def prompt_commands(text: str) -> list[str]:
    """The kubectl commands a prompt's text cites (in backquotes), in order."""
    return _PROMPT_COMMAND.findall(text)


# kubectl verbs whose arguments after the object's name are changes (`key=value`, `key-`), not more objects
_CHANGE_ARGUMENTS = frozenset({"label", "annotate", "taint"})


def command_rights(command: str, home: str) -> list[Request]:
    """The API requests of one kubectl command run with the agent's kubeconfig (default namespace `home`)."""
    try:
        words = shlex.split(command)
    except ValueError as exc:
        raise UnknownCommand(f"`{command}`: {exc}") from exc
    if not words or words[0] != "kubectl":
        raise UnknownCommand(f"`{command}` is not a kubectl command")
    namespace, all_namespaces, watch, positional = home, False, False, []
    rest = iter(words[1:])
    for word in rest:
        if word in ("-A", "--all-namespaces"):
            all_namespaces = True
        elif word in ("-n", "--namespace"):
            namespace = next(rest, home)
        elif word.startswith("--namespace="):
            namespace = word.partition("=")[2]
        elif word in ("-w", "--watch"):
            watch = True
        elif word in ("-o", "--output", "-l", "--selector", "--field-selector"):
            next(rest, None)  # the option's value
        elif word.startswith("-"):
            continue  # an option that changes the output, not the requests
        else:
            positional.append(word)
    if positional and positional[0] in _WORKLOAD_VERBS:
        return _workload_rights(command, positional, namespace)
    if len(positional) < 2 or positional[0] not in _VERBS:
        raise UnknownCommand(f"`{command}`: no API rights known for `kubectl {' '.join(positional[:1])}`")
    verb, target, names = positional[0], positional[1], positional[2:]
    if verb in _CHANGE_ARGUMENTS:  # `kubectl label namespace shop team=a old-`: the changes are no object names
        names = [n for n in names if "=" not in n and not n.endswith("-")]
    if "/" in target:  # kubectl get deployment/web
        target, _, name = target.partition("/")
        names = [name, *names]
    requests = []
    for kind in target.split(","):
        if kind.lower() not in _RESOURCES:
            raise UnknownCommand(f"`{command}`: unknown resource `{kind}`")
        group, plural, namespaced = _RESOURCES[kind.lower()]
        scope = namespace if namespaced and not all_namespaces else None
        verbs = _VERBS[verb] if names else (("list",) if verb in ("get", "describe") else _VERBS[verb])
        verbs += ("watch",) if watch else ()
        requests += [Request(v, group, plural, scope, name) for v in verbs for name in names or [""]]
    return requests


# kubectl verbs on one object (`kubectl scale deployment/web`, `kubectl rollout undo deployment/web`,
# `kubectl set image deployment/web`, `kubectl logs deployment/web`, `kubectl exec deploy/web`, `kubectl
# cordon node-1`): the requests each makes, as (verb, subresource or "" for the object itself)
_WORKLOAD_VERBS = {
    "scale": (("get", ""), ("patch", "scale")),
    "rollout undo": (("get", ""), ("patch", ""), ("list", "@replicasets"), ("list", "@controllerrevisions")),
    "rollout restart": (("get", ""), ("patch", "")),
    "rollout status": (("get", ""), ("watch", "")),
    "rollout history": (("get", ""), ("list", "@replicasets"), ("list", "@controllerrevisions")),
    "set": (("get", ""), ("patch", "")),
    "logs": (("get", ""), ("list", "@pods"), ("get", "@pods/log")),
    "exec": (("get", ""), ("list", "@pods"), ("create", "@pods/exec")),
    "cordon": (("get", ""), ("patch", "")),
    "uncordon": (("get", ""), ("patch", "")),
}
_WORKLOAD_VERBS.update({"rollout": ()})
_WORKLOAD_DEFAULT = {"logs": "pod", "exec": "pod", "cordon": "node", "uncordon": "node"}


def _workload_rights(command: str, positional: list[str], namespace: str) -> list[Request]:
    verb = positional[0]
    rest = positional[1:]
    if verb in ("rollout", "set"):
        if not rest:
            raise UnknownCommand(f"`{command}`: `kubectl {verb}` without a subcommand")
        sub, rest = rest[0], rest[1:]
        verb = f"rollout {sub}" if verb == "rollout" else "set"
        if verb not in _WORKLOAD_VERBS:
            raise UnknownCommand(f"`{command}`: no API rights known for `kubectl {verb}`")
    rest = [w for w in rest if "=" not in w]  # `set image ... app=nginx`, `set env ... KEY=value`
    if not rest:
        raise UnknownCommand(f"`{command}`: no object named")
    target = rest[0]
    if "/" in target:
        kind, _, name = target.partition("/")
    elif verb in _WORKLOAD_DEFAULT:
        kind, name = _WORKLOAD_DEFAULT[verb], target
    else:
        kind, name = target, (rest[1] if len(rest) > 1 else "")
    if kind.lower() not in _RESOURCES:
        raise UnknownCommand(f"`{command}`: unknown resource `{kind}`")
    group, plural, namespaced = _RESOURCES[kind.lower()]
    scope = namespace if namespaced else None
    out = []
    for api_verb, sub in _WORKLOAD_VERBS[verb]:
        if sub.startswith("@"):  # another resource of the same namespace
            other, _, subresource = sub[1:].partition("/")
            other_group = {"replicasets": "apps", "controllerrevisions": "apps"}.get(other, "")
            out.append(Request(api_verb, other_group, other + (f"/{subresource}" if subresource else ""), namespace))
        else:
            out.append(Request(api_verb, group, plural + (f"/{sub}" if sub else ""), scope, name))
    return out


# ---- the RBAC evaluator ----------------------------------------------------------------------------------


def _subject_matches(subject: dict, account: str, account_namespace: str) -> bool:
    kind, name = subject.get("kind"), subject.get("name")
    if kind == "ServiceAccount":
        return name == account and subject.get("namespace") == account_namespace
    if kind == "Group":
        return name in ("system:serviceaccounts", f"system:serviceaccounts:{account_namespace}", "system:authenticated")
    if kind == "User":
        return name == f"system:serviceaccount:{account_namespace}:{account}"
    return False


def _rule_matches(rule: dict, request: Request) -> bool:
    names = rule.get("resourceNames")
    if names and request.name not in names:  # a rule naming objects allows requests on those alone
        return False
    verbs, groups, resources = rule.get("verbs", []), rule.get("apiGroups", []), rule.get("resources", [])
    if "*" not in verbs and request.verb not in verbs:
        return False
    if "*" not in groups and request.group not in groups:
        return False
    base, _, sub = request.resource.partition("/")
    return "*" in resources or request.resource in resources or (bool(sub) and f"*/{sub}" in resources)


def allows(objects: Iterable[dict], account: str, account_namespace: str, request: Request) -> bool:
    """Whether the RBAC objects among `objects` let the service account make the request, as the API
    server's RBAC authorizer decides it: a ClusterRoleBinding grants its ClusterRole everywhere, a
    RoleBinding grants its Role (or ClusterRole) in its own namespace only."""
    objects = list(objects)
    roles = {(o.get("kind"), o.get("metadata", {}).get("namespace"), o.get("metadata", {}).get("name")): o
             for o in objects if o.get("kind") in ("Role", "ClusterRole")}
    for binding in objects:
        kind = binding.get("kind")
        if kind not in ("RoleBinding", "ClusterRoleBinding"):
            continue
        if not any(_subject_matches(s, account, account_namespace) for s in binding.get("subjects") or []):
            continue
        where = binding.get("metadata", {}).get("namespace") if kind == "RoleBinding" else None
        if kind == "RoleBinding" and request.namespace != where:
            continue
        ref = binding.get("roleRef", {})
        role = roles.get((ref.get("kind"), where if ref.get("kind") == "Role" else None, ref.get("name")))
        if role is not None and any(_rule_matches(rule, request) for rule in role.get("rules") or []):
            return True
    return False


def tool_resource(api_version: str, kind: str) -> tuple[str, str] | None:
    """(API group, resource) of a fault tool's kind (`chaos-mesh.org/v1alpha1` `Schedule`: `schedules`), None for
    the kind of any other group."""
    group = api_version.split("/")[0] if "/" in api_version else ""
    if group not in FAULT_TOOL_GROUPS:
        return None
    known = _RESOURCES.get(kind.lower())
    return (group, known[1] if known else kind.lower())


def resource_of(api_version: str, kind: str) -> tuple[str, str]:
    """(API group, resource) of an object's kind: `apps/v1` `Deployment` is (`apps`, `deployments`)."""
    group = api_version.split("/")[0] if "/" in api_version else ""
    known = _RESOURCES.get(kind.lower())
    if known is not None and known[0] == group:
        return group, known[1]
    plural = kind.lower()
    return group, plural if plural.endswith("s") else plural[:-1] + "ies" if plural.endswith("y") else plural + "s"


def change_requests(before: dict, after: dict) -> list[Request]:
    """The write requests that turn the objects `before` into `after` (each keyed (kind, namespace, name), as the
    replay keeps them): create what is new, delete what is gone, patch what changed."""
    out = []
    for key in sorted(set(before) | set(after), key=lambda k: (k[0], k[1] or "", k[2])):
        old, new = before.get(key), after.get(key)
        if old == new:
            continue
        obj = new if new is not None else old
        group, resource = resource_of(str(obj.get("apiVersion", "")), key[0])
        verb = "create" if old is None else "delete" if new is None else "patch"
        out.append(Request(verb, group, resource, key[1], "" if verb == "create" else key[2]))
    return out


def may_undo(objects: Iterable[dict], account: str, account_namespace: str, group: str, resource: str,
             namespace: str | None) -> bool:
    """Whether the account may find an object it is not told the name of and end it: list its kind where it
    lives, and delete it or patch it (a Chaos Mesh experiment paused by its annotation stops acting)."""
    objects = list(objects)

    def may(verb: str) -> bool:
        return allows(objects, account, account_namespace, Request(verb, group, resource, namespace))

    return may("list") and (may("delete") or may("patch"))


def missing(objects: Iterable[dict], account: str, account_namespace: str, commands: Iterable[str]) -> list[Request]:
    """The requests of `commands` the objects do not allow, sorted, without repeats."""
    objects = list(objects)
    needed = {r for c in commands for r in command_rights(c, account_namespace)}
    return sorted((r for r in needed if not allows(objects, account, account_namespace, r)), key=request_order)


# ---- whose token is wider than the agent's -----------------------------------------------------------------


def _roles(objects: list[dict]) -> dict[tuple, dict]:
    """(kind, namespace, name) -> each Role and ClusterRole among `objects`."""
    return {(o.get("kind"), (o.get("metadata") or {}).get("namespace"), (o.get("metadata") or {}).get("name")): o
            for o in objects if o.get("kind") in ("Role", "ClusterRole")}


def account_requests(objects: Iterable[dict], account: str, account_namespace: str) -> list[Request]:
    """What the RBAC objects among `objects` let a service account do, one request per verb, group and resource
    of each rule bound to it (`*` kept as written; a ClusterRoleBinding's rules cluster-wide). Rules on
    non-resource URLs are left out."""
    objects = list(objects)
    roles = _roles(objects)
    out = []
    for binding in objects:
        kind = binding.get("kind")
        if kind not in ("RoleBinding", "ClusterRoleBinding"):
            continue
        if not any(_subject_matches(s, account, account_namespace) for s in binding.get("subjects") or []
                   if isinstance(s, dict)):
            continue
        where = (binding.get("metadata") or {}).get("namespace") if kind == "RoleBinding" else None
        ref = binding.get("roleRef") or {}
        role = roles.get((ref.get("kind"), where if ref.get("kind") == "Role" else None, ref.get("name")))
        for rule in (role or {}).get("rules") or []:
            for verb in rule.get("verbs") or []:
                for group in rule.get("apiGroups") or []:
                    for resource in rule.get("resources") or []:
                        out.append(Request(verb, group, resource, where))
    return sorted(set(out), key=request_order)


def wider_than(objects: Iterable[dict], account: str, account_namespace: str, agent_objects: Iterable[dict],
               agent: str, agent_namespace: str) -> Request | None:
    """The first request the service account `account` may make that the agent's access does not allow (None when
    the agent may do all it may): whoever execs into its pods, attaches to them or mints its token acts with it."""
    agent_objects = list(agent_objects)
    for request in account_requests(objects, account, account_namespace):
        if not allows(agent_objects, agent, agent_namespace, request):
            return request
    return None


def pod_accounts(objects: Iterable[dict]) -> list[tuple[dict, str | None, str]]:
    """(object, namespace, service account) of every object that runs pods and mounts its account's token
    (`automountServiceAccountToken: false` on the pod or on its ServiceAccount: no token to take)."""
    objects = list(objects)
    no_token = {((o.get("metadata") or {}).get("namespace"), (o.get("metadata") or {}).get("name"))
                for o in objects if o.get("kind") == "ServiceAccount" and o.get("automountServiceAccountToken") is False}
    out = []
    for obj in objects:
        spec = obj.get("spec") if isinstance(obj.get("spec"), dict) else {}
        if obj.get("kind") == "Pod":
            pod = spec
        elif obj.get("kind") == "CronJob":
            pod = (((spec.get("jobTemplate") or {}).get("spec") or {}).get("template") or {}).get("spec") or {}
        else:
            pod = (spec.get("template") or {}).get("spec") if isinstance(spec.get("template"), dict) else None
        if not isinstance(pod, dict) or not pod.get("containers"):
            continue
        namespace = (obj.get("metadata") or {}).get("namespace")
        account = pod.get("serviceAccountName") or pod.get("serviceAccount") or "default"
        if pod.get("automountServiceAccountToken") is False or (
                (namespace, account) in no_token and pod.get("automountServiceAccountToken") is not True):
            continue
        out.append((obj, namespace, account))
    return out


# ---- what the API server lets the agent's token do ----------------------------------------------------------

# What every authenticated user may do on any cluster (the API server's default ClusterRoles system:basic-user,
# system:discovery, system:public-info-viewer, system:service-account-issuer-discovery and, from 1.33, the public
# trust anchors of ClusterTrustBundles): asking who it is and what it may do, discovery, the health endpoints and the
# cluster's public CAs. Held, they grant nothing of the scenario. (group, resource) -> verbs
DEFAULT_RIGHTS = {("authorization.k8s.io", "selfsubjectaccessreviews"): {"create"},
                  ("authorization.k8s.io", "selfsubjectrulesreviews"): {"create"},
                  ("authentication.k8s.io", "selfsubjectreviews"): {"create"},
                  ("certificates.k8s.io", "clustertrustbundles"): {"get", "list", "watch"}}
DEFAULT_URLS = frozenset({"/api", "/api/*", "/apis", "/apis/*", "/healthz", "/livez", "/readyz", "/version",
                          "/version/", "/openapi", "/openapi/*", "/.well-known/openid-configuration",
                          "/.well-known/openid-configuration/", "/openid/v1/jwks", "/openid/v1/jwks/"})


def rules_in(objects: Iterable[dict], account: str, account_namespace: str, namespace: str) -> list[dict]:
    """The rules the RBAC objects among `objects` give the service account in `namespace`: its Roles' there, and
    its ClusterRoles' (bound cluster-wide, or by a RoleBinding there). `namespace` None: the cluster-wide ones alone
    (what it holds in a namespace the bundle binds nothing in)."""
    objects = list(objects)
    roles = _roles(objects)
    out = []
    for binding in objects:
        kind = binding.get("kind")
        where = (binding.get("metadata") or {}).get("namespace") if kind == "RoleBinding" else None
        if kind not in ("RoleBinding", "ClusterRoleBinding") or where not in (None, namespace) or not any(
                _subject_matches(s, account, account_namespace) for s in binding.get("subjects") or []
                if isinstance(s, dict)):
            continue
        ref = binding.get("roleRef") or {}
        role = roles.get((ref.get("kind"), where if ref.get("kind") == "Role" else None, ref.get("name")))
        out += [r for r in (role or {}).get("rules") or [] if r not in out]
    return out


def reach_namespaces(objects: Iterable[dict], home: str) -> list[str]:
    """The namespaces a bundle names, whose rights a handover reviews as the agent (with every other namespace of
    the cluster): those of the bundle's objects (`objects`: its topology, access and injection), the agent's own,
    `default` and `kube-system`."""
    out = {"default", "kube-system", home}
    for obj in objects:
        meta = obj.get("metadata") or {}
        out.add(meta.get("name") if obj.get("kind") == "Namespace" else meta.get("namespace"))
    return sorted(n for n in out if isinstance(n, str) and n)


def held_beyond(objects: Iterable[dict], account: str, account_namespace: str, status: dict,
                namespace: str) -> list[str]:
    """What a SelfSubjectRulesReview's `status` (the rules the API server lets the agent's token use in `namespace`)
    holds that the agent's access among `objects` does not grant there, each as `verb resource.group` (a wildcard
    kept as `*`) or `verb URL`, sorted: rights a binding of the cluster's (to every service account, every
    authenticated user) gives the agent beside its own. DEFAULT_RIGHTS and DEFAULT_URLS are everyone's and not
    counted."""
    objects = list(objects)
    out = set()
    for rule in status.get("resourceRules") or []:
        for verb in rule.get("verbs") or []:
            for group in rule.get("apiGroups") or [""]:
                for resource in rule.get("resources") or []:
                    if verb in DEFAULT_RIGHTS.get((group, resource), ()):
                        continue
                    names = rule.get("resourceNames")
                    if not all(allows(objects, account, account_namespace, Request(verb, group, resource, namespace, n))
                               for n in names or [""]):
                        out.add(f"{verb} {resource}{'.' + group if group else ''}"
                                + (f" ({', '.join(names)})" if names else ""))
    for rule in status.get("nonResourceRules") or []:
        for url in rule.get("nonResourceURLs") or []:
            if url not in DEFAULT_URLS:
                out.update(f"{verb} {url}" for verb in rule.get("verbs") or [])
    return sorted(out)
