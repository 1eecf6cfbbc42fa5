"""compose skips a pair where one fault cuts the requests to a component whose requests the other fails."""

from pathlib import Path

from itbench_dsl.diagnostics import Diagnostics
from itbench_dsl import variants as gen
from itbench_dsl.variants.builtin.compose import conflict

REPO = Path(__file__).resolve().parents[2]


def parent(name: str):
    path = REPO / "scenarios" / "sre" / name
    loaded = gen.load_input(path.read_bytes(), f"scenarios/sre/{name}", Diagnostics())
    assert loaded is not None
    return loaded


def test_a_traffic_cut_upstream_masks_the_others_request_alerts():
    dns, flag = parent("otel-frontend-failing-dns-policy.itb"), parent("otel-payment-failure-flag.itb")
    why = conflict(dns, flag)
    assert why is not None and "stops the requests" in why
    assert conflict(flag, dns) is not None
