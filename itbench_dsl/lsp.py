"""The language server behind `itbench lsp`: diagnostics, hover, completion and formatting.

The first part of this module knows nothing of the protocol library: it turns a document's text
into diagnostics (the whole-file check `itbench check` runs on one file), completion items, hover
text and a formatted text, with positions as LSP counts them (0-based lines; characters in the
negotiated encoding: UTF-16 code units unless the client accepts UTF-32 or UTF-8). `create_server`
wires it to pygls, imported only there, so the rest of the package never needs it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from urllib.parse import unquote, urlparse

from . import ast
from .diagnostics import Diagnostics
from .source import SourceFile

SERVER_NAME = "itbench"
DEBOUNCE_SECONDS = 0.25  # diagnostics wait this long after the last change before the check runs

# ---- positions ------------------------------------------------------------------------------------------

UTF8, UTF16, UTF32 = "utf-8", "utf-16", "utf-32"


def units(text: str, encoding: str = UTF16) -> int:
    """How many code units of `encoding` the client counts for `text`."""
    if encoding == UTF32:
        return len(text)
    if encoding == UTF8:
        return len(text.encode("utf-8", "surrogatepass"))
    return len(text) + sum(1 for c in text if ord(c) > 0xFFFF)


def _lines(text: str) -> list[str]:
    """Lines as LSP counts them: split at \\n, \\r\\n and \\r."""
    return re.split(r"\r\n|\r|\n", text)


def to_client(line_text: str, column: int, encoding: str = UTF16) -> int:
    """A 1-based code-point column of a line as a 0-based character in the client's encoding."""
    return units(line_text[: max(0, column - 1)], encoding)


def from_client(line_text: str, character: int, encoding: str = UTF16) -> int:
    """A 0-based character in the client's encoding as a 0-based code-point index into the line."""
    if encoding == UTF32:
        return min(character, len(line_text))
    count = 0
    for index, char in enumerate(line_text):
        if count >= character:
            return index
        count += units(char, encoding)
    return len(line_text)


def offset_at(text: str, line: int, character: int, encoding: str = UTF16) -> int:
    """The code-point offset into `text` of an LSP position (clamped to the text)."""
    offset = 0
    for index, match in enumerate(re.finditer(r"[^\r\n]*(\r\n|\r|\n|\Z)", text)):
        if index == line:
            body = match.group()[: len(match.group()) - len(match.group(1))]
            return offset + from_client(body, character, encoding)
        offset = match.end()
        if match.group(1) == "":
            break
    return len(text)


def end_position(text: str, encoding: str = UTF16) -> tuple[int, int]:
    lines = _lines(text)
    return len(lines) - 1, units(lines[-1], encoding)


def uri_to_path(uri: str) -> str:
    parsed = urlparse(uri)
    if parsed.scheme == "file":
        path = unquote(parsed.path)
        if re.match(r"/[A-Za-z]:/", path):  # file:///C:/... on Windows
            path = path[1:]
        return path
    return uri


# ---- checking -------------------------------------------------------------------------------------------


@dataclass
class Problem:
    """One diagnostic in LSP terms (0-based positions in the client's encoding)."""

    code: str
    severity: int  # 1 error, 2 warning
    message: str
    start: tuple[int, int]
    end: tuple[int, int]
    related: list[tuple[str, tuple[int, int], tuple[int, int]]] = field(default_factory=list)


@dataclass
class Analysis:
    """What one check of a document found: its diagnostics and, when it parsed, its topology."""

    text: str
    path: str
    diagnostics: list = field(default_factory=list)  # diagnostics.Diagnostic, sorted
    build: object | None = None  # topology.TopologyBuild of the document, when it parsed
    pending: bool = False  # the self-validation is still to run (analyze with validate="cached")


def analyze(text: str, path: str, validate: str = "always") -> Analysis:
    """Everything `itbench check FILE` reports for this text (parse, check, generation, validation, the
    scenario's self-validation and lint), and the document's topology for completion and hover.
    `validate="cached"`: the self-validation only when its results are on disk (`pending` otherwise), so an
    edit's other diagnostics are shown before the slow part runs."""
    from .checking import check_source

    checked = check_source(text.encode("utf-8", "surrogatepass"), path, validate=validate)
    diags = Diagnostics(list(checked.diagnostics), dict(checked.sources))
    return Analysis(text, path, diags.sorted(), checked.result.topology, checked.validation_pending)


