"""Fault kinds declared in the language: `fault_kind "name" { ... }` (docs/fault-kinds.md).

A declaration becomes a `FaultKind` like the Python ones of this package, so every stage (checker,
fault backend, evaluator spec, ITBench files, documentation pages) treats both alike. What it can say:

* its settings (`mechanism`, `targets`, `itbench_id`, `summary`, `alerts`, `creates`, `undone_by`, `harm_option`);
* typed arguments (`arg "name" { type = "string" required = true default = ... help = "..." }`);
* preconditions (`require PATH TEST { code message at label help doc }`), over the target's manifest
  or over an argument (`require arg(command) != []`), checked in order; the first that fails is reported;
* patches (`patch PATH = VALUE [{ record = "original_x" }]`): fields of the target set on injection and
  restored on revert; `absent` removes a field;
* an `exec` step (a command run in the target's pods, with its `revert` command) for what no patch can do;
* ITBench's arguments (`itbench_args { ... }`), solution templates (`solution { step { text command } }`,
  Jinja2 over `args` as in ITBench's library) and other right values of the patched fields (`accept`).

Values may use `arg(NAME)` anywhere; messages, labels, helps and string defaults are Jinja2 templates over
`args` (the values so far), `target` (the target's manifest) and `container` (the manifest of the
container a `container` argument chose).

The standard library's kinds live in `stdlib/faults/*.itb`; a scenario loads a project's with
`use faults "./faults/x.itb"` (relative to the scenario). Declarations are checked once per file:
E2050 (unknown argument type), E2051 (argument used but not declared), E2052 (a path the target kinds do
not have), E2053 (a name the library already uses), E2002 (declared twice), E2054 (exec without revert).
"""

from __future__ import annotations

import copy
import functools
import os
import re
from dataclasses import dataclass, field
from importlib import resources

from .. import ast, ir
from .. import tasks as task_types
from ..diagnostics import Diagnostics, did_you_mean
from ..kinds import plural as resource_plural
from ..reader import MISSING, Body, Context, convert, plain
from ..topology import CLUSTER_SCOPED_KINDS, DNS1123_SUBDOMAIN, KINDS
from .base import (
    CLUSTER_SCOPED_CREATABLE,
    CREATABLE_KINDS,
    POD_EFFECTS,
    Acceptance,
    Arg,
    Checked,
    Effect,
    FaultInput,
    FaultKind,
    _template,
    kobj,
    original,
    solution_context,
)

# argument types: the reader's converter, the name the documentation shows
ARG_TYPES = {
    "string": ("str", "string"),
    "integer": ("int", "integer"),
    "port": ("port", "port"),
    "boolean": ("bool", "boolean"),
    "name": ("symbol", "name"),
    "strings": ("str_list", "list of strings"),
    "duration": ("duration", "duration"),
    "cpu": ("cpu", "CPU quantity"),
    "memory": ("memory", "memory quantity"),
    "container": ("str", "string"),  # a container of the target workload; its only one when left out
}
# the kinds a declared fault may target: the topology objects the fault backend patches and restores
PATCHABLE = ("deployment", "statefulset", "job", "cronjob", "pod", "service", "configmap", "secret", "hpa", "ingress")
# a pod template's path as written (`spec.template...`, a Deployment's, a StatefulSet's, a Job's) reaches a
# CronJob's pod template through its job template
_TEMPLATE = ["spec", "template"]
_CRONJOB_TEMPLATE = ["spec", "jobTemplate", "spec", "template"]


def pod_template_steps(kind: str, steps: list) -> list:
    """The steps a path written for a pod template takes in an object of `kind` (a CronJob's is one level down,
    a bare Pod's spec is the template's: `spec.template.spec.containers` is a Pod's `spec.containers`)."""
    if kind == "CronJob" and list(steps[:2]) == _TEMPLATE:
        return [*_CRONJOB_TEMPLATE, *steps[2:]]
    if kind == "Pod" and list(steps[:2]) == _TEMPLATE and len(steps) > 2 and steps[2] in ("spec", "metadata"):
        return list(steps[2:])
    return list(steps)
SETTINGS = ("itbench_id", "mechanism", "targets", "summary", "domains", "alerts", "creates", "undone_by",
            "harm_option", "delete_target", "recreate", "readiness", "symptoms")
ABSENT = "absent"  # `patch PATH = absent`: remove the field
_EXEC_KEYS = ("container", "command", "revert")


class _Absent:
    def __repr__(self) -> str:
        return "absent"


REMOVED = _Absent()


@dataclass(frozen=True)
class PatchSpec:
    path: tuple  # ast path steps
    value: ast.Value
    record: str | None
    span: object


@dataclass(frozen=True)
class RequireSpec:
    subject: object  # ast path steps, or the name of an argument
    op: str
    value: ast.Value | None
    code: str
    message: str
    label: str
    help: str
    at: str | None  # the argument whose value the diagnostic points at (else the fault's target)
    doc: str


@dataclass(frozen=True)
class ArgSpec:
    name: str
    type: str
    required: bool
    default: ast.Value | None
    help: str
    default_doc: str = ""  # the default as the documentation page says it, when the value is a template


@dataclass(frozen=True)
class ExecSpec:
    """A command run in the target's pods on injection, and the command that undoes it on revert."""

    container: ast.Value | None
    command: ast.Value
    revert: ast.Value


@dataclass(frozen=True)
class CreateSpec:
    """An object the fault creates (`create "KIND" "NAME" { fields }`), deleted on revert."""

    kind: str  # the reference name (`networkpolicy`)
    api_version: str
    kind_name: str  # NetworkPolicy
    name: str  # a template over `args` and `target`
    body: ast.MapValue  # the object's fields besides apiVersion, kind, metadata.name and metadata.namespace
    span: object


@dataclass
class Declared:
    """A checked declaration: what the FaultKind's functions read."""

    name: str
    targets: tuple[str, ...]
    args: list[ArgSpec] = field(default_factory=list)
    requires: list[RequireSpec] = field(default_factory=list)
    patches: list[PatchSpec] = field(default_factory=list)
    itbench_args: ast.Value | None = None
    exec: ExecSpec | None = None
    creates: list[CreateSpec] = field(default_factory=list)
    delete_target: bool = False  # the fault deletes its target; the revert recreates it as the topology has it
    # the target kinds (language names) the fault deletes and creates again changed, rather than patches: a field
    # the API server refuses to change on update (a Job's pod template); the revert recreates the original
    recreate: tuple[str, ...] = ()
    solutions: list = field(default_factory=list)  # ITBench's template format
    path: str = ""


# ---- values --------------------------------------------------------------------------------------------


def _arg_names(value) -> list[tuple[str, object]]:
    """Every `arg(NAME)` in a value (or path), with its span."""
    out = []
    if isinstance(value, ast.Call) and value.name == "arg":
        if len(value.args) == 1 and isinstance(value.args[0], ast.Symbol):
            out.append((value.args[0].name, value.span))
        else:
            out.append(("", value.span))
    elif isinstance(value, ast.ListValue):
        for item in value.items:
            out.extend(_arg_names(item))
    elif isinstance(value, ast.MapValue):
        for pair in value.pairs:
            out.extend(_arg_names(pair.value))
    elif isinstance(value, ast.Select):
        out.extend(_arg_names(value.value))
    elif isinstance(value, tuple):
        for step in value:
            out.extend(_arg_names(step))
    return out


