"""`itbench run` against the real control plane (`itbench cluster up`: kube-apiserver, controllers, scheduler,
kwok, etcd), one per module: library scenarios fixed by their first solution through the real kubectl and left
unfixed, the mitigation's declared window, a closed output and Ctrl-C during the run and its cleanup, the agent's
token checked at handover, and a group whose discovery answers 503.

The faults that must be injected into the server itself (watches held open, malformed answers) are in
tests/run/test_run_cluster.py, against tests/support/kube_server.py. Skips where the control plane cannot be built.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

pytest.importorskip("kubernetes", reason="itbench run needs the cluster extra")

from click.testing import CliRunner  # noqa: E402
from support.compiling import SCENARIOS  # noqa: E402

from itbench_dsl.cli import cli  # noqa: E402
from itbench_dsl.run import lifecycle  # noqa: E402
from itbench_dsl.run.local import LocalClusterError, build, down, up  # noqa: E402
from itbench_dsl.run.runner import Run, RunOptions  # noqa: E402

WAIT = 90.0

# scenarios whose faults are plain changes of Kubernetes objects and that expect no alerts (the local control
# plane has no Chaos Mesh, Istio or Prometheus)
RUNNABLE = ("sre/sregym-wrong-dns-policy-hotel-reservation", "sre/sregym-wrong-dns-policy-social-network")

# A scripted agent: names the scenario's root causes and applies its first solution with the kubectl on PATH
# (the control plane's), with its own token; it does not wait for the rollouts it starts.
FIXING_AGENT = r'''
import json, os, subprocess, sys
scenario = json.load(open(sys.argv[1]))
entities = [{"name": f"{c.get('namespace', '')}/{c['kind']}/{c['name']}", "contributing_factor": True,
             "reasoning": "scripted", "evidence": "scripted"} for c in scenario["root_causes"]]
with open(os.path.join(os.environ["ITBENCH_WORKSPACE"], "diagnosis.json"), "w") as answer:
    json.dump({"entities": entities}, answer)
for step in scenario["solutions"][0]["steps"]:
    subprocess.run(step["command"], shell=True, check=True)
'''


@pytest.fixture(scope="module")
def plane(tmp_path_factory):
    if os.environ.get("ITBENCH_LOCAL_CLUSTER") == "unbuilt":  # .ci/run could not build it: do not try again here
        pytest.skip("the local control plane could not be built before the tests (.ci/run)")
    try:
        binary = build(say=lambda message: None)
    except LocalClusterError as exc:
        pytest.skip(f"the local control plane cannot be built here: {str(exc).splitlines()[0]}")
    directory = tmp_path_factory.mktemp("plane") / "cluster"
    started = up(directory, binary=binary, say=lambda message: None)
    try:
        yield started
    finally:
        down(directory, say=lambda message: None)


@pytest.fixture(scope="module")
def bundles(tmp_path_factory) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("bundles")
    sources = [str(SCENARIOS / f"{name}.itb") for name in RUNNABLE]
    compiled = CliRunner().invoke(cli, ["compile", *sources, "-o", str(out)])
    assert compiled.exit_code == 0, compiled.output
    return {name.rpartition("/")[2]: out / name.rpartition("/")[2] for name in RUNNABLE}


@pytest.fixture
def on_path(plane, monkeypatch):
    """The control plane's kubectl first on PATH: the agent's PATH is the caller's."""
    monkeypatch.setenv("PATH", str(plane.dir / "bin") + os.pathsep + os.environ.get("PATH", ""))


def kubectl(plane, *args, check=True):
    done = plane.kubectl(*args)
    if check:
        assert done.returncode == 0, f"kubectl {' '.join(args)}: {done.stderr}"
    return done


def namespaces(plane) -> set[str]:
    items = json.loads(kubectl(plane, "get", "namespaces", "-o", "json").stdout)["items"]
    return {n["metadata"]["name"] for n in items}


def eventually(condition, what: str, timeout: float = WAIT):
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            pytest.fail(f"not within {timeout:.0f}s: {what}")
        time.sleep(0.5)


def timeline(folder: Path) -> list[dict]:
    return [json.loads(line) for line in (folder / "timeline.jsonl").read_text().splitlines()]


def options(plane, tmp_path, agent, **extra) -> RunOptions:
    extra = {"ready_timeout": 60, "stable_for": 1, "alert_poll": 0.5, **extra}
    return RunOptions(kubeconfig=str(plane.kubeconfig), agent=agent, results=tmp_path / "results", kill_grace=1,
                      **extra)


def scenario_namespaces(bundle: Path) -> set[str]:
    return {o["metadata"]["name"] for o in lifecycle.load_bundle(bundle).topology if o["kind"] == "Namespace"}


