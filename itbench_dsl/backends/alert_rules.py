"""The bundle's alert rules: a PrometheusRule (monitoring.coreos.com/v1) per namespace the expected alerts
watch, holding the rule of every alert the scenario expects (`manifests/alert-rules.yaml`).

A standard alert's rules come from the catalogue (alerts.py), in the flavour of the scenario's
application and with `{namespace}` set to the namespace of the alert's target; an alert the scenario
declares (`alert_rule`) is written as declared.
"""

from __future__ import annotations

from .. import ir
from ..alerts import CATALOGUE, DOMAIN_ALERTS, SOURCES, expression
from .manifests import MANAGED_BY

API_VERSION = "monitoring.coreos.com/v1"
OWN_GROUP = "custom"  # the rule group of the alerts a scenario declares (`alert_rule`)


def alert_namespaces(scenario: ir.Scenario) -> dict[str, list[str]]:
    """Namespace -> the names of the alerts expected there (sorted), namespaces sorted. An alert on a
    cluster-scoped target watches the agent's first namespace."""
    fallback = scenario.agent.namespaces[0] if scenario.agent.namespaces else None
    out: dict[str, set[str]] = {}
    for alert in scenario.alerts:
        namespace = alert.target.namespace or fallback
        if namespace is not None:
            out.setdefault(namespace, set()).add(alert.name)
    # an alert the scenario names elsewhere (`alert X not firing` of a control, which keeps its faulty twin's
    # alerts so that both ship the same rules) ships its rule too, in the namespace it watches there or the first
    expected = {a.name for a in scenario.alerts}
    named = [p.alert for p in (scenario.mitigation.predicates if scenario.mitigation is not None else [])
             if p.kind == "alert" and p.alert]
    for name in named:
        if name in expected or fallback is None or not (name in CATALOGUE or name in {r.name for r in scenario.alert_rules}):
            continue
        out.setdefault(fallback, set()).add(name)
    # a domain whose rules must not tell one scenario's fault from another's (FinOps: the kind of waste) ships
    # its whole set in every namespace of the application, whatever the scenario expects
    for namespace in application_namespaces(scenario) if scenario.domain in DOMAIN_ALERTS else ():
        out.setdefault(namespace, set()).update(DOMAIN_ALERTS[scenario.domain])
    return {ns: sorted(names) for ns, names in sorted(out.items())}


def application_namespaces(scenario: ir.Scenario) -> list[str]:
    """The namespaces the application's workloads run in (not those the cluster provides), sorted."""
    provided = {n.name for n in scenario.topology.namespaces if n.provided}
    return sorted({w.namespace for w in scenario.topology.workloads if w.namespace and w.namespace not in provided})


def rule_prefix(scenario: ir.Scenario, namespace: str) -> str:
    """What the rules are named after: the application (its standard-library id), else the namespace they
    watch. Never the scenario: an agent that lists PrometheusRules, or asks Prometheus for its rules, reads
    these names, and every scenario of one application must name its rules alike."""
    return scenario.topology.application or namespace


def rule_name(scenario: ir.Scenario, namespace: str) -> str:
    return f"{rule_prefix(scenario, namespace)}-alerting-rules"


def prometheus_rules(scenario: ir.Scenario) -> list[dict]:
    """The PrometheusRule objects of the scenario's expected alerts (none when it expects none)."""
    own = {r.name: r for r in scenario.alert_rules}
    application = scenario.topology.application
    objects = []
    for namespace, names in alert_namespaces(scenario).items():
        groups: dict[str, list[dict]] = {}
        for name in names:
            if name in own:
                groups.setdefault(OWN_GROUP, []).append(_own_rule(own[name]))
                continue
            alert = CATALOGUE[name]
            for rule in alert.rules_for(application):
                entry: dict = {"alert": name, "expr": expression(rule.expr, namespace)}
                if rule.for_ != "0s":
                    entry["for"] = rule.for_
                entry["labels"] = {"severity": rule.severity}
                entry["annotations"] = {"summary": alert.summary, "description": rule.description,
                                        "source": SOURCES[alert.source]}
                groups.setdefault(rule.group, []).append(entry)
        objects.append({
            "apiVersion": API_VERSION, "kind": "PrometheusRule",
            "metadata": {"name": rule_name(scenario, namespace), "namespace": namespace, "labels": dict(MANAGED_BY)},
            "spec": {"groups": [{"name": f"{rule_prefix(scenario, namespace)}.{group}", "rules": rules}
                                for group, rules in sorted(groups.items())]},
        })
    return objects


def _own_rule(rule: ir.AlertRuleDef) -> dict:
    entry: dict = {"alert": rule.name, "expr": rule.expr}
    if rule.for_duration != "0s":
        entry["for"] = rule.for_duration
    entry["labels"] = {**dict(sorted(rule.labels.items())), "severity": rule.severity}
    annotations = {k: v for k, v in (("summary", rule.summary), ("description", rule.description)) if v}
    if annotations:
        entry["annotations"] = annotations
    return entry
