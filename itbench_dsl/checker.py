"""Resolve and check a scenario: AST in, IR out, every error collected in one run.

Names resolve against the topology (with "did you mean"), fault targets must exist and
have the kind the fault needs, each fault's preconditions are checked, root causes and
propagation edges must follow the topology, and units are decided by each field's type.
"""

from __future__ import annotations

import dataclasses
import fnmatch
import os
import re
from dataclasses import dataclass, field

from . import ast, fieldpaths, ir, printer
from .diagnostics import Diagnostics, did_you_mean
from .faults import CREATABLE_KINDS, FAULTS, WAITERS, FaultInput
from .reader import MISSING, Body, Context, convert, entries_as_data, plain
from .source import SourceMap, Span
from .ciso.tasks import TASK_CLASSES
from . import tasks as task_types
from .vocabulary import COMPLEXITIES, DOMAINS, KNOWN_ALERTS, READY_KINDS
from .alerts import ALERT_NAME, SEVERITIES
from .units import format_duration, parse_go_duration
from .applications import import_app
from .topology import (
    AGENT_RESOURCES,
    AGENT_SERVICE_ACCOUNT,
    CLUSTER_RESOURCES,
    CLUSTER_SCOPED_KINDS,
    DNS1123_LABEL,
    KINDS,
    RUNTIME_KINDS,
    WORKLOAD_KINDS,
    TopologyBuild,
    TopologyBuilder,
    app_gateways,
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
# An incident task's agent (sre, finops) gets the same access in every scenario of an application, whatever
# its fault: access that depended on the fault would name it (`kubectl auth can-i --list`). It is the superset
# any fault of the library needs to be found and undone (each fault declares what it needs, `Checked.
# agent_resources`; E4025 checks it is granted): these resources, read and changed, in every namespace of
# the application; Chaos Mesh's kinds everywhere (its experiments live in its own namespace); the cluster's
# namespaces and nodes (a relabelled namespace, a cordoned node); and the cluster's system namespace, read only.
INCIDENT_DOMAINS = ("sre", "finops")
INCIDENT_RESOURCES = ["pods/exec", "secrets", "resourcequotas", "limitranges", "networkpolicies", "persistentvolumeclaims",
                      "daemonsets", "roles", "rolebindings", "poddisruptionbudgets", "jobs", "cronjobs",
                      "serviceaccounts", "peerauthentications", "authorizationpolicies", "gateways"]
CHAOS_RESOURCES = sorted(r for r, group in AGENT_RESOURCES.items() if group == "chaos-mesh.org")
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
                self.error("E2004", f"{what} must be a {' or '.join(allowed)}, not a {kind}", ref.kind_span,
                           "wrong kind")
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
        for group in groups:  # a restart or a pod deletion acts on the target's namespace alike (waiters.SPREAD)
            group.waiters = spread(group.waiters, self.state.build.workloads, provided)
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
                                        self.doc.name, document=self.doc))
        body.finish()
        if checked is None:
            return None
        itbench_id = checked.itbench_id if checked.itbench_id is not None else kind.itbench_id or ""
        injection = ir.Injection(kind.name, itbench_id, kind.mechanism, resolved.ref, checked.args,
                                 checked.itbench_args, checked.side_objects, checked.created, checked.root,
                                 kind=kind)
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
                                   "workloads and pods", pred.span, "never ready",
                                   help=f"check what the fault changes with a field predicate "
                                        f"(`{pred.target.kind} \"{pred.target.name}\" PATH == VALUE`), or `exists`")
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
        return ir.Mitigation(within, predicates)

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
        from .runtime.evaluator import number

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
        access = ir.AgentAccess(AGENT_SERVICE_ACCOUNT, namespaces, sorted(set(read)), sorted(set(write)),
                                sorted(set(cluster_read)), sorted(set(cluster_write)), read_only)
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
            lacking = [r for r in resources if r not in (access.cluster_write if r in CLUSTER_RESOURCES or r in
                                                          CHAOS_RESOURCES else access.write)]
            lacking += [f"namespace `{n}`" for n in namespaces if n not in granted_ns
                        and not set(resources) <= set(CHAOS_RESOURCES)]
            if lacking:
                self.error("E4025", f"fault `{kind}` needs access the agent's default access lacks: "
                           + ", ".join(lacking), span, "the agent could not undo this",
                           help="the agent's access is the same for every scenario of an application; grant it "
                           "there (checker.INCIDENT_RESOURCES), not in the scenario")

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

    # ---- tasks (itbench_dsl/tasks.py)
    def is_control(self) -> bool:
        """A scenario with no fault: a control (E2013 otherwise, for SRE and FinOps)."""
        return not any(isinstance(s, (ast.Fault, ast.Group)) for s in self.doc.statements)

    def tasks(self, stmt: ast.Tasks | None, domain: str | None) -> list[ir.PosedTask] | None:
        """`tasks detect, mitigate`: each a task of the domain, once; a control poses only what it can."""
        if stmt is None or domain is None:
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
    checker = Checker(document, path, diags)
    scenario = checker.check()
    return Checked(scenario, checker.state.build, checker.source_map, dict(checker.fault_files))


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
        read += INCIDENT_RESOURCES
        write += INCIDENT_RESOURCES
        cluster_read += INCIDENT_CLUSTER + CHAOS_RESOURCES
        cluster_write += INCIDENT_CLUSTER + CHAOS_RESOURCES
        if namespaces:
            namespaces.append(SYSTEM_NAMESPACE)
            read_only.append(SYSTEM_NAMESPACE)
    namespaces = list(dict.fromkeys(namespaces))
    return ir.AgentAccess(AGENT_SERVICE_ACCOUNT, namespaces, sorted(set(read)), sorted(set(write)),
                          sorted(set(cluster_read)), sorted(set(cluster_write)), sorted(set(read_only)))
