"""Chaos Mesh faults: one fault kind per Chaos Mesh kind, one-shot or persistent.

A fault use creates the Chaos Mesh experiment itself (one-shot: it runs once, for its
`duration` or until it is deleted), or, with `every = 1m` or `schedule = "<cron>"`, a Schedule
that creates the experiment again and again, as ITBench's `scheduled-chaos-mesh-experiment`
does (then the use carries ITBench's id and its `kubernetesObject` + `scheduleSpec` arguments).
Every field is typed and checked at compile time against the Chaos Mesh CRDs' enums and the
admission rules their descriptions state, and the selectors against the topology's pods.
"""

from __future__ import annotations

import base64
import copy
import json
import re
from decimal import Decimal

from .. import ast, ir
from ..diagnostics import did_you_mean
from ..topology import DNS1123_SUBDOMAIN
from ..units import cron_syntax_problem, format_duration, parse_go_duration, parse_memory
from ..yamlout import sorted_keys
from .base import (
    CHAOS_NAMESPACE,
    CREATABLE_KINDS,
    Arg,
    Checked,
    Effect,
    FaultInput,
    FaultKind,
    application_name,
)

API = "chaos-mesh.org/v1alpha1"
SCHEDULED_ID = "scheduled-chaos-mesh-experiment"
# Chaos Mesh kind -> its field in a Schedule's spec
SCHEDULE_FIELDS = {
    "NetworkChaos": "networkChaos", "PodChaos": "podChaos", "StressChaos": "stressChaos", "HTTPChaos": "httpChaos",
    "IOChaos": "ioChaos", "DNSChaos": "dnsChaos", "TimeChaos": "timeChaos", "JVMChaos": "jvmChaos",
}
for _kind in SCHEDULE_FIELDS:
    CREATABLE_KINDS[_kind.lower()] = (API, _kind)

CHAOS_MODES = ("all", "one", "fixed", "fixed-percent", "random-max-percent")
POD_PHASES = ("Pending", "Running", "Succeeded", "Failed", "Unknown")
_BAD = object()  # an argument that was given and reported as invalid

# ---- reading helpers --------------------------------------------------------------------------------


def _enum(f: FaultInput, key: str, allowed, message: str, label: str = "", fallback: str | None = None,
          required: bool = False, default=None, suggest=None):
    """A name from a closed set; `message` formats the error with `{value}`. None when absent, _BAD when invalid."""
    value = f.body.attr(key, "symbol", required=required, default=default)
    if value is None or value in allowed:
        return value
    if value.replace("_", "-") in allowed:  # `pod_kill` is how a name writes Chaos Mesh's `pod-kill`
        return value.replace("_", "-")
    hint = did_you_mean(value.replace("_", "-"), suggest or allowed)
    f.error("E2010", message.format(value=value), f.body.attr_span(key), label,
            help=f"did you mean `{_written(hint)}`?" if hint else (fallback if fallback is not None else
                                                                   "one of: " + ", ".join(map(_written, allowed))))
    return _BAD


def _written(value: str) -> str:
    """A Chaos Mesh enum value as a name of the language writes it."""
    return value.replace("-", "_")


def _present(f: FaultInput, key: str) -> bool:
    return f.body.has(key)


def _entry_value(f: FaultInput, key: str) -> ast.Value | None:
    for entry in f.body.entries:
        if entry.key == key and isinstance(entry, ast.Attr):
            return entry.value
    return None


def _foreign(f: FaultInput, action, table: dict[str, tuple[str, ...]], what: str) -> None:
    """Fields of other actions: reported (the action is known) or silently accepted (it is not)."""
    own = set(table.get(action, ())) if action not in (None, _BAD) else set()
    for other, keys in table.items():
        for key in keys:
            if key in own or not _present(f, key):
                continue
            f.body.labelled(key)  # read: not an unknown field
            if action in (None, _BAD):
                continue
            users = [f"`{_written(a)}`" for a, k in table.items() if key in k]
            f.error("E2006", f"`{key}` belongs to the {' and '.join(users)} {what}{'s' if len(users) > 1 else ''}, "
                    f"not to `{_written(action)}`",
                    f.body.attr_span(key), "not for this action",
                    help=f"fields of `{_written(action)}`: " + (", ".join(f"`{k}`" for k in table[action]) or "none"))


def _ms(seconds) -> str:
    """NetworkChaos writes its latency and jitter in milliseconds, whatever their size (ITBench's `1000ms`)."""
    return f"{int(Decimal(str(seconds)) * 1000)}ms"


# ---- the parts every Chaos Mesh kind shares -----------------------------------------------------------


def _matching(f: FaultInput, namespace: str, labels: dict) -> list[ir.Workload]:
    return [w for w in f.build.workloads
            if w.namespace == namespace and all(w.labels.get(k) == v for k, v in labels.items())]


def _selector_for(f: FaultInput, workload: ir.Workload, override_key: str, phases=None, span=None) -> dict | None:
    override = f.body.block(override_key)
    labels = override.as_string_map() if override is not None else dict(workload.selector)
    matched = _matching(f, workload.namespace, labels)
    if not matched:
        f.error("E2026", f"the selector {labels} matches no pod of the topology", f.body.attr_span(override_key),
                "selects nothing", help="use labels of the target workload's pod template")
        return None
    if all(w.replicas == 0 for w in matched):
        names = ", ".join(w.name for w in matched)
        f.error("E2026", f"the selector {labels} matches only workloads scaled to zero ({names}): no pod to act on",
                f.body.attr_span(override_key) if override is not None else span or f.fault.target.span,
                "no running pod",
                help="give the workload replicas in the topology, or target another one")
        return None
    selector = {"labelSelectors": labels, "namespaces": [workload.namespace]}
    if phases:
        selector["podPhaseSelectors"] = phases
    return selector


def _pod_phases(f: FaultInput):
    phases = f.body.attr("pod_phases", "str_list")
    if phases is None:
        return None
    for phase in phases:
        if phase not in POD_PHASES:
            hint = did_you_mean(phase, POD_PHASES)
            f.error("E2010", f"`{phase}` is not a pod phase", f.body.attr_span("pod_phases"), "unknown phase",
                    help=f"did you mean `{hint}`?" if hint else "phases: " + ", ".join(POD_PHASES))
            return _BAD
    return phases


def _mode(f: FaultInput, workload: ir.Workload):
    """(mode, value): the selection mode, `all` unless the scenario says otherwise, and its figure."""
    mode = _enum(f, "mode", CHAOS_MODES, "`{value}` is not a Chaos Mesh selection mode",
                 fallback="modes: " + ", ".join(CHAOS_MODES), default="all")
    if mode is _BAD:
        f.body.labelled("value")
        return _BAD, None
    if mode in ("all", "one"):
        if _present(f, "value"):
            f.body.labelled("value")
            f.error("E2010", f"`value` applies to the fixed, fixed_percent and random_max_percent modes, not `{mode}`",
                    f.body.attr_span("value"), "no figure for this mode", help="remove `value`, or change `mode`")
            return _BAD, None
        return mode, None
    if not _present(f, "value"):
        what = "the number of pods to act on" if mode == "fixed" else "the percentage of pods to act on"
        example = "value = 1" if mode == "fixed" else "value = 50%"
        # chaos-mesh api/v1alpha1/common_webhook.go, PodSelector.Validate (608b61e7): fixed and percent modes parse
        # `value`
        f.error("E2007", f"mode `{_written(mode)}` needs `value`: {what}", f.body.attr_span("mode"), "`value` missing",
                help=f"add `{example}`")
        return _BAD, None
    if mode == "fixed":
        count = f.body.attr("value", "int", required=True)
        if count is None:
            return _BAD, None
        if count < 1:
            # chaos-mesh api/v1alpha1/common_webhook.go, PodSelector.Validate (608b61e7): fixed takes a value > 0
            f.error("E2010", "mode `fixed` selects at least 1 pod", f.body.attr_span("value"), "not a pod count",
                    help="`value = 1` acts on one pod")
            return _BAD, None
        return mode, str(count)
    percent = f.body.attr("value", "percent", required=True)
    if percent is None:
        return _BAD, None
    if percent == 0:
        # chaos-mesh api/v1alpha1/common_webhook.go, PodSelector.Validate (608b61e7): a percentage in (0, 100]
        f.error("E2010", f"mode `{mode}` with `value = 0%` selects no pod: the fault would change nothing",
                f.body.attr_span("value"), "selects nothing", help="use a percentage from 1% to 100%")
        return _BAD, None
    return mode, str(int(percent)) if percent == int(percent) else str(percent)


