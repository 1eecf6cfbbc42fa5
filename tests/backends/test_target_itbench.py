"""`--target itbench` says what ITBench's layout cannot carry."""

from __future__ import annotations

import pytest
from support.compiling import SCENARIOS
from test_cli import invoke


def test_a_fault_on_an_inline_topology_is_refused(tmp_path):
    """ITBench deploys none of an inline topology's objects: W3001 at the topology, E3005 at the fault, exit 1,
    nothing written (the ground truth would grade an injection that meets nothing)."""
    inline = SCENARIOS / "sre" / "shop-cart-modified-env.itb"
    result = invoke("compile", str(inline), "--target", "itbench", "-o", str(tmp_path))
    assert result.exit_code == 1
    assert "warning[W3001]" in result.stderr and f"{inline}:7:3" in result.stderr
    assert "error[E3005]" in result.stderr
    assert not (tmp_path / "shop-cart-modified-env").exists()


def test_a_fault_on_an_application_itbench_does_not_install_is_refused(tmp_path):
    source = SCENARIOS / "sre" / "sregym-wrong-service-selector-hotel-reservation.itb"
    result = invoke("compile", str(source), "--target", "itbench", "-o", str(tmp_path))
    assert result.exit_code == 1
    assert "error[E3005]" in result.stderr and "invalid_service_selector" in result.stderr
    assert not any(tmp_path.iterdir())


def test_a_standard_application_moved_to_another_namespace_is_refused(tmp_path):
    """ITBench installs a standard application in its own namespace: moved (`use app "X" { namespace = "shop" }`),
    the export would install it there while the fault and ground truth name `shop`, so E3005, nothing written."""
    source = SCENARIOS / "sre" / "otel-cart-service-target-port.itb"
    text = source.read_text()
    assert 'use app "opentelemetry-demo"\n' in text
    moved = tmp_path / "moved.itb"
    moved.write_text(text.replace('use app "opentelemetry-demo"\n',
                                  'use app "opentelemetry-demo" { namespace = "shop" }\n').replace("-n otel-demo", "-n shop"))
    result = invoke("compile", str(moved), "--target", "itbench", "-o", str(tmp_path / "out"))
    assert result.exit_code == 1
    assert "error[E3005]" in result.stderr and "moved out of the namespace ITBench installs it in" in result.stderr
    assert "keep `opentelemetry-demo` in its own namespace" in result.stderr
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


def test_a_standard_application_is_not_reported(tmp_path):
    result = invoke("compile", str(SCENARIOS / "sre" / "otel-checkout-nonexistent-image.itb"), "--target", "itbench",
                    "-o", str(tmp_path))
    assert result.exit_code == 0 and "W3001" not in result.stderr


def test_the_full_bundle_is_not_reported(tmp_path):
    result = invoke("compile", str(SCENARIOS / "sre" / "shop-cart-modified-env.itb"), "-o", str(tmp_path))
    assert result.exit_code == 0 and "W3001" not in result.stderr


CASES = SCENARIOS.parent / "tests" / "cases" / "itbench-export"


def test_a_fault_itbench_lacks_is_refused_when_nothing_is_left(tmp_path):
    """ITBench would inject nothing (`faults: []`): E3004 at the fault, exit 1, no folder written."""
    source = SCENARIOS / "finops" / "otel-cart-overprovisioned-requests.itb"
    result = invoke("compile", str(source), "--target", "itbench", "-o", str(tmp_path / "out"))
    assert result.exit_code == 1
    assert "error[E3004]" in result.stderr and "overprovisioned_requests" in result.stderr
    assert f"{source}:10:3" in result.stderr
    assert not (tmp_path / "out" / "otel-cart-overprovisioned-requests").exists()
    full = invoke("compile", str(source), "-o", str(tmp_path / "bundle"))  # the full bundle runs it
    assert full.exit_code == 0 and "E3004" not in full.stderr


