"""Two ways a state can look healthy while the application is broken, and the safeguards that catch them
(docs/evaluator.md, `safeguards`): an object a workload's pods need (a ConfigMap, Secret, ServiceAccount or
PersistentVolumeClaim its pod template names) deleted beside the fix, which the running pods do not notice
until the next one cannot start; and pods no workload of the topology runs joining a Service of the
topology, serving in place of the pods it is for. Each case pairs the right answer (passes) with the cheat
(fails).
"""

from __future__ import annotations

import copy
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

from test_evaluator import bundle, derived, failed, mitigate, obj, refused  # noqa: E402

from itbench_dsl.backends.evaluator import evaluator_spec  # noqa: E402
from itbench_dsl.runtime import evaluator as rt  # noqa: E402

SOCIAL = "sregym-scale-pod-zero-social-net"  # its workloads mount ConfigMaps of their own
OTEL = "otel-cart-deleted-service"  # a shared ServiceAccount, grafana's Secret
HOTEL = "hotel-reservation-mongodb-geo-revoked-role"  # MongoDB's PersistentVolumeClaims
MISSING = "sregym-missing-configmap-social-network"  # the fault deletes a ConfigMap


def _without(state: dict, kind: str, name: str) -> dict:
    items = state["resources"]["items"]
    assert any(o["kind"] == kind and o["metadata"]["name"] == name for o in items), (kind, name)
    state["resources"]["items"] = [o for o in items if not (o["kind"] == kind and o["metadata"]["name"] == name)]
    return state


def _detail(verdict: dict, check: str = "safeguards") -> str:
    return next(c["detail"] for c in verdict["checks"] if c["id"] == check)


# ---- what a pod template needs ---------------------------------------------------------------------------


def test_pod_references_reads_every_place_a_template_names_an_object():
    template = {"spec": {
        "serviceAccountName": "runner",
        "imagePullSecrets": [{"name": "registry"}],
        "volumes": [
            {"name": "a", "configMap": {"name": "cm-volume"}},
            {"name": "b", "secret": {"secretName": "secret-volume"}},
            {"name": "c", "persistentVolumeClaim": {"claimName": "data"}},
            {"name": "d", "projected": {"sources": [{"configMap": {"name": "cm-projected"}},
                                                    {"secret": {"name": "secret-projected"}},
                                                    {"serviceAccountToken": {"path": "token"}}]}},
            {"name": "e", "configMap": {"name": "cm-optional", "optional": True}},
            {"name": "f", "emptyDir": {}},
        ],
        "initContainers": [{"name": "init", "envFrom": [{"secretRef": {"name": "secret-init"}}]}],
        "containers": [{"name": "app", "env": [
            {"name": "X", "valueFrom": {"configMapKeyRef": {"name": "cm-env", "key": "x"}}},
            {"name": "Y", "valueFrom": {"secretKeyRef": {"name": "secret-env", "key": "y"}}},
            {"name": "Z", "valueFrom": {"secretKeyRef": {"name": "secret-optional", "key": "z", "optional": True}}},
            {"name": "W", "value": "plain"},
        ], "envFrom": [{"configMapRef": {"name": "cm-from"}}]}],
    }}
    assert rt.pod_references(template) == {
        ("ServiceAccount", "runner"), ("Secret", "registry"), ("ConfigMap", "cm-volume"),
        ("Secret", "secret-volume"), ("PersistentVolumeClaim", "data"), ("ConfigMap", "cm-projected"),
        ("Secret", "secret-projected"), ("Secret", "secret-init"), ("ConfigMap", "cm-env"), ("Secret", "secret-env"),
        ("ConfigMap", "cm-from")}
    assert rt.pod_references({"spec": {"volumes": "not a list", "containers": [None]}}) == set()
    assert rt.pod_references(None) == set()


