"""Regenerate the files derived from the code: docs/diagnostics.md, the published IR schema, and
docs/faults/ (a page per fault kind of the registry, and README.md, the table of them all).

    python tools/gen_docs.py          # rewrite them
    python tools/gen_docs.py --check  # exit 1 if one is out of date or orphaned (the tests do the same)
"""

from __future__ import annotations

import functools
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from itbench_dsl.codes import CODES  # noqa: E402
from itbench_dsl.fault_docs import fault_page, faults_readme  # noqa: E402
from itbench_dsl.ir import json_schema  # noqa: E402

FAMILIES = [("E1", "Syntax"), ("E2", "Names, types, units and scenario semantics"),
            ("E3", "Validity of generated Kubernetes and CRD objects"), ("E4", "Code generation"), ("W", "Lint")]


def diagnostics_markdown() -> str:
    lines = ["# Diagnostic codes", "",
             "Every diagnostic has a code that never changes meaning. `itbench explain CODE` prints the same page.",
             "This file is generated from `itbench_dsl/codes.py` by `python tools/gen_docs.py`.", ""]
    for prefix, title in FAMILIES:
        codes = [c for c in CODES.values() if c.code.startswith(prefix)]
        if not codes:
            continue
        lines += [f"## {title}", ""]
        for code in codes:
            lines += [f"### {code.code}: {code.title}", "", code.page, ""]
    return "\n".join(lines)


def ir_schema_json() -> str:
    return json.dumps(json_schema(), indent=2) + "\n"


def ciso_markdown() -> str:
    from itbench_dsl.ciso import docs_markdown
    return docs_markdown()


# ---- the fault library: docs/faults/<fault>.md and docs/faults/README.md --------------------------------

FAULT_DOCS = ROOT / "docs" / "faults"
SCENARIOS = ROOT / "scenarios"


@functools.lru_cache(maxsize=1)
def scenario_faults() -> dict[str, list[str]]:
    """fault kind -> the scenario files (relative to the repository) that use it, from their syntax alone."""
    from itbench_dsl import ast
    from itbench_dsl.diagnostics import Diagnostics
    from itbench_dsl.parser import parse_bytes

    uses: dict[str, list[str]] = {}
    for path in sorted(SCENARIOS.rglob("*.itb")):
        document = parse_bytes(path.read_bytes(), str(path), Diagnostics())
        if not isinstance(document, ast.Scenario):
            continue
        faults = [s for s in document.statements if isinstance(s, ast.Fault)]
        faults += [i for g in document.statements if isinstance(g, ast.Group) for i in g.items if isinstance(i, ast.Fault)]
        for kind in sorted({f.kind for f in faults}):
            uses.setdefault(kind, []).append(path.relative_to(ROOT).as_posix())
    return uses


def fault_targets() -> dict:
    from itbench_dsl.faults import FAULTS

    targets = {FAULT_DOCS / "README.md": lambda: faults_readme(scenario_faults())}
    for name in sorted(FAULTS):
        targets[FAULT_DOCS / f"{name}.md"] = functools.partial(lambda n: fault_page(n, scenario_faults().get(n, [])), name)
    return targets


def with_counts(path: Path) -> str:
    """`path` with the counts its prose states (`40 faults`) set to the library's."""
    from itbench_dsl.faults import FAULTS

    text = path.read_text(encoding="utf-8")
    return re.sub(r"\b\d+ faults\b", f"{len(FAULTS)} faults", text)


COUNTED = (ROOT / "README.md", ROOT / "docs" / "language.md")  # prose that states how many faults there are


# Folders whose every file of a pattern is generated: a file no target makes is an orphan (a fault removed).
OWNED = {FAULT_DOCS: "*.md"}


TARGETS = {
    ROOT / "docs" / "diagnostics.md": diagnostics_markdown,
    ROOT / "itbench_dsl" / "schemas" / "scenario-ir.schema.json": ir_schema_json,
    ROOT / "docs" / "ciso.md": ciso_markdown,
    **fault_targets(),  # docs/faults/*.md: one page per fault kind, whatever the registry holds
    **{path: functools.partial(with_counts, path) for path in COUNTED},
}


def main() -> int:
    check = "--check" in sys.argv[1:]
    stale = []
    for path, make in TARGETS.items():
        text = make()
        if path.exists() and path.read_text(encoding="utf-8") == text:
            continue
        stale.append(path)
        if not check:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
            print(f"wrote {path.relative_to(ROOT)}")
    for folder, pattern in OWNED.items():  # generated folders: a page no target makes is an orphan
        for path in sorted(folder.glob(pattern)):
            if path not in TARGETS:
                stale.append(path)
                if not check:
                    path.unlink()
                    print(f"removed {path.relative_to(ROOT)}")
    if check and stale:
        print("out of date: " + ", ".join(str(p.relative_to(ROOT)) for p in stale))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
