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
from decimal import Decimal

from .. import ast
from .. import builders as b
from ..faults import FAULTS, WAITERS
from ..units import format_duration, parse_go_duration

# Arguments a kind requires that ITBench's injection does not carry (ITBench decides them on the cluster).
IMPORT_DEFAULTS: dict[str, dict[str, object]] = {
    "cordoned_node": {"node": "kind-worker"},
    "priority_preemption": {"node": "kind-worker", "node_cpu": 4},
}

_K8S_TO_REF = {
    "Deployment": "deployment", "StatefulSet": "statefulset", "Service": "service", "ConfigMap": "configmap",
    "Secret": "secret", "Namespace": "namespace", "Gateway": "gateway", "HorizontalPodAutoscaler": "hpa",
    "Pod": "pod", "ServiceAccount": "serviceaccount",
}


@dataclass
class Statement:
    """A fault or waiter statement in the making: its kind, target and body entries, and what could not
    be carried. `node()` is the statement itself."""

    kind: str
    target: ast.Ref
    entries: list[ast.Entry] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    when: str | None = None  # a waiter's `before` or `after`; None for a fault
    # a Chaos Mesh experiment's selector: the one namespace it names, and its pod labels
    selector_namespace: str | None = None
    selector_labels: dict = field(default_factory=dict)

    def add(self, key: str, value: ast.Value) -> None:
        self.entries.append(b.attr(key, value))

    def node(self) -> ast.Fault | ast.Wait:
        """`fault KIND on REF { ... }` or `wait WHEN KIND on REF { ... }` (no body without entries)."""
        if self.when is not None:
            return b.wait(self.when, self.kind, self.target, b.body(self.entries))
        return b.fault(self.kind, self.target, b.body(self.entries))


def ref_kind(k8s_kind: str) -> str | None:
    return _K8S_TO_REF.get(k8s_kind)


def snake(name: str) -> str:
    return re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", name).lower()


def argument_value(value) -> ast.Value | None:
    """An ITBench argument as an `.itb` value, or None: a scalar, or a list of strings and numbers; the
    language's fields take nothing deeper (strings stay strings: the field decides units)."""
    if isinstance(value, list):
        flat = all(isinstance(v, (str, int, float)) and not isinstance(v, bool) for v in value)
        return b.try_literal(value) if flat else None
    return None if isinstance(value, dict) else b.try_literal(value)


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
    statement = Statement(kind, b.ref(ours, name))
    names = _arg_names(kind)
    given = set()
    for path, value in _flatten({k: v for k, v in args.items() if k != "kubernetesObject"}):
        arg = _match_arg(path, names)
        node = argument_value(value)
        if arg is None or node is None:
            statement.problems.append(f"argument `{'.'.join(path)}` has no counterpart in `{kind}`")
            continue
        statement.add(arg, node)
        given.add(arg)
    for arg, value in IMPORT_DEFAULTS.get(kind, {}).items():
        if arg not in given:
            statement.add(arg, b.literal(value))
    return statement


# ---- Chaos Mesh Schedules --------------------------------------------------------------------------


def _milliseconds(text) -> int | None:
    """A Chaos Mesh duration, a Go duration ("20000ms", "55s", "1m30s", "1.5h"), in milliseconds; None when
    it is not one, is negative, or is finer than a millisecond."""
    seconds = parse_go_duration(str(text))
    if seconds is None or seconds < 0:
        return None
    millis = seconds * 1000
    return int(millis) if millis == millis.to_integral_value() else None


def _duration(text) -> str | None:
    """A Chaos Mesh duration in the language's form (units.format_duration); `0` for none."""
    ms = _milliseconds(text)
    if ms is None:
        return None
    return "0" if ms == 0 else format_duration(Decimal(ms) / 1000)


def _percent(text) -> ast.Percent | None:
    match = re.fullmatch(r"(\d+(?:\.\d+)?)%?", str(text).strip())
    return ast.Percent(match.group(1)) if match else None


def _mapping(value) -> dict:
    """`value` when it is a mapping; an empty one for anything else (a mutated or truncated file)."""
    return value if isinstance(value, dict) else {}


def _labels_block(key: str, labels) -> list[ast.Block]:
    if not isinstance(labels, dict):
        return []
    return [b.block(key, [b.attr(str(k), str(v)) for k, v in labels.items()])]


_SYMBOL_FIELDS = {"action", "direction", "mode", "mem_type", "target"}
_DURATION_FIELDS = {"duration", "latency", "jitter", "delay", "grace_period", "offset"}
_PERCENT_FIELDS = {"loss", "duplicate", "corrupt", "correlation", "percent", "load", "size"}


