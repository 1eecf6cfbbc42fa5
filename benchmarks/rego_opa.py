"""Cost of grading Rego with OPA: one `opa eval` over every input of a grading, against one per input.

    python benchmarks/rego_opa.py [--opa PATH] [--rounds N] [SCENARIO...]

For each library scenario whose policy task asks for Rego (every one by default; or the names given), grades
the Rego policies of its adversarial corpus (itbench_dsl/analysis/corpus.py: a right policy by content, wrong
ones, a Rego v0 one, one that does not compile) with the OPA binary (--opa, else ITBENCH_OPA, else the one
`python tools/build_ecosystem.py opa` built), twice: as the evaluator does (one `opa eval` of every input of
a grading, OPA_BATCH_QUERY), and as it did before (one `opa eval` per input, which it still does for a batch
that fails as a whole). Prints, per scenario and in all, the `opa eval` processes started and the wall time
(median over the rounds) of each way, and checks that both give the same verdicts, check for check.
Exit 1 when they differ.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from itbench_dsl.analysis.corpus import PASS, all_cases  # noqa: E402
from itbench_dsl.compiler import compile_source  # noqa: E402
from itbench_dsl.diagnostics import Diagnostics  # noqa: E402
from itbench_dsl.runtime import evaluator  # noqa: E402


def built_opa() -> str | None:
    spec = importlib.util.spec_from_file_location("build_ecosystem_bench", ROOT / "tools" / "build_ecosystem.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclass looks its module up there
    spec.loader.exec_module(module)
    path = module.binary_path("opa")
    return str(path) if path.is_file() else None


def rego_scenarios(names: list[str]) -> list:
    found = []
    for path in sorted((ROOT / "scenarios").rglob("*.itb")):
        if names and path.stem not in names:
            continue
        result = compile_source(path.read_bytes(), str(path), Diagnostics())
        if result.scenario is None:
            continue
        spec, cases = all_cases(result.scenario)
        rego = [c for c in cases if c.task == "policy" and c.artifact and c.artifact[0] == "rego"]
        rego.sort(key=lambda c: c.want != PASS)  # a right policy first: its grading is timed alone too
        if rego:
            found.append((path.stem, spec, rego))
    return found


def grade(spec, cases, per_input: bool) -> tuple[float, int, list, float, int]:
    """(wall seconds, `opa eval` processes, verdicts) of grading every case one way, then the seconds and
    processes of grading the first case (a right policy, where the corpus has one) alone."""
    evals = []
    real_run, real_batch = subprocess.run, evaluator._opa_batch

    def counting(command, *args, **kwargs):
        if len(command) > 1 and command[1] == "eval":
            evals.append(command)
        return real_run(command, *args, **kwargs)

    subprocess.run = counting
    if per_input:
        evaluator._opa_batch = lambda binary, folder, documents: None  # each input alone, as before
    try:
        start = time.perf_counter()
        verdicts = [evaluator.evaluate(spec, None, None, task="policy", artifact=c.artifact) for c in cases]
        seconds, processes = time.perf_counter() - start, len(evals)
        start = time.perf_counter()
        evaluator.evaluate(spec, None, None, task="policy", artifact=cases[0].artifact)
        return seconds, processes, verdicts, time.perf_counter() - start, len(evals) - processes
    finally:
        subprocess.run, evaluator._opa_batch = real_run, real_batch


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--opa", help="the OPA v1 binary (default: ITBENCH_OPA, else the built one)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("scenario", nargs="*", help="library scenario names (default: every Rego one)")
    args = parser.parse_args()
    opa = args.opa or (os.environ.get("ITBENCH_OPA") if os.environ.get("ITBENCH_OPA") not in (None, "", "none")
                       else built_opa())
    if not opa:
        print("no OPA: build it with `python tools/build_ecosystem.py opa`, or give --opa PATH", file=sys.stderr)
        return 2
    evaluator.OPA_OPTION = opa
    name, _ = evaluator.rego_engine()
    print(f"engine: {name} ({opa}); load average {os.getloadavg()[0]:.1f}; {args.rounds} round(s), median")
    totals = {False: [0.0, 0], True: [0.0, 0]}
    differ = []
    for scenario, spec, cases in rego_scenarios(args.scenario):
        row = {}
        for per_input in (False, True):
            runs = [grade(spec, cases, per_input) for _ in range(args.rounds)]
            seconds = statistics.median(r[0] for r in runs)
            row[per_input] = (seconds, runs[0][1], runs[0][2], statistics.median(r[3] for r in runs), runs[0][4])
            totals[per_input][0] += seconds
            totals[per_input][1] += runs[0][1]
        if json.dumps(row[False][2], sort_keys=True) != json.dumps(row[True][2], sort_keys=True):
            differ.append(scenario)
        print(f"{scenario}: {len(cases)} policies; batched {row[False][1]} opa eval, {row[False][0]:.2f} s; "
              f"per input {row[True][1]} opa eval, {row[True][0]:.2f} s; x{row[True][0] / row[False][0]:.1f}")
        print(f"  one grading of {cases[0].name}: batched {row[False][4]} opa eval, {row[False][3]:.2f} s; "
              f"per input {row[True][4]} opa eval, {row[True][3]:.2f} s")
    batched, alone = totals[False], totals[True]
    if batched[1]:
        print(f"all: batched {batched[1]} opa eval, {batched[0]:.2f} s; per input {alone[1]} opa eval, "
              f"{alone[0]:.2f} s; x{alone[0] / batched[0]:.1f}")
    print(f"verdicts: {'the same both ways' if not differ else 'DIFFER in ' + ', '.join(differ)}")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
