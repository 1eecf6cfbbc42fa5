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


class KyvernoError(Exception):
    """A policy that Kyverno itself would report as a rule error (bad variable, bad syntax)."""


@dataclass(frozen=True)
class RuleResult:
    policy: str
    rule: str
    status: str  # pass | fail | skip | error | warn
    message: str = ""
    matched: bool = True  # False when the rule's match/exclude leaves the resource out
