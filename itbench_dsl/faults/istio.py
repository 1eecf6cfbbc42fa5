"""Faults in the Istio service mesh.

Only applications that run in a mesh can have these faults: the application's metadata says so
(`service_mesh = "istio-ambient"`, as book-info's), or an inline topology labels its namespace
`istio.io/dataplane-mode = "ambient"`.

The strict-mTLS and gateway-authorization faults create Istio objects (PeerAuthentication,
AuthorizationPolicy: `security.istio.io/v1`, schemas vendored in `schemas/istio`). The gateway fault
targets a Gateway API Gateway that the application's installation deploys, as ITBench's book-info
installation deploys `bookinfo-gateway`: the application's metadata names it (`gateway`), the
manifests do not hold it, and the fault only names it (`targetRef`).
"""

from __future__ import annotations

import copy

from .. import ir
from ..topology import DATAPLANE_LABEL
from .base import CREATABLE_KINDS, Arg, Checked, Effect, FaultInput, FaultKind, application_name, find_object, kobj

SECURITY_API = "security.istio.io/v1"
CREATABLE_KINDS["peerauthentication"] = (SECURITY_API, "PeerAuthentication")
CREATABLE_KINDS["authorizationpolicy"] = (SECURITY_API, "AuthorizationPolicy")


def mesh_of(f: FaultInput, namespace: str) -> str | None:
    """The service mesh the namespace's workloads run in (`istio-ambient`, ...), or None."""
    declared = f.build.app_metadata.get("service_mesh")
    if isinstance(declared, str) and declared and any(w.namespace == namespace for w in f.build.workloads):
        return declared
    for ns in f.build.namespaces:
        if ns.name == namespace and ns.labels.get(DATAPLANE_LABEL) == "ambient":
            return "istio-ambient"
    return None


def _no_mesh(f: FaultInput, namespace: str, needs: str) -> None:
    app = f.build.application
    f.error("E2025", f"namespace `{namespace}` does not run in {needs}" +
            (f": application `{app}` declares no `service_mesh`" if app else ""),
            f.fault.target.span, "no service mesh",
            help='use an application whose metadata declares `service_mesh`, such as `use app "book-info"`')


# ---- disabled ambient mode -------------------------------------------------------------------------------


def _check_ambient_disabled(f: FaultInput) -> Checked | None:
    namespace: ir.Namespace = f.obj
    mesh = mesh_of(f, namespace.name)
    if mesh is None or "ambient" not in mesh:
        _no_mesh(f, namespace.name, "an Istio ambient-mode mesh")
        return None
    return Checked({"label": DATAPLANE_LABEL, "value": "none", "original_value": "ambient"},
                   {"kubernetesObject": kobj(f.target)}, agent_resources=["namespaces"])  # to relabel it


def _namespace_with(topology: ir.Topology, injection: ir.Injection, value: str) -> ir.Namespace:
    found = next(n for n in topology.namespaces if n.name == injection.target.name)
    namespace = copy.deepcopy(found)
    namespace.labels = {**namespace.labels, injection.args["label"]: value}
    return namespace


def _inject_ambient_disabled(injection, topology):
    return Effect([_namespace_with(topology, injection, injection.args["value"])], [])


def _revert_ambient_disabled(injection, topology):
    # the application's installation enrols the namespace in the mesh: revert restores that label
    return Effect([_namespace_with(topology, injection, injection.args["original_value"])], [])


# ---- strict mutual TLS with the workload out of the mesh --------------------------------------------------

# One name for the injection, both ground truths and the solutions: the policy's kind, not its mode (ITBench's
# `strict-mtls-mode` would tell whoever lists the policies what this one does: agent_view.py)
STRICT_MTLS_POLICY = "peer-authentication"
# the name ITBench's injection task gives it (roles/faults/tasks/inject_strict_mutual_tls_istio_service_mesh_
# enforcement.yaml), which its files must name: its own ground truth's `strict-mtls-mode` names no object of a run
ITBENCH_STRICT_MTLS_POLICY = "mtls-strict"