@pytest.mark.parametrize("scenario", [name.rpartition("/")[2] for name in RUNNABLE])
def test_the_first_solution_passes_and_an_idle_agent_fails(plane, bundles, on_path, tmp_path, scenario):
    bundle = bundles[scenario]
    before = namespaces(plane)
    agent = tmp_path / "agent.py"
    agent.write_text(FIXING_AGENT)
    fixing = f"{sys.executable} {agent} {bundle / 'scenario.json'}"
    # the scenario's own window (`mitigated when within 10m`): the run captures until the checks hold
    fixed = Run(lifecycle.load_bundle(bundle), options(plane, tmp_path, fixing), progress=None).execute()
    assert fixed.status == "graded", fixed.error
    failed = [c for c in fixed.verdict["checks"] if not c["passed"]]
    assert fixed.verdict["passed"] is True and fixed.verdict["score"] == 1.0, failed
    assert "patched" in (fixed.folder / "agent.stdout").read_text()  # the real kubectl, with the agent's token
    [waited] = [e for e in timeline(fixed.folder) if e.get("action") == "await-mitigation"]
    assert waited["held"] is True and waited["window"] == 600.0
    assert namespaces(plane) == before  # undeployed, and waited for

    idle = Run(lifecycle.load_bundle(bundle), options(plane, tmp_path, "true", mitigation_window=3),
               progress=None).execute()
    assert idle.status == "graded", idle.error
    assert idle.verdict["passed"] is False
    assert idle.verdict["tasks"]["mitigate"]["passed"] is False
    [waited] = [e for e in timeline(idle.folder) if e.get("action") == "await-mitigation"]
    assert waited["held"] is False and waited["polls"] >= 2 and waited["seconds"] >= 3
    assert namespaces(plane) == before


