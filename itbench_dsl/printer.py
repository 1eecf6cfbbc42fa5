"""The canonical printer: AST to `.itb` text. `parse(print(tree)) == tree` for every tree.

`itbench fmt` and the generators print through here, so there is one layout: two-space
indentation, one statement per line, blocks opened on the statement's line. Comments from
the source are kept: a comment before a statement stays before it, a comment after a
statement on its line stays on that line.

A tree built in code has no source text: its writer gives its comments and blank lines as
`Notes`, kept per node (see `Notes`). Printing a parsed file without notes is unchanged.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from . import ast

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_COMMENT = re.compile(r'"(?:[^"\\\n]|\\.)*"|(#[^\n]*)')
INDENT = "  "
INLINE_LIMIT = 88


def quote(text: str) -> str:
    out = ['"']
    for char in text:
        if char == '"':
            out.append('\\"')
        elif char == "\\":
            out.append("\\\\")
        elif char == "\n":
            out.append("\\n")
        elif char == "\t":
            out.append("\\t")
        elif char == "\r":
            out.append("\\r")
        elif ord(char) < 0x20 or 0x7F <= ord(char) < 0xA0 or char in "\u2028\u2029\ufeff":
            out.append(f"\\u{ord(char):04x}")
        else:
            out.append(char)
    out.append('"')
    return "".join(out)


def key_text(key: str) -> str:
    return key if _IDENT.match(key) else quote(key)


@dataclass
class _Comment:
    start: int
    line: int
    text: str


def extract_comments(text: str) -> list[_Comment]:
    comments = []
    line, last = 1, 0
    for match in _COMMENT.finditer(text):
        if match.group(1) is None:
            continue
        line += text.count("\n", last, match.start())
        last = match.start()
        comments.append(_Comment(match.start(), line, match.group(1).rstrip()))
    return comments


@dataclass(frozen=True)
class Note:
    """The layout a built node asks for: comment lines before it (after the blank line, if any), whether a
    blank line separates it from what precedes it, and comment lines after it, at its indentation."""

    before: tuple[str, ...] = ()
    after: tuple[str, ...] = ()
    blank_line: bool = False


class Notes:
    """Notes for the nodes of a built tree, kept by node identity: equal nodes in different places (two
    identical `gap` statements) are different places of the file."""

    def __init__(self) -> None:
        self._by_id: dict[int, tuple[object, Note]] = {}  # the node is held so that its id stays its own

    def add(self, node, before=(), after=(), blank_line: bool = False):
        """Note `node` (comment lines are written as given, each a `#` comment); returns the node."""
        for line in (*before, *after):
            if not line.startswith("#") or "\n" in line or "\r" in line:
                raise ValueError(f"not a one-line comment: {line!r}")
        old = self.get(node) or Note()
        self._by_id[id(node)] = (node, Note(old.before + tuple(before), old.after + tuple(after),
                                            old.blank_line or blank_line))
        return node

    def get(self, node) -> Note | None:
        found = self._by_id.get(id(node))
        return found[1] if found is not None and found[0] is node else None


class Printer:
    def __init__(self, comments: list[_Comment] | None = None, source_lines: list[str] | None = None,
                 notes: Notes | None = None) -> None:
        self.lines: list[str] = []
        self.comments = list(comments or [])
        self.depth = 0
        self.source_lines = source_lines or []  # to keep the author's blank lines (one at most)
        self.notes = notes or Notes()

    # ---- output helpers
    def blank_line_before(self, line: int) -> None:
        """Keep one blank line where the source had one or more before `line`, except at a block's start."""
        if not self.source_lines or line < 2 or not self.lines:
            return
        if self.lines[-1].endswith("{") or not self.lines[-1].strip():
            return
        if not self.source_lines[line - 2].strip():
            self.lines.append("")

    def emit(self, text: str, node_span=None, header: bool = False) -> None:
        if node_span is not None:
            first = self.comments[0] if self.comments and self.comments[0].start < node_span.start else None
            self.blank_line_before(first.line if first is not None else node_span.line)
            self.flush_comments_before(node_span.start)
        line = INDENT * self.depth + text
        if node_span is not None and node_span.start != node_span.end:
            # a block's header line keeps the comments of the block's first line; a statement, those after it
            if header:
                line += self.trailing(node_span.line, node_span.start)
            else:
                line += self.trailing(node_span.end_line, node_span.end)
        self.lines.append(line)

    def trailing(self, line: int, after: int) -> str:
        """The comments on `line` that start at or after offset `after`, taken out of the queue."""
        found = [c for c in self.comments if c.line == line and c.start >= after]
        for c in found:
            self.comments.remove(c)
        return "  " + " ".join(c.text for c in found) if found else ""

    def note_before(self, node) -> None:
        """A built node's blank line and leading comments (a blank line never opens a block or the file)."""
        note = self.notes.get(node)
        if note is None:
            return
        if note.blank_line and self.lines and not self.lines[-1].endswith("{") and self.lines[-1].strip():
            self.lines.append("")
        self.lines.extend(INDENT * self.depth + line.rstrip() for line in note.before)

    def note_after(self, node) -> None:
        note = self.notes.get(node)
        if note is not None:
            self.lines.extend(INDENT * self.depth + line.rstrip() for line in note.after)

    def flush_comments_before(self, offset: int) -> None:
        while self.comments and self.comments[0].start < offset:
            comment = self.comments.pop(0)
            if self.lines and self.lines[-1].lstrip().startswith("#"):
                self.blank_line_before(comment.line)
            self.lines.append(INDENT * self.depth + comment.text)

    def open_block(self, header: str, node_span) -> None:
        self.emit(header + " {", node_span, header=True)
        self.depth += 1

    def close_block(self, end_offset: int | None, node_span=None) -> None:
        if end_offset is not None:
            self.flush_comments_before(end_offset)
        self.depth -= 1
        line = INDENT * self.depth + "}"
        if node_span is not None and node_span.start != node_span.end:
            line += self.trailing(node_span.end_line, node_span.end)  # `}  # comment` stays after the brace
        self.lines.append(line)

    def text(self) -> str:
        self.flush_comments_before(1 << 62)
        return "\n".join(self.lines) + "\n"

    # ---- documents
    def document(self, doc: ast.Document) -> str:
        if isinstance(doc, ast.FaultLibrary):
            for index, kind in enumerate(doc.kinds):
                if index and self.lines and self.lines[-1].strip():
                    self.lines.append("")
                self.fault_kind(kind)
            return self.text()
        keyword = "scenario" if isinstance(doc, ast.Scenario) else "app"
        self.note_before(doc)
        self.open_block(f"{keyword} {quote(doc.name)}", doc.span)
        self.statements(doc.statements)
        self.close_block(_end(doc.span), doc.span)
        self.note_after(doc)
        return self.text()

    def fault_kind(self, kind: ast.FaultKindDecl) -> None:
        """`fault_kind "name" { ... }`: entries, patches and preconditions in source order (docs/fault-kinds.md)."""
        self.note_before(kind)
        self.open_block(f"fault_kind {quote(kind.name)}", kind.span)
        for stmt in kind.statements:
            if isinstance(stmt, ast.Patch):
                self.note_before(stmt)
                self.body_block(f"patch {field_path(stmt.path)} = {self.value(stmt.value)}", stmt.entries, stmt.span)
                self.note_after(stmt)
            elif isinstance(stmt, ast.Require):
                self.note_before(stmt)
                subject = field_path(stmt.subject) if isinstance(stmt.subject, tuple) else flat(stmt.subject)
                test = stmt.op if stmt.value is None else f"{stmt.op} {self.value(stmt.value)}"
                self.body_block(f"require {subject} {test}", stmt.entries, stmt.span)
                self.note_after(stmt)
            else:
                self.entries([stmt])
        self.close_block(_end(kind.span), kind.span)
        self.note_after(kind)

    def statements(self, statements) -> None:
        for stmt in statements:
            self.note_before(stmt)
            getattr(self, "p_" + type(stmt).__name__)(stmt)
            self.note_after(stmt)

    def p_Domain(self, s):
        self.emit(f"domain {s.name}", s.span)

    def p_Complexity(self, s):
        self.emit(f"complexity {s.name}", s.span)

    def p_Description(self, s):
        self.emit(f"description {quote(s.text)}", s.span)

    def p_Tags(self, s):
        self.emit(f"tags {self.value(s.value)}", s.span)

    def p_Metadata(self, s):
        self.body_block("metadata", s.entries, s.span)

    def p_UseApp(self, s):
        self.body_block(f"use app {quote(s.name)}", s.entries, s.span)

    def p_UseFaults(self, s):
        self.emit(f"use faults {quote(s.path)}", s.span)

    def p_Probe(self, s):
        self.body_block(f"probe {quote(s.name)} on {ref(s.target)}", s.entries, s.span)

    def p_Agent(self, s):
        self.body_block("agent", s.entries, s.span)

    def p_Control(self, s):
        self.body_block(f"control {quote(s.id)}", s.entries, s.span)

    def p_Task(self, s):
        self.body_block(f"task {s.kind}", s.entries, s.span)

    def p_Tasks(self, s):
        items = ", ".join(i.name + (f" within {i.within.text}" if i.within is not None else "") for i in s.items)
        self.emit(f"tasks {items}", s.span)

    def p_Gap(self, s):
        self.emit(f"gap {ref(s.target)}", s.span)

    def p_Compliant(self, s):
        self.emit(f"compliant {ref(s.target)}", s.span)

    def p_AlertRule(self, s):
        self.body_block(f"alert_rule {quote(s.name)}", s.entries, s.span)

    def p_Param(self, s):
        default = f" default {self.value(s.default)}" if s.default is not None else ""
        self.emit(f"param {s.name} in {self.value(s.domain)}{default}", s.span)

    def p_Topology(self, s):
        self.open_block(f"topology {quote(s.name)}" if s.name is not None else "topology", s.span)
        self.statements(s.statements)
        self.close_block(_end(s.span), s.span)

    def p_Object(self, s):
        self.body_block(f"{s.kind} {quote(s.name)}", s.entries, s.span)

    def p_Edge(self, s):
        self.emit(" -> ".join(quote(n) for n in s.names), s.span)

    def p_Fault(self, s):
        self.body_block(f"fault {s.kind} on {ref(s.target)}", s.entries, s.span)

    def p_Wait(self, s):
        self.body_block(f"wait {s.when} {s.kind} on {ref(s.target)}", s.entries, s.span)

    def p_Group(self, s):
        header = "group" if s.name is None else f"group {quote(s.name)}"
        self.open_block(header, s.span)
        self.statements(s.items)
        self.close_block(_end(s.span), s.span)

    def p_Expect(self, s):
        self.open_block("expect", s.span)
        self.statements(s.statements)
        self.close_block(_end(s.span), s.span)

    def p_Alert(self, s):
        self.body_block(f"alert {s.name} on {ref(s.target)}", s.entries, s.span)

    def p_RootCause(self, s):
        self.emit(f"root_cause {' or '.join(ref(r) for r in (s.target, *s.alternatives))}", s.span)

    def p_Propagation(self, s):
        self.body_block("propagation " + " -> ".join(ref(r) for r in s.chain), s.entries, s.span)

    def p_GroundGroup(self, s):
        self.body_block(f"group {quote(s.id)} {ref(s.target)}", s.entries, s.span)

    def p_Alias(self, s):
        self.emit("alias " + ", ".join(ref(r) for r in s.members), s.span)

    def p_Cause(self, s):
        self.body_block("cause", s.entries, s.span)

    def p_Analysis(self, s):
        self.body_block("analysis", s.entries, s.span)

    def p_Mitigated(self, s):
        within = f" within {s.within.text}" if s.within is not None else ""
        self.open_block(f"mitigated when{' only' if s.only else ''}{within}", s.span)
        self.statements(s.predicates)
        self.close_block(_end(s.span), s.span)

    def p_StatePredicate(self, s):
        within = f" within {s.within.text}" if s.within is not None else ""
        self.emit(f"{ref(s.target)} {s.state}{within}", s.span)

    def p_FieldPredicate(self, s):
        test = s.op if s.value is None else f"{s.op} {self.value(s.value)}"
        self.emit(f"{ref(s.target)} {field_path(s.path)} {test}", s.span)

    def p_ScopePredicate(self, s):
        selector = f" {flat(s.selector)}" if s.selector is not None else ""
        namespace = f" in {ref(s.namespace)}" if s.namespace is not None else ""
        within = f" within {s.within.text}" if s.within is not None else ""
        self.emit(f"all {s.what}{selector}{namespace} ready{within}", s.span)

    def p_ProbePredicate(self, s):
        test = s.op if s.value is None else f"{s.op} {self.value(s.value)}"
        self.emit(f"probe {quote(s.name)} {s.field} {test}", s.span)

    def p_AccessPredicate(self, s):
        namespace = f" in {ref(s.namespace)}" if s.namespace is not None else ""
        self.emit(f"{'can' if s.allowed else 'cannot'} {ref(s.subject)} {quote(s.verb)} {quote(s.resource)}{namespace}",
                  s.span)

    def p_AlertPredicate(self, s):
        self.emit(f"alert {s.name} {'firing' if s.firing else 'not firing'}", s.span)

    def p_Optimal(self, s):
        self.emit(f"optimal {ref(s.target)} {'.'.join(s.path)} = {self.value(s.value)}", s.span)

    def p_Solution(self, s):
        self.open_block(f"solution {quote(s.title)}", s.span)
        if s.id is not None:
            self.emit(f"id = {quote(s.id)}", s.id_span)
        for step in s.steps:
            run = f" run {quote(step.run)}" if step.run is not None else ""
            self.note_before(step)
            self.emit(f"step {quote(step.text)}{run}", step.span)
            self.note_after(step)
        self.close_block(_end(s.span), s.span)

    # ---- bodies and values
    def body_block(self, header: str, entries, span) -> None:
        if entries is None:
            self.emit(header, span)
            return
        if not entries:
            self.emit(header + " {}", span)
            return
        self.open_block(header, span)
        self.entries(entries)
        self.close_block(_end(span), span)

    def entries(self, entries) -> None:
        for entry in entries:
            head = key_text(entry.key) + "".join(" " + quote(label) for label in entry.labels)
            self.note_before(entry)
            if isinstance(entry, ast.Attr):
                self.emit(f"{head} = {self.value(entry.value)}", entry.span)
            else:
                self.body_block(head, entry.entries, entry.span)
            self.note_after(entry)

    @staticmethod
    def scalar(v: ast.Value) -> str:
        if isinstance(v, ast.Str):
            return quote(v.value)
        if isinstance(v, ast.Int):
            return str(v.value)
        if isinstance(v, (ast.Float, ast.Quantity)):
            return v.text
        if isinstance(v, ast.Percent):
            return v.text + "%"
        if isinstance(v, ast.Symbol):
            return v.name
        raise TypeError(f"not a value: {v!r}")

    def value(self, v: ast.Value) -> str:
        if isinstance(v, (ast.Str, ast.Int, ast.Float, ast.Quantity, ast.Percent, ast.Symbol)):
            return self.scalar(v)
        if isinstance(v, ast.Call):
            return f"{v.name}({', '.join(self.value(a) for a in v.args)})"
        if isinstance(v, ast.ListValue):
            # decided on the one-line form, computed once: rendering the items twice at every level (inline,
            # then broken) made deep lists cost 2^depth
            inline = flat(v)
            if len(inline) + len(INDENT) * self.depth <= INLINE_LIMIT or not v.items:
                return inline
            self.depth += 1
            inner = ",\n".join(INDENT * self.depth + self.value(i) for i in v.items)
            self.depth -= 1
            return "[\n" + inner + ",\n" + INDENT * self.depth + "]"
        if isinstance(v, ast.MapValue):
            if not v.pairs:
                return "{}"
            return "{ " + ", ".join(f"{key_text(p.key)} = {self.value(p.value)}" for p in v.pairs) + " }"
        raise TypeError(f"not a value: {v!r}")


