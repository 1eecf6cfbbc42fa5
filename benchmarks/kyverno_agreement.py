#!/usr/bin/env python3
"""Agreement of `itbench policy-test` (the project's own Kyverno matcher) with the real `kyverno test`.

    python benchmarks/kyverno_agreement.py [ROOT...] [--kyverno PATH] [--all] [--json]

ROOT folders (default: ../shared/reference/kyverno/policy-tests) are searched for kyverno-test.yaml
suites. Each suite is run by both: `kyverno test` (the CLI built by tools/build_ecosystem.py, or
--kyverno) in the suite's folder, and `itbench policy-test --format json`. Only suites that
our matcher claims to support (status pass or fail: no result unsupported, no unusable input) are
compared unless --all is given. Results are compared one by one: an expected result (policy, rule,
resource) is met by Kyverno when every row that Kyverno prints for it passes (a plain rule's
row covers its autogen rules), and by us when our report says met.

Prints the suites agreeing N/M, the results agreeing N/M and every difference; exit 0 either way
(a measurement, not a test: tests/runtime/test_kyverno_cli.py asserts agreement). Needs the built CLI.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
DEFAULT_ROOT = REPO.parent / "shared" / "reference" / "kyverno" / "policy-tests"
AUTOGEN = re.compile(r"^autogen-(?:cronjob-)?")


def find_suites(roots: list[Path]) -> list[Path]:
    found: set[Path] = set()
    for root in roots:
        if root.is_file():
            found.add(root.resolve())
        else:
            found.update(p.resolve() for p in root.rglob("kyverno-test.yaml") if p.is_file())
    return sorted(found)


def ours(suites: list[Path]) -> dict[Path, dict]:
    """Our report for each suite, from one `itbench policy-test --format json` run."""
    proc = subprocess.run([sys.executable, "-c", "from itbench_dsl.cli import main; main()",
                           "policy-test", "--format", "json", *map(str, suites)],
                          capture_output=True, text=True, cwd=REPO)
    try:
        report = json.loads(proc.stdout)
    except json.JSONDecodeError:
        raise SystemExit(f"itbench policy-test gave no JSON (exit {proc.returncode}): {proc.stderr[-2000:]}")
    return {Path(s["path"]).resolve(): s for s in report["suites"]}


def kyverno_rows(kyverno: str, suite: Path, timeout: float = 120) -> tuple[list[dict] | None, str]:
    """Kyverno's rows for one suite (None when it could not run the suite) and its output."""
    proc = subprocess.run([kyverno, "test", str(suite.parent), "--file-name", suite.name,
                           "--remove-color", "--detailed-results", "--output-format", "json"],
                          capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)
    text = proc.stdout + proc.stderr
    rows: list[dict] = []
    seen = False
    decoder = json.JSONDecoder()
    # the JSON arrays sit between progress lines ("Loading test ...", "Checking results ...")
    for match in re.finditer(r"^\[", text, re.M):
        try:
            value, _ = decoder.raw_decode(text[match.start():])
        except json.JSONDecodeError:
            continue
        if isinstance(value, list):
            seen = True
            rows.extend(v for v in value if isinstance(v, dict))
    if not seen and "Test Summary" not in text:
        return None, text
    return rows, text


def row_key(row: dict) -> tuple[str, str, str, str, str]:
    """(policy, rule without its autogen prefix, kind, namespace, name) of one of Kyverno's rows;
    its RESOURCE reads apiVersion/Kind/namespace/name (the namespace empty for cluster objects)."""
    policy = str(row.get("POLICY", "")).split("/")[-1]
    rule = AUTOGEN.sub("", str(row.get("RULE", "")))
    parts = str(row.get("RESOURCE", "")).split("/")
    kind, namespace, name = (parts[-3], parts[-2], parts[-1]) if len(parts) >= 4 else ("", "", parts[-1])
    return policy, rule, kind, namespace, name


def _verdicts(by_key: dict, policy: str, rule: str, kind: str, resource: str) -> list[bool] | None:
    """Kyverno's row verdicts for one expected result: same policy and name, the rule (any rule
    when the result names none), and the kind and namespace when the result gives them."""
    namespace, _, name = resource.rpartition("/")
    found = [v for (p, r, k, ns, n), vs in by_key.items()
             if p == policy and n == name and (not rule or r == rule)
             and (not kind or k == kind) and (not namespace or ns == namespace) for v in vs]
    return found or None


