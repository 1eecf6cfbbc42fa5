"""The `expect` statements that reproduce ITBench's v1 ground truth exactly: `group "ID" REF`, `group "ID"`
references, `alias`, `cause` (docs/language.md, "ITBench's v1 ground truth, exactly")."""

from __future__ import annotations

import yaml

from support.compiling import compile_text
from itbench_dsl.diagnostics import Diagnostics, render_human
from itbench_dsl.parser import parse_text
from itbench_dsl.printer import print_document

HEAD = '''scenario "v1-exact" {
  domain sre
  complexity low
  description "Product catalog crashes on an invalid command and the frontend fails."
  use app "opentelemetry-demo"
  fault invalid_command on deployment "product-catalog" {
    container = "product-catalog"
  }
'''


def compile_expect(expect: str):
    return compile_text(HEAD + expect + "}\n", "v1.itb")


def v1(expect: str) -> dict:
    result, diags = compile_expect(expect)
    assert not diags.errors(), render_human(diags)
    return yaml.safe_load(result.files["itbench/groundtruth_v1.yaml"].decode())["spec"]


def test_declared_groups_keep_their_ids_order_and_filters():
    spec = v1('''  expect {
    group "frontend-service-1" service "frontend"
    group "pc-deploy" deployment "product-catalog" {
      filter = ["product-catalog-.*", "product-catalog\\\\b"]
    }
    group "otel-demo-namespace-1" namespace "otel-demo" {
      name = "otel-demo"
      namespace = "otel-demo"
    }
    group "accounting-service-1" service "accounting"
    root_cause group "pc-deploy"
    alert HighRequestErrorRate on group "frontend-service-1" {
      description = "Frontend errors"
    }
    propagation deployment "product-catalog" -> group "frontend-service-1" {
      condition = "c1"
      effect = "e1"
    }
    propagation group "pc-deploy" -> group "frontend-service-1" {
      condition = "c2"
      effect = "e2"
    }
    alias group "frontend-service-1", pod "frontend-*"
    cause {
      category = "Change"
      condition = "To be specified"
      entity {
        group_id = "pc-deploy"
        kind = "Deployment"
        name = "product-catalog"
      }
      fault_mechanism = "custom"
    }
  }
''')
    ids = [g["id"] for g in spec["groups"]]
    assert ids[:4] == ["frontend-service-1", "pc-deploy", "otel-demo-namespace-1", "accounting-service-1"]
    groups = {g["id"]: g for g in spec["groups"]}
    assert groups["pc-deploy"]["filter"] == ["product-catalog-.*", "product-catalog\\b"]
    assert groups["pc-deploy"]["root_cause"] is True
    assert groups["otel-demo-namespace-1"] == {"id": "otel-demo-namespace-1", "kind": "Namespace", "name": "otel-demo",
                                               "namespace": "otel-demo"}
    assert groups["accounting-service-1"]["kind"] == "Service"  # a workload with no Service object
    assert "frontend-pod-1" in groups and not groups["frontend-service-1"].get("root_cause")
    assert spec["alerts"] == [{"group_id": "frontend-service-1", "id": "HighRequestErrorRate",
                               "metadata": {"description": "Frontend errors"}}]
    assert [(p["source"], p["target"], p["condition"]) for p in spec["propagations"]] == [
        ("pc-deploy", "frontend-service-1", "c1"), ("pc-deploy", "frontend-service-1", "c2")]
    assert spec["aliases"] == [["frontend-service-1", "frontend-pod-1"]]
    assert spec["fault"] == [{"category": "Change", "condition": "To be specified", "fault_mechanism": "custom",
                              "entity": {"group_id": "pc-deploy", "kind": "Deployment", "name": "product-catalog"}}]


def test_two_groups_on_one_object_are_told_apart_by_id():
    spec = v1('''  expect {
    group "gw-a" service "frontend"
    group "gw-b" service "frontend"
    root_cause group "gw-b"
    alert HighRequestErrorRate on group "gw-a"
  }
''')
    groups = {g["id"]: g for g in spec["groups"]}
    assert groups["gw-b"].get("root_cause") is True and "root_cause" not in groups["gw-a"]
    assert spec["alerts"][0]["group_id"] == "gw-a"


def test_without_the_additions_everything_is_derived():
    spec = v1('''  expect {
    alert HighRequestErrorRate on service "frontend"
  }
''')
    assert [g["id"] for g in spec["groups"]] == ["product-catalog-deployment-1", "frontend-service-1"]
    assert spec["fault"][0]["category"] == "Change"


def test_mistakes_are_reported():
    cases = {
        '    group "a" service "frontend"\n    group "a" service "cart"\n': "E2002",
        '    alert HighRequestErrorRate on group "nope"\n': "E2003",
        '    group "a" service "frontend" {\n      filter = ["x"]\n      name = "y"\n    }\n': "E2010",
        '    group "a" group "b"\n': "E2004",
        "    cause {\n    }\n": "E2007",
    }
    for body, code in cases.items():
        _, diags = compile_expect("  expect {\n" + body + "  }\n")
        assert code in {d.code for d in diags.errors()}, (body, render_human(diags))


def test_printer_round_trip():
    text = HEAD + '''  expect {
    group "a" service "frontend" {
      filter = ["frontend\\\\b"]
    }
    alias group "a", pod "frontend-*"
    cause {
      condition = "x"
    }
  }
}
'''
    document = parse_text(text, "t.itb", Diagnostics())
    assert print_document(document, text) == text
    assert parse_text(print_document(document), "t.itb", Diagnostics()) == parse_text(text, "t.itb", Diagnostics())


SOLUTIONS = '''  solution "Roll back the deployment" {
    id = "Rollback-Deployment"  # ITBench's own spelling
    step "Undo the rollout" run "kubectl -n otel-demo rollout undo deployment/product-catalog"
  }
  solution "Fix the command" {
    step "Restore the container's command"
  }
'''


def test_a_solution_keeps_itbenchs_id_or_derives_it_from_its_title():
    result, diags = compile_expect(SOLUTIONS)
    assert not diags.errors(), render_human(diags)
    actions = yaml.safe_load(result.files["itbench/groundtruth_v1.yaml"].decode())["spec"]["recommendedActions"]
    assert [a["solution"]["id"] for a in actions] == ["Rollback-Deployment", "fix_the_command"]
    assert actions[0]["solution"]["actions"] == ["Undo the rollout"]


def test_a_solution_id_prints_back_with_its_comment():
    text = HEAD + SOLUTIONS + "}\n"
    document = parse_text(text, "s.itb", Diagnostics())
    assert print_document(document, text) == text
    assert document.statements[-2].id == "Rollback-Deployment" and document.statements[-1].id is None


def test_a_solution_id_is_a_string():
    diags = Diagnostics()
    parse_text(HEAD + '  solution "x" {\n    id = 7\n    step "y"\n  }\n}\n', "s.itb", diags)
    (error,) = diags.errors()
    assert error.code.startswith("E1") and error.span.line == 10
