"""Values as Kyverno reads and prints them: wildcards, quantities, Go durations, Go string forms.

Wildcards are Kyverno's wildcard.Match, quantities Kubernetes' resource.Quantity, durations Go's
time.ParseDuration; `_to_go_string` prints a scalar as Kyverno does (fmt.Sprint / JSON), and `_RANGE`
is a numeric range value (`5000-6000`, `!10-20`) as conditions and patterns write it.
"""

import json
import math
import re
from fractions import Fraction
from typing import Any


# ---------------------------------------------------------------------------------------
# Wildcards (`*` any run, `?` one character), as Kyverno's wildcard.Match.

_WILDCARD_CACHE: dict[str, tuple[list[re.Pattern], list[int]]] = {}


def wildcard_match(pattern: str, text: str) -> bool:
    """Whether `text` matches `pattern`. The pattern is split at its stars into segments of fixed
    length (`?` is one character): the first must start the text, the last end it, and each middle
    one is found leftmost in order, which is never worse than any other choice. No backtracking
    regular expression: a pattern like `*a*a*a*b` takes linear time, not exponential."""
    if "*" not in pattern and "?" not in pattern:
        return pattern == text
    compiled = _WILDCARD_CACHE.get(pattern)
    if compiled is None:
        parts = pattern.split("*")
        compiled = ([re.compile("".join("." if c == "?" else re.escape(c) for c in part), re.DOTALL)
                     for part in parts], [len(part) for part in parts])
        if len(_WILDCARD_CACHE) > 4096:
            _WILDCARD_CACHE.clear()
        _WILDCARD_CACHE[pattern] = compiled
    segments, lengths = compiled
    if len(segments) == 1:
        return segments[0].fullmatch(text) is not None
    if lengths[0] + lengths[-1] > len(text) or not segments[0].match(text):
        return False
    pos, end = lengths[0], len(text) - lengths[-1]
    if not segments[-1].fullmatch(text, end):
        return False
    for segment in segments[1:-1]:
        m = segment.search(text, pos, end)
        if m is None:
            return False
        pos = m.end()
    return True


def _has_wildcard(text: str) -> bool:
    return "*" in text or "?" in text


# ---------------------------------------------------------------------------------------
# Quantities (Kubernetes resource.Quantity) and durations (Go time.ParseDuration).

# unambiguous (`\d+(?:\.\d*)?`, not `\d+\.?\d*`, whose two runs of digits split a long number every way) and read
# only from texts of at most MAX_NUMBER_TEXT characters: no backtracking blow-up on a long run of digits
_QUANTITY = re.compile(r"([+-]?(?:\d+(?:\.\d*)?|\.\d+))(?:([eE][+-]?\d+)|(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE])?)", re.ASCII)
MAX_NUMBER_TEXT = 256
_SUFFIX = {
    "": 1, "n": Fraction(1, 10**9), "u": Fraction(1, 10**6), "m": Fraction(1, 1000), "k": 10**3,
    "M": 10**6, "G": 10**9, "T": 10**12, "P": 10**15, "E": 10**18, "Ki": 2**10, "Mi": 2**20,
    "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60,
}
_DURATION_PART = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)", re.ASCII)
_DURATION_UNIT = {"ns": Fraction(1, 10**9), "us": Fraction(1, 10**6), "µs": Fraction(1, 10**6),
                  "μs": Fraction(1, 10**6), "ms": Fraction(1, 1000), "s": 1, "m": 60, "h": 3600}


def parse_quantity(text: Any) -> Fraction | None:
    if isinstance(text, bool):
        return None
    if isinstance(text, (int, float)):
        return Fraction(text) if not (isinstance(text, float) and not math.isfinite(text)) else None
    if not isinstance(text, str):
        return None
    if len(text) > MAX_NUMBER_TEXT:
        return None
    m = _QUANTITY.fullmatch(text.strip())
    if not m:
        return None
    number = Fraction(m.group(1))
    if m.group(2):
        exp = int(m.group(2)[1:])
        if abs(exp) > 400:  # beyond what any quantity holds; 10**exp alone would take the machine's memory
            return None
        return number * (Fraction(10) ** exp)
    return number * _SUFFIX[m.group(3) or ""]


def parse_duration(text: Any) -> Fraction | None:
    """Seconds of a Go duration string such as `1h30m`, `-5s`, `0`; None if not one."""
    if not isinstance(text, str):
        return None
    if len(text) > MAX_NUMBER_TEXT:
        return None
    s = text.strip()
    sign = 1
    if s[:1] in "+-" and s:
        sign = -1 if s[0] == "-" else 1
        s = s[1:]
    if s == "0":
        return Fraction(0)
    if not s:
        return None
    pos, total = 0, Fraction(0)
    for m in _DURATION_PART.finditer(s):
        if m.start() != pos:
            return None
        total += Fraction(m.group(1)) * _DURATION_UNIT[m.group(2)]
        pos = m.end()
    if pos != len(s):
        return None
    return sign * total


def _to_go_string(value: Any) -> str:
    """How Kyverno prints a scalar with fmt.Sprint / JSON."""
    if value is None:
        return "<nil>"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, (int, float, str)):
        return str(value)
    return json.dumps(value, separators=(",", ":"), sort_keys=True)


# ---------------------------------------------------------------------------------------
# Numeric ranges as Kyverno's operator package writes them: `5000-6000` inside, `5000!-6000` outside
# (InRangeRegex / NotInRangeRegex); groups: low end, "!" for outside, high end. `!5000-6000` is no
# range: it is the `!` operator on the string "5000-6000".

_RANGE = re.compile(r"^([-|+]?\d+(?:\.\d+)?[A-Za-z]*)(!?)-([-|+]?\d+(?:\.\d+)?[A-Za-z]*)$", re.ASCII)
