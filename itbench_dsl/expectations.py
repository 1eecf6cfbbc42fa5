"""The checker's expectations: ground truth (root causes, propagation, alerts, aliases), `mitigated when`
and its predicates, probes' results, the optimum, solutions, parameters, the agent's access and compliance.

`Expectations` is mixed into `checker.Checker`; it reads the checker's state (`self.resolve`,
`self.state`, `self.ctx`) and returns IR.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from . import ast, fieldpaths, ir, printer
from .diagnostics import did_you_mean
from .reader import MISSING, Body, convert, plain
from .source import Span
from .ciso.tasks import TASK_CLASSES
from .vocabulary import COMPLETE_KINDS, KNOWN_ALERTS, READY_KINDS
from .alerts import ALERT_NAME, SEVERITIES
from .units import format_duration, parse_go_duration
from .topology import AGENT_RESOURCES, AGENT_SERVICE_ACCOUNT, CLUSTER_RESOURCES, KINDS
from .access import FAULT_TOOL_GROUPS, REACH_SUBRESOURCES

# The agent's default access, by domain: what diagnosing and mitigating (or checking) needs, including the
# subresources the usual commands use (`kubectl scale` needs */scale, `rollout undo` controllerrevisions).
DEFAULT_READ = ["pods", "pods/log", "events", "services", "endpoints", "configmaps", "deployments", "statefulsets",
                "replicasets", "controllerrevisions", "horizontalpodautoscalers", "persistentvolumeclaims",
                "resourcequotas", "networkpolicies", "poddisruptionbudgets", "serviceaccounts"]
DEFAULT_WRITE = {
    "sre": ["deployments", "deployments/scale", "statefulsets", "statefulsets/scale", "services", "configmaps",
            "pods", "horizontalpodautoscalers"],
    "finops": ["deployments", "deployments/scale", "statefulsets", "statefulsets/scale", "horizontalpodautoscalers"],
    "ciso": [],
}
DEFAULT_CLUSTER_READ = {"ciso": ["namespaces", "clusterpolicies", "clusterpolicyreports"]}
# An incident task's agent (sre, finops) gets the same access in every scenario of an application, whatever
# its fault: access that depended on the fault would name it (`kubectl auth can-i --list`). It is the superset
# any fault of the library needs to be found and undone (each fault declares what it needs, `Checked.
# agent_resources`; E4025 checks it is granted): these resources, read and changed, in every namespace of
# the application (pods/exec only where no pod runs with a wider token than the agent's: wide_token_namespaces);
# the cluster's namespaces and nodes (a relabelled namespace, a cordoned node: changed, a namespace made again, never deleted,
# backends/manifests.FIXED_RESOURCES); and the cluster's system namespace, read only and without its Secrets.
# Never a fault tool's kinds (Chaos Mesh's, access.FAULT_TOOL_GROUPS): listing them would name the fault and its
# target.
INCIDENT_DOMAINS = ("sre", "finops")
INCIDENT_RESOURCES = ["pods/exec", "secrets", "resourcequotas", "limitranges", "networkpolicies", "persistentvolumeclaims",
                      "daemonsets", "roles", "rolebindings", "poddisruptionbudgets", "jobs", "cronjobs",
                      "serviceaccounts", "peerauthentications", "authorizationpolicies", "gateways", "ingresses"]
CHAOS_RESOURCES = sorted(r for r, group in AGENT_RESOURCES.items() if group in FAULT_TOOL_GROUPS)
INCIDENT_CLUSTER = ["namespaces", "nodes"]
SYSTEM_NAMESPACE = "kube-system"


# what `probe "NAME" FIELD ...` reads of a probe's result, and its type (docs/evaluator.md, probes)
PROBE_FIELDS = {"exit_code": "int", "stdout": "str", "stderr": "str"}
# `all KIND ... ready`: the kinds a scope covers (docs/language.md, mitigated when)
SCOPE_KINDS = {"pods": ("Deployment", "StatefulSet"), "workloads": ("Deployment", "StatefulSet"),
               "deployments": ("Deployment",), "statefulsets": ("StatefulSet",)}
PARSE_FORMS = ["json", "yaml"]
_FIELD_WORDS = {"string": "text", "integer": "an integer", "number": "a number", "boolean": "a boolean",
                "quantity": "a quantity", "int-or-string": "an integer or text", "object": "an object (a map)",
                "list": "a list"}
_VALUE_WORDS = {ast.ListValue: "a list", ast.MapValue: "a map", ast.Call: "a call"}


def _at(span: Span, fallback: Span) -> Span:
    """A node's span, or `fallback` for a node built in code (no source text)."""
    return span if span.end > span.start else fallback


@dataclass
class Resolved:
    ref: ir.ObjectRef
    component: str | None  # the workload this object belongs to, for topology-aware checks
    declared: object | None = None