def _containers(f: FaultInput, workload: ir.Workload, required: bool = False):
    names = f.body.attr("containers", "str_list", required=required)
    if names is None:
        return None
    known = [c.name for c in workload.containers]
    if not names:
        f.error("E2010", "`containers` is empty", f.body.attr_span("containers"), "no container",
                help="name at least one container: " + ", ".join(known))
        return _BAD
    for name in names:
        if name not in known:
            hint = did_you_mean(name, known)
            f.error("E2020", f"{workload.kind.lower()} `{workload.name}` has no container `{name}`",
                    f.body.attr_span("containers"), "no such container",
                    help=f"did you mean `{hint}`?" if hint else "its containers: " + ", ".join(known))
            return _BAD
    return names


def _duration(f: FaultInput, rule: str = "optional", action=None):
    """The experiment's `duration`: optional (absent: until the experiment is deleted), or refused ("none": the
    action is instantaneous). Chaos Mesh requires none (api/v1alpha1/common_webhook.go, Duration.Validate, 608b61e7:
    empty is allowed; a value is a Go duration)."""
    if rule == "none":
        if _present(f, "duration"):
            f.body.labelled("duration")
            f.error("E2010", f"`{_written(action)}` is instantaneous and takes no `duration`",
                    f.body.attr_span("duration"), "no duration", help="remove `duration`; `every` repeats the action")
            return _BAD
        return None
    value = f.body.attr("duration", "duration")
    if value is not None and value <= 0:
        f.error("E2010", "`duration` must be longer than 0s", f.body.attr_span("duration"), "empty duration")
        return _BAD
    return value


def _timing(f: FaultInput, duration):
    """How the experiment repeats: ("every", "60s"), ("cron", "..."), None (one-shot) or _BAD."""
    body = f.body
    every = body.attr("every", "duration")
    cron = body.attr("schedule", "str")
    if every is not None and cron is not None:
        f.error("E2010", "give `every` or `schedule`, not both", body.attr_span("schedule"), "second timing",
                help="`every = 1m` is `schedule = \"@every 1m\"`")
        return _BAD
    span_key = "every"
    if cron is not None:
        span_key = "schedule"
        match = re.fullmatch(r"@every\s+(\S+)", cron.strip())
        if match:
            every = parse_go_duration(match.group(1))
            if every is None:
                f.error("E2010", f"`{match.group(1)}` is not a Go duration", body.attr_span("schedule"),
                        "invalid interval", help="write e.g. `@every 1m` or `@every 1h30m` (units ns, us, ms, s, m, h)")
                return _BAD
        else:
            problem = cron_syntax_problem(cron)
            if problem:
                # chaos-mesh api/v1alpha1/schedule_webhook.go, ScheduleSpec.validateSchedule (608b61e7)
                f.error("E2010", f"`{cron}` is not a cron schedule: {problem}", body.attr_span("schedule"),
                        "invalid schedule", help='e.g. "*/5 * * * *" (every 5 minutes) or "@every 1m"')
                return _BAD
            return ("cron", cron.strip())
    if every is None:
        return None
    if every < 1:  # robfig/cron v3.0.1 constantdelay.go, Every: an interval below 1s is rounded up to 1s
        f.error("E2010", "a Schedule fires at most once a second (Chaos Mesh rounds a shorter interval up to 1s): "
                "write at least 1s", body.attr_span(span_key), "too short")
        return _BAD
    if every != int(every):  # robfig/cron v3.0.1 constantdelay.go, Every: fields below a second are truncated
        f.error("E2010", f"a Schedule's interval is whole seconds (Chaos Mesh drops the fraction of "
                f"`{format_duration(every)}`)", body.attr_span(span_key), "fraction of a second",
                help=f"write `{format_duration(int(every))}` or `{format_duration(int(every) + 1)}`")
        return _BAD
    if duration not in (None, _BAD) and every <= duration:
        # the language's rule: the Schedule is written with concurrencyPolicy Forbid, and Chaos Mesh then skips
        # every firing while an experiment still runs (controllers/schedule/cron/controller.go, Reconcile)
        f.error("E2010", "`every` must be longer than `duration`: the Schedule skips each firing that falls while "
                "the previous experiment still runs, so the fault would not repeat at this interval",
                body.attr_span(span_key))
        return _BAD
    return ("every", format_duration(every))


def _finish(f: FaultInput, chaos_type: str, default_name: str, spec: dict, timing) -> Checked | None:
    """The checked use: the experiment, alone (one-shot) or in a Schedule, its name, refs and access."""
    # `in_target_namespace = true`: the experiment lives beside its target (Chaos Mesh's namespace otherwise)
    home = f.target.namespace if f.body.attr("in_target_namespace", "bool") and f.target.namespace else CHAOS_NAMESPACE
    # the default: named as the application names its objects, neither the action (`cart-pod-kill`) nor the target
    # (`cart-...`) nor a hash (base.application_name); a variant that moves the fault keeps its name
    # (variants.pin_generated_names)
    name = f.body.attr("name", "str") or application_name(
        f, API, "Schedule" if timing is not None else chaos_type, home, chaos_type, default_name, f.obj.name,
        avoid=json.dumps(spec))
    plural = chaos_type.lower()
    what = "schedule" if timing is not None else plural
    # a custom resource's name is a DNS-1123 subdomain (kubernetes staging/src/k8s.io/apiextensions-apiserver
    # pkg/registry/customresource/validator.go, NameIsDNSSubdomain; v1.33); a Schedule's name is also the label
    # value `managed-by` of each experiment it spawns (chaos-mesh controllers/schedule/cron/controller.go), so 63
    limit = 63 if timing is not None else 253
    if len(name) > limit or not DNS1123_SUBDOMAIN.match(name):
        f.error("E2014", f"{what} name `{name}` is not a valid Kubernetes name", f.body.attr_span("name"),
                help=f"lower-case letters, digits, `-` and `.`, at most {limit} characters"
                + (" (it labels the experiments the Schedule creates)" if timing is not None else ""))
        return None
    spec = sorted_keys(spec)
    placed = {"namespace": home} if home != CHAOS_NAMESPACE else {}  # left out by default: same bytes as before
    experiment = ir.ObjectRef(API, chaos_type, home, name)
    if timing is None:
        return Checked(
            {"experiment": name, "chaos_type": chaos_type, "spec": spec, **placed},
            {"kubernetesObject": experiment.itbench(), "spec": spec},
            created=[experiment], root=experiment, agent_namespaces=[home], agent_resources=[plural],
            itbench_id="",
        )
    schedule = ir.ObjectRef(API, "Schedule", home, name)
    how, when = timing
    return Checked(
        {"schedule": name, how: when, "chaos_type": chaos_type, "spec": spec, **placed},
        {"kubernetesObject": schedule.itbench(), "scheduleSpec": {SCHEDULE_FIELDS[chaos_type]: spec, "type": chaos_type}},
        created=[schedule, experiment], root=schedule, agent_namespaces=[home],
        agent_resources=["schedules", plural],
    )


def _common(f: FaultInput, workload: ir.Workload, duration_rule: str = "optional", action=None,
            selector_key: str = "selector"):
    """mode, value, selector (with pod phases), duration and timing, in one go; None when any is broken."""
    f.body.attr("name", "str")  # read by _finish; read here too, so that an error elsewhere does not call it unknown
    f.body.attr("in_target_namespace", "bool")
    mode, value = _mode(f, workload)
    phases = _pod_phases(f)
    duration = _duration(f, duration_rule, action)
    timing = _timing(f, duration)
    selector = _selector_for(f, workload, selector_key, phases if phases is not _BAD else None)
    if _BAD in (mode, phases, duration, timing) or selector is None:
        return None
    spec = {"mode": mode, "selector": selector}
    if value is not None:
        spec["value"] = value
    if duration is not None:
        spec["duration"] = format_duration(duration)
    return spec, timing


# ---- manifests ----------------------------------------------------------------------------------------


def _manifest(injection: ir.Injection) -> dict:
    args = injection.args
    if "experiment" in args:
        return {"apiVersion": API, "kind": args["chaos_type"],
                "metadata": {"name": args["experiment"], "namespace": args.get("namespace", CHAOS_NAMESPACE)},
                "spec": copy.deepcopy(args["spec"])}
    return {
        "apiVersion": API,
        "kind": "Schedule",
        "metadata": {"name": args["schedule"], "namespace": args.get("namespace", CHAOS_NAMESPACE)},
        "spec": {
            "schedule": args["cron"] if "cron" in args else f"@every {args['every']}",
            "type": args["chaos_type"],
            "historyLimit": 1,
            "concurrencyPolicy": "Forbid",
            SCHEDULE_FIELDS[args["chaos_type"]]: copy.deepcopy(args["spec"]),
        },
    }


