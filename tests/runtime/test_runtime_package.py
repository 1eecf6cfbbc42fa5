"""The runtime package (itbench_dsl/runtime/): standard library only, and embedded where it must run alone.

Every module under runtime/ imports nothing but the standard library and its own package, because the
runtime's evaluator, the Kyverno matcher and the YAML reader are embedded as text into every bundle's
standalone evaluator.py (itbench_dsl/backends/evaluator.py), which must run with `python -S` and no file
of the package present: a bundle of a Kyverno scenario is run that way here and grades a policy offline.
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from functools import cache
from pathlib import Path

import pytest

from itbench_dsl.compiler import compile_source
from itbench_dsl.diagnostics import Diagnostics
from itbench_dsl.runtime import kyverno

ROOT = Path(__file__).resolve().parents[2]
RUNTIME = ROOT / "itbench_dsl" / "runtime"
MODULES = sorted(RUNTIME.rglob("*.py"))
KYVERNO_SCENARIOS = sorted((ROOT / "scenarios" / "ciso").glob("*kyverno*.itb"))


def _module_name(path: Path) -> list[str]:
    """A runtime file's dotted name below `runtime`, as parts: ['kyverno', 'policy']; a package is its folder."""
    parts = list(path.relative_to(RUNTIME).with_suffix("").parts)
    return parts[:-1] if parts[-1] == "__init__" else parts


def _package(path: Path) -> list[str]:
    """The package a file's relative imports start from, as parts below `runtime`."""
    name = _module_name(path)
    return name if path.name == "__init__.py" else name[:-1]


def _exists(parts: list[str]) -> bool:
    target = RUNTIME.joinpath(*parts)
    return target.with_suffix(".py").is_file() or (target / "__init__.py").is_file()


def _optional(tree: ast.AST) -> set[int]:
    """The imports tried under `except ImportError` (the code runs without them): ids of their nodes."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Try) and any(
                isinstance(h.type, ast.Name) and h.type.id in ("ImportError", "ModuleNotFoundError")
                for h in node.handlers):
            out |= {id(n) for stmt in node.body for n in ast.walk(stmt) if isinstance(n, (ast.Import, ast.ImportFrom))}
    return out


def _allowed(module: str, optional: bool) -> bool:
    """An absolute import: the standard library, or (tried, with a fallback) another distribution's module,
    never the package's own."""
    root = module.split(".")[0]
    return root in sys.stdlib_module_names or (optional and root != "itbench_dsl")


def imports(path: Path, source: str | None = None) -> list[tuple[int, str]]:
    """Every import of a runtime file (its text, or `source` as if it were its text) that breaks the rule:
    (line, what it imports and why it may not). An import tried under `except ImportError` (the optional
    Rego engine, regopy) may name another distribution's module: the runtime works without it."""
    tree = ast.parse(path.read_text(encoding="utf-8") if source is None else source, str(path))
    optional = _optional(tree)
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if not _allowed(alias.name, id(node) in optional):
                    out.append((node.lineno, f"import {alias.name}: not the standard library"))
        elif isinstance(node, ast.ImportFrom):
            what = f"from {'.' * node.level}{node.module or ''} import"
            if node.level == 0:
                if not _allowed(node.module or "", id(node) in optional):
                    out.append((node.lineno, f"{what}: not the standard library"))
                continue
            package = _package(path)
            if node.level - 1 > len(package):
                out.append((node.lineno, f"{what}: above runtime/"))
                continue
            target = package[:len(package) - (node.level - 1)] + (node.module.split(".") if node.module else [])
            if not _exists(target):
                out.append((node.lineno, f"{what}: {'.'.join(target)} is not a module of runtime/"))
    return sorted(out)


def test_the_runtime_has_the_modules_it_names():
    names = {".".join(_module_name(p)) for p in MODULES}
    assert {"evaluator", "miniyaml", "scoring", "kyverno", "kyverno.policy", "kyverno.suite", "kubectl",
            "kubectl.replay", "kubectl.state", "kubectl.verbs"} <= names
    for old in ("evaluator_runtime", "kyverno", "miniyaml", "replay", "scoring"):
        assert not (ROOT / "itbench_dsl" / f"{old}.py").exists(), f"itbench_dsl/{old}.py is back at its old path"
    assert not (RUNTIME / "replay.py").exists(), "runtime/replay.py is back: the replay is runtime/kubectl/"


@pytest.mark.parametrize("path", MODULES, ids=[str(p.relative_to(RUNTIME)) for p in MODULES])
def test_a_runtime_module_imports_only_the_standard_library_and_its_own_package(path):
    assert imports(path) == []


def test_the_rule_is_checked_as_it_reads():
    """The checker itself, on a module of runtime/kyverno/ that would read so: what it refuses and lets through."""
    source = ("import json\nimport os.path\nfrom collections.abc import Callable\nfrom .values import wildcard_match\n"
              "from . import outcomes\nfrom .. import miniyaml\nimport yaml\nfrom itbench_dsl import ir\n"
              "from ..nothing import x\nfrom ... import compiler\n"
              "try:\n    import regopy\nexcept ImportError:\n    regopy = None\n"
              "try:\n    import itbench_dsl.ir\nexcept ImportError:\n    pass\n")
    refused = imports(RUNTIME / "kyverno" / "probe.py", source)
    assert [line for line, _ in refused] == [7, 8, 9, 10, 16], refused


