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


# ---- the values of what the agent reads (every string, not only names and labels) -----------------------------


def _compiled(faults: str, name: str = "shop-cart-down", uses: str = "", path: str = "s.itb"):
    if "_chaos on " in faults:  # the agent may not end a Chaos Mesh object: diagnosis only (E2037)
        uses += "\n  tasks diagnose"
    text = SHOP.format(name=name, uses=uses, faults=faults)
    diags = Diagnostics()
    result = compile_source(text.encode(), path, diags)
    assert result.files, [d.message for d in diags.errors()]
    return result


def _value_findings(result, files=None) -> list[agent_view.Finding]:
    files = files if files is not None else result.files
    return agent_view.findings(result.scenario, files, prompt_backend.render_chunks(result.scenario),
                               objects=agent_view.from_files(files) if files is not result.files else None)


@pytest.mark.parametrize("tag, word", [("itbench-nonexistent", "itbench"), ("0.0.0-missing", "missing"),
                                       ("broken", "broken"), ("nonexistent-1.0", "nonexistent")])
def test_an_image_tag_that_says_the_fault_is_found(tag, word):
    result = _compiled(f'fault nonexistent_image on deployment "cart" {{ image = "ghcr.io/example/cart:{tag}" }}')
    [found] = _value_findings(result)
    assert (found.where, found.kind, found.name) == ("inject/apply.yaml", "Deployment", "cart")
    assert found.field == "spec.template.spec.containers[0].image" and f"`{word}`" in found.why


def test_the_default_values_of_the_faults_say_nothing():
    """The defaults: an image tag, a node, a chaos experiment's name, a selector that say nothing of the fault."""
    for fault in ('fault nonexistent_image on deployment "cart"', 'fault nonexistent_node on deployment "cart"',
                  'fault pod_chaos on deployment "cart" { action = pod_kill }',
                  'fault network_chaos on deployment "web" { action = delay  latency = 2s  peer = "cart" }',
                  'fault invalid_service_selector on service "cart"'):
        assert _value_findings(_compiled(fault)) == [], fault


def test_a_node_selector_value_that_says_the_fault_is_found():
    result = _compiled('fault nonexistent_node on deployment "cart" { node = "nonexistent-node" }')
    [found] = _value_findings(result)
    assert found.field == 'spec.template.spec.nodeSelector["kubernetes.io/hostname"]'
    assert "nonexistent" in found.why and found.kind == "Deployment"


def test_a_chaos_experiment_named_after_its_action_is_found():
    """`cart-pod-kill` says the fault to whoever lists PodChaos objects; its type (PodChaos) may show, no more."""
    result = _compiled('fault pod_chaos on deployment "cart" { action = pod_kill  name = "cart-pod-kill" }')
    # the agent reads no fault tool's objects by default (access.FAULT_TOOL_GROUPS); granted them, it reads the name
    assert not [f for f in _value_findings(result) if f.field == "metadata.name"]

    def grant(objects):
        [role] = [o for o in objects if o["kind"] == "ClusterRole"]
        role["rules"].append({"apiGroups": ["chaos-mesh.org"], "resources": ["podchaos"], "verbs": ["list"]})
    files = _edited(result, "manifests/agent-access.yaml", grant)
    [found] = [f for f in _value_findings(result, files) if f.field == "metadata.name"]
    assert (found.kind, found.name, found.namespace) == ("PodChaos", "cart-pod-kill", "chaos-mesh")
    assert "`kill`" in found.why


def _edited(result, where: str, edit) -> dict:
    """The bundle's files with the objects of `where` changed by `edit(list of objects)`."""
    import yaml

    files = dict(result.files)
    objects = [d for d in yaml.safe_load_all(files[where]) if isinstance(d, dict)]
    edit(objects)
    files[where] = yaml.safe_dump_all(objects, sort_keys=False).encode()
    return files


def test_a_script_named_after_the_fault_is_found():
    result = _compiled('fault nonexistent_image on deployment "cart"')

    def edit(objects):
        [deployment] = [o for o in objects if o["kind"] == "Deployment" and o["metadata"]["name"] == "cart"]
        deployment["spec"]["template"]["spec"]["containers"][0]["command"] = ["/bin/sh", "/scripts/fill-memory.sh"]
    found = _value_findings(result, _edited(result, "inject/apply.yaml", edit))
    assert [(f.field, f.text) for f in found] == [("spec.template.spec.containers[0].command[1]",
                                                   "/scripts/fill-memory.sh")]
    assert "`fill`" in found[0].why


