"""Round trip of the canonical printer and the parser.

(a) Every `.itb` file of the repository (scenarios, standard-library apps, test fixtures):
    `parse(print(parse(text))) == parse(text)`, printing is idempotent, and every comment of the
    source survives printing.
(b) A hypothesis property over generated ASTs (not only fixtures): for every tree the strategies
    build, `parse_text(print_document(tree)) == tree`.

The strategies follow the grammar's lexical rules (grammar/itbench.lark):
  * NAME is `[A-Za-z_][A-Za-z0-9_]*`; keys may also be any keyword or any string.
  * The parser's lexer is contextual: a keyword is reserved only where the parser could also
    accept that keyword. Most NAME positions (fault kind, param name, ref kind after `on`, symbol
    and call names, ...) therefore take keywords too, and the strategies use them there. The
    positions where a keyword is read as a keyword are generated without keywords:
      - an object's kind (`description "x"` is a statement in an `app` body, and after a body's `}`
        the merged LALR state reads keywords that may follow a body anywhere),
      - a ref's kind at the start of a mitigation predicate (`alert` starts an alert predicate),
      - the first component of a path after a ref (`optimal`/field predicates): the lexer state
        after a ref's name accepts every keyword that may follow a ref anywhere.
  * Numbers are written as the lexer reads them: Float is digits '.' digits, Quantity is a number
    glued to a unit ending in a letter, Percent is a number without `%`; no leading `+` (the
    parser drops it, so it is not part of the tree).
"""

from __future__ import annotations

import difflib
import re
from collections import Counter
from functools import lru_cache
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from lark import Lark

from itbench_dsl import ast
from itbench_dsl.diagnostics import Diagnostics
from itbench_dsl.parser import grammar_text, parse_text
from itbench_dsl.printer import extract_comments, print_document

REPO = Path(__file__).resolve().parents[2]


# ---- (a) the repository's files ----------------------------------------------------------------------


def _itb_files() -> list[Path]:
    roots = [REPO / "scenarios", REPO / "itbench_dsl" / "stdlib" / "apps", REPO / "tests" / "cases"]
    return sorted(p for root in roots if root.is_dir() for p in root.rglob("*.itb"))


FILES = _itb_files()


def _id(path: Path) -> str:
    return str(path.relative_to(REPO))


def _expected_syntax_error(path: Path) -> bool:
    """An error fixture whose point is a syntax (E1xxx) error: it does not parse, by design."""
    folder = path.parent
    if folder.parent.name != "errors" or not folder.name.startswith("E1"):
        return False
    expected = folder / "expected.txt"
    return expected.is_file() and re.search(r"error\[E1\d{3}\]", expected.read_text("utf-8")) is not None


def _parse(text: str, path: str):
    diags = Diagnostics()
    return parse_text(text, path, diags), diags


def test_fixture_list_is_not_empty():
    names = {p.name for p in FILES}
    assert any(p.is_relative_to(REPO / "scenarios") for p in FILES)
    assert any(p.is_relative_to(REPO / "itbench_dsl" / "stdlib") for p in FILES)
    assert "input.itb" in names


@pytest.mark.parametrize("path", FILES, ids=_id)
def test_file_round_trip(path: Path):
    data = path.read_bytes()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        assert _expected_syntax_error(path), f"{_id(path)} is not UTF-8 and is not a syntax-error fixture"
        return
    tree, diags = _parse(text, _id(path))
    if tree is None:
        # only the syntax-error fixtures may fail to parse, and they must fail with a syntax error
        assert _expected_syntax_error(path), f"{_id(path)} does not parse: {[d.message for d in diags.items]}"
        assert any(d.code.startswith("E1") for d in diags.items)
        return

    printed = print_document(tree, text)
    reparsed, diags2 = _parse(printed, "printed.itb")
    assert reparsed is not None, f"the printed text does not parse: {[d.message for d in diags2.items]}\n{printed}"
    assert reparsed == tree, "parse(print(parse(text))) != parse(text)"

    again = print_document(reparsed, printed)
    assert again == printed, "printing is not idempotent:\n" + "\n".join(
        difflib.unified_diff(printed.splitlines(), again.splitlines(), "print(x)", "print(parse(print(x)))", lineterm=""))

    # every comment of the source is in the printed text (as a comment, as often as in the source)
    source_comments = [c.text for c in extract_comments(text)]
    printed_comments = [c.text for c in extract_comments(printed)]
    assert Counter(printed_comments) == Counter(source_comments)
    for comment in source_comments:
        assert comment in printed