def _relative_imports(name: str) -> set[str]:
    """The modules of the kyverno package that one of its modules imports."""
    tree = ast.parse((RUNTIME / "kyverno" / f"{name}.py").read_text(encoding="utf-8"))
    return {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.level == 1 and n.module}


def test_the_embedded_kyverno_modules_come_in_dependency_order():
    """Evaluators run the embedded modules in this order: each imports only modules before it, and the
    suite runner (not needed to grade a policy) is not among them."""
    assert "suite" not in kyverno.EMBEDDED
    assert len(set(kyverno.EMBEDDED)) == len(kyverno.EMBEDDED)
    for index, name in enumerate(kyverno.EMBEDDED):
        assert _relative_imports(name) <= set(kyverno.EMBEDDED[:index]), name
    assert kyverno.EMBEDDED[-1] == "policy"  # the entry point the runtime's embedded_module returns


# ---- a bundle's evaluator.py alone ----------------------------------------------------------------------


@cache
def _evaluator(path: Path) -> str:
    result = compile_source(path.read_bytes(), str(path), Diagnostics())
    assert result.files, path
    return result.files["evaluator.py"].decode("utf-8")


def _alone(folder: Path, *args: str) -> subprocess.CompletedProcess:
    """Python without site packages (`-S`) and without PYTHONPATH, in a folder holding nothing of the package."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP")}
    return subprocess.run([sys.executable, "-S", *args], check=False, capture_output=True, text=True,
                          cwd=folder, env=env, timeout=120)


ALWAYS_FAIL = """\
apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata: {name: always-fail}
spec:
  rules:
  - name: all
    match: {any: [{resources: {kinds: ["*"]}}]}
    validate: {message: 'no', deny: {}}
"""

NO_PRIVILEGED = """\
apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata:
  name: disallow-privileged
spec:
  validationFailureAction: Audit
  background: true
  rules:
  - name: privileged-containers
    match:
      any:
      - resources:
          kinds: [Pod]
    validate:
      message: privileged containers are not allowed
      pattern:
        spec:
          containers:
          - =(securityContext):
              =(privileged): "false"
          =(initContainers):
          - =(securityContext):
              =(privileged): "false"
          =(ephemeralContainers):
          - =(securityContext):
              =(privileged): "false"
"""


def test_the_standalone_evaluator_grades_a_kyverno_policy_offline(tmp_path):
    folder = tmp_path / "empty"
    folder.mkdir()
    assert _alone(folder, "-c", "import itbench_dsl").returncode != 0  # no file of the package is reachable
    source = _evaluator(ROOT / "scenarios" / "ciso" / "cis-k8s-5-2-2-privileged-kyverno.itb")
    assert "_KYVERNO_SOURCES" in source and "_YAML_SOURCE" in source
    (folder / "evaluator.py").write_text(source, encoding="utf-8")

    def grade(policy: str) -> dict:
        (folder / "policy.yaml").write_text(policy, encoding="utf-8")
        done = _alone(folder, "evaluator.py", "--artifact", "policy.yaml")
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)

    good = grade(NO_PRIVILEGED)
    assert good["passed"], good["checks"]
    details = [c["detail"] for c in good["checks"] if c["id"].startswith(("ciso.gap.", "ciso.compliant."))]
    assert details and all(d.startswith("kyverno (offline)") for d in details), details
    assert not grade(ALWAYS_FAIL)["passed"]
    assert sorted(p.name for p in folder.iterdir()) == ["evaluator.py", "policy.yaml"]


@pytest.mark.parametrize("path", KYVERNO_SCENARIOS, ids=[p.stem for p in KYVERNO_SCENARIOS])
def test_every_kyverno_bundle_runs_its_matcher_alone(path, tmp_path):
    """Each Kyverno scenario's evaluator carries the matcher: a policy that fails everything is graded
    (offline, exit 0) and does not pass."""
    (tmp_path / "evaluator.py").write_text(_evaluator(path), encoding="utf-8")
    (tmp_path / "policy.yaml").write_text(ALWAYS_FAIL, encoding="utf-8")
    done = _alone(tmp_path, "evaluator.py", "--artifact", "policy.yaml")
    assert done.returncode == 0, done.stderr
    verdict = json.loads(done.stdout)
    assert not verdict["passed"]
    assert any(c["detail"].startswith("kyverno (offline)") for c in verdict["checks"]), verdict["checks"]


def test_the_embedding_is_deterministic():
    path = ROOT / "scenarios" / "ciso" / "cis-k8s-5-2-2-privileged-kyverno.itb"
    first = compile_source(path.read_bytes(), str(path), Diagnostics()).files["evaluator.py"]
    second = compile_source(path.read_bytes(), str(path), Diagnostics()).files["evaluator.py"]
    assert first == second
    names = [n.targets[0].id for n in ast.parse(first).body if isinstance(n, ast.Assign)
             and isinstance(n.targets[0], ast.Name) and n.targets[0].id.endswith(("_SOURCE", "_SOURCES"))]
    assert names == ["_KYVERNO_SOURCES", "_YAML_SOURCE"]
    embedded = ast.literal_eval(next(n.value for n in ast.parse(first).body if isinstance(n, ast.Assign)
                                     and getattr(n.targets[0], "id", "") == "_KYVERNO_SOURCES"))
    assert [name for name, _ in embedded] == list(kyverno.EMBEDDED)
    for name, text in embedded:
        assert text == (RUNTIME / "kyverno" / f"{name}.py").read_text(encoding="utf-8")
