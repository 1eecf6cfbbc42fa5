"""Objects and fields judged by their effect, tried by hand (docs/evaluator.md, "Objects a fault created" and
"Fields by meaning"): a right fix that leaves the fault's object in place but takes its effect away passes,
as Istio, Kubernetes' NetworkPolicy union, the scheduler, the kubelet's probes and the RBAC authorizer read
the objects; the same objects keeping their effect fail.
"""

from __future__ import annotations

import copy
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

from test_evaluator import derived, failed, mitigate, obj  # noqa: E402

from itbench_dsl.runtime import evaluator as rt  # noqa: E402


def _keep(state: dict, faulty: dict, kind: str, name: str | None = None) -> dict:
    """The object of the faulty state put back into `state` (a fix that kept it), returned for editing. Without a
    name, the one object of that kind the faulty state holds and `state` does not (the application's decoys are in
    both): the compiler names what a fault creates."""
    if name is None:
        kept = {o["metadata"]["name"] for o in state["resources"]["items"] if o["kind"] == kind}
        [name] = [o["metadata"]["name"] for o in faulty["resources"]["items"] if o["kind"] == kind
                  and o["metadata"]["name"] not in kept]
    item = copy.deepcopy(obj(faulty, kind, name))
    state["resources"]["items"] = [o for o in state["resources"]["items"]
                                   if not (o["kind"] == kind and o["metadata"]["name"] == name)] + [item]
    return item


# ---- F1: Istio objects by what Istio does with them -----------------------------------------------------

MTLS = "bookinfo-productpage-strict-mtls"
GATEWAY = "bookinfo-gateway-denies-get"


@pytest.mark.parametrize("mode, passes", [("PERMISSIVE", True), ("DISABLE", True), ("UNSET", True),
                                          ("STRICT", False)])
def test_strict_mtls_is_undone_by_a_peer_authentication_that_no_longer_requires_it(mode, passes):
    faulty = derived(MTLS, "faulty")
    state = derived(MTLS, "solved")
    _keep(state, faulty, "Deployment", "productpage-v1")  # the pods stay out of the mesh
    policy = _keep(state, faulty, "PeerAuthentication")
    policy["spec"]["mtls"]["mode"] = mode
    verdict = mitigate(MTLS, state)
    assert verdict["passed"] is passes, failed(verdict)


def test_strict_mtls_on_one_port_still_acts():
    policy = {"apiVersion": "security.istio.io/v1", "kind": "PeerAuthentication", "metadata": {"name": "p"},
              "spec": {"mtls": {"mode": "PERMISSIVE"}, "portLevelMtls": {"9080": {"mode": "STRICT"}}}}
    assert rt.acts(policy)


@pytest.mark.parametrize("edit, passes", [
    (lambda s: s.update(action="AUDIT"), True),  # only logs
    (lambda s: s.update(action="ALLOW", rules=[{}]), True),  # an empty rule matches every request
    (lambda s: s.update(action="ALLOW", rules=[{"to": [{"operation": {}}]}]), True),
    (lambda s: s.pop("rules"), True),  # a DENY policy with no rule never matches
    (lambda s: None, False),
    (lambda s: s.update(action="ALLOW"), False),  # allows GET only: every other method is denied
    (lambda s: s.update(action="ALLOW", rules=[]), False),  # ALLOW with no rule denies everything
    (lambda s: s.update(action="CUSTOM"), False),  # an extension decides: taken as acting
])
def test_a_gateway_authorization_policy_is_judged_by_its_action_and_rules(edit, passes):
    state = derived(GATEWAY, "solved")
    policy = _keep(state, derived(GATEWAY, "faulty"), "AuthorizationPolicy")
    edit(policy["spec"])
    verdict = mitigate(GATEWAY, state)
    assert verdict["passed"] is passes, failed(verdict)


def _vs(**route) -> dict:
    return {"apiVersion": "networking.istio.io/v1", "kind": "VirtualService", "metadata": {"name": "v"},
            "spec": {"hosts": ["ratings"], "http": [{"route": [{"destination": {"host": "ratings"}}], **route}]}}


