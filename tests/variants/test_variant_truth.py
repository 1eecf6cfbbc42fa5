"""Variants that would state something untrue: each class an outside user found, with the mechanism that
prevents it (docs/generators.md)."""

from __future__ import annotations

import re

import pytest
from pathlib import Path

from itbench_dsl import ast
from itbench_dsl import variants as gen
from itbench_dsl.diagnostics import Diagnostics
from itbench_dsl.variants import figures
from support.compiling import REPO, SCENARIOS
from support.variants import parent, run


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


@pytest.mark.parametrize("text,said", [
    ("drops every packet from checkout to payment", "drops 30% of the packets from checkout to payment"),
    ("drops all packets from checkout", "drops 30% of the packets from checkout"),
    ("drops all of the packets", "drops 30% of the packets"),
    ("fails each read of products.json", "fails 30% of the reads of products.json"),
    ("Every request fails", "30% of the requests fail"),
    ("fail every payment charge", "fail 30% of the payment charges"),
    # no share of the unit a percentage counts: said as before
    ("reloads every ten seconds, all pods", "reloads every ten seconds, all pods"),
    ("nearly all packets", "nearly all packets"),
])
def test_sweep_a_word_of_the_whole_share_becomes_the_new_percentage(text, said):
    """`every packet` of a 100% loss is untrue of a 30% one, as `most of` is of 50%."""
    assert figures.rewrite(text, "100%", "30%") == said
    assert figures.stale(said, "100%", "30%") is None
    assert figures.rewrite(text, "100%", "100%") == text
    if said != text:
        assert figures.stale(text, "100%", "30%") is not None  # several shares: the variant is refused


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


# ---- retarget ---------------------------------------------------------------------------------------------


def _texts(document: ast.Scenario) -> list[str]:
    from itbench_dsl.variants.builtin.retarget import _texts as texts
    return [t for s in document.statements if not isinstance(s, (ast.Topology, ast.UseApp)) for t in texts(s)]


def test_retarget_prose_names_no_form_of_the_old_target():
    """2: `carts`, `Cart service`, `the cart's` are said of the new target; a variant still naming the old
    target in any form is refused with the reason."""
    result = run("retarget", ["sre/otel-cart-deleted-service.itb"])
    assert result.variants
    for v in result.variants:
        for text in _texts(v.document) + [v.document.name]:
            assert not re.search(r"(?<![a-z0-9-])carts?(?![a-z0-9-])", text, re.IGNORECASE), (v.document.name, text)
    ad = next(v for v in result.variants if v.document.name.startswith("otel-ad-"))
    assert any("ads" in t for t in _texts(ad.document))  # `carts` -> `ads`


def test_retarget_refuses_a_variant_that_still_names_the_old_target():
    from itbench_dsl.variants.builtin import retarget
    move = retarget.Move.__new__(retarget.Move)
    move.names = {"cart-store": "ad"}
    move.old = type("R", (), {"name": "cart-store"})()
    move.a = "cart-store"
    move.pattern = retarget._names_pattern(["cart-store", "ad"])
    move.key = {"cartstore": "cart-store", "ad": "ad"}
    move.tied = frozenset()  # no program arguments
    for text, found in (("The cart-stores are empty", "cart-stores"), ("The Cart Stores are empty", "Cart Stores"),
                        ("CartStore is empty", "CartStore"), ("CART_STORE_ADDR", "CART_STORE")):
        doc = ast.Scenario("x-retarget", (ast.Description(text),))
        assert "the old target" in move.stale(doc) and f"`{found}`" in move.stale(doc)


