"""The CISO policy-gap catalogue (itbench_dsl/ciso) and its use from the language.

* every catalogue entry's violating and compliant objects validate (vendored Kubernetes 1.33
  schemas and the kubernetes-validate CLI), the violating one breaks the control and the
  compliant one keeps it, asserted on the rendered fields the control is about;
* each task class compiles (the scenarios of scenarios/ciso), catalogue objects land in the
  right files, kyverno_update ships its too-weak ClusterPolicy (valid against Kyverno's schema);
* RHEL9 host controls compile to well-formed Ansible play lists;
* unknown catalogue ids, unsuitable task classes and misplaced catalogue controls are located errors.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest
import yaml

from support.compiling import compile_ok as shared_compile_ok
from support.compiling import compile_text

from itbench_dsl.ciso.k8s import object_names
from itbench_dsl import ciso
from itbench_dsl.backends import ciso as ciso_backend
from itbench_dsl.ciso.tasks import CISO_TASKS
from itbench_dsl.validate import validate_object

from backends.test_kubernetes_validate import _schema_version, _validator_command

REPO = Path(__file__).resolve().parents[2]
NS = "ciso-target"
KYVERNO_SCHEMA = REPO.parent / "shared" / "reference" / "kyverno" / "schemas" / "kyverno.io" / "clusterpolicy_v1.json"
DNS1123 = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?$")


def compile_ok(text: str) -> dict[str, bytes]:
    return shared_compile_ok(text).files


def docs(files: dict[str, bytes], name: str) -> list:
    return [d for d in yaml.safe_load_all(files[name].decode())] if name in files else []


def scenario(control: str, task: str, topology: str = f'namespace "{NS}"', extra: str = "", body: str = "") -> str:
    head = f'control "{control}" {{\n    {body}\n  }}' if body else f'control "{control}"'
    return f'''scenario "ciso-test" {{
  domain ciso
  complexity medium
  description "A catalogue control."
  {head}
  task {task}
  topology {{
    {topology}
  }}
  {extra}
}}
'''


# ---- the catalogue ---------------------------------------------------------------------------

def test_catalogue_size_and_ids():
    assert len(ciso.K8S_CONTROLS) >= 25 and len(ciso.HOST_CONTROLS) >= 8
    assert len(ciso.CATALOGUE) == len(ciso.K8S_CONTROLS) + len(ciso.HOST_CONTROLS)  # ids are unique
    sections = {c.section.rsplit(".", 1)[0] for c in ciso.K8S_CONTROLS}
    assert {"5.1", "5.2", "5.3", "5.4", "5.7"} <= sections
    for c in ciso.K8S_CONTROLS:
        assert c.id == f"cis-k8s-{c.section}" and c.title and c.violating and c.compliant
        assert set(c.classes) <= set(CISO_TASKS) and "ansible_opa" not in c.classes
        assert all(u in ciso.CATALOGUE for u in c.update_from)
    assert len({c.slug for c in ciso.K8S_CONTROLS}) == len(ciso.K8S_CONTROLS)
    for c in ciso.HOST_CONTROLS:
        assert c.id.startswith("rhel9-") and c.classes == ("ansible_opa",) and c.violating != c.compliant


K8S = {c.id: c for c in ciso.K8S_CONTROLS}


@pytest.mark.parametrize("control_id", list(K8S))
def test_objects_validate_and_are_named_stably(control_id):
    control = K8S[control_id]
    for violating in (True, False):
        objects = control.objects(NS, violating)
        assert objects and objects == control.objects(NS, violating)  # a pure function
        for obj in objects:
            issues = validate_object(obj)
            assert not issues, f"{control_id} {obj['kind']}: " + "; ".join(f"{i.path}: {i.message}" for i in issues)
            meta = obj["metadata"]
            # no label, and no word of the name, tells the violating objects from the compliant ones
            assert DNS1123.match(meta["name"]) and "app.kubernetes.io/managed-by" not in meta.get("labels", {})
            assert object_names(control.slug)[0 if violating else 1] in meta["name"]
            assert not {"gap", "ok", "violating", "compliant"} & set(re.split(r"[-.]", meta["name"]))
            if obj["kind"].startswith("Cluster"):
                assert "namespace" not in meta and meta["name"].startswith(NS)
            elif control_id != "cis-k8s-5.7.4" or not violating:
                assert meta["namespace"] == NS
    gap = {(o["kind"], o["metadata"].get("namespace"), o["metadata"]["name"]) for o in control.objects(NS, True)}
    ok = {(o["kind"], o["metadata"].get("namespace"), o["metadata"]["name"]) for o in control.objects(NS, False)}
    assert not gap & ok


def _pod(objects):
    (deployment,) = [o for o in objects if o["kind"] == "Deployment"]
    return deployment["spec"]["template"]["spec"]


def _container(objects):
    return _pod(objects)["containers"][0]


def _rules(objects):
    return [r for o in objects if o["kind"] in ("Role", "ClusterRole") for r in o["rules"]]


def _kinds(objects):
    return sorted(o["kind"] for o in objects)


# the field each control is about, read from the rendered manifests: (getter, violating value, compliant value)
FIELDS = {
    "cis-k8s-5.1.1": (lambda o: [b["roleRef"]["name"] for b in o if b["kind"].endswith("Binding")],
                      ["cluster-admin"], ["view"]),
    "cis-k8s-5.1.2": (lambda o: sorted({r for rule in _rules(o) for r in rule["resources"]}), ["secrets"], ["configmaps"]),
    "cis-k8s-5.1.3": (lambda o: _rules(o)[0]["verbs"], ["*"], ["get", "list"]),
    "cis-k8s-5.1.4": (lambda o: "create" in _rules(o)[0]["verbs"], True, False),
    "cis-k8s-5.1.5": (lambda o: _pod(o).get("serviceAccountName"), "default", object_names("default-sa")[1]),
    "cis-k8s-5.1.6": (lambda o: _pod(o)["automountServiceAccountToken"], True, False),
    "cis-k8s-5.1.7": (lambda o: [s["name"] for b in o if b["kind"] == "RoleBinding" for s in b["subjects"]],
                      ["system:masters"], [object_names("system-masters")[1]]),
    "cis-k8s-5.1.8": (lambda o: sorted({v for r in _rules(o) for v in r["verbs"]}),
                      ["bind", "escalate", "impersonate"], ["get", "list"]),
    "cis-k8s-5.1.9": (lambda o: "create" in _rules(o)[0]["verbs"], True, False),
    "cis-k8s-5.1.10": (lambda o: "nodes/proxy" in _rules(o)[0]["resources"], True, False),
    "cis-k8s-5.1.11": (lambda o: "certificatesigningrequests/approval" in _rules(o)[0]["resources"], True, False),
    "cis-k8s-5.1.12": (lambda o: "create" in _rules(o)[0]["verbs"], True, False),
    "cis-k8s-5.1.13": (lambda o: "serviceaccounts/token" in _rules(o)[0]["resources"], True, False),
    "cis-k8s-5.2.2": (lambda o: _container(o)["securityContext"]["privileged"], True, False),
    "cis-k8s-5.2.3": (lambda o: _pod(o).get("hostPID"), True, None),
    "cis-k8s-5.2.4": (lambda o: _pod(o).get("hostIPC"), True, None),
    "cis-k8s-5.2.5": (lambda o: _pod(o).get("hostNetwork"), True, None),
    "cis-k8s-5.2.6": (lambda o: _container(o)["securityContext"]["allowPrivilegeEscalation"], True, False),
    "cis-k8s-5.2.7": (lambda o: (_pod(o)["securityContext"]["runAsNonRoot"], _pod(o)["securityContext"]["runAsUser"]),
                      (False, 0), (True, 101)),
    "cis-k8s-5.2.8": (lambda o: _container(o)["securityContext"]["capabilities"],
                      {"add": ["NET_RAW"]}, {"drop": ["ALL"]}),
    "cis-k8s-5.2.9": (lambda o: _container(o)["securityContext"]["capabilities"].get("add"), ["SYS_ADMIN"], None),
    "cis-k8s-5.2.10": (lambda o: _container(o)["securityContext"].get("capabilities"), None, {"drop": ["ALL"]}),
    "cis-k8s-5.2.12": (lambda o: [v for v in _pod(o).get("volumes", []) if "hostPath" in v] != [], True, False),
    "cis-k8s-5.2.13": (lambda o: _container(o)["ports"][0].get("hostPort"), 8080, None),
    "cis-k8s-5.3.2": (lambda o: _kinds(o), ["Deployment"], ["Deployment", "NetworkPolicy"]),
    "cis-k8s-5.4.1": (lambda o: ("env" in _container(o), "volumeMounts" in _container(o)), (True, False), (False, True)),
    "cis-k8s-5.7.2": (lambda o: _pod(o)["securityContext"].get("seccompProfile"), None, {"type": "RuntimeDefault"}),
    "cis-k8s-5.7.3": (lambda o: (_pod(o).get("securityContext") is None, _container(o).get("securityContext") is None),
                      (True, True), (False, False)),
    "cis-k8s-5.7.4": (lambda o: [x["metadata"]["namespace"] for x in o], ["default"], [NS]),
}


def test_every_control_has_a_field_check():
    assert set(FIELDS) == set(K8S)


@pytest.mark.parametrize("control_id", list(K8S))
def test_violating_violates_and_compliant_complies(control_id):
    control = K8S[control_id]
    gap, ok = control.objects(NS, True), control.objects(NS, False)
    get, bad, good = FIELDS[control_id]
    assert get(gap) == bad and get(ok) == good
    assert control.probe(gap) and not control.probe(ok)


# controls whose gaps necessarily overlap: an added NET_RAW capability is an added capability with none dropped,
# and a workload with no security context at all breaks every pod-security control
# a privileged container may not also forbid privilege escalation (the API server refuses the pair), so it
# breaks 5.2.6 too; an added capability is one assigned (5.2.10), ALL dropped or not
OVERLAPS = {"cis-k8s-5.2.8": {"cis-k8s-5.2.9", "cis-k8s-5.2.10"}, "cis-k8s-5.2.10": {"cis-k8s-5.2.8"},
            "cis-k8s-5.2.9": {"cis-k8s-5.2.10"},
            "cis-k8s-5.2.2": {"cis-k8s-5.2.6"},
            "cis-k8s-5.7.3": {c for c in K8S if c.startswith(("cis-k8s-5.2.", "cis-k8s-5.7.2"))}}


@pytest.mark.parametrize("control_id", [c for c in K8S if "Deployment" in _kinds(K8S[c].objects(NS, True))])
def test_workloads_break_only_their_control(control_id):
    """A violating workload breaks its own control and no other (the hardened baseline keeps the rest)."""
    gap = K8S[control_id].objects(NS, True)
    broken = {c.id for c in K8S.values() if c.id != control_id and c.probe(gap)}
    # RBAC probes do not look at workloads; the default service account is the baseline's (5.1.5 is its own gap)
    broken -= {"cis-k8s-5.1.5", "cis-k8s-5.3.2"}
    assert broken <= OVERLAPS.get(control_id, set()), broken


def test_catalogue_objects_pass_kubernetes_validate(tmp_path: Path):
    files = []
    for control in ciso.K8S_CONTROLS:
        for violating in (True, False):
            for index, obj in enumerate(control.objects(NS, violating)):
                target = tmp_path / f"{control.slug}-{violating}-{index}.yaml"
                target.write_text(yaml.safe_dump(obj, sort_keys=False), encoding="utf-8")
                files.append(target)
    run = subprocess.run([*_validator_command(), "--strict", "--kubernetes-version", _schema_version(), *map(str, files)],
                         capture_output=True, text=True, timeout=120, env={**os.environ, "NO_COLOR": "1"})
    output = run.stdout + run.stderr
    problems = [line for line in output.splitlines() if line.startswith(("ERROR", "WARN"))]
    assert run.returncode == 0 and not problems, "\n".join(problems or [output])


def _kyverno_validator():
    if not KYVERNO_SCHEMA.is_file():
        pytest.skip("Kyverno's ClusterPolicy schema is not in the shared reference data")
    from jsonschema import Draft7Validator
    return Draft7Validator(json.loads(KYVERNO_SCHEMA.read_text()))


def test_update_policies_are_valid_cluster_policies():
    validator = _kyverno_validator()
    updatable = [c for c in ciso.K8S_CONTROLS if "kyverno_update" in c.classes]
    assert len(updatable) >= 8
    for control in updatable:
        policy = ciso_backend.cluster_policy(ciso.policy_name(NS), NS, [ciso.CATALOGUE[u] for u in control.update_from])
        errors = [e.message for e in validator.iter_errors(policy)]
        assert not errors, (control.id, errors)
        # the existing policy does not already cover the control: the violating workload passes its rules
        assert control.id not in control.update_from
        gap = control.objects(NS, True)
        assert not any(ciso.CATALOGUE[u].probe(gap) for u in control.update_from), control.id
    broken = ciso_backend.cluster_policy("x", NS, [K8S["cis-k8s-5.2.6"]])
    broken["spec"]["validationFailureAction"] = "Block"
    assert list(validator.iter_errors(broken))


# ---- RHEL9 host controls ---------------------------------------------------------------------

MODULES = {"ansible.builtin.lineinfile", "ansible.builtin.service", "ansible.builtin.command"}


@pytest.mark.parametrize("control", ciso.HOST_CONTROLS, ids=lambda c: c.id)
def test_host_playbooks_are_well_formed(control):
    from itbench_dsl import yamlout
    for violating in (True, False):
        plays = yaml.safe_load(yamlout.dump(control.playbook("rhel9_servers", violating)))
        assert isinstance(plays, list) and len(plays) == 1
        (play,) = plays
        assert play["hosts"] == "rhel9_servers" and play["become"] is True and play["name"]
        assert play["tasks"]
        for task in play["tasks"]:
            modules = [k for k in task if k.startswith("ansible.")]
            assert task.get("name") and len(modules) == 1 and modules[0] in MODULES, task
        value = control.violating if violating else control.compliant
        if control.kind == "line":
            (line,) = [t["ansible.builtin.lineinfile"] for t in play["tasks"] if "ansible.builtin.lineinfile" in t]
            assert line["path"] == control.path and line["line"] == f"{control.key} {value}"
            assert re.match(line["regexp"], f"#{control.key} whatever") and re.match(line["regexp"], line["line"])
            assert not re.match(line["regexp"], f"{control.key}Other x")
        else:
            services = [t["ansible.builtin.service"] for t in play["tasks"] if "ansible.builtin.service" in t]
            assert services[0]["name"] == control.key and services[0]["enabled"] is (not violating)


def test_sshd_x11_matches_itbench_class_3():
    """The X11 control opens and closes the gap as ITBench's fault_inject.yml / fault_removal.yml do."""
    control = ciso.CATALOGUE["rhel9-sshd-x11-forwarding"]
    inject, revert = control.tasks(True), control.tasks(False)
    assert inject[0]["ansible.builtin.lineinfile"]["line"] == "X11Forwarding yes"
    assert revert[0]["ansible.builtin.lineinfile"]["line"] == "X11Forwarding no"
    assert inject[1]["ansible.builtin.service"] == {"name": "sshd", "state": "restarted"}


