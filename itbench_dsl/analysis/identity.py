"""What makes two scenarios the same scenario: one digest of what a scenario measures.

Lint (W2006, an identical scenario) and the variant generators (dropping a variant that equals an
input or an earlier variant) ask the same question, so they share this answer. A scenario's
digest is the sha256 of its canonical IR without what does not change what it measures: its name,
its prose, its tags and metadata, and its param declarations (their values are already
substituted where `param(NAME)` is used).
"""

from __future__ import annotations

import hashlib
import json

from .. import ir
from ..memo import IdentityMemo

NOT_MEASURED = ("name", "description", "tags", "metadata", "params")


def _canonical(value) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


# the objects of a standard-library application are shared by every scenario that uses it (memo.py):
# each is hashed once per process
_object_digest = IdentityMemo(lambda obj: hashlib.sha256(_canonical(ir.to_json(obj)).encode("utf-8")).hexdigest())


def scenario_digest(scenario: ir.Scenario) -> str:
    """sha256 of the scenario's canonical IR, keys sorted, without NOT_MEASURED (each topology
    object stands for the sha256 of its own canonical JSON)."""
    data = {name: ir.to_json(getattr(scenario, name)) for name in ir.field_names(ir.Scenario)
            if name not in NOT_MEASURED and name != "topology"}
    topology = {}
    for name in ir.field_names(ir.Topology):
        value = getattr(scenario.topology, name)
        if isinstance(value, list) and value and type(value[0]) in ir.TOPOLOGY_OBJECTS:
            topology[name] = [_object_digest(obj) for obj in value]
        else:
            topology[name] = ir.to_json(value)
    data["topology"] = topology
    return hashlib.sha256(_canonical(data).encode("utf-8")).hexdigest()
