"""ITBench injections and waiters back to `.itb` fault and waiter statements.

The mapping is general: the fault kind is the library's kind with the injection's ITBench id
(for Chaos Mesh Schedules, the kind of the scheduled experiment), the target is the injection's
`kubernetesObject`, and each argument is matched by name against the kind's own arguments
(`container.name` -> `container`, `configMapName` -> `configmap_name`, `httpMethods` -> `methods`).
The result is checked by compiling it: an argument the mapping could not carry shows as a
difference in the compiled `scenario.yaml`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..faults import FAULTS, WAITERS
from ..printer import key_text, quote

# Arguments a kind requires that ITBench's injection does not carry (ITBench decides them on the cluster).
IMPORT_DEFAULTS: dict[str, dict[str, str]] = {
    "cordoned_node": {"node": '"kind-worker"'},
    "priority_preemption": {"node": '"kind-worker"', "node_cpu": "4"},
}

_K8S_TO_REF = {
    "Deployment": "deployment", "StatefulSet": "statefulset", "Service": "service", "ConfigMap": "configmap",
    "Secret": "secret", "Namespace": "namespace", "Gateway": "gateway", "HorizontalPodAutoscaler": "hpa",
    "Pod": "pod", "ServiceAccount": "serviceaccount",
}


@dataclass
class Statement:
    """A fault or waiter statement: its header, its body lines, and what could not be carried."""

    header: str
    lines: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    kind: str = ""
    target_kind: str = ""
    target_name: str = ""
    # a Chaos Mesh experiment's selector: the one namespace it names, and its pod labels
    selector_namespace: str | None = None
    selector_labels: dict = field(default_factory=dict)


def ref_kind(k8s_kind: str) -> str | None:
    return _K8S_TO_REF.get(k8s_kind)


def snake(name: str) -> str:
    return re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", name).lower()


def literal(value) -> str | None:
    """An ITBench JSON value as an `.itb` value (strings stay strings: the field decides units)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return str(value)
    if isinstance(value, str):
        return quote(value)
    if isinstance(value, list) and all(isinstance(v, (str, int, float)) and not isinstance(v, bool) for v in value):
        return "[" + ", ".join(literal(v) for v in value) + "]"
    return None


def _arg_names(kind: str) -> list[str]:
    names = []
    for arg in FAULTS[kind].args:
        names.extend(n.strip() for n in arg.name.split("/"))
    return names


def _match_arg(path: tuple[str, ...], names: list[str]) -> str | None:
    """Our argument for ITBench's argument at `path` (a nested key path)."""
    leaf = snake(path[-1])
    if leaf == "name" and len(path) > 1 and snake(path[-2]) in names:
        return snake(path[-2])  # container.name -> container, flag.name -> flag
    squashed = leaf.replace("_", "")
    for name in names:
        if name == leaf or name.replace("_", "") == squashed:
            return name
    for name in names:
        if leaf.endswith("_" + name):  # http_methods -> methods
            return name
    return None


def _flatten(args: dict, prefix: tuple = ()) -> list[tuple[tuple, object]]:
    out = []
    for key, value in args.items():
        if isinstance(value, dict):
            out.extend(_flatten(value, prefix + (key,)))
        else:
            out.append((prefix + (key,), value))
    return out


def injection_statement(injection_id: str, args: dict) -> Statement | str:
    """The fault statement of one ITBench injection, or a message saying why there is none."""
    if not isinstance(args, dict):
        return "its `args` is not a mapping"
    target = args.get("kubernetesObject")
    if not isinstance(target, dict) or not isinstance(target.get("metadata"), dict):
        return "its `args` has no `kubernetesObject` with `metadata`"
    kinds = [k for k, v in FAULTS.items() if v.itbench_id == injection_id]
    if not kinds:
        return f"no fault of the library has ITBench id `{injection_id}`"
    if injection_id == "scheduled-chaos-mesh-experiment":
        return _chaos_statement(args, target)
    kind = kinds[0]
    ours = ref_kind(str(target.get("kind")))
    name = target["metadata"].get("name")
    if ours is None or not isinstance(name, str):
        return f"its target `{target.get('kind')}` is not an object kind the language names"
    statement = Statement(f"fault {kind} on {ours} {quote(name)}", kind=kind, target_kind=ours, target_name=name)
    names = _arg_names(kind)
    given = set()
    for path, value in _flatten({k: v for k, v in args.items() if k != "kubernetesObject"}):
        arg = _match_arg(path, names)
        text = literal(value)
        if arg is None or text is None:
            statement.problems.append(f"argument `{'.'.join(path)}` has no counterpart in `{kind}`")
            continue
        statement.lines.append(f"{arg} = {text}")
        given.add(arg)
    for arg, text in IMPORT_DEFAULTS.get(kind, {}).items():
        if arg not in given:
            statement.lines.append(f"{arg} = {text}")
    return statement