def test_host_control_compiles_to_playbooks_with_its_group():
    files = compile_ok(scenario("rhel9-sshd-permit-root-login", "ansible_opa", body='hosts = "bastions"'))
    inject, revert = yaml.safe_load(files["inject/playbook.yml"]), yaml.safe_load(files["revert/playbook.yml"])
    gap, baseline = ciso.host_groups("bastions", "rhel9-sshd-permit-root-login")
    assert inject[0]["hosts"] == revert[0]["hosts"] == gap and gap.startswith("bastions_")
    assert [p["hosts"] for p in inject] == [gap, baseline]  # the compliant group gets the compliant setting
    assert inject[0]["tasks"][0]["ansible.builtin.lineinfile"]["line"] == "PermitRootLogin yes"
    assert revert[0]["tasks"][0]["ansible.builtin.lineinfile"]["line"] == "PermitRootLogin no"
    assert "inject/apply.yaml" not in files and "revert/delete.yaml" not in files
    ir_json = json.loads(files["scenario.json"])
    assert ir_json["compliance"]["goal"] == "Ensure SSH root login is disabled"
    assert ir_json["compliance"]["benchmark"] == ciso.RHEL9_BENCHMARK
    assert ir_json["compliance"]["gaps"] == [{"api_version": ciso.HOST_API, "kind": "HostGroup", "namespace": None,
                                              "name": gap}]
    default = compile_ok(scenario("rhel9-sshd-permit-root-login", "ansible_opa"))
    assert yaml.safe_load(default["inject/playbook.yml"])[0]["hosts"] == ciso.host_groups(
        ciso.DEFAULT_HOSTS, "rhel9-sshd-permit-root-login")[0]