def test_closed_output_and_ctrl_c_during_the_run_and_the_cleanup_still_clean_up(plane, bundles, tmp_path):
    bundle = bundles["sregym-wrong-dns-policy-hotel-reservation"]
    results = tmp_path / "results"
    # `itbench run ... 2>&1 | tee log`, then Ctrl-C: the reader goes away with the run
    proc = subprocess.Popen([sys.executable, "-m", "itbench_dsl", "run", str(bundle), "--kubeconfig",
                             str(plane.kubeconfig), "--agent", "sleep 120", "--run-id", "cut", "--stable-for", "1s",
                             "-o", str(results)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    folder = results / bundle.name / "cut"

    def agent_started():
        return (folder / "timeline.jsonl").is_file() and any(
            e.get("action") == "agent" for e in timeline(folder))

    try:
        proc.stdout.readline()  # it has written progress
        eventually(agent_started, "the agent started")
        proc.stdout.close()  # the pipe's reader is gone: every further write fails with EPIPE
        proc.send_signal(signal.SIGINT)
        eventually(lambda: any(e["phase"] == "revert" and e["event"] == "start" for e in timeline(folder)),
                   "the cleanup started")
        proc.send_signal(signal.SIGINT)  # Ctrl-C again, during the cleanup
        code = proc.wait(timeout=WAIT)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    events = timeline(folder)
    assert code == 130
    assert any(e["phase"] == "revert" and e["event"] == "done" for e in events)
    assert any(e["phase"] == "undeploy" and e.get("action") == "delete" for e in events)
    assert any("progress stream is closed" in (e.get("message") or "") for e in events)
    assert json.loads((folder / "run.json").read_text())["status"] == "interrupted"
    # the fault is reverted and the topology deleted: the namespace goes
    gone = scenario_namespaces(bundle)
    eventually(lambda: not (namespaces(plane) & gone), "the scenario's namespaces deleted")


def test_the_agents_token_is_checked_at_handover(plane, bundles, tmp_path):
    bundle = tmp_path / "bundle"
    shutil.copytree(bundles["sregym-wrong-dns-policy-hotel-reservation"], bundle)
    access = bundle / "manifests" / "agent-access.yaml"
    kept = [d for d in yaml.safe_load_all(access.read_text()) if d and d["kind"] != "RoleBinding"]
    access.write_text(yaml.safe_dump_all(kept))  # the agent's ServiceAccount and Role, without the binding
    outcome = Run(lifecycle.load_bundle(bundle), options(plane, tmp_path, "touch ran"), progress=None).execute()
    assert outcome.status == "failed"
    assert "the agent's token (system:serviceaccount:hotel-reservation:itbench-agent) is refused" in outcome.error
    events = timeline(outcome.folder)
    assert not any(e.get("action") == "agent" for e in events)  # the agent never ran
    assert any(e["phase"] == "revert" and e["event"] == "done" for e in events)
    assert not (namespaces(plane) & scenario_namespaces(bundle))



def test_the_agents_admission_policy_is_in_force_at_handover(plane, bundles, tmp_path, monkeypatch):
    """The handover proves the agent's admission policy (backends/manifests.pod_guard) refuses, as the agent, a
    service-account-token Secret of its own account (a credential that would outlive the run); an access whose
    policy is not bound (not in force) stops the run before the agent gets the token."""
    from itbench_dsl.run import runner

    bundle = tmp_path / "bundle"
    shutil.copytree(bundles["sregym-wrong-dns-policy-hotel-reservation"], bundle)
    access = bundle / "manifests" / "agent-access.yaml"
    kept = [d for d in yaml.safe_load_all(access.read_text()) if d and d["kind"] != "ValidatingAdmissionPolicyBinding"]
    access.write_text(yaml.safe_dump_all(kept))
    monkeypatch.setattr(runner, "POLICY_WAIT", 2.0)
    outcome = Run(lifecycle.load_bundle(bundle), options(plane, tmp_path, "touch ran"), progress=None).execute()
    assert outcome.status == "failed"
    assert "the agent's admission policy (itbench-agent) is not in force" in outcome.error
    assert "a service-account-token Secret" in outcome.error
    assert not any(e.get("action") == "agent" for e in timeline(outcome.folder))  # the agent never ran
    assert not (namespaces(plane) & scenario_namespaces(bundle))

    monkeypatch.setattr(runner, "POLICY_WAIT", 30.0)
    outcome = Run(lifecycle.load_bundle(bundles["sregym-wrong-dns-policy-hotel-reservation"]),
                  options(plane, tmp_path, "true", mitigation_window=0, run_id="guarded"), progress=None).execute()
    assert outcome.status == "graded", outcome.error
    [checked] = [e for e in timeline(outcome.folder) if e.get("action") == "token-checked"]
    assert checked["guarded"] == "a service-account-token Secret"


def undeploy(plane, bundle: Path) -> None:
    """What a test deployed by hand (or kept with `keep`) goes: the access, then the topology's objects (its
    cluster-wide ones too: a PersistentVolume left Released would keep the next run's claims from binding)."""
    for name in ("agent-access.yaml", "topology.yaml"):
        kubectl(plane, "delete", "-f", str(bundle / "manifests" / name), "--ignore-not-found", "--wait=false")
    topology = str(bundle / "manifests" / "topology.yaml")
    eventually(lambda: not kubectl(plane, "get", "-f", topology, "--ignore-not-found", "-o", "name").stdout.strip(),
               "the topology's objects gone")


def test_the_agents_kubeconfig_holds_one_user_denied_what_its_prompt_does_not_grant(plane, bundles, tmp_path):
    """`itbench run`: the kubeconfig the agent gets holds its token alone, and the real API server refuses that token
    what the scenario's access does not grant; agent-reach.json records what the server says the token holds in
    each of the scenario's namespaces, nothing beyond the grant."""
    from support.confinement import assert_confined

    bundle = bundles["sregym-wrong-dns-policy-hotel-reservation"]
    try:  # kept deployed, so that the token outlives the run for the questions asked of it
        outcome = Run(lifecycle.load_bundle(bundle), options(plane, tmp_path, "cp kubeconfig.yaml given.yaml",
                                                             keep=True, mitigation_window=0), progress=None).execute()
        assert outcome.status == "graded", outcome.error
        assert_confined(plane.dir / "bin" / "kubectl", outcome.folder / "workspace" / "given.yaml", bundle)
        held = json.loads((outcome.folder / "agent-reach.json").read_text())["held"]
        assert set(held) == namespaces(plane)  # every namespace of the cluster, the scenario's among them
        assert {"default", "hotel-reservation", "kube-system", "kube-public"} <= set(held)
        assert all(h["rules"] and h["beyond"] == [] for h in held.values())
        assert not any(r.get("resourceNames") or "*" in r["verbs"] for h in held.values() for r in h["rules"])
    finally:
        undeploy(plane, bundle)


def test_a_token_that_holds_more_than_its_roles_grant_is_refused_at_handover(plane, bundles, tmp_path):
    """A binding of the cluster's that gives every service account more (here: listing ClusterRoles, which the prompt
    does not grant) stops the run before the agent gets the token, naming the right; agent-reach.json records it."""
    bundle = bundles["sregym-wrong-dns-policy-hotel-reservation"]
    wider = [{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": "test-wider"},
              "rules": [{"apiGroups": ["rbac.authorization.k8s.io"], "resources": ["clusterroles"],
                         "verbs": ["list"]}]},
             {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
              "metadata": {"name": "test-wider"},
              "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "test-wider"},
              "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group",
                            "name": "system:serviceaccounts"}]}]
    objects = tmp_path / "wider.yaml"
    objects.write_text(yaml.safe_dump_all(wider))
    kubectl(plane, "apply", "-f", str(objects))
    try:
        outcome = Run(lifecycle.load_bundle(bundle), options(plane, tmp_path, "touch ran", mitigation_window=0),
                      progress=None).execute()
    finally:
        kubectl(plane, "delete", "-f", str(objects), "--ignore-not-found")
    assert outcome.status == "failed"
    assert "may do more than its Roles grant" in outcome.error and "list clusterroles.rbac.authorization.k8s.io" \
        in outcome.error
    assert not any(e.get("action") == "agent" for e in timeline(outcome.folder))  # the agent never ran
    held = json.loads((outcome.folder / "agent-reach.json").read_text())["held"]
    assert all(h["beyond"] == ["list clusterroles.rbac.authorization.k8s.io"] for h in held.values())
    assert not (namespaces(plane) & scenario_namespaces(bundle))


