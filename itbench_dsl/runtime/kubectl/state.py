"""What a replay answers and works on: the outcomes, the objects it changes (kept aside until the whole
line applies) and the context a command runs in.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass


Key = tuple[str, str | None, str]


APPLIED, READ_ONLY, REFUSED, UNSUPPORTED = "applied", "read-only", "refused", "unsupported"


#: The time `kubectl rollout restart` writes into the pod template. kubectl writes the current
#: time; a fixed one keeps a replay deterministic.
RESTARTED_AT = "2026-01-01T00:00:00Z"


RESTARTED_AT_ANNOTATION = "kubectl.kubernetes.io/restartedAt"


LAST_APPLIED_ANNOTATION = "kubectl.kubernetes.io/last-applied-configuration"


@dataclass
class Outcome:
    status: str  # "applied" | "read-only" | "unsupported" | "refused"
    message: str  # one line: what was done, or why not
    execs: tuple[int, ...] = ()  # the indexes of the known `execs` the line ran (when it applied)


class _Stop(Exception):
    """Ends a command early with its outcome: a refusal, or something that cannot be replayed."""

    def __init__(self, status: str, message: str) -> None:
        super().__init__(message)
        self.outcome = Outcome(status, _one_line(message))


def _refused(message: str) -> _Stop:
    return _Stop(REFUSED, message)


def _unsupported(message: str) -> _Stop:
    return _Stop(UNSUPPORTED, message)


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


class _Store:
    """The objects as the commands see them.

    Reads fall through to the caller's dict; writes are kept aside and reach it only through
    `commit`, once the whole line is known to apply. Stored objects are never edited in place:
    a change is always a new dict, so the caller's objects are untouched until then.
    """

    def __init__(self, base: dict[Key, dict]) -> None:
        self.base = base
        self.changes: dict[Key, dict | None] = {}  # None: deleted

    def get(self, key: Key) -> dict | None:
        if key in self.changes:
            return self.changes[key]
        return self.base.get(key)

    def put(self, key: Key, obj: dict) -> None:
        self.changes[key] = obj

    def delete(self, key: Key) -> None:
        self.changes[key] = None

    def keys(self) -> list[Key]:
        keys = [k for k in self.base if self.changes.get(k, self.base[k]) is not None]
        keys += [k for k, v in self.changes.items() if k not in self.base and v is not None]
        return keys

    def commit(self) -> None:
        for key, obj in self.changes.items():
            if obj is None:
                self.base.pop(key, None)
            else:
                self.base[key] = obj


@dataclass
class _Context:
    store: _Store
    namespace: str
    files: dict[str, bytes]
    history: dict[Key, list[dict]]
    execs: list[dict] = dataclasses.field(default_factory=list)
    ran: list[int] = dataclasses.field(default_factory=list)
