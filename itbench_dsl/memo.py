"""Memoisation by object identity, for pure functions of objects that are never mutated, and the
copy of shared data that is about to be changed.

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


def copy_data(value):
    """A copy of JSON-like data (dicts, lists and scalars), as `copy.deepcopy` makes it but several times
    faster: manifests and states hold no cycles and no shared parts to keep, so no memo is needed."""
    if isinstance(value, dict):
        return {key: copy_data(item) for key, item in value.items()}
    if isinstance(value, list):
        return [copy_data(item) for item in value]
    return value
