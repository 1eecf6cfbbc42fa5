"""A ConfigMap or a Secret judged by what the workloads read, not by its name (docs/evaluator.md, "Fields by
meaning", `restored` and `safeguards`): one the fault deleted is back when every reader reads its healthy data,
from whichever object supplies it; flagd's flags are those flagd reads. The states are the compiler's derived
ones edited by hand as an agent would; they do not come from the adversarial corpus (tests/analysis)."""

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

DELETED = "sregym-missing-configmap-social-network"
RESTORED = "restored.social-network/ConfigMap/media-mongodb"


def _items(state: dict) -> list:
    return state["resources"]["items"]


def _without(state: dict, kind: str, name: str) -> dict:
    state["resources"]["items"] = [o for o in _items(state) if (o["kind"], o["metadata"]["name"]) != (kind, name)]
    return state


def _config_volume(state: dict) -> dict:
    spec = obj(state, "Deployment", "media-mongodb")["spec"]["template"]["spec"]
    return next(v["configMap"] for v in spec["volumes"] if (v.get("configMap") or {}).get("name") == "media-mongodb")


def _copy(state: dict, name: str, data: dict) -> dict:
    cm = json.loads(json.dumps(obj(state, "ConfigMap", "media-mongodb")))
    cm["metadata"] = {"name": name, "namespace": "social-network"}
    cm["data"] = data
    return cm


HEALTHY_CONF = "net:\n  tls:\n    mode: disabled\n"
OTHER_CONF = "net:\n  tls:\n    mode: requireTLS\n"


@pytest.mark.parametrize("data, passes", [
    ({"mongod.conf": HEALTHY_CONF}, True),
    ({"mongod.conf": "net: {tls: {mode: disabled}}"}, True),  # the same data in flow style
    ({"mongod.conf": OTHER_CONF}, False),
    ({"other.conf": HEALTHY_CONF}, False),  # the file the database reads is not there
])
def test_a_deleted_configmap_recreated_under_another_name_is_judged_by_what_its_readers_read(data, passes):
    state = derived(DELETED, "solved")
    _items(state).append(_copy(state, "media-mongodb-v2", data))
    _without(state, "ConfigMap", "media-mongodb")
    _config_volume(state)["name"] = "media-mongodb-v2"
    verdict = mitigate(DELETED, state)
    assert verdict["passed"] is passes, [(c["id"], c["detail"]) for c in verdict["checks"] if not c["passed"]]
    # `configmap "media-mongodb" exists`: what its readers read of it is there under another name
    assert ("mitigation.predicate.0" not in failed(verdict)) is ("mongod.conf" in data)
    assert (RESTORED in failed(verdict)) is not passes


def test_a_deleted_configmap_recreated_by_name_with_other_data_fails():
    state = derived(DELETED, "solved")
    obj(state, "ConfigMap", "media-mongodb")["data"]["mongod.conf"] = OTHER_CONF
    assert RESTORED in failed(mitigate(DELETED, state))


@pytest.mark.parametrize("whole, passes", [(False, True),  # every reader mounts mongod.conf by subPath
                                           (True, False)])  # a container mounting the whole volume sees the key
def test_a_key_added_counts_only_where_some_reader_exposes_every_key(whole, passes):
    state = derived(DELETED, "solved")
    obj(state, "ConfigMap", "media-mongodb")["data"]["README"] = "notes nobody reads"
    if whole:
        container = obj(state, "Deployment", "media-mongodb")["spec"]["template"]["spec"]["containers"][0]
        mount = next(m for m in container["volumeMounts"] if m.get("subPath") == "mongod.conf")
        container["volumeMounts"].append({"name": mount["name"], "mountPath": "/etc/all-config"})
    assert (RESTORED in failed(mitigate(DELETED, state))) is not passes


def _binary(text: str) -> str:
    import base64
    return base64.b64encode(text.encode()).decode()


@pytest.mark.parametrize("text, renamed, passes", [
    (HEALTHY_CONF, False, True),  # recreated by name, the file under binaryData: the pod mounts the same bytes
    (HEALTHY_CONF, True, True),  # under another name, the reader pointed at it
    (OTHER_CONF, False, False),
    (OTHER_CONF, True, False),
])
def test_a_configmap_file_is_read_from_binary_data_as_from_data(text, renamed, passes):
    """The kubelet writes a ConfigMap's `binaryData` keys as files like its `data` keys."""
    state = derived(DELETED, "solved")
    cm = _copy(state, "media-mongodb-v2" if renamed else "media-mongodb", {})
    del cm["data"]
    cm["binaryData"] = {"mongod.conf": _binary(text)}
    _without(state, "ConfigMap", "media-mongodb")
    _items(state).append(cm)
    if renamed:
        _config_volume(state)["name"] = "media-mongodb-v2"
    verdict = mitigate(DELETED, state)
    assert verdict["passed"] is passes, [(c["id"], c["detail"]) for c in verdict["checks"] if not c["passed"]]


