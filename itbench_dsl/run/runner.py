"""A run of a compiled bundle against a cluster, phase by phase (itbench_dsl/run/lifecycle.py says which).

Results go to RESULTS/<scenario>/<run-id>/: `timeline.jsonl` (every step, with timestamps; the first
file a run writes), `state.json`, `verdict.json`, `agent.stdout`, `agent.stderr`, `timings.json`,
`run.json` (status), `agent-reach.json` (what the agent could reach: its folder, files, environment, kubeconfig
user and access), `answers/` and `answers.json` (the answer files' bytes as the agent's budget ended: what is
graded; agentfiles.py) and `workspace/` (what the agent was given and wrote, copied for the record from the fresh
folder outside the bundle and the results it ran in; its kubeconfig is removed once the agent is done). `itbench score RESULTS`
reads the verdicts.

The revert, the health check and the undeploy run whatever happened: on success, a failed step, a
timeout, SIGINT and SIGTERM (signals that arrive meanwhile are recorded, not obeyed: the revert and the
deletes still run, the waits stop), and whatever became of the progress stream (a closed pipe). Running again with the same `--run-id` resumes: an interrupted
cleanup is finished first; a run whose state was captured is only graded; any other starts a new
attempt (the timeline keeps every attempt).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from .. import access
from . import agentfiles, lifecycle
from .lifecycle import ANSWER_TASKS, SUBMISSION, Bundle, Ref, evaluator_inputs
from . import ClusterError, prometheus
from .client import Cluster, ready
from .snapshot import capture, capture_reports, observe

ANSWER_POLL = 0.25  # seconds between looks for the detection answer while the agent runs
MAX_ANSWER_BYTES = agentfiles.MAX_ANSWER_BYTES  # of an answer file: what a look reads, what the snapshot keeps
ANSWERS, ANSWERS_MANIFEST = "answers", "answers.json"  # the answer files as the agent's budget ended, and what of them
RUN_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$")
MIN_TOKEN_SECONDS = 600  # the API server's minimum for a TokenRequest
POLICY_WAIT = 30.0  # seconds for the API server to put the agent's admission policy in force (it loads it in ~1 s)


class RunFailure(Exception):
    """A step that failed: the run stops, cleans up and reports it (no verdict)."""


class Interrupted(BaseException):
    """SIGTERM (SIGINT is KeyboardInterrupt): raised in the main thread by the handler."""

    def __init__(self, signum: int):
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


DEFAULT_ALERT_WAIT = 900.0  # `itbench run`'s alert wait when the expected alerts' rules need no longer


@dataclass
class RunOptions:
    kubeconfig: str
    agent: str
    results: Path
    context: str | None = None
    agent_timeout: float = 1800.0
    prometheus: str | None = None
    keep: bool = False
    run_id: str | None = None
    ready_timeout: float = 600.0
    alert_timeout: float | None = None  # None: 15 min, or what the expected alerts' rules need when longer
    alert_poll: float = 10.0
    request_timeout: float = 30.0
    kill_grace: float = 5.0
    exec_timeout: float = 120.0  # a command run in a pod (an exec step, a probe)
    report_timeout: float = 300.0  # CISO: how long Kyverno may take to report on every object after the agent
    # how long the fix must hold before the state is captured: a container that restarts meanwhile (its
    # lastState after the state's `fixed_at`) fails the mitigation (docs/evaluator.md, "Stable since the fix")
    stable_for: float = 0.0
    # variables of the caller's environment the agent also gets (its model's API key, say); it gets no other
    agent_env: tuple[str, ...] = ()
    # how long after the agent the mitigation may take to hold (the state is captured and graded every
    # MITIGATION_POLL seconds until its checks pass): None, the scenario's declared `within`; 0, capture at once
    mitigation_window: float | None = None


# the variables of the caller's environment every agent gets: what a process needs to run, nothing that names
# the bundle, the results or the caller's credentials (HOME is the agent's own folder, so `~/.kube/config` is not
# the caller's)
AGENT_BASE_ENV = ("PATH", "LANG", "LC_ALL", "LC_CTYPE", "TERM", "TZ")


@dataclass
class Outcome:
    scenario: str
    run_id: str
    folder: Path
    status: str  # graded | failed | interrupted | complete (already graded before)
    verdict: dict | None = None
    error: str | None = None
    signum: int | None = None


OBSERVATIONS, MITIGATION_POLL = lifecycle.OBSERVATIONS, lifecycle.MITIGATION_POLL


def new_run_id() -> str:
    return time.strftime("%Y%m%dT%H%M%SZ", time.gmtime()) + "-" + secrets.token_hex(3)


def _now() -> str:
    now = time.time()  # one reading: the seconds and the milliseconds of one moment
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(now)) + f".{int(now * 1000) % 1000:03d}Z"


class Timeline:
    """timeline.jsonl: one JSON object per line, appended and flushed as each step happens; progress on stderr."""

    def __init__(self, path: Path, label: str, progress: TextIO | None):
        self.path, self.label, self.progress = path, label, progress
        self.start = time.monotonic()
        self.handle = open(path, "a", encoding="utf-8")

    def close(self) -> None:
        self.handle.close()

    def __call__(self, phase: str, event: str, **detail) -> None:
        record = {"t": _now(), "elapsed": round(time.monotonic() - self.start, 3), "phase": phase, "event": event,
                  **detail}
        self.handle.write(json.dumps(record, sort_keys=True) + "\n")
        self.handle.flush()
        if self.progress is not None:
            what = detail.get("step") or detail.get("message") or ""
            mark = {"start": "▶", "done": "✓", "failed": "✗", "step": " ", "skip": "-", "note": "!"}.get(event, " ")
            line = f"[{record['elapsed']:8.2f}s] {self.label} {mark} {phase:<9} {what}".rstrip()
            try:
                print(line, file=self.progress, flush=True)
            except (OSError, ValueError):  # a closed pipe (`| tee` gone) or file: the timeline file holds it all
                self.progress = None
                self.handle.write(json.dumps({"t": _now(), "elapsed": record["elapsed"], "phase": "run",
                                              "event": "note", "message": "the progress stream is closed: "
                                              "progress goes to timeline.jsonl only"}, sort_keys=True) + "\n")
                self.handle.flush()


def read_timeline(path: Path) -> list[dict]:
    if not path.is_file():
        return []
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            out.append(json.loads(line))
        except ValueError:
            continue  # a line cut by a crash
    return out


@dataclass
class Prior:
    """What the timeline of earlier attempts says is left to do."""

    attempts: int = 0
    created: list[Ref] = field(default_factory=list)  # created by a deploy and not yet undeployed
    injected: bool = False  # an inject started and its revert did not finish
    captured: bool = False  # the last attempt captured its state
    injected_at: str | None = None  # when the last attempt injected the fault (RFC 3339): what detect times against
    answered_at: str | None = None  # when the last attempt saw the detection answer appear (RFC 3339)
    policies_before: list | None = None  # CISO: the Kyverno policies there before the agent (the others are its)
    marks: dict | None = None  # the cluster-wide objects the agent may write, as the deploy left them (`_marks`)
    graded: bool = False
    cleaned: bool = True

    @classmethod
    def of(cls, events: list[dict]) -> "Prior":
        prior = cls()
        for e in events:
            if e["phase"] == "run" and e["event"] == "start":
                prior.attempts += 1
                prior.captured = prior.graded = False
                prior.answered_at = None  # an attempt's answer is timed by that attempt alone
            elif e.get("action") == "apply" and e["phase"] == "deploy" and e.get("created"):
                ref = Ref(**e["ref"])
                if ref not in prior.created:
                    prior.created.append(ref)
            elif e.get("action") == "delete" and e["phase"] == "undeploy" and e.get("ref"):
                ref = Ref(**e["ref"])
                if ref in prior.created:
                    prior.created.remove(ref)
            elif e["phase"] == "undeploy" and e["event"] == "done":
                prior.created = []
            elif e["phase"] == "inject" and e["event"] == "start":
                prior.injected = True
            elif e["phase"] == "inject" and e.get("injected_at"):
                prior.injected_at = e["injected_at"]
            elif e["phase"] == "agent" and e.get("answered_at"):
                prior.answered_at = e["answered_at"]
            elif e["phase"] == "handover" and e.get("action") == "policies":
                prior.policies_before = [Ref(**r) for r in e.get("before") or []]
            elif e["phase"] == "revert" and e.get("action") == "marks-restored":
                prior.marks = None
            elif e["phase"] == "revert" and e.get("action") == "policies-removed":
                prior.policies_before = None
            elif e["phase"] == "deploy" and e.get("action") == "marks":
                prior.marks = e["marks"]
            elif e["phase"] == "revert" and e["event"] == "done":
                prior.injected = False
            elif e["phase"] == "snapshot" and e["event"] == "done":
                prior.captured = True
            elif e["phase"] == "evaluate" and e["event"] == "done":
                prior.graded = True
        prior.cleaned = not prior.injected and not prior.created
        return prior


def _ref_json(ref: Ref) -> dict:
    return {"api_version": ref.api_version, "kind": ref.kind, "namespace": ref.namespace, "name": ref.name}


class Run:
    def __init__(self, bundle: Bundle, options: RunOptions, progress: TextIO | None = sys.stderr):
        self.bundle, self.options, self.progress = bundle, options, progress
        self.run_id = options.run_id or new_run_id()
        if not RUN_ID.match(self.run_id):
            raise ClusterError(f"--run-id {self.run_id!r}: letters, digits, '.', '_' and '-' only")
        self.folder = Path(options.results) / bundle.scenario / self.run_id
        self.cluster: Cluster | None = None
        self.timings: dict[str, float] = {}
        self.waited = 0.0  # seconds spent waiting on the cluster, Prometheus or the agent
        self.agent_info: dict = {}
        self._agent_folder: Path | None = None  # the fresh folder the agent works in (agent_folder)
        self.deferred: list[int] = []
        self.created: list[Ref] = []
        self.injected = False
        self.injected_at: str | None = None
        self.answered_at: str | None = None  # when the detection answer appeared in the workspace (RFC 3339)
        self._answer_seen: tuple[str, str] | None = None  # (digest, first seen) of the detection answer's content
        self.policies_before: list[Ref] | None = None  # CISO: what the agent's policies are told apart from
        self.cordoned_before: dict[str, bool] = {}  # per node a fault cordons, whether it was cordoned before
        self.marks: dict | None = None  # the cluster-wide objects the agent may write, before the fault (`_marks`)
        self.fixed_at: str | None = None  # when the agent's work ended: the state's `fixed_at`
        self.incident: dict | None = None  # the workloads and pods as the agent found them: the state's `incident`
        self.alerts_baseline: dict | None = None  # Prometheus's alerts before the injection
        self._agent_ended: float | None = None  # time.monotonic() when the agent's work ended

    # -- the whole run --------------------------------------------------------------------------------

    def execute(self) -> Outcome:
        self.folder.mkdir(parents=True, exist_ok=True)
        prior = Prior.of(read_timeline(self.folder / "timeline.jsonl"))
        self.log = Timeline(self.folder / "timeline.jsonl", f"{self.bundle.scenario}/{self.run_id}", self.progress)
        if prior.graded and prior.cleaned and (self.folder / "verdict.json").is_file():
            self.log("run", "note", message="already graded: nothing to do")
            self.log.close()
            return Outcome(self.bundle.scenario, self.run_id, self.folder, "complete",
                           json.loads((self.folder / "verdict.json").read_text(encoding="utf-8")))
        previous = {s: signal.getsignal(s) for s in (signal.SIGTERM,)}
        signal.signal(signal.SIGTERM, _raise_interrupted)
        outcome = Outcome(self.bundle.scenario, self.run_id, self.folder, "failed")
        started = time.monotonic()
        try:
            # what is run, first: `itbench score` counts a run that dies before run.json by it
            self.log("run", "start", attempt=prior.attempts + 1, bundle=str(self.bundle.path),
                     scenario=self.bundle.scenario, tasks=list(self.bundle.requires.get("tasks") or []),
                     message=f"attempt {prior.attempts + 1}")
            self.created, self.injected, self.injected_at = list(prior.created), prior.injected, prior.injected_at
            self.answered_at = prior.answered_at
            self.policies_before = prior.policies_before
            self.marks = prior.marks
            if not prior.cleaned:
                self.log("run", "note", message="resuming: finishing the cleanup of the previous attempt")
                with self._signals_deferred():
                    self._cleanup(verify=False)
            if prior.captured and (self.folder / "state.json").is_file():
                self.log("run", "note", message="resuming: the state was captured; grading it")
                outcome.verdict = self._phase("evaluate", self.evaluate)
                outcome.status = "graded"
            else:
                outcome = self._attempt(outcome)
        except (KeyboardInterrupt, Interrupted) as exc:
            outcome.status, outcome.error = "interrupted", "interrupted"
            outcome.signum = getattr(exc, "signum", signal.SIGINT)
        except (ClusterError, RunFailure) as exc:
            outcome.status, outcome.error = "failed", str(exc)
        finally:
            if self.cluster is not None:
                self.cluster.close()
            if getattr(self, "_agent_folder", None) is not None:  # a handover the agent never got to
                with contextlib.suppress(OSError):
                    (self._agent_folder / "kubeconfig.yaml").unlink()
                self._keep_agent_folder()
            for sig, handler in previous.items():
                signal.signal(sig, handler)
            self.timings["total"] = round(time.monotonic() - started, 3)
            self.timings["waiting"] = round(self.waited, 3)
            self.timings["overhead"] = round(self.timings["total"] - self.waited, 3)
            self._write("timings.json", self.timings)
            self._write("run.json", {"scenario": self.bundle.scenario, "run_id": self.run_id, "status": outcome.status,
                                     "error": outcome.error, "bundle": str(self.bundle.path), "agent": self.agent_info,
                                     "tasks": list(self.bundle.requires.get("tasks") or []),
                                     "passed": (outcome.verdict or {}).get("passed")})
            self.log("run", "done" if outcome.status == "graded" else "failed", status=outcome.status,
                     message=outcome.status + (f": {outcome.error}" if outcome.error else ""))
            self.log.close()
        return outcome

    def _attempt(self, outcome: Outcome) -> Outcome:
        failure: BaseException | None = None
        try:
            self.cluster = Cluster(self.options.kubeconfig, self.options.context, self.options.request_timeout)
            for name, fn in (("preflight", self.preflight), ("deploy", self.deploy), ("baseline", self.baseline),
                             ("inject", self.inject), ("alerts", self.await_alerts), ("handover", self.handover),
                             ("agent", self.run_agent), ("snapshot", self.snapshot),
                             ("evaluate", self.evaluate)):
                result = self._phase(name, fn)
                if name == "evaluate":
                    outcome.verdict, outcome.status = result, "graded"
        except BaseException as exc:  # noqa: BLE001 - every failure and signal goes through the cleanup
            failure = exc
        with self._signals_deferred():
            try:
                self._cleanup(verify=True)
            except ClusterError as exc:
                if failure is None:
                    failure = RunFailure(f"cleanup: {exc}")
        if failure is not None:
            raise failure
        return outcome

    def _phase(self, name: str, fn):
        self.log(name, "start", message=lifecycle.PHASE[name].title)
        started = time.monotonic()
        try:
            result = fn()
        except BaseException as exc:
            self.log(name, "failed", message=f"{type(exc).__name__}: {exc}" if not isinstance(exc, (ClusterError, RunFailure))
                     else str(exc))
            raise
        finally:
            self.timings[name] = round(self.timings.get(name, 0.0) + time.monotonic() - started, 3)
        self.log(name, "done")
        return result

    @contextlib.contextmanager
    def _signals_deferred(self):
        """During the cleanup, SIGINT and SIGTERM are recorded, not obeyed: the revert and the deletes still run,
        but the waits (verify's readiness, undeploy's deletion) stop at once (`_cut`)."""
        def note(signum, frame):
            self.deferred.append(signum)
            self.log("run", "note", message=f"{signal.Signals(signum).name} received during the cleanup: "
                                            "finishing the revert and the deletes, without waiting")
        previous = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
        for s in previous:
            signal.signal(s, note)
        try:
            yield
        finally:
            for s, handler in previous.items():
                signal.signal(s, handler)

    def _cut(self) -> bool:
        """Whether a signal arrived during the cleanup: its waits then stop."""
        return bool(self.deferred)

    def _cleanup(self, verify: bool) -> None:
        todo = (("revert", self.revert, self.injected),
                ("verify", self.verify, verify and (bool(self.created) or self.options.keep) and self.cluster is not None),
                ("undeploy", self.undeploy, not self.options.keep and bool(self.created)))
        if not any(wanted for _, _, wanted in todo):
            return
        if self.cluster is None:
            self.cluster = Cluster(self.options.kubeconfig, self.options.context, self.options.request_timeout)
        errors = []
        for name, fn, wanted in todo:
            if not wanted:
                self.log(name, "skip", message="nothing to do")
                continue
            try:
                self._phase(name, fn)
            except (ClusterError, RunFailure) as exc:
                errors.append(f"{name}: {exc}")
        if errors:
            raise ClusterError("; ".join(errors))

    # -- phases ---------------------------------------------------------------------------------------

    def preflight(self) -> None:
        c, b = self.cluster, self.bundle
        version = c.version()
        self.log("preflight", "step", action="version", step=f"API {version.get('gitVersion', '?')}")
        missing: list[str] = []
        for prereq in lifecycle.requirements(b):
            if prereq.what == "kind":
                try:
                    served = c.resource(prereq.api_version, prereq.kind)
                except ClusterError as exc:  # discovery failed (a 503 of an aggregated API): not known, not absent
                    missing.append(f"{prereq.name} cannot be checked: {exc}")
                    continue
                if served is None:
                    missing.append(f"{prereq.name} is not served" + (f" (install {prereq.addon}: {prereq.detail})"
                                                                     if prereq.addon else ""))
            elif prereq.what == "controller":
                try:
                    found, _ = c.list("apps/v1", "Deployment", None, prereq.selector)
                except ClusterError as exc:
                    missing.append(f"{prereq.name}'s controller cannot be checked: {exc}")
                    continue
                if not any(ready(d) for d in found):
                    missing.append(f"{prereq.name}'s controller is not running (no ready Deployment labelled "
                                   f"{prereq.selector}; install: {prereq.detail})")
            elif not self.options.prometheus:
                missing.append("Prometheus: the scenario's alerts are read from it: give --prometheus URL")
            else:
                try:
                    prometheus.alerts(self.options.prometheus, self.options.request_timeout)
                except ClusterError as exc:
                    missing.append(f"Prometheus: {exc}")
            self.log("preflight", "step", action=prereq.what, step=f"{prereq.what} {prereq.name}")
        denied = [f"may not {verb} {resource}{'.' + group if group else ''}"
                  + (f" in {namespace}" if namespace else " (cluster-wide)")
                  for verb, group, resource, namespace in lifecycle.access_checks(b)
                  if not c.may(verb, group, resource, namespace)]
        self.log("preflight", "step", action="access-review", step=f"{len(lifecycle.access_checks(b))} access reviews")
        missing += denied
        missing += self._rules_unselected()
        if missing:
            raise RunFailure("the cluster lacks what the scenario needs:\n  - " + "\n  - ".join(missing))

    def _alert_rules(self) -> list[dict]:
        return [o for o in self.bundle.access if o.get("kind") == "PrometheusRule"]

    def _rules_unselected(self) -> list[str]:
        """The bundle's PrometheusRules that no Prometheus the operator runs selects (its `ruleSelector` and
        `ruleNamespaceSelector`, as the operator reads them: a nil rule selector selects no rule, a nil namespace
        selector the Prometheus's own namespace alone): kube-prometheus-stack's defaults select only rules
        labelled `release: <its release>`, and the expected alerts would never fire. Nothing when the cluster
        runs no Prometheus of the operator (the rules' loading is checked after the deploy)."""
        from ..runtime.state import selector_matches

        rules = self._alert_rules()
        try:
            if not rules or self.cluster.resource("monitoring.coreos.com/v1", "Prometheus") is None:
                return []
            found, _ = self.cluster.list("monitoring.coreos.com/v1", "Prometheus", None)
        except ClusterError:
            return []
        if not found:
            return []
        namespaces = {(o.get("metadata") or {}).get("name"): (o.get("metadata") or {}).get("labels") or {}
                      for o in self.bundle.topology if o.get("kind") == "Namespace"}

        def selects(prom: dict, rule: dict) -> bool:
            spec, meta = prom.get("spec") or {}, rule.get("metadata") or {}
            namespace = meta.get("namespace")
            if spec.get("ruleSelector") is None or not selector_matches(spec["ruleSelector"], meta.get("labels") or {}):
                return False
            chosen = spec.get("ruleNamespaceSelector")
            if chosen is None:
                return namespace == (prom.get("metadata") or {}).get("namespace")
            live = self.cluster.get(Ref("v1", "Namespace", None, namespace))
            labels = dict(namespaces.get(namespace) or {}, **((live or {}).get("metadata") or {}).get("labels") or {})
            labels.setdefault("kubernetes.io/metadata.name", namespace)
            return selector_matches(chosen, labels)

        return [f"Prometheus: no Prometheus of the operator selects PrometheusRule {r['metadata'].get('namespace')}/"
                f"{r['metadata']['name']} (labels {r['metadata'].get('labels') or {}}): its expected alerts would "
                f"never fire; kube-prometheus-stack selects only rules labelled `release: <release>` unless installed "
                f"with --set prometheus.prometheusSpec.ruleSelectorNilUsesHelmValues=false (docs/running.md)"
                for r in rules if not any(selects(p, r) for p in found)]

    def _await_rules(self) -> None:
        """After the deploy: until Prometheus has loaded every rule group of the bundle's PrometheusRules
        (`/api/v1/rules`), at most `--ready-timeout`; otherwise the run stops, naming the groups missing."""
        wanted = {g.get("name") for r in self._alert_rules() for g in (r.get("spec") or {}).get("groups") or []}
        if not wanted or not self.options.prometheus:
            return
        deadline = time.monotonic() + self.options.ready_timeout
        while True:
            loaded = prometheus.rule_groups(self.options.prometheus, self.options.request_timeout)
            left = sorted(wanted - loaded)
            if not left:
                self.log("deploy", "step", action="rules", step=f"Prometheus loaded {len(wanted)} rule group(s)")
                return
            if time.monotonic() >= deadline or self._cut():
                raise RunFailure(f"Prometheus has not loaded the bundle's alert rules after "
                                 f"{self.options.ready_timeout:g} s: {', '.join(left)} (does its ruleSelector select "
                                 f"them? docs/running.md)")
            time.sleep(min(self.options.alert_poll, max(0.0, deadline - time.monotonic())))

    def deploy(self) -> None:
        fresh: set[str] = set()  # namespaces this run created: what goes into them is new too
        for obj in (*self.bundle.topology, *self.bundle.access):
            ref = Ref.of(obj)
            existed = (ref.namespace not in fresh if ref.namespace else True) and self.cluster.get(ref) is not None
            if ref.kind == "Namespace" and not existed:
                fresh.add(ref.name)
            if not existed and ref not in self.created:
                self.created.append(ref)
            self.cluster.apply(obj)
            self.log("deploy", "step", action="apply", ref=_ref_json(ref), created=not existed, step=f"apply {ref}")
        self._wait_ready("deploy", self.bundle.workloads)
        self._await_rules()
        # before the fault and the agent: what the revert puts back of what the agent may write cluster-wide
        self.marks = self._marks()
        self.log("deploy", "step", action="marks", marks=self.marks,
                 step=f"recorded {len(self.marks['nodes'] or ())} nodes and "
                      f"{len(self.marks['namespaces'] or ())} namespaces the agent may change")

    def _wait_ready(self, phase: str, refs: list[Ref]) -> None:
        if not refs:
            return
        started = time.monotonic()
        left = self.cluster.wait(refs, lambda o: o is not None and ready(o), self.options.ready_timeout,
                                 lambda r: self.log(phase, "step", action="ready", step=f"ready {r}"), stop=self._cut)
        self.waited += time.monotonic() - started
        if left and self._cut():
            raise RunFailure("interrupted while waiting: not known to be ready: " + ", ".join(map(str, left)))
        if left:
            raise RunFailure(f"not ready after {self.options.ready_timeout:g} s: " + ", ".join(map(str, left)))

    def baseline(self) -> None:
        if not self.options.prometheus:
            self.log("baseline", "skip", message="no Prometheus given")
            return
        response = prometheus.alerts(self.options.prometheus, self.options.request_timeout)
        firing = prometheus.firing(response)
        self.alerts_baseline = response
        self._write("alerts-baseline.json", response)
        self.log("baseline", "step", action="alerts", firing=firing, step=f"firing before: {', '.join(firing) or 'none'}")
        already = sorted(set(firing) & set(self.bundle.alerts))
        if already:
            self.log("baseline", "note", message=f"expected alerts already firing before the injection: "
                                                 f"{', '.join(already)}")

    def inject(self) -> None:
        self.injected = True
        for waiter in self.bundle.waiters:
            if waiter.when == "before":
                self._waiter(waiter)
        self.injected_at = _now()  # the fault's first change: a detection counts from here
        self.log("inject", "step", action="injected", injected_at=self.injected_at,
                 step=f"injecting the fault at {self.injected_at}")
        for node in self.bundle.cordoned:
            self._cordon("inject", node, True)
        self._recreating("inject", self.bundle.inject_recreate)
        for obj in self.bundle.inject_apply:
            self.cluster.apply(obj)
            self.log("inject", "step", action="apply", ref=_ref_json(Ref.of(obj)), step=f"apply {Ref.of(obj)}")
        for obj in self.bundle.inject_delete:
            gone = not self.cluster.delete(Ref.of(obj))
            self.log("inject", "step", action="delete", ref=_ref_json(Ref.of(obj)),
                     step=f"delete {Ref.of(obj)}" + (" (already gone)" if gone else ""))
        for step in self.bundle.inject_exec:
            self._exec("inject", step)
        for waiter in self.bundle.waiters:
            if waiter.when == "after":
                self._waiter(waiter)

    def _cordon(self, phase: str, node: str, cordon: bool) -> None:
        """Cordon (or uncordon) a node a fault cordons, as `kubectl cordon` does: `spec.unschedulable`. A node the
        cluster lacks fails the injection: the fault would not be the one the scenario describes."""
        ref = lifecycle.node_ref(node)
        obj = self.cluster.get(ref)
        if obj is None:
            if not cordon:  # the injection stopped there: nothing to undo
                return
            raise RunFailure(f"node {node}, which the fault cordons, is not in the cluster: give the fault's `node` "
                             "a worker node the cluster has (`kubectl get nodes`)")
        if cordon:  # a node cordoned before the run stays so after it
            self.cordoned_before[node] = bool((obj.get("spec") or {}).get("unschedulable"))
        self.cluster.patch(ref, {"spec": {"unschedulable": cordon or self.cordoned_before.get(node, False)}})
        action = "cordon" if cordon else "uncordon"
        self.log(phase, "step", action=action, ref=_ref_json(ref), step=f"{action} node {node}")

    def _recreating(self, phase: str, objects) -> None:
        """Delete the objects the phase's apply creates again (a field the API server refuses to change on
        update), and wait until they are gone: an object still finalizing would take the apply as an update."""
        refs = [Ref.of(obj) for obj in objects]
        for ref in refs:
            gone = not self.cluster.delete(ref)
            self.log(phase, "step", action="delete", ref=_ref_json(ref),
                     step=f"delete {ref} to recreate it" + (" (already gone)" if gone else ""))
        if not refs:
            return
        started = time.monotonic()
        left = self.cluster.wait(refs, lambda o: o is None, self.options.ready_timeout, stop=self._cut)
        self.waited += time.monotonic() - started
        if left:
            raise RunFailure("still there after deletion, cannot recreate: " + ", ".join(map(str, left)))

    def _exec(self, phase: str, step: lifecycle.ExecStep) -> None:
        """An exec step (inject/exec.json, revert/exec.json): a non-zero exit fails it."""
        started = time.monotonic()
        try:
            result = self.cluster.exec(step.workload, step.container, step.command, self.options.exec_timeout)
        finally:
            self.waited += time.monotonic() - started
        self.log(phase, "step", action="exec", ref=_ref_json(step.workload), container=step.container,
                 command=list(step.command), exit_code=result["exit_code"], stdout=result["stdout"][:2000],
                 stderr=result["stderr"][:2000], step=f"exec {step.describe()} -> exit {result['exit_code']}")
        if result["exit_code"] != 0:
            raise RunFailure(f"exec in {step.workload} container {step.container} ({step.fault or 'step'}) exited "
                             f"{result['exit_code']}: {(result['stderr'] or result['stdout']).strip()[:300]}")

    def _waiter(self, waiter: lifecycle.Waiter) -> None:
        ref = waiter.target
        if waiter.kind == "restart":
            self.cluster.patch(ref, {"spec": {"template": {"metadata": {"annotations": {
                "kubectl.kubernetes.io/restartedAt": _now()}}}}})
        elif waiter.kind == "scale":
            self.cluster.patch(ref, {"spec": {"replicas": int(waiter.args["replicas"])}})
        elif waiter.kind == "delete_pods":
            obj = self.cluster.get(ref)
            labels = ((obj or {}).get("spec") or {}).get("selector", {}).get("matchLabels") or {}
            if labels:
                selector = ",".join(f"{k}={v}" for k, v in sorted(labels.items()))
                for pod in self.cluster.list("v1", "Pod", ref.namespace, selector)[0]:
                    self.cluster.delete(Ref("v1", "Pod", ref.namespace, pod["metadata"]["name"]))
        elif waiter.kind == "redeploy":  # every Deployment and StatefulSet of the namespace, as `rollout restart`
            namespace = ref.namespace or ref.name
            stamp = {"spec": {"template": {"metadata": {"annotations": {"kubectl.kubernetes.io/restartedAt": _now()}}}}}
            restarted = [Ref("apps/v1", kind, namespace, obj["metadata"]["name"])
                         for kind in ("Deployment", "StatefulSet")
                         for obj in self.cluster.list("apps/v1", kind, namespace)[0]]
            for workload in restarted:
                self.cluster.patch(workload, stamp)
            self._wait_ready("inject", restarted)
        elif waiter.kind == "pause":
            seconds = float(waiter.args.get("seconds", 0))
            self.waited += seconds
            time.sleep(seconds)
        else:
            raise RunFailure(f"waiter {waiter.kind!r}: this version of itbench cannot run it")
        self.log("inject", "step", action="waiter", ref=_ref_json(ref), step=f"{waiter.when}: {waiter.kind} {ref}")

    def await_alerts(self) -> None:
        expected = set(self.bundle.alerts)
        if not expected or not self.options.prometheus:
            self.log("alerts", "skip", message="no alerts to wait for" if not expected else "no Prometheus given")
            return
        baseline = getattr(self, "alerts_baseline", None)
        if baseline is None and (self.folder / "alerts-baseline.json").is_file():  # a resumed attempt's
            baseline = json.loads((self.folder / "alerts-baseline.json").read_text(encoding="utf-8"))
        scopes = {name: where for name, where in self.bundle.alert_scopes}
        scopes.update({name: () for name in expected if name not in scopes})
        started = time.monotonic()
        # never shorter than the expected alerts' rules need to fire (a `for: 15m` is not seen within 15 min)
        wait = (self.options.alert_timeout if self.options.alert_timeout is not None
                else max(DEFAULT_ALERT_WAIT, self.bundle.alert_wait()))
        deadline = started + wait
        while True:
            response = prometheus.alerts(self.options.prometheus, self.options.request_timeout)
            firing = set(prometheus.newly_firing(response, baseline, scopes))
            if expected <= firing:
                break
            if time.monotonic() >= deadline:
                self.waited += time.monotonic() - started
                stale = sorted((expected - firing) & set(prometheus.firing(response)))
                raise RunFailure(f"the expected alerts did not fire within {wait:g} s: "
                                 f"{', '.join(sorted(expected - firing))} not firing"
                                 + (f" in the scenario's namespaces since the injection ({', '.join(stale)} fire as "
                                    "they did before it, or elsewhere)" if stale else ""))
            time.sleep(min(self.options.alert_poll, max(0.0, deadline - time.monotonic())))
        self.waited += time.monotonic() - started
        self.log("alerts", "step", action="await-alerts", firing=sorted(firing),
                 step=f"firing: {', '.join(sorted(expected))}")

    @property
    def workspace(self) -> Path:
        """The run's record of the agent's folder: what it was given (less its kubeconfig) and what it wrote."""
        return self.folder / "workspace"

    def agent_folder(self) -> Path:
        """The folder the agent works in: a fresh one outside the bundle and the results, holding only the prompt
        and its kubeconfig (made by the handover, copied to `workspace` and removed once the agent is done)."""
        if getattr(self, "_agent_folder", None) is None:
            self._agent_folder = Path(tempfile.mkdtemp(prefix="itbench-agent-")).resolve()
        return self._agent_folder

    def agent_environment(self, folder: Path) -> dict[str, str]:
        """The agent's environment: AGENT_BASE_ENV and the variables `--agent-env` names from the caller's, its
        kubeconfig, its folder (also HOME) and its prompt. Nothing names the bundle, its ground truth or the run."""
        env = {k: os.environ[k] for k in (*AGENT_BASE_ENV, *self.options.agent_env) if k in os.environ}
        env.setdefault("PATH", os.defpath)
        env.update(HOME=str(folder), KUBECONFIG=str(folder / "kubeconfig.yaml"), ITBENCH_WORKSPACE=str(folder),
                   ITBENCH_PROMPT=str(folder / "prompt.md"))
        return env

    def handover(self) -> None:
        b = self.bundle
        workspace = self.workspace
        if workspace.exists() or (self.folder / ANSWERS).exists():  # an earlier attempt's: kept aside
            n = 1
            while any((self.folder / f"{name}.attempt-{n}").exists() for name in ("workspace", ANSWERS)):
                n += 1
            for name in ("workspace", ANSWERS):
                if (self.folder / name).exists():
                    (self.folder / name).rename(self.folder / f"{name}.attempt-{n}")
            if (self.folder / ANSWERS_MANIFEST).exists():
                (self.folder / ANSWERS_MANIFEST).rename(self.folder / f"{ANSWERS}.attempt-{n}.json")
        workspace.mkdir(parents=True)
        agent_folder = self.agent_folder()
        for leftover in agent_folder.iterdir():  # an earlier attempt's, in this process
            shutil.rmtree(leftover) if leftover.is_dir() and not leftover.is_symlink() else leftover.unlink()
        if b.service_account is None:
            raise RunFailure(f"{b.path}: the scenario gives the agent no ServiceAccount (scenario.json `agent`)")
        seconds = max(MIN_TOKEN_SECONDS, int(self.options.agent_timeout) + 60)
        token = self.cluster.token(b.service_account, seconds)
        self.log("handover", "step", action="token", ref=_ref_json(b.service_account),
                 step=f"token for {b.service_account} ({seconds} s)")
        import yaml

        config = self.cluster.kubeconfig_for(token, b.service_account.namespace)
        path = agent_folder / "kubeconfig.yaml"
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            yaml.safe_dump(config, handle, sort_keys=False)
        held = self._check_token(path)
        if b.requires.get("policyReports"):  # the policies there now; any other at the end is the agent's
            self.policies_before = self._policies()
            self.log("handover", "step", action="policies", before=[_ref_json(r) for r in self.policies_before],
                     step=f"{len(self.policies_before)} Kyverno policies before the agent")
        prompt = (b.path / "prompt.md").read_text(encoding="utf-8")
        (agent_folder / "prompt.md").write_text(prompt.replace(lifecycle.PROMPT_WORKSPACE, str(agent_folder)),
                                                encoding="utf-8")
        reach = self.agent_reach(agent_folder, config, held)
        (self.folder / "agent-reach.json").write_text(json.dumps(reach, indent=2, sort_keys=True) + "\n",
                                                      encoding="utf-8")
        beyond = {namespace: h["beyond"] for namespace, h in held.items() if h.get("beyond")}
        if beyond:  # a score the agent earned with rights its prompt does not state is no measure of it
            raise RunFailure(f"the agent's token ({reach['service_account']}) may do more than its Roles grant: "
                             + "; ".join(f"in {namespace}: {', '.join(rights)}" for namespace, rights in beyond.items())
                             + " (a binding of the cluster's gives its ServiceAccount, the service accounts or every "
                             "authenticated user more: agent-reach.json `held`)")
        self.log("handover", "step", action="workspace", folder=str(agent_folder), files=reach["files"],
                 environment=reach["environment"], step=f"agent folder {agent_folder}: {', '.join(reach['files'])}")

    def agent_access(self) -> list[tuple[str, str, str, str | None]]:
        """(verb, group, resource, namespace): one of each rule the agent's Roles and ClusterRoles grant, where
        the bundle's bindings give it (a ClusterRole bound in a namespace is checked there)."""
        b = self.bundle
        bound: dict[tuple[str, str], set[str | None]] = {}
        for obj in b.access:
            if obj.get("kind") in ("RoleBinding", "ClusterRoleBinding"):
                role = obj.get("roleRef") or {}
                namespace = (obj.get("metadata") or {}).get("namespace") if obj["kind"] == "RoleBinding" else None
                bound.setdefault((str(role.get("kind")), str(role.get("name"))), set()).add(namespace)
        out = []
        for obj in b.access:
            if obj.get("kind") not in ("Role", "ClusterRole"):
                continue
            meta = obj.get("metadata") or {}
            places = ({meta.get("namespace")} if obj["kind"] == "Role"
                      else bound.get(("ClusterRole", str(meta.get("name"))), set()))
            for rule in obj.get("rules") or []:
                verbs, groups, resources = rule.get("verbs") or [], rule.get("apiGroups") or [""], \
                    rule.get("resources") or []
                if not verbs or not resources or rule.get("resourceNames"):
                    continue
                for namespace in sorted(places, key=lambda n: n or ""):
                    check = (str(verbs[0]), str(groups[0]), str(resources[0]), namespace)
                    if check not in out:
                        out.append(check)
        return out

    def reach_namespaces(self) -> list[str]:
        """The namespaces whose rights the handover reviews as the agent: every namespace of the cluster (listed
        with the caller's credentials: those the faults write in, a fault tool's, an engine's hold the answer too)
        and the scenario's (its topology's, its access objects', its injection's), `default` and `kube-system`."""
        b = self.bundle
        listed, _ = self.cluster.list("v1", "Namespace")
        return sorted({*access.reach_namespaces((*b.topology, *b.access, *b.inject_apply, *b.revert_apply),
                                                b.service_account.namespace),
                       *(n["metadata"]["name"] for n in listed)})

    def _check_token(self, kubeconfig: Path) -> dict[str, dict]:
        """The agent's kubeconfig works before the agent gets it: the API server takes its token as the
        agent's ServiceAccount (SelfSubjectReview), and grants it what its Roles say (one access review per
        rule, as the agent). A token the server does not take, or rights it does not hold (a binding missing,
        refused), would have the agent fail for the harness's fault.

        What the token holds, per namespace of `reach_namespaces` (SelfSubjectRulesReview, as the agent), is
        returned for agent-reach.json with what of it the bundle's access does not grant (`beyond`): the cluster's
        own bindings may give every service account more than the prompt states. A server that does not answer
        the review leaves the namespace `unreviewed` with the reason."""
        account = self.bundle.service_account
        expected = f"system:serviceaccount:{account.namespace}:{account.name}"
        checks = self.agent_access()
        namespaces = self.reach_namespaces()
        try:
            with Cluster(str(kubeconfig), None, self.options.request_timeout) as agent:
                user = agent.whoami()
                if user != expected:
                    raise RunFailure(f"the agent's token authenticates as {user!r}, not as {expected}")
                guarded = self._check_guard(agent)
                denied = [f"{verb} {resource}{'.' + group if group else ''}"
                          + (f" in {namespace}" if namespace else " (cluster-wide)")
                          for verb, group, resource, namespace in checks
                          if not agent.may(verb, group, resource, namespace)]
                held = {}
                for namespace in namespaces:
                    try:
                        status = agent.rules_review(namespace)
                    except ClusterError as exc:
                        held[namespace] = {"unreviewed": str(exc)}
                        continue
                    held[namespace] = {
                        "rules": status.get("resourceRules") or [], "urls": status.get("nonResourceRules") or [],
                        "incomplete": bool(status.get("incomplete")),
                        "beyond": access.held_beyond(self.bundle.access, account.name, account.namespace, status,
                                                     namespace)}
        except ClusterError as exc:
            raise RunFailure(f"the agent's token does not work: {exc}") from None
        if denied:
            raise RunFailure(f"the agent's token ({expected}) is refused what its Roles grant: may not "
                             + ", ".join(denied) + " (are the bundle's RoleBindings in place?)")
        self.log("handover", "step", action="token-checked", user=user, checks=len(checks), guarded=guarded,
                 reviewed=sorted(n for n, h in held.items() if "unreviewed" not in h),
                 step=f"the token is {user}; {len(checks)} of its rights confirmed"
                 + (f"; its admission policy refuses {guarded}" if guarded else ""))
        return held

    def _check_guard(self, agent: Cluster) -> str | None:
        """The agent's admission policy (in its access: backends/manifests.pod_guard) is in force before the agent
        starts: as the agent, a dry run of what it must refuse - a service-account-token Secret of the agent's own
        account (a token that would outlive the run), else, where the agent may not create Secrets, a pod in its
        node's PID namespace - is refused by it. The API server puts a new policy in force within a second or so;
        one that still admits the probe after POLICY_WAIT stops the run. What was refused (None: no policy, or
        no probe the agent may create)."""
        policies = [o for o in self.bundle.access if o.get("kind") == "ValidatingAdmissionPolicy"]
        if not policies:
            return None
        account = self.bundle.service_account
        meta = {"name": "itbench-policy-probe", "namespace": account.namespace}
        probes = {
            "a service-account-token Secret": {
                "apiVersion": "v1", "kind": "Secret", "type": "kubernetes.io/service-account-token",
                "metadata": {**meta, "annotations": {"kubernetes.io/service-account.name": account.name}}},
            "a pod in its node's PID namespace": {
                "apiVersion": "v1", "kind": "Pod", "metadata": meta,
                "spec": {"hostPID": True, "containers": [{"name": "probe", "image": "itbench.invalid/probe"}]}},
        }
        names = {(o.get("metadata") or {}).get("name") for o in policies}
        deadline = time.monotonic() + POLICY_WAIT
        for what, probe in probes.items():
            while True:
                try:
                    agent.dry_run(probe)
                except ClusterError as exc:
                    if "ValidatingAdmissionPolicy" in str(exc) and any(f"'{n}'" in str(exc) for n in names):
                        return what
                    break  # refused before admission (RBAC: the agent may not create it): the next probe
                if time.monotonic() >= deadline:
                    raise RunFailure(f"the agent's admission policy ({', '.join(sorted(names))}) is not in force: "
                                     f"the API server admits {what} from the agent's token (does it serve "
                                     "admissionregistration.k8s.io/v1 ValidatingAdmissionPolicy, Kubernetes 1.30+?)")
                time.sleep(0.5)
        return None

    def agent_reach(self, folder: Path, config: dict, held: dict[str, dict] | None = None) -> dict:
        """What the agent can reach (agent-reach.json): its folder and the files in it, the names of its
        environment's variables, its kubeconfig's users and contexts, the access its ServiceAccount is granted
        (the bundle's manifests/agent-access.yaml) and what the API server says its token holds (`held`, per
        namespace: `_check_token`)."""
        b = self.bundle
        access = []
        for obj in b.access:
            if obj.get("kind") in ("Role", "ClusterRole"):
                access.append({"kind": obj["kind"], "namespace": (obj.get("metadata") or {}).get("namespace"),
                               "rules": obj.get("rules") or []})
        return {
            "folder": str(folder),
            "files": sorted(p.name for p in folder.iterdir()),
            "environment": sorted(self.agent_environment(folder)),
            "kubeconfig": {"users": [u.get("name") for u in config.get("users") or []],
                           "contexts": [c.get("name") for c in config.get("contexts") or []],
                           "server": (config.get("clusters") or [{}])[0].get("cluster", {}).get("server")},
            "service_account": str(b.service_account) if b.service_account is not None else None,
            "access": access,
            "held": held or {},
        }

    def run_agent(self) -> None:
        if {"diagnose", "localize"} & set(self.bundle.requires.get("tasks") or ()) and self.bundle.domain == "sre":
            # what the agent finds: the pods it may name, which its fix may replace before the capture
            self.incident = observe(self.cluster, self.bundle, _now())
            self.log("agent", "step", action="incident", count=len(self.incident["resources"]["items"]),
                     step=f"{len(self.incident['resources']['items'])} workloads and pods as the agent finds them")
        workspace = self.agent_folder()
        env = self.agent_environment(workspace)
        self.answered_at, self._answer_seen = None, None  # this attempt's answer, not an earlier one's
        try:
            self._run_agent(workspace, env)
        finally:  # however the agent ended (an interruption included), its token goes, its work is kept
            with contextlib.suppress(OSError):
                (workspace / "kubeconfig.yaml").unlink()  # the token is the agent's only; it has no use after
            self._keep_agent_folder()
        self.log("agent", "step", action="agent-exit", **self.agent_info,
                 step=f"exit {self.agent_info['exit_code']}" + (" (timed out)" if self.agent_info["timed_out"] else "")
                 + f" after {self.agent_info['seconds']} s")

    def _run_agent(self, workspace: Path, env: dict) -> None:
        started = time.monotonic()
        with open(self.folder / "agent.stdout", "wb") as out, open(self.folder / "agent.stderr", "wb") as err:
            try:
                proc = subprocess.Popen(self.options.agent, shell=True, cwd=workspace, env=env, stdin=subprocess.DEVNULL,
                                        stdout=out, stderr=err, start_new_session=True)
            except OSError as exc:
                raise RunFailure(f"cannot start the agent: {exc}") from exc
            timed_out = False
            watched = self._detection_answer(workspace)
            try:
                self.log("agent", "step", action="agent", pid=proc.pid, step=f"started (pid {proc.pid}, budget "
                                                                              f"{self.options.agent_timeout:g} s)")
                deadline = started + self.options.agent_timeout
                while True:  # watching for the detection answer: when it appears is the run's record, not the agent's
                    try:
                        proc.wait(timeout=max(0.0, min(ANSWER_POLL, deadline - time.monotonic())) if watched
                                  else max(0.0, deadline - time.monotonic()))
                        break
                    except subprocess.TimeoutExpired:
                        self._note_answer(watched)
                        if time.monotonic() >= deadline:
                            raise
            except subprocess.TimeoutExpired:
                timed_out = True
                self.log("agent", "note", message=f"over its budget of {self.options.agent_timeout:g} s: "
                                                  "killing its process group")
            finally:
                if proc.poll() is None:
                    _kill_group(proc, self.options.kill_grace)
        # the answers as the budget ended: what is graded, whatever the agent (or what it left running, or
        # what its links lead to) does with its folder from now on
        self._snapshot_answers(workspace)
        self._record_answer(watched)  # also written just before the agent exited (or was stopped)
        seconds = round(time.monotonic() - started, 3)
        self.fixed_at = _now()  # the agent's work is over: a restart from here on is one under its fix
        self._agent_ended = time.monotonic()
        self.waited += seconds
        self.agent_info = {"exit_code": proc.returncode, "timed_out": timed_out, "seconds": seconds,
                           "budget": self.options.agent_timeout}

    def _keep_agent_folder(self) -> None:
        """Copy what the agent was given and wrote into the run's `workspace/` (for the record: the answers graded
        are the snapshot `answers/`), then remove its folder. Links are copied as links: nothing outside the folder
        is read through them; a FIFO, a socket or a device is never opened, and files are bounded
        (agentfiles.keep_folder): what is not copied is noted in the timeline."""
        folder = getattr(self, "_agent_folder", None)
        if folder is None or not folder.is_dir():
            return
        skipped = agentfiles.keep_folder(folder, self.workspace)
        if skipped:
            self.log("agent", "note", action="workspace-skipped", skipped=skipped[:50],
                     message=f"{len(skipped)} entries of the agent's folder not kept: " + "; ".join(
                         f"{s['path']}: {s['why']}" for s in skipped[:5]) + (" ..." if len(skipped) > 5 else ""))
        shutil.rmtree(folder, ignore_errors=True)
        self._agent_folder = None

    def answer_files(self) -> dict[str, str]:
        """task -> the answer file the agent writes for it, for the tasks graded on an answer (the evaluator's
        `answers`; the domain's submission for `diagnose`)."""
        from ..backends.evaluator_file import spec_of

        spec = spec_of((self.bundle.path / "evaluator.py").read_text(encoding="utf-8")) or {}
        return lifecycle.answer_files({**spec, "tasks": list(self.bundle.requires.get("tasks") or [])},
                                      self.bundle.domain)

    def _snapshot_answers(self, folder: Path) -> dict:
        """The answer files' bytes as they are now in `folder`, copied into `answers/` with `answers.json` saying
        what was kept and what was refused (a link out of the folder, a FIFO, a device, a file too large): what
        the evaluate phase grades (agentfiles.snapshot_answers)."""
        manifest = agentfiles.snapshot_answers(folder, list(self.answer_files().values()), self.folder / ANSWERS)
        self._write(ANSWERS_MANIFEST, manifest)
        refused = {n: m["refused"] for n, m in manifest.items() if "refused" in m}
        kept = sorted(n for n in manifest if n not in refused)
        self.log("agent", "step", action="answers", kept=kept, refused=refused,
                 step=f"answers as the budget ended: {', '.join(kept) or 'none'}"
                      + (f"; refused: {'; '.join(refused.values())}" if refused else ""))
        return manifest

    def _answers(self) -> dict:
        """The snapshot's manifest; made now from `workspace/` for a run recorded before snapshots were taken."""
        path = self.folder / ANSWERS_MANIFEST
        if path.is_file():
            try:
                manifest = json.loads(path.read_text(encoding="utf-8"))
                if isinstance(manifest, dict):
                    return manifest
            except (OSError, ValueError):
                pass
        return self._snapshot_answers(self.workspace)

    def _detection_answer(self, folder: Path) -> Path | None:
        """The detection task's answer file in the agent's folder, where it writes while it runs (None when the
        bundle poses no detect task)."""
        name = self.answer_files().get("detect")
        return folder / name if name else None

    def _note_answer(self, path: Path | None) -> None:
        """Note when the detection answer's present content was first seen (the harness's clock, never the
        file's times, which the agent sets): a placeholder written early and the answer written late is
        an answer of when it was written. The evaluator bounds the self-reported `noticed_at` by it."""
        if path is None:
            return
        try:  # a regular file only, bounded: a FIFO is never opened to wait, a device never read
            data = agentfiles.read_answer(path.parent, path.name, MAX_ANSWER_BYTES)
        except (agentfiles.Refused, OSError):
            return
        if data is None:
            return
        self._seen(hashlib.sha256(data).hexdigest())

    def _seen(self, digest: str) -> None:
        if self._answer_seen is None or self._answer_seen[0] != digest:
            self._answer_seen = (digest, _now())

    def _record_answer(self, path: Path | None) -> None:
        """After the agent: the time the detection answer as snapshot (its bytes graded) was first seen, in the
        timeline; none when the snapshot holds no detection answer (absent or refused)."""
        if path is None:
            return
        kept = self._answers().get(path.name) or {}
        if not isinstance(kept.get("sha256"), str):
            return
        self._seen(kept["sha256"])  # content the looks never saw is seen now
        self.answered_at = self._answer_seen[1]
        self.log("agent", "step", action="answer", answered_at=self.answered_at,
                 step=f"{path.name} as graded appeared at {self.answered_at}")

    def _policies(self) -> list[Ref]:
        """The Kyverno ClusterPolicies and Policies of the cluster, by reference."""
        found = []
        for api_version, kind in lifecycle.POLICY_KINDS:
            if self.cluster.resource(api_version, kind) is not None:
                found += [Ref.of(o) for o in self.cluster.list(api_version, kind)[0]]
        return sorted(found, key=str)

    def _await_reports(self) -> None:
        """CISO: wait until Kyverno's PolicyReports speak of every object of the scenario (the gap and the
        compliant ones), or `report_timeout`: Kyverno scans in the background, a while after a policy
        appears. What has no result by then is graded as unreported."""
        from ..backends.evaluator_file import spec_of

        spec = spec_of((self.bundle.path / "evaluator.py").read_text(encoding="utf-8")) or {}
        graded = (spec.get("ciso") or {}).get("gaps", []) + (spec.get("ciso") or {}).get("compliant", [])
        wanted = {(o.get("kind"), (o.get("metadata") or {}).get("namespace"), (o.get("metadata") or {}).get("name"))
                  for o in graded}
        started = time.monotonic()
        deadline = started + self.options.report_timeout
        while True:
            seen = set()
            for report in capture_reports(self.cluster):
                for result in report.get("results") or []:
                    for res in result.get("resources") or [report.get("scope") or {}]:
                        seen.add((res.get("kind"), res.get("namespace"), res.get("name")))
            missing = wanted - seen
            if not missing or time.monotonic() >= deadline:
                break
            time.sleep(min(self.options.alert_poll, max(0.0, deadline - time.monotonic())))
        self.waited += time.monotonic() - started
        self.log("snapshot", "step", action="await-reports", missing=len(missing),
                 step=f"PolicyReports cover {len(wanted) - len(missing)} of {len(wanted)} objects")

    def _capture(self) -> dict:
        """The state the evaluator reads, as it is now (with `fixed_at` and `incident`)."""
        state = capture(self.cluster, self.bundle, self.options.prometheus,
                        lambda ns, kind, n: self.log("snapshot", "step", action="capture",
                                                     step=f"{kind} in {ns or 'the cluster'}: {n}"),
                        self.options.exec_timeout,
                        lambda probe, r: self.log("snapshot", "step", action="probe", name=probe.name,
                                                  exit_code=r["exit_code"],
                                                  step=f"probe {probe.name}: exit {r['exit_code']}"))
        if self.fixed_at:  # what the evaluator dates restarts against (docs/evaluator.md)
            state["fixed_at"] = self.fixed_at
        if self.incident is not None:
            state["incident"] = self.incident
        return state

    def _await_mitigation(self) -> None:
        """Until the mitigation's checks hold, or the scenario's declared window (`within`, counted from the end
        of the agent's work) ends: capture the state and grade it every MITIGATION_POLL seconds. A fix takes
        effect through controllers (a rollout, a reschedule): the state of the moment the agent exits is not
        yet the state its fix makes."""
        window = self.options.mitigation_window
        if window is None:
            window = self.bundle.mitigation_window or 0.0
        if window <= 0 or "mitigate" not in (self.bundle.requires.get("tasks") or ()):
            return
        started = time.monotonic()
        deadline = (self._agent_ended or started) + window
        probe = self.folder / "state.mitigation.json"
        polls, held, detail = 0, False, ""
        try:
            while True:
                polls += 1
                state = self._capture()
                probe.write_text(json.dumps(state, sort_keys=True), encoding="utf-8")
                held, detail = mitigation_holds(self.bundle, probe)
                if held or held is None or time.monotonic() >= deadline:
                    break
                time.sleep(min(MITIGATION_POLL, max(0.0, deadline - time.monotonic())))
        finally:
            with contextlib.suppress(OSError):
                probe.unlink()
            self.waited += time.monotonic() - started
        seconds = round(time.monotonic() - (self._agent_ended or started), 3)
        self.log("snapshot", "step", action="await-mitigation", held=bool(held), polls=polls, seconds=seconds,
                 window=window, step=(f"the mitigation's checks hold {seconds:g} s after the agent" if held else
                                      f"the mitigation's checks do not hold within {window:g} s: {detail}"))

    def snapshot(self) -> None:
        self._await_mitigation()
        observations: list[dict] = []
        if self.options.stable_for > 0 and "mitigate" in (self.bundle.requires.get("tasks") or ()):
            # the fix runs a while before the capture, observed every --alert-poll (at most OBSERVATIONS times):
            # a workload ready, then not, did not hold
            self.log("snapshot", "step", action="stable-for", seconds=self.options.stable_for,
                     step=f"letting the fix run {self.options.stable_for:g} s before the capture")
            started = time.monotonic()
            deadline = started + self.options.stable_for
            every = max(self.options.alert_poll, self.options.stable_for / OBSERVATIONS)
            while True:
                observations.append(observe(self.cluster, self.bundle, _now()))
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                time.sleep(min(every, left))
            self.waited += time.monotonic() - started
            self.log("snapshot", "step", action="observed", count=len(observations),
                     step=f"{len(observations)} observations of the workloads since the agent")
        if self.bundle.requires.get("policyReports"):
            self._await_reports()
        state = self._capture()
        if observations:
            state["observations"] = observations
        if self.bundle.requires.get("policyReports") and self.policies_before is not None:
            # the agent's policies (those not there before it): what the policy task grades, not another's
            state["gradedPolicies"] = sorted({r.name for r in self._policies() if r not in self.policies_before})
        self._write("state.json", state)

    def evaluate(self) -> dict:
        answer = SUBMISSION.get(self.bundle.domain)  # CISO: none, the state's PolicyReports are graded
        manifest = self._answers()  # the answers as the agent's budget ended, never the workspace as it is now
        refused = {task: str(manifest[name]["refused"]) for task, name in self.answer_files().items()
                   if isinstance(manifest.get(name), dict) and "refused" in manifest[name]}
        answers = self.folder / ANSWERS
        verdict = grade(self.bundle, self.folder / "state.json", answers / answer if answer else answers,
                        injected_at=self.injected_at, answered_at=self.answered_at, refused=refused)
        self._write("verdict.json", verdict)
        self.log("evaluate", "step", action="evaluate", passed=verdict["passed"], score=verdict["score"],
                 step=f"passed={verdict['passed']} score={verdict['score']}")
        return verdict

    def revert(self) -> None:
        errors = []
        for step in self.bundle.revert_exec:  # every step is tried, whatever the others did
            try:
                self._exec("revert", step)
            except (ClusterError, RunFailure) as exc:
                errors.append(str(exc))
                self.log("revert", "note", ref=_ref_json(step.workload), message=f"exec: {exc}")
        try:
            self._recreating("revert", self.bundle.revert_recreate)
        except (ClusterError, RunFailure) as exc:
            errors.append(str(exc))
            self.log("revert", "note", message=f"recreate: {exc}")
        for obj in self.bundle.revert_apply:
            ref = Ref.of(obj)
            try:
                self.cluster.apply(obj)
                self.log("revert", "step", action="apply", ref=_ref_json(ref), step=f"apply {ref}")
            except ClusterError as exc:
                errors.append(str(exc))
                self.log("revert", "note", ref=_ref_json(ref), message=f"apply {ref}: {exc}")
        for node in self.bundle.cordoned:
            try:
                self._cordon("revert", node, False)
            except (ClusterError, RunFailure) as exc:
                errors.append(str(exc))
                self.log("revert", "note", ref=_ref_json(lifecycle.node_ref(node)), message=f"uncordon: {exc}")
        for obj in self.bundle.created():
            self._revert_delete(Ref.of(obj), errors)
        if self.marks is not None:  # after the fault's own revert: what is left is the agent's
            self._restore_marks(errors)
        if self.policies_before is not None:  # the policies the agent deployed go with the run
            before = set(self.policies_before)
            for ref in self._policies():
                if ref not in before:
                    self._revert_delete(ref, errors, "the agent's ")
            if not errors:
                self.policies_before = None
                self.log("revert", "step", action="policies-removed", step="the agent's policies removed")
        if errors:
            raise RunFailure("; ".join(errors))
        self.injected = False

    def _marks(self) -> dict:
        """What the agent's access may change cluster-wide (manifests.FIXED_RESOURCES: namespaces it may create,
        relabel and annotate, nodes it may relabel, annotate, taint and cordon), as it is now: per node its
        labels, annotations, taints and `unschedulable`, per namespace its labels and annotations (None: the
        access may not write that resource). Left as they were, they would carry a run's notes to the next trial on
        the cluster (and its taints, its scheduling)."""
        out: dict = {"nodes": None, "namespaces": None}
        if self._may_write("nodes"):
            nodes, _ = self.cluster.list("v1", "Node")
            out["nodes"] = {n["metadata"]["name"]: _node_marks(n) for n in nodes}
        if self._may_write("namespaces"):
            namespaces, _ = self.cluster.list("v1", "Namespace")
            out["namespaces"] = {n["metadata"]["name"]: _object_marks(n) for n in namespaces}
        return out

    def _may_write(self, resource: str) -> bool:
        """Whether the agent's access lets it change a cluster-scoped core `resource` (create, patch or update)."""
        account = self.bundle.service_account
        return account is not None and any(
            access.allows(self.bundle.access, account.name, account.namespace, access.Request(verb, "", resource, None, ""))
            for verb in ("create", "patch", "update"))

    def _restore_marks(self, errors: list[str]) -> None:
        """Put back what `_marks` recorded: a namespace made since is deleted, a node's or a namespace's labels,
        annotations, taints and `unschedulable` changed since are set back (each undone thing a revert step)."""
        before, restored, failed = self.marks or {}, 0, len(errors)
        try:
            namespaces = self.cluster.list("v1", "Namespace")[0] if before.get("namespaces") is not None else []
            nodes = self.cluster.list("v1", "Node")[0] if before.get("nodes") is not None else []
        except ClusterError as exc:
            errors.append(str(exc))
            self.log("revert", "note", message=f"the cluster-wide objects the agent may write: {exc}")
            return
        kept = before.get("namespaces") or {}
        for ns in namespaces:
            name, meta = ns["metadata"]["name"], ns.get("metadata") or {}
            if name not in kept:
                if not meta.get("deletionTimestamp"):
                    self._revert_delete(Ref("v1", "Namespace", None, name), errors, "a namespace made during the run: ")
                continue
            restored += self._set_back(Ref("v1", "Namespace", None, name), _object_marks(ns), kept[name], errors)
        recorded = before.get("nodes") or {}
        for node in nodes:
            name = node["metadata"]["name"]
            if name in recorded:
                restored += self._set_back(Ref("v1", "Node", None, name), _node_marks(node), recorded[name], errors,
                                           _controller_taints(node))
        if len(errors) == failed:
            self.marks = None
            self.log("revert", "step", action="marks-restored", changed=restored,
                     step=f"namespaces and nodes as before the fault ({restored} set back)")

    def _set_back(self, ref: Ref, now: dict, then: dict, errors: list[str], keep_taints: list | None = None) -> int:
        """Patch `ref`'s marks from `now` back to `then` (a merge patch: a label or annotation added since is
        removed; the node controllers' taints, `keep_taints`, stay); 1 when something was set back."""
        patch: dict = {}
        for key in ("labels", "annotations"):
            changed = {k: then[key].get(k) for k in set(now[key]) | set(then[key]) if now[key].get(k) != then[key].get(k)}
            if changed:
                patch.setdefault("metadata", {})[key] = changed
        for key in ("taints", "unschedulable"):
            if key in then and now.get(key) != then.get(key):
                patch.setdefault("spec", {})[key] = then[key]
        if "taints" in patch.get("spec", {}) and keep_taints:
            patch["spec"]["taints"] = [*(then["taints"] or []), *keep_taints]
        if not patch:
            return 0
        try:
            self.cluster.patch(ref, patch)
        except ClusterError as exc:
            errors.append(str(exc))
            self.log("revert", "note", ref=_ref_json(ref), message=f"set back {ref}: {exc}")
            return 0
        self.log("revert", "step", action="set-back", ref=_ref_json(ref), patch=patch,
                 step=f"set back {ref}: " + ", ".join(f"{part}.{k}" for part, fields in patch.items()
                                                      for k in fields))
        return 1

    def _revert_delete(self, ref: Ref, errors: list[str], whose: str = "") -> None:
        """Delete one object for the revert; an object already gone is fine, a failure is noted in `errors`."""
        try:
            gone = not self.cluster.delete(ref)
            self.log("revert", "step", action="delete", ref=_ref_json(ref),
                     step=f"delete {whose}{ref}" + (" (already gone)" if gone else ""))
        except ClusterError as exc:
            errors.append(str(exc))
            self.log("revert", "note", ref=_ref_json(ref), message=f"delete {ref}: {exc}")

    def verify(self) -> None:
        present = [r for r in self.bundle.workloads if self.cluster.get(r) is not None]
        self._wait_ready("verify", present)

    def undeploy(self) -> None:
        errors = []
        doomed = {r.name for r in self.created if r.kind == "Namespace"}
        for ref in reversed(list(self.created)):
            if ref.namespace in doomed:  # deleting its namespace deletes it
                continue
            try:
                gone = not self.cluster.delete(ref)
            except ClusterError as exc:
                errors.append(str(exc))
                continue
            self.log("undeploy", "step", action="delete", ref=_ref_json(ref),
                     step=f"delete {ref}" + (" (already gone)" if gone else ""))
        started = time.monotonic()
        left = self.cluster.wait([r for r in self.created if r.namespace not in doomed], lambda o: o is None,
                                 self.options.ready_timeout, stop=self._cut)
        left += [r for r in self.created if r.namespace in doomed and r.namespace in {x.name for x in left}]
        self.waited += time.monotonic() - started
        if left:
            errors.append(("deleted, not waited for (interrupted): " if self._cut() else
                           f"still there after {self.options.ready_timeout:g} s: ") + ", ".join(map(str, left)))
        self.created = [r for r in self.created if r in left]
        if errors:
            raise RunFailure("; ".join(errors))

    def _write(self, name: str, data) -> None:
        path = self.folder / name
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n", encoding="utf-8")
        os.replace(tmp, path)


def _object_marks(obj: dict) -> dict:
    meta = obj.get("metadata") or {}
    return {"labels": dict(meta.get("labels") or {}), "annotations": dict(meta.get("annotations") or {})}


# taints the node controllers set and lift themselves (not-ready, unreachable, pressure, ...): not the agent's
_CONTROLLER_TAINTS = "node.kubernetes.io/"


def _controller_taints(node: dict) -> list[dict]:
    return [t for t in (node.get("spec") or {}).get("taints") or [] if str(t.get("key", "")).startswith(_CONTROLLER_TAINTS)]


def _node_marks(node: dict) -> dict:
    spec = node.get("spec") or {}
    taints = [t for t in spec.get("taints") or [] if t not in _controller_taints(node)]
    return {**_object_marks(node), "taints": taints or None, "unschedulable": spec.get("unschedulable") or None}


def _raise_interrupted(signum, frame):
    raise Interrupted(signum)


def _kill_group(proc: subprocess.Popen, grace: float) -> None:
    """SIGTERM to the agent's process group, then SIGKILL after `grace` seconds."""
    for sig, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, 5.0)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            break
        try:
            proc.wait(timeout=wait)
            break
        except subprocess.TimeoutExpired:
            continue
    # the leader may be gone while others of its group live on: make sure none does
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)


