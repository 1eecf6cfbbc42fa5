"""The generated evaluator.py: diagnosis, mitigation, FinOps and CISO grading, gaming attempts that
must fail, and the property that scenario text never changes the evaluator's behaviour.

States are built here from the bundle's own manifests (`make_state`), independently of the
compiler's state derivation, so the two can check each other.
"""

from __future__ import annotations

import ast
import copy
import dataclasses
import json
import subprocess
import sys
from functools import cache, lru_cache
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from itbench_dsl import ciso
from itbench_dsl import evaluator_runtime as rt
from itbench_dsl.backends import evaluator as backend
from itbench_dsl.backends import faults as fault_backend
from itbench_dsl.backends.manifests import topology_manifests
from itbench_dsl.checker import check
from itbench_dsl.compiler import dump_yaml
from itbench_dsl.diagnostics import Diagnostics
from itbench_dsl.parser import parse_bytes

ROOT = Path(__file__).resolve().parent.parent
SCENARIOS = sorted((ROOT / "scenarios").rglob("*.itb"))
SRE = ["otel-shipping-quote-address", "otel-checkout-nonexistent-image", "otel-accounting-scaled-to-zero",
       "otel-cart-service-target-port", "otel-checkout-payment-network-loss", "bookinfo-details-invalid-selector",
       "otel-cart-deleted-service"]


@cache
def bundle(name: str):
    """(scenario, {file: bytes}): the bundle's manifests and evaluator.py, as `generate` writes them
    (built here so that a failure in another backend, the prompt's say, does not hide this one's)."""
    path = next(p for p in SCENARIOS if p.stem == name)
    diags = Diagnostics()
    scenario = check(parse_bytes(path.read_bytes(), str(path), diags), str(path), diags).scenario
    assert scenario is not None and not diags.errors(), [d.message for d in diags.errors()]
    gaps = [id(o) for o in fault_backend.gap_objects(scenario)]
    topology = topology_manifests(scenario.topology, exclude=gaps) + ciso.k8s_objects(scenario)[1]
    inject_apply, inject_delete, revert_apply, revert_delete = fault_backend.plan(scenario)
    files = {"manifests/topology.yaml": dump_yaml(topology), "inject/apply.yaml": dump_yaml(inject_apply),
             "revert/apply.yaml": dump_yaml(revert_apply),
             "inject/delete.yaml": dump_yaml([fault_backend.delete_manifest(r) for r in inject_delete]),
             "revert/delete.yaml": dump_yaml([fault_backend.delete_manifest(r) for r in revert_delete]),
             "evaluator.py": backend.evaluator_source(scenario).encode("utf-8")}
    return scenario, files


@cache
def evaluator(name: str) -> dict:
    """The bundle's evaluator.py, executed as a module: its namespace (SPEC, evaluate, main)."""
    namespace: dict = {"__name__": "bundle_evaluator"}
    exec(compile(bundle(name)[1]["evaluator.py"], f"{name}/evaluator.py", "exec"), namespace)  # noqa: S102 - the generated evaluator
    return namespace


def run(name, agent_output, state, **kw) -> dict:
    ns = evaluator(name)
    return ns["evaluate"](ns["SPEC"], agent_output, state, **kw)


# ---- states from manifests --------------------------------------------------------------------------


_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _docs(files, name) -> list[dict]:
    return [d for d in yaml.load_all(files[name], Loader=_LOADER) if d] if name in files else []


@cache
def _bundle_docs(name: str) -> dict[str, list[dict]]:
    files = bundle(name)[1]
    return {f: _docs(files, f) for f in ("manifests/topology.yaml", "inject/apply.yaml", "inject/delete.yaml",
                                         "revert/apply.yaml", "revert/delete.yaml")}


def _key(obj):
    meta = obj["metadata"]
    return (obj["kind"], meta.get("namespace"), meta["name"])


