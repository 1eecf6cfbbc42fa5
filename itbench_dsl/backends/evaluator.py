"""evaluator.py: the bundle's standalone scorer.

The generated file is `itbench_dsl/evaluator_runtime.py` verbatim, then one line holding the
scenario's ground truth as a JSON spec inside a Python string literal, then the `__main__`
guard. Scenario text therefore only ever reaches the file as data inside that literal (`repr`
of the JSON text), never as code: see tests/test_evaluator.py for the property.
"""

from __future__ import annotations

import functools
import json
from importlib import resources

from .. import ciso, ir
from . import faults as fault_backend
from . import itbench as itbench_backend
from .manifests import topology_manifests

PROXIMITY_THRESHOLD = 0.9  # FinOps: how close to the optimum a figure must come to pass
_MAIN = 'if __name__ == "__main__":\n    sys.exit(main(SPEC))\n'


def _ref(ref: ir.ObjectRef) -> dict:
    return {"apiVersion": ref.api_version, "kind": ref.kind, "namespace": ref.namespace, "name": ref.name}


def _key(obj: dict) -> tuple:
    meta = obj.get("metadata") or {}
    return (obj.get("kind"), meta.get("namespace"), meta.get("name"))


def _manifest_ref(obj: dict) -> dict:
    meta = obj["metadata"]
    return {"apiVersion": obj.get("apiVersion"), "kind": obj["kind"], "namespace": meta.get("namespace"),
            "name": meta["name"]}


# ---- the fault's own change, as JSON paths and faulty values ----------------------------------------


def _named(items: list) -> bool:
    names = [i.get("name") for i in items if isinstance(i, dict)]
    return len(names) == len(items) and None not in names and len(set(names)) == len(names)


def diff(original, faulty, path: list, out: list) -> None:
    """The leaves where `faulty` differs from `original`: [{path, faulty} | {path, removed}].

    Lists of named elements (containers, env, ports) are keyed by name, so reordering them is no
    revert and no false alarm; other lists of equal length compare element-wise, else whole."""
    if isinstance(original, dict) and isinstance(faulty, dict):
        for key in faulty:
            if key not in original:
                out.append({"path": path + [key], "faulty": faulty[key]})
            else:
                diff(original[key], faulty[key], path + [key], out)
        for key in original:
            if key not in faulty:
                out.append({"path": path + [key], "removed": True})
        return
    if isinstance(original, list) and isinstance(faulty, list):
        if _named(original) and _named(faulty):
            before = {i["name"]: i for i in original}
            after = {i["name"]: i for i in faulty}
            for name, item in after.items():
                if name not in before:
                    out.append({"path": path + [["name", name]], "faulty": item})
                else:
                    diff(before[name], item, path + [["name", name]], out)
            for name in before:
                if name not in after:
                    out.append({"path": path + [["name", name]], "removed": True})
            return
        if len(original) == len(faulty):
            for index, (a, b) in enumerate(zip(original, faulty)):
                diff(a, b, path + [index], out)
            return
    if original != faulty:
        out.append({"path": path, "faulty": faulty})


def _reverts(scenario: ir.Scenario) -> tuple[list, list, list]:
    inject_apply, inject_delete, _, _ = fault_backend.plan(scenario)
    originals = {_key(o): o for o in topology_manifests(scenario.topology)}
    reverts, created = [], []
    for obj in inject_apply:
        original = originals.get(_key(obj))
        if original is None:
            created.append(_manifest_ref(obj))
            continue
        changes: list = []
        diff(original, obj, [], changes)
        if changes:
            reverts.append({"object": _manifest_ref(obj), "changes": changes})
    deleted = [_ref(r) for r in inject_delete if (r.kind, r.namespace, r.name) in originals]
    return reverts, created, deleted


# ---- the diagnosis ground truth -----------------------------------------------------------------------


def _groups(scenario: ir.Scenario) -> tuple[list, list, list, list]:
    truth = itbench_backend.groundtruth_v1(scenario)["spec"]
    refs: dict[str, ir.ObjectRef] = {}
    for ref in [*scenario.root_causes, *(e.source for e in scenario.propagations),
                *(e.target for e in scenario.propagations), *(a.target for a in scenario.alerts)]:
        refs.setdefault(itbench_backend.group_id(ref), ref)
    refs.update({g.id: g.target for g in scenario.ground_groups})  # groups named in `expect`
    groups = []
    for group in truth["groups"]:
        ref = refs[group["id"]]
        component = itbench_backend._component(ref, scenario) or f"{ref.kind}:{ref.name}"
        groups.append({"id": group["id"], "kind": group["kind"], "namespace": group.get("namespace"),
                       "filter": itbench_backend.filters_of(group), "root_cause": bool(group.get("root_cause")),
                       "component": component})
    edges = [list(e) for e in scenario.topology.edges]
    # nodes the topology's call graph does not hold: a chaos object touches its target, a namespace
    # holds its workloads
    for injection in scenario.injections():
        target = itbench_backend._component(injection.target, scenario)
        for ref in [injection.root, *injection.created]:
            if ref is not None and target is not None:
                node = itbench_backend._component(ref, scenario) or f"{ref.kind}:{ref.name}"
                if node != target:
                    edges.append([node, target])
    for hpa in scenario.topology.autoscalers:
        edges.append([f"HorizontalPodAutoscaler:{hpa.name}", hpa.target.name])
    for group in groups:
        if group["kind"] == "Namespace":
            name = group["component"].split(":", 1)[1]
            edges.extend([group["component"], w.name] for w in scenario.topology.workloads if w.namespace == name)
    propagations = [{"source": p["source"], "target": p["target"]} for p in truth["propagations"]]
    return groups, truth["aliases"], propagations, sorted({tuple(e) for e in edges})


