"""The package's public face (itbench_dsl/__init__.py): parse, check, compile and evaluate, as library calls."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import itbench_dsl as itb
from itbench_dsl.bundle import write_bundle

ROOT = Path(__file__).resolve().parent.parent
TEXT = (ROOT / "scenarios" / "sre" / "otel-checkout-nonexistent-image.itb").read_text(encoding="utf-8")


def test_parse_check_compile():
    document, diagnostics = itb.parse(TEXT, "checkout.itb")
    assert document is not None and document.name == "otel-checkout-nonexistent-image" and not diagnostics.items
    broken, diagnostics = itb.parse(TEXT.replace("{", "", 1), "broken.itb")
    assert broken is None and diagnostics.has_errors
    checked = itb.check(TEXT, "checkout.itb")
    assert not checked.has_errors and checked.scenario.name == document.name
    result, diagnostics = itb.compile(TEXT.encode("utf-8"), "checkout.itb")
    assert not diagnostics.has_errors and "evaluator.py" in result.files and result.document == document


def test_evaluate_a_bundle_folder_a_compile_result_and_a_spec(tmp_path: Path):
    from itbench_dsl.analysis.states import derive

    result, _ = itb.compile(TEXT, "checkout.itb")
    folder = write_bundle(tmp_path, result.name, result.files)
    solved = derive(result.scenario)["solved"]
    for bundle in (folder, str(folder), result):
        assert itb.evaluate(bundle, task="mitigate", state=solved)["passed"]
    from itbench_dsl.backends.evaluator import evaluator_spec

    spec = evaluator_spec(result.scenario)
    assert not itb.evaluate(spec, task="mitigate", state=derive(result.scenario)["faulty"])["passed"]
    with pytest.raises(Exception, match="agent-output"):
        itb.evaluate(spec, task="diagnose")
    with pytest.raises(TypeError):
        itb.evaluate(42)


def test_importing_the_package_imports_nothing_heavy():
    code = ("import sys, itbench_dsl; heavy = [m for m in ('lark', 'jsonschema', 'jinja2', 'yaml', "
            "'itbench_dsl.compiler') if m in sys.modules]; print(heavy)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert done.stdout.strip() == "[]"