def test_a_variable_never_reads_binary_data():
    """`envFrom` and `configMapKeyRef` read a ConfigMap's `data` alone: a key only under `binaryData` is no
    variable, and a required `configMapKeyRef` to it keeps the container from starting."""
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "n"},
          "data": {"A": "a"}, "binaryData": {"B": _binary("b")}}
    state = rt.State({"resources": {"kind": "List", "items": [cm]}})
    container = {"name": "x", "envFrom": [{"configMapRef": {"name": "c"}}]}
    assert rt.container_env(container, state, "n", {}).get("B") is None
    assert rt.container_env(container, state, "n", {})["A"] == "a"
    keyed = {"name": "x", "env": [{"name": "B", "valueFrom": {"configMapKeyRef": {"name": "c", "key": "B"}}}]}
    assert rt.container_env(keyed, state, "n", {}) is None
    mounted = {"volumes": [{"name": "v", "configMap": {"name": "c", "items": [{"key": "B", "path": "b"}]}}]}
    assert rt.config_unstartable(mounted, "n", state) is None


def test_the_named_configmap_restored_while_its_reader_reads_another_fails():
    state = derived(DELETED, "solved")
    _items(state).append(_copy(state, "media-mongodb-v2", {"mongod.conf": OTHER_CONF}))
    _config_volume(state)["name"] = "media-mongodb-v2"
    assert RESTORED in failed(mitigate(DELETED, state))


def test_readers_pointed_at_a_configmap_that_is_not_there_fail():
    """The pod cannot start (its volume cannot mount), whatever the named ConfigMap holds."""
    state = derived(DELETED, "solved")
    _config_volume(state)["name"] = "nowhere"
    verdict = mitigate(DELETED, state)
    assert RESTORED in failed(verdict)
    assert "cannot start: ConfigMap nowhere is missing" in next(c["detail"] for c in verdict["checks"]
                                                                if c["id"] == RESTORED)


@pytest.mark.parametrize("present, passes", [(False, False), (True, True)])
def test_an_optional_reference_reads_what_is_there(present, passes):
    """`optional: true` as the kubelet reads it: the pod starts without the ConfigMap, and reads nothing."""
    state = derived(DELETED, "solved")
    _config_volume(state)["optional"] = True
    if not present:
        _without(state, "ConfigMap", "media-mongodb")
    verdict = mitigate(DELETED, state)
    assert (RESTORED not in failed(verdict)) is passes
    assert ("mitigation.predicate.0" not in failed(verdict)) is passes


# ---- the resolution itself, on a Secret read through its environment -------------------------------------------

SECRET = {"apiVersion": "v1", "kind": "Secret", "namespace": "ns", "name": "creds"}
WORKLOAD = {"apiVersion": "apps/v1", "kind": "Deployment", "namespace": "ns", "name": "app"}
ENTRY = {"object": SECRET, "owned": {"metadata": {"name": "creds", "namespace": "ns"}, "data": {"pw": "admin"}},
         "readers": {"pw": [{"workload": WORKLOAD, "container": "c", "env": "PW"}]}}


def _state(container: dict, *objects, volumes=()) -> rt.State:
    app = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "app", "namespace": "ns"},
           "spec": {"template": {"spec": {"containers": [{"name": "c", **container}], "volumes": list(volumes)}}}}
    return rt.State({"resources": {"items": [app, *objects]}, "captured": ["ns/Secret", "ns/ConfigMap"]})


