"""Jobs and CronJobs as topology objects: their manifests, their faults, references to them and `complete`."""

from __future__ import annotations

import yaml

from itbench_dsl.compiler import compile_source
from itbench_dsl.diagnostics import Diagnostics
from itbench_dsl.runtime.evaluator import predicate_check
from itbench_dsl.runtime.state import job_complete
from itbench_dsl.topology import cron_problem

TOPOLOGY = '''scenario "batch" {
  domain sre
  complexity low
  description "The nightly report's runs fail."
  topology {
    namespace "shop"
    job "migrate" {
      image = "busybox:1.36"
      command = ["sh", "-c", "echo migrated"]
      completions = 3
      parallelism = 2
      backoff_limit = 4
      active_deadline = 10m
      labels { app = "migrate" }
    }
    cronjob "report" {
      schedule = "SCHEDULE"
      concurrency_policy = "Forbid"
      restart_policy = "OnFailure"
      backoff_limit = 1
      image = "busybox:1.36"
      command = ["sh", "-c", "echo report"]
    }
  }
  FAULT
  expect {
    root_cause TARGET
    mitigated when { PREDICATES }
  }
}
'''


def _compile(fault: str = 'fault nonexistent_image on cronjob "report"', target: str = 'cronjob "report"',
             predicates: str = 'cronjob "report" complete', schedule: str = "*/5 * * * *"):
    source = (TOPOLOGY.replace("SCHEDULE", schedule).replace("FAULT", fault).replace("TARGET", target)
              .replace("PREDICATES", predicates))
    diags = Diagnostics()
    result = compile_source(source.encode(), "batch.itb", diags)
    return result, diags, source


def _objects(result, name: str) -> dict:
    return {d["kind"]: d for d in yaml.safe_load_all(result.files[name].decode()) if d}


def _line(source: str, text: str) -> int:
    return next(i for i, line in enumerate(source.splitlines(), 1) if text in line)


def test_a_job_and_a_cronjob_are_rendered_with_their_fields():
    result, diags, _ = _compile()
    assert not diags.errors(), [d.message for d in diags.errors()]
    objects = _objects(result, "manifests/topology.yaml")
    job = objects["Job"]
    assert job["apiVersion"] == "batch/v1" and job["metadata"] == {"name": "migrate", "namespace": "shop"}
    assert {k: job["spec"][k] for k in ("completions", "parallelism", "backoffLimit", "activeDeadlineSeconds")} == {
        "completions": 3, "parallelism": 2, "backoffLimit": 4, "activeDeadlineSeconds": 600}
    assert "selector" not in job["spec"]  # the Job controller writes it
    assert job["spec"]["template"]["metadata"]["labels"] == {"app": "migrate"}
    pod = job["spec"]["template"]["spec"]
    assert pod["restartPolicy"] == "Never"
    assert pod["containers"][0]["command"] == ["sh", "-c", "echo migrated"]
    cron = objects["CronJob"]
    assert cron["spec"]["schedule"] == "*/5 * * * *" and cron["spec"]["concurrencyPolicy"] == "Forbid"
    template = cron["spec"]["jobTemplate"]["spec"]
    assert template["backoffLimit"] == 1
    assert template["template"]["spec"]["restartPolicy"] == "OnFailure"
    assert template["template"]["spec"]["containers"][0]["image"] == "busybox:1.36"


def test_a_pod_template_fault_patches_a_cronjobs_job_template_and_a_jobs_template():
    result, diags, _ = _compile()
    assert not diags.errors(), [d.message for d in diags.errors()]
    cron = _objects(result, "inject/apply.yaml")["CronJob"]
    assert cron["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"][0]["image"] == "busybox:7f3a9c1e"
    assert "template" not in cron["spec"]
    restored = _objects(result, "revert/apply.yaml")["CronJob"]
    assert restored["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"][0]["image"] == "busybox:1.36"
    result, diags, _ = _compile('fault invalid_command on job "migrate"', 'job "migrate"', 'job "migrate" complete')
    assert not diags.errors(), [d.message for d in diags.errors()]
    job = _objects(result, "inject/apply.yaml")["Job"]
    assert job["spec"]["template"]["spec"]["containers"][0]["command"] != ["sh", "-c", "echo migrated"]


