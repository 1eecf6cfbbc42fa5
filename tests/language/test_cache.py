"""The on-disk cache of the parser's tables and the standard library's parsed files (itbench_dsl/cache.py):
what it returns is what parsing returns, a damaged entry is parsed again, and it can be turned off."""

from __future__ import annotations

import subprocess
import sys
from importlib import resources
from pathlib import Path

from itbench_dsl import cache
from itbench_dsl.diagnostics import Diagnostics
from itbench_dsl.parser import parse_bytes, parse_package_file

ROOT = Path(__file__).resolve().parents[2]
APP = "<stdlib>/apps/opentelemetry-demo.itb"


def _app_bytes() -> bytes:
    return resources.files("itbench_dsl").joinpath("stdlib/apps/opentelemetry-demo.itb").read_bytes()


def test_a_cached_parse_is_the_parse(tmp_path, monkeypatch):
    monkeypatch.setenv("ITBENCH_CACHE_DIR", str(tmp_path))
    data = _app_bytes()
    first_diags, second_diags = Diagnostics(), Diagnostics()
    first = parse_package_file(data, APP, first_diags)
    assert list(tmp_path.glob("ast-*.pickle"))  # stored
    second = parse_package_file(data, APP, second_diags)  # read back
    assert second == first == parse_bytes(data, APP, Diagnostics())
    assert second_diags.sources[APP].text == first_diags.sources[APP].text


def test_other_bytes_are_another_entry(tmp_path, monkeypatch):
    monkeypatch.setenv("ITBENCH_CACHE_DIR", str(tmp_path))
    data = _app_bytes()
    parse_package_file(data, APP, Diagnostics())
    changed = data.replace(b'"otel-demo"', b'"shop-demo"', 1)
    assert changed != data
    document = parse_package_file(changed, APP, Diagnostics())
    assert len(list(tmp_path.glob("ast-*.pickle"))) == 2
    assert document == parse_bytes(changed, APP, Diagnostics())


def test_a_damaged_entry_is_parsed_again(tmp_path, monkeypatch):
    monkeypatch.setenv("ITBENCH_CACHE_DIR", str(tmp_path))
    data = _app_bytes()
    expected = parse_package_file(data, APP, Diagnostics())
    for entry in tmp_path.glob("ast-*.pickle"):
        entry.write_bytes(entry.read_bytes()[:100])  # cut short, as a crash mid-write would leave it
    assert parse_package_file(data, APP, Diagnostics()) == expected


def test_a_file_with_errors_is_not_kept(tmp_path, monkeypatch):
    monkeypatch.setenv("ITBENCH_CACHE_DIR", str(tmp_path))
    diags = Diagnostics()
    assert parse_package_file(b'app "x" { deployment "a" {', "<stdlib>/apps/x.itb", diags) is None
    assert diags.errors() and not list(tmp_path.glob("ast-*.pickle"))


def test_an_empty_setting_turns_the_cache_off(tmp_path, monkeypatch):
    monkeypatch.setenv("ITBENCH_CACHE_DIR", "")
    assert cache.folder() is None and cache.path_for("ast", "x") is None
    assert parse_package_file(_app_bytes(), APP, Diagnostics()) is not None


def test_a_fresh_process_checks_the_same_with_a_warm_cache(tmp_path):
    """Two processes on one cache folder: the second reads what the first wrote, and reports the same."""
    env = {"ITBENCH_CACHE_DIR": str(tmp_path), "PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT)}
    command = [sys.executable, "-m", "itbench_dsl", "check", "--format", "concise",
               "scenarios/sre/otel-checkout-nonexistent-image.itb"]
    cold = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    entries = sorted(p.name for p in tmp_path.iterdir())
    warm = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert cold.returncode == warm.returncode == 0, cold.stderr + warm.stderr
    assert cold.stdout == warm.stdout and cold.stderr == warm.stderr
    assert any(name.startswith("lark-") for name in entries) and any(name.startswith("ast-") for name in entries)


def test_the_standard_fault_library_is_checked_once_and_built_the_same(tmp_path, monkeypatch):
    """Once checked clean, the standard library's kinds are built without the checks that can only report (a
    path against the schemas, a template's syntax); the kinds are the same. A damaged mark checks them all."""
    from itbench_dsl.faults import _python_registry, declared

    monkeypatch.setenv("ITBENCH_CACHE_DIR", str(tmp_path))
    python = _python_registry()
    calls = []
    real = declared.check_path

    def counted(*args, **kwargs):
        calls.append(args[0].__class__.__name__)
        return real(*args, **kwargs)

    monkeypatch.setattr(declared, "check_path", counted)
    first = declared.load_stdlib(python)
    marks = list(tmp_path.glob("faultlib-*.pickle"))
    assert len(marks) == 1 and calls and set(calls) == {"Context"}

    def shape(kinds):
        return [(k.name, k.mechanism, k.targets, k.declared) for k in kinds]

    calls.clear()
    assert shape(declared.load_stdlib(python)) == shape(first)
    assert set(calls) <= {"KnownClean"}
    marks[0].write_bytes(b"damaged")
    calls.clear()
    assert shape(declared.load_stdlib(python)) == shape(first)
    assert calls and set(calls) == {"Context"}


def test_another_python_reads_none_of_the_entries(tmp_path, monkeypatch):
    """An entry is a pickle of one interpreter's objects: another Python (version or implementation) has its own."""
    monkeypatch.setenv("ITBENCH_CACHE_DIR", str(tmp_path))
    here = cache.path_for("ast", "x")
    monkeypatch.setattr(sys, "version", sys.version + " (another build)")
    assert cache.path_for("ast", "x") != here
