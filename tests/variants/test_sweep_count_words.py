"""sweep says a changed count anew in words too (`two busy threads`, `ten times`), or refuses the variant
(docs/generators.md, Figures in prose)."""

from __future__ import annotations

import re

from itbench_dsl import ast
from itbench_dsl.variants import figures
from itbench_dsl.variants.builtin.sweep import _prose
from support.variants import run

_WORDS = dict(enumerate("zero one two three four five six seven eight nine ten eleven twelve".split())) | {20: "twenty"}
_COUNT_SCENARIOS = ["sre/otel-ad-jvm-cpu-stress.itb", "finops/otel-recommendation-idle-replicas.itb",
                    "finops/otel-cart-overprovisioned-requests.itb", "sre/shop-cart-modified-env.itb"]


def test_figures_say_a_count_anew_in_words_or_report_it():
    text = "runs two busy threads, Two cores; twenty and twelve are other counts"
    out = figures.rewrite_counts(text, {"2": "4"})
    assert out == "runs four busy threads, Four cores; twenty and twelve are other counts"
    assert figures.stale(text, "2", "4") == "two" and figures.stale(out, "2", "4") is None
    assert figures.rewrite_counts("two and three", {"2": "3", "3": "4"}) == "three and four"  # no chaining
    assert figures.rewrite_counts("raised to ten times", {"10": "40"}) == "raised to forty times"
    # what cannot be said of the new count faithfully stays, and stale reports it
    assert figures.stale(figures.rewrite_counts("two busy threads", {"2": "1"}), "2", "1") == "two"
    assert figures.stale("a single replica", "1", "3") == "a single"
    assert figures.stale("memory raised to twice its need", "2", "4") == "twice"
    assert figures.stale("a single replica", "2", "3") is None


def test_every_sweep_variant_says_its_counts_and_no_old_count_word():
    for rel in _COUNT_SCENARIOS:
        result = run("sweep", [rel])
        assert result.variants, rel
        for v in result.variants:
            prose = " | ".join(_prose(v.document))
            for s in v.document.statements:
                if isinstance(s, ast.Param) and isinstance(s.default, ast.Int):
                    old = next(str(p.default.value) for p in _parent_params(rel) if p.name == s.name)
                    new = str(s.default.value)
                    if old != new:
                        word = _WORDS.get(int(old))
                        assert not (word and re.search(rf"\b{word}\b", prose, re.I)), (v.name, prose)


def _parent_params(rel: str) -> list[ast.Param]:
    from support.variants import parent
    return [s for s in parent(rel).document.statements if isinstance(s, ast.Param)]


def test_cpu_stress_threads_are_said_anew():
    result = run("sweep", ["sre/otel-ad-jvm-cpu-stress.itb"])
    said = {re.search(r"runs (\w+) busy threads", " ".join(_prose(v.document))).group(1) for v in result.variants}
    assert said == {"two", "four", "eight"}
    # threads = 1 would read `one busy threads`: refused with a reason
    assert any("threads = 1" in s.reason and "`two`" in s.reason for s in result.skips)
