"""`itbench graph`: Mermaid and DOT pictures against reviewed golden files, their structure, escaping and
the SVG path through Graphviz (skipped when `dot` is not installed; its absence is tested too).

Golden files: tests/cases/graph/<case>/input.itb and expected.mmd, expected.dot, expected-focus-0.mmd.
Rewrite them after a reviewed change with `python3 tests/backends/test_graph.py --update` (prints the diffs).
"""

from __future__ import annotations

import difflib
import html
import os
import re
import shutil
import sys
import unicodedata
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

HERE = Path(__file__).resolve().parents[1]
REPO = HERE.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from itbench_dsl import graph  # noqa: E402
from itbench_dsl.compiler import compile_source  # noqa: E402
from itbench_dsl.diagnostics import Diagnostics  # noqa: E402

CASES = HERE / "cases" / "graph"
SCENARIOS = REPO / "scenarios"
# golden file -> (format, focus)
GOLDEN = {"expected.mmd": ("mermaid", "auto"), "expected.dot": ("dot", "auto"), "expected-focus-0.mmd": ("mermaid", "0")}
HAS_DOT = shutil.which("dot") is not None


def compile_file(path: Path):
    diags = Diagnostics()
    result = compile_source(path.read_bytes(), str(path), diags)
    assert result.scenario is not None and not diags.has_errors, [d.message for d in diags.items]
    return result.scenario


def case_names() -> list[str]:
    return sorted(p.parent.name for p in CASES.glob("*/input.itb"))


# ---- a strict grammar of the Mermaid we write: every line is one of these -----------------------------------

_ID = r"[a-z][a-z0-9_]*"
_EDGE = rf"  ({_ID}) (?:-->|==>\|[0-9]+\||-\.->\|[0-9]+\||-\.->) ({_ID})"
_LABEL = r'(?:<b>[^"<>\[\]{}|\n]*</b>)?(?:<br>[^"<>\[\]{}|\n]*)*'  # our own tags, escaped text between them
MERMAID_LINE = [re.compile(p) for p in (
    r"flowchart LR",
    r"  %% [^\n]*",
    rf'  subgraph {_ID}\["namespace [^"<>\[\]{{}}|]+"\]',
    r"    direction LR",
    r"  end",
    rf'(?:  |    ){_ID}\["{_LABEL}"\]',
    rf'(?:  |    ){_ID}\("{_LABEL}"\)',
    _EDGE,
    r"  classDef [a-z]+ fill:#[0-9a-f]{6},stroke:#[0-9a-f]{6},stroke-width:[0-9]+px,color:#[0-9a-f]{6}",
    rf"  class {_ID}(?:,{_ID})* [a-z]+",
    rf"  style {_ID} [a-z:#0-9,\- ]+",
    r"  linkStyle (?:default|[0-9]+(?:,[0-9]+)*) [a-z:#0-9,\-]+",
)]


def check_mermaid(text: str) -> None:
    assert text.endswith("\n") and "\r" not in text
    lines = text.splitlines()
    assert lines[0] == "flowchart LR"
    for line in lines:
        assert any(p.fullmatch(line) for p in MERMAID_LINE), f"not in the Mermaid subset: {line!r}"
    assert sum(line.lstrip().startswith("subgraph ") for line in lines) == lines.count("  end")
    declared = {m.group(1) for line in lines if (m := re.match(rf"\s+({_ID})[\[(]\"", line))}
    for line in lines:
        m = re.fullmatch(_EDGE, line)
        if m:
            assert {m.group(1), m.group(2)} <= declared, line
    links = sum(1 for line in lines if re.fullmatch(_EDGE, line))
    for line in lines:
        if line.startswith("  linkStyle ") and not line.startswith("  linkStyle default"):
            assert all(int(i) < links for i in line.split()[1].split(",")), line


# ---- a small DOT reader: statements, quoted ids, HTML labels -----------------------------------------------

_DOT_TOKEN = re.compile(r'\s*(?:(?P<str>"(?:[^"\\]|\\.)*")|(?P<html><)|(?P<punct>->|[{}\[\];=,])|(?P<id>[A-Za-z0-9_.#-]+))')


