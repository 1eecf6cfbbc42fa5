"""Observed states: a scenario's healthy, faulty and solved states captured on a local control plane.

`observe_scenario` deploys the scenario's bundle (the run's own phases: runner.Run's preflight, deploy,
inject, revert and undeploy, and snapshot.capture), gives kwok the Stages of the scenario's faults
(local/stages.py: the same fault model the derived states use), and captures:

- healthy: after the deploy, once the workloads are ready;
- faulty: after the injection, once the pods settled;
- solved: after the first solution of the scenario that a script can run (its `kubectl` commands, through
  the control plane's own kubectl), once the pods settled again; where no solution can run unattended (an
  interactive `kubectl edit`, a `<placeholder>`), the bundle's revert (`revert/apply.yaml`, then the objects
  the injection created deleted) stands in, and the report says so.

Each state is graded with the bundle's `evaluator.py` on the tasks that read the state (mitigate; policy),
as are the states `analysis/states.py` derives; `compare` says where the verdicts differ. Every wait is
bounded; the scenario's objects are removed and kwok's stages restored whatever happened.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable, TextIO

from . import ClusterError
from .lifecycle import BundleError, Ref, load_bundle
from .snapshot import capture

STATES = ("healthy", "faulty", "solved")
STATE_TASKS = ("mitigate", "policy")  # the tasks graded on the state alone
SETTLE_MIN = 3.0  # seconds: the least a settle waits (kwok's stages apply within ~1 s)
SETTLE_QUIET = 2.0  # seconds the workloads and pods must stay unchanged to count as settled
SETTLE_MAX = 30.0  # seconds: the most a settle waits
# seconds: the most the settle after the solution waits for the workloads' rollouts to finish. A controller
# whose pods admission refused (a quota) retries with a growing backoff, as long as the refusals lasted, and
# changes nothing meanwhile: quiet is not settled while a rollout is pending
SETTLE_ROLLOUT = 90.0
COMMAND_TIMEOUT = 60.0  # seconds a solution's command may run
_UNSCRIPTABLE = re.compile(r"<[^>]+>|\bkubectl\b[^|;&]*\s(edit|exec\s+-it|port-forward|logs\s+-f)\b|\{\{")


@dataclass
class Observation:
    scenario: str
    status: str  # observed | unobservable (the cluster lacks what it needs) | ungraded (no state task) | failed
    detail: str = ""
    states: dict = field(default_factory=dict)  # name -> captured state
    observed: dict = field(default_factory=dict)  # name -> {task: passed}
    derived: dict = field(default_factory=dict)  # name -> {task: passed}
    solution: str = ""  # what made the solved state: "solution N: TITLE", or "revert"
    seconds: float = 0.0

    @property
    def differences(self) -> list[str]:
        out = []
        for state in STATES:
            for task, passed in sorted((self.derived.get(state) or {}).items()):
                seen = (self.observed.get(state) or {}).get(task)
                if seen is not None and seen != passed:
                    out.append(f"{state}/{task}: derived {'passes' if passed else 'fails'}, observed "
                               f"{'passes' if seen else 'fails'}")
        return out

    @property
    def agree(self) -> bool:
        return self.status == "observed" and not self.differences

    def report(self) -> dict:
        return {"scenario": self.scenario, "status": self.status, "detail": self.detail, "solution": self.solution,
                "observed": self.observed, "derived": self.derived, "differences": self.differences,
                "agree": self.agree, "seconds": round(self.seconds, 1)}


def observe_scenario(scenario, bundle_dir: Path, kubeconfig: str, *, cluster_dir: Path | None = None,
                     kubectl: str = "kubectl", work: Path | None = None, ready_timeout: float = 60.0,
                     progress: TextIO | None = sys.stderr, restore_stages: bool = True) -> Observation:
    """Observe a checked scenario whose compiled bundle is `bundle_dir` on the cluster of `kubeconfig`.

    `cluster_dir`: the folder of `itbench cluster up` whose kwok gets the scenario's stages (None: kwok is
    not ours to configure; the pods then become Ready whatever the fault). `kubectl`: the client the
    solution's commands run with. `restore_stages`: give kwok back its default stages at the end (a caller
    that observes another scenario next, which restages anyway, passes False and restores after the last)."""
    from ..analysis.states import derive
    from ..backends.evaluator import evaluator_spec
    from .local.plane import restage
    from .local.stages import scenario_stages
    from .runner import Run, RunFailure, RunOptions, Timeline

    started = time.monotonic()
    obs = Observation(scenario.name, "failed")
    work = Path(work or tempfile.mkdtemp(prefix="itbench-observe-"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        bundle = load_bundle(bundle_dir)
    except BundleError as exc:  # a bundle `itbench run` cannot run (a Rego or Ansible CISO task)
        obs.status, obs.detail, obs.seconds = "unobservable", str(exc), time.monotonic() - started
        return obs
    tasks = [t for t in (bundle.requires.get("tasks") or []) if t in STATE_TASKS]
    spec = evaluator_spec(scenario)
    stages = scenario_stages(scenario, spec)
    derived = derive(scenario)
    for name, state in derived.items():
        path = work / f"derived-{name}.json"
        path.write_text(json.dumps(state, sort_keys=True))
        obs.derived[name] = _grade(bundle_dir, path, tasks)

    run = Run(bundle, RunOptions(kubeconfig=kubeconfig, agent="", results=work / "run", ready_timeout=ready_timeout,
                                 request_timeout=30.0), progress=progress)
    run.folder.mkdir(parents=True, exist_ok=True)
    run.log = Timeline(run.folder / "timeline.jsonl", f"{scenario.name} observe", progress)
    say = (lambda m: run.log("observe", "note", message=m))
    configured = False
    try:
        from .client import Cluster

        run.cluster = Cluster(kubeconfig, None, 30.0)
        missing, skipped = _served(run.cluster, bundle)
        if bundle.requires.get("policyReports") and run.cluster.kind_api_version(
                "PolicyReport", prefer=("wgpolicyk8s.io",)) is None:
            missing.append("wgpolicyk8s.io PolicyReport (Kyverno's reports, which the evaluator grades)")
        if not tasks:
            obs.status, obs.detail = "ungraded", "no task of the scenario is graded on the state alone"
            return obs
        if missing:
            obs.status = "unobservable"
            obs.detail = "the control plane does not serve " + ", ".join(missing)
            return obs
        execs = _exec_parts(bundle)
        if execs and cluster_dir is not None:
            # kwok's pods run no container: a command in one (pods/exec) has nowhere to run
            obs.status = "unobservable"
            obs.detail = "kwok's pods run no container, and the scenario runs commands in them (" + \
                ", ".join(execs) + ")"
            return obs
        if skipped:  # the alert rules: no Prometheus evaluates them here (the alerts are the model's)
            bundle = replace(bundle, access=tuple(o for o in bundle.access if _ref_kind(o) not in skipped))
            run.bundle = bundle
            say("not deployed (not served, read by no check of the state): " + ", ".join(sorted(skipped)))
        if cluster_dir is not None:
            restage(cluster_dir, stages, say=say)
            configured = True
        run._phase("deploy", run.deploy)
        _settle(run, say)
        obs.states["healthy"] = _capture(run, derived["healthy"])
        run._phase("inject", run.inject)
        if cluster_dir is not None:
            configured = _config_stages(run, bundle, cluster_dir, stages, say) or configured
        _settle(run, say)
        obs.states["faulty"] = _capture(run, derived["faulty"])
        obs.solution = _solve(scenario, bundle, run, kubectl, kubeconfig, work, say)
        if cluster_dir is not None:
            _config_stages(run, bundle, cluster_dir, stages, say)
        _settle(run, say, rollout=True)
        obs.states["solved"] = _capture(run, derived["solved"])
        obs.status = "observed"
    except (ClusterError, RunFailure, OSError, subprocess.SubprocessError) as exc:
        obs.status, obs.detail = "failed", f"{type(exc).__name__}: {exc}" if not isinstance(exc, (ClusterError, RunFailure)) \
            else str(exc)
    finally:
        try:
            if run.cluster is not None and (run.injected or run.created):
                run._cleanup(verify=False)
        except (ClusterError, RunFailure) as exc:
            obs.detail += f"; cleanup: {exc}"
        finally:
            if configured and restore_stages:
                try:
                    restage(cluster_dir, [], say=say)
                except Exception as exc:  # noqa: BLE001 - reported, the next scenario restages anyway
                    obs.detail += f"; kwok's stages not restored: {exc}"
            if run.cluster is not None:
                run.cluster.close()
            run.log.close()
            obs.seconds = time.monotonic() - started
    for name, state in obs.states.items():
        path = work / f"observed-{name}.json"
        path.write_text(json.dumps(state, sort_keys=True))
        obs.observed[name] = _grade(bundle_dir, path, tasks)
    return obs


def _served(cluster, bundle) -> tuple[list[str], set[str]]:
    """The kinds the scenario needs that the cluster does not serve (deploy, inject, revert: it cannot be
    observed), and those of the other manifests (the alert rules) that it can do without."""
    needed = {_ref_kind(o) for o in (*bundle.topology, *bundle.inject_apply, *bundle.inject_delete, *bundle.revert_apply)}
    others = {_ref_kind(o) for o in bundle.access} - needed
    absent = {k for k in needed | others if cluster.resource(*k.split(" ", 1)) is None}
    return sorted(absent & needed), absent & others


def _exec_parts(bundle) -> list[str]:
    """What of the bundle runs commands inside the pods: its injection, its revert, the evaluator's probes."""
    parts = (("inject/exec.json", bundle.inject_exec), ("revert/exec.json", bundle.revert_exec),
             ("the evaluator's probes", bundle.probes))
    return [name for name, steps in parts if steps]