def _inject(injection, topology):
    return Effect([_manifest(injection)], [])


def _revert(injection, topology):
    manifest = _manifest(injection)
    return Effect([], [ir.ObjectRef(API, manifest["kind"], manifest["metadata"]["namespace"], manifest["metadata"]["name"])])


def _oneshot_solutions(itbench_args: dict) -> tuple[dict, ...]:
    """A one-shot experiment's solution (the Schedule form uses ITBench's templates)."""
    if "scheduleSpec" in itbench_args:
        return ()
    return ({"steps": [
        {"command": "kubectl -n {{ args.kubernetesObject.metadata.namespace }} get "
                    "{{ args.kubernetesObject.kind | lower }}",
         "text": "List the Chaos Mesh experiments acting on the application."},
        {"command": "kubectl -n {{ args.kubernetesObject.metadata.namespace }} delete "
                    "{{ args.kubernetesObject.kind | lower }} {{ args.kubernetesObject.metadata.name }}",
         "text": "Delete the experiment; Chaos Mesh undoes its injection when the experiment is removed."},
    ]},)


_COMMON_ARGS = (
    Arg("every", "duration", help="repeat through a Chaos Mesh Schedule at this interval (ITBench's "
        "scheduled-chaos-mesh-experiment); longer than `duration`. Without `every` or `schedule` the experiment "
        "is created once"),
    Arg("schedule", "string", help='a cron schedule ("*/5 * * * *", "@hourly", "@every 1m") instead of `every`'),
    Arg("duration", "duration", help="how long each experiment lasts (absent: until it is deleted)"),
    Arg("mode", "name", default="all", help="which pods: all, one, fixed, fixed_percent, random_max_percent"),
    Arg("value", "integer or percentage", help="the figure of the fixed (`2`) and percent (`50%`) modes"),
    Arg("selector", "labels", default="the workload's selector", help="pod labels of the target"),
    Arg("pod_phases", "list of strings", help="only pods in these phases (Pending, Running, Succeeded, Failed, "
        "Unknown)"),
    Arg("name", "string", default="`<component>-<word>` (`currency-main`)",
        help="the name of the Schedule or experiment; the default says nothing of the fault to whoever lists the "
             "objects (write a name that does not either: `itbench check` reports E4010)"),
)
_COMMON_PRECONDITIONS = (
    "The selectors match at least one pod of the topology, of a workload with replicas.",
    "Enumerated fields (action, mode, direction ...) take one of Chaos Mesh's values.",
    "`value` is given exactly for the fixed (a pod count of at least 1) and percent modes (1% to 100%).",
    "`every` is longer than `duration`; `schedule` is a valid cron expression or `@every <duration>`.",
    "The Schedule's or experiment's name is a DNS-1123 label.",
)


# what each kind of experiment shows (base.SYMPTOMS): killed pods restart and go unready; the others act on
# the requests a workload serves, which only an alert or a probe measures
CHAOS_SYMPTOMS = {"PodChaos": ("readiness", "restarts"), "StressChaos": ("latency",), "IOChaos": ("latency", "requests"),
                  "NetworkChaos": ("requests", "latency"), "HTTPChaos": ("requests", "latency"),
                  "DNSChaos": ("requests",), "TimeChaos": ("requests",), "JVMChaos": ("requests", "latency")}


def _kind(name, chaos_type, summary, check, args, preconditions, readiness=""):
    return FaultKind(
        name, SCHEDULED_ID, f"chaos-mesh.schedule:{chaos_type}", ("deployment", "statefulset", "static_pod"), summary, check, _inject, _revert,
        args=args + _COMMON_ARGS, preconditions=preconditions + _COMMON_PRECONDITIONS,
        creates=f"a Chaos Mesh {chaos_type} in namespace chaos-mesh (one-shot: no ITBench id, solved by deleting "
        f"the experiment), or with `every`/`schedule` a Schedule that creates it repeatedly (ITBench's "
        f"{SCHEDULED_ID}, solved as above)",
        solutions_for=_oneshot_solutions, readiness=readiness,
        symptoms=CHAOS_SYMPTOMS.get(chaos_type, ("requests",)),
    )


# ---- NetworkChaos -------------------------------------------------------------------------------------

NETWORK_ACTIONS = ("delay", "loss", "duplicate", "corrupt", "partition", "bandwidth")
NETWORK_FIELDS = {
    "delay": ("latency", "jitter", "correlation"), "loss": ("loss", "correlation"),
    "duplicate": ("duplicate", "correlation"), "corrupt": ("corrupt", "correlation"), "partition": (),
    "bandwidth": ("rate", "limit", "buffer"),
}
# chaos-mesh api/v1alpha1/networkchaos_webhook.go, Rate.Validate / isValidRateUnit (608b61e7): lower-cased and
# trimmed, a unit suffix and a whole number (strconv.ParseUint) before it, spaces between allowed
_RATE = re.compile(r"\s*\d+\s*(bit|kbit|mbit|gbit|tbit|bps|kbps|mbps|gbps|tbps)\s*\Z", re.I)


def _check_network_chaos(f: FaultInput) -> Checked | None:
    workload: ir.Workload = f.obj
    body = f.body
    action = _enum(f, "action", NETWORK_ACTIONS, "`{value}` is not a NetworkChaos action", "unknown action",
                   fallback="actions: " + ", ".join(NETWORK_ACTIONS), required=True)
    direction = _enum(f, "direction", ("to", "from", "both"), "`{value}` is not a direction (to, from, both)",
                      fallback="")
    common = _common(f, workload)
    _foreign(f, action, NETWORK_FIELDS, "action")
    peer_name = body.attr("peer", "str")
    spec: dict = {}
    broken = False
    if action == "loss":
        loss = body.attr("loss", "percent", required=True)
        correlation = body.attr("correlation", "percent", default=0)
        spec["loss"] = {"correlation": str(correlation), "loss": str(loss)}
        broken = loss is None
    elif action == "delay":
        latency = body.attr("latency", "duration", required=True)
        jitter = body.attr("jitter", "duration")
        correlation = body.attr("correlation", "percent")
        if latency is not None and latency <= 0:
            f.error("E2010", "`latency` must be longer than 0ms: the fault would change nothing",
                    body.attr_span("latency"), "no delay")
            latency = None
        broken = latency is None
        if latency is not None:
            spec["delay"] = {"latency": _ms(latency)}
            if jitter is not None:
                spec["delay"]["jitter"] = _ms(jitter)
            if correlation is not None:
                spec["delay"]["correlation"] = str(correlation)
    elif action in ("duplicate", "corrupt"):
        amount = body.attr(action, "percent", required=True)
        correlation = body.attr("correlation", "percent", default=0)
        spec[action] = {action: str(amount), "correlation": str(correlation)}
        broken = amount is None
    elif action == "bandwidth":
        rate = body.attr("rate", "str", required=True)
        limit = body.attr("limit", "nonneg_int", default=20971520)
        buffer = body.attr("buffer", "nonneg_int", default=10000)
        if rate is not None and not _RATE.match(rate):
            f.error("E2010", f"`{rate}` is not a tc rate", body.attr_span("rate"), "invalid rate",
                    help='a whole number and a unit: bit, kbit, mbit, gbit, tbit, or bytes per second bps, kbps, '
                    'mbps, gbps, tbps (e.g. "1mbps")')
            rate = None
        for key, number in (("limit", limit), ("buffer", buffer)):
            if number is not None and number < 1:
                # the CRD's schema: bandwidth.limit and .buffer have minimum 1 (helm/chaos-mesh/crds, networkchaos)
                # (608b61e7)
                f.error("E2010", f"`{key}` must be at least 1 byte", body.attr_span(key), "too small")
                broken = True
        broken = broken or rate is None
        spec["bandwidth"] = {"rate": rate, "limit": limit, "buffer": buffer}
    if action in (None, _BAD) or common is None or direction is _BAD or broken:
        return None
    chaos, timing = common
    chaos.update({"action": action, **spec})
    if direction is not None:
        chaos["direction"] = direction
    if peer_name is not None:
        peer = f.build.workload(peer_name, workload.namespace)
        if peer is None:
            hint = did_you_mean(peer_name, [w.name for w in f.build.workloads])
            f.error("E2003", f"`peer` names `{peer_name}`, which is not a workload in `{workload.namespace}`",
                    body.attr_span("peer"), "unknown workload", help=f"did you mean `{hint}`?" if hint else "")
            return None
        peer_selector = _selector_for(f, peer, "peer_selector", span=body.attr_span("peer"))
        if peer_selector is None:
            return None
        chaos["target"] = {"mode": "all", "selector": peer_selector}
    elif action == "partition":
        # the language's rule: Chaos Mesh accepts a partition without a target (chaos-mesh
        # api/v1alpha1/networkchaos_webhook.go, NetworkChaosSpec.Validate returns early for partition (608b61e7))
        f.error("E2007", "a partition needs a `peer` workload to cut the target from", f.fault.span)
        return None
    return _finish(f, "NetworkChaos", f"{workload.name}-network-{action}", chaos, timing)


