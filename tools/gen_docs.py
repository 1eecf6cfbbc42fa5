"""Regenerate the files derived from the code: docs/diagnostics.md and the published IR schema.

    python tools/gen_docs.py          # rewrite them
    python tools/gen_docs.py --check  # exit 1 if one is out of date (the tests do the same)
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from itbench_dsl.codes import CODES  # noqa: E402
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


TARGETS = {
    ROOT / "docs" / "diagnostics.md": diagnostics_markdown,
    ROOT / "itbench_dsl" / "schemas" / "scenario-ir.schema.json": ir_schema_json,
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
    if check and stale:
        print("out of date: " + ", ".join(str(p.relative_to(ROOT)) for p in stale))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
