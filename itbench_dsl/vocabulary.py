"""The language's word lists: the values a keyword of the language accepts.

The checker validates against them, the language server completes from them and the editor
grammar is generated from them, so each list has this one home.
"""

from __future__ import annotations

from .alerts import STANDARD_ALERTS

DOMAINS = ("sre", "ciso", "finops")
COMPLEXITIES = ("low", "medium", "high")
# the CISO task classes (`task NAME`) are their records' names: ciso/tasks.py, CISO_TASKS
# The standard alert catalogue (alerts.py: ITBench's monitoring stack, each alert with its Prometheus rule);
# a scenario may declare more (`alert_rule`).
KNOWN_ALERTS = STANDARD_ALERTS

# The object kinds `ready` tests (runtime/evaluator.py, ready_check): a workload's replicas, a pod's Ready
# condition. Any other object (a ConfigMap, a Service) is never "ready", so `ready` there is refused.
# An Ingress is ready when a controller of its class would route each of its backends to ready pods.
READY_KINDS = ("Deployment", "StatefulSet", "Pod", "Ingress")
# The kinds that run to completion, which `complete` tests (runtime/state.py, job_complete): a Job's
# Complete condition (or its completions succeeded), a CronJob's last scheduled run succeeded.
COMPLETE_KINDS = ("Job", "CronJob")
