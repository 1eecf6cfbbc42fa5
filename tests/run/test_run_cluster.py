"""`itbench run` and `itbench snapshot` through the real kubernetes client, against tests/support/kube_server.py: what needs
the server's stand-ins (Istio's kinds, a Prometheus, a Kyverno that reports, pods/exec with scripted results) or
faults of the server itself (a failing request, watches held open, malformed answers, a 503 discovery). The runs
that need none of these are in tests/run/test_run_local.py, on the real control plane.

Each test starts its own loopback API server (with a fake Prometheus whose alerts fire while the
scenario's AuthorizationPolicy exists), runs a compiled bundle and checks the results and that the
server's store is back to what it held before: nothing the run created is left behind.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("kubernetes")

from support.kube_server import KubeServer  # noqa: E402
from support.compiling import SCENARIOS, compile_ok  # noqa: E402
from test_run_plan import write_bundle  # noqa: E402

from itbench_dsl.run import lifecycle  # noqa: E402
from itbench_dsl.run.runner import Run, RunOptions  # noqa: E402

SCENARIO = "bookinfo-gateway-denies-get"
POLICY = ("AuthorizationPolicy", "book-info", "reviews-v2-shared")

# An agent that writes its diagnosis and deletes the policy with its own token (no kubectl needed).
FIXING_AGENT = r"""
import json, os, urllib.request, yaml
conf = yaml.safe_load(open(os.environ["KUBECONFIG"]))
server, token = conf["clusters"][0]["cluster"]["server"], conf["users"][0]["user"]["token"]
assert os.environ["ITBENCH_WORKSPACE"] in open("prompt.md").read()
req = urllib.request.Request(server + "/apis/security.istio.io/v1/namespaces/book-info/authorizationpolicies/"
                             "reviews-v2-shared", method="DELETE", headers={"Authorization": "Bearer " + token})
urllib.request.urlopen(req).read()
json.dump({"entities": [{"name": "book-info/AuthorizationPolicy/reviews-v2-shared", "contributing_factor": True}],
           "propagations": [], "alerts_explained": []}, open("diagnosis.json", "w"))
