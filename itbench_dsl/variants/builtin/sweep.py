"""sweep: the cartesian product of the scenario's `param` domains, one variant per combination.

A variant sets each param's `default` to one value of its domain; every `param(NAME)` in the
scenario then takes that value (docs/language.md, Parameters). The combination the scenario
already has is the input itself, so it is not repeated.
"""

from __future__ import annotations

import dataclasses
import itertools

from itbench_dsl import ast
from itbench_dsl.variants import Context, Generator, Skip, Variant, statements_of
from itbench_dsl.printer import Printer


def params_of(document: ast.Scenario) -> list[ast.Param]:
    return [p for p in statements_of(document, ast.Param) if isinstance(p.domain, ast.ListValue) and p.domain.items]


def current(param: ast.Param) -> ast.Value:
    return param.default if param.default is not None else param.domain.items[0]


def with_values(document: ast.Scenario, values: dict[str, ast.Value]) -> ast.Scenario:
    """The document with each named param's default set to the given value."""
    statements = tuple(dataclasses.replace(s, default=values[s.name]) if isinstance(s, ast.Param) and s.name in values
                       else s for s in document.statements)
    return dataclasses.replace(document, statements=statements)


def value_text(value: ast.Value) -> str:
    return Printer().value(value)


def describe(values: dict[str, ast.Value]) -> str:
    return ", ".join(f"{k} = {value_text(v)}" for k, v in values.items())


class SweepGenerator(Generator):
    name = "sweep"
    summary = "every combination of the scenario's param values"

    def generate(self, ctx: Context):
        params = params_of(ctx.document)
        if not params:
            yield Skip("the scenario declares no `param` to sweep")
            return
        now = tuple(current(p) for p in params)
        for combination in itertools.product(*(p.domain.items for p in params)):
            if combination == now:
                continue
            values = {p.name: v for p, v in zip(params, combination)}
            yield Variant(with_values(ctx.document, values), note=describe(values))
