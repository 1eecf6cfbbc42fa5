"""Resolve and check a scenario: AST in, IR out, every error collected in one run.

Names resolve against the topology (with "did you mean"), fault targets must exist and
have the kind the fault needs, each fault's preconditions are checked, root causes and
propagation edges must follow the topology, and units are decided by each field's type.
"""

from __future__ import annotations

import dataclasses
import fnmatch
import os
from dataclasses import dataclass, field

from . import ast, ir
from .diagnostics import Diagnostics, did_you_mean
from .faults import CREATABLE_KINDS, FAULTS, WAITERS, FaultInput
from .reader import MISSING, Body, Context, convert, entries_as_data
from .source import SourceMap, Span
from .expectations import Expectations, Resolved
from .ciso.tasks import TASK_CLASSES
from . import tasks as task_types
from .vocabulary import COMPLEXITIES, DOMAINS, KNOWN_ALERTS
from .applications import import_app
from .topology import (
    CLUSTER_SCOPED_KINDS,
    DNS1123_LABEL,
    KINDS,
    RUNTIME_KINDS,
    WORKLOAD_KINDS,
    TopologyBuild,
    TopologyBuilder,
    app_gateways,
    pod_names,
    pod_pattern_owner,
)


@dataclass
class _State:
    build: TopologyBuild = field(default_factory=TopologyBuild)
    incomplete: bool = False  # the imported application failed: unknown names are not worth reporting
    fault_objects: dict[tuple[str, str], ir.ObjectRef] = field(default_factory=dict)