@pytest.mark.parametrize("target", ["chainsaw", "argo"])
def test_the_engine_targets_hand_the_agent_one_user_denied_what_its_prompt_does_not_grant(plane, bundles, tmp_path,
                                                                                          target):
    """Chainsaw's and Argo's handover scripts, run with the real kubectl as the admin: the kubeconfig they write holds
    the agent's token alone (nothing of the admin's certificate), the real server refuses it what the access
    does not grant, and the hand-over recorded what the token holds (agent-reach.json), nothing beyond the grant."""
    from support.confinement import assert_confined

    from itbench_dsl.compiler import compile_source, target_files
    from itbench_dsl.diagnostics import Diagnostics

    shared = bundles["sregym-wrong-dns-policy-hotel-reservation"]
    bundle = tmp_path / "bundle"  # the hand-over writes agent-reach.json beside the bundle: a copy of the shared one
    shutil.copytree(shared, bundle)
    source = SCENARIOS / f"{RUNNABLE[0]}.itb"
    diags = Diagnostics()
    result = compile_source(source.read_bytes(), str(source), diags)
    assert not diags.errors()
    files = target_files(result, target, diags)
    if target == "chainsaw":
        [test] = list(yaml.safe_load_all(files["chainsaw-test.yaml"]))
        [script] = [op["script"]["content"] for s in test["spec"]["steps"] if s["name"] == "handover"
                    for op in s["try"] if "script" in op]
    else:
        [template] = list(yaml.safe_load_all(files["workflowtemplate.yaml"]))
        [script] = [t["script"]["source"] for t in template["spec"]["templates"] if t["name"] == "handover"]
    folder = tmp_path / "agent"
    script = script.replace("/tmp/itbench-agent", str(folder))
    admin = yaml.safe_load(plane.kubeconfig.read_text())
    assert any(set(u["user"]) & {"client-certificate", "client-certificate-data"} for u in admin["users"])
    kubectl(plane, "apply", "-f", str(bundle / "manifests" / "topology.yaml"))
    try:
        kubectl(plane, "apply", "-f", str(bundle / "manifests" / "agent-access.yaml"))
        env = {"PATH": str(plane.dir / "bin") + os.pathsep + os.environ["PATH"], "KUBECONFIG": str(plane.kubeconfig),
               "HOME": str(tmp_path)}
        done = subprocess.run(["sh", "-c", script], cwd=bundle, env=env, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        assert sorted(p.name for p in folder.iterdir()) == ["kubeconfig.yaml", "prompt.md"]
        config = assert_confined(plane.dir / "bin" / "kubectl", folder / "kubeconfig.yaml", bundle)
        text = (folder / "kubeconfig.yaml").read_text()
        assert not any(str(v) in text for u in admin["users"] for k, v in u["user"].items() if "key" in k or "cert" in k)
        assert config["clusters"][0]["cluster"]["server"] == admin["clusters"][0]["cluster"]["server"]
        # the hand-over reviewed the token as the agent, as `itbench run` does: nothing beyond the grant
        reach = json.loads((bundle / "agent-reach.json").read_text())
        assert reach["kubeconfig"]["users"] == [config["users"][0]["name"]]
        assert set(reach["held"]) == namespaces(plane)  # every namespace of the cluster, the scenario's among them
        assert all(h["rules"] and h["beyond"] == [] for h in reach["held"].values())
        # a namespace the bundle does not name (a fault tool's) where the cluster lets service accounts read: refused
        kubectl(plane, "create", "namespace", "test-answers")
        kubectl(plane, "-n", "test-answers", "create", "rolebinding", "sa-view", "--clusterrole=view",
                "--group=system:serviceaccounts")
        shutil.rmtree(folder)
        done = subprocess.run(["sh", "-c", script], cwd=bundle, env=env, capture_output=True, text=True, timeout=120)
        assert done.returncode != 0 and "test-answers: " in done.stderr and "get configmaps" in done.stderr
        reach = json.loads((bundle / "agent-reach.json").read_text())
        assert "list pods" in reach["held"]["test-answers"]["beyond"]
    finally:
        kubectl(plane, "delete", "namespace", "test-answers", "--ignore-not-found", "--timeout=90s")
        undeploy(plane, bundle)


def test_a_right_held_in_a_namespace_the_scenario_does_not_name_is_refused_at_handover(plane, bundles, tmp_path):
    """The fault's objects (a Chaos Mesh experiment naming its target) live in a namespace of their own: a binding of
    the cluster's letting every service account read there stops the run like one in the scenario's namespace."""
    bundle = bundles["sregym-wrong-dns-policy-hotel-reservation"]
    kubectl(plane, "create", "namespace", "test-fault-tool")
    kubectl(plane, "-n", "test-fault-tool", "create", "configmap", "experiment", "--from-literal=target=profile")
    kubectl(plane, "-n", "test-fault-tool", "create", "rolebinding", "sa-view", "--clusterrole=view",
            "--group=system:serviceaccounts")
    try:
        outcome = Run(lifecycle.load_bundle(bundle), options(plane, tmp_path, "touch ran", mitigation_window=0),
                      progress=None).execute()
    finally:
        kubectl(plane, "delete", "namespace", "test-fault-tool", "--timeout=90s")
    assert outcome.status == "failed"
    assert "in test-fault-tool: " in outcome.error and "get configmaps" in outcome.error
    assert not any(e.get("action") == "agent" for e in timeline(outcome.folder))  # the agent never ran
    held = json.loads((outcome.folder / "agent-reach.json").read_text())["held"]
    assert "list configmaps" in held["test-fault-tool"]["beyond"]
    assert not any(h["beyond"] for ns, h in held.items() if ns != "test-fault-tool")


# An agent that leaves notes where its access lets it write cluster-wide: on a node (annotation, label, taint,
# cordon), on a namespace that outlives the run (`default`), and in a namespace of its own.
MEMO_AGENT = r"""
set -eu
kubectl get node kwok-node-0 -o jsonpath='{.metadata.annotations.notes/answer}' > found.txt
kubectl get namespaces -l notes/kind=memo -o name >> found.txt
kubectl annotate node kwok-node-0 --overwrite notes/answer=profile
kubectl label node kwok-node-0 --overwrite notes/kind=memo
kubectl taint node kwok-node-0 notes/answer=profile:PreferNoSchedule --overwrite
kubectl cordon kwok-node-0
kubectl annotate namespace default --overwrite notes/answer=profile
kubectl create namespace test-memo
kubectl label namespace test-memo notes/kind=memo
"""


def test_what_the_agent_writes_cluster_wide_is_undone_at_the_revert(plane, bundles, on_path, tmp_path):
    """The nodes and namespaces the agent may change are recorded before the fault and put back at the revert: its
    annotations, labels, taints and cordon undone, the namespace it made deleted, each a step of the timeline; the
    next trial on the cluster finds none of its notes."""
    bundle = bundles["sregym-wrong-dns-policy-hotel-reservation"]
    script = tmp_path / "memo.sh"
    script.write_text(MEMO_AGENT)
    node_before = json.loads(kubectl(plane, "get", "node", "kwok-node-0", "-o", "json").stdout)
    default_before = json.loads(kubectl(plane, "get", "namespace", "default", "-o", "json").stdout)
    try:
        for trial in ("one", "two"):
            outcome = Run(lifecycle.load_bundle(bundle), options(
                plane, tmp_path, f"sh {script} > log.txt 2>&1", mitigation_window=0, run_id=trial),
                progress=None).execute()
            assert outcome.status == "graded", outcome.error
            assert (outcome.folder / "workspace" / "found.txt").read_text().strip() == ""  # no earlier trial's notes
            events = timeline(outcome.folder)
            undone = {e["step"] for e in events if e["phase"] == "revert" and e.get("action") in ("set-back", "delete")}
            assert any("Namespace test-memo" in s or "test-memo" in s for s in undone), undone
            assert any("kwok-node-0" in s for s in undone) and any("default" in s for s in undone), undone
            eventually(lambda: "test-memo" not in namespaces(plane), "the agent's namespace gone")
            node = json.loads(kubectl(plane, "get", "node", "kwok-node-0", "-o", "json").stdout)
            assert node["metadata"].get("labels") == node_before["metadata"].get("labels")
            assert "notes/answer" not in (node["metadata"].get("annotations") or {})
            assert not node["spec"].get("unschedulable")
            assert not any(t["key"] == "notes/answer" for t in node["spec"].get("taints") or [])
            default = json.loads(kubectl(plane, "get", "namespace", "default", "-o", "json").stdout)
            assert default["metadata"].get("annotations") == default_before["metadata"].get("annotations")
    finally:
        kubectl(plane, "delete", "namespace", "test-memo", "--ignore-not-found", "--wait=false")
        kubectl(plane, "annotate", "node", "kwok-node-0", "notes/answer-")
        kubectl(plane, "label", "node", "kwok-node-0", "notes/kind-")
        kubectl(plane, "taint", "node", "kwok-node-0", "notes/answer-", check=False)
        kubectl(plane, "uncordon", "kwok-node-0")
        kubectl(plane, "annotate", "namespace", "default", "notes/answer-")


APISERVICE = {
    "apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService", "metadata": {"name": "v1alpha1.chaos-mesh.org"},
    "spec": {"group": "chaos-mesh.org", "version": "v1alpha1", "groupPriorityMinimum": 1000, "versionPriority": 15,
             "insecureSkipTLSVerify": True, "service": {"name": "nowhere", "namespace": "default", "port": 443}},
}


def test_a_group_whose_discovery_answers_503_is_not_reported_as_not_served(plane, tmp_path):
    from itbench_dsl.run import ClusterError
    from itbench_dsl.run.client import Cluster

    # an aggregated API registered but unavailable: the real server answers its discovery with 503
    done = subprocess.run([str(plane.dir / "bin" / "kubectl"), "--kubeconfig", str(plane.kubeconfig), "apply", "-f",
                           "-"], input=json.dumps(APISERVICE), capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    try:
        with Cluster(str(plane.kubeconfig)) as cluster:
            with pytest.raises(ClusterError) as failure:
                cluster.resource("chaos-mesh.org/v1alpha1", "Schedule")
            message = str(failure.value)
            assert "/apis/chaos-mesh.org/v1alpha1 answered 503" in message, message
            assert cluster.resource("no-such-group.example.com/v1", "Thing") is None  # not served is still None
            assert cluster.resource("apps/v1", "Deployment") is not None
        # a run's preflight says so, and does not tell the user to install what is installed
        compiled = CliRunner().invoke(cli, ["compile", str(SCENARIOS / "sre" / "otel-cart-pod-kill-loop.itb"), "-o",
                                            str(tmp_path / "out")])
        assert compiled.exit_code == 0, compiled.output
        outcome = Run(lifecycle.load_bundle(tmp_path / "out" / "otel-cart-pod-kill-loop"),
                      options(plane, tmp_path, "true"), progress=None).execute()
        assert outcome.status == "failed" and "the cluster lacks what the scenario needs" in outcome.error
        assert "chaos-mesh.org/v1alpha1 Schedule cannot be checked" in outcome.error and "503" in outcome.error
        assert "Schedule is not served" not in outcome.error
    finally:
        kubectl(plane, "delete", "apiservice", APISERVICE["metadata"]["name"])


# An agent that writes down what it can see (its folder, environment and kubeconfig), starts a child of its own
# and overruns its budget.
LOOKING_AGENT = r"""
import json, os, subprocess, sys, time
json.dump({"cwd": os.getcwd(), "files": sorted(os.listdir(".")), "env": dict(os.environ),
           "kubeconfig": open(os.environ["KUBECONFIG"]).read()}, open("seen.json", "w"))
subprocess.Popen(["sh", "-c", "sleep 30; touch " + sys.argv[1]])
time.sleep(30)
"""


def living_in_group(pgid: int) -> list[int]:
    out = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rpartition(")")[2].split()
        except OSError:
            continue
        if int(fields[2]) == pgid and fields[0] != "Z":
            out.append(int(stat.parent.name))
    return out


def test_the_agent_gets_its_own_folder_and_token_is_killed_over_budget_and_a_captured_run_resumes_by_grading(
        plane, bundles, tmp_path, monkeypatch):
    """One run: the agent starts in a fresh folder outside the bundle and the results holding only the prompt and a
    one-user kubeconfig whose token the real API server takes as its ServiceAccount; its environment names nothing
    of the bundle and carries none of the caller's variables but those `--agent-env` names; over its budget its
    whole process group is killed and it is graded. Then the same run id, its verdict gone: graded again from the
    captured state, without the cluster."""
    from itbench_dsl.run.client import Cluster

    bundle = bundles["sregym-wrong-dns-policy-hotel-reservation"]
    monkeypatch.setenv("ITBENCH_TEST_SECRET", "caller-only")
    monkeypatch.setenv("ITBENCH_TEST_PASSED", "for-the-agent")
    script, marker = tmp_path / "look.py", tmp_path / "child-alive"
    script.write_text(LOOKING_AGENT)
    started = time.monotonic()
    outcome = Run(lifecycle.load_bundle(bundle), options(
        plane, tmp_path, f"{sys.executable} {script} {marker}", agent_env=("ITBENCH_TEST_PASSED",), agent_timeout=3,
        mitigation_window=0, run_id="look"), progress=None).execute()
    assert outcome.status == "graded", outcome.error
    assert time.monotonic() - started < 120
    info = json.loads((outcome.folder / "run.json").read_text())["agent"]
    assert info["timed_out"] is True and info["seconds"] < 15
    pid = next(e["pid"] for e in timeline(outcome.folder) if e.get("pid"))
    assert not living_in_group(pid), "the agent's processes outlived the run"

    seen = json.loads((outcome.folder / "workspace" / "seen.json").read_text())
    cwd = Path(seen["cwd"]).resolve()
    assert seen["files"] == ["kubeconfig.yaml", "prompt.md"]
    for outside in (bundle.resolve(), (tmp_path / "results").resolve()):
        assert outside not in cwd.parents and cwd != outside
    assert not cwd.exists(), "the agent's folder outlived its run (its work is kept in workspace/)"
    env = seen["env"]
    assert env["HOME"] == seen["cwd"] and env["KUBECONFIG"] == str(cwd / "kubeconfig.yaml")
    assert "ITBENCH_TEST_SECRET" not in env and env["ITBENCH_TEST_PASSED"] == "for-the-agent"
    text = " ".join(f"{k}={v}" for k, v in env.items())
    assert str(bundle.resolve()) not in text and str(tmp_path / "results") not in text
    assert bundle.name not in text and "groundtruth" not in text
    config = yaml.safe_load(seen["kubeconfig"])
    [user] = config["users"]  # exactly one user: the agent's token, nothing of the caller's credentials
    assert set(user["user"]) == {"token"}
    assert [c["context"]["user"] for c in config["contexts"]] == [user["name"]]
    reach = json.loads((outcome.folder / "agent-reach.json").read_text())
    assert reach["files"] == ["kubeconfig.yaml", "prompt.md"] and reach["kubeconfig"]["users"] == [user["name"]]
    assert "ITBENCH_TEST_SECRET" not in reach["environment"] and "ITBENCH_TEST_PASSED" in reach["environment"]
    # the token the agent had was the ServiceAccount's, as the real server authenticated it at the handover (it
    # dies with its ServiceAccount when the run undeploys)
    [checked] = [e for e in timeline(outcome.folder) if e.get("action") == "token-checked"]
    assert checked["user"] == "system:serviceaccount:hotel-reservation:itbench-agent" and checked["checks"] >= 1
    with Cluster(str(plane.kubeconfig)) as admin:
        assert admin.whoami() != checked["user"]
    verdict = json.loads((outcome.folder / "verdict.json").read_text())
    assert verdict["passed"] is False  # nothing fixed, nothing written
    assert not marker.exists()

    # resume: as if it stopped before grading; grading a captured state needs no cluster (a kubeconfig to nowhere)
    graded = (outcome.folder / "verdict.json").read_text()
    (outcome.folder / "verdict.json").unlink()
    lines = [line for line in (outcome.folder / "timeline.jsonl").read_text().splitlines()
             if '"phase": "evaluate"' not in line]
    (outcome.folder / "timeline.jsonl").write_text("\n".join(lines) + "\n")
    nowhere = tmp_path / "nowhere.yaml"
    nowhere.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "Config", "current-context": "x",
                                       "clusters": [{"name": "x", "cluster": {"server": "https://127.0.0.1:9"}}],
                                       "users": [{"name": "x", "user": {"token": "x"}}],
                                       "contexts": [{"name": "x", "context": {"cluster": "x", "user": "x"}}]}))
    resumed = Run(lifecycle.load_bundle(bundle), RunOptions(kubeconfig=str(nowhere), agent="false",
                                                            results=tmp_path / "results", run_id="look"),
                  progress=None).execute()
    assert resumed.status == "graded" and (outcome.folder / "verdict.json").read_text() == graded


