"""Cost of a generated evaluator.py: one run on a 500-object state, and answers of 100,000 entities.

    python benchmarks/evaluate.py [--rounds N] [--objects N] [--entities N]

Builds the otel-shipping-quote-address bundle's evaluator and its solved state (as the compiler
derives it: workloads with status, their pods, services, configmaps ...), padded with further pods
and configmaps to 500 objects, and times, in-process, one full run of each task (parse the state's
JSON text, index it, grade), median over the rounds; then a diagnosis naming 100,000 distinct
entities (objects of the state, pods, and names of objects that exist nowhere) and one naming
twice as many, to show the cost grows linearly. Also prints the wall time of the command itself in
a new process (Python start-up included).

Targets: <= 50 ms per in-process run on the 500-object state; <= 2 s for 100,000 entities.
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

from itbench_dsl.analysis import states  # noqa: E402
from itbench_dsl.backends import evaluator as evaluator_backend  # noqa: E402
from itbench_dsl.compiler import compile_source  # noqa: E402
from itbench_dsl.diagnostics import Diagnostics  # noqa: E402

STATE_TARGET_MS = 50.0
ENTITIES_TARGET_S = 2.0
SCENARIO = ROOT / "scenarios/sre/otel-shipping-quote-address.itb"


def build_state(scenario, objects: int) -> dict:
    state = copy.deepcopy(states.derive(scenario)["solved"])
    items = state["resources"]["items"]
    pods = [o for o in items if o["kind"] == "Pod"]
    filler = 0
    while len(items) < objects:  # more pods of the workloads and more configmaps, as a busy cluster has
        if filler % 2:
            pod = copy.deepcopy(pods[filler % len(pods)])
            pod["metadata"]["name"] = pod["metadata"]["name"][:-5] + f"{filler:05d}"
            items.append(pod)
        else:
            items.append({"apiVersion": "v1", "kind": "ConfigMap",
                          "metadata": {"name": f"filler-{filler}", "namespace": "otel-demo"},
                          "data": {"key": "x" * 200}})
        filler += 1
    return state


def entities(state: dict, count: int) -> dict:
    """`count` distinct entity names: the state's objects in several spellings, then names of nothing."""
    names = []
    objects = [(o["metadata"].get("namespace") or "", o["kind"], o["metadata"]["name"]) for o in state["resources"]["items"]]
    for ns, kind, name in objects:
        names += [f"{ns}/{kind}/{name}", f"{kind}/{name}", f"{ns}/{kind.lower()}/{name}"]
    index = 0
    while len(names) < count:
        names.append(f"otel-demo/Deployment/ghost-{index}")
        index += 1
    return {"entities": [{"name": n, "contributing_factor": True} for n in names[:count]],
            "propagations": [{"source": names[i], "target": names[i + 1]} for i in range(0, 400, 2)]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--objects", type=int, default=500)
    parser.add_argument("--entities", type=int, default=100_000)
    args = parser.parse_args()
    result = compile_source(SCENARIO.read_bytes(), str(SCENARIO), Diagnostics())
    scenario = result.scenario
    source = evaluator_backend.evaluator_source(scenario)
    namespace: dict = {"__name__": "bench"}
    exec(compile(source, "evaluator.py", "exec"), namespace)  # noqa: S102 - the generated evaluator
    spec, evaluate = namespace["SPEC"], namespace["evaluate"]
    state = build_state(scenario, args.objects)
    state_text = json.dumps(state)
    diagnosis = states.perfect_answer(scenario, state)

    times = {"mitigate": [], "diagnose": []}
    for _ in range(args.rounds):
        for task, output in (("mitigate", None), ("diagnose", diagnosis)):
            start = time.perf_counter()
            verdict = evaluate(spec, output, json.loads(state_text), task=task)
            times[task].append((time.perf_counter() - start) * 1000)
            assert verdict["passed"], [c for c in verdict["checks"] if not c["passed"]]
    print(f"state: {len(state['resources']['items'])} objects, {len(state_text) / 1024:.0f} KiB of JSON; "
          f"{args.rounds} rounds")
    for task, values in times.items():
        median = statistics.median(values)
        print(f"evaluate ({task}): median {median:.2f} ms, ratio to the {STATE_TARGET_MS:.0f} ms target "
              f"{median / STATE_TARGET_MS:.3f}")
    seconds = {}
    for count in (args.entities, 2 * args.entities):
        answer = entities(state, count)
        start = time.perf_counter()
        verdict = evaluate(spec, answer, json.loads(state_text), task="diagnose") if count <= namespace["MAX_ENTITIES"] \
            else None
        seconds[count] = time.perf_counter() - start
        if verdict is not None:
            print(f"diagnosis of {count:,} entities: {seconds[count]:.2f} s, ratio to the {ENTITIES_TARGET_S:.0f} s "
                  f"target {seconds[count] / ENTITIES_TARGET_S:.3f} (precision "
                  f"{verdict['metrics']['root_cause_entity_precision']:.6f})")
    over = 2 * args.entities
    if over > namespace["MAX_ENTITIES"]:
        try:
            evaluate(spec, entities(state, over), json.loads(state_text), task="diagnose")
        except namespace["InputError"] as exc:
            print(f"an answer of {over:,} entities is refused: {exc}")
    with tempfile.TemporaryDirectory() as folder:
        script, state_file = Path(folder, "evaluator.py"), Path(folder, "state.json")
        script.write_text(source)
        state_file.write_text(state_text)
        walls = []
        for _ in range(5):
            start = time.perf_counter()
            subprocess.run([sys.executable, str(script), "--task", "mitigate", "--state", str(state_file)], check=True,
                           capture_output=True)
            walls.append((time.perf_counter() - start) * 1000)
    print(f"python evaluator.py in a new process (start-up included): median {statistics.median(walls):.1f} ms")


if __name__ == "__main__":
    main()
