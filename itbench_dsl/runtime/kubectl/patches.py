"""The patches kubectl sends: strategic merge (with the merge keys of the built-in types), JSON merge
and JSON patch.
"""

from __future__ import annotations

import copy
import re
from typing import Any

from .state import _refused, _Stop
from .server import _go_map, _POD_SPEC_PATHS


_CONTAINER_LISTS = ("containers", "initContainers", "ephemeralContainers")


# list fields Kubernetes merges item by item in a strategic merge, with the key that pairs the
# items (the patchMergeKey of its Go types); other lists are replaced whole
_POD_SPEC_MERGE_KEYS = {"containers": "name", "initContainers": "name", "ephemeralContainers": "name",
                        "volumes": "name", "imagePullSecrets": "name", "hostAliases": "ip",
                        "topologySpreadConstraints": "topologyKey", "schedulingGates": "name",
                        "resourceClaims": "name"}


_CONTAINER_MERGE_KEYS = {"env": "name", "volumeMounts": "mountPath", "volumeDevices": "devicePath",
                         "ports": "containerPort"}


def _merge_key(kind: str, path: tuple[str, ...]) -> str | None:
    """The key a strategic merge pairs a list's items by, or None for a list replaced whole."""
    if not path:
        return None
    field, parent = path[-1], path[-2] if len(path) > 1 else None
    if parent in _CONTAINER_LISTS:
        return _CONTAINER_MERGE_KEYS.get(field)
    if parent == "spec" and field in _POD_SPEC_MERGE_KEYS and kind in _POD_SPEC_PATHS:
        return _POD_SPEC_MERGE_KEYS[field]
    if kind == "Service" and path == ("spec", "ports"):
        return "port"
    if kind == "ServiceAccount" and path == ("secrets",):
        return "name"
    if path == ("metadata", "ownerReferences"):
        return "uid"
    if field == "conditions":
        return "type"
    return None


_PRIMITIVE_SETS = {("metadata", "finalizers")}  # lists of strings a strategic merge unites


def _strategic_merge(original: Any, patch: dict, kind: str, path: tuple[str, ...] = ()) -> dict:
    """A strategic merge patch, as the API server applies it to Kubernetes' own types.

    Maps merge key by key (`null` deletes a key); lists with a merge key merge item by item;
    other lists are replaced. The directives `$patch: replace|delete` (on a map or a list item),
    `$retainKeys`, `$deleteFromPrimitiveList/<field>` and `$setElementOrder/<field>` are honoured.
    """
    base = original if isinstance(original, dict) else {}
    directive = patch.get("$patch")
    if directive == "replace":
        return _strategic_merge({}, {k: v for k, v in patch.items() if k != "$patch"}, kind, path)
    result = copy.deepcopy(base)
    orders: dict[str, list] = {}
    for key, value in patch.items():
        if key in ("$patch", "$retainKeys"):
            continue
        if key.startswith("$deleteFromPrimitiveList/"):
            field = key.partition("/")[2]
            if isinstance(result.get(field), list) and isinstance(value, list):
                result[field] = [item for item in result[field] if item not in value]
            continue
        if key.startswith("$setElementOrder/"):
            if isinstance(value, list):
                orders[key.partition("/")[2]] = value
            continue
        if value is None or (isinstance(value, dict) and value.get("$patch") == "delete"):
            result.pop(key, None)
        elif isinstance(value, dict):
            result[key] = _strategic_merge(result.get(key), value, kind, path + (key,))
        elif isinstance(value, list):
            result[key] = _strategic_list(result.get(key), value, kind, path + (key,))
        else:
            result[key] = copy.deepcopy(value)
    for field, order in orders.items():
        if isinstance(result.get(field), list):
            result[field] = _ordered(result[field], order, _merge_key(kind, path + (field,)))
    retain = patch.get("$retainKeys")
    if isinstance(retain, list):
        result = {k: v for k, v in result.items() if k in retain}
    return result


def _strategic_list(original: Any, patch: list, kind: str, path: tuple[str, ...]) -> list:
    """A list under a strategic merge: merged item by item when the field has a merge key, else replaced."""
    merge_key = _merge_key(kind, path)
    current = original if isinstance(original, list) else []
    if any(isinstance(item, dict) and item.get("$patch") == "replace" for item in patch):
        return [_cleaned(item, kind, path) for item in patch
                if not (isinstance(item, dict) and item.get("$patch") in ("replace", "delete"))]
    if path in _PRIMITIVE_SETS:
        merged = list(current)
        merged += [item for item in patch if item not in merged]
        return copy.deepcopy(merged)
    if merge_key is None:
        return [_cleaned(item, kind, path) for item in patch
                if not (isinstance(item, dict) and item.get("$patch") == "delete")]
    result = copy.deepcopy(current)
    for item in patch:
        if not isinstance(item, dict) or merge_key not in item:
            raise _refused(f"Error from server: map: {_go_map(item)} does not contain declared merge key: {merge_key}")
        matching = [i for i, existing in enumerate(result)
                    if isinstance(existing, dict) and existing.get(merge_key) == item[merge_key]]
        if item.get("$patch") == "delete":
            result = [existing for i, existing in enumerate(result) if i not in matching]
        elif matching:
            result[matching[0]] = _strategic_merge(result[matching[0]], item, kind, path)
        else:
            result.append(_cleaned(item, kind, path))
    return result


def _cleaned(item: Any, kind: str, path: tuple[str, ...]) -> Any:
    """A patch value as it lands in the object: directives and nulls taken out."""
    if isinstance(item, dict):
        return _strategic_merge({}, item, kind, path)
    return copy.deepcopy(item)


