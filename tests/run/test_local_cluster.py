"""`itbench cluster`: a real control plane (etcd, kube-apiserver, controller manager, scheduler, kwok)
built from its Go modules, driven through the kubectl built with it.

The tests that need the control plane skip where Go is absent or the build fails (`.ci/run` builds it
first with `itbench cluster build`); one module-scoped fixture starts it once.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from itbench_dsl.cli import cli
from itbench_dsl.run.local import LocalClusterError, build, down, up
from itbench_dsl.run.local.plane import _alive

WAIT = 90.0  # seconds: a bound on every wait for the cluster to converge


@pytest.fixture(scope="module")
def binary():
    if os.environ.get("ITBENCH_LOCAL_CLUSTER") == "unbuilt":  # .ci/run could not build it: do not try again here
        pytest.skip("the local control plane could not be built before the tests (.ci/run)")
    try:
        return build(say=lambda message: None)
    except LocalClusterError as exc:
        pytest.skip(f"the local control plane cannot be built here: {str(exc).splitlines()[0]}")


@pytest.fixture(scope="module")
def cluster(binary, tmp_path_factory):
    directory = tmp_path_factory.mktemp("local") / "cluster"
    started = up(directory, binary=binary, say=lambda message: None)
    try:
        yield started
    finally:
        down(directory, say=lambda message: None)


def kubectl(cluster, *args, input=None, check=True):
    done = cluster.kubectl(*args, input=input)
    if check:
        assert done.returncode == 0, f"kubectl {' '.join(args)}: {done.stderr}"
    return done


def get(cluster, *args) -> dict:
    return json.loads(kubectl(cluster, "get", *args, "-o", "json").stdout)


def eventually(condition, what: str, timeout: float = WAIT):
    """The first truthy value of `condition()`, polled until `timeout`."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            pytest.fail(f"not within {timeout:.0f}s: {what}")
        time.sleep(0.5)


DEPLOYMENT = {
    "apiVersion": "apps/v1", "kind": "Deployment",
    "metadata": {"name": "web", "namespace": "shop"},
    "spec": {
        "replicas": 2,
        "selector": {"matchLabels": {"app": "web"}},
        "template": {
            "metadata": {"labels": {"app": "web"}},
            "spec": {"containers": [{
                "name": "web", "image": "nginx:1.27",
                "readinessProbe": {"httpGet": {"path": "/", "port": 80}},
            }]},
        },
    },
}


def test_deployment_gets_replicaset_and_running_ready_pods(cluster):
    kubectl(cluster, "create", "namespace", "shop")
    kubectl(cluster, "apply", "-f", "-", input=json.dumps(DEPLOYMENT))

    def ready_pods():
        pods = get(cluster, "pods", "-n", "shop", "-l", "app=web")["items"]
        ok = [p for p in pods if p["status"].get("phase") == "Running"
              and any(c["type"] == "Ready" and c["status"] == "True" for c in p["status"].get("conditions", []))]
        return pods if len(ok) == 2 and len(pods) == 2 else None

    pods = eventually(ready_pods, "two Running and Ready pods of the Deployment")
    replicasets = get(cluster, "replicasets", "-n", "shop")["items"]
    assert len(replicasets) == 1
    rs = replicasets[0]
    assert rs["metadata"]["ownerReferences"][0]["kind"] == "Deployment"
    assert rs["metadata"]["ownerReferences"][0]["name"] == "web"
    for pod in pods:
        assert pod["metadata"]["ownerReferences"][0]["name"] == rs["metadata"]["name"]
        assert pod["spec"]["nodeName"].startswith("kwok-node-")  # placed by the scheduler
        assert pod["status"]["podIP"]  # given by kwok
    def deployment_ready():
        status = get(cluster, "deployment", "web", "-n", "shop")["status"]
        return status if status.get("readyReplicas") == 2 else None

    status = eventually(deployment_ready, "the Deployment's readyReplicas")
    assert status["availableReplicas"] == 2


