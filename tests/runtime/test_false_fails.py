"""Right fixes the mitigation grading must not refuse (docs/evaluator.md, "Fields by meaning"): an environment
variable is the value the kubelet gives the container (through `envFrom`, `valueFrom` or `$(NAME)` expansion as
well as a literal `value`); a resource quantity is its value however written. Each right fix is beside a near
miss the grading must still refuse. The states are the compiler's derived ones, edited as an agent would.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

from test_evaluator import derived, failed, mitigate, obj  # noqa: E402

from itbench_dsl.runtime import evaluator as rt  # noqa: E402
from itbench_dsl.runtime.state import same_image  # noqa: E402


def _container(state: dict, kind: str, name: str) -> dict:
    return obj(state, kind, name)["spec"]["template"]["spec"]["containers"][0]


def _config_map(state: dict, name: str, namespace: str, data: dict) -> None:
    state["resources"]["items"].append({"apiVersion": "v1", "kind": "ConfigMap",
                                        "metadata": {"name": name, "namespace": namespace}, "data": data})


# ---- the kubelet's `$(NAME)` expansion ---------------------------------------------------------------------


@pytest.mark.parametrize("text, want", [
    ("redis:$(PORT)", "redis:6379"),
    ("redis:$$(PORT)", "redis:$(PORT)"),  # `$$` is one literal `$`
    ("redis:$(NONE)", "redis:$(NONE)"),  # an undefined name stays as written
    ("redis:$(PORT", "redis:$(PORT"),  # unclosed
    ("a$b$", "a$b$"),  # a `$` before anything else stays
    ("$$$$", "$$"),
    ("$(PORT)$(PORT)", "63796379"),
])
def test_expansion_follows_the_kubelet(text, want):
    assert rt.expand_env(text, {"PORT": "6379"}) == want


def test_the_environment_is_envfrom_then_env_in_order():
    state = rt.State({"resources": {"items": [
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a", "namespace": "ns"},
         "data": {"HOST": "redis", "PORT": "1", "bad key": "x"}},
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "b", "namespace": "ns"}, "data": {"PORT": "2"}},
    ]}, "captured": ["ns/ConfigMap"]})
    container = {"envFrom": [{"configMapRef": {"name": "a"}}, {"configMapRef": {"name": "b"}, "prefix": "B_"},
                             {"configMapRef": {"name": "b"}}, {"configMapRef": {"name": "gone", "optional": True}}],
                 "env": [{"name": "ADDR", "value": "$(HOST):$(PORT)"}, {"name": "HOST", "value": "other"}]}
    env = rt.container_env(container, state, "ns")
    assert env == {"HOST": "other", "PORT": "2", "B_PORT": "2", "ADDR": "redis:2"}
    container["envFrom"].append({"configMapRef": {"name": "gone"}})  # required and missing: the container never starts
    assert rt.container_env(container, state, "ns") is None


# ---- an environment variable the fault changed, restored through its sources --------------------------------

ENV_CASES = [  # scenario, workload, variable, healthy value (a field change, and a scenario's own predicate)
    ("shop-cart-modified-env", "cart", "REDIS_ADDR", "redis:6379"),
    ("otel-shipping-quote-address", "shipping", "QUOTE_ADDR", "http://quote:8080"),
    ("sregym-missing-env-variable-astronomy-shop", "frontend", "CART_ADDR", "cart:8080"),
]


def _sourced(name, workload, variable, how, value):
    state = derived(name, "solved")
    container = _container(state, "Deployment", workload)
    namespace = obj(state, "Deployment", workload)["metadata"]["namespace"]
    container["env"] = [e for e in container.get("env") or [] if e["name"] != variable]
    head, tail = value[:len(value) // 2], value[len(value) // 2:]
    if how == "envFrom":
        _config_map(state, "fix", namespace, {variable: value})
        container["envFrom"] = [{"configMapRef": {"name": "fix"}}]
    elif how == "prefix":
        _config_map(state, "fix", namespace, {variable[3:]: value})
        container["envFrom"] = [{"configMapRef": {"name": "fix"}, "prefix": variable[:3]}]
    elif how == "expanded":
        container["env"] += [{"name": "PART", "value": tail}, {"name": variable, "value": f"{head}$(PART)"}]
    elif how == "escaped":
        container["env"] += [{"name": "PART", "value": tail}, {"name": variable, "value": f"{head}$$(PART)"}]
    elif how == "defined later":
        container["env"] += [{"name": variable, "value": f"{head}$(PART)"}, {"name": "PART", "value": tail}]
    elif how == "overridden":
        _config_map(state, "fix", namespace, {variable: value})
        container["envFrom"] = [{"configMapRef": {"name": "fix"}}]
        container["env"].append({"name": variable, "value": value + "-other"})
    return state


@pytest.mark.parametrize("name, workload, variable, value", ENV_CASES)
@pytest.mark.parametrize("how", ["envFrom", "prefix", "expanded"])
def test_a_variable_restored_through_its_sources_passes(name, workload, variable, value, how):
    verdict = mitigate(name, _sourced(name, workload, variable, how, value))
    assert verdict["passed"], failed(verdict)


@pytest.mark.parametrize("name, workload, variable, value", ENV_CASES)
@pytest.mark.parametrize("how", ["escaped", "defined later", "overridden"])
def test_a_variable_the_container_does_not_get_healthy_fails(name, workload, variable, value, how):
    assert not mitigate(name, _sourced(name, workload, variable, how, value))["passed"]


@pytest.mark.parametrize("name, workload, variable, value", ENV_CASES)
def test_a_variable_from_envfrom_holding_the_wrong_value_fails(name, workload, variable, value):
    assert not mitigate(name, _sourced(name, workload, variable, "envFrom", value + "-other"))["passed"]


# ---- quantities by value ------------------------------------------------------------------------------------

RESOURCES = "otel-postgresql-insufficient-resources"


@pytest.mark.parametrize("memory, passes", [("100Mi", True), ("102400Ki", True), ("0.09765625Gi", True),
                                            ("200Mi", True), ("1Gi", True), ("99Mi", False), ("5Mi", False)])
def test_a_memory_limit_is_compared_by_value(memory, passes):
    state = derived(RESOURCES, "solved")
    _container(state, "Deployment", "postgresql").setdefault("resources", {}).setdefault("limits", {})["memory"] = memory
    assert mitigate(RESOURCES, state)["passed"] is passes


OOM = "k8sbench-fix-oomkilled"


@pytest.mark.parametrize("cpu", ["0.1", "100m", 0.1, "1", "1000m", 1, None])
def test_a_cpu_limit_written_otherwise_raised_or_removed_passes(cpu):
    state = derived(OOM, "solved")
    limits = _container(state, "Deployment", "backend-api")["resources"]["limits"]
    if cpu is None:
        limits.pop("cpu")
    else:
        limits["cpu"] = cpu
    verdict = mitigate(OOM, state)
    assert verdict["passed"], failed(verdict)


@pytest.mark.parametrize("a, b, equal", [("1", "1000m", True), ("0.5", "500m", True), (1, "1000m", True),
                                         ("1Gi", "1024Mi", True), ("1G", "1000M", True), ("1Gi", "1G", False),
                                         ("500m", "0.50", True), ("1e3", "1k", True), ("1", "1m", False)])
def test_quantities_compare_by_value(a, b, equal):
    assert rt.same(a, b) is equal


# ---- an Istio DENY policy a fault created, edited in place -------------------------------------------------

DENY = "bookinfo-gateway-denies-get"


def _deny_kept(edit) -> dict:
    """The solved state with the fault's DENY policy left beside it, edited by `edit(spec)`."""
    faulty = derived(DENY, "faulty")
    policy = obj(faulty, "AuthorizationPolicy", "reviews-v2-shared")
    edit(policy["spec"])
    state = derived(DENY, "solved")
    state["resources"]["items"].append(policy)
    return state