def topology_of(text: str, path: str):
    """The topology the document declares or imports (the checker's, without generating any
    output), or None when it does not parse."""
    from .checker import check
    from .parser import parse_text

    diags = Diagnostics()
    document = parse_text(text, path, diags)
    if document is None:
        return None
    try:
        return check(document, path, diags).topology
    except Exception:  # noqa: BLE001 - a half-written document: completion falls back on the last good topology
        return None


def fault_kinds_of(text: str, path: str) -> dict:
    """The fault kinds a document may use: the library's, and those its `use faults` files declare
    (read for this document alone: another document's project kinds are not its)."""
    from . import ast
    from .faults import FAULTS, declared
    from .parser import parse_text
    from .reader import Context

    diags = Diagnostics()
    document = parse_text(text, path, diags)
    kinds = dict(FAULTS)
    if isinstance(document, ast.Scenario):
        for stmt in document.statements:
            if isinstance(stmt, ast.UseFaults):
                for kind in declared.load_project_file(stmt, Context(diags, path), FAULTS) or ():
                    kinds.setdefault(kind.name, kind)
    return kinds


def imported_topology(text: str):
    """The standard-library application a document imports (for documents that do not parse yet)."""
    from .applications import app_names, app_topology

    match = re.search(r'^\s*use\s+app\s+"([^"\n]+)"', text, re.M)
    if match and match.group(1) in app_names():
        return app_topology(match.group(1))[0]
    return None


def problems(analysis: Analysis, encoding: str = UTF16) -> list[Problem]:
    """The analysis's diagnostics in LSP positions. A diagnostic located in another file (a
    standard-library application) is shown at the top of the document, naming where it is."""
    source = SourceFile(analysis.path, analysis.text)

    def position(line: int, column: int) -> tuple[int, int]:
        return line - 1, to_client(source.line_text(line), column, encoding)

    out = []
    for d in analysis.diagnostics:
        severity = 1 if d.severity == "error" else 2
        message = d.message + (f"\nhelp: {d.help}" if d.help else "")
        if d.path != analysis.path:
            out.append(Problem(d.code, severity, f"{d.path}:{d.span.line}:{d.span.column}: {message}", (0, 0), (0, 0)))
            continue
        start = position(d.span.line, d.span.column)
        end = position(d.span.end_line, d.span.end_column)
        if end < start:
            end = start
        related = [(n.message, position(n.span.line, n.span.column), position(n.span.end_line, n.span.end_column))
                   for n in d.notes if n.span is not None]
        out.append(Problem(d.code, severity, message, start, end, related))
    return out


def format_text(text: str, path: str = "<document>") -> str | None:
    """The document in the canonical layout (`itbench fmt`), or None when it has syntax errors."""
    from .diagnostics import Diagnostics
    from .parser import decode, parse_source
    from .printer import print_document

    diags = Diagnostics()
    source = decode(text.encode("utf-8", "surrogatepass"), path, diags)
    document = parse_source(source, diags) if source is not None else None
    if document is None:
        return None
    return print_document(document, source.text)


# ---- completion -----------------------------------------------------------------------------------------

# LSP CompletionItemKind values
K_FUNCTION, K_FIELD, K_CLASS, K_MODULE, K_PROPERTY, K_KEYWORD, K_REFERENCE, K_ENUM_MEMBER, K_EVENT = (
    3, 5, 7, 9, 10, 14, 18, 20, 23)

SCENARIO_KEYWORDS = {
    "domain": "sre | ciso | finops", "complexity": "low | medium | high", "description": "what the scenario is",
    "tags": "a list of strings", "metadata": "free data; `itbench_id` names the ITBench scenario",
    "use": "`use app \"NAME\"`: a topology of the standard library", "topology": "objects and dependency edges",
    "fault": "`fault KIND on TARGET { ARGS }`", "group": "faults injected together, with waiters",
    "expect": "alerts, root cause, propagation, mitigation", "solution": "`solution \"title\" { step ... }`",
    "param": "`param NAME in [...] default V`, for generators", "agent": "the agent's Kubernetes access",
    "control": "CISO: the control", "task": "CISO: the task class", "gap": "CISO: the object that opens the gap",
    "tasks": "what the agent is asked: `tasks detect, localize, analyze, mitigate`",
    "compliant": "CISO: an object that must stay passing",
    "alert_rule": "`alert_rule \"Name\" { expr = \"...\"  for = 2m  severity = \"warning\" }`: an alert of its own",
    "probe": "`probe \"NAME\" on deployment \"x\" { container command healthy {} }`: a command predicates read",
}
EXPECT_KEYWORDS = {
    "alert": "`alert NAME on KIND \"name\"`", "root_cause": "`root_cause KIND \"name\"`",
    "propagation": "`propagation A -> B -> C`", "mitigated": "`mitigated when { predicates }`",
    "optimal": "FinOps: `optimal KIND \"name\" path = value`",
    "analysis": "`analysis { system_level = \"...\"  fault_type = \"...\" }`: the analyze task's labels",
}
STATES = ("ready", "exists", "absent", "complete")
# fields of topology objects (docs/language.md), for completion inside an object body
_CONTAINER_FIELDS = ("image", "image_pull_policy", "command", "args", "port", "env", "resources", "probe", "mount",
                     "security_context")
