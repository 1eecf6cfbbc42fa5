"""The fault library's reference pages: one per fault kind (its arguments, targets, preconditions, what it
creates, its alerts and solutions) and the table of them all. `itbench faults NAME` prints a page;
`tools/gen_docs.py` writes them all to docs/faults/ with the scenarios that use each fault."""

from __future__ import annotations

import inspect
import json
import re
from pathlib import Path

from .codes import CODES


def _cell(text) -> str:
    """Text for a Markdown table cell: one line, pipes escaped."""
    return " ".join(str(text).split()).replace("|", "\\|") or "—"


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
    from .faults import itbench_entry

    if kind.solutions or not kind.itbench_id:
        return list(kind.solutions)
    return itbench_entry("faults", kind.itbench_id).get("solutions", {}).get("templates", [])


def fault_page(name: str, uses: list[str] | None = None) -> str:
    """The page of fault `name`; `uses`: the scenario files (relative to the repository) that use it, when known."""
    from .faults import FAULTS, fault_description, library_alerts

    kind = FAULTS[name]
    lines = [f"# `{kind.name}`", "", kind.summary, "",
             "This page is generated from the fault library by `python tools/gen_docs.py`.", "",
             "| | |", "|---|---|",
             f"| ITBench id | {f'`{kind.itbench_id}`' if kind.itbench_id else 'none (not an ITBench fault)'} |",
             f"| mechanism | `{kind.mechanism}` |",
             f"| targets | {', '.join(f'`{t}`' for t in kind.targets)} |",
             f"| domains | {', '.join(kind.domains)} |", ""]
    if kind.declared is not None:
        where = kind.declared.path.replace("<stdlib>/", "itbench_dsl/stdlib/")
        lines += [f"Declared in the language, in `{where}` ([fault kinds](../fault-kinds.md)).", ""]
        if kind.declared.recreate:
            lines += ["On " + ", ".join(f"a `{t}`" for t in kind.declared.recreate) + " it deletes the target and "
                      "creates it changed, and the revert creates the original again (`recreate`): the API server "
                      "refuses the change as an update.", ""]
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
    if kind.declared is not None:  # a `fault_kind` (docs/fault-kinds.md): its preconditions say their codes
        from .faults.declared import reported_codes

        codes = reported_codes(kind.declared)
    else:
        codes = _reported_codes(kind.check)
    if codes:
        lines += ["", "Diagnostics its check reports:", ""]
        lines += [f"- [{c}](../diagnostics.md#{c.lower()}-{re.sub(r'[^a-z0-9 -]', '', CODES[c].title.lower()).replace(' ', '-')})"
                  f": {CODES[c].title}" for c in codes]
    if kind.creates:
        lines += ["", "## What it creates", "", kind.creates]
    if kind.symptoms:
        from .faults.symptoms import visible

        how = ("`kubectl get` shows it" if visible(kind.symptoms)
               else "only an alert or a probe shows it: a scenario must expect one (W2015)")
        lines += ["", "## Symptoms", "", ", ".join(f"`{s}`" for s in kind.symptoms) + f" ({how})."]
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
    if uses is not None:
        lines += ["## Scenarios using it", ""]
        lines += [f"- [{Path(u).stem}](../../{u})" for u in uses] or ["None yet."]
    return "\n".join(lines).rstrip("\n") + "\n"


def faults_readme(uses: dict[str, list[str]]) -> str:
    """The table of every fault; `uses`: fault kind -> the scenario files that use it."""
    from .faults import FAULTS, library_alerts

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