def _select(labels):
    def edit(spec):
        spec.pop("targetRef", None)
        spec["selector"] = {"matchLabels": labels}
    return edit


def _methods(*methods, **more):
    def edit(spec):
        spec["rules"] = [{"to": [{"operation": {"methods": list(methods), **more}}]}]
    return edit


@pytest.mark.parametrize("edit, passes", [
    (lambda spec: None, False),
    (_methods("TRACE"), True),  # denies only a method the fault's rule never matched, and no application serves
    (_methods("PATCH", "TRACE"), False),  # re-aimed at a method the application may serve: refuses its requests
    (_select({"app": "no-such-app"}), True),  # applies to no pod the namespace runs
    (_methods("GET", paths=["/productpage*"]), False),  # part of what it denied: still denies that part
    (_methods("GET", "TRACE"), False),
    (_methods("*"), False),
    (lambda spec: spec["rules"].append({"to": [{"operation": {"methods": ["TRACE"]}}]}), False),
    (_select({"app": "productpage"}), False),  # still applies to a pod the application runs
    (lambda spec: spec.update(action="ALLOW"), False),  # an ALLOW of GET only denies every other request
    (lambda spec: spec.update(action="ALLOW", rules=[{}]), True),
])
def test_a_deny_policy_edited_in_place_is_judged_by_what_it_still_denies(edit, passes):
    verdict = mitigate(DENY, _deny_kept(edit))
    assert verdict["passed"] is passes, failed(verdict)


