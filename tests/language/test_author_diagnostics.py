"""The diagnostics an author meets in the first hour (issue 23): each says what is wrong where it is, with
help that fits, and no second error follows from the first. The renderings are fixtures under
tests/cases/errors; these tests pin the facts a rendering change must keep."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from itbench_dsl import cli as cli_module
from itbench_dsl.checking import check_source

ERRORS = Path(__file__).resolve().parents[1] / "cases/errors"


def check(text: str) -> list:
    return check_source(text.encode(), "input.itb").diagnostics


def fixture(name: str) -> list:
    return check((ERRORS / name / "input.itb").read_text())


def test_a_trailing_comma_is_reported_at_the_comma():
    found = fixture("E1002-trailing-comma-ends-line")
    assert [(d.code, d.span.line, d.label) for d in found] == [("E1002", 6, "trailing comma")]
    assert "`topology` on line 7" in found[0].help


def test_a_yaml_colon_gets_help_about_the_statement_and_the_rest_is_read():
    found = fixture("E1005-colon-after-keyword")
    assert [d.code for d in found] == ["E1005"]
    assert "write `domain ...`" in found[0].help and "double quotes" not in found[0].help


def test_a_patch_path_error_gets_help_about_patches_not_predicates():
    found = fixture("E1002-patch-path-step")
    assert [d.code for d in found] == ["E1002"]
    assert found[0].help.startswith("a patch is") and "operator" not in found[0].label


def test_an_unknown_application_is_the_only_error():
    assert [d.code for d in fixture("E2001-unknown-app-no-cascade")] == ["E2001"]


def test_a_pod_pattern_matching_nothing_names_the_workloads_that_exist():
    text = (ERRORS / "E2001-unknown-app-no-cascade" / "input.itb").read_text()
    text = text.replace('use app "opentelemetry-dem"', '''topology {
    namespace "shop"
    deployment "cart" { image = "ghcr.io/example/cart:1.0" }
    deployment "web" { image = "ghcr.io/example/web:1.0" }
  }''').replace('pod "cart"', 'pod "zzz-*"')
    found = [d for d in check(text) if d.code == "E2003"]
    assert len(found) == 1 and "`cart`, `web`" in found[0].help and 'pod "cart-*"' not in found[0].help


def test_a_misspelt_resource_name_is_caught_with_the_name_meant():
    found = fixture("E2006-misspelt-resource-name")
    assert [d.code for d in found] == ["E2006"]
    assert "`memroy` is not a resource name" in found[0].message and found[0].help == "did you mean `memory`?"


def test_an_extended_resource_name_is_not_a_misspelling():
    text = (ERRORS / "E2006-misspelt-resource-name" / "input.itb").read_text()
    text = text.replace('limits.memroy == "256Mi"', 'limits["example.com/gpu"] not exists')
    assert not [d for d in check(text) if d.code == "E2006"]


def test_e4004_states_each_reason_once():
    text = (ERRORS / "E2006-misspelt-resource-name" / "input.itb").read_text()
    text = text.replace('limits.memroy == "256Mi"', 'limits.memory == "512Mi"')
    found = [d for d in check(text) if d.code == "E4004"]
    assert len(found) == 1
    assert found[0].message.count("it failed it") == 1 and "the healthy state" in found[0].message


def test_explain_e4004_describes_a_healthy_state_that_fails():
    result = CliRunner().invoke(cli_module.cli, ["explain", "E4004"])
    assert result.exit_code == 0
    assert "healthy state" in result.output and "map key" in result.output


def test_a_container_setting_on_the_pod_security_context_says_where_it_goes():
    found = fixture("E2006-container-setting-on-pod")
    assert [d.code for d in found] == ["E2006"]
    assert "`container \"NAME\"" in found[0].help


def test_a_refused_create_is_not_also_a_kind_that_changes_nothing():
    assert [d.code for d in fixture("E2004-refused-create-alone")] == ["E2004"]


def test_e2012_help_proposes_no_dependency():
    found = fixture("E2012-propagation-off-topology")
    e2012 = [d for d in found if d.code == "E2012"]
    assert e2012 and all("->" not in d.help and "joined to" in d.help for d in e2012)


SCOPE = '''scenario "shop-cart" {
  domain sre
  complexity low
  description "The cart deployment is scaled to zero."
  topology {
    namespace "shop"
    deployment "cart" {
      image = "ghcr.io/example/cart:1.0"
    }
  }
  fault scaled_to_zero on deployment "cart"
  expect {
    root_cause deployment "cart"
    mitigated when {
      PREDICATE
    }
  }
}
'''


def test_w2003_counts_a_scope_that_covers_the_faults_workload():
    covered = check(SCOPE.replace("PREDICATE", 'all pods in namespace "shop" ready'))
    assert not [d for d in covered if d.code == "W2003"]
    # a scope over labels the workload does not carry covers something else: still unobserved
    other = SCOPE.replace('''    deployment "cart" {''', '''    deployment "web" {
      image = "ghcr.io/example/web:1.0"
      labels { tier = "front" }
    }
    deployment "cart" {''').replace("PREDICATE", 'all pods { tier = "front" } in namespace "shop" ready')
    assert [d.code for d in check(other) if d.code == "W2003"] == ["W2003"]


def test_a_claims_phase_set_by_its_controller_holds_on_the_healthy_state():
    text = SCOPE.replace('''    deployment "cart" {
      image = "ghcr.io/example/cart:1.0"
    }''', '''    persistentvolumeclaim "data" {
      storage = 1Gi
    }
    deployment "cart" {
      image = "ghcr.io/example/cart:1.0"
      volume "data" { claim = "data" }
      mount "data" = "/data"
    }''').replace("PREDICATE", '''deployment "cart" ready
      persistentvolumeclaim "data" status.phase == "Bound"''')
    assert not [d for d in check(text) if d.severity == "error"]
    # a claim nothing mounts stays Pending: `Bound` does not hold on the healthy state
    unmounted = text.replace('      volume "data" { claim = "data" }\n      mount "data" = "/data"\n', "")
    assert [d.code for d in check(unmounted) if d.severity == "error"] == ["E4004"]
