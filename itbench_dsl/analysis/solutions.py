"""Solutions are evidence: each declared solution, replayed on the faulty state, must mitigate.

A solution step written as a shell command (`step "Roll back" run "kubectl -n shop rollout undo
deployment/cart"`) is replayed with runtime/kubectl/ on the manifests of the scenario's faulty state, as
a cluster would carry it out: the API server's refusals (an immutable field, a selector change)
included. The settled state (states.settle: a fault's effects last while what it did is still
there) is then graded as the mitigation task. A solution with a step in prose only (the agent's to
work out) is not replayed: its commands alone are not the solution.

Findings, located at the step they concern:

* E4006: the first solution does not mitigate when replayed, or the API server would refuse one of
  its steps: the scenario's own answer fails its grader, so one of the two is wrong;
* W2009: a step cannot be replayed (an interactive editor, a file that is not in the bundle, a
  shell construct), so the solution cannot serve as evidence;
* W2010: a further solution does not mitigate, or has a step the API server would refuse;
* E4026: a kubectl step of the first solution makes a request the agent's token may not (its access,
  manifests/agent-access.yaml, read by access.allows as the RBAC authorizer would: verbs, API groups,
  resources, resource names, namespaces), or a step's replayed changes (what it creates, changes,
  deletes, whatever command made them: `kubectl apply -f`) are ones the agent may not make: the replay
  runs as the admin, the agent does not; in a further solution, W2010;
* W2017: the refused requests are all on a fault tool's objects (access.FAULT_TOOL_GROUPS), which no
  default access grants: the step undoes the fault where the agent may not look, so the agent cannot
  take it unless the prompt grants the tool. Only where `mitigate` is posed: otherwise the solution is the
  operator's, not a task of the agent (a posed `mitigate` that needs the tool's object gone is E2037).
"""

from __future__ import annotations

from dataclasses import dataclass

from .. import ir


@dataclass(frozen=True)
class Finding:
    code: str
    message: str
    step: tuple[int, int]  # (solution index, step index): where the finding points


def _namespace(scenario: ir.Scenario) -> str | None:
    """The namespace a step's command works in when it names none: the faults' own, else the topology's first."""
    for injection in scenario.injections():
        if injection.target.namespace:
            return injection.target.namespace
    return scenario.topology.namespaces[0].name if scenario.topology.namespaces else None


def findings(scenario: ir.Scenario, files: dict[str, bytes], spec: dict | None = None) -> list[Finding]:
    """What replaying each solution with commands says about it."""
    from ..backends.evaluator import evaluator_spec
    from ..runtime.evaluator import evaluate
    from ..runtime.kubectl.replay import replay
    from ..runtime.kubectl.state import REFUSED, UNSUPPORTED
    from .states import as_served, exec_injections, objects, settle

    if scenario.domain == "ciso" or not scenario.injections():
        return []
    spec = spec or evaluator_spec(scenario)
    # a scenario that does not pose `mitigate` grades no repair: a solution it gives (for readers, for the ground
    # truth's recommended actions) is still replayed, and one that does not mitigate is a warning, not an error
    posed = "mitigate" in spec["tasks"]
    if not posed:
        spec = dict(spec, tasks=[*spec["tasks"], "mitigate"])
    found = objects(scenario)
    # `rollout undo` goes back to the template the workload ran before the fault
    history = {key: [obj["spec"]["template"]] for key, obj in found.healthy.items()
               if key[0] in ("Deployment", "StatefulSet") and key in found.faulty
               and found.faulty[key].get("spec", {}).get("template") != obj.get("spec", {}).get("template")}
    # a `kubectl exec` of a fault's revert command undoes that fault's command (its probes' results come back)
    reverts = exec_injections(scenario)
    execs, exec_index = list(reverts.values()), list(reverts)
    out: list[Finding] = list(_denied(scenario))
    judge = _change_judge(scenario)
    for i, solution in enumerate(scenario.solutions):
        commands = [(j, step.command) for j, step in enumerate(solution.steps) if step.command]
        if not commands or len(commands) < len(solution.steps):
            continue  # a step in prose carries part of the fix: the commands alone are not the solution
        # as the cluster stores them (a Secret's `stringData` is write-only, folded into `data`); replay replaces
        # what it changes and keeps the rest
        manifests = {key: as_served(obj) if key[0] == "Secret" else obj for key, obj in found.faulty.items()}
        stopped = False
        undone: set[int] = set()
        for j, command in commands:
            before = dict(manifests)
            outcome = replay(manifests, command, namespace=_namespace(scenario), files=files, history=history,
                             execs=execs)
            if outcome.status not in (UNSUPPORTED, REFUSED):
                refused = judge(before, manifests)
                if refused:
                    out.append(Finding("E4026" if i == 0 and posed else "W2010", f"solution `{solution.title}`: the "
                                       f"agent's access refuses the changes of `{command}` ({refused})", (i, j)))
            undone.update(exec_index[k] for k in outcome.execs)
            if outcome.status == UNSUPPORTED:
                out.append(Finding("W2009", f"solution `{solution.title}`: `{command}` cannot be replayed: "
                                   f"{outcome.message}", (i, j)))
                stopped = True
                break
            if outcome.status == REFUSED:
                out.append(Finding("E4006" if i == 0 and posed else "W2010", f"solution `{solution.title}`: the cluster would "
                                   f"refuse `{command}`: {outcome.message}", (i, j)))
                stopped = True
                break
        if stopped:
            continue
        verdict = evaluate(spec, None, settle(scenario, manifests, found, spec, frozenset(undone)), task="mitigate")
        if not verdict["passed"]:
            failed = [f"{c['id']}: {c['detail']}" for c in verdict["checks"] if not c["passed"]]
            out.append(Finding("E4006" if i == 0 and posed else "W2010", f"solution `{solution.title}`, replayed on the faulty "
                               f"state, does not mitigate: " + "; ".join(failed[:3]), (i, commands[-1][0])))
    return out


