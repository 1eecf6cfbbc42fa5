"""An example third-party generator: the fault's target workload at 2 and 3 replicas.

It adds `replicas = N` to the target's object when the scenario declares it inline; a scenario
that uses a standard application cannot change the application's objects, so it is skipped.
"""

from __future__ import annotations

import dataclasses

from itbench_dsl import ast
from itbench_dsl.variants import Context, Generator, Skip, Variant


class ReplicasGenerator(Generator):
    name = "replicas"
    summary = "the fault's target workload at 2 and 3 replicas"

    def generate(self, ctx: Context):
        injections = ctx.scenario.injections()
        if not injections or injections[0].target.kind not in ("Deployment", "StatefulSet"):
            yield Skip("the fault does not target a workload")
            return
        target = injections[0].target.name
        inline = [s for s in ctx.document.statements if isinstance(s, ast.Topology)
                  and any(isinstance(o, ast.Object) and o.name == target for o in s.statements)]
        if not inline:
            yield Skip(f"workload `{target}` is not declared in the scenario's own topology")
            return
        for replicas in (2, 3):
            def visit(node, replicas=replicas):
                if isinstance(node, ast.Object) and node.name == target and node.kind in ("deployment", "statefulset"):
                    entries = tuple(e for e in node.entries or () if not (isinstance(e, ast.Attr) and e.key == "replicas"))
                    return dataclasses.replace(node, entries=(ast.Attr("replicas", (), ast.Int(replicas)),) + entries)
                return None

            statements = tuple(_map(s, visit) if isinstance(s, ast.Topology) else s for s in ctx.document.statements)
            yield Variant(dataclasses.replace(ctx.document, statements=statements), note=f"{target}: {replicas} replicas")


def _map(topology: ast.Topology, visit) -> ast.Topology:
    return dataclasses.replace(topology, statements=tuple(visit(s) or s for s in topology.statements))