class Expectations:
    # ---- expectations
    def ground_groups(self, stmts) -> list[ir.GroundGroup]:
        """`group "ID" REF { filter = [...] }`: v1 ground-truth groups with chosen ids (references may then say
        `group "ID"`, which matters when two groups stand for one object)."""
        self.named_groups: dict[str, tuple[ir.GroundGroup, Resolved]] = {}
        out = []
        for stmt in stmts:
            if not isinstance(stmt, ast.GroundGroup):
                continue
            if stmt.target.kind == "group":
                self.error("E2004", "a group is declared on an object, not on another group", stmt.target.kind_span,
                           "a group", help='name the object: `group "ID" service "name"`')
                continue
            resolved = self.logical_service(stmt.target) or self.resolve(stmt.target, None, f"group `{stmt.id}`")
            body = Body(self.ctx, stmt.entries, f"group `{stmt.id}`", stmt.span)
            filters = body.attr("filter", "str_list")
            name = body.attr("name", "str")
            namespace = body.attr("namespace", "str")
            if filters is not None and name is not None:
                self.error("E2010", "a group has `filter` or `name`, not both", body.attr_span("name"), "second form",
                           help="`name` writes ITBench's name form of a group; remove one of the two")
            if filters is not None and resolved is not None:
                self.group_filters(stmt.id, resolved.ref, filters, body.attr_span("filter"))
            body.finish()
            if stmt.id in self.named_groups or not stmt.id:
                self.error("E2002", f"group `{stmt.id}` is declared twice" if stmt.id else "a group id is empty",
                           stmt.id_span, "second one" if stmt.id else "empty", help="give each group its own id")
                continue
            if resolved is None:
                continue
            group = ir.GroundGroup(stmt.id, resolved.ref, filters, name, namespace)
            self.named_groups[stmt.id] = (group, resolved)
            out.append(group)
        self.ground_list = out
        return out

    def group_filters(self, group: str, ref: ir.ObjectRef, filters: list[str], span: Span) -> None:
        """Each filter of a ground group is a regular expression, and none matches every object of the group's
        kind (it would make every answer of that kind right: E2030). Names are matched as ITBench matches
        them, from their start."""
        for text in filters:
            try:
                pattern = re.compile(text)
            except re.error as exc:
                self.error("E2010", f"filter `{text}` of group `{group}` is not a regular expression: {exc}", span,
                           "invalid regular expression", help="write a Python regular expression (`cart\\b`, `cart-.*`)")
                continue
            names = self.names_of_kind(ref)
            if len(names) >= 2 and all(pattern.match(n) for n in names):
                self.error("E2030", f"filter `{text}` of group `{group}` matches every {ref.kind} of the topology "
                           f"({len(names)}), not only `{ref.name}`", span, "matches every object of its kind",
                           help=f'match the group\'s own object: `"{re.escape(ref.name.rstrip("*-"))}\\b"`, or leave '
                           "`filter` out to have it derived")

    def names_of_kind(self, ref: ir.ObjectRef) -> list[str]:
        """The names of the topology's objects of a reference's kind (pods as their workloads name them)."""
        build = self.state.build
        if ref.kind == "Pod":
            return [w.name if w.kind == "Pod" and w.bare else f"{w.name}-7d4b9c8f6-x2x9q" if w.kind != "StatefulSet"
                    else f"{w.name}-0" for w in build.workloads]
        kinds = [k for k, (_, k8s) in KINDS.items() if k8s == ref.kind]
        return [n for k in kinds for n in build.names_of(k)]

    def logical_service(self, ref: ast.Ref) -> Resolved | None:
        """A v1 group of kind Service names a logical service: a workload with no Service object counts too
        (ITBench's ground truth has groups such as `accounting-service-1` for a Kafka consumer)."""
        if ref.kind != "service" or "/" in ref.name or self.state.build.find("service", ref.name):
            return None
        workload = self.state.build.workload(ref.name)
        if workload is None:
            return None
        api_version, kind = KINDS["service"]
        return Resolved(ir.ObjectRef(api_version, kind, workload.namespace, ref.name), workload.name)

    def resolve_expected(self, ref: ast.Ref, what: str) -> tuple[Resolved | None, str | None]:
        """A reference in `expect`: an object, or `group "ID"` (a group declared in the block)."""
        if ref.kind != "group":
            return self.resolve(ref, None, what), None
        found = self.named_groups.get(ref.name)
        if found is None:
            hint = did_you_mean(ref.name, self.named_groups)
            self.error("E2003", f"no group `{ref.name}` is declared in `expect`", ref.name_span, "unknown group",
                       help=f"did you mean `{hint}`?" if hint else f'declare it: `group "{ref.name}" KIND "name"`')
            return None, None
        return found[1], ref.name

    def aliases(self, stmts) -> list[list[str]] | None:
        out = None
        for stmt in stmts:
            if not isinstance(stmt, ast.Alias):
                continue
            out = out if out is not None else []
            ids = []
            for member in stmt.members:
                resolved, named = self.resolve_expected(member, "alias")
                if resolved is None:
                    continue
                if named is None:
                    named = next((g.id for g, _ in self.named_groups.values() if g.target == resolved.ref), None)
                if named is None:  # an object only an alias names: its derived group, so that the alias's id exists
                    named = resolved.ref.group_id()
                    if named not in self.named_groups:
                        group = ir.GroundGroup(named, resolved.ref)
                        self.named_groups[named] = (group, resolved)
                        self.ground_list.append(group)
                ids.append(named)
            out.append(ids)
        return out

    def alert_rules(self) -> list[ir.AlertRuleDef]:
        """The scenario's own alerts (`alert_rule`): names beside the standard catalogue (alerts.py)."""
        out: list[ir.AlertRuleDef] = []
        seen: dict[str, ast.AlertRule] = {}
        for stmt in self.doc.statements:
            if not isinstance(stmt, ast.AlertRule):
                continue
            if stmt.name in seen:
                self.error("E2002", f"alert rule `{stmt.name}` is declared twice", stmt.name_span, "second one",
                           help=f"the first is at line {seen[stmt.name].span.line}")
                continue
            seen[stmt.name] = stmt
            if stmt.name in KNOWN_ALERTS:
                self.error("E2018", f"alert rule `{stmt.name}` redefines an alert of the standard catalogue",
                           stmt.name_span, "a standard alert", help="give your rule a name of its own (docs/language.md "
                           "lists the catalogue), or expect the standard alert without declaring it")
            elif not ALERT_NAME.match(stmt.name):
                self.error("E2014", f"alert rule name `{stmt.name}` is not a valid Prometheus alert name",
                           stmt.name_span, "invalid name", help="letters, digits and `_`, not starting with a digit")
            body = Body(self.ctx, stmt.entries, f"alert rule `{stmt.name}`", stmt.span)
            expr = body.attr("expr", "str", required=True)
            duration = body.attr("for", "duration", default=0)
            severity = body.attr("severity", "str", default="warning")
            if severity not in SEVERITIES:
                self.error("E2010", f"`{severity}` is not an alert severity", body.attr_span("severity"),
                           f"expected {' | '.join(SEVERITIES)}")
            summary = body.attr("summary", "str")
            description = body.attr("description", "str")
            labels = body.string_map("labels")
            if "severity" in labels:
                self.error("E2010", "the severity of an alert rule is its `severity` field, not a label",
                           body.attr_span("labels"), help="write `severity = \"...\"` beside `expr`")
            body.finish()
            if isinstance(expr, str) and not expr.strip():
                self.error("E2010", "the expression of an alert rule is empty", body.attr_span("expr"), "empty")
            elif isinstance(expr, str):
                out.append(ir.AlertRuleDef(stmt.name, expr, format_duration(duration), severity, summary, description,
                                           labels))
        self.known_alerts = set(KNOWN_ALERTS) | set(seen)
        return out

    def alerts(self, stmts) -> list[ir.AlertExpectation]:
        out = []
        known = sorted(self.known_alerts)
        for stmt in stmts:
            if not isinstance(stmt, ast.Alert):
                continue
            if stmt.name not in known:
                hint = did_you_mean(stmt.name, known)
                self.error("E2017", f"unknown alert `{stmt.name}`", stmt.name_span, "in no alert catalogue",
                           help=f"did you mean `{hint}`?" if hint else
                           "declare it with `alert_rule \"NAME\" { expr = \"...\" }`; known: " + ", ".join(known))
            resolved, named = self.resolve_expected(stmt.target, f"alert `{stmt.name}`")
            body = Body(self.ctx, stmt.entries, f"alert `{stmt.name}`", stmt.span)
            description = body.attr("description", "str")
            body.finish()
            if resolved is not None:
                out.append(ir.AlertExpectation(stmt.name, resolved.ref, description, named))
        return out

    def root_causes(self, stmts, groups: list[ir.FaultGroup]) -> list[ir.ObjectRef]:
        declared = []
        marked: set[ir.ObjectRef] = set()  # objects whose root-cause group is named (`root_cause group "ID"`)
        for stmt in stmts:
            if isinstance(stmt, ast.RootCause):
                resolved, named = self.resolve_expected(stmt.target, "root cause")
                if resolved is not None and resolved.ref not in declared:
                    declared.append(resolved.ref)
                if named is not None:
                    self.named_groups[named][0].root_cause = True
                    marked.add(self.named_groups[named][0].target)
        if not declared:
            # derived from the faults: each fault's target is a root cause
            for group in groups:
                for injection in group.injections:
                    root = injection.root or injection.target
                    if root not in declared:
                        declared.append(root)
        for ref in declared:  # a root cause named by its object: the first group declared on it
            if ref not in marked:
                first = next((g for g, _ in self.named_groups.values() if g.target == ref), None)
                if first is not None:
                    first.root_cause = True
        return declared

    def propagations(self, stmts, groups) -> list[ir.PropagationEdge]:
        out = []
        for stmt in stmts:
            if not isinstance(stmt, ast.Propagation):
                continue
            pairs = [self.resolve_expected(r, "propagation") for r in stmt.chain]
            resolved = [r for r, _ in pairs]
            names = [n for _, n in pairs]
            body = Body(self.ctx, stmt.entries, "propagation", stmt.span)
            condition = body.attr("condition", "str")
            effect = body.attr("effect", "str")
            indirect = body.attr("indirect", "bool") is True
            body.finish()
            if any(r is None for r in resolved):
                continue
            for index, ((a, ra), (b, rb)) in enumerate(zip(zip(stmt.chain, resolved), zip(stmt.chain[1:], resolved[1:]))):
                direct = self.follows_topology(ra, rb)
                if not direct and not (indirect and self.connected(ra, rb)):
                    span = Span(a.span.start, b.span.end, a.span.line, a.span.column, b.span.end_line, b.span.end_column)
                    if indirect:
                        self.error("E2012", f"`{a.kind} \"{a.name}\" -> {b.kind} \"{b.name}\"` is marked indirect, but no "
                                   "path of the topology joins them", span, "not connected",
                                   help="an indirect edge still needs a chain of dependencies between its components")
                    elif self.connected(ra, rb):
                        self.error("E2012", f"`{a.kind} \"{a.name}\" -> {b.kind} \"{b.name}\"` does not follow the topology",
                                   span, "no direct dependency", help="the components meet only through others (a "
                                   "message broker, say): write `indirect = true` in the propagation's body, or "
                                   "name the components in between")
                    else:
                        self.error("E2012", f"`{a.kind} \"{a.name}\" -> {b.kind} \"{b.name}\"` does not follow the topology",
                                   span, "no such dependency", help=self.no_dependency_help(ra, rb))
                    continue
                out.append(ir.PropagationEdge(
                    ra.ref, rb.ref,
                    condition or f"{ra.ref.kind} {ra.ref.name} is degraded",
                    effect or f"{rb.ref.kind} {rb.ref.name} is affected",
                    names[index], names[index + 1], indirect=None if direct else True,
                ))
        return out

    def no_dependency_help(self, a: Resolved, b: Resolved) -> str:
        """E2012's help when no chain of dependencies joins two components: what each is joined to, never an edge
        to add (the topology states how the application is built, which an effect's path does not change)."""
        if not (a.component and b.component):
            return "propagation follows dependency edges between components"
        edges = self.state.build.edges

        def neighbours(component: str) -> str:
            found = sorted({y for x, y in edges if x == component} | {x for x, y in edges if y == component})
            return ", ".join(f"`{n}`" for n in found[:8]) + (" ..." if len(found) > 8 else "") if found else "nothing"

        return (f"no chain of dependencies joins `{a.component}` (joined to {neighbours(a.component)}) and "
                f"`{b.component}` (joined to {neighbours(b.component)}): name an effect along the dependencies, or, "
                "when the application does join them, declare that dependency in its topology")

    def connected(self, a: Resolved, b: Resolved) -> bool:
        """Whether a chain of dependency edges (in either direction) joins the components of `a` and `b`."""
        if a.component is None or b.component is None:
            return True
        neighbours: dict[str, set[str]] = {}
        for caller, callee in self.state.build.edges:
            neighbours.setdefault(caller, set()).add(callee)
            neighbours.setdefault(callee, set()).add(caller)
        seen, frontier = {a.component}, [a.component]
        while frontier:
            node = frontier.pop()
            if node == b.component:
                return True
            for nxt in neighbours.get(node, ()):
                if nxt not in seen:
                    seen.add(nxt)
                    frontier.append(nxt)
        return False

    def follows_topology(self, a: Resolved, b: Resolved) -> bool:
        if a.component is None or b.component is None:
            # objects a fault creates, configmaps, secrets, namespaces: they act on what they select or feed
            return True
        if a.component == b.component:
            return True
        edges = self.state.build.edges
        return [a.component, b.component] in edges or [b.component, a.component] in edges

    def mitigation(self, stmts) -> ir.Mitigation | None:
        blocks = [s for s in stmts if isinstance(s, ast.Mitigated)]
        for extra in blocks[1:]:
            self.error("E2002", "`mitigated when` is given twice", extra.span, "second one")
        if not blocks:
            return None
        block = blocks[0]
        within = self.duration(block.within)
        predicates = []
        for pred in block.predicates:
            if isinstance(pred, ast.AlertPredicate):
                if pred.name not in self.known_alerts:
                    hint = did_you_mean(pred.name, self.known_alerts)
                    self.error("E2017", f"unknown alert `{pred.name}`", pred.span, help=f"did you mean `{hint}`?" if hint else "")
                predicate = ir.Predicate("alert", alert=pred.name, firing=pred.firing)
            elif isinstance(pred, ast.ScopePredicate):
                predicate = self.scope_predicate(pred)
            elif isinstance(pred, ast.ProbePredicate):
                predicate = self.probe_predicate(pred)
            elif isinstance(pred, ast.AccessPredicate):
                predicate = self.access_predicate(pred)
            else:
                resolved = self.resolve(pred.target, None, "mitigation predicate")
                if resolved is None:
                    continue
                if isinstance(pred, ast.StatePredicate):
                    if pred.state == "ready" and resolved.ref.kind not in READY_KINDS:
                        self.error("E2004", f"{resolved.ref.kind} `{resolved.ref.name}` has no readiness: `ready` tests "
                                   "workloads, pods and ingresses", pred.span, "never ready",
                                   help=f"a {pred.target.kind} runs to completion: write `{pred.target.kind} "
                                        f"\"{pred.target.name}\" complete`" if resolved.ref.kind in COMPLETE_KINDS else
                                        f"check what the fault changes with a field predicate "
                                        f"(`{pred.target.kind} \"{pred.target.name}\" PATH == VALUE`), or `exists`")
                        continue
                    if pred.state == "complete" and resolved.ref.kind not in COMPLETE_KINDS:
                        self.error("E2004", f"{resolved.ref.kind} `{resolved.ref.name}` does not run to completion: "
                                   "`complete` tests jobs and cronjobs", pred.span, "never complete",
                                   help="`ready` tests workloads, pods and ingresses; `exists` any object")
                        continue
                    predicate = ir.Predicate("state", resolved.ref, state=pred.state,
                                             within_seconds=self.duration(pred.within))
                else:
                    predicate = self.field_predicate(pred, resolved)
            if predicate is not None:
                predicates.append(predicate)
                # where self-validation points when this predicate decides a case wrongly (checking.py)
                self.source_map.predicates.append(_at(pred.path_span, pred.span) if isinstance(pred, ast.FieldPredicate)
                                                  else pred.span)
        return ir.Mitigation(within, predicates, only=True if block.only else None)

    def probe_predicate(self, pred: ast.ProbePredicate) -> ir.Predicate | None:
        """`probe "NAME" exit_code == 0`, `probe "NAME" stdout contains "x"` (E2003: no such probe)."""
        names = getattr(self, "probe_names", set())
        if pred.name not in names:
            hint = did_you_mean(pred.name, names)
            self.error("E2003", f"no probe `{pred.name}` is declared", pred.name_span, "unknown probe",
                       help=f"did you mean `{hint}`?" if hint else
                       f'declare it: `probe "{pred.name}" on deployment "NAME" {{ command = [...] }}`')
            return None
        span, healthy = getattr(self, "probe_results", {}).get(pred.name, (None, MISSING))
        if healthy is None and pred.name not in self.probes_reported:
            # self-validation grades states derived offline: they need the result the healthy application gives
            self.probes_reported.add(pred.name)
            self.error("E2007", f"probe `{pred.name}` is read by `mitigated when` but says no `healthy` result",
                       span, "`healthy` missing", help="add the result it gives on the healthy application, and the "
                       'one the fault causes: `healthy { exit_code = 0 stdout = "..." }  faulty { ... }`')
        if pred.field not in PROBE_FIELDS:
            self.error("E2006", f"a probe's result has no field `{pred.field}`", pred.field_span, "unknown field",
                       help="read `exit_code`, `stdout` or `stderr`")
            return None
        value = None
        if pred.value is not None:
            if pred.op == "in":
                kind = "str_list" if PROBE_FIELDS[pred.field] == "str" else "any"
            else:
                kind = PROBE_FIELDS[pred.field]
            value = convert(self.ctx, pred.value, kind, f"`probe \"{pred.name}\" {pred.field}`")
            if value is MISSING:
                return None
            if pred.op == "matches":
                problem = fieldpaths.regex_problem(value)
                if problem is not None:
                    self.error("E2040", f"`{value}` is not accepted as a pattern: {problem}", pred.value.span,
                               "pattern not accepted")
                    return None
        return ir.Predicate("probe", path=[pred.name, pred.field], op=pred.op, value=value)

    def field_predicate(self, pred: ast.FieldPredicate, resolved: Resolved) -> ir.Predicate | None:
        """`REF PATH OP VALUE`: the path checked against the target kind's schema, the value typed by the field
        it is compared with (docs/language.md, operators)."""
        path_span = _at(pred.path_span, pred.span)
        steps = [self.path_step(step, path_span) for step in pred.path]
        if any(step is None for step in steps):
            return None
        ref = resolved.ref
        found = fieldpaths.field_type(ref.api_version, ref.kind, steps)
        if isinstance(found, fieldpaths.PathProblem):
            shown = printer.field_path(pred.path)
            self.error("E2006", f"{ref.kind} `{ref.name}` has no field path `{shown}`: {found.message}", path_span,
                       "not a field of " + ref.kind, help=found.help or (
                           "fields here: " + ", ".join(found.names[:12]) + (" ..." if len(found.names) > 12 else "")
                           if found.names else ""))
            return None
        typed = self.predicate_operand(pred, found.name, path_span)
        if typed is MISSING:
            return None
        value, value_type = typed
        return ir.Predicate("field", ref, path=steps, op=pred.op, value=value, value_type=value_type)

    def path_step(self, step: ast.PathStep, path_span: Span):
        """A path step as the evaluator reads it: a key, an index, a [key, value] selection, {"parse": form}."""
        if isinstance(step, str):
            return step
        if isinstance(step, ast.Index):
            if step.value < 0:
                self.error("E2010", f"list index `{step.value}` is negative", _at(step.span, path_span), "not an index",
                           help="indexes count from 0, the first item; select an item by its key: `[name=\"app\"]`")
                return None
            return step.value
        if isinstance(step, ast.Select):
            if not isinstance(step.value, (ast.Str, ast.Int)):
                self.error("E2008", f"`[{step.key}=...]` selects by a string or an integer", _at(step.value.span, path_span),
                           "not a string or an integer", help=f'write `[{step.key}="..."]`')
                return None
            return [step.key, plain(step.value)]
        if step.form not in PARSE_FORMS:
            hint = did_you_mean(step.form, PARSE_FORMS)
            self.error("E2010", f"`as {step.form}`: text is read `as json` or `as yaml`", _at(step.span, path_span),
                       "unknown format", help=f"did you mean `as {hint}`?" if hint else "")
            return None
        return {"parse": step.form}

    def predicate_operand(self, pred: ast.FieldPredicate, field: str, path_span: Span):
        """(the value as the evaluator compares it, its type when the plain comparison would not do: `duration`,
        or `text` for text that reads as a number); MISSING after an error."""
        op, value = pred.op, pred.value
        what = _FIELD_WORDS.get(field, "a value")
        if op in ("exists", "not exists"):
            return None, None
        if op == "matches":
            if field not in ("string", "int-or-string", "quantity", "any"):
                self.error("E2008", f"`matches` reads text, and this field is {what}", path_span, what,
                           help="compare it with `==`, `in` or `<`")
                return MISSING
            problem = fieldpaths.regex_problem(value.value)
            if problem:
                self.error("E2040", f"regular expression not accepted: {problem}", _at(value.span, pred.span),
                           "not accepted", help="`matches` takes RE2's syntax and matches the whole value")
                return MISSING
            return value.value, None
        if op == "contains":
            if field not in ("list", "object", "any"):
                self.error("E2008", f"`contains` reads a list or a map, and this field is {what}", path_span, what,
                           help="for text use `matches` (the whole value, a regular expression) or `==`")
                return MISSING
            if isinstance(value, ast.MapValue) or (field == "object" and isinstance(value, ast.Str)):
                return plain(value), None  # entries it holds, or a key it has
            element = "any" if field in ("list", "any") else field
            typed = self.operand_value(value, element, "==", path_span)
            return MISSING if typed is MISSING else typed
        if op == "in":
            if not isinstance(value, ast.ListValue) or not value.items:
                self.error("E2008", "`in` takes a non-empty list of values", _at(value.span, pred.span), "not a list",
                           help="write `in [1, 2]`")
                return MISSING
            if field in ("list", "object"):
                self.error("E2008", f"`in` compares one value, and this field is {what}", path_span, what,
                           help="to test an element of a list, write `contains`")
                return MISSING
            typed = [self.operand_value(item, field, "==", path_span) for item in value.items]
            if any(t is MISSING for t in typed):
                return MISSING
            kinds = {t[1] for t in typed}
            return [t[0] for t in typed], ("duration" if "duration" in kinds else "text" if "text" in kinds else None)
        return self.operand_value(value, field, op, path_span)

    def operand_value(self, value: ast.Value, field: str, op: str, path_span: Span | None = None):
        """One scalar operand, checked against the field's type (a mismatch is E2008, a unit that does not fit
        E2009): (plain value, `duration` | `text` | None)."""
        from .runtime.state import number

        span = _at(value.span, path_span) if path_span is not None else value.span
        what = _FIELD_WORDS.get(field, "a value")
        ordering = op in ("<", "<=", ">", ">=")

        def wrong(message: str, help: str = "", code: str = "E2008"):
            self.error(code, message, span, "wrong type" if code == "E2008" else "wrong unit", help=help)
            return MISSING

        if field in ("object", "list"):
            return wrong(f"this field is {what}: compare a field inside it", "name the field: `spec.replicas`, "
                         "`containers[name=\"app\"].image`; `contains` tests an element or an entry")
        if isinstance(value, (ast.Int, ast.Float)):
            if field in ("string", "boolean"):
                return wrong(f"a number, and this field is {what}", 'write text in quotes: `"3"`' if field == "string" else
                             "write `true` or `false`")
            return plain(value), None
        if isinstance(value, ast.Quantity):
            duration = parse_go_duration(value.text) is not None
            quantity = number(value.text) is not None
            if field == "quantity":
                if not quantity:
                    return wrong(f"`{value.text}` is not a quantity", "quantities are `512Mi`, `1Gi`, `250m`, `2`", "E2009")
                return value.text, None
            if field in ("integer", "number"):
                return wrong(f"`{value.text}` has a unit, and this field is {what}", "write the plain number", "E2009")
            if field == "boolean":
                return wrong(f"`{value.text}` is a quantity, and this field is a boolean", "write `true` or `false`")
            if duration and quantity and field != "string":
                return wrong(f"`{value.text}` may be a duration or a quantity (milli-units), and the field does not say",
                             "write a duration in seconds or hours (`300s`, `1h`), a quantity without `m` (`0.005`)",
                             "E2009")
            if duration:
                return value.text, "duration"
            if quantity:
                return value.text, None
            return wrong(f"`{value.text}` is neither a duration nor a quantity",
                         "durations: `30s`, `5m`, `1h30m`; quantities: `512Mi`, `250m`", "E2009")
        if isinstance(value, ast.Percent):
            if ordering:
                return wrong("percentages are compared as text, with `==`, `!=` or `in`", "compare a number field")
            if field not in ("string", "int-or-string", "any"):
                return wrong(f"a percentage, and this field is {what}")
            return plain(value), "text"
        if isinstance(value, ast.Str):
            if field in ("integer", "number", "boolean"):
                return wrong(f"text, and this field is {what}", "write the value without quotes")
            if field == "quantity" and number(value.value) is None:
                return wrong(f"`{value.value}` is not a quantity", "quantities are `512Mi`, `1Gi`, `250m`, `2`", "E2009")
            if ordering:
                if field == "quantity":
                    return value.value, None
                return wrong("`<`, `<=`, `>` and `>=` order numbers, quantities and durations, not text",
                             "write the value without quotes (`512Mi`, `30s`, `3`), or compare text with `==` or `matches`")
            return value.value, ("text" if field != "quantity" and number(value.value) is not None else None)
        if isinstance(value, ast.Symbol) and value.name in ("true", "false"):
            if ordering or field not in ("boolean", "any"):
                return wrong(f"a boolean, and this field is {what}" if not ordering else "booleans are not ordered")
            return value.name == "true", None
        if isinstance(value, ast.Symbol):
            return wrong(f"`{value.name}` is a name, not a value", f'write text in quotes: `"{value.name}"`')
        return wrong(f"{_VALUE_WORDS.get(type(value), 'this')} is not a value to compare with",
                     "lists go with `in`, maps with `contains`")

    def access_predicate(self, pred: ast.AccessPredicate) -> ir.Predicate | None:
        """`can serviceaccount "x" "list" "pods" [in namespace "y"]`: the subject a ServiceAccount, the verb and the
        resource as kubectl writes them (`pods`, `deployments.apps`, `pods/log`), the namespace the
        ServiceAccount's unless given (the evaluator decides as the RBAC authorizer does)."""
        resolved = self.resolve(pred.subject, ("serviceaccount",), "an access predicate's subject")
        if resolved is None:
            return None
        if not re.fullmatch(r"[a-z*][a-z-]*", pred.verb):
            self.error("E2008", f"`{pred.verb}` is not a verb: the API server's verbs are lower case (`get`, `list`, "
                       "`watch`, `create`, `update`, `patch`, `delete`, `deletecollection`, or `*`)",
                       _at(pred.verb_span, pred.span), "not a verb")
            return None
        if not re.fullmatch(r"(\*|[a-z0-9][a-z0-9-]*)(\.[a-z0-9.-]+)?(/[a-z*][a-z-]*)?", pred.resource):
            self.error("E2008", f"`{pred.resource}` is not a resource as kubectl names it", _at(pred.resource_span, pred.span),
                       "not a resource", help="write the plural resource, with its API group and a subresource when it "
                       "has them: `pods`, `deployments.apps`, `pods/log`")
            return None
        namespace = resolved.ref.namespace
        if pred.namespace is not None:
            if pred.namespace.kind != "namespace":
                self.error("E2004", f"`in` takes a namespace, not a {pred.namespace.kind}",
                           _at(pred.namespace.kind_span, pred.span), "wrong kind", help='write `in namespace "..."`')
                return None
            where = self.resolve(pred.namespace, None, "access predicate")
            if where is None:
                return None
            namespace = where.ref.name
        return ir.Predicate("access", resolved.ref, path=[pred.verb, pred.resource], op="can" if pred.allowed else "cannot",
                            namespace=namespace)

    def scope_predicate(self, pred: ast.ScopePredicate) -> ir.Predicate | None:
        """`all pods [{ labels }] [in namespace "x"] ready`: the workloads of the topology it covers must be
        some (an empty scope would pass vacuously), and the evaluator fails a scope it finds empty."""
        if pred.what not in SCOPE_KINDS:
            hint = did_you_mean(pred.what, list(SCOPE_KINDS))
            self.error("E2015", f"`all {pred.what}`: a scope is one of {', '.join(SCOPE_KINDS)}", _at(pred.what_span, pred.span),
                       "unknown scope", help=f"did you mean `all {hint}`?" if hint else "")
            return None
        selector: dict[str, str] = {}
        for pair in pred.selector.pairs if pred.selector is not None else ():
            if not isinstance(pair.value, ast.Str):
                self.error("E2008", f"label `{pair.key}`: a label value is text", _at(pair.value.span, pred.span),
                           "not text", help=f'write `{pair.key} = "..."`')
                return None
            selector[pair.key] = pair.value.value
        namespace = None
        if pred.namespace is not None:
            if pred.namespace.kind != "namespace":
                self.error("E2004", f"`all {pred.what} in` takes a namespace, not a {pred.namespace.kind}",
                           _at(pred.namespace.kind_span, pred.span), "wrong kind", help='write `in namespace "..."`')
                return None
            resolved = self.resolve(pred.namespace, None, "scope")
            if resolved is None:
                return None
            namespace = resolved.ref.name
        kinds = SCOPE_KINDS[pred.what]
        covered = [w for w in self.state.build.workloads
                   if (namespace is None or w.namespace == namespace) and w.replicas > 0
                   and (w.kind in kinds or (pred.what == "pods" and w.kind == "Pod"))
                   and all(w.labels.get(k) == v for k, v in selector.items())]
        if not covered and not self.state.incomplete:
            where = f"namespace `{namespace}`" if namespace else "the topology"
            self.error("E2026", f"`all {pred.what}` covers nothing in {where}" + (" with these labels" if selector else ""),
                       pred.span, "empty scope", help="an empty scope would hold vacuously: name a namespace or labels "
                       "that some workload of the topology has")
            return None
        return ir.Predicate("scope", scope=pred.what, selector=selector or None, namespace=namespace,
                            within_seconds=self.duration(pred.within))

    def duration(self, quantity: ast.Quantity | None) -> float | None:
        if quantity is None:
            return None
        seconds = convert(self.ctx, quantity, "duration", "`within`")
        return None if seconds is MISSING else float(seconds)

    def optimal(self, stmts) -> list[ir.Optimum]:
        out = []
        for stmt in stmts:
            if isinstance(stmt, ast.Optimal):
                resolved = self.resolve(stmt.target, None, "optimum")
                if resolved is not None:
                    out.append(ir.Optimum(resolved.ref, list(stmt.path), plain(stmt.value)))
        return out

    def solution(self, stmt: ast.Solution) -> ir.Solution:
        if not stmt.steps:
            self.error("E2007", f"solution `{stmt.title}` has no `step`", stmt.span, "no steps")
        return ir.Solution(stmt.title, [ir.SolutionStep(s.text, s.run) for s in stmt.steps], stmt.id)

    def param(self, stmt: ast.Param) -> ir.Param | None:
        if not isinstance(stmt.domain, ast.ListValue) or not stmt.domain.items:
            self.error("E2008", f"param `{stmt.name}` takes a non-empty list of values", stmt.domain.span,
                       "expected a list", help=f"write `param {stmt.name} in [1, 2, 3]`")
            return None
        domain = [plain(v) for v in stmt.domain.items]
        default = plain(stmt.default) if stmt.default is not None else None
        if default is not None and default not in domain:
            self.error("E2010", f"the default of param `{stmt.name}` is not in its domain", stmt.default.span)
            return None
        return ir.Param(stmt.name, domain, default)

    def agent(self, stmt: ast.Agent | None, domain: str, topology: ir.Topology, groups: list[ir.FaultGroup],
              task: ast.Task | None) -> ir.AgentAccess:
        derived = application_access(domain, topology, task.kind if task is not None else None)
        if domain in INCIDENT_DOMAINS:
            self.agent_needs(derived)
        if stmt is None:
            return derived
        errors = len(self.diags.items)
        namespaces = list(derived.namespaces)
        read, write = derived.read, derived.write
        cluster_read, cluster_write = derived.cluster_read, derived.cluster_write
        body = Body(self.ctx, stmt.entries, "agent", stmt.span)
        read = self.agent_resources(body, "read", read, cluster=False)
        write = self.agent_resources(body, "write", write, cluster=False)
        cluster_read = self.agent_resources(body, "cluster_read", cluster_read, cluster=True)
        cluster_write = self.agent_resources(body, "cluster_write", cluster_write, cluster=True)
        explicit = body.attr("namespaces", "str_list")
        if explicit is not None:
            for ns in explicit:
                if ns not in [n.name for n in topology.namespaces]:
                    self.error("E2016", f"agent namespace `{ns}` is not declared", body.attr_span("namespaces"))
            namespaces = explicit
        body.finish()
        namespaces = list(dict.fromkeys(namespaces))
        read_only = [n for n in derived.read_only if n in namespaces]
        no_exec = [n for n in derived.no_exec if n in namespaces]
        access = ir.AgentAccess(AGENT_SERVICE_ACCOUNT, namespaces, sorted(set(read)), sorted(set(write)),
                                sorted(set(cluster_read)), sorted(set(cluster_write)), read_only, no_exec)
        if domain in INCIDENT_DOMAINS and access != derived and errors == len(self.diags.items):
            changed = [key for key in ("namespaces", "read", "write", "cluster_read", "cluster_write")
                       if getattr(access, key) != getattr(derived, key)]
            self.error("E4025", "the agent's access differs from the access its application gives every scenario "
                       f"({', '.join(changed)})", stmt.span, "the access names this scenario",
                       help="`kubectl auth can-i --list` would tell this scenario from the others of its "
                       "application: drop the `agent` statement (the default grants what any fault needs)")
        return access

    def agent_needs(self, access: ir.AgentAccess) -> None:
        """E4025: what a fault says the agent needs to find and undo it, that the application's access lacks
        (a fault kind that needs a resource INCIDENT_RESOURCES does not hold, say)."""
        granted_ns = set(access.namespaces) - set(access.read_only)
        for namespaces, resources, span, kind in self.agent_extra:
            # a fault tool's objects (Chaos Mesh's) are the fault itself: never the agent's to read
            # (access.FAULT_TOOL_GROUPS); it finds the fault by what it does to the application
            resources = [r for r in resources if r not in CHAOS_RESOURCES]
            if not resources:
                continue
            lacking = [r for r in resources if r not in (access.cluster_write if r in CLUSTER_RESOURCES
                                                          else access.write)]
            lacking += [f"namespace `{n}`" for n in namespaces if n not in granted_ns]
            if lacking:
                self.error("E4025", f"fault `{kind}` needs access the agent's default access lacks: "
                           + ", ".join(lacking), span, "the agent could not undo this",
                           help="the agent's access is the same for every scenario of an application; grant it "
                           "there (expectations.INCIDENT_RESOURCES), not in the scenario")

    def mitigation_reach(self, posed: list[ir.PosedTask] | None, domain: str, compliance, access: ir.AgentAccess,
                         mitigation: ir.Mitigation | None, groups: list[ir.FaultGroup]) -> None:
        """E2037: `mitigate` is posed, and undoing a fault takes acting on a fault tool's object (a Chaos Mesh
        experiment or Schedule) that the agent's access does not let it find and end. Such an object is needed
        gone when a `mitigated when` predicate names it, when the grader checks the fault's created objects gone
        (all but `mitigated when only`: an experiment acts until deleted or paused), and when it is a Schedule,
        which starts the experiment again whatever the agent does to the application. A task the agent cannot
        perform is not posed."""
        from . import tasks as task_types
        from .access import commands_of, may_undo, tool_resource
        from .backends.manifests import agent_access

        names = [t.name for t in posed] if posed is not None else list(task_types.DEFAULT.get(domain, ()))
        if "mitigate" not in names or not access.namespaces:
            return
        objects = agent_access(access, commands_of(domain, compliance))
        account, home = access.service_account, access.namespaces[0]

        def out_of_reach(ref: ir.ObjectRef) -> tuple[str, str] | None:
            tool = tool_resource(ref.api_version, ref.kind)
            return tool if tool and not may_undo(objects, account, home, *tool, ref.namespace) else None

        help = ("a task the agent cannot perform is not posed: pose the diagnosis (`tasks diagnose`, or `tasks detect, "
                "localize`), or inject the fault so that the agent can undo it (a change to the "
                "application's own objects)")
        named = set()
        predicates = mitigation.predicates if mitigation else []
        for index, predicate in enumerate(predicates):
            tool = out_of_reach(predicate.target) if predicate.target is not None else None
            if tool is None:
                continue
            named.add(predicate.target)
            span = self.source_map.predicates[index] if index < len(self.source_map.predicates) else None
            self.error("E2037", f"`mitigate` is posed, and this predicate needs the agent to act on "
                       f"{_tool_object(predicate.target)}, which its access does not let it list and delete "
                       f"({tool[1]}.{tool[0]})", span or self.doc.name_span, "out of the agent's reach", help=help)
        only = bool(mitigation and mitigation.only)
        for index, injection in enumerate(i for g in groups for i in g.injections):
            tools = [ref for ref in injection.created if tool_resource(ref.api_version, ref.kind)]
            # a Schedule's experiments are its own (it starts them, and they go with it): ending it ends them
            ends = [ref for ref in tools if ref.kind == "Schedule"] or tools
            needed = [ref for ref in ends if out_of_reach(ref) is not None and (not only or ref.kind == "Schedule")]
            if not needed or named & set(injection.created):
                continue
            ref = needed[0]
            why = ("it starts the experiment again whatever the agent does to the application"
                   if ref.kind == "Schedule" else "the experiment acts until it is deleted or paused")
            self.error("E2037", f"`mitigate` is posed, and undoing fault `{injection.fault}` means ending "
                       f"{_tool_object(ref)} ({why}), which the agent's access does not let it list and delete",
                       self.source_map.injection(index), "the agent cannot undo this", help=help)

    def agent_resources(self, body: Body, key: str, default: list[str], cluster: bool) -> list[str]:
        values = body.attr(key, "str_list", default=None)
        if values is None:  # the application's (its chaos kinds are granted cluster-wide, beyond `allowed`)
            return list(default)
        allowed = CLUSTER_RESOURCES if cluster else set(AGENT_RESOURCES) - CLUSTER_RESOURCES
        for value in values:
            if value not in allowed:
                other = "cluster_" + key if not cluster and value in CLUSTER_RESOURCES else (
                    key.removeprefix("cluster_") if cluster and value in AGENT_RESOURCES else None)
                hint = did_you_mean(value, allowed)
                self.error("E2010", f"`{value}` is not a {'cluster-scoped ' if cluster else ''}resource the agent's "
                           f"`{key}` can name", body.attr_span(key), "unknown resource",
                           help=f"`{value}` belongs in `{other}`" if other else
                           f"did you mean `{hint}`?" if hint else "known: " + ", ".join(sorted(allowed)))
        return [v for v in values if v in allowed]

    def compliance(self, single: dict, domain: str | None) -> ir.Compliance | None:
        """CISO: the control, the task class and the gap and compliant objects (ciso/checks.py)."""
        from .ciso.checks import compliance

        return compliance(self, single, domain)


