"""`--target chainsaw|argo`, `itbench plan` and the agent's access against the commands its prompt cites."""

from __future__ import annotations

import re
from functools import lru_cache

import pytest
import yaml
from click.testing import CliRunner
from support.compiling import SCENARIOS

from itbench_dsl import access
from itbench_dsl.backends import prompt as prompt_backend
from itbench_dsl.cli import load_command
from itbench_dsl.cli.compile import TARGET_NAMES
from itbench_dsl.compiler import TARGETS, compile_source, target_files
from itbench_dsl.diagnostics import Diagnostics
from itbench_dsl.run.lifecycle import PHASES
from itbench_dsl.validate import validate_object

PATHS = sorted(str(p.relative_to(SCENARIOS)) for p in SCENARIOS.rglob("*.itb"))


@lru_cache(maxsize=None)
def compiled(path: str):
    diags = Diagnostics()
    result = compile_source((SCENARIOS / path).read_bytes(), str(SCENARIOS / path), diags)  # its folder: `use faults`
    assert not diags.errors() and result.files, path
    return result


def test_cli_target_names_are_the_registry():
    assert TARGET_NAMES == tuple(TARGETS)


@pytest.mark.parametrize("path", PATHS)
def test_library_compiles_to_valid_engine_objects(path):
    result = compiled(path)
    for target, file_name, kind in (("chainsaw", "chainsaw-test.yaml", "Test"), ("argo", "workflowtemplate.yaml",
                                                                                 "WorkflowTemplate")):
        diags = Diagnostics()
        files = target_files(result, target, diags)
        assert not diags.errors(), [d.message for d in diags.errors()][:3]
        [obj] = list(yaml.safe_load_all(files[file_name]))
        assert obj["kind"] == kind and validate_object(obj) == []
        if target == "chainsaw":  # the run's files sit beside the test, which names them by relative path
            names = [op["apply"]["file"] for s in obj["spec"]["steps"] for op in s["try"] if "apply" in op]
            assert names and all(n in files for n in names)
            phases = [s["name"] for s in obj["spec"]["steps"]]
            order = [p.name for p in PHASES]
            assert phases == sorted(phases, key=order.index) and not {p.name for p in PHASES if p.always} & set(phases)
            if "inject/apply.yaml" in files:
                cleanup = "".join(op["script"]["content"] for s in obj["spec"]["steps"] for op in s.get("cleanup", []))
                assert "revert" in cleanup or "revert/apply.yaml" not in files
        else:
            spec = obj["spec"]
            assert spec["onExit"] == "exit"
            raw = {a["path"] for t in spec["templates"] for a in (t.get("inputs") or {}).get("artifacts", [])}
            assert "/bundle/evaluator.py" in raw and "/bundle/prompt.md" in raw


def test_engine_outputs_are_deterministic():
    path = "sre/otel-checkout-nonexistent-image.itb"
    for target in ("chainsaw", "argo"):
        first = target_files(compiled(path), target, Diagnostics())
        diags = Diagnostics()
        again = compile_source((SCENARIOS / path).read_bytes(), path, diags)
        assert target_files(again, target, Diagnostics()) == first


def test_plan_fans_out_with_limits(tmp_path):
    out = tmp_path / "plan.yaml"
    result = CliRunner().invoke(load_command("plan"), [
        str(SCENARIOS / "sre/otel-checkout-nonexistent-image.itb"), str(SCENARIOS / "sre/bookinfo-details-invalid-selector.itb"),
        "--agent", "a=run-a", "--agent", "b=run-b", "--cluster", "c1", "--cluster", "c2", "--cluster", "c3",
        "--repeats", "3", "--parallelism", "2", "--image", "runner:1", "-o", str(out)])
    assert result.exit_code == 0, result.output
    [workflow] = list(yaml.safe_load_all(out.read_text()))
    assert validate_object(workflow) == []
    assert workflow["spec"]["parallelism"] == 2
    items = workflow["spec"]["templates"][0]["steps"][0][0]["withItems"]
    assert len(items) == 2 * 2 * 3
    assert {i["cluster"] for i in items} == {"c1", "c2", "c3"}
    run = workflow["spec"]["templates"][1]
    assert run["synchronization"]["mutexes"] == [{"name": "{{inputs.parameters.cluster}}"}]
    child = yaml.safe_load(run["resource"]["manifest"])
    assert child["kind"] == "Workflow" and child["spec"]["workflowTemplateRef"]["name"] == "{{inputs.parameters.template}}"


