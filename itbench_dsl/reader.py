"""Typed reading of generic bodies (`key = value`, `key "label" { ... }`).

Object bodies and fault arguments share one syntax; a `Body` gives each entry its type
when a consumer asks for it, reports wrong types and units at the value, and at `finish()`
reports every entry nobody asked for, with the closest accepted name as a hint. All
problems are collected; nothing raises.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Any, Callable

from . import ast
from .diagnostics import Diagnostics, did_you_mean
from .source import Span
from .units import UnitError, parse_cpu, parse_duration, parse_memory

_MISSING = object()


def describe(value: ast.Value) -> str:
    names = {
        ast.Str: "a string", ast.Int: "an integer", ast.Float: "a number", ast.Quantity: "a quantity",
        ast.Percent: "a percentage", ast.Symbol: "a name", ast.Call: "a call", ast.ListValue: "a list",
        ast.MapValue: "a map",
    }
    return names[type(value)]


@dataclass
class Context:
    diags: Diagnostics
    path: str

    def error(self, code: str, message: str, span: Span, label: str = "", help: str = "") -> None:
        self.diags.error(code, message, self.path, span, label, help)


class Body:
    def __init__(self, ctx: Context, entries: tuple[ast.Entry, ...] | None, where: str, span: Span) -> None:
        self.ctx = ctx
        self.entries = list(entries or ())
        self.where = where
        self.span = span
        self.used: set[int] = set()
        self.known: set[str] = set()

    # ---- lookup
    def _find(self, key: str) -> list[ast.Entry]:
        self.known.add(key)
        found = []
        for index, entry in enumerate(self.entries):
            if entry.key == key:
                self.used.add(index)
                found.append(entry)
        return found

    def has(self, key: str) -> bool:
        return any(e.key == key for e in self.entries)

    def attr(self, key: str, kind: str, required: bool = False, default: Any = None) -> Any:
        """The value of `key = value`, converted to `kind`, or `default` when absent."""
        found = self._find(key)
        if not found:
            if required:
                self.ctx.error("E2007", f"{self.where} needs `{key}`", self.span, f"`{key}` missing",
                               help=f"add `{key} = ...`")
            return default
        for extra in found[1:]:
            self.ctx.error("E2002", f"`{key}` is given twice in {self.where}", extra.key_span, "second one")
        entry = found[0]
        if not isinstance(entry, ast.Attr) or entry.labels:
            self.ctx.error("E2008", f"`{key}` in {self.where} is written `{key} = value`", entry.key_span, "not a value")
            return default
        converted = convert(self.ctx, entry.value, kind, f"`{key}`")
        return default if converted is _MISSING else converted

    def attr_span(self, key: str) -> Span:
        for entry in self.entries:
            if entry.key == key:
                return entry.value.span if isinstance(entry, ast.Attr) else entry.span
        return self.span

    def blocks(self, key: str, labels: int = 1) -> list[ast.Block]:
        """Every `key "label" { ... }`; a labelled entry written as `=` is reported."""
        out = []
        for entry in self._find(key):
            if not isinstance(entry, ast.Block):
                continue
            if len(entry.labels) != labels:
                example = key + ' "name"' * labels
                self.ctx.error("E2008", f"`{key}` takes {labels} label(s) in {self.where}", entry.key_span,
                               help=f"write `{example} {{ ... }}`")
                continue
            out.append(entry)
        return out

    def labelled(self, key: str) -> list[ast.Entry]:
        """All entries named `key`, attributes and blocks, in order (e.g. `port "http" = 80`)."""
        return self._find(key)

    def block(self, key: str) -> "Body | None":
        found = self._find(key)
        if not found:
            return None
        for extra in found[1:]:
            self.ctx.error("E2002", f"`{key}` is given twice in {self.where}", extra.key_span, "second one")
        entry = found[0]
        if isinstance(entry, ast.Attr) and isinstance(entry.value, ast.MapValue):
            return Body(self.ctx, tuple(ast.Attr(p.key, (), p.value, p.span, p.span) for p in entry.value.pairs),
                        f"`{key}`", entry.span)
        if not isinstance(entry, ast.Block) or entry.labels:
            self.ctx.error("E2008", f"`{key}` in {self.where} is a block: `{key} {{ ... }}`", entry.key_span)
            return None
        return Body(self.ctx, entry.entries, f"`{key}`", entry.span)

    def string_map(self, key: str, check: "Callable[[str, str], tuple[str, str] | None] | None" = None) -> dict[str, str]:
        """A block of `"key" = "value"` pairs; `check(key, value)` may return (message, "key"|"value") to refuse one."""
        body = self.block(key)
        return body.as_string_map(check) if body is not None else {}

    def as_string_map(self, check: "Callable[[str, str], tuple[str, str] | None] | None" = None) -> dict[str, str]:
        out: dict[str, str] = {}
        for index, entry in enumerate(self.entries):
            self.used.add(index)
            if not isinstance(entry, ast.Attr) or entry.labels:
                self.ctx.error("E2008", f"{self.where} holds `key = \"value\"` pairs", entry.key_span)
                continue
            if entry.key in out:
                self.ctx.error("E2002", f"`{entry.key}` is given twice in {self.where}", entry.key_span, "second one")
                continue
            value = convert(self.ctx, entry.value, "scalar_str", f"`{entry.key}`")
            if value is _MISSING:
                continue
            problem = check(entry.key, value) if check is not None else None
            if problem is not None:
                message, where = problem
                self.ctx.error("E2014", message, entry.key_span if where == "key" else entry.value.span,
                               f"invalid {where}", help="label keys are an optional DNS subdomain prefix and `/`, then "
                               "a name of at most 63 characters of letters, digits, `-`, `_` and `.`, starting and ending "
                               "with a letter or digit; values follow the same rule for the name and may be empty")
                continue
            out[entry.key] = value
        return out

    def finish(self, elsewhere: "dict[str, str] | None" = None) -> None:
        """Report the entries nothing read (E2006). `elsewhere`: fields of another block, by name -> where they
        belong, said in the help instead of this block's fields."""
        for index, entry in enumerate(self.entries):
            if index in self.used:
                continue
            hint = did_you_mean(entry.key, self.known)
            moved = (elsewhere or {}).get(entry.key)
            self.ctx.error("E2006", f"{self.where} has no field `{entry.key}`", entry.key_span, "unknown field",
                           help=moved if moved else f"did you mean `{hint}`?" if hint else
                           ("accepted: " + ", ".join(f"`{k}`" for k in sorted(self.known)) if self.known else ""))


