"""anonymize renames a Service everywhere a program reaches it by name, and a variant still naming an original
is refused (docs/generators.md, `anonymize`): on library scenarios whose applications reach services by host
names in environment values, container arguments and ConfigMap data (the OpenTelemetry demo's
`--prometheus.server-url=http://prometheus:9090`, `KAFKA_ADDR=kafka:9092`, the collector's `endpoint:
http://opensearch:9200`), and one with storage classes, volumes and claims (hotel reservation)."""

from __future__ import annotations

import dataclasses
import random
import re

import pytest

from itbench_dsl import ast
from itbench_dsl import variants as gen
from itbench_dsl.backends.manifests import topology_manifests
from itbench_dsl.variants.builtin import anonymize

from support.variants import parent, run

CASES = ["sre/otel-shipping-quote-address.itb", "sre/hotel-reservation-noop-detection.itb"]
# a host at a host position: after a scheme or `@`, or before a port or a cluster domain
HOST = r"(?:(?<=//)|(?<=@))({0})(?=:\d|/|\.[a-z0-9-]+\.svc|[\s\"',;)]|$)|(?<![A-Za-z0-9_.-])({0})(?=:\d|\.[a-z0-9-]+\.svc)"
LABEL = r"[a-z](?:[a-z0-9-]*[a-z0-9])?"  # any DNS label


def _strings(value, key=""):
    """(key, string) of every string a manifest holds, images aside (they must stay pullable)."""
    if isinstance(value, dict):
        for k, v in value.items():
            if k != "image":
                yield from _strings(v, k)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v, key)
    elif isinstance(value, str):
        yield key, value


def _originals(rel: str) -> set[str]:
    p = parent(rel)
    ctx = gen.Context(parent=p, library=[p], seed=0, rng=random.Random(0), n=None, generator="anonymize")
    namespaces, names = anonymize.original_names(ctx)
    # cluster-scoped storage is named by claims (`storageClassName`): read here from the parent itself
    topology = p.scenario.topology
    return (namespaces | names | {o.name for o in topology.storage_classes + topology.persistent_volumes}
            | {v.storage_class for v in topology.persistent_volumes if v.storage_class})


@pytest.fixture(scope="module", params=CASES)
def variant(request):
    result = run("anonymize", [request.param], seed=5)
    assert result.variants, [s.reason for s in result.skips]
    v = result.variants[0]
    checked = gen.check_document(v.document, f"variants/{v.file}")
    assert checked.scenario is not None, checked.problems
    return request.param, v, checked


def test_no_original_name_at_a_host_position_or_as_an_object_name(variant):
    rel, _, checked = variant
    originals = _originals(rel)
    manifests = topology_manifests(checked.scenario.topology)
    host = re.compile(HOST.format("|".join(re.escape(n) for n in sorted(originals, key=len, reverse=True))))
    found = [(m["kind"], m["metadata"]["name"], key, text[:100]) for m in manifests for key, text in _strings(m)
             if host.search(text)]
    assert found == []
    named = [(m["kind"], m["metadata"]["name"]) for m in manifests if m["metadata"]["name"] in originals]
    assert named == []
    # what a manifest names by reference: claims, storage classes, ConfigMaps, service accounts
    refs = [(key, text) for m in manifests for key, text in _strings(m)
            if key in ("claimName", "storageClassName", "volumeName", "serviceAccountName", "priorityClassName",
                       "ingressClassName") and text in originals]
    assert refs == []


def _unreached(topology, names: str) -> set[str]:
    """The hosts a program of the topology reaches (names matching `names`) that are no Service of it."""
    services = {s.name for s in topology.services}
    host = re.compile(HOST.format(names))
    return {m.group(1) or m.group(2) for mf in topology_manifests(topology)
            for _, text in _strings(mf) for m in host.finditer(text)} - services


def test_every_host_reference_is_a_service_of_the_variant(variant):
    """A host the parent's programs reach that is a Service of the parent is one of the variant: the variant
    reaches no more missing hosts than its parent (the demo's Grafana datasource names a `jaeger` host that the
    demo does not declare, renamed all the same)."""
    rel, _, checked = variant
    before = _unreached(parent(rel).scenario.topology, LABEL)
    after = _unreached(checked.scenario.topology, LABEL)
    assert len(after) <= len(before), (sorted(after), sorted(before))


