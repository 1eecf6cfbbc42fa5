"""Import of ITBench SRE and FinOps scenarios: an index file (`N.json`) or a compiled folder (`scenario_N/`).

The faults come from the index's `disruptions` or scenario.yaml's `spec.faults`; the causal graph
(groups, aliases, propagations, alerts, recommended actions) from groundtruth_v1.yaml. When both
forms of a scenario sit in ITBench's layout (`library/scenarios/N.json` and `scenarios/scenario_N/`),
each import reads the other too, so both give the same `.itb`.

Defects in the ITBench files are reported as located warnings, and the written scenario carries the
correction: an undefined group id (the reference is dropped, or mapped to the one defined id it
abbreviates), a group on an object the topology or the injection does not have (the root cause moves
to what the injection creates; other groups are dropped), v1 and v2 disagreeing, and statements the
checker refuses (an edge that does not follow the topology, an unknown alert). Nothing is special-cased
per scenario.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from .. import ast
from .. import builders as b
from ..diagnostics import Diagnostics, did_you_mean
from ..faults.base import slug
from ..printer import Notes, print_document
from . import cluster
from . import faults as fault_map
from .located import Located, load

# ---- what an ITBench scenario says, before it becomes .itb --------------------------------------------


@dataclass
class Where:
    """A place in an ITBench file, for warnings."""

    file: Located
    path: tuple = ()


@dataclass
class Model:
    itbench_id: int | None = None
    category: str = "sre"
    complexity: str | None = None
    description: str | None = None
    tags: list = field(default_factory=list)
    application: str | None = None
    namespace: str | None = None
    disruptions: list = field(default_factory=list)  # [(injections [(id, args, Where)], waits [(when, id, args, Where)])]
    v1: Located | None = None
    v2: Located | None = None
    index: Located | None = None
    scenario: Located | None = None
    older_shape: bool = False  # scenario.yaml in ITBench's older shape (lists): compiled, it is in the current one
    app_options: dict = field(default_factory=dict)  # the application's install options (`options` or `args`)


class ImportFailed(Exception):
    pass


def _shape(file: Located, diags: Diagnostics, where: tuple, what: str, help: str = "") -> None:
    file.error(diags, "E5002", f"unexpected shape: {what}", where, "here", help)
    raise ImportFailed


def _expect(file: Located, diags: Diagnostics, value, types, where: tuple, what: str):
    if not isinstance(value, types):
        names = {dict: "a mapping", list: "a list", str: "a string", int: "a number"}
        wanted = " or ".join(names.get(t, t.__name__) for t in (types if isinstance(types, tuple) else (types,)))
        _shape(file, diags, where, f"{what} should be {wanted}")
    return value


# ---- reading the files ----------------------------------------------------------------------------------


def read_index(file: Located, model: Model, diags: Diagnostics) -> None:
    data = _expect(file, diags, file.data, dict, (), "the index file")
    model.index = file
    number = data.get("id")
    if isinstance(number, int) and not isinstance(number, bool):
        model.itbench_id = number
    if isinstance(data.get("category"), str):
        model.category = data["category"]
    if isinstance(data.get("complexity"), str):
        model.complexity = data["complexity"]
    if isinstance(data.get("description"), str):
        model.description = data["description"]
    if isinstance(data.get("tags"), list):
        model.tags = [t for t in data["tags"] if isinstance(t, str)]
    environment = _expect(file, diags, data.get("environment", {}), dict, ("environment",), "`environment`")
    apps = _expect(file, diags, environment.get("applications", []), list, ("environment", "applications"),
                   "`environment.applications`")
    _applications(file, model, diags, apps, ("environment", "applications"))
    disruptions = _expect(file, diags, data.get("disruptions", []), list, ("disruptions",), "`disruptions`")
    model.disruptions = [_disruption(file, diags, d, ("disruptions", i)) for i, d in enumerate(disruptions)]


def read_scenario_yaml(file: Located, model: Model, diags: Diagnostics) -> None:
    data = _expect(file, diags, file.data, dict, (), "scenario.yaml")
    model.scenario = file
    name = (data.get("metadata") or {}).get("name") if isinstance(data.get("metadata"), dict) else None
    match = re.fullmatch(r"scenario-(\d+)", str(name or ""))
    if match and model.itbench_id is None:
        model.itbench_id = int(match.group(1))
    spec = _expect(file, diags, data.get("spec"), dict, ("spec",), "`spec`")
    apps = spec.get("applications", {})
    _applications(file, model, diags, apps, ("spec", "applications"))
    tools = spec.get("tools", {})
    model.older_shape = isinstance(apps, list) or isinstance(tools, list) or any(
        isinstance(f, dict) and isinstance(f.get("waitFor"), list) for f in spec.get("faults") or [])
    names = list(tools) if isinstance(tools, dict) else [t if isinstance(t, str) else (t or {}).get("id") or (t or {}).get("name")
                                                          for t in tools] if isinstance(tools, list) else []
    if "finops" in names:
        model.category = "finops"
    elif "sre" in names:
        model.category = "sre"
    faults = _expect(file, diags, spec.get("faults", []) or [], list, ("spec", "faults"), "`spec.faults`")
    disruptions = [_disruption(file, diags, d, ("spec", "faults", i)) for i, d in enumerate(faults)]
    if model.index is None or not model.disruptions:
        model.disruptions = disruptions


def _applications(file: Located, model: Model, diags: Diagnostics, apps, where: tuple) -> None:
    """Applications as a list (`[{id: opentelemetry-demo}]`) or as a map (`{opentelemetryDemo: {enabled: true}}`)."""
    names = []
    options: list = []
    if isinstance(apps, dict):
        names = [(k, (k,)) for k, v in apps.items() if not (isinstance(v, dict) and v.get("enabled") is False)]
        options = [v.get("options") for v in apps.values() if isinstance(v, dict) and v.get("enabled") is not False]
    elif isinstance(apps, list):
        for i, item in enumerate(apps):
            if isinstance(item, str):
                names.append((item, (i,)))
            elif isinstance(item, dict) and isinstance(item.get("id") or item.get("name"), str):
                names.append((item.get("id") or item.get("name"), (i,)))
                options.append(item.get("options") or item.get("args"))
            else:
                _shape(file, diags, where + (i,), "an application entry has no `id`")
    else:
        _shape(file, diags, where, "the applications should be a list or a mapping")
    if not names:
        return
    known = _known_apps()
    for name, at in names:
        app = known.get(name) or known.get(_camel_to_kebab(name))
        if app is None:
            file.error(diags, "E5003", f"unknown ITBench application `{name}`", where + at, "not in the standard library",
                       help="the standard library's applications: " + ", ".join(sorted(set(known.values()))))
            raise ImportFailed
        model.application = model.application or app
    for found in options:
        if isinstance(found, dict):
            _merge_options(model.app_options, found)


def _merge_options(into: dict, extra: dict) -> None:
    for key, value in extra.items():
        if isinstance(value, dict) and isinstance(into.get(key), dict):
            _merge_options(into[key], value)
        else:
            into[key] = value


def _without(options: dict, implied: dict) -> dict:
    """The options the faults do not already ask for (they add their own when compiled)."""
    out = {}
    for key, value in options.items():
        if isinstance(value, dict) and isinstance(implied.get(key), dict):
            rest = _without(value, implied[key])
            if rest:
                out[key] = rest
        elif implied.get(key) != value:
            out[key] = value
    return out


def _known_apps() -> dict[str, str]:
    from importlib import resources

    out = {}
    for entry in resources.files("itbench_dsl").joinpath("stdlib/apps").iterdir():
        if entry.name.endswith(".itb"):
            name = entry.name[:-4]
            out[name] = name
            out[re.sub(r"-(\w)", lambda m: m.group(1).upper(), name)] = name  # ITBench's key: bookInfo
    return out


def _camel_to_kebab(name: str) -> str:
    return re.sub(r"(?<=[a-z0-9])([A-Z])", r"-\1", name).lower()


def _disruption(file: Located, diags: Diagnostics, item, where: tuple):
    item = _expect(file, diags, item, dict, where, "a fault entry")
    injections = _expect(file, diags, item.get("injections"), list, where + ("injections",), "`injections`")
    out_injections = []
    for i, injection in enumerate(injections):
        at = where + ("injections", i)
        injection = _expect(file, diags, injection, dict, at, "an injection")
        identifier = _expect(file, diags, injection.get("id"), str, at + ("id",), "an injection's `id`")
        out_injections.append((identifier, injection.get("args") or {}, Where(file, at)))
    waits = []
    wait_for = item.get("waitFor")
    stages = []
    if isinstance(wait_for, dict):
        for key, when in (("preInjection", "before"), ("postInjection", "after")):
            if key in wait_for:
                stages.append((when, wait_for[key], where + ("waitFor", key)))
        for key in wait_for:
            if key not in ("preInjection", "postInjection"):
                _shape(file, diags, where + ("waitFor", key), f"`waitFor.{key}` is neither preInjection nor postInjection")
    elif isinstance(wait_for, list):  # the older form: a list of waiters run after the injections
        stages.append(("after", wait_for, where + ("waitFor",)))
    elif wait_for is not None:
        _shape(file, diags, where + ("waitFor",), "`waitFor` should be a list or a mapping")
    for when, entries, at in stages:
        entries = _expect(file, diags, entries, list, at, "a waiter list")
        for i, entry in enumerate(entries):
            entry = _expect(file, diags, entry, dict, at + (i,), "a waiter")
            identifier = _expect(file, diags, entry.get("id"), str, at + (i, "id"), "a waiter's `id`")
            waits.append((when, identifier, entry.get("args") or {}, Where(file, at + (i,))))
    return out_injections, waits


# ---- finding the other files of the same scenario ---------------------------------------------------------


def _folder_of_index(path: Path, number) -> Path | None:
    # ITBench's layout: library/scenarios/N.json and scenarios/scenario_N/ under one root
    for root in (path.parent.parent.parent, path.parent.parent):
        candidate = root / "scenarios" / f"scenario_{number}"
        if (candidate / "scenario.yaml").is_file():
            return candidate
    return None


def _index_of_folder(folder: Path, number) -> Path | None:
    for root in (folder.parent.parent, folder.parent):
        candidate = root / "library" / "scenarios" / f"{number}.json"
        if candidate.is_file():
            return candidate
    return None


def read_model(path: Path, diags: Diagnostics) -> Model | None:
    model = Model()
    try:
        if path.is_dir() or path.name in ("scenario.yaml", "groundtruth.yaml", "groundtruth_v1.yaml"):
            folder = path if path.is_dir() else path.parent
            scenario_file = folder / "scenario.yaml"
            if not scenario_file.is_file():
                diags.error("E5004", f"`{folder}` holds no scenario.yaml", str(folder), help=
                            "give an ITBench scenario index file (N.json) or a compiled scenario folder (scenario_N/)")
                return None
            scenario = load(scenario_file, diags)
            if scenario is None:
                return None
            read_scenario_yaml(scenario, model, diags)
            index_path = _index_of_folder(folder, model.itbench_id) if model.itbench_id is not None else None
            if index_path is not None:
                index = load(index_path, diags)
                if index is None:
                    return None
                disruptions = model.disruptions
                read_index(index, model, diags)
                model.disruptions = disruptions  # the folder's own faults: it is what was asked for
        elif path.suffix == ".json":
            index = load(path, diags)
            if index is None:
                return None
            read_index(index, model, diags)
            folder = _folder_of_index(path, model.itbench_id) if model.itbench_id is not None else None
            if folder is not None:
                scenario = load(folder / "scenario.yaml", diags)
                if scenario is None:
                    return None
                model.scenario = scenario
        else:
            diags.error("E5004", f"`{path}` is not an ITBench scenario", str(path), help=
                        "give an ITBench scenario index file (N.json) or a compiled scenario folder (scenario_N/)")
            return None
        if folder is not None:
            for name, attr in (("groundtruth_v1.yaml", "v1"), ("groundtruth.yaml", "v2")):
                if (folder / name).is_file():
                    located = load(folder / name, diags)
                    if located is None:
                        return None
                    if not isinstance(located.data, dict):
                        _shape(located, diags, (), f"{name} should be a mapping")
                    setattr(model, attr, located)
    except ImportFailed:
        return None
    return model


# ---- the causal graph of groundtruth_v1.yaml --------------------------------------------------------------

_KINDS = {
    "Deployment": "deployment", "StatefulSet": "statefulset", "Service": "service", "Pod": "pod",
    "ConfigMap": "configmap", "Secret": "secret", "Namespace": "namespace", "HorizontalPodAutoscaler": "hpa",
    "Schedule": "schedule", "NetworkPolicy": "networkpolicy", "ResourceQuota": "resourcequota",
    "NetworkChaos": "networkchaos", "StressChaos": "stresschaos", "JVMChaos": "jvmchaos", "HTTPChaos": "httpchaos",
    "HttpChaos": "httpchaos", "IOChaos": "iochaos", "PodChaos": "podchaos", "DNSChaos": "dnschaos",
    "TimeChaos": "timechaos", "PodDisruptionBudget": "poddisruptionbudget", "Gateway": "gateway",
    "AuthorizationPolicy": "authorizationpolicy", "PeerAuthentication": "peerauthentication",
    "PersistentVolumeClaim": "persistentvolumeclaim", "DaemonSet": "daemonset", "PriorityClass": "priorityclass",
    "ServiceAccount": "serviceaccount",
}


def name_of_filter(pattern: str, kind: str) -> str | None:
    """The object name (or pod glob) an ITBench name filter stands for: `cart\\b` -> cart, `cart-.*` -> cart-*."""
    text = pattern.strip()
    text = re.sub(r"^\^|\$$", "", text)
    text = re.sub(r"(\\b)+$", "", text)
    if text.endswith("*") and not text.endswith(".*"):  # `name-*` written as a glob
        text = text.rstrip("*").rstrip("-")
    if kind == "pod" and not text.endswith(".*"):
        text = text.rstrip("-") + "-.*"
    text = text.replace(".*", "*")
    text = re.sub(r"\\(.)", r"\1", text)
    if kind != "pod":
        text = text.rstrip("*").rstrip("-.")
    if not text or not re.fullmatch(r"[a-z0-9*][a-z0-9.*-]*", text):
        return None
    return text


@dataclass
class Group:
    id: str
    kind: str  # the language's kind
    name: str
    where: Where
    filters: list | None = None  # ITBench's filters, when they are not what the reference derives
    name_form: str | None = None
    namespace: str | None = None
    root_cause: bool = False
    dropped: str | None = None  # why the group is not in the port


def _filters_match(filters: list, kind: str, name: str) -> bool:
    """Whether one of ITBench's filters matches the object the group names (a pod of a pod pattern)."""
    sample = name.replace("*", "7d4b9c8f6-x2x9q") if kind == "pod" else name
    for text in filters:
        try:
            if re.match(text, sample):
                return True
        except re.error:
            continue
    return False


