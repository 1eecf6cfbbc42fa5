"""Which objects a command names: `KIND/NAME`, `KIND NAME...`, `-l SELECTOR`, `--all`, `-f FILE`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from .state import _Context, Key, _refused, _unsupported
from .command import _Invocation
from .resources import _CATEGORY_ALL, _key, _not_found, _Resource, _resource, _RESOURCES
from .files import _identify, _manifests


@dataclass(frozen=True)
class _Target:
    res: _Resource
    key: Key
    source: str | None = None  # the file that named it, for kubectl's "error when ..." wording

    @property
    def name(self) -> str:
        return self.key[2]


def _select(ctx: _Context, inv: _Invocation, args: list[str], *, verb: str) -> list[_Target]:
    """The objects named by `TYPE NAME...`, `TYPE/NAME...`, `TYPE -l SELECTOR`, `TYPE --all` or `-f FILE`."""
    if inv.values("filename"):
        if args:
            raise _refused("error: specifying a resource by name and with -f at the same time is not allowed")
        targets = []
        for source, manifest in _manifests(ctx, inv):
            res, key, _ = _identify(ctx, inv, manifest)
            targets.append(_Target(res, key, source))
        return targets
    if not args:
        raise _refused("error: You must provide one or more resources by argument or filename.")
    namespace = inv.namespace
    if "/" in args[0]:
        targets = []
        for arg in args:
            kind, slash, name = arg.partition("/")
            if not slash or not kind or not name:
                raise _refused("error: there is no need to specify a resource type as a separate argument when "
                               "passing arguments in resource/name form")
            res = _resource(ctx, kind)
            targets.append(_Target(res, _key(res, namespace, name)))
        return targets
    types = _types(ctx, args[0])
    names = args[1:]
    selector = inv.last("selector")
    fields = inv.last("field-selector")
    if names:
        if selector is not None:
            raise _refused("error: name cannot be provided when a selector is specified")
        return [_Target(res, _key(res, namespace, name)) for res in types for name in names]
    if selector is None and fields is None and not inv.enabled("all"):
        if verb == "delete":
            raise _refused("error: resource(s) were provided, but no name, label selector, or --all flag specified")
        raise _refused("error: resource(s) were provided, but no name was specified")
    requirements = _parse_selector(selector or "")
    field_requirements = _parse_field_selector(fields or "")
    every_namespace = inv.enabled("all-namespaces")
    targets = []
    for res in types:
        found = []
        for key in ctx.store.keys():
            if key[0] != res.kind or (res.namespaced and not every_namespace and key[1] != namespace):
                continue
            obj = ctx.store.get(key) or {}
            if _matches(requirements, _labels(obj)) and _fields_match(field_requirements, key):
                found.append(key)
        targets += [_Target(res, key) for key in sorted(found, key=lambda k: (k[1] or "", k[2]))]
    return targets


def _types(ctx: _Context, word: str) -> list[_Resource]:
    """The types of a `TYPE[,TYPE...]` argument; `all` is kubectl's category of workloads and services."""
    types: list[_Resource] = []
    for part in word.split(","):
        if not part:
            continue
        if part.lower() == "all":
            types += [r for r in _RESOURCES if r.kind in _CATEGORY_ALL]
        else:
            types.append(_resource(ctx, part))
    if not types:
        raise _refused("error: You must provide one or more resources by argument or filename.")
    return types


def _existing(ctx: _Context, targets: list[_Target]) -> Iterator[tuple[_Target, dict]]:
    """Each target with its object as it is when its turn comes (after the changes to the ones before)."""
    for target in targets:
        obj = ctx.store.get(target.key)
        if obj is None:
            raise _not_found(target.res, target.name, _when(target, "retrieving"))
        yield target, obj


def _when(target: _Target, doing: str) -> str:
    return f'error when {doing} "{target.source}": ' if target.source else ""


def _labels(obj: dict) -> dict:
    meta = obj.get("metadata")
    labels = meta.get("labels") if isinstance(meta, dict) else None
    return labels if isinstance(labels, dict) else {}


_REQUIREMENT = re.compile(r"\s*(?P<key>[^\s!=(),]+)\s*(?P<op>==|=|!=)\s*(?P<value>[^\s!=(),]*)\s*")


_SET_REQUIREMENT = re.compile(r"\s*(?P<key>[^\s!=(),]+)\s+(?P<op>in|notin)\s*\((?P<values>[^()]*)\)\s*")


_EXISTS = re.compile(r"\s*(?P<neg>!?)\s*(?P<key>[^\s!=(),]+)\s*")


def _parse_selector(text: str) -> list[tuple[str, str, frozenset[str]]]:
    """A label selector as (key, operator, values) requirements, all of which must hold."""
    requirements = []
    for part in _split_outside_parentheses(text):
        if not part.strip():
            continue
        if m := _SET_REQUIREMENT.fullmatch(part):
            values = frozenset(v.strip() for v in m["values"].split(",") if v.strip())
            requirements.append((m["key"], m["op"], values))
        elif m := _REQUIREMENT.fullmatch(part):
            requirements.append((m["key"], "!=" if m["op"] == "!=" else "=", frozenset([m["value"]])))
        elif m := _EXISTS.fullmatch(part):
            requirements.append((m["key"], "!" if m["neg"] else "exists", frozenset()))
        else:
            raise _refused(f"error: unable to parse requirement: {part.strip()}")
    return requirements


def _split_outside_parentheses(text: str) -> list[str]:
    parts, depth, current = [], 0, []
    for char in text:
        depth += {"(": 1, ")": -1}.get(char, 0)
        if char == "," and depth == 0:
            parts.append("".join(current))
            current = []
        else:
            current.append(char)
    parts.append("".join(current))
    return parts


def _matches(requirements: list[tuple[str, str, frozenset[str]]], labels: dict) -> bool:
    for key, op, values in requirements:
        present = key in labels
        value = str(labels.get(key))
        if op == "=" and not (present and value in values):
            return False
        if op == "!=" and present and value in values:
            return False
        if op == "in" and not (present and value in values):
            return False
        if op == "notin" and present and value in values:
            return False
        if op == "exists" and not present:
            return False
        if op == "!" and present:
            return False
    return True


def _parse_field_selector(text: str) -> list[tuple[str, str, str]]:
    requirements = []
    for part in text.split(","):
        if not part.strip():
            continue
        m = _REQUIREMENT.fullmatch(part)
        if not m or m["key"] not in ("metadata.name", "metadata.namespace"):
            raise _unsupported(f"the field selector `{part.strip()}` cannot be replayed on manifests")
        requirements.append((m["key"], "!=" if m["op"] == "!=" else "=", m["value"]))
    return requirements


def _fields_match(requirements: list[tuple[str, str, str]], key: Key) -> bool:
    for field, op, value in requirements:
        actual = key[2] if field == "metadata.name" else (key[1] or "")
        if (actual == value) != (op == "="):
            return False
    return True