def with_status(objects: list[dict], ready: bool = True) -> dict:
    """A `kubectl get -o json` List: workloads with status, and their pods (Running, Ready)."""
    items = []
    for obj in objects:
        obj = copy.deepcopy(obj)
        items.append(obj)
        if obj["kind"] in ("Deployment", "StatefulSet"):
            replicas = obj["spec"].get("replicas", 1)
            obj["status"] = {"replicas": replicas, "readyReplicas": replicas if ready else 0}
            labels = obj["spec"]["template"]["metadata"].get("labels", {})
            for i in range(replicas):
                name = f"{obj['metadata']['name']}-{i}" if obj["kind"] == "StatefulSet" else \
                    f"{obj['metadata']['name']}-5d8f7b9c6d-{'abcde'[i:] + 'xyzwv'[:i]}"
                items.append({"apiVersion": "v1", "kind": "Pod",
                              "metadata": {"name": name, "namespace": obj["metadata"]["namespace"],
                                           "labels": dict(labels)},
                              "status": {"phase": "Running" if ready else "Pending",
                                         "conditions": [{"type": "Ready", "status": "True" if ready else "False"}]}})
    return {"resources": {"apiVersion": "v1", "kind": "List", "items": items}}


def apply(objects: list[dict], applied: list[dict], deleted: list[dict]) -> list[dict]:
    index = {_key(o): o for o in objects}
    for obj in applied:
        index[_key(obj)] = obj
    for obj in deleted:
        index.pop(_key(obj), None)
    return list(index.values())


def make_state(name: str, which: str, alerts: list[str] = ()) -> dict:
    return copy.deepcopy(_make_state(name, which, tuple(alerts)))


@cache
def _make_state(name: str, which: str, alerts: tuple[str, ...]) -> dict:
    docs = _bundle_docs(name)
    healthy = docs["manifests/topology.yaml"]
    faulty = apply(healthy, docs["inject/apply.yaml"], docs["inject/delete.yaml"])
    solved = apply(faulty, docs["revert/apply.yaml"], docs["revert/delete.yaml"])
    state = with_status({"healthy": healthy, "faulty": faulty, "solved": solved}[which])
    state["alerts"] = {"status": "success", "data": {"alerts": [
        {"labels": {"alertname": a, "namespace": "otel-demo"}, "state": "firing"} for a in alerts]}}
    return state


def fault_alerts(name: str) -> list[str]:
    scenario = bundle(name)[0]
    return sorted({a.name for a in scenario.alerts})


def edit(state: dict, kind: str, obj_name: str, change) -> dict:
    state = copy.deepcopy(state)
    items = state["resources"]["items"]
    for obj in list(items):
        if obj["kind"] == kind and obj["metadata"]["name"] == obj_name and change(obj) is False:
            items.remove(obj)  # the change deletes the object
    return state


# ---- the generated file ------------------------------------------------------------------------------


def test_every_bundle_has_a_parsable_deterministic_evaluator():
    for path in SCENARIOS:
        scenario, files = bundle(path.stem)
        source = files["evaluator.py"].decode("utf-8")
        tree = ast.parse(source)
        assert source.startswith(backend.runtime_source().rstrip("\n"))
        assert source == backend.evaluator_source(scenario)
        assigns = [n for n in tree.body if isinstance(n, ast.Assign) and n.targets[0].id == "SPEC"]
        assert len(assigns) == 1


# ---- SRE diagnosis ---------------------------------------------------------------------------------


def perfect(name: str, shape: int = 2026) -> dict:
    scenario = bundle(name)[0]
    if shape == 2025:
        from itbench_dsl.backends.itbench import group_id_in
        return {"entities": [{"id": group_id_in(scenario, r), "root_cause": True} for r in scenario.root_causes]}
    return {"entities": [{"name": f"{r.namespace or ''}/{r.kind}/{r.name}", "contributing_factor": True}
                         for r in scenario.root_causes],
            "propagations": [{"source": f"{e.source.namespace}/{e.source.kind}/{e.source.name}",
                              "target": f"{e.target.namespace}/{e.target.kind}/{e.target.name}",
                              "condition": e.condition, "effect": e.effect} for e in scenario.propagations]}


