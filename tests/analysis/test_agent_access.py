"""The agent's access is its application's and domain's, whatever the fault (expectations.application_access, E4025);
the alert rules it can read do not single out the root cause (agent_view.expr_problems, E4010); the prompt says
alerts fire only where rules ship; a control reads like its faulty twin."""

from __future__ import annotations

import json
import re

import pytest
import yaml
from support.compiling import SCENARIOS, compile_text

from itbench_dsl import access
from itbench_dsl.checking import check_source
from itbench_dsl.variants import builtin  # noqa: F401

SHOP = """scenario "{name}" {{
  domain sre
  complexity low
  description "The web front end cannot reach cart."
  topology {{
    namespace "shop"
    deployment "cart" {{
      image = "ghcr.io/example/cart:1.0"
      port "grpc" = 7070
      labels {{ app = "cart" }}
    }}
    deployment "web" {{
      image = "ghcr.io/example/web:1.0"
      port "http" = 8080
      labels {{ app = "web" }}
      env {{ CART_ADDR = "cart:7070" }}
    }}
    service "cart" {{ port "grpc" = 7070 }}
    service "web" {{ port "http" = 8080 }}
    "web" -> "cart"
  }}
  {body}
}}
"""
EXPECT = """expect {{
    root_cause {root}
    alert {alert}
    mitigated when {{ deployment "cart" ready }}
  }}"""


def _access(text: str) -> list[dict]:
    result, diags = compile_text(text)
    assert not diags.has_errors, [d.message for d in diags.items]
    return [d for d in yaml.safe_load_all(result.files["manifests/agent-access.yaml"]) if d]


FAULTS = [
    ('fault scaled_to_zero on deployment "cart"', 'deployment "cart"'),
    # diagnosis only: the agent may not end the PodChaos that a posed `mitigate` would need gone (E2037)
    ('tasks diagnose\n  fault pod_chaos on deployment "cart" {\n    action = pod_kill\n  }', 'deployment "cart"'),
]
CHAOS = 'fault pod_chaos on deployment "cart" {\n    action = pod_kill\n  }'


def test_the_access_is_the_same_whatever_the_fault():
    bodies = [f + "\n  " + EXPECT.format(root=root, alert='KubePodNotReady on pod "cart-*"') for f, root in FAULTS]
    accesses = [_access(SHOP.format(name=f"shop-{i}", body=b)) for i, b in enumerate(bodies)]
    assert accesses[0] == accesses[1]
    rules = [(tuple(r["apiGroups"]), tuple(r["resources"])) for o in accesses[0] for r in o.get("rules", [])]
    # the superset: Secrets, Roles under their own group; never Chaos Mesh's kinds (they name the fault)
    assert not any(set(g) & (access.FAULT_TOOL_GROUPS | {"*"}) for g, res in rules)
    assert any(g == ("rbac.authorization.k8s.io",) and "roles" in res for g, res in rules)
    assert not any(g == ("",) and "roles" in res for g, res in rules)
    assert {o["metadata"].get("namespace") for o in accesses[0] if o["kind"] == "Role"} == {"shop", "kube-system"}


def test_an_agent_statement_that_changes_the_access_is_an_error():
    body = ('fault scaled_to_zero on deployment "cart"\n  agent { read = ["pods"] }\n  '
            + EXPECT.format(root='deployment "cart"', alert='KubePodNotReady on pod "cart-*"'))
    result, diags = compile_text(SHOP.format(name="shop-x", body=body))
    assert [d.code for d in diags.items if d.code == "E4025"] == ["E4025"]


def _library() -> dict[str, list]:
    out: dict = {}
    for path in sorted((SCENARIOS / "sre").glob("*.itb")):
        text = path.read_text()
        app = re.search(r'use app "([^"]+)"', text)
        if app:
            out.setdefault(app.group(1), []).append(path)
    return out


@pytest.mark.parametrize("app", sorted(_library()))
def test_every_library_scenario_of_an_application_gives_the_agent_the_same_access(app):
    seen = {}
    for path in _library()[app]:
        result, diags = compile_text(path.read_bytes(), str(path), validate=False)
        if result.scenario is None or not result.files:
            continue
        seen[path.name] = result.files["manifests/agent-access.yaml"]
    assert len(set(seen.values())) == 1, sorted(seen)


@pytest.mark.parametrize("name", ["k8sbench-fix-rbac-wrong-resource", "otel-valkey-cart-changed-password",
                                  "otel-frontend-ingress-blocked"])
def test_the_first_solution_is_allowed_for_the_agent(name):
    result, diags = compile_text((SCENARIOS / "sre" / f"{name}.itb").read_bytes(), f"{name}.itb", validate=False)
    objects = [d for d in yaml.safe_load_all(result.files["manifests/agent-access.yaml"]) if d]
    scenario = result.scenario
    home = scenario.agent.namespaces[0]
    for step in scenario.solutions[0].steps:
        if not step.command or not step.command.startswith("kubectl"):
            continue
        try:
            requests = access.command_rights(step.command, home)
        except access.UnknownCommand:
            continue
        denied = access.missing(objects, scenario.agent.service_account, home, (step.command,))
        assert not denied, (step.command, denied, requests)


