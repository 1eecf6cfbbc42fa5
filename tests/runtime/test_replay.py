"""Replaying solution commands on manifests (itbench_dsl.runtime.kubectl).

The tables run one command each on a small faulty state and compare the whole resulting state
with the expected one, written out as the change the command must make. Refusals carry the
message kubectl or the API server gives; commands that cannot be replayed, and commands that
only read, must leave the caller's objects untouched (the same dicts, unchanged). Every `run`
command of the scenario library is replayed too, and hypothesis checks that no text at all
makes `replay` raise.
"""

from __future__ import annotations

import base64
import copy
import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from itbench_dsl.runtime.kubectl.replay import replay
from itbench_dsl.runtime.kubectl.state import RESTARTED_AT, Outcome

REPO = Path(__file__).resolve().parents[2]

CART = ("Deployment", "shop", "cart")
FRONTEND = ("Deployment", "shop", "frontend")
REDIS = ("StatefulSet", "shop", "redis")
CART_SVC = ("Service", "shop", "cart")
SETTINGS = ("ConfigMap", "shop", "settings")
FROZEN = ("ConfigMap", "shop", "frozen")
CREDS = ("Secret", "shop", "creds")
DATA = ("PersistentVolumeClaim", "shop", "data")
PENDING = ("PersistentVolumeClaim", "shop", "pending")
FIXED = ("PersistentVolumeClaim", "shop", "fixed")
POD = ("Pod", "shop", "cart-7d9f8-abcde")
NODE = ("Node", None, "worker-1")
SHOP = ("Namespace", None, "shop")
SCHEDULE = ("Schedule", "chaos-mesh", "cart-pod-kill")
POD_CHAOS = ("PodChaos", "chaos-mesh", "cart-pod-kill-x1")
HPA = ("HorizontalPodAutoscaler", "shop", "frontend")
PRIORITY = ("PriorityClass", None, "high")
BINDING = ("RoleBinding", "shop", "reader")
JOB = ("Job", "shop", "migrate")
AUTHZ = ("AuthorizationPolicy", "shop", "deny-all")


def _state() -> dict:
    """A faulty state: cart runs a broken image, the rest is as deployed."""
    return {
        SHOP: {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "shop"}},
        CART: {
            "apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "cart", "namespace": "shop", "uid": "uid-cart", "labels": {"app": "cart"},
                         "finalizers": ["example.com/keep"]},
            "spec": {
                "replicas": 1,
                "selector": {"matchLabels": {"app": "cart"}},
                "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1}},
                "template": {
                    "metadata": {"labels": {"app": "cart"}},
                    "spec": {
                        "initContainers": [{"name": "init", "image": "busybox:1.36"}],
                        "containers": [
                            {"name": "cart", "image": "cart:9.9.9-broken",
                             "env": [{"name": "REDIS_ADDR", "value": "redis:6379"},
                                     {"name": "POD_IP", "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}}],
                             "ports": [{"containerPort": 7070, "name": "grpc"}],
                             "volumeMounts": [{"name": "data", "mountPath": "/data"}],
                             "resources": {"limits": {"memory": "128Mi"}, "requests": {"cpu": "100m", "memory": "64Mi"}}},
                            {"name": "sidecar", "image": "envoy:1.30"},
                        ],
                        "volumes": [{"name": "data", "emptyDir": {}}],
                        "tolerations": [{"key": "spot", "operator": "Exists"}],
                    },
                },
            },
            "status": {"replicas": 1, "readyReplicas": 0},
        },
        FRONTEND: {
            "apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "frontend", "namespace": "shop", "labels": {"app": "frontend", "tier": "web"}},
            "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "frontend"}},
                     "template": {"metadata": {"labels": {"app": "frontend"}},
                                  "spec": {"containers": [{"name": "frontend", "image": "frontend:2.0"}]}}},
        },
        REDIS: {
            "apiVersion": "apps/v1", "kind": "StatefulSet",
            "metadata": {"name": "redis", "namespace": "shop"},
            "spec": {"replicas": 1, "serviceName": "redis", "selector": {"matchLabels": {"app": "redis"}},
                     "template": {"metadata": {"labels": {"app": "redis"}},
                                  "spec": {"containers": [{"name": "redis", "image": "redis:7.2"}]}},
                     "volumeClaimTemplates": [{"metadata": {"name": "data"},
                                               "spec": {"accessModes": ["ReadWriteOnce"],
                                                        "resources": {"requests": {"storage": "1Gi"}}}}]},
        },
        CART_SVC: {
            "apiVersion": "v1", "kind": "Service", "metadata": {"name": "cart", "namespace": "shop"},
            "spec": {"type": "ClusterIP", "clusterIP": "10.96.0.10", "clusterIPs": ["10.96.0.10"],
                     "selector": {"app": "cart"},
                     "ports": [{"name": "grpc", "port": 7070, "targetPort": 7071, "protocol": "TCP"}]},
        },
        SETTINGS: {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "settings", "namespace": "shop"},
                   "data": {"LOG_LEVEL": "info"}},
        FROZEN: {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "frozen", "namespace": "shop"},
                 "immutable": True, "data": {"A": "1"}},
        CREDS: {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "creds", "namespace": "shop"},
                "type": "Opaque", "data": {"password": "aHVudGVyMg=="}},
        DATA: {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "data", "namespace": "shop"},
               "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": "standard", "volumeName": "pv-1",
                        "resources": {"requests": {"storage": "1Gi"}}},
               "status": {"phase": "Bound", "capacity": {"storage": "1Gi"}}},
        PENDING: {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                  "metadata": {"name": "pending", "namespace": "shop"},
                  "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": "standard",
                           "resources": {"requests": {"storage": "1Gi"}}},
                  "status": {"phase": "Pending"}},
        FIXED: {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "fixed", "namespace": "shop"},
                "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": "fixed", "volumeName": "pv-2",
                         "resources": {"requests": {"storage": "1Gi"}}},
                "status": {"phase": "Bound"}},
        ("StorageClass", None, "standard"): {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
                                             "metadata": {"name": "standard"}, "provisioner": "x",
                                             "allowVolumeExpansion": True},
        ("StorageClass", None, "fixed"): {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
                                          "metadata": {"name": "fixed"}, "provisioner": "x"},
        POD: {"apiVersion": "v1", "kind": "Pod",
              "metadata": {"name": "cart-7d9f8-abcde", "namespace": "shop",
                           "labels": {"app": "cart", "pod-template-hash": "7d9f8"}},
              "spec": {"containers": [{"name": "cart", "image": "cart:9.9.9-broken",
                                       "resources": {"requests": {"memory": "64Mi"}}}],
                       "tolerations": [{"key": "spot", "operator": "Exists"}], "nodeName": "worker-1"},
              "status": {"phase": "Running"}},
        NODE: {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "worker-1", "labels": {"zone": "a"}},
               "spec": {"taints": [{"key": "dedicated", "value": "db", "effect": "NoSchedule"}]}},
        HPA: {"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
              "metadata": {"name": "frontend", "namespace": "shop"},
              "spec": {"minReplicas": 1, "maxReplicas": 5,
                       "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "frontend"}}},
        SCHEDULE: {"apiVersion": "chaos-mesh.org/v1alpha1", "kind": "Schedule",
                   "metadata": {"name": "cart-pod-kill", "namespace": "chaos-mesh"},
                   "spec": {"schedule": "@every 2m", "type": "PodChaos",
                            "podChaos": {"action": "pod-kill", "mode": "one",
                                         "selector": {"namespaces": ["shop"], "labelSelectors": {"app": "cart"}}}}},
        POD_CHAOS: {"apiVersion": "chaos-mesh.org/v1alpha1", "kind": "PodChaos",
                    "metadata": {"name": "cart-pod-kill-x1", "namespace": "chaos-mesh",
                                 "labels": {"experiment": "cart"}},
                    "spec": {"action": "pod-kill", "mode": "one"}},
        PRIORITY: {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "high"},
                   "value": 1000},
        BINDING: {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
                  "metadata": {"name": "reader", "namespace": "shop"},
                  "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "reader"},
                  "subjects": [{"kind": "ServiceAccount", "name": "agent", "namespace": "shop"}]},
        JOB: {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "migrate", "namespace": "shop"},
              "spec": {"template": {"spec": {"restartPolicy": "Never",
                                             "containers": [{"name": "migrate", "image": "migrate:1"}]}}}},
        AUTHZ: {"apiVersion": "security.istio.io/v1", "kind": "AuthorizationPolicy",
                "metadata": {"name": "deny-all", "namespace": "shop"}, "spec": {"action": "DENY", "rules": [{}]}},
    }


