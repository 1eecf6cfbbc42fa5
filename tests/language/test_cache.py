"""The on-disk cache of the parser's tables and the standard library's parsed files (itbench_dsl/cache.py):
what it returns is what parsing returns, a damaged entry is parsed again, and it can be turned off."""

from __future__ import annotations

import functools
import subprocess
import sys
from importlib import resources
from pathlib import Path

import pytest

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


# ---- a checked file's parse and its objects' validation results (parser.parse_kept, validate.validate_all) ----

SCENARIO = ROOT / "scenarios" / "sre" / "otel-checkout-nonexistent-image.itb"


def _source(data: bytes):
    from itbench_dsl.parser import decode

    return decode(data, str(SCENARIO), Diagnostics())


def test_a_kept_parse_is_the_parse_and_an_edit_parses_again(tmp_path, monkeypatch):
    from itbench_dsl import ast, parser

    monkeypatch.setenv("ITBENCH_CACHE_DIR", str(tmp_path))
    data = SCENARIO.read_bytes()
    first, _ = parser.parse_kept(_source(data), Diagnostics())
    entries = list(tmp_path.glob("parse-*.pickle"))
    assert len(entries) == 1 and first == parse_bytes(data, str(SCENARIO), Diagnostics())
    stale = ast.Scenario("a scenario only the cache holds", ())
    cache.store(entries[0], stale)
    assert parser.parse_kept(_source(data), Diagnostics())[0] == stale  # read back: the entry is what a check reads
    edited = data.replace(b"demo:7f3a9c1e", b"demo:7f3a9c1f", 1)
    assert edited != data
    assert parser.parse_kept(_source(edited), Diagnostics())[0] == parse_bytes(edited, str(SCENARIO), Diagnostics())


def test_a_parse_with_errors_is_not_kept(tmp_path, monkeypatch):
    from itbench_dsl import parser

    monkeypatch.setenv("ITBENCH_CACHE_DIR", str(tmp_path))
    diags = Diagnostics()
    parser.parse_kept(_source(b'scenario "x" {\n  domain sre\n  oops oops\n}\n'), diags)
    assert diags.errors() and not list(tmp_path.glob("parse-*.pickle"))


def _validation_entries(folder: Path) -> list[Path]:
    return sorted(folder.glob("valid-*.pickle"))


def test_kept_validation_results_are_read_back_in_a_new_process_only(tmp_path, monkeypatch):
    """The results of a list of objects are kept and read back while no validator is built; a changed object, a
    changed package or another jsonschema is another entry."""
    from itbench_dsl import validate

    monkeypatch.setenv("ITBENCH_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(validate, "_validator", _FreshValidators(validate._validator))
    good = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "shop"}}
    bad = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "Shop_"}}
    expected = [validate.validate_object(good), validate.validate_object(bad)]
    assert expected[1] and not expected[0]
    validate._validator.cache_clear()
    assert validate.validate_all([good, bad]) == expected
    assert len(_validation_entries(tmp_path)) == 1
    poison = [(validate.SchemaIssue("$", "a result only the cache holds", "schema"),), ()]
    cache.store(_validation_entries(tmp_path)[0], poison)
    validate._validator.cache_clear()
    assert validate.validate_all([good, bad])[0][0].message == "a result only the cache holds"
    validate._validator.cache_clear()
    assert validate.validate_all([good, bad, good]) == [*expected, expected[0]]  # another list: validated
    for stale in (("package_digest", lambda: "another package"), ("module_stamp", lambda name: "another " + name)):
        with monkeypatch.context() as patch:
            patch.setattr(cache, *stale)
            validate._validator.cache_clear()
            assert validate.validate_all([good, bad]) == expected
    validate._validator("v1/Namespace")  # a validator is built: the memo is cheaper than an entry, none is read
    assert validate.validate_all([good, bad]) == expected


class _FreshValidators:
    """validate._validator with a cache_clear that empties it: a new process, as far as validate_all can tell."""

    def __init__(self, function):
        self.function = function.__wrapped__
        self.cache_clear()

    def cache_clear(self):
        self.built = {}

    def cache_info(self):
        return functools._CacheInfo(0, 0, None, len(self.built))

    def __call__(self, key):
        if key not in self.built:
            self.built[key] = self.function(key)
        return self.built[key]