def grade(bundle: Bundle, state: Path, submission: Path, timeout: float = 300.0, injected_at: str | None = None,
          answered_at: str | None = None, refused: dict[str, str] | None = None) -> dict:
    """The verdict of every task the bundle poses, one evaluator run per task (docs/evaluator.md). A task
    whose submission is missing or unusable fails with score 0 and says why; a state the evaluator
    refuses is the run's failure (the capture is incomplete), not the agent's. `injected_at` (RFC 3339),
    when the run injected the fault, is what `detect` times the agent's detection against. `refused`
    (task -> why): answers the snapshot refused (a link out of the agent's folder, a FIFO, ...): those
    tasks fail with the reason."""
    verdicts = {}
    for task in bundle.requires["tasks"]:
        command = [sys.executable, "-S", str(bundle.path / "evaluator.py"), "--task", task]
        if task in (refused or {}):
            verdicts[task] = _failed(bundle, task, f"the answer is refused: {refused[task]}")
            continue
        if task == "diagnose" and not submission.is_file():
            verdicts[task] = _failed(bundle, task, f"the agent wrote no {submission.name}")
            continue
        # diagnose with the state: a name is credited only for an object it holds (a pod that does not exist is
        # none); the other answer tasks find their answer files in the agent's workspace; detect is timed
        # against the injection, and bounded by when the run saw its answer appear
        given = {"submission": str(submission), "folder": str(submission.parent), "state": str(state),
                 "injected_at": injected_at, "answered_at": answered_at}
        for option, what in evaluator_inputs(bundle.requires["tasks"], task):
            if given[what]:
                command += [option, given[what]]
        try:
            proc = subprocess.run(command, capture_output=True, text=True, timeout=timeout, check=False)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise RunFailure(f"the evaluator of {bundle.scenario} did not run: {exc}") from exc
        if proc.returncode == 2 and task in ANSWER_TASKS:
            verdicts[task] = _failed(bundle, task, f"{submission.name} is unusable: {proc.stderr.strip()[:500]}")
            continue
        try:
            verdict = json.loads(proc.stdout) if proc.returncode == 0 else None
        except ValueError:
            verdict = None
        if not isinstance(verdict, dict):
            raise RunFailure(f"the evaluator of {bundle.scenario} refused the {task} task's input (exit "
                             f"{proc.returncode}): {proc.stderr.strip()[:500]}")
        verdicts[task] = verdict
    if len(verdicts) == 1:
        return next(iter(verdicts.values()))
    tasks = list(verdicts)
    return {"scenario": bundle.scenario, "task": "+".join(tasks), "passed": all(v["passed"] for v in verdicts.values()),
            "score": round(sum(v["score"] for v in verdicts.values()) / len(verdicts), 6),
            "metrics": {f"{t}.score": v["score"] for t, v in verdicts.items()},
            "checks": [dict(c, id=f"{t}.{c['id']}") for t, v in verdicts.items() for c in v.get("checks", [])],
            "tasks": verdicts}


def mitigation_holds(bundle: Bundle, state: Path, timeout: float = 300.0) -> tuple[bool | None, str]:
    """(passed, the failed checks) of the bundle's `mitigate` task on `state`; (None, why) when the evaluator
    refuses the state (the final grading reports it)."""
    command = [sys.executable, "-S", str(bundle.path / "evaluator.py"), "--task", "mitigate", "--state", str(state)]
    try:
        proc = subprocess.run(command, capture_output=True, text=True, timeout=timeout, check=False)
        verdict = json.loads(proc.stdout) if proc.returncode == 0 else None
    except (OSError, subprocess.TimeoutExpired, ValueError) as exc:
        return None, str(exc)[:300]
    if not isinstance(verdict, dict):
        return None, proc.stderr.strip()[:300]
    failed = [str(c.get("detail") or c.get("id")) for c in verdict.get("checks") or []
              if isinstance(c, dict) and not c.get("passed")]
    return bool(verdict.get("passed")), "; ".join(failed)[:500]


def _failed(bundle: Bundle, task: str, why: str) -> dict:
    return {"scenario": bundle.scenario, "task": task, "passed": False, "score": 0.0, "metrics": {},
            "checks": [{"id": "submission", "passed": False, "detail": why}]}