REVERT_APPLY = """\
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: cart
  namespace: shop
spec:
  replicas: 1
  selector:
    matchLabels:
      app: cart
  template:
    metadata:
      labels:
        app: cart
    spec:
      containers:
        - name: cart
          image: cart:1.4.0
"""
REVERT_DELETE = """\
apiVersion: chaos-mesh.org/v1alpha1
kind: PodChaos
metadata:
  name: cart-pod-kill-x1
  namespace: chaos-mesh
---
apiVersion: chaos-mesh.org/v1alpha1
kind: Schedule
metadata:
  name: cart-pod-kill
  namespace: chaos-mesh
"""
NEW_CONFIGMAP = """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: extra
data:
  K: v
"""
FILES = {
    "revert/apply.yaml": REVERT_APPLY.encode(),
    "revert/delete.yaml": REVERT_DELETE.encode(),
    "manifests/extra.yaml": NEW_CONFIGMAP.encode(),
    "manifests/frozen.json": json.dumps({"apiVersion": "v1", "kind": "ConfigMap",
                                         "metadata": {"name": "frozen", "namespace": "shop"},
                                         "immutable": True, "data": {"A": "2"}}).encode(),
    "manifests/creds.yaml": b"apiVersion: v1\nkind: Secret\nmetadata:\n  name: creds\nstringData:\n  token: abc\n",
    "manifests/settings.yaml": b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n  namespace: other\n",
}
# the earlier pod templates of cart, oldest first: the last one is the template before the fault
GOOD_TEMPLATE = copy.deepcopy(_state()[CART]["spec"]["template"])
GOOD_TEMPLATE["spec"]["containers"][0]["image"] = "cart:1.4.0"
OLDER_TEMPLATE = copy.deepcopy(GOOD_TEMPLATE)
OLDER_TEMPLATE["spec"]["containers"][0]["image"] = "cart:1.3.0"
OLDER_TEMPLATE["metadata"]["labels"]["pod-template-hash"] = "5c4b3"
HISTORY = {CART: [OLDER_TEMPLATE, GOOD_TEMPLATE]}


def _run(command: str, namespace: str | None = None) -> tuple[dict, Outcome]:
    objects = _state()
    return objects, replay(objects, command, namespace=namespace, files=FILES, history=HISTORY)


def _container(state: dict, key: tuple = CART, index: int = 0, field: str = "containers") -> dict:
    spec = state[key]["spec"]
    pod_spec = spec if key[0] == "Pod" else spec["template"]["spec"]
    return pod_spec[field][index]


def _set(key: tuple, *path_and_value) -> Callable[[dict], None]:
    """An edit of the expected state: the value at a path of one object."""
    *path, value = path_and_value

    def edit(state: dict) -> None:
        node = state[key]
        for step in path[:-1]:
            node = node[step]
        node[path[-1]] = value
    return edit


def _edit_cart(change: Callable[[dict], None]) -> Callable[[dict], None]:
    return lambda state: change(_container(state))


def _image(image: str) -> Callable[[dict], None]:
    return _edit_cart(lambda c: c.__setitem__("image", image))


def _delete(*keys: tuple) -> Callable[[dict], None]:
    def edit(state: dict) -> None:
        for key in keys:
            del state[key]
    return edit


def _both(*edits: Callable[[dict], None]) -> Callable[[dict], None]:
    def edit(state: dict) -> None:
        for one in edits:
            one(state)
    return edit


def _no_change(state: dict) -> None:
    pass


def _cart_env(env: list) -> Callable[[dict], None]:
    return _edit_cart(lambda c: c.__setitem__("env", env))


def _all_images(image: str) -> Callable[[dict], None]:
    def edit(state: dict) -> None:
        _container(state)["image"] = image
        _container(state, index=1)["image"] = image
        _container(state, field="initContainers")["image"] = image
    return edit


def _template_annotation(state: dict) -> None:
    state[CART]["spec"]["template"]["metadata"]["annotations"] = {
        "kubectl.kubernetes.io/restartedAt": RESTARTED_AT}


def _restored_template(template: dict) -> Callable[[dict], None]:
    def edit(state: dict) -> None:
        restored = copy.deepcopy(template)
        restored["metadata"]["labels"].pop("pod-template-hash", None)
        state[CART]["spec"]["template"] = restored
    return edit


def _labels(key: tuple, labels: dict | None) -> Callable[[dict], None]:
    def edit(state: dict) -> None:
        if labels is None:
            state[key]["metadata"].pop("labels", None)
        else:
            state[key]["metadata"]["labels"] = labels
    return edit


def _b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


P = pytest.param
SCALED = _set(CART, "spec", "replicas", 3)

