"""The offline states (itbench_dsl/analysis/states.py), self-validation and `itbench evaluate`.

The self-validation logic is tested against small fake evaluators (so it does not depend on the
real runtime's verdicts); the last tests run the real one over the scenario library when the
evaluator backend is part of the package.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from itbench_dsl import cli as cli_module
from itbench_dsl.analysis import corpus, states
from itbench_dsl.backends.cover import COVER_ANNOTATION, TEMPLATE_KINDS
from itbench_dsl.backends.decoys import harmless
from itbench_dsl.compiler import compile_source
from itbench_dsl.diagnostics import Diagnostics
from itbench_dsl.faults import FAULTS
from itbench_dsl.validate import known_kinds, validate_object

REPO = Path(__file__).resolve().parents[2]
SCENARIOS = REPO / "scenarios"
ALL = sorted(SCENARIOS.rglob("*.itb"))
_CACHE: dict[str, object] = {}


def scenario(relative: str):
    if relative not in _CACHE:
        path = SCENARIOS / relative
        result = compile_source(path.read_bytes(), str(path), Diagnostics(), validate=False)
        assert result.scenario is not None, relative
        _CACHE[relative] = result.scenario
    return _CACHE[relative]


def items(state: dict) -> dict[tuple, dict]:
    return {(o["kind"], o["metadata"].get("namespace"), o["metadata"]["name"]): o for o in state["resources"]["items"]}


def invoke(*args: str):
    try:
        runner = CliRunner(mix_stderr=False)
    except TypeError:
        runner = CliRunner()
    return runner.invoke(cli_module.cli, list(args), catch_exceptions=False)


# ---- the states ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("path", ALL, ids=[p.stem for p in ALL])
def test_states_are_valid_objects(path: Path):
    s = scenario(str(path.relative_to(SCENARIOS)))
    derived = states.derive(s)
    kinds = set(known_kinds())
    for name in ("healthy", "faulty", "solved"):
        state = derived[name]
        # `probes` only where the scenario declares probes (their declared results)
        assert set(state) == {"resources", "captured", "alerts", "policyReports", "costs"} | (
            {"probes"} if s.probes else set())
        assert state["resources"]["kind"] == "List"
        for obj in state["resources"]["items"]:
            if f"{obj['apiVersion']}/{obj['kind']}" in kinds:
                assert validate_object(obj) == [], (name, obj["kind"], obj["metadata"]["name"])
        keys = [(o["kind"], o["metadata"].get("namespace"), o["metadata"]["name"]) for o in state["resources"]["items"]]
        assert len(keys) == len(set(keys)), f"{name}: an object twice"
    assert derived["healthy"]["alerts"]["data"]["alerts"] == []
    assert derived["solved"]["alerts"]["data"]["alerts"] == []


def test_states_are_deterministic_across_processes():
    code = ("import json,sys; sys.path.insert(0, '.'); from itbench_dsl.compiler import compile_source; "
            "from itbench_dsl.diagnostics import Diagnostics; from itbench_dsl.analysis import states; "
            "p='scenarios/sre/otel-checkout-nonexistent-image.itb'; "
            "s=compile_source(open(p,'rb').read(), p, Diagnostics(), validate=False).scenario; "
            "print(json.dumps(states.derive(s), sort_keys=True))")
    outputs = set()
    for seed in ("0", "1", "12345"):
        env = dict(os.environ, PYTHONHASHSEED=seed)
        proc = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, env=env,
                              timeout=120, check=True)
        outputs.add(proc.stdout)
    assert len(outputs) == 1
    s = scenario("sre/otel-checkout-nonexistent-image.itb")
    assert json.dumps(states.derive(s), sort_keys=True) + "\n" in outputs


def test_healthy_runs_every_replica():
    s = scenario("sre/otel-checkout-nonexistent-image.itb")
    healthy = items(states.derive(s)["healthy"])
    for w in s.topology.workloads:
        obj = healthy[(w.kind, w.namespace, w.name)]
        assert obj["status"].get("readyReplicas", 0) == w.replicas == obj["spec"]["replicas"]
        pods = [o for k, o in healthy.items() if k[0] == "Pod" and k[1] == w.namespace
                and o["metadata"]["ownerReferences"][0]["name"].rsplit("-", 1)[0] in (w.name,)
                or (k[0] == "Pod" and o["metadata"]["ownerReferences"][0]["name"] == w.name)]
        assert len(pods) == w.replicas, w.name
        for pod in pods:
            assert pod["status"]["phase"] == "Running"
            assert {"type": "Ready", "status": "True", "lastTransitionTime": states.TIMESTAMP} in pod["status"]["conditions"]
            assert all(pod["metadata"]["labels"].get(k) == v for k, v in w.labels.items())
            assert all(pod["metadata"]["labels"].get(k) == v for k, v in w.selector.items())
            if w.kind == "Deployment":
                assert pod["metadata"]["name"].startswith(f"{w.name}-")
                _, template_hash, suffix = pod["metadata"]["name"].rsplit("-", 2)
                assert len(template_hash) == 10 and len(suffix) == 5


def _uncovered(obj: dict) -> dict:
    """`obj` without the injection's cover annotation (backends/cover.py)."""
    obj = json.loads(json.dumps(obj))
    template = (obj.get("spec") or {}).get("template") if obj.get("kind") in TEMPLATE_KINDS else None
    for meta in (template.get("metadata") if isinstance(template, dict) else None, obj.get("metadata")):
        if isinstance(meta, dict) and COVER_ANNOTATION in (meta.get("annotations") or {}):
            del meta["annotations"][COVER_ANNOTATION]
            if not meta["annotations"]:
                del meta["annotations"]
    return obj


