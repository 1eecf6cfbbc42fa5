"""Functions that build AST nodes in code, for writers of `.itb` (the importers, tools/app_from_manifests.py).

A writer builds a tree with these and prints it with the canonical printer, instead of assembling
source text: the tree is what the checker and the printer read, so what is written is what is
meant, and each statement stays an object the writer can look at, replace or leave out.

Every builder returns the node the parser would make from the printed text, so that
`parse(print(tree)) == tree` holds for built trees as it does for parsed ones. Values may be
given as Python values (`literal` turns them into nodes) or as nodes, which are kept as they are.
Names (fault kinds, object kinds, alert names) are written as given: the parser decides
whether they are names, as it does for a file typed by hand.
"""

from __future__ import annotations

import math
import re
from dataclasses import fields, is_dataclass, replace
from decimal import Decimal
from typing import Iterable, Mapping

from . import ast

# the lexer's numbers (grammar/itbench.lark): which node a number written as text becomes
_INT = re.compile(r"[+-]?\d+\Z")
_FLOAT = re.compile(r"[+-]?\d+\.\d+\Z")
_QUANTITY = re.compile(r"[+-]?\d+(\.\d+)?[a-zA-Z]+(\d+(\.\d+)?[a-zA-Z]+)*\Z")
_PERCENT = re.compile(r"[+-]?\d+(\.\d+)?%\Z")

Entries = Iterable  # of entry nodes (`attr`, `block`)


# ---- values --------------------------------------------------------------------------------------------


def literal(value) -> ast.Value:
    """The `.itb` value of a Python value: str, int, float, bool (the names `true`/`false`), a list or a
    mapping (keys written as text). A node is kept as it is. Raises TypeError for anything else (None
    included: the language has no null) and ValueError for a float that is not finite."""
    if isinstance(value, (ast.Str, ast.Int, ast.Float, ast.Quantity, ast.Percent, ast.Symbol, ast.Call,
                          ast.ListValue, ast.MapValue)):
        return value
    if isinstance(value, bool):
        return ast.Symbol("true" if value else "false")
    if isinstance(value, int):
        return ast.Int(value)
    if isinstance(value, float):
        return ast.Float(_float_text(value))
    if isinstance(value, str):
        return ast.Str(value)
    if isinstance(value, (list, tuple)):
        return ast.ListValue(tuple(literal(item) for item in value))
    if isinstance(value, dict):
        return ast.MapValue(tuple(ast.Pair(str(key), literal(item)) for key, item in value.items()))
    raise TypeError(f"{type(value).__name__} has no .itb literal")


def try_literal(value) -> ast.Value | None:
    """`literal(value)`, or None when the value has no `.itb` form."""
    try:
        return literal(value)
    except (TypeError, ValueError):
        return None


def _float_text(value: float) -> str:
    """Digits '.' digits, the only float the lexer reads (`1e-05` is written `0.00001`)."""
    if not math.isfinite(value):
        raise ValueError(f"{value} has no .itb literal")
    text = repr(value)
    if _FLOAT.match(text):
        return text
    text = format(Decimal(text), "f")
    return text if "." in text else text + ".0"


def number(text: str) -> ast.Int | ast.Float | ast.Quantity | ast.Percent:
    """A number as written (`3`, `0.5`, `250m`, `1m30s`, `50%`): the node the lexer makes of it, so the
    field it goes in decides its unit, as for a typed one. Raises ValueError for text that is no number."""
    text = text.strip()
    if _INT.match(text):
        return ast.Int(int(text))
    if _FLOAT.match(text):
        return ast.Float(text.lstrip("+"))
    if _QUANTITY.match(text):
        return ast.Quantity(text.lstrip("+"))
    if _PERCENT.match(text):
        return ast.Percent(text[:-1].lstrip("+"))
    raise ValueError(f"`{text}` is not a number")


def symbol(name: str) -> ast.Symbol:
    return ast.Symbol(name)


def call(name: str, *args) -> ast.Call:
    """`name(arg, ...)`: `call("secret_key", "db", "password")`."""
    return ast.Call(name, tuple(literal(a) for a in args))


