"""FinOps's closed `type` vocabulary and the Rego grading of the CISO OPA tasks, by hand.

FinOps: an answer's `type` is exactly one value of the vocabulary (tasks.FINOPS_TYPES), spelled any way the
vocabulary lists; a negated, hedged or many-valued text is none, and an autoscaler's workload may be named with
the replicas it holds up. Rego: the policy is graded on inputs whose verdict depends on the objects' content
(count, order and sizes do not tell them apart), in the input shape the prompt states, and a host control's
input carries the settings the control reads.
"""

from __future__ import annotations

import json

import pytest
from support.sshd_rego import effective_rule

from itbench_dsl.tasks import FINOPS_TYPES
from test_evaluator import bundle, derived, evaluator, run


def failed(verdict: dict) -> set:
    return {c["id"] for c in verdict["checks"] if not c["passed"]}


FINOPS = [("otel-cart-overprovisioned-requests", "Deployment", "cart", "overprovisioned_requests"),
          ("otel-recommendation-idle-replicas", "Deployment", "recommendation", "idle_replicas"),
          ("otel-frontend-hpa-misconfigured", "HorizontalPodAutoscaler", "frontend", "misconfigured_hpa"),
          ("otel-ad-missing-memory-limit", "Deployment", "ad", "unassigned_limits")]


def _typed(name, kind, obj, text):
    return run(name, {"resource": [{"name": f"otel-demo/{kind}/{obj}", "type": text}]}, derived(name, "faulty"),
               task="diagnose")


@pytest.mark.parametrize("name,kind,obj,value", FINOPS)
def test_the_type_is_one_value_of_the_vocabulary(name, kind, obj, value):
    for text in (value, value.replace("_", " ").upper(), value.replace("_", "-"), FINOPS_TYPES[value][0],
                 f"{kind}: {FINOPS_TYPES[value][-1]}"):
        assert _typed(name, kind, obj, text)["passed"], text
    others = [v for v in FINOPS_TYPES if v != value]
    hedged = [f"not {value.replace('_', ' ')}", f"no {value.replace('_', ' ')}", f"either {value} or {others[0]}",
              f"{value} or {others[0]}", ", ".join(FINOPS_TYPES), f"{value}, {others[0]}", f"maybe {value}",
              f"{value}?  possibly {others[1]}", others[0], "x", kind, ""]
    for text in hedged:
        verdict = _typed(name, kind, obj, text)
        assert not verdict["passed"] and "finops.type" in failed(verdict), text


def test_an_object_named_twice_must_have_every_type_right():
    name, kind, obj, value = FINOPS[0]
    answer = {"resource": [{"name": f"otel-demo/{kind}/{obj}", "type": v} for v in FINOPS_TYPES]}
    verdict = run(name, answer, derived(name, "faulty"), task="diagnose")
    assert "finops.type" in failed(verdict)


def test_an_autoscalers_workload_may_be_named_with_its_replicas():
    """A misconfigured HPA keeps its workload scaled out: naming the workload with "too many replicas" names
    the waste (the replicas the autoscaler holds up); the autoscaler itself is misconfigured, not idle."""
    name = "otel-frontend-hpa-misconfigured"
    assert _typed(name, "Deployment", "frontend", "too many replicas")["passed"]
    assert _typed(name, "Deployment", "frontend", "misconfigured_hpa")["passed"]
    assert "finops.type" in failed(_typed(name, "HorizontalPodAutoscaler", "frontend", "too many replicas"))
    assert "finops.type" in failed(_typed(name, "Deployment", "frontend", "overprovisioned_requests"))
    # on a workload scaled by hand, the autoscaler's type is not the waste
    assert "finops.type" in failed(_typed("otel-recommendation-idle-replicas", "Deployment", "recommendation",
                                          "misconfigured_hpa"))


# ---- Rego: inputs whose verdict depends on content, in the shape the prompt states --------------------------

OPA = ["cis-5-2-5-host-network-opa", "cis-k8s-5-2-5-host-network-opa", "cis-k8s-5-3-2-network-policy-opa",
       "cis-k8s-5-4-1-secret-env-opa", "rhel9-auditd-enabled-ansible-opa", "rhel9-sshd-x11-forwarding-ansible-opa",
       "rhel9-sshd-permit-root-login-ansible-opa"]
HOSTS = [n for n in OPA if n.startswith("rhel9-")]


def _rego(name, source):
    return run(name, None, None, task="policy", artifact=("rego", source))


def _inputs(name):
    """Every input the evaluator gives the policy of `name`, as documents."""
    ns = evaluator(name)
    spec, ciso = ns["SPEC"], ns["SPEC"]["ciso"]
    return [ns["rego_input"](spec, world) for _, world, _ in
            ns["rego_inputs"](ciso["gaps"], ciso["compliant"], ciso.get("context", []), ciso.get("unit"))]


@pytest.mark.parametrize("name", OPA)
def test_a_policy_that_counts_the_items_fails(name):
    pytest.importorskip("regopy")
    items = "input.hosts" if name in HOSTS else "input.items"
    counts = sorted({len(d["hosts"] if name in HOSTS else d["items"]) for d in _inputs(name)})
    for n in range(0, counts[-1] + 2):
        for test in (f"count({items}) <= {n}", f"count({items}) == {n}", f"count({items}) != {n}"):
            verdict = _rego(name, f"package check\n\ndefault result := false\n\nresult if {test}\n")
            assert not verdict["passed"], test


