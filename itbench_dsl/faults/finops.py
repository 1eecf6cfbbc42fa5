"""FinOps faults: configurations that waste money, each with the optimum it is measured against."""

from __future__ import annotations

import copy

from .. import ir
from .base import (
    Arg, Checked, Effect, FaultInput, FaultKind, find_object, kobj,
)


# ---- misconfigured autoscaler (FinOps) ----------------------------------------------------------------


def _check_misconfigured_hpa(f: FaultInput) -> Checked | None:
    workload: ir.Workload = f.obj
    hpas = [h for h in f.build.autoscalers if h.target.name == workload.name and h.namespace == workload.namespace]
    utilization = f.body.attr("utilization", "percent", default=1)
    if not hpas:
        f.error("E2023", f"{workload.kind.lower()} `{workload.name}` has no HorizontalPodAutoscaler to misconfigure",
                f.fault.target.span, "no autoscaler", help=f'declare `hpa "{workload.name}" {{ workload = "{workload.name}" ... }}`')
        return None
    hpa = hpas[0]
    resource = "cpu" if hpa.cpu_utilization is not None else "memory"
    current = hpa.cpu_utilization if resource == "cpu" else hpa.memory_utilization
    # Utilisation is measured against requests (a limit alone sets the request): without one the
    # autoscaler reports "missing request" and the misconfiguration has no effect.
    bare = [c.name for c in workload.containers
            if resource not in c.resources.get("requests", {}) and resource not in c.resources.get("limits", {})]
    if bare:
        f.error("E2028", f"container `{bare[0]}` of `{workload.name}` has no {resource} request: the autoscaler cannot "
                f"compute {resource} utilisation, so the fault would change nothing", f.fault.target.span,
                f"no {resource} request", help=f"scale on a resource the containers request, or add "
                f"`resources {{ requests {{ {resource} = ... }} }}`")
        return None
    if utilization == current:
        f.error("E2027", f"the autoscaler already targets {utilization}% {resource}: the fault would change nothing",
                f.body.attr_span("utilization"), "same target")
        return None
    hpa_ref = ir.ObjectRef("autoscaling/v2", "HorizontalPodAutoscaler", hpa.namespace, hpa.name)
    return Checked(
        {"autoscaler": hpa.name, "resource": resource, "utilization": utilization, "original_utilization": current},
        {"kubernetesObject": kobj(f.target)},
        [hpa_ref],
    )


def _hpa_ref(injection: ir.Injection) -> ir.ObjectRef:
    return ir.ObjectRef("autoscaling/v2", "HorizontalPodAutoscaler", injection.target.namespace, injection.args["autoscaler"])


def _inject_hpa(injection, topology):
    hpa = copy.deepcopy(find_object(topology, _hpa_ref(injection)))
    setattr(hpa, f"{injection.args['resource']}_utilization", injection.args["utilization"])
    return Effect([hpa], [])


def _revert_hpa(injection, topology):
    return Effect([copy.deepcopy(find_object(topology, _hpa_ref(injection)))], [])


FAULTS = [
    FaultKind(
        "misconfigured_hpa", "misconfigured-kubernetes-horizontal-pod-autoscaler",
        "autoscaler.target-utilization:misconfigured", ("deployment", "statefulset"),
        "Sets a workload's autoscaler to a utilisation target that keeps it scaled out.",
        _check_misconfigured_hpa, _inject_hpa, _revert_hpa, domains=("finops", "sre"),
        args=(Arg("utilization", "percentage", default="1%", help="the misconfigured utilisation target"),),
        preconditions=("The workload has a HorizontalPodAutoscaler.",
                       "Its containers request the resource the autoscaler measures.",
                       "The new target differs from the current one."),
        app_options={"autoscaling": {"kubernetes": {"hpa": True}}},
    ),
]
