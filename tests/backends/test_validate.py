"""Tests of itbench_dsl.validate and of the schemas vendored by tools/vendor_schemas.py."""

from __future__ import annotations

import copy
import importlib.util
import json
import random
from importlib import resources
from pathlib import Path
from typing import Any, Callable

import pytest
import yaml
from jsonschema import Draft202012Validator

from itbench_dsl import validate
from itbench_dsl.validate import SchemaIssue, known_kinds, validate_object

REPO = Path(__file__).resolve().parents[2]
SHARED = Path(__file__).resolve().parents[3] / "shared"
REFERENCE = SHARED / "reference"

# One valid, realistic manifest per vendored kind.
VALID = {
    f"{doc['apiVersion']}/{doc['kind']}": doc
    for doc in yaml.safe_load_all(
        """
apiVersion: v1
kind: Namespace
metadata: {name: otel-demo, labels: {itbench.io/scenario: "61"}}
---
apiVersion: v1
kind: Service
metadata: {name: checkout, namespace: otel-demo, labels: {app.kubernetes.io/component: checkout}}
spec:
  type: ClusterIP
  selector: {opentelemetry.io/name: checkout}
  ports:
    - {name: tcp-service, port: 8080, targetPort: 8080}
    - {name: http, port: 80, targetPort: http, protocol: TCP}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: flagd-config, namespace: otel-demo}
data: {demo.flagd.json: '{"flags": {}}'}
---
apiVersion: v1
kind: Secret
metadata: {name: grafana, namespace: otel-demo}
type: Opaque
data: {admin-user: YWRtaW4=}
stringData: {admin-password: admin}
---
apiVersion: v1
kind: ServiceAccount
metadata: {name: opentelemetry-demo, namespace: otel-demo}
automountServiceAccountToken: false
---
apiVersion: v1
kind: Pod
metadata: {name: load-probe, namespace: otel-demo}
spec:
  restartPolicy: Never
  containers:
    - name: curl
      image: curlimages/curl:8.10.1
      command: [curl, -sf, "http://frontend:8080/"]
      resources: {limits: {cpu: 100m, memory: 64Mi}}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: data, namespace: otel-demo}
spec:
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 1Gi}}
---
apiVersion: v1
kind: ResourceQuota
metadata: {name: otel-demo-quota, namespace: otel-demo}
spec: {hard: {pods: "10", requests.memory: 1Gi, limits.cpu: "4"}}
---
apiVersion: v1
kind: LimitRange
metadata: {name: defaults, namespace: otel-demo}
spec:
  limits:
    - type: Container
      default: {cpu: 500m, memory: 256Mi}
      defaultRequest: {cpu: 100m, memory: 128Mi}
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: checkout
  namespace: otel-demo
  labels: {app.kubernetes.io/component: checkout, app.kubernetes.io/part-of: opentelemetry-demo}
spec:
  replicas: 1
  revisionHistoryLimit: 10
  selector: {matchLabels: {opentelemetry.io/name: checkout}}
  strategy: {type: RollingUpdate, rollingUpdate: {maxSurge: 25%, maxUnavailable: 0}}
  template:
    metadata:
      labels: {opentelemetry.io/name: checkout, app.kubernetes.io/component: checkout}
      annotations: {prometheus.io/scrape: "true"}
    spec:
      serviceAccountName: opentelemetry-demo
      containers:
        - name: checkout
          image: ghcr.io/open-telemetry/demo:2.1.3-checkout
          imagePullPolicy: IfNotPresent
          ports: [{containerPort: 8080, name: service}]
          env:
            - {name: OTEL_SERVICE_NAME, valueFrom: {fieldRef: {apiVersion: v1, fieldPath: "metadata.labels['app.kubernetes.io/component']"}}}
            - {name: CHECKOUT_PORT, value: "8080"}
          resources: {limits: {memory: 20Mi}}
          readinessProbe: {tcpSocket: {port: 8080}, periodSeconds: 5}
      initContainers:
        - name: wait-for-kafka
          image: busybox:latest
          command: [sh, -c, "until nc -z -v -w30 kafka 9092; do sleep 2; done;"]
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: opensearch, namespace: otel-demo}
spec:
  serviceName: opensearch-headless
  replicas: 1
  selector: {matchLabels: {app.kubernetes.io/name: opensearch}}
  template:
    metadata: {labels: {app.kubernetes.io/name: opensearch}}
    spec:
      containers:
        - {name: opensearch, image: "opensearchproject/opensearch:3.2.0", ports: [{containerPort: 9200, name: http}]}
  volumeClaimTemplates:
    - metadata: {name: data}
      spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 8Gi}}}
---
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: node-exporter, namespace: otel-demo}
spec:
  selector:
    matchLabels: {app: node-exporter}
    matchExpressions: [{key: tier, operator: In, values: [monitoring]}]
  template:
    metadata: {labels: {app: node-exporter, tier: monitoring}}
    spec:
      hostNetwork: true
      containers:
        - {name: node-exporter, image: "prom/node-exporter:v1.8.2", ports: [{containerPort: 9100, hostPort: 9100}]}
---
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: frontend, namespace: otel-demo}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: frontend}
  minReplicas: 1
  maxReplicas: 5
  metrics:
    - type: Resource
      resource: {name: cpu, target: {type: Utilization, averageUtilization: 80}}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: pod-reader, namespace: otel-demo}
rules: [{apiGroups: [""], resources: [pods, pods/log], verbs: [get, list, watch]}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: pod-reader, namespace: otel-demo}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: pod-reader}
subjects: [{kind: ServiceAccount, name: opentelemetry-demo, namespace: otel-demo}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: "system:itbench:agent-read"}
rules:
  - {apiGroups: ["", apps], resources: ["*"], verbs: [get, list, watch]}
  - {nonResourceURLs: [/metrics], verbs: [get]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: agent-read}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: "system:itbench:agent-read"}
subjects: [{kind: ServiceAccount, name: agent, namespace: itbench}]
---
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: deny-payment-ingress, namespace: otel-demo}
spec:
  podSelector: {matchLabels: {app.kubernetes.io/component: payment}}
  policyTypes: [Ingress]
  ingress:
    - from: [{podSelector: {matchLabels: {app.kubernetes.io/component: checkout}}}]
      ports: [{protocol: TCP, port: 8080}, {protocol: TCP, port: 9000, endPort: 9010}]
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: shop, namespace: otel-demo}
spec:
  ingressClassName: nginx
  rules:
    - host: shop.example.com
      http:
        paths:
          - {path: /, pathType: Prefix, backend: {service: {name: frontend, port: {name: http}}}}
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: opensearch-pdb, namespace: otel-demo}
spec: {maxUnavailable: 1, selector: {matchLabels: {app.kubernetes.io/name: opensearch}}}
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: itbench-high}
value: 1000000
globalDefault: false
description: For the workloads a scenario must keep running.
---
apiVersion: batch/v1
kind: Job
metadata: {name: seed-products, namespace: otel-demo}
spec:
  backoffLimit: 2
  template:
    metadata: {labels: {job: seed-products}}
    spec:
      restartPolicy: OnFailure
      containers: [{name: seed, image: "postgres:17", command: [psql, -c, "select 1"]}]
---
apiVersion: batch/v1
kind: CronJob
metadata: {name: nightly-report, namespace: otel-demo}
spec:
  schedule: "0 3 * * *"
  concurrencyPolicy: Forbid
  jobTemplate:
    metadata: {labels: {job: nightly-report}}
    spec:
      template:
        spec:
          restartPolicy: Never
          containers: [{name: report, image: "busybox:1.37", args: [date]}]
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata: {name: pod-guard}
webhooks:
- name: guard.example.com
  admissionReviewVersions: [v1]
  sideEffects: None
  failurePolicy: Fail
  clientConfig: {service: {name: guard, namespace: guard-system, path: /validate}}
  rules: [{operations: [CREATE], apiGroups: [""], apiVersions: [v1], resources: [pods]}]
---
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingWebhookConfiguration
metadata: {name: pod-defaults}
webhooks:
- name: defaults.example.com
  admissionReviewVersions: [v1]
  sideEffects: None
  clientConfig: {url: "https://defaults.example.com/mutate"}
  rules: [{operations: [CREATE, UPDATE], apiGroups: [apps], apiVersions: [v1], resources: [deployments]}]
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: no-host-network}
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules: [{operations: [CREATE, UPDATE], apiGroups: [""], apiVersions: [v1], resources: [pods]}]
  matchConditions: [{name: not-admin, expression: "request.userInfo.username != 'admin'"}]
  variables: [{name: spec, expression: object.spec}]
  validations: [{expression: "!has(variables.spec.hostNetwork) || !variables.spec.hostNetwork", message: no host network}]
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: no-host-network}
spec: {policyName: no-host-network, validationActions: [Deny]}
---
apiVersion: chaos-mesh.org/v1alpha1
kind: BlockChaos
metadata: {name: slow-disk, namespace: chaos-mesh}
spec:
  action: delay
  mode: one
  volumeName: data
  delay: {latency: 100ms}
  selector: {namespaces: [otel-demo], labelSelectors: {app.kubernetes.io/name: opensearch}}
---
apiVersion: chaos-mesh.org/v1alpha1
kind: DNSChaos
metadata: {name: dns-error, namespace: chaos-mesh}
spec:
  action: error
  mode: all
  patterns: [kafka.otel-demo.svc.cluster.local]
  selector: {namespaces: [otel-demo], labelSelectors: {app.kubernetes.io/component: checkout}}
---
apiVersion: chaos-mesh.org/v1alpha1
kind: HTTPChaos
metadata: {name: tamper-email, namespace: chaos-mesh}
spec:
  mode: all
  target: Request
  port: 8080
  method: POST
  path: /send_order_confirmation
  patch: {body: {type: JSON, value: '{"email": 42}'}}
  duration: 10m
  selector: {namespaces: [otel-demo], labelSelectors: {app.kubernetes.io/component: email}}
---
apiVersion: chaos-mesh.org/v1alpha1
kind: IOChaos
metadata: {name: io-latency, namespace: chaos-mesh}
spec:
  action: latency
  mode: one
  volumePath: /var/lib/postgresql/data
  delay: 200ms
  percent: 50
  selector: {namespaces: [otel-demo], labelSelectors: {app.kubernetes.io/component: postgresql}}
---
apiVersion: chaos-mesh.org/v1alpha1
kind: JVMChaos
metadata: {name: ad-gc, namespace: chaos-mesh}
spec:
  action: gc
  mode: all
  selector: {namespaces: [otel-demo], labelSelectors: {app.kubernetes.io/component: ad}}
---
apiVersion: chaos-mesh.org/v1alpha1
kind: KernelChaos
metadata: {name: kernel-fault, namespace: chaos-mesh}
spec:
  mode: one
  failKernRequest: {failtype: 0, probability: 10, callchain: [{funcname: __x64_sys_mount}]}
  selector: {namespaces: [otel-demo], labelSelectors: {app.kubernetes.io/component: cart}}
---
apiVersion: chaos-mesh.org/v1alpha1
kind: NetworkChaos
metadata: {name: cart-delay, namespace: chaos-mesh}
spec:
  action: delay
  mode: all
  delay: {latency: 500ms, jitter: 50ms, correlation: "25"}
  direction: to
  selector: {namespaces: [otel-demo], labelSelectors: {app.kubernetes.io/component: cart}}
---
apiVersion: chaos-mesh.org/v1alpha1
kind: PodChaos
metadata: {name: kill-cart, namespace: chaos-mesh}
spec:
  action: pod-kill
  mode: one
  selector: {namespaces: [otel-demo], labelSelectors: {app.kubernetes.io/component: cart}}
---
apiVersion: chaos-mesh.org/v1alpha1
kind: Schedule
metadata: {name: checkout-payment-network-loss, namespace: chaos-mesh}
spec:
  schedule: "@every 1m"
  type: NetworkChaos
  historyLimit: 1
  concurrencyPolicy: Forbid
  networkChaos:
    action: loss
    direction: to
    duration: 55s
    loss: {correlation: "0", loss: "100"}
    mode: all
    selector: {labelSelectors: {app.kubernetes.io/component: checkout}, namespaces: [otel-demo]}
    target: {mode: all, selector: {labelSelectors: {app.kubernetes.io/component: payment}, namespaces: [otel-demo]}}
---
apiVersion: chaos-mesh.org/v1alpha1
kind: StatusCheck
metadata: {name: frontend-up, namespace: chaos-mesh}
spec:
  type: HTTP
  mode: Continuous
  intervalSeconds: 5
  http: {url: "http://frontend.otel-demo:8080/", method: GET, criteria: {statusCode: "200"}}
---
apiVersion: chaos-mesh.org/v1alpha1
kind: StressChaos
metadata: {name: cpu-stress, namespace: chaos-mesh}
spec:
  mode: all
  stressors: {cpu: {workers: 2, load: 90}, memory: {workers: 1, size: 256MB}}
  selector: {namespaces: [otel-demo], labelSelectors: {app.kubernetes.io/component: recommendation}}
---
apiVersion: chaos-mesh.org/v1alpha1
kind: TimeChaos
metadata: {name: clock-skew, namespace: chaos-mesh}
spec:
  mode: one
  timeOffset: -10m
  selector: {namespaces: [otel-demo], labelSelectors: {app.kubernetes.io/component: payment}}
---
apiVersion: chaos-mesh.org/v1alpha1
kind: Workflow
metadata: {name: kill-then-delay, namespace: chaos-mesh}
spec:
  entry: entry
  templates:
    - {name: entry, templateType: Serial, deadline: 10m, children: [kill, delay]}
    - name: kill
      templateType: PodChaos
      deadline: 1m
      podChaos: {action: pod-kill, mode: one, selector: {namespaces: [otel-demo], labelSelectors: {app.kubernetes.io/component: cart}}}
    - name: delay
      templateType: NetworkChaos
      deadline: 5m
      networkChaos:
        action: delay
        mode: all
        delay: {latency: 200ms}
        selector: {namespaces: [otel-demo], labelSelectors: {app.kubernetes.io/component: cart}}
---
apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata: {name: disallow-host-network}
spec:
  validationFailureAction: Audit
  background: true
  rules:
    - name: host-network
      match: {any: [{resources: {kinds: [Pod]}}]}
      validate: {message: "Sharing the host network is not allowed.", pattern: {spec: {"=(hostNetwork)": "false"}}}
---
apiVersion: kyverno.io/v1
kind: Policy
metadata: {name: disallow-host-network, namespace: otel-demo}
spec:
  rules:
    - name: host-network
      match: {any: [{resources: {kinds: [Pod]}}]}
      validate: {message: "Sharing the host network is not allowed.", pattern: {spec: {"=(hostNetwork)": "false"}}}
---
apiVersion: security.istio.io/v1
kind: PeerAuthentication
metadata: {name: peer-authentication, namespace: book-info}
spec:
  mtls: {mode: STRICT}
---
apiVersion: security.istio.io/v1
kind: AuthorizationPolicy
metadata: {name: reviews-v2-shared, namespace: book-info}
spec:
  action: DENY
  targetRef: {group: gateway.networking.k8s.io, kind: Gateway, name: bookinfo-gateway}
  rules:
    - to: [{operation: {methods: [GET]}}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: bookinfo-gateway, namespace: book-info}
spec:
  gatewayClassName: istio
  listeners:
    - {name: http, port: 80, protocol: HTTP, allowedRoutes: {namespaces: {from: Same}}}
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: local-retain}
provisioner: kubernetes.io/no-provisioner
reclaimPolicy: Retain
volumeBindingMode: WaitForFirstConsumer
---
apiVersion: v1
kind: PersistentVolume
metadata: {name: geo-pv}
spec:
  capacity: {storage: 1Gi}
  accessModes: [ReadWriteOnce]
  storageClassName: local-retain
  hostPath: {path: /data/geo}
---
apiVersion: monitoring.coreos.com/v1
kind: PrometheusRule
metadata: {name: s-alerting-rules, namespace: otel-demo}
spec:
  groups:
    - name: s.goldensignal
      rules:
        - {alert: HighRequestErrorRate, expr: 'sum(rate(x[2m])) > 0', for: 3m, labels: {severity: critical}}
---
apiVersion: chainsaw.kyverno.io/v1alpha1
kind: Test
metadata: {name: s}
spec:
  steps:
    - name: deploy
      try:
        - apply: {file: manifests/topology.yaml}
---
apiVersion: argoproj.io/v1alpha1
kind: WorkflowTemplate
metadata: {name: s}
spec:
  entrypoint: run
  templates:
    - name: run
      container: {image: busybox, command: [sh, -c, "true"]}
---
apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {name: plan}
spec:
  entrypoint: run
  parallelism: 2
  templates:
    - name: run
      container: {image: busybox, command: [sh, -c, "true"]}
"""
    )
}