print("fixed")
"""


@pytest.fixture(scope="module")
def bundle(tmp_path_factory) -> Path:
    return write_bundle(tmp_path_factory.mktemp("bundles"), SCENARIO)


@pytest.fixture
def server():
    with KubeServer(ready_delay=0.02, delete_delay=0.02) as s:
        s.alerts = lambda srv: (["NoRequestsOpened", "NoRequestsReceived"] if srv.find(*POLICY) else [])
        s.baseline = s.snapshot()
        yield s


def options(server, tmp_path, agent, **extra) -> RunOptions:
    extra.setdefault("mitigation_window", 0.0)  # capture at once (the window's polling: tests/run/test_run_local.py)
    extra = {"ready_timeout": 10, "alert_timeout": 10, **extra}
    return RunOptions(kubeconfig=server.kubeconfig(tmp_path / "kubeconfig.yaml"), agent=agent,
                      results=tmp_path / "results", prometheus=server.prometheus, alert_poll=0.02,
                      kill_grace=1, **extra)


def fixing_agent(tmp_path: Path) -> str:
    script = tmp_path / "agent.py"
    script.write_text(FIXING_AGENT)
    return f"{sys.executable} {script}"


def timeline(folder: Path) -> list[dict]:
    return [json.loads(line) for line in (folder / "timeline.jsonl").read_text().splitlines()]


def settle(server) -> dict:
    """The store once the namespace deletions it scheduled are done."""
    deadline = time.monotonic() + 5
    while server.snapshot().keys() != server.baseline.keys() and time.monotonic() < deadline:
        time.sleep(0.02)
    return server.snapshot()


def test_a_run_deploys_injects_hands_over_grades_and_leaves_nothing(server, bundle, tmp_path):
    agent = fixing_agent(tmp_path)
    outcome = Run(lifecycle.load_bundle(bundle), options(server, tmp_path, agent), progress=None).execute()
    assert outcome.status == "graded", outcome.error
    folder = outcome.folder
    for name in ("verdict.json", "state.json", "timeline.jsonl", "agent.stdout", "agent.stderr", "timings.json",
                 "run.json", "workspace/prompt.md", "workspace/diagnosis.json"):
        assert (folder / name).is_file(), name
    assert not (folder / "workspace" / "kubeconfig.yaml").exists(), "the agent's token outlived its run"
    assert (folder / "agent.stdout").read_text().strip() == "fixed"
    verdict = json.loads((folder / "verdict.json").read_text())
    assert set(verdict["tasks"]) == {"diagnose", "mitigate"}
    assert verdict["tasks"]["diagnose"]["checks"][0]["detail"].startswith("1 named")  # the agent's answer was read
    assert all(c["passed"] for c in verdict["tasks"]["mitigate"]["checks"] if "alert" in c["id"])
    # the agent acted with the token minted for its ServiceAccount, not the caller's
    agent_tokens = {t for m, p, t in server.requests if m == "DELETE" and "authorizationpolicies" in p
                    and t != "admin-token"}  # the caller's is the revert's
    assert len(agent_tokens) == 1 and server.tokens[agent_tokens.pop()] == "book-info/itbench-agent"
    # every phase ran, in order; the revert found the policy already gone
    events = timeline(folder)
    done = [e["phase"] for e in events if e["event"] == "done" and e["phase"] != "run"]
    assert done == [p for p in lifecycle.PHASE_NAMES], done
    assert any("already gone" in e.get("step", "") for e in events if e["phase"] == "revert")
    state = json.loads((folder / "state.json").read_text())
    requires = lifecycle.load_bundle(bundle).requires
    assert state["captured"] == requires["captured"] and "alerts" in state
    assert all(i.get("kind") and i.get("apiVersion") for i in state["resources"]["items"])
    assert settle(server) == server.baseline
    # itbench score reads the run folders: one verdict per task, nothing else
    from click.testing import CliRunner

    from itbench_dsl.cli import cli

    result = CliRunner().invoke(cli, ["score", str(tmp_path / "results"), "--format", "json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert {(s["scenario"], s["task"]) for s in report["scenarios"]} == {(SCENARIO, "diagnose"), (SCENARIO, "mitigate")}
    # a second run is a new trial; a finished run asked again does nothing
    again = Run(lifecycle.load_bundle(bundle), options(server, tmp_path, agent, run_id=outcome.run_id),
                progress=None).execute()
    assert again.status == "complete" and again.verdict == verdict


def test_apply_failing_half_way_cleans_up_what_was_deployed(server, bundle, tmp_path):
    server.fail[("PATCH", "Deployment", "reviews-v2")] = 500
    outcome = Run(lifecycle.load_bundle(bundle), options(server, tmp_path, "true"), progress=None).execute()
    assert outcome.status == "failed" and "injected failure" in outcome.error
    assert not (outcome.folder / "verdict.json").exists()
    events = timeline(outcome.folder)
    assert any(e["phase"] == "deploy" and e["event"] == "failed" for e in events)
    assert any(e["phase"] == "undeploy" and e["event"] == "done" for e in events)
    assert not any(e["phase"] == "inject" for e in events)
    assert settle(server) == server.baseline


def test_preflight_lists_everything_missing(bundle, tmp_path):
    with KubeServer(groups={"apps", "rbac.authorization.k8s.io", "monitoring.coreos.com"}, addons=False) as server:
        server.deny.add(("create", "serviceaccounts/token"))
        before = server.snapshot()
        outcome = Run(lifecycle.load_bundle(bundle), options(server, tmp_path, "true"), progress=None).execute()
        assert outcome.status == "failed"
        for needed in ("security.istio.io/v1 AuthorizationPolicy is not served", "Istio's controller is not running",
                       "may not create serviceaccounts/token in book-info"):
            assert needed in outcome.error
        assert server.snapshot() == before


def test_snapshot_captures_what_the_evaluator_reads(server, bundle, tmp_path):
    from click.testing import CliRunner

    from itbench_dsl.cli import cli
    from itbench_dsl.run.client import Cluster

    b = lifecycle.load_bundle(bundle)
    kubeconfig = server.kubeconfig(tmp_path / "kubeconfig.yaml")
    with Cluster(kubeconfig) as cluster:
        for obj in (*b.topology, *b.inject_apply):
            cluster.apply(obj)
    out = tmp_path / "state.json"
    result = CliRunner().invoke(cli, ["snapshot", str(bundle), "--kubeconfig", kubeconfig, "--prometheus",
                                      server.prometheus, "-o", str(out)])
    assert result.exit_code == 0, result.output
    state = json.loads(out.read_text())
    assert state["captured"] == b.requires["captured"]
    kinds = {(i["metadata"].get("namespace", ""), i["kind"]) for i in state["resources"]["items"]}
    assert kinds <= {tuple(c.split("/", 1)) for c in state["captured"]}
    assert ("book-info", "Deployment") in kinds and ("book-info", "Pod") in kinds
    assert [a["labels"]["alertname"] for a in state["alerts"]["data"]["alerts"]] == ["NoRequestsOpened",
                                                                                      "NoRequestsReceived"]
    # the bundle's own evaluator accepts the state and sees the fault
    proc = subprocess.run([sys.executable, str(bundle / "evaluator.py"), "--task", "mitigate", "--state", str(out)],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["passed"] is False
    result = CliRunner().invoke(cli, ["snapshot", str(bundle), "--kubeconfig", kubeconfig, "-o", str(out)])
    assert result.exit_code == 2 and "give --prometheus URL" in result.output


# An agent that detects the incident when it starts, names the policy and deletes it.
DETECTING_AGENT = r"""
import json, sys, time
noticed = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() + float(sys.argv[1])))
json.dump({"anomaly": True, "noticed_at": noticed}, open("detection.json", "w"))
""" + FIXING_AGENT


@pytest.mark.parametrize("offset, passed", [(1, True), (-3600, False)])
def test_a_run_times_detection_from_its_own_injection(server, tmp_path, offset, passed):
    """`detect` is graded against the moment the run injected the fault (the timeline's `injected_at`):
    a detection made during the agent's turn passes, one dated before the injection fails; neither is
    refused for want of an injection time, also when a resumed run only grades."""
    source = (SCENARIOS / "sre" / f"{SCENARIO}.itb").read_text()
    source = source.replace("  domain sre\n", "  domain sre\n  tasks detect within 10m, localize, mitigate\n", 1)
    result = compile_ok(source.encode(), f"{SCENARIO}.itb")
    root = tmp_path / "bundle"
    for name, data in result.files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_bytes(data)
    script = tmp_path / "agent.py"
    script.write_text(DETECTING_AGENT.replace('"propagations": [], "alerts_explained": []', ""))
    agent = f"{sys.executable} {script} {offset}"
    outcome = Run(lifecycle.load_bundle(root), options(server, tmp_path, agent, run_id="d1"), progress=None).execute()
    assert outcome.status == "graded", outcome.error
    injected = [e["injected_at"] for e in timeline(outcome.folder) if e.get("injected_at")]
    assert len(injected) == 1
    detect = outcome.verdict["tasks"]["detect"]
    assert detect["passed"] is passed, detect["checks"]
    assert not passed or detect["metrics"]["time_to_detect_seconds"] >= 0
    # the run saw the answer appear during the agent's turn, on its own clock, and gave the evaluator that time
    events = timeline(outcome.folder)
    seen = [e["answered_at"] for e in events if e.get("answered_at")]
    started = next(e["t"] for e in events if e.get("action") == "agent")
    ended = next(e["t"] for e in events if e.get("action") == "agent-exit")
    assert len(seen) == 1 and started <= seen[0] <= ended
    # resumed after the capture: grading alone reads the injection time from the timeline
    (outcome.folder / "verdict.json").unlink()
    events = [line for line in (outcome.folder / "timeline.jsonl").read_text().splitlines()
              if '"phase": "evaluate"' not in line]
    (outcome.folder / "timeline.jsonl").write_text("\n".join(events) + "\n")
    again = Run(lifecycle.load_bundle(root), options(server, tmp_path, agent, run_id="d1"), progress=None).execute()
    assert again.status == "graded" and again.verdict["tasks"]["detect"] == detect


# ---- a CISO run: the agent deploys a Kyverno policy, Kyverno (a stand-in here) reports on it ----------------

CISO = "cis-k8s-5-2-2-privileged-kyverno"

# An agent that deploys its ClusterPolicy with its own token and saves it, as the prompt asks.
POLICY_AGENT = r"""
import json, os, sys, urllib.request, yaml
conf = yaml.safe_load(open(os.environ["KUBECONFIG"]))
server, token = conf["clusters"][0]["cluster"]["server"], conf["users"][0]["user"]["token"]
policy = json.loads(sys.argv[1])
req = urllib.request.Request(server + "/apis/kyverno.io/v1/clusterpolicies", data=json.dumps(policy).encode(),
                             method="POST", headers={"Authorization": "Bearer " + token,
                                                     "Content-Type": "application/json"})
urllib.request.urlopen(req).read()
yaml.safe_dump(policy, open("policy.yaml", "w"))
"""


def _kyverno_stand_in(server, event: str, obj: dict) -> None:
    """What Kyverno does, a moment after a ClusterPolicy appears: a PolicyReport per namespace with the
    policy's verdict on each Deployment (our own matcher's); the reports go with the policy."""
    from itbench_dsl.runtime.kyverno.policy import evaluate_policy

    if obj.get("kind") != "ClusterPolicy":
        return
    name = obj["metadata"]["name"]
    if event == "remove":
        for key in [k for k, o in server.objects.items() if o.get("kind") == "PolicyReport"
                    and (o["metadata"].get("labels") or {}).get("policy") == name]:
            server._remove(key)
        return

    def report() -> None:
        results = {}
        for o in list(server.objects.values()):
            if o.get("kind") != "Deployment" or o["metadata"].get("namespace") != "ciso-target":
                continue
            for r in evaluate_policy(obj, o):
                if r.matched:
                    results.setdefault(o["metadata"]["namespace"], []).append({
                        "policy": name, "rule": r.rule, "result": r.status, "resources": [{
                            "apiVersion": o["apiVersion"], "kind": o["kind"], "namespace": o["metadata"]["namespace"],
                            "name": o["metadata"]["name"]}]})
        for namespace, found in results.items():
            server._put(server._new("wgpolicyk8s.io", "v1alpha2", "PolicyReport", namespace, f"polr-{name}",
                                    {"results": found}, labels={"policy": name}))

    server._later(0.1, report)


BY_NAME = {"apiVersion": "kyverno.io/v1", "kind": "ClusterPolicy", "metadata": {"name": "by-name"},
           "spec": {"validationFailureAction": "Audit", "background": True, "rules": [{
               "name": "r", "match": {"any": [{"resources": {"kinds": ["Deployment"], "names": ["privileged-b"]}}]},
               "validate": {"message": "m", "deny": {}}}]}}


@pytest.mark.parametrize("policy, passed, failing", [
    ("right", True, None), ("fails-everything", False, None),
    ("by-name", False, "ciso.general"),  # the policy read back from the cluster, judged on twins of the gap
    ("enforce-override", False, "ciso.contract"),  # the live capture holds the policy: its contract is checked
    ("others-flag-the-gap", False, "ciso.gap.ciso-target/Deployment/privileged-b"),
])
def test_a_ciso_run_grades_the_agents_policy_from_kyvernos_reports(tmp_path, policy, passed, failing):
    """The agent deploys a ClusterPolicy; the run waits for Kyverno's reports on every graded object, grades
    them as the prompt says, and removes the agent's policy (and Kyverno its reports) at the end. Only the
    agent's own policy is graded: a policy there before it that flags the gap does not count."""
    from runtime.test_evaluator import ALWAYS_FAIL, NO_PRIVILEGED

    root = write_bundle(tmp_path / "bundles", CISO, domain="ciso")
    script = tmp_path / "agent.py"
    script.write_text(POLICY_AGENT)
    audit_fail = dict(ALWAYS_FAIL, spec=dict(ALWAYS_FAIL["spec"], validationFailureAction="Audit", background=True))
    allow_all = {"apiVersion": "kyverno.io/v1", "kind": "ClusterPolicy", "metadata": {"name": "allow-all"},
                 "spec": {"validationFailureAction": "Audit", "background": True, "rules": [{
                     "name": "r", "match": {"any": [{"resources": {"kinds": ["Deployment"]}}]},
                     "validate": {"message": "m", "pattern": {"metadata": {"name": "?*"}}}}]}}
    chosen = {"right": NO_PRIVILEGED, "fails-everything": audit_fail, "by-name": BY_NAME,
              "enforce-override": dict(NO_PRIVILEGED, spec=dict(NO_PRIVILEGED["spec"], validationFailureActionOverrides=[
                  {"action": "Enforce", "namespaces": ["ciso-target"]}])),
              "others-flag-the-gap": allow_all}[policy]
    agent = f"{sys.executable} {script} '{json.dumps(chosen)}'"
    with KubeServer(ready_delay=0.02, delete_delay=0.02) as server:
        server.on_change = _kyverno_stand_in
        if policy == "others-flag-the-gap":  # another tenant's policy, there before the agent, flags the gap
            with server.lock:
                server._put(server._new("kyverno.io", "v1", "ClusterPolicy", None, "someone-elses",
                                        {"spec": NO_PRIVILEGED["spec"]}))
            time.sleep(0.5)  # its reports, as Kyverno writes them a moment later
        server.baseline = server.snapshot()
        outcome = Run(lifecycle.load_bundle(root), options(server, tmp_path, agent, report_timeout=10),
                      progress=None).execute()
        assert outcome.status == "graded", outcome.error
        assert outcome.verdict["passed"] is passed, outcome.verdict["checks"]
        if failing:
            assert failing in [c["id"] for c in outcome.verdict["checks"] if not c["passed"]], outcome.verdict["checks"]
        state = json.loads((outcome.folder / "state.json").read_text())
        assert state["policyReports"], "the run waited for Kyverno's reports"
        assert state["gradedPolicies"] == [chosen["metadata"]["name"]]
        assert chosen["metadata"]["name"] in {o["metadata"]["name"] for o in state["resources"]["items"]
                                              if o["kind"] == "ClusterPolicy"}
        assert (outcome.folder / "workspace" / "policy.yaml").is_file()
        events = timeline(outcome.folder)
        assert any(e.get("action") == "policies-removed" for e in events)
        assert settle(server) == server.baseline  # the agent's policy and its reports are gone with the run


