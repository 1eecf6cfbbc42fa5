"""`mitigated when` predicates: the operators, paths into lists and embedded JSON, scopes, their types and
locations at compile time, and how the evaluator grades hostile states (docs/language.md, operators)."""

from __future__ import annotations

import copy
import json

import pytest

from itbench_dsl import builders as b
from itbench_dsl import checking
from itbench_dsl.analysis.corpus import all_cases
from itbench_dsl.parser import parse_text
from itbench_dsl.printer import print_document
from itbench_dsl.runtime.evaluator import predicate_check
from itbench_dsl.runtime.state import State

HEAD = """scenario "h4-preds" {
  domain sre
  complexity low
  description "The cart deployment is broken."
  topology {
    namespace "shop"
    deployment "cart" {
      image = "ghcr.io/example/cart:1.0"
      port "grpc" = 7070
      env {
        REDIS_ADDR = "redis:6379"
      }
    }
    deployment "redis" {
      image = "redis:7.2"
      port "redis" = 6379
    }
    service "cart" {
      port "grpc" = 7070
    }
    service "redis" {
      port "redis" = 6379
    }
    "cart" -> "redis"
  }
  fault scaled_to_zero on deployment "cart"
  expect {
    mitigated when {
      deployment "cart" ready
"""
TAIL = """    }
  }
  solution "Scale up" {
    step "Scale up" run "kubectl -n shop scale deployment/cart --replicas=1"
  }
}
"""


def check(*predicates: str):
    text = HEAD + "".join(f"      {p}\n" for p in predicates) + TAIL
    return checking.check_source(text.encode(), "input.itb"), text


def errors(*predicates: str):
    found, text = check(*predicates)
    return [(d.code, d.message, d.span.line, d.span.column) for d in found.diagnostics if d.severity == "error"], text


GOOD = [
    'deployment "cart" spec.replicas >= 1',
    'deployment "cart" spec.replicas in [1, 2]',
    'deployment "cart" containers[name="cart"].image matches "ghcr.io/example/cart:.*"',
    'deployment "cart" spec.template.spec.containers[0].image == "ghcr.io/example/cart:1.0"',
    'deployment "cart" containers[name="cart"].env[name="REDIS_ADDR"].value == "redis:6379"',
    'deployment "cart" metadata.name exists',
    'deployment "cart" metadata.annotations["example.com/broken"] not exists',
    'service "cart" spec.ports[name="grpc"].targetPort == 7070',
    'service "cart" spec.selector contains { "app.kubernetes.io/name" = "cart" }',
    'all pods in namespace "shop" ready',
    'all workloads { "app.kubernetes.io/name" = "cart" } in namespace "shop" ready',
    'all deployments ready within 5m',
]


@pytest.mark.parametrize("predicate", GOOD)
def test_each_form_checks_clean_and_self_validates(predicate):
    found, text = check(predicate)
    assert not found.has_errors, [d.message for d in found.diagnostics]
    document = parse_text(text)
    assert parse_text(print_document(document)) == document  # `itbench fmt` keeps every form


def test_the_corpus_holds_adversarial_states_for_the_new_forms():
    found, _ = check(*GOOD)
    assert not found.has_errors, [d.message for d in found.diagnostics]
    spec, cases = all_cases(found.result.scenario)
    names = [c.name for c in cases if c.name.startswith("predicate ")]
    for needle in ("the field missing", "the field null", "a list where a value was expected",
                   "the selected list item twice", "outside the list", "one pod not ready among ready ones",
                   "the scope emptied", "text the expression does not match"):
        assert any(needle in n for n in names), needle
    for case in cases:
        ok, what = case.run(spec)
        assert ok, f"{case.name}: {what}"


@pytest.mark.parametrize("predicate, code, column", [
    ('deployment "cart" spec.replica >= 1', "E2006", 25),            # a mistyped path points at the path
    ('deployment "cart" containers[nme="cart"].image == "x"', "E2006", 25),
    ('deployment "cart" spec.replicas == "three"', "E2008", 42),      # text for an integer
    ('deployment "cart" spec.replicas >= 1Gi', "E2009", 42),         # a unit on a plain number
    ('deployment "cart" metadata.name < "b"', "E2008", 41),          # text is not ordered
    ('deployment "cart" spec.replicas contains 1', "E2008", 25),
    ('deployment "cart" spec.replicas in 1', "E2008", 42),
    ('deployment "cart" spec.replicas matches "1"', "E2008", 25),
    ('deployment "cart" metadata.name matches "(a+)+"', "E2040", 47),
    ('deployment "cart" metadata.name matches "(a)\\\\1"', "E2040", 47),
    ('deployment "cart" metadata.name matches "("', "E2040", 47),
    ('deployment "cart" containers[-1].image exists', "E2010", 35),
    ('configmap "x" data["a"] as toml .b exists', "E2003", 17),
    ('all pods { app = "nothing" } ready', "E2026", 7),              # an empty scope would hold vacuously
    ('all services ready', "E2015", 11),
    ('all pods in namespace "nowhere" ready', "E2003", 29),
])
def test_errors_have_codes_and_point_at_what_is_wrong(predicate, code, column):
    found, _ = errors(predicate)
    assert found, predicate
    assert found[0][0] == code, found
    assert (found[0][2], found[0][3]) == (30, column), found


