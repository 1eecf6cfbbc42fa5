"""The language's word lists: the values a keyword of the language accepts.

The checker validates against them, the language server completes from them and the editor
grammar is generated from them, so each list has this one home.
"""

from __future__ import annotations

from .ciso.tasks import TASK_CLASSES

DOMAINS = ("sre", "ciso", "finops")
COMPLEXITIES = ("low", "medium", "high")
# the CISO task classes (`task NAME`) and ITBench's id of each: their records are in ciso/tasks.py
CISO_TASKS = {c.task: c.scenario_type for c in TASK_CLASSES.values()}
# Alerts defined by ITBench's monitoring stack (its fault library and its scenarios' ground truth).
KNOWN_ALERTS = (
    "CPUSpend", "CPUThrottlingHigh", "FailedPodsDetected", "HighRequestErrorRate", "HighRequestLatency",
    "KubeContainerWaiting", "KubeDeploymentRolloutStuck", "KubeHpaMaxedOut", "KubePodCrashLooping",
    "KubePodNotReady", "MemorySpend", "NoDatabaseOperations", "NoRequestsOpened", "NoRequestsReceived",
)