def _changed(a: dict, b: dict) -> tuple[set, set, set]:
    """(objects changed, added, removed) from `a` to `b`, less the injection's cover writes: the annotation, and
    the pods a workload it alone changed runs anew."""
    before, after = items(a), items(b)
    moved = {k for k in before.keys() & after.keys() if before[k] != after[k]}
    changed = {k for k in moved if _uncovered(before[k]) != _uncovered(after[k])}
    covered = {(k[1], k[2]) for k in moved - changed if k[0] in TEMPLATE_KINDS}

    def mine(k):  # a pod of a workload only the cover changed (`<name>-<hash>-<id>`, `<name>-<ordinal>`)
        return k[0] == "Pod" and ((k[1], k[2].rsplit("-", 2)[0]) in covered or (k[1], k[2].rsplit("-", 1)[0]) in covered)
    added = {k for k in set(after) - set(before) if not mine(k) and not harmless(after[k])}  # less the decoys
    return changed, added, {k for k in set(before) - set(after) if not mine(k)}


def test_faulty_differs_where_an_image_fault_acts():
    s = scenario("sre/otel-checkout-nonexistent-image.itb")
    derived = states.derive(s)
    changed, added, removed = _changed(derived["healthy"], derived["faulty"])
    target = ("Deployment", "otel-demo", "checkout")
    assert changed == {target}
    # the new template has other pods: the old ones are gone, the new ones wait for their image
    assert all(k[0] == "Pod" and k[2].startswith("checkout-") for k in added | removed)
    new_pods = [items(derived["faulty"])[k] for k in added]
    assert new_pods and all(p["status"]["phase"] == "Pending" for p in new_pods)
    assert {p["status"]["containerStatuses"][0]["state"]["waiting"]["reason"] for p in new_pods} == {"ImagePullBackOff"}
    deployment = items(derived["faulty"])[target]
    assert "readyReplicas" not in deployment["status"] and deployment["status"]["unavailableReplicas"] == 1
    assert [a["labels"] for a in derived["faulty"]["alerts"]["data"]["alerts"]] == [
        {"alertname": "HighRequestErrorRate", "severity": "warning", "namespace": "otel-demo", "service": "frontend"}]


