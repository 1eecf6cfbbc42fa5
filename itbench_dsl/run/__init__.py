"""Runs of a bundle: what a run does and in which order (`lifecycle.py`, pure data: `itbench run --dry-run`),
and doing it against a cluster, the only code that imports the `kubernetes` client.

`itbench run` and `itbench snapshot` import the client modules inside their command functions; nothing
else in itbench does (tests/run/test_run_plan.py checks that `itbench --help` and `itbench check` never load
`kubernetes`). The client is the optional extra `cluster`: `pip install 'itbench-dsl[cluster]'`.

- `lifecycle.py`: the phases, the bundle as a run reads it, the plan.
- `client.py`: `Cluster`, a thin layer over the official client (discovery, server-side apply,
  delete, get, list, watch, TokenRequest, SelfSubjectAccessReview) that raises `ClusterError`.
- `prometheus.py`: the alerts of Prometheus's HTTP API (standard library).
- `snapshot.py`: the state a bundle's evaluator reads (docs/evaluator.md), captured through the client.
- `runner.py`: a run of a bundle, phase by phase (`lifecycle.py` says which), with its timeline, results
  and the revert that always runs.
"""

from __future__ import annotations


class ClusterError(Exception):
    """A cluster, a Prometheus or a run step that failed; the message says what and where."""


def require_client() -> None:
    """Raise ClusterError with the install line when the kubernetes client is missing."""
    try:
        import kubernetes  # noqa: F401
    except ImportError as exc:
        raise ClusterError("this command talks to a cluster and needs the kubernetes client: "
                           "pip install 'itbench-dsl[cluster]'") from exc
