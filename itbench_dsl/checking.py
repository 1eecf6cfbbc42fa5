"""One way to check a scenario, below every driver.

`itbench check`, the language server, the variant generators and the tests run the same steps in
the same order (miniwdl's `check` is `load()` followed by `Lint.lint()`; this is its counterpart):

1. compile (`compiler.compile_source` or `compile_document`): parse, resolve and check, generate
   every output and validate it;
2. self-validation (`corpus.self_validate`): the scenario's evaluator on its own derived states;
3. lint (`lint.lint_item`): the single-file warning rules.

A file with an error gets no self-validation and no lint: its errors, not a pile of consequences.
`check_files` checks many files (in several processes when asked) and then runs the rules that need
them all (W2006 identical scenarios, W2001 the same fault mechanism on the same target) and drops
the warnings a run (`--ignore`) or a scenario (`metadata { lint_allow = [...] }`) turns off.
"""

from __future__ import annotations

import dataclasses
import os
import re
import sys
from dataclasses import dataclass
from typing import Iterable, Iterator

from . import ast
from .compiler import CompileResult, compile_document, compile_source
from .diagnostics import Diagnostic, Diagnostics
from .analysis.lint import Linted, allowed_codes, identical_scenarios, lint_item
from .source import SourceFile


@dataclass
class FileCheck:
    """What checking one file found: its diagnostics (and the source texts they point into), its
    compile result (AST, source map, IR and, when clean, the bundle's files) and, when the file has
    no error, its lint item (which cross-file rules compare)."""

    path: str
    diagnostics: list[Diagnostic]
    sources: dict[str, SourceFile]
    result: CompileResult
    linted: Linted | None = None
    # the self-validation was not run: asked for results already on disk only, and none were (`validate="cached"`)
    validation_pending: bool = False

    @property
    def scenario(self):
        """The checked scenario, when the file has no error."""
        return self.linted.scenario if self.linted is not None else None

    @property
    def allowed(self) -> set[str]:
        """The warnings the scenario allows (`metadata { lint_allow = [...] }`), read from its IR whether or not
        the file has errors: an allowed warning stays allowed beside an error."""
        return allowed_codes(self.result.scenario if self.result is not None else None)

    @property
    def has_errors(self) -> bool:
        return any(d.severity == "error" for d in self.diagnostics)

    def errors(self) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.severity == "error"]

    def slim(self) -> "FileCheck":
        """The check without the bundle's bytes and the resolved topology: what crosses a process boundary.
        The scenario's digest (W2006) is taken first, here, where the objects of its application are
        shared with every other scenario of the process and each is hashed once."""
        if self.linted is not None:
            self.linted.digest  # noqa: B018
        result = dataclasses.replace(self.result, files={}, topology=None)
        return dataclasses.replace(self, result=result)


def check_source(data: bytes, path: str, hints: str = "none", lint: bool = True, validate: str = "always") -> FileCheck:
    """Check one file's bytes (`hints`: the prompt's hint level, backends/prompt.HINT_LEVELS). `validate="cached"`
    takes the self-validation's results from disk when the same scenario was validated before, and otherwise
    leaves it out (`validation_pending`): what an editor shows at once, before the slow part."""
    diags = Diagnostics()
    result = compile_source(data, path, diags, hints=hints)
    return _finish(result, diags, lint, hints, validate=validate)


def check_document(document: ast.Document, path: str, hints: str = "none", lint: bool = True) -> FileCheck:
    """Check an AST built in code (a generated variant) as if it were the file `path`."""
    diags = Diagnostics()
    result = compile_document(document, path, diags, hints=hints)
    # an AST built in code is a new scenario (a generated variant): its results are not kept on disk
    return _finish(result, diags, lint, hints, keep=False)


