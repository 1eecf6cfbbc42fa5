"""An object a fault creates looks like the application's objects beside it (backends/faults.py, agent_view.py):
the labels they all carry, the registries they pull from. Otherwise `kubectl get -l '!app.kubernetes.io/component'`
or a list of the pods' images finds the fault without any diagnosis."""

from __future__ import annotations

import yaml

from itbench_dsl import agent_view
from itbench_dsl.backends import prompt as prompt_backend
from itbench_dsl.backends.decoys import decoys
from itbench_dsl.checking import check_source
from itbench_dsl.compiler import compile_source
from itbench_dsl.diagnostics import Diagnostics

SHOP = """scenario "shop-cart-unreachable" {{
  domain sre
  complexity low
  description "The web front end cannot reach cart."
  topology {{
    namespace "shop"
    deployment "cart" {{
      image = "ghcr.io/example/cart:1.0"
      port "grpc" = 7070
      object_labels {{ "app.kubernetes.io/component" = "cart"  "app.kubernetes.io/part-of" = "shop" }}
    }}
    deployment "web" {{
      image = "ghcr.io/example/web:1.0"
      port "http" = 8080
      env {{ CART_ADDR = "cart:7070" }}
      object_labels {{ "app.kubernetes.io/component" = "web"  "app.kubernetes.io/part-of" = "shop" }}
    }}
    deployment "db" {{
      image = "ghcr.io/example/db:1.0"
      port "sql" = 5432
      object_labels {{ "app.kubernetes.io/component" = "db"  "app.kubernetes.io/part-of" = "shop" }}
    }}
    service "cart" {{
      port "grpc" = 7070
      labels {{ "app.kubernetes.io/component" = "cart"  "app.kubernetes.io/part-of" = "shop" }}
    }}
    service "web" {{
      port "http" = 8080
      labels {{ "app.kubernetes.io/component" = "web"  "app.kubernetes.io/part-of" = "shop" }}
    }}
    "web" -> "cart"
  }}
  {faults}
  expect {{
    root_cause deployment "cart"
    alert KubePodNotReady on pod "cart-*"
    mitigated when {{ deployment "cart" ready }}
  }}
}}
"""


def _compiled(faults: str, tasks: str = ""):
    diags = Diagnostics()
    text = SHOP.format(faults=faults)
    if tasks:  # a chaos Schedule is the agent's to diagnose only (E2037 where it would have to end it)
        text = text.replace("  complexity low\n", f"  complexity low\n  tasks {tasks}\n", 1)
    result = compile_source(text.encode(), "s.itb", diags)
    assert result.files, [d.message for d in diags.errors()]
    return result


def _created(result) -> list[dict]:
    """The objects the faults create (not the application's, nor its decoys, which the injection creates too)."""
    topology = {(o["kind"], o["metadata"].get("namespace"), o["metadata"]["name"])
                for o in [*yaml.safe_load_all(result.files["manifests/topology.yaml"]), *decoys(result.scenario)]
                if isinstance(o, dict)}
    return [o for o in yaml.safe_load_all(result.files["inject/apply.yaml"]) if isinstance(o, dict)
            and (o["kind"], o["metadata"].get("namespace"), o["metadata"]["name"]) not in topology]


def test_a_created_object_wears_the_labels_each_application_object_carries():
    """`app.kubernetes.io/component` has a value of its own on each object (no value is shared by most), and
    each application object holds its own name in it: the created policy carries it with its own name, so
    that no query for objects whose label is not their name lists the fault's objects alone (a label copied
    from the target would, and would name the target too)."""
    result = _compiled('fault ingress_port_blocking_network_policy on deployment "cart"')
    [policy] = _created(result)
    assert policy["kind"] == "NetworkPolicy"
    assert policy["metadata"]["labels"]["app.kubernetes.io/component"] == policy["metadata"]["name"]
    assert policy["metadata"]["labels"]["app.kubernetes.io/part-of"] == "shop"
    application = [o for o in yaml.safe_load_all(dict(result.files)["manifests/topology.yaml"])
                   if isinstance(o, dict) and "app.kubernetes.io/component" in (o["metadata"].get("labels") or {})]
    assert application and all(o["metadata"]["labels"]["app.kubernetes.io/component"] == o["metadata"]["name"]
                               for o in application)


def test_a_created_object_without_the_shared_labels_is_found():
    result = _compiled('fault ingress_port_blocking_network_policy on deployment "cart"')
    files = dict(result.files)
    objects = [o for o in yaml.safe_load_all(files["inject/apply.yaml"]) if isinstance(o, dict)]
    for obj in objects:
        if obj in _created(result):  # the fault's, not a decoy beside it
            obj["metadata"]["labels"].pop("app.kubernetes.io/component")
    files["inject/apply.yaml"] = yaml.safe_dump_all(objects, sort_keys=False).encode()
    found = agent_view.findings(result.scenario, files, prompt_backend.render_chunks(result.scenario),
                                objects=agent_view.from_files(files))
    [finding] = [f for f in found if f.why.startswith("a fingerprint")]
    assert finding.kind == "NetworkPolicy" and finding.text == "app.kubernetes.io/component"
    # the compiled bundle itself is clean
    assert not [f for f in agent_view.findings(result.scenario, result.files) if f.why.startswith("a fingerprint")]


