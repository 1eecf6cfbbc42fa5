"""retarget: the scenario's fault moved to every other topology object that meets its preconditions.

The candidates are the topology's objects of a kind the fault accepts (its FaultKind's
`targets`); the fault's own check (run by the checker on every variant) decides which of them
meet its preconditions: a candidate it refuses is skipped with the fault's own message. Every
reference to the old target's component follows it: the fault and its waiters, root causes,
pod patterns, objects the fault creates (`schedule "cart-pod-kill"` becomes `"ad-pod-kill"`),
mitigation predicates, the prose. Alerts stay where the new target's callers would see them;
propagation chains keep the edges that still follow the topology.
"""

from __future__ import annotations

import dataclasses
import re

from itbench_dsl import ast
from itbench_dsl.faults import CREATABLE_KINDS, FAULTS
from itbench_dsl.generate import (
    Context,
    Generator,
    Skip,
    Variant,
    callers,
    component_of,
    expect_statements,
    faults_of,
    map_nodes,
    object_refs,
    replace_text,
    split_chain,
    with_expect,
)


class RetargetGenerator(Generator):
    name = "retarget"
    summary = "the fault moved to every other object that meets its preconditions"

    def generate(self, ctx: Context):
        faults = faults_of(ctx.document)
        injections = ctx.scenario.injections()
        if not faults or not injections:
            yield Skip("the scenario has no fault to move")
            return
        old = injections[0].target
        kind = FAULTS[injections[0].fault]
        if old.kind == "Pod":  # a static pod: its fault is about the cluster, not one of the application's objects
            yield Skip(f"`{kind.name}` acts on a component the cluster provides ({old.name})")
            return
        candidates = [r for r in object_refs(ctx.scenario.topology, kind.targets) if r != old]
        if not candidates:
            yield Skip(f"the topology has no other {' or '.join(kind.targets)} for `{kind.name}`")
            return
        if ctx.n is not None:  # a seeded choice among the candidates, tried in that order
            candidates = ctx.rng.sample(candidates, len(candidates))
        takes_container = any(arg.name == "container" for arg in kind.args)
        has_container = any(isinstance(e, ast.Attr) and e.key == "container" for e in faults[0].entries or ())
        for new in candidates:
            note = f"{kind.name}: {old.kind.lower()} {old.name} -> {new.name}"
            document = retarget(ctx, old, new)
            containers = [c.name for w in ctx.scenario.topology.workloads if w.kind == new.kind
                          and w.name == new.name and w.namespace == new.namespace for c in w.containers]
            if takes_container and not has_container and len(containers) > 1:
                for container in containers:  # the fault must say which container: one variant each
                    yield Variant(with_container(document, container), note=f"{note} (container {container})")
            else:
                yield Variant(document, note=note)


def with_container(document: ast.Scenario, container: str) -> ast.Scenario:
    """The first fault with `container = "NAME"` added."""
    first = faults_of(document)[0]

    def visit(node):
        if node is first:
            return dataclasses.replace(node, entries=(node.entries or ()) + (ast.Attr("container", (), ast.Str(container)),))
        return None
    return map_nodes(document, visit)


def retarget(ctx: Context, old, new) -> ast.Scenario:
    topology = ctx.scenario.topology
    a, b = old.name, new.name
    names = {(o.name) for o in topology.workloads} | {s.name for s in topology.services}
    services = {s.name for s in topology.services}
    new_kind = {"Deployment": "deployment", "StatefulSet": "statefulset"}.get(new.kind, new.kind.lower())

    def rename(name: str) -> str:
        return b if name == a else name

    def ref_map(ref: ast.Ref) -> ast.Ref | None:
        namespace, _, name = ref.name.rpartition("/")
        prefix = namespace + "/" if namespace else ""
        if ref.kind == "pod" and (name.startswith(a + "-") or name == a):
            return dataclasses.replace(ref, name=prefix + b + name[len(a):])
        if (ref.kind in CREATABLE_KINDS or ref.kind == "group") and name.startswith(a + "-"):
            return dataclasses.replace(ref, name=prefix + b + name[len(a):])
        if name == a:
            if ref.kind == new_kind or ref.kind in ("deployment", "statefulset") and new_kind in ("deployment", "statefulset"):
                return dataclasses.replace(ref, kind=new_kind, name=prefix + b)
            if ref.kind == "service":
                return dataclasses.replace(ref, name=prefix + b)  # kept only where a service `b` exists
            return dataclasses.replace(ref, kind=new_kind, name=prefix + b)
        return None

    def visit(node):
        if isinstance(node, ast.Ref):
            return ref_map(node)
        if isinstance(node, ast.GroundGroup) and node.id.startswith(a + "-"):
            return dataclasses.replace(node, id=b + node.id[len(a):])
        if isinstance(node, ast.Str) and a in names and (node.value == a or node.value.startswith(a + "-")):
            # a container named after its workload, an experiment named `<workload>-...`
            return dataclasses.replace(node, value=b + node.value[len(a):])
        return None

    statements = []
    for stmt in ctx.document.statements:
        if isinstance(stmt, (ast.Fault, ast.Group)):
            stmt = map_nodes(stmt, visit)
        statements.append(stmt)
    document = dataclasses.replace(ctx.document, statements=tuple(statements))

    # expectations: mapped, then pruned to what the topology supports around the new target
    target_component = component_of(ast.Ref(new_kind, b), topology) or b
    watchers = callers(topology, target_component) | {target_component}
    expect = []
    alert_names = []
    mapped = [map_nodes(stmt, visit) for stmt in expect_statements(document)]
    groups: dict[str, ast.Ref] = {}
    for stmt in mapped:
        if isinstance(stmt, ast.GroundGroup):
            if stmt.id in groups:  # the moved group is now the new target's own group: one is enough
                continue
            groups[stmt.id] = stmt.target
    seen_groups: set[str] = set()
    for stmt in mapped:
        if isinstance(stmt, ast.GroundGroup):
            if stmt.id in seen_groups:
                continue
            seen_groups.add(stmt.id)
        if isinstance(stmt, ast.Alert):
            alert_names.append(stmt.name)
            if stmt.target.kind == "service" and stmt.target.name.split("/")[-1] not in services:
                stmt = dataclasses.replace(stmt, target=ast.Ref(new_kind, b))
            component = component_of(stmt.target, topology)
            if component is not None and component not in watchers:
                continue
        if isinstance(stmt, ast.Propagation):
            chain = []
            for ref in stmt.chain:  # a service the new target does not have leaves the chain
                if ref.kind == "service" and ref.name.split("/")[-1] not in services:
                    continue
                if not chain or chain[-1] != ref:
                    chain.append(ref)
            for chain in split_chain(tuple(chain), topology, groups) if len(chain) >= 2 else ():
                if len({component_of(r, topology, groups) or r.name for r in chain}) < 2:
                    continue  # within one component: no edge between ground-truth groups
                expect.append(dataclasses.replace(stmt, chain=chain))
            continue
        expect.append(stmt)
    if alert_names and not any(isinstance(s, ast.Alert) for s in expect):
        service = b if b in services else None
        where = ast.Ref("service", service) if service else ast.Ref(new_kind, b)
        expect[:0] = [ast.Alert(name, where, None) for name in dict.fromkeys(alert_names)]
    document = with_expect(document, expect)

    pattern = re.compile(r"(?<![A-Za-z0-9_.])" + re.escape(a) + r"(?![A-Za-z0-9_])", re.IGNORECASE)
    return replace_text(document, lambda text: pattern.sub(b, text))
