"""Ingresses as topology objects: their manifest, their backends checked against the Services they name, the
faults that misroute them, and `ready` as an ingress controller would resolve them."""

from __future__ import annotations

import copy

import yaml

from itbench_dsl.analysis import states
from itbench_dsl.backends.evaluator_file import spec_of
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


RULES = '''      rule "shop.example.com" {
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
      rule "admin.example.com" {
        path "/api" {
          service = "api"
          port = 8080
        }
      }
'''


HOSTLESS = '''      rule {
        path "/" {
          service = "web"
          port = 80
        }
      }
'''


def _several_rules(fault: str, hostless: bool = False):
    """The shop's ingress with a second rule, and with `hostless` a third without a host (the rules are then
    one value to the grading: a list's items are told apart only by a key each of them holds)."""
    diags = Diagnostics()
    start = SOURCE.index('      rule "shop.example.com"')
    end = SOURCE.index("    }\n  }\n  FAULT")
    source = (SOURCE[:start] + RULES + (HOSTLESS if hostless else "") + SOURCE[end:]).replace("BACKEND", "api").replace("PORT", "8080") \
        .replace("FAULT", fault)
    return compile_source(source.encode(), "shop.itb", diags), diags, source


def _fault_on(host: str | None) -> str:
    chosen = "" if host is None else f'    host = "{host}"\n'
    return f'fault misrouted_ingress on ingress "shop" {{\n{chosen}    path = "/api"\n    service = "api-v2"\n  }}'


def _rules(result, where: str) -> list:
    [ingress] = [d for d in yaml.safe_load_all(result.files[where].decode()) if d and d["kind"] == "Ingress"]
    return ingress["spec"]["rules"]


def test_a_misrouted_ingress_changes_the_path_of_the_rule_its_host_chooses():
    result, diags, _ = _several_rules(_fault_on("admin.example.com"))
    assert not diags.errors(), [d.message for d in diags.errors()]
    healthy, faulty = _rules(result, "manifests/topology.yaml"), _rules(result, "inject/apply.yaml")
    assert faulty[1]["http"]["paths"][0]["backend"]["service"]["name"] == "api-v2"
    assert faulty[0] == healthy[0]  # the other rule as it was
    assert result.scenario.injections()[0].args["original_service"] == "api"
    # the grading reads the chosen rule's path, by host and path, not the whole list of rules
    [entry] = spec_of(result.files["evaluator.py"].decode())["mitigation"]["faults"][0]["fields"]
    [change] = entry["changes"]
    assert change["path"] == ["spec", "rules", ["host", "admin.example.com"], "http", "paths", ["path", "/api"],
                              "backend", "service", "name"]
    assert (change["healthy"], change["faulty"]) == ("api", "api-v2")


def test_a_misrouted_ingress_defaults_to_the_first_rule_and_reaches_a_rule_without_host():
    result, diags, _ = _several_rules(_fault_on(None), hostless=True)
    assert not diags.errors(), [d.message for d in diags.errors()]
    faulty = _rules(result, "inject/apply.yaml")
    assert faulty[0]["http"]["paths"][1]["backend"]["service"]["name"] == "api-v2"
    assert faulty[1]["http"]["paths"][0]["backend"]["service"]["name"] == "api"
    fault = ('fault misrouted_ingress on ingress "shop" {\n    host = ""\n    path = "/"\n'
             '    service = "api-v2"\n  }')
    result, diags, _ = _several_rules(fault, hostless=True)
    assert not diags.errors(), [d.message for d in diags.errors()]
    faulty = _rules(result, "inject/apply.yaml")
    assert "host" not in faulty[2] and faulty[2]["http"]["paths"][0]["backend"]["service"]["name"] == "api-v2"
    assert faulty[0]["http"]["paths"][0]["backend"]["service"]["name"] == "web"


def test_a_misrouted_ingress_names_a_host_without_a_rule_at_the_argument():
    _, diags, source = _several_rules(_fault_on("shop.example.org"))
    [error] = diags.errors()
    assert "no rule for host `shop.example.org`" in error.message
    assert error.span.line == _line(source, 'host = "shop.example.org"')


def test_the_other_rules_are_graded_apart_from_the_chosen_one():
    result, diags, _ = _several_rules(_fault_on("admin.example.com"))
    assert not diags.errors(), [d.message for d in diags.errors()]
    namespace: dict = {"__name__": "bundle_evaluator"}
    exec(compile(result.files["evaluator.py"], "evaluator.py", "exec"), namespace)  # noqa: S102
    derived = states.derive(result.scenario)

    def passed(state) -> bool:
        return namespace["evaluate"](namespace["SPEC"], None, copy.deepcopy(state), task="mitigate")["passed"]

    assert passed(derived["healthy"]) and passed(derived["solved"]) and not passed(derived["faulty"])
    # the chosen rule left misrouted, another rule's same path sent to the right Service instead: not mended
    moved = copy.deepcopy(derived["faulty"])
    rules = _ingress(moved)["spec"]["rules"]
    rules[0]["http"]["paths"][1]["backend"]["service"]["name"] = "web"
    assert not passed(moved)
    # the rules in another order, the chosen one mended: mended (rules are told apart by host, not position)
    reordered = copy.deepcopy(derived["solved"])
    rules = _ingress(reordered)["spec"]["rules"]
    rules[:] = [rules[1], rules[0]]
    assert passed(reordered)