def _check_strict_mtls(f: FaultInput) -> Checked | None:
    workload: ir.Workload = f.obj
    mesh = mesh_of(f, workload.namespace)
    if mesh is None or "ambient" not in mesh:
        _no_mesh(f, workload.namespace, "an Istio ambient-mode mesh")
        return None
    if workload.labels.get(DATAPLANE_LABEL) == "none":
        f.error("E2027", f"the pods of {workload.kind.lower()} `{workload.name}` are already out of the mesh "
                f"(label `{DATAPLANE_LABEL}: none`)", f.fault.target.span, "would change nothing",
                help="target a workload whose pods run in the ambient mesh")
        return None
    peers = sorted({b for a, b in f.build.edges if a == workload.name and b != workload.name
                    and f.build.workload(b, workload.namespace) is not None})
    if not peers:
        f.error("E2011", f"{workload.kind.lower()} `{workload.name}` calls no workload of namespace "
                f"`{workload.namespace}`: strict mTLS there would refuse none of its connections",
                f.fault.target.span, "no peer in the mesh",
                help=f"target a workload that calls another one of its namespace (a dependency edge "
                     f"`\"{workload.name}\" -> \"...\"`)")
        return None
    policy = ir.ObjectRef(SECURITY_API, "PeerAuthentication", workload.namespace, STRICT_MTLS_POLICY)
    return Checked({"label": DATAPLANE_LABEL, "value": "none", "policy": policy.name, "peers": peers},
                   {"kubernetesObject": kobj(f.target)}, side_objects=[policy], created=[policy],
                   agent_namespaces=[workload.namespace], agent_resources=["peerauthentications"],
                   itbench_names={policy.name: ITBENCH_STRICT_MTLS_POLICY})


def _inject_strict_mtls(injection, topology):
    workload = copy.deepcopy(find_object(topology, injection.target))
    # istio api security/v1beta1/peer_authentication.proto, PeerAuthentication.MutualTLS.Mode STRICT: only mTLS
    # the pods leave the ambient mesh: their connections are plain TCP, which STRICT peers refuse
    workload.labels = {**workload.labels, injection.args["label"]: injection.args["value"]}
    policy = {
        "apiVersion": SECURITY_API, "kind": "PeerAuthentication",
        "metadata": {"name": injection.args["policy"], "namespace": injection.target.namespace},
        "spec": {"mtls": {"mode": "STRICT"}},
    }
    return Effect([workload, policy], [])


def _revert_strict_mtls(injection, topology):
    return Effect([copy.deepcopy(find_object(topology, injection.target))], list(injection.created))


# ---- authorization policy denying requests at a gateway ---------------------------------------------------

# ITBench schemas/json/faults/traffic-denying-istio-gateway-authorization-policy.json, httpMethods' enum
HTTP_METHODS = ("GET", "POST", "DELETE", "PUT")  # ITBench's argument schema allows these


def _policy_name(f: FaultInput, gateway: ir.ObjectRef) -> str:
    # neither ITBench's `<gateway>-deny` nor `<gateway>-policy`: whoever lists the policies would read the fault or
    # its target in the name (agent_view.py); base.application_name
    return application_name(f, SECURITY_API, "AuthorizationPolicy", gateway.namespace, "istio_deny_gateway",
                            gateway.kind, gateway.name)


def _check_deny_gateway(f: FaultInput) -> Checked | None:
    gateway = f.target
    methods = f.body.attr("methods", "str_list", required=True)
    if methods is None:
        return None
    if not methods:
        f.error("E2010", "`methods` is empty: the policy would deny no request", f.body.attr_span("methods"),
                "no method", help='name the HTTP methods to deny, e.g. `methods = ["GET"]`')
        return None
    bad = [m for m in methods if m not in HTTP_METHODS]
    if bad:
        upper = [m.upper() for m in bad if m.upper() in HTTP_METHODS]
        f.error("E2010", f"`methods` holds {', '.join(f'`{m}`' for m in bad)}: the fault denies only the HTTP "
                f"methods {', '.join(HTTP_METHODS)}", f.body.attr_span("methods"), "unknown HTTP method",
                help=f"write them in capitals: {', '.join(f'`{m}`' for m in upper)}" if upper and len(upper) == len(bad)
                else "one or more of " + ", ".join(f'"{m}"' for m in HTTP_METHODS))
        return None
    repeated = sorted({m for m in methods if methods.count(m) > 1})
    if repeated:
        f.error("E2010", f"`methods` names {', '.join(f'`{m}`' for m in repeated)} twice",
                f.body.attr_span("methods"), "repeated method", help="name each method once")
        return None
    mesh = mesh_of(f, gateway.namespace)
    if mesh is None:
        _no_mesh(f, gateway.namespace, "an Istio service mesh")
        return None
    name = _policy_name(f, gateway)
    if len(name) > 253:
        f.error("E2014", f"the policy's name `{name}` is longer than 253 characters", f.fault.target.span)
        return None
    policy = ir.ObjectRef(SECURITY_API, "AuthorizationPolicy", gateway.namespace, name)
    return Checked({"policy": name, "methods": list(methods)},
                   {"httpMethods": list(methods), "kubernetesObject": kobj(gateway)},
                   side_objects=[policy], created=[policy], agent_namespaces=[gateway.namespace],
                   agent_resources=["authorizationpolicies"],
                   # ITBench's injection task (inject_traffic_denying_istio_gateway_authorization_policy.yaml)
                   itbench_names={name: f"{gateway.name}-deny"})


