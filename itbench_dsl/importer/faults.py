"""ITBench injections and waiters back to `.itb` fault and waiter statements.

The mapping is general: the fault kind is the library's kind with the injection's ITBench id
(for Chaos Mesh Schedules, the kind of the scheduled experiment), the target is the injection's
`kubernetesObject`, and each argument is matched by name against the kind's own arguments
(`container.name` -> `container`, `configMapName` -> `configmap_name`, `httpMethods` -> `methods`),
except where ITBench's argument means something else than the name says (`targetPort` selects the
service port by the target port it has now: `from_target_port`).

A Chaos Mesh experiment is read field by field against the Chaos Mesh CRDs (chaos-mesh.org/v1alpha1):
each field of each kind the library runs is either carried into the fault's arguments, or reported
where it stands in the ITBench file: refused (an error) when the port would act otherwise than
ITBench (a selector by node, a TLS proxy, a second HTTP action), or a warning when Chaos Mesh or
ITBench's injection ignores or overrides the field (`value` in mode `all`, the Schedule's `schedule`).
Nothing is dropped without a word. Every statement also records which ITBench argument each of its
entries carries, so that an error of the compiled port points back at that argument.
"""

from __future__ import annotations

import base64
import binascii
import re
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Self

from .. import ast
from .. import builders as b
from ..agent_view import name_tells
from ..wording import stem, words
from ..faults import FAULTS, WAITERS
from ..units import format_duration, parse_go_duration

# Arguments a kind requires that ITBench's injection does not carry (ITBench decides them on the cluster).
IMPORT_DEFAULTS: dict[str, dict[str, object]] = {
    "cordoned_node": {"node": "kind-worker"},
    "priority_preemption": {"node": "kind-worker", "node_cpu": 4},
}

# ITBench arguments whose meaning is not their name's: (ITBench id, argument path) -> the fault's argument
RENAMED: dict[tuple[str, tuple[str, ...]], str] = {
    # the service port whose target port is this one now (the injection then writes 9999 into it)
    ("modified-target-port-kubernetes-service", ("targetPort",)): "from_target_port",
}

_K8S_TO_REF = {
    "Deployment": "deployment", "StatefulSet": "statefulset", "Service": "service", "ConfigMap": "configmap",
    "Secret": "secret", "Namespace": "namespace", "Gateway": "gateway", "HorizontalPodAutoscaler": "hpa",
    "Pod": "pod", "ServiceAccount": "serviceaccount",
}
_API_VERSIONS = {
    "Deployment": "apps/v1", "StatefulSet": "apps/v1", "Service": "v1", "ConfigMap": "v1", "Secret": "v1",
    "Namespace": "v1", "Gateway": "gateway.networking.k8s.io/v1", "HorizontalPodAutoscaler": "autoscaling/v2",
    "Pod": "v1", "ServiceAccount": "v1",
}
CHAOS_API = "chaos-mesh.org/v1alpha1"
CHAOS_NAMESPACE = "chaos-mesh"


class Problem(str):
    """Why an ITBench argument is not carried as it is written: the message (the string itself), the argument's
    path inside the injection's or waiter's `args` (where the diagnostic points; None: its `id`), and whether
    it refuses the import (`fatal`: the port would act otherwise than ITBench) or only makes the port's files
    differ (W5005)."""

    path: tuple | None
    fatal: bool

    def __new__(cls, message: str, path=(), fatal: bool = False) -> Self:
        self = super().__new__(cls, message)
        self.path = None if path is None else tuple(path)
        self.fatal = fatal
        return self


@dataclass
class Statement:
    """A fault or waiter statement in the making: its kind, target and body entries, and what could not
    be carried. `node()` is the statement itself."""

    kind: str
    target: ast.Ref
    entries: list[ast.Entry] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    when: str | None = None  # a waiter's `before` or `after`; None for a fault
    # a Chaos Mesh experiment's selector: the one namespace it names, and its pod labels
    selector_namespace: str | None = None
    selector_labels: dict = field(default_factory=dict)
    # the ITBench argument (its path inside `args`) each entry carries, by the entry's dotted key (`replace.body`)
    sources: dict[str, tuple] = field(default_factory=dict)
    chaos_action: str | None = None  # a Chaos Mesh experiment's action, as Chaos Mesh spells it
    itbench_name: str | None = None  # ITBench's name of the object it creates, which the port leaves out

    def add(self, key: str, value: ast.Value, source: tuple = ()) -> None:
        self.entries.append(b.attr(key, value))
        if source:
            self.sources.setdefault(key, tuple(source))

    def add_block(self, key: str, entries: list, source: tuple = (), inner: dict | None = None) -> None:
        """`key { entries }`; `inner` gives the ITBench argument of each entry of the block."""
        self.entries.append(b.block(key, entries))
        if source:
            self.sources.setdefault(key, tuple(source))
        for name, path in (inner or {}).items():
            self.sources.setdefault(f"{key}.{name}", tuple(path))

    def refuse(self, message: str, path: tuple) -> None:
        self.problems.append(Problem(message, path, fatal=True))

    def warn(self, message: str, path: tuple) -> None:
        self.problems.append(Problem(message, path, fatal=False))

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
        if isinstance(value, dict) and value:
            out.extend(_flatten(value, prefix + (key,)))
        else:
            out.append((prefix + (key,), value))
    return out


