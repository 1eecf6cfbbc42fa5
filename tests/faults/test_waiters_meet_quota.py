"""A restart or pod deletion is spread over its namespace (faults/waiters.spread), but not where a fault's quota or
limit range admits pods: there every pod started again would meet it, and the incident would be the namespace's."""

import json
from pathlib import Path

from itbench_dsl.compiler import compile_source
from itbench_dsl.diagnostics import Diagnostics

ROOT = Path(__file__).resolve().parents[2]


def _waiters(name: str) -> list[tuple[str, str]]:
    path = ROOT / "scenarios" / "sre" / name
    diags = Diagnostics()
    result = compile_source(path.read_bytes(), str(path), diags)
    assert not diags.has_errors, [d.message for d in diags.errors()]
    data = json.loads(result.files["scenario.json"])
    return [(w["kind"], w["target"]["name"]) for g in data["faults"] for w in g["waiters"]]


def test_no_spread_where_the_faults_quota_refuses_pods():
    assert _waiters("sregym-namespace-memory-limit.itb") == [("delete_pods", "search")]
    assert sorted(_waiters("otel-checkout-quota-load-surge.itb")) == [("restart", "flagd"), ("restart", "load-generator")]


def test_spread_elsewhere():
    assert len(_waiters("otel-ad-failure-flag.itb")) > 2
