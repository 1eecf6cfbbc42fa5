"""Golden compile tests: every case of tests/cases/compile compiles to exactly its expected bundle.

A case is `tests/cases/compile/<name>/input.itb` with `expected/` holding every file of the bundle.
One case per scenario of `scenarios/` (a copy of the file, named after it) and hand-written cases
(`inline-*`) with inline topologies. Regenerate with `python3 tests/update_golden.py` and review
the printed diff.
"""

from __future__ import annotations

import re
import hashlib
import json
from pathlib import Path

import pytest
import yaml

from update_golden import (CASES, RUNTIME_HASH, case_folders, compile_bundle, compile_case, diff_bundles, read_expected,
                           runtime_hash, scenario_files)

from itbench_dsl.backends import decoys as decoy_backend
from itbench_dsl.backends.cover import COVER_ANNOTATION
from itbench_dsl.backends.evaluator_file import source_for_spec, spec_of
from support.compiling import compile_ok

FOLDERS = case_folders()

# Every file a bundle always holds; inject/revert files depend on the fault.
ALWAYS = {"manifests/topology.yaml", "itbench/scenario.yaml", "itbench/groundtruth.yaml",
          "itbench/groundtruth_v1.yaml", "prompt.md", "scenario.json", "bundle.lock", "evaluator.spec.json"}
# Where a fault may change a patched object: the one field each fault of the library rewrites.
FAULT_FIELDS = [
    re.compile(r"spec\.replicas"),  # scaled_to_zero
    re.compile(r"spec\.template\.spec\.containers\[\d+\]\.image"),  # nonexistent_image
    re.compile(r"spec\.jobTemplate\.spec\.template\.spec\.containers\[\d+\]\.image"),  # on a CronJob
    re.compile(r"spec\.template\.spec\.containers\[\d+\]\.env\[\d+\]\.value"),  # modified_env
    re.compile(r"spec\.ports\[\d+\]\.targetPort"),  # modified_target_port
    re.compile(r"spec\.metrics\[\d+\]\.resource\.target\.averageUtilization"),  # misconfigured_hpa
    re.compile(r"spec\.rules\[\d+\]\.http\.paths\[\d+\]\.backend\.service\.name"),  # misrouted_ingress
]
# what a cover write changes (backends/cover.py): one annotation, on the pod template or on the object
COVER = re.compile(r"(spec\.template\.)?metadata\.annotations(\." + re.escape(COVER_ANNOTATION) + ")?")
HAND_WRITTEN = {"inline-statefulset-probe", "inline-multi-container", "inline-group-wait",
                "inline-named-target-ports", "inline-comments-everywhere", "inline-pod-ingress"}


# Golden bundles are a curated set: one per fault family's first scenarios and the hand-written cases, each
# reviewed. (A bundle of the OpenTelemetry demo is ~300 KB; the whole library is covered by the other tests:
# it compiles clean, deterministically, validates with kubernetes-validate and matches ITBench's references.)
CURATED = {f.name for f in FOLDERS if f.name in scenario_files()}


def test_the_curated_cases_are_there():
    names = {f.name for f in FOLDERS}
    assert HAND_WRITTEN <= names
    assert len(CURATED) >= 8


@pytest.mark.parametrize("name", sorted(CURATED))
def test_scenario_case_input_is_a_copy(name: str):
    """The case's input is the library file byte for byte (tests/update_golden.py --sync)."""
    assert (CASES / name / "input.itb").read_bytes() == scenario_files()[name].read_bytes()


@pytest.mark.parametrize("folder", FOLDERS, ids=lambda f: f.name)
def test_golden_bundle(folder: Path):
    actual = compile_case(folder)
    expected = read_expected(folder)
    assert expected, f"{folder.name} has no expected/ folder (run tests/update_golden.py)"
    diff = diff_bundles(expected, actual, folder.name)
    if diff:
        print(diff)
    assert sorted(actual) == sorted(expected), "the bundle's files differ (see the diff above)"
    for name in sorted(expected):
        assert actual[name] == expected[name], f"{name} differs (see the diff above)"