def _derived_filter(kind: str, name: str) -> str:
    from ..backends.itbench import group_filter
    from ..ir import ObjectRef

    return group_filter(ObjectRef("", kind, None, name))


@dataclass
class Graph:
    groups: list[Group] = field(default_factory=list)
    alerts: list = field(default_factory=list)  # (name, group id, description, Where)
    propagations: list = field(default_factory=list)  # (source, target, condition, effect, Where)
    aliases: list = field(default_factory=list)  # ([ids], Where)
    actions: list = field(default_factory=list)  # (id, [texts])
    causes: list = field(default_factory=list)  # (entry, Where): v1 `fault` entries, as data


def read_graph(v1: Located, diags: Diagnostics) -> Graph:
    graph = Graph()
    data = v1.data
    base: tuple = ()
    if isinstance(data.get("spec"), dict):
        data, base = data["spec"], ("spec",)
    groups = data.get("groups") or []
    if not isinstance(groups, list):
        _shape(v1, diags, base + ("groups",), "`groups` should be a list")
    for i, g in enumerate(groups):
        at = base + ("groups", i)
        if not isinstance(g, dict) or not isinstance(g.get("id"), str) or not isinstance(g.get("kind"), str):
            _shape(v1, diags, at, "a group needs an `id` and a `kind`")
        where = Where(v1, at)
        kind = _KINDS.get(g["kind"]) or g["kind"].lower()
        filters = g.get("filter")
        name_form = g.get("name") if isinstance(g.get("name"), str) else None
        if isinstance(filters, str):
            filters = [filters]
        if filters is not None and not (isinstance(filters, list) and all(isinstance(f, str) for f in filters)):
            _shape(v1, diags, at + ("filter",), "a group's `filter` should be a list of strings")
        name = name_form if name_form is not None else (name_of_filter(filters[0], kind) if filters else None)
        group = Group(g["id"], kind, name or "", where, None, name_form,
                      g.get("namespace") if isinstance(g.get("namespace"), str) else None, g.get("root_cause") is True)
        if name is None:
            group.dropped = f"its filter `{(filters or [''])[0]}` names no object"
        elif filters is not None and filters != [_derived_filter(g["kind"], name)]:
            group.filters = list(filters)
        if any(other.id == group.id for other in graph.groups):
            v1.error(diags, "W5001", f"group id `{group.id}` is defined twice; the first definition is kept", at + ("id",),
                     "second definition")
            continue
        graph.groups.append(group)
    for i, a in enumerate(data.get("alerts") or []):
        at = base + ("alerts", i)
        if not isinstance(a, dict) or not isinstance(a.get("id"), str):
            _shape(v1, diags, at, "an alert needs an `id`")
        description = (a.get("metadata") or {}).get("description") if isinstance(a.get("metadata"), dict) else None
        graph.alerts.append((a["id"], a.get("group_id"), description if isinstance(description, str) else None, Where(v1, at)))
    for i, p in enumerate(data.get("propagations") or []):
        at = base + ("propagations", i)
        if not isinstance(p, dict):
            _shape(v1, diags, at, "a propagation should be a mapping")
        text = {k: p.get(k) if isinstance(p.get(k), str) else None for k in ("condition", "effect")}
        graph.propagations.append((p.get("source"), p.get("target"), text["condition"], text["effect"], Where(v1, at)))
    for i, ids in enumerate(data.get("aliases") or []):
        if isinstance(ids, list):
            graph.aliases.append(([x for x in ids], Where(v1, base + ("aliases", i))))
    for i, entry in enumerate(data.get("fault") or [] if isinstance(data.get("fault"), list) else []):
        if isinstance(entry, dict) and entry:
            graph.causes.append((entry, Where(v1, base + ("fault", i))))
    actions = data.get("recommendedActions", data.get("recommended_actions")) or []
    for entry in actions if isinstance(actions, list) else []:
        solution = entry.get("solution") if isinstance(entry, dict) else None
        if isinstance(solution, dict) and isinstance(solution.get("id"), str) and isinstance(solution.get("actions"), list):
            graph.actions.append((solution["id"], [x for x in solution["actions"] if isinstance(x, str)]))
    return graph