@pytest.mark.parametrize("a, b, overlap", [
    ({"to": [{"operation": {"methods": ["GET"]}}]}, {"to": [{"operation": {"methods": ["TRACE"]}}]}, False),
    ({"to": [{"operation": {"methods": ["GET"]}}]}, {"to": [{"operation": {"paths": ["/x"]}}]}, True),
    ({"to": [{"operation": {"paths": ["/api*"]}}]}, {"to": [{"operation": {"paths": ["/api/v1"]}}]}, True),
    ({"to": [{"operation": {"paths": ["/api*"]}}]}, {"to": [{"operation": {"paths": ["/web*"]}}]}, False),
    ({"to": [{"operation": {"paths": ["*.js"]}}]}, {"to": [{"operation": {"paths": ["/api*"]}}]}, True),
    ({"to": [{"operation": {"methods": ["GET"]}}]}, {"to": [{"operation": {"notMethods": ["GET"]}}]}, False),
    ({"from": [{"source": {"ipBlocks": ["10.0.0.0/8"]}}]}, {"from": [{"source": {"ipBlocks": ["10.1.2.3"]}}]}, True),
    ({"from": [{"source": {"ipBlocks": ["10.0.0.0/8"]}}]}, {"from": [{"source": {"ipBlocks": ["192.168.0.0/16"]}}]},
     False),
    ({"when": [{"key": "request.headers[x]", "values": ["a"]}]}, {"when": [{"key": "request.headers[x]", "values": ["b"]}]},
     False),
    ({}, {"to": [{"operation": {"methods": ["TRACE"]}}]}, True),
])
def test_istio_rules_overlap_where_some_request_matches_both(a, b, overlap):
    assert rt.istio_rules_overlap(a, b) is overlap
    assert rt.istio_rules_overlap(b, a) is overlap


# ---- a claim the fault pointed pods at, made good ----------------------------------------------------------

CLAIMS = [("bookinfo-reviews-nonexistent-pvc", "reviews-v3", "reviews-v3"),
          ("k8sbench-fix-pending-pod", "homepage-pod", "homepage-pvc")]
# the faults that mount their claim over the content the image serves (nginx's document root): a claim that
# binds there is a new, empty volume hiding it, so no claim made good mends them
HIDING = {"k8sbench-fix-pending-pod"}


def _claimed(name, workload, claim, edit) -> dict:
    """The solved state with the workload's template as the fault left it (its volume on the fault's claim)
    and the claim recreated with a storage class that binds, then edited by `edit(template, claim)`."""
    faulty = derived(name, "faulty")
    state = derived(name, "solved")
    obj(state, "Deployment", workload)["spec"]["template"] = obj(faulty, "Deployment", workload)["spec"]["template"]
    made = obj(faulty, "PersistentVolumeClaim", claim)
    made["spec"]["storageClassName"] = "standard"
    made.setdefault("status", {})["phase"] = "Bound"
    edit(obj(state, "Deployment", workload)["spec"]["template"]["spec"], made)
    state["resources"]["items"].append(made)
    return state