# ---- Chaos Mesh Schedules --------------------------------------------------------------------------


_GO_UNITS = {"ms": 1, "s": 1000, "m": 60000, "h": 3600000}


def _milliseconds(text) -> int | None:
    """A Chaos Mesh duration, a Go duration ("20000ms", "55s", "1m30s", "1.5h"), in milliseconds; None when
    it is not one or is finer than a millisecond."""
    text = str(text).strip()
    parts = re.findall(r"(\d+(?:\.\d+)?)(ms|s|m|h)", text)
    if not parts or "".join(n + u for n, u in parts) != text:
        return None
    total = sum(float(n) * _GO_UNITS[u] for n, u in parts)
    return int(total) if total == int(total) else None


def _duration(text) -> str | None:
    """A Chaos Mesh duration in the language's form (largest units first)."""
    ms = _milliseconds(text)
    if ms is None:
        return None
    if ms == 0:
        return "0"
    parts = []
    for unit, size in (("h", 3600000), ("m", 60000), ("s", 1000), ("ms", 1)):
        if ms >= size:
            parts.append(f"{ms // size}{unit}")
            ms %= size
    return "".join(parts)


def _percent(text) -> str | None:
    match = re.fullmatch(r"(\d+(?:\.\d+)?)%?", str(text).strip())
    return f"{match.group(1)}%" if match else None


def _mapping(value) -> dict:
    """`value` when it is a mapping; an empty one for anything else (a mutated or truncated file)."""
    return value if isinstance(value, dict) else {}


def _labels_block(key: str, labels) -> list[str]:
    if not isinstance(labels, dict):
        return []
    return [f"{key} {{"] + [f"  {key_text(str(k))} = {quote(str(v))}" for k, v in labels.items()] + ["}"]


_SYMBOL_FIELDS = {"action", "direction", "mode", "mem_type", "target"}
_DURATION_FIELDS = {"duration", "latency", "jitter", "delay", "grace_period", "offset"}
_PERCENT_FIELDS = {"loss", "duplicate", "corrupt", "correlation", "percent", "load", "size"}


def _chaos_value(key: str, value) -> str | None:
    if key in _SYMBOL_FIELDS and isinstance(value, str):
        return snake(value) if re.fullmatch(r"[A-Za-z][A-Za-z0-9]*", value) else None
    if key in _DURATION_FIELDS:
        return _duration(value)
    if key == "size" and isinstance(value, str):
        match = re.fullmatch(r"(\d+)(B|KB|MB|GB|TB|KiB|MiB|GiB|TiB)", value.strip())
        if match:  # stress-ng's sizes in the language's memory units
            units = {"B": "", "KB": "k", "MB": "M", "GB": "G", "TB": "T", "KiB": "Ki", "MiB": "Mi", "GiB": "Gi",
                     "TiB": "Ti"}
            return f"{match.group(1)}{units[match.group(2)]}" if units[match.group(2)] else match.group(1)
    if key in _PERCENT_FIELDS and isinstance(value, (str, int, float)) and not isinstance(value, bool):
        if isinstance(value, str) and not re.fullmatch(r"\d+(\.\d+)?%?", value.strip()):
            return quote(value)  # a size such as 128MB
        return _percent(value)
    return literal(value)