# ---- PodChaos -----------------------------------------------------------------------------------------

POD_ACTIONS = ("pod-kill", "pod-failure", "container-kill")
POD_FIELDS = {"pod-kill": ("grace_period",), "pod-failure": (), "container-kill": ("containers",)}


def _check_pod_chaos(f: FaultInput) -> Checked | None:
    workload: ir.Workload = f.obj
    action = _enum(f, "action", POD_ACTIONS, "`{value}` is not a PodChaos action", "unknown action",
                   fallback="actions: " + ", ".join(map(_written, POD_ACTIONS)), required=True)
    # `pod-failure` without a duration lasts until the experiment is deleted: Chaos Mesh 2.x's webhook
    # (chaos-mesh/chaos-mesh api/v1alpha1/podchaos_webhook.go, PodChaosSpec.Validate, 608b61e7) checks only
    # container-kill's containerNames; the duration rule was 1.x's. pod-kill and container-kill are one-shot
    # actions (api/v1alpha1/zz_generated.chaosmesh.go, PodChaos.IsOneShot): a duration would do nothing, and the
    # language's own rule refuses it.
    rule = {"pod-kill": "none", "container-kill": "none"}.get(action, "optional")
    common = _common(f, workload, rule, action)
    _foreign(f, action, POD_FIELDS, "action")
    spec: dict = {}
    broken = False
    if action == "pod-kill":
        grace = f.body.attr("grace_period", "duration")
        if grace is not None:
            if grace != int(grace):
                f.error("E2010", "`grace_period` is a whole number of seconds", f.body.attr_span("grace_period"),
                        "fraction of a second")
                broken = True
            else:
                spec["gracePeriod"] = int(grace)
    elif action == "container-kill":
        if not _present(f, "containers"):  # chaos-mesh api/v1alpha1/podchaos_webhook.go, PodChaosSpec.Validate
            first = workload.containers[0].name if workload.containers else "name"
            f.error("E2007", "`container_kill` needs `containers`: the containers to kill", f.fault.span,
                    "`containers` missing", help=f'add `containers = ["{first}"]`')
        names = _containers(f, workload)
        broken = names in (None, _BAD)
        if not broken:
            spec["containerNames"] = names
    if action in (None, _BAD) or common is None or broken:
        return None
    chaos, timing = common
    chaos.update({"action": action, **spec})
    return _finish(f, "PodChaos", f"{workload.name}-{action}", chaos, timing)


# ---- StressChaos --------------------------------------------------------------------------------------

# chaos-mesh api/v1alpha1/stresschaos_types.go, Stressor.Workers ("Maximum 8192 workers can run by stress-ng");
# Stressor.Validate (stresschaos_webhook.go) refuses workers <= 0 (608b61e7)
MAX_WORKERS = 8192
_CHAOS_MEMORY_UNITS = {"": "B", "k": "KB", "M": "MB", "G": "GB", "T": "TB", "Ki": "KiB", "Mi": "MiB", "Gi": "GiB",
                       "Ti": "TiB"}


def _stressor(f: FaultInput, key: str) -> dict | None | object:
    block = f.body.block(key)
    if block is None:
        return None
    workers = block.attr("workers", "int", required=True)
    out: dict = {}
    broken = workers is None
    if workers is not None:
        if not 1 <= workers <= MAX_WORKERS:
            f.error("E2010", f"`workers` of the {key} stressor must be from 1 to {MAX_WORKERS}, not {workers}",
                    block.attr_span("workers"), "no worker" if workers < 1 else "too many",
                    help="stress-ng runs from 1 to 8192 workers")
            broken = True
        out["workers"] = workers
    if key == "cpu":
        load = block.attr("load", "percent")
        if load is not None:
            if load != int(load):
                f.error("E2010", "`load` is a whole percentage", block.attr_span("load"), "fraction")
                broken = True
            elif load == 0:
                f.error("E2010", "`load = 0%` keeps the CPU workers asleep: the fault would change nothing",
                        block.attr_span("load"), "no load", help="use a load from 1% to 100%")
                broken = True
            out["load"] = int(load)
    else:
        size = _memory_size(f, block)
        broken = broken or size is _BAD
        if size not in (None, _BAD):
            out["size"] = size
        oom = block.attr("oom_score_adj", "int")
        if oom is not None:
            if not -1000 <= oom <= 1000:
                # chaos-mesh api/v1alpha1/stresschaos_types.go, MemoryStressor.OOMScoreAdj: kubebuilder Minimum -1000,
                # Maximum 1000 (608b61e7)
                f.error("E2010", "`oom_score_adj` is from -1000 to 1000", block.attr_span("oom_score_adj"),
                        "out of range")
                broken = True
            out["oomScoreAdj"] = oom
    options = block.attr("options", "str_list")
    if options is not None:
        out["options"] = options
    block.finish()
    return _BAD if broken else out


def _memory_size(f: FaultInput, block) -> str | None | object:
    value = None
    for entry in block.entries:
        if entry.key == "size" and isinstance(entry, ast.Attr):
            value = entry.value
    if value is None:
        return None
    if isinstance(value, ast.Percent):
        percent = block.attr("size", "percent")
        if percent is None:
            return _BAD
        if percent == 0:
            f.error("E2010", "`size = 0%` allocates nothing: the fault would change nothing", block.attr_span("size"),
                    "no memory")
            return _BAD
        return f"{percent}%"
    text = block.attr("size", "memory")
    if text is None:
        return _BAD
    match = re.fullmatch(r"(\d+(?:\.\d+)?)([A-Za-z]*)", text)
    if not match or match.group(2) not in _CHAOS_MEMORY_UNITS or "." in match.group(1) or parse_memory(text) == 0:
        # chaos-mesh api/v1alpha1/stresschaos_webhook.go, Bytes.Validate (608b61e7): a percentage 0-100 or a go-units
        # human size
        f.error("E2010", f"`{text}` is not a size stress-ng takes", block.attr_span("size"), "invalid size",
                help="a whole number with B, k, M, G, T, Ki, Mi, Gi or Ti (e.g. 256Mi), or a percentage of the "
                "available memory (e.g. 80%)")
        return _BAD
    return f"{match.group(1)}{_CHAOS_MEMORY_UNITS[match.group(2)]}"


def _check_stress_chaos(f: FaultInput) -> Checked | None:
    workload: ir.Workload = f.obj
    common = _common(f, workload)
    containers = _containers(f, workload)
    cpu = _stressor(f, "cpu")
    memory = _stressor(f, "memory")
    if cpu is None and memory is None:
        # chaos-mesh api/v1alpha1/stresschaos_webhook.go, StressChaosSpec.Validate / Stressors.Validate (608b61e7):
        # "missing stressors"
        f.error("E2007", "a stress fault needs a `cpu { ... }` or a `memory { ... }` stressor", f.fault.span,
                "no stressor", help="add `cpu { workers = 2  load = 80% }` or `memory { workers = 1  size = 256Mi }`")
        return None
    if common is None or _BAD in (cpu, memory, containers):
        return None
    chaos, timing = common
    stressors = {k: v for k, v in (("cpu", cpu), ("memory", memory)) if v is not None}
    chaos["stressors"] = stressors
    if containers is not None:
        chaos["containerNames"] = containers
    suffix = "-".join(stressors)
    return _finish(f, "StressChaos", f"{workload.name}-stress-{suffix}", chaos, timing)


# ---- HTTPChaos ----------------------------------------------------------------------------------------

