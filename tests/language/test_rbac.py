"""RBAC objects in topologies: roles, cluster roles and their bindings, checked by reference, emitted and
validated; a moved application's bindings follow it; no clash with the agent's access or CISO's objects."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from support.compiling import compile_text
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


# ---- access as the API server's RBAC authorizer decides it (runtime.evaluator.allowed) ----------------------

from itbench_dsl.runtime import evaluator as runtime  # noqa: E402

SA = {"kind": "ServiceAccount", "namespace": "shop", "name": "reader"}
RBAC = "rbac.authorization.k8s.io/v1"


def _role(kind, name, rules, namespace=None):
    meta = {"name": name, **({"namespace": namespace} if namespace else {})}
    return {"apiVersion": RBAC, "kind": kind, "metadata": meta, "rules": rules}


def _binding(kind, name, role_kind, role, subjects, namespace=None):
    meta = {"name": name, **({"namespace": namespace} if namespace else {})}
    return {"apiVersion": RBAC, "kind": kind, "metadata": meta, "subjects": subjects,
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": role_kind, "name": role}}


def _can(items, verb, resource, namespace="shop", subject=SA, name=None):
    st = runtime.State({"resources": {"kind": "List", "items": items}})
    res, group, sub = runtime.parse_resource(resource)
    return runtime.allowed(st, subject, verb, res, namespace, group, sub, name)[0]


LIST_PODS = {"apiGroups": [""], "resources": ["pods"], "verbs": ["list"]}
SA_SUBJECT = {"kind": "ServiceAccount", "name": "reader", "namespace": "shop"}


def test_a_rule_restricted_by_resource_names_grants_no_list():
    role = _role("Role", "r", [dict(LIST_PODS, verbs=["get", "list"], resourceNames=["one"])], "shop")
    items = [role, _binding("RoleBinding", "b", "Role", "r", [SA_SUBJECT], "shop")]
    assert not _can(items, "list", "pods")  # a list names no object: a named rule never grants it
    assert _can(items, "get", "pods", name="one") and not _can(items, "get", "pods", name="two")


def test_only_the_subjects_a_binding_binds_are_granted():
    role = _role("Role", "r", [LIST_PODS], "shop")
    for subjects, granted in (([SA_SUBJECT], True),
                              ([{"kind": "ServiceAccount", "name": "reader"}], True),  # the binding's namespace
                              ([{"kind": "ServiceAccount", "name": "reader", "namespace": "other"}], False),
                              ([{"kind": "ServiceAccount", "name": "writer", "namespace": "shop"}], False),
                              ([{"kind": "User", "name": "system:serviceaccount:shop:reader"}], True),
                              ([{"kind": "Group", "name": "system:serviceaccounts:shop"}], True),
                              ([{"kind": "Group", "name": "system:serviceaccounts:other"}], False),
                              ([], False)):
        items = [role, _binding("RoleBinding", "b", "Role", "r", subjects, "shop")]
        assert _can(items, "list", "pods") is granted, subjects


def test_roles_apply_where_they_are_bound():
    cluster_role = _role("ClusterRole", "pods", [LIST_PODS])
    by_role_binding = [cluster_role, _binding("RoleBinding", "b", "ClusterRole", "pods", [SA_SUBJECT], "shop")]
    assert _can(by_role_binding, "list", "pods") and not _can(by_role_binding, "list", "pods", namespace="other")
    assert not _can(by_role_binding, "list", "pods", namespace=None)  # cluster-wide: RoleBindings grant nothing
    everywhere = [cluster_role, _binding("ClusterRoleBinding", "b", "ClusterRole", "pods", [SA_SUBJECT])]
    assert _can(everywhere, "list", "pods", namespace="other") and _can(everywhere, "list", "pods", namespace=None)
    # a ClusterRoleBinding's ServiceAccount subject without a namespace binds nobody
    unqualified = [cluster_role, _binding("ClusterRoleBinding", "b", "ClusterRole", "pods",
                                          [{"kind": "ServiceAccount", "name": "reader"}])]
    assert not _can(unqualified, "list", "pods")
    # a Role of another namespace, or a role the state does not hold, grants nothing
    elsewhere = [_role("Role", "r", [LIST_PODS], "other"), _binding("RoleBinding", "b", "Role", "r", [SA_SUBJECT], "shop")]
    assert not _can(elsewhere, "list", "pods")


@pytest.mark.parametrize("rule, verb, resource, granted", [
    ({"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]}, "delete", "deployments.apps", True),
    ({"apiGroups": ["apps"], "resources": ["deployments"], "verbs": ["list"]}, "list", "pods", False),
    ({"apiGroups": [""], "resources": ["deployments"], "verbs": ["list"]}, "list", "deployments.apps", False),
    ({"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}, "get", "pods/log", False),
    ({"apiGroups": [""], "resources": ["pods/log"], "verbs": ["get"]}, "get", "pods/log", True),
    ({"apiGroups": [""], "resources": ["*/log"], "verbs": ["get"]}, "get", "pods/log", True),
    ({"apiGroups": [""], "resources": ["pods/*"], "verbs": ["get"]}, "get", "pods/log", False),  # no such form
    ({"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "watch"]}, "list", "pods", False),
])
def test_a_rule_matches_as_the_authorizer_matches(rule, verb, resource, granted):
    items = [_role("Role", "r", [rule], "shop"), _binding("RoleBinding", "b", "Role", "r", [SA_SUBJECT], "shop")]
    assert _can(items, verb, resource) is granted


ACCESS = '''scenario "rbac-access" {
  domain sre
  complexity low
  description "The reader cannot list pods."
  topology {
    namespace "shop"
    serviceaccount "reader"
    role "reader" {
      rule {
        api_groups = [""]
        resources = ["pods"]
        verbs = ["list"]
      }
    }
    rolebinding "reader" {
      role = "reader"
      subjects = [service_account("reader")]
    }
    deployment "web" { image = "nginx:1.27" }
  }
  fault wrong_role_resource on role "reader" {
    resources = ["deployments"]
    api_groups = ["apps"]
  }
  expect {
    root_cause role "reader"
    mitigated when {
      PREDICATE
    }
  }
}
'''


def test_an_access_predicate_compiles_prints_and_grades():
    from itbench_dsl.parser import parse_text
    from itbench_dsl.printer import print_document

    text = ACCESS.replace("PREDICATE", 'can serviceaccount "reader" "list" "pods"\n      '
                                       'cannot serviceaccount "reader" "delete" "pods" in namespace "shop"')
    result, diags = compile_text(text)
    assert not diags.has_errors, [d.message for d in diags.items]
    predicates = [p for p in result.scenario.mitigation.predicates if p.kind == "access"]
    assert [(p.op, p.path, p.namespace) for p in predicates] == [("can", ["list", "pods"], "shop"),
                                                                ("cannot", ["delete", "pods"], "shop")]
    printed = print_document(parse_text(text), text)
    assert 'can serviceaccount "reader" "list" "pods"\n' in printed
    assert 'cannot serviceaccount "reader" "delete" "pods" in namespace "shop"\n' in printed
    assert print_document(parse_text(printed), printed) == printed
    from itbench_dsl.analysis import corpus, states

    assert corpus.self_validate(result.scenario) == []


@pytest.mark.parametrize("predicate, code, words", [
    ('can deployment "web" "list" "pods"', "E2004", "must be a serviceaccount"),
    ('can serviceaccount "reader" "List" "pods"', "E2008", "is not a verb"),
    ('can serviceaccount "reader" "list" "Pods!"', "E2008", "is not a resource"),
    ('can serviceaccount "reader" "list" "pods" in deployment "web"', "E2004", "takes a namespace"),
    ('can serviceaccount "raeder" "list" "pods"', "E2003", "raeder"),
])
def test_access_predicate_mistakes_are_located(predicate, code, words):
    errors = _errors(ACCESS.replace("PREDICATE", predicate))
    assert errors and errors[0][0] == code and words in errors[0][2], errors
