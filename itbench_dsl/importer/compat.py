"""How a compiled scenario's ITBench files compare with ITBench's own (YAML loaded, key order ignored).

`differences(file_name, ours, theirs, created)` lists what differs as short, stable sentences: the whole
file for scenario.yaml and groundtruth.yaml, and, for groundtruth_v1.yaml, each group, alias, propagation
and alert one side has and the other has not, then the parts the port derives (`fault` entries). The
compatibility report (tools/itbench_compat.py, docs/itbench-compat.md) and the tests both use it.

ITBench's files name the objects its faults create after the fault (a Schedule
`checkout-payment-network-loss`), a name the agent reads; the port names them so that they say nothing
of it (E4010), or, where ITBench's injection task fixes the name, as that task does (its own ground truth
may name another: `strict-mtls-mode` for the task's `mtls-strict`). `created`, the port's created objects
as (kind, name), pairs each with ITBench's object of its kind: the rename is said once, and the port's name
is read as ITBench's everywhere in the port's file (a filter, a command), so that the comparison shows only
the other differences, in ITBench's terms.
"""

from __future__ import annotations

import json
import re
from collections import Counter

from ..backends.itbench import with_names
from ..ir import ObjectRef

V1_COMPARED = ("groups", "aliases", "propagations", "alerts")


def _spec(data) -> dict:
    if not isinstance(data, dict):
        return {}
    return data["spec"] if isinstance(data.get("spec"), dict) else data


def _short(value) -> str:
    text = json.dumps(value, sort_keys=True, ensure_ascii=False)
    return text if len(text) <= 90 else text[:87] + "..."


def differences(file_name: str, ours, theirs, renamed: dict | None = None) -> list[str]:
    """What differs, as sentences; `renamed` (`renamed_objects`): the created objects ITBench names otherwise."""
    renamed = renamed or {}
    out = [f"{file_name}: ITBench's {kind} `{old}` is named otherwise in the port"
           for old, (kind, _) in sorted(renamed.items())]
    # the port's names read as ITBench's: what remains is said in ITBench's terms, whatever the port's names are
    # (a group id derived from the port's name, `<name>-schedule-1`, reads as derived from ITBench's)
    ours = with_names(ours, {k: v for old, (kind, new) in renamed.items() for k, v in (
        (new, old), (ObjectRef("", kind, None, new).group_id(), ObjectRef("", kind, None, old).group_id()))})
    if file_name != "groundtruth_v1.yaml":
        return out + [f"{file_name}: `{path}` differs" for path in _paths(ours, theirs)]
    if isinstance(theirs, dict) and "spec" not in theirs:
        out.append("groundtruth_v1.yaml: ITBench's file has no apiVersion/kind/metadata envelope")
    a, b = _spec(ours), _spec(theirs)
    groups_a = {g.get("id"): g for g in a.get("groups") or [] if isinstance(g, dict)}
    groups_b = {g.get("id"): g for g in b.get("groups") or [] if isinstance(g, dict)}
    for gid in sorted(set(groups_a) | set(groups_b), key=str):
        if gid not in groups_a:
            out.append(f"groundtruth_v1.yaml: group `{gid}` is not in the port")
        elif gid not in groups_b:
            out.append(f"groundtruth_v1.yaml: group `{gid}` is added by the port")
        else:
            for key in sorted(set(groups_a[gid]) | set(groups_b[gid])):
                if groups_a[gid].get(key) != groups_b[gid].get(key):
                    out.append(f"groundtruth_v1.yaml: group `{gid}` has {key} {_short(groups_a[gid].get(key))}, "
                               f"ITBench {_short(groups_b[gid].get(key))}")
    # an alias of one group (or none) joins nothing: it is the same as no alias
    aliases_a = [tuple(x) for x in a.get("aliases") or [] if isinstance(x, list) and len(x) > 1]
    aliases_b = [tuple(x) for x in b.get("aliases") or [] if isinstance(x, list) and len(x) > 1]
    if aliases_a != aliases_b:
        for alias in sorted(set(aliases_b) - set(aliases_a)):
            out.append(f"groundtruth_v1.yaml: alias {_short(list(alias))} is not in the port")
        for alias in sorted(set(aliases_a) - set(aliases_b)):
            out.append(f"groundtruth_v1.yaml: alias {_short(list(alias))} is added by the port")
        if set(aliases_a) == set(aliases_b):
            out.append("groundtruth_v1.yaml: aliases are in another order")
    for key, fields in (("propagations", ("source", "target", "condition")), ("alerts", ("id", "group_id"))):
        many_a = Counter(_pick(x, fields) for x in a.get(key) or [] if isinstance(x, dict))
        many_b = Counter(_pick(x, fields) for x in b.get(key) or [] if isinstance(x, dict))
        what = key[:-1]
        for item in sorted((many_b - many_a).elements(), key=str):
            out.append(f"groundtruth_v1.yaml: {what} {_describe(item, fields)} is not in the port")
        for item in sorted((many_a - many_b).elements(), key=str):
            out.append(f"groundtruth_v1.yaml: {what} {_describe(item, fields)} is added by the port")
        if many_a == many_b:
            full_a = [_full(x) for x in a.get(key) or []]
            full_b = [_full(x) for x in b.get(key) or []]
            if sorted(full_a) != sorted(full_b):
                out.append(f"groundtruth_v1.yaml: the {key}' texts differ")
            elif full_a != full_b:
                out.append(f"groundtruth_v1.yaml: the {key} are in another order")
    if a.get("fault") != b.get("fault"):
        out.append("groundtruth_v1.yaml: `fault` entries differ")
    actions_b = b.get("recommendedActions", b.get("recommended_actions"))
    if (a.get("recommendedActions") or []) != (actions_b or []):
        out.append("groundtruth_v1.yaml: `recommendedActions` differ")
    elif "recommended_actions" in b:
        out.append("groundtruth_v1.yaml: ITBench spells `recommendedActions` as `recommended_actions`")
    bare = isinstance(theirs, dict) and "spec" not in theirs  # its `metadata` is the envelope's
    for key in sorted(set(b) - {*V1_COMPARED, "fault", "recommendedActions", "recommended_actions"}
                      - ({"metadata"} if bare else set())):
        out.append(f"groundtruth_v1.yaml: ITBench's `{key}` is not in the port")
    return out