def test_host_groups_say_nothing_of_which_hosts_comply():
    """Two groups named alike (`<hosts>_<token>`), neither a word saying what its hosts are, and which one holds
    the gap is not always the first: the prompt's sorted host pattern does not tell either."""
    firsts = set()
    for control in [c for c in ciso.CATALOGUE.values() if isinstance(c, ciso.HostControl)]:
        gap, baseline = ciso.host_groups(ciso.DEFAULT_HOSTS, control.id)
        assert gap != baseline and {gap.rpartition("_")[0], baseline.rpartition("_")[0]} == {ciso.DEFAULT_HOSTS}
        assert len(gap) == len(baseline) and ciso.is_group_name(gap) and ciso.is_group_name(baseline)
        assert not (set(re.split(r"[_\W]+", gap + "_" + baseline)) & ciso.HOST_GROUP_TELLING)
        firsts.add(gap < baseline)
    assert firsts == {True, False}


def test_a_host_group_named_after_its_hosts_state_is_found():
    from itbench_dsl import agent_view
    from itbench_dsl.compiler import compile_source
    from itbench_dsl.diagnostics import Diagnostics

    text = scenario("rhel9-sshd-permit-root-login", "ansible_opa", body='hosts = "hardened"')
    result = compile_source(text.encode(), "s.itb", Diagnostics())
    found = [f for f in agent_view.findings(result.scenario, result.files) if f.kind == "HostGroup"]
    assert found and all(f.field == "hosts" and "`hardened`" in f.why for f in found)