def _finish(result: CompileResult, diags: Diagnostics, lint: bool, hints: str = "none", keep: bool = True,
            validate: str = "always") -> FileCheck:
    linted = None
    pending = False
    if result.scenario is not None and result.files and not diags.has_errors:
        diags.extend(alert_placement(result))
        diags.extend(alert_thresholds(result))
        diags.extend(alert_durations(result))
        diags.extend(alert_waits(result))
        diags.extend(scale_in_window(result))
        diags.extend(agent_view(result, hints))
        diags.extend(symptoms(result))
        diags.extend(fingerprints(result))
    if result.scenario is not None and result.files and not diags.has_errors:
        validated = self_validation(result, keep, cached_only=validate == "cached")
        pending = validated is None
        diags.extend(validated or [])
        if not diags.has_errors:
            linted = Linted(result.path, result.document, result.scenario, result.source_map)
            if lint:
                diags.extend(lint_item(linted))
    # the texts the diagnostics point into, not those of every application the file imports
    wanted = {result.path} | {d.path for d in diags.items}
    sources = {k: v for k, v in diags.sources.items() if k in wanted}
    return FileCheck(result.path, diags.items, sources, result, linted, pending)


def alert_placement(result: CompileResult) -> list[Diagnostic]:
    """E2035: expected alerts the faults cannot raise where they are expected (faults/alerting.py),
    located at their `alert` statement."""
    from .faults.alerting import placement_problems

    statements = _alert_statements(result)
    out = []
    for index, message, hint in placement_problems(result.scenario):
        span = statements[index].span if index < len(statements) else result.document.name_span
        out.append(Diagnostic("E2035", f"alert `{result.scenario.alerts[index].name}`: {message}", result.path,
                              span, "the faults cannot raise it here", help=hint))
    return out


def alert_thresholds(result: CompileResult) -> list[Diagnostic]:
    """W2019: expected latency alerts whose threshold the faults' delay does not cross (faults/alerting.py, the
    comparison the generators refuse a variant by), located at their `alert` statement."""
    from .faults.alerting import latency_short_of_alerts

    statements = _alert_statements(result)
    out = []
    for index, message in latency_short_of_alerts(result.scenario):
        span = statements[index].span if index < len(statements) else result.document.name_span
        out.append(Diagnostic("W2019", message, result.path, span, "the fault is too small to raise it",
                              help="make the delay longer than the alert's threshold, or expect another alert; "
                                   "`itbench explain W2019`"))
    return out


def alert_durations(result: CompileResult) -> list[Diagnostic]:
    """W2020: expected alerts the faults stop acting too soon to raise (a one-shot experiment shorter than the
    alert's rule needs: faults/alerting.py, the comparison the generators refuse a variant by), located at the
    fault that acts longest."""
    from .faults.alerting import alerts_outlasting_faults

    out = []
    for _index, injection, message in alerts_outlasting_faults(result.scenario):
        span = result.source_map.injection(injection) if result.source_map is not None else result.document.name_span
        out.append(Diagnostic("W2020", message, result.path, span, "ends before the alert can fire",
                              help="let the fault act longer (a longer `duration`, or none: until it is deleted), or "
                                   "expect an alert it can raise; `itbench explain W2020`"))
    return out


def alert_waits(result: CompileResult) -> list[Diagnostic]:
    """W2022: expected alerts whose rule's `for` a run's alert wait does not cover (faults/alerting.py), located at
    their `alert` statement."""
    from .faults.alerting import alerts_beyond_wait

    statements = _alert_statements(result)
    out = []
    for index, message in alerts_beyond_wait(result.scenario):
        span = statements[index].span if index < len(statements) else result.document.name_span
        out.append(Diagnostic("W2022", message, result.path, span, "fires after the run stops waiting",
                              help="expect an alert whose rule fires sooner (KubePodNotReady for a pod that stays "
                                   "Pending); `itbench explain W2022`"))
    return out


