"""Fuzzing the whole pipeline: no input makes the compiler raise, and every error is located.

In process, `compile_source` is given random text, random bytes, random token soups and
mutations (deleted, inserted, duplicated, swapped spans; inserted tokens and bytes; tokens
replaced by others of the same class) of every scenario in `scenarios/` and of every error
fixture input. For each input it must either produce files and no error, or produce no files
and at least one error, each with a path and a position inside the file. Hypothesis runs
derandomized (reproducible in CI) with no deadline and no example database.

At the process level, `python -m itbench_dsl check` runs on mutated files: exit code 0 or 1,
never 2, and never a traceback.
"""

from __future__ import annotations

import json
import os
import random
import re
import subprocess
import sys
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from itbench_dsl import ast
from itbench_dsl.compiler import compile_source
from itbench_dsl.diagnostics import RENDERERS, Diagnostics
from itbench_dsl.parser import parse_bytes

REPO = Path(__file__).resolve().parents[2]
PATH = "fuzz.itb"

SCENARIOS = sorted((REPO / "scenarios").rglob("*.itb"))
FIXTURES = sorted((REPO / "tests" / "cases" / "errors").glob("*/input.itb"))
# the seeds are compiled as `fuzz.itb`, away from their folder: those that import a file beside them
# (`use faults "./x"`, `use app "./x"`) are left out, since the import would not be found there
SCENARIO_SEEDS = [p.read_bytes() for p in SCENARIOS if not re.search(rb'use (faults|app) "\.', p.read_bytes())]
SEEDS = SCENARIO_SEEDS + [p.read_bytes() for p in FIXTURES]

KEYWORDS = [
    "scenario", "app", "domain", "complexity", "description", "tags", "metadata", "use", "topology", "fault", "on",
    "group", "wait", "before", "after", "expect", "alert", "root_cause", "propagation", "mitigated", "when", "within",
    "optimal", "ready", "exists", "absent", "not", "firing", "solution", "step", "run", "param", "in", "default",
    "agent", "control", "task", "gap", "compliant", "namespace", "deployment", "statefulset", "service", "configmap",
    "secret", "serviceaccount", "hpa", "pod", "schedule", "networkchaos", "container", "image", "port", "env",
    "replicas", "resources", "requests", "limits", "cpu", "memory", "probe", "sre", "ciso", "finops", "low", "high",
    "scaled_to_zero", "nonexistent_image", "modified_env", "modified_target_port", "network_chaos",
    "misconfigured_hpa", "loss", "delay", "partition", "duration", "every", "peer", "selector", "true", "false",
]
PUNCTUATION = ["{", "}", "[", "]", "(", ")", "=", "==", "!=", ">=", "<", "->", ",", ".", '"', "#", "\\", "%", "*", "/",
               "\n", "\t", "\r", " "]
VALUES = ['"x"', '""', '"cart"', '"shop/cart"', '"cart-*"', '"*"', '"a b"', '"\\u00e9"', '"\\ud800"', '"\\q"',
          '"\\u0000"', "0", "-1", "7070", "65536", "99999999999999999999999", "1.5", "-0.5", "5m", "250m", "64Mi",
          "1.5Gi", "30s", "1h30m", "30s5m", "0ms", "1e3", "2x", "100%", "150%", "-5%", "field(\"status.podIP\")",
          "[]", "{}", "[1, 2]", "{ a = 1 }"]
ODD = ["\x00", "\ufeff", "\u00e9", "\u2028", "\U0001f600", "\x7f", "\x1b[31m"]
TOKENS = KEYWORDS + PUNCTUATION + VALUES + ODD

_TOKEN = re.compile(rb'"(?:[^"\\\n]|\\.)*"|[+-]?\d+(?:\.\d+)?[A-Za-z%]*|[A-Za-z_][A-Za-z0-9_]*|->|==|!=|>=|<=|\S')


def _token_class(token: bytes) -> str:
    if token.startswith(b'"'):
        return "string"
    if token[:1].isdigit() or (token[:1] in (b"+", b"-") and token[1:2].isdigit()):
        return "number"
    if token[:1].isalpha() or token[:1] == b"_":
        return "name"
    return "punctuation"


