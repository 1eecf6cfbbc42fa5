"""Running the generators on library scenarios, for the variant tests."""

from __future__ import annotations

import functools

from itbench_dsl import variants as gen
from itbench_dsl.diagnostics import Diagnostics

from .compiling import REPO, SCENARIOS


@functools.lru_cache(maxsize=None)
def parent(rel: str) -> gen.Parent:
    """The library scenario at `rel` (under scenarios/), loaded as a generator's input."""
    path = SCENARIOS / rel
    diags = Diagnostics()
    loaded = gen.load_input(path.read_bytes(), str(path.relative_to(REPO)), diags)
    assert loaded is not None, [d.message for d in diags.items]
    return loaded


def run(names: str, rels: list[str], seed: int = 1, n: int | None = None) -> gen.RunResult:
    """The generators `names` (comma-separated, chained) run on the library scenarios `rels`."""
    chain = [(name, gen.load_generator(name)) for name in names.split(",")]
    return gen.run([parent(r) for r in rels], chain, seed, n)