# ---- the language: catalogue controls in scenarios --------------------------------------------

@pytest.mark.parametrize("control_id", ["cis-k8s-5.2.5", "cis-k8s-5.1.1", "cis-k8s-5.3.2", "cis-k8s-5.7.4"])
def test_catalogue_control_generates_gap_and_compliant_objects(control_id):
    task = next(t for t in ("kyverno_policy", "opa_kubectl") if t in K8S[control_id].classes)
    files = compile_ok(scenario(control_id, task))
    control = K8S[control_id]
    gap, ok = control.objects(NS, True), control.objects(NS, False)
    assert docs(files, "inject/apply.yaml") == gap
    topology = docs(files, "manifests/topology.yaml")
    assert all(o in topology for o in ok) and not any(o in topology for o in gap)
    deleted = docs(files, "revert/delete.yaml")
    assert [(d["kind"], d["metadata"]["name"]) for d in deleted] == [(o["kind"], o["metadata"]["name"]) for o in gap]
    ir_json = json.loads(files["scenario.json"])["compliance"]
    assert ir_json["control"] == control_id and ir_json["goal"] == control.title
    assert ir_json["benchmark"] == "CIS Kubernetes Benchmark"
    assert len(ir_json["gaps"]) == len(gap) and len(ir_json["compliant"]) == len(ok)
    assert control.title in files["prompt.md"].decode()
    assert files == compile_ok(scenario(control_id, task))  # same source, same bytes


