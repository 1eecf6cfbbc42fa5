"""Paths are echoed as the user wrote them."""

from __future__ import annotations

from support.compiling import SCENARIOS as LIBRARY
from test_cli import invoke


def _compile(args, cwd):
    result = invoke("compile", *args, cwd=cwd)
    return result.exit_code, result.stdout + result.stderr


def test_absolute_paths_stay_absolute(tmp_path):
    source = LIBRARY / "sre" / "otel-checkout-nonexistent-image.itb"
    elsewhere = tmp_path / "cwd"
    elsewhere.mkdir()
    code, output = _compile([str(source), "-o", str(tmp_path / "out")], elsewhere)
    assert code == 0, output
    assert f"compiled {source} -> {tmp_path / 'out' / 'otel-checkout-nonexistent-image'}" in output
    assert ".." not in output


def test_relative_paths_stay_relative(tmp_path):
    (tmp_path / "s").mkdir()
    (tmp_path / "s" / "a.itb").write_bytes((LIBRARY / "sre" / "otel-checkout-nonexistent-image.itb").read_bytes())
    code, output = _compile(["s/a.itb", "-o", "out/../bundles"], tmp_path)
    assert code == 0, output
    assert "compiled s/a.itb -> bundles/otel-checkout-nonexistent-image" in output
    assert str(tmp_path) not in output