HTTP_ACTIONS = ("abort", "delay", "replace", "patch")
HTTP_FIELDS = {"abort": (), "delay": ("delay",), "replace": ("replace",), "patch": ("patch",)}
HTTP_TARGETS = {"request": "Request", "response": "Response"}
# chaos-mesh api/v1alpha1/httpchaos_webhook.go, HTTPMethod.Validate (608b61e7): the nine methods of Go's net/http
HTTP_METHODS = ("GET", "HEAD", "POST", "PUT", "DELETE", "CONNECT", "OPTIONS", "TRACE", "PATCH")


def _http_method(f: FaultInput, body, key: str):
    method = body.attr(key, "str")
    if method is None or method in HTTP_METHODS:
        return method
    hint = did_you_mean(method, HTTP_METHODS)
    f.error("E2010", f"`{method}` is not an HTTP method", body.attr_span(key), "unknown method",
            help=f"did you mean `{hint}`?" if hint else "methods: " + ", ".join(HTTP_METHODS))
    return _BAD


_HEADER_NAME = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+\Z")


def _headers(f: FaultInput, body, key: str):
    """`key { "Name" = "value" ... }`: HTTP headers, each name an RFC 9110 token; _BAD after an error."""
    block = body.block(key)
    if block is None:
        return {}
    headers = block.as_string_map()
    bad = [e for e in block.entries if not _HEADER_NAME.match(e.key)]
    for entry in bad:
        f.error("E2010", f"`{entry.key}` is not an HTTP header name", entry.key_span, "not a header name",
                help="a header name is letters, digits and !#$%&'*+.^_`|~- (no spaces): e.g. `Content-Type`")
    return _BAD if bad else headers


def _status(f: FaultInput, body, key: str):
    code = body.attr(key, "int")
    if code is not None and not 100 <= code <= 599:
        f.error("E2010", f"`{key}` is an HTTP status code from 100 to 599, not {code}", body.attr_span(key),
                "not a status code")
        return _BAD
    return code


def _only_for(f: FaultInput, body, key: str, target, allowed: str) -> bool:
    """A field that Chaos Mesh applies only to requests or only to responses."""
    if body.has(key) and target not in (None, _BAD) and target != allowed:
        # chaos-mesh api/v1alpha1/podhttpchaos_types.go, PodHttpChaosSelector (608b61e7): Code and ResponseHeaders
        # select "in response"
        f.error("E2010", f"`{key}` applies to the {allowed.lower()}, and the fault's target is the {target.lower()}",
                body.attr_span(key), f"{allowed.lower()} only",
                help=f"use `target = {allowed.lower()}`, or remove `{key}`")
        return False
    return True


def _check_http_chaos(f: FaultInput) -> Checked | None:
    workload: ir.Workload = f.obj
    body = f.body
    action = _enum(f, "action", HTTP_ACTIONS, "`{value}` is not an HTTPChaos action", "unknown action",
                   fallback="actions: " + ", ".join(HTTP_ACTIONS), required=True)
    target = _enum(f, "target", tuple(HTTP_TARGETS), "`{value}` is not an HTTP target (request, response)",
                   "unknown target", fallback="", required=True)
    target = HTTP_TARGETS.get(target, target)
    common = _common(f, workload)
    _foreign(f, action, HTTP_FIELDS, "action")
    port = body.attr("port", "port", required=True)
    path = body.attr("path", "str")
    method = _http_method(f, body, "method")
    code = _status(f, body, "code")
    request_headers = _headers(f, body, "request_headers")
    response_headers = _headers(f, body, "response_headers")
    broken = _BAD in (method, code, request_headers, response_headers) or port is None
    # path, method and request headers select the request of either target; code and response headers the response
    broken |= not _only_for(f, body, "code", target, "Response")
    broken |= not _only_for(f, body, "response_headers", target, "Response")
    if path is not None and not path.startswith(("/", "*")):
        f.error("E2010", f"`{path}` is not a URI path pattern", body.attr_span("path"), "not a path",
                help='paths start with `/`; `*` matches any (e.g. "/api/*")')
        broken = True
    listening = {p.port: (c.name, p.name) for c in workload.containers for p in c.ports}
    if port is not None and port not in listening:
        ports = ", ".join(f"{p} ({n})" if n else str(p) for p, (_, n) in sorted(listening.items()))
        f.error("E2022", f"the pods of {workload.kind.lower()} `{workload.name}` listen on no port {port}",
                body.attr_span("port"), "not a container port",
                help=f"they listen on {ports}" if ports else "the workload declares no container port: declare it")
        broken = True
    spec: dict = {}
    if action == "abort":
        spec["abort"] = True
    elif action == "delay":
        delay = body.attr("delay", "duration", required=True)
        if delay is not None and delay <= 0:
            f.error("E2010", "`delay` must be longer than 0ms: the fault would change nothing",
                    body.attr_span("delay"), "no delay")
            delay = None
        broken |= delay is None
        if delay is not None:
            spec["delay"] = format_duration(delay)
    elif action == "replace":
        block = body.block("replace")
        if block is None:
            body.attr("replace", "any", required=True)
            broken = True
        else:
            replace: dict = {}
            text = block.attr("body", "str")
            if text is not None:  # Chaos Mesh reads the body as bytes: base64 in the manifest
                replace["body"] = base64.b64encode(text.encode("utf-8")).decode("ascii")
            new_code = _status(f, block, "code")
            new_method = _http_method(f, block, "method")
            new_path = block.attr("path", "str")
            headers = _headers(f, block, "headers")
            queries = block.string_map("queries")
            broken |= _BAD in (new_code, new_method, headers)
            broken |= not _only_for(f, block, "code", target, "Response")
            for key in ("method", "path", "queries"):
                broken |= not _only_for(f, block, key, target, "Request")
            for key, value in (("code", new_code), ("method", new_method), ("path", new_path), ("headers", headers),
                               ("queries", queries)):
                if value not in (None, _BAD, {}):
                    replace[key] = value
            block.finish()
            if not replace and not broken:
                f.error("E2007", "`replace` says nothing to replace", body.attr_span("replace"), "empty",
                        help="give `body`, `headers`, or `code` (response) / `method`, `path`, `queries` (request)")
                broken = True
            spec["replace"] = replace
    elif action == "patch":
        block = body.block("patch")
        if block is None:
            body.attr("patch", "any", required=True)
            broken = True
        else:
            patch: dict = {}
            text = block.attr("body", "str")
            if text is not None:
                patch["body"] = {"type": "JSON", "value": text}
            headers = _headers(f, block, "headers")
            queries = block.string_map("queries")
            broken |= headers is _BAD or not _only_for(f, block, "queries", target, "Request")
            if headers and headers is not _BAD:
                patch["headers"] = [[k, v] for k, v in headers.items()]
            if queries:
                patch["queries"] = [[k, v] for k, v in queries.items()]
            block.finish()
            if not patch and not broken:
                f.error("E2007", "`patch` says nothing to add", body.attr_span("patch"), "empty",
                        help="give `body` (a JSON merge patch), `headers` or `queries` (request)")
                broken = True
            spec["patch"] = patch
    if action in (None, _BAD) or target in (None, _BAD) or common is None or broken:
        return None
    chaos, timing = common
    chaos.update({"target": target, "port": port, **spec})
    if path is not None:
        chaos["path"] = path
    if method is not None:
        chaos["method"] = method
    if code is not None:
        chaos["code"] = code
    if request_headers:
        chaos["request_headers"] = request_headers
    if response_headers:
        chaos["response_headers"] = response_headers
    return _finish(f, "HTTPChaos", f"{workload.name}-http-{action}", chaos, timing)


# ---- IOChaos ------------------------------------------------------------------------------------------

IO_ACTIONS = {"latency": "latency", "fault": "fault", "attr_override": "attrOverride", "mistake": "mistake"}
IO_FIELDS = {"latency": ("delay",), "fault": ("errno",), "attr_override": ("attr",), "mistake": ("mistake",)}
IO_METHODS = ("lookup", "forget", "getattr", "setattr", "readlink", "mknod", "mkdir", "unlink", "rmdir", "symlink",
              "rename", "link", "open", "read", "write", "statfs", "release", "fsync", "setxattr", "getxattr",
              "listxattr", "removexattr", "flush", "opendir", "readdir", "releasedir", "fsyncdir", "access", "create",
              "getlk", "setlk", "bmap")
FILE_KINDS = ("namedPipe", "charDevice", "blockDevice", "directory", "regularFile", "symlink", "socket")


def _action(f: FaultInput, table: dict, chaos_type: str):
    """An action written as a name of the language (`attr_override`) or as Chaos Mesh spells it (`attrOverride`)."""
    allowed = tuple(table) + tuple(v for v in table.values() if v not in table)
    written = _enum(f, "action", allowed, f"`{{value}}` is not a {chaos_type} action", "unknown action",
                    fallback="actions: " + ", ".join(table), required=True, suggest=tuple(table))
    if written in (None, _BAD):
        return written, written
    language = next((k for k, v in table.items() if written in (k, v)), written)
    return language, table[language]