def _html_end(text: str, start: int) -> int:
    depth, i = 0, start
    while i < len(text):
        if text[i] == "<":
            depth += 1
        elif text[i] == ">":
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    raise AssertionError("unbalanced HTML label")


def dot_tokens(text: str) -> list[tuple[str, str]]:
    tokens, i = [], 0
    while i < len(text):
        if text[i:].strip() == "":
            break
        m = _DOT_TOKEN.match(text, i)
        assert m, f"DOT cannot be read at {text[i:i + 40]!r}"
        if m.group("html"):
            start = m.start("html")
            end = _html_end(text, start)
            label = text[start + 1:end - 1]
            ET.fromstring(f"<x>{label}</x>")  # the label is well-formed (escaped text, balanced tags)
            tokens.append(("html", label))
            i = end
            continue
        kind = next(k for k in ("str", "id", "punct") if m.group(k))
        tokens.append((kind, m.group(kind)))
        i = m.end()
    return tokens


def dot_structure(text: str) -> tuple[list[str], list[tuple[str, str, dict]]]:
    """The node names and edges (source, target, attributes) of our DOT output; asserts it reads as DOT."""
    tokens = dot_tokens(text)
    assert tokens[0] == ("id", "digraph") and tokens[1][0] == "str" and tokens[2] == ("punct", "{")
    assert tokens[-1] == ("punct", "}")
    depth = 0
    for _, value in tokens:
        depth += {"{": 1, "}": -1}.get(value, 0) if _ == "punct" else 0
        assert depth >= 0
    assert depth == 0
    nodes, edges = [], []
    i = 3
    while i < len(tokens) - 1:
        kind, value = tokens[i]
        if kind == "str" and tokens[i + 1] == ("punct", "->"):
            source, target = value, tokens[i + 2][1]
            attrs, i = _attributes(tokens, i + 3)
            edges.append((_unquote(source), _unquote(target), attrs))
        elif kind == "str" and tokens[i + 1] == ("punct", "["):
            attrs, i = _attributes(tokens, i + 1)
            nodes.append(_unquote(value))
        else:
            i += 1
    return nodes, edges


def _attributes(tokens, i) -> tuple[dict, int]:
    attrs: dict = {}
    if tokens[i] == ("punct", "["):
        i += 1
        while tokens[i] != ("punct", "]"):
            key, eq, value = tokens[i], tokens[i + 1], tokens[i + 2]
            assert key[0] == "id" and eq == ("punct", "="), tokens[i:i + 3]
            attrs[key[1]] = value[1]
            i += 3
            if tokens[i] == ("punct", ","):
                i += 1
        i += 1
    assert tokens[i] == ("punct", ";"), tokens[i]
    return attrs, i + 1


def _unquote(text: str) -> str:
    return re.sub(r"\\(.)", r"\1", text[1:-1])


# ---- golden files --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("case", case_names())
def test_golden_pictures(case: str):
    scenario = compile_file(CASES / case / "input.itb")
    for name, (fmt, focus) in GOLDEN.items():
        expected = CASES / case / name
        if expected.exists():
            assert graph.render(scenario, fmt, focus) == expected.read_text(encoding="utf-8"), (
                f"{expected} differs: review, then `python3 tests/backends/test_graph.py --update`")
    assert (CASES / case / "expected.mmd").exists() and (CASES / case / "expected.dot").exists()


@pytest.mark.parametrize("case", case_names())
def test_golden_pictures_are_well_formed(case: str):
    for name, (fmt, _) in GOLDEN.items():
        path = CASES / case / name
        if path.exists():
            text = path.read_text(encoding="utf-8")
            if fmt == "mermaid":
                check_mermaid(text)
            else:
                dot_structure(text)


# ---- what the picture says -------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def shop():
    return compile_file(CASES / "inline-shop" / "input.itb")


@pytest.fixture(scope="module")
def chaos():
    return compile_file(CASES / "inline-chaos" / "input.itb")


def mermaid_nodes(text: str) -> dict[str, str]:
    return {m.group(1): m.group(2) for m in re.finditer(r'^\s+([a-z][a-z0-9_]*)[\[(]"(.*)"[\])]$', text, re.M)}


