"""Patterns, as Kyverno's pkg/engine/validate matches them: anchors, value operators, arrays.

`match_pattern(resource, pattern)` gives (pass | fail | skip, message): a conditional or global anchor
that does not hold skips, any other mismatch fails. `validate_value` is one scalar pattern (with its
operators `>=`, `!`, `|`, `&`, ranges, wildcards) against one resource value.
"""

import functools
import re
from typing import Any

from .outcomes import FAIL, PASS, SKIP
from .values import _RANGE, _has_wildcard, _to_go_string, parse_duration, parse_quantity, wildcard_match


class _PatternFail(Exception):
    """A mismatch. `kind` is plain, conditional, global or negation; the first two skip."""

    def __init__(self, path: str, msg: str, kind: str = "plain") -> None:
        super().__init__(f"{msg} at {path}")
        self.path, self.kind = path, kind

    @property
    def skip(self) -> bool:
        return self.kind in ("conditional", "global")


_ANCHOR = re.compile(r"^(\(|=\(|\^\(|X\(|<\(|\+\()(.*)\)$")


@functools.lru_cache(maxsize=4096)
def _anchor(key: str) -> tuple[str, str]:
    """(anchor kind, bare key); kind '' for a plain key."""
    m = _ANCHOR.match(key)
    if not m:
        return "", key
    return {"(": "conditional", "=(": "equality", "^(": "existence", "X(": "negation",
            "<(": "global", "+(": "add"}[m.group(1)], m.group(2)


_NESTED_MEMO: dict[int, tuple[Any, bool]] = {}


def _has_nested_anchor(value: Any) -> bool:
    # Patterns are long-lived (cached rules), so memoise by identity, checking the object.
    hit = _NESTED_MEMO.get(id(value))
    if hit is not None and hit[0] is value:
        return hit[1]
    result = _nested_anchor(value)
    if isinstance(value, (dict, list)):
        if len(_NESTED_MEMO) > 20000:
            _NESTED_MEMO.clear()
        _NESTED_MEMO[id(value)] = (value, result)
    return result


def _nested_anchor(value: Any) -> bool:
    if isinstance(value, dict):
        return any(_anchor(k)[0] or _has_nested_anchor(v) for k, v in value.items())
    if isinstance(value, list):
        return any(_has_nested_anchor(v) for v in value)
    return False


def match_pattern(resource: Any, pattern: Any) -> tuple[str, str]:
    """Match a resource against a pattern: (pass|fail|skip, message)."""
    try:
        _element(resource, pattern, "/")
    except _PatternFail as exc:
        return (SKIP if exc.skip else FAIL), str(exc)
    return PASS, ""


def _element(res: Any, pat: Any, path: str) -> None:
    if isinstance(pat, dict):
        if not isinstance(res, dict):
            raise _PatternFail(path, "expected an object")
        _map(res, pat, path)
    elif isinstance(pat, list):
        if not isinstance(res, list):
            raise _PatternFail(path, "expected a list")
        _array(res, pat, path)
    elif pat is None or isinstance(pat, (str, int, float, bool)):
        if isinstance(res, list):
            for item in res:
                if not validate_value(item, pat):
                    raise _PatternFail(path, f"value {_to_go_string(item)!r} does not match {pat!r}")
        elif not validate_value(res, pat):
            raise _PatternFail(path, f"value {_to_go_string(res)!r} does not match {pat!r}")
    else:
        raise _PatternFail(path, "pattern contains an unknown type")


def _expand_wildcard_keys(pat: dict, res: dict) -> dict:
    if not any(_has_wildcard(k) for k in pat):
        return pat
    out: dict = {}
    for key, value in pat.items():
        kind, bare = _anchor(key)
        if not _has_wildcard(bare):
            out[key] = value
            continue
        hits = [k for k in res if wildcard_match(bare, k)]
        if not hits:
            out[key] = value
        for k in hits:
            out[key.replace(bare, k) if kind else k] = value
    return out


def _map(res: dict, pat: dict, path: str) -> None:
    # Like Kyverno, wildcard keys are expanded only in metadata labels and annotations.
    if path.endswith(("/metadata/labels/", "/metadata/annotations/")):
        pat = _expand_wildcard_keys(pat, res)
    anchors, plain = [], []
    for key, value in pat.items():
        kind, bare = _anchor(key)
        if kind == "add":
            continue  # add-if-not-present is a mutate anchor; validation ignores it
        (anchors if kind in ("conditional", "global", "existence", "negation") else plain).append((kind, bare, value))
    # Conditions first (they decide skip), then negation/existence, then the rest, nested anchors first.
    order = {"conditional": 0, "global": 0, "negation": 1, "existence": 1}
    anchors.sort(key=lambda t: order[t[0]])
    if len(plain) > 1:
        plain.sort(key=lambda t: not _has_nested_anchor(t[2]))
    for kind, key, value in anchors + plain:
        sub = f"{path}{key}/"
        if kind in ("conditional", "global"):
            if key not in res:
                if kind == "global":
                    # a global anchor whose key is absent holds: validation goes on (Kyverno's
                    # globalAnchorHandler); only a conditional anchor skips then
                    continue
                raise _PatternFail(sub, "conditional anchor key doesn't exist in the resource", kind)
            try:
                _element(res[key], value, sub)
            except _PatternFail as exc:
                raise _PatternFail(exc.path, f"{kind} anchor mismatch: {exc}", kind) from None
        elif kind == "negation":
            if key in res:
                raise _PatternFail(sub, f"{key} is not allowed", "negation")
        elif kind == "existence":
            if key not in res:
                continue
            items = res[key]
            if not isinstance(items, list):
                raise _PatternFail(sub, "existence anchor ^() applies only to lists")
            if not isinstance(value, list):
                raise _PatternFail(sub, "existence anchor ^() needs a list pattern")
            for p in value:
                if not isinstance(p, dict):
                    raise _PatternFail(sub, "existence anchor ^() needs a list of objects")
                if not any(_quiet(item, p, sub) for item in items):
                    raise _PatternFail(sub, "existence anchor validation failed")
        elif kind == "equality":
            if key in res:
                _element(res[key], value, sub)
        else:
            current = res.get(key)
            if value == "*":
                if current is None:
                    raise _PatternFail(sub, "field is required")
                continue
            _element(current, value, sub)


