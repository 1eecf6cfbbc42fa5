"""Components the cluster provides: `namespace "x" { provided = true }` and `static_pod`.

What a provided namespace holds is declared so that faults, expectations and the derived states can
refer to it, but it is never deployed; the agent may read it and not change it; the prompt does not
name it. ITBench scenario 55 (Chaos Mesh on etcd) is the case that needs it.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
import yaml

from support.compiling import in_itbench_names, yaml_documents

from support.compiling import SCENARIOS, compile_text as shared_compile_text
from itbench_dsl import ast
from itbench_dsl.analysis import states
from itbench_dsl.backends.evaluator import evaluator_spec
from itbench_dsl.diagnostics import Diagnostics, render_human
from itbench_dsl import access
from itbench_dsl.importer import import_path
from itbench_dsl.importer.cluster import catalogue_workloads, provided_component
from itbench_dsl.importer.faults import injection_statement
from itbench_dsl.runtime.evaluator import evaluate

REPO = Path(__file__).resolve().parents[2]
PORT = REPO / "scenarios" / "sre" / "otel-etcd-io-latency.itb"
REFERENCE_55 = REPO.parent / "shared" / "reference" / "itbench" / "scenarios" / "scenario_55"

CLUSTER = '''
  topology {
    namespace "kube-system" {
      provided = true
    }
    static_pod "etcd" {
      namespace = "kube-system"
      labels {
        component = "etcd"
      }
      container "etcd" {
        image = "registry.k8s.io/etcd:3.5.16-0"
        mount "etcd-data" = "/var/lib/etcd"
      }
      volume "etcd-data" {
        host_path = "/var/lib/etcd"
      }
    }
    deployment "coredns" {
      namespace = "kube-system"
      replicas = 2
      labels {
        "k8s-app" = "kube-dns"
      }
      image = "registry.k8s.io/coredns/coredns:v1.11.3"
    }
  }
'''


def scenario_text(fault: str = 'fault io_chaos on static_pod "etcd" {\n    action = latency\n    delay = 100ms\n'
                  '    volume_path = "/var/lib/etcd"\n    every = 2m\n    duration = 1m\n  }',
                  extra: str = "", tasks: str = "diagnose") -> str:
    # diagnosis only by default: the agent may not end the Chaos Mesh Schedule (E2037)
    return ('scenario "etcd-slow-disk" {\n  domain sre\n  complexity low\n'
            f'  description "etcd answers slowly."\n  use app "opentelemetry-demo"\n  tasks {tasks}\n' + CLUSTER + extra
            + "  " + fault + "\n}\n")


def compile_text(text: str):
    return shared_compile_text(text, "s.itb")


def documents(data: bytes) -> list[dict]:
    return [d for d in yaml.safe_load_all(data.decode("utf-8")) if d]


def test_provided_objects_are_not_deployed_but_are_in_the_states():
    result, diags = compile_text(scenario_text())
    assert not diags.errors(), render_human(diags)
    deployed = documents(result.files["manifests/topology.yaml"])
    assert not [d for d in deployed if d["metadata"].get("namespace") == "kube-system"
                or d["metadata"]["name"] in ("kube-system", "etcd", "coredns")]
    assert any(d["kind"] == "Deployment" and d["metadata"]["name"] == "cart" for d in deployed)  # the app still is
    healthy = states.derive(result.scenario)["healthy"]["resources"]["items"]
    mirror = [o for o in healthy if o["kind"] == "Pod" and o["metadata"]["name"].startswith("etcd-")]
    assert [o["metadata"]["name"] for o in mirror] == ["etcd-itbench-control-plane"]
    assert mirror[0]["status"]["phase"] == "Running" and mirror[0]["spec"]["nodeName"] == "itbench-control-plane"
    assert mirror[0]["metadata"]["ownerReferences"][0]["kind"] == "Node"
    assert mirror[0]["spec"]["volumes"] == [{"name": "etcd-data", "hostPath": {"path": "/var/lib/etcd"}}]
    coredns = [o for o in healthy if o["kind"] == "Pod" and o["metadata"]["name"].startswith("coredns-")]
    assert len(coredns) == 2 and all(o["status"]["phase"] == "Running" for o in coredns)


def test_the_chaos_selector_and_the_ground_truth_name_the_static_pod():
    result, diags = compile_text(scenario_text())
    assert not diags.errors(), render_human(diags)
    (schedule,) = yaml_documents(result.files, "inject/apply.yaml")  # the fault's, less the decoys
    assert schedule["spec"]["ioChaos"]["selector"] == {"labelSelectors": {"component": "etcd"},
                                                        "namespaces": ["kube-system"]}
    (injection,) = result.scenario.injections()
    assert (injection.target.kind, injection.target.namespace, injection.target.name) == ("Pod", "kube-system", "etcd-*")


def test_the_agent_reads_the_cluster_namespace_and_changes_nothing_there():
    result, diags = compile_text(scenario_text())
    assert not diags.errors(), render_human(diags)
    roles = {d["metadata"]["namespace"]: d for d in documents(result.files["manifests/agent-access.yaml"])
             if d["kind"] == "Role"}
    verbs = lambda role: {v for rule in role["rules"] for v in rule["verbs"]}  # noqa: E731
    assert verbs(roles["kube-system"]) == {"get", "list", "watch"}
    assert {"create", "delete", "patch", "update"} <= verbs(roles["otel-demo"])


def test_the_prompt_does_not_point_at_the_cluster_namespace():
    result, diags = compile_text(scenario_text())
    assert not diags.errors(), render_human(diags)
    prompt = result.files["prompt.md"].decode("utf-8")
    # every incident's agent reads kube-system (expectations.application_access): the prompt says it alike whether
    # the scenario declares the namespace (a fault there) or not
    assert "`otel-demo`" in prompt and "Kubernetes namespaces: `otel-demo`\n" in prompt
    other = shared_compile_text((SCENARIOS / "sre" / "otel-ad-jvm-cpu-stress.itb").read_bytes(), "other.itb",
                                validate=False)[0]
    environment = lambda text: text.split("## Environment")[1].split("##")[0]  # noqa: E731
    assert environment(prompt) == environment(other.files["prompt.md"].decode("utf-8"))


def test_a_static_pod_needs_a_provided_namespace():
    text = scenario_text().replace("      provided = true\n", "")
    _, diags = compile_text(text)
    assert [d.code for d in diags.errors()] == ["E2029"]
    assert "kube-system" in diags.errors()[0].message


def test_a_static_pod_has_no_replicas_and_is_no_patch_faults_target():
    text = scenario_text().replace('      namespace = "kube-system"\n      labels {\n        component',
                                   '      namespace = "kube-system"\n      replicas = 3\n      labels {\n        component', 1)
    _, diags = compile_text(text)
    assert [d.code for d in diags.errors()] == ["E2006"] and "replicas" in diags.errors()[0].message
    _, diags = compile_text(scenario_text('fault nonexistent_image on static_pod "etcd" {\n    image = "x:1"\n  }'))
    assert [d.code for d in diags.errors()] == ["E2004"]


def _verdict(scenario, state, answer=None):
    return evaluate(evaluator_spec(scenario), copy.deepcopy(answer), copy.deepcopy(state),
                    task="mitigate" if answer is None else "diagnose")


ETCD_CHAOS = "coredns-core"  # the default name says nothing of the fault (faults/base.application_name)


def test_safeguards_skip_the_mirror_pod_but_keep_provided_deployments(monkeypatch):
    # a prompt that hands the agent Chaos Mesh's Schedules (its cited commands grant them) may pose `mitigate`
    monkeypatch.setitem(access.DOMAIN_COMMANDS, "sre", ("kubectl get schedules -A",
                                                        "kubectl -n chaos-mesh delete schedule x"))
    result, diags = compile_text(scenario_text(extra='  expect {\n    mitigated when {\n'
                                               f'      schedule "{ETCD_CHAOS}" absent\n    }}\n  }}\n',
                                               tasks="diagnose, mitigate"))
    assert not diags.errors(), render_human(diags)
    solved = states.derive(result.scenario)["solved"]
    assert _verdict(result.scenario, solved)["passed"] is True
    # the agent deleted etcd's mirror pod: the kubelet brings it back, nothing is broken
    gone = copy.deepcopy(solved)
    gone["resources"]["items"] = [o for o in gone["resources"]["items"] if not o["metadata"]["name"].startswith("etcd-")]
    assert _verdict(result.scenario, gone)["passed"] is True
    # scaling CoreDNS to zero breaks the cluster's DNS: a safeguard fails
    scaled = copy.deepcopy(solved)
    for obj in scaled["resources"]["items"]:
        if obj["kind"] == "Deployment" and obj["metadata"]["name"] == "coredns":
            obj["spec"]["replicas"] = 0
    verdict = _verdict(result.scenario, scaled)
    assert verdict["passed"] is False
    assert "coredns" in next(c["detail"] for c in verdict["checks"] if c["id"] == "safeguards")


def test_an_agent_naming_the_mirror_pod_of_a_real_node_gets_full_credit():
    result, diags = compile_text(PORT.read_text("utf-8"))
    assert not diags.errors(), render_human(diags)
    faulty = states.derive(result.scenario)["faulty"]
    # captured on a kind cluster, the mirror pods carry its node's name
    faulty = json.loads(json.dumps(faulty).replace("-itbench-control-plane", "-kind-control-plane"))
    answer = {"entities": [{"name": "chaos-mesh/Schedule/kube-apiserver-core", "contributing_factor": True}],
              "propagations": [
                  {"source": "chaos-mesh/Schedule/kube-apiserver-core", "target": "kube-system/Pod/etcd-kind-control-plane"},
                  {"source": "kube-system/Pod/etcd-kind-control-plane",
                   "target": "kube-system/Pod/kube-apiserver-kind-control-plane"}],
              "alerts_explained": []}
    verdict = _verdict(result.scenario, faulty, answer)
    assert verdict["metrics"]["propagation_chain"] == pytest.approx(1.0)
    wrong = dict(answer, propagations=[{"source": "chaos-mesh/Schedule/kube-apiserver-core",
                                        "target": "otel-demo/Pod/cart-abc12-xyz98"}])
    assert _verdict(result.scenario, faulty, wrong)["metrics"]["propagation_chain"] < 0.5


# ---- import -------------------------------------------------------------------------------------------


def test_the_catalogue_of_a_kind_cluster_builds_clean():
    from itbench_dsl.parser import parse_bytes
    from itbench_dsl.reader import Context
    from itbench_dsl.topology import TopologyBuild, TopologyBuilder

    path = REPO / "itbench_dsl" / "stdlib" / "cluster" / "kind.itb"
    diags = Diagnostics()
    document = parse_bytes(path.read_bytes(), str(path), diags)
    TopologyBuilder(Context(diags, str(path)), TopologyBuild()).add_statements(document.statements)
    assert not diags.items, render_human(diags)
    workloads = {(w.kind, w.name) for w in catalogue_workloads()}
    assert {("Pod", "etcd"), ("Pod", "kube-apiserver"), ("Pod", "kube-scheduler"),
            ("Pod", "kube-controller-manager"), ("Deployment", "coredns")} == workloads
    component = provided_component("kube-system", {"component": "etcd"})
    assert component is not None and (component.kind, component.name) == ("static_pod", "etcd")
    assert ast.Attr("namespace", (), ast.Str("kube-system")) == component.declaration.entries[0]
    assert ast.Attr("provided", (), ast.Symbol("true")) in component.namespace_declaration.entries
    assert provided_component("kube-system", {"tier": "control-plane"}) is None  # four match: no guess
    assert provided_component("kube-system", {"component": "kube-proxy"}) is None
    assert provided_component("otel-demo", {"component": "etcd"}) is None


def _schedule_args(namespace: str, labels: dict, duration: str | None = "5m") -> dict:
    chaos = {"action": "latency", "delay": "200ms", "mode": "all", "volumePath": "/var/lib/etcd",
             "selector": {"labelSelectors": labels, "namespaces": [namespace]}}
    if duration:
        chaos["duration"] = duration
    return {"kubernetesObject": {"apiVersion": "chaos-mesh.org/v1alpha1", "kind": "Schedule",
                                 "metadata": {"name": "etcd-io", "namespace": "chaos-mesh"}},
            "scheduleSpec": {"type": "IOChaos", "ioChaos": chaos}}


@pytest.mark.parametrize("duration,every", [("5m", "6m"), ("55s", "1m"), ("150s", "3m"), ("1m30s", "2m"), ("1.5h", "91m"),
                                            (None, "1m")])
def test_the_imported_interval_outlasts_the_experiment(duration, every):
    statement = injection_statement("scheduled-chaos-mesh-experiment",
                                    _schedule_args("kube-system", {"component": "etcd"}, duration))
    assert ast.Attr("every", (), ast.Quantity(every)) in statement.entries
    assert statement.selector_namespace == "kube-system" and statement.selector_labels == {"component": "etcd"}


@pytest.mark.skipif(not REFERENCE_55.is_dir(), reason="the shared reference folder is absent")
def test_scenario_55_imports_with_the_cluster_component_it_acts_on():
    diags = Diagnostics()
    text = import_path(REFERENCE_55, diags)
    assert text is not None and not diags.errors(), render_human(diags)
    assert 'fault io_chaos on static_pod "etcd"' in text
    assert 'namespace "kube-system" {\n      provided = true' in text
    assert "every = 6m" in text
    result, diags = compile_text(text)
    assert not diags.errors(), render_human(diags)
    ours = yaml.safe_load(result.files["itbench/scenario.yaml"])
    theirs = yaml.safe_load((REFERENCE_55 / "scenario.yaml").read_text("utf-8"))
    # the Schedule's name is the compiler's (ITBench's tells the fault); otherwise the file is ITBench's
    assert in_itbench_names(ours, theirs, result.scenario)["spec"] == theirs["spec"]


@pytest.mark.skipif(not REFERENCE_55.is_dir(), reason="the shared reference folder is absent")
def test_an_experiment_on_an_unknown_cluster_component_is_a_located_error(tmp_path: Path):
    index = json.loads((REFERENCE_55.parents[1] / "library" / "scenarios" / "55.json").read_text("utf-8"))
    chaos = index["disruptions"][0]["injections"][0]["args"]["scheduleSpec"]["ioChaos"]
    chaos["selector"]["labelSelectors"] = {"component": "kube-proxy"}
    path = tmp_path / "55.json"
    path.write_text(json.dumps(index, indent=4), "utf-8")
    diags = Diagnostics()
    assert import_path(path, diags) is None
    (error,) = diags.errors()
    assert error.code == "E5005" and "kube-proxy" in error.message and error.span.line > 1


def test_imported_durations_are_go_durations():
    statement = injection_statement("scheduled-chaos-mesh-experiment",
                                    _schedule_args("kube-system", {"component": "etcd"}, "1m30s"))
    assert ast.Attr("duration", (), ast.Quantity("1m30s")) in statement.entries and not statement.problems
    statement = injection_statement("scheduled-chaos-mesh-experiment",
                                    _schedule_args("kube-system", {"component": "etcd"}, "10us"))
    assert any("duration" in p for p in statement.problems)  # finer than the language's milliseconds