def compare_suite(mine: dict, rows: list[dict] | None) -> dict:
    """Result-by-result comparison of one suite."""
    if rows is None:
        return {"agree": False, "results": [], "reason": "kyverno test could not run the suite",
                "status": mine.get("status"), "kyverno_passed": False}
    by_key: dict[tuple, list[bool]] = {}
    for row in rows:
        by_key.setdefault(row_key(row), []).append(str(row.get("RESULT", "")).strip().lower() == "pass")
    results = []
    for r in mine.get("results", []):
        key = (str(r["policy"]).split("/")[-1], AUTOGEN.sub("", str(r.get("rule") or "")))
        verdicts = _verdicts(by_key, *key, str(r.get("kind") or "").split("/")[-1], str(r["resource"]))
        theirs = None if verdicts is None else all(verdicts)
        ours_met = None if r.get("unsupported") else bool(r.get("met"))
        results.append({"policy": key[0], "rule": r.get("rule"), "resource": r["resource"],
                        "expected": r.get("expected"), "actual": r.get("actual"), "ours": ours_met,
                        "kyverno": theirs, "agree": ours_met is not None and ours_met == theirs,
                        "detail": r.get("detail")})
    agree = mine.get("status") in ("pass", "fail") and bool(results) and all(x["agree"] for x in results)
    kyverno_passed = bool(rows) and all(str(row.get("RESULT", "")).strip().lower() == "pass" for row in rows)
    return {"agree": agree, "results": results, "reason": None if agree else _reason(mine, results),
            "status": mine.get("status"), "kyverno_passed": kyverno_passed}


def _reason(mine: dict, results: list[dict]) -> str:
    if mine.get("status") == "error":
        return f"itbench: unusable input: {mine.get('error')}"
    if mine.get("status") == "unsupported":
        return f"itbench: unsupported: {mine.get('unsupported')}"
    for x in results:
        if not x["agree"]:
            if x["kyverno"] is None:
                return f"kyverno prints no row for {x['policy']}/{x['rule']}/{x['resource']}"
            return (f"{x['policy']}/{x['rule']}/{x['resource']}: expected {x['expected']}, "
                    f"kyverno {'met' if x['kyverno'] else 'not met'}, itbench {'met' if x['ours'] else 'not met'}"
                    f" (itbench: {x['actual']}: {x['detail']})")
    return "no results"


def main(argv: list[str] | None = None) -> int:
    sys.path.insert(0, str(REPO / "tools"))
    import build_ecosystem

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("roots", nargs="*", type=Path, default=[DEFAULT_ROOT])
    parser.add_argument("--kyverno", help="the kyverno binary (default: the one tools/build_ecosystem.py built)")
    parser.add_argument("--all", action="store_true", help="also compare suites our matcher reports unsupported")
    parser.add_argument("--json", action="store_true", help="print the comparison as JSON")
    args = parser.parse_args(argv)
    kyverno = args.kyverno or str(build_ecosystem.binary_path("kyverno"))
    if not Path(kyverno).is_file():
        print(f"no kyverno binary at {kyverno}: run python tools/build_ecosystem.py kyverno", file=sys.stderr)
        return 2
    suites = find_suites(args.roots)
    started = time.monotonic()
    reports = ours(suites)
    ours_s = time.monotonic() - started
    compared, skipped = {}, {}
    started = time.monotonic()
    for suite in suites:
        mine = reports.get(suite)
        if mine is None:
            skipped[suite] = "no itbench report"
            continue
        if not args.all and mine.get("status") not in ("pass", "fail"):
            skipped[suite] = mine.get("status")
            continue
        rows, _ = kyverno_rows(kyverno, suite)
        compared[suite] = compare_suite(mine, rows)
    kyverno_s = time.monotonic() - started
    agree = sum(c["agree"] for c in compared.values())
    n_results = sum(len(c["results"]) for c in compared.values())
    agree_results = sum(x["agree"] for c in compared.values() for x in c["results"])
    if args.json:
        print(json.dumps({"suites": len(compared), "suites_agreeing": agree, "results": n_results,
                          "results_agreeing": agree_results, "skipped": {str(k): v for k, v in skipped.items()},
                          "differences": {str(k): c for k, c in compared.items() if not c["agree"]}}, indent=2))
        return 0
    print(f"suites found: {len(suites)}; compared: {len(compared)}; not compared (our matcher does not "
          f"claim them): {len(skipped)}")
    print(f"suites agreeing: {agree}/{len(compared)}")
    print(f"results agreeing: {agree_results}/{n_results}")
    print(f"time: itbench {ours_s:.1f} s for all suites, kyverno {kyverno_s:.1f} s (one process per suite)")
    unclaimed = [c for c in compared.values() if c["status"] not in ("pass", "fail")]
    if unclaimed:  # --all: what Kyverno makes of the suites our matcher does not claim
        print(f"suites our matcher does not claim: {len(unclaimed)}; kyverno test passes "
              f"{sum(c['kyverno_passed'] for c in unclaimed)} of them")
    for suite, c in compared.items():
        if not c["agree"] and c["status"] in ("pass", "fail"):
            print(f"DIFF {suite}: {c['reason']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