def scale_in_window(result: CompileResult) -> list[Diagnostic]:
    """W2021: `mitigate` checks only an autoscaler's scale-in passes, graded before its stabilization window ends
    (faults/autoscaling.py), located at the `within` of `mitigated when` when it has one, else at the check."""
    from .faults.autoscaling import too_soon

    found = too_soon(result.scenario, _deployed(result.files))
    if not found:
        return []
    expect = [s for s in result.document.statements if isinstance(s, ast.Expect)]
    statements = expect[0].statements if expect else ()
    mitigated = next((s for s in statements if isinstance(s, ast.Mitigated)), None)
    optima = [s for s in statements if isinstance(s, ast.Optimal)]
    alerts = _alert_statements(result)
    out = []
    for read, message, needed in found:
        span = None
        if mitigated is not None and mitigated.within is not None:
            span = mitigated.within.span
        elif read.where[0] == "optimal" and read.where[1] < len(optima):
            span = optima[read.where[1]].span
        elif read.where[0] == "predicate" and mitigated is not None and read.where[1] < len(mitigated.predicates):
            span = mitigated.predicates[read.where[1]].span
        elif read.where[0] == "alert":
            span = next((a.span for a in alerts if a.name == read.where[1]), None)
        if span is None:
            span = mitigated.span if mitigated is not None else result.document.name_span
        out.append(Diagnostic("W2021", message, result.path, span, "graded before the autoscaler scales in",
                              help=f"declare a window that covers it: `mitigated when within "
                                   f"{-(-int(needed) // 60)}m {{ ... }}`; `itbench explain W2021`"))
    return out


def _deployed(files: dict[str, bytes]) -> list[dict]:
    """The objects the bundle deploys, healthy first (its manifests, then what the injection applies)."""
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    out: list[dict] = []
    for name in [*sorted(n for n in files if n.startswith("manifests/")), "inject/apply.yaml"]:
        if name in files and name.endswith(".yaml"):
            try:
                out += [d for d in yaml.load_all(files[name], Loader=loader) if isinstance(d, dict)]
            except yaml.YAMLError:
                continue
    return out


def _alert_statements(result: CompileResult) -> list[ast.Alert]:
    """The `alert` statements of the scenario's `expect` block, in the order of the scenario's alerts."""
    expect = [s for s in result.document.statements if isinstance(s, ast.Expect)]
    return [s for s in expect[0].statements if isinstance(s, ast.Alert)] if expect else []


def agent_view(result: CompileResult, hints: str = "none") -> list[Diagnostic]:
    """E4010: what the agent can read in the cluster (objects, alert rules, its access, the prompt) that gives
    the answer away (agent_view.py), located at the statement that produced the object (a fault, an
    `alert_rule`, a topology object), else at the scenario's name."""
    from .agent_view import findings
    from .backends.prompt import render_chunks

    scenario = result.scenario
    source_map = result.source_map
    fallback = source_map.scenario if source_map is not None else result.document.name_span
    injections = scenario.injections()
    made_by: dict[tuple, int] = {}  # what each injection creates or changes -> its index
    for index, injection in enumerate(injections):
        for ref in [*injection.created, injection.target, *injection.side_objects, injection.root]:
            if ref is not None:
                made_by.setdefault((ref.kind, ref.namespace, ref.name), index)
    out = []
    for finding in findings(scenario, result.files, render_chunks(scenario, hints)):
        path, span = result.path, fallback
        key = (finding.kind, finding.namespace, finding.name)
        found = source_map.object(key) if source_map is not None else None
        if finding.where == "inject/apply.yaml" and source_map is not None and (
                key in made_by or len(injections) == 1):  # at the fault that applies it
            span = source_map.injection(made_by.get(key, 0))
        elif found is not None:
            path, span = found
        elif finding.kind == "PrometheusRule":
            span = _alert_rule_span(result, finding) or fallback
        elif finding.where == "manifests/agent-access.yaml":  # the agent's rules: its `agent` statement, if any
            span = next((s.span for s in result.document.statements if isinstance(s, ast.Agent)), fallback)
        out.append(Diagnostic("E4010", finding.message(), path, span, "the agent can read this",
                              help=f"{finding.hint()}; `itbench explain E4010`"))
    return out