# command, the default namespace, kubectl's answer, and the change it makes to _state()
APPLIED = [
    # scale, in the forms kubectl takes
    P("kubectl -n shop scale deployment/cart --replicas=3", None, "deployment.apps/cart scaled", SCALED, id="scale-slash"),
    P("kubectl scale --replicas 3 deploy cart -n shop", None, "deployment.apps/cart scaled", SCALED, id="scale-flags-first"),
    P("kubectl scale deployments.apps/cart --replicas=3 --namespace=shop", None, "deployment.apps/cart scaled",
      SCALED, id="scale-group-form"),
    P("k scale Deployment cart --replicas=3 --current-replicas=1", "shop", "deployment.apps/cart scaled", SCALED,
      id="scale-default-namespace-precondition"),
    P("oc scale deploy/cart --replicas=3 --namespace shop", None, "deployment.apps/cart scaled", SCALED, id="scale-oc"),
    P("kubectl -n shop scale sts redis --replicas=2", None, "statefulset.apps/redis scaled",
      _set(REDIS, "spec", "replicas", 2), id="scale-statefulset"),
    P("kubectl -n shop scale deploy -l app=frontend --replicas=0", None, "deployment.apps/frontend scaled",
      _set(FRONTEND, "spec", "replicas", 0), id="scale-selector"),
    P("kubectl -n shop scale deploy/cart --replicas=1", None, "deployment.apps/cart scaled (no change)", _no_change,
      id="scale-no-change"),
    # strategic merge patches
    P("""kubectl -n shop patch deployment cart -p '{"spec":{"template":{"spec":{"containers":[{"name":"cart","env":[{"name":"REDIS_ADDR","value":"cache:6379"}]}]}}}}'""",
      None, "deployment.apps/cart patched",
      _cart_env([{"name": "REDIS_ADDR", "value": "cache:6379"},
                 {"name": "POD_IP", "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}}]),
      id="strategic-env-by-name"),
    P("""kubectl -n shop patch deploy/cart -p '{"spec":{"template":{"spec":{"containers":[{"name":"cart","env":[{"name":"POD_IP","$patch":"delete"}]}]}}}}'""",
      None, "deployment.apps/cart patched", _cart_env([{"name": "REDIS_ADDR", "value": "redis:6379"}]),
      id="strategic-delete-directive"),
    P("""kubectl -n shop patch deploy cart -p '{"spec":{"template":{"spec":{"containers":[{"name":"cart","resources":{"$patch":"replace","limits":{"cpu":"1"}}}]}}}}'""",
      None, "deployment.apps/cart patched", _edit_cart(lambda c: c.__setitem__("resources", {"limits": {"cpu": "1"}})),
      id="strategic-replace-directive"),
    P("""kubectl -n shop patch deploy cart -p '{"spec":{"template":{"spec":{"containers":[{"name":"cart","resources":{"limits":{"memory":null}}}]}}}}'""",
      None, "deployment.apps/cart patched", _edit_cart(lambda c: c["resources"].__setitem__("limits", {})),
      id="strategic-null-deletes"),
    P("""kubectl -n shop patch deploy cart -p '{"spec":{"template":{"spec":{"tolerations":[{"key":"gpu","operator":"Exists"}]}}}}'""",
      None, "deployment.apps/cart patched",
      _set(CART, "spec", "template", "spec", "tolerations", [{"key": "gpu", "operator": "Exists"}]),
      id="strategic-tolerations-replaced"),
    P("""kubectl -n shop patch deploy cart -p '{"spec":{"template":{"spec":{"volumes":[{"name":"cache","emptyDir":{}}],"containers":[{"name":"cart","ports":[{"containerPort":9090,"name":"metrics"}],"volumeMounts":[{"mountPath":"/data","readOnly":true}]}]}}}}'""",
      None, "deployment.apps/cart patched",
      _both(_set(CART, "spec", "template", "spec", "volumes",
                 [{"name": "data", "emptyDir": {}}, {"name": "cache", "emptyDir": {}}]),
            _edit_cart(lambda c: c.update(ports=[{"containerPort": 7070, "name": "grpc"},
                                                 {"containerPort": 9090, "name": "metrics"}],
                                          volumeMounts=[{"name": "data", "mountPath": "/data", "readOnly": True}]))),
      id="strategic-volumes-ports-mounts"),
    P("""kubectl -n shop patch deploy cart -p '{"spec":{"template":{"spec":{"imagePullSecrets":[{"name":"regcred"}]}}}}'""",
      None, "deployment.apps/cart patched",
      _set(CART, "spec", "template", "spec", "imagePullSecrets", [{"name": "regcred"}]), id="strategic-pull-secrets"),
    P("""kubectl -n shop patch deploy cart -p '{"spec":{"strategy":{"$retainKeys":["type"],"type":"Recreate"}}}'""",
      None, "deployment.apps/cart patched", _set(CART, "spec", "strategy", {"type": "Recreate"}),
      id="strategic-retain-keys"),
    P("""kubectl -n shop patch deploy cart -p '{"metadata":{"$deleteFromPrimitiveList/finalizers":["example.com/keep"]}}'""",
      None, "deployment.apps/cart patched", _set(CART, "metadata", "finalizers", []), id="strategic-primitive-list"),
    P("""kubectl -n shop patch deploy cart -p '{"metadata":{"finalizers":["example.com/other"]}}'""",
      None, "deployment.apps/cart patched",
      _set(CART, "metadata", "finalizers", ["example.com/keep", "example.com/other"]), id="strategic-finalizers-union"),
    P("""kubectl -n shop patch deploy cart -p '{"spec":{"template":{"spec":{"$setElementOrder/containers":[{"name":"sidecar"},{"name":"cart"}]}}}}'""",
      None, "deployment.apps/cart patched",
      lambda s: s[CART]["spec"]["template"]["spec"].__setitem__(
          "containers", list(reversed(s[CART]["spec"]["template"]["spec"]["containers"]))),
      id="strategic-element-order"),
    P("""kubectl -n shop patch service cart -p '{"spec":{"ports":[{"port":7070,"targetPort":7070}]}}'""", None,
      "service/cart patched", _set(CART_SVC, "spec", "ports", [{"name": "grpc", "port": 7070, "targetPort": 7070,
                                                              "protocol": "TCP"}]),
      id="strategic-service-ports-by-port"),
    P("""kubectl -n shop patch svc cart -p '{"spec":{"type":"ExternalName","externalName":"cart.example.com"}}'""",
      None, "service/cart patched",
      _set(CART_SVC, "spec", {"type": "ExternalName", "externalName": "cart.example.com", "selector": {"app": "cart"},
                              "ports": [{"name": "grpc", "port": 7070, "targetPort": 7071, "protocol": "TCP"}]}),
      id="service-to-externalname-drops-cluster-ip"),
    P("kubectl -n shop patch deploy cart -p 'spec: {replicas: 3}'", None, "deployment.apps/cart patched", SCALED,
      id="yaml-patch"),
    P("""kubectl -n shop patch deploy cart -p '{"status":{"readyReplicas":1}}'""", None,
      "deployment.apps/cart patched (no change)", _no_change, id="status-is-the-servers"),
    # merge patches replace lists
    P("""kubectl -n shop patch deploy cart --type merge -p '{"spec":{"template":{"spec":{"containers":[{"name":"cart","image":"cart:1.4.0"}]}}}}'""",
      None, "deployment.apps/cart patched",
      _set(CART, "spec", "template", "spec", "containers", [{"name": "cart", "image": "cart:1.4.0"}]),
      id="merge-replaces-lists"),
    P("""kubectl -n shop patch deploy cart --type=merge -p '{"metadata":{"labels":{"team":"a","app":null}}}'""",
      None, "deployment.apps/cart patched", _labels(CART, {"team": "a"}), id="merge-null-deletes"),
    P("""kubectl -n chaos-mesh patch schedule cart-pod-kill --type merge -p '{"spec":{"suspend":true}}'""", None,
      "schedule.chaos-mesh.org/cart-pod-kill patched", _set(SCHEDULE, "spec", "suspend", True), id="merge-on-crd"),
    # JSON patches
    P("""kubectl -n shop patch deploy cart --type json -p '[{"op":"replace","path":"/spec/replicas","value":3}]'""",
      None, "deployment.apps/cart patched", SCALED, id="json-replace"),
    P("""kubectl -n shop patch deploy cart --type=json -p='[{"op":"test","path":"/spec/replicas","value":1},{"op":"add","path":"/spec/template/spec/containers/0/env/-","value":{"name":"X","value":"1"}},{"op":"remove","path":"/spec/template/spec/containers/0/env/1"}]'""",
      None, "deployment.apps/cart patched",
      _cart_env([{"name": "REDIS_ADDR", "value": "redis:6379"}, {"name": "X", "value": "1"}]),
      id="json-test-add-remove"),
    P("""kubectl -n shop patch deploy cart --type json -p '[{"op":"add","path":"/metadata/annotations","value":{}},{"op":"add","path":"/metadata/annotations/example.com~1owner","value":"a~0b"},{"op":"copy","from":"/metadata/annotations/example.com~1owner","path":"/metadata/annotations/copy"},{"op":"move","from":"/metadata/annotations/copy","path":"/metadata/annotations/moved"}]'""",
      None, "deployment.apps/cart patched",
      _set(CART, "metadata", "annotations", {"example.com/owner": "a~0b", "moved": "a~0b"}),
      id="json-pointer-escapes-copy-move"),
    # set image / env / resources
    P("kubectl -n shop set image deployment/cart cart=cart:1.4.0", None, "deployment.apps/cart image updated",
      _image("cart:1.4.0"), id="set-image"),
    P("kubectl set image deploy cart cart=cart:1.4.0 sidecar=envoy:1.31 -n shop", None,
      "deployment.apps/cart image updated",
      _both(_image("cart:1.4.0"), lambda s: _container(s, index=1).__setitem__("image", "envoy:1.31")),
      id="set-image-two"),
    P("kubectl -n shop set image deploy/cart '*=busybox:1'", None, "deployment.apps/cart image updated",
      _all_images("busybox:1"), id="set-image-all"),
    P("kubectl -n shop set image pod/cart-7d9f8-abcde cart=cart:1.4.0", None, "pod/cart-7d9f8-abcde image updated",
      lambda s: _container(s, POD).__setitem__("image", "cart:1.4.0"), id="set-image-pod"),
    P("kubectl -n shop set env deployment/cart -c cart REDIS_ADDR=cache:6379 POD_IP- DEBUG=1", None,
      "deployment.apps/cart env updated",
      _cart_env([{"name": "REDIS_ADDR", "value": "cache:6379"}, {"name": "DEBUG", "value": "1"}]), id="set-env"),
    P("kubectl -n shop set env deploy cart --env=POD_IP=1.2.3.4 -e EMPTY= --containers=cart", None,
      "deployment.apps/cart env updated",
      _cart_env([{"name": "REDIS_ADDR", "value": "redis:6379"}, {"name": "POD_IP", "value": "1.2.3.4"},
                 {"name": "EMPTY"}]), id="set-env-flags"),
    P("kubectl -n shop set env deploy/cart -c side* MODE=x", None, "deployment.apps/cart env updated",
      lambda s: _container(s, index=1).__setitem__("env", [{"name": "MODE", "value": "x"}]), id="set-env-pattern"),
    P("kubectl -n shop set resources deployment/cart -c cart --requests=memory=160Mi --limits=memory=160Mi", None,
      "deployment.apps/cart resource requirements updated",
      _edit_cart(lambda c: c.__setitem__("resources", {"limits": {"memory": "160Mi"},
                                                       "requests": {"cpu": "100m", "memory": "160Mi"}})),
      id="set-resources"),
    P("kubectl -n shop set resources deploy frontend --limits=cpu=200m,memory=512Mi", None,
      "deployment.apps/frontend resource requirements updated",
      lambda s: _container(s, FRONTEND).__setitem__("resources", {"limits": {"cpu": "200m", "memory": "512Mi"}}),
      id="set-resources-all-containers"),
    P("kubectl -n shop set serviceaccount deployment cart agent", None, "deployment.apps/cart serviceaccount updated",
      _set(CART, "spec", "template", "spec", "serviceAccountName", "agent"), id="set-serviceaccount"),
    # rollouts
    P("kubectl -n shop rollout restart deployment/cart", None, "deployment.apps/cart restarted", _template_annotation,
      id="rollout-restart"),
    P("kubectl -n shop rollout undo deployment/cart", None, "deployment.apps/cart rolled back",
      _restored_template(GOOD_TEMPLATE), id="rollout-undo"),
    P("kubectl -n shop rollout undo deploy cart --to-revision=1", None, "deployment.apps/cart rolled back",
      _restored_template(OLDER_TEMPLATE), id="rollout-undo-to-revision"),
    P("kubectl -n shop rollout pause deploy/cart", None, "deployment.apps/cart paused",
      _set(CART, "spec", "paused", True), id="rollout-pause"),
    # delete
    P("kubectl -n chaos-mesh delete schedule cart-pod-kill", None, 'schedule.chaos-mesh.org "cart-pod-kill" deleted',
      _delete(SCHEDULE), id="delete"),
    P("kubectl delete podchaos/cart-pod-kill-x1 schedules.chaos-mesh.org/cart-pod-kill -n chaos-mesh", None,
      'podchaos.chaos-mesh.org "cart-pod-kill-x1" deleted; schedule.chaos-mesh.org "cart-pod-kill" deleted',
      _delete(POD_CHAOS, SCHEDULE), id="delete-slash-forms"),
    P("kubectl -n shop delete deploy cart frontend", None,
      'deployment.apps "cart" deleted; deployment.apps "frontend" deleted', _delete(CART, FRONTEND),
      id="delete-two-names"),
    P("kubectl -n shop delete po -l app=cart", None, 'pod "cart-7d9f8-abcde" deleted', _delete(POD),
      id="delete-selector"),
    P("kubectl delete pods --all", "shop", 'pod "cart-7d9f8-abcde" deleted', _delete(POD), id="delete-all"),
    P("kubectl delete -f revert/delete.yaml", None,
      'podchaos.chaos-mesh.org "cart-pod-kill-x1" deleted; schedule.chaos-mesh.org "cart-pod-kill" deleted',
      _delete(POD_CHAOS, SCHEDULE), id="delete-file"),
    P("kubectl -n chaos-mesh delete jvmchaos ad-jvm-exception --ignore-not-found", None, "No resources found",
      _no_change, id="delete-ignore-not-found"),
    P("kubectl delete ns shop", None, 'namespace "shop" deleted',
      _delete(SHOP, *(k for k in _state() if k[1] == "shop")), id="delete-namespace-cascades"),
    # label and annotate
    P("kubectl -n shop label deployment cart tier=backend", None, "deployment.apps/cart labeled",
      _labels(CART, {"app": "cart", "tier": "backend"}), id="label"),
    P("kubectl -n shop label deploy/cart app=shop --overwrite", None, "deployment.apps/cart labeled",
      _labels(CART, {"app": "shop"}), id="label-overwrite"),
    P("kubectl -n shop label deploy cart app-", None, "deployment.apps/cart unlabeled", _labels(CART, None),
      id="unlabel"),
    P("kubectl -n shop label deploy cart app=cart", None, "deployment.apps/cart not labeled", _no_change,
      id="label-same-value"),
    P("kubectl label ns shop istio-injection=enabled", None, "namespace/shop labeled",
      _labels(SHOP, {"istio-injection": "enabled"}), id="label-namespace"),
    P("kubectl -n shop label pods -l app=cart canary=true", None, "pod/cart-7d9f8-abcde labeled",
      _labels(POD, {"app": "cart", "pod-template-hash": "7d9f8", "canary": "true"}), id="label-selector"),
    P("kubectl -n chaos-mesh annotate schedule cart-pod-kill experiment.chaos-mesh.org/pause='true'", None,
      "schedule.chaos-mesh.org/cart-pod-kill annotated",
      _set(SCHEDULE, "metadata", "annotations", {"experiment.chaos-mesh.org/pause": "true"}), id="annotate"),
    P("kubectl -n shop label cm frozen team=a", None, "configmap/frozen labeled",
      _labels(FROZEN, {"team": "a"}), id="label-immutable-configmap"),
    # apply, create, replace
    P("kubectl apply -f revert/apply.yaml", None, "deployment.apps/cart configured", _image("cart:1.4.0"),
      id="apply"),
    P("kubectl apply -f ./revert/apply.yaml --server-side", None, "deployment.apps/cart serverside-applied",
      _image("cart:1.4.0"), id="apply-server-side"),
    P("kubectl apply -f bundle/revert/apply.yaml", None, "deployment.apps/cart configured", _image("cart:1.4.0"),
      id="apply-leading-folder"),
    P("kubectl apply -f /tmp/scenario/revert/", None, "deployment.apps/cart configured; "
      "podchaos.chaos-mesh.org/cart-pod-kill-x1 unchanged; schedule.chaos-mesh.org/cart-pod-kill unchanged",
      _image("cart:1.4.0"), id="apply-folder"),
    P("kubectl apply -f - < revert/apply.yaml", None, "deployment.apps/cart configured", _image("cart:1.4.0"),
      id="apply-stdin-redirect"),
    P("cat revert/apply.yaml | kubectl apply -f -", None, "deployment.apps/cart configured", _image("cart:1.4.0"),
      id="apply-from-cat"),
    P("kubectl -n shop apply -f manifests/extra.yaml", None, "configmap/extra created",
      lambda s: s.__setitem__(("ConfigMap", "shop", "extra"), {
          "apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "extra", "namespace": "shop"},
          "data": {"K": "v"}}), id="apply-creates"),
    P("kubectl apply -n shop -f manifests/creds.yaml", None, "secret/creds configured",
      _set(CREDS, "data", {"password": "aHVudGVyMg==", "token": _b64("abc")}), id="apply-secret-string-data"),
    P("kubectl -n otel create secret generic grafana --from-literal=admin-user=admin --from-literal=ldap-toml= "
      "--dry-run=client -o yaml | kubectl apply -f -", None, "secret/grafana created",
      lambda s: s.__setitem__(("Secret", "otel", "grafana"), {
          "apiVersion": "v1", "kind": "Secret", "metadata": {"name": "grafana", "namespace": "otel"},
          "data": {"admin-user": _b64("admin"), "ldap-toml": ""}, "type": "Opaque"}), id="generator-into-apply"),
    P("kubectl -n shop create -f manifests/extra.yaml", None, "configmap/extra created",
      lambda s: s.__setitem__(("ConfigMap", "shop", "extra"), {
          "apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "extra", "namespace": "shop"},
          "data": {"K": "v"}}), id="create-file"),
    P("kubectl create namespace team-a", None, "namespace/team-a created",
      lambda s: s.__setitem__(("Namespace", None, "team-a"), {
          "apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team-a"}}), id="create-namespace"),
    P("kubectl -n shop create configmap flags --from-literal=b=2 --from-literal=a=1", None, "configmap/flags created",
      lambda s: s.__setitem__(("ConfigMap", "shop", "flags"), {
          "apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "flags", "namespace": "shop"},
          "data": {"a": "1", "b": "2"}}), id="create-configmap"),
    # nodes
    P("kubectl cordon worker-1", None, "node/worker-1 cordoned", _set(NODE, "spec", "unschedulable", True),
      id="cordon"),
    P("kubectl taint nodes worker-1 dedicated:NoSchedule- gpu=true:NoExecute", None, "node/worker-1 modified",
      _set(NODE, "spec", "taints", [{"key": "gpu", "value": "true", "effect": "NoExecute"}]), id="taint"),
    # the server's rules allow these
    P("""kubectl -n shop patch pvc data -p '{"spec":{"resources":{"requests":{"storage":"2Gi"}}}}'""", None,
      "persistentvolumeclaim/data patched", _set(DATA, "spec", "resources", {"requests": {"storage": "2Gi"}}),
      id="pvc-storage-increase"),
    P("""kubectl -n shop patch pod cart-7d9f8-abcde -p '{"spec":{"tolerations":[{"key":"spot","operator":"Exists"},{"key":"gpu","operator":"Exists"}]}}'""",
      None, "pod/cart-7d9f8-abcde patched",
      _set(POD, "spec", "tolerations", [{"key": "spot", "operator": "Exists"}, {"key": "gpu", "operator": "Exists"}]),
      id="pod-toleration-added"),
    P("""kubectl -n shop patch sts redis -p '{"spec":{"updateStrategy":{"type":"OnDelete"},"replicas":3}}'""", None,
      "statefulset.apps/redis patched",
      _both(_set(REDIS, "spec", "updateStrategy", {"type": "OnDelete"}), _set(REDIS, "spec", "replicas", 3)),
      id="statefulset-mutable-fields"),
    # lines of several commands
    P("kubectl -n shop scale deploy/cart --replicas=3 && kubectl -n shop rollout status deploy/cart", None,
      "deployment.apps/cart scaled; `kubectl rollout status` only reads, so it changes nothing", SCALED,
      id="and-then-read"),
    P("kubectl -n shop set image deploy/cart cart=cart:1.4.0; kubectl -n shop rollout restart deploy/cart", None,
      "deployment.apps/cart image updated; deployment.apps/cart restarted",
      _both(_image("cart:1.4.0"), _template_annotation), id="semicolon"),
    P("kubectl -n shop delete pod -l app=cart | tee deleted.txt", None, 'pod "cart-7d9f8-abcde" deleted',
      _delete(POD), id="change-piped-into-filter"),
    P("kubectl -n shop get cm settings -o yaml | kubectl apply -f -", None, "configmap/settings unchanged", _no_change,
      id="get-into-apply"),
    P("""echo '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"settings"},"data":{"LOG_LEVEL":"debug"}}' """
      "| kubectl -n shop apply -f -", None, "configmap/settings configured",
      _set(SETTINGS, "data", {"LOG_LEVEL": "debug"}), id="echo-into-apply"),
    P("kubectl -n shop annotate deploy/cart note=x && kubectl -n shop annotate deploy/cart note-", None,
      "deployment.apps/cart annotated; deployment.apps/cart annotated", _no_change, id="annotate-and-remove"),
    P("kubectl -n shop \\\n  scale deploy/cart --replicas=3 2>&1 > /dev/null # scale up", None,
      "deployment.apps/cart scaled", SCALED, id="continuation-redirections-comment"),
]


@pytest.mark.parametrize("command, namespace, message, edit", APPLIED)
def test_applied(command, namespace, message, edit):
    objects, outcome = _run(command, namespace)
    expected = _state()
    edit(expected)
    assert outcome == Outcome("applied", message)
    assert objects == expected


SHORT_NAMES = [
    ("deploy", "Deployment"), ("deployments", "Deployment"), ("deployment.apps", "Deployment"),
    ("sts", "StatefulSet"), ("svc", "Service"), ("cm", "ConfigMap"), ("po", "Pod"), ("pods", "Pod"),
    ("hpa", "HorizontalPodAutoscaler"), ("horizontalpodautoscalers.autoscaling", "HorizontalPodAutoscaler"),
    ("ns", "Namespace"), ("sa", "ServiceAccount"), ("pvc", "PersistentVolumeClaim"), ("netpol", "NetworkPolicy"),
    ("quota", "ResourceQuota"), ("secret", "Secret"), ("no", "Node"), ("pc", "PriorityClass"), ("role", "Role"),
    ("rolebindings.rbac.authorization.k8s.io", "RoleBinding"), ("schedule", "Schedule"), ("podchaos", "PodChaos"),
    ("networkchaos", "NetworkChaos"), ("stresschaos.chaos-mesh.org", "StressChaos"),
    ("authorizationpolicy", "AuthorizationPolicy"), ("peerauthentications.security.istio.io", "PeerAuthentication"),
    ("cpol", "ClusterPolicy"), ("Rollout", "Rollout"), ("rollouts.argoproj.io", "Rollout"),
]
CLUSTER_SCOPED = {"Namespace", "Node", "PriorityClass", "ClusterPolicy"}


@pytest.mark.parametrize("word, kind", SHORT_NAMES)
def test_type_names(word, kind):
    """kubectl's names for a type (short, plural, kind.group) all find it, custom resources included."""
    group = {"Schedule": "chaos-mesh.org", "PodChaos": "chaos-mesh.org", "NetworkChaos": "chaos-mesh.org",
             "StressChaos": "chaos-mesh.org", "AuthorizationPolicy": "security.istio.io",
             "PeerAuthentication": "security.istio.io", "ClusterPolicy": "kyverno.io", "Rollout": "argoproj.io"}
    namespace = None if kind in CLUSTER_SCOPED else "shop"
    key = (kind, namespace, "x")
    objects = {key: {"apiVersion": f"{group[kind]}/v1" if kind in group else "v1", "kind": kind,
                     "metadata": {"name": "x", **({"namespace": namespace} if namespace else {})}}}
    outcome = replay(objects, f"kubectl -n shop annotate {word} x note=1")
    assert outcome.status == "applied", outcome
    assert objects[key]["metadata"]["annotations"] == {"note": "1"}


def test_replace_keeps_only_what_the_server_owns():
    objects, outcome = _run("kubectl replace -f revert/apply.yaml")
    assert outcome.status == "applied"
    assert objects[CART] == {
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "cart", "namespace": "shop", "uid": "uid-cart"},
        "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "cart"}},
                 "template": {"metadata": {"labels": {"app": "cart"}},
                              "spec": {"containers": [{"name": "cart", "image": "cart:1.4.0"}]}}},
        "status": {"replicas": 1, "readyReplicas": 0},
    }