def _mount_paths(workload: ir.Workload, containers) -> list[str]:
    chosen = [c for c in workload.containers if containers in (None, _BAD) or c.name in containers]
    if containers in (None, _BAD):
        chosen = chosen[:1]  # Chaos Mesh acts on the first container unless told
    return [m.get("mountPath") for c in chosen for m in c.volume_mounts if m.get("mountPath")]


def _check_io_chaos(f: FaultInput) -> Checked | None:
    workload: ir.Workload = f.obj
    body = f.body
    action, crd_action = _action(f, IO_ACTIONS, "IOChaos")
    common = _common(f, workload)
    _foreign(f, action, IO_FIELDS, "action")
    containers = _containers(f, workload)
    volume_path = body.attr("volume_path", "str", required=True)
    path = body.attr("path", "str")
    percent = body.attr("percent", "percent")
    methods = body.attr("methods", "str_list")
    broken = volume_path is None or containers is _BAD
    mounts = _mount_paths(workload, containers)
    if volume_path is not None and volume_path not in mounts:
        hint = did_you_mean(volume_path, mounts)
        where = ("containers " + ", ".join(containers)) if containers not in (None, _BAD) else (
            f"container `{workload.containers[0].name}` (the first; name others with `containers`)")
        f.error("E2011", f"no volume is mounted at `{volume_path}` in {where} of {workload.kind.lower()} "
                f"`{workload.name}`", body.attr_span("volume_path"), "not a mount path",
                help=f"did you mean `{hint}`?" if hint else ("mounted: " + ", ".join(mounts)) if mounts else
                "IOChaos acts on a mounted volume; the container mounts none")
        broken = True
    if path is not None and volume_path is not None and not path.startswith(volume_path.rstrip("/") + "/") \
            and path != volume_path:
        f.error("E2010", f"`path` `{path}` is not under the volume path `{volume_path}`", body.attr_span("path"),
                "outside the volume", help=f'e.g. "{volume_path.rstrip("/")}/**/*"')
        broken = True
    if percent is not None and (percent != int(percent) or percent == 0):
        # chaos-mesh api/v1alpha1/common_webhook.go, Percent.Validate allows 0-100 (608b61e7); 0% acting on no call is
        # the language's rule
        f.error("E2010", "`percent` is a whole percentage from 1% to 100%", body.attr_span("percent"),
                "no I/O affected" if percent == 0 else "fraction")
        broken = True
    for method in methods or ():
        if method not in IO_METHODS:
            hint = did_you_mean(method, IO_METHODS)
            f.error("E2010", f"`{method}` is not an I/O method Chaos Mesh intercepts", body.attr_span("methods"),
                    "unknown method", help=f"did you mean `{hint}`?" if hint else "e.g. read, write, open, fsync")
            broken = True
    spec: dict = {}
    if action == "latency":
        delay = body.attr("delay", "duration", required=True)
        if delay is not None and delay <= 0:
            f.error("E2010", "`delay` must be longer than 0ms: the fault would change nothing",
                    body.attr_span("delay"), "no delay")
            delay = None
        broken |= delay is None
        if delay is not None:
            spec["delay"] = format_duration(delay)
    elif action == "fault":
        errno = body.attr("errno", "int", required=True)
        if errno is not None and not 1 <= errno <= 133:
            # chaos-mesh api/v1alpha1/iochaos_webhook.go, IOErrno.Validate (608b61e7) refuses errno 0 for `fault`; 133
            # (EHWPOISON) is Linux's highest errno
            f.error("E2010", f"`errno` is a Linux error number from 1 to 133, not {errno}", body.attr_span("errno"),
                    "not an errno", help="e.g. 5 (EIO), 28 (ENOSPC), 13 (EACCES)")
            errno = None
        broken |= errno is None
        spec["errno"] = errno
    elif action == "attr_override":
        block = body.block("attr")
        attr: dict = {}
        if block is None:
            body.attr("attr", "any", required=True)
            broken = True
        else:
            for key, crd in (("perm", "perm"), ("size", "size"), ("uid", "uid"), ("gid", "gid"), ("nlink", "nlink"),
                             ("blocks", "blocks"), ("ino", "ino")):
                value = block.attr(key, "nonneg_int")
                if value is not None:
                    attr[crd] = value
            kind = block.attr("kind", "symbol")
            if kind is not None:
                if kind not in FILE_KINDS:
                    hint = did_you_mean(kind, FILE_KINDS)
                    f.error("E2010", f"`{kind}` is not a file kind", block.attr_span("kind"), "unknown kind",
                            help=f"did you mean `{hint}`?" if hint else "kinds: " + ", ".join(FILE_KINDS))
                    broken = True
                else:
                    attr["kind"] = kind
            block.finish()
            if not attr and not broken:
                f.error("E2007", "`attr` overrides nothing", body.attr_span("attr"), "empty",
                        help="give `perm`, `size`, `uid`, `gid`, `nlink`, `blocks`, `ino` or `kind`")
                broken = True
        spec["attr"] = attr
    elif action == "mistake":
        block = body.block("mistake")
        if block is None:
            body.attr("mistake", "any", required=True)
            broken = True
        else:
            filling = block.attr("filling", "symbol", required=True)
            occurrences = block.attr("max_occurrences", "int", required=True)
            length = block.attr("max_length", "int", required=True)
            if filling is not None and filling not in ("zero", "random"):
                f.error("E2010", f"`{filling}` is not a filling (zero, random)", block.attr_span("filling"),
                        "unknown filling", help=f"did you mean `{did_you_mean(filling, ('zero', 'random'))}`?"
                        if did_you_mean(filling, ("zero", "random")) else "")
                filling = None
            for key, value in (("max_occurrences", occurrences), ("max_length", length)):
                if value is not None and value < 1:
                    # the CRD's schema: mistake.maxOccurrences and .maxLength have minimum 1 (chaos-mesh
                    # api/v1alpha1/iochaos_types.go, MistakeSpec) (608b61e7)
                    f.error("E2010", f"`{key}` is at least 1", block.attr_span(key), "too small")
                    broken = True
            broken |= None in (filling, occurrences, length)
            block.finish()
            spec["mistake"] = {"filling": filling, "maxOccurrences": occurrences, "maxLength": length}
    if action in (None, _BAD) or common is None or broken:
        return None
    chaos, timing = common
    chaos.update({"action": crd_action, "volumePath": volume_path, **spec})
    if path is not None:
        chaos["path"] = path
    if percent is not None:
        chaos["percent"] = int(percent)
    if methods:
        chaos["methods"] = methods
    if containers is not None:
        chaos["containerNames"] = containers
    return _finish(f, "IOChaos", f"{workload.name}-io-{crd_action.lower()}", chaos, timing)


# ---- DNSChaos -----------------------------------------------------------------------------------------

_DNS_PATTERN = re.compile(r"[a-z0-9?]([a-z0-9?.-]*[a-z0-9?])?(\.?\*)?\Z|\*\Z")


def _check_dns_chaos(f: FaultInput) -> Checked | None:
    workload: ir.Workload = f.obj
    body = f.body
    action = _enum(f, "action", ("error", "random"), "`{value}` is not a DNSChaos action", "unknown action",
                   fallback="actions: error (the lookup fails), random (it returns a random address)", required=True)
    common = _common(f, workload)
    containers = _containers(f, workload)
    patterns = body.attr("patterns", "str_list")
    broken = containers is _BAD
    for pattern in patterns or ():
        if "*" in pattern[:-1]:
            # chaos-mesh api/v1alpha1/dnschaos_type.go, DNSChaosSpec.DomainNamePatterns (608b61e7): "The wildcard * must
            # be at the end"
            f.error("E2010", f"`{pattern}`: Chaos Mesh takes the wildcard `*` only at the end of a pattern",
                    body.attr_span("patterns"), "wildcard inside", help='e.g. "payment.*" or "pay?ent"')
            broken = True
        elif not _DNS_PATTERN.match(pattern):
            f.error("E2010", f"`{pattern}` is not a domain-name pattern", body.attr_span("patterns"), "not a pattern",
                    help="lower-case letters, digits, `.` and `-`, `?` for one character, `*` at the end")
            broken = True
    if patterns == []:
        f.error("E2010", "`patterns` is empty; leave it out to act on every domain name", body.attr_span("patterns"),
                "no pattern")
        broken = True
    if action in (None, _BAD) or common is None or broken:
        return None
    chaos, timing = common
    chaos["action"] = action
    if patterns:
        chaos["patterns"] = patterns
    if containers is not None:
        chaos["containerNames"] = containers
    return _finish(f, "DNSChaos", f"{workload.name}-dns-{action}", chaos, timing)