SCOPED = """alert_rule "CartDown" {{
    expr = "{expr}"
    for = 1m
    severity = "critical"
    summary = "A service has no ready endpoint"
  }}
  fault scaled_to_zero on deployment "cart"
  expect {{
    root_cause deployment "cart"
    alert CartDown on service "cart"
    mitigated when {{ deployment "cart" ready }}
  }}"""


@pytest.mark.parametrize("expr, leaks", [
    ('kube_deployment_spec_replicas{namespace=\\"shop\\", deployment=\\"cart\\"} == 0', True),
    ('kube_deployment_spec_replicas{namespace=\\"shop\\", deployment=~\\"cart|web\\"} == 0', False),
    ('kube_endpoint_info{namespace=\\"shop\\"} unless on (namespace, endpoint) '
     'kube_endpoint_address{namespace=\\"shop\\", ready=\\"true\\"}', False),
])
def test_e4010_reads_the_expressions_of_declared_rules(expr, leaks):
    text = SHOP.format(name="shop-rule", body=SCOPED.format(expr=expr)).replace("Cart", "Shop")
    check = check_source(text.encode(), "input.itb")
    found = [d.message for d in check.diagnostics if d.code == "E4010" and ".expr" in d.message]
    assert bool(found) == leaks, found


def test_the_prompt_says_alerts_fire_only_where_rules_ship():
    for name in ("sregym-wrong-dns-policy-hotel-reservation", "k8sbench-fix-rbac-wrong-resource"):
        result, _ = compile_text((SCENARIOS / "sre" / f"{name}.itb").read_bytes(), f"{name}.itb", validate=False)
        assert "manifests/alert-rules.yaml" not in result.files or not result.files["manifests/alert-rules.yaml"]
        assert b"Alerts have started to fire" not in result.files["prompt.md"]


def test_a_control_ships_its_twins_rules_access_and_prompt():
    """A detection pair (both posing `detect`) is told apart by nothing the agent reads: the control has its
    faulty twin's alert rules, access and prompt."""
    from itbench_dsl import variants as gen
    from itbench_dsl.compiler import compile_document
    from itbench_dsl.diagnostics import Diagnostics

    # (the Chaos Mesh one poses no `mitigate`: its agent could not end the Schedule, E2037)
    for rel, tasks in (("sre/otel-checkout-kafka-network-partition.itb", "detect"),
                       ("sre/otel-frontend-ingress-blocked.itb", "detect, mitigate")):
        text = re.sub(r"\n  tasks [^\n]*", "", (SCENARIOS / rel).read_text(encoding="utf-8"))
        at = text.index("\n  description ")
        posed = (text[:at] + f"\n  tasks {tasks}" + text[at:]).encode()
        twin, _ = compile_text(posed, rel, validate=False)
        result = gen.run([gen.load_input(posed, rel, Diagnostics())], [("control", gen.load_generator("control"))], 1)
        (variant,) = result.variants
        control = compile_document(variant.document, "control.itb", Diagnostics())
        for name in ("manifests/agent-access.yaml", "manifests/alert-rules.yaml", "prompt.md"):
            assert control.files.get(name) == twin.files.get(name), (rel, name)
        assert twin.files["manifests/alert-rules.yaml"]
        assert b"Alerts have started to fire" not in control.files["prompt.md"]


def test_e4026_a_solution_step_the_agents_access_refuses():
    from itbench_dsl.analysis.solutions import _denied

    body = ('fault scaled_to_zero on deployment "cart"\n  '
            + EXPECT.format(root='deployment "cart"', alert='KubePodNotReady on pod "cart-*"') + '''
  solution "Scale it back" {
    step "Scale" run "kubectl -n shop scale deployment/cart --replicas=1"
    step "Roll back" run "kubectl -n shop rollout undo deployment/cart"
    step "Drop a cluster binding" run "kubectl delete clusterrolebinding cart-admin"
  }''')
    result, diags = compile_text(SHOP.format(name="shop-y", body=body))
    found = _denied(result.scenario)
    assert [(f.code, f.step) for f in found] == [("E4026", (0, 2))]
    assert "clusterrolebindings" in found[0].message


@pytest.mark.parametrize("command, expected", [
    ("kubectl -n shop scale deployment/cart --replicas=1", {("patch", "apps", "deployments/scale", "shop")}),
    ("kubectl -n shop set image deployment/cart cart=cart:2", {("patch", "apps", "deployments", "shop")}),
    ("kubectl uncordon node-1", {("patch", "", "nodes", None)}),
    ("kubectl -n chaos-mesh delete schedule x", {("delete", "chaos-mesh.org", "schedules", "chaos-mesh")}),
])
def test_command_rights_of_object_verbs(command, expected):
    got = {(r.verb, r.group, r.resource, r.namespace) for r in access.command_rights(command, "shop")}
    assert expected <= got