def _dotted(path: tuple) -> str:
    return ".".join(str(p) for p in path)


def injection_statement(injection_id: str, args: dict, home: str | None = None) -> Statement | Problem:
    """The fault statement of one ITBench injection, or a Problem saying why there is none (a message, with
    the path of the argument at fault). `home` is the application's namespace: a target elsewhere is written
    with its namespace (`deployment "other/cart"`)."""
    if not isinstance(args, dict):
        return Problem("its `args` is not a mapping")
    target = args.get("kubernetesObject")
    if not isinstance(target, dict) or not isinstance(target.get("metadata"), dict):
        return Problem("its `args` has no `kubernetesObject` with `metadata`", ("kubernetesObject",))
    kinds = [k for k, v in FAULTS.items() if v.itbench_id == injection_id]
    if not kinds:
        return Problem(f"no fault of the library has ITBench id `{injection_id}`", None)
    if injection_id == "scheduled-chaos-mesh-experiment":
        return _chaos_statement(args, target)
    kind = kinds[0]
    k8s_kind = target.get("kind")
    ours = ref_kind(str(k8s_kind))
    name = target["metadata"].get("name")
    if ours is None:
        return Problem(f"its target `{k8s_kind}` is not an object kind the language names", ("kubernetesObject", "kind"))
    if not isinstance(name, str) or not name:
        return Problem("its target has no `metadata.name`", ("kubernetesObject", "metadata"))
    api = target.get("apiVersion")
    if api is not None and api != _API_VERSIONS[k8s_kind]:
        return Problem(f"its target's apiVersion `{api}` is not {k8s_kind}'s (`{_API_VERSIONS[k8s_kind]}`)",
                       ("kubernetesObject", "apiVersion"))
    namespace = target["metadata"].get("namespace")
    if ours != "namespace" and isinstance(namespace, str) and home is not None and namespace != home:
        name = f"{namespace}/{name}"  # another namespace than the application's: the checker finds it, or says so
    statement = Statement(kind, b.ref(ours, name))
    names = _arg_names(kind)
    given = set()
    for path, value in _flatten({k: v for k, v in args.items() if k != "kubernetesObject"}):
        arg = RENAMED.get((injection_id, path)) or _match_arg(path, names)
        if arg is None:
            statement.warn(f"argument `{_dotted(path)}` has no counterpart in `{kind}`; it is left out", path)
            continue
        node = argument_value(value)
        if node is None:
            statement.refuse(f"argument `{_dotted(path)}` is {_shape(value)}, which `{kind}`'s `{arg}` does not take",
                             path)
            continue
        statement.add(arg, node, path)
        given.add(arg)
    for arg, value in IMPORT_DEFAULTS.get(kind, {}).items():
        if arg not in given:
            statement.add(arg, b.literal(value))
    return statement


def _shape(value) -> str:
    if isinstance(value, dict):
        return "a mapping" if value else "an empty mapping"
    if isinstance(value, list):
        return "a list of mappings or lists" if value else "an empty list"
    return f"`{value!r}`"


# ---- Chaos Mesh Schedules --------------------------------------------------------------------------


def _milliseconds(text) -> int | None:
    """A Chaos Mesh duration, a Go duration ("20000ms", "55s", "1m30s", "1.5h"), in milliseconds; None when
    it is not one, is negative, or is finer than a millisecond."""
    if isinstance(text, bool):
        return None
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
    if isinstance(text, bool):
        return None
    match = re.fullmatch(r"(\d+(?:\.\d+)?)%?", str(text).strip())
    return ast.Percent(match.group(1)) if match else None


def _mapping(value) -> dict:
    """`value` when it is a mapping; an empty one for anything else (a mutated or truncated file)."""
    return value if isinstance(value, dict) else {}


def _labels_block(key: str, labels) -> list[ast.Block]:
    if not isinstance(labels, dict):
        return []
    return [b.block(key, [b.attr(str(k), str(v)) for k, v in labels.items()])]


class _Cannot(Exception):
    """A value the language's argument cannot take: the reason."""


# converters: an ITBench value to the `.itb` value of the argument that carries it, or _Cannot


def _c_duration(value) -> ast.Value:
    text = _duration(value)
    if text is None:
        raise _Cannot(f"`{value}` is not a duration the language writes (a Go duration, at least 0, in whole "
                      "milliseconds)")
    return b.number(text)


