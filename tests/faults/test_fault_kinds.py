"""Fault kinds declared in the language (`fault_kind`, docs/fault-kinds.md): the standard library's
re-expressed kinds give the same bundles as their Python definitions, a project's kinds load with
`use faults`, `exec` steps reach the bundle, probes are graded, and declaration errors are located."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from itbench_dsl import compiler
from itbench_dsl.diagnostics import Diagnostics
from itbench_dsl.faults import FAULTS
from itbench_dsl.faults import declared as declared_faults
from itbench_dsl.analysis.mechanisms import check_unique_mechanisms
from itbench_dsl.runtime import evaluator as runtime
from support.compiling import yaml_documents
from support.fault_twins import TWINS

ROOT = Path(__file__).resolve().parents[2]
DECLARED = sorted(name for name, kind in FAULTS.items() if kind.declared is not None)
REEXPRESSED = sorted(name for name in DECLARED if name in TWINS)
MONGO_SCENARIO = ROOT / "scenarios/sre/hotel-reservation-mongodb-geo-revoked-role.itb"


def _compile(path: str, text: str | bytes):
    diags = Diagnostics()
    data = text.encode() if isinstance(text, str) else text
    return compiler.compile_source(data, path, diags), diags


def _library_scenarios_using(names) -> list[Path]:
    out = []
    for path in sorted((ROOT / "scenarios").rglob("*.itb")):
        text = path.read_text()
        if any(f"fault {name} " in text for name in names):
            out.append(path)
    return out


def test_at_least_five_python_kinds_are_declared_in_the_standard_library():
    assert len(REEXPRESSED) >= 5, REEXPRESSED
    for name in REEXPRESSED:
        kind, python = FAULTS[name], TWINS[name]
        assert (kind.mechanism, kind.itbench_id, kind.targets, kind.args, kind.preconditions, kind.accept,
                kind.readiness, kind.labels) == \
               (python.mechanism, python.itbench_id, python.targets, python.args, python.preconditions, python.accept,
                python.readiness, python.labels)


def test_the_library_keeps_one_kind_per_mechanism():
    check_unique_mechanisms(FAULTS.values())


@pytest.mark.parametrize("path", _library_scenarios_using(REEXPRESSED), ids=lambda p: p.stem)
def test_declared_and_python_definitions_give_the_same_bundle(path: Path, monkeypatch):
    declared, declared_diags = _compile(str(path.relative_to(ROOT)), path.read_bytes())
    assert declared.files, declared_diags.items
    for name in REEXPRESSED:
        monkeypatch.setitem(FAULTS, name, TWINS[name])
    python, _ = _compile(str(path.relative_to(ROOT)), path.read_bytes())
    assert sorted(declared.files) == sorted(python.files)
    for name in declared.files:
        assert declared.files[name] == python.files[name], name
    assert [i.args for i in declared.scenario.injections()] == [i.args for i in python.scenario.injections()]


def test_a_patch_on_a_field_the_container_lacks_takes_the_renderer_order(monkeypatch):
    """`command` is added to a container without one: the manifest's keys stay in the renderer's order."""
    text = """scenario "s" { domain sre complexity low description "d"
  topology { namespace "shop" deployment "cart" { image = "example/cart:1" port "grpc" = 7070 env { A = "1" } } }
  fault invalid_command on deployment "cart"
  expect { mitigated when { deployment "cart" ready } } }"""
    declared, diags = _compile("s.itb", text)
    assert declared.files, diags.items
    for name in REEXPRESSED:
        monkeypatch.setitem(FAULTS, name, TWINS[name])
    python, _ = _compile("s.itb", text)
    assert declared.files["inject/apply.yaml"] == python.files["inject/apply.yaml"]
    assert b"command:" in declared.files["inject/apply.yaml"]


def _fault_file(tmp_path: Path, faults: str, scenario_body: str) -> tuple[Path, str]:
    (tmp_path / "faults").mkdir(exist_ok=True)
    (tmp_path / "faults" / "mine.itb").write_text(faults)
    scenario = tmp_path / "s.itb"
    scenario.write_text(f"""scenario "s" {{ domain sre complexity low description "d"
  use faults "./faults/mine.itb"
  topology {{ namespace "shop" deployment "cart" {{ image = "example/cart:1" port "grpc" = 7070
    env {{ MODE = "fast" }} }} }}
{scenario_body}
}}""")
    return scenario, scenario.read_text()


GOOD_KIND = """fault_kind "slow_mode" {
  mechanism = "test.workload.env.mode:slow"
  targets = [deployment]
  summary = "Sets MODE to slow."
  arg "container" { type = "container" }
  arg "mode" { type = "string" default = "slow" help = "the mode" }
  require spec.template.spec.containers[name=arg(container)].env[name="MODE"] exists { code = "E2021" message = "no MODE" at = container }
  patch spec.template.spec.containers[name=arg(container)].env[name="MODE"].value = arg(mode) { record = "original_mode" }
  exec { command = ["sh", "-c", "echo {{ args.mode }} > /tmp/mode"] revert = ["rm", "-f", "/tmp/mode"] }
  solution { step { text = "Set MODE back" command = "kubectl -n shop set env deploy/cart MODE=fast" } }
}
"""


def test_a_project_fault_kind_loads_with_use_faults(tmp_path: Path):
    scenario, text = _fault_file(tmp_path, GOOD_KIND, """  fault slow_mode on deployment "cart"
  expect { mitigated when { deployment "cart" ready } }""")
    result, diags = _compile(str(scenario), text)
    assert result.files, [d.message for d in diags.items]
    injection = result.scenario.injections()[0]
    assert injection.args == {"container": "cart", "mode": "slow", "original_mode": "fast"}
    assert b"value: slow" in result.files["inject/apply.yaml"]
    assert b"value: fast" in result.files["revert/apply.yaml"]
    inject = json.loads(result.files["inject/exec.json"])
    revert = json.loads(result.files["revert/exec.json"])
    assert inject["steps"][0]["command"] == ["sh", "-c", "echo slow > /tmp/mode"]
    assert inject["steps"][0]["workload"] == {"kind": "Deployment", "name": "cart"}
    assert revert["steps"][0]["command"] == ["rm", "-f", "/tmp/mode"]
    assert b"Set MODE back" in result.files["itbench/scenario.yaml"] or b"Set MODE back" in \
        result.files["itbench/groundtruth.yaml"]
    # a project's kind belongs to the compile: the injection carries it, and the library does not gain it
    assert "slow_mode" not in FAULTS and injection.kind.name == "slow_mode"


def test_a_scenario_without_use_faults_does_not_see_a_project_kind(tmp_path: Path):
    scenario, text = _fault_file(tmp_path, GOOD_KIND, """  fault slow_mode on deployment "cart"
  expect { mitigated when { deployment "cart" ready } }""")
    first, diags = _compile(str(scenario), text)  # the same process compiled a scenario that declares it
    assert first.files, [d.message for d in diags.items]
    other = """scenario "t" { domain sre complexity low description "d"
  topology { namespace "shop" deployment "cart" { image = "example/cart:1" env { MODE = "fast" } } }
  fault slow_mode on deployment "cart" }"""
    _, diags = _compile("t.itb", other)
    assert [d.code for d in diags.errors()] == ["E2005"]


def test_two_projects_kinds_of_one_name_stay_apart_in_one_process(tmp_path: Path):
    """The language server and the generators compile many files in one process: each compile's injections
    keep the kind their own project declared, whatever was compiled after them."""
    results = []
    for mode in ("slow", "sleepy"):
        folder = tmp_path / mode
        folder.mkdir()
        scenario, text = _fault_file(folder, GOOD_KIND.replace('default = "slow"', f'default = "{mode}"'),
                                     """  fault slow_mode on deployment "cart"
  expect { mitigated when { deployment "cart" ready } }""")
        result, diags = _compile(str(scenario), text)
        assert result.files, [d.message for d in diags.items]
        results.append(result)
    first, second = (r.scenario.injections()[0] for r in results)
    assert first.kind is not second.kind
    assert first.args["mode"] == "slow" and second.args["mode"] == "sleepy"
    assert b"value: slow" in results[0].files["inject/apply.yaml"]
    assert b"value: sleepy" in results[1].files["inject/apply.yaml"]
    # planned again after the second compile, the first scenario's fault is still its own
    from itbench_dsl.backends.faults import plan

    applied = plan(results[0].scenario)[0]
    assert "slow" in json.dumps(applied) and "sleepy" not in json.dumps(applied)


def _errors(tmp_path: Path, kind_text: str, body: str = "  fault bad on deployment \"cart\"") -> list:
    scenario, text = _fault_file(tmp_path, kind_text, body)
    _, diags = _compile(str(scenario), text)
    return diags.errors()


def _kind(extra: str, name: str = "bad") -> str:
    return f"""fault_kind "{name}" {{
  mechanism = "test.{name}"
  targets = [deployment]
  summary = "A test kind."
{extra}
}}
"""


@pytest.mark.parametrize("extra, code, line, text", [
    ('  arg "x" { type = "strng" }\n  patch spec.replicas = 0', "E2050", 5, '"strng"'),
    ('  patch spec.template.spec.containers[name=arg(container)].image = "x"', "E2051", 5, "arg(container)"),
    ('  patch spec.template.spec.containerz[0].image = "x"', "E2052", 5, "spec.template.spec.containerz"),
    ('  patch spec.template.spec.containers.image = "x"', "E2052", 5, "spec.template.spec.containers.image"),
    ('  exec { command = ["true"] }', "E2054", 5, "exec"),
    ('  arg "x" { type = "string" }\n  require arg(y) == "a"\n  patch spec.replicas = 0', "E2051", 6, "arg(y)"),
])
def test_declaration_errors_are_located(tmp_path: Path, extra, code, line, text):
    errors = _errors(tmp_path, _kind(extra))
    assert [e.code for e in errors] == [code], [e.message for e in errors]
    error = errors[0]
    assert error.path.endswith("mine.itb")
    source = (tmp_path / "faults" / "mine.itb").read_text()
    assert error.span.line == line
    assert source[error.span.start:error.span.end].startswith(text)


def test_a_kind_gives_its_analysis_labels(tmp_path: Path):
    """`analysis { ... }` in a declaration labels the kind: a scenario posing `analyze` needs no block of its
    own, and grades the kind's labels; a label outside the vocabulary is E2010 at the label."""
    kind = GOOD_KIND.replace('  summary = "Sets MODE to slow."\n', '  summary = "Sets MODE to slow."\n'
                             '  analysis { system_level = "Application" fault_type = "misconfiguration" }\n')
    scenario, text = _fault_file(tmp_path, kind, """  tasks localize, analyze, mitigate
  fault slow_mode on deployment "cart"
  expect { root_cause deployment "cart" mitigated when { deployment "cart" ready } }""")
    result, diags = _compile(str(scenario), text)
    assert result.files, [d.message for d in diags.items]
    analysis = runtime_spec(result)["analysis"]
    assert (analysis["system_level"], analysis["fault_type"]) == ("application", "misconfiguration")
    wrong = kind.replace('"Application"', '"the app"')
    errors = _errors(tmp_path, wrong, """  tasks analyze, mitigate
  fault slow_mode on deployment "cart"
  expect { mitigated when { deployment "cart" ready } }""")
    assert [e.code for e in errors][:1] == ["E2010"] and "the app" in errors[0].message
    assert errors[0].path.endswith("mine.itb")
    # without labels, `analyze` still asks the scenario for them
    errors = _errors(tmp_path, GOOD_KIND, """  tasks analyze, mitigate
  fault slow_mode on deployment "cart"
  expect { mitigated when { deployment "cart" ready } }""")
    assert [e.code for e in errors] == ["E2013"] and "slow_mode gives none" in errors[0].help


