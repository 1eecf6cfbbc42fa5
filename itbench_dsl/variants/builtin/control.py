"""control: the paired no-fault scenario of an SRE scenario, for detection tasks.

The control keeps the parent's topology, prompt setting and `mitigated when` predicates on
topology objects and alerts (`alert X not firing`), and drops everything the fault brings: the faults and their groups, alerts,
root causes, propagations, predicates on objects a fault creates, and the solutions. It says it
is a control with `metadata { control = true }` (an SRE scenario with no fault is otherwise an
error), and states what it poses with `tasks`: what its parent poses (its `tasks`, else the domain's
default) that a control can pose (`detect`, `mitigate`), so that a control is graded and prompted alike
whatever its parent declared: its mitigation checks that nothing changed (`unchanged.*`), and its
prompt claims no incident. Its oracle: the cluster is healthy, so the evaluator passes the healthy state (and its
"faulty" and "solved" states, which are the same cluster); it has no root cause, so any root
cause an agent names is a false positive. A detection benchmark pairs each scenario with its
control and asks the agent whether there is an incident at all.
"""

from __future__ import annotations

import dataclasses

from itbench_dsl import ast
from itbench_dsl.faults import CREATABLE_KINDS
from itbench_dsl.variants import Context, Generator, Skip, Variant, expect_statements, with_expect
from itbench_dsl.tasks import TASK_TYPES, posed


class ControlGenerator(Generator):
    name = "control"
    summary = "the paired no-fault scenario, for detection tasks"

    def generate(self, ctx: Context):
        if ctx.scenario.domain != "sre":
            yield Skip(f"controls are made for SRE detection tasks, not {ctx.scenario.domain} scenarios")
            return
        # a control poses only what has an answer without a fault (detect: no; mitigate: change nothing), of what
        # its parent poses, declared or by default, and says so in a `tasks` statement: the same control, the
        # same grading and prompt, whether or not the parent wrote `tasks`
        declared = next((s for s in ctx.document.statements if isinstance(s, ast.Tasks)), None)
        items = declared.items if declared is not None else tuple(ast.TaskItem(name) for name in posed(ctx.scenario))
        kept = tuple(item for item in items if TASK_TYPES[item.name].control)
        if not kept:
            yield Skip("the scenario poses no task a control can pose (detect, mitigate)")
            return
        tasks = dataclasses.replace(declared, items=kept) if declared is not None else ast.Tasks(kept)
        statements = []
        for stmt in ctx.document.statements:
            if isinstance(stmt, (ast.Fault, ast.Group, ast.Solution, ast.Metadata, ast.Tasks)):
                continue
            statements.append(stmt)
        metadata = ast.Metadata((ast.Attr("control", (), ast.Symbol("true")),))
        position = next((i + 1 for i, s in enumerate(statements) if isinstance(s, (ast.Description, ast.Tags))), 0)
        statements[position:position] = [metadata, tasks]
        document = dataclasses.replace(ctx.document, statements=tuple(statements))
        expect = []
        for stmt in expect_statements(ctx.document):
            if isinstance(stmt, ast.Mitigated):
                # scope and probe predicates name no object; one on an object the fault creates has no control
                predicates = tuple(p for p in stmt.predicates if getattr(p, "target", None) is None
                                   or p.target.kind not in CREATABLE_KINDS)
                if predicates:
                    expect.append(dataclasses.replace(stmt, predicates=predicates))
            elif isinstance(stmt, ast.Optimal):
                expect.append(stmt)
        # the parent's alerts: the control ships their rules too (the same rules as its faulty twin, so that
        # listing them tells nothing), and they must not fire in the healthy cluster
        named = {getattr(p, "name", None) for m in expect if isinstance(m, ast.Mitigated) for p in m.predicates
                 if isinstance(p, ast.AlertPredicate)}
        quiet = tuple(ast.AlertPredicate(name, False) for name in dict.fromkeys(a.name for a in ctx.scenario.alerts)
                      if name not in named)
        if quiet:
            mitigated = next((m for m in expect if isinstance(m, ast.Mitigated)), None)
            if mitigated is None:
                expect.append(ast.Mitigated(None, quiet))
            else:
                expect[expect.index(mitigated)] = dataclasses.replace(mitigated,
                                                                      predicates=mitigated.predicates + quiet)
        if not any(isinstance(m, ast.Mitigated) and any(not isinstance(p, ast.AlertPredicate) for p in m.predicates)
                   for m in expect):
            # nothing of the parent's oracle is left: the fault's target must be up
            targets = [i.target for i in ctx.scenario.injections() if i.target.kind in ("Deployment", "StatefulSet")]
            if not targets:
                yield Skip("no mitigation predicate survives without the fault, and the fault targets no workload")
                return
            ref = ast.Ref(targets[0].kind.lower(), targets[0].name)
            ready = ast.StatePredicate(ref, "ready", None)
            mitigated = next((m for m in expect if isinstance(m, ast.Mitigated)), None)
            if mitigated is None:
                expect.append(ast.Mitigated(None, (ready,)))
            else:
                expect[expect.index(mitigated)] = dataclasses.replace(mitigated,
                                                                      predicates=(ready,) + mitigated.predicates)
        document = with_expect(document, expect)
        document = dataclasses.replace(document, statements=tuple(
            dataclasses.replace(s, text="Control: no fault is injected; the cluster runs as deployed.")
            if isinstance(s, ast.Description) else s for s in document.statements))
        yield Variant(document, note="control")
