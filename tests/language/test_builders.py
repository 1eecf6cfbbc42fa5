"""itbench_dsl/builders.py and the printer's notes for built trees.

(a) A Python value made a literal prints and parses back to the same node (a hypothesis property).
(b) Every statement builder gives a node that prints and parses back equal.
(c) Notes put comments and blank lines into the text of a built tree, in `itbench fmt`'s layout; a
    parsed file prints exactly as it does without them.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from itbench_dsl import ast
from itbench_dsl import builders as b
from itbench_dsl.diagnostics import Diagnostics, render_human
from itbench_dsl.parser import MAX_INT_DIGITS, parse_text
from itbench_dsl.printer import Notes, print_document

REPO = Path(__file__).resolve().parents[2]


def reparsed(document: ast.Document, notes: Notes | None = None) -> tuple[ast.Document, str]:
    text = print_document(document, notes=notes)
    diags = Diagnostics()
    parsed = parse_text(text, "built.itb", diags)
    assert parsed is not None, render_human(diags) + "\n" + text
    return parsed, text


def in_metadata(value) -> ast.Scenario:
    return b.scenario("s", [b.metadata([b.attr("v", value)])])


# ---- (a) values ----------------------------------------------------------------------------------------------

# integers as the language writes them: at most MAX_INT_DIGITS digits (a longer literal is E2010)
_LIMIT = 10 ** MAX_INT_DIGITS - 1
scalars = st.one_of(st.booleans(), st.integers(-_LIMIT, _LIMIT), st.floats(allow_nan=False, allow_infinity=False),
                    st.text())
values = st.recursive(scalars, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                       st.dictionaries(st.text(), inner, max_size=4)),
                      max_leaves=12)


@settings(max_examples=200, deadline=None)
@given(values)
def test_a_literal_prints_and_parses_back_equal(value):
    document = in_metadata(b.literal(value))
    assert reparsed(document)[0] == document


@given(values)
def test_a_literal_keeps_the_value(value):
    def meaning(node):
        if isinstance(node, ast.Symbol):
            return node.name == "true"
        if isinstance(node, ast.Float):
            return float(node.text)
        if isinstance(node, ast.ListValue):
            return [meaning(i) for i in node.items]
        if isinstance(node, ast.MapValue):
            return {p.key: meaning(p.value) for p in node.pairs}
        return node.value

    def normal(v):  # -0.0 == 0.0, and mapping keys are text
        if isinstance(v, list):
            return [normal(i) for i in v]
        if isinstance(v, dict):
            return {str(k): normal(i) for k, i in v.items()}
        return v

    assert meaning(b.literal(value)) == normal(value)


def test_literal_node_types():
    assert b.literal(True) == ast.Symbol("true") and b.literal(False) == ast.Symbol("false")
    assert b.literal(3) == ast.Int(3) and b.literal(-3) == ast.Int(-3)
    assert b.literal(2.5) == ast.Float("2.5")
    assert b.literal(1e-05) == ast.Float("0.00001") and b.literal(1e16) == ast.Float("10000000000000000.0")
    assert b.literal("5m") == ast.Str("5m")  # a string stays a string: the field decides units
    assert b.literal({"a": [1, "x"]}) == ast.MapValue((ast.Pair("a", ast.ListValue((ast.Int(1), ast.Str("x")))),))
    assert b.literal({1: True}) == ast.MapValue((ast.Pair("1", ast.Symbol("true")),))
    node = ast.Quantity("250m")
    assert b.literal([node]) == ast.ListValue((node,))  # nodes are kept


def test_values_without_a_literal():
    for value in (None, object(), {1, 2}):
        with pytest.raises(TypeError):
            b.literal(value)
        assert b.try_literal(value) is None
    for value in (math.inf, -math.inf, math.nan):
        with pytest.raises(ValueError):
            b.literal(value)
        assert b.try_literal([value]) is None


@pytest.mark.parametrize("text,node", [
    ("3", ast.Int(3)), ("+3", ast.Int(3)), ("-3", ast.Int(-3)), ("0.5", ast.Float("0.5")),
    ("250m", ast.Quantity("250m")), ("1m30s", ast.Quantity("1m30s")), ("1.5Gi", ast.Quantity("1.5Gi")),
    ("50%", ast.Percent("50")), ("+2.5%", ast.Percent("2.5")),
])
def test_number_is_what_the_lexer_reads(text, node):
    assert b.number(text) == node
    assert reparsed(in_metadata(b.number(text)))[0] == in_metadata(node)


@pytest.mark.parametrize("text", ["", "x", "1e3", "5 m", "--1", "1.", "%"])
def test_number_refuses_what_is_no_number(text):
    with pytest.raises(ValueError):
        b.number(text)


def test_entries_of_a_mapping():
    assert b.entries_of({"a": 1, "b": {"c": "d"}, "e": {}}) == (
        b.attr("a", 1), b.block("b", [b.attr("c", "d")]), b.block("e"))


# ---- (b) statements ---------------------------------------------------------------------------------------------

CART = b.ref("deployment", "cart")
REDIS = b.ref("service", "redis")

SCENARIO_STATEMENTS = [
    b.domain("sre"),
    b.complexity("high"),
    b.description('Cart "fails"\nafter a restart'),
    b.tags(["Deployment", "Performance"]),
    b.metadata({"itbench_id": 7, "category": "sre", "control": True}),
    b.use_app("opentelemetry-demo"),
    b.use_app("opentelemetry-demo", [b.block("options", b.entries_of({"flagd": {"enabled": True}}))]),
    b.topology([b.obj("namespace", "kube-system", [b.attr("provided", True)]),
                b.obj("static_pod", "etcd"), b.edge("frontend", "cart", "redis")]),
    b.fault("pod_failure", CART),
    b.fault("cpu_stress", CART, [b.attr("load", ast.Percent("80")), b.attr("duration", b.number("5m")),
                                 b.block("selector", [b.attr("app.kubernetes.io/name", "cart")])]),
    b.group([b.fault("network_delay", CART, [b.attr("latency", b.number("200ms"))]),
             b.wait("after", "ready", CART), b.wait("before", "pause", b.ref("namespace", "otel-demo"),
                                                    [b.attr("duration", b.number("30s"))])]),
    b.group([b.fault("pod_failure", REDIS)], name="second"),
    b.expect([
        b.ground_group("cart-1", CART, [b.attr("filter", ["cart-.*"])]),
        b.ground_group("redis-1", REDIS),
        b.root_cause(b.ref("group", "cart-1")),
        b.alert("HighLatency", b.ref("group", "cart-1"), [b.attr("description", "slow")]),
        b.alert("KubePodNotReady", CART),
        b.propagation(b.ref("group", "cart-1"), b.ref("group", "redis-1"),
                      entries=[b.attr("condition", "c"), b.attr("indirect", True)]),
        b.propagation(CART, REDIS, b.ref("deployment", "frontend")),
        b.alias(b.ref("group", "cart-1"), b.ref("group", "redis-1")),
        b.alias(b.ref("group", "cart-1")),
        b.cause([b.attr("entity", "cart"), b.block("condition", [b.attr("x", 1)]), b.attr("empty", {})]),
        b.mitigated([b.state_predicate(CART, "ready", within="2m"), b.state_predicate(REDIS, "exists"),
                     b.field_predicate(CART, "spec.replicas", ">=", 2), b.alert_predicate("HighLatency", firing=False),
                     b.alert_predicate("KubePodNotReady")], within="10m"),
        b.mitigated([b.state_predicate(CART, "absent")]),
        b.mitigated([b.access_predicate(b.ref("serviceaccount", "cart"), "list", "pods"),
                     b.access_predicate(b.ref("serviceaccount", "cart"), "delete", "deployments.apps", "otel-demo",
                                        allowed=False)]),
        b.optimal(CART, "resources.requests.cpu", b.number("250m")),
    ]),
    b.solution("Restart the cart", ["kubectl rollout restart deployment/cart", b.step("check", run="kubectl get pods")]),
    b.solution("Scale", ["scale it"], solution_id="scale_it"),
    b.param("replicas", [1, 2, 3], default=2),
    b.param("latency", b.call("range", b.number("100ms"), b.number("1s"))),
    b.agent([b.attr("model", "x")]),
    b.control("cis-k8s-5.2.5"),
    b.control("policy", [b.attr("benchmark", "CIS"), b.attr("goal", "no root")]),
    b.task("kyverno_policy"),
    b.task("kyverno_update", [b.attr("update", "p"), b.block("policy", [
        b.block("rule", [b.attr("pattern", {"spec": {"(name)": "*", "list": [{"a": False}]}})], ["r"])], ["p"])]),
    b.gap(CART),
    b.compliant(REDIS),
]


@pytest.mark.parametrize("statement", SCENARIO_STATEMENTS, ids=lambda s: type(s).__name__)
def test_every_statement_builder_round_trips(statement):
    document = b.scenario("built", [statement])
    assert reparsed(document)[0] == document


def test_a_scenario_and_an_app_round_trip_whole():
    scenario = b.scenario("whole", SCENARIO_STATEMENTS)
    assert reparsed(scenario)[0] == scenario
    app = b.app("shop", [b.description("a shop"), b.metadata([b.attr("version", "1.0")]),
                         b.obj("namespace", "shop"), b.obj("serviceaccount", "sa", []),
                         b.obj("deployment", "cart", [b.attr("replicas", 2), b.block("container", [
                             b.attr("image", "cart:1"), b.attr("port", 8080, ["http"]),
                             b.block("env", [b.attr("SECRET", b.call("secret_key", "db", "password"))])], ["cart"])]),
                         b.edge("cart", "redis")])
    assert reparsed(app)[0] == app


def test_with_entries_adds_to_the_body():
    assert b.with_entries(b.fault("pod_failure", CART), b.attr("x", 1)).entries == (b.attr("x", 1),)
    prop = b.propagation(CART, REDIS, entries=[b.attr("condition", "c")])
    assert b.with_entries(prop, b.attr("indirect", True)).entries == (b.attr("condition", "c"), b.attr("indirect", True))


def test_body_is_none_without_entries():
    assert b.body([]) is None and b.body(iter([b.attr("a", 1)])) == (b.attr("a", 1),)
    assert print_document(b.scenario("s", [b.gap(CART), b.control("c", b.body([]))])) == \
        'scenario "s" {\n  gap deployment "cart"\n  control "c"\n}\n'


# ---- (c) notes ----------------------------------------------------------------------------------------------------


def test_notes_write_comments_and_blank_lines():
    notes = Notes()
    gap, compliant, control = b.gap(CART), b.compliant(REDIS), b.control("c")
    fault = b.fault("pod_failure", CART, [b.attr("a", 1), b.attr("b", 2)])
    document = b.scenario("s", [notes.add(b.domain("ciso"), blank_line=True),  # never at a block's start
                                notes.add(control, blank_line=True, before=["# the control"]),
                                fault, notes.add(gap, blank_line=True), compliant])
    notes.add(fault.entries[1], before=["# second"], after=["# after b"])
    notes.add(compliant, after=["# closing note  "])
    notes.add(document, before=["# Header.", "#"])
    parsed, text = reparsed(document, notes)
    assert text == ('# Header.\n#\nscenario "s" {\n  domain ciso\n\n  # the control\n  control "c"\n'
                    '  fault pod_failure on deployment "cart" {\n    a = 1\n    # second\n    b = 2\n    # after b\n  }\n'
                    '\n  gap deployment "cart"\n  compliant service "redis"\n  # closing note\n}\n')
    assert parsed == document
    assert print_document(parsed, text) == text  # in `itbench fmt`'s layout: fmt leaves it as it is


def test_notes_are_kept_per_node_not_per_value():
    notes = Notes()
    first, second = b.gap(CART), b.gap(CART)
    assert first == second and first is not second
    notes.add(second, before=["# the second"])
    text = print_document(b.scenario("s", [first, second]), notes=notes)
    assert text == 'scenario "s" {\n  gap deployment "cart"\n  # the second\n  gap deployment "cart"\n}\n'


def test_notes_add_up_and_steps_take_them():
    notes = Notes()
    step = b.step("first")
    notes.add(step, before=["# one"])
    notes.add(step, before=["# two"], blank_line=True)
    text = print_document(b.scenario("s", [b.solution("t", [b.step("zero"), step])]), notes=notes)
    assert text == 'scenario "s" {\n  solution "t" {\n    step "zero"\n\n    # one\n    # two\n    step "first"\n  }\n}\n'


@pytest.mark.parametrize("line", ["no hash", "# two\nlines", "# a\rb", ""])
def test_a_note_is_one_comment_line(line):
    with pytest.raises(ValueError):
        Notes().add(b.domain("sre"), before=[line])


def _repository_files() -> list[Path]:
    roots = [REPO / "scenarios", REPO / "itbench_dsl" / "stdlib", REPO / "tests" / "cases"]
    return sorted(p for root in roots if root.is_dir() for p in root.rglob("*.itb"))


def test_parsed_files_print_as_without_notes():
    """Notes for other nodes, and empty notes, change nothing in a parsed file's text."""
    checked = 0
    for path in _repository_files():
        try:
            text = path.read_text("utf-8")
        except UnicodeDecodeError:
            continue  # an error fixture that is not UTF-8 by design
        document = parse_text(text, str(path), Diagnostics())
        if document is None:
            continue  # an error fixture that does not parse by design
        unrelated = Notes()
        unrelated.add(b.domain("sre"), before=["# not in this file"], blank_line=True)
        plain = print_document(document, text)
        assert print_document(document, text, Notes()) == plain, path
        assert print_document(document, text, unrelated) == plain, path
        checked += 1
    assert checked > 20


