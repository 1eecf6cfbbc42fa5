"""Lint: warnings about scenarios that compile but are likely to be wrong, weak or redundant.

Lint is its own pass, run by `itbench check` after a file has compiled without errors (a file
with errors gets its errors, not a pile of warnings). Each rule is a W code in W2002-W2099 with
its page in codes.py (`itbench explain W2002`):

| code  | rule |
|-------|------|
| W2002 | an inline topology object nothing refers to (objects of a `use app` application are exempt) |
| W2003 | an SRE fault with no observable success criterion (no `mitigated when` predicate sees it, and no expected alert can tell) |
| W2004 | an SRE or FinOps scenario with a fault and no `solution` (a control has nothing to solve) |
| W2005 | two faults of one file with the same mechanism on the same target |
| W2006 | a scenario identical to another checked one (the same canonical IR hash) |
| W2007 | a description that is empty or a placeholder |
| W2008 | `complexity` inconsistent with the length of the propagation chains (see COMPLEXITY_HOPS) |
| W2011 | a `mitigated when` predicate that reads an item of an unordered list by its position (UNORDERED_LISTS) |
| W2012 | a `mitigated when` predicate or an optimum that the evaluator's own checks on the same object contradict |
| W2013 | two root-cause groups that stand for one object (one root cause counted twice, another never graded) |
| W2014 | a `use app` install option the native bundle does not install (it reaches only the ITBench export) |

Prompt leakage is not a lint warning: a prompt that names the answer is the error E4003
(leakage.py), and W2001 (the same fault mechanism on the same target in two files) is
mechanisms.py.

Every rule reads the checked IR and, for locations, the AST and source map the compile result
carries (`checking.py` builds the `Linted` item of each file). `itbench check` runs the
single-file rules where it compiles each file (possibly in another process) and W2006 over all
of them.
"""

from __future__ import annotations

import functools
import math
import re
from typing import Iterable, Sequence

from .. import ast, ir
from ..diagnostics import Diagnostic, Note
from .identity import scenario_digest
from .components import Components  # noqa: F401  (lint's rules use it; tests import it from here)
from .mechanisms import injection_key
from ..source import NO_SPAN, SourceMap, Span

LINT_CODES = ("W2002", "W2003", "W2004", "W2005", "W2006", "W2007", "W2008", "W2011", "W2012", "W2013", "W2014")

# W2008: the number of hops between components along the longest propagation chain that each
# complexity allows (see `propagation_hops`); `None` is no bound. ITBench's complexity also weighs how
# subtle a fault is (a JVM exception inside one service is `high` with one hop), so the rule only flags
# clear contradictions: a `low` incident whose symptoms travel 3 hops or more, a `high` one that never
# leaves the faulty component. Tuned on the scenario library, which it passes.
COMPLEXITY_HOPS: dict[str, tuple[int, int | None]] = {
    "low": (0, 2),
    "medium": (0, None),
    "high": (1, None),
}

# W2007: descriptions that say nothing (compared lower-case, without surrounding punctuation)
PLACEHOLDERS = frozenset({
    "", "todo", "tbd", "tbc", "fixme", "xxx", "wip", "placeholder", "description", "changeme", "change me",
    "n/a", "na", "none", "null", "test", "example", "lorem ipsum", "describe the scenario", "add a description",
    "no description", "scenario", "...",
})
_PLACEHOLDER_WORD = re.compile(r"\b(TODO|TBD|FIXME|XXX|lorem ipsum)\b", re.IGNORECASE)
MIN_DESCRIPTION_WORDS = 3


class Linted:
    """One file to lint: its path, its AST, its checked IR and its source map (from the compile result)."""

    def __init__(self, path: str, document: ast.Scenario, scenario: ir.Scenario,
                 source_map: SourceMap | None = None) -> None:
        self.path = path
        self.document = document
        self.scenario = scenario
        self.source_map = source_map or SourceMap(path, document.name_span)
        self._components: Components | None = None
        self._digest: str | None = None

    @property
    def name_span(self) -> Span:
        return self.source_map.scenario

    @property
    def components(self) -> Components:
        if self._components is None:
            self._components = Components(self.scenario)
        return self._components

    @property
    def digest(self) -> str:
        """What the scenario measures (identity.py), for W2006."""
        if self._digest is None:
            self._digest = scenario_digest(self.scenario)
        return self._digest


# ---- entry points ---------------------------------------------------------------------------------


def allowed_codes(scenario: ir.Scenario | None) -> set[str]:
    """The warnings a scenario allows: `metadata { lint_allow = ["W2002"] }`."""
    codes = scenario.metadata.get("lint_allow") if scenario is not None else None
    if isinstance(codes, str):
        codes = [codes]
    return {str(c).upper() for c in codes} if isinstance(codes, list) else set()


def lint_item(item: Linted) -> list[Diagnostic]:
    """Every single-file rule on one file (`itbench check` runs them where it compiled the file)."""
    allowed = allowed_codes(item.scenario)
    out: list[Diagnostic] = []
    for rule in SINGLE_FILE_RULES:
        out.extend(d for d in rule(item) if d.code not in allowed)
    return out