def test_the_server_applies_defaults(cluster):
    kubectl(cluster, "create", "namespace", "defaults")
    manifest = dict(DEPLOYMENT, metadata={"name": "probe", "namespace": "defaults"})
    kubectl(cluster, "apply", "-f", "-", input=json.dumps(manifest))
    deployment = get(cluster, "deployment", "probe", "-n", "defaults")
    container = deployment["spec"]["template"]["spec"]["containers"][0]
    probe = container["readinessProbe"]
    assert (probe["timeoutSeconds"], probe["periodSeconds"], probe["successThreshold"], probe["failureThreshold"]) \
        == (1, 10, 1, 3)
    assert probe["httpGet"]["scheme"] == "HTTP"
    assert container["imagePullPolicy"] == "IfNotPresent"  # a tagged image, not :latest
    assert container["terminationMessagePolicy"] == "File"
    assert deployment["spec"]["strategy"]["rollingUpdate"] == {"maxSurge": "25%", "maxUnavailable": "25%"}
    assert deployment["spec"]["revisionHistoryLimit"] == 10


def test_service_account_token_is_held_to_its_rbac(cluster):
    kubectl(cluster, "create", "namespace", "agent")
    kubectl(cluster, "create", "serviceaccount", "agent", "-n", "agent")
    kubectl(cluster, "create", "role", "read-pods", "-n", "agent", "--verb=get,list", "--resource=pods")
    kubectl(cluster, "create", "rolebinding", "read-pods", "-n", "agent", "--role=read-pods",
            "--serviceaccount=agent:agent")
    token = kubectl(cluster, "create", "token", "agent", "-n", "agent", "--duration=10m").stdout.strip()
    assert token.count(".") == 2  # a JWT from TokenRequest

    pki = cluster.dir / "pki"
    as_agent = ["--kubeconfig", os.devnull, "--server", cluster.server, "--certificate-authority",
                str(pki / "ca.crt"), "--token", token]
    allowed = kubectl(cluster, *as_agent, "auth", "can-i", "list", "pods", "-n", "agent", check=False)
    assert (allowed.returncode, allowed.stdout.strip()) == (0, "yes")
    denied = kubectl(cluster, *as_agent, "auth", "can-i", "list", "secrets", "-n", "agent", check=False)
    assert denied.stdout.strip() == "no" and denied.returncode != 0
    # a real request, not only the review: the API server refuses it
    forbidden = kubectl(cluster, *as_agent, "get", "secrets", "-n", "agent", check=False)
    assert forbidden.returncode != 0
    assert "Forbidden" in forbidden.stderr and "system:serviceaccount:agent:agent" in forbidden.stderr
    other = kubectl(cluster, *as_agent, "get", "pods", "-n", "default", check=False)
    assert other.returncode != 0 and "Forbidden" in other.stderr