def resolve(value, args: dict):
    """A value as plain data, `arg(NAME)` replaced by the argument's value and `absent` by REMOVED."""
    if isinstance(value, ast.Call) and value.name == "arg":
        return copy.deepcopy(args.get(value.args[0].name))
    if isinstance(value, ast.Symbol) and value.name == ABSENT:
        return REMOVED
    if isinstance(value, ast.ListValue):
        return [resolve(item, args) for item in value.items]
    if isinstance(value, ast.MapValue):
        return {pair.key: resolve(pair.value, args) for pair in value.pairs}
    return plain(value)


# ---- paths over a manifest -------------------------------------------------------------------------------


class PathMissing(Exception):
    """The path reaches nothing in this object: `step` is where it stops, `names` what the list holds."""

    def __init__(self, step: int, names: list[str] = ()) -> None:
        super().__init__(step)
        self.step = step
        self.names = list(names)


def _dig(item, dotted: str):
    for part in dotted.split("."):
        if not isinstance(item, dict) or part not in item:
            return None
        item = item[part]
    return item


def _selected(item, key: str, value) -> bool:
    """Whether a list item is the one `[key=value]` selects: an absent string field reads as `""`, as the API
    server omits an empty one (an ingress rule without a host is `[host=""]`)."""
    found = _dig(item, key)
    return found == value or (found is None and value == "")


def _steps(path: tuple, args: dict) -> list:
    out = []
    for step in path:
        if isinstance(step, ast.Select):
            out.append((step.key, resolve(step.value, args)))
        elif isinstance(step, ast.Index):
            out.append(step.value)
        else:
            out.append(step)
    return out


def lookup(doc, steps: list):
    """The value a path reaches (PathMissing when it reaches nothing)."""
    node = doc
    steps = pod_template_steps(doc.get("kind", "") if isinstance(doc, dict) else "", steps)
    for index, step in enumerate(steps):
        if isinstance(step, tuple):
            items = node if isinstance(node, list) else []
            found = [item for item in items if _selected(item, *step)]
            if not found:
                raise PathMissing(index, [str(_dig(i, step[0])) for i in items if _dig(i, step[0]) is not None])
            node = found[0]
        elif isinstance(step, int):
            if not isinstance(node, list) or not -len(node) <= step < len(node):
                raise PathMissing(index)
            node = node[step]
        else:
            if not isinstance(node, dict) or step not in node:
                raise PathMissing(index)
            node = node[step]
    return node


def apply_patch(doc: dict, steps: list, value) -> None:
    """Set (or, with REMOVED, remove) the field a path reaches, making the maps on the way; a selection that
    matches no item of a list adds the item. Removing a map's last field removes the map."""
    parents = []
    node = doc
    steps = pod_template_steps(doc.get("kind", ""), steps)
    for index, step in enumerate(steps[:-1]):
        following = steps[index + 1]
        if isinstance(step, tuple):
            found = [item for item in node if _selected(item, *step)]
            if not found:
                if value is REMOVED:
                    return
                item = _selected_item(step)
                node.append(item)
                found = [item]
            parents.append((node, node.index(found[0])))
            node = found[0]
        elif isinstance(step, int):
            parents.append((node, step))
            node = node[step]
        else:
            if step not in node:
                if value is REMOVED:
                    return
                node[step] = [] if isinstance(following, tuple) else {}
            parents.append((node, step))
            node = node[step]
    last = steps[-1]
    if isinstance(last, tuple):
        found = [i for i, item in enumerate(node) if _selected(item, *last)]
        if value is REMOVED:
            for i in reversed(found):
                del node[i]
        elif found:
            node[found[0]] = value
        else:
            node.append(value)
    elif isinstance(last, int):
        if value is REMOVED:
            del node[last]
        else:
            node[last] = value
    elif value is REMOVED:
        node.pop(last, None)
        # an empty map is what no map says (`resources: {}`): drop it, up to the first list item
        while not node and parents and isinstance(parents[-1][0], dict):
            parent, key = parents.pop()
            del parent[key]
            node = parent
    else:
        node[last] = value


def _selected_item(step: tuple) -> dict:
    item: dict = {}
    node = item
    parts = step[0].split(".")
    for part in parts[:-1]:
        node = node.setdefault(part, {})
    node[parts[-1]] = step[1]
    return item


def _path_text(path: tuple) -> str:
    from ..printer import field_path

    return field_path(path)


# ---- declaration -----------------------------------------------------------------------------------------


def _schema_steps(path: tuple) -> list:
    out = []
    for step in path:
        if isinstance(step, ast.Select):
            out.append([step.key, ""])
        elif isinstance(step, ast.Index):
            out.append(step.value)
        elif isinstance(step, ast.ParseAs):
            out.append({"parse": step.form})
        else:
            out.append(step)
    return out


class KnownClean(Context):
    """The context of the standard library's kinds when this package checked the same files clean before
    (load_stdlib, cache.py): the checks whose only outcome is a diagnostic (a path against the schemas, a
    template's syntax) are not run again. An error there would be a bug of the package, never a result."""


def _recreate(ctx: Context, body, targets) -> tuple[str, ...]:
    """`recreate = true` (every target kind) or `recreate = [job, pod]` (those of the targets)."""
    value = body.attr("recreate", "any", default=False)
    if value is True:
        return tuple(targets or ())
    if value is False or value is None:
        return ()
    if isinstance(value, list) and value and all(isinstance(v, str) and v in (targets or ()) for v in value):
        return tuple(value)
    ctx.error("E2010", "`recreate` is `true` or a list of the kinds of `targets` the fault recreates",
              body.attr_span("recreate"), "not true or target kinds",
              help=f"`recreate = true`, or e.g. `recreate = [{(targets or ['job'])[0]}]`")
    return ()


