"""Lint rules (itbench_dsl/analysis/lint.py): each W code fires on a minimal case and not on a clean one,
the cross-file rule W2006, the hop count behind W2008, and no false positive on the library."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from itbench_dsl import cli as cli_module
from itbench_dsl import ir
from itbench_dsl.checking import check_files, check_source
from itbench_dsl.codes import CODES
from itbench_dsl.analysis.identity import scenario_digest
from itbench_dsl.analysis.lint import COMPLEXITY_HOPS, LINT_CODES, Linted, lint_files, propagation_hops

REPO = Path(__file__).resolve().parents[2]

CLEAN = '''scenario "shop-cart-scaled-to-zero" {
  domain sre
  complexity low
  description "The cart deployment is scaled to zero, so the shop cannot add items to carts."
  topology {
    namespace "shop"
    deployment "cart" {
      image = "ghcr.io/example/cart:1.0"
      port "grpc" = 7070
      env {
        REDIS_ADDR = "redis:6379"
      }
    }
    deployment "redis" {
      image = "redis:7.2"
      port "redis" = 6379
    }
    service "cart" {
      port "grpc" = 7070
    }
    service "redis" {
      port "redis" = 6379
    }
    deployment "frontend" {
      image = "ghcr.io/example/frontend:1.0"
      port "http" = 8080
    }
    service "frontend" {
      port "http" = 8080
    }
    "frontend" -> "cart" -> "redis"
  }
  fault scaled_to_zero on deployment "cart"
  expect {
    alert KubePodNotReady on deployment "cart"
    propagation deployment "cart" -> pod "cart-*" -> service "cart" -> service "frontend"
    mitigated when {
      deployment "cart" ready within 5m
    }
  }
  solution "Scale cart back up" {
    step "Scale up" run "kubectl -n shop scale deployment/cart --replicas=1"
  }
}
'''

EXTRA_OBJECTS = '''    deployment "legacy" {
      image = "ghcr.io/example/legacy:1.0"
    }
    configmap "unused-settings" {
      data {
        "mode" = "fast"
      }
    }
    "frontend" -> "cart" -> "redis"'''

TWO_ENV_FAULTS = '''  fault modified_env on deployment "cart" {
    name = "REDIS_ADDR"
    value = "redis:1"
  }
  fault modified_env on deployment "cart" {
    name = "REDIS_ADDR"
    value = "redis:2"
  }
'''

# (code, [(old, new), ...]) applied to CLEAN
CASES = {
    "W2002": [('    "frontend" -> "cart" -> "redis"', EXTRA_OBJECTS)],
    "W2003": [('deployment "cart" ready within 5m', 'deployment "redis" ready within 5m'),
              ('    alert KubePodNotReady on deployment "cart"\n', "")],
    "W2004": [(CLEAN[CLEAN.index("  solution"):], "}\n")],
    "W2005": [('  fault scaled_to_zero on deployment "cart"\n', TWO_ENV_FAULTS),
              ("scale deployment/cart --replicas=1", "rollout undo deployment/cart")],
    "W2007": [("The cart deployment is scaled to zero, so the shop cannot add items to carts.", "TODO")],
    "W2008": [("complexity low", "complexity high"),
              ('propagation deployment "cart" -> pod "cart-*" -> service "cart" -> service "frontend"',
               'propagation deployment "cart" -> pod "cart-*" -> service "cart"')],
}


def variant(code: str) -> str:
    text = CLEAN
    for old, new in CASES[code]:
        assert old in text, (code, old)
        text = text.replace(old, new)
    return text


def compiled(text: str, path: str = "input.itb") -> Linted:
    checked = check_source(text.encode("utf-8"), path, lint=False)
    assert not checked.has_errors, [d.message for d in checked.errors()]
    return checked.linted


def lint(*texts: str) -> list:
    return lint_files([compiled(text, f"s{i}.itb") for i, text in enumerate(texts)])


def test_lint_codes_are_registered_warnings_with_pages():
    for code in LINT_CODES:
        assert code in CODES and CODES[code].severity == "warning"
        assert len(CODES[code].page) > 200, code


def test_clean_scenario_has_no_lint_warning():
    assert lint(CLEAN) == []


@pytest.mark.parametrize("code", sorted(CASES))
def test_each_rule_fires_on_its_minimal_case_only(code: str):
    found = lint(variant(code))
    assert found, code
    assert {d.code for d in found} == {code}, [(d.code, d.message) for d in found]
    for d in found:
        assert d.path == "s0.itb" and d.span.end > d.span.start > 0 and d.help  # a real location


def test_w2002_names_each_unused_object_at_its_name():
    found = lint(variant("W2002"))
    text = variant("W2002")
    assert sorted(d.message.split("`")[1] for d in found) == ["legacy", "unused-settings"]
    for d in found:
        name = d.message.split("`")[1]
        line = text.splitlines()[d.span.line - 1]
        assert line[d.span.column - 1:d.span.end_column - 1] == f'"{name}"'


def test_w2002_objects_a_workload_uses_are_used():
    # a configmap mounted by cart, a secret its env reads, an hpa on it: all belong to cart, which is used
    text = CLEAN.replace('''      env {
        REDIS_ADDR = "redis:6379"
      }''', '''      env {
        REDIS_ADDR = "redis:6379"
        PASSWORD = secret_key("cart-secret", "password")
      }
      volume "settings" {
        configmap = "cart-settings"
      }
      mount "settings" = "/etc/cart"''').replace('    "frontend" -> "cart" -> "redis"', '''    configmap "cart-settings" {
      data {
        "mode" = "fast"
      }
    }
    secret "cart-secret" {
      data {
        "password" = "x"
      }
    }
    hpa "cart" {
      workload = "cart"
      max = 3
      cpu = 80%
    }
    "frontend" -> "cart" -> "redis"''')
    assert lint(text) == []


def test_w2003_an_expected_alert_that_must_stop_firing_observes_the_fault():
    # a request alert on redis, which cart calls (so it may fire there, E2035), but which the propagation
    # does not reach: it cannot tell whether cart's fault is repaired
    with_alert = variant("W2003").replace("  expect {\n", '  expect {\n    alert HighRequestLatency on service "redis"\n')
    assert [d.code for d in lint(with_alert)] == ["W2003"]
    text = with_alert.replace('deployment "redis" ready within 5m', 'alert HighRequestLatency not firing')
    assert lint(text) == []
    # an alert predicate on an alert `expect` does not list cannot tell
    text = with_alert.replace('deployment "redis" ready within 5m', 'alert HighRequestErrorRate not firing')
    assert [d.code for d in lint(text)] == ["W2003"]


@pytest.mark.parametrize("target", ['deployment "cart"', 'pod "cart-*"', 'service "cart"', 'service "frontend"'])
def test_w2003_an_alert_where_the_fault_acts_or_propagates_can_tell(target: str):
    # frontend is reached by the propagation cart -> frontend; redis is not
    # a pod-state alert where the fault acts, a request alert where it propagates (E2035 places them)
    alert = "HighRequestErrorRate" if target.startswith("service") else "KubePodNotReady"
    text = variant("W2003").replace("  expect {\n", f"  expect {{\n    alert {alert} on {target}\n")
    assert lint(text) == []


def test_w2003_without_mitigated_when():
    text = CLEAN.replace('''    mitigated when {
      deployment "cart" ready within 5m
    }
''', "")
    assert lint(text) == []  # the alert on cart tells
    (found,) = lint(text.replace('    alert KubePodNotReady on deployment "cart"\n', ""))
    assert found.code == "W2003" and "no `mitigated when` predicate" in found.message


def test_w2004_not_for_ciso():
    path = REPO / "scenarios" / "ciso" / "cis-k8s-5-2-2-privileged-kyverno.itb"
    if not path.is_file():
        pytest.skip("library scenario not present")
    text = path.read_text(encoding="utf-8")
    assert "solution" not in text
    assert [d for d in lint(text) if d.code == "W2004"] == []


def test_w2005_note_points_at_the_first_fault():
    (found,) = lint(variant("W2005"))
    text = variant("W2005").splitlines()
    assert text[found.span.line - 1].lstrip().startswith("fault modified_env")
    (note,) = found.notes
    assert note.span.line < found.span.line and text[note.span.line - 1].lstrip().startswith("fault modified_env")
    # the same fault on another variable is another place: no warning
    other = variant("W2005").replace('''    name = "REDIS_ADDR"
    value = "redis:2"''', '''    name = "LOG_LEVEL"
    value = "debug"''').replace('REDIS_ADDR = "redis:6379"', 'REDIS_ADDR = "redis:6379"\n        LOG_LEVEL = "info"')
    assert lint(other) == []


@pytest.mark.parametrize("description", ["", "   ", "TBD", "todo.", "...", "Placeholder", "FIXME: write this",
                                         "shop cart scaled to zero", "Cart down"])
def test_w2007_placeholders(description: str):
    text = CLEAN.replace("The cart deployment is scaled to zero, so the shop cannot add items to carts.", description)
    assert [d.code for d in lint(text)] == ["W2007"], description


def test_w2008_low_with_three_hops():
    text = (CLEAN.replace('    "frontend" -> "cart" -> "redis"', '''    deployment "web" {
      image = "ghcr.io/example/web:1.0"
    }
    "web" -> "frontend" -> "cart" -> "redis"''')
            .replace('propagation deployment "cart" -> pod "cart-*" -> service "cart" -> service "frontend"',
                     'propagation service "redis" -> service "cart" -> service "frontend" -> deployment "web"'))
    (found,) = lint(text)
    assert found.code == "W2008" and "3 hops" in found.message and "complexity medium" in found.help


def test_propagation_hops_counts_components_not_objects():
    assert propagation_hops(compiled(CLEAN).scenario) == 1  # cart's deployment, pods and service, then frontend
    assert propagation_hops(compiled(variant("W2008")).scenario) == 0
    no_propagation = CLEAN.replace(
        '    propagation deployment "cart" -> pod "cart-*" -> service "cart" -> service "frontend"\n', "")
    assert propagation_hops(compiled(no_propagation).scenario) is None
    assert lint(no_propagation.replace("complexity low", "complexity high")) == []  # not judged


def test_propagation_hops_survives_a_cycle():
    text = CLEAN.replace(
        'propagation deployment "cart" -> pod "cart-*" -> service "cart" -> service "frontend"',
        'propagation service "cart" -> service "frontend" -> service "cart" -> service "redis" -> service "cart"')
    assert propagation_hops(compiled(text).scenario) == 2  # frontend -> cart -> redis, each component once


def test_complexity_bounds_cover_every_hop_count():
    for hops in range(0, 10):
        assert any(lo <= hops and (hi is None or hops <= hi) for lo, hi in COMPLEXITY_HOPS.values())


# ---- W2006 and the canonical hash -----------------------------------------------------------------------

RENAMED = (CLEAN.replace('scenario "shop-cart-scaled-to-zero"', 'scenario "shop-cart-down"')
           .replace("The cart deployment is scaled to zero, so the shop cannot add items to carts.",
                    "Nobody can add items to a cart: its deployment has no replica left.")
           .replace("  domain sre\n", '  domain sre\n  tags ["Deployment"]\n  metadata {\n    itbench_id = 999\n  }\n'))


def test_w2006_identical_scenarios_across_files():
    found = lint(CLEAN, RENAMED)
    assert [d.code for d in found] == ["W2006"]
    (d,) = found
    assert d.path == "s1.itb" and "`shop-cart-scaled-to-zero` (s0.itb)" in d.message and d.notes
    assert lint(CLEAN) == [] and lint(RENAMED) == []  # it needs both files


def test_w2006_not_for_a_scenario_that_differs_in_meaning():
    other = RENAMED.replace('deployment "cart" ready within 5m', 'deployment "cart" ready within 4m')
    assert lint(CLEAN, other) == []


def test_check_reports_w2006_and_not_w2001_for_identical_files(tmp_path: Path):
    (tmp_path / "a.itb").write_text(CLEAN, encoding="utf-8")
    (tmp_path / "b.itb").write_text(RENAMED, encoding="utf-8")
    (tmp_path / "c.itb").write_text(CLEAN.replace("scenario \"shop-cart-scaled-to-zero\"", "scenario \"other\"")
                                    .replace("within 5m", "within 3m"), encoding="utf-8")
    linted = [check_source((tmp_path / name).read_bytes(), name, lint=False).linted for name in ("a.itb", "b.itb", "c.itb")]
    codes = sorted((d.path, d.code) for d in lint_files(linted))
    assert codes == [("b.itb", "W2006")]
    result = invoke_check(tmp_path, "--format", "concise", "a.itb", "b.itb", "c.itb")
    found = sorted((line.split(":", 1)[0], line.split("[", 1)[1].split("]", 1)[0]) for line in result.stdout.splitlines())
    assert found == [("b.itb", "W2006"), ("c.itb", "W2001")], result.stdout  # b duplicates a: W2006 only
    assert result.exit_code == 0
    assert invoke_check(tmp_path, "--strict", "a.itb", "b.itb").exit_code == 1


def invoke_check(cwd: Path, *args: str):
    old = os.getcwd()
    os.chdir(cwd)
    try:
        return CliRunner().invoke(cli_module.cli, ["check", *args], catch_exceptions=False)
    finally:
        os.chdir(old)


@settings(max_examples=20, deadline=None)
@given(name=st.from_regex(r"[a-z][a-z0-9-]{0,20}[a-z0-9]", fullmatch=True),
       description=st.text(alphabet=st.characters(min_codepoint=32, max_codepoint=0x2FFF, blacklist_characters='"\\'),
                           min_size=1, max_size=40))
def test_scenario_digest_ignores_name_and_description_only(name: str, description: str):
    base = compiled(CLEAN).scenario
    renamed = ir.Scenario(**{**base.__dict__, "name": name, "description": description, "tags": ["x"],
                             "metadata": {"itbench_id": 1}, "params": [ir.Param("n", [1, 2], 1)]})
    assert scenario_digest(renamed) == scenario_digest(base)
    changed = ir.Scenario(**{**base.__dict__, "complexity": "high" if base.complexity != "high" else "low"})
    assert scenario_digest(changed) != scenario_digest(base)


# ---- the scenario library --------------------------------------------------------------------------------


def test_library_has_no_lint_warning():
    """The rules were tuned on the library: a warning here is a false positive or a scenario to fix."""
    folder = REPO / "scenarios"
    files = sorted(folder.rglob("*.itb"))
    if not files:
        pytest.skip("no scenario library")
    diags, checks = check_files([(str(path.relative_to(REPO)), path.read_bytes()) for path in files])
    # a file being edited may not compile: lint only sees the others, as in `itbench check`
    assert sum(one.scenario is not None for one in checks) >= len(files) // 2
    found = [d for d in diags.items if d.severity == "warning"]
    assert found == [], [f"{d.path}:{d.span.line}: {d.code} {d.message}" for d in found]


def test_longest_path_on_large_graphs():
    from itbench_dsl.analysis.lint import _longest_path

    chain = {f"n{i:05}": {f"n{i + 1:05}"} for i in range(5000)} | {"n05000": set()}
    assert _longest_path(chain) == 5000  # no recursion limit
    ring = {f"r{i:02}": {f"r{(i + 1) % 50:02}"} for i in range(50)}
    assert _longest_path(ring) == 49  # a cycle is walked once
    small = {"a": {"b"}, "b": {"a", "c"}, "c": {"b"}}
    assert _longest_path(small) == 2


def test_w2002_spans_point_at_the_declarations():
    text = variant("W2002").replace('    deployment "legacy" {\n      image = "ghcr.io/example/legacy:1.0"\n    }\n',
                                    '    deployment "legacy" { image = "ghcr.io/example/legacy:1.0" } configmap "x" {}\n')
    found = lint_files([compiled(text)])
    assert len(found) >= 2
    for d in found:
        name = d.message.split("`")[1]
        assert text.splitlines()[d.span.line - 1][d.span.column - 1:d.span.end_column - 1] == f'"{name}"'


def test_fault_spans_come_from_the_source_map():
    """W2005 points at each fault statement as the checker recorded it, faults in groups included."""
    text = variant("W2005").replace(TWO_ENV_FAULTS, "  group {\n" + TWO_ENV_FAULTS.replace("  fault", "    fault")
                                    + "  }\n")
    (d,) = [d for d in lint_files([compiled(text)]) if d.code == "W2005"]
    lines = text.splitlines()
    assert lines[d.span.line - 1].strip().startswith("fault modified_env") and d.span.line > d.notes[0].span.line
    assert lines[d.notes[0].span.line - 1].strip().startswith("fault modified_env")


@pytest.mark.parametrize("kind, ready", [("Deployment", True), ("StatefulSet", True), ("Pod", True),
                                         ("ConfigMap", False), ("Secret", False), ("Service", False),
                                         ("Namespace", False)])
def test_w2003_suggests_ready_only_where_readiness_exists(kind: str, ready: bool):
    """`ready` on a ConfigMap can never pass (E4004): the help suggests a field predicate there instead."""
    from itbench_dsl import ir
    from itbench_dsl.analysis.lint import _observe_help

    target = ir.ObjectRef("v1", kind, "ns", "x")
    text = _observe_help(target)
    assert ('"x" ready`' in text) is ready
    assert ("PATH == VALUE" in text) is not ready
    assert f'`{kind.lower()} "x"' in text


def test_w2002_a_service_account_a_binding_grants_rights_to_is_used():
    rbac = '''    serviceaccount "reader"
    role "pod-reader" {
      rule {
        api_groups = [""]
        resources = ["pods"]
        verbs = ["get", "list"]
      }
    }
    rolebinding "read-pods" {
      role = "pod-reader"
      subjects = [service_account("reader")]
    }
    "frontend" -> "cart" -> "redis"'''
    text = CLEAN.replace('    "frontend" -> "cart" -> "redis"', rbac)
    assert not [d for d in lint(text) if "reader" in d.message]
    # without the binding the account is unused again
    alone = CLEAN.replace('    "frontend" -> "cart" -> "redis"', '    serviceaccount "reader"\n    "frontend" -> "cart" -> "redis"')
    assert [d.code for d in lint(alone) if "reader" in d.message] == ["W2002"]


# ---- W2012: grading the author cannot see --------------------------------------------------------------

FINOPS_LIMIT = (REPO / "tests" / "cases" / "errors" / "W2012-predicate-against-optimum" / "input.itb").read_text()
PREDICATE = 'deployment "ad" resources.limits.memory <= 600Mi'


def w2011(predicates: str) -> list:
    return [d for d in lint(FINOPS_LIMIT.replace(PREDICATE, predicates)) if d.code == "W2012"]


@pytest.mark.parametrize("predicates,says", [
    (PREDICATE, ["accepts 600Mi"]),                                        # the issue's `<= 64Mi` against 20Mi
    ('deployment "ad" resources.limits.memory == 300Mi', ["refuses 270Mi"]),  # the proximity passes 270Mi-330Mi
    ('deployment "ad" resources.limits.memory <= 330Mi', ["accepts 0", ]),
    ('deployment "ad" resources.limits.memory >= 100Mi\n      deployment "ad" resources.limits.memory <= 400Mi',
     ["accepts 100Mi"]),
])
def test_w2011_a_predicate_against_the_optimums_pass_bar(predicates, says):
    found = w2011(predicates)
    assert len(found) == 1 and all(s in found[0].message for s in says), [d.message for d in found]
    assert "from 270Mi to 330Mi" in found[0].message and found[0].notes


def test_w2011_the_band_the_optimum_passes_is_no_warning():
    band = 'deployment "ad" resources.limits.memory >= 270Mi\n      deployment "ad" resources.limits.memory <= 330Mi'
    assert w2011(band) == []
    assert w2011('deployment "ad" ready') == []


def test_w2011_a_field_the_fault_changed_beside_a_named_one():
    """The fault raises OpenSearch's cpu request with its memory one; the optimum names the memory request only:
    the cpu request is graded at exactly its healthy value all the same. Naming it (a predicate governs it)
    quiets the warning. A limit the fault raised with the requests is no part of it (any limit is right): the
    cart's scenario names none and gets no warning."""
    fixture = (REPO / "tests" / "cases" / "errors" / "W2012-hidden-field-check" / "input.itb").read_text()
    found = [d for d in lint(fixture) if d.code == "W2012"]
    assert len(found) == 1 and "resources.requests.cpu" in found[0].message and "1000m" in found[0].message
    named = fixture.replace('      statefulset "opensearch" ready\n', '      statefulset "opensearch" ready\n'
                            '      statefulset "opensearch" resources.requests.cpu == 1000m\n')
    assert named != fixture and not [d for d in lint(named) if d.code == "W2012"]
    library = (REPO / "scenarios" / "finops" / "otel-cart-overprovisioned-requests.itb").read_text()
    assert "limits" not in library and not [d for d in lint(library) if d.code == "W2012"]