def symptoms(result: CompileResult) -> list[Diagnostic]:
    """W2015: faults whose effect nothing in the scenario shows (faults/symptoms.py), at their fault statement."""
    from .faults.symptoms import unobservable

    out = []
    for index, message in unobservable(result.scenario):
        span = result.source_map.injection(index) if result.source_map is not None else result.document.name_span
        out.append(Diagnostic("W2015", message, result.path, span, "nothing shows this fault",
                              help="expect the alert that measures its symptom (an `alert_rule` on the metric it "
                                   "moves) or run a `probe`; `itbench explain W2015`"))
    return out


def fingerprints(result: CompileResult) -> list[Diagnostic]:
    """W2016: an object a fault creates whose image comes from a registry no object of the application pulls from
    (agent_view.foreign_images); W2018: one that is the only object of its kind the agent can list where it is
    (agent_view.lone_kinds). Each at the fault that creates it."""
    from .agent_view import foreign_images, lone_kinds

    scenario = result.scenario
    if scenario.compliance is not None:
        return []
    made_by = {(ref.kind, ref.namespace, ref.name): index for index, injection in enumerate(scenario.injections())
               for ref in injection.created}
    out = []
    objects = _cluster_objects(result)
    for finding in foreign_images(objects):
        index = made_by.get((finding.kind, finding.namespace, finding.name), 0)
        span = result.source_map.injection(index) if result.source_map is not None else result.document.name_span
        out.append(Diagnostic("W2016", f"the agent can tell the fault's objects apart: {finding.why} in "
                              f"{finding.subject()}, {finding.field}: `{finding.text}`", result.path, span,
                              "an image unlike the application's",
                              help="pull the fault's image from a registry the application uses (a mirror of it), "
                                   "or allow the warning and say why; `itbench explain W2016`"))
    for finding in lone_kinds(objects):
        index = made_by.get((finding.kind, finding.namespace, finding.name), 0)
        span = result.source_map.injection(index) if result.source_map is not None else result.document.name_span
        out.append(Diagnostic("W2018", f"the agent can tell the fault's objects apart: {finding.subject()} is "
                              f"{finding.why}", result.path, span, "a kind only the fault brings",
                              help="give the application objects of that kind there (decoys: docs/fault-kinds.md), "
                                   "or allow the warning and say why; `itbench explain W2018`"))
    return out


def _cluster_objects(result: CompileResult) -> dict[str, list[dict]]:
    from .agent_view import cluster_objects

    return cluster_objects(result.scenario)


def _alert_rule_span(result: CompileResult, finding):
    """The `alert_rule` statement a finding in a PrometheusRule comes from, when the scenario declares it."""
    by_expr = {r.expr: r.name for r in result.scenario.alert_rules}  # a finding in a rule's expression
    for statement in result.document.statements:
        if isinstance(statement, ast.AlertRule) and (statement.name in finding.text
                                                     or by_expr.get(finding.text) == statement.name):
            return statement.span
    return None


def self_validation(result: CompileResult, keep: bool = True, cached_only: bool = False) -> list[Diagnostic] | None:
    """E4004/E4005: the scenario's evaluator on its adversarial corpus (corpus.self_validate),
    located at the scenario's name, or at the `mitigated when` predicate that alone fails the states that
    must pass; E4006/W2009/W2010: its solutions replayed (solutions.py), located
    at the step they concern. `keep`: read and keep the results on disk (self_validated); `cached_only`: None
    when they are not on disk yet."""
    span = result.source_map.scenario if result.source_map is not None else result.document.name_span
    predicates = result.source_map.predicates if result.source_map is not None else []
    validated = self_validated(result, keep, cached_only)
    if validated is None:
        return None
    problems, found = validated
    out = []
    for code, message, blamed in problems:
        if blamed is not None and blamed < len(predicates):  # the predicate that fails healthy states: its path
            out.append(Diagnostic(code, message, result.path, predicates[blamed], "does not hold on a healthy state",
                                  help="check the path and the value against the object the healthy state holds; "
                                       f"`itbench explain {code}`"))
        else:
            out.append(Diagnostic(code, f"scenario `{result.scenario.name}`: {message}", result.path, span,
                                  "self-validation failed", help=f"`itbench explain {code}`"))
    for finding in found:
        where = result.source_map.steps.get(finding.step, span) if result.source_map is not None else span
        label = ("replayed: does not mitigate" if finding.code not in ("W2009", "E4026", "W2017") else
                 "cannot be replayed" if finding.code == "W2009" else "the agent may not do this")
        out.append(Diagnostic(finding.code, finding.message, result.path, where, label,
                              help=f"`itbench explain {finding.code}`"))
    return out