RECREATING_KIND = """fault_kind "replaced_job_command" {
  mechanism = "test.job.command:replaced"
  targets = [job]
  summary = "Replaces the command of a Job's container (the API server refuses a Job's template on update)."
  recreate = true
  arg "command" { type = "strings" required = true help = "the command" }
  patch spec.template.spec.containers[0].command = arg(command)
}
"""

RECREATED_JOB = """scenario "migrate-recreated" {
  domain sre
  complexity low
  description "The shop's migration job runs a command that does not exist."
  tasks mitigate
  use faults "./faults/kinds.itb"
  topology {
    namespace "recreated"
    deployment "web" { image = "nginx:1.27" port "http" = 80 }
    job "migrate" { image = "busybox:1.36" command = ["sh", "-c", "true"] }
  }
  fault replaced_job_command on job "migrate" { command = ["/opt/shop/bin/migrate"] }
  expect { root_cause job "migrate" mitigated when { job "migrate" complete } }
}
"""

# records the Job as the agent sees it after the injection (its uid, its command)
RECORDING_AGENT = r'''
import subprocess, sys
done = subprocess.run(["kubectl", "-n", "recreated", "get", "job", "migrate", "-o", "json"], capture_output=True, text=True)
open(sys.argv[1], "w").write(done.stdout)
'''