def test_apply_three_way_removes_what_the_last_configuration_dropped():
    """With kubectl's last-applied annotation, apply deletes the fields the new manifest left out."""
    objects = _state()
    last = copy.deepcopy(objects[CART])
    for field in ("uid", "finalizers"):
        last["metadata"].pop(field)
    last.pop("status")
    objects[CART]["metadata"]["annotations"] = {
        "kubectl.kubernetes.io/last-applied-configuration": json.dumps(last)}
    outcome = replay(objects, "kubectl apply -f revert/apply.yaml", files=FILES)
    assert outcome == Outcome("applied", "deployment.apps/cart configured")
    spec = objects[CART]["spec"]
    assert "strategy" not in spec
    assert spec["template"]["spec"] == {"containers": [{"name": "cart", "image": "cart:1.4.0"}]}
    assert "labels" not in objects[CART]["metadata"]
    recorded = json.loads(objects[CART]["metadata"]["annotations"]["kubectl.kubernetes.io/last-applied-configuration"])
    assert recorded["spec"]["template"]["spec"]["containers"][0]["image"] == "cart:1.4.0"
    assert objects[CART]["status"] == {"replicas": 1, "readyReplicas": 0}


def test_rollout_undo_and_resume_round_trip():
    objects = _state()
    assert replay(objects, "kubectl -n shop rollout pause deploy/cart").status == "applied"
    refused = replay(objects, "kubectl -n shop rollout undo deploy/cart", history=HISTORY)
    assert refused == Outcome("refused", "error: you cannot rollback a paused deployment; resume it first with "
                                         "'kubectl rollout resume deployment.apps/cart' and try again")
    assert replay(objects, "kubectl -n shop rollout resume deploy/cart") == Outcome(
        "applied", "deployment.apps/cart resumed")
    assert objects == _state()
    assert replay(objects, "kubectl -n shop rollout undo deploy/cart", history=HISTORY).status == "applied"
    assert _container(objects)["image"] == "cart:1.4.0"
    # the template now matches the last revision, so undo goes further back, as kubectl does
    assert replay(objects, "kubectl -n shop rollout undo deploy/cart", history=HISTORY).status == "applied"
    assert _container(objects)["image"] == "cart:1.3.0"
    assert replay(objects, "kubectl -n shop rollout undo deploy/cart --to-revision=1", history=HISTORY) == Outcome(
        "applied", "deployment.apps/cart skipped rollback (current template already matches revision 1)")