def _chaos_statement(args: dict, target: dict) -> Statement | str:
    spec = args.get("scheduleSpec")
    if not isinstance(spec, dict) or not isinstance(spec.get("type"), str):
        return "its `scheduleSpec` has no `type`"
    kind = re.sub(r"^(\w+?)_?chaos$", r"\1_chaos", snake(spec["type"]).replace("_", ""))
    if kind not in FAULTS:
        return f"no fault of the library runs a Chaos Mesh `{spec['type']}`"
    body = spec.get(spec["type"][0].lower() + spec["type"][1:])
    if not isinstance(body, dict):
        body = next((v for k, v in spec.items() if k != "type" and isinstance(v, dict)), None)
    if not isinstance(body, dict):
        return f"its `scheduleSpec` has no `{spec['type']}` body"
    selector = body.get("selector") if isinstance(body.get("selector"), dict) else {}
    labels = selector.get("labelSelectors") or {}
    if not isinstance(labels, dict):
        return "its experiment's `selector.labelSelectors` is not a mapping"
    component = labels.get("app.kubernetes.io/component") or labels.get("app.kubernetes.io/name") or labels.get("app")
    if not isinstance(component, str):
        component = next((v for v in labels.values() if isinstance(v, str)), None)
    if component is None:
        return "its experiment's selector names no workload"
    namespaces = selector.get("namespaces")
    statement = Statement(f"fault {kind} on deployment {quote(component)}", kind=kind,
                          target_kind="deployment", target_name=component,
                          selector_namespace=namespaces[0] if isinstance(namespaces, list) and len(namespaces) == 1
                          and isinstance(namespaces[0], str) else None,
                          selector_labels=dict(labels))
    name = target["metadata"].get("name")
    if isinstance(name, str):
        statement.lines.append(f"name = {quote(name)}")
    lines = statement.lines
    if "action" not in body and kind == "http_chaos":  # an HTTP experiment's action is the field it carries
        action = next((k for k in ("abort", "delay", "replace", "patch") if k in body), None)
        if action is not None:
            lines.append(f"action = {action}")
    for key, value in body.items():
        arg = snake(key)
        if key == "selector":
            if isinstance(selector.get("podPhaseSelectors"), list):
                lines.append(f"pod_phases = {literal(selector['podPhaseSelectors'])}")
            continue
        if key == "mode" and value == "all":
            continue
        if key == "target" and isinstance(value, dict):  # a network experiment's peer
            peer = _mapping(_mapping(value.get("selector")).get("labelSelectors"))
            peer_name = peer.get("app.kubernetes.io/component") or next(iter(peer.values()), None) if peer else None
            if peer_name:
                lines.append(f"peer = {quote(str(peer_name))}")
                lines.extend(_labels_block("peer_selector", peer))
            continue
        if key in ("delay", "loss", "duplicate", "corrupt", "bandwidth") and isinstance(value, dict):
            for inner, inner_value in value.items():  # networkChaos: delay { latency }, loss { loss correlation }
                inner_arg = snake(inner)
                if inner_arg == "correlation" and str(inner_value) in ("0", "0.0"):
                    continue
                text = _chaos_value(inner_arg, inner_value)
                if text is None:
                    statement.problems.append(f"`{key}.{inner}` is not carried")
                    continue
                lines.append(f"{inner_arg} = {text}")
            continue
        if key == "stressors" and isinstance(value, dict):
            for stressor, fields in value.items():
                if not isinstance(fields, dict):
                    continue
                lines.append(f"{snake(stressor)} {{")
                for field_key, field_value in fields.items():
                    text = _chaos_value(snake(field_key), field_value)
                    if text is None:
                        statement.problems.append(f"`stressors.{stressor}.{field_key}` is not carried")
                        continue
                    lines.append(f"  {snake(field_key)} = {text}")
                lines.append("}")
            continue
        if key in ("patch", "replace") and isinstance(value, dict):
            lines.append(f"{key} {{")
            for field_key, field_value in value.items():
                if isinstance(field_value, dict) and "value" in field_value:
                    field_value = field_value["value"]
                text = literal(field_value)
                if text is not None:
                    lines.append(f"  {snake(field_key)} = {text}")
            lines.append("}")
            continue
        text = _chaos_value(arg, value)
        if text is None:
            statement.problems.append(f"`{key}` is not carried")
            continue
        lines.append(f"{arg} = {text}")
    # ITBench's Schedule fires at an interval it does not write down; a minute, or the first whole minute
    # past the experiment's duration, so that experiments do not overlap
    duration_ms = _milliseconds(body.get("duration")) if "duration" in body else None
    lines.append(f"every = {duration_ms // 60000 + 1}m" if duration_ms else "every = 1m")
    lines.extend(_labels_block("selector", labels))
    return statement


def waiter_statement(when: str, waiter_id: str, args, namespace: str | None = None) -> Statement | str:
    kinds = [k for k, v in WAITERS.items() if v.itbench_id == waiter_id]
    if not kinds:
        return f"no waiter has ITBench id `{waiter_id}`"
    kind = kinds[0]
    args = args if isinstance(args, dict) else {}
    target = args.get("kubernetesObject")
    if isinstance(target, dict) and isinstance(target.get("metadata"), dict):
        ours = ref_kind(str(target.get("kind"))) or "deployment"
        name = target["metadata"].get("name")
        ref = f"{ours} {quote(str(name))}"
    elif namespace is not None and "namespace" in WAITERS[kind].targets:
        ref = f"namespace {quote(namespace)}"  # a waiter on no object (a pause) waits in the application's namespace
    else:
        ref = None
    statement = Statement("", kind=kind)
    for key, value in args.items():
        if key == "kubernetesObject":
            continue
        if key == "seconds":
            statement.lines.append(f"duration = {int(value)}s" if isinstance(value, int) else f"duration = {value}")
            continue
        text = literal(value)
        if text is None:
            statement.problems.append(f"argument `{key}` is not carried")
            continue
        statement.lines.append(f"{snake(key)} = {text}")
    if ref is None:
        return "a waiter with no `kubernetesObject`"
    statement.header = f"wait {when} {kind} on {ref}"
    return statement