@pytest.mark.parametrize("args, message", [
    (["--agent", "Bad Name=x"], "NAME=COMMAND"), (["--agent", "a=x", "--agent", "a=y"], "own name"),
    (["--cluster", "Not_A_Secret"], "Secret"),
])
def test_plan_refuses_bad_options(tmp_path, args, message):
    base = {"--agent": ["--agent", "a=x"], "--cluster": ["--cluster", "c"]}
    for flag in ("--agent", "--cluster"):
        if flag not in args:
            args = args + base[flag]
    result = CliRunner().invoke(load_command("plan"), [str(SCENARIOS / "sre/otel-checkout-nonexistent-image.itb"),
                                                       "--image", "i", "-o", str(tmp_path / "p.yaml"), *args])
    assert result.exit_code != 0 and message in result.output
    assert not (tmp_path / "p.yaml").exists()


# ---- the agent's access allows what its prompt cites ----------------------------------------------------


@pytest.mark.parametrize("path", PATHS)
def test_prompt_commands_are_declared_and_allowed(path):
    result = compiled(path)
    scenario = result.scenario
    prompt = result.files["prompt.md"].decode()
    declared = access.cited_commands(scenario)
    assert set(access.prompt_commands(prompt)) <= set(declared), "a prompt cites a command no record declares"
    objects = [d for d in yaml.safe_load_all(result.files.get("manifests/agent-access.yaml", b"")) if d]
    home = scenario.agent.namespaces[0] if scenario.agent.namespaces else None
    for command in declared:
        for request in access.command_rights(command, home):
            assert access.allows(objects, scenario.agent.service_account, home, request), (command, request)


def test_kyverno_prompt_cites_commands():
    [path] = [p for p in PATHS if p == "ciso/cis-k8s-5-2-2-privileged-kyverno.itb"]
    assert access.prompt_commands(compiled(path).files["prompt.md"].decode()) == ["kubectl get polr -A",
                                                                                 "kubectl get cpolr"]


def test_rbac_evaluator():
    role = {"kind": "Role", "metadata": {"name": "r", "namespace": "a"},
            "rules": [{"apiGroups": [""], "resources": ["pods", "pods/log"], "verbs": ["get", "list"]}]}
    binding = {"kind": "RoleBinding", "metadata": {"name": "r", "namespace": "a"}, "roleRef": {"kind": "Role", "name": "r"},
               "subjects": [{"kind": "ServiceAccount", "name": "sa", "namespace": "a"}]}
    objects = [role, binding]
    ask = lambda *r: access.allows(objects, "sa", "a", access.Request(*r))  # noqa: E731
    assert ask("list", "", "pods", "a") and ask("get", "", "pods/log", "a")
    assert not ask("list", "", "pods", None)  # all namespaces needs a ClusterRoleBinding
    assert not ask("list", "", "pods", "b") and not ask("delete", "", "pods", "a") and not ask("list", "apps", "pods", "a")
    assert not access.allows(objects, "other", "a", access.Request("list", "", "pods", "a"))
    objects += [{"kind": "ClusterRole", "metadata": {"name": "c"}, "rules": [{"apiGroups": ["*"], "resources": ["*"],
                                                                             "verbs": ["list"]}]},
                {"kind": "ClusterRoleBinding", "metadata": {"name": "c"}, "roleRef": {"kind": "ClusterRole", "name": "c"},
                 "subjects": [{"kind": "Group", "name": "system:serviceaccounts"}]}]
    assert ask("list", "apps", "deployments", None) and not ask("get", "apps", "deployments", None)


@pytest.mark.parametrize("command, expected", [
    ("kubectl get polr -A", [("list", "wgpolicyk8s.io", "policyreports", None)]),
    ("kubectl get cpolr", [("list", "wgpolicyk8s.io", "clusterpolicyreports", None)]),
    ("kubectl -n shop get deploy web", [("get", "apps", "deployments", "shop")]),
    ("kubectl get pods,svc -w", [("list", "", "pods", "home"), ("watch", "", "pods", "home"),
                                 ("list", "", "services", "home"), ("watch", "", "services", "home")]),
])
def test_command_rights(command, expected):
    assert [tuple(vars(r).values()) if False else (r.verb, r.group, r.resource, r.namespace)
            for r in access.command_rights(command, "home")] == expected


@pytest.mark.parametrize("command", ["kubectl frobnicate pods", "kubectl get widgets", "helm list", "kubectl get 'x"])
def test_unknown_commands_are_refused(command):
    with pytest.raises(access.UnknownCommand):
        access.command_rights(command, "home")


def test_prompt_backend_is_the_prompt():
    assert prompt_backend.render  # the prompt the test reads is the bundle's prompt.md


# ---- the agent's kubeconfig and environment under Chainsaw and Argo ---------------------------------------