def test_faulty_differs_where_a_config_fault_acts():
    # modified_env: the pods restart with the new template and stay ready; only the alerts tell
    s = scenario("sre/otel-shipping-quote-address.itb")
    derived = states.derive(s)
    changed, added, removed = _changed(derived["healthy"], derived["faulty"])
    assert changed == {("Deployment", "otel-demo", "shipping")}
    assert {k[2].split("-")[0] for k in added | removed} == {"shipping"}
    faulty = items(derived["faulty"])
    assert all(faulty[k]["status"]["phase"] == "Running" for k in added)
    alerts = {(a["labels"]["alertname"], a["labels"].get("service")) for a in derived["faulty"]["alerts"]["data"]["alerts"]}
    assert {("HighRequestErrorRate", "checkout"), ("HighRequestErrorRate", "frontend"), ("NoRequestsReceived", "quote")} <= alerts
    assert alerts == {(a.name, a.target.name) for a in s.alerts}  # ITBench's expected alerts (scenario 16)


def test_restarted_pods_wait_for_a_deleted_configmap():
    """A pod started again while a ConfigMap it mounts is gone waits for it (ContainerCreating); a pod that
    keeps running keeps what it mounted; once the ConfigMap is back, the pod starts."""
    found = states.objects(scenario("sre/sregym-missing-configmap-social-network.itb"))
    derived = states.derive(scenario("sre/sregym-missing-configmap-social-network.itb"))

    def mongodb_pods(state):
        return [o for o in state["resources"]["items"] if o["kind"] == "Pod"
                and o["metadata"]["name"].startswith("media-mongodb-")]

    (waiting,) = mongodb_pods(derived["faulty"])
    assert waiting["status"]["phase"] == "Pending"
    assert waiting["status"]["containerStatuses"][0]["state"] == {"waiting": {"reason": "ContainerCreating"}}
    assert all(p["status"]["phase"] == "Running" for p in mongodb_pods(derived["solved"]))
    assert ("Deployment", "social-network", "media-mongodb") in found.needs
    # the same deletion without the restart: the running pod keeps its mount
    unrestarted = states.render(found.faulty, states.Objects(**{**found.__dict__, "needs": {}}))
    assert all(p["status"]["phase"] == "Running" for p in mongodb_pods(unrestarted))


def test_faulty_adds_created_and_drops_deleted_objects():
    chaos = scenario("sre/otel-checkout-payment-network-loss.itb")
    derived = states.derive(chaos)
    changed, added, removed = _changed(derived["healthy"], derived["faulty"])
    assert not changed and not removed
    assert {k[0] for k in added} == {"Schedule"}  # unknown to the readiness table: pods stay ready
    deleted = scenario("sre/otel-cart-deleted-service.itb")
    derived = states.derive(deleted)
    changed, added, removed = _changed(derived["healthy"], derived["faulty"])
    assert (changed, added, removed) == (set(), set(), {("Service", "otel-demo", "cart")})
    # the revert brings it back (the decoys the injection created stay until the run's revert deletes them)
    assert {k: o for k, o in items(derived["solved"]).items() if not harmless(o)} == items(derived["healthy"])


def test_scaled_to_zero_leaves_no_pods():
    faulty = items(states.derive(scenario("sre/otel-accounting-scaled-to-zero.itb"))["faulty"])
    assert not [k for k in faulty if k[0] == "Pod" and k[2].startswith("accounting-")]
    assert "readyReplicas" not in faulty[("Deployment", "otel-demo", "accounting")]["status"]


def test_quota_keeps_the_running_pods_and_refuses_the_scale_out():
    faulty = items(states.derive(scenario("sre/otel-checkout-insufficient-quota.itb"))["faulty"])
    checkout = faulty[("Deployment", "otel-demo", "checkout")]
    assert checkout["spec"]["replicas"] == 2  # the scenario's `wait after scale`
    assert len([k for k in faulty if k[0] == "Pod" and k[2].startswith("checkout-")]) == 1
    assert checkout["status"]["readyReplicas"] == 1 and checkout["status"]["unavailableReplicas"] == 1


def test_cordoned_node_leaves_the_new_pod_pending():
    faulty = items(states.derive(scenario("sre/otel-payment-cordoned-node.itb"))["faulty"])
    pods = sorted((o for k, o in faulty.items() if k[0] == "Pod" and k[2].startswith("payment-")),
                  key=lambda p: p["status"]["phase"])
    assert [p["status"]["phase"] for p in pods] == ["Pending", "Running"]
    assert faulty[("Deployment", "otel-demo", "payment")]["status"]["readyReplicas"] == 1


