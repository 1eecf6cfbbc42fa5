"""Task types: what a scenario asks the agent, one record per task (docs/language.md, Tasks).

A scenario may say what it asks with `tasks detect, localize, analyze, mitigate`; without the
statement it asks what ITBench asks (`DEFAULT`): SRE and FinOps agents diagnose and mitigate,
CISO agents write a policy. `task NAME` is another statement: the CISO task *class* (how the
policy is written, `ciso/tasks.py`), which poses the `policy` task.

Each task has an input the evaluator grades (the agent's answer file, or the cluster's state) and
a contract the prompt states and the evaluator reads (`ANSWERS`, `runtime/evaluator.py`). The
checker, the prompt, the evaluator's spec and the self-validation read the task records from here.
"""

from __future__ import annotations

from dataclasses import dataclass

from . import ir
from .diagnostics import did_you_mean
from .runtime.evaluator import ANALYSIS_KEYS, label_key


@dataclass(frozen=True)
class TaskType:
    name: str
    summary: str
    answer: str | None  # the file the agent writes in its work folder; None: graded on the cluster's state
    domains: tuple[str, ...]
    control: bool  # whether a control scenario (no fault) may pose it
    window: bool = False  # takes `within D` (the detection window)


TASK_TYPES: dict[str, TaskType] = {t.name: t for t in [
    TaskType("detect", "is anything wrong? yes or no, and when it was noticed", "detection.json", ("sre", "finops"),
             control=True, window=True),
    TaskType("localize", "which components caused the incident", "diagnosis.json", ("sre",), control=False),
    TaskType("diagnose", "ITBench's diagnosis: the causes and how the incident spread (FinOps: the resources that "
             "waste money)", "diagnosis.json", ("sre", "finops"), control=False),
    TaskType("analyze", "classify the fault: its system level and fault type", "analysis.json", ("sre",),
             control=False),
    TaskType("mitigate", "bring the system back to health (a control: change nothing)", None, ("sre", "finops"),
             control=True),
    TaskType("policy", "write the policy that checks the control", None, ("ciso",), control=False),
]}
# what a scenario asks when it has no `tasks` statement: what ITBench asks, and what bundles have always posed
DEFAULT: dict[str, tuple[str, ...]] = {"sre": ("diagnose", "mitigate"), "finops": ("diagnose", "mitigate"),
                                       "ciso": ("policy",)}
# what a control (no fault) asks when it has no `tasks` statement, by domain: an SRE control poses what it can of
# the SRE default (mitigate: change nothing), so that it is graded as one (every object left unchanged) and its
# prompt claims no incident. A FinOps control keeps ITBench's (its scenario 37, a false alarm, asks to name the
# waste, of which there is none, and to change nothing).
CONTROL_DEFAULT: dict[str, tuple[str, ...]] = {"sre": tuple(n for n in DEFAULT["sre"] if TASK_TYPES[n].control)}
# two tasks that read one answer file and grade one thing: a scenario poses one of them
EXCLUSIVE = (("localize", "diagnose"),)
# the order tasks are posed in, whatever order the statement lists them: the order of an incident
ORDER = ("detect", "localize", "diagnose", "analyze", "mitigate", "policy")
DETECT_WITHIN = 900.0  # seconds after the injection within which a detection counts, when `within` is not given

# The analysis labels, after AIOpsLab's analysis task: where the fault sits and what kind of fault it is.
# Answers are compared by `label_key` (case, spaces, `-`, `/` and `_` do not matter: "Operating System",
# "operating-system" and "operating_system" are one label).
SYSTEM_LEVELS = ("hardware", "operating_system", "virtualization", "application")
FAULT_TYPES = ("misconfiguration", "code_defect", "authentication_issue", "network_storage_issue",
               "operation_error", "dependency_problem")
VOCABULARY = {"system_level": SYSTEM_LEVELS, "fault_type": FAULT_TYPES}
assert tuple(VOCABULARY) == ANALYSIS_KEYS

