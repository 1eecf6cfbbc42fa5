"""ITBench's own files: scenario.yaml (itbench.io/v2), groundtruth.yaml (v2) and groundtruth_v1.yaml.

Both ground truths come from the same IR, so they cannot disagree: the v2 entities are the
fault targets and the objects the faults change, the v1 "groups" graph is derived from the
root causes, propagation edges and alerts of the `expect` block.
"""

from __future__ import annotations

import copy
import functools
import re

from .. import ir
from ..memo import IdentityMemo
from ..topology import pod_pattern_owner
from ..faults import (
    WAITERS,
    fault_description,
    library_alerts,
    render_solutions,
    slug,
)


def itbench_name(scenario: ir.Scenario) -> str:
    itbench_id = scenario.metadata.get("itbench_id")
    return f"scenario-{itbench_id}" if itbench_id is not None else scenario.name


def scenario_yaml(scenario: ir.Scenario) -> dict:
    applications: dict = {}
    # the key ITBench uses for the application, from the application's own metadata: an application ITBench
    # does not install (an inline topology, HotelReservation) has none and is not listed
    key = scenario.topology.application_key
    if key is not None:
        applications[key] = {"enabled": True}
        options: dict = {}
        _merge(options, copy.deepcopy(scenario.topology.application_options or {}))  # the scenario's own
        for injection in scenario.injections():  # ITBench application options the faults need
            _merge(options, injection.kind.app_options)
        if options:
            applications[key]["options"] = options
    faults = []
    for group in scenario.faults:
        # a fault ITBench does not have (a one-shot chaos experiment, say) has no place in its scenario.yaml:
        # the bundle's inject/ folder applies it
        injections = [{"args": i.itbench_args, "id": i.itbench_id} for i in group.injections if i.itbench_id]
        if not injections:
            continue
        entry: dict = {"injections": injections}
        waits: dict = {}
        for waiter in group.waiters if group.declared_waiters is None else group.declared_waiters:
            key = "preInjection" if waiter.when == "before" else "postInjection"
            if waiter.itbench_id:  # a waiter ITBench does not have (`redeploy`) runs from the bundle only
                waits.setdefault(key, []).append({"args": _waiter_args(waiter), "id": waiter.itbench_id})
        if waits:
            entry["waitFor"] = waits
        faults.append(entry)
    tool = {"sre": "sre", "finops": "finops", "ciso": "ciso"}[scenario.domain]
    return {
        "apiVersion": "itbench.io/v2",
        "kind": "Scenario",
        "metadata": {"name": itbench_name(scenario)},
        "spec": {"applications": applications, "faults": faults, "tools": {tool: {"enabled": True}}},
    }


def itbench_files(scenario: ir.Scenario) -> dict[str, dict]:
    """scenario.yaml, groundtruth.yaml and groundtruth_v1.yaml as ITBench runs the scenario: an object whose name
    ITBench's own injection task fixes (`Injection.itbench_names`) is named as that task names it, so that the
    ground truth names what an ITBench run creates. The bundle's own files keep the compiler's names."""
    names = {ours: theirs for injection in scenario.injections() for ours, theirs in injection.itbench_names.items()}
    return {name: with_names(data, names) for name, data in (
        ("scenario.yaml", scenario_yaml(scenario)), ("groundtruth.yaml", groundtruth_v2(scenario)),
        ("groundtruth_v1.yaml", groundtruth_v1(scenario)))}


def with_names(data, names: dict[str, str]):
    """`data` with each of `names` (old -> new) replaced where it stands as a whole name in a string (an object's
    name, a filter `.*old.*`, a command), never inside a longer name (`old-schedule`, a group id, stays)."""
    if not names:
        return data
    pattern = re.compile(r"(?<![\w-])(" + "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True))
                         + r")(?![\w-])")

    def walk(node):
        if isinstance(node, str):
            return pattern.sub(lambda m: names[m.group(1)], node)
        if isinstance(node, list):
            return [walk(x) for x in node]
        if isinstance(node, dict):
            return {k: walk(v) for k, v in node.items()}
        return node

    return walk(data)


def _merge(into: dict, extra: dict) -> None:
    for key, value in extra.items():
        if isinstance(value, dict) and isinstance(into.get(key), dict):
            _merge(into[key], value)
        else:
            into[key] = value


def _waiter_args(waiter: ir.Waiter) -> dict:
    return WAITERS[waiter.kind].itbench_args(waiter)  # as ITBench's waiter entry spells them (faults/waiters.py)


def stack_alert(name: str) -> bool:
    """Whether the documented monitoring stack (docs/running.md: kube-prometheus-stack) defines alert `name`."""
    from ..alerts import CATALOGUE, MIXIN

    alert = CATALOGUE.get(name)
    return alert is not None and alert.source == MIXIN