def test_a_rego_or_ansible_ciso_bundle_is_refused_with_what_to_do(tmp_path):
    root = write_bundle(tmp_path / "bundles", "rhel9-auditd-enabled-ansible-opa", domain="ciso")
    with pytest.raises(lifecycle.BundleError, match="itbench evaluate BUNDLE --artifact"):
        lifecycle.load_bundle(root)


def test_a_run_lets_the_fix_run_and_dates_it_in_the_state(server, bundle, tmp_path):
    """Mitigated means healthy for a while: the run waits --stable-for after the agent, then captures the state
    with `fixed_at`, the moment the agent's process ended, which the evaluator dates restarts against."""
    from itbench_dsl.runtime.state import rfc3339

    outcome = Run(lifecycle.load_bundle(bundle), options(server, tmp_path, fixing_agent(tmp_path), stable_for=0.05),
                  progress=None).execute()
    assert outcome.status == "graded", outcome.error
    state = json.loads((outcome.folder / "state.json").read_text())
    fixed = rfc3339(state["fixed_at"])
    events = timeline(outcome.folder)
    agent_exit = next(e for e in events if e.get("action") == "agent-exit")
    waited = next(e for e in events if e.get("action") == "stable-for")
    # dated when the process had ended, just before the timeline's agent-exit line is written
    assert fixed is not None and rfc3339(agent_exit["t"]) - 1.0 <= fixed <= rfc3339(waited["t"])
    captured = [e for e in events if e.get("action") == "capture"]
    assert captured and events.index(waited) < events.index(captured[0])
    # the workloads observed while the fix ran, each capture dated, none before the fix
    observations = state["observations"]
    assert observations and all(fixed <= rfc3339(o["at"]) for o in observations)
    assert all(o["resources"]["items"] and {i["kind"] for i in o["resources"]["items"]} <= {"Deployment", "StatefulSet",
                                                                                          "DaemonSet", "Pod"}
               for o in observations)
    verdict = json.loads((outcome.folder / "verdict.json").read_text())
    assert verdict["tasks"]["mitigate"]["passed"], verdict["tasks"]["mitigate"]["checks"]


