"""Mitigation verdicts judged by what an object does, tried by hand (docs/evaluator.md, "Fields by meaning" and
the checks' table): a flagd flag by the value it evaluates to, an object the fault created by whether it still
has the fault's effect, recreated objects by meaning, a probe by what the kubelet does with it, the whole
application's health. The states are the compiler's derived ones, edited as an agent would; they do not come
from the adversarial corpus (tests/test_corpus.py).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

from test_evaluator import derived, failed, mitigate, obj  # noqa: E402

from itbench_dsl.runtime import evaluator as rt  # noqa: E402
from itbench_dsl.runtime import state as model  # noqa: E402


# ---- flagd flags: the value they evaluate to -------------------------------------------------------------

FLAG = "otel-payment-failure-flag"


def _edit_flag(state: dict, edit) -> None:
    cm = obj(state, "ConfigMap", "flagd-config")
    data = json.loads(cm["data"]["demo.flagd.json"])
    edit(data["flags"]["paymentFailure"])
    cm["data"]["demo.flagd.json"] = json.dumps(data, indent=2)


@pytest.mark.parametrize("edit, passes", [
    (lambda f: None, True),
    (lambda f: f["variants"].update({"100%": 0}) or f.update(defaultVariant="100%"), True),  # renamed, value healthy
    (lambda f: f["variants"].update({"off": 1}), False),  # the healthy name bound to the fault's value
    (lambda f: f.update(targeting={"if": [True, "100%", "off"]}), False),  # targeting turns it on
    (lambda f: f.update(targeting={"fractional": [["100%", 100], ["off", 0]]}), False),
    (lambda f: f.update(targeting={"fractional": [["100%", 0], ["off", 100]]}), True),  # a 0 share never answers
    (lambda f: f.update(state="DISABLED"), False),  # the application's own default: the configuration does not say
])
def test_a_flag_is_judged_by_the_value_it_evaluates_to(edit, passes):
    state = derived(FLAG, "solved")
    _edit_flag(state, edit)
    verdict = mitigate(FLAG, state)
    assert verdict["passed"] is passes, [c for c in verdict["checks"] if not c["passed"]]
    if not passes:
        assert "fields.otel-demo/ConfigMap/flagd-config" in failed(verdict)


def test_flag_outcomes_follow_a_shared_evaluator_reference_to_every_variant():
    flag = {"state": "ENABLED", "variants": {"on": True, "off": False}, "defaultVariant": "off",
            "targeting": {"$ref": "someRule"}}
    assert sorted(rt.flag_outcomes(flag)) == [False, True]


# ---- objects a fault created: judged by whether they still have its effect -------------------------------


def _np_edit(state: dict, name: str, rules: list) -> None:
    policy = obj(state, "NetworkPolicy", name)
    for t in policy["spec"].get("policyTypes") or ["Ingress"]:
        policy["spec"]["ingress" if t == "Ingress" else "egress"] = rules


@pytest.mark.parametrize("rules, passes", [
    ([{}], True),  # admits every peer on every port: the isolation is undone
    ([{"from": [{"podSelector": {"matchLabels": {"role": "x"}}}]}], False),  # still isolates from every other peer
    ([{"ports": [{"port": 1}]}], False),  # admits one port only
])
def test_a_created_network_policy_is_undone_when_it_admits_all(rules, passes):
    name = "sregym-network-policy-block"
    state = derived(name, "faulty")
    solved = derived(name, "solved")
    policy = obj(state, "NetworkPolicy", "mongodb-rate-shared")
    solved["resources"]["items"].append(policy)
    _np_edit(solved, "mongodb-rate-shared", rules)
    verdict = mitigate(name, solved)
    assert verdict["passed"] is passes, failed(verdict)


def test_a_created_quota_binds_until_it_admits_what_the_namespace_runs():
    pods = [{"kind": "Pod", "metadata": {"name": f"p{i}", "namespace": "n"}, "status": {"phase": "Running"},
             "spec": {"containers": [{"name": "c", "resources": {"requests": {"memory": "100Mi"}}}]}} for i in range(4)]
    state = rt.State({"resources": {"items": pods}})
    quota = {"kind": "ResourceQuota", "metadata": {"name": "q", "namespace": "n"}, "spec": {"hard": {}}}
    for hard, binds in [({"pods": "5"}, False), ({"pods": "4"}, True),  # no room for a rolling update's pod
                        ({"requests.memory": "1Gi"}, False), ({"requests.memory": "450Mi"}, True),
                        ({"limits.memory": "10Gi"}, True),  # no container declares a limit: admission refuses them
                        ({"count/jobs.batch": "100"}, True)]:  # a resource the evaluator cannot count
        quota["spec"]["hard"] = hard
        assert rt.acts(quota, state) is binds, hard
    finished = dict(pods[0], status={"phase": "Succeeded"})
    assert not rt.acts(finished)  # a debug pod that ran to its end does nothing more


@pytest.mark.parametrize("value, paused", [("true", True), ("True", False), ("TRUE", False), ("1", False),
                                           ("yes", False), ("true ", False)])
def test_chaos_mesh_reads_its_pause_annotation_exactly(value, paused):
    # Chaos Mesh's IsPaused: annotations["experiment.chaos-mesh.org/pause"] == "true", nothing else
    chaos = {"apiVersion": "chaos-mesh.org/v1alpha1", "kind": "PodChaos",
             "metadata": {"name": "x", "annotations": {rt.CHAOS_PAUSE: value}}}
    assert rt.acts(chaos) is not paused


# ---- `undone_by any`: each change of a declared kind is a part --------------------------------------------


def test_a_fault_undone_by_any_of_its_changes_passes_with_one_undone():
    name = "sregym-wrong-dns-policy-social-network"
    state = derived(name, "faulty")
    solved = derived(name, "solved")
    user = obj(solved, "Deployment", "user-service")
    # back to the cluster's resolver, the extra nameserver kept: ClusterFirst merges it after the cluster's own
    user["spec"]["template"]["spec"]["dnsConfig"] = {"nameservers": ["8.8.8.8"], "searches": []}
    verdict = mitigate(name, solved)
    assert verdict["passed"], failed(verdict)
    assert not mitigate(name, state)["passed"]  # its empty `searches` is no part: nothing undone


# ---- probes: what they check, not when ----------------------------------------------------------------------

LIVENESS = "sregym-liveness-probe-misconfiguration-hotel-reservation"


def _liveness(state: dict) -> dict:
    pod_spec = obj(state, "Deployment", "recommendation")["spec"]["template"]["spec"]
    return next(c for c in pod_spec["containers"] if c["name"] == "hotel-reserv-recommendation")


@pytest.mark.parametrize("timing", [{"initialDelaySeconds": 3600}, {"failureThreshold": 2147483647},
                                    {"periodSeconds": 86400}])
def test_a_failing_liveness_check_made_late_is_still_the_fault(timing):
    faulty = _liveness(derived(LIVENESS, "faulty"))["livenessProbe"]
    state = derived(LIVENESS, "solved")
    _liveness(state)["livenessProbe"] = {**faulty, **timing}
    verdict = mitigate(LIVENESS, state)
    assert not verdict["passed"] and "fields.hotel-reservation/Deployment/recommendation" in failed(verdict)


def test_a_liveness_probe_pointed_at_a_served_port_passes():
    faulty = _liveness(derived(LIVENESS, "faulty"))["livenessProbe"]
    state = derived(LIVENESS, "solved")
    _liveness(state)["livenessProbe"] = {**faulty, "httpGet": None, "tcpSocket": {"port": 8085}}
    del _liveness(state)["livenessProbe"]["httpGet"]
    verdict = mitigate(LIVENESS, state)
    assert verdict["passed"], failed(verdict)


# ---- recreated objects by meaning ---------------------------------------------------------------------------

CONFIG = "sregym-missing-configmap-social-network"


@pytest.mark.parametrize("text, labels, passes", [
    ("net:\n  tls: {mode: disabled}\n", None, True),  # the same YAML, spelled in flow style
    ("net:\n  tls:\n    mode: disabled", None, True),  # no trailing newline: the same data
    ("net:\n  tls:\n    mode: disabled\n", {}, True),  # no labels: nothing selects a ConfigMap by them
    ("net:\n  tls:\n    mode: requireTLS\n", None, False),  # another value
    ("net: [", None, False),  # no YAML at all
])
def test_a_recreated_configmap_is_compared_by_the_data_it_holds(text, labels, passes):
    state = derived(CONFIG, "solved")
    cm = obj(state, "ConfigMap", "media-mongodb")
    cm["data"]["mongod.conf"] = text
    if labels is not None:
        cm["metadata"]["labels"] = labels
    verdict = mitigate(CONFIG, state)
    assert verdict["passed"] is passes, failed(verdict)


def test_a_selector_is_read_by_the_pods_it_selects():
    name = "sregym-missing-service-astronomy-shop"
    state = derived(name, "solved")
    cart = obj(state, "Service", "cart")
    cart["spec"]["selector"] = {"app.kubernetes.io/name": "cart"}  # every cart pod carries it, no other pod does
    assert mitigate(name, state)["passed"]
    cart["spec"]["selector"] = {"app.kubernetes.io/part-of": "opentelemetry-demo"}  # every pod of the demo
    assert "safeguards" in failed(mitigate(name, state))


# ---- the whole application's health -------------------------------------------------------------------------

IMAGE = "otel-checkout-nonexistent-image"


@pytest.mark.parametrize("edit, why", [
    (lambda s: obj(s, "Deployment", "ad")["status"].pop("readyReplicas"), "otel-demo/Deployment/ad not ready"),
    (lambda s: obj(s, "Service", "ad")["spec"].update(type="ExternalName", externalName="ad.example.com"),
     "ExternalName"),
    (lambda s: obj(s, "Service", "ad")["spec"]["ports"][0].update(targetPort=9999), "leads to 9999"),
])
def test_a_fix_that_breaks_another_part_of_the_application_fails(edit, why):
    state = derived(IMAGE, "solved")
    edit(state)
    verdict = mitigate(IMAGE, state)
    check = next(c for c in verdict["checks"] if c["id"] == "health.application")
    assert not verdict["passed"] and not check["passed"] and why in check["detail"]


def _pod_spec(state: dict, name: str) -> dict:
    return obj(state, "Deployment", name)["spec"]["template"]["spec"]


def _oom_killed(state: dict, prefix: str, finished: str) -> None:
    pod = next(o for o in state["resources"]["items"] if o["kind"] == "Pod" and o["metadata"]["name"].startswith(prefix))
    for c in pod["status"]["containerStatuses"]:
        c["restartCount"] = 4
        c["lastState"] = {"terminated": {"exitCode": 137, "reason": "OOMKilled", "finishedAt": finished}}
    state["fixed_at"] = "2026-01-01T00:10:00Z"


# a workload neither the faults act on nor the ground truth names (ad) is held to what the named ones are
@pytest.mark.parametrize("edit, passes", [
    (lambda s: _pod_spec(s, "ad")["containers"][0].update(command=["sleep", "infinity"]), False),
    (lambda s: _pod_spec(s, "ad")["containers"][0].update(image="busybox:1.36"), False),
    (lambda s: _pod_spec(s, "ad").update(dnsPolicy="Default"), False),
    (lambda s: _pod_spec(s, "ad").update(dnsPolicy="None", dnsConfig={"nameservers": ["8.8.8.8"]}), False),
    (lambda s: _pod_spec(s, "ad").update(hostNetwork=True), False),
    (lambda s: _pod_spec(s, "ad").update(serviceAccountName="default"), False),
    (lambda s: _pod_spec(s, "ad")["containers"][0]["resources"]["limits"].update(memory="16Mi"), False),
    (lambda s: _oom_killed(s, "ad-", "2026-01-01T00:12:00Z"), False),  # restarted after the fix
    (lambda s: _oom_killed(s, "ad-", "2026-01-01T00:05:00Z"), True),  # before it: stable since
    (lambda s: _pod_spec(s, "ad")["containers"][0]["resources"]["limits"].update(memory="1Gi"), True),
    (lambda s: _pod_spec(s, "ad").update(dnsPolicy="ClusterFirst", hostNetwork=False), True),  # the defaults
    (lambda s: obj(s, "Deployment", "ad")["spec"]["template"].setdefault("metadata", {}).setdefault(
        "annotations", {}).update({"kubectl.kubernetes.io/restartedAt": "2026-01-01T00:00:00Z"}), True),
])
def test_another_workload_keeps_its_program_pod_fields_limits_and_stability(edit, passes):
    state = derived(IMAGE, "solved")
    edit(state)
    verdict = mitigate(IMAGE, state)
    assert verdict["passed"] is passes, [c for c in verdict["checks"] if not c["passed"]]
    if not passes:  # a limit squeezed is also below the floor the safeguards keep (collateral `floors`)
        assert "health.application" in failed(verdict)
        assert set(failed(verdict)) <= {"health.application", "safeguards"}
        assert "otel-demo/Deployment/ad" in next(c for c in verdict["checks"] if c["id"] == "health.application")["detail"]


def test_a_named_workload_given_another_resolver_no_longer_runs_what_it_ran():
    state = derived(IMAGE, "solved")
    _pod_spec(state, "checkout").update(dnsPolicy="None", dnsConfig={"nameservers": ["8.8.8.8"]})
    assert "health.program.otel-demo/Deployment/checkout" in failed(mitigate(IMAGE, state))


# ---- a limit removed is no too-low limit --------------------------------------------------------------------


def test_a_limit_removed_is_no_limit_too_low():
    name = "otel-postgresql-insufficient-resources"
    state = derived(name, "solved")
    container = obj(state, "Deployment", "postgresql")["spec"]["template"]["spec"]["containers"][0]
    container.setdefault("resources", {}).pop("limits", None)
    verdict = mitigate(name, state)
    assert verdict["passed"], failed(verdict)
    container["resources"]["limits"] = {"memory": "1Mi"}  # a limit below the healthy one still fails
    assert "fields.otel-demo/Deployment/postgresql" in failed(mitigate(name, state))


# ---- replicas: capacity -------------------------------------------------------------------------------------


def test_replicas_are_capacity():
    name = "shop-cart-modified-env"
    state = derived(name, "solved")
    frontend = obj(state, "Deployment", "frontend")
    deployed = frontend["spec"]["replicas"]
    assert deployed > 1
    frontend["spec"]["replicas"] = deployed - 1  # every remaining replica ready, but less capacity
    assert "safeguards" in failed(mitigate(name, state))
    frontend["spec"]["replicas"] = deployed + 1
    assert "safeguards" not in failed(mitigate(name, state))


def test_the_replica_a_cordon_fault_added_may_stay():
    name = "otel-payment-cordoned-node"
    state = derived(name, "solved")
    obj(state, "Deployment", "payment")["spec"]["replicas"] = 2  # `rollout undo` keeps the count
    verdict = mitigate(name, state)
    assert "fields.otel-demo/Deployment/payment" not in failed(verdict), failed(verdict)


# ---- `all ... ready` held over the captures since the fix --------------------------------------------------


def test_an_all_pods_scope_must_hold_at_every_capture():
    name = "k8sbench-fix-crashloop"
    state = derived(name, "solved")
    watched = [o for o in state["resources"]["items"] if o["kind"] in ("Pod", "Deployment")]
    lapsed = json.loads(json.dumps(watched))
    pod = next(o for o in lapsed if o["kind"] == "Pod" and o["metadata"]["namespace"] == "crashloop-test")
    for c in pod["status"]["conditions"]:
        if c["type"] == "Ready":
            c["status"] = "False"
    state["fixed_at"] = "2026-01-01T00:10:00Z"
    state["observations"] = [{"at": f"2026-01-01T00:10:{s}0Z", "resources": {"kind": "List", "items": items}}
                             for s, items in ((1, watched), (2, lapsed), (3, watched))]
    verdict = mitigate(name, state)
    lapses = [c for c in verdict["checks"] if c["id"].startswith("mitigation.predicate.") and not c["passed"]]
    assert any("did not hold" in c["detail"] and "all pods" in c["detail"] for c in lapses), verdict["checks"]


# ---- environment variables: the value the container gets, addresses as DNS resolves them --------------------

QUOTE = "otel-shipping-quote-address"


def _quote_env(state: dict) -> list:
    return obj(state, "Deployment", "shipping")["spec"]["template"]["spec"]["containers"][0]["env"]


@pytest.mark.parametrize("value, passes", [
    ("http://quote.otel-demo.svc.cluster.local:8080", True),
    ("http://quote.otel-demo:8080", True),
    ("http://quote.otel-demo.svc.cluster.local.:8080", True),
    ("http://quote.elsewhere.svc.cluster.local:8080", False),  # no such Service
    ("http://quote.otel-demo.svc.cluster.local:8081", False),  # another port
    ("https://quote:8080", False),  # another scheme
])
def test_an_address_is_compared_as_the_cluster_dns_resolves_it(value, passes):
    state = derived(QUOTE, "solved")
    env = _quote_env(state)
    next(e for e in env if e["name"] == "QUOTE_ADDR")["value"] = value
    verdict = mitigate(QUOTE, state)
    assert verdict["passed"] is passes, failed(verdict)


@pytest.mark.parametrize("order, passes", [(("quote:0000", "http://quote:8080"), True),
                                           (("http://quote:8080", "quote:0000"), False)])
def test_of_two_entries_of_one_variable_the_last_counts(order, passes):
    state = derived(QUOTE, "solved")
    env = _quote_env(state)
    env[:] = [e for e in env if e["name"] != "QUOTE_ADDR"] + [{"name": "QUOTE_ADDR", "value": v} for v in order]
    assert mitigate(QUOTE, state)["passed"] is passes


def _with_ips(state: dict) -> dict:
    """Each Service of the state given its own cluster IP (10.96.77.N, in name order)."""
    services = sorted((o for o in state["resources"]["items"] if o["kind"] == "Service"),
                      key=lambda o: (o["metadata"].get("namespace", ""), o["metadata"]["name"]))
    for i, service in enumerate(services):
        service.setdefault("spec", {}).update(clusterIP=f"10.96.77.{i + 1}", clusterIPs=[f"10.96.77.{i + 1}"])
    return state


def _ip_of(state: dict, name: str) -> str:
    return obj(state, "Service", name)["spec"]["clusterIP"]


@pytest.mark.parametrize("value, links, passes", [
    ("http://$(QUOTE_SERVICE_HOST):$(QUOTE_SERVICE_PORT)", None, True),  # the kubelet's service-link variables
    ("http://$(QUOTE_SERVICE_HOST):8080", None, True),
    ("$(QUOTE_PORT)", None, False),  # tcp://ip:8080: another scheme
    ("http://$(QUOTE_SERVICE_HOST):8080", False, False),  # enableServiceLinks: false sets none
    ("http://$(SHIPPING_SERVICE_HOST):8080", None, False),  # another Service
    ("http://{quote}:8080", None, True),  # the Service's cluster IP
    ("http://{shipping}:8080", None, False),
])
def test_an_address_through_service_links_or_the_cluster_ip_is_the_service(value, links, passes):
    state = _with_ips(derived(QUOTE, "solved"))
    value = value.format(quote=_ip_of(state, "quote"), shipping=_ip_of(state, "shipping"))
    next(e for e in _quote_env(state) if e["name"] == "QUOTE_ADDR")["value"] = value
    if links is not None:
        obj(state, "Deployment", "shipping")["spec"]["template"]["spec"]["enableServiceLinks"] = links
    verdict = mitigate(QUOTE, state)
    assert verdict["passed"] is passes, failed(verdict)


def test_service_links_are_the_kubelets_variables():
    state = rt.State(_with_ips(derived(QUOTE, "solved")))
    links = rt.service_links(state, "otel-demo")
    ip = state.get({"kind": "Service", "namespace": "otel-demo", "name": "quote"})["spec"]["clusterIP"]
    assert links["QUOTE_SERVICE_HOST"] == ip and links["QUOTE_SERVICE_PORT"] == "8080"
    assert links["QUOTE_PORT"] == f"tcp://{ip}:8080" and links["QUOTE_PORT_8080_TCP_ADDR"] == ip
    assert rt.service_links(state, "otel-demo", {"enableServiceLinks": False}) == {}
    assert rt._service_fqdn(ip, "otel-demo", state) == "quote.otel-demo.svc.cluster.local"
    shared = rt.State(derived(QUOTE, "solved"))  # every Service at one IP: it names none
    for service in shared.by_kind[("Service", "otel-demo")]:
        service.setdefault("spec", {})["clusterIP"] = "10.96.0.99"
    assert rt._service_fqdn("10.96.0.99", "otel-demo", shared) is None


PORTS = "sregym-incorrect-port-assignment"  # a scenario `==` predicate on checkout's PRODUCT_CATALOG_ADDR


@pytest.mark.parametrize("value, passes", [
    ("product-catalog.otel-demo.svc.cluster.local:8080", True),
    ("product-catalog.otel-demo:8080", True),
    ("product-catalog.otel-demo.svc.cluster.local:8082", False),
    ("product-catalog.elsewhere:8080", False),
])
def test_a_scenario_predicate_on_an_address_reads_it_as_fields_do(value, passes):
    state = derived(PORTS, "solved")
    container = next(c for c in obj(state, "Deployment", "checkout")["spec"]["template"]["spec"]["containers"]
                     if c["name"] == "checkout")
    next(e for e in container["env"] if e["name"] == "PRODUCT_CATALOG_ADDR")["value"] = value
    verdict = mitigate(PORTS, state)
    assert verdict["passed"] is passes, failed(verdict)
    assert ("mitigation.predicate.0" in failed(verdict)) is not passes


KUBE_DNS = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "kube-dns", "namespace": "kube-system",
            "labels": {"k8s-app": "kube-dns"}}, "spec": {"clusterIP": "10.96.0.10", "ports": [{"port": 53}]}}


@pytest.mark.parametrize("name, target", [("otel-frontend-failing-dns-policy", "frontend"),
                                          ("sregym-wrong-dns-policy-hotel-reservation", "profile")])
@pytest.mark.parametrize("policy, server, host, dns, passes", [
    ("ClusterFirstWithHostNet", None, False, True, True),  # the cluster's resolver off the host network
    ("None", "10.96.0.10", False, True, True),  # the cluster's resolver spelled out
    ("None", "10.96.0.10", False, False, False),  # the cluster DNS Service not in the state: cannot tell
    ("None", "8.8.8.8", False, True, False),
])
def test_a_dns_policy_is_judged_by_the_resolver_the_kubelet_writes(name, target, policy, server, host, dns, passes):
    state = derived(name, "solved")
    namespace = obj(state, "Deployment", target)["metadata"]["namespace"]
    pod = obj(state, "Deployment", target)["spec"]["template"]["spec"]
    pod["dnsPolicy"] = policy
    pod.pop("dnsConfig", None)
    if server:
        pod["dnsConfig"] = {"nameservers": [server], "options": [{"name": "ndots", "value": "5"}],
                            "searches": [f"{namespace}.svc.cluster.local", "svc.cluster.local", "cluster.local"]}
    if dns:
        state["resources"]["items"].append(json.loads(json.dumps(KUBE_DNS)))
    verdict = mitigate(name, state)
    assert verdict["passed"] is passes, failed(verdict)


# ---- stability: a restart under the fix, whatever its exit code ----------------------------------------------

STABLE = "otel-checkout-nonexistent-image"  # checkout: a Deployment the mitigation reads as ready


def _checkout_pod(state: dict) -> dict:
    return next(o for o in state["resources"]["items"] if o["kind"] == "Pod"
                and o["metadata"]["name"].startswith("checkout-"))


def _exit_zero(pod: dict, count: int, finished: str = "2026-01-01T00:12:00Z") -> None:
    for c in pod["status"]["containerStatuses"]:
        c["restartCount"] = count
        c["lastState"] = {"terminated": {"reason": "Completed", "exitCode": 0, "finishedAt": finished}}


@pytest.mark.parametrize("fixed_at", [None, "2026-01-01T00:10:00Z"])
def test_a_container_that_keeps_exiting_0_is_not_stable(fixed_at):
    state = derived(STABLE, "solved")
    _exit_zero(_checkout_pod(state), 5)
    if fixed_at:
        state["fixed_at"] = fixed_at
    verdict = mitigate(STABLE, state)
    assert not verdict["passed"] and "health.ready.otel-demo/Deployment/checkout" in failed(verdict)


def test_restarts_counted_up_between_captures_after_the_fix_fail_whatever_the_exit_code():
    state = derived(STABLE, "solved")
    earlier = json.loads(json.dumps(state["resources"]))
    _exit_zero(_checkout_pod({"resources": earlier}), 2, "2026-01-01T00:05:00Z")
    _exit_zero(_checkout_pod(state), 4, "2026-01-01T00:05:00Z")  # lastState dated before the fix: the count says
    state["fixed_at"] = "2026-01-01T00:10:00Z"
    state["observations"] = [{"at": "2026-01-01T00:10:30Z", "resources": earlier}]
    verdict = mitigate(STABLE, state)
    assert not verdict["passed"] and "health.ready.otel-demo/Deployment/checkout" in failed(verdict)
    state["resources"] = json.loads(json.dumps(earlier))  # the same count since: stable
    assert mitigate(STABLE, state)["passed"], failed(mitigate(STABLE, state))


# ---- collateral: what the fix must leave as healthy as it found it --------------------------------------------


def test_turning_on_another_flag_of_the_shared_configmap_fails():
    state = derived(FLAG, "solved")
    cm = obj(state, "ConfigMap", "flagd-config")
    data = json.loads(cm["data"]["demo.flagd.json"])
    data["flags"]["adFailure"]["defaultVariant"] = "on"  # healthy: off
    cm["data"]["demo.flagd.json"] = json.dumps(data)
    verdict = mitigate(FLAG, state)
    assert not verdict["passed"] and "safeguards" in failed(verdict)
    data["flags"]["adFailure"]["defaultVariant"] = "off"
    data["flags"]["adFailure"]["variants"] = {"off": False, "on": True, "disabled": False}  # same values, respelled
    cm["data"]["demo.flagd.json"] = json.dumps(data, indent=4)
    verdict = mitigate(FLAG, state)
    assert verdict["passed"], failed(verdict)


HPA = "otel-frontend-hpa-misconfigured"


@pytest.mark.parametrize("edit, passes", [
    (lambda s: s.update(maxReplicas=2), False),  # a lower ceiling: fewer replicas at peak
    (lambda s: s.update(maxReplicas=20), True),  # a higher one scales more
    (lambda s: s["scaleTargetRef"].update(name="checkout"), False),  # scales another workload
    (lambda s: s.update(behavior={"scaleUp": {"selectPolicy": "Disabled"}}), False),  # never scales out
])
def test_an_autoscaler_bounded_below_its_healthy_capacity_fails(edit, passes):
    state = derived(HPA, "solved")
    edit(obj(state, "HorizontalPodAutoscaler", "frontend")["spec"])
    verdict = mitigate(HPA, state)
    assert verdict["passed"] is passes, [c for c in verdict["checks"] if not c["passed"]]
    if not passes:
        assert "safeguards" in failed(verdict)


@pytest.mark.parametrize("edit, passes", [
    (lambda p: p.update(targetPort=8080), True),  # the fix: the target the fault changed
    (lambda p: p.update(port=9090, targetPort=8080), False),  # its own port moved too: clients of :8080 break
    (lambda p: p.update(protocol="UDP", targetPort=8080), False),
    (lambda p: p.update(name="grpc", targetPort=8080), True),  # a name tells nothing to a client
])
def test_the_faulted_services_own_port_keeps_its_number(edit, passes):
    name = "otel-ad-modified-target-port"
    state = derived(name, "faulty")
    solved = derived(name, "solved")
    service = obj(state, "Service", "ad")
    edit(service["spec"]["ports"][0])
    solved["resources"]["items"] = [service if o["kind"] == "Service" and o["metadata"]["name"] == "ad" else o
                                    for o in solved["resources"]["items"]]
    verdict = mitigate(name, solved)
    assert verdict["passed"] is passes, [c for c in verdict["checks"] if not c["passed"]]
    if not passes:
        assert "health.application" in failed(verdict)


RBAC = "k8sbench-fix-rbac-wrong-resource"
RULE = {"apiGroups": [""], "resources": ["pods"], "verbs": ["list"]}
ADMIN = [{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": "cluster-admin"},
          "rules": [{"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]}, {"nonResourceURLs": ["*"], "verbs": ["*"]}]},
         {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding", "metadata": {"name": "fix"},
          "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "cluster-admin"},
          "subjects": [{"kind": "ServiceAccount", "name": "pod-reader", "namespace": "simple-rbac-setup"}]}]


@pytest.mark.parametrize("rules, extra, passes", [
    ([RULE], [], True),
    ([dict(RULE, verbs=["list", "list"]), RULE], [], True),  # the healthy grant written otherwise
    ([dict(RULE, resourceNames=["a"]), RULE], [], True),  # a narrower rule besides: nothing more
    ([dict(RULE, verbs=["*"])], [], False),  # every verb on pods
    ([{"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]}], [], False),
    ([RULE, {"apiGroups": ["apps"], "resources": ["deployments"], "verbs": ["list"]}], [], False),  # the fault's kept
    ([RULE], ADMIN, False),  # cluster-admin bound to the subject
])
def test_a_fix_grants_no_more_than_the_healthy_state_did(rules, extra, passes):
    state = derived(RBAC, "solved")
    obj(state, "Role", "pod-reader-role")["rules"] = rules
    state["resources"]["items"] += json.loads(json.dumps(extra))
    verdict = mitigate(RBAC, state)
    assert verdict["passed"] is passes, [c for c in verdict["checks"] if not c["passed"]]
    if not passes:
        assert "safeguards" in failed(verdict)


def test_the_clusters_own_grants_to_every_account_are_not_the_fixs():
    state = derived(RBAC, "solved")
    state["resources"]["items"] += [
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": "system:discovery"},
         "rules": [{"nonResourceURLs": ["/api", "/api/*"], "verbs": ["get"]}]},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding", "metadata": {"name": "system:discovery"},
         "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "system:discovery"},
         "subjects": [{"kind": "Group", "name": "system:authenticated"}]}]
    verdict = mitigate(RBAC, state)
    assert verdict["passed"], [c for c in verdict["checks"] if not c["passed"]]


# ---- a field added is a change: controls and recreated objects ------------------------------------------------

NOOP = "hotel-reservation-noop-detection"  # a control: every object of the topology unchanged


def _container(state: dict, name: str) -> dict:
    return obj(state, "Deployment", name)["spec"]["template"]["spec"]["containers"][0]


@pytest.mark.parametrize("edit, passes", [
    (lambda s: None, True),
    (lambda s: _container(s, "geo").update(command=["sleep", "infinity"]), False),  # a program of its own
    (lambda s: _container(s, "geo").setdefault("env", []).append({"name": "DEBUG", "value": "1"}), False),
    (lambda s: obj(s, "Service", "geo")["spec"]["selector"].update(tier="none"), False),  # selects nothing now
    (lambda s: _container(s, "geo").update(imagePullPolicy="IfNotPresent", terminationMessagePolicy="File"), True),
    # a pod spec field outside the containers: how the pods resolve names, whose network they use
    (lambda s: obj(s, "Deployment", "frontend")["spec"]["template"]["spec"].update(dnsPolicy="Default"), False),
    (lambda s: obj(s, "Deployment", "profile")["spec"]["template"]["spec"].update(
        dnsPolicy="None", dnsConfig={"nameservers": ["8.8.8.8"]}), False),
    (lambda s: obj(s, "Deployment", "geo")["spec"]["template"]["spec"].update(hostNetwork=True), False),
    (lambda s: _container(s, "geo").update(resources={"limits": {"memory": "16Mi"}}), False),
    # the API server's defaults spelled out, and its mirror of the service account's name, are no change
    (lambda s: obj(s, "Deployment", "geo")["spec"]["template"]["spec"].update(
        dnsPolicy="ClusterFirst", hostNetwork=False, enableServiceLinks=True, serviceAccountName="default",
        serviceAccount="default", schedulerName="default-scheduler"), True),
    (lambda s: obj(s, "Deployment", "geo")["spec"]["template"].setdefault("metadata", {}).setdefault(
        "annotations", {}).update({"kubectl.kubernetes.io/restartedAt": "2026-01-01T00:00:00Z"}), True),
])
def test_a_control_with_an_added_field_is_changed(edit, passes):
    state = derived(NOOP, "healthy")
    edit(state)
    verdict = mitigate(NOOP, state)
    assert verdict["passed"] is passes, [c for c in verdict["checks"] if not c["passed"]]


def test_a_controls_pod_spec_is_compared_whole():
    # the fault another scenario injects (dnsPolicy: Default on frontend), made on a healthy system, is a change
    state = derived(NOOP, "healthy")
    obj(state, "Deployment", "frontend")["spec"]["template"]["spec"]["dnsPolicy"] = "Default"
    assert "unchanged.hotel-reservation/Deployment/frontend" in failed(mitigate(NOOP, state))


def test_a_recreated_configmap_is_judged_by_what_its_readers_see():
    """media-mongodb mounts one key by subPath: a key added beside it is seen by no reader, so the ConfigMap its
    reader sees is the one deleted; a changed value of the key it mounts is not
    (test_config_readers covers a reader that sees every key)."""
    name = "sregym-missing-configmap-social-network"
    state = derived(name, "solved")
    obj(state, "ConfigMap", "media-mongodb")["data"]["extra.conf"] = "x: 1\n"
    assert mitigate(name, state)["passed"]
    data = obj(state, "ConfigMap", "media-mongodb")["data"]
    mounted = next(k for k in data if k != "extra.conf")
    data[mounted] += "\n# changed\nnet:\n  port: 1\n"
    verdict = mitigate(name, state)
    assert not verdict["passed"] and "restored.social-network/ConfigMap/media-mongodb" in failed(verdict)


POLICY = {"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy", "metadata": {"name": "p", "namespace": "n"},
          "spec": {"podSelector": {}, "ingress": [{"from": [{"podSelector": {"matchLabels": {"app": "web"}}}]}]}}


@pytest.mark.parametrize("edit, added", [
    (lambda s: s.update(policyTypes=["Ingress"]), False),  # what the API server defaults it to
    (lambda s: s.update(policyTypes=["Ingress", "Egress"]), True),  # isolates egress too
    (lambda s: s["podSelector"].update(matchLabels={"app": "db"}), True),  # selects fewer pods
    (lambda s: s["ingress"][0].update(ports=[{"port": 80}]), True),  # admits one port only
    (lambda s: s["ingress"].append({}), True),  # admits every peer
])
def test_a_network_policy_with_an_added_field_means_something_else(edit, added):
    observed = json.loads(json.dumps(POLICY))
    edit(observed["spec"])
    owned = {k: v for k, v in POLICY.items() if k not in ("apiVersion", "kind")}
    assert rt.owns(owned, observed) or added
    assert (rt.fields_added(owned, observed) is not None) is added


def _deployment(containers, volumes=()):
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "app", "namespace": "ns"},
            "spec": {"template": {"spec": {"containers": containers, "volumes": list(volumes)}}}}


def test_what_a_container_reads_of_a_configmap_is_resolved_as_the_kubelet_does():
    """runtime.config_reads / config_read: a key read through env valueFrom, envFrom (under its prefix), a
    volume (its items' paths, a subPath mount), resolved against whichever object supplies it now; an optional
    source or key that is absent reads nothing."""
    cm = lambda name, data: {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": "ns"},
                             "data": data}
    healthy = _deployment([{"name": "c", "env": [{"name": "A", "valueFrom": {"configMapKeyRef": {"name": "cfg", "key": "k"}}}],
                            "envFrom": [{"prefix": "P_", "configMapRef": {"name": "cfg"}}],
                            "volumeMounts": [{"name": "v", "mountPath": "/etc/x"},
                                             {"name": "w", "mountPath": "/one.conf", "subPath": "k"}]}],
                          [{"name": "v", "configMap": {"name": "cfg", "items": [{"key": "k", "path": "conf/k.txt"}]}},
                           {"name": "w", "configMap": {"name": "cfg"}}])
    reads = model.config_reads(healthy["spec"]["template"], "ConfigMap", "cfg", "k")
    assert reads == [{"container": "c", "env": "P_k"}, {"container": "c", "env": "A"},
                     {"container": "c", "file": "/etc/x/conf/k.txt"}, {"container": "c", "file": "/one.conf"}]
    # the workload now reads `other` everywhere: what it reads is other's data
    text = json.dumps(healthy).replace('"cfg"', '"other"')
    moved = json.loads(text)
    state = rt.State({"resources": {"items": [moved, cm("cfg", {"k": "bad"}), cm("other", {"k": "good"})]}})
    assert [rt.config_read(moved, r, state) for r in reads] == ["good"] * 4
    # optional and absent: the variable is unset, the file not there
    gone = json.loads(text.replace('"name": "other", "key": "k"}', '"name": "none", "key": "k", "optional": true}'))
    state = rt.State({"resources": {"items": [gone, cm("other", {"k": "good"})]}})
    assert rt.config_read(gone, {"container": "c", "env": "A"}, state) is None


# ---- a CronJob keeps its program and keeps running ----------------------------------------------------------

CRON = "shop-report-cronjob-nonexistent-image"


def _cronjob(state: dict) -> dict:
    return next(o for o in state["resources"]["items"] if o["kind"] == "CronJob")


@pytest.mark.parametrize("edit, passes", [
    (lambda cj: None, True),
    (lambda cj: cj["spec"].update(schedule="*/10 * * * *"), False),  # fires, half as often as it did
    (lambda cj: cj["spec"].update(schedule="1-59/5 * * * *"), True),  # as often, a minute later
    (lambda cj: cj["spec"].update(suspend=False), True),
    (lambda cj: cj["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"][0].update(command=["true"]), False),
    (lambda cj: cj["spec"].update(suspend=True), False),  # starts no run
    (lambda cj: cj["spec"].update(schedule="0 0 31 2 *"), False),  # the 31st of February never comes
])
def test_a_cronjob_a_fault_acts_on_keeps_its_program_and_its_schedule(edit, passes):
    state = derived(CRON, "solved")
    edit(_cronjob(state))
    verdict = mitigate(CRON, state)
    assert verdict["passed"] is passes, [c for c in verdict["checks"] if not c["passed"]]
    if not passes:
        assert failed(verdict) == ["health.program.shop/CronJob/report"]


def test_a_cron_schedule_fires_where_its_days_fall():
    assert model.cron_fires("*/5 * * * *") and model.cron_fires("@hourly") and model.cron_fires("0 0 29 2 *")
    assert model.cron_fires("0 0 31 2 1")  # day of month or of week, both restricted: Mondays in February
    assert not model.cron_fires("0 0 31 2 *") and not model.cron_fires("0 0 30 2 ?")
    assert not model.cron_fires("CRON_TZ=UTC 0 0 31 4,6,9,11 *")


def test_a_cronjob_run_in_progress_after_a_success_under_the_fix_is_complete():
    state = derived(CRON, "solved")
    cj = _cronjob(state)
    state["fixed_at"] = "2026-01-01T00:09:00Z"
    cj["status"] = {"lastScheduleTime": "2026-01-01T00:10:00Z", "lastSuccessfulTime": "2026-01-01T00:05:40Z",
                    "active": [{"kind": "Job", "name": "report-29000010", "namespace": "shop"}]}
    # the success was before the fix: the runs under the fix have not succeeded yet
    assert "mitigation.predicate.0" in failed(mitigate(CRON, state))
    cj["status"]["lastSuccessfulTime"] = "2026-01-01T00:09:40Z"
    assert mitigate(CRON, state)["passed"]
    del cj["status"]["active"]  # the 00:10 run finished without success
    assert "mitigation.predicate.0" in failed(mitigate(CRON, state))


# ---- a Job keeps its program as every workload that owns pods does -------------------------------------------

def _job_scenario():
    """The CronJob scenario with its report run once, as a Job: the fault and the check on the Job."""
    from itbench_dsl.analysis import states
    from itbench_dsl.compiler import compile_source
    from itbench_dsl.diagnostics import Diagnostics

    text = (HERE.parents[1] / "scenarios" / "sre" / f"{CRON}.itb").read_text()
    text = text.replace(f'scenario "{CRON}"', 'scenario "shop-report-job-nonexistent-image"')
    for old, new in (('cronjob "report" {', 'job "report" {'), ('on cronjob "report"', 'on job "report"'),
                     ("root_cause cronjob", "root_cause job"), ('cronjob "report" complete', 'job "report" complete')):
        text = text.replace(old, new)
    text = "\n".join('    step "Recreate the job with the image it ran"' if line.strip().startswith("step ") else line
                     for line in text.splitlines() if not line.strip().startswith(("schedule =", "concurrency_policy =")))
    result = compile_source(text.encode(), "job.itb", Diagnostics())
    namespace: dict = {"__name__": "job_evaluator"}
    exec(compile(result.files["evaluator.py"], "job/evaluator.py", "exec"), namespace)  # noqa: S102
    return namespace, states.derive(result.scenario)


@pytest.mark.parametrize("edit, passes", [
    (lambda c: None, True),
    (lambda c: c.update(command=["true"]), False),        # a run that completes as `true` is no run of the report
    (lambda c: c.update(args=["--help"]), False),
    (lambda c: c.update(image="busybox:1.37"), False),
])
def test_a_job_a_fault_acts_on_keeps_its_program(edit, passes):
    namespace, derived_states = _job_scenario()
    state = json.loads(json.dumps(derived_states["solved"]))
    job = next(o for o in state["resources"]["items"] if o["kind"] == "Job")
    edit(job["spec"]["template"]["spec"]["containers"][0])
    verdict = namespace["evaluate"](namespace["SPEC"], None, state, task="mitigate")
    assert verdict["passed"] is passes, failed(verdict)
    if not passes:
        assert "health.program.shop/Job/report" in failed(verdict)


# ---- a container port renumbered under its name: the Service follows the name, the program stays -----------

TARGET = "otel-ad-modified-target-port"


def _renumbered(state: dict, workload: str, old: int, new: int) -> dict:
    """`state` with `workload`'s container port `old` declared as `new` (its name kept), in its template and pods."""
    for o in state["resources"]["items"]:
        if o["kind"] == "Deployment" and o["metadata"]["name"] == workload:
            containers = o["spec"]["template"]["spec"]["containers"]
        elif o["kind"] == "Pod" and o["metadata"]["name"].startswith(f"{workload}-"):
            containers = o["spec"]["containers"]
        else:
            continue
        for c in containers:
            for p in c.get("ports") or []:
                if p.get("containerPort") == old:
                    p["containerPort"] = new
    return state


@pytest.mark.parametrize("workload, old, new, passes", [
    ("grafana", 3000, 3001, False),  # its Service targets the name `grafana`: now 3001, where grafana does not listen
    ("ad", 8080, 9999, True),        # the fixed Service targets the number 8080, where ad still listens
])
def test_a_container_port_renumbered_under_its_name_moves_the_services_that_name_it(workload, old, new, passes):
    verdict = mitigate(TARGET, _renumbered(derived(TARGET, "solved"), workload, old, new))
    assert verdict["passed"] is passes, failed(verdict)


def test_a_faulty_target_port_is_not_fixed_by_declaring_the_container_port_there():
    state = derived(TARGET, "faulty")
    solved = derived(TARGET, "solved")
    state["alerts"] = solved["alerts"]
    state["resources"]["items"] = [o for o in state["resources"]["items"] if o["kind"] != "Pod"] + \
        [o for o in solved["resources"]["items"] if o["kind"] == "Pod"]
    verdict = mitigate(TARGET, _renumbered(state, "ad", 8080, 9999))
    assert not verdict["passed"]
    assert "health.service.otel-demo/Service/ad" in failed(verdict)


# ---- an image pinned to a digest runs that digest: the tag's as the pods show it ran, or another image ---------

IMAGE = "otel-checkout-nonexistent-image"
RAN, OTHER = "sha256:" + "a" * 64, "sha256:" + "b" * 64


def _pinned_to(digest: str | None, found_as: str = RAN) -> dict:
    """The solved state, checkout's image pinned to `digest` (its pods' statuses showing it run), with the
    state's incident holding checkout's healthy pods as found, their imageID showing the tag ran as `found_as`."""
    state = derived(IMAGE, "solved")
    checkout = obj(state, "Deployment", "checkout")["spec"]["template"]["spec"]["containers"][0]
    tag = checkout["image"]
    repo = tag.rpartition(":")[0]
    found = []
    for o in state["resources"]["items"]:
        if o["kind"] == "Pod" and o["metadata"]["name"].startswith("checkout-"):
            old = json.loads(json.dumps(o))
            old["metadata"]["name"] += "-found"
            old["status"]["containerStatuses"][0]["imageID"] = f"{repo}@{found_as}"
            found.append(old)
            if digest:
                o["spec"]["containers"][0]["image"] = f"{tag}@{digest}"
                o["status"]["containerStatuses"][0]["imageID"] = f"{repo}@{digest}"
    if digest:
        checkout["image"] = f"{tag}@{digest}"
    state["incident"] = {"at": "2026-01-01T00:00:00Z", "resources": {"kind": "List", "items": found}}
    return state


@pytest.mark.parametrize("digest, passes", [(None, True), (RAN, True), (OTHER, False)])
def test_a_tag_pinned_to_a_digest_is_the_tags_image_only_where_the_tag_ran_as_it(digest, passes):
    verdict = mitigate(IMAGE, _pinned_to(digest))
    assert verdict["passed"] is passes, failed(verdict)


def test_an_image_id_without_its_repository_names_no_digest_a_reference_pins():
    assert model.image_digest("docker-pullable://nginx@sha256:" + "c" * 64) == "sha256:" + "c" * 64
    assert model.image_digest("sha256:" + "c" * 64) is None  # a bare image id: the config's, not a pin
    assert model.image_digest("nginx:1.25") is None
