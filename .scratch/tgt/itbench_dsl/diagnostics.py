"""The one diagnostic model every stage reports through, and its renderers.

Stages never raise at a user: they append `Diagnostic`s to a `Diagnostics` collector and
carry on, so one run reports every error it can find. Rendering (human, concise, json)
is separate from collection so that every format shows the same facts.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Iterable

from .codes import CODES, severity_of
from .source import NO_SPAN, SourceFile, Span


@dataclass(frozen=True)
class Note:
    """A secondary location or remark attached to a diagnostic."""

    message: str
    span: Span | None = None


@dataclass(frozen=True)
class Diagnostic:
    code: str
    message: str
    path: str
    span: Span = NO_SPAN
    label: str = ""  # the text under the carets
    help: str = ""
    notes: tuple[Note, ...] = ()

    @property
    def severity(self) -> str:
        return severity_of(self.code)

    def sort_key(self) -> tuple:
        return (self.path, self.span.start, self.code, self.message)

    def to_json(self) -> dict:
        out = {
            "code": self.code,
            "severity": self.severity,
            "message": self.message,
            "path": self.path,
            **self.span.to_json(),
        }
        if self.label:
            out["label"] = self.label
        if self.help:
            out["help"] = self.help
        if self.notes:
            out["notes"] = [n.message for n in self.notes]
        return out


@dataclass
class Diagnostics:
    """Collects diagnostics for one or more files; `sources` lets renderers show the code."""

    items: list[Diagnostic] = field(default_factory=list)
    sources: dict[str, SourceFile] = field(default_factory=dict)

    def add(self, diagnostic: Diagnostic) -> None:
        if diagnostic.code not in CODES:  # a programming error, caught by the code-registry test
            raise KeyError(f"unregistered diagnostic code {diagnostic.code}")
        self.items.append(diagnostic)

    def error(self, code: str, message: str, path: str, span: Span = NO_SPAN, label: str = "", help: str = "") -> None:
        self.add(Diagnostic(code, message, path, span, label, help))

    def extend(self, other: Iterable[Diagnostic]) -> None:
        for d in other:
            self.add(d)

    @property
    def has_errors(self) -> bool:
        return any(d.severity == "error" for d in self.items)

    def errors(self) -> list[Diagnostic]:
        return [d for d in self.items if d.severity == "error"]

    def sorted(self) -> list[Diagnostic]:
        # De-duplicate: two stages may find the same fact at the same place.
        unique = {(d.code, d.path, d.span, d.message): d for d in self.items}
        return sorted(unique.values(), key=Diagnostic.sort_key)


# ---- renderers -----------------------------------------------------------------


def render_human(diags: Diagnostics, color: bool = False) -> str:
    out: list[str] = []
    for d in diags.sorted():
        out.append(_render_one(d, diags.sources.get(d.path), color))
    return "\n".join(out)


def _paint(text: str, code: str, color: bool) -> str:
    return f"\x1b[{code}m{text}\x1b[0m" if color else text


def _render_one(d: Diagnostic, source: SourceFile | None, color: bool) -> str:
    sev_color = "1;31" if d.severity == "error" else "1;33"
    lines = [f"{_paint(f'{d.severity}[{d.code}]', sev_color, color)}: {d.message}"]
    lines.append(f" --> {d.path}:{d.span.line}:{d.span.column}")
    if source is not None and source.text and d.span is not NO_SPAN:
        text = _printable(source.line_text(d.span.line))
        gutter = " " * len(str(d.span.line))
        width = max(1, (d.span.end_column - d.span.column) if d.span.end_line == d.span.line else len(text) - d.span.column + 1)
        width = min(width, max(1, len(text) - d.span.column + 1))
        lines.append(f"{gutter} |")
        lines.append(f"{d.span.line} | {text}")
        caret = " " * (d.span.column - 1) + "^" * width
        label = f" {d.label}" if d.label else ""
        lines.append(f"{gutter} | {_paint(caret, sev_color, color)}{label}")
        lines.append(f"{gutter} |")
    for note in d.notes:
        where = f" (at {note.span.line}:{note.span.column})" if note.span else ""
        lines.append(f"note: {note.message}{where}")
    if d.help:
        lines.append(f"help: {d.help}")
    return "\n".join(lines) + "\n"


def _printable(text: str) -> str:
    """Show a source line safely on a terminal: tabs become spaces, controls become �."""
    text = text[:400]
    return "".join(" " if c == "\t" else ("\ufffd" if (ord(c) < 32 or ord(c) == 127) else c) for c in text)


def render_concise(diags: Diagnostics) -> str:
    return "".join(
        f"{d.path}:{d.span.line}:{d.span.column}: {d.severity}[{d.code}] {d.message}\n" for d in diags.sorted()
    )


def render_json(diags: Diagnostics) -> str:
    items = [d.to_json() for d in diags.sorted()]
    summary = {
        "errors": sum(1 for d in items if d["severity"] == "error"),
        "warnings": sum(1 for d in items if d["severity"] == "warning"),
    }
    return json.dumps({"diagnostics": items, "summary": summary}, indent=2, ensure_ascii=False) + "\n"


RENDERERS = {"human": render_human, "concise": render_concise, "json": render_json}


def did_you_mean(name: str, candidates: Iterable[str]) -> str | None:
    """The closest candidate by edit distance, if it is close enough to be a likely typo."""
    best, best_distance = None, None
    for candidate in sorted(set(candidates)):
        distance = _edit_distance(name.lower(), candidate.lower())
        if best_distance is None or distance < best_distance:
            best, best_distance = candidate, distance
    if best is None or best_distance is None:
        return None
    limit = max(1, min(3, len(name) // 3 + 1))
    return best if best_distance <= limit else None


def _edit_distance(a: str, b: str) -> int:
    if abs(len(a) - len(b)) > 3:
        return 99
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        current = [i]
        for j, cb in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb)))
        previous = current
    return previous[-1]