# ---- references, attributes and blocks --------------------------------------------------------------------


def ref(kind: str, name: str) -> ast.Ref:
    """`kind "name"`: `ref("deployment", "cart")`."""
    return ast.Ref(kind, name)


def attr(key: str, value, labels: Iterable[str] = ()) -> ast.Attr:
    """`key "label"... = value`; the value a Python value or a node."""
    return ast.Attr(key, tuple(labels), literal(value))


def block(key: str, entries: Entries = (), labels: Iterable[str] = ()) -> ast.Block:
    """`key "label"... { entries }`."""
    return ast.Block(key, tuple(labels), tuple(entries))


def entries_of(data: Mapping) -> tuple[ast.Entry, ...]:
    """A mapping as body entries: nested mappings become blocks, everything else `key = value`."""
    return tuple(block(str(key), entries_of(value)) if isinstance(value, dict) else attr(str(key), value)
                 for key, value in data.items())


def body(entries: Entries) -> tuple[ast.Entry, ...] | None:
    """Entries as an optional body: none at all when there are no entries (`gap deployment "x"`, not
    `gap deployment "x" {}`)."""
    entries = tuple(entries)
    return entries or None


def _entries(entries: Entries | None) -> tuple[ast.Entry, ...] | None:
    return None if entries is None else tuple(entries)


def with_entries(statement, *extra: ast.Entry):
    """The statement (a fault, an alert, a propagation...) with more entries at the end of its body."""
    return replace(statement, entries=(statement.entries or ()) + extra)


# ---- scenario statements ------------------------------------------------------------------------------------


def domain(name: str) -> ast.Domain:
    return ast.Domain(name)


def complexity(name: str) -> ast.Complexity:
    return ast.Complexity(name)


def description(text: str) -> ast.Description:
    return ast.Description(text)


def tags(names: Iterable[str]) -> ast.Tags:
    return ast.Tags(ast.ListValue(tuple(ast.Str(n) for n in names)))


def metadata(entries: Entries | Mapping) -> ast.Metadata:
    """`metadata { ... }` from entries or from a mapping of values."""
    return ast.Metadata(entries_of(entries) if isinstance(entries, Mapping) else tuple(entries))


def use_app(name: str, entries: Entries | None = None) -> ast.UseApp:
    """`use app "name"`, with a body (`{ options { ... } }`) when entries are given."""
    return ast.UseApp(name, _entries(entries))


def fault(kind: str, target: ast.Ref, entries: Entries | None = None) -> ast.Fault:
    return ast.Fault(kind, target, _entries(entries))


def wait(when: str, kind: str, target: ast.Ref, entries: Entries | None = None) -> ast.Wait:
    """`wait before|after kind on target`."""
    return ast.Wait(when, kind, target, _entries(entries))


def group(items: Iterable, name: str | None = None) -> ast.Group:
    """`group { fault ... wait ... }`: injections that run together."""
    return ast.Group(name, tuple(items))


def param(name: str, domain_value, default=None) -> ast.Param:
    return ast.Param(name, literal(domain_value), None if default is None else literal(default))


def agent(entries: Entries) -> ast.Agent:
    return ast.Agent(tuple(entries))


def control(control_id: str, entries: Entries | None = None) -> ast.Control:
    return ast.Control(control_id, _entries(entries))


def task(kind: str, entries: Entries | None = None) -> ast.Task:
    return ast.Task(kind, _entries(entries))


def tasks(*names: str, within: dict[str, str] | None = None) -> ast.Tasks:
    """`tasks detect, mitigate`; `within` gives a task its window (`{"detect": "10m"}`)."""
    windows = within or {}
    return ast.Tasks(tuple(ast.TaskItem(n, ast.Quantity(windows[n]) if n in windows else None) for n in names))


def analysis(entries: Entries) -> ast.Analysis:
    return ast.Analysis(tuple(entries))


def gap(target: ast.Ref) -> ast.Gap:
    return ast.Gap(target)


def compliant(target: ast.Ref) -> ast.Compliant:
    return ast.Compliant(target)


