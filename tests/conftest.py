"""Fixtures every test module may ask for, and the `library` marker.

Helpers are plain functions in tests/support/ (`from support.compiling import compile_text`); the test API
server is tests/support/kube_server.py. A test run over every scenario of the library is marked `library`
(explicitly, or because a parameter names a library scenario), so `pytest -m "not library"` is a quick run.
"""

from __future__ import annotations

import compileall
import os
import signal
from pathlib import Path

import pytest

from support.compiling import REFERENCE, REPO, SCENARIOS

# A shell starts a background job (`pytest &`) with SIGINT ignored, and an ignored signal stays ignored in
# every process the suite starts: the tests of what Ctrl-C does need it to reach them, as in a terminal.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

# The suite starts the CLI in thousands of subprocesses: where bytecode is not written as modules load
# (PYTHONDONTWRITEBYTECODE), each would compile the whole package again. Compile it once, as an install does.
if os.environ.get("PYTHONDONTWRITEBYTECODE"):
    compileall.compile_dir(str(REPO / "itbench_dsl"), quiet=2)

# Rego is graded with regopy, whatever `opa` the machine's PATH holds, unless ITBENCH_OPA names an engine (a
# run with ITBENCH_OPA=/path/to/opa grades every Rego policy with OPA): OPA starts a process per grading,
# which the suites that grade hundreds of policies cannot afford. tests/runtime/test_rego_engine.py tests OPA.
os.environ.setdefault("ITBENCH_OPA", "none")

_LIBRARY = sorted(SCENARIOS.rglob("*.itb"))
_LIBRARY_NAMES = {p.stem for p in _LIBRARY} | {str(p.relative_to(SCENARIOS)) for p in _LIBRARY}
_LIBRARY_PATHS = set(_LIBRARY)


@pytest.fixture(scope="session")
def repo() -> Path:
    """The repository's root."""
    return REPO


@pytest.fixture(scope="session")
def scenarios() -> Path:
    """The scenario library's folder."""
    return SCENARIOS


@pytest.fixture(scope="session")
def reference() -> Path:
    """ITBench's reference data (../shared/reference, beside the checkout): the test skips without it."""
    if not REFERENCE.is_dir():
        pytest.skip(f"no reference data at {REFERENCE}")
    return REFERENCE


def _names_a_library_scenario(value) -> bool:
    if isinstance(value, Path):
        return value.resolve() in _LIBRARY_PATHS
    return isinstance(value, str) and value in _LIBRARY_NAMES


def pytest_collection_modifyitems(config, items) -> None:
    for item in items:
        callspec = getattr(item, "callspec", None)
        if callspec is not None and any(_names_a_library_scenario(v) for v in callspec.params.values()):
            item.add_marker(pytest.mark.library)