ADMIN_CONFIG = {
    "apiVersion": "v1", "kind": "Config", "current-context": "admin",
    "clusters": [{"name": "kind", "cluster": {"server": "https://127.0.0.1:6443", "certificate-authority-data": "Q0E="}}],
    "users": [{"name": "admin", "user": {"client-certificate-data": "Q0VSVA==", "client-key-data": "S0VZ",
                                         "token": "admin-secret"}}],
    "contexts": [{"name": "admin", "context": {"cluster": "kind", "user": "admin"}}],
}
# what a SelfSubjectRulesReview answers a token that holds what every user holds, and nothing else here
EVERYONE_STATUS = {"resourceRules": [{"verbs": ["create"], "apiGroups": ["authorization.k8s.io"],
                                      "resources": ["selfsubjectrulesreviews"]}],
                   "nonResourceRules": [{"verbs": ["get"], "nonResourceURLs": ["/api", "/version"]}]}
# a kubectl that answers the hand-over's calls as a cluster would: the caller's (admin) config, a token, the
# cluster's namespaces (one the bundle does not name among them), a rules review as the agent (the status in REVIEW_FILE), recording the kubeconfig it was asked with
STUB_KUBECTL = """#!/bin/sh
case "$1 $2" in
  "create token") echo "agent-token-for-$3" ;;
  "config view") cat "$ADMIN_CONFIG_FILE" ;;
  "get namespaces") echo "default kube-system kube-public chaos-mesh" ;;
  "create --validate=false") cat > /dev/null; echo "$KUBECONFIG" >> "$REVIEW_FILE.asked"; cat "$REVIEW_FILE" ;;
  *) echo "unexpected kubectl $*" >&2; exit 3 ;;
esac
"""
LOOKING_AGENT = ("python3 -c \"import json, os; json.dump({'env': dict(os.environ), 'cwd': os.getcwd(), "
                 "'files': sorted(os.listdir('.'))}, open('seen.json', 'w'))\"")


def _run_sh(script: str, cwd, env: dict) -> None:
    import subprocess

    done = subprocess.run(["sh", "-c", script], cwd=cwd, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr


@pytest.fixture
def engine_env(tmp_path):
    import json
    import os

    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "kubectl").write_text(STUB_KUBECTL)
    (bin_dir / "kubectl").chmod(0o755)
    admin = tmp_path / "admin.json"
    admin.write_text(json.dumps(ADMIN_CONFIG))
    bundle = tmp_path / "bundle"
    bundle.mkdir()
    review = tmp_path / "review.json"
    review.write_text(json.dumps({"status": EVERYONE_STATUS}))
    env = {"PATH": f"{bin_dir}:{os.environ['PATH']}", "ADMIN_CONFIG_FILE": str(admin), "KUBECONFIG": str(admin),
           "REVIEW_FILE": str(review),
           "CALLER_SECRET": "caller-only", "PASSED": "for-the-agent", "ITBENCH_AGENT_ENV": "PASSED",
           "ITBENCH_AGENT": LOOKING_AGENT, "ITBENCH_WORKSPACE": str(tmp_path / "agent")}
    return bundle, env, tmp_path / "agent"


def _check_agent_view(seen: dict, folder, account: str) -> None:
    import json

    assert seen["cwd"] == str(folder) and seen["files"] == ["kubeconfig.yaml", "prompt.md"]
    env = seen["env"]
    assert "CALLER_SECRET" not in env and "ADMIN_CONFIG_FILE" not in env and env["PASSED"] == "for-the-agent"
    assert env["KUBECONFIG"] == str(folder / "kubeconfig.yaml") and env["HOME"] == str(folder)
    config = json.loads((folder / "kubeconfig.yaml").read_text()) if (folder / "kubeconfig.yaml").exists() else None
    return config


def _one_user(config: dict, account: str) -> None:
    [user] = config["users"]  # one user, its token alone: nothing of the admin's credentials
    assert user["user"] == {"token": f"agent-token-for-{account}"}
    assert [c["context"]["user"] for c in config["contexts"]] == [user["name"]]
    assert "admin-secret" not in yaml.safe_dump(config) and "Q0VSVA==" not in yaml.safe_dump(config)
    assert config["clusters"][0]["cluster"] == ADMIN_CONFIG["clusters"][0]["cluster"]


def _reviewed_as_the_agent(bundle, env, folder, scenario) -> dict:
    """The hand-over reviewed the token's rights with the agent's kubeconfig, in every namespace of the scenario, and
    recorded them in agent-reach.json, nothing beyond the grant."""
    import json
    from pathlib import Path

    asked = Path(env["REVIEW_FILE"] + ".asked").read_text().split()
    assert asked and set(asked) == {str(folder / "kubeconfig.yaml")}  # as the agent, never as the caller
    reach = json.loads((bundle / "agent-reach.json").read_text())
    assert reach["kubeconfig"]["users"] == ["itbench-agent"]
    assert reach["service_account"] == f"{scenario.agent.namespaces[0]}/{scenario.agent.service_account}"
    assert set(reach["held"]) >= {"default", "kube-system", *scenario.agent.namespaces} and len(asked) == len(reach["held"])
    assert all(h["beyond"] == [] for h in reach["held"].values())
    return reach