# ---- what the agent's own rules reach: a fault tool's objects, a wider token ----------------------------------


def _rules(files: dict, kind: str, namespace: str | None = None) -> list[dict]:
    return [r for o in yaml.safe_load_all(files["manifests/agent-access.yaml"]) if o and o["kind"] == kind
            and o["metadata"].get("namespace") == namespace for r in o["rules"]]


@pytest.mark.parametrize("app", sorted(_library()))
def test_no_library_bundle_lets_the_agent_read_a_fault_tool(app):
    """Listing Chaos Mesh's objects names the fault's kind and its target: no default access grants them, and no
    library prompt cites a command that reads them."""
    path = _library()[app][0]
    result, _ = compile_text(path.read_bytes(), str(path), validate=False)
    for o in yaml.safe_load_all(result.files["manifests/agent-access.yaml"]):
        for rule in (o or {}).get("rules") or []:
            assert not set(rule["apiGroups"]) & (access.FAULT_TOOL_GROUPS | {"*"}), (path.name, o["kind"], rule)


def test_e4010_a_rule_that_reads_a_fault_tool_unless_the_prompt_cites_it():
    from itbench_dsl import agent_view

    body = FAULTS[1][0] + "\n  " + EXPECT.format(root='deployment "cart"', alert='KubePodNotReady on pod "cart-*"')
    result, _ = compile_text(SHOP.format(name="shop-t", body=body))
    files = dict(result.files)
    objects = [d for d in yaml.safe_load_all(files["manifests/agent-access.yaml"]) if d]
    objects += [{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": "peek"},
                 "rules": [{"apiGroups": ["chaos-mesh.org"], "resources": ["podchaos"], "verbs": ["list"]}]},
                {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding", "metadata": {"name": "peek"},
                 "roleRef": {"kind": "ClusterRole", "name": "peek"},
                 "subjects": [{"kind": "ServiceAccount", "name": "itbench-agent", "namespace": "shop"}]}]
    files["manifests/agent-access.yaml"] = yaml.safe_dump_all(objects).encode()
    found = [f for f in agent_view.findings(result.scenario, files, objects=agent_view.from_files(files))
             if f.where == "manifests/agent-access.yaml"]
    assert [(f.kind, f.name, f.field) for f in found] == [("ClusterRole", "peek", "rules[0]")]
    assert "chaos-mesh.org" in found[0].message() and "fault tool" in found[0].message()
    # a prompt that cites a command reading them grants them explicitly
    files["prompt.md"] += b"\nList the experiments with `kubectl get podchaos -A`.\n"
    assert not [f for f in agent_view.findings(result.scenario, files, objects=agent_view.from_files(files))
                if f.where == "manifests/agent-access.yaml"]


def test_w2017_a_solution_step_on_a_fault_tools_object():
    """The agent may not read Chaos Mesh's objects: a solution that deletes one is a step it cannot take (W2017),
    not a missing grant to add (E4026)."""
    from itbench_dsl.analysis.solutions import _denied

    # `mitigated when only` grades readiness, not the one-shot experiment gone: `mitigate` may be posed (E2037
    # leaves it be), and the solution's step on the PodChaos is one the agent cannot take
    expect = EXPECT.format(root='deployment "cart"', alert='KubePodNotReady on pod "cart-*"')
    body = (CHAOS + "\n  " + expect.replace("mitigated when {", "mitigated when only {")
            + '''
  solution "Remove it" {
    step "Delete the experiment" run "kubectl -n chaos-mesh delete podchaos x"
  }''')
    result, _ = compile_text(SHOP.format(name="shop-w", body=body))
    assert [(f.code, f.step) for f in _denied(result.scenario)] == [("W2017", (0, 0))]


OTEL = "otel-cart-pod-kill-loop"
HOTEL = "hotel-reservation-mongodb-geo-revoked-role"


def _compiled(name: str):
    result, _ = compile_text((SCENARIOS / "sre" / f"{name}.itb").read_bytes(), f"{name}.itb", validate=False)
    return result


def test_no_shell_into_pods_whose_token_is_wider_than_the_agents():
    """grafana, prometheus and the collector run in otel-demo with ClusterRoles the agent lacks: exec, attach or
    port-forward there would hand the agent their tokens. hotel-reservation's pods run with no role: exec stays
    (its solution execs into mongodb)."""
    otel = _compiled(OTEL)
    for namespace in ("otel-demo", "kube-system"):
        granted = {r for rule in _rules(otel.files, "Role", namespace) for r in rule["resources"]}
        assert not granted & set(access.REACH_SUBRESOURCES), (namespace, granted & set(access.REACH_SUBRESOURCES))
    assert otel.scenario.agent.no_exec == ["otel-demo"]
    hotel = _compiled(HOTEL)
    exec_verbs = {v for rule in _rules(hotel.files, "Role", "hotel-reservation") if "pods/exec" in rule["resources"]
                  for v in rule["verbs"]}
    assert exec_verbs == {"create", "delete", "patch", "update"}  # acting, never a read right (`get`: a WebSocket exec)
    assert not any("pods/exec" in rule["resources"] for rule in _rules(hotel.files, "Role", "kube-system"))