def _change_judge(scenario: ir.Scenario):
    """A test of one replayed step: the changes it made (objects created, changed, deleted) that the agent's access
    refuses, judged as the RBAC authorizer would (verb, group, resource, namespace, name), said in words; "" when
    all are allowed. A fault tool's objects are E2037's and W2017's to report, not this."""
    from ..access import FAULT_TOOL_GROUPS, allows, change_requests
    from ..backends.manifests import scenario_agent_access

    if not scenario.agent.namespaces:
        return lambda before, after: ""
    objects = scenario_agent_access(scenario)
    account, home = scenario.agent.service_account, scenario.agent.namespaces[0]

    def refused(before: dict, after: dict) -> str:
        denied = [r for r in change_requests(before, after)
                  if r.group not in FAULT_TOOL_GROUPS and not allows(objects, account, home, r)]
        return ", ".join(f"{r.verb} {r.resource}" + (f".{r.group}" if r.group else "") + (f" {r.name}" if r.name else "")
                         + (f" in {r.namespace}" if r.namespace else " cluster-wide") for r in denied[:3])

    return refused


def _denied(scenario: ir.Scenario) -> list[Finding]:
    """E4026: the first solution's kubectl commands that the agent's own access refuses (commands whose
    requests access.command_rights does not know are not judged)."""
    import shlex

    from ..access import FAULT_TOOL_GROUPS, UnknownCommand, allows, command_rights, request_order
    from ..backends.manifests import scenario_agent_access
    from ..tasks import posed

    if not scenario.solutions or not scenario.agent.namespaces:
        return []
    objects = scenario_agent_access(scenario)
    account, home = scenario.agent.service_account, scenario.agent.namespaces[0]
    mitigating = "mitigate" in posed(scenario)
    default = _namespace(scenario) or home
    out = []
    for j, step in enumerate(scenario.solutions[0].steps):
        for command in (step.command or "").split("|"):
            command = command.strip()
            try:
                words = shlex.split(command)
            except ValueError:
                continue
            if not words or words[0] != "kubectl" or "--dry-run=client" in words:
                continue
            try:
                requests = command_rights(command, default)
            except UnknownCommand:
                continue
            refused = sorted({r for r in requests if not allows(objects, account, home, r)}, key=request_order)
            if refused and all(r.group in FAULT_TOOL_GROUPS for r in refused):
                if not mitigating:
                    continue  # the agent is not asked to repair: the step is the operator's (E2037 otherwise)
                tools = ", ".join(sorted({f"`{r.group}`" for r in refused}))
                out.append(Finding("W2017", f"solution `{scenario.solutions[0].title}`: `{command}` acts on a fault "
                                   f"tool's objects ({tools}), which the agent may not read: it cannot take this "
                                   "step, so the fault stays unless the harness reverts it", (0, j)))
            elif refused:
                what = ", ".join(f"{r.verb} {r.resource}" + (f".{r.group}" if r.group else "")
                                 + (f" in {r.namespace}" if r.namespace else " cluster-wide") for r in refused[:3])
                out.append(Finding("E4026", f"solution `{scenario.solutions[0].title}`: the agent's access refuses "
                                   f"`{command}` ({what})", (0, j)))
    return out