def test_every_state_is_back_to_healthy_after_the_revert():
    # the healthy state takes each object the revert writes in the revert's form (a fault knows what the
    # installation sets beyond the topology, as a mesh's namespace label), so the revert restores it exactly
    for path in ALL:
        s = scenario(str(path.relative_to(SCENARIOS)))
        derived = states.derive(s)
        changed, added, removed = _changed(derived["healthy"], derived["solved"])
        assert not added and not removed and not changed, s.name


def test_every_readiness_effect_is_one_of_the_known_effects():
    from itbench_dsl.faults import POD_EFFECTS

    effects = {kind.readiness for kind in FAULTS.values() if not callable(kind.readiness)}
    assert effects - {""} <= set(POD_EFFECTS) and len(effects) > 4
    pod_chaos = FAULTS["pod_chaos"]
    assert pod_chaos.pod_effect({"spec": {"action": "pod-failure"}}) == "unready"
    assert pod_chaos.pod_effect({"spec": {"action": "pod-kill"}}) == ""


def test_ciso_states_hold_the_gap_objects_only_when_faulty():
    s = scenario("ciso/cis-k8s-5-2-2-privileged-kyverno.itb")
    derived = states.derive(s)
    gaps = {(r.kind, r.namespace, r.name) for r in s.compliance.gaps}
    assert gaps and not gaps & set(items(derived["healthy"]))
    assert gaps <= set(items(derived["faulty"]))
    assert not gaps & set(items(derived["solved"]))
    reports = states.policy_reports(s, perfect=True)
    results = {(r["resources"][0]["name"], r["result"]) for r in reports[0]["results"]}
    assert {name for name, result in results if result == "fail"} == {r.name for r in s.compliance.gaps}


def test_perfect_answer_names_entities_and_resolves_pod_patterns():
    s = scenario("sre/otel-checkout-nonexistent-image.itb")
    faulty = states.derive(s)["faulty"]
    answer = states.perfect_answer(s, faulty)
    assert [e["name"] for e in answer["entities"]] == ["otel-demo/Deployment/checkout"]
    assert all(e["contributing_factor"] is True for e in answer["entities"])
    chain = [(p["source"], p["target"]) for p in answer["propagations"]]
    assert chain[0][0] == "otel-demo/Deployment/checkout"
    pod = chain[0][1]
    assert pod.startswith("otel-demo/Pod/checkout-") and "*" not in pod and pod.split("/")[2] in {
        k[2] for k in items(faulty) if k[0] == "Pod"}


# ---- self-validation, against fake evaluators ------------------------------------------------------------


def _fake(monkeypatch, evaluate):
    """Self-validation with `evaluate` in place of the runtime's (corpus.Case.run calls it by name)."""
    import itbench_dsl.runtime.evaluator as runtime

    monkeypatch.setattr(runtime, "evaluate", evaluate)
    # a result kept on disk came from the real evaluator: with a fake one, nothing is read back or kept
    monkeypatch.setenv("ITBENCH_CACHE_DIR", "")


def _always(passed: bool):
    def evaluate(spec, answer, state, task=None, artifact=None, **kw):
        return {"scenario": spec["scenario"], "task": task, "passed": passed, "score": float(passed), "metrics": {},
                "checks": [{"id": "all", "passed": passed, "detail": "fake"}]}
    return evaluate


def test_self_validation_reports_an_evaluator_that_always_passes(monkeypatch):
    _fake(monkeypatch, _always(True))
    problems = corpus.self_validate(scenario("sre/otel-checkout-nonexistent-image.itb"))
    assert [code for code, _ in problems] == ["E4004", "E4005"]
    assert "the faulty state (must fail): it passed it" in problems[0][1]
    assert "(must fail): it passed it" in problems[1][1]  # the message lists the first three
    # every answer that must fail or be refused is among the wrongly graded cases
    from itbench_dsl.analysis.corpus import all_cases

    spec, cases = all_cases(scenario("sre/otel-checkout-nonexistent-image.itb"))
    wrong = [c.name for c in cases if c.task not in ("mitigate", "policy") and not c.run(spec)[0]]
    assert {"an empty answer", "an answer with no `entities`"} <= set(wrong)
    assert f"grades {len(wrong)} case(s)" in problems[1][1]


