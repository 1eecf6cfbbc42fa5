"""What the agent can read in the cluster must not give the answer away (agent_view.py, E4010)."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import pytest
from support.compiling import SCENARIOS

from itbench_dsl import agent_view
from itbench_dsl.backends import prompt as prompt_backend
from itbench_dsl.checking import check_source
from itbench_dsl.compiler import compile_source
from itbench_dsl.diagnostics import Diagnostics

SHOP = """scenario "{name}" {{
  domain sre
  complexity low
  description "The web front end cannot reach cart."
  {uses}
  topology {{
    namespace "shop"
    deployment "cart" {{
      image = "ghcr.io/example/cart:1.0"
      port "grpc" = 7070
      labels {{ app = "cart" }}
    }}
    deployment "web" {{
      image = "ghcr.io/example/web:1.0"
      port "http" = 8080
      env {{ CART_ADDR = "cart:7070" }}
    }}
    service "cart" {{ port "grpc" = 7070 }}
    service "web" {{ port "http" = 8080 }}
    "web" -> "cart"
  }}
  {faults}
  expect {{
    root_cause deployment "cart"
    alert KubePodNotReady on pod "cart-*"
    mitigated when {{ deployment "cart" ready }}
  }}
}}
"""
MARKING_KIND = """fault_kind "marked_denial" {
  mechanism = "test.networkpolicy.ingress:denied"
  targets = [deployment]
  summary = "Creates a NetworkPolicy that denies all ingress to a workload's pods."
  symptoms = ["readiness"]
  create "networkpolicy" "{{ target.metadata.name }}-policy" {
    metadata { labels = { team = "chaos-engineering" } }
    spec {
      podSelector = { matchLabels = { app = "{{ target.metadata.name }}" } }
      policyTypes = ["Ingress"]
      ingress = []
    }
  }
}
"""


def _findings(text: str, path: str = "s.itb") -> list[agent_view.Finding]:
    diags = Diagnostics()
    result = compile_source(text.encode(), path, diags)
    assert result.files, [d.message for d in diags.errors()]
    return agent_view.findings(result.scenario, result.files, prompt_backend.render_chunks(result.scenario))


def test_an_application_word_is_never_the_faults():
    """`cart` is the application's (a deployment, a service, a label): a scenario named after cart's fault may say
    cart anywhere; the fault's own words are what is looked for."""
    found = _findings(SHOP.format(name="shop-cart-nonexistent-image", uses="",
                                  faults='fault nonexistent_image on deployment "cart"'))
    assert found == []
    vocab = agent_view.vocabulary(
        compile_source(SHOP.format(name="shop-cart-nonexistent-image", uses="",
                                   faults='fault nonexistent_image on deployment "cart"').encode(), "s.itb",
                       Diagnostics()).scenario, {"cart", "web", "shop"})
    assert vocab.find("cart-nonexistent") == ("nonexistent", "a word of the fault `nonexistent_image`")
    assert vocab.find("cart") is None and vocab.find("web-frontend") is None


def test_a_label_only_injected_objects_carry_is_found(tmp_path: Path):
    (tmp_path / "faults").mkdir()
    (tmp_path / "faults" / "mine.itb").write_text(MARKING_KIND)
    text = SHOP.format(name="shop-cart-cut-off", uses='use faults "./faults/mine.itb"',
                       faults='fault marked_denial on deployment "cart"')
    found = _findings(text, str(tmp_path / "s.itb"))
    [marker] = [f for f in found if f.why.startswith("a marker")]
    assert marker.kind == "NetworkPolicy" and marker.name == "cart-policy" and marker.where == "inject/apply.yaml"
    assert marker.field == 'metadata.labels["team"]'


def test_the_check_reports_it_where_the_object_comes_from(tmp_path: Path):
    (tmp_path / "faults").mkdir()
    (tmp_path / "faults" / "mine.itb").write_text(MARKING_KIND)
    text = SHOP.format(name="shop-cart-cut-off", uses='use faults "./faults/mine.itb"',
                       faults='fault marked_denial on deployment "cart"')
    checked = check_source(text.encode(), str(tmp_path / "s.itb"))
    [diag] = [d for d in checked.diagnostics if d.code == "E4010"]
    assert "NetworkPolicy `shop/cart-policy`" in diag.message and 'metadata.labels["team"]' in diag.message
    line = text.splitlines()[diag.span.line - 1]
    assert "fault marked_denial" in line  # at the fault that creates it


def test_a_rule_group_named_after_the_scenario_is_found():
    """The alert rules are named after the application now; a scenario's name in them would be read by anyone
    who asks Prometheus for its rules."""
    text = SHOP.format(name="shop-cart-nonexistent-image", uses="", faults='fault nonexistent_image on deployment "cart"')
    diags = Diagnostics()
    result = compile_source(text.encode(), "s.itb", diags)
    files = dict(result.files)
    files["manifests/alert-rules.yaml"] = files["manifests/alert-rules.yaml"].replace(
        b"name: shop.", b"name: shop-cart-nonexistent-image.")
    found = agent_view.findings(result.scenario, files, objects=agent_view.from_files(files))
    assert [f.field for f in found] and all(f.kind == "PrometheusRule" for f in found)
    assert any(f.field.startswith("spec.groups[") and "scenario's name" in f.why for f in found)


def test_rbac_decides_what_is_read():
    access = agent_view.Access([
        {"kind": "ServiceAccount", "metadata": {"name": "a", "namespace": "shop"}},
        {"kind": "Role", "metadata": {"name": "r", "namespace": "shop"},
         "rules": [{"apiGroups": ["apps"], "resources": ["deployments"], "verbs": ["get", "list"]}]},
        {"kind": "RoleBinding", "metadata": {"name": "r", "namespace": "shop"},
         "roleRef": {"kind": "Role", "name": "r"}, "subjects": [{"kind": "ServiceAccount", "name": "a", "namespace": "shop"}]},
    ])
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "x", "namespace": "shop"}}
    assert access.can_read(deployment)
    assert not access.can_read({**deployment, "metadata": {"name": "x", "namespace": "other"}})
    assert not access.can_read({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "x", "namespace": "shop"}})


@lru_cache(maxsize=None)
def _library(path: str):
    diags = Diagnostics()
    result = compile_source((SCENARIOS / path).read_bytes(), str(SCENARIOS / path), diags)
    assert result.files, path
    return result


@pytest.mark.parametrize("path", sorted(str(p.relative_to(SCENARIOS)) for p in SCENARIOS.rglob("*.itb")))
def test_the_library_gives_nothing_away(path):
    result = _library(path)
    found = agent_view.findings(result.scenario, result.files, prompt_backend.render_chunks(result.scenario))
    assert found == [], [f.message() for f in found]
