"""Bad input of every kind, through the real command line.

Each case is compiled with `python -m itbench_dsl compile FILE -o OUT` in a fresh folder and must
give exit code 1, a located diagnostic (`--> path:line:col`) with the right code, no traceback,
and no output at all (OUT empty or absent). Inputs that could exhaust the compiler (deep nesting,
a 5 MB file) are refused up front; a 60 s subprocess timeout guards against hangs, with no timed
assertion.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from itbench_dsl.compiler import compile_source
from itbench_dsl.diagnostics import Diagnostics

REPO = Path(__file__).resolve().parents[2]
HANG_GUARD = 60  # seconds; a guard against hangs, not a speed assertion

GOOD = '''scenario "shop-cart" {
  domain sre
  complexity low
  description "The cart deployment is scaled to zero."
  topology {
    namespace "shop"
    deployment "cart" {
      image = "ghcr.io/example/cart:1.0"
      port "grpc" = 7070
      resources {
        requests {
          cpu = 100m
          memory = 64Mi
        }
      }
    }
    service "cart" {
      port "grpc" = 7070
    }
  }
  fault scaled_to_zero on deployment "cart"
  expect {
    mitigated when within 5m {
      deployment "cart" ready
    }
  }
}
'''


def run_itbench(*args: str, cwd: Path, timeout: float = HANG_GUARD) -> subprocess.CompletedProcess:
    env_path = str(REPO)
    import os

    env = dict(os.environ, PYTHONPATH=env_path + os.pathsep + os.environ.get("PYTHONPATH", ""), NO_COLOR="1")
    return subprocess.run([sys.executable, "-m", "itbench_dsl", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=timeout, env=env)


@dataclass(frozen=True)
class Case:
    name: str
    data: bytes
    code: str
    line: int
    column: int
    contains: tuple[str, ...] = ()


def _replace(old: str, new: str) -> bytes:
    assert old in GOOD, old
    return GOOD.replace(old, new, 1).encode("utf-8")


CASES = [
    Case("empty-file", b"", "E1001", 1, 1, ("no `scenario` or `app` block",)),
    Case("only-whitespace-and-comments", b"\n  \t\n# nothing here\n", "E1001", 1, 1),
    Case("binary-bytes", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x01\x00", "E1009", 1, 1,
         ("invalid UTF-8 byte 0x89",)),
    Case("nul-byte", GOOD.replace("complexity low", "complexity low\x00").encode(), "E1009", 3, 17, ("NUL byte",)),
    Case("invalid-utf8", GOOD.replace("scaled to zero", "scaled to z\xe9ro").encode("latin-1"), "E1009", 4, 50,
         ("invalid UTF-8 byte 0xe9",)),
    Case("utf16-file", GOOD.encode("utf-16"), "E1009", 1, 1, ("invalid UTF-8 byte 0xff",)),
    Case("unterminated-string", _replace('"The cart deployment is scaled to zero."', '"The cart deployment'),
         "E1003", 4, 15, ("string is not closed",)),
    Case("unterminated-block", GOOD.rstrip().rstrip("}").encode(), "E1004", 1, 22, ("close it with `}`",)),
    Case("unterminated-list", b'scenario "x" {\n  tags ["a", "b"\n', "E1004", 2, 8, ("close it with `]`",)),
    Case("unknown-fault", _replace("fault scaled_to_zero", "fault scaled_to_zer0"), "E2005", 21, 9,
         ("unknown fault `scaled_to_zer0`", "did you mean `scaled_to_zero`?")),
    Case("memory-in-milli", _replace("memory = 64Mi", "memory = 5m"), "E2009", 13, 20,
         ("`5m` is not a memory quantity",)),
    Case("within-in-mebibytes", _replace("within 5m", "within 250Mi"), "E2009", 23, 27,
         ("`250Mi` is not a duration",)),
    Case("cpu-in-mebibytes", _replace("cpu = 100m", "cpu = 64Mi"), "E2009", 12, 17, ("`64Mi` is not a CPU quantity",)),
    Case("duplicate-object", _replace('    service "cart" {', '    service "cart" {\n      port "grpc" = 7070\n    }\n'
                                      '    service "cart" {'), "E2002", 20, 13,
         ("service `cart` is declared twice", "the first is at bad.itb:17:13")),
    Case("duplicate-statement", _replace("  complexity low\n", "  complexity low\n  complexity high\n"), "E2002", 4, 3,
         ("`complexity` is given twice",)),
    Case("list-nesting-10000", b"[" * 10_000, "E1007", 1, 65, ("nest deeper than 64 levels",)),
    Case("brace-nesting-10000-in-body",
         _replace('  fault scaled_to_zero on deployment "cart"\n',
                  '  metadata {\n    deep = ' + "{" * 10_000 + "}" * 10_000 + '\n  }\n'
                  '  fault scaled_to_zero on deployment "cart"\n'),
         "E1007", 22, 74, ("nest deeper than 64 levels",)),
    Case("file-of-5-mb", GOOD.encode() + b"# padding\n" * 500_000, "E1008", 1, 1,
         ("file is 5,000,", "the limit is 1,048,576")),
    Case("integer-of-10001-digits", _replace('port "grpc" = 7070\n      resources',
                                             'port "grpc" = 1' + "0" * 10_000 + "\n      resources"),
         "E2010", 9, 21, ("an integer of 10,001 digits is out of range",)),
    Case("quantity-of-31-digits", _replace("cpu = 100m", "cpu = 1" + "0" * 30 + "m"), "E2009", 12, 17,
         ("has more than 24 digits",)),
]


def test_cases_have_unique_names():
    assert len({c.name for c in CASES}) == len(CASES)


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_diagnostic_in_process(case: Case):
    """compile_source reports the code at the expected place and produces no files."""
    diags = Diagnostics()
    result = compile_source(case.data, "bad.itb", diags)
    assert result.files == {}
    located = [(d.code, d.span.line, d.span.column) for d in diags.items]
    assert (case.code, case.line, case.column) in located, located


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_compile_writes_nothing_and_exits_1(case: Case, tmp_path: Path):
    (tmp_path / "bad.itb").write_bytes(case.data)
    proc = run_itbench("compile", "bad.itb", "-o", "out", cwd=tmp_path)
    output = proc.stdout + proc.stderr
    assert proc.returncode == 1, output[-2000:]
    assert "Traceback" not in output
    assert "internal error" not in output
    assert f"error[{case.code}]" in proc.stderr, proc.stderr[-2000:]
    assert f"--> bad.itb:{case.line}:{case.column}\n" in proc.stderr, proc.stderr[-2000:]
    for text in case.contains:
        assert text in proc.stderr, (text, proc.stderr[-2000:])
    out = tmp_path / "out"
    assert not out.exists() or list(out.iterdir()) == [], sorted(p.name for p in out.rglob("*"))


def test_good_base_compiles(tmp_path: Path):
    """The scenario the cases are made from is good: each case's error is the one it introduces."""
    (tmp_path / "good.itb").write_text(GOOD, encoding="utf-8")
    proc = run_itbench("compile", "good.itb", "-o", "out", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "out" / "shop-cart" / "bundle.lock").is_file()