def test_the_agent_may_not_run_as_a_wider_service_account(cluster):
    """The agent's compiled access (backends/manifests.agent_access and pod_guard), applied as the harness applies
    it: its token may create pods, Deployments and Secrets, yet neither a pod running as `wide` (bound to a
    ClusterRole that reads every Secret), nor a service-account-token Secret of it, nor a change to the pod spec of
    a Deployment that runs as it; a pod of the application's narrow account, and an image fix, pass."""
    from itbench_dsl import ir
    from itbench_dsl.backends.manifests import agent_access, pod_guard

    ns = "guarded"
    cluster_objects = [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}},
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "wide", "namespace": ns}},
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "app", "namespace": ns}},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": "read-secrets"},
         "rules": [{"apiGroups": [""], "resources": ["secrets"], "verbs": ["get", "list"]}]},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding", "metadata": {"name": "wide"},
         "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "read-secrets"},
         "subjects": [{"kind": "ServiceAccount", "name": "wide", "namespace": ns}]},
    ]
    access = ir.AgentAccess("itbench-agent", [ns], read=["pods", "secrets", "deployments"],
                            write=["pods", "secrets", "deployments"])
    objects = agent_access(access)
    objects += pod_guard(access, objects, cluster_objects)
    kubectl(cluster, "apply", "-f", "-", input=json.dumps({"apiVersion": "v1", "kind": "List",
                                                           "items": cluster_objects + objects}))
    token = kubectl(cluster, "create", "token", "itbench-agent", "-n", ns, "--duration=10m").stdout.strip()
    as_agent = ["--kubeconfig", os.devnull, "--server", cluster.server, "--certificate-authority",
                str(cluster.dir / "pki" / "ca.crt"), "--token", token]

    def pod(name: str, account: str) -> dict:
        return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": ns},
                "spec": {"serviceAccountName": account, "automountServiceAccountToken": True,
                         "containers": [{"name": "c", "image": "busybox:1.36"}]}}

    def create(obj: dict, *extra: str):
        return kubectl(cluster, *as_agent, "create", *extra, "-f", "-", input=json.dumps(obj), check=False)

    refusal = "may do more than you"
    # the policy takes effect once the API server has loaded it
    eventually(lambda: refusal in create(pod("probe", "wide"), "--dry-run=server").stderr, "the policy in force")
    refused = create(pod("borrow", "wide"))
    assert refused.returncode != 0 and "ValidatingAdmissionPolicy" in refused.stderr and refusal in refused.stderr
    token_secret = {"apiVersion": "v1", "kind": "Secret", "type": "kubernetes.io/service-account-token",
                    "metadata": {"name": "cache", "namespace": ns,
                                 "annotations": {"kubernetes.io/service-account.name": "wide"}}}
    refused = create(token_secret)
    assert refused.returncode != 0 and "kubernetes.io/service-account-token" in refused.stderr
    assert create(pod("own", "app")).returncode == 0
    assert create({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "conf", "namespace": ns},
                   "stringData": {"k": "v"}}).returncode == 0

    for name, account in (("web", "app"), ("dash", "wide")):  # the application's Deployments, made by the admin
        deployment = json.loads(json.dumps(DEPLOYMENT))
        deployment["metadata"] = {"name": name, "namespace": ns}
        deployment["spec"]["template"]["spec"]["serviceAccountName"] = account
        kubectl(cluster, "apply", "-f", "-", input=json.dumps(deployment))
    fixed = kubectl(cluster, *as_agent, "set", "image", "deployment/web", "web=nginx:1.28", "-n", ns, check=False)
    assert fixed.returncode == 0, fixed.stderr
    moved = kubectl(cluster, *as_agent, "set", "serviceaccount", "deployment/web", "wide", "-n", ns, check=False)
    assert moved.returncode != 0 and refusal in moved.stderr
    changed = kubectl(cluster, *as_agent, "set", "image", "deployment/dash", "web=nginx:1.28", "-n", ns, check=False)
    assert changed.returncode != 0 and refusal in changed.stderr
    restarted = kubectl(cluster, *as_agent, "rollout", "restart", "deployment/dash", "-n", ns, check=False)
    assert restarted.returncode == 0, restarted.stderr  # the pod template's annotations, not its spec


