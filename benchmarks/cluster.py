"""Build and start-up times of the local control plane (`itbench cluster`).

    python benchmarks/cluster.py [--cold] [--rounds R]

Prints:
- warm build: `go build` of the binary into an empty itbench cache while Go's build and module
  caches are warm (what a changed Go source costs, and what CI pays after the first build);
- cached: `build()` when the binary for these sources is already cached (every later `up`);
- cold build (only with `--cold`, minutes and ~640 MB of downloads): fresh, empty GOCACHE and
  GOMODCACHE in a temporary folder, so every module is downloaded and every package compiled,
  as on a new machine;
- the binary's size;
- start-up: `up()` until ready (API server /readyz, controller manager and scheduler /healthz, a kwok
  node Ready, the default ServiceAccount), R rounds (default 3), against the 30 s target; and `down()`.

Nothing is asserted: this prints figures. The machine's other load shows in them; the CPU time of
the build's processes is printed beside the wall time.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from itbench_dsl.run.local import LocalClusterError, build, down, up  # noqa: E402
from itbench_dsl.run.local.build import versions  # noqa: E402


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed_build(env: dict[str, str]) -> tuple[float, float, Path]:
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        cpu, started = children_cpu(), time.monotonic()
        path = build(force=True, say=lambda m: None)
        return time.monotonic() - started, children_cpu() - cpu, path
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cold", action="store_true",
                        help="also build with empty Go caches (minutes; ~640 MB of module downloads)")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    print("modules: " + ", ".join(f"{m} {v}" for m, v in versions().items()))
    try:
        binary = build()
    except LocalClusterError as exc:
        print(f"cannot build: {exc}", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="itbench-bench-") as scratch:
        if args.cold:
            wall, cpu, _ = timed_build({"ITBENCH_CACHE_DIR": f"{scratch}/cold-cache", "GOCACHE": f"{scratch}/gocache",
                                        "GOMODCACHE": f"{scratch}/gomodcache"})
            print(f"cold build (empty GOCACHE and GOMODCACHE): {wall:.0f} s wall, {cpu:.0f} s CPU")
            for root, folders, _files in os.walk(f"{scratch}/gomodcache"):  # Go writes its modules read-only
                for folder in folders:
                    os.chmod(os.path.join(root, folder), 0o755)
            shutil.rmtree(f"{scratch}/gomodcache", ignore_errors=True)
        wall, cpu, _ = timed_build({"ITBENCH_CACHE_DIR": f"{scratch}/warm-cache"})
        print(f"warm build (Go caches warm, binary not cached): {wall:.1f} s wall, {cpu:.1f} s CPU")
        started = time.monotonic()
        build(say=lambda m: None)
        print(f"cached: {1000 * (time.monotonic() - started):.1f} ms")
        print(f"binary: {binary.stat().st_size / 2**20:.1f} MiB ({binary})")

        ups, downs = [], []
        for round_ in range(args.rounds):
            directory = Path(scratch) / f"cluster-{round_}"
            started = time.monotonic()
            up(directory, binary=binary, say=lambda m: None)
            ups.append(time.monotonic() - started)
            started = time.monotonic()
            down(directory, say=lambda m: None)
            downs.append(time.monotonic() - started)
        print(f"start-up (up -> ready), {args.rounds} rounds: median {statistics.median(ups):.1f} s, "
              f"min {min(ups):.1f} s, max {max(ups):.1f} s; target 30 s, ratio {statistics.median(ups) / 30:.2f}")
        print(f"stop (down): median {statistics.median(downs):.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
