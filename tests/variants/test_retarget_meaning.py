"""A retargeted variant means on its new target what its parent meant on the old one (docs/generators.md,
retarget): a fault whose arguments belong to the old target's program is not moved to another program."""

from __future__ import annotations

from pathlib import Path

import pytest

from itbench_dsl import variants as gen
from itbench_dsl.diagnostics import Diagnostics
from itbench_dsl.faults.base import library_kind
from itbench_dsl.faults.base import program_args

REPO = Path(__file__).resolve().parents[2]


def run(path: str, text: str | None = None) -> gen.RunResult:
    data = text.encode() if text is not None else (REPO / path).read_bytes()
    loaded = gen.load_input(data, path, Diagnostics())
    assert loaded is not None, path
    return gen.run([loaded], [("retarget", gen.load_generator("retarget"))], 0, None)


def test_program_arguments_are_declared_by_the_kinds():
    assert {"class", "method", "rule_data"} <= program_args(library_kind("jvm_chaos"))
    assert "path" in program_args(library_kind("http_chaos"))
    assert not program_args(library_kind("pod_chaos"))


@pytest.mark.parametrize("path", ["scenarios/sre/otel-ad-jvm-latency-getads.itb",
                                  "scenarios/sre/otel-ad-jvm-cpu-stress.itb",
                                  "scenarios/sre/otel-quote-http-response-replace-500.itb"])
def test_a_program_tied_fault_is_not_moved_to_another_program(path):
    result = run(path)
    assert not result.variants, [v.note for v in result.variants]
    assert result.skips and all("program" in s.reason for s in result.skips if "->" in s.reason)


def test_a_program_tied_fault_moves_to_a_workload_running_the_same_image():
    """A workload that runs the old target's image has its Java class: the fault moves there, and only there."""
    path = "scenarios/sre/otel-ad-jvm-latency-getads.itb"
    loaded = gen.load_input((REPO / path).read_bytes(), path, Diagnostics())
    workloads = {w.name: w for w in loaded.scenario.topology.workloads}
    workloads["currency"].containers[0].image = workloads["ad"].containers[0].image
    result = gen.run([loaded], [("retarget", gen.load_generator("retarget"))], 0, None)
    moved = {v.note.split("->")[1].split()[0] for v in result.variants}
    refused = {s.reason.split("->")[1].split(":")[0].strip() for s in result.skips if "program" in s.reason}
    assert "currency" not in refused and moved == {"currency"}
    assert {"frontend", "valkey-cart", "quote"} <= refused


def test_a_fault_without_program_arguments_still_moves():
    result = run("scenarios/sre/otel-ad-jvm-latency-getads.itb".replace("ad-jvm-latency-getads", "currency-pod-failure"))
    assert not any("program" in s.reason for s in result.skips)
