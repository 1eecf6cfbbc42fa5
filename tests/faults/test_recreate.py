"""Delete-and-recreate injection (docs/fault-kinds.md, `recreate`): a declared kind whose change the API server
refuses on update (a Job's pod template, a running pod's command) deletes its target and creates it changed; the
revert deletes it and creates the original. Checked on the compiled bundle, the run's plan and the shell engine."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from itbench_dsl import compiler
from itbench_dsl.backends import engines
from itbench_dsl.diagnostics import Diagnostics
from itbench_dsl.run import lifecycle

KINDS = """fault_kind "rerun_command" {
  mechanism = "test.job.command:replaced"
  targets = [job, deployment, pod]
  summary = "Replaces the command of a workload's container."
  recreate = [job, pod]
  arg "command" { type = "strings" required = true help = "the command" }
  patch spec.template.spec.containers[0].command = arg(command)
}
"""

SCENARIO = """scenario "s" {
  domain sre
  complexity low
  description "The shop's migration runs a command that fails."
  use faults "./faults/mine.itb"
  topology {
    namespace "shop"
    job "migrate" { image = "busybox:1.36" command = ["sh", "-c", "true"] }
    deployment "web" { image = "nginx:1.27" port "http" = 80 }
    pod "tool" { image = "busybox:1.36" command = ["sleep", "3600"] restart_policy = "Always" }
  }
  fault rerun_command on TARGET { command = ["/opt/shop/bin/migrate"] }
  expect { root_cause TARGET mitigated when { EXPECT } }
}
"""


def _compile(tmp_path: Path, target: str, expect: str, kinds: str = KINDS):
    (tmp_path / "faults").mkdir(exist_ok=True)
    (tmp_path / "faults" / "mine.itb").write_text(kinds)
    path = tmp_path / "s.itb"
    path.write_text(SCENARIO.replace("TARGET", target).replace("EXPECT", expect))
    diags = Diagnostics()
    return compiler.compile_source(path.read_bytes(), str(path), diags), diags


def _docs(files: dict, name: str) -> list[dict]:
    return [d for d in yaml.safe_load_all(files[name]) if d]


def test_a_recreated_job_is_deleted_then_created_changed_and_the_revert_recreates_the_original(tmp_path):
    result, diags = _compile(tmp_path, 'job "migrate"', 'job "migrate" complete')
    assert not diags.errors(), [d.message for d in diags.errors()]
    files = result.files
    gone = [(d["kind"], d["metadata"]["name"]) for d in _docs(files, "inject/recreate.yaml")]
    assert gone == [("Job", "migrate")] and files["revert/recreate.yaml"] == files["inject/recreate.yaml"]
    [changed] = [d for d in _docs(files, "inject/apply.yaml") if d["kind"] == "Job"]
    assert changed["spec"]["template"]["spec"]["containers"][0]["command"] == ["/opt/shop/bin/migrate"]
    [original] = [d for d in _docs(files, "revert/apply.yaml") if d["kind"] == "Job"]
    assert original["spec"]["template"]["spec"]["containers"][0]["command"] == ["sh", "-c", "true"]
    assert "inject/delete.yaml" not in files  # deleted to be created again, not deleted for good
    # the shell engine deletes (and kubectl waits until it is gone) before it applies, in both phases
    phases = engines.engine_plan(result.scenario, files).phases
    inject = [a.script for a in phases["inject"]]
    first = next(i for i, s in enumerate(inject) if "inject/recreate.yaml" in s)
    assert "--wait=true" in inject[first] and first < next(i for i, s in enumerate(inject) if "inject/apply.yaml" in s)
    [revert] = [a.script for a in phases["revert"]]
    assert revert.index("revert/recreate.yaml") < revert.index("revert/apply.yaml")


def test_the_run_deletes_a_recreated_target_before_it_applies_it(tmp_path):
    result, diags = _compile(tmp_path, 'job "migrate"', 'job "migrate" complete')
    assert not diags.errors(), [d.message for d in diags.errors()]
    for name, data in result.files.items():
        (tmp_path / "bundle" / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "bundle" / name).write_bytes(data)
    bundle = lifecycle.load_bundle(tmp_path / "bundle", requirements_timeout=60)
    steps = [(s.phase, s.action, s.ref.name if s.ref else None) for s in lifecycle.plan(bundle)]
    inject = [(a, n) for p, a, n in steps if p == "inject"]
    assert inject.index(("delete", "migrate")) < inject.index(("apply", "migrate"))
    revert = [(a, n) for p, a, n in steps if p == "revert"]
    assert revert.index(("delete", "migrate")) < revert.index(("apply", "migrate"))


def test_a_kind_not_recreated_for_the_targets_kind_is_patched_in_place(tmp_path):
    result, diags = _compile(tmp_path, 'deployment "web"', 'deployment "web" ready')
    assert not diags.errors(), [d.message for d in diags.errors()]
    assert "inject/recreate.yaml" not in result.files and "revert/recreate.yaml" not in result.files


def test_a_recreated_pod_may_change_what_a_running_pod_cannot(tmp_path):
    result, diags = _compile(tmp_path, 'pod "tool"', 'pod "tool" ready')
    assert not diags.errors(), [d.message for d in diags.errors()]
    assert [d["metadata"]["name"] for d in _docs(result.files, "inject/recreate.yaml")] == ["tool"]
    # without `recreate` for pods, the same patch is refused: the API server would refuse the update
    _, diags = _compile(tmp_path, 'pod "tool"', 'pod "tool" ready', KINDS.replace("[job, pod]", "[job]"))
    [error] = diags.errors()
    assert error.code == "E2056" and "recreate = [pod]" in error.help


@pytest.mark.parametrize("setting, code, words", [
    ("recreate = [statefulset]", "E2010", "kinds of `targets`"),
    ("recreate = 3", "E2010", "kinds of `targets`"),
    ("recreate = true\n  delete_target = true", "E2008", "deletes its target"),
])
def test_recreate_settings_that_cannot_hold_are_located(tmp_path, setting, code, words):
    kinds = KINDS.replace("recreate = [job, pod]", setting)
    _, diags = _compile(tmp_path, 'job "migrate"', 'job "migrate" complete', kinds)
    errors = diags.errors()
    assert errors and errors[0].code == code and words in errors[0].message, [e.message for e in errors]
    assert errors[0].span is not None and errors[0].span.line in (5, 6)


def test_recreate_without_a_patch_is_refused(tmp_path):
    kinds = KINDS.replace("  patch spec.template.spec.containers[0].command = arg(command)\n", "") \
        .replace("  recreate = [job, pod]", "  recreate = true\n  delete_target = true") \
        .replace('  arg "command" { type = "strings" required = true help = "the command" }\n', "")
    _, diags = _compile(tmp_path, 'job "migrate"', 'job "migrate" complete', kinds)
    error = diags.errors()[0]
    assert error.code == "E2008" and "needs a `patch`" in error.message and error.span.line == 5


@pytest.mark.parametrize("fault", ['nonexistent_image on job "migrate" { image = "busybox:7f3a9c1e" }',
                                   'invalid_command on job "migrate"',
                                   'modified_env on job "migrate" { name = "MODE" value = "slow" }',
                                   'unassigned_limits on job "migrate"'])
def test_the_librarys_pod_template_faults_replace_a_job_and_patch_a_cronjob(tmp_path, fault):
    source = f"""scenario "s" {{
  domain sre
  complexity low
  description "The shop's migration fails."
  topology {{
    namespace "shop"
    job "migrate" {{ image = "busybox:1.36" command = ["sh", "-c", "true"] env {{ MODE = "fast" }}
      resources {{ limits {{ memory = 64Mi }} }} }}
    cronjob "report" {{ schedule = "@hourly" image = "busybox:1.36" command = ["sh", "-c", "true"] env {{ MODE = "fast" }}
      resources {{ limits {{ memory = 64Mi }} }} }}
  }}
  fault {fault}
  expect {{ root_cause job "migrate" mitigated when {{ job "migrate" complete }} }}
}}
"""
    diags = Diagnostics()
    result = compiler.compile_source(source.encode(), "s.itb", diags)
    assert not diags.errors(), [d.message for d in diags.errors()]
    assert [d["kind"] for d in _docs(result.files, "inject/recreate.yaml")] == ["Job"]
    on_cronjob = source.replace('on job "migrate"', 'on cronjob "report"').replace(
        'root_cause job "migrate"', 'root_cause cronjob "report"').replace('job "migrate" complete', 'cronjob "report" complete')
    diags = Diagnostics()
    result = compiler.compile_source(on_cronjob.encode(), "s.itb", diags)
    assert not diags.errors(), [d.message for d in diags.errors()]
    assert "inject/recreate.yaml" not in result.files  # a CronJob's job template changes on update
