"""`itbench evaluate`: a bundle's evaluator.py on an agent's answer and a state."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import click

from ..tasks import ORDER
from .common import EXIT_CLEAN, EXIT_ERROR, UserError, terminal


@click.command("evaluate")
@click.argument("bundle", type=click.Path(file_okay=False))
@click.option("--task", type=click.Choice(ORDER),
              help="Grade this task only (default: every task the bundle poses: its `tasks`, else SRE and FinOps "
                   "diagnose and mitigate, CISO policy).")
@click.option("--agent-output", "agent_output", type=click.Path(),
              help="The agent's answer (JSON): what the diagnose task grades; or the agent's work folder, where "
                   "each task graded on an answer reads its own file (detection.json, diagnosis.json, analysis.json).")
@click.option("--injected-at", "injected_at", help="When the fault was injected (RFC 3339): what detect times against.")
@click.option("--answered-at", "answered_at",
              help="When the harness saw the detection answer appear (RFC 3339): it bounds the answer's `noticed_at`.")
@click.option("--state", "state", type=click.Path(dir_okay=False),
              help="The state snapshot (JSON): what the mitigate task grades (`python BUNDLE/evaluator.py "
                   "--requirements` says what it must hold).")
@click.option("--artifact", type=click.Path(dir_okay=False), help="CISO: the agent's policy (Kyverno JSON/YAML or .rego).")
@click.option("--opa-result", "opa_result", type=click.Path(dir_okay=False),
              help="CISO Rego: a recorded `opa eval` result per object.")
@click.option("--opa", "opa", metavar="PATH",
              help="CISO Rego: the OPA v1 binary that grades the policy (default: $ITBENCH_OPA, else `opa` on PATH, "
                   "else the one `python tools/build_ecosystem.py opa` built for this checkout, else regopy; `none`: "
                   "regopy).")
@click.option("--gap-only", is_flag=True, help="CISO: also report ITBench's gap-only rule, as a metric.")
@click.option("--timeout", default=120.0, show_default=True, help="Seconds the evaluator may run.")
@click.option("--json/--human", "as_json", default=None,
              help="Print the verdict as the evaluator's JSON, or as a summary (failed checks first). Default: "
                   "the summary on a terminal, the JSON when standard output is a file or a pipe.")
def command(bundle: str, task: str | None, agent_output: str | None, injected_at: str | None,
            answered_at: str | None, state: str | None, artifact: str | None, opa_result: str | None, opa: str | None,
            gap_only: bool, timeout: float, as_json: bool | None) -> None:
    """Run a bundle's evaluator.py on an agent's answer and a state; print its verdict.

    The evaluator runs as the bundle ships it, in a subprocess with this Python, so the
    verdict is the one a benchmark run gets. It grades the task it is told, or every task the
    bundle poses, and never guesses a task from the answer's shape: an input a task needs that
    is missing or of the wrong shape, or a state that lacks what the task reads, is refused.
    Exit codes are the evaluator's: 0 it ran (pass or fail: see `passed`), 2 its inputs are
    unusable (the reason on stderr). docs/evaluator.md defines every verdict.

    On a terminal the verdict is summarised: per task, passed or failed, the score and what it
    means, then the failed checks (each with its reason), then the passed ones, each check once.
    `--json` prints the evaluator's JSON, which is also the default when standard output is not a
    terminal, so that scripts reading it keep working.

    A Rego policy is graded by OPA v1 when its binary is found (--opa, $ITBENCH_OPA, `opa` on PATH,
    else the one tools/build_ecosystem.py built for this checkout), else by regopy; the verdict
    names the engine (`rego (opa 1.22.4)`, `rego (regopy)`).

    \b
    Examples:
      itbench evaluate out/otel-checkout-nonexistent-image --agent-output answer.json --state state.json
      itbench evaluate out/otel-checkout-nonexistent-image --task mitigate --state state.json
      itbench evaluate out/shop-detect --agent-output /tmp/agent --injected-at 2026-01-01T00:00:00Z --state state.json
      itbench evaluate out/cis-k8s-5-2-2-privileged-kyverno --artifact policy.yaml
    """
    import subprocess

    script = Path(bundle) / "evaluator.py"
    if not Path(bundle).is_dir():
        raise UserError(f"{bundle}: no such bundle folder")
    if not script.is_file():
        raise UserError(f"{bundle}: not a bundle with an evaluator (no evaluator.py); compile the scenario again")
    files = (("--agent-output", agent_output), ("--state", state), ("--artifact", artifact), ("--opa-result", opa_result))
    if all(value is None for _, value in files):
        raise UserError("nothing to grade: give the agent's answer (--agent-output), the state (--state) or, for "
                        "CISO, the policy (--artifact, --opa-result)")
    command = [sys.executable, str(script)]
    for option, value in files:
        if value is None:
            continue
        if not Path(value).is_file() and not (option == "--agent-output" and Path(value).is_dir()):
            raise UserError(f"{option} {value}: {'not a regular file' if Path(value).exists() else 'no such file'}")
        command += [option, str(Path(value).resolve())]
    if task is not None:
        command += ["--task", task]
    if injected_at is not None:
        command += ["--injected-at", injected_at]
    if answered_at is not None:
        command += ["--answered-at", answered_at]
    if gap_only:
        command.append("--gap-only")
    env = None
    if opa is not None:
        command += ["--opa", opa]
    elif artifact is not None and artifact.endswith(".rego") and not os.environ.get("ITBENCH_OPA") \
            and not shutil.which("opa"):  # only a Rego artefact needs an engine (the evaluator reads it by suffix)
        built = built_opa()
        if built is not None:
            # through the environment, which the evaluator of a bundle compiled before `--opa` existed ignores
            env = {**os.environ, "ITBENCH_OPA": built}
    try:
        proc = subprocess.run(command, capture_output=True, text=True, timeout=timeout, check=False, env=env)
    except subprocess.TimeoutExpired as exc:
        raise UserError(f"{script}: the evaluator ran longer than {timeout:g} s") from exc
    except OSError as exc:
        raise UserError(f"{script}: cannot run: {exc.strerror or exc}") from exc
    human = as_json is False or (as_json is None and sys.stdout.isatty())
    summary = summarise(proc.stdout) if human and proc.returncode == EXIT_CLEAN else None
    if summary is not None:
        click.echo(terminal(summary), nl=False)
    elif proc.stdout:
        click.echo(terminal(proc.stdout), nl=False)  # JSON: escaping keeps its data
    if proc.stderr:
        click.echo(terminal(proc.stderr), err=True, nl=False)
    if proc.returncode not in (EXIT_CLEAN, EXIT_ERROR):  # 0 ran, 2 unusable inputs; anything else is a crash
        click.echo(f"error: {script} failed (exit code {proc.returncode})", err=True)
        sys.exit(EXIT_ERROR)
    sys.exit(proc.returncode)


def built_opa() -> str | None:
    """The `opa` that `python tools/build_ecosystem.py opa` built for this checkout (docs/ecosystem.md), when
    the package runs from a checkout holding that script, Go is there and the binary was built; else None."""
    import importlib.util

    script = Path(__file__).resolve().parents[2] / "tools" / "build_ecosystem.py"
    if not script.is_file():
        return None
    try:
        module = sys.modules.get("itbench_build_ecosystem")
        if module is None:
            spec = importlib.util.spec_from_file_location("itbench_build_ecosystem", script)
            module = importlib.util.module_from_spec(spec)
            sys.modules[spec.name] = module  # its dataclass looks its module up there
            spec.loader.exec_module(module)
        path = module.binary_path("opa") if module.go_binary() else None
    except Exception:  # noqa: BLE001 - a checkout's script that does not load leaves the default engines
        return None
    return str(path) if path is not None and path.is_file() and os.access(path, os.X_OK) else None


def summarise(text: str) -> str | None:
    """A verdict for a reader: per task, its result, score and meaning, failed checks first with their
    reasons, each check once. None when `text` is not a verdict (then the JSON is printed as it is)."""
    import json

    try:
        verdict = json.loads(text)
    except ValueError:
        return None
    if not isinstance(verdict, dict) or "checks" not in verdict:
        return None
    lines = []
    tasks = verdict.get("tasks") or {verdict.get("task"): verdict}
    if len(tasks) > 1:
        lines.append(f"{verdict.get('scenario')}: {'PASSED' if verdict.get('passed') else 'FAILED'}, "
                     f"score {verdict.get('score')} (the mean of its tasks)")
    for name, one in tasks.items():
        checks = one.get("checks") or []
        failed = [c for c in checks if not c.get("passed")]
        head = f"{one.get('scenario')} {name}" if len(tasks) == 1 else f"  {name}"
        lines.append(f"{head}: {'PASSED' if one.get('passed') else 'FAILED'}, score {one.get('score')}, "
                     f"{len(checks) - len(failed)} of {len(checks)} checks passed")
        indent = "  " if len(tasks) == 1 else "    "
        if one.get("score_means"):
            lines.append(f"{indent}score: {one['score_means']}")
        metrics = one.get("metrics") or {}
        if metrics:
            lines.append(f"{indent}metrics: " + ", ".join(f"{k} {v}" for k, v in sorted(metrics.items())))
        for c in failed:
            lines.append(f"{indent}FAIL {c.get('id')}: {c.get('detail') or ''}".rstrip())
        for c in checks:
            if c.get("passed"):
                lines.append(f"{indent}ok   {c.get('id')}")
    return "\n".join(lines) + "\n"