@pytest.mark.parametrize("vs, effect", [
    (_vs(fault={"abort": {"httpStatus": 500, "percentage": {"value": 100}}}), True),
    (_vs(fault={"delay": {"fixedDelay": "7s"}}), True),  # no percentage: every request
    (_vs(fault={"abort": {"httpStatus": 500, "percentage": {"value": 0}}}), False),
    (_vs(), False),  # the fault removed: the hosts' traffic goes where it went
    (_vs(timeout="1ms"), True),
    (_vs(route=[{"destination": {"host": "reviews"}}]), True),  # another host
    (_vs(route=[{"destination": {"host": "ratings.book-info.svc.cluster.local", "subset": "v9"}}]), True),
])
def test_a_virtual_service_acts_while_it_does_more_than_route_its_hosts_to_themselves(vs, effect):
    assert rt.acts(vs) is effect


@pytest.mark.parametrize("spec, effect", [
    ({"host": "ratings", "trafficPolicy": {"tls": {"mode": "DISABLE"}}}, True),
    ({"host": "ratings", "subsets": [{"name": "v1", "trafficPolicy": {"connectionPool": {"tcp": {"maxConnections": 1}}}}]}, True),
    ({"host": "ratings", "subsets": [{"name": "v1", "labels": {"version": "v1"}}]}, False),
    ({"host": "ratings"}, False),
])
def test_a_destination_rule_acts_while_it_sets_a_traffic_policy(spec, effect):
    assert rt.acts({"apiVersion": "networking.istio.io/v1", "kind": "DestinationRule", "spec": spec}) is effect


# ---- F2: NetworkPolicies as Kubernetes unions them --------------------------------------------------------

BLOCK = "sregym-network-policy-block"
DENY = "mongodb-rate-shared"
RECOMMENDATION = {"matchLabels": {"io.kompose.service": "recommendation"}}


def _allow(name: str, selector: dict, types: list, rule: dict) -> dict:
    spec = {"podSelector": selector, "policyTypes": types}
    for t in types:
        spec["ingress" if t == "Ingress" else "egress"] = [rule]
    return {"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
            "metadata": {"name": name, "namespace": "hotel-reservation"}, "spec": spec}


BOTH = ["Ingress", "Egress"]


@pytest.mark.parametrize("extra, passes", [
    ([_allow("allow", RECOMMENDATION, BOTH, {})], True),  # a second policy admitting all: the union undoes it
    ([_allow("allow", {}, BOTH, {})], True),  # an empty podSelector selects every pod
    ([_allow("allow-in", {}, ["Ingress"], {}), _allow("allow-out", {}, ["Egress"], {})], True),
    ([_allow("allow", RECOMMENDATION, ["Ingress"], {})], False),  # egress still denied
    ([_allow("allow", {"matchLabels": {"io.kompose.service": "frontend"}}, BOTH, {})], False),  # other pods
    ([_allow("allow", RECOMMENDATION, BOTH, {"ports": [{"port": 8085}]})], False),  # one port only
    ([_allow("allow", RECOMMENDATION, BOTH, {"from": [{"podSelector": {}}], "to": [{"podSelector": {}}]})],
     False),  # only the namespace's own pods: DNS and every other namespace refused
    ([_allow("allow", RECOMMENDATION, BOTH, {"from": [{"namespaceSelector": {}}], "to": [{"namespaceSelector": {}}]})],
     True),  # every pod of every namespace
    ([], False),
])
def test_a_deny_all_policy_is_undone_by_a_policy_admitting_what_it_blocks(extra, passes):
    state = derived(BLOCK, "solved")
    _keep(state, derived(BLOCK, "faulty"), "NetworkPolicy", DENY)
    state["resources"]["items"] += copy.deepcopy(extra)
    verdict = mitigate(BLOCK, state)
    assert verdict["passed"] is passes, failed(verdict)


