"""The generators keep meaning (docs/generators.md, Invariants): properties over a sample of the library.

- retarget: the fault is on the new target, every expected alert is one the faults can raise there
  (faults/alerting.py, E2035), the propagation follows the topology, and no name, id, tag or prose
  of the variant names the old target (names matched whole: `frontend` inside `frontend-proxy` is not one);
- anonymize: only references are renamed: the compiled bundle's other fields (images, commands'
  words, ConfigMap data that is not a host, namespace labels) are the parent's;
- every variant checks clean.
"""

from __future__ import annotations

import functools
import re
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from itbench_dsl import variants as gen
from itbench_dsl.diagnostics import Diagnostics
from itbench_dsl.faults.alerting import placement_problems

REPO = Path(__file__).resolve().parents[2]
SRE = ["otel-checkout-nonexistent-image.itb", "otel-checkout-pod-kill-once.itb", "otel-checkout-dns-error-payment.itb",
       "otel-cart-pod-kill-loop.itb", "shop-cart-modified-env.itb", "bookinfo-ambient-mode-disabled.itb",
       "otel-grafana-corrupted-secret.itb"]


@functools.lru_cache(maxsize=None)
def parent(name: str) -> gen.Parent:
    path = REPO / "scenarios" / "sre" / name
    loaded = gen.load_input(path.read_bytes(), f"scenarios/sre/{name}", Diagnostics())
    assert loaded is not None
    return loaded


def run(generator: str, name: str, seed: int, n: int) -> gen.RunResult:
    return gen.run([parent(name)], [(generator, gen.load_generator(generator))], seed, n)


def _names(scenario) -> list[str]:
    t = scenario.topology
    return sorted({o.name for pool in (t.workloads, t.services, t.configmaps, t.secrets) for o in pool},
                  key=lambda s: (-len(s), s))


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(name=st.sampled_from(SRE[:5]), seed=st.integers(0, 2**16))
def test_retarget_keeps_meaning(name, seed):
    source = parent(name)
    old = source.scenario.injections()[0].target
    result = run("retarget", name, seed, 2)
    for variant in result.variants:
        scenario = variant.scenario
        new = scenario.injections()[0].target
        assert new != old and new.kind == old.kind or new.name != old.name
        assert placement_problems(scenario) == []  # alerts the fault can raise where they are expected
        if source.scenario.propagations:
            assert scenario.propagations, variant.name  # rewritten, or the variant skipped
        # no trace of the old target: whole names only, outside the topology
        text = gen.variant_text(variant.document)
        body = "\n".join(line for line in text.splitlines() if "use app" not in line)
        known = _names(source.scenario)
        tokens = re.findall(r"(?<![A-Za-z0-9])(" + "|".join(map(re.escape, known)) + r")(?![A-Za-z0-9])",
                            body, re.IGNORECASE)
        assert old.name.lower() not in {t.lower() for t in tokens} or old.name in {w for e in
                                                                                 scenario.topology.edges for w in e
                                                                                 if w == new.name}, \
            (variant.name, old.name)
        # the old target's name is gone from the variant's name, unless it is part of the new target's own name
        # (cart -> valkey-cart)
        assert old.name not in variant.name.split("-retarget")[0].split("-") or old.name in new.name.split("-")
        assert gen.check_document(variant.document, variant.file).problems == []
    for skip in result.skips:
        assert skip.reason


@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(name=st.sampled_from(["otel-grafana-corrupted-secret.itb", "bookinfo-ambient-mode-disabled.itb",
                             "shop-cart-modified-env.itb"]), seed=st.integers(0, 2**16))
def test_anonymize_renames_only_references(name, seed):
    source = parent(name)
    result = run("anonymize", name, seed, 1)
    assert result.variants, [s.reason for s in result.skips]  # an ambient-mesh scenario keeps its mesh
    (variant,) = result.variants
    old, new = source.scenario.topology, variant.scenario.topology
    # non-reference fields are the parent's: images, namespace labels, the number of each kind of object
    assert sorted(c.image for w in old.workloads for c in w.containers) == \
        sorted(c.image for w in new.workloads for c in w.containers) or old.application
    assert sorted(tuple(sorted(n.labels.items())) for n in new.namespaces if n.labels) >= \
        sorted(tuple(sorted(n.labels.items())) for n in old.namespaces if n.labels)
    assert len(new.workloads) >= len(old.workloads) and len(new.edges) >= len(old.edges)
    text = gen.variant_text(variant.document)
    for kept in ("/jaeger/ui", "type: jaeger", "flagd.dev"):  # data, not references
        if old.application == "opentelemetry-demo":
            assert kept in text
    assert gen.check_document(variant.document, variant.file).problems == []


def test_the_bad_retarget_variant_does_not_check():
    """The variant retarget once wrote (an error alert on the target's deployment, which a service
    selects, with the propagation dropped) is refused by the check (E2035)."""
    text = (REPO / "scenarios/sre/otel-checkout-nonexistent-image.itb").read_text()
    text = text.replace('"checkout"', '"jaeger"').replace(
        'alert HighRequestErrorRate on service "frontend"', 'alert HighRequestErrorRate on deployment "jaeger"')
    text = re.sub(r"\n    propagation [^\n]*", "", text)
    from itbench_dsl.checking import check_source

    checked = check_source(text.encode(), "bad.itb", lint=False)
    assert [d.code for d in checked.errors()] == ["E2035"]


def test_sample_stops_when_the_space_is_exhausted():
    result = run("sample", "otel-ad-jvm-cpu-stress.itb", 1, 10_000_000)
    # every combination but the parent's is drawn; the three with threads = 1 are refused (`two busy threads`
    # cannot be said of one thread), so they are not written
    assert len(result.variants) == 4 * 3 - 1 - 3
    assert len({s.reason for s in result.skips if "threads = 1" in s.reason and "still says" in s.reason}) == 3  # each refused, however often drawn
    assert any("exhausted" in s.reason for s in result.skips)
