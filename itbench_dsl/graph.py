"""Pictures of a scenario: its topology with the fault, the root cause and the propagation drawn in.

Pure functions from the IR to text: `build(scenario, focus)` lays out what is drawn (a `Graph`),
`mermaid(graph)` and `dot(graph)` write it. One node stands for a component (a workload with its
pods, its services and its autoscaler); objects outside a component (a Chaos Mesh schedule, a
ConfigMap, a service selecting several workloads, a CISO gap object) get a node of their own when the
scenario names them. Dependency edges are grey, the propagation chain is red and numbered in order.

Big applications stay readable through the focus: `auto` (the default) draws every component of a
topology of at most `AUTO_LIMIT` components, and otherwise the components within one dependency hop
of the fault targets and root causes, plus everything the scenario names. A number N keeps the
components within N hops; `all` keeps everything.
"""

from __future__ import annotations

import fnmatch
import re
import unicodedata
from dataclasses import dataclass, field

from . import ir
from .topology import pod_names

AUTO_LIMIT = 12  # `--focus auto`: draw everything up to this many components, else 1 hop
AUTO_HOPS = 1
WORKLOAD_KINDS = ("Deployment", "StatefulSet", "Job", "CronJob")
# the language's keyword for a Kubernetes kind, to write references as they are written in .itb files
KEYWORDS = {"Namespace": "namespace", "Deployment": "deployment", "StatefulSet": "statefulset", "Service": "service",
            "ConfigMap": "configmap", "Secret": "secret", "ServiceAccount": "serviceaccount",
            "HorizontalPodAutoscaler": "hpa", "Pod": "pod", "Gateway": "gateway", "Job": "job", "CronJob": "cronjob"}

# role -> (fill, stroke, stroke width, text colour); the first role of a node in ROLE_ORDER decides its style
STYLES = {
    "root": ("#ffcdd2", "#c62828", 3, "#000000"),
    "gap": ("#ffcdd2", "#c62828", 3, "#000000"),
    "fault": ("#ffe0b2", "#e65100", 3, "#000000"),
    "alert": ("#fff9c4", "#f9a825", 2, "#000000"),
    "compliant": ("#dcedc8", "#558b2f", 2, "#000000"),
    "optimal": ("#e1f5fe", "#0277bd", 2, "#000000"),
    "involved": ("#ffffff", "#c62828", 2, "#000000"),
    "plain": ("#f5f5f5", "#9e9e9e", 1, "#424242"),
}
ROLE_ORDER = ("root", "gap", "fault", "alert", "compliant", "optimal", "involved")
LEGEND = (("root", "red", "root cause"), ("gap", "red", "policy gap"), ("fault", "orange", "fault target"),
          ("alert", "yellow", "alert"), ("compliant", "green", "compliant"), ("optimal", "blue", "optimum"))
PROPAGATION_COLOR = "#c62828"
DEPENDENCY_COLOR = "#9e9e9e"


def keyword(kind: str) -> str:
    return KEYWORDS.get(kind, kind.lower())


def ref_text(ref: ir.ObjectRef) -> str:
    """A reference as the language writes it: `deployment "checkout"`."""
    return f'{keyword(ref.kind)} "{ref.name}"'


@dataclass
class Node:
    key: str  # stable identity: "c:<namespace>/<workload>" for a component, "o:<ObjectRef.key()>" otherwise
    title: str
    kind: str  # the line under the title: "Deployment + Service", "Schedule", ...
    namespace: str | None
    component: bool
    roles: list[tuple[str, str]] = field(default_factory=list)  # (role, label line or "")
    id: str = ""  # a Mermaid-safe identifier, assigned once the node set is known

    def add(self, role: str, text: str = "") -> None:
        if (role, text) not in self.roles:
            self.roles.append((role, text))

    @property
    def style(self) -> str:
        names = {r for r, _ in self.roles}
        return next((r for r in ROLE_ORDER if r in names), "plain")

    @property
    def lines(self) -> list[str]:
        return [self.kind] + [text for _, text in self.roles if text]


@dataclass
class Edge:
    source: str  # node keys
    target: str
    kind: str  # dependency | propagation | selects | uses
    label: str = ""
    indirect: bool = False  # a propagation between components that meet only through others


