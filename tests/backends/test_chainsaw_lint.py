"""`--target chainsaw` output against Chainsaw's own linter (`chainsaw lint test`).

Runs when the Chainsaw built by `tools/build_ecosystem.py chainsaw` is there (or ITBENCH_CHAINSAW
names one); skips otherwise. A few library scenarios of each family are compiled and every
`chainsaw-test.yaml` must lint clean; a broken test must not (the linter is really consulted).
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest
from support.compiling import SCENARIOS

from itbench_dsl.compiler import compile_source, target_files
from itbench_dsl.diagnostics import Diagnostics

REPO = Path(__file__).resolve().parents[2]


def _build_ecosystem():
    spec = importlib.util.spec_from_file_location("build_ecosystem", REPO / "tools" / "build_ecosystem.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("build_ecosystem", module)
    spec.loader.exec_module(module)
    return module


def _chainsaw() -> Path | None:
    given = os.environ.get("ITBENCH_CHAINSAW")
    if given:
        return Path(given) if Path(given).is_file() else None
    tools = _build_ecosystem()
    if not tools.go_binary():
        return None
    path = tools.binary_path("chainsaw")
    return path if path.is_file() else None


CHAINSAW = _chainsaw()
pytestmark = pytest.mark.skipif(CHAINSAW is None,
                                reason="Chainsaw is not built (python tools/build_ecosystem.py chainsaw)")

# one scenario of each shape: a workload fault, a mesh fault, a CISO policy, a FinOps scenario
SAMPLES = [
    "sre/otel-checkout-nonexistent-image.itb",
    "sre/bookinfo-details-invalid-selector.itb",
    "ciso/cis-5-2-5-host-network-kyverno.itb",
    *sorted(str(p.relative_to(SCENARIOS)) for p in (SCENARIOS / "finops").glob("*.itb"))[:1],
]


def _lint(path: Path) -> subprocess.CompletedProcess:
    return subprocess.run([str(CHAINSAW), "lint", "test", "-f", str(path)], capture_output=True, text=True,
                          timeout=120, stdin=subprocess.DEVNULL)


@pytest.mark.parametrize("path", SAMPLES)
def test_compiled_test_lints_clean(path: str, tmp_path: Path) -> None:
    diags = Diagnostics()
    result = compile_source((SCENARIOS / path).read_bytes(), str(SCENARIOS / path), diags)
    assert not diags.errors()
    files = target_files(result, "chainsaw", diags)
    out = tmp_path / "chainsaw-test.yaml"
    out.write_bytes(files["chainsaw-test.yaml"])
    proc = _lint(out)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_linter_refuses_a_broken_test(tmp_path: Path) -> None:
    broken = tmp_path / "chainsaw-test.yaml"
    broken.write_text("apiVersion: chainsaw.kyverno.io/v1alpha1\nkind: Test\nmetadata:\n  name: x\n"
                      "spec:\n  steps:\n  - try:\n    - aply:\n        file: x.yaml\n")
    assert _lint(broken).returncode != 0