def test_the_agents_pods_stay_within_the_baseline_level(cluster):
    """The same compiled policy (backends/manifests.node_reach): the agent's pod or pod template may not add what Pod
    Security's baseline level forbids (the node's namespaces, a privileged container, the node's files, capabilities,
    sysctls, an unconfined AppArmor profile), whatever the namespace's Pod Security label; an application's own
    host settings stay through an image fix, and none may be added to them."""
    from itbench_dsl import ir
    from itbench_dsl.backends.manifests import agent_access, pod_guard

    ns = "hosty"
    access = ir.AgentAccess("itbench-agent", [ns], read=["pods", "deployments", "daemonsets"],
                            write=["pods", "deployments", "daemonsets"])
    objects = agent_access(access)
    objects += pod_guard(access, objects, [])
    namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}
    kubectl(cluster, "apply", "-f", "-", input=json.dumps({"apiVersion": "v1", "kind": "List",
                                                           "items": [namespace] + objects}))
    token = kubectl(cluster, "create", "token", "itbench-agent", "-n", ns, "--duration=10m").stdout.strip()
    as_agent = ["--kubeconfig", os.devnull, "--server", cluster.server, "--certificate-authority",
                str(cluster.dir / "pki" / "ca.crt"), "--token", token]

    def pod(name: str, **spec) -> dict:
        container = {"name": "c", "image": "busybox:1.36", **spec.pop("container", {})}
        return {"apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": name, "namespace": ns, "annotations": spec.pop("annotations", {})},
                "spec": {"containers": [container], **spec}}

    def create(obj: dict, *extra: str):
        return kubectl(cluster, *as_agent, "create", *extra, "-f", "-", input=json.dumps(obj), check=False)

    refusal = "beyond the Pod Security baseline level"
    eventually(lambda: refusal in create(pod("probe", hostPID=True), "--dry-run=server").stderr, "the policy in force")
    node_owner = pod("node-debugger", hostPID=True, hostNetwork=True, tolerations=[{"operator": "Exists"}],
                     volumes=[{"name": "host", "hostPath": {"path": "/"}}],
                     container={"securityContext": {"privileged": True},
                                "volumeMounts": [{"name": "host", "mountPath": "/host"}]})
    refused = create(node_owner)
    assert refused.returncode != 0 and refusal in refused.stderr
    assert all(s in refused.stderr for s in ("hostNetwork", "hostPID", "privileged container c", "hostPath /"))
    for name, spec in {
        "ipc": {"hostIPC": True},
        "caps": {"container": {"securityContext": {"capabilities": {"add": ["NET_ADMIN"]}}}},
        "port": {"container": {"ports": [{"containerPort": 80, "hostPort": 8080}]}},
        "sysctl": {"securityContext": {"sysctls": [{"name": "kernel.msgmax", "value": "65536"}]}},
        "proc": {"hostUsers": False, "container": {"securityContext": {"procMount": "Unmasked"}}},
        "selinux": {"securityContext": {"seLinuxOptions": {"type": "spc_t"}}},
        "apparmor": {"container": {"securityContext": {"appArmorProfile": {"type": "Unconfined"}}}},
        "seccomp": {"securityContext": {"seccompProfile": {"type": "Unconfined"}}},
        "init": {"initContainers": [{"name": "i", "image": "busybox:1.36", "securityContext": {"privileged": True}}]},
    }.items():
        refused = create(pod(name, **spec))
        assert refused.returncode != 0 and refusal in refused.stderr, (name, refused.stderr)
    daemons = json.loads(json.dumps(DEPLOYMENT))
    daemons.update(kind="DaemonSet", metadata={"name": "everywhere", "namespace": ns})
    del daemons["spec"]["replicas"]
    daemons["spec"]["template"]["spec"]["hostPID"] = True
    refused = create(daemons)
    assert refused.returncode != 0 and refusal in refused.stderr
    # what baseline allows passes: a capability on its list, a sysctl on its list, the runtime's AppArmor profile
    allowed = pod("fine", securityContext={"sysctls": [{"name": "net.ipv4.tcp_syncookies", "value": "1"}]},
                  annotations={"container.apparmor.security.beta.kubernetes.io/c": "runtime/default"},
                  container={"securityContext": {"capabilities": {"add": ["NET_BIND_SERVICE"]}}})
    created = create(allowed)
    assert created.returncode == 0, created.stderr

    # the application's own host settings (made by the admin) stay through the agent's image fix
    hosted = json.loads(json.dumps(DEPLOYMENT))
    hosted["metadata"] = {"name": "logs", "namespace": ns}
    template = hosted["spec"]["template"]["spec"]
    template.update(hostNetwork=True, volumes=[{"name": "log", "hostPath": {"path": "/var/log"}}])
    template["containers"][0]["securityContext"] = {"privileged": True}
    kubectl(cluster, "apply", "-f", "-", input=json.dumps(hosted))
    fixed = kubectl(cluster, *as_agent, "set", "image", "deployment/logs", "web=nginx:1.28", "-n", ns, check=False)
    assert fixed.returncode == 0, fixed.stderr

    def patch(*ops: dict):
        return kubectl(cluster, *as_agent, "patch", "deployment", "logs", "-n", ns, "--type=json", "-p",
                       json.dumps(list(ops)), check=False)

    wider = patch({"op": "replace", "path": "/spec/template/spec/volumes/0/hostPath/path", "value": "/"})
    assert wider.returncode != 0 and "hostPath /" in wider.stderr
    more = patch({"op": "add", "path": "/spec/template/spec/hostPID", "value": True})
    assert more.returncode != 0 and "hostPID" in more.stderr and "hostNetwork" not in more.stderr.split(refusal)[1]
    fewer = patch({"op": "remove", "path": "/spec/template/spec/hostNetwork"})
    assert fewer.returncode == 0, fewer.stderr  # dropping a host setting is the agent's to do


