"""`itbench run` and `itbench snapshot` with commands run in pods: a fault's `exec` steps (inject/exec.json,
revert/exec.json) and the probes the evaluator reads, through the kubernetes client's pods/exec (the websocket
channel protocol) against tests/support/kube_server.py, whose MongoDB stand-in keeps a user's roles."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("kubernetes")

from support.kube_server import KubeServer  # noqa: E402
from test_run_plan import write_bundle  # noqa: E402

from itbench_dsl.run import lifecycle  # noqa: E402
from itbench_dsl.run import ClusterError  # noqa: E402
from itbench_dsl.run.runner import Run, RunOptions  # noqa: E402

SCENARIO = "hotel-reservation-mongodb-geo-revoked-role"
WORKLOAD = lifecycle.Ref("apps/v1", "Deployment", "hotel-reservation", "mongodb-geo")
CONTAINER = "hotel-reserv-geo-mongo"

# An agent that names the root cause and grants the role back with its own token, through pods/exec.
FIXING_AGENT = r"""
import json, os
from kubernetes import client, config
from kubernetes.stream import stream
api = client.CoreV1Api(config.new_client_from_config(os.environ["KUBECONFIG"]))
pods = json.loads(api.list_namespaced_pod("hotel-reservation", label_selector="io.kompose.service=mongodb-geo",
                                          _preload_content=False).data)["items"]
ws = stream(api.connect_get_namespaced_pod_exec, pods[0]["metadata"]["name"], "hotel-reservation",
            container="hotel-reserv-geo-mongo", stdout=True, stderr=True, stdin=False, tty=False,
            command=["mongo", "admin", "--quiet", "-u", "admin", "-p", "admin", "--eval",
                     "db.grantRolesToUser('admin', [{role: 'readWrite', db: 'geo-db'}])"])
json.dump({"entities": [{"name": "hotel-reservation/Deployment/mongodb-geo", "contributing_factor": True}],
           "propagations": []}, open("diagnosis.json", "w"))
