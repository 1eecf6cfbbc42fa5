"""Which resources a rule applies to: kinds, label selectors, and the match and exclude blocks.

Admission user information (subjects, roles) is not known offline, so a filter naming it never
matches; a namespaceSelector needs the labels of namespaces, which a test's Values file may give
(`namespace_labels`); without them it raises `Unsupported`. The shape of every filter is checked
beforehand (shape.py).
"""

from typing import Any

from .outcomes import NOT_SUPPORTED, Unsupported
from .values import wildcard_match


def _split_kind(selector: str) -> tuple[str, str, str, str]:
    """(group, version, kind, subresource) of a kinds entry; '*' where unspecified."""
    parts = selector.split("/")
    sub = ""
    if len(parts) > 1 and parts[-1][:1].islower() and not parts[-2][:1].islower() and parts[-2] != "*":
        sub = parts.pop()
    if len(parts) == 1:
        return "*", "*", parts[0], sub
    if len(parts) == 2:
        if "." in parts[0]:
            return parts[0], "*", parts[1], sub
        return "*", parts[0], parts[1], sub  # Version/Kind: any group
    return parts[0], parts[1], "/".join(parts[2:]), sub


def _kind_matches(kinds: list, resource: dict) -> bool:
    api = resource.get("apiVersion") or ""
    group, _, version = api.rpartition("/")
    kind = resource.get("kind") or ""
    for selector in kinds:
        g, v, k, sub = _split_kind(str(selector))
        if sub:
            continue  # subresources are never the object itself
        if wildcard_match(k, kind) and wildcard_match(v, version) and wildcard_match(g, group):
            return True
    return False


def _selector_matches(selector: dict, labels: dict) -> bool:
    for k, v in (selector.get("matchLabels") or {}).items():
        hits = [lk for lk in labels if wildcard_match(k, lk)]
        if not hits or not any(wildcard_match(str(v), str(labels[h])) for h in hits):
            return False
    for expr in selector.get("matchExpressions") or []:
        key, op = expr["key"], expr["operator"]
        values = [str(v) for v in expr.get("values") or []]
        present = key in labels
        if op == "In" and not (present and str(labels[key]) in values):
            return False
        if op == "NotIn" and present and str(labels[key]) in values:
            return False
        if op == "Exists" and not present:
            return False
        if op == "DoesNotExist" and present:
            return False
        if op not in ("In", "NotIn", "Exists", "DoesNotExist"):
            raise Unsupported(f"the label selector operator {op!r} is {NOT_SUPPORTED}")
    return True


def _filter_matches(flt: dict, resource: dict, operation: str, namespace_labels: dict | None = None) -> bool:
    """One ResourceFilter (resources + subjects/roles) against the resource."""
    if flt.get("subjects") or flt.get("roles") or flt.get("clusterRoles"):
        return False  # no admission user information offline: these never match
    desc = flt.get("resources") or {}
    meta = resource.get("metadata") or {}
    name = meta.get("name") or ""
    kinds = desc.get("kinds")
    if kinds and not _kind_matches(kinds, resource):
        return False
    if desc.get("name") and not wildcard_match(desc["name"], name):
        return False
    if desc.get("names") and not any(wildcard_match(n, name) for n in desc["names"]):
        return False
    namespace = name if resource.get("kind") == "Namespace" else meta.get("namespace") or ""
    if desc.get("namespaces") and not any(wildcard_match(n, namespace) for n in desc["namespaces"]):
        return False
    if desc.get("annotations"):
        ann = meta.get("annotations") or {}
        for k, v in desc["annotations"].items():
            v = "" if v is None else v
            if not any(wildcard_match(k, ak) and wildcard_match(str(v), str(av)) for ak, av in ann.items()):
                return False
    if desc.get("selector") is not None and not _selector_matches(desc["selector"], meta.get("labels") or {}):
        return False
    if desc.get("namespaceSelector") is not None:
        if namespace_labels is None:
            raise Unsupported(f"a namespaceSelector, without namespace labels in the test's Values, is {NOT_SUPPORTED}")
        own = (meta.get("labels") or {}) if resource.get("kind") == "Namespace" else None
        labels = own if own is not None else namespace_labels.get(namespace) or {}
        if not _selector_matches(desc["namespaceSelector"], labels):
            return False
    return not (desc.get("operations") and operation not in desc["operations"])


def _block_matches(block: Any, resource: dict, operation: str, namespace_labels: dict | None = None) -> bool | None:
    """match/exclude block; None when it is empty (no constraint)."""
    if not block:
        return None
    if block.get("any"):
        return any(_filter_matches(f, resource, operation, namespace_labels) for f in block["any"])
    if block.get("all"):
        return all(_filter_matches(f, resource, operation, namespace_labels) for f in block["all"])
    if block.get("resources") or block.get("subjects") or block.get("roles") or block.get("clusterRoles"):
        return _filter_matches(block, resource, operation, namespace_labels)
    return None
