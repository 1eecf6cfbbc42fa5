"""The YAML emitter writes what YAML loaders read back, and quotes whatever could be misread."""

from __future__ import annotations

import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from itbench_dsl import yamlout

TRICKY = [
    "yes", "No", "on", "OFF", "y", "n", "Y", "~", "null", "NULL", "true", "False", "1:20", "0x1F", "0o17", "017",
    "-a", "- x", "a: b", "a:", "a #b", "#c", " lead", "trail ", "? y", "@z", "`q", "!t", "&a", "*b", "|", "> x",
    "%p", "2001-12-14", "1e3", ".5", ".inf", ".NaN", "=", "<<", "a\n b", "\n\nx", " x\ny\n\n", "x\n", "a\tb\n",
    "é\nü", "\u2028a\nb", "\x85", "\ufeffx", "a\r\nb", "---", "...", "{a: 1}", "[1]", "'q'", '"q"', "\\", "",
]
text = st.text(st.characters(blacklist_categories=("Cs",)), max_size=30) | st.sampled_from(TRICKY)
leaf = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | text
data = st.recursive(leaf, lambda children: st.lists(children, max_size=4) | st.dictionaries(text, children, max_size=4),
                    max_leaves=25)


@settings(max_examples=1500, deadline=None, derandomize=True)
@given(st.lists(data, min_size=1, max_size=3))
def test_safe_load_reads_back_what_was_written(documents):
    assert list(yaml.safe_load_all(yamlout.dump_all(documents))) == documents


def test_tricky_strings_stay_strings():
    document = {value: value for value in TRICKY}
    assert yaml.safe_load(yamlout.dump(document)) == document


def test_yaml_1_1_booleans_and_numbers_are_quoted():
    for value in ("yes", "on", "y", "n", "1:20", "0x1F", "017", "1e3", ".5"):
        assert yamlout.scalar(value).startswith('"'), value
    assert yamlout.scalar("ghcr.io/open-telemetry/demo:2.1.3-checkout") == "ghcr.io/open-telemetry/demo:2.1.3-checkout"
    assert yamlout.scalar("quote:0000") == "quote:0000"


def test_text_cannot_add_structure():
    """A value that looks like YAML stays one scalar: no new keys, documents or anchors appear."""
    hostile = "x\nkind: Secret\n---\nevil: &a [*a]"
    document = {"data": {"k": hostile}, "name": "a: b\n- c"}
    loaded = list(yaml.safe_load_all(yamlout.dump_all([document])))
    assert loaded == [document]


def test_multiline_text_is_a_literal_block():
    out = yamlout.dump({"config.json": '{\n  "a": 1\n}\n'})
    assert out == 'config.json: |\n  {\n    "a": 1\n  }\n'


def test_floats_read_back_as_floats():
    for value in (1e-05, 1e20, 0.5, -2.0, float("inf")):
        assert yaml.safe_load(yamlout.scalar(value)) == value
