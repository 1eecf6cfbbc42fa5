"""What the injection writes beyond the faults (backends/cover.py) and the run's one field manager: the newest
write, the newest object and the odd name out do not single out the fault's object."""

from __future__ import annotations

import re

import yaml

from itbench_dsl.backends import argo, engines
from itbench_dsl import ir
from itbench_dsl.backends.cover import COVER_ANNOTATION, TEMPLATE_KINDS, _restart_unsafe
from itbench_dsl.backends.decoys import decoys
from itbench_dsl.backends.faults import plan
from itbench_dsl.run import lifecycle

from support.compiling import REPO, SCENARIOS, compile_ok

PACKAGE = REPO / "itbench_dsl"


def _compiled(name: str):
    path = SCENARIOS / "sre" / f"{name}.itb"
    return compile_ok(path.read_bytes(), str(path))


def _docs(result, name: str) -> list[dict]:
    return [d for d in yaml.safe_load_all(result.files.get(name, b"")) if d]


def _key(o: dict) -> tuple:
    return (o["kind"], o["metadata"].get("namespace"), o["metadata"]["name"])


def _stamp(o: dict) -> str | None:
    meta = o["spec"]["template"].get("metadata") or {} if o["kind"] in TEMPLATE_KINDS else o["metadata"]
    return (meta.get("annotations") or {}).get(COVER_ANNOTATION)


def test_one_field_manager_kubectls_own_for_server_side_apply():
    """The manager is recorded in every object's managedFields, which the agent reads: kubectl's default for
    `kubectl apply --server-side` names no harness, and it is defined once."""
    assert lifecycle.FIELD_MANAGER == "kubectl"
    assert engines.FIELD_MANAGER is lifecycle.FIELD_MANAGER and argo.FIELD_MANAGER is lifecycle.FIELD_MANAGER
    homes = [p for p in PACKAGE.rglob("*.py") if re.search(r"^FIELD_MANAGER\s*=", p.read_text(), re.M)]
    assert homes == [PACKAGE / "run" / "lifecycle.py"]
    literal = re.compile(r"field[-_]?manager\W{1,3}itbench|fieldManager=itbench", re.I)
    assert not [p for p in PACKAGE.rglob("*.py") if literal.search(p.read_text())]
    apply = argo._shell(engines.Action("apply", "inject", file="inject/apply.yaml"))
    assert "--field-manager=kubectl " in apply


def test_a_patched_workload_is_restarted_with_every_workload_of_its_kind():
    result = _compiled("sregym-wrong-dns-policy-hotel-reservation")
    faults = {_key(o) for o in plan(result.scenario)[0]}
    topology = {_key(o): o for o in _docs(result, "manifests/topology.yaml")}
    injected = {_key(o): o for o in _docs(result, "inject/apply.yaml")}
    [target] = [k for k in faults if k in topology and k[0] == "Deployment"]
    peers = [k for k in topology if k[0] == "Deployment" and k[1] == target[1]]
    assert len(peers) > 5 and set(peers) <= set(injected)
    # the same annotation, as `kubectl rollout restart` writes it: each gets a new generation and ReplicaSet
    assert len({_stamp(injected[k]) for k in peers}) == 1 and _stamp(injected[target])
    for key in peers:
        if key != target:  # nothing else of the others changes
            again = injected[key]
            del again["spec"]["template"]["metadata"]["annotations"][COVER_ANNOTATION]
            if not again["spec"]["template"]["metadata"]["annotations"]:
                del again["spec"]["template"]["metadata"]["annotations"]
            assert again == topology[key]
    # in name order: the order of the writes says nothing either
    order = [k[2] for k in injected if k[0] == "Deployment"]
    assert order == sorted(order)
    # the faults' plan (what the evaluator and the revert read) is unchanged by them
    assert all(not _stamp(o) for o in plan(result.scenario)[0] if o["kind"] == "Deployment")


def test_a_patched_service_is_written_again_with_every_service_of_its_namespace():
    result = _compiled("otel-cart-service-target-port")
    topology = {_key(o) for o in _docs(result, "manifests/topology.yaml") if o["kind"] == "Service"}
    injected = [o for o in _docs(result, "inject/apply.yaml") if o["kind"] == "Service"]
    assert {_key(o) for o in injected} == topology and all(_stamp(o) for o in injected)


def test_decoys_are_created_with_the_faults_object_and_named_in_its_style():
    result = _compiled("otel-frontend-ingress-blocked")
    topology = {_key(o) for o in _docs(result, "manifests/topology.yaml")}
    made = {_key(o) for o in decoys(result.scenario)}
    assert made and not made & topology  # not deployed before the injection: as old as the fault's object
    injected = [o for o in _docs(result, "inject/apply.yaml") if o["kind"] == "NetworkPolicy"]
    [fault] = [o for o in injected if _key(o) not in made]
    suffix = fault["metadata"]["name"].rsplit("-", 1)[1]
    assert len(injected) == 3 and all(o["metadata"]["name"].endswith("-" + suffix) for o in injected)
    names = [o["metadata"]["name"] for o in injected]
    assert names == sorted(names)


def test_no_restart_where_restarted_pods_would_meet_the_fault():
    """Pods started again under a quota a fault creates could be refused, and without a ConfigMap the injection
    deletes they could not start: a restart there would spread the fault to the others."""
    web = {"kind": "Deployment", "metadata": {"name": "web", "namespace": "shop"},
           "spec": {"template": {"spec": {"volumes": [{"name": "c", "configMap": {"name": "web-config"}}]}}}}
    quota = {"kind": "ResourceQuota", "metadata": {"name": "cart-main", "namespace": "shop"}}
    assert _restart_unsafe("shop", [quota], [], web)
    assert not _restart_unsafe("other", [quota], [], web)
    gone = ir.ObjectRef("v1", "ConfigMap", "shop", "web-config")
    assert _restart_unsafe("shop", [], [gone], web)
    assert not _restart_unsafe("shop", [], [ir.ObjectRef("v1", "ConfigMap", "shop", "cart-config")], web)
