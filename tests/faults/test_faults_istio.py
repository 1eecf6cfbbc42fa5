"""Istio faults that create Istio objects: strict mutual TLS (ITBench scenario 50) and an authorization
policy denying requests at a gateway (ITBench scenario 47).

For each fault: its library scenario compiles clean, its ITBench arguments are valid against the fault's
`arguments.jsonSchema`, its inject/ and revert/ objects validate (built-in kinds with `kubernetes-validate
--strict`, the Istio kinds against the vendored schemas), the injection changes exactly what the fault says
and the revert restores the topology. Each broken precondition has its own error fixture
(tests/cases/errors); they are also checked here through the API.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest
import yaml

from support.compiling import in_itbench_names
from jsonschema import Draft202012Validator
from backends.test_kubernetes_validate import _is_builtin, _schema_version, _validator_command

from support.compiling import compile_files, yaml_documents
from itbench_dsl.compiler import compile_source
from itbench_dsl.diagnostics import Diagnostics, render_human
from itbench_dsl.faults import CREATABLE_KINDS, FAULTS, istio, itbench_entry
from itbench_dsl.validate import validate_object

REPO = Path(__file__).resolve().parents[2]
SRE = REPO / "scenarios" / "sre"

SCENARIOS = {
    "istio_strict_mtls": "bookinfo-productpage-strict-mtls.itb",
    "istio_deny_gateway": "bookinfo-gateway-denies-get.itb",
}


compile_text = compile_files
docs = yaml_documents


def by_key(objects: list[dict]) -> dict[tuple, dict]:
    return {(o["kind"], o["metadata"].get("namespace"), o["metadata"]["name"]): o for o in objects}


@pytest.fixture(scope="module")
def bundles() -> dict[str, dict[str, bytes]]:
    out = {}
    for kind, file_name in SCENARIOS.items():
        path = SRE / file_name
        diags = Diagnostics()
        result = compile_source(path.read_bytes(), f"scenarios/sre/{file_name}", diags)
        assert not diags.items, render_human(diags, color=False)
        out[kind] = result.files
    return out


def test_the_faults_are_documented():
    for name in SCENARIOS:
        kind = FAULTS[name]
        assert kind in istio.FAULTS
        assert kind.summary and kind.preconditions and kind.itbench_id and kind.domains and kind.creates
        for arg in kind.args:
            assert arg.help
    assert CREATABLE_KINDS["peerauthentication"] == ("security.istio.io/v1", "PeerAuthentication")
    assert CREATABLE_KINDS["authorizationpolicy"] == ("security.istio.io/v1", "AuthorizationPolicy")


@pytest.mark.parametrize("kind", sorted(SCENARIOS))
def test_itbench_arguments_follow_the_fault_schema(bundles, kind):
    schema = itbench_entry("faults", FAULTS[kind].itbench_id)["arguments"]["jsonSchema"]
    scenario = yaml.safe_load(bundles[kind]["itbench/scenario.yaml"])
    injections = [i for f in scenario["spec"]["faults"] for i in f["injections"] if i["id"] == FAULTS[kind].itbench_id]
    assert len(injections) == 1
    assert not [e.message for e in Draft202012Validator(schema).iter_errors(injections[0]["args"])]


@pytest.mark.parametrize("kind,number", [("istio_strict_mtls", 50), ("istio_deny_gateway", 47)])
def test_the_scenarios_mirror_itbench(bundles, kind, number):
    reference = REPO.parent / "shared" / "reference" / "itbench" / "scenarios" / f"scenario_{number}"
    if not reference.is_dir():
        pytest.skip("the shared reference folder is absent")
    assert yaml.safe_load(bundles[kind]["itbench/scenario.yaml"]) == yaml.safe_load((reference / "scenario.yaml").read_text())
    ours = yaml.safe_load(bundles[kind]["itbench/groundtruth.yaml"])
    theirs = yaml.safe_load((reference / "groundtruth.yaml").read_text())
    # ITBench lists its fault library's alerts; the port lists those that fire (a rule ships, or the monitoring
    # stack defines it): a subset of ITBench's, the rest the same
    assert {a["name"] for a in ours["spec"].pop("alerts")} <= {a["name"] for a in theirs["spec"].pop("alerts")}
    # ITBench's ground truth may name a created object otherwise than its injection does (`strict-mtls-mode`
    # for the `mtls-strict` it creates): the port names what the injection creates, read back in ITBench's terms
    result = compile_source((SRE / SCENARIOS[kind]).read_bytes(), SCENARIOS[kind], Diagnostics())
    assert in_itbench_names(ours, theirs, result.scenario) == theirs


def test_injected_and_reverted_objects_validate(bundles, tmp_path: Path):
    files, custom = [], 0
    for kind, bundle in bundles.items():
        for name in ("inject/apply.yaml", "revert/apply.yaml", "inject/delete.yaml", "revert/delete.yaml"):
            for index, doc in enumerate(docs(bundle, name)):
                if not name.endswith("apply.yaml"):
                    continue
                assert not validate_object(doc), f"{kind}/{name} {doc['kind']}"
                if not _is_builtin(doc["apiVersion"]):
                    assert doc["apiVersion"] == "security.istio.io/v1", doc  # validated above, vendored schema
                    custom += 1
                    continue
                slug = re.sub(r"[^A-Za-z0-9.-]+", "_", f"{kind}-{name}-{index}-{doc['kind']}")
                target = tmp_path / f"{slug}.yaml"
                target.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
                files.append(target)
    assert custom == 2 and files  # the PeerAuthentication and the AuthorizationPolicy; the Deployment twice
    run = subprocess.run([*_validator_command(), "--strict", "--kubernetes-version", _schema_version(),
                          *map(str, files)], capture_output=True, text=True, timeout=120,
                         env={**os.environ, "NO_COLOR": "1"})
    output = run.stdout + run.stderr
    problems = [line for line in output.splitlines() if line.startswith(("ERROR", "WARN"))]
    assert run.returncode == 0 and not problems, "\n".join(problems or [output])
    assert len([line for line in output.splitlines() if " passed " in line]) == len(files)


# ---- what each injection changes, and its revert ---------------------------------------------------------


def test_strict_mtls_takes_the_pods_out_of_the_mesh_and_requires_mtls(bundles):
    files = bundles["istio_strict_mtls"]
    topology = by_key(docs(files, "manifests/topology.yaml"))
    original = topology[("Deployment", "book-info", "productpage-v1")]
    injected = by_key(docs(files, "inject/apply.yaml"))
    assert set(injected) == {("Deployment", "book-info", "productpage-v1"),
                             ("PeerAuthentication", "book-info", "peer-authentication")}
    deployment = injected[("Deployment", "book-info", "productpage-v1")]
    labels = deployment["spec"]["template"]["metadata"]["labels"]
    assert labels == {**original["spec"]["template"]["metadata"]["labels"], "istio.io/dataplane-mode": "none"}
    deployment["spec"]["template"]["metadata"]["labels"].pop("istio.io/dataplane-mode")
    assert deployment == original  # nothing else changes
    assert injected[("PeerAuthentication", "book-info", "peer-authentication")] == {
        "apiVersion": "security.istio.io/v1", "kind": "PeerAuthentication",
        # the labels the application's objects beside it carry, with its target's values (backends/faults.py)
        "metadata": {"name": "peer-authentication", "namespace": "book-info", "labels": {"app": "productpage"}},
        "spec": {"mtls": {"mode": "STRICT"}}}
    assert docs(files, "inject/delete.yaml") == []
    assert docs(files, "revert/apply.yaml") == [original]
    assert docs(files, "revert/delete.yaml") == [{"apiVersion": "security.istio.io/v1", "kind": "PeerAuthentication",
                                                  "metadata": {"name": "peer-authentication", "namespace": "book-info"}}]


POLICY = "reviews-v2-shared"  # faults/base.application_name: a component of book-info and a word


def test_deny_gateway_attaches_a_deny_policy_to_the_gateway(bundles):
    files = bundles["istio_deny_gateway"]
    assert docs(files, "inject/apply.yaml") == [{
        "apiVersion": "security.istio.io/v1", "kind": "AuthorizationPolicy",
        # neither the gateway's name nor `deny` (faults/base.application_name); the labels most of book-info's objects
        # carry (the gateway is the installation's: `app` takes the most common value)
        "metadata": {"name": POLICY, "namespace": "book-info", "labels": {"app": "reviews"}},
        "spec": {"action": "DENY",
                 "targetRef": {"group": "gateway.networking.k8s.io", "kind": "Gateway", "name": "bookinfo-gateway"},
                 "rules": [{"to": [{"operation": {"methods": ["GET"]}}]}]}}]
    assert docs(files, "inject/delete.yaml") == []
    assert docs(files, "revert/apply.yaml") == []
    assert docs(files, "revert/delete.yaml") == [{
        "apiVersion": "security.istio.io/v1", "kind": "AuthorizationPolicy",
        "metadata": {"name": POLICY, "namespace": "book-info"}}]
    # the gateway comes with the application's installation: the fault names it, the manifests do not hold it
    assert not any(d["kind"] == "Gateway" for d in docs(files, "manifests/topology.yaml"))


def test_deny_gateway_with_several_methods():
    text = (SRE / SCENARIOS["istio_deny_gateway"]).read_text("utf-8").replace(
        'methods = ["GET"]', 'methods = ["GET", "POST", "DELETE", "PUT"]')
    files, diags = compile_text(text)
    assert not diags.errors(), render_human(diags, color=False)
    [policy] = docs(files, "inject/apply.yaml")
    assert policy["spec"]["rules"] == [{"to": [{"operation": {"methods": ["GET", "POST", "DELETE", "PUT"]}}]}]
    args = yaml.safe_load(files["itbench/scenario.yaml"])["spec"]["faults"][0]["injections"][0]["args"]
    assert args["httpMethods"] == ["GET", "POST", "DELETE", "PUT"]
    assert not validate_object(policy)


@pytest.mark.parametrize("kind,resource", [("istio_strict_mtls", "peerauthentications"),
                                           ("istio_deny_gateway", "authorizationpolicies")])
def test_the_agent_can_undo_the_fault(bundles, kind, resource):
    roles = [d for d in docs(bundles[kind], "manifests/agent-access.yaml") if d["kind"] == "Role"]
    writable = {r for role in roles for rule in role["rules"] if "delete" in rule["verbs"] or "update" in rule["verbs"]
                for r in rule["resources"]}
    assert resource in writable


def test_the_gateway_can_be_named_in_expectations(bundles):
    groundtruth = yaml.safe_load(bundles["istio_deny_gateway"]["itbench/groundtruth_v1.yaml"])
    kinds = {g["kind"] for g in groundtruth["spec"]["groups"]}
    assert {"Gateway", "Service"} <= kinds


# ---- preconditions (each also has a fixture under tests/cases/errors) -------------------------------------


def codes(text: str) -> list[str]:
    _, diags = compile_text(text)
    return [d.code for d in diags.errors()]


def without_expectations(text: str) -> str:
    """The scenario without its `expect` block (which names what the fault creates)."""
    return re.sub(r"\n  expect \{\n.*?\n  \}\n", "\n", text, flags=re.S)


MTLS = without_expectations((SRE / SCENARIOS["istio_strict_mtls"]).read_text("utf-8"))
DENY = without_expectations((SRE / SCENARIOS["istio_deny_gateway"]).read_text("utf-8"))


def test_the_precondition_texts_compile_clean():
    assert "expect" not in MTLS and "expect" not in DENY
    assert codes(MTLS) == [] and codes(DENY) == []


@pytest.mark.parametrize("old,new,code", [
    ('deployment "productpage-v1"', 'deployment "ratings-v1"', "E2011"),  # calls no workload
    ('deployment "productpage-v1"', 'service "productpage"', "E2004"),  # a workload is needed
])
def test_strict_mtls_preconditions(old, new, code):
    assert codes(MTLS.replace(f"fault istio_strict_mtls on {old}", f"fault istio_strict_mtls on {new}")) == [code]


def test_strict_mtls_needs_an_ambient_mesh():
    assert "E2025" in codes('scenario "x" {\n  domain sre\n  complexity low\n  description "d"\n'
                            '  use app "opentelemetry-demo"\n  fault istio_strict_mtls on deployment "frontend"\n}\n')


def test_strict_mtls_on_pods_already_out_of_the_mesh():
    fixture = (REPO / "tests" / "cases" / "errors" / "E2027-strict-mtls-already-out-of-mesh" / "input.itb").read_text()
    assert codes(fixture) == ["E2027"]
    assert codes(fixture.replace('"istio.io/dataplane-mode" = "none"', 'tier = "web"')) == []


@pytest.mark.parametrize("methods,code", [
    ('["get"]', "E2010"), ('[]', "E2010"), ('["GET", "GET"]', "E2010"), ('["PATCH"]', "E2010"), ('"GET"', "E2008"),
])
def test_deny_gateway_methods(methods, code):
    assert codes(DENY.replace('methods = ["GET"]', f"methods = {methods}")) == [code]


def test_deny_gateway_needs_methods():
    assert codes(DENY.replace('    methods = ["GET"]\n', "")) == ["E2007"]


@pytest.mark.parametrize("gateway", ['"bookinfo-gw"', '"default/bookinfo-gateway"'])
def test_deny_gateway_needs_a_gateway_of_the_application(gateway):
    assert codes(DENY.replace('gateway "bookinfo-gateway" {', f"gateway {gateway} {{", 1)) == ["E2003"]


def test_deny_gateway_accepts_the_namespaced_name():
    assert codes(DENY.replace('gateway "bookinfo-gateway" {', 'gateway "book-info/bookinfo-gateway" {', 1)) == []


def test_deny_gateway_needs_a_mesh(monkeypatch):
    # an application that deploys a gateway but runs in no mesh: no stdlib application does, so make one
    import dataclasses

    from itbench_dsl import applications
    from itbench_dsl.topology import DATAPLANE_LABEL

    stdlib = applications._stdlib

    def meshless(name):
        loaded = stdlib(name)
        build = loaded.build.copy()
        build.app_metadata = {k: v for k, v in build.app_metadata.items() if k != "service_mesh"}
        build.namespaces = [dataclasses.replace(n, labels={k: v for k, v in n.labels.items() if k != DATAPLANE_LABEL})
                            for n in build.namespaces]
        return applications.Loaded(build, loaded.diags, loaded.name)

    monkeypatch.setattr(applications, "_stdlib", meshless)
    _, diags = compile_text(DENY)
    [error] = diags.errors()
    assert error.code == "E2025" and "book-info" in error.message