def test_goal_can_be_overridden_and_explicit_gaps_keep_working():
    files = compile_ok(scenario("cis-k8s-5.2.5", "opa_kubectl", body='goal = "No host networking."'))
    assert json.loads(files["scenario.json"])["compliance"]["goal"] == "No host networking."
    explicit = scenario("cis-k8s-5.2.5", "kyverno_policy", topology=f'''namespace "{NS}"
    deployment "web" {{
      host_network = true
      image = "nginx:1.27"
    }}''', extra='gap deployment "web"')
    files = compile_ok(explicit)
    compliance = json.loads(files["scenario.json"])["compliance"]
    assert compliance["goal"] == K8S["cis-k8s-5.2.5"].title  # the catalogue's text by default
    assert [g["name"] for g in compliance["gaps"]] == ["web"] and compliance["compliant"] == []
    assert [o["metadata"]["name"] for o in docs(files, "inject/apply.yaml")] == ["web"]


def test_kyverno_update_ships_the_existing_policy():
    validator = _kyverno_validator()
    files = compile_ok(scenario("cis-k8s-5.2.7", "kyverno_update"))
    (policy,) = docs(files, "manifests/existing-policy.yaml")
    assert not list(validator.iter_errors(policy)) and validate_object(policy) == []  # upstream and vendored schema
    assert policy["kind"] == "ClusterPolicy" and policy["metadata"]["name"] == f"{NS}-security-controls"
    assert [r["name"] for r in policy["spec"]["rules"]] == ["cis-5-2-6-privilege-escalation", "cis-5-2-2-privileged"]
    goal = json.loads(files["scenario.json"])["compliance"]["goal"]
    assert f"`{NS}-security-controls`" in goal and "Minimize the admission of root containers." in goal
    assert "manifests/existing-policy.yaml" not in compile_ok(scenario("cis-k8s-5.2.7", "kyverno_policy"))