PVC_IMMUTABLE = ('The PersistentVolumeClaim "data" is invalid: spec: Forbidden: spec is immutable after creation '
                 "except resources.requests and volumeAttributesClassName for bound claims")
STS_FORBIDDEN = ("The StatefulSet \"redis\" is invalid: spec: Forbidden: updates to statefulset spec for fields other "
                 "than 'replicas', 'ordinals', 'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy' "
                 "and 'minReadySeconds' are forbidden")
POD_FORBIDDEN = ('The Pod "cart-7d9f8-abcde" is invalid: spec: Forbidden: pod updates may not change fields other than '
                 "`spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,"
                 "`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` "
                 "(allow it to be set to 1 if it was previously negative)")
INVALID_REQUEST = "The request is invalid: the server rejected our request due to an error in our request"

# command, and the message kubectl or the API server answers; nothing may change
REFUSED = [
    P("""kubectl -n shop patch pvc data -p '{"spec":{"storageClassName":"fast"}}'""", PVC_IMMUTABLE,
      id="pvc-storage-class"),
    P("""kubectl -n shop patch pvc data --type merge -p '{"spec":{"accessModes":["ReadWriteMany"]}}'""", PVC_IMMUTABLE,
      id="pvc-access-modes"),
    P("""kubectl -n shop patch pvc data -p '{"spec":{"resources":{"requests":{"storage":"512Mi"}}}}'""",
      'The PersistentVolumeClaim "data" is invalid: spec.resources.requests.storage: Forbidden: field can not be '
      "less than previous value", id="pvc-storage-decrease"),
    P("""kubectl -n shop patch pvc pending -p '{"spec":{"resources":{"requests":{"storage":"2Gi"}}}}'""",
      PVC_IMMUTABLE.replace('"data"', '"pending"'), id="pvc-unbound-resize"),
    P("""kubectl -n shop patch pvc fixed -p '{"spec":{"resources":{"requests":{"storage":"2Gi"}}}}'""",
      'Error from server (Forbidden): persistentvolumeclaims "fixed" is forbidden: only dynamically provisioned pvc '
      "can be resized and the storageclass that provisions the pvc must support resize", id="pvc-class-no-expansion"),
    P("""kubectl -n shop patch deploy cart -p '{"spec":{"selector":{"matchLabels":{"version":"v2"}},"template":{"metadata":{"labels":{"version":"v2"}}}}}'""",
      'The Deployment "cart" is invalid: spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string'
      '{"app":"cart", "version":"v2"}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: field is immutable',
      id="deployment-selector"),
    P("""kubectl -n shop patch deploy cart --type merge -p '{"spec":{"template":{"metadata":{"labels":{"app":"shop"}}}}}'""",
      'The Deployment "cart" is invalid: spec.template.metadata.labels: Invalid value: map[string]string{"app":"shop"}: '
      "`selector` does not match template `labels`", id="template-leaves-selector"),
    P("""kubectl -n shop patch sts redis -p '{"spec":{"serviceName":"cache"}}'""", STS_FORBIDDEN,
      id="statefulset-service-name"),
    P("""kubectl -n shop patch sts redis --type json -p '[{"op":"replace","path":"/spec/volumeClaimTemplates/0/spec/resources/requests/storage","value":"5Gi"}]'""",
      STS_FORBIDDEN, id="statefulset-claim-templates"),
    P("""kubectl -n shop patch job migrate -p '{"spec":{"template":{"spec":{"containers":[{"name":"migrate","image":"migrate:2"}]}}}}'""",
      'The Job "migrate" is invalid: spec.template: Invalid value: core.PodTemplateSpec{...}: field is immutable',
      id="job-template"),
    P("""kubectl -n shop patch pod cart-7d9f8-abcde -p '{"spec":{"containers":[{"name":"cart","resources":{"requests":{"memory":"128Mi"}}}]}}'""",
      POD_FORBIDDEN, id="pod-resources"),
    P("""kubectl -n shop patch pod cart-7d9f8-abcde --type merge -p '{"spec":{"tolerations":[]}}'""",
      'The Pod "cart-7d9f8-abcde" is invalid: spec.tolerations: Forbidden: existing toleration can not be modified '
      "except its tolerationSeconds", id="pod-toleration-removed"),
    P("""kubectl -n shop patch pod cart-7d9f8-abcde -p '{"spec":{"containers":[{"name":"debug","image":"busybox"}]}}'""",
      'The Pod "cart-7d9f8-abcde" is invalid: spec.containers: Forbidden: pod updates may not add or remove containers',
      id="pod-container-added"),
    P("kubectl -n shop set env pod/cart-7d9f8-abcde A=1", POD_FORBIDDEN, id="pod-env"),
    P("""kubectl -n shop patch svc cart -p '{"spec":{"clusterIP":"10.96.0.99"}}'""",
      'The Service "cart" is invalid: spec.clusterIPs[0]: Invalid value: []string{"10.96.0.99"}: may not change once set',
      id="service-cluster-ip"),
    P("""kubectl -n shop patch cm frozen -p '{"data":{"A":"2"}}'""",
      'The ConfigMap "frozen" is invalid: data: Forbidden: field is immutable when `immutable` is set',
      id="immutable-configmap-data"),
    P("kubectl -n shop apply -f manifests/frozen.json",
      'The ConfigMap "frozen" is invalid: data: Forbidden: field is immutable when `immutable` is set',
      id="immutable-configmap-apply"),
    P("""kubectl -n shop patch cm frozen --type merge -p '{"immutable":false}'""",
      'The ConfigMap "frozen" is invalid: immutable: Forbidden: field is immutable when `immutable` is set',
      id="immutable-flag"),
    P("""kubectl -n shop patch secret creds -p '{"immutable":true}' && """
      """kubectl -n shop patch secret creds -p '{"stringData":{"password":"swordfish"}}'""",
      'The Secret "creds" is invalid: data: Forbidden: field is immutable when `immutable` is set',
      id="immutable-secret-string-data"),
    P("""kubectl -n shop patch secret creds -p '{"type":"kubernetes.io/tls"}'""",
      'The Secret "creds" is invalid: type: Invalid value: "kubernetes.io/tls": field is immutable', id="secret-type"),
    P("""kubectl patch priorityclass high --type merge -p '{"value":5}'""",
      'The PriorityClass "high" is invalid: value: Forbidden: may not be changed in an update.',
      id="priority-class-value"),
    P("""kubectl -n shop patch rolebinding reader --type merge -p '{"roleRef":{"name":"admin"}}'""",
      'The RoleBinding "reader" is invalid: roleRef: Invalid value: rbac.RoleRef{APIGroup:"rbac.authorization.k8s.io", '
      'Kind:"Role", Name:"admin"}: cannot change roleRef', id="rolebinding-role-ref"),
    P("""kubectl -n shop patch deploy cart --type merge -p '{"metadata":{"name":"basket"}}'""",
      "Error from server (BadRequest): the name of the object (basket) does not match the name on the URL (cart)",
      id="patch-renames"),
    P("""kubectl -n shop patch cm settings --type merge -p '{"metadata":{"namespace":"other"}}'""",
      "Error from server (BadRequest): the namespace of the provided object does not match the namespace sent on "
      "the request", id="patch-moves-namespace"),
    P("kubectl -n shop set resources deploy/cart -c cart --requests=memory=256Mi",
      'The Deployment "cart" is invalid: spec.template.spec.containers[0].resources.requests: Invalid value: "256Mi": '
      "must be less than or equal to memory limit of 128Mi", id="requests-above-limits"),
    P("kubectl -n shop create -f manifests/extra.yaml && kubectl -n shop create -f manifests/extra.yaml",
      'Error from server (AlreadyExists): error when creating "manifests/extra.yaml": configmaps "extra" already exists',
      id="create-twice"),
    P("kubectl apply -f revert/apply.yaml && kubectl create -f revert/apply.yaml",
      'Error from server (AlreadyExists): error when creating "revert/apply.yaml": deployments.apps "cart" already '
      "exists", id="create-existing"),
    P("kubectl -n shop create cm settings --from-literal=a=1",
      'Error from server (AlreadyExists): configmaps "settings" already exists', id="create-generator-existing"),
    P("kubectl -n chaos-mesh delete jvmchaos ad-jvm-exception",
      'Error from server (NotFound): jvmchaos.chaos-mesh.org "ad-jvm-exception" not found', id="delete-missing"),
    P("kubectl -n shop delete deploy cart payment",
      'Error from server (NotFound): deployments.apps "payment" not found', id="delete-one-missing"),
    P("kubectl delete -f revert/delete.yaml && kubectl delete -f revert/delete.yaml",
      'Error from server (NotFound): error when deleting "revert/delete.yaml": podchaos.chaos-mesh.org '
      '"cart-pod-kill-x1" not found', id="delete-file-twice"),
    P("kubectl -n shop delete deploy", "error: resource(s) were provided, but no name, label selector, or --all flag "
      "specified", id="delete-without-name"),
    P("kubectl -n other replace -f manifests/extra.yaml",
      'Error from server (NotFound): error when replacing "manifests/extra.yaml": configmaps "extra" not found',
      id="replace-missing"),
    P("""kubectl -n shop patch deploy checkout -p '{"spec":{"replicas":2}}'""",
      'Error from server (NotFound): deployments.apps "checkout" not found', id="patch-missing"),
    P("kubectl -n shop scale deploy/checkout --replicas=1",
      'Error from server (NotFound): deployments.apps "checkout" not found', id="scale-missing"),
    P("kubectl -n shop set image deploy/checkout checkout=x",
      'Error from server (NotFound): deployments.apps "checkout" not found', id="set-image-missing-object"),
    P("kubectl -n shop set image deploy/cart checkout=x", 'error: unable to find container named "checkout"',
      id="set-image-missing-container"),
    P("kubectl -n shop set resources deploy/cart -c checkout --limits=cpu=1",
      "error: unable to find container named checkout", id="set-resources-missing-container"),
    P("kubectl -n shop scale deploy/cart --replicas=3 --current-replicas=2", "error: Expected replicas to be 2, was 1",
      id="scale-precondition"),
    P("kubectl -n shop scale deploy/cart --replicas=-1",
      "error: The --replicas=COUNT flag is required, and COUNT must be greater than or equal to 0",
      id="scale-negative"),
    P("kubectl -n shop scale deploy/cart", 'error: required flag(s) "replicas" not set', id="scale-no-replicas"),
    P("""kubectl -n shop patch deploy cart -p '{"spec":{"replicas":"3"}}'""",
      'Error from server (BadRequest): Deployment in version "v1" cannot be handled as a Deployment: json: cannot '
      "unmarshal string into Go struct field DeploymentSpec.spec.replicas of type int32", id="replicas-as-text"),
    P("kubectl -n shop scale svc/cart --replicas=2",
      "Error from server (NotFound): the server could not find the requested resource", id="scale-not-scalable"),
    P("kubectl -n shop label deploy cart app=shop", "error: 'app' already has a value (cart), and --overwrite is false",
      id="label-without-overwrite"),
    P("kubectl -n shop rollout undo deployment/frontend", 'error: no rollout history found for deployment "frontend"',
      id="undo-without-history"),
    P("kubectl -n shop rollout undo sts/redis", "error: no last revision to roll back to",
      id="undo-statefulset-without-history"),
    P("kubectl -n shop rollout undo deploy/cart --to-revision=7", "error: unable to find specified revision 7 in history",
      id="undo-unknown-revision"),
    P("kubectl -n shop rollout resume deploy/cart", 'error: deployments.apps "cart" is not paused', id="resume-running"),
    P("kubectl -n shop rollout pause sts/redis", 'error: statefulsets.apps "redis" pausing is not supported',
      id="pause-statefulset"),
    P("kubectl -n shop rollout pause deploy/cart && kubectl -n shop rollout restart deploy/cart",
      """error: deployments.apps "cart" can't restart paused deployment (run rollout resume first)""",
      id="restart-paused"),
    P("kubectl -n shop delete widgets foo", 'error: the server doesn\'t have a resource type "widgets"',
      id="unknown-type"),
    P("""kubectl -n shop patch authorizationpolicy deny-all -p '{"spec":{"action":"ALLOW"}}'""",
      "Error from server (UnsupportedMediaType): the body of the request was in an unknown format - accepted media "
      "types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml",
      id="strategic-on-custom-resource"),
    P("""kubectl -n shop patch deploy cart -p '{"spec":{"template":{"spec":{"containers":[{"image":"x"}]}}}}'""",
      "Error from server: map: map[image:x] does not contain declared merge key: name", id="missing-merge-key"),
    P("""kubectl -n shop patch deploy cart --type json -p '[{"op":"test","path":"/spec/replicas","value":2}]'""",
      f"{INVALID_REQUEST} (testing value /spec/replicas failed)", id="json-test-fails"),
    P("""kubectl -n shop patch deploy cart --type json -p '[{"op":"remove","path":"/spec/paused"}]'""",
      f"{INVALID_REQUEST} (doc is missing path: /spec/paused)", id="json-remove-missing"),
    P("kubectl -n shop patch deploy cart --type strategic", "error: must specify --patch or --patch-file containing "
      "the contents of the patch", id="patch-without-patch"),
    P("kubectl -n shop apply -f manifests/settings.yaml",
      'error: the namespace from the provided object "other" does not match the namespace "shop". You must pass '
      "'--namespace=other' to perform this operation.", id="apply-namespace-mismatch"),
    P("kubectl taint nodes worker-1 dedicated=web:NoSchedule",
      "error: Node worker-1 already has dedicated taint(s) with same effect(s) and --overwrite is false",
      id="taint-without-overwrite"),
]