print("granted")
"""


class Mongo:
    """What the mongo shell does in mongodb-geo's container: the admin user's roles, revoked and granted."""

    HEALTHY = [{"role": "userAdminAnyDatabase", "db": "admin"}, {"role": "readWrite", "db": "geo-db"}]

    def __init__(self):
        self.roles = list(self.HEALTHY)
        self.fail_grant = False

    def __call__(self, server, namespace, pod, container, command):
        script = command[-1]
        if command[0] != "mongo" or container != CONTAINER:
            return {"metadata": {}, "status": "Failure", "reason": "InternalError",
                    "message": f"executable file not found: {command[0]}"}
        readwrite = {"role": "readWrite", "db": "geo-db"}
        if script.startswith("db.revokeRolesFromUser"):
            self.roles = [r for r in self.roles if r != readwrite]
            return 0, "", ""
        if script.startswith("db.grantRolesToUser"):
            if self.fail_grant:
                return 252, "", "Error: not authorized on admin to execute command\n"
            if readwrite not in self.roles:
                self.roles.append(readwrite)
            return 0, "", ""
        if "getUser" in script:
            return 0, json.dumps(self.roles, separators=(",", ":")) + "\n", ""
        return 1, "", "unknown script\n"


@pytest.fixture(scope="module")
def bundle(tmp_path_factory) -> Path:
    return write_bundle(tmp_path_factory.mktemp("bundles"), SCENARIO)


@pytest.fixture
def server():
    with KubeServer(ready_delay=0.02, delete_delay=0.02) as s:
        s.mongo = s.exec_result = Mongo()
        s.baseline = s.snapshot()
        yield s


def options(server, tmp_path, agent, **extra) -> RunOptions:
    extra.setdefault("mitigation_window", 0.0)  # capture at once (the window's polling: tests/run/test_run_local.py)
    return RunOptions(kubeconfig=server.kubeconfig(tmp_path / "kubeconfig.yaml"), agent=agent,
                      results=tmp_path / "results", ready_timeout=10, kill_grace=1, **extra)


def settle(server) -> dict:
    deadline = time.monotonic() + 5
    while server.snapshot().keys() != server.baseline.keys() and time.monotonic() < deadline:
        time.sleep(0.02)
    return server.snapshot()


def events(folder: Path) -> list[dict]:
    return [json.loads(line) for line in (folder / "timeline.jsonl").read_text().splitlines()]


def scripts(server) -> list[str]:
    return [command[-1].split("(")[0] for _, _, _, command in server.execs]


def test_a_fixing_agent_passes_the_probe_and_the_revert_still_runs(server, bundle, tmp_path):
    script = tmp_path / "agent.py"
    script.write_text(FIXING_AGENT)
    outcome = Run(lifecycle.load_bundle(bundle), options(server, tmp_path, f"{sys.executable} {script}"),
                  progress=None).execute()
    assert outcome.status == "graded", outcome.error
    assert (outcome.folder / "agent.stdout").read_text().strip() == "granted"
    # inject revoked the role, the agent granted it, the snapshot probed it, the revert granted it (again)
    assert scripts(server) == ["db.revokeRolesFromUser", "db.grantRolesToUser",
                               "JSON.stringify", "db.grantRolesToUser"]
    assert {container for _, _, container, _ in server.execs} == {CONTAINER}
    state = json.loads((outcome.folder / "state.json").read_text())
    pod = state["probes"]["geo-roles"].pop("pod")
    assert pod.startswith("mongodb-geo-")  # the pod it ran in, which the evaluator checks is the workload's
    assert state["probes"]["geo-roles"] == {"exit_code": 0, "stderr": "",
                                            "stdout": json.dumps(Mongo.HEALTHY, separators=(",", ":")) + "\n"}
    verdict = json.loads((outcome.folder / "verdict.json").read_text())
    assert verdict["tasks"]["mitigate"]["passed"], verdict["tasks"]["mitigate"]["checks"]
    assert verdict["tasks"]["localize"]["passed"], verdict["tasks"]["localize"]["checks"]
    execs = [e for e in events(outcome.folder) if e.get("action") in ("exec", "probe")]
    assert [(e["phase"], e["action"], e["exit_code"]) for e in execs] == [
        ("inject", "exec", 0), ("snapshot", "probe", 0), ("revert", "exec", 0)]
    assert server.mongo.roles == Mongo.HEALTHY
    assert settle(server) == server.baseline


def test_an_idle_agent_fails_on_the_probe_and_the_revert_restores_the_role(server, bundle, tmp_path):
    outcome = Run(lifecycle.load_bundle(bundle), options(server, tmp_path, "true"), progress=None).execute()
    assert outcome.status == "graded", outcome.error
    state = json.loads((outcome.folder / "state.json").read_text())
    assert state["probes"]["geo-roles"]["stdout"] == '[{"role":"userAdminAnyDatabase","db":"admin"}]\n'
    mitigate = json.loads((outcome.folder / "verdict.json").read_text())["tasks"]["mitigate"]
    assert not mitigate["passed"]
    assert [c["id"] for c in mitigate["checks"] if not c["passed"]] == ["mitigation.predicate.1"]
    assert scripts(server)[-1] == "db.grantRolesToUser" and server.mongo.roles == Mongo.HEALTHY
    assert settle(server) == server.baseline


def test_a_failing_inject_step_stops_the_run_and_the_revert_still_runs(server, bundle, tmp_path):
    server.exec_result = lambda srv, ns, pod, container, command: (
        (1, "", "Error: couldn't connect to server\n") if "revoke" in command[-1] else server.mongo(
            srv, ns, pod, container, command))
    outcome = Run(lifecycle.load_bundle(bundle), options(server, tmp_path, "true"), progress=None).execute()
    assert outcome.status == "failed"
    assert "exited 1: Error: couldn't connect to server" in outcome.error
    done = [e["phase"] for e in events(outcome.folder) if e["event"] == "done" and e["phase"] != "run"]
    assert done == ["preflight", "deploy", "baseline", "revert", "verify", "undeploy"], done
    assert scripts(server) == ["db.revokeRolesFromUser", "db.grantRolesToUser"]
    assert settle(server) == server.baseline


def test_a_failing_revert_step_is_reported_and_the_rest_of_the_cleanup_runs(server, bundle, tmp_path):
    server.mongo.fail_grant = True
    outcome = Run(lifecycle.load_bundle(bundle), options(server, tmp_path, "true"), progress=None).execute()
    assert outcome.status == "failed" and "cleanup: revert: exec in" in outcome.error
    assert "not authorized" in outcome.error
    assert any(e["phase"] == "undeploy" and e["event"] == "done" for e in events(outcome.folder))
    assert settle(server) == server.baseline


def test_exec_keeps_a_bounded_output_and_times_out(server, bundle, tmp_path):
    from itbench_dsl.run.client import Cluster

    b = lifecycle.load_bundle(bundle)
    with Cluster(server.kubeconfig(tmp_path / "kubeconfig.yaml")) as cluster:
        for obj in b.topology:
            cluster.apply(obj)
        assert not cluster.wait([WORKLOAD], lambda o: o is not None and o.get("status", {}).get("readyReplicas"), 10)
        server.exec_result = lambda *a: (7, "é" * (3 * 1024 * 1024), "x" * 10)
        result = cluster.exec(WORKLOAD, CONTAINER, ["sh", "-c", "yes"], timeout=10, cap=1000)
        assert result == {"exit_code": 7, "stdout": "é" * 500, "stderr": "x" * 10, "pod": result["pod"]}
        server.exec_result = lambda *a: time.sleep(3) or (0, "late", "")
        started = time.monotonic()
        with pytest.raises(ClusterError, match="still running after 0.5 s"):
            cluster.exec(WORKLOAD, CONTAINER, ["sleep", "3"], timeout=0.5)
        assert time.monotonic() - started < 2.5
        with pytest.raises(ClusterError, match="executable file not found"):
            server.exec_result = Mongo()
            cluster.exec(WORKLOAD, CONTAINER, ["nope"], timeout=5)
        with pytest.raises(ClusterError, match="absent: not found"):
            cluster.exec(lifecycle.Ref("apps/v1", "Deployment", "hotel-reservation", "absent"), CONTAINER, ["x"], 5)


def test_snapshot_runs_the_probes_and_records_one_that_cannot_run(server, bundle, tmp_path):
    from click.testing import CliRunner

    from itbench_dsl.cli import cli
    from itbench_dsl.run.client import Cluster

    b = lifecycle.load_bundle(bundle)
    kubeconfig = server.kubeconfig(tmp_path / "kubeconfig.yaml")
    with Cluster(kubeconfig) as cluster:
        for obj in b.topology:
            cluster.apply(obj)
        assert not cluster.wait([WORKLOAD], lambda o: o is not None and o.get("status", {}).get("readyReplicas"), 10)
    out = tmp_path / "state.json"
    result = CliRunner().invoke(cli, ["snapshot", str(bundle), "--kubeconfig", kubeconfig, "-o", str(out)])
    assert result.exit_code == 0, result.output
    state = json.loads(out.read_text())
    assert state["probes"]["geo-roles"]["exit_code"] == 0
    import subprocess

    proc = subprocess.run([sys.executable, str(bundle / "evaluator.py"), "--task", "mitigate", "--state", str(out)],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and json.loads(proc.stdout)["passed"] is True, proc.stdout + proc.stderr
    server.exec_result = lambda *a: {"metadata": {}, "status": "Failure", "message": "container not running"}
    result = CliRunner().invoke(cli, ["snapshot", str(bundle), "--kubeconfig", kubeconfig, "-o", str(out)])
    assert result.exit_code == 0, result.output
    failed = json.loads(out.read_text())["probes"]["geo-roles"]
    assert failed["exit_code"] == -1 and "container not running" in failed["stderr"]


def test_a_run_killed_before_run_json_is_scored_by_the_tasks_its_timeline_names(server, bundle, tmp_path):
    """The timeline's first step names the scenario and its tasks: a run that dies before writing run.json (and
    its verdict) still counts as a failed trial of each task, in that task's totals."""
    from itbench_dsl.runtime.scoring import load_verdicts

    script = tmp_path / "agent.py"
    script.write_text("pass\n")
    loaded = lifecycle.load_bundle(bundle)
    outcome = Run(loaded, options(server, tmp_path, f"{sys.executable} {script}"), progress=None).execute()
    start = events(outcome.folder)[0]
    assert (start["phase"], start["event"], start["scenario"]) == ("run", "start", loaded.scenario)
    # the pods as the agent found them, which an answer may name after the fix replaced them
    incident = json.loads((outcome.folder / "state.json").read_text())["incident"]
    assert any(o["kind"] == "Pod" for o in incident["resources"]["items"]) and incident["at"]
    (outcome.folder / "run.json").unlink()
    (outcome.folder / "verdict.json").unlink()
    trials = load_verdicts(tmp_path / "results")
    assert sorted(v["task"] for v in trials) == sorted(start["tasks"]) and start["tasks"]
    assert all(v["scenario"] == loaded.scenario and not v["passed"] and v["no_verdict"] for v in trials)