def test_the_engine_handover_stops_a_token_that_holds_more_than_its_access(engine_env):
    """A binding of the cluster's that gives every service account more (secrets everywhere, a URL) is found at the
    hand-over, as the agent: the hand-over fails naming it, before the agent runs, and agent-reach.json records it."""
    import json
    import subprocess

    bundle, env, folder = engine_env
    result = compiled("sre/otel-checkout-nonexistent-image.itb")
    files = target_files(result, "chainsaw", Diagnostics())
    (bundle / "prompt.md").write_bytes(files["prompt.md"])
    [test] = list(yaml.safe_load_all(files["chainsaw-test.yaml"]))
    [script] = [op["script"]["content"] for s in test["spec"]["steps"] if s["name"] == "handover" for op in s["try"]]
    wider = {"resourceRules": [*EVERYONE_STATUS["resourceRules"],
                               {"verbs": ["get", "list"], "apiGroups": [""], "resources": ["secrets"]}],
             "nonResourceRules": [{"verbs": ["get"], "nonResourceURLs": ["/metrics"]}]}
    with open(env["REVIEW_FILE"], "w") as handle:
        json.dump({"status": wider}, handle)
    done = subprocess.run(["sh", "-c", script], cwd=bundle, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode != 0 and "may do more than its Roles grant" in done.stderr
    assert "kube-system: get /metrics, get secrets, list secrets" in done.stderr
    held = json.loads((bundle / "agent-reach.json").read_text())["held"]
    assert held["otel-demo"]["beyond"] == ["get /metrics"]  # its own namespace's Secrets are granted
    assert held["default"]["beyond"] == ["get /metrics", "get secrets", "list secrets"]
    # a namespace the bundle does not name (a fault tool's), listed on the cluster, is reviewed too
    assert held["chaos-mesh"]["beyond"] == ["get /metrics", "get secrets", "list secrets"]


@pytest.mark.parametrize("status", [
    {"resourceRules": [{"verbs": ["*"], "apiGroups": ["chaos-mesh.org"], "resources": ["*"]},
                       {"verbs": ["get"], "apiGroups": [""], "resources": ["secrets"], "resourceNames": ["db"]},
                       {"verbs": ["get", "patch"], "apiGroups": [""], "resources": ["namespaces", "nodes"]},
                       {"verbs": ["delete"], "apiGroups": [""], "resources": ["namespaces"]}],
     "nonResourceRules": [{"verbs": ["get"], "nonResourceURLs": ["/metrics", "/version"]}]},
    EVERYONE_STATUS,
])
def test_the_engine_review_reads_a_status_as_the_run_does(status, tmp_path):
    """engines.REVIEW_PY (no itbench in the engine's pod) finds what access.held_beyond finds, namespace by
    namespace, over the rules review_spec gives it."""
    import json
    import subprocess

    from itbench_dsl.backends import engines

    result = compiled("sre/otel-checkout-nonexistent-image.itb")
    spec = engines.review_spec(result.scenario, result.files)
    objects = [d for d in yaml.safe_load_all(result.files["manifests/agent-access.yaml"]) if d]
    account, home = result.scenario.agent.service_account, result.scenario.agent.namespaces[0]
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "kubectl").write_text(f"#!/bin/sh\ncat > /dev/null\necho '{json.dumps({'status': status})}'\n")
    (bin_dir / "kubectl").chmod(0o755)
    (tmp_path / "config.json").write_text(json.dumps({"users": [{"name": "a"}]}))
    done = subprocess.run(["python3", "-S", "-c", engines.REVIEW_PY], cwd=tmp_path, capture_output=True, text=True,
                          env={"PATH": f"{bin_dir}:/usr/bin:/bin", "ITBENCH_GRANTED": spec,
                               "ITBENCH_NAMESPACES": "default chaos-mesh elsewhere",
                               "KUBECONFIG": str(tmp_path / "config.json")}, timeout=60)
    held = json.loads((tmp_path / "agent-reach.json").read_text())["held"]
    assert {"chaos-mesh", "elsewhere", "kube-system", home} <= set(held)
    for namespace, h in held.items():
        assert h["beyond"] == access.held_beyond(objects, account, home, status, namespace), namespace
    assert (done.returncode == 0) == all(h["beyond"] == [] for h in held.values())