def test_e4010_a_rule_that_lets_the_agent_into_a_pod_with_a_wider_token():
    from itbench_dsl import agent_view

    result = _compiled(OTEL)
    files = dict(result.files)
    objects = [d for d in yaml.safe_load_all(files["manifests/agent-access.yaml"]) if d]
    role = next(o for o in objects if o["kind"] == "Role" and o["metadata"]["namespace"] == "otel-demo")
    role["rules"].append({"apiGroups": [""], "resources": ["pods/portforward"], "verbs": ["create"]})
    files["manifests/agent-access.yaml"] = yaml.safe_dump_all(objects).encode()
    found = [f for f in agent_view.findings(result.scenario, files, objects=agent_view.from_files(files))
             if f.where == "manifests/agent-access.yaml"]
    assert found and all(f.kind == "Role" and f.namespace == "otel-demo" for f in found)
    assert found[0].field == f"rules[{len(role['rules']) - 1}]" and found[0].text == "pods/portforward"
    assert "token of service account `otel-demo/" in found[0].message()
    # a token request for a wide account is the same reach
    role["rules"][-1] = {"apiGroups": [""], "resources": ["serviceaccounts/token"], "verbs": ["create"]}
    files["manifests/agent-access.yaml"] = yaml.safe_dump_all(objects).encode()
    assert [f.text for f in agent_view.findings(result.scenario, files, objects=agent_view.from_files(files))
            if f.where == "manifests/agent-access.yaml"] == ["serviceaccounts/token"]


def test_the_agent_may_not_run_pods_as_a_wider_account():
    """The agent may create pods, workloads and Secrets in otel-demo, where grafana, prometheus and the collector
    hold ClusterRoles: its access carries an admission policy that admits pods of the narrow accounts alone and no
    service-account-token Secret (the real API server's answer: tests/run/test_local_cluster.py)."""
    objects = [d for d in yaml.safe_load_all(_compiled(OTEL).files["manifests/agent-access.yaml"]) if d]
    policy = next(o for o in objects if o["kind"] == "ValidatingAdmissionPolicy")
    assert [o["spec"]["policyName"] for o in objects if o["kind"] == "ValidatingAdmissionPolicyBinding"] == \
        [policy["metadata"]["name"]]
    assert policy["spec"]["matchConditions"][0]["expression"].startswith(
        "request.userInfo.username in ['system:serviceaccount:otel-demo:itbench-agent', ")
    admits = policy["spec"]["validations"][1]["expression"]
    assert "'otel-demo/default'" in admits and "'otel-demo/opentelemetry-demo'" in admits
    assert not re.search(r"'otel-demo/(grafana|prometheus|otel-collector)'", admits)


def test_the_guard_holds_the_accounts_the_agent_may_run_pods_as():
    """The agent may bind its own Role to an account it may run pods as (its RoleBindings in otel-demo, RBAC's
    escalation check passes: it holds every rule of the Role) and act through a pod of that account: the guard
    holds that account's requests as it holds the agent's, and no other's (the cluster's controllers, the
    wider accounts, which the agent cannot act as)."""
    from itbench_dsl.runtime.kyverno import cel

    objects = [d for d in yaml.safe_load_all(_compiled(OTEL).files["manifests/agent-access.yaml"]) if d]
    policy = next(o for o in objects if o["kind"] == "ValidatingAdmissionPolicy")
    admits = policy["spec"]["validations"][1]["expression"]
    narrow = re.findall(r"'(otel-demo/[a-z0-9-]+)'", admits)
    assert "otel-demo/default" in narrow

    def held(user: str) -> bool:
        pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "otel-demo"},
               "spec": {"serviceAccountName": "prometheus", "containers": [{"name": "c", "image": "x"}]}}
        return cel.matched(policy["spec"]["matchConditions"], [], pod,
                           {"request": {"operation": "CREATE", "userInfo": {"username": user}}}) is True

    assert held("system:serviceaccount:otel-demo:itbench-agent")
    for account in narrow:
        assert held("system:serviceaccount:" + account.replace("/", ":")), account
    for other in ("system:serviceaccount:kube-system:replicaset-controller", "system:serviceaccount:otel-demo:prometheus",
                  "system:serviceaccount:otel-demo:otel-collector", "kubernetes-admin"):
        assert not held(other), other