def test_the_spec_lists_what_each_workload_needs_and_the_run_captures_those_kinds():
    spec = evaluator_spec(bundle(OTEL)[0])
    references = spec["mitigation"]["collateral"]["references"]
    grafana = next(e for e in references if e["workload"]["name"] == "grafana")
    assert {"kind": "Secret", "namespace": "otel-demo", "name": "grafana"} in grafana["needs"]
    kinds = spec["requires"]["kinds"]
    for kind in ("ConfigMap", "Secret", "ServiceAccount"):
        assert ["otel-demo", kind] in kinds
    assert ["hotel-reservation", "PersistentVolumeClaim"] in evaluator_spec(bundle(HOTEL)[0])["requires"]["kinds"]
    # a capture without the Secrets cannot say whether one is gone: refused, never passed
    state = derived(OTEL, "solved")
    state["resources"]["items"] = [o for o in state["resources"]["items"] if o["kind"] != "Secret"]
    state["captured"] = [c for c in state["captured"] if not c.endswith("/Secret")]
    assert "otel-demo/Secret" in refused(OTEL, None, state, task="mitigate")


def test_what_the_fault_deletes_is_no_collateral_need():
    spec = evaluator_spec(bundle(MISSING)[0])
    needed = {r["name"] for e in spec["mitigation"]["collateral"]["references"] for r in e["needs"]}
    assert "media-mongodb" not in needed  # the `restored` check judges it
    verdict = mitigate(MISSING, derived(MISSING, "faulty"))
    assert "restored.social-network/ConfigMap/media-mongodb" in failed(verdict)
    assert "media-mongodb" not in _detail(verdict)
    assert mitigate(MISSING, derived(MISSING, "solved"))["passed"]


# ---- collateral deletion -----------------------------------------------------------------------------------


@pytest.mark.parametrize("scenario, kind, name, workload", [
    (SOCIAL, "ConfigMap", "compose-post-service", "compose-post-service"),
    (OTEL, "Secret", "grafana", "grafana"),
    (OTEL, "ServiceAccount", "opentelemetry-demo", "cart"),
    (HOTEL, "PersistentVolumeClaim", "geo-pvc", "mongodb-geo"),
])
def test_an_object_the_pods_need_deleted_beside_the_fix_fails(scenario, kind, name, workload):
    assert mitigate(scenario, derived(scenario, "solved"))["passed"]
    verdict = mitigate(scenario, _without(derived(scenario, "solved"), kind, name))
    assert "safeguards" in failed(verdict)
    detail = _detail(verdict)
    assert f"/{kind}/{name} deleted" in detail and workload in detail and "cannot start" in detail


def test_the_object_recreated_as_it_was_passes():
    state = derived(SOCIAL, "solved")
    again = copy.deepcopy(obj(state, "ConfigMap", "compose-post-service"))
    again["metadata"].update(uid="00000000-0000-0000-0000-000000000001", resourceVersion="999")
    _without(state, "ConfigMap", "compose-post-service")["resources"]["items"].append(again)
    assert mitigate(SOCIAL, state)["passed"]


