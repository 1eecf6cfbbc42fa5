"""Observed states (`itbench states --observe`, run/observe.py) and the kwok Stages of the fault model
(run/local/stages.py).

The stage tests need nothing; the control-plane tests skip where it is not built (`ITBENCH_LOCAL_CLUSTER=
unbuilt`, as .ci/run sets it) and observe two scenarios only (the whole library: benchmarks/observe.py).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from itbench_dsl.checking import check_source
from itbench_dsl.faults import FAULTS
from itbench_dsl.run.local.stages import EFFECTS, config_stages, pod_selectors, scenario_stages, stage
from itbench_dsl.run.lifecycle import load_bundle
from itbench_dsl.run.observe import _exec_parts, reads_only, runnable_solution

ROOT = Path(__file__).resolve().parents[2]
LIBRARY = ROOT / "scenarios"


def scenario(name: str):
    path = next(LIBRARY.rglob(f"{name}.itb"))
    checked = check_source(path.read_bytes(), str(path))
    assert not checked.has_errors
    return checked


def expressions(s: dict) -> dict:
    return {e["key"]: e.get("values") for e in s["spec"]["selector"]["matchExpressions"]}


def test_an_image_fault_gives_a_stage_on_the_faulty_image_only():
    compiled = scenario("otel-checkout-nonexistent-image").result.scenario
    (fault,) = compiled.injections()
    found = scenario_stages(compiled)
    assert len(found) == 1
    keys = expressions(found[0])
    assert keys[".metadata.namespace"] == ["otel-demo"]
    image = [k for k in keys if k.endswith('.["image"]? | tojson')]
    assert image and keys[image[0]] == [json.dumps(fault.args["image"])]  # the faulty image, not the healthy one
    assert fault.args["image"] != fault.args["original_image"]
    assert 'select(.["name"] == "checkout")' in image[0]
    assert "ImagePullBackOff" in found[0]["spec"]["next"]["statusTemplate"]
    assert found[0]["spec"]["weight"] == 1  # over kwok's pod-ready (weight 0)


def test_no_stage_reads_a_marker():
    """A stage is decided by the pod's spec (and namespace, status): never by a label or annotation."""
    for path in sorted(LIBRARY.rglob("*.itb"))[:60]:
        checked = check_source(path.read_bytes(), str(path))
        if checked.has_errors or checked.result.scenario is None:
            continue
        for s in scenario_stages(checked.result.scenario):
            for key in expressions(s):
                assert ".metadata.labels" not in key and ".metadata.annotations" not in key, (path, key)


def test_every_pod_effect_a_stage_gives_has_a_status():
    from itbench_dsl.faults import POD_EFFECTS

    assert set(EFFECTS) <= set(POD_EFFECTS)
    for effect in (*EFFECTS, "config"):
        text = stage("x", effect, [])["spec"]["next"]["statusTemplate"]
        assert "phase:" in text and "Ready" in text
    assert "OOMKilled" in stage("x", "crash", [], "OOMKilled")["spec"]["next"]["statusTemplate"]
    delay = stage("x", "crash", [])["spec"]["delay"]
    assert delay["durationMilliseconds"] > 0  # restarts rise, not a hot loop
    assert '"0s"' in delay["durationFrom"]["expressionFrom"]  # but the first crash at once


def test_a_memory_limit_fault_is_an_oom_kill():
    found = scenario_stages(scenario("k8sbench-fix-oomkilled").result.scenario)
    assert found and all("OOMKilled" in s["spec"]["next"]["statusTemplate"] for s in found)


def test_pod_selectors_read_the_pod_template_only():
    assert pod_selectors(["spec", "replicas"], 0) is None
    assert pod_selectors(["spec", "template", "spec", "containers", ["name", "a"], "env"], None) is None
    probe = pod_selectors(["spec", "template", "spec", "containers", ["name", "a"], "readinessProbe"],
                          {"httpGet": {"port": 40, "path": "/x"}})
    assert [e["values"] for e in probe] == [['"/x"'], ["40"]]
    assert all(e["key"].startswith('.["spec"]? | .["containers"]?') for e in probe)


def test_config_stages_wait_new_pods_only():
    (s,) = config_stages([("ConfigMap", "shop", "settings")])
    keys = expressions(s)
    assert keys[".status.phase"] == ["Running", "Succeeded", "Failed"]  # NotIn: a running pod keeps what it mounted
    assert any('index(["settings"])' in k for k in keys)
    assert config_stages([("Service", "shop", "x")]) == []