def test_self_validation_reports_an_evaluator_that_always_fails(monkeypatch):
    _fake(monkeypatch, _always(False))
    problems = corpus.self_validate(scenario("sre/otel-checkout-nonexistent-image.itb"))
    assert "the healthy state (must pass): it failed it" in problems[0][1]
    assert "the perfect diagnosis (must pass): it failed it" in problems[1][1]


def test_self_validation_reports_a_crash(monkeypatch):
    def crash(spec, answer, state, task=None, **kw):
        raise KeyError("status")

    _fake(monkeypatch, crash)
    problems = corpus.self_validate(scenario("sre/otel-checkout-nonexistent-image.itb"))
    assert "raised KeyError: 'status'" in problems[0][1]


def test_self_validation_of_a_ciso_scenario_refuses_itbench_gap_only_rule(monkeypatch):
    """ITBench's own rule grades the gap alone: a deny-all policy passes it. Self-validation refuses an
    evaluator that does that."""
    s = scenario("ciso/cis-k8s-5-2-2-privileged-kyverno.itb")
    assert corpus.self_validate(s) == []

    def gap_only(spec, answer, state, task=None, **kw):
        results = {}
        for report in state.get("policyReports") or []:
            for r in report["results"]:
                results[r["resources"][0]["name"]] = r["result"]
        ok = all(results.get(g.name) == "fail" for g in s.compliance.gaps)
        return {"scenario": spec["scenario"], "passed": ok, "score": float(ok), "metrics": {}, "checks": []}

    _fake(monkeypatch, gap_only)
    (problem,) = corpus.self_validate(s)
    assert problem[0] == "E4004" and "a deny-all policy's reports (must fail): it passed it" in problem[1]


def test_check_reports_self_validation_at_the_scenario_name(monkeypatch):
    _fake(monkeypatch, _always(True))
    result = invoke("check", "--format", "json", str(SCENARIOS / "sre" / "shop-cart-modified-env.itb"))
    assert result.exit_code == 1
    found = json.loads(result.stdout)
    found = found["diagnostics"] if isinstance(found, dict) else found
    codes = [d["code"] for d in found]
    assert "E4004" in codes
    e4004 = next(d for d in found if d["code"] == "E4004")
    assert (e4004["line"], e4004["column"]) == (1, 10) and "shop-cart-modified-env" in e4004["message"]


# ---- `itbench evaluate` ----------------------------------------------------------------------------------


FAKE_EVALUATOR = '''
import json, sys
args = sys.argv[1:]
state = json.load(open(args[args.index("--state") + 1]))
if "exit" in state:
    sys.exit(state["exit"])
if "crash" in state:
    raise RuntimeError("boom")
print(json.dumps({"scenario": "x", "passed": True, "score": 1.0, "metrics": {}, "checks": [], "args": args}))
'''


@pytest.fixture
def bundle(tmp_path: Path) -> Path:
    folder = tmp_path / "bundle"
    folder.mkdir()
    (folder / "evaluator.py").write_text(FAKE_EVALUATOR, encoding="utf-8")
    return folder


def _run(*args: str, capsys):
    with pytest.raises(SystemExit) as exit_info:
        cli_module.main(list(args))
    out, err = capsys.readouterr()
    return exit_info.value.code, out, err


def test_evaluate_prints_the_verdict(bundle: Path, tmp_path: Path, capsys):
    state, answer = tmp_path / "s.json", tmp_path / "a.json"
    state.write_text("{}", encoding="utf-8")
    answer.write_text("{}", encoding="utf-8")
    code, out, err = _run("evaluate", str(bundle), "--agent-output", str(answer), "--state", str(state), capsys=capsys)
    assert code == 0, err
    verdict = json.loads(out)
    assert verdict["passed"] is True and "--agent-output" in verdict["args"]