def expected_alerts(scenario: ir.Scenario) -> list[str]:
    """The names of the alerts `scenario` expects, sorted: every alert a bundle names is one of them."""
    return sorted({a.name for a in scenario.alerts})


def groundtruth_v2(scenario: ir.Scenario) -> dict:
    # the alerts the scenario expects on its objects (each with a rule the bundle ships, manifests/alert-rules.yaml;
    # an alert `on group "ID"` is a record of ITBench's v1 causal graph, which v2 does not list), and those ITBench's
    # fault library says each fault raises that the documented monitoring stack defines (kube-prometheus-stack:
    # kubernetes-mixin's). A library alert of neither kind would never fire: it is not listed
    alerts = sorted({a.name for a in scenario.alerts if a.group is None}
                    | {a for i in scenario.injections() for a in library_alerts(i.kind) if stack_alert(a)})
    own = _own_v2(scenario)
    if own is not None:  # an original scenario: the alerts it expects (each with its rule), else the above
        alerts = own[0] or alerts
    entities: list[dict] = []
    for injection in scenario.injections():
        # the object ITBench's injection acts on (a created Schedule for chaos faults), then the others it changes
        primary = injection.itbench_args.get("kubernetesObject", injection.target.itbench())
        for item in [primary, *(ref.itbench() for ref in injection.side_objects)]:
            if item not in entities:
                entities.append(item)
    solutions = [render_solutions(i.kind, i.itbench_args, i.args) for i in scenario.injections()]
    if own is not None and own[1]:
        solutions = own[1]
    return {
        "apiVersion": "itbench.io/v2",
        "kind": "GroundTruth",
        "metadata": {"name": itbench_name(scenario)},
        "spec": {"alerts": [{"labels": {}, "name": a} for a in alerts], "entities": entities, "solutions": solutions},
    }


def _own_v2(scenario: ir.Scenario) -> tuple[list[str], list] | None:
    """The scenario's own alerts and solutions for the v2 ground truth, or None for a port of an ITBench scenario
    (`metadata { itbench_id }`), whose v2 file is ITBench's: the fault library's lists, as ITBench writes them.
    An original scenario (or a generated variant) states what its own incident raises and how it is solved;
    the library's lists stand in only for what it does not state."""
    if scenario.metadata.get("itbench_id") is not None:
        return None
    alerts = sorted({a.name for a in scenario.alerts})
    steps = [[{"text": step.text, **({"command": step.command} if step.command else {})} for step in sol.steps]
             for sol in scenario.solutions]
    return alerts, ([[{"steps": s} for s in steps if s]] if any(steps) else [])


# ---- v1: the groups graph --------------------------------------------------------------------------


def group_id(ref: ir.ObjectRef) -> str:
    return ref.group_id()


_REGEX_SPECIAL = set(".^$+{}[]\\|()")


def _escape(text: str) -> str:
    # Kubernetes names only hold [a-z0-9.-]; escape what regex gives meaning to, keep `-` readable as ITBench does
    return "".join("\\" + c if c in _REGEX_SPECIAL else c for c in text)


@functools.lru_cache(maxsize=4096)
def group_filter(ref: ir.ObjectRef) -> str:
    """The regular expression ITBench evaluators match object names with."""
    if "*" in ref.name or "?" in ref.name:
        return "".join(".*" if c == "*" else "." if c == "?" else _escape(c) for c in ref.name)
    return _escape(ref.name) + r"\b"


def filters_of(group: dict) -> list[str]:
    """A v1 group's name filters; ITBench's `name` form of a group matches that one name."""
    if "filter" in group:
        return group["filter"]
    return [_escape(group.get("name", "")) + "$"]


def _index_services(topo: ir.Topology) -> tuple[dict, set, tuple[int, int]]:
    """(namespace, service) -> the first workload it selects (or None), the (namespace, workload) pairs,
    and the sizes it was built from."""
    services: dict = {}
    for service in topo.services:
        key = (service.namespace, service.name)
        if key in services:
            continue
        services[key] = next((w.name for w in topo.workloads if w.namespace == service.namespace and service.selector
                              and all(w.labels.get(k) == v for k, v in service.selector.items())), None)
    return services, {(w.namespace, w.name) for w in topo.workloads}, (len(topo.services), len(topo.workloads))


_SERVICE_INDEX = IdentityMemo(_index_services, size=64)


def _service_index(topo: ir.Topology) -> tuple[dict, set]:
    index = _SERVICE_INDEX(topo)
    if index[2] != (len(topo.services), len(topo.workloads)):  # changed since it was indexed: index it again
        _SERVICE_INDEX.entries.pop(id(topo), None)
        index = _SERVICE_INDEX(topo)
    return index[0], index[1]


