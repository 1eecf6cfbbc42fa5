"""Under Argo the agent's pod is named after its Workflow, and a pod's hostname is its name: neither may say the
scenario."""

import json

import yaml

from itbench_dsl.backends.argo import AGENT_HOSTNAME, plan_workflow, template_name


def test_plan_children_are_named_without_the_scenario():
    plan = plan_workflow(["otel-checkout-insufficient-quota"], [("a", "true")], 1, 1, ["c"], "img")
    run = next(t for t in plan["spec"]["templates"] if t["name"] == "run-one")
    child = yaml.safe_load(run["resource"]["manifest"])
    assert child["metadata"]["generateName"] == "itbench-run-"
    assert "template" not in json.dumps(child["metadata"].get("labels", {}))
    assert child["spec"]["workflowTemplateRef"]["name"] == "{{inputs.parameters.template}}"
    items = plan["spec"]["templates"][0]["steps"][0][0]["withItems"]
    assert items[0]["template"] == template_name("otel-checkout-insufficient-quota")


def test_the_agent_pod_has_a_neutral_hostname():
    from itbench_dsl.backends.argo import _pod
    from itbench_dsl.backends.engines import Action

    plan = type("Plan", (), {"phases": {"agent": [Action("script", "agent", script="true")]},
                             "cleanup": (), "answers": (), "records": ()})()
    template = _pod("agent", ("agent",), plan, {})
    assert json.loads(template["podSpecPatch"]) == {"hostname": AGENT_HOSTNAME}
    assert AGENT_HOSTNAME == "agent"