def test_a_mistyped_path_says_what_was_meant():
    found, _ = check('deployment "cart" spec.replica >= 1')
    error = next(d for d in found.diagnostics if d.code == "E2006")
    assert "replicas" in error.help


def test_the_expected_operator_error_lists_the_operators():
    found, _ = check('deployment "cart" spec.replicas = 1')
    error = next(d for d in found.diagnostics if d.code == "E1002")
    assert "an operator (`==`, `!=`, `<`, `<=`, `>`, `>=`)" in error.label
    for op in ("contains", "in", "matches", "exists"):
        assert op in error.label + error.help


def test_a_predicate_no_healthy_state_holds_is_located_at_its_path():
    found, text = check('deployment "cart" metadata.labels.nothere == "x"')  # metadata.labels is an open map
    error = next(d for d in found.diagnostics if d.code == "E4004")
    line = text.splitlines()[error.span.line - 1]
    assert line[error.span.column - 1:error.span.end_column - 1] == "metadata.labels.nothere"


# ---- the evaluator on hostile states ------------------------------------------------------------------------

DEPLOY = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "ns",
          "labels": {"app": "web"}},
          "spec": {"replicas": 2, "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [
              {"name": "app", "image": "web:1", "args": ["--port=8080", "--verbose"],
               "resources": {"limits": {"memory": "512Mi", "cpu": "250m"}}}]}}},
          "status": {"replicas": 2, "readyReplicas": 2, "availableReplicas": 2, "updatedReplicas": 2}}
FLAGS = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "flags", "namespace": "ns"},
         "data": {"demo.flagd.json": json.dumps({"flags": {"x": {"defaultVariant": "off"}}})}}
REF = {"apiVersion": "apps/v1", "kind": "Deployment", "namespace": "ns", "name": "web"}
CM = {"apiVersion": "v1", "kind": "ConfigMap", "namespace": "ns", "name": "flags"}


def pod(name: str, ready: bool = True, labels=None) -> dict:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "ns",
                                                           "labels": labels or {"app": "web"}},
            "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True" if ready else "False"}]}}


def grade(pred: dict, *objects) -> bool:
    return predicate_check(pred, State({"resources": {"kind": "List", "items": list(objects)}}))[0]


def field(path, op, value=None, vtype=None, target=REF) -> dict:
    pred = {"kind": "field", "target": target, "path": path, "op": op, "value": value}
    if vtype:
        pred["type"] = vtype
    return pred


def edited(obj: dict, edit) -> dict:
    out = copy.deepcopy(obj)
    edit(out)
    return out


def test_quantities_compare_by_value():
    limit = ["containers", ["name", "app"], "resources", "limits", "memory"]
    assert grade(field(limit, "<=", "1Gi"), DEPLOY)
    assert grade(field(limit, "==", "0.5Gi"), DEPLOY)
    assert not grade(field(limit, ">", "512Mi"), DEPLOY)
    assert grade(field(["containers", 0, "resources", "limits", "cpu"], "<", "0.3"), DEPLOY)


def test_durations_compare_as_durations():
    chaos = {"apiVersion": "chaos-mesh.org/v1alpha1", "kind": "PodChaos", "metadata": {"name": "c", "namespace": "ns"},
             "spec": {"duration": "1m30s"}}
    ref = {"apiVersion": "chaos-mesh.org/v1alpha1", "kind": "PodChaos", "namespace": "ns", "name": "c"}
    assert grade(field(["spec", "duration"], "==", "90s", "duration", ref), chaos)
    assert grade(field(["spec", "duration"], "<", "2m", "duration", ref), chaos)  # not 2 milli-units
    assert not grade(field(["spec", "duration"], ">", "5m", "duration", ref), chaos)


def test_text_that_reads_as_a_number_compares_exactly():
    obj = edited(DEPLOY, lambda o: o["metadata"]["labels"].update(version="01"))
    assert grade(field(["metadata", "labels", "version"], "==", "01", "text"), obj)
    assert not grade(field(["metadata", "labels", "version"], "==", "1", "text"), obj)


def test_missing_null_and_wrong_types_fail():
    path = ["spec", "replicas"]
    missing = edited(DEPLOY, lambda o: o["spec"].pop("replicas"))
    null = edited(DEPLOY, lambda o: o["spec"].update(replicas=None))
    listed = edited(DEPLOY, lambda o: o["spec"].update(replicas=[2]))
    mapped = edited(DEPLOY, lambda o: o["spec"].update(replicas={"value": 2}))
    for obj in (missing, null, listed, mapped):
        for pred in (field(path, "==", 2), field(path, "in", [1, 2]), field(path, ">=", 1), field(path, "!=", 3)):
            assert not grade(pred, obj), (pred, obj["spec"].get("replicas"))
    assert not grade(field(path, "exists"), missing) and not grade(field(path, "exists"), null)
    assert grade(field(path, "exists"), listed)  # present, whatever it holds
    assert grade(field(path, "not exists"), missing) and grade(field(path, "not exists"), null)
    assert not grade(field(path, "not exists"), DEPLOY)


