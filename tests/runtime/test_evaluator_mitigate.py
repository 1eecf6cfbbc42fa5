"""The mitigation evaluator judged by what a fix means and by how it holds, tried by hand (docs/evaluator.md):
a fix that crash-loops between its ready seconds, a StatefulSet rollout staged so that every pod still runs
the faulty spec, a program swapped for a command, fail; a probe fixed rather than removed, an image spelled
another way, a Service recreated with `kubectl expose`, a rule appended after another one, an evicted pod left
behind, pass; inputs that are no regular files are refused at once. The states are the compiler's derived ones,
edited as an agent or a cluster would; they do not come from the adversarial corpus (tests/analysis/test_corpus.py).
"""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parents[1]
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

from test_evaluator import bundle, derived, failed, mitigate, obj, refused  # noqa: E402

from itbench_dsl.compiler import compile_source  # noqa: E402
from itbench_dsl.diagnostics import Diagnostics  # noqa: E402
from itbench_dsl.runtime import evaluator as rt  # noqa: E402
from itbench_dsl.runtime import state as model  # noqa: E402

IMAGE = "otel-checkout-nonexistent-image"  # checkout: a Deployment the mitigation reads as ready
FIXED_AT = "2026-01-01T00:10:00Z"


def pods_of(state: dict, workload: str) -> list[dict]:
    return [o for o in state["resources"]["items"] if o["kind"] == "Pod"
            and o["metadata"]["name"].startswith(workload + "-")]


def restarted(pod: dict, finished: str, reason="OOMKilled", code=137) -> None:
    for c in pod["status"]["containerStatuses"]:
        c["restartCount"] = 4
        c["lastState"] = {"terminated": {"reason": reason, "exitCode": code, "finishedAt": finished}}


# ---- 1. stable since the fix -----------------------------------------------------------------------------


@pytest.mark.parametrize("finished, fixed_at, reason, passes", [
    ("2026-01-01T00:12:00Z", FIXED_AT, "OOMKilled", False),  # restarted after the agent stopped: ready by chance
    ("2026-01-01T00:10:00Z", "2026-01-01T00:10:00.400Z", "OOMKilled", False),  # the same second: not dated before
    ("2026-01-01T00:05:00Z", FIXED_AT, "OOMKilled", True),  # the fault's restarts, before the fix
    ("2026-01-01T00:12:00Z", None, "OOMKilled", False),  # no fixed_at: a failed restart cannot be dated
    ("2026-01-01T00:12:00Z", None, "Completed", False),  # no fixed_at: a clean exit restarts the server too
])
def test_a_fix_must_hold_since_it_was_made(finished, fixed_at, reason, passes):
    state = derived(IMAGE, "solved")
    restarted(pods_of(state, "checkout")[0], finished, reason, 0 if reason == "Completed" else 137)
    if fixed_at:
        state["fixed_at"] = fixed_at
    verdict = mitigate(IMAGE, state)
    assert verdict["passed"] is passes, verdict["checks"]
    if not passes:
        assert "health.ready.otel-demo/Deployment/checkout" in failed(verdict)


def test_a_crash_looping_pod_fails_an_all_pods_scope():
    name = "k8sbench-fix-crashloop"
    state = derived(name, "solved")
    pod = next(p for p in state["resources"]["items"] if p["kind"] == "Pod" and p["metadata"]["namespace"] == "crashloop-test")
    restarted(pod, "2026-01-01T00:12:00Z")
    state["fixed_at"] = FIXED_AT
    verdict = mitigate(name, state)
    assert not verdict["passed"] and any(c.startswith("mitigation.predicate.") for c in failed(verdict))


def _observed(state: dict, at: str, ready: bool) -> dict:
    items = copy.deepcopy([o for o in state["resources"]["items"] if o["kind"] in ("Deployment", "Pod")])
    if not ready:
        workload = next(o for o in items if o["kind"] == "Deployment" and o["metadata"]["name"] == "checkout")
        workload["status"]["readyReplicas"] = 0
    return {"at": at, "resources": {"kind": "List", "items": items}}