def _ordered(items: list, order: list, merge_key: str | None) -> list:
    """Items in a `$setElementOrder` order; items it does not name keep their place after those it does."""
    def identity(item: Any) -> Any:
        if merge_key and isinstance(item, dict):
            return item.get(merge_key)
        return item
    wanted = [identity(o) for o in order]

    def position(item: Any) -> int:
        ident = identity(item)
        return wanted.index(ident) if ident in wanted else len(wanted)
    return sorted(items, key=position)


def _merge_patch(original: Any, patch: Any) -> Any:
    """A JSON merge patch (RFC 7386): maps merge, `null` deletes, anything else replaces."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    result = copy.deepcopy(original) if isinstance(original, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = _merge_patch(result.get(key), value)
    return result


def _json_patch(document: dict, operations: list) -> Any:
    """A JSON patch (RFC 6902): add, remove, replace, move, copy and test, on JSON pointers."""
    doc: Any = copy.deepcopy(document)
    for operation in operations:
        if not isinstance(operation, dict) or not isinstance(operation.get("path"), str):
            raise _json_patch_error("each operation needs an op and a path")
        op = operation.get("op")
        path = operation["path"]
        if op == "add":
            doc = _pointer_add(doc, path, _operand(operation))
        elif op == "remove":
            doc, _ = _pointer_remove(doc, path)
        elif op == "replace":
            doc = _pointer_replace(doc, path, _operand(operation))
        elif op in ("move", "copy"):
            source = operation.get("from")
            if not isinstance(source, str):
                raise _json_patch_error(f"{op} needs a from")
            if op == "move":
                if path != source and path.startswith(source + "/"):
                    raise _json_patch_error(f"cannot move {source} into itself")
                doc, value = _pointer_remove(doc, source)
            else:
                value = copy.deepcopy(_pointer_get(doc, source))
            doc = _pointer_add(doc, path, value)
        elif op == "test":
            if _pointer_get(doc, path) != _operand(operation):
                raise _json_patch_error(f"testing value {path} failed")
        else:
            raise _json_patch_error(f"unexpected op {op!r}")
    return doc


def _json_patch_error(detail: str) -> _Stop:
    return _refused("The request is invalid: the server rejected our request due to an error in our request "
                    f"({detail})")


def _operand(operation: dict) -> Any:
    if "value" not in operation:
        raise _json_patch_error(f"{operation.get('op')} operation needs a value")
    return copy.deepcopy(operation["value"])


def _pointer(path: str) -> list[str]:
    if path == "":
        return []
    if not path.startswith("/"):
        raise _json_patch_error(f"the path {path!r} does not start with /")
    return [token.replace("~1", "/").replace("~0", "~") for token in path[1:].split("/")]


def _index(container: list, token: str, path: str, allow_end: bool) -> int:
    """A JSON pointer token as a list index; `-` (the end) only where an item is added."""
    if token == "-" and allow_end:
        return len(container)
    if not re.fullmatch(r"0|[1-9][0-9]*", token):
        raise _json_patch_error(f"doc is missing path: {path}")
    index = int(token)
    if index > len(container) - (0 if allow_end else 1):
        raise _json_patch_error(f"doc is missing path: {path}")
    return index


def _pointer_parent(doc: Any, tokens: list[str], path: str) -> Any:
    node = doc
    for token in tokens[:-1]:
        if isinstance(node, dict) and token in node:
            node = node[token]
        elif isinstance(node, list):
            node = node[_index(node, token, path, allow_end=False)]
        else:
            raise _json_patch_error(f"doc is missing path: {path}")
    return node


def _pointer_get(doc: Any, path: str) -> Any:
    tokens = _pointer(path)
    if not tokens:
        return doc
    parent = _pointer_parent(doc, tokens, path)
    if isinstance(parent, dict) and tokens[-1] in parent:
        return parent[tokens[-1]]
    if isinstance(parent, list):
        return parent[_index(parent, tokens[-1], path, allow_end=False)]
    raise _json_patch_error(f"doc is missing path: {path}")


def _pointer_add(doc: Any, path: str, value: Any) -> Any:
    tokens = _pointer(path)
    if not tokens:
        return value
    parent = _pointer_parent(doc, tokens, path)
    if isinstance(parent, dict):
        parent[tokens[-1]] = value
    elif isinstance(parent, list):
        parent.insert(_index(parent, tokens[-1], path, allow_end=True), value)
    else:
        raise _json_patch_error(f"doc is missing path: {path}")
    return doc


def _pointer_replace(doc: Any, path: str, value: Any) -> Any:
    tokens = _pointer(path)
    if not tokens:
        return value
    parent = _pointer_parent(doc, tokens, path)
    if isinstance(parent, dict) and tokens[-1] in parent:
        parent[tokens[-1]] = value
    elif isinstance(parent, list):
        parent[_index(parent, tokens[-1], path, allow_end=False)] = value
    else:
        raise _json_patch_error(f"doc is missing key: {path}")
    return doc


def _pointer_remove(doc: Any, path: str) -> tuple[Any, Any]:
    tokens = _pointer(path)
    if not tokens:
        return None, doc
    parent = _pointer_parent(doc, tokens, path)
    if isinstance(parent, dict) and tokens[-1] in parent:
        return doc, parent.pop(tokens[-1])
    if isinstance(parent, list):
        return doc, parent.pop(_index(parent, tokens[-1], path, allow_end=False))
    raise _json_patch_error(f"doc is missing path: {path}")
