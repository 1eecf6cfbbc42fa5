"""Every Chaos Mesh action the language offers has at least one scenario in the library.

The actions are read from itbench_dsl/faults/chaos.py (its action constants and, where it has none,
the fault kind's own declaration); the actions the library uses are read from the compiled scenarios'
injections (`compile_source(...).scenario.injections()`), in the Chaos Mesh spelling of the emitted spec.
Both forms of a Chaos Mesh fault, one-shot (the experiment) and scheduled (a Schedule), appear at least
once over the library, and pod_chaos, the fault with instantaneous actions, appears in both.
"""

from __future__ import annotations

import re
from collections import defaultdict
from functools import lru_cache
from pathlib import Path

import pytest

from itbench_dsl.compiler import compile_source
from itbench_dsl.diagnostics import Diagnostics, render_human
from itbench_dsl.faults import chaos

REPO = Path(__file__).resolve().parents[2]
CHAOS_KINDS = tuple(kind.name for kind in chaos.FAULTS)
SCENARIOS = sorted(p for p in (REPO / "scenarios").rglob("*.itb")
                   if re.search(r"\bfault\s+(" + "|".join(CHAOS_KINDS) + r")\b", p.read_text("utf-8")))


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.capitalize() for part in rest)


def _dns_actions() -> tuple[str, ...]:
    """chaos.py spells the DNSChaos actions inline, in the `_enum` call of its check (no constant)."""
    if hasattr(chaos, "DNS_ACTIONS"):
        return tuple(chaos.DNS_ACTIONS)
    source = Path(chaos.__file__).read_text("utf-8")
    found = re.search(r'"action", \(([^)]*)\), "`\{value\}` is not a DNSChaos action"', source)
    assert found, "cannot find the DNSChaos actions in chaos.py"
    return tuple(re.findall(r'"([^"]+)"', found.group(1)))


def _block_args(kind_name: str) -> tuple[str, ...]:
    kind = next(k for k in chaos.FAULTS if k.name == kind_name)
    return tuple(a.name for a in kind.args if a.type == "block")


# fault kind -> the variants a scenario must use, as Chaos Mesh spells them in the emitted spec
EXPECTED: dict[str, set[str]] = {
    "pod_chaos": set(chaos.POD_ACTIONS),
    "network_chaos": set(chaos.NETWORK_ACTIONS),
    "http_chaos": set(chaos.HTTP_ACTIONS),
    "io_chaos": set(chaos.IO_ACTIONS.values()),
    "dns_chaos": set(_dns_actions()),
    # a JVM stress takes one of cpu_count and mem_type: both forms are variants of their own
    "jvm_chaos": {v for v in chaos.JVM_ACTIONS.values() if v != "stress"}
    | {f"stress:{_camel(field)}" for field in chaos.JVM_FIELDS["stress"]},
    # stressors are the fault's block arguments (cpu, memory): each alone, and together
    "stress_chaos": {*_block_args("stress_chaos"), "+".join(sorted(_block_args("stress_chaos")))},
    # TimeChaos has no action: a shift forwards and one backwards, and one naming its clock ids
    "time_chaos": {"forward", "backward", "clocks"},
}


def _variants(fault: str, spec: dict) -> set[str]:
    """The variants of EXPECTED[fault] a compiled spec uses."""
    if fault == "http_chaos":
        return {a for a in chaos.HTTP_ACTIONS if a in spec}
    if fault == "stress_chaos":
        names = sorted(spec.get("stressors", {}))
        return set(names) if len(names) == 1 else {"+".join(names)}
    if fault == "time_chaos":
        return {"backward" if spec["timeOffset"].startswith("-") else "forward"} | (
            {"clocks"} if spec.get("clockIds") else set())
    action = spec.get("action")
    if fault == "jvm_chaos" and action == "stress":
        return {f"stress:{key}" for key in ("cpuCount", "memType") if key in spec}
    return {action}


@lru_cache(maxsize=1)
def _library() -> tuple[dict, dict]:
    """(fault -> variant -> scenario names, fault -> forms used); the chaos scenarios check clean."""
    used: dict = defaultdict(lambda: defaultdict(set))
    forms: dict = defaultdict(set)
    for path in SCENARIOS:
        diags = Diagnostics()
        result = compile_source(path.read_bytes(), str(path.relative_to(REPO)), diags, validate=False)
        assert result.scenario is not None, render_human(diags)
        for injection in result.scenario.injections():
            if injection.fault not in CHAOS_KINDS:
                continue
            args = injection.args
            forms[injection.fault].add("scheduled" if "schedule" in args else "one-shot")
            for variant in _variants(injection.fault, args["spec"]):
                used[injection.fault][variant].add(path.stem)
    return used, forms


def test_every_chaos_kind_is_covered_by_the_expectations():
    assert set(EXPECTED) == set(CHAOS_KINDS), "a Chaos Mesh fault kind has no coverage expectation"
    assert all(EXPECTED.values())


@pytest.mark.parametrize("fault", CHAOS_KINDS)
def test_every_action_has_a_scenario(fault):
    used, _ = _library()
    missing = sorted(EXPECTED[fault] - set(used[fault]))
    assert not missing, f"{fault}: no scenario uses {', '.join(missing)} (add one to scenarios/)"


def test_both_forms_appear():
    _, forms = _library()
    overall = set().union(*forms.values()) if forms else set()
    assert overall == {"one-shot", "scheduled"}, f"forms used: {sorted(overall)}"
    assert forms["pod_chaos"] == {"one-shot", "scheduled"}, f"pod_chaos forms used: {sorted(forms['pod_chaos'])}"


def test_variants_are_read_from_chaos_py():
    """The expectations follow chaos.py: a new action there shows up here without editing this file."""
    assert EXPECTED["io_chaos"] >= {"attrOverride", "mistake"}
    assert EXPECTED["jvm_chaos"] >= {"latency", "exception", "gc", "ruleData", "return", "stress:cpuCount",
                                     "stress:memType"}
    assert EXPECTED["stress_chaos"] == {"cpu", "memory", "cpu+memory"}
    assert EXPECTED["dns_chaos"] == {"error", "random"}
