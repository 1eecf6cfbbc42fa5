"""A bundle's files as bytes: deterministic YAML and JSON, and scenario.json (the IR). Below the backends,
which write their files with it, and the compiler."""

from __future__ import annotations

import json
from functools import lru_cache

from . import ir, yamlout
from .memo import IdentityMemo, copy_data
from .yamlout import sorted_keys


# manifests of shared application objects are the same dicts from compile to compile (see memo.py)
_yaml_document = IdentityMemo(lambda document: "---\n" + yamlout.dump(document))


def dump_yaml(documents: list[dict], sort_keys: bool = False) -> bytes:
    """Multi-document YAML; ITBench's own files are written with sorted keys."""
    if sort_keys:
        return yamlout.dump_all([sorted_keys(d) for d in documents]).encode("utf-8")
    return "".join(_yaml_document(d) for d in documents).encode("utf-8")


def _compact(value) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(", ", ": "))


def dump_json(data: dict) -> bytes:
    """One top-level key per line, each value compact: diffs stay readable and the C encoder
    does the work (an indented dump of a large topology costs more than the whole compile)."""
    lines = [f"  {json.dumps(k)}: {_compact(v)}" for k, v in data.items()]
    return ("{\n" + ",\n".join(lines) + "\n}\n").encode("utf-8")


# the compact JSON text of a topology object, once per object (shared application objects are never mutated)
_object_text = IdentityMemo(lambda obj: _compact(ir.to_json(obj)))


def scenario_json(scenario: ir.Scenario) -> bytes:
    """scenario.json, byte for byte `dump_json(ir.to_json(scenario))`, with the topology's objects
    serialised once per process: most of a scenario's JSON is its application's objects."""
    data = ir.to_json(scenario)
    topology = scenario.topology
    parts = []
    for name in ir.field_names(ir.Topology):
        if name not in data["topology"]:  # a field left out while it holds its default
            continue
        value = getattr(topology, name)
        if isinstance(value, list) and value and type(value[0]) in ir.TOPOLOGY_OBJECTS:
            text = "[" + ", ".join(_object_text(obj) for obj in value) + "]"
        else:
            text = _compact(ir.to_json(value))
        parts.append(f"{json.dumps(name)}: {text}")
    texts = {k: _compact(v) for k, v in data.items() if k != "topology"}
    texts["topology"] = "{" + ", ".join(parts) + "}"
    lines = [f"  {json.dumps(k)}: {texts[k]}" for k in data]
    return ("{\n" + ",\n".join(lines) + "\n}\n").encode("utf-8")


class YamlError(ValueError):
    """Text that is not YAML."""


# parsed YAML texts kept on disk (cache.py): the configuration files of the standard library's applications
KEPT_YAML = 4096


@lru_cache(maxsize=1024)
def _load_yaml(text: str):
    """The data of `text`, read back from disk when it was parsed before (cache.py): a check reads the same
    application ConfigMaps each time, and importing PyYAML costs more than parsing them. The key is the text and
    PyYAML's files."""
    from . import cache

    where = cache.path_for("yaml", cache.module_stamp("yaml"), text)
    found = cache.load(where)
    if isinstance(found, tuple) and len(found) == 1:
        return found[0]
    if isinstance(found, tuple) and len(found) == 2 and found[0] == "error" and isinstance(found[1], str):
        raise YamlError(found[1])  # a text that is not YAML: that is kept too (ConfigMap values are tried)
    try:
        value = _parse_yaml(text)
    except YamlError as e:
        cache.store(where, ("error", str(e)), keep=KEPT_YAML)
        raise
    cache.store(where, (value,), keep=KEPT_YAML)
    return value


def _parse_yaml(text: str):
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml's parser where PyYAML was built with it
    try:
        return yaml.load(text, Loader=loader)
    except yaml.YAMLError as e:
        raise YamlError(str(e)) from None


def load_yaml(text: str):
    """YAML text as data, read once per process: self-validation and the corpus read the same ConfigMap
    texts again for every case. Raises YamlError; the caller gets its own copy."""
    return copy_data(_load_yaml(text))