_WORKLOAD_FIELDS = ("replicas", "labels", "selector", "object_labels", "annotations", "object_annotations",
                    "service_account", "automount_service_account_token", "termination_grace_period",
                    "security_context", "affinity", "host_network", "host_pid", "host_ipc", "node_selector",
                    "container", "init_container", "volume") + _CONTAINER_FIELDS
_JOB_FIELDS = ("completions", "parallelism", "backoff_limit", "active_deadline", "restart_policy")
OBJECT_FIELDS = {
    "namespace": ("labels",),
    "deployment": _WORKLOAD_FIELDS + ("strategy",),
    "statefulset": _WORKLOAD_FIELDS + ("service_name", "pod_management_policy"),
    "job": tuple(f for f in _WORKLOAD_FIELDS if f not in ("replicas", "selector")) + _JOB_FIELDS,
    "pod": tuple(f for f in _WORKLOAD_FIELDS if f not in ("replicas", "selector", "object_labels")) + (
        "restart_policy",),
    "cronjob": tuple(f for f in _WORKLOAD_FIELDS if f not in ("replicas", "selector")) + _JOB_FIELDS + (
        "schedule", "concurrency_policy", "suspend"),
    "service": ("port", "selector", "labels", "annotations", "type", "cluster_ip", "publish_not_ready_addresses"),
    "ingress": ("class", "rule", "backend", "labels", "annotations"),
    "configmap": ("data", "labels"),
    "secret": ("data", "type", "labels"),
    "serviceaccount": ("labels", "automount_service_account_token"),
    "hpa": ("workload", "min", "max", "cpu", "memory"),
}


@dataclass
class Item:
    label: str
    kind: int
    detail: str = ""
    documentation: str = ""  # markdown
    insert_text: str | None = None
    replace: tuple[int, int] | None = None  # code-point offsets of the text the item replaces


_TOKEN = re.compile(r'"(?:[^"\\\n]|\\.)*(?:"|\\?\Z)|#[^\n]*|->|[{}()\[\],=]|\n|[A-Za-z0-9_.+%*/-]+|\S')


@dataclass
class Context:
    """Where the cursor is: the headers of the open blocks, outermost first, and the tokens of the
    statement before the word being typed."""

    headers: list[list[str]]
    tokens: list[str]
    word: str  # the part of a name before the cursor
    string: str | None = None  # inside an unterminated string: its text so far
    string_start: int = 0  # offset of the first character inside that string


def context_at(text: str, offset: int) -> Context:
    before = text[:offset]
    stack: list[list[str]] = []
    current: list[str] = []
    last = None
    for match in _TOKEN.finditer(before):
        token = match.group()
        last = match
        if token.startswith("#"):
            continue
        if token == "\n":
            current = []
        elif token == "{":
            stack.append(current)
            current = []
        elif token == "}":
            if stack:
                stack.pop()
            current = []
        else:
            current.append(token)
    if last is not None and last.end() == len(before) and last.group().startswith('"') and _open_string(last.group()):
        return Context(stack, current[:-1], "", last.group()[1:], last.start() + 1)
    word = re.search(r"[A-Za-z0-9_]*\Z", before).group()
    if word and current and current[-1].endswith(word):
        current = current[:-1]
    return Context(stack, current, word)


def _open_string(token: str) -> bool:
    if len(token) == 1 or not token.endswith('"'):
        return True
    escapes = len(token[1:-1]) - len(token[1:-1].rstrip("\\"))
    return escapes % 2 == 1  # `"abc\"` is still open