def test_complete_is_compiled_as_a_state_predicate():
    result, diags, _ = _compile(predicates='cronjob "report" complete\n    job "migrate" complete')
    assert not diags.errors()
    import json

    predicates = json.loads(result.files["scenario.json"])["mitigation"]["predicates"]
    assert [(p["target"]["kind"], p["state"]) for p in predicates] == [("CronJob", "complete"), ("Job", "complete")]


def test_complete_on_a_deployment_and_ready_on_a_job_are_located():
    fault = 'fault nonexistent_image on cronjob "report"'
    _, diags, source = _compile(fault, predicates='namespace "shop" complete')
    [error] = diags.errors()
    assert error.code == "E2004" and "does not run to completion" in error.message
    assert error.span.line == _line(source, 'namespace "shop" complete')
    _, diags, source = _compile(fault, predicates='job "migrate" ready')
    [error] = diags.errors()
    assert error.code == "E2004" and 'job "migrate" complete' in error.help
    assert error.span.line == _line(source, 'job "migrate" ready')


def test_a_schedule_that_is_not_cron_is_located():
    _, diags, source = _compile(schedule="0 25 * * *")
    [error] = diags.errors()
    assert error.code == "E2010" and "`25` is not a valid hour" in error.message
    assert error.span.line == _line(source, "schedule =")
    assert cron_problem("0 0 * * * *")  # six fields: a CronJob takes no seconds
    assert cron_problem("@hourly") is None and cron_problem("@every 5m") is None
    assert cron_problem("*/5 1-3 * jan mon-fri") is None


def test_a_job_takes_no_replicas_or_selector():
    _, _, source = _compile()
    for written in ("replicas = 3", 'selector { app = "migrate" }'):
        diags = Diagnostics()
        compile_source(source.replace("completions = 3", written).encode(), "batch.itb", diags)
        [error] = diags.errors()
        assert written.split()[0] in error.message and error.span.line == _line(source, "completions = 3")


def test_job_complete_reads_conditions_counts_and_a_cronjobs_last_run():
    job = {"kind": "Job", "spec": {"completions": 2}, "status": {"succeeded": 1}}
    assert not job_complete(job)
    assert job_complete({**job, "status": {"succeeded": 2}})
    assert job_complete({**job, "status": {"conditions": [{"type": "Complete", "status": "True"}]}})
    assert not job_complete({**job, "status": {"succeeded": 2, "conditions": [{"type": "Failed", "status": "True"}]}})
    assert not job_complete({**job, "metadata": {"deletionTimestamp": "2026-01-01T00:00:00Z"}, "status": {"succeeded": 2}})
    cron = {"kind": "CronJob", "spec": {}, "status": {"lastScheduleTime": "2026-01-01T00:05:00Z"}}
    assert not job_complete(cron)
    assert job_complete({**cron, "status": {**cron["status"], "lastSuccessfulTime": "2026-01-01T00:05:40Z"}})
    assert not job_complete({**cron, "status": {**cron["status"], "lastSuccessfulTime": "2026-01-01T00:00:40Z"}})


def test_the_runtime_reads_complete():
    from itbench_dsl.runtime.state import State

    cron = {"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "report", "namespace": "shop"},
            "spec": {}, "status": {"lastScheduleTime": "2026-01-01T00:05:00Z",
                                   "lastSuccessfulTime": "2026-01-01T00:05:30Z"}}
    pred = {"kind": "state", "state": "complete",
            "target": {"api_version": "batch/v1", "kind": "CronJob", "namespace": "shop", "name": "report"}}
    ok, detail = predicate_check(pred, State({"resources": {"items": [cron]}}))
    assert ok and detail.endswith("complete")