BASELINE_BREAKERS = {  # a pod spec's field -> what it holds of the node, as node_reach names it
    "hostNetwork": ({"hostNetwork": True}, "hostNetwork"),
    "hostPID": ({"hostPID": True}, "hostPID"),
    "privileged": ({"containers": [{"name": "c", "securityContext": {"privileged": True}}]}, "privileged container c"),
    "init": ({"initContainers": [{"name": "i", "securityContext": {"privileged": True}}]}, "privileged container i"),
    "caps": ({"containers": [{"name": "c", "securityContext": {"capabilities": {"add": ["CHOWN", "SYS_ADMIN"]}}}]},
             "capabilities SYS_ADMIN of c"),
    "hostPath": ({"volumes": [{"name": "v", "hostPath": {"path": "/"}}]}, "hostPath /"),
    "hostPort": ({"containers": [{"name": "c", "ports": [{"containerPort": 80, "hostPort": 80}]}]}, "hostPort 80 of c"),
    "sysctl": ({"securityContext": {"sysctls": [{"name": "kernel.msgmax", "value": "1"}]}}, "sysctl kernel.msgmax"),
    "selinux": ({"securityContext": {"seLinuxOptions": {"type": "spc_t"}}}, "seLinuxOptions of the pod"),
    "procMount": ({"containers": [{"name": "c", "securityContext": {"procMount": "Unmasked"}}]}, "procMount of c"),
    "seccomp": ({"containers": [{"name": "c", "securityContext": {"seccompProfile": {"type": "Unconfined"}}}]},
                "seccomp Unconfined of c"),
    "apparmor": ({"securityContext": {"appArmorProfile": {"type": "Unconfined"}}}, "AppArmor profile of the pod"),
    "probe": ({"containers": [{"name": "c", "livenessProbe": {"tcpSocket": {"host": "10.0.0.1", "port": 22}}}]},
              "a probe or hook on another host in c"),
}


def _reach(pod: dict) -> list[str]:
    """What the agent's policy says `pod` holds of its node (backends/manifests.node_reach), by the runtime's CEL."""
    from itbench_dsl.backends.manifests import CEL_ANNOTATIONS, CEL_CONTAINERS, node_reach
    from itbench_dsl.runtime.kyverno import cel

    variables = [{"name": "containers", "expression": CEL_CONTAINERS.format("object.spec")},
                 {"name": "annotations", "expression": CEL_ANNOTATIONS.format("object")},
                 {"name": "reach", "expression": node_reach("object.spec", "variables.containers",
                                                            "variables.annotations")}]
    environment = cel._environment({"variables": variables}, pod, {})
    return environment.run(cel._parsed("variables.reach"), {})


def test_the_agents_pods_are_held_to_the_baseline_level():
    """node_reach, the agent policy's list of a pod's hold on its node, refuses what Pod Security's baseline level
    refuses (runtime/kyverno/pss.py, the other home of that list) and passes what it passes."""
    from itbench_dsl.runtime.kyverno.pss import evaluate

    def pod(spec: dict, annotations: dict | None = None) -> dict:
        spec = {"containers": [{"name": "c", "image": "x"}], **json.loads(json.dumps(spec))}
        return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "annotations": annotations or {}},
                "spec": spec}

    for name, (spec, said) in BASELINE_BREAKERS.items():
        assert evaluate({"level": "baseline"}, pod(spec))[0] == "fail", name
        assert said in _reach(pod(spec)), name
    unconfined = pod({}, {"container.apparmor.security.beta.kubernetes.io/c": "unconfined"})
    assert _reach(unconfined) == ["AppArmor container.apparmor.security.beta.kubernetes.io/c=unconfined"]
    fine = pod({"securityContext": {"sysctls": [{"name": "net.ipv4.tcp_syncookies", "value": "1"}],
                                    "seccompProfile": {"type": "RuntimeDefault"}},
                "containers": [{"name": "c", "ports": [{"containerPort": 80}], "securityContext": {
                    "capabilities": {"add": ["NET_BIND_SERVICE"]}, "privileged": False, "procMount": "Default"}}],
                "volumes": [{"name": "v", "emptyDir": {}}]},
               {"container.apparmor.security.beta.kubernetes.io/c": "runtime/default"})
    assert evaluate({"level": "baseline"}, fine)[0] == "pass" and _reach(fine) == []


def test_the_compiled_policy_refuses_what_the_old_object_did_not_hold():
    """The agent's policy, compiled: its third validation refuses a pod or template whose hold on its node
    (node_reach) the old object lacked; the real API server's answer: tests/run/test_local_cluster.py."""
    objects = [d for d in yaml.safe_load_all(_compiled(OTEL).files["manifests/agent-access.yaml"]) if d]
    policy = next(o for o in objects if o["kind"] == "ValidatingAdmissionPolicy")
    variables = {v["name"]: v["expression"] for v in policy["spec"]["variables"]}
    assert variables["kept"].startswith("request.operation == 'UPDATE' ? ") and "variables.oldPod" in variables["kept"]
    assert "'hostPath ' + v.hostPath.path" in variables["reach"] and "'SYS_ADMIN'" not in variables["reach"]
    assert policy["spec"]["validations"][2]["expression"] == (
        "request.resource.resource == 'secrets' || variables.reach.all(x, x in variables.kept)")