def test_chainsaw_hands_the_agent_its_token_alone(engine_env):
    import json

    bundle, env, folder = engine_env
    result = compiled("sre/otel-checkout-nonexistent-image.itb")
    files = target_files(result, "chainsaw", Diagnostics())
    (bundle / "prompt.md").write_bytes(files["prompt.md"])
    [test] = list(yaml.safe_load_all(files["chainsaw-test.yaml"]))
    scripts = {s["name"]: [op["script"]["content"] for op in s["try"] if "script" in op] for s in test["spec"]["steps"]}
    account = result.scenario.agent.service_account
    _run_sh(scripts["handover"][0], bundle, env)
    _one_user(json.loads((folder / "kubeconfig.yaml").read_text()), account)
    _reviewed_as_the_agent(bundle, env, folder, result.scenario)
    assert "/tmp/agent" not in (folder / "prompt.md").read_text() and str(folder) in (folder / "prompt.md").read_text()
    _run_sh(scripts["agent"][0], bundle, env)
    seen = json.loads((folder / "seen.json").read_text())
    _check_agent_view(seen, folder, account)
    with pytest.raises(AssertionError, match="not empty"):  # a folder with something in it is never handed over
        _run_sh(scripts["handover"][0], bundle, env)


def test_argo_keeps_the_cluster_secret_out_of_the_agents_pod(engine_env):
    import json

    bundle, env, folder = engine_env
    result = compiled("sre/otel-checkout-nonexistent-image.itb")
    files = target_files(result, "argo", Diagnostics())
    [template] = list(yaml.safe_load_all(files["workflowtemplate.yaml"]))
    pods = {t["name"]: t for t in template["spec"]["templates"] if "script" in t}
    agent = pods["agent"]["script"]
    assert "volumeMounts" not in agent and not {e["name"] for e in agent["env"]} & {"KUBECONFIG", "PROMETHEUS_URL"}
    assert all("volumeMounts" in t["script"] for name, t in pods.items() if name != "agent")
    # nor the workflow's service-account token: it could read the Workflow, whose stored templates hold the
    # evaluator; Argo's executor reports the outputs with an account of its own
    assert pods["agent"]["automountServiceAccountToken"] is False
    assert pods["agent"]["executor"]["serviceAccountName"] == "{{workflow.parameters.executor-service-account}}"
    assert all("automountServiceAccountToken" not in t for name, t in pods.items() if name != "agent")
    # of the bundle, the agent's pod gets the prompt alone (no evaluator, no ground truth)
    assert [a["path"] for a in pods["agent"]["inputs"]["artifacts"]] == ["/bundle/prompt.md"]
    # the hand-over pod, then the agent's with the kubeconfig parameter Argo would pass it
    (bundle / "prompt.md").write_bytes(files.get("prompt.md", result.files["prompt.md"]))
    handover = pods["handover"]["script"]["source"].replace("/tmp/itbench-agent", str(folder))
    _run_sh(handover, bundle, env)
    passed = (folder / "kubeconfig.yaml").read_text()
    _one_user(json.loads(passed), result.scenario.agent.service_account)
    _reviewed_as_the_agent(bundle, env, folder, result.scenario)
    assert {"name": "agent-reach", "valueFrom": {"path": "/bundle/agent-reach.json", "default": ""}} in \
        pods["handover"]["outputs"]["parameters"]
    import shutil

    shutil.rmtree(folder)
    source = agent["source"].replace("/tmp/itbench-agent", str(folder))
    agent_env = {k: v for k, v in env.items() if k not in ("KUBECONFIG",)}
    agent_env |= _parameters(agent, {"agent-kubeconfig": passed})
    _run_sh(source, bundle, agent_env)
    seen = json.loads((folder / "seen.json").read_text())
    _check_agent_view(seen, folder, result.scenario.agent.service_account)
    _one_user(json.loads((folder / "kubeconfig.yaml").read_text()), result.scenario.agent.service_account)


def _parameters(script: dict, values: dict) -> dict:
    """The environment Argo gives a script whose env entries name input parameters: `values` substituted."""
    import re

    out = {}
    for entry in script["env"]:
        found = re.fullmatch(r"\{\{inputs\.parameters\.([a-z0-9-]+)\}\}", entry["value"])
        if found:
            out[entry["name"]] = values[found.group(1)]
    return out


