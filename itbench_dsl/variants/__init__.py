"""Variant generators: many valid, distinct, reproducible scenarios from one.

A generator is a plugin registered under the entry-point group `itbench.generators`; the
built-ins live in `itbench_dsl.variants.builtin` (retarget, sweep, sample, compose, noise,
anonymize, control), which lists them. This module is the plugin API: `from itbench_dsl.variants import
Generator, Context, Variant, Skip`. A generator receives a `Context` (the checked input scenario as AST and IR,
the other inputs, a seeded random generator) and yields `Variant`s (a new scenario AST) or
`Skip`s (why it cannot). This module runs generators in a chain, checks every variant as
`itbench check` does (checking.py: compile, output validation and self-validation), removes
duplicates by semantic hash (identity.py: what the scenario measures, not its text) and writes the
variants, formatted, with `index.json` and `index.csv`. See docs/generators.md.
"""

from __future__ import annotations

import csv
import dataclasses
import hashlib
import io
import json
import random
import re
from dataclasses import dataclass, field
from typing import Callable, Iterable, Iterator, Union

from .. import ast, ir
from ..diagnostics import Diagnostic
from ..analysis.identity import scenario_digest

GROUP = "itbench.generators"
NAME_LIMIT = 63


class GeneratorError(Exception):
    """A generator could not be loaded or failed (E6002); `itbench generate` writes nothing."""


# ---- the plugin API ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Variant:
    """A generated scenario. `name` (optional) replaces the default `<parent>-<generator>-<k>`;
    `note` says in a few words what changed (it goes to the index)."""

    document: ast.Scenario
    note: str = ""
    name: str | None = None


@dataclass(frozen=True)
class Skip:
    """The generator cannot produce a (further) valid variant from this input, and why."""

    reason: str


Result = Union[Variant, Skip]


@dataclass
class Parent:
    """A checked scenario a generator works from: an input file, or a variant of an earlier generator."""

    path: str  # the input file it comes from (for variants: their original input)
    document: ast.Scenario
    scenario: ir.Scenario
    chain: tuple[str, ...] = ()  # the generators that produced it (empty for an input)
    semantic_hash: str = ""
    note: str = ""

    @property
    def name(self) -> str:
        return self.document.name


@dataclass
class Context:
    """What a generator receives for one input."""

    parent: Parent
    library: list[Parent]  # every input of this step (compose pairs the parent with the others)
    seed: int
    rng: random.Random  # seeded from (seed, generator, parent): use it for every random choice
    n: int | None  # -n: how many variants per input (sample: how many draws)
    generator: str

    @property
    def document(self) -> ast.Scenario:
        return self.parent.document

    @property
    def scenario(self) -> ir.Scenario:
        return self.parent.scenario


class Generator:
    """Base class of generators: set `name` and `summary`, implement `generate`."""

    name: str = ""
    summary: str = ""

    def generate(self, ctx: Context) -> Iterable[Result]:  # pragma: no cover - the interface
        raise NotImplementedError


# ---- discovery -----------------------------------------------------------------------------------------


def _load(spec: str):
    import importlib

    module, _, attr = spec.partition(":")
    obj = importlib.import_module(module)
    for part in attr.split("."):
        obj = getattr(obj, part)
    return obj


def entry_point_specs() -> dict[str, str]:
    """Generators registered under the entry-point group, name -> "module:attr"."""
    from importlib.metadata import entry_points

    return {ep.name: ep.value for ep in entry_points(group=GROUP)}


def available() -> dict[str, str]:
    """Every generator: the built-ins (variants/builtin/), then the registered entry points (which may
    override them)."""
    from .builtin import BUILTINS

    return dict(sorted({**BUILTINS, **entry_point_specs()}.items()))


def load_generator(name: str) -> Generator:
    specs = available()
    if name not in specs:
        from ..diagnostics import did_you_mean

        hint = did_you_mean(name, specs)
        raise KeyError(f"unknown generator `{name}`" + (f"; did you mean `{hint}`?" if hint else "")
                       + " (known: " + ", ".join(specs) + ")")
    try:
        obj = _load(specs[name])
        generator = obj() if isinstance(obj, type) else obj
    except Exception as exc:  # noqa: BLE001 - a broken plugin is reported, not raised
        raise GeneratorError(f"generator `{name}` ({specs[name]}) cannot be loaded: {type(exc).__name__}: {exc}") from exc
    if not callable(getattr(generator, "generate", None)):
        raise GeneratorError(f"generator `{name}` ({specs[name]}) has no `generate(ctx)` method")
    return generator