def test_retarget_keeps_the_case_style_of_each_occurrence():
    """4: `REDIS_ADDR` becomes `POSTGRES_ADDR` (upper snake), not `postgres_ADDR`."""
    from itbench_dsl.variants.builtin.retarget import _case_like
    assert _case_like("CART", "product-catalog") == "PRODUCT_CATALOG"
    assert _case_like("Cart", "product-catalog") == "Product-catalog"
    assert _case_like("cart", "product-catalog", snake=True) == "product_catalog"
    diags = Diagnostics()
    path = Path(__file__).parent / "shop-two-modified-env.itb"
    loaded = gen.load_input(path.read_bytes(), str(path.relative_to(REPO)), diags)
    result = gen.run([loaded], [("retarget", gen.load_generator("retarget"))], 1)
    (v,) = result.variants
    (fault,) = [s for s in v.document.statements if isinstance(s, ast.Fault)]
    names = [e.value.value for e in fault.entries if isinstance(e, ast.Attr) and e.key == "name"]
    assert names == ["POSTGRES_ADDR"]


def test_retarget_skip_reasons_say_what_failed():
    """4: a skip names the statement and the relation that has no counterpart, never an empty list."""
    diags = Diagnostics()
    path = Path(__file__).parent / "shop-two-modified-env.itb"
    loaded = gen.load_input(path.read_bytes(), str(path.relative_to(REPO)), diags)
    result = gen.run([loaded], [("retarget", gen.load_generator("retarget"))], 1)
    reasons = {s.reason for s in result.skips}
    assert not any(r.endswith("()") or "target ()" in r for r in reasons), reasons
    postgres = next(r for r in reasons if "-> postgres:" in r)
    assert "`redis`, a callee of `cart`" in postgres and "`postgres` has no callee" in postgres
    redis = next(r for r in reasons if "-> redis:" in r)
    assert "it is the new target itself" in redis or "maps `cart` onto `redis`" in redis


def _edges(document: ast.Scenario) -> list:
    from itbench_dsl.variants import expect_statements
    out = []
    for s in expect_statements(document):
        if isinstance(s, ast.Propagation):
            out += [((a.kind, a.name), (b.kind, b.name)) for a, b in zip(s.chain, s.chain[1:])]
    return out


def test_retarget_never_merges_two_components_into_one_edge():
    """3: `cart -> frontend` and `cart -> checkout` moved to `ad` (whose one caller is frontend) must not both
    become `ad -> frontend`."""
    result = run("retarget", ["sre/otel-cart-deleted-service.itb"])
    assert result.variants
    for v in result.variants:
        edges = _edges(v.document)
        assert len(edges) == len(set(edges)), (v.document.name, edges)
        assert all(a != b for a, b in edges)
    assert any("maps `cart` onto `checkout`" in s.reason and "merge two components" in s.reason for s in result.skips)


def test_retarget_refuses_scaling_faults_where_the_role_makes_them_meaningless():
    """5: idle replicas are not moved to a client the cost alerts leave out (the load generator), a StatefulSet,
    or a singleton (`Recreate`): a rule on kind, spec and the alert catalogue, not on names."""
    result = run("retarget", ["finops/otel-recommendation-idle-replicas.itb"])
    targets = {v.scenario.injections()[0].target.name for v in result.variants}
    assert not targets & {"load-generator", "opensearch", "jaeger", "prometheus"}
    reasons = " ".join(s.reason for s in result.skips)
    assert "StatefulSet `opensearch`" in reasons and "`Recreate` strategy" in reasons
    assert "rules do not count `load-generator`'s containers" in reasons
    assert "cart" in targets
    # idle replicas of a container as small as checkout's waste less than the evaluator's `finops.reserved`
    # tolerance, unlike the parent's: its cost alerts would not fire (docs/generators.md, alerts that fire)
    assert "checkout" not in targets and "-> checkout) expects an alert its faults cannot raise" in reasons
    # a store whose data or membership lives in its pods, read from the program it runs (repository or tag)
    assert not targets & {"kafka", "postgresql", "valkey-cart"}
    assert "runs Kafka" in reasons and "runs PostgreSQL" in reasons and "runs Valkey" in reasons


# ---- 7. compose: inputs that cannot share a run ------------------------------------------------------------