def issues_of(obj: dict) -> list[tuple[str, str]]:
    return [(issue.path, issue.rule) for issue in validate_object(obj)]


def sample(key: str) -> dict:
    return copy.deepcopy(VALID[key])


# --------------------------------------------------------------------------------------------
# Vendored files
# --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["kubernetes/v1.33-strict.json", "chaos-mesh/v1alpha1.json", "istio/v1.json",
                                  "gateway-api/v1.json"])
def test_schema_files_are_package_data_and_valid_json_schema(name: str) -> None:
    text = resources.files("itbench_dsl").joinpath("schemas", *name.split("/")).read_text(encoding="utf-8")
    bundle = json.loads(text)
    # Meta-validate every kind schema and definition in one pass (`kinds` is no JSON Schema keyword).
    Draft202012Validator.check_schema({"$defs": {**bundle["$defs"], **{f"kind:{k}": v for k, v in bundle["kinds"].items()}}})
    assert '"description":"' not in text  # dropped (PriorityClass's `description` field stays)


def test_known_kinds() -> None:
    kinds = known_kinds()
    assert kinds == sorted(kinds)
    # Kubernetes, Chaos Mesh, Kyverno, Istio, Gateway API, and the engines' kinds (PrometheusRule, Chainsaw's
    # Test, Argo's Workflow and WorkflowTemplate)
    assert len(kinds) == 29 + 13 + 2 + 2 + 1 + 4
    assert {"apps/v1/Deployment", "v1/Service", "autoscaling/v2/HorizontalPodAutoscaler",
            "chaos-mesh.org/v1alpha1/Schedule", "chaos-mesh.org/v1alpha1/NetworkChaos"} <= set(kinds)