def test_every_standard_library_kind_has_its_labels():
    for kind in FAULTS.values():
        if kind.declared is not None:
            assert kind.labels is not None, kind.name


def test_a_kind_is_defined_once_in_the_package():
    """A declared kind may not take the name of a Python kind (E2053): the standard library loads without
    any Python kind of the same name, and a twin fed to it is refused."""
    from itbench_dsl.diagnostics import Diagnostics

    names = [kind.name for kind in FAULTS.values()]
    assert len(names) == len(set(names))
    diags = Diagnostics()
    for path, data in declared_faults.stdlib_files():
        declared_faults.load_library(data, path, diags, TWINS)
    assert {d.code for d in diags.errors()} == {"E2053"}


def test_a_declared_kind_says_its_readiness_effect(tmp_path: Path):
    kind = GOOD_KIND.replace('  targets = [deployment]\n', '  targets = [deployment]\n  readiness = "crash"\n')
    scenario, text = _fault_file(tmp_path, kind, """  fault slow_mode on deployment "cart"
  expect { mitigated when { deployment "cart" ready } }""")
    result, diags = _compile(str(scenario), text)
    assert result.files, [d.message for d in diags.items]
    assert result.scenario.injections()[0].kind.pod_effect({}) == "crash"
    wrong = GOOD_KIND.replace('  targets = [deployment]\n', '  targets = [deployment]\n  readiness = "crashed"\n')
    errors = _errors(tmp_path, wrong)
    assert [e.code for e in errors] == ["E2010"] and "crash" in errors[0].help


