"""The abstract syntax tree: frozen dataclasses, every node with its source span.

Spans are excluded from equality (`compare=False`) so that `parse(print(tree)) == tree`
compares meaning, not layout. The tree keeps statements in source order; the checker
gives them meaning and the printer reproduces them canonically.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Union

from .source import NO_SPAN, Span


def _span() -> Span:
    return field(default=NO_SPAN, compare=False, repr=False)


# ---- values --------------------------------------------------------------------


@dataclass(frozen=True)
class Str:
    value: str
    span: Span = _span()


@dataclass(frozen=True)
class Int:
    value: int
    span: Span = _span()


@dataclass(frozen=True)
class Float:
    text: str  # kept as written (digits '.' digits): its meaning depends on the field
    span: Span = _span()


@dataclass(frozen=True)
class Quantity:
    """A number glued to a unit (`250m`, `64Mi`, `30s`); the field decides what it means."""

    text: str
    span: Span = _span()


@dataclass(frozen=True)
class Percent:
    text: str  # without the % sign
    span: Span = _span()


@dataclass(frozen=True)
class Symbol:
    name: str
    span: Span = _span()


@dataclass(frozen=True)
class Call:
    name: str
    args: tuple["Value", ...]
    span: Span = _span()


@dataclass(frozen=True)
class ListValue:
    items: tuple["Value", ...]
    span: Span = _span()


@dataclass(frozen=True)
class Pair:
    key: str
    value: "Value"
    span: Span = _span()


@dataclass(frozen=True)
class MapValue:
    pairs: tuple[Pair, ...]
    span: Span = _span()


Value = Union[Str, Int, Float, Quantity, Percent, Symbol, Call, ListValue, MapValue]


# ---- generic bodies ---------------------------------------------------------------


@dataclass(frozen=True)
class Attr:
    """`key "label"... = value`"""

    key: str
    labels: tuple[str, ...]
    value: Value
    span: Span = _span()
    key_span: Span = _span()


@dataclass(frozen=True)
class Block:
    """`key "label"... { entries }`"""

    key: str
    labels: tuple[str, ...]
    entries: tuple["Entry", ...]
    span: Span = _span()
    key_span: Span = _span()


Entry = Union[Attr, Block]


@dataclass(frozen=True)
class Ref:
    """`kind "name"`: a reference to a topology object (or a pod name pattern)."""

    kind: str
    name: str
    span: Span = _span()
    kind_span: Span = _span()
    name_span: Span = _span()


# ---- statements ---------------------------------------------------------------------


@dataclass(frozen=True)
class Domain:
    name: str
    span: Span = _span()


@dataclass(frozen=True)
class Complexity:
    name: str
    span: Span = _span()


@dataclass(frozen=True)
class Description:
    text: str
    span: Span = _span()


@dataclass(frozen=True)
class Tags:
    value: ListValue
    span: Span = _span()


@dataclass(frozen=True)
class Metadata:
    entries: tuple[Entry, ...]
    span: Span = _span()


@dataclass(frozen=True)
class UseApp:
    name: str
    entries: tuple[Entry, ...] | None = None  # `{ options { ... } }`: the application's install options
    span: Span = _span()


@dataclass(frozen=True)
class Object:
    """A topology object: `deployment "cart" { ... }`."""

    kind: str
    name: str
    entries: tuple[Entry, ...] | None
    span: Span = _span()
    kind_span: Span = _span()
    name_span: Span = _span()


@dataclass(frozen=True)
class Edge:
    """A dependency chain between components: `"frontend" -> "checkout" -> "payment"`."""

    names: tuple[str, ...]
    span: Span = _span()
    name_spans: tuple[Span, ...] = field(default=(), compare=False, repr=False)


TopologyStmt = Union[Object, Edge]


@dataclass(frozen=True)
class Topology:
    statements: tuple[TopologyStmt, ...]
    span: Span = _span()
    name: str | None = None  # `topology "NAME" { ... }`: the inline application's name


@dataclass(frozen=True)
class Fault:
    kind: str
    target: Ref
    entries: tuple[Entry, ...] | None
    span: Span = _span()
    kind_span: Span = _span()


@dataclass(frozen=True)
class Wait:
    when: str  # "before" | "after"
    kind: str
    target: Ref
    entries: tuple[Entry, ...] | None
    span: Span = _span()
    kind_span: Span = _span()


@dataclass(frozen=True)
class Group:
    name: str | None
    items: tuple[Union[Fault, Wait], ...]
    span: Span = _span()


@dataclass(frozen=True)
class Alert:
    name: str
    target: Ref
    entries: tuple[Entry, ...] | None
    span: Span = _span()
    name_span: Span = _span()


@dataclass(frozen=True)
class RootCause:
    target: Ref
    span: Span = _span()
    alternatives: tuple[Ref, ...] = ()  # `root_cause A or B`: B (and more), either the right answer


@dataclass(frozen=True)
class Propagation:
    chain: tuple[Ref, ...]
    entries: tuple[Entry, ...] | None
    span: Span = _span()


@dataclass(frozen=True)
class StatePredicate:
    target: Ref
    state: str  # ready | exists | absent | complete (a Job, a CronJob)
    within: Quantity | None
    span: Span = _span()


@dataclass(frozen=True)
class Index:
    """`[0]` in a field path: a list's item by position."""

    value: int
    span: Span = _span()