@pytest.mark.parametrize("rule, passes", [
    ({"from": [{}], "to": [{}]}, True),  # a peer with no field: every peer
    ({"from": [{"namespaceSelector": {}}], "to": [{"namespaceSelector": {}, "podSelector": {}}]}, True),
    ({"from": [{"ipBlock": {"cidr": "0.0.0.0/0"}}], "to": [{"ipBlock": {"cidr": "0.0.0.0/0"}}]}, True),
    ({"from": [{"ipBlock": {"cidr": "0.0.0.0/0", "except": ["10.0.0.0/8"]}}],
      "to": [{"ipBlock": {"cidr": "0.0.0.0/0"}}]}, False),
    ({"from": [{"namespaceSelector": {}}], "to": [{"namespaceSelector": {}}], "ports": []}, True),  # no port: all
    ({"from": [{"namespaceSelector": {"matchLabels": {"x": "y"}}}], "to": [{}]}, False),
])
def test_the_policy_itself_edited_to_admit_every_peer(rule, passes):
    state = derived(BLOCK, "solved")
    policy = _keep(state, derived(BLOCK, "faulty"), "NetworkPolicy", DENY)
    policy["spec"]["ingress"] = [{k: v for k, v in rule.items() if k != "to"}]
    policy["spec"]["egress"] = [{k: v for k, v in rule.items() if k != "from"}]
    verdict = mitigate(BLOCK, state)
    assert verdict["passed"] is passes, failed(verdict)


def _calls(ingress_port=8085, egress_port=27017, dns=True, caller="frontend") -> dict:
    """A policy admitting exactly the calls the application makes through recommendation's pods."""
    egress = [{"to": [{"podSelector": {"matchLabels": {"io.kompose.service": "mongodb-recommendation"}}}],
               "ports": [{"port": egress_port}]}]
    if dns:
        egress.append({"to": [{"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "kube-system"}},
                               "podSelector": {"matchLabels": {"k8s-app": "kube-dns"}}}],
                       "ports": [{"port": 53, "protocol": "UDP"}, {"port": 53, "protocol": "TCP"}]})
    policy = _allow("allow-calls", RECOMMENDATION, BOTH, {})
    policy["spec"]["ingress"] = [{"from": [{"podSelector": {"matchLabels": {"io.kompose.service": caller}}}],
                                  "ports": [{"port": ingress_port, "protocol": "TCP"}]}]
    policy["spec"]["egress"] = egress
    return policy


@pytest.mark.parametrize("policy, passes", [
    (_calls(), True),  # every call of the call graph, and DNS, admitted: the deny-all blocks nothing the app makes
    (_calls(dns=False), False),  # no name resolves
    (_calls(ingress_port=9999), False),
    (_calls(egress_port=5432), False),
    (_calls(caller="search"), False),  # frontend, the caller, still refused
])
def test_a_deny_all_policy_is_undone_by_a_policy_admitting_the_calls_the_application_makes(policy, passes):
    state = derived(BLOCK, "solved")
    _keep(state, derived(BLOCK, "faulty"), "NetworkPolicy", DENY)
    state["resources"]["items"].append(copy.deepcopy(policy))
    verdict = mitigate(BLOCK, state)
    assert verdict["passed"] is passes, failed(verdict)


def test_a_deny_policy_narrowed_to_select_no_pod_is_undone():
    state = derived(BLOCK, "solved")
    policy = _keep(state, derived(BLOCK, "faulty"), "NetworkPolicy", DENY)
    policy["spec"]["podSelector"] = {"matchLabels": {"io.kompose.service": "nothing-runs-this"}}
    assert mitigate(BLOCK, state)["passed"]
    policy["spec"]["podSelector"] = {"matchExpressions": [{"key": "io.kompose.service", "operator": "In",
                                                           "values": ["recommendation", "x"]}]}
    assert not mitigate(BLOCK, state)["passed"]


# ---- F4: ports by what they name, probes by what they check ----------------------------------------------

CART_PORT = "otel-cart-service-target-port"  # its own predicate: `spec.ports[port=8080].targetPort == 8080`


@pytest.mark.parametrize("value, passes", [(8080, True), ("service", True), ("no-such-port", False), (8081, False)])
def test_a_predicate_on_a_target_port_reads_a_named_port_as_its_number(value, passes):
    state = derived(CART_PORT, "solved")
    obj(state, "Service", "cart")["spec"]["ports"][0]["targetPort"] = value
    verdict = mitigate(CART_PORT, state)
    assert verdict["passed"] is passes, failed(verdict)


