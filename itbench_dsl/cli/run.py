"""`itbench run`: run compiled bundles against a cluster, from deploy to verdict and back."""

from __future__ import annotations

import contextlib
import sys
from pathlib import Path

import click

from .common import EXIT_CLEAN, EXIT_ERROR, UserError


def _duration(text: str) -> float:
    """`30m`, `90s`, `1h`, `45` (seconds)."""
    units = {"s": 1, "m": 60, "h": 3600}
    raw = text.strip()
    try:
        value = float(raw[:-1]) * units[raw[-1]] if raw and raw[-1] in units else float(raw)
    except ValueError:
        raise UserError(f"{text!r}: not a duration (write 90s, 30m or 1h)") from None
    if not value > 0 or value != value or value == float("inf"):
        raise UserError(f"{text!r}: a duration must be positive")
    return value


@click.command("run")
@click.argument("bundles", nargs=-1, required=True, type=click.Path(file_okay=False))
@click.option("--kubeconfig", help="The cluster's kubeconfig (required unless --local or --dry-run).")
@click.option("--local", is_flag=True, help="Run on a local control plane started for the run and stopped after it "
              "(`itbench cluster up`: kube-apiserver, controllers, kwok; no Chaos Mesh or Prometheus; needs Go).")
@click.option("--context", help="The kubeconfig context (default: its current one).")
@click.option("--agent", "agent", help="The agent's command, run by the shell in a fresh folder holding only the "
              "prompt and its kubeconfig (required unless --dry-run). It gets KUBECONFIG, ITBENCH_WORKSPACE, "
              "ITBENCH_PROMPT, HOME (that folder), PATH and the locale, and no other variable of yours.")
@click.option("--agent-env", "agent_env", multiple=True, metavar="NAME",
              help="Also pass this variable of your environment to the agent (its model's API key, say); repeatable.")
@click.option("--agent-timeout", default="30m", show_default=True, help="The agent's time budget (90s, 30m, 1h).")
@click.option("--prometheus", help="Prometheus's URL: the alerts before and after the injection and in the state.")
@click.option("--ready-timeout", default="10m", show_default=True, help="How long to wait for workloads to be ready.")
@click.option("--alert-timeout", default=None, help="How long to wait for the expected alerts [default: 15m, or "
              "longer when an expected alert's rule needs it: its `for` and two minutes].")
@click.option("--alert-poll", default="10s", show_default=True, help="How often to ask Prometheus meanwhile (and, "
              "CISO, Kyverno's reports).")
@click.option("--report-timeout", default="5m", show_default=True, help="CISO: how long Kyverno may take, after the "
              "agent, to report on every object of the scenario.")
@click.option("--stable-for", default="1m", show_default=True, help="How long the agent's fix must run before the "
              "state is captured: a container that restarts meanwhile fails the mitigation.")
@click.option("--mitigation-window", default=None, help="How long after the agent the run captures and grades the "
              "state until the mitigation's checks hold (default: the scenario's `within`; 0: capture at once).")
@click.option("--keep", is_flag=True, help="Leave the topology deployed (the faults are reverted all the same).")
@click.option("--run-id", help="Name the run (default: a new id); an existing run of this id resumes.")
@click.option("--dry-run", is_flag=True, help="Print the plan: every object and API call, in order; no cluster.")
@click.option("-o", "--output", "results", type=click.Path(file_okay=False),
              help="The results folder: RESULTS/<scenario>/<run-id>/ (required unless --dry-run).")
