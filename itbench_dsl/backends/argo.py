"""`itbench compile --target argo` and `itbench plan`: Argo Workflows objects (argoproj.io/v1alpha1).

`workflow_template`: one WorkflowTemplate per scenario, self-contained (the bundle files it reads are
`raw` input artifacts, so no artifact repository is needed). The phases of lifecycle.PHASES run as
script pods grouped where they share files (deploy; inject with its baseline and alert wait; the hand-over;
the agent; the snapshot and the evaluation, whose verdict is the workflow's output parameter); the phases
that run whatever happened (revert, verify, undeploy) are the `onExit` handler. The cluster is a
kubeconfig Secret (key `config`), named by the `kubeconfig-secret` parameter, mounted in every pod but the
agent's: the hand-over pod mints the agent's token, reviews what it holds as the agent (its output
`agent-reach`: engines.REVIEW_PY; the run stops when it holds more than the access grants) and passes its one-user
kubeconfig as a parameter, the agent's pod holds only that kubeconfig and the prompt, and passes the agent's answer
files on to the evaluation (base64, each a parameter; a parameter reaches a script in an environment variable).

`plan_workflow`: one Workflow that runs scenarios x agents x repeats as child Workflows of those
templates, `parallelism` at a time, each cluster running one at a time (a mutex per cluster Secret).
"""

from __future__ import annotations

import json

from .. import ir
from ..run.lifecycle import FIELD_MANAGER, PHASES, PROMPT_WORKSPACE, PlanOptions
from .engines import RECORDS, Action, EnginePlan, bundle_files, engine_plan, ready_script

API_VERSION = "argoproj.io/v1alpha1"
TEMPLATE_FILE = "workflowtemplate.yaml"
# the pods of a run: each runs these lifecycle phases, in PHASES order
PODS = (("deploy", ("preflight", "deploy")), ("inject", ("baseline", "inject", "alerts")), ("handover", ("handover",)),
        ("agent", ("agent",)), ("evaluate", ("snapshot", "evaluate")))
EXIT_PODS = (("revert", ("revert", "verify")), ("undeploy", ("undeploy",)))
# the agent's budget, `itbench run`'s default (--agent-timeout 30m), and how long its pod may outlive it (its
# answers sent) before Argo ends it (the template's activeDeadlineSeconds)
AGENT_TIMEOUT = int(PlanOptions.agent_timeout)
AGENT_GRACE = 120
PARAMETERS = (
    ("image", "an image with sh, kubectl, curl and python3 (ansible-playbook for CISO host scenarios)", None),
    ("kubeconfig-secret", "the Secret (key `config`) holding the kubeconfig of the cluster to run on", "itbench-kubeconfig"),
    ("prometheus-url", "the Prometheus the alert rules are loaded in", ""),
    ("agent", "the agent's command, run in its own folder with its own kubeconfig (no cluster Secret in its pod)", ""),
    ("agent-env", "names of the variables of the agent's container it also gets (an API key from a Secret)", ""),
    ("agent-timeout", "the agent's time budget in seconds, as `itbench run --agent-timeout`: the agent is stopped "
     "when it overruns it and its answers are graded as it left them; its pod is ended "
     f"{AGENT_GRACE} s later whatever it does, and the revert still runs (onExit)", str(AGENT_TIMEOUT)),
    ("keep", "`true` leaves the deployed scenario in place", "false"),
    ("executor-service-account", "the service account of the agent pod's Argo executor (its `wait` container); the "
     "agent's own container mounts no service-account token", "default"),
)
BUNDLE = "/bundle"
AGENT_HOSTNAME = "agent"  # the agent pod's hostname, the same in every scenario
AGENT_FOLDER = "/tmp/itbench-agent"  # the agent's folder in the pods that hand over, run the agent and grade it
SENT = "/tmp/itbench-sent"  # the agent pod's outputs, outside the agent's folder: its answers, base64-encoded


def _variable(parameter: str) -> str:
    return "ITBENCH_IN_" + parameter.upper().replace("-", "_").replace(".", "_")