def check_path(ctx: Context, path: tuple, span, targets: tuple[str, ...], what: str,
               recreated: tuple[str, ...] = ()) -> bool:
    """E2052: a patch's or precondition's path must be a field, from the object's root, of every target kind;
    E2056: a patch of a bare pod changes only what a running pod may change, unless the pod is `recreated`."""
    if isinstance(ctx, KnownClean):
        return True
    from .. import fieldpaths
    from ..topology import KINDS

    steps = _schema_steps(path)
    if any(isinstance(s, dict) for s in steps):
        ctx.error("E2052", f"{what} cannot read `as` a format", span, "`as` in a fault kind's path",
                  help="name the field itself")
        return False
    for target in targets:
        if target not in KINDS:
            continue
        api_version, kind = KINDS[target]
        reached = pod_template_steps(kind, steps)
        for end in range(1 + len(reached) - len(steps), len(reached) + 1):
            found = fieldpaths.field_type(api_version, kind, reached[:end])
            if isinstance(found, fieldpaths.PathProblem):
                ctx.error("E2052", f"{what} `{_path_text(path)}` is not a field of a {target}: {found.message}",
                          span, "not in the schema", help=found.help or "the path starts at the object's root: "
                          "`spec.template.spec.containers[name=arg(container)].image`")
                return False
            if found.base != "":
                ctx.error("E2052", f"{what} `{_path_text(path)}` does not start at a {target}'s root", span,
                          "not from the root", help="write the whole path, as in a manifest: `spec.template.spec...`")
                return False
            if found.name == "any":
                break
            if found.name == "list" and end < len(reached) and isinstance(reached[end], str):
                ctx.error("E2052", f"{what} `{_path_text(path)}` goes through a list without choosing an item", span,
                          "needs a selection", help="choose the item: `containers[name=arg(container)]`, `[0]`")
                return False
        if what == "the patch" and kind == "Pod" and target not in recreated and _pod_immutable(reached):
            ctx.error("E2056", f"the patch `{_path_text(path)}` changes a field a running pod cannot change: the API "
                      "server refuses it on a pod", span, "cannot change in place",
                      help="a pod's spec changes in place only in its containers' `image`, `activeDeadlineSeconds`, "
                      "`terminationGracePeriodSeconds` and added `tolerations`; any other change replaces the pod "
                      f"(delete it, create it changed): say `recreate = [{target}]`, or leave `{target}` out of `targets`")
            return False
    return True


def _pod_immutable(steps: list) -> bool:
    """Whether a path in a Pod reaches a field of its spec an update may not change (ValidatePodUpdate)."""
    if len(steps) < 2 or steps[0] != "spec" or steps[1] in _POD_MUTABLE:
        return False
    return not (steps[1] in ("containers", "initContainers") and len(steps) >= 4 and steps[3] == "image")


def _string(body: Body, key: str, required: bool = False, default: str = "") -> str:
    value = body.attr(key, "str", required=required)
    return value if isinstance(value, str) else default


