"""`--target itbench` says what ITBench's layout cannot carry."""

from __future__ import annotations

from support.compiling import SCENARIOS
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


CASES = SCENARIOS.parent / "tests" / "cases" / "itbench-export"


def test_a_fault_itbench_lacks_is_refused_when_nothing_is_left(tmp_path):
    """ITBench would inject nothing (`faults: []`): E3004 at the fault, exit 1, no folder written."""
    source = SCENARIOS / "finops" / "otel-cart-overprovisioned-requests.itb"
    result = invoke("compile", str(source), "--target", "itbench", "-o", str(tmp_path / "out"))
    assert result.exit_code == 1
    assert "error[E3004]" in result.stderr and "overprovisioned_requests" in result.stderr
    assert f"{source}:10:3" in result.stderr
    assert not (tmp_path / "out" / "otel-cart-overprovisioned-requests").exists()
    full = invoke("compile", str(source), "-o", str(tmp_path / "bundle"))  # the full bundle runs it
    assert full.exit_code == 0 and "E3004" not in full.stderr


def test_a_fault_itbench_lacks_beside_one_it_has_is_a_warning(tmp_path):
    import yaml

    source = CASES / "partly-itbench-faults.itb"
    result = invoke("compile", str(source), "--target", "itbench", "-o", str(tmp_path))
    assert result.exit_code == 0
    assert "warning[W3002]" in result.stderr and f"{source}:10:3" in result.stderr
    spec = yaml.safe_load((tmp_path / "two-faults" / "scenario.yaml").read_text())["spec"]
    assert [i["id"] for f in spec["faults"] for i in f["injections"]] == ["nonexistent-kubernetes-workload-container-image"]
