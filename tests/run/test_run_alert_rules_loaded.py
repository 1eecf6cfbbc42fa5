"""A run checks that Prometheus will evaluate the bundle's alert rules: the preflight refuses a cluster whose
Prometheus (of the operator) selects no PrometheusRule of the bundle (kube-prometheus-stack's default
`ruleSelector` matches only `release: <release>`), and the deploy waits until `/api/v1/rules` holds the bundle's
rule groups; otherwise the expected alerts could never fire and every run would fail as if the fault caused none."""

from __future__ import annotations

import pytest

pytest.importorskip("kubernetes")

from support.kube_server import KubeServer  # noqa: E402
from test_run_cluster import SCENARIO, options  # noqa: E402
from test_run_plan import write_bundle  # noqa: E402

from itbench_dsl.run import lifecycle  # noqa: E402
from itbench_dsl.run.runner import Run  # noqa: E402

HELM_DEFAULT = {"ruleSelector": {"matchLabels": {"release": "kube-prometheus-stack"}}, "ruleNamespaceSelector": {}}
EVERY_RULE = {"ruleSelector": {}, "ruleNamespaceSelector": {}}


@pytest.fixture(scope="module")
def bundle(tmp_path_factory):
    return write_bundle(tmp_path_factory.mktemp("bundles"), SCENARIO)


def prometheus(server, spec):
    with server.lock:
        server._put(server._new("monitoring.coreos.com", "v1", "Prometheus", "monitoring",
                                "kube-prometheus-stack-prometheus", {"spec": spec}))


def test_a_prometheus_that_selects_no_rule_of_the_bundle_fails_the_preflight(bundle, tmp_path):
    with KubeServer(ready_delay=0.02, delete_delay=0.02) as server:
        prometheus(server, HELM_DEFAULT)
        outcome = Run(lifecycle.load_bundle(bundle), options(server, tmp_path, "true"), progress=None).execute()
        assert outcome.status == "failed"
        assert "no Prometheus of the operator selects PrometheusRule" in outcome.error
        assert "ruleSelectorNilUsesHelmValues=false" in outcome.error


def test_rules_never_loaded_stop_the_run_before_the_fault(bundle, tmp_path):
    with KubeServer(ready_delay=0.02, delete_delay=0.02) as server:
        prometheus(server, EVERY_RULE)
        server.rules_loaded = False
        outcome = Run(lifecycle.load_bundle(bundle), options(server, tmp_path, "true", ready_timeout=1),
                      progress=None).execute()
        assert outcome.status == "failed"
        assert "Prometheus has not loaded the bundle's alert rules" in outcome.error
