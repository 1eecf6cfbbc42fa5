"""Variable substitution (`{{ expr }}`, innermost first) and the conditions of preconditions and deny.

`substitute` replaces the variables of a value; `evaluate_operator` is one condition's operator
(Equals, AnyIn, GreaterThan, DurationLessThan, ...) and `evaluate_conditions` a block of them (`any`,
`all`, or a list meaning `all`).
"""

import json
import re
from fractions import Fraction
from typing import Any

from .jmespath import JMESPathError, NotFound, jmespath_search
from .outcomes import KyvernoError, Unsupported
from .values import _RANGE, _to_go_string, parse_duration, parse_quantity, wildcard_match


_VARIABLE = re.compile(r"\{\{(?:\{[^{}]*\}|[^{}])*\}\}")


def _resolve(expr: str, ctx: dict) -> Any:
    expr = expr.strip()
    if expr == "@":
        raise Unsupported("{{@}} (the value at the pattern's own path)")
    try:
        return jmespath_search(expr, ctx)
    except JMESPathError as exc:
        raise KyvernoError(f"variable {{{{{expr}}}}}: {exc}") from exc
    except (TypeError, ValueError, re.error, ZeroDivisionError) as exc:
        raise KyvernoError(f"variable {{{{{expr}}}}}: {exc}") from exc


def substitute(value: Any, ctx: dict, soft: bool = False) -> Any:
    """Replace every `{{ expr }}` in strings of `value` (recursively).

    A string that is exactly one variable becomes the variable's value; otherwise values are
    printed into the string. A missing key raises KyvernoError, or gives "" when `soft`
    (Kyverno's rule for preconditions).
    """
    if isinstance(value, str):
        return _substitute_string(value, ctx, soft)
    if isinstance(value, list):
        return [substitute(v, ctx, soft) for v in value]
    if isinstance(value, dict):
        return {substitute(k, ctx, soft) if "{{" in k else k: substitute(v, ctx, soft) for k, v in value.items()}
    return value


_MAX_VARIABLES = 1000  # per string: each substitution rewrites the string, so bound their number


def _substitute_string(text: str, ctx: dict, soft: bool) -> Any:
    if "$(" in text:
        raise Unsupported("$(...) references in patterns")
    count = 0
    while "{{" in text:
        count += 1
        if count > _MAX_VARIABLES:
            raise KyvernoError(f"more than {_MAX_VARIABLES} variables in one string")
        m = _VARIABLE.search(text)
        if not m:
            return text
        inner = m.group()[2:-2]
        if inner.strip().startswith("-"):
            # `{{- ...}}` escapes a variable: Kyverno leaves it as text.
            raise Unsupported("escaped variables {{- }}")
        try:
            value = _resolve(inner, ctx)
        except NotFound as exc:
            if not soft:
                raise KyvernoError(f"variable {{{{{inner.strip()}}}}} not found: key {exc} is missing") from exc
            value = ""
        if m.start() == 0 and m.end() == len(text):
            return value
        text = text[: m.start()] + (value if isinstance(value, str) else _to_go_string(value)) + text[m.end():]
    return text


# ---------------------------------------------------------------------------------------
# Condition operators (preconditions and deny).

def _scalar_equal(key: Any, value: Any) -> bool:
    """Kyverno's Equals for a scalar key: durations, then quantities, then wildcards."""
    if isinstance(key, bool) or isinstance(value, bool):
        return isinstance(key, bool) and isinstance(value, bool) and key == value
    if isinstance(key, str):
        dk, dv = parse_duration(key), parse_duration(value)
        if dk is not None and dv is not None and not _plain_number(key):
            return dk == dv
        qk = parse_quantity(key)
        qv = parse_quantity(value) if isinstance(value, (str, int, float)) else None
        if qk is not None and qv is not None and not _plain_number(key) and isinstance(value, str):
            return qk == qv
        if isinstance(value, str):
            return wildcard_match(value, key)
        if isinstance(value, (int, float)) and qk is not None:
            return qk == Fraction(value)
        return False
    if isinstance(key, (int, float)):
        if isinstance(value, (int, float)):
            return key == value
        if isinstance(value, str):
            q = parse_quantity(value)
            return q is not None and q == Fraction(key)
        return False
    return False


def _plain_number(s: str) -> bool:
    return re.fullmatch(r"-?\d+(\.\d+)?", s.strip(), re.ASCII) is not None


def _equals(key: Any, value: Any) -> bool:
    if key is None:
        return False
    if isinstance(key, (dict, list)):
        return key == value
    return _scalar_equal(key, value)


def _in_values(key: str, values: Any, ranges: bool) -> bool | None:
    """Whether the string `key` is in `values` (wildcards both ways; with `ranges`, a value that is one
    numeric range string such as `5000-6000`: Kyverno's AnyIn/AllIn/AnyNotIn/AllNotIn read a range only
    there, never inside a list of values, and In/NotIn never)."""
    if isinstance(values, list):
        for v in values:
            sv = _to_go_string(v)
            if wildcard_match(sv, key) or wildcard_match(key, sv):
                return True
        return False
    if isinstance(values, str):
        if wildcard_match(values, key) or (ranges and _in_range(key, values)):
            return True
        try:
            arr = json.loads(values)
        except ValueError:
            return False
        return isinstance(arr, list) and key in [_to_go_string(a) for a in arr]
    return None  # invalid type


