"""One way to check a scenario (itbench_dsl/checking.py): the command line, the language server and the
generators report the same findings for the same file, and the compile result carries the positions
every later stage needs (the AST, the source map and the resolved topology)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from itbench_dsl import ast, variants as generate, lsp
from itbench_dsl.checking import check_document, check_files, check_source
from itbench_dsl.cli import cli
from itbench_dsl.diagnostics import Diagnostics, render_json
from itbench_dsl.parser import parse_text

ROOT = Path(__file__).resolve().parents[2]
SHOP = (ROOT / "tests" / "cases" / "compile" / "inline-group-wait" / "input.itb").read_text(encoding="utf-8")

# a scenario with a lint warning (an unused object), for the drivers to agree on
UNUSED = SHOP.replace("  topology {\n", '  topology {\n    configmap "never-used" {\n      data { a = "b" }\n    }\n', 1)
# a scenario whose own evaluator cannot tell faulty from healthy (E4004): no predicate sees the fault
BLIND = '''scenario "blind" {
  domain sre
  complexity low
  description "A fault nothing observes, so self-validation must refuse the scenario."
  topology {
    namespace "shop"
    deployment "cart" {
      image = "ghcr.io/example/cart:1.0"
      port "grpc" = 7070
    }
    service "cart" {
      port "grpc" = 7070
    }
  }
  fault scaled_to_zero on deployment "cart"
  expect {
    mitigated when {
      deployment "cart" absent
    }
  }
  solution "Scale back" {
    step "Scale" run "kubectl -n shop scale deployment/cart --replicas=1"
  }
}
'''


def _found(diagnostics) -> list[tuple]:
    return sorted((d.code, d.path, d.span.line, d.span.column, d.message) for d in diagnostics)


@pytest.mark.parametrize("text", [SHOP, UNUSED, BLIND], ids=["clean", "lint", "self-validation"])
def test_every_driver_reports_the_same_findings(text: str, tmp_path: Path):
    checked = check_source(text.encode("utf-8"), "input.itb")
    (tmp_path / "input.itb").write_text(text, encoding="utf-8")
    result = CliRunner().invoke(cli, ["check", "--format", "json", str(tmp_path / "input.itb")])
    from_cli = sorted((d["code"], d["line"], d["column"], d["message"])
                      for d in json.loads(result.stdout)["diagnostics"])
    assert from_cli == [(c, line, col, m) for c, _, line, col, m in _found(checked.diagnostics)]
    analysis = lsp.analyze(text, "input.itb")
    assert _found(analysis.diagnostics) == _found(checked.diagnostics)
    document = parse_text(text, "input.itb")
    from_ast = check_document(document, "input.itb")
    assert _found(from_ast.diagnostics) == _found(checked.diagnostics)
    errors = generate.check_document(document, "input.itb").problems
    assert errors == [f"{d.code}: {d.message}" for d in sorted(checked.errors(), key=lambda d: d.sort_key())]


def test_the_self_validation_and_lint_findings_are_there():
    assert {d.code for d in check_source(UNUSED.encode(), "u.itb").diagnostics} == {"W2002"}
    blind = check_source(BLIND.encode(), "b.itb")
    # its evaluator fails the healthy state (E4004), and so its own solution, replayed, does not pass (E4006)
    assert [d.code for d in blind.diagnostics] == ["E4004", "E4006"] and blind.scenario is None and blind.linted is None
    d = blind.diagnostics[0]
    # located at the predicate that makes the healthy state fail, not at the scenario's name
    assert BLIND.splitlines()[d.span.line - 1][d.span.column - 1:d.span.end_column - 1] == 'deployment "cart" absent'


def test_the_compile_result_keeps_the_ast_the_source_map_and_the_topology():
    checked = check_source(SHOP.encode(), "input.itb")
    result = checked.result
    assert isinstance(result.document, ast.Scenario) and result.scenario is not None
    faults = ast.fault_statements(result.document)
    assert len(faults) == len(result.scenario.injections()) == len(result.source_map.injections) >= 1
    assert result.source_map.injections == [f.span for f in faults]
    assert result.source_map.scenario == result.document.name_span
    for (kind, namespace, name), (path, span) in result.source_map.objects.items():
        line = SHOP.splitlines()[span.line - 1] if path == "input.itb" else ""
        assert path != "input.itb" or f'"{name}"' in line, (kind, name, line)
    assert result.topology is not None and result.topology.workloads
    steps = [s for sol in result.document.statements if isinstance(sol, ast.Solution) for s in sol.steps]
    assert list(result.source_map.steps.values()) == [s.span for s in steps]


def test_a_broken_file_still_has_its_topology_for_the_language_server():
    broken = SHOP.replace('fault ', 'fault not_a_fault_kind_', 1)
    checked = check_source(broken.encode(), "input.itb")
    assert checked.has_errors and checked.result.topology is not None and checked.result.topology.workloads


def test_check_files_runs_the_cross_file_rules(tmp_path: Path):
    renamed = SHOP.replace('scenario "', 'scenario "copy-of-', 1)
    diags, checks = check_files([("a.itb", SHOP.encode()), ("b.itb", renamed.encode())])
    assert [(d.path, d.code) for d in diags.items] == [("b.itb", "W2006")]
    assert [c.path for c in checks] == ["a.itb", "b.itb"]
    assert all(c.result.files == {} for c in checks)  # slim: no bundle crosses back
    name = diags.items[0].span
    assert renamed.splitlines()[name.line - 1][name.column - 1:].startswith('"copy-of-')
    quiet, _ = check_files([("a.itb", SHOP.encode()), ("b.itb", renamed.encode())], ignore={"W2006"})
    assert quiet.items == []


def test_parallel_checking_gives_the_same_findings():
    jobs = [(f"f{i}.itb", text.encode()) for i, text in enumerate([SHOP, UNUSED, BLIND, SHOP])]
    one, _ = check_files(jobs, workers=1)
    two, _ = check_files(jobs, workers=2)
    assert render_json(one) == render_json(two) and one.items
    assert isinstance(one, Diagnostics)


def test_a_check_for_the_editor_leaves_out_a_self_validation_not_yet_on_disk(tmp_path: Path, monkeypatch):
    monkeypatch.setenv("ITBENCH_CACHE_DIR", str(tmp_path / "cache"))
    text = BLIND.replace("A fault nothing observes", "A fault no check observes")
    quick = check_source(text.encode(), "b.itb", validate="cached")
    # compiled and linted, but not self-validated: nothing of E4004/E4006 yet, and it says so
    assert quick.validation_pending and not {"E4004", "E4006"} & {d.code for d in quick.diagnostics}
    whole = check_source(text.encode(), "b.itb")
    assert not whole.validation_pending and [d.code for d in whole.diagnostics] == ["E4004", "E4006"]
    # once the results are on disk, the quick check has them too
    again = check_source(text.encode(), "b.itb", validate="cached")
    assert not again.validation_pending and [d.code for d in again.diagnostics] == ["E4004", "E4006"]