@dataclass
class Graph:
    name: str
    nodes: list[Node]  # in drawing order
    edges: list[Edge]
    shown_components: int
    total_components: int
    focus: str  # "all" or the number of hops, as text

    def node(self, key: str) -> Node:
        return next(n for n in self.nodes if n.key == key)

    @property
    def note(self) -> str:
        """What the focus left out, in words (empty when everything is drawn)."""
        hidden = self.total_components - self.shown_components
        if hidden <= 0:
            return ""
        drawn = f"{self.shown_components} of {self.total_components} components drawn"
        if self.focus == "0":
            return f"{drawn}: the objects the scenario names (--focus all draws all)"
        hops = f"{self.focus} hop{'s' * (self.focus != '1')}"
        return f"{drawn}: those within {hops} of the fault and root cause, and every object the scenario names " \
               "(--focus all draws all)"


# ---- what is drawn ---------------------------------------------------------------------------------------


class _Builder:
    def __init__(self, scenario: ir.Scenario) -> None:
        self.scenario = scenario
        topo = scenario.topology
        self.workloads = {(w.namespace, w.name): w for w in topo.workloads}
        self.by_name: dict[str, ir.Workload] = {}
        for w in topo.workloads:
            self.by_name.setdefault(w.name, w)
        self.nodes: dict[str, Node] = {}
        # services: a component's when they select one workload (or several, one of them their namesake)
        self.service_home: dict[tuple[str, str], str | None] = {}
        self.service_selects: dict[tuple[str, str], list[str]] = {}
        component_services: dict[str, list[str]] = {}
        for s in topo.services:
            selected = [w for w in topo.workloads if w.namespace == s.namespace and s.selector
                        and all(w.labels.get(k) == v for k, v in s.selector.items())]
            namesake = [w for w in selected if w.name == s.name]
            home = selected[0] if len(selected) == 1 else namesake[0] if namesake else None
            self.service_home[(s.namespace, s.name)] = self._ckey(home) if home else None
            self.service_selects[(s.namespace, s.name)] = [self._ckey(w) for w in selected]
            if home:
                component_services.setdefault(self._ckey(home), []).append(s.name)
        hpas = {self._ckey_of(a.target.namespace or a.namespace, a.target.name) for a in topo.autoscalers}
        self.hpa_home = {(a.namespace, a.name): self._ckey_of(a.target.namespace or a.namespace, a.target.name)
                         for a in topo.autoscalers}
        for w in topo.workloads:
            key = self._ckey(w)
            services = component_services.get(key, [])
            kind = w.kind
            if services == [w.name]:
                kind += " + Service"
            elif 0 < len(services) <= 2:
                kind += " + service" + "s" * (len(services) > 1) + " " + ", ".join(services)
            elif services:
                kind += f" + {len(services)} services"
            if key in hpas:
                kind += " + HPA"
            self.nodes[key] = Node(key, w.name, kind, w.namespace, True)
        for s in topo.services:
            if self.service_home[(s.namespace, s.name)] is None:
                key = "o:" + ir.ObjectRef("v1", "Service", s.namespace, s.name).key()
                self.nodes[key] = Node(key, s.name, "Service", s.namespace, False)
        self.components = list(self.nodes)  # every node so far is part of the topology's drawing
        self.named: list[str] = []  # nodes the scenario names, always drawn

    @staticmethod
    def _ckey(w: ir.Workload) -> str:
        return f"c:{w.namespace}/{w.name}"

    def _ckey_of(self, namespace: str, name: str) -> str | None:
        w = self.workloads.get((namespace, name))
        return self._ckey(w) if w else None

    def locate(self, ref: ir.ObjectRef) -> Node:
        """The node that stands for `ref`, made on first use."""
        key = None
        if ref.kind in WORKLOAD_KINDS:
            key = self._ckey_of(ref.namespace or "", ref.name)
        elif ref.kind == "Pod":
            owners = [w for w in self.workloads.values() if w.namespace == ref.namespace and
                      any(fnmatch.fnmatchcase(pod, ref.name) for pod in pod_names(w))]
            # `frontend-*` also matches frontend-proxy's pods: the workload it names outright comes first
            exact = [w for w in owners if ref.name in (f"{w.name}-*", f"{w.name}-?*", w.name)]
            if owners:
                key = self._ckey(exact[0] if exact else max(owners, key=lambda w: len(w.name)))
        elif ref.kind == "Service":
            if (ref.namespace or "", ref.name) in self.service_home:
                key = self.service_home[(ref.namespace or "", ref.name)]
            else:  # a service the topology does not declare stands for its namesake workload, if any
                key = self._ckey_of(ref.namespace or "", ref.name)
        elif ref.kind == "HorizontalPodAutoscaler":
            key = self.hpa_home.get((ref.namespace or "", ref.name))
        if key is None:
            key = "o:" + ref.key()
        node = self.nodes.get(key)
        if node is None:
            node = self.nodes[key] = Node(key, ref.name, ref.kind, ref.namespace, False)
        if key not in self.named:
            self.named.append(key)
        return node

    @staticmethod
    def qualifier(ref: ir.ObjectRef, node: Node) -> str:
        """` (service cart)` when the node's title alone does not say which object is meant."""
        if node.component and ref.kind in WORKLOAD_KINDS:
            return ""
        if not node.component and ref.name == node.title and ref.kind == node.kind:
            return ""
        return f" ({keyword(ref.kind)} {ref.name})"

    def roles(self) -> None:
        s = self.scenario
        for injection in s.injections():
            node = self.locate(injection.target)
            node.add("fault", f"fault: {injection.fault}" + self.qualifier(injection.target, node))
            for side in injection.side_objects:
                other = self.locate(side)
                if other is not node:  # a side object inside the target's component says nothing new
                    other.add("fault", f"changed by {injection.fault}" + self.qualifier(side, other))
        control = not s.injections() and s.compliance is None  # no fault: the ground truth names no cause
        for ref in s.root_causes:
            node = self.locate(ref)
            if control:
                node.add("involved", "named by the ground truth (no fault)" + self.qualifier(ref, node))
            else:
                node.add("root", "root cause" + self.qualifier(ref, node))
        for alert in s.alerts:
            node = self.locate(alert.target)
            # an alert on a component's service or pods is the component's alert
            inside = node.component and alert.target.kind in WORKLOAD_KINDS + ("Service", "Pod", "HorizontalPodAutoscaler")
            node.add("alert", f"alert: {alert.name}" + ("" if inside else self.qualifier(alert.target, node)))
        for opt in s.optimal:
            node = self.locate(opt.target)
            node.add("optimal", f"optimal: {'.'.join(opt.path)} = {_value(opt.value)}")
        if s.compliance is not None:
            for ref in s.compliance.gaps:
                node = self.locate(ref)
                node.add("gap", "policy gap" + self.qualifier(ref, node))
            for ref in s.compliance.compliant:
                node = self.locate(ref)
                node.add("compliant", "compliant" + self.qualifier(ref, node))
        for edge in s.propagations:
            self.locate(edge.source).add("involved")
            self.locate(edge.target).add("involved")
        if s.mitigation is not None:
            for predicate in s.mitigation.predicates:
                if predicate.target is not None:
                    self.locate(predicate.target)

    def adjacency(self) -> dict[str, list[str]]:
        links: dict[str, list[str]] = {}

        def link(a: str | None, b: str | None) -> None:
            if a and b and a != b:
                links.setdefault(a, []).append(b)
                links.setdefault(b, []).append(a)

        for a, b in self.dependency_pairs():
            link(a, b)
        for (namespace, name), selected in self.service_selects.items():
            if self.service_home[(namespace, name)] is None:
                for key in selected:
                    link("o:" + ir.ObjectRef("v1", "Service", namespace, name).key(), key)
        for a, b in self.uses():
            link(a, b)
        return links

    def dependency_pairs(self) -> list[tuple[str, str]]:
        pairs = []
        for caller, callee in self.scenario.topology.edges:
            a, b = self.by_name.get(caller), self.by_name.get(callee)
            if a and b and (self._ckey(a), self._ckey(b)) not in pairs:
                pairs.append((self._ckey(a), self._ckey(b)))
        return pairs

    def uses(self) -> list[tuple[str, str]]:
        """workload -> the ConfigMaps and Secrets it mounts or reads its environment from."""
        pairs = []
        for w in self.scenario.topology.workloads:
            for volume in w.volumes:
                if isinstance(volume.get("configMap"), dict):
                    pairs.append((w, ir.ObjectRef("v1", "ConfigMap", w.namespace, str(volume["configMap"].get("name")))))
                if isinstance(volume.get("secret"), dict):
                    pairs.append((w, ir.ObjectRef("v1", "Secret", w.namespace, str(volume["secret"].get("secretName")))))
            for container in w.init_containers + w.containers:
                for env in container.env:
                    source = env.value_from or {}
                    if isinstance(source.get("configMapKeyRef"), dict):
                        pairs.append((w, ir.ObjectRef("v1", "ConfigMap", w.namespace,
                                                      str(source["configMapKeyRef"].get("name")))))
                    if isinstance(source.get("secretKeyRef"), dict):
                        pairs.append((w, ir.ObjectRef("v1", "Secret", w.namespace,
                                                      str(source["secretKeyRef"].get("name")))))
        result = []
        for w, ref in pairs:
            pair = (self._ckey(w), "o:" + ref.key())
            if pair not in result:
                result.append(pair)
        return result