def test_the_run_grades_the_diagnosis_with_the_captured_state(tmp_path):
    """A pod named like the root cause's pods that the cluster does not hold names nothing: the run's
    grading gives the evaluator the state it captured."""
    from itbench_dsl.analysis import states
    from itbench_dsl.run.runner import grade
    from itbench_dsl.compiler import compile_source
    from itbench_dsl.diagnostics import Diagnostics

    name = "otel-checkout-nonexistent-image"
    root = write_bundle(tmp_path, name)
    scenario = compile_source((SCENARIOS / "sre" / f"{name}.itb").read_bytes(), name, Diagnostics()).scenario
    faulty = states.derive(scenario)["faulty"]
    (tmp_path / "state.json").write_text(json.dumps(faulty))
    bundle_ = lifecycle.load_bundle(root)
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    answer = workspace / "diagnosis.json"
    real = states.perfect_answer(scenario, faulty)
    answer.write_text(json.dumps(real))
    verdict = grade(bundle_, tmp_path / "state.json", answer)
    diagnose = verdict["tasks"]["diagnose"] if "tasks" in verdict else verdict
    assert diagnose["passed"], diagnose["checks"]
    ghost = {"entities": [{"name": "otel-demo/Pod/checkout-5f7d9c8b6d-zzzzz", "contributing_factor": True}],
             "propagations": real["propagations"]}
    answer.write_text(json.dumps(ghost))
    verdict = grade(bundle_, tmp_path / "state.json", answer)
    diagnose = verdict["tasks"]["diagnose"] if "tasks" in verdict else verdict
    assert not diagnose["passed"] and diagnose["metrics"]["root_cause_entity_recall"] == 0.0