# ---- conversion of one value ------------------------------------------------------------


def convert(ctx: Context, value: ast.Value, kind: str, what: str) -> Any:
    converter: Callable = _CONVERTERS[kind]
    return converter(ctx, value, what)


def _wrong(ctx: Context, value: ast.Value, what: str, expected: str) -> object:
    ctx.error("E2008", f"{what} expects {expected}, not {describe(value)}", value.span, f"expected {expected}")
    return _MISSING


def _str(ctx, v, what):
    return v.value if isinstance(v, ast.Str) else _wrong(ctx, v, what, "a string")


def _scalar_str(ctx, v, what):
    """Map values such as labels and env: strings; numbers and booleans are refused to avoid YAML surprises."""
    return v.value if isinstance(v, ast.Str) else _wrong(ctx, v, what, 'a quoted string (write "8080", "true")')


INT32_MAX = 2**31 - 1


def _int(ctx, v, what):
    if isinstance(v, ast.Int):
        if abs(v.value) > INT32_MAX:
            ctx.error("E2010", f"{what} is out of range: Kubernetes integers are at most {INT32_MAX:,}", v.span,
                      "too large")
            return _MISSING
        return v.value
    if isinstance(v, ast.Quantity):
        ctx.error("E2009", f"{what} is a plain integer and takes no unit", v.span, "unexpected unit")
        return _MISSING
    return _wrong(ctx, v, what, "an integer")


def _nonneg_int(ctx, v, what):
    n = _int(ctx, v, what)
    if n is not _MISSING and n < 0:
        ctx.error("E2010", f"{what} cannot be negative", v.span, "negative")
        return _MISSING
    return n


def _port(ctx, v, what):
    n = _int(ctx, v, what)
    if n is not _MISSING and not 1 <= n <= 65535:
        ctx.error("E2010", f"{what} must be a port from 1 to 65535, not {n}", v.span, "out of range")
        return _MISSING
    return n


def _port_or_name(ctx, v, what):
    if isinstance(v, ast.Str):
        return v.value
    return _port(ctx, v, what)


def _bool(ctx, v, what):
    if isinstance(v, ast.Symbol) and v.name in ("true", "false"):
        return v.name == "true"
    return _wrong(ctx, v, what, "true or false")


