"""The rules attributed to the Kubernetes API server (tests/support/apiserver_rules.py), checked two ways.

Offline, always: `validate_object` accepts each rule's unbroken object and reports the broken one under the
rule that mirrors the upstream check. Against a real API server: a server-side dry run accepts the unbroken
object and refuses the broken one, naming the rule's field, so that each rule said to be the API server's is
the server's. The server is the cluster `ITBENCH_KUBECONFIG` names (with `kubectl` on the PATH), else the
local control plane (`itbench cluster`) when it is built; the tests skip without either.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess

import pytest

from support.apiserver_rules import RULES, Rule
from itbench_dsl.validate import validate_object

KUBECONFIG = os.environ.get("ITBENCH_KUBECONFIG", "")


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """(kubeconfig, kubectl) of a real API server: the one ITBENCH_KUBECONFIG names, else a local control plane
    started for this module (only where it is built already: tests/run/test_local_cluster.py builds it)."""
    if KUBECONFIG and shutil.which("kubectl"):
        yield KUBECONFIG, shutil.which("kubectl")
        return
    from itbench_dsl.run.local import LocalClusterError, binary_path, down, up

    try:
        binary = binary_path()
    except LocalClusterError as exc:
        pytest.skip(f"no API server: {str(exc).splitlines()[0]}")
    if os.environ.get("ITBENCH_LOCAL_CLUSTER") == "unbuilt" or not binary.is_file():
        pytest.skip("no API server: set ITBENCH_KUBECONFIG, or build the local control plane (itbench cluster build)")
    folder = tmp_path_factory.mktemp("apiserver") / "cluster"
    cluster = up(folder, binary=binary, say=lambda message: None)
    try:
        yield str(cluster.kubeconfig), str(cluster.dir / "bin" / "kubectl")
    finally:
        down(folder, say=lambda message: None)


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.name)
def test_validate_object_mirrors_the_api_server_rule(rule: Rule):
    assert validate_object(rule.good()) == []
    issues = validate_object(rule.bad())
    assert rule.ours in {i.rule for i in issues}, [(i.rule, i.path, i.message) for i in issues]


def test_every_rule_names_its_upstream_source():
    assert len({r.name for r in RULES}) == len(RULES)
    for rule in RULES:
        assert rule.source.startswith("kubernetes "), rule.name
        assert rule.bad() != rule.good(), rule.name


def _dry_run(server: tuple[str, str], obj: dict) -> subprocess.CompletedProcess:
    kubeconfig, kubectl = server
    return subprocess.run(
        [kubectl, "--kubeconfig", kubeconfig, "create", "--dry-run=server", "--validate=false", "-o", "name",
         "-f", "-"],
        input=json.dumps(obj), capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.name)
def test_the_api_server_enforces_the_rule(server, rule: Rule):
    accepted = _dry_run(server, rule.good())
    assert accepted.returncode == 0, accepted.stderr
    if rule.server != "refuses":  # relaxed in a later Kubernetes, or filled in by the server's defaulting
        later = _dry_run(server, rule.bad())
        assert later.returncode == 0, f"{rule.name}: the server refuses it now: {later.stderr}"
        return
    refused = _dry_run(server, rule.bad())
    assert refused.returncode != 0, f"the API server accepted {rule.name}: {refused.stdout}"
    assert rule.field in refused.stderr, refused.stderr