def test_a_detection_written_late_and_backdated_fails(tmp_path):
    """The answer's time as the run saw it bounds the self-reported `noticed_at`: written two hours after the
    injection, a detection that claims the first minute is late."""
    from itbench_dsl.run.runner import grade

    source = (SCENARIOS / "sre" / f"{SCENARIO}.itb").read_text()
    source = source.replace("  domain sre\n", "  domain sre\n  tasks detect within 10m, localize, mitigate\n", 1)
    result = compile_ok(source.encode(), f"{SCENARIO}.itb")
    root = tmp_path / "bundle"
    for name, data in result.files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_bytes(data)
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    (workspace / "detection.json").write_text(json.dumps({"anomaly": True, "noticed_at": "2026-01-01T00:01:00Z"}))
    from itbench_dsl.analysis import states

    (tmp_path / "state.json").write_text(json.dumps(states.derive(result.scenario)["faulty"]))
    bundle_ = lifecycle.load_bundle(root)

    def detect(answered_at):
        verdict = grade(bundle_, tmp_path / "state.json", workspace / "diagnosis.json",
                        injected_at="2026-01-01T00:00:00Z", answered_at=answered_at)
        return verdict["tasks"]["detect"]

    assert detect(None)["passed"]  # without the harness's record, the claim is all there is
    assert detect("2026-01-01T00:02:00Z")["passed"]
    late = detect("2026-01-01T02:00:00Z")
    assert not late["passed"] and "appeared 7200 s after the injection" in str(late["checks"])