def _symbol(ctx, v, what):
    if isinstance(v, ast.Symbol):
        return v.name
    if isinstance(v, ast.Str):
        return v.value
    return _wrong(ctx, v, what, "a name")


def _str_list(ctx, v, what):
    if not isinstance(v, ast.ListValue):
        return _wrong(ctx, v, what, "a list of strings")
    out = []
    for item in v.items:
        s = _str(ctx, item, f"each item of {what}")
        if s is _MISSING:
            return _MISSING
        out.append(s)
    return out


def _duration(ctx, v, what):
    if isinstance(v, ast.Quantity):
        try:
            return parse_duration(v.text)
        except UnitError as exc:
            ctx.error("E2009", f"{what} is a duration: {exc}", v.span, "not a duration")
            return _MISSING
    if isinstance(v, ast.Int) and v.value == 0:
        return Decimal(0)
    if isinstance(v, (ast.Int, ast.Float)):
        ctx.error("E2009", f"{what} is a duration and needs a unit (e.g. 30s, 5m)", v.span, "no unit")
        return _MISSING
    return _wrong(ctx, v, what, "a duration")


def _cpu(ctx, v, what):
    if isinstance(v, ast.Quantity):
        try:
            parse_cpu(v.text)
            return v.text
        except UnitError as exc:
            ctx.error("E2009", f"{what} is a CPU quantity: {exc}", v.span, "not a CPU quantity")
            return _MISSING
    if isinstance(v, ast.Int):
        return str(v.value)
    if isinstance(v, ast.Float):
        return v.text
    return _wrong(ctx, v, what, "a CPU quantity (e.g. 250m, 1)")


def _memory(ctx, v, what):
    if isinstance(v, ast.Quantity):
        try:
            parse_memory(v.text)
            return v.text
        except UnitError as exc:
            ctx.error("E2009", f"{what} is a memory quantity: {exc}", v.span, "not a memory quantity")
            return _MISSING
    if isinstance(v, ast.Int):
        return str(v.value)
    return _wrong(ctx, v, what, "a memory quantity (e.g. 64Mi, 1Gi)")


def _percent(ctx, v, what):
    if isinstance(v, ast.Percent):
        number = Decimal(v.text)
        if not 0 <= number <= 100:
            ctx.error("E2010", f"{what} must be from 0% to 100%", v.span, "out of range")
            return _MISSING
        return int(number) if number == number.to_integral_value() else float(number)
    if isinstance(v, (ast.Int, ast.Float)):
        ctx.error("E2009", f"{what} is a percentage: write it with `%` (e.g. 80%)", v.span, "no % sign")
        return _MISSING
    return _wrong(ctx, v, what, "a percentage")


def _any(ctx, v, what):
    return plain(v)


_CONVERTERS = {
    "str": _str, "scalar_str": _scalar_str, "int": _int, "nonneg_int": _nonneg_int, "port": _port,
    "port_or_name": _port_or_name, "bool": _bool, "symbol": _symbol, "str_list": _str_list,
    "duration": _duration, "cpu": _cpu, "memory": _memory, "percent": _percent, "any": _any,
}


def plain(v: ast.Value) -> Any:
    """A value as plain data, for metadata and parameters where no type is imposed."""
    if isinstance(v, (ast.Str, ast.Int)):
        return v.value
    if isinstance(v, ast.Float):
        return float(v.text)
    if isinstance(v, (ast.Quantity,)):
        return v.text
    if isinstance(v, ast.Percent):
        return v.text + "%"
    if isinstance(v, ast.Symbol):
        return {"true": True, "false": False}.get(v.name, v.name)
    if isinstance(v, ast.ListValue):
        return [plain(i) for i in v.items]
    if isinstance(v, ast.MapValue):
        return {p.key: plain(p.value) for p in v.pairs}
    if isinstance(v, ast.Call):
        return {v.name: [plain(a) for a in v.args]}
    raise TypeError(v)


def entries_as_data(entries: tuple[ast.Entry, ...] | None) -> dict:
    """A generic body as nested plain data (metadata blocks)."""
    out: dict = {}
    for entry in entries or ():
        key = ".".join((entry.key,) + entry.labels)
        out[key] = plain(entry.value) if isinstance(entry, ast.Attr) else entries_as_data(entry.entries)
    return out


MISSING = _MISSING