@pytest.mark.parametrize("name", SRE)
def test_perfect_diagnosis_scores_one_and_empty_zero(name):
    state = make_state(name, "faulty", fault_alerts(name))
    for shape in (2025, 2026):
        verdict = run(name, perfect(name, shape), state)
        assert verdict["passed"] and verdict["score"] == 1.0, verdict
        assert verdict["metrics"]["root_cause_recall_at_1"] == 1.0
    assert run(name, perfect(name), state)["metrics"].get("propagation_f1", 1.0) == 1.0
    empty = run(name, {"entities": []}, state)
    assert not empty["passed"] and empty["score"] == 0.0


def test_neighbour_gets_partial_credit():
    # shipping is the root cause; checkout calls shipping (one hop), frontend calls checkout and shipping
    verdict = run("otel-shipping-quote-address", {"entities": [{"name": "otel-demo/Deployment/checkout",
                                                                "contributing_factor": True}]},
                  make_state("otel-shipping-quote-address", "faulty"))
    assert not verdict["passed"]
    assert verdict["metrics"]["topology_credit"] == 0.5 and 0 < verdict["score"] < 1
    far = run("otel-shipping-quote-address", {"entities": [{"name": "otel-demo/Deployment/accounting",
                                                            "contributing_factor": True}]},
              make_state("otel-shipping-quote-address", "faulty"))
    assert far["score"] < verdict["score"]


def test_pod_and_cluster_scoped_names():
    name = "otel-checkout-nonexistent-image"
    out = {"entities": [{"name": "otel-demo/Pod/checkout-7d4b9c8f6-x2x9q", "contributing_factor": True}]}
    verdict = run(name, out, make_state(name, "faulty"))
    assert verdict["metrics"]["topology_credit"] == 1.0  # the right component, named through a pod
    ambient = "bookinfo-ambient-mode-disabled"
    for text in ("/Namespace/book-info", "Namespace/book-info"):
        verdict = run(ambient, {"entities": [{"name": text, "contributing_factor": True}]}, make_state(ambient, "faulty"))
        assert verdict["metrics"]["root_cause_recall"] == 1.0, text


@pytest.mark.parametrize("name", SRE[:5])
def test_listing_every_object_as_root_cause_fails(name):
    state = make_state(name, "faulty")
    everything = [f"{o['metadata'].get('namespace', '')}/{o['kind']}/{o['metadata']['name']}"
                  for o in state["resources"]["items"]]
    verdict = run(name, {"entities": [{"name": n, "contributing_factor": True} for n in everything]}, state)
    assert verdict["metrics"]["root_cause_recall"] == 1.0
    assert verdict["metrics"]["root_cause_precision"] < 0.2 and not verdict["passed"]


def test_propagation_chain_partial():
    name = "otel-shipping-quote-address"
    out = perfect(name)
    out["propagations"] = out["propagations"][1:2]  # the first edge joins two groups of one component
    metrics = run(name, out, make_state(name, "faulty"))["metrics"]
    assert 0 < metrics["propagation_f1"] < 1


# ---- SRE mitigation and FinOps ----------------------------------------------------------------------


MITIGATED = [p.stem for p in SCENARIOS if "/ciso/" not in str(p)]


@pytest.mark.parametrize("name", MITIGATED)
def test_healthy_and_solved_pass_faulty_fails(name):
    alerts = fault_alerts(name)
    for which in ("healthy", "solved"):
        verdict = run(name, None, make_state(name, which))
        assert verdict["passed"], (which, [c for c in verdict["checks"] if not c["passed"]])
    faulty = run(name, None, make_state(name, "faulty", alerts))
    if not bundle(name)[0].faults:  # a control: nothing is broken, so changing nothing is right
        assert faulty["passed"], [c for c in faulty["checks"] if not c["passed"]]
        return
    assert not faulty["passed"]


def root_workload(name: str) -> tuple[str, str]:
    scenario = bundle(name)[0]
    target = scenario.injections()[0].target
    workload = next((w for w in scenario.topology.workloads if w.name == target.name), scenario.topology.workloads[0])
    service = next(s for s in scenario.topology.services if all(workload.labels.get(k) == v for k, v in s.selector.items()))
    return workload.name, service.name