PLACEHOLDER_AGENT = r"""
import json, time
json.dump({}, open("detection.json", "w"))  # a placeholder first
time.sleep(1.0)
written = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime())
json.dump({"anomaly": True, "noticed_at": "2000-01-01T00:00:00Z"}, open("detection.json", "w"))
open("written.txt", "w").write(written)
"""


def test_the_run_times_the_answer_as_graded_not_a_placeholder(server, tmp_path):
    """The answer's time is when its final content appeared: a placeholder written first does not date it."""
    source = (SCENARIOS / "sre" / f"{SCENARIO}.itb").read_text()
    source = source.replace("  domain sre\n", "  domain sre\n  tasks detect within 10m, localize, mitigate\n", 1)
    result = compile_ok(source.encode(), f"{SCENARIO}.itb")
    root = tmp_path / "bundle"
    for name, data in result.files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_bytes(data)
    script = tmp_path / "agent.py"
    script.write_text(PLACEHOLDER_AGENT)
    outcome = Run(lifecycle.load_bundle(root), options(server, tmp_path, f"{sys.executable} {script}"),
                  progress=None).execute()
    assert outcome.status == "graded", outcome.error
    seen = [e["answered_at"] for e in timeline(outcome.folder) if e.get("answered_at")]
    written = (outcome.folder / "workspace" / "written.txt").read_text()
    assert len(seen) == 1 and seen[0][:19] >= written, (seen, written)