def _component(ref: ir.ObjectRef, scenario: ir.Scenario) -> str | None:
    topo = scenario.topology
    if ref.kind in ("Deployment", "StatefulSet"):
        return ref.name
    if ref.kind == "Pod":
        owners = [w.name for w in topo.workloads if w.namespace == ref.namespace
                  and re.fullmatch(group_filter(ref), f"{w.name}-7d4b9c8f6-x2x9q")]
        return pod_pattern_owner(ref.name, owners)
    if ref.kind == "Service":
        services, workloads = _service_index(topo)
        key = (ref.namespace, ref.name)
        if key in services:
            return services[key]
        # a logical service (a v1 group of kind Service for a workload that has no Service object)
        return ref.name if key in workloads else None
    if ref.kind in ("Schedule", "NetworkChaos"):
        return f"chaos:{ref.name}"
    return None


def group_id_in(scenario: ir.Scenario, ref: ir.ObjectRef) -> str:
    """The id of `ref`'s v1 group in `scenario`: the first group `expect` declares on it, else the derived id."""
    return next((g.id for g in scenario.ground_groups if g.target == ref), None) or group_id(ref)


def groundtruth_v1(scenario: ir.Scenario) -> dict:
    # groups named in `expect` (`group "ID" REF`) keep their ids and come first, in their order; every other
    # object the expectations name gets a derived group
    named = {}
    for g in scenario.ground_groups:
        named.setdefault(g.target, g.id)

    def gid(ref: ir.ObjectRef, explicit: str | None = None) -> str:
        return explicit or named.get(ref) or group_id(ref)

    refs: list[ir.ObjectRef] = []

    def note(ref: ir.ObjectRef) -> None:
        if ref not in refs and ref not in named:
            refs.append(ref)

    for ref in scenario.root_causes:
        note(ref)
    for edge in scenario.propagations:
        note(edge.source)
        note(edge.target)
    for alert in scenario.alerts:
        note(alert.target)
    groups = []
    for g in scenario.ground_groups:
        group: dict = {"id": g.id, "kind": g.target.kind}
        if g.name is not None:
            group["name"] = g.name
        else:
            group["filter"] = list(g.filters) if g.filters is not None else [group_filter(g.target)]
        namespace = g.namespace or g.target.namespace
        if namespace:
            group["namespace"] = namespace
        if g.root_cause:
            group["root_cause"] = True
        groups.append(group)
    for ref in refs:
        group = {"filter": [group_filter(ref)], "id": group_id(ref), "kind": ref.kind}
        if ref.namespace:
            group["namespace"] = ref.namespace
        if ref in scenario.root_causes:
            group["root_cause"] = True
        groups.append(group)
    if scenario.aliases is not None:
        aliases = [list(ids) for ids in scenario.aliases]
    else:
        # aliases: groups that stand for the same component (a deployment, its pods, its service)
        by_component: dict[str, list[str]] = {}
        for ref in [g.target for g in scenario.ground_groups] + refs:
            component = _component(ref, scenario) or f"{ref.kind}:{ref.name}"
            ids = by_component.setdefault(component, [])
            if gid(ref) not in ids:
                ids.append(gid(ref))
        aliases = list(by_component.values())
    faults = []
    for injection in scenario.injections():
        root = injection.root or injection.target
        for candidate in scenario.root_causes:
            if candidate in (injection.target, injection.root) or candidate in injection.side_objects:
                root = candidate
                break
        faults.append({
            "category": "Change",
            "condition": fault_description(injection.kind),
            "entity": {"group_id": gid(root), "kind": root.kind, "name": gid(root)},
            "fault_mechanism": injection.mechanism,
        })
    return {
        "apiVersion": "itbench.io/v1",
        "kind": "GroundTruth",
        "metadata": {"name": itbench_name(scenario)},
        "spec": {
            "alerts": [
                {"group_id": gid(a.target, a.group), "id": a.name,
                 "metadata": {"description": a.description or f"{a.name} on {a.target.kind} {a.target.name}"}}
                for a in scenario.alerts
            ],
            "aliases": aliases,
            "fault": [dict(c) for c in scenario.causes] if scenario.causes is not None else faults,
            "groups": groups,
            "propagations": [
                {"condition": e.condition, "effect": e.effect, "source": gid(e.source, e.source_group),
                 "target": gid(e.target, e.target_group)}
                for e in scenario.propagations
            ],
            "recommendedActions": [
                {"solution": {"actions": [s.text for s in sol.steps], "id": sol.id or slug(sol.title)}} for sol in scenario.solutions
            ],
        },
    }
