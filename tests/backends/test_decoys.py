"""Decoys (backends/decoys.py): the application's harmless objects of the kinds faults create, in every incident
scenario alike, so that listing a kind does not find the fault, made so that they change nothing a cluster does."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from itbench_dsl.analysis.corpus import cases
from itbench_dsl.analysis.states import derive, objects
from itbench_dsl.backends import decoys as decoy_backend
from itbench_dsl.backends.evaluator import evaluator_spec
from itbench_dsl.compiler import compile_source
from itbench_dsl.diagnostics import Diagnostics
from itbench_dsl.runtime.state import selector_matches

ROOT = Path(__file__).resolve().parents[2]
# the library scenarios whose faults create a policy or a quota (read cheaply, compiled below), and two others
CANDIDATES = sorted(p for p in (ROOT / "scenarios" / "sre").glob("*.itb")
                    if re.search(r"network_policy|quota|istio_", p.read_text(encoding="utf-8")))
OTHERS = [ROOT / "scenarios" / "sre" / "otel-checkout-nonexistent-image.itb",
          ROOT / "scenarios" / "finops" / "otel-cart-overprovisioned-requests.itb"]


def _compiled(path: Path):
    diags = Diagnostics()
    result = compile_source(path.read_bytes(), str(path), diags)
    assert not diags.has_errors, [d.message for d in diags.errors()]
    return result


def _docs(result, name: str) -> list[dict]:
    return [d for d in yaml.safe_load_all(result.files.get(name, b"")) if d]


def _labels(workload: dict) -> dict:
    return ((workload.get("spec") or {}).get("template") or {}).get("metadata", {}).get("labels") or {}


@pytest.mark.parametrize("path", CANDIDATES + [p for p in OTHERS if p.exists()], ids=lambda p: p.stem)
def test_library_decoys_are_harmless_and_look_like_the_faults_objects(path: Path):
    result = _compiled(path)
    made = decoy_backend.decoys(result.scenario)
    topology = _docs(result, "manifests/topology.yaml")
    injected = _docs(result, "inject/apply.yaml")
    created = [o for o in injected if o not in made
               and (o["kind"], o["metadata"]["name"]) not in {(t["kind"], t["metadata"]["name"]) for t in topology}]
    for decoy in made:
        # created by the injection beside the fault's objects (as old as they are), not with the application
        assert decoy in injected and decoy not in topology
        meta, spec = decoy["metadata"], decoy["spec"]
        faults = [o for o in created if o["kind"] == decoy["kind"] and o["metadata"]["namespace"] == meta["namespace"]]
        same_kind = [o["metadata"]["name"] for o in [*topology, *injected] if o["kind"] == decoy["kind"]]
        assert same_kind.count(meta["name"]) == 1
        # named and labelled as the fault's object is: neither name pattern nor label keys tell them apart
        assert re.fullmatch(r"[a-z0-9-]+-[a-z]+", meta["name"])
        if faults:
            assert set(meta.get("labels") or {}) == set(faults[0]["metadata"].get("labels") or {})
            # and end as the fault's name does (`reviews-v2-shared`: `details-v1-shared`), digits in names or not
            last = sorted(f["metadata"]["name"] for f in faults)[0].rpartition("-")[2]
            if re.fullmatch(r"[a-z]+", last):
                assert meta["name"].rpartition("-")[2] == last, (meta["name"], last)
        pods = [_labels(w) for w in topology if w["kind"] in decoy_backend.WORKLOAD_KINDS
                and w["metadata"]["namespace"] == meta["namespace"]]
        if decoy["kind"] == "NetworkPolicy":
            assert spec["ingress"] == [{}] and spec["policyTypes"] == ["Ingress"]
            # never beside a fault's policy on the same pods: policies add up, an allow-all would undo it
            for labels in pods:
                if selector_matches(spec["podSelector"], labels):
                    assert not any(selector_matches(f["spec"]["podSelector"], labels) for f in faults)
        elif decoy["kind"] == "ResourceQuota":
            assert set(spec["hard"]) <= {"pods", "count/configmaps", "count/secrets", "services"}
            assert all(int(v) >= 100 for v in spec["hard"].values())
            if "pods" in spec["hard"]:  # room for the pods the workloads run, replicas and autoscalers counted
                running = sum(max(int((w.get("spec") or {}).get("replicas", 1)), 1) for w in topology
                              if w["kind"] in ("Deployment", "StatefulSet") and w["metadata"]["namespace"] == meta["namespace"])
                assert int(spec["hard"]["pods"]) >= 10 * running
        else:
            assert decoy["kind"] == "AuthorizationPolicy" and spec["action"] == "ALLOW" and spec["rules"] == [{}]
    # they are the application's: in the state the agent works on, and among the objects the evaluator knows
    if made:
        faulty = derive(result.scenario)["faulty"]["resources"]["items"]
        names = {(o["kind"], o["metadata"]["name"]) for o in faulty}
        known = {tuple(k) for k in evaluator_spec(result.scenario)["objects"]}
        for decoy in made:
            assert (decoy["kind"], decoy["metadata"]["name"]) in names
            assert (decoy["kind"], decoy["metadata"]["namespace"], decoy["metadata"]["name"]) in known


def test_every_incident_scenario_of_an_application_has_the_same_decoys_whatever_its_fault():
    """Were there quotas only where the fault is a quota, their presence would say the fault."""
    paths = [ROOT / "scenarios" / "sre" / "otel-checkout-nonexistent-image.itb",
        ROOT / "scenarios" / "sre" / "otel-checkout-insufficient-quota.itb",
        ROOT / "scenarios" / "sre" / "otel-frontend-ingress-blocked.itb"]
    kinds = []
    for path in paths:
        result = _compiled(path)
        topology = {(t["kind"], t["metadata"]["name"]) for t in _docs(result, "manifests/topology.yaml")}
        recipes = {kind for _, kind in decoy_backend.RECIPES}
        # what `kubectl get` lists of each decoy kind after the injection: the decoys and the fault's objects
        listed = [o for o in _docs(result, "inject/apply.yaml") if o["kind"] in recipes
                  and (o["kind"], o["metadata"]["name"]) not in topology]
        kinds.append(sorted((o["kind"], o["metadata"]["namespace"]) for o in listed))
        # neither their number nor their names' style singles a kind out: every kind's names end alike
        for kind in {o["kind"] for o in listed}:
            assert len({o["metadata"]["name"].rpartition("-")[2] for o in listed if o["kind"] == kind}) == 1, kind
    assert kinds[0] and kinds[0] == kinds[1] == kinds[2]


def test_the_library_has_decoys_of_every_kind_the_recipes_make():
    kinds = set()
    for path in CANDIDATES:
        kinds |= {d["kind"] for d in decoy_backend.decoys(_compiled(path).scenario)}
    assert kinds == {kind for _, kind in decoy_backend.RECIPES}


def test_deleting_the_decoys_mends_nothing_and_breaks_nothing():
    """The corpus grades the solved and faulty states with the decoys gone as it grades them with the decoys."""
    path = next(p for p in CANDIDATES if decoy_backend.decoys(_compiled(p).scenario))
    result = _compiled(path)
    spec = evaluator_spec(result.scenario)
    found = objects(result.scenario)
    decoy_cases = [c for c in cases(result.scenario, spec, found, derive(result.scenario)) if "decoys deleted" in c.name]
    assert {(c.name.split()[1], c.want) for c in decoy_cases} == {("solved", "pass"), ("faulty", "fail")}
    for case in decoy_cases:
        ok, what = case.run(spec)
        assert ok, f"{case.name}: {what}"


def _policy(kind: str, spec: dict) -> dict:
    return {"apiVersion": "x", "kind": kind, "metadata": {"name": "p", "namespace": "shop"}, "spec": spec}


def test_a_decoy_never_goes_where_it_would_change_the_faults_effect():
    cart, web = {"app": "cart"}, {"app": "web"}
    _, isolates = decoy_backend.RECIPES[("networking.k8s.io", "NetworkPolicy")]
    assert isolates(_policy("NetworkPolicy", {"podSelector": {}}), web)  # a namespace-wide deny covers every pod
    assert not isolates(_policy("NetworkPolicy", {"podSelector": {"matchLabels": cart}}), web)
    # no PeerAuthentication decoy: Istio keeps a workload's oldest policy, which would shadow an agent's fix
    assert ("security.istio.io", "PeerAuthentication") not in decoy_backend.RECIPES
    _, allows = decoy_backend.RECIPES[("security.istio.io", "AuthorizationPolicy")]
    # an ALLOW policy turns its pods' default to deny: an allow-all beside it would undo that
    assert allows(_policy("AuthorizationPolicy", {"action": "ALLOW", "rules": [{"from": [{}]}]}), web)
    assert allows(_policy("AuthorizationPolicy", {"selector": {"matchLabels": web}}), web)  # ALLOW by default
    # DENY is evaluated before any ALLOW; a policy attached by targetRef acts on what it names
    assert not allows(_policy("AuthorizationPolicy", {"action": "DENY", "rules": [{}]}), web)
    assert not allows(_policy("AuthorizationPolicy", {"action": "ALLOW", "targetRef": {"kind": "Gateway"}}), web)