def _block(header: list[str], parent: str | None) -> str:
    """What kind of block a header opens: scenario, app, topology, fault, wait, group, expect,
    mitigated, solution, object, or body (any other generic block)."""
    from .topology import KINDS

    if not header:
        return "body"
    first = header[0]
    if first in ("scenario", "app", "topology", "fault", "wait", "group", "expect", "solution", "agent", "metadata",
                 "control", "task"):
        return first
    if first == "mitigated":
        return "mitigated"
    if first in KINDS and len(header) >= 2 and parent in ("topology", "app"):
        return "object"
    return "body"


def _blocks(headers: list[list[str]]) -> list[str]:
    kinds: list[str] = []
    for header in headers:
        kinds.append(_block(header, kinds[-1] if kinds else None))
    return kinds


def _ref_kinds() -> list[str]:
    from .faults import CREATABLE_KINDS
    from .topology import KINDS, RUNTIME_KINDS

    return list(KINDS) + list(RUNTIME_KINDS) + sorted(CREATABLE_KINDS)


def complete(text: str, offset: int, build=None, kinds: dict | None = None) -> list[Item]:
    """Completion items at a code-point offset; `build` is the document's topology (or None), `kinds` the
    fault kinds it may use (`fault_kinds_of`; the library's when None)."""
    ctx = context_at(text, offset)
    blocks = _blocks(ctx.headers)
    block = blocks[-1] if blocks else None
    tokens = ctx.tokens
    if ctx.string is not None:
        return _complete_string(ctx, block, build, text, offset)
    from .ciso.tasks import CISO_TASKS
    from .vocabulary import COMPLEXITIES, DOMAINS, KNOWN_ALERTS
    from .faults import FAULTS, WAITERS
    from .topology import KINDS

    kinds = FAULTS if kinds is None else kinds

    if not tokens:
        if block is None:
            return [Item("scenario", K_KEYWORD, "a benchmark scenario"), Item("app", K_KEYWORD, "a reusable topology")]
        if block == "scenario":
            return [Item(k, K_KEYWORD, d) for k, d in SCENARIO_KEYWORDS.items()]
        if block in ("topology", "app"):
            extra = [Item("description", K_KEYWORD), Item("metadata", K_KEYWORD)] if block == "app" else []
            return [Item(k, K_CLASS, f"{KINDS[k][0]} {KINDS[k][1]}") for k in KINDS] + extra
        if block == "fault":
            kind = kinds.get(ctx.headers[-1][1]) if len(ctx.headers[-1]) > 1 else None
            return [] if kind is None else [
                Item(a.name, K_FIELD, f"{a.type}{' (required)' if a.required else ''}", _arg_doc(a), f"{a.name} = ")
                for a in kind.args]
        if block == "group":
            return [Item("fault", K_KEYWORD, SCENARIO_KEYWORDS["fault"]),
                    Item("wait", K_KEYWORD, "`wait before|after KIND on TARGET`")]
        if block == "expect":
            return [Item(k, K_KEYWORD, d) for k, d in EXPECT_KEYWORDS.items()]
        if block == "mitigated":
            return [Item("alert", K_KEYWORD, "`alert NAME not firing`")] + _kind_items(_ref_kinds())
        if block == "solution":
            return [Item("step", K_KEYWORD, '`step "text" run "command"`')]
        if block == "object":
            kind = ctx.headers[-1][0]
            return [Item(f, K_PROPERTY, kind) for f in OBJECT_FIELDS.get(kind, ())]
        return []
    if block == "fault" and _complete_attributes(tokens):
        return complete(text[:offset - len(ctx.word)] + "\n" + ctx.word, offset + 1, build, kinds)
    last = tokens[-1]
    if last == "fault":
        return [Item(k.name, K_FUNCTION, k.summary, fault_markdown(k)) for k in kinds.values()]
    if len(tokens) >= 3 and tokens[-3] == "fault" and last == "on":
        kind = kinds.get(tokens[-2])
        return _kind_items(kind.targets if kind else _ref_kinds())
    if tokens == ["wait"]:
        return [Item("before", K_KEYWORD), Item("after", K_KEYWORD)]
    if len(tokens) == 2 and tokens[0] == "wait":
        return [Item(w.name, K_FUNCTION, f"ITBench `{w.itbench_id}`") for w in WAITERS.values()]
    if len(tokens) == 4 and tokens[0] == "wait" and last == "on":
        waiter = WAITERS.get(tokens[2])
        return _kind_items(waiter.targets if waiter else _ref_kinds())
    if tokens == ["domain"]:
        return [Item(d, K_ENUM_MEMBER) for d in DOMAINS]
    if tokens == ["complexity"]:
        return [Item(c, K_ENUM_MEMBER) for c in COMPLEXITIES]
    if tokens == ["task"]:
        return [Item(t, K_ENUM_MEMBER, f"ITBench `{i}`") for t, i in CISO_TASKS.items()]
    if tokens and tokens[0] == "tasks" and block == "scenario":
        from .tasks import TASK_TYPES

        return [Item(t.name, K_ENUM_MEMBER, t.summary) for t in TASK_TYPES.values()]
    if tokens == ["use"]:
        return [Item("app", K_KEYWORD)]
    if tokens == ["alert"] and block in ("expect", "mitigated"):
        return [Item(a, K_EVENT) for a in KNOWN_ALERTS]
    if len(tokens) == 2 and tokens[0] == "alert":
        return [Item("on", K_KEYWORD)] if block == "expect" else [Item("not", K_KEYWORD), Item("firing", K_KEYWORD)]
    if len(tokens) == 3 and tokens[0] == "alert" and last == "on":
        return _kind_items(_ref_kinds())
    if tokens == ["mitigated"]:
        return [Item("when", K_KEYWORD)]
    if last in ("root_cause", "gap", "compliant", "propagation", "optimal", "->") and block != "topology":
        return _kind_items(_ref_kinds())
    if block == "mitigated" and len(tokens) == 2 and tokens[1].startswith('"'):
        return [Item(s, K_KEYWORD) for s in STATES]
    if block == "mitigated" and len(tokens) == 3 and tokens[1].startswith('"'):  # after a field path: its test
        return [Item(op, K_KEYWORD) for op in ast.FIELD_OPS]
    if tokens == ["step"] or (len(tokens) == 2 and tokens[0] == "step"):
        return [Item("run", K_KEYWORD)]
    return []