def _receive(parameter: str, path: str, encoded: bool = False) -> tuple[str, dict]:
    """(shell that writes an input parameter to `path`, the env entry that carries it). Argo substitutes
    `{{inputs.parameters.*}}` textually: a value is never spliced into a script, which would run what it holds
    (an answer holding a line that ends a here-document), only into an environment variable the script reads.
    `encoded`: the value is base64 (the agent's answer files: any bytes, and an empty value for no file)."""
    variable = _variable(parameter)
    write = (f'if [ -n "${variable}" ]; then printf \'%s\' "${variable}" | base64 -d > {path}; fi\n' if encoded
             else f'if [ -n "${variable}" ]; then printf \'%s\\n\' "${variable}" > {path}; fi\n')
    return f"mkdir -p {AGENT_FOLDER}\n" + write, {"name": variable, "value": f"{{{{inputs.parameters.{parameter}}}}}"}


def _answer_parameter(name: str) -> str:
    """The parameter that carries the agent's answer file `name` (base64) from its pod to the evaluation."""
    return "answer-" + name.replace("/", "-").replace(".", "-").replace("_", "-").lower()


def _send(names: list[str]) -> str:
    """Shell, after the agent: each answer file the agent wrote, base64 on one line, where its output parameter
    is read (outside the agent's folder)."""
    lines = [f"mkdir -p {SENT}"]
    for name in names:
        lines.append(f'if [ -f "{AGENT_FOLDER}/{name}" ]; then base64 < "{AGENT_FOLDER}/{name}" | tr -d \'\\n\' '
                     f'> {SENT}/{_answer_parameter(name)}; fi')
    return "\n".join(lines) + "\n"


def template_name(scenario: str) -> str:
    return f"itbench-{scenario}"


def _check_phases() -> None:
    """Every lifecycle phase runs in exactly one pod, in order (a phase added to lifecycle.py must be placed)."""
    placed = [p for _, phases in (*PODS, *EXIT_PODS) for p in phases]
    assert placed == [p.name for p in PHASES], f"argo pods do not follow lifecycle.PHASES: {placed}"


def _shell(action: Action) -> str:
    if action.kind == "apply":
        return f"kubectl apply --server-side --field-manager={FIELD_MANAGER} -f {action.file}\n"
    if action.kind == "delete":
        return f"kubectl delete --ignore-not-found -f {action.file}\n"
    if action.kind == "ready":
        return ready_script(action.refs)
    return action.script


