"""What a fix must leave of the application it did not need to touch (docs/evaluator.md, `safeguards`): every
other workload's configuration as its readers see it (collateral `configs`), no crippling limit added where a
container had none or at pod level (`floors`), and the data a workload keeps on a PersistentVolumeClaim kept
there (`storage`). The states are the compiler's derived ones edited by hand as an agent would."""

from __future__ import annotations

import copy
import json
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

from test_evaluator import derived, failed, mitigate, obj  # noqa: E402

CONFIG = "sregym-missing-configmap-social-network"  # its fault deletes media-mongodb; others read their own
STORAGE = "sregym-network-policy-block"  # hotel-reservation: mongodb-geo keeps its data on the claim geo-pvc


def _pod(state: dict, kind: str, name: str) -> dict:
    return obj(state, kind, name)["spec"]["template"]["spec"]


def _detail(verdict: dict) -> str:
    return next(c["detail"] for c in verdict["checks"] if c["id"] == "safeguards")


def _reader_volume(state: dict) -> dict:
    return next(v["configMap"] for v in _pod(state, "Deployment", "compose-post-service")["volumes"]
                if (v.get("configMap") or {}).get("name") == "compose-post-service")


def _copy(state: dict, name: str) -> dict:
    cm = copy.deepcopy(obj(state, "ConfigMap", "compose-post-service"))
    cm["metadata"] = {"name": name, "namespace": cm["metadata"]["namespace"]}
    state["resources"]["items"].append(cm)
    return cm


def _service_config(cm: dict) -> tuple[str, dict]:
    key = next(k for k, v in cm["data"].items() if v.lstrip().startswith("{"))
    return key, json.loads(cm["data"][key])


def test_another_workloads_configmap_edited_fails():
    state = derived(CONFIG, "solved")
    cm = obj(state, "ConfigMap", "compose-post-service")
    key, data = _service_config(cm)
    data["itbench-edited"] = True
    cm["data"][key] = json.dumps(data)
    verdict = mitigate(CONFIG, state)
    assert "safeguards" in failed(verdict)
    assert "compose-post-service's data as its readers see it changed" in _detail(verdict)


def test_another_workloads_configmap_reserialised_passes():
    state = derived(CONFIG, "solved")
    cm = obj(state, "ConfigMap", "compose-post-service")
    key, data = _service_config(cm)
    cm["data"][key] = json.dumps(data, indent=4, sort_keys=True)  # the same data, written otherwise
    assert mitigate(CONFIG, state)["passed"]


@pytest.mark.parametrize("edit, passes", [("same", True), ("other", False), ("missing", False)])
def test_a_readers_volume_repointed_is_judged_by_what_it_reads(edit, passes):
    state = derived(CONFIG, "solved")
    if edit != "missing":
        cm = _copy(state, "compose-post-service-v2")
        if edit == "other":
            key, data = _service_config(cm)
            cm["data"][key] = json.dumps({**data, "itbench-edited": True})
    _reader_volume(state)["name"] = "compose-post-service-v2"
    verdict = mitigate(CONFIG, state)
    assert verdict["passed"] is passes, [(c["id"], c["detail"]) for c in verdict["checks"] if not c["passed"]]
    if not passes:
        assert "safeguards" in failed(verdict)


def _limited(state: dict, **limits) -> None:
    container = _pod(state, "Deployment", "compose-post-service")["containers"][0]
    container.setdefault("resources", {}).setdefault("limits", {}).update(limits)


@pytest.mark.parametrize("limits, passes", [
    ({"memory": "1Mi"}, False),
    ({"cpu": "1m"}, False),
    ({"memory": "8Gi", "cpu": "4"}, True),  # a generous limit where it had none starves nothing
])
def test_a_limit_added_where_a_container_had_none_is_judged_against_what_it_runs_with(limits, passes):
    state = derived(CONFIG, "solved")
    assert "limits" not in (_pod(state, "Deployment", "compose-post-service")["containers"][0].get("resources") or {})
    _limited(state, **limits)
    verdict = mitigate(CONFIG, state)
    assert verdict["passed"] is passes, [(c["id"], c["detail"]) for c in verdict["checks"] if not c["passed"]]


@pytest.mark.parametrize("memory, passes", [("1Mi", False), ("4Gi", True)])
def test_a_pod_level_limit_is_judged_against_what_its_containers_run_with(memory, passes):
    state = derived(CONFIG, "solved")
    _pod(state, "Deployment", "compose-post-service")["resources"] = {"limits": {"memory": memory}}
    verdict = mitigate(CONFIG, state)
    assert verdict["passed"] is passes, [(c["id"], c["detail"]) for c in verdict["checks"] if not c["passed"]]


def _claim_volume(state: dict) -> dict:
    return next(v for v in _pod(state, "Deployment", "mongodb-geo")["volumes"] if "persistentVolumeClaim" in v)


@pytest.mark.parametrize("source", [{"emptyDir": {}}, {"hostPath": {"path": "/tmp/geo"}},
                                    {"persistentVolumeClaim": {"claimName": "fresh-pvc"}}])
def test_a_claim_volume_swapped_for_another_source_fails(source):
    state = derived(STORAGE, "solved")
    volume = _claim_volume(state)
    for key in [k for k in volume if k != "name"]:
        del volume[key]
    volume.update(source)
    verdict = mitigate(STORAGE, state)
    assert "safeguards" in failed(verdict)
    assert "mongodb-geo container" in _detail(verdict)


def test_a_claim_volume_renamed_with_its_mount_passes():
    state = derived(STORAGE, "solved")
    volume = _claim_volume(state)
    old, volume["name"] = volume["name"], "renamed"
    for c in _pod(state, "Deployment", "mongodb-geo")["containers"]:
        for m in c.get("volumeMounts") or []:
            if m["name"] == old:
                m["name"] = "renamed"
    verdict = mitigate(STORAGE, state)
    assert verdict["passed"], [(c["id"], c["detail"]) for c in verdict["checks"] if not c["passed"]]