def build(decl: ast.FaultKindDecl, ctx: Context) -> FaultKind | None:
    """The FaultKind a declaration defines; None (with diagnostics) when it is not valid."""
    errors_before = len(ctx.diags.errors())
    entries = tuple(s for s in decl.statements if isinstance(s, (ast.Attr, ast.Block)))
    body = Body(ctx, entries, f"fault kind `{decl.name}`", decl.name_span)
    settings = {}
    mechanism = _string(body, "mechanism", required=True)
    targets = body.attr("targets", "any", required=True)  # names: [deployment, statefulset]
    target_span = body.attr_span("targets")
    if targets is not None and (not isinstance(targets, list) or not targets
                                or not all(isinstance(t, str) for t in targets)):
        ctx.error("E2008", "`targets` is a list of object kinds: `[deployment, statefulset]`", target_span,
                  "not a list of kinds")
        targets = None
    if targets:
        from ..topology import KINDS

        for target in targets:
            if target not in PATCHABLE:
                hint = did_you_mean(target, PATCHABLE)
                ctx.error("E2015" if target not in KINDS else "E2004",
                          f"a fault kind cannot target `{target}`" if target in KINDS else f"unknown object kind `{target}`",
                          target_span, "not a fault target",
                          help=f"did you mean `{hint}`?" if hint else "targets: " + ", ".join(PATCHABLE))
    itbench_id = body.attr("itbench_id", "str")
    settings["summary"] = _string(body, "summary", required=True)
    domains = body.attr("domains", "any", default=["sre"])
    settings["domains"] = tuple(domains) if isinstance(domains, list) else ("sre",)
    settings["alerts"] = tuple(body.attr("alerts", "str_list", default=[]) or [])
    settings["creates"] = _string(body, "creates")
    settings["symptoms"] = _symptoms(ctx, body)
    analysis = body.block("analysis")
    labels = task_types.read_labels(analysis) if analysis is not None else None
    undone_by = body.attr("undone_by", "symbol", default="all")
    if undone_by not in ("all", "any"):
        ctx.error("E2010", "`undone_by` is `all` or `any`", body.attr_span("undone_by"), "not all or any")
        undone_by = "all"
    harm_option = body.attr("harm_option", "str", default="") or ""  # FaultKind.harm_option
    readiness = body.attr("readiness", "str", default="")
    if readiness and readiness not in POD_EFFECTS:
        hint = did_you_mean(readiness, POD_EFFECTS)
        ctx.error("E2010", f"unknown readiness effect `{readiness}`", body.attr_span("readiness"), "not an effect",
                  help=f"did you mean `{hint}`?" if hint else "one of: " + ", ".join(POD_EFFECTS))
        readiness = ""
    spec = Declared(decl.name, tuple(targets or ()), path=ctx.path)

    # arguments
    declared_names: set[str] = set()
    for block in body.blocks("arg"):
        name = block.labels[0]
        arg_body = Body(ctx, block.entries, f"argument `{name}`", block.span)
        type_name = arg_body.attr("type", "str", required=True)
        declared_names.add(name)  # declared, even with a wrong type: its uses are not also reported
        if type_name is not None and type_name not in ARG_TYPES:
            hint = did_you_mean(type_name, ARG_TYPES)
            ctx.error("E2050", f"unknown argument type `{type_name}`", arg_body.attr_span("type"), "unknown type",
                      help=f"did you mean `{hint}`?" if hint else "types: " + ", ".join(ARG_TYPES))
            type_name = None
        required = arg_body.attr("required", "bool", default=False)
        default = next((e.value for e in arg_body.labelled("default") if isinstance(e, ast.Attr)), None)
        help_text = _string(arg_body, "help")
        default_doc = _string(arg_body, "default_doc")
        arg_body.finish()
        if any(a.name == name for a in spec.args):
            ctx.error("E2002", f"argument `{name}` is declared twice", block.key_span, "second one")
            continue
        if type_name is not None:
            spec.args.append(ArgSpec(name, type_name, bool(required), default, help_text, default_doc))
    declared_args = declared_names
    arg_errors: list = []

    def uses(value, where_span=None) -> None:
        for name, span in _arg_names(value):
            if name not in declared_args:
                arg_errors.append((name, span))

    for a in spec.args:
        uses(a.default)
    # ITBench's arguments
    itbench = next((e for e in body.labelled("itbench_args")), None)
    if itbench is not None:
        spec.itbench_args = (itbench.value if isinstance(itbench, ast.Attr) else
                             ast.MapValue(_entries_as_pairs(itbench.entries), itbench.span))
        uses(spec.itbench_args)
    # an exec step
    exec_body = body.block("exec")
    if exec_body is not None:
        values = {}
        for key in _EXEC_KEYS:
            found = [e for e in exec_body.labelled(key) if isinstance(e, ast.Attr)]
            values[key] = found[0].value if found else None
        if values["command"] is None:
            ctx.error("E2007", "`exec` needs `command`", exec_body.span, "`command` missing",
                      help='add `command = ["sh", "-c", "..."]`')
        if values["revert"] is None:
            ctx.error("E2054", "`exec` has no `revert`: nothing would undo what its command does", exec_body.span,
                      "no revert", help='add `revert = [...]`, the command that restores what `command` changed')
        exec_body.finish()
        for value in values.values():
            uses(value)
        if values["command"] is not None and values["revert"] is not None:
            spec.exec = ExecSpec(values["container"], values["command"], values["revert"])
    # objects it creates, and its target deleted
    create_blocks = body.blocks("create", labels=2)
    for block in create_blocks:
        spec_or_none = _create_spec(ctx, block)
        if spec_or_none is not None:
            uses(spec_or_none.body)
            spec.creates.append(spec_or_none)
    spec.delete_target = bool(body.attr("delete_target", "bool", default=False))
    spec.recreate = _recreate(ctx, body, spec.targets)
    # other right values of the fields the fault changes
    accept = []
    for block in body.blocks("accept", labels=0):
        accept_body = Body(ctx, block.entries, "`accept`", block.span)
        path = _string(accept_body, "path", required=True)
        op = accept_body.attr("op", "str", required=True)
        value = accept_body.attr("value", "any", default="healthy")
        accept_body.finish()
        if path and op:
            try:
                re.compile(path)
            except re.error as exc:
                ctx.error("E2040", f"`path` is not a regular expression: {exc}", block.span, "invalid pattern")
                continue
            accept.append(Acceptance(path, op, value))
    # solutions: ITBench's template format
    solutions = []
    for block in body.blocks("solution", labels=0):
        steps = []
        solution_body = Body(ctx, block.entries, "`solution`", block.span)
        for step in solution_body.blocks("step", labels=0):
            step_body = Body(ctx, step.entries, "`step`", step.span)
            text = _string(step_body, "text", required=True)
            command = step_body.attr("command", "str")
            step_body.finish()
            for template in (text, command or ""):
                _template_ok(ctx, template, step.span)
            steps.append({"text": text, **({"command": command} if command is not None else {})})
        solution_body.finish()
        solutions.append({"steps": steps})
    spec.solutions = solutions
    for key in SETTINGS:
        body._find(key)
    body.finish()

    # preconditions and patches
    for stmt in decl.statements:
        if isinstance(stmt, ast.Patch):
            uses(stmt.path)
            uses(stmt.value)
            patch_body = Body(ctx, stmt.entries, "`patch`", stmt.span)
            record = patch_body.attr("record", "str")
            patch_body.finish()
            if spec.targets:
                check_path(ctx, stmt.path, stmt.path_span, spec.targets, "the patch", spec.recreate)
            spec.patches.append(PatchSpec(stmt.path, stmt.value, record, stmt.span))
        elif isinstance(stmt, ast.Require):
            req = _require(ctx, stmt, spec, declared_args)
            uses(stmt.subject)
            uses(stmt.value)
            if req is not None:
                spec.requires.append(req)
    for name, span in arg_errors:
        hint = did_you_mean(name, declared_args) if name else None
        ctx.error("E2051", f"`arg({name})` names no argument of fault kind `{decl.name}`" if name else
                  "`arg(...)` takes the name of one argument", span, "not declared",
                  help=f"did you mean `arg({hint})`?" if hint else
                  f'declare it: `arg "{name or "NAME"}" {{ type = "string" }}`')
    # a `create` refused above (E2004...) is a change written: its own error says what is wrong with it
    if not spec.patches and exec_body is None and not create_blocks and not spec.delete_target:
        ctx.error("E2007", f"fault kind `{decl.name}` changes nothing: it needs a `patch`, an `exec`, a `create` "
                  "or `delete_target = true`", decl.name_span, "changes nothing",
                  help="add `patch PATH = VALUE`, `exec { ... }` or `create \"KIND\" \"NAME\" { ... }`")
    if spec.delete_target and spec.patches:
        ctx.error("E2008", f"fault kind `{decl.name}` deletes its target: a `patch` of it would never be applied",
                  body.attr_span("delete_target"), "deleted and patched",
                  help="keep one of them: a fault that changes an object, or one that deletes it")
    if spec.recreate and not spec.patches and (spec.delete_target or exec_body is not None or create_blocks):
        # (a kind with no change at all is E2007 above; with a patch, `delete_target` is E2008 above)
        ctx.error("E2008", f"fault kind `{decl.name}` recreates its target changed: it needs a `patch`, and no "
                  "`delete_target`", body.attr_span("recreate"), "nothing to recreate it with", help="`recreate` deletes the target and creates it with the patches "
                  "applied; `delete_target = true` deletes it for good")
    if len(ctx.diags.errors()) > errors_before or not mechanism or not spec.targets:
        return None
    return FaultKind(
        decl.name, itbench_id, mechanism, spec.targets, settings["summary"],
        functools.partial(_check, spec), functools.partial(_inject, spec), functools.partial(_revert, spec),
        domains=settings["domains"],
        args=tuple(Arg(a.name, ARG_TYPES[a.type][1], a.required, _default_text(a), a.help) for a in spec.args),
        preconditions=(*(("The container exists in the workload.",) if any(a.type == "container" for a in spec.args)
                         else ()), *(r.doc for r in spec.requires if r.doc)),
        creates=settings["creates"], alerts=settings["alerts"], solutions=tuple(solutions), accept=tuple(accept),
        undone_by=undone_by, harm_option=harm_option, declared=spec, labels=labels, readiness=readiness,
        symptoms=settings.get("symptoms", ()),
    )


def _symptoms(ctx, body) -> tuple[str, ...]:
    """`symptoms = ["readiness", ...]`: what the fault shows (base.SYMPTOMS); an unknown one is E2010."""
    from .base import SYMPTOMS

    values = body.attr("symptoms", "str_list", default=[]) or []
    for value in values:
        if value not in SYMPTOMS:
            hint = did_you_mean(value, SYMPTOMS)
            ctx.error("E2010", f"`{value}` is not a symptom", body.attr_span("symptoms"), "unknown symptom",
                      help=f"did you mean `{hint}`?" if hint else "symptoms: " + ", ".join(SYMPTOMS))
    return tuple(v for v in values if v in SYMPTOMS)


def _entries_as_pairs(entries) -> tuple:
    pairs = []
    for entry in entries:
        if isinstance(entry, ast.Attr):
            pairs.append(ast.Pair(entry.key, entry.value, entry.span))
        else:
            pairs.append(ast.Pair(entry.key, ast.MapValue(_entries_as_pairs(entry.entries), entry.span), entry.span))
    return tuple(pairs)


