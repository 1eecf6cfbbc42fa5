"""The evaluator's standard-library YAML reader reads what PyYAML reads, or refuses with a location."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from itbench_dsl.runtime.miniyaml import YAMLSubsetError, load_all

REFERENCE = Path(__file__).resolve().parents[3] / "shared" / "reference"
YAML_FILES = sorted(p for suffix in ("*.yaml", "*.yml") for p in REFERENCE.rglob(suffix)) if REFERENCE.is_dir() else []


class _KubernetesLoader(yaml.SafeLoader):
    """PyYAML as Kubernetes reads YAML: an unquoted timestamp stays text (sigs.k8s.io/yaml goes through JSON)."""


_KubernetesLoader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()}


def _pyyaml(text: str) -> list:
    return [d for d in yaml.load_all(text, Loader=_KubernetesLoader) if d is not None]


def _same(a, b) -> bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return a == b


@pytest.mark.skipif(not YAML_FILES, reason="the shared reference folder is absent")
def test_every_reference_yaml_file_reads_as_pyyaml_reads_it():
    # Kubernetes manifests, CRDs, Kyverno policies and tests, ITBench scenarios and ground truths
    # (and Helm templates, which are not YAML: PyYAML refuses them, and so must the reader, with a location)
    differing, refused = [], 0
    for path in YAML_FILES:
        text = path.read_text(encoding="utf-8")
        try:
            expected = _pyyaml(text)
        except yaml.YAMLError:
            expected = None
        try:
            actual = load_all(text)
        except YAMLSubsetError:
            refused += 1  # the reader reads a subset: refusing with a location is allowed, crashing is not
            continue
        if expected is None or not _same(actual, expected):
            differing.append(str(path.relative_to(REFERENCE)))
    assert not differing, differing
    assert refused < len(YAML_FILES) // 5
    assert len(YAML_FILES) > 250


# NEL, LS and PS are line breaks in YAML 1.1 (PyYAML) but content in YAML 1.2 and for the reader
TEXT = st.text(st.characters(blacklist_characters="\x85\u2028\u2029"), max_size=40)
scalars = st.one_of(
    st.none(), st.booleans(), st.integers(-10**12, 10**12),
    st.floats(allow_nan=False, width=64), TEXT,
    st.sampled_from(["yes", "no", "on", "off", "~", "null", "1e3", "0x1f", "0o17", "1:30", ".inf", "-", "- a",
                     "a: b", "#x", "x #y", "'q'", '"q"', "[a]", "{a: 1}", "|", ">", "* a", "&a", "!x", "  lead",
                     "trail  ", "multi\nline\n", "\ttab", "é ü ✓"]),
)
keys = st.one_of(st.text(st.characters(blacklist_characters="\x85\u2028\u2029"), min_size=1, max_size=12), st.integers(0, 99), st.sampled_from(["yes", "on", "1.5", "a b"]))
documents = st.recursive(scalars, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                          st.dictionaries(keys, inner, max_size=4)), max_leaves=25)
styles = st.sampled_from([
    {"default_flow_style": False}, {"default_flow_style": True}, {"default_flow_style": None},
    {"default_flow_style": False, "width": 20}, {"default_style": '"'}, {"default_style": "'"},
    {"default_style": "|"}, {"default_style": ">"}, {"default_flow_style": False, "allow_unicode": True},
    {"default_flow_style": False, "indent": 4}, {"explicit_start": True, "default_flow_style": False},
])


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(document=documents, style=styles)
def test_documents_pyyaml_writes_read_the_same(document, style):
    text = yaml.safe_dump(document, sort_keys=False, **style)
    try:
        ours = load_all(text)
    except YAMLSubsetError as exc:
        # only what the subset refuses by design: complex keys (PyYAML writes them for long keys)
        # and tagged keys (for non-string keys when every scalar is quoted)
        assert "complex mapping keys" in str(exc) or "tags on mapping keys" in str(exc), (text, exc)
        return
    assert _same(ours, _pyyaml(text)), text


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(list(" -:#|>[]{},'\"\\\n\tabc1.!&*?%~")), max_size=60))
def test_arbitrary_text_reads_or_is_refused_with_a_location(text):
    try:
        load_all(text)
    except YAMLSubsetError as exc:
        assert exc.line >= 1 and exc.column >= 1


@pytest.mark.parametrize("text,line,column,words", [
    ("a: *nowhere\n", 1, 4, "names no anchor"),
    ("&k key: v\n", 1, 1, "mapping keys"),
    ("<<: 3\n", 1, 1, "merge key"),
    ("a: 1\n? complex\n: v\n", 2, 1, "complex"),
    ("%YAML 1.2\n---\na: 1\n", 1, 1, "directives"),
    ("a: 1\n\tb: 2\n", 2, 1, "tabs"),
    ('a: "never closed\nb: 1\n', 1, 4, "unterminated"),
    ("a: [1, 2\n", 1, 4, "unterminated"),
    ("a: !custom 1\n", 1, 4, "tag"),
    ("a: 1\na: 2\n", 2, 1, "duplicate key"),
])
def test_refusals_name_the_construct_and_its_place(text, line, column, words):
    with pytest.raises(YAMLSubsetError) as caught:
        load_all(text)
    assert (caught.value.line, caught.value.column) == (line, column)
    assert words in str(caught.value)


def test_a_kyverno_policy_as_an_agent_writes_it():
    text = """\
apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata:
  name: disallow-host-network   # the agent's name
  annotations:
    policies.kyverno.io/description: >-
      Host networking lets a pod see
      every interface of its node.
spec:
  validationFailureAction: Audit
  rules:
  - name: host-network
    match:
      any:
      - resources:
          kinds: [Pod]
    validate:
      message: "hostNetwork must be unset or false"
      pattern:
        spec:
          =(hostNetwork): "false"
"""
    assert load_all(text) == _pyyaml(text)
    policy = load_all(text)[0]
    assert policy["spec"]["rules"][0]["validate"]["pattern"] == {"spec": {"=(hostNetwork)": "false"}}
    assert policy["metadata"]["annotations"]["policies.kyverno.io/description"] == \
        "Host networking lets a pod see every interface of its node."


@pytest.mark.parametrize("text", ["\xa0: null\n", "- \xa0: null\n  '0': null\n", "a: \xa0x\xa0\n", "k\xa0v: \u3000\n"])
def test_only_spaces_and_tabs_are_white_space(text):
    """A no-break space (or any Unicode space but space and tab) is content to YAML, not white space."""
    assert load_all(text) == list(yaml.safe_load_all(text))


ANCHORED = [
    "a: &x\n  p: 1\n  q: [1, 2]\nb: *x\nc:\n  <<: *x\n  q: 3\n",
    "d: &s hello\ne: *s\nf:\n- &i\n  k: v\n- *i\n- &j {z: 1}\ng: [&f 1, *f, *j]\nh:\n  <<: [*j, {z: 2, w: 3}]\n  z: 9\n",
    # a Kyverno policy sharing one container pattern between init and app containers
    "spec:\n  rules:\n  - validate:\n      pattern:\n        spec:\n          =(initContainers):\n          - &nopriv\n"
    "            =(securityContext):\n              =(privileged): 'false'\n          containers:\n          - *nopriv\n",
    "list: &l\n- 1\n- 2\nagain: *l\n",
]


@pytest.mark.parametrize("text", ANCHORED)
def test_anchors_aliases_and_merge_keys_read_as_pyyaml_reads_them(text):
    assert load_all(text) == list(yaml.safe_load_all(text))


def test_an_alias_is_a_copy_and_aliases_copy_a_bounded_number_of_nodes():
    doc = load_all("a: &x {k: [1]}\nb: *x\n")[0]
    doc["b"]["k"].append(2)
    assert doc["a"] == {"k": [1]}  # values are trees, as JSON's are
    laughs = "a: &a [1, 1, 1, 1, 1, 1, 1, 1, 1, 1]\n" + "".join(
        f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join(['*' + chr(97 + i)] * 10)}]\n" for i in range(8))
    with pytest.raises(YAMLSubsetError) as caught:
        load_all(laughs)
    assert "aliases copy more than" in str(caught.value)
