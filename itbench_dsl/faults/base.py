"""The fault library's shared machinery: fault kinds, their inputs and results, and helpers.

Each fault kind of the language maps to one ITBench fault id. Its arguments are read and
checked against the topology at compile time (the preconditions ITBench only discovers on
a cluster), and its injection and revert are computed from the objects the compiler owns:
the exact patched object, or the side object the fault creates, with stable names.
Descriptions, expected alerts and solution templates come from ITBench's own library
entries (vendored in `data/itbench`), so derived ground truth matches ITBench.
"""

from __future__ import annotations

import copy
import functools
import json
import re
from dataclasses import dataclass, field
from importlib import resources
from typing import Callable

from jinja2 import StrictUndefined
from jinja2.sandbox import SandboxedEnvironment

from .. import ast, ir
from ..diagnostics import did_you_mean
from ..reader import Body, Context
from ..topology import Declared, TopologyBuild

CHAOS_NAMESPACE = "chaos-mesh"


@functools.lru_cache(maxsize=None)
def itbench_entry(kind: str, entry_id: str) -> dict:
    """An ITBench library entry (`faults`, `waiters` or `applications`) by id."""
    text = resources.files("itbench_dsl").joinpath(f"data/itbench/{kind}/{entry_id}.json").read_text("utf-8")
    return json.loads(text)


@functools.lru_cache(maxsize=1)
def _template_env() -> SandboxedEnvironment:
    return SandboxedEnvironment(undefined=StrictUndefined, autoescape=False, keep_trailing_newline=False)


@functools.lru_cache(maxsize=None)
def _template(text: str):
    return _template_env().from_string(text)


def render_solutions(kind: "FaultKind", itbench_args: dict, args: dict | None = None) -> list[dict]:
    """A fault's solution templates (ITBench's, or the kind's own), rendered with the injection's arguments:
    `args` in a template is the kind's own arguments (`args`) with ITBench's spelling of them over them
    (`itbench_args`: `kubernetesObject`, ...), so ITBench's templates and a declared kind's both read theirs."""
    itbench_args = solution_context(itbench_args, args)
    templates = list(kind.solutions_for(itbench_args)) if kind.solutions_for is not None else []
    templates = templates or list(kind.solutions)
    if not templates and kind.itbench_id:
        templates = itbench_entry("faults", kind.itbench_id).get("solutions", {}).get("templates", [])
    out = []
    # `kubectl rollout` knows Deployments, StatefulSets and DaemonSets: a Job's, a CronJob's or a bare Pod's
    # solutions are the others
    obj = itbench_args.get("kubernetesObject") if isinstance(itbench_args, dict) else None
    if isinstance(obj, dict) and obj.get("kind") in ("Job", "CronJob", "Pod"):
        templates = [t for t in templates if not any("rollout " in s.get("command", "") for s in t["steps"])] or templates
    for template in templates:
        steps = []
        for step in template["steps"]:
            rendered = {}
            if "command" in step:
                rendered["command"] = _template(step["command"]).render(args=itbench_args)
            rendered["text"] = _template(step["text"]).render(args=itbench_args)
            steps.append(rendered)
        out.append({"steps": steps})
    return out


def solution_context(itbench_args: dict, args: dict | None) -> dict:
    """What `args` holds in a solution template (render_solutions)."""
    return {**(args or {}), **itbench_args}


def library_alerts(kind: "FaultKind") -> list[str]:
    """The alerts a fault raises: ITBench's library entry, or the kind's own list."""
    if kind.alerts or not kind.itbench_id:
        return sorted(kind.alerts)
    alerts = itbench_entry("faults", kind.itbench_id).get("alerts", {})
    return sorted({name for names in alerts.values() for name in names})


def fault_description(kind: "FaultKind") -> str:
    if kind.itbench_id:
        return itbench_entry("faults", kind.itbench_id)["description"]
    return kind.summary


@dataclass
class Effect:
    """What injecting or reverting does: objects to apply, then objects to delete."""

    apply: list  # IR topology objects (rendered by the manifest backend) or finished manifests (dict)
    delete: list[ir.ObjectRef]