def test_every_vendored_kind_has_a_sample() -> None:
    assert sorted(VALID) == known_kinds()


@pytest.mark.parametrize("key", sorted(VALID))
def test_valid_manifest_of_each_kind_passes(key: str) -> None:
    assert validate_object(sample(key)) == []


# --------------------------------------------------------------------------------------------
# Kinds
# --------------------------------------------------------------------------------------------

def test_unknown_kind() -> None:
    issues = validate_object({"apiVersion": "apps/v1", "kind": "Deploymnet", "metadata": {"name": "x"}})
    assert [(i.path, i.rule) for i in issues] == [("$.kind", "unknown-kind")]
    assert "apps/v1/Deployment" in issues[0].message


def test_unknown_api_version_of_known_kind() -> None:
    issues = validate_object({"apiVersion": "autoscaling/v1", "kind": "HorizontalPodAutoscaler", "metadata": {"name": "x"}})
    assert [(i.path, i.rule) for i in issues] == [("$.apiVersion", "unknown-kind")]
    assert "autoscaling/v2" in issues[0].message


def test_unvendored_kind_is_never_accepted() -> None:
    route = {"apiVersion": "networking.istio.io/v1", "kind": "VirtualService", "metadata": {"name": "vs"}, "spec": {}}
    assert issues_of(route) == [("$.kind", "unknown-kind")]


def test_missing_api_version_and_kind() -> None:
    assert issues_of({"metadata": {"name": "x"}}) == [("$.apiVersion", "missing-field"), ("$.kind", "missing-field")]


def test_non_mapping_manifest() -> None:
    assert issues_of([1, 2]) == [("$", "schema")]  # type: ignore[arg-type]


# --------------------------------------------------------------------------------------------
# Schema errors
# --------------------------------------------------------------------------------------------

def test_additional_property_typo_names_the_field() -> None:
    deployment = sample("apps/v1/Deployment")
    deployment["spec"]["replica"] = 2
    [issue] = validate_object(deployment)
    assert issue == SchemaIssue("$.spec.replica", issue.message, "schema")
    assert "'replica'" in issue.message and "'replicas'" in issue.message


def test_deep_typo_path() -> None:
    deployment = sample("apps/v1/Deployment")
    deployment["spec"]["template"]["spec"]["containers"][0]["ports"][0]["containerPrt"] = 8080
    assert ("$.spec.template.spec.containers[0].ports[0].containerPrt", "schema") in issues_of(deployment)


def test_type_enum_and_required_messages() -> None:
    deployment = sample("apps/v1/Deployment")
    container = deployment["spec"]["template"]["spec"]["containers"][0]
    container["ports"][0]["containerPort"] = "8080"
    del container["image"]  # optional in the API: no issue
    del deployment["spec"]["template"]["spec"]["initContainers"][0]["name"]
    issues = {i.path: i for i in validate_object(deployment)}
    assert issues["$.spec.template.spec.containers[0].ports[0].containerPort"].message == \
        'Must be of type integer, not string "8080".'
    assert issues["$.spec.template.spec.initContainers[0].name"].message == "Required field 'name' is missing."

    schedule = sample("chaos-mesh.org/v1alpha1/Schedule")
    schedule["spec"]["concurrencyPolicy"] = "Replace"
    [issue] = validate_object(schedule)
    assert issue.path == "$.spec.concurrencyPolicy"
    assert issue.message == 'Must be one of "Forbid" or "Allow", not "Replace".'


def test_int_or_string_and_quantity_messages() -> None:
    deployment = sample("apps/v1/Deployment")
    deployment["spec"]["strategy"]["rollingUpdate"]["maxSurge"] = True
    deployment["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"]["memory"] = [20]
    issues = {i.path: i.message for i in validate_object(deployment)}
    assert issues["$.spec.strategy.rollingUpdate.maxSurge"] == "Must be of type integer or string, not boolean true."
    assert issues["$.spec.template.spec.containers[0].resources.limits.memory"] == \
        "Must be of type number or string, not an array."


def test_all_errors_reported_and_sorted_by_path() -> None:
    deployment = sample("apps/v1/Deployment")
    containers = deployment["spec"]["template"]["spec"]["containers"]
    for i in range(1, 12):
        containers.append({"name": f"c{i}", "image": "x", "ports": [{"containerPort": 1000 + i}]})
    containers[2]["imagePullPolicy"] = 3
    containers[10]["imagePullPolicy"] = 3
    deployment["spec"]["paused"] = "no"
    deployment["metadata"]["lables"] = {}
    paths = [issue.path for issue in validate_object(deployment)]
    assert paths == [
        "$.metadata.lables",
        "$.spec.paused",
        "$.spec.template.spec.containers[2].imagePullPolicy",
        "$.spec.template.spec.containers[10].imagePullPolicy",
    ]