@pytest.mark.parametrize("state_text,code,message", [
    ('{"exit": 2}', 2, ""),  # the evaluator's own "unusable input"
    ('{"crash": 1}', 2, "failed (exit code 1)"),  # a crash is never a verdict
])
def test_evaluate_exit_codes(bundle: Path, tmp_path: Path, capsys, state_text, code, message):
    state = tmp_path / "s.json"
    state.write_text(state_text, encoding="utf-8")
    got, _, err = _run("evaluate", str(bundle), "--state", str(state), capsys=capsys)
    assert got == code and message in err


def test_evaluate_refuses_unusable_input(bundle: Path, tmp_path: Path, capsys):
    state = tmp_path / "s.json"
    state.write_text("{}", encoding="utf-8")
    empty = tmp_path / "empty"
    empty.mkdir()
    for args, message in (
        (["evaluate", str(tmp_path / "nope"), "--state", str(state)], "no such bundle folder"),
        (["evaluate", str(empty), "--state", str(state)], "no evaluator.py"),
        (["evaluate", str(bundle), "--state", str(tmp_path / "missing.json")], "--state"),
        (["evaluate", str(bundle), "--state", str(state), "--agent-output", str(tmp_path / "x.json")], "--agent-output"),
        (["evaluate", str(bundle)], "nothing to grade"),
    ):
        code, _, err = _run(*args, capsys=capsys)
        assert code == 2 and message in err and "Traceback" not in err, (args, err)


# ---- the real evaluator over the scenario library --------------------------------------------------------

# every library scenario's self-validation (its evaluator on its adversarial corpus) is part of `itbench check`,
# tried over the whole library by tests/test_cli.py::test_check_scenarios_folder_is_clean


def test_evaluate_runs_a_compiled_bundle_on_derived_states(tmp_path: Path, capsys):
    from itbench_dsl.bundle import write_bundle

    path = SCENARIOS / "sre" / "shop-cart-modified-env.itb"
    result = compile_source(path.read_bytes(), str(path), Diagnostics())
    if "evaluator.py" not in result.files:
        pytest.skip("bundles have no evaluator.py yet")
    folder = write_bundle(tmp_path / "out", result.name, result.files)
    derived = states.derive(result.scenario)
    verdicts = {}
    for name, state in derived.items():
        (tmp_path / f"{name}.json").write_text(json.dumps(state), encoding="utf-8")
        code, out, err = _run("evaluate", str(folder), "--task", "mitigate", "--state", str(tmp_path / f"{name}.json"),
                              capsys=capsys)
        assert code == 0, err
        verdicts[name] = json.loads(out)["passed"]
    assert verdicts == {"healthy": True, "faulty": False, "solved": True}
    (tmp_path / "answer.json").write_text(json.dumps(states.perfect_answer(result.scenario, derived["faulty"])),
                                          encoding="utf-8")
    code, out, _ = _run("evaluate", str(folder), "--task", "diagnose", "--state", str(tmp_path / "faulty.json"),
                        "--agent-output", str(tmp_path / "answer.json"), capsys=capsys)
    assert code == 0 and json.loads(out)["score"] == 1.0
    # with no --task, every task the bundle poses: the solved state and the perfect answer pass both
    code, out, _ = _run("evaluate", str(folder), "--state", str(tmp_path / "solved.json"), "--agent-output",
                        str(tmp_path / "answer.json"), capsys=capsys)
    verdict = json.loads(out)
    assert code == 0 and verdict["passed"] and set(verdict["tasks"]) == {"diagnose", "mitigate"}
    code, _, err = _run("evaluate", str(folder), "--state", str(tmp_path / "solved.json"), capsys=capsys)
    assert code == 2 and "--agent-output" in err  # the diagnosis needs the answer: never graded as a mitigation
    (tmp_path / "broken.json").write_text("[1", encoding="utf-8")
    code, _, err = _run("evaluate", str(folder), "--state", str(tmp_path / "broken.json"), capsys=capsys)
    assert code == 2 and "not valid JSON" in err
