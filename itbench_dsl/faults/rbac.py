"""Faults in the application's own RBAC: a Role whose rule grants the wrong resources.

The subjects bound to the role (a service account its workloads or its users act as) lose the access
the rule gave them; nothing restarts or crashes, only their requests are refused (403).
"""

from __future__ import annotations

import copy

from .. import ir
from .base import Acceptance, Arg, Checked, Effect, FaultInput, FaultKind, kobj


def _role(topology: ir.Topology, ref: ir.ObjectRef) -> ir.Role:
    return next(r for r in topology.roles if r.name == ref.name and r.namespace == ref.namespace)


def _bound_subjects(f: FaultInput, role: ir.Role) -> list[str]:
    kind = "Role" if role.namespace is not None else "ClusterRole"
    return sorted({s.get("name", "") for b in f.build.role_bindings
                   if b.role_ref.get("kind") == kind and b.role_ref.get("name") == role.name
                   and (kind == "ClusterRole" or b.namespace == role.namespace) for s in b.subjects})


def _check_wrong_role_resource(f: FaultInput) -> Checked | None:
    role: ir.Role = f.obj
    what = "clusterrole" if role.namespace is None else "role"
    index = f.body.attr("rule", "nonneg_int")
    resources = f.body.attr("resources", "str_list", required=True)
    api_groups = f.body.attr("api_groups", "str_list")
    if resources is None or (f.body.has("rule") and index is None) or (f.body.has("api_groups") and api_groups is None):
        return None
    if index is None:
        if len(role.rules) != 1:
            f.error("E2007", f"{what} `{role.name}` has {len(role.rules)} rules: say which with `rule` (from 0)",
                    f.fault.target.span, "which rule?", help="add `rule = 0`")
            return None
        index = 0
    if index >= len(role.rules):
        f.error("E2011", f"{what} `{role.name}` has {len(role.rules)} rule(s): there is no rule {index}",
                f.body.attr_span("rule"), "no such rule", help=f"rules are numbered from 0 to {len(role.rules) - 1}")
        return None
    rule = role.rules[index]
    if not rule.get("resources"):
        f.error("E2011", f"rule {index} of {what} `{role.name}` grants non-resource URLs, not resources",
                f.body.attr_span("rule") if f.body.has("rule") else f.fault.target.span, "no resources")
        return None
    if not resources:
        f.error("E2010", "`resources` needs at least one item: a rule without resources grants nothing the fault "
                "could name", f.body.attr_span("resources"), "empty list", help='write `resources = ["deployments"]`')
        return None
    groups = list(rule.get("apiGroups") or []) if api_groups is None else api_groups
    if sorted(resources) == sorted(rule["resources"]) and sorted(groups) == sorted(rule.get("apiGroups") or []):
        f.error("E2027", f"rule {index} of {what} `{role.name}` already grants these resources: the fault would change "
                "nothing", f.body.attr_span("resources"), "same resources")
        return None
    if not _bound_subjects(f, role):
        f.error("E2011", f"no binding of the topology grants {what} `{role.name}`: changing it takes access from no one",
                f.fault.target.span, "not bound", help="declare the rolebinding that grants the role to its subjects")
        return None
    return Checked({"rule": index, "resources": list(resources), "api_groups": groups,
                    "original_rule": copy.deepcopy(rule)},
                   {"kubernetesObject": kobj(f.target)}, agent_namespaces=[role.namespace] if role.namespace else [],
                   agent_resources=["roles", "rolebindings"] if role.namespace else [])


def _inject_wrong_role_resource(injection, topology):
    role = copy.deepcopy(_role(topology, injection.target))
    rule = dict(role.rules[injection.args["rule"]])
    rule["resources"] = list(injection.args["resources"])
    rule["apiGroups"] = list(injection.args["api_groups"])
    role.rules = [rule if i == injection.args["rule"] else r for i, r in enumerate(role.rules)]
    return Effect([role], [])


def _revert_wrong_role_resource(injection, topology):
    return Effect([copy.deepcopy(_role(topology, injection.target))], [])


FAULTS = [
    FaultKind(
        "wrong_role_resource", None, "role.rules.resources:wrong", ("role", "clusterrole"),
        "Makes a rule of a Role (or ClusterRole) grant other resources than the ones its subjects use (deployments "
        "for pods, say), so their requests are refused.",
        _check_wrong_role_resource, _inject_wrong_role_resource, _revert_wrong_role_resource,
        args=(Arg("rule", "integer", default="0 when the role has one rule", help="the rule, numbered from 0"),
              Arg("resources", "list of strings", required=True, help="the resources the rule grants instead"),
              Arg("api_groups", "list of strings", default="the rule's", help="their API groups (`apps` for deployments)")),
        preconditions=("The role has the rule, and the rule grants resources (not non-resource URLs).",
                       "The resources (or their API groups) differ from the rule's.",
                       "A binding of the topology grants the role."),
        alerts=(),
        solutions=(
            {"steps": [{"text": "Compare what the role grants with what its subjects are refused.",
                        "command": "kubectl -n {{ args.kubernetesObject.metadata.namespace }} describe "
                                   "{{ args.kubernetesObject.kind | lower }} {{ args.kubernetesObject.metadata.name }}"},
                       {"text": "Edit the role so that its rule grants the resources its subjects use.",
                        "command": "kubectl -n {{ args.kubernetesObject.metadata.namespace }} edit "
                                   "{{ args.kubernetesObject.kind | lower }} {{ args.kubernetesObject.metadata.name }}"}]},
        ),
        # the role rewritten (other rules, more verbs): the scenario's predicates say what access it must give
        accept=(Acceptance(r"rules(\..*)?", "changed"),),
        labels=("virtualization", "misconfiguration"),
        symptoms=('access',),
    ),
]
