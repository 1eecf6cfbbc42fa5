"""Regenerate the expected bundles of the golden compile cases (a script, not a test).

    python3 tests/update_golden.py              # rewrite every expected/ folder that changed
    python3 tests/update_golden.py --check      # change nothing; exit 1 if anything would change
    python3 tests/update_golden.py --sync       # first refresh the curated cases' copies of scenarios/**/NAME.itb
    python3 tests/update_golden.py --sync NAME  # add the library scenario NAME as a curated case
    python3 tests/update_golden.py otel-        # only the cases whose name starts with `otel-`

Each case is `tests/cases/compile/<name>/input.itb` and `expected/`, which holds every file that
`compile_source(input, "input.itb")` returns, at its path inside the bundle, in golden form: the
bundle's evaluator.py is the shared runtime plus the scenario's spec, so `expected/` holds the spec
(`evaluator.spec.json`, indented for review) in its place, and bundle.lock names the evaluator by
that spec. The runtime itself (and the modules evaluators embed) is pinned once, by its sha256, in
`tests/cases/compile/evaluator-runtime.sha256`. The cases named after
a file of `scenarios/` hold a copy of that file (`--sync` refreshes the copies). For every file that
is added, removed or changed, a unified diff is printed: review each one as the Kubernetes and
ITBench engineer who will apply the manifests and read the ground truth, before committing.
"""

from __future__ import annotations

import difflib
import shutil
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

import hashlib  # noqa: E402
import json  # noqa: E402

from itbench_dsl.backends.evaluator_file import package_source, runtime_source, spec_of  # noqa: E402
from itbench_dsl.compiler import compile_source, dump_json  # noqa: E402
from itbench_dsl.diagnostics import Diagnostics, render_human  # noqa: E402
from itbench_dsl.runtime import kyverno  # noqa: E402

CASES = HERE / "cases" / "compile"
RUNTIME_HASH = CASES / "evaluator-runtime.sha256"
# the runtime modules evaluators may embed beside the runtime (package_source's names), in the order they do
EMBEDDED = (*(f"kyverno/{name}" for name in kyverno.EMBEDDED), "miniyaml")
SCENARIOS = REPO / "scenarios"


class CompileFailed(Exception):
    pass


def scenario_files() -> dict[str, Path]:
    """The scenario library by case name (the file name without `.itb`)."""
    return {p.stem: p for p in sorted(SCENARIOS.rglob("*.itb"))}


def case_folders() -> list[Path]:
    return sorted(p for p in CASES.iterdir() if p.is_dir() and (p / "input.itb").is_file()) if CASES.is_dir() else []


def compile_bundle(folder: Path) -> dict[str, bytes]:
    """The bundle of one case, as compile_source returns it; raises CompileFailed with the diagnostics."""
    diags = Diagnostics()
    result = compile_source((folder / "input.itb").read_bytes(), "input.itb", diags)
    if diags.errors() or not result.files:
        raise CompileFailed(render_human(diags, color=False) or "no files and no diagnostics")
    return dict(result.files)


def golden_form(files: dict[str, bytes]) -> dict[str, bytes]:
    """A bundle as expected/ stores it: evaluator.py as its spec, bundle.lock naming the evaluator by it."""
    out = dict(files)
    source = out.pop("evaluator.py").decode("utf-8")
    spec = spec_of(source)
    if spec is None:
        raise CompileFailed("evaluator.py holds no spec line")
    out["evaluator.spec.json"] = (json.dumps(spec, indent=1, sort_keys=True, ensure_ascii=False) + "\n").encode("utf-8")
    lock = json.loads(out["bundle.lock"])
    lock["files"]["evaluator.py"] = "the runtime (evaluator-runtime.sha256) and evaluator.spec.json"
    out["bundle.lock"] = dump_json(lock)
    return dict(sorted(out.items()))


def compile_case(folder: Path) -> dict[str, bytes]:
    """The bundle of one case in golden form."""
    return golden_form(compile_bundle(folder))