def test_argo_passes_the_agents_answer_as_data_never_as_script(tmp_path):
    """Argo substitutes `{{inputs.parameters.*}}` textually: the agent's answer (and any parameter) reaches the
    evaluation pod in an environment variable, base64-encoded, and is written byte for byte; an answer holding a
    line that would end a here-document, quotes or a command substitution runs nothing."""
    import base64
    import subprocess

    result = compiled("sre/otel-checkout-nonexistent-image.itb")
    [template] = list(yaml.safe_load_all(target_files(result, "argo", Diagnostics())["workflowtemplate.yaml"]))
    pods = {t["name"]: t for t in template["spec"]["templates"] if "script" in t}
    assert not any("{{inputs.parameters" in t["script"]["source"] for t in pods.values())
    folder, sent = tmp_path / "agent", tmp_path / "sent"
    payload = (b'{"entities": []}\nITBENCH_PARAMETER_END\ntouch ../pwned\n$(touch ../pwned2)\n\'"`touch ../pwned3`'
               + bytes(range(256)))
    # the agent's pod, after the agent: its answer, encoded where Argo reads the output parameter
    send = "mkdir -p /tmp/itbench-sent" + pods["agent"]["script"]["source"].split("mkdir -p /tmp/itbench-sent")[1]
    folder.mkdir()
    (folder / "diagnosis.json").write_bytes(payload)
    send = send.replace("/tmp/itbench-agent", str(folder)).replace("/tmp/itbench-sent", str(sent))
    subprocess.run(["sh", "-c", send], cwd=tmp_path, check=True)
    [out] = [p for p in pods["agent"]["outputs"]["parameters"] if p["valueFrom"]["path"].startswith("/tmp/itbench-sent")]
    value = (sent / out["valueFrom"]["path"].rpartition("/")[2]).read_text()
    assert base64.b64decode(value) == payload
    # the evaluation pod writes it back, up to its snapshot
    (folder / "diagnosis.json").unlink()
    receive = pods["evaluate"]["script"]["source"].split("# snapshot")[0].replace("/tmp/itbench-agent", str(folder))
    [parameter] = pods["evaluate"]["inputs"]["parameters"]
    env = {"PATH": "/usr/bin:/bin"} | _parameters(pods["evaluate"]["script"], {parameter["name"]: value})
    subprocess.run(["sh", "-c", receive], cwd=tmp_path, env=env, check=True)
    assert (folder / "diagnosis.json").read_bytes() == payload
    assert not [p for p in tmp_path.iterdir() if p.name.startswith("pwned")]


def _step_scripts(test: dict) -> dict:
    return {op["description"]: op["script"]["content"] for s in test["spec"]["steps"] for op in s["try"]
            if "script" in op}