def test_etcd_answers_only_the_api_servers_certificate(cluster):
    """Any process on the machine reaches etcd's loopback port: it must not read the store past RBAC."""
    import ssl
    import urllib.error
    import urllib.request

    from itbench_dsl.run.local.plane import etcd_context

    port = cluster.state["ports"]["etcd"]
    body = json.dumps({"key": "L3JlZ2lzdHJ5Lw==", "range_end": "L3JlZ2lzdHJ5MA==", "count_only": True}).encode()

    def answer(scheme: str, context=None) -> dict | None:
        request = urllib.request.Request(f"{scheme}://127.0.0.1:{port}/v3/kv/range", data=body, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=5, context=context) as reply:
                return json.loads(reply.read())
        except (urllib.error.URLError, OSError, ValueError):
            return None

    pki = cluster.dir / "pki"
    assert answer("http") is None
    no_certificate = ssl.create_default_context(cafile=str(pki / "etcd" / "ca.crt"))
    assert answer("https", no_certificate) is None
    other_ca = ssl.create_default_context(cafile=str(pki / "etcd" / "ca.crt"))
    other_ca.load_cert_chain(str(pki / "admin.crt"), str(pki / "admin.key"))  # the cluster's admin, not etcd's CA
    assert answer("https", other_ca) is None
    assert int(answer("https", etcd_context(pki))["count"]) > 0  # the API server's certificate reads the store
    assert (pki / "etcd").stat().st_mode & 0o777 == 0o700 and pki.stat().st_mode & 0o777 == 0o700
    assert {f.name: f.stat().st_mode & 0o777 for f in (pki / "etcd").iterdir()} == {
        f"{name}.{ext}": 0o600 for name in ("ca", "server", "client") for ext in ("crt", "key")}


def test_admission_pod_security_and_resource_quota(cluster):
    kubectl(cluster, "create", "namespace", "locked")
    kubectl(cluster, "label", "namespace", "locked", "pod-security.kubernetes.io/enforce=restricted")
    privileged = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "root", "namespace": "locked"},
                  "spec": {"containers": [{"name": "c", "image": "busybox:1.36",
                                           "securityContext": {"privileged": True}}]}}
    refused = kubectl(cluster, "apply", "-f", "-", input=json.dumps(privileged), check=False)
    assert refused.returncode != 0 and "violates PodSecurity" in refused.stderr

    kubectl(cluster, "create", "namespace", "quota")
    kubectl(cluster, "create", "quota", "one-pod", "-n", "quota", "--hard=pods=1")
    eventually(lambda: get(cluster, "resourcequota", "one-pod", "-n", "quota").get("status", {}).get("hard"),
               "the quota's status")
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "first", "namespace": "quota"},
           "spec": {"containers": [{"name": "c", "image": "busybox:1.36"}]}}
    kubectl(cluster, "apply", "-f", "-", input=json.dumps(pod))
    pod["metadata"]["name"] = "second"
    over = kubectl(cluster, "apply", "-f", "-", input=json.dumps(pod), check=False)
    assert over.returncode != 0 and "exceeded quota" in over.stderr


