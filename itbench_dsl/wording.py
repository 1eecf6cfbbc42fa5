"""The words of names and sentences, as the checks that compare them read them: a name split at punctuation and
camelCase, lowered, and crudely stemmed. The leakage checks (agent_view), the importer and the names the compiler
gives created objects (faults/base) share it; it sits below all of them."""

from __future__ import annotations

import functools
import re

_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_SPLIT = re.compile(r"[^A-Za-z0-9]+")


def words(text: str) -> list[str]:
    """The words of a name or a sentence: split at punctuation and camelCase, lowered."""
    return list(_words(str(text)))


@functools.lru_cache(maxsize=65536)
def _words(text: str) -> tuple[str, ...]:
    out = []
    for part in _SPLIT.split(text):
        out.extend(w.lower() for w in _CAMEL.split(part) if w)
    return tuple(out)


@functools.lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """A crude stem, so that "scaled", "scaling" and "scale" meet: a suffix off a word of 5 letters or more."""
    if len(word) >= 5:
        for suffix in ("ing", "ed", "es", "s", "e"):
            if word.endswith(suffix) and len(word) - len(suffix) >= 3:
                return word[: -len(suffix)]
    return word