def test_folder_with_good_and_bad_files(tmp_path: Path):
    """Good files get their bundles, bad ones none; the exit code is 1 and every bad file is reported."""
    src = tmp_path / "src"
    (src / "sre").mkdir(parents=True)
    (src / "ciso").mkdir()
    shutil.copy(REPO / "scenarios" / "sre" / "shop-cart-modified-env.itb", src / "sre")
    shutil.copy(REPO / "scenarios" / "ciso" / "cis-5-2-5-host-network-kyverno.itb", src / "ciso")
    (src / "good.itb").write_text(GOOD, encoding="utf-8")
    # bad files whose scenario names would otherwise name bundle folders
    (src / "sre" / "bad-unit.itb").write_text(
        GOOD.replace('"shop-cart"', '"bad-unit"').replace("memory = 64Mi", "memory = 5m"), encoding="utf-8")
    (src / "sre" / "bad-fault.itb").write_text(
        GOOD.replace('"shop-cart"', '"bad-fault"').replace("scaled_to_zero", "scaled_to_zer0"), encoding="utf-8")
    (src / "bad-syntax.itb").write_text(GOOD.replace('"shop-cart"', '"bad-syntax"').replace("port \"grpc\" = 7070", "port \"grpc\" 7070", 1),
                                        encoding="utf-8")
    (src / "empty.itb").write_bytes(b"")
    (src / "notes.txt").write_text("not a scenario: ignored\n", encoding="utf-8")

    proc = run_itbench("compile", "src", "-o", "out", cwd=tmp_path)
    output = proc.stdout + proc.stderr
    assert proc.returncode == 1, output
    assert "Traceback" not in output
    out = tmp_path / "out"
    assert sorted(p.name for p in out.iterdir()) == ["cis-5-2-5-host-network-kyverno", "shop-cart",
                                                     "shop-cart-modified-env"]
    for bundle in out.iterdir():
        assert (bundle / "bundle.lock").is_file()
        assert (bundle / "scenario.json").is_file()
    for path, code in [("src/sre/bad-unit.itb", "E2009"), ("src/sre/bad-fault.itb", "E2005"),
                       ("src/bad-syntax.itb", "E1002"), ("src/empty.itb", "E1001")]:
        assert f"--> {path}:" in proc.stderr, path
        assert f"error[{code}]" in proc.stderr, code
    assert "7 files compiled, 4 errors" in proc.stderr


def test_check_of_the_same_folder_reports_the_same_and_writes_nothing(tmp_path: Path):
    src = tmp_path / "src"
    src.mkdir()
    (src / "good.itb").write_text(GOOD, encoding="utf-8")
    (src / "bad.itb").write_bytes(b"[" * 10_000)
    proc = run_itbench("check", "--format", "concise", "src", cwd=tmp_path)
    assert proc.returncode == 1
    errors = [line for line in proc.stdout.splitlines() if "warning[W" not in line]  # lint warnings aside
    assert errors == ["src/bad.itb:1:65: error[E1007] brackets nest deeper than 64 levels"]
    assert "Traceback" not in proc.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["src"]
