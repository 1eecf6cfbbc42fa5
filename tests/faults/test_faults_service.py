"""Service, configuration, cluster and Istio faults, and the waiters' ITBench arguments.

For each fault: a scenario of the library compiles clean, its ITBench arguments are valid against
the fault's `arguments.jsonSchema`, its inject/ and revert/ objects pass `kubernetes-validate
--strict`, the injection changes exactly what the fault says and the revert restores the topology.
Each broken precondition has its own error fixture (tests/cases/errors); a few are also checked here.
"""

from __future__ import annotations

import copy
import json
import os
import re
import subprocess
from pathlib import Path

import pytest
import yaml
from jsonschema import Draft202012Validator
from backends.test_kubernetes_validate import _is_builtin, _schema_version, _validator_command

from support.compiling import compile_files, yaml_documents
from itbench_dsl.compiler import compile_source
from itbench_dsl.diagnostics import Diagnostics, render_human
from itbench_dsl.faults import FAULTS, WAITERS, itbench_entry
from itbench_dsl.faults.config import CORRUPTED_VALUE, VALKEY_PASSWORD, VALKEY_SCRIPT
from itbench_dsl.validate import validate_object

REPO = Path(__file__).resolve().parents[2]
SRE = REPO / "scenarios" / "sre"

# fault kind -> the library scenario that uses it
SCENARIOS = {
    "feature_flag": "otel-load-generator-flood-homepage-flag.itb",
    "deleted_service": "otel-cart-deleted-service.itb",
    "invalid_service_selector": "bookinfo-details-invalid-selector.itb",
    "corrupted_secret": "otel-grafana-corrupted-secret.itb",
    "valkey_changed_password": "otel-valkey-cart-changed-password.itb",
    "valkey_out_of_memory": "otel-valkey-cart-out-of-memory.itb",
    "ingress_port_blocking_network_policy": "otel-frontend-ingress-blocked.itb",
    "insufficient_resource_quota": "otel-checkout-insufficient-quota.itb",
    "api_server_request_surge": "otel-api-server-request-surge.itb",
    "istio_ambient_disabled": "bookinfo-ambient-mode-disabled.itb",
}
EXTRA = ["otel-payment-failure-unreachable-flags.itb"]


compile_text = compile_files
docs = yaml_documents


def by_key(objects: list[dict]) -> dict[tuple, dict]:
    return {(o["kind"], o["metadata"].get("namespace"), o["metadata"]["name"]): o for o in objects}


@pytest.fixture(scope="module")
def bundles() -> dict[str, dict[str, bytes]]:
    out = {}
    for file_name in [*SCENARIOS.values(), *EXTRA]:
        path = SRE / file_name
        diags = Diagnostics()
        result = compile_source(path.read_bytes(), f"scenarios/sre/{file_name}", diags)
        assert not diags.items, render_human(diags, color=False)
        out[file_name] = result.files
    return out


def topology_objects(files) -> dict[tuple, dict]:
    return by_key(docs(files, "manifests/topology.yaml"))


def test_every_fault_of_these_families_has_a_scenario_and_docs():
    from itbench_dsl.faults import cluster, config, istio, service

    # ITBench's faults of these families (the others, such as `namespace_delete`, have tests of their own)
    names = {k.name for family in (service, config, cluster, istio) for k in family.FAULTS if k.itbench_id}
    # istio_strict_mtls and istio_deny_gateway create Istio objects: tests/faults/test_faults_istio.py
    assert names - {"modified_target_port", "istio_strict_mtls", "istio_deny_gateway"} == set(SCENARIOS)
    for name in names:
        kind = FAULTS[name]
        assert kind.summary and kind.preconditions and kind.itbench_id and kind.domains
        for arg in kind.args:
            assert arg.help, f"{name}: argument {arg.name} has no help"