@pytest.mark.parametrize("sequence, passes", [
    ((True, True, True), True),
    ((False, True, True), True),  # still rolling out at the first capture: no lapse
    ((True, False, True), False),  # ready, then not: the fix did not hold, whatever the last capture says
])
def test_readiness_must_hold_at_every_capture_since_it_was_reached(sequence, passes):
    state = derived(IMAGE, "solved")
    state["fixed_at"] = FIXED_AT
    # given out of order: the evaluator reads them by their time
    state["observations"] = [_observed(state, f"2026-01-01T00:1{i}:30Z", ready) for i, ready in enumerate(sequence)][::-1]
    verdict = mitigate(IMAGE, state)
    assert verdict["passed"] is passes, failed(verdict)
    if not passes:
        check = next(c for c in verdict["checks"] if c["id"] == "health.ready.otel-demo/Deployment/checkout")
        assert "ready at 2026-01-01T00:10:30Z, not at 2026-01-01T00:11:30Z" in check["detail"]


@pytest.mark.parametrize("observations", [{"at": FIXED_AT}, [{"resources": {"items": []}}],
                                          [{"at": "soon", "resources": {"items": []}}], [{"at": FIXED_AT}]])
def test_observations_of_another_shape_are_refused(observations):
    state = derived(IMAGE, "solved")
    state["observations"] = observations
    refused(IMAGE, None, state, task="mitigate")


def test_a_fixed_at_that_is_no_time_is_refused():
    state = derived(IMAGE, "solved")
    state["fixed_at"] = "after lunch"
    assert "fixed_at" in refused(IMAGE, None, state, task="mitigate")


# ---- 2. StatefulSet rollouts -----------------------------------------------------------------------------


def sts(strategy: dict, current="web-old", update="web-new", updated=None, replicas=3) -> dict:
    status = {"observedGeneration": 2, "replicas": replicas, "readyReplicas": replicas, "availableReplicas": replicas,
              "currentReplicas": replicas, "currentRevision": current, "updateRevision": update}
    if updated:
        status["updatedReplicas"] = updated
    return {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "web", "namespace": "ns", "generation": 2},
            "spec": {"replicas": replicas, "updateStrategy": strategy}, "status": status}


def sts_pod(index: int, revision: str) -> dict:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {
        "name": f"web-{index}", "namespace": "ns", "labels": {"controller-revision-hash": revision},
        "ownerReferences": [{"kind": "StatefulSet", "name": "web", "controller": True}]},
        "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}}


@pytest.mark.parametrize("workload, pods, settled", [
    # the fix staged by a partition at the replica count: no pod updated, every one at the faulty revision
    (sts({"type": "RollingUpdate", "rollingUpdate": {"partition": 3}}), "web-old", False),
    (sts({"type": "OnDelete"}), "web-old", False),  # left to OnDelete: nothing deleted, nothing updated
    # OnDelete, every pod deleted and recreated: the controller never moves currentRevision under OnDelete
    (sts({"type": "OnDelete"}, updated=3), "web-new", True),
    (sts({"type": "RollingUpdate"}, current="web-new", updated=3), "web-new", True),
    # counts that say done, pods that say otherwise
    (sts({"type": "OnDelete"}, updated=3), "web-old", False),
])
def test_a_statefulset_is_ready_when_its_pods_run_the_update_revision(workload, pods, settled):
    state = rt.State({"resources": {"items": [workload] + [sts_pod(i, pods) for i in range(3)]}})
    ok = rt.workload_ready(workload) and not rt.settled_problem(workload, state)
    assert ok is settled


# ---- 3. the program ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("field, value", [("command", ["sleep", "infinity"]), ("args", ["--version"])])
def test_a_command_added_where_the_image_ran_its_own_is_another_program(field, value):
    state = derived(IMAGE, "solved")
    checkout = obj(state, "Deployment", "checkout")
    checkout["spec"]["template"]["spec"]["containers"][0][field] = value
    verdict = mitigate(IMAGE, state)
    assert "health.program.otel-demo/Deployment/checkout" in failed(verdict)
    checkout["spec"]["template"]["spec"]["containers"][0][field] = []  # an empty list is none
    assert mitigate(IMAGE, state)["passed"]


# ---- 13. the API server's defaults ---------------------------------------------------------------------------

PROBE = "otel-frontend-misconfigured-readiness-probe"