def test_label_keys_are_quoted_in_paths() -> None:
    deployment = sample("apps/v1/Deployment")
    deployment["metadata"]["labels"]["app.kubernetes.io/part-of"] = 3
    assert issues_of(deployment) == [("$.metadata.labels['app.kubernetes.io/part-of']", "schema")]


# --------------------------------------------------------------------------------------------
# Own rules
# --------------------------------------------------------------------------------------------

def _set(path: str, value: Any) -> Callable[[dict], None]:
    """Mutator setting a dotted path (integers index lists)."""
    def mutate(obj: dict) -> None:
        *parents, last = [int(p) if p.isdigit() else p for p in path.split(".")]
        for part in parents:
            obj = obj[part]
        obj[last] = value
    return mutate


def _delete(path: str) -> Callable[[dict], None]:
    def mutate(obj: dict) -> None:
        *parents, last = [int(p) if p.isdigit() else p for p in path.split(".")]
        for part in parents:
            obj = obj[part]
        del obj[last]
    return mutate


POD = "spec.template.spec"
CONTAINER = f"{POD}.containers.0"
OWN_RULES = [
    # selector-mismatch
    ("apps/v1/Deployment", _set("spec.selector.matchLabels", {"opentelemetry.io/name": "cart"}),
     "$.spec.selector.matchLabels['opentelemetry.io/name']", "selector-mismatch"),
    ("apps/v1/Deployment", _set("spec.selector.matchLabels", {"tier": "web"}),
     "$.spec.selector.matchLabels.tier", "selector-mismatch"),
    ("apps/v1/Deployment", _set("spec.selector", {}), "$.spec.selector", "selector-mismatch"),
    ("apps/v1/StatefulSet", _set("spec.template.metadata.labels", {"app": "other"}),
     "$.spec.selector.matchLabels['app.kubernetes.io/name']", "selector-mismatch"),
    ("apps/v1/DaemonSet", _set("spec.template.metadata.labels.tier", "batch"),
     "$.spec.selector.matchExpressions[0]", "selector-mismatch"),
    ("batch/v1/Job", _set("spec.selector", {"matchLabels": {"job": "other"}}),
     "$.spec.selector.matchLabels.job", "selector-mismatch"),
    # missing-field
    ("apps/v1/Deployment", _delete("metadata.name"), "$.metadata.name", "missing-field"),
    ("v1/ConfigMap", _delete("metadata"), "$.metadata.name", "missing-field"),
    ("chaos-mesh.org/v1alpha1/Schedule", _set("metadata.name", ""), "$.metadata.name", "missing-field"),
    # dns1123-name
    ("apps/v1/Deployment", _set("metadata.name", "Checkout_Service"), "$.metadata.name", "dns1123-name"),
    ("apps/v1/Deployment", _set("metadata.name", "a" * 254), "$.metadata.name", "dns1123-name"),
    ("v1/Service", _set("metadata.name", "checkout.v2"), "$.metadata.name", "dns1123-name"),
    ("v1/Service", _set("metadata.name", "2checkout"), "$.metadata.name", "dns1123-name"),
    ("v1/Namespace", _set("metadata.name", "otel.demo"), "$.metadata.name", "dns1123-name"),
    ("batch/v1/CronJob", _set("metadata.name", "n" * 53), "$.metadata.name", "dns1123-name"),
    ("rbac.authorization.k8s.io/v1/ClusterRole", _set("metadata.name", "a/b"), "$.metadata.name", "dns1123-name"),
    ("v1/Secret", _set("metadata.namespace", "Otel-Demo"), "$.metadata.namespace", "dns1123-name"),
    ("apps/v1/Deployment", _set(f"{CONTAINER}.name", "Checkout"),
     "$.spec.template.spec.containers[0].name", "dns1123-name"),
    ("chaos-mesh.org/v1alpha1/Schedule", _set("spec.networkChaos.target.selector.namespaces", ["otel_demo"]),
     "$.spec.networkChaos.target.selector.namespaces[0]", "dns1123-name"),
    # label-syntax
    ("apps/v1/Deployment", _set("metadata.labels.-bad", "x"), "$.metadata.labels['-bad']", "label-syntax"),
    ("apps/v1/Deployment", _set("metadata.labels.app", "v" * 64), "$.metadata.labels.app", "label-syntax"),
    ("apps/v1/Deployment", _set("metadata.labels.app", "a b"), "$.metadata.labels.app", "label-syntax"),
    ("apps/v1/Deployment", _set("metadata.labels", {"Example.com/app": "x"}),
     "$.metadata.labels['Example.com/app']", "label-syntax"),
    ("apps/v1/Deployment", _set("metadata.labels", {"a/b/c": "x"}), "$.metadata.labels['a/b/c']", "label-syntax"),
    ("apps/v1/Deployment", _set("spec.template.metadata.annotations", {"prometheus.io/scrape_": "true"}),
     "$.spec.template.metadata.annotations['prometheus.io/scrape_']", "label-syntax"),
    ("v1/Service", _set("spec.selector", {"opentelemetry.io/name": "check out"}),
     "$.spec.selector['opentelemetry.io/name']", "label-syntax"),
    ("chaos-mesh.org/v1alpha1/Schedule", _set("spec.networkChaos.selector.labelSelectors", {"app": "-x"}),
     "$.spec.networkChaos.selector.labelSelectors.app", "label-syntax"),
    # port-range
    ("apps/v1/Deployment", _set(f"{CONTAINER}.ports.0.containerPort", 0),
     "$.spec.template.spec.containers[0].ports[0].containerPort", "port-range"),
    ("apps/v1/Deployment", _set(f"{CONTAINER}.ports.0.containerPort", 65536),
     "$.spec.template.spec.containers[0].ports[0].containerPort", "port-range"),
    ("apps/v1/Deployment", _set(f"{CONTAINER}.readinessProbe.tcpSocket.port", 70000),
     "$.spec.template.spec.containers[0].readinessProbe.tcpSocket.port", "port-range"),
    ("apps/v1/DaemonSet", _set("spec.template.spec.containers.0.ports.0.hostPort", -1),
     "$.spec.template.spec.containers[0].ports[0].hostPort", "port-range"),
    ("v1/Service", _set("spec.ports.0.port", 0), "$.spec.ports[0].port", "port-range"),
    ("v1/Service", _set("spec.ports.0.targetPort", 80800), "$.spec.ports[0].targetPort", "port-range"),
    ("v1/Service", _set("spec.ports.0.nodePort", 99999), "$.spec.ports[0].nodePort", "port-range"),
    ("networking.k8s.io/v1/NetworkPolicy", _set("spec.ingress.0.ports.1.endPort", 65536),
     "$.spec.ingress[0].ports[1].endPort", "port-range"),
    # schema-level extras: duplicates and port names
    ("apps/v1/Deployment", _set(f"{CONTAINER}.env.1.name", "OTEL_SERVICE_NAME"),
     "$.spec.template.spec.containers[0].env[1].name", "schema"),
    ("apps/v1/Deployment", _set(f"{POD}.initContainers.0.name", "checkout"),
     "$.spec.template.spec.containers[0].name", "schema"),  # reported on the later one
    ("apps/v1/Deployment", _set(f"{CONTAINER}.ports.0.name", "checkout-service-port"),
     "$.spec.template.spec.containers[0].ports[0].name", "schema"),
]


@pytest.mark.parametrize(("key", "mutate", "path", "rule"), OWN_RULES,
                         ids=[f"{rule}:{path}" for _, _, path, rule in OWN_RULES])