def created_objects(scenario) -> list[tuple[str, str]]:
    """(kind, name) of every object the faults of a compiled scenario create, as its ITBench files name them
    (`backends.itbench.itbench_files`): `differences`' `created`."""
    if scenario is None:
        return []
    return [(ref.kind, injection.itbench_names.get(ref.name, ref.name))
            for injection in scenario.injections() for ref in injection.created]


def renamed_objects(created, ours: list, theirs: list) -> dict[str, tuple[str, str]]:
    """{ITBench's name: (kind, the port's name)} of the objects the port's faults create (`created`, (kind,
    name)) that ITBench's files name otherwise: the one object of that kind ITBench's files (`theirs`, all of
    a scenario's, loaded) name and the port's (`ours`) do not, where the port's name is not in ITBench's."""
    mine, its = _named(ours), _named(theirs)
    out = {}
    # scenario.yaml names what each injection creates (a Schedule's `kubernetesObject`): paired by position
    for a, b in zip(_injected(ours), _injected(theirs)):
        if a[0] == b[0] and a[1] != b[1] and (a[0], a[1]) in set(created):
            out[b[1]] = a
    created = [(kind, name) for kind, name in created if (kind, name) not in out.values()]
    for kind, name in created:
        only_its = its.get(kind, set()) - mine.get(kind, set())
        if name in mine.get(kind, set()) and name not in its.get(kind, set()) and len(only_its) == 1:
            out[next(iter(only_its))] = (kind, name)
    return out


def _injected(files: list) -> list[tuple[str, str]]:
    """(kind, name) of each injection's `kubernetesObject` in the scenario.yaml among `files`, in order."""
    for data in files:
        if isinstance(data, dict) and data.get("kind") == "Scenario":
            return [(str(o.get("kind")), str((o.get("metadata") or {}).get("name")))
                    for f in _spec(data).get("faults") or [] if isinstance(f, dict)
                    for i in f.get("injections") or [] if isinstance(i, dict)
                    for o in [(i.get("args") or {}).get("kubernetesObject")] if isinstance(o, dict)]
    return []


def _named(data) -> dict[str, set[str]]:
    """{kind: names} of the objects a file names: mappings with a `kind` and a `name` (or `metadata.name`)."""
    out: dict[str, set[str]] = {}
    stack = [data]
    while stack:
        node = stack.pop()
        if isinstance(node, list):
            stack.extend(node)
        elif isinstance(node, dict):
            meta = node.get("metadata") if isinstance(node.get("metadata"), dict) else {}
            name = node.get("name") if isinstance(node.get("name"), str) else meta.get("name")
            if isinstance(node.get("kind"), str) and isinstance(name, str):
                out.setdefault(node["kind"], set()).add(name)
            stack.extend(node.values())
    return out


def _pick(item: dict, fields) -> tuple:
    return tuple(str(item.get(f)) for f in fields)


def _full(item) -> str:
    return json.dumps(item, sort_keys=True, ensure_ascii=False)


def _describe(item: tuple, fields) -> str:
    if fields[0] == "source":
        return f"`{item[0]}` -> `{item[1]}` ({_short(item[2])})"
    return f"`{item[0]}` on `{item[1]}`"


def _paths(a, b, prefix: str = "") -> list[str]:
    if a == b:
        return []
    if isinstance(a, dict) and isinstance(b, dict):
        out = []
        for key in sorted(set(a) | set(b), key=str):
            out.extend(_paths(a.get(key), b.get(key), f"{prefix}.{key}" if prefix else str(key)))
        return out
    return [prefix or "(the whole file)"]


_RENAME = re.compile(r"^[\w.]+: ITBench's \w+ `[^`]+` is named otherwise in the port$")


def only_names(diffs: list[str]) -> bool:
    """Whether every difference is a created object's name (`differences`' first sentences)."""
    return bool(diffs) and all(_RENAME.match(d) for d in diffs)


def graph_differences(diffs: list[str]) -> list[str]:
    """The differences in v1's causal graph: groups, aliases, propagations and alerts."""
    graph = ("group `", "alias ", "aliases ", "propagation ", "the propagations", "alert ", "the alerts")
    return [d for d in diffs if d.startswith("groundtruth_v1.yaml: ")
            and d[len("groundtruth_v1.yaml: "):].startswith(graph)]