@dataclass(frozen=True)
class Select:
    """`[name="http"]` in a field path: the one item of a list whose `key` (dotted) equals `value`."""

    key: str
    value: Value
    span: Span = _span()


@dataclass(frozen=True)
class ParseAs:
    """`as json` (or `as yaml`) in a field path: the text there, parsed; the path goes on inside it."""

    form: str
    span: Span = _span()


# A step of a field path: a key (`spec`, `["demo.flagd.json"]`), an index, a selection, a parse.
PathStep = Union[str, Index, Select, ParseAs]
# The operators of a field predicate (`exists` and `not exists` take no value).
COMPARE_OPS = ("==", "!=", "<", "<=", ">", ">=")
FIELD_OPS = COMPARE_OPS + ("contains", "in", "matches", "exists", "not exists")


@dataclass(frozen=True)
class FieldPredicate:
    target: Ref
    path: tuple[PathStep, ...]
    op: str  # one of FIELD_OPS
    value: Value | None  # None for `exists` and `not exists`
    span: Span = _span()
    path_span: Span = _span()


@dataclass(frozen=True)
class ScopePredicate:
    """`all pods [{ labels }] [in namespace "x"] ready [within D]`: every pod (or workload) of a scope ready."""

    what: str  # pods | workloads | deployments | statefulsets | daemonsets
    selector: MapValue | None
    namespace: Ref | None
    within: Quantity | None
    span: Span = _span()
    what_span: Span = _span()


@dataclass(frozen=True)
class AlertPredicate:
    name: str
    firing: bool
    span: Span = _span()


@dataclass(frozen=True)
class ProbePredicate:
    """`probe "NAME" exit_code == 0`, `probe "NAME" stdout contains "x"`: a declared probe's result."""

    name: str
    field: str  # exit_code | stdout | stderr
    op: str  # one of the field predicate's tests
    value: Value | None
    span: Span = _span()
    name_span: Span = _span()
    field_span: Span = _span()


@dataclass(frozen=True)
class AccessPredicate:
    """`can serviceaccount "x" "list" "pods" [in namespace "y"]` (or `cannot`): what the subject may do, as the
    API server's RBAC authorizer decides from the roles and bindings."""

    allowed: bool
    subject: Ref
    verb: str
    resource: str  # as kubectl names it: `pods`, `deployments.apps`, `pods/log`
    namespace: Union[Ref, None]
    span: Span = _span()
    verb_span: Span = _span()
    resource_span: Span = _span()


Predicate = Union[StatePredicate, FieldPredicate, AlertPredicate, ScopePredicate, ProbePredicate, AccessPredicate]


@dataclass(frozen=True)
class Mitigated:
    within: Quantity | None
    predicates: tuple[Predicate, ...]
    span: Span = _span()
    only: bool = False  # `mitigated when only { ... }`: the predicates and readiness alone decide


@dataclass(frozen=True)
class Optimal:
    target: Ref
    path: tuple[str, ...]
    value: Value
    span: Span = _span()


@dataclass(frozen=True)
class GroundGroup:
    """`group "ID" REF { filter = [...] }` in `expect`: a v1 ground-truth group with a chosen id."""

    id: str
    target: Ref
    entries: tuple[Entry, ...] | None
    span: Span = _span()
    id_span: Span = _span()


@dataclass(frozen=True)
class Alias:
    """`alias REF, REF...` in `expect`: v1 groups that stand for the same component."""

    members: tuple[Ref, ...]
    span: Span = _span()


@dataclass(frozen=True)
class Cause:
    """`cause { ... }` in `expect`: one entry of the v1 ground truth's `fault` list, as data."""

    entries: tuple[Entry, ...]
    span: Span = _span()


@dataclass(frozen=True)
class Analysis:
    """`analysis { system_level = "application"  fault_type = "misconfiguration" }`: the analysis labels."""

    entries: tuple[Entry, ...]
    span: Span = _span()


ExpectStmt = Union[Alert, RootCause, Propagation, Mitigated, Optimal, GroundGroup, Alias, Cause, Analysis]


@dataclass(frozen=True)
class Expect:
    statements: tuple[ExpectStmt, ...]
    span: Span = _span()


@dataclass(frozen=True)
class Step:
    text: str
    run: str | None
    span: Span = _span()


@dataclass(frozen=True)
class Solution:
    title: str
    steps: tuple[Step, ...]
    span: Span = _span()
    id: str | None = None  # ITBench's v1 id of the solution, when it is not the title's slug
    id_span: Span = _span()