# ---- writing .itb ----------------------------------------------------------------------------------------

_APP_PREFIX = {"opentelemetry-demo": "otel", "book-info": "bookinfo"}


def scenario_name(model: Model, statements: list) -> str:
    """The port's name, from its first fault: `otel-cart-pod-failure`, `otel-ad-failure-flag`."""
    first = statements[0] if statements else None
    prefix = _APP_PREFIX.get(model.application or "", model.application or "itbench")
    flag = _flag(first) if first is not None else None
    if first is None:
        base = f"{prefix}-itbench-{model.itbench_id}"
    elif flag:  # a feature flag is named after what it turns on: otel-ad-failure-flag
        base = f"{prefix}-{_camel_to_kebab(flag)}-flag"
    else:
        base = f"{prefix}-{first.target.name}-{first.kind.replace('_', '-')}"
    base = re.sub(r"[^a-z0-9-]+", "-", base.lower()).strip("-")
    if base.startswith(prefix + "-" + prefix):
        base = base[len(prefix) + 1:]
    return base[:63].rstrip("-")


def _flag(statement) -> str | None:
    """The feature flag a fault turns on (its `flag = "..."` argument), if it has one."""
    return next((e.value.value for e in statement.entries
                 if isinstance(e, ast.Attr) and e.key == "flag" and isinstance(e.value, ast.Str)), None)


