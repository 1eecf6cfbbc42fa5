"""The alerts phase waits at least what the expected alerts' rules need to fire (their `for` and a margin)."""

from pathlib import Path

from itbench_dsl.alerts import FIRING_MARGIN
from itbench_dsl.run.lifecycle import Bundle


def _bundle(rules, alerts):
    rule_object = {"apiVersion": "monitoring.coreos.com/v1", "kind": "PrometheusRule",
                   "metadata": {"name": "r", "namespace": "shop"},
                   "spec": {"groups": [{"name": "g", "rules": rules}]}}
    return Bundle(path=Path("."), scenario="s", domain="sre", topology=(), access=(rule_object,), inject_apply=(),
                  inject_delete=(), revert_apply=(), revert_delete=(), waiters=(), alerts=tuple(alerts),
                  service_account=None, requires={})


def test_wait_covers_the_longest_expected_alert_for():
    bundle = _bundle([{"alert": "PodNotReady", "expr": "x > 0", "for": "15m"},
                      {"alert": "Waiting", "expr": "y > 0", "for": "1h"}], ["PodNotReady"])
    assert bundle.alert_wait() == 900 + FIRING_MARGIN  # 15 min: not seen within `itbench run`'s 15 min
    assert _bundle(bundle.access[0]["spec"]["groups"][0]["rules"], ["PodNotReady", "Waiting"]).alert_wait() \
        == 3600 + FIRING_MARGIN


def test_an_alert_with_several_rules_fires_with_its_quickest():
    bundle = _bundle([{"alert": "A", "expr": "x > 0", "for": "30m"}, {"alert": "A", "expr": "z > 0", "for": "2m"}],
                     ["A"])
    assert bundle.alert_wait() == 120 + FIRING_MARGIN
    assert _bundle([], ["A"]).alert_wait() == 0.0