def _ref_kind(obj: dict) -> str:
    return f"{obj.get('apiVersion')} {obj.get('kind')}"


def _capture(run, derived: dict) -> dict:
    """The state as the evaluator reads it; the alerts are the derived state's (no Prometheus here)."""
    bundle = replace(run.bundle, requires={**run.bundle.requires, "alerts": False})
    state = capture(run.cluster, bundle, None)
    if run.bundle.requires.get("alerts"):
        state["alerts"] = derived.get("alerts") or {"status": "success", "data": {"alerts": []}}
    return state


def _pod_view(run) -> str:
    """The workloads' and pods' status as a settle compares it: what changes while the cluster moves."""
    seen = []
    for namespace in sorted({r.namespace for r in run.bundle.workloads if r.namespace}):
        for api, kind in (("apps/v1", "Deployment"), ("apps/v1", "StatefulSet"), ("v1", "Pod")):
            for obj in run.cluster.list(api, kind, namespace)[0]:
                status = dict(obj.get("status") or {})
                for key in ("containerStatuses", "initContainerStatuses"):  # a crash loop counts its restarts
                    status[key] = [{k: v for k, v in c.items() if k not in ("restartCount", "lastState")}
                                   for c in status.get(key) or []]
                seen.append((kind, namespace, obj["metadata"]["name"], (obj.get("spec") or {}).get("replicas"),
                             json.dumps(_timeless(status), sort_keys=True)))
    return json.dumps(sorted(seen), indent=0)


