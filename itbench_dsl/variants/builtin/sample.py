"""sample: n seeded draws from the scenario's `param` domains (`-n`, 10 by default).

Each draw picks one value per param with the run's seeded random generator, so the same seed
gives the same variants and another seed another sample. Draws that repeat an earlier one, or the
input's own values, are not repeated; with small domains, fewer than n variants may result, and
the draws stop (with a skip that says so) as soon as every combination has been drawn.
"""

from __future__ import annotations

import math

from itbench_dsl.variants import Context, Generator, Skip

from .sweep import current, describe, params_of, variant

DEFAULT_DRAWS = 10


class SampleGenerator(Generator):
    name = "sample"
    summary = "n seeded random draws from the param domains"

    def generate(self, ctx: Context):
        params = params_of(ctx.document)
        if not params:
            yield Skip("the scenario declares no `param` to sample")
            return
        draws = ctx.n if ctx.n is not None else DEFAULT_DRAWS
        seen = {tuple(current(p) for p in params)}
        space = math.prod(len(p.domain.items) for p in params)  # combinations, the input's own included
        for _ in range(draws):
            if len(seen) >= space:  # every combination drawn: more draws could only repeat
                yield Skip(f"the param space is exhausted: all {space - 1} other combinations drawn")
                return
            combination = tuple(ctx.rng.choice(p.domain.items) for p in params)
            if combination in seen:
                continue
            seen.add(combination)
            values = {p.name: v for p, v in zip(params, combination)}
            yield variant(ctx.document, params, values, describe(values))