# The FinOps answer's `type`: what kind of waste an object is, one value of a closed vocabulary
# (docs/evaluator.md, `diagnose` (FinOps)), each with the spellings that say the same. The evaluator compares
# by `type_key` (case, spaces, punctuation and a plural's `s` do not matter: "Over-provisioned requests" is
# `overprovisioned_requests`); any other text (a negation, two values, a hedge) is no value.
FINOPS_TYPES: dict[str, tuple[str, ...]] = {
    "overprovisioned_requests": (
        "overprovisioned requests", "overprovisioned", "overprovisioning", "overprovisioned resources",
        "overprovisioned resource requests", "overprovisioned cpu and memory requests", "oversized requests",
        "excessive requests", "requests too high", "too high requests", "resource requests too high",
        "requests overprovisioned", "overrequested"),
    "idle_replicas": (
        "idle replicas", "too many replicas", "excess replicas", "excessive replicas", "overscaled",
        "overscaled replicas", "overprovisioned replicas", "replicas too high", "overreplicated",
        "unneeded replicas", "unused replicas"),
    "misconfigured_hpa": (
        "misconfigured hpa", "hpa misconfigured", "hpa misconfiguration", "misconfigured autoscaler",
        "misconfigured autoscaling", "misconfigured horizontal pod autoscaler", "misconfigured horizontalpodautoscaler",
        "autoscaler misconfigured", "hpa target too low", "autoscaler target too low", "utilization target too low",
        "low utilization target", "hpa utilization target too low", "wrong hpa target", "wrong utilization target"),
    "unassigned_limits": (
        "unassigned limits", "missing limits", "missing limit", "no limits", "no limit", "missing resource limits",
        "no resource limits", "missing memory limit", "no memory limit", "missing cpu limit", "no cpu limit",
        "limits missing", "limits removed", "removed limits", "unset limits", "unbounded resources"),
}
# the value a fault's waste is, by the fault's mechanism (faults/base.py): a FinOps scenario may use any
# fault kind, and one whose mechanism is none of these has its `type` left ungraded (its finding found by name)
FINOPS_MECHANISMS = {
    "autoscaler.target-utilization:misconfigured": "misconfigured_hpa",
    "workload.container.resources.requests:overprovisioned": "overprovisioned_requests",
    "workload.replicas:overscaled": "idle_replicas",
    "workload.container.resources.limits:removed": "unassigned_limits",
}

def names(domain: str) -> tuple[str, ...]:
    """The tasks a scenario of `domain` may pose."""
    return tuple(t.name for t in TASK_TYPES.values() if domain in t.domains)


def posed(scenario: ir.Scenario) -> list[str]:
    """The tasks a scenario poses, in ORDER: its `tasks` statement's (the checker gives an SRE control without
    one CONTROL_DEFAULT's), else its domain's default."""
    if scenario.tasks is None:
        return list(DEFAULT.get(scenario.domain, ()))
    return [t.name for t in scenario.tasks]


def declared(scenario: ir.Scenario) -> bool:
    """The scenario poses its tasks one by one (a `tasks` statement, or a control's CONTROL_DEFAULT): its
    prompt has a section per task and its evaluator grades each task's contract."""
    return scenario.tasks is not None


def window(scenario: ir.Scenario) -> float:
    """The detection window, in seconds after the injection."""
    for task in scenario.tasks or []:
        if task.name == "detect" and task.within_seconds is not None:
            return task.within_seconds
    return DETECT_WITHIN


def is_control(scenario: ir.Scenario) -> bool:
    """A scenario with nothing broken: no fault (`metadata { control = true }`, checked by the checker)."""
    return not scenario.injections()


def read_labels(body) -> tuple[str, str] | None:
    """The (system_level, fault_type) of an `analysis { ... }` body (reader.Body), each label checked
    against VOCABULARY (E2010 at the label, with the nearest one); None when one is missing or wrong."""
    labels = {}
    for key, vocabulary in VOCABULARY.items():
        value = body.attr(key, "str", required=True)
        if value is None:
            continue
        label = label_key(value)
        if label not in vocabulary:
            hint = did_you_mean(label, vocabulary)
            body.ctx.error("E2010", f"`{value}` is not a {key}", body.attr_span(key), "unknown label",
                           help=(f"did you mean `{hint}`? " if hint else "") + f"one of {', '.join(vocabulary)}")
            continue
        labels[key] = label
    body.finish()
    return (labels["system_level"], labels["fault_type"]) if len(labels) == len(VOCABULARY) else None


# a task whose answer file differs in one domain: FinOps' diagnosis is ITBench's FinOps answer
_DOMAIN_ANSWERS = {("finops", "diagnose"): "finops.json"}


def answer_file(domain: str, task: str) -> str | None:
    """The file the agent writes for `task` in a scenario of `domain` (None: the task reads the state)."""
    return _DOMAIN_ANSWERS.get((domain, task), TASK_TYPES[task].answer)


def answer_files(tasks: list[str], domain: str) -> dict[str, str]:
    """task -> the answer file it reads, for the tasks graded on an answer."""
    return {name: answer_file(domain, name) for name in tasks if answer_file(domain, name) is not None}


__all__ = ["TASK_TYPES", "DEFAULT", "CONTROL_DEFAULT", "EXCLUSIVE", "ORDER", "DETECT_WITHIN", "SYSTEM_LEVELS", "FAULT_TYPES",
           "VOCABULARY", "names", "posed", "declared", "window", "is_control",
           "read_labels", "answer_file", "answer_files", "label_key"]