@pytest.mark.parametrize("folder", FOLDERS, ids=lambda f: f.name)
def test_golden_bundle_shape(folder: Path):
    """What a reviewer checks in every expected bundle, asserted so that regeneration cannot drift."""
    files = read_expected(folder)
    assert ALWAYS <= set(files), sorted(ALWAYS - set(files))
    assert "inject/apply.yaml" in files or "inject/delete.yaml" in files, "the fault does nothing"
    assert "revert/apply.yaml" in files or "revert/delete.yaml" in files, "nothing undoes the fault"

    def docs(name: str) -> list[dict]:
        return [d for d in yaml.safe_load_all(files[name].decode("utf-8"))] if name in files else []

    def key(obj: dict) -> tuple:
        meta = obj["metadata"]
        return obj["apiVersion"], obj["kind"], meta.get("namespace"), meta["name"]

    topology = {key(o): o for o in docs("manifests/topology.yaml")}
    injected = {key(o): o for o in docs("inject/apply.yaml")}
    reverted = {key(o): o for o in docs("revert/apply.yaml")}
    created = set(injected) - set(topology)
    # revert restores the topology's own objects, exactly as the topology declares them
    for k, obj in reverted.items():
        assert k in topology, f"revert applies {k}, which the topology does not declare"
        assert obj == topology[k], f"revert of {k} is not the original object"
    # every object the fault patches is reverted; every object it creates is deleted by the revert. The cover
    # writes (backends/cover.py: the same annotation on every object of a patched one's kind) stay, as a
    # `rollout restart` would; the decoys it creates go with what else the injection created (Bundle.created)
    for k in set(injected) & set(topology):
        assert leaf_changes(topology[k], injected[k]), f"the injection of {k} changes nothing"
        changed = [p for p in leaf_changes(topology[k], injected[k]) if not COVER.fullmatch(p)]
        if not changed:
            continue
        assert k in reverted, f"{k} is patched by the fault but not restored"
        # only the fault's change: one field per fault, nothing else of the object
        for path in changed:
            assert any(f.fullmatch(path) for f in FAULT_FIELDS), f"the injection of {k} also changes {path}"
    deleted = {key(o) for o in docs("revert/delete.yaml")}
    decoys = {key(o) for o in decoy_backend.decoys(compile_ok((folder / "input.itb").read_bytes(),
                                                               str(folder / "input.itb")).scenario)}
    for k in created:
        assert k in deleted or k in decoys, f"{k} is created by the fault but the revert does not delete it"
    # bundle.lock names the source and every other file by its sha256
    bundle = compile_bundle(folder)
    lock = json.loads(bundle["bundle.lock"])
    assert lock["source_sha256"] == hashlib.sha256((folder / "input.itb").read_bytes()).hexdigest()
    assert lock["files"] == {n: hashlib.sha256(c).hexdigest() for n, c in sorted(bundle.items()) if n != "bundle.lock"}
    # the evaluator is the pinned runtime and the reviewed spec, nothing else
    source = bundle["evaluator.py"].decode("utf-8")
    assert source == source_for_spec(spec_of(source))
    assert json.loads(files["evaluator.spec.json"]) == spec_of(source)
    # every multi-document YAML file starts its documents with `---` and is UTF-8
    for name, content in files.items():
        text = content.decode("utf-8")
        if name.endswith(".yaml"):
            assert text.startswith("---\n"), name


def test_the_evaluator_runtime_is_pinned():
    """A change to the code every evaluator.py carries shows in review as a change of this one hash
    (tests/update_golden.py rewrites it); the runtime's own diff is the thing to review."""
    assert RUNTIME_HASH.read_text().strip() == runtime_hash()


def leaf_changes(old, new, path: str = "") -> list[str]:
    """The paths (`spec.ports[0].targetPort`) where two JSON-shaped values differ."""
    if isinstance(old, dict) and isinstance(new, dict):
        out = []
        for k in list(old) + [k for k in new if k not in old]:
            sub = f"{path}.{k}" if path else k
            out += leaf_changes(old.get(k), new.get(k), sub) if k in old and k in new else [sub]
        return out
    if isinstance(old, list) and isinstance(new, list) and len(old) == len(new):
        return [p for i, (a, b) in enumerate(zip(old, new)) for p in leaf_changes(a, b, f"{path}[{i}]")]
    return [] if old == new and type(old) is type(new) else [path]


def test_leaf_changes():
    assert leaf_changes({"a": [1, {"b": 2}]}, {"a": [1, {"b": 3}]}) == ["a[1].b"]
    assert leaf_changes({"a": 1}, {"a": 1, "c": 2}) == ["c"]
    assert leaf_changes({"a": [1]}, {"a": [1, 2]}) == ["a"]
    assert leaf_changes({"a": 1}, {"a": True}) == ["a"]
    assert leaf_changes({"a": {"x": 1}}, {"a": {"x": 1}}) == []
