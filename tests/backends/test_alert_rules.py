"""The alert catalogue, `alert_rule` declarations and the bundle's PrometheusRule (manifests/alert-rules.yaml)."""

from __future__ import annotations

import json
import re
from functools import lru_cache

import pytest
from support.compiling import REFERENCE, SCENARIOS, compile_files, compile_text, yaml_documents

from itbench_dsl.alerts import CATALOGUE, DOMAIN_ALERTS, SEVERITIES, STANDARD_ALERTS, expression
from itbench_dsl.faults import FAULTS, library_alerts
from itbench_dsl.validate import validate_object
from itbench_dsl.vocabulary import KNOWN_ALERTS

BASE = """scenario "alerting" {
  domain sre
  complexity low
  description "A web app whose pods crash."
  topology {
    namespace "shop"
    deployment "web" { image = "nginx:1.27"  replicas = 2  port "http" = 80  labels { app = "web" } }
    service "web" { selector { app = "web" }  port "http" = 80 }
  }
  fault nonexistent_image on deployment "web"
%s
  expect {
%s
  }
}
"""


def scenario(rules: str = "", expect: str = 'alert KubePodNotReady on deployment "web"') -> str:
    return BASE % (rules, expect)


def test_catalogue_covers_every_alert_the_library_names():
    named = set(KNOWN_ALERTS) | {a for kind in FAULTS.values() for a in library_alerts(kind)}
    assert named <= set(CATALOGUE), sorted(named - set(CATALOGUE))
    assert set(KNOWN_ALERTS) == set(STANDARD_ALERTS)


def test_catalogue_rules_are_well_formed():
    for alert in CATALOGUE.values():
        assert alert.summary and alert.rules
        for flavour, rules in alert.rules.items():
            for rule in rules:
                assert rule.severity in SEVERITIES, alert.name
                assert "{namespace}" in rule.expr, (alert.name, flavour)
                assert rule.expr.count("(") == rule.expr.count(")"), alert.name
                assert rule.expr.count("{") == rule.expr.count("}"), alert.name


@pytest.mark.skipif(not (REFERENCE / "itbench/roles/applications").is_dir(), reason="needs ../shared/reference")
def test_itbench_rules_are_taken_from_itbench_templates():
    """Each ITBench-sourced expression, with the namespace placeholder put back, is in ITBench's templates."""
    texts = "".join(p.read_text() for p in (REFERENCE / "itbench/roles").rglob("prometheusrules.j2"))
    squeeze = lambda s: re.sub(r"\s+", "", s)  # noqa: E731
    templates = squeeze(re.sub(r"\[\[[^\]]*\]\]", "{namespace}", texts).replace('namespace="otel-demo"',
                                                                                 'namespace="{namespace}"'))
    for alert in CATALOGUE.values():
        if alert.source != "itbench":
            continue
        for rules in alert.rules.values():
            for rule in rules:
                assert squeeze(rule.expr) in templates, alert.name


@lru_cache(maxsize=None)
def library_bundle(path: str) -> dict[str, bytes]:
    files, diags = compile_files((SCENARIOS / path).read_bytes(), str(SCENARIOS / path))  # its folder: `use faults`
    assert not diags.errors(), path
    return files


def library_paths() -> list[str]:
    return sorted(str(p.relative_to(SCENARIOS)) for p in SCENARIOS.rglob("*.itb"))


def _named_not_firing(data: dict) -> set[str]:
    """The alerts a scenario's mitigation predicates name (`alert X not firing`) that have a rule to ship: the
    catalogue's, or the scenario's own `alert_rule`."""
    own = {r["name"] for r in data.get("alert_rules") or []}
    predicates = (data.get("mitigation") or {}).get("predicates") or []
    named = {p["alert"] for p in predicates if p.get("kind") == "alert" and p.get("alert")
             and (p["alert"] in CATALOGUE or p["alert"] in own)}
    return named | set(DOMAIN_ALERTS.get(data.get("domain"), ()))  # and the domain's whole set (alerts.DOMAIN_ALERTS)


@pytest.mark.parametrize("path", library_paths())
def test_every_library_bundle_holds_the_rules_of_its_expected_alerts(path):
    files = library_bundle(path)
    data = json.loads(files["scenario.json"])
    expected = {(a["target"].get("namespace"), a["name"]) for a in data.get("alerts") or []}
    rules = yaml_documents(files, "manifests/alert-rules.yaml")
    if not expected and not _named_not_firing(data):
        assert "manifests/alert-rules.yaml" not in files
        return
    found = set()
    for obj in rules:
        assert validate_object(obj) == [], path
        namespace = obj["metadata"]["namespace"]
        for group in obj["spec"]["groups"]:
            for rule in group["rules"]:
                found.add((namespace, rule["alert"]))
                assert f'"{namespace}"' in rule["expr"], (path, rule["alert"])  # templated to its namespace
    # an alert a mitigation predicate names (`alert X not firing`) ships its rule too, or it could never fire
    assert {name for _, name in expected} | _named_not_firing(data) == {name for _, name in found}
    assert {(ns, n) for ns, n in expected if ns} <= found


