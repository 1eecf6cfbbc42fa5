"""A hostile-input corpus through every user-facing command.

The inputs are made here (small fixed ones live in tests/cases/hostile/): YAML alias bombs, device
files and FIFOs, nesting 10^4 to 10^5 deep, huge numbers, NaN and Infinity, control characters and
ANSI escapes in names and strings, invalid UTF-8, files over the size caps, empty files, and
seeded mutations of the real ITBench and Kyverno files of ../shared/reference. Every command that
reads a file gets every input its kind of file can be; for each run:

- the exit code is one the command documents (never a crash code),
- no "Traceback" and no "internal error" is printed,
- no raw control character (an ANSI escape, a carriage return, ...) reaches the terminal,
- it returns within TIME_LIMIT seconds.

Commands run in process (click's runner, under a SIGALRM deadline), except `evaluate`, whose
evaluator runs in its own process anyway. Concurrent writers are real processes.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import random
import re
import shutil
import signal
import stat
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner
from support.compiling import REFERENCE, SCENARIOS
from test_bad_input import GOOD as SMALL  # the smallest good scenario

from itbench_dsl.bundle import BundleError, foreign_in, write_bundle, write_file
from itbench_dsl.cli import cli

TIME_LIMIT = 10  # seconds, per command run
HOSTILE = Path(__file__).resolve().parents[1] / "cases" / "hostile"
GOOD = (SCENARIOS / "sre" / "shop-cart-modified-env.itb").read_text(encoding="utf-8")
CISO_GOOD = SCENARIOS / "ciso" / "cis-5-2-5-host-network-kyverno.itb"
# every character a terminal may act on: C0 controls but tab and newline, DEL, C1 controls, bidi overrides
RAW_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")

EXIT_CODES = {  # what each command documents (`itbench COMMAND --help`)
    "check": {0, 1, 2}, "compile": {0, 1, 2}, "fmt": {0, 1, 2}, "import": {0, 1, 2}, "evaluate": {0, 2},
    "score": {0, 2}, "states": {0, 1, 2}, "docs": {0, 1, 2}, "graph": {0, 1, 2}, "policy-test": {0, 1, 2},
    "explain": {0, 2}, "schema": {0, 2}, "generate": {0, 1, 2},
}


class Hung(BaseException):
    """The deadline passed (a BaseException, so that no `except Exception` of the code under test eats it)."""


@contextmanager
def deadline(seconds: float):
    def expire(signum, frame):
        raise Hung(f"still running after {seconds} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@dataclass
class Run:
    args: list[str]
    code: int
    stdout: str
    stderr: str

    @property
    def output(self) -> str:
        return self.stdout + self.stderr


def itbench(*args: str) -> Run:
    """Run `itbench ARGS` in process, as `main` would: a crash is an exception, which fails the test."""
    runner = CliRunner()
    started = time.monotonic()
    with deadline(TIME_LIMIT):
        result = runner.invoke(cli, list(args), catch_exceptions=True)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        import traceback

        trace = "".join(traceback.format_exception(*result.exc_info))
        raise AssertionError(f"itbench {' '.join(args)[:300]!r} crashed:\n{trace[-3000:]}")
    assert time.monotonic() - started < TIME_LIMIT
    return Run(list(args), result.exit_code, result.stdout, result.stderr)


def assert_clean(run: Run, command: str) -> None:
    shown = " ".join(run.args)[:200]
    assert run.code in EXIT_CODES[command], (shown, run.code, run.output[-2000:])
    assert "Traceback" not in run.output, (shown, run.output[-3000:])
    assert "internal error" not in run.output, (shown, run.output[-3000:])
    raw = RAW_CONTROL.search(run.output)
    assert raw is None, (shown, f"raw control character {raw.group()!r} in the output",
                         run.output[max(0, raw.start() - 200):raw.start() + 200])


# ---- the inputs ---------------------------------------------------------------------------------------------


def alias_bomb(levels: int, width: int = 9) -> str:
    """A "billion laughs" YAML document: `levels` anchors, each a list of `width` aliases of the one before."""
    lines = ['a0: &a0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for level in range(1, levels + 1):
        lines.append(f"a{level}: &a{level} [" + ", ".join([f"*a{level - 1}"] * width) + "]")
    return "\n".join(lines) + "\n"


def nested(kind: str, depth: int) -> str:
    opening, closing = {"list": ("[", "]"), "map": ('{"a": ', "}"), "paren": ("(", ")")}[kind]
    return opening * depth + "1" + closing * depth


# Every hostile form of a JSON or YAML file, as bytes (None: a special file, made by `special`).
DATA_INPUTS: dict[str, bytes | None] = {
    "empty": b"",
    "whitespace": b" \n\t\n",
    "alias-bomb-3": alias_bomb(3).encode(),
    "alias-bomb-6": alias_bomb(6).encode(),
    "alias-bomb-9": alias_bomb(9).encode(),
    "alias-self": b"a: &a [*a]\n",
    "yaml-deep-list-10000": ("a: " + nested("list", 10_000) + "\n").encode(),
    "yaml-deep-block-3000": "".join(f"{' ' * i}k{i}:\n" for i in range(3_000)).encode(),
    "json-deep-list-100000": nested("list", 100_000).encode(),
    "json-deep-map-100000": nested("map", 100_000).encode(),
    "json-huge-float": b'{"scenario": "x", "passed": true, "score": 1e308, "n": 1e999}',
    "json-huge-int": b'{"scenario": "x", "passed": true, "score": 1' + b"0" * 10_000 + b"}",
    "json-nan-infinity": b'{"scenario": NaN, "passed": true, "score": Infinity, "x": -Infinity}',
    "yaml-huge-numbers": b"a: 1e308\nb: " + b"9" * 10_000 + b"\nc: .nan\nd: -.inf\n",
    "ansi-in-strings": json.dumps({"scenario": "\x1b[31mred\x1b[0m\r\x07", "passed": "\x1b]0;title\x07",
                                   "\x1b[2Jkey": "\u202egnp.exe", "id": "\x9b31m"}).encode(),
    "ansi-in-yaml": b'name: "\\e[31mred\\e[0m\\r\\a"\n"\\e[2J": "\\u202e x"\nid: "\\x9b"\n',
    "raw-escape-bytes": b"name: \x1b[31mred\n",
    "invalid-utf8": b'{"scenario": "caf\xe9", "passed": true}',
    "utf16": '{"a": 1}'.encode("utf-16"),
    "nul-bytes": b'{"a": "\x00"}\x00',
    "binary": bytes(range(256)) * 4,
    "not-a-mapping": b"- 1\n- 2\n",
    "scalar": b"42\n",
    "many-documents": b"a: 1\n---\nb: 2\n---\nc: 3\n",
    "duplicate-keys": b"a: 1\na: 2\n",
    "tabs": b"a:\n\t- 1\n",
    "long-line": b"a: " + b"x" * 200_000 + b"\n",
    "dev-null": None,
    "dev-zero": None,
    "fifo": None,
}


def write_input(folder: Path, name: str, kind: str, content: bytes | None) -> Path:
    """`folder/name` holding `content`, or the special file `kind` names (a device, a FIFO)."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    if path.is_symlink() or path.exists():
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        else:
            path.unlink()
    if content is not None:
        path.write_bytes(content)
    elif kind == "fifo":
        os.mkfifo(path)
    else:
        path.symlink_to(f"/dev/{kind.removeprefix('dev-')}")
    return path


