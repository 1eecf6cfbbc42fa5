"""sweep: the cartesian product of the scenario's `param` domains, one variant per combination.

A variant sets each param's `default` to one value of its domain; every `param(NAME)` in the
scenario then takes that value (docs/language.md, Parameters). The combination the scenario
already has is the input itself, so it is not repeated.

A variant says its own values: prose that quotes a param's value (`raised to 8Mi`) and a scenario
name that carries it (`...-limit-8mi`) are rewritten with the new value (names otherwise follow the
framework's `<parent>-sweep-<k>`). Variants of one param family inject one mechanism on one target
with other magnitudes, which is what W2001 (a duplicate scenario) looks for: the framework marks
every variant with its parent's mechanism `metadata { lint_allow = ["W2001"] }` (generate.run), so
that `itbench check --strict` passes them.
"""

from __future__ import annotations

import dataclasses
import itertools
import re

from itbench_dsl import ast
from itbench_dsl.variants import figures
from itbench_dsl.variants import (NAME_LIMIT, Context, Generator, Skip, Variant, replace_text,
                                  statements_of)
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


def variant(document: ast.Scenario, params: list[ast.Param], values: dict[str, ast.Value],
            note: str) -> Variant | Skip:
    """The variant with `values`: defaults set, prose and name saying the new values, W2001 allowed; a skip
    when the prose would still state an old value in some spelling."""
    changed = {}
    for p in params:
        old, new = _plain(current(p)), _plain(values[p.name])
        if old != new:
            changed.setdefault(old, set()).add(new)
    texts = {old: news.pop() for old, news in changed.items() if len(news) == 1}
    out = with_values(document, values)
    name = None
    if texts:
        pattern = re.compile(r"(?<![A-Za-z0-9.])(" + "|".join(re.escape(t) for t in sorted(texts, key=len, reverse=True))
                             + r")(?![A-Za-z0-9.%])")
        out = replace_text(out, lambda text: pattern.sub(lambda m: texts[m.group(1)], text))
        # the same values in other spellings (`3 seconds`, `3000ms`, `80 percent`) and the share words an
        # old percentage satisfied (`most of`): said anew, or the variant is refused (figures.py)
        shares = sum(1 for t in texts if figures.percent(t) is not None) == 1  # a share word is one param's
        for old, new in texts.items():
            out = replace_text(out, lambda text, old=old, new=new: figures.rewrite(text, old, new, shares))
        out = replace_text(out, lambda text: figures.rewrite_counts(text, texts))
        for old, new in texts.items():
            for text in _prose(out):
                left = figures.stale(text, old, new)
                if left:
                    return Skip(f"{note}: the prose still says `{left}`, the old value {old}, in a form that "
                                f"cannot be said of {new} (\"{text}\")")
        slugs = {_slug(a): _slug(b) for a, b in texts.items() if _slug(a)}
        parts = document.name.split("-")
        renamed = "-".join(slugs.get(part, part) for part in parts)
        for old_slug, new_slug in slugs.items():  # a value of several words (`127-0-0-1-6379`)
            if "-" in old_slug:
                renamed = re.sub(rf"(?<![a-z0-9]){re.escape(old_slug)}(?![a-z0-9])", new_slug, renamed)
        if renamed != document.name:
            name = renamed[:NAME_LIMIT].rstrip("-")
    return Variant(out, note=note, name=name)


def _prose(document: ast.Scenario) -> list[str]:
    """Every text of the document that replace_text rewrites."""
    found: list[str] = []

    def collect(text: str) -> str:
        found.append(text)
        return text
    replace_text(document, collect)
    return found


def _plain(value: ast.Value) -> str:
    """A value as prose quotes it: a string without its quotes."""
    return value.value if isinstance(value, ast.Str) else value_text(value)


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


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
            yield variant(ctx.document, params, values, describe(values))
