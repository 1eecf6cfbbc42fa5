"""The scenarios that carry an ITBench id compile to ITBench's own scenario.yaml and groundtruth.yaml.

The reference files are ITBench's compiled scenarios (shared/reference/itbench/scenarios/scenario_N/).
The comparison is semantic: both YAML files are loaded and compared with ==.
groundtruth_v1.yaml is hand-written upstream (and names things ITBench's injection does not
create), so it is not compared here.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from itbench_dsl.compiler import compile_source
from itbench_dsl.diagnostics import Diagnostics, render_human
from itbench_dsl.parser import parse_bytes
from itbench_dsl.reader import entries_as_data
from itbench_dsl import ast

REPO = Path(__file__).resolve().parents[1]
REFERENCE = Path(__file__).resolve().parents[2] / "shared" / "reference"
ITBENCH_SCENARIOS = REFERENCE / "itbench" / "scenarios"


def itbench_id(path: Path):
    """`metadata { itbench_id = N }` of a scenario file, or None."""
    document = parse_bytes(path.read_bytes(), str(path), Diagnostics())
    if not isinstance(document, ast.Scenario):
        return None
    for stmt in document.statements:
        if isinstance(stmt, ast.Metadata):
            return entries_as_data(stmt.entries).get("itbench_id")
    return None


SCENARIOS = {p: itbench_id(p) for p in sorted((REPO / "scenarios").rglob("*.itb"))}
WITH_ID = [pytest.param(p, i, id=f"{p.stem}-scenario_{i}") for p, i in SCENARIOS.items() if i is not None]


def test_the_expected_scenarios_carry_ids():
    assert {1, 16, 17, 19, 21, 23, 25, 26, 29, 31, 33, 34, 35, 36, 38, 39, 40, 43, 44, 45, 46, 47, 48, 49, 50, 51, 53, 58, 59, 61, 80, 83, 105} <= {i for i in SCENARIOS.values() if i is not None}


@pytest.mark.parametrize("path,number", WITH_ID)
@pytest.mark.parametrize("file_name", ["scenario.yaml", "groundtruth.yaml"])
def test_matches_itbench_reference(path: Path, number: int, file_name: str):
    reference = ITBENCH_SCENARIOS / f"scenario_{number}" / file_name
    if not REFERENCE.is_dir():
        pytest.skip(f"the shared reference folder is absent ({REFERENCE})")
    assert reference.is_file(), f"ITBench has no {reference.relative_to(REFERENCE)}"
    diags = Diagnostics()
    result = compile_source(path.read_bytes(), str(path.relative_to(REPO)), diags)
    assert not diags.errors(), render_human(diags, color=False)
    ours = yaml.safe_load(result.files[f"itbench/{file_name}"].decode("utf-8"))
    theirs = yaml.safe_load(reference.read_text("utf-8"))
    assert ours == theirs, (
        f"itbench/{file_name} of {path.name} differs from ITBench's scenario_{number}:\n"
        f"--- ours\n{yaml.safe_dump(ours, sort_keys=True)}--- ITBench\n{yaml.safe_dump(theirs, sort_keys=True)}"
    )
