"""Regenerate the `expected.txt` of every error fixture (a script, not a test).

    python3 tests/update_fixtures.py            # rewrite every expected.txt that changed
    python3 tests/update_fixtures.py --check    # change nothing; exit 1 if any would change
    python3 tests/update_fixtures.py E2003      # only the folders whose name starts with E2003

Each fixture is `tests/cases/errors/<CODE>-<slug>/input.itb`; its `expected.txt` is the human
rendering (no color) of the diagnostics `itbench check input.itb` reports (checking.py). A unified diff is
printed for every file that changes: review each one before committing. Every diagnostic must
point at the right line and column, say clearly what is wrong, and give useful help.
"""

from __future__ import annotations

import difflib
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from itbench_dsl.checking import check_source  # noqa: E402
from itbench_dsl.diagnostics import Diagnostics, render_human  # noqa: E402

CASES = HERE / "cases" / "errors"


def render_fixture(folder: Path) -> tuple[str, Diagnostics]:
    """The expected text of one fixture folder, and the diagnostics it was rendered from."""
    checked = check_source((folder / "input.itb").read_bytes(), "input.itb")
    diags = Diagnostics(list(checked.diagnostics), dict(checked.sources))
    return render_human(diags, color=False), diags


def fixture_folders() -> list[Path]:
    return sorted(p for p in CASES.iterdir() if p.is_dir() and (p / "input.itb").is_file())


def main(argv: list[str]) -> int:
    check_only = "--check" in argv
    prefixes = [a for a in argv if not a.startswith("-")]
    changed = 0
    for folder in fixture_folders():
        if prefixes and not any(folder.name.startswith(p) for p in prefixes):
            continue
        text, diags = render_fixture(folder)
        code = folder.name.split("-", 1)[0]
        if code not in {d.code for d in diags.items}:
            print(f"warning: {folder.name}: no {code} among the diagnostics "
                  f"({', '.join(sorted({d.code for d in diags.items})) or 'none'})", file=sys.stderr)
        expected = folder / "expected.txt"
        old = expected.read_text(encoding="utf-8") if expected.exists() else ""
        if old == text:
            continue
        changed += 1
        rel = expected.relative_to(REPO)
        sys.stdout.writelines(difflib.unified_diff(old.splitlines(True), text.splitlines(True),
                                                   f"a/{rel}", f"b/{rel}"))
        if not text.endswith("\n"):
            print()
        if not check_only:
            expected.write_text(text, encoding="utf-8", newline="\n")
    verb = "would change" if check_only else "changed"
    print(f"{changed} expected.txt file(s) {verb}", file=sys.stderr)
    return 1 if (check_only and changed) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