@pytest.mark.parametrize("kind", sorted(SCENARIOS))
def test_itbench_arguments_follow_the_fault_schema(bundles, kind):
    schema = itbench_entry("faults", FAULTS[kind].itbench_id)["arguments"]["jsonSchema"]
    scenario = yaml.safe_load(bundles[SCENARIOS[kind]]["itbench/scenario.yaml"])
    injections = [i for f in scenario["spec"]["faults"] for i in f["injections"] if i["id"] == FAULTS[kind].itbench_id]
    assert injections
    for injection in injections:
        errors = list(Draft202012Validator(schema).iter_errors(injection["args"]))
        assert not errors, [e.message for e in errors]


def test_waiter_arguments_follow_the_waiter_schemas():
    text = (SRE / "otel-checkout-insufficient-quota.itb").read_text("utf-8").replace(
        '    wait after scale on deployment "checkout" {',
        '    wait before pause on deployment "checkout" {\n      duration = 1m\n    }\n'
        '    wait after delete_pods on deployment "checkout"\n'
        '    wait after restart on deployment "checkout"\n'
        '    wait after scale on deployment "checkout" {')
    files, diags = compile_text(text)
    assert not diags.errors(), render_human(diags, color=False)
    scenario = yaml.safe_load(files["itbench/scenario.yaml"])
    waits = scenario["spec"]["faults"][0]["waitFor"]
    assert waits["preInjection"] == [{"args": {"seconds": 60}, "id": "pause-execution"}]
    ids = {w["id"] for w in waits["postInjection"]}
    assert ids == {"delete-workload-pods", "restart-kubernetes-workload", "scale-kubernetes-workload"}
    for when in waits.values():
        for wait in when:
            schema = itbench_entry("waiters", wait["id"])["arguments"]["jsonSchema"]
            errors = list(Draft202012Validator(schema).iter_errors(wait["args"]))
            assert not errors, (wait, [e.message for e in errors])
    scale = next(w for w in waits["postInjection"] if w["id"] == "scale-kubernetes-workload")
    assert scale["args"]["replicas"] == 2
    assert {name for name, w in WAITERS.items() if w.itbench_id} == {"restart", "scale", "delete_pods", "pause"}


def test_injected_and_reverted_objects_validate(bundles, tmp_path: Path):
    files = []
    for label, bundle in bundles.items():
        for name in ("inject/apply.yaml", "revert/apply.yaml", "inject/delete.yaml", "revert/delete.yaml"):
            for index, doc in enumerate(docs(bundle, name)):
                if name.endswith("apply.yaml"):
                    assert _is_builtin(doc["apiVersion"]), f"{label}/{name}: {doc['kind']} has no vendored schema"
                    assert not validate_object(doc), f"{label}/{name} {doc['kind']}"
                    slug = re.sub(r"[^A-Za-z0-9.-]+", "_", f"{label}-{name}-{index}-{doc['kind']}")
                    target = tmp_path / f"{slug}.yaml"
                    target.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
                    files.append(target)
    version = _schema_version()
    run = subprocess.run([*_validator_command(), "--strict", "--kubernetes-version", version, *map(str, files)],
                         capture_output=True, text=True, timeout=120, env={**os.environ, "NO_COLOR": "1"})
    output = run.stdout + run.stderr
    problems = [line for line in output.splitlines() if line.startswith(("ERROR", "WARN"))]
    assert run.returncode == 0 and not problems, "\n".join(problems or [output])
    assert len([line for line in output.splitlines() if " passed " in line]) == len(files)


# ---- what each injection changes, and its revert ---------------------------------------------------------


def _diff_paths(a, b, path=""):
    if type(a) is not type(b):
        return [path]
    if isinstance(a, dict):
        return [p for k in sorted(set(a) | set(b)) for p in (
            _diff_paths(a.get(k), b.get(k), f"{path}.{k}") if k in a and k in b else [f"{path}.{k}"])]
    if isinstance(a, list):
        if len(a) != len(b):
            return [path]
        return [p for i, (x, y) in enumerate(zip(a, b)) for p in _diff_paths(x, y, f"{path}[{i}]")]
    return [] if a == b else [path]