def _in_range(key: str, text: str) -> bool:
    """`key` within a numeric range value such as `5000-6000`."""
    m = _RANGE.match(text)
    if not m or m.group(2):
        return False
    k, lo, hi = parse_quantity(key), parse_quantity(m.group(1)), parse_quantity(m.group(3))
    return None not in (k, lo, hi) and lo <= k <= hi


def _set_op(key: Any, value: Any, quantifier: str, negate: bool, ranges: bool = True) -> bool:
    if isinstance(key, (str, int, float)):
        keys = [_to_go_string(key)]
    elif isinstance(key, list):
        keys = [_to_go_string(k) for k in key]
    else:
        return False
    found = [_in_values(k, value, ranges) for k in keys]
    if any(f is None for f in found):
        return False
    hits = [(not f) if negate else f for f in found]
    if quantifier == "any":
        return any(hits)
    return all(hits)


def _comparable(v: Any) -> tuple[str, Any] | None:
    if isinstance(v, bool) or v is None:
        return None
    if isinstance(v, (int, float)):
        return ("num", Fraction(v))
    if isinstance(v, str):
        d = parse_duration(v)
        if d is not None and not _plain_number(v):
            return ("dur", d)
        q = parse_quantity(v)
        if q is not None:
            return ("num", q)
        m = re.fullmatch(r"v?(\d+)\.(\d+)\.(\d+)", v.strip(), re.ASCII)
        if m:
            return ("semver", tuple(int(x) for x in m.groups()))
    return None


def _numeric(key: Any, value: Any, op: str) -> bool:
    a, b = _comparable(key), _comparable(value)
    if a is None or b is None:
        return False
    if a[0] != b[0]:
        # a bare number against a duration compares seconds
        if {a[0], b[0]} == {"num", "dur"}:
            a, b = ("x", a[1]), ("x", b[1])
        else:
            return False
    x, y = a[1], b[1]
    return {">": x > y, ">=": x >= y, "<": x < y, "<=": x <= y}[op]


def _duration_op(key: Any, value: Any, op: str) -> bool:
    def secs(v: Any) -> Fraction | None:
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            return Fraction(v)
        return parse_duration(v)
    a, b = secs(key), secs(value)
    if a is None or b is None:
        return False
    return {">": a > b, ">=": a >= b, "<": a < b, "<=": a <= b}[op]


def evaluate_operator(op: str, key: Any, value: Any) -> bool:
    if op in ("Equals", "Equal"):
        return _equals(key, value)
    if op in ("NotEquals", "NotEqual"):
        return key is not None and not _equals(key, value)
    if op == "AnyIn":
        return _set_op(key, value, "any", False)
    if op in ("AllIn", "In"):
        return _set_op(key, value, "all", False, ranges=op == "AllIn")
    if op == "AnyNotIn":
        return _set_op(key, value, "any", True)
    if op in ("AllNotIn", "NotIn"):
        return _set_op(key, value, "all", True, ranges=op == "AllNotIn")
    numeric = {"GreaterThan": ">", "GreaterThanOrEquals": ">=", "LessThan": "<", "LessThanOrEquals": "<="}
    if op in numeric:
        return _numeric(key, value, numeric[op])
    durations = {"DurationGreaterThan": ">", "DurationGreaterThanOrEquals": ">=",
                 "DurationLessThan": "<", "DurationLessThanOrEquals": "<="}
    if op in durations:
        return _duration_op(key, value, durations[op])
    raise Unsupported(f"condition operator {op}")


def evaluate_conditions(conditions: Any, ctx: dict, soft: bool) -> tuple[bool, str]:
    """Evaluate a conditions block (a list means `all`); returns (holds, message)."""
    if conditions is None:
        return True, ""
    if isinstance(conditions, list):
        blocks = {"all": conditions}
    elif isinstance(conditions, dict):
        extra = set(conditions) - {"any", "all"}
        if extra:
            raise KyvernoError(f"unknown condition block {min(extra)!r}")
        blocks = conditions
    else:
        raise KyvernoError("conditions must be a list or an any/all block")

    def one(cond: dict) -> bool:
        if not isinstance(cond, dict) or "operator" not in cond:
            raise KyvernoError("a condition needs key, operator and value")
        key = substitute(cond.get("key"), ctx, soft)
        value = substitute(cond.get("value"), ctx, soft)
        return evaluate_operator(cond["operator"], key, value)

    messages = []
    any_block = blocks.get("any")
    if any_block:
        results = [one(c) for c in any_block]
        if not any(results):
            messages = [c.get("message", "") for c in any_block if c.get("message")]
            return False, "; ".join(messages)
    for c in blocks.get("all") or []:
        if not one(c):
            return False, c.get("message", "") if isinstance(c, dict) else ""
    return True, ""