# ---- TimeChaos ----------------------------------------------------------------------------------------

# chaos-mesh api/v1alpha1/timechaos_types.go, TimeChaosSpec.ClockIds (608b61e7): the ids Chaos Mesh lists
CLOCK_IDS = ("CLOCK_REALTIME", "CLOCK_MONOTONIC", "CLOCK_PROCESS_CPUTIME_ID", "CLOCK_THREAD_CPUTIME_ID",
             "CLOCK_MONOTONIC_RAW", "CLOCK_REALTIME_COARSE", "CLOCK_MONOTONIC_COARSE", "CLOCK_BOOTTIME",
             "CLOCK_REALTIME_ALARM", "CLOCK_BOOTTIME_ALARM")


def _check_time_chaos(f: FaultInput) -> Checked | None:
    workload: ir.Workload = f.obj
    body = f.body
    common = _common(f, workload)
    containers = _containers(f, workload)
    raw = _entry_value(f, "offset")
    if isinstance(raw, ast.Quantity) and raw.text.startswith("-"):
        body.labelled("offset")
        f.error("E2010", f"`offset` is a length of time; `{raw.text}` goes backwards", raw.span, "negative offset",
                help=f"write `offset = {raw.text[1:]}` and `backwards = true`")
        offset = None
    else:
        offset = body.attr("offset", "duration", required=True)
    backwards = body.attr("backwards", "bool", default=False)
    clocks = body.attr("clocks", "str_list")
    broken = offset is None or containers is _BAD
    if offset is not None and offset == 0:
        f.error("E2010", "`offset = 0s` shifts no clock: the fault would change nothing", body.attr_span("offset"),
                "no shift")
        broken = True
    for clock in clocks or ():
        if clock not in CLOCK_IDS:
            hint = did_you_mean(clock, CLOCK_IDS)
            f.error("E2010", f"`{clock}` is not a clock id", body.attr_span("clocks"), "unknown clock",
                    help=f"did you mean `{hint}`?" if hint else "clocks: " + ", ".join(CLOCK_IDS))
            broken = True
    if common is None or broken:
        return None
    chaos, timing = common
    chaos["timeOffset"] = ("-" if backwards else "") + format_duration(offset)
    if clocks:
        chaos["clockIds"] = clocks
    if containers is not None:
        chaos["containerNames"] = containers
    # named after what its spec holds (a time offset), not after the direction it shifts the clock: a name is
    # read by whoever lists the objects, and must say no more than the object does (agent_view.py)
    return _finish(f, "TimeChaos", f"{workload.name}-time-offset", chaos, timing)


# ---- JVMChaos -----------------------------------------------------------------------------------------

JVM_ACTIONS = {"latency": "latency", "return": "return", "exception": "exception", "stress": "stress", "gc": "gc",
               "rule_data": "ruleData"}
JVM_FIELDS = {"latency": ("class", "method", "latency"), "return": ("class", "method", "return_value"),
              "exception": ("class", "method", "exception"), "stress": ("cpu_count", "mem_type"), "gc": (),
              "rule_data": ("rule_data",)}
_JAVA_CLASS = re.compile(r"[A-Za-z_$][\w$]*(\.[A-Za-z_$][\w$]*)*\Z")
_JAVA_METHOD = re.compile(r"[A-Za-z_$<][\w$>]*\Z")


def _check_jvm_chaos(f: FaultInput) -> Checked | None:
    workload: ir.Workload = f.obj
    body = f.body
    action, crd_action = _action(f, JVM_ACTIONS, "JVMChaos")
    common = _common(f, workload)
    _foreign(f, action, JVM_FIELDS, "action")
    containers = _containers(f, workload)
    port = body.attr("port", "port")
    broken = containers is _BAD
    spec: dict = {}
    # chaos-mesh api/v1alpha1/jvmchaos_webhook.go, JVMChaosSpec.Validate (608b61e7): class and method required
    if action in ("latency", "return", "exception"):
        java_class = body.attr("class", "str", required=True)
        method = body.attr("method", "str", required=True)
        if java_class is not None and not _JAVA_CLASS.match(java_class):
            f.error("E2010", f"`{java_class}` is not a Java class name", body.attr_span("class"), "not a class",
                    help="a fully qualified name, e.g. oteldemo.AdService")
            java_class = None
        if method is not None and not _JAVA_METHOD.match(method):
            f.error("E2010", f"`{method}` is not a Java method name", body.attr_span("method"), "not a method")
            method = None
        broken |= None in (java_class, method)
        spec.update({"class": java_class, "method": method})
        if action == "latency":
            latency = body.attr("latency", "duration", required=True)
            if latency is not None and (latency <= 0 or latency * 1000 != int(latency * 1000)):
                # chaos-mesh api/v1alpha1/jvmchaos_webhook.go, JVMChaosSpec.Validate (608b61e7): "latency not provided"
                # when 0
                f.error("E2010", "`latency` is a whole number of milliseconds above 0", body.attr_span("latency"),
                        "invalid latency")
                latency = None
            broken |= latency is None
            spec["latency"] = int(latency * 1000) if latency is not None else None
        elif action == "return":
            value = body.attr("return_value", "str", required=True)
            broken |= value is None
            spec["returnValue"] = value
        else:
            exception = body.attr("exception", "str", required=True)
            broken |= exception is None
            spec["exception"] = exception
    elif action == "stress":
        cpu_count = body.attr("cpu_count", "int")
        mem_type = body.attr("mem_type", "symbol")
        if cpu_count is not None and cpu_count < 1:
            f.error("E2010", "`cpu_count` is at least 1", body.attr_span("cpu_count"), "no CPU")
            broken = True
        if mem_type is not None and mem_type not in ("heap", "stack"):
            hint = did_you_mean(mem_type, ("heap", "stack"))
            # chaos-mesh api/v1alpha1/jvmchaos_webhook.go, JVMChaosSpec.Validate (608b61e7): 'stack' or 'heap'
            f.error("E2010", f"`{mem_type}` is not a JVM memory type (heap, stack)", body.attr_span("mem_type"),
                    "unknown memory type", help=f"did you mean `{hint}`?" if hint else "")
            broken = True
        if (cpu_count is None) == (mem_type is None) and not broken:
            # chaos-mesh api/v1alpha1/jvmchaos_webhook.go, JVMChaosSpec.Validate (608b61e7): one of cpu-count and mem-
            # type
            f.error("E2007", "a JVM stress takes exactly one of `cpu_count` and `mem_type`", f.fault.span,
                    "both" if cpu_count is not None else "neither",
                    help="`cpu_count = 2` burns two cores; `mem_type = heap` fills the heap")
            broken = True
        if cpu_count is not None:
            spec["cpuCount"] = cpu_count
        if mem_type is not None:
            spec["memType"] = mem_type
    elif action == "rule_data":
        rule = body.attr("rule_data", "str", required=True)
        if rule is not None and not (rule.lstrip().startswith("RULE ") and rule.rstrip().endswith("ENDRULE")):
            f.error("E2010", "`rule_data` is a Byteman rule: `RULE name ... ENDRULE`", body.attr_span("rule_data"),
                    "not a Byteman rule", help='e.g. "RULE r\\nCLASS C\\nMETHOD m\\nAT ENTRY\\nIF true\\nDO return '
                    'null\\nENDRULE"')
            rule = None
        broken |= rule is None
        spec["ruleData"] = rule
    if action in (None, _BAD) or common is None or broken:
        return None
    chaos, timing = common
    chaos.update({"action": crd_action, **spec})
    if port is not None:
        chaos["port"] = port
    if containers is not None:
        chaos["containerNames"] = containers
    return _finish(f, "JVMChaos", f"{workload.name}-jvm-{crd_action.lower()}", chaos, timing)


# ---- the kinds ----------------------------------------------------------------------------------------

# pod-failure swaps the containers for a pause image (not ready), container-kill leaves them restarting;
# pod-kill pods come back, so a snapshot sees them ready
_POD_CHAOS_READINESS = {"pod-failure": "unready", "container-kill": "crash"}


def _pod_chaos_readiness(args: dict) -> str:
    return _POD_CHAOS_READINESS.get(str(args.get("spec", {}).get("action")), "")