GAMED = ["otel-shipping-quote-address", "otel-checkout-nonexistent-image", "otel-cart-service-target-port",
         "otel-valkey-cart-changed-password", "otel-product-catalog-invalid-command", "shop-cart-modified-env"]


@pytest.mark.parametrize("name", GAMED)
def test_gaming_attempts_fail(name):
    workload, service = root_workload(name)
    solved = make_state(name, "solved")
    assert run(name, None, solved)["passed"]

    def scale(obj):
        obj["spec"]["replicas"] = 0
        obj["status"] = {"replicas": 0, "readyReplicas": 0}

    def relabel(obj):
        obj["metadata"]["labels"] = {"quarantined": "true"}

    scaled = edit(solved, "Deployment", workload, scale)
    scaled["resources"]["items"] = [o for o in scaled["resources"]["items"]
                                    if not (o["kind"] == "Pod" and o["metadata"]["name"].startswith(workload + "-"))]
    no_service = edit(solved, "Service", service, lambda obj: False)
    relabelled = solved
    for pod in [o["metadata"]["name"] for o in solved["resources"]["items"]
                if o["kind"] == "Pod" and o["metadata"]["name"].startswith(workload + "-5d8f")]:
        relabelled = edit(relabelled, "Pod", pod, relabel)
    for attempt in (scaled, no_service, relabelled):
        verdict = run(name, None, attempt)
        assert not verdict["passed"]
        assert not next(c for c in verdict["checks"] if c["id"] == "safeguards")["passed"]
    # the fault itself, left in place while everything reports Running: "all pods Running" is no fix
    assert not run(name, None, make_state(name, "faulty"))["passed"]


def test_finops_proximity_and_resource():
    name = "otel-cart-overprovisioned-requests"
    solved = run(name, {"resource": [{"name": "cart", "type": "Deployment"}]}, make_state(name, "solved"))
    assert solved["passed"] and solved["metrics"]["proximity"] == 1.0 and solved["score"] == 1.0
    faulty = run(name, {"resource": [{"name": "cart", "type": "deployment"}]}, make_state(name, "faulty"))
    assert not faulty["passed"] and faulty["metrics"]["proximity"] == 0.0  # ten times the optimum
    wrong = run(name, {"resource": [{"name": "frontend", "type": "Deployment"}]}, make_state(name, "solved"))
    assert not wrong["passed"] and wrong["metrics"]["resource_recall"] == 0.0
    hpa = "otel-frontend-hpa-misconfigured"
    assert run(hpa, None, make_state(hpa, "solved"))["metrics"]["proximity"] == 1.0


def test_quantities_compare_numerically():
    assert rt.same("1Gi", "1024Mi") and rt.same("500m", 0.5) and not rt.same("1", True)
    assert rt.compare("2", ">=", 1) and not rt.compare("abc", "<", 3)


# ---- CISO -------------------------------------------------------------------------------------------


def reports(name: str, gap: str, compliant: str) -> list[dict]:
    spec = evaluator(name)["SPEC"]["ciso"]
    results = []
    for obj, verdict in [(o, gap) for o in spec["gaps"]] + [(o, compliant) for o in spec["compliant"]]:
        meta = obj["metadata"]
        results.append({"policy": "agent-policy", "rule": "check", "result": verdict,
                        "resources": [{"kind": obj["kind"], "namespace": meta.get("namespace"), "name": meta["name"]}]})
    return [{"apiVersion": "wgpolicyk8s.io/v1alpha2", "kind": "PolicyReport", "results": results}]


KYVERNO = ["cis-k8s-5-2-2-privileged-kyverno", "cis-5-2-5-host-network-kyverno", "cis-k8s-5-7-2-seccomp-kyverno"]


@pytest.mark.parametrize("name", KYVERNO)
def test_kyverno_policy_reports(name):
    state = {"resources": {"kind": "List", "items": []}}
    good = run(name, None, dict(state, policyReports=reports(name, "fail", "pass")))
    assert good["passed"] and good["score"] == 1.0
    always_fail = dict(state, policyReports=reports(name, "fail", "fail"))
    assert not run(name, None, always_fail)["passed"]
    assert run(name, None, always_fail, gap_only=True)["passed"]  # ITBench's rule is fooled by it
    assert not run(name, None, dict(state, policyReports=reports(name, "pass", "pass")))["passed"]
    assert not run(name, None, dict(state, policyReports=[]))["passed"]


