"""Variant generation speed, scaling with topology size, and the library's yield of distinct variants.

    python benchmarks/generate.py [--skip-yield] [--generators retarget,noise]

1. Throughput: the `retarget` generator over the SRE library (the inputs loaded and checked
   beforehand), in one process and in two (spawned; the inputs are split between them). Every
   variant is checked as `itbench generate` checks it: checker, code generation, validation of
   every object and self-validation; nothing is written. Printed: variants checked per second
   (valid or not) and valid variants per second, against the target of 300/s.
2. Scaling: a synthesized inline topology of 10, 50 and 200 services (a chain of deployments with
   their services, a fault on the first one), retargeted to up to 40 others: ms per checked
   variant and variants per second.
3. Yield: every built-in generator over the whole library (seed 0, no -n): distinct valid
   variants by semantic hash, per generator and in all (target: at least 1,000), and each generator's
   variants checked per second (one process).
"""

from __future__ import annotations

import argparse
import multiprocessing
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from itbench_dsl import variants as gen  # noqa: E402
from itbench_dsl.diagnostics import Diagnostics  # noqa: E402
from itbench_dsl.analysis.identity import scenario_digest  # noqa: E402
from itbench_dsl.parser import parse_text  # noqa: E402

TARGET_PER_SECOND = 300
TARGET_DISTINCT = 1000
BUILTINS = ("retarget", "sweep", "sample", "compose", "noise", "anonymize", "control")

_BARRIER = None


def load(paths: list[Path]) -> list[gen.Parent]:
    parents = []
    for path in paths:
        diags = Diagnostics()
        parent = gen.load_input(path.read_bytes(), str(path.relative_to(ROOT)), diags)
        if parent is not None:
            parents.append(parent)
    return parents


def _retarget(parents: list[gen.Parent]) -> tuple[int, int, float]:
    start = time.perf_counter()
    result = gen.run(parents, [("retarget", gen.load_generator("retarget"))], seed=0)
    return result.attempted, len(result.variants), time.perf_counter() - start


def _init(barrier) -> None:
    global _BARRIER
    _BARRIER = barrier


def _worker(paths: list[str]) -> tuple[int, int, float]:
    """One process of the two: loads and warms its share of the inputs, waits for the other, then runs."""
    parents = load([Path(p) for p in paths])
    gen.run(parents[:2], [("retarget", gen.load_generator("retarget"))], seed=0)  # warm caches
    _BARRIER.wait()
    return _retarget(parents)


def throughput(paths: list[Path]) -> None:
    parents = load(paths)
    print(f"1. throughput: retarget over {len(parents)} SRE scenarios (checked: checker, codegen, validation, "
          "self-validation; nothing written)")
    gen.run(parents[:2], [("retarget", gen.load_generator("retarget"))], seed=0)  # warm caches
    attempted, valid, elapsed = _retarget(parents)
    one = attempted / elapsed
    print(f"   1 process : {attempted} variants checked ({valid} valid) in {elapsed:.2f} s = {one:.0f}/s "
          f"checked, {valid / elapsed:.0f}/s valid; {one / TARGET_PER_SECOND:.2f}x the target of {TARGET_PER_SECOND}/s")
    # spawned, not forked: a forked child that touches the parent's large warm heap copies it page by page
    context = multiprocessing.get_context("spawn")
    shards = [[str(p) for p in paths[0::2]], [str(p) for p in paths[1::2]]]
    with context.Pool(2, initializer=_init, initargs=(context.Barrier(2),)) as pool:
        results = pool.map(_worker, shards, chunksize=1)
    wall = max(r[2] for r in results)  # both start together (barrier); the run ends with the slower one
    attempted = sum(r[0] for r in results)
    valid = sum(r[1] for r in results)
    two = attempted / wall
    print(f"   2 processes: {attempted} variants checked ({valid} valid) in {wall:.2f} s = {two:.0f}/s "
          f"checked, {valid / wall:.0f}/s valid; {two / TARGET_PER_SECOND:.2f}x the target; "
          f"speed-up {two / one:.2f}x")