def flat(v: ast.Value) -> str:
    """A value on one line, whatever its length (what `Printer.value` writes for a value that fits)."""
    if isinstance(v, ast.ListValue):
        return "[" + ", ".join(flat(i) for i in v.items) + "]"
    if isinstance(v, ast.MapValue):
        if not v.pairs:
            return "{}"
        return "{ " + ", ".join(f"{key_text(p.key)} = {flat(p.value)}" for p in v.pairs) + " }"
    if isinstance(v, ast.Call):
        return f"{v.name}({', '.join(flat(a) for a in v.args)})"
    return Printer.scalar(v)


def field_path(path) -> str:
    """A field predicate's path: `spec.ports[name="http"].targetPort`, `data["a.json"] as json .flags`."""
    out = []
    for step in path:
        if isinstance(step, str):
            if _IDENT.match(step):
                out.append(("." if out else "") + step)
            else:
                out.append(f"[{quote(step)}]")
        elif isinstance(step, ast.Index):
            out.append(f"[{step.value}]")
        elif isinstance(step, ast.Select):
            out.append(f"[{step.key}={flat(step.value)}]")
        else:
            out.append(f" as {step.form} ")
    return "".join(out).strip()


def ref(r: ast.Ref) -> str:
    return f"{r.kind} {quote(r.name)}"


def _end(span) -> int | None:
    return span.end if span.end > span.start else None


def print_document(doc: ast.Document, source_text: str | None = None, notes: Notes | None = None) -> str:
    """Canonical text of a document; pass the source text to keep its comments, or, for a tree built in
    code, the notes that give its comments and blank lines."""
    comments = extract_comments(source_text) if source_text else []
    return Printer(comments, source_text.split("\n") if source_text else None, notes).document(doc)
