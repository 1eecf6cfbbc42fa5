"""Problems ported from peer benchmarks (docs/peers.md): every scenario whose metadata names a peer
benchmark as its `origin` (SREGym, k8s-ai-bench) checks clean with `--strict` (no diagnostic at all, and
no `lint_allow`), names the peer problem and the commit it was read at, is named after it, and is listed in
docs/peers.md; there are at least ten SREGym ports and eight k8s-ai-bench ports. The fault kinds added for
them refuse what would make their injection change nothing."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from itbench_dsl.checking import check_files, check_source
from itbench_dsl.diagnostics import render_human

REPO = Path(__file__).resolve().parents[2]
SCENARIOS = REPO / "scenarios"
# peer benchmark -> (file name prefix, fewest ports, how its problem ids are spelled)
PEERS = {
    "SREGym": ("sregym", 10, r"[a-z0-9_]+"),  # its registry keys; the file name spells `_` as `-`
    "k8s-ai-bench": ("k8sbench", 8, r"[a-z0-9-]+"),  # its task folders
}
ORIGIN = re.compile(r'^\s*origin\s*=\s*"([^"]+)"\s*$', re.MULTILINE)


def _ports() -> dict[str, list[Path]]:
    found: dict[str, list[Path]] = {peer: [] for peer in PEERS}
    for path in sorted(SCENARIOS.rglob("*.itb")):
        match = ORIGIN.search(path.read_text("utf-8"))
        if match and match.group(1) in PEERS:
            found[match.group(1)].append(path)
    return found


PORTS = _ports()
ALL_PORTS = [p for peer in PEERS for p in PORTS[peer]]


@pytest.mark.parametrize("peer", sorted(PEERS))
def test_there_are_enough_ports(peer):
    assert len(PORTS[peer]) >= PEERS[peer][1], [p.name for p in PORTS[peer]]


def test_ports_check_clean_and_strict():
    # checked with the rest of the SRE library, so that a port that measures what a scenario already does
    # (W2001: the same fault mechanism on the same target) is reported too
    others = sorted(set((SCENARIOS / "sre").glob("*.itb")) - set(ALL_PORTS))
    diags, checks = check_files([(str(p), p.read_bytes()) for p in [*ALL_PORTS, *others]])
    ports = {str(p) for p in ALL_PORTS}
    diags.items = [d for d in diags.items if d.path in ports]
    assert not diags.items, render_human(diags)
    for check in checks[:len(ALL_PORTS)]:
        scenario = check.scenario
        assert scenario is not None, check.path
        origin = scenario.metadata.get("origin")
        assert origin in PEERS, check.path
        prefix, _, spelling = PEERS[origin]
        # a port may not silence a rule, but for W2015 on a problem the peer poses with no observable symptom,
        # which docs/peers.md lists with why, and W2018 where the peer's application has no object of the kind its
        # fault creates (a lone kind; decoys, docs/fault-kinds.md, are what would clear it)
        allowed = scenario.metadata.get("lint_allow") or []
        assert set(allowed) <= {"W2015", "W2018"}, f"{check.path}: a port may not silence a rule"
        if "W2015" in allowed:
            assert f"`{Path(check.path).name}` | " in (REPO / "docs" / "peers.md").read_text("utf-8"), check.path
        problem = scenario.metadata.get("origin_problem")
        assert isinstance(problem, str) and re.fullmatch(spelling, problem), check.path
        assert re.fullmatch(r"[0-9a-f]{40}", str(scenario.metadata.get("origin_commit"))), check.path
        # named after the problem: <prefix>-<problem with dashes>.itb, or with a qualifier saying how a second port
        # of one problem differs from it (`-bare-pod`)
        stem = re.escape(f"{prefix}-{problem.replace('_', '-')}")
        assert re.fullmatch(stem + r"(-[a-z0-9]+)*\.itb", Path(check.path).name), check.path


def test_every_port_is_in_the_peers_table():
    table = (REPO / "docs" / "peers.md").read_text("utf-8")
    for path in ALL_PORTS:
        assert f"scenarios/sre/{path.name}" in table, f"{path.name} is not listed in docs/peers.md"


# ---- the fault kinds added for the ports: their preconditions ---------------------------------------------

SHOP = """scenario "shop" {{
  domain sre
  complexity low
  description "The cart is broken."
  topology {{
    namespace "shop" {{ labels {{ {ns_labels} }} }}
    deployment "cart" {{
      {pod_security}
      container "cart" {{
        image = "ghcr.io/example/cart:1.0"
        port "grpc" = 7070
        env {{ REDIS_ADDR = "redis:6379" }}
        {container_security}
      }}
    }}
    service "cart" {{ port "grpc" = 7070 }}
  }}
  {fault}
}}
"""
# pods that meet the restricted Pod Security Standard
RESTRICTED_POD = 'security_context { run_as_non_root = true  seccomp_profile { type = "RuntimeDefault" } }'
RESTRICTED_CONTAINER = 'security_context { allow_privilege_escalation = false  capabilities { drop = ["ALL"] } }'


def _codes(fault: str, pod_security: str = "", container_security: str = "", ns_labels: str = "") -> list[str]:
    text = SHOP.format(fault=fault, pod_security=pod_security, container_security=container_security,
                       ns_labels=ns_labels)
    return [d.code for d in check_source(text.encode(), "shop.itb", lint=False).diagnostics if d.severity == "error"]


@pytest.mark.parametrize("fault,code", [
    ('fault misconfigured_liveness_probe on deployment "cart" { port = 7070 }', "E2011"),
    ('fault misconfigured_liveness_probe on deployment "cart" { path = "healthz" }', "E2010"),
    ('fault removed_env on deployment "cart" { name = "REDIS_HOST" }', "E2021"),
    ('fault dependency_wait_init_container on deployment "cart" { service = "cart" }', "E2011"),
    ('fault dependency_wait_init_container on deployment "cart" { service = "Legacy Config" }', "E2014"),
    ('fault dependency_wait_init_container on deployment "cart" { service = "legacy"  container_name = "cart" }',
     "E2011"),
    ('fault enforced_pod_security on namespace "shop" { level = privileged }', "E2010"),
])
def test_new_fault_preconditions(fault, code):
    assert _codes(fault) == [code]


def test_pod_security_needs_a_workload_that_breaks_the_level():
    fault = 'fault enforced_pod_security on namespace "shop"'
    assert _codes(fault) == []  # the cart runs as root: restricted refuses its new pods
    assert _codes(fault, RESTRICTED_POD, RESTRICTED_CONTAINER) == ["E2011"]
    assert _codes(fault, RESTRICTED_POD) == []  # privilege escalation still allowed
    assert _codes(fault, ns_labels='"pod-security.kubernetes.io/enforce" = "restricted"') == ["E2027"]


def test_the_control_templates_check_clean():
    # the template itself is valid, so each error above is the fault's
    assert _codes('fault removed_env on deployment "cart" { name = "REDIS_ADDR" }') == []
    assert _codes('fault misconfigured_liveness_probe on deployment "cart"') == []
    assert _codes('fault dependency_wait_init_container on deployment "cart" { service = "legacy" }') == []


# ---- the fault kinds declared in the language for the SocialNetwork ports ---------------------------------

SOCIAL_FAULTS = SCENARIOS / "sre" / "faults" / "social-network.faults"
DECLARED_SHOP = """scenario "shop" {{
  domain sre
  complexity low
  description "The cart is broken."
  use faults "{faults}"
  topology {{
    namespace "shop"
    deployment "cart" {{
      container "cart" {{
        image = "ghcr.io/example/cart:1.0"
        port "grpc" = 7070
      }}
      {pod}
    }}
    service "cart" {{ port "grpc" = 7070 }}
  }}
  {fault}
}}
"""


def _declared_codes(fault: str, pod: str = "") -> list[str]:
    text = DECLARED_SHOP.format(faults=SOCIAL_FAULTS.as_posix(), fault=fault, pod=pod)
    return [d.code for d in check_source(text.encode(), "shop.itb", lint=False).diagnostics if d.severity == "error"]


def test_the_social_network_fault_library_checks_clean():
    diags, _ = check_files([(str(SOCIAL_FAULTS), SOCIAL_FAULTS.read_bytes())])
    assert not diags.items, render_human(diags)


@pytest.mark.parametrize("fault,pod,codes", [
    ('fault port_conflicting_sidecar on deployment "cart" { port = 7070 }', "", []),
    ('fault port_conflicting_sidecar on deployment "cart" { port = 8080 }', "", ["E2022"]),  # nothing serves 8080
    ('fault port_conflicting_sidecar on deployment "cart" { port = 7070  sidecar = "cart" }', "", ["E2011"]),
    ('fault external_dns_resolver on deployment "cart"', "", []),
    ('fault external_dns_resolver on deployment "cart"', 'dns_policy = "None"', []),  # dnsConfig still changes
    ('fault aggressive_liveness_probe on deployment "cart"', "", ["E2011"]),  # the cart has no liveness probe
])
def test_declared_social_network_kinds_refuse_what_would_not_break(fault, pod, codes):
    assert _declared_codes(fault, pod) == codes


def test_an_aggressive_probe_needs_a_probe_with_other_timings():
    probe = 'probe "liveness" {{ tcp = 7070  initial_delay = {delay}  period = {period}  failure_threshold = 1 }}'
    fault = 'fault aggressive_liveness_probe on deployment "cart"'
    text = DECLARED_SHOP.replace('port "grpc" = 7070\n', 'port "grpc" = 7070\n        ' + probe + '\n', 1)
    assert text != DECLARED_SHOP

    def codes(delay: str, period: str, pod: str = "") -> list[str]:
        source = text.format(faults=SOCIAL_FAULTS.as_posix(), fault=fault, pod=pod, delay=delay, period=period)
        return [d.code for d in check_source(source.encode(), "shop.itb", lint=False).diagnostics
                if d.severity == "error"]

    assert codes("30s", "10s") == []
    assert codes("0s", "1s") == []  # the grace period still changes
    # a probe already that tight, in a pod with no grace period: the fault would change nothing
    assert codes("0s", "1s", "termination_grace_period = 0s") == ["E2027"]