def parse_focus(text: str) -> str:
    """`auto`, `all` or a number of hops; raises ValueError otherwise."""
    text = text.strip().lower()
    if text in ("auto", "all"):
        return text
    if text.isdigit() and int(text) <= 1000:
        return str(int(text))
    raise ValueError(f"--focus takes auto, all or a number of hops, not `{text}`")


def build(scenario: ir.Scenario, focus: str = "auto") -> Graph:
    """What to draw for `scenario`: the nodes kept by the focus and the edges between them."""
    focus = parse_focus(focus)
    b = _Builder(scenario)
    b.roles()
    total = len(b.components)
    if focus == "auto":
        focus = "all" if total <= AUTO_LIMIT else str(AUTO_HOPS)
    shown = set(b.named)
    if focus == "all":
        shown |= set(b.components)
    else:
        seeds = [k for k in b.named if any(r in ("fault", "root", "gap", "compliant") for r, _ in b.nodes[k].roles)]
        links = b.adjacency()
        # a ConfigMap or Secret at fault stands with the workloads that read it
        seeds += [a for a, c in b.uses() if c in seeds and a not in seeds]
        frontier = seeds or list(b.named)
        reached = set(frontier)
        for _ in range(int(focus)):
            frontier = [n for k in frontier for n in links.get(k, []) if n not in reached]
            reached |= set(frontier)
        shown |= reached
    shown = {k for k in shown if k in b.nodes}  # a ConfigMap reached through a workload is drawn only when named
    order = [k for k in b.components if k in shown] + [k for k in b.named if k not in b.components]
    nodes = [b.nodes[k] for k in order]
    _assign_ids(nodes)

    edges: list[Edge] = []
    for a, c in b.dependency_pairs():
        if a in shown and c in shown:
            edges.append(Edge(a, c, "dependency"))
    for (namespace, name), selected in b.service_selects.items():
        if b.service_home[(namespace, name)] is None:
            key = "o:" + ir.ObjectRef("v1", "Service", namespace, name).key()
            edges += [Edge(key, k, "selects") for k in selected if key in shown and k in shown]
    for a, c in b.uses():
        if a in shown and c in shown:
            edges.append(Edge(a, c, "uses"))
    chain: list[tuple[str, str]] = []
    indirect: set[tuple[str, str]] = set()
    for edge in scenario.propagations:
        pair = (b.locate(edge.source).key, b.locate(edge.target).key)
        if pair[0] != pair[1] and pair not in chain:  # steps inside one component are not drawn
            chain.append(pair)
            if edge.indirect:
                indirect.add(pair)
    edges += [Edge(a, c, "propagation", str(i), (a, c) in indirect) for i, (a, c) in enumerate(chain, 1)]
    shown_components = sum(1 for k in b.components if k in shown)
    return Graph(scenario.name, nodes, edges, shown_components, total, focus)