def test_garbage_collector_deletes_dependents(cluster):
    kubectl(cluster, "create", "namespace", "gc")
    manifest = dict(DEPLOYMENT, metadata={"name": "gone", "namespace": "gc"})
    kubectl(cluster, "apply", "-f", "-", input=json.dumps(manifest))
    eventually(lambda: get(cluster, "replicasets", "-n", "gc")["items"], "the ReplicaSet")
    kubectl(cluster, "delete", "deployment", "gone", "-n", "gc", "--wait=false")
    eventually(lambda: not get(cluster, "replicasets", "-n", "gc")["items"]
               and not get(cluster, "pods", "-n", "gc")["items"], "the ReplicaSet and pods deleted")


def test_up_refuses_a_folder_in_use_and_down_leaves_nothing(binary, tmp_path):
    (tmp_path / "notes.txt").write_text("mine")
    with pytest.raises(LocalClusterError, match="not empty"):
        up(tmp_path, binary=binary, say=lambda m: None)
    assert (tmp_path / "notes.txt").read_text() == "mine"

    directory = tmp_path / "cluster"
    started = up(directory, binary=binary, say=lambda m: None)
    processes = dict(started.state["processes"])
    assert set(processes) == {"etcd", "apiserver", "controller-manager", "scheduler", "kwok"}
    assert all(_alive(p) for p in processes.values())
    with pytest.raises(LocalClusterError, match="is running there"):
        up(directory, binary=binary, say=lambda m: None)

    result = CliRunner().invoke(cli, ["cluster", "down", str(directory)])
    assert result.exit_code == 0, result.output
    assert not any(_alive(p) for p in processes.values())
    for p in processes.values():
        assert not Path(f"/proc/{p['pid']}").exists() or _zombie_or_other(p)
    assert not directory.exists()
    again = CliRunner().invoke(cli, ["cluster", "down", str(directory)])
    assert again.exit_code == 2 and "no local control plane here" in again.output


def _zombie_or_other(process: dict) -> bool:
    try:
        fields = Path(f"/proc/{process['pid']}/stat").read_text().rpartition(")")[2].split()
    except OSError:
        return True
    return fields[0] == "Z" or int(fields[19]) != process["start"]


def test_without_go_the_error_says_what_to_do(tmp_path, monkeypatch):
    empty = tmp_path / "bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    monkeypatch.delenv("ITBENCH_GO", raising=False)
    monkeypatch.setenv("ITBENCH_CACHE_DIR", str(tmp_path / "cache"))  # nothing built there
    for args in (["cluster", "build"], ["cluster", "up", "-o", str(tmp_path / "c")]):
        result = CliRunner().invoke(cli, args)
        assert result.exit_code == 2, result.output
        assert "Go is not installed" in result.output
        assert "Install Go 1.26 or newer" in result.output and "--kubeconfig" in result.output
        assert "Traceback" not in result.output
    assert not (tmp_path / "c").exists()


AGENT = r'''
"""A scripted agent: names the scenario's root causes, applies its first solution with the kubectl on PATH
(the one built with the control plane) and waits for the rollouts it started."""
import json, os, shlex, subprocess, sys

scenario = json.load(open(sys.argv[1]))
workspace = os.environ["ITBENCH_WORKSPACE"]
causes = scenario["root_causes"]
entities = [{"name": f"{c.get('namespace', '')}/{c['kind']}/{c['name']}", "contributing_factor": True,
             "reasoning": "scripted", "evidence": "scripted"} for c in causes]
with open(os.path.join(workspace, "diagnosis.json"), "w") as answer:
    json.dump({"entities": entities}, answer)
for step in scenario["solutions"][0]["steps"]:
    subprocess.run(step["command"], shell=True, check=True)
for c in causes:
    if c["kind"] in ("Deployment", "StatefulSet", "DaemonSet"):
        subprocess.run(["kubectl", "-n", c["namespace"], "rollout", "status", f"{c['kind'].lower()}/{c['name']}",
                        "--timeout=60s"], check=True)
'''