def _create_spec(ctx: Context, block: ast.Block) -> CreateSpec | None:
    """A `create "KIND" "NAME" { fields }` block checked: a kind faults may create, no field the compiler sets."""

    kind, name = block.labels
    creatable = {**{k: v for k, v in KINDS.items() if k not in ("namespace", "static_pod")}, **CREATABLE_KINDS}
    if kind not in creatable:
        hint = did_you_mean(kind, creatable)
        ctx.error("E2004", f"a fault cannot create `{kind}`", block.key_span, "not a kind faults create",
                  help=f"did you mean `{hint}`?" if hint else "kinds: " + ", ".join(sorted(creatable)))
        return None
    if not name:
        ctx.error("E2008", "the object a fault creates needs a name", block.key_span, "empty name")
        return None
    for entry in block.entries:
        if entry.key in ("apiVersion", "kind"):
            ctx.error("E2008", f"`{entry.key}` of a created object comes from its kind `{kind}`", entry.key_span,
                      "set by the compiler", help="leave it out")
            return None
        if entry.key == "metadata" and isinstance(entry, ast.Block) and any(
                e.key in ("name", "namespace") for e in entry.entries):
            ctx.error("E2008", "the created object's name is the block's second label, its namespace the "
                      "target's", entry.key_span, "set by the compiler", help="keep `labels` and `annotations` here")
            return None
    api_version, kind_name = creatable[kind]
    return CreateSpec(kind, api_version, kind_name, name, ast.MapValue(_entries_as_pairs(block.entries), block.span),
                      block.span)


def _created_manifests(f_or_none, spec: Declared, args: dict, target: dict, render) -> list[dict]:
    """The objects the fault creates for one use: names and strings rendered as Jinja2 templates over `args`
    and `target`, `arg(NAME)` replaced, in the target's namespace (none for a cluster-scoped kind), labelled
    as itbench's (MANAGED)."""
    out = []
    namespace = (target.get("metadata") or {}).get("namespace")
    for create in spec.creates:
        context = {"args": args, "target": target}
        body = _rendered_strings(resolve(create.body, args), lambda text: render(text, context))
        metadata = body.pop("metadata", None)
        metadata = dict(metadata) if isinstance(metadata, dict) else {}
        meta = {"name": render(create.name, context)}
        if create.kind not in CLUSTER_SCOPED_CREATABLE and create.kind not in CLUSTER_SCOPED_KINDS:
            meta["namespace"] = namespace
        labels = metadata.pop("labels", None)
        if labels:
            meta["labels"] = dict(labels)
        meta.update(metadata)
        out.append({"apiVersion": create.api_version, "kind": create.kind_name, "metadata": meta, **body})
    return out


def _rendered_strings(value, render):
    if isinstance(value, dict):
        return {k: _rendered_strings(v, render) for k, v in value.items()}
    if isinstance(value, list):
        return [_rendered_strings(v, render) for v in value]
    return render(value) if isinstance(value, str) and "{" in value else value


def _default_text(a: ArgSpec) -> str:
    if a.default_doc or a.default is None:
        return a.default_doc
    if isinstance(a.default, ast.Str):
        return a.default.value
    if isinstance(a.default, (ast.ListValue, ast.MapValue)):
        import json

        return f"`{json.dumps(plain(a.default))}`"
    return str(plain(a.default))


def _template_ok(ctx: Context, text: str, span) -> bool:
    if isinstance(ctx, KnownClean):
        return True
    from jinja2 import TemplateSyntaxError

    try:
        _template(text)
    except TemplateSyntaxError as exc:
        ctx.error("E2010", f"the template `{text}` is not valid Jinja2: {exc.message}", span, "invalid template")
        return False
    return True


def _require(ctx: Context, stmt: ast.Require, spec: Declared, declared_args: set) -> RequireSpec | None:
    body = Body(ctx, stmt.entries, "`require`", stmt.span)
    code = _string(body, "code", default="E2011")
    message = _string(body, "message")
    label = _string(body, "label", default="precondition not met")
    help_text = _string(body, "help")
    at = body.attr("at", "symbol")
    doc = _string(body, "doc")
    body.finish()
    from ..codes import CODES

    if code not in CODES:
        ctx.error("E2010", f"`{code}` is not a diagnostic code", body.attr_span("code"), "unknown code",
                  help="`itbench explain codes` lists them; preconditions use E2011 and E2027 most")
        return None
    if at is not None and at not in declared_args:
        ctx.error("E2051", f"`at = {at}` names no argument", body.attr_span("at"), "not declared")
        return None
    for template in (message, label, help_text):
        if not _template_ok(ctx, template, stmt.span):
            return None
    if isinstance(stmt.subject, ast.Call):
        subject = stmt.subject.args[0].name if stmt.subject.args else ""
        if stmt.subject.name != "arg":
            ctx.error("E2010", f"a precondition reads a path of the target or `arg(NAME)`, not `{stmt.subject.name}(...)`",
                      stmt.subject_span, "not arg(...)")
            return None
        if subject not in declared_args:  # E2051, reported with the other undeclared arguments
            return None
    else:
        subject = stmt.subject
        if spec.targets and not check_path(ctx, stmt.subject, stmt.subject_span, spec.targets, "the precondition's path"):
            return None
    if not message:
        message = f"the precondition `{_path_text(subject) if isinstance(subject, tuple) else 'arg(' + subject + ')'} " \
                  f"{stmt.op}` does not hold"
    return RequireSpec(subject, stmt.op, stmt.value, code, message, label, help_text, at, doc)


def reported_codes(spec: Declared) -> list[str]:
    """The diagnostic codes a declared kind's check reports, for its documentation page."""
    codes = {r.code for r in spec.requires}
    if any(a.type == "container" for a in spec.args):
        codes |= {"E2007", "E2020"}
    if any(a.required for a in spec.args):
        codes.add("E2007")
    if spec.patches:
        codes.add("E2027")
    return sorted(codes)


# ---- use: check, inject, revert ---------------------------------------------------------------------------


def _manifest(obj) -> dict:
    from ..render import render_object

    return copy.deepcopy(render_object(obj))


def _arg_value(f: FaultInput, spec: Declared, a: ArgSpec, args: dict, context: dict, ok: bool):
    converter = ARG_TYPES[a.type][0]
    given = f.body.has(a.name)
    if given:
        value = f.body.attr(a.name, converter)
        return MISSING if value is None else value
    if a.required:
        f.body.attr(a.name, converter, required=True)
        return MISSING
    if a.default is None:
        return None
    if isinstance(a.default, ast.Str) and "{" in a.default.value:
        if not ok:  # the template may read what failed (the container): its error is reported already
            return MISSING
        return _render(f, spec, a.default.value, context)
    value = convert(f.ctx, a.default, converter, f"the default of `{a.name}`")
    return MISSING if value is MISSING else value


def _pick_container(f: FaultInput, a: ArgSpec, manifest: dict):
    """The container a `container` argument names, or the workload's only one (E2007, E2020 otherwise)."""
    from .base import pick_container

    if a.name == "container":
        chosen = pick_container(f)
        return chosen.name if chosen is not None else MISSING
    containers = [c.get("name") for c in _containers(manifest)]
    name = f.body.attr(a.name, "str")
    if name is None:
        if len(containers) == 1:
            return containers[0]
        f.error("E2007", f"the target has {len(containers)} containers: say which with `{a.name}`",
                f.fault.target.span, "which container?")
        return MISSING
    if name not in containers:
        hint = did_you_mean(name, containers)
        f.error("E2020", f"the target has no container `{name}`", f.body.attr_span(a.name), "no such container",
                help=f"did you mean `{hint}`?" if hint else f"its containers: {', '.join(containers)}")
        return MISSING
    return name