def test_a_recreated_target_is_deleted_and_created_changed_then_recreated_as_it_was(plane, on_path, tmp_path):
    """A Job's pod template is immutable: a patch would be refused. `recreate` deletes the Job and creates it
    changed; the revert deletes it and creates the original (the real API server enforces both)."""
    source = tmp_path / "src"
    (source / "faults").mkdir(parents=True)
    (source / "faults" / "kinds.itb").write_text(RECREATING_KIND)
    (source / "s.itb").write_text(RECREATED_JOB)
    out = tmp_path / "bundles"
    compiled = CliRunner().invoke(cli, ["compile", str(source / "s.itb"), "-o", str(out)])
    assert compiled.exit_code == 0, compiled.output
    bundle = out / "migrate-recreated"
    assert (bundle / "inject" / "recreate.yaml").is_file()
    # the same change as an update is refused: what `recreate` is for
    kubectl(plane, "apply", "-f", str(bundle / "manifests" / "topology.yaml"))
    try:
        refused = kubectl(plane, "apply", "--server-side", "--force-conflicts", "--field-manager=itbench",
                          "-f", str(bundle / "inject" / "apply.yaml"), check=False)
        assert refused.returncode != 0 and "immutable" in refused.stderr
        before = json.loads(kubectl(plane, "-n", "recreated", "get", "job", "migrate", "-o", "json").stdout)
    finally:
        kubectl(plane, "delete", "namespace", "recreated", "--wait=true")
    agent = tmp_path / "agent.py"
    agent.write_text(RECORDING_AGENT)
    seen = tmp_path / "seen.json"
    run = Run(lifecycle.load_bundle(bundle), options(plane, tmp_path, f"{sys.executable} {agent} {seen}", keep=True,
                                                     mitigation_window=1), progress=None).execute()
    try:
        assert run.status == "graded", run.error
        injected = json.loads(seen.read_text())
        assert injected["spec"]["template"]["spec"]["containers"][0]["command"] == ["/opt/shop/bin/migrate"]
        reverted = json.loads(kubectl(plane, "-n", "recreated", "get", "job", "migrate", "-o", "json").stdout)
        assert reverted["spec"]["template"]["spec"]["containers"][0]["command"] == ["sh", "-c", "true"]
        uids = {before["metadata"]["uid"], injected["metadata"]["uid"], reverted["metadata"]["uid"]}
        assert len(uids) == 3  # three Jobs: each change made by a new object
        steps = [(e.get("phase"), e.get("action")) for e in timeline(run.folder) if "migrate" in e.get("step", "")]
        assert steps.index(("inject", "delete")) < steps.index(("inject", "apply"))
        assert steps.index(("revert", "delete")) < steps.index(("revert", "apply"))
    finally:
        kubectl(plane, "delete", "namespace", "recreated", "--ignore-not-found", "--wait=true")


