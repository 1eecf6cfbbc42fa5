"""sample: n seeded draws from the scenario's `param` domains (`-n`, 10 by default).

Each draw picks one value per param with the run's seeded random generator, so the same seed
gives the same variants and another seed another sample. Every draw is accounted for: a draw that
repeats an earlier one, or the input's own values, is a skip that says so ("draw 3 repeats draw 1"),
in index.json and on stderr (W6001); with small domains, fewer than n variants may result, and the
draws stop as soon as every combination has been drawn, with a skip that names the draws not made.
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
        seen = {tuple(current(p) for p in params): 0}  # combination -> the draw that made it (0: the input)
        space = math.prod(len(p.domain.items) for p in params)  # combinations, the input's own included
        for k in range(1, draws + 1):
            if len(seen) >= space:  # every combination drawn: more draws could only repeat
                which = f"draw {k}" if k == draws else f"draws {k}-{draws}"
                yield Skip(f"{which} not made: the param space is exhausted (all {space - 1} other combinations "
                           "drawn)")
                return
            combination = tuple(ctx.rng.choice(p.domain.items) for p in params)
            if combination in seen:
                first = seen[combination]
                yield Skip(f"draw {k} repeats " + (f"draw {first}" if first else "the input's own values")
                           + f" ({describe({p.name: v for p, v in zip(params, combination)})})")
                continue
            seen[combination] = k
            values = {p.name: v for p, v in zip(params, combination)}
            yield variant(ctx.document, params, values, describe(values))