def test_feature_flag_changes_only_the_default_variant(bundles):
    files = bundles[SCENARIOS["feature_flag"]]
    before = topology_objects(files)[("ConfigMap", "otel-demo", "flagd-config")]
    (after,) = docs(files, "inject/apply.yaml")
    key = "demo.flagd.json"
    old, new = json.loads(before["data"][key]), json.loads(after["data"][key])
    assert list(new["flags"]) == list(old["flags"])  # key order kept
    assert new["flags"]["loadGeneratorFloodHomepage"]["defaultVariant"] == "on"
    old["flags"]["loadGeneratorFloodHomepage"]["defaultVariant"] = "on"
    assert new == old
    lines_before, lines_after = before["data"][key].splitlines(), after["data"][key].splitlines()
    assert len(lines_before) == len(lines_after)
    changed = [(a, b) for a, b in zip(lines_before, lines_after) if a != b]
    # the rest of the text is byte for byte the same
    assert changed == [('      "defaultVariant": "off"', '      "defaultVariant": "on"')]
    assert _diff_paths(before, after) == [f".data.{key}"]
    assert docs(files, "revert/apply.yaml") == [before]


def test_two_flags_on_one_configmap_compose(bundles):
    files = bundles["otel-payment-failure-unreachable-flags.itb"]
    (after,) = docs(files, "inject/apply.yaml")
    flags = json.loads(after["data"]["demo.flagd.json"])["flags"]
    assert flags["paymentFailure"]["defaultVariant"] == "100%"
    assert flags["paymentUnreachable"]["defaultVariant"] == "on"
    scenario = yaml.safe_load(files["itbench/scenario.yaml"])
    waits = [w["args"]["kubernetesObject"]["metadata"]["name"] for w in scenario["spec"]["faults"][0]["waitFor"]["postInjection"]]
    # ITBench's scenario.yaml restarts what the scenario names, as ITBench publishes it
    assert waits == ["flagd", "payment"]
    # the bundle's own run restarts every running workload of the namespace alike (faults/waiters.spread), in
    # name order, so that pod ages do not point at the fault
    spread = [w["target"]["name"] for g in json.loads(files["scenario.json"])["faults"] for w in g["waiters"]]
    assert {"flagd", "payment"} < set(spread) and spread == sorted(spread)


def test_deleted_service_deletes_and_restores(bundles):
    files = bundles[SCENARIOS["deleted_service"]]
    assert not docs(files, "inject/apply.yaml")  # the decoys aside
    assert docs(files, "inject/delete.yaml") == [{"apiVersion": "v1", "kind": "Service",
                                                  "metadata": {"name": "cart", "namespace": "otel-demo"}}]
    assert docs(files, "revert/apply.yaml") == [topology_objects(files)[("Service", "otel-demo", "cart")]]


def test_invalid_selector_changes_only_the_selector(bundles):
    files = bundles[SCENARIOS["invalid_service_selector"]]
    before = topology_objects(files)[("Service", "book-info", "details")]
    (after,) = docs(files, "inject/apply.yaml")
    # a value no pod has, which says nothing of the fault (a hash of the service, not `-invalid`: agent_view.py)
    assert list(after["spec"]["selector"]) == ["app"] and after["spec"]["selector"]["app"].startswith("details-")
    assert "invalid" not in after["spec"]["selector"]["app"]
    assert _diff_paths(before, after) == [".spec.selector.app"]
    assert docs(files, "revert/apply.yaml") == [before]
    pods = [o for o in topology_objects(files).values() if o["kind"] == "Deployment"]
    assert not any(all(p["spec"]["template"]["metadata"]["labels"].get(k) == v for k, v in after["spec"]["selector"].items())
                   for p in pods)


def test_corrupted_secret_changes_only_the_key(bundles):
    files = bundles[SCENARIOS["corrupted_secret"]]
    before = topology_objects(files)[("Secret", "otel-demo", "grafana")]
    (after,) = docs(files, "inject/apply.yaml")
    assert _diff_paths(before, after) == [".stringData.admin-password"]
    assert after["stringData"]["admin-password"] == CORRUPTED_VALUE
    assert docs(files, "revert/apply.yaml") == [before]