CORDONED_WEB = """scenario "web-cordoned" {
  domain sre
  complexity low
  description "The shop's web server is pinned to a node under maintenance."
  tasks mitigate
  topology {
    namespace "cordoned"
    deployment "web" { image = "nginx:1.27" port "http" = 80 }
  }
  fault cordoned_node on deployment "web" { node = "kwok-node-0" }
  expect { root_cause deployment "web" mitigated when { deployment "web" ready } }
}
"""

# records, as the agent finds them, the node the fault cordons and the pods of the pinned Deployment
RECORDING_NODE_AGENT = r'''
import json, subprocess, sys
def get(*args):
    return json.loads(subprocess.run(["kubectl", *args, "-o", "json"], capture_output=True, text=True, check=True).stdout)
json.dump({"node": get("get", "node", "kwok-node-0"), "pods": get("-n", "cordoned", "get", "pods")}, open(sys.argv[1], "w"))
'''


def test_a_fault_that_cordons_a_node_cordons_it_before_its_apply_and_uncordons_it_after_the_revert(
        plane, on_path, tmp_path):
    """Nodes are no objects of a bundle: the cordon of `cordoned_node` is a step of the run. On the real control
    plane the pinned extra replica then stays Pending (the scheduler's NodeUnschedulable filter), and the
    node is schedulable again once the run is over."""
    (tmp_path / "s.itb").write_text(CORDONED_WEB)
    out = tmp_path / "bundles"
    compiled = CliRunner().invoke(cli, ["compile", str(tmp_path / "s.itb"), "-o", str(out)])
    assert compiled.exit_code == 0, compiled.output
    agent = tmp_path / "agent.py"
    agent.write_text(RECORDING_NODE_AGENT)
    seen = tmp_path / "seen.json"
    try:
        run = Run(lifecycle.load_bundle(out / "web-cordoned"),
                  options(plane, tmp_path, f"{sys.executable} {agent} {seen}", mitigation_window=1),
                  progress=None).execute()
        assert run.status == "graded", run.error
        found = json.loads(seen.read_text())
        assert found["node"]["spec"].get("unschedulable") is True
        pending = [p for p in found["pods"]["items"]
                   if p["spec"].get("nodeSelector", {}).get("kubernetes.io/hostname") == "kwok-node-0"
                   and not p["spec"].get("nodeName")]
        assert pending, "no pinned pod left unscheduled by the cordon"
        node = json.loads(kubectl(plane, "get", "node", "kwok-node-0", "-o", "json").stdout)
        assert not node["spec"].get("unschedulable")
        steps = [(e.get("phase"), e.get("action")) for e in timeline(run.folder)]
        assert steps.index(("inject", "cordon")) < steps.index(("inject", "apply"))
        assert steps.index(("revert", "uncordon")) > steps.index(("revert", "apply"))
    finally:
        kubectl(plane, "uncordon", "kwok-node-0", check=False)
        kubectl(plane, "delete", "namespace", "cordoned", "--ignore-not-found", "--wait=true", check=False)
