"""Bare pods as topology objects: their manifest, the faults a running pod takes, references to them, and the
grading of a fix that replaces the pod (a bare pod is recreated, never rolled out)."""

from __future__ import annotations

import copy

import yaml
from support.compiling import yaml_documents

from itbench_dsl.analysis import states
from itbench_dsl.checking import check_source
from itbench_dsl.compiler import compile_source
from itbench_dsl.diagnostics import Diagnostics

SOURCE = '''scenario "lone-pod" {
  domain sre
  complexity low
  description "A pod of its own runs an image that does not exist."
  tasks mitigate
  topology {
    namespace "shop"
    pod "web" {
      labels { app = "web" }
      restart_policy = "Always"
      container "web" {
        image = "nginx:1.27"
        port "http" = 80
      }
      volume "data" { claim = "web-data" }
    }
    persistentvolumeclaim "web-data" {
      storage = 1Gi
    }
    service "web" {
      selector { app = "web" }
      port "http" = 80
    }
  }
  fault nonexistent_image on pod "web"
  expect {
    root_cause ROOT
    mitigated when {
      PREDICATES
    }
  }
}
'''
PREDICATES = 'pod "web" ready\n      pod "web" spec.containers[name="web"].image == "nginx:1.27"'


def _compile(root: str = 'pod "web"', predicates: str = PREDICATES):
    diags = Diagnostics()
    result = compile_source(SOURCE.replace("ROOT", root).replace("PREDICATES", predicates).encode(), "pod.itb", diags)
    return result, diags


def _documents(result, name: str) -> list[dict]:
    return [d for d in yaml.safe_load_all(result.files[name].decode()) if d]


def test_a_pod_is_rendered_as_a_pod_of_its_own():
    result, diags = _compile()
    assert not diags.errors(), [d.message for d in diags.errors()]
    [pod] = [d for d in _documents(result, "manifests/topology.yaml") if d["kind"] == "Pod"]
    assert pod["apiVersion"] == "v1"
    assert pod["metadata"] == {"name": "web", "namespace": "shop", "labels": {"app": "web"}}
    assert pod["spec"]["restartPolicy"] == "Always"
    assert "nodeName" not in pod["spec"]  # not a static pod's mirror pod
    assert pod["spec"]["containers"][0]["image"] == "nginx:1.27"


def test_a_pod_template_fault_patches_the_pods_own_spec():
    result, diags = _compile()
    assert not diags.errors(), [d.message for d in diags.errors()]
    [injected] = yaml_documents(result.files, "inject/apply.yaml")  # the fault's, less the cover writes
    assert injected["kind"] == "Pod" and injected["spec"]["containers"][0]["image"] == "nginx:7f3a9c1e"
    assert "template" not in injected["spec"]
    [restored] = _documents(result, "revert/apply.yaml")
    assert restored["spec"]["containers"][0]["image"] == "nginx:1.27"


def test_a_reference_to_an_undeclared_pod_is_located():
    _, diags = _compile(root='pod "webb"')
    [error] = diags.errors()
    assert error.code == "E2003" and "webb" in error.message


def _graded():
    result, diags = _compile()
    assert not diags.errors(), [d.message for d in diags.errors()]
    namespace: dict = {"__name__": "bundle_evaluator"}
    exec(compile(result.files["evaluator.py"], "evaluator.py", "exec"), namespace)  # noqa: S102
    derived = states.derive(result.scenario)

    def passed(state) -> bool:
        return namespace["evaluate"](namespace["SPEC"], None, copy.deepcopy(state), task="mitigate")["passed"]
    return derived, passed


def _pod(state: dict) -> dict:
    return next(o for o in state["resources"]["items"] if o["kind"] == "Pod" and o["metadata"]["name"] == "web")


def test_the_derived_states_run_the_pod_and_bind_its_claim():
    derived, passed = _graded()
    assert _pod(derived["healthy"])["status"]["phase"] == "Running"
    assert _pod(derived["faulty"])["status"]["containerStatuses"][0]["state"]["waiting"]["reason"] == "ImagePullBackOff"
    claim = next(o for o in derived["healthy"]["resources"]["items"] if o["kind"] == "PersistentVolumeClaim")
    assert claim["status"]["phase"] == "Bound"  # the pod mounts it
    assert passed(derived["healthy"]) and passed(derived["solved"]) and not passed(derived["faulty"])


def test_a_pod_recreated_healthy_under_its_name_is_a_fix():
    derived, passed = _graded()
    state = copy.deepcopy(derived["solved"])
    pod = _pod(state)
    pod["metadata"].update(uid="0d5c2a8e-recreated", creationTimestamp="2026-01-01T01:00:00Z", resourceVersion="999")
    assert passed(state)
    # the same pod recreated with the fault's image, without its labels, or not at all, is no fix
    broken = copy.deepcopy(state)
    _pod(broken)["spec"]["containers"][0]["image"] = "nginx:7f3a9c1e"
    assert not passed(broken)
    relabelled = copy.deepcopy(state)
    _pod(relabelled)["metadata"]["labels"] = {"app": "other"}
    assert not passed(relabelled)
    gone = copy.deepcopy(state)
    gone["resources"]["items"].remove(_pod(gone))
    assert not passed(gone)


def test_an_in_place_patch_of_a_field_a_pod_fixes_at_creation_is_located():
    source = '''fault_kind "quiet_mode" {
  mechanism = "workload.container.env:quiet"
  targets = [deployment, pod]
  summary = "Sets a container's MODE variable to quiet."
  arg "container" { type = "container" }
  patch spec.template.spec.containers[name=arg(container)].env[name="MODE"].value = "quiet"
}
'''
    [error] = [d for d in check_source(source.encode(), "faults.itb").diagnostics if d.severity == "error"]
    assert error.code == "E2056" and error.span.line == 6 and "leave `pod` out" in error.help
    # an image is what a running pod changes in place
    fixed = source.replace('env[name="MODE"].value = "quiet"', 'image = "nginx:quiet"')
    assert not [d for d in check_source(fixed.encode(), "faults.itb").diagnostics if d.severity == "error"]


def test_a_workload_fault_on_a_pod_says_a_pod_is_replaced():
    diags = Diagnostics()
    compile_source(SOURCE.replace("nonexistent_image", "invalid_command").replace("ROOT", 'pod "web"')
                   .replace("PREDICATES", 'pod "web" ready').encode(), "pod.itb", diags)
    [error] = diags.errors()
    assert error.code == "E2004" and "E2056" in error.help


def test_a_change_to_a_pod_is_judged_field_by_field():
    from itbench_dsl.faults.declared import _immutable_pod_change

    pod = {"kind": "Pod", "spec": {"containers": [{"name": "web", "image": "a", "env": [{"name": "X", "value": "1"}]}],
                                   "terminationGracePeriodSeconds": 30}}
    changed = copy.deepcopy(pod)
    changed["spec"]["containers"][0]["image"] = "b"
    changed["spec"]["terminationGracePeriodSeconds"] = 5
    changed["spec"]["tolerations"] = [{"key": "k", "operator": "Exists"}]
    assert _immutable_pod_change(pod, changed) is None
    changed["spec"]["containers"][0]["env"][0]["value"] = "2"
    assert _immutable_pod_change(pod, changed) == "spec.containers[name=web].env"
    changed = copy.deepcopy(pod)
    changed["spec"]["nodeSelector"] = {"disk": "ssd"}
    assert _immutable_pod_change(pod, changed) == "spec.nodeSelector"
    assert _immutable_pod_change({**pod, "kind": "Deployment"}, changed) is None