def _probe(state: dict) -> dict:
    return obj(state, "Deployment", "frontend")["spec"]["template"]["spec"]["containers"][0]


def test_a_probe_fixed_in_place_passes_though_its_defaults_equal_the_faults():
    faulty = copy.deepcopy(_probe(derived(PROBE, "faulty"))["readinessProbe"])
    state = derived(PROBE, "solved")
    container = _probe(state)
    port = container["ports"][0]["containerPort"]
    action = "httpGet" if "httpGet" in faulty else "tcpSocket"
    # the port corrected, the fault's timings kept, and what the API server fills in spelled out
    container["readinessProbe"] = {**faulty, action: {**faulty[action], "port": port}, "timeoutSeconds": 1,
                                   "periodSeconds": faulty.get("periodSeconds", 10), "successThreshold": 1,
                                   "failureThreshold": faulty.get("failureThreshold", 3)}
    assert mitigate(PROBE, state)["passed"], failed(mitigate(PROBE, state))
    container["readinessProbe"] = {"timeoutSeconds": 1, "periodSeconds": 10, "successThreshold": 1,
                                   "failureThreshold": 3, **faulty}  # the fault's probe as the server returns it
    assert not mitigate(PROBE, state)["passed"]


def test_one_defaulting_model():
    path = ["spec", "template", "spec", "containers", ["name", "x"], "readinessProbe", "timeoutSeconds"]
    assert model.default_at("Deployment", path) == 1
    assert model.default_at("StatefulSet", path[:-1] + ["httpGet", "scheme"]) == "HTTP"
    assert model.default_at("Service", ["spec", "ports", ["port", 80], "protocol"]) == "TCP"
    assert model.default_at("Deployment", ["spec", "progressDeadlineSeconds"]) == 600
    assert model.default_at("ConfigMap", ["data", "x"]) is model.MISSING
    probe = rt.defaulted({"httpGet": {"port": 8080}}, "Deployment", path[:-1])
    assert probe == {"httpGet": {"port": 8080, "path": "/", "scheme": "HTTP"}, "timeoutSeconds": 1,
                     "periodSeconds": 10, "successThreshold": 1, "failureThreshold": 3}
    container = model.with_defaults({"name": "a", "image": "nginx"}, model.DEFAULT_SHAPES["container"])
    assert container["imagePullPolicy"] == "Always"  # an image of tag latest, as SetDefaults_Container
    assert model.with_defaults({"name": "a", "image": "nginx:1.25"}, model.DEFAULT_SHAPES["container"])[
        "imagePullPolicy"] == "IfNotPresent"


# ---- 14. image references ------------------------------------------------------------------------------------


@pytest.mark.parametrize("a, b, one", [
    ("nginx", "nginx:latest", True),
    ("nginx", "docker.io/library/nginx:latest", True),
    ("index.docker.io/library/nginx", "nginx", True),
    ("valkey/valkey:7.2", "docker.io/valkey/valkey:7.2", True),
    ("nginx:1.25", "nginx", False),
    ("ghcr.io/acme/web:1", "docker.io/acme/web:1", False),
    ("localhost:5000/web", "localhost:5000/web:latest", True),
    ("localhost:5000/web", "web", False),
    ("redis@sha256:" + "a" * 64, "docker.io/library/redis@sha256:" + "a" * 64, True),
    ("redis@sha256:" + "a" * 64, "redis", False),
])
def test_image_references_are_compared_as_the_runtime_resolves_them(a, b, one):
    assert (model.image_ref(a) == model.image_ref(b)) is one
    assert rt.owns({"image": a}, {"image": b}) is one


def test_an_image_spelled_with_its_registry_is_the_same_program():
    state = derived(IMAGE, "solved")
    for container in obj(state, "Deployment", "checkout")["spec"]["template"]["spec"]["containers"]:
        image = container["image"]
        container["image"] = image if "." in image.split("/")[0] else "docker.io/" + image
        if ":" not in image.rpartition("/")[2]:
            container["image"] += ":latest"
    assert mitigate(IMAGE, state)["passed"], failed(mitigate(IMAGE, state))


# ---- 16. a recreated Service ---------------------------------------------------------------------------------

DELETED = "otel-cart-deleted-service"


