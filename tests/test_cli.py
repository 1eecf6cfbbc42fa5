"""The `itbench` command line: exit codes, output formats, fmt, explain, schema, compile's output folder.

The entry point is exercised for real (`python -m itbench_dsl` in a subprocess) where it matters
(exit codes, tracebacks, the version) and through click's CliRunner elsewhere, which is faster.
Exit codes: 0 clean, 1 findings, 2 usage, I/O or internal errors.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

import itbench_dsl
from itbench_dsl import cli as cli_module
from itbench_dsl import compiler
from itbench_dsl.codes import CODES, explain
from itbench_dsl.applications import app_names

REPO = Path(__file__).resolve().parents[1]
SCENARIOS = REPO / "scenarios"
SHOP = SCENARIOS / "sre" / "shop-cart-modified-env.itb"  # an inline topology: fast to compile
COMMANDS = ["compile", "check", "fmt", "explain", "schema", "apps", "faults", "evaluate", "score", "policy-test",
            "import", "generate", "graph", "docs", "lsp", "states"]
BUNDLE_FILES = {
    "manifests/topology.yaml", "manifests/agent-access.yaml", "manifests/alert-rules.yaml", "inject/apply.yaml", "revert/apply.yaml",
    "itbench/scenario.yaml", "itbench/groundtruth.yaml", "itbench/groundtruth_v1.yaml", "prompt.md",
    "scenario.json", "bundle.lock", "evaluator.py",
}
BAD = '''scenario "bad-cart" {
  domain sre
  complexity low
  description "A fault on a deployment that does not exist."
  topology {
    namespace "shop"
    deployment "cart" {
      image = "ghcr.io/example/cart:1.0"
    }
  }
  fault scaled_to_zero on deployment "cartt"
  fault scale_to_zero on deployment "cart"
}
'''


def run_itbench(*args: str, cwd: Path | None = None, timeout: float = 60) -> subprocess.CompletedProcess:
    """`timeout` bounds a hang, it times nothing (benchmarks/ measures speed)."""
    env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""), NO_COLOR="1")
    return subprocess.run([sys.executable, "-m", "itbench_dsl", *args], cwd=cwd or REPO, capture_output=True,
                          text=True, timeout=timeout, env=env)


def invoke(*args: str, cwd: Path | None = None):
    """Run the click group in process; stdout and stderr apart (click 8.1 needs mix_stderr=False)."""
    try:
        runner = CliRunner(mix_stderr=False)
    except TypeError:  # click >= 8.2 always keeps them apart
        runner = CliRunner()
    if cwd is None:
        return runner.invoke(cli_module.cli, list(args), catch_exceptions=False)
    old = os.getcwd()
    os.chdir(cwd)
    try:
        return runner.invoke(cli_module.cli, list(args), catch_exceptions=False)
    finally:
        os.chdir(old)


@pytest.fixture
def bad_file(tmp_path: Path) -> Path:
    path = tmp_path / "bad.itb"
    path.write_text(BAD, encoding="utf-8")
    return path


# ---- help and version ----------------------------------------------------------------------------


@pytest.mark.parametrize("command", COMMANDS)
def test_help_of_each_command_shows_an_example(command: str):
    result = invoke(command, "--help")
    assert result.exit_code == 0
    assert re.search(r"^\s+Examples?:\s*$", result.stdout, re.M), result.stdout
    assert re.search(rf"^\s+itbench {command}\b", result.stdout, re.M), result.stdout


def test_top_level_help_lists_every_command_with_a_first_session():
    proc = run_itbench("--help")
    assert proc.returncode == 0
    for command in COMMANDS:
        assert re.search(rf"^\s+{command}\s", proc.stdout, re.M), command
    assert "itbench check scenarios/" in proc.stdout
    assert "Exit codes: 0 clean, 1 findings, 2 usage" in proc.stdout


def test_version():
    proc = run_itbench("--version")
    assert proc.returncode == 0
    assert proc.stdout.strip() == f"itbench, version {itbench_dsl.__version__}"


def test_unknown_command_and_missing_option_are_usage_errors(tmp_path: Path):
    for args in (["bogus"], ["compile", str(SHOP)], ["check", "--format", "xml", str(SHOP)], ["check"]):
        proc = run_itbench(*args, cwd=tmp_path)
        assert proc.returncode == 2, (args, proc.stderr)
        assert "Traceback" not in proc.stderr
        assert "Usage:" in proc.stderr
    assert list(tmp_path.iterdir()) == []


# ---- check ----------------------------------------------------------------------------------------


def test_check_scenarios_folder_is_clean():
    """The whole library checks clean: compiled, validated, every scenario's evaluator grading its adversarial
    corpus as it must (self-validation: E4004/E4005) and its solutions replayed."""
    proc = run_itbench("check", "scenarios/", timeout=1800)
    count = len(list(SCENARIOS.rglob("*.itb")))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == ""
    assert proc.stderr == f"{count} files checked, 0 errors\n"


def test_check_bad_file_exits_1_with_every_error(bad_file: Path):
    proc = run_itbench("check", "bad.itb", cwd=bad_file.parent)
    assert proc.returncode == 1
    assert "Traceback" not in proc.stderr
    assert "error[E2003]: unknown deployment `cartt` in the target of `scaled_to_zero`\n --> bad.itb:11:38\n" in proc.stderr
    assert "error[E2005]: unknown fault `scale_to_zero`\n --> bad.itb:12:9\n" in proc.stderr
    assert "help: did you mean `scaled_to_zero`?" in proc.stderr
    assert proc.stderr.endswith("1 file checked, 2 errors\n")
    assert list(bad_file.parent.iterdir()) == [bad_file]


@pytest.mark.parametrize("args", [["check", "no/such/file.itb"], ["compile", "missing.itb", "-o", "out"],
                                  ["fmt", "missing-folder/"]])
def test_missing_path_exits_2_with_one_line(args: list[str], tmp_path: Path):
    proc = run_itbench(*args, cwd=tmp_path)
    assert proc.returncode == 2
    missing = args[1]
    assert proc.stderr == f"error: {missing}: no such file or folder\n"
    assert proc.stdout == ""
    assert list(tmp_path.iterdir()) == []


def test_folder_without_itb_files_exits_2(tmp_path: Path):
    (tmp_path / "empty").mkdir()
    result = invoke("check", "empty", cwd=tmp_path)
    assert result.exit_code == 2
    assert result.stderr == "error: empty: no .itb files in this folder\n"


JSON_FIELDS = {"code": str, "severity": str, "message": str, "path": str, "line": int, "column": int,
               "end_line": int, "end_column": int}


def test_check_json_has_the_documented_fields(bad_file: Path):
    proc = run_itbench("check", "--format", "json", "bad.itb", cwd=bad_file.parent)
    assert proc.returncode == 1
    assert proc.stderr == ""  # json mode: nothing but the document, on stdout
    report = json.loads(proc.stdout)
    assert report["summary"] == {"errors": 2, "warnings": 0}
    assert [d["code"] for d in report["diagnostics"]] == ["E2003", "E2005"]
    for diagnostic in report["diagnostics"]:
        for name, kind in JSON_FIELDS.items():
            assert isinstance(diagnostic[name], kind), (name, diagnostic)
        assert diagnostic["severity"] == "error"
        assert diagnostic["path"] == "bad.itb"
        assert diagnostic["line"] >= 1 and diagnostic["column"] >= 1
        assert (diagnostic["end_line"], diagnostic["end_column"]) >= (diagnostic["line"], diagnostic["column"])
    first = report["diagnostics"][0]
    assert (first["line"], first["column"], first["end_line"], first["end_column"]) == (11, 38, 11, 45)
    assert first["help"] == "a deployment with a similar name exists: `cart`"


def test_check_json_of_a_clean_file():
    result = invoke("check", "--format", "json", str(SHOP))
    assert result.exit_code == 0
    assert json.loads(result.stdout) == {"diagnostics": [], "summary": {"errors": 0, "warnings": 0}}


CONCISE = re.compile(r"^(?P<path>[^:\n]+):(?P<line>\d+):(?P<column>\d+): (?:error\[E|warning\[W)\d{4}\] \S.*$")


def test_check_concise_lines(bad_file: Path):
    result = invoke("check", "--format", "concise", "bad.itb", cwd=bad_file.parent)
    assert result.exit_code == 1
    lines = result.stdout.splitlines()
    assert lines == [
        "bad.itb:11:38: error[E2003] unknown deployment `cartt` in the target of `scaled_to_zero`",
        "bad.itb:12:9: error[E2005] unknown fault `scale_to_zero`",
    ]
    for line in lines:
        assert CONCISE.match(line), line


def test_concise_over_every_error_fixture():
    folder = REPO / "tests" / "cases" / "errors"
    result = invoke("check", "--format", "concise", str(folder))
    assert result.exit_code == 1
    lines = result.stdout.splitlines()
    assert len(lines) >= len(list(folder.iterdir()))
    for line in lines:
        match = CONCISE.match(line)
        assert match, line
        assert match["path"].endswith("input.itb"), line
        assert int(match["line"]) >= 1 and int(match["column"]) >= 1


# ---- fmt ----------------------------------------------------------------------------------------------

UNFORMATTED = '''# The cart, badly laid out.
scenario "shop-cart" { domain sre
complexity   low     # how hard it is
    description "The cart deployment is scaled to zero."
  topology { namespace "shop"
  # the only workload
  deployment "cart" { image = "ghcr.io/example/cart:1.0" }
  }
fault scaled_to_zero on deployment "cart"   # the fault
}
'''


def test_fmt_check_then_fmt_then_check(tmp_path: Path):
    path = tmp_path / "cart.itb"
    path.write_text(UNFORMATTED, encoding="utf-8")

    proc = run_itbench("fmt", "--check", "cart.itb", cwd=tmp_path)
    assert proc.returncode == 1
    assert proc.stderr == "would reformat cart.itb\n"
    assert path.read_text(encoding="utf-8") == UNFORMATTED  # --check changes nothing

    diff = invoke("fmt", "--diff", "cart.itb", cwd=tmp_path)
    assert diff.exit_code == 1
    assert diff.stdout.startswith("--- a/cart.itb\n+++ b/cart.itb\n")
    assert path.read_text(encoding="utf-8") == UNFORMATTED

    result = invoke("fmt", "cart.itb", cwd=tmp_path)
    assert result.exit_code == 0
    assert result.stderr == "reformatted cart.itb\n"
    formatted = path.read_text(encoding="utf-8")
    assert formatted != UNFORMATTED
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cart.itb"]  # no temporary file left

    # comments are kept, each once
    for comment in ("# The cart, badly laid out.", "# how hard it is", "# the only workload", "# the fault"):
        assert formatted.count(comment) == 1, (comment, formatted)
    assert "  complexity low  # how hard it is\n" in formatted

    assert run_itbench("fmt", "--check", "cart.itb", cwd=tmp_path).returncode == 0
    again = invoke("fmt", "cart.itb", cwd=tmp_path)
    assert again.exit_code == 0 and again.stderr == ""
    assert path.read_text(encoding="utf-8") == formatted  # idempotent

    # and the formatted file still compiles to the same scenario
    assert invoke("check", "cart.itb", cwd=tmp_path).exit_code == 0


def test_fmt_check_of_the_scenario_library_is_clean():
    result = invoke("fmt", "--check", str(SCENARIOS))
    assert result.exit_code == 0, result.stderr


def test_fmt_of_a_file_with_a_syntax_error_changes_nothing(tmp_path: Path):
    path = tmp_path / "broken.itb"
    text = UNFORMATTED.replace('image = "ghcr', 'image "ghcr')
    path.write_text(text, encoding="utf-8")
    result = invoke("fmt", "broken.itb", cwd=tmp_path)
    assert result.exit_code == 1
    assert "error[E1002]" in result.stderr and "--> broken.itb:7:" in result.stderr
    assert path.read_text(encoding="utf-8") == text


# ---- explain, schema, apps, faults -------------------------------------------------------------------


def test_explain_a_code_prints_its_page():
    result = invoke("explain", "E2003")
    assert result.exit_code == 0
    assert result.stdout == explain("E2003")
    assert result.stdout.startswith("E2003: unknown name\n\n")
    assert 'fault nonexistent_image on deployment "cartt"' in result.stdout


def test_explain_is_case_insensitive_and_lists_every_code():
    assert invoke("explain", "e2009").stdout == explain("E2009")
    listing = invoke("explain")
    assert listing.exit_code == 0
    assert listing.stdout.splitlines() == [f"{c.code}  {c.title}" for c in CODES.values()]


def test_explain_unknown_code_exits_2():
    proc = run_itbench("explain", "E9999")
    assert proc.returncode == 2
    assert proc.stderr == ("error: `E9999` is neither a diagnostic code nor a fault; `itbench explain` lists the "
                           "codes, `itbench explain faults` the faults\n")
    assert proc.stdout == ""


def test_schema_prints_json_schema():
    result = invoke("schema")
    assert result.exit_code == 0
    schema = json.loads(result.stdout)
    assert schema["$schema"].startswith("https://json-schema.org/")
    assert schema.get("type") == "object" or "properties" in schema or "$defs" in schema


def test_apps_and_faults_list_the_libraries():
    apps = invoke("apps")
    assert apps.exit_code == 0
    assert [line.split()[0] for line in apps.stdout.splitlines()] == app_names()
    assert {"book-info", "opentelemetry-demo"} <= set(app_names())
    faults = invoke("faults")
    assert faults.exit_code == 0
    for kind in ("nonexistent_image", "scaled_to_zero", "network_chaos", "misconfigured_hpa"):
        assert re.search(rf"^{kind}\s+on ", faults.stdout, re.M), kind


# ---- compile ------------------------------------------------------------------------------------------


def _tree(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_compile_writes_the_bundle(tmp_path: Path):
    proc = run_itbench("compile", str(SHOP), "-o", str(tmp_path / "out"))
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    assert proc.stderr.endswith("1 file compiled, 0 errors\n")
    bundle = tmp_path / "out" / "shop-cart-modified-env"
    assert set(_tree(bundle)) == BUNDLE_FILES
    assert [p.name for p in (tmp_path / "out").iterdir()] == ["shop-cart-modified-env"]


def test_compile_twice_replaces_the_bundle(tmp_path: Path):
    out = tmp_path / "out"
    first = invoke("compile", str(SHOP), "-o", str(out))
    assert first.exit_code == 0, first.stderr
    bundle = out / "shop-cart-modified-env"
    before = _tree(bundle)
    # files an older compiler wrote (its bundle.lock lists them), and a file of the bundle changed
    (bundle / "stale.txt").write_text("left over from an older compiler\n")
    (bundle / "manifests" / "old.yaml").write_text("kind: Old\n")
    (bundle / "prompt.md").write_text("tampered\n")
    lock = json.loads((bundle / "bundle.lock").read_text())
    lock["files"].update({"stale.txt": "", "manifests/old.yaml": ""})
    (bundle / "bundle.lock").write_text(json.dumps(lock))

    second = invoke("compile", str(SHOP), "-o", str(out))
    assert second.exit_code == 0, second.stderr
    assert _tree(bundle) == before  # the same bytes, no leftovers
    assert [p.name for p in out.iterdir()] == ["shop-cart-modified-env"]  # no hidden staging or old folders

    # a file its bundle.lock does not list is someone else's: the bundle is not replaced
    (bundle / "manifests" / "mine.yaml").write_text("kind: Mine\n")
    third = invoke("compile", str(SHOP), "-o", str(out))
    assert third.exit_code == 2 and "manifests/mine.yaml" in third.stderr, third.stderr
    assert (bundle / "manifests" / "mine.yaml").read_text() == "kind: Mine\n"


def test_compile_quiet_and_json_print_nothing_on_success(tmp_path: Path):
    quiet = invoke("compile", "-q", str(SHOP), "-o", str(tmp_path / "a"))
    assert quiet.exit_code == 0 and quiet.stdout == "" and quiet.stderr == ""
    as_json = invoke("compile", "--format", "json", str(SHOP), "-o", str(tmp_path / "b"))
    assert as_json.exit_code == 0
    assert json.loads(as_json.stdout)["summary"] == {"errors": 0, "warnings": 0}
    assert _tree(tmp_path / "a") == _tree(tmp_path / "b")


def test_compile_two_files_with_the_same_scenario_name_is_e2002_at_the_second(tmp_path: Path):
    shutil.copy(SHOP, tmp_path / "a.itb")
    shutil.copy(SHOP, tmp_path / "b.itb")
    proc = run_itbench("compile", "a.itb", "b.itb", "-o", "out", cwd=tmp_path)
    assert proc.returncode == 1
    assert "Traceback" not in proc.stderr
    assert "error[E2002]: scenario `shop-cart-modified-env` is also compiled from a.itb" in proc.stderr
    assert " --> b.itb:" in proc.stderr
    assert [p.name for p in (tmp_path / "out").iterdir()] == ["shop-cart-modified-env"]  # the first, once
    check = run_itbench("check", "--format", "concise", "a.itb", "b.itb", cwd=tmp_path)
    assert check.returncode == 1 and "b.itb:" in check.stdout and "error[E2002]" in check.stdout


def test_compile_a_bad_file_writes_nothing(bad_file: Path):
    proc = run_itbench("compile", "bad.itb", "-o", "out", cwd=bad_file.parent)
    assert proc.returncode == 1
    assert "error[E2003]" in proc.stderr and "Traceback" not in proc.stderr
    out = bad_file.parent / "out"
    assert not out.exists() or list(out.iterdir()) == []


def test_compile_into_a_file_is_an_error(tmp_path: Path):
    (tmp_path / "taken").write_text("a file, not a folder\n")
    for target in ("taken", "taken/sub"):
        proc = run_itbench("compile", str(SHOP), "-o", target, cwd=tmp_path)
        assert proc.returncode == 2, (target, proc.stderr)
        assert "Traceback" not in proc.stderr
        assert "error" in proc.stderr.lower()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["taken"]


# ---- states --------------------------------------------------------------------------------------


STATE_FILES = ["faulty.json", "healthy.json", "solved.json"]
CISO = SCENARIOS / "ciso" / "cis-5-2-5-host-network-kyverno.itb"


def test_states_writes_the_three_states_as_json(tmp_path: Path):
    from itbench_dsl.checking import check_source
    from itbench_dsl.analysis.states import derive

    result = invoke("states", str(SHOP), str(CISO), "-o", str(tmp_path / "out"))
    assert result.exit_code == 0, result.stderr
    assert result.stderr.endswith("2 files checked, 0 errors\n")
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["cis-5-2-5-host-network-kyverno",
                                                                    "shop-cart-modified-env"]
    for source in (SHOP, CISO):
        scenario = check_source(source.read_bytes(), str(source)).result.scenario
        folder = tmp_path / "out" / scenario.name
        assert sorted(p.name for p in folder.iterdir()) == STATE_FILES  # CISO scenarios get the same three
        expected = derive(scenario)
        states = {}
        for name in STATE_FILES:
            data = (folder / name).read_bytes()
            assert data.endswith(b"}\n")
            states[name] = json.loads(data)
            assert data.decode("utf-8") == json.dumps(states[name], indent=1, sort_keys=True) + "\n"
            assert states[name] == json.loads(json.dumps(expected[name.removesuffix(".json")]))
            assert "resources" in states[name]
        assert states["faulty.json"] != states["healthy.json"]


def test_states_of_a_scenario_with_an_error_writes_nothing_and_exits_1(bad_file: Path):
    proc = run_itbench("states", "bad.itb", "-o", "out", cwd=bad_file.parent)
    assert proc.returncode == 1
    assert "error[E2003]" in proc.stderr and "Traceback" not in proc.stderr
    assert not (bad_file.parent / "out").exists()
    shutil.copy(SHOP, bad_file.parent / "good.itb")  # the other scenarios are still written
    result = invoke("states", str(bad_file), str(bad_file.parent / "good.itb"), "-o", str(bad_file.parent / "out"))
    assert result.exit_code == 1 and "E2003" in result.stderr
    assert [p.name for p in (bad_file.parent / "out").iterdir()] == ["shop-cart-modified-env"]


def test_states_are_the_same_bytes_on_every_run(tmp_path: Path):
    first = invoke("states", str(SHOP), "-o", str(tmp_path / "a"))
    second = invoke("states", str(SHOP), "-o", str(tmp_path / "b"))
    assert first.exit_code == second.exit_code == 0
    assert _tree(tmp_path / "a") == _tree(tmp_path / "b")
    folder = tmp_path / "a" / "shop-cart-modified-env"
    before = _tree(folder)
    (folder / "faulty.json").write_text("{}\n")
    (folder / "solved.json").unlink()
    again = invoke("states", str(SHOP), "-o", str(tmp_path / "a"))  # a folder of state files is replaced
    assert again.exit_code == 0, again.stderr
    assert _tree(folder) == before
    assert [p.name for p in (tmp_path / "a").iterdir()] == ["shop-cart-modified-env"]  # no staging left


def test_states_refuse_to_replace_what_they_did_not_write(tmp_path: Path):
    out = tmp_path / "out"
    (out / "shop-cart-modified-env").mkdir(parents=True)
    (out / "shop-cart-modified-env" / "notes.txt").write_text("mine\n")
    result = invoke("states", str(SHOP), "-o", str(out))
    assert result.exit_code == 2 and "notes.txt" in result.stderr
    assert [p.name for p in (out / "shop-cart-modified-env").iterdir()] == ["notes.txt"]
    shutil.rmtree(out / "shop-cart-modified-env")
    (out / "shop-cart-modified-env").write_text("a file where the folder goes\n")
    result = invoke("states", str(SHOP), "-o", str(out))
    assert result.exit_code == 2 and "not a folder" in result.stderr
    assert (out / "shop-cart-modified-env").read_text() == "a file where the folder goes\n"
    assert [p.name for p in out.iterdir()] == ["shop-cart-modified-env"]
    shutil.copy(SHOP, tmp_path / "a.itb")
    shutil.copy(SHOP, tmp_path / "b.itb")
    proc = run_itbench("states", "a.itb", "b.itb", "-o", "twice", cwd=tmp_path)
    assert proc.returncode == 2 and "scenario names must be unique" in proc.stderr
    assert not (tmp_path / "twice").exists()  # refused before anything is written


# ---- internal errors ------------------------------------------------------------------------------------


def _boom(*args, **kwargs):
    raise RuntimeError("boom in the compiler")


def test_internal_error_is_one_message_and_exit_2(monkeypatch, capsys):
    monkeypatch.setattr(compiler, "emit", _boom)  # a bug deep in the pipeline `check` runs
    with pytest.raises(SystemExit) as exit_info:
        cli_module.main(["check", str(SHOP)])
    assert exit_info.value.code == 2
    captured = capsys.readouterr()
    assert "internal error: RuntimeError: boom in the compiler" in captured.err
    assert "--debug" in captured.err
    assert "Traceback" not in captured.err + captured.out


def test_internal_error_in_compile_writes_nothing(monkeypatch, capsys, tmp_path: Path):
    monkeypatch.setattr(compiler, "emit", _boom)
    with pytest.raises(SystemExit) as exit_info:
        cli_module.main(["compile", str(SHOP), "-o", str(tmp_path / "out")])
    assert exit_info.value.code == 2
    captured = capsys.readouterr()
    assert "internal error: RuntimeError: boom in the compiler" in captured.err
    assert "Traceback" not in captured.err
    assert not (tmp_path / "out").exists() or list((tmp_path / "out").iterdir()) == []


def test_debug_lets_the_exception_propagate(monkeypatch):
    monkeypatch.setattr(compiler, "emit", _boom)
    with pytest.raises(RuntimeError, match="boom in the compiler"):
        cli_module.main(["--debug", "check", str(SHOP)])


def _exit_code(argv: list[str]) -> int:
    try:
        cli_module.main(argv)
    except SystemExit as exc:
        return exc.code
    return 0  # click's --version and --help return normally; the process then exits 0


def test_main_exit_codes_in_process(capsys, bad_file: Path):
    for argv, code in ((["check", str(SHOP)], 0), (["check", str(bad_file)], 1), (["check", "nope.itb"], 2),
                       (["explain", "E9999"], 2), (["explain", "E2003"], 0), (["--version"], 0), ([], 2),
                       (["check", "--format", "xml", str(SHOP)], 2)):
        assert _exit_code(argv) == code, argv
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err + captured.out