def _complete_attributes(tokens: list[str]) -> bool:
    """Whether the tokens are whole `key = value` entries (`image = "x"  container = "y"`), so that
    what follows starts a new entry."""
    i = 0
    while i < len(tokens):
        if i + 2 >= len(tokens) or tokens[i + 1] != "=" or tokens[i + 2] in "=[(,":
            return False
        i += 3
    return bool(tokens)


def _kind_items(kinds) -> list[Item]:
    from .faults import CREATABLE_KINDS
    from .topology import KINDS, RUNTIME_KINDS

    table = {**KINDS, **RUNTIME_KINDS, **CREATABLE_KINDS}
    return [Item(k, K_CLASS, " ".join(table[k]) if k in table else "") for k in kinds]


def _complete_string(ctx: Context, block: str | None, build, text: str, offset: int) -> list[Item]:
    from .applications import app_names

    before = ctx.tokens
    closing = "" if text[offset:offset + 1] == '"' else '"'
    span = (ctx.string_start, offset)
    if before[-2:] == ["use", "app"]:
        return [Item(n, K_MODULE, "standard-library application", insert_text=n + closing, replace=span)
                for n in app_names()]
    if build is None:
        return []
    if block == "topology" and (not before or before[-1] == "->"):
        names = sorted({w.name for w in build.workloads})
        return [Item(n, K_REFERENCE, "workload", insert_text=n + closing, replace=span) for n in names]
    if not before:
        return []
    if before[-2:] == ["container", "="] and block == "fault":
        return _container_items(ctx.headers[-1], build, closing, span)
    kind = before[-1]
    items = []
    seen = set()
    for (declared_kind, namespace, name), declared in build.declared.items():
        if declared_kind != kind and not (kind == "pod" and declared_kind in ("deployment", "statefulset")):
            continue
        label = f"{name}-*" if kind == "pod" else name
        if label in seen:
            continue
        seen.add(label)
        items.append(Item(label, K_REFERENCE, f"{declared_kind} in namespace {namespace or '(default)'}",
                          insert_text=label + closing, replace=span))
    return sorted(items, key=lambda i: i.label)


def _container_items(header: list[str], build, closing: str, span: tuple[int, int]) -> list[Item]:
    """The containers of a fault's target workload (`fault KIND on deployment "name" {`)."""
    if len(header) < 5 or not header[4].startswith('"'):
        return []
    namespace, _, name = header[4].strip('"').rpartition("/")
    items = []
    for declared in build.find(header[3], name):
        if namespace and declared.namespace != namespace:
            continue
        for container in getattr(declared.obj, "containers", []):
            items.append(Item(container.name, K_REFERENCE, f"image {container.image}",
                              insert_text=container.name + closing, replace=span))
    return items


