"""The language's word lists: the values a keyword of the language accepts.

The checker validates against them, the language server completes from them and the editor
grammar is generated from them, so each list has this one home.
"""

from __future__ import annotations

DOMAINS = ("sre", "ciso", "finops")
COMPLEXITIES = ("low", "medium", "high")
CISO_TASKS = {
    "kyverno_policy": "Gen-CIS-b-K8s-Kyverno",
    "opa_kubectl": "Gen-CIS-b-K8s-Kubectl-OPA",
    "ansible_opa": "Gen-CIS-b-RHEL9-Ansible-OPA",
    "kyverno_update": "Upd-CIS-b-K8s-Kyverno",
}
# Alerts defined by ITBench's monitoring stack (its fault library and its scenarios' ground truth).
KNOWN_ALERTS = (
    "CPUSpend", "CPUThrottlingHigh", "FailedPodsDetected", "HighRequestErrorRate", "HighRequestLatency",
    "KubeContainerWaiting", "KubeDeploymentRolloutStuck", "KubeHpaMaxedOut", "KubePodCrashLooping",
    "KubePodNotReady", "MemorySpend", "NoDatabaseOperations", "NoRequestsOpened", "NoRequestsReceived",
)
