"""`validate.podSecurity` (runtime/kyverno/pss.py) against Kyverno v1.19.1: each pod's baseline and restricted
verdicts as `kyverno apply` gave them (recorded below), and again from the CLI where it is built."""

from __future__ import annotations

import copy
import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

from itbench_dsl.runtime.kyverno import evaluate_policy

HARD = {"securityContext": {"runAsNonRoot": True, "seccompProfile": {"type": "RuntimeDefault"}},
        "containers": [{"name": "c", "image": "nginx", "securityContext": {
            "allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}}}]}


def _change(edit):
    spec = copy.deepcopy(HARD)
    edit(spec, spec["containers"][0]["securityContext"], spec["securityContext"])
    return spec


# name -> (pod spec, pod annotations, Kyverno's (baseline, restricted) results)
CASES = {
    "plain": ({"containers": [{"name": "c", "image": "nginx"}]}, None, ("pass", "fail")),
    "hardened": (copy.deepcopy(HARD), None, ("pass", "pass")),
    "hostnet": (_change(lambda s, c, p: s.update(hostNetwork=True)), None, ("fail", "fail")),
    "priv": (_change(lambda s, c, p: c.update(privileged=True)), None, ("fail", "fail")),
    "netraw": (_change(lambda s, c, p: c["capabilities"].update(add=["NET_RAW"])), None, ("fail", "fail")),
    "netbind": (_change(lambda s, c, p: c["capabilities"].update(add=["NET_BIND_SERVICE"])), None, ("pass", "pass")),
    "sysadmin": (_change(lambda s, c, p: c["capabilities"].update(add=["SYS_ADMIN"])), None, ("fail", "fail")),
    "hostpath": (_change(lambda s, c, p: s.update(volumes=[{"name": "h", "hostPath": {"path": "/var/log"}}])),
                 None, ("fail", "fail")),
    "nfs": (_change(lambda s, c, p: s.update(volumes=[{"name": "h", "nfs": {"server": "a", "path": "/x"}}])),
            None, ("pass", "fail")),
    "hostport": (_change(lambda s, c, p: s["containers"][0].update(ports=[{"containerPort": 80, "hostPort": 80}])),
                 None, ("fail", "fail")),
    "podunconfined": (_change(lambda s, c, p: (p.update(seccompProfile={"type": "Unconfined"}),
                                                c.update(seccompProfile={"type": "RuntimeDefault"}))),
                      None, ("fail", "fail")),
    "noseccomp": (_change(lambda s, c, p: p.pop("seccompProfile")), None, ("pass", "fail")),
    "root": (_change(lambda s, c, p: p.update(runAsUser=0)), None, ("pass", "fail")),
    "podfalse": (_change(lambda s, c, p: (p.update(runAsNonRoot=False), c.update(runAsNonRoot=True))),
                 None, ("pass", "fail")),
    "containernonroot": (_change(lambda s, c, p: (p.pop("runAsNonRoot"), c.update(runAsNonRoot=True))),
                         None, ("pass", "pass")),
    "safesysctl": (_change(lambda s, c, p: p.update(sysctls=[{"name": "net.ipv4.tcp_syncookies", "value": "1"}])),
                   None, ("pass", "pass")),
    "unsafesysctl": (_change(lambda s, c, p: p.update(sysctls=[{"name": "kernel.msgmax", "value": "1"}])),
                     None, ("fail", "fail")),
    "procmount": (_change(lambda s, c, p: c.update(procMount="Unmasked")), None, ("fail", "fail")),
    "selinux": (_change(lambda s, c, p: p.update(seLinuxOptions={"type": "spc_t"})), None, ("fail", "fail")),
    "apparmor": (copy.deepcopy(HARD), {"container.apparmor.security.beta.kubernetes.io/c": "unconfined"},
                 ("fail", "fail")),
    "probehost": (_change(lambda s, c, p: s["containers"][0].update(livenessProbe={"httpGet": {"host": "1.2.3.4",
                                                                                              "port": 80}})),
                  None, ("fail", "fail")),
    "userns": (_change(lambda s, c, p: (s.update(hostUsers=False), p.pop("runAsNonRoot"))), None, ("pass", "fail")),
    "init": (_change(lambda s, c, p: s.update(initContainers=[{"name": "i", "image": "busybox"}])),
             None, ("pass", "fail")),
    "windows": (_change(lambda s, c, p: (s.update(os={"name": "windows"}), c.clear())), None, ("pass", "pass")),
}
POLICY = {"apiVersion": "kyverno.io/v1", "kind": "ClusterPolicy", "metadata": {"name": "pss"},
          "spec": {"background": True, "validationFailureAction": "Audit", "rules": [
              {"name": level, "match": {"any": [{"resources": {"kinds": ["Pod"]}}]},
               "validate": {"podSecurity": {"level": level, "version": "latest"}}}
              for level in ("baseline", "restricted")]}}


def _pod(name):
    spec, annotations, _ = CASES[name]
    meta = {"name": name, "namespace": "default", **({"annotations": annotations} if annotations else {})}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}


@pytest.mark.parametrize("name", list(CASES))
def test_pod_security_levels_agree_with_kyverno(name):
    results = {r.rule: r.status for r in evaluate_policy(POLICY, _pod(name))}
    assert (results["baseline"], results["restricted"]) == CASES[name][2]
    # a Deployment running that pod gets the same verdicts through its autogen rules
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name, "namespace": "default"},
                  "spec": {"template": {"metadata": {"annotations": CASES[name][1] or {}}, "spec": CASES[name][0]}}}
    results = {r.rule: r.status for r in evaluate_policy(POLICY, deployment)}
    assert (results["autogen-baseline"], results["autogen-restricted"]) == CASES[name][2]


def test_the_recorded_results_are_the_kyverno_clis(tmp_path):
    tool = Path(__file__).resolve().parents[2] / "tools" / "build_ecosystem.py"
    spec = importlib.util.spec_from_file_location("build_ecosystem_pss", tool)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    binary = module.binary_path("kyverno") if module.go_binary() else None
    if binary is None or not binary.is_file():
        pytest.skip("the Kyverno CLI is not built (python tools/build_ecosystem.py kyverno)")
    yaml = pytest.importorskip("yaml")
    (tmp_path / "policy.yaml").write_text(yaml.safe_dump(POLICY))
    (tmp_path / "pods.yaml").write_text("".join("---\n" + json.dumps(_pod(n)) + "\n" for n in CASES))
    out = subprocess.run([str(binary), "apply", str(tmp_path / "policy.yaml"), "--resource", str(tmp_path / "pods.yaml"),
                          "--policy-report"], capture_output=True, text=True, timeout=300)
    assert "apiVersion" in out.stdout, out.stderr[-2000:]
    report = yaml.safe_load(out.stdout[out.stdout.index("apiVersion"):])
    got = {(res["name"], r["rule"]): r["result"] for r in report["results"] for res in r.get("resources", [])}
    for name, (_, _, expected) in CASES.items():
        assert (got[(name, "baseline")], got[(name, "restricted")]) == expected, name