REPLICAS_FLOOR = (REPO / "tests" / "cases" / "errors" / "W2012-replicas-below-safeguards" / "input.itb").read_text()


@pytest.mark.parametrize("test,warned", [
    (">= 1", True), ("> 0", True), ("!= 0", True), ("!= 5", True), (">= 0", True),
    (">= 2", False), ("> 1", False), ("!= 0\n      deployment \"frontend\" spec.replicas != 1", False),
    ("<= 3", False),  # a cap says nothing of a floor
])
def test_w2012_a_replicas_floor_judged_by_the_counts_it_accepts(test, warned):
    """`!= 0` and `> 0` accept the same counts: a predicate is judged by them, not by its operator."""
    text = REPLICAS_FLOOR.replace('deployment "frontend" spec.replicas >= 1', f'deployment "frontend" spec.replicas {test}')
    found = [d for d in lint(text) if d.code == "W2012"]
    assert bool(found) == warned, [d.message for d in found]
    if warned:
        assert "replica" in found[0].message and "below the 2 replicas" in found[0].message


def test_w2013_two_root_cause_groups_of_one_object():
    """Two faults' root-cause groups pointed at one Schedule: naming it is credited with both, and the second
    fault's Schedule is never graded. Each group at its own fault's Schedule quiets it."""
    library = (REPO / "scenarios" / "sre" / "otel-valkey-cart-stress-and-network-delay.itb").read_text()
    right = 'group "io-chaos-schedule-1" schedule "accounting-standard"'
    assert right in library and not [d for d in lint(library) if d.code == "W2013"]
    found = [d for d in lint(library.replace(right, 'group "io-chaos-schedule-1" schedule "valkey-cart-stress-chaos"'))
             if d.code == "W2013"]
    assert len(found) == 1 and "stress-chaos-schedule-1" in found[0].message and "io-chaos-schedule-1" in found[0].message


# ---- W2014 install options the native bundle does not install --------------------------------------------

_HPA_OPTION = '''  use app "opentelemetry-demo" {
    options { autoscaling { kubernetes { hpa = true } } }
  }
'''


def _w2014(text: str) -> list:
    return [d for d in lint(text) if d.code == "W2014"]


def test_an_install_option_the_native_bundle_lacks_is_warned_where_it_is_written():
    source = (REPO / "scenarios" / "sre" / "otel-checkout-quota-load-surge.itb").read_text()
    source = source.replace('lint_allow = ["W2008", "W2014"]', 'lint_allow = ["W2008"]')
    found = _w2014(source)
    assert len(found) == 1 and "autoscaling.kubernetes.hpa" in found[0].message
    assert found[0].span.line == source.splitlines().index("    options {") + 1


def test_hpa_honoured_by_an_autoscaler_in_the_topology_is_no_warning():
    source = (REPO / "scenarios" / "finops" / "otel-three-hpas-misconfigured.itb").read_text()
    source = source.replace('  use app "opentelemetry-demo"\n', _HPA_OPTION, 1)
    assert "hpa = true" in source and not _w2014(source)