@pytest.mark.parametrize("target", ["chainsaw", "argo"])
def test_engine_exports_grade_every_task_the_scenario_poses(target, tmp_path):
    """A scenario posing detect, localize, analyze and mitigate: the export records the injection and when the
    detection answer appeared, carries every answer file to the evaluation and grades each task with the
    inputs `itbench run` gives it (lifecycle.evaluator_inputs): the right answers pass."""
    import json
    import os
    import subprocess

    from itbench_dsl.analysis.states import derive

    result = compiled("sre/hotel-reservation-mongodb-geo-revoked-role.itb")
    files = target_files(result, target, Diagnostics())
    bundle, folder = tmp_path / "bundle", tmp_path / "agent"
    bundle.mkdir()
    folder.mkdir()
    faulty = derive(result.scenario)["faulty"]
    (bundle / "state.json").write_text(json.dumps(faulty))
    (bundle / "evaluator.py").write_bytes(result.files["evaluator.py"])
    [namespace] = {o["metadata"]["namespace"] for o in faulty["resources"]["items"]
                   if o["kind"] == "Deployment" and o["metadata"]["name"] == "mongodb-geo"}
    answers = {"diagnosis.json": {"entities": [{"name": f"{namespace}/Deployment/mongodb-geo", "contributing_factor": True,
                                                "reasoning": "r", "evidence": "e"}]},
               "analysis.json": {"system_level": "application", "fault_type": "authentication_issue"}}
    agent = "; ".join([*(f"echo '{json.dumps(a)}' > {n}" for n, a in answers.items()),
                       """printf '{"anomaly": true, "noticed_at": "%s"}' "$(date -u +%Y-%m-%dT%H:%M:%SZ)" > detection.json"""])
    env = {"PATH": os.environ["PATH"], "ITBENCH_WORKSPACE": str(folder), "ITBENCH_AGENT": agent}
    if target == "chainsaw":
        [test] = list(yaml.safe_load_all(files["chainsaw-test.yaml"]))
        scripts = _step_scripts(test)
        inject, run_agent, evaluate = scripts["record the injection"], scripts["agent"], scripts["evaluate"]
    else:
        [template] = list(yaml.safe_load_all(files["workflowtemplate.yaml"]))
        pods = {t["name"]: t for t in template["spec"]["templates"] if "script" in t}
        inject = "date -u +%Y-%m-%dT%H:%M:%SZ > injected-at\n"
        assert inject.strip() in pods["inject"]["script"]["source"]
        run_agent = pods["agent"]["script"]["source"].split("# agent\n")[1]
        evaluate = pods["evaluate"]["script"]["source"].replace("/bundle", str(bundle))
        evaluate = evaluate.split("# snapshot")[0] + "# evaluate" + evaluate.split("# evaluate")[1]
    subprocess.run(["sh", "-c", inject], cwd=bundle, env=env, check=True)
    done = subprocess.run(["sh", "-c", run_agent.replace("/tmp/itbench-agent", str(folder)).replace(
        "/tmp/itbench-sent", str(tmp_path / "sent"))], cwd=bundle, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert (bundle / "answered-at").is_file()
    if target == "argo":  # what Argo passes from the agent's and the inject pod to the evaluation's
        import shutil

        shutil.rmtree(folder)
        env |= _parameters(pods["evaluate"]["script"], {
            **{p["name"]: (tmp_path / "sent" / p["name"]).read_text() for p in pods["agent"]["outputs"]["parameters"]
               if p["name"].startswith("answer-")},
            "record-injected-at": (bundle / "injected-at").read_text().strip(),
            "record-answered-at": (bundle / "answered-at").read_text().strip()})
        for name in ("injected-at", "answered-at"):
            (bundle / name).unlink()
        evaluate = evaluate.replace("/tmp/itbench-agent", str(folder))
    done = subprocess.run(["sh", "-c", evaluate], cwd=bundle, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    verdict = json.loads((bundle / "verdict.json").read_text())
    assert {t: v["passed"] for t, v in verdict["tasks"].items()} == {
        "detect": True, "localize": True, "analyze": True, "mitigate": False}, verdict


FAKE_EVALUATOR = """import json, sys
calls = open("calls.log", "a")
calls.write(" ".join(sys.argv[1:]) + "\\n")
calls.close()
args = sys.argv[1:]
if "--capture" in args:
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "ns"}}
    json.dump({"resources": {"apiVersion": "v1", "kind": "List", "items": [pod]}, "captured": ["ns/Pod"],
               **({"fixed_at": args[args.index("--fixed-at") + 1]} if "--fixed-at" in args else {})},
              open(args[args.index("--capture") + 1], "w"))
elif "--task" in args:
    graded = sum(1 for line in open("calls.log") if line.startswith("--task"))
    print(json.dumps({"passed": graded >= 2}))  # the fix takes hold at the second look
"""


@pytest.mark.parametrize("target", ["chainsaw", "argo"])
def test_engine_snapshot_captures_as_the_run_does(target, tmp_path):
    """The snapshot step dates the state (`fixed_at`: the end of the agent's work), waits the scenario's declared
    mitigation window until the mitigation's checks hold, lets the fix run (observed) and captures with those
    `observations`, as `itbench run`'s snapshot does."""
    import json
    import os
    import re
    import subprocess

    result = compiled("sre/otel-checkout-insufficient-quota.itb")
    files = target_files(result, target, Diagnostics())
    if target == "chainsaw":
        [test] = list(yaml.safe_load_all(files["chainsaw-test.yaml"]))
        script = _step_scripts(test)["snapshot"]
    else:
        [template] = list(yaml.safe_load_all(files["workflowtemplate.yaml"]))
        [pod] = [t for t in template["spec"]["templates"] if t["name"] == "evaluate"]
        script = "set -eu\n" + pod["script"]["source"].split("# snapshot\n( set -eu\n")[1].split("\n)\n")[0]
    (tmp_path / "evaluator.py").write_text(FAKE_EVALUATOR)
    env = {"PATH": os.environ["PATH"], "PROMETHEUS_URL": "http://prometheus", "ITBENCH_STABLE_FOR": "1"}
    done = subprocess.run(["sh", "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    calls = (tmp_path / "calls.log").read_text().splitlines()
    graded = [c for c in calls if c.startswith("--task mitigate")]
    assert len(graded) == 2  # the window is waited until the checks hold
    final = [c for c in calls if c.startswith("--capture state.json")]
    assert final and all(re.search(r"--fixed-at \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$", c) for c in final)
    state = json.loads((tmp_path / "state.json").read_text())
    assert state["fixed_at"] and state["observations"] and state["observations"][0]["resources"]["items"][0]["kind"] == "Pod"
    assert not list(tmp_path.glob("observation-*"))


def _alerts(*labels: dict) -> dict:
    return {"status": "success", "data": {"alerts": [{"labels": dict(l), "state": "firing"} for l in labels]}}


@pytest.mark.parametrize("target", ["chainsaw", "argo"])
def test_engine_alert_gate_reads_the_baseline_and_the_namespace(target, tmp_path):
    """The exported alert wait passes only for an expected alert firing in its target's namespace with a label set
    that did not fire in the baseline, as `itbench run`'s alerts phase (prometheus.newly_firing): an instance
    already firing before the injection, or one of another namespace, proves nothing of the fault."""
    import json
    import subprocess

    result = compiled("sre/otel-checkout-nonexistent-image.itb")
    files = target_files(result, target, Diagnostics())
    if target == "chainsaw":
        [test] = list(yaml.safe_load_all(files["chainsaw-test.yaml"]))
        script = _step_scripts(test)["wait for the expected alerts"]
    else:
        [template] = list(yaml.safe_load_all(files["workflowtemplate.yaml"]))
        [pod] = [t for t in template["spec"]["templates"] if t["name"] == "inject"]
        script = pod["script"]["source"]
    check = script.split("  if ", 1)[1].split("; then exit 0; fi")[0]
    [namespace] = {a.target.namespace for a in result.scenario.alerts if a.name == "HighRequestErrorRate"}
    before = {"alertname": "HighRequestErrorRate", "namespace": namespace, "service_name": "ad"}
    (tmp_path / "baseline-alerts.json").write_text(json.dumps(_alerts(before)))

    def gate(*firing) -> int:
        (tmp_path / "alerts.json").write_text(json.dumps(_alerts(*firing)))
        return subprocess.run(["sh", "-c", check], cwd=tmp_path, capture_output=True).returncode

    assert gate(before) == 1  # firing before the injection: the same instance
    assert gate(before, dict(before, namespace="elsewhere", service_name="frontend")) == 1  # another namespace
    assert gate(before, dict(before, service_name="frontend")) == 0  # a new instance where the fault acts


FAILING_KUBECTL = """#!/bin/sh
case "$1" in delete|apply) echo "kubectl $1: the server is currently unable to handle the request" >&2; exit 1;; esac
exit 0
"""


@pytest.mark.parametrize("pod, fails", [("revert", True), ("deploy", True), ("undeploy", True)])
def test_argo_pods_fail_when_any_of_their_actions_fails(pod, fails, tmp_path):
    """A failed revert (its delete refused) followed by a verify that passes fails the pod; so does a failed apply in
    the deploy pod: a pod's status is every action's, not its last one's."""
    import os
    import subprocess

    result = compiled("sre/otel-checkout-insufficient-quota.itb")
    [template] = list(yaml.safe_load_all(target_files(result, "argo", Diagnostics())["workflowtemplate.yaml"]))
    [script] = [t for t in template["spec"]["templates"] if t["name"] == pod]
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "kubectl").write_text(FAILING_KUBECTL)
    (tmp_path / "bin" / "kubectl").chmod(0o755)
    # every kubectl command (not the word in `--field-manager=kubectl`) notes that it was tried
    tried = re.sub(r"(?m)^(\( )?kubectl ", r"\1echo tried >> tried.log; kubectl ", script["script"]["source"])
    done = subprocess.run(["sh", "-c", tried], cwd=tmp_path, capture_output=True, text=True,
                          env={"PATH": f"{tmp_path / 'bin'}:{os.environ['PATH']}"})
    assert (done.returncode != 0) == fails, done.stderr
    if pod == "revert":  # every phase is tried all the same: the verify ran after the failed revert
        assert "rollout" in script["script"]["source"] and len((tmp_path / "tried.log").read_text().split()) > 2


def test_the_agents_exit_status_is_no_run_failure(tmp_path):
    """An agent that exits non-zero is graded all the same (as `itbench run` grades it): its step records the
    status and succeeds, so a pod's status is the harness's alone."""
    import os
    import subprocess

    [test] = list(yaml.safe_load_all(target_files(compiled("sre/otel-checkout-nonexistent-image.itb"), "chainsaw",
                                                  Diagnostics())["chainsaw-test.yaml"]))
    (tmp_path / "agent").mkdir()
    done = subprocess.run(["sh", "-c", _step_scripts(test)["agent"]], cwd=tmp_path, capture_output=True, text=True,
                          env={"PATH": os.environ["PATH"], "ITBENCH_WORKSPACE": str(tmp_path / "agent"),
                               "ITBENCH_AGENT": "echo '{}' > diagnosis.json; exit 3"})
    assert done.returncode == 0 and "status 3" in done.stderr
    assert (tmp_path / "agent" / "diagnosis.json").is_file()


CORDONING = [path for path in PATHS if "cordoned_node" in (SCENARIOS / path).read_text(encoding="utf-8")]


@pytest.mark.parametrize("path", CORDONING)
def test_engines_cordon_what_a_fault_cordons_before_its_apply_and_uncordon_it_after_the_revert(path):
    """Nodes are no objects of a bundle: a fault's cordon is a step of the engines' runs, as of `itbench run`."""
    result = compiled(path)
    nodes = [n for i in result.scenario.injections() for n in i.cordoned]
    assert nodes, "the fault names the node it cordons"
    for target, file_name in (("chainsaw", "chainsaw-test.yaml"), ("argo", "workflowtemplate.yaml")):
        text = target_files(result, target, Diagnostics())[file_name].decode()
        for node in nodes:
            assert text.index(f"kubectl cordon {node}") < text.index("-f inject/apply.yaml"), target
            assert text.index("-f revert/apply.yaml") < text.index(f"kubectl uncordon {node}"), target