def mermaid_classes(text: str) -> dict[str, str]:
    classes = {}
    for m in re.finditer(r"^  class (\S+) (\w+)$", text, re.M):
        for node in m.group(1).split(","):
            classes[node] = m.group(2)
    return classes


def propagation_links(text: str) -> list[tuple[str, str, int]]:
    return [(a, b, int(n)) for a, n, b in re.findall(r"^  (\S+) (?:==>|-\.->)\|(\d+)\| (\S+)$", text, re.M)]


def test_mermaid_highlights_fault_target_root_cause_and_alerts(shop):
    text = graph.render(shop, "mermaid")
    nodes, classes = mermaid_nodes(text), mermaid_classes(text)
    assert "fault: nonexistent_image" in nodes["n_cart"] and "root cause" in nodes["n_cart"]
    assert classes["n_cart"] == "root"  # the root cause outranks the fault target
    assert classes["n_frontend"] == classes["n_checkout"] == "alert"
    assert classes["n_redis"] == classes["n_email"] == "plain"
    assert "alert: HighRequestErrorRate" in nodes["n_checkout"]


def test_propagation_is_drawn_between_components_in_order(shop, chaos):
    # cart -> pod cart-* -> service cart -> service checkout -> service frontend: the first steps stay in cart
    assert propagation_links(graph.render(shop, "mermaid")) == [("n_cart", "n_checkout", 1), ("n_checkout", "n_frontend", 2)]
    links = propagation_links(graph.render(chaos, "mermaid"))
    assert links == [("n_schedule_reviews_v2_delay", "n_reviews_v2", 1), ("n_reviews_v2", "n_productpage", 2)]
    text = graph.render(chaos, "mermaid")
    edges = [line for line in text.splitlines() if re.fullmatch(_EDGE, line)]
    styled = next(line for line in text.splitlines() if line.startswith("  linkStyle ") and "default" not in line)
    indexes = [int(i) for i in styled.split()[1].split(",")]
    assert [edges[i] for i in indexes] == [line for line in edges if "==>" in line]
    assert "#c62828" in styled


def test_dot_highlights_and_orders_the_propagation(shop):
    text = graph.render(shop, "dot")
    nodes, edges = dot_structure(text)
    assert nodes == ["shop/frontend", "shop/cart", "shop/checkout", "shop/redis", "shop/email"]
    attrs = {m.group(1): m.group(2) for m in re.finditer(r'^\s+"([^"]+)" \[id=(.*)\];$', text, re.M)}
    assert f'fillcolor="{graph.STYLES["root"][0]}"' in attrs["shop/cart"]
    assert "fault: nonexistent_image" in attrs["shop/cart"] and "root cause" in attrs["shop/cart"]
    red = [(a, b, at["label"]) for a, b, at in edges if at.get("color") == f'"{graph.PROPAGATION_COLOR}"']
    assert red == [("shop/cart", "shop/checkout", "<b>1</b>"), ("shop/checkout", "shop/frontend", "<b>2</b>")]
    grey = [(a, b) for a, b, at in edges if not at]
    assert ("shop/frontend", "shop/cart") in grey and ("shop/checkout", "shop/email") in grey


def test_a_service_of_several_workloads_and_a_schedule_get_their_own_nodes(chaos):
    text = graph.render(chaos, "mermaid")
    nodes = mermaid_nodes(text)
    assert nodes["n_service_reviews"].startswith("<b>reviews</b><br>Service")
    assert "n_service_reviews -.-> n_reviews_v1" in text and "n_service_reviews -.-> n_reviews_v2" in text
    assert "Schedule in chaos-mesh" in nodes["n_schedule_reviews_v2_delay"]
    assert "subgraph" not in text  # two namespaces: no frames, the odd one named in its node
    nodes_dot, _ = dot_structure(graph.render(chaos, "dot"))
    assert "chaos-mesh/Schedule/reviews-v2-delay" in nodes_dot
    assert 'subgraph "cluster_chaos-mesh"' in graph.render(chaos, "dot")


