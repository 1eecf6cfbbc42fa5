"""Faults in the Istio service mesh.

Only applications that run in a mesh can have these faults: the application's metadata says so
(`service_mesh = "istio-ambient"`, as book-info's), or an inline topology labels its namespace
`istio.io/dataplane-mode = "ambient"`.

ITBench's strict-mTLS and gateway-authorization faults create Istio objects (PeerAuthentication,
AuthorizationPolicy) on a Gateway API Gateway; the compiler has no schema for those kinds, so it
does not offer them yet (every emitted object must validate).
"""

from __future__ import annotations

import copy

from .. import ir
from .base import Checked, Effect, FaultInput, FaultKind, kobj

DATAPLANE_LABEL = "istio.io/dataplane-mode"


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
                   {"kubernetesObject": kobj(f.target)})


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


FAULTS = [
    FaultKind(
        "istio_ambient_disabled", "disabled-istio-ambient-mode-kubernetes-namespace", "namespace.istio-ambient:disabled",
        ("namespace",),
        "Takes a namespace out of Istio's ambient-mode mesh (label `istio.io/dataplane-mode: none`), so the mesh no "
        "longer carries its workloads' traffic.",
        _check_ambient_disabled, _inject_ambient_disabled, _revert_ambient_disabled,
        preconditions=("The namespace's application runs in an Istio ambient-mode service mesh.",),
    ),
]