def test_run_local_grades_a_library_scenario_fixed_by_its_first_solution(binary, tmp_path):
    pytest.importorskip("kubernetes", reason="itbench run needs the cluster extra")
    import shlex
    import sys

    from support.compiling import SCENARIOS

    # a fault that is a plain patch (no Chaos Mesh, no Prometheus: the local cluster has neither)
    source = SCENARIOS / "sre" / "sregym-wrong-dns-policy-hotel-reservation.itb"
    compiled = CliRunner().invoke(cli, ["compile", str(source), "-o", str(tmp_path / "out")])
    assert compiled.exit_code == 0, compiled.output
    bundle = tmp_path / "out" / source.stem
    agent = tmp_path / "agent.py"
    agent.write_text(AGENT)
    command = f"{shlex.quote(sys.executable)} {shlex.quote(str(agent))} {shlex.quote(str(bundle / 'scenario.json'))}"
    result = CliRunner().invoke(cli, ["run", str(bundle), "--local", "--agent", command, "--agent-timeout", "3m",
                                      "--ready-timeout", "3m", "-o", str(tmp_path / "results")])
    assert result.exit_code == 0, result.output
    [folder] = (tmp_path / "results" / source.stem).iterdir()
    verdict = json.loads((folder / "verdict.json").read_text())
    failed = [c for c in verdict["checks"] if not c["passed"]]
    assert verdict["passed"] is True and verdict["score"] == 1.0, failed
    stdout = (folder / "agent.stdout").read_text()
    assert "deployment.apps/profile patched" in stdout  # the real kubectl, against the real server
    assert "successfully rolled out" in stdout
    state = json.loads((folder / "state.json").read_text())
    profile = next(o for o in state["resources"]["items"]
                   if o["kind"] == "Deployment" and o["metadata"]["name"] == "profile")
    assert profile["spec"]["template"]["spec"]["dnsPolicy"] == "ClusterFirst"  # the server's default, back


def test_a_component_that_fails_is_quoted_and_nothing_is_left_running(binary, tmp_path, monkeypatch):
    import socket

    from itbench_dsl.run.local import plane

    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen(1)
    real = plane._free_ports

    def ports(count):  # the API server's port is taken by someone else
        chosen = real(count)
        chosen[2] = taken.getsockname()[1]
        return chosen

    monkeypatch.setattr(plane, "_free_ports", ports)
    directory = tmp_path / "cluster"
    seen = []  # the state files up wrote: the processes it started
    write = plane._write_state
    monkeypatch.setattr(plane, "_write_state", lambda d, state: seen.append(json.loads(json.dumps(state)))
                        or write(d, state))
    try:
        with pytest.raises(LocalClusterError) as failure:
            up(directory, binary=binary, timeout=60, say=lambda m: None)
    finally:
        taken.close()
    message = str(failure.value)
    assert "apiserver exited while waiting for kube-apiserver /readyz" in message
    assert "address already in use" in message  # the end of its log
    started = seen[-1]["processes"]
    assert set(started) == {"etcd", "apiserver"}
    assert not any(_alive(p) for p in started.values())  # etcd was stopped too
    assert not directory.exists()


def test_the_build_is_keyed_by_the_sources(tmp_path, monkeypatch):
    import shutil

    import importlib

    building = importlib.import_module("itbench_dsl.run.local.build")

    copy = tmp_path / "go"
    shutil.copytree(building.GO_DIR, copy)
    monkeypatch.setattr(building, "GO_DIR", copy)
    monkeypatch.setenv("ITBENCH_CACHE_DIR", str(tmp_path / "cache"))
    first = building.binary_path()
    assert first.parent.parent == tmp_path / "cache" / "localcluster"
    assert building.binary_path() == first  # deterministic
    with open(copy / "main.go", "a") as source:
        source.write("\n// changed\n")
    assert building.binary_path() != first
    (copy / "go.sum").unlink()
    with pytest.raises(LocalClusterError, match="missing .*go.sum"):
        building.binary_path()
    assert building.versions()["k8s.io/kubernetes"].startswith("v1.")