def test_the_variant_passes_check_strict(variant):
    _, _, checked = variant
    assert checked.warnings == []


def test_a_variant_still_naming_an_original_in_its_topology_is_refused():
    """leftover() reads the topology too: an original put back at a host position of an argument, or as a
    claim's storage class, is a reason, not a variant."""
    rel = "sre/otel-shipping-quote-address.itb"
    result = run("anonymize", [rel], seed=5)
    document = result.variants[0].document
    originals = _originals(rel)
    assert "prometheus" in originals
    mapping = {n: n + "-renamed" for n in originals}

    def put_back(text: str) -> str:
        return re.sub(r"//svc-[a-z]+-[a-z]+:9090", "//prometheus:9090", text)
    topology = next(s for s in document.statements if isinstance(s, ast.Topology))
    back = dataclasses.replace(document, statements=tuple(
        gen.map_strings(dataclasses.replace(document, statements=(topology,)), put_back, skip=()).statements[0]
        if s is topology else s for s in document.statements))
    assert back != document
    p = parent(rel)
    ctx = gen.Context(parent=p, library=[p], seed=0, rng=random.Random(0), n=None, generator="anonymize")
    assert "prometheus" in (anonymize.leftover(back, ctx, mapping) or "")


def test_a_bare_name_is_a_host_only_as_a_host_keys_value():
    """`"host": "cart"` in JSON, `redisHost: cart` in YAML, `db_address = 'cart'`: renamed. The same name as the
    value of any other key (`"name": "cart"`, `type: jaeger`, `"ghost": "cart"`) is data, kept."""
    renamer = anonymize.Renamer({"cart": "svc-a", "jaeger": "svc-j"})
    assert renamer.hosts('{"host": "cart", "name": "cart", "ghost": "cart"}') == \
        '{"host": "svc-a", "name": "cart", "ghost": "cart"}'
    assert renamer.hosts("redisHost: cart\ntype: jaeger\nendpoint: jaeger\n") == \
        "redisHost: svc-a\ntype: jaeger\nendpoint: svc-j\n"
    assert renamer.hosts("db_address = 'cart'\nserverURL: \"cart\"") == "db_address = 'svc-a'\nserverURL: \"svc-a\""
    assert renamer.hosts('{"ghosts": ["cart"], "cartHost": "jaeger-ui"}') == '{"ghosts": ["cart"], "cartHost": "jaeger-ui"}'


def test_a_list_valued_host_keys_items_are_renamed_as_scalar_hosts_are():
    """A key whose last word says hosts (plural: `hosts`, `hostnames`, `bootstrap_servers`) holds a list of them, as
    a flow list or a YAML block list: each item that is a whole name is renamed; another key's list is data."""
    renamer = anonymize.Renamer({"cart": "svc-a", "jaeger": "svc-j"})
    assert renamer.hosts('{"hosts": ["cart", "jaeger:16686"], "names": ["cart"]}') == \
        '{"hosts": ["svc-a", "svc-j:16686"], "names": ["cart"]}'
    assert renamer.hosts('{\\"hosts\\": [\\"cart\\"]}') == '{\\"hosts\\": [\\"svc-a\\"]}'
    assert renamer.hosts("hostnames:\n  - cart\n  - \"jaeger\"\ntags:\n  - cart\n") == \
        "hostnames:\n  - svc-a\n  - \"svc-j\"\ntags:\n  - cart\n"
    assert renamer.hosts("bootstrap_servers = ['cart', 'cartography']") == "bootstrap_servers = ['svc-a', 'cartography']"


