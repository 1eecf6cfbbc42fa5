"""`-f FILE`: the bundle's files a command reads (a path, a folder, `-R`), their YAML or JSON documents
and the objects they describe.
"""

from __future__ import annotations

import json
import re
from typing import Any

from .state import _Context, Key, _refused, _unsupported
from .command import _Invocation
from .resources import _key, _Resource, _resource_of


def _manifests(ctx: _Context, inv: _Invocation) -> list[tuple[str, dict]]:
    """The manifests of every `-f` of the command, with the file each came from."""
    out = []
    for path in inv.values("filename"):
        if path == "-":
            if inv.stdin is None:
                raise _unsupported("`-f -` reads manifests from standard input, which is unknown here")
            out += inv.stdin
        elif re.match(r"[a-z][a-z0-9+.-]*://", path, re.I):
            raise _unsupported(f"`{path}` is fetched from the network, so what it contains is unknown")
        else:
            out += _documents_of_path(ctx, path)
    return out


def _bundle_paths(ctx: _Context, path: str) -> list[str]:
    """The bundle files a path names: as given, relative to the bundle root, or under a folder.

    A solution may name a bundle file from elsewhere (`./revert/apply.yaml`,
    `bundle/revert/apply.yaml`, `/tmp/x/revert/apply.yaml`): the longest tail that is a file, or
    a folder of files, of the bundle is taken.
    """
    parts = [p for p in path.split("/") if p not in ("", ".")]
    for start in range(len(parts)):
        candidate = "/".join(parts[start:])
        if candidate in ctx.files:
            return [candidate]
        folder = [f for f in sorted(ctx.files) if f.startswith(candidate + "/")
                  and f.lower().endswith((".yaml", ".yml", ".json"))]
        if folder:
            return folder
    return []


def _documents_of_path(ctx: _Context, path: str) -> list[tuple[str, dict]]:
    """The manifests of a bundle file (or folder), each with the file it came from."""
    found = _bundle_paths(ctx, path)
    if not found:
        raise _unsupported(f'the path "{path}" is not a file of the compiled bundle, so what it contains is unknown')
    out = []
    for name in found:
        try:
            text = ctx.files[name].decode("utf-8")
        except (UnicodeDecodeError, AttributeError):
            raise _refused(f"error: error parsing {name}: not UTF-8 text") from None
        out += [(name, doc) for doc in _parse_documents(text, name)]
    return out


def _parse_documents(text: str, what: str) -> list[dict]:
    """The objects of a YAML or JSON text; a `List` stands for its items."""
    stripped = text.strip()
    if stripped.startswith(("{", "[")):
        try:
            docs = [json.loads(stripped)]
        except ValueError:
            docs = _yaml_documents(text, what)
    else:
        docs = _yaml_documents(text, what)
    out = []
    for doc in docs:
        if isinstance(doc, list):
            doc = {"kind": "List", "items": doc}
        if not isinstance(doc, dict):
            raise _refused(f"error: error parsing {what}: a manifest must be a mapping")
        if isinstance(doc.get("kind"), str) and doc["kind"].endswith("List") and isinstance(doc.get("items"), list):
            for item in doc["items"]:
                if not isinstance(item, dict):
                    raise _refused(f"error: error parsing {what}: a list item must be a mapping")
                out.append(item)
        elif doc:
            out.append(doc)
    return out


def _yaml_documents(text: str, what: str) -> list[Any]:
    """YAML through the package's standard-library reader, imported only when YAML is met."""
    try:
        from ..miniyaml import load_all
    except ImportError:
        raise _unsupported(f"{what} is YAML, and no YAML reader is available here") from None
    try:
        return load_all(text)
    except (ValueError, RecursionError) as exc:
        raise _refused(f"error: error parsing {what}: {exc}") from None


def _identify(ctx: _Context, inv: _Invocation, manifest: dict) -> tuple[_Resource, Key, dict]:
    """A manifest's type and key, with the namespace kubectl gives it when it has none."""
    res = _resource_of(ctx, manifest)
    meta = manifest.get("metadata")
    if not isinstance(meta, dict) or not isinstance(meta.get("name"), str) or not meta["name"]:
        raise _refused("error: resource name may not be empty")
    namespace = meta.get("namespace")
    if not res.namespaced:
        return res, _key(res, None, meta["name"]), manifest
    if namespace in (None, ""):
        namespace = inv.namespace
        manifest = {**manifest, "metadata": {**meta, "namespace": namespace}}
    elif not isinstance(namespace, str):
        raise _refused("error: the namespace of the provided object is not text")
    elif inv.explicit_namespace and namespace != inv.namespace:
        raise _refused(f'error: the namespace from the provided object "{namespace}" does not match the namespace '
                       f'"{inv.namespace}". You must pass \'--namespace={namespace}\' to perform this operation.')
    return res, _key(res, namespace, meta["name"]), manifest
