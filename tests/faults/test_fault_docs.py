"""The generated fault documentation (docs/faults/) is current and says what the library holds."""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path

import pytest

from itbench_dsl.compiler import compile_source
from itbench_dsl.diagnostics import Diagnostics
from itbench_dsl.faults import FAULTS, library_alerts

ROOT = Path(__file__).resolve().parents[2]
FAULT_DOCS = ROOT / "docs" / "faults"


def _gen_docs():
    spec = importlib.util.spec_from_file_location("gen_docs_faults", ROOT / "tools" / "gen_docs.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


GEN = _gen_docs()


@pytest.fixture(scope="module")
def readme() -> str:
    return (FAULT_DOCS / "README.md").read_text(encoding="utf-8")


def _rows(readme: str) -> dict[str, list[str]]:
    rows = {}
    for line in readme.splitlines():
        match = re.match(r"\| \[`([a-z0-9_]+)`\]\(([a-z0-9_]+)\.md\) \|(.*)\|$", line)
        if match:
            assert match.group(1) == match.group(2), line
            rows[match.group(1)] = [c.strip() for c in match.group(3).split(" | ")]
    return rows


def test_targets_cover_every_fault_and_the_readme():
    targets = GEN.fault_targets()
    assert set(targets) == {FAULT_DOCS / "README.md"} | {FAULT_DOCS / f"{name}.md" for name in FAULTS}
    assert set(targets) <= set(GEN.TARGETS)


@pytest.mark.parametrize("name", ["README", *sorted(FAULTS)])
def test_fault_page_is_current(name):
    path = FAULT_DOCS / f"{name}.md"
    make = GEN.fault_targets()[path]
    assert path.is_file(), f"{path.relative_to(ROOT)} is missing: run python tools/gen_docs.py"
    assert path.read_text(encoding="utf-8") == make(), f"{path.relative_to(ROOT)} is stale: run python tools/gen_docs.py"


def test_no_orphaned_pages():
    pages = {p.name for p in FAULT_DOCS.glob("*.md")}
    assert pages == {"README.md"} | {f"{name}.md" for name in FAULTS}


def test_readme_lists_exactly_the_registered_faults(readme):
    rows = _rows(readme)
    assert list(rows) == sorted(FAULTS)
    for name, (itbench_id, mechanism, targets, alerts, _) in rows.items():
        kind = FAULTS[name]
        assert itbench_id == (kind.itbench_id or "—")
        assert mechanism == f"`{kind.mechanism}`"
        assert targets == ", ".join(kind.targets)
        assert alerts == (", ".join(library_alerts(kind)) or "—")


def _scenario_uses() -> dict[str, set[str]]:
    """fault -> the scenario files using it, from the compiled IR (independent of the generator's parsing)."""
    uses: dict[str, set[str]] = {}
    for path in sorted((ROOT / "scenarios").rglob("*.itb")):
        result = compile_source(path.read_bytes(), str(path), Diagnostics(), validate=False)
        if result.scenario is None:
            continue
        for injection in result.scenario.injections():
            uses.setdefault(injection.fault, set()).add(path.relative_to(ROOT).as_posix())
    return uses


def test_readme_counts_match_the_registry_and_the_scenarios(readme):
    uses = _scenario_uses()
    with_id = sum(1 for k in FAULTS.values() if k.itbench_id)
    # scenarios that use a fault of the library (a project's own kinds, `use faults`, are not in it)
    used = set().union(*(uses[name] for name in FAULTS if name in uses))
    assert f"{len(FAULTS)} faults: {with_id} with an ITBench id, {len(FAULTS) - with_id} without. " \
           f"{len(used)} scenarios in `scenarios/` use them." in readme
    for name, row in _rows(readme).items():
        assert int(row[-1]) == len(uses.get(name, ())), f"{name}: the README says {row[-1]} scenarios"


def test_pages_say_what_the_fault_kind_says():
    for name, kind in FAULTS.items():
        page = (FAULT_DOCS / f"{name}.md").read_text(encoding="utf-8")
        assert page.startswith(f"# `{name}`\n\n{kind.summary}\n")
        assert f"`{kind.mechanism}`" in page
        for arg in kind.args:
            assert f"| `{arg.name}` |" in page
        for precondition in kind.preconditions:
            assert f"- {precondition}" in page
        for alert in library_alerts(kind):
            assert f"- `{alert}`" in page
    page = (FAULT_DOCS / "misconfigured_hpa.md").read_text(encoding="utf-8")
    assert "[E2023](../diagnostics.md#e2023-no-such-autoscaler)" in page
    assert "scenarios/finops/otel-three-hpas-misconfigured.itb" in page


# ---- --check fails on a stale or an orphaned page; a run repairs both ----------------------------------------


def test_check_fails_on_stale_and_orphaned_pages(tmp_path: Path, monkeypatch, capsys):
    gen = _gen_docs()
    folder = tmp_path / "faults"
    folder.mkdir()
    monkeypatch.setattr(gen, "ROOT", tmp_path)
    monkeypatch.setattr(gen, "TARGETS", {folder / "a.md": lambda: "A\n", folder / "README.md": lambda: "R\n"})
    monkeypatch.setattr(gen, "OWNED", {folder: "*.md"})

    def run(*args: str) -> int:
        monkeypatch.setattr(sys, "argv", ["gen_docs.py", *args])
        return gen.main()

    assert run("--check") == 1  # missing
    assert run() == 0
    assert run("--check") == 0
    (folder / "a.md").write_text("old\n")
    assert run("--check") == 1  # stale
    run()
    (folder / "gone.md").write_text("a fault that was removed\n")
    assert run("--check") == 1  # orphaned
    assert "faults/gone.md" in capsys.readouterr().out
    assert run() == 0 and not (folder / "gone.md").exists()
    assert run("--check") == 0


def test_the_docs_give_the_librarys_fault_count():
    """README and the language reference state how many faults the library has: the registry's count."""
    import re

    from itbench_dsl.faults import FAULTS

    root = Path(__file__).resolve().parents[2]
    for page in ("README.md", "docs/language.md"):
        counts = {int(n) for n in re.findall(r"(\d+) faults\b", (root / page).read_text(encoding="utf-8"))}
        assert counts == {len(FAULTS)}, (page, counts)