# ---- hover ------------------------------------------------------------------------------------------------


def _arg_doc(arg) -> str:
    parts = [f"`{arg.name}`: {arg.type}" + (", required" if arg.required else "")]
    if arg.default:
        parts.append(f"default: {arg.default}")
    if arg.help:
        parts.append(arg.help)
    return "\n\n".join(parts)


def fault_markdown(kind) -> str:
    lines = [f"**fault `{kind.name}`** on {' | '.join(kind.targets)}", "", kind.summary, ""]
    lines.append(f"ITBench id: `{kind.itbench_id}`" if kind.itbench_id else "Not an ITBench fault.")
    if kind.args:
        lines += ["", "| argument | type | required | default | |", "|---|---|---|---|---|"]
        for a in kind.args:
            cells = (f"`{a.name}`", a.type, "yes" if a.required else "", a.default, a.help)
            lines.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    if kind.preconditions:
        lines += ["", "Preconditions:"] + [f"- {p}" for p in kind.preconditions]
    return "\n".join(lines)


def argument_markdown(text: str, offset: int, name: str, kinds: dict | None = None) -> str | None:
    """The page of a fault argument written at `offset` (`image = ...` inside `fault KIND ... {`)."""
    from .faults import FAULTS

    kinds = FAULTS if kinds is None else kinds
    headers = context_at(text, offset).headers
    blocks = _blocks(headers)
    if not blocks or blocks[-1] != "fault" or len(headers[-1]) < 2 or headers[-1][1] not in kinds:
        return None
    kind = kinds[headers[-1][1]]
    arg = next((a for a in kind.args if a.name == name), None)
    return None if arg is None else f"**argument of `{kind.name}`**\n\n" + _arg_doc(arg)


def code_markdown(code: str) -> str | None:
    from .codes import explain

    page = explain(code)
    if page is None:
        return None
    title, _, body = page.partition("\n\n")
    return f"**{title}**\n\n```\n{body.rstrip()}\n```"


_WORD = re.compile(r"[A-Za-z0-9_]+")
_REF = re.compile(r'\b([a-z_]+)\s+"((?:[^"\\\n]|\\.)*)"')


def hover(text: str, offset: int, build=None, diagnostics=(), kinds: dict | None = None) -> tuple[str, tuple[int, int]] | None:
    """Markdown for what is under the cursor (a fault or waiter kind, a diagnostic code, an object
    reference), with the code-point range it covers; diagnostics covering the cursor add their page.
    `kinds`: the fault kinds the document may use (the library's when None)."""
    from .faults import FAULTS, WAITERS

    kinds = FAULTS if kinds is None else kinds

    line_start = text.rfind("\n", 0, offset) + 1
    line_end = text.find("\n", offset)
    line_end = len(text) if line_end == -1 else line_end
    line = text[line_start:line_end]
    column = offset - line_start
    parts: list[str] = []
    where: tuple[int, int] | None = None
    for match in _REF.finditer(line):
        if match.start() <= column <= match.end():
            if match.group(1) == "app" and line[: match.start()].split()[-1:] == ["use"]:
                found = app_markdown(match.group(2))
            else:
                found = ref_markdown(match.group(1), match.group(2), build)
            if found:
                parts.append(found)
                where = (line_start + match.start(), line_start + match.end())
            break
    if not parts:
        for match in _WORD.finditer(line):
            if not match.start() <= column <= match.end():
                continue
            word = match.group()
            prefix = line[: match.start()].split()
            doc = None
            if word in kinds and (not prefix or prefix[-1] == "fault"):
                doc = fault_markdown(kinds[word])
            elif word in WAITERS and prefix and prefix[-1] in ("before", "after"):
                waiter = WAITERS[word]
                doc = f"**waiter `{word}`** on {' | '.join(waiter.targets)}\n\nITBench id: `{waiter.itbench_id}`"
            elif re.fullmatch(r"[EW]\d{4}", word):
                doc = code_markdown(word)
            elif re.match(r"\s*=(?!=)", line[match.end():]):
                doc = argument_markdown(text, line_start + match.start(), word, kinds)
            if doc:
                parts.append(doc)
                where = (line_start + match.start(), line_start + match.end())
            break
    codes = []
    for d in diagnostics:  # diagnostics located in this document
        if d.span.start <= offset <= max(d.span.end, d.span.start + 1) and d.code not in codes:
            codes.append(d.code)
    for code in codes:
        page = code_markdown(code)
        if page and page not in parts:
            parts.append(page)
    if not parts:
        return None
    return "\n\n---\n\n".join(parts), where or (offset, offset)