def _c_millis(value) -> ast.Value:
    """A count of milliseconds (JVMChaos' `latency`) as a duration."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise _Cannot(f"`{value}` is not a whole number of milliseconds")
    return b.number(format_duration(Decimal(value) / 1000) if value else "0")


def _c_seconds(value) -> ast.Value:
    """A count of seconds (PodChaos' `gracePeriod`) as a duration."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise _Cannot(f"`{value}` is not a whole number of seconds, at least 0")
    return b.number(format_duration(value))


def _c_symbol(value) -> ast.Value:
    """An enumerated value as a name of the language: `pod-kill` -> pod_kill, `attrOverride` -> attr_override,
    `Request` -> request, `fixed-percent` -> fixed_percent."""
    if not isinstance(value, str) or not re.fullmatch(r"[A-Za-z][A-Za-z0-9-]*", value):
        raise _Cannot(f"`{value}` is not a name")
    return b.symbol(snake(value).replace("-", "_"))


def _c_name(value) -> ast.Value:
    """An enumerated value kept as Chaos Mesh spells it (a file kind: `regularFile`)."""
    if not isinstance(value, str) or not re.fullmatch(r"[A-Za-z][A-Za-z0-9_]*", value):
        raise _Cannot(f"`{value}` is not a name")
    return b.symbol(value)


def _c_percent(value) -> ast.Value:
    node = _percent(value)
    if node is None:
        raise _Cannot(f"`{value}` is not a percentage")
    return node


def _c_int(value) -> ast.Value:
    if isinstance(value, bool) or not (isinstance(value, int) or (isinstance(value, str) and
                                                                   re.fullmatch(r"-?\d+", value.strip()))):
        raise _Cannot(f"`{value}` is not a whole number")
    return ast.Int(int(value))


def _c_str(value) -> ast.Value:
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise _Cannot(f"{_shape(value)} is not text")
    return ast.Str(str(value))


def _c_str_list(value) -> ast.Value:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise _Cannot(f"{_shape(value)} is not a list of strings")
    return b.literal(value)


def _c_bool(value) -> ast.Value:
    if not isinstance(value, bool):
        raise _Cannot(f"`{value}` is not true or false")
    return b.literal(value)


def _c_size(value) -> ast.Value:
    """A stress-ng size: `256MB` in the language's memory units, or a percentage of the available memory."""
    if isinstance(value, str):
        match = re.fullmatch(r"(\d+)(B|KB|MB|GB|TB|KiB|MiB|GiB|TiB)", value.strip())
        if match:
            units = {"B": "", "KB": "k", "MB": "M", "GB": "G", "TB": "T", "KiB": "Ki", "MiB": "Mi", "GiB": "Gi",
                     "TiB": "Ti"}
            return b.number(match.group(1) + units[match.group(2)])
    if isinstance(value, str) and value.strip().endswith("%"):
        return _c_percent(value)
    raise _Cannot(f"`{value}` is not a stress-ng size (a whole number of B, KB, MB, GB, TB, KiB ... TiB, or a "
                  "percentage)")


# fields: Chaos Mesh's field -> (the language's argument, converter), or a string: why it is refused
_COMMON_FIELDS = {
    "duration": ("duration", _c_duration),
    "remoteCluster": "the language runs every experiment in the scenario's own cluster",
}
_CONTAINERS = {"containerNames": ("containers", _c_str_list)}
_KIND_FIELDS: dict[str, dict] = {
    "PodChaos": {"action": ("action", _c_symbol), "gracePeriod": ("grace_period", _c_seconds), **_CONTAINERS},
    "NetworkChaos": {
        "action": ("action", _c_symbol), "direction": ("direction", _c_symbol),
        "rate": "the `rate` action is not one the language's network_chaos has (use `bandwidth`)",
        "device": "the language acts on the pods' default network device",
        "targetDevice": "the language acts on the peer's default network device",
        "externalTargets": "the language's peer is a workload of the topology, not an address outside the cluster",
    },
    "StressChaos": {"stressngStressors": "the language's stress_chaos takes `cpu` and `memory` stressors, not raw "
                    "stress-ng options", **_CONTAINERS},
    "HTTPChaos": {
        "target": ("target", _c_symbol), "port": ("port", _c_int), "path": ("path", _c_str),
        "method": ("method", _c_str), "code": ("code", _c_int), "delay": ("delay", _c_duration),
        "tls": "the language's http_chaos acts on plain HTTP; a TLS-terminating proxy is not carried",
    },
    "IOChaos": {
        "action": ("action", _c_symbol), "volumePath": ("volume_path", _c_str), "path": ("path", _c_str),
        "percent": ("percent", _c_percent), "methods": ("methods", _c_str_list), "delay": ("delay", _c_duration),
        "errno": ("errno", _c_int), **_CONTAINERS,
    },
    "DNSChaos": {"action": ("action", _c_symbol), "patterns": ("patterns", _c_str_list), **_CONTAINERS},
    "TimeChaos": {"clockIds": ("clocks", _c_str_list), **_CONTAINERS},
    "JVMChaos": {
        "action": ("action", _c_symbol), "class": ("class", _c_str), "method": ("method", _c_str),
        "latency": ("latency", _c_millis), "returnValue": ("return_value", _c_str), "exception": ("exception", _c_str),
        "cpuCount": ("cpu_count", _c_int), "memType": ("mem_type", _c_symbol), "ruleData": ("rule_data", _c_str),
        "port": ("port", _c_int),
        "name": "the language names the Byteman rule itself", "pid": "the language attaches to the container's Java "
        "process, not to a process id", "database": "the `mysql` action is not one the language's jvm_chaos has",
        "mysqlConnectorVersion": "the `mysql` action is not one the language's jvm_chaos has",
        "sqlType": "the `mysql` action is not one the language's jvm_chaos has",
        "table": "the `mysql` action is not one the language's jvm_chaos has", **_CONTAINERS,
    },
}
# the fields each kind reads with a handler of its own (below)
_SPECIAL = {
    "NetworkChaos": ("target", "delay", "loss", "duplicate", "corrupt", "bandwidth"),
    "StressChaos": ("stressors",),
    "HTTPChaos": ("abort", "replace", "patch", "request_headers", "response_headers"),
    "IOChaos": ("attr", "mistake"),
    "TimeChaos": ("timeOffset",),
}
# actions of the CRDs that the language's faults do not have, and why
_REFUSED_ACTIONS = {
    ("NetworkChaos", "netem"): "`netem` combines several network faults in one experiment; the language's "
                               "network_chaos takes one action (delay, loss, duplicate, corrupt ...)",
    ("JVMChaos", "mysql"): "the language's jvm_chaos does not inject faults into MySQL calls",
}
_SELECTOR_REFUSED = ("annotationSelectors", "expressionSelectors", "fieldSelectors", "nodeSelectors", "nodes", "pods")
# a Schedule's own fields: ITBench's injection writes these over what the file says
# ITBench roles/faults/tasks/inject_scheduled_chaos_mesh_experiment.yaml: scheduleSpec | combine({concurrencyPolicy:
# Forbid, historyLimit: 1, schedule: "* * * * *"})
_OVERRIDDEN = {"schedule": '"* * * * *"', "concurrencyPolicy": "Forbid", "historyLimit": "1"}
_SCHEDULE_BODIES = ("awsChaos", "azureChaos", "blockChaos", "dnsChaos", "gcpChaos", "httpChaos", "ioChaos", "jvmChaos",
                    "kernelChaos", "networkChaos", "physicalmachineChaos", "podChaos", "stressChaos", "timeChaos",
                    "workflow")


def _chaos_kinds() -> dict[str, tuple[str, str]]:
    """Chaos Mesh kind -> (the fault kind that runs it, its field in a Schedule's spec)."""
    from ..faults.chaos import SCHEDULE_FIELDS

    out = {}
    for name, kind in FAULTS.items():
        chaos_type = kind.mechanism.partition("chaos-mesh.schedule:")[2]
        if chaos_type in SCHEDULE_FIELDS:
            out[chaos_type] = (name, SCHEDULE_FIELDS[chaos_type])
    return out


def _chaos_statement(args: dict, target: dict) -> Statement | Problem:
    spec = args.get("scheduleSpec")
    if not isinstance(spec, dict) or not isinstance(spec.get("type"), str):
        return Problem("its `scheduleSpec` has no `type`", ("scheduleSpec",))
    chaos_type = spec["type"]
    kinds = _chaos_kinds()
    if chaos_type not in kinds:
        spelt = next((k for k in kinds if k.lower() == chaos_type.lower()), None)
        return Problem(f"its `scheduleSpec.type` `{chaos_type}` is no Chaos Mesh kind a fault of the library runs "
                       + (f"(Chaos Mesh spells it `{spelt}`)" if spelt else "(they run " + ", ".join(sorted(kinds))
                          + ")"), ("scheduleSpec", "type"))
    kind, body_key = kinds[chaos_type]
    body = spec.get(body_key)
    if not isinstance(body, dict):
        return Problem(f"its `scheduleSpec` has no `{body_key}` mapping: the {chaos_type} the Schedule creates",
                       ("scheduleSpec", body_key) if body_key in spec else ("scheduleSpec",))
    base = ("scheduleSpec", body_key)
    selector = body.get("selector") if isinstance(body.get("selector"), dict) else {}
    labels = selector.get("labelSelectors") or {}
    if not isinstance(labels, dict):
        return Problem("its experiment's `selector.labelSelectors` is not a mapping",
                       base + ("selector", "labelSelectors"))
    component = labels.get("app.kubernetes.io/component") or labels.get("app.kubernetes.io/name") or labels.get("app")
    if not isinstance(component, str):
        component = next((v for v in labels.values() if isinstance(v, str)), None)
    if component is None:
        return Problem("its experiment's selector names no workload (no `labelSelectors`)", base + ("selector",))
    namespaces = selector.get("namespaces")
    statement = Statement(kind, b.ref("deployment", component),
                          selector_namespace=namespaces[0] if isinstance(namespaces, list) and len(namespaces) == 1
                          and isinstance(namespaces[0], str) else None,
                          selector_labels=dict(labels))
    statement.sources[""] = base + ("selector", "labelSelectors")  # the target is the workload they select
    _schedule_object(statement, target, spec, body_key)
    name = target["metadata"].get("name")
    if isinstance(name, str):
        # ITBench names its Schedules after the fault (`product-catalog-network-delay`), which the agent reads
        # when it lists them (E4010): such a name is left to the compiler, and ground truth naming ITBench's
        # object is pointed at the port's (W5002); a name that says nothing of it is kept
        schedule = {"apiVersion": target.get("apiVersion", ""), "kind": "Schedule", "metadata": {"name": name},
                    "spec": spec}
        application = frozenset(stem(w) for value in _selected(spec) for w in words(value))
        told = name_tells(schedule, application)
        if told:
            statement.itbench_name = name
            statement.warn(f"the Schedule's name `{name}` says what the fault does (`{told[0]}`), which the agent "
                           "reads (E4010): the port lets the compiler name it", ("kubernetesObject", "metadata", "name"))
        else:
            statement.add("name", ast.Str(name), ("kubernetesObject", "metadata", "name"))
    action = body.get("action")
    statement.chaos_action = action if isinstance(action, str) else None
    if chaos_type == "HTTPChaos":
        action = _http_action(statement, body, base)
    elif (chaos_type, action) in _REFUSED_ACTIONS:
        statement.refuse(f"action `{action}` is not carried: {_REFUSED_ACTIONS[(chaos_type, action)]}",
                         base + ("action",))
    mode = body.get("mode", "all")
    for key, value in body.items():
        path = base + (key,)
        if key == "selector":
            _selector(statement, selector, path)
        elif key == "action" and (chaos_type, value) in _REFUSED_ACTIONS:
            continue  # refused above
        elif key == "mode":
            if value != "all":
                _carry(statement, "mode", _c_symbol, value, path)
        elif key == "value":
            _mode_value(statement, mode, value, path)
        elif key == "duration" and chaos_type == "PodChaos" and action in ("pod-kill", "container-kill"):
            statement.warn(f"`duration` is left out: `{action}` is instantaneous (the Schedule repeats it)", path)
        elif key in _SPECIAL.get(chaos_type, ()):
            _special(statement, chaos_type, key, value, path)
        else:
            rule = _KIND_FIELDS[chaos_type].get(key, _COMMON_FIELDS.get(key))
            if isinstance(rule, str):
                statement.refuse(f"`{key}` is not carried: {rule}", path)
            elif rule is None:
                statement.warn(f"`{key}` is not a field of Chaos Mesh's {chaos_type}: Chaos Mesh ignores it, and so "
                               "does the port", path)
            else:
                _carry(statement, rule[0], rule[1], value, path)
    # ITBench's Schedule fires at an interval it does not write down; a minute, or the first whole minute
    # past the experiment's duration, so that experiments do not overlap
    duration_ms = _milliseconds(body.get("duration")) if "duration" in body else None
    statement.add("every", ast.Quantity(f"{duration_ms // 60000 + 1}m" if duration_ms else "1m"))
    if labels:
        statement.add_block("selector", _labels_block("selector", labels)[0].entries,
                            base + ("selector", "labelSelectors"))
    return statement


def _carry(statement: Statement, key: str, convert, value, path: tuple) -> None:
    try:
        node = convert(value)
    except _Cannot as reason:
        statement.refuse(f"`{_dotted(path[2:]) or path[-1]}` is not carried: {reason}", path)
        return
    statement.add(key, node, path)


def _selected(spec) -> list[str]:
    """The label values and namespaces of every selector in a Schedule's spec (its pods, a target's): the
    application's names, which the Schedule's name may say."""
    out, stack = [], [spec]
    while stack:
        node = stack.pop()
        if isinstance(node, list):
            stack.extend(node)
        elif isinstance(node, dict):
            for key, value in node.items():
                if key in ("labelSelectors", "namespaces"):
                    values = value.values() if isinstance(value, dict) else value if isinstance(value, list) else []
                    out += [v for v in values if isinstance(v, str)]
                else:
                    stack.append(value)
    return out


def _schedule_object(statement: Statement, target: dict, spec: dict, body_key: str) -> None:
    """What the Schedule itself says besides its experiment: reported where the port cannot say it."""
    api = target.get("apiVersion")
    if api is not None and api != CHAOS_API:
        statement.refuse(f"the Schedule's apiVersion `{api}` is not Chaos Mesh's (`{CHAOS_API}`)",
                         ("kubernetesObject", "apiVersion"))
    if target.get("kind") not in (None, "Schedule"):
        statement.refuse(f"`{target.get('kind')}` is not a Chaos Mesh Schedule: this ITBench fault creates a "
                         "Schedule", ("kubernetesObject", "kind"))
    namespace = target["metadata"].get("namespace")
    if namespace is not None and namespace != CHAOS_NAMESPACE:
        statement.warn(f"the Schedule's namespace `{namespace}` is not carried: the port creates it in "
                       f"`{CHAOS_NAMESPACE}`", ("kubernetesObject", "metadata", "namespace"))
    for key in spec:
        path = ("scheduleSpec", key)
        if key in ("type", body_key):
            continue
        if key in _OVERRIDDEN:
            statement.warn(f"`scheduleSpec.{key}` is left out: ITBench's injection replaces it with "
                           f"{_OVERRIDDEN[key]}", path)
        elif key == "startingDeadlineSeconds":
            statement.warn("`scheduleSpec.startingDeadlineSeconds` is not carried: the port's Schedule starts each "
                           "experiment however late", path)
        elif key in _SCHEDULE_BODIES:
            statement.warn(f"`scheduleSpec.{key}` is left out: the Schedule's type is {spec['type']}, and Chaos "
                           f"Mesh reads only `{body_key}`", path)
        else:
            statement.warn(f"`scheduleSpec.{key}` is not a field of a Chaos Mesh Schedule; it is left out", path)


def _mode_value(statement: Statement, mode, value, path: tuple) -> None:
    """A selection mode's figure: a pod count (fixed) or a percentage (the percent modes)."""
    if mode in ("all", "one"):
        statement.warn(f"`value` is left out: mode `{mode}` has no figure, and Chaos Mesh ignores it", path)
    elif mode == "fixed":
        _carry(statement, "value", _c_int, value, path)
    else:
        _carry(statement, "value", _c_percent, value, path)


def _selector(statement: Statement, selector: dict, path: tuple) -> None:
    """The experiment's pod selector: its labels (the fault's `selector`, written last), one namespace, pod
    phases. Selectors by anything else would pick other pods than the port's: refused."""
    if not isinstance(selector, dict) or not selector:
        return
    for key, value in selector.items():
        at = path + (key,)
        if key == "labelSelectors":
            if isinstance(value, dict) and not all(isinstance(v, (str, int, float)) and not isinstance(v, bool) for v in value.values()):
                statement.refuse("`selector.labelSelectors` holds a value that is not a label value", at)
        elif key == "namespaces":
            if not isinstance(value, list) or len(value) != 1 or not isinstance(value[0], str):
                statement.refuse("`selector.namespaces` is not carried: the language's experiment selects the pods "
                                 "of one namespace (give exactly one)", at)
        elif key == "podPhaseSelectors":
            _carry(statement, "pod_phases", _c_str_list, value, at)
        elif key in _SELECTOR_REFUSED:
            statement.refuse(f"`selector.{key}` is not carried: the language selects a workload's pods by their "
                             "labels (`selector`), in one namespace", at)
        else:
            statement.warn(f"`selector.{key}` is not a field of a Chaos Mesh selector; it is left out", at)


def _special(statement: Statement, chaos_type: str, key: str, value, path: tuple) -> None:
    {"NetworkChaos": _network_field, "StressChaos": _stressors, "HTTPChaos": _http_field, "IOChaos": _io_block,
     "TimeChaos": _time_offset}[chaos_type](statement, key, value, path)


def _nested(statement: Statement, key: str, value, path: tuple, fields: dict, block: str | None = None) -> None:
    """A mapping whose fields the language takes (`fields`: Chaos Mesh's field -> (argument, converter), or a
    string: why it is refused): as arguments of the fault, or of a block `block { ... }`."""
    if not isinstance(value, dict):
        statement.refuse(f"`{key}` is {_shape(value)}, not a mapping", path)
        return
    if not value and block is None:
        statement.warn(f"`{key}` is empty: there is nothing in it to carry", path)
        return
    entries, inner = [], {}
    for field_key, field_value in value.items():
        at = path + (field_key,)
        rule = fields.get(field_key)
        if isinstance(rule, str):
            statement.refuse(f"`{key}.{field_key}` is not carried: {rule}", at)
            continue
        if rule is None:
            statement.warn(f"`{key}.{field_key}` is not a field Chaos Mesh reads there; it is left out", at)
            continue
        arg, convert = rule
        if convert is None:  # a value the language leaves out as its own default
            continue
        try:
            node = convert(field_value)
        except _Cannot as reason:
            statement.refuse(f"`{key}.{field_key}` is not carried: {reason}", at)
            continue
        if block is None:
            statement.add(arg, node, at)
        else:
            entries.append(b.attr(arg, node))
            inner[arg] = at
    if block is not None:
        statement.add_block(block, entries, path, inner)


# ---- NetworkChaos --------------------------------------------------------------------------------------------

_NETWORK_FIGURES = {
    "delay": {"latency": ("latency", _c_duration), "jitter": ("jitter", _c_duration),
              "correlation": ("correlation", _c_percent),
              "reorder": "reordering packets is not part of the language's delay"},
    "loss": {"loss": ("loss", _c_percent), "correlation": ("correlation", _c_percent)},
    "duplicate": {"duplicate": ("duplicate", _c_percent), "correlation": ("correlation", _c_percent)},
    "corrupt": {"corrupt": ("corrupt", _c_percent), "correlation": ("correlation", _c_percent)},
    "bandwidth": {"rate": ("rate", _c_str), "limit": ("limit", _c_int), "buffer": ("buffer", _c_int),
                  "peakrate": "the language's bandwidth has no peak rate",
                  "minburst": "the language's bandwidth has no peak-rate bucket"},
}


def _network_field(statement: Statement, key: str, value, path: tuple) -> None:
    if value == {} and (key == statement.chaos_action or (key == "target" and statement.chaos_action == "partition")):
        what = "a peer to cut the target from" if key == "target" else "its figures (latency, loss, rate ...)"
        statement.refuse(f"`{key}` is empty, and the `{statement.chaos_action}` action needs {what} there", path)
        return
    if key == "target":
        _peer(statement, value, path)
        return
    fields = dict(_NETWORK_FIGURES[key])
    if isinstance(value, dict) and str(value.get("correlation")) in ("0", "0.0"):
        fields["correlation"] = ("correlation", None)  # no correlation: the language's default
    _nested(statement, key, value, path, fields)


def _peer(statement: Statement, value, path: tuple) -> None:
    """A network experiment's `target`: the peer workload, all of its pods, in the target's namespace."""
    if not isinstance(value, dict):
        statement.refuse(f"`target` is {_shape(value)}, not a peer selection", path)
        return
    if not value:
        statement.warn("`target` is empty: it names no peer", path)
        return
    selector = _mapping(value.get("selector"))
    peer = _mapping(selector.get("labelSelectors"))
    for key, inner in value.items():
        if key == "mode" and inner != "all":
            statement.refuse(f"`target.mode` `{inner}` is not carried: the language's peer is all of a workload's "
                             "pods", path + (key,))
        elif key == "value" and value.get("mode") not in (None, "all", "one"):
            continue  # refused with its mode
        elif key == "value":
            statement.warn("`target.value` is left out: mode `all` has no figure", path + (key,))
        elif key not in ("mode", "selector"):
            statement.warn(f"`target.{key}` is not a field of a Chaos Mesh network target; it is left out",
                           path + (key,))
    for key, inner in selector.items():
        at = path + ("selector", key)
        if key == "namespaces":
            if inner != [statement.selector_namespace] and statement.selector_namespace is not None:
                statement.refuse("`target.selector.namespaces` is not carried: the language's peer is a workload of "
                                 "the target's namespace", at)
        elif key in _SELECTOR_REFUSED or key == "podPhaseSelectors":
            statement.refuse(f"`target.selector.{key}` is not carried: the language selects the peer's pods by "
                             "their labels", at)
        elif key != "labelSelectors":
            statement.warn(f"`target.selector.{key}` is not a field of a Chaos Mesh selector; it is left out", at)
    if not peer:
        if isinstance(value.get("selector"), dict) and "labelSelectors" in value["selector"]:
            statement.refuse("`target.selector.labelSelectors` is not a mapping of labels", path + ("selector",))
        elif value.get("selector") is not None:
            statement.refuse("`target.selector` names no peer by its labels", path + ("selector",))
        else:
            statement.refuse("`target` has no `selector`: it names no peer", path)
        return
    peer_name = peer.get("app.kubernetes.io/component") or next(iter(peer.values()), None)
    if peer_name:
        statement.add("peer", ast.Str(str(peer_name)), path + ("selector", "labelSelectors"))
        statement.entries.extend(_labels_block("peer_selector", peer))
        statement.sources.setdefault("peer_selector", path + ("selector", "labelSelectors"))


# ---- StressChaos ---------------------------------------------------------------------------------------------

_STRESSOR_FIELDS = {
    "cpu": {"workers": ("workers", _c_int), "load": ("load", _c_percent), "options": ("options", _c_str_list)},
    "memory": {"workers": ("workers", _c_int), "size": ("size", _c_size), "oomScoreAdj": ("oom_score_adj", _c_int),
               "options": ("options", _c_str_list)},
}


def _stressors(statement: Statement, key: str, value, path: tuple) -> None:
    if not isinstance(value, dict) or not value:
        statement.refuse(f"`stressors` is {_shape(value)}, not a mapping of stressors (`cpu`, `memory`): the "
                         "experiment would stress nothing", path)
        return
    for stressor, fields in value.items():
        if stressor not in _STRESSOR_FIELDS:
            statement.refuse(f"stressor `{stressor}` is not carried: the language's stress_chaos has `cpu` and "
                             "`memory` stressors", path + (stressor,))
            continue
        _nested(statement, f"stressors.{stressor}", fields, path + (stressor,), _STRESSOR_FIELDS[stressor],
                block=stressor)


# ---- HTTPChaos -----------------------------------------------------------------------------------------------

_HTTP_ACTIONS = ("abort", "delay", "replace", "patch")


def _http_action(statement: Statement, body: dict, base: tuple) -> str | None:
    """An HTTP experiment's action is the field it carries: `abort: true`, `delay`, `replace` or `patch`. The
    language's http_chaos takes one of them; none would act on nothing."""
    present = [k for k in _HTTP_ACTIONS if k in body and not (k == "abort" and body[k] is False)]
    if not present:
        statement.refuse("the HTTPChaos has none of `abort: true`, `delay`, `replace` and `patch`: it would act on "
                         "nothing", base)
        return None
    if len(present) > 1:
        statement.refuse(f"the HTTPChaos combines {', '.join(f'`{k}`' for k in present)}; the language's http_chaos "
                         "takes one action (split it into one fault per action)", base + (present[1],))
        return None
    statement.add("action", b.symbol(present[0]), base + (present[0],))
    return present[0]


def _http_field(statement: Statement, key: str, value, path: tuple) -> None:
    if key == "abort":
        try:
            _c_bool(value)
        except _Cannot as reason:
            statement.refuse(f"`abort` is not carried: {reason}", path)
        return  # the action, said as `action = abort`
    if key in ("request_headers", "response_headers"):
        _string_pairs(statement, key, value, path, key, block=key)
    elif key == "replace":
        _http_replace(statement, value, path)
    else:
        _http_patch(statement, value, path)


def _string_pairs(statement: Statement, what: str, value, path: tuple, key: str, block: str | None = None,
                  entries: list | None = None) -> None:
    """A mapping of strings (header name -> value) as `key { "name" = "value" ... }`."""
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        statement.refuse(f"`{what}` is not carried: {_shape(value)} is not a mapping of strings", path)
        return
    pairs = [b.attr(str(k), v) for k, v in value.items()]
    if entries is not None:
        entries.append(b.block(key, pairs))
    else:
        statement.add_block(block or key, pairs, path)


def _http_replace(statement: Statement, value, path: tuple) -> None:
    if not isinstance(value, dict):
        statement.refuse(f"`replace` is {_shape(value)}, not a mapping", path)
        return
    entries, inner = [], {}
    for key, field_value in value.items():
        at = path + (key,)
        if key == "body":
            try:
                text = base64.b64decode(str(field_value), validate=True).decode("utf-8")
            except (binascii.Error, UnicodeDecodeError, ValueError):
                statement.refuse("`replace.body` is not carried: it is not base64 of UTF-8 text (Chaos Mesh reads "
                                 "the body as bytes, base64 in the manifest)", at)
                continue
            entries.append(b.attr("body", text))
        elif key in ("headers", "queries"):
            _string_pairs(statement, f"replace.{key}", field_value, at, key, entries=entries)
        elif key in ("code", "method", "path"):
            try:
                node = (_c_int if key == "code" else _c_str)(field_value)
            except _Cannot as reason:
                statement.refuse(f"`replace.{key}` is not carried: {reason}", at)
                continue
            entries.append(b.attr(key, node))
        else:
            statement.warn(f"`replace.{key}` is not a field of Chaos Mesh's replace; it is left out", at)
            continue
        inner[key] = at
    statement.add_block("replace", entries, path, inner)


def _http_patch(statement: Statement, value, path: tuple) -> None:
    if not isinstance(value, dict):
        statement.refuse(f"`patch` is {_shape(value)}, not a mapping", path)
        return
    entries, inner = [], {}
    for key, field_value in value.items():
        at = path + (key,)
        if key == "body":
            body = _mapping(field_value)
            if body.get("type") != "JSON" or not isinstance(body.get("value"), str):
                statement.refuse("`patch.body` is not carried: Chaos Mesh patches a body with `type: JSON` and a "
                                 "`value` (a JSON merge patch)", at)
                continue
            entries.append(b.attr("body", body["value"]))
        elif key in ("headers", "queries"):
            pairs = field_value if isinstance(field_value, list) else None
            if pairs is None or not all(isinstance(p, list) and len(p) == 2 and all(isinstance(x, str) for x in p)
                                        for p in pairs):
                statement.refuse(f"`patch.{key}` is not carried: it is not a list of [name, value] pairs", at)
                continue
            names = [p[0] for p in pairs]
            if len(set(names)) != len(names):
                statement.refuse(f"`patch.{key}` is not carried: it adds `{next(n for n in names if names.count(n) > 1)}`"
                                 " twice, and the language's patch adds each name once", at)
                continue
            entries.append(b.block(key, [b.attr(k, v) for k, v in pairs]))
        else:
            statement.warn(f"`patch.{key}` is not a field of Chaos Mesh's patch; it is left out", at)
            continue
        inner[key] = at
    statement.add_block("patch", entries, path, inner)


# ---- IOChaos and TimeChaos -----------------------------------------------------------------------------------

_IO_BLOCKS = {
    "attr": {**{k: (k, _c_int) for k in ("perm", "size", "uid", "gid", "nlink", "blocks", "ino")},
             "kind": ("kind", _c_name), "atime": "the language's attr_override leaves the file's times as they are",
             "mtime": "the language's attr_override leaves the file's times as they are",
             "ctime": "the language's attr_override leaves the file's times as they are",
             "rdev": "the language's attr_override leaves the device number as it is"},
    "mistake": {"filling": ("filling", _c_symbol), "maxOccurrences": ("max_occurrences", _c_int),
                "maxLength": ("max_length", _c_int)},
}


def _io_block(statement: Statement, key: str, value, path: tuple) -> None:
    _nested(statement, key, value, path, _IO_BLOCKS[key], block=key)


def _time_offset(statement: Statement, key: str, value, path: tuple) -> None:
    """`timeOffset: -5m` is `offset = 5m` with `backwards = true`."""
    text = str(value).strip() if isinstance(value, str) else None
    backwards = bool(text) and text.startswith("-")
    try:
        node = _c_duration(text.lstrip("+-") if text else value)
    except _Cannot as reason:
        statement.refuse(f"`timeOffset` is not carried: {reason}", path)
        return
    statement.add("offset", node, path)
    if backwards:
        statement.add("backwards", b.literal(True), path)


# ---- waiters -------------------------------------------------------------------------------------------------


def waiter_statement(when: str, waiter_id: str, args, namespace: str | None = None) -> Statement | Problem:
    kinds = [k for k, v in WAITERS.items() if v.itbench_id == waiter_id]
    if not kinds:
        return Problem(f"no waiter has ITBench id `{waiter_id}`", None)
    kind = kinds[0]
    args = args if isinstance(args, dict) else {}
    target = args.get("kubernetesObject")
    if isinstance(target, dict) and isinstance(target.get("metadata"), dict):
        ref = b.ref(ref_kind(str(target.get("kind"))) or "deployment", str(target["metadata"].get("name")))
    elif namespace is not None and "namespace" in WAITERS[kind].targets:
        ref = b.ref("namespace", namespace)  # a waiter on no object (a pause) waits in the application's namespace
    else:
        return Problem("a waiter with no `kubernetesObject`")
    statement = Statement(kind, ref, when=when)
    for key, value in args.items():
        if key == "kubernetesObject":
            continue
        node = _seconds(value) if key == "seconds" else argument_value(value)
        if node is None:
            statement.warn(f"argument `{key}` is not carried", (key,))
            continue
        statement.add("duration" if key == "seconds" else snake(key), node, (key,))
    return statement


def _seconds(value) -> ast.Value | None:
    """A waiter's `seconds` as its `duration`: a whole number of seconds, or a duration as written."""
    if isinstance(value, int) and not isinstance(value, bool):
        return ast.Quantity(f"{int(value)}s")
    try:
        return b.number(str(value)) if isinstance(value, (str, float)) else None
    except ValueError:
        return None
