"""ITBench's workload and scheduling faults: init containers, command, resources, readiness probe,
architecture, node selector, anti-affinity and persistent volume claims.

For each fault, its library scenario compiles with no diagnostic at all; its ITBench arguments are
valid against the fault's `arguments.jsonSchema` (ITBench's library entry); the injection changes
exactly the fields the fault is about (and creates exactly the objects it says, labelled as ours);
the revert restores every changed object to its topology form and deletes what the fault created;
and every built-in object of inject/ and revert/ passes the `kubernetes-validate --strict` CLI.
Each precondition, broken, has its own error fixture (tests/cases/errors/, see test_error_fixtures.py):
this file checks that every fault has them.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from jsonschema import Draft202012Validator

HERE = Path(__file__).resolve().parents[1]
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

from backends.test_kubernetes_validate import _is_builtin, _schema_version, _validator_command  # noqa: E402

from support.compiling import compile_ok, yaml_documents
from itbench_dsl.compiler import compile_source  # noqa: E402
from itbench_dsl.diagnostics import Diagnostics, render_human  # noqa: E402
from itbench_dsl.faults import FAULTS, itbench_entry  # noqa: E402
from itbench_dsl.faults import scheduling, workload  # noqa: E402
from itbench_dsl.faults.scheduling import ABSENT_NODE, PVC_STORAGE_CLASS  # noqa: E402

REPO = HERE.parent
SCENARIOS = REPO / "scenarios" / "sre"
ERRORS = HERE / "cases" / "errors"

POD = r"spec\.template\.spec\."
CONTAINER = POD + r"containers\[\d+\]\."

# fault -> (its library scenario, the fields the injection may change, the objects it creates (kind, name))
CASES = {
    "crashing_init_container": ("otel-recommendation-crashing-init-container.itb",
                                [POD + r"initContainers(\[\d+\])?", POD + r"volumes(\[\d+\])?"],
                                {("ConfigMap", "recommendation-config")}),
    "hanging_init_container": ("otel-email-hanging-init-container.itb", [POD + r"initContainers(\[\d+\])?"], set()),
    "invalid_command": ("otel-product-catalog-invalid-command.itb", [CONTAINER + "command"], set()),
    "insufficient_resources": ("otel-postgresql-insufficient-resources.itb",
                               [CONTAINER + r"resources\.(limits|requests)(\.(cpu|memory))?"], set()),
    # with a memory stress experiment in the same group, as in ITBench's scenario 41
    "unassigned_limits": ("otel-cart-unassigned-limits.itb", [CONTAINER + r"resources(\.limits)?"],
                          {("Schedule", "postgresql-local")}),
    "misconfigured_readiness_probe": ("otel-frontend-misconfigured-readiness-probe.itb",
                                      [CONTAINER + r"readinessProbe(\..+)?"], set()),
    "unsupported_architecture_image": ("otel-checkout-unsupported-architecture-image.itb",
                                       [CONTAINER + "image", POD + r"nodeSelector(\.kubernetes\.io/arch)?"], set()),
    "nonexistent_node": ("otel-ad-cart-nonexistent-node.itb", [POD + r"nodeSelector(\.kubernetes\.io/hostname)?"],
                         set()),
    "unschedulable_anti_affinity": ("otel-payment-unschedulable-anti-affinity.itb", [POD + r"affinity(\..+)?"],
                                    {("DaemonSet", "application-operator")}),
    "nonexistent_pvc": ("bookinfo-reviews-nonexistent-pvc.itb",
                        [CONTAINER + r"volumeMounts(\[\d+\])?", POD + r"volumes(\[\d+\])?",
                         POD + r"securityContext(\.fsGroup)?"],
                        {("PersistentVolumeClaim", "reviews-v3")}),
    "failing_dns_policy": ("otel-frontend-failing-dns-policy.itb", [POD + "dnsPolicy"], set()),
    "priority_preemption": ("otel-ad-priority-preemption.itb",
                            [POD + r"nodeSelector(\.kubernetes\.io/hostname)?", POD + "priorityClassName"],
                            {("PriorityClass", "application-critical"), ("PriorityClass", "application-non-critical"),
                             ("Deployment", "critical-data-collector")}),
    "cordoned_node": ("otel-payment-cordoned-node.itb",
                      [r"spec\.replicas", POD + r"nodeSelector(\.kubernetes\.io/hostname)?"], set()),
}
# the family's kinds: its Python modules' and those the standard library declares in stdlib/faults/workload.itb
MINE = [k.name for k in workload.FAULTS + scheduling.FAULTS if k.name in CASES] + [
    k.name for k in FAULTS.values() if k.declared is not None and k.declared.path == "<stdlib>/faults/workload.itb"
    and k.name in CASES]


def _compile(path: Path):
    return compile_ok(path.read_bytes(), str(path.relative_to(REPO)), clean=True)


@pytest.fixture(scope="module")
def bundles() -> dict:
    return {name: _compile(SCENARIOS / path) for name, (path, _, _) in CASES.items()}


def _docs(files: dict, name: str) -> list[dict]:
    return yaml_documents(files, name)


def _key(obj: dict) -> tuple:
    return obj["kind"], obj["metadata"].get("namespace"), obj["metadata"]["name"]


def leaf_changes(old, new, path: str = "") -> list[str]:
    """The paths (`spec.template.spec.containers[0].image`) where two JSON-shaped values differ."""
    if isinstance(old, dict) and isinstance(new, dict):
        out = []
        for k in list(old) + [k for k in new if k not in old]:
            sub = f"{path}.{k}" if path else k
            out += leaf_changes(old.get(k), new.get(k), sub) if k in old and k in new else [sub]
        return out
    if isinstance(old, list) and isinstance(new, list) and len(old) == len(new):
        return [p for i, (a, b) in enumerate(zip(old, new)) for p in leaf_changes(a, b, f"{path}[{i}]")]
    return [] if old == new and type(old) is type(new) else [path]


def test_every_fault_of_the_family_has_a_case():
    assert sorted(MINE) == sorted(CASES)


@pytest.mark.parametrize("fault", sorted(CASES))
def test_documented(fault: str):
    kind = FAULTS[fault]
    assert kind.itbench_id and kind.preconditions and kind.domains and kind.summary
    assert all(p.endswith(".") for p in kind.preconditions)
    assert bool(kind.creates) == bool({k for k in CASES[fault][2] if k[0] != "Schedule"})
    # ITBench's library entry is vendored, with its alerts and solution templates
    assert itbench_entry("faults", kind.itbench_id)["id"] == kind.itbench_id


@pytest.mark.parametrize("fault", sorted(CASES))
def test_itbench_args_match_the_schema(bundles, fault: str):
    kind = FAULTS[fault]
    validator = Draft202012Validator(itbench_entry("faults", kind.itbench_id)["arguments"]["jsonSchema"])
    injections = [i for i in bundles[fault].scenario.injections() if i.fault == fault]
    assert injections
    for injection in injections:
        errors = list(validator.iter_errors(injection.itbench_args))
        assert not errors, [e.message for e in errors]
    scenario_yaml = _docs(bundles[fault].files, "itbench/scenario.yaml")[0]
    ids = [i["id"] for g in scenario_yaml["spec"]["faults"] for i in g["injections"]]
    assert kind.itbench_id in ids


@pytest.mark.parametrize("fault", sorted(CASES))
def test_inject_changes_exactly_the_fault_and_revert_restores(bundles, fault: str):
    _, allowed, created = CASES[fault]
    files = bundles[fault].files
    topology = {_key(o): o for o in _docs(files, "manifests/topology.yaml")}
    injected = {_key(o): o for o in _docs(files, "inject/apply.yaml")}
    reverted = {_key(o): o for o in _docs(files, "revert/apply.yaml")}
    targets = {(i.target.kind, i.target.namespace, i.target.name) for i in bundles[fault].scenario.injections()}
    patched = set(injected) & set(topology)
    assert patched == targets
    for key in patched:
        changes = leaf_changes(topology[key], injected[key])
        assert changes, f"the injection of {key} changes nothing"
        for path in changes:
            assert any(re.fullmatch(p, path) for p in allowed), f"the injection of {key} also changes {path}"
    new = set(injected) - set(topology)
    assert {(k[0], k[2]) for k in new} == created
    for key in new:
        assert "app.kubernetes.io/managed-by" not in injected[key]["metadata"].get("labels", {})
    # revert: the originals, exactly; and the created objects deleted
    assert set(reverted) == patched
    for key in reverted:
        assert reverted[key] == topology[key]
    deleted = {_key(o) for o in _docs(files, "revert/delete.yaml")}
    assert deleted == new
    assert "inject/delete.yaml" not in files


def test_init_container_faults_add_a_worker_that_never_completes(bundles):
    crashing = next(o for o in _docs(bundles["crashing_init_container"].files, "inject/apply.yaml")
                    if o["kind"] == "Deployment")
    worker = crashing["spec"]["template"]["spec"]["initContainers"][-1]
    assert worker["name"] == "worker" and worker["args"][-1].endswith("load_config.py")
    configmap = next(o for o in _docs(bundles["crashing_init_container"].files, "inject/apply.yaml")
                     if o["kind"] == "ConfigMap")
    assert set(configmap["data"]) == {"config", "script"}
    with pytest.raises(ValueError):  # the configuration the script loads is not JSON
        import json
        json.loads(configmap["data"]["config"])
    hanging = next(o for o in _docs(bundles["hanging_init_container"].files, "inject/apply.yaml"))
    assert hanging["spec"]["template"]["spec"]["initContainers"][-1]["args"] == ["-c", "sleep infinity"]


def test_resource_and_probe_values(bundles):
    postgresql = _docs(bundles["insufficient_resources"].files, "inject/apply.yaml")[0]
    resources = postgresql["spec"]["template"]["spec"]["containers"][0]["resources"]
    assert resources == {"limits": {"cpu": "5m", "memory": "5Mi"}, "requests": {"cpu": "5m", "memory": "5Mi"}}
    cart = _docs(bundles["unassigned_limits"].files, "inject/apply.yaml")[0]
    assert "limits" not in cart["spec"]["template"]["spec"]["containers"][0].get("resources", {})
    frontend = _docs(bundles["misconfigured_readiness_probe"].files, "inject/apply.yaml")[0]
    probe = frontend["spec"]["template"]["spec"]["containers"][0]["readinessProbe"]
    assert probe["httpGet"] == {"path": "/ready", "port": 40, "scheme": "HTTP"}
    checkout = _docs(bundles["unsupported_architecture_image"].files, "inject/apply.yaml")[0]
    assert checkout["spec"]["template"]["spec"]["nodeSelector"] == {"kubernetes.io/arch": "amd64"}
    assert "arm64" in checkout["spec"]["template"]["spec"]["containers"][0]["image"]


def test_scheduling_values(bundles):
    nodes = _docs(bundles["nonexistent_node"].files, "inject/apply.yaml")
    assert {o["metadata"]["name"] for o in nodes} == {"ad", "cart"}
    for deployment in nodes:
        assert deployment["spec"]["template"]["spec"]["nodeSelector"] == {"kubernetes.io/hostname": ABSENT_NODE}
    daemonset, payment = _docs(bundles["unschedulable_anti_affinity"].files, "inject/apply.yaml")
    term = payment["spec"]["template"]["spec"]["affinity"]["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][0]
    selector = term["labelSelector"]["matchExpressions"][0]
    assert all(daemonset["spec"]["template"]["metadata"]["labels"].get(selector["key"]) == v for v in selector["values"])
    assert daemonset["metadata"]["namespace"] == payment["metadata"]["namespace"]
    claim, reviews = _docs(bundles["nonexistent_pvc"].files, "inject/apply.yaml")
    assert claim["spec"]["storageClassName"] == PVC_STORAGE_CLASS
    volume = next(v for v in reviews["spec"]["template"]["spec"]["volumes"] if v["name"] == "database")
    assert volume["persistentVolumeClaim"]["claimName"] == claim["metadata"]["name"]


def test_kubernetes_validate_cli(bundles, tmp_path: Path):
    """Every built-in object of inject/ and revert/, one per file, through `kubernetes-validate --strict`."""
    files, seen = [], set()
    for fault, result in sorted(bundles.items()):
        for name in ("inject/apply.yaml", "revert/apply.yaml"):
            for index, doc in enumerate(_docs(result.files, name)):
                if not _is_builtin(doc["apiVersion"]):
                    continue
                text = yaml.safe_dump(doc, sort_keys=False)
                if text in seen:
                    continue
                seen.add(text)
                target = tmp_path / f"{len(files):03d}-{fault}-{name.replace('/', '-')}-{index}-{doc['kind']}.yaml"
                target.write_text(text, encoding="utf-8")
                files.append(target)
    kinds = {yaml.safe_load(p.read_text())["kind"] for p in files}
    assert {"Deployment", "ConfigMap", "DaemonSet", "PersistentVolumeClaim", "PriorityClass"} <= kinds
    version = _schema_version()
    run = subprocess.run([*_validator_command(), "--strict", "--kubernetes-version", version, *map(str, files)],
                         capture_output=True, text=True, timeout=120, env={**os.environ, "NO_COLOR": "1"})
    output = run.stdout + run.stderr
    problems = [line for line in output.splitlines() if line.startswith(("ERROR", "WARN"))]
    assert run.returncode == 0 and not problems, "\n".join(problems or [output])
    passed = [line for line in output.splitlines() if line.startswith("INFO") and " passed " in line]
    assert len(passed) == len(files), output


# every precondition of every fault, broken, has its fixture: (fault, code, fixture folder)
PRECONDITION_FIXTURES = [
    ("crashing_init_container", "E2011", "E2011-crashing-init-container-worker-exists"),
    ("crashing_init_container", "E2011", "E2011-crashing-init-container-volume-exists"),
    ("crashing_init_container", "E2011", "E2011-crashing-init-container-configmap-exists"),
    ("hanging_init_container", "E2011", "E2011-hanging-init-container-worker-exists"),
    ("invalid_command", "E2020", "E2020-invalid-command-no-such-container"),
    ("invalid_command", "E2010", "E2010-invalid-command-empty"),
    ("invalid_command", "E2027", "E2027-invalid-command-same-command"),
    ("insufficient_resources", "E2020", "E2020-insufficient-resources-no-such-container"),
    ("insufficient_resources", "E2009", "E2009-insufficient-resources-cpu-in-mebibytes"),
    ("insufficient_resources", "E2009", "E2009-insufficient-resources-memory-in-millicores"),
    ("insufficient_resources", "E2011", "E2011-insufficient-resources-not-below"),
    ("insufficient_resources", "E2027", "E2027-insufficient-resources-same-values"),
    ("unassigned_limits", "E2020", "E2020-unassigned-limits-no-such-container"),
    ("unassigned_limits", "E2027", "E2027-unassigned-limits-no-limits"),
    ("misconfigured_readiness_probe", "E2020", "E2020-readiness-probe-no-such-container"),
    ("misconfigured_readiness_probe", "E2010", "E2010-readiness-probe-relative-path"),
    ("misconfigured_readiness_probe", "E2011", "E2011-readiness-probe-port-served"),
    ("misconfigured_readiness_probe", "E2027", "E2027-readiness-probe-same-probe"),
    ("unsupported_architecture_image", "E2020", "E2020-unsupported-architecture-no-such-container"),
    ("unsupported_architecture_image", "E2010", "E2010-unsupported-architecture-unknown"),
    ("unsupported_architecture_image", "E2011", "E2011-unsupported-architecture-pinned-elsewhere"),
    ("unsupported_architecture_image", "E2027", "E2027-unsupported-architecture-same-image"),
    ("nonexistent_node", "E2010", "E2010-nonexistent-node-invalid-name"),
    ("nonexistent_node", "E2027", "E2027-nonexistent-node-same-node"),
    ("nonexistent_node", "E2010", "E2010-nonexistent-node-both-forms"),
    ("unschedulable_anti_affinity", "E2011", "E2011-anti-affinity-operator-label"),
    ("unschedulable_anti_affinity", "E2027", "E2027-anti-affinity-same-rule"),
    ("nonexistent_pvc", "E2020", "E2020-nonexistent-pvc-no-such-container"),
    ("nonexistent_pvc", "E2011", "E2011-nonexistent-pvc-volume-exists"),
    ("nonexistent_pvc", "E2011", "E2011-nonexistent-pvc-mount-path-taken"),
    ("nonexistent_pvc", "E2014", "E2014-nonexistent-pvc-invalid-claim-name"),
    ("nonexistent_pvc", "E2011", "E2011-nonexistent-pvc-class-exists"),
    ("nonexistent_pvc", "E2011", "E2011-nonexistent-pvc-claim-exists"),
    ("failing_dns_policy", "E2027", "E2027-failing-dns-policy-already-default"),
    ("failing_dns_policy", "E2011", "E2011-failing-dns-policy-calls-nothing"),
    ("priority_preemption", "E2010", "E2010-priority-preemption-invalid-node"),
    ("priority_preemption", "E2010", "E2010-priority-preemption-one-core"),
    ("priority_preemption", "E2011", "E2011-priority-preemption-collector-exists"),
    ("priority_preemption", "E2011", "E2011-priority-preemption-pinned-elsewhere"),
    ("cordoned_node", "E2010", "E2010-cordoned-node-invalid-name"),
    ("cordoned_node", "E2011", "E2011-cordoned-node-pinned-elsewhere"),
]


def test_every_precondition_has_a_fixture():
    for fault in CASES:
        fixtures = [f for f in PRECONDITION_FIXTURES if f[0] == fault]
        assert len(fixtures) >= len(FAULTS[fault].preconditions) - (1 if fault == "insufficient_resources" else 0), fault


@pytest.mark.parametrize("fault,code,folder", PRECONDITION_FIXTURES, ids=[f[2] for f in PRECONDITION_FIXTURES])
def test_precondition_fixture(fault: str, code: str, folder: str):
    source = (ERRORS / folder / "input.itb").read_bytes()
    assert f"fault {fault} on".encode() in source
    diags = Diagnostics()
    compile_source(source, "input.itb", diags)
    errors = diags.errors()
    assert [d.code for d in errors] == [code], render_human(diags, color=False)
    error = errors[0]
    assert error.span.line > 1 and error.label


def test_dns_priority_and_cordon_values(bundles):
    frontend = _docs(bundles["failing_dns_policy"].files, "inject/apply.yaml")[0]
    assert frontend["spec"]["template"]["spec"]["dnsPolicy"] == "Default"
    injected = {o["metadata"]["name"]: o for o in _docs(bundles["priority_preemption"].files, "inject/apply.yaml")}
    assert [o["kind"] for o in injected.values()] == ["PriorityClass", "PriorityClass", "Deployment", "Deployment"]
    low, high = injected["application-non-critical"], injected["application-critical"]
    assert high["value"] > low["value"]
    ad, collector = injected["ad"]["spec"], injected["critical-data-collector"]["spec"]
    assert ad["template"]["spec"]["priorityClassName"] == low["metadata"]["name"]
    assert collector["template"]["spec"]["priorityClassName"] == high["metadata"]["name"]
    assert ad["template"]["spec"]["nodeSelector"] == collector["template"]["spec"]["nodeSelector"] == {
        "kubernetes.io/hostname": "kind-worker"}
    # 21 pods of (4 - 1) / 20 cores each ask for more than the node has left: ad's pods are preempted
    cpu = collector["template"]["spec"]["containers"][0]["resources"]["requests"]["cpu"]
    assert collector["replicas"] == 21 and cpu == "150m"
    payment = _docs(bundles["cordoned_node"].files, "inject/apply.yaml")[0]
    assert payment["spec"]["replicas"] == 2
    assert payment["spec"]["template"]["spec"]["nodeSelector"] == {"kubernetes.io/hostname": "kind-worker"}
    # the cordon itself is not a manifest: the fault says how to do it
    assert "kubectl cordon NODE" in FAULTS["cordoned_node"].summary


def test_dns_policy_reaches_the_ir_json_and_validates():
    import json

    from itbench_dsl import ir

    result = _compile(SCENARIOS / "otel-email-hanging-init-container.itb")
    workloads = json.loads(result.files["scenario.json"])["topology"]["workloads"]
    assert workloads and all(w["dns_policy"] is None and w["priority_class_name"] is None for w in workloads)
    data = json.loads(_compile(SCENARIOS / "otel-frontend-failing-dns-policy.itb").files["scenario.json"])
    assert Draft202012Validator(ir.json_schema()).is_valid(data)