# ---- safeguards ------------------------------------------------------------------------------------


def _safeguards(scenario: ir.Scenario) -> tuple[list, list]:
    zero_ok = {(o.target.kind, o.target.namespace, o.target.name) for o in scenario.optimal
               if o.path and o.path[-1] == "replicas" and o.value == 0}
    workloads = [{"kind": w.kind, "namespace": w.namespace, "name": w.name,
                  "min_replicas": 0 if w.replicas == 0 or (w.kind, w.namespace, w.name) in zero_ok else 1}
                 for w in scenario.topology.workloads]
    services = []
    for s in scenario.topology.services:
        ref = ir.ObjectRef("v1", "Service", s.namespace, s.name)
        services.append({"kind": "Service", "namespace": s.namespace, "name": s.name, "selector": dict(s.selector),
                         "component": itbench_backend._component(ref, scenario)})
    return workloads, services


def _ciso(scenario: ir.Scenario) -> dict | None:
    compliance = scenario.compliance
    if compliance is None:
        return None
    inject_apply = fault_backend.plan(scenario)[0]
    pool = {}
    for obj in [*topology_manifests(scenario.topology), *ciso.k8s_objects(scenario)[1], *inject_apply]:
        pool.setdefault(_key(obj), obj)

    def pick(refs: list[ir.ObjectRef]) -> list[dict]:
        # an object with no manifest (a host control's inventory group) is graded by its reference alone
        return [pool.get((r.kind, r.namespace, r.name)) or ir_manifest(r) for r in refs]

    return {"control": compliance.control, "task": compliance.task, "gaps": pick(compliance.gaps),
            "compliant": pick(compliance.compliant)}


def ir_manifest(ref: ir.ObjectRef) -> dict:
    meta = {"name": ref.name}
    if ref.namespace:
        meta["namespace"] = ref.namespace
    return {"apiVersion": ref.api_version, "kind": ref.kind, "metadata": meta}


def _predicate(scenario: ir.Scenario, p) -> dict:
    out = {"kind": p.kind, "target": _ref(p.target) if p.target else None, "state": p.state, "path": list(p.path),
           "op": p.op, "value": p.value, "alert": p.alert, "firing": p.firing}
    if p.kind == "alert":
        # where the alert counts: the namespaces `expect` names it in, else every namespace of the scenario
        named = {a.target.namespace for a in scenario.alerts if a.name == p.alert and a.target.namespace}
        out["namespaces"] = sorted(named or {n.name for n in scenario.topology.namespaces})
    return out


def evaluator_spec(scenario: ir.Scenario) -> dict:
    """Everything the runtime grades against, as plain JSON data."""
    groups, aliases, propagations, edges = _groups(scenario)
    workloads, services = _safeguards(scenario)
    reverts, created, deleted = _reverts(scenario) if scenario.domain != "ciso" else ([], [], [])
    mitigation = None
    if scenario.mitigation is not None:
        mitigation = {"within_seconds": scenario.mitigation.within_seconds,
                      "predicates": [_predicate(scenario, p) for p in scenario.mitigation.predicates]}
    return {
        "version": 1,
        "scenario": scenario.name,
        "domain": scenario.domain,
        "groups": groups,
        "aliases": aliases,
        "propagations": propagations,
        "graph": {"edges": [list(e) for e in edges]},
        "workloads": workloads,
        "services": services,
        "mitigation": mitigation,
        "reverts": reverts,
        "created": created,
        "deleted": deleted,
        "optimal": [{"object": _ref(o.target), "path": list(o.path), "value": o.value} for o in scenario.optimal],
        "finops_targets": [_ref(i.target) for i in scenario.injections()] if scenario.domain == "finops" else [],
        "proximity_threshold": PROXIMITY_THRESHOLD,
        "ciso": _ciso(scenario),
    }


@functools.lru_cache(maxsize=1)
def runtime_source() -> str:
    return resources.files("itbench_dsl").joinpath("evaluator_runtime.py").read_text(encoding="utf-8")


@functools.lru_cache(maxsize=2)
def package_source(module: str) -> str:
    """The source of one of the package's standard-library-only modules, embedded in evaluators."""
    return resources.files("itbench_dsl").joinpath(f"{module}.py").read_text(encoding="utf-8")


def evaluator_source(scenario: ir.Scenario) -> str:
    return source_for_spec(evaluator_spec(scenario))


def source_for_spec(spec: dict) -> str:
    """evaluator.py for a spec: the runtime, the embedded modules its grading needs, the spec as data."""
    text = json.dumps(spec, ensure_ascii=True, sort_keys=True, separators=(",", ":"))
    parts = [runtime_source().rstrip("\n") + "\n\n"]
    ciso_task = (spec.get("ciso") or {}).get("task") or ""
    if "kyverno" in ciso_task:
        # the Kyverno matcher and the YAML reader for the agent's policy: each run by the runtime in a
        # module of its own (they may start with `from __future__`), so they are data here too
        parts.append(f"_KYVERNO_SOURCE = {package_source('kyverno')!r}\n")
        parts.append(f"_YAML_SOURCE = {package_source('miniyaml')!r}\n")
    parts.append(f"{_SPEC_PREFIX}{text!r})\n\n")
    parts.append(_MAIN)
    return "".join(parts)


_SPEC_PREFIX = "SPEC = json.loads("


def spec_of(source: str) -> dict | None:
    """The spec an evaluator.py grades against (None when the text holds no spec line): read back as
    data, never executed."""
    import ast as python_ast

    for line in source.splitlines():
        if line.startswith(_SPEC_PREFIX) and line.endswith(")"):
            try:
                return json.loads(python_ast.literal_eval(line[len(_SPEC_PREFIX):-1]))
            except (ValueError, SyntaxError):
                return None
    return None