def test_a_declared_kind_says_the_option_that_is_its_harm(tmp_path: Path):
    """`harm_option` (FaultKind.harm_option): the evaluator judges the fault on what the container's program
    gets for it, and health.program reads the container's arguments without it."""
    kind = GOOD_KIND.replace('  targets = [deployment]\n', '  targets = [deployment]\n  harm_option = "--mode"\n')
    scenario, text = _fault_file(tmp_path, kind, """  fault slow_mode on deployment "cart"
  expect { mitigated when { deployment "cart" ready } }""")
    result, diags = _compile(str(scenario), text)
    assert result.files, [d.message for d in diags.items]
    assert result.scenario.injections()[0].kind.harm_option == "--mode"
    m = runtime_spec(result)["mitigation"]
    assert m["faults"][0]["option"] == {"object": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "cart",
                                                   "namespace": "shop"}, "container": "cart", "option": "--mode"}
    assert [p["options"] for p in m["programs"] if p["object"]["name"] == "cart"] == [{"cart": "--mode"}]


CREATING_KINDS = """fault_kind "ingress_denied" {
  mechanism = "test.networkpolicy.ingress:denied"
  targets = [deployment]
  summary = "Creates a NetworkPolicy that denies all ingress to a workload's pods."
  arg "suffix" { type = "string" default = "deny" }
  create "networkpolicy" "{{ target.metadata.name }}-{{ args.suffix }}" {
    metadata { labels = { purpose = "fault" } }
    spec {
      podSelector = { matchLabels = { app = "{{ target.metadata.name }}" } }
      policyTypes = ["Ingress"]
      ingress = []
    }
  }
}
fault_kind "guarded_pods" {
  mechanism = "test.webhook.pods:refused"
  targets = [deployment]
  summary = "Registers an admission webhook that nothing serves, so no pod of the cluster can be created."
  create "validatingwebhookconfiguration" "{{ target.metadata.name }}-guard" {
    webhooks = [{
      name = "guard.example.com",
      admissionReviewVersions = ["v1"],
      sideEffects = "None",
      failurePolicy = "Fail",
      clientConfig = { service = { name = "nothing", namespace = "{{ target.metadata.namespace }}", path = "/x" } },
      rules = [{ operations = ["CREATE"], apiGroups = [""], apiVersions = ["v1"], resources = ["pods"] }],
    }]
  }
}
fault_kind "dropped_configmap" {
  mechanism = "test.configmap:dropped"
  targets = [configmap]
  summary = "Deletes a ConfigMap the application reads."
  delete_target = true
}
"""