def test_focus_keeps_the_named_objects_and_the_hops(shop):
    zero = graph.build(shop, "0")
    assert [n.title for n in zero.nodes] == ["frontend", "cart", "checkout"]  # fault, alerts, propagation
    assert zero.note.startswith("3 of 5 components drawn")
    one = graph.build(shop, "1")
    assert {n.title for n in one.nodes} == {"frontend", "cart", "checkout", "redis"}  # email is 2 hops from cart
    everything = graph.build(shop, "all")
    assert len(everything.nodes) == 5 and everything.note == ""
    assert graph.build(shop, "auto").nodes == everything.nodes  # small: auto draws all
    for bad in ("x", "-1", "1.5", ""):
        with pytest.raises(ValueError):
            graph.parse_focus(bad)


def test_pod_patterns_and_undeclared_services_find_their_component(shop):
    import copy
    import dataclasses

    from itbench_dsl import ir

    scenario = copy.deepcopy(shop)
    topology = scenario.topology
    cart = next(w for w in topology.workloads if w.name == "cart")
    topology.workloads.append(dataclasses.replace(cart, name="cart-proxy", labels={"app": "cart-proxy"}))
    topology.services = [s for s in topology.services if s.name != "redis"]
    scenario.root_causes = [ir.ObjectRef("v1", "Pod", "shop", "cart-*")]  # also matches cart-proxy's pods
    scenario.alerts = [ir.AlertExpectation("HighRequestLatency", ir.ObjectRef("v1", "Service", "shop", "redis"))]
    nodes = {n.title: n for n in graph.build(scenario, "all").nodes}
    assert "root cause (pod cart-*)" in nodes["cart"].lines and nodes["cart-proxy"].style == "plain"
    assert "alert: HighRequestLatency" in nodes["redis"].lines and nodes["redis"].kind == "Deployment"


@pytest.fixture(scope="module")
def library():
    return {p.stem: compile_file(p) for p in sorted(SCENARIOS.rglob("*.itb"))}


def test_big_applications_are_focused_by_default(library):
    scenario = library["otel-cart-deleted-service"]
    focused = graph.build(scenario)
    assert focused.total_components >= 20 and focused.shown_components < focused.total_components
    titles = {n.title for n in focused.nodes}
    assert {"cart", "frontend", "checkout"} <= titles  # the fault, the alert, the propagation
    kinds = {n.title: n.kind for n in graph.build(scenario, "all").nodes}
    assert len(kinds) >= focused.total_components
    # a component's line says its kind and services: none, its namesake, two by name, or a count
    assert kinds["accounting"] == "Deployment" and kinds["cart"] == "Deployment + Service"
    assert kinds["jaeger"] == "Deployment + 3 services"


def test_every_library_scenario_draws_well_formed_pictures(library):
    for name, scenario in library.items():
        text = graph.render(scenario, "mermaid")
        check_mermaid(text)
        nodes, edges = dot_structure(graph.render(scenario, "dot"))
        assert len(nodes) == len(set(nodes)) and {a for a, _, _ in edges} | {b for _, b, _ in edges} <= set(nodes), name
        targets = {i.target.name for i in scenario.injections()}
        if scenario.compliance is None and targets:
            labels = " ".join(mermaid_nodes(text).values())
            assert "fault: " in labels, name
            assert (scenario.compliance is not None or not scenario.root_causes or "root cause" in labels), name


# ---- escaping --------------------------------------------------------------------------------------------------

NASTY = ['say "hi"', "a]b[c", "line\nbreak", "<script>&amp;", "x|y{z}", "end", "#35;", "é ünï 🙂", "back\\slash"]


def unmermaid(text: str) -> str:
    return re.sub(r"#(\d+);", lambda m: chr(int(m.group(1))), text)


def nasty_graph() -> graph.Graph:
    nodes = [graph.Node(f"o:ns/Kind/{i}", text, f"Kind {text}", "ns" if i % 2 else None, False,
                        [("alert", f"alert: {text}")]) for i, text in enumerate(NASTY)]
    graph._assign_ids(nodes)
    edges = [graph.Edge(nodes[i].key, nodes[i + 1].key, "propagation", str(i + 1)) for i in range(len(nodes) - 1)]
    return graph.Graph('odd "name"\n[x]', nodes, edges, len(nodes), len(nodes), "all")