def app_markdown(name: str) -> str | None:
    from . import ast
    from .applications import app_names, load_app

    if name not in app_names():
        return None
    app = load_app(name)[0]
    if app is None:
        return None
    description = next((s.text for s in app.statements if isinstance(s, ast.Description)), "")
    objects = [s for s in app.statements if isinstance(s, ast.Object)]
    kinds: dict[str, int] = {}
    for obj in objects:
        kinds[obj.kind] = kinds.get(obj.kind, 0) + 1
    counts = ", ".join(f"{n} {k}" for k, n in kinds.items())
    return f"**app `{name}`** (standard library)\n\n{description}\n\n{counts}"


def ref_markdown(kind: str, name: str, build) -> str | None:
    from .faults import CREATABLE_KINDS
    from .topology import KINDS, RUNTIME_KINDS

    table = {**KINDS, **RUNTIME_KINDS, **CREATABLE_KINDS}
    if kind not in table:
        return None
    api_version, k8s_kind = table[kind]
    head = f"**{kind} `{name}`**: `{api_version}` {k8s_kind}"
    if build is None:
        return head
    if kind == "pod":
        import fnmatch

        owners = [f"{w.kind.lower()} `{w.namespace}/{w.name}`" for w in build.workloads
                  if fnmatch.fnmatchcase(f"{w.name}-x", name) or fnmatch.fnmatchcase(w.name, name)]
        return head + ("\n\nPods of " + ", ".join(owners) if owners else "\n\nNo workload's pods match this pattern.")
    namespace, _, plain = name.rpartition("/")
    found = [d for d in build.find(kind, plain) if not namespace or d.namespace == namespace]
    if not found:
        if kind in KINDS:
            return head + "\n\nNot in the topology."
        return head
    lines = [head]
    for declared in found:
        lines.append("")
        lines.append(f"namespace `{declared.namespace}`" if declared.namespace else "cluster-scoped")
        lines.append(f"declared in `{declared.path}` line {declared.span.line}")
        obj = declared.obj
        if hasattr(obj, "containers"):
            lines.append(f"replicas: {obj.replicas}")
            lines += [f"- container `{c.name}`: `{c.image}`" for c in obj.containers]
        elif hasattr(obj, "ports") and hasattr(obj, "selector"):
            lines += [f"- port `{getattr(p, 'name', '') or ''}` {getattr(p, 'port', '')}" for p in obj.ports]
    return "\n".join(lines)


# ---- the server -------------------------------------------------------------------------------------------