def _creating_scenario(tmp_path: Path, faults: str, expect: str) -> tuple[Path, str]:
    (tmp_path / "faults").mkdir(exist_ok=True)
    (tmp_path / "faults" / "mine.itb").write_text(CREATING_KINDS)
    scenario = tmp_path / "s.itb"
    scenario.write_text(f"""scenario "s" {{ domain sre complexity low description "The cart loses its traffic."
  use faults "./faults/mine.itb"
  topology {{ namespace "shop" deployment "cart" {{ image = "example/cart:1" port "grpc" = 7070 labels {{ app = "cart" }} }}
    configmap "cart-config" {{ data {{ MODE = "fast" }} }} }}
{faults}
  expect {{ {expect} }}
}}""")
    return scenario, scenario.read_text()


def test_a_declared_kind_creates_objects_and_deletes_its_target(tmp_path: Path):
    """`create` applies objects on injection and deletes them on revert; `delete_target` deletes the target
    and the revert puts it back as the topology has it. The evaluator reads both (`created`, `restored`), and
    self-validation's corpus attacks them (a created object left behind, the target recreated wrong)."""
    import yaml

    scenario, text = _creating_scenario(tmp_path, """  fault ingress_denied on deployment "cart"
  fault guarded_pods on deployment "cart"
  fault dropped_configmap on configmap "cart-config"
""",
                                        'root_cause deployment "cart" mitigated when { deployment "cart" ready }')
    result, diags = _compile(str(scenario), text)
    assert result.files, [d.message for d in diags.errors()]
    applied = list(yaml.safe_load_all(result.files["inject/apply.yaml"]))
    policy = next(o for o in applied if o["kind"] == "NetworkPolicy")
    assert policy["metadata"] == {"name": "cart-deny", "namespace": "shop",
                                  "labels": {"purpose": "fault"}}  # no harness marker
    assert policy["spec"]["podSelector"] == {"matchLabels": {"app": "cart"}}
    webhook = next(o for o in applied if o["kind"] == "ValidatingWebhookConfiguration")
    assert "namespace" not in webhook["metadata"] and webhook["metadata"]["name"] == "cart-guard"
    assert webhook["webhooks"][0]["clientConfig"]["service"]["namespace"] == "shop"
    deleted = list(yaml.safe_load_all(result.files["inject/delete.yaml"]))
    assert [(o["kind"], o["metadata"]["name"]) for o in deleted] == [("ConfigMap", "cart-config")]
    reverted = {(o["kind"], o["metadata"]["name"]) for o in yaml.safe_load_all(result.files["revert/delete.yaml"])}
    assert reverted == {("NetworkPolicy", "cart-deny"), ("ValidatingWebhookConfiguration", "cart-guard")}
    restored = next(yaml.safe_load_all(result.files["revert/apply.yaml"]))
    assert restored["kind"] == "ConfigMap" and restored["data"] == {"MODE": "fast"}
    spec = runtime_spec(result)
    created = {(c["kind"], c["name"]) for f in spec["mitigation"]["faults"] for c in f["created"]}
    assert created == {("NetworkPolicy", "cart-deny"), ("ValidatingWebhookConfiguration", "cart-guard")}
    assert [r["object"]["name"] for r in spec["mitigation"]["restored"]] == ["cart-config"]
    assert "validatingwebhookconfigurations.admissionregistration.k8s.io" in runtime.resource_names(spec)[""]


@pytest.mark.parametrize("kind_text, fault, code, words", [
    ('fault_kind "bad" { mechanism = "t.b" targets = [deployment] summary = "s." create "netpolicy" "x" { } }',
     'fault bad on deployment "cart"', "E2004", "networkpolicy"),
    ('fault_kind "bad" { mechanism = "t.b" targets = [deployment] summary = "s." create "networkpolicy" "x" { '
     'apiVersion = "v2" } }', 'fault bad on deployment "cart"', "E2008", "apiVersion"),
    ('fault_kind "bad" { mechanism = "t.b" targets = [deployment] summary = "s." delete_target = true '
     'patch spec.replicas = 0 }', 'fault bad on deployment "cart"', "E2008", "deletes its target"),
    ('fault_kind "bad" { mechanism = "t.b" targets = [deployment] summary = "s." create "configmap" '
     '"{{ target.metadata.name }}_X" { } }', 'fault bad on deployment "cart"', "E2011", "not a valid object name"),
    ('fault_kind "bad" { mechanism = "t.b" targets = [deployment] summary = "s." create "configmap" '
     '"cart-config" { } }', 'fault bad on deployment "cart"', "E2011", "already has"),
])
def test_creation_errors_are_located(tmp_path: Path, kind_text, fault, code, words):
    (tmp_path / "faults").mkdir(exist_ok=True)
    (tmp_path / "faults" / "mine.itb").write_text(kind_text)
    scenario = tmp_path / "s.itb"
    scenario.write_text(f"""scenario "s" {{ domain sre complexity low description "The cart loses its traffic."
  use faults "./faults/mine.itb"
  topology {{ namespace "shop" deployment "cart" {{ image = "example/cart:1" }}
    configmap "cart-config" {{ data {{ MODE = "fast" }} }} }}
  {fault}
  expect {{ mitigated when {{ deployment "cart" ready }} }}
}}""")
    _, diags = _compile(str(scenario), scenario.read_text())
    errors = diags.errors()
    assert [e.code for e in errors][:1] == [code], [e.message for e in errors]
    assert words in errors[0].message + errors[0].help
    assert errors[0].span is not None


