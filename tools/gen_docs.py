"""Regenerate the files derived from the code: docs/diagnostics.md, the published IR schema, and
docs/faults/ (a page per fault kind of the registry, and README.md, the table of them all).

    python tools/gen_docs.py          # rewrite them
    python tools/gen_docs.py --check  # exit 1 if one is out of date or orphaned (the tests do the same)
"""

from __future__ import annotations

import functools
import inspect
import json
import re
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


def ciso_markdown() -> str:
    from itbench_dsl.ciso import docs_markdown
    return docs_markdown()


# ---- the fault library: docs/faults/<fault>.md and docs/faults/README.md --------------------------------

FAULT_DOCS = ROOT / "docs" / "faults"
SCENARIOS = ROOT / "scenarios"


def _cell(text) -> str:
    """Text for a Markdown table cell: one line, pipes escaped."""
    return " ".join(str(text).split()).replace("|", "\\|") or "—"


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


_CODE = re.compile(r'"([EW]\d{4})"')


def _reported_codes(function) -> list[str]:
    """The diagnostic codes a fault's check reports: in its code and the helpers it calls (one level)."""
    found: set[str] = set()
    seen: set[int] = set()

    def scan(fn, depth: int) -> None:
        if id(fn) in seen or not callable(fn) or not hasattr(fn, "__code__"):
            return
        seen.add(id(fn))
        try:
            found.update(_CODE.findall(inspect.getsource(fn)))
        except (OSError, TypeError):
            return
        if depth:
            for name in fn.__code__.co_names:
                helper = fn.__globals__.get(name)
                if inspect.isfunction(helper):
                    scan(helper, depth - 1)

    scan(function, 1)
    return sorted(c for c in found if c in CODES)


def _templates(kind) -> list[dict]:
    from itbench_dsl.faults import itbench_entry

    if kind.solutions or not kind.itbench_id:
        return list(kind.solutions)
    return itbench_entry("faults", kind.itbench_id).get("solutions", {}).get("templates", [])


def fault_page(name: str) -> str:
    from itbench_dsl.faults import FAULTS, fault_description, library_alerts

    kind = FAULTS[name]
    uses = scenario_faults().get(name, [])
    lines = [f"# `{kind.name}`", "", kind.summary, "",
             "This page is generated from the fault library by `python tools/gen_docs.py`.", "",
             "| | |", "|---|---|",
             f"| ITBench id | {f'`{kind.itbench_id}`' if kind.itbench_id else 'none (not an ITBench fault)'} |",
             f"| mechanism | `{kind.mechanism}` |",
             f"| targets | {', '.join(f'`{t}`' for t in kind.targets)} |",
             f"| domains | {', '.join(kind.domains)} |", ""]
    if kind.itbench_id:
        lines += ["## What it does", "", fault_description(kind), ""]
    lines += ["## Arguments", ""]
    if kind.args:
        lines += ["| argument | type | required | default | meaning |", "|---|---|---|---|---|"]
        lines += [f"| `{a.name}` | {_cell(a.type)} | {'yes' if a.required else 'no'} | {_cell(a.default)} | {_cell(a.help)} |"
                  for a in kind.args]
    else:
        lines += ["None."]
    lines += ["", "## Preconditions", "", "Checked at compile time; a broken one is a located error.", ""]
    lines += [f"- {p}" for p in kind.preconditions] or ["- None."]
    codes = _reported_codes(kind.check)
    if codes:
        lines += ["", "Diagnostics its check reports:", ""]
        lines += [f"- [{c}](../diagnostics.md#{c.lower()}-{re.sub(r'[^a-z0-9 -]', '', CODES[c].title.lower()).replace(' ', '-')})"
                  f": {CODES[c].title}" for c in codes]
    if kind.creates:
        lines += ["", "## What it creates", "", kind.creates]
    if kind.app_options:
        lines += ["", "## Application options", "", "ITBench deploys the application with:", "", "```json",
                  json.dumps(kind.app_options, indent=2, sort_keys=True), "```"]
    alerts = library_alerts(kind)
    lines += ["", "## Alerts it raises", ""]
    lines += [f"- `{a}`" for a in alerts] or ["None declared."]
    lines += ["", "## Solution", "",
              "Templates (Jinja2 over the injection's ITBench arguments, `args`), rendered into the ground truth:", ""]
    templates = _templates(kind)
    for number, template in enumerate(templates, 1):
        if len(templates) > 1:
            lines += [f"Solution {number}:", ""]
        for step_number, step in enumerate(template.get("steps", []), 1):
            lines += [f"{step_number}. {step.get('text', '')}"]
            if step.get("command"):
                lines += ["", "   ```sh", f"   {step['command']}", "   ```"]
        lines += [""]
    if not templates:
        lines += ["None.", ""]
    lines += ["## Scenarios using it", ""]
    lines += [f"- [{Path(u).stem}](../../{u})" for u in uses] or ["None yet."]
    return "\n".join(lines) + "\n"


def faults_readme() -> str:
    from itbench_dsl.faults import FAULTS, library_alerts

    uses = scenario_faults()
    kinds = sorted(FAULTS.values(), key=lambda k: k.name)
    with_id = sum(1 for k in kinds if k.itbench_id)
    used = sorted({u for k in kinds for u in uses.get(k.name, [])})
    lines = ["# The fault library", "",
             "Generated from `itbench_dsl/faults` by `python tools/gen_docs.py`; one page per fault.", "",
             f"{len(kinds)} faults: {with_id} with an ITBench id, {len(kinds) - with_id} without. "
             f"{len(used)} scenarios in `scenarios/` use them.", "",
             "| fault | ITBench id | mechanism | targets | alerts | scenarios |", "|---|---|---|---|---|---|"]
    for kind in kinds:
        lines.append(f"| [`{kind.name}`]({kind.name}.md) | {_cell(kind.itbench_id or '')} | `{kind.mechanism}` | "
                     f"{_cell(', '.join(kind.targets))} | {_cell(', '.join(library_alerts(kind)))} | "
                     f"{len(uses.get(kind.name, []))} |")
    return "\n".join(lines) + "\n"


def fault_targets() -> dict:
    from itbench_dsl.faults import FAULTS

    targets = {FAULT_DOCS / "README.md": faults_readme}
    for name in sorted(FAULTS):
        targets[FAULT_DOCS / f"{name}.md"] = functools.partial(fault_page, name)
    return targets


# Folders whose every file of a pattern is generated: a file no target makes is an orphan (a fault removed).
OWNED = {FAULT_DOCS: "*.md"}


TARGETS = {
    ROOT / "docs" / "diagnostics.md": diagnostics_markdown,
    ROOT / "itbench_dsl" / "schemas" / "scenario-ir.schema.json": ir_schema_json,
    ROOT / "docs" / "ciso.md": ciso_markdown,
    **fault_targets(),  # docs/faults/*.md: one page per fault kind, whatever the registry holds
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
