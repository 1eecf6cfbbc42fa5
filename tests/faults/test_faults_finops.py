"""FinOps faults: misconfigured_hpa, overprovisioned_requests, idle_replicas.

For each: a valid use compiles with no diagnostics and its manifests validate (the vendored schemas
and the kubernetes-validate CLI); the injection changes exactly what the fault says and the revert
restores the topology; each broken precondition is a located error with its own code; a FinOps
scenario must declare the optimum of what the fault changes.
"""

from __future__ import annotations

import copy
import os
import subprocess
from pathlib import Path

import pytest
import yaml
from jsonschema import Draft202012Validator

from support.compiling import compile_ok as shared_compile_ok, yaml_documents
from itbench_dsl.vocabulary import KNOWN_ALERTS
from itbench_dsl.compiler import compile_source
from itbench_dsl.diagnostics import Diagnostics
from itbench_dsl.faults import FAULTS, itbench_entry, library_alerts, render_solutions

from backends.test_kubernetes_validate import _is_builtin, _schema_version, _validator_command

REPO = Path(__file__).resolve().parents[2]

SHOP = '''scenario "shop-cart" {{
  domain {domain}
  complexity low
  description "The cart deployment wastes money."
  topology {{
    namespace "shop"
    deployment "cart" {{
      replicas = 2
      container "cart" {{
        image = "ghcr.io/example/cart:1.0"
        port "grpc" = 7070
        resources {{
          requests {{
            cpu = 100m
          }}
          limits {{
            memory = 128Mi
          }}
        }}
      }}
      container "proxy" {{
        image = "envoyproxy/envoy:v1.30.0"
        port "http" = 8080
        resources {{
          requests {{
            cpu = 50m
          }}
        }}
      }}
    }}
    service "cart" {{
      port "grpc" = 7070
    }}
{extra}  }}
  {fault}
  expect {{
    {expect}
  }}
}}
'''

HPA = '''    hpa "cart" {
      workload = "cart"
      max = 5
      cpu = 80%
    }
'''


def source(fault: str, expect: str = 'optimal deployment "cart" spec.replicas = 2', extra: str = "",
           domain: str = "finops") -> bytes:
    return SHOP.format(fault=fault, expect=expect, extra=extra, domain=domain).encode()


def compile_ok(data: bytes) -> dict[str, bytes]:
    return shared_compile_ok(data, clean=True).files


def codes(data: bytes) -> list[tuple[str, int]]:
    diags = Diagnostics()
    compile_source(data, "input.itb", diags)
    return [(d.code, d.span.line) for d in diags.sorted()]


def line_of(data: bytes, text: str) -> int:
    """The 1-based number of the last line containing `text` (the fault comes after the topology)."""
    return max(n for n, line in enumerate(data.decode().splitlines(), 1) if text in line)


def docs(files: dict[str, bytes], name: str) -> list[dict]:
    return yaml_documents(files, name)


def topology_object(files, kind: str, name: str) -> dict:
    return next(d for d in docs(files, "manifests/topology.yaml") if d["kind"] == kind and d["metadata"]["name"] == name)


def container(obj: dict, name: str) -> dict:
    return next(c for c in obj["spec"]["template"]["spec"]["containers"] if c["name"] == name)


OVERPROVISIONED = 'fault overprovisioned_requests on deployment "cart" {{\n    container = "cart"\n    {args}\n  }}'
CPU_OPTIMUM = 'optimal deployment "cart" resources.requests.cpu = 100m'


# ---- overprovisioned_requests ----------------------------------------------------------------------


def test_overprovisioned_by_factor_multiplies_requests_and_raises_limits_below_them():
    files = compile_ok(source(OVERPROVISIONED.format(args="factor = 10"), CPU_OPTIMUM))
    before = topology_object(files, "Deployment", "cart")
    [after] = docs(files, "inject/apply.yaml")
    expected = copy.deepcopy(before)
    container(expected, "cart")["resources"] = {"requests": {"cpu": "1", "memory": "1280Mi"},
                                                "limits": {"memory": "1280Mi"}}
    assert after == expected  # only the cart container's resources changed
    assert docs(files, "revert/apply.yaml") == [before]
    scenario = yaml.safe_load(files["itbench/scenario.yaml"])
    assert scenario["spec"]["faults"] == []  # ITBench has no such fault: the bundle's inject/ applies it


