"""Resolve and check a scenario: AST in, IR out, every error collected in one run.

Names resolve against the topology (with "did you mean"), fault targets must exist and
have the kind the fault needs, each fault's preconditions are checked, root causes and
propagation edges must follow the topology, and units are decided by each field's type.
"""

from __future__ import annotations

import dataclasses
import fnmatch
import re
from dataclasses import dataclass, field

from . import ast, ir
from .diagnostics import Diagnostics, did_you_mean
from .faults import CREATABLE_KINDS, FAULTS, WAITERS, FaultInput
from .reader import MISSING, Body, Context, convert, entries_as_data, plain
from .source import SourceMap, Span
from .ciso.tasks import TASK_CLASSES
from .vocabulary import COMPLEXITIES, DOMAINS, KNOWN_ALERTS
from .topology import (
    AGENT_RESOURCES,
    CLUSTER_RESOURCES,
    DNS1123_LABEL,
    KINDS,
    RUNTIME_KINDS,
    WORKLOAD_KINDS,
    TopologyBuild,
    TopologyBuilder,
    app_gateways,
    app_names,
    app_topology,
    pod_pattern_owner,
)

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


@dataclass
class Resolved:
    ref: ir.ObjectRef
    component: str | None  # the workload this object belongs to, for topology-aware checks
    declared: object | None = None


@dataclass
class _State:
    build: TopologyBuild = field(default_factory=TopologyBuild)
    incomplete: bool = False  # the imported application failed: unknown names are not worth reporting
    fault_objects: dict[tuple[str, str], ir.ObjectRef] = field(default_factory=dict)