# ---- checking a variant --------------------------------------------------------------------------------


@dataclass
class Checked:
    scenario: ir.Scenario | None  # None when the variant does not check
    problems: list[str]  # its errors as `CODE: message`
    warnings: list[str] = field(default_factory=list)  # what `check --strict` would fail it for, as `CODE: message`


def check_document(document: ast.Scenario, path: str) -> Checked:
    """`itbench check` on a document, without parsing it (parse(print(doc)) == doc): the one check
    of checking.py (compile, output validation, self-validation and lint). `problems` are its errors,
    `warnings` the warnings it does not allow (`metadata { lint_allow }`), which `--strict` fails."""
    from ..checking import check_document as check
    from ..analysis.lint import allowed_codes

    checked = check(document, path, lint=True)
    problems = [f"{d.code}: {d.message}" for d in sorted(checked.errors(), key=Diagnostic.sort_key)]
    if problems:
        return Checked(None, problems)
    allowed = allowed_codes(checked.scenario)
    found = sorted((d for d in checked.diagnostics if d.severity != "error" and d.code not in allowed),
                   key=Diagnostic.sort_key)
    return Checked(checked.scenario, [], [f"{d.code}: {d.message}" for d in found])


def propagation_complexity(document: ast.Scenario, path: str) -> str | None:
    """The complexity the document's propagation has, when it states another that W2008 would report (and
    does not allow it): known from the checker's IR alone, so a variant is written with its own complexity
    before its one full check (compile, validation and self-validation), never checked twice. None when
    it states the right one, or does not check."""
    from ..checker import check
    from ..diagnostics import Diagnostics
    from ..analysis.lint import COMPLEXITY_HOPS, allowed_codes, propagation_hops

    diags = Diagnostics()
    scenario = check(document, path, diags).scenario
    if scenario is None or diags.has_errors or "W2008" in allowed_codes(scenario):
        return None
    hops = propagation_hops(scenario)
    bounds = COMPLEXITY_HOPS.get(scenario.complexity)
    if hops is None or bounds is None or (bounds[0] <= hops and (bounds[1] is None or hops <= bounds[1])):
        return None
    return next((name for name, (lo, hi) in COMPLEXITY_HOPS.items() if lo <= hops and (hi is None or hops <= hi)),
                None)


def _same_mechanism(a: ir.Scenario, b: ir.Scenario) -> bool:
    from ..analysis.mechanisms import scenario_key

    key = scenario_key(a)
    return bool(key) and key == scenario_key(b)


def with_complexity(document: ast.Scenario, complexity: str) -> ast.Scenario:
    """The document stating `complexity` (a variant whose propagation was cut says what it now is)."""
    statements = tuple(dataclasses.replace(s, name=complexity) if isinstance(s, ast.Complexity) else s
                       for s in document.statements)
    return dataclasses.replace(document, statements=statements)


# ---- running a chain -----------------------------------------------------------------------------------


@dataclass
class Generated:
    name: str
    parent: str  # the input file
    chain: tuple[str, ...]
    seed: int
    semantic_hash: str
    note: str
    document: ast.Scenario
    scenario: ir.Scenario

    @property
    def file(self) -> str:
        return f"{self.name}.itb"


@dataclass
class SkipRecord:
    parent: str
    generator: str
    reason: str


@dataclass
class RunResult:
    variants: list[Generated] = field(default_factory=list)
    skips: list[SkipRecord] = field(default_factory=list)
    duplicates: int = 0
    unraisable: int = 0  # of the skips, variants expecting an alert their faults cannot raise (W2019, W2020)
    attempted: int = 0  # variants checked, every step
    kept: int = 0  # of them, valid and new
    stages: list[tuple[str, int, int]] = field(default_factory=list)  # (generator, inputs, variants made)


def variant_name(parent: str, generator: str, k: int) -> str:
    suffix = f"-{generator}-{k}"
    base = parent[: NAME_LIMIT - len(suffix)].rstrip("-")
    if len(base) < len(parent):  # truncated: keep it unique to the parent
        digest = hashlib.sha256(parent.encode()).hexdigest()[:6]
        base = parent[: NAME_LIMIT - len(suffix) - 7].rstrip("-") + "-" + digest
    return base + suffix