# ---- expect ----------------------------------------------------------------------------------------------


def expect(statements: Iterable) -> ast.Expect:
    return ast.Expect(tuple(statements))


def alert(name: str, target: ast.Ref, entries: Entries | None = None) -> ast.Alert:
    return ast.Alert(name, target, _entries(entries))


def root_cause(target: ast.Ref) -> ast.RootCause:
    return ast.RootCause(target)


def propagation(*chain: ast.Ref, entries: Entries | None = None) -> ast.Propagation:
    """`propagation a -> b -> ...`, with `condition`, `effect` or `indirect` entries."""
    return ast.Propagation(tuple(chain), _entries(entries))


def ground_group(group_id: str, target: ast.Ref, entries: Entries | None = None) -> ast.GroundGroup:
    """`group "ID" REF { ... }` in `expect`: a v1 ground-truth group with its id."""
    return ast.GroundGroup(group_id, target, _entries(entries))


def alias(*members: ast.Ref) -> ast.Alias:
    return ast.Alias(tuple(members))


def cause(entries: Entries) -> ast.Cause:
    return ast.Cause(tuple(entries))


def mitigated(predicates: Iterable, within: str | None = None) -> ast.Mitigated:
    """`mitigated when [within 5m] { predicates }`."""
    return ast.Mitigated(None if within is None else ast.Quantity(within), tuple(predicates))


def state_predicate(target: ast.Ref, state: str, within: str | None = None) -> ast.StatePredicate:
    """`REF ready|exists|absent [within 2m]`."""
    return ast.StatePredicate(target, state, None if within is None else ast.Quantity(within))


def field_predicate(target: ast.Ref, path, op: str, value=None) -> ast.FieldPredicate:
    """`REF spec.replicas >= 2`, `REF spec.ports[name="http"].targetPort == 8080`, `REF PATH exists`.

    `path` is dotted keys (`"spec.replicas"`) or a sequence of steps: keys (a key may hold dots:
    `"demo.flagd.json"`), `index(0)`, `select("name", "http")`, `parse_as("json")`. `op` is one of
    ast.FIELD_OPS; `exists` and `not exists` take no value, `in` a list, `matches` a string."""
    if op not in ast.FIELD_OPS:
        raise ValueError(f"unknown operator {op!r}; operators: {', '.join(ast.FIELD_OPS)}")
    steps = tuple(path.split(".")) if isinstance(path, str) else tuple(path)
    if not steps:
        raise ValueError("a field path has at least one step")
    if op in ("exists", "not exists"):
        if value is not None:
            raise ValueError(f"`{op}` takes no value")
        return ast.FieldPredicate(target, steps, op, None)
    if value is None:
        raise ValueError(f"`{op}` needs a value")
    return ast.FieldPredicate(target, steps, op, literal(value))


def index(position: int) -> ast.Index:
    """`[0]` in a field path."""
    return ast.Index(position)