# what the API server lets an update change in a Pod's spec (ValidatePodUpdate); the rest is fixed at creation
_POD_MUTABLE = ("activeDeadlineSeconds", "terminationGracePeriodSeconds", "tolerations")


def _immutable_pod_change(before: dict, after: dict) -> str | None:
    """The first field of a bare Pod's spec a change touches that a Pod cannot change in place (None when
    every change is to an image, a deadline, the grace period or the tolerations, or the object is no Pod)."""
    if before.get("kind") != "Pod":
        return None
    old, new = before.get("spec") or {}, after.get("spec") or {}
    for key in sorted(set(old) | set(new), key=lambda k: (list(new).index(k) if k in new else len(new), k)):
        if key in _POD_MUTABLE or old.get(key) == new.get(key):
            continue
        if key in ("containers", "initContainers") and isinstance(old.get(key), list) and \
                isinstance(new.get(key), list) and len(old[key]) == len(new[key]):
            for a, b in zip(old[key], new[key]):
                a, b = dict(a), dict(b)
                name = b.get("name", "")
                for field_name in sorted(set(a) | set(b)):
                    if field_name != "image" and a.get(field_name) != b.get(field_name):
                        return f"spec.{key}[name={name}].{field_name}"
            continue
        return f"spec.{key}"
    return None


def _containers(manifest: dict) -> list[dict]:
    spec = manifest.get("spec", {})
    spec = spec.get("jobTemplate", {}).get("spec", spec)
    pod = spec.get("template", {}).get("spec", spec)
    return list(pod.get("containers", []))


def _test(op: str, observed, expected) -> bool:
    if op == "exists":
        return observed is not None
    if op == "not exists":
        return observed is None
    if op == "==":
        return observed == expected
    if op == "!=":
        return observed != expected
    if op == "contains":
        return isinstance(observed, (list, str, dict)) and expected in observed
    if op == "in":
        return isinstance(expected, list) and observed in expected
    if op == "matches":
        return isinstance(observed, str) and re.fullmatch(str(expected), observed) is not None
    try:
        return {"<": observed < expected, "<=": observed <= expected, ">": observed > expected,
                ">=": observed >= expected}[op]
    except TypeError:
        return False


def _empty_for(path: tuple, targets, target: ir.ObjectRef):
    """What an absent field reads as: an empty list for a list (Kubernetes reads none as empty), else None."""
    from .. import fieldpaths

    found = fieldpaths.field_type(target.api_version, target.kind, pod_template_steps(target.kind, _schema_steps(path)))
    return [] if isinstance(found, fieldpaths.FieldType) and found.name == "list" else None


class _TemplateFailed(Exception):
    pass


def _render(f: FaultInput, spec: Declared, text: str, context: dict) -> str:
    """A template of the declaration rendered; a failure (an undefined name, a sandbox refusal) is E2010 at the
    fault, not a traceback."""
    from jinja2 import TemplateError

    try:
        return _template(text).render(**context)
    except (TemplateError, ArithmeticError, LookupError, TypeError, ValueError, AttributeError) as exc:
        f.error("E2010", f"fault kind `{spec.name}` ({spec.path}): the template `{text[:80]}` fails here: {exc}",
                f.fault.span, "template failed", help="a template reads `args`, `target` and `container`")
        raise _TemplateFailed from exc


def _check(spec: Declared, f: FaultInput) -> Checked | None:
    try:
        return _checked(spec, f)
    except _TemplateFailed:
        return None


def _checked(spec: Declared, f: FaultInput) -> Checked | None:
    from .base import created_by_fault

    if created_by_fault(f) is not None:
        f.error("E2011", f"fault `{spec.name}` patches what the topology declares, and an earlier fault creates "
                f"{f.target.kind.lower()} `{f.target.name}`", f.fault.target.span, "created by a fault",
                help="target an object of the topology")
        return None
    manifest = _manifest(f.obj)
    args: dict = {}
    context = {"args": args, "target": manifest, "container": {}}
    ok = True
    f.body.known.update(a.name for a in spec.args)
    for a in spec.args:
        if a.type == "container":
            value = _pick_container(f, a, manifest)
            if value is not MISSING:
                context["container"] = next((c for c in _containers(manifest) if c.get("name") == value), {})
        else:
            value = _arg_value(f, spec, a, args, context, ok)
        if value is MISSING:
            ok = False
            continue
        if value is not None:
            args[a.name] = value
    if not ok:
        return None
    for req in spec.requires:
        if isinstance(req.subject, str):
            observed, names = args.get(req.subject), []
        else:
            try:
                observed, names = lookup(manifest, _steps(req.subject, args)), []
            except PathMissing as missing:
                observed, names = _empty_for(req.subject, spec.targets, f.target), missing.names
        expected = resolve(req.value, args) if req.value is not None else None
        if _test(req.op, observed, expected):
            continue
        render = {**context, "observed": observed}
        help_text = _render(f, spec, req.help, render) if req.help else ""
        if req.op == "exists" and isinstance(req.subject, tuple) and req.subject \
                and isinstance(req.subject[-1], ast.Select):
            hint = did_you_mean(str(resolve(req.subject[-1].value, args)), names)
            help_text = f"did you mean `{hint}`?" if hint else help_text
        span = f.body.attr_span(req.at) if req.at is not None and f.body.has(req.at) else f.fault.target.span
        f.error(req.code, _render(f, spec, req.message, render), span, _render(f, spec, req.label, render),
                help=help_text)
        return None
    unset = sorted({name for part in (*spec.patches, spec.exec) if part is not None
                    for name, _ in _arg_names(part.path if isinstance(part, PatchSpec) else
                                              (part.container, part.command, part.revert))
                    if name not in args} |
                   {name for patch in spec.patches for name, _ in _arg_names(patch.value) if name not in args})
    if unset:
        f.error("E2007", f"fault `{spec.name}` needs `{unset[0]}` here: its patches or command use it",
                f.fault.span, f"`{unset[0]}` missing", help=f"add `{unset[0]} = ...`")
        return None
    faulty = copy.deepcopy(manifest)
    recorded = {}
    for patch in spec.patches:
        steps = _steps(patch.path, args)
        try:
            before = lookup(manifest, steps)
        except PathMissing:
            before = _empty_for(patch.path, spec.targets, f.target)
        if patch.record:
            recorded[patch.record] = copy.deepcopy(before)
        try:
            apply_patch(faulty, steps, resolve(patch.value, args))
        except (LookupError, TypeError, AttributeError, ValueError):
            f.error("E2011", f"fault `{spec.name}` cannot patch `{_path_text(patch.path)}` on "
                    f"{f.target.kind.lower()} `{f.target.name}`: the path goes through what is not there",
                    f.fault.target.span, "patch does not apply",
                    help="add a precondition (`require PATH exists`) that says what the target must have")
            return None
    changed = _immutable_pod_change(manifest, faulty) if "pod" not in spec.recreate else None  # else replaced
    if changed:
        f.error("E2056", f"fault `{spec.name}` changes `{changed}` of pod `{f.target.name}`, which Kubernetes does not "
                "change on a running pod: the API server would refuse the injection", f.fault.target.span,
                "cannot change in place",
                help="a pod's spec changes in place only in its containers' `image`, `activeDeadlineSeconds`, "
                "`terminationGracePeriodSeconds` and added `tolerations`; any other change replaces the pod (delete "
                "it, create it changed), which a patch does not do: target what runs the pod (a deployment's pod "
                "template), or a field a pod changes in place, or declare the kind with `recreate = [pod]`")
        return None
    if spec.patches and faulty == manifest:
        f.error("E2027", f"fault `{spec.name}` would change nothing on {f.target.kind.lower()} `{f.target.name}`",
                f.fault.target.span, "no change")
        return None
    itbench_args = resolve(spec.itbench_args, args) if spec.itbench_args is not None else {}
    if not isinstance(itbench_args, dict):
        itbench_args = {}
    itbench_args.setdefault("kubernetesObject", kobj(f.target))
    # the templates the backends render later (exec commands, solutions) must render now, or fail here
    if spec.exec is not None:
        for value in (spec.exec.command, spec.exec.revert):
            _render_all(f, spec, resolve(value, args), {"args": args})  # raises _TemplateFailed (E2010)
    for template in spec.solutions:
        for step in template["steps"]:
            _render_all(f, spec, list(step.values()), {"args": solution_context(itbench_args, args)})
    created = []
    for obj in _created_manifests(f, spec, args, manifest, lambda text, context: _render(f, spec, text, context)):
        meta = obj["metadata"]
        if len(meta["name"]) > 253 or not DNS1123_SUBDOMAIN.match(meta["name"]):
            f.error("E2011", f"fault `{spec.name}` would create {obj['kind']} `{meta['name'][:80]}`: not a valid "
                    "object name", f.fault.target.span, "invalid name",
                    help="a created object's name is lower case letters, digits, `-` and `.` (at most 253)")
            return None
        ref = ir.ObjectRef(obj["apiVersion"], obj["kind"], meta.get("namespace"), meta["name"])
        if (obj["kind"].lower(), ref.namespace, ref.name) in f.build.declared:
            f.error("E2011", f"fault `{spec.name}` would create {obj['kind']} `{meta['name']}`, which the topology "
                    "already has", f.fault.target.span, "already exists", help="create it under another name")
            return None
        created.append(ref)
    if created:
        plural = sorted({resource_plural(r.kind) for r in created if r.namespace is not None})
        return Checked({**args, **recorded}, itbench_args, side_objects=list(created), created=created,
                       agent_namespaces=[f.target.namespace] if plural and f.target.namespace else [],
                       agent_resources=plural)
    return Checked({**args, **recorded}, itbench_args)