_POOL: dict[str, list[bytes]] = {}
for _token in sorted({t for seed in SEEDS for t in _TOKEN.findall(seed)} | {t.encode() for t in TOKENS}):
    _POOL.setdefault(_token_class(_token), []).append(_token)


def check_compiles_or_reports(data: bytes) -> None:
    """The property: files and no error, or errors (located, with a path) and no files. Never an exception."""
    diags = Diagnostics()
    result = compile_source(data, PATH, diags)
    errors = diags.errors()
    if errors:
        assert result.files == {}, "files were produced despite errors"
        for d in errors:
            assert d.path == PATH, d
            assert d.span.line >= 1 and d.span.column >= 1, d
            assert d.span.end_line >= d.span.line, d
            source = diags.sources.get(d.path)
            if source is not None:
                assert d.span.line <= source.line_count and d.span.end_line <= source.line_count, d
            assert d.message.strip(), d
    elif not result.files:
        # no error and no files: only an `app` file compiles to nothing
        assert isinstance(parse_bytes(data, PATH, Diagnostics()), ast.App), "no error, no files"
    for name, render in RENDERERS.items():
        text = render(diags)
        assert isinstance(text, str)
        if name == "json":
            assert json.loads(text)["summary"]["errors"] == len({(d.code, d.path, d.span, d.message) for d in errors})


# ---- mutations ----------------------------------------------------------------------------------------------

position = st.integers(min_value=0, max_value=1 << 20)
length = st.integers(min_value=0, max_value=80)
operation = st.one_of(
    st.tuples(st.just("delete"), position, length),
    st.tuples(st.just("insert"), position, st.sampled_from(TOKENS)),
    st.tuples(st.just("duplicate"), position, length),
    st.tuples(st.just("swap"), position, position, length),
    st.tuples(st.just("bytes"), position, st.binary(min_size=1, max_size=4)),
    st.tuples(st.just("retoken"), position, st.sampled_from(sorted(_POOL)), position),
)


def mutate(data: bytes, ops) -> bytes:
    for op in ops:
        kind, at = op[0], op[1] % (len(data) + 1)
        if kind == "delete":
            data = data[:at] + data[at + op[2]:]
        elif kind == "insert":
            data = data[:at] + op[2].encode("utf-8") + data[at:]
        elif kind == "duplicate":
            data = data[:at] + data[at:at + op[2]] + data[at:]
        elif kind == "swap":
            a, b = sorted((at, op[2] % (len(data) + 1)))
            n = min(op[3], b - a)
            data = data[:a] + data[b:b + n] + data[a + n:b] + data[a:a + n] + data[b + n:]
        elif kind == "bytes":
            data = data[:at] + op[2] + data[at:]
        elif kind == "retoken":
            tokens = list(_TOKEN.finditer(data))
            if tokens:
                match = tokens[op[1] % len(tokens)]
                pool = _POOL[op[2]]
                data = data[:match.start()] + pool[op[3] % len(pool)] + data[match.end():]
    return data