@pytest.mark.parametrize("target, passes", [(None, True), ("named", True), (9999, False)])
def test_a_service_recreated_with_kubectl_expose_is_restored(target, passes):
    state = derived(DELETED, "solved")
    service = obj(state, "Service", "cart")
    port = service["spec"]["ports"][0]
    if target == "named":  # the target port by the name the container gives it
        container = obj(state, "Deployment", "cart")["spec"]["template"]["spec"]["containers"][0]
        target = next(p["name"] for p in container["ports"] if p["containerPort"] == port.get("targetPort", port["port"]))
    service["spec"]["ports"] = [{"port": port["port"], "protocol": "TCP",
                                 "targetPort": port.get("targetPort", port["port"]) if target is None else target}]
    service["spec"].update(clusterIP="10.96.0.7", type="ClusterIP", sessionAffinity="None")
    verdict = mitigate(DELETED, state)
    assert verdict["passed"] is passes, failed(verdict)


def test_a_named_port_among_several_keeps_its_name():
    owned = {"spec": {"ports": [{"name": "http", "port": 80, "targetPort": 8080},
                                {"name": "grpc", "port": 90, "targetPort": 9090}]}}
    service = {"kind": "Service", "metadata": {"name": "s"}, "spec": {"ports": [
        {"name": "http", "port": 80, "targetPort": 8080, "protocol": "TCP"},
        {"name": "port-2", "port": 90, "targetPort": 9090, "protocol": "TCP"}]}}
    state = rt.State({"resources": {"items": []}})
    assert not rt.restored_holds(owned, service, state)
    service["spec"]["ports"][1]["name"] = "grpc"
    assert rt.restored_holds(owned, service, state)


# ---- 17. unordered lists -------------------------------------------------------------------------------------

RBAC = "k8sbench-fix-rbac-wrong-resource"


def test_the_missing_rule_appended_after_the_faulty_one_passes():
    faulty_rule = obj(derived(RBAC, "faulty"), "Role", "pod-reader-role")["rules"][0]
    state = derived(RBAC, "solved")
    role = obj(state, "Role", "pod-reader-role")
    role["rules"] = [faulty_rule, {"apiGroups": [""], "resources": ["pods", "pods/log"], "verbs": ["get", "list"]}]
    verdict = mitigate(RBAC, state)
    assert not any(c.startswith("mitigation.predicate.") for c in failed(verdict)), verdict["checks"]
    role["rules"] = [faulty_rule]
    assert "mitigation.predicate.0" in failed(mitigate(RBAC, state))


def _lint(source: str) -> set[str]:
    from itbench_dsl.checking import check_source

    return {d.code for d in check_source(source.encode(), "x.itb").diagnostics}


def test_w2011_flags_a_position_in_an_unordered_list():
    source = (HERE / "cases" / "errors" / "W2011-positional-predicate" / "input.itb").read_text(encoding="utf-8")
    assert "W2011" in _lint(source)
    assert "W2011" not in _lint(source.replace("containers[0].image exists", 'containers[name="redis"].image exists'))
    assert "W2011" in _lint(source.replace("containers[0].image exists", "containers.image exists"))
    assert "W2011" not in _lint(source.replace("spec.template.spec.containers[0].image exists",
                                               'spec.template.spec.containers[name="redis"].args[0] not exists'))


def test_contains_reads_a_map_element_by_its_entries():
    rule = {"apiGroups": [""], "resources": ["pods", "services"], "verbs": ["get", "list", "watch"]}
    assert rt.holds({"resources": ["pods"], "verbs": ["list"]}, rule)
    assert not rt.holds({"resources": ["pods"], "verbs": ["delete"]}, rule)
    assert not rt.holds({"verbs": "list"}, rule)  # a list is not its element


# ---- 18. evicted pods ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("owned, passes", [(True, True), (False, False)])
def test_an_evicted_pod_its_controller_replaced_is_no_failure(owned, passes):
    name = "k8sbench-fix-crashloop"
    state = derived(name, "solved")
    pod = copy.deepcopy(next(p for p in state["resources"]["items"] if p["kind"] == "Pod"
                             and p["metadata"]["namespace"] == "crashloop-test"))
    pod["metadata"]["name"] += "-evicted"
    if not owned:
        del pod["metadata"]["ownerReferences"]
    pod["status"] = {"phase": "Failed", "reason": "Evicted", "message": "The node was low on resource: memory."}
    state["resources"]["items"].append(pod)
    assert mitigate(name, state)["passed"] is passes