def test_a_kind_named_like_a_library_fault_is_refused(tmp_path: Path):
    errors = _errors(tmp_path, _kind("  patch spec.replicas = 0", name="scaled_to_zero"))
    assert [e.code for e in errors] == ["E2053"]
    assert errors[0].span.line == 1


def test_a_kind_declared_twice_is_refused(tmp_path: Path):
    errors = _errors(tmp_path, _kind("  patch spec.replicas = 0") + _kind("  patch spec.replicas = 1"))
    assert [e.code for e in errors] == ["E2002"]
    assert errors[0].span.line == 7


def test_a_missing_fault_library_is_located(tmp_path: Path):
    scenario = tmp_path / "s.itb"
    scenario.write_text('scenario "s" { use faults "./nope.itb" }')
    _, diags = _compile(str(scenario), scenario.read_text())
    assert "E2055" in [d.code for d in diags.errors()]


def test_a_precondition_reports_with_its_message_and_span(tmp_path: Path):
    kind = GOOD_KIND.replace('env[name="MODE"] exists', 'env[name="MODEZ"] exists')
    scenario, text = _fault_file(tmp_path, kind, '  fault slow_mode on deployment "cart" { container = "cart" }')
    _, diags = _compile(str(scenario), text)
    errors = diags.errors()
    assert [(e.code, e.message) for e in errors] == [("E2021", "no MODE")]
    assert text[errors[0].span.start:errors[0].span.end] == '"cart"'


# ---- probes --------------------------------------------------------------------------------------------------

PROBE_SCENARIO = """scenario "s" { domain sre complexity low description "d"
  topology { namespace "shop" deployment "db" { image = "mongo:4.4.6" } }
  fault scaled_to_zero on deployment "db"
  probe "roles" on deployment "db" { command = ["mongo", "--eval", "1"]
    healthy { stdout = "[{\\"role\\":\\"readWrite\\"}]" } faulty { exit_code = 1 stderr = "auth failed" } }
  expect { mitigated when { probe "%s" stdout contains "readWrite"  probe "roles" exit_code == 0 } } }"""


def test_a_probe_referenced_but_not_declared_is_located():
    _, diags = _compile("s.itb", PROBE_SCENARIO % "role")
    errors = diags.errors()
    assert [e.code for e in errors] == ["E2003"]
    assert errors[0].span.line == 6 and "did you mean `roles`" in errors[0].help


def test_probes_are_in_the_spec_and_graded_from_the_state():
    result, diags = _compile("s.itb", PROBE_SCENARIO % "roles")
    assert result.files, [d.message for d in diags.items]
    spec = runtime_spec(result)
    assert spec["probes"]["roles"]["container"] == "db"
    assert spec["requires"]["probes"] == ["roles"]
    preds = [p for p in spec["mitigation"]["predicates"] if p["kind"] == "probe"]
    empty = runtime.State({"resources": {"kind": "List", "items": []}})
    assert not runtime.predicate_check(preds[0], empty)[0]  # no result: a failure, never a pass
    assert "probes.roles" in runtime.required_missing(spec, empty)
    good = runtime.State({"resources": {"kind": "List", "items": []},
                          "probes": {"roles": {"exit_code": 0, "stdout": '[{"role":"readWrite"}]', "stderr": ""}}})
    assert [runtime.predicate_check(p, good)[0] for p in preds] == [True, True]
    bad = runtime.State({"resources": {"kind": "List", "items": []},
                         "probes": {"roles": {"exit_code": 1, "stdout": "[]", "stderr": "auth failed"}}})
    assert [runtime.predicate_check(p, bad)[0] for p in preds] == [False, False]


def runtime_spec(result) -> dict:
    from itbench_dsl.backends.evaluator import evaluator_spec

    return json.loads(json.dumps(evaluator_spec(result.scenario)))


# ---- the standard library's exec + probe example ------------------------------------------------------------


def test_the_mongodb_role_fault_compiles_with_exec_steps_and_probes():
    result, diags = _compile(str(MONGO_SCENARIO.relative_to(ROOT)), MONGO_SCENARIO.read_bytes())
    assert result.files, [d.message for d in diags.items]
    inject = json.loads(result.files["inject/exec.json"])["steps"]
    revert = json.loads(result.files["revert/exec.json"])["steps"]
    assert inject[0]["container"] == "hotel-reserv-geo-mongo"
    assert "revokeRolesFromUser('admin', [{role: 'readWrite', db: 'geo-db'}])" in inject[0]["command"][-1]
    assert "grantRolesToUser" in revert[0]["command"][-1]
    assert not yaml_documents(result.files, "inject/apply.yaml")  # an exec-only fault patches nothing (decoys aside)