def test_commands_run_in_pods_make_a_scenario_unobservable_on_kwok(tmp_path):
    """kwok's pods run no container: a scenario whose fault (or revert, or probe) execs in one is reported
    unobservable there, not failed; one that applies objects only is observable."""
    from itbench_dsl.bundle import write_bundle

    found = {}
    for name in ("hotel-reservation-mongodb-geo-revoked-role", "otel-checkout-nonexistent-image"):
        checked = scenario(name)
        found[name] = _exec_parts(load_bundle(write_bundle(tmp_path, name, checked.result.files)))
    assert "inject/exec.json" in found["hotel-reservation-mongodb-geo-revoked-role"]
    assert found["otel-checkout-nonexistent-image"] == []


def test_the_first_runnable_solution_is_chosen():
    solutions = [{"title": "edit", "steps": [{"command": "kubectl -n a edit deployment b"}]},
                 {"title": "value", "steps": [{"command": "kubectl -n a set env deployment/b X=<value>"}]},
                 {"title": "undo", "steps": [{"command": "kubectl -n a rollout undo deployment/b"}]}]
    assert runnable_solution(solutions) == (2, solutions[2])
    assert runnable_solution(solutions[:2]) is None
    # a step that only looks changes nothing: it neither disqualifies a solution nor runs (kwok pods write no logs)
    looked = [{"title": "logs", "steps": [{"command": "kubectl -n a logs deployment/b --previous"},
                                          {"command": "kubectl -n a get pod <pod>"},
                                          {"command": "kubectl -n a rollout undo deployment/b"}]}]
    assert runnable_solution(looked) == (0, looked[0])
    assert reads_only("kubectl --namespace a describe pod x") and not reads_only("kubectl -n a delete pod x")
    assert not reads_only("kubectl get pods | xargs kubectl delete pod")


# ---- on the local control plane ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def plane(tmp_path_factory):
    from itbench_dsl.run.local import LocalClusterError, build, down, up

    if os.environ.get("ITBENCH_LOCAL_CLUSTER") == "unbuilt":
        pytest.skip("the local control plane could not be built before the tests (.ci/run)")
    try:
        binary = build(say=lambda message: None)
    except LocalClusterError as exc:
        pytest.skip(f"the local control plane cannot be built here: {str(exc).splitlines()[0]}")
    directory = tmp_path_factory.mktemp("observe") / "cluster"
    started = up(directory, binary=binary, say=lambda message: None)
    try:
        yield directory, started
    finally:
        down(directory, say=lambda message: None)


def observe(plane, name: str, tmp_path):
    from itbench_dsl.bundle import write_bundle
    from itbench_dsl.run.observe import kubectl_path, observe_scenario

    directory, started = plane
    checked = scenario(name)
    bundle = write_bundle(tmp_path / "bundles", checked.result.scenario.name, checked.result.files)
    return observe_scenario(checked.result.scenario, bundle, str(started.kubeconfig), cluster_dir=directory,
                            kubectl=kubectl_path(directory), work=tmp_path / "work", progress=None)


def pods(state: dict, prefix: str) -> list[dict]:
    return [i for i in state["resources"]["items"] if i["kind"] == "Pod" and i["metadata"]["name"].startswith(prefix)]


def test_an_unpullable_image_is_observed_as_the_kubelet_shows_it(plane, tmp_path):
    obs = observe(plane, "k8sbench-fix-image-pull", tmp_path)
    assert obs.status == "observed", obs.detail
    faulty = [p for p in obs.states["faulty"]["resources"]["items"] if p["kind"] == "Pod"]
    waiting = [c["state"]["waiting"]["reason"] for p in faulty for c in p["status"].get("containerStatuses", [])
               if "waiting" in c.get("state", {})]
    assert "ImagePullBackOff" in waiting
    assert obs.observed["faulty"] == {t: False for t in obs.observed["faulty"]}
    assert obs.agree, obs.differences
    # kwok's defaults are back: nothing of the scenario's stages is left for the next one
    assert "itbench-" not in (plane[0] / "conf" / "kwok-stages.yaml").read_text()