def _assign_ids(nodes: list[Node]) -> None:
    used: set[str] = set()
    for node in nodes:
        prefix = "" if node.component else keyword(node.kind) + "_"
        base = "n_" + re.sub(r"[^A-Za-z0-9]+", "_", prefix + node.title).strip("_").lower()
        candidate, i = base, 2
        while candidate in used:
            candidate, i = f"{base}_{i}", i + 1
        used.add(candidate)
        node.id = candidate


def _value(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return value
    return str(value)


# ---- Mermaid ---------------------------------------------------------------------------------------------

_MERMAID_SAFE = re.compile(r"[A-Za-z0-9 .,:/*+=@()_'-]")


def one_line(text) -> str:
    """Label text: control characters (newlines among them) become spaces, runs of space one."""
    return " ".join("".join(" " if unicodedata.category(c) in ("Cc", "Cs") else c for c in str(text)).split())


def mermaid_text(text: str) -> str:
    """Text inside a quoted Mermaid label: anything but plain characters becomes an entity code (`#34;`)."""
    text = one_line(text)
    return "".join(c if _MERMAID_SAFE.fullmatch(c) else f"#{ord(c)};" for c in text)


def _subgraph_order(nodes: list[Node]) -> list[str | None]:
    spaces: list[str | None] = []
    for node in nodes:
        if node.namespace not in spaces:
            spaces.append(node.namespace)
    return [s for s in spaces if s is not None] + ([None] if None in spaces else [])


def mermaid(graph: Graph) -> str:
    """A Mermaid flowchart (the subset GitHub renders: subgraphs, classDef, linkStyle, <br> in labels)."""
    lines = ["flowchart LR", f"  %% scenario {mermaid_text(graph.name)}"]
    if graph.note:
        lines.append(f"  %% {mermaid_text(graph.note)}")
    spaces = _subgraph_order(graph.nodes)
    # One namespace: a frame around it (with its direction said again, which Mermaid would turn otherwise).
    # Several: no frames, since Mermaid lays out linked subgraphs poorly; a node outside the main namespace
    # says its own.
    framed = spaces[0] if len(spaces) == 1 and spaces[0] is not None else None
    counts = {ns: sum(1 for n in graph.nodes if n.namespace == ns) for ns in spaces if ns is not None}
    main = max(counts, key=lambda ns: counts[ns]) if counts else None  # the first of the most frequent
    indent = "  "
    if framed is not None:
        lines += [f'  subgraph ns["namespace {mermaid_text(framed)}"]', "    direction LR"]
        indent = "    "
    elif main is not None:
        lines.append(f"  %% namespace {mermaid_text(main)}")
    for namespace in spaces:
        for node in (n for n in graph.nodes if n.namespace == namespace):
            kind = node.kind + (f" in {namespace}" if framed is None and namespace not in (None, main) else "")
            rows = [f"<b>{mermaid_text(node.title)}</b>", mermaid_text(kind)] + [mermaid_text(x) for x in node.lines[1:]]
            open_, close = ('["', '"]') if node.component else ('("', '")')
            lines.append(f"{indent}{node.id}{open_}{'<br>'.join(rows)}{close}")
    if framed is not None:
        lines.append("  end")
    ids = {n.key: n.id for n in graph.nodes}
    arrows = {"dependency": "-->", "propagation": "==>", "selects": "-.->", "uses": "-.->"}
    propagation_links = []
    for index, edge in enumerate(graph.edges):
        label = f"|{mermaid_text(edge.label)}|" if edge.label else ""
        arrow = "-.->" if edge.indirect else arrows[edge.kind]  # dotted: through other components
        lines.append(f"  {ids[edge.source]} {arrow}{label} {ids[edge.target]}")
        if edge.kind == "propagation":
            propagation_links.append(str(index))
    for role in ROLE_ORDER + ("plain",):
        members = [n.id for n in graph.nodes if n.style == role]
        if members:
            fill, stroke, width, color = STYLES[role]
            lines.append(f"  classDef {role} fill:{fill},stroke:{stroke},stroke-width:{width}px,color:{color}")
            lines.append(f"  class {','.join(members)} {role}")
    if framed is not None:
        lines.append("  style ns fill:#fafafa,stroke:#bdbdbd,stroke-dasharray:4 3,color:#616161")
    if graph.edges:
        lines.append(f"  linkStyle default stroke:{DEPENDENCY_COLOR},stroke-width:1px")
    if propagation_links:
        lines.append(f"  linkStyle {','.join(propagation_links)} stroke:{PROPAGATION_COLOR},stroke-width:3px,"
                     f"color:{PROPAGATION_COLOR}")
    return "\n".join(lines) + "\n"


# ---- Graphviz DOT ----------------------------------------------------------------------------------------


def dot_id(text: str) -> str:
    """A quoted DOT identifier."""
    return '"' + one_line(text).replace("\\", "\\\\").replace('"', '\\"') + '"'


def html_text(text: str) -> str:
    """Text inside a DOT HTML-like label."""
    text = one_line(text)
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")


def _dot_name(node: Node) -> str:
    return node.key.split(":", 1)[1]


def dot(graph: Graph) -> str:
    """Graphviz DOT: a cluster per namespace, HTML labels, the propagation in red and numbered."""
    title = f"scenario {graph.name}" + (f"\n{graph.note}" if graph.note else "")
    styles = {n.style for n in graph.nodes}
    legend = ", ".join(f"{colour}: {meaning}" for style, colour, meaning in LEGEND if style in styles)
    if any(e.kind == "propagation" for e in graph.edges):
        legend += "; red arrows: the propagation, in order"
        if any(e.indirect for e in graph.edges):
            legend += " (dashed: through other components)"
    label = "<br/>".join([f"<b>{html_text(title.splitlines()[0])}</b>"] + [html_text(x) for x in title.splitlines()[1:]]
                         + ([f'<font point-size="10">{html_text(legend)}</font>'] if legend else []))
    lines = [
        f"digraph {dot_id(graph.name)} {{",
        f'  graph [rankdir=LR, fontname="Helvetica", fontsize=12, labelloc=t, label=<{label}>, nodesep=0.3, ranksep=0.6];',
        '  node [shape=box, style="rounded,filled", fontname="Helvetica", fontsize=11, margin="0.15,0.06"];',
        f'  edge [fontname="Helvetica", fontsize=10, color="{DEPENDENCY_COLOR}", arrowsize=0.7];',
    ]
    for namespace in _subgraph_order(graph.nodes):
        members = [n for n in graph.nodes if n.namespace == namespace]
        indent = "  "
        if namespace is not None:
            lines.append(f"  subgraph {dot_id('cluster_' + namespace)} {{")
            lines.append(f'    label={dot_id("namespace " + namespace)}; style="rounded,dashed"; '
                         f'color="#bdbdbd"; fontcolor="#616161";')
            indent = "    "
        for node in members:
            fill, stroke, width, color = STYLES[node.style]
            rows = [f"<b>{html_text(node.title)}</b>", f'<font point-size="9">{html_text(node.kind)}</font>']
            for role, text in node.roles:
                if text:
                    tint = STYLES[role][1] if role != "alert" else "#8d6e00"
                    rows.append(f'<font color="{tint}">{html_text(text)}</font>')
            # components are rounded boxes, other objects square ones (ConfigMaps and Secrets: notes)
            shape = "" if node.component else ', shape=note, style="filled"' if node.kind in ("ConfigMap", "Secret") \
                else ', style="filled"'
            lines.append(f'{indent}{dot_id(_dot_name(node))} [id={dot_id(node.id)}, label=<{"<br/>".join(rows)}>, '
                         f'fillcolor="{fill}", color="{stroke}", penwidth={width}, fontcolor="{color}"{shape}];')
        if namespace is not None:
            lines.append("  }")
    dependencies = {(e.source, e.target) for e in graph.edges if e.kind == "dependency"}
    names = {n.key: _dot_name(n) for n in graph.nodes}
    for edge in graph.edges:
        a, b = dot_id(names[edge.source]), dot_id(names[edge.target])
        if edge.kind == "dependency":
            lines.append(f"  {a} -> {b};")
        elif edge.kind in ("selects", "uses"):
            lines.append(f"  {a} -> {b} [style=dashed, arrowhead=empty];")
        else:
            # drawn over a dependency edge: let the dependencies decide the layout
            constraint = ", constraint=false" if (edge.source, edge.target) in dependencies or (
                edge.target, edge.source) in dependencies else ""
            dashed = ", style=dashed" if edge.indirect else ""  # through other components
            lines.append(f'  {a} -> {b} [color="{PROPAGATION_COLOR}", penwidth=2.5, fontcolor="{PROPAGATION_COLOR}", '
                         f"label=<<b>{html_text(edge.label)}</b>>{constraint}{dashed}];")
    lines.append("}")
    return "\n".join(lines) + "\n"


FORMATS = ("mermaid", "dot", "svg")


def render(scenario: ir.Scenario, fmt: str, focus: str = "auto") -> str:
    """The text of `fmt` (mermaid or dot; svg is dot run through Graphviz, see commands/graph.py)."""
    graph = build(scenario, focus)
    return mermaid(graph) if fmt == "mermaid" else dot(graph)