def test_a_fault_itbench_lacks_beside_one_it_has_is_refused(tmp_path):
    """ITBench would inject the other fault only while the ground truth grades both: E3004, nothing written."""
    source = CASES / "partly-itbench-faults.itb"
    result = invoke("compile", str(source), "--target", "itbench", "-o", str(tmp_path))
    assert result.exit_code == 1
    assert "error[E3004]" in result.stderr and f"{source}:10:3" in result.stderr
    assert "other fault only" in result.stderr
    assert not (tmp_path / "two-faults").exists()


def _injection_task_name(reference, task: str, **values) -> str:
    """The `metadata.name` ITBench's injection task gives the object it creates, its Jinja variables filled in."""
    import re

    text = (reference / "itbench" / "roles" / "faults" / "tasks" / task).read_text(encoding="utf-8")
    name = re.search(r"metadata:\n\s+name: \"?([^\"\n]+)\"?", text).group(1)
    return re.sub(r"\{\{\s*faults_kubernetes_object\.metadata\.name\s*\}\}", values.get("target", ""), name)


@pytest.mark.parametrize("scenario, kind, task", [
    ("bookinfo-gateway-denies-get", "AuthorizationPolicy", "inject_traffic_denying_istio_gateway_authorization_policy.yaml"),
    ("bookinfo-productpage-strict-mtls", "PeerAuthentication", "inject_strict_mutual_tls_istio_service_mesh_enforcement.yaml"),
])
def test_itbench_files_name_what_itbench_injection_creates(reference, scenario, kind, task):
    """Where ITBench's injection task fixes the created object's name, ITBench's files name it so (an ITBench run
    creates that object), while the bundle's own manifests and evaluator keep the compiler's neutral name."""
    import yaml

    from itbench_dsl.checking import check_source
    from support.compiling import compile_text

    path = SCENARIOS / "sre" / f"{scenario}.itb"
    (injection,) = check_source(path.read_bytes(), str(path)).result.scenario.injections()
    (created,) = [ref for ref in injection.created if ref.kind == kind]
    expected = _injection_task_name(reference, task, target=injection.target.name)
    assert created.name != expected  # the compiler's name says nothing of the fault
    result, _ = compile_text(path.read_bytes(), path.name, validate=False)
    truth = yaml.safe_load(result.files["itbench/groundtruth.yaml"])
    assert {"kind": kind, "name": expected} in [{"kind": e["kind"], "name": e["metadata"]["name"]}
                                                for e in truth["spec"]["entities"]]
    assert created.name.encode() not in b"".join(result.files[f"itbench/{n}"] for n in
                                                 ("scenario.yaml", "groundtruth.yaml", "groundtruth_v1.yaml"))
    assert created.name.encode() in result.files["inject/apply.yaml"]


def test_an_argument_itbench_injects_its_own_value_for_is_warned(tmp_path, reference):
    """insufficient_resources at 50m / 48Mi: ITBench's scenario.yaml has no field for cpu or memory, and its injection
    task writes 5m / 5Mi: W3002 at the fault, naming ITBench's value (read from its task), one per argument;
    at ITBench's own values, nothing."""
    import re

    task = (reference / "itbench" / "roles" / "faults" / "tasks" /
            "inject_insufficient_kubernetes_workload_container_resources.yaml").read_text(encoding="utf-8")
    cpu, memory = re.search(r"limits:\s+cpu: (\S+)\s+memory: (\S+)", task).groups()
    source = (SCENARIOS / "sre" / "otel-postgresql-insufficient-resources.itb").read_text(encoding="utf-8")
    assert "cpu = 5m" in source and "memory = 5Mi" in source
    changed = source.replace("cpu = 5m", "cpu = 50m").replace("memory = 5Mi", "memory = 48Mi")
    path = tmp_path / "changed.itb"
    path.write_text(changed, encoding="utf-8")
    result = invoke("compile", str(path), "--target", "itbench", "-o", str(tmp_path / "out"))
    assert result.exit_code == 0, result.stderr
    assert result.stderr.count("warning[W3002]") == 2 and f"applies `{cpu}`" in result.stderr \
        and f"applies `{memory}`" in result.stderr and f"{path}:" in result.stderr
    same = invoke("compile", str(SCENARIOS / "sre" / "otel-postgresql-insufficient-resources.itb"), "--target",
                  "itbench", "-o", str(tmp_path / "same"))
    assert same.exit_code == 0 and "W3002" not in same.stderr


