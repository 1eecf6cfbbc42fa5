"""Ingresses as topology objects: their manifest, their backends checked against the Services they name, the
faults that misroute them, and `ready` as an ingress controller would resolve them."""

from __future__ import annotations

import copy

import yaml

from itbench_dsl.analysis import states
from itbench_dsl.compiler import compile_source
from itbench_dsl.diagnostics import Diagnostics
from itbench_dsl.runtime.evaluator import ingress_problem
from itbench_dsl.runtime.state import State

SOURCE = '''scenario "shop-ingress" {
  domain sre
  complexity low
  description "The shop's ingress sends its API path to a service that does not exist."
  tasks mitigate
  topology {
    namespace "shop"
    deployment "web" {
      image = "nginx:1.27"
      port "http" = 80
    }
    service "web" {
      port "http" = 80
    }
    deployment "api" {
      image = "nginx:1.27"
      port "http" = 8080
    }
    service "api" {
      port "http" = 8080
    }
    ingress "shop" {
      class = "nginx"
      annotations { "nginx.ingress.kubernetes.io/ssl-redirect" = "false" }
      rule "shop.example.com" {
        path "/" {
          service = "web"
          port = "http"
        }
        path "/api" {
          service = "BACKEND"
          port = PORT
          path_type = "Exact"
        }
      }
    }
  }
  FAULT
  expect {
    root_cause ingress "shop"
    mitigated when {
      ingress "shop" ready
    }
  }
}
'''
MISROUTE = 'fault misrouted_ingress on ingress "shop" {\n    path = "/api"\n    service = "api-v2"\n  }'


def _compile(backend: str = "api", port: str = "8080", fault: str = MISROUTE):
    diags = Diagnostics()
    source = SOURCE.replace("BACKEND", backend).replace("PORT", port).replace("FAULT", fault)
    return compile_source(source.encode(), "shop.itb", diags), diags, source


def _line(source: str, text: str) -> int:
    return next(i for i, line in enumerate(source.splitlines(), 1) if text in line)


def test_an_ingress_is_rendered_with_its_class_rules_and_backends():
    result, diags, _ = _compile()
    assert not diags.errors(), [d.message for d in diags.errors()]
    [ingress] = [d for d in yaml.safe_load_all(result.files["manifests/topology.yaml"].decode())
                 if d and d["kind"] == "Ingress"]
    assert ingress["apiVersion"] == "networking.k8s.io/v1"
    assert ingress["metadata"]["annotations"] == {"nginx.ingress.kubernetes.io/ssl-redirect": "false"}
    assert ingress["spec"]["ingressClassName"] == "nginx"
    [rule] = ingress["spec"]["rules"]
    assert rule["host"] == "shop.example.com"
    assert rule["http"]["paths"] == [
        {"path": "/", "pathType": "Prefix", "backend": {"service": {"name": "web", "port": {"name": "http"}}}},
        {"path": "/api", "pathType": "Exact", "backend": {"service": {"name": "api", "port": {"number": 8080}}}}]


def test_a_backend_naming_no_service_or_no_port_of_it_is_located():
    _, diags, source = _compile(backend="apii")
    [error] = diags.errors()
    assert error.code == "E2003" and "`apii`" in error.message and "`api`" in error.help
    assert error.span.line == _line(source, 'service = "apii"')
    _, diags, source = _compile(port="9090")
    [error] = diags.errors()
    assert error.code == "E2003" and "no port `9090`" in error.message
    assert error.span.line == _line(source, "port = 9090")


def test_an_ingress_needs_a_class_and_a_rule():
    _, _, source = _compile()
    diags = Diagnostics()
    compile_source(source.replace('      class = "nginx"\n', "").encode(), "shop.itb", diags)
    [error] = diags.errors()
    assert error.code == "E2007" and "`class`" in error.message


def _graded(fault: str = MISROUTE):
    result, diags, _ = _compile(fault=fault)
    assert not diags.errors(), [d.message for d in diags.errors()]
    namespace: dict = {"__name__": "bundle_evaluator"}
    exec(compile(result.files["evaluator.py"], "evaluator.py", "exec"), namespace)  # noqa: S102
    derived = states.derive(result.scenario)

    def graded(state) -> dict:
        return namespace["evaluate"](namespace["SPEC"], None, copy.deepcopy(state), task="mitigate")
    return derived, graded


def _ingress(state: dict) -> dict:
    return next(o for o in state["resources"]["items"] if o["kind"] == "Ingress")


def test_a_misrouted_ingress_is_not_ready_until_its_path_goes_back():
    derived, graded = _graded()
    assert graded(derived["healthy"])["passed"] and graded(derived["solved"])["passed"]
    faulty = graded(derived["faulty"])
    assert not faulty["passed"]
    [check] = [c for c in faulty["checks"] if c["id"] == "mitigation.predicate.0"]
    assert "service api-v2, which does not exist" in check["detail"]
    # routed to a Service that exists, but not the one that serves the path: the fault's field is not undone
    elsewhere = copy.deepcopy(derived["solved"])
    _ingress(elsewhere)["spec"]["rules"][0]["http"]["paths"][1]["backend"]["service"]["name"] = "web"
    assert not graded(elsewhere)["passed"]


def test_an_ingress_without_its_class_is_served_by_no_controller():
    derived, graded = _graded('fault removed_ingress_class on ingress "shop"')
    assert "ingressClassName" not in _ingress(derived["faulty"])["spec"]
    assert graded(derived["healthy"])["passed"] and not graded(derived["faulty"])["passed"]


def _state(*objects) -> State:
    return State({"resources": {"items": list(objects)}})


def test_ingress_ready_resolves_backends_as_a_controller_does():
    ingress = {"apiVersion": "networking.k8s.io/v1", "kind": "Ingress", "metadata": {"name": "i", "namespace": "n"},
               "spec": {"ingressClassName": "nginx", "rules": [{"http": {"paths": [
                   {"path": "/", "pathType": "Prefix",
                    "backend": {"service": {"name": "web", "port": {"name": "http"}}}}]}}]}}
    service = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web", "namespace": "n"},
               "spec": {"selector": {"app": "web"}, "ports": [{"name": "http", "port": 80, "targetPort": "web"}]}}
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web-1", "namespace": "n", "labels": {"app": "web"}},
           "spec": {"containers": [{"name": "c", "ports": [{"name": "web", "containerPort": 8080}]}]},
           "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}}
    assert ingress_problem(ingress, _state(ingress, service, pod)) is None
    assert "does not exist" in ingress_problem(ingress, _state(ingress, pod))
    unready = copy.deepcopy(pod)
    unready["status"]["conditions"][0]["status"] = "False"
    assert "no ready pod" in ingress_problem(ingress, _state(ingress, service, unready))
    other_port = copy.deepcopy(ingress)
    other_port["spec"]["rules"][0]["http"]["paths"][0]["backend"]["service"]["port"] = {"number": 8080}
    assert "has no port 8080" in ingress_problem(other_port, _state(other_port, service, pod))
    unanswered = copy.deepcopy(service)
    unanswered["spec"]["ports"][0]["targetPort"] = 9999
    assert "no container port" in ingress_problem(ingress, _state(ingress, unanswered, pod))
    classless = copy.deepcopy(ingress)
    del classless["spec"]["ingressClassName"]
    assert "no ingress class" in ingress_problem(classless, _state(classless, service, pod))
    classless["metadata"]["annotations"] = {"kubernetes.io/ingress.class": "nginx"}
    assert ingress_problem(classless, _state(classless, service, pod)) is None
