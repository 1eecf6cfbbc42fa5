"""A program is more than its command (docs/evaluator.md, "A program is more than its command"): a variable, a
volume mount or a lifecycle hook added beyond the healthy spec changes it; the image's own ENTRYPOINT and CMD
spelled out do not; a CronJob's runs must start a pod on some node, and a suspended Job is no run in progress.
"""

from __future__ import annotations

from itbench_dsl.runtime import evaluator as rt
from itbench_dsl.runtime.state import _instant, image_defaults_dropped, job_complete, run_in_progress, State


def _deployment(**container):
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "demo"},
            "spec": {"template": {"metadata": {"labels": {"app": "web"}},
                                  "spec": {"containers": [{"name": "web", "image": "nginx:1.25", **container}]}}}}


def _state(*items, **extra):
    return State({"resources": {"kind": "List", "items": list(items)}, **extra})


def test_a_variable_the_healthy_spec_does_not_set_is_a_change():
    got = _deployment(env=[{"name": "HTTPS_PROXY", "value": "http://10.255.255.1:3128"}])
    assert "HTTPS_PROXY" in rt.env_changed({"web": {}}, got, _state(got))
    same = _deployment(env=[{"name": "MODE", "value": "a"}])
    assert rt.env_changed({"web": {"env": [{"name": "MODE", "value": "a"}]}}, same, _state(same)) is None
    # a variable a fault removed, put back, is its check's
    assert rt.env_changed({"web": {"open": ["HTTPS_PROXY"]}}, got, _state(got)) is None


def test_a_volume_mounted_over_another_path_is_a_change():
    got = _deployment(volumeMounts=[{"name": "scratch", "mountPath": "/usr/share/nginx/html/"}])
    assert "/usr/share/nginx/html" in rt.mounts_added({"web": []}, got)
    assert rt.mounts_added({"web": ["/usr/share/nginx/html"]}, got) is None


def test_a_lifecycle_hook_added_is_a_change():
    keep = {"spec": {"template": {"spec": {"containers": [{"name": "web", "lifecycle": {"preStop": {
        "exec": {"command": ["sleep", "5"]}}}}]}}}}
    hook = {"exec": {"command": ["sh", "-c", "rm -rf /usr/share/nginx/html/*"]}}
    assert "postStart" in rt.hooks_added(keep, _deployment(lifecycle={"preStop": {"exec": {"command": ["sleep", "5"]}},
                                                                      "postStart": hook}))
    assert rt.hooks_added(keep, _deployment(lifecycle={"preStop": {"exec": {"command": ["sleep", "5"]}}})) is None
    assert not rt.program_kept({"spec": {"template": {"spec": {"containers": [
        {"name": "web", "image": "nginx:1.25", "command": None, "args": None, "lifecycle": None}]}}}},
        _deployment(lifecycle={"postStart": hook}))


def test_the_images_own_program_spelled_out_is_that_program():
    def argv(**c):
        return image_defaults_dropped(_deployment(**c))["spec"]["template"]["spec"]["containers"][0]
    assert "args" not in argv(args=["nginx", "-g", "daemon off;"])
    spelled = argv(command=["/docker-entrypoint.sh"], args=["nginx", "-g", "daemon off;"])
    assert "command" not in spelled and "args" not in spelled
    assert argv(command=["/docker-entrypoint.sh"]) == {"name": "web", "image": "nginx:1.25",
                                                       "command": ["/docker-entrypoint.sh"]}  # the CMD dropped
    assert argv(args=["nginx", "-g", "daemon on;"])["args"] == ["nginx", "-g", "daemon on;"]
    other = image_defaults_dropped({**_deployment(args=["nginx", "-g", "daemon off;"])})
    other["spec"]["template"]["spec"]["containers"][0]["image"] = "example.com/web:1"
    assert image_defaults_dropped(other) is other  # an image it does not know is read as written


def _cron(job_spec=None, status=None, pod=None):
    return {"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "expiry", "namespace": "shop"},
            "spec": {"schedule": "*/5 * * * *", "jobTemplate": {"spec": {**(job_spec or {}), "template": {"spec": {
                "restartPolicy": "OnFailure", "containers": [{"name": "expiry", "image": "busybox:1.36"}],
                **(pod or {})}}}}},
            "status": status or {}}


RUNNING = {"lastScheduleTime": "2026-01-01T00:10:00Z", "lastSuccessfulTime": "2026-01-01T00:04:10Z",
           "active": [{"kind": "Job", "name": "expiry-29000010", "namespace": "shop"}]}


def test_a_suspended_job_is_no_run_in_progress():
    fixed = _instant("2026-01-01T00:03:00Z")
    assert job_complete(_cron(status=RUNNING), fixed, _state(_cron(status=RUNNING)))
    stalled = _cron({"suspend": True}, RUNNING)
    assert not run_in_progress(stalled) and not job_complete(stalled, fixed, _state(stalled))
    assert not job_complete(_cron({"parallelism": 0}, RUNNING), fixed)
    job = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "expiry-29000010", "namespace": "shop"},
           "spec": {"suspend": True}}
    assert not job_complete(_cron(status=RUNNING), fixed, _state(_cron(status=RUNNING), job))


def test_a_cronjobs_runs_must_start_a_pod_on_some_node():
    entry = {"placement": {"nodeSelector": None, "affinity": None, "nodeName": None}}
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "kind-worker", "labels": {
        "kubernetes.io/hostname": "kind-worker"}}}
    nowhere = _cron(pod={"nodeSelector": {"kubernetes.io/hostname": "no-such-node"}})
    assert rt.runs_unplaced(entry, nowhere, _state(nowhere, node))
    assert rt.runs_unplaced(entry, nowhere, _state(nowhere))  # no Node shown: another placement does not run
    there = _cron(pod={"nodeSelector": {"kubernetes.io/hostname": "kind-worker"}})
    assert rt.runs_unplaced(entry, there, _state(there, node)) is None
    assert rt.runs_unplaced(entry, _cron(), _state(_cron())) is None