def test_comments_stay_on_their_lines():
    """A comment after a statement, after a block's `{` or after its `}` stays on that line."""
    text = (
        'scenario "s" {  # header\n'
        "  domain sre  # after a statement\n"
        "  metadata {  # after an opening brace\n"
        "    a = 1\n"
        "  }  # after a closing brace\n"
        "  # own line\n"
        "}  # after the last brace\n"
    )
    tree, _ = _parse(text, "s.itb")
    printed = print_document(tree, text)
    assert printed == text
    assert print_document(parse_text(printed), printed) == printed


# ---- (b) generated trees ------------------------------------------------------------------------------


@lru_cache(maxsize=1)
def keywords() -> tuple[str, ...]:
    """Every keyword of the grammar (the anonymous string terminals that look like names)."""
    parser = Lark(grammar_text(), parser="lalr", lexer="contextual")
    words = {t.pattern.value for t in parser.terminals if t.pattern.type == "str" and re.fullmatch(r"[a-z_]+", t.pattern.value)}
    return tuple(sorted(words))


KEYWORDS = keywords()
IDENT_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
MAX_DEPTH = 5


def test_keywords_cover_the_grammar():
    for word in ("scenario", "app", "fault", "on", "in", "alert", "ready", "metadata", "description", "within", "not"):
        assert word in KEYWORDS
    assert all(IDENT_RE.fullmatch(k) for k in KEYWORDS)


identifiers = st.from_regex(r"\A[A-Za-z_][A-Za-z0-9_]{0,11}\Z").filter(lambda s: s not in KEYWORDS)
# a NAME where the contextual lexer never expects a keyword: keywords are plain names there
names = st.one_of(identifiers, st.sampled_from(KEYWORDS))
# a NAME where some keyword would be read as a keyword
plain_names = identifiers

# arbitrary text: quotes, backslashes, newlines, tabs, control characters, non-ASCII (no surrogates)
text = st.one_of(
    st.text(max_size=24),
    st.text(alphabet=st.sampled_from('"\\\n\t\r\x00\x01\x1b\x7f\x85\u00e9\u2028\u2029\ufeff#{}[]()=,->% \U0001f600'),
            max_size=12),
    st.sampled_from(["", " ", "#", "# not a comment", 'say "hi"', "C:\\path\\", "line1\nline2", "\\u0041", "\\n"]),
)

digits = st.from_regex(r"\A[0-9]{1,4}\Z")
signs = st.sampled_from(["", "-"])


@st.composite
def number_text(draw) -> str:
    whole = draw(digits)
    if draw(st.booleans()):
        whole += "." + draw(digits)
    return whole


@st.composite
def float_text(draw) -> str:
    return draw(signs) + draw(digits) + "." + draw(digits)


UNITS = ["m", "Mi", "Gi", "Ki", "k", "M", "G", "s", "ms", "h", "d", "e", "Ei", "xyz"]


@st.composite
def quantity_text(draw) -> str:
    parts = [draw(number_text()) + draw(st.sampled_from(UNITS))]
    for _ in range(draw(st.integers(0, 2))):
        parts.append(draw(number_text()) + draw(st.sampled_from(UNITS)))
    return draw(signs) + "".join(parts)