@dataclass
class Truth:
    """A statement of `expect` with what the corrections need to know about it: the ITBench entry it
    ports (warnings point there), the v1 group it declares and the v1 groups it names."""

    statement: ast.ExpectStmt
    where: Where | None = None
    group: str | None = None  # the v1 group it declares
    uses: tuple = ()  # the v1 groups it names
    what: str = ""


@dataclass
class Draft:
    """The scenario being written: its statements before `expect`, its faults, its ground truth (statements
    that the corrections replace or leave out one by one) and its solutions."""

    name: str
    head: list
    faults: list
    truth: list[Truth] = field(default_factory=list)
    solutions: list = field(default_factory=list)
    # per item of `faults`, the (statement, Where) of each fault and waiter it holds: errors point back there
    origins: list = field(default_factory=list)

    def document(self) -> ast.Scenario:
        expect = [b.expect(t.statement for t in self.truth)] if self.truth else []
        return b.scenario(self.name, [*self.head, *self.faults, *expect, *self.solutions])

    def faults_only(self) -> ast.Scenario:
        return b.scenario(self.name, [*self.head, *self.faults])


def build(model: Model, graph: Graph | None, diags: Diagnostics) -> Draft:
    """The scenario's head and faults, and its ground truth (which may be corrected or left out one by one)."""
    statements: list = []  # the injections' statements, for the name and the implied options
    faults: list = []
    origins: list = []
    topology: list[ast.Object] = []  # declarations of the cluster's components the faults act on
    home = _home_namespace(model)
    for injections, waits in model.disruptions:
        items, sources = [], []
        for identifier, args, where in injections:
            statement = _injection(identifier, args, where, diags, home)
            _provided_component(model, statement, topology, home)
            statements.append(statement)
            items.append(statement.node())
            sources.append((statement, where))
        for when, identifier, args, where in waits:
            statement = _waiter(model, when, identifier, args, where, diags)
            items.append(statement.node())
            sources.append((statement, where))
        faults.append(items[0] if len(injections) == 1 and not waits else b.group(items))
        origins.append(sources)
    head = [b.domain("finops" if model.category == "finops" else "sre"),
            b.complexity(model.complexity if model.complexity in ("low", "medium", "high") else "medium"),
            b.description(model.description or f"ITBench scenario {model.itbench_id}.")]
    if model.tags:
        head.append(b.tags(model.tags))
    head.append(_metadata(model, statements))
    if model.application:
        head.append(_use_app(model, statements, diags))
    if topology:
        head.append(b.topology(topology))
    truth = _truth(model, graph, statements, diags) if graph is not None else []
    return Draft(scenario_name(model, statements), head, faults, truth, origins=origins)


def _at(where: Where, path: tuple | None) -> tuple:
    """Where in the ITBench file an argument of an injection or waiter stands (None: its `id`)."""
    return where.path + (("id",) if path is None else ("args",) + tuple(path))


def _injection(identifier: str, args, where: Where, diags: Diagnostics, home: str | None = None) -> fault_map.Statement:
    statement = fault_map.injection_statement(identifier, args, home)
    if isinstance(statement, str):  # a Problem: why there is no statement, and where (None: the injection's id)
        path = getattr(statement, "path", None)
        where.file.error(diags, "E5003", f"injection `{identifier}` cannot be imported: {statement}", _at(where, path),
                         "not importable", "`itbench faults` lists the faults and their ITBench ids" if path is None
                         else "docs/itbench.md says what the import carries")
        raise ImportFailed
    _report(f"injection `{identifier}`", statement, where, diags)
    return statement


def _report(what: str, statement: fault_map.Statement, where: Where, diags: Diagnostics) -> None:
    """An argument the port cannot say as ITBench says it: E5003 when the port would act otherwise (the import
    stops, after every such argument is reported), W5005 when only its files differ."""
    for problem in statement.problems:
        if problem.fatal:
            where.file.error(diags, "E5003", f"{what} cannot be imported: {problem}", _at(where, problem.path),
                             "not carried", "the language cannot say this argument as ITBench does; docs/itbench.md "
                             "lists what the import carries")
        else:
            where.file.error(diags, "W5005", f"{what}: {problem}", _at(where, problem.path), "not carried",
                             "the port's scenario.yaml will differ from ITBench's here")
    if any(problem.fatal for problem in statement.problems):
        raise ImportFailed


def _waiter(model: Model, when: str, identifier: str, args, where: Where, diags: Diagnostics) -> fault_map.Statement:
    statement = fault_map.waiter_statement(when, identifier, args, model.namespace)
    if isinstance(statement, str):
        where.file.error(diags, "E5003", f"waiter `{identifier}` cannot be imported: {statement}",
                         _at(where, getattr(statement, "path", None)), "not importable")
        raise ImportFailed
    _report(f"waiter `{identifier}`", statement, where, diags)
    return statement


def _metadata(model: Model, statements: list) -> ast.Metadata:
    data: dict = {}
    if model.itbench_id is not None:
        data["itbench_id"] = model.itbench_id
    data["itbench_category"] = model.category
    if model.complexity:
        data["itbench_complexity"] = model.complexity
    if not statements:  # no injection: a control (a false alarm), where the right answer is to change nothing
        data["control"] = True
    return b.metadata(data)


def _use_app(model: Model, statements: list, diags: Diagnostics) -> ast.UseApp:
    """`use app "NAME"`, with the install options the faults do not already ask for."""
    from ..faults import FAULTS

    implied: dict = {}
    for statement in statements:
        if statement.kind in FAULTS:
            _merge_options(implied, FAULTS[statement.kind].app_options)
    options = _without(model.app_options, implied)
    entries = _option_entries(options) if options else None
    if options and entries is None:
        where = Where(model.scenario or model.index, ("spec", "applications"))
        where.file.error(diags, "W5005", "the application's options hold a value the language cannot write; "
                         "they are left out", where.path, "not carried")
    return b.use_app(model.application, [b.block("options", entries)] if entries is not None else None)


def _option_entries(data: dict) -> tuple | None:
    """Install options as body entries (nested mappings as blocks); None if a value has no `.itb` form."""
    entries = []
    for key, value in data.items():
        if isinstance(value, dict):
            inner = _option_entries(value)
            if inner is None:
                return None
            entries.append(b.block(str(key), inner))
            continue
        node = fault_map.argument_value(value)
        if node is None:
            return None
        entries.append(b.attr(str(key), node))
    return tuple(entries)


def _home_namespace(model: Model) -> str | None:
    """The application's namespace, when it has one: an injection elsewhere names its namespace."""
    from ..applications import app_topology

    build = app_topology(model.application)[0] if model.application else None
    spaces = [n.name for n in build.namespaces if not n.provided] if build is not None else []
    return spaces[0] if len(spaces) == 1 else None