def test_own_rule(key: str, mutate: Callable[[dict], None], path: str, rule: str) -> None:
    obj = sample(key)
    mutate(obj)
    issues = validate_object(obj)
    assert [(i.path, i.rule) for i in issues] == [(path, rule)], issues
    assert issues[0].message.endswith((".", "?"))


@pytest.mark.parametrize(("key", "mutate"), [
    ("v1/ConfigMap", _set("metadata.name", "flagd.config")),  # subdomains may have dots
    ("rbac.authorization.k8s.io/v1/ClusterRole", _set("metadata.name", "system:aggregate-to-view")),
    ("v1/Service", _set("spec.ports.0.targetPort", 0)),  # "unset": defaults to port
    ("v1/Service", _set("spec.ports.0.targetPort", "http")),
    ("apps/v1/Deployment", _set("metadata.labels.empty", "")),
    ("apps/v1/Deployment", _set("spec.selector.matchExpressions", [{"key": "gone", "operator": "DoesNotExist"}])),
    ("batch/v1/Job", _delete("spec.template.metadata")),  # Job selectors are generated
    ("apps/v1/Deployment", _set(f"{CONTAINER}.env.1.valueFrom", None)),
])
def test_own_rules_accept(key: str, mutate: Callable[[dict], None]) -> None:
    obj = sample(key)
    mutate(obj)
    assert validate_object(obj) == []


def test_random_mistyped_values_never_crash() -> None:
    """Replace random nodes of every sample by ill-typed values: issues, never an exception."""
    junk = [None, 0, -1, 70000, 1.5, True, "", "X Y", "a" * 300, [], {}, [None], {"": None},
            {1: 2}, {None: "x"}, [{"name": 3}], {"matchLabels": 5}, {"key": [], "operator": "In"}]
    rng = random.Random(20240601)

    def node_paths(node: Any, path: tuple = ()) -> list[tuple]:
        children = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
        return [path] + [p for key, child in children for p in node_paths(child, path + (key,))]

    for key in sorted(VALID):
        paths = node_paths(VALID[key])[1:]
        for _ in range(25):
            obj = sample(key)
            for path in rng.sample(paths, k=min(2, len(paths))):
                parent = obj
                try:
                    for part in path[:-1]:
                        parent = parent[part]
                    parent[path[-1]] = copy.deepcopy(rng.choice(junk))
                except (KeyError, IndexError, TypeError):
                    pass  # an earlier replacement removed this path
            for issue in validate_object(obj):
                assert issue.path.startswith("$") and issue.message and issue.rule


def test_own_rules_survive_mistyped_objects() -> None:
    deployment = sample("apps/v1/Deployment")
    deployment["metadata"]["labels"] = ["not", "a", "map"]
    deployment["spec"]["selector"] = "app=checkout"
    deployment["spec"]["template"]["spec"]["containers"] = {"name": "x"}
    issues = issues_of(deployment)
    assert issues and {rule for _, rule in issues} == {"schema"}


# --------------------------------------------------------------------------------------------
# API server rules on pod specs (pkg/apis/core/validation: ValidatePodSpec and what it calls)
# --------------------------------------------------------------------------------------------

INIT = f"{POD}.initContainers.0"
SPEC = "$.spec.template.spec"
C0 = f"{SPEC}.containers[0]"
MOUNTED = _set(f"{POD}.volumes", [{"name": "data", "emptyDir": {}},
                                  {"name": "cache", "emptyDir": {"medium": "Memory"}}])


def _both(*mutators: Callable[[dict], None]) -> Callable[[dict], None]:
    def mutate(obj: dict) -> None:
        for mutator in mutators:
            mutator(obj)
    return mutate


def _append(path: str, value: Any) -> Callable[[dict], None]:
    def mutate(obj: dict) -> None:
        for part in [int(p) if p.isdigit() else p for p in path.split(".")]:
            obj = obj[part]
        obj.append(copy.deepcopy(value))
    return mutate