def _render_all(f: FaultInput, spec: Declared, value, context: dict) -> None:
    if isinstance(value, list):
        for item in value:
            _render_all(f, spec, item, context)
    elif isinstance(value, str) and "{" in value:
        _render(f, spec, value, context)


def patch_manifest(spec: Declared, injection: ir.Injection, manifest: dict) -> dict:
    """The target's manifest with the declaration's patches applied (arguments from the injection)."""
    out = copy.deepcopy(manifest)
    for patch in spec.patches:
        apply_patch(out, _steps(patch.path, injection.args), resolve(patch.value, injection.args))
    return canonical_order(out)


@functools.lru_cache(maxsize=1)
def _key_orders() -> dict[str, list[str]]:
    """The order the manifest renderer writes a workload's keys in, read off a workload with every field set:
    a field a patch adds takes the place the renderer would give it, so a patched manifest is the bytes of
    the same change made to the IR object (tests/faults/test_fault_kinds.py compares them)."""
    from ..render import render_object

    def container(name):
        return ir.Container(name, "i", "Always", ["c"], ["a"], [ir.ContainerPort(1)], [ir.EnvVar("E", "v")],
                            {"limits": {"cpu": "1"}}, {"livenessProbe": {}, "readinessProbe": {}, "startupProbe": {}},
                            [{"name": "v"}], {"runAsUser": 1})

    orders: dict[str, list[str]] = {}
    for kind in ("Deployment", "StatefulSet"):
        w = ir.Workload(kind, "w", "n", 1, {"a": "b"}, {"a": "b"}, [container("c")], {"a": "b"}, [container("i")],
                        [{"name": "v"}], "sa", "svc", {"a": "b"}, {"a": "b"}, "Recreate" if kind == "Deployment" else None,
                        "Parallel" if kind == "StatefulSet" else None, True, 1, {"runAsUser": 1}, {"a": {}}, True, True,
                        True, {"a": "b"}, "Default", "p")
        rendered = render_object(w)
        orders[kind] = list(rendered)
        orders[kind + ".spec"] = list(rendered["spec"])
        orders["pod"] = list(rendered["spec"]["template"]["spec"])
        orders["container"] = list(rendered["spec"]["template"]["spec"]["containers"][0])
    return orders


def _ordered(mapping: dict, order: list[str]) -> dict:
    rank = {key: index for index, key in enumerate(order)}
    keys = sorted(mapping, key=lambda k: (rank.get(k, len(rank)), list(mapping).index(k)))
    return mapping if keys == list(mapping) else {k: mapping[k] for k in keys}


def canonical_order(manifest: dict) -> dict:
    """A workload manifest's keys in the renderer's order (other kinds as they are)."""
    kind = manifest.get("kind")
    if kind not in ("Deployment", "StatefulSet"):
        return manifest
    orders = _key_orders()
    out = _ordered(manifest, orders[kind])
    spec = out.get("spec")
    if isinstance(spec, dict):
        spec = out["spec"] = _ordered(spec, orders[kind + ".spec"])
        pod = spec.get("template", {}).get("spec") if isinstance(spec.get("template"), dict) else None
        if isinstance(pod, dict):
            pod = spec["template"]["spec"] = _ordered(pod, orders["pod"])
            for key in ("initContainers", "containers"):
                if isinstance(pod.get(key), list):
                    pod[key] = [_ordered(c, orders["container"]) if isinstance(c, dict) else c for c in pod[key]]
    return out


def _inject(spec: Declared, injection: ir.Injection, topology: ir.Topology) -> Effect:
    from .base import find_object

    target = _manifest(find_object(topology, injection.target))
    apply = [patch_manifest(spec, injection, target)] if spec.patches else []
    apply += _created_manifests(None, spec, injection.args, target,
                                lambda text, context: _template(text).render(**context))
    return Effect(apply, [injection.target] if spec.delete_target else [])


def _revert(spec: Declared, injection: ir.Injection, topology: ir.Topology) -> Effect:
    restore = original(injection, topology).apply if spec.patches or spec.delete_target else []
    return Effect(restore, list(injection.created))


def exec_steps(spec: Declared, injection: ir.Injection) -> tuple[dict, dict] | None:
    """The exec step of an injection and of its revert (docs/fault-kinds.md, `exec`), or None."""
    if spec.exec is None:
        return None
    args = injection.args
    container = resolve(spec.exec.container, args) if spec.exec.container is not None else args.get("container")
    target = injection.target
    base = {"namespace": target.namespace, "workload": {"kind": target.kind, "name": target.name},
            "container": container}
    return ({**base, "command": _rendered(resolve(spec.exec.command, args), args)},
            {**base, "command": _rendered(resolve(spec.exec.revert, args), args)})


