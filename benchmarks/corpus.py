"""The adversarial corpus over the scenario library: false passes and false fails of every evaluator.

    python benchmarks/corpus.py [SCENARIO_DIR]

For every scenario of the library, builds its corpus (itbench_dsl/analysis/corpus.py: states and answers
that must pass, fail or be refused) and grades each case with the scenario's own evaluator.
Prints the cases per task and kind, the false passes (a case that must fail or be refused, graded
a pass), the false fails (a case that must pass, graded a fail or refused), the grading errors
(a case that must fail, refused, or the reverse) and the time taken. Target: 0 false passes and 0
false fails.
"""

from __future__ import annotations

import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from itbench_dsl.compiler import compile_source  # noqa: E402
from itbench_dsl.analysis.corpus import FAIL, PASS, UNUSABLE, all_cases  # noqa: E402
from itbench_dsl.diagnostics import Diagnostics  # noqa: E402
from itbench_dsl.runtime.evaluator import evaluate
from itbench_dsl.runtime.state import InputError


def got(spec: dict, case) -> str:
    try:
        verdict = evaluate(spec, case.answer, case.state, task=case.task, artifact=case.artifact,
                           injected_at=case.injected_at, answered_at=case.answered_at)
    except InputError:
        return UNUSABLE
    return PASS if verdict["passed"] else FAIL


def main() -> int:
    folder = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "scenarios"
    start = time.perf_counter()
    counts: Counter = Counter()
    false_pass, false_fail, other = [], [], []
    scenarios = 0
    for path in sorted(folder.rglob("*.itb")):
        result = compile_source(path.read_bytes(), str(path), Diagnostics())
        if result.scenario is None:
            continue
        scenarios += 1
        spec, cases = all_cases(result.scenario)
        for case in cases:
            counts[(case.task, case.want)] += 1
            verdict = got(spec, case)
            if verdict == case.want:
                continue
            line = f"{result.scenario.name}: {case.task}: {case.name} (must {case.want}, got {verdict})"
            if verdict == PASS:
                false_pass.append(line)
            elif case.want == PASS:
                false_fail.append(line)
            else:
                other.append(line)
    seconds = time.perf_counter() - start
    total = sum(counts.values())
    print(f"{scenarios} scenarios, {total} cases in {seconds:.1f} s ({1000 * seconds / max(total, 1):.2f} ms a case, "
          "compiling included)")
    for (task, want), n in sorted(counts.items()):
        print(f"  {task:9} must {want:9} {n:5}")
    print(f"false passes: {len(false_pass)} (target 0)")
    print(f"false fails:  {len(false_fail)} (target 0)")
    print(f"graded a fail where it must be refused, or the reverse: {len(other)}")
    for line in false_pass + false_fail + other:
        print("  " + line)
    return 1 if false_pass or false_fail or other else 0


if __name__ == "__main__":
    sys.exit(main())
