"""The pipeline: text -> AST -> IR -> outputs -> validated bundle (in memory).

`compile_source` runs every stage and returns the bundle's files as bytes, keyed by their
path inside the bundle; nothing touches the disk here (see `bundle.write_bundle`). `emit` is the
code-generation stage (every backend's output); making variants of a scenario is generate.py's.
`compile_document` starts from an AST (the variant generators build ASTs). Either returns a
`CompileResult` that keeps what later stages need to locate their findings: the AST, the
source map and the resolved topology. Stage timings are recorded for `benchmarks/compile.py`.
"""

from __future__ import annotations

import hashlib
import re
import time
from dataclasses import dataclass, field
from typing import Callable
from importlib import resources

from . import ast, ir, yamlout
from .version import __version__
from .backends import alert_rules as alert_rules_backend
from .backends import evaluator as evaluator_backend
from .backends import faults as fault_backend
from .backends import itbench as itbench_backend
from .backends import ciso as ciso_backend
from .backends import cover as cover_backend
from .backends import decoys as decoys_backend
from .backends import itbench_ciso as itbench_ciso_backend
from .backends import manifests as manifest_backend
from .backends import prompt as prompt_backend
from .checker import check
from .topology import TopologyBuild
from .diagnostics import Diagnostics
from .memo import IdentityMemo
from .parser import decode, parse_kept
from .source import NO_SPAN, SourceMap, Span
from .serialize import dump_json, dump_yaml, scenario_json
from .validate import validate_all, validate_object


@dataclass
class Timings:
    parse: float = 0.0
    check: float = 0.0
    codegen: float = 0.0
    validate: float = 0.0


@dataclass
class CompileResult:
    """One file through the pipeline. `document` is None when the file did not parse, `scenario`
    None for an application file or when the checker found errors, `files` empty when any stage
    found an error."""

    path: str
    scenario: ir.Scenario | None = None
    files: dict[str, bytes] = field(default_factory=dict)
    timings: Timings = field(default_factory=Timings)
    document: ast.Document | None = None
    source_map: SourceMap | None = None
    topology: TopologyBuild | None = None  # what names resolved against (also when the checker found errors)

    @property
    def name(self) -> str | None:
        return self.scenario.name if self.scenario else None


# shared application objects are validated once per process (see memo.py)
_validate_memo = IdentityMemo(validate_object)


# ---- stages ----------------------------------------------------------------------------------------------


def compile_source(data: bytes, path: str, diags: Diagnostics, validate: bool = True,
                   hints: str = "none") -> CompileResult:
    """Run the whole pipeline on one file's bytes. Errors go to `diags`; files are empty then.

    `hints` is the prompt's hint level (`backends/prompt.HINT_LEVELS`)."""
    start = time.perf_counter()
    errors_before = len(diags.errors())
    source_file = decode(data, path, diags)
    document, dropped = parse_kept(source_file, diags) if source_file is not None else (None, [])
    parse_time = time.perf_counter() - start
    if document is None or len(diags.errors()) > errors_before:
        result = CompileResult(path)
        result.timings.parse = parse_time
        if isinstance(document, ast.Document):
            check_after_syntax_errors(document, path, diags, dropped)
        return result
    result = compile_document(document, path, diags, validate=validate, hints=hints, source=data)
    result.timings.parse = parse_time
    return result


def compile_document(document: ast.Document, path: str, diags: Diagnostics, validate: bool = True,
                     hints: str = "none", source: bytes | None = None) -> CompileResult:
    """The pipeline from an AST. `source`, the file's bytes, goes into bundle.lock; a document
    compiled without them (a generated variant) gets every file but the lock."""
    result = CompileResult(path, document=document)
    errors_before = len(diags.errors())
    start = time.perf_counter()
    checked = check(document, path, diags)
    result.timings.check = time.perf_counter() - start
    result.source_map, result.topology = checked.source_map, checked.topology
    scenario = checked.scenario
    if scenario is None or len(diags.errors()) > errors_before:
        return result
    result.scenario = scenario

    start = time.perf_counter()
    outputs = emit(scenario, diags, path, hints=hints, span=document.name_span)
    result.timings.codegen = time.perf_counter() - start
    if outputs is None:
        return result
    manifests, files = outputs

    if validate:
        start = time.perf_counter()
        validate_manifests(manifests, path, diags, checked.source_map)
        result.timings.validate = time.perf_counter() - start
    if len(diags.errors()) > errors_before:
        return result
    if source is not None:
        files["bundle.lock"] = lock_file(source, scenario, files, hints=hints, modules=checked.topology.module_hashes,
                                         fault_files=checked.fault_files)
    result.files = dict(sorted(files.items()))
    return result


