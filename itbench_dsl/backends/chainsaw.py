"""`itbench compile --target chainsaw`: the bundle and a Chainsaw `Test` (chainsaw.kyverno.io/v1alpha1) that runs it.

One step per phase of lifecycle.PHASES (backends/engines.py says how): bundle manifests are applied
with `apply` and their workloads' readiness is an `assert` on `status.readyReplicas`; the injection,
the alert wait, the agent and the evaluator are `script` operations. The phases that run whatever
happened (revert, verify) are the `cleanup` of the inject step: Chainsaw runs cleanups at the end of
the test, after the evaluation, in reverse order, before it deletes what the deploy step created
(the undeploy: Chainsaw deletes the objects it created, never one that was there before).
Run a suite with `chainsaw test OUTPUT/` (docs/running.md).
"""

from __future__ import annotations

from .. import ir
from ..lifecycle import PHASES
from .engines import Action, EnginePlan, bundle_files, engine_plan, ready_script

API_VERSION = "chainsaw.kyverno.io/v1alpha1"
TEST_FILE = "chainsaw-test.yaml"
SCHEMA_COMMENT = ("# yaml-language-server: $schema=https://raw.githubusercontent.com/kyverno/chainsaw/main/.schemas/json/"
                  "test-chainsaw-v1alpha1.json\n")
AGENT_TIMEOUT = "30m"


def _operations(action: Action, cleanup: bool = False) -> list[dict]:
    """Chainsaw operations of one action; a cleanup cannot assert, so it waits with kubectl there."""
    if action.kind == "ready" and cleanup:
        return [{"description": action.name, "script": {"content": ready_script(action.refs)}}]
    if action.kind == "apply":
        return [{"description": action.name, "apply": {"file": action.file}}]
    if action.kind == "delete":
        return [{"description": action.name, "delete": {"file": action.file}}]
    if action.kind == "ready":
        return [{"description": f"{action.name}: {kind} {name}", "assert": {
            "timeout": action.timeout,
            "resource": {"apiVersion": api_version, "kind": kind, "metadata": {"name": name, "namespace": namespace},
                         "status": {"readyReplicas": replicas}}}}
                for api_version, kind, namespace, name, replicas in action.refs]
    script: dict = {"content": action.script}
    if action.name == "agent":
        script["timeout"] = AGENT_TIMEOUT
    return [{"description": action.name, "script": script}]


def chainsaw_test(plan: EnginePlan) -> dict:
    steps: list[dict] = []
    cleanup = [op for name in plan.cleanup if name != "undeploy" for a in plan.phases.get(name, [])
               for op in _operations(a, cleanup=True)]
    for phase in PHASES:
        actions = plan.phases.get(phase.name) or []
        if phase.always or not actions:
            continue
        step: dict = {"name": phase.name, "description": phase.title,
                      "try": [op for a in actions for op in _operations(a)]}
        steps.append(step)
    if cleanup:
        anchor = next((s for s in steps if s["name"] == "inject"), steps[0])
        anchor["cleanup"] = cleanup
    return {
        "apiVersion": API_VERSION, "kind": "Test",
        "metadata": {"name": plan.scenario},
        "spec": {
            "description": f"itbench scenario {plan.scenario} ({plan.domain}): deploy, inject, agent, evaluate, revert",
            "concurrent": False,  # scenarios share namespaces (otel-demo): one at a time per cluster
            "timeouts": {"apply": "2m", "assert": "10m", "cleanup": "10m", "delete": "5m", "exec": "35m"},
            "steps": steps,
        },
    }


def chainsaw_files(scenario: ir.Scenario, files: dict[str, bytes]) -> tuple[dict, dict[str, bytes]]:
    """(the Test, the folder's files: the bundle's run files and chainsaw-test.yaml)."""
    from ..serialize import dump_yaml

    test = chainsaw_test(engine_plan(scenario, files))
    out = bundle_files(files)
    out[TEST_FILE] = SCHEMA_COMMENT.encode("utf-8") + dump_yaml([test])
    return test, out
