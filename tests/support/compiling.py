"""Helpers the test modules share: the repository's folders, compiling text, reading a bundle's YAML.

Test modules import them by name (`from support.compiling import compile_text`): pytest puts tests/ on the
import path (tests/conftest.py is there).
"""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from itbench_dsl.compiler import CompileResult, compile_source
from itbench_dsl.diagnostics import Diagnostics, render_human

REPO = Path(__file__).resolve().parents[2]
SCENARIOS = REPO / "scenarios"
REFERENCE = REPO.parent / "shared" / "reference"  # real data, beside the checkout in CI; tests skip without it


def library_sample(paths: list, every: int) -> list:
    """Every `every`-th of `paths` (in their order, from the first), or all of them where ITBENCH_TEST_LIBRARY=all:
    for the tests whose every case generates and fully checks variants (minutes each), which the suite's time on
    2 cores cannot afford over the whole library; the sample keeps every domain and generator the full list has."""
    import os

    return list(paths) if os.environ.get("ITBENCH_TEST_LIBRARY") == "all" else list(paths)[::every]


def compile_text(text: str | bytes, path: str = "input.itb", validate: bool = True) -> tuple[CompileResult, Diagnostics]:
    """Compile `text` as the file `path`: the result and every diagnostic."""
    data = text if isinstance(text, bytes) else text.encode("utf-8")
    diags = Diagnostics()
    return compile_source(data, path, diags, validate=validate), diags


def compile_files(text: str | bytes, path: str = "input.itb", validate: bool = True) -> tuple[dict[str, bytes], Diagnostics]:
    """Compile `text`: the bundle's files (empty with errors) and every diagnostic."""
    result, diags = compile_text(text, path, validate)
    return result.files, diags


def compile_ok(text: str | bytes, path: str = "input.itb", clean: bool = False) -> CompileResult:
    """Compile `text`, which must have no error (and, with `clean`, no diagnostic at all)."""
    result, diags = compile_text(text, path)
    assert not (diags.items if clean else diags.errors()), render_human(diags, color=False)
    assert result.files
    return result


def yaml_documents(files: dict[str, bytes], name: str) -> list[dict]:
    """The YAML documents of one file of a bundle (none when the bundle has no such file); of
    `inject/apply.yaml`, the faults' objects alone (`fault_documents`)."""
    if name == "inject/apply.yaml":
        return fault_documents(files)
    return all_documents(files, name)


def all_documents(files: dict[str, bytes], name: str) -> list[dict]:
    return [d for d in yaml.safe_load_all(files[name].decode("utf-8")) if d] if name in files else []


def fault_documents(files: dict[str, bytes]) -> list[dict]:
    """`inject/apply.yaml` less what the injection writes beyond the faults (backends/cover.py): the decoys
    (objects it creates made as decoys are), the cover writes (the application's objects it changes by the
    cover annotation alone) and that annotation on the faults' objects."""
    from itbench_dsl.backends.cover import COVER_ANNOTATION, COVER_STAMP, TEMPLATE_KINDS
    from itbench_dsl.backends.decoys import harmless

    def key(o):
        return (o["kind"], o["metadata"].get("namespace"), o["metadata"]["name"])

    def uncovered(obj):
        obj = json.loads(json.dumps(obj))
        template = (obj.get("spec") or {}).get("template") if obj["kind"] in TEMPLATE_KINDS else None
        for meta in (template.get("metadata") if isinstance(template, dict) else None, obj.get("metadata")):
            if isinstance(meta, dict) and (meta.get("annotations") or {}).get(COVER_ANNOTATION) == COVER_STAMP:
                del meta["annotations"][COVER_ANNOTATION]
                if not meta["annotations"]:
                    del meta["annotations"]
        return obj

    deployed = {key(o): o for o in all_documents(files, "manifests/topology.yaml")}
    out = []
    for obj in all_documents(files, "inject/apply.yaml"):
        if key(obj) not in deployed and harmless(obj):
            continue
        plain = uncovered(obj)
        if deployed.get(key(obj)) != plain:
            out.append(plain)
    return out


def in_itbench_names(ours: dict, theirs: dict, scenario) -> dict:
    """`ours` (an ITBench file the port wrote, loaded) with the objects the port's faults create named as
    ITBench's own files name them (`importer.compat.renamed_objects`): a port names a created object so that
    its name does not tell the fault, and is otherwise equal to ITBench's file."""
    from itbench_dsl.backends.itbench import with_names
    from itbench_dsl.importer.compat import created_objects, renamed_objects

    renamed = renamed_objects(created_objects(scenario), [ours], [theirs])
    return with_names(ours, {new: old for old, (_, new) in renamed.items()})