def test_labels_with_quotes_brackets_and_newlines_are_escaped():
    g = nasty_graph()
    text = graph.mermaid(g)
    check_mermaid(text)
    labels = mermaid_nodes(text)
    for node in g.nodes:
        assert unmermaid(labels[node.id].split("<br>")[0][3:-4]) == " ".join(node.title.split())
    dot_text = graph.dot(g)
    names, edges = dot_structure(dot_text)
    assert sorted(names) == sorted(n.key.split(":", 1)[1] for n in g.nodes)
    assert len(edges) == len(NASTY) - 1


@settings(max_examples=150, deadline=None)
@given(st.text(max_size=40))
def test_escapers_round_trip(text):
    collapsed = " ".join("".join(" " if unicodedata.category(c) == "Cc" else c for c in text).split())
    escaped = graph.mermaid_text(text)
    assert re.fullmatch(r"[A-Za-z0-9 .,:/*+=@()_'#;-]*", escaped)
    assert unmermaid(escaped) == collapsed
    assert html.unescape(graph.html_text(text)) == collapsed and not set("<>\"\n") & set(graph.html_text(text))
    assert _unquote(graph.dot_id(text)) == collapsed


# ---- the command -----------------------------------------------------------------------------------------------


def invoke(*args: str, env: dict | None = None):
    from click.testing import CliRunner

    from itbench_dsl import cli

    try:
        runner = CliRunner(mix_stderr=False)
    except TypeError:
        runner = CliRunner()
    return runner.invoke(cli.cli, list(args), catch_exceptions=False, env=env)


def test_command_writes_each_format(tmp_path: Path, shop):
    source = str(CASES / "inline-shop" / "input.itb")
    result = invoke("graph", source)
    assert result.exit_code == 0 and result.stdout == graph.render(shop, "mermaid")
    out = tmp_path / "shop.dot"
    result = invoke("graph", source, "--format", "dot", "-o", str(out), "--focus", "0")
    assert result.exit_code == 0 and out.read_text(encoding="utf-8") == graph.render(shop, "dot", "0")
    assert [p.name for p in tmp_path.iterdir()] == ["shop.dot"]  # no temporary file left


def test_command_reports_errors_with_their_location(tmp_path: Path):
    bad = tmp_path / "bad.itb"
    bad.write_text((CASES / "inline-shop" / "input.itb").read_text(encoding="utf-8").replace(
        'on deployment "cart" {', 'on deployment "carts" {'), encoding="utf-8")
    out = tmp_path / "out.mmd"
    result = invoke("graph", str(bad), "-o", str(out))
    assert result.exit_code == 1
    assert "E2003" in result.stderr and re.search(r"bad\.itb:\d+:\d+", result.stderr)
    assert not out.exists() and "Traceback" not in result.stderr


def test_command_usage_errors(tmp_path: Path):
    source = str(CASES / "inline-shop" / "input.itb")
    app = min((REPO / "itbench_dsl" / "stdlib").rglob("*.itb"))
    for args, words in ((["graph", source, "--focus", "near"], "--focus"), (["graph", str(tmp_path)], "folder"),
                        (["graph", str(tmp_path / "none.itb")], "no such file"),
                        (["graph", str(app)], "an application, not a scenario")):
        result = invoke(*args)
        assert result.exit_code == 2 and words in result.stderr, (args, result.stderr)


def test_svg_without_graphviz_says_how_to_install_it(tmp_path: Path):
    empty = tmp_path / "bin"
    empty.mkdir()
    out = tmp_path / "shop.svg"
    result = invoke("graph", str(CASES / "inline-shop" / "input.itb"), "--format", "svg", "-o", str(out),
                    env={"PATH": str(empty)})
    assert result.exit_code == 2
    assert "apt-get install graphviz" in result.stderr and "--format dot" in result.stderr
    assert not out.exists()