def check_after_syntax_errors(document: ast.Document, path: str, diags: Diagnostics, dropped: list[str]) -> None:
    """Check what parsed of a file with syntax errors, so that one run reports its other errors too. The
    statements the parse dropped are missing from `document`: an error that may follow from their absence
    is not reported (one that names something a dropped text names, or one about the file as a whole)."""
    checked = Diagnostics()
    check(document, path, checked)
    names = set()
    for text in dropped:
        names.update(re.findall(r'"((?:[^"\\\n]|\\.)*)"', text))
        names.update(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", re.sub(r'"(?:[^"\\\n]|\\.)*"?|#[^\n]*', " ", text)))
    for path_, source in checked.sources.items():
        diags.sources.setdefault(path_, source)
    for d in checked.items:
        if d.severity != "error" or d.path != path or d.span == NO_SPAN or d.span == document.name_span:
            continue
        if names & set(re.findall(r"`([^`]*)`", d.message + " " + d.label)):
            continue
        diags.add(d)


def emit(scenario: ir.Scenario, diags: Diagnostics, path: str, hints: str = "none",
             span: Span = NO_SPAN) -> tuple[dict[str, list[dict]], dict[str, bytes]] | None:
    """Every output of a checked scenario: (manifests by file, for validation; all files as bytes).

    `hints` is the prompt's hint level; `span` (the scenario's name) locates a leaking prompt (E4003)."""
    topology = decoys_backend.application_manifests(scenario)
    agent = manifest_backend.scenario_agent_access(scenario)
    _, inject_delete, revert_apply, revert_delete = fault_backend.plan(scenario)
    inject_apply = cover_backend.inject_manifests(scenario)  # the faults' objects, the cover writes, the decoys
    manifests = {
        "manifests/topology.yaml": topology,
        "manifests/agent-access.yaml": agent,
        "inject/apply.yaml": inject_apply,
        "revert/apply.yaml": revert_apply,
        "manifests/existing-policy.yaml": ciso_backend.existing_policy(scenario),  # CISO kyverno_update: the policy to update
        "manifests/alert-rules.yaml": alert_rules_backend.prometheus_rules(scenario),  # the expected alerts' rules
    }
    files: dict[str, bytes] = {}
    for name, documents in manifests.items():
        if documents:
            files[name] = dump_yaml(documents)
    if inject_delete:
        files["inject/delete.yaml"] = dump_yaml([fault_backend.delete_manifest(r) for r in inject_delete])
    if revert_delete:
        files["revert/delete.yaml"] = dump_yaml([fault_backend.delete_manifest(r) for r in revert_delete])
    recreated = fault_backend.recreated(scenario)
    if recreated:  # deleted before inject/apply.yaml (revert/apply.yaml) creates them changed (as they were)
        files["inject/recreate.yaml"] = files["revert/recreate.yaml"] = dump_yaml(
            [fault_backend.delete_manifest(r) for r in recreated])
    inject_exec, revert_exec = fault_backend.exec_steps(scenario)
    if inject_exec:  # commands run in pods (`exec` of a declared fault kind): docs/fault-kinds.md, exec
        files["inject/exec.json"] = dump_json({"version": 1, "steps": inject_exec})
        files["revert/exec.json"] = dump_json({"version": 1, "steps": revert_exec})
    for name, plays in zip(("inject/playbook.yml", "revert/playbook.yml"), ciso_backend.playbooks(scenario)):
        if plays:  # CISO host control: the Ansible play lists that open and close the gap
            files[name] = yamlout.dump(plays).encode("utf-8")
    for name, data in itbench_backend.itbench_files(scenario).items():
        files[f"itbench/{name}"] = dump_yaml([data], sort_keys=True)
    files.update(itbench_ciso_backend.bundle_files(scenario, manifests))  # CISO: ITBench's harness files
    try:
        prompt, leaks = prompt_backend.render_checked(scenario, hints)
    except prompt_backend.TemplateError as exc:
        diags.error("E4001", f"the prompt template failed: {exc}", path, NO_SPAN)
        return None
    for leak in leaks:  # the leakage lint (leakage.py)
        diags.error("E4003", f"{leak.message()} (hint level `{hints}`)", path, span,
                    f"its prompt leaks `{leak.word}`", help=f"from {leak.location()}")
    if leaks:
        return None
    files["prompt.md"] = prompt.encode("utf-8")
    files["scenario.json"] = scenario_json(scenario)
    files["evaluator.py"] = evaluator_backend.evaluator_source(scenario).encode("utf-8")
    return manifests, files


def validate_manifests(manifests: dict[str, list[dict]], path: str, diags: Diagnostics,
                       source_map: SourceMap | None = None) -> None:
    """Every emitted object against its vendored schema and our own rules (E3xxx).

    An issue is reported once per object, at the statement that produced the object (a topology
    object, a fault, the agent block), even when the object appears in several files.
    """
    source_map = source_map or SourceMap(path)
    fallback = source_map.scenario
    seen: set[tuple] = set()
    results = iter(validate_all([obj for documents in manifests.values() for obj in documents], _validate_memo))
    for file_name, documents in manifests.items():
        for index, obj in enumerate(documents):
            issues = next(results)
            if not issues:
                continue
            meta = obj.get("metadata", {}) if isinstance(obj, dict) else {}
            kind, name = obj.get("kind", "?") if isinstance(obj, dict) else "?", meta.get("name", "?")
            where = source_map.object((kind, meta.get("namespace"), name))
            if where is None and file_name == "manifests/agent-access.yaml" and source_map.agent is not None:
                where = (path, source_map.agent)
            source_path, span = where if where is not None else (path, fallback)
            for issue in issues:
                key = (kind, meta.get("namespace"), name, issue.path, issue.message)
                if key in seen:
                    continue
                seen.add(key)
                code = {"schema": "E3001", "unknown-kind": "E3003"}.get(issue.rule, "E3002")
                diags.error(code, f"{kind} `{name}` ({file_name}): {issue.path}: {issue.message}", source_path, span,
                            "generates the invalid object")


# ---- targets: what `itbench compile --target` writes per scenario -----------------------------------------


@dataclass(frozen=True)
class Target:
    """A compile target: `files(result)` gives (the objects to validate, the folder's files); `folder(result)`
    names the folder."""

    name: str
    help: str
    files: "Callable[[CompileResult], tuple[list[dict], dict[str, bytes]]]"
    folder: "Callable[[CompileResult], str]"


def _bundle_target(result: CompileResult):
    return [], result.files


def _itbench_target(result: CompileResult):
    from .backends.itbench_ciso import export_files
    return [], export_files(result.files)


def _itbench_folder(result: CompileResult) -> str:
    from .backends.itbench_ciso import export_folder
    return export_folder(result.scenario)


def _chainsaw_target(result: CompileResult):
    from .backends.chainsaw import chainsaw_files
    test, files = chainsaw_files(result.scenario, result.files)
    return [test], files


def _argo_target(result: CompileResult):
    from .backends.argo import argo_files
    template, files = argo_files(result.scenario, result.files)
    return [template], files


TARGETS: dict[str, Target] = {t.name: t for t in [
    Target("bundle", "the full bundle", _bundle_target, lambda r: r.name),
    Target("itbench", "only ITBench's own files, in its layout (OUTPUT/<ITBench folder>/)", _itbench_target,
           _itbench_folder),
    Target("chainsaw", "the bundle with a Chainsaw Test (chainsaw-test.yaml) that runs it: `chainsaw test OUTPUT/`",
           _chainsaw_target, lambda r: r.name),
    Target("argo", "an Argo WorkflowTemplate per scenario (workflowtemplate.yaml, the bundle inside it)",
           _argo_target, lambda r: r.name),
]}


def target_files(result: CompileResult, target: str, diags: Diagnostics) -> dict[str, bytes]:
    """A compiled scenario's files for `target` (TARGETS); an engine object its schema refuses is an E3001 at
    the scenario (a compiler bug, reported rather than written)."""
    objects, files = TARGETS[target].files(result)
    before = len(diags.errors())
    validate_manifests({f"--target {target}": objects}, result.path, diags, result.source_map)
    return files if len(diags.errors()) == before else {}


def lock_file(source: bytes, scenario: ir.Scenario, files: dict[str, bytes], hints: str = "none",
              modules: dict[str, str] | None = None, fault_files: dict[str, str] | None = None) -> bytes:
    """What produced the bundle: compiler version, source hash, seed, prompt hint level and every file's hash.

    `modules`: the local application files the scenario imports (`use app "./x.itb"`, or one found on the
    search path), by application name -> sha256 of their bytes, so that changing one changes the lock.
    `fault_files`: the fault libraries it loads (`use faults "./faults/x.itb"`), by the path it writes ->
    sha256 of their bytes (a change to a kind's declaration need not change any file of the bundle)."""
    lock = {
        "compiler": f"itbench-dsl {__version__}",
        "ir_version": ir.IR_VERSION,
        "scenario": scenario.name,
        "source_sha256": hashlib.sha256(source).hexdigest(),
        "application": scenario.topology.application,
        "seed": scenario.metadata.get("seed", 0),
        "hints": hints,
        "files": {name: hashlib.sha256(content).hexdigest() for name, content in sorted(files.items())},
    }
    if scenario.topology.application:
        app = resources.files("itbench_dsl").joinpath(f"stdlib/apps/{scenario.topology.application}.itb").read_bytes()
        lock["application_sha256"] = hashlib.sha256(app).hexdigest()
    if modules:
        lock["application_files_sha256"] = dict(sorted(modules.items()))
    if fault_files:
        lock["fault_files_sha256"] = dict(sorted(fault_files.items()))
    return dump_json(lock)
