"""`itbench run --dry-run` and the run plan (itbench_dsl/run/lifecycle.py): no cluster, no kubernetes import."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from support.compiling import SCENARIOS, compile_ok
from itbench_dsl.run import lifecycle


def write_bundle(folder: Path, scenario: str, domain: str = "sre") -> Path:
    result = compile_ok((SCENARIOS / domain / f"{scenario}.itb").read_bytes(), f"{scenario}.itb")
    root = folder / scenario
    for name, data in result.files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    return root


@pytest.fixture(scope="module")
def bundle(tmp_path_factory) -> Path:
    return write_bundle(tmp_path_factory.mktemp("bundles"), "bookinfo-gateway-denies-get")


def test_plan_follows_the_phases_and_names_every_object(bundle):
    b = lifecycle.load_bundle(bundle)
    steps = lifecycle.plan(b, lifecycle.PlanOptions(agent="true"))
    order = [lifecycle.PHASE_NAMES.index(s.phase) for s in steps]
    assert order == sorted(order), "steps out of phase order"
    applied = [s.ref for s in steps if s.phase == "deploy" and s.action == "apply"]
    assert applied == [lifecycle.Ref.of(o) for o in (*b.topology, *b.access)]
    assert {s.ref for s in steps if s.phase == "inject"} == {lifecycle.Ref.of(o) for o in b.inject_apply}
    # what the injection creates is deleted by the revert; the undeploy deletes what the deploy applied
    assert {s.ref for s in steps if s.phase == "revert" and s.action == "delete"} == \
        {lifecycle.Ref.of(o) for o in b.inject_apply}
    assert any(s.phase == "undeploy" and s.ref.kind == "Namespace" for s in steps)
    kept = lifecycle.plan(b, lifecycle.PlanOptions(agent="true", keep=True))
    assert not any(s.phase == "undeploy" for s in kept)
    # the Istio kinds and the mesh label need Istio's CRDs and istiod
    needs = {(p.what, p.name) for p in lifecycle.requirements(b)}
    assert ("kind", "security.istio.io/v1 AuthorizationPolicy") in needs
    assert ("controller", "Istio") in needs and ("prometheus", "Prometheus") in needs


def test_prompt_contract_matches_the_compiler():
    from itbench_dsl.backends import prompt

    assert lifecycle.PROMPT_WORKSPACE == prompt.WORKSPACE
    for domain, name in lifecycle.SUBMISSION.items():
        assert prompt.SUBMISSION[domain] == {"sre": {"diagnosis": name}, "finops": {"answer": name}}[domain]


def test_dry_run_prints_the_plan_without_kubernetes(bundle):
    code = ("import sys\nfrom itbench_dsl.cli import main\n"
            "try:\n    main(['run', sys.argv[1], '--dry-run', '--agent', 'my-agent'])\n"
            "except SystemExit as e:\n    assert not e.code, e.code\n"
            "assert 'kubernetes' not in sys.modules, 'dry-run imported kubernetes'\n")
    proc = subprocess.run([sys.executable, "-c", code, str(bundle)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "## preflight" in out and "## revert" in out and "## undeploy" in out
    assert "PATCH /apis/security.istio.io/v1/namespaces/book-info/authorizationpolicies/reviews-v2-shared" \
           "?fieldManager=kubectl&force=true" in out
    assert "POST /api/v1/namespaces/book-info/serviceaccounts/itbench-agent/token" in out


@pytest.mark.parametrize("argv", [["--help"], ["check", str(SCENARIOS / "sre" / "bookinfo-gateway-denies-get.itb")],
                                  ["run", "--help"], ["snapshot", "--help"]])
def test_commands_that_do_not_talk_to_a_cluster_never_import_kubernetes(argv):
    code = ("import sys, json\nfrom itbench_dsl.cli import main\n"
            "try:\n    main(json.loads(sys.argv[1]))\nexcept SystemExit:\n    pass\n"
            "assert 'kubernetes' not in sys.modules, 'kubernetes imported'\n")
    proc = subprocess.run([sys.executable, "-c", code, json.dumps(argv)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr


def test_run_refuses_what_it_cannot_run(tmp_path, bundle):
    from click.testing import CliRunner

    from itbench_dsl.cli import cli

    runner = CliRunner()
    result = runner.invoke(cli, ["run", str(bundle)])
    assert result.exit_code == 2 and "needs --kubeconfig, --agent, -o" in result.output
    result = runner.invoke(cli, ["run", str(tmp_path), "--dry-run"])
    assert result.exit_code == 2 and "not a bundle (no scenario.json)" in result.output
    result = runner.invoke(cli, ["run", str(bundle), "--dry-run", "--agent-timeout", "soon"])
    assert result.exit_code == 2 and "not a duration" in result.output


def test_the_plan_lists_exec_steps_and_probe_captures(tmp_path):
    b = lifecycle.load_bundle(write_bundle(tmp_path, "hotel-reservation-mongodb-geo-revoked-role"))
    assert [s.fault for s in b.inject_exec] == ["revoked_mongodb_role"] and [p.name for p in b.probes] == ["geo-roles"]
    steps = lifecycle.plan(b, lifecycle.PlanOptions(agent="true"))
    execs = [(s.phase, s.action, str(s.ref), s.detail["command"][-1][:22]) for s in steps
             if s.action in ("exec", "probe")]
    workload = "hotel-reservation/Deployment/mongodb-geo"
    assert execs == [("inject", "exec", workload, "db.revokeRolesFromUser"),
                     ("snapshot", "probe", workload, "JSON.stringify(db.getU"),
                     ("revert", "exec", workload, "db.grantRolesToUser('a")]
    # the revert's command runs before its manifests; the inject's after them
    revert = [s.action for s in steps if s.phase == "revert"]
    assert revert[0] == "exec"
    assert ("create", "", "pods/exec", "hotel-reservation") in lifecycle.access_checks(b)
    text = lifecycle.render_plan(b, steps)
    assert "/exec?container=hotel-reserv-geo-mongo" in text and "v4.channel.k8s.io" in text


def test_a_malformed_exec_file_is_refused_with_its_name(tmp_path):
    root = write_bundle(tmp_path, "hotel-reservation-mongodb-geo-revoked-role")
    (root / "inject" / "exec.json").write_text('{"version": 1, "steps": [{"namespace": "x"}]}')
    with pytest.raises(lifecycle.BundleError, match=r"inject/exec.json: step 1: not a step of this compiler"):
        lifecycle.load_bundle(root)
    (root / "inject" / "exec.json").write_text("[]")
    with pytest.raises(lifecycle.BundleError, match="not an exec file"):
        lifecycle.load_bundle(root)


def test_dry_run_names_the_prometheus_given_and_the_mitigation_window(bundle):
    from click.testing import CliRunner

    from itbench_dsl.cli import cli

    result = CliRunner().invoke(cli, ["run", str(bundle), "--dry-run", "--prometheus", "http://prom.example:9090/"])
    assert result.exit_code == 0, result.output
    assert "{prometheus}" not in result.output
    assert result.output.count("GET http://prom.example:9090/api/v1/alerts") >= 3  # preflight, baseline, alerts
    assert "await-mitigation" in result.output and "at most 600 s after the agent" in result.output
    unnamed = CliRunner().invoke(cli, ["run", str(bundle), "--dry-run"])
    assert "GET {prometheus}/api/v1/alerts" in unnamed.output  # no URL given: the placeholder says so