def test_a_ciso_export_itbench_cannot_read_its_graded_object_from_is_refused(tmp_path, reference):
    """Gen-CIS-b-K8s-Kyverno: ITBench's evaluate.yml reads application.yaml with `from_yaml` (one document). A gap
    with its ServiceAccount beside its binding is refused (E3006), nothing written; a one-object gap is exported
    with an application.yaml a single-document load reads."""
    import yaml

    harness = (reference / "itbench" / "ciso" / "1.gen-cis-b-k8s-kyverno" / "playbooks" / "evaluate.yml").read_text()
    assert "manifests/application.yaml" in harness and "from_yaml" in harness
    source = SCENARIOS / "ciso" / "cis-k8s-5-1-1-cluster-admin-kyverno.itb"
    result = invoke("compile", str(source), "--target", "itbench", "-o", str(tmp_path))
    assert result.exit_code == 1 and "error[E3006]" in result.stderr and f"{source}:" in result.stderr
    assert not (tmp_path / "cis-k8s-5-1-1-cluster-admin-kyverno").exists()
    one = invoke("compile", str(SCENARIOS / "ciso" / "cis-k8s-5-2-2-privileged-kyverno.itb"), "--target", "itbench",
                 "-o", str(tmp_path))
    assert one.exit_code == 0 and "E3006" not in one.stderr
    assert yaml.safe_load((tmp_path / "cis-k8s-5-2-2-privileged-kyverno" / "manifests" / "application.yaml").read_text())


def test_a_quota_is_exported_as_itbench_creates_it(tmp_path):
    """ITBench's insufficient-kubernetes-resource-quota task creates ResourceQuota `memory` (hard memory 1Gi)
    whatever the scenario says: the export's ground truth and solutions name that quota, and W3002 at the fault
    says the pod cap the scenario describes is not what ITBench injects."""
    reference = SCENARIOS.parent.parent / "shared" / "reference" / "itbench" / "roles" / "faults" / "tasks"
    task = reference / "inject_insufficient_kubernetes_resource_quota.yaml"
    if task.exists():  # the name the export uses is the one ITBench's task creates
        import yaml
        steps = yaml.safe_load(task.read_text())
        created = [s["kubernetes.core.k8s"]["resource_definition"] for s in steps if "kubernetes.core.k8s" in s]
        assert [o["metadata"]["name"] for o in created if o.get("kind") == "ResourceQuota"] == ["memory"]
    source = SCENARIOS / "sre" / "otel-checkout-insufficient-quota.itb"
    result = invoke("compile", str(source), "--target", "itbench", "-o", str(tmp_path))
    assert result.exit_code == 0, result.stderr
    assert "warning[W3002]" in result.stderr and "`pods`" in result.stderr
    line = next(n for n, text in enumerate(source.read_text().splitlines(), 1)
                if "fault insufficient_resource_quota" in text)
    assert f"{source}:{line}:" in result.stderr  # located at the fault, inside its group
    truth = (tmp_path / "otel-checkout-insufficient-quota" / "groundtruth.yaml").read_text()
    assert "name: memory" in truth and "delete resourcequota memory" in truth


def test_modified_env_on_a_variable_set_by_value_from_is_refused(tmp_path):
    """ITBench's task merges `{name, value}` into the container's entry (a strategic merge): an entry set by
    `valueFrom` keeps it beside the value, which the API server refuses, so E3007, nothing written."""
    probe = tmp_path / "probe.itb"
    probe.write_text('''scenario "probe-env-otel" {
  domain sre
  complexity low
  description "cart's service name is changed."
  use app "opentelemetry-demo"
  fault modified_env on deployment "cart" { name = "OTEL_SERVICE_NAME"  value = "nothing" }
  expect {
    root_cause deployment "cart"
  }
}
''')
    result = invoke("compile", str(probe), "--target", "itbench", "-o", str(tmp_path / "out"))
    assert result.exit_code == 1
    assert "error[E3007]" in result.stderr and "valueFrom" in result.stderr
    assert not (tmp_path / "out" / "probe-env-otel").exists()
