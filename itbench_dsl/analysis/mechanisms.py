"""Mechanism identity: what a fault does, and when two scenarios measure the same thing.

Every `FaultKind` names its `mechanism` (`workload.replicas:zero`, `service.selector:invalid`):
the object part it changes and how. Contributors proposed many "new" faults to ITBench that
were an existing fault under another name, and many "new" scenarios that were an existing
scenario with another value. Two checks keep the library and the scenario set honest:

* `mechanism_clashes(faults)` / `check_unique_mechanisms(faults)`: no two fault kinds share a
  mechanism (the test suite runs it over the registry, so a duplicate fault is refused).
* `scenario_key(scenario)`: the multiset of (mechanism, target object, normalised arguments) of
  a scenario's injections. `find_duplicates` pairs scenarios with equal keys, and
  `duplicate_diagnostics` turns each pair into a W2001 warning at the second scenario's name
  (`itbench check` over several files reports them).

Normalised arguments keep what says *where* the fault acts (the container, the variable's
name, the port, the resource, the chaos action and its peer) and drop *how much* (values,
images, factors, utilisation targets, durations, replica counts) and the recorded originals:
the same env var set to another wrong value, or the same autoscaler at 2% instead of 1%,
measures the same thing.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Iterable, Mapping, Sequence

from .. import ir
from ..diagnostics import Diagnostic, Note
from ..source import NO_SPAN, Span

# argument keys (at any depth) that locate a fault inside its target; every other leaf is a magnitude
IDENTITY_KEYS = frozenset({
    "container", "name", "port", "resource", "resources", "autoscaler", "key", "flag", "peer", "action",
    "direction", "target", "chaos_type", "selector", "path", "probe", "host",
})


def mechanism_clashes(faults: Iterable) -> list[tuple]:
    """Pairs of fault kinds that declare the same mechanism, in registry order."""
    seen: dict[str, object] = {}
    clashes = []
    for kind in faults:
        first = seen.setdefault(kind.mechanism, kind)
        if first is not kind:
            clashes.append((first, kind))
    return clashes


def check_unique_mechanisms(faults: Iterable) -> None:
    """Refuse a library where two kinds do the same thing; the message names both."""
    clashes = mechanism_clashes(faults)
    if clashes:
        raise ValueError("; ".join(
            f"fault `{b.name}` duplicates `{a.name}`: both are mechanism `{a.mechanism}` "
            f"(extend `{a.name}` with an argument instead of adding a new fault)" for a, b in clashes))


def _leaves(value, path: tuple[str, ...] = ()):
    if isinstance(value, dict):
        for key in sorted(value):
            yield from _leaves(value[key], (*path, str(key)))
    elif isinstance(value, (list, tuple)):
        # a list of names (the resources a fault removes) is part of where it acts; order does not matter
        if all(not isinstance(v, (dict, list, tuple)) for v in value):
            yield path, tuple(sorted(json.dumps(v, sort_keys=True) for v in value))
        else:
            for index, item in enumerate(value):
                yield from _leaves(item, (*path, str(index)))
    else:
        yield path, value


def normalise_args(args: dict) -> tuple:
    """The arguments that say where a fault acts, as a hashable, order-free tuple."""
    kept = []
    for path, value in _leaves(args):
        if any(p.startswith("original") for p in path):
            continue
        if any(p in IDENTITY_KEYS for p in path):
            kept.append((".".join(path), json.dumps(value, sort_keys=True, default=str)))
    return tuple(sorted(kept))


def injection_key(injection: ir.Injection) -> tuple:
    return (injection.mechanism, injection.target.key(), normalise_args(injection.args))


def scenario_key(scenario: ir.Scenario) -> tuple:
    """The multiset of (mechanism, target, normalised arguments) of a scenario's injections, sorted."""
    counts = Counter(injection_key(i) for i in scenario.injections())
    return tuple(sorted(counts.items()))


def find_duplicates(scenarios: Sequence[tuple[str, ir.Scenario]]) -> list[tuple[tuple[str, ir.Scenario], tuple[str, ir.Scenario]]]:
    """Pairs (first, later) of scenarios with the same faults on the same targets, in input order.

    A scenario without injections (a CISO policy gap, say) has no key and duplicates nothing.
    Each later scenario is paired with the first one of its key.
    """
    first: dict[tuple, tuple[str, ir.Scenario]] = {}
    pairs = []
    for path, scenario in scenarios:
        if scenario is None:
            continue
        key = scenario_key(scenario)
        if not key:
            continue
        if key not in first:
            first[key] = (path, scenario)
        elif first[key][0] != path:  # the same file named twice is not a duplicate
            pairs.append((first[key], (path, scenario)))
    return pairs


def describe(scenario: ir.Scenario) -> str:
    faults = sorted({f"`{i.fault}` on {i.target.kind.lower()} `{i.target.name}`" for i in scenario.injections()})
    return ", ".join(faults)


def duplicate_diagnostics(scenarios: Sequence[tuple[str, ir.Scenario]],
                          name_spans: Mapping[str, Span] | None = None) -> list[Diagnostic]:
    """A W2001 warning per duplicate pair, at the later scenario's name (`name_spans`: each file's
    scenario name, from its source map)."""
    name_spans = name_spans or {}
    out = []
    for (first_path, first), (path, scenario) in find_duplicates(scenarios):
        out.append(Diagnostic(
            "W2001", f"scenario `{scenario.name}` duplicates `{first.name}` ({first_path}): both inject "
            f"{describe(scenario)}", path, name_spans.get(path, NO_SPAN), "same mechanism on the same target",
            help="change the target or the fault mechanism, or drop one of the two scenarios",
            notes=(Note(f"`{first.name}` is in {first_path}", name_spans.get(first_path, NO_SPAN)),),
        ))
    return out