def command(bundles: tuple[str, ...], kubeconfig: str | None, local: bool, context: str | None, agent: str | None,
            agent_timeout: str, prometheus: str | None, ready_timeout: str, alert_timeout: str, alert_poll: str,
            report_timeout: str, stable_for: str, keep: bool, run_id: str | None, dry_run: bool, results: str | None,
            agent_env: tuple[str, ...] = (), mitigation_window: str | None = None) -> None:
    """Run compiled bundles on a cluster: preflight, deploy, inject, hand over to the agent, grade, revert.

    \b
    Each bundle (a folder `itbench compile` wrote) runs in turn:
      preflight  the kinds, controllers and rights the scenario needs; stops with what is missing
      deploy     server-side apply of manifests/ (field manager kubectl, as kubectl apply --server-side); wait until ready
      baseline   the alerts already firing;  inject: the faults, with their waiters and commands in pods
      alerts     wait until the scenario's alerts fire
      handover   a short-lived token for the agent's ServiceAccount; kubeconfig and prompt.md in its workspace
      agent      the command, within its budget (its process group is killed on overrun)
      snapshot   the state the evaluator reads (CISO: once Kyverno reports on every object);  evaluate: verdict.json
      revert, verify, undeploy   always: on success, failure, timeout, Ctrl-C and SIGTERM (CISO: the
                 Kyverno policies the agent deployed are deleted too)
    SRE, FinOps and the CISO Kyverno tasks run; Rego and Ansible tasks are graded with `itbench evaluate`.
    Results: RESULTS/<scenario>/<run-id>/ (verdict.json, state.json, timeline.jsonl, agent.stdout,
    agent.stderr, timings.json, run.json, workspace/); `itbench score RESULTS` reads them.
    Exit codes: 0 every run was graded (pass or fail), 2 a run failed or could not start, 130 interrupted.
    docs/running.md walks through a run on kind.

    \b
    Examples:
      itbench run out/otel-cart-pod-kill-loop --dry-run
      itbench run out/sregym-wrong-dns-policy-hotel-reservation --local --agent ./agent.sh -o results/
      itbench run out/* --kubeconfig ~/.kube/config --prometheus http://localhost:9090 \\
          --agent "my-agent --prompt \\$ITBENCH_PROMPT" --agent-timeout 20m -o results/
    """
    from ..run.lifecycle import BundleError, PlanOptions, load_bundle, plan, render_plan

    budget = _duration(agent_timeout)
    try:
        loaded = [load_bundle(Path(b)) for b in bundles]
    except BundleError as exc:
        raise UserError(str(exc)) from exc
    if dry_run:
        options = PlanOptions(keep=keep, prometheus=prometheus, agent=agent or "", agent_timeout=budget)
        for bundle in loaded:
            click.echo(render_plan(bundle, plan(bundle, options)), nl=False)
        return
    if local and (kubeconfig or context):
        raise UserError("--local starts its own cluster: give it without --kubeconfig and --context")
    missing = [name for name, value in (("--kubeconfig", kubeconfig or local), ("--agent", agent), ("-o", results))
               if not value]
    if missing:
        raise UserError(f"itbench run needs {', '.join(missing)} (or --dry-run to print the plan)")
    if run_id is not None and len(loaded) > 1 and len({b.scenario for b in loaded}) < len(loaded):
        raise UserError("--run-id with several bundles of one scenario would run them into one folder")

    from ..run import ClusterError, require_client

    try:
        require_client()
        from ..run.runner import Run, RunOptions
    except ClusterError as exc:
        raise UserError(str(exc)) from exc
    with _local_cluster() if local else contextlib.nullcontext(kubeconfig) as kubeconfig:
        options = RunOptions(kubeconfig=kubeconfig, agent=agent, results=Path(results), context=context,
                             agent_timeout=budget, prometheus=prometheus, keep=keep, run_id=run_id,
                             ready_timeout=_duration(ready_timeout), alert_timeout=_duration(alert_timeout) if alert_timeout else None,
                             alert_poll=_duration(alert_poll), report_timeout=_duration(report_timeout),
                             stable_for=_duration(stable_for), agent_env=tuple(agent_env),
                             mitigation_window=None if mitigation_window is None
                             else 0.0 if mitigation_window.strip() in ("0", "0s") else _duration(mitigation_window))
        status = EXIT_CLEAN
        for bundle in loaded:
            try:
                outcome = Run(bundle, options).execute()
            except ClusterError as exc:
                raise UserError(str(exc)) from exc
            if outcome.status == "interrupted":
                _say(f"{bundle.scenario}: interrupted; reverted. Resume with --run-id {outcome.run_id}", err=True)
                sys.exit(128 + int(outcome.signum or 2))
            if outcome.status not in ("graded", "complete"):
                _say(f"error: {bundle.scenario} ({outcome.run_id}): {outcome.error}", err=True)
                status = EXIT_ERROR
                continue
            verdict = outcome.verdict or {}
            _say(f"{bundle.scenario} {outcome.run_id}: passed={str(verdict.get('passed')).lower()} "
                 f"score={verdict.get('score')} -> {outcome.folder}")
        sys.exit(status)


def _say(line: str, err: bool = False) -> None:
    """A line of the command's output. A reader that went away (`| head`, a `tee` stopped by Ctrl-C) stops the
    output, never the runs: each run's results are in its folder. The closed stream is replaced by the null
    device, so the interpreter's last flush at exit does not fail either."""
    stream = sys.stderr if err else sys.stdout
    try:
        click.echo(line, err=err)
        stream.flush()
    except (OSError, ValueError):
        import os

        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, stream.fileno())
            os.close(devnull)
        except (OSError, ValueError):
            pass


@contextlib.contextmanager
def _local_cluster():
    """A local control plane (`itbench cluster up`) in a temporary folder for the run: its kubeconfig, with
    its kubectl first on PATH for the agent; stopped and removed afterwards, whatever happens."""
    import os
    import shutil
    import tempfile

    from ..run.local import LocalClusterError, down, up

    folder = Path(tempfile.mkdtemp(prefix="itbench-local-"))
    try:
        try:
            cluster = up(folder / "cluster", say=lambda message: _say(message, err=True))
        except LocalClusterError as exc:
            raise UserError(str(exc)) from exc
        saved_path = os.environ.get("PATH", "")
        os.environ["PATH"] = str(cluster.dir / "bin") + os.pathsep + saved_path
        try:
            yield str(cluster.kubeconfig)
        finally:
            os.environ["PATH"] = saved_path
            import signal

            # the control plane goes whatever arrives now: a second Ctrl-C is noted, not obeyed
            held = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
            for s in held:
                signal.signal(s, lambda signum, frame: _say(f"{signal.Signals(signum).name}: stopping the local "
                                                            "control plane first", err=True))
            try:
                down(cluster.dir, say=lambda message: _say(message, err=True))
            except LocalClusterError as exc:
                _say(f"error: {exc}", err=True)
            finally:
                for s, handler in held.items():
                    signal.signal(s, handler)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