def test_valkey_changed_password(bundles):
    files = bundles[SCENARIOS["valkey_changed_password"]]
    before = topology_objects(files)[("Deployment", "otel-demo", "valkey-cart")]
    injected = by_key(docs(files, "inject/apply.yaml"))
    secret = injected[("Secret", "otel-demo", "valkey-credentials")]
    assert secret["stringData"] == {"valkey-password": VALKEY_PASSWORD}
    # like the application's own objects: no harness marker, the labels most of them carry (those each object
    # carries with its own name, `component`, with the Secret's own: backends/faults.py per_object_labels)
    assert secret["metadata"]["labels"] == {"app.kubernetes.io/part-of": "opentelemetry-demo",
                                            "app.kubernetes.io/version": "2.1.3",
                                            "app.kubernetes.io/component": "valkey-credentials",
                                            "app.kubernetes.io/name": "valkey-credentials",
                                            "opentelemetry.io/name": "valkey-credentials"}
    after = injected[("Deployment", "otel-demo", "valkey-cart")]
    container = after["spec"]["template"]["spec"]["containers"][0]
    assert container["args"] == ["--requirepass", "$(VALKEY_PASSWORD)"]
    assert container["env"][-1] == {"name": "VALKEY_PASSWORD", "valueFrom": {
        "secretKeyRef": {"name": "valkey-credentials", "key": "valkey-password"}}}
    expected = copy.deepcopy(before)
    expected["spec"]["template"]["spec"]["containers"][0]["args"] = container["args"]
    expected["spec"]["template"]["spec"]["containers"][0]["env"].append(container["env"][-1])
    assert after == expected
    assert docs(files, "revert/apply.yaml") == [before]
    assert docs(files, "revert/delete.yaml") == [{"apiVersion": "v1", "kind": "Secret",
                                                  "metadata": {"name": "valkey-credentials", "namespace": "otel-demo"}}]


def test_valkey_out_of_memory(bundles):
    files = bundles[SCENARIOS["valkey_out_of_memory"]]
    before = topology_objects(files)[("Deployment", "otel-demo", "valkey-cart")]
    injected = by_key(docs(files, "inject/apply.yaml"))
    script = injected[("ConfigMap", "otel-demo", "valkey-storage-script")]["data"][VALKEY_SCRIPT]
    assert script.startswith("#!/bin/sh\n") and 'valkey-server "$@" &' in script
    after = injected[("Deployment", "otel-demo", "valkey-cart")]
    assert sorted(_diff_paths(before, after)) == [
        ".spec.template.spec.containers[0].command", ".spec.template.spec.containers[0].volumeMounts",
        ".spec.template.spec.volumes"]
    assert docs(files, "revert/apply.yaml") == [before]
    assert [d["kind"] for d in docs(files, "revert/delete.yaml")] == ["ConfigMap"]


def test_network_policy_blocks_the_workload_pods(bundles):
    files = bundles[SCENARIOS["ingress_port_blocking_network_policy"]]
    (policy,) = docs(files, "inject/apply.yaml")
    frontend = topology_objects(files)[("Deployment", "otel-demo", "frontend")]
    assert policy["metadata"]["name"] == "jaeger-system"
    assert policy["spec"] == {"podSelector": {"matchLabels": frontend["spec"]["selector"]["matchLabels"]},
                              "policyTypes": ["Ingress"], "ingress": []}
    assert "revert/apply.yaml" not in files
    assert docs(files, "revert/delete.yaml") == [{"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
                                                  "metadata": {"name": "jaeger-system", "namespace": "otel-demo"}}]
    # the bundle names it as the application names its objects (faults/base.application_name); the ITBench export
    # as ITBench's task does
    truth = yaml.safe_load(files["itbench/groundtruth.yaml"])
    assert {"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
            "metadata": {"name": "frontend-ingress", "namespace": "otel-demo"}} in truth["spec"]["entities"]


