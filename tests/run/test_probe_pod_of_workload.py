"""The grader's probe (and a fault's exec steps) run only in a pod that is the workload's own: an agent's pod
that carries the workload's labels, names the workload's current ReplicaSet as its controller (its name and uid
are readable in any pod's ownerReferences) and sorts first by name, but runs another program, answers nothing
the evaluator reads."""

from __future__ import annotations

import copy
import json
import sys

import pytest

pytest.importorskip("kubernetes")

from support.kube_server import KubeServer  # noqa: E402
from test_run_exec import SCENARIO, Mongo, options  # noqa: E402
from test_run_plan import write_bundle  # noqa: E402

from itbench_dsl.run import lifecycle  # noqa: E402
from itbench_dsl.run.runner import Run  # noqa: E402
from itbench_dsl.runtime.state import workload_pod_refusal  # noqa: E402

# The agent copies the workload's pod, ReplicaSet owner reference included, under a name that sorts first, and
# runs a `mongo` of its own that prints the healthy roles; the database's user keeps its role revoked.
DECOY_AGENT = r"""
import json, os
from kubernetes import client, config
api = client.CoreV1Api(config.new_client_from_config(os.environ["KUBECONFIG"]))
pods = json.loads(api.list_namespaced_pod("hotel-reservation", label_selector="io.kompose.service=mongodb-geo",
                                          _preload_content=False).data)["items"]
real = pods[0]
mine = {"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "a-geo", "namespace": "hotel-reservation", "labels": real["metadata"]["labels"],
                     "ownerReferences": real["metadata"]["ownerReferences"]},
        "spec": json.loads(json.dumps(real["spec"])), "status": {"phase": "Running",  # ready, as the real one
                                                               "conditions": [{"type": "Ready", "status": "True"}]}}
for c in mine["spec"]["containers"]:
    c["command"] = ["sh", "-c", "printf '#!/bin/sh\\necho healthy' > /usr/local/bin/mongo; exec mongod --auth"]
api.create_namespaced_pod("hotel-reservation", mine)
print("decoy")
"""


class FakedMongo(Mongo):
    """The agent's pod answers the probe with the healthy roles, whatever the database holds."""

    def __call__(self, server, namespace, pod, container, command):
        if pod == "a-geo" and "getUser" in command[-1]:
            return 0, json.dumps(self.HEALTHY, separators=(",", ":")) + "\n", ""
        return super().__call__(server, namespace, pod, container, command)


@pytest.fixture
def server():
    with KubeServer(ready_delay=0.02, delete_delay=0.02) as s:
        s.mongo = s.exec_result = FakedMongo()
        yield s


@pytest.fixture(scope="module")
def bundle(tmp_path_factory):
    return write_bundle(tmp_path_factory.mktemp("bundles"), SCENARIO)


def test_the_probe_runs_in_the_workloads_own_pod_not_the_agents(server, bundle, tmp_path):
    script = tmp_path / "agent.py"
    script.write_text(DECOY_AGENT)
    outcome = Run(lifecycle.load_bundle(bundle), options(server, tmp_path, f"{sys.executable} {script}"),
                  progress=None).execute()
    assert outcome.status == "graded", outcome.error
    assert (outcome.folder / "agent.stdout").read_text().strip() == "decoy"
    probed = [pod for _, pod, _, command in server.execs if "getUser" in command[-1]]
    assert probed and "a-geo" not in probed
    state = json.loads((outcome.folder / "state.json").read_text())
    assert state["probes"]["geo-roles"]["pod"] != "a-geo"
    mitigate = json.loads((outcome.folder / "verdict.json").read_text())["tasks"]["mitigate"]
    assert not mitigate["passed"]


def deployment_and_pod():
    template = {"metadata": {"labels": {"app": "db"}},
                "spec": {"containers": [{"name": "db", "image": "mongo:4.4.6", "args": ["--auth"],
                                         "volumeMounts": [{"name": "data", "mountPath": "/data/db"}]}],
                         "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": "db"}}]}}
    dep = {"apiVersion": "apps/v1", "kind": "Deployment",
           "metadata": {"name": "db", "namespace": "ns", "uid": "d1",
                        "annotations": {"deployment.kubernetes.io/revision": "2"}},
           "spec": {"selector": {"matchLabels": {"app": "db"}}, "template": template}}
    rs = {"apiVersion": "apps/v1", "kind": "ReplicaSet",
          "metadata": {"name": "db-abc12", "namespace": "ns", "uid": "r1",
                       "annotations": {"deployment.kubernetes.io/revision": "2"},
                       "ownerReferences": [{"kind": "Deployment", "name": "db", "uid": "d1", "controller": True}]}}
    pod_spec = copy.deepcopy(template["spec"])
    pod_spec["containers"][0]["volumeMounts"].append(
        {"name": "kube-api-access-x1", "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount"})
    pod_spec["volumes"].append({"name": "kube-api-access-x1", "projected": {}})
    pod_spec["containers"].append({"name": "istio-proxy", "image": "istio/proxyv2"})  # an injected sidecar
    pod = {"apiVersion": "v1", "kind": "Pod",
           "metadata": {"name": "db-abc12-x9z7q", "namespace": "ns", "labels": {"app": "db", "pod-template-hash": "abc12"},
                        "ownerReferences": [{"kind": "ReplicaSet", "name": "db-abc12", "uid": "r1", "controller": True}]},
           "spec": pod_spec}
    return dep, rs, pod


def test_the_workloads_own_pod_is_accepted():
    dep, rs, pod = deployment_and_pod()
    assert workload_pod_refusal(dep, pod, [rs]) is None
    assert workload_pod_refusal(dep, pod) is None


@pytest.mark.parametrize("change, why", [
    (lambda d, r, p: p["metadata"].update(ownerReferences=[]), "no controller"),
    (lambda d, r, p: p["metadata"].update(name="a-db"), "its name"),
    (lambda d, r, p: p["metadata"]["ownerReferences"][0].update(uid="other"), "another uid"),
    (lambda d, r, p: r["metadata"]["ownerReferences"][0].update(uid="other"), "not controlled by"),
    (lambda d, r, p: r["metadata"]["annotations"].update({"deployment.kubernetes.io/revision": "1"}), "current"),
    (lambda d, r, p: p["spec"]["containers"][0].update(command=["sh", "-c", "fake"]), "command"),
    (lambda d, r, p: p["spec"]["containers"][0].update(image="mongo:evil"), "image"),
    (lambda d, r, p: p["spec"]["containers"][0]["volumeMounts"].append({"name": "x", "mountPath": "/usr/bin"}),
     "volume mounts"),
    (lambda d, r, p: p["spec"]["volumes"][0].update(persistentVolumeClaim={"claimName": "mine"}), "volume data"),
    (lambda d, r, p: p["spec"]["containers"][1].update(volumeMounts=[{"name": "data", "mountPath": "/d"}]),
     "mounts the template's volumes"),
    (lambda d, r, p: p["spec"].update(shareProcessNamespace=True), "process namespace"),
])
def test_a_pod_that_only_claims_the_workload_is_refused(change, why):
    dep, rs, pod = deployment_and_pod()
    change(dep, rs, pod)
    refusal = workload_pod_refusal(dep, pod, [rs])
    assert refusal is not None and why in refusal, refusal