@pytest.mark.parametrize("command, message", REFUSED)
def test_refused(command, message):
    objects, outcome = _run(command)
    assert outcome == Outcome("refused", message)
    assert objects == _state()


UNSUPPORTED = [
    P("kubectl -n otel-demo edit horizontalpodautoscaler frontend", "`kubectl edit`", id="edit"),
    P("kubectl -n shop exec deploy/cart -- rm -rf /data", "`kubectl exec`", id="exec"),
    P("kubectl -n shop port-forward svc/cart 7070", "`kubectl port-forward`", id="port-forward"),
    P("helm rollback cart 1", "`helm` is not kubectl", id="helm"),
    P("curl -s http://cart:7070/health", "`curl` is not kubectl", id="curl"),
    P("sudo kubectl -n shop scale deploy/cart --replicas=3", "`sudo`", id="sudo"),
    P("KUBECONFIG=/tmp/k kubectl -n shop scale deploy/cart --replicas=3", "environment assignments", id="env-prefix"),
    P("export NS=shop", "`export` is not kubectl", id="builtin"),
    P("kubectl -n shop delete pod $(kubectl -n shop get pods -o name)", "command substitution", id="substitution"),
    P("kubectl -n shop delete pod `kubectl get pods -o name`", "command substitution", id="backticks"),
    P("kubectl -n $NS scale deploy/cart --replicas=3", "shell variables", id="variable"),
    P("kubectl apply -f - <<EOF\napiVersion: v1\nkind: ConfigMap\nEOF", "here-documents", id="here-document"),
    P("kubectl -n shop delete pod x || true", "`||`", id="or"),
    P("kubectl -n shop scale deploy/cart --replicas=3 && kubectl -n shop edit deploy cart", "`kubectl edit`",
      id="and-with-unsupported"),
    P("kubectl -n shop rollout restart deploy/cart &", "background", id="background"),
    P("(kubectl -n shop scale deploy/cart --replicas=3)", "subshells", id="subshell"),
    P("kubectl -n otel-demo apply -f cart-service.yaml", 'the path "cart-service.yaml" is not a file of the compiled '
      "bundle", id="file-not-in-bundle"),
    P("kubectl apply -f https://example.com/cart.yaml", "fetched from the network", id="url"),
    P("kubectl apply -k overlays/prod", "kustomize", id="kustomize"),
    P("kubectl apply -f -", "standard input", id="stdin-unknown"),
    P("kubectl -n shop get pods -o name | xargs kubectl -n shop delete", "`xargs` in a pipeline", id="xargs"),
    P("kubectl -n shop get pods -o name | kubectl -n shop delete -f -", "what `kubectl -n shop get pods -o name` "
      "writes into the pipe is unknown", id="names-into-kubectl"),
    P("kubectl -n shop get pods | sh", "`sh` in a pipeline", id="into-shell"),
    P("kubectl -n shop get deploy cart -o yaml | sed s/broken/fixed/ | kubectl apply -f -", "several commands",
      id="sed-into-apply"),
    P("kubectl -n shop scale deploy/cart --replicas='3", "unterminated quote", id="unterminated-quote"),
    P("kubectl -n shop create deployment cart --image=cart:1", "`kubectl create deployment` is not replayed",
      id="create-deployment"),
    P("kubectl -n shop set selector svc cart app=x", "`kubectl set selector` is not replayed", id="set-selector"),
    P("kubectl drain worker-1", "`kubectl drain`", id="drain"),
    P("kubectl -n shop delete pods --field-selector=status.phase=Failed", "field selector", id="field-selector"),
    P("", "empty command", id="empty"),
    P("kubectl -n shop get pods |", "empty command in a pipeline", id="dangling-pipe"),
]