def _renamed_claim(template, claim):
    claim["metadata"]["name"] = "another-claim"
    for volume in template["volumes"]:
        if "persistentVolumeClaim" in volume:
            volume["persistentVolumeClaim"]["claimName"] = "another-claim"


@pytest.mark.parametrize("name, workload, claim", CLAIMS)
@pytest.mark.parametrize("edit, passes", [
    (lambda t, c: None, True),  # recreated with a storage class that binds
    (lambda t, c: c["spec"]["resources"]["requests"].update(storage="10Gi"), True),  # larger
    (_renamed_claim, True),  # another bound claim of that meaning, under another name
    (lambda t, c: c["status"].update(phase="Pending"), False),
    (lambda t, c: c["spec"]["resources"]["requests"].update(storage="1Ki"), False),
    (lambda t, c: c["spec"].update(accessModes=["ReadOnlyMany"]), False),
    (lambda t, c: c["metadata"].update(deletionTimestamp="2026-01-01T00:00:00Z"), False),
])
def test_a_claim_is_judged_by_what_the_pods_mount(name, workload, claim, edit, passes):
    verdict = mitigate(name, _claimed(name, workload, claim, edit))
    assert verdict["passed"] is (passes and name not in HIDING), failed(verdict)


@pytest.mark.parametrize("name, workload, claim", CLAIMS)
def test_the_faults_own_claim_still_fails(name, workload, claim):
    faulty = derived(name, "faulty")
    class_ = obj(faulty, "PersistentVolumeClaim", claim)["spec"]["storageClassName"]
    state = _claimed(name, workload, claim, lambda t, c: c["spec"].update(storageClassName=class_))
    assert not mitigate(name, state)["passed"]


@pytest.mark.parametrize("name, workload, claim", CLAIMS)
@pytest.mark.parametrize("created, volume, passes", [(True, "pvc-1", True), (True, None, False), (False, "pvc-1", False)])
def test_a_claim_of_the_faults_class_binds_once_the_class_exists(name, workload, claim, created, volume, passes):
    """The fault's storage class did not exist; created, the claim of it is provisioned (bound to a volume):
    the pods mount a claim that serves. Without the class, or a volume, it is no fix."""
    class_ = obj(derived(name, "faulty"), "PersistentVolumeClaim", claim)["spec"]["storageClassName"]

    def edit(template, made):
        made["spec"]["storageClassName"] = class_
        if volume:
            made["spec"]["volumeName"] = volume

    state = _claimed(name, workload, claim, edit)
    if created:
        state["resources"]["items"].append({"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
                                            "metadata": {"name": class_}, "provisioner": "rancher.io/local-path"})
    verdict = mitigate(name, state)
    assert verdict["passed"] is (passes and name not in HIDING), failed(verdict)


# ---- an image tag pinned to its digest ---------------------------------------------------------------------

IMAGE = "otel-checkout-nonexistent-image"
DIGEST = "@sha256:" + "3f" * 32


def _pinned(image_of) -> dict:
    """The solved state with checkout's template and pods running `image_of(healthy image)`."""
    state = derived(IMAGE, "solved")
    container = _container(state, "Deployment", "checkout")
    healthy, container["image"] = container["image"], image_of(container["image"])
    for pod in state["resources"]["items"]:
        if pod["kind"] == "Pod" and pod["metadata"]["name"].startswith("checkout-"):
            for c in pod["spec"]["containers"]:
                if c["image"] == healthy:
                    c["image"] = container["image"]
            for status in pod.get("status", {}).get("containerStatuses", ()):
                if status.get("image") == healthy:
                    status["image"] = container["image"]
                    status["imageID"] = healthy.rpartition(":")[0] + DIGEST
    return state