def select(key: str, value) -> ast.Select:
    """`[name="http"]` in a field path: the list item whose `key` (dotted names) equals `value`."""
    if not all(re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", part) for part in key.split(".")):
        raise ValueError(f"a selection key is dotted names, not {key!r}")
    return ast.Select(key, literal(value))


def parse_as(form: str = "json") -> ast.ParseAs:
    """`as json` / `as yaml` in a field path."""
    return ast.ParseAs(form)


def scope_predicate(what: str = "pods", selector: Mapping | None = None, namespace: str | None = None,
                    within: str | None = None) -> ast.ScopePredicate:
    """`all pods [{ app = "web" }] [in namespace "shop"] ready [within 5m]`."""
    labels = literal(dict(selector)) if selector is not None else None
    return ast.ScopePredicate(what, labels, ast.Ref("namespace", namespace) if namespace is not None else None,
                              None if within is None else ast.Quantity(within))


def access_predicate(subject: ast.Ref, verb: str, resource: str, namespace: str | None = None,
                     allowed: bool = True) -> ast.AccessPredicate:
    """`can serviceaccount "x" "list" "pods" [in namespace "shop"]` (`allowed=False`: `cannot`)."""
    return ast.AccessPredicate(allowed, subject, verb, resource,
                               ast.Ref("namespace", namespace) if namespace is not None else None)


def alert_predicate(name: str, firing: bool = True) -> ast.AlertPredicate:
    return ast.AlertPredicate(name, firing)


def optimal(target: ast.Ref, path: str, value) -> ast.Optimal:
    """`optimal REF path = value`; the path dotted."""
    return ast.Optimal(target, tuple(path.split(".")), literal(value))


# ---- solutions -------------------------------------------------------------------------------------------


def step(text: str, run: str | None = None) -> ast.Step:
    return ast.Step(text, run)


def solution(title: str, steps: Iterable, solution_id: str | None = None) -> ast.Solution:
    """`solution "title" { [id = "..."] step ... }`; steps as `step` nodes or as their texts."""
    return ast.Solution(title, tuple(s if isinstance(s, ast.Step) else ast.Step(s, None) for s in steps),
                        id=solution_id)


# ---- topology and documents ---------------------------------------------------------------------------------


def obj(kind: str, name: str, entries: Entries | None = None) -> ast.Object:
    """A topology object: `deployment "cart" { ... }` (no body when entries is None)."""
    return ast.Object(kind, name, _entries(entries))


def edge(*names: str) -> ast.Edge:
    """`"a" -> "b" -> ...`: a dependency chain between components."""
    return ast.Edge(tuple(names))


def topology(statements: Iterable, name: str | None = None) -> ast.Topology:
    return ast.Topology(tuple(statements), name=name)


def scenario(name: str, statements: Iterable) -> ast.Scenario:
    return ast.Scenario(name, tuple(statements))


def app(name: str, statements: Iterable) -> ast.App:
    return ast.App(name, tuple(statements))


# ---- what the parser reads back ----------------------------------------------------------------------------

# nodes whose text opens a bracket (`{`, `[`, `(`); so does every node with a body (`entries` not None)
_OPENS = (ast.Scenario, ast.App, ast.Topology, ast.Group, ast.Expect, ast.Mitigated, ast.Solution, ast.ListValue,
          ast.MapValue, ast.Call, ast.FaultKindDecl, ast.Index, ast.Select)


def nesting(node) -> int:
    """How deep the brackets of the node's printed text nest (walked without recursion: the tree may be
    deeper than Python's recursion limit allows)."""
    deepest = 0
    pending = [(node, 0)]
    while pending:
        item, depth = pending.pop()
        if isinstance(item, (list, tuple)):
            pending.extend((child, depth) for child in item)
        elif is_dataclass(item):
            outer = depth
            depth += isinstance(item, _OPENS) or getattr(item, "entries", None) is not None
            deepest = max(deepest, depth, outer + _bracketed_path(item))
            # a statement's path is printed before its own braces (`require PATH matches "x" { ... }`)
            pending.extend((getattr(item, f.name), outer if f.name in _HEAD_FIELDS and not isinstance(item, _OPENS)
                            else depth) for f in fields(item) if f.compare)
    return deepest


_HEAD_FIELDS = ("path", "subject")


def _bracketed_path(item) -> int:
    """1 when the node's field path quotes a key in brackets (`["a.json"]`), which the parser counts as one
    level deeper (selections and indexes, `[name="http"]` and `[0]`, are nodes of their own: _OPENS)."""
    path = getattr(item, "path", None) if isinstance(item, (ast.FieldPredicate, ast.Patch)) else \
        getattr(item, "subject", None) if isinstance(item, ast.Require) else None
    if not isinstance(path, tuple):
        return 0
    from .printer import _IDENT
    return int(any(isinstance(step, str) and not _IDENT.match(step) for step in path))


def too_deep(node) -> str | None:
    """The parser's reason to refuse the node's text for how deep it nests (E1007), or None. Ask before
    printing: the printer's time grows with the depth of long nested lists, and the text would not read back."""
    from .parser import MAX_NESTING

    return f"brackets nest deeper than {MAX_NESTING} levels" if nesting(node) > MAX_NESTING else None
