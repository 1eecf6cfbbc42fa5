"""compose: two-fault scenarios from inputs whose faults can coexist on one topology.

Each pair of inputs of the same domain that use the same application and add no topology of their
own is composed once, under the input whose name sorts first, whatever the order they were given in.
The faults coexist when they act on different components, with different mechanisms, and change or
create no object in common (targets, the other objects they patch, the objects they create), and neither
stops the requests to a component where the other expects requests to fail or slow (a no-traffic alert of one
where the other expects a request alert: the cut masks the failure, whose alerts would never fire). The
variant keeps the input and adds the partner's faults and params, with one solution: the input's
first, then the partner's first; its ground truth is the union: both inputs' alerts, root causes
(written out, so that neither is lost) and propagations, and one `mitigated when` block with both
inputs' predicates (within the longer of the two deadlines).
"""

from __future__ import annotations

import dataclasses

from itbench_dsl import ast, ir
from itbench_dsl.variants import (
    Context,
    Generator,
    Parent,
    Skip,
    Variant,
    ast_ref,
    expect_statements,
    statements_of,
    with_expect,
)


def _app(document: ast.Scenario) -> str | None:
    uses = statements_of(document, ast.UseApp)
    return uses[0].name if uses else None


def _touched(scenario: ir.Scenario) -> set[tuple]:
    keys = set()
    for injection in scenario.injections():
        for ref in [injection.target, *injection.side_objects, *injection.created]:
            keys.add((ref.kind, ref.namespace, ref.name))
    return keys


def _components(scenario: ir.Scenario) -> set[str]:
    return {i.target.name for i in scenario.injections()}


def conflict(a: Parent, b: Parent) -> str | None:
    """Why the faults of a and b cannot coexist (None when they can)."""
    if a.scenario.domain != b.scenario.domain:
        return (f"different domains ({a.scenario.domain} and {b.scenario.domain}): a {b.scenario.domain} scenario "
                f"cannot share a run with a {a.scenario.domain} one (one prompt, one task, one evaluator)")
    if a.scenario.domain == "ciso":
        return "CISO scenarios have no fault: a control under test cannot share a run with another"
    for p in (a, b):
        if _is_control(p):
            return (f"`{p.name}` is a control (no fault, the healthy cluster graded as unchanged): it cannot share "
                    "a run with a fault, whose run is not healthy")
        if not p.scenario.injections():
            return f"`{p.name}` injects no fault"
    if _app(a.document) is None or _app(a.document) != _app(b.document):
        return "different applications"
    if statements_of(b.document, ast.Topology):
        return "the partner adds topology of its own"
    if statements_of(b.document, ast.Agent):
        return "the partner sets the agent's access"
    if _components(a.scenario) & _components(b.scenario):
        return "the faults target the same object"
    if {i.mechanism for i in a.scenario.injections()} & {i.mechanism for i in b.scenario.injections()}:
        return "the faults share a mechanism"
    if _touched(a.scenario) & _touched(b.scenario):
        return "the faults change the same object"
    if {p.name for p in statements_of(a.document, ast.Param)} & {p.name for p in statements_of(b.document, ast.Param)}:
        return "both declare a param of the same name"
    for cutting, failing in ((a, b), (b, a)):
        masked = _cut(cutting.scenario) & _served(failing.scenario)
        if masked:
            return (f"`{cutting.name}`'s fault stops the requests to {', '.join(sorted(masked))}, where "
                    f"`{failing.name}` expects its requests to fail or slow: with no request, its request alerts "
                    "and their propagation cannot happen")
    return None


# alerts that say a component receives no request: its traffic is cut upstream of it
CUT_ALERTS = frozenset({"NoRequestsReceived", "NoRequestsOpened"})


def _component_names(scenario: ir.Scenario, cut: bool) -> set[str]:
    from itbench_dsl.alerts import SCOPES, TRAFFIC
    from itbench_dsl.analysis.components import Components

    of = Components(scenario).of
    return {of(alert.target) for alert in scenario.alerts
            if SCOPES.get(alert.name) == TRAFFIC and ((alert.name in CUT_ALERTS) == cut)}


def _cut(scenario: ir.Scenario) -> set[str]:
    """The components the scenario's fault leaves with no request (a no-traffic alert on them)."""
    return _component_names(scenario, True)


def _served(scenario: ir.Scenario) -> set[str]:
    """The components whose requests the scenario's fault fails or slows (a request alert on them): what needs
    requests to reach them to show."""
    return _component_names(scenario, False)


def _is_control(parent: Parent) -> bool:
    """A control scenario: `metadata { control = true }` (the control generator's variants)."""
    for stmt in statements_of(parent.document, ast.Metadata):
        for entry in stmt.entries or ():
            value = getattr(entry.value, "name", getattr(entry.value, "value", None))
            if isinstance(entry, ast.Attr) and entry.key == "control" and value in (True, "true"):
                return True
    return False


