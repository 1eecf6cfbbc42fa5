"""A fault undone by any one of its parts counts a part undone only when, after it, the fault no longer acts
(docs/evaluator.md, `fault.N.KIND`): an aggressive liveness probe is not undone by restoring its grace period,
or one timing field that still leaves the kubelet killing the container before it starts.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))
TESTS = HERE.parent
if str(TESTS) not in sys.path:
    sys.path.insert(0, str(TESTS))

from test_evaluator import derived, failed, mitigate, obj  # noqa: E402

from itbench_dsl.runtime import evaluator as rt  # noqa: E402

PROBE = "sregym-liveness-probe-too-aggressive-social-network"  # aux-service: delay 0, period 1, threshold 1, grace 0
FAULTY = {"initialDelaySeconds": 0, "periodSeconds": 1, "failureThreshold": 1}


def _state(restored: str | None = None, probe: dict | None = None, grace=0):
    """The solved state with the fault's timing back, but `restored` (a probe field, or "grace") healthy."""
    state = derived(PROBE, "solved")
    pod = obj(state, "Deployment", "aux-service")["spec"]["template"]["spec"]
    container = next(c for c in pod["containers"] if c["name"] == "aux-service-container")
    live = container["livenessProbe"]
    for k, v in FAULTY.items():
        if k != restored:
            live[k] = v
    if probe is not None:
        live.update(probe)
    if restored != "grace":
        pod["terminationGracePeriodSeconds"] = grace
    return state


@pytest.mark.parametrize("restored", ["grace", "periodSeconds", "failureThreshold"])
def test_a_part_that_leaves_the_probe_acting_is_no_undoing(restored):
    verdict = mitigate(PROBE, _state(restored))
    assert not verdict["passed"]
    assert any(c.startswith("fault.") for c in failed(verdict))


def test_the_delay_restored_alone_undoes_it():
    assert mitigate(PROBE, _state("initialDelaySeconds"))["passed"]


def test_the_whole_probe_restored_passes():
    assert mitigate(PROBE, derived(PROBE, "solved"))["passed"]


def test_the_budget_is_delay_plus_period_times_threshold():
    assert rt.probe_budget({}) == 30
    assert rt.probe_budget({"initialDelaySeconds": 60, "periodSeconds": 10, "failureThreshold": 3}) == 90
    assert rt.probe_budget({"initialDelaySeconds": 0, "periodSeconds": 1, "failureThreshold": 1}) == 1


def _guarded(startup=None, live=None):
    """Every part of the fault left in place (grace 0), the container given a startup probe or its liveness
    probe another check."""
    state = _state()
    container = next(c for c in obj(state, "Deployment", "aux-service")["spec"]["template"]["spec"]["containers"]
                     if c["name"] == "aux-service-container")
    if startup is not None:
        container["startupProbe"] = startup
    if live is not None:
        for handler in rt.PROBE_ACTIONS:
            container["livenessProbe"].pop(handler, None)
        container["livenessProbe"].update(live)
    return state


HEALTH = {"httpGet": {"path": "/health", "port": 8080}}


@pytest.mark.parametrize("startup, live, passed", [
    ({**HEALTH, "periodSeconds": 10, "failureThreshold": 30}, None, True),  # the kubelet waits for it first
    ({**HEALTH, "periodSeconds": 1, "failureThreshold": 1}, None, False),  # a guard with no wait
    ({"tcpSocket": {"port": 9}, "periodSeconds": 10, "failureThreshold": 30}, None, False),  # another check
    # the container's name for 8080: the kubelet probes the same port
    ({"httpGet": {"path": "/health", "port": "http"}, "periodSeconds": 10, "failureThreshold": 30}, None, True),
    ({"httpGet": {"path": "/health", "port": "admin"}, "periodSeconds": 10, "failureThreshold": 30}, None, False),
    (None, {"exec": {"command": ["true"]}}, True),  # a check that cannot fail
    (None, {"exec": {"command": ["sh", "-c", "exit 0"]}}, True),
    (None, {"exec": {"command": ["sh", "-c", "curl -f localhost:8080/health"]}}, False),
])
def test_an_aggressive_probe_is_judged_by_whether_the_kubelet_acts_before_the_start(startup, live, passed):
    verdict = mitigate(PROBE, _guarded(startup, live))
    assert verdict["passed"] is passed, failed(verdict)


DNS = "sregym-wrong-dns-policy-hotel-reservation"  # profile: dnsPolicy None, dnsConfig.nameservers [8.8.8.8]


def _resolved(policy, nameservers=None):
    """The solved state with profile's pods given `policy` and, where given, the fault's nameservers."""
    state = derived(DNS, "solved")
    pod = obj(state, "Deployment", "profile")["spec"]["template"]["spec"]
    pod["dnsPolicy"] = policy
    pod.pop("dnsConfig", None)
    if nameservers is not None:
        pod["dnsConfig"] = {"nameservers": nameservers}
    return state


@pytest.mark.parametrize("policy, nameservers, passed", [
    ("ClusterFirst", ["8.8.8.8"], True),  # the cluster's resolver first, the extra nameserver after it
    ("ClusterFirst", None, True),
    ("Default", None, False),  # the nameserver part undone, but the pods get the node's resolver
    ("Default", ["8.8.8.8"], False),
])
def test_a_dns_part_is_undone_only_when_the_pods_resolve_where_the_healthy_ones_did(policy, nameservers, passed):
    verdict = mitigate(DNS, _resolved(policy, nameservers))
    assert verdict["passed"] is passed, failed(verdict)
    if not passed:
        assert any(c.startswith("fault.") for c in failed(verdict))