def test_rules_follow_the_application_flavour():
    files = library_bundle("sre/otel-checkout-nonexistent-image.itb")
    exprs = [r["expr"] for o in yaml_documents(files, "manifests/alert-rules.yaml") for g in o["spec"]["groups"]
             for r in g["rules"]]
    assert exprs and all("traces_span_metrics" in e and 'namespace="otel-demo"' in e for e in exprs)
    bookinfo = [p for p in library_paths() if p.startswith("sre/bookinfo")]
    assert bookinfo
    exprs = [r["expr"] for p in bookinfo for o in yaml_documents(library_bundle(p), "manifests/alert-rules.yaml")
             for g in o["spec"]["groups"] for r in g["rules"] if r["alert"].startswith("HighRequest")]
    assert exprs and all("istio_" in e or "request_result_total" in e for e in exprs)


def test_expression_replaces_only_the_placeholder():
    assert expression('up{namespace="{namespace}", job="x"}', "a-b") == 'up{namespace="a-b", job="x"}'


def test_declared_alert_rule_is_emitted_and_expected():
    rules = '''  alert_rule "WebDown" {
    expr = "sum(kube_deployment_status_replicas_available{namespace=\\"shop\\", deployment=\\"web\\"}) == 0"
    for = 2m
    severity = "critical"
    summary = "web has no available replica"
    labels { team = "shop" }
  }'''
    files, diags = compile_files(scenario(rules, 'alert WebDown on deployment "web"'))
    assert not diags.errors(), [d.message for d in diags.errors()]
    [obj] = yaml_documents(files, "manifests/alert-rules.yaml")
    assert validate_object(obj) == []
    [group] = obj["spec"]["groups"]
    [rule] = group["rules"]
    assert rule == {"alert": "WebDown", "expr": 'sum(kube_deployment_status_replicas_available{namespace="shop", '
                    'deployment="web"}) == 0', "for": "2m", "labels": {"team": "shop", "severity": "critical"},
                    "annotations": {"summary": "web has no available replica"}}
    assert json.loads(files["scenario.json"])["alert_rules"][0]["name"] == "WebDown"


def test_unknown_alert_is_an_error_with_location():
    text = scenario(expect='alert WebIsDown on deployment "web"')
    _, diags = compile_text(text)
    [err] = [d for d in diags.errors() if d.code == "E2017"]
    line = next(i for i, t in enumerate(text.splitlines(), 1) if "WebIsDown" in t)
    assert (err.span.line, err.span.column) == (line, 7) and "alert_rule" in err.help


@pytest.mark.parametrize("rules, code", [
    ('alert_rule "KubePodNotReady" { expr = "up == 0" }', "E2018"),
    ('alert_rule "A" { expr = "up == 0" }\n  alert_rule "A" { expr = "up == 1" }', "E2002"),
    ('alert_rule "A" { }', "E2007"),
    ('alert_rule "A" { expr = "up == 0"  severity = "urgent" }', "E2010"),
    ('alert_rule "A" { expr = "up == 0"  for = 5 }', "E2009"),
    ('alert_rule "A" { expr = "up == 0"  fro = 5m }', "E2006"),
    ('alert_rule "A" { expr = "  " }', "E2010"),
    ('alert_rule "bad-name" { expr = "up == 0" }', "E2014"),
    ('alert_rule "A" { expr = "up == 0"  labels { severity = "x" } }', "E2010"),
])
def test_bad_alert_rules_are_reported(rules, code):
    _, diags = compile_text(scenario("  " + rules))
    assert code in {d.code for d in diags.errors()}, [(d.code, d.message) for d in diags.errors()]
    assert all(d.span.line > 0 for d in diags.errors())


def test_alert_rule_round_trips_through_the_printer():
    from itbench_dsl.diagnostics import Diagnostics
    from itbench_dsl.parser import parse_bytes
    from itbench_dsl.printer import print_document

    text = scenario('  alert_rule "WebDown" {\n    expr = "up == 0"\n    for = 1m\n  }', 'alert WebDown on deployment "web"')
    [doc] = parse_bytes(text.encode(), "x.itb", Diagnostics()).documents \
        if hasattr(parse_bytes(text.encode(), "x.itb", Diagnostics()), "documents") else [parse_bytes(text.encode(), "x.itb", Diagnostics())]
    printed = print_document(doc)
    assert 'alert_rule "WebDown" {' in printed and 'expr = "up == 0"' in printed
    assert print_document(parse_bytes(printed.encode(), "x.itb", Diagnostics())) == printed