def _chaos_value(key: str, value) -> ast.Value | None:
    if key in _SYMBOL_FIELDS and isinstance(value, str):
        return b.symbol(snake(value)) if re.fullmatch(r"[A-Za-z][A-Za-z0-9]*", value) else None
    if key in _DURATION_FIELDS:
        text = _duration(value)
        return None if text is None else b.number(text)
    if key == "size" and isinstance(value, str):
        match = re.fullmatch(r"(\d+)(B|KB|MB|GB|TB|KiB|MiB|GiB|TiB)", value.strip())
        if match:  # stress-ng's sizes in the language's memory units
            units = {"B": "", "KB": "k", "MB": "M", "GB": "G", "TB": "T", "KiB": "Ki", "MiB": "Mi", "GiB": "Gi",
                     "TiB": "Ti"}
            return b.number(match.group(1) + units[match.group(2)])
    if key in _PERCENT_FIELDS and isinstance(value, (str, int, float)) and not isinstance(value, bool):
        if isinstance(value, str) and not re.fullmatch(r"\d+(\.\d+)?%?", value.strip()):
            return b.literal(value)  # a size such as 128MB
        return _percent(value)
    return argument_value(value)


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
    statement = Statement(kind, b.ref("deployment", component),
                          selector_namespace=namespaces[0] if isinstance(namespaces, list) and len(namespaces) == 1
                          and isinstance(namespaces[0], str) else None,
                          selector_labels=dict(labels))
    name = target["metadata"].get("name")
    if isinstance(name, str):
        statement.add("name", ast.Str(name))
    if "action" not in body and kind == "http_chaos":  # an HTTP experiment's action is the field it carries
        action = next((k for k in ("abort", "delay", "replace", "patch") if k in body), None)
        if action is not None:
            statement.add("action", b.symbol(action))
    for key, value in body.items():
        _chaos_field(statement, selector, key, value)
    # ITBench's Schedule fires at an interval it does not write down; a minute, or the first whole minute
    # past the experiment's duration, so that experiments do not overlap
    duration_ms = _milliseconds(body.get("duration")) if "duration" in body else None
    statement.add("every", ast.Quantity(f"{duration_ms // 60000 + 1}m" if duration_ms else "1m"))
    statement.entries.extend(_labels_block("selector", labels))
    return statement


def _chaos_field(statement: Statement, selector: dict, key: str, value) -> None:
    """One field of a Chaos Mesh experiment's body as the statement's entries (or a problem)."""
    arg = snake(key)
    if key == "selector":
        if isinstance(selector.get("podPhaseSelectors"), list):
            phases = argument_value(selector["podPhaseSelectors"])
            if phases is None:
                statement.problems.append("`selector.podPhaseSelectors` is not carried")
            else:
                statement.add("pod_phases", phases)
        return
    if key == "mode" and value == "all":
        return
    if key == "target" and isinstance(value, dict):  # a network experiment's peer
        peer = _mapping(_mapping(value.get("selector")).get("labelSelectors"))
        peer_name = peer.get("app.kubernetes.io/component") or next(iter(peer.values()), None) if peer else None
        if peer_name:
            statement.add("peer", ast.Str(str(peer_name)))
            statement.entries.extend(_labels_block("peer_selector", peer))
        return
    if key in ("delay", "loss", "duplicate", "corrupt", "bandwidth") and isinstance(value, dict):
        for inner, inner_value in value.items():  # networkChaos: delay { latency }, loss { loss correlation }
            inner_arg = snake(inner)
            if inner_arg == "correlation" and str(inner_value) in ("0", "0.0"):
                continue
            node = _chaos_value(inner_arg, inner_value)
            if node is None:
                statement.problems.append(f"`{key}.{inner}` is not carried")
                continue
            statement.add(inner_arg, node)
        return
    if key == "stressors" and isinstance(value, dict):
        for stressor, fields in value.items():
            if isinstance(fields, dict):
                statement.entries.append(b.block(snake(stressor), _stressor_entries(statement, stressor, fields)))
        return
    if key in ("patch", "replace") and isinstance(value, dict):
        entries = []
        for field_key, field_value in value.items():
            if isinstance(field_value, dict) and "value" in field_value:
                field_value = field_value["value"]
            node = argument_value(field_value)
            if node is not None:
                entries.append(b.attr(snake(field_key), node))
        statement.entries.append(b.block(key, entries))
        return
    node = _chaos_value(arg, value)
    if node is None:
        statement.problems.append(f"`{key}` is not carried")
        return
    statement.add(arg, node)


def _stressor_entries(statement: Statement, stressor: str, fields: dict) -> list[ast.Attr]:
    entries = []
    for field_key, field_value in fields.items():
        node = _chaos_value(snake(field_key), field_value)
        if node is None:
            statement.problems.append(f"`stressors.{stressor}.{field_key}` is not carried")
            continue
        entries.append(b.attr(snake(field_key), node))
    return entries


def waiter_statement(when: str, waiter_id: str, args, namespace: str | None = None) -> Statement | str:
    kinds = [k for k, v in WAITERS.items() if v.itbench_id == waiter_id]
    if not kinds:
        return f"no waiter has ITBench id `{waiter_id}`"
    kind = kinds[0]
    args = args if isinstance(args, dict) else {}
    target = args.get("kubernetesObject")
    if isinstance(target, dict) and isinstance(target.get("metadata"), dict):
        ref = b.ref(ref_kind(str(target.get("kind"))) or "deployment", str(target["metadata"].get("name")))
    elif namespace is not None and "namespace" in WAITERS[kind].targets:
        ref = b.ref("namespace", namespace)  # a waiter on no object (a pause) waits in the application's namespace
    else:
        return "a waiter with no `kubernetesObject`"
    statement = Statement(kind, ref, when=when)
    for key, value in args.items():
        if key == "kubernetesObject":
            continue
        node = _seconds(value) if key == "seconds" else argument_value(value)
        if node is None:
            statement.problems.append(f"argument `{key}` is not carried")
            continue
        statement.add("duration" if key == "seconds" else snake(key), node)
    return statement


def _seconds(value) -> ast.Value | None:
    """A waiter's `seconds` as its `duration`: a whole number of seconds, or a duration as written."""
    if isinstance(value, int):
        return ast.Quantity(f"{int(value)}s")
    try:
        return b.number(str(value)) if isinstance(value, (str, float)) else None
    except ValueError:
        return None