def test_compose_refuses_a_control_or_another_domain_with_the_reason():
    controls = run("control", ["sre/otel-accounting-scaled-to-zero.itb"])
    (control,) = controls.variants
    control_parent = gen.Parent(control.parent, control.document, control.scenario, ("control",), control.semantic_hash)
    fault = parent("sre/otel-cart-failure-flag.itb")
    ciso = parent("ciso/cis-k8s-5-2-2-privileged-kyverno.itb")
    result = gen.run([fault, control_parent, ciso], [("compose", gen.load_generator("compose"))], 1)
    assert not result.variants
    reasons = " ".join(s.reason for s in result.skips)
    assert "is a control" in reasons and "different domains (sre and ciso)" in reasons


# ---- 8. check --strict PARENT VARIANT: duplicates whatever the order ----------------------------------------


def test_strict_check_of_a_parent_and_its_variant_is_order_independent(tmp_path):
    from click.testing import CliRunner
    from itbench_dsl.cli import cli
    from itbench_dsl.variants import variant_text

    (v,) = run("sweep", ["sre/otel-ad-http-response-delay.itb"]).variants[:1]
    variant = tmp_path / f"{v.name}.itb"
    variant.write_text(variant_text(v.document))
    parent_file = str(SCENARIOS / "sre/otel-ad-http-response-delay.itb")
    outputs = []
    for args in ([parent_file, str(variant)], [str(variant), parent_file]):
        result = CliRunner().invoke(cli, ["check", "--strict", *args])
        assert result.exit_code == 0, result.output
        assert "W2001" not in result.output
        outputs.append(result.output)


# ---- 6. noise in FinOps: no red herring that is itself waste ------------------------------------------------


def test_finops_noise_adds_nothing_that_costs_and_the_parents_fix_still_grades():
    from itbench_dsl.analysis.corpus import self_validate
    from itbench_dsl.analysis.states import derive

    rels = ["finops/otel-recommendation-idle-replicas.itb", "finops/otel-cart-overprovisioned-requests.itb"]
    result = run("noise", rels, seed=3, n=12)
    assert result.variants
    for v in result.variants:
        p = parent(next(r for r in rels if v.parent.endswith(r)))
        before = {(w.kind, w.name) for w in p.scenario.topology.workloads}
        after = {(w.kind, w.name) for w in v.scenario.topology.workloads}
        assert after == before, (v.name, after - before)  # an idle pause Deployment is waste, not a red herring
        # the parent's solution still passes, doing nothing still fails (the evaluator's corpus)
        assert self_validate(v.scenario) == [], v.name
        states = derive(v.scenario)
        assert set(states) == {"healthy", "faulty", "solved"}
    # SRE scenarios may still get the idle Deployment
    sre = run("noise", ["sre/otel-checkout-nonexistent-image.itb"], seed=3, n=12)
    assert any(w.name.startswith("canary-") for v in sre.variants for w in v.scenario.topology.workloads)


# ---- 9. anonymize: nothing of the parent left, nothing undocumented written ---------------------------------


def test_anonymize_leaves_no_identifying_token_and_allows_only_what_it_must():
    from itbench_dsl.variants.builtin.anonymize import _strings

    result = run("anonymize", ["sre/otel-ad-http-response-delay.itb", "ciso/cis-k8s-5-2-2-privileged-kyverno.itb"])
    assert len(result.variants) == 2
    for v in result.variants:
        shown: list[str] = []
        _strings(v.document, lambda t: shown.append(t) or t)
        text = " | ".join(shown)
        assert "82a1388" not in text  # the parent's hash suffix
        assert not re.search(r"(?<![A-Za-z0-9_-])(ad|ads|opentelemetry-demo|otel-demo)(?![A-Za-z0-9_-])", text,
                             re.IGNORECASE), text
        metadata = [s for s in v.document.statements if isinstance(s, ast.Metadata)]
        allowed = [e for m in metadata for e in m.entries if e.key == "lint_allow"]
        inlined = v.parent.endswith("otel-ad-http-response-delay.itb")
        assert bool(allowed) == inlined  # W2002 only for an inlined application (docs/generators.md)