def test_a_topology_list_of_host_names_is_renamed():
    """A hostAliases entry's `hostnames` (`cart.shop.svc` in a list): renamed as a scalar host value is, and
    the renaming's own probe (leftover) finds what it renames."""
    renamer = anonymize.Renamer({"cart": "svc-a"}, namespaces={"shop"})
    entry = ast.Attr("hostnames", (), ast.ListValue((ast.Str("cart.shop.svc"), ast.Str("cart"), ast.Str("other"))))
    renamed = renamer.topology_entry(entry)
    assert [i.value for i in renamed.value.items] == ["svc-a.shop.svc", "svc-a", "other"]


def test_a_host_keys_value_in_configmap_data_is_renamed_and_checked():
    """A ConfigMap's JSON names the cache as `"host": "redis"`: the variant names the renamed Service there, keeps
    `"name": "redis"` (data), and leftover() refuses a variant that still says `"host": "redis"`."""
    from pathlib import Path

    from itbench_dsl.diagnostics import Diagnostics

    path = Path(__file__).parent / "shop-two-modified-env.itb"
    text = path.read_text().replace('    deployment "redis" {', '    configmap "cart-settings" {\n      data {\n'
                                    '        "cache.json" = "{\\"host\\": \\"redis\\", \\"name\\": \\"redis\\"}"\n'
                                    '      }\n    }\n    deployment "redis" {', 1)
    text = text.replace('        POD_IP = field("status.podIP")',
                        '        POD_IP = field("status.podIP")\n        CACHE = configmap_key("cart-settings", "cache.json")', 1)
    loaded = gen.load_input(text.encode(), "shop.itb", Diagnostics())
    assert loaded is not None
    result = gen.run([loaded], [("anonymize", gen.load_generator("anonymize"))], 3, None)
    assert result.variants, [s.reason for s in result.skips]
    document = result.variants[0].document
    data = [v for v in re.findall(r'"cache\.json" = "(.*)"', gen.variant_text(document))]
    assert data and '\\"name\\": \\"redis\\"' in data[0] and '\\"host\\": \\"redis\\"' not in data[0], data
    assert re.search(r'\\"host\\": \\"svc-[a-z]+-[a-z]+\\"', data[0]), data

    def put_back(value: str) -> str:
        return re.sub(r'("host": ")svc-[a-z]+-[a-z]+', r"\1redis", value)
    back = gen.map_strings(document, put_back, skip=())
    ctx = gen.Context(parent=loaded, library=[loaded], seed=0, rng=random.Random(0), n=None, generator="anonymize")
    assert "redis" in (anonymize.leftover(back, ctx, anonymize.renaming(ctx)) or "")


DEFAULT_NAMESPACE = """\
scenario "declared-default-namespace" {
  domain ciso
  complexity low
  description "A workload runs in the default namespace; the agent must write a Kyverno policy that reports it."
  tags ["CIS", "Kyverno"]

  control "no-default-namespace" {
    benchmark = "CIS Kubernetes Benchmark"
    reads = ["metadata.namespace"]
    goal = "The default namespace should not be used: report every workload deployed to it."
  }

  task kyverno_policy

  topology {
    namespace "default"
    namespace "apps"
    deployment "web" {
      namespace = "default"
      container "web" { image = "nginxinc/nginx-unprivileged:1.27" }
    }
    deployment "api" {
      namespace = "apps"
      container "api" { image = "nginxinc/nginx-unprivileged:1.27" }
    }
  }

  gap deployment "web"
  compliant deployment "api"
}
"""


def test_the_namespaces_the_cluster_creates_keep_their_names():
    """`default` is the cluster's namespace, not one the scenario owns: renamed, a default-namespace control
    would be about an ordinary namespace. The scenario's own namespace and objects are renamed."""
    from itbench_dsl.diagnostics import Diagnostics

    diags = Diagnostics()
    loaded = gen.load_input(DEFAULT_NAMESPACE.encode(), "defns.itb", diags)
    assert loaded is not None, [d.message for d in diags.items]
    result = gen.run([loaded], [("anonymize", gen.load_generator("anonymize"))], 1, None)
    (variant,) = [v for v in result.variants if getattr(v, "document", None) is not None]
    text = gen.variant_text(variant.document)
    assert 'namespace "default"' in text and "The default namespace should not be used" in text
    assert 'namespace "apps"' not in text and 'deployment "web"' not in text
