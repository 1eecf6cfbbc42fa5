"""Observed against derived states over the library: how many scenarios' verdicts agree.

    python benchmarks/observe.py                 # every scenario of scenarios/ (hours on 2 cores)
    python benchmarks/observe.py --sample 12     # 12 scenarios spread evenly over the sorted library
    python benchmarks/observe.py --only k8sbench-fix-oomkilled --only otel-checkout-nonexistent-image

Starts one local control plane (`itbench cluster up`), observes each scenario on it (`itbench states
--observe`: run/observe.py) and prints, per scenario, whether the derived and observed verdicts agree (or
why it cannot be observed here), its seconds, and at the end: scenarios that agree N/M, those that differ
with each difference, and the mean seconds per observed scenario. docs/observe.md classifies the differences
(model bugs fixed, kwok's limits). Needs the control plane built (`itbench cluster build`).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def main() -> int:
    from itbench_dsl.bundle import write_bundle
    from itbench_dsl.checking import check_source
    from itbench_dsl.run.local import down, up
    from itbench_dsl.run.observe import kubectl_path, observe_scenario

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sample", type=int, default=0, help="observe N scenarios spread over the library")
    parser.add_argument("--only", action="append", default=[], help="observe this scenario (its file's stem)")
    parser.add_argument("--library", default=str(ROOT / "scenarios"))
    parser.add_argument("--progress", action="store_true", help="every step on stderr")
    options = parser.parse_args()

    paths = sorted(p for p in Path(options.library).rglob("*.itb") if "faults" not in p.parts)
    total = len(paths)
    if options.only:
        paths = [p for p in paths if p.stem in options.only]
    elif options.sample and options.sample < len(paths):
        step = len(paths) / options.sample
        paths = [paths[int(i * step)] for i in range(options.sample)]
    rows = []
    with tempfile.TemporaryDirectory(prefix="itbench-observe-bench-") as temporary:
        work = Path(temporary)
        cluster_dir = work / "cluster"
        started = time.monotonic()
        cluster = up(cluster_dir, say=lambda m: None)
        print(f"control plane up in {time.monotonic() - started:.1f} s; {len(paths)} of {total} scenarios", flush=True)
        try:
            for path in paths:
                checked = check_source(path.read_bytes(), str(path.relative_to(ROOT)))
                scenario = checked.result.scenario
                if checked.has_errors or scenario is None:
                    print(f"{path.stem}: not checked clean, skipped", flush=True)
                    continue
                bundle = write_bundle(work / "bundles", scenario.name, checked.result.files)
                obs = observe_scenario(scenario, bundle, str(cluster.kubeconfig), cluster_dir=cluster_dir,
                                       kubectl=kubectl_path(cluster_dir), work=work / "runs" / scenario.name,
                                       progress=sys.stderr if options.progress else None,
                                       restore_stages=False)  # the next scenario restages; the plane goes after
                rows.append(obs)
                what = ("agree" if obs.agree else "differ: " + "; ".join(obs.differences)) \
                    if obs.status == "observed" else f"{obs.status}: {obs.detail.splitlines()[0] if obs.detail else ''}"
                print(f"{scenario.name}: {what} [{obs.solution or '-'}] ({obs.seconds:.0f} s)", flush=True)
        finally:
            down(cluster_dir, say=lambda m: None)
    observed = [o for o in rows if o.status == "observed"]
    agree = [o for o in observed if o.agree]
    print()
    print(f"scenarios whose derived and observed verdicts agree: {len(agree)}/{len(rows)} "
          f"({len(observed)} observed, {sum(o.status == 'unobservable' for o in rows)} unobservable here, "
          f"{sum(o.status == 'failed' for o in rows)} failed; library {total})")
    if observed:
        print(f"seconds per observed scenario: {sum(o.seconds for o in observed) / len(observed):.1f} "
              f"(min {min(o.seconds for o in observed):.0f}, max {max(o.seconds for o in observed):.0f})")
    for o in rows:
        if o.status == "observed" and not o.agree:
            print(f"  differs: {o.scenario}: {'; '.join(o.differences)}")
        elif o.status != "observed":
            print(f"  {o.status}: {o.scenario}: {o.detail.splitlines()[0] if o.detail else ''}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
