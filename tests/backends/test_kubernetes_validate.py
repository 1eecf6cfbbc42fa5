"""External validation of what the compiler emits.

* Every built-in-kind object of every bundle (manifests/*.yaml, inject/apply.yaml,
  revert/apply.yaml) passes `kubernetes-validate --strict` (PyPI package, an independent
  validator built on Kubernetes' own OpenAPI schemas) for Kubernetes 1.33. Each object is
  written to its own file, so a failure names the object.
* Custom-resource objects (Chaos Mesh), which that tool does not know, pass
  `itbench_dsl.validate.validate_object` (the vendored CRD schemas).
* Every bundle's scenario.json is valid against `itbench_dsl.ir.json_schema()` (Draft 2020-12),
  and corrupted copies are not.

The bundles are those of the scenario library and of the golden cases (tests/cases/compile).
"""

from __future__ import annotations

import copy
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from jsonschema import Draft202012Validator

from itbench_dsl import ir
from itbench_dsl.compiler import compile_source
from itbench_dsl.diagnostics import Diagnostics, render_human
from itbench_dsl.validate import validate_object

REPO = Path(__file__).resolve().parents[2]
KUBERNETES_VERSION = "1.33.0"
VALIDATED_FILES = re.compile(r"manifests/[^/]+\.yaml|inject/apply\.yaml|revert/apply\.yaml")


def _sources() -> dict[str, Path]:
    sources = {f"scenarios/{p.relative_to(REPO / 'scenarios').as_posix()}": p for p in sorted((REPO / "scenarios").rglob("*.itb"))}
    cases = REPO / "tests" / "cases" / "compile"
    if cases.is_dir():
        for folder in sorted(cases.iterdir()):
            if folder.name.startswith("inline-") and (folder / "input.itb").is_file():
                sources[f"cases/{folder.name}"] = folder / "input.itb"
    return sources


SOURCES = _sources()


@pytest.fixture(scope="module")
def bundles() -> dict[str, dict[str, bytes]]:
    out = {}
    for label, path in SOURCES.items():
        diags = Diagnostics()
        result = compile_source(path.read_bytes(), label, diags)
        assert not diags.errors() and result.files, render_human(diags, color=False)
        out[label] = result.files
    return out


def _is_builtin(api_version: str) -> bool:
    """Kubernetes' own API groups: the core group, dotless groups (apps, batch ...) and *.k8s.io."""
    group = api_version.split("/", 1)[0] if "/" in api_version else ""
    return group == "" or "." not in group or group.endswith(".k8s.io")


@pytest.fixture(scope="module")
def objects(bundles) -> list[tuple[str, str, int, dict]]:
    """(bundle, file, index, object) for every document of the validated files."""
    out = []
    for label, files in bundles.items():
        for name, content in sorted(files.items()):
            if VALIDATED_FILES.fullmatch(name):
                for index, doc in enumerate(yaml.safe_load_all(content.decode("utf-8"))):
                    assert isinstance(doc, dict), f"{label}/{name} document {index + 1} is not an object"
                    out.append((label, name, index, doc))
    return out


def _validator_command() -> list[str]:
    """The kubernetes-validate CLI of this interpreter's environment, else the one on PATH."""
    sibling = Path(sys.executable).with_name("kubernetes-validate")
    found = str(sibling) if sibling.is_file() else shutil.which("kubernetes-validate")
    if found is None:
        pytest.fail("kubernetes-validate is not installed: it is a test dependency (pip install '.[test]')")
    return [found]


def _schema_version() -> str:
    """KUBERNETES_VERSION if the installed tool ships it, else the closest version it has."""
    import kubernetes_validate

    folder = Path(kubernetes_validate.__file__).parent / "kubernetes-json-schema"
    versions = sorted({m.group(1) for p in folder.iterdir() if (m := re.fullmatch(r"v(\d+\.\d+\.\d+)-local-strict", p.name))},
                      key=lambda v: tuple(int(x) for x in v.split(".")))
    assert versions, f"kubernetes-validate ships no strict schemas in {folder}"
    if KUBERNETES_VERSION in versions:
        return KUBERNETES_VERSION
    wanted = tuple(int(x) for x in KUBERNETES_VERSION.split("."))
    return min(versions, key=lambda v: abs(int(v.split(".")[1]) - wanted[1]))