def _pod(name: str, phases: tuple[str, ...], plan: EnginePlan, files: dict[str, bytes]) -> dict | None:
    actions = [a for phase in phases for a in plan.phases.get(phase, [])]
    if not actions:
        return None
    # each action a subshell (`set -eu` inside), its status checked outside (a subshell on the left of `||` would run
    # with `set -e` ignored): a failed action fails the pod; in the pods that run whatever happened (revert,
    # verify, undeploy) every action is tried and the failures reported together, as `itbench run` does
    always = all(p in plan.cleanup for p in phases)
    on_failure = "failed=1" if always else "exit 1"
    source = "".join(f"# {phase}\n" + "".join(f"( {_shell(a).strip()}\n)\n[ $? -eq 0 ] || {on_failure}\n"
                                              for a in plan.phases.get(phase, []))
                     for phase in phases if plan.phases.get(phase))
    if always:
        source = "failed=0\n" + source + "exit $failed\n"
    inputs: list[dict] = []
    outputs: list[dict] = []
    received: list[dict] = []  # the env entries that carry the input parameters
    answers = plan.answers
    # what a phase of this pod records for the evaluation (engines.RECORDS), as an output parameter
    outputs += [{"name": f"record-{r}", "valueFrom": {"path": f"{BUNDLE}/{r}", "default": ""}}
                for r in plan.records if RECORDS[r] in phases and name != "evaluate"]
    if name == "handover":  # the agent's kubeconfig, for the agent's pod
        outputs.append({"name": "agent-kubeconfig", "valueFrom": {"path": f"{AGENT_FOLDER}/kubeconfig.yaml"}})
        # what the token holds, as the hand-over reviewed it (engines.REVIEW_PY): the run's record of the agent's reach
        outputs.append({"name": "agent-reach", "valueFrom": {"path": f"{BUNDLE}/agent-reach.json", "default": ""}})
    if name == "agent":  # its kubeconfig in, its answer out
        inputs.append({"name": "agent-kubeconfig"})
        script, variable = _receive("agent-kubeconfig", f"{AGENT_FOLDER}/kubeconfig.yaml")
        received.append(variable)
        source = (script + f'sed "s#{PROMPT_WORKSPACE}#{AGENT_FOLDER}#g" prompt.md > {AGENT_FOLDER}/prompt.md\n'
                  + source + _send(list(answers)))
        outputs += [{"name": _answer_parameter(n), "valueFrom": {"path": f"{SENT}/{_answer_parameter(n)}", "default": ""}}
                    for n in answers]
    if name == "evaluate":
        for answer in answers:
            inputs.append({"name": _answer_parameter(answer)})
            script, variable = _receive(_answer_parameter(answer), f"{AGENT_FOLDER}/{answer}", encoded=True)
            received.append(variable)
            source = script + source
        for record in plan.records:
            if RECORDS[record] not in phases:
                inputs.append({"name": f"record-{record}"})
                script, variable = _receive(f"record-{record}", f"{BUNDLE}/{record}")
                received.append(variable)
                source = script + source
        outputs.append({"name": "verdict", "valueFrom": {"path": f"{BUNDLE}/verdict.json"}})
    needed = sorted(n for n in files if n in source)
    template: dict = {"name": name}
    if needed or inputs:
        template["inputs"] = {}
        if inputs:
            template["inputs"]["parameters"] = inputs
        if needed:
            template["inputs"]["artifacts"] = [{"name": n.replace("/", "-").replace(".", "-"), "path": f"{BUNDLE}/{n}",
                                                "raw": {"data": files[n].decode("utf-8")}} for n in needed]
    if outputs:
        template["outputs"] = {"parameters": outputs}
    env = [{"name": "ITBENCH_WORKSPACE", "value": AGENT_FOLDER}]
    if name == "agent":  # the agent's container: no cluster Secret, no KUBECONFIG but its own
        env.append({"name": "ITBENCH_AGENT", "value": "{{workflow.parameters.agent}}"})
        env.append({"name": "ITBENCH_AGENT_ENV", "value": "{{workflow.parameters.agent-env}}"})
        env.append({"name": "ITBENCH_AGENT_TIMEOUT", "value": "{{workflow.parameters.agent-timeout}}"})
    else:
        env = [{"name": "KUBECONFIG", "value": "/kube/config"},
               {"name": "PROMETHEUS_URL", "value": "{{workflow.parameters.prometheus-url}}"}, *env]
    env += received
    template["script"] = {"image": "{{workflow.parameters.image}}", "command": ["sh"], "workingDir": BUNDLE,
                          "env": env}
    if name != "agent":
        template["script"]["volumeMounts"] = [{"name": "kubeconfig", "mountPath": "/kube", "readOnly": True}]
    else:
        # the workflow's service-account token would let the agent read the Workflow, whose stored templates
        # hold the evaluator and the ground truth: its pod mounts none (its kubeconfig is its only credential),
        # and Argo's executor reports the outputs with its own account
        template["automountServiceAccountToken"] = False
        # a pod's hostname is its name, which Argo derives from the Workflow's (`argo submit --from
        # workflowtemplate/itbench-<scenario>` names it after the scenario): `hostname` would tell the agent
        template["podSpecPatch"] = json.dumps({"hostname": AGENT_HOSTNAME})
        template["executor"] = {"serviceAccountName": "{{workflow.parameters.executor-service-account}}"}
        # the agent's budget (its script stops the agent at `agent-timeout`); a pod that outlives it by AGENT_GRACE
        # (a hung container) is ended by Kubernetes, the run fails and the onExit handler still reverts
        template["activeDeadlineSeconds"] = f"{{{{=asInt(workflow.parameters['agent-timeout']) + {AGENT_GRACE}}}}}"
    template["script"]["source"] = source
    return template


def _pod_of(phase: str) -> str:
    return next(name for name, phases in PODS if phase in phases)