@pytest.mark.parametrize("command, fragment", UNSUPPORTED)
def test_unsupported(command, fragment):
    objects = _state()
    before = dict(objects)
    outcome = replay(objects, command, files=FILES, history=HISTORY)
    assert outcome.status == "unsupported"
    assert fragment in outcome.message
    assert "\n" not in outcome.message
    assert objects == _state()
    assert all(objects[k] is before[k] for k in before)


READ_ONLY = [
    "kubectl -n otel-demo get deployments",
    "kubectl -n otel-demo describe pods -l opentelemetry.io/name=frontend",
    "kubectl -n shop logs deploy/cart -c cart --previous",
    "kubectl -n shop logs -f cart-7d9f8-abcde",
    "kubectl top pods -n shop",
    "kubectl explain deployment.spec",
    "kubectl -n shop events --for deployment/cart",
    "kubectl auth can-i delete pods --as system:serviceaccount:shop:agent",
    "kubectl version",
    "kubectl api-resources",
    "kubectl -n otel-demo rollout status deployment/checkout",
    "kubectl -n shop rollout history deploy/cart",
    "kubectl -n chaos-mesh get iochaos --selector='experiment.chaos-mesh.org/pause=true'",
    "kubectl -n otel-demo get events --field-selector reason=Preempted",
    "kubectl -n shop get pods | grep cart | wc -l",
    "kubectl -n shop get pods 2>/dev/null",
    "kubectl -n shop get widgets",
    "kubectl -n shop apply -f revert/apply.yaml --dry-run=server",
    "kubectl -n shop scale deploy/cart --replicas=3 --dry-run=client",
    "kubectl -n shop create secret generic x --from-literal=a=b --dry-run=client -o yaml",
    "kubectl -n shop set env deploy/cart --list",
    "kubectl config view",
    "kubectl",
    "kubectl get pods; kubectl describe svc cart",
]


