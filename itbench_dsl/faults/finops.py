"""FinOps faults: configurations that waste money, each with the optimum it is measured against.

A FinOps scenario is scored by proximity to an optimum, declared in its `expect` block
(`optimal deployment "cart" spec.replicas = 1`). Every fault here checks that a FinOps
scenario declares an optimum for what the fault changes (the target, or the autoscaler it
misconfigures), and when it does not, says which line to add, with the value derived from
the topology: the original requests, replica count, limits or utilisation target. The
optimum is ground truth, so it stays written in the source rather than made up silently;
an expert may also know a better value than the original one. A scenario without any
`optimal` gets the scenario-level E2013 only (no second error per fault).
"""

from __future__ import annotations

import copy
from decimal import Decimal
from typing import Callable

from .. import ast, ir
from ..units import parse_cpu, parse_memory
from .base import (
    Acceptance,
    Arg,
    Checked,
    Effect,
    FaultInput,
    FaultKind,
    container_named,
    find_object,
    kobj,
    original,
    patched,
    pick_container,
)

RESOURCES = ("cpu", "memory")


# ---- the declared optimum ---------------------------------------------------------------------------


def _declared_optima(document: ast.Scenario | None) -> tuple[str | None, list[ast.Optimal]]:
    if document is None:
        return None, []
    domain = next((s.name for s in document.statements if isinstance(s, ast.Domain)), None)
    optima = [o for e in document.statements if isinstance(e, ast.Expect) for o in e.statements
              if isinstance(o, ast.Optimal)]
    return domain, optima


def require_optimum(f: FaultInput, targets: list[tuple[str, str]], path_ok: Callable[[tuple[str, ...]], bool],
                    suggestion: str, what: str) -> bool:
    """A FinOps scenario must declare the optimum of what the fault changes (E2013 otherwise).

    `targets` are the (language kind, name) pairs an optimum may name; `path_ok` accepts its path.
    """
    domain, optima = _declared_optima(f.document)
    if domain != "finops" or not optima:  # not scored by proximity, or E2013 is reported for the scenario
        return True
    for optimum in optima:
        if (optimum.target.kind, optimum.target.name.split("/")[-1]) in targets and path_ok(optimum.path):
            return True
    f.error("E2013", f"the scenario declares no optimum for {what}, which `{f.fault.kind}` changes: "
            "proximity has nothing to be measured against", f.fault.target.span, "no optimum for this",
            help=f"add `{suggestion}` to `expect` (the value before the fault)")
    return False


def _path_has(word: str) -> Callable[[tuple[str, ...]], bool]:
    return lambda path: word in path


# ---- quantities -------------------------------------------------------------------------------------------


def _amount(resource: str, text: str) -> Decimal:
    return Decimal(parse_cpu(text)) if resource == "cpu" else Decimal(parse_memory(text))


def _format(resource: str, amount: Decimal) -> str:
    if resource == "cpu":
        millis = int(amount * 1000)
        return f"{millis // 1000}" if millis % 1000 == 0 else f"{millis}m"
    amount = int(amount)
    for suffix, size in (("Gi", 2**30), ("Mi", 2**20), ("Ki", 2**10)):
        if amount % size == 0:
            return f"{amount // size}{suffix}"
    return str(amount)


def _effective_requests(container: ir.Container) -> dict[str, str]:
    """What the scheduler reserves: the requests, or the limit where a resource has no request."""
    requests = dict(container.resources.get("requests", {}))
    for resource, value in container.resources.get("limits", {}).items():
        requests.setdefault(resource, value)
    return {k: v for k, v in requests.items() if k in RESOURCES}


def _workload_kind(f: FaultInput) -> str:
    return f.obj.kind.lower()


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
    if not require_optimum(f, [("hpa", hpa.name), (_workload_kind(f), workload.name)],
                           lambda path: True, f'optimal hpa "{hpa.name}" '
                           f"spec.metrics.resource.target.averageUtilization = {current}",
                           f"autoscaler `{hpa.name}` or {workload.kind.lower()} `{workload.name}`"):
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


# ---- overprovisioned requests --------------------------------------------------------------------------