def _provided_component(model: Model, statement, topology: list[ast.Object], home: str | None = None) -> None:
    """An experiment that selects pods outside the application (etcd in kube-system) acts on a component
    of the cluster: retarget the statement at it and declare it (and its namespace, once) in `topology`.
    An experiment on a StatefulSet of the application targets it as one."""
    space = statement.selector_namespace
    if statement.selector_labels and (space is None or space in (model.namespace, home)):
        _selected_workload(model, statement, space or home)
    if space is None or space == model.namespace:
        return
    component = cluster.provided_component(space, statement.selector_labels)
    if component is None:
        if home is not None and space != home and "/" not in statement.target.name:
            # pods of another namespace: the checker finds the workload there, or says it has none
            statement.target = b.ref(statement.target.kind, f"{space}/{statement.target.name}")
        return
    statement.target = b.ref(component.kind, component.name)
    for declaration in (component.namespace_declaration, component.declaration):
        if declaration not in topology:
            topology.append(declaration)


def _selected_workload(model: Model, statement, namespace: str | None) -> None:
    """A Chaos Mesh experiment names its pods by labels: its target is the application's one workload whose pods
    carry them (prometheus for `app.kubernetes.io/component: server`, the StatefulSet opensearch), else the
    workload the labels' values name (the checker reports a selector that matches nothing)."""
    from ..applications import app_topology

    build = app_topology(model.application)[0] if model.application else None
    if build is None:
        return
    labels = {str(k): str(v) for k, v in statement.selector_labels.items()}
    matching = [w for w in build.workloads if (namespace is None or w.namespace == namespace)
                and all(w.labels.get(k) == v for k, v in labels.items())]
    named = [w for w in matching if w.name == statement.target.name]
    chosen = named[0] if named else matching[0] if len(matching) == 1 else None
    if chosen is not None:
        statement.target = b.ref("statefulset" if chosen.kind == "StatefulSet" else "deployment", chosen.name)


def _truth(model: Model, graph: Graph, statements, diags: Diagnostics) -> list[Truth]:
    """v1's causal graph as `expect` statements: groups, root causes, alerts, propagations, aliases, causes."""
    resolve = _GroupIds(graph, diags)
    truth = _groups(graph, diags)
    truth += [Truth(b.root_cause(_group(g.id)), g.where, uses=(g.id,), what=f"root cause `{g.id}`")
              for g in graph.groups if g.root_cause and g.dropped is None]
    for name, gid, description, where in graph.alerts:
        target = resolve(gid, where, f"alert `{name}`")
        if target is not None:
            body = [b.attr("description", description)] if description else []
            truth.append(Truth(b.alert(name, _group(target), b.body(body)), where, uses=(target,),
                               what=f"alert `{name}`"))
    for source, target, condition, effect, where in graph.propagations:
        a = resolve(source, where, "a propagation's source")
        z = resolve(target, where, "a propagation's target")
        if a is not None and z is not None:
            body = [b.attr(k, v) for k, v in (("condition", condition), ("effect", effect)) if v]
            truth.append(Truth(b.propagation(_group(a), _group(z), entries=b.body(body)), where, uses=(a, z),
                               what=f"propagation `{a}` -> `{z}`"))
    for ids, where in graph.aliases:
        members = [m for m in (resolve(x, where, "an alias") for x in ids) if m is not None]
        if members:
            truth.append(Truth(b.alias(*(_group(m) for m in members)), where, uses=tuple(members), what="an alias"))
    truth = _gradable(truth, graph, diags)
    for entry, where in graph.causes:
        entries = _data_entries(entry, where, diags)
        if entries:
            truth.append(Truth(b.cause(entries), where, what="a `fault` entry"))
    return truth


def _group(group_id: str) -> ast.Ref:
    return b.ref("group", group_id)


class _GroupIds:
    """Reads the group id an alert, propagation or alias names: a defined one, the one defined id it
    abbreviates (W5001), or none (W5001: the reference is left out)."""

    def __init__(self, graph: Graph, diags: Diagnostics) -> None:
        self.defined = {g.id for g in graph.groups if g.dropped is None}
        self.all_ids = [g.id for g in graph.groups]
        self.diags = diags

    def __call__(self, gid, where: Where, what: str) -> str | None:
        diags = self.diags
        if isinstance(gid, str) and gid in self.defined:
            return gid
        if not isinstance(gid, str):
            where.file.error(diags, "W5001", f"{what} names no group; it is left out", where.path, "no group_id")
            return None
        candidates = [g for g in self.all_ids if g in self.defined and (g.startswith(gid + "-") or gid.startswith(g + "-"))]
        if len(candidates) == 1:
            where.file.error(diags, "W5001", f"{what} names group `{gid}`, which is not defined; "
                             f"read as `{candidates[0]}`", where.path, "undefined group id",
                             f"the only defined group it abbreviates is `{candidates[0]}`")
            return candidates[0]
        hint = did_you_mean(gid, list(self.defined))
        where.file.error(diags, "W5001", f"{what} names group `{gid}`, which is not defined; it is left out",
                         where.path, "undefined group id", f"did you mean `{hint}`?" if hint else "")
        return None


def _groups(graph: Graph, diags: Diagnostics) -> list[Truth]:
    """`group "ID" KIND "NAME" { name | filter, namespace }` for each v1 group the port keeps."""
    out = []
    for g in graph.groups:
        if g.dropped is not None:
            g.where.file.error(diags, "W5004", f"group `{g.id}` is left out: {g.dropped}", g.where.path, "left out")
            continue
        if g.filters is not None and not _filters_match(g.filters, g.kind, g.name):
            g.where.file.error(diags, "W5002", f"group `{g.id}`'s filter `{g.filters[0]}` does not match {g.kind} "
                               f"`{g.name}`, the object it names; the port uses the filter derived from the name",
                               g.where.path + ("filter",), "matches no such object")
            g.filters = None
        body = []
        if g.name_form is not None:
            body.append(b.attr("name", g.name_form))
        elif g.filters is not None:
            body.append(b.attr("filter", g.filters))
        if g.kind == "namespace" and g.namespace:  # a namespace's reference has no namespace of its own
            body.append(b.attr("namespace", g.namespace))
        out.append(Truth(b.ground_group(g.id, b.ref(g.kind, g.name), b.body(body)), g.where, group=g.id,
                         what=f"group `{g.id}`"))
    return out


def _data_entries(data: dict, where: Where, diags: Diagnostics) -> list:
    """A mapping of ITBench data as body entries (`key = value`, `key { ... }`); a value with no `.itb` form
    is left out (W5005)."""
    out = []
    for key, value in data.items():
        if isinstance(value, dict):
            out.append(b.block(str(key), _data_entries(value, where, diags)) if value else b.attr(str(key), {}))
            continue
        node = b.try_literal(value)
        if node is None:
            where.file.error(diags, "W5005", f"`{key}` ({type(value).__name__}) has no .itb form; it is left out",
                             where.path + (key,), "not carried")
            continue
        out.append(b.attr(str(key), node))
    return out


