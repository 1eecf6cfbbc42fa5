"""Variants that would state something untrue: each class an outside user found, with the mechanism that
prevents it (docs/generators.md)."""

from __future__ import annotations

import re

from itbench_dsl import ast
from itbench_dsl.variants import figures

import functools
from pathlib import Path

from itbench_dsl import variants as gen
from itbench_dsl.diagnostics import Diagnostics

REPO = Path(__file__).resolve().parents[2]
SCENARIOS = REPO / "scenarios"


@functools.lru_cache(maxsize=None)
def parent(rel: str) -> gen.Parent:
    path = SCENARIOS / rel
    diags = Diagnostics()
    loaded = gen.load_input(path.read_bytes(), str(path.relative_to(REPO)), diags)
    assert loaded is not None, [d.message for d in diags.items]
    return loaded


def run(names: str, rels: list[str], seed: int = 1, n: int | None = None) -> gen.RunResult:
    chain = [(name, gen.load_generator(name)) for name in names.split(",")]
    return gen.run([parent(r) for r in rels], chain, seed, n)


def _prose(document: ast.Scenario) -> list[str]:
    from itbench_dsl.variants.builtin.sweep import _prose as prose
    return prose(document)


def _text(value) -> str:
    from itbench_dsl.printer import Printer
    return Printer().value(value)


# ---- 1. sweep/sample: the old value in another spelling ---------------------------------------------------


def test_figures_rewrite_every_spelling_of_a_duration_and_a_percentage():
    text = "holds it for 3 seconds, Three seconds late, 3s, 3 s, 3000ms; 30s and 13 seconds are other values"
    out = figures.rewrite(text, "3s", "10s")
    assert out == "holds it for 10 seconds, Ten seconds late, 10s, 10 s, 10000ms; 30s and 13 seconds are other values"
    assert figures.stale(text, "3s", "10s") == "3 seconds" and figures.stale(out, "3s", "10s") is None
    assert figures.rewrite("by 3 seconds", "3s", "500ms") == "by 500 milliseconds"
    text = "corrupts most of the packets: 80%, 80 percent"
    assert figures.rewrite(text, "80%", "50%") == "corrupts 50% of the packets: 50%, 50 percent"
    assert figures.rewrite(text, "80%", "90%") == "corrupts most of the packets: 90%, 90 percent"  # still true
    assert figures.stale(text, "80%", "50%") == "80%"
    assert figures.stale("corrupts most of the packets", "80%", "50%") == "most of"


def test_sweep_prose_never_states_the_old_value_in_another_spelling():
    result = run("sweep", ["sre/otel-ad-http-response-delay.itb", "sre/otel-payment-network-corrupt.itb"])
    assert result.variants
    for v in result.variants:
        params = {s.name: s.default for s in v.document.statements if isinstance(s, ast.Param)}
        prose = " | ".join(_prose(v.document))
        if "delay" in params:
            assert _text(params["delay"]) != "3s"
            assert not re.search(r"\b3 seconds?\b|\b3 s\b|\b3000 ?ms\b", prose), prose
        if "corrupt" in params:
            value = int(_text(params["corrupt"]).rstrip("%"))
            if value <= 50:
                assert "most of" not in prose, prose
            assert "80%" not in prose and "80 percent" not in prose


def test_sample_prose_says_the_drawn_duration():
    result = run("sample", ["sre/otel-ad-http-response-delay.itb"], n=6)
    for v in result.variants:
        assert not re.search(r"\b3 seconds\b", " ".join(_prose(v.document)))