@pytest.mark.parametrize("command", READ_ONLY)
def test_read_only(command):
    objects = _state()
    before = dict(objects)
    outcome = replay(objects, command, files=FILES, history=HISTORY)
    assert outcome.status == "read-only", outcome
    assert objects == _state()
    assert all(objects[k] is before[k] for k in before)


def test_only_an_applied_outcome_changes_the_objects_and_untouched_ones_stay_the_same_dicts():
    objects = _state()
    originals = dict(objects)
    assert replay(objects, "kubectl -n shop scale deploy/cart --replicas=3").status == "applied"
    assert objects[CART] is not originals[CART]
    assert originals[CART] == _state()[CART]  # a change is a new dict: the caller's old one is intact
    assert all(objects[k] is originals[k] for k in objects if k != CART)


def test_a_line_that_fails_halfway_changes_nothing():
    objects = _state()
    outcome = replay(objects, "kubectl -n shop scale deploy/cart --replicas=3 && "
                              "kubectl -n shop delete deploy checkout")
    assert outcome == Outcome("refused", 'Error from server (NotFound): deployments.apps "checkout" not found')
    assert objects == _state()


def test_later_commands_see_earlier_changes():
    objects = _state()
    outcome = replay(objects, "kubectl -n shop delete deploy cart && kubectl -n shop scale deploy/cart --replicas=2")
    assert outcome == Outcome("refused", 'Error from server (NotFound): deployments.apps "cart" not found')
    outcome = replay(objects, "kubectl create ns lab && kubectl label ns lab team=a")
    assert outcome == Outcome("applied", "namespace/lab created; namespace/lab labeled")
    assert objects[("Namespace", None, "lab")]["metadata"] == {"name": "lab", "labels": {"team": "a"}}


def test_files_missing_means_unsupported():
    objects = _state()
    outcome = replay(objects, "kubectl apply -f revert/apply.yaml")
    assert outcome.status == "unsupported"
    assert objects == _state()


# --- the scenario library ---------------------------------------------------------------------------

_RUN = re.compile(r'\brun\s+"((?:[^"\\\n]|\\.)*)"')
_ESCAPES = {'"': '"', "\\": "\\", "n": "\n", "t": "\t", "r": "\r"}


def _unescape(text: str) -> str:
    """A string of the .itb language: \\" \\\\ \\n \\t \\r and \\uXXXX."""
    def one(match: re.Match) -> str:
        seq = match.group(1)
        return chr(int(seq[1:], 16)) if seq.startswith("u") else _ESCAPES.get(seq, "\\" + seq)
    return re.sub(r"\\(u[0-9A-Fa-f]{4}|.)", one, text)


def _library_commands() -> list[str]:
    folder = REPO / "scenarios"
    if not folder.is_dir():
        return []
    commands = set()
    for path in sorted(folder.rglob("*.itb")):
        commands.update(_unescape(m.group(1)) for m in _RUN.finditer(path.read_text(encoding="utf-8")))
    return sorted(commands)


LIBRARY = _library_commands()


@pytest.mark.skipif(not LIBRARY, reason="no scenario library (scenarios/) in this tree")
@pytest.mark.parametrize("command", LIBRARY)
def test_library_commands_replay_without_raising(command):
    objects: dict = {}
    outcome = replay(objects, command, namespace="default", files={}, history={})
    assert outcome.status in ("applied", "read-only", "unsupported", "refused")
    assert outcome.message and "\n" not in outcome.message
    assert "internal error" not in outcome.message
    if outcome.status != "applied":
        assert objects == {}


def test_library_shapes_are_understood():
    """The forms the library uses resolve: on an empty state they reach the API (NotFound), not a parse error."""
    for command in LIBRARY:
        outcome = replay({}, command)
        if outcome.status == "refused":
            assert "NotFound" in outcome.message or "no rollout history" in outcome.message, (command, outcome)


# --- no text makes replay raise ---------------------------------------------------------------------

WORDS = ["kubectl", "k", "oc", "-n", "shop", "--namespace=shop", "scale", "patch", "set", "image", "env", "resources",
         "rollout", "undo", "restart", "pause", "resume", "status", "delete", "label", "annotate", "apply", "create",
         "replace", "cordon", "uncordon", "taint", "get", "edit", "deploy/cart", "deployment", "cart", "sts", "redis",
         "svc/cart", "pvc", "data", "pod", "cart-7d9f8-abcde", "node", "worker-1", "ns", "shop", "schedule",
         "cart-pod-kill", "cm", "frozen", "secret", "generic", "configmap", "--replicas=2", "--replicas", "-1",
         "--current-replicas=1", "-p", "--type", "json", "merge", "strategic", "'{\"spec\":{\"replicas\":2}}'",
         "'[{\"op\":\"remove\",\"path\":\"/spec\"}]'", "'{\"spec\":null}'", "'[1]'", "'null'", "cart=x", "*=y",
         "A=1", "A-", "app-", "app=x", "--overwrite", "-l", "app=cart", "--all", "-A", "-f", "revert/apply.yaml",
         "revert/", "-", "--ignore-not-found", "--to-revision=1", "--dry-run=client", "-o", "yaml", "|", "&&", ";",
         "grep", "<", ">", "2>&1", "-c", "cart", "--limits=cpu=1", "--requests=memory=x", "--from-literal=a=b",
         "key=v:NoSchedule", "key-", "\"", "'", "$", "\\", "#", "(", "--", "=", "/", ",", "--selector=", "a in (b,c)"]


@settings(derandomize=True, deadline=None, database=None, max_examples=1000,
          suppress_health_check=[HealthCheck.too_slow])
@given(st.text(max_size=200))
def test_replay_never_raises_on_any_text(command):
    _check_any(command)


@settings(derandomize=True, deadline=None, database=None, max_examples=2000,
          suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(WORDS), max_size=12))
def test_replay_never_raises_on_kubectl_like_commands(words):
    _check_any(" ".join(words))


def _check_any(command: str) -> None:
    objects = _state()
    outcome = replay(objects, command, namespace="shop", files=FILES, history=HISTORY)
    assert outcome.status in ("applied", "read-only", "unsupported", "refused")
    assert "\n" not in outcome.message
    assert "internal error" not in outcome.message, outcome.message
    if outcome.status != "applied":
        assert objects == _state()