def _secret(name: str, **data) -> dict:
    return {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": name, "namespace": "ns"}, "stringData": data}


def test_a_deleted_secret_is_back_when_the_variable_reads_its_value_from_any_secret():
    # the container's $PW, set from the key PW of a new Secret through envFrom
    moved = _state({"envFrom": [{"secretRef": {"name": "creds-v2"}}]}, _secret("creds-v2", PW="admin"))
    assert rt.restored_check(ENTRY, moved)[0]
    # its key `pw` through envFrom is the variable $pw, not the $PW the container reads
    assert not rt.restored_check(ENTRY, _state({"envFrom": [{"secretRef": {"name": "creds-v2"}}]},
                                               _secret("creds-v2", pw="admin")))[0]
    wrong = _state({"env": [{"name": "PW", "valueFrom": {"secretKeyRef": {"name": "creds-v2", "key": "pw"}}}]},
                   _secret("creds", pw="admin"), _secret("creds-v2", pw="other"))
    assert not rt.restored_check(ENTRY, wrong)[0]
    # the variable set as before, but another reference of the pod names a Secret that is not there
    named = {"env": [{"name": "PW", "valueFrom": {"secretKeyRef": {"name": "creds", "key": "pw"}}}]}
    assert rt.restored_check(ENTRY, _state(named, _secret("creds", pw="admin")))[0]
    stuck = _state(named, _secret("creds", pw="admin"), volumes=[{"name": "tls", "secret": {"secretName": "tls"}}])
    ok, why = rt.restored_check(ENTRY, stuck)
    assert not ok and "Secret tls is missing" in why
    stuck = _state(named, _secret("creds", pw="admin"),
                   volumes=[{"name": "tls", "secret": {"secretName": "tls", "optional": True}}])
    assert rt.restored_check(ENTRY, stuck)[0]


def test_a_projected_volume_reads_the_last_source_that_holds_the_file():
    reader = {"container": "c", "file": "/etc/creds/pw"}
    volume = {"name": "v", "projected": {"sources": [{"secret": {"name": "a"}}, {"secret": {"name": "b"}}]}}
    state = _state({"volumeMounts": [{"name": "v", "mountPath": "/etc/creds"}]}, _secret("a", pw="old"),
                   _secret("b", pw="new"), volumes=[volume])
    assert rt.config_resolve(state.get(WORKLOAD), reader, state)[:2] == ("new", ("Secret", "b"))


# ---- flagd's flags: those flagd reads ----------------------------------------------------------------------

FLAG = "otel-payment-failure-flag"


def _flags_moved(turned_on_in: str) -> dict:
    """flagd pointed at a new ConfigMap holding its flags, adFailure turned on in `turned_on_in`."""
    state = derived(FLAG, "solved")
    named = obj(state, "ConfigMap", "flagd-config")
    moved = json.loads(json.dumps(named))
    moved["metadata"] = {"name": "flagd-flags", "namespace": named["metadata"]["namespace"]}
    _items(state).append(moved)
    cm = named if turned_on_in == "named" else moved
    data = json.loads(cm["data"]["demo.flagd.json"])
    data["flags"]["adFailure"]["defaultVariant"] = "on"
    cm["data"]["demo.flagd.json"] = json.dumps(data)
    for volume in obj(state, "Deployment", "flagd")["spec"]["template"]["spec"]["volumes"]:
        if (volume.get("configMap") or {}).get("name") == "flagd-config":
            volume["configMap"]["name"] = "flagd-flags"
    return state


def test_flagd_flags_are_judged_where_flagd_reads_them():
    verdict = mitigate(FLAG, _flags_moved("moved"))
    assert "safeguards" in failed(verdict)
    assert "flag adFailure evaluates to true" in next(c["detail"] for c in verdict["checks"] if c["id"] == "safeguards")
    # the named ConfigMap flagd no longer reads may hold anything
    verdict = mitigate(FLAG, _flags_moved("named"))
    assert verdict["passed"], [(c["id"], c["detail"]) for c in verdict["checks"] if not c["passed"]]


# ---- a predicate on a ConfigMap's key: what the workloads read there ---------------------------------------

@pytest.fixture(scope="module")
def flag_predicate():
    """otel-payment-failure-flag stated with a predicate on the flag, compiled, and its derived states."""
    from itbench_dsl.analysis import states
    from itbench_dsl.backends.evaluator import evaluator_spec
    from itbench_dsl.compiler import compile_source
    from itbench_dsl.diagnostics import Diagnostics

    source = (HERE.parents[1] / "scenarios" / "sre" / f"{FLAG}.itb").read_text().replace("  expect {\n", (
        '  expect {\n    mitigated when {\n      configmap "flagd-config" data["demo.flagd.json"] as json '
        '.flags.paymentFailure.defaultVariant == "off"\n    }\n'), 1)
    scenario = compile_source(source.encode(), "flag.itb", Diagnostics()).scenario
    return evaluator_spec(scenario), states.derive(scenario)


@pytest.mark.parametrize("copy_of, named_from, holds", [
    ("solved", "solved", True),
    ("solved", "faulty", True),  # flagd reads a copy of the healthy flags; the named one, unread, left faulty
    ("faulty", "solved", False),  # the named one restored; flagd reads a copy of the faulty flags
])
def test_a_predicate_on_a_configmap_key_holds_on_what_the_workloads_read(flag_predicate, copy_of, named_from, holds):
    spec, found = flag_predicate
    assert spec["mitigation"]["predicates"][0]["readers"]
    state = json.loads(json.dumps(found["solved"]))
    named = obj(state, "ConfigMap", "flagd-config")
    named["data"] = obj(found[named_from], "ConfigMap", "flagd-config")["data"]
    moved = {**json.loads(json.dumps(named)), "metadata": {"name": "flagd-flags", "namespace": "otel-demo"},
             "data": obj(found[copy_of], "ConfigMap", "flagd-config")["data"]}
    _items(state).append(moved)
    for volume in obj(state, "Deployment", "flagd")["spec"]["template"]["spec"]["volumes"]:
        if (volume.get("configMap") or {}).get("name") == "flagd-config":
            volume["configMap"]["name"] = "flagd-flags"
    verdict = rt.evaluate(spec, None, state, task="mitigate")
    assert ("mitigation.predicate.0" not in failed(verdict)) is holds, verdict["checks"][0]