def test_the_cli_writes_observed_states_and_the_comparison(plane, tmp_path):
    from click.testing import CliRunner

    from itbench_dsl.cli import cli

    path = next(LIBRARY.rglob("k8sbench-fix-crashloop.itb"))
    result = CliRunner().invoke(cli, ["states", str(path), "--observe", "--kubeconfig", str(plane[1].kubeconfig),
                                      "-o", str(tmp_path / "out")])
    folder = tmp_path / "out" / "k8sbench-fix-crashloop"
    report = json.loads((folder / "observe.json").read_text())
    assert report["status"] == "observed", report
    assert {p.name for p in folder.iterdir()} == {"healthy.json", "faulty.json", "solved.json", "observe.json"}
    crash = [c for p in pods(json.loads((folder / "faulty.json").read_text()), "")
             for c in p["status"].get("containerStatuses", []) if "waiting" in c.get("state", {})]
    assert crash and crash[0]["state"]["waiting"]["reason"] == "CrashLoopBackOff"
    assert result.exit_code == (0 if report["agree"] else 1), result.output


# ---- the runtime's defaulting model against the server's ----------------------------------------------------


def _leaf_paths(value, path=()):
    if isinstance(value, dict):
        for key, sub in value.items():
            yield from _leaf_paths(sub, (*path, key))
    elif isinstance(value, list):
        for index, sub in enumerate(value):
            yield from _leaf_paths(sub, (*path, index))
    else:
        yield path, value


def _at(value, path):
    for part in path:
        try:
            value = value[part]
        except (KeyError, IndexError, TypeError):
            return KeyError
    return value


def model_defaults(obj: dict) -> list[tuple[tuple, object]]:
    """(path, value) of every field the runtime's defaulting model (runtime/state.py DEFAULT_SHAPES) adds
    to `obj`: what the evaluator takes for the server's value of a field a manifest leaves out."""
    from itbench_dsl.runtime.state import DEFAULT_SHAPES, with_defaults

    kind = obj.get("kind")
    if f"{kind}.spec" in DEFAULT_SHAPES and isinstance(obj.get("spec"), dict):
        filled = {**obj, "spec": with_defaults(obj["spec"], DEFAULT_SHAPES[f"{kind}.spec"])}
    elif kind in DEFAULT_SHAPES:
        filled = with_defaults(obj, DEFAULT_SHAPES[kind])
    else:
        return []
    return [(p, v) for p, v in _leaf_paths(filled) if _at(obj, p) is KeyError]


def library_manifests() -> list[dict]:
    """Every distinct object the library's scenarios deploy, inject or revert to, in a kind the model defaults."""
    from itbench_dsl.analysis.states import objects
    from itbench_dsl.runtime.state import DEFAULT_SHAPES

    seen, out = set(), []
    for path in sorted(LIBRARY.rglob("*.itb")):
        if "faults" in path.parts:
            continue
        checked = check_source(path.read_bytes(), str(path))
        if checked.has_errors or checked.result.scenario is None:
            continue
        found = objects(checked.result.scenario)
        for manifests in (found.healthy, found.faulty):
            for obj in manifests.values():
                kind = obj.get("kind")
                if kind not in DEFAULT_SHAPES and f"{kind}.spec" not in DEFAULT_SHAPES:
                    continue
                text = json.dumps(obj, sort_keys=True)
                if text not in seen:
                    seen.add(text)
                    out.append(obj)
    return out


# fields the model defaults where the server leaves them out, and why reading the default is still right
KNOWN_DEFAULTING = {
    # the API server defaults them on Pods (the Pod's own defaulting; the Priority admission plugin), not on
    # a workload's pod template: every pod of the template gets the value, so the model reads a template
    # that leaves them out as its pods run
    "enableServiceLinks": "defaulted on the template's pods, not on the template",
    "preemptionPolicy": "set on the template's pods by the Priority admission, not on the template",
}


# fields whose server value depends on other objects, which a model of one object cannot know
KNOWN_SERVER_SET = {
    ("Pod", "priority"): "the Priority admission sets it from the pod's PriorityClass (the model says 0, right "
                         "only for a pod without one)",
}


