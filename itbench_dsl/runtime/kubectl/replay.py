"""Replaying one shell line on a scenario's objects: the entry point (`replay`).
"""

from __future__ import annotations

from .state import APPLIED, _Context, Key, _one_line, Outcome, _Stop, _Store, UNSUPPORTED
from .shell import _run_line


def replay(objects: dict[Key, dict], command: str, *, namespace: str | None = None,
           files: dict[str, bytes] | None = None, history: dict[Key, list[dict]] | None = None,
           execs: list[dict] | None = None) -> Outcome:
    """Replays one shell command line on `objects`, changing them in place only if it applies.

    `namespace` is the namespace a command works in when it names none (kubectl's context
    namespace); `files` the compiled bundle's files by relative path, for `-f FILE`; `history`
    the earlier pod templates of workloads, oldest first, for `rollout undo`; `execs` the
    commands run in pods whose effect is known (a fault's revert command, as `revert/exec.json`
    lists it: namespace, workload, container, command): a `kubectl exec` running one of them in
    its workload applies, and `Outcome.execs` says which. Any other `kubectl exec` is unsupported.
    """
    store = _Store(objects)
    ctx = _Context(store, namespace or "default", files or {}, history or {}, list(execs or ()))
    try:
        outcome = _run_line(ctx, command)
    except _Stop as stop:
        outcome = stop.outcome
    except Exception as exc:  # noqa: BLE001 - a replay answers; it never crashes the check that runs it
        return Outcome(UNSUPPORTED, _one_line(
            f"internal error while replaying {command!r}: {type(exc).__name__}: {exc}"))
    if outcome.status == APPLIED:
        store.commit()
        outcome.execs = tuple(dict.fromkeys(ctx.ran))
    return outcome