def workflow_template(plan: EnginePlan, files: dict[str, bytes]) -> dict:
    _check_phases()
    pods = [t for name, phases in PODS if (t := _pod(name, phases, plan, files)) is not None]
    exits = [t for name, phases in EXIT_PODS if (t := _pod(name, phases, plan, files)) is not None]
    run = {"name": "run", "steps": []}
    for t in pods:
        step: dict = {"name": t["name"], "template": t["name"]}
        if t["name"] == "agent":
            step["arguments"] = {"parameters": [{"name": "agent-kubeconfig",
                                                 "value": "{{steps.handover.outputs.parameters.agent-kubeconfig}}"}]}
        if t["name"] == "evaluate":
            step["arguments"] = {"parameters": [
                *({"name": _answer_parameter(n), "value": f"{{{{steps.agent.outputs.parameters.{_answer_parameter(n)}}}}}"}
                  for n in plan.answers),
                *({"name": f"record-{r}", "value": f"{{{{steps.{_pod_of(RECORDS[r])}.outputs.parameters.record-{r}}}}}"}
                  for r in plan.records)]}
        run["steps"].append([step])
    exit_steps = []
    for t in exits:
        step: dict = {"name": t["name"], "template": t["name"]}
        if t["name"] == "undeploy":
            step["when"] = "'{{workflow.parameters.keep}}' != 'true'"
        exit_steps.append([step])
    spec: dict = {
        "entrypoint": "run",
        "arguments": {"parameters": [({"name": n, "description": d} | ({"value": v} if v is not None else {}))
                                     for n, d, v in PARAMETERS]},
        "volumes": [{"name": "kubeconfig", "secret": {"secretName": "{{workflow.parameters.kubeconfig-secret}}"}}],
        "templates": [run, *pods],
    }
    if exit_steps:
        spec["onExit"] = "exit"
        spec["templates"] += [{"name": "exit", "steps": exit_steps}, *exits]
    return {"apiVersion": API_VERSION, "kind": "WorkflowTemplate",
            "metadata": {"name": template_name(plan.scenario),
                         "labels": {"app.kubernetes.io/managed-by": "itbench", "itbench.io/domain": plan.domain}},
            "spec": spec}


def argo_files(scenario: ir.Scenario, files: dict[str, bytes]) -> tuple[dict, dict[str, bytes]]:
    """(the WorkflowTemplate, the folder's files: its YAML; the bundle files are inside it)."""
    from ..serialize import dump_yaml

    template = workflow_template(engine_plan(scenario, files), bundle_files(files))
    return template, {TEMPLATE_FILE: dump_yaml([template])}


def plan_workflow(scenarios: list[str], agents: list[tuple[str, str]], repeats: int, parallelism: int,
                  clusters: list[str], image: str, prometheus: str = "", name: str = "itbench-plan") -> dict:
    """A Workflow running every (scenario, agent, repeat) as a child Workflow of the scenario's template,
    at most `parallelism` at once and one at a time per cluster; runs are dealt to clusters in turn."""
    items = []
    for index, (scenario, (agent, command), repeat) in enumerate(
            (s, a, r) for s in scenarios for a in agents for r in range(1, repeats + 1)):
        items.append({"scenario": scenario, "template": template_name(scenario), "agent": agent, "command": command,
                      "repeat": str(repeat), "cluster": clusters[index % len(clusters)]})
    child = {
        "apiVersion": API_VERSION, "kind": "Workflow",
        # a name that does not say the scenario (its pods' names, the agent's among them, derive from it); the
        # scenario's template is in an annotation of the Workflow, which the agent cannot read
        "metadata": {"generateName": "itbench-run-",
                     "annotations": {"itbench.io/template": "{{inputs.parameters.template}}"},
                     "labels": {"app.kubernetes.io/managed-by": "itbench", "itbench.io/plan": name,
                                "itbench.io/agent": "{{inputs.parameters.agent}}"}},
        "spec": {"workflowTemplateRef": {"name": "{{inputs.parameters.template}}"},
                 "arguments": {"parameters": [
                     {"name": "image", "value": image},
                     {"name": "kubeconfig-secret", "value": "{{inputs.parameters.cluster}}"},
                     {"name": "prometheus-url", "value": prometheus},
                     {"name": "agent", "value": "{{inputs.parameters.command}}"}]}},
    }
    import yaml as _yaml  # the child manifest is a string field: Argo substitutes its parameters

    run = {
        "name": "run-one",
        "inputs": {"parameters": [{"name": p} for p in ("template", "agent", "command", "cluster")]},
        "synchronization": {"mutexes": [{"name": "{{inputs.parameters.cluster}}"}]},
        "resource": {"action": "create", "setOwnerReference": True,
                     "successCondition": "status.phase == Succeeded",
                     "failureCondition": "status.phase in (Failed, Error)",
                     "manifest": _yaml.safe_dump(child, sort_keys=False)},
    }
    fan_out = {"name": "runs", "steps": [[{
        "name": "run", "template": "run-one",
        "arguments": {"parameters": [{"name": p, "value": "{{item.%s}}" % p}
                                     for p in ("template", "agent", "command", "cluster")]},
        "withItems": items}]]}
    return {"apiVersion": API_VERSION, "kind": "Workflow",
            "metadata": {"name": name, "labels": {"app.kubernetes.io/managed-by": "itbench"}},
            "spec": {"entrypoint": "runs", "parallelism": parallelism, "templates": [fan_out, run]}}