# self-validation results kept on disk (cache.py): enough for a library and its variants being edited
SELF_VALIDATION_ENTRIES = 4096


def self_validated(result: CompileResult, keep: bool = True, cached_only: bool = False) -> tuple[list, list] | None:
    """(corpus.self_validate_located's problems, solutions.findings) of a compiled scenario, from the on-disk
    cache when the same scenario was validated before by the same package. The key is everything they are
    computed from: the scenario's IR (its `repr`), every file of its bundle (the lock without the source's hash:
    an edit of a comment or of the layout reads the results back), the package's files
    (cache.package_digest) and the Python that runs them; a scenario whose fault kinds are its own (`use
    faults`) is not kept, as the IR names such a kind without its definition. `cached_only`: None rather than
    computing what is not on disk."""
    from . import cache
    from .faults import FAULTS

    scenario = result.scenario
    where = None
    if keep and all(FAULTS.get(i.fault) is i.kind for i in scenario.injections()):
        # only a policy task grades Rego: asking which engine does (`opa version`, a process) is left to those
        engine = _rego_engine() if scenario.compliance is not None else "-"
        parts = [sys.version, engine, cache.package_digest(), repr(scenario)]
        for name, data in sorted(result.files.items()):
            parts += [name, _without_source_hash(data) if name == "bundle.lock" else data]
        where = cache.path_for("selfcheck", *parts)
    found = cache.load(where)
    if isinstance(found, tuple) and len(found) == 2 and all(isinstance(part, list) for part in found):
        return found
    if cached_only:
        return None
    from .analysis.corpus import self_validate_located
    from .analysis.solutions import findings

    value = (list(self_validate_located(scenario)), list(findings(scenario, result.files)))
    cache.store(where, value, keep=SELF_VALIDATION_ENTRIES)
    return value


def _without_source_hash(lock: bytes) -> bytes:
    """bundle.lock without the hash of the scenario's bytes: a comment or layout edit changes that line alone,
    and the results do not depend on it (they depend on the IR and the other files, all in the key; a problem is
    located from the source map of the check that reads it)."""
    return re.sub(rb'(?m)^  "source_sha256": "[0-9a-f]*",\n', b"", lock)


def _rego_engine() -> str:
    """The engine that grades Rego policies here (`opa 1.22.4`, `regopy`, `none`): what the self-validation of
    a Rego task finds depends on it (docs/evaluator.md)."""
    from .runtime.evaluator import rego_engine

    try:
        engine = rego_engine()
    except Exception:  # noqa: BLE001 - an ITBENCH_OPA that names no OPA: validation says so where it grades
        return "unusable"
    return engine[0] if engine else "none"


# ---- many files -------------------------------------------------------------------------------------------

# files are spread over processes from this many on (below, starting them costs more than it saves)
PARALLEL_MIN_FILES = 48


