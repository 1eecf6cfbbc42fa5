"""The rules attributed to the Kubernetes API server (tests/apiserver_rules.py), checked two ways.

Offline, always: `validate_object` accepts each rule's unbroken object and reports the broken one under the
rule that mirrors the upstream check. Against a real API server, when `ITBENCH_KUBECONFIG` names a
kubeconfig and `kubectl` is on the PATH: a server-side dry run accepts the unbroken object and refuses the
broken one, naming the rule's field, so that each rule said to be the API server's is the server's.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess

import pytest

from apiserver_rules import RULES, Rule
from itbench_dsl.validate import validate_object

KUBECONFIG = os.environ.get("ITBENCH_KUBECONFIG", "")
needs_server = pytest.mark.skipif(not KUBECONFIG or shutil.which("kubectl") is None,
                                  reason="set ITBENCH_KUBECONFIG (and put kubectl on the PATH) to check the rules "
                                         "against a real API server")


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


def _dry_run(obj: dict) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["kubectl", "--kubeconfig", KUBECONFIG, "apply", "--dry-run=server", "--validate=false", "-o", "name",
         "-f", "-"],
        input=json.dumps(obj), capture_output=True, text=True, timeout=60)


@needs_server
@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.name)
def test_the_api_server_enforces_the_rule(rule: Rule):
    accepted = _dry_run(rule.good())
    assert accepted.returncode == 0, accepted.stderr
    refused = _dry_run(rule.bad())
    assert refused.returncode != 0, f"the API server accepted {rule.name}: {refused.stdout}"
    assert rule.field in refused.stderr, refused.stderr
