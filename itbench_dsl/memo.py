"""Memoisation by object identity, for pure functions of objects that are never mutated.

The objects of a standard-library application are built once per process and shared by every
scenario that uses the application (faults copy an object before they change it), so their
manifests, YAML text, validation results and JSON need computing once. An entry keeps its key
object alive, so an id cannot be reused while its entry exists; the memo is bounded.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Callable, Generic, TypeVar

K = TypeVar("K")
V = TypeVar("V")


class IdentityMemo(Generic[K, V]):
    def __init__(self, function: Callable[[K], V], size: int = 8192) -> None:
        self.function = function
        self.size = size
        self.entries: OrderedDict[int, tuple[K, V]] = OrderedDict()

    def __call__(self, obj: K) -> V:
        entry = self.entries.get(id(obj))
        if entry is not None and entry[0] is obj:
            return entry[1]
        value = self.function(obj)
        self.entries[id(obj)] = (obj, value)
        if len(self.entries) > self.size:
            self.entries.popitem(last=False)
        return value
