"""RBAC objects in topologies: roles, cluster roles and their bindings, checked by reference, emitted and
validated; a moved application's bindings follow it; no clash with the agent's access or CISO's objects."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from conftest import compile_text
from itbench_dsl.applications import app_search_path

TOPOLOGY = '''scenario "rbac-shop" {
  domain sre
  complexity low
  description "The collector of a shop cannot pull its image."
  topology {
    namespace "shop"
    serviceaccount "collector"
    clusterrole "collector" {
      rule {
        api_groups = [""]
        resources = ["pods", "namespaces"]
        verbs = ["get", "list", "watch"]
      }
      rule {
        non_resource_urls = ["/metrics"]
        verbs = ["get"]
      }
    }
    clusterrolebinding "collector" {
      clusterrole = "collector"
      subjects = [service_account("collector")]
    }
    role "reader" {
      rule {
        api_groups = [""]
        resources = ["configmaps"]
        resource_names = ["settings"]
        verbs = ["get"]
      }
    }
    rolebinding "reader" {
      role = "reader"
      subjects = [service_account("collector"), group("system:authenticated")]
    }
    rolebinding "viewer" {
      clusterrole = "view"
      subjects = [user("jane")]
    }
    EXTRA
    deployment "collector" {
      image = "otel/collector:1.0"
      service_account = "collector"
      port "otlp" = 4317
    }
    service "collector" { port "otlp" = 4317 }
  }
  fault nonexistent_image on deployment "collector"
  expect { root_cause deployment "collector" }
}
'''


def _objects(files: dict, name: str = "manifests/topology.yaml") -> dict:
    return {(d["kind"], d["metadata"].get("namespace"), d["metadata"]["name"]): d
            for d in yaml.safe_load_all(files[name]) if d}


def _errors(text: str) -> list[tuple[str, int, str]]:
    _, diags = compile_text(text)
    return [(d.code, d.span.line, d.message) for d in diags.errors()]


def test_rbac_objects_are_emitted_and_validate():
    result, diags = compile_text(TOPOLOGY.replace("EXTRA", ""))
    assert not diags.has_errors, [d.message for d in diags.items]
    objects = _objects(result.files)
    assert objects[("ClusterRole", None, "collector")]["rules"] == [
        {"apiGroups": [""], "resources": ["pods", "namespaces"], "verbs": ["get", "list", "watch"]},
        {"nonResourceURLs": ["/metrics"], "verbs": ["get"]}]
    assert objects[("ClusterRoleBinding", None, "collector")] == {
        "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding", "metadata": {"name": "collector"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "collector"},
        "subjects": [{"kind": "ServiceAccount", "name": "collector", "namespace": "shop"}]}
    assert objects[("Role", "shop", "reader")]["rules"][0]["resourceNames"] == ["settings"]
    assert objects[("RoleBinding", "shop", "reader")]["subjects"] == [
        {"kind": "ServiceAccount", "name": "collector", "namespace": "shop"},
        {"kind": "Group", "apiGroup": "rbac.authorization.k8s.io", "name": "system:authenticated"}]
    assert objects[("RoleBinding", "shop", "viewer")]["roleRef"]["name"] == "view"  # a cluster default
    # roles before the bindings, both after the service accounts they bind
    kinds = [k for k, _, _ in objects]
    assert kinds.index("ServiceAccount") < kinds.index("ClusterRole") < kinds.index("ClusterRoleBinding")


@pytest.mark.parametrize("extra, code, words", [
    ('clusterrolebinding "b" {\n clusterrole = "colector"\n subjects = [service_account("collector")]\n }',
     "E2003", "binds clusterrole `colector`, which is not a declared clusterrole"),
    ('rolebinding "b" {\n role = "writer"\n subjects = [service_account("collector")]\n }',
     "E2003", "binds role `writer`, which is not a declared role of namespace `shop`"),
    ('rolebinding "b" {\n role = "reader"\n subjects = [service_account("collecter")]\n }',
     "E2003", "binds service account `collecter`, which namespace `shop` does not declare"),
    ('clusterrolebinding "b" {\n role = "reader"\n subjects = [user("u")]\n }', "E2006", "a Role is namespaced"),
    ('rolebinding "b" {\n subjects = [user("u")]\n }', "E2007", "exactly one of `role` and `clusterrole`"),
    ('rolebinding "b" {\n clusterrole = "view"\n }', "E2007", "needs `subjects`"),
    ('rolebinding "b" {\n clusterrole = "view"\n subjects = [robot("r")]\n }', "E2008", "a subject of"),
    ('role "r" {\n rule {\n non_resource_urls = ["/metrics"]\n verbs = ["get"]\n }\n }', "E2010",
     "its rules cannot grant non-resource URLs"),
    ('clusterrole "r" {\n rule {\n resources = ["pods"]\n verbs = ["get"]\n }\n }', "E2007", "needs `api_groups`"),
    (('clusterrole "r" {\n rule {\n api_groups = [""]\n resources = ["pods"]\n non_resource_urls = ["/m"]\n '
      'verbs = ["get"]\n }\n }'), "E2010", "both resources and non-resource URLs"),
    ('clusterrole "r" {\n rule {\n api_groups = [""]\n resources = ["pods"]\n verbs = []\n }\n }', "E2010",
     "grants no verb"),
    ('role "itbench-agent" {\n rule {\n api_groups = [""]\n resources = ["pods"]\n verbs = ["get"]\n }\n }',
     "E2002", "the agent's own access objects"),
    ('serviceaccount "itbench-agent"', "E2002", "the agent's own access objects"),
])
def test_rbac_mistakes_are_located(extra, code, words):
    text = TOPOLOGY.replace("EXTRA", extra)
    errors = _errors(text)
    assert errors and errors[0][0] == code and words in errors[0][2], errors
    first_line = text.splitlines().index(next(l for l in text.splitlines() if l.strip() == extra.splitlines()[0])) + 1
    assert first_line <= errors[0][1] <= first_line + len(extra.splitlines())


def test_cluster_defaults_and_system_roles_need_no_declaration():
    extra = ('clusterrolebinding "admins" {\n clusterrole = "cluster-admin"\n subjects = [group("ops")]\n }\n'
             'rolebinding "delegator" {\n clusterrole = "system:auth-delegator"\n'
             ' subjects = [service_account("default")]\n }')
    result, diags = compile_text(TOPOLOGY.replace("EXTRA", extra))
    assert not diags.has_errors, [d.message for d in diags.items]
    assert ("RoleBinding", "shop", "delegator") in _objects(result.files)


OTEL = '''scenario "otel-rbac" {
  domain sre
  complexity low
  description "The checkout service cannot pull its image."
  USE
  fault nonexistent_image on deployment "checkout"
  expect { root_cause deployment "checkout" }
}
'''


APP = '''app "collector" {
  namespace "obs"
  serviceaccount "collector"
  clusterrole "collector-read" {
    rule {
      api_groups = [""]
      resources = ["pods"]
      verbs = ["get", "list"]
    }
  }
  clusterrolebinding "collector-read" {
    clusterrole = "collector-read"
    subjects = [service_account("collector", "obs")]
  }
  rolebinding "collector-view" {
    clusterrole = "view"
    subjects = [service_account("collector")]
  }
  deployment "collector" {
    image = "otel/collector:1.0"
    service_account = "collector"
  }
}
'''


def test_a_moved_application_takes_its_bindings_along(tmp_path: Path):
    (tmp_path / "collector.itb").write_text(APP)
    text = OTEL.replace("USE", 'use app "./collector.itb" { namespace = "telemetry" }').replace('"checkout"',
                                                                                              '"collector"')
    path = tmp_path / "s.itb"
    path.write_text(text)
    with app_search_path([]):
        result, diags = compile_text(text, str(path))
    assert not diags.has_errors, [d.message for d in diags.items]
    objects = _objects(result.files)
    assert objects[("ClusterRoleBinding", None, "collector-read")]["subjects"] == [
        {"kind": "ServiceAccount", "name": "collector", "namespace": "telemetry"}]
    binding = objects[("RoleBinding", "telemetry", "collector-view")]
    assert binding["subjects"] == [{"kind": "ServiceAccount", "name": "collector", "namespace": "telemetry"}]
    assert ("ClusterRole", None, "collector-read") in objects  # cluster-scoped: no namespace to move




def test_the_otel_demo_brings_its_rbac_without_clashing_with_the_agent():
    result, diags = compile_text(OTEL.replace("USE", 'use app "opentelemetry-demo"'))
    assert not diags.has_errors, [d.message for d in diags.items]
    topology, agent = _objects(result.files), _objects(result.files, "manifests/agent-access.yaml")
    rbac = {k for k in topology if k[0] in ("Role", "ClusterRole", "RoleBinding", "ClusterRoleBinding")}
    assert rbac == {("ClusterRole", None, "grafana-clusterrole"), ("ClusterRole", None, "otel-collector"),
                    ("ClusterRole", None, "prometheus"), ("ClusterRoleBinding", None, "grafana-clusterrolebinding"),
                    ("ClusterRoleBinding", None, "otel-collector"), ("ClusterRoleBinding", None, "prometheus"),
                    ("Role", "otel-demo", "grafana"), ("RoleBinding", "otel-demo", "grafana")}
    assert not set(topology) & set(agent)
    prometheus = topology[("ClusterRoleBinding", None, "prometheus")]
    assert prometheus["subjects"] == [{"kind": "ServiceAccount", "name": "prometheus", "namespace": "otel-demo"}]
    moved, diags = compile_text(OTEL.replace("USE", 'use app "opentelemetry-demo" { namespace = "shop" }'))
    assert not diags.has_errors, [d.message for d in diags.items]
    subjects = [s for k, o in _objects(moved.files).items() if k[0].endswith("Binding") for s in o["subjects"]]
    assert {s["namespace"] for s in subjects} == {"shop"}


def test_a_ciso_control_object_and_a_topology_binding_of_the_same_name_clash():
    text = '''scenario "ciso-clash" {
  domain ciso
  complexity high
  description "A service account is bound to cluster-admin."
  control "cis-k8s-5.1.1"
  task kyverno_policy
  topology {
    namespace "ciso-target"
    clusterrolebinding "ciso-target-cluster-admin-a" {
      clusterrole = "view"
      subjects = [group("auditors")]
    }
  }
}
'''
    errors = _errors(text)
    assert any(code == "E2010" and "also declared in the topology" in message for code, _, message in errors), errors