# ---- depth ----------------------------------------------------------------------------------------------------------


def _scanned_depth(text: str) -> int:
    """How deep the brackets of a text nest, strings and comments aside (as the parser counts them)."""
    depth = deepest = 0
    for match in re.finditer(r'"(?:[^"\\\n]|\\.)*"?|#[^\n]*|[\[\]{}()]', text):
        char = match.group()
        if char in "[{(":
            depth += 1
            deepest = max(deepest, depth)
        elif char in "]})":
            depth -= 1
    return deepest


def test_nesting_is_the_depth_of_the_printed_brackets():
    checked = 0
    for path in _repository_files():
        try:
            text = path.read_text("utf-8")
        except UnicodeDecodeError:
            continue
        document = parse_text(text, str(path), Diagnostics())
        if document is not None:
            assert b.nesting(document) == _scanned_depth(print_document(document)), path
            checked += 1
    assert checked > 20
    assert b.nesting(SCENARIO_STATEMENTS) == _scanned_depth(print_document(b.scenario("s", SCENARIO_STATEMENTS))) - 1


def _nested_maps(depth: int):
    value = 1
    for _ in range(depth):
        value = {"a": value}
    return value


def test_too_deep_is_what_the_parser_refuses():
    from itbench_dsl.parser import MAX_NESTING

    fits = in_metadata(b.literal(_nested_maps(MAX_NESTING - 2)))  # inside `scenario { metadata { ... } }`
    assert b.nesting(fits) == MAX_NESTING and b.too_deep(fits) is None
    assert reparsed(fits)[0] == fits
    deeper = in_metadata(b.literal(_nested_maps(MAX_NESTING - 1)))
    diags = Diagnostics()
    assert parse_text(print_document(deeper), "deep.itb", diags) is None
    assert b.too_deep(deeper) == diags.errors()[0].message
    node = ast.Int(1)
    for _ in range(5000):
        node = ast.MapValue((ast.Pair("a", node),))
    assert b.nesting(in_metadata(node)) == 5002  # walked without recursion


def test_deeply_nested_lists_print_in_linear_time():
    """Each list is laid out from its one-line form, computed once: at the parser's deepest nesting the
    printer answers at once (rendering every level twice cost 2^depth: 24 levels took minutes)."""
    from itbench_dsl.parser import MAX_NESTING, parse_text

    value = "1"
    for _ in range(MAX_NESTING - 3):
        value = f'[{value}, "{"x" * 30}"]'
    text = f'scenario "deep" {{\n  metadata {{\n    k = {value}\n  }}\n}}\n'
    document = parse_text(text, "deep.itb")
    assert document is not None
    printed = print_document(document)
    assert parse_text(printed, "again.itb") == document
    assert print_document(parse_text(printed, "again.itb"), printed) == printed
