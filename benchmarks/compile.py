"""Compile speed of the scenario library, in-process, split by stage; and CLI start-up.

    python benchmarks/compile.py [--rounds N]

Prints, per stage (parse, check, codegen, validate), the median milliseconds per scenario
over the library with warm caches (the parser, the standard-library apps and the schema
validators are built once per process, as in a long `itbench check` run), the first, cold
compile of the process, scenarios per second, and the cold wall time of `itbench --help`
and `itbench --version` in a new process. Targets: <= 5 ms median per scenario with
validation, `itbench --help` cold <= 200 ms.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from itbench_dsl.compiler import compile_source  # noqa: E402
from itbench_dsl.diagnostics import Diagnostics  # noqa: E402

TARGET_MS = 5.0
HELP_TARGET_MS = 200.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=20, help="compiles of each scenario (default 20)")
    args = parser.parse_args()
    files = sorted((ROOT / "scenarios").rglob("*.itb"))
    sources = [(str(p.relative_to(ROOT)), p.read_bytes()) for p in files]

    start = time.perf_counter()
    diags = Diagnostics()
    compile_source(sources[0][1], sources[0][0], diags)
    cold_ms = (time.perf_counter() - start) * 1000

    stages = {"parse": [], "check": [], "codegen": [], "validate": [], "total": []}
    for _ in range(args.rounds):
        for path, data in sources:
            diags = Diagnostics()
            result = compile_source(data, path, diags)
            if diags.has_errors:
                sys.exit(f"{path} does not compile; fix the library first")
            t = result.timings
            for name in ("parse", "check", "codegen", "validate"):
                stages[name].append(getattr(t, name) * 1000)
            stages["total"].append((t.parse + t.check + t.codegen + t.validate) * 1000)

    print(f"scenario library: {len(sources)} scenarios, {args.rounds} rounds each (warm caches)")
    print(f"{'stage':10} {'median ms':>10} {'p90 ms':>10}")
    for name, values in stages.items():
        values = sorted(values)
        p90 = values[int(len(values) * 0.9) - 1]
        print(f"{name:10} {statistics.median(values):10.3f} {p90:10.3f}")
    median_total = statistics.median(stages["total"])
    print(f"scenarios per second: {1000 / statistics.mean(stages['total']):.0f}")
    print(f"median per scenario: {median_total:.3f} ms (target <= {TARGET_MS} ms, ratio {median_total / TARGET_MS:.2f})")
    print(f"first compile in this process (cold caches): {cold_ms:.1f} ms")

    for argv in (["--help"], ["--version"]):
        times = []
        for _ in range(7):
            start = time.perf_counter()
            subprocess.run([sys.executable, "-m", "itbench_dsl", *argv], check=True, capture_output=True, cwd=ROOT)
            times.append((time.perf_counter() - start) * 1000)
        median = statistics.median(times)
        print(f"itbench {argv[0]} cold: {median:.0f} ms median of 7 (target <= {HELP_TARGET_MS:.0f} ms, ratio "
              f"{median / HELP_TARGET_MS:.2f})")
    loaded = subprocess.run([sys.executable, "-c", "import sys, itbench_dsl.cli, itbench_dsl.compiler; "
                             "print('kubernetes' in sys.modules)"], capture_output=True, text=True, cwd=ROOT)
    print(f"kubernetes client imported by compile/check: {loaded.stdout.strip()}")


if __name__ == "__main__":
    main()