@dataclass
class Checked:
    """A fault use that passed its checks: its typed arguments and what it touches."""

    args: dict
    itbench_args: dict
    side_objects: list[ir.ObjectRef] = field(default_factory=list)  # other existing objects it changes
    created: list[ir.ObjectRef] = field(default_factory=list)  # objects it creates (ground truth may name them)
    root: ir.ObjectRef | None = None  # the root cause when it is not the target (a created Schedule, say)
    agent_namespaces: list[str] = field(default_factory=list)  # where the agent must be able to act
    agent_resources: list[str] = field(default_factory=list)  # what it must be able to read and change there
    itbench_id: str | None = None  # this use's ITBench id when it is not the kind's ("": ITBench has no such use)
    # {a created object's name: the name ITBench's own injection task gives it}, where that task fixes the name
    # rather than reading it from scenario.yaml: ITBench's files must name what an ITBench run creates
    itbench_names: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Acceptance:
    """Another right value of a field a fault changes, for faults where restoring the field's healthy
    value is not the only fix (scaling back to more replicas than before, raising a limit above it).

    `path` is a regular expression over the field's dotted path with list selectors left out
    (`spec.template.spec.containers.resources.limits.memory`); `op` compares the observed value with
    `value`, where `"healthy"` stands for the field's healthy value: `==`, `!=`, `<`, `<=`, `>`,
    `>=`, `present` (any value), `changed` (any value but the fault's, or none) or `any` (anything,
    or nothing). With `changed` and `any` the workload's observed readiness is what tells the fix.
    The evaluator checks every other changed field against its healthy value (docs/evaluator.md)."""

    path: str
    op: str
    value: object = "healthy"


@dataclass(frozen=True)
class Arg:
    """One argument of a fault, for its documentation page (checks live in the fault's code).

    `program`: the argument's value means something only inside the target's program (a Java class or
    method, a Byteman rule, an HTTP path of its API): the same value on a workload that runs another
    image acts on nothing, so the fault cannot be moved to one (the retarget generator skips it)."""

    name: str
    type: str
    required: bool = False
    default: str = ""
    help: str = ""
    program: bool = False


def program_args(kind: "FaultKind") -> frozenset[str]:
    """The names of a kind's arguments tied to its target's program (`class / method` is two names)."""
    return frozenset(n.strip() for a in kind.args if a.program for n in a.name.split("/"))


@dataclass(frozen=True)
class FaultKind:
    name: str
    itbench_id: str | None  # None for faults ITBench does not have
    mechanism: str  # what the fault does; two kinds with one mechanism are duplicates
    targets: tuple[str, ...]  # language object kinds
    summary: str
    check: Callable[["FaultInput"], Checked | None]
    inject: Callable[[ir.Injection, ir.Topology], Effect]
    revert: Callable[[ir.Injection, ir.Topology], Effect]
    domains: tuple[str, ...] = ("sre",)
    args: tuple[Arg, ...] = ()
    preconditions: tuple[str, ...] = ()  # each one a sentence, for the documentation page
    creates: str = ""  # what the fault creates, for the documentation page
    app_options: dict = field(default_factory=dict)  # ITBench application options the fault needs
    # For faults ITBench does not have (itbench_id None); ITBench's own entry is used otherwise:
    alerts: tuple[str, ...] = ()
    solutions: tuple[dict, ...] = ()  # ITBench's template format: {"steps": [{"text", "command"}]}, Jinja2 over `args`
    # waiters the fault needs in its group, from its checked arguments: (waiter kind, target, why), e.g.
    # ("restart", ObjectRef(Deployment flagd), "flagd reads its flags when it starts"); checked by the checker (E2024)
    needs_waiters: Callable[[ir.Injection], list[tuple[str, ir.ObjectRef, str]]] | None = None
    # per use: solution templates chosen from the use's itbench_args (empty: `solutions`, then ITBench's), e.g. a
    # one-shot Chaos Mesh experiment's own solution where the scheduled form uses ITBench's
    solutions_for: Callable[[dict], tuple[dict, ...]] | None = None
    # the other right values of the fields the fault changes (see Acceptance); none: the healthy value only
    accept: tuple["Acceptance", ...] = ()
    # what undoes the fault: "all" of its parts (each field it changed healthy again, each object it created
    # that acts on its own gone), or "any" one of them, for a fault whose parts only harm together (strict
    # mTLS against pods taken out of the mesh: either fix ends it)
    undone_by: str = "all"
    # an option of the target container's program that is the fault's harm (`--requirepass`): the fault acts
    # while the program, its `$(NAME)` expanded from the container's environment, gets the option with a value
    # that is not empty; once it gets none, or an empty one (valkey's `--requirepass ""` asks no password), the
    # fault's changes to that container (the option's arguments, the variables feeding it) are no harm left,
    # whatever they hold, and health.program reads the container's arguments without the option
    harm_option: str = ""
    # the argument naming a node the fault cordons (a step of the runner's): the workload's pods running on it
    # are the fault undone only when the node is uncordoned, never when they are let past the cordon (a
    # toleration of its taint, `nodeName` skipping the scheduler: `cordon_bypassed`)
    cordons: str = ""
    # a kind declared in the language (`fault_kind`, faults/declared.py): its checked declaration
    declared: object = None
    # the analysis labels (system_level, fault_type) the fault gives, when it has one reading (a declared kind's
    # `analysis` block); None: the scenario's `analysis` block says them (a chaos experiment's depend on its action)
    labels: tuple[str, str] | None = None
    # what the fault shows (SYMPTOMS): a scenario whose faults show nothing `kubectl get` sees must expect an
    # alert or run a probe, or its task cannot be answered by observation (W2015, faults/symptoms.py)
    symptoms: tuple[str, ...] = ()
    # how the fault leaves the pods of the workload it targets (one of POD_EFFECTS), for the states derived
    # for self-validation; "" leaves them ready (only the alerts tell the fault). A function of the use's
    # arguments where they decide it (a PodChaos action).
    readiness: "str | Callable[[dict], str]" = ""
    # arguments ITBench's scenario.yaml has no field for: what ITBench's injection task applies whatever the scenario
    # says, in the argument's checked form (None: no value of the argument says it); an export whose use differs
    # runs another fault than the one its ground truth grades (W3002); a dotted key reads inside the checked arguments
    # (`probe.httpGet.port`: the argument `port`, which the checked form keeps in its probe)
    itbench_injects: dict = field(default_factory=dict)

    def pod_effect(self, args: dict) -> str:
        """The readiness effect of one use of the kind (its checked arguments)."""
        return self.readiness(args) if callable(self.readiness) else self.readiness

    def __reduce_ex__(self, protocol):
        # `check --jobs` sends compile results (whose injections carry their kinds) between processes: a kind
        # of the library travels by name; a project's own kind, which no library holds, by value
        if LIBRARY.get(self.name) is self:
            return library_kind, (self.name,)
        return super().__reduce_ex__(protocol)


