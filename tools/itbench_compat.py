"""Write docs/itbench-compat.md: how each ported ITBench SRE/FinOps scenario round-trips.

For every scenario of ITBench's reference set (../shared/reference/itbench/scenarios/scenario_N/), the
library scenario carrying `metadata { itbench_id = N }` is compiled and its scenario.yaml,
groundtruth.yaml and groundtruth_v1.yaml are compared with ITBench's (itbench_dsl/importer/compat.py);
the reasons are the warnings `itbench import` gives on ITBench's files (the defects it corrects).

    python tools/itbench_compat.py           # rewrite docs/itbench-compat.md
    python tools/itbench_compat.py --check   # exit 1 if it is out of date (the tests do the same)
"""

from __future__ import annotations

import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

REFERENCE = REPO.parent / "shared" / "reference" / "itbench" / "scenarios"
OUTPUT = REPO / "docs" / "itbench-compat.md"
FILES = ("scenario.yaml", "groundtruth.yaml", "groundtruth_v1.yaml")


def library_ports() -> dict[int, Path]:
    from itbench_dsl import ast
    from itbench_dsl.diagnostics import Diagnostics
    from itbench_dsl.parser import parse_bytes
    from itbench_dsl.reader import entries_as_data

    ports: dict[int, Path] = {}
    for path in sorted((REPO / "scenarios").rglob("*.itb")):
        document = parse_bytes(path.read_bytes(), str(path), Diagnostics())
        if not isinstance(document, ast.Scenario):
            continue
        for stmt in document.statements:
            if isinstance(stmt, ast.Metadata):
                number = entries_as_data(stmt.entries).get("itbench_id")
                if isinstance(number, int):
                    ports.setdefault(number, path)
    return ports


def reference_ids() -> list[int]:
    return sorted(int(p.name.split("_", 1)[1]) for p in REFERENCE.glob("scenario_*") if p.is_dir())


def compare_port(path: Path, number: int) -> tuple[dict[str, list[str]], list[str]]:
    """Per ITBench file, the differences of the port's compiled file from ITBench's; errors if it fails."""
    import yaml

    from itbench_dsl.compiler import compile_source
    from itbench_dsl.diagnostics import Diagnostics
    from itbench_dsl.importer.compat import created_objects, differences, renamed_objects

    diags = Diagnostics()
    result = compile_source(path.read_bytes(), str(path.relative_to(REPO)), diags)
    if diags.errors():
        return {}, [d.message for d in diags.errors()]
    ours = {name: yaml.safe_load(result.files[f"itbench/{name}"].decode("utf-8")) for name in FILES}
    theirs = {name: yaml.safe_load((REFERENCE / f"scenario_{number}" / name).read_text("utf-8"))
              for name in FILES if (REFERENCE / f"scenario_{number}" / name).is_file()}
    renamed = renamed_objects(created_objects(result.scenario), list(ours.values()), list(theirs.values()))
    out = {}
    for name in FILES:
        if name not in theirs:
            out[name] = [f"{name}: ITBench has no such file"]
            continue
        out[name] = differences(name, ours[name], theirs[name], renamed)
    return out, []


def import_findings(number: int) -> tuple[list[str], bool]:
    """The import's diagnostics on ITBench's files (relative to the reference folder), and whether it succeeded."""
    from itbench_dsl.diagnostics import Diagnostics
    from itbench_dsl.importer import import_path

    diags = Diagnostics()
    text = import_path(REFERENCE / f"scenario_{number}", diags)
    lines = []
    for d in diags.sorted():
        where = Path(d.path).name if d.path else ""
        folder = Path(d.path).parent.name
        lines.append(f"{d.code} `{folder}/{where}:{d.span.line}`: {d.message}")
    return lines, text is not None