def test_a_probe_port_names_a_port_of_its_own_container():
    deployment = {"kind": "Deployment", "spec": {"template": {"spec": {"containers": [
        {"name": "a", "image": "x", "ports": [{"name": "http", "containerPort": 8080}],
         "livenessProbe": {"httpGet": {"path": "/", "port": "http"}}},
        {"name": "b", "image": "y", "ports": [{"name": "http", "containerPort": 9090}]}]}}}}
    path = ["spec", "template", "spec", "containers", ["name", "a"], "livenessProbe", "httpGet", "port"]
    assert rt.resolved_ports(deployment, path, None, "http", 8080) == (8080, 8080)
    assert rt.resolved_ports(deployment, path, None, "metrics", 8080) == ("metrics", 8080)  # names nothing
    assert rt.port_names(deployment, ["spec", "replicas"], None) is None


LIVE = "sregym-liveness-probe-misconfiguration-hotel-reservation"


@pytest.mark.parametrize("handler, passes", [
    ({"tcpSocket": {"port": 8085}}, True),  # what the fault broke, checked by another handler
    ({"exec": {"command": ["true"]}}, True),
    ({"httpGet": {"path": "/healthz", "port": 8080, "scheme": "HTTP"}}, False),  # the fault's own check
    # another check on the port the container does not serve: it can never succeed, however late it starts
    ({"httpGet": {"path": "/", "port": 8080, "scheme": "HTTP"}, "initialDelaySeconds": 600}, False),
    ({"tcpSocket": {"port": 8080}}, False),
    ({"httpGet": {"path": "/", "port": 8085}, "initialDelaySeconds": 600}, True),
])
def test_a_probe_fixed_by_another_handler_passes(handler, passes):
    state = derived(LIVE, "solved")
    faulty = obj(derived(LIVE, "faulty"), "Deployment", "recommendation")["spec"]["template"]["spec"]["containers"][0]
    container = obj(state, "Deployment", "recommendation")["spec"]["template"]["spec"]["containers"][0]
    container["livenessProbe"] = {**{k: v for k, v in faulty["livenessProbe"].items()
                                     if k not in rt.PROBE_ACTIONS}, **handler}
    verdict = mitigate(LIVE, state)
    assert verdict["passed"] is passes, failed(verdict)


# ---- F5: RBAC restored as the authorizer decides ----------------------------------------------------------

RBAC = "k8sbench-fix-rbac-wrong-resource"
RBAC_NS = "simple-rbac-setup"


def _grant(role_kind: str, rule: dict, subject: str = "pod-reader", cluster_wide: bool | None = None) -> list[dict]:
    namespaced = role_kind == "Role" if cluster_wide is None else not cluster_wide
    meta = {"name": "pod-lister", **({"namespace": RBAC_NS} if namespaced else {})}
    role_meta = {"name": "pod-lister", **({"namespace": RBAC_NS} if role_kind == "Role" else {})}
    role = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": role_kind, "metadata": role_meta, "rules": [rule]}
    binding = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding" if namespaced else "ClusterRoleBinding",
               "metadata": dict(meta), "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": role_kind,
                                                    "name": "pod-lister"},
               "subjects": [{"kind": "ServiceAccount", "name": subject, "namespace": RBAC_NS}]}
    return [role, binding]


LIST_PODS = {"apiGroups": [""], "resources": ["pods"], "verbs": ["list"]}