def _timeless(value):
    """`value` without its timestamps (a condition's lastUpdateTime moves while nothing else does)."""
    if isinstance(value, dict):
        return {k: _timeless(v) for k, v in value.items() if not k.endswith(("Time", "At"))}
    if isinstance(value, list):
        return [_timeless(v) for v in value]
    return value


def _around(before: str, after: str) -> str:
    """Where two texts part, with some context: `...before... -> ...after...`."""
    at = next((i for i, (x, y) in enumerate(zip(before, after)) if x != y), min(len(before), len(after)))
    return f"{before[:60]}... at {at}: {before[max(0, at - 80):at + 80]!r} -> {after[max(0, at - 80):at + 80]!r}"


def _rolling(run) -> list[str]:
    """The workloads of the bundle whose rollout has not finished (`workload_ready`, as `kubectl rollout
    status` judges it)."""
    from ..runtime.state import workload_ready

    out = []
    for ref in run.bundle.workloads:
        obj = run.cluster.get(ref)
        if obj is not None and not workload_ready(obj, zero_ok=True):
            out.append(f"{ref.namespace}/{ref.kind}/{ref.name}")
    return out


def _settle(run, say: Callable[[str], None], rollout: bool = False) -> None:
    """Wait until the workloads and pods stop changing (SETTLE_QUIET seconds), at least SETTLE_MIN and at
    most SETTLE_MAX seconds; with `rollout` (after the solution), also until every workload's rollout has
    finished, at most SETTLE_ROLLOUT seconds."""
    started = time.monotonic()
    last, since, changed = None, started, ""
    while True:
        time.sleep(0.5)
        now = time.monotonic()
        view = _pod_view(run)
        if view != last:
            if last is not None:  # what moved, for the note when it never stops
                changed = next((_around(a, b) for a, b in zip(last.splitlines(), view.splitlines()) if a != b), "")
            last, since = view, now
        quiet = now - started >= SETTLE_MIN and now - since >= SETTLE_QUIET
        pending = _rolling(run) if rollout and quiet else []
        if quiet and not pending:
            return
        if pending and now - started >= SETTLE_ROLLOUT:
            say(f"rollouts not finished after {SETTLE_ROLLOUT:g} s: captured as they are ({', '.join(pending[:3])})")
            return
        if not quiet and now - started >= max(SETTLE_MAX, SETTLE_ROLLOUT if rollout else 0):
            say(f"still changing after {now - started:.0f} s: captured as it is (last change: {changed})")
            return