# (kind, mutation breaking one rule, path of the one issue, rule, words of its message)
POD_SPEC_RULES = [
    # security-context (ValidateSecurityContext)
    ("apps/v1/Deployment", _set(f"{CONTAINER}.securityContext", {"privileged": True, "allowPrivilegeEscalation": False}),
     f"{C0}.securityContext.allowPrivilegeEscalation", "security-context", "`privileged: true`"),
    ("apps/v1/Deployment", _set(f"{INIT}.securityContext", {"allowPrivilegeEscalation": False, "privileged": True,
                                                             "capabilities": {"drop": ["ALL"]}}),
     f"{SPEC}.initContainers[0].securityContext.allowPrivilegeEscalation", "security-context", "`privileged: true`"),
    ("apps/v1/Deployment", _set(f"{CONTAINER}.securityContext", {"allowPrivilegeEscalation": False, "capabilities": {
        "add": ["NET_BIND_SERVICE", "CAP_SYS_ADMIN"]}}),
     f"{C0}.securityContext.capabilities.add[1]", "security-context", "CAP_SYS_ADMIN"),
    # container names unique across the three lists (validateInitContainers, validateEphemeralContainers)
    ("apps/v1/Deployment", _set(f"{POD}.ephemeralContainers", [{"name": "wait-for-kafka", "image": "busybox:1.37"}]),
     f"{SPEC}.ephemeralContainers[0].name", "schema", "already used at $.spec.template.spec.initContainers[0]"),
    ("apps/v1/Deployment", _append(f"{POD}.initContainers", {"name": "wait-for-kafka", "image": "busybox:1.37"}),
     f"{SPEC}.initContainers[1].name", "schema", "already used"),
    # duplicate: port names in a container (validateContainerPorts), host ports (checkHostPortConflicts)
    ("apps/v1/Deployment", _append(f"{CONTAINER}.ports", {"containerPort": 9090, "name": "service"}),
     f"{C0}.ports[1].name", "duplicate", "ports[0]"),
    ("apps/v1/DaemonSet", _append("spec.template.spec.containers", {
        "name": "sidecar", "image": "busybox:1.37", "ports": [{"containerPort": 9101, "hostPort": 9100}]}),
     f"{SPEC}.containers[1].ports[0].hostPort", "duplicate", "hostPort 9100/TCP"),
    # duplicate and volume-source (ValidateVolumes, validateVolumeSource), dns1123-name of a volume
    ("apps/v1/Deployment", _set(f"{POD}.volumes", [{"name": "data", "emptyDir": {}},
                                                   {"name": "data", "configMap": {"name": "flagd-config"}}]),
     f"{SPEC}.volumes[1].name", "duplicate", "volumes[0]"),
    ("apps/v1/Deployment", _set(f"{POD}.volumes", [{"name": "data"}]), f"{SPEC}.volumes[0]", "volume-source",
     "no source"),
    ("apps/v1/Deployment", _set(f"{POD}.volumes", [{"name": "data", "emptyDir": {},
                                                   "persistentVolumeClaim": {"claimName": "data"}}]),
     f"{SPEC}.volumes[0]", "volume-source", "2 sources (emptyDir, persistentVolumeClaim)"),
    ("apps/v1/Deployment", _set(f"{POD}.volumes", [{"name": "Data_1", "emptyDir": {}}]),
     f"{SPEC}.volumes[0].name", "dns1123-name", "DNS-1123 label"),
    # volume-mount and duplicate mountPath (ValidateVolumeMounts)
    ("apps/v1/Deployment", _both(MOUNTED, _set(f"{CONTAINER}.volumeMounts", [{"name": "dta", "mountPath": "/data"}])),
     f"{C0}.volumeMounts[0].name", "volume-mount", "did you mean 'data'?"),
    ("apps/v1/Deployment", _set(f"{INIT}.volumeMounts", [{"name": "data", "mountPath": "/data"}]),
     f"{SPEC}.initContainers[0].volumeMounts[0].name", "volume-mount", "the pod has no volume"),
    ("apps/v1/StatefulSet", _set("spec.template.spec.containers.0.volumeMounts", [{"name": "logs", "mountPath": "/l"}]),
     f"{C0}.volumeMounts[0].name", "volume-mount", "the pod's volumes are data"),  # the claim template is a volume
    ("apps/v1/Deployment", _both(MOUNTED, _set(f"{CONTAINER}.volumeMounts", [{"name": "data", "mountPath": "/data"},
                                                                            {"name": "cache", "mountPath": "/data"}])),
     f"{C0}.volumeMounts[1].mountPath", "duplicate", "volumeMounts[0]"),
    # resource-limits (validateResourceRequirements), compared by value
    ("apps/v1/Deployment", _set(f"{CONTAINER}.resources", {"requests": {"cpu": "1"}, "limits": {"cpu": "500m"}}),
     f"{C0}.resources.requests.cpu", "resource-limits", "Request 1 of cpu is above its limit 500m"),
    ("apps/v1/Deployment", _set(f"{CONTAINER}.resources", {"requests": {"memory": "1Gi"}, "limits": {"memory": "512Mi"}}),
     f"{C0}.resources.requests.memory", "resource-limits", "above its limit 512Mi"),
    ("apps/v1/Deployment", _set(f"{CONTAINER}.resources", {"requests": {"memory": "1G"}, "limits": {"memory": "900Mi"}}),
     f"{C0}.resources.requests.memory", "resource-limits", "above"),  # 10^9 > 900 * 2^20
    ("apps/v1/Deployment", _set(f"{CONTAINER}.resources", {"requests": {"cpu": 2}, "limits": {"cpu": "1500m"}}),
     f"{C0}.resources.requests.cpu", "resource-limits", "Request 2 of cpu"),
    ("apps/v1/Deployment", _set(f"{CONTAINER}.resources", {"requests": {"nvidia.com/gpu": 1}, "limits": {"nvidia.com/gpu": 2}}),
     f"{C0}.resources.requests['nvidia.com/gpu']", "resource-limits", "must be equal"),
    ("apps/v1/Deployment", _set(f"{CONTAINER}.resources", {"requests": {"hugepages-2Mi": "2Mi", "memory": "64Mi"}}),
     f"{C0}.resources.requests['hugepages-2Mi']", "resource-limits", "needs a limit"),
    # handler (validateHandler): exactly one per probe and lifecycle hook
    ("apps/v1/Deployment", _set(f"{CONTAINER}.readinessProbe", {"periodSeconds": 5}),
     f"{C0}.readinessProbe", "handler", "no handler"),
    ("apps/v1/Deployment", _set(f"{CONTAINER}.readinessProbe", {"tcpSocket": {"port": 8080},
                                                               "httpGet": {"path": "/", "port": 8080}}),
     f"{C0}.readinessProbe.tcpSocket", "handler", "sets both `httpGet` and `tcpSocket`"),
    ("apps/v1/Deployment", _set(f"{CONTAINER}.livenessProbe", {"grpc": {"port": 9000}, "exec": {"command": ["true"]}}),
     f"{C0}.livenessProbe.grpc", "handler", "sets both `exec` and `grpc`"),
    ("apps/v1/Deployment", _set(f"{CONTAINER}.lifecycle", {"preStop": {}}),
     f"{C0}.lifecycle.preStop", "handler", "The preStop hook has no handler"),
    ("apps/v1/Deployment", _set(f"{CONTAINER}.lifecycle", {"postStart": {"exec": {"command": ["true"]},
                                                                         "sleep": {"seconds": 5}}}),
     f"{C0}.lifecycle.postStart.sleep", "handler", "postStart hook sets both `exec` and `sleep`"),
    # env-source (validateEnvVarValueFrom)
    ("apps/v1/Deployment", _set(f"{CONTAINER}.env.1.valueFrom", {"fieldRef": {"fieldPath": "metadata.name"}}),
     f"{C0}.env[1].valueFrom", "env-source", "both `value` and `valueFrom`"),
    ("apps/v1/Deployment", _set(f"{CONTAINER}.env.0.valueFrom", {}), f"{C0}.env[0].valueFrom", "env-source", "no source"),
    ("apps/v1/Deployment", _set(f"{CONTAINER}.env.0.valueFrom", {
        "fieldRef": {"fieldPath": "metadata.name"}, "secretKeyRef": {"name": "grafana", "key": "admin-user"}}),
     f"{C0}.env[0].valueFrom", "env-source", "2 sources"),
]


@pytest.mark.parametrize(("key", "mutate", "path", "rule", "words"), POD_SPEC_RULES,
                         ids=[f"{rule}:{path}" for _, _, path, rule, _ in POD_SPEC_RULES])
def test_pod_spec_rule(key: str, mutate: Callable[[dict], None], path: str, rule: str, words: str) -> None:
    obj = sample(key)
    mutate(obj)
    issues = validate_object(obj)
    assert [(i.path, i.rule) for i in issues] == [(path, rule)], issues
    assert words in issues[0].message and issues[0].message.endswith((".", "?")), issues[0].message


# Close to a rule above, and valid: the API server accepts each.
POD_SPEC_ACCEPTED = [
    # privileged without allowPrivilegeEscalation: false; the capability by its usual name (upstream
    # only refuses the literal CAP_SYS_ADMIN); the hardened baseline
    ("apps/v1/Deployment", _set(f"{CONTAINER}.securityContext", {"privileged": True})),
    ("apps/v1/Deployment", _set(f"{CONTAINER}.securityContext", {"privileged": True, "allowPrivilegeEscalation": True})),
    ("apps/v1/Deployment", _set(f"{CONTAINER}.securityContext", {"privileged": False, "allowPrivilegeEscalation": False})),
    ("apps/v1/Deployment", _set(f"{CONTAINER}.securityContext", {"allowPrivilegeEscalation": False,
                                                                 "capabilities": {"add": ["SYS_ADMIN"]}})),
    ("apps/v1/Deployment", _set(f"{POD}.ephemeralContainers", [{"name": "debug", "image": "busybox:1.37"}])),
    # a port name in two containers; one containerPort twice in a container (a warning upstream, not an error)
    ("apps/v1/Deployment", _set(f"{INIT}.ports", [{"containerPort": 8080, "name": "service"}])),
    ("apps/v1/Deployment", _append(f"{CONTAINER}.ports", {"containerPort": 8080})),
    ("apps/v1/Deployment", _append(f"{CONTAINER}.ports", {"containerPort": 8080, "protocol": "UDP", "name": "udp"})),
    # a host port again with another protocol, or in init containers (they run one at a time)
    ("apps/v1/DaemonSet", _append("spec.template.spec.containers", {
        "name": "sidecar", "image": "busybox:1.37", "ports": [{"containerPort": 9100, "hostPort": 9100, "protocol": "UDP"}]})),
    ("apps/v1/DaemonSet", _set("spec.template.spec.initContainers", [
        {"name": f"init-{i}", "image": "busybox:1.37", "ports": [{"containerPort": 9100, "hostPort": 9100}]} for i in (1, 2)])),
    # volumes with one source each (an empty emptyDir is one), mounted by name, one path per container
    ("apps/v1/Deployment", _both(MOUNTED, _set(f"{CONTAINER}.volumeMounts", [{"name": "data", "mountPath": "/data"},
                                                                            {"name": "cache", "mountPath": "/cache"}]),
                                 _set(f"{INIT}.volumeMounts", [{"name": "data", "mountPath": "/cache"}]))),
    ("apps/v1/StatefulSet", _set("spec.template.spec.containers.0.volumeMounts", [{"name": "data", "mountPath": "/d"}])),
    # requests at most their limits, by value
    ("apps/v1/Deployment", _set(f"{CONTAINER}.resources", {"requests": {"cpu": "500m", "memory": "512Mi"},
                                                           "limits": {"cpu": "1", "memory": "1Gi"}})),
    ("apps/v1/Deployment", _set(f"{CONTAINER}.resources", {"requests": {"cpu": "1000m", "memory": "1Gi"},
                                                           "limits": {"cpu": 1, "memory": "1073741824"}})),
    ("apps/v1/Deployment", _set(f"{CONTAINER}.resources", {"requests": {"cpu": "0.5", "memory": "1e3"},
                                                           "limits": {"cpu": "500m", "memory": "1k"}})),
    ("apps/v1/Deployment", _set(f"{CONTAINER}.resources", {"requests": {"cpu": "4", "memory": "2Gi"}})),  # no limits
    ("apps/v1/Deployment", _set(f"{CONTAINER}.resources", {"requests": {"nvidia.com/gpu": 1},
                                                           "limits": {"nvidia.com/gpu": "1"}})),
    # one handler per probe and hook
    ("apps/v1/Deployment", _set(f"{CONTAINER}.livenessProbe", {"grpc": {"port": 9000}, "periodSeconds": 10})),
    ("apps/v1/Deployment", _set(f"{CONTAINER}.lifecycle", {"preStop": {"sleep": {"seconds": 5}},
                                                           "postStart": {"exec": {"command": ["true"]}}})),
    # valueFrom beside an empty value (upstream tests `len(value) != 0`)
    ("apps/v1/Deployment", _set(f"{CONTAINER}.env.0.value", "")),
]