def test_resource_quota_has_one_name_everywhere(bundles):
    files = bundles[SCENARIOS["insufficient_resource_quota"]]
    (quota,) = docs(files, "inject/apply.yaml")
    name = quota["metadata"]["name"]
    assert name == "prometheus-main"
    pods = sum(o["spec"].get("replicas", 1) for o in topology_objects(files).values()
               if o["kind"] in ("Deployment", "StatefulSet"))
    assert quota["spec"] == {"hard": {"pods": str(pods)}}
    assert [d["metadata"]["name"] for d in docs(files, "revert/delete.yaml")] == [name]
    # the ITBench export names it as ITBench's task creates it (inject_insufficient_kubernetes_resource_quota.yaml:
    # `memory`), everywhere (its entities, solutions and groups)
    name = "memory"
    v2 = yaml.safe_load(files["itbench/groundtruth.yaml"])
    assert any(e["metadata"]["name"] == name for e in v2["spec"]["entities"] if e["kind"] == "ResourceQuota")
    commands = [s["command"] for sol in v2["spec"]["solutions"] for alt in sol for s in alt["steps"]]
    assert commands and all(c.endswith(f"resourcequota {name}") for c in commands)
    v1 = yaml.safe_load(files["itbench/groundtruth_v1.yaml"])
    quota_groups = [g for g in v1["spec"]["groups"] if g["kind"] == "ResourceQuota"]
    assert [g["filter"] for g in quota_groups] == [[name + r"\b"]]


def test_request_surge_creates_the_scanner_and_removes_it(bundles):
    files = bundles[SCENARIOS["api_server_request_surge"]]
    created = docs(files, "inject/apply.yaml")
    assert [(d["kind"], d["metadata"]["name"]) for d in created] == [
        ("ServiceAccount", "workload-scanner"), ("Role", "workload-scanner"), ("RoleBinding", "workload-scanner"),
        ("Deployment", "workload-scanner")]
    assert all(d["metadata"]["namespace"] == "otel-demo" for d in created)
    assert all("app.kubernetes.io/managed-by" not in d["metadata"].get("labels", {}) for d in created)
    deployment = created[-1]
    pod = deployment["spec"]["template"]
    assert deployment["spec"]["selector"]["matchLabels"].items() <= pod["metadata"]["labels"].items()
    assert pod["spec"]["serviceAccountName"] == "workload-scanner"
    env = {e["name"]: e["value"] for e in pod["spec"]["containers"][0]["env"]}
    assert env == {"REQUESTS_PER_SECOND": "1000", "NAMESPACE": "otel-demo"}
    assert "revert/apply.yaml" not in files
    assert [(d["kind"], d["metadata"]["name"]) for d in docs(files, "revert/delete.yaml")] == sorted(
        [(d["kind"], d["metadata"]["name"]) for d in created], key=lambda k: ["Deployment", "ServiceAccount", "Role",
                                                                              "RoleBinding"].index(k[0]))
    v2 = yaml.safe_load(files["itbench/groundtruth.yaml"])
    assert v2["spec"]["entities"] == [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "otel-demo"}}]


def test_ambient_mode_disabled_relabels_the_namespace(bundles):
    files = bundles[SCENARIOS["istio_ambient_disabled"]]
    assert docs(files, "inject/apply.yaml") == [{"apiVersion": "v1", "kind": "Namespace", "metadata": {
        "name": "book-info", "labels": {"istio.io/dataplane-mode": "none"}}}]
    assert docs(files, "revert/apply.yaml") == [{"apiVersion": "v1", "kind": "Namespace", "metadata": {
        "name": "book-info", "labels": {"istio.io/dataplane-mode": "ambient"}}}]


# ---- preconditions through the API (each also has a fixture) ---------------------------------------------


FLAG_SCENARIO = (SRE / "otel-load-generator-flood-homepage-flag.itb").read_text("utf-8")