def test_e4010_pods_the_agent_may_create_without_the_admission_policy():
    from itbench_dsl import agent_view

    result = _compiled(OTEL)
    files = dict(result.files)
    objects = [d for d in yaml.safe_load_all(files["manifests/agent-access.yaml"]) if d]

    def found():
        files["manifests/agent-access.yaml"] = yaml.safe_dump_all(objects).encode()
        return [f for f in agent_view.findings(result.scenario, files, objects=agent_view.from_files(files))
                if f.where == "manifests/agent-access.yaml"]

    assert found() == []
    objects = [o for o in objects if o["kind"] != "ValidatingAdmissionPolicyBinding"]
    taken = found()
    assert taken and {f.verb for f in taken} == {"take"}
    # one finding per rule: the core group's (pods), apps' and batch's
    assert {f.text.split()[0] for f in taken} == {"create"} and "create pods" in {f.text for f in taken}
    assert len({f.field for f in taken}) == len(taken) >= 3
    assert "token of service account `otel-demo/" in taken[0].message() and "pod_guard" in taken[0].hint()


# ---- E2037: a posed `mitigate` the agent cannot perform -----------------------------------------------------

SCHEDULED = 'fault pod_chaos on deployment "cart" {\n    action = pod_kill\n    every = 30s\n  }'


def _e2037(body: str, tasks: str = "", mitigation: str = 'mitigated when { deployment "cart" ready }') -> list[str]:
    expect = f'expect {{\n    root_cause deployment "cart"\n    alert KubePodNotReady on pod "cart-*"\n    {mitigation}\n  }}'
    _, diags = compile_text(SHOP.format(name="shop-e", body=f"{tasks}\n  {body}\n  {expect}"))
    return [d.message for d in diags.items if d.code == "E2037"]


def test_e2037_the_grader_needs_a_chaos_experiment_gone():
    """An experiment acts until it is deleted or paused: the default grader checks it gone, and the agent may not
    list Chaos Mesh's kinds."""
    found = _e2037(CHAOS)
    assert len(found) == 1 and "PodChaos `chaos-mesh/" in found[0] and "`pod_chaos`" in found[0]


def test_e2037_a_predicate_that_names_the_tool_object():
    name = "shop-5d0c9a1e2b"
    found = _e2037(SCHEDULED.replace("every = 30s", f'every = 30s\n    name = "{name}"'), mitigation=f'mitigated when {{ schedule "{name}" absent  deployment "cart" ready }}')
    # one finding, at the predicate (the fault whose object it names is not reported again)
    assert found == [f"`mitigate` is posed, and this predicate needs the agent to act on the Schedule "
                     f"`chaos-mesh/{name}`, which its access does not let it list and delete (schedules.chaos-mesh.org)"]


def test_e2037_a_schedule_restarts_the_fault_whatever_the_grader_reads():
    found = _e2037(SCHEDULED, mitigation='mitigated when only { deployment "cart" ready }')
    assert len(found) == 1 and "Schedule `chaos-mesh/" in found[0] and "starts the experiment again" in found[0]


def test_e2037_leaves_what_the_agent_can_do_or_is_not_asked():
    # a one-shot experiment the grader does not ask gone: readiness decides, the agent acts on the application
    assert not _e2037(CHAOS, mitigation='mitigated when only { deployment "cart" ready }')
    # diagnosis only: nothing to undo
    assert not _e2037(SCHEDULED, tasks="tasks diagnose", mitigation="")
    assert not _e2037(SCHEDULED, tasks="tasks detect, localize", mitigation="")
    # a fault on the application's own objects
    assert not _e2037('fault scaled_to_zero on deployment "cart"')


def test_e2037_a_prompt_that_cites_the_tools_commands_grants_them(monkeypatch):
    """The task stands where the prompt hands the agent the tool: the rights its cited commands need are granted
    (manifests.agent_access), and with them the agent may find and end the experiment."""
    monkeypatch.setitem(access.DOMAIN_COMMANDS, "sre", ("kubectl get podchaos -A", "kubectl get schedules -A",
                                                        "kubectl -n chaos-mesh delete podchaos,schedules x"))
    assert not _e2037(CHAOS)
    assert not _e2037(SCHEDULED)
    # listing alone does not end it
    monkeypatch.setitem(access.DOMAIN_COMMANDS, "sre", ("kubectl get podchaos -A",))
    assert _e2037(CHAOS)


