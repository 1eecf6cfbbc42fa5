"""Files derived from the code are up to date, and what they describe holds."""

from __future__ import annotations

import importlib.util
import json
from importlib import resources
from pathlib import Path

import jsonschema

from itbench_dsl.codes import CODES
from itbench_dsl.ir import json_schema

ROOT = Path(__file__).resolve().parents[2]


def _gen_docs():
    spec = importlib.util.spec_from_file_location("gen_docs", ROOT / "tools" / "gen_docs.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_generated_files_are_current():
    module = _gen_docs()
    for path, make in module.TARGETS.items():
        assert path.read_text(encoding="utf-8") == make(), f"{path} is stale: run python tools/gen_docs.py"


def test_published_ir_schema_is_package_data_and_a_valid_schema():
    text = resources.files("itbench_dsl").joinpath("schemas/scenario-ir.schema.json").read_text(encoding="utf-8")
    schema = json.loads(text)
    assert schema == json_schema()
    jsonschema.Draft202012Validator.check_schema(schema)


def test_every_code_has_a_page_and_a_family():
    for code in CODES.values():
        assert code.page.strip(), code.code
        assert code.code[0] in "EW" and code.code[1:].isdigit() and len(code.code) == 5
        assert code.title and code.title == code.title.strip()


def test_scenario_json_fast_path_writes_the_plain_serialisation():
    """scenario.json reuses each shared object's JSON text; the bytes are those of the plain dump."""
    from itbench_dsl import ir
    from itbench_dsl.compiler import compile_source, dump_json, scenario_json
    from itbench_dsl.diagnostics import Diagnostics

    for path in sorted((ROOT / "scenarios").rglob("*.itb")):
        result = compile_source(path.read_bytes(), str(path), Diagnostics())
        assert result.scenario is not None, path
        assert scenario_json(result.scenario) == dump_json(ir.to_json(result.scenario)), path
        assert result.files["scenario.json"] == scenario_json(result.scenario)
