"""The API server's write path: a change merged as the server merges it, the fields the server owns kept,
and an update validated against the rules that refuse it on a real cluster, with the server's message.
"""

from __future__ import annotations

import base64
import copy
import json
import re
from collections.abc import Callable
from fractions import Fraction
from typing import Any

from .state import _Context, _refused, _Stop
from .resources import _Resource
from .targets import _labels, _matches, _Target


_SCALABLE = {"Deployment", "StatefulSet", "ReplicaSet", "ReplicationController"}


# where a type keeps its pod spec, for `kubectl set` and the validation of pod templates
_POD_SPEC_PATHS = {
    "Pod": ("spec",),
    "Deployment": ("spec", "template", "spec"),
    "StatefulSet": ("spec", "template", "spec"),
    "DaemonSet": ("spec", "template", "spec"),
    "ReplicaSet": ("spec", "template", "spec"),
    "ReplicationController": ("spec", "template", "spec"),
    "Job": ("spec", "template", "spec"),
    "CronJob": ("spec", "jobTemplate", "spec", "template", "spec"),
}


_QUANTITY = re.compile(r"([+-]?(?:\d+(?:\.\d*)?|\.\d+))(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E|[eE][+-]?\d+)?", re.ASCII)


_SUFFIX = {"": 1, "n": Fraction(1, 10**9), "u": Fraction(1, 10**6), "m": Fraction(1, 1000), "k": 10**3,
           "M": 10**6, "G": 10**9, "T": 10**12, "P": 10**15, "E": 10**18, "Ki": 2**10, "Mi": 2**20,
           "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}


def _quantity(value: Any) -> Fraction | None:
    """A Kubernetes quantity (`250m`, `1.5Gi`, `2e3`) as an exact number, or None if it is not one."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return Fraction(value)
    if not isinstance(value, str):
        return None
    m = _QUANTITY.fullmatch(value.strip())
    if not m:
        return None
    suffix = m.group(2) or ""
    number = Fraction(m.group(1))
    if suffix[:1] in ("e", "E"):
        return number * Fraction(10) ** int(suffix[1:])
    return number * _SUFFIX[suffix]


def _dig(value: Any, *keys: str) -> Any:
    """`value[k1][k2]...`, or None where a step is missing or not a map."""
    for key in keys:
        if not isinstance(value, dict):
            return None
        value = value.get(key)
    return value


def _dict_at(node: dict, key: str) -> dict:
    """`node[key]` as a dict, made (or replacing a value that is not one) so it can be edited."""
    value = node.get(key)
    if not isinstance(value, dict):
        value = {}
        node[key] = value
    return value


_SERVER_METADATA = ("uid", "resourceVersion", "creationTimestamp", "generation", "managedFields", "selfLink",
                    "deletionTimestamp")


def _create_object(ctx: _Context, target: _Target, manifest: dict) -> None:
    """Stores a new object, after the checks the API server makes on creation."""
    _check_decodes(target, manifest)
    new = copy.deepcopy(manifest)
    new.pop("status", None)
    if target.res.kind == "Secret":
        _fold_string_data(new)
        new.setdefault("type", "Opaque")
    errors = _object_errors(target.res, new)
    if errors:
        raise _invalid(target, errors)
    ctx.store.put(target.key, new)


def _update(ctx: _Context, target: _Target, old: dict, new: dict) -> bool:
    """Stores an updated object as the API server would, and tells whether it changed.

    The server keeps what it owns (status, uid and the other server-set metadata, a Service's
    allocated addresses), then validates the update; a refused update raises with its message.
    """
    _check_decodes(target, new)
    new = _server_owned(target.res, old, new)
    errors = _update_errors(ctx, target, old, new) + _object_errors(target.res, new)
    if errors:
        raise _invalid(target, errors)
    if new == old:
        return False
    meta = new.get("metadata")
    if isinstance(meta, dict) and isinstance(meta.get("generation"), int) and new.get("spec") != old.get("spec"):
        meta["generation"] += 1
    ctx.store.put(target.key, new)
    return True


def _check_decodes(target: _Target, obj: dict) -> None:
    """The API server's first step, decoding into the Go type: a replica count given as text fails.

    `"replicas": "3"` is a common slip in a hand-written patch, and the server rejects it before
    any validation.
    """
    replicas = _dig(obj, "spec", "replicas")
    if target.res.kind in _SCALABLE and replicas is not None and (
            not isinstance(replicas, int) or isinstance(replicas, bool)):
        go_type = {str: "string", float: "number", bool: "bool", list: "array"}.get(type(replicas), "object")
        raise _refused(f'Error from server (BadRequest): {target.res.kind} in version "v1" cannot be handled as a '
                       f"{target.res.kind}: json: cannot unmarshal {go_type} into Go struct field "
                       f"{target.res.kind}Spec.spec.replicas of type int32")


def _invalid(target: _Target, errors: list[str]) -> _Stop:
    """A validation refusal worded as kubectl shows it: one cause, or several in brackets."""
    detail = errors[0] if len(errors) == 1 else "[" + ", ".join(errors) + "]"
    return _refused(f'The {target.res.kind} "{target.name}" is invalid: {detail}')


def _server_owned(res: _Resource, old: dict, new: dict) -> dict:
    """`new` with what a client cannot change put back: server metadata, status, allocations."""
    new = copy.deepcopy(new)
    old_meta = old.get("metadata") if isinstance(old.get("metadata"), dict) else {}
    meta = _dict_at(new, "metadata")
    for field in _SERVER_METADATA:
        if field in old_meta:
            meta[field] = copy.deepcopy(old_meta[field])
        else:
            meta.pop(field, None)
    for field in ("kind", "apiVersion"):
        if field in old:
            new[field] = old[field]
    if "status" in old:
        new["status"] = copy.deepcopy(old["status"])
    else:
        new.pop("status", None)
    if res.kind == "Secret":
        _fold_string_data(new)
    if res.kind == "Service":
        _keep_service_allocations(old, new)
    return new


def _fold_string_data(secret: dict) -> None:
    """The API server stores a Secret's stringData as base64 data, and never stringData itself."""
    strings = secret.pop("stringData", None)
    if isinstance(strings, dict) and strings:
        data = _dict_at(secret, "data")
        for key, value in strings.items():
            data[key] = base64.b64encode(str(value).encode("utf-8")).decode("ascii")


def _service_type(spec: dict) -> str:
    return spec.get("type") or "ClusterIP"


def _keep_service_allocations(old: dict, new: dict) -> None:
    """What the API server does to a Service's addresses on update.

    Addresses an update leaves out are kept (they were allocated, not written); turning the
    Service into an ExternalName drops those the update left unchanged; leaving NodePort or
    LoadBalancer for ClusterIP drops the node ports likewise.
    """
    old_spec = old.get("spec") if isinstance(old.get("spec"), dict) else {}
    spec = _dict_at(new, "spec")
    old_type, new_type = _service_type(old_spec), _service_type(spec)
    if new_type == "ExternalName":
        if old_type != "ExternalName":
            for field in ("clusterIP", "clusterIPs", "ipFamilies", "ipFamilyPolicy"):
                if spec.get(field) == old_spec.get(field):
                    spec.pop(field, None)
        return
    if old_type == "ExternalName":
        return
    if not spec.get("clusterIP") and old_spec.get("clusterIP"):
        spec["clusterIP"] = old_spec["clusterIP"]
    if not spec.get("clusterIPs") and old_spec.get("clusterIPs"):
        spec["clusterIPs"] = copy.deepcopy(old_spec["clusterIPs"])
    if (spec.get("clusterIP") != old_spec.get("clusterIP") and spec.get("clusterIPs") == old_spec.get("clusterIPs")
            and spec.get("clusterIP") and isinstance(spec.get("clusterIPs"), list)):
        spec["clusterIPs"] = [spec["clusterIP"], *spec["clusterIPs"][1:]]
    node_ports = new_type in ("NodePort", "LoadBalancer")
    old_ports = {p.get("port"): p for p in old_spec.get("ports") or [] if isinstance(p, dict)}
    for port in spec.get("ports") or []:
        if not isinstance(port, dict):
            continue
        previous = old_ports.get(port.get("port"), {})
        if node_ports and "nodePort" not in port and "nodePort" in previous:
            port["nodePort"] = previous["nodePort"]
        left_node_ports = old_type in ("NodePort", "LoadBalancer") and not node_ports
        if left_node_ports and port.get("nodePort") == previous.get("nodePort"):
            port.pop("nodePort", None)


def _update_errors(ctx: _Context, target: _Target, old: dict, new: dict) -> list[str]:
    """The API server's refusals of an update, by type (Kubernetes' validation of updates)."""
    check = _UPDATE_CHECKS.get(target.res.kind)
    return check(ctx, target, old, new) if check else []


def _spec(obj: dict) -> dict:
    spec = obj.get("spec")
    return spec if isinstance(spec, dict) else {}


def _pruned(value: Any) -> Any:
    """A value as Go compares it after decoding: null, empty maps, lists and strings are absent."""
    if isinstance(value, dict):
        out = {k: _pruned(v) for k, v in value.items()}
        return {k: v for k, v in out.items() if v not in (None, {}, [], "")}
    if isinstance(value, list):
        return [_pruned(v) for v in value]
    return value


def _selector_errors(ctx: _Context, target: _Target, old: dict, new: dict) -> list[str]:
    """apps/v1 workloads: the selector never changes."""
    old_selector = _pruned(_spec(old).get("selector"))
    new_selector = _pruned(_spec(new).get("selector"))
    if old_selector != new_selector:
        return [f"spec.selector: Invalid value: {_go_selector(_spec(new).get('selector'))}: field is immutable"]
    return []


_STATEFULSET_MUTABLE = ("replicas", "ordinals", "template", "updateStrategy", "persistentVolumeClaimRetentionPolicy",
                        "minReadySeconds")


_STATEFULSET_DEFAULTS = {"podManagementPolicy": "OrderedReady", "revisionHistoryLimit": 10}


def _statefulset_errors(ctx: _Context, target: _Target, old: dict, new: dict) -> list[str]:
    """A StatefulSet's spec only changes in replicas, template, update strategy and a few more."""
    def fixed(obj: dict) -> Any:
        spec = {**_STATEFULSET_DEFAULTS, **_spec(obj)}
        return _pruned({k: v for k, v in spec.items() if k not in _STATEFULSET_MUTABLE})
    if fixed(old) != fixed(new):
        return ["spec: Forbidden: updates to statefulset spec for fields other than 'replicas', 'ordinals', "
                "'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' "
                "are forbidden"]
    return []


def _job_errors(ctx: _Context, target: _Target, old: dict, new: dict) -> list[str]:
    """A Job's selector and pod template are fixed once it exists."""
    errors = []
    if _pruned(_spec(old).get("selector")) != _pruned(_spec(new).get("selector")):
        errors.append(f"spec.selector: Invalid value: {_go_selector(_spec(new).get('selector'))}: field is immutable")
    if _pruned(_spec(old).get("template")) != _pruned(_spec(new).get("template")):
        errors.append("spec.template: Invalid value: core.PodTemplateSpec{...}: field is immutable")
    return errors


def _pvc_errors(ctx: _Context, target: _Target, old: dict, new: dict) -> list[str]:
    """A claim's spec is fixed, but for a bound claim's storage request (up only) and attributes class."""
    old_spec, new_spec = copy.deepcopy(_spec(old)), copy.deepcopy(_spec(new))
    if not old_spec.get("volumeName"):
        old_spec["volumeName"] = new_spec.get("volumeName")  # the binder sets it once
    beta_class = _dig(old, "metadata", "annotations", "volume.beta.kubernetes.io/storage-class")
    if old_spec.get("storageClassName") is None and new_spec.get("storageClassName") is not None and (
            beta_class is None or beta_class == new_spec.get("storageClassName")):
        new_spec.pop("storageClassName", None)  # a class may be set once on a claim that had none
    status = old.get("status") if isinstance(old.get("status"), dict) else {}
    bound = status.get("phase") in (None, "Bound")
    if bound:
        requests = _dig(new_spec, "resources", "requests")
        if isinstance(requests, dict):
            old_requests = _dig(old_spec, "resources", "requests") or {}
            if "storage" in old_requests:
                requests["storage"] = old_requests["storage"]
            else:
                requests.pop("storage", None)
        if "volumeAttributesClassName" in new_spec:
            new_spec["volumeAttributesClassName"] = old_spec.get("volumeAttributesClassName")
    errors = []
    if _pruned(old_spec) != _pruned(new_spec):
        errors.append("spec: Forbidden: spec is immutable after creation except resources.requests and "
                      "volumeAttributesClassName for bound claims")
    old_size = _quantity(_dig(old, "spec", "resources", "requests", "storage"))
    new_size = _quantity(_dig(new, "spec", "resources", "requests", "storage"))
    if old_size is not None and new_size is not None and new_size < old_size:
        errors.append("spec.resources.requests.storage: Forbidden: field can not be less than previous value")
    if not errors and old_size is not None and new_size is not None and new_size > old_size:
        _check_resize(ctx, target, new)
    return errors


def _check_resize(ctx: _Context, target: _Target, claim: dict) -> None:
    """The admission check on a claim's growth: its storage class must allow volume expansion.

    Checked only when the state holds the StorageClass; without it the class is unknown.
    """
    name = _spec(claim).get("storageClassName")
    if not isinstance(name, str):
        return
    storage_class = ctx.store.get(("StorageClass", None, name))
    if storage_class is not None and storage_class.get("allowVolumeExpansion") is not True:
        raise _refused(f'Error from server (Forbidden): persistentvolumeclaims "{target.name}" is forbidden: only '
                       "dynamically provisioned pvc can be resized and the storageclass that provisions the pvc must "
                       "support resize")


_POD_UPDATABLE = ("`spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,"
                  "`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` "
                  "(allow it to be set to 1 if it was previously negative)")


def _pod_errors(ctx: _Context, target: _Target, old: dict, new: dict) -> list[str]:
    """A pod's spec is fixed but for images, a shorter deadline, more tolerations and fewer scheduling gates."""
    old_spec, new_spec = _spec(old), copy.deepcopy(_spec(new))
    for field in ("containers", "initContainers"):
        if len(old_spec.get(field) or []) != len(new_spec.get(field) or []):
            return [f"spec.{field}: Forbidden: pod updates may not add or remove containers"]
    errors = []
    old_deadline, new_deadline = old_spec.get("activeDeadlineSeconds"), new_spec.get("activeDeadlineSeconds")
    if new_deadline is None and old_deadline is not None:
        errors.append("spec.activeDeadlineSeconds: Invalid value: \"null\": must not update from a positive "
                      "integer to nil value")
    elif isinstance(new_deadline, int) and isinstance(old_deadline, int) and new_deadline > old_deadline:
        errors.append(f"spec.activeDeadlineSeconds: Invalid value: {new_deadline}: must be less than or equal to "
                      "previous value")
    if not _only_added(old_spec.get("tolerations") or [], new_spec.get("tolerations") or []):
        errors.append("spec.tolerations: Forbidden: existing toleration can not be modified except its "
                      "tolerationSeconds")
    for field in ("containers", "initContainers"):
        for before, after in zip(old_spec.get(field) or [], new_spec.get(field) or []):
            if isinstance(before, dict) and isinstance(after, dict):
                after["image"] = before.get("image")
    for field in ("activeDeadlineSeconds", "tolerations", "schedulingGates"):
        new_spec[field] = old_spec.get(field)
    grace = old_spec.get("terminationGracePeriodSeconds")
    if isinstance(grace, int) and grace < 0 and new_spec.get("terminationGracePeriodSeconds") == 1:
        new_spec["terminationGracePeriodSeconds"] = grace
    if _pruned(new_spec) != _pruned(old_spec):
        errors.append(f"spec: Forbidden: pod updates may not change fields other than {_POD_UPDATABLE}")
    return errors


def _only_added(old: list, new: list) -> bool:
    """Whether every old toleration is still there (its tolerationSeconds may change)."""
    def essence(toleration: Any) -> Any:
        return _pruned({k: v for k, v in toleration.items() if k != "tolerationSeconds"}) \
            if isinstance(toleration, dict) else toleration
    remaining = [essence(t) for t in new]
    return all(essence(t) in remaining for t in old)


def _service_errors(ctx: _Context, target: _Target, old: dict, new: dict) -> list[str]:
    """A Service's cluster IPs never change once allocated, unless it is (or becomes) an ExternalName."""
    old_spec, new_spec = _spec(old), _spec(new)
    if "ExternalName" in (_service_type(old_spec), _service_type(new_spec)):
        return []
    if old_spec.get("clusterIP") == "None" and new_spec.get("clusterIP") == "None":
        return []
    old_ips = _cluster_ips(old_spec)
    new_ips = _cluster_ips(new_spec)
    shown = "[]string{" + ", ".join(json.dumps(ip) for ip in new_ips) + "}" if new_ips else "[]string(nil)"
    if not old_ips:
        return []
    if not new_ips:
        return [f"spec.clusterIPs[0]: Invalid value: {shown}: primary clusterIP can not be unset"]
    for i, ip in enumerate(old_ips[:len(new_ips)]):
        if new_ips[i] != ip:
            return [f"spec.clusterIPs[{i}]: Invalid value: {shown}: may not change once set"]
    return []


def _cluster_ips(spec: dict) -> list[str]:
    ips = spec.get("clusterIPs")
    if isinstance(ips, list) and ips:
        return [str(ip) for ip in ips]
    ip = spec.get("clusterIP")
    return [str(ip)] if ip else []


def _immutable_data_errors(ctx: _Context, target: _Target, old: dict, new: dict) -> list[str]:
    """A ConfigMap or Secret marked immutable keeps its data (and the mark) forever; a Secret its type."""
    errors = []
    if target.res.kind == "Secret" and (old.get("type") or "Opaque") != (new.get("type") or "Opaque"):
        errors.append(f"type: Invalid value: {json.dumps(new.get('type') or 'Opaque')}: field is immutable")
    if old.get("immutable") is True:
        if new.get("immutable") is not True:
            errors.append("immutable: Forbidden: field is immutable when `immutable` is set")
        for field in ("data", "binaryData"):
            if _pruned(old.get(field)) != _pruned(new.get(field)):
                errors.append(f"{field}: Forbidden: field is immutable when `immutable` is set")
    return errors


def _priority_class_errors(ctx: _Context, target: _Target, old: dict, new: dict) -> list[str]:
    """A PriorityClass's value and preemption policy are fixed once it exists."""
    errors = []
    if old.get("value") != new.get("value"):
        errors.append("value: Forbidden: may not be changed in an update.")
    if old.get("preemptionPolicy") != new.get("preemptionPolicy") and "preemptionPolicy" in new:
        errors.append(f"preemptionPolicy: Invalid value: {json.dumps(new.get('preemptionPolicy'))}: field is immutable")
    return errors


def _binding_errors(ctx: _Context, target: _Target, old: dict, new: dict) -> list[str]:
    """A (Cluster)RoleBinding's roleRef is fixed once it exists."""
    if _pruned(old.get("roleRef")) != _pruned(new.get("roleRef")):
        ref = new.get("roleRef") if isinstance(new.get("roleRef"), dict) else {}
        shown = (f'rbac.RoleRef{{APIGroup:{json.dumps(ref.get("apiGroup", ""))}, '
                 f'Kind:{json.dumps(ref.get("kind", ""))}, Name:{json.dumps(ref.get("name", ""))}}}')
        return [f"roleRef: Invalid value: {shown}: cannot change roleRef"]
    return []


_UPDATE_CHECKS: dict[str, Callable[[_Context, _Target, dict, dict], list[str]]] = {
    "Deployment": _selector_errors, "ReplicaSet": _selector_errors, "DaemonSet": _selector_errors,
    "StatefulSet": _statefulset_errors, "Job": _job_errors, "PersistentVolumeClaim": _pvc_errors,
    "Pod": _pod_errors, "Service": _service_errors, "ConfigMap": _immutable_data_errors,
    "Secret": _immutable_data_errors, "PriorityClass": _priority_class_errors,
    "RoleBinding": _binding_errors, "ClusterRoleBinding": _binding_errors,
}


def _object_errors(res: _Resource, obj: dict) -> list[str]:
    """Checks every write of a workload or pod passes: replicas, selector against labels, requests and limits."""
    path = _POD_SPEC_PATHS.get(res.kind)
    if path is None:
        return []
    errors = []
    spec = _spec(obj)
    replicas = spec.get("replicas")
    if res.kind in _SCALABLE and isinstance(replicas, int) and not isinstance(replicas, bool) and replicas < 0:
        errors.append(f"spec.replicas: Invalid value: {replicas}: must be greater than or equal to 0")
    if res.kind in ("Deployment", "StatefulSet", "DaemonSet", "ReplicaSet"):
        template = spec.get("template") if isinstance(spec.get("template"), dict) else {}
        selector = spec.get("selector")
        labels = _labels(template)
        if isinstance(selector, dict) and not _selector_selects(selector, labels):
            errors.append(f"spec.template.metadata.labels: Invalid value: {_go_string_map(labels)}: `selector` does "
                          "not match template `labels`")
    pod_spec: Any = obj
    for step in path:
        pod_spec = pod_spec.get(step) if isinstance(pod_spec, dict) else None
    if isinstance(pod_spec, dict):
        errors += _resource_errors(pod_spec, ".".join(path))
    return errors


def _selector_selects(selector: dict, labels: dict) -> bool:
    """Whether a LabelSelector (matchLabels and matchExpressions) selects these labels."""
    match_labels = selector.get("matchLabels") or {}
    if not isinstance(match_labels, dict):
        return False
    if any(labels.get(k) != v for k, v in match_labels.items()):
        return False
    for expression in selector.get("matchExpressions") or []:
        if not isinstance(expression, dict):
            return False
        op = str(expression.get("operator", ""))
        values = frozenset(str(v) for v in expression.get("values") or [])
        requirement = {"In": "in", "NotIn": "notin", "Exists": "exists", "DoesNotExist": "!"}.get(op)
        if requirement is None or not _matches([(str(expression.get("key")), requirement, values)], labels):
            return False
    return True


def _resource_errors(pod_spec: dict, prefix: str) -> list[str]:
    """A container may not request more of a resource than its limit."""
    errors = []
    for field in ("initContainers", "containers"):
        for i, container in enumerate(pod_spec.get(field) or []):
            resources = container.get("resources") if isinstance(container, dict) else None
            if not isinstance(resources, dict):
                continue
            limits = resources.get("limits") if isinstance(resources.get("limits"), dict) else {}
            requests = resources.get("requests") if isinstance(resources.get("requests"), dict) else {}
            for name, request in requests.items():
                wanted, ceiling = _quantity(request), _quantity(limits.get(name))
                if wanted is not None and ceiling is not None and wanted > ceiling:
                    errors.append(f'{prefix}.{field}[{i}].resources.requests: Invalid value: "{request}": must be '
                                  f"less than or equal to {name} limit of {limits[name]}")
    return errors


def _go_string_map(value: Any) -> str:
    """A map[string]string as Go's %#v prints it, as the API server's messages show values."""
    if not isinstance(value, dict) or not value:
        return "map[string]string(nil)"
    return "map[string]string{" + ", ".join(f"{json.dumps(str(k))}:{json.dumps(str(v))}"
                                            for k, v in sorted(value.items(), key=lambda kv: str(kv[0]))) + "}"


def _go_selector(selector: Any) -> str:
    """A LabelSelector as Go's %#v prints it in the API server's messages."""
    selector = selector if isinstance(selector, dict) else {}
    expressions = selector.get("matchExpressions")
    if isinstance(expressions, list) and expressions:
        shown = ", ".join(
            f"v1.LabelSelectorRequirement{{Key:{json.dumps(str(e.get('key', '')))}, "
            f"Operator:{json.dumps(str(e.get('operator', '')))}, Values:[]string{{"
            + ", ".join(json.dumps(str(v)) for v in e.get("values") or []) + "}}"
            for e in expressions if isinstance(e, dict))
        expressions_text = f"[]v1.LabelSelectorRequirement{{{shown}}}"
    else:
        expressions_text = "[]v1.LabelSelectorRequirement(nil)"
    return (f"v1.LabelSelector{{MatchLabels:{_go_string_map(selector.get('matchLabels'))}, "
            f"MatchExpressions:{expressions_text}}}")


def _go_map(value: Any) -> str:
    """A map as Go's %v prints it (`map[k:v]`), as in the strategic-merge errors."""
    if isinstance(value, dict):
        return "map[" + " ".join(f"{k}:{_go_map(v)}" for k, v in sorted(value.items(), key=lambda kv: str(kv[0]))) + "]"
    if isinstance(value, list):
        return "[" + " ".join(_go_map(v) for v in value) + "]"
    if value is None:
        return "<nil>"
    if isinstance(value, bool):
        return str(value).lower()
    return str(value)