@pytest.mark.parametrize("extra, passes, emptied", [
    (_grant("Role", LIST_PODS), True, True),  # a new Role and RoleBinding, the faulty role's rules emptied
    (_grant("ClusterRole", LIST_PODS, cluster_wide=False), True, True),  # a ClusterRole lent in the namespace
    # access restored, but the faulty role's own grant (another resource) kept beside it, or a grant
    # cluster-wide with more verbs than healthy: more than the healthy state granted, the safeguards fail it
    (_grant("Role", LIST_PODS), None, False),
    (_grant("ClusterRole", {**LIST_PODS, "verbs": ["get", "list", "watch"]}), None, True),
    (_grant("Role", LIST_PODS, subject="someone-else"), False, True),
    (_grant("Role", {**LIST_PODS, "resourceNames": ["one-pod"]}), False, True),  # a list names no pod
    (_grant("Role", {"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]}), False, True),  # a wildcard
    ([], False, True),
])
def test_a_role_the_fault_changed_is_restored_by_any_binding_granting_its_access(extra, passes, emptied):
    state = derived(RBAC, "solved")
    role = _keep(state, derived(RBAC, "faulty"), "Role", "pod-reader-role")
    if emptied:
        role["rules"] = []
    state["resources"]["items"] += copy.deepcopy(extra)
    verdict = mitigate(RBAC, state)
    if passes is None:  # the access restored, and more granted: the safeguards alone fail it
        assert failed(verdict) == ["safeguards"], failed(verdict)
    else:
        assert verdict["passed"] is passes, failed(verdict)


@pytest.mark.parametrize("extra, kept", [
    (_grant("Role", LIST_PODS), True),
    (_grant("ClusterRole", LIST_PODS, cluster_wide=False), True),
    (_grant("Role", LIST_PODS, subject="someone-else"), False),
    (_grant("Role", {**LIST_PODS, "resourceNames": ["one-pod"]}), False),
    (_grant("Role", {"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]}), False),  # a wildcard restores nothing
    ([], False),
])
def test_a_roles_healthy_access_is_kept_through_any_binding_of_its_subjects(extra, kept):
    """`role_access_kept` alone, on the role the fault changed emptied (a scenario's `can` predicate or a
    `changed` acceptance may hide it): the subjects of its bindings may still do what its healthy rules grant."""
    state = derived(RBAC, "solved")
    role = _keep(state, derived(RBAC, "faulty"), "Role", "pod-reader-role")
    role["rules"] = []
    state["resources"]["items"] += copy.deepcopy(extra)
    assert rt.role_access_kept(role, ["rules"], [LIST_PODS], rt.State(state)) is kept


# ---- F3: a fault that keeps pods from being scheduled, judged by whether they run ----------------------

from test_evaluator import bundle  # noqa: E402

from itbench_dsl.analysis import states  # noqa: E402

CORDONED = "otel-payment-cordoned-node"
ANTI = "otel-payment-unschedulable-anti-affinity"


def _faulty_running(name: str, edit=None) -> dict:
    """The faulty manifests (every part of the fault left), changed by `edit`, with every pod running."""
    found = states.objects(bundle(name)[0])
    manifests = {k: copy.deepcopy(v) for k, v in found.faulty.items()}
    if edit is not None:
        edit(manifests)
    return states.render(manifests, found)


def _on_node(state: dict, workload: str, node: str) -> dict:
    for pod in state["resources"]["items"]:
        if pod["kind"] == "Pod" and pod["metadata"]["name"].startswith(workload + "-"):
            pod["spec"]["nodeName"] = node
    return state


def test_a_cordoned_node_uncordoned_undoes_the_fault_with_the_pin_left():
    # the new replica scheduled on the pinned node: it was uncordoned
    verdict = mitigate(CORDONED, _on_node(_faulty_running(CORDONED), "payment", "kind-worker"))
    assert verdict["passed"], failed(verdict)


def test_pods_reported_running_elsewhere_than_their_pin_are_no_fix():
    verdict = mitigate(CORDONED, _faulty_running(CORDONED))  # on a node the pin does not name: a forged capture
    assert not verdict["passed"]
    assert "fields.otel-demo/Deployment/payment" in failed(verdict)


def test_an_uncordoned_node_with_the_replicas_back_down_shows_nothing():
    def fewer(manifests):
        manifests[("Deployment", "otel-demo", "payment")]["spec"]["replicas"] -= 1

    verdict = mitigate(CORDONED, _on_node(_faulty_running(CORDONED, fewer), "payment", "kind-worker"))
    assert not verdict["passed"]  # the pods that ran before the cordon prove nothing about the node


def _drop(kind: str):
    def edit(manifests):
        for key in [k for k in manifests if k[0] == kind]:
            del manifests[key]
    return edit


def _relax(manifests):
    pod = manifests[("Deployment", "otel-demo", "payment")]["spec"]["template"]["spec"]
    anti = pod["affinity"]["podAntiAffinity"]
    terms = anti.pop("requiredDuringSchedulingIgnoredDuringExecution")
    anti["preferredDuringSchedulingIgnoredDuringExecution"] = [{"weight": 100, "podAffinityTerm": t} for t in terms]


@pytest.mark.parametrize("edit, passes", [
    (_drop("DaemonSet"), True),  # the DaemonSet gone, the anti-affinity left: nothing for it to shun
    (_relax, True),  # the anti-affinity made preferred, the DaemonSet left
    (None, False),  # both left, the pods reported running: a capture no cluster can give
])
def test_an_anti_affinity_fault_is_undone_by_either_part_once_the_pods_run(edit, passes):
    verdict = mitigate(ANTI, _faulty_running(ANTI, edit))
    assert verdict["passed"] is passes, failed(verdict)


def _confine(selector: dict, desired: int | None):
    """The DaemonSet given a node selector; its status for that spec desiring `desired` pods (None: no status)."""
    def edit(manifests):
        ds = next(v for k, v in manifests.items() if k[0] == "DaemonSet")
        ds["spec"]["template"]["spec"]["nodeSelector"] = selector
        ds["metadata"]["generation"] = 2
        if desired is not None:
            ds["status"] = {"observedGeneration": 2, "desiredNumberScheduled": desired, "numberReady": desired}
    return edit


def _node(name: str, labels: dict, taints: list | None = None) -> dict:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": {
        "kubernetes.io/hostname": name, **labels}}, "spec": {"taints": taints or []}}


@pytest.mark.parametrize("edit, nodes, passes", [
    (_confine({"non-existing": "true"}, 0), [], True),  # its controller places no pod: nothing to shun
    (_confine({"non-existing": "true"}, None), [], False),  # no word of where it runs: every node
    (_confine({"non-existing": "true"}, 1), [], False),
    (_confine({"non-existing": "true"}, None), [_node("kind-worker", {})], True),  # no node of the state matches
    (_confine({"pool": "a"}, None), [_node("kind-worker", {"pool": "a"})], False),
    (_confine({"pool": "a"}, None), [_node("kind-worker", {"pool": "a"}, [  # a taint it does not tolerate
        {"key": "dedicated", "value": "db", "effect": "NoSchedule"}])], True),
    (_confine({"pool": "a"}, None), [_node("kind-worker", {"pool": "a"}, [  # the cordon it tolerates
        {"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}])], False),
])
def test_a_daemonset_is_judged_by_the_nodes_it_places_pods_on(edit, nodes, passes):
    state = _faulty_running(ANTI, edit)
    for pod in state["resources"]["items"]:
        if pod["kind"] == "Pod":
            pod["spec"]["nodeName"] = "kind-worker"
    state["resources"]["items"] += nodes
    verdict = mitigate(ANTI, state)
    # the fault's own checks; the safeguards also judge what a taint does to the other pods on the node
    judged = [c for c in failed(verdict) if c != "safeguards"]
    assert (not judged) is passes, failed(verdict)
    ds = next(o for o in state["resources"]["items"] if o["kind"] == "DaemonSet")
    assert rt.acts(ds, model_state(state)) is not passes


def model_state(state: dict):
    from itbench_dsl.runtime.state import State
    return State(state)


def test_a_role_binding_re_pointed_to_another_subject_restores_nothing():
    state = derived(RBAC, "solved")
    _keep(state, derived(RBAC, "faulty"), "Role", "pod-reader-role")
    binding = obj(state, "RoleBinding", "pod-reader-binding")
    binding["subjects"] = [{"kind": "ServiceAccount", "name": "someone-else", "namespace": RBAC_NS}]
    state["resources"]["items"] += _grant("Role", LIST_PODS, subject="someone-else")
    assert "fields.simple-rbac-setup/Role/pod-reader-role" in failed(mitigate(RBAC, state))