# the objects of a bundle the local plane serves and that stay within their namespace
_COVERED_KINDS = {"Namespace", "Service", "ConfigMap", "Secret", "ServiceAccount", "Deployment", "StatefulSet",
                  "NetworkPolicy", "ResourceQuota"}


def _in_namespace(docs: list[dict], namespace: str) -> list[dict]:
    out = []
    for obj in docs:
        if obj["kind"] not in _COVERED_KINDS:
            continue
        obj = json.loads(json.dumps(obj))
        if obj["kind"] == "Namespace":
            obj["metadata"]["name"] = namespace
        else:
            obj["metadata"]["namespace"] = namespace
        out.append(obj)
    return out


@pytest.mark.parametrize("scenario", ["sregym-wrong-dns-policy-hotel-reservation", "sregym-network-policy-block"])
def test_sorting_by_the_servers_write_records_does_not_single_out_the_faults_object(cluster, scenario):
    """Deploy and inject a bundle as a run does (server-side apply, the run's field manager) and read what the
    API server recorded of each write: the fault's object is never the one newest, last written or sole
    object of its kind with a later generation (backends/cover.py: cover writes, decoys created with it)."""
    import yaml

    from itbench_dsl.backends.faults import plan
    from itbench_dsl.run.lifecycle import FIELD_MANAGER
    from support.compiling import SCENARIOS, compile_ok

    path = SCENARIOS / "sre" / f"{scenario}.itb"
    result = compile_ok(path.read_bytes(), str(path))
    namespace = "cover-" + str(abs(hash(scenario)) % 10000)

    def docs(name: str) -> list[dict]:
        return _in_namespace([d for d in yaml.safe_load_all(result.files[name]) if d], namespace)

    def apply(objects: list[dict]):
        kubectl(cluster, "apply", "--server-side", "--force-conflicts", f"--field-manager={FIELD_MANAGER}", "-f", "-",
                input="\n".join(json.dumps(o) for o in objects))

    apply(docs("manifests/topology.yaml"))
    time.sleep(1.2)  # the server records times to the second: every write from here on is in a later one
    mark = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    apply(docs("inject/apply.yaml"))
    faults = [o for o in plan(result.scenario)[0] if o["kind"] in _COVERED_KINDS - {"Namespace"}]
    assert faults
    try:
        for fault in faults:
            items = get(cluster, fault["kind"].lower(), "-n", namespace, "--show-managed-fields")["items"]
            name = fault["metadata"]["name"]
            written = {o["metadata"]["name"]: max(m["time"] for m in o["metadata"]["managedFields"]
                                                  if m["manager"] == FIELD_MANAGER) for o in items}
            # created or written at the injection: the fault's object among others of its kind
            created = {o["metadata"]["name"] for o in items if o["metadata"]["creationTimestamp"] >= mark}
            late = {n for n, t in written.items() if t >= mark}
            assert name in late and len(late) > 1, f"the injection's writes single out {name}"
            assert name not in created or len(created) > 1, f"the injection creates {name} alone"
            # the newest resourceVersion is one of these writes, and not the fault's alone by construction
            order = sorted(items, key=lambda o: int(o["metadata"]["resourceVersion"]))
            assert {o["metadata"]["name"] for o in order[-len(late):]} == late
            generations = {o["metadata"]["name"]: o["metadata"].get("generation", 0) for o in items}
            assert sum(g == generations[name] for g in generations.values()) > 1, f"{name}'s generation alone moved"
    finally:
        kubectl(cluster, "delete", "namespace", namespace, "--wait=false", check=False)