def test_every_catalogue_alert_says_what_it_measures():
    """The placement check (E2035) and retarget read each alert's scope from the catalogue."""
    from itbench_dsl.alerts import CATALOGUE, SCOPES, COST, TRAFFIC, WORKLOAD

    assert set(SCOPES) == set(CATALOGUE)
    assert set(SCOPES.values()) <= {WORKLOAD, TRAFFIC, COST}


def _named_in_prompt(prompt: str, names) -> set[str]:
    return {n for n in names if re.search(rf"(?<![A-Za-z0-9_]){re.escape(n)}(?![A-Za-z0-9_])", prompt)}


@pytest.mark.parametrize("path", library_paths())
def test_every_alert_a_bundle_names_is_one_it_expects_and_ships(path):
    """Every alert a bundle names fires: the alerts the scenario expects, each with a rule in
    manifests/alert-rules.yaml, named alike by the v1 ground truth, the evaluator and the prompt; the v2 ground
    truth lists those expected on objects (not ITBench's v1 `on group` records) and, besides, only alerts the
    documented monitoring stack defines (kube-prometheus-stack: the catalogue's kubernetes-mixin alerts), as does
    the mitigation."""
    import yaml

    files = library_bundle(path)
    data = json.loads(files["scenario.json"])
    expected = sorted({a["name"] for a in data.get("alerts") or []})
    on_objects = {a["name"] for a in data.get("alerts") or [] if not a.get("group")}
    stack = {name for name, alert in CATALOGUE.items() if alert.source == "kubernetes-mixin"}
    if "itbench/groundtruth.yaml" in files:
        v2 = set(a["name"] for a in yaml.safe_load(files["itbench/groundtruth.yaml"])["spec"]["alerts"])
        assert on_objects <= v2 <= set(expected) | stack, (path, v2 - set(expected) - stack)
    if "itbench/groundtruth_v1.yaml" in files:
        v1 = {a["id"] for a in yaml.safe_load(files["itbench/groundtruth_v1.yaml"])["spec"].get("alerts") or []}
        assert v1 == set(expected), path
    shipped = {r["alert"] for o in yaml_documents(files, "manifests/alert-rules.yaml") for g in o["spec"]["groups"]
               for r in g["rules"]}
    assert shipped == set(expected) | _named_not_firing(data), path
    from itbench_dsl.backends.evaluator_file import spec_of

    spec = spec_of(files["evaluator.py"].decode("utf-8"))
    mitigation = spec.get("mitigation") or {}
    waited = {a["alert"] for a in mitigation.get("alerts") or []}
    waited |= {p["alert"] for p in mitigation.get("predicates") or [] if p.get("kind") == "alert" and p.get("alert")}
    assert waited <= set(expected) | stack, (path, waited - set(expected) - stack)
    prompt = files["prompt.md"].decode("utf-8")
    assert _named_in_prompt(prompt, set(CATALOGUE) | shipped) <= set(expected), path


def _finops_paths() -> list[str]:
    return [p for p in library_paths() if json.loads(library_bundle(p)["scenario.json"]).get("domain") == "finops"]


def test_every_finops_scenario_of_an_application_ships_the_same_rules():
    """Which rules exist must not say which waste a FinOps scenario has (`CPUSpend` alone says "CPU"): the rules
    are the domain's set (alerts.DOMAIN_ALERTS) in each namespace of the application, whatever the fault; every
    scenario expects alerts of that set only, so that the set is the union of what they expect."""
    by_application: dict[str, set[bytes]] = {}
    paths = _finops_paths()
    assert len(paths) >= 5
    for path in paths:
        files = library_bundle(path)
        data = json.loads(files["scenario.json"])
        expected = {a["name"] for a in data.get("alerts") or []}
        assert expected <= set(DOMAIN_ALERTS["finops"]), (path, expected - set(DOMAIN_ALERTS["finops"]))
        application = data["topology"].get("application") or path
        by_application.setdefault(application, set()).add(files["manifests/alert-rules.yaml"])
    assert all(len(rules) == 1 for rules in by_application.values()), sorted(by_application)


def test_a_finops_scenario_ships_the_domain_rules_whatever_it_expects():
    """An autoscaler's waste expects KubeHpaMaxedOut only, and ships the spend rules too: the rules say nothing."""
    files = library_bundle("finops/otel-frontend-hpa-misconfigured.itb")
    data = json.loads(files["scenario.json"])
    assert {a["name"] for a in data["alerts"]} == {"KubeHpaMaxedOut"}
    shipped = {r["alert"] for o in yaml_documents(files, "manifests/alert-rules.yaml") for g in o["spec"]["groups"]
               for r in g["rules"]}
    assert shipped == set(DOMAIN_ALERTS["finops"])