def _quiet(res: Any, pat: Any, path: str) -> bool:
    try:
        _element(res, pat, path)
        return True
    except _PatternFail:
        return False


def _array(res: list, pat: list, path: str) -> None:
    if not pat:
        raise _PatternFail(path, "empty pattern list")
    first = pat[0]
    if isinstance(first, dict):
        applied, skipped = 0, None
        for i, item in enumerate(res):
            try:
                _element(item, first, f"{path}{i}/")
            except _PatternFail as exc:
                if exc.skip:
                    skipped = exc
                    continue
                raise
            applied += 1
        if applied == 0 and skipped is not None:
            raise skipped
        return
    if first is None or isinstance(first, (str, int, float, bool)):
        # a list of scalars: every resource element is checked against the first pattern element
        # (Kyverno's validateArray hands the whole list to validateResourceElement; the rest is unread)
        _element(res, first, path)
        return
    if len(res) < len(pat):
        raise _PatternFail(path, f"list has {len(res)} items, pattern needs {len(pat)}")
    for i, p in enumerate(pat):
        _element(res[i], p, f"{path}{i}/")


def validate_value(value: Any, pattern: Any) -> bool:
    """A scalar pattern against a resource value (pattern.Validate)."""
    if isinstance(pattern, bool):
        return isinstance(value, bool) and value == pattern
    if isinstance(pattern, int):
        if isinstance(value, bool):
            return False
        if isinstance(value, int):
            return value == pattern
        if isinstance(value, float):
            return value.is_integer() and int(value) == pattern
        if isinstance(value, str):
            try:
                return int(value, 10) == pattern
            except ValueError:
                return False
        return False
    if isinstance(pattern, float):
        if isinstance(value, bool):
            return False
        if isinstance(value, (int, float)):
            return float(value) == pattern
        if isinstance(value, str):
            try:
                return float(value) == pattern
            except ValueError:
                return False
        return False
    if pattern is None:
        if isinstance(value, bool):
            return not value
        if isinstance(value, (int, float)):
            return value == 0
        if isinstance(value, str):
            return value == ""
        return value is None
    if isinstance(pattern, dict):
        return isinstance(value, dict)
    if isinstance(pattern, str):
        if value == pattern:
            return True
        return any(
            all(_string_pattern(value, c.strip()) for c in alt.strip().split("&"))
            for alt in pattern.split("|")
        )
    return False


def _string_pattern(value: Any, pattern: str) -> bool:
    m = _RANGE.match(pattern)
    if m:
        lo, hi = m.group(1), m.group(3)
        if m.group(2):
            return _string_pattern(value, f"< {lo}") or _string_pattern(value, f"> {hi}")
        return _string_pattern(value, f">= {lo}") and _string_pattern(value, f"<= {hi}")
    op = ""
    for candidate in (">=", "<=", ">", "<", "!"):
        if len(pattern) >= 2 and pattern.startswith(candidate):
            op = candidate
            break
    operand = pattern[len(op):].strip()
    return _compare_duration(value, operand, op) or _compare_quantity(value, operand, op) or \
        _compare_string(value, operand, op)


def _ordered(a: Any, b: Any, op: str) -> bool:
    return {"": a == b, "!": a != b, ">": a > b, "<": a < b, ">=": a >= b, "<=": a <= b}[op]


def _compare_duration(value: Any, pattern: str, op: str) -> bool:
    if not isinstance(value, str):
        return False
    a, b = parse_duration(value), parse_duration(pattern)
    return a is not None and b is not None and _ordered(a, b, op)


def _compare_quantity(value: Any, pattern: str, op: str) -> bool:
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        return False
    a, b = parse_quantity(value), parse_quantity(pattern)
    return a is not None and b is not None and _ordered(a, b, op)


def _compare_string(value: Any, pattern: str, op: str) -> bool:
    if op not in ("", "!") or value is None or isinstance(value, (dict, list)):
        return False
    matched = wildcard_match(pattern, _to_go_string(value))
    return matched if op == "" else not matched
