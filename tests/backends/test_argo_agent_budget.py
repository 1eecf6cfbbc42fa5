"""The Argo target gives the agent the budget `itbench run --agent-timeout` gives it (the `agent-timeout`
parameter, the same default): its script stops an agent that overruns it and sends its answers on to the
evaluation; a pod that outlives it is ended by Argo (the agent template's activeDeadlineSeconds), and the revert
still runs (onExit)."""

from __future__ import annotations

import subprocess
import time

import yaml

from itbench_dsl.backends import argo
from itbench_dsl.compiler import target_files
from itbench_dsl.diagnostics import Diagnostics
from itbench_dsl.run.lifecycle import PlanOptions

from test_engine_targets import compiled


def _template() -> dict:
    result = compiled("sre/otel-checkout-nonexistent-image.itb")
    [template] = list(yaml.safe_load_all(target_files(result, "argo", Diagnostics())["workflowtemplate.yaml"]))
    return template


def test_the_agent_template_has_itbench_runs_budget():
    spec = _template()["spec"]
    parameters = {p["name"]: p for p in spec["arguments"]["parameters"]}
    assert parameters["agent-timeout"]["value"] == str(int(PlanOptions.agent_timeout)) == "1800"
    agent = next(t for t in spec["templates"] if t["name"] == "agent")
    assert "workflow.parameters['agent-timeout']" in agent["activeDeadlineSeconds"]
    assert {"name": "ITBENCH_AGENT_TIMEOUT", "value": "{{workflow.parameters.agent-timeout}}"} in agent["script"]["env"]
    # the revert runs whatever ended the run, a deadline among them
    assert spec["onExit"] == "exit"
    assert any(t["name"] == "revert" for t in spec["templates"])


def test_an_agent_that_overruns_is_stopped_and_its_answer_sent(tmp_path):
    spec = _template()["spec"]
    agent = next(t for t in spec["templates"] if t["name"] == "agent")
    source = "# agent" + agent["script"]["source"].split("# agent", 1)[1]
    folder, sent = tmp_path / "agent", tmp_path / "sent"
    folder.mkdir()
    source = source.replace(argo.AGENT_FOLDER, str(folder)).replace(argo.SENT, str(sent))
    env = {"PATH": "/usr/bin:/bin", "ITBENCH_WORKSPACE": str(folder), "ITBENCH_AGENT_TIMEOUT": "1",
           "ITBENCH_AGENT": "echo '{\"entities\": []}' > diagnosis.json; sleep 300"}
    started = time.monotonic()
    done = subprocess.run(["sh", "-c", source], cwd=tmp_path, env=env, stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, timeout=60)
    assert done.returncode == 0
    assert time.monotonic() - started < 30
    assert b"overran its budget" in done.stderr
    assert (sent / "answer-diagnosis-json").read_text()
    # within its budget, the agent runs to its end
    (sent / "answer-diagnosis-json").unlink()
    env["ITBENCH_AGENT_TIMEOUT"], env["ITBENCH_AGENT"] = "30", "echo '{}' > diagnosis.json"
    started = time.monotonic()
    done = subprocess.run(["sh", "-c", source], cwd=tmp_path, env=env, stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, timeout=60)
    assert done.returncode == 0 and b"overran" not in done.stderr
    assert time.monotonic() - started < 10
    assert (sent / "answer-diagnosis-json").read_text()