class Checker(Expectations):
    def __init__(self, document: ast.Scenario, path: str, diags: Diagnostics) -> None:
        self.doc = document
        self.ctx = Context(diags, path)
        self.diags = diags
        self.state = _State()
        # access the faults say the agent needs: (namespaces, resources, the fault's span, its kind)
        self.agent_extra: list[tuple[list[str], list[str], Span, str]] = []
        self.fault_kinds: dict = {}  # the kinds the scenario's `use faults` files declare
        self.fault_files: dict[str, str] = {}  # `use faults` path -> sha256 of the bytes read (bundle.lock)
        self.fault_library_failed = False
        self.probe_names: set[str] = set()
        self.probes_reported: set[str] = set()
        self.known_alerts: set[str] = set(KNOWN_ALERTS)  # the standard catalogue and the scenario's `alert_rule`s
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
        self.project_faults()
        groups = self.faults()
        probes = self.probes()
        expect = [s for s in doc.statements if isinstance(s, ast.Expect)]
        for extra in expect[1:]:
            self.error("E2002", "`expect` is given twice", extra.span, "second one", help="merge the two blocks")
        expect_stmts = expect[0].statements if expect else ()
        ground_groups = self.ground_groups(expect_stmts)
        alert_rules = self.alert_rules()  # before the expected alerts: they may name these
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
        posed = self.tasks(single.get(ast.Tasks), domain)
        analysis = self.analysis(expect_stmts, posed, single.get(ast.Tasks), groups)
        if domain is not None:
            self.mitigation_reach(posed, domain, compliance, agent, mitigation, groups)
        self.record_locations(groups, single.get(ast.Agent))
        self.record_steps()
        if unknown_params:
            self.diags.items[:] = [d for d in self.diags.items if not (d.code == "E2008" and d.span in unknown_params)]
        if len(self.diags.errors()) > errors_before or domain is None or complexity is None or description is None:
            return None
        return ir.Scenario(doc.name, domain, complexity, description.text, tags, metadata, topology, groups, alerts,
                           root_causes, propagations, mitigation, optimal, solutions, params, agent, compliance,
                           ground_groups=ground_groups, aliases=aliases, causes=causes, alert_rules=alert_rules,
                           tasks=posed, analysis=analysis, probes=probes)

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
                   ast.Control, ast.Task, ast.Tasks)
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
            # a standard-library application, one on the search path or a local file (applications.py)
            errors_before = len(self.diags.errors())
            build = import_app(use, self.ctx, (os.path.abspath(self.ctx.path),))
            if build is None or len(self.diags.errors()) > errors_before:
                self.state.incomplete = True
            if build is not None:
                self.state.build = build
        build = self.state.build
        builder = TopologyBuilder(self.ctx, build)
        inline = [s for s in self.doc.statements if isinstance(s, ast.Topology)]
        for stmt in inline:
            builder.add_statements(stmt.statements)
        builder.resolve_references()
        # the application's name for people: the inline topology's, else a local application's
        names = [s for s in inline if s.name is not None]
        for extra in names[1:]:
            if extra.name != names[0].name:
                self.error("E2002", f"the topology is named twice (`{names[0].name}` and `{extra.name}`)", extra.span,
                           "second name", help="name one `topology` block, or give them the same name")
        if names:
            build.display_name = names[0].name
        elif build.application is not None:
            build.display_name = None  # a standard application: its id names it
        if use is None and not inline:
            self.error("E2013", "the scenario has no topology", self.doc.name_span, "no topology",
                       help='import one with `use app "opentelemetry-demo"` or write `topology { ... }`')

    def application_options(self, use: ast.UseApp | None) -> dict | None:
        """`use app "x" { options { ... } }`: ITBench's install options, kept as data in ITBench's spelling.
        (`namespace` and `namespaces`, the application's namespaces moved, are applications.py's.)"""
        if use is None or use.entries is None:
            return None
        body = Body(self.ctx, use.entries, "`use app`", use.span)
        options = body.block("options")
        body.used |= {i for i, e in enumerate(body.entries) if e.key in ("namespace", "namespaces")}
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
                # a workload fault on a bare pod: a pod's spec is fixed at creation but for its images
                pod_help = "a running pod changes in place only its containers' images (`nonexistent_image`); any other " \
                    "field is changed by replacing the pod (`itbench explain E2056`)" \
                    if kind == "pod" and "deployment" in allowed else None
                self.error("E2004", f"{what} must be a {' or '.join(allowed)}, not a {kind}", ref.kind_span,
                           "wrong kind", help=pod_help or "")
                return None
        namespace, name = (ref.name.split("/", 1) + [None])[:2] if "/" in ref.name else (None, ref.name)
        if kind == "gateway":
            return self.resolve_gateway(ref, namespace, name)
        if kind in RUNTIME_KINDS:
            return self.resolve_pods(ref, namespace, name)
        # a kind faults may create and the topology may declare (a claim): a fault's object first; an object of
        # another kind a fault creates (a declared kind's ConfigMap) when the topology has none of that name
        if kind in CREATABLE_KINDS and (kind not in KINDS or (kind, name) in self.state.fault_objects) or \
                (kind, name) in self.state.fault_objects and not build.find(kind, name):
            return self.resolve_fault_object(ref, kind, name)
        if kind not in KINDS:
            candidates = list(dict.fromkeys([*KINDS, *RUNTIME_KINDS, *CREATABLE_KINDS]))
            hint = did_you_mean(kind, candidates)
            self.error("E2015", f"unknown object kind `{kind}`", ref.kind_span, "unknown kind",
                       help=f"did you mean `{hint}`?" if hint else "known: " + ", ".join(sorted(candidates)))
            return None
        matches = [d for d in build.find(kind, name) if namespace is None or d.namespace == namespace]
        if kind in CLUSTER_SCOPED_KINDS:
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
                  and any(fnmatch.fnmatchcase(pod, pattern) for pod in pod_names(w))]
        if not owners:
            if self.state.incomplete:  # the topology did not load: its error is reported, this follows from it
                return None
            names = sorted({w.name for w in build.workloads if namespace is None or w.namespace == namespace})
            hint = did_you_mean(pattern.rstrip("-*"), names)
            if hint:
                help_text = f'did you mean `pod "{hint}-*"`?'
            elif names:
                help_text = ("pod names are `<workload>-<hash>`: write `pod \"WORKLOAD-*\"` for one of "
                             + ", ".join(f"`{n}`" for n in names[:8]) + (" ..." if len(names) > 8 else ""))
            else:
                help_text = "the topology declares no workload whose pods it could name"
            self.error("E2003", f"pod pattern `{pattern}` matches the pods of no workload", ref.name_span,
                       "matches no pod", help=help_text)
            return None
        name = pod_pattern_owner(pattern, [w.name for w in owners])
        owner = next(w for w in owners if w.name == name)
        # a bare pod is its own object (a fault patches it); a controller's pods are only named
        return Resolved(ir.ObjectRef("v1", "Pod", owner.namespace, pattern), owner.name,
                        owner if owner.bare and pattern == owner.name else None)

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

    # ---- fault kinds of the project (`use faults`), probes
    def project_faults(self) -> None:
        """`use faults "PATH"`: the kinds a project file declares (faults/declared.py), for this scenario's faults."""
        from .faults import declared

        self.fault_kinds = {}
        for stmt in self.doc.statements:
            if not isinstance(stmt, ast.UseFaults):
                continue
            kinds = declared.load_project_file(stmt, self.ctx, FAULTS, self.fault_files)
            if kinds is None:  # reported there; the faults it declares are not worth reporting as unknown
                self.fault_library_failed = True
            for kind in kinds or ():
                if kind.name in self.fault_kinds:
                    self.error("E2002", f"fault kind `{kind.name}` comes from two `use faults` files", stmt.span,
                               "declared again", help="rename one of the two kinds")
                    continue
                self.fault_kinds[kind.name] = kind

    def fault_kind(self, name: str):
        """A fault kind by name: the scenario's project kinds, then the library's."""
        return self.fault_kinds.get(name) or FAULTS.get(name)

    def probes(self) -> list[ir.Probe]:
        """`probe "NAME" on deployment "x" { container command }`: commands whose results predicates read."""
        out: list[ir.Probe] = []
        self.probe_names: set[str] = set()
        self.probe_results: dict[str, tuple] = {}  # name -> (its span, its healthy result): read by predicates
        for stmt in self.doc.statements:
            if not isinstance(stmt, ast.Probe):
                continue
            if stmt.name in self.probe_names:
                self.error("E2002", f"probe `{stmt.name}` is declared twice", stmt.name_span, "second one")
                continue
            self.probe_names.add(stmt.name)
            resolved = self.resolve(stmt.target, WORKLOAD_KINDS[:2], f"the target of probe `{stmt.name}`")
            body = Body(self.ctx, stmt.entries, f"probe `{stmt.name}`", stmt.span)
            container = body.attr("container", "str")
            command = body.attr("command", "str_list", required=True)
            results = {moment: self.probe_result(body, moment) for moment in ("healthy", "faulty")}
            body.finish()
            self.probe_results[stmt.name] = (stmt.name_span, results["healthy"])
            if resolved is None or command is None or any(r is MISSING for r in results.values()):
                continue
            if not command:
                self.error("E2010", "`command` needs at least one item", body.attr_span("command"), "empty command")
                continue
            names = [c.name for c in resolved.declared.containers]
            if container is None and len(names) == 1:
                container = names[0]
            elif container is None:
                self.error("E2007", f"{resolved.ref.kind.lower()} `{resolved.ref.name}` has {len(names)} containers "
                           f"({', '.join(names)}): say which with `container`", stmt.target.span, "which container?")
                continue
            elif container not in names:
                hint = did_you_mean(container, names)
                self.error("E2020", f"{resolved.ref.kind.lower()} `{resolved.ref.name}` has no container `{container}`",
                           body.attr_span("container"), "no such container",
                           help=f"did you mean `{hint}`?" if hint else f"its containers: {', '.join(names)}")
                continue
            out.append(ir.Probe(stmt.name, resolved.ref, container, list(command), results["healthy"],
                                results["faulty"]))
        return out

    def probe_result(self, body: Body, moment: str):
        """`healthy { exit_code = 0 stdout = "..." stderr = "..." }` (the probe's result on the healthy
        application) or `faulty { ... }` (with the scenario's faults injected): what self-validation's derived
        states carry (states.py). None when not given; MISSING when invalid (reported)."""
        found = body.block(moment)
        if found is None:
            return None
        exit_code = found.attr("exit_code", "int", default=0)
        stdout = found.attr("stdout", "str", default="")
        stderr = found.attr("stderr", "str", default="")
        found.finish()
        if not isinstance(exit_code, int) or not 0 <= exit_code <= 255:
            self.error("E2010", f"a command's exit code is 0 to 255, not {exit_code}", found.attr_span("exit_code"),
                       "not an exit code")
            return MISSING
        return {"exit_code": exit_code, "stdout": stdout or "", "stderr": stderr or ""}

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
        from .faults.waiters import spread

        provided = {n.name for n in self.state.build.namespaces if n.provided}
        # where a fault's quota or limit range admits pods, pods started again would meet it: no spread there
        refusing = {ref.namespace for group in groups for i in group.injections for ref in i.created
                    if ref.kind in ("ResourceQuota", "LimitRange")}
        for group in groups:  # a restart or a pod deletion acts on the target's namespace alike (waiters.SPREAD)
            group.declared_waiters = group.waiters
            group.waiters = spread(group.waiters, self.state.build.workloads, provided, refusing)
        return groups

    def needed_waiters(self, group: ast.Group | None, pairs: list, waiters: list[ir.Waiter], complete: bool) -> None:
        """E2024: a fault that only takes effect after a waiter (a restart, say) must have it in its group."""
        if not complete:  # a waiter of the group did not resolve: it may be the one that is needed
            return
        have = {(w.kind, w.target) for w in waiters if w.when == "after"}
        for stmt, injection in pairs:
            kind = self.fault_kind(injection.fault)
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
        kind = self.fault_kind(stmt.kind)
        if kind is None and self.fault_library_failed:
            return None
        if kind is None:
            hint = did_you_mean(stmt.kind, [*FAULTS, *self.fault_kinds])
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
                                        self.doc.name, document=self.doc, created=self.state.fault_objects))
        body.finish()
        if checked is None:
            return None
        itbench_id = checked.itbench_id if checked.itbench_id is not None else kind.itbench_id or ""
        injection = ir.Injection(kind.name, itbench_id, kind.mechanism, resolved.ref, checked.args,
                                 checked.itbench_args, checked.side_objects, checked.created, checked.root,
                                 itbench_names=dict(checked.itbench_names),
                                 cordoned=[str(checked.args[kind.cordons])] if kind.cordons else [], kind=kind)
        self.source_map.injections.append(stmt.span)  # in the order `faults()` groups the injections
        for created in checked.created:  # ground truth may name what the fault creates: `schedule "name"`
            self.state.fault_objects[(created.kind.lower(), created.name)] = created
        self.agent_extra.append((checked.agent_namespaces, checked.agent_resources, stmt.span, kind.name))
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

    # ---- tasks (itbench_dsl/tasks.py)
    def is_control(self) -> bool:
        """A scenario with no fault: a control (E2013 otherwise, for SRE and FinOps)."""
        return not any(isinstance(s, (ast.Fault, ast.Group)) for s in self.doc.statements)

    def tasks(self, stmt: ast.Tasks | None, domain: str | None) -> list[ir.PosedTask] | None:
        """`tasks detect, mitigate`: each a task of the domain, once; a control poses only what it can. Without
        the statement: None (the domain's default), but a control's default (tasks.CONTROL_DEFAULT) is posed
        task by task, so that it is graded and prompted as a control whether or not it says `tasks`."""
        if domain is None:
            return None
        if stmt is None:
            if domain in task_types.CONTROL_DEFAULT and self.is_control():
                return [ir.PosedTask(name, None) for name in task_types.CONTROL_DEFAULT[domain]]
            return None
        allowed = task_types.names(domain)
        control = domain != "ciso" and self.is_control()
        posed: dict[str, ir.PosedTask] = {}
        for item in stmt.items:
            kind = task_types.TASK_TYPES.get(item.name)
            if item.name not in allowed:
                hint = did_you_mean(item.name, allowed)
                self.error("E2010", f"`{item.name}` is not a task of a {domain} scenario", item.span, "unknown task",
                           help=f"`{item.name}` is a CISO task class: write `task {item.name}`"
                           if item.name in TASK_CLASSES else (f"did you mean `{hint}`? " if hint else "")
                           + f"a {domain} scenario poses {', '.join(allowed)}")
                continue
            if item.name in posed:
                self.error("E2002", f"task `{item.name}` is posed twice", item.span, "second one")
                continue
            if control and not kind.control:
                self.error("E2036", f"a control scenario cannot pose `{item.name}`: nothing is wrong in it",
                           item.span, "not for a control",
                           help="a control poses `detect` (the right answer: nothing is wrong) and `mitigate` "
                                "(the right answer: change nothing)")
                continue
            within = None
            if item.within is not None:
                if not kind.window:
                    self.error("E2010", f"`within` is the detection window: `{item.name}` takes none",
                               item.within.span, "not for this task", help="write `detect within 10m`")
                    continue
                within = self.duration(item.within)
                if within is not None and within <= 0:
                    self.error("E2010", "the detection window must be longer than 0", item.within.span, "not positive")
                    continue
            posed[item.name] = ir.PosedTask(item.name, within)
        for a, b in task_types.EXCLUSIVE:
            if a in posed and b in posed:
                self.error("E2036", f"`{a}` and `{b}` read one answer and grade the same causes: pose one of them",
                           stmt.span, "both posed", help=f"`{b}` also grades how the incident spread; `{a}` only "
                                                         "which components caused it")
        return [posed[name] for name in task_types.ORDER if name in posed]

    def analysis(self, stmts, posed: list[ir.PosedTask] | None, stmt: ast.Tasks | None,
                 groups: list[ir.FaultGroup]) -> ir.AnalysisLabels | None:
        """The analysis labels: the `analysis` block of `expect`, else (when `analyze` is posed) the labels
        the faults' kinds give (FaultKind.labels)."""
        blocks = [s for s in stmts if isinstance(s, ast.Analysis)]
        for extra in blocks[1:]:
            self.error("E2002", "`analysis` is given twice", extra.span, "second one")
        if blocks:
            block = blocks[0]
            if self.is_control():
                self.error("E2036", "a control scenario has no fault to classify", block.span, "no fault",
                           help="leave `analysis` out of a control")
                return None
            labels = task_types.read_labels(Body(self.ctx, block.entries, "`analysis`", block.span))
            return ir.AnalysisLabels(*labels) if labels else None
        if stmt is None or not any(t.name == "analyze" for t in posed or []):
            return None
        injections = [i for g in groups for i in g.injections]
        given = {i.fault: i.kind.labels for i in injections}
        found = set(given.values())
        if len(found) == 1 and None not in found:
            return ir.AnalysisLabels(*found.pop())
        if injections:  # (faults that did not check are reported already)
            unknown = sorted(name for name, labels in given.items() if labels is None)
            self.error("E2013", "the `analyze` task needs the fault's labels", stmt.span, "no labels",
                       help="add `analysis { system_level = \"...\"  fault_type = \"...\" }` to `expect` ("
                            + (f"{', '.join(unknown)} give{'s' if len(unknown) == 1 else ''} none" if unknown
                               else "the faults give different ones") + ")")
        return None

    def domain_requirements(self, domain: str | None, optimal: list[ir.Optimum]) -> None:
        control = any(isinstance(s, ast.Metadata) and entries_as_data(s.entries).get("control") is True
                      for s in self.doc.statements)  # a paired no-fault scenario (variants/builtin/control.py)
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
    fault_files: dict[str, str] = field(default_factory=dict)  # `use faults` path -> sha256 (bundle.lock)


