"""`indirect = true`: a propagation between components that meet only through others (E2012)."""

from __future__ import annotations

from support.compiling import compile_text

SHOP = '''scenario "shop-orders" {
  domain sre
  complexity medium
  description "Orders stop reaching billing."
  topology {
    namespace "shop"
    deployment "orders" { image = "orders:1"  port "http" = 8080 }
    deployment "queue" { image = "queue:1"  port "amqp" = 5672 }
    deployment "billing" { image = "billing:1"  port "http" = 8080 }
    deployment "island" { image = "island:1" }
    service "orders" { port "http" = 8080 }
    service "queue" { port "amqp" = 5672 }
    service "billing" { port "http" = 8080 }
    "orders" -> "queue"
    "billing" -> "queue"
  }
  fault scaled_to_zero on deployment "orders"
  expect {
    EDGE
  }
}
'''


def _compile(edge: str):
    return compile_text(SHOP.replace("EDGE", edge), "shop.itb")


def test_components_that_meet_through_a_broker_need_indirect():
    _, diags = _compile('propagation service "orders" -> service "billing"')
    [error] = diags.errors()
    assert error.code == "E2012"
    assert "indirect = true" in error.help


def test_an_indirect_edge_is_accepted_and_recorded():
    result, diags = _compile('propagation service "orders" -> service "billing" { indirect = true }')
    assert not diags.errors(), [d.message for d in diags.errors()]
    [edge] = result.scenario.propagations
    assert edge.indirect is True
    assert b'"indirect": true' in result.files["scenario.json"]


def test_a_direct_edge_marked_indirect_is_recorded_as_direct():
    result, diags = _compile('propagation service "orders" -> service "queue" { indirect = true }')
    assert not diags.errors()
    assert result.scenario.propagations[0].indirect is None
    assert b'"indirect"' not in result.files["scenario.json"]


def test_indirect_still_needs_a_path():
    _, diags = _compile('propagation service "orders" -> deployment "island" { indirect = true }')
    [error] = diags.errors()
    assert error.code == "E2012" and "no path of the topology joins them" in error.message
