"""A param's value in prose, however it is spelled: `3s`, `3 s`, `3 seconds`, `three seconds`, `3000ms`;
`80%`, `80 percent`, `eighty per cent`; and the words that stand for a share (`most of`, `half of`).

`sweep` and `sample` change a param's value: every spelling of the old value in the scenario's prose is
said anew with the new value, in the occurrence's own style (unit, digits or words), and a share word the
old value satisfied but the new one does not (`most of` for 80% -> 50%; `every packet`, `each read`, `all
requests` for 100% -> 30%) becomes the new percentage.
`stale(text, old)` finds what is left of the old value (the variant is refused when something is).

A plain count (`2`, a param of replicas or threads) is said in words too (`two busy threads`, `ten
times`): a number word of the old count becomes the new count in words. The words that state a count
without naming it (`a single` for 1, `twice`/`double` for 2), and a count word to or from one (`one`
is also a pronoun; the noun after it changes number), cannot be said of another count faithfully:
`stale` reports them and the variant is refused.
"""

from __future__ import annotations

import re
from decimal import Decimal

_WORDS = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven",
          "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen", "twenty"]
_TENS = {"thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90}
_WORD_VALUE = {w: i for i, w in enumerate(_WORDS)} | _TENS | {"a hundred": 100, "one hundred": 100}

# unit -> (seconds per unit, short spellings, long singular, long plural)
_UNITS = {
    "ms": (Decimal("0.001"), ("ms",), "millisecond", "milliseconds"),
    "s": (Decimal(1), ("s", "sec", "secs"), "second", "seconds"),
    "m": (Decimal(60), ("m", "min", "mins"), "minute", "minutes"),
    "h": (Decimal(3600), ("h", "hr", "hrs"), "hour", "hours"),
}
_DURATION = re.compile(r"^(\d+(?:\.\d+)?)(ms|s|m|h)$")
_PERCENT = re.compile(r"^(\d+(?:\.\d+)?)%$")
_NUMBER = r"(\d+(?:\.\d+)?|" + "|".join(sorted(_WORD_VALUE, key=len, reverse=True)) + r")"

# share words: (pattern, the range of percentages it says, inclusive bounds)
_SHARES = (
    (r"nearly all(?: of)?|almost all(?: of)?", Decimal(85), Decimal(99.999)),
    (r"the majority of|most of", Decimal(50.001), Decimal(99.999)),
    (r"half of|half", Decimal(50), Decimal(50)),
    (r"a minority of|a few of|few of", Decimal(0.001), Decimal(49.999)),
)


# the words that say a share is the whole (100%) of the unit a percentage counts: `every packet`, `each read`,
# `all (of the) requests`. Only before such a unit (a packet, a request, a read ...): `every ten seconds` or
# `all pods` says nothing of the share. Said anew as `30% of the packets`.
_UNITS_COUNTED = ("packet", "datagram", "frame", "byte", "request", "response", "call", "query", "message",
                  "connection", "read", "write", "operation", "transaction", "charge", "payment", "order",
                  "checkout", "attempt", "lookup", "event", "span", "record", "retry")


def _plural(noun: str) -> str:
    if re.search(r"(s|x|z|ch|sh)$", noun):
        return noun + "es"
    if re.search(r"[^aeiou]y$", noun):
        return noun[:-1] + "ies"
    return noun + "s"


_UNIT_WORD = "|".join(sorted({w for u in _UNITS_COUNTED for w in (u, _plural(u))}, key=len, reverse=True))
# `every packet`, `each payment charge` (the last word of the run is the noun), `all (of) (the) packets`
_WHOLE = re.compile(r"(?<![A-Za-z])(?<!nearly )(?<!almost )(?:(every|each)|(all)(?: of)?(?: the)?) "
                    r"((?:(?:" + _UNIT_WORD + r") )*(?:" + _UNIT_WORD + r"))(?![A-Za-z])( [a-z]+\b)?", re.IGNORECASE)
_AGREEMENT = {"is": "are", "was": "were", "has": "have", "does": "do"}
_NOT_VERBS = {"its", "this", "thus", "as", "across", "plus", "towards", "afterwards", "always", "sometimes",
              "perhaps", "unless", "us", "whereas", "yes", "less", "his", "hers", "ours", "theirs"}


def _plural_verb(word: str) -> str:
    """`fails` said of many (`fail`): the verb after `every packet` agrees with `30% of the packets`."""
    if word in _AGREEMENT:
        return _AGREEMENT[word]
    if not word.endswith("s") or word.endswith("ss") or word in _NOT_VERBS or len(word) < 3:
        return word
    if word.endswith("ies"):
        return word[:-3] + "y"
    if re.search(r"(sh|ch|x|ss|o)es$", word):
        return word[:-2]
    return word[:-1]


def _whole_text(m: re.Match, after: Decimal) -> str:
    unit = m.group(3)
    if m.group(1):  # `every packet`: singular, said in the plural
        head, _, last = unit.rpartition(" ")
        if last.lower() in _UNITS_COUNTED:
            unit = (head + " " if head else "") + _plural(last)
    verb = m.group(4) or ""
    if m.group(1) and verb:
        verb = " " + _plural_verb(verb[1:])
    return f"{_say(after, False)}% of the {unit}{verb}"


def _number(text: str) -> Decimal | None:
    text = text.lower()
    if text in _WORD_VALUE:
        return Decimal(_WORD_VALUE[text])
    try:
        return Decimal(text)
    except Exception:
        return None


def _say(number: Decimal, words: bool) -> str:
    number = number.normalize()
    if number == number.to_integral_value():
        number = number.quantize(Decimal(1))
        if words and 0 <= number <= 20:
            return _WORDS[int(number)]
    return format(number, "f")


def seconds(value: str) -> Decimal | None:
    m = _DURATION.match(value)
    return Decimal(m.group(1)) * _UNITS[m.group(2)][0] if m else None


def percent(value: str) -> Decimal | None:
    m = _PERCENT.match(value)
    return Decimal(m.group(1)) if m else None


def _duration_pattern() -> re.Pattern:
    spellings = []
    for unit, (_, short, one, many) in _UNITS.items():
        spellings += [(s, unit) for s in short] + [(one, unit), (many, unit)]
    alternatives = "|".join(re.escape(s) for s, _ in sorted(spellings, key=lambda x: -len(x[0])))
    return re.compile(r"(?<![A-Za-z0-9.])" + _NUMBER + r"( ?)(" + alternatives + r")(?![A-Za-z0-9])", re.IGNORECASE)


_DURATIONS = _duration_pattern()
_UNIT_OF = {s: unit for unit, (_, short, one, many) in _UNITS.items() for s in (*short, one, many)}
_PERCENTS = re.compile(r"(?<![A-Za-z0-9.])" + _NUMBER + r"( ?%| percent| per cent)(?![A-Za-z0-9])", re.IGNORECASE)


def _duration_text(number: Decimal, space: str, spelled: str, words: bool, new: Decimal, new_unit: str) -> str:
    unit = _UNIT_OF[spelled.lower()]
    amount = new / _UNITS[unit][0]
    if amount != amount.to_integral_value():  # not whole in the occurrence's unit: the new value's own unit
        unit = new_unit
        amount = new / _UNITS[unit][0]
    _, short, one, many = _UNITS[unit]
    if spelled.lower() in _UNITS[_UNIT_OF[spelled.lower()]][1]:  # a short spelling stays short
        return f"{_say(amount, False)}{space}{unit}"
    return f"{_say(amount, words)} {one if amount == 1 else many}"


def count(value: str) -> Decimal | None:
    """A plain whole number as a param writes it (`2`), None for anything else."""
    return Decimal(value) if re.fullmatch(r"\d+", value) else None


_COUNT_WORDS = re.compile(r"(?<![A-Za-z0-9-])(" + "|".join(sorted(_WORD_VALUE, key=len, reverse=True))
                          + r")(?![A-Za-z0-9-])", re.IGNORECASE)
# words that state a count without a number word of their own
_IMPLIED = {1: r"a single", 2: r"twice|double|doubled"}


def rewrite_counts(text: str, changes: dict[str, str]) -> str:
    """`text` with every number word of an old count in `changes` (old -> new, plain whole numbers) said as
    the new count, all in one pass (so that 2 -> 3 and 3 -> 4 do not chain). A count to or from one stays
    (`one` is also a pronoun, and `two threads` -> `one threads` is untrue in its noun): stale reports it."""
    words = {count(a): count(b) for a, b in changes.items() if count(a) is not None and count(b) is not None}

    def sub(m):
        value = _number(m.group(1))
        if value not in words or 1 in (value, words[value]):  # the noun's number would change too
            return m.group(0)
        new = words[value]
        out = next((w for w, n in _TENS.items() if n == new), None) or _say(new, True)
        return out[:1].upper() + out[1:] if m.group(1)[:1].isupper() else out
    return _COUNT_WORDS.sub(sub, text) if words else text


def rewrite(text: str, old: str, new: str, only_share: bool = True) -> str:
    """`text` with every spelling of the value `old` said as `new` (both as the language writes them)."""
    before, after = seconds(old), seconds(new)
    if before is not None and after is not None:
        unit = _DURATION.match(new).group(2)

        def sub(m):
            value = _number(m.group(1))
            if value is None or value * _UNITS[_UNIT_OF[m.group(3).lower()]][0] != before:
                return m.group(0)
            words = not m.group(1)[:1].isdigit()
            out = _duration_text(value, m.group(2), m.group(3), words, after, unit)
            return out[:1].upper() + out[1:] if m.group(1)[:1].isupper() else out
        return _DURATIONS.sub(sub, text)
    before, after = percent(old), percent(new)
    if before is not None and after is not None:
        def sub_percent(m):
            value = _number(m.group(1))
            if value != before:
                return m.group(0)
            words = not m.group(1)[:1].isdigit()
            sign = m.group(2)
            return f"{_say(after, words) if words else _say(after, False)}{sign}"
        text = _PERCENTS.sub(sub_percent, text)
        if only_share:
            for pattern, low, high in _SHARES:
                if low <= before <= high and not low <= after <= high:
                    text = re.sub(rf"(?<![A-Za-z])({pattern})(?![A-Za-z])", f"{_say(after, False)}% of", text,
                                  flags=re.IGNORECASE)
            if before == 100 and after != 100:  # `every packet` of a 100% loss: `30% of the packets`
                text = _WHOLE.sub(lambda m: _whole_text(m, after), text)
        return text
    return text


def stale(text: str, old: str, new: str) -> str | None:
    """A spelling of the old value `old` still in `text` (None when there is none)."""
    before, after = count(old), count(new)
    if before is not None and after != before:
        for m in _COUNT_WORDS.finditer(text):
            if _number(m.group(1)) == before:
                return m.group(0)
        implied = _IMPLIED.get(int(before))
        m = implied and re.search(rf"(?<![A-Za-z-])({implied})(?![A-Za-z-])", text, re.IGNORECASE)
        if m:
            return m.group(0)
    before = seconds(old)
    if before is not None and seconds(new) != before:
        for m in _DURATIONS.finditer(text):
            value = _number(m.group(1))
            if value is not None and value * _UNITS[_UNIT_OF[m.group(3).lower()]][0] == before:
                return m.group(0)
    before = percent(old)
    if before is not None and percent(new) != before:
        for m in _PERCENTS.finditer(text):
            if _number(m.group(1)) == before:
                return m.group(0)
        after = percent(new)
        for pattern, low, high in _SHARES:
            if after is not None and low <= before <= high and not low <= after <= high:
                m = re.search(rf"(?<![A-Za-z])({pattern})(?![A-Za-z])", text, re.IGNORECASE)
                if m:
                    return m.group(0)
        m = before == 100 and after != 100 and _WHOLE.search(text)
        if m:
            return text[m.start():m.end(3)]
    return None