def _rendered(value, args: dict):
    """A command's strings as Jinja2 templates over `args` (`"db: '{{ args.database }}'"`)."""
    if isinstance(value, list):
        return [_rendered(v, args) for v in value]
    return _template(value).render(args=args) if isinstance(value, str) and "{" in value else value


# ---- loading ------------------------------------------------------------------------------------------------


def load_library(data: bytes, path: str, diags: Diagnostics, builtin: dict | None = None,
                 replaceable: frozenset = frozenset()) -> list[FaultKind]:
    """The fault kinds of one file; `builtin`: the library's kinds, whose names a declaration may not take
    (E2053) unless listed in `replaceable` (the standard library re-expressing a Python kind)."""
    from ..parser import parse_bytes

    document = parse_bytes(data, path, diags)
    if document is None:
        return []
    if not isinstance(document, ast.FaultLibrary):
        diags.error("E2055", f"`{path}` holds no `fault_kind` declarations", path, document.span,
                    "not a fault library", help='a fault library file holds `fault_kind "name" { ... }` blocks')
        return []
    return build_library(document, path, diags, builtin, replaceable)


def build_library(document: ast.FaultLibrary, path: str, diags: Diagnostics, builtin: dict | None = None,
                  replaceable: frozenset = frozenset(), known_clean: bool = False) -> list[FaultKind]:
    ctx = KnownClean(diags, path) if known_clean else Context(diags, path)
    seen: dict[str, ast.FaultKindDecl] = {}
    kinds = []
    for decl in document.kinds:
        if decl.name in seen:
            ctx.error("E2002", f"fault kind `{decl.name}` is declared twice", decl.name_span, "second declaration")
            continue
        seen[decl.name] = decl
        if builtin is not None and decl.name in builtin and decl.name not in replaceable:
            ctx.error("E2053", f"fault kind `{decl.name}` is already a fault of the library", decl.name_span,
                      "name taken", help="give the kind another name (`itbench faults` lists the library's)")
            continue
        if not re.fullmatch(r"[a-z][a-z0-9_]*", decl.name):
            ctx.error("E2014", f"fault kind name `{decl.name}` is not a name", decl.name_span, "invalid name",
                      help="lower-case letters, digits and `_`, as the library's (`modified_env`)")
            continue
        kind = build(decl, ctx)
        if kind is None:
            continue
        # a new name for what a library fault does is a duplicate fault (mechanisms.py)
        same = next((k for k in (builtin or {}).values() if k.mechanism == kind.mechanism
                     and k.name != kind.name and k.name not in replaceable), None)
        if same is not None:
            span = next((s.value.span for s in decl.statements if isinstance(s, ast.Attr) and s.key == "mechanism"),
                        decl.name_span)
            ctx.error("E2053", f"fault kind `{decl.name}` is mechanism `{kind.mechanism}`, as the library's "
                      f"`{same.name}`", span, "same mechanism",
                      help=f"use `{same.name}` (an argument may say what differs), or name what this kind does "
                      "differently")
            continue
        kinds.append(kind)
    return kinds


def stdlib_files() -> list[tuple[str, bytes]]:
    folder = resources.files("itbench_dsl").joinpath("stdlib/faults")
    return [(f"<stdlib>/faults/{p.name}", p.read_bytes()) for p in sorted(folder.iterdir(), key=lambda p: p.name)
            if p.name.endswith(".itb")]


def stdlib_names(path: str, library: dict) -> frozenset:
    """The names the standard library's file at `path` declares (empty for any other file): checking that file
    on its own, its kinds do not clash with themselves. `library`: the fault library (faults.FAULTS)."""
    folder = resources.files("itbench_dsl").joinpath("stdlib/faults")
    try:
        same = os.path.dirname(os.path.realpath(path)) == os.path.realpath(str(folder))
    except (OSError, TypeError):
        return frozenset()
    if not same:
        return frozenset()
    name = os.path.basename(path)
    return frozenset(k.name for k in library.values()
                     if k.declared is not None and k.declared.path == f"<stdlib>/faults/{name}")


def load_stdlib(python_kinds: dict) -> list[FaultKind]:
    """The standard library's declared kinds; an error there is a bug of the package, raised (a kind defined
    both in Python and here among them: each kind has one definition). Once the package has checked its
    files clean, a mark on disk (cache.py, keyed by the package and the files) spares later starts the checks
    that can only report (KnownClean)."""
    from .. import cache
    from ..parser import parse_package_file

    diags = Diagnostics()
    kinds = []
    files = stdlib_files()
    mark = cache.path_for("faultlib", cache.package_digest(), *(part for path, data in files for part in (path, data)))
    known_clean = cache.load(mark) is True
    for path, data in files:
        document = parse_package_file(data, path, diags)  # kept on disk: the same bytes, the same AST
        if isinstance(document, ast.FaultLibrary):
            kinds.extend(build_library(document, path, diags, python_kinds, known_clean=known_clean))
        elif document is not None:
            diags.error("E2055", f"`{path}` holds no `fault_kind` declarations", path, document.span)
    if diags.errors():
        from ..diagnostics import render_human

        raise ValueError("the standard fault library does not check:\n" + render_human(diags))
    if not known_clean:
        cache.store(mark, True)
    return kinds


# ---- a project's kinds (`use faults`): they belong to the compile that loads them ----------------------------


def load_project_file(use: ast.UseFaults, ctx: Context, builtin: dict,
                      hashes: dict[str, str] | None = None) -> list[FaultKind] | None:
    """The kinds of `use faults "PATH"` (relative to the scenario); None (with a diagnostic) when unreadable.
    `hashes` gets the sha256 of the bytes read, under the path as the scenario writes it (bundle.lock)."""
    base = os.path.dirname(os.path.abspath(ctx.path)) if not ctx.path.startswith("<") else os.getcwd()
    path = os.path.normpath(os.path.join(base, use.path))
    # shown as the scenario's own path leads to it (`faults/x.itb` beside `s.itb`), not relative to the cwd
    shown = path if os.path.isabs(use.path) or ctx.path.startswith("<") else \
        os.path.normpath(os.path.join(os.path.dirname(ctx.path), use.path))
    try:
        size = os.path.getsize(path)
        if size > 1024 * 1024:
            ctx.error("E1008", f"`{use.path}` is {size:,} bytes; the limit is 1,048,576", use.path_span, "too large")
            return None
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError as exc:
        ctx.error("E2055", f"cannot read fault library `{use.path}`: {exc.strerror or exc}", use.path_span,
                  "cannot read", help="the path is relative to the scenario's folder")
        return None
    if hashes is not None:
        import hashlib

        hashes[use.path] = hashlib.sha256(data).hexdigest()
    errors_before = len(ctx.diags.errors())
    kinds = load_library(data, shown, ctx.diags, builtin)
    if len(ctx.diags.errors()) > errors_before:
        return None
    return kinds