def quantities() -> st.SearchStrategy[ast.Quantity]:
    return st.one_of(
        st.sampled_from(["250m", "64Mi", "1h30m", "1.5Gi", "30s", "5m", "2h30m", "100ms", "1e"]),
        quantity_text(),
    ).map(ast.Quantity)


scalars = st.one_of(
    text.map(ast.Str),
    st.integers(min_value=-(10**12), max_value=10**12).map(ast.Int),
    st.one_of(st.sampled_from(["1.5", "0.0", "-2.25", "10.01"]), float_text()).map(ast.Float),
    quantities(),
    st.one_of(st.sampled_from(["50", "12.5", "100", "0"]), st.builds(lambda s, n: s + n, signs, number_text())).map(ast.Percent),
    names.map(ast.Symbol),
)

keys = st.one_of(identifiers, st.sampled_from(KEYWORDS), text)


def values(depth: int = MAX_DEPTH) -> st.SearchStrategy:
    if depth <= 1:
        return scalars
    inner = st.deferred(lambda: values(depth - 1))
    return st.one_of(
        scalars,
        st.builds(ast.Call, names, st.lists(inner, max_size=3).map(tuple)),
        st.builds(ast.ListValue, st.lists(inner, max_size=4).map(tuple)),
        st.builds(ast.MapValue, st.lists(st.builds(ast.Pair, keys, inner), max_size=3).map(tuple)),
    )


labels = st.lists(text, max_size=2).map(tuple)


def entries(depth: int = MAX_DEPTH) -> st.SearchStrategy:
    """A generic body: attributes and blocks, with labels, nested at most `depth` deep."""
    attr = st.builds(ast.Attr, keys, labels, values(depth))
    if depth <= 1:
        return st.lists(attr, max_size=3).map(tuple)
    block = st.builds(ast.Block, keys, labels, st.deferred(lambda: entries(depth - 1)))
    return st.lists(st.one_of(attr, block), max_size=3).map(tuple)


def optional_body(depth: int = 3) -> st.SearchStrategy:
    return st.one_of(st.none(), entries(depth))


refs = st.builds(ast.Ref, names, text)
predicate_refs = st.builds(ast.Ref, plain_names, text)  # `alert` would start an alert predicate
paths = st.builds(lambda first, rest: (first, *rest), plain_names, st.lists(names, max_size=3))
ops = st.sampled_from(["==", "!=", ">=", "<=", ">", "<"])
within = st.one_of(st.none(), quantities())

predicates = st.one_of(
    st.builds(ast.StatePredicate, predicate_refs, st.sampled_from(["ready", "exists", "absent"]), within),
    st.builds(ast.FieldPredicate, predicate_refs, paths, ops, values(3)),
    st.builds(ast.AlertPredicate, names, st.booleans()),
)

expect_statements = st.one_of(
    st.builds(ast.Alert, names, refs, optional_body()),
    st.builds(ast.RootCause, refs),
    st.builds(ast.Propagation, st.lists(refs, min_size=2, max_size=4).map(tuple), optional_body()),
    st.builds(ast.Mitigated, within, st.lists(predicates, max_size=4).map(tuple)),
    st.builds(ast.Optimal, refs, paths, values(3)),
)

faults = st.builds(ast.Fault, names, refs, optional_body())
waits = st.builds(ast.Wait, st.sampled_from(["before", "after"]), names, refs, optional_body())


def objects(kinds: st.SearchStrategy) -> st.SearchStrategy:
    return st.builds(ast.Object, kinds, text, st.one_of(st.none(), entries(4)))


edges = st.builds(ast.Edge, st.lists(text, min_size=2, max_size=4).map(tuple))
topology_statements = st.one_of(objects(identifiers), edges)

