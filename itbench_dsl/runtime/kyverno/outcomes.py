"""What evaluating a rule reports: its status, as a RuleResult, and the two errors.

A feature the matcher does not implement raises `Unsupported` naming it, so that a caller can say why
it cannot grade, never pass silently; a policy Kyverno itself would report as a rule error (a bad
variable, bad syntax) raises `KyvernoError`, which the rule's evaluation turns into an `error` result.
"""

from dataclasses import dataclass


PASS, FAIL, SKIP, ERROR, WARN = "pass", "fail", "skip", "error", "warn"


class Unsupported(Exception):
    """A Kyverno feature this matcher does not implement; the message names it."""

    def __init__(self, feature: str) -> None:
        super().__init__(f"unsupported: {feature}")
        self.feature = feature


NOT_SUPPORTED = "not supported by itbench policy-test"


class KyvernoError(Exception):
    """A policy that Kyverno itself would report as a rule error (bad variable, bad syntax)."""


class Malformed(KyvernoError):
    """Input of the wrong shape (a value of the wrong type, nesting too deep): not a rule error but
    unusable input. `where` is the path (keys and list indexes) of the value inside `document`, so
    that a caller that knows where the document came from can point at its line."""

    def __init__(self, message: str, where: tuple = (), document: object = None) -> None:
        super().__init__(message)
        self.message, self.where, self.document = message, tuple(where), document

    def __str__(self) -> str:
        return f"{_dotted(self.where)}: {self.message}" if self.where else self.message


def _dotted(where: tuple) -> str:
    """`spec.rules[0].match` for ('spec', 'rules', 0, 'match')."""
    out = ""
    for part in where:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


@dataclass(frozen=True)
class RuleResult:
    policy: str
    rule: str
    status: str  # pass | fail | skip | error | warn
    message: str = ""
    matched: bool = True  # False when the rule's match/exclude leaves the resource out
