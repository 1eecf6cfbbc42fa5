"""A registry requirement of a control a scenario declares (its `reads` hold the containers' `image`, the gap's
image from another registry than the compliant one's) is graded on gap variants that tell a registry from a
prefix of its name and that put the image in an init container (ciso/variation.py `_registry_variants`): an
image pattern `trusted-registry.com*` admits `trusted-registry.com.attacker.example/...`, and a rule over
`containers` alone never sees an init container's image."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest

from itbench_dsl.analysis.corpus import all_cases
from itbench_dsl.ciso.variation import _registry
from itbench_dsl.compiler import compile_source
from itbench_dsl.diagnostics import Diagnostics
from itbench_dsl.runtime import evaluator

SCENARIO = Path(__file__).resolve().parents[2] / "scenarios" / "ciso" / "trusted-registry-kyverno-update.itb"


def grade(spec, artifact):
    verdict = evaluator.evaluate(spec, None, None, task="policy", artifact=artifact)
    return verdict["passed"], {c["id"] for c in verdict["checks"] if not c["passed"]}



def _policy(image: str, lists=("initContainers", "ephemeralContainers")) -> dict:
    base = {"apiVersion": "kyverno.io/v1", "kind": "ClusterPolicy", "metadata": {"name": "container-security-controls"},
            "spec": {"validationFailureAction": "Audit", "background": True, "rules": [
                {"name": "disallow-privilege-escalation", "match": {"resources": {"kinds": ["Pod"]}},
                 "validate": {"message": "Privilege escalation is not allowed.", "pattern": {"spec": {"containers": [
                     {"(name)": "*", "securityContext": {"allowPrivilegeEscalation": False}}]}}}},
                {"name": "non-root", "match": {"any": [{"resources": {"kinds": ["Pod"]}}]},
                 "validate": {"message": "no root", "anyPattern": [
                     {"spec": {"securityContext": {"runAsNonRoot": True},
                               "=(initContainers)": [{"=(securityContext)": {"=(runAsNonRoot)": True}}],
                               "containers": [{"=(securityContext)": {"=(runAsNonRoot)": True}}]}},
                     {"spec": {"=(initContainers)": [{"securityContext": {"runAsNonRoot": True}}],
                               "containers": [{"securityContext": {"runAsNonRoot": True}}]}}]}},
                {"name": "trusted-registry", "match": {"any": [{"resources": {"kinds": ["Pod"]}}]},
                 "validate": {"message": "images must come from trusted-registry.com", "pattern": {"spec": {
                     **{f"=({key})": [{"image": image}] for key in lists},
                     "containers": [{"image": image}]}}}}]}}
    return copy.deepcopy(base)


@pytest.fixture(scope="module")
def spec():
    return all_cases(compile_source(SCENARIO.read_bytes(), str(SCENARIO), Diagnostics()).scenario)[0]


def test_a_registry_written_as_a_host_prefix_fails(spec):
    passed, failed = grade(spec, ("kyverno", [_policy("trusted-registry.com*")]))
    assert not passed and "ciso.general" in failed


def test_a_registry_rule_over_containers_alone_fails(spec):
    passed, failed = grade(spec, ("kyverno", [_policy("trusted-registry.com/*", lists=())]))
    assert not passed and "ciso.general" in failed


def test_the_registry_host_with_its_slash_passes(spec):
    passed, failed = grade(spec, ("kyverno", [_policy("trusted-registry.com/*")]))
    assert passed, failed


def test_a_registry_is_the_host_up_to_the_first_slash():
    assert _registry("trusted-registry.com/test-image") == ("trusted-registry.com", "test-image")
    assert _registry("nginx:1.27") is None
    assert _registry("library/nginx") is None
    assert _registry("localhost:5000/app") is None