def _gradable(truth: list[Truth], graph: Graph, diags: Diagnostics) -> list[Truth]:
    """Scoring reads aliases as one component: when every propagation stays inside one, there is no chain to
    grade. Aliases that swallow edges are left out (the one with most edges first), then, if every edge is
    still a loop, the propagations."""
    propagations = [t for t in truth if isinstance(t.statement, ast.Propagation)]

    def collapsed(aliases):
        klass = {}
        for index, alias in enumerate(aliases):
            for member in alias.uses:
                klass.setdefault(member, index)
        return all(klass.get(a, a) == klass.get(z, z) for a, z in (p.uses for p in propagations))

    while propagations:
        aliases = [t for t in truth if isinstance(t.statement, ast.Alias)]
        if not collapsed(aliases):
            break
        inside = [(sum(1 for p in propagations if p.uses[0] != p.uses[1] and set(p.uses) <= set(a.uses)), a)
                  for a in aliases]
        inside = [(n, a) for n, a in inside if n]
        if not inside:
            for p in propagations:
                p.where.file.error(diags, "W5004", f"{p.what} is left out: every propagation of the scenario "
                                   "stays inside one group, so there is no chain to grade", p.where.path, "left out")
            truth = [t for t in truth if t not in propagations]
            break
        _, alias = max(inside, key=lambda pair: pair[0])
        alias.where.file.error(diags, "W5004", "an alias is left out: it joins groups between which propagations run "
                               "(as one component, no edge would be left to grade)", alias.where.path, "left out")
        truth = [t for t in truth if t is not alias]
    aliases = [t for t in truth if isinstance(t.statement, ast.Alias)]
    if graph.aliases and not aliases:
        # v1 has aliases, all left out: an explicit one keeps the port from deriving others
        root = next((g.id for g in graph.groups if g.root_cause and g.dropped is None), None)
        if root is not None and any(t.group == root for t in truth):
            truth.append(Truth(b.alias(_group(root)), None, uses=(root,), what="an alias"))
    return truth


def _solutions(graph: Graph | None) -> list[ast.Solution]:
    """v1's recommended actions as solutions; ITBench's id is kept where the title's slug would not give it back."""
    out = []
    for identifier, actions in (graph.actions if graph is not None else []):
        if actions:
            title = re.sub(r"[_-]+", " ", identifier).strip() or identifier
            title = title[:1].upper() + title[1:]
            out.append(b.solution(title, actions, identifier if slug(title) != identifier else None))
    return out


# ---- checking and correcting ------------------------------------------------------------------------------


def _compile(document: ast.Scenario, path: str, full: bool = True):
    """The compile result of the document's text, and its diagnostics. A document nested deeper than the
    parser reads is refused as the parser refuses it, without being printed."""
    from ..compiler import CompileResult, compile_source

    inner = Diagnostics()
    problem = b.too_deep(document)
    if problem is not None:
        inner.error("E1007", problem, path)
        return CompileResult(path), inner
    result = compile_source(print_document(document).encode("utf-8"), path, inner, validate=full)
    return result, inner


def import_sre(path: Path, diags: Diagnostics) -> str | None:
    model = read_model(path, diags)
    if model is None:
        return None
    try:
        graph = read_graph(model.v1, diags) if model.v1 is not None else None
        model.namespace = _namespace(model)
        draft = build(model, graph, diags)
    except ImportFailed:
        return None
    draft.solutions = _solutions(graph)
    shown = f"{draft.name}.itb"
    # what the faults make the root causes (a created Schedule, the target): corrections point there
    base, base_diags = _compile(draft.faults_only(), shown, full=False)
    unperformable = [d for d in base_diags.errors() if d.code == "E2037"]
    if unperformable:
        # ITBench poses `mitigate` everywhere; a fault the agent may not undo (a Chaos Mesh Schedule it cannot
        # list) makes it a task the agent cannot perform: the port poses the diagnosis
        draft.head.append(b.tasks("diagnose"))
        origin = _origin(draft, base, shown, unperformable[0])
        at = origin[0] if origin else Where(model.index or model.scenario,
                                            ("disruptions",) if model.index else ("spec", "faults"))
        at.file.error(diags, "W5006", f"ITBench asks to mitigate, which the agent could not: "
                      f"{unperformable[0].message.removeprefix('`mitigate` is posed, and ')}; the port poses `tasks diagnose`", at.path, "posed as a diagnosis",
                      "E2037: a task the agent cannot perform is not posed")
        base, base_diags = _compile(draft.faults_only(), shown, full=False)
    if base.scenario is None:
        _fail(model, base_diags, diags, draft, base, shown)
        return None
    roots = list(base.scenario.root_causes)
    from ..faults import CREATABLE_KINDS  # the created objects `expect` can name (`schedule "x"`, ...)

    created = [c for i in base.scenario.injections() for c in i.created
               if c not in roots and _KINDS.get(c.kind) in CREATABLE_KINDS]
    # ITBench's name of each object an injection creates (left to the compiler): ground truth naming it is
    # pointed at that injection's object, not at the first of its kind
    injected = [s for sources in draft.origins for s, _ in sources if s.when is None]
    renamed = {s.itbench_name: i.created for s, i in zip(injected, base.scenario.injections())
               if s.itbench_name and i.created}
    if graph is not None and _describes_another_scenario(model, graph, base.scenario, diags):
        graph, draft.truth, draft.solutions = None, [], []
    _disagreements(model, graph, roots, diags)
    corrected = _Corrections(model, draft, graph, roots, created, diags, renamed).run(shown)
    if corrected is None:
        return None
    document, result = corrected
    return _written(document, model, result, diags)