@pytest.mark.parametrize("old,new,code", [
    ('    wait after restart on deployment "flagd"\n', "", "E2024"),
    ('    wait after restart on deployment "load-generator"\n', "", "E2024"),
    ('wait after restart on deployment "flagd"', 'wait before restart on deployment "flagd"', "E2024"),
    ('flag = "loadGeneratorFloodHomepage"', 'flag = "loadGeneratorFlood"', "E2011"),
    ('state = "on"', 'state = "10sec"', "E2010"),
    ('state = "on"', 'state = "off"', "E2027"),
])
def test_feature_flag_preconditions(old, new, code):
    assert old in FLAG_SCENARIO
    _, diags = compile_text(FLAG_SCENARIO.replace(old, new))
    assert [d.code for d in diags.errors()] == [code]


def test_only_a_flagd_client_is_asked_to_restart_as_a_flag_reader():
    """A reader must be a flagd client (FLAGD_HOST): kafka is not, so no E2024 says it reads a flag."""
    kafka = (SRE / "otel-kafka-queue-problems-flag.itb").read_text("utf-8")
    _, diags = compile_text(kafka.replace('    wait after restart on deployment "kafka"\n', ""))
    assert diags.errors() == []
    # a reader that stops being a flagd client stops being required
    from itbench_dsl.faults.config import FLAG_READERS
    assert all(reader != "kafka" for reader in FLAG_READERS.values())
    _, diags = compile_text(FLAG_SCENARIO.replace('    wait after restart on deployment "load-generator"\n', ""))
    assert [d.code for d in diags.errors()] == ["E2024"] and "load-generator" in diags.errors()[0].message


def test_the_feature_flag_restart_can_come_from_a_failed_waiter_without_a_second_error():
    text = FLAG_SCENARIO.replace('wait after restart on deployment "flagd"', 'wait after restart on deployment "flagdd"')
    _, diags = compile_text(text)
    assert [d.code for d in diags.errors()] == ["E2003"]


def test_istio_fault_needs_a_mesh():
    text = (SRE / "bookinfo-ambient-mode-disabled.itb").read_text("utf-8")
    _, diags = compile_text(text.replace('use app "book-info"', 'use app "opentelemetry-demo"').replace(
        'namespace "book-info"', 'namespace "otel-demo"'))
    assert "E2025" in [d.code for d in diags.errors()]


@pytest.mark.parametrize("kind,resource", [
    ("corrupted_secret", "secrets"), ("valkey_changed_password", "secrets"),
    ("ingress_port_blocking_network_policy", "networkpolicies"), ("insufficient_resource_quota", "resourcequotas"),
])
def test_the_agent_can_undo_the_fault(bundles, kind, resource):
    files = bundles[SCENARIOS[kind]]
    roles = [d for d in docs(files, "manifests/agent-access.yaml") if d["kind"] == "Role"]
    writable = {r for role in roles for rule in role["rules"] if "delete" in rule["verbs"] or "update" in rule["verbs"]
                for r in rule["resources"]}
    assert resource in writable


# ---- ITBench's `targetPort` and objects created by an earlier fault ------------------------------------------


TARGET_PORT_SCENARIO = '''scenario "cart-target-port" {
  domain sre
  complexity low
  description "The cart service points at a port nothing listens on."
  use app "opentelemetry-demo"
  fault modified_target_port on service "cart" {
    BODY
  }
}
'''


@pytest.mark.parametrize("body,new_target", [
    ("", 9999),  # ITBench's injection writes 9999
    ("target_port = 8081", 8081),
    ("from_target_port = 8080", 9999),  # the service port by the target port it has now, as ITBench selects it
])
def test_modified_target_port_names_the_port_as_itbench_selects_it(body: str, new_target: int):
    files, diags = compile_text(TARGET_PORT_SCENARIO.replace("BODY", body))
    assert not diags.errors(), render_human(diags, color=False)
    scenario = yaml.safe_load(files["itbench/scenario.yaml"])
    (injection,) = scenario["spec"]["faults"][0]["injections"]
    # ITBench's `targetPort` is the port's target port before the injection, not the new one
    assert injection["args"]["targetPort"] == 8080
    (after,) = docs(files, "inject/apply.yaml")
    assert [p["targetPort"] for p in after["spec"]["ports"]] == [new_target]