def test_the_defaulting_model_agrees_with_the_servers_dry_run(plane):
    """For every emitted manifest, each field the evaluator's defaulting model fills in is what the real
    API server stores (`kubectl create --dry-run=server`)."""
    directory, started = plane
    manifests = library_manifests()
    namespaces = sorted({o["metadata"].get("namespace") for o in manifests if o["metadata"].get("namespace")})
    started.kubectl("create", "-f", "-", input="\n---\n".join(json.dumps(
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": n}}) for n in namespaces))
    # one dry run per batch of objects of distinct names (an object's healthy and faulty versions go apart)
    batches: list[list[dict]] = []
    for obj in manifests:
        key = (obj["kind"], obj["metadata"].get("namespace"), obj["metadata"]["name"])
        batch = next((b for b in batches if key not in {(o["kind"], o["metadata"].get("namespace"),
                                                          o["metadata"]["name"]) for o in b}), None)
        if batch is None:
            batch = []
            batches.append(batch)
        batch.append(obj)
    disagree = []
    compared = 0
    for batch in batches:
        done = started.kubectl("create", "--dry-run=server", "-o", "json", "-f", "-",
                               input="\n---\n".join(json.dumps(o) for o in batch), timeout=300)
        items, at, decoder = [], 0, json.JSONDecoder()
        text = done.stdout
        while text[at:].strip():  # one JSON document per object, one after the other
            at += len(text[at:]) - len(text[at:].lstrip())
            served, at = decoder.raw_decode(text, at)
            items += served.get("items", []) if served.get("kind") == "List" else [served]
        by_key = {(i["kind"], i["metadata"].get("namespace"), i["metadata"]["name"]): i for i in items}
        for obj in batch:
            key = (obj["kind"], obj["metadata"].get("namespace"), obj["metadata"]["name"])
            server = by_key.get(key)
            if server is None:
                continue  # refused by the server (a faulty manifest can be): nothing is defaulted
            for path, value in model_defaults(obj):
                compared += 1
                seen = _at(server, path)
                if seen is KeyError and value in ("", False, 0, {}, []):
                    continue  # Go's zero value, left out of the server's JSON (omitempty): the same field
                if seen is KeyError and obj["kind"] != "Pod" and path[-1] in KNOWN_DEFAULTING:
                    continue
                if (obj["kind"], path[-1]) in KNOWN_SERVER_SET and seen != value:
                    continue
                if seen != value:
                    disagree.append(f"{'/'.join(map(str, key))}: {'.'.join(map(str, path))}: model {value!r}, "
                                    f"server {'(absent)' if seen is KeyError else repr(seen)}")
    assert compared > 100  # the model defaults something in most manifests
    assert not disagree, f"{len(disagree)} of {compared} defaulted fields differ:\n" + "\n".join(sorted(set(disagree))[:40])


def test_the_settle_after_a_solution_waits_for_a_pending_rollout(monkeypatch):
    """A controller whose pods admission refused (a quota) retries after a backoff and changes nothing
    meanwhile: quiet is not settled after the solution while a rollout is pending (the observed solved
    state of otel-checkout-insufficient-quota had caught checkout at 1 of 2 replicas)."""
    from types import SimpleNamespace

    from itbench_dsl.run import observe
    from itbench_dsl.run.lifecycle import Ref

    calls = {"n": 0}
    pending = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "checkout", "generation": 2},
               "spec": {"replicas": 2},
               "status": {"observedGeneration": 2, "replicas": 1, "readyReplicas": 1, "updatedReplicas": 1,
                          "availableReplicas": 1}}
    done = {**pending, "status": {**pending["status"], "replicas": 2, "readyReplicas": 2, "updatedReplicas": 2,
                                  "availableReplicas": 2}}

    def get(ref):
        calls["n"] += 1
        return pending if calls["n"] < 4 else done

    ref = Ref("apps/v1", "Deployment", "otel-demo", "checkout")
    run = SimpleNamespace(bundle=SimpleNamespace(workloads=[ref]), cluster=SimpleNamespace(get=get))
    monkeypatch.setattr(observe, "_pod_view", lambda run: "quiet")  # nothing moves while the controller backs off
    monkeypatch.setattr(observe, "SETTLE_MIN", 0.0)
    monkeypatch.setattr(observe, "SETTLE_QUIET", 0.0)
    monkeypatch.setattr(observe.time, "sleep", lambda s: None)
    observe._settle(run, print, rollout=True)
    assert calls["n"] >= 4  # it waited until the rollout finished
    calls["n"] = 0
    observe._settle(run, print)  # the other settles: quiet is enough
    assert calls["n"] == 0
