"""Self-validation results kept on disk (checking.self_validated, itbench_dsl/cache.py): a re-check of an
unchanged scenario reads them back, anything that changes what they are computed from is another entry,
and a damaged entry is validated again. The cache never changes a check's result."""

from __future__ import annotations

from pathlib import Path

import pytest

from itbench_dsl import cache, checking

ROOT = Path(__file__).resolve().parents[2]
SCENARIO = ROOT / "scenarios" / "sre" / "otel-checkout-nonexistent-image.itb"
POISON = ([("E4004", "a result only the cache holds", None)], [])


def _entries(folder: Path) -> list[Path]:
    return sorted(folder.glob("selfcheck-*.pickle"))


def _codes(check: checking.FileCheck) -> list[tuple[str, str]]:
    return [(d.code, d.message) for d in check.diagnostics]


@pytest.fixture
def folder(tmp_path, monkeypatch):
    monkeypatch.setenv("ITBENCH_CACHE_DIR", str(tmp_path))
    return tmp_path


def _poison(folder: Path) -> None:
    """Overwrite every self-validation entry with a result no grading produces: a check that reads it shows it."""
    for entry in _entries(folder):
        cache.store(entry, POISON)


def test_an_unchanged_scenario_reads_its_results_back(folder):
    data = SCENARIO.read_bytes()
    first = checking.check_source(data, str(SCENARIO))
    assert len(_entries(folder)) == 1 and not first.has_errors
    assert _codes(checking.check_source(data, str(SCENARIO))) == _codes(first)
    _poison(folder)  # the entry is what the second check reads: its result is the check's
    assert [d.code for d in checking.check_source(data, str(SCENARIO)).diagnostics] == ["E4004"]


def test_a_changed_scenario_is_validated_again(folder):
    data = SCENARIO.read_bytes()
    checking.check_source(data, str(SCENARIO))
    _poison(folder)
    changed = data.replace(b"demo:7f3a9c1e", b"demo:7f3a9c1f", 1)  # another missing tag: the same verdicts
    assert changed != data
    assert [d.code for d in checking.check_source(changed, str(SCENARIO)).diagnostics if d.code == "E4004"] == []
    assert len(_entries(folder)) == 2


def test_a_changed_package_is_validated_again(folder, monkeypatch):
    data = SCENARIO.read_bytes()
    checking.check_source(data, str(SCENARIO))
    _poison(folder)
    monkeypatch.setattr(cache, "package_digest", lambda: "another package")
    assert [d.code for d in checking.check_source(data, str(SCENARIO)).diagnostics if d.code == "E4004"] == []
    assert len(_entries(folder)) == 2


def test_a_damaged_entry_is_validated_again(folder):
    data = SCENARIO.read_bytes()
    first = checking.check_source(data, str(SCENARIO))
    for entry in _entries(folder):
        entry.write_bytes(entry.read_bytes()[:50])  # cut short, as a crash mid-write would leave it
    assert _codes(checking.check_source(data, str(SCENARIO))) == _codes(first)
    for entry in _entries(folder):
        entry.write_bytes(b"not a pickle at all")
    assert _codes(checking.check_source(data, str(SCENARIO))) == _codes(first)
    cache.store(_entries(folder)[0], {"an entry": "of another shape"})
    assert _codes(checking.check_source(data, str(SCENARIO))) == _codes(first)


def test_a_file_edit_changes_the_package_digest(tmp_path, monkeypatch):
    """The package's digest follows its files: one rewritten is another digest (a stale result is never read)."""
    package = tmp_path / "pkg"
    (package / "sub").mkdir(parents=True)
    (package / "sub" / "m.py").write_text("x = 1\n")

    class Files:
        def __truediv__(self, other):  # pragma: no cover - resources' API is not used beyond str()
            return package / other

        def __str__(self):
            return str(package)

    monkeypatch.setattr(cache.resources, "files", lambda name: Files())
    cache.package_digest.cache_clear()
    try:
        before = cache.package_digest()
        cache.package_digest.cache_clear()
        (package / "sub" / "m.py").write_text("x = 22\n")
        assert cache.package_digest() != before
    finally:
        cache.package_digest.cache_clear()


def test_the_entries_of_a_kind_are_bounded(tmp_path, monkeypatch):
    monkeypatch.setenv("ITBENCH_CACHE_DIR", str(tmp_path))
    cache.store(tmp_path / "ast-x.pickle", "another kind")
    for i in range(400):
        cache.store(cache.path_for("selfcheck", str(i)), i, keep=64)
    assert 0 < len(_entries(tmp_path)) <= 64 + 64 and (tmp_path / "ast-x.pickle").exists()
    assert cache.load(cache.path_for("selfcheck", "399")) == 399  # the newest is kept
    for i in range(5):
        cache.store(tmp_path / f"selfcheck-{i}.pickle", i, keep=3)  # a name without a digest prunes each time
    assert len(_entries(tmp_path)) == 3


def test_a_generated_scenario_is_not_kept(folder):
    """A scenario built in code (a generated variant) is new: its results are computed, never stored."""
    from itbench_dsl.parser import parse_bytes
    from itbench_dsl.diagnostics import Diagnostics

    document = parse_bytes(SCENARIO.read_bytes(), str(SCENARIO), Diagnostics())
    assert not checking.check_document(document, str(SCENARIO)).has_errors
    assert _entries(folder) == []


def test_a_comment_edit_reads_the_results_back(folder):
    """Only the source's hash in bundle.lock changes with a comment: the results are read back (an editor's
    re-check of such an edit grades nothing), and a problem is located from the edited file's source map."""
    data = SCENARIO.read_bytes()
    checking.check_source(data, str(SCENARIO))
    _poison(folder)
    edited = b"# a comment that moves every line down\n\n" + data
    found = [d for d in checking.check_source(edited, str(SCENARIO)).diagnostics if d.code == "E4004"]
    assert [d.message.split(": ", 1)[1] for d in found] == ["a result only the cache holds"]
    assert found[0].span.line == checking.check_source(data, str(SCENARIO)).result.source_map.scenario.line + 2
    assert len(_entries(folder)) == 1


def test_only_a_policy_task_asks_which_rego_engine_grades(folder, monkeypatch):
    """Which engine grades Rego (`opa version`, a process of its own) is part of the key of a policy task's
    results only: an SRE scenario's warm check starts no process for it, and a CISO one still keys by it."""
    asked = []
    monkeypatch.setattr(checking, "_rego_engine", lambda: asked.append(1) or "opa 1.0.0")
    checking.check_source(SCENARIO.read_bytes(), str(SCENARIO))
    assert asked == []
    ciso = ROOT / "scenarios" / "ciso" / "cis-k8s-5-2-5-host-network-opa.itb"
    checking.check_source(ciso.read_bytes(), str(ciso))
    assert asked
