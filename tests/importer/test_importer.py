"""`itbench import`: ITBench scenarios to .itb, against ITBench's reference files and synthetic cases.

The reference tests read ../shared/reference (skipped when it is absent); the synthetic cases in
tests/cases/import/ cover both scenario.yaml shapes and every import diagnostic (E5001-E5005,
W5001-W5005). docs/itbench-compat.md is the allow-list: a difference it does not list fails.
"""

from __future__ import annotations

import functools
import re
import shutil
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from itbench_dsl.cli import cli
from itbench_dsl.compiler import compile_source
from itbench_dsl.diagnostics import Diagnostics, render_human
from itbench_dsl.importer import import_path
from itbench_dsl.importer.compat import created_objects, differences, renamed_objects
from itbench_dsl.parser import parse_text
from itbench_dsl.printer import print_document

REPO = Path(__file__).resolve().parents[2]
CASES = REPO / "tests" / "cases" / "import"
REFERENCE = REPO.parent / "shared" / "reference" / "itbench"
SCENARIOS = REFERENCE / "scenarios"
COMPAT = REPO / "docs" / "itbench-compat.md"
FILES = ("scenario.yaml", "groundtruth.yaml", "groundtruth_v1.yaml")

needs_reference = pytest.mark.skipif(not SCENARIOS.is_dir(), reason=f"the shared reference folder is absent ({REFERENCE})")
REFERENCE_IDS = sorted(int(p.name.split("_", 1)[1]) for p in SCENARIOS.glob("scenario_*")) if SCENARIOS.is_dir() else []


def documented() -> dict[int, dict]:
    """Per ITBench id, the compatibility report's differences and whether it says the scenario is not ported."""
    out: dict[int, dict] = {}
    current = None
    for line in COMPAT.read_text("utf-8").splitlines():
        match = re.match(r"### scenario (\d+): (.*)", line)
        if match:
            current = out.setdefault(int(match.group(1)), {"differences": set(), "not_ported": "not ported" in match.group(2)})
        elif current is not None and line.startswith("- ") and line[2:].split(":", 1)[0] in FILES:
            current["differences"].add(line[2:])
        elif current is not None and line.startswith("The import itself fails"):
            current["not_ported"] = True  # ported by hand
    return out


def imported(path: Path) -> tuple[str | None, Diagnostics]:
    diags = Diagnostics()
    return import_path(path, diags), diags


@functools.lru_cache(maxsize=None)
def imported_reference(number: int) -> tuple[str | None, Diagnostics]:
    return imported(SCENARIOS / f"scenario_{number}")


# a sample of shapes for the (slower) fixed-point test: flags, chaos, Istio, FinOps, no v1, corrected defects,
# a cluster component (55)
FIXED_POINT_SAMPLE = (1, 2, 10, 14, 17, 19, 25, 38, 47, 48, 50, 51, 52, 55, 61, 105)


def compiled(text: str, name: str = "imported.itb"):
    diags = Diagnostics()
    result = compile_source(text.encode("utf-8"), name, diags)
    assert not diags.errors(), render_human(diags)
    return result


def compiled_files(text: str, name: str = "imported.itb") -> dict[str, object]:
    result = compiled(text, name)
    return {f: yaml.safe_load(result.files[f"itbench/{f}"].decode("utf-8")) for f in FILES}


# ---- the reference scenarios ------------------------------------------------------------------------------


@needs_reference
@pytest.mark.parametrize("number", REFERENCE_IDS)
def test_reference_import_matches_itbench_except_documented(number: int):
    text, diags = imported_reference(number)
    doc = documented().get(number, {"differences": set(), "not_ported": False})
    if text is None:
        assert diags.errors(), "a failed import reports why"
        assert all(d.path and d.span.line >= 1 for d in diags.errors())
        assert doc["not_ported"], (
            f"scenario {number} does not import, and docs/itbench-compat.md does not say so:\n{render_human(diags)}")
        return
    result = compiled(text)
    ours = {f: yaml.safe_load(result.files[f"itbench/{f}"].decode("utf-8")) for f in FILES}
    reference = {f: yaml.safe_load((SCENARIOS / f"scenario_{number}" / f).read_text("utf-8"))
                 for f in FILES if (SCENARIOS / f"scenario_{number}" / f).is_file()}
    renamed = renamed_objects(created_objects(result.scenario), list(ours.values()), list(reference.values()))
    new = []
    for file_name, theirs in reference.items():
        new += [d for d in differences(file_name, ours[file_name], theirs, renamed) if d not in doc["differences"]]
    # a difference the import itself reports (W5005: the port's file differs at a field) is documented by it, as
    # groundtruth.yaml's alerts are where ITBench lists library alerts the port ships no rule for
    reported = {f"{m.group(1)}: `{m.group(2)}` differs" for d in diags.items if d.code == "W5005"
                for m in [re.search(r"the port's (\S+) differs from ITBench's at (\S+)", d.message)] if m}
    new = [d for d in new if d not in reported]
    assert not new, f"scenario {number}: differences docs/itbench-compat.md does not list:\n" + "\n".join(new)