@pytest.mark.parametrize(("key", "mutate"), POD_SPEC_ACCEPTED, ids=[str(i) for i in range(len(POD_SPEC_ACCEPTED))])
def test_pod_spec_rule_accepts(key: str, mutate: Callable[[dict], None]) -> None:
    obj = sample(key)
    mutate(obj)
    assert validate_object(obj) == []


@pytest.mark.parametrize(("key", "spec_path"), [
    ("v1/Pod", ("spec",)),
    ("apps/v1/Deployment", ("spec", "template", "spec")),
    ("apps/v1/StatefulSet", ("spec", "template", "spec")),
    ("apps/v1/DaemonSet", ("spec", "template", "spec")),
    ("batch/v1/Job", ("spec", "template", "spec")),
    ("batch/v1/CronJob", ("spec", "jobTemplate", "spec", "template", "spec")),
])
def test_pod_spec_rules_reach_every_pod_spec(key: str, spec_path: tuple[str, ...]) -> None:
    obj = sample(key)
    pod_spec = obj
    for part in spec_path:
        pod_spec = pod_spec[part]
    pod_spec["containers"][0]["volumeMounts"] = [{"name": "nowhere", "mountPath": "/x"}]
    pod_spec["containers"][0]["securityContext"] = {"privileged": True, "allowPrivilegeEscalation": False}
    prefix = "$." + ".".join(spec_path) + ".containers[0]"
    assert issues_of(obj) == [(f"{prefix}.securityContext.allowPrivilegeEscalation", "security-context"),
                              (f"{prefix}.volumeMounts[0].name", "volume-mount")]


def test_pod_spec_rules_skip_mistyped_volumes() -> None:
    """A volumes list the schema refuses leaves the declared names unknown: mounts are not judged."""
    deployment = sample("apps/v1/Deployment")
    spec = deployment["spec"]["template"]["spec"]
    spec["volumes"] = {"name": "data", "emptyDir": {}}
    spec["containers"][0]["volumeMounts"] = [{"name": "data", "mountPath": "/data"}]
    assert {rule for _, rule in issues_of(deployment)} == {"schema"}


def test_quantities_compare_by_value() -> None:
    quantity = validate._quantity
    assert quantity("500m") < quantity("1") == quantity(1) == quantity("1000m") == quantity("0.001k")
    assert quantity("512Mi") < quantity("1Gi") == quantity(2**30) and quantity("1G") < quantity("1Gi")
    assert quantity("1e3") == quantity("1k") and quantity("1E") == 10**18 and quantity("2.5Gi") == 5 * 2**29
    assert quantity("100n") == quantity("0.1u") and quantity(0.25) == quantity("250m")
    for junk in ("", "m", "1x", "1 Gi", "Gi1", None, True, [], "1ki"):
        assert quantity(junk) is None, junk


# Through the compiler: an inline topology whose generated Deployment the API server would refuse.
BROKEN_POD_SPEC = b'''scenario "shop-cart" {
  domain sre
  complexity low
  description "The cart deployment is scaled to zero."
  topology {
    namespace "shop"
    deployment "cart" {
      image = "ghcr.io/example/cart:1.0"
      mount "cache" = "/cache"
      resources {
        requests {
          cpu = 2
        }
        limits {
          cpu = 500m
        }
      }
    }
  }
  fault scaled_to_zero on deployment "cart"
}
'''


def test_refused_pod_spec_fails_to_compile_at_its_statement() -> None:
    from itbench_dsl.compiler import compile_source
    from itbench_dsl.diagnostics import Diagnostics

    diags = Diagnostics()
    result = compile_source(BROKEN_POD_SPEC, "input.itb", diags)
    assert result.files == {}
    assert [d.code for d in diags.items] == ["E3002", "E3002"]
    statement = BROKEN_POD_SPEC.index(b'"cart" {')
    for diag in diags.items:
        assert diag.path == "input.itb" and diag.span.start == statement, diag
    requests, mount = (d.message for d in diags.items)
    assert requests.startswith("Deployment `cart` (manifests/topology.yaml): "
                               "$.spec.template.spec.containers[0].resources.requests.cpu: Request 2 of cpu")
    assert "$.spec.template.spec.containers[0].volumeMounts[0].name: Volume mount 'cache' names no volume" in mount
    # the same scenario with the volume declared and the request within its limit compiles clean
    fixed = BROKEN_POD_SPEC.replace(b"cpu = 2", b"cpu = 250m").replace(
        b'mount "cache" = "/cache"', b'mount "cache" = "/cache"\n      volume "cache" {\n        empty_dir = true\n      }')
    diags = Diagnostics()
    assert compile_source(fixed, "input.itb", diags).files and diags.items == []


def test_catalogue_objects_pass_the_api_server_rules() -> None:
    """Every CIS control's gap and compliant objects could be applied: a gap that the API server
    refuses could never be deployed (CIS 5.2.2's privileged container once kept the baseline's
    allowPrivilegeEscalation: false)."""
    from itbench_dsl import ciso

    checked = 0
    for control in ciso.K8S_CONTROLS:
        for violating in (True, False):
            for obj in control.objects("ciso-target", violating):
                assert validate_object(obj) == [], (control.id, violating, obj["kind"], obj["metadata"]["name"])
                checked += 1
    assert checked >= 2 * len(ciso.K8S_CONTROLS)


# --------------------------------------------------------------------------------------------
# Chaos Mesh
# --------------------------------------------------------------------------------------------

def test_schedule_with_misspelled_action() -> None:
    schedule = sample("chaos-mesh.org/v1alpha1/Schedule")
    schedule["spec"]["networkChaos"]["action"] = "lose"
    [issue] = validate_object(schedule)
    assert (issue.path, issue.rule) == ("$.spec.networkChaos.action", "schema")
    assert '"loss"' in issue.message and '"lose"' in issue.message