SCENARIOS = sorted((REPO / "scenarios" / "ciso").glob("*.itb"))


@pytest.mark.parametrize("path", SCENARIOS, ids=lambda p: p.stem)
def test_library_scenarios_compile(path):
    shared_compile_ok(path.read_bytes(), str(path), clean=True)  # no error, no warning


def test_library_covers_every_class_and_a_share_of_the_catalogue():
    classes, controls = set(), set()
    for path in SCENARIOS:
        files = compile_ok(path.read_text())
        compliance = json.loads(files["scenario.json"])["compliance"]
        classes.add(compliance["task"])
        controls.add(compliance["control"])
        if compliance["task"] == "ansible_opa":
            assert "inject/playbook.yml" in files and "revert/playbook.yml" in files
        if compliance["task"] == "kyverno_update":
            assert "manifests/existing-policy.yaml" in files
    assert classes == set(CISO_TASKS)
    assert len(controls & set(K8S)) >= 8
    assert len(controls & {c.id for c in ciso.HOST_CONTROLS}) >= 2


# ---- errors ----------------------------------------------------------------------------------

def _errors(text: str) -> list:
    _, diags = compile_text(text)
    return diags.errors()


def test_unknown_catalogue_id_is_located_with_a_suggestion():
    (error,) = _errors(scenario("cis-k8s-5.2.55", "kyverno_policy"))
    assert error.code == "E2010" and "not a control of the catalogue" in error.message
    assert (error.span.line, error.span.column) == (5, 3) and "did you mean `cis-k8s-5.2.5`?" in error.help
    (error,) = _errors(scenario("rhel9-sshd-permit-rot-login", "ansible_opa"))
    assert "rhel9-sshd-permit-root-login" in error.help