def _diagnostic_pod(phase: str, labels: dict) -> dict:
    """`kubectl run curl-check --restart=Never ...` the agent ran while diagnosing, finished in `phase`."""
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "curl-check", "namespace": "hotel-reservation", "labels": labels},
            "spec": {"containers": [{"name": "curl-check", "image": "curlimages/curl:8.10.1",
                                     "args": ["curl", "-sf", "http://mongodb-rate:27017"]}], "restartPolicy": "Never"},
            "status": {"phase": phase, "conditions": [{"type": "Ready", "status": "False", "reason": "PodCompleted"}]}}


@pytest.mark.parametrize("phase", ["Succeeded", "Failed"])
def test_a_finished_pod_that_is_none_of_the_application_is_no_failure(phase):
    """A one-shot pod the agent ran exited non-zero (the database was down): a finished run, not an unready
    replica of the application, whatever its exit code."""
    name = "sregym-resource-request-too-small"
    state = derived(name, "solved")
    state["resources"]["items"].append(_diagnostic_pod(phase, {"run": "curl-check"}))
    verdict = mitigate(name, state)
    assert verdict["passed"], failed(verdict)


def test_a_failed_pod_a_service_of_the_application_selects_still_fails():
    name = "sregym-resource-request-too-small"
    state = derived(name, "solved")
    service = next(o for o in state["resources"]["items"] if o["kind"] == "Service"
                   and o["metadata"]["namespace"] == "hotel-reservation" and (o.get("spec") or {}).get("selector"))
    state["resources"]["items"].append(_diagnostic_pod("Failed", dict(service["spec"]["selector"])))
    assert not mitigate(name, state)["passed"]


# ---- 19. inputs that are no regular files --------------------------------------------------------------------


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_fifo_or_a_device_is_refused_without_reading_it(tmp_path):
    name = "hotel-reservation-noop-detection"
    script = tmp_path / "evaluator.py"
    script.write_bytes(bundle(IMAGE)[1]["evaluator.py"])
    fifo = tmp_path / "fifo.json"
    os.mkfifo(fifo)

    def call(evaluator: Path, *args):
        return subprocess.run([sys.executable, str(evaluator), *args], check=False, capture_output=True, text=True,
                              cwd=tmp_path, timeout=60)

    for args in (["--state", str(fifo), "--task", "mitigate"], ["--agent-output", str(fifo), "--task", "diagnose"],
                 ["--state", "/dev/zero", "--task", "mitigate"], ["--state", str(tmp_path), "--task", "mitigate"]):
        result = call(script, *args)
        assert result.returncode == 2 and ("not a regular file" in result.stderr or "directory" in result.stderr), \
            (args, result.stderr)
    # an answer file of a work folder that is a FIFO: never waited on; the agent's answer, unusable: its task
    # fails with the reason
    tasks = tmp_path / "tasks"
    tasks.mkdir()
    other = tasks / "evaluator.py"
    other.write_bytes(bundle(name)[1]["evaluator.py"])
    work = tasks / "work"
    work.mkdir()
    ns: dict = {"__name__": "x"}
    exec(compile(bundle(name)[1]["evaluator.py"], "evaluator.py", "exec"), ns)  # noqa: S102
    answer = next(iter(ns["SPEC"]["answers"].values()))
    os.mkfifo(work / answer)
    result = call(other, "--agent-output", str(work), "--task", next(iter(ns["SPEC"]["answers"])))
    assert result.returncode == 0, result.stderr
    verdict = json.loads(result.stdout)
    assert not verdict["passed"] and "not a regular file" in verdict["checks"][0]["detail"], verdict


def test_the_library_compiles_with_the_runtime():  # the evaluator of a library scenario still runs its corpus
    result = compile_source((HERE.parent / "scenarios" / "sre" / f"{RBAC}.itb").read_bytes(), "x.itb", Diagnostics())
    assert result.scenario is not None