def test_in_with_a_missing_field_fails():
    assert not grade(field(["spec", "paused"], "in", [True, False]), DEPLOY)


def test_contains_is_never_a_substring():
    args = ["containers", ["name", "app"], "args"]
    assert grade(field(args, "contains", "--verbose"), DEPLOY)
    assert not grade(field(args, "contains", "--port=80"), DEPLOY)  # a prefix of an element is not one
    joined = edited(DEPLOY, lambda o: o["spec"]["template"]["spec"]["containers"][0].update(
        args="--port=8080 --verbose"))
    assert not grade(field(args, "contains", "--verbose"), joined)  # text holding it is not a list holding it
    labels = ["metadata", "labels"]
    assert grade(field(labels, "contains", {"app": "web"}), DEPLOY)
    assert not grade(field(labels, "contains", {"app": "we"}), DEPLOY)


def test_matches_is_anchored_and_reads_text_only():
    image = ["containers", ["name", "app"], "image"]
    assert grade(field(image, "matches", "web:[0-9]+"), DEPLOY)
    assert not grade(field(image, "matches", "web"), DEPLOY)  # the whole value, not a part of it
    assert not grade(field(image, "matches", ".*"), edited(DEPLOY, lambda o: o["spec"]["template"]["spec"][
        "containers"][0].update(image=["web:1"])))


def test_duplicate_list_keys_are_ambiguous():
    twice = edited(DEPLOY, lambda o: o["spec"]["template"]["spec"]["containers"].append(
        dict(o["spec"]["template"]["spec"]["containers"][0], image="evil:1")))
    image = ["containers", ["name", "app"], "image"]
    assert not grade(field(image, "==", "web:1"), twice)
    assert not grade(field(image, "exists"), twice)
    assert not grade(field(image, "not exists"), twice)


def test_embedded_json():
    path = ["data", "demo.flagd.json", {"parse": "json"}, "flags", "x", "defaultVariant"]
    assert grade(field(path, "==", "off", target=CM), FLAGS)
    reserialised = edited(FLAGS, lambda o: o["data"].update({"demo.flagd.json": json.dumps(
        {"flags": {"x": {"defaultVariant": "off"}}}, indent=7, sort_keys=True)}))
    assert grade(field(path, "==", "off", target=CM), reserialised)
    broken = edited(FLAGS, lambda o: o["data"].update({"demo.flagd.json": "{ not json"}))
    for pred in (field(path, "==", "off", target=CM), field(path, "not exists", target=CM),
                 field(path, "exists", target=CM)):
        assert not grade(pred, broken)
    as_list = edited(FLAGS, lambda o: o["data"].update({"demo.flagd.json": json.dumps([{"flags": {}}])}))
    assert not grade(field(path, "==", "off", target=CM), as_list)  # a list where a map was expected


def scope(what="pods", selector=None, expected=()):
    kinds = {"pods": ["Pod"], "workloads": ["Deployment", "StatefulSet", "DaemonSet"]}[what]
    return {"kind": "scope", "target": None, "scope": what, "kinds": kinds, "selector": selector or {},
            "namespaces": ["ns"], "expected": list(expected)}


def test_scopes():
    assert grade(scope(), pod("web-1"), pod("web-2"))
    assert not grade(scope(), pod("web-1"), pod("web-2", ready=False))  # one not ready among ready ones
    assert not grade(scope())  # an empty namespace is not healthy
    assert not grade(scope(selector={"app": "api"}), pod("web-1"))  # nothing selected
    assert grade(scope(selector={"app": "web"}), pod("web-1"), pod("db-0", ready=False, labels={"app": "db"}))
    expected = [{"kind": "Deployment", "namespace": "ns", "name": "web"}]
    assert grade(scope(expected=expected), DEPLOY, pod("web-1"))
    assert not grade(scope(expected=expected), pod("web-1"))  # the workload deleted: its pods are not enough
    assert grade(scope("workloads"), DEPLOY)
    unavailable = edited(DEPLOY, lambda o: o["status"].update(availableReplicas=1))
    assert not grade(scope("workloads"), unavailable)


def test_builders_make_what_the_parser_makes():
    target = b.ref("deployment", "cart")
    built = [
        b.field_predicate(target, ["spec", "ports", b.select("name", "http"), "targetPort"], "==", 8080),
        b.field_predicate(b.ref("configmap", "flags"), ["data", "demo.flagd.json", b.parse_as("json"), "flags"],
                          "exists"),
        b.field_predicate(target, ["containers", b.index(0), "args"], "contains", "--verbose"),
        b.field_predicate(target, "spec.replicas", "in", [1, 2]),
        b.scope_predicate("pods", {"app": "web"}, "shop", within="5m"),
    ]
    document = b.scenario("s", [b.expect([b.mitigated(built)])])
    text = print_document(document)
    assert parse_text(text) == document
    with pytest.raises(ValueError):
        b.field_predicate(target, "spec.replicas", "~=", 1)
    with pytest.raises(ValueError):
        b.field_predicate(target, "spec.replicas", "exists", 1)
