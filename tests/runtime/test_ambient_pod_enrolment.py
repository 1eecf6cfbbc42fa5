"""Istio ambient enrolment judged per pod (runtime/evaluator.py, enrolment_parts): Istio enrols a pod whose own
`istio.io/dataplane-mode` label is `ambient` as it enrols the pods of a namespace labelled so, and a pod's own
`none` keeps it out. A namespace a fault took out of the mesh is undone once every pod of it is enrolled,
whichever label enrols it; the namespace's label is no check of its own."""

from __future__ import annotations

from itbench_dsl.analysis.corpus import FAIL, PASS
from itbench_dsl.runtime.evaluator import ambient_enrolled, DATAPLANE_LABEL

from tests.analysis.test_corpus import _problems, names

SCENARIO = "bookinfo-ambient-mode-disabled"


def test_a_pod_label_enrols_and_opts_out():
    assert ambient_enrolled({DATAPLANE_LABEL: "ambient"}, False)
    assert not ambient_enrolled({DATAPLANE_LABEL: "none"}, True)
    assert ambient_enrolled({}, True) and not ambient_enrolled({}, False)
    assert ambient_enrolled({DATAPLANE_LABEL: "other"}, True)  # only `none` opts a pod out


def test_every_pod_enrolled_by_its_own_label_undoes_the_fault():
    cases = {k: v for k, v in names(SCENARIO).items() if "left out of the ambient mesh" in k}
    assert sorted(cases.values()) == [FAIL, PASS], cases
    assert _problems(SCENARIO) == []