def application_access(domain: str, topology: ir.Topology, task: str | None = None) -> ir.AgentAccess:
    """The agent's access as its application and task give it, whatever the fault: the domain's default in the
    application's namespaces, and for an incident (INCIDENT_DOMAINS) the superset every library fault needs;
    a CISO task class adds what its task must change. `itbench check` compares a scenario's access with this
    (E4025), so that no scenario's access names its fault."""
    namespaces = [n.name for n in topology.namespaces if not n.provided]
    read, write = list(DEFAULT_READ), list(DEFAULT_WRITE.get(domain, []))
    cluster_read, cluster_write = list(DEFAULT_CLUSTER_READ.get(domain, [])), []
    read_only: list[str] = []
    if domain == "ciso":
        read.append("policyreports")
        if task is not None and task in TASK_CLASSES:  # what the task class must be able to change
            namespaced, cluster = TASK_CLASSES[task].write
            write += namespaced
            cluster_write += cluster
            read += namespaced
            cluster_read += cluster
        # the cluster's namespaces the controls are checked in (provided ones too): read as before
        namespaces = [n.name for n in topology.namespaces]
        read_only = [n.name for n in topology.namespaces if n.provided]
    if domain in INCIDENT_DOMAINS:
        # a shell in a pod is a right to act, not to read (access.REACH_SUBRESOURCES)
        read += [r for r in INCIDENT_RESOURCES if r not in REACH_SUBRESOURCES]
        write += INCIDENT_RESOURCES
        cluster_read += INCIDENT_CLUSTER
        cluster_write += INCIDENT_CLUSTER
        if namespaces:
            namespaces.append(SYSTEM_NAMESPACE)
            read_only.append(SYSTEM_NAMESPACE)
    namespaces = list(dict.fromkeys(namespaces))
    access = ir.AgentAccess(AGENT_SERVICE_ACCOUNT, namespaces, sorted(set(read)), sorted(set(write)),
                            sorted(set(cluster_read)), sorted(set(cluster_write)), sorted(set(read_only)))
    access.no_exec = wide_token_namespaces(access, topology)
    return access