def runtime_hash() -> str:
    """sha256 of the code every evaluator.py carries: the runtime and the modules it may embed."""
    digest = hashlib.sha256(runtime_source().encode("utf-8"))
    for module in EMBEDDED:
        digest.update(b"\0" + module.encode("utf-8") + b"\0" + package_source(module).encode("utf-8"))
    return digest.hexdigest()


def read_expected(folder: Path) -> dict[str, bytes]:
    expected = folder / "expected"
    if not expected.is_dir():
        return {}
    return {p.relative_to(expected).as_posix(): p.read_bytes() for p in sorted(expected.rglob("*")) if p.is_file()}


def diff_bundles(expected: dict[str, bytes], actual: dict[str, bytes], label: str) -> str:
    """A unified diff of two bundles, file by file; empty when they are equal."""
    out: list[str] = []
    for name in sorted(set(expected) | set(actual)):
        old, new = expected.get(name), actual.get(name)
        if old == new:
            continue
        old_lines = old.decode("utf-8", "replace").splitlines(keepends=True) if old is not None else []
        new_lines = new.decode("utf-8", "replace").splitlines(keepends=True) if new is not None else []
        old_name = f"{label}/expected/{name}" if old is not None else "/dev/null"
        new_name = f"{label}/actual/{name}" if new is not None else "/dev/null"
        text = "".join(difflib.unified_diff(old_lines, new_lines, old_name, new_name))
        if not text:  # same text after decoding, different bytes (encoding, final newline)
            text = f"--- {old_name}\n+++ {new_name}\n@@ bytes differ: {old!r:.80} != {new!r:.80}\n"
        out.append(text if text.endswith("\n") else text + "\n")
    return "".join(out)


def write_expected(folder: Path, files: dict[str, bytes]) -> None:
    expected = folder / "expected"
    if expected.exists():
        shutil.rmtree(expected)
    for name, content in files.items():
        target = expected / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(content)


def sync_inputs(prefixes: list[str]) -> int:
    """Refresh the input of each curated case named after a library scenario (name a new one as a prefix
    to add it); returns how many inputs changed."""
    changed = 0
    for name, path in scenario_files().items():
        curated = (CASES / name).is_dir()
        if prefixes and not any(name.startswith(p) for p in prefixes) or (not curated and not prefixes):
            continue
        target = CASES / name / "input.itb"
        data = path.read_bytes()
        if not target.is_file() or target.read_bytes() != data:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
            print(f"input: {target.relative_to(REPO)} <- {path.relative_to(REPO)}")
            changed += 1
    return changed


def main(argv: list[str]) -> int:
    unknown = [a for a in argv if a.startswith("-") and a not in ("--check", "--sync")]
    if unknown or "-h" in argv:
        print(__doc__)
        return 0 if unknown in (["-h"], ["--help"]) else 2
    check_only = "--check" in argv
    prefixes = [a for a in argv if not a.startswith("-")]
    if "--sync" in argv and not check_only:
        sync_inputs(prefixes)
    changed = failed = 0
    for folder in case_folders():
        if prefixes and not any(folder.name.startswith(p) for p in prefixes):
            continue
        try:
            actual = compile_case(folder)
        except CompileFailed as exc:
            print(f"FAILED {folder.name}: the input does not compile\n{exc}", file=sys.stderr)
            failed += 1
            continue
        expected = read_expected(folder)
        diff = diff_bundles(expected, actual, folder.name)
        if not diff:
            continue
        changed += 1
        print(diff, end="")
        if not check_only:
            write_expected(folder, actual)
            print(f"updated {folder.relative_to(REPO)}/expected ({len(actual)} files)")
    current = runtime_hash() + "\n"
    if not RUNTIME_HASH.is_file() or RUNTIME_HASH.read_text() != current:
        changed += 1
        print(f"the evaluator runtime changed: {RUNTIME_HASH.relative_to(REPO)} -> {current.strip()} "
              "(review the runtime's diff in git)")
        if not check_only:
            RUNTIME_HASH.write_text(current)
    verb = "would change" if check_only else "changed"
    print(f"{changed} case(s) {verb}, {failed} failed to compile", file=sys.stderr)
    return 1 if failed or (check_only and changed) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