HOSTILE_FILES_AGENT = r"""
import json, os, socket, sys
os.mkfifo("detection.json")  # opening it would wait for a writer forever
sock = socket.socket(socket.AF_UNIX)
sock.bind("agent.sock")  # a socket left in the folder: copying it would fail
json.dump({"entities": [{"name": "book-info/AuthorizationPolicy/bookinfo-gateway-deny", "contributing_factor": True}],
           "propagations": []}, open(sys.argv[1], "w"))
os.symlink(sys.argv[1], "diagnosis.json")  # the right answer, but outside the agent's folder
"""


def test_fifos_sockets_and_links_out_of_the_folder_neither_hang_crash_nor_pass(server, tmp_path):
    """A FIFO detection answer is refused (never waited on), a socket in the folder is skipped and noted, a link
    to an answer outside the agent's folder is refused with the reason, whatever the file it leads to says."""
    import signal

    source = (SCENARIOS / "sre" / f"{SCENARIO}.itb").read_text()
    source = source.replace("  domain sre\n", "  domain sre\n  tasks detect within 10m, localize, mitigate\n", 1)
    result = compile_ok(source.encode(), f"{SCENARIO}.itb")
    root = tmp_path / "bundle"
    for name, data in result.files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_bytes(data)
    script, outside = tmp_path / "agent.py", tmp_path / "outside.json"
    script.write_text(HOSTILE_FILES_AGENT)
    run = Run(lifecycle.load_bundle(root), options(server, tmp_path, f"{sys.executable} {script} {outside}",
                                                   agent_timeout=30), progress=None)
    def hung(signum, frame):
        raise AssertionError("the run hung on the agent's files")

    previous = signal.signal(signal.SIGALRM, hung)
    signal.alarm(120)
    try:
        outcome = run.execute()
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    assert outcome.status == "graded", outcome.error
    tasks = outcome.verdict["tasks"]
    assert not tasks["detect"]["passed"] and "named pipe" in str(tasks["detect"]["checks"])
    assert not tasks["localize"]["passed"] and "outside the agent's folder" in str(tasks["localize"]["checks"])
    events = timeline(outcome.folder)
    skipped = [e for e in events if e.get("action") == "workspace-skipped"]
    assert skipped and {s["path"] for s in skipped[0]["skipped"]} >= {"agent.sock", "detection.json"}
    assert os.path.islink(outcome.folder / "workspace" / "diagnosis.json")  # kept for the record, as a link
    assert sorted(os.listdir(outcome.folder / "answers")) == []
    assert settle(server) == server.baseline

# ---- faults of the server itself (the rest of the lifecycle runs on the real control plane: test_run_local.py) --


def test_the_ready_wait_is_bounded_by_the_client_when_the_server_holds_its_watches(server, bundle, tmp_path):
    server.watch_holds = True  # a server that ignores timeoutSeconds and keeps every watch open, silent
    server.unready = lambda pod: True  # and pods that never turn Ready
    started = time.monotonic()
    outcome = Run(lifecycle.load_bundle(bundle), options(server, tmp_path, "true", ready_timeout=2),
                  progress=None).execute()
    elapsed = time.monotonic() - started
    assert outcome.status == "failed" and "not ready after 2 s" in outcome.error
    # deploy's wait (2 s) and verify's and undeploy's (2 s each) end on the client's clock, not the server's
    assert elapsed < 30, elapsed
    failed = [e for e in timeline(outcome.folder) if e["event"] == "failed" and e["phase"] == "deploy"]
    assert failed and "not ready after 2 s" in failed[0]["message"]