# The fault library (faults.FAULTS), filled once when the package builds it; nothing else writes to it.
LIBRARY: dict[str, FaultKind] = {}


def library_kind(name: str) -> FaultKind:
    """A kind of the library by name (how a pickled library kind is read back)."""
    return LIBRARY[name]


# What a fault can do to the pods of the workload it targets (FaultKind.readiness):
POD_EFFECTS = {
    "image": "Pending, the container waiting in ImagePullBackOff",
    "crash": "Running, the container waiting in CrashLoopBackOff, not ready",
    "init": "Pending, an init container never completes",
    "unready": "Running, the containers running but the readiness probe failing",
    "pending": "Pending, not scheduled",
    "absent": "the pods beyond the count that ran when the fault began are not created (a quota refuses them); a rollout that deletes the running pods first (a StatefulSet, a `Recreate` Deployment) leaves none",
    "pending-new": "the pods beyond the original replica count stay Pending (the rest keep running)",
}


# What a fault may show, and whether `kubectl get` shows it without an alert or a probe (W2015)
SYMPTOMS = {
    "readiness": True,  # the target's pods stop being ready, or the workload has fewer available replicas
    "restarts": True,  # its containers restart (CrashLoopBackOff, OOMKilled)
    "scheduling": True,  # its pods stay Pending, or are refused at admission
    "endpoints": True,  # a Service selects no ready pod
    "scaling": True,  # an autoscaler scales the workload away from what it needs
    "requests": False,  # requests through it fail: an alert or a probe measures them
    "latency": False,  # requests through it slow down
    "access": False,  # a subject is refused what it used to be allowed
    "cost": False,  # resources are spent for nothing (FinOps)
}


@dataclass
class FaultInput:
    """Everything a fault's check needs: where to report, the arguments, the resolved target."""

    ctx: Context
    body: Body
    fault: ast.Fault
    target: ir.ObjectRef
    obj: object  # the IR object of the target (Workload, Service, ...)
    build: TopologyBuild
    scenario_name: str
    document: ast.Scenario | None = None  # the whole scenario, for checks that read other statements (FinOps optima)
    # what the faults before this one create: (language kind, name) -> its reference (application_name)
    created: dict = field(default_factory=dict)

    def error(self, code: str, message: str, span=None, label: str = "", help: str = "") -> None:
        self.ctx.error(code, message, span or self.fault.span, label, help)


# An object a fault creates carries no label or annotation of the harness: it must look like the application's
# own objects, or `kubectl get ... -l <marker>` finds the fault. The harness knows what it created from its own
# record: the bundle's inject/ and revert/ files (a revert deletes exactly what they list) and the run's timeline.

