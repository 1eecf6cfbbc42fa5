"""Units, decided by the field's type: durations, CPU and memory quantities, percentages; cron schedules.

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


# Cron schedules. Chaos Mesh parses `schedule` with robfig/cron v3 (chaos-mesh api/v1alpha1/schedule_types.go,
# StandardCronParser, 608b61e7: SecondOptional | Minute | Hour | Dom | Month | Dow | Descriptor); ScheduleSpec.validateSchedule
# (schedule_webhook.go) refuses what it cannot parse. Field bounds, names and `?` are robfig/cron v3.0.1 parser.go's.
_SECOND = ("second", 0, 59, {})
_CRON_FIELDS = (("minute", 0, 59, {}), ("hour", 0, 23, {}), ("day of month", 1, 31, {}),
                ("month", 1, 12, {m: i + 1 for i, m in enumerate(
                    ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"))}),
                ("day of week", 0, 6, {d: i for i, d in enumerate(("sun", "mon", "tue", "wed", "thu", "fri", "sat"))}))
_CRON_DESCRIPTORS = ("@yearly", "@annually", "@monthly", "@weekly", "@daily", "@midnight", "@hourly")


def cron_syntax_problem(text: str) -> str | None:
    """Why a cron expression is not one robfig/cron's parser takes with an optional seconds field (5 fields, 6
    with a leading seconds field, or a descriptor): what Chaos Mesh's Schedule parses. A CronJob's stricter
    rule (no seconds field) is `topology.cron_problem`'s."""
    spec = text.strip()
    if spec.startswith(("TZ=", "CRON_TZ=")):
        parts = spec.split(None, 1)
        spec = parts[1] if len(parts) > 1 else ""
    if spec.startswith("@"):
        return None if spec in _CRON_DESCRIPTORS else (
            f"`{spec}` is not a cron descriptor (" + ", ".join(_CRON_DESCRIPTORS) + ", @every <duration>)")
    fields = spec.split()
    if len(fields) not in (5, 6):
        return (f"a cron schedule has 5 fields (minute hour day-of-month month day-of-week), or 6 with seconds "
                f"first, not {len(fields)}")
    for text_field, (what, low, high, names) in zip(fields, (_SECOND,) * (len(fields) == 6) + _CRON_FIELDS):
        for part in text_field.split(","):
            body, _, step = part.partition("/")
            if step and (not step.isdigit() or int(step) == 0):
                return f"`{part}`: the step of the {what} field is a positive number"
            if body in ("*", "?"):
                continue
            bounds = body.split("-", 1)
            values = []
            for bound in bounds:
                number = names.get(bound.lower()) if not bound.isdigit() else int(bound)
                if number is None or not low <= number <= high:
                    return f"`{bound}` is not a valid {what} ({low}-{high})"
                values.append(number)
            if len(values) == 2 and values[0] > values[1]:
                return f"`{body}`: the {what} range runs backwards"
    return None