def test_a_malformed_answer_names_its_url(server, tmp_path):
    from itbench_dsl.run import ClusterError
    from itbench_dsl.run.client import Cluster
    from itbench_dsl.run.lifecycle import Ref

    path = "/apis/apps/v1/namespaces/book-info/deployments/productpage-v1"
    ref = Ref("apps/v1", "Deployment", "book-info", "productpage-v1")
    with Cluster(server.kubeconfig(tmp_path / "kubeconfig.yaml")) as cluster:
        for body in (b"<html>gateway</html>", b"[1, 2]", b'"text"'):
            server.raw[("GET", path)] = (200, body)
            with pytest.raises(ClusterError) as failure:
                cluster.get(ref)
            assert f"{server.url}{path}" in str(failure.value), str(failure.value)
            assert "not a Kubernetes API answer" in str(failure.value) or "not an object" in str(failure.value)
        listing = "/apis/apps/v1/namespaces/book-info/deployments"
        server.raw[("GET", listing)] = (200, b'{"kind": "DeploymentList", "apiVersion": "apps/v1", "items": "none"}')
        with pytest.raises(ClusterError, match=r"deployments\) is not (a list of objects|a Kubernetes API answer)"):
            cluster.list("apps/v1", "Deployment", "book-info")


def test_a_malformed_answer_is_a_clear_error_of_the_command(server, bundle, tmp_path):
    server.raw[("GET", "/version")] = (200, b"{not json")
    done = subprocess.run([sys.executable, "-m", "itbench_dsl", "run", str(bundle), "--kubeconfig",
                           server.kubeconfig(tmp_path / "kubeconfig.yaml"), "--agent", "true", "-o",
                           str(tmp_path / "results")], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2, done.stderr
    assert f"{server.url}/version" in done.stderr and "not a Kubernetes API answer" in done.stderr
    assert "Traceback" not in done.stderr and "internal error" not in done.stderr


def test_a_503_from_a_groups_discovery_is_not_not_served(server, tmp_path):
    from itbench_dsl.run import ClusterError
    from itbench_dsl.run.client import Cluster

    server.raw[("GET", "/apis/security.istio.io/v1")] = (503, json.dumps({
        "kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": "ServiceUnavailable", "code": 503,
        "message": "the server is currently unable to handle the request"}).encode())
    with Cluster(server.kubeconfig(tmp_path / "kubeconfig.yaml")) as cluster:
        with pytest.raises(ClusterError) as failure:
            cluster.resource("security.istio.io/v1", "AuthorizationPolicy")
        assert "503" in str(failure.value) and "/apis/security.istio.io/v1" in str(failure.value)
        assert cluster.resource("chaos-mesh.org/v1alpha1", "NoSuchKind") is None  # what is not served is None


def test_expected_alerts_already_firing_before_the_injection_do_not_count(server, bundle, tmp_path):
    server.alerts = lambda srv: ["NoRequestsOpened", "NoRequestsReceived"]  # firing all along
    outcome = Run(lifecycle.load_bundle(bundle), options(server, tmp_path, "true", alert_timeout=0.5),
                  progress=None).execute()
    assert outcome.status == "failed"
    assert "did not fire within 0.5 s" in outcome.error and "as they did before it" in outcome.error
    assert [e for e in timeline(outcome.folder) if e["phase"] == "revert" and e["event"] == "done"]
    assert settle(server).keys() == server.baseline.keys()


def test_newly_firing_reads_label_sets_and_namespaces():
    from itbench_dsl.run import prometheus

    def response(*alerts):
        return {"data": {"alerts": [{"labels": dict(labels, alertname=name), "state": state}
                                    for name, labels, state in alerts]}}

    scopes = {"HighErrors": ("shop",)}
    before = response(("HighErrors", {"namespace": "shop", "service": "a"}, "firing"))
    same = response(("HighErrors", {"namespace": "shop", "service": "a"}, "firing"))
    assert prometheus.newly_firing(same, before, scopes) == []
    other = response(("HighErrors", {"namespace": "shop", "service": "b"}, "firing"))
    assert prometheus.newly_firing(other, before, scopes) == ["HighErrors"]
    elsewhere = response(("HighErrors", {"namespace": "other", "service": "b"}, "firing"))
    assert prometheus.newly_firing(elsewhere, before, scopes) == []
    pending = response(("HighErrors", {"namespace": "shop", "service": "b"}, "pending"))
    assert prometheus.newly_firing(pending, before, scopes) == []
    assert prometheus.newly_firing(other, None, {"HighErrors": ()}) == ["HighErrors"]
