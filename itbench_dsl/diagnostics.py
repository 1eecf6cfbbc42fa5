"""The one diagnostic model every stage reports through, and its renderers.

Stages never raise at a user: they append `Diagnostic`s to a `Diagnostics` collector and
carry on, so one run reports every error it can find. Rendering (human, concise, json,
github workflow commands, SARIF 2.1.0) is separate from collection so that every format shows
the same facts.
"""

from __future__ import annotations

import json
import re
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
    lines = [f"{_paint(f'{d.severity}[{d.code}]', sev_color, color)}: {escape_controls(d.message)}"]
    lines.append(f" --> {escape_controls(d.path)}:{d.span.line}:{d.span.column}")
    if source is not None and source.text and d.span is not NO_SPAN:
        text = _printable(source.line_text(d.span.line))
        gutter = " " * len(str(d.span.line))
        width = max(1, (d.span.end_column - d.span.column) if d.span.end_line == d.span.line else len(text) - d.span.column + 1)
        width = min(width, max(1, len(text) - d.span.column + 1))
        lines.append(f"{gutter} |")
        lines.append(f"{d.span.line} | {text}")
        caret = " " * (d.span.column - 1) + "^" * width
        label = f" {escape_controls(d.label)}" if d.label else ""
        lines.append(f"{gutter} | {_paint(caret, sev_color, color)}{label}")
        lines.append(f"{gutter} |")
    for note in d.notes:
        where = f" (at {note.span.line}:{note.span.column})" if note.span else ""
        lines.append(f"note: {escape_controls(note.message)}{where}")
    if d.help:
        lines.append(f"help: {escape_controls(d.help)}")
    return "\n".join(lines) + "\n"


def _printable(text: str) -> str:
    """Show a source line safely on a terminal, one character for one (the carets stay aligned): tabs
    become spaces, the characters `escape_controls` escapes become �."""
    text = text[:400].replace("\t", " ")
    return CONTROL.sub("\ufffd", text)


# Characters a terminal acts on: C0 controls but tab and newline (ANSI escapes, carriage returns, bells), DEL,
# C1 controls, bidirectional overrides and isolates; and lone surrogates (undecodable bytes of file names),
# which cannot be printed at all.
CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


def escape_controls(text: str) -> str:
    """`text` safe to print on a terminal: each character of CONTROL written as `\\uXXXX`, a JSON escape,
    so that JSON text stays JSON with the same data. Every renderer's output goes through it, and so does
    every path and message the command line prints."""
    return CONTROL.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def render_concise(diags: Diagnostics) -> str:
    return escape_controls("".join(
        f"{d.path}:{d.span.line}:{d.span.column}: {d.severity}[{d.code}] {d.message}\n" for d in diags.sorted()
    ))


def render_json(diags: Diagnostics) -> str:
    items = [d.to_json() for d in diags.sorted()]
    summary = {
        "errors": sum(1 for d in items if d["severity"] == "error"),
        "warnings": sum(1 for d in items if d["severity"] == "warning"),
    }
    return escape_controls(json.dumps({"diagnostics": items, "summary": summary}, indent=2, ensure_ascii=False)) + "\n"


# ---- GitHub Actions workflow commands ----------------------------------------------------------------

# GitHub shows at most this many error and this many warning annotations per step (and 50 per job);
# every diagnostic is still printed, and a notice says how many there are when some are not shown.
GITHUB_ANNOTATIONS_PER_STEP = 10


