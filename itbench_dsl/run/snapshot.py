"""The state a bundle's evaluator reads (docs/evaluator.md, "The state"), captured through the client.

What to capture is the evaluator's own statement (`evaluator.py --requirements`: the kinds per
namespace, the alerts, the PolicyReports, the probes); every kind is listed in `captured`, so a kind
with no object (a chaos experiment deleted) reads as absent, never as missing. Each probe runs in one
ready pod of its workload (pods/exec); one that cannot run is recorded as a failed result (exit code -1,
the reason in `stderr`), as the evaluator's own `--capture` records it: its predicates fail, never pass.
"""

from __future__ import annotations

from .lifecycle import Bundle, captured_kinds
from . import ClusterError, prometheus
from .client import Cluster


PROBE_TIMEOUT = 120.0  # seconds a probe may run


def capture(cluster: Cluster, bundle: Bundle, prometheus_url: str | None, on_step=None,
            probe_timeout: float = PROBE_TIMEOUT, on_probe=None) -> dict:
    hints = {obj["kind"]: obj["apiVersion"] for obj in bundle.objects()}
    items: list[dict] = []
    kinds = captured_kinds(bundle)
    for namespace, kind in kinds:
        api_version = hints.get(kind) or cluster.kind_api_version(kind)
        if api_version is None or cluster.resource(api_version, kind) is None:
            found = []  # a kind the API does not serve has no object: captured, and empty
        else:
            found, _ = cluster.list(api_version, kind, namespace or None)
        items += found
        if on_step:
            on_step(namespace, kind, len(found))
    state: dict = {"resources": {"apiVersion": "v1", "kind": "List", "items": items},
                   "captured": [f"{ns}/{kind}" for ns, kind in kinds]}
    if bundle.requires.get("alerts"):
        if not prometheus_url:
            raise ClusterError(f"{bundle.scenario}: the evaluator reads the firing alerts: give --prometheus URL")
        state["alerts"] = prometheus.alerts(prometheus_url)
    if bundle.requires.get("policyReports"):
        state["policyReports"] = capture_reports(cluster)
    if bundle.probes:
        state["probes"] = {}
        for probe in bundle.probes:
            try:
                result = cluster.exec(probe.workload, probe.container, probe.command, probe_timeout)
            except ClusterError as exc:
                result = {"exit_code": -1, "stdout": "", "stderr": f"the probe cannot run: {exc}"}
            state["probes"][probe.name] = result
            if on_probe:
                on_probe(probe, result)
    return state


OBSERVED_KINDS = ("Deployment", "StatefulSet", "DaemonSet", "Pod")  # what an earlier capture holds


def observe(cluster: Cluster, bundle: Bundle, at: str) -> dict:
    """One earlier capture of the state's `observations` (docs/evaluator.md, "Stable since the fix"): the
    workloads and pods of the namespaces the evaluator reads, as they are at `at`."""
    items: list[dict] = []
    for namespace, kind in captured_kinds(bundle):
        if kind in OBSERVED_KINDS and namespace:
            api_version = "v1" if kind == "Pod" else "apps/v1"
            items += cluster.list(api_version, kind, namespace)[0]
    return {"at": at, "resources": {"apiVersion": "v1", "kind": "List", "items": items}}


def capture_reports(cluster: Cluster) -> list[dict]:
    """Every PolicyReport and ClusterPolicyReport (wgpolicyk8s.io) of the cluster."""
    reports = []
    for kind in ("PolicyReport", "ClusterPolicyReport"):
        api_version = cluster.kind_api_version(kind, prefer=("wgpolicyk8s.io",))
        if api_version is not None:
            reports += cluster.list(api_version, kind)[0]
    return reports