@needs_reference
@pytest.mark.parametrize("number", REFERENCE_IDS)
def test_import_is_formatted(number: int):
    text, _ = imported_reference(number)
    if text is None:
        pytest.skip("does not import (listed in docs/itbench-compat.md)")
    document = parse_text(text, "imported.itb", Diagnostics())
    assert print_document(document, text) == text, "the import is not in `itbench fmt`'s canonical form"


@needs_reference
@pytest.mark.parametrize("number", [n for n in FIXED_POINT_SAMPLE if n in REFERENCE_IDS])
def test_import_of_compiled_import_is_a_fixed_point(number: int, tmp_path: Path):
    first, _ = imported_reference(number)
    if first is None:
        pytest.skip("does not import (listed in docs/itbench-compat.md)")
    texts = [first]
    for round_ in range(2):  # our compiled files, imported again, give the same scenario
        folder = tmp_path / f"round{round_}" / "scenarios" / f"scenario_{number}"
        folder.mkdir(parents=True)
        for file_name, data in compiled_files(texts[-1]).items():
            (folder / file_name).write_text(yaml.safe_dump(data, sort_keys=True), "utf-8")
        again, diags = imported(folder)
        assert again is not None, render_human(diags)
        texts.append(again)
    assert texts[1] == texts[2], "import of the compiled import is not a fixed point"

    def graph(text: str) -> list[str]:  # an alias of one group joins nothing: derived ones are left aside
        lines = re.findall(r"^    (?:group|root_cause|alert|propagation|alias) .*$", text, re.M)
        return [line for line in lines if not (line.startswith("    alias ") and "," not in line)]

    if "  expect {" in texts[0]:  # (without a v1 ground truth, the compiled one is derived: the next import has it)
        assert graph(texts[0]) == graph(texts[1]), "the causal graph changed through compile and import"


@needs_reference
@pytest.mark.parametrize("number", [n for n in (1, 16, 17, 38) if n in REFERENCE_IDS])
def test_index_and_folder_import_alike(number: int):
    from_index, _ = imported(REFERENCE / "library" / "scenarios" / f"{number}.json")
    from_folder, _ = imported_reference(number)
    assert from_index == from_folder