class _Corrections:
    """Compiles the draft and corrects its ground truth until the checker accepts it: a propagation between
    components that meet only through others becomes `indirect`, a root-cause group on an object the
    injection does not create or change is pointed at what it does (W5002), and a statement the checker
    still refuses is left out (W5004), with what names its group."""

    def __init__(self, model: Model, draft: Draft, graph: Graph | None, roots, created, diags: Diagnostics,
                 renamed: dict | None = None) -> None:
        self.model, self.draft, self.graph, self.diags = model, draft, graph, diags
        self.roots, self.created, self.renamed = roots, created, renamed or {}
        self.retargeted: set[str] = set()

    def run(self, shown: str):
        """(the accepted document, its compile result), or None after an error (E5005)."""
        draft = self.draft
        for _ in range(len(draft.truth) + 2):
            document = draft.document()
            result, inner = _compile(document, shown, full=False)
            if result.scenario is not None and not inner.errors():
                graded = _gradable(draft.truth, self.graph, self.diags) if self.graph is not None else draft.truth
                if graded == draft.truth:
                    return document, result
                draft.truth = graded
                continue
            refused = self.correct(_errors_by_statement(result, inner, draft.truth, shown))
            if refused is None:
                _fail(self.model, inner, self.diags, draft, result, shown)
                return None
            if refused:
                self.leave_out(refused)
        _fail(self.model, inner, self.diags, draft, result, shown)
        return None

    def correct(self, errors: list) -> dict | None:
        """Correct what the errors point at. Returns the statements still refused (by id, with the first
        reason), or no statement when a correction was made (what names a corrected group may compile now), or
        None when an error is about something other than the ground truth."""
        truth = self.draft.truth
        refused: dict[int, tuple[Truth, str]] = {}
        corrected = False
        for error, record in errors:
            if record is None:
                return None
            if error.code == "E2012" and isinstance(record.statement, ast.Propagation) \
                    and not _has_entry(record.statement, "indirect") and any(t is record for t in truth):
                # ITBench links components that meet only through others (producer and consumer of a topic):
                # said as `indirect = true`, which the checker accepts when a chain of dependencies joins them
                statement = b.with_entries(record.statement, b.attr("indirect", True))
                truth[_index(truth, record)] = Truth(statement, record.where, record.group, record.uses, record.what)
                corrected = True
                continue
            refused.setdefault(id(record), (record, error.message))
            if record.group is not None and record.group not in self.retargeted:
                self.retargeted.add(record.group)
                fixed = _retarget(record, self.roots, self.created, self.graph, error.message, self.diags,
                                  self.renamed)
                if fixed is not None:
                    truth[_index(truth, record)] = fixed
                    corrected = True
        return {} if corrected else refused

    def leave_out(self, refused: dict) -> None:
        """Leave out the refused statements and those that name a group they declare (W5004)."""
        dropped_groups = {record.group for record, _ in refused.values() if record.group}
        kept = []
        for record in self.draft.truth:
            why = refused[id(record)][1] if id(record) in refused else \
                "it names a group that is left out" if dropped_groups & set(record.uses) else None
            if why is None:
                kept.append(record)
            elif record.where is not None:
                record.where.file.error(self.diags, "W5004", f"{record.what} is left out: {why}", record.where.path,
                                        "left out", "the port cannot say it; docs/itbench-compat.md lists such "
                                        "differences")
        self.draft.truth = kept


def _errors_by_statement(result, inner: Diagnostics, truth: list[Truth], shown: str) -> list:
    """Each error of a compile with the ground-truth statement it is about (None: about something else).

    The printed text is the compiled one, so the statements the compiler parsed pair in order with the
    built ones, and an error is about the statement whose span holds it. When the text did not parse,
    each statement is parsed alone: those that do not read back are the ones at fault."""
    if result.document is None:
        return _unreadable(truth) or [(error, None) for error in inner.errors()[:1]]
    expect = next((s for s in result.document.statements if isinstance(s, ast.Expect)), None)
    parsed = list(zip(expect.statements, truth)) if expect is not None else []
    return [(error, next((record for node, record in parsed if error.path == shown
                          and node.span.line <= error.span.line <= node.span.end_line), None))
            for error in inner.errors()]


def _unreadable(truth: list[Truth]) -> list:
    """The statements that do not parse back (a name the language cannot write, values nested too deep),
    with the parser's error."""
    from ..parser import parse_text

    out = []
    for record in truth:
        probe = b.scenario("probe", [b.expect([record.statement])])
        parse_diags = Diagnostics()
        problem = b.too_deep(probe)
        if problem is not None:
            parse_diags.error("E1007", problem, "<probe>")
        elif parse_text(print_document(probe), "<probe>", parse_diags) is not None:
            continue
        if parse_diags.errors():
            out.append((parse_diags.errors()[0], record))
    return out


def _has_entry(statement, key: str) -> bool:
    return any(entry.key == key for entry in statement.entries or ())


def _index(truth: list[Truth], record: Truth) -> int:
    return next(i for i, t in enumerate(truth) if t is record)


def _namespace(model: Model) -> str | None:
    for injections, _ in model.disruptions:
        for _, args, _ in injections:
            target = args.get("kubernetesObject") if isinstance(args, dict) else None
            meta = target.get("metadata") if isinstance(target, dict) else None
            if isinstance(meta, dict) and isinstance(meta.get("namespace"), str) and meta["namespace"] != "chaos-mesh":
                return meta["namespace"]
    return {"opentelemetry-demo": "otel-demo", "book-info": "book-info"}.get(model.application or "")


def _fail(model: Model, inner: Diagnostics, diags: Diagnostics, draft: Draft | None = None, result=None,
          shown: str = "") -> None:
    """The scenario's faults do not compile: an error at the ITBench file, with the checker's reason. An error
    in a fault or waiter points at its injection or waiter, and at the argument it is about when the fault's
    entry carries one (`gracePeriod` for `grace_period`)."""
    file = model.index or model.scenario
    where = ("disruptions",) if file is model.index else ("spec", "faults")
    for error in inner.errors()[:3]:
        origin = _origin(draft, result, shown, error) if draft is not None and result is not None else None
        if origin is None:
            file.error(diags, "E5005", f"the imported scenario does not compile: {error.message}", where,
                       "imported from here", error.help)
            continue
        at, statement, source = origin
        what = f"{'waiter' if statement.when else 'fault'} `{statement.kind}`"
        argument = f" (argument `{'.'.join(str(p) for p in source)}`)" if source else ""
        said = "" if error.message.startswith(what) and not argument else f"{what}{argument}: "
        at.file.error(diags, "E5005", f"the imported scenario does not compile: {said}{error.message}",
                      at.path + (("args",) + tuple(source) if source else ()), "imported from here", error.help)
    if not inner.errors():
        file.error(diags, "E5005", "the imported scenario does not compile", where)


def _origin(draft: Draft, result, shown: str, error):
    """(the injection's or waiter's Where, its statement, the ITBench argument the error is about or None) of
    an error inside a fault or waiter of the compiled draft; None for an error elsewhere."""
    document = getattr(result, "document", None)
    if document is None or error.path != shown:
        return None
    nodes = [s for s in document.statements if isinstance(s, (ast.Fault, ast.Group))]
    if len(nodes) != len(draft.origins):
        return None
    for node, sources in zip(nodes, draft.origins):
        items = list(node.items) if isinstance(node, ast.Group) else [node]
        for item, (statement, at) in zip(items, sources):
            if not _inside(item.span, error.span):
                continue
            if _inside(item.target.span, error.span):  # the target: the injection's `kubernetesObject`
                return at, statement, statement.sources.get("", ("kubernetesObject",))
            key = _entry_key(item.entries or (), error.span)
            while key and key not in statement.sources:
                key = key.rpartition(".")[0]
            return at, statement, statement.sources.get(key) if key else None
    return None