@pytest.mark.skipif(not HAS_DOT, reason="Graphviz `dot` is not installed")
def test_svg_is_well_formed_with_a_title_per_node(tmp_path: Path, shop, chaos):
    for name, scenario in (("inline-shop", shop), ("inline-chaos", chaos)):
        out = tmp_path / f"{name}.svg"
        result = invoke("graph", str(CASES / name / "input.itb"), "--format", "svg", "-o", str(out))
        assert result.exit_code == 0, result.stderr
        root = ET.parse(out).getroot()
        ns = {"svg": "http://www.w3.org/2000/svg"}
        assert root.tag == "{http://www.w3.org/2000/svg}svg"
        titles = [g.find("svg:title", ns).text for g in root.iter("{http://www.w3.org/2000/svg}g")
                  if g.get("class") == "node"]
        nodes, edges = dot_structure(graph.render(scenario, "dot"))
        assert titles == nodes
        assert sum(1 for g in root.iter("{http://www.w3.org/2000/svg}g") if g.get("class") == "edge") == len(edges)
        text = "".join(t.text or "" for t in root.iter("{http://www.w3.org/2000/svg}text"))
        assert "root cause" in text


@pytest.mark.skipif(not HAS_DOT, reason="Graphviz `dot` is not installed")
def test_graphviz_reads_the_escaped_labels(tmp_path: Path):
    from itbench_dsl.cli.graph import run_dot

    svg = run_dot(graph.dot(nasty_graph()))
    root = ET.fromstring(svg)
    text = " ".join(t.text or "" for t in root.iter("{http://www.w3.org/2000/svg}text"))
    assert 'say "hi"' in text and "<script>&amp;" in text and "line break" in text


# ---- rewriting the golden files -------------------------------------------------------------------------------


def update() -> int:
    changed = 0
    for case in case_names():
        scenario = compile_file(CASES / case / "input.itb")
        for name, (fmt, focus) in GOLDEN.items():
            path = CASES / case / name
            new = graph.render(scenario, fmt, focus)
            old = path.read_text(encoding="utf-8") if path.exists() else ""
            if new != old:
                changed += 1
                sys.stdout.writelines(difflib.unified_diff(old.splitlines(True), new.splitlines(True),
                                                           f"a/{path.relative_to(REPO)}", f"b/{path.relative_to(REPO)}"))
                path.write_text(new, encoding="utf-8")
    print(f"{changed} golden file(s) rewritten", file=sys.stderr)
    return 0


if __name__ == "__main__":
    if sys.argv[1:] != ["--update"]:
        sys.exit("usage: python3 tests/backends/test_graph.py --update")
    os.chdir(REPO)
    sys.exit(update())


INDIRECT = """scenario "shop-orders" {
  domain sre
  complexity medium
  description "Orders stop reaching billing."
  topology {
    namespace "shop"
    deployment "orders" { image = "orders:1"  port "http" = 8080 }
    deployment "queue" { image = "queue:1"  port "amqp" = 5672 }
    deployment "billing" { image = "billing:1"  port "http" = 8080 }
    service "orders" { port "http" = 8080 }
    service "queue" { port "amqp" = 5672 }
    service "billing" { port "http" = 8080 }
    "orders" -> "queue"
    "billing" -> "queue"
  }
  fault scaled_to_zero on deployment "orders"
  expect {
    propagation service "orders" -> service "billing" { indirect = true }
  }
}
"""


def test_an_indirect_propagation_is_drawn_dotted_or_dashed():
    from itbench_dsl.compiler import compile_source
    from itbench_dsl.diagnostics import Diagnostics

    diags = Diagnostics()
    scenario = compile_source(INDIRECT.encode(), "shop.itb", diags).scenario
    assert scenario is not None and not diags.errors()
    mermaid = graph.render(scenario, "mermaid")
    assert "  n_orders -.->|1| n_billing" in mermaid.splitlines()
    check_mermaid(mermaid)
    dot = graph.render(scenario, "dot")
    edge = next(line for line in dot.splitlines() if line.strip().startswith('"orders" -> "billing"')
                or ("orders" in line and "-> " in line and "billing" in line and "label=<<b>1</b>>" in line))
    assert "style=dashed" in edge and "dashed: through other components" in dot