class Checker:
    def __init__(self, document: ast.Scenario, path: str, diags: Diagnostics) -> None:
        self.doc = document
        self.ctx = Context(diags, path)
        self.diags = diags
        self.state = _State()
        self.agent_extra: list[tuple[list[str], list[str]]] = []  # access the faults say the agent needs
        # where each emitted object, injection and solution step comes from (E3xxx, lint, self-validation)
        self.source_map = SourceMap(path, document.name_span)
        self.locations = self.source_map.objects

    def error(self, code, message, span, label="", help=""):
        self.ctx.error(code, message, span, label, help)

    # ---- the whole scenario
    def check(self) -> ir.Scenario | None:
        unknown_params: list[Span] = []  # `param(NAME)` with no such param: E6001 only, not also a type error
        self.doc = doc = substitute_params(self.doc, self.ctx, unknown_params)  # `param(NAME)`: the param's value
        errors_before = len(self.diags.errors())
        if len(doc.name) > 63 or not DNS1123_LABEL.match(doc.name):
            self.error("E2014", f"scenario name `{doc.name}` is not a valid name", doc.name_span, "invalid name",
                       help="use lower-case letters, digits and `-` (it names the bundle folder)")
        single = self.single_statements()
        domain = self.enum_statement(single, ast.Domain, "domain", DOMAINS)
        complexity = self.enum_statement(single, ast.Complexity, "complexity", COMPLEXITIES)
        description = single.get(ast.Description)
        if description is None:
            self.error("E2013", "the scenario has no `description`", doc.name_span, help='add `description "..."`')
        tags = self.tags(single.get(ast.Tags))
        metadata = entries_as_data(single[ast.Metadata].entries) if ast.Metadata in single else {}
        self.topology(single.get(ast.UseApp))
        topology = self.state.build.to_ir()
        topology.application_options = self.application_options(single.get(ast.UseApp))
        groups = self.faults()
        expect = [s for s in doc.statements if isinstance(s, ast.Expect)]
        for extra in expect[1:]:
            self.error("E2002", "`expect` is given twice", extra.span, "second one", help="merge the two blocks")
        expect_stmts = expect[0].statements if expect else ()
        ground_groups = self.ground_groups(expect_stmts)
        alerts = self.alerts(expect_stmts)
        aliases = self.aliases(expect_stmts)  # before the root causes: it may declare groups they mark
        root_causes = self.root_causes(expect_stmts, groups)
        propagations = self.propagations(expect_stmts, groups)
        causes = [entries_as_data(s.entries) for s in expect_stmts if isinstance(s, ast.Cause)] or None
        for stmt in expect_stmts:
            if isinstance(stmt, ast.Cause) and not stmt.entries:
                self.error("E2007", "`cause` is empty", stmt.span, "no fields",
                           help='write the v1 `fault` entry: `cause { category = "Change"  condition = "..." }`')
        mitigation = self.mitigation(expect_stmts)
        optimal = self.optimal(expect_stmts)
        solutions = [self.solution(s) for s in doc.statements if isinstance(s, ast.Solution)]
        params = [p for p in (self.param(s) for s in doc.statements if isinstance(s, ast.Param)) if p]
        agent = self.agent(single.get(ast.Agent), domain or "sre", topology, groups, single.get(ast.Task))
        compliance = self.compliance(single, domain)
        self.domain_requirements(domain, optimal)
        self.record_locations(groups, single.get(ast.Agent))
        self.record_steps()
        if unknown_params:
            self.diags.items[:] = [d for d in self.diags.items if not (d.code == "E2008" and d.span in unknown_params)]
        if len(self.diags.errors()) > errors_before or domain is None or complexity is None or description is None:
            return None
        return ir.Scenario(doc.name, domain, complexity, description.text, tags, metadata, topology, groups, alerts,
                           root_causes, propagations, mitigation, optimal, solutions, params, agent, compliance,
                           ground_groups=ground_groups, aliases=aliases, causes=causes)

    def record_locations(self, groups: list[ir.FaultGroup], agent: ast.Agent | None) -> None:
        for (kind, namespace, name), declared in self.state.build.declared.items():
            k8s_kind = KINDS[kind][1]
            self.locations[(k8s_kind, namespace or None, name)] = (declared.path, declared.span)
        injections = [i for g in groups for i in g.injections]
        for index, injection in enumerate(injections):  # the spans were recorded as each injection was made
            obj = injection.itbench_args.get("kubernetesObject", {})
            meta = obj.get("metadata", {})
            if meta.get("name"):
                self.locations.setdefault((obj.get("kind"), meta.get("namespace"), meta["name"]),
                                          (self.ctx.path, self.source_map.injection(index)))
        self.source_map.agent = agent.span if agent else self.doc.name_span

    def record_steps(self) -> None:
        solutions = [s for s in self.doc.statements if isinstance(s, ast.Solution)]
        for i, solution in enumerate(solutions):
            for j, step in enumerate(solution.steps):
                self.source_map.steps[(i, j)] = step.span

    def single_statements(self) -> dict:
        singles = (ast.Domain, ast.Complexity, ast.Description, ast.Tags, ast.Metadata, ast.UseApp, ast.Agent,
                   ast.Control, ast.Task)
        found: dict = {}
        for stmt in self.doc.statements:
            if isinstance(stmt, singles):
                if type(stmt) in found:
                    first = found[type(stmt)]
                    self.error("E2002", f"`{ast.keyword(stmt)}` is given twice", stmt.span, "second one",
                               help=f"the first is at line {first.span.line}")
                else:
                    found[type(stmt)] = stmt
            elif isinstance(stmt, (ast.Object, ast.Edge)):
                self.error("E1002", "topology objects belong in a `topology { ... }` block", stmt.span)
        return found

    def enum_statement(self, single, cls, keyword, allowed) -> str | None:
        stmt = single.get(cls)
        if stmt is None:
            self.error("E2013", f"the scenario has no `{keyword}`", self.doc.name_span, f"no {keyword}",
                       help=f"add `{keyword} {allowed[0]}` (one of {', '.join(allowed)})")
            return None
        if stmt.name not in allowed:
            hint = did_you_mean(stmt.name, allowed)
            self.error("E2010", f"`{stmt.name}` is not a {keyword}", stmt.span, f"expected {' | '.join(allowed)}",
                       help=f"did you mean `{hint}`?" if hint else "")
            return None
        return stmt.name

    def tags(self, stmt: ast.Tags | None) -> list[str]:
        if stmt is None:
            return []
        value = convert(self.ctx, stmt.value, "str_list", "`tags`")
        return value if isinstance(value, list) else []

    # ---- topology
    def topology(self, use: ast.UseApp | None) -> None:
        if use is not None:
            if use.name not in app_names():
                hint = did_you_mean(use.name, app_names())
                self.error("E2001", f"unknown application `{use.name}`", use.span, "not in the standard library",
                           help=f"did you mean `{hint}`?" if hint else "known: " + ", ".join(app_names()))
                self.state.incomplete = True
            else:
                build, app_diags = app_topology(use.name)
                self.diags.extend(app_diags.items)
                self.diags.sources.update(app_diags.sources)
                if build is not None:
                    self.state.build = build
        build = self.state.build
        builder = TopologyBuilder(self.ctx, build)
        inline = [s for s in self.doc.statements if isinstance(s, ast.Topology)]
        for stmt in inline:
            builder.add_statements(stmt.statements)
        builder.resolve_autoscalers()
        if use is None and not inline:
            self.error("E2013", "the scenario has no topology", self.doc.name_span, "no topology",
                       help='import one with `use app "opentelemetry-demo"` or write `topology { ... }`')

    def application_options(self, use: ast.UseApp | None) -> dict | None:
        """`use app "x" { options { ... } }`: ITBench's install options, kept as data in ITBench's spelling."""
        if use is None or use.entries is None:
            return None
        body = Body(self.ctx, use.entries, "`use app`", use.span)
        options = body.block("options")
        body.finish()
        if options is None:
            return None
        options.used = set(range(len(options.entries)))  # free data: any key ITBench's installer reads
        return entries_as_data(options.entries) or None

    # ---- references
    def resolve(self, ref: ast.Ref, allowed: tuple[str, ...] | None = None, what: str = "reference") -> Resolved | None:
        kind = ref.kind
        build = self.state.build
        if allowed is not None and kind not in allowed:
            if kind in KINDS or kind in RUNTIME_KINDS or kind in CREATABLE_KINDS:
                self.error("E2004", f"{what} must be a {' or '.join(allowed)}, not a {kind}", ref.kind_span,
                           "wrong kind")
                return None
        namespace, name = (ref.name.split("/", 1) + [None])[:2] if "/" in ref.name else (None, ref.name)
        if kind == "gateway":
            return self.resolve_gateway(ref, namespace, name)
        if kind in RUNTIME_KINDS:
            return self.resolve_pods(ref, namespace, name)
        if kind in CREATABLE_KINDS:
            return self.resolve_fault_object(ref, kind, name)
        if kind not in KINDS:
            candidates = list(KINDS) + list(RUNTIME_KINDS) + list(CREATABLE_KINDS)
            hint = did_you_mean(kind, candidates)
            self.error("E2015", f"unknown object kind `{kind}`", ref.kind_span, "unknown kind",
                       help=f"did you mean `{hint}`?" if hint else "known: " + ", ".join(sorted(candidates)))
            return None
        matches = [d for d in build.find(kind, name) if namespace is None or d.namespace == namespace]
        if kind == "namespace":
            matches = build.find(kind, name)
        if not matches:
            if self.state.incomplete:
                return None
            names = build.names_of(kind)
            hint = did_you_mean(name, names)
            if hint:
                help_text = f"a {kind} with a similar name exists: `{hint}`"
            elif names:
                help_text = f"declared {kind}s: " + ", ".join(sorted(names)[:8]) + (" ..." if len(names) > 8 else "")
            else:
                help_text = f"the topology declares no {kind}"
            self.error("E2003", f"unknown {kind} `{ref.name}` in {what}", ref.name_span, "not declared in the topology",
                       help=help_text)
            return None
        if len(matches) > 1:
            spaces = ", ".join(sorted(d.namespace or "" for d in matches))
            self.error("E2016", f"{kind} `{name}` exists in several namespaces ({spaces})", ref.name_span,
                       "ambiguous", help=f'write `{kind} "{matches[0].namespace}/{name}"`')
            return None
        declared = matches[0]
        api_version, k8s_kind = KINDS[kind]
        # a static pod is known by its mirror pods, `<name>-<node>`: the reference is their pattern
        obj_ref = ir.ObjectRef(api_version, k8s_kind, declared.namespace, f"{name}-*" if kind == "static_pod" else name)
        return Resolved(obj_ref, self.component_of(kind, declared.obj), declared.obj)

    def component_of(self, kind: str, obj) -> str | None:
        build = self.state.build
        if kind in WORKLOAD_KINDS:
            return obj.name
        if kind == "service":
            for w in build.workloads:
                if w.namespace == obj.namespace and obj.selector and all(w.labels.get(k) == v for k, v in obj.selector.items()):
                    return w.name
            return obj.name if build.workload(obj.name, obj.namespace) else None
        if kind == "hpa":
            return obj.target.name
        return None

    def resolve_pods(self, ref: ast.Ref, namespace: str | None, pattern: str) -> Resolved | None:
        build = self.state.build
        owners = [w for w in build.workloads if (namespace is None or w.namespace == namespace)
                  and (fnmatch.fnmatchcase(f"{w.name}-7d4b9c8f6-x2x9q", pattern) or fnmatch.fnmatchcase(f"{w.name}-0", pattern))]
        if not owners:
            names = [w.name for w in build.workloads]
            hint = did_you_mean(pattern.rstrip("-*"), names)
            self.error("E2003", f"pod pattern `{pattern}` matches the pods of no workload", ref.name_span,
                       "matches no pod", help=f'did you mean `pod "{hint}-*"`?' if hint else
                       'pod names are `<workload>-<hash>`: write `pod "cart-*"`')
            return None
        name = pod_pattern_owner(pattern, [w.name for w in owners])
        owner = next(w for w in owners if w.name == name)
        return Resolved(ir.ObjectRef("v1", "Pod", owner.namespace, pattern), owner.name)

    def resolve_gateway(self, ref: ast.Ref, namespace: str | None, name: str) -> Resolved | None:
        """A Gateway API Gateway the application's installation deploys (its metadata's `gateway`)."""
        gateways = app_gateways(self.state.build)
        found = [(ns, n) for ns, n in gateways if n == name and (namespace is None or ns == namespace)]
        if not found:
            if self.state.incomplete:
                return None
            hint = did_you_mean(name, [n for _, n in gateways])
            self.error("E2003", f"unknown gateway `{ref.name}`", ref.name_span, "not deployed by the application",
                       help=f"did you mean `{hint}`?" if hint else
                       "the application's gateways: " + ", ".join(n for _, n in gateways) if gateways else
                       "gateways come with an application whose metadata names them (`gateway`), such as "
                       '`use app "book-info"`')
            return None
        api_version, k8s_kind = RUNTIME_KINDS["gateway"]
        return Resolved(ir.ObjectRef(api_version, k8s_kind, found[0][0], found[0][1]), None)

    def resolve_fault_object(self, ref: ast.Ref, kind: str, name: str) -> Resolved | None:
        found = self.state.fault_objects.get((kind, name))
        if found is None:
            names = [n for (k, n) in self.state.fault_objects if k == kind]
            hint = did_you_mean(name, names)
            self.error("E2003", f"no fault of this scenario creates {kind} `{name}`", ref.name_span,
                       "not created by a fault", help=f"did you mean `{hint}`?" if hint else
                       (f"the faults create: {', '.join(names)}" if names else "no fault creates one"))
            return None
        return Resolved(found, None)

    # ---- faults
    def faults(self) -> list[ir.FaultGroup]:
        groups: list[ir.FaultGroup] = []
        for stmt in self.doc.statements:
            if isinstance(stmt, ast.Fault):
                injection = self.fault(stmt)
                if injection is not None:
                    groups.append(ir.FaultGroup(None, [injection]))
                    self.needed_waiters(None, [(stmt, injection)], [], True)
            elif isinstance(stmt, ast.Group):
                injections, waiters = [], []
                pairs, waiters_ok = [], True
                for item in stmt.items:
                    if isinstance(item, ast.Fault):
                        injection = self.fault(item)
                        if injection is not None:
                            injections.append(injection)
                            pairs.append((item, injection))
                    else:
                        waiter = self.waiter(item)
                        if waiter is not None:
                            waiters.append(waiter)
                        else:
                            waiters_ok = False
                self.needed_waiters(stmt, pairs, waiters, waiters_ok)
                if not any(isinstance(i, ast.Fault) for i in stmt.items):
                    self.error("E2013", "a fault group needs at least one `fault`", stmt.span, "empty group")
                groups.append(ir.FaultGroup(stmt.name, injections, waiters))
        return groups

    def needed_waiters(self, group: ast.Group | None, pairs: list, waiters: list[ir.Waiter], complete: bool) -> None:
        """E2024: a fault that only takes effect after a waiter (a restart, say) must have it in its group."""
        if not complete:  # a waiter of the group did not resolve: it may be the one that is needed
            return
        have = {(w.kind, w.target) for w in waiters if w.when == "after"}
        for stmt, injection in pairs:
            kind = FAULTS[injection.fault]
            if kind.needs_waiters is None:
                continue
            for waiter_kind, ref, why in kind.needs_waiters(injection):
                if (waiter_kind, ref) in have:
                    continue
                line = f'wait after {waiter_kind} on {ref.kind.lower()} "{ref.name}"'
                where = f"in group `{group.name}`" if group is not None and group.name else "in the fault's group"
                self.error("E2024", f"`{injection.fault}` needs `{line}`: {why}", stmt.span,
                           "needs a waiter", help=f"add `{line}` {where}" if group is not None else
                           f"put the fault in a group with its waiter: `group {{ fault ...  {line} }}`")

    def fault(self, stmt: ast.Fault) -> ir.Injection | None:
        kind = FAULTS.get(stmt.kind)
        if kind is None:
            hint = did_you_mean(stmt.kind, FAULTS)
            self.error("E2005", f"unknown fault `{stmt.kind}`", stmt.kind_span, "not in the fault library",
                       help=f"did you mean `{hint}`?" if hint else
                       f"`itbench faults` lists the {len(FAULTS)} faults of the library")
            return None
        resolved = self.resolve(stmt.target, kind.targets, f"the target of `{stmt.kind}`")
        body = Body(self.ctx, stmt.entries, f"fault `{stmt.kind}`", stmt.span)
        if resolved is None:
            body.used = set(range(len(body.entries)))  # do not pile unknown-field errors on a missing target
            return None
        checked = kind.check(FaultInput(self.ctx, body, stmt, resolved.ref, resolved.declared, self.state.build,
                                        self.doc.name, document=self.doc))
        body.finish()
        if checked is None:
            return None
        itbench_id = checked.itbench_id if checked.itbench_id is not None else kind.itbench_id or ""
        injection = ir.Injection(kind.name, itbench_id, kind.mechanism, resolved.ref, checked.args,
                                 checked.itbench_args, checked.side_objects, checked.created, checked.root)
        self.source_map.injections.append(stmt.span)  # in the order `faults()` groups the injections
        for created in checked.created:  # ground truth may name what the fault creates: `schedule "name"`
            self.state.fault_objects[(created.kind.lower(), created.name)] = created
        self.agent_extra.append((checked.agent_namespaces, checked.agent_resources))
        return injection

    def waiter(self, stmt: ast.Wait) -> ir.Waiter | None:
        kind = WAITERS.get(stmt.kind)
        if kind is None:
            hint = did_you_mean(stmt.kind, WAITERS)
            self.error("E2005", f"unknown waiter `{stmt.kind}`", stmt.kind_span, "not a waiter",
                       help=f"did you mean `{hint}`?" if hint else "known waiters: " + ", ".join(sorted(WAITERS)))
            return None
        resolved = self.resolve(stmt.target, kind.targets, f"the target of `wait {stmt.kind}`")
        body = Body(self.ctx, stmt.entries, f"waiter `{stmt.kind}`", stmt.span)
        args = kind.read(body)  # the waiter's own arguments (faults/waiters.py), None after an error
        body.finish()
        if resolved is None or args is None:
            return None
        return ir.Waiter(kind.name, kind.itbench_id, stmt.when, resolved.ref, args)

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
            return [f"{w.name}-7d4b9c8f6-x2x9q" if w.kind != "StatefulSet" else f"{w.name}-0" for w in build.workloads]
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
        from .backends.itbench import group_id  # the derived id of an object's group

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
                    named = group_id(resolved.ref)
                    if named not in self.named_groups:
                        group = ir.GroundGroup(named, resolved.ref)
                        self.named_groups[named] = (group, resolved)
                        self.ground_list.append(group)
                ids.append(named)
            out.append(ids)
        return out

    def alerts(self, stmts) -> list[ir.AlertExpectation]:
        out = []
        for stmt in stmts:
            if not isinstance(stmt, ast.Alert):
                continue
            if stmt.name not in KNOWN_ALERTS:
                hint = did_you_mean(stmt.name, KNOWN_ALERTS)
                self.error("E2017", f"unknown alert `{stmt.name}`", stmt.name_span, "not defined by the monitoring stack",
                           help=f"did you mean `{hint}`?" if hint else "known: " + ", ".join(KNOWN_ALERTS))
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
                                   span, "no such dependency", help=f'add the dependency to the topology: `"{ra.component}" -> '
                                   f'"{rb.component}"`' if ra.component and rb.component else
                                   "propagation follows dependency edges between components")
                    continue
                out.append(ir.PropagationEdge(
                    ra.ref, rb.ref,
                    condition or f"{ra.ref.kind} {ra.ref.name} is degraded",
                    effect or f"{rb.ref.kind} {rb.ref.name} is affected",
                    names[index], names[index + 1], indirect=None if direct else True,
                ))
        return out

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
                if pred.name not in KNOWN_ALERTS:
                    hint = did_you_mean(pred.name, KNOWN_ALERTS)
                    self.error("E2017", f"unknown alert `{pred.name}`", pred.span, help=f"did you mean `{hint}`?" if hint else "")
                predicates.append(ir.Predicate("alert", alert=pred.name, firing=pred.firing))
                continue
            resolved = self.resolve(pred.target, None, "mitigation predicate")
            if resolved is None:
                continue
            if isinstance(pred, ast.StatePredicate):
                predicates.append(ir.Predicate("state", resolved.ref, state=pred.state,
                                               within_seconds=self.duration(pred.within)))
            else:
                predicates.append(ir.Predicate("field", resolved.ref, path=list(pred.path), op=pred.op,
                                               value=plain(pred.value)))
        return ir.Mitigation(within, predicates)

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
        namespaces = [n.name for n in topology.namespaces]
        read, write = list(DEFAULT_READ), list(DEFAULT_WRITE.get(domain, []))
        cluster_read, cluster_write = list(DEFAULT_CLUSTER_READ.get(domain, [])), []
        if domain == "ciso":
            read.append("policyreports")
            if task is not None and task.kind in TASK_CLASSES:  # what the task class must be able to change
                namespaced, cluster = TASK_CLASSES[task.kind].write
                write += namespaced
                cluster_write += cluster
                read += namespaced
                cluster_read += cluster
        for extra_namespaces, extra_resources in self.agent_extra:
            # a fault that lives elsewhere (Chaos Mesh's namespace, say): the agent must be able to find and undo it
            namespaces += extra_namespaces
            read += extra_resources
            write += extra_resources
        if stmt is not None:
            body = Body(self.ctx, stmt.entries, "agent", stmt.span)
            read = self.agent_resources(body, "read", read, cluster=False)
            write = self.agent_resources(body, "write", write, cluster=False)
            cluster_read = self.agent_resources(body, "cluster_read", cluster_read, cluster=True)
            cluster_write = self.agent_resources(body, "cluster_write", cluster_write, cluster=True)
            explicit = body.attr("namespaces", "str_list")
            if explicit is not None:
                for ns in explicit:
                    if ns not in namespaces:
                        self.error("E2016", f"agent namespace `{ns}` is not declared", body.attr_span("namespaces"))
                namespaces = explicit
            body.finish()
        namespaces = list(dict.fromkeys(namespaces))
        # the agent diagnoses what the cluster provides but does not change it
        read_only = [n.name for n in topology.namespaces if n.provided and n.name in namespaces]
        return ir.AgentAccess("itbench-agent", namespaces, sorted(set(read)), sorted(set(write)),
                              sorted(set(cluster_read)), sorted(set(cluster_write)), read_only)

    def agent_resources(self, body: Body, key: str, default: list[str], cluster: bool) -> list[str]:
        values = body.attr(key, "str_list", default=default)
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

    def domain_requirements(self, domain: str | None, optimal: list[ir.Optimum]) -> None:
        control = any(isinstance(s, ast.Metadata) and entries_as_data(s.entries).get("control") is True
                      for s in self.doc.statements)  # a paired no-fault scenario (generators/control.py)
        if domain in ("sre", "finops") and not control and not any(isinstance(s, (ast.Fault, ast.Group))
                                                                    for s in self.doc.statements):
            article = {"sre": "an SRE", "finops": "a FinOps"}[domain]
            self.error("E2013", f"{article} scenario needs at least one `fault`", self.doc.name_span, "no fault")
        has_optimal = any(isinstance(x, ast.Optimal) for s in self.doc.statements if isinstance(s, ast.Expect)
                          for x in s.statements)
        if domain == "finops" and not has_optimal and not control:  # a control changes nothing: no optimum
            self.error("E2013", "a FinOps scenario needs an `optimal` value in `expect`", self.doc.name_span,
                       "no optimum", help='add `optimal deployment "x" replicas = 1` to `expect`')