def expand_alternatives(document: ast.Document) -> ast.Document:
    """`root_cause A or B` as the statements it stands for: a root cause on each object and an `alias` that
    makes them one class, so that naming either is the whole answer and naming both is no error
    (docs/language.md, Expectations)."""
    if not isinstance(document, ast.Scenario) or not any(
            isinstance(e, ast.RootCause) and e.alternatives
            for s in document.statements if isinstance(s, ast.Expect) for e in s.statements):
        return document

    def expand(expect: ast.Expect) -> ast.Expect:
        out = []
        for stmt in expect.statements:
            if isinstance(stmt, ast.RootCause) and stmt.alternatives:
                members = (stmt.target, *stmt.alternatives)
                out += [ast.RootCause(r, stmt.span) for r in members]
                out.append(ast.Alias(members, stmt.span))
            else:
                out.append(stmt)
        return dataclasses.replace(expect, statements=tuple(out))

    statements = tuple(expand(s) if isinstance(s, ast.Expect) else s for s in document.statements)
    return dataclasses.replace(document, statements=statements)


def check(document: ast.Document, path: str, diags: Diagnostics) -> Checked:
    if isinstance(document, ast.FaultLibrary):
        # a fault library file: check its declarations (faults/declared.py)
        from .faults import declared

        declared.build_library(document, path, diags, FAULTS, declared.stdlib_names(path, FAULTS))
        return Checked(None, TopologyBuild(), SourceMap(path, document.name_span))
    if isinstance(document, ast.App):
        # an application file: check its topology on its own
        build = TopologyBuild()
        builder = TopologyBuilder(Context(diags, path), build)
        builder.add_statements(document.statements)
        builder.resolve_references()
        return Checked(None, build, SourceMap(path, document.name_span))
    checker = Checker(expand_alternatives(document), path, diags)
    scenario = checker.check()
    return Checked(scenario, checker.state.build, checker.source_map, dict(checker.fault_files))