def test_chaos_unknown_fields_and_metadata() -> None:
    schedule = sample("chaos-mesh.org/v1alpha1/Schedule")
    schedule["spec"]["networkChaos"]["loss"]["los"] = "100"
    schedule["metadata"]["label"] = {"a": "b"}  # metadata is checked as ObjectMeta
    assert issues_of(schedule) == [("$.metadata.label", "schema"), ("$.spec.networkChaos.loss.los", "schema")]


def test_chaos_api_version_and_kind_are_exact() -> None:
    chaos = sample("chaos-mesh.org/v1alpha1/PodChaos")
    chaos["spec"]["action"] = "pod-kil"
    [issue] = validate_object(chaos)
    assert issue.path == "$.spec.action"


def test_istio_and_gateway_api_kinds() -> None:
    policy = sample("security.istio.io/v1/AuthorizationPolicy")
    policy["spec"]["action"] = "REJECT"
    policy["spec"]["targetRef"] = {"kind": "Gateway"}  # name is required
    policy["spec"]["rulez"] = []
    policy["metadata"]["label"] = {"a": "b"}  # metadata is checked as ObjectMeta
    assert issues_of(policy) == [("$.metadata.label", "schema"), ("$.spec.action", "schema"),
                                 ("$.spec.rulez", "schema"), ("$.spec.targetRef.name", "schema")]
    peer = sample("security.istio.io/v1/PeerAuthentication")
    peer["spec"]["mtls"]["mode"] = "strict"
    peer["status"] = {"anything": 1}  # status preserves unknown fields in Istio's CRDs
    assert issues_of(peer) == [("$.spec.mtls.mode", "schema")]
    peer["apiVersion"] = "security.istio.io/v1beta1"
    assert issues_of(peer)[0] == ("$.apiVersion", "unknown-kind")
    gateway = sample("gateway.networking.k8s.io/v1/Gateway")
    del gateway["spec"]["gatewayClassName"]
    gateway["spec"]["listeners"][0]["port"] = 0
    assert issues_of(gateway) == [("$.spec.gatewayClassName", "schema"), ("$.spec.listeners[0].port", "schema")]


def test_crd_conversion_nullable_and_exclusive_minimum() -> None:
    schedule = sample("chaos-mesh.org/v1alpha1/Schedule")
    schedule["spec"]["startingDeadlineSeconds"] = None  # nullable: true
    assert validate_object(schedule) == []
    schedule["spec"]["startingDeadlineSeconds"] = 0  # exclusiveMinimum: true, minimum: 0
    assert [(i.path, i.message) for i in validate_object(schedule)] == [
        ("$.spec.startingDeadlineSeconds", "Must be > 0, not 0.")]


def test_crd_conversion_int_or_string() -> None:
    workflow = sample("chaos-mesh.org/v1alpha1/Workflow")
    task = {"container": {"name": "probe", "image": "busybox",
                          "readinessProbe": {"httpGet": {"port": "http"}}}}
    workflow["spec"]["templates"].append({"name": "check", "templateType": "Task", "task": task})
    assert validate_object(workflow) == []
    task["container"]["readinessProbe"]["httpGet"]["port"] = 8080
    assert validate_object(workflow) == []
    task["container"]["readinessProbe"]["httpGet"]["port"] = 80.5
    [issue] = validate_object(workflow)
    assert issue.path == "$.spec.templates[3].task.container.readinessProbe.httpGet.port"
    assert issue.message == "Must be of type integer or string, not number 80.5."


# --------------------------------------------------------------------------------------------
# Memoization
# --------------------------------------------------------------------------------------------

def test_memoization_returns_equal_results() -> None:
    deployment = sample("apps/v1/Deployment")
    deployment["spec"]["replica"] = 1
    first = validate_object(deployment)
    size = len(validate._MEMO)
    first.clear()  # callers get their own list: the memo is not affected
    second = validate_object(copy.deepcopy(deployment))
    assert len(validate._MEMO) == size
    assert second == validate_object(deployment) == [SchemaIssue("$.spec.replica", second[0].message, "schema")]
    # Key order does not matter (canonical JSON), values do.
    reordered = dict(reversed(list(deployment.items())))
    assert validate_object(reordered) == second
    deployment["spec"]["replicas"] = 3
    assert validate_object(deployment) == second and len(validate._MEMO) == size + 1


def test_validators_are_cached() -> None:
    assert validate._validator("apps/v1/Deployment") is validate._validator("apps/v1/Deployment")


# --------------------------------------------------------------------------------------------
# Real manifests
# --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["opentelemetry-demo.yaml", "bookinfo.yaml"])
def test_reference_apps_validate(name: str) -> None:
    path = REFERENCE / "apps" / name
    if not path.exists():
        pytest.skip(f"{path} not found: the shared reference folder is not next to the repository")
    kinds = set(known_kinds())
    checked = 0
    for doc in yaml.safe_load_all(path.read_text()):
        if not doc or f"{doc.get('apiVersion')}/{doc.get('kind')}" not in kinds:
            continue
        checked += 1
        assert validate_object(doc) == [], f"{doc['kind']}/{doc['metadata']['name']}"
    assert checked > 10


def test_itbench_chaos_schedules_validate() -> None:
    """Every Chaos Mesh Schedule injected by an ITBench scenario, assembled as ITBench applies it."""
    scenarios = sorted((REFERENCE / "itbench" / "scenarios").glob("*/scenario.yaml"))
    if not scenarios:
        pytest.skip(f"no ITBench scenarios under {REFERENCE / 'itbench'}")
    found = []

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            if "kubernetesObject" in node and "scheduleSpec" in node:
                found.append({**node["kubernetesObject"], "spec": {
                    "schedule": "@every 1m", "historyLimit": 1, "concurrencyPolicy": "Forbid", **node["scheduleSpec"]}})
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    for path in scenarios:
        walk(yaml.safe_load(path.read_text()))
    assert found
    for schedule in found:
        assert validate_object(schedule) == [], schedule["metadata"]["name"]


# --------------------------------------------------------------------------------------------
# tools/vendor_schemas.py
# --------------------------------------------------------------------------------------------

def _vendor_tool():
    spec = importlib.util.spec_from_file_location("vendor_schemas", REPO / "tools" / "vendor_schemas.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_crd_node_translation() -> None:
    tool = _vendor_tool()
    convert = lambda schema: tool.rewrite(schema, tool._crd_node)  # noqa: E731
    assert convert({"type": "object", "description": "d", "properties": {"a": {"type": "string", "nullable": True}}}) == {
        "type": "object", "additionalProperties": False, "properties": {"a": {"type": ["string", "null"]}}}
    assert convert({"anyOf": [{"type": "integer"}, {"type": "string"}], "x-kubernetes-int-or-string": True,
                    "pattern": "^a$"}) == {"type": ["integer", "string"], "pattern": "^a$"}
    assert convert({"type": "integer", "minimum": 0, "exclusiveMinimum": True, "format": "int64"}) == {
        "type": "integer", "exclusiveMinimum": 0, "format": "int64"}
    assert convert({"type": "object", "properties": {}, "x-kubernetes-preserve-unknown-fields": True}) == {
        "type": "object", "properties": {}}
    assert convert({"type": "string", "enum": ["a"], "nullable": True}) == {"type": ["string", "null"], "enum": ["a", None]}
    with pytest.raises(ValueError, match="x-kubernetes-validations"):
        convert({"type": "object", "x-kubernetes-validations": [{"rule": "self.a > 0"}]})


def test_vendored_files_are_up_to_date() -> None:
    pytest.importorskip("kubernetes_validate", reason="kubernetes-validate (test extra) is needed to regenerate")
    tool = _vendor_tool()
    if not tool.CHAOS_MESH_CRDS.is_dir():
        pytest.skip(f"{tool.CHAOS_MESH_CRDS} not found: the shared reference folder is not next to the repository")
    assert tool.main(["--check"]) == 0, "run: python tools/vendor_schemas.py"