def test_an_image_from_a_registry_the_application_does_not_use_is_flagged():
    """The anti-affinity fault's DaemonSet pulls `registry.access.redhat.com/ubi...`; the application pulls from
    ghcr.io only: W2016, at the fault."""
    text = SHOP.format(faults='fault unschedulable_anti_affinity on deployment "cart"')
    checked = check_source(text.encode(), "s.itb")
    [diag] = [d for d in checked.diagnostics if d.code == "W2016"]
    assert "registry.access.redhat.com" in diag.message and "DaemonSet" in diag.message
    assert "fault unschedulable_anti_affinity" in text.splitlines()[diag.span.line - 1]


def test_an_image_a_fault_writes_into_an_application_workload_is_read_too():
    """An init container the fault adds to the application's own Deployment (hanging_init_container) pulls from a
    registry the application does not use; an image the fault sets in a workload (unsupported_architecture_image)
    names the harness: W2016 reads every image the injection writes, not only created objects'."""
    checked = check_source(SHOP.format(faults='fault hanging_init_container on deployment "cart"').encode(), "s.itb")
    [diag] = [d for d in checked.diagnostics if d.code == "W2016"]
    assert "registry.access.redhat.com" in diag.message and "shop/cart" in diag.message
    assert "initContainers[0].image" in diag.message
    app = {"manifests/topology.yaml": [{"apiVersion": "apps/v1", "kind": "Deployment",
                                        "metadata": {"name": "checkout", "namespace": "shop"},
                                        "spec": {"template": {"spec": {"containers": [
                                            {"name": "checkout", "image": "quay.io/example/checkout:1"}]}}}}]}
    changed = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "checkout", "namespace": "shop"},
               "spec": {"template": {"spec": {"containers": [
                   {"name": "checkout", "image": "quay.io/it-bench/hello-bench-arm64:2.0.0"}]}}}}
    [found] = agent_view.foreign_images({**app, "inject/apply.yaml": [changed]})
    assert "names the harness" in found.why and found.field == "containers[0].image"
    # the application's own image, kept by a fault that changes something else, is no finding
    assert agent_view.foreign_images({**app, "inject/apply.yaml": app["manifests/topology.yaml"]}) == []


def test_a_created_object_of_a_kind_the_application_has_none_of_is_flagged():
    """The application has no NetworkPolicy in `shop` but the fault's, and no component that could carry a
    harmless one (its only workload is the target): `kubectl get networkpolicies -n shop` lists the fault's alone,
    whatever its name and labels (W2018, at the fault). With one of the application's beside it (a decoy), or
    where the agent may not list the kind, the kind tells nothing."""
    solo = SHOP.split("    deployment \"web\"")[0] + "  }}\n  {faults}\n" + SHOP.split("  {faults}\n")[1]
    text = solo.format(faults='fault ingress_port_blocking_network_policy on deployment "cart"')
    checked = check_source(text.encode(), "s.itb")
    [diag] = [d for d in checked.diagnostics if d.code == "W2018"]
    assert "the only NetworkPolicy in namespace shop" in diag.message and "kubectl get networkpolicies -n shop" \
        in diag.message
    assert "fault ingress_port_blocking_network_policy" in text.splitlines()[diag.span.line - 1]
    # with components beside the target, the application gets decoys of the kind, and the kind tells nothing
    shop = check_source(SHOP.format(faults='fault ingress_port_blocking_network_policy on deployment "cart"').encode(),
                        "s.itb")
    assert not [d for d in shop.diagnostics if d.code == "W2018"]

    result = _compiled('fault ingress_port_blocking_network_policy on deployment "cart"')
    objects = agent_view.from_files(result.files)
    [policy] = _created(result)
    assert agent_view.lone_kinds(objects) == []
    bare = {**objects, "manifests/topology.yaml": [o for o in objects["manifests/topology.yaml"]
                                                   if o["kind"] != "NetworkPolicy"],
            "inject/apply.yaml": [o for o in objects["inject/apply.yaml"]  # less the decoys the injection creates
                                  if o["kind"] != "NetworkPolicy" or o == policy]}
    assert [(f.kind, f.name) for f in agent_view.lone_kinds(bare)] == [("NetworkPolicy", policy["metadata"]["name"])]
    decoy = {**policy, "metadata": {**policy["metadata"], "name": "web-allow"}}
    with_decoy = {**bare, "manifests/topology.yaml": [*bare["manifests/topology.yaml"], decoy]}
    assert agent_view.lone_kinds(with_decoy) == []
    elsewhere = {**decoy, "metadata": {**decoy["metadata"], "namespace": "other"}}  # another namespace's: no cover
    assert len(agent_view.lone_kinds({**bare, "manifests/topology.yaml": [*bare["manifests/topology.yaml"],
                                                                         elsewhere]})) == 1
    unlisted = {**bare, "manifests/agent-access.yaml": [
        o for o in bare["manifests/agent-access.yaml"] if o["kind"] not in ("Role", "ClusterRole")]}
    assert agent_view.lone_kinds(unlisted) == []
    # what every namespace holds (a ConfigMap) or the application's workloads make (their pods) is never lone
    made = [{"apiVersion": "v1", "kind": k, "metadata": {"name": "x", "namespace": "shop"}} for k in ("ConfigMap", "Pod")]
    assert agent_view.lone_kinds({**bare, "inject/apply.yaml": made}) == []


