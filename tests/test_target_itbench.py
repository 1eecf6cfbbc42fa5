"""`--target itbench` says what ITBench's layout cannot carry."""

from __future__ import annotations

from conftest import SCENARIOS
from test_cli import invoke


def test_an_inline_topology_is_reported_at_the_topology(tmp_path):
    inline = SCENARIOS / "sre" / "shop-cart-modified-env.itb"
    result = invoke("compile", str(inline), "--target", "itbench", "-o", str(tmp_path))
    assert result.exit_code == 0
    assert "warning[W3001]" in result.stderr and f"{inline}:7:3" in result.stderr
    assert (tmp_path / "shop-cart-modified-env" / "scenario.yaml").is_file()  # still written


def test_a_standard_application_is_not_reported(tmp_path):
    result = invoke("compile", str(SCENARIOS / "sre" / "otel-checkout-nonexistent-image.itb"), "--target", "itbench",
                    "-o", str(tmp_path))
    assert result.exit_code == 0 and "W3001" not in result.stderr


def test_the_full_bundle_is_not_reported(tmp_path):
    result = invoke("compile", str(SCENARIOS / "sre" / "shop-cart-modified-env.itb"), "-o", str(tmp_path))
    assert result.exit_code == 0 and "W3001" not in result.stderr