def github_data(text: str) -> str:
    """Escape the message of a workflow command (after the `::`)."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def github_property(text: str) -> str:
    """Escape a property value of a workflow command (`file=...,title=...`)."""
    return github_data(text).replace(":", "%3A").replace(",", "%2C")


def render_github(diags: Diagnostics) -> str:
    """One `::error` or `::warning` workflow command per diagnostic, the help and notes on their own
    (escaped) lines of the message; a notice when there are more than GitHub shows per step."""
    out = []
    counts = {"error": 0, "warning": 0}
    for d in diags.sorted():
        counts[d.severity] += 1
        props = [f"file={github_property(d.path)}"]
        if d.span != NO_SPAN:
            s = d.span
            props += [f"line={s.line}", f"col={s.column}", f"endLine={s.end_line}", f"endColumn={s.end_column}"]
        else:
            props.append("line=1")
        props.append(f"title={github_property(d.code)}")
        message = "\n".join([d.message, *(f"note: {n.message}" for n in d.notes), *([f"help: {d.help}"] if d.help else [])])
        out.append(f"::{d.severity} {','.join(props)}::{github_data(message)}\n")
    hidden = {k: v - GITHUB_ANNOTATIONS_PER_STEP for k, v in counts.items() if v > GITHUB_ANNOTATIONS_PER_STEP}
    if hidden:
        found = " and ".join(f"{counts[k]} {k}s" for k in ("error", "warning") if counts[k])
        not_shown = " and ".join(f"{v} {k}{'s' * (v != 1)}" for k, v in hidden.items())
        summary = (f"{found} found; GitHub shows {GITHUB_ANNOTATIONS_PER_STEP} of each kind per step as annotations; "
                   f"not annotated: {not_shown} (this log and a SARIF upload have every finding)")
        out.append(f"::notice title={github_property('itbench check')}::{github_data(summary)}\n")
    return escape_controls("".join(out))


# ---- SARIF 2.1.0 -------------------------------------------------------------------------------------

SARIF_SCHEMA = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
# Where the tool and its diagnostic pages are published (the domain of the IR schema's $id, ir.SCHEMA_ID).
PROJECT_URI = "https://itbench.dev/"
DIAGNOSTICS_URI = PROJECT_URI + "docs/diagnostics.md"


def code_anchor(code: str) -> str:
    """The anchor of a code's section in docs/diagnostics.md (`### E2003: unknown name`)."""
    import re

    title = CODES[code].title if code in CODES else ""
    return f"{code.lower()}-" + re.sub(r"[^a-z0-9 -]", "", title.lower()).replace(" ", "-")


def _rule_name(title: str) -> str:
    return "".join(word[:1].upper() + word[1:] for word in title.replace("-", " ").split() if word.isalnum())


def render_sarif(diags: Diagnostics) -> str:
    """One SARIF 2.1.0 run: the tool with a rule per code used (its `itbench explain` page as help)
    and a result per diagnostic. Columns are Unicode code points, as the spans count them."""
    from urllib.parse import quote

    from .version import __version__
    from .codes import explain

    items = diags.sorted()
    codes = sorted({d.code for d in items})
    index = {code: i for i, code in enumerate(codes)}
    rules = []
    for code in codes:
        entry = CODES[code]
        page = explain(code) or ""
        first_paragraph = " ".join(entry.page.split("\n\n", 1)[0].split())
        rules.append({
            "id": code,
            "name": _rule_name(entry.title),
            "shortDescription": {"text": entry.title},
            "fullDescription": {"text": first_paragraph or entry.title},
            "help": {"text": page, "markdown": page},
            "helpUri": f"{DIAGNOSTICS_URI}#{code_anchor(code)}",
            "defaultConfiguration": {"level": entry.severity},
        })
    results = []
    for d in items:
        text = "\n".join([d.message, *(f"note: {n.message}" for n in d.notes), *([f"help: {d.help}"] if d.help else [])])
        location: dict = {"artifactLocation": {"uri": quote(d.path.replace("\\", "/"), safe="/._-~"),
                                               "uriBaseId": "%SRCROOT%"}}
        if d.span != NO_SPAN:
            s = d.span
            location["region"] = {"startLine": s.line, "startColumn": s.column, "endLine": s.end_line,
                                  "endColumn": s.end_column}
        result = {"ruleId": d.code, "ruleIndex": index[d.code], "level": d.severity, "message": {"text": text},
                  "locations": [{"physicalLocation": location}]}
        results.append(result)
    log = {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {"name": "itbench", "version": __version__, "semanticVersion": __version__,
                                "informationUri": PROJECT_URI, "rules": rules}},
            "columnKind": "unicodeCodePoints",
            "results": results,
        }],
    }
    return escape_controls(json.dumps(log, indent=2, ensure_ascii=False)) + "\n"


RENDERERS = {"human": render_human, "concise": render_concise, "json": render_json, "github": render_github,
             "sarif": render_sarif}


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