def unique_name(name: str, taken: set[str]) -> str:
    for i in range(2, len(taken) + 3):
        suffix = f"-{i}"
        candidate = name[: NAME_LIMIT - len(suffix)].rstrip("-") + suffix
        if candidate not in taken:
            return candidate
    raise AssertionError("unreachable")


def without_itbench_id(document: ast.Scenario) -> ast.Scenario:
    """A variant is no longer ITBench's scenario: drop `itbench_id` from its metadata."""
    statements = []
    for stmt in document.statements:
        if isinstance(stmt, ast.Metadata):
            entries = tuple(e for e in stmt.entries if e.key != "itbench_id")
            if not entries:
                continue
            stmt = dataclasses.replace(stmt, entries=entries)
        statements.append(stmt)
    return dataclasses.replace(document, statements=tuple(statements))


def allow_lint(document: ast.Scenario, *codes: str) -> ast.Scenario:
    """The document with `codes` added to its `metadata { lint_allow = [...] }`: a generator that adds
    objects on purpose (red herrings, an inlined application) says so, and `check` stays quiet."""
    statements, done = [], False
    for stmt in document.statements:
        if isinstance(stmt, ast.Metadata) and not done:
            entries, found = [], False
            for entry in stmt.entries:
                if isinstance(entry, ast.Attr) and entry.key == "lint_allow" and isinstance(entry.value, ast.ListValue):
                    have = [i.value for i in entry.value.items if isinstance(i, ast.Str)]
                    items = entry.value.items + tuple(ast.Str(c) for c in codes if c not in have)
                    entry = dataclasses.replace(entry, value=ast.ListValue(items))
                    found = True
                entries.append(entry)
            if not found:
                entries.append(ast.Attr("lint_allow", (), ast.ListValue(tuple(ast.Str(c) for c in codes))))
            stmt, done = dataclasses.replace(stmt, entries=tuple(entries)), True
        statements.append(stmt)
    if not done:
        metadata = ast.Metadata((ast.Attr("lint_allow", (), ast.ListValue(tuple(ast.Str(c) for c in codes))),))
        at = max((i + 1 for i, s in enumerate(statements) if isinstance(s, (ast.Tags, ast.Description))), default=0)
        statements.insert(at, metadata)
    return dataclasses.replace(document, statements=tuple(statements))


