"""Error fixtures: one folder per diagnostic case, `tests/cases/errors/<CODE>-<slug>/`.

Each folder holds `input.itb` and `expected.txt`, the exact human rendering (no color) of the
diagnostics of compiling the input as `input.itb`. Regenerate with `python3 tests/update_fixtures.py`
and review every diff.

Codes that no source text can reach are triggered here through the internal API instead:
E3003 (the compiler only emits kinds it has schemas for), E4001 (the prompt context always has
what the templates use) and E4002 (the bundle writer refuses the path; no stage emits the code).
E3001 and E3002 have fixtures and API tests both.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parents[1]
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

from update_fixtures import CASES, fixture_folders, render_fixture  # noqa: E402

from itbench_dsl import compiler  # noqa: E402
from itbench_dsl.backends import prompt as prompt_backend  # noqa: E402
from itbench_dsl.bundle import BundleError, write_bundle  # noqa: E402
from itbench_dsl.codes import CODES  # noqa: E402
from itbench_dsl.diagnostics import Diagnostics, render_human  # noqa: E402

# Codes tested through the internal API only (no source text reaches them).
API_ONLY = {"E3003", "E4001", "E4002"}
# Codes registered but not emitted by any stage (none at the moment; W1001 was one until it was dropped).
UNEMITTED = {"W1001"}
# Codes that need several files (a fixture is one file): tested in their own test file.
MULTI_FILE = {"W2001", "W2006", "E2031", "E2032", "E2033"}  # tests/analysis/test_mechanisms.py; W2006: tests/analysis/test_lint.py;
# E2031-E2033 (an application file imported): tests/language/test_app_modules.py
# Codes of `itbench check`'s self-validation, which compile does not run: tested in tests/analysis/test_states.py.
CHECK_ONLY = {"E4004", "E4005", "E4006", "E4026", "W2009", "W2010", "W2016", "W2017", "W2018"}  # E4006, W2009, W2010: tests/analysis/test_solutions.py; E4026, W2017: tests/analysis/test_agent_access.py; W2016, W2018: tests/analysis/test_fault_fingerprints.py
# Codes of `itbench generate` (a generator failed, a generator skipped an input): tests/variants/test_generators.py.
GENERATE_ONLY = {"E6002", "E6003", "W6001"}
# Codes of the ITBench CISO import, whose input is an ITBench folder, not .itb: tests/ciso/test_itbench_ciso.py.
CISO_IMPORT_ONLY = {"E5050", "E5051", "E5052", "E5053", "E5054", "W5050", "W5051", "W5052", "W5053",
                    "W5054"}
# `itbench import` of ITBench SRE/FinOps files (not .itb): tests/importer/test_importer.py
IMPORT_ONLY = {"E5001", "E5002", "E5003", "E5004", "E5005", "W5001", "W5002", "W5003", "W5004", "W5005", "W5006"}

# `itbench compile --target itbench` only (what ITBench's layout cannot carry): tests/backends/test_target_itbench.py
TARGET_ONLY = {"W3001", "W3002", "E3004", "E3005", "E3006", "E3007"}

FOLDERS = fixture_folders()


def _code(folder: Path) -> str:
    return folder.name.split("-", 1)[0]


def test_fixture_folders_are_well_formed():
    assert FOLDERS, f"no fixtures under {CASES}"
    for folder in sorted(p for p in CASES.iterdir() if p.is_dir()):
        assert (folder / "input.itb").is_file(), f"{folder.name}: no input.itb"
        assert (folder / "expected.txt").is_file(), f"{folder.name}: no expected.txt (run tests/update_fixtures.py)"
        code, _, slug = folder.name.partition("-")
        assert code in CODES, f"{folder.name}: {code} is not a registered code"
        assert slug and slug == slug.lower() and " " not in slug, folder.name


@pytest.mark.parametrize("folder", FOLDERS, ids=[f.name for f in FOLDERS])
def test_fixture(folder: Path):
    rendered, diags = render_fixture(folder)
    expected = (folder / "expected.txt").read_text(encoding="utf-8")
    assert rendered == expected, f"{folder.name}: run `python3 tests/update_fixtures.py {folder.name}` and review"
    codes = {d.code for d in diags.items}
    assert _code(folder) in codes, f"{folder.name}: {_code(folder)} not among {sorted(codes)}"
    for d in diags.items:
        assert d.path == "input.itb"
        assert d.span.line >= 1 and d.span.column >= 1


def test_every_registered_code_has_a_fixture():
    have = {_code(f) for f in FOLDERS}
    missing = sorted(set(CODES) - API_ONLY - UNEMITTED - MULTI_FILE - CHECK_ONLY - GENERATE_ONLY - CISO_IMPORT_ONLY - IMPORT_ONLY -
                     TARGET_ONLY - have)
    assert not missing, f"codes with no fixture folder: {missing}"


def test_api_only_codes_are_registered_and_have_no_fixture():
    # if a source text ever reaches one of them, give it a fixture and drop it from API_ONLY
    assert API_ONLY <= set(CODES)
    assert not API_ONLY & {_code(f) for f in FOLDERS}


# ---- codes reached through the internal API ----------------------------------------------------

DEPLOYMENT = {
    "apiVersion": "apps/v1",
    "kind": "Deployment",
    "metadata": {"name": "cart", "namespace": "shop"},
    "spec": {
        "selector": {"matchLabels": {"app": "cart"}},
        "template": {
            "metadata": {"labels": {"app": "cart"}},
            "spec": {"containers": [{"name": "cart", "image": "ghcr.io/example/cart:1.0"}]},
        },
    },
}


def _validate(obj: dict) -> Diagnostics:
    diags = Diagnostics()
    compiler.validate_manifests({"manifests/topology.yaml": [obj]}, "input.itb", diags)
    return diags


def test_valid_manifest_has_no_diagnostics():
    assert _validate(DEPLOYMENT).items == []


def test_e3001_schema_violation_through_validate_manifests():
    obj = {**DEPLOYMENT, "spec": {**DEPLOYMENT["spec"], "replicas": "two"}}
    diags = _validate(obj)
    assert [d.code for d in diags.items] == ["E3001"]
    message = diags.items[0].message
    assert message.startswith("Deployment `cart` (manifests/topology.yaml): $.spec.replicas")


def test_e3002_selector_mismatch_through_validate_manifests():
    spec = {**DEPLOYMENT["spec"], "selector": {"matchLabels": {"app": "other"}}}
    diags = _validate({**DEPLOYMENT, "spec": spec})
    assert {d.code for d in diags.items} == {"E3002"}
    assert any("$.spec.selector" in d.message for d in diags.items)


def test_e3003_unknown_kind_through_validate_manifests():
    obj = {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w", "namespace": "shop"}}
    diags = _validate(obj)
    assert [d.code for d in diags.items] == ["E3003"]
    assert "Widget `w`" in diags.items[0].message
    assert render_human(diags).startswith("error[E3003]: Widget `w` (manifests/topology.yaml): $.kind")


SCENARIO = b'''scenario "shop-cart" {
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
}
'''


def test_scenario_used_by_the_api_tests_compiles():
    diags = Diagnostics()
    result = compiler.compile_source(SCENARIO, "input.itb", diags)
    assert diags.items == [] and "prompt.md" in result.files


def test_e4001_template_that_cannot_render(monkeypatch):
    # The real template, rendered with a context that lacks a value it uses (StrictUndefined).
    real_context = prompt_backend.context

    def context_without_namespaces(scenario):
        values = dict(real_context(scenario))
        del values["namespaces"]
        return values

    monkeypatch.setattr(prompt_backend, "context", context_without_namespaces)
    diags = Diagnostics()
    result = compiler.compile_source(SCENARIO, "input.itb", diags)
    assert [d.code for d in diags.items] == ["E4001"]
    assert "namespaces" in diags.items[0].message
    assert diags.items[0].path == "input.itb"
    assert result.files == {}


def test_e4002_bundle_writer_refuses_paths_that_leave_the_bundle(tmp_path: Path):
    out = tmp_path / "out"
    for bad in ("../escaped.yaml", "/etc/escaped.yaml", "a/../../escaped.yaml", "a\\..\\escaped.yaml", ""):
        with pytest.raises(BundleError, match="would leave the bundle folder"):
            write_bundle(out, "bundle", {"ok.yaml": b"ok", bad: b"bad"})
    for bad_name in ("..", "a/b", "/abs", "", "."):
        with pytest.raises(BundleError, match="not a plain folder name"):
            write_bundle(out, bad_name, {"ok.yaml": b"ok"})
    assert not (tmp_path / "escaped.yaml").exists()
    assert not out.exists() or not any(out.iterdir()), "a refused bundle left files behind"


def test_e4002_symlink_inside_the_staging_folder_is_not_followed(tmp_path: Path, monkeypatch):
    # A file name that resolves outside through a symbolic link is refused too.
    out = tmp_path / "out"
    outside = tmp_path / "outside"
    outside.mkdir()
    import tempfile

    real_mkdtemp = tempfile.mkdtemp

    def mkdtemp_with_link(*args, **kwargs):
        folder = Path(real_mkdtemp(*args, **kwargs))
        if ".old." not in folder.name:
            (folder / "link").symlink_to(outside, target_is_directory=True)
        return str(folder)

    monkeypatch.setattr(tempfile, "mkdtemp", mkdtemp_with_link)
    with pytest.raises(BundleError, match="would leave the bundle folder"):
        write_bundle(out, "bundle", {"link/escaped.yaml": b"bad"})
    assert list(outside.iterdir()) == []
    assert [p.name for p in out.iterdir()] == []
