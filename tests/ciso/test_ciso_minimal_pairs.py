"""Gap and compliant objects are minimal pairs: a compliant object differs from its gap object only in the
fields the control reads (`K8sControl.reads`, or `control "ID" { reads = [...] }`), so that no policy keyed
on another field (a label, an image, another setting) tells them apart. Checked on every catalogue control
and on every Kubernetes scenario of the library."""

from __future__ import annotations

from pathlib import Path

import pytest

from itbench_dsl.ciso.k8s import CONTROLS, minimal_pairs, off_control
from itbench_dsl.backends.evaluator import evaluator_spec
from itbench_dsl.compiler import compile_source
from itbench_dsl.diagnostics import Diagnostics

REPO = Path(__file__).resolve().parents[2]
LIBRARY = sorted((REPO / "scenarios" / "ciso").glob("*.itb"))


@pytest.mark.parametrize("control", CONTROLS, ids=lambda c: c.id)
def test_catalogue_pairs_differ_only_in_what_the_control_reads(control):
    assert minimal_pairs(control.reads, control.objects("ns", True), control.objects("ns", False)) == []


@pytest.mark.parametrize("path", LIBRARY, ids=lambda p: p.stem)
def test_library_pairs_differ_only_in_what_the_control_reads(path):
    result = compile_source(path.read_bytes(), str(path), Diagnostics())
    compliance = result.scenario.compliance
    spec = evaluator_spec(result.scenario)["ciso"]
    if not any(isinstance(o.get("spec"), dict) or "rules" in o or "roleRef" in o for o in spec["gaps"]):
        return  # a host control: its gap is an inventory group
    assert compliance.reads, f"{path.stem}: the control declares no `reads` (the fields it reads)"
    assert minimal_pairs(tuple(compliance.reads), spec["gaps"], spec["compliant"], spec.get("context", [])) == []


def test_a_difference_outside_the_control_is_found():
    gap = {"kind": "Deployment", "metadata": {"name": "a", "labels": {"app": "a"}},
           "spec": {"template": {"spec": {"hostNetwork": True, "containers": [{"name": "c", "image": "x:1"}]}}}}
    twin = {"kind": "Deployment", "metadata": {"name": "b", "labels": {"app": "b", "tier": "web"}},
            "spec": {"template": {"spec": {"containers": [{"name": "c", "image": "y:2"}]}}}}
    found = off_control(("spec.template.spec.hostNetwork",), gap, twin, {"a", "b"})
    # the label value that holds the name is no difference; a label key only one side carries and the image are
    assert found == ["metadata.labels.tier", "spec.template.spec.containers.0.image"]