def _config_stages(run, bundle, cluster_dir: Path, stages: list[dict], say) -> bool:
    """kwok cannot see whether a ConfigMap or Secret exists: the ConfigMaps and Secrets of the deployed
    objects that are gone now make new pods that need them wait (stages.config_stages)."""
    from .local.plane import restage
    from .local.stages import config_stages

    missing = []
    for obj in (*bundle.topology, *bundle.inject_delete):
        if obj.get("kind") in ("ConfigMap", "Secret"):
            ref = Ref.of(obj)
            if run.cluster.get(ref) is None and (ref.kind, ref.namespace, ref.name) not in missing:
                missing.append((ref.kind, ref.namespace, ref.name))
    if not missing and getattr(run, "_config_missing", None) in (None, []):
        return False
    run._config_missing = missing
    restage(cluster_dir, stages + config_stages(missing), say=say)
    return True


def runnable_solution(solutions: list[dict]) -> tuple[int, dict] | None:
    """The first of `solutions` (scenario.json's) whose every step is a command a script can run (no
    `kubectl edit`, no `<placeholder>`), with its index; None when there is none."""
    for index, solution in enumerate(solutions):
        commands = [s.get("command") for s in solution.get("steps") or []]
        commands = [c for c in commands if not (isinstance(c, str) and reads_only(c))]
        if commands and all(isinstance(c, str) and c.strip() and not _UNSCRIPTABLE.search(c) for c in commands):
            return index, solution
    return None


READ_VERBS = frozenset({"get", "describe", "logs", "top", "explain", "events", "api-resources", "api-versions",
                        "version", "cluster-info", "auth", "diff"})


def reads_only(command: str) -> bool:
    """Whether a solution's step only looks (`kubectl get`, `describe`, `logs`...): it changes nothing, and
    what it shows a kwok pod may not have (no container writes logs here)."""
    try:
        words = shlex.split(command)
    except ValueError:
        return False
    if not words or Path(words[0]).name != "kubectl" or any(w in ("|", ";", "&&", "||") for w in words):
        return False
    rest, skip = words[1:], False
    for word in rest:  # the first word that is neither a flag nor a flag's value is the verb
        if skip:
            skip = False
            continue
        if word.startswith("-"):
            skip = "=" not in word and word in ("-n", "--namespace", "--context", "--kubeconfig", "-l", "--selector")
            continue
        return word in READ_VERBS
    return False


def _solve(scenario, bundle, run, kubectl: str, kubeconfig: str, work: Path, say) -> str:
    data = json.loads((bundle.path / "scenario.json").read_text(encoding="utf-8"))
    found = runnable_solution(list(data.get("solutions") or []))
    if found is None:
        say("no solution a script can run: the bundle's revert stands in")
        run._phase("revert", run.revert)
        return "revert"
    index, solution = found
    env = {**os.environ, "KUBECONFIG": kubeconfig}
    if os.sep in kubectl:  # the control plane's kubectl first on the PATH
        env["PATH"] = str(Path(kubectl).parent) + os.pathsep + env.get("PATH", "")
    for step in solution["steps"]:
        command = step["command"]
        if reads_only(command):
            run.log("solve", "skip", step=f"{command} (only looks)")
            continue
        # in the bundle's folder: a step may name its files (`kubectl apply -f manifests/topology.yaml`)
        done = subprocess.run(["/bin/sh", "-c", command], env=env, cwd=bundle.path, capture_output=True, text=True,
                              timeout=COMMAND_TIMEOUT, stdin=subprocess.DEVNULL)
        run.log("solve", "step", step=f"{command} -> exit {done.returncode}",
                stdout=done.stdout[-2000:], stderr=done.stderr[-2000:])
        if done.returncode != 0:
            raise ClusterError(f"solution {index + 1} ({solution.get('title', '')}): `{command}` exited "
                               f"{done.returncode}: {(done.stderr or done.stdout).strip()[:300]}")
    # the injection is undone by the solution: the cleanup deletes what it created and what was deployed
    return f"solution {index + 1}: {solution.get('title', '')}".rstrip(": ")


def _grade(bundle_dir: Path, state: Path, tasks: list[str]) -> dict:
    out = {}
    for task in tasks:
        done = subprocess.run([sys.executable, "-S", str(bundle_dir / "evaluator.py"), "--task", task,
                               "--state", str(state)], capture_output=True, text=True, timeout=300)
        try:
            out[task] = bool(json.loads(done.stdout)["passed"])
        except (ValueError, KeyError, TypeError):
            out[task] = None
    return out


def kubectl_path(cluster_dir: Path | None) -> str:
    if cluster_dir is not None and (Path(cluster_dir) / "bin" / "kubectl").exists():
        return str(Path(cluster_dir).absolute() / "bin" / "kubectl")
    return "kubectl"


def shell_quote(args: list[str]) -> str:
    return " ".join(shlex.quote(a) for a in args)