def test_rego_recorded_result_always_false_fails(tmp_path):
    name = "cis-k8s-5-2-5-host-network-opa"
    spec = evaluator(name)["SPEC"]

    def record(gap_value, ok_value):
        out = {}
        for obj, value in [(o, gap_value) for o in spec["ciso"]["gaps"]] + [(o, ok_value) for o in spec["ciso"]["compliant"]]:
            meta = obj["metadata"]
            out[f"{meta.get('namespace') or ''}/{obj['kind']}/{meta['name']}"] = {
                "result": [{"expressions": [{"value": value, "text": "data.check.result"}]}]}
        return out

    state = {"resources": {"kind": "List", "items": []}}
    assert run(name, None, state, opa_result=record(False, True))["passed"]
    assert not run(name, None, state, opa_result=record(False, False))["passed"]
    assert run(name, None, state, opa_result=record(False, False), gap_only=True)["passed"]


# ---- the command line ---------------------------------------------------------------------------------


def test_cli_exit_codes(tmp_path):
    name = "otel-shipping-quote-address"
    script = tmp_path / "evaluator.py"
    script.write_bytes(bundle(name)[1]["evaluator.py"])
    (tmp_path / "state.json").write_text(json.dumps(make_state(name, "solved")))
    (tmp_path / "out.json").write_text(json.dumps(perfect(name)))
    (tmp_path / "bad.json").write_text("{not json")
    (tmp_path / "shape.json").write_text(json.dumps({"resources": [1, 2]}))
    (tmp_path / "entities.json").write_text(json.dumps({"entities": "all of them"}))

    def call(*args):
        return subprocess.run([sys.executable, str(script), *args], check=False, capture_output=True, text=True, cwd=tmp_path)

    ok = call("--agent-output", "out.json", "--state", "state.json")
    assert ok.returncode == 0 and json.loads(ok.stdout)["passed"], ok.stderr
    mitigated = call("--state", "state.json", "--task", "mitigate")
    assert mitigated.returncode == 0 and json.loads(mitigated.stdout)["passed"]
    for args in (["--state", "missing.json"], ["--state", "bad.json"], ["--state", "shape.json"],
                 ["--agent-output", "bad.json", "--state", "state.json"],
                 ["--agent-output", "entities.json", "--state", "state.json"], []):
        result = call(*args)
        assert result.returncode == 2 and result.stderr.strip() and "Traceback" not in result.stderr, args


# ---- scenario text is data ----------------------------------------------------------------------------


texts = st.text(st.characters(blacklist_categories=("Cs",)), max_size=40)


def _without_spec(source: str) -> str:
    tree = ast.parse(source)
    for node in tree.body:
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", None) == "SPEC":
            node.value.args[0] = ast.Constant("")
    return ast.dump(tree)


@lru_cache(maxsize=1)
def _baseline():
    scenario = bundle("otel-shipping-quote-address")[0]
    return scenario, _without_spec(backend.evaluator_source(scenario))


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(name=texts, description=texts, condition=texts, effect=texts, step=texts, alert=texts, title=texts)
def test_scenario_text_never_changes_the_evaluator(name, description, condition, effect, step, alert, title):
    base, base_tree = _baseline()
    # a shallow copy keeps the (memoised) topology objects; only the text fields are replaced
    scenario = dataclasses.replace(base, name=name, description=description)
    scenario.propagations = [dataclasses.replace(e, condition=condition, effect=effect) for e in scenario.propagations]
    scenario.solutions = [dataclasses.replace(s, title=title, steps=[dataclasses.replace(x, text=step, command=step)
                                                                     for x in s.steps]) for s in scenario.solutions]
    scenario.alerts = [dataclasses.replace(a, description=alert) for a in scenario.alerts]
    source = backend.evaluator_source(scenario)
    assert _without_spec(source) == base_tree  # the strings are inside the SPEC literal, nowhere else
    namespace: dict = {"__name__": "fuzzed"}
    exec(compile(source, "evaluator.py", "exec"), namespace)  # noqa: S102 - the generated evaluator
    state = _make_state("otel-shipping-quote-address", "faulty", ())
    for output in (perfect("otel-shipping-quote-address"), None):
        got = namespace["evaluate"](namespace["SPEC"], output, state)
        want = run("otel-shipping-quote-address", output, state)
        assert got["scenario"] == name
        assert {**got, "scenario": None} == {**want, "scenario": None}