def _check_overprovisioned(f: FaultInput) -> Checked | None:
    container = pick_container(f)
    factor = f.body.attr("factor", "int")
    values = {"cpu": f.body.attr("cpu", "cpu"), "memory": f.body.attr("memory", "memory")}
    if container is None:
        return None
    if factor is not None and factor < 2:
        f.error("E2010", f"`factor` is {factor}: overprovisioning multiplies the requests by 2 or more",
                f.body.attr_span("factor"), "not above 1", help="write `factor = 10`, or give `cpu`/`memory` values")
        return None
    if factor is not None and any(values.values()):
        f.error("E2010", "give either `factor` or `cpu`/`memory` values, not both", f.body.attr_span("factor"),
                "factor and values", help="drop `factor` to set the values as written")
        return None
    current = _effective_requests(container)
    if not current:
        f.error("E2028", f"container `{container.name}` of `{f.obj.name}` requests no CPU or memory (and has no "
                "limits): there is no request to overprovision", f.fault.target.span, "no requests",
                help="add `resources { requests { cpu = 100m  memory = 64Mi } }` to the container, or pick another")
        return None
    new: dict[str, str] = {}
    if any(values.values()):
        for resource, value in values.items():
            if value is None:
                continue
            if resource not in current:
                f.error("E2028", f"container `{container.name}` requests no {resource}: the fault overprovisions "
                        "existing requests", f.body.attr_span(resource), f"no {resource} request",
                        help="its requests: " + ", ".join(f"{k} = {v}" for k, v in current.items()))
                return None
            if _amount(resource, value) <= _amount(resource, current[resource]):
                code = "E2027" if _amount(resource, value) == _amount(resource, current[resource]) else "E2010"
                f.error(code, f"{resource} {value} is not above the current request ({current[resource]}): "
                        "nothing would be overprovisioned", f.body.attr_span(resource), "not above the request",
                        help=f"request more than {current[resource]}, e.g. `{resource} = "
                        f"{_format(resource, _amount(resource, current[resource]) * 10)}`")
                return None
            new[resource] = value
    else:
        for resource, value in current.items():
            new[resource] = _format(resource, _amount(resource, value) * (factor or 10))
    originals = {k: current[k] for k in new}
    if not require_optimum(f, [(_workload_kind(f), f.obj.name)], _path_has("requests"),
                           f'optimal {_workload_kind(f)} "{f.obj.name}" '
                           f"resources.requests.{next(iter(originals))} = {next(iter(originals.values()))}",
                           f"the requests of `{f.obj.name}`"):
        return None
    return Checked(
        {"container": container.name, "requests": new, "original_requests": originals},
        {"container": {"name": container.name, "resources": {"requests": dict(new)}}, "kubernetesObject": kobj(f.target)},
    )


def _inject_overprovisioned(injection, topology):
    def change(workload, args):
        container = container_named(workload, args["container"])
        resources = container.resources
        requests = resources.setdefault("requests", {})
        for resource, value in args["requests"].items():
            requests[resource] = value
            limit = resources.get("limits", {}).get(resource)
            # kubernetes pkg/apis/core/validation/validation.go, validateResourceRequirements (v1.33)
            # a request above its limit is refused by the API server: the limit rises with it
            if limit is not None and _amount(resource, limit) < _amount(resource, value):
                resources["limits"][resource] = value

    return patched(topology, injection, change)


# ---- idle replicas ------------------------------------------------------------------------------------


def _check_idle_replicas(f: FaultInput) -> Checked | None:
    workload: ir.Workload = f.obj
    default = max(10, workload.replicas * 5)
    replicas = f.body.attr("replicas", "nonneg_int", default=default)
    if replicas is None:
        return None
    hpas = [h for h in f.build.autoscalers if h.target.name == workload.name and h.namespace == workload.namespace]
    if hpas:
        f.error("E2011", f"autoscaler `{hpas[0].name}` controls the replicas of `{workload.name}`: it would undo "
                "the scaling", f.fault.target.span, "scaled by an autoscaler",
                help="to waste replicas through an autoscaler, use `misconfigured_hpa`; or remove the `hpa`")
        return None
    if replicas == workload.replicas:
        f.error("E2027", f"{workload.kind.lower()} `{workload.name}` already has {replicas} replicas: the fault would "
                "change nothing", f.body.attr_span("replicas"), "same replica count")
        return None
    if replicas < workload.replicas:
        f.error("E2010", f"`replicas = {replicas}` is fewer than the {workload.replicas} replicas `{workload.name}` "
                "has: idle replicas scale a workload up", f.body.attr_span("replicas"), "not above the current count",
                help=f"use more than {workload.replicas}, e.g. {default}")
        return None
    if not require_optimum(f, [(_workload_kind(f), workload.name)], _path_has("replicas"),
                           f'optimal {_workload_kind(f)} "{workload.name}" spec.replicas = {workload.replicas}',
                           f"the replica count of `{workload.name}`"):
        return None
    return Checked(
        {"replicas": replicas, "original_replicas": workload.replicas},
        {"kubernetesObject": kobj(f.target), "replicas": replicas},
    )


