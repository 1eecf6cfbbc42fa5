"""Faults in what the API server admits: a namespace's Pod Security Admission level.

Pod Security Admission is built into the API server and configured by namespace labels
(`pod-security.kubernetes.io/enforce`): pods already running are left alone, and only pods created
after the label (a restart, an eviction, a rollout) are checked and refused. A scenario therefore
pairs the fault with a waiter that recreates the pods of a workload (`wait after delete_pods`).
"""

from __future__ import annotations

import copy

from .. import ir
from .base import Acceptance, Arg, Checked, Effect, FaultInput, FaultKind, kobj

ENFORCE_LABEL = "pod-security.kubernetes.io/enforce"
ENFORCE_VERSION_LABEL = "pod-security.kubernetes.io/enforce-version"
LEVELS = ("privileged", "baseline", "restricted")


def _violates_restricted(workload: ir.Workload) -> bool:
    """Whether the workload's pods break the restricted Pod Security Standard, on the fields the topology
    declares: they must run as non-root with the RuntimeDefault (or Localhost) seccomp profile, and
    every container must forbid privilege escalation and drop ALL capabilities."""
    pod = workload.security_context or {}
    pod_non_root = pod.get("runAsNonRoot") is True
    pod_seccomp = (pod.get("seccompProfile") or {}).get("type") in ("RuntimeDefault", "Localhost")
    for container in (*workload.containers, *workload.init_containers):
        sc = container.security_context or {}
        if sc.get("allowPrivilegeEscalation") is not False or sc.get("privileged"):
            return True
        if "ALL" not in ((sc.get("capabilities") or {}).get("drop") or []):
            return True
        if not (pod_non_root or sc.get("runAsNonRoot") is True):
            return True
        if not (pod_seccomp or (sc.get("seccompProfile") or {}).get("type") in ("RuntimeDefault", "Localhost")):
            return True
    return False


def _check_pod_security(f: FaultInput) -> Checked | None:
    namespace: ir.Namespace = f.obj
    level = f.body.attr("level", "symbol", default="restricted")
    if level is None:
        return None
    if level not in LEVELS[1:]:
        f.error("E2010", f"`level = {level}` refuses nothing: pick `baseline` or `restricted`",
                f.body.attr_span("level"), "not a refusing level", help="Pod Security levels: " + ", ".join(LEVELS))
        return None
    if namespace.labels.get(ENFORCE_LABEL) == level:
        f.error("E2027", f"namespace `{namespace.name}` already enforces `{level}`: the fault would change nothing",
                f.fault.target.span, "already enforced")
        return None
    workloads = [w for w in f.build.workloads if w.namespace == namespace.name and w.kind != "Pod"]
    # `baseline` is broken by host namespaces and privileged containers only; checked loosely: `restricted`
    # must be broken by some workload, else the label would refuse nothing the namespace runs
    violating = sorted(w.name for w in workloads if level == "baseline" and (
        w.host_network or w.host_pid or w.host_ipc or any((c.security_context or {}).get("privileged")
                                                          for c in w.containers))
        or level == "restricted" and _violates_restricted(w))
    if not violating:
        f.error("E2011", f"every workload of namespace `{namespace.name}` meets the `{level}` Pod Security Standard: "
                "the label would refuse no pod", f.fault.target.span, "refuses nothing",
                help="the fault needs a workload whose pods break the level (root, privilege escalation, no seccomp "
                     "profile)")
        return None
    return Checked({"level": level, "original_labels": {k: namespace.labels.get(k)
                                                        for k in (ENFORCE_LABEL, ENFORCE_VERSION_LABEL)},
                    "violating": violating},
                   {"kubernetesObject": kobj(f.target)}, agent_resources=["namespaces"])  # to relabel it


def _namespace(topology: ir.Topology, injection: ir.Injection) -> ir.Namespace:
    return copy.deepcopy(next(n for n in topology.namespaces if n.name == injection.target.name))


def _inject_pod_security(injection, topology):
    namespace = _namespace(topology, injection)
    namespace.labels = {**namespace.labels, ENFORCE_LABEL: injection.args["level"], ENFORCE_VERSION_LABEL: "latest"}
    return Effect([namespace], [])


def _revert_pod_security(injection, topology):
    return Effect([_namespace(topology, injection)], [])


FAULTS = [
    FaultKind(
        # kubernetes staging/src/k8s.io/pod-security-admission/admission/admission.go (v1.33): pods are checked on
        # create; a namespace label change only warns of the pods already running
        "enforced_pod_security", None, "namespace.labels.pod-security:enforced", ("namespace",),
        "Labels a namespace to enforce a Pod Security Standard its pods break (`restricted`): running pods stay, but "
        "the API server refuses every pod created after, so a workload whose pods are recreated stays short of "
        "replicas.",
        _check_pod_security, _inject_pod_security, _revert_pod_security,
        args=(Arg("level", "name", default="restricted", help="the enforced level, `baseline` or `restricted`"),),
        preconditions=("`level` is `baseline` or `restricted` (default) and the namespace does not enforce it yet.",
                       "A workload of the namespace has pods that break the level."),
        alerts=(),
        solutions=(
            {"steps": [{"text": "Remove the namespace's Pod Security enforce label, or relax it to a level the "
                                "workloads meet.",
                        "command": "kubectl label namespace {{ args.kubernetesObject.metadata.name }} "
                                   "pod-security.kubernetes.io/enforce- pod-security.kubernetes.io/enforce-version-"}]},
        ),
        # the level removed or relaxed, whatever version it names; the evaluator judges the label by the pods the
        # level it names refuses (`pod_security_refused`): kept, with every workload made to meet it, passes too
        accept=(Acceptance(r"metadata\.labels\.pod-security\.kubernetes\.io/enforce", "changed"),
                Acceptance(r"metadata\.labels\.pod-security\.kubernetes\.io/enforce-version", "any")),
        labels=("virtualization", "misconfiguration"),
        symptoms=('scheduling', 'readiness'),
    ),
]