def test_the_registry_of_an_image():
    assert agent_view.registry("busybox") == "docker.io"
    assert agent_view.registry("curlimages/curl:8.10.1") == "docker.io"
    assert agent_view.registry("ghcr.io/open-telemetry/demo:2.1.3") == "ghcr.io"
    assert agent_view.registry("localhost:5000/x") == "localhost:5000"


# ---- names: a created object's name says neither its target nor what it does ------------------------------------

NAMED_KINDS = ("ingress_port_blocking_network_policy", "insufficient_resource_quota", "isolating_network_policy")


def test_the_default_names_of_created_objects_say_neither_the_target_nor_the_fault():
    """`cart-ingress`, `cart-resource-quota`, `deny-all-cart` named the answer, and `<namespace>-<hash>` named
    the object as no object of the application is named (`grep -E -- '-[0-9a-f]{10}$'` listed every injected
    one): the defaults are another component's name and a word (`web-main`), the same for the same scenario."""
    from itbench_dsl.faults.base import NAME_WORDS

    for kind in NAMED_KINDS:
        [created] = _created(_compiled(f'fault {kind} on deployment "cart"'))
        name = created["metadata"]["name"]
        component, _, word = name.rpartition("-")
        assert component in ("web", "db") and word in NAME_WORDS, name
        assert name == _created(_compiled(f'fault {kind} on deployment "cart"'))[0]["metadata"]["name"]
        other = _created(_compiled(f'fault {kind} on deployment "web"'))[0]["metadata"]["name"]
        assert not other.startswith("web-"), other


def test_a_chaos_experiments_default_name_names_neither_its_target_nor_its_peer():
    """A partition from web to cart: the Schedule is named after the application's third component, with a word
    its spec does not hold."""
    [schedule] = _created(_compiled('fault network_chaos on deployment "web" { action = partition  direction = to  '
                                       'peer = "cart"  every = 1m }', tasks="diagnose"))
    assert schedule["kind"] == "Schedule" and schedule["metadata"]["name"].startswith("db-"), schedule["metadata"]


def test_default_names_are_unique_within_their_kind():
    """Two faults that create NetworkPolicies in one namespace get two names, whatever the hash picks first."""
    result = _compiled('fault isolating_network_policy on deployment "cart"\n'
                       '  fault ingress_port_blocking_network_policy on deployment "web"\n'
                       '  fault ingress_port_blocking_network_policy on deployment "cart"')
    names = [o["metadata"]["name"] for o in _created(result)]
    assert len(names) == 3 and len(set(names)) == 3, names


def test_a_created_object_named_as_no_application_object_is_found():
    """A hash where no object of the application carries one is a marker (`kubectl get networkpolicies | grep -E
    -- '-[0-9a-f]{10}$'`): E4010 at the fault. Where the application's own objects carry one, it is not."""
    text = SHOP.format(faults='fault isolating_network_policy on deployment "cart" { name = "shop-5d0c9a1e2b" }')
    [diag] = [d for d in check_source(text.encode(), "s.itb").diagnostics
              if d.code == "E4010" and "shape" in d.message]
    assert "a hash, `5d0c9a1e2b`" in diag.message and "NetworkPolicy `shop/shop-5d0c9a1e2b`" in diag.message
    assert "fault isolating_network_policy" in text.splitlines()[diag.span.line - 1]
    hashed = text.replace('deployment "db" {', 'configmap "cart-7f3a9c1e2b" { data { "a" = "b" } }\n    deployment "db" {')
    assert not [d for d in check_source(hashed.encode(), "s.itb").diagnostics if "shape" in d.message]


def test_the_shapes_of_a_names_parts():
    shape = agent_view.token_shape
    assert [shape(t) for t in ("5d0c9a1e2b", "fe61341002", "b405393", "x7k2p", "1701234567")] == \
        ["hash", "hash", "hash", "hash", "number"]
    assert {shape(t) for t in ("cart", "v2", "k8s", "mysql80", "redis7", "s3", "0", "main")} == {"word"}


def test_an_author_written_name_that_says_what_the_object_does_is_found():
    result = _compiled('fault isolating_network_policy on deployment "cart" { name = "deny-all-cart" }')
    found = [f for f in agent_view.findings(result.scenario, result.files) if f.field == "metadata.name"]
    assert [f.name for f in found] == ["deny-all-cart"] and "`deny`" in found[0].why
    neutral = _compiled('fault isolating_network_policy on deployment "cart"')
    assert not [f for f in agent_view.findings(neutral.scenario, neutral.files) if f.field == "metadata.name"]