REGO_GOOD = """package check
import rego.v1

default result := true

result := false if {
	some item in input.items
	item.spec.template.spec.hostNetwork == true
}
"""
REGO_ALWAYS_FALSE = "package check\n\nresult := false\n"


def test_rego_evaluated_with_regopy():
    pytest.importorskip("regopy")
    name = "cis-k8s-5-2-5-host-network-opa"
    state = {"resources": {"kind": "List", "items": []}}
    good = run(name, None, state, artifact=("rego", REGO_GOOD))
    assert good["passed"], good["checks"]
    assert not run(name, None, state, artifact=("rego", REGO_ALWAYS_FALSE))["passed"]
    assert run(name, None, state, artifact=("rego", REGO_ALWAYS_FALSE), gap_only=True)["passed"]
    with pytest.raises(evaluator(name)["InputError"]):
        run(name, None, state, artifact=("rego", "package check\nresult := = bad\n"))


STUB_MATCHER = '''
from __future__ import annotations
import types


def evaluate_policy(policy, resource):
    """A stand-in with the real matcher's interface: fails privileged containers, or everything."""
    everything = policy["metadata"]["name"] == "always-fail"
    containers = resource["spec"]["template"]["spec"]["containers"]
    bad = everything or any((c.get("securityContext") or {}).get("privileged") for c in containers)
    return [types.SimpleNamespace(rule="check", result="fail" if bad else "pass")]
'''