def test_overprovisioned_by_value_keeps_the_other_resource():
    files = compile_ok(source(OVERPROVISIONED.format(args="cpu = 4"), CPU_OPTIMUM))
    [after] = docs(files, "inject/apply.yaml")
    assert container(after, "cart")["resources"] == {"requests": {"cpu": "4"}, "limits": {"memory": "128Mi"}}


@pytest.mark.parametrize("args,code", [
    ("cpu = 50m", "E2010"),          # below the current request
    ("cpu = 100m", "E2027"),         # the same request
    ("factor = 1", "E2010"),         # not a multiplication
    ("factor = 5\n    cpu = 1", "E2010"),  # both ways at once
])
def test_overprovisioned_value_errors(args, code):
    found = codes(source(OVERPROVISIONED.format(args=args), CPU_OPTIMUM))
    assert [c for c, _ in found] == [code]


def test_overprovisioned_memory_on_a_container_without_memory():
    # (a container with no requests nor limits at all: the fixture E2028-overprovisioned-without-requests)
    fault = 'fault overprovisioned_requests on deployment "cart" {\n    container = "proxy"\n    memory = 1Gi\n  }'
    data = source(fault, CPU_OPTIMUM)
    assert codes(data) == [("E2028", line_of(data, "memory = 1Gi"))]


def test_overprovisioned_needs_the_container_when_several():
    fault = 'fault overprovisioned_requests on deployment "cart"'
    assert [c for c, _ in codes(source(fault, CPU_OPTIMUM))] == ["E2007"]


# ---- idle_replicas ----------------------------------------------------------------------------------


def test_idle_replicas_scales_up_and_reverts():
    files = compile_ok(source('fault idle_replicas on deployment "cart" {\n    replicas = 12\n  }'))
    before = topology_object(files, "Deployment", "cart")
    [after] = docs(files, "inject/apply.yaml")
    assert after == {**before, "spec": {**before["spec"], "replicas": 12}}
    assert docs(files, "revert/apply.yaml") == [before]


def test_idle_replicas_default_is_well_above():
    files = compile_ok(source('fault idle_replicas on deployment "cart"'))
    [after] = docs(files, "inject/apply.yaml")
    assert after["spec"]["replicas"] == 10


@pytest.mark.parametrize("replicas,code", [(2, "E2027"), (1, "E2010")])
def test_idle_replicas_count_errors(replicas, code):
    data = source(f'fault idle_replicas on deployment "cart" {{\n    replicas = {replicas}\n  }}')
    assert codes(data) == [(code, line_of(data, f"    replicas = {replicas}"))]


def test_idle_replicas_under_an_autoscaler():
    data = source('fault idle_replicas on deployment "cart"', extra=HPA)
    assert codes(data) == [("E2011", line_of(data, "fault idle_replicas"))]


# ---- misconfigured_hpa ------------------------------------------------------------------------------


def test_misconfigured_hpa_changes_only_the_autoscaler_target():
    files = compile_ok(source('fault misconfigured_hpa on deployment "cart" {\n    utilization = 2%\n  }',
                              'optimal hpa "cart" spec.metrics.resource.target.averageUtilization = 80', extra=HPA))
    before = topology_object(files, "HorizontalPodAutoscaler", "cart")
    [after] = docs(files, "inject/apply.yaml")
    expected = copy.deepcopy(before)
    expected["spec"]["metrics"][0]["resource"]["target"]["averageUtilization"] = 2
    assert after == expected
    assert docs(files, "revert/apply.yaml") == [before]
    args = yaml.safe_load(files["itbench/scenario.yaml"])["spec"]["faults"][0]["injections"][0]["args"]
    schema = itbench_entry("faults", FAULTS["misconfigured_hpa"].itbench_id)["arguments"]["jsonSchema"]
    Draft202012Validator(schema).validate(args)