@pytest.mark.parametrize("image_of, passes", [
    (lambda image: image, True),
    (lambda image: image + DIGEST, True),                          # the healthy tag, pinned
    (lambda image: image.rpartition(":")[0] + DIGEST, False),      # a digest without the tag: no tag's image
    (lambda image: image.rpartition(":")[0] + ":other" + DIGEST, False),  # another tag, pinned
])
def test_the_healthy_tag_pinned_to_a_digest_is_the_healthy_image(image_of, passes):
    verdict = mitigate(IMAGE, _pinned(image_of))
    assert verdict["passed"] is passes, failed(verdict)


@pytest.mark.parametrize("a, b, same", [
    ("nginx:1.25", "docker.io/library/nginx:1.25" + DIGEST, True),
    ("nginx:1.25" + DIGEST, "nginx:1.25" + DIGEST.replace("3f", "4e"), False),  # two digests: by digest
    ("nginx:1.25", "nginx" + DIGEST, False),
    ("nginx", "nginx:latest" + DIGEST, True),
    ("nginx:1.25", "nginx:1.26" + DIGEST, False),
])
def test_images_compare_by_tag_where_one_side_pins_it(a, b, same):
    assert same_image(a, b) is same
    assert same_image(b, a) is same


# ---- a created NetworkPolicy's ipBlock, read by the pods' addresses -----------------------------------------

BLOCK = "sregym-network-policy-block"


def _policy_edited(egress, address=None) -> dict:
    """The faulty state with the fault's NetworkPolicy admitting all ingress and `egress`, edited in place; every
    pod given `address` when one is given."""
    state = derived(BLOCK, "faulty")
    solved = {(o["kind"], o["metadata"]["name"]) for o in derived(BLOCK, "solved")["resources"]["items"]}
    policy = next(o for o in state["resources"]["items"] if o["kind"] == "NetworkPolicy"
                  and (o["kind"], o["metadata"]["name"]) not in solved)
    policy["spec"]["ingress"], policy["spec"]["egress"] = [{}], egress
    policy["spec"]["policyTypes"] = ["Ingress", "Egress"]
    for pod in state["resources"]["items"]:
        if pod["kind"] == "Pod" and address is not None:
            pod["status"]["podIP"], pod["status"]["podIPs"] = address, [{"ip": address}]
    return state


def _to(cidr, *excepted):
    return [{"to": [{"ipBlock": {"cidr": cidr, **({"except": list(excepted)} if excepted else {})}}]}]


@pytest.mark.parametrize("egress, address, passes", [
    (_to("0.0.0.0/0"), None, True),
    (_to("0.0.0.0/0", "169.254.169.254/32"), None, True),   # everything but the metadata address
    (_to("10.0.0.0/8"), None, True),                         # the pod network
    (_to("10.0.0.0/8"), "10.244.1.7", True),
    (_to("10.0.0.0/8", "10.244.0.0/16"), "10.244.1.7", False),  # the pods' range excepted
    (_to("192.168.0.0/16"), "10.244.1.7", False),            # addresses no pod has
    (_to("0.0.0.0/0", "0.0.0.0/1", "128.0.0.0/1"), None, False),
    (_to("not-a-cidr"), None, False),
])
def test_an_ipblock_admits_the_pods_whose_addresses_it_holds(egress, address, passes):
    verdict = mitigate(BLOCK, _policy_edited(egress, address))
    assert verdict["passed"] is passes, failed(verdict)


# ---- a namespace-wide STRICT PeerAuthentication overridden by workloads' own ------------------------------

MTLS = "bookinfo-productpage-strict-mtls"


def _peer_auth(name, mode, labels=None, namespace="book-info") -> dict:
    spec = {"mtls": {"mode": mode}} if mode else {}
    if labels is not None:
        spec["selector"] = {"matchLabels": labels}
    return {"apiVersion": "security.istio.io/v1", "kind": "PeerAuthentication",
            "metadata": {"name": name, "namespace": namespace}, "spec": spec}