def test_the_mongodb_role_fault_refuses_a_container_without_mongo():
    text = MONGO_SCENARIO.read_text().replace('on deployment "mongodb-geo" {\n    database', 'on deployment "geo" {\n    database')
    _, diags = _compile("m.itb", text)
    assert "E2011" in [d.code for d in diags.errors()]


def test_mechanism_identity_applies_to_project_kinds(tmp_path: Path):
    """W2001 pairs two scenarios that inject one declared kind on one target, as it does library faults."""
    from itbench_dsl.analysis.mechanisms import duplicate_diagnostics

    body = '  fault slow_mode on deployment "cart" { mode = "%s" }\n  expect { mitigated when { deployment "cart" ready } }'
    first, text = _fault_file(tmp_path, GOOD_KIND, body % "slow")
    a, diags = _compile(str(first), text)
    assert a.scenario is not None, [d.message for d in diags.items]
    second = tmp_path / "s2.itb"
    second.write_text(text.replace('mode = "slow"', 'mode = "slower"'))
    b, _ = _compile(str(second), second.read_text())
    warnings = duplicate_diagnostics([(str(first), a.scenario), (str(second), b.scenario)])
    assert [w.code for w in warnings] == ["W2001"]
    assert b.scenario.injections()[0].mechanism == "test.workload.env.mode:slow"


def test_the_standard_fault_library_files_check_on_their_own():
    for path in sorted((ROOT / "itbench_dsl/stdlib/faults").glob("*.itb")):
        result, diags = _compile(str(path), path.read_bytes())
        assert not diags.errors(), [d.message for d in diags.errors()]
        assert not result.files  # a fault library compiles to no bundle


def test_a_template_that_fails_is_a_located_error_not_a_traceback(tmp_path: Path):
    kind = GOOD_KIND.replace('message = "no MODE"', 'message = "{{ args.nope.deeper }}"').replace(
        'env[name="MODE"] exists', 'env[name="NOPE"] exists')
    scenario, text = _fault_file(tmp_path, kind, '  fault slow_mode on deployment "cart"')
    _, diags = _compile(str(scenario), text)
    errors = diags.errors()
    assert [e.code for e in errors] == ["E2010"] and "fails here" in errors[0].message
    assert errors[0].span.line == 5


def test_a_patch_with_an_argument_left_unset_is_refused(tmp_path: Path):
    kind = GOOD_KIND.replace('arg "mode" { type = "string" default = "slow" help = "the mode" }',
                             'arg "mode" { type = "string" help = "the mode" }')
    scenario, text = _fault_file(tmp_path, kind, '  fault slow_mode on deployment "cart"')
    _, diags = _compile(str(scenario), text)
    assert [(e.code, e.message) for e in diags.errors()] == \
        [("E2007", "fault `slow_mode` needs `mode` here: its patches or command use it")]


def test_a_kind_with_a_library_fault_s_mechanism_is_refused(tmp_path: Path):
    text = _kind("  patch spec.replicas = 0", name="to_zero").replace('"test.to_zero"', '"workload.replicas:zero"')
    errors = _errors(tmp_path, text, '  fault to_zero on deployment "cart"')
    assert [e.code for e in errors] == ["E2053"] and "scaled_to_zero" in errors[0].message
    assert errors[0].span.line == 2


def test_capture_runs_the_probes_with_kubectl_exec(tmp_path: Path):
    result, _ = _compile("s.itb", PROBE_SCENARIO % "roles")
    spec = runtime_spec(result)
    assert any(c.startswith("kubectl exec -n shop deployment/db -c db -- mongo --eval 1")
               for c in runtime.requirements(spec)["commands"])
    kubectl = tmp_path / "kubectl"
    kubectl.write_text('#!/bin/sh\nif [ "$1" = exec ]; then echo \'[{"role":"readWrite"}]\'; exit 0; fi\n'
                       'echo \'{"items": []}\'\n')
    kubectl.chmod(0o755)
    state = runtime.capture(spec, kubectl=str(kubectl))
    assert state["probes"]["roles"] == {"exit_code": 0, "stdout": '[{"role":"readWrite"}]\n', "stderr": ""}
    preds = [p for p in spec["mitigation"]["predicates"] if p["kind"] == "probe"]
    assert all(runtime.predicate_check(p, runtime.State(state))[0] for p in preds)
    # a probe that cannot run is a failed result, and its predicates fail
    failed = runtime.run_probe(spec["probes"]["roles"], kubectl=str(tmp_path / "no-such-kubectl"))
    assert failed["exit_code"] == -1 and "cannot run" in failed["stderr"]
    broken = runtime.State({"resources": {"kind": "List", "items": []}, "probes": {"roles": failed}})
    assert not any(runtime.predicate_check(p, broken)[0] for p in preds)


# ---- probes in self-validation ---------------------------------------------------------------------------------


def _scenario(text: str, path: str = "s.itb"):
    result, diags = _compile(path, text)
    assert result.scenario is not None, [d.message for d in diags.errors()]
    return result.scenario