def test_no_w2017_where_the_agent_is_not_asked_to_repair():
    """A diagnosis-only scenario's solution is the operator's: its step on a fault tool's object is no task of the
    agent's."""
    from itbench_dsl.analysis.solutions import _denied

    body = (SCHEDULED + '\n  solution "Remove it" {\n    step "Delete the schedule" run '
            '"kubectl -n chaos-mesh delete schedule x"\n  }')
    result, diags = compile_text(SHOP.format(name="shop-d", body="tasks diagnose\n  " + body + '\n  expect {\n    '
                                             'root_cause deployment "cart"\n  }'))
    assert not diags.has_errors, [d.message for d in diags.items]
    assert _denied(result.scenario) == []


def test_what_a_token_holds_beyond_its_access():
    """access.held_beyond reads a SelfSubjectRulesReview's status against the agent's access: its own rules and what
    every user holds (self reviews, discovery URLs, public trust bundles) are not counted; a right the cluster's own
    bindings add (a wildcard, another group's resource, a URL such as /metrics) is, as the run's handover names it."""
    objects = [
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "agent", "namespace": "shop"}},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role", "metadata": {"name": "agent", "namespace": "shop"},
         "rules": [{"apiGroups": [""], "resources": ["pods", "services"], "verbs": ["get", "list"]}]},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
         "metadata": {"name": "agent", "namespace": "shop"},
         "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "agent"},
         "subjects": [{"kind": "ServiceAccount", "name": "agent", "namespace": "shop"}]},
    ]
    own = {"resourceRules": [
        {"verbs": ["create"], "apiGroups": ["authorization.k8s.io"], "resources": ["selfsubjectaccessreviews",
                                                                               "selfsubjectrulesreviews"]},
        {"verbs": ["get", "list", "watch"], "apiGroups": ["certificates.k8s.io"], "resources": ["clustertrustbundles"]},
        {"verbs": ["get", "list"], "apiGroups": [""], "resources": ["pods", "services"]}],
        "nonResourceRules": [{"verbs": ["get"], "nonResourceURLs": ["/api", "/api/*", "/version", "/healthz"]}]}
    assert access.held_beyond(objects, "agent", "shop", own, "shop") == []
    # the same rules in a namespace the access does not reach are beyond it
    assert access.held_beyond(objects, "agent", "shop", own, "default") == [
        "get pods", "get services", "list pods", "list services"]
    wider = {"resourceRules": [*own["resourceRules"],
                               {"verbs": ["*"], "apiGroups": ["chaos-mesh.org"], "resources": ["*"]},
                               {"verbs": ["get"], "apiGroups": [""], "resources": ["secrets"], "resourceNames": ["db"]}],
             "nonResourceRules": [{"verbs": ["get"], "nonResourceURLs": ["/metrics", "/version"]}]}
    assert access.held_beyond(objects, "agent", "shop", wider, "shop") == [
        "* *.chaos-mesh.org", "get /metrics", "get secrets (db)"]


# ---- what the agent may do: the application's namespaces, not the cluster's secrets, namespaces or nodes ------


def _ask(objects, scenario):
    account, home = scenario.agent.service_account, scenario.agent.namespaces[0]
    return lambda *r: access.allows(objects, account, home, access.Request(*r))


def test_the_access_keeps_the_agent_to_the_scenarios_namespaces():
    """An SRE agent reads and changes the application's namespaces, reads the cluster's namespaces and nodes and
    changes them (a label, a cordon), reads kube-system: never its Secrets, never a namespace or node made or
    removed, never a Secret of another namespace."""
    body = ('fault scaled_to_zero on deployment "cart"\n  '
            + EXPECT.format(root='deployment "cart"', alert='KubePodNotReady on pod "cart-*"'))
    result, diags = compile_text(SHOP.format(name="shop-z", body=body))
    objects = [d for d in yaml.safe_load_all(result.files["manifests/agent-access.yaml"]) if d]
    ask = _ask(objects, result.scenario)
    assert ask("get", "", "secrets", "shop") and ask("patch", "", "secrets", "shop")
    assert ask("list", "", "pods", "kube-system") and ask("get", "", "configmaps", "kube-system")
    assert ask("patch", "", "namespaces", None, "shop") and ask("patch", "", "nodes", None, "node-1")
    assert ask("create", "", "namespaces", None)  # the application's, deleted by a fault, made again
    assert ask("list", "", "nodes", None) and ask("get", "", "namespaces", None, "kube-system")
    for request in [("get", "", "secrets", "kube-system", "bootstrap-token-abcdef"), ("list", "", "secrets", "kube-system"),
                    ("list", "", "secrets", None), ("get", "", "secrets", "default"),
                    ("delete", "", "namespaces", None, "shop"),
                    ("delete", "", "namespaces", None, "kube-system"), ("create", "", "nodes", None),
                    ("delete", "", "nodes", None, "node-1"), ("patch", "", "pods", "kube-system")]:
        assert not ask(*request), request
    # no label of the harness's on what the agent reads of its own (agent_view: a marker)
    assert not any((o["metadata"].get("labels") or {}) or o["metadata"].get("annotations") for o in objects)