def create_server():
    """The pygls server, features registered (pygls is imported here, and only here)."""
    import asyncio

    from lsprotocol import types
    from pygls.lsp.server import LanguageServer

    from .version import __version__

    server = LanguageServer(SERVER_NAME, __version__, text_document_sync_kind=types.TextDocumentSyncKind.Incremental)
    state: dict[str, dict] = {"pending": {}, "analyses": {}, "builds": {}}

    def encoding() -> str:
        value = server.workspace.position_encoding or UTF16
        return getattr(value, "value", value)

    def lsp_range(text: str, start: int, end: int) -> types.Range:
        source = SourceFile("", text)

        def pos(offset: int) -> types.Position:
            line, column = source.position(offset)
            return types.Position(line - 1, to_client(source.line_text(line), column, encoding()))

        return types.Range(pos(start), pos(end))

    def show(uri: str, version: int | None, analysis: Analysis) -> None:
        state["analyses"][uri] = analysis
        if analysis.build is not None:
            state["builds"][uri] = analysis.build
        found = []
        for p in problems(analysis, encoding()):
            related = [types.DiagnosticRelatedInformation(
                types.Location(uri, types.Range(types.Position(*s), types.Position(*e))), message)
                for message, s, e in p.related]
            found.append(types.Diagnostic(
                range=types.Range(types.Position(*p.start), types.Position(*p.end)),
                message=p.message, severity=types.DiagnosticSeverity(p.severity), code=p.code, source=SERVER_NAME,
                related_information=related or None))
        server.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=uri, diagnostics=found, version=version))

    async def publish(uri: str, version: int | None) -> None:
        """Two steps: everything but a self-validation not yet on disk, at once; then, when it was left out,
        the whole check, run off the event loop (completion and hover keep answering) and shown only if the
        document did not change meanwhile and it found something the first step did not."""
        text = server.workspace.get_text_document(uri).source
        path = uri_to_path(uri)
        first = analyze(text, path, validate="cached")
        show(uri, version, first)
        if not first.pending:
            return
        whole = await asyncio.get_running_loop().run_in_executor(None, analyze, text, path)
        if server.workspace.get_text_document(uri).source != text:
            return  # a newer edit is scheduled and will be checked
        if whole.diagnostics != first.diagnostics:
            show(uri, version, whole)
        else:
            state["analyses"][uri] = whole

    def schedule(uri: str, version: int | None, delay: float) -> None:
        pending = state["pending"]
        if uri in pending:
            pending[uri].cancel()

        async def later() -> None:
            await asyncio.sleep(delay)
            try:
                await publish(uri, version)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # never let a check bring the server down
                server.window_log_message(types.LogMessageParams(
                    types.MessageType.Error, f"itbench: internal error while checking {uri}: {type(exc).__name__}: {exc}"))
            finally:
                if pending.get(uri) is task:
                    pending.pop(uri, None)

        task = pending[uri] = asyncio.ensure_future(later())

    def build_for(uri: str, text: str):
        analysis = state["analyses"].get(uri)
        if analysis is not None and analysis.text == text and analysis.build is not None:
            return analysis.build
        return topology_of(text, uri_to_path(uri)) or state["builds"].get(uri) or imported_topology(text)

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(params: types.DidOpenTextDocumentParams) -> None:
        schedule(params.text_document.uri, params.text_document.version, 0)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(params: types.DidChangeTextDocumentParams) -> None:
        schedule(params.text_document.uri, params.text_document.version, DEBOUNCE_SECONDS)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    def did_save(params: types.DidSaveTextDocumentParams) -> None:
        schedule(params.text_document.uri, None, 0)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(params: types.DidCloseTextDocumentParams) -> None:
        uri = params.text_document.uri
        task = state["pending"].pop(uri, None)
        if task is not None:
            task.cancel()
        state["analyses"].pop(uri, None)
        state["builds"].pop(uri, None)
        server.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))

    @server.feature(types.TEXT_DOCUMENT_COMPLETION,
                    types.CompletionOptions(trigger_characters=[" ", '"', ">"], resolve_provider=False))
    def completion(params: types.CompletionParams) -> types.CompletionList:
        uri = params.text_document.uri
        text = server.workspace.get_text_document(uri).source
        offset = offset_at(text, params.position.line, params.position.character, encoding())
        items = []
        kinds = fault_kinds_of(text, uri_to_path(uri))
        for n, item in enumerate(complete(text, offset, build_for(uri, text), kinds)):
            edit = None
            if item.replace is not None:
                edit = types.TextEdit(lsp_range(text, *item.replace), item.insert_text or item.label)
            items.append(types.CompletionItem(
                label=item.label, kind=types.CompletionItemKind(item.kind), detail=item.detail or None,
                documentation=types.MarkupContent(types.MarkupKind.Markdown, item.documentation)
                if item.documentation else None,
                insert_text=None if edit else item.insert_text,
                text_edit=edit, sort_text=f"{n:04d}"))
        return types.CompletionList(is_incomplete=False, items=items)

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    def on_hover(params: types.HoverParams) -> types.Hover | None:
        uri = params.text_document.uri
        text = server.workspace.get_text_document(uri).source
        offset = offset_at(text, params.position.line, params.position.character, encoding())
        analysis = state["analyses"].get(uri)
        diagnostics = [d for d in analysis.diagnostics if d.path == analysis.path] \
            if analysis is not None and analysis.text == text else ()
        found = hover(text, offset, build_for(uri, text), diagnostics, fault_kinds_of(text, uri_to_path(uri)))
        if found is None:
            return None
        markdown, (start, end) = found
        return types.Hover(types.MarkupContent(types.MarkupKind.Markdown, markdown), lsp_range(text, start, end))

    @server.feature(types.TEXT_DOCUMENT_FORMATTING)
    def formatting(params: types.DocumentFormattingParams) -> list[types.TextEdit]:
        uri = params.text_document.uri
        text = server.workspace.get_text_document(uri).source
        formatted = format_text(text, uri_to_path(uri))
        if formatted is None or formatted == text:
            return []
        line, character = end_position(text, encoding())
        return [types.TextEdit(types.Range(types.Position(0, 0), types.Position(line, character)), formatted)]

    return server


def serve() -> None:
    """Speak the protocol over standard input and output until the client says exit."""
    server = create_server()
    server.start_io()