def test_derived_states_carry_the_probes_declared_results():
    from itbench_dsl.analysis.states import derive

    states = derive(_scenario(MONGO_SCENARIO.read_text()))
    healthy = '[{"role":"userAdminAnyDatabase","db":"admin"},{"role":"readWrite","db":"geo-db"}]\n'
    assert states["healthy"]["probes"] == {"geo-roles": {"exit_code": 0, "stdout": healthy, "stderr": ""}}
    assert states["solved"]["probes"] == states["healthy"]["probes"]
    assert states["faulty"]["probes"]["geo-roles"]["stdout"] == '[{"role":"userAdminAnyDatabase","db":"admin"}]\n'
    # a scenario without probes keeps its states' bytes: no `probes` key
    plain = derive(_scenario(PROBE_SCENARIO.replace('probe "%s" stdout contains "readWrite"  probe "roles" '
                                                    'exit_code == 0', 'deployment "db" ready')))
    assert "probes" in plain["healthy"]  # declared, though nothing reads it
    assert plain["faulty"]["probes"]["roles"]["exit_code"] == 1


def test_the_library_exec_scenario_self_validates_and_its_corpus_attacks_the_probe():
    from itbench_dsl.analysis.corpus import all_cases
    from itbench_dsl.analysis.corpus import self_validate

    scenario = _scenario(MONGO_SCENARIO.read_text())
    assert self_validate(scenario) == []
    spec, cases = all_cases(scenario)
    names = {c.name: c.want for c in cases}
    assert names["probe geo-roles: no result in the state"] == "unusable"
    for what in ("exit code 1", "exit code as text \"0\"", "exit code as a boolean false", "output without the text",
                 "the text only past the first megabyte of a huge output", "a huge output without the text"):
        assert [w for n, w in names.items() if n.endswith(": " + what)] == ["fail"], what
    for case in cases:
        assert case.run(spec)[0], case.name


def test_an_evaluator_that_ignores_probes_is_caught(monkeypatch):
    """Self-validation is only worth what it catches: a grader that passes every probe predicate fails it."""
    from itbench_dsl.analysis.corpus import self_validate

    scenario = _scenario(MONGO_SCENARIO.read_text())
    monkeypatch.setattr(runtime, "probe_check", lambda pred, state: (True, "ignored"))
    problems = self_validate(scenario)
    assert [code for code, _ in problems] == ["E4004"]
    assert "the faulty state (must fail)" in problems[0][1]
    # and one that reads the whole output past the cap passes the text hidden in a huge output
    monkeypatch.undo()
    monkeypatch.setattr(runtime, "MAX_PROBE_TEXT", 64 * 1024 * 1024)
    assert "past the first megabyte" in " ".join(m for _, m in self_validate(scenario))


def test_an_exact_probe_test_is_attacked_with_a_longer_token():
    from itbench_dsl.analysis.corpus import all_cases

    text = PROBE_SCENARIO.replace('stdout contains "readWrite"', 'stdout == "ok"').replace(
        'healthy { stdout = "[{\\"role\\":\\"readWrite\\"}]" }', 'healthy { stdout = "ok" }') % "roles"
    spec, cases = all_cases(_scenario(text))
    longer = [c for c in cases if "inside a longer token" in c.name or "followed by a huge output" in c.name]
    assert {c.state["probes"]["roles"]["stdout"][:3] for c in longer} == {"xok", "okx", "ok."}
    assert all(c.want == "fail" and c.run(spec)[0] for c in longer)


def test_a_probe_read_without_a_healthy_result_is_located():
    text = PROBE_SCENARIO.replace('healthy { stdout = "[{\\"role\\":\\"readWrite\\"}]" } ', '') % "roles"
    _, diags = _compile("s.itb", text)
    assert [(e.code, e.span.line) for e in diags.errors()] == [("E2007", 4)]
    assert "healthy" in diags.errors()[0].message
    _, diags = _compile("s.itb", PROBE_SCENARIO.replace("exit_code = 1", "exit_code = 300") % "roles")
    assert [e.code for e in diags.errors()] == ["E2010"]


@pytest.mark.parametrize("step, codes", [
    # the revert command, in the workload's default container: undoes the fault
    ("kubectl -n hotel-reservation exec deploy/mongodb-geo -- mongo admin --quiet -u admin -p admin --eval "
     "\"db.grantRolesToUser('admin', [{role: 'readWrite', db: 'geo-db'}])\"", []),
    # another command in the pod: its effect is unknown
    ("kubectl -n hotel-reservation exec deploy/mongodb-geo -- mongo admin --eval \"db.dropUser('admin')\"", ["W2009"]),
    # a restart does not give the role back: the probe still reads the faulty result
    ("kubectl -n hotel-reservation rollout restart deploy/mongodb-geo", ["E4006"]),
])
def test_a_solution_undoes_an_exec_fault_only_with_its_revert_command(step, codes):
    from itbench_dsl.analysis.solutions import findings

    text = MONGO_SCENARIO.read_text()
    start = text.index('    step "Grant')
    end = text.index("\n", start)
    text = text[:start] + f'    step "Fix" run {json.dumps(step)}' + text[end:]
    scenario = _scenario(text)
    assert [f.code for f in findings(scenario, {})] == codes