def rng_for(seed: int, generator: str, parent: str) -> random.Random:
    digest = hashlib.sha256(f"{seed}\0{generator}\0{parent}".encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


def run(parents: list[Parent], chain: list[tuple[str, Generator]], seed: int, n: int | None = None,
        on_stage: Callable[[str, int], None] | None = None, on_parent: Callable[[], None] | None = None,
        on_variant: Callable[[RunResult], None] | None = None) -> RunResult:
    """Apply the generators in order: each one's valid variants are the next one's inputs.

    `on_stage(generator, inputs)`, `on_parent()` and `on_variant(result)` (after each variant checked)
    report progress; a generator that runs out of variants says so with a Skip and stops.
    Every variant is checked (check_document); one that fails is recorded as a skip with its first
    problem. Variants whose semantic hash equals an input's or an earlier variant's are dropped, and so are
    variants injecting the mechanism on the target (W2001's key) that an input or another variant of the same
    step already does, except a member of its own parent's family (its parent's key)."""
    from ..analysis.mechanisms import scenario_key
    from ..faults.alerting import alerts_outlasting_faults, latency_short_of_alerts

    result = RunResult()
    waste: dict[str, tuple] = {}  # a FinOps scenario's semantic hash -> _waste_over's answer
    seen = {p.semantic_hash or scenario_digest(p.scenario) for p in parents}
    # what W2001 compares (a mechanism on a target): the input each key first came from. A variant of another
    # input with a key already seen measures the same thing as that one (two inputs moved onto one target)
    inputs: dict[tuple, str] = {}
    for p in parents:
        inputs.setdefault(scenario_key(p.scenario), p.path)
    names: set[str] = set()
    current = parents
    for step, (gen_name, generator) in enumerate(chain):
        produced: list[Parent] = []
        # the inputs' keys and this step's variants' (an earlier step's variants are not written: its keys
        # may be reached again by another path)
        mechanisms = dict(inputs)
        if on_stage is not None:
            on_stage(gen_name, len(current))
        for parent in current:
            if on_parent is not None:
                on_parent()
            ctx = Context(parent, current, seed, rng_for(seed, gen_name, parent.name), n, gen_name)
            k = 0
            accepted = 0
            where = f"{parent.name} ({','.join(parent.chain)} variant): " if parent.chain else ""
            try:
                items: Iterator[Result] = iter(generator.generate(ctx) or ())
                for item in items:
                    if isinstance(item, Skip):
                        result.skips.append(SkipRecord(parent.path, gen_name, where + item.reason))
                        continue
                    if not isinstance(item, Variant) or not isinstance(item.document, ast.Scenario):
                        raise GeneratorError(f"generator `{gen_name}` returned {type(item).__name__}, "
                                             "not a Variant of a scenario")
                    k += 1
                    result.attempted += 1
                    document = without_itbench_id(item.document)
                    name = item.name or variant_name(parent.name, gen_name, k)
                    if name in names:  # two inputs of one name, or a generator naming two variants alike
                        name = unique_name(name, names)
                    names.add(name)
                    document = dataclasses.replace(document, name=name)
                    complexity = propagation_complexity(document, f"{name}.itb")
                    if complexity is not None:  # its propagation changed: it says its own complexity
                        document = with_complexity(document, complexity)
                    checked = check_document(document, f"{name}.itb")
                    if on_variant is not None:
                        on_variant(result)
                    what = f"variant {k}" + (f" ({item.note})" if item.note else "")
                    if checked.scenario is None:
                        result.skips.append(SkipRecord(parent.path, gen_name,
                                                       f"{where}{what} does not check: {checked.problems[0]}"))
                        continue
                    family = _same_mechanism(checked.scenario, parent.scenario)
                    if family:
                        # the parent's fault on the parent's target at another magnitude, or with red herrings: a
                        # deliberate member of the parent's family, which W2001 would report as a duplicate
                        document = allow_lint(document, "W2001")
                    short = latency_short_of_alerts(checked.scenario)
                    if short:  # a smaller delay than the alert's threshold (W2019): the ground truth's alert never fires
                        result.skips.append(SkipRecord(parent.path, gen_name, f"{where}{what} expects an alert its "
                                                       f"faults cannot raise: {short[0][1]}"))
                        result.unraisable += 1
                        continue
                    ended = alerts_outlasting_faults(checked.scenario)
                    if ended:  # a fault that ends before its alert's rule can fire (W2020): it never fires either
                        result.skips.append(SkipRecord(parent.path, gen_name, f"{where}{what} expects an alert its "
                                                       f"faults end too soon to raise: {ended[0][2]}"))
                        result.unraisable += 1
                        continue
                    if checked.warnings:  # every variant written passes `itbench check --strict`
                        result.skips.append(SkipRecord(parent.path, gen_name, f"{where}{what} does not pass "
                                                       f"`check --strict`: {checked.warnings[0]}"))
                        continue
                    if parent.scenario.domain == "finops" and _waste_over(parent.scenario, waste) is not None:
                        lost = _waste_lost(parent.scenario, checked.scenario, waste)
                        if lost:
                            result.skips.append(SkipRecord(parent.path, gen_name, f"{where}{what} expects an alert "
                                                           f"its faults cannot raise: {lost}"))
                            continue
                    digest = scenario_digest(checked.scenario)
                    key = scenario_key(checked.scenario)
                    # W2001's identity: a key an input or another variant of this step has is a duplicate (a chain
                    # moving the fault back onto the input's target, two paths reaching one target), unless the
                    # variant is a member of its own parent's family, of the same input's line
                    if digest in seen or (key and key in mechanisms
                                          and (mechanisms[key] != parent.path or not family)):
                        result.duplicates += 1
                        continue
                    seen.add(digest)
                    if key:
                        mechanisms.setdefault(key, parent.path)
                    note = "; ".join(x for x in (parent.note, item.note) if x)
                    produced.append(Parent(parent.path, document, checked.scenario, parent.chain + (gen_name,),
                                           digest, note))
                    accepted += 1
                    if n is not None and accepted >= n:
                        break
            except GeneratorError:
                raise
            except Exception as exc:  # noqa: BLE001 - a plugin's bug is reported as E6002
                raise GeneratorError(f"generator `{gen_name}` failed on `{parent.name}`: "
                                     f"{type(exc).__name__}: {exc}") from exc
        result.stages.append((gen_name, len(current), len(produced)))
        current = produced
        result.kept += len(produced)
        if step == len(chain) - 1:
            for p in produced:
                result.variants.append(Generated(p.name, p.path, p.chain, seed, p.semantic_hash, p.note,
                                                 p.document, p.scenario))
    return result


def _waste_over(scenario: ir.Scenario, cache: dict) -> tuple | None:
    """(over, detail) of a FinOps scenario expecting a cost alert: whether its faulty state (derived) reserves
    more than the evaluator's `finops.reserved` tolerates over the healthy one; None without a cost alert."""
    from ..alerts import COST, SCOPES

    if not any(SCOPES.get(a.name) == COST for a in scenario.alerts):
        return None
    digest = scenario_digest(scenario)
    if digest not in cache:
        from ..analysis.states import derive
        from ..backends.evaluator import evaluator_spec
        from ..runtime.evaluator import State, finops_reserved

        checks: list = []
        finops_reserved(evaluator_spec(scenario), State(derive(scenario)["faulty"]), checks)
        cache[digest] = (not checks[0]["passed"], checks[0]["detail"])
    return cache[digest]


def _waste_lost(parent: ir.Scenario, variant: ir.Scenario, cache: dict) -> str:
    """Why a FinOps variant's expected cost alerts cannot fire, or "": its parent's fault reserves beyond the
    evaluator's tolerance (the waste its budget alert measures), the variant's within it (a retarget onto a small
    container, a smaller factor), so the alert could not be told from the healthy spend."""
    before, after = _waste_over(parent, cache), _waste_over(variant, cache)
    if not before or not before[0] or after is None or after[0]:
        return ""
    from ..alerts import COST, SCOPES

    names = sorted({a.name for a in variant.alerts if SCOPES.get(a.name) == COST})
    return (f"its fault's waste is within the evaluator's tolerance of the healthy reservation ({after[1]}), "
            f"unlike its parent's, so {', '.join(names)} would not fire on it")


def why_nothing(result: RunResult) -> str:
    """Why a run produced no variant: the first generator that made none, with its most frequent reasons."""
    from collections import Counter

    for name, inputs, made in result.stages:
        if made:
            continue
        if not inputs:
            return f"`{name}` got no input"
        reasons = Counter(_general(s.reason) for s in result.skips if s.generator == name)
        said = "; ".join(f"{r} ({n}x)" if n > 1 else r for r, n in reasons.most_common(3)) or "it yielded nothing"
        return f"`{name}` made no variant of its {inputs} input{'s' * (inputs != 1)}: {said}"
    return "every variant duplicated an input or an earlier variant"


def _general(reason: str) -> str:
    """A skip's reason without the variant it is about (`NAME (chain variant): `), so that alike ones count as one."""
    return re.sub(r"^\S+ \([a-z_,-]+ variant\): ", "", reason)


# ---- output --------------------------------------------------------------------------------------------


def variant_text(document: ast.Scenario) -> str:
    from ..printer import print_document

    return print_document(document)


INDEX_FIELDS = ("file", "scenario", "parent", "chain", "seed", "semantic_hash", "note")


def index_rows(result: RunResult) -> list[dict]:
    return [{"file": v.file, "scenario": v.name, "parent": v.parent, "chain": ",".join(v.chain), "seed": v.seed,
             "semantic_hash": v.semantic_hash, "note": v.note} for v in result.variants]


def index_json(result: RunResult, chain: list[str], seed: int, n: int | None) -> bytes:
    data = {
        "generators": chain,
        "seed": seed,
        "n": n,
        "variants": index_rows(result),
        "skipped": [dataclasses.asdict(s) for s in result.skips],
        "duplicates_removed": result.duplicates,
    }
    return (json.dumps(data, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def index_csv(result: RunResult) -> bytes:
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=INDEX_FIELDS, lineterminator="\n")
    writer.writeheader()
    for row in index_rows(result):
        writer.writerow(row)
    return out.getvalue().encode("utf-8")


def index_listing(data: bytes) -> set[str] | None:
    """The variant files an `index.json` lists, when it is one `itbench generate` wrote (index_json's keys,
    each variant a plain `.itb` file name); None otherwise."""
    index = json.loads(data.decode("utf-8"))
    if not isinstance(index, dict) or set(index) != {"generators", "seed", "n", "variants", "skipped",
                                                     "duplicates_removed"}:
        return None
    variants = index["variants"]
    if not isinstance(variants, list) or not isinstance(index["skipped"], list) \
            or not isinstance(index["generators"], list) or not isinstance(index["duplicates_removed"], int):
        return None
    files = set()
    for row in variants:
        name = row.get("file") if isinstance(row, dict) else None
        if not isinstance(name, str) or not name.endswith(".itb") or "/" in name or "\\" in name \
                or name.startswith(".") or name in files:
            return None
        files.add(name)
    return files


def output_files(result: RunResult, chain: list[str], seed: int, n: int | None) -> dict[str, bytes]:
    files = {v.file: variant_text(v.document).encode("utf-8") for v in result.variants}
    files["index.json"] = index_json(result, chain, seed, n)
    files["index.csv"] = index_csv(result)
    return dict(sorted(files.items()))


# ---- helpers for generators ----------------------------------------------------------------------------

# language kind by Kubernetes kind, for writing references to IR objects
LANGUAGE_KIND = {
    "Namespace": "namespace", "Deployment": "deployment", "StatefulSet": "statefulset", "Service": "service",
    "ConfigMap": "configmap", "Secret": "secret", "ServiceAccount": "serviceaccount",
    "HorizontalPodAutoscaler": "hpa", "Pod": "pod", "Gateway": "gateway", "Schedule": "schedule",
}


def ast_ref(ref: ir.ObjectRef, qualified: bool = False) -> ast.Ref:
    kind = LANGUAGE_KIND.get(ref.kind, ref.kind.lower())
    name = f"{ref.namespace}/{ref.name}" if qualified and ref.namespace and kind not in ("namespace", "schedule") \
        else ref.name
    return ast.Ref(kind, name)


faults_of = ast.fault_statements


def pin_generated_names(ctx: "Context") -> "Context":
    """`ctx` with each fault that creates an object under a generated default name naming it in its statement
    (`name = "currency-main"`): a Chaos Mesh experiment's default, and that of an object a fault creates (a
    NetworkPolicy, a ResourceQuota), is picked among the application's components by a hash of its target and
    action (faults/base.application_name), so a generator that renames the target or the components (retarget,
    anonymize) would change it under the statements that refer to it; written out, it is renamed with them."""
    from ..faults.cluster import NAME_ARG  # a kind whose created object's default name is application_name's

    faults, injections = faults_of(ctx.document), ctx.scenario.injections()
    if len(faults) != len(injections):
        return ctx
    pins = {}
    for fault, injection in zip(faults, injections):
        if fault.kind != injection.fault or not isinstance(injection.args, dict) or any(
                isinstance(e, ast.Attr) and e.key == "name" for e in fault.entries or ()):
            continue
        if "chaos_type" in injection.args and injection.root is not None:
            pins[id(fault)] = injection.root.name
        elif len(injection.created) == 1 and any(a is NAME_ARG for a in injection.kind.args):
            # a created object's default name hashes its target's too (faults/base.application_name)
            pins[id(fault)] = injection.created[0].name
    if not pins:
        return ctx

    def pin(node):
        if isinstance(node, ast.Fault) and id(node) in pins:
            return dataclasses.replace(node, entries=tuple(node.entries or ()) + (
                ast.Attr("name", (), ast.Str(pins[id(node)])),))
        return None

    document = map_nodes(ctx.document, pin)
    return dataclasses.replace(ctx, parent=dataclasses.replace(ctx.parent, document=document))


def statements_of(document: ast.Scenario, cls) -> list:
    return [s for s in document.statements if isinstance(s, cls)]


def expect_statements(document: ast.Scenario) -> tuple:
    blocks = statements_of(document, ast.Expect)
    return blocks[0].statements if blocks else ()


def with_expect(document: ast.Scenario, statements: Iterable) -> ast.Scenario:
    """The document with its `expect` block's statements replaced (added at the end if it had none)."""
    new = ast.Expect(tuple(statements))
    out, done = [], False
    for stmt in document.statements:
        if isinstance(stmt, ast.Expect):
            if not done:
                out.append(new)
                done = True
            continue
        out.append(stmt)
    if not done:
        out.append(new)
    return dataclasses.replace(document, statements=tuple(out))


def map_nodes(node, fn):
    """Rebuild an AST bottom-up: `fn(node)` returns a replacement or None to keep the (rebuilt) node."""
    if isinstance(node, tuple):
        items = tuple(map_nodes(i, fn) for i in node)
        return node if all(a is b for a, b in zip(items, node)) else items
    if dataclasses.is_dataclass(node) and not isinstance(node, type) and type(node).__module__ == ast.__name__:
        changes = {}
        for f in dataclasses.fields(node):
            if not f.compare:
                continue
            value = getattr(node, f.name)
            if isinstance(value, (tuple,)) or (dataclasses.is_dataclass(value) and not isinstance(value, type)):
                new = map_nodes(value, fn)
                if new is not value:
                    changes[f.name] = new
        if changes:
            node = dataclasses.replace(node, **changes)
        replaced = fn(node)
        return node if replaced is None else replaced
    return node


def map_strings(document: ast.Scenario, fn: Callable[[str], str], *, names: bool = False,
                skip: tuple[type, ...] = (ast.Topology, ast.UseApp)) -> ast.Scenario:
    """`fn` applied to every string of the document's statements other than those of the `skip` types:
    string values, descriptions, solution titles, steps and their commands, and with `names` the names
    objects are referred by. The skipped statements are left whole (map_nodes is bottom-up, so they are left
    out here rather than refused in the visit)."""
    def visit(n):
        if isinstance(n, ast.Str):
            return dataclasses.replace(n, value=fn(n.value))
        if names and isinstance(n, ast.Ref):
            return dataclasses.replace(n, name=fn(n.name))
        if isinstance(n, ast.Description):
            return dataclasses.replace(n, text=fn(n.text))
        if isinstance(n, ast.Solution):
            return dataclasses.replace(n, title=fn(n.title))
        if isinstance(n, ast.Step):
            return dataclasses.replace(n, text=fn(n.text), run=fn(n.run) if n.run is not None else None)
        return None
    statements = tuple(s if isinstance(s, skip) else map_nodes(s, visit) for s in document.statements)
    return dataclasses.replace(document, statements=statements)


def refs(node):
    """Every object reference (`KIND "name"`) in a node of the AST, in order."""
    if isinstance(node, ast.Ref):
        yield node
    elif isinstance(node, tuple):
        for n in node:
            yield from refs(n)
    elif dataclasses.is_dataclass(node) and not isinstance(node, type):
        for f in dataclasses.fields(node):
            if f.compare:
                yield from refs(getattr(node, f.name))


def ground_groups(document: ast.Scenario) -> dict[str, ast.Ref]:
    """The `group "ID" REF` statements of `expect`: id -> the object the group stands for."""
    return {s.id: s.target for s in expect_statements(document) if isinstance(s, ast.GroundGroup)}


def component_of(ref: ast.Ref, topology: ir.Topology, groups: dict[str, ast.Ref] | None = None) -> str | None:
    """The workload a reference belongs to (a workload, its pods, a service selecting it), else None.
    `groups` resolves `group "ID"` references (ground_groups)."""
    if ref.kind == "group" and groups and ref.name in groups:
        ref = groups[ref.name]
    name = ref.name.split("/")[-1]
    if ref.kind in ("deployment", "statefulset"):
        return name
    if ref.kind == "pod":
        stem = name.rstrip("*").rstrip("-")
        return stem if any(w.name == stem for w in topology.workloads) else None
    if ref.kind == "service":
        for service in topology.services:
            if service.name == name and service.selector:
                for w in topology.workloads:
                    if w.namespace == service.namespace and all(w.labels.get(k) == v for k, v in service.selector.items()):
                        return w.name
        return name if any(w.name == name for w in topology.workloads) else None
    if ref.kind == "hpa":
        for hpa in topology.autoscalers:
            if hpa.name == name:
                return hpa.target.name
    return None


def callers(topology: ir.Topology, name: str) -> set[str]:
    """The components that call `name`, directly or through others."""
    found, todo = set(), [name]
    while todo:
        callee = todo.pop()
        for a, b in topology.edges:
            if b == callee and a not in found:
                found.add(a)
                todo.append(a)
    return found


def follows(a: ast.Ref, b: ast.Ref, topology: ir.Topology, groups: dict[str, ast.Ref] | None = None) -> bool:
    """Does a propagation edge a -> b follow the topology (one component, or a dependency edge)?"""
    ca, cb = component_of(a, topology, groups), component_of(b, topology, groups)
    if ca is None or cb is None or ca == cb:
        return True
    return [ca, cb] in topology.edges or [cb, ca] in topology.edges


def split_chain(chain: tuple[ast.Ref, ...], topology: ir.Topology,
                groups: dict[str, ast.Ref] | None = None) -> list[tuple[ast.Ref, ...]]:
    """A propagation chain cut where an edge does not follow the topology; runs of two refs or more."""
    runs, current = [], [chain[0]]
    for a, b in zip(chain, chain[1:]):
        if follows(a, b, topology, groups):
            current.append(b)
        else:
            runs.append(current)
            current = [b]
    runs.append(current)
    return [tuple(r) for r in runs if len(r) >= 2]


def object_refs(topology: ir.Topology, kinds: Iterable[str]) -> list[ir.ObjectRef]:
    """The topology's objects of the given language kinds, as references, in a stable order."""
    from ..topology import KINDS

    out = []
    for kind in kinds:
        if kind not in KINDS or kind == "static_pod":  # the cluster's own components are no variant's target
            continue
        api_version, k8s_kind = KINDS[kind]
        if kind == "namespace":
            out += [ir.ObjectRef(api_version, k8s_kind, None, n.name) for n in topology.namespaces]
            continue
        namespaced = [r for r in topology.roles if r.namespace is not None]
        bindings = [b for b in topology.role_bindings if b.namespace is not None]
        pools = {"Deployment": topology.workloads, "StatefulSet": topology.workloads, "Service": topology.services,
                 "ConfigMap": topology.configmaps, "Secret": topology.secrets,
                 "ServiceAccount": topology.service_accounts, "HorizontalPodAutoscaler": topology.autoscalers,
                 "PersistentVolumeClaim": topology.claims, "PersistentVolume": topology.persistent_volumes,
                 "StorageClass": topology.storage_classes, "Role": namespaced,
                 "ClusterRole": [r for r in topology.roles if r.namespace is None], "RoleBinding": bindings,
                 "ClusterRoleBinding": [b for b in topology.role_bindings if b.namespace is None]}
        # a kind the topology holds no pool of has no candidate, rather than stopping the generator
        out += [ir.ObjectRef(api_version, k8s_kind, getattr(o, "namespace", None), o.name)
                for o in pools.get(k8s_kind, []) if getattr(o, "kind", k8s_kind) == k8s_kind]
    return sorted(out, key=lambda r: (r.kind, r.namespace or "", r.name))


def replace_text(document: ast.Scenario, fn: Callable[[str], str], keys_to_skip: tuple[str, ...] = ()) -> ast.Scenario:
    """Apply `fn` to the scenario's prose: description, solution titles, steps and commands, and the
    string arguments of alerts and propagations (conditions, effects, descriptions)."""
    def visit(node):
        if isinstance(node, ast.Description):
            return dataclasses.replace(node, text=fn(node.text))
        if isinstance(node, ast.Solution):
            return dataclasses.replace(node, title=fn(node.title))
        if isinstance(node, ast.Step):
            return dataclasses.replace(node, text=fn(node.text), run=fn(node.run) if node.run is not None else None)
        if isinstance(node, (ast.Alert, ast.Propagation)) and node.entries:
            entries = tuple(dataclasses.replace(e, value=ast.Str(fn(e.value.value)))
                            if isinstance(e, ast.Attr) and isinstance(e.value, ast.Str) and e.key not in keys_to_skip
                            else e for e in node.entries)
            return dataclasses.replace(node, entries=entries)
        return None
    return map_nodes(document, visit)


# ---- inputs --------------------------------------------------------------------------------------------


def load_input(data: bytes, path: str, diags) -> Parent | None:
    """An input file checked as `itbench check` does (errors go to `diags`); None when it has errors."""
    from ..checking import check_source

    checked = check_source(data, path, lint=False)
    diags.sources.update(checked.sources)
    if checked.has_errors:
        diags.extend(checked.errors())
        return None
    if checked.scenario is None:
        diags.error("E6002", "generators take scenarios, not applications", path)
        return None
    return Parent(path, checked.result.document, checked.scenario, (), scenario_digest(checked.scenario))