def lint_files(items: Sequence[Linted]) -> list[Diagnostic]:
    """Every rule on several checked scenarios: each file's own rules, then the cross-file ones."""
    out: list[Diagnostic] = []
    for item in items:
        out.extend(lint_item(item))
    allowed = {item.path: allowed_codes(item.scenario) for item in items}
    # a pair of files: allowed when either file allows it, whichever order they were given in
    earlier = {d.path: d.notes[0].message.rsplit("` is in ", 1)[-1] if d.notes else None
               for d in identical_scenarios(items)}
    out.extend(d for d in identical_scenarios(items) if d.code not in allowed.get(d.path, ())
               and d.code not in allowed.get(earlier.get(d.path), ()))
    return out


# ---- helpers ----------------------------------------------------------------------------------------


def _statements(document: ast.Scenario, cls) -> list:
    return [s for s in document.statements if isinstance(s, cls)]


def _fault_span(item: Linted, index: int) -> Span:
    """The statement of the scenario's `index`th injection (recorded by the checker as it made it)."""
    return item.source_map.injection(index)


def _refs(scenario: ir.Scenario) -> list[ir.ObjectRef]:
    """Every object reference of a scenario outside its topology."""
    refs: list[ir.ObjectRef] = []
    for group in scenario.faults:
        for i in group.injections:
            refs += [i.target, *i.side_objects, *i.created, *([i.root] if i.root else [])]
        refs += [w.target for w in group.waiters]
    refs += [a.target for a in scenario.alerts]
    refs += scenario.root_causes
    refs += [e for p in scenario.propagations for e in (p.source, p.target)]
    if scenario.mitigation is not None:
        refs += [p.target for p in scenario.mitigation.predicates if p.target is not None]
    refs += [o.target for o in scenario.optimal]
    if scenario.compliance is not None:
        refs += scenario.compliance.gaps + scenario.compliance.compliant
    return refs