# Kinds of objects faults may create, by the name references use (`schedule "x"`).
CREATABLE_KINDS: dict[str, tuple[str, str]] = {
    "schedule": ("chaos-mesh.org/v1alpha1", "Schedule"),
    # kinds a declared fault kind may create (`create "limitrange" "NAME" { ... }`, faults/declared.py)
    "limitrange": ("v1", "LimitRange"),
    "poddisruptionbudget": ("policy/v1", "PodDisruptionBudget"),
    "job": ("batch/v1", "Job"),
    "validatingwebhookconfiguration": ("admissionregistration.k8s.io/v1", "ValidatingWebhookConfiguration"),
    "mutatingwebhookconfiguration": ("admissionregistration.k8s.io/v1", "MutatingWebhookConfiguration"),
}
# the kinds above (and the topology's) that have no namespace
CLUSTER_SCOPED_CREATABLE = frozenset({"priorityclass", "validatingwebhookconfiguration", "mutatingwebhookconfiguration"})


# ---- objects a fault creates, for the statements after it -----------------------------------------


@dataclass
class Created(Declared):
    """An object of a topology kind (a Secret, a ConfigMap) that a fault creates and the application lacks,
    declared once the fault is checked: the faults after it may target it, and ground truth may name it,
    as they do the topology's objects (ITBench's injections act on what an earlier one created: the Secret
    `valkey-credentials` of `valkey-workload-changed-password`, say). It is not part of the installed
    topology: the creating fault's injection applies it and its revert deletes it."""

    fault: str = ""  # the fault kind that creates it
    manifest: dict = field(default_factory=dict)  # what that injection applies
    readers: tuple[str, ...] = ()  # the workloads that injection makes read it


_CREATED_KINDS = {"Secret": "secret", "ConfigMap": "configmap"}  # IR class -> the language's kind


def provide(f: "FaultInput", checked: Checked, obj, manifest: dict, readers=()) -> Checked:
    """`checked`, with `obj` (an ir.Secret or ir.ConfigMap the fault creates, `manifest` its applied form)
    declared for the statements after the fault. An object the topology already declares stays as it is."""
    kind = _CREATED_KINDS[type(obj).__name__]
    key = (kind, obj.namespace, obj.name)
    if key not in f.build.declared:
        f.build.declared[key] = Created(kind, obj.name, obj.namespace, f.fault.span, f.ctx.path, obj,
                                        fault=f.fault.kind, manifest=copy.deepcopy(manifest),
                                        readers=tuple(sorted(readers)))
    return checked


def created_by_fault(f: "FaultInput") -> Created | None:
    """The declaration of the fault's target when an earlier fault of the scenario creates it, else None."""
    kind = next((k for k in _CREATED_KINDS.values() if f.target.kind.lower() == k), None)
    found = f.build.declared.get((kind, f.target.namespace, f.target.name)) if kind else None
    return found if isinstance(found, Created) else None


# ---- helpers shared by several faults ------------------------------------------------------------


def find_object(topology: ir.Topology, ref: ir.ObjectRef):
    pools = {
        "Deployment": topology.workloads, "StatefulSet": topology.workloads, "Job": topology.workloads,
        "CronJob": topology.workloads, "Pod": [w for w in topology.workloads if w.bare], "Service": topology.services,
        "ConfigMap": topology.configmaps, "Secret": topology.secrets, "HorizontalPodAutoscaler": topology.autoscalers,
        "Ingress": topology.ingresses,
    }
    for obj in pools.get(ref.kind, []):
        if obj.name == ref.name and obj.namespace == ref.namespace and getattr(obj, "kind", ref.kind) == ref.kind:
            return obj
    raise KeyError(ref.key())


def pick_container(f: FaultInput) -> ir.Container | None:
    workload: ir.Workload = f.obj
    name = f.body.attr("container", "str")
    names = [c.name for c in workload.containers]
    if name is None:
        if len(names) == 1:
            return workload.containers[0]
        f.error("E2007", f"{workload.kind.lower()} `{workload.name}` has {len(names)} containers "
                f"({', '.join(names)}): say which with `container`", f.fault.target.span, "which container?",
                help=f'add `container = "{names[0]}"`' if names else "")
        return None
    for container in workload.containers:
        if container.name == name:
            return container
    hint = did_you_mean(name, names)
    f.error("E2020", f"{workload.kind.lower()} `{workload.name}` has no container `{name}`",
            f.body.attr_span("container"), "no such container",
            help=f"did you mean `{hint}`?" if hint else f"its containers: {', '.join(names)}")
    return None


