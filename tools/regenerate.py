"""Regenerate every generated file of the repository, in dependency order.

    python tools/regenerate.py          # rewrite what is stale
    python tools/regenerate.py --check  # change nothing; exit 1 if anything is stale (the tests check each)

After changing faults, codes, alerts, the CISO catalogue or the library, run this once instead of
remembering which generator owns which file:

- tools/gen_docs.py                   docs/diagnostics.md, docs/faults/, docs/ciso.md, the IR schema
- tools/itbench_compat.py             docs/itbench-compat.md
- editors/vscode/gen_grammar.py       editors/vscode/syntaxes/itbench.tmLanguage.json
- itbench docs scenarios/             docs/scenarios/ (a page per library scenario and the index)
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = ["tools/gen_docs.py", "tools/itbench_compat.py", "editors/vscode/gen_grammar.py"]


def scenario_docs(check: bool) -> int:
    if not check:
        return subprocess.run([sys.executable, "-m", "itbench_dsl", "docs", "scenarios/", "-o", "docs/scenarios/"],
                              cwd=ROOT).returncode
    sys.path.insert(0, str(ROOT))
    from itbench_dsl import scenario_docs as pages
    from itbench_dsl.cli.docs import library_items
    from itbench_dsl.diagnostics import Diagnostics

    current = ROOT / "docs" / "scenarios"
    diags = Diagnostics()
    items = library_items(sorted((ROOT / "scenarios").rglob("*.itb")), current, diags)
    if diags.has_errors:
        print("the library has errors: run `itbench check scenarios/`", file=sys.stderr)
        return 1
    expected = pages.render_library(items)
    actual = {p.name: p.read_text(encoding="utf-8") for p in current.iterdir()} if current.is_dir() else {}
    stale = sorted(n for n in set(expected) | set(actual) if expected.get(n) != actual.get(n))
    if stale:
        print(f"docs/scenarios/ is stale ({len(stale)} files, e.g. {stale[0]})", file=sys.stderr)
        return 1
    return 0


def main() -> int:
    check = "--check" in sys.argv[1:]
    status = 0
    for script in SCRIPTS:
        done = subprocess.run([sys.executable, script] + (["--check"] if check else []), cwd=ROOT)
        status = status or done.returncode
    return status or scenario_docs(check)


if __name__ == "__main__":
    sys.exit(main())