def _with_peer_auths(*policies) -> dict:
    """The faulty state (the fault's namespace-wide STRICT policy and productpage out of the mesh kept), its
    alert quiet as once the calls succeed, with `policies` applied beside."""
    state = derived(MTLS, "faulty")
    state["alerts"] = derived(MTLS, "solved")["alerts"]
    state["resources"]["items"] += list(policies)
    return state


def _callees(mode, apps=("details", "reviews", "ratings")):
    return [_peer_auth(f"{app}-exception", mode, {"app": app}) for app in apps]


@pytest.mark.parametrize("policies, passes", [
    ([], False),
    (_callees("PERMISSIVE"), True),                       # every workload productpage calls accepts plain text
    (_callees("DISABLE"), True),
    (_callees("PERMISSIVE", ("details", "reviews")), False),  # ratings, called by reviews, still STRICT
    (_callees("UNSET"), False),                           # inherits the namespace's STRICT
    (_callees(None), False),
    ([_peer_auth("productpage-exception", "PERMISSIVE", {"app": "productpage"})], False),  # the caller's own
    ([_peer_auth("namespace-permissive", "PERMISSIVE")], False),  # one namespace-wide beside: the fault's in force
    (_callees("PERMISSIVE", ("details", "reviews", "ratings"))[:2]
     + [_peer_auth("ratings-exception", "PERMISSIVE", {"app": "ratings"}, namespace="default")], False),
])
def test_a_namespace_strict_policy_is_judged_by_the_mode_in_force_per_workload(policies, passes):
    verdict = mitigate(MTLS, _with_peer_auths(*policies))
    assert verdict["passed"] is passes, failed(verdict)


def _dated(policy: dict, at: str) -> dict:
    return {**policy, "metadata": {**policy["metadata"], "creationTimestamp": at}}


@pytest.mark.parametrize("fault_at, other_at, acting", [
    ("2026-01-02T00:00:00Z", "2026-01-01T00:00:00Z", False),  # the other is older: Istio takes it
    ("2026-01-01T00:00:00Z", "2026-01-02T00:00:00Z", True),   # the fault's is older: in force
    ("2026-01-01T00:00:00Z", None, True),                     # undated: the fault's taken
    ("2026-01-01T00:00:00Z", "2026-01-01T00:00:00Z", False),  # one instant: by name ("a-..." first)
])
@pytest.mark.parametrize("level", ["namespace", "workload", "mesh"])
def test_of_several_peer_authentications_at_one_level_istio_takes_the_oldest(level, fault_at, other_at, acting):
    where = "istio-system" if level == "mesh" else "shop"
    labels = {"app": "web"} if level == "workload" else None
    fault = _dated(_peer_auth("z-fault-strict", "STRICT", labels, namespace=where), fault_at)
    other = _peer_auth("a-permissive", "PERMISSIVE", labels, namespace=where)
    other = _dated(other, other_at) if other_at else other
    web = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "shop"},
           "spec": {"template": {"metadata": {"labels": {"app": "web"}}}}}
    state = rt.State({"resources": {"items": [fault, other, web]}})
    assert rt.acts(fault, state) is acting


@pytest.mark.parametrize("beside, acting", [
    ([], True),
    ([_peer_auth("ns-permissive", "PERMISSIVE", namespace="shop")], False),   # the namespace's over the mesh's
    ([_peer_auth("ns-unset", "UNSET", namespace="shop")], True),
    ([_peer_auth("web-permissive", "PERMISSIVE", {"app": "web"}, namespace="shop")], False),
    ([_peer_auth("web-permissive", "PERMISSIVE", {"app": "web"}, namespace="other")], True),
])
def test_a_mesh_wide_strict_policy_yields_to_namespace_and_workload_ones(beside, acting):
    mesh = _peer_auth("mesh-strict", "STRICT", namespace="istio-system")
    web = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "shop"},
           "spec": {"template": {"metadata": {"labels": {"app": "web"}}}}}
    state = rt.State({"resources": {"items": [mesh, web, *beside]}})
    assert rt.acts(mesh, state) is acting