scenario_statements = st.one_of(
    st.builds(ast.Domain, names),
    st.builds(ast.Complexity, names),
    st.builds(ast.Description, text),
    st.builds(ast.Tags, st.builds(ast.ListValue, st.lists(values(3), max_size=4).map(tuple))),
    st.builds(ast.Metadata, entries()),
    st.builds(ast.UseApp, text, optional_body()),
    st.builds(ast.Topology, st.lists(topology_statements, max_size=4).map(tuple)),
    faults,
    st.builds(ast.Group, st.one_of(st.none(), text), st.lists(st.one_of(faults, waits), max_size=4).map(tuple)),
    st.builds(ast.Expect, st.lists(expect_statements, max_size=5).map(tuple)),
    st.builds(ast.Solution, text, st.lists(st.builds(ast.Step, text, st.one_of(st.none(), text)), max_size=3).map(tuple)),
    st.builds(ast.Param, names, values(3), st.one_of(st.none(), values(3))),
    st.builds(ast.Agent, entries(3)),
    st.builds(ast.Control, text, optional_body()),
    st.builds(ast.Task, names, optional_body()),
    st.builds(ast.Gap, refs),
    st.builds(ast.Compliant, refs),
)

app_statements = st.one_of(
    st.builds(ast.Description, text),
    st.builds(ast.Metadata, entries()),
    objects(plain_names),  # `description` and `metadata` start statements in an app body
    edges,
)

documents = st.one_of(
    st.builds(ast.Scenario, text, st.lists(scenario_statements, max_size=8).map(tuple)),
    st.builds(ast.App, text, st.lists(app_statements, max_size=6).map(tuple)),
)

PROPERTY_SETTINGS = settings(
    max_examples=400,
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def _check(tree) -> None:
    printed = print_document(tree)
    diags = Diagnostics()
    reparsed = parse_text(printed, "generated.itb", diags)
    assert reparsed is not None, f"printed text does not parse: {[d.message for d in diags.items]}\n{printed}"
    assert reparsed == tree, f"round trip changed the tree; printed:\n{printed}"
    assert print_document(reparsed) == printed


@PROPERTY_SETTINGS
@given(documents)
def test_generated_documents_round_trip(tree):
    _check(tree)


@settings(max_examples=300, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.builds(ast.Attr, keys, labels, values()), min_size=1, max_size=4).map(tuple))
def test_generated_values_round_trip(attrs):
    """Every value kind and every key shape, nested up to five levels, in a metadata body."""
    _check(ast.Scenario("values", (ast.Metadata(attrs),)))


@settings(max_examples=300, derandomize=True, deadline=None)
@given(text, text, keys)
def test_generated_strings_round_trip(name, value, key):
    """Arbitrary text in every string position: document name, labels, values, keys, refs."""
    tree = ast.Scenario(name, (
        ast.Description(value),
        ast.Metadata((ast.Block(key, (value, name), (ast.Attr(key, (), ast.Str(value)),)),)),
        ast.Fault("f", ast.Ref("deployment", value), None),
        ast.Solution(value, (ast.Step(name, value),)),
    ))
    _check(tree)


@pytest.mark.parametrize("value", [
    ast.Str('quote " backslash \\ newline \n tab \t cr \r nul \x00 esc \x1b del \x7f nel \x85 ls \u2028 bom \ufeff'),
    ast.Str("non-ASCII: é ü 漢字 😀"),
    ast.Float("1.5"), ast.Float("-0.25"), ast.Quantity("250m"), ast.Quantity("64Mi"), ast.Quantity("1h30m"),
    ast.Quantity("1.5Gi"), ast.Quantity("-2m"), ast.Percent("12.5"), ast.Percent("-3"), ast.Int(-7),
    ast.Symbol("in"), ast.Symbol("default"), ast.Call("field", (ast.Str("status.podIP"),)), ast.Call("f", ()),
    ast.ListValue(()), ast.MapValue(()),
    ast.MapValue((ast.Pair("app", ast.Str("web")), ast.Pair("in", ast.Int(1)), ast.Pair("a.b/c", ast.Str("")))),
], ids=repr)
def test_value_examples_round_trip(value):
    _check(ast.Scenario("v", (ast.Metadata((ast.Attr("description", ("label",), value),)),)))