def test_kyverno_offline_with_the_embedded_matcher(monkeypatch, tmp_path):
    name = "cis-k8s-5-2-2-privileged-kyverno"
    real = backend.package_source
    monkeypatch.setattr(backend, "package_source", lambda module: STUB_MATCHER if module == "kyverno" else real(module))
    source = backend.evaluator_source(bundle(name)[0])
    ast.parse(source)
    namespace: dict = {"__name__": "kyverno_bundle"}
    exec(compile(source, "evaluator.py", "exec"), namespace)  # noqa: S102 - the generated evaluator
    state = {"resources": {"kind": "List", "items": []}}

    def grade(policy_name, **kw):
        policy = [{"apiVersion": "kyverno.io/v1", "kind": "ClusterPolicy", "metadata": {"name": policy_name}}]
        return namespace["evaluate"](namespace["SPEC"], None, state, artifact=("kyverno", policy), **kw)

    assert grade("no-privileged")["passed"]
    assert not grade("always-fail")["passed"]
    assert grade("always-fail", gap_only=True)["passed"]
    script = tmp_path / "evaluator.py"
    script.write_text(source)
    (tmp_path / "state.json").write_text(json.dumps(state))
    (tmp_path / "policy.json").write_text(json.dumps({"apiVersion": "kyverno.io/v1", "kind": "ClusterPolicy",
                                                      "metadata": {"name": "no-privileged"}}))
    done = subprocess.run([sys.executable, str(script), "--state", "state.json", "--artifact", "policy.json"],
                          check=False, capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 0 and json.loads(done.stdout)["passed"], done.stderr


NO_PRIVILEGED = {"apiVersion": "kyverno.io/v1", "kind": "ClusterPolicy", "metadata": {"name": "disallow-privileged"},
                 "spec": {"rules": [{"name": "privileged", "match": {"any": [{"resources": {"kinds": ["Pod"]}}]},
                                     "validate": {"message": "privileged containers are not allowed", "pattern": {
                                         "spec": {"containers": [{"=(securityContext)": {"=(privileged)": "false"}}]}}}}]}}
ALWAYS_FAIL = {"apiVersion": "kyverno.io/v1", "kind": "ClusterPolicy", "metadata": {"name": "always-fail"},
               "spec": {"rules": [{"name": "all", "match": {"any": [{"resources": {"kinds": ["Deployment"]}}]},
                                   "validate": {"message": "no", "deny": {}}}]}}


def test_kyverno_offline_with_the_real_matcher():
    name = "cis-k8s-5-2-2-privileged-kyverno"
    assert "_KYVERNO_SOURCE" in bundle(name)[1]["evaluator.py"].decode()
    state = {"resources": {"kind": "List", "items": []}}
    good = run(name, None, state, artifact=("kyverno", [NO_PRIVILEGED]))  # a Pod rule, autogen for the Deployment
    assert good["passed"], good["checks"]
    assert not run(name, None, state, artifact=("kyverno", [ALWAYS_FAIL]))["passed"]
    assert run(name, None, state, artifact=("kyverno", [ALWAYS_FAIL]), gap_only=True)["passed"]


NO_PRIVILEGED_YAML = """\
apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata:
  name: disallow-privileged   # written by an agent, in YAML
spec:
  validationFailureAction: Audit
  rules:
  - name: privileged
    match:
      any:
      - resources:
          kinds: [Pod]
    validate:
      message: >-
        privileged containers
        are not allowed
      pattern:
        spec:
          containers:
          - =(securityContext):
              =(privileged): "false"
"""


def test_a_yaml_policy_is_graded_by_the_standalone_evaluator(tmp_path):
    # the evaluator has only the standard library: it reads the agent's YAML with the embedded reader
    name = "cis-k8s-5-2-2-privileged-kyverno"
    source = bundle(name)[1]["evaluator.py"].decode()
    assert "_YAML_SOURCE" in source
    (tmp_path / "evaluator.py").write_text(source)
    (tmp_path / "state.json").write_text(json.dumps({"resources": {"kind": "List", "items": []}}))

    def grade(policy_text):
        (tmp_path / "policy.yaml").write_text(policy_text)
        return subprocess.run([sys.executable, "-S", "evaluator.py", "--state", "state.json", "--artifact", "policy.yaml"],
                              check=False, capture_output=True, text=True, cwd=tmp_path)

    good = grade(NO_PRIVILEGED_YAML)
    assert good.returncode == 0, good.stderr
    assert json.loads(good.stdout)["passed"], good.stdout
    always_fail = grade("apiVersion: kyverno.io/v1\nkind: ClusterPolicy\nmetadata: {name: always-fail}\nspec:\n"
                        "  rules:\n  - name: all\n    match: {any: [{resources: {kinds: [Deployment]}}]}\n"
                        "    validate: {message: 'no', deny: {}}\n")
    assert always_fail.returncode == 0 and not json.loads(always_fail.stdout)["passed"], always_fail.stdout
    refused = grade("metadata: &m {name: x}\nother: *m\n")
    assert refused.returncode == 2
    assert "line 1, column 11" in refused.stderr and "anchors" in refused.stderr, refused.stderr


def test_alert_predicates_count_only_the_scenarios_namespaces():
    # otel-cart-deleted-service waits for `alert HighRequestErrorRate not firing`, expected on otel-demo
    name = "otel-cart-deleted-service"
    predicate = next(p for p in evaluator(name)["SPEC"]["mitigation"]["predicates"] if p["kind"] == "alert")
    assert predicate["namespaces"] == ["otel-demo"]

    def with_alert(labels):
        state = make_state(name, "solved")
        state["alerts"] = {"status": "success", "data": {"alerts": [
            {"labels": {"alertname": "HighRequestErrorRate", **labels}, "state": "firing"}]}}
        return run(name, None, state)

    assert with_alert({"namespace": "another-team"})["passed"]  # another tenant's alert does not block
    assert not with_alert({"namespace": "otel-demo"})["passed"]
    assert not with_alert({})["passed"]  # no namespace label: it may be ours, so it counts