def test_bare_section_without_gap_still_asks_for_gap_objects():
    (error,) = _errors(scenario("5.2.5", "kyverno_policy"))
    assert error.code == "E2013" and "`gap`" in error.message


@pytest.mark.parametrize("control_id, task", [("cis-k8s-5.1.1", "kyverno_update"), ("cis-k8s-5.2.5", "ansible_opa"),
                                              ("rhel9-sshd-x11-forwarding", "kyverno_policy"),
                                              # judged over a namespace: a Kyverno rule needs an apiCall
                                              ("cis-k8s-5.3.2", "kyverno_policy")])
def test_unsuitable_task_class_is_located(control_id, task):
    (error,) = _errors(scenario(control_id, task))
    assert error.code == "E2010" and f"does not suit the task class `{task}`" in error.message
    assert (error.span.line, error.span.column) == (6, 3)
    assert all(f"`{c}`" in error.help for c in ciso.CATALOGUE[control_id].classes)


def test_catalogue_control_needs_one_namespace():
    (error,) = _errors(scenario("cis-k8s-5.2.5", "kyverno_policy", topology='namespace "a"\n    namespace "b"'))
    assert error.code == "E2010" and "exactly one namespace" in error.message and error.span.line == 5


def test_host_control_takes_no_gap_objects():
    text = scenario("rhel9-sshd-x11-forwarding", "ansible_opa", topology='''namespace "w"
    deployment "web" {
      image = "nginx:1.27"
    }''', extra='gap deployment "web"')
    (error,) = _errors(text)
    assert error.code == "E2010" and "takes no `gap`" in error.message


def test_hosts_only_for_host_controls():
    (error,) = _errors(scenario("cis-k8s-5.2.5", "kyverno_policy", body='hosts = "rhel9_servers"'))
    assert "hosts" in error.message and error.span.line == 6


def test_hosts_must_be_an_inventory_group_name():
    (error,) = _errors(scenario("rhel9-sshd-x11-forwarding", "ansible_opa", body='hosts = "rhel9 servers"'))
    assert error.code == "E2010" and "inventory group" in error.message
    assert (error.span.line, error.span.column) == (6, 13)


def test_compliant_without_gap_for_a_catalogue_control():
    text = scenario("cis-k8s-5.2.5", "kyverno_policy", topology=f'''namespace "{NS}"
    deployment "web" {{
      image = "nginx:1.27"
    }}''', extra='compliant deployment "web"')
    (error,) = _errors(text)
    assert error.code == "E2013" and "no `gap`" in error.message and error.span.line == 13


def test_no_code_branches_on_a_task_class_name():
    """Behaviour reads the `TaskClass` record's fields (updates, platform, collects, runnable, artefact ...),
    never compares a task's name with a class's: a new class is one record, not a hunt for comparisons."""
    import ast as python_ast
    from pathlib import Path

    from itbench_dsl.ciso.tasks import TASK_CLASSES

    package = Path(__file__).resolve().parents[2] / "itbench_dsl"
    found = []
    for path in sorted(package.rglob("*.py")):
        if path == package / "ciso" / "tasks.py":
            continue
        tree = python_ast.parse(path.read_text("utf-8"), str(path))
        for node in python_ast.walk(tree):
            if not isinstance(node, python_ast.Compare):
                continue
            operands = [node.left, *node.comparators]
            if any(isinstance(o, python_ast.Constant) and o.value in TASK_CLASSES for o in operands):
                found.append(f"{path.relative_to(package.parent)}:{node.lineno}")
    assert not found, "task-name tests: " + ", ".join(found)