def test_the_object_being_deleted_fails():
    state = derived(SOCIAL, "solved")
    obj(state, "ConfigMap", "compose-post-service")["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    verdict = mitigate(SOCIAL, state)
    assert "compose-post-service being deleted" in _detail(verdict)


@pytest.mark.parametrize("loosen", ["optional", "dropped"])
def test_a_template_that_no_longer_reads_the_object_reads_nothing_in_its_place(loosen):
    # the pods start without it (marked optional, or the volume and its mounts taken out), but the program no
    # longer reads the configuration its healthy one read: the references are kept, what is read is not
    # (collateral `configs`, docs/evaluator.md)
    state = _without(derived(SOCIAL, "solved"), "ConfigMap", "compose-post-service")
    pod = obj(state, "Deployment", "compose-post-service")["spec"]["template"]["spec"]
    volumes = [v for v in pod["volumes"] if (v.get("configMap") or {}).get("name") == "compose-post-service"]
    assert volumes
    if loosen == "optional":
        for v in volumes:
            v["configMap"]["optional"] = True
    else:
        gone = {v["name"] for v in volumes}
        pod["volumes"] = [v for v in pod["volumes"] if v["name"] not in gone]
        for c in pod["containers"]:
            c["volumeMounts"] = [m for m in c.get("volumeMounts") or [] if m["name"] not in gone]
    verdict = mitigate(SOCIAL, state)
    assert "safeguards" in failed(verdict)
    assert "cannot start" not in _detail(verdict)  # the pods start: the references are not what is broken
    assert "compose-post-service's data as its readers see it changed" in _detail(verdict)


def test_a_workload_deleted_is_said_once_not_for_each_object_it_needed():
    state = _without(derived(SOCIAL, "solved"), "Deployment", "compose-post-service")
    state = _without(state, "ConfigMap", "compose-post-service")
    detail = _detail(mitigate(SOCIAL, state))
    assert "Deployment/compose-post-service deleted" in detail and "cannot start" not in detail


# ---- pods joining a Service without a workload of the topology ---------------------------------------------


def _service_pod(state: dict, service: str) -> dict:
    st = rt.State(state)
    return rt.selected_pods(st.get({"kind": "Service", "namespace": "social-network", "name": service}), st)[0]


def _stray(state: dict, name: str, owners=None, labels=None, **extra) -> dict:
    pod = copy.deepcopy(_service_pod(state, "compose-post-service"))
    pod["metadata"] = {"name": name, "namespace": pod["metadata"]["namespace"],
                       "labels": labels if labels is not None else dict(pod["metadata"]["labels"]),
                       **({"ownerReferences": owners} if owners is not None else {}), **extra.pop("meta", {})}
    pod.update(extra)
    state["resources"]["items"].append(pod)
    return state


def _rs(name: str) -> list:
    return [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": name, "controller": True,
             "uid": "00000000-0000-0000-0000-000000000002"}]


@pytest.mark.parametrize("name, owners, hash_", [
    ("compose-post-service-stray", None, None),  # a bare pod carrying the app's labels
    ("compose-post-service-5f4d3c2b1-zzzzz", None, "5f4d3c2b1"),  # named like the workload's pods, owned by none
    ("impostor-7b9c6d5f4-zzzzz", _rs("impostor-7b9c6d5f4"), "7b9c6d5f4"),  # another Deployment's pod
])
def test_a_pod_no_workload_of_the_topology_runs_selected_by_a_service_fails(name, owners, hash_):
    state = derived(SOCIAL, "solved")
    labels = dict(_service_pod(state, "compose-post-service")["metadata"]["labels"])
    if hash_:
        labels["pod-template-hash"] = hash_
    verdict = mitigate(SOCIAL, _stray(state, name, owners, labels))
    assert failed(verdict) == ["safeguards"]
    assert "Service/compose-post-service" in _detail(verdict) and name in _detail(verdict)


def test_a_stray_pod_masking_a_workload_scaled_to_zero_is_named():
    state = _stray(derived(SOCIAL, "faulty"), "user-service-stray", labels={"service": "user-service"})
    detail = _detail(mitigate(SOCIAL, state))
    assert "user-service-stray" in detail and "Service/user-service" in detail


def test_a_pod_of_a_declared_workload_from_another_replicaset_passes():
    state = derived(SOCIAL, "solved")
    labels = {**_service_pod(state, "compose-post-service")["metadata"]["labels"], "pod-template-hash": "5f4d3c2b1"}
    state = _stray(state, "compose-post-service-5f4d3c2b1-zzzzz", _rs("compose-post-service-5f4d3c2b1"), labels)
    assert mitigate(SOCIAL, state)["passed"]


@pytest.mark.parametrize("extra", [
    {"labels": {"run": "debug"}},  # a debugging pod the Service does not select
    {"status": {"phase": "Succeeded"}},  # a finished pod is no endpoint
    {"meta": {"deletionTimestamp": "2026-01-01T00:00:00Z"}},  # leaving
])
def test_a_pod_that_joins_no_service_passes(extra):
    extra = dict(extra)
    labels = extra.pop("labels", None)
    state = _stray(derived(SOCIAL, "solved"), "compose-post-service-debug", None, labels, **extra)
    verdict = mitigate(SOCIAL, state)
    assert verdict["passed"], failed(verdict)


# ---- what nothing reads: deleted or changed beside the fix --------------------------------------------------


