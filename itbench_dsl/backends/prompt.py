"""The agent's task, rendered from Jinja2 templates shipped in the package.

Templates render in a sandbox with StrictUndefined: a value the scenario does not provide is
an error (E4001), never an empty string. The context holds only what the agent may know:
the application, its namespaces, the output contract and, at a higher hint level, the
topology or where the symptoms are; never the fault or the root cause. The leakage lint
(`leakage.py`) checks every rendered prompt anyway (E4003).

One template per domain (`prompt/sre.md.j2`, `prompt/finops.md.j2`) and one per CISO task
class (`prompt/ciso/<class>.md.j2`). The output contract (file names, folders) is defined
here once, so that the evaluator can read the same constants.

Rendering walks the template's generator chunk by chunk, so that every piece of the prompt
is known with its template line and whether it is template text or a value: the lint
reports the line a leak came from, and lets a value the hint level gives (a namespace, a
component name) stand on its own.
"""

from __future__ import annotations

import json

import functools
import re
from importlib import resources as _resources

from jinja2 import FileSystemBytecodeCache, FileSystemLoader, StrictUndefined, TemplateError
from jinja2.sandbox import SandboxedEnvironment

from .. import ir
from . import alert_rules as alert_rules_backend
from .. import tasks as task_types
from ..ciso.tasks import TASK_CLASSES
from ..faults import itbench_entry
from ..analysis.leakage import Chunk, Leak, find_leaks

HINT_LEVELS = ("none", "topology", "localized")

# The output contract. ITBench's CISO runner mounts the shared workspace at /tmp/agent and puts the
# agent's kubeconfig there (input.json `shared_workspace`, vars.yaml `agent_kubeconfig`); every domain
# uses the same folder so that one harness serves all.
WORKSPACE = "/tmp/agent"
KUBECONFIG = f"{WORKSPACE}/kubeconfig.yaml"
INVENTORY = f"{WORKSPACE}/inventory.ansible.ini"
# file names the evaluator reads, per domain or CISO task class (ITBench's vars.yaml for the CISO ones)
SUBMISSION = {
    "sre": {"diagnosis": task_types.answer_file("sre", "diagnose")},
    "finops": {"answer": task_types.answer_file("finops", "diagnose")},
    **{c.task: dict(c.submission) for c in TASK_CLASSES.values()},
}


class _KeptTemplates(FileSystemBytecodeCache):
    """Jinja's compiled templates on disk, as an optimisation only: a file that cannot be read or written is
    compiled again. Jinja writes each atomically and checks the template's text and the Python it was made by."""

    def load_bytecode(self, bucket) -> None:
        try:
            super().load_bytecode(bucket)
        except Exception:  # noqa: BLE001 - a damaged file: compiled again
            bucket.reset()

    def dump_bytecode(self, bucket) -> None:
        try:
            super().dump_bytecode(bucket)
        except OSError:
            pass


def _kept_templates() -> _KeptTemplates | None:
    """The compiled prompt templates kept on disk (cache.py), in a folder per version of Jinja and of this module
    (it sets the options the templates are compiled with); None when the cache is off or cannot be written."""
    from .. import cache

    where = cache.path_for("jinja", cache.module_stamp("jinja2"), _resources.files("itbench_dsl").joinpath(
        "backends/prompt.py").read_bytes())
    if where is None:
        return None
    try:
        where.with_suffix("").mkdir(exist_ok=True)
    except OSError:
        return None
    return _KeptTemplates(str(where.with_suffix("")))


@functools.lru_cache(maxsize=1)
def _environment() -> SandboxedEnvironment:
    folder = _resources.files("itbench_dsl").joinpath("templates")
    env = SandboxedEnvironment(loader=FileSystemLoader(str(folder)), undefined=StrictUndefined, autoescape=False,
                               keep_trailing_newline=True, trim_blocks=True, lstrip_blocks=True,
                               bytecode_cache=_kept_templates())
    env.filters["quote"] = _quote
    return env