@pytest.mark.parametrize("name", OPA)
def test_a_policy_that_reads_the_inputs_size_or_its_last_item_fails(name):
    pytest.importorskip("regopy")
    items = "input.hosts" if name in HOSTS else "input.items"
    sizes = sorted({len(json.dumps(d, separators=(",", ":"))) for d in _inputs(name)})
    for n in sizes + [sizes[-1] + 1]:
        verdict = _rego(name, f"package check\n\ndefault result := false\n\nresult if count(json.marshal(input)) < {n}\n")
        assert not verdict["passed"], n
    # the last item is the one a gap world adds: a policy reading only it is keyed on order
    good = _right(name)
    if good is not None:
        last = good.replace(f"some i\n  item := {items}[i]", f"i := count({items}) - 1\n  item := {items}[i]")
        assert last != good
        assert _rego(name, good)["passed"]
        assert not _rego(name, last)["passed"]


# every pod a workload's template makes, and a bare Pod: the scenario's variants hold both
POD_HOST_NETWORK = '  pod := object.get(item.spec, "template", {"spec": item.spec}).spec\n  pod.hostNetwork == true\n'


def _right(name):
    """The right policy by content of a scenario of the list below (None where none is written here)."""
    right = {
        "cis-5-2-5-host-network-opa": ("input.items", POD_HOST_NETWORK),
        "cis-k8s-5-2-5-host-network-opa": ("input.items", POD_HOST_NETWORK),
        # sshd reads its keywords' values in any case, the first drop-in holding one over the main file, and an
        # absent one is its default (X11Forwarding no, PermitRootLogin prohibit-password)
        "rhel9-sshd-x11-forwarding-ansible-opa": ("input.hosts", '  lower(sshd(item, "x11forwarding", "no")) != "no"\n'),
        "rhel9-sshd-permit-root-login-ansible-opa": ("input.hosts", '  lower(sshd(item, "permitrootlogin", '
                                                     '"prohibit-password")) != "no"\n'),
        # a host without the unit is a gap too (auditd not installed): `not ... == "enabled"` holds where it is absent
        "rhel9-auditd-enabled-ansible-opa": ("input.hosts", '  not item.services["auditd.service"].status == "enabled"\n'),
    }.get(name)
    if right is None:
        return None
    items, test = right
    return ("package check\n\ndefault result := false\n\nresult if count(violations) == 0\n\n"
            f"violations contains i if {{\n  some i\n  item := {items}[i]\n{test}}}\n" + (SSHD if "sshd(" in test else ""))


# an sshd setting as sshd reads it: the first drop-in (by name) holding the keyword in any case, else the main file
SSHD = effective_rule("sshd")


@pytest.mark.parametrize("name", HOSTS)
def test_a_host_controls_input_holds_the_settings_it_reads(name):
    """The gap host holds the control's setting at its violating value, the compliant host at its compliant
    one, every other setting alike: a right policy by content passes, one reading another setting, one that
    flags every host and one that tells the hosts apart by group name fail."""
    pytest.importorskip("regopy")
    from itbench_dsl.ciso import CATALOGUE

    spec = evaluator(name)["SPEC"]
    control = CATALOGUE[spec["ciso"]["control"]]
    gap, ok = spec["ciso"]["gaps"][0]["host"], spec["ciso"]["compliant"][0]["host"]
    if control.kind == "service":
        assert gap["services"][f"{control.key}.service"]["status"] == "disabled"
        assert ok["services"][f"{control.key}.service"]["status"] == "enabled"
    else:
        assert gap["files"][control.path][control.key] == control.violating
        assert ok["files"][control.path][control.key] == control.compliant
    differ = [(k, v) for k, v in gap.items() if ok.get(k) != v]
    assert len(differ) == 1  # one file or the services: the setting the control reads
    good = _right(name)
    verdict = _rego(name, good)
    assert verdict["passed"], [c for c in verdict["checks"] if not c["passed"]]
    other = "PermitRootLogin" if "permit-root" not in name else "X11Forwarding"
    wrong = good.split("  item := input.hosts[i]\n")[0] + \
        f'  item := input.hosts[i]\n  item.files["/etc/ssh/sshd_config"].{other} != "no"\n}}\n'
    assert not _rego(name, wrong)["passed"]
    deny = "package check\n\ndefault result := false\n\nresult if count(input.hosts) == 0\n"
    assert not _rego(name, deny)["passed"]
    by_name = ("package check\n\ndefault result := false\n\nresult if count(bad) == 0\n\n"
               'bad contains h.name if {\n  some h in input.hosts\n  h.name == "rhel9_servers"\n}\n')
    assert not _rego(name, by_name)["passed"]


@pytest.mark.parametrize("name", OPA)
def test_the_prompt_states_the_input_shape_the_policy_is_graded_on(name):
    """The prompt says what the grader does: it does not run the agent's script, and it feeds the policy
    inputs of the shape the prompt shows (the same keys at each level)."""
    from itbench_dsl.backends import prompt as prompt_backend
    from itbench_dsl.ciso.tasks import INPUT_SHAPES

    scenario = bundle(name)[0]
    text = prompt_backend.render(scenario)
    assert "is not run" in text
    stated = json.loads(text.split("How it is graded", 1)[1].split("```json", 1)[1].split("```", 1)[0])
    spec = evaluator(name)["SPEC"]
    assert stated == INPUT_SHAPES[spec["ciso"]["input"]]
    for document in _inputs(name):
        assert set(document) == set(stated)
        listed = document["hosts"] if "hosts" in stated else document["items"]
        assert listed
        if "hosts" in stated:
            assert all(set(h) == set(stated["hosts"][0]) for h in listed)
            assert all(isinstance(v, str) for h in listed for f in h["files"].values() for v in f.values())
        else:
            assert document["kind"] == "List" and all(isinstance(o, dict) and o.get("kind") for o in listed)