@dataclass(frozen=True)
class Param:
    name: str
    domain: Value
    default: Value | None
    span: Span = _span()


@dataclass(frozen=True)
class Agent:
    entries: tuple[Entry, ...]
    span: Span = _span()


@dataclass(frozen=True)
class Control:
    id: str
    entries: tuple[Entry, ...] | None
    span: Span = _span()


@dataclass(frozen=True)
class Task:
    kind: str
    entries: tuple[Entry, ...] | None
    span: Span = _span()


@dataclass(frozen=True)
class TaskItem:
    """One task of a `tasks` statement: `detect`, or `detect within 10m` (the detection window)."""

    name: str
    within: Quantity | None = None
    span: Span = _span()


@dataclass(frozen=True)
class Tasks:
    """`tasks detect, localize, analyze, mitigate`: what the agent is asked (itbench_dsl/tasks.py)."""

    items: tuple[TaskItem, ...]
    span: Span = _span()


@dataclass(frozen=True)
class Gap:
    target: Ref
    span: Span = _span()


@dataclass(frozen=True)
class Compliant:
    target: Ref
    span: Span = _span()


@dataclass(frozen=True)
class AlertRule:
    """`alert_rule "Name" { expr = "..."  for = 5m  severity = "warning" ... }`: an alert the scenario defines."""

    name: str
    entries: tuple[Entry, ...] | None
    span: Span = _span()
    name_span: Span = _span()


@dataclass(frozen=True)
class UseFaults:
    """`use faults "./faults/x.itb"`: the fault kinds a project file declares, for this scenario."""

    path: str
    span: Span = _span()
    path_span: Span = _span()


@dataclass(frozen=True)
class Probe:
    """`probe "NAME" on deployment "x" { container = "c" command = [...] }`: a command whose result predicates read."""

    name: str
    target: Ref
    entries: tuple[Entry, ...] | None
    span: Span = _span()
    name_span: Span = _span()


# ---- fault kinds declared in the language (docs/fault-kinds.md) -----------------------------------------


@dataclass(frozen=True)
class Patch:
    """`patch spec.replicas = 0`: a field of the fault's target set on injection (restored on revert)."""

    path: tuple[PathStep, ...]
    value: Value
    entries: tuple[Entry, ...] | None = None  # `{ record = "original_x" }`: the args key of the field's old value
    span: Span = _span()
    path_span: Span = _span()


@dataclass(frozen=True)
class Require:
    """`require PATH TEST { code = ... message = ... }`: a precondition over the target (or over `arg(NAME)`)."""

    subject: tuple[PathStep, ...] | Call  # a path into the target, or `arg(NAME)`
    op: str
    value: Value | None
    entries: tuple[Entry, ...] | None
    span: Span = _span()
    subject_span: Span = _span()


@dataclass(frozen=True)
class FaultKindDecl:
    """`fault_kind "name" { ... }`: settings and blocks (entries), patches and preconditions, in source order."""

    name: str
    statements: tuple[Union[Attr, Block, Patch, Require], ...]
    span: Span = _span()
    name_span: Span = _span()


@dataclass(frozen=True)
class FaultLibrary:
    """A file of fault kinds: one or more `fault_kind` declarations."""

    kinds: tuple[FaultKindDecl, ...]
    span: Span = _span()

    @property
    def name(self) -> str:
        return self.kinds[0].name if self.kinds else ""

    @property
    def name_span(self) -> Span:
        return self.kinds[0].name_span if self.kinds else NO_SPAN


Statement = Union[
    Domain, Complexity, Description, Tags, Metadata, UseApp, Topology, Fault, Group, Expect,
    Solution, Param, Agent, Control, Task, Tasks, Gap, Compliant, Object, Edge, AlertRule, UseFaults, Probe,
]


@dataclass(frozen=True)
class Scenario:
    name: str
    statements: tuple[Statement, ...]
    span: Span = _span()
    name_span: Span = _span()


@dataclass(frozen=True)
class App:
    """A reusable application topology; its statements are description, metadata and topology statements."""

    name: str
    statements: tuple[Statement, ...]
    span: Span = _span()
    name_span: Span = _span()


Document = Union[Scenario, App, FaultLibrary]


def fault_statements(document: Scenario) -> list[Fault]:
    """A scenario's fault statements, in the order the checker turns them into injections."""
    out: list[Fault] = []
    for stmt in document.statements:
        if isinstance(stmt, Fault):
            out.append(stmt)
        elif isinstance(stmt, Group):
            out.extend(i for i in stmt.items if isinstance(i, Fault))
    return out


def keyword(statement) -> str:
    """The keyword a statement is written with (`use app`, `domain`), for messages."""
    return {
        Domain: "domain", Complexity: "complexity", Description: "description", Tags: "tags",
        Metadata: "metadata", UseApp: "use app", UseFaults: "use faults", Agent: "agent", Control: "control",
        Task: "task", Tasks: "tasks", Gap: "gap", Compliant: "compliant",
    }.get(type(statement), type(statement).__name__.lower())