def test_a_storage_class_that_says_what_is_wrong_is_found():
    result = _compiled('fault nonexistent_image on deployment "cart"')

    def edit(objects):
        objects.append({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                        "metadata": {"name": "cart-data", "namespace": "shop"},
                        "spec": {"storageClassName": "missing-class", "accessModes": ["ReadWriteOnce"]}})
    found = _value_findings(result, _edited(result, "inject/apply.yaml", edit))
    assert [(f.kind, f.field, f.text) for f in found] == [("PersistentVolumeClaim", "spec.storageClassName",
                                                          "missing-class")]


def test_a_topology_value_that_says_what_is_wrong_is_found():
    """What the application deploys is read too: a name-like value (an image, a node) saying what is wrong."""
    result = _compiled('fault nonexistent_image on deployment "cart"')

    def edit(objects):
        [web] = [o for o in objects if o["kind"] == "Deployment" and o["metadata"]["name"] == "web"]
        web["spec"]["template"]["spec"]["nodeSelector"] = {"pool": "broken-nodes"}
    found = _value_findings(result, _edited(result, "manifests/topology.yaml", edit))
    assert [(f.where, f.name, f.field) for f in found] == [
        ("manifests/topology.yaml", "web", 'spec.template.spec.nodeSelector["pool"]')]


def test_what_a_patch_keeps_and_a_tools_content_are_not_read():
    """A fault tool's spec is the fault the agent is to find (`action: pod-kill`); enumerated values (`DENY`) and
    a value's words the patch did not add are the object's, not the fault's."""
    result = _compiled('fault pod_chaos on deployment "cart" { action = pod_kill }')
    assert _value_findings(result) == []
    assert agent_view._ENUM.fullmatch("DENY") and not agent_view._ENUM.fullmatch("cart-nonexistent")


def test_the_check_locates_a_value_at_the_fault():
    text = SHOP.format(name="shop-cart-down", uses="",
                       faults='fault nonexistent_image on deployment "cart" { image = "ghcr.io/example/cart:broken" }')
    checked = check_source(text.encode(), "s.itb")
    [diag] = [d for d in checked.diagnostics if d.code == "E4010"]
    assert "spec.template.spec.containers[0].image" in diag.message and "`broken`" in diag.message
    assert "fault nonexistent_image" in text.splitlines()[diag.span.line - 1]


def test_an_enumerated_looking_value_still_may_not_say_what_is_wrong():
    """`Missing` looks like an enumerated value (`Ingress`, `DENY`), which the fault's words are not looked for in;
    a word that says what is wrong is looked for in every value."""
    result = _compiled('fault nonexistent_node on deployment "cart" { node = "Missing" }')
    [found] = _value_findings(result)
    assert found.field == 'spec.template.spec.nodeSelector["kubernetes.io/hostname"]' and "`missing`" in found.why


def test_a_harness_label_on_the_agents_own_access_is_found():
    """The agent reads its own Role and ServiceAccount: a label only the harness's objects carry
    (`app.kubernetes.io/managed-by: itbench`) would list the harness's other objects, injected ones included. The
    check names the object and the field; the compiled access carries none."""
    text = SHOP.format(name="shop-cart-nonexistent-image", uses="", faults='fault nonexistent_image on deployment "cart"')
    result = compile_source(text.encode(), "s.itb", Diagnostics())
    objects = agent_view.cluster_objects(result.scenario)
    assert not [f for f in agent_view.findings(result.scenario, result.files, objects=objects)
                if f.where == "manifests/agent-access.yaml"]
    marked = dict(objects)
    marked["manifests/agent-access.yaml"] = [
        {**o, "metadata": {**o["metadata"], "labels": {"app.kubernetes.io/managed-by": "itbench"}}}
        for o in objects["manifests/agent-access.yaml"]]
    found = [f for f in agent_view.findings(result.scenario, result.files, objects=marked)
             if f.where == "manifests/agent-access.yaml"]
    assert found and all(f.why.startswith("a marker") and f.field == 'metadata.labels["app.kubernetes.io/managed-by"]'
                         for f in found)
    assert {f.kind for f in found} >= {"ServiceAccount", "Role", "RoleBinding", "ClusterRole"}
    role = next(f for f in found if f.kind == "Role" and f.namespace == "shop")
    assert "Role `shop/itbench-agent` (manifests/agent-access.yaml)" in role.message()
    assert "agent's access objects" in role.hint()
