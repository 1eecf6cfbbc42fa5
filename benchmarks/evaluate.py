"""Cost of one run of a generated evaluator.py on a 500-object state.

    python benchmarks/evaluate.py [--rounds N] [--objects N]

Builds the otel-shipping-quote-address bundle's evaluator, a state of the topology (workloads
with status, their pods, services, configmaps ...) padded with further pods and configmaps to
500 objects, and times, in-process, one full run (parse the state's JSON text, index it, grade
diagnosis and mitigation), median over the rounds. Also prints the wall time of the command
itself in a new process (Python start-up included). Target: <= 50 ms per in-process run.
"""

from __future__ import annotations

import argparse
import copy
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from itbench_dsl.backends import evaluator as evaluator_backend
from itbench_dsl.backends.faults import plan
from itbench_dsl.backends.manifests import topology_manifests
from itbench_dsl.checker import check
from itbench_dsl.diagnostics import Diagnostics
from itbench_dsl.parser import parse_bytes

TARGET_MS = 50.0
SCENARIO = ROOT / "scenarios/sre/otel-shipping-quote-address.itb"


def build_state(scenario, objects: int) -> dict:
    items = []
    for obj in topology_manifests(scenario.topology) + plan(scenario)[2]:  # the solved state
        obj = copy.deepcopy(obj)
        items = [o for o in items if (o["kind"], o["metadata"]["name"]) != (obj["kind"], obj["metadata"]["name"])]
        items.append(obj)
    for obj in list(items):
        if obj["kind"] in ("Deployment", "StatefulSet"):
            replicas = obj["spec"].get("replicas", 1)
            obj["status"] = {"replicas": replicas, "readyReplicas": replicas}
            for i in range(replicas):
                items.append(_pod(obj, i))
    filler = 0
    while len(items) < objects:  # more pods of the workloads and more configmaps, as a busy cluster has
        workloads = [o for o in items if o["kind"] == "Deployment"]
        if filler % 2:
            items.append(_pod(workloads[filler % len(workloads)], 10 + filler))
        else:
            items.append({"apiVersion": "v1", "kind": "ConfigMap",
                          "metadata": {"name": f"filler-{filler}", "namespace": "otel-demo"},
                          "data": {"key": "x" * 200}})
        filler += 1
    return {"resources": {"apiVersion": "v1", "kind": "List", "items": items[:objects]},
            "alerts": {"status": "success", "data": {"alerts": []}}}


def _pod(workload: dict, index: int) -> dict:
    name = workload["metadata"]["name"]
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": f"{name}-5d8f7b9c6d-{index:05d}"[: len(name) + 17],
                         "namespace": workload["metadata"]["namespace"],
                         "labels": dict(workload["spec"]["template"]["metadata"].get("labels", {}))},
            "spec": copy.deepcopy(workload["spec"]["template"]["spec"]),
            "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=50)
    parser.add_argument("--objects", type=int, default=500)
    args = parser.parse_args()
    diags = Diagnostics()
    scenario = check(parse_bytes(SCENARIO.read_bytes(), str(SCENARIO), diags), str(SCENARIO), diags).scenario
    source = evaluator_backend.evaluator_source(scenario)
    namespace: dict = {"__name__": "bench"}
    exec(compile(source, "evaluator.py", "exec"), namespace)  # noqa: S102 - the generated evaluator
    spec, evaluate = namespace["SPEC"], namespace["evaluate"]
    state_text = json.dumps(build_state(scenario, args.objects))
    diagnosis = {"entities": [{"name": "otel-demo/Deployment/shipping", "contributing_factor": True}],
                 "propagations": [{"source": "otel-demo/Service/shipping", "target": "otel-demo/Service/checkout"}]}

    times = {"mitigate": [], "diagnose": []}
    for _ in range(args.rounds):
        for task, output in (("mitigate", None), ("diagnose", diagnosis)):
            start = time.perf_counter()
            verdict = evaluate(spec, output, json.loads(state_text), task=task)
            times[task].append((time.perf_counter() - start) * 1000)
            assert verdict["passed"], verdict
    with tempfile.TemporaryDirectory() as folder:
        script, state = Path(folder, "evaluator.py"), Path(folder, "state.json")
        script.write_text(source)
        state.write_text(state_text)
        walls = []
        for _ in range(5):
            start = time.perf_counter()
            subprocess.run([sys.executable, str(script), "--state", str(state)], check=True, capture_output=True)
            walls.append((time.perf_counter() - start) * 1000)
    print(f"state: {args.objects} objects, {len(state_text) / 1024:.0f} KiB of JSON; {args.rounds} rounds")
    for task, values in times.items():
        median = statistics.median(values)
        print(f"evaluate ({task}): median {median:.2f} ms, ratio to the {TARGET_MS:.0f} ms target {median / TARGET_MS:.3f}")
    print(f"python evaluator.py in a new process (start-up included): median {statistics.median(walls):.1f} ms")


if __name__ == "__main__":
    main()