@pytest.mark.parametrize("body,code", [
    ("from_target_port = 7070", "E2022"),  # no port of cart targets 7070
    ('from_target_port = 8080\n    port = "tcp-service"', "E2010"),  # two ways to choose the port
    ("from_target_port = 8080\n    target_port = 8080", "E2027"),  # changes nothing
])
def test_modified_target_port_refuses_what_itbench_would_not_find(body: str, code: str):
    _, diags = compile_text(TARGET_PORT_SCENARIO.replace("BODY", body))
    assert [d.code for d in diags.errors()] == [code], render_human(diags, color=False)


CREATED_SECRET_SCENARIO = '''scenario "valkey-credentials-corrupted" {
  domain sre
  complexity medium
  description "valkey-cart requires a password, then the secret holding it is corrupted."
  use app "opentelemetry-demo"
  FIRST
  SECOND
}
'''
VALKEY = 'fault valkey_changed_password on deployment "valkey-cart" {\n    container = "valkey-cart"\n  }'
CORRUPT = 'fault corrupted_secret on secret "valkey-credentials"'


def test_a_fault_can_target_the_secret_an_earlier_fault_creates():
    """ITBench's valkey password fault creates Secret `valkey-credentials`, which the application lacks: the
    faults after it resolve it as they resolve the topology's objects."""
    files, diags = compile_text(CREATED_SECRET_SCENARIO.replace("FIRST", VALKEY).replace("SECOND", CORRUPT))
    assert not diags.errors(), render_human(diags, color=False)
    assert ("Secret", "otel-demo", "valkey-credentials") not in topology_objects(files)  # created, not installed
    injected = by_key(docs(files, "inject/apply.yaml"))
    secret = injected[("Secret", "otel-demo", "valkey-credentials")]
    assert secret["stringData"] == {"valkey-password": CORRUPTED_VALUE}
    # like the application's own objects: no harness marker, the labels most of them carry (those each object
    # carries with its own name, `component`, with the Secret's own: backends/faults.py per_object_labels)
    assert secret["metadata"]["labels"] == {"app.kubernetes.io/part-of": "opentelemetry-demo",
                                            "app.kubernetes.io/version": "2.1.3",
                                            "app.kubernetes.io/component": "valkey-credentials",
                                            "app.kubernetes.io/name": "valkey-credentials",
                                            "opentelemetry.io/name": "valkey-credentials"}
    # the revert deletes the secret once (the fault that created it), and applies no copy of it
    assert [d["kind"] for d in docs(files, "revert/delete.yaml")] == ["Secret"]
    assert ("Secret", "otel-demo", "valkey-credentials") not in by_key(docs(files, "revert/apply.yaml"))
    scenario = yaml.safe_load(files["itbench/scenario.yaml"])
    ids = [i["id"] for f in scenario["spec"]["faults"] for i in f["injections"]]
    assert ids == ["valkey-workload-changed-password", "corrupted-kubernetes-secret-credentials"]


def test_a_created_object_does_not_exist_before_the_fault_that_creates_it():
    _, diags = compile_text(CREATED_SECRET_SCENARIO.replace("FIRST", CORRUPT).replace("SECOND", VALKEY))
    (error,) = diags.errors()
    assert error.code == "E2003" and "valkey-credentials" in error.message


def test_ground_truth_may_name_the_configmap_a_fault_creates():
    text = CREATED_SECRET_SCENARIO.replace("FIRST", 'fault valkey_out_of_memory on deployment "valkey-cart"').replace(
        "SECOND", 'expect {\n    root_cause configmap "valkey-storage-script"\n  }')
    files, diags = compile_text(text)
    assert not diags.errors(), render_human(diags, color=False)
    v1 = yaml.safe_load(files["itbench/groundtruth_v1.yaml"])["spec"]
    assert any(g["kind"] == "ConfigMap" and g.get("root_cause") for g in v1["groups"])