def _inject_deny_gateway(injection, topology):
    gateway = injection.target
    policy = {
        "apiVersion": SECURITY_API, "kind": "AuthorizationPolicy",
        "metadata": {"name": injection.args["policy"], "namespace": gateway.namespace},
        "spec": {
            "action": "DENY",
            "targetRef": {"group": gateway.api_version.split("/")[0], "kind": gateway.kind, "name": gateway.name},
            "rules": [{"to": [{"operation": {"methods": list(injection.args["methods"])}}]}],
        },
    }
    return Effect([policy], [])


def _revert_deny_gateway(injection, topology):
    return Effect([], list(injection.created))


FAULTS = [
    FaultKind(
        "istio_ambient_disabled", "disabled-istio-ambient-mode-kubernetes-namespace", "namespace.istio-ambient:disabled",
        ("namespace",),
        "Takes a namespace out of Istio's ambient-mode mesh (label `istio.io/dataplane-mode: none`), so the mesh no "
        "longer carries its workloads' traffic.",
        _check_ambient_disabled, _inject_ambient_disabled, _revert_ambient_disabled,
        preconditions=("The namespace's application runs in an Istio ambient-mode service mesh.",),
        labels=("virtualization", "misconfiguration"),
        symptoms=('requests',),
    ),
    FaultKind(
        "istio_strict_mtls", "strict-mutual-tls-istio-service-mesh-enforcement", "workload.istio-mtls:strict-out-of-mesh",
        ("deployment", "statefulset"),
        "Requires strict mutual TLS in the workload's namespace (PeerAuthentication `peer-authentication`, mode "
        "`STRICT`) and takes the workload's pods out of the ambient mesh (pod label `istio.io/dataplane-mode: "
        "none`): its plain-text connections to the other workloads of the namespace are refused.",
        _check_strict_mtls, _inject_strict_mtls, _revert_strict_mtls,
        preconditions=(
            "The workload runs in an Istio ambient-mode service mesh (E2025).",
            "Its pods are not already out of the mesh (E2027).",
            "It calls another workload of its namespace, a dependency edge of the topology (E2011).",
        ),
        # strict mTLS refuses only plain-text peers: back in the mesh, or without the policy, the calls go through
        undone_by="any",
        creates="PeerAuthentication `peer-authentication` (`security.istio.io/v1`, mode `STRICT`) in the workload's "
                "namespace; revert deletes it and restores the workload.",
        labels=("virtualization", "misconfiguration"),
        symptoms=('requests',),
    ),
    FaultKind(
        # Istio configures a DENY AuthorizationPolicy as Envoy's RBAC HTTP filter, which answers a denied request
        # 403 "RBAC: access denied" (istio.io, tasks/security/authorization)
        "istio_deny_gateway", "traffic-denying-istio-gateway-authorization-policy", "gateway.istio-authz:deny-methods",
        ("gateway",),
        "Attaches an Istio AuthorizationPolicy with action `DENY` to a Gateway API Gateway, so its requests of the "
        "given HTTP methods are refused with 403.",
        _check_deny_gateway, _inject_deny_gateway, _revert_deny_gateway,
        args=(Arg("methods", "str_list", required=True,
                  help='HTTP methods to deny, among "GET", "POST", "DELETE", "PUT" (ITBench `httpMethods`)'),),
        preconditions=(
            "The application's installation deploys the gateway: its metadata names it (`gateway`), as "
            "book-info's names `bookinfo-gateway` (E2003).",
            "`methods` names one or more of GET, POST, DELETE, PUT, each once (E2010).",
            "The gateway's namespace runs in an Istio service mesh, whose gateway enforces the policy (E2025).",
        ),
        creates="AuthorizationPolicy `<component>-<word>` (ITBench's `<gateway>-deny`; `security.istio.io/v1`, action `DENY`, `targetRef` the "
                "Gateway) in the gateway's namespace; revert deletes it.",
        labels=("virtualization", "misconfiguration"),
        symptoms=('requests',),
    ),
]
