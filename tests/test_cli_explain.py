"""`itbench explain` and `itbench faults NAME`: one entry of the code list or of the fault library."""

from __future__ import annotations

import pytest

from itbench_dsl.faults import FAULTS
from test_cli import invoke


def test_explain_faults_lists_the_library():
    result = invoke("explain", "faults")
    assert result.exit_code == 0
    listed = {line.split()[0] for line in result.stdout.splitlines() if line and not line.startswith(" ")}
    assert listed == set(FAULTS)


@pytest.mark.parametrize("name", sorted(FAULTS)[:: max(1, len(FAULTS) // 8)])
def test_one_fault_shows_its_arguments_targets_and_alerts(name: str):
    kind = FAULTS[name]
    result = invoke("faults", name)
    assert result.exit_code == 0
    page = result.stdout
    assert page.startswith(f"# `{name}`") and "## Arguments" in page and "## Alerts it raises" in page
    assert all(f"`{t}`" in page for t in kind.targets)
    assert all(f"| `{a.name}` |" in page for a in kind.args)
    assert invoke("explain", name).stdout == page


def test_an_unknown_fault_names_the_closest():
    name = sorted(FAULTS)[0]
    result = invoke("faults", name[:-1] + "x")
    assert result.exit_code == 2 and f"did you mean `{name}`?" in result.stderr
    assert "Traceback" not in result.stderr


def test_codes_stay_explained_in_either_case():
    assert invoke("explain", "e2003").stdout == invoke("explain", "E2003").stdout != ""
    assert invoke("explain", "codes").stdout == invoke("explain").stdout


def test_an_unknown_topic_is_a_usage_error():
    result = invoke("explain", "nothing-like-it")
    assert result.exit_code == 2 and "neither a diagnostic code nor a fault" in result.stderr