def synthetic(services: int) -> str:
    lines = [f'scenario "synthetic-{services}" {{', "  domain sre", "  complexity low",
             f'  description "A chain of {services} services."', "  topology {", '    namespace "synth"']
    for i in range(services):
        lines += [f'    deployment "svc-{i}" {{', f'      image = "ghcr.io/example/svc:{i}"', '      port "http" = 8080',
                  "    }", f'    service "svc-{i}" {{', '      port "http" = 8080', "    }"]
    for i in range(services - 1):
        lines.append(f'    "svc-{i}" -> "svc-{i + 1}"')
    lines += ["  }", '  fault nonexistent_image on deployment "svc-1" {', '    image = "ghcr.io/example/svc:0.0.0-missing"',
              "  }", "  expect {", '    alert HighRequestErrorRate on service "svc-0"',
              '    propagation deployment "svc-1" -> pod "svc-1-*" -> service "svc-1" -> service "svc-0"',
              "    mitigated when {", '      deployment "svc-1" ready within 5m',
              "      alert HighRequestErrorRate not firing", "    }", "  }", "}", ""]
    return "\n".join(lines)


def scaling() -> None:
    print("2. scaling with topology size (inline topology; retarget to up to 40 other deployments)")
    base = None
    for size in (10, 50, 200):
        text = synthetic(size)
        document = parse_text(text, f"synthetic-{size}.itb", Diagnostics())
        checked = gen.check_document(document, f"synthetic-{size}.itb")
        assert checked.scenario is not None, checked.problems
        parent = gen.Parent(f"synthetic-{size}.itb", document, checked.scenario, (), scenario_digest(checked.scenario))
        gen.run([parent], [("retarget", gen.load_generator("retarget"))], seed=0, n=2)  # warm
        start = time.perf_counter()
        result = gen.run([parent], [("retarget", gen.load_generator("retarget"))], seed=0, n=40)
        elapsed = time.perf_counter() - start
        per = elapsed / max(result.attempted, 1) * 1000
        base = base or per
        print(f"   {size:4} services: {result.attempted:3} variants ({len(result.variants)} valid), {per:6.1f} ms each, "
              f"{1000 / per:6.0f}/s; {per / base:.1f}x the 10-service time")


def library_yield(paths: list[Path], generators: list[str]) -> None:
    print(f"3. yield of the library ({len(paths)} scenarios, seed 0, no -n)")
    parents = load(paths)
    hashes: set[str] = set()
    attempted, spent = 0, 0.0
    for name in generators:
        start = time.perf_counter()
        result = gen.run(parents, [(name, gen.load_generator(name))], seed=0)
        elapsed = time.perf_counter() - start
        mine = {v.semantic_hash for v in result.variants}
        hashes |= mine
        print(f"   {name:10} {len(mine):5} distinct valid variants ({result.attempted} checked, {len(result.skips)} "
              f"skips, {result.duplicates} duplicates) in {elapsed:.1f} s = {result.attempted / elapsed:.0f} "
              "variants checked/s")
        attempted += result.attempted
        spent += elapsed
    print(f"   all        {len(hashes):5} distinct valid variants; {len(hashes) / TARGET_DISTINCT:.2f}x the target of "
          f"{TARGET_DISTINCT}; {attempted / max(spent, 1e-9):.0f} variants checked/s over every generator")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--skip-yield", action="store_true", help="skip the (slow) yield of the whole library")
    parser.add_argument("--generators", default=",".join(BUILTINS), help="generators for the yield")
    args = parser.parse_args()
    library = sorted((ROOT / "scenarios").rglob("*.itb"))
    throughput(sorted((ROOT / "scenarios" / "sre").rglob("*.itb")))
    scaling()
    if not args.skip_yield:
        library_yield(library, [g for g in args.generators.split(",") if g])


if __name__ == "__main__":
    main()