def workers_for(files: int, requested: int | None = None) -> int:
    """How many processes check `files` files: `requested`, or one per core up to 8 from PARALLEL_MIN_FILES on."""
    if requested is not None:
        return max(1, requested)
    if files < PARALLEL_MIN_FILES:
        return 1
    return max(1, min(os.cpu_count() or 1, 8, files // (PARALLEL_MIN_FILES // 2)))


def check_files(jobs: list[tuple[str, bytes]], hints: str = "none", workers: int = 1,
                ignore: Iterable[str] = (), app_path: Iterable[str] = ()) -> tuple[Diagnostics, list[FileCheck]]:
    """Check every (path, bytes) job, then the cross-file rules; drop the warnings `ignore` names
    and those each scenario allows. Returns every diagnostic (with the sources they point into)
    and each file's check, in the order of `jobs`. `app_path`: the folders `use app "NAME"` looks in
    first (applications.app_search_path), in this process and in every worker."""
    from .analysis.mechanisms import duplicate_diagnostics

    diags = Diagnostics()
    checks = list(_check_all(jobs, hints, workers, tuple(str(f) for f in app_path)))
    for one in checks:
        diags.extend(one.diagnostics)
        diags.sources.update(one.sources)
    linted = [one.linted for one in checks if one.linted is not None]
    identical = identical_scenarios(linted)  # W2006, then W2001 for the pairs W2006 does not already report
    reported = {d.path for d in identical}
    name_spans = {one.path: one.result.source_map.scenario for one in checks if one.result.source_map is not None}
    clean = [(one.path, one.scenario) for one in checks]
    same_names = duplicate_names(checks)
    named = {d.path for d in same_names}
    diags.extend(d for d in duplicate_diagnostics(clean, name_spans) if d.path not in reported | named)
    diags.extend(d for d in identical if d.path not in named)
    diags.extend(same_names)
    drop_allowed(diags, set(ignore), checks)
    return diags, checks


def duplicate_names(checks: list[FileCheck]) -> list[Diagnostic]:
    """E2002: two files of one check declare scenarios of one name: their bundles would be one folder
    (`itbench compile` refuses the second the same way)."""
    first: dict[str, str] = {}
    out = []
    for one in checks:
        if one.scenario is None:
            continue
        name = one.scenario.name
        if name not in first:
            first[name] = one.path
            continue
        span = one.result.source_map.scenario if one.result.source_map is not None else one.result.document.name_span
        out.append(Diagnostic("E2002", f"scenario `{name}` is also declared in {first[name]}", one.path, span,
                              "second scenario of this name",
                              help="a bundle's folder is its scenario's name: give each scenario its own"))
    return out


def drop_allowed(diags: Diagnostics, ignore: set[str], checks: list[FileCheck]) -> None:
    """Drop the warnings `ignore` names, and those a scenario allows (`metadata { lint_allow = [...] }`)."""
    allowed = {one.path: one.allowed for one in checks}
    if ignore or any(allowed.values()):
        diags.items = [d for d in diags.items if d.severity != "warning"
                       or (d.code not in ignore and d.code not in allowed.get(d.path, ())
                           and d.code not in allowed.get(_pair_of(d), ()))]


PAIR_CODES = ("W2001", "W2006")  # said of a pair of files, at the later one: either file may allow it


def _pair_of(diag: Diagnostic) -> str | None:
    """The other file of a pair diagnostic (a duplicate is a relation of two files: which one is reported depends
    on the order they are given, so the pair is allowed when either file allows it)."""
    if diag.code not in PAIR_CODES or not diag.notes:
        return None
    m = re.search(r"` is in (.+)$", diag.notes[0].message)
    return m.group(1) if m else None


def _check_chunk(jobs: list[tuple[str, bytes]], hints: str, app_path: tuple[str, ...] = ()) -> list[FileCheck]:
    from .applications import app_search_path

    # set here, in the worker: a context variable of the parent does not reach a spawned process
    with app_search_path(app_path):
        return [check_source(data, path, hints).slim() for path, data in jobs]


def _check_all(jobs: list[tuple[str, bytes]], hints: str, workers: int,
               app_path: tuple[str, ...] = ()) -> Iterator[FileCheck]:
    """Every file's check, in the order of `jobs`, from `workers` processes (in this one when 1)."""
    if workers <= 1:
        yield from _check_chunk(jobs, hints, app_path)
        return
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    # fork shares what this process has built (the parser, the applications, the schema validators)
    method = "fork" if sys.platform.startswith("linux") else "spawn"
    size = max(1, -(-len(jobs) // (workers * 4)))  # a few chunks per worker evens out their lengths
    chunks = [jobs[i:i + size] for i in range(0, len(jobs), size)]
    with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context(method)) as pool:
        for part in pool.map(_check_chunk, chunks, [hints] * len(chunks), [app_path] * len(chunks)):
            yield from part
