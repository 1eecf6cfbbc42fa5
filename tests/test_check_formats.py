"""`itbench check` output formats, --strict and the default paths.

Golden files: `tests/cases/check-formats/<format>.txt` is what `itbench check --format <format>
clean.itb errors.itb warnings.itb` prints, run in that folder (stdout; stderr for `human`, which
prints there). The package version is written `{version}`. Regenerate with
`python3 tests/test_check_formats.py --update` and review the diff.

The SARIF output is validated against the vendored official SARIF 2.1.0 schema.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from itbench_dsl import __version__  # noqa: E402
from itbench_dsl import cli as cli_module  # noqa: E402
from itbench_dsl.codes import CODES, explain  # noqa: E402
from itbench_dsl.diagnostics import (  # noqa: E402
    GITHUB_ANNOTATIONS_PER_STEP,
    Diagnostic,
    Diagnostics,
    Note,
    code_anchor,
    github_data,
    github_property,
    render_github,
    render_sarif,
)
from itbench_dsl.source import SourceFile  # noqa: E402

CASES = REPO / "tests" / "cases" / "check-formats"
INPUTS = ("clean.itb", "errors.itb", "warnings.itb")
FORMATS = ("human", "concise", "json", "github", "sarif")
SARIF_SCHEMA = REPO / "itbench_dsl" / "schemas" / "sarif" / "sarif-schema-2.1.0.json"


def invoke(*args: str, cwd: Path):
    try:
        runner = CliRunner(mix_stderr=False)
    except TypeError:  # click >= 8.2 keeps stdout and stderr apart
        runner = CliRunner()
    old = os.getcwd()
    os.chdir(cwd)
    try:
        return runner.invoke(cli_module.cli, list(args), catch_exceptions=False, env={"NO_COLOR": "1"})
    finally:
        os.chdir(old)


def render(fmt: str) -> tuple[str, int, str]:
    """(the golden text, the exit code, stderr) of one format over the three inputs."""
    result = invoke("check", "--format", fmt, *INPUTS, cwd=CASES)
    text = result.stderr if fmt == "human" else result.stdout
    return text.replace(__version__, "{version}"), result.exit_code, result.stderr


_RUNS: dict[str, tuple[str, int, str]] = {}


def run(fmt: str) -> tuple[str, int, str]:
    if fmt not in _RUNS:
        _RUNS[fmt] = render(fmt)
    return _RUNS[fmt]


# ---- golden output -----------------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", FORMATS)
def test_golden_output(fmt: str):
    text, code, _ = run(fmt)
    expected = (CASES / f"{fmt}.txt").read_text(encoding="utf-8")
    assert text == expected, f"run `python3 tests/test_check_formats.py --update` and review the diff ({fmt})"
    assert code == 1  # errors.itb has errors


def test_every_format_reports_the_same_diagnostics():
    data = json.loads(run("json")[0])
    facts = [(d["path"], d["line"], d["column"], d["code"]) for d in data["diagnostics"]]
    assert {code for _, _, _, code in facts} == {"E2010", "E2003", "W2001", "W2004", "W2007"}
    concise = run("concise")[0].splitlines()
    assert len(concise) == len(facts)
    for line, (path, li, co, code) in zip(concise, facts):
        assert line.startswith(f"{path}:{li}:{co}: {'error' if code[0] == 'E' else 'warning'}[{code}] ")
    github = [line for line in run("github")[0].splitlines() if line.startswith(("::error", "::warning"))]
    assert len(github) == len(facts)
    for line, (path, li, co, code) in zip(github, facts):
        assert f"file={path},line={li},col={co}," in line and f",title={code}::" in line
    sarif = json.loads(run("sarif")[0])
    results = sarif["runs"][0]["results"]
    assert [(r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
             r["locations"][0]["physicalLocation"]["region"]["startLine"],
             r["locations"][0]["physicalLocation"]["region"]["startColumn"], r["ruleId"]) for r in results] == facts
    human = run("human")[0]
    assert [f"{d['severity']}[{d['code']}]" for d in data["diagnostics"]] == [
        line.split(":", 1)[0] for line in human.splitlines() if line.startswith(("error[", "warning["))]


# ---- SARIF ---------------------------------------------------------------------------------------------


def _sarif_validator():
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads(SARIF_SCHEMA.read_text(encoding="utf-8"))
    cls = jsonschema.Draft4Validator
    cls.check_schema(schema)
    return cls(schema, format_checker=cls.FORMAT_CHECKER)


def test_sarif_is_valid_against_the_official_schema():
    validator = _sarif_validator()
    log = json.loads(run("sarif")[0].replace("{version}", __version__))
    errors = sorted(validator.iter_errors(log), key=lambda e: list(e.path))
    assert not errors, [f"{list(e.path)}: {e.message}" for e in errors[:5]]
    # and the validator does reject a broken log (the schema is really applied)
    broken = json.loads(json.dumps(log))
    broken["runs"][0]["results"][0]["level"] = "fatal"
    del broken["runs"][0]["tool"]["driver"]["name"]
    assert len(list(validator.iter_errors(broken))) >= 2


def test_sarif_rules_carry_the_explain_pages():
    log = json.loads(run("sarif")[0].replace("{version}", __version__))
    (run_,) = log["runs"]
    assert run_["columnKind"] == "unicodeCodePoints"
    driver = run_["tool"]["driver"]
    assert driver["version"] == __version__ and driver["informationUri"].startswith("https://")
    rules = driver["rules"]
    used = sorted({r["ruleId"] for r in run_["results"]})
    assert [r["id"] for r in rules] == used  # one rule per code used, no more
    for rule in rules:
        code = rule["id"]
        assert rule["shortDescription"]["text"] == CODES[code].title
        assert rule["help"]["text"] == explain(code)
        assert rule["fullDescription"]["text"] and rule["fullDescription"]["text"] in " ".join(explain(code).split())
        assert rule["helpUri"].endswith(f"diagnostics.md#{code_anchor(code)}")
        assert rule["defaultConfiguration"]["level"] == CODES[code].severity
    for result in run_["results"]:
        assert rules[result["ruleIndex"]]["id"] == result["ruleId"]
        assert result["level"] == CODES[result["ruleId"]].severity


def test_help_uri_anchors_exist_in_the_generated_diagnostics_page():
    page = (REPO / "docs" / "diagnostics.md").read_text(encoding="utf-8")
    headings = {line[4:] for line in page.splitlines() if line.startswith("### ")}
    for code in ("E2003", "W2001", "E4003"):
        heading = f"{code}: {CODES[code].title}"
        assert heading in headings
        # GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens
        assert code_anchor(code) == "".join(c for c in heading.lower() if c.isalnum() or c in " -").replace(" ", "-")


def test_columns_are_unicode_code_points():
    text = (CASES / "errors.itb").read_text(encoding="utf-8")
    line_number, line = next((i, t) for i, t in enumerate(text.splitlines(), 1) if "lowest" in t)
    assert any(ord(c) > 0xFFFF for c in line[: line.index("complexity")])  # an astral character before the span
    column = line.index("complexity lowest") + 1  # code points, 1-based
    assert column != len(line[: column - 1].encode("utf-8")) + 1  # bytes would differ
    assert column != len(line[: column - 1].encode("utf-16-le")) // 2 + 1  # and so would UTF-16 units
    data = json.loads(run("json")[0])
    e2010 = next(d for d in data["diagnostics"] if d["code"] == "E2010")
    assert (e2010["line"], e2010["column"], e2010["end_column"]) == (line_number, column, column + len("complexity lowest"))
    sarif = json.loads(run("sarif")[0])
    region = next(r for r in sarif["runs"][0]["results"] if r["ruleId"] == "E2010")["locations"][0]["physicalLocation"]["region"]
    assert region == {"startLine": line_number, "startColumn": column, "endLine": line_number,
                      "endColumn": column + len("complexity lowest")}
    assert f"line={line_number},col={column}," in run("github")[0]


def test_sarif_of_a_clean_run_has_no_results_and_no_rules():
    result = invoke("check", "--format", "sarif", "clean.itb", cwd=CASES)
    assert result.exit_code == 0
    log = json.loads(result.stdout)
    assert log["runs"][0]["results"] == [] and log["runs"][0]["tool"]["driver"]["rules"] == []
    assert not list(_sarif_validator().iter_errors(log))


def test_sarif_uri_is_relative_and_percent_encoded():
    diags = Diagnostics()
    diags.add(Diagnostic("E2003", "m", "scenarios/my scenario #1.itb"))
    log = json.loads(render_sarif(diags))
    location = log["runs"][0]["results"][0]["locations"][0]["physicalLocation"]
    assert location["artifactLocation"]["uri"] == "scenarios/my%20scenario%20%231.itb"
    assert "region" not in location  # a diagnostic without a span points at the file


# ---- github --------------------------------------------------------------------------------------------


def test_github_escapes_data_and_properties():
    assert github_data("100% done\r\nnext") == "100%25 done%0D%0Anext"
    assert github_data("a:b,c") == "a:b,c"  # data keeps `:` and `,`
    assert github_property("dir,1/a:b.itb") == "dir%2C1/a%3Ab.itb"
    assert github_property("50%\n") == "50%25%0A"
    diags = Diagnostics()
    source = SourceFile("odd,name:1.itb", 'scenario "x" {\n}\n')
    diags.sources[source.path] = source
    diags.add(Diagnostic("E2003", "unknown `a%b`\nsecond line, with: colon", source.path, source.span(10, 11),
                         help="100%", notes=(Note("see: here"),)))
    (line,) = render_github(diags).splitlines()
    assert line == ("::error file=odd%2Cname%3A1.itb,line=1,col=11,endLine=1,endColumn=12,title=E2003::"
                    "unknown `a%25b`%0Asecond line, with: colon%0Anote: see: here%0Ahelp: 100%25")


def test_github_golden_escapes_the_user_name():
    # errors.itb names a deployment `cart%0A,x:1`: it must not turn into a newline in the annotation
    text = run("github")[0]
    assert "`cart%250A,x:1`" in text
    assert all(line.startswith("::") for line in text.splitlines())


def _unescape(text: str) -> str:
    return text.replace("%0D", "\r").replace("%0A", "\n").replace("%3A", ":").replace("%2C", ",").replace("%25", "%")


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("%:,\r\na0AD")) | st.characters(), max_size=40))
def test_github_escaping_round_trips(text: str):
    data, prop = github_data(text), github_property(text)
    assert "\n" not in data and "\r" not in data
    assert not {"\n", "\r", ":", ","} & set(prop)
    assert _unescape(data) == text and _unescape(prop) == text


def _warnings(n: int, code: str = "W2004") -> Diagnostics:
    diags = Diagnostics()
    for i in range(n):
        diags.add(Diagnostic(code, f"warning {i}", f"s{i:02}.itb"))
    return diags


def test_github_per_step_limit_adds_a_notice_but_emits_everything():
    limit = GITHUB_ANNOTATIONS_PER_STEP
    assert limit == 10
    lines = render_github(_warnings(limit)).splitlines()
    assert len(lines) == limit and not any(line.startswith("::notice") for line in lines)
    lines = render_github(_warnings(limit + 3)).splitlines()
    assert sum(line.startswith("::warning ") for line in lines) == limit + 3
    assert lines[-1].startswith("::notice title=itbench check::")
    assert "13 warnings found" in lines[-1] and "not annotated: 3 warnings " in lines[-1]
    both = _warnings(limit + 1)
    for i in range(2):
        both.add(Diagnostic("E2003", f"e{i}", "x.itb"))
    notice = render_github(both).splitlines()[-1]
    assert "2 errors and 11 warnings found" in notice and "not annotated: 1 warning " in notice


# ---- exit codes, --strict, default paths --------------------------------------------------------------


@pytest.mark.parametrize(("files", "strict", "code"), [
    (["clean.itb"], False, 0), (["clean.itb"], True, 0),
    (["warnings.itb"], False, 0), (["warnings.itb"], True, 1),
    (["errors.itb"], False, 1), (["errors.itb"], True, 1),
])
def test_strict_exit_codes(files: list[str], strict: bool, code: int):
    result = invoke("check", "--format", "concise", *(["--strict"] if strict else []), *files, cwd=CASES)
    assert result.exit_code == code, result.stdout + result.stderr
    if files == ["warnings.itb"]:
        assert "warning[W2004]" in result.stdout and "error[" not in result.stdout


def test_ignore_and_lint_allow(tmp_path: Path):
    result = invoke("check", "--format", "concise", "--ignore", "w2004,W2001", "--ignore", "W2008", "--strict",
                    "clean.itb", "warnings.itb", cwd=CASES)
    assert [line.split()[1] for line in result.stdout.splitlines()] == ["warning[W2007]"]
    assert result.exit_code == 1
    for code, why in (("E2003", "only warnings"), ("W9999", "no such diagnostic code")):
        result = invoke("check", "--ignore", code, "clean.itb", cwd=CASES)
        assert result.exit_code == 2 and why in result.stderr
    # a duplicate is a pair: one file allowing W2001 allows the pair, whichever order the files are given in
    text = (CASES / "warnings.itb").read_text(encoding="utf-8")
    (tmp_path / "a.itb").write_text(text.replace("  domain sre\n", '  domain sre\n  metadata {\n'
                                                 '    lint_allow = ["W2007", "W2001", "W2004"]\n  }\n'), encoding="utf-8")
    (tmp_path / "b.itb").write_bytes((CASES / "clean.itb").read_bytes())
    for order in (("a.itb", "b.itb"), ("b.itb", "a.itb")):
        result = invoke("check", "--format", "concise", "--strict", *order, cwd=tmp_path)
        assert result.stdout == "" and result.exit_code == 0, order
    result = invoke("check", "--format", "concise", "--strict", "a.itb", cwd=tmp_path)
    assert result.stdout == "" and result.exit_code == 0


def test_missing_path_is_exit_2_in_every_format():
    for fmt in FORMATS:
        result = invoke("check", "--format", fmt, "--strict", "no-such.itb", cwd=CASES)
        assert result.exit_code == 2 and result.stdout == ""


def test_no_path_checks_the_scenarios_folder_or_the_current_folder(tmp_path: Path):
    (tmp_path / "scenarios").mkdir()
    (tmp_path / "scenarios" / "a.itb").write_bytes((CASES / "warnings.itb").read_bytes())
    (tmp_path / "other.itb").write_bytes((CASES / "errors.itb").read_bytes())  # outside scenarios/: not checked
    result = invoke("check", "--format", "concise", cwd=tmp_path)
    assert result.exit_code == 0 and "scenarios/a.itb:" in result.stdout and "other.itb" not in result.stdout
    (tmp_path / "scenarios" / "a.itb").unlink()
    (tmp_path / "scenarios").rmdir()
    result = invoke("check", "--format", "concise", cwd=tmp_path)
    assert result.exit_code == 1 and result.stdout.startswith("other.itb:")
    (tmp_path / "other.itb").unlink()
    result = invoke("check", cwd=tmp_path)
    assert result.exit_code == 2 and "no PATH given" in result.stderr


def test_several_processes_give_the_same_bytes():
    # --jobs 2 checks the files in two processes; the output is the same, byte for byte
    for fmt in ("json", "github"):
        result = invoke("check", "--jobs", "2", "--format", fmt, *INPUTS, cwd=CASES)
        assert result.exit_code == 1
        assert result.stdout.replace(__version__, "{version}") == run(fmt)[0]


def test_human_and_github_print_a_summary_on_stderr():
    assert run("github")[2] == "3 files checked, 2 errors, 3 warnings\n"
    assert run("human")[0].endswith("3 files checked, 2 errors, 3 warnings\n")
    assert run("sarif")[2] == "" and run("json")[2] == ""


# ---- hooks, action, attributes --------------------------------------------------------------------------


def _yaml(path: Path):
    yaml = pytest.importorskip("yaml")
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def test_pre_commit_hooks_run_existing_commands_on_itb_files():
    import re

    hooks = {h["id"]: h for h in _yaml(REPO / ".pre-commit-hooks.yaml")}
    assert set(hooks) == {"itbench-check", "itbench-fmt"}
    for hook in hooks.values():
        pattern = re.compile(hook["files"])
        assert pattern.search("scenarios/sre/a.itb") and not pattern.search("a.itb.bak") and not pattern.search("a.py")
        program, command = hook["entry"].split()
        assert program == "itbench" and command in cli_module.COMMANDS
        assert hook["language"] == "python"
    assert hooks["itbench-check"]["require_serial"] is True  # the cross-file rules see every file


def test_action_passes_inputs_through_the_environment():
    action = _yaml(REPO / "action.yml")
    assert action["runs"]["using"] == "composite"
    assert {"paths", "strict", "requirements", "args", "sarif"} <= set(action["inputs"])
    assert "version" not in action["inputs"]  # itbench is not on PyPI: a version to install from there cannot work
    install = next(s["run"] for s in action["runs"]["steps"] if s.get("name") == "Install itbench")
    assert "pip install --quiet -r \"$ITBENCH_REQUIREMENTS\"" in install and "itbench-dsl==" not in install
    runs = [step["run"] for step in action["runs"]["steps"] if "run" in step]
    assert any("itbench check --format github" in run for run in runs)
    for run in runs:
        assert "${{" not in run  # no expression is substituted into a script: inputs arrive as variables
    uploads = [s for s in action["runs"]["steps"] if str(s.get("uses", "")).startswith("github/codeql-action/upload-sarif")]
    assert len(uploads) == 1 and "inputs.sarif" in uploads[0]["if"]
    workflow = _yaml(REPO / "docs" / "ci" / "example-workflow.yml")
    steps = workflow["jobs"]["check"]["steps"]
    assert any(step.get("uses") == "./" and step["with"]["strict"] is True for step in steps)


def test_action_check_step_runs(tmp_path: Path):
    """The action's check step, run by bash with `itbench` on PATH: annotations, SARIF and the exit code."""
    import shutil
    import stat
    import subprocess

    bash = shutil.which("bash")
    if bash is None:
        pytest.skip("no bash")
    action = _yaml(REPO / "action.yml")
    script = next(s["run"] for s in action["runs"]["steps"] if s.get("id") == "check")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    shim = bin_dir / "itbench"
    shim.write_text(f'#!{bash}\nexec "{sys.executable}" -m itbench_dsl "$@"\n', encoding="utf-8")
    shim.chmod(shim.stat().st_mode | stat.S_IEXEC)
    work = tmp_path / "repo"
    (work / "scenarios").mkdir(parents=True)
    (work / "scenarios" / "w.itb").write_bytes((CASES / "warnings.itb").read_bytes())
    output = tmp_path / "github-output"

    def step(strict: str, paths: str = "", sarif: str = "") -> subprocess.CompletedProcess:
        env = dict(os.environ, PATH=f"{bin_dir}{os.pathsep}{os.environ['PATH']}", GITHUB_OUTPUT=str(output),
                   CHECK_PATHS=paths, CHECK_STRICT=strict, CHECK_ARGS="", CHECK_SARIF=sarif,
                   PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
        output.write_text("")
        return subprocess.run([bash, "-c", script], cwd=work, env=env, capture_output=True, text=True, timeout=120)

    proc = step("false", sarif="out.sarif")
    assert proc.returncode == 0, proc.stderr
    assert output.read_text() == "exit-code=0\n"
    assert "::warning file=scenarios/w.itb,line=5," in proc.stdout  # W2007, with the default paths
    assert json.loads((work / "out.sarif").read_text())["runs"][0]["results"]
    proc = step("true", paths="scenarios/*")  # strict; a `*` is a path, not a glob
    assert output.read_text() == "exit-code=2\n"  # no file named `*`: a usage error


def test_gitattributes_for_itb_files():
    lines = [line.split() for line in (REPO / ".gitattributes").read_text().splitlines() if line.startswith("*.itb")]
    assert len(lines) == 1
    attributes = set(lines[0][1:])
    assert {"text", "eol=lf"} <= attributes and any(a.startswith("linguist-language=") for a in attributes)


def update() -> int:
    changed = 0
    for fmt in FORMATS:
        text = render(fmt)[0]
        path = CASES / f"{fmt}.txt"
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8", newline="\n")
            changed += 1
            print(f"wrote {path.relative_to(REPO)}")
    print(f"{changed} golden file(s) changed", file=sys.stderr)
    return 0


if __name__ == "__main__":
    if "--update" not in sys.argv[1:]:
        sys.exit("usage: python3 tests/test_check_formats.py --update")
    sys.exit(update())