def test_the_lock_records_the_fault_files_a_scenario_loads(tmp_path: Path):
    """bundle.lock holds the sha256 of each `use faults` file: a change to it that changes no bundle file (a
    comment) still changes the lock."""
    import hashlib

    body = '  fault slow_mode on deployment "cart"\n  expect { mitigated when { deployment "cart" ready } }'
    scenario, text = _fault_file(tmp_path, GOOD_KIND, body)
    first, diags = _compile(str(scenario), text)
    assert first.files, [d.message for d in diags.items]
    lock = json.loads(first.files["bundle.lock"])
    library = (tmp_path / "faults" / "mine.itb").read_bytes()
    assert lock["fault_files_sha256"] == {"./faults/mine.itb": hashlib.sha256(library).hexdigest()}
    (tmp_path / "faults" / "mine.itb").write_text("# slow mode, for the cart\n" + GOOD_KIND)
    second, _ = _compile(str(scenario), text)
    assert {k: v for k, v in second.files.items() if k != "bundle.lock"} == \
        {k: v for k, v in first.files.items() if k != "bundle.lock"}
    assert second.files["bundle.lock"] != first.files["bundle.lock"]
    assert json.loads(second.files["bundle.lock"])["fault_files_sha256"]["./faults/mine.itb"] != \
        lock["fault_files_sha256"]["./faults/mine.itb"]
    # a scenario without `use faults` keeps its lock's keys
    standard, _ = _compile("m.itb", MONGO_SCENARIO.read_bytes())
    assert "fault_files_sha256" not in json.loads(standard.files["bundle.lock"])


def test_a_compile_result_crosses_processes_with_its_kinds(tmp_path: Path):
    """`check --jobs` pickles results: a library kind comes back as the library's own object, a project's
    kind by value (its declaration and checks with it)."""
    import pickle

    path = ROOT / "scenarios/sre/otel-checkout-nonexistent-image.itb"
    library, _ = _compile(str(path.relative_to(ROOT)), path.read_bytes())
    back = pickle.loads(pickle.dumps(library.scenario))
    assert back.injections()[0].kind is FAULTS["nonexistent_image"]
    scenario, text = _fault_file(tmp_path, GOOD_KIND, """  fault slow_mode on deployment "cart"
  expect { mitigated when { deployment "cart" ready } }""")
    project, diags = _compile(str(scenario), text)
    assert project.files, [d.message for d in diags.items]
    kind = pickle.loads(pickle.dumps(project.scenario)).injections()[0].kind
    assert kind.name == "slow_mode" and "slow_mode" not in FAULTS and kind.declared is not None


PATCH_AND_CREATE = """fault_kind "deny_and_slow" {
  mechanism = "test.networkpolicy.deny-and-env:slow"
  targets = [deployment]
  summary = "Denies ingress to the target and sets its MODE."
  arg "mode" { type = "string" default = "slow" help = "the mode" }
  create "networkpolicy" "deny-{{ target.metadata.name }}" {
    spec { podSelector { matchLabels { app = "cart" } } policyTypes = ["Ingress"] }
  }
  patch spec.template.spec.containers[name="cart"].env[name="MODE"].value = arg(mode)
  solution { step { text = "Set MODE back from {{ args.mode }}" command = "kubectl -n shop delete networkpolicy deny-cart" } }
}
"""


def test_a_kind_that_creates_and_patches_injects_both_and_its_solution_reads_its_arguments(tmp_path: Path):
    scenario, text = _fault_file(tmp_path, PATCH_AND_CREATE, """  fault deny_and_slow on deployment "cart"
  expect { mitigated when { deployment "cart" ready } }""")
    result, diags = _compile(str(scenario), text)
    assert result.files, [d.message for d in diags.items]
    injected = [d["kind"] for d in yaml_documents(result.files, "inject/apply.yaml")]
    assert sorted(injected) == ["Deployment", "NetworkPolicy"]  # the created object is injected, not only reverted
    assert [d["kind"] for d in yaml_documents(result.files, "revert/delete.yaml")] == ["NetworkPolicy"]
    assert b"Set MODE back from slow" in result.files["itbench/groundtruth.yaml"]


def test_a_solution_template_that_fails_is_located_whether_or_not_the_kind_creates(tmp_path: Path):
    broken = PATCH_AND_CREATE.replace("{{ args.mode }}", "{{ args.nothing_of_the_kind }}")
    errors = _errors(tmp_path, broken, '  fault deny_and_slow on deployment "cart"')
    assert [e.code for e in errors] == ["E2010"] and "nothing_of_the_kind" in errors[0].message


def test_a_configmap_a_declared_kind_creates_can_be_named_in_mitigated_when(tmp_path: Path):
    kind = """fault_kind "bad_flags" {
  mechanism = "test.configmap.flags:bad"
  targets = [deployment]
  summary = "Creates a ConfigMap of bad flags and sets the target's MODE."
  create "configmap" "{{ target.metadata.name }}-flags" { data { mode = "broken" } }
  patch spec.template.spec.containers[name="cart"].env[name="MODE"].value = "broken"
}
"""
    scenario, text = _fault_file(tmp_path, kind, """  fault bad_flags on deployment "cart"
  expect { mitigated when { deployment "cart" ready
    configmap "cart-flags" absent } }""")
    result, diags = _compile(str(scenario), text)
    assert result.files, [f"{d.code} {d.message}" for d in diags.items]
    assert not diags.errors()