def test_kubernetes_validate_strict(objects, tmp_path: Path):
    builtin = [(label, name, index, doc) for label, name, index, doc in objects if _is_builtin(doc["apiVersion"])]
    assert len(builtin) > 100  # the library's topologies, agent access, injections and reverts
    files, seen = [], set()
    for number, (label, name, index, doc) in enumerate(builtin):
        text = yaml.safe_dump(doc, sort_keys=False)
        if text in seen:  # the same application object in several bundles: validate it once
            continue
        seen.add(text)
        slug = re.sub(r"[^A-Za-z0-9.-]+", "_", f"{label}--{name}--{index + 1}-{doc['kind']}-{doc['metadata'].get('name')}")
        target = tmp_path / f"{number:04d}-{slug}.yaml"
        target.write_text(text, encoding="utf-8")
        files.append(target)
    version = _schema_version()
    run = subprocess.run([*_validator_command(), "--strict", "--kubernetes-version", version, *map(str, files)],
                         capture_output=True, text=True, timeout=120, env={**os.environ, "NO_COLOR": "1"})
    output = run.stdout + run.stderr
    problems = [line for line in output.splitlines() if line.startswith(("ERROR", "WARN"))]
    assert run.returncode == 0 and not problems, f"kubernetes-validate {version} --strict:\n" + "\n".join(problems or [output])
    passed = [line for line in output.splitlines() if line.startswith("INFO") and " passed " in line]
    assert len(passed) == len(files), f"{len(passed)} of {len(files)} objects reported as passed:\n{output}"


def test_custom_resources_validate(objects):
    custom = [(label, name, index, doc) for label, name, index, doc in objects if not _is_builtin(doc["apiVersion"])]
    kinds = {(doc["apiVersion"], doc["kind"]) for *_, doc in custom}
    assert ("chaos-mesh.org/v1alpha1", "Schedule") in kinds  # the network-chaos scenario's injection
    for label, name, index, doc in custom:
        issues = validate_object(doc)
        assert not issues, f"{label}/{name} document {index + 1} ({doc['kind']}): " + "; ".join(
            f"{i.path}: {i.message}" for i in issues)


def test_validate_object_rejects_a_broken_schedule(objects):
    """The custom-resource check above is not vacuous: a wrong Schedule is reported."""
    schedule = next(doc for *_, doc in objects if doc["kind"] == "Schedule")
    broken = copy.deepcopy(schedule)
    broken["spec"]["historyLimit"] = "one"
    assert validate_object(broken)


# ---- scenario.json against the IR's JSON Schema ----------------------------------------------------------


@pytest.fixture(scope="module")
def ir_validator() -> Draft202012Validator:
    schema = ir.json_schema()
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)


@pytest.mark.parametrize("label", list(SOURCES))
def test_scenario_json_is_valid(bundles, ir_validator, label):
    data = json.loads(bundles[label]["scenario.json"])
    errors = sorted(ir_validator.iter_errors(data), key=lambda e: list(e.absolute_path))
    assert not errors, "\n".join(f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in errors)


def _corruptions(data: dict):
    def removed(key):
        broken = copy.deepcopy(data)
        del broken[key]
        return broken

    def changed(mutate):
        broken = copy.deepcopy(data)
        mutate(broken)
        return broken

    yield "no name", removed("name")
    yield "no topology", removed("topology")
    yield "domain is a number", changed(lambda d: d.update(domain=5))
    yield "tags is a string", changed(lambda d: d.update(tags="Deployment"))
    yield "unknown top-level field", changed(lambda d: d.update(severity="high"))
    yield "ir_version is a string", changed(lambda d: d.update(ir_version="1"))
    yield "replicas is a string", changed(lambda d: d["topology"]["workloads"][0].update(replicas="one"))
    yield "workload without containers", changed(lambda d: d["topology"]["workloads"][0].pop("containers"))
    yield "container port is a string", changed(
        lambda d: d["topology"]["workloads"][0]["containers"][0].update(ports=[{"port": "80", "name": None, "protocol": "TCP"}]))
    yield "fault target without kind", changed(lambda d: d["faults"][0]["injections"][0]["target"].pop("kind"))
    yield "agent namespaces is an object", changed(lambda d: d["agent"].update(namespaces={"otel-demo": True}))


@pytest.mark.parametrize("label", [label for label in SOURCES if "network-loss" in label or "shop-cart" in label])
def test_corrupted_scenario_json_is_invalid(bundles, ir_validator, label):
    data = json.loads(bundles[label]["scenario.json"])
    assert ir_validator.is_valid(data)
    for what, broken in _corruptions(data):
        assert not ir_validator.is_valid(broken), f"the schema accepts a scenario.json with {what}"