FUZZ = settings(deadline=None, derandomize=True, database=None, print_blob=True,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@settings(FUZZ, max_examples=400)
@given(st.text(max_size=3000))
def test_random_text(text: str):
    check_compiles_or_reports(text.encode("utf-8"))


@settings(FUZZ, max_examples=200)
@given(st.binary(max_size=3000))
def test_random_bytes(data: bytes):
    check_compiles_or_reports(data)


@settings(FUZZ, max_examples=500)
@given(st.lists(st.sampled_from(TOKENS), max_size=200), st.booleans())
def test_random_token_soup(tokens: list[str], wrapped: bool):
    body = " ".join(tokens)
    text = f'scenario "soup" {{\n{body}\n}}\n' if wrapped else body
    check_compiles_or_reports(text.encode("utf-8"))


@settings(FUZZ, max_examples=2000)
@given(st.sampled_from(SEEDS), st.lists(operation, min_size=1, max_size=6))
def test_mutated_scenarios_and_fixtures(seed: bytes, ops):
    check_compiles_or_reports(mutate(seed, ops))


@settings(FUZZ, max_examples=1200)
@given(st.sampled_from(SCENARIO_SEEDS),
       st.lists(st.tuples(st.just("retoken"), position, st.sampled_from(sorted(_POOL)), position),
                min_size=1, max_size=3))
def test_scenarios_with_tokens_replaced(seed: bytes, ops):
    # mostly still parses, so this reaches the checker, the backends and the validation
    check_compiles_or_reports(mutate(seed, ops))


def test_seeds_are_what_the_fuzzers_start_from():
    assert len(SCENARIO_SEEDS) >= 8 and len(SEEDS) > len(SCENARIO_SEEDS)
    for seed in SCENARIO_SEEDS:  # the unmutated scenarios compile
        check_compiles_or_reports(seed)
        diags = Diagnostics()
        assert compile_source(seed, PATH, diags).files and not diags.items
    for path, seed in zip(FIXTURES, SEEDS[len(SCENARIO_SEEDS):]):  # the fixtures fail, located
        diags = Diagnostics()
        compile_source(seed, PATH, diags)
        # lint (W) fixtures compile clean, and so do those of what only `check` finds (E2035, E4010: checking.py)
        assert diags.has_errors or path.parent.name.startswith(("W", "E2035", "E4010")), path
        check_compiles_or_reports(seed)


# ---- at the process level ------------------------------------------------------------------------------------


def _mutated_files(count: int) -> list[bytes]:
    rng = random.Random(20240601)
    out = []
    for index in range(count):
        seed = SCENARIO_SEEDS[index % len(SCENARIO_SEEDS)] if index % 2 == 0 else rng.choice(SEEDS)
        ops = []
        for _ in range(rng.randint(1, 4)):
            kind = rng.choice(["delete", "insert", "duplicate", "swap", "bytes", "retoken"])
            a, b, n = rng.randrange(1 << 20), rng.randrange(1 << 20), rng.randrange(80)
            if kind == "insert":
                ops.append((kind, a, rng.choice(TOKENS)))
            elif kind == "swap":
                ops.append((kind, a, b, n))
            elif kind == "bytes":
                ops.append((kind, a, bytes(rng.randrange(256) for _ in range(rng.randint(1, 4)))))
            elif kind == "retoken":
                ops.append((kind, a, rng.choice(sorted(_POOL)), b))
            else:
                ops.append((kind, a, n))
        out.append(mutate(seed, ops))
    return out


def test_check_command_on_mutated_files(tmp_path: Path):
    files = []
    for index, data in enumerate(_mutated_files(20)):
        path = tmp_path / f"mutant-{index:02d}.itb"
        path.write_bytes(data)
        files.append(path)
    env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""), NO_COLOR="1")
    # two processes at a time: each file on its own, so that every exit code is checked
    pending = list(files)
    running: list[tuple[Path, subprocess.Popen]] = []
    results: dict[Path, tuple[int, str, str]] = {}
    while pending or running:
        while pending and len(running) < 2:
            path = pending.pop(0)
            proc = subprocess.Popen([sys.executable, "-m", "itbench_dsl", "check", path.name], cwd=tmp_path, env=env,
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, errors="replace")
            running.append((path, proc))
        path, proc = running.pop(0)
        try:
            stdout, stderr = proc.communicate(timeout=60)  # a hang guard, not a speed assertion
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()
            raise AssertionError(f"{path.name}: `itbench check` did not finish in 60 s")
        results[path] = (proc.returncode, stdout, stderr)
    for path, (code, stdout, stderr) in sorted(results.items()):
        assert code in (0, 1), f"{path.name}: exit code {code}\n{stderr[-2000:]}"
        assert "Traceback" not in stdout + stderr, f"{path.name}:\n{stderr[-3000:]}"
        assert "internal error" not in stdout + stderr, f"{path.name}:\n{stderr[-3000:]}"
        if code == 1:
            assert re.search(rf"--> {re.escape(path.name)}:\d+:\d+\n", stderr), f"{path.name}:\n{stderr[-2000:]}"
    assert any(code == 1 for code, _, _ in results.values())
