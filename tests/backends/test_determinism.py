"""The same sources give the same bytes: across hash seeds, locales and compile order.

Every scenario of `scenarios/` is compiled by `python -m itbench_dsl compile ... -o DIR` in
subprocesses that differ in PYTHONHASHSEED (and, where the locale is installed, in LC_ALL/LANG),
and the output trees must be byte-identical. The scenarios are also compiled in reverse order
in one process, which must not change any bundle (no state leaks from one compile into the next).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SCENARIOS = sorted((REPO / "scenarios").rglob("*.itb"))


def _tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def _compile(out: Path, files: list[Path], **env: str) -> dict[str, bytes]:
    environment = {k: v for k, v in os.environ.items() if not k.startswith(("LC_", "PYTHONHASHSEED"))}
    environment.update(env)
    environment["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), environment.get("PYTHONPATH")]))
    run = subprocess.run([sys.executable, "-m", "itbench_dsl", "compile", *map(str, files), "-o", str(out)],
                         cwd=REPO, env=environment, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, f"compile failed ({env}):\n{run.stdout}\n{run.stderr}"
    tree = _tree(out)
    assert tree, "the compile wrote nothing"
    return tree


def _assert_same(a: dict[str, bytes], b: dict[str, bytes], what: str) -> None:
    assert sorted(a) == sorted(b), f"{what}: different files: {sorted(set(a) ^ set(b))}"
    different = [name for name in a if a[name] != b[name]]
    assert not different, f"{what}: different bytes in {different}"


def _locale_available(name: str) -> bool:
    """Whether the C library can set this locale (it may not be generated on this machine)."""
    probe = subprocess.run([sys.executable, "-c", f"import locale; locale.setlocale(locale.LC_ALL, {name!r})"],
                           capture_output=True, timeout=30)
    return probe.returncode == 0


@pytest.fixture(scope="module")
def baseline(tmp_path_factory) -> dict[str, bytes]:
    return _compile(tmp_path_factory.mktemp("seed0"), SCENARIOS, PYTHONHASHSEED="0", LC_ALL="C.UTF-8", LANG="C.UTF-8")


def test_every_scenario_is_compiled(baseline):
    bundles = {name.split("/", 1)[0] for name in baseline}
    assert len(bundles) == len(SCENARIOS) >= 8


def test_hash_seed_does_not_change_the_output(baseline, tmp_path: Path):
    other = _compile(tmp_path, SCENARIOS, PYTHONHASHSEED="12345", LC_ALL="C.UTF-8", LANG="C.UTF-8")
    _assert_same(baseline, other, "PYTHONHASHSEED 0 vs 12345")


@pytest.mark.parametrize("name", ["en_US.UTF-8", "POSIX"])
def test_locale_does_not_change_the_output(baseline, tmp_path: Path, name: str):
    """POSIX is always there (Python coerces it to UTF-8); en_US.UTF-8 only where it is generated."""
    if not _locale_available(name):
        pytest.skip(f"the {name} locale is not installed on this machine (locale -a)")
    other = _compile(tmp_path, SCENARIOS, PYTHONHASHSEED="12345", LC_ALL=name, LANG=name)
    _assert_same(baseline, other, f"C.UTF-8 vs {name}")


def test_compile_order_does_not_change_the_output(baseline, tmp_path: Path):
    """Reverse order, one process: each bundle is what it is when compiled first."""
    other = _compile(tmp_path, list(reversed(SCENARIOS)), PYTHONHASHSEED="0", LC_ALL="C.UTF-8", LANG="C.UTF-8")
    _assert_same(baseline, other, "sorted vs reversed order")


def test_in_process_compile_matches_the_cli(baseline):
    """compile_source in this process (any hash seed, any previous compiles) gives the CLI's bytes."""
    from itbench_dsl.compiler import compile_source
    from itbench_dsl.diagnostics import Diagnostics

    for path in reversed(SCENARIOS):
        diags = Diagnostics()
        result = compile_source(path.read_bytes(), os.path.relpath(path, REPO), diags)
        assert not diags.errors()
        for name, content in result.files.items():
            assert baseline[f"{result.name}/{name}"] == content, f"{result.name}/{name}"