# ---- the optimum ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("fault,extra", [
    ('fault idle_replicas on deployment "cart"', ""),
    ('fault overprovisioned_requests on deployment "cart" {\n    container = "cart"\n  }', ""),
    ('fault misconfigured_hpa on deployment "cart"', HPA),
])
def test_a_finops_scenario_declares_the_optimum_of_what_the_fault_changes(fault, extra):
    data = source(fault, 'optimal service "cart" spec.type = 1', extra=extra)  # an optimum, but of something else
    assert codes(data) == [("E2013", line_of(data, fault.splitlines()[0]))]
    diags = Diagnostics()
    compile_source(data, "input.itb", diags)
    assert diags.items[0].help.startswith("add `optimal ") and "(the value before the fault)" in diags.items[0].help


def test_the_optimum_is_not_required_outside_finops_nor_reported_twice():
    fault = 'fault misconfigured_hpa on deployment "cart"'
    assert codes(source(fault, 'alert KubeHpaMaxedOut on hpa "cart"', extra=HPA, domain="sre")) == []
    # no optimum at all: the scenario-level E2013 only
    assert [c for c, _ in codes(source(fault, 'alert KubeHpaMaxedOut on hpa "cart"', extra=HPA))] == ["E2013"]


# ---- the library entries ---------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["overprovisioned_requests", "idle_replicas"])
def test_new_faults_document_alerts_and_solutions(name):
    kind = FAULTS[name]
    assert kind.itbench_id is None and kind.domains == ("finops",)
    assert kind.args or name == "idle_replicas"
    assert set(library_alerts(kind)) <= set(KNOWN_ALERTS) and library_alerts(kind)
    assert kind.preconditions and all(p.endswith(".") for p in kind.preconditions)


def test_solutions_render_over_the_itbench_args():
    files = compile_ok(source(OVERPROVISIONED.format(args="factor = 10"), CPU_OPTIMUM))
    [solution] = yaml.safe_load(files["itbench/groundtruth.yaml"])["spec"]["solutions"]
    assert solution == [{"steps": [{
        "command": "kubectl -n shop set resources deployment/cart -c cart --requests=cpu=<cpu it needs>,"
                   "memory=<memory it needs>",
        "text": "Set the container's requests back to what it uses."}]}]
    args = {"kubernetesObject": {"apiVersion": "apps/v1", "kind": "StatefulSet",
                                 "metadata": {"name": "db", "namespace": "data"}}, "replicas": 9}
    [rendered] = render_solutions(FAULTS["idle_replicas"], args)
    assert rendered["steps"][0]["command"] == "kubectl -n data scale statefulset/db --replicas=<replicas it needs>"


# ---- the scenario library ------------------------------------------------------------------------------

SCENARIOS = {
    "otel-cart-overprovisioned-requests": "overprovisioned_requests",
    "otel-recommendation-idle-replicas": "idle_replicas",
    "otel-three-hpas-misconfigured": "misconfigured_hpa",
    "otel-frontend-hpa-misconfigured": "misconfigured_hpa",
    "otel-ad-missing-memory-limit": "unassigned_limits",
}


@pytest.fixture(scope="module")
def bundles() -> dict[str, dict[str, bytes]]:
    out = {}
    for name in SCENARIOS:
        path = REPO / "scenarios" / "finops" / f"{name}.itb"
        out[name] = compile_ok(path.read_bytes())
    return out


def test_scenarios_use_their_fault(bundles):
    import json

    for name, fault in SCENARIOS.items():
        scenario = json.loads(bundles[name]["scenario.json"])
        assert {i["fault"] for g in scenario["faults"] for i in g["injections"]} == {fault}
        assert scenario["domain"] == "finops" and scenario["optimal"]


def test_inject_and_revert_pass_kubernetes_validate(bundles, tmp_path: Path):
    files = []
    for name, bundle in bundles.items():
        for file_name in ("inject/apply.yaml", "revert/apply.yaml"):
            for index, doc in enumerate(docs(bundle, file_name)):
                if _is_builtin(doc["apiVersion"]):
                    target = tmp_path / f"{name}-{file_name.replace('/', '-')}-{index}.yaml"
                    target.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
                    files.append(target)
    assert len(files) >= 10
    run = subprocess.run([*_validator_command(), "--strict", "--kubernetes-version", _schema_version(), *map(str, files)],
                         capture_output=True, text=True, timeout=120, env={**os.environ, "NO_COLOR": "1"})
    output = run.stdout + run.stderr
    problems = [line for line in output.splitlines() if line.startswith(("ERROR", "WARN"))]
    assert run.returncode == 0 and not problems, "\n".join(problems or [output])