def test_jsonschema_and_lark_are_not_imported_by_a_warm_check(tmp_path):
    """A check of a file checked before reads its parse and its objects' validation results back: the process
    imports neither Lark nor jsonschema."""
    env = {"ITBENCH_CACHE_DIR": str(tmp_path), "PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT)}
    probe = ("import runpy, sys; sys.argv = ['itbench', 'check', sys.argv[1]]\n"
             "try:\n    runpy.run_module('itbench_dsl', run_name='__main__')\n"
             "finally:\n    print(sorted(m for m in ('lark', 'jsonschema') if m in sys.modules), file=sys.stderr)")
    runs = [subprocess.run([sys.executable, "-P", "-c", probe, str(SCENARIO)], cwd=ROOT, env=env, capture_output=True,
                           text=True, timeout=300) for _ in range(2)]
    assert "['jsonschema', 'lark']" in runs[0].stderr, runs[0].stderr
    assert "[]" in runs[1].stderr.splitlines()[-1], runs[1].stderr


def test_kept_yaml_is_read_back_and_follows_pyyaml(tmp_path, monkeypatch):
    """A parsed YAML text is kept (and a text that is not YAML too); another PyYAML is another entry."""
    from itbench_dsl import serialize

    monkeypatch.setenv("ITBENCH_CACHE_DIR", str(tmp_path))
    text = "a: 1\nb: [x, y]\n"
    serialize._load_yaml.cache_clear()
    assert serialize.load_yaml(text) == {"a": 1, "b": ["x", "y"]}
    entries = list(tmp_path.glob("yaml-*.pickle"))
    assert len(entries) == 1
    cache.store(entries[0], ({"a": "a value only the cache holds"},))
    serialize._load_yaml.cache_clear()
    assert serialize.load_yaml(text) == {"a": "a value only the cache holds"}
    monkeypatch.setattr(cache, "module_stamp", lambda name: "another " + name)
    serialize._load_yaml.cache_clear()
    assert serialize.load_yaml(text) == {"a": 1, "b": ["x", "y"]}
    serialize._load_yaml.cache_clear()
    for _ in range(2):  # parsed, then read back: the same error
        with pytest.raises(serialize.YamlError):
            serialize.load_yaml("a: [\nb: c\n")
    serialize._load_yaml.cache_clear()


def test_a_cache_that_cannot_be_written_is_no_cache(tmp_path, monkeypatch):
    """A cache folder that cannot be made (here: a file is in its place), or whose entries cannot be written, is
    silently no cache: the check reports what it reports without one."""
    from itbench_dsl import checking, serialize
    from itbench_dsl.backends import prompt

    data = SCENARIO.read_bytes()
    monkeypatch.setenv("ITBENCH_CACHE_DIR", "")
    expected = [(d.code, d.message) for d in checking.check_source(data, str(SCENARIO)).diagnostics]
    blocked = tmp_path / "a-file"
    blocked.write_text("not a folder")
    monkeypatch.setenv("ITBENCH_CACHE_DIR", str(blocked))
    assert cache.folder() is None
    assert [(d.code, d.message) for d in checking.check_source(data, str(SCENARIO)).diagnostics] == expected

    def refuse(*args, **kwargs):
        raise PermissionError("read-only")

    monkeypatch.setenv("ITBENCH_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(cache.tempfile, "mkstemp", refuse)
    monkeypatch.setattr(prompt.FileSystemBytecodeCache, "dump_bytecode", refuse)
    prompt._environment.cache_clear()
    serialize._load_yaml.cache_clear()
    try:
        assert [(d.code, d.message) for d in checking.check_source(data, str(SCENARIO)).diagnostics] == expected
    finally:
        prompt._environment.cache_clear()
        serialize._load_yaml.cache_clear()
    assert not list((tmp_path / "cache").glob("*.pickle"))


def test_a_kept_standard_application_is_the_one_composed(tmp_path, monkeypatch):
    """A standard-library application's topology is kept on disk: a new process reads back the same topology and
    name without composing it again, and a damaged entry is composed again."""
    from itbench_dsl import applications

    monkeypatch.setenv("ITBENCH_CACHE_DIR", str(tmp_path))
    applications._app_built.cache_clear()
    first = applications._app_built("opentelemetry-demo")
    assert len(list(tmp_path.glob("stdlib-app-*.pickle"))) == 1
    applications._app_built.cache_clear()
    composed = []
    monkeypatch.setattr(applications, "compose", lambda *a, **k: composed.append(a) or first[0])
    second = applications._app_built("opentelemetry-demo")  # as a new process would: read from disk
    assert not composed and second[0] is not first[0]
    assert second[0].to_ir() == first[0].to_ir() and second[2] == first[2]
    for entry in tmp_path.glob("stdlib-app-*.pickle"):
        entry.write_bytes(b"damaged")
    applications._app_built.cache_clear()
    applications._app_built("opentelemetry-demo")
    assert composed  # composed again
    applications._app_built.cache_clear()
