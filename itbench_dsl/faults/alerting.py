"""Where a scenario's faults can raise an alert: the alert model the check (E2035) and the
generators (retarget) share.

Every known alert has a *scope*, what it measures:

- `workload`: the state of one workload's pods (KubePodNotReady, KubePodCrashLooping, ...). It
  fires only on a component a fault changes: the *footprint* of the faults (their targets, the
  objects they change or create, their waiters' targets, and the workloads that read a ConfigMap
  or Secret a fault changes).
- `traffic`: the requests a service carries (HighRequestErrorRate, NoRequestsReceived, ...). A
  fault disturbs the traffic of its footprint and of every component joined to it by the
  topology's dependency edges (errors flow back to callers, missing requests on to callees and
  to the consumers of a shared broker). Requests reach a workload's pods through the Service that
  selects them, so a traffic alert on a workload object that a Service selects belongs on the Service.
- `cost`: what the namespace spends (CPUSpend, MemorySpend): anywhere.

A fault on an object that carries everyone's traffic or placement (a namespace, a gateway, a node,
a component the cluster provides) acts on every component: its alerts may fire anywhere.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .. import ir
from ..analysis.components import Components

from ..alerts import COST, SCOPES, TRAFFIC, WORKLOAD  # noqa: F401  (the scopes live with the catalogue)

# objects whose fault acts on every component (the traffic or placement of all of them)
WIDE_KINDS = ("Namespace", "Gateway", "Node", "Pod", "ResourceQuota", "NetworkPolicy", "AuthorizationPolicy",
              "PeerAuthentication", "PriorityClass")
_WORKLOAD_KINDS = ("Deployment", "StatefulSet")


# the alerts that read the state of pods (their phase, readiness, containers): a pod refused at admission has none
POD_STATE_ALERTS = frozenset({"KubePodNotReady", "KubePodCrashLooping", "KubeContainerWaiting", "FailedPodsDetected"})


def scope(alert: str) -> str | None:
    return SCOPES.get(alert)


class Places(Components):
    """The components of a scenario's topology (a workload and its pods, services and autoscalers are
    one component: components.py) and where its faults act."""

    def __init__(self, scenario: ir.Scenario) -> None:
        super().__init__(scenario)
        topology = scenario.topology
        self.topology = topology
        self.workloads = [w for w in topology.workloads if w.kind in _WORKLOAD_KINDS]
        self.selecting: dict[str, list[str]] = {}  # workload -> the services that select it
        for service in topology.services:
            owner = self._selected(service)
            if owner is not None:
                self.selecting.setdefault(owner, []).append(service.name)
        self.wide = False
        self.footprint: set[str] = set()
        for group in scenario.faults:
            for injection in group.injections:
                own = self.of(injection.target)
                for ref in [injection.target, *injection.side_objects, *injection.created,
                            *([injection.root] if injection.root else [])]:
                    if ref.kind in WIDE_KINDS and not (ref.kind == "Pod" and self.of(ref) != f"Pod/{ref.name}"):
                        self.wide = True
                    component = self.of(ref)
                    if component == f"{ref.kind}/{ref.name}" and ref is not injection.target:
                        component = own  # what the fault creates belongs to its target's component
                    self.footprint.add(component)
                    self.footprint |= self.readers(ref)
            for waiter in group.waiters:
                self.footprint.add(self.of(waiter.target))
        self.reach = self._connected(self.footprint)

    def readers(self, ref: ir.ObjectRef) -> set[str]:
        """The workloads that read a ConfigMap or Secret (volumes, environment): a change to it is theirs."""
        if ref.kind not in ("ConfigMap", "Secret"):
            return set()
        out = set()
        for w in self.workloads:
            if w.namespace == ref.namespace and _names_object(w, ref.kind, ref.name):
                out.add(w.name)
        return out

    def _connected(self, start: set[str]) -> set[str]:
        graph: dict[str, set[str]] = {}
        for a, b in self.topology.edges:
            graph.setdefault(a, set()).add(b)
            graph.setdefault(b, set()).add(a)
        seen, todo = set(start), list(start)
        while todo:
            for nxt in graph.get(todo.pop(), ()):
                if nxt not in seen:
                    seen.add(nxt)
                    todo.append(nxt)
        return seen

    def problem(self, name: str, target: ir.ObjectRef) -> tuple[str, str] | None:
        """Why the faults cannot raise alert `name` on `target` (a message and a hint), or None."""
        kind = scope(name)
        component = self.of(target)
        where = f"{target.kind.lower()} `{target.name}`"
        acts = ", ".join(sorted(self.footprint)) or "nothing"
        if kind == TRAFFIC and target.kind in _WORKLOAD_KINDS and self.selecting.get(component):
            service = sorted(self.selecting[component])[0]
            return (f"`{name}` measures the requests a service carries, and requests reach {where} through "
                    f"service `{service}`", f'write `alert {name} on service "{service}"`')
        if self.wide or kind not in (WORKLOAD, TRAFFIC):
            return None
        if kind == WORKLOAD and component not in self.footprint:
            return (f"`{name}` reports the state of a workload's pods, and no fault of the scenario changes "
                    f"{where} (they act on: {acts})",
                    "expect it where a fault acts, or a traffic alert (HighRequestErrorRate, ...) on a caller")
        if kind == TRAFFIC and component not in self.reach:
            return (f"no dependency edge joins {where} to where the faults act ({acts}), so its traffic "
                    "does not change", "expect the alert on a component the faults' traffic reaches")
        return None


def _names_object(workload: ir.Workload, kind: str, name: str) -> bool:
    volume_key, env_keys = ("configMap", ("configMapKeyRef", "configMapRef")) if kind == "ConfigMap" \
        else ("secret", ("secretKeyRef", "secretRef"))
    for volume in workload.volumes:
        source = volume.get(volume_key) or {}
        if source.get("name") == name or source.get("secretName") == name:
            return True
        for item in (volume.get("projected") or {}).get("sources", []) or []:
            if (item.get(volume_key) or {}).get("name") == name:
                return True
    for container in [*workload.containers, *workload.init_containers]:
        for env in container.env:
            for key in env_keys:
                if ((env.value_from or {}).get(key) or {}).get("name") == name:
                    return True
    return False


def placement_problems(scenario: ir.Scenario) -> list[tuple[int, str, str]]:
    """E2035: the expected alerts the scenario's faults cannot raise where they are expected, as
    (index among the scenario's alerts, message, hint). Only SRE scenarios with faults are judged."""
    if scenario.domain != "sre" or not scenario.injections():
        return []
    places = Places(scenario)
    # the components whose new pods a quota the faults create refuses at admission: (component, the quota's name)
    refused = {(places.of(i.target), ref.namespace): ref.name for i in scenario.injections() for ref in i.created
               if ref.kind == "ResourceQuota"}
    out = []
    for index, alert in enumerate(scenario.alerts):
        quota = refused.get((places.of(alert.target), alert.target.namespace))
        if alert.name in POD_STATE_ALERTS and quota is not None:
            out.append((index, f"`{alert.name}` reports the state of pods, and the quota `{quota}` the faults create "
                               f"refuses the new pods of {alert.target.kind.lower()} `{alert.target.name}` at "
                               "admission: they never exist, so no pod is there to be seen",
                        "expect an alert on the workload's missing replicas (an `alert_rule` comparing "
                        "kube_deployment_status_replicas_available with kube_deployment_spec_replicas)"))
            continue
        found = places.problem(alert.name, alert.target)
        if found is not None:
            out.append((index, *found))
    return out


# ---- a delay fault against the latency alerts it is expected to raise --------------------------------------


def added_delay(injection: ir.Injection) -> float | None:
    """The seconds a Chaos Mesh delay adds to each request it acts on (HTTPChaos `delay`, NetworkChaos
    `delay.latency` plus its `jitter`, JVMChaos `latency`: one sleep at each call of the method, in
    milliseconds); None for a fault that slows requests otherwise (a stress; an I/O delay, added to every file
    operation, of which a request may make many), whose effect on a request's duration the scenario does not
    state."""
    from ..units import parse_duration

    spec = injection.args.get("spec") if isinstance(injection.args, dict) else None
    if not isinstance(spec, dict):
        return None
    kind = injection.args.get("chaos_type")
    try:
        if kind == "HTTPChaos" and spec.get("delay") and not any(spec.get(k) for k in ("abort", "replace", "patch")):
            return float(parse_duration(str(spec["delay"])))
        if kind == "NetworkChaos" and spec.get("action") == "delay" and isinstance(spec.get("delay"), dict):
            delay = spec["delay"]
            return float(parse_duration(str(delay.get("latency", "0ms")))) + float(
                parse_duration(str(delay.get("jitter") or "0ms")))
        if kind == "JVMChaos" and spec.get("action") == "latency" and isinstance(spec.get("latency"), int):
            return spec["latency"] / 1000  # chaos-mesh jvmchaos `latency`: "the latency duration ..., unit ms"
    except (ValueError, ArithmeticError):
        return None
    return None


def latency_short_of_alerts(scenario: ir.Scenario) -> list[tuple[int, str]]:
    """The expected latency alerts a scenario's faults cannot raise by their own delay, as (index among the
    scenario's alerts, message): every fault is a fixed delay (added_delay) no longer than the least request
    duration the alert's rule fires above (alerts.latency_threshold), so the alert would fire only if the
    application were already that slow. The check warns of it (W2019) and the generators skip such a variant."""
    from ..alerts import latency_threshold

    delays = [added_delay(i) for i in scenario.injections()]
    if not delays or any(d is None for d in delays):
        return []
    added = sum(delays)  # two delays on one path add up, at most
    out = []
    for index, alert in enumerate(scenario.alerts):
        bound = latency_threshold(alert.name, scenario.topology.application)
        if bound is not None and added <= bound:
            out.append((index, f"alert {alert.name} on {alert.target.kind.lower()} `{alert.target.name}` fires "
                               f"above {bound:g}s of request duration, and the faults add {added:g}s"))
    return out


# ---- a fault that acts for a bounded time against the time its alerts need to fire ------------------------------

# How long what a fault did to pods may outlast it: a container it crashed waits out the kubelet's restart back-off,
# which doubles up to 5 minutes (kubelet `MaxContainerBackOff`), before it runs again.
POD_LINGER = 300.0
# Prometheus' default evaluation (and scrape) interval: a shorter lapse of a condition may fall between two looks
EVALUATION_INTERVAL = 60.0
# Chaos Mesh's one-shot actions (api/v1alpha1, PodChaos.IsOneShot): they act at once and take no `duration`
_INSTANT_ACTIONS = {"PodChaos": ("pod-kill", "container-kill")}


@dataclass(frozen=True)
class Acting:
    """How long one fault acts: `duration` seconds at a time (an experiment's `duration`, 0 for an instant
    action), each time followed by `linger` seconds of what it did to the pods, once (`every` None) or again
    every `every` seconds (a Schedule); `said` is how the scenario says it."""

    duration: float
    linger: float
    every: float | None
    said: str

    @property
    def seconds(self) -> float:
        return self.duration + self.linger

    @property
    def continuous(self) -> bool:
        return self.every is not None and self.seconds >= self.every


def acting_time(injection: ir.Injection, topology: ir.Topology) -> Acting | None:
    """How long a fault acts, read off the objects its injection applies (so a declared kind that creates a Chaos
    Mesh experiment is read as the library's are): every one a Chaos Mesh experiment with a `duration` or an
    instant action, or a Schedule of one at a fixed interval. None for a fault that acts until it is undone
    (it changes or deletes an object, runs a command, or its experiment has no `duration`) or whose
    repetition a cron expression sets (its shortest interval is not read)."""
    import copy

    kind = injection.kind
    declared = getattr(kind, "declared", None)
    if kind is None or (declared is not None and (declared.patches or declared.exec or declared.delete_target
                                                  or declared.recreate)):
        return None
    working = copy.copy(topology)
    for pool in ("workloads", "services", "configmaps", "secrets", "autoscalers", "ingresses"):
        setattr(working, pool, list(getattr(working, pool)))
    try:
        effect = kind.inject(injection, working)
    except Exception:  # noqa: BLE001 - a kind that cannot say: judged as acting until undone
        return None
    if effect is None or effect.delete or len(effect.apply) != 1 or not isinstance(effect.apply[0], dict):
        return None
    obj = effect.apply[0]
    if not str(obj.get("apiVersion", "")).startswith("chaos-mesh.org/") or not isinstance(obj.get("spec"), dict):
        return None
    spec, every = obj["spec"], None
    chaos_type = obj.get("kind")
    if chaos_type == "Schedule":
        from ..units import parse_go_duration
        from .chaos import SCHEDULE_FIELDS

        match = re.fullmatch(r"@every\s+(\S+)", str(spec.get("schedule", "")).strip())
        chaos_type = spec.get("type")
        every = parse_go_duration(match.group(1)) if match else None
        spec = spec.get(SCHEDULE_FIELDS.get(chaos_type, ""))
        if every is None or not isinstance(spec, dict):
            return None
        every = float(every)
    duration, said = _experiment_duration(chaos_type, spec)
    if duration is None:
        return None
    linger = POD_LINGER if {"restarts", "readiness"} & set(getattr(kind, "symptoms", ()) or ()) else 0.0
    if every is not None:
        from ..units import format_duration

        said = said.replace("one ", "", 1).replace(" experiment ", " experiments ", 1) + \
            f", one every {format_duration(every)}"
    return Acting(duration, linger, every, said)


def _experiment_duration(chaos_type, spec: dict) -> tuple[float | None, str]:
    from ..units import format_duration, parse_go_duration

    action = spec.get("action")
    if action in _INSTANT_ACTIONS.get(chaos_type, ()):
        return 0.0, f"one {chaos_type} experiment `{action}`, which acts at once"
    if spec.get("duration") in (None, ""):
        return None, ""
    seconds = parse_go_duration(str(spec["duration"]))
    if seconds is None or seconds <= 0:
        return None, ""
    return float(seconds), f"one {chaos_type} experiment of `duration = {format_duration(seconds)}`"


def alerts_beyond_wait(scenario: ir.Scenario) -> list[tuple[int, str]]:
    """The expected alerts no rule of which can be seen firing within a run's alert wait (alerts.ALERT_WAIT_SECONDS,
    ITBench's and the engines' gate) even when the fault's condition holds from the injection on: a rule whose
    `for` (plus an evaluation's margin) is as long as the wait or longer (KubeContainerWaiting's 1h). The alerts
    phase then times out and the run stops before the agent. As (index among the scenario's alerts, message)."""
    from ..alerts import ALERT_WAIT_SECONDS, alert_holds, seconds_to_fire

    if scenario.domain == "ciso":
        return []
    own = {r.name: r for r in scenario.alert_rules}
    out = []
    for index, alert in enumerate(scenario.alerts):
        holds = alert_holds(alert.name, scenario.topology.application, own)
        if not holds:
            continue
        needed = seconds_to_fire(holds)
        if needed > ALERT_WAIT_SECONDS:
            out.append((index, f"alert `{alert.name}` cannot be seen firing within a run's alert wait: its rule must "
                               f"hold {_d(min(h.for_ for h in holds))} (about {_d(needed)} with evaluation), the runs "
                               f"wait {_d(ALERT_WAIT_SECONDS)} (ITBench's, the Chainsaw and Argo gates)"))
    return out


def alerts_outlasting_faults(scenario: ir.Scenario) -> list[tuple[int, int, str]]:
    """The expected alerts the faults stop acting too soon to raise, as (index among the scenario's alerts, index
    of the injection to point at, message). An alert fires once its rule's condition has held for its `for`
    (alerts.Hold); what a fault causes shows in a rule's range vectors for a window after it, so the condition
    can hold at most the faults' acting time (acting_time: every one bounded) plus a window per burst, and a
    rule that tests an absence (`== 0`) holds only from a full window into it. An alert none of whose rules
    can hold long enough never fires: the ground truth names an alert the run will not see. The check warns
    of it (W2020) and the generators skip such a variant. Faults that act until undone, a Schedule whose
    bursts come back before a rule's window (and an evaluation) has seen them end, or several faults of which
    one repeats, are not judged."""
    from ..alerts import alert_holds

    injections = scenario.injections()
    if scenario.domain == "ciso" or not injections or not scenario.alerts:
        return []
    acts = [acting_time(i, scenario.topology) for i in injections]
    if any(a is None for a in acts) or any(a.continuous for a in acts):
        return []
    if len(acts) > 1 and any(a.every is not None for a in acts):
        return []
    every = acts[0].every if len(acts) == 1 else None
    longest = max(range(len(acts)), key=lambda k: (acts[k].seconds, -k))
    total = sum(a.seconds for a in acts)  # one-shot faults, however they follow each other, act this long at most
    own = {r.name: r for r in scenario.alert_rules}
    out = []
    for index, alert in enumerate(scenario.alerts):
        holds = alert_holds(alert.name, scenario.topology.application, own)
        if not holds:
            continue
        if any(h.longest(total, len(acts)) >= h.for_ for h in holds):
            continue
        # a Schedule's bursts whose gap a rule's window, or an evaluation, may not see: the condition may never lapse
        if every is not None and any(every - total < h.window + EVALUATION_INTERVAL for h in holds):
            continue
        hold = max(holds, key=lambda h: h.longest(total, len(acts)) - h.for_)
        act = acts[longest]
        can = max(0.0, hold.longest(total, len(acts)))
        rule = (f"its condition holds only once a whole {_d(hold.window)} window has seen the fault, and must then "
                f"hold {_d(hold.for_)}" if hold.absence else f"its condition must hold {_d(hold.for_)}"
                + (f" (its rule looks back {_d(hold.window)})" if hold.window else ""))
        acting = (f"the {len(acts)} faults act {_d(total)} in all" if len(acts) > 1 else
                  f"the fault acts {_d(act.duration)} ({act.said})"
                  + (f", and what it does to pods may last {_d(act.linger)} more" if act.linger else ""))
        out.append((index, longest, f"alert {alert.name} on {alert.target.kind.lower()} `{alert.target.name}`: "
                                    f"{rule}; {acting}, so it can hold {_d(can)} at most"))
    return out


def _d(seconds: float) -> str:
    from ..units import format_duration

    return format_duration(int(seconds) if float(seconds) == int(seconds) else seconds)
