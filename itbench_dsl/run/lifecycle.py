"""The run of a compiled bundle, as an ordered plan: pure data, no cluster, no kubernetes import.

One home for *what* a run does and in which order; the rest of `itbench_dsl/run/` does it against a cluster
(`itbench run`), `itbench run --dry-run` prints it, and engine targets (Chainsaw, Argo) may spell the
same phases in their own formats. Public API (stable):

- `PHASES`: the ordered `Phase` records of a run. Each names the bundle files it applies or deletes
  (`applies`, `deletes`), what it reads (`reads`), and whether it runs whatever happened before it
  (`always`: the revert, the health check and the undeploy run on success, failure, timeout and
  interruption alike).
- `PHASE_NAMES`: their names, in order.
- `load_bundle(path) -> Bundle`: a compiled bundle read into data (objects, waiters, alerts, the
  agent's access, what the evaluator's state must hold, the commands run in pods: `ExecStep`s of
  inject/exec.json, revert/exec.json and the probes the evaluator reads). Raises `BundleError` with the
  file named.
- `plan(bundle, options) -> list[Step]`: every object and every API call of a run, in order. A
  `Step` is one action of one phase (`apply`, `delete`, `wait-ready`, `waiter`, `access-review`,
  ...) on one object where there is one, with the HTTP request it makes (`Step.request()`).
- `requirements(bundle)`: the prerequisites the bundle's objects need (`Prerequisite`: an API group's
  kinds, a controller, a Prometheus), derived from their apiVersions, kinds and labels.
- `render_plan(steps) -> str`: the plan as text (one line per step).

Order of a run (each phase's actions in the order listed):

1. `preflight`   the API's version; every kind the bundle uses is served (discovery: Chaos Mesh,
                 Istio, Kyverno, the Prometheus operator CRDs); their controllers run; the caller may
                 do what the run does (SelfSubjectAccessReview). Stops with a list of what is missing.
2. `deploy`      server-side apply (field manager FIELD_MANAGER, kubectl's) of manifests/topology.yaml, then of every
                 other manifests/*.yaml by file name (agent-access.yaml, alert-rules.yaml, ...), each
                 in file order; wait until every workload is ready.
3. `baseline`    the alerts already firing (Prometheus `/api/v1/alerts`).
4. `inject`      the `before` waiters; cordon the nodes a fault cordons (scenario.json
                 `faults[].injections[].cordoned`); delete inject/recreate.yaml and wait until it is gone; apply
                 inject/apply.yaml (which creates those changed); delete inject/delete.yaml; run the
                 commands of inject/exec.json in the workloads' pods (pods/exec); the `after` waiters
                 (scenario.json `faults[].waiters`, in group order).
5. `alerts`      wait until every alert the scenario expects (scenario.json `alerts`) fires.
6. `handover`    a short-lived token for the agent's ServiceAccount (TokenRequest); the agent's
                 kubeconfig (one user: that token) and prompt.md written into a fresh folder outside
                 the bundle and the results, where the agent runs with an environment that names
                 nothing of the bundle. As the agent: the token is its ServiceAccount, holds what its
                 Roles grant and nothing more (SelfSubjectRulesReview per namespace; agent-reach.json).
7. `agent`       the agent's command, with a time budget (its process group is killed on overrun).
8. `snapshot`    the state the evaluator reads (`evaluator.py --requirements`), as state.json, with
                 the results of the probes it reads (run in their workloads' pods, `probes`).
9. `evaluate`    the bundle's evaluator.py on the state and the agent's submission: verdict.json.
10. `revert`     ALWAYS: run the commands of revert/exec.json; delete revert/recreate.yaml and wait until
                 it is gone; apply revert/apply.yaml; uncordon the nodes the faults cordoned; delete
                 revert/delete.yaml and what inject/apply.yaml created that the revert does not restore.
11. `verify`     ALWAYS: every workload of the topology is ready again.
12. `undeploy`   ALWAYS unless `--keep`: delete what the deploy created (never an object that was
                 there before the run), in reverse order; wait until its namespaces are gone.

Only the standard library and PyYAML are imported here (PyYAML inside `load_bundle`).
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from ..kinds import WORKLOAD_KINDS, plural  # noqa: F401 - the run's readers take them from here too
from ..ciso.tasks import TASK_CLASSES

# The one field manager of every write a run makes (deploy, inject, revert; the engine targets' `kubectl`
# commands too). Server-side apply records it in every object's managedFields, where any reader sees it: it is
# kubectl's own default for `kubectl apply --server-side` (kubectl/pkg/cmd/apply, fieldManagerServerSideApply
# = "kubectl"; client-side apply would be "kubectl-client-side-apply"), so it names no harness.
FIELD_MANAGER = "kubectl"
EXEC_PROTOCOL = "v4.channel.k8s.io"  # the pods/exec websocket subprotocol a run speaks
APPLY_CONTENT_TYPE = "application/apply-patch+yaml"
# The prompt's workspace contract (backends/prompt.WORKSPACE, which imports Jinja; tests/run/test_run_plan.py
# checks that the two agree). A run gives the agent its own folder and rewrites this path in the prompt.
PROMPT_WORKSPACE = "/tmp/agent"
# The file the agent submits per domain (backends/prompt.SUBMISSION["sre"|"finops"], checked the same way).
SUBMISSION = {"sre": "diagnosis.json", "finops": "finops.json"}  # CISO: the evaluator reads Kyverno's reports
DOMAINS_RUN = ("sre", "finops", "ciso")
# the CISO task classes a run grades: a Kyverno policy, read from the PolicyReports Kyverno writes. Rego
# and Ansible tasks need a policy engine or hosts a run does not set up (grade them with `itbench evaluate`)
CISO_TASKS_RUN = tuple(c.task for c in TASK_CLASSES.values() if c.runnable)
POLICY_KINDS = (("kyverno.io/v1", "ClusterPolicy"), ("kyverno.io/v1", "Policy"))  # what a CISO agent deploys


# the tasks graded on the agent's answer (runtime/evaluator.py ANSWER_TASKS); the others read the state
ANSWER_TASKS = ("diagnose", "detect", "localize", "analyze")


def answer_files(spec: dict, domain: str) -> dict[str, str]:
    """task -> the answer file the agent writes for it, for the tasks of an evaluator's `spec` graded on an
    answer (the spec's `answers`; the domain's submission for `diagnose`): what a run keeps of the agent's
    folder and what the engine exports carry to their evaluation."""
    tasks = list(spec.get("tasks") or [])
    out = {t: n for t, n in (spec.get("answers") or {}).items() if t in tasks and isinstance(n, str)}
    if "diagnose" in tasks and SUBMISSION.get(domain):
        out.setdefault("diagnose", SUBMISSION[domain])
    return {t: n for t, n in out.items() if t in ANSWER_TASKS}


def evaluator_inputs(tasks, task: str | None = None, folder: bool = False) -> list[tuple[str, str]]:
    """The options of one evaluator.py run grading `task` (None: every task of `tasks` in one run; `folder`: the
    bundle's evaluator reads a work folder, its spec has `answers`), as (option, input): `submission` (the
    domain's answer file), `folder` (the agent's), `state`, `injected_at` (when the fault was injected: what
    detect times against) and `answered_at` (when the harness saw the detection answer appear). `itbench run`
    and the engine exports grade with these; a caller leaves out a time it has no record of."""
    graded = [task] if task is not None else list(tasks)
    read = [t for t in graded if t in ANSWER_TASKS]
    out: list[tuple[str, str]] = []
    if read:
        out.append(("--agent-output", "submission" if read == ["diagnose"] and (task or not folder) else "folder"))
    out.append(("--state", "state"))
    if "detect" in graded:
        out += [("--injected-at", "injected_at"), ("--answered-at", "answered_at")]
    return out


# how a run captures the state after the agent (`itbench run`'s defaults, and what the engine exports do):
STABLE_FOR = 60.0  # seconds the fix runs, observed, before the capture (--stable-for)
ALERT_POLL = 10.0  # seconds between looks at Prometheus, and between observations (--alert-poll)
OBSERVATIONS = 12  # earlier captures of the workloads while the fix runs, at most
MITIGATION_POLL = 2.0  # seconds between captures graded while waiting for the mitigation to hold


def alert_scopes_of(scenario_json: dict) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """Per expected alert, the namespaces of its targets (scenario.json `alerts[].target`): where it must fire."""
    scopes: dict[str, set[str]] = {}
    for alert in scenario_json.get("alerts") or []:
        target = alert.get("target") or {}
        scopes.setdefault(alert["name"], set()).update([target["namespace"]] if target.get("namespace") else [])
    return tuple((n, tuple(sorted(scopes[n]))) for n in sorted(scopes))


def mitigation_window_of(scenario_json: dict) -> float | None:
    """The declared window of the mitigation (scenario.json `mitigation`: `mitigated when within D` and the
    predicates' own `within`, the longest): how long after the agent a run waits for the checks to hold."""
    mitigation = scenario_json.get("mitigation") or {}
    windows = [w for w in [mitigation.get("within_seconds"),
                           *((p or {}).get("within_seconds") for p in mitigation.get("predicates") or [])]
               if isinstance(w, (int, float)) and not isinstance(w, bool) and w > 0]
    return float(max(windows)) if windows else None


class BundleError(ValueError):
    """A bundle that cannot be run: the message names the file and what is wrong."""


@dataclass(frozen=True)
class Phase:
    name: str
    title: str
    applies: tuple[str, ...] = ()  # bundle files whose objects the phase applies (server-side apply)
    deletes: tuple[str, ...] = ()  # bundle files whose objects the phase deletes
    reads: tuple[str, ...] = ()  # what else the phase reads (bundle files, services)
    always: bool = False  # runs after a failure, a timeout or an interruption too
    cluster: bool = True  # talks to the cluster


PHASES: tuple[Phase, ...] = (
    Phase("preflight", "check the cluster: API, kinds, controllers, rights",
          reads=("manifests/*.yaml", "inject/apply.yaml", "inject/delete.yaml",
                 "revert/apply.yaml", "revert/delete.yaml", "scenario.json", "evaluator.py --requirements")),
    Phase("deploy", "deploy the topology and the agent's access; wait until ready",
          applies=("manifests/topology.yaml", "manifests/*.yaml")),
    Phase("baseline", "record the alerts already firing", reads=("prometheus:/api/v1/alerts",)),
    Phase("inject", "inject the faults (with their waiters)", applies=("inject/apply.yaml",),
          deletes=("inject/recreate.yaml", "inject/delete.yaml"), reads=("scenario.json", "inject/exec.json")),
    Phase("alerts", "wait for the expected alerts", reads=("scenario.json", "prometheus:/api/v1/alerts")),
    Phase("handover", "mint the agent's token; write its kubeconfig and prompt", reads=("prompt.md", "scenario.json")),
    Phase("agent", "run the agent with its time budget", cluster=False),
    Phase("snapshot", "capture the state the evaluator reads", reads=("evaluator.py --requirements",
                                                                       "prometheus:/api/v1/alerts", "pods/exec")),
    Phase("evaluate", "grade with the bundle's evaluator.py", reads=("evaluator.py",), cluster=False),
    Phase("revert", "revert the faults", applies=("revert/apply.yaml",),
          deletes=("revert/recreate.yaml", "revert/delete.yaml"),
          reads=("inject/apply.yaml", "revert/exec.json"), always=True),
    Phase("verify", "check the topology is healthy again", reads=("manifests/topology.yaml",), always=True),
    Phase("undeploy", "delete what the deploy created", deletes=("manifests/*.yaml", "manifests/topology.yaml"),
          always=True),
)
PHASE_NAMES: tuple[str, ...] = tuple(p.name for p in PHASES)
PHASE = {p.name: p for p in PHASES}


@dataclass(frozen=True)
class Ref:
    api_version: str
    kind: str
    namespace: str | None
    name: str

    @property
    def group(self) -> str:
        return self.api_version.rpartition("/")[0]

    @property
    def version(self) -> str:
        return self.api_version.rpartition("/")[2]

    def __str__(self) -> str:
        return f"{self.namespace or ''}/{self.kind}/{self.name}"

    @classmethod
    def of(cls, obj: dict) -> "Ref":
        meta = obj.get("metadata") or {}
        return cls(obj["apiVersion"], obj["kind"], meta.get("namespace"), meta["name"])

    @classmethod
    def from_json(cls, data: dict) -> "Ref":
        return cls(data["api_version"], data["kind"], data.get("namespace"), data["name"])


@dataclass(frozen=True)
class Waiter:
    kind: str  # restart | scale | delete_pods | pause | redeploy (faults/waiters.py)
    when: str  # before | after
    target: Ref
    args: dict


@dataclass(frozen=True)
class ExecStep:
    """A command run in one ready pod of a workload: a step of inject/exec.json or revert/exec.json
    (docs/fault-kinds.md, exec), or a probe of the evaluator's spec (`name` set)."""

    workload: Ref
    container: str
    command: tuple[str, ...]
    fault: str = ""  # the fault kind whose step it is
    name: str = ""  # the probe's name

    def describe(self) -> str:
        text = " ".join(self.command)
        return f"{'probe ' + self.name + ' ' if self.name else ''}in {self.workload} container {self.container}: " \
               f"{text[:120]}{'...' if len(text) > 120 else ''}"


@dataclass(frozen=True)
class Bundle:
    path: Path
    scenario: str
    domain: str
    topology: tuple[dict, ...]  # manifests/topology.yaml
    access: tuple[dict, ...]  # every other manifests/*.yaml, by file name (the agent's access, alert rules)
    inject_apply: tuple[dict, ...]
    inject_delete: tuple[dict, ...]
    revert_apply: tuple[dict, ...]
    revert_delete: tuple[dict, ...]
    waiters: tuple[Waiter, ...]
    alerts: tuple[str, ...]  # the alert names the scenario expects to fire
    service_account: Ref | None  # the agent's
    requires: dict  # evaluator.py --requirements: captured ("ns/Kind"), alerts, policyReports, tasks
    inject_exec: tuple[ExecStep, ...] = ()  # inject/exec.json
    revert_exec: tuple[ExecStep, ...] = ()  # revert/exec.json (already in reverse order)
    probes: tuple[ExecStep, ...] = ()  # the probes the evaluator reads (`requires.probes`)
    # inject/recreate.yaml, revert/recreate.yaml: deleted (and gone) before the phase's apply creates them again
    inject_recreate: tuple[dict, ...] = ()
    revert_recreate: tuple[dict, ...] = ()
    # the nodes a fault cordons (scenario.json `faults[].injections[].cordoned`): cordoned before inject/apply.yaml
    # and uncordoned after revert/apply.yaml, since nodes are no objects of the bundle
    cordoned: tuple[str, ...] = ()
    # per expected alert, the namespaces of its targets (scenario.json `alerts[].target`): where it must fire
    alert_scopes: tuple[tuple[str, tuple[str, ...]], ...] = ()
    # the declared window of the mitigation (scenario.json `mitigation`: `mitigated when within D` and the
    # predicates' own `within`, the longest): how long after the agent a run waits for the checks to hold
    mitigation_window: float | None = None

    @property
    def workloads(self) -> list[Ref]:
        return [Ref.of(o) for o in self.topology if o["kind"] in WORKLOAD_KINDS]

    def alert_wait(self) -> float:
        """The least time the alerts phase must wait for every expected alert to be seen firing: per expected alert,
        the shortest of its rules in the bundle's PrometheusRules (alerts.seconds_to_fire: its `for` and an
        evaluation's margin); 0 when no rule can be told."""
        from ..alerts import rule_hold, seconds_to_fire

        rules: dict[str, list] = {}
        for obj in self.access:
            if obj.get("kind") != "PrometheusRule":
                continue
            for group in (obj.get("spec") or {}).get("groups") or []:
                for rule in group.get("rules") or []:
                    if rule.get("alert") in self.alerts:
                        rules.setdefault(rule["alert"], []).append(rule_hold(str(rule.get("expr", "")),
                                                                             str(rule.get("for") or "")))
        waits = [seconds_to_fire(holds) for holds in rules.values() if holds and None not in holds]
        return max(waits, default=0.0)

    def objects(self) -> list[dict]:
        return [*self.topology, *self.access, *self.inject_apply, *self.inject_delete, *self.revert_apply,
                *self.revert_delete]

    def created(self) -> list[dict]:
        """Objects inject/apply.yaml creates that neither the topology nor revert/apply.yaml hold: the
        revert deletes them (revert/delete.yaml lists the compiler's; this catches every other)."""
        kept = {Ref.of(o) for o in (*self.topology, *self.access, *self.revert_apply)}
        seen, out = set(), []
        for obj in (*self.revert_delete, *self.inject_apply):
            ref = Ref.of(obj)
            if ref not in kept and ref not in seen:
                seen.add(ref)
                out.append(obj)
        return out



# ---- prerequisites --------------------------------------------------------------------------------------

# API groups a cluster serves without add-ons; any other group is an add-on's CRD.
BUILTIN_GROUPS = frozenset({
    "", "apps", "batch", "autoscaling", "policy", "networking.k8s.io", "rbac.authorization.k8s.io",
    "storage.k8s.io", "scheduling.k8s.io", "coordination.k8s.io", "node.k8s.io", "discovery.k8s.io",
    "apiextensions.k8s.io", "admissionregistration.k8s.io", "certificates.k8s.io", "events.k8s.io",
})


@dataclass(frozen=True)
class Addon:
    name: str
    groups: tuple[str, ...]  # API groups whose kinds it serves
    labels: tuple[str, ...]  # object label keys that need it (a namespace joining the mesh)
    controller: str  # a label selector of its controller's Deployments, in any namespace
    install: str  # one line: how to install it


ADDONS: tuple[Addon, ...] = (
    Addon("Chaos Mesh", ("chaos-mesh.org",), (), "app.kubernetes.io/component=controller-manager,"
          "app.kubernetes.io/instance=chaos-mesh",
          "helm install chaos-mesh chaos-mesh/chaos-mesh -n chaos-mesh --create-namespace"),
    Addon("Istio", ("networking.istio.io", "security.istio.io", "telemetry.istio.io"),
          ("istio.io/dataplane-mode", "istio-injection", "istio.io/rev"), "app=istiod",
          "istioctl install --set profile=ambient -y"),
    Addon("Kyverno", ("kyverno.io", "wgpolicyk8s.io"), (), "app.kubernetes.io/part-of=kyverno",
          "helm install kyverno kyverno/kyverno -n kyverno --create-namespace"),
    Addon("Prometheus operator", ("monitoring.coreos.com",), (), "app.kubernetes.io/name=prometheus-operator",
          "helm install kube-prometheus-stack prometheus-community/kube-prometheus-stack -n monitoring "
          "--create-namespace"),
)


@dataclass(frozen=True)
class Prerequisite:
    what: str  # "kind" | "controller" | "prometheus"
    name: str  # "chaos-mesh.org/v1alpha1 Schedule", "Chaos Mesh", "Prometheus"
    detail: str  # what it is for / how to get it
    addon: str | None = None
    api_version: str | None = None
    kind: str | None = None
    selector: str | None = None


def requirements(bundle: Bundle) -> list[Prerequisite]:
    """What the cluster must offer: every kind the bundle's objects use (served, by discovery), the
    controller of every add-on those kinds or labels need, and Prometheus when alerts are read."""
    out: list[Prerequisite] = []
    kinds = sorted({(o["apiVersion"], o["kind"]) for o in bundle.objects()})
    addons: dict[str, Addon] = {}
    for api_version, kind in kinds:
        group = api_version.rpartition("/")[0]
        addon = next((a for a in ADDONS if group in a.groups), None)
        if addon is not None:
            addons[addon.name] = addon
        out.append(Prerequisite("kind", f"{api_version} {kind}",
                                addon.install if addon else ("built in" if group in BUILTIN_GROUPS else
                                                             "a CustomResourceDefinition of this group"),
                                addon.name if addon else None, api_version, kind))
    for obj in bundle.objects():
        labels = (obj.get("metadata") or {}).get("labels") or {}
        for addon in ADDONS:
            if any(key in labels for key in addon.labels):
                addons.setdefault(addon.name, addon)
    for addon in sorted(addons.values(), key=lambda a: a.name):
        out.append(Prerequisite("controller", addon.name, addon.install, addon.name, selector=addon.controller))
    if bundle.requires.get("policyReports"):  # the agent deploys a Kyverno policy; Kyverno reports on it
        kyverno = next(a for a in ADDONS if a.name == "Kyverno")
        for api_version, kind in (*POLICY_KINDS, ("wgpolicyk8s.io/v1alpha2", "PolicyReport")):
            if not any(p.api_version == api_version and p.kind == kind for p in out):
                out.append(Prerequisite("kind", f"{api_version} {kind}", kyverno.install, kyverno.name, api_version,
                                        kind))
        if kyverno.name not in addons:
            out.append(Prerequisite("controller", kyverno.name, kyverno.install, kyverno.name,
                                    selector=kyverno.controller))
    if bundle.alerts or bundle.requires.get("alerts"):
        out.append(Prerequisite("prometheus", "Prometheus", "the scenario's alerts are read from Prometheus's "
                                "HTTP API: give --prometheus URL"))
    return out


# ---- reading a bundle -----------------------------------------------------------------------------------


def _yaml_documents(path: Path) -> tuple[dict, ...]:
    if not path.is_file():
        return ()
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        docs = [d for d in yaml.load_all(path.read_text(encoding="utf-8"), Loader=loader) if d is not None]
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise BundleError(f"{path}: not readable YAML: {str(exc)[:300]}") from exc
    for index, doc in enumerate(docs, 1):
        if not (isinstance(doc, dict) and isinstance(doc.get("apiVersion"), str) and isinstance(doc.get("kind"), str)
                and isinstance((doc.get("metadata") or {}).get("name"), str)):
            raise BundleError(f"{path}: document {index} is not a Kubernetes object (apiVersion, kind, "
                              "metadata.name)")
    return tuple(docs)


def load_bundle(path: str | Path, requirements_timeout: float = 60.0, runnable: bool = True) -> Bundle:
    """Read a compiled bundle (the folder `itbench compile` writes). Runs `evaluator.py --requirements`
    (the evaluator's own statement of what a state must hold). With `runnable`, refuse a bundle of a
    domain `itbench run` does not run (DOMAINS_RUN)."""
    root = Path(path)
    scenario_file = root / "scenario.json"
    if not root.is_dir():
        raise BundleError(f"{root}: no such bundle folder")
    if not scenario_file.is_file():
        raise BundleError(f"{root}: not a bundle (no scenario.json); compile the scenario with `itbench compile`")
    try:
        data = json.loads(scenario_file.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise BundleError(f"{scenario_file}: not readable JSON: {str(exc)[:300]}") from exc
    try:
        domain = data["domain"]
        waiters = tuple(Waiter(w["kind"], w["when"], Ref.from_json(w["target"]), dict(w.get("args") or {}))
                        for group in data.get("faults") or [] for w in group.get("waiters") or [])
        alerts = tuple(sorted({a["name"] for a in data.get("alerts") or []}))
        cordoned = tuple(dict.fromkeys(str(node) for group in data.get("faults") or []
                                       for injection in group.get("injections") or []
                                       for node in injection.get("cordoned") or []))
        alert_scopes = alert_scopes_of(data)
        window = mitigation_window_of(data)
        agent = data.get("agent") or {}
        namespaces = agent.get("namespaces") or []
        account = (Ref("v1", "ServiceAccount", namespaces[0], agent["service_account"])
                   if agent.get("service_account") and namespaces else None)
        name = data["name"]
    except (KeyError, TypeError, AttributeError) as exc:
        raise BundleError(f"{scenario_file}: not the scenario.json of this compiler ({exc!r} missing or malformed); "
                          "compile the scenario again") from exc
    if runnable and domain not in DOMAINS_RUN:
        raise BundleError(f"{root}: a {domain} bundle: `itbench run` runs {', '.join(DOMAINS_RUN)} scenarios")
    task = (data.get("compliance") or {}).get("task") if domain == "ciso" else None
    if runnable and domain == "ciso" and task not in CISO_TASKS_RUN:
        raise BundleError(f"{root}: a CISO bundle of task `{task}`: `itbench run` runs the Kyverno tasks "
                          f"({', '.join(CISO_TASKS_RUN)}), graded from the PolicyReports Kyverno writes; Rego and "
                          "Ansible tasks need a policy engine or hosts a run does not set up: grade the agent's "
                          "artefact with `itbench evaluate BUNDLE --artifact FILE`")
    requires = evaluator_requirements(root, requirements_timeout)
    return Bundle(
        path=root, scenario=name, domain=domain,
        topology=_yaml_documents(root / "manifests" / "topology.yaml"),
        access=tuple(obj for path in sorted((root / "manifests").glob("*.yaml")) if path.name != "topology.yaml"
                     for obj in _yaml_documents(path)),
        inject_apply=_yaml_documents(root / "inject" / "apply.yaml"),
        inject_delete=_yaml_documents(root / "inject" / "delete.yaml"),
        revert_apply=_yaml_documents(root / "revert" / "apply.yaml"),
        revert_delete=_yaml_documents(root / "revert" / "delete.yaml"),
        inject_recreate=_yaml_documents(root / "inject" / "recreate.yaml"),
        revert_recreate=_yaml_documents(root / "revert" / "recreate.yaml"),
        waiters=waiters, alerts=alerts, service_account=account, requires=requires,
        inject_exec=_exec_steps(root / "inject" / "exec.json"), revert_exec=_exec_steps(root / "revert" / "exec.json"),
        probes=_probes(root, requires), alert_scopes=alert_scopes, mitigation_window=window, cordoned=cordoned,
    )


def _exec_step(where: str, step, name: str = "") -> ExecStep:
    """One step of an exec.json (or a probe of the spec): namespace, workload {kind, name}, container, command."""
    try:
        workload, command = step["workload"], step["command"]
        if workload["kind"] not in WORKLOAD_KINDS or not isinstance(workload["name"], str) \
                or not isinstance(step["namespace"], str) or not isinstance(step["container"], str) \
                or not isinstance(command, list) or not command or not all(isinstance(p, str) for p in command):
            raise TypeError
        return ExecStep(Ref("apps/v1", workload["kind"], step["namespace"], workload["name"]), step["container"],
                        tuple(command), str(step.get("fault") or ""), name)
    except (KeyError, TypeError):
        raise BundleError(f"{where}: not a step of this compiler ({{namespace, workload: {{kind, name}}, container, "
                          "command: [...]}}, the workload a Deployment, StatefulSet or DaemonSet); compile the "
                          "scenario again") from None


def _exec_steps(path: Path) -> tuple[ExecStep, ...]:
    if not path.is_file():
        return ()
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise BundleError(f"{path}: not readable JSON: {str(exc)[:300]}") from exc
    if not isinstance(data, dict) or data.get("version") != 1 or not isinstance(data.get("steps"), list):
        raise BundleError(f'{path}: not an exec file of this compiler (`{{"version": 1, "steps": [...]}}`)')
    return tuple(_exec_step(f"{path}: step {index}", step) for index, step in enumerate(data["steps"], 1))


def _probes(root: Path, requires: dict) -> tuple[ExecStep, ...]:
    """The probes the evaluator reads (`requires.probes`), from its spec (read as data, never executed)."""
    names = requires.get("probes") or []
    if not names:
        return ()
    from ..backends.evaluator_file import spec_of

    try:
        spec = spec_of((root / "evaluator.py").read_text("utf-8"))
    except (OSError, UnicodeDecodeError):
        spec = None
    declared = spec.get("probes") if isinstance(spec, dict) else None
    if not isinstance(declared, dict) or not all(isinstance(n, str) and n in declared for n in names):
        raise BundleError(f"{root / 'evaluator.py'}: its mitigation reads probes ({', '.join(map(str, names))}) "
                          "its spec does not declare; compile the scenario again")
    return tuple(_exec_step(f"{root / 'evaluator.py'}: probe {name}", declared[name], name) for name in names)


def evaluator_requirements(root: Path, timeout: float = 60.0) -> dict:
    """`evaluator.py --requirements` of a bundle (docs/evaluator.md). An evaluator that is exactly what this
    version writes for its spec is answered in process (its spec read as data, never executed); any other is
    run with this Python."""
    script = root / "evaluator.py"
    if not script.is_file():
        raise BundleError(f"{root}: no evaluator.py; compile the scenario again")
    from ..backends.evaluator_file import source_for_spec, spec_of
    from ..runtime.evaluator import requirements as runtime_requirements

    try:
        text = script.read_text("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise BundleError(f"{script}: cannot read: {exc}") from exc
    spec = spec_of(text)
    if spec is not None and source_for_spec(spec) == text:
        return runtime_requirements(spec)
    try:
        proc = subprocess.run([sys.executable, "-S", str(script), "--requirements"], capture_output=True, text=True,
                              timeout=timeout, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise BundleError(f"{script}: cannot run --requirements: {exc}") from exc
    try:
        data = json.loads(proc.stdout) if proc.returncode == 0 else None
    except ValueError:
        data = None
    if not isinstance(data, dict) or not isinstance(data.get("captured"), list):
        raise BundleError(f"{script} --requirements failed: {(proc.stderr or proc.stdout).strip()[:300]}")
    return data


def captured_kinds(bundle: Bundle) -> list[tuple[str, str]]:
    """(namespace, Kind) pairs the state must hold ("" namespace: a cluster-scoped kind)."""
    out = []
    for entry in bundle.requires["captured"]:
        namespace, _, kind = entry.partition("/")
        out.append((namespace, kind))
    return out


# ---- the plan -------------------------------------------------------------------------------------------


def object_path(ref: Ref, resource: str | None = None, name: bool = True) -> str:
    base = f"/api/{ref.version}" if not ref.group else f"/apis/{ref.api_version}"
    where = f"/namespaces/{ref.namespace}" if ref.namespace else ""
    return f"{base}{where}/{resource or plural(ref.kind)}" + (f"/{ref.name}" if name else "")


@dataclass(frozen=True)
class Step:
    phase: str
    action: str
    ref: Ref | None = None
    detail: dict = field(default_factory=dict)

    def request(self) -> str:
        """The HTTP request(s) of the step, as the API sees it (resource names as discovery usually has them)."""
        r = self.ref
        if self.action == "apply":
            return f"PATCH {object_path(r)}?fieldManager={FIELD_MANAGER}&force=true ({APPLY_CONTENT_TYPE})"
        if self.action == "delete":
            return f"DELETE {object_path(r)}?propagationPolicy=Background (404: already gone)"
        if self.action in ("wait-ready", "wait-gone"):
            return f"GET {object_path(r, name=False)}, then ?watch=true&resourceVersion=<the list's>"
        if self.action in ("cordon", "uncordon"):
            return f"PATCH /api/v1/nodes/{r.name} (strategic merge: spec.unschedulable={self.action == 'cordon'})"
        if self.action == "waiter":
            kind = self.detail["kind"]
            if kind == "restart":
                return f"PATCH {object_path(r)} (strategic merge: restartedAt annotation)"
            if kind == "scale":
                return f"PATCH {object_path(r)}/scale (replicas={self.detail['args'].get('replicas')})"
            if kind == "delete_pods":
                return f"DELETE /api/v1/namespaces/{r.namespace}/pods?labelSelector=<{r.kind} selector>"
            return f"sleep {self.detail['args'].get('seconds', 0)} s"
        if self.action == "version":
            return "GET /version"
        if self.action == "discover":
            return f"GET /apis/{self.detail['api_version']}" if "/" in self.detail["api_version"] else "GET /api/v1"
        if self.action == "controller":
            return f"GET /apis/apps/v1/deployments?labelSelector={self.detail['selector']}"
        if self.action == "access-review":
            return "POST /apis/authorization.k8s.io/v1/selfsubjectaccessreviews"
        if self.action == "token":
            return f"POST /api/v1/namespaces/{r.namespace}/serviceaccounts/{r.name}/token"
        if self.action in ("alerts", "await-alerts", "prometheus"):
            return f"GET {(self.detail.get('prometheus') or '{prometheus}').rstrip('/')}/api/v1/alerts"
        if self.action == "capture":
            return f"GET {self.detail['path']}"
        if self.action in ("exec", "probe"):
            return (f"GET /api/v1/namespaces/{r.namespace}/pods/<a ready pod of {r.kind.lower()} {r.name}>/exec?"
                    f"container={self.detail['container']}&command=...&stdout=true&stderr=true "
                    f"(websocket, {EXEC_PROTOCOL})")
        return ""

    def describe(self) -> str:
        target = f" {self.ref}" if self.ref else ""
        extra = self.detail.get("what") or ""
        return f"{self.action}{target}" + (f" ({extra})" if extra else "")


@dataclass(frozen=True)
class PlanOptions:
    keep: bool = False
    prometheus: str | None = None
    agent: str = ""
    agent_timeout: float = 1800.0


def access_checks(bundle: Bundle) -> list[tuple[str, str, str, str | None]]:
    """(verb, group, resource, namespace) the caller needs: what the run applies, deletes, waits on and
    captures, and the agent's token."""
    checks: list[tuple[str, str, str, str | None]] = []

    def need(verb, group, resource, namespace):
        if (verb, group, resource, namespace) not in checks:
            checks.append((verb, group, resource, namespace))

    for obj in bundle.objects():
        ref = Ref.of(obj)
        for verb in ("get", "patch", "create", "delete"):
            need(verb, ref.group, plural(ref.kind), ref.namespace)
    for ref in bundle.workloads:
        need("list", ref.group, plural(ref.kind), ref.namespace)
        need("watch", ref.group, plural(ref.kind), ref.namespace)
    for waiter in bundle.waiters:
        if waiter.kind == "delete_pods":
            need("deletecollection", "", "pods", waiter.target.namespace)
    if bundle.cordoned:
        need("get", "", "nodes", None)
        need("patch", "", "nodes", None)
    for namespace, kind in captured_kinds(bundle):
        need("list", _group_of(bundle, kind), plural(kind), namespace or None)
    for step in (*bundle.inject_exec, *bundle.revert_exec, *bundle.probes):  # a ready pod of the workload, exec'd
        need("get", step.workload.group, plural(step.workload.kind), step.workload.namespace)
        need("list", "", "pods", step.workload.namespace)
        need("create", "", "pods/exec", step.workload.namespace)
    if bundle.service_account is not None:
        need("create", "", "serviceaccounts/token", bundle.service_account.namespace)
    return checks


def _group_of(bundle: Bundle, kind: str) -> str:
    for obj in bundle.objects():
        if obj["kind"] == kind:
            return obj["apiVersion"].rpartition("/")[0]
    return "apps" if kind in (*WORKLOAD_KINDS, "ReplicaSet") else ""


def plan(bundle: Bundle, options: PlanOptions = PlanOptions()) -> list[Step]:
    """Every step of a run of `bundle`, in order (PHASES)."""
    steps: list[Step] = [Step("preflight", "version")]
    for prereq in requirements(bundle):
        if prereq.what == "kind":
            steps.append(Step("preflight", "discover", detail={"api_version": prereq.api_version, "kind": prereq.kind,
                                                               "what": f"{prereq.api_version} {prereq.kind} served"}))
        elif prereq.what == "controller":
            steps.append(Step("preflight", "controller", detail={"selector": prereq.selector,
                                                                 "what": f"{prereq.name} runs"}))
        else:
            steps.append(Step("preflight", "prometheus", detail={"what": "Prometheus answers",
                                                                 "prometheus": options.prometheus}))
    for verb, group, resource, namespace in access_checks(bundle):
        steps.append(Step("preflight", "access-review", detail={
            "verb": verb, "group": group, "resource": resource, "namespace": namespace,
            "what": f"may {verb} {resource}{'.' + group if group else ''}"
                    + (f" in {namespace}" if namespace else " (cluster)")}))
    for obj in (*bundle.topology, *bundle.access):
        steps.append(Step("deploy", "apply", Ref.of(obj)))
    for ref in bundle.workloads:
        steps.append(Step("deploy", "wait-ready", ref))
    if bundle.alerts or bundle.requires.get("alerts"):
        steps.append(Step("baseline", "alerts", detail={"what": "alerts firing before the injection",
                                                        "prometheus": options.prometheus}))
    for waiter in bundle.waiters:
        if waiter.when == "before":
            steps.append(Step("inject", "waiter", waiter.target, {"kind": waiter.kind, "args": waiter.args,
                                                                  "what": f"before: {waiter.kind}"}))
    for node in bundle.cordoned:
        steps.append(Step("inject", "cordon", node_ref(node), {"what": "the fault's cordon"}))
    for obj in bundle.inject_recreate:
        steps.append(Step("inject", "delete", Ref.of(obj), {"what": "recreated: gone before it is applied"}))
    for obj in bundle.inject_apply:
        steps.append(Step("inject", "apply", Ref.of(obj)))
    for obj in bundle.inject_delete:
        steps.append(Step("inject", "delete", Ref.of(obj)))
    for step in bundle.inject_exec:
        steps.append(_exec_plan_step("inject", step))
    for waiter in bundle.waiters:
        if waiter.when == "after":
            steps.append(Step("inject", "waiter", waiter.target, {"kind": waiter.kind, "args": waiter.args,
                                                                  "what": f"after: {waiter.kind}"}))
    if bundle.alerts:
        steps.append(Step("alerts", "await-alerts", detail={
            "alerts": list(bundle.alerts), "prometheus": options.prometheus,
            "what": "firing, and not as in the baseline: " + ", ".join(bundle.alerts)}))
    if bundle.service_account is not None:
        steps.append(Step("handover", "token", bundle.service_account, {"what": "TokenRequest"}))
    steps.append(Step("handover", "workspace", detail={"what": "kubeconfig.yaml, prompt.md"}))
    steps.append(Step("agent", "agent", detail={"command": options.agent, "timeout": options.agent_timeout,
                                                "what": f"{options.agent!r}, budget {options.agent_timeout:g} s"}))
    if "mitigate" in (bundle.requires.get("tasks") or ()) and bundle.mitigation_window:
        steps.append(Step("snapshot", "await-mitigation", detail={
            "what": f"capture and grade the mitigation until its checks hold, at most {bundle.mitigation_window:g} s "
                    "after the agent (the scenario's `within`)"}))
    for namespace, kind in captured_kinds(bundle):
        ref = Ref(_api_version_of(bundle, kind), kind, namespace or None, "")
        steps.append(Step("snapshot", "capture", detail={"path": object_path(ref, name=False),
                                                         "what": f"{kind} in {namespace or 'the cluster'}"}))
    if bundle.requires.get("alerts"):
        steps.append(Step("snapshot", "alerts", detail={"what": "alerts firing after the agent",
                                                        "prometheus": options.prometheus}))
    for probe in bundle.probes:
        steps.append(_exec_plan_step("snapshot", probe))
    if bundle.requires.get("policyReports"):
        steps.append(Step("snapshot", "policy-reports", detail={
            "what": "Kyverno's PolicyReports, once they cover every object graded (at most --report-timeout)"}))
    steps.append(Step("evaluate", "evaluate", detail={"what": "evaluator.py on state.json" + (
        f" and {SUBMISSION[bundle.domain]}" if bundle.domain in SUBMISSION else " (the PolicyReports)")}))
    for step in bundle.revert_exec:
        steps.append(_exec_plan_step("revert", step))
    for obj in bundle.revert_recreate:
        steps.append(Step("revert", "delete", Ref.of(obj), {"what": "recreated: gone before it is applied"}))
    for obj in bundle.revert_apply:
        steps.append(Step("revert", "apply", Ref.of(obj)))
    for node in bundle.cordoned:
        steps.append(Step("revert", "uncordon", node_ref(node), {"what": "the fault's cordon undone"}))
    for obj in bundle.created():
        steps.append(Step("revert", "delete", Ref.of(obj)))
    for ref in bundle.workloads:
        steps.append(Step("verify", "wait-ready", ref))
    if not options.keep:
        for ref in undeploy_order(bundle):
            steps.append(Step("undeploy", "delete", ref))
        for ref in undeploy_order(bundle):
            if ref.kind == "Namespace":
                steps.append(Step("undeploy", "wait-gone", ref))
    return steps


def node_ref(name: str) -> Ref:
    return Ref("v1", "Node", None, name)


def _exec_plan_step(phase: str, step: ExecStep) -> Step:
    text = " ".join(step.command)
    shown = text[:120] + ("..." if len(text) > 120 else "")
    return Step(phase, "probe" if step.name else "exec", step.workload,
                {"container": step.container, "command": list(step.command), "name": step.name,
                 "what": (f"{step.name}: " if step.name else "") + f"container {step.container}: {shown}"})


def undeploy_order(bundle: Bundle) -> list[Ref]:
    """What the deploy applied, in reverse order, each object once."""
    out: list[Ref] = []
    for obj in reversed((*bundle.topology, *bundle.access)):
        ref = Ref.of(obj)
        if ref not in out:
            out.append(ref)
    return out


def _api_version_of(bundle: Bundle, kind: str) -> str:
    for obj in bundle.objects():
        if obj["kind"] == kind:
            return obj["apiVersion"]
    return "apps/v1" if kind in (*WORKLOAD_KINDS, "ReplicaSet") else "v1"


def render_plan(bundle: Bundle, steps: list[Step]) -> str:
    lines = [f"# itbench run {bundle.path} ({bundle.scenario}): {len(steps)} steps"]
    phase = None
    for number, step in enumerate(steps, 1):
        if step.phase != phase:
            phase = step.phase
            p = PHASE[phase]
            lines.append(f"## {phase}: {p.title}" + (" [always]" if p.always else ""))
        request = step.request()
        lines.append(f"{number:4d}. {step.describe()}" + (f"  -> {request}" if request else ""))
    return "\n".join(lines) + "\n"