# the fields of each AST node type that may hold a value, directly or below (names, spans and refs cannot)
_VALUE_FIELDS: dict[type, tuple[str, ...]] = {}
_LEAVES = (ast.Str, ast.Int, ast.Float, ast.Quantity, ast.Percent, ast.Symbol, ast.Param, ast.Ref, Span)


def _value_fields(node) -> tuple[str, ...]:
    if isinstance(node, _LEAVES) or not dataclasses.is_dataclass(node):
        return ()
    return tuple(f.name for f in dataclasses.fields(node) if f.compare and f.type not in ("str", "str | None", "bool")
                 and f.name not in ("labels", "names", "path", "target", "chain", "members"))


def substitute_params(doc: ast.Scenario, ctx: Context, unknown: list[Span] | None = None) -> ast.Scenario:
    """The scenario with each `param(NAME)` value replaced by the param's default (its first value when
    it has none); generators (sweep, sample) produce variants by changing the default. E6001: no such param."""
    values = {s.name: s.default if s.default is not None else s.domain.items[0] for s in doc.statements
              if isinstance(s, ast.Param) and isinstance(s.domain, ast.ListValue) and s.domain.items}

    def walk(node):
        if isinstance(node, ast.Call) and node.name == "param":
            name = node.args[0].name if len(node.args) == 1 and isinstance(node.args[0], ast.Symbol) else None
            if name in values and not (isinstance(values[name], ast.Call) and values[name].name == "param"):
                return dataclasses.replace(values[name], span=node.span)
            hint = did_you_mean(name or "", values) if name else None
            if unknown is not None:
                unknown.append(node.span)
            ctx.error("E6001", f"`param({name or '...'})` names no param of the scenario" if name else
                      "`param(...)` takes the name of one param", node.span, "unknown param",
                      help=f"did you mean `param({hint})`?" if hint else
                      "declare it: `param NAME in [1, 2, 3] default 2`, and write `param(NAME)`")
            return node
        if isinstance(node, tuple):
            items = tuple(walk(item) for item in node)
            return node if all(a is b for a, b in zip(items, node)) else items
        names = _VALUE_FIELDS.get(type(node))
        if names is None:
            names = _VALUE_FIELDS[type(node)] = _value_fields(node)
        changes = {}
        for name in names:
            value = getattr(node, name)
            new = walk(value)
            if new is not value:
                changes[name] = new
        return dataclasses.replace(node, **changes) if changes else node

    return walk(doc)


@dataclass
class Checked:
    """What the checker makes of a document: the scenario's IR (None for an application file or when
    there are errors), the topology it resolved names against (also when there are errors: the
    language server completes from it) and the source map of the scenario."""

    scenario: ir.Scenario | None
    topology: TopologyBuild
    source_map: SourceMap


def check(document: ast.Document, path: str, diags: Diagnostics) -> Checked:
    if isinstance(document, ast.App):
        # an application file: check its topology on its own
        build = TopologyBuild()
        builder = TopologyBuilder(Context(diags, path), build)
        builder.add_statements(document.statements)
        builder.resolve_autoscalers()
        return Checked(None, build, SourceMap(path, document.name_span))
    checker = Checker(document, path, diags)
    scenario = checker.check()
    return Checked(scenario, checker.state.build, checker.source_map)