def itb_inputs() -> dict[str, bytes | None]:
    """Every hostile form of a .itb file."""
    def good(old: str, new: str) -> bytes:
        assert old in GOOD, old
        return GOOD.replace(old, new, 1).encode("utf-8")

    return {
        "empty": b"",
        "list-nesting-100000": b'scenario "x" {\n  metadata {\n    a = ' + nested("list", 100_000).encode() + b"\n  }\n}\n",
        "map-nesting-100000": b'scenario "x" {\n  metadata {\n    a = ' + b"{ a = " * 100_000 + b"1" + b"}" * 100_000
                              + b"\n  }\n}\n",
        "paren-nesting-100000": good("replicas = param(frontend_replicas)",
                                     "replicas = " + "param(" * 100_000 + "x" + ")" * 100_000),
        "block-nesting-10000": b'scenario "x" {\n' + b"topology {\n" * 10_000 + b"}\n" * 10_001,
        "huge-int": good("port \"http\" = 8080\n      env", "port \"http\" = 1" + "0" * 10_000 + "\n      env"),
        "huge-float": good("port \"http\" = 8080\n      env", "port \"http\" = 1e308\n      env"),
        "overflowing-float": good("port \"http\" = 8080\n      env", "port \"http\" = 1e99999\n      env"),
        "huge-quantity": good("cpu = 100m", "cpu = 1" + "0" * 10_000 + "m"),
        "huge-duration": good("period = 10s", "period = 9" * 1 + "9" * 5000 + "s"),
        "nan-word": good("port \"http\" = 8080\n      env", "port \"http\" = NaN\n      env"),
        "ansi-in-name": good('"shop-cart-modified-env"', '"shop\x1b[31m-cart\x1b[0m"'),
        "ansi-in-description": good("The cart service", "The \x1b]0;pwned\x07\x1b[2J cart\r service\x9b"),
        "escaped-ansi-in-description": good("The cart service", "The \\u001b[31m cart\\r service"),
        "bidi-in-string": good('"ghcr.io/example/cart:1.4.0"', '"ghcr.io/example/cart:1.4.0\u202e\u2066"'),
        "control-in-identifier": good("deployment \"redis\"", "deploy\x1bment \"redis\""),
        "invalid-utf8": GOOD.replace("The cart service", "The cart\udce9 service").encode("utf-8", "surrogateescape"),
        "nul-byte": good("complexity medium", "complexity\x00 medium"),
        "over-the-size-cap": GOOD.encode() + b"# padding\n" * 150_000,
        "one-long-string": good("The cart service", "The " + "x" * 1_200_000 + " service"),
        "truncated": GOOD.encode()[: len(GOOD) // 2],
        "dev-null": None,
        "dev-zero": None,
        "fifo": None,
    }


ITB_INPUTS = itb_inputs()


def itb_commands(path: Path, out: Path) -> list[tuple[str, list[str]]]:
    return [
        ("check", ["check", str(path)]),
        ("check", ["check", "--format", "sarif", str(path)]),
        ("compile", ["compile", str(path), "-o", str(out / "bundles")]),
        ("states", ["states", str(path), "-o", str(out / "states")]),
        ("docs", ["docs", str(path), "-o", str(out / "docs")]),
        ("graph", ["graph", str(path)]),
        ("generate", ["generate", str(path), "--with", "sweep", "-o", str(out / "variants")]),
        ("fmt", ["fmt", "--diff", str(path)]),
        ("fmt", ["fmt", str(path)]),  # last: it may rewrite the file
    ]


@pytest.mark.parametrize("name", sorted(ITB_INPUTS))
def test_itb_inputs_through_every_command(name: str, tmp_path: Path):
    path = write_input(tmp_path / "in", "input.itb", name, ITB_INPUTS[name])
    for command, args in itb_commands(path, tmp_path / "out"):
        assert_clean(itbench(*args), command)


def test_a_file_name_with_escapes_is_not_echoed_raw(tmp_path: Path):
    path = write_input(tmp_path, "bad\x1b[31m\r.itb", "", b"scenario {")
    for command, args in itb_commands(path, tmp_path / "out"):
        assert_clean(itbench(*args), command)


def test_itb_folder_with_special_files_is_read_without_blocking(tmp_path: Path):
    """A FIFO or a device named *.itb inside a folder is skipped or refused, never opened (a FIFO blocks)."""
    folder = tmp_path / "src"
    write_input(folder, "pipe.itb", "fifo", None)
    write_input(folder, "zero.itb", "dev-zero", None)
    (folder / "good.itb").write_text(GOOD, encoding="utf-8")
    for command in ("check", "fmt"):
        assert_clean(itbench(command, *(["--check"] if command == "fmt" else []), str(folder)), command)


# ---- ITBench files: import -----------------------------------------------------------------------------------


needs_reference = pytest.mark.skipif(not REFERENCE.is_dir(), reason="../shared/reference is not here")
ITBENCH = REFERENCE / "itbench"


@needs_reference
@pytest.mark.parametrize("name", sorted(DATA_INPUTS))
def test_itbench_files_import(name: str, tmp_path: Path):
    content = DATA_INPUTS[name]
    targets = []
    index = write_input(tmp_path / "library", "16.json", name, content)
    targets.append(index)
    for file in ("scenario.yaml", "groundtruth.yaml", "groundtruth_v1.yaml"):
        folder = tmp_path / f"sre-{file}" / "scenario_16"
        shutil.copytree(ITBENCH / "scenarios" / "scenario_16", folder)
        write_input(folder, file, name, content)
        targets.append(folder)
    for file in ("info.json", "input.json"):
        folder = tmp_path / f"ciso-{file}" / "1.gen-cis-b-k8s-kyverno"
        shutil.copytree(ITBENCH / "ciso" / "1.gen-cis-b-k8s-kyverno", folder, symlinks=True)
        write_input(folder, file, name, content)
        targets.append(folder)
    for target in targets:
        assert_clean(itbench("import", str(target)), "import")
    assert_clean(itbench("import", str(targets[1]), "-o", str(tmp_path / "out.itb")), "import")


def test_import_of_special_files(tmp_path: Path):
    for kind in ("dev-null", "dev-zero", "fifo"):
        for name in ("16.json", "scenario.yaml"):
            path = write_input(tmp_path / kind, name, kind, None)
            assert_clean(itbench("import", str(path)), "import")


# ---- seeded mutations of real files ---------------------------------------------------------------------------


def mutate(text: str, rng: random.Random) -> tuple[str, str]:
    """One deterministic mutation of a YAML or JSON text: (what was done, the new text)."""
    how = rng.choice(["delete-key", "change-type", "duplicate-key", "truncate", "null-value", "deepen"])
    if how in ("truncate",):
        return how, text[: rng.randrange(1, max(2, len(text)))]
    if how == "duplicate-key":
        lines = text.splitlines(keepends=True)
        keyed = [i for i, line in enumerate(lines) if re.match(r"\s*[\w\"-]+\s*:", line)]
        if keyed:
            i = rng.choice(keyed)
            lines.insert(i + 1, lines[i])
        return how, "".join(lines)
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError:
        return "truncate", text[: len(text) // 2]
    paths = []

    def walk(node, where):
        paths.append(where)
        if isinstance(node, dict):
            for key, value in node.items():
                walk(value, where + (key,))
        elif isinstance(node, list):
            for i, value in enumerate(node):
                walk(value, where + (i,))

    walk(data, ())
    where = rng.choice(paths[1:] or paths)
    if not where:
        return how, json.dumps(["not", "a", "mapping"])
    holder = data
    for step in where[:-1]:
        holder = holder[step]
    key = where[-1]
    if how == "delete-key":
        del holder[key]
    elif how == "change-type":
        value = holder[key]
        holder[key] = {"was": "changed"} if not isinstance(value, dict) else ["changed"]
        if isinstance(value, str):
            holder[key] = rng.choice([42, -1, 3.5, True, ["x"], {"k": "v"}])
    elif how == "null-value":
        holder[key] = None
    else:
        holder[key] = {"deeper": [holder[key]]}
    return how, yaml.safe_dump(data, sort_keys=False)


def reference_mutations() -> list[tuple[str, Path, str]]:
    """(case id, the real file, the file's name in its folder): the files the mutations apply to."""
    if not REFERENCE.is_dir():
        return []
    cases = []
    for number in (1, 16, 30, 105):
        folder = ITBENCH / "scenarios" / f"scenario_{number}"
        for file in ("scenario.yaml", "groundtruth.yaml", "groundtruth_v1.yaml"):
            if (folder / file).is_file():
                cases.append((f"sre-{number}-{file}", folder, file))
        if (ITBENCH / "library" / "scenarios" / f"{number}.json").is_file():
            cases.append((f"index-{number}", ITBENCH / "library" / "scenarios", f"{number}.json"))
    for folder in sorted((ITBENCH / "ciso").iterdir()):
        if (folder / "info.json").is_file():
            cases.append((f"ciso-{folder.name[:1]}-info", folder, "info.json"))
    suites = sorted((REFERENCE / "kyverno" / "policy-tests").rglob("kyverno-test.yaml"))
    for suite in suites[:: max(1, len(suites) // 6)][:6]:
        cases.append((f"kyverno-{suite.parent.parent.name}", suite.parent.parent, str(suite.relative_to(suite.parent.parent))))
    return cases


MUTATIONS = reference_mutations()
SEEDS = range(3)


@needs_reference
@pytest.mark.parametrize("case", MUTATIONS, ids=[c[0] for c in MUTATIONS])
def test_mutated_reference_files(case, tmp_path: Path):
    ident, source, file = case
    for seed in SEEDS:
        rng = random.Random(f"{ident}/{seed}")
        folder = tmp_path / str(seed) / source.name
        if ident.startswith("index-"):
            folder.mkdir(parents=True)
            text = (source / file).read_text(encoding="utf-8")
            _, mutated = mutate(text, rng)
            (folder / file).write_text(mutated, encoding="utf-8")
            target, command = folder / file, "import"
        else:
            shutil.copytree(source, folder, symlinks=True)
            _, mutated = mutate((folder / file).read_text(encoding="utf-8"), rng)
            (folder / file).write_text(mutated, encoding="utf-8")
            target, command = folder, "policy-test" if ident.startswith("kyverno-") else "import"
        run = itbench(command, str(target))
        assert_clean(run, command)


# ---- kyverno suites: policy-test ------------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(DATA_INPUTS))
def test_policy_test_suites(name: str, tmp_path: Path):
    suite = write_input(tmp_path / "suite", "kyverno-test.yaml", name, DATA_INPUTS[name])
    assert_clean(itbench("policy-test", str(suite)), "policy-test")
    policy = tmp_path / "policy"
    policy.mkdir()
    (policy / "kyverno-test.yaml").write_text(
        "apiVersion: cli.kyverno.io/v1alpha1\nkind: Test\nmetadata:\n  name: t\npolicies: [policy.yaml]\n"
        "resources: [resource.yaml]\nresults: []\n", encoding="utf-8")
    write_input(policy, "policy.yaml", name, DATA_INPUTS[name])
    (policy / "resource.yaml").write_text("apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n", encoding="utf-8")
    assert_clean(itbench("policy-test", str(policy)), "policy-test")


# ---- verdicts: score ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(DATA_INPUTS))
def test_score_verdicts(name: str, tmp_path: Path):
    results = tmp_path / "results"
    (results / "ok").mkdir(parents=True)
    (results / "ok" / "a.json").write_text('{"scenario": "s", "passed": true, "score": 1.0}', encoding="utf-8")
    write_input(results, "trial.json", name, DATA_INPUTS[name])
    for fmt in ("human", "json"):
        assert_clean(itbench("score", str(results), "--format", fmt), "score")


def test_score_hostile_options(tmp_path: Path):
    (tmp_path / "a.json").write_text('{"scenario": "s", "passed": true, "score": 1.0}', encoding="utf-8")
    for k in ("0", "-1", "1" + "0" * 30, "99999999999"):
        assert_clean(itbench("score", str(tmp_path), "--k", k), "score")


# ---- states and answers: evaluate -----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def bundles(tmp_path_factory) -> dict[str, Path]:
    from itbench_dsl.compiler import compile_source
    from itbench_dsl.diagnostics import Diagnostics

    out = tmp_path_factory.mktemp("bundles")
    found = {}
    for kind, path in (("sre", SCENARIOS / "sre" / "shop-cart-modified-env.itb"), ("ciso", CISO_GOOD)):
        result = compile_source(path.read_bytes(), str(path), Diagnostics())
        found[kind] = write_bundle(out, result.name, result.files)
    return found


EVALUATE_INPUTS = sorted(DATA_INPUTS)


@pytest.mark.parametrize("name", EVALUATE_INPUTS)
def test_evaluate_inputs(name: str, bundles: dict[str, Path], tmp_path: Path):
    path = write_input(tmp_path, "input.json", name, DATA_INPUTS[name])
    runs = [("--state", bundles["sre"], "mitigate"), ("--agent-output", bundles["sre"], "diagnose")]
    runs.append(("--artifact", bundles["ciso"], "policy"))
    for option, bundle, task in runs:
        assert_clean(itbench("evaluate", str(bundle), option, str(path), "--task", task), "evaluate")
    yaml_path = write_input(tmp_path, "policy.yaml", name, DATA_INPUTS[name])
    assert_clean(itbench("evaluate", str(bundles["ciso"]), "--artifact", str(yaml_path)), "evaluate")


def test_evaluate_input_over_the_size_cap(bundles: dict[str, Path], tmp_path: Path):
    from itbench_dsl.runtime.evaluator import MAX_INPUT_BYTES

    huge = tmp_path / "state.json"
    with open(huge, "wb") as handle:  # sparse: no disk space used
        handle.truncate(MAX_INPUT_BYTES + 1)
    run = itbench("evaluate", str(bundles["sre"]), "--state", str(huge), "--task", "mitigate")
    assert_clean(run, "evaluate")
    assert run.code == 2 and "limit" in run.stderr


# ---- commands without files ----------------------------------------------------------------------------------


@pytest.mark.parametrize("args", [
    ["explain", "\x1b[31mE2003\x1b[0m"], ["explain", "E" + "9" * 10_000], ["explain", ""], ["explain", "e2003\r"],
    ["explain", "\udce9"], ["schema"], ["schema", "--unknown\x1b[2J"],
    ["graph", "--focus", "\x1b[31m", str(SCENARIOS / "sre" / "shop-cart-modified-env.itb")],
    ["graph", "--focus", "9" * 5000, str(SCENARIOS / "sre" / "shop-cart-modified-env.itb")],
    ["generate", "--with", "\x1b[31mnope", str(SCENARIOS / "sre" / "shop-cart-modified-env.itb")],
], ids=lambda a: re.sub(r"[^\w-]", "_", " ".join(a))[:40])
def test_hostile_arguments(args: list[str]):
    assert_clean(itbench(*args), args[0])


def test_stored_cases_through_check_and_import(tmp_path: Path):
    """The fixed inputs of tests/cases/hostile/ (*.itb to check, the rest to import)."""
    stored = sorted(p for p in HOSTILE.iterdir() if p.is_file() and p.name != "README.md")
    assert stored, HOSTILE
    for path in stored:
        if path.suffix == ".itb":
            assert_clean(itbench("check", str(path)), "check")
        else:
            assert_clean(itbench("import", str(path)), "import")


# ---- output: concurrent writers, foreign destinations, signals -----------------------------------------------


WRITERS = 12


def _lock(files, **more) -> bytes:
    """A bundle.lock as `itbench compile` writes it (bundle.lock_listing): the compiler, and every file."""
    return json.dumps({"compiler": "itbench-dsl test", **more, "files": {name: "" for name in sorted(files)}}).encode()


def _write_bundle_in_child(out: str, writer: int, barrier) -> None:
    files = {f"file-{i}.txt": f"writer {writer} file {i}\n".encode() for i in range(40)}
    files["sub/deeper.txt"] = f"writer {writer}\n".encode()
    files["bundle.lock"] = _lock(files, writer=writer)
    barrier.wait()
    write_bundle(Path(out), "bundle", files)


def _leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith("."))


def test_concurrent_bundle_writers_all_succeed_and_leave_one_complete_bundle(tmp_path: Path):
    context = multiprocessing.get_context("fork")
    barrier = context.Barrier(WRITERS)
    for round_ in range(3):  # the first round creates the bundle, the others replace it
        processes = [context.Process(target=_write_bundle_in_child, args=(str(tmp_path), w, barrier))
                     for w in range(WRITERS)]
        for process in processes:
            process.start()
        for process in processes:
            process.join(TIME_LIMIT * 3)
        assert [p.exitcode for p in processes] == [0] * WRITERS, round_
        assert _leftovers(tmp_path) == [], round_
        bundle = tmp_path / "bundle"
        lock = json.loads((bundle / "bundle.lock").read_text())
        names = sorted(str(p.relative_to(bundle)) for p in bundle.rglob("*") if p.is_file())
        assert names == sorted([*lock["files"], "bundle.lock"])  # one writer's bundle, complete
        for i in range(40):
            assert (bundle / f"file-{i}.txt").read_text() == f"writer {lock['writer']} file {i}\n"


def _main_in_child(args: list[str], cwd: str, barrier) -> None:
    """`itbench ARGS` as the installed command runs it (`cli.main`: its exit code is the process's)."""
    from itbench_dsl.cli import main

    os.chdir(cwd)
    barrier.wait()
    main(args)


def test_concurrent_compiles_into_one_output_folder(tmp_path: Path):
    """The command line itself, twelve processes compiling the same scenario into one -o at once."""
    source = tmp_path / "shop-cart.itb"
    source.write_text(SMALL, encoding="utf-8")
    context = multiprocessing.get_context("fork")
    barrier = context.Barrier(WRITERS)
    processes = [context.Process(target=_main_in_child, args=(["compile", source.name, "-o", "out", "-q"],
                                                              str(tmp_path), barrier)) for _ in range(WRITERS)]
    for process in processes:
        process.start()
    for process in processes:
        process.join(TIME_LIMIT * 3)
    assert [p.exitcode for p in processes] == [0] * WRITERS
    out = tmp_path / "out"
    assert sorted(p.name for p in out.iterdir()) == ["shop-cart"]
    bundle = out / "shop-cart"
    lock = json.loads((bundle / "bundle.lock").read_text())
    written = {str(p.relative_to(bundle)) for p in bundle.rglob("*") if p.is_file()} - {"bundle.lock"}
    assert written == set(lock["files"])


def _cli_in_child(args: list[str], barrier, codes) -> None:
    barrier.wait()
    result = CliRunner().invoke(cli, args, catch_exceptions=True)
    codes.put(result.exit_code if result.exception is None or isinstance(result.exception, SystemExit) else 99)


@pytest.mark.parametrize("command", ["states", "docs", "import", "graph"])
def test_concurrent_writers_of_other_outputs(command: str, tmp_path: Path):
    source = tmp_path / "shop-cart.itb"
    source.write_text(SMALL, encoding="utf-8")
    out = tmp_path / "out"
    args = {
        "states": ["states", str(source), "-o", str(out)],
        "docs": ["docs", str(source), "-o", str(out)],
        "graph": ["graph", str(source), "-o", str(out / "picture.mmd")],
        "import": ["import", str(ITBENCH / "scenarios" / "scenario_16"), "-o", str(out / "imported.itb")],
    }[command]
    if command == "import" and not REFERENCE.is_dir():
        pytest.skip("../shared/reference is not here")
    if command == "graph":
        out.mkdir()
    context = multiprocessing.get_context("fork")
    barrier, codes = context.Barrier(WRITERS), context.Queue()
    processes = [context.Process(target=_cli_in_child, args=(args, barrier, codes)) for _ in range(WRITERS)]
    for process in processes:
        process.start()
    for process in processes:
        process.join(TIME_LIMIT * 3)
    found = sorted(codes.get(timeout=5) for _ in processes)
    assert found == [found[0]] * WRITERS and found[0] in (0, 1), found  # `import` exits 1 when the result needs work
    leftovers = [str(p.relative_to(tmp_path)) for p in tmp_path.rglob(".*")]
    assert leftovers == []
    written = {str(p.relative_to(out)): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    assert written or found[0] == 1  # an import whose result has errors may write nothing
    shutil.rmtree(out, ignore_errors=True)
    if command == "graph":
        out.mkdir()
    alone = itbench(*args)  # what one writer alone writes: the concurrent result is the same, whole
    assert alone.code == found[0]
    assert {str(p.relative_to(out)): p.read_bytes() for p in out.rglob("*") if p.is_file()} == written


def test_the_early_ownership_check_ignores_a_folder_another_writer_moves_away(tmp_path: Path):
    """A writer that lists a folder while another writer moves it aside sees entries vanish; those
    are no finding (the rename step checks again on its private copy). A folder that stays is."""
    folder = tmp_path / "out"
    folder.mkdir()
    (folder / "notes.txt").write_text("mine")

    def listed_while_moved(path: Path) -> list[str]:
        found = sorted(os.listdir(path))
        os.rename(path, tmp_path / "moved")  # another writer's first rename
        (tmp_path / "out").mkdir()  # and its staging folder arrives
        return found

    assert foreign_in(folder, listed_while_moved) == []
    assert foreign_in(folder, lambda path: ["x"]) == ["x"]  # same folder before and after: a finding
    assert foreign_in(tmp_path / "absent", lambda path: ["x"]) == []

    def vanished(path: Path) -> list[str]:
        raise FileNotFoundError(path)

    assert foreign_in(folder, vanished) == []


def test_a_plain_file_or_link_where_the_bundle_goes_is_refused(tmp_path: Path):
    files = {"bundle.lock": _lock(["a.txt"]), "a.txt": b"a"}
    (tmp_path / "plain").write_text("mine\n")
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "elsewhere", target_is_directory=True)
    (tmp_path / "dangling").symlink_to(tmp_path / "nowhere")
    (tmp_path / "foreign").mkdir()
    (tmp_path / "foreign" / "notes.txt").write_text("mine\n")
    for name, words in (("plain", "not a folder"), ("link", "symbolic link"), ("dangling", "symbolic link"),
                        ("foreign", "has no bundle.lock")):
        with pytest.raises(BundleError, match=words) as caught:
            write_bundle(tmp_path, name, files)
        assert str(tmp_path / name) in str(caught.value)
    assert (tmp_path / "plain").read_text() == "mine\n"
    assert (tmp_path / "foreign" / "notes.txt").read_text() == "mine\n"
    assert list((tmp_path / "elsewhere").iterdir()) == []
    assert _leftovers(tmp_path) == []
    (tmp_path / "empty").mkdir()  # an empty folder, or one we wrote, is replaced
    write_bundle(tmp_path, "empty", files)
    write_bundle(tmp_path, "empty", {"bundle.lock": _lock(["a.txt", "b.txt"]), "a.txt": b"a", "b.txt": b"b"})
    assert sorted(p.name for p in (tmp_path / "empty").iterdir()) == ["a.txt", "b.txt", "bundle.lock"]
    assert _leftovers(tmp_path) == []


def test_compile_refuses_a_file_where_the_bundle_goes(tmp_path: Path):
    source = tmp_path / "shop-cart.itb"
    source.write_text(SMALL, encoding="utf-8")
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "shop-cart").write_text("mine\n")
    run = itbench("compile", str(source), "-o", str(tmp_path / "out"))
    assert run.code == 2 and "out/shop-cart: exists and is not a folder" in run.stderr, run.stderr
    assert (tmp_path / "out" / "shop-cart").read_text() == "mine\n"
    (tmp_path / "out" / "shop-cart").unlink()
    (tmp_path / "out" / "shop-cart").mkdir()
    (tmp_path / "out" / "shop-cart" / "notes.txt").write_text("mine\n")
    run = itbench("compile", str(source), "-o", str(tmp_path / "out"))
    assert run.code == 2 and "out/shop-cart: exists and is not a bundle folder" in run.stderr, run.stderr
    assert [p.name for p in (tmp_path / "out" / "shop-cart").iterdir()] == ["notes.txt"]
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["shop-cart"]


def _slow_write_in_child(out: str) -> None:
    files = {f"f{i:05}.txt": b"x" * 512 for i in range(40_000)}
    write_bundle(Path(out), "bundle", {**files, "bundle.lock": _lock(files)})


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_an_interrupted_writer_leaves_nothing_behind(signum: int, tmp_path: Path):
    context = multiprocessing.get_context("fork")
    process = context.Process(target=_slow_write_in_child, args=(str(tmp_path),))
    process.start()
    deadline_at = time.monotonic() + TIME_LIMIT
    while not any(p.name.startswith(".bundle.") for p in tmp_path.iterdir()):  # writing has begun
        assert time.monotonic() < deadline_at
        time.sleep(0.01)
    time.sleep(0.05)
    os.kill(process.pid, signum)
    process.join(6 * TIME_LIMIT)  # removing up to 40,000 staged files: a bound against a hang, not a timing
    assert process.exitcode not in (0, None)
    assert list(tmp_path.iterdir()) == []


def test_write_file_is_atomic_and_keeps_links_and_modes(tmp_path: Path):
    target = tmp_path / "real.txt"
    target.write_text("old\n")
    target.chmod(0o640)
    (tmp_path / "link.txt").symlink_to(target)
    write_file(tmp_path / "link.txt", b"new\n")
    assert (tmp_path / "link.txt").is_symlink() and target.read_text() == "new\n"
    assert stat.S_IMODE(target.stat().st_mode) == 0o640
    (tmp_path / "folder").mkdir()
    with pytest.raises(BundleError, match="not a regular file"):
        write_file(tmp_path / "folder", b"x")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["folder", "link.txt", "real.txt"]


def test_an_interrupt_between_the_two_renames_puts_the_previous_bundle_back(tmp_path: Path, monkeypatch):
    import itbench_dsl.bundle as bundle_module

    write_bundle(tmp_path, "bundle", {"bundle.lock": _lock(["a.txt"], n=1), "a.txt": b"first"})
    real_rename = os.rename
    interrupted = []

    def rename(source, target):  # Ctrl-C once, when the previous bundle has been moved aside
        if not interrupted and Path(target) == tmp_path / "bundle" and not (tmp_path / "bundle").exists():
            interrupted.append(source)
            raise KeyboardInterrupt
        real_rename(source, target)

    monkeypatch.setattr(bundle_module.os, "rename", rename)
    with pytest.raises(KeyboardInterrupt):
        write_bundle(tmp_path, "bundle", {"bundle.lock": _lock(["a.txt"], n=2), "a.txt": b"second"})
    monkeypatch.undo()
    assert interrupted
    assert (tmp_path / "bundle" / "a.txt").read_bytes() == b"first"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bundle"]