def test_a_rule_naming_objects_allows_those_alone():
    """resourceNames, as the RBAC authorizer reads them: a request on a named object is allowed by a rule naming it,
    a request on every object (list, create) or on another object is not."""
    objects = [{"kind": "Role", "metadata": {"name": "r", "namespace": "a"},
                "rules": [{"apiGroups": [""], "resources": ["configmaps"], "resourceNames": ["cfg"],
                           "verbs": ["get", "patch"]}]},
               {"kind": "RoleBinding", "metadata": {"name": "r", "namespace": "a"},
                "roleRef": {"kind": "Role", "name": "r"}, "subjects": [{"kind": "ServiceAccount", "name": "sa",
                                                                          "namespace": "a"}]}]
    ask = lambda *r: access.allows(objects, "sa", "a", access.Request(*r))  # noqa: E731
    assert ask("get", "", "configmaps", "a", "cfg") and ask("patch", "", "configmaps", "a", "cfg")
    assert not ask("get", "", "configmaps", "a", "other") and not ask("list", "", "configmaps", "a")
    assert not ask("get", "", "configmaps", "b", "cfg")
    assert [r.name for r in access.command_rights("kubectl -n a get cm cfg other", "a")] == ["cfg", "other"]
    assert {r.name for r in access.command_rights("kubectl -n a scale deployment/web --replicas=1", "a")} == {"web"}
    assert access.command_rights("kubectl cordon node-1", "a")[-1] == access.Request("patch", "", "nodes", None,
                                                                                      "node-1")


def test_e4026_a_solution_whose_changes_the_agents_access_refuses():
    """A step judged by what its replay changes, whatever command made the change (here a namespace created and
    one deleted: no agent may delete a namespace)."""
    from itbench_dsl.analysis.solutions import findings

    body = ('fault scaled_to_zero on deployment "cart"\n  '
            + EXPECT.format(root='deployment "cart"', alert='KubePodNotReady on pod "cart-*"') + '''
  solution "Start over" {
    step "Scale" run "kubectl -n shop scale deployment/cart --replicas=1"
    step "Start over" run "kubectl delete namespace shop"
  }''')
    result, diags = compile_text(SHOP.format(name="shop-w", body=body))
    found = [f for f in findings(result.scenario, result.files) if "access refuses the changes" in f.message]
    assert [(f.code, f.step) for f in found] == [("E4026", (0, 1))], [f.message for f in found]
    assert "delete namespaces shop cluster-wide" in found[0].message


def _library_paths() -> list[str]:
    return sorted(str(p.relative_to(SCENARIOS)) for p in SCENARIOS.rglob("*.itb"))


@pytest.mark.library
@pytest.mark.parametrize("path", _library_paths())
def test_every_library_solution_is_within_the_agents_access(path):
    """Each solution of the library, replayed, makes only changes the agent's access allows (create, patch, delete,
    by group, resource, namespace and name, as the RBAC authorizer judges them), and its kubectl commands make only
    requests it allows: the narrowed access still lets the agent do what the scenario's own answer does."""
    from itbench_dsl.analysis.solutions import _denied, findings

    result, diags = compile_text((SCENARIOS / path).read_bytes(), str(SCENARIOS / path), validate=False)
    if result.scenario is None or not result.files:
        pytest.skip("does not compile")
    refused = [f.message for f in findings(result.scenario, result.files) if "access refuses" in f.message]
    refused += [f.message for f in _denied(result.scenario) if f.code == "E4026"]
    assert refused == []


def test_label_and_annotation_changes_are_no_object_names():
    requests = access.command_rights("kubectl label namespace shop team=a pod-security.kubernetes.io/enforce-", "x")
    assert {(r.verb, r.resource, r.name) for r in requests} == {("get", "namespaces", "shop"),
                                                                 ("patch", "namespaces", "shop")}


def test_the_agent_never_deletes_a_namespace_or_makes_a_node():
    """A namespace may be made again (the application's, deleted by a fault) and relabelled, never deleted (all in
    it goes); nodes may be cordoned, none made or removed."""
    result = _compiled(OTEL)
    objects = [o for o in yaml.safe_load_all(result.files["manifests/agent-access.yaml"]) if o]
    agent = result.scenario.agent

    def may(verb: str, resource: str, name: str) -> bool:
        return access.allows(objects, agent.service_account, agent.namespaces[0],
                             access.Request(verb, "", resource, None, name))

    assert may("patch", "namespaces", "otel-demo") and may("create", "namespaces", "")
    assert not may("delete", "namespaces", "otel-demo") and not may("delete", "namespaces", "chaos-mesh")
    assert may("patch", "nodes", "node-1") and not may("delete", "nodes", "node-1") and not may("create", "nodes", "")