# The words an application's object names add to a component's name (`cart-config`, `frontend-main`): none says
# what a fault does, what is wrong or who put the object there (agent_view.py's EFFECT_WORDS, JUDGMENT_WORDS,
# HARNESS_WORDS), and none is a kind's, so they suit an object of any kind.
NAME_WORDS = ("main", "primary", "default", "core", "shared", "base", "internal", "local", "common", "standard",
              "general", "system")


def application_name(f: "FaultInput", api_version: str, kind: str, namespace: str | None, *seed: str,
                     avoid: str = "") -> str:
    """The default name of an object a fault creates: a name as the application gives its own objects, derived
    from the names it already uses. Whoever lists the objects of a kind reads their names: a name must point
    neither at the answer (the target's name, the fault's words: `deny-all-cart`, `cart-pod-kill`) nor at the
    object as one the application does not own (a hash, `otel-demo-5d0c9a1e2b`, which no object of the
    application carries: agent_view.py reads both, E4010).

    The name is one of the application's components (its workloads in the target's namespace, less the target
    and those `avoid` names: a peer) followed by a word of NAME_WORDS (`currency-main`), as an application names
    the objects that serve a component (`cart-config`). Which one comes from a hash of `seed` (what creates it:
    the fault, its target, what it does), so that no name is a code for a fault kind learnt from another
    scenario; the first that no object of the topology in `namespace` (of any kind) and no object an earlier
    fault of the scenario creates (of `kind` or its API group) has is taken. Words of the scenario's name, of the
    fault kind's and of `avoid` (what the object holds) are left out. The same scenario always gets the same
    name."""
    import hashlib

    from ..wording import stem, words

    told = {stem(w) for text in (f.scenario_name, f.fault.kind, avoid) for w in words(text)}
    target_ns = f.target.namespace or (f.target.name if f.target.kind == "Namespace" else None)
    workloads = sorted({w.name for w in f.build.workloads})
    local = sorted({w.name for w in f.build.workloads if w.namespace == target_ns})
    target = {f.target.name, getattr(f.obj, "name", None) or f.target.name}

    def unnamed(c: str) -> bool:  # neither the target (`etcd` of `etcd-kind-control-plane`) nor what it holds (a peer)
        return not any(t == c or t.startswith(c + "-") for t in target) and not re.search(
            rf"(?<![\w-]){re.escape(c)}(?![\w-])", avoid)

    components = [c for c in local if unnamed(c)] or [c for c in workloads if unnamed(c)] \
        or [namespace or target_ns or "default"]
    taken = {n for (_, ns, n) in f.build.declared if ns == namespace}
    # what an earlier fault creates is referred to by kind and name alone (`schedule "x"`): unique across namespaces
    # (and a Schedule's experiment takes its Schedule's name: the kinds of one API group are kept apart)
    taken |= {ref.name for ref in f.created.values() if ref.kind == kind or ref.api_version == api_version}
    words_ok = [w for w in NAME_WORDS if stem(w) not in told] or list(NAME_WORDS)
    candidates = [_fit(c, w) for w in words_ok for c in components]
    digest = int(hashlib.sha256("/".join(seed).encode()).hexdigest(), 16)
    start = digest % len(candidates)
    for name in candidates[start:] + candidates[:start]:
        if name not in taken:
            return name
    # every candidate taken (more objects of one kind than components and words): a number, as a replica's
    return next(name for n in range(2, len(taken) + 3) if (name := _fit(candidates[start], str(n))) not in taken)


def _fit(component: str, word: str) -> str:
    """`<component>-<word>` within the 63 characters of a DNS-1123 label."""
    return f"{component[:62 - len(word)].rstrip('-.')}-{word}"


def kobj(target: ir.ObjectRef) -> dict:
    return target.itbench()


def patched(topology: ir.Topology, injection: ir.Injection, change: Callable) -> Effect:
    obj = copy.deepcopy(find_object(topology, injection.target))
    change(obj, injection.args)
    return Effect([obj], [])


def original(injection: ir.Injection, topology: ir.Topology) -> Effect:
    return Effect([copy.deepcopy(find_object(topology, injection.target))], [])


def container_named(workload: ir.Workload, name: str) -> ir.Container:
    return next(c for c in workload.containers if c.name == name)


_SLUG = re.compile(r"[^a-z0-9]+")


def slug(text: str) -> str:
    return _SLUG.sub("_", text.lower()).strip("_")
