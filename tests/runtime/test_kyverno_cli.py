"""`itbench policy-test` side by side with the real `kyverno test`, suite by suite.

Runs when the Kyverno CLI built by `tools/build_ecosystem.py kyverno` is there (or ITBENCH_KYVERNO
names one) and ../shared holds the reference suites; skips otherwise. Every reference suite must
agree result by result: what Kyverno finds met, our matcher finds met, and what Kyverno finds not
met, ours does not either. KNOWN_DIFFERENCES lists the suites where Kyverno's answer cannot be
reproduced offline, each with the reason (docs/policy-test.md).
"""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SUITES_ROOT = REPO.parent / "shared" / "reference" / "kyverno" / "policy-tests"


def _load_module(name: str, path: Path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


build_ecosystem = _load_module("build_ecosystem", REPO / "tools" / "build_ecosystem.py")
agreement = _load_module("kyverno_agreement", REPO / "benchmarks" / "kyverno_agreement.py")


def _kyverno() -> Path | None:
    given = os.environ.get("ITBENCH_KYVERNO")
    if given:
        return Path(given) if Path(given).is_file() else None
    if not build_ecosystem.go_binary():
        return None
    path = build_ecosystem.binary_path("kyverno")
    return path if path.is_file() else None


KYVERNO = _kyverno()
SUITES = agreement.find_suites([SUITES_ROOT]) if SUITES_ROOT.is_dir() else []

# Suites whose Kyverno answer is not reproducible offline: relative folder -> why.
KNOWN_DIFFERENCES: dict[str, str] = {}

pytestmark = [
    pytest.mark.skipif(KYVERNO is None, reason="the Kyverno CLI is not built (python tools/build_ecosystem.py kyverno)"),
    pytest.mark.skipif(not SUITES, reason=f"reference suites not found under {SUITES_ROOT}"),
]


@pytest.fixture(scope="module")
def our_reports() -> dict:
    return agreement.ours(SUITES)


def _id(suite: Path) -> str:
    return str(suite.relative_to(SUITES_ROOT.resolve()).parent)


@pytest.mark.parametrize("suite", SUITES, ids=[_id(s) for s in SUITES])
def test_suite_agrees_with_kyverno(suite: Path, our_reports: dict) -> None:
    if _id(suite) in KNOWN_DIFFERENCES:
        pytest.skip(KNOWN_DIFFERENCES[_id(suite)])
    mine = our_reports[suite]
    rows, output = agreement.kyverno_rows(str(KYVERNO), suite)
    assert rows is not None, f"kyverno test could not run the suite:\n{output[-2000:]}"
    comparison = agreement.compare_suite(mine, rows)
    assert comparison["agree"], comparison["reason"]


def test_comparison_sees_a_disagreement(tmp_path: Path) -> None:
    """The comparison is not vacuous: a suite whose expectation is wrong is not met by either,
    and a result Kyverno prints no row for never counts as agreement."""
    suite = SUITES[0]
    rows, _ = agreement.kyverno_rows(str(KYVERNO), suite)
    mine = agreement.ours([suite])[suite]
    flipped = [dict(r, RESULT="Fail" if str(r.get("RESULT")).lower() == "pass" else "Pass") for r in rows]
    assert not agreement.compare_suite(mine, flipped)["agree"]
    assert not agreement.compare_suite(mine, [])["agree"]
