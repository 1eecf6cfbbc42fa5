"""The alert catalogue: every alert a scenario may expect, with the Prometheus rule behind it.

A scenario's `expect { alert NAME on ... }` names an alert of this standard catalogue or one the
scenario declares itself (`alert_rule "NAME" { expr = "..." }`, checked into `ir.AlertRuleDef`).
The bundle's `manifests/alert-rules.yaml` (backends/alert_rules.py) holds a PrometheusRule with the
rules of every alert the scenario expects, so that a run deploys the alerts its grading waits for.

Sources (Apache-2.0, like the rest of ITBench's files in `data/itbench/`):

- ITBench `scenarios/sre/project/roles/applications/templates/kubernetes/{otel_demo,book_info,common}/
  prometheusrules.j2` (itbench-hub/ITBench, commit 8949d5b2): the application alerts (HighRequestErrorRate,
  HighRequestLatency, NoRequestsReceived, NoRequestsOpened, NoDatabaseOperations, FailedPodsDetected),
  one rule per ITBench rule group, `[[ namespace ]]` templated to the scenario's namespace. CPUSpend and
  MemorySpend are the FinOps rules ITBench keeps commented out in the OpenTelemetry demo's template
  (`opentelemetry_demo.cost`, the first spelled `CPUSpedn` there), over the recording rules of
  `roles/tools/templates/kubernetes/opencost/prometheusrules.j2`; their hard-coded `otel-demo` namespace
  is templated like the others.
- kubernetes-monitoring/kubernetes-mixin as kube-prometheus renders it
  (prometheus-operator/kube-prometheus `manifests/kubernetesControlPlane-prometheusRule.yaml`): the
  Kubernetes alerts ITBench's fault library names (KubePodCrashLooping, KubePodNotReady,
  KubeContainerWaiting, KubeHpaMaxedOut, KubeDeploymentRolloutStuck, CPUThrottlingHigh). ITBench gets them
  from the kube-prometheus-stack it installs, cluster-wide; the catalogue's copy adds a `namespace` matcher
  so that a bundle's rule file fires for its own scenario only.

An expression holds `{namespace}` where it is templated; nothing else in it is a placeholder.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

ALERT_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")  # a Prometheus alert name is a metric-name-like word
SEVERITIES = ("critical", "warning", "info", "none")

# what a rule comes from, for the generated reference and the rule's annotations
ITBENCH = "itbench"
MIXIN = "kubernetes-mixin"
SOURCES = {
    ITBENCH: "ITBench roles/applications (and roles/tools) prometheusrules.j2, commit 8949d5b2, Apache-2.0",
    MIXIN: "kubernetes-mixin via kube-prometheus kubernetesControlPlane-prometheusRule.yaml, Apache-2.0",
}

# the application flavour of a rule set: the stdlib application names; ANY for every other topology
ANY = ""


@dataclass(frozen=True)
class Rule:
    """One Prometheus alerting rule of a catalogue alert (an alert may have several, like ITBench's)."""

    group: str  # the rule group's name suffix (ITBench's group names, without the application prefix)
    expr: str  # PromQL; `{namespace}` is replaced by the scenario's namespace
    for_: str  # Prometheus duration
    severity: str
    description: str  # annotation text, Prometheus templating ({{ $labels.x }}) kept as ITBench wrote it


@dataclass(frozen=True)
class Alert:
    name: str
    summary: str
    source: str  # a key of SOURCES
    rules: dict  # application flavour (a stdlib application name, or ANY) -> tuple[Rule, ...]

    def rules_for(self, application: str | None) -> tuple[Rule, ...]:
        """The rules for a scenario on `application` (its own flavour, else the first one listed)."""
        if application in self.rules:
            return self.rules[application]
        return self.rules.get(ANY) or next(iter(self.rules.values()))


OTEL, BOOKINFO = "opentelemetry-demo", "book-info"


def _ns(text: str) -> str:
    """Multi-line PromQL as ITBench indents it, stripped of the common indentation."""
    lines = [line.rstrip() for line in text.splitlines()]
    while lines and not lines[0]:
        lines.pop(0)
    while lines and not lines[-1]:
        lines.pop()
    indent = min(len(line) - len(line.lstrip()) for line in lines if line.strip())
    return "\n".join(line[indent:] for line in lines) + "\n"


_FAILED_PODS = Rule("workloads", _ns('''
    sum by (namespace) (
      kube_pod_status_phase{
        namespace="{namespace}",
        phase="Failed"
      }
    ) > 0
'''), "2m", "critical", "Pods in failed state in namespace {{ $labels.namespace }} is above 0 (current: {{ $value }})")


def _otel_latency(group: str, selector: str, description: str) -> Rule:
    return Rule(group, _ns(f'''
        histogram_quantile(
          0.95,
          sum (
            rate(
              traces_span_metrics_duration_milliseconds_bucket{{
                {selector},
                namespace="{{namespace}}"
              }}[2m]
            )
          ) by(le, service_name, namespace)
        )
        > 1500
    '''), "3m", "critical", description)


def _otel_errors(group: str, selector: str, description: str) -> Rule:
    return Rule(group, _ns(f'''
        sum (
          rate(
            traces_span_metrics_calls_total{{
              {selector},
              status_code="STATUS_CODE_ERROR",
              namespace="{{namespace}}"
            }}[2m]
          )
        ) by (service_name, namespace)
        > 0
    '''), "3m", "critical", description)


_BI_GATEWAY_LABELS = ("destination_canonical_service, destination_workload_namespace, source_canonical_service, "
                      "source_workload_namespace")
_BI_BETWEEN = ("between {{ $labels.source_canonical_service }} in namespace {{ $labels.source_workload_namespace }} "
               "and {{ $labels.destination_canonical_service }} in namespace {{ $labels.destination_workload_namespace }}")
_BI_NO_REQUESTS = ("{{ $labels.destination_canonical_service }} in namespace {{ $labels.destination_workload_namespace }} "
                   "has received no requests from {{ $labels.source_canonical_service }} in namespace "
                   "{{ $labels.source_workload_namespace }}")

CATALOGUE: dict[str, Alert] = {a.name: a for a in [
    Alert("FailedPodsDetected", "Pods of the application's namespace are in the Failed phase.", ITBENCH, {
        ANY: (_FAILED_PODS,),
    }),
    Alert("HighRequestErrorRate", "Requests between services fail.", ITBENCH, {
        OTEL: (
            _otel_errors("frontend.goldensignal", 'service_name=~"frontend|frontend-proxy"',
                         "Request error rate in service {{ $labels.service_name }} in namespace {{ $labels.namespace }} "
                         "is above 3 (current: {{ $value }})"),
            _otel_errors("backend.goldensignal", 'service_name!~"flagd|load-generator|frontend|frontend-proxy"',
                         "Request error rate in service {{ $labels.service_name }} in namespace {{ $labels.namespace }} "
                         "is above 1 (current: {{ $value }})"),
        ),
        BOOKINFO: (
            Rule("productpage.goldensignal", _ns('''
                sum (
                  rate(
                    request_result_total{
                      response_code!~"20*",
                      namespace="{namespace}"
                    }[2m]
                  )
                ) by (destination_app, response_code, namespace)
                > 0
            '''), "3m", "critical", "Request error rate (code: {{ $labels.response_code }}) between productpage and "
                 "{{ $labels.destination_app }} in namespace {{ $labels.namespace }} is above 0 (current: {{ $value }})"),
            Rule("gateway.goldensignal", _ns(f'''
                sum (
                  rate(
                    istio_requests_total{{
                      response_code!~"20*",
                      source_workload_namespace="{{namespace}}"
                    }}[2m]
                  )
                ) by ({_BI_GATEWAY_LABELS}, response_code)
                > 0
            '''), "3m", "warning", "Request error rate (code: {{ $labels.response_code }}) " + _BI_BETWEEN
                 + " is above 0 (current: {{ $value }})"),
        ),
    }),
    Alert("HighRequestLatency", "Requests between services are slow (95th percentile above 1.5 s).", ITBENCH, {
        OTEL: (
            _otel_latency("frontend.goldensignal", 'service_name=~"frontend|frontend-proxy"',
                          "Latency in service {{ $labels.service_name }} in namespace {{ $labels.namespace }} is above "
                          "1500ms (current: {{ $value }}s)"),
            _otel_latency("backend.goldensignal", 'service_name!~"flagd|load-generator|frontend*"',
                          "Latency in service {{ $labels.service_name }} in namespace {{ $labels.namespace }} is above "
                          "15000ms (current: {{ $value }}s)"),
        ),
        BOOKINFO: (
            Rule("gateway.goldensignal", _ns(f'''
                histogram_quantile(
                  0.95,
                  sum (
                    rate(
                      istio_request_duration_milliseconds_bucket{{
                        source_workload_namespace="{{namespace}}"
                      }}[2m]
                    )
                  ) by(le, {_BI_GATEWAY_LABELS})
                )
                > 1500
            '''), "3m", "warning", "Connection latency " + _BI_BETWEEN + " is above 1500ms (current: {{ $value }}s)"),
        ),
    }),
    Alert("NoRequestsReceived", "A service has received no requests for 5 minutes.", ITBENCH, {
        OTEL: (
            Rule("requests", _ns('''
                sum (
                  rate(
                    traces_span_metrics_calls_total{
                      service_name!~"flagd|load-generator",
                      status_code=~"STATUS_CODE_UNSET|STATUS_CODE_OK",
                      namespace="{namespace}"
                    }[5m]
                  )
                ) by (service_name, namespace)
                == 0
            '''), "5m", "critical", "Service {{ $labels.service_name }} in namespace {{ $labels.namespace }} has "
                 "received no requests"),
        ),
        BOOKINFO: (
            Rule("productpage.requests", _ns('''
                sum (
                  rate(
                    request_result_total{
                      namespace="{namespace}"
                    }[5m]
                  )
                ) by (destination_app, namespace)
                == 0
            '''), "5m", "critical", "{{ $labels.destination_app }} in namespace {{ $labels.namespace }} has received "
                 "no requests from productpage in namespace {{ $labels.namespace }}"),
            Rule("gateway.requests", _ns(f'''
                sum (
                  rate(
                    istio_requests_total{{
                      source_workload_namespace="{{namespace}}"
                    }}[5m]
                  )
                ) by ({_BI_GATEWAY_LABELS})
                == 0
            '''), "5m", "critical", _BI_NO_REQUESTS),
        ),
    }),
    Alert("NoRequestsOpened", "No TCP connection is opened between two services of the mesh for 5 minutes.", ITBENCH, {
        BOOKINFO: (
            Rule("servicemesh.requests", _ns(f'''
                sum (
                  rate(
                    istio_tcp_connections_opened_total{{
                      source_canonical_service!~"load-generator*",
                      source_workload_namespace="{{namespace}}"
                    }}[5m]
                  )
                ) by ({_BI_GATEWAY_LABELS})
                == 0
            '''), "5m", "critical", _BI_NO_REQUESTS),
        ),
    }),
    Alert("NoDatabaseOperations", "The accounting service has stopped its PostgreSQL operations.", ITBENCH, {
        OTEL: (
            Rule("database", _ns('''
                sum by (service_name, namespace) (
                  rate(
                    traces_span_metrics_calls_total{
                      service_name="accounting",
                      span_name="postgresql",
                      span_kind="SPAN_KIND_CLIENT",
                      namespace="{namespace}"
                    }[5m]
                  )
                ) == 0
            '''), "5m", "warning", "Service {{ $labels.service_name }} in namespace {{ $labels.namespace }} has stopped "
                 "performing database operations"),
        ),
    }),
    Alert("CPUSpend", "The namespace's vCPU cost is above its budget (OpenCost).", ITBENCH, {
        ANY: (
            Rule("cost", 'sum by (namespace) (container_namespace_node:container_cpu_allocation_cost_per_node:avg5m'
                 '{container!="load-generator", namespace="{namespace}"}) > 3\n', "1m", "warning",
                 "{{ $labels.namespace }} has exceeded the allocated budget for vCPU for 5m (current: ${{ $value }})"),
        ),
    }),
    Alert("MemorySpend", "The namespace's RAM cost is above its budget (OpenCost).", ITBENCH, {
        ANY: (
            Rule("cost", 'sum by (namespace) (container_namespace_node:container_memory_allocation_gigabytes_cost_per_node'
                 ':avg5m{container!="load-generator", namespace="{namespace}"}) > 9\n', "1m", "warning",
                 "{{ $labels.namespace }} has exceeded the allocated budget for RAM for 5m (current: ${{ $value }})"),
        ),
    }),
    Alert("KubePodCrashLooping", "Pod is crash looping.", MIXIN, {
        ANY: (
            Rule("kubernetes-apps", 'max_over_time(kube_pod_container_status_waiting_reason{reason="CrashLoopBackOff", '
                 'job="kube-state-metrics", namespace="{namespace}"}[5m]) >= 1\n', "15m", "warning",
                 'Pod {{ $labels.namespace }}/{{ $labels.pod }} ({{ $labels.container }}) is in waiting state '
                 '(reason: "CrashLoopBackOff").'),
        ),
    }),
    Alert("KubePodNotReady", "Pod has been in a non-ready state for more than 15 minutes.", MIXIN, {
        ANY: (
            Rule("kubernetes-apps", _ns('''
                sum by (namespace, pod) (
                  max by(namespace, pod) (
                    kube_pod_status_phase{job="kube-state-metrics", namespace="{namespace}", phase=~"Pending|Unknown"}
                  ) * on(namespace, pod) group_left(owner_kind) topk by(namespace, pod) (
                    1, max by(namespace, pod, owner_kind) (kube_pod_owner{owner_kind!="Job"})
                  )
                ) > 0
            '''), "15m", "warning", "Pod {{ $labels.namespace }}/{{ $labels.pod }} has been in a non-ready state for "
                 "longer than 15 minutes."),
        ),
    }),
    Alert("KubeContainerWaiting", "Pod container waiting longer than 1 hour.", MIXIN, {
        ANY: (
            Rule("kubernetes-apps", 'sum by (namespace, pod, container) (kube_pod_container_status_waiting_reason'
                 '{job="kube-state-metrics", namespace="{namespace}"}) > 0\n', "1h", "warning",
                 "pod/{{ $labels.pod }} in namespace {{ $labels.namespace }} on container {{ $labels.container}} has "
                 "been in waiting state for longer than 1 hour."),
        ),
    }),
    Alert("KubeHpaMaxedOut", "HPA is running at max replicas.", MIXIN, {
        ANY: (
            Rule("kubernetes-apps", _ns('''
                kube_horizontalpodautoscaler_status_current_replicas{job="kube-state-metrics", namespace="{namespace}"}
                  ==
                kube_horizontalpodautoscaler_spec_max_replicas{job="kube-state-metrics", namespace="{namespace}"}
            '''), "15m", "warning", "HPA {{ $labels.namespace }}/{{ $labels.horizontalpodautoscaler  }} has been running "
                 "at max replicas for longer than 15 minutes."),
        ),
    }),
    Alert("KubeDeploymentRolloutStuck", "Deployment rollout is not progressing.", MIXIN, {
        ANY: (
            Rule("kubernetes-apps", _ns('''
                kube_deployment_status_condition{condition="Progressing", status="false",job="kube-state-metrics", namespace="{namespace}"}
                != 0
            '''), "15m", "warning", "Rollout of deployment {{ $labels.namespace }}/{{ $labels.deployment }} is not "
                 "progressing for longer than 15 minutes."),
        ),
    }),
    Alert("CPUThrottlingHigh", "Processes experience elevated CPU throttling.", MIXIN, {
        ANY: (
            Rule("kubernetes-resources", _ns('''
                sum(increase(container_cpu_cfs_throttled_periods_total{container!="", namespace="{namespace}"}[5m])) by (container, pod, namespace)
                  /
                sum(increase(container_cpu_cfs_periods_total{namespace="{namespace}"}[5m])) by (container, pod, namespace)
                  > ( 25 / 100 )
            '''), "15m", "info", "{{ $value | humanizePercentage }} throttling of CPU in namespace {{ $labels.namespace }} "
                 "for container {{ $labels.container }} in pod {{ $labels.pod }}."),
        ),
    }),
]}

STANDARD_ALERTS = tuple(sorted(CATALOGUE))

# What each standard alert measures, which decides where a fault can raise it (faults/alerting.py, E2035):
# `workload` the state of one workload's pods, `traffic` the requests a service carries, `cost` what the
# namespace spends.
WORKLOAD, TRAFFIC, COST = "workload", "traffic", "cost"

SCOPES: dict[str, str] = {
    "CPUThrottlingHigh": WORKLOAD, "FailedPodsDetected": WORKLOAD, "KubeContainerWaiting": WORKLOAD,
    "KubeDeploymentRolloutStuck": WORKLOAD, "KubeHpaMaxedOut": WORKLOAD, "KubePodCrashLooping": WORKLOAD,
    "KubePodNotReady": WORKLOAD,
    "HighRequestErrorRate": TRAFFIC, "HighRequestLatency": TRAFFIC, "NoDatabaseOperations": TRAFFIC,
    "NoRequestsOpened": TRAFFIC, "NoRequestsReceived": TRAFFIC,
    "CPUSpend": COST, "MemorySpend": COST,
}


# The alerts every scenario of a domain ships, whatever its fault, in each namespace its application runs in
# (backends/alert_rules.py): a FinOps agent that lists the PrometheusRules, or asks Prometheus for its rules, must
# not learn which waste the scenario has from which rules exist (`CPUSpend` alone says "CPU", `KubeHpaMaxedOut`
# alone "an autoscaler"). The union of what the domain's scenarios expect: every library scenario of the domain
# expects alerts of this set only, and all of one application ship the same rules (tests/backends/test_alert_rules.py).
DOMAIN_ALERTS: dict[str, tuple[str, ...]] = {
    "finops": ("CPUSpend", "KubeHpaMaxedOut", "MemorySpend"),
}


_SERVICE_MATCHER = re.compile(r'\bservice_name\s*(=~|!~|!=|=)\s*"((?:[^"\\]|\\.)*)"')
_CONTAINER_MATCHER = re.compile(r'\bcontainer\s*(=~|!~|!=|=)\s*"((?:[^"\\]|\\.)*)"')


def measures_container(name: str, application: str | None, container: str) -> bool:
    """Whether a catalogue alert's rules for `application` count the container `container` (their `container`
    matchers, as `measures_service` reads `service_name`): ITBench's cost alerts leave out the load generator's
    container (`container!="load-generator"`), whose spend is the benchmark's, not the application's."""
    return _measures(_CONTAINER_MATCHER, name, application, container)


def measures_service(name: str, application: str | None, service: str) -> bool:
    """Whether a catalogue alert's rules for `application` can fire on the OpenTelemetry service `service`
    (their `service_name` matchers, read as Prometheus does: a regex matches the whole value). ITBench's rules
    leave out clients and the feature-flag service (`service_name!~"flagd|load-generator"`) and measure
    database operations on accounting only. An alert outside the catalogue, or a rule without a
    `service_name` matcher, can fire on any service."""
    return _measures(_SERVICE_MATCHER, name, application, service)


def _measures(matcher: re.Pattern, name: str, application: str | None, value_of: str) -> bool:
    alert = CATALOGUE.get(name)
    if alert is None:
        return True
    service = value_of
    for rule in alert.rules_for(application):
        ok = True
        for op, value in matcher.findall(rule.expr):
            try:
                hit = re.fullmatch(value, service) is not None if "~" in op else value == service
            except re.error:
                hit = True
            if hit == op.startswith("!"):
                ok = False
                break
        if ok:
            return True
    return False


_LATENCY_BOUND = re.compile(r"_milliseconds_bucket.*>\s*([0-9.]+)\s*\Z", re.DOTALL)


def latency_threshold(name: str, application: str | None) -> float | None:
    """The least request duration, in seconds, above which a catalogue alert's rules for `application` fire (a
    latency quantile of a `*_milliseconds_bucket` histogram compared `> N`); None for an alert that measures no
    request duration."""
    alert = CATALOGUE.get(name)
    bounds = [float(m.group(1)) / 1000 for rule in (alert.rules_for(application) if alert else ())
              for m in [_LATENCY_BOUND.search(rule.expr.strip())] if m]
    return min(bounds) if bounds else None


def expression(rule_expr: str, namespace: str) -> str:
    """A catalogue expression for one namespace (only `{namespace}` is a placeholder: PromQL's own braces stay)."""
    return rule_expr.replace("{namespace}", namespace)


# ---- how long an alert's condition must hold before it fires ------------------------------------------------

_STRING = re.compile(r'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'|`[^`]*`')
_RANGE = re.compile(r"\[\s*([0-9a-z]+)\s*(?::\s*[0-9a-z]*\s*)?\]")
_PROM_PART = re.compile(r"(\d+)(ms|s|m|h|d|w|y)")
_PROM_UNITS = {"ms": 0.001, "s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800, "y": 31536000}
_RECORDED = re.compile(r"[A-Za-z_][A-Za-z0-9_]*:[A-Za-z0-9_:]*")  # a recording rule's series: `a:b:avg5m`
_ABSENCE = re.compile(r"(==\s*0+(?:\.0*)?\s*\Z)|\babsent_over_time\s*\(")


def prometheus_seconds(text: str) -> float | None:
    """Seconds of a Prometheus duration (`5m`, `1h30m`, `90s`, `0`); None when the text is not one."""
    text = str(text).strip()
    if text == "0":
        return 0.0
    pos, total = 0, 0.0
    for match in _PROM_PART.finditer(text):
        if match.start() != pos:
            return None
        total += int(match.group(1)) * _PROM_UNITS[match.group(2)]
        pos = match.end()
    return total if pos == len(text) and pos else None


@dataclass(frozen=True)
class Hold:
    """What a rule needs before it fires: its condition true for `for_` seconds, over range vectors that look back
    at most `window` seconds (`rate(x[2m])`: 120). `absence`: the condition tests that something stopped
    (`... == 0`, `absent_over_time`), so it holds only once a whole window has seen nothing; otherwise it holds
    while what the fault causes is within the window."""

    window: float
    for_: float
    absence: bool

    def longest(self, acting: float, bursts: int = 1) -> float:
        """The longest the condition can hold at a stretch when faults act `acting` seconds in all, in `bursts`
        separate stretches: what they cause stays in each burst's window after it (at most `window` more
        each), and an absence needs a whole window of it first."""
        if self.absence:
            return acting - self.window
        return acting + bursts * self.window


def rule_hold(expr: str, for_: str) -> Hold | None:
    """The Hold of a rule's PromQL and `for`; None when it cannot be told: a `for` that does not parse, a range
    that does not, or a recorded series (`x:y:avg5m`), which looks back as far as its recording rule does."""
    duration = prometheus_seconds(for_) if for_ else 0.0
    if duration is None:
        return None
    text = _STRING.sub('""', expr)
    windows = []
    for match in _RANGE.finditer(text):
        seconds = prometheus_seconds(match.group(1))
        if seconds is None:
            return None
        windows.append(seconds)
    if _RECORDED.search(_RANGE.sub("", text)):
        return None
    return Hold(max(windows, default=0.0), duration, bool(_ABSENCE.search(text.strip())))


# how long the alerts phase of a run waits for the expected alerts: ITBench's runs (and the Chainsaw and Argo gates,
# backends/engines.py) wait 30 minutes; `itbench run` waits its `--alert-timeout`, or what the expected alerts'
# rules need when that is longer (seconds_to_fire)
ALERT_WAIT_SECONDS = 1800
# after its condition starts to hold, an alert fires once it has held `for` and an evaluation has seen it: with a
# scrape to see the condition at all, two evaluation intervals (Prometheus evaluates every minute or less)
FIRING_MARGIN = 120.0


def seconds_to_fire(holds: list["Hold"]) -> float:
    """The least time after its condition starts that an alert with these rules (any one firing) can be seen
    firing: a rule's `for`, and for an absence the window it must first see empty, plus FIRING_MARGIN."""
    return min(h.for_ + (h.window if h.absence else 0.0) for h in holds) + FIRING_MARGIN


def alert_holds(name: str, application: str | None, own: dict | None = None) -> list[Hold] | None:
    """The Holds of every rule of an alert (the scenario's own `alert_rule`s by name in `own`, then the
    catalogue): it fires when any one fires. None when the alert is unknown or any rule's cannot be told."""
    if own and name in own:
        rules = [(own[name].expr, own[name].for_duration)]
    elif name in CATALOGUE:
        rules = [(r.expr, r.for_) for r in CATALOGUE[name].rules_for(application)]
    else:
        return None
    holds = [rule_hold(expr, for_) for expr, for_ in rules]
    return None if not holds or any(h is None for h in holds) else holds