def test_an_object_nothing_reads_is_kept_as_deployed():
    """A ConfigMap, Secret or ServiceAccount no pod template reads and no fault acts on (the dashboards'
    provisioning here, a `noise` red herring in a variant) is part of the application: deleting it or changing
    its data beside the fix is collateral harm, which the safeguards fail; the solved state passes."""
    spec = evaluator_spec(bundle(OTEL)[0])
    unread = {e["object"]["name"]: e for e in spec["mitigation"]["collateral"]["unread"]}
    assert "grafana-datasources" in unread and "data" in unread["grafana-datasources"]
    assert "grafana" not in unread  # grafana's pods read its Secret: the references check keeps it
    assert ["otel-demo", "ConfigMap"] in spec["requires"]["kinds"]
    assert mitigate(OTEL, derived(OTEL, "solved"))["passed"]
    verdict = mitigate(OTEL, _without(derived(OTEL, "solved"), "ConfigMap", "grafana-datasources"))
    assert failed(verdict) == ["safeguards"] and "ConfigMap/grafana-datasources deleted" in _detail(verdict)
    state = derived(OTEL, "solved")
    held = obj(state, "ConfigMap", "grafana-datasources")
    key = sorted(held["data"])[0]
    held["data"][key] += "\n# edited"
    verdict = mitigate(OTEL, state)
    assert failed(verdict) == ["safeguards"] and "ConfigMap/grafana-datasources changed" in _detail(verdict)


def test_content_digest_reads_what_a_workload_sees():
    import base64

    plain = {"kind": "ConfigMap", "data": {"a": "1"}}
    binary = {"kind": "ConfigMap", "binaryData": {"a": base64.b64encode(b"1").decode()}}
    assert rt.content_digest(plain) == rt.content_digest(binary) != rt.content_digest({"kind": "ConfigMap"})
    secret = rt.decoded_secret({"kind": "Secret", "data": {"a": base64.b64encode(b"1").decode()}})
    assert rt.content_digest(secret) == rt.content_digest(rt.decoded_secret({"kind": "Secret", "stringData": {"a": "1"}}))
    assert rt.unread_kept([{"object": {"kind": "ServiceAccount", "namespace": "x", "name": "sa"}}],
                          rt.State({"resources": {"items": []}, "captured": ["x/ServiceAccount"]})) == [
        "x/ServiceAccount/sa deleted"]


def test_the_safeguards_word_a_lost_object_alike():
    """An unread object and an autoscaler are each lost when deleted or being deleted, in one wording
    (`still_there`): a deleted one cannot be changed or bounded too, so nothing else is said of it."""
    sa = {"kind": "ServiceAccount", "namespace": "x", "name": "sa"}
    hpa = {"kind": "HorizontalPodAutoscaler", "namespace": "x", "name": "h"}
    empty = rt.State({"resources": {"items": []}, "captured": ["x/ServiceAccount", "x/HorizontalPodAutoscaler"]})
    assert rt.unread_kept([{"object": sa, "data": "d"}], empty) == ["x/ServiceAccount/sa deleted"]
    assert rt.autoscalers_kept([{"object": hpa, "maxReplicas": 3}], empty) == ["x/HorizontalPodAutoscaler/h deleted"]
    leaving = {"metadata": {"namespace": "x", "deletionTimestamp": "2026-01-01T00:00:00Z"}, "spec": {"maxReplicas": 1}}
    state = rt.State({"resources": {"items": [
        dict(leaving, apiVersion="v1", kind="ServiceAccount", metadata=dict(leaving["metadata"], name="sa")),
        dict(leaving, apiVersion="autoscaling/v2", kind="HorizontalPodAutoscaler",
             metadata=dict(leaving["metadata"], name="h"))]},
        "captured": ["x/ServiceAccount", "x/HorizontalPodAutoscaler"]})
    assert rt.unread_kept([{"object": sa, "data": "d"}], state) == ["x/ServiceAccount/sa being deleted"]
    assert rt.autoscalers_kept([{"object": hpa, "maxReplicas": 3}], state) == [
        "x/HorizontalPodAutoscaler/h being deleted"]
