"""The scenarios that carry an ITBench id compile to ITBench's own scenario.yaml and ground truths.

The reference files are ITBench's compiled scenarios (shared/reference/itbench/scenarios/scenario_N/).
The comparison is semantic: both YAML files are loaded and compared (itbench_dsl/importer/compat.py):
scenario.yaml and groundtruth.yaml as wholes, groundtruth_v1.yaml by its causal graph (groups, aliases,
propagations, alerts). The differences docs/itbench-compat.md lists, each with its reason (mostly ITBench
defects the port corrects), are allowed; any other fails.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from itbench_dsl.compiler import compile_source
from itbench_dsl.diagnostics import Diagnostics, render_human
from itbench_dsl.parser import parse_bytes
from itbench_dsl.reader import entries_as_data
from itbench_dsl import ast
from itbench_dsl.importer.compat import created_objects, differences, graph_differences, renamed_objects

REPO = Path(__file__).resolve().parents[2]
REFERENCE = Path(__file__).resolve().parents[3] / "shared" / "reference"
COMPAT = REPO / "docs" / "itbench-compat.md"
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


FILES = ("scenario.yaml", "groundtruth.yaml", "groundtruth_v1.yaml")
SCENARIOS = {p: itbench_id(p) for p in sorted((REPO / "scenarios").rglob("*.itb"))}
# SRE and FinOps ports carry a number; CISO ports carry ITBench's folder name (tests/ciso/test_itbench_ciso.py)
WITH_ID = [pytest.param(p, i, id=f"{p.stem}-scenario_{i}") for p, i in SCENARIOS.items() if isinstance(i, int)]


def test_the_expected_scenarios_carry_ids():
    ported = {i for i in SCENARIOS.values() if i is not None}
    assert {1, 16, 17, 19, 21, 23, 25, 26, 29, 31, 33, 34, 35, 36, 38, 39, 40, 43, 44, 45, 46, 47, 48, 49, 50, 51, 53, 58,
            59, 61, 80, 83, 105} <= ported
    if ITBENCH_SCENARIOS.is_dir():  # every reference scenario but those the compatibility report says are not ported
        reference = {int(p.name.split("_", 1)[1]) for p in ITBENCH_SCENARIOS.glob("scenario_*")}
        not_ported = {int(n) for n in re.findall(r"### scenario (\d+): not ported", COMPAT.read_text("utf-8"))}
        assert reference - not_ported <= ported
        assert len(not_ported) <= 2


def documented(number: int) -> set[str]:
    """The differences docs/itbench-compat.md lists for ITBench scenario `number`."""
    text = COMPAT.read_text("utf-8")
    match = re.search(rf"^### scenario {number}: .*?$(.*?)(?=^### |\Z)", text, re.M | re.S)
    return {line[2:] for line in match.group(1).splitlines() if line.startswith("- ")} if match else set()


@pytest.mark.parametrize("path,number", WITH_ID)
@pytest.mark.parametrize("file_name", ["scenario.yaml", "groundtruth.yaml", "groundtruth_v1.yaml"])
def test_matches_itbench_reference(path: Path, number: int, file_name: str):
    reference = ITBENCH_SCENARIOS / f"scenario_{number}" / file_name
    if not REFERENCE.is_dir():
        pytest.skip(f"the shared reference folder is absent ({REFERENCE})")
    if not reference.is_file():
        pytest.skip(f"ITBench has no {reference.relative_to(REFERENCE)}")
    diags = Diagnostics()
    result = compile_source(path.read_bytes(), str(path.relative_to(REPO)), diags)
    assert not diags.errors(), render_human(diags, color=False)
    ours = yaml.safe_load(result.files[f"itbench/{file_name}"].decode("utf-8"))
    theirs = yaml.safe_load(reference.read_text("utf-8"))
    # the created objects ITBench names otherwise, paired over all of the scenario's files
    folder = ITBENCH_SCENARIOS / f"scenario_{number}"
    renamed = renamed_objects(created_objects(result.scenario),
                              [yaml.safe_load(result.files[f"itbench/{f}"].decode("utf-8")) for f in FILES],
                              [yaml.safe_load((folder / f).read_text("utf-8")) for f in FILES if (folder / f).is_file()])
    found = differences(file_name, ours, theirs, renamed)
    if file_name == "groundtruth_v1.yaml":
        found = graph_differences(found)  # its derived parts (fault entries, envelope) are described once in the report
    new = [d for d in found if d not in documented(number)]
    assert not new, (
        f"itbench/{file_name} of {path.name} differs from ITBench's scenario_{number} in ways docs/itbench-compat.md "
        "does not list:\n" + "\n".join(new))


def test_a_ported_scenario_reproduces_the_v1_graph_exactly():
    """Scenario 2's ground truth has no defect: its groups, propagations and alerts come back as they are."""
    path = next((p for p, i in SCENARIOS.items() if i == 2), None)
    reference = ITBENCH_SCENARIOS / "scenario_2" / "groundtruth_v1.yaml"
    if path is None or not reference.is_file():
        pytest.skip("no port of scenario 2, or no reference")
    result = compile_source(path.read_bytes(), path.name, Diagnostics())
    ours = yaml.safe_load(result.files["itbench/groundtruth_v1.yaml"].decode("utf-8"))
    theirs = yaml.safe_load(reference.read_text("utf-8"))
    assert ours["spec"]["groups"] == theirs["groups"]
    assert ours["spec"]["propagations"] == theirs["propagations"]
    assert ours["spec"]["alerts"] == theirs["alerts"]