def wide_token_namespaces(access: ir.AgentAccess, topology: ir.Topology) -> list[str]:
    """The namespaces of `access` where it would let the agent into a pod (exec, attach, port-forward) that runs
    with a service account that may do more than the agent (grafana's or Prometheus's, bound to a ClusterRole):
    a shell there would be the agent's way past its own access. Pods cannot be told apart by RBAC (their names are
    generated), so the subresources are withheld from the whole namespace."""
    from .access import POD_SUBRESOURCES, pod_accounts, wider_than
    from .backends.manifests import agent_access, topology_manifests

    if not set(POD_SUBRESOURCES) & set(access.write):
        return []
    objects = topology_manifests(topology, provided=True)
    agent = agent_access(access)
    home = access.namespaces[0] if access.namespaces else ""
    out = []
    for _, namespace, account in pod_accounts(objects):
        if namespace in access.namespaces and namespace not in access.read_only and namespace not in out and \
                wider_than(objects, account, namespace, agent, access.service_account, home) is not None:
            out.append(namespace)
    return sorted(out)


def _tool_object(ref: ir.ObjectRef) -> str:
    """`the Schedule `chaos-mesh/otel-demo-5d0c9a1e2b``: a fault tool's object, as a message names it."""
    return f"the {ref.kind} `{ref.namespace + '/' if ref.namespace else ''}{ref.name}`"