def _quote(text: str) -> str:
    """A Markdown block quote: scenario text stays inside it, whatever lines it holds."""
    return "\n".join("> " + line if line.strip() else ">" for line in str(text).splitlines() or [""])


def template_name(scenario: ir.Scenario) -> str:
    if scenario.domain == "ciso" and scenario.compliance is not None:
        return f"prompt/ciso/{scenario.compliance.task}.md.j2"
    if task_types.declared(scenario):
        return "prompt/tasks.md.j2"  # one section per task the `tasks` statement poses
    return f"prompt/{scenario.domain}.md.j2"


def _posed(scenario: ir.Scenario) -> list[dict]:
    """The tasks the prompt states, each with its answer file (None: graded on the cluster) and, for detect,
    its window in words. The same for a scenario and its control: nothing here says whether there is a fault."""
    out = []
    for name in task_types.posed(scenario):
        entry = {"name": name, "file": task_types.answer_file(scenario.domain, name)}
        if name == "detect":
            entry["window"] = _duration_words(task_types.window(scenario))
        out.append(entry)
    return out


def _duration_words(seconds: float) -> str:
    for unit, size in (("hour", 3600), ("minute", 60)):
        if seconds >= size and seconds % size == 0:
            count = int(seconds // size)
            return f"{count} {unit}{'s' if count != 1 else ''}"
    return f"{seconds:g} seconds"


def application_name(topology: ir.Topology) -> str:
    """What the prompt calls the application: its name (`topology "shop" { ... }`, a `use app`), else the
    namespace it runs in, which the prompt names anyway."""
    if topology.display_name or topology.application:
        return topology.display_name or topology.application
    namespaces = [n.name for n in topology.namespaces if not n.provided]
    return namespaces[0] if len(namespaces) == 1 else "/".join(namespaces) or "application"


def context(scenario: ir.Scenario) -> dict:
    """What every prompt may say, at every hint level."""
    topology = scenario.topology
    app = topology.application
    app_description = None
    if app is not None:
        try:
            app_description = itbench_entry("applications", app).get("description")
        except FileNotFoundError:
            app_description = None
    compliance = scenario.compliance
    task = compliance.task if compliance is not None else scenario.domain
    return {
        "scenario": {"name": scenario.name, "domain": scenario.domain, "alerts": bool(scenario.alerts),
                     # a control (no fault): its prompt claims no incident (prompt/tasks.md.j2)
                     "control": scenario.domain != "ciso" and task_types.is_control(scenario)},
        "application": {"name": application_name(topology), "description": app_description},
        # the cluster's own namespaces (kube-system) go unsaid: every cluster has them, and naming one that
        # a scenario declares would point at the fault
        "namespaces": [n.name for n in topology.namespaces if not n.provided],
        # not the agent's resource lists: they grow with the fault (Chaos Mesh's `podchaos`), a leak
        # whether alert rules ship (manifests/alert-rules.yaml): the prompt says alerts fire only then
        "alerting": bool(alert_rules_backend.alert_namespaces(scenario)),
        "agent": {"service_account": scenario.agent.service_account,
                  # what it may also read, the same for every scenario of the application (expectations.application_access)
                  "read_only": [n for n in scenario.agent.read_only if n not in
                                [m.name for m in topology.namespaces if not m.provided]],
                  "cluster": [r for r in scenario.agent.cluster_write if r in ("namespaces", "nodes")]},
        "control": None if compliance is None else _control(scenario, compliance),
        "kubeconfig": KUBECONFIG,
        "inventory": INVENTORY,
        "workspace": WORKSPACE,
        "files": dict(SUBMISSION.get(task, {})),
        "posed": _posed(scenario),
        "vocabulary": {k: list(v) for k, v in task_types.VOCABULARY.items()},
        "finops_types": list(task_types.FINOPS_TYPES),
    }


def _control(scenario: ir.Scenario, compliance: ir.Compliance) -> dict:
    from .. import ciso
    from . import ciso as ciso_backend

    existing = ciso_backend.existing_policy(scenario)
    # every host group the control is checked on, the gap's and the compliant baseline's, as one Ansible
    # host pattern, sorted: neither the names (ciso.host_groups) nor their order say which group breaks the control
    hosts = sorted({g.name for g in compliance.gaps + compliance.compliant if g.kind == ciso.HOST_KIND})
    from ..ciso.tasks import INPUT_SHAPES, TASK_CLASSES

    task_class = TASK_CLASSES.get(compliance.task)
    shape = INPUT_SHAPES.get(task_class.input) if task_class is not None else None
    return {
        "id": compliance.control, "goal": compliance.goal, "benchmark": compliance.benchmark,
        "task": compliance.task,
        # the input a Rego policy is graded on, as the prompt states it (the same for every scenario of the class)
        "input_shape": json.dumps(shape, indent=2) if shape is not None else None,
        "existing_policy": existing[0]["metadata"]["name"] if existing else None,
        "hosts": ":".join(hosts) if hosts else None,
        # the namespaces the control is checked in: the topology's and those of its objects (`default`)
        "namespaces": list(dict.fromkeys([n.name for n in scenario.topology.namespaces] + [
            r.namespace for r in compliance.gaps + compliance.compliant if r.namespace])),
        # objects the scenario hands to the agent (`given = true`): the gap and compliant objects alike,
        # so that the agent still has to tell which of them break the control; listed by namespace, kind and
        # name, an order the answer does not decide (the statements' order puts the gap objects first)
        "objects": sorted((_object(r) for r in (compliance.gaps + compliance.compliant) if r.kind != ciso.HOST_KIND),
                          key=lambda o: (o["namespace"] or "", o["kind"], o["name"])) if given(compliance) else [],
    }


def _object(ref: ir.ObjectRef) -> dict:
    return {"kind": ref.kind, "name": ref.name, "namespace": ref.namespace}


def given(compliance: ir.Compliance | None) -> bool:
    return bool(compliance is not None and compliance.given)


def hint_context(scenario: ir.Scenario, level: str) -> dict:
    """What the hint level adds: the components and their calls (topology and up), where the symptoms
    are (localized). Every key is present at every level, so templates test them, never miss them."""
    if level not in HINT_LEVELS:
        raise ValueError(f"unknown hint level {level!r}; choose one of {', '.join(HINT_LEVELS)}")
    hints: dict = {"level": level, "components": [], "symptoms": []}
    if scenario.domain == "ciso" or level == "none":
        return hints  # a CISO task is the control itself: there is no incident to localize
    topology = scenario.topology
    calls: dict[str, list[str]] = {}
    for caller, callee in topology.edges:
        calls.setdefault(caller, [])
        if callee not in calls[caller]:
            calls[caller].append(callee)
    hints["components"] = [
        {"name": w.name, "kind": w.kind, "namespace": w.namespace, "calls": sorted(calls.get(w.name, []))}
        for w in sorted(topology.workloads, key=lambda w: (w.namespace, w.name))
    ]
    if level == "localized":
        hints["symptoms"] = symptoms(scenario)
    return hints


def _causes(scenario: ir.Scenario) -> list[ir.ObjectRef]:
    """The root causes and where the faults act: the lint guards them, the localized hint never names them."""
    refs = list(scenario.root_causes)
    for injection in scenario.injections():
        refs += [injection.target] + ([injection.root] if injection.root else [])
    return refs


def symptoms(scenario: ir.Scenario) -> list[dict]:
    """Per namespace, the components the expected alerts fire on, less any root-cause component."""
    from .itbench import _component

    def component(ref: ir.ObjectRef) -> str:
        found = _component(ref, scenario)
        return found if found and not found.startswith("chaos:") else re.sub(r"[-*?]+$", "", ref.name)

    causes = _causes(scenario)
    excluded = {component(r) for r in causes} | {r.name for r in causes}
    by_namespace: dict[str, list[str]] = {}
    for alert in scenario.alerts:
        namespace = alert.target.namespace
        if namespace is None:
            continue
        names = by_namespace.setdefault(namespace, [])
        name = component(alert.target)
        if name and name not in excluded and name not in names:
            names.append(name)
    return [{"namespace": ns, "components": sorted(names)} for ns, names in sorted(by_namespace.items())]


def allowed_values(scenario: ir.Scenario, hints: dict, values: dict) -> set[str]:
    """Values that may stand alone in a prompt even when they equal a guarded name: the namespaces, the
    application, and what the hint level hands out (component names, symptoms, given CISO objects)."""
    # read with .get: a context without a value fails in the template (E4001), not here
    allowed = set(values.get("namespaces") or []) | {(values.get("application") or {}).get("name", "")}
    control = values.get("control") or {}
    allowed.update(control.get("namespaces", []))
    for component in hints["components"]:
        allowed.add(component["name"])
        allowed.update(component["calls"])
    for symptom in hints["symptoms"]:
        allowed.add(symptom["namespace"])
        allowed.update(symptom["components"])
    allowed.update(o["name"] for o in control.get("objects", []))
    if control.get("hosts"):
        allowed.update(control["hosts"].split(":"))  # the inventory groups: the task cannot be done without them
    # the FinOps type vocabulary: every FinOps prompt lists all of it, so naming the fault's value says nothing
    allowed.update(values.get("finops_types") or [])
    allowed.discard("")
    return allowed


def render_chunks(scenario: ir.Scenario, hints: str = "none") -> list[Chunk]:
    """The prompt as the pieces the template emitted, each with its template line.

    Raises TemplateError (E4001) when the template uses a value the context lacks."""
    template = _environment().get_template(template_name(scenario))
    values = {**context(scenario), "hints": hint_context(scenario, hints)}
    allowed = allowed_values(scenario, values["hints"], values)
    generator = template.root_render_func(template.new_context(values))
    lines = _line_map(template)
    chunks: list[Chunk] = []
    for text in generator:
        frame = generator.gi_frame
        line = (lines.get(frame.f_lineno) or template.get_corresponding_lineno(frame.f_lineno)) if frame else 1
        literal = frame is None or text in _constants(frame.f_code)
        chunks.append(Chunk(str(text), template.name or "", line, literal, not literal and str(text) in allowed))
    return chunks


@functools.lru_cache(maxsize=64)
def _constants(code) -> frozenset:
    """The constants of a compiled template function: a chunk among them is template text, not a value."""
    return frozenset(c for c in code.co_consts if isinstance(c, str))


@functools.lru_cache(maxsize=64)
def _line_map(template) -> dict[int, int]:
    """Python line of the compiled template -> template line (Jinja's debug info, expanded once)."""
    info = sorted((code_line, template_line) for template_line, code_line in template.debug_info)
    mapping: dict[int, int] = {}
    for index, (code_line, template_line) in enumerate(info):
        end = info[index + 1][0] if index + 1 < len(info) else code_line + 1
        for number in range(code_line, end):
            mapping[number] = template_line
    return mapping


def template_source(name: str) -> str:
    """A template's text (read only to locate a leak)."""
    try:
        return _environment().loader.get_source(_environment(), name)[0]
    except TemplateError:
        return ""


def render_checked(scenario: ir.Scenario, hints: str = "none") -> tuple[str, list[Leak]]:
    """The prompt text and what it leaks (empty when clean)."""
    chunks = render_chunks(scenario, hints)
    return "".join(c.text for c in chunks), find_leaks(scenario, chunks, template_source)


def render(scenario: ir.Scenario, hints: str = "none") -> str:
    """The prompt text; raises TemplateError, which the compiler reports as E4001."""
    return "".join(c.text for c in render_chunks(scenario, hints))


__all__ = ["HINT_LEVELS", "SUBMISSION", "WORKSPACE", "KUBECONFIG", "render", "render_checked", "render_chunks",
           "context", "hint_context", "symptoms", "TemplateError"]
