"""retarget renames a name in every spelling the scenario writes it in, and refuses a root cause it cannot carry
(docs/generators.md, retarget): `Product catalog`, `ProductCatalog` and `product_catalog` are `product-catalog`,
and a root cause that is neither what the moved fault acts on nor what another fault acts on has no counterpart
around the new target."""

from __future__ import annotations

import re

import pytest

from itbench_dsl import variants as gen
from itbench_dsl.variants.builtin.retarget import _case_like, _glued_like, _glued_pattern, _names_pattern

from support.variants import parent


def _spellings(name: str) -> re.Pattern:
    """`name` spaced, snake, joined or camel, in any case, as a whole word."""
    return re.compile(r"(?<![A-Za-z0-9])" + "[-_ ]?".join(map(re.escape, re.split(r"[-_]", name)))
                      + r"(?![a-z0-9])", re.IGNORECASE)


@pytest.mark.parametrize("found, new", [
    ("Product Catalog", "Frontend Proxy"), ("Product catalog", "Frontend proxy"), ("product catalog", "frontend proxy"),
    ("ProductCatalog", "FrontendProxy"), ("productCatalog", "frontendProxy"), ("productcatalog", "frontendproxy"),
    ("product_catalog", "frontend_proxy"), ("PRODUCT_CATALOG", "FRONTEND_PROXY"), ("PRODUCT CATALOG", "FRONTEND PROXY"),
    ("product-catalog", "frontend-proxy"), ("Product-catalog", "Frontend-proxy"),
])
def test_a_name_keeps_the_spelling_it_was_found_in(found, new):
    assert _case_like(found, "frontend-proxy", old="product-catalog") == new
    assert _names_pattern(["product-catalog"]).fullmatch(found)


def test_one_part_names_keep_their_case_style():
    assert _case_like("Cart", "ad", old="cart") == "Ad"
    assert _case_like("CART", "product-catalog", old="cart") == "PRODUCT_CATALOG"
    assert _case_like("cart", "product-catalog", snake=True, old="cart") == "product_catalog"


def test_a_name_inside_a_longer_word_is_not_a_name():
    pattern = _names_pattern(["product-catalog", "frontend-proxy", "frontend"])
    text = "productCatalogFailure, frontend proxies, the frontend-proxy"
    assert [m.group(2) for m in pattern.finditer(text)] == ["frontend", "frontend-proxy"]


def test_retarget_renames_spaced_and_capitalised_spellings():
    """The product catalog's alert says `Product catalog pod is in CrashLoopBackOff state`: each variant says its
    new target's name there (`Valkey cart pod ...`) and carries no spelling of `product-catalog`."""
    path = "sre/otel-product-catalog-invalid-command.itb"
    result = gen.run([parent(path)], [("retarget", gen.load_generator("retarget"))], 0, None)
    assert len(result.variants) >= 2, [s.reason for s in result.skips]
    old = _spellings("product-catalog")
    for variant in result.variants:
        text = "\n".join(line for line in gen.variant_text(variant.document).splitlines() if "use app" not in line)
        assert not old.search(text), (variant.name, old.search(text).group(0))
    valkey = next(v for v in result.variants if v.scenario.injections()[0].target.name == "valkey-cart")
    assert "Valkey cart pod is in CrashLoopBackOff state" in gen.variant_text(valkey.document)


def test_a_root_cause_the_move_cannot_carry_is_a_skip():
    """The readiness probe fault acts on `frontend`, and the parent's ground truth names `cart` (ITBench's
    account of it): nothing in the topology says what that root cause is around another target."""
    path = "sre/otel-frontend-misconfigured-readiness-probe.itb"
    result = gen.run([parent(path)], [("retarget", gen.load_generator("retarget"))], 0, None)
    assert not result.variants, [v.name for v in result.variants]
    moved = [s.reason for s in result.skips if "->" in s.reason]
    assert moved and all("root cause Deployment `cart`" in r for r in moved), moved


def test_root_causes_of_other_faults_stay():
    """The quota scenario's second fault (a flag in `flagd-config`) keeps its root cause when the first moves."""
    path = "sre/otel-checkout-quota-load-surge.itb"
    result = gen.run([parent(path)], [("retarget", gen.load_generator("retarget"))], 0, None)
    assert result.variants
    for variant in result.variants:
        assert any(r.name == "flagd-config" for r in variant.scenario.root_causes), variant.name


def test_a_name_glued_to_service_is_renamed_with_its_component():
    """ITBench's identifiers glue the component's name to `service` (the chaos object `recommendationservice`, the
    solution id `Delete_the_resource_stresschaos_recommendationservice`): they are the moved component's own, so
    each variant says the new target's (`adservice`), and none carries the old one."""
    path = "sre/otel-recommendation-cpu-stress.itb"
    result = gen.run([parent(path)], [("retarget", gen.load_generator("retarget"))], 0, None)
    assert result.variants, [s.reason for s in result.skips]
    assert not [s.reason for s in result.skips if "glued" in s.reason]
    for variant in result.variants:
        text = gen.variant_text(variant.document)
        assert "recommendation" not in text.lower(), variant.name
        new = variant.scenario.injections()[0].target.name.replace("-", "")
        assert f"stresschaos {new}service" in text, variant.name


@pytest.mark.parametrize("found, new", [
    ("cartservice", "productcatalogservice"), ("CartService", "ProductCatalogService"),
    ("CARTSERVICE", "PRODUCTCATALOGSERVICE"), ("cartservice-service-1", "productcatalogservice-service-1"),
    ("Cartservices", "Productcatalogservices"), ("cartserviceFailure", "cartserviceFailure"),
])
def test_a_name_glued_to_service_keeps_its_spelling(found, new):
    renamed = _glued_pattern(["cart"]).sub(lambda m: _glued_like(m.group(1), m.group(2), "product-catalog"), found)
    assert renamed == new


def test_a_name_glued_into_a_longer_word_is_a_skip():
    """The image's solution names ITBench's deployment `productcatalogueservice` (`catalogue`: not the component's
    name glued to `service`): no variant may say it of another target, and the word is not the new target's to
    rename, so the candidate is a skip that quotes it and says why."""
    path, word = "sre/otel-product-catalog-nonexistent-image.itb", "productcatalogueservice"
    result = gen.run([parent(path)], [("retarget", gen.load_generator("retarget"))], 0, None)
    for variant in result.variants:
        assert "productcatalog" not in gen.variant_text(variant.document).lower(), variant.name
    assert any(f"`{word}`, a renamed name glued into a longer word" in s.reason and "untrue" in s.reason
               for s in result.skips), path
