"""docs/ci.md's recipe for a repository of scenarios works: a scratch repository built from
docs/ci/scenarios-repo/ with a wheel of this checkout installs itbench from its own requirement (no
PyPI, no source checkout on the path), and its workflow's commands and its pre-commit hooks pass on
clean scenarios and fail on a broken one. The requirement's other form, a Git URL and tag, installs
the same itbench (from this repository's own history)."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]
RECIPE = REPO / "docs" / "ci" / "scenarios-repo"
# the recipe's own scenarios: the scratch repository is the folder as copied, nothing added
SCENARIOS = sorted(p.relative_to(RECIPE / "scenarios").as_posix() for p in (RECIPE / "scenarios").rglob("*.itb"))


def _requirement() -> str:
    lines = [line.strip() for line in (RECIPE / "itbench-requirements.txt").read_text().splitlines()]
    [line] = [line for line in lines if line and not line.startswith("#")]
    return line


@pytest.fixture(scope="module")
def scratch(tmp_path_factory):
    """The recipe copied, the wheel it names built from this checkout into tools/, itbench installed from the
    requirement into its own folder (the current interpreter provides the dependencies)."""
    pytest.importorskip("hatchling", reason="building the wheel needs hatchling (pip install hatchling)")
    root = tmp_path_factory.mktemp("ci-recipe")
    repo = root / "scenarios-repo"
    shutil.copytree(RECIPE, repo)
    wheels = root / "wheels"
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
                            "-w", str(wheels), str(REPO)], capture_output=True, text=True, check=False)
    assert built.returncode == 0, built.stderr
    [wheel] = wheels.glob("*.whl")
    requirement = _requirement()
    assert requirement == f"./tools/{wheel.name}", "itbench-requirements.txt must name the wheel of this release"
    shutil.copy(wheel, repo / "tools" / wheel.name)  # step 1 of docs/ci.md
    site = root / "site"
    installed = subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "--no-index", "-q",
                                "--target", str(site), "-r", "itbench-requirements.txt"],
                               cwd=repo, capture_output=True, text=True, check=False)
    assert installed.returncode == 0, installed.stderr
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    env["PYTHONPATH"] = str(site)
    env["PATH"] = f"{site / 'bin'}{os.pathsep}{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    return repo, site, env


def run(command: str, repo: Path, env: dict) -> subprocess.CompletedProcess:
    return subprocess.run(shlex.split(command), cwd=repo, env=env, capture_output=True, text=True, check=False,
                          timeout=600)


def workflow_commands() -> list[str]:
    workflow = yaml.safe_load((RECIPE / ".github" / "workflows" / "itbench.yml").read_text())
    steps = [step for job in workflow["jobs"].values() for step in job["steps"]]
    return [step["run"] for step in steps if "run" in step and step["run"].startswith("itbench ")]


def test_itbench_comes_from_the_wheel(scratch):
    repo, site, env = scratch
    found = run(f"{sys.executable} -c 'import itbench_dsl; print(itbench_dsl.__file__)'", repo, env)
    assert found.returncode == 0 and Path(found.stdout.strip()).is_relative_to(site), found.stdout
    assert run("itbench --version", repo, env).returncode == 0


def test_the_workflow_and_the_hooks_pass_clean_scenarios(scratch):
    repo, _, env = scratch
    assert SCENARIOS, "the recipe ships example scenarios, so its workflow has something to check as copied"
    commands = workflow_commands()
    assert any(c.startswith("itbench check --strict") for c in commands) and any("fmt --check" in c for c in commands)
    for command in commands:
        result = run(command, repo, env)
        assert result.returncode == 0, (command, result.stdout, result.stderr)
    files = " ".join(f"scenarios/{name}" for name in SCENARIOS)
    hooks = yaml.safe_load((RECIPE / ".pre-commit-config.yaml").read_text())["repos"][0]["hooks"]
    assert {h["id"] for h in hooks} == {"itbench-check", "itbench-fmt"}
    for hook in hooks:  # as pre-commit runs a `language: system` hook: the entry, then the staged files
        result = run(f"{hook['entry']} {files}", repo, env)
        assert result.returncode == 0, (hook["id"], result.stderr)


def test_the_check_fails_a_broken_scenario(scratch):
    repo, _, env = scratch
    broken = repo / "scenarios" / "sre" / "broken.itb"
    text = (RECIPE / "scenarios" / "sre" / "otel-checkout-nonexistent-image.itb").read_text().replace(
        'deployment "checkout" {', 'deployment "checkoutt" {')
    broken.write_text(text.replace('scenario "otel-checkout-nonexistent-image"', 'scenario "broken"'))
    try:
        command = next(c for c in workflow_commands() if c.startswith("itbench check"))
        result = run(command, repo, env)
        assert result.returncode == 1 and "::error file=scenarios/sre/broken.itb" in result.stdout
    finally:
        broken.unlink()


def test_the_git_url_requirement_installs_itbench(scratch, tmp_path):
    """The Git URL form the requirement file documents, pointed at this repository and its current commit,
    installs an itbench that checks the scratch repository as the wheel's does."""
    import re

    repo, _, env = scratch
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=REPO, capture_output=True, text=True, check=False)
    if shutil.which("git") is None or head.returncode != 0:
        pytest.skip("this checkout is not a Git repository")
    documented = re.search(r"`(itbench-dsl @ git\+\S+)`", (RECIPE / "itbench-requirements.txt").read_text())
    assert documented, "itbench-requirements.txt must show the Git URL form"
    url, _, tag = documented.group(1).rpartition("@")
    assert url.startswith("itbench-dsl @ git+https://") and tag
    # a local repository as a URL with a host (`file://localhost/...`): pip's requirement syntax wants one
    requirement = f"itbench-dsl @ git+file://localhost{REPO.as_posix()}@{head.stdout.strip()}"
    (tmp_path / "requirements.txt").write_text(requirement + "\n")
    site = tmp_path / "site"
    installed = subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "--no-index", "--no-build-isolation",
                                "-q", "--target", str(site), "-r", str(tmp_path / "requirements.txt")],
                               cwd=repo, capture_output=True, text=True, check=False, timeout=600)
    assert installed.returncode == 0, installed.stderr
    env = {**env, "PYTHONPATH": str(site),
           "PATH": f"{site / 'bin'}{os.pathsep}{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    found = run(f"{sys.executable} -c 'import itbench_dsl; print(itbench_dsl.__file__)'", repo, env)
    assert Path(found.stdout.strip()).is_relative_to(site), found.stdout
    command = next(c for c in workflow_commands() if c.startswith("itbench check"))
    result = run(command, repo, env)
    assert result.returncode == 0, (result.stdout, result.stderr)