def render() -> str:
    from itbench_dsl.importer.compat import graph_differences, only_names

    ports = library_ports()
    numbers = reference_ids()
    rows, sections = [], []
    exact = {name: 0 for name in FILES}
    renamed = {name: 0 for name in FILES}  # exact but for the names of created objects
    graph_exact = 0
    for number in numbers:
        path = ports.get(number)
        findings, imported = import_findings(number)
        if path is None:
            rows.append(f"| {number} | not ported | | | |")
            sections.append(f"### scenario {number}: not ported\n")
            sections.append("The import fails, so the library has no port:\n")
            sections.extend(f"- {line}" for line in findings)
            sections.append("")
            continue
        diffs, errors = compare_port(path, number)
        name = path.relative_to(REPO).as_posix()
        if errors:
            rows.append(f"| {number} | [`{path.stem}`](../{name}) | does not compile | | |")
            continue
        status = []
        for file_name in FILES:
            ok = not diffs[file_name]
            exact[file_name] += ok
            renamed[file_name] += only_names(diffs[file_name])
            status.append("exact" if ok else "exact but names" if only_names(diffs[file_name]) else "differs")
        if diffs["groundtruth_v1.yaml"] and not graph_differences(diffs["groundtruth_v1.yaml"]):
            status[-1] = "graph exact"
            graph_exact += 1
        elif not diffs["groundtruth_v1.yaml"]:
            graph_exact += 1
        rows.append(f"| {number} | [`{path.stem}`](../{name}) | " + " | ".join(status) + " |")
        all_diffs = [d for file_name in FILES for d in diffs[file_name]]
        if not all_diffs:
            continue
        sections.append(f"### scenario {number}: `{path.stem}`\n")
        sections.append("Differences:\n")
        sections.extend(f"- {d}" for d in all_diffs)
        sections.append("")
        if findings:
            sections.append("What `itbench import` reports on ITBench's files (the corrections the port carries):\n")
            sections.extend(f"- {line}" for line in findings)
            sections.append("")
        if not imported:
            sections.append("The import itself fails; the port is written by hand.\n")
    total = len(numbers)
    head = [
        "# ITBench compatibility",
        "",
        "Generated by `python tools/itbench_compat.py` (checked by the tests); do not edit.",
        "",
        f"ITBench's reference set has {total} SRE/FinOps scenarios. For each, the library scenario with its",
        "`itbench_id` is compiled and its ITBench files are compared with ITBench's own, YAML loaded (key order",
        "ignored). Counts of files that round-trip exactly: "
        + ", ".join(f"`{name}` {exact[name]}/{total}" for name in FILES) + " (and "
        + ", ".join(f"{renamed[name]}" for name in FILES) + " more but for the names of created objects); the causal graph of",
        f"`groundtruth_v1.yaml` (groups, aliases, propagations, alerts) {graph_exact}/{total} (\"graph exact\").",
        "",
        "Reasons that hold for every scenario, and are not repeated below:",
        "",
        "- `fault` entries of groundtruth_v1.yaml are derived from the fault library (category `Change`, the",
        "  library's description and mechanism); ITBench's are written by hand, in several shapes.",
        "- groundtruth.yaml's `alerts` are those the port expects (`alert NAME on ...`, each with a rule its bundle",
        "  ships) and those the fault library says each fault raises that kube-prometheus-stack defines; ITBench's",
        "  list only what its scenario index names.",
        "- Where ITBench's groundtruth_v1.yaml has no envelope (`apiVersion`, `kind`, `metadata`), the port's has one.",
        "- `recommendedActions` come from the scenario's `solution` blocks: their ids are slugs of the titles",
        "  (ITBench's files without envelope use free text, and spell the key `recommended_actions`).",
        "- An alias of a single group joins nothing and counts as no alias.",
        "- The v1 ground truth is compared by groups, aliases, propagations and alerts: a difference there comes",
        "  with the import's warning that explains it (W5001 undefined group id, W5002 an object the injection",
        "  does not create, W5003 v1 and v2 disagree, W5004 a statement the topology or the scoring cannot carry,",
        "  W5005 a file the port cannot reproduce).",
        "- Objects a fault creates: ITBench's files name them after the fault (a Schedule",
        "  `checkout-payment-network-loss`), which the agent reads; the port names them so that they say nothing",
        "  of it (E4010), or, where ITBench's injection task fixes the name rather than reading it from",
        "  scenario.yaml, as that task does (an AuthorizationPolicy `<gateway>-deny`). A file that differs only",
        "  so is \"exact but names\"; the names are compared as the port's everywhere else.",
        "- Grading differs from ITBench's, though the files are the same: ITBench's evaluators match an",
        "  answer's names against each group's `filter` regular expressions, so `frontend\\b` and `frontend-.*`",
        "  also credit `frontend-proxy` and its pods, and a name of no object at all can score. The bundle's",
        "  evaluator keeps each filter's intent (the group's object, or the pods of its workload) and credits a",
        "  name only when it refers to that object (docs/evaluator.md). The filters are written as ITBench",
        "  writes them; one that matches every object of its kind is refused (E2030).",
        "",
        "| ITBench | port | scenario.yaml | groundtruth.yaml | groundtruth_v1.yaml |",
        "|---|---|---|---|---|",
    ]
    return "\n".join(head + rows + ["", "## Differences and their reasons", ""] + sections).rstrip() + "\n"


def main() -> int:
    if not REFERENCE.is_dir():
        print(f"the reference folder is absent: {REFERENCE}", file=sys.stderr)
        return 2
    text = render()
    if "--check" in sys.argv[1:]:
        current = OUTPUT.read_text("utf-8") if OUTPUT.is_file() else ""
        if current != text:
            print(f"{OUTPUT.relative_to(REPO)} is out of date: run python tools/itbench_compat.py", file=sys.stderr)
            return 1
        return 0
    OUTPUT.write_text(text, "utf-8")
    print(f"wrote {OUTPUT.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