def test_compat_report_is_current():
    if not SCENARIOS.is_dir():
        pytest.skip("the shared reference folder is absent")
    import subprocess
    import sys

    proc = subprocess.run([sys.executable, str(REPO / "tools" / "itbench_compat.py"), "--check"], capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr


# ---- synthetic cases: both scenario.yaml shapes, every diagnostic --------------------------------------------


def test_both_scenario_yaml_shapes_import_alike():
    current, d1 = imported(CASES / "map-variant")
    older, d2 = imported(CASES / "list-variant")
    assert current is not None and older is not None, render_human(d1) + render_human(d2)
    assert current == older
    assert not d1.items and not d2.items
    ours = compiled_files(current)["scenario.yaml"]
    theirs = yaml.safe_load((CASES / "map-variant" / "scenario.yaml").read_text("utf-8"))
    assert ours == theirs


def test_defects_are_located_warnings_and_corrected():
    text, diags = imported(CASES / "defects")
    assert text is not None, render_human(diags)
    codes = {d.code for d in diags.items}
    assert {"W5001", "W5002", "W5003", "W5004", "W5005"} <= codes
    for d in diags.items:
        assert d.path.endswith((".yaml", ".json")) and d.span.line > 1, (d.code, d.path, d.span)
    assert 'alert HighRequestErrorRate on group "ad-service-1"' in text  # `ad-service` read as the one id it abbreviates
    assert "no-such-group" not in text
    assert 'group "flag-chaos" configmap "flagd-config"' in text  # the root cause moved to what the injection changes
    assert "getads-endpoint-1" not in text  # a group whose filter names nothing is left out
    # ad and accounting meet only through other components: the edge is kept, and says so
    edge = text.index('propagation group "ad-service-1" -> group "accounting-service-1" {')
    assert "indirect = true" in text[edge: text.index("}", edge)]
    v1 = compiled_files(text)["groundtruth_v1.yaml"]["spec"]
    assert [g["id"] for g in v1["groups"]][:4] == ["flag-chaos", "ad-service-1", "ad-pod-1", "accounting-service-1"]
    assert v1["aliases"] == [["ad-service-1", "ad-pod-1"]]


def _copy(case: str, tmp_path: Path) -> Path:
    target = tmp_path / case
    shutil.copytree(CASES / case, target)
    return target


@pytest.mark.parametrize("edit,code", [
    (lambda t: t[: len(t) // 2], "E5001"),  # truncated
    (lambda t: t.replace("faults:", "faults: {x: 1}\n  other:", 1), "E5002"),
    (lambda t: t.replace("scaled-to-zero-kubernetes-workload", "no-such-fault"), "E5003"),
    (lambda t: t.replace("name: accounting", "name: etcd"), "E5005"),
])
def test_import_errors_are_located(tmp_path: Path, edit, code: str):
    folder = _copy("map-variant", tmp_path)
    path = folder / "scenario.yaml"
    path.write_text(edit(path.read_text("utf-8")), "utf-8")
    text, diags = imported(folder)
    assert text is None
    assert code in {d.code for d in diags.errors()}, render_human(diags)
    assert all(d.path.endswith("scenario.yaml") for d in diags.errors())


def test_not_a_scenario(tmp_path: Path):
    text, diags = imported(tmp_path)
    assert text is None and [d.code for d in diags.errors()] == ["E5004"]


def test_cli_writes_the_file_and_exit_codes(tmp_path: Path):
    runner = CliRunner()
    out = tmp_path / "x.itb"
    result = runner.invoke(cli, ["import", str(CASES / "map-variant"), "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert out.read_text("utf-8") == imported(CASES / "map-variant")[0]
    assert runner.invoke(cli, ["fmt", "--check", str(out)]).exit_code == 0
    result = runner.invoke(cli, ["import", str(tmp_path / "missing")])
    assert result.exit_code == 2
    bad = tmp_path / "bad.json"
    bad.write_text('{"id": 3, "disruptions": [', "utf-8")
    result = runner.invoke(cli, ["import", str(bad)])
    assert result.exit_code == 1 and "E5001" in result.output and "Traceback" not in result.output


# ---- fuzzing: mutated and truncated copies of ITBench files ------------------------------------------------------

_SOURCES = sorted((CASES / "defects").glob("*.yaml")) + sorted((CASES / "list-variant").glob("*.yaml"))
if SCENARIOS.is_dir():
    _SOURCES += [SCENARIOS / "scenario_61" / f for f in FILES] + [REFERENCE / "library" / "scenarios" / "16.json"]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(source=st.sampled_from(_SOURCES), cut=st.floats(0, 1), junk=st.sampled_from(["", "{", "]", ":", "- x", "\t", "\x00", "[[["]),
       mode=st.sampled_from(["truncate", "insert", "drop-line", "swap-value"]))
def test_fuzzed_files_give_diagnostics_or_a_result(tmp_path_factory, source: Path, cut: float, junk: str, mode: str):
    folder = tmp_path_factory.mktemp("fuzz")
    if source.suffix == ".json":
        target = folder / source.name
    else:
        target = folder / "scenario_7" / source.name
        shutil.copytree(source.parent, folder / "scenario_7", dirs_exist_ok=True)
    target.parent.mkdir(parents=True, exist_ok=True)
    text = source.read_text("utf-8")
    at = int(len(text) * cut)
    lines = text.split("\n")
    if mode == "truncate":
        text = text[:at]
    elif mode == "insert":
        text = text[:at] + junk + text[at:]
    elif mode == "drop-line":
        del lines[min(int(len(lines) * cut), len(lines) - 1)]
        text = "\n".join(lines)
    else:
        text = re.sub(r"(: |\": )([^\n,]+)", lambda m: m.group(1) + ("[]" if junk == "" else "{}"), text, count=1 + at % 5)
    target.write_text(text, "utf-8")
    result, diags = imported(target if source.suffix == ".json" else target.parent)
    if result is None:
        assert diags.errors()
        for d in diags.errors():
            assert d.path and d.span.line >= 1 and d.code.startswith("E50")
    else:
        assert parse_text(result, "fuzzed.itb", Diagnostics()) is not None


def test_mistyped_chaos_fields_are_reasons_not_crashes():
    """Shapes a fuzz of the index files found: a selector's labels, a peer or a target that is not a mapping."""
    from itbench_dsl.importer.faults import injection_statement

    def args(chaos: dict) -> dict:
        return {"kubernetesObject": {"apiVersion": "chaos-mesh.org/v1alpha1", "kind": "Schedule",
                                     "metadata": {"name": "s", "namespace": "chaos-mesh"}},
                "scheduleSpec": {"type": "NetworkChaos", "networkChaos": chaos}}

    assert "not a mapping" in injection_statement("scheduled-chaos-mesh-experiment", args(
        {"action": "partition", "selector": {"labelSelectors": "app=cart"}}))
    for target in (7, "x", {"selector": 1.5}, {"selector": {"labelSelectors": 3}}):
        statement = injection_statement("scheduled-chaos-mesh-experiment", args(
            {"action": "partition", "selector": {"labelSelectors": {"app": "cart"}}, "target": target}))
        assert not isinstance(statement, str) and not any(entry.key.startswith("peer") for entry in statement.entries)


def test_an_index_whose_injection_target_is_not_a_mapping_is_a_located_error(tmp_path: Path):
    index = tmp_path / "9.json"
    index.write_text('{"id": 9, "category": "sre", "environment": {"applications": [{"id": "opentelemetry-demo"}]},'
                     ' "disruptions": [{"injections": [{"id": "scheduled-chaos-mesh-experiment",'
                     ' "args": {"kubernetesObject": 7}}]}]}', "utf-8")
    diags = Diagnostics()
    assert import_path(index, diags) is None
    assert diags.errors() and all(e.span.line >= 1 for e in diags.errors())