FAULTS = [
    _kind(
        "pod_chaos", "PodChaos",
        "Kills a workload's pods (pod_kill), makes them fail (pod_failure: their containers are replaced by a pause "
        "image) or kills some of their containers (container_kill), with Chaos Mesh. A `pod_failure` lasts its "
        "`duration`, or without one until the experiment is deleted (the fault's revert); under `every` or "
        "`schedule` without a `duration`, the first experiment holds the pods failed until the Schedule is "
        "deleted.",
        _check_pod_chaos,
        (Arg("action", "name", required=True, help="pod_kill, pod_failure or container_kill"),
         Arg("containers", "list of strings", help="container-kill: the containers to kill (required)"),
         Arg("grace_period", "duration", help="pod-kill: the pods' termination grace period, whole seconds")),
        ("`container-kill` names containers, each of which exists in the workload (E2020).",
         "`pod-kill` and `container-kill` are instantaneous and take no `duration`; `pod-failure` takes one or "
         "lasts until reverted."),
        readiness=_pod_chaos_readiness,
    ),
    _kind(
        "network_chaos", "NetworkChaos",
        "Injects network chaos (delay, loss, duplicate, corrupt, partition, bandwidth) into a workload's pods "
        "with Chaos Mesh.",
        _check_network_chaos,
        (Arg("action", "name", required=True, help="delay, loss, duplicate, corrupt, partition or bandwidth"),
         Arg("direction", "name", help="to, from or both (Chaos Mesh's default: to)"),
         Arg("peer", "string", help="the workload on the other side of the traffic; required by partition"),
         Arg("peer_selector", "labels", default="the peer's selector", help="pod labels of the peer"),
         Arg("latency / jitter", "duration", help="delay: `latency = 200ms` (required), `jitter = 10ms`"),
         Arg("loss / duplicate / corrupt / correlation", "percentage",
             help="the action's percentage (required), its correlation"),
         Arg("rate / limit / buffer", "string / integer", help='bandwidth: `rate = "1mbps"` (required), the queue '
             "limit and bucket buffer in bytes")),
        ("A partition has a peer, and the peer is a workload of the target's namespace.",
         "Each action has its figures (latency, loss ...), and no other action's.",
         "A bandwidth rate is a tc rate (1mbps, 100kbit)."),
    ),
    _kind(
        "stress_chaos", "StressChaos",
        "Runs stress-ng CPU or memory stressors inside a workload's pods with Chaos Mesh.",
        _check_stress_chaos,
        (Arg("cpu", "block", help="`cpu { workers = 2  load = 80%  options = [...] }`"),
         Arg("memory", "block", help="`memory { workers = 4  size = 256Mi | 80%  oom_score_adj = -1000  options = [...] }`"),
         Arg("containers", "list of strings", help="the containers to stress (default: the first)")),
        ("At least one stressor, each with 1 to 8192 workers; a CPU load above 0%; a memory size above 0.",
         "Named containers exist in the workload (E2020)."),
    ),
    _kind(
        "http_chaos", "HTTPChaos",
        "Aborts, delays, replaces or patches the HTTP requests or responses a workload's pods serve, with Chaos Mesh.",
        _check_http_chaos,
        (Arg("action", "name", required=True, help="abort, delay, replace or patch"),
         Arg("target", "name", required=True, help="request or response"),
         Arg("port", "integer", required=True, help="the port the pods serve HTTP on"),
         Arg("path", "string", help='the URI path pattern to act on ("/api/*", "*")', program=True),
         Arg("method", "string", help="the HTTP method of the requests to act on (or whose responses)"),
         Arg("code", "integer", help="response only: the status code to act on"),
         Arg("request_headers", "block", help='the request headers of the messages to act on '
             '(`request_headers { "Content-Type" = "application/json" }`)'),
         Arg("response_headers", "block", help="response only: the response headers of the messages to act on"),
         Arg("delay", "duration", help="delay: how long to hold each message"),
         Arg("replace", "block", help="replace: `body` (text; written base64, as Chaos Mesh reads it), `headers`, "
             "and `code` (response) or `method`, `path`, `queries` (request)"),
         Arg("patch", "block", help="patch: `body` (a JSON merge patch), `headers`, `queries` (request)")),
        ("The pods listen on `port` (E2022).",
         "Response-only fields (`code`, `response_headers`, `replace.code`) and request-only ones "
         "(`replace.method`/`path`/`queries`, `patch.queries`) match `target`.",
         "Header names are HTTP tokens.",
         "`replace`/`patch` change something; status codes are from 100 to 599."),
    ),
    _kind(
        "io_chaos", "IOChaos",
        "Delays, fails, falsifies the attributes of, or corrupts the file I/O of a workload's pods on a mounted volume, "
        "with Chaos Mesh.",
        _check_io_chaos,
        (Arg("action", "name", required=True, help="latency, fault, attr_override or mistake"),
         Arg("volume_path", "string", required=True, help="the mount path of the volume to act on"),
         Arg("path", "string", help="a file glob under the volume path (default: every file)"),
         Arg("percent", "percentage", help="the share of I/O calls affected (default 100%)"),
         Arg("methods", "list of strings", help="the I/O calls affected (read, write, open ...; default: all)"),
         Arg("containers", "list of strings", help="the containers (default: the first)"),
         Arg("delay", "duration", help="latency: added to each call"),
         Arg("errno", "integer", help="fault: the error returned (5 is EIO)"),
         Arg("attr", "block", help="attr_override: `perm`, `size`, `uid`, `gid`, `nlink`, `blocks`, `ino`, `kind`"),
         Arg("mistake", "block", help="mistake: `filling = zero|random`, `max_occurrences`, `max_length`")),
        ("A volume is mounted at `volume_path` in the affected container (E2011); `path` lies under it.",
         "Named containers exist in the workload (E2020); errno is 1-133; methods are I/O calls Chaos Mesh knows."),
    ),
    _kind(
        "dns_chaos", "DNSChaos",
        "Makes the DNS lookups of a workload's pods fail or return random addresses, with Chaos Mesh.",
        _check_dns_chaos,
        (Arg("action", "name", required=True, help="error or random"),
         Arg("patterns", "list of strings", help='the domain names affected ("payment", "payment.*", "pay?ent"); '
             "default: all"),
         Arg("containers", "list of strings", help="the containers (default: the first)")),
        ("Patterns are domain-name patterns with `*` only at the end.",
         "Named containers exist in the workload (E2020)."),
    ),
    _kind(
        "time_chaos", "TimeChaos",
        "Shifts the clocks a workload's processes read, forwards or backwards, with Chaos Mesh.",
        _check_time_chaos,
        (Arg("offset", "duration", required=True, help="how far to shift the clock"),
         Arg("backwards", "bool", default="false", help="shift into the past"),
         Arg("clocks", "list of strings", help="the clock ids (default CLOCK_REALTIME)"),
         Arg("containers", "list of strings", help="the containers (default: the first)")),
        ("The offset is not zero; clock ids are Linux clock ids.",
         "Named containers exist in the workload (E2020)."),
    ),
    _kind(
        "jvm_chaos", "JVMChaos",
        "Injects faults into a Java workload's JVM with Chaos Mesh: method latency, return values or exceptions, CPU "
        "or memory stress, garbage collection, or a Byteman rule.",
        _check_jvm_chaos,
        (Arg("action", "name", required=True, help="latency, return, exception, stress, gc or rule_data",
             program=True),  # every action acts inside the target's JVM: a workload without one is no target
         Arg("class / method", "string", help="latency, return, exception: the Java method (required)", program=True),
         Arg("latency", "duration", help="latency: added to each call, whole milliseconds"),
         Arg("return_value", "string", help='return: the value returned, as Java source ("null", "42")',
             program=True),
         Arg("exception", "string", help='exception: the exception thrown, e.g. "java.io.IOException(\"boom\")"',
             program=True),
         Arg("cpu_count / mem_type", "integer / name", help="stress: cores to burn, or heap/stack to fill (one)"),
         Arg("rule_data", "string", help="rule_data: a Byteman rule `RULE ... ENDRULE`", program=True),
         Arg("port", "integer", help="the Chaos Mesh agent's port in the pod (default 9277)"),
         Arg("containers", "list of strings", help="the containers (default: the first)")),
        ("Each action has its fields (a class and method for latency/return/exception) and no other action's.",
         "A stress takes exactly one of cpu_count and mem_type; a rule is a Byteman `RULE ... ENDRULE`."),
    ),
]