def _inject_idle(injection, topology):
    return patched(topology, injection, lambda w, a: setattr(w, "replicas", a["replicas"]))


# ---- the library ---------------------------------------------------------------------------------------

_OPTIMUM = "The scenario declares an `optimal` value for what the fault changes (FinOps scenarios)."

_KUBECTL_TARGET = "{{ args.kubernetesObject.kind | lower }}/{{ args.kubernetesObject.metadata.name }}"
_KUBECTL_NS = "kubectl -n {{ args.kubernetesObject.metadata.namespace }}"

FAULTS = [
    FaultKind(
        "misconfigured_hpa", "misconfigured-kubernetes-horizontal-pod-autoscaler",
        "autoscaler.target-utilization:misconfigured", ("deployment", "statefulset"),
        "Sets a workload's autoscaler to a utilisation target that keeps it scaled out.",
        _check_misconfigured_hpa, _inject_hpa, _revert_hpa, domains=("finops", "sre"),
        args=(Arg("utilization", "percentage", default="1%", help="the misconfigured utilisation target"),),
        preconditions=("The workload has a HorizontalPodAutoscaler.",
                       "Its containers request the resource the autoscaler measures.",
                       "The new target differs from the current one.", _OPTIMUM),
        app_options={"autoscaling": {"kubernetes": {"hpa": True}}},
        labels=("virtualization", "misconfiguration"),
        symptoms=('scaling',),
        # ITBench's task sets a CPU target of 20% and a memory target of 30%, whatever the scenario's
        itbench_injects={"utilization": None},
    ),
    FaultKind(
        "overprovisioned_requests", None, "workload.container.resources.requests:overprovisioned",
        ("deployment", "statefulset"),
        "Raises a container's CPU and memory requests far above what it needs (limits rise with them).",
        _check_overprovisioned, _inject_overprovisioned, original, domains=("finops",),
        args=(Arg("container", "string", help="the container; required when the workload has several"),
              Arg("factor", "integer", default="10 (when neither `cpu` nor `memory` is given)",
                  help="multiplies every current request (a limit stands for a missing request)"),
              Arg("cpu", "CPU quantity", help="the new CPU request, above the current one"),
              Arg("memory", "memory quantity", help="the new memory request, above the current one")),
        preconditions=("The container exists in the workload.",
                       "The container has requests or limits to overprovision.",
                       "Each new request is above the current one.", _OPTIMUM),
        alerts=("CPUSpend", "MemorySpend"),
        # the waste is the requests (what the scheduler reserves and the cost model counts): a limit the fault
        # raised with them costs nothing, so a fix keeping a larger limit (headroom against OOM kills) is as
        # right as one restoring it; the requests are graded by the optimum
        accept=(Acceptance(r".*\.resources\.limits(\..*)?", "any"),),
        solutions=({"steps": [{
            "text": "Set the container's requests back to what it uses.",
            "command": _KUBECTL_NS + " set resources " + _KUBECTL_TARGET
            + " -c {{ args.container.name }} --requests="
            "{% for k, v in args.container.resources.requests | dictsort %}{{ k }}=<{{ k }} it needs>"
            "{% if not loop.last %},{% endif %}{% endfor %}",
        }]},),
        symptoms=('cost',),
    ),
    FaultKind(
        "idle_replicas", None, "workload.replicas:overscaled", ("deployment", "statefulset"),
        "Scales a workload far above the replicas it needs, with no autoscaler to bring it back.",
        _check_idle_replicas, _inject_idle, original, domains=("finops",),
        args=(Arg("replicas", "integer", default="10, or 5 times the current count when larger",
                  help="the new replica count, above the current one"),),
        preconditions=("No HorizontalPodAutoscaler controls the workload (it would undo the scaling).",
                       "The new replica count is above the current one.", _OPTIMUM),
        alerts=("CPUSpend", "MemorySpend"),
        solutions=({"steps": [{
            "text": "Scale the workload back to the replicas its load needs.",
            "command": _KUBECTL_NS + " scale " + _KUBECTL_TARGET + " --replicas=<replicas it needs>",
        }]},),
        symptoms=('cost',),
    ),
]

# Removing a container's limits (a FinOps risk as well: unbounded spend) is ITBench's
# `unassigned_limits` (workload.py; mechanism workload.container.resources.limits:removed). A FinOps
# scenario uses that fault with an `optimal ... resources.limits.<resource>` value: a `missing_limits`
# kind here would be the same mechanism twice (see mechanisms.py).