def _root_causes(scenario: ir.Scenario, qualified: bool) -> list[ast.RootCause]:
    return [ast.RootCause(ast_ref(ref, qualified and ref.kind != "Schedule")) for ref in scenario.root_causes]


def combine(a: Parent, b: Parent) -> ast.Scenario:
    several = len(a.scenario.topology.namespaces) > 1
    alerts, propagations, predicates, optimal, groups = [], [], [], [], []
    mitigations = []
    for parent in (a, b):
        for stmt in expect_statements(parent.document):
            if isinstance(stmt, ast.Alert) and stmt not in alerts:
                alerts.append(stmt)
            elif isinstance(stmt, ast.Propagation):
                propagations.append(stmt)
            elif isinstance(stmt, ast.Mitigated):
                mitigations.append((parent.scenario.mitigation.within_seconds or 0, stmt.within))
                predicates += [p for p in stmt.predicates if p not in predicates]
            elif isinstance(stmt, ast.Optimal):
                optimal.append(stmt)
            elif isinstance(stmt, (ast.GroundGroup, ast.Alias)) and stmt not in groups:
                groups.append(stmt)  # a group id both declare differently is refused by the checker
    roots = []
    for stmt in _root_causes(a.scenario, several) + _root_causes(b.scenario, several):
        if stmt not in roots:
            roots.append(stmt)
    expect = [*alerts, *roots, *groups, *propagations]
    if predicates:
        within = max(mitigations, key=lambda m: m[0])[1] if mitigations else None
        expect.append(ast.Mitigated(within, tuple(predicates)))
    expect += optimal

    statements = []
    for stmt in a.document.statements:
        if isinstance(stmt, ast.Description):
            other = next((s.text for s in b.document.statements if isinstance(s, ast.Description)), "")
            stmt = dataclasses.replace(stmt, text=f"{stmt.text} At the same time: {other}")
        elif isinstance(stmt, ast.Complexity):
            stmt = dataclasses.replace(stmt, name="high")
        elif isinstance(stmt, ast.Tags):
            theirs = next((s.value.items for s in b.document.statements if isinstance(s, ast.Tags)), ())
            items = list(stmt.value.items) + [t for t in theirs if t not in stmt.value.items]
            stmt = dataclasses.replace(stmt, value=ast.ListValue(tuple(items)))
        statements.append(stmt)
    extra = [s for s in b.document.statements if isinstance(s, (ast.Fault, ast.Group, ast.Param, ast.Solution))]
    # the partner's faults after the input's faults, its solutions after the input's
    last_fault = max((i for i, s in enumerate(statements) if isinstance(s, (ast.Fault, ast.Group))), default=-1)
    faults = [s for s in extra if isinstance(s, (ast.Fault, ast.Group, ast.Param))]
    statements[last_fault + 1:last_fault + 1] = faults
    # one solution: the input's first, then the partner's first; a solution of one fault alone leaves the
    # other in place, so neither input's solutions mitigate the composed incident on their own
    ours = [s for s in statements if isinstance(s, ast.Solution)]
    theirs = [s for s in extra if isinstance(s, ast.Solution)]
    statements = [s for s in statements if not isinstance(s, ast.Solution)]
    if ours and theirs:
        statements.append(dataclasses.replace(ours[0], title=f"{ours[0].title}, then {theirs[0].title[:1].lower()}"
                                              f"{theirs[0].title[1:]}", id=None, steps=ours[0].steps + theirs[0].steps))
    else:
        statements += ours[:1] + theirs[:1]
    document = dataclasses.replace(a.document, statements=tuple(statements))
    return with_expect(document, expect)


class ComposeGenerator(Generator):
    name = "compose"
    summary = "two-fault scenarios from faults that can coexist, with the combined ground truth"

    def generate(self, ctx: Context):
        if ctx.scenario.domain == "ciso":
            yield Skip("CISO scenarios have no fault to compose: a control under test cannot share a run")
            return
        if _is_control(ctx.parent):
            yield Skip("a control scenario has no fault to compose: it cannot share a run with a fault")
            return
        # each pair once, under the one of the two whose name sorts first: the variants, their names and the
        # input whose tasks and prose lead do not depend on the order the inputs were given in
        partners, refused, earlier = [], [], 0
        for other in sorted(ctx.library, key=lambda p: p.name):
            if other.name == ctx.parent.name:
                continue
            why = conflict(ctx.parent, other)
            if why is not None:  # said under both inputs of the pair, whichever would write it
                refused.append(f"{other.name}: {why}")
            elif other.name < ctx.parent.name:
                earlier += 1
            else:
                partners.append(other)
        if not partners:
            yield Skip(("its pairs are written under the input of the pair whose name sorts first" if earlier
                        else "no other input's faults can coexist with this one's")
                       + (" (" + "; ".join(refused[:3]) + (f"; and {len(refused) - 3} more" if len(refused) > 3
                                                            else "") + ")" if refused else ""))
            return
        if ctx.n is not None:
            partners = ctx.rng.sample(partners, len(partners))
        for other in partners:
            yield Variant(combine(ctx.parent, other), note=f"with {other.name}")
