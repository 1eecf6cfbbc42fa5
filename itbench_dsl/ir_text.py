"""IR fragments as the language writes them: a `mitigated when` predicate, a field path, a value. The scenario
pages and the grading listing (`itbench explain FILE`) show the same text."""

from __future__ import annotations

import json
import re

from . import graph, ir
from .units import format_duration


def value_text(value) -> str:
    """A literal as the language writes it."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return value if re.fullmatch(r"[A-Za-z0-9_.+/:%-]+", value) else json.dumps(value, ensure_ascii=False)
    if isinstance(value, (int, float)) or value is None:
        return json.dumps(value)
    return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(", ", ": "))


def predicate_text(p: ir.Predicate) -> str:
    """A `mitigated when` predicate as the language writes it."""
    if p.kind == "alert":
        return f"alert {p.alert} {'firing' if p.firing else 'not firing'}"
    target = graph.ref_text(p.target) if p.target else ""
    within = f" within {format_duration(p.within_seconds)}" if p.within_seconds is not None else ""
    if p.kind == "state":
        return f"{target} {p.state}{within}"
    if p.kind == "scope":
        labels = " { " + ", ".join(f"{k} = {value_text(v)}" for k, v in sorted(p.selector.items())) + " }" \
            if p.selector else ""
        where = f' in namespace "{p.namespace}"' if p.namespace else ""
        return f"all {p.scope}{labels}{where} ready{within}"
    test = p.op if p.op in ("exists", "not exists") else f"{p.op} {value_text(p.value)}"
    if p.kind == "access":
        where = f' in namespace "{p.namespace}"' if p.namespace else ""
        return f'{p.op} {target} "{p.path[0]}" "{p.path[1]}"{where}'
    if p.kind == "probe":
        name, field = (p.path + ["", ""])[:2]
        return f'probe "{name}" {field} {test}'
    return f"{target} {path_text(p.path)} {test}"


def path_text(path: list) -> str:
    """An IR field path (keys, indexes, [key, value] selections, parse steps) as the language writes it."""
    out: list[str] = []
    for step in path:
        if isinstance(step, str):
            out.append(("." if out else "") + step if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", step)
                       else f"[{json.dumps(step)}]")
        elif isinstance(step, bool) or not isinstance(step, (int, list, dict)):
            out.append(f"[{value_text(step)}]")
        elif isinstance(step, int):
            out.append(f"[{step}]")
        elif isinstance(step, list) and len(step) == 2:
            key = ".".join(step[0]) if isinstance(step[0], list) else str(step[0])
            out.append(f"[{key}={json.dumps(step[1]) if isinstance(step[1], str) else value_text(step[1])}]")
        elif isinstance(step, dict) and "parse" in step:
            out.append(f" as {step['parse']} ")
        else:
            out.append(f"[{value_text(step)}]")
    return "".join(out).strip()
