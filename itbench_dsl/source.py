"""Source files and spans: where every AST node and diagnostic points to."""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field


@dataclass(frozen=True, order=True)
class Span:
    """A half-open character range [start, end) with 1-based line/column of both ends.

    Columns count Unicode code points, which is what editors and SARIF expect.
    """

    start: int
    end: int
    line: int
    column: int
    end_line: int
    end_column: int

    def to_json(self) -> dict:
        return {"line": self.line, "column": self.column, "end_line": self.end_line, "end_column": self.end_column}


NO_SPAN = Span(0, 0, 1, 1, 1, 1)


@dataclass
class SourceFile:
    """The text of one file and the line index needed to turn offsets into positions."""

    path: str
    text: str
    _line_starts: list[int] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        starts = [0]
        find = self.text.find
        i = find("\n")
        while i != -1:
            starts.append(i + 1)
            i = find("\n", i + 1)
        self._line_starts = starts

    def position(self, offset: int) -> tuple[int, int]:
        """1-based (line, column) of a character offset."""
        offset = max(0, min(offset, len(self.text)))
        line_index = bisect.bisect_right(self._line_starts, offset) - 1
        return line_index + 1, offset - self._line_starts[line_index] + 1

    def span(self, start: int, end: int) -> Span:
        line, column = self.position(start)
        end_line, end_column = self.position(end)
        return Span(start, end, line, column, end_line, end_column)

    def line_text(self, line: int) -> str:
        if line < 1 or line > len(self._line_starts):
            return ""
        start = self._line_starts[line - 1]
        end = self._line_starts[line] - 1 if line < len(self._line_starts) else len(self.text)
        return self.text[start:end].rstrip("\r")

    @property
    def line_count(self) -> int:
        return len(self._line_starts)


ObjectKey = tuple[str, "str | None", str]  # (Kubernetes kind, namespace or None, name)


@dataclass
class SourceMap:
    """Where the parts of a checked scenario come from, kept with the compile result so that later
    stages (output validation, lint, self-validation, the language server, generators) locate what
    they find without parsing the file again or searching its text.

    `objects` maps each emitted object to the statement that produces it, in the file that holds
    that statement (an imported application's objects point into the application's file);
    `injections` holds the fault statement of each injection, in `ir.Scenario.injections()` order;
    `steps` the span of each solution step, by (solution index, step index)."""

    path: str
    scenario: Span = NO_SPAN  # the scenario's quoted name
    objects: dict[ObjectKey, tuple[str, Span]] = field(default_factory=dict)
    injections: list[Span] = field(default_factory=list)
    agent: Span | None = None
    steps: dict[tuple[int, int], Span] = field(default_factory=dict)
    predicates: list[Span] = field(default_factory=list)  # each `mitigated when` predicate (a field's: its path)

    def object(self, key: ObjectKey) -> tuple[str, Span] | None:
        return self.objects.get(key)

    def injection(self, index: int) -> Span:
        return self.injections[index] if 0 <= index < len(self.injections) else self.scenario
