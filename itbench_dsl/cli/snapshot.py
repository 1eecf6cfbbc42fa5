"""`itbench snapshot`: the state a bundle's evaluator reads, captured from a cluster."""

from __future__ import annotations

import json
from pathlib import Path

import click

from .common import UserError, replace_file


@click.command("snapshot")
@click.argument("bundle", type=click.Path(file_okay=False))
@click.option("--kubeconfig", required=True, help="The cluster's kubeconfig.")
@click.option("--context", help="The kubeconfig context (default: its current one).")
@click.option("--prometheus", help="Prometheus's URL (required when the evaluator reads the alerts).")
@click.option("--fixed-at", help="When the agent's work ended (RFC 3339), kept as the state's `fixed_at`: a "
              "container that restarted since fails the mitigation; without it, any failed restart does.")
@click.option("-o", "--output", "output", required=True, type=click.Path(dir_okay=False),
              help="Where to write the state (JSON).")
def command(bundle: str, kubeconfig: str, context: str | None, prometheus: str | None, fixed_at: str | None,
            output: str) -> None:
    """Capture exactly what BUNDLE's evaluator reads from a cluster: the kinds per namespace that
    `evaluator.py --requirements` lists (each named in `captured`, empty or not), the firing alerts
    and, for CISO, the PolicyReports, in the state format of docs/evaluator.md.

    \b
    Examples:
      itbench snapshot out/otel-cart-pod-kill-loop --kubeconfig ~/.kube/config \\
          --prometheus http://localhost:9090 -o state.json
      itbench evaluate out/otel-cart-pod-kill-loop --task mitigate --state state.json
    """
    from ..run import ClusterError, require_client
    from ..run.lifecycle import BundleError, load_bundle

    from ..runtime.state import rfc3339

    if fixed_at is not None and rfc3339(fixed_at) is None:
        raise UserError(f"--fixed-at {fixed_at!r}: not an RFC 3339 time with a zone (2026-03-01T10:25:00Z)")
    try:
        loaded = load_bundle(Path(bundle), runnable=False)
        require_client()
        from ..run.client import Cluster
        from ..run.snapshot import capture

        with Cluster(kubeconfig, context) as cluster:
            state = capture(cluster, loaded, prometheus)
        if fixed_at is not None:
            state["fixed_at"] = fixed_at
    except (BundleError, ClusterError) as exc:
        raise UserError(str(exc)) from exc
    replace_file(Path(output), json.dumps(state, indent=2, sort_keys=True) + "\n")
    click.echo(f"captured {len(state['resources']['items'])} objects of {len(state['captured'])} kinds"
               + (f" and {len(state['alerts']['data']['alerts'])} alerts" if "alerts" in state else "")
               + f" -> {output}", err=True)