def _strings(value) -> Iterable[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from _strings(v)


# ---- W2002 unused topology object ------------------------------------------------------------------

_K8S_KIND = {"deployment": "Deployment", "statefulset": "StatefulSet", "service": "Service", "configmap": "ConfigMap",
             "secret": "Secret", "serviceaccount": "ServiceAccount", "hpa": "HorizontalPodAutoscaler"}


def unused_objects(item: Linted) -> list[Diagnostic]:
    """W2002: an inline object that no statement names and that belongs to no component in use.

    A component is in use when a statement of the scenario names one of its objects (a fault, a
    waiter, an alert, a root cause, a propagation, a mitigation predicate, an optimum, a gap or
    compliant object), or when a dependency edge names it. A workload's component holds the services
    that select it, its autoscaler and the configmaps, secrets and service account it uses.
    Namespaces are never reported, nor the objects of an imported application.
    """
    scenario = item.scenario
    if not any(isinstance(s, ast.Topology) for s in item.document.statements):
        return []
    topology = scenario.topology
    refs = _refs(scenario)
    named = {(r.kind, r.name) for r in refs}
    imported = _app_objects(topology.application)
    objects = [(w.kind, w.name) for w in topology.workloads] + [(kind, o.name) for kind, group in (
        ("Service", topology.services), ("ConfigMap", topology.configmaps), ("Secret", topology.secrets),
        ("ServiceAccount", topology.service_accounts), ("HorizontalPodAutoscaler", topology.autoscalers))
        for o in group]
    candidates = [key for key in objects if key not in imported and key not in named]
    if not candidates:
        return []
    components = item.components
    used_components = {components.of(r) for r in refs} | {name for edge in topology.edges for name in edge}
    # names a fault's arguments mention (a configmap a fault edits, say) count as references, and so does a
    # service account a role binding grants rights to: what it may do is what the scenario declares it for
    mentioned = {s for i in scenario.injections() for s in _strings(i.args)}
    mentioned |= {subject.get("name") for binding in topology.role_bindings for subject in binding.subjects
                  if subject.get("kind") == "ServiceAccount"}
    # an ingress in use uses the Services it routes to, and their workloads
    for ingress in topology.ingresses:
        if ("Ingress", ingress.name) in named:
            for backend in ir.ingress_backends(ingress):
                mentioned.add(backend.service)
                used_components.add(components.by_key.get(("Service", backend.service)))
    # the configmaps, secrets and service accounts each workload uses
    members: dict[tuple[str, str], str] = {}
    for w in topology.workloads:
        if w.service_account:
            members.setdefault(("ServiceAccount", w.service_account), w.name)
        for text in _strings(ir.to_json([w.volumes, [c.env for c in w.containers + w.init_containers]])):
            for kind in ("ConfigMap", "Secret"):
                members.setdefault((kind, text), w.name)
    unused: dict[tuple[str, str], str] = {}  # (Kubernetes kind, name) -> why
    for key in candidates:
        kind, name = key
        if name in mentioned:
            continue
        component = members.get(key) or components.by_key.get(key)
        if component is not None and component in used_components:
            continue
        if component is None and kind not in ("Deployment", "StatefulSet"):
            unused[key] = "no statement names it and no workload uses it"
        elif component is None or kind in ("Deployment", "StatefulSet"):
            unused[key] = "no statement names it or its services, and no dependency edge connects it"
        else:
            unused[key] = f"it belongs to workload `{component}`, which nothing in the scenario refers to"
    if not unused:
        return []
    out = []
    for kind, name, span in _inline_declarations(item, unused):
        why = unused.get((_K8S_KIND[kind], name))
        if why is not None:
            out.append(Diagnostic(
                "W2002", f"{kind} `{name}` is declared but never used: {why}", item.path, span, "unused object",
                help="remove it, or connect it (a dependency edge, an alert, a propagation) if the scenario needs it"))
    return out


def _inline_declarations(item: Linted, wanted: dict) -> list[tuple[str, str, Span]]:
    """(kind, name, name span) of the inline topology objects, in source order."""
    return [(obj.kind, obj.name, obj.name_span) for stmt in _statements(item.document, ast.Topology)
            for obj in stmt.statements if isinstance(obj, ast.Object) and obj.kind in _K8S_KIND]


@functools.lru_cache(maxsize=None)
def _app_objects(application: str | None) -> frozenset[tuple[str, str]]:
    """(Kubernetes kind, name) of every object a standard-library application declares."""
    if not application:
        return frozenset()
    from ..applications import app_topology
    from ..topology import KINDS

    build = app_topology(application)[0]
    if build is None:
        return frozenset()
    return frozenset((KINDS[kind][1], name) for (kind, _, name) in build.declared if kind in KINDS)


# ---- W2003 fault with no observable success criterion ----------------------------------------------


def unobservable_faults(item: Linted) -> list[Diagnostic]:
    """W2003: an SRE fault with no observable success criterion: nothing in `mitigated when` sees
    it, and no alert can tell.

    A `mitigated when` state or field predicate sees a fault when it names an object of the fault's
    footprint (its target, what it creates or changes) or of the same component (their services and
    pods), a scope predicate (`all pods in namespace "x" ready`) when it covers such a workload, a probe predicate the workload its probe runs in, and an access predicate the roles and bindings
    the authorizer reads for it (the cluster's, and those of its namespace); an `alert X not firing` predicate sees every
    fault when `expect` lists X. An alert can tell
    when `expect` lists it on a component where the fault's group acts (the footprints of its faults,
    which are one incident, and the targets of its waiters: a flag takes effect where its readers
    restart), or on one the propagation chains of `expect` reach from there. FinOps faults are measured against
    `optimal` values (E2013 requires them); CISO scenarios have no faults."""
    scenario = item.scenario
    if scenario.domain != "sre" or not _poses_mitigation(scenario):
        return []
    components = item.components
    predicates = scenario.mitigation.predicates if scenario.mitigation is not None else []
    expected_alerts = {a.name for a in scenario.alerts}
    if any(p.kind == "alert" and p.firing is False and p.alert in expected_alerts for p in predicates):
        return []
    # a probe predicate sees the workload its probe runs in
    probed = {p.name: p.target for p in scenario.probes}
    read = [p.target for p in predicates if p.target is not None] + \
        [probed[p.path[0]] for p in predicates if p.kind == "probe" and p.path and p.path[0] in probed] + \
        _scope_covers(scenario, predicates)
    seen = {components.of(r) for r in read}
    seen_keys = {r.key() for r in read}
    alerted = {components.of(a.target) for a in scenario.alerts}
    downstream: dict[str, set[str]] = {}
    for edge in scenario.propagations:
        downstream.setdefault(components.of(edge.source), set()).add(components.of(edge.target))
    out = []
    pairs = [(injection, group) for group in scenario.faults for injection in group.injections]
    # an access predicate sees every RBAC object the authorizer reads for it: the cluster's roles and bindings,
    # and those of the request's namespace
    access = [p.namespace for p in predicates if p.kind == "access"]
    for index, (injection, group) in enumerate(pairs):
        if any(r.key() in seen_keys or components.of(r) in seen for r in _footprint(injection)):
            continue
        if any(r.kind in ("ClusterRole", "ClusterRoleBinding") and access or
               r.kind in ("Role", "RoleBinding") and r.namespace in access for r in _footprint(injection)):
            continue
        # the faults of a group are one incident, and a fault that takes effect through its group's waiters
        # (a restart of the flag's readers) acts there too
        acts = {components.of(r) for i in group.injections for r in _footprint(i)}
        acts |= {components.of(w.target) for w in group.waiters}
        if _reach(acts, downstream) & alerted:
            continue
        span = _fault_span(item, index)
        if scenario.mitigation is None or not predicates:
            why = "the scenario has no `mitigated when` predicate"
        else:
            why = "no `mitigated when` predicate names what it changes"
        out.append(Diagnostic(
            "W2003", f"fault `{injection.fault}` on {injection.target.kind.lower()} `{injection.target.name}` has no "
            f"observable success criterion: {why}, and no expected alert fires where it acts or where it propagates",
            item.path, span, "how does the evaluator see it repaired?",
            help=_observe_help(injection.target)))
    return out


def _poses_mitigation(scenario: ir.Scenario) -> bool:
    """Whether the agent is asked to mitigate (`tasks`, or the domain's default): a scenario that only asks to
    detect, localize, diagnose or analyze grades no repair, so nothing need observe one or show how."""
    from ..tasks import posed

    return "mitigate" in posed(scenario)


def _scope_covers(scenario: ir.Scenario, predicates) -> list[ir.ObjectRef]:
    """The workloads `all pods ... ready` (and the other scopes) require ready: the evaluator's own list."""
    from ..backends.evaluator import _scope

    return [ir.ObjectRef("apps/v1", w["kind"], w["namespace"], w["name"])
            for p in predicates if p.kind == "scope" for w in _scope(scenario, p)["expected"]]


def _observe_help(target: ir.ObjectRef) -> str:
    from ..vocabulary import READY_KINDS
    word = _keyword(target)
    alert = "or expect the alert it raises (and `alert NAME not firing` in `mitigated when`)"
    if target.kind in READY_KINDS:
        return f'add `{word} "{target.name}" ready` (or a field predicate) to `mitigated when`, {alert}'
    return (f'add a field predicate on what the fault changes to `mitigated when`, such as '
            f'`{word} "{target.name}" PATH == VALUE` (a {target.kind} has no readiness: `ready` is for workloads '
            f'and pods), {alert}')


def _keyword(target: ir.ObjectRef) -> str:
    from ..topology import KINDS, RUNTIME_KINDS
    return next((word for word, (_, kind) in {**RUNTIME_KINDS, **KINDS}.items() if kind == target.kind),
                target.kind.lower())


def _footprint(injection: ir.Injection) -> list[ir.ObjectRef]:
    """What a fault changes: its target, the other objects it changes, what it creates, its root cause."""
    return [injection.target, *injection.side_objects, *injection.created, *([injection.root] if injection.root else [])]


def _reach(start: set[str], graph: dict[str, set[str]]) -> set[str]:
    seen, todo = set(start), list(start)
    while todo:
        for nxt in graph.get(todo.pop(), ()):
            if nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    return seen


# ---- W2004 missing solution -----------------------------------------------------------------------------


def missing_solution(item: Linted) -> list[Diagnostic]:
    """W2004: an SRE or FinOps scenario with a fault and without a `solution` block, when it poses `mitigate`.

    A CISO scenario's solution is the artefact the agent writes (a policy, a playbook), which the
    evaluator checks against the gap and compliant objects: it needs none."""
    scenario = item.scenario
    # a control (no fault) has nothing to solve: its right mitigation is to change nothing
    if scenario.domain == "ciso" or scenario.solutions or not scenario.injections() or not _poses_mitigation(scenario):
        return []
    return [Diagnostic(
        "W2004", f"scenario `{scenario.name}` has no `solution`", item.path, item.name_span, "no solution",
        help='add `solution "title" { step "what to do" run "kubectl ..." }`: the ground truth\'s recommended '
             "actions come from it, and reviewers check the scenario can be solved")]


# ---- W2005 duplicate mechanism in one file -------------------------------------------------------------


def duplicate_mechanisms(item: Linted) -> list[Diagnostic]:
    """W2005: two faults of one scenario with the same mechanism on the same target and place
    (the key of W2001: mechanism, target, and the arguments that say where it acts)."""
    first: dict[tuple, int] = {}
    out = []
    for index, injection in enumerate(item.scenario.injections()):
        key = injection_key(injection)
        if key not in first:
            first[key] = index
            continue
        span, earlier = _fault_span(item, index), _fault_span(item, first[key])
        out.append(Diagnostic(
            "W2005", f"fault `{injection.fault}` on {injection.target.kind.lower()} `{injection.target.name}` repeats "
            f"the fault at line {earlier.line}: same mechanism (`{injection.mechanism}`) on the same target",
            item.path, span, "same mechanism on the same target",
            help="the second injection overwrites or repeats the first: remove one, or target another object",
            notes=(Note("the first fault is here", earlier),)))
    return out


# ---- W2006 identical scenario ----------------------------------------------------------------------------

def identical_scenarios(items: Sequence[Linted]) -> list[Diagnostic]:
    """W2006: a scenario whose canonical IR equals an earlier one's (in the order the files were given)."""
    first: dict[str, Linted] = {}
    out = []
    for item in items:
        earlier = first.setdefault(item.digest, item)
        if earlier is item or earlier.path == item.path:
            continue
        out.append(Diagnostic(
            "W2006", f"scenario `{item.scenario.name}` is identical to `{earlier.scenario.name}` ({earlier.path}): "
            "only the name, description, tags, metadata or params differ", item.path, item.name_span,
            "identical to another scenario",
            help="change what the scenario measures (topology, faults, expectations), or drop one of the two",
            notes=(Note(f"`{earlier.scenario.name}` is in {earlier.path}", earlier.name_span),)))
    return out


# ---- W2007 empty or placeholder description ------------------------------------------------------------


def placeholder_description(item: Linted) -> list[Diagnostic]:
    """W2007: a description that is empty, a placeholder (TODO, TBD, ...), the scenario's name, or
    shorter than three words. (A missing description is the error E2013.)"""
    text = " ".join(item.scenario.description.split())
    bare = text.strip(" .!?:;-_*#\"'`").lower()
    if not text:
        why = "it is empty"
    elif bare in PLACEHOLDERS or _PLACEHOLDER_WORD.search(text):
        why = "it is a placeholder"
    elif bare in (item.scenario.name.lower(), item.scenario.name.replace("-", " ").lower()):
        why = "it repeats the scenario's name"
    elif len(text.split()) < MIN_DESCRIPTION_WORDS:
        why = f"it has fewer than {MIN_DESCRIPTION_WORDS} words"
    else:
        return []
    stmt = next(iter(_statements(item.document, ast.Description)), None)
    return [Diagnostic(
        "W2007", f"the description of `{item.scenario.name}` says nothing: {why}", item.path,
        stmt.span if stmt is not None else item.name_span,
        "placeholder description", help="say in a sentence what breaks and what the user sees: it is shown in the "
        "scenario index and to reviewers")]


# ---- W2008 complexity inconsistent with the propagation length ----------------------------------------


def propagation_hops(scenario: ir.Scenario, components: Components | None = None) -> int | None:
    """The number of component-to-component hops along the longest propagation chain.

    Edges inside one component (a deployment to its pods, pods to their service) are not hops;
    None when the scenario declares no propagation."""
    if not scenario.propagations:
        return None
    components = components or Components(scenario)
    graph: dict[str, set[str]] = {}
    for edge in scenario.propagations:
        a, b = components.of(edge.source), components.of(edge.target)
        graph.setdefault(a, set())
        graph.setdefault(b, set())
        if a != b:
            graph[a].add(b)
    return _longest_path(graph)


def _longest_path(graph: dict[str, set[str]]) -> int:
    """The number of edges of the longest simple path. Exact for an acyclic graph (depth-first with
    memory, without recursion) and for a cyclic one of up to 10 nodes (over subsets of nodes); a larger
    cyclic graph gets the depth-first count, where an edge back into the current path adds nothing."""
    nodes = sorted(graph)
    best: dict[str, int] = {}
    cyclic = False
    for root in nodes:
        if root in best:
            continue
        on_path = {root}
        stack = [(root, iter(sorted(graph[root])))]
        while stack:
            node, children = stack[-1]
            child = None
            for n in children:
                if n in on_path:
                    cyclic = True
                elif n not in best:
                    child = n
                    break
            if child is not None:
                on_path.add(child)
                stack.append((child, iter(sorted(graph[child]))))
                continue
            stack.pop()
            on_path.discard(node)
            best[node] = max((1 + best[n] for n in graph[node] if n in best and n not in on_path), default=0)
    if not cyclic or len(nodes) > 10:
        return max(best.values())
    index = {n: i for i, n in enumerate(nodes)}
    successors = [[index[m] for m in graph[n]] for n in nodes]
    reachable = {(1 << i, i) for i in range(len(nodes))}  # (visited set, last node) of every simple path
    frontier, longest = set(reachable), 0
    while frontier:
        following = set()
        for mask, last in frontier:
            for nxt in successors[last]:
                if not mask & (1 << nxt):
                    following.add((mask | (1 << nxt), nxt))
        if following:
            longest += 1
        frontier = following
    return longest


def complexity_mismatch(item: Linted) -> list[Diagnostic]:
    """W2008: `complexity low` with a propagation of more than two hops between components, or
    `complexity high` with none. Scenarios without a propagation are not judged."""
    scenario = item.scenario
    hops = propagation_hops(scenario, item.components)
    bounds = COMPLEXITY_HOPS.get(scenario.complexity)
    if hops is None or bounds is None:
        return []
    low, high = bounds
    if low <= hops and (high is None or hops <= high):
        return []
    stmt = next(iter(_statements(item.document, ast.Complexity)), None)
    span: Span = stmt.span if stmt is not None else item.name_span or NO_SPAN
    suggested = next(name for name, (lo, hi) in COMPLEXITY_HOPS.items() if lo <= hops and (hi is None or hops <= hi)
                     and name != scenario.complexity)
    hop_text = f"{hops} hop{'s' * (hops != 1)}"
    rule = f"`{scenario.complexity}` " + (f"allows at most {high} hop{'s' * (high != 1)}" if high is not None
                                           else f"needs at least {low} hop{'s' * (low != 1)}")
    return [Diagnostic(
        "W2008", f"complexity `{scenario.complexity}` does not match the propagation: its longest chain crosses "
        f"{hop_text} between components ({rule})", item.path, span, f"{hop_text} of propagation",
        help=f"write `complexity {suggested}`, or check the propagation chains in `expect`")]


# ---- W2011 an unordered list read by position --------------------------------------------------------

# Lists whose order means nothing to Kubernetes: an RBAC role's rules and a binding's subjects, a container's
# env, ports and mounts, a pod's containers, volumes and tolerations, an autoscaler's metrics, a rule's verbs,
# resources and API groups. A fix that adds the missing item after the others, or a server that returns them
# in another order, is right: a predicate must select the item by what it is (`[name="x"]`, `contains`).
# (`args`, `command` and `initContainers` keep their order: it is what they mean.)
UNORDERED_LISTS = frozenset({
    "rules", "subjects", "env", "envFrom", "ports", "volumeMounts", "volumeDevices", "containers", "volumes",
    "tolerations", "imagePullSecrets", "hostAliases", "metrics", "verbs", "resources", "apiGroups",
    "resourceNames", "nonResourceURLs", "ingress", "egress", "from", "to", "http", "hosts", "gateways",
})


# the names above that are lists wherever a Kubernetes kind has them (`resources`, `from`, `http` are maps in
# some kinds): a key read straight on one of them (`spec.ports.targetPort`) reads its first item
ALWAYS_LISTS = frozenset({"rules", "subjects", "env", "envFrom", "ports", "volumeMounts", "volumeDevices",
                          "containers", "volumes", "tolerations", "imagePullSecrets", "hostAliases", "metrics"})


def positional_predicates(item: Linted) -> list[Diagnostic]:
    """W2011: a `mitigated when` field predicate that reads an item of an unordered list by its position
    (`rules[0].verbs`, or `spec.ports.targetPort`, which reads the first port): a right fix that appends the
    missing item, or the API server's own order, fails it."""
    scenario = item.scenario
    out = []
    for index, pred in enumerate(scenario.mitigation.predicates if scenario.mitigation is not None else []):
        if pred.kind != "field":
            continue
        for at, step in enumerate(pred.path):
            if at == 0 or isinstance(step, bool):
                continue
            before = pred.path[at - 1]
            first = isinstance(step, str) and isinstance(before, str) and before in ALWAYS_LISTS
            if first:
                step = 0
            if not isinstance(step, int) or isinstance(step, bool):
                continue
            if isinstance(before, str) and before in UNORDERED_LISTS:
                spans = item.source_map.predicates
                span = spans[index] if index < len(spans) else item.name_span
                out.append(Diagnostic(
                    "W2011", f"`{before}[{step}]` reads an item of `{before}` by its position, and the items of "
                    f"`{before}` have no order: a fix that adds the right item after another one fails it",
                    item.path, span, "an item read by its position",
                    help=f"select the item by what it is: `{before}[name=\"...\"]` where the items have a name, "
                         f"else `{before} contains {{ ... }}` (an item holding those entries)"))
                break
    return out


# ---- W2012: grading the author cannot see --------------------------------------------------------------

_ORDER_OPS = ("<", "<=", ">", ">=", "==", "!=", "in")  # the tests of a number, judged by the values they accept


def _same(x: float, bound: float) -> bool:
    return abs(x - bound) <= 1e-9 * max(abs(bound), 1.0)


def _accepts(op: str, bound, x: float) -> bool:
    if op == "in":  # `in [0, 1]`: one of the listed numbers
        return any(_same(x, b) for b in bound)
    return {"<": x < bound, "<=": x <= bound, ">": x > bound, ">=": x >= bound, "==": _same(x, bound),
            "!=": not _same(x, bound)}[op]


def _bound(p) -> object:
    """The number (a list of them for `in`) a predicate compares its figure with; None where it is no number."""
    from ..runtime.state import number

    if p.op == "in":
        if not isinstance(p.value, list) or not p.value:
            return None
        members = [number(v) for v in p.value]
        return None if any(m is None for m in members) else members
    return number(p.value)


def _edges(bounds) -> set:
    return {b for _, bound in bounds for b in (bound if isinstance(bound, list) else [bound])}


def _shown_number(x: float, like: str) -> str:
    """`x` in the unit of the quantity `like` (`64Mi`), else as a number."""
    from ..runtime.state import number

    m = re.fullmatch(r"\s*[0-9.]+([A-Za-z]*)\s*", str(like))
    suffix = m.group(1) if m else ""
    unit = number(f"1{suffix}") if suffix else 1.0
    value = x / unit if unit else x
    return (f"{value:.0f}" if abs(value - round(value)) < 0.05 else f"{value:.1f}") + suffix


def grading_conflicts(item: Linted) -> list[Diagnostic]:
    """W2012: a statement of the scenario and a check the evaluator adds on the same object disagree.

    - A field predicate `<=`, `<`, `>=`, `>` or `==` on a figure that an `optimal` statement also grades: the
      proximity check passes only within the pass bar (10% of the optimum); a value the predicate accepts
      outside that band fails the verdict, and a value inside it that the predicate refuses fails it too.
    - A field the fault changed that the scenario never names, beside one it does name on the same object
      (a sibling under the same key, `resources.limits.memory` beside `resources.requests.memory`): the
      evaluator wants it back at exactly its healthy value, which an agent reading the scenario cannot know.
    - A predicate stating a least count of a workload's `replicas` that accepts a count below the floor the
      safeguards keep (the replicas it was deployed with): the safeguards fail where it says mitigated."""
    from ..backends.evaluator import PROXIMITY_THRESHOLD, _changes, _safeguards, dotted
    from ..runtime.state import number

    scenario = item.scenario
    predicates = [(i, p) for i, p in enumerate(scenario.mitigation.predicates if scenario.mitigation else [])
                  if p.kind == "field" and p.target is not None]
    if not predicates and not scenario.optimal:
        return []
    spans = item.source_map.predicates
    optimal_spans = [s.span for s in _statements(item.document, ast.Expect) for s in s.statements
                     if isinstance(s, ast.Optimal)]
    out: list[Diagnostic] = []
    band = 1 - PROXIMITY_THRESHOLD

    def key(ref: ir.ObjectRef) -> tuple:
        return (ref.kind, ref.namespace, ref.name)

    def keys(path) -> list[str]:
        return [seg for seg in path if isinstance(seg, str)]

    figures: dict[tuple, list] = {}  # the predicates on one figure, which a value must pass together
    for i, p in predicates:
        if p.op in _ORDER_OPS and _bound(p) is not None:
            figures.setdefault((key(p.target), tuple(keys(p.path))), []).append((i, p))
    for (target, path), group in figures.items():
        i, p = group[0]
        span = spans[i] if i < len(spans) else item.name_span
        bounds = [(q.op, _bound(q)) for _, q in group]

        def accepts(x: float) -> bool:
            return all(_accepts(op, bound, x) for op, bound in bounds)

        for j, o in enumerate(scenario.optimal):
            if key(o.target) != target or list(path)[-len(o.path):] != list(o.path)[-len(path):]:
                continue
            y = number(o.value)
            if not y:
                continue
            lo, hi = (1 - band) * y, (1 + band) * y
            counted = isinstance(o.value, int) and not isinstance(o.value, bool)  # replicas: whole numbers only
            edges = _edges(bounds)
            if counted:
                lo, hi = float(math.ceil(lo - 1e-9)), float(math.floor(hi + 1e-9))
                probes = sorted({0.0, lo, y, hi, 2 * hi + 1} | edges | {b - 1 for b in edges} | {b + 1 for b in edges})
            else:
                probes = sorted({0.0, lo, y, hi, 2 * hi} | edges | {b * (1 - 1e-6) for b in edges}
                                | {b * (1 + 1e-6) for b in edges})
            accepted_failing = [x for x in probes if accepts(x) and not lo - 1e-9 <= x <= hi + 1e-9]
            passing_refused = [x for x in (lo, y, hi) if not accepts(x)]
            if not accepted_failing and not passing_refused:
                continue
            text = " and ".join(f"{'.'.join(path)} {q.op} {q.value}" for _, q in group)
            said = []
            if accepted_failing:
                witness = next((x for x in accepted_failing if x in edges), accepted_failing[-1])
                said.append(f"it accepts {_shown_number(witness, p.value)}, which the proximity check fails")
            if passing_refused:
                said.append(f"it refuses {_shown_number(passing_refused[0], o.value)}, which the proximity check "
                            "passes")
            out.append(Diagnostic(
                "W2012", f"`mitigated when` says `{text}`, but the optimum {o.value} of the same figure passes only "
                f"from {_shown_number(lo, o.value)} to {_shown_number(hi, o.value)} (proximity >= "
                f"{PROXIMITY_THRESHOLD}): " + "; ".join(said), item.path, span, "disagrees with the optimum",
                notes=(Note("the optimum is here", optimal_spans[j]),) if j < len(optimal_spans) else (),
                help=f"state the band (`>= {_shown_number(lo, o.value)}` and `<= {_shown_number(hi, o.value)}`) or "
                     "leave the figure to the optimum; `itbench explain FILE.itb` lists every check"))
    floors = {(w["kind"], w["namespace"], w["name"]): w["min_replicas"] for w in _safeguards(scenario)[0]
              if w["kind"] != "Pod" or w.get("bare")}
    for (target, path), group in figures.items():
        floor = floors.get(target, 0)
        # judged by the counts the predicates accept together, whatever their spelling (`> 0`, `>= 1`,
        # `!= 0`, `in [1, 2, 3]` alike): one that only caps the count (accepting every count up to a bound,
        # `<= 2`) says nothing of a floor, which the safeguards then keep
        if not path or path[-1] != "replicas" or floor < 1:
            continue
        bounds = [(q.op, _bound(q)) for _, q in group]
        top = int(max([floor, *(math.floor(b) for b in _edges(bounds))])) + 2
        counts = [x for x in range(top + 1) if all(_accepts(op, bound, float(x)) for op, bound in bounds)]
        if counts and counts == list(range(len(counts))) and counts[-1] < top:
            continue  # a cap: 0 up to a bound
        below = [x for x in counts if x < floor]
        if not below:
            continue
        i = group[0][0]
        text = " and ".join(f"{'.'.join(path)} {q.op} {q.value}" for _, q in group)
        out.append(Diagnostic(
            "W2012", f"`mitigated when` says `{text}`, which accepts {below[-1]} replica{'s' * (below[-1] != 1)}, "
            f"but the evaluator's safeguards fail {target[0].lower()} `{target[2]}` below the {floor} "
            f"replica{'s' * (floor != 1)} it was deployed with", item.path, spans[i] if i < len(spans) else item.name_span,
            "accepts fewer replicas than the safeguards",
            help=f"state the floor (`{'.'.join(path)} >= {floor}`); `itbench explain FILE.itb` lists every check"))
    named = [(key(p.target), keys(p.path), spans[i] if i < len(spans) else item.name_span) for i, p in predicates]
    named += [(key(o.target), list(o.path), optimal_spans[j] if j < len(optimal_spans) else item.name_span)
              for j, o in enumerate(scenario.optimal)]
    fields = _changes(scenario)[0]
    for entry in fields:
        obj = entry["object"]
        target = (obj["kind"], obj["namespace"], obj["name"])
        for change in entry["changes"]:
            if change.get("governed_by") or change.get("accept") or "healthy" not in change:
                continue
            leaf = keys(change["path"])
            sibling = next(((path, span) for t, path, span in named
                            if t == target and path and path[0] in leaf and leaf[-len(path):] != list(path)), None)
            if sibling is None:
                continue
            path, span = sibling
            out.append(Diagnostic(
                "W2012", f"the evaluator also wants {dotted(change['path'])} of {obj['kind'].lower()} `{obj['name']}` "
                f"back at exactly {change['healthy']} (its healthy value, which the fault changed), a field the "
                f"scenario never names beside `{'.'.join(path)}`: a fix that sets it otherwise fails the verdict",
                item.path, span, "the evaluator grades a field beside this one",
                help="name that field too (a predicate or an optimum decides it instead), or check "
                     "`itbench explain FILE.itb`"))
    return out


# in the order their diagnostics are produced (rendering sorts them by position anyway)
# ---- W2013 root-cause groups of one object --------------------------------------------------------------


def shared_root_causes(item: Linted) -> list[Diagnostic]:
    """W2013: two root-cause groups that stand for one object (the same kind, namespace and name, or the
    pods of one workload): an answer that names the object is credited with both, and the object the
    second group was meant for (another fault's) is never graded."""
    scenario = item.scenario
    if scenario.domain != "sre" or not scenario.root_causes:
        return []
    from ..backends.evaluator import _groups

    first: dict[tuple, str] = {}
    out = []
    for group in _groups(scenario)["groups"]:
        if not group["root_cause"]:
            continue
        key = (group["kind"], group["namespace"], group["name"], group["owner"])
        if key not in first:
            first[key] = group["id"]
            continue
        what = f"{group['kind'].lower()} `{group['name'] or group['owner']}`"
        out.append(Diagnostic(
            "W2013", f"root-cause groups `{first[key]}` and `{group['id']}` both stand for {what}: one object "
            "counted as two root causes", item.path, item.name_span, "one object, two root causes",
            help="point each root-cause group at the object of its own fault (a fault's Schedule, its workload)"))
    return out


# ---- W2014 an install option the native bundle does not install ---------------------------------------

# Each install option the native bundle honours, with what in the bundle's manifests honours it: the
# autoscalers of `autoscaling.kubernetes.hpa`, declared in the topology. Any other option changes only what
# ITBench's installer deploys.
NATIVE_OPTIONS = {("autoscaling", "kubernetes", "hpa"): "HorizontalPodAutoscaler"}


def _option_paths(data, path=()):
    if isinstance(data, dict) and data:
        for key, value in data.items():
            yield from _option_paths(value, (*path, str(key)))
    else:
        yield path, data


def native_options(item: Linted) -> list[Diagnostic]:
    """W2014: a `use app` install option the native bundle does not install: it goes to ITBench's
    `scenario.yaml` only, so the bundle `itbench run` deploys, its evaluator and its states pose another
    incident than the export (`hpa = true` with no autoscaler in the topology: nothing scales natively, and
    no autoscaler safeguard grades the fix)."""
    options = item.scenario.topology.application_options
    if not options:
        return []
    from ..backends.manifests import topology_manifests

    kinds = {o.get("kind") for o in topology_manifests(item.scenario.topology, provided=True)}
    use = next((s for s in item.document.statements if isinstance(s, ast.UseApp)), None)
    block = next((e for e in (use.entries or ()) if isinstance(e, ast.Block) and e.key == "options"), None) \
        if use is not None else None
    span = block.key_span if block is not None else item.name_span
    out = []
    for path, value in _option_paths(options):
        honoured = NATIVE_OPTIONS.get(path)
        if value in (False, None) or (honoured is not None and honoured in kinds):
            continue
        what = f"no {honoured} in the topology" if honoured else "the native bundle has nothing that installs it"
        out.append(Diagnostic(
            "W2014", f"install option `{'.'.join(path)} = {str(value).lower() if isinstance(value, bool) else value}` "
            f"reaches only the ITBench export: {what}", item.path, span, "not installed natively",
            help="declare in `topology` what the option makes (an autoscaler for `hpa`), or allow it "
                 "(`metadata { lint_allow = [\"W2014\"] }`) where the native run need not have it"))
    return out


SINGLE_FILE_RULES = (unused_objects, unobservable_faults, missing_solution, duplicate_mechanisms,
                     placeholder_description, complexity_mismatch, positional_predicates, grading_conflicts,
                     shared_root_causes, native_options)