def _inside(outer, inner) -> bool:
    return (outer.line, outer.column) <= (inner.line, inner.column) and \
        (inner.end_line, inner.end_column) <= (outer.end_line, outer.end_column)


def _entry_key(entries, span, prefix: str = "") -> str | None:
    """The dotted key of the innermost entry whose text holds `span` (`replace.body`)."""
    for entry in entries:
        if _inside(entry.span, span):
            key = f"{prefix}{entry.key}"
            if isinstance(entry, ast.Block):
                return _entry_key(entry.entries, span, key + ".") or key
            return key
    return None


def _retarget(record: Truth, roots, created, graph: Graph, message: str, diags: Diagnostics,
              renamed: dict | None = None) -> Truth | None:
    """A root-cause group on an object the injection does not create or change: point it at what it does
    (the object an injection creates under the name ITBench gave it, `renamed`; else an object of the group's
    kind that the injection creates and no other group names, else the first such object, else the fault's
    root cause)."""
    group = next((g for g in graph.groups if g.id == record.group), None)
    renamed = renamed or {}
    # any group on an object under ITBench's name (a Schedule's experiment too), else a root-cause group
    if group is None or not roots or not (group.root_cause or group.name in renamed):
        return None
    same = [r for r in renamed.get(group.name, []) if _KINDS.get(r.kind) == group.kind] \
        or [r for r in [*roots, *created] if _KINDS.get(r.kind) == group.kind] or list(roots)
    # an object no other group names first: two root-cause groups of two faults stand for two objects
    taken = {(g.kind, r.name) for g in graph.groups if g.id != group.id
             for r in renamed.get(g.name, []) if _KINDS.get(r.kind) == g.kind} \
        | {(g.kind, g.name) for g in graph.groups if g.id != group.id}
    root = next((r for r in same if (_KINDS.get(r.kind), r.name) not in taken), same[0])
    kind = _KINDS.get(root.kind)
    if kind is None or (kind == group.kind and root.name == group.name):
        return None
    record.where.file.error(diags, "W5002", f"group `{group.id}` names {group.kind} `{group.name}`, which the "
                            f"injection does not create or change; the port names {kind} `{root.name}`",
                            record.where.path, "not what the injection creates", message)
    # ITBench's filters on its name of the object, kept on the port's name (where they matched it)
    body = b.body([b.attr("filter", [f.replace(group.name, root.name) for f in group.filters])]) \
        if group.name in renamed and group.filters else None
    return Truth(b.ground_group(group.id, b.ref(kind, root.name), body), record.where, group=group.id,
                 what=record.what)


def _describes_another_scenario(model: Model, graph: Graph, scenario, diags: Diagnostics) -> bool:
    """W5003: every injection acts on a workload or service, and v1 names none of them: its causal graph is
    another scenario's (a copied file). The port then derives its ground truth from the faults."""
    targets = [i.target for i in scenario.injections()]
    if not targets or any(t.kind not in ("Deployment", "StatefulSet", "Service") for t in targets):
        return False
    names = {t.name for t in targets}
    stems = {g.name.rstrip("*").rstrip("-") for g in graph.groups if g.dropped is None}
    if names & stems:
        return False
    where = graph.groups[0].where if graph.groups else None
    if where is not None:
        where.file.error(diags, "W5003", "v1 and v2 disagree: groundtruth_v1.yaml names none of the objects the "
                         f"injections act on ({', '.join(sorted(names))}); it describes another scenario, so the port "
                         "derives its ground truth from the faults", (where.path[0],) if where.path else (),
                         "another scenario's ground truth")
    return True


def _disagreements(model: Model, graph: Graph | None, roots, diags: Diagnostics) -> None:
    """W5003: the v1 root causes name nothing that the v2 ground truth (its entities) names."""
    if graph is None or model.v2 is None:
        return
    spec = model.v2.data.get("spec") if isinstance(model.v2.data, dict) else None
    entities = spec.get("entities") if isinstance(spec, dict) else None
    if not isinstance(entities, list):
        return
    names = set()
    for entity in entities:
        meta = entity.get("metadata") if isinstance(entity, dict) else None
        if isinstance(meta, dict) and isinstance(meta.get("name"), str):
            names.add(meta["name"])
    import fnmatch

    for group in graph.groups:
        if not group.root_cause or group.dropped is not None:
            continue
        if not any(fnmatch.fnmatchcase(n, group.name) or n == group.name or n.startswith(group.name.rstrip("*"))
                   for n in names):
            group.where.file.error(diags, "W5003", f"v1 and v2 disagree: root-cause group `{group.id}` ({group.kind} "
                                   f"`{group.name}`) is none of the v2 entities ({', '.join(sorted(names))})",
                                   group.where.path, "v1 root cause", "the port keeps v1's causal graph and "
                                   "derives v2 from its faults")


def _written(document: ast.Scenario, model: Model, result, diags: Diagnostics) -> str:
    """The port's text, under a comment saying what it ports; W5005 where its compiled scenario.yaml or
    groundtruth.yaml differs from ITBench's."""
    import yaml

    notes = Notes()
    if model.itbench_id is not None:
        notes.add(document, before=[f"# Imported from ITBench scenario {model.itbench_id}."])
    for file_name, located in (("scenario.yaml", model.scenario), ("groundtruth.yaml", model.v2)):
        if located is None or (file_name == "scenario.yaml" and model.older_shape):
            continue
        ours = yaml.safe_load(result.files[f"itbench/{file_name}"].decode("utf-8"))
        theirs = located.data
        if ours != theirs:
            keys = _differing(ours, theirs)
            located.error(diags, "W5005", f"the port's {file_name} differs from ITBench's at {', '.join(keys[:4])}",
                          _first_path(keys), "differs", "docs/itbench-compat.md lists the known differences")
    return print_document(document, notes=notes)


def _differing(a, b, prefix: str = "") -> list[str]:
    if isinstance(a, dict) and isinstance(b, dict):
        out = []
        for key in sorted(set(a) | set(b), key=str):
            if a.get(key) != b.get(key):
                out.extend(_differing(a.get(key), b.get(key), f"{prefix}.{key}" if prefix else str(key)))
        return out
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        out = []
        for i, (x, y) in enumerate(zip(a, b)):
            if x != y:
                out.extend(_differing(x, y, f"{prefix}[{i}]"))
        return out
    return [prefix or "the top"]


def _first_path(keys: list[str]) -> tuple:
    if not keys:
        return ()
    out: list = []
    for part in re.findall(r"[^.\[\]]+|\[\d+\]", keys[0]):
        out.append(int(part[1:-1]) if part.startswith("[") else part)
    return tuple(out)
