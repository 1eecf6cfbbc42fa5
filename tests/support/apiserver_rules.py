"""The rules the compiler attributes to the Kubernetes API server, each with an object that breaks it.

Each `Rule` names the upstream function that enforces it (kubernetes v1.33, the version of the vendored
schemas), the `validate.py` rule that mirrors it, and the field the API server names when it refuses the
object. tests/backends/test_apiserver_rules.py checks every object against `validate_object` and, when
`ITBENCH_KUBECONFIG` names a cluster's kubeconfig, against that cluster's API server (a server-side dry
run): the server must refuse each broken object at the named field and accept the unbroken one.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Callable

CORE = "kubernetes pkg/apis/core/validation/validation.go"
APPS = "kubernetes pkg/apis/apps/validation/validation.go"
BATCH = "kubernetes pkg/apis/batch/validation/validation.go"
META = "kubernetes staging/src/k8s.io/apimachinery/pkg/api/validation"
TEMPLATE = "spec.template.spec."
C0 = TEMPLATE + "containers[0]."


def deployment() -> dict:
    """A Deployment the API server accepts; each rule breaks a copy of it (or of `namespace`, `service` ...)."""
    return {
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "rule-probe", "namespace": "default", "labels": {"app": "rule-probe"}},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"app": "rule-probe"}},
            "template": {
                "metadata": {"labels": {"app": "rule-probe"}},
                "spec": {
                    "containers": [{
                        "name": "main", "image": "registry.k8s.io/pause:3.10",
                        "ports": [{"name": "http", "containerPort": 8080}],
                        "env": [{"name": "MODE", "value": "probe"}],
                        "resources": {"requests": {"cpu": "100m", "memory": "64Mi"},
                                      "limits": {"cpu": "200m", "memory": "128Mi"}},
                        "securityContext": {"allowPrivilegeEscalation": False},
                        "volumeMounts": [{"name": "scratch", "mountPath": "/scratch"}],
                        "livenessProbe": {"tcpSocket": {"port": 8080}},
                    }],
                    "volumes": [{"name": "scratch", "emptyDir": {}}],
                },
            },
        },
    }


def namespace() -> dict:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "rule-probe"}}


def service() -> dict:
    return {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "rule-probe", "namespace": "default"},
            "spec": {"selector": {"app": "rule-probe"}, "ports": [{"port": 80, "targetPort": 8080}]}}


def cronjob() -> dict:
    template = deployment()["spec"]["template"]
    template["spec"]["restartPolicy"] = "Never"
    return {"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "rule-probe", "namespace": "default"},
            "spec": {"schedule": "*/5 * * * *", "jobTemplate": {"spec": {"template": template}}}}


@dataclass(frozen=True)
class Rule:
    name: str  # a short id (the test's id)
    ours: str  # the validate.py rule that mirrors it (SchemaIssue.rule)
    source: str  # the upstream file and function that enforce it
    field: str  # the field path the API server names in its refusal
    base: Callable[[], dict]  # builds the accepted object
    breaks: Callable[[dict], None]  # turns it into the refused one
    # what a current server (the local control plane's, v1.37) does with the broken object: "refuses" it;
    # "accepts" it where a later Kubernetes relaxed the rule, "defaults" it where its defaulting fills it in.
    # Either way the compiler keeps the rule (every server accepts what it accepts); the test says which.
    server: str = "refuses"

    def good(self) -> dict:
        return self.base()

    def bad(self) -> dict:
        obj = copy.deepcopy(self.base())
        self.breaks(obj)
        return obj


def _pod(obj: dict) -> dict:
    return obj["spec"]["template"]["spec"]


def _c0(obj: dict) -> dict:
    return _pod(obj)["containers"][0]


def _set(path: tuple, value) -> Callable[[dict], None]:
    def change(obj: dict) -> None:
        node = obj
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = value
    return change


def _second_container(obj: dict) -> None:
    second = copy.deepcopy(_c0(obj))
    second["ports"] = [{"name": "http", "containerPort": 8081}]
    _pod(obj)["containers"].append(second)


def _host_ports(obj: dict) -> None:
    _c0(obj)["ports"][0]["hostPort"] = 30080
    second = copy.deepcopy(_c0(obj))
    second["name"] = "side"
    second["ports"] = [{"name": "side", "containerPort": 8081, "hostPort": 30080}]
    _pod(obj)["containers"].append(second)


RULES: list[Rule] = [
    Rule("selector-matches-template", "selector-mismatch", f"{APPS}, ValidateDeploymentSpec",
         "spec.template.metadata.labels", deployment, _set(("spec", "selector", "matchLabels", "app"), "other")),
    Rule("selector-not-empty", "selector-mismatch", f"{APPS}, ValidateDeploymentSpec (empty selector is invalid)",
         "spec.selector", deployment, _set(("spec", "selector"), {})),
    Rule("name-dns1123-subdomain", "dns1123-name", f"{APPS}, ValidateDeploymentName ({META} NameIsDNSSubdomain)",
         "metadata.name", deployment, _set(("metadata", "name"), "Web_Front")),
    Rule("namespace-name-dns1123-label", "dns1123-name", f"{CORE}, ValidateNamespaceName (NameIsDNSLabel)",
         "metadata.name", namespace, _set(("metadata", "name"), "rule.probe")),
    Rule("service-name-dns1035-label", "dns1123-name", f"{CORE}, ValidateServiceName (NameIsDNS1035Label)",
         "metadata.name", service, _set(("metadata", "name"), "1-probe"), server="accepts"),
    Rule("cronjob-name-52", "dns1123-name", f"{BATCH}, ValidateCronJobCreate (DNS1035LabelMaxLength - 11)",
         "metadata.name", cronjob, _set(("metadata", "name"), "c" * 53)),
    Rule("label-value-syntax", "label-syntax", f"{META} ValidateObjectMeta, validation.IsValidLabelValue",
         "metadata.labels", deployment, _set(("metadata", "labels", "app"), "rule probe")),
    Rule("container-port-range", "port-range", f"{CORE}, validateContainerPorts",
         C0 + "ports[0].containerPort", deployment, lambda o: _c0(o)["ports"][0].update(containerPort=70000)),
    Rule("privileged-without-escalation", "security-context", f"{CORE}, ValidateSecurityContext",
         C0 + "securityContext", deployment, lambda o: _c0(o)["securityContext"].update(privileged=True)),
    Rule("cap-sys-admin-without-escalation", "security-context", f"{CORE}, ValidateSecurityContext",
         C0 + "securityContext", deployment,
         lambda o: _c0(o)["securityContext"].update(capabilities={"add": ["CAP_SYS_ADMIN"]})),
    Rule("port-name-unique-in-container", "duplicate", f"{CORE}, validateContainerPorts",
         C0 + "ports[1].name", deployment, lambda o: _c0(o)["ports"].append({"name": "http", "containerPort": 9090})),
    Rule("port-name-iana", "schema", f"{CORE}, validateContainerPorts (IsValidPortName)",
         C0 + "ports[0].name", deployment, lambda o: _c0(o)["ports"][0].update(name="http-port-too-long")),
    Rule("volume-name-unique", "duplicate", f"{CORE}, ValidateVolumes",
         TEMPLATE + "volumes[1].name", deployment, lambda o: _pod(o)["volumes"].append({"name": "scratch",
                                                                                         "emptyDir": {}})),
    Rule("mount-path-unique", "duplicate", f"{CORE}, ValidateVolumeMounts",
         C0 + "volumeMounts[1].mountPath", deployment,
         lambda o: _c0(o)["volumeMounts"].append({"name": "scratch", "mountPath": "/scratch"})),
    Rule("volume-has-a-source", "volume-source", f"{CORE}, validateVolumeSource",
         TEMPLATE + "volumes[0]", deployment, lambda o: _pod(o)["volumes"][0].pop("emptyDir"), server="defaults"),
    Rule("volume-has-one-source", "volume-source", f"{CORE}, validateVolumeSource",
         TEMPLATE + "volumes[0]", deployment,
         lambda o: _pod(o)["volumes"][0].update(hostPath={"path": "/tmp"})),
    Rule("mount-names-a-volume", "volume-mount", f"{CORE}, ValidateVolumeMounts",
         C0 + "volumeMounts[0].name", deployment, lambda o: _c0(o)["volumeMounts"][0].update(name="missing")),
    Rule("request-at-most-limit", "resource-limits", f"{CORE}, validateResourceRequirements",
         C0 + "resources.requests", deployment,
         lambda o: _c0(o)["resources"]["requests"].update(memory="256Mi")),
    Rule("hugepages-limit-equals-request", "resource-limits",
         f"{CORE}, validateResourceRequirements (helper.IsOvercommitAllowed)",
         C0 + "resources", deployment,
         lambda o: _c0(o)["resources"]["requests"].update({"hugepages-2Mi": "2Mi"})),
    Rule("probe-has-a-handler", "handler", f"{CORE}, validateProbe / validateHandler",
         C0 + "livenessProbe", deployment, lambda o: _c0(o)["livenessProbe"].pop("tcpSocket")),
    Rule("probe-has-one-handler", "handler", f"{CORE}, validateProbe / validateHandler",
         C0 + "livenessProbe", deployment,
         lambda o: _c0(o)["livenessProbe"].update(exec={"command": ["true"]})),
    Rule("env-value-or-value-from", "env-source", f"{CORE}, validateEnvVarValueFrom",
         C0 + "env[0].valueFrom", deployment,
         lambda o: _c0(o)["env"][0].update(valueFrom={"fieldRef": {"fieldPath": "metadata.name"}})),
    Rule("env-value-from-names-a-source", "env-source", f"{CORE}, validateEnvVarValueFrom",
         C0 + "env[0].valueFrom", deployment,
         lambda o: (_c0(o)["env"][0].pop("value"), _c0(o)["env"][0].update(valueFrom={}))),
    Rule("secret-key-selector-names-its-secret", "env-source",
         f"{CORE}, validateSecretKeySelector (ValidateSecretName)",
         C0 + "env[0].valueFrom.secretKeyRef.name", deployment,
         lambda o: (_c0(o)["env"][0].pop("value"), _c0(o)["env"][0].update(
             valueFrom={"secretKeyRef": {"key": "password"}}))),
    Rule("config-map-key-selector-names-its-config-map", "env-source",
         f"{CORE}, validateConfigMapKeySelector (ValidateConfigMapName)",
         C0 + "env[0].valueFrom.configMapKeyRef.name", deployment,
         lambda o: (_c0(o)["env"][0].pop("value"), _c0(o)["env"][0].update(
             valueFrom={"configMapKeyRef": {"key": "mode"}}))),
    Rule("env-from-secret-names-its-secret", "env-source", f"{CORE}, validateEnvFrom (ValidateSecretName)",
         C0 + "envFrom[0].secretRef.name", deployment,
         lambda o: _c0(o).update(envFrom=[{"secretRef": {}}])),
    Rule("container-name-unique", "schema", f"{CORE}, validateContainers (allNames)",
         TEMPLATE + "containers[1].name", deployment, _second_container),
    Rule("host-port-unique", "duplicate", f"{CORE}, AccumulateUniqueHostPorts",
         TEMPLATE + "containers[1].ports[0].hostPort", deployment, _host_ports),
    Rule("name-required", "missing-field", f"{META} ValidateObjectMeta (name or generateName is required)",
         "metadata.name", deployment, lambda o: o["metadata"].pop("name")),
]
