"""Units, decided by the field's type: durations, CPU and memory quantities, percentages.

The lexer hands over `5m` as text; here `5m` becomes 300 seconds in a duration field and
5 millicores in a CPU field, and is an error in a memory field.
"""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation

_DURATION_PART = re.compile(r"(\d+(?:\.\d+)?)(ms|s|m|h|d)")
_DURATION_UNITS = {"ms": Decimal("0.001"), "s": Decimal(1), "m": Decimal(60), "h": Decimal(3600), "d": Decimal(86400)}
_NUMBER_SUFFIX = re.compile(r"([+-]?\d+(?:\.\d+)?)([A-Za-z]*)\Z")

MEMORY_SUFFIXES = {
    "": 1, "k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12, "P": 10**15, "E": 10**18,
    "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60,
}


class UnitError(ValueError):
    """The text is a number with a unit this field does not take; the message says which units fit."""


MAX_DIGITS = 24  # of a number in a quantity or duration: more than any Kubernetes field holds (int64 has 19)


def _number(digits: str, text: str) -> Decimal:
    """`digits` (a decimal the unit's pattern matched) as a Decimal; UnitError when it has more than MAX_DIGITS
    digits, which no field takes and which no later stage should have to print."""
    if sum(c.isdigit() for c in digits) > MAX_DIGITS:
        raise UnitError(f"`{text[:40]}{'...' if len(text) > 40 else ''}` has more than {MAX_DIGITS} digits: "
                        "out of range for any field")
    return Decimal(digits)


def parse_duration(text: str) -> Decimal:
    """`1h30m` -> 5400 seconds. Units: ms, s, m, h, d; parts in any order is refused (largest first)."""
    pos, total, last_rank = 0, Decimal(0), None
    order = ["d", "h", "m", "s", "ms"]
    for match in _DURATION_PART.finditer(text):
        if match.start() != pos:
            break
        rank = order.index(match.group(2))
        if last_rank is not None and rank <= last_rank:
            raise UnitError(f"`{text}` repeats or misorders its units; write the largest unit first, e.g. 1h30m")
        last_rank = rank
        total += _number(match.group(1), text) * _DURATION_UNITS[match.group(2)]
        pos = match.end()
    if pos != len(text) or pos == 0:
        raise UnitError(f"`{text}` is not a duration; durations take ms, s, m, h or d (e.g. 30s, 5m, 1h30m)")
    return total


def format_duration(seconds: Decimal | int | float) -> str:
    """A duration as the language, Go and Chaos Mesh all write it, largest units first and compact:
    90 -> '1m30s', 300 -> '5m', 0.5 -> '500ms', 0 -> '0s'. The one printer of durations: a value is
    never written two ways. Fractions of a second under a minute are written in milliseconds (1.5 ->
    '1500ms')."""
    value = Decimal(str(seconds))
    sign = "-" if value < 0 else ""
    value = abs(value)
    if value != value.to_integral_value():  # under a minute in milliseconds (`1500ms`), above it in parts
        if value < 60:
            return f"{sign}{int(value * 1000)}ms"
        whole = int(value)
        return sign + format_duration(whole) + f"{int((value - whole) * 1000)}ms"
    total, out = int(value), ""
    for unit, size in (("h", 3600), ("m", 60), ("s", 1)):
        if total >= size:
            out += f"{total // size}{unit}"
            total %= size
    return sign + (out or "0s")


_GO_PART = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h)")
_GO_UNITS = {"ns": Decimal("1e-9"), "us": Decimal("1e-6"), "µs": Decimal("1e-6"), "ms": Decimal("0.001"),
             "s": Decimal(1), "m": Decimal(60), "h": Decimal(3600)}


def parse_go_duration(text: str) -> Decimal | None:
    """Seconds of a Go duration (Chaos Mesh, Kubernetes): `1m30s`, `1.5h`, `20000ms`, `-5s`, `0`; None when
    the text is not one."""
    text = str(text).strip()
    sign = Decimal(-1) if text.startswith("-") else Decimal(1)
    body = text.lstrip("+-")
    if body == "0":
        return Decimal(0)
    pos, total = 0, Decimal(0)
    for match in _GO_PART.finditer(body):
        if match.start() != pos:
            return None
        if sum(c.isdigit() for c in match.group(1)) > MAX_DIGITS:
            return None
        total += Decimal(match.group(1)) * _GO_UNITS[match.group(2)]
        pos = match.end()
    return sign * total if pos == len(body) and pos else None


def parse_cpu(text: str) -> Decimal:
    """CPU in cores: `250m` -> 0.25, `2` -> 2."""
    match = _NUMBER_SUFFIX.match(text)
    if not match or match.group(2) not in ("", "m"):
        raise UnitError(f"`{text}` is not a CPU quantity; CPU takes millicores (250m) or cores (1, 0.5)")
    value = _number(match.group(1), text)
    return value / 1000 if match.group(2) == "m" else value


def parse_memory(text: str) -> int:
    """Memory in bytes: `64Mi` -> 67108864."""
    match = _NUMBER_SUFFIX.match(text)
    if not match or match.group(2) not in MEMORY_SUFFIXES:
        raise UnitError(f"`{text}` is not a memory quantity; memory takes Ki, Mi, Gi, Ti (or k, M, G, T) or bytes")
    try:
        return int(_number(match.group(1), text) * MEMORY_SUFFIXES[match.group(2)])
    except InvalidOperation as exc:  # pragma: no cover - the regex admits only decimals
        raise UnitError(str(exc)) from exc
