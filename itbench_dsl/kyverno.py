"""An offline matcher of Kyverno validation semantics, standard library only.

This module is self-contained on purpose: the `evaluator.py` of every bundle embeds its
source to grade Kyverno artefacts without a cluster, so it imports nothing from the rest
of the package. It implements what `kyverno test` needs for validate rules: match and
exclude, preconditions, `validate.pattern`, `anyPattern` and `deny`, the anchors and
value operators of patterns, a JMESPath subset for `{{ variables }}`, and autogen rules
for pod controllers. A feature it does not implement raises `Unsupported` naming it,
so that a caller can say why it cannot grade, never pass silently.

Annotations are evaluated (no `from __future__ import annotations`) so that dataclasses
work when this source is exec'd outside a module, as the generated evaluators do.

Entry points: `evaluate_policy(policy, resource, operation)` -> list of `RuleResult`, and
`run_test_suite(test_document, base_folder, load_yaml)` for Kyverno CLI test suites.
"""

import base64
import functools
import json
import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

__all__ = [
    "ExpectedResult",
    "RuleResult",
    "SuiteReport",
    "Unsupported",
    "evaluate_conditions",
    "evaluate_policy",
    "jmespath_search",
    "match_pattern",
    "run_test_suite",
    "substitute",
]

PASS, FAIL, SKIP, ERROR, WARN = "pass", "fail", "skip", "error", "warn"


class Unsupported(Exception):
    """A Kyverno feature this matcher does not implement; the message names it."""

    def __init__(self, feature: str) -> None:
        super().__init__(f"unsupported: {feature}")
        self.feature = feature


class KyvernoError(Exception):
    """A policy that Kyverno itself would report as a rule error (bad variable, bad syntax)."""


@dataclass(frozen=True)
class RuleResult:
    policy: str
    rule: str
    status: str  # pass | fail | skip | error | warn
    message: str = ""
    matched: bool = True  # False when the rule's match/exclude leaves the resource out


# ---------------------------------------------------------------------------------------
# Wildcards (`*` any run, `?` one character), as Kyverno's wildcard.Match.

_WILDCARD_CACHE: dict[str, re.Pattern] = {}


def wildcard_match(pattern: str, text: str) -> bool:
    if "*" not in pattern and "?" not in pattern:
        return pattern == text
    rx = _WILDCARD_CACHE.get(pattern)
    if rx is None:
        parts = ["." if c == "?" else ".*" if c == "*" else re.escape(c) for c in pattern]
        rx = _WILDCARD_CACHE[pattern] = re.compile("".join(parts), re.DOTALL)
    return rx.fullmatch(text) is not None


def _has_wildcard(text: str) -> bool:
    return "*" in text or "?" in text


# ---------------------------------------------------------------------------------------
# Quantities (Kubernetes resource.Quantity) and durations (Go time.ParseDuration).

_QUANTITY = re.compile(r"([+-]?(?:\d+\.?\d*|\.\d+))(?:([eE][+-]?\d+)|(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE])?)")
_SUFFIX = {
    "": 1, "n": Fraction(1, 10**9), "u": Fraction(1, 10**6), "m": Fraction(1, 1000), "k": 10**3,
    "M": 10**6, "G": 10**9, "T": 10**12, "P": 10**15, "E": 10**18, "Ki": 2**10, "Mi": 2**20,
    "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60,
}
_DURATION_PART = re.compile(r"(\d+\.?\d*|\.\d+)(ns|us|µs|μs|ms|s|m|h)")
_DURATION_UNIT = {"ns": Fraction(1, 10**9), "us": Fraction(1, 10**6), "µs": Fraction(1, 10**6),
                  "μs": Fraction(1, 10**6), "ms": Fraction(1, 1000), "s": 1, "m": 60, "h": 3600}


def parse_quantity(text: Any) -> Fraction | None:
    if isinstance(text, bool):
        return None
    if isinstance(text, (int, float)):
        return Fraction(text) if not (isinstance(text, float) and not math.isfinite(text)) else None
    if not isinstance(text, str):
        return None
    m = _QUANTITY.fullmatch(text.strip())
    if not m:
        return None
    number = Fraction(m.group(1))
    if m.group(2):
        exp = int(m.group(2)[1:])
        return number * (Fraction(10) ** exp)
    return number * _SUFFIX[m.group(3) or ""]


def parse_duration(text: Any) -> Fraction | None:
    """Seconds of a Go duration string such as `1h30m`, `-5s`, `0`; None if not one."""
    if not isinstance(text, str):
        return None
    s = text.strip()
    sign = 1
    if s[:1] in "+-" and s:
        sign = -1 if s[0] == "-" else 1
        s = s[1:]
    if s == "0":
        return Fraction(0)
    if not s:
        return None
    pos, total = 0, Fraction(0)
    for m in _DURATION_PART.finditer(s):
        if m.start() != pos:
            return None
        total += Fraction(m.group(1)) * _DURATION_UNIT[m.group(2)]
        pos = m.end()
    if pos != len(s):
        return None
    return sign * total


def _to_go_string(value: Any) -> str:
    """How Kyverno prints a scalar with fmt.Sprint / JSON."""
    if value is None:
        return "<nil>"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, (int, float, str)):
        return str(value)
    return json.dumps(value, separators=(",", ":"), sort_keys=True)


# ---------------------------------------------------------------------------------------
# JMESPath subset. Kyverno's fork reports a missing map key as "not found" (an error that
# `||` absorbs and that preconditions turn into ""); this implementation does the same.

class NotFound(Exception):
    pass


class JMESPathError(Exception):
    pass


_TOKEN_RX = re.compile(r"""
    (?P<ws>\s+)
  | (?P<number>-?\d+)
  | (?P<ident>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<quoted>"(?:\\.|[^"\\])*")
  | (?P<raw>'(?:\\.|[^'\\])*')
  | (?P<literal>`(?:\\.|[^`\\])*`)
  | (?P<op>\[\?|\[\]|\|\||&&|==|!=|<=|>=|[.\[\]*@|(),:{}<>!&])
""", re.VERBOSE)

_BP = {"eof": 0, "|": 1, "||": 2, "&&": 3, "==": 5, "!=": 5, "<": 5, "<=": 5, ">": 5, ">=": 5,
       "[]": 9, "*": 20, "[?": 21, ".": 40, "!": 45, "{": 50, "[": 55, "(": 60}


def _tokenize(expr: str) -> list[tuple[str, Any]]:
    tokens: list[tuple[str, Any]] = []
    pos = 0
    while pos < len(expr):
        m = _TOKEN_RX.match(expr, pos)
        if not m:
            raise JMESPathError(f"unexpected character {expr[pos]!r} at {pos} in {expr!r}")
        pos = m.end()
        kind = m.lastgroup
        text = m.group()
        if kind == "ws":
            continue
        if kind == "number":
            tokens.append(("number", int(text)))
        elif kind == "ident":
            tokens.append(("ident", text))
        elif kind == "quoted":
            tokens.append(("ident", json.loads(text)))
        elif kind == "raw":
            tokens.append(("literal", text[1:-1].replace("\\'", "'")))
        elif kind == "literal":
            body = text[1:-1].replace("\\`", "`").strip()
            try:
                tokens.append(("literal", json.loads(body)))
            except ValueError:
                tokens.append(("literal", body))  # legacy: bare string inside backticks
        else:
            tokens.append((text, None))
    tokens.append(("eof", None))
    return tokens


class _Parser:
    def __init__(self, expr: str) -> None:
        self.expr = expr
        self.tokens = _tokenize(expr)
        self.i = 0

    def peek(self, k: int = 0) -> str:
        return self.tokens[self.i + k][0]

    def next(self) -> tuple[str, Any]:
        tok = self.tokens[self.i]
        self.i += 1
        return tok

    def expect(self, kind: str) -> Any:
        tok = self.next()
        if tok[0] != kind:
            raise JMESPathError(f"expected {kind!r}, found {tok[0]!r} in {self.expr!r}")
        return tok[1]

    def parse(self) -> tuple:
        node = self.expression(0)
        if self.peek() != "eof":
            raise JMESPathError(f"unexpected {self.peek()!r} in {self.expr!r}")
        return node

    def expression(self, bp: int) -> tuple:
        kind, value = self.next()
        left = self.nud(kind, value)
        while bp < _BP.get(self.peek(), 0):
            kind, value = self.next()
            left = self.led(kind, left)
        return left

    def nud(self, kind: str, value: Any) -> tuple:
        if kind == "literal":
            return ("literal", value)
        if kind == "ident":
            return ("field", value)
        if kind == "@":
            return ("current",)
        if kind == "*":
            return ("vproject", ("current",), self.projection_rhs(_BP["*"]))
        if kind == "[?":
            return self.filter(("current",))
        if kind == "[]":
            return ("project", ("flatten", ("current",)), self.projection_rhs(_BP["[]"]))
        if kind == "!":
            return ("not", self.expression(_BP["!"]))
        if kind == "(":
            node = self.expression(0)
            self.expect(")")
            return node
        if kind == "{":
            return self.multi_hash()
        if kind == "&":
            return ("expref", self.expression(0))
        if kind == "[":
            if self.peek() in ("number", ":"):
                return self.index(("current",))
            if self.peek() == "*" and self.peek(1) == "]":
                self.next(), self.next()
                return ("project", ("current",), self.projection_rhs(_BP["*"]))
            return self.multi_list()
        raise JMESPathError(f"unexpected {kind!r} in {self.expr!r}")

    def led(self, kind: str, left: tuple) -> tuple:
        if kind == ".":
            if self.peek() == "*":
                self.next()
                return ("vproject", left, self.projection_rhs(_BP["*"]))
            return ("sub", left, self.dot_rhs(_BP["."]))
        if kind == "|":
            return ("pipe", left, self.expression(_BP["|"]))
        if kind in ("||", "&&"):
            return ("or" if kind == "||" else "and", left, self.expression(_BP[kind]))
        if kind in ("==", "!=", "<", "<=", ">", ">="):
            return ("cmp", kind, left, self.expression(_BP[kind]))
        if kind == "[]":
            return ("project", ("flatten", left), self.projection_rhs(_BP["[]"]))
        if kind == "[?":
            return self.filter(left)
        if kind == "(":
            if left[0] != "field":
                raise JMESPathError(f"invalid function call in {self.expr!r}")
            args = []
            while self.peek() != ")":
                args.append(self.expression(0))
                if self.peek() == ",":
                    self.next()
            self.next()
            return ("call", left[1], args)
        if kind == "[":
            if self.peek() in ("number", ":"):
                return self.index(left)
            self.expect("*")
            self.expect("]")
            return ("project", left, self.projection_rhs(_BP["*"]))
        raise JMESPathError(f"unexpected {kind!r} in {self.expr!r}")

    def index(self, left: tuple) -> tuple:
        parts: list[int | None] = [None, None, None]
        n = 0
        while self.peek() != "]":
            if self.peek() == ":":
                self.next()
                n += 1
                if n > 2:
                    raise JMESPathError(f"bad slice in {self.expr!r}")
            else:
                parts[n] = self.expect("number")
        self.next()
        if n == 0:
            return ("index", left, parts[0])
        return ("project", ("slice", left, parts[0], parts[1], parts[2]), self.projection_rhs(_BP["*"]))

    def filter(self, left: tuple) -> tuple:
        cond = self.expression(0)
        self.expect("]")
        return ("filter", left, cond, self.projection_rhs(_BP["[?"]))

    def projection_rhs(self, bp: int) -> tuple:
        nxt = self.peek()
        if _BP.get(nxt, 0) < 10:
            return ("current",)
        if nxt in ("[", "[?", "[]"):
            return self.expression(bp)
        if nxt == ".":
            self.next()
            return self.dot_rhs(bp)
        raise JMESPathError(f"unexpected {nxt!r} after a projection in {self.expr!r}")

    def dot_rhs(self, bp: int) -> tuple:
        nxt = self.peek()
        if nxt in ("ident", "*", "@"):
            return self.expression(bp)
        if nxt == "[":
            self.next()
            return self.multi_list()
        if nxt == "{":
            self.next()
            return self.multi_hash()
        raise JMESPathError(f"unexpected {nxt!r} after '.' in {self.expr!r}")

    def multi_list(self) -> tuple:
        items = []
        while True:
            items.append(self.expression(0))
            if self.peek() == ",":
                self.next()
                continue
            self.expect("]")
            return ("mlist", items)

    def multi_hash(self) -> tuple:
        pairs = []
        while True:
            key = self.expect("ident")
            self.expect(":")
            pairs.append((key, self.expression(0)))
            if self.peek() == ",":
                self.next()
                continue
            self.expect("}")
            return ("mhash", pairs)


_AST_CACHE: dict[str, tuple] = {}


def compile_jmespath(expr: str) -> tuple:
    node = _AST_CACHE.get(expr)
    if node is None:
        node = _AST_CACHE[expr] = _Parser(expr).parse()
    return node


def jmespath_search(expr: str, data: Any) -> Any:
    """Evaluate `expr`; raises NotFound for a missing key outside projections."""
    return _eval(compile_jmespath(expr), data)


def _truthy(v: Any) -> bool:
    return not (v is None or v is False or v == "" or v == [] or v == {})


def _soft(node: tuple, data: Any) -> Any:
    try:
        return _eval(node, data)
    except NotFound:
        return None


def _eq(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    return a == b


def _eval(node: tuple, data: Any) -> Any:
    kind = node[0]
    if kind == "field":
        if isinstance(data, dict):
            if node[1] in data:
                return data[node[1]]
            raise NotFound(node[1])
        return None
    if kind == "sub":
        left = _eval(node[1], data)
        return _eval(node[2], left)
    if kind == "current":
        return data
    if kind == "literal":
        return node[1]
    if kind == "index":
        left = _eval(node[1], data)
        if isinstance(left, list):
            try:
                return left[node[2]]
            except IndexError:
                return None
        return None
    if kind == "slice":
        left = _soft(node[1], data)
        if not isinstance(left, list):
            return None
        return left[slice(node[2], node[3], node[4])]
    if kind == "flatten":
        # a projection over a missing key is null, not "not found" (Kyverno's fork)
        left = _soft(node[1], data)
        if not isinstance(left, list):
            return None
        out = []
        for item in left:
            out.extend(item) if isinstance(item, list) else out.append(item)
        return out
    if kind in ("project", "vproject", "filter"):
        left = _soft(node[1], data)
        if kind == "vproject":
            if not isinstance(left, dict):
                return None
            items = list(left.values())
        else:
            if not isinstance(left, list):
                return None
            items = left
        if kind == "filter":
            items = [x for x in items if _truthy(_soft(node[2], x))]
            rhs = node[3]
        else:
            rhs = node[2]
        out = []
        for item in items:
            v = _soft(rhs, item)
            if v is not None:
                out.append(v)
        return out
    if kind == "pipe":
        return _eval(node[2], _eval(node[1], data))
    if kind == "or":
        left = _soft(node[1], data)
        return left if _truthy(left) else _eval(node[2], data)
    if kind == "and":
        left = _soft(node[1], data)
        return _eval(node[2], data) if _truthy(left) else left
    if kind == "not":
        return not _truthy(_soft(node[1], data))
    if kind == "cmp":
        a, b = _soft(node[2], data), _soft(node[3], data)
        op = node[1]
        if op == "==":
            return _eq(a, b)
        if op == "!=":
            return not _eq(a, b)
        if not (isinstance(a, (int, float)) and isinstance(b, (int, float))) or \
                isinstance(a, bool) or isinstance(b, bool):
            return None
        return {"<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b}[op]
    if kind == "mlist":
        if data is None:
            return None
        return [_soft(n, data) for n in node[1]]
    if kind == "mhash":
        if data is None:
            return None
        return {k: _soft(n, data) for k, n in node[1]}
    if kind == "expref":
        return ("expref", node[1])
    if kind == "call":
        fn = _FUNCTIONS.get(node[1])
        if fn is None:
            raise Unsupported(f"JMESPath function {node[1]}()")
        args = [_eval(a, data) if a[0] != "expref" else ("expref", a[1]) for a in node[2]]
        return fn(*args)
    raise Unsupported(f"JMESPath expression {kind}")


def _type(v: Any) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, (int, float)):
        return "number"
    if isinstance(v, str):
        return "string"
    if isinstance(v, list):
        return "array"
    if isinstance(v, dict):
        return "object"
    return "expref"


def _need(v: Any, *types: str) -> Any:
    if _type(v) not in types:
        raise JMESPathError(f"invalid type {_type(v)}, expected {'/'.join(types)}")
    return v


def _to_string(v: Any) -> str:
    return v if isinstance(v, str) else json.dumps(v, separators=(",", ":"))


def _to_number(v: Any) -> Any:
    if isinstance(v, bool):
        return None
    if isinstance(v, (int, float)):
        return v
    if isinstance(v, str):
        try:
            return int(v)
        except ValueError:
            try:
                return float(v)
            except ValueError:
                return None
    return None


def _num(v: Any) -> Any:
    if isinstance(v, str):
        q = parse_quantity(v)
        if q is None:
            raise JMESPathError(f"not a number: {v!r}")
        return q
    return _need(v, "number")


def _arith(op: Callable[[Any, Any], Any]) -> Callable[[Any, Any], Any]:
    def fn(a: Any, b: Any) -> Any:
        r = op(Fraction(_num(a)), Fraction(_num(b)))
        return int(r) if r.denominator == 1 else float(r)
    return fn


def _go_replacement(template: str) -> str:
    """Go's `${1}` / `$1` replacement syntax as Python's `\\g<1>`."""
    out = template.replace("\\", "\\\\")
    return re.sub(r"\$\{?(\w+)\}?", lambda m: f"\\g<{m.group(1)}>", out)


def _by(fn: Callable, items: Any, ref: Any) -> Any:
    _need(items, "array")
    if not (isinstance(ref, tuple) and ref[0] == "expref"):
        raise JMESPathError("expected an expression reference (&expr)")
    return fn(items, key=lambda x: _eval(ref[1], x)) if items else None


_FUNCTIONS: dict[str, Callable[..., Any]] = {
    "length": lambda v: len(_need(v, "string", "array", "object")),
    "keys": lambda v: list(_need(v, "object").keys()),
    "values": lambda v: list(_need(v, "object").values()),
    "contains": lambda s, x: (x in s) if isinstance(_need(s, "string", "array"), list)
    else (isinstance(x, str) and x in s),
    "starts_with": lambda s, p: _need(s, "string").startswith(_need(p, "string")),
    "ends_with": lambda s, p: _need(s, "string").endswith(_need(p, "string")),
    "to_string": _to_string,
    "to_number": _to_number,
    "to_array": lambda v: v if isinstance(v, list) else [v],
    "type": _type,
    "not_null": lambda *a: next((x for x in a if x is not None), None),
    "join": lambda sep, xs: _need(sep, "string").join(_need(x, "string") for x in _need(xs, "array")),
    "merge": lambda *objs: {k: v for o in objs for k, v in _need(o, "object").items()},
    "max": lambda xs: max(_need(xs, "array")) if xs else None,
    "min": lambda xs: min(_need(xs, "array")) if xs else None,
    "sum": lambda xs: sum(_need(xs, "array")),
    "avg": lambda xs: (sum(xs) / len(xs)) if _need(xs, "array") else None,
    "abs": lambda x: abs(_need(x, "number")),
    "ceil": lambda x: math.ceil(_need(x, "number")),
    "floor": lambda x: math.floor(_need(x, "number")),
    "reverse": lambda v: _need(v, "string", "array")[::-1],
    "sort": lambda xs: sorted(_need(xs, "array")),
    "sort_by": lambda xs, ref: sorted(_need(xs, "array"), key=lambda x: _eval(ref[1], x)),
    "max_by": lambda xs, ref: _by(max, xs, ref),
    "min_by": lambda xs, ref: _by(min, xs, ref),
    "map": lambda ref, xs: [_soft(ref[1], x) for x in _need(xs, "array")],
    # Kyverno's own functions.
    "regex_match": lambda rx, s: re.search(_need(rx, "string"), _to_go_string(s)) is not None,
    "pattern_match": lambda p, s: wildcard_match(_need(p, "string"), _to_go_string(s)),
    "regex_replace_all": lambda rx, s, new: re.sub(_need(rx, "string"), _go_replacement(_to_go_string(new)),
                                                   _to_go_string(s)),
    "regex_replace_all_literal": lambda rx, s, new: re.sub(_need(rx, "string"), lambda _m: _to_go_string(new),
                                                           _to_go_string(s)),
    "split": lambda s, sep: _need(s, "string").split(_need(sep, "string")),
    "to_upper": lambda s: _need(s, "string").upper(),
    "to_lower": lambda s: _need(s, "string").lower(),
    "trim": lambda s, cut: _need(s, "string").strip(_need(cut, "string")),
    "trim_prefix": lambda s, p: _need(s, "string").removeprefix(_need(p, "string")),
    "replace_all": lambda s, old, new: _need(s, "string").replace(old, new),
    "replace": lambda s, old, new, n: _need(s, "string").replace(old, new, int(n)),
    "truncate": lambda s, n: _need(s, "string")[: int(n)],
    "equal_fold": lambda a, b: _need(a, "string").casefold() == _need(b, "string").casefold(),
    "compare": lambda a, b: (a > b) - (a < b),
    "base64_decode": lambda s: base64.b64decode(_need(s, "string")).decode("utf-8", "replace"),
    "base64_encode": lambda s: base64.b64encode(_need(s, "string").encode()).decode(),
    "parse_json": lambda s: json.loads(_need(s, "string")),
    "label_match": lambda sel, labels: all((labels or {}).get(k) == v for k, v in _need(sel, "object").items()),
    "add": _arith(lambda a, b: a + b),
    "subtract": _arith(lambda a, b: a - b),
    "multiply": _arith(lambda a, b: a * b),
    "divide": _arith(lambda a, b: a / b),
    "modulo": _arith(lambda a, b: a % b),
}


# ---------------------------------------------------------------------------------------
# Variable substitution: `{{ expr }}`, innermost first, as Kyverno does.

_VARIABLE = re.compile(r"\{\{(?:\{[^{}]*\}|[^{}])*\}\}")


def _resolve(expr: str, ctx: dict) -> Any:
    expr = expr.strip()
    if expr == "@":
        raise Unsupported("{{@}} (the value at the pattern's own path)")
    try:
        return jmespath_search(expr, ctx)
    except JMESPathError as exc:
        raise KyvernoError(f"variable {{{{{expr}}}}}: {exc}") from exc
    except (TypeError, ValueError, re.error, ZeroDivisionError) as exc:
        raise KyvernoError(f"variable {{{{{expr}}}}}: {exc}") from exc


def substitute(value: Any, ctx: dict, soft: bool = False) -> Any:
    """Replace every `{{ expr }}` in strings of `value` (recursively).

    A string that is exactly one variable becomes the variable's value; otherwise values are
    printed into the string. A missing key raises KyvernoError, or gives "" when `soft`
    (Kyverno's rule for preconditions).
    """
    if isinstance(value, str):
        return _substitute_string(value, ctx, soft)
    if isinstance(value, list):
        return [substitute(v, ctx, soft) for v in value]
    if isinstance(value, dict):
        return {substitute(k, ctx, soft) if "{{" in k else k: substitute(v, ctx, soft) for k, v in value.items()}
    return value


def _substitute_string(text: str, ctx: dict, soft: bool) -> Any:
    if "$(" in text:
        raise Unsupported("$(...) references in patterns")
    while "{{" in text:
        m = _VARIABLE.search(text)
        if not m:
            return text
        inner = m.group()[2:-2]
        if inner.strip().startswith("-"):
            # `{{- ...}}` escapes a variable: Kyverno leaves it as text.
            raise Unsupported("escaped variables {{- }}")
        try:
            value = _resolve(inner, ctx)
        except NotFound as exc:
            if not soft:
                raise KyvernoError(f"variable {{{{{inner.strip()}}}}} not found: key {exc} is missing") from exc
            value = ""
        if m.start() == 0 and m.end() == len(text):
            return value
        text = text[: m.start()] + (value if isinstance(value, str) else _to_go_string(value)) + text[m.end():]
    return text


# ---------------------------------------------------------------------------------------
# Condition operators (preconditions and deny).

_RANGE = re.compile(r"^(!?)(-?\d+(?:\.\d+)?[A-Za-z]*)-(-?\d+(?:\.\d+)?[A-Za-z]*)$")


def _scalar_equal(key: Any, value: Any) -> bool:
    """Kyverno's Equals for a scalar key: durations, then quantities, then wildcards."""
    if isinstance(key, bool) or isinstance(value, bool):
        return isinstance(key, bool) and isinstance(value, bool) and key == value
    if isinstance(key, str):
        dk, dv = parse_duration(key), parse_duration(value)
        if dk is not None and dv is not None and not _plain_number(key):
            return dk == dv
        qk = parse_quantity(key)
        qv = parse_quantity(value) if isinstance(value, (str, int, float)) else None
        if qk is not None and qv is not None and not _plain_number(key) and isinstance(value, str):
            return qk == qv
        if isinstance(value, str):
            return wildcard_match(value, key)
        if isinstance(value, (int, float)) and qk is not None:
            return qk == Fraction(value)
        return False
    if isinstance(key, (int, float)):
        if isinstance(value, (int, float)):
            return key == value
        if isinstance(value, str):
            q = parse_quantity(value)
            return q is not None and q == Fraction(key)
        return False
    return False


def _plain_number(s: str) -> bool:
    return re.fullmatch(r"-?\d+(\.\d+)?", s.strip()) is not None


def _equals(key: Any, value: Any) -> bool:
    if key is None:
        return False
    if isinstance(key, (dict, list)):
        return key == value
    return _scalar_equal(key, value)


def _in_values(key: str, values: Any) -> bool | None:
    """Whether the string `key` is in `values` (wildcards both ways, numeric ranges)."""
    if isinstance(values, list):
        for v in values:
            sv = _to_go_string(v)
            if wildcard_match(sv, key) or wildcard_match(key, sv):
                return True
            if isinstance(v, str) and _in_range(key, v):
                return True
        return False
    if isinstance(values, str):
        if wildcard_match(values, key) or _in_range(key, values):
            return True
        try:
            arr = json.loads(values)
        except ValueError:
            return False
        return isinstance(arr, list) and key in [_to_go_string(a) for a in arr]
    return None  # invalid type


def _in_range(key: str, text: str) -> bool:
    """`key` within a numeric range value such as `5000-6000`."""
    m = _RANGE.match(text)
    if not m or m.group(1):
        return False
    k, lo, hi = parse_quantity(key), parse_quantity(m.group(2)), parse_quantity(m.group(3))
    return None not in (k, lo, hi) and lo <= k <= hi


def _set_op(key: Any, value: Any, quantifier: str, negate: bool) -> bool:
    if isinstance(key, (str, int, float)):
        keys = [_to_go_string(key)]
    elif isinstance(key, list):
        keys = [_to_go_string(k) for k in key]
    else:
        return False
    found = [_in_values(k, value) for k in keys]
    if any(f is None for f in found):
        return False
    hits = [(not f) if negate else f for f in found]
    if quantifier == "any":
        return any(hits)
    return all(hits)


def _comparable(v: Any) -> tuple[str, Any] | None:
    if isinstance(v, bool) or v is None:
        return None
    if isinstance(v, (int, float)):
        return ("num", Fraction(v))
    if isinstance(v, str):
        d = parse_duration(v)
        if d is not None and not _plain_number(v):
            return ("dur", d)
        q = parse_quantity(v)
        if q is not None:
            return ("num", q)
        m = re.fullmatch(r"v?(\d+)\.(\d+)\.(\d+)", v.strip())
        if m:
            return ("semver", tuple(int(x) for x in m.groups()))
    return None


def _numeric(key: Any, value: Any, op: str) -> bool:
    a, b = _comparable(key), _comparable(value)
    if a is None or b is None:
        return False
    if a[0] != b[0]:
        # a bare number against a duration compares seconds
        if {a[0], b[0]} == {"num", "dur"}:
            a, b = ("x", a[1]), ("x", b[1])
        else:
            return False
    x, y = a[1], b[1]
    return {">": x > y, ">=": x >= y, "<": x < y, "<=": x <= y}[op]


def _duration_op(key: Any, value: Any, op: str) -> bool:
    def secs(v: Any) -> Fraction | None:
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            return Fraction(v)
        return parse_duration(v)
    a, b = secs(key), secs(value)
    if a is None or b is None:
        return False
    return {">": a > b, ">=": a >= b, "<": a < b, "<=": a <= b}[op]


def evaluate_operator(op: str, key: Any, value: Any) -> bool:
    if op in ("Equals", "Equal"):
        return _equals(key, value)
    if op in ("NotEquals", "NotEqual"):
        return key is not None and not _equals(key, value)
    if op == "AnyIn":
        return _set_op(key, value, "any", False)
    if op in ("AllIn", "In"):
        return _set_op(key, value, "all", False)
    if op == "AnyNotIn":
        return _set_op(key, value, "any", True)
    if op in ("AllNotIn", "NotIn"):
        return _set_op(key, value, "all", True)
    numeric = {"GreaterThan": ">", "GreaterThanOrEquals": ">=", "LessThan": "<", "LessThanOrEquals": "<="}
    if op in numeric:
        return _numeric(key, value, numeric[op])
    durations = {"DurationGreaterThan": ">", "DurationGreaterThanOrEquals": ">=",
                 "DurationLessThan": "<", "DurationLessThanOrEquals": "<="}
    if op in durations:
        return _duration_op(key, value, durations[op])
    raise Unsupported(f"condition operator {op}")


def evaluate_conditions(conditions: Any, ctx: dict, soft: bool) -> tuple[bool, str]:
    """Evaluate a conditions block (a list means `all`); returns (holds, message)."""
    if conditions is None:
        return True, ""
    if isinstance(conditions, list):
        blocks = {"all": conditions}
    elif isinstance(conditions, dict):
        extra = set(conditions) - {"any", "all"}
        if extra:
            raise KyvernoError(f"unknown condition block {min(extra)!r}")
        blocks = conditions
    else:
        raise KyvernoError("conditions must be a list or an any/all block")

    def one(cond: dict) -> bool:
        if not isinstance(cond, dict) or "operator" not in cond:
            raise KyvernoError("a condition needs key, operator and value")
        key = substitute(cond.get("key"), ctx, soft)
        value = substitute(cond.get("value"), ctx, soft)
        return evaluate_operator(cond["operator"], key, value)

    messages = []
    any_block = blocks.get("any")
    if any_block:
        results = [one(c) for c in any_block]
        if not any(results):
            messages = [c.get("message", "") for c in any_block if c.get("message")]
            return False, "; ".join(messages)
    for c in blocks.get("all") or []:
        if not one(c):
            return False, c.get("message", "") if isinstance(c, dict) else ""
    return True, ""


# ---------------------------------------------------------------------------------------
# Patterns: anchors, value operators, arrays, as pkg/engine/validate.

class _PatternFail(Exception):
    """A mismatch. `kind` is plain, conditional, global or negation; the first two skip."""

    def __init__(self, path: str, msg: str, kind: str = "plain") -> None:
        super().__init__(f"{msg} at {path}")
        self.path, self.kind = path, kind

    @property
    def skip(self) -> bool:
        return self.kind in ("conditional", "global")


_ANCHOR = re.compile(r"^(\(|=\(|\^\(|X\(|<\(|\+\()(.*)\)$")


@functools.lru_cache(maxsize=4096)
def _anchor(key: str) -> tuple[str, str]:
    """(anchor kind, bare key); kind '' for a plain key."""
    m = _ANCHOR.match(key)
    if not m:
        return "", key
    return {"(": "conditional", "=(": "equality", "^(": "existence", "X(": "negation",
            "<(": "global", "+(": "add"}[m.group(1)], m.group(2)


_NESTED_MEMO: dict[int, tuple[Any, bool]] = {}


def _has_nested_anchor(value: Any) -> bool:
    # Patterns are long-lived (cached rules), so memoise by identity, checking the object.
    hit = _NESTED_MEMO.get(id(value))
    if hit is not None and hit[0] is value:
        return hit[1]
    result = _nested_anchor(value)
    if isinstance(value, (dict, list)):
        if len(_NESTED_MEMO) > 20000:
            _NESTED_MEMO.clear()
        _NESTED_MEMO[id(value)] = (value, result)
    return result


def _nested_anchor(value: Any) -> bool:
    if isinstance(value, dict):
        return any(_anchor(k)[0] or _has_nested_anchor(v) for k, v in value.items())
    if isinstance(value, list):
        return any(_has_nested_anchor(v) for v in value)
    return False


def match_pattern(resource: Any, pattern: Any) -> tuple[str, str]:
    """Match a resource against a pattern: (pass|fail|skip, message)."""
    try:
        _element(resource, pattern, "/")
    except _PatternFail as exc:
        return (SKIP if exc.skip else FAIL), str(exc)
    return PASS, ""


def _element(res: Any, pat: Any, path: str) -> None:
    if isinstance(pat, dict):
        if not isinstance(res, dict):
            raise _PatternFail(path, "expected an object")
        _map(res, pat, path)
    elif isinstance(pat, list):
        if not isinstance(res, list):
            raise _PatternFail(path, "expected a list")
        _array(res, pat, path)
    elif pat is None or isinstance(pat, (str, int, float, bool)):
        if isinstance(res, list):
            for item in res:
                if not validate_value(item, pat):
                    raise _PatternFail(path, f"value {_to_go_string(item)!r} does not match {pat!r}")
        elif not validate_value(res, pat):
            raise _PatternFail(path, f"value {_to_go_string(res)!r} does not match {pat!r}")
    else:
        raise _PatternFail(path, "pattern contains an unknown type")


def _expand_wildcard_keys(pat: dict, res: dict) -> dict:
    if not any(_has_wildcard(k) for k in pat):
        return pat
    out: dict = {}
    for key, value in pat.items():
        kind, bare = _anchor(key)
        if not _has_wildcard(bare):
            out[key] = value
            continue
        hits = [k for k in res if wildcard_match(bare, k)]
        if not hits:
            out[key] = value
        for k in hits:
            out[key.replace(bare, k) if kind else k] = value
    return out


def _map(res: dict, pat: dict, path: str) -> None:
    # Like Kyverno, wildcard keys are expanded only in metadata labels and annotations.
    if path.endswith(("/metadata/labels/", "/metadata/annotations/")):
        pat = _expand_wildcard_keys(pat, res)
    anchors, plain = [], []
    for key, value in pat.items():
        kind, bare = _anchor(key)
        if kind == "add":
            continue  # add-if-not-present is a mutate anchor; validation ignores it
        (anchors if kind in ("conditional", "global", "existence", "negation") else plain).append((kind, bare, value))
    # Conditions first (they decide skip), then negation/existence, then the rest, nested anchors first.
    order = {"conditional": 0, "global": 0, "negation": 1, "existence": 1}
    anchors.sort(key=lambda t: order[t[0]])
    if len(plain) > 1:
        plain.sort(key=lambda t: not _has_nested_anchor(t[2]))
    for kind, key, value in anchors + plain:
        sub = f"{path}{key}/"
        if kind in ("conditional", "global"):
            if key not in res:
                raise _PatternFail(sub, "conditional anchor key doesn't exist in the resource", kind)
            try:
                _element(res[key], value, sub)
            except _PatternFail as exc:
                raise _PatternFail(exc.path, f"{kind} anchor mismatch: {exc}", kind) from None
        elif kind == "negation":
            if key in res:
                raise _PatternFail(sub, f"{key} is not allowed", "negation")
        elif kind == "existence":
            if key not in res:
                continue
            items = res[key]
            if not isinstance(items, list):
                raise _PatternFail(sub, "existence anchor ^() applies only to lists")
            if not isinstance(value, list):
                raise _PatternFail(sub, "existence anchor ^() needs a list pattern")
            for p in value:
                if not isinstance(p, dict):
                    raise _PatternFail(sub, "existence anchor ^() needs a list of objects")
                if not any(_quiet(item, p, sub) for item in items):
                    raise _PatternFail(sub, "existence anchor validation failed")
        elif kind == "equality":
            if key in res:
                _element(res[key], value, sub)
        else:
            current = res.get(key)
            if value == "*":
                if current is None:
                    raise _PatternFail(sub, "field is required")
                continue
            _element(current, value, sub)


def _quiet(res: Any, pat: Any, path: str) -> bool:
    try:
        _element(res, pat, path)
        return True
    except _PatternFail:
        return False


def _array(res: list, pat: list, path: str) -> None:
    if not pat:
        raise _PatternFail(path, "empty pattern list")
    first = pat[0]
    if isinstance(first, dict):
        applied, skipped = 0, None
        for i, item in enumerate(res):
            try:
                _element(item, first, f"{path}{i}/")
            except _PatternFail as exc:
                if exc.skip:
                    skipped = exc
                    continue
                raise
            applied += 1
        if applied == 0 and skipped is not None:
            raise skipped
        return
    if len(res) < len(pat):
        raise _PatternFail(path, f"list has {len(res)} items, pattern needs {len(pat)}")
    for i, p in enumerate(pat):
        _element(res[i], p, f"{path}{i}/")


def validate_value(value: Any, pattern: Any) -> bool:
    """A scalar pattern against a resource value (pattern.Validate)."""
    if isinstance(pattern, bool):
        return isinstance(value, bool) and value == pattern
    if isinstance(pattern, int):
        if isinstance(value, bool):
            return False
        if isinstance(value, int):
            return value == pattern
        if isinstance(value, float):
            return value.is_integer() and int(value) == pattern
        if isinstance(value, str):
            try:
                return int(value, 10) == pattern
            except ValueError:
                return False
        return False
    if isinstance(pattern, float):
        if isinstance(value, bool):
            return False
        if isinstance(value, (int, float)):
            return float(value) == pattern
        if isinstance(value, str):
            try:
                return float(value) == pattern
            except ValueError:
                return False
        return False
    if pattern is None:
        if isinstance(value, bool):
            return not value
        if isinstance(value, (int, float)):
            return value == 0
        if isinstance(value, str):
            return value == ""
        return value is None
    if isinstance(pattern, dict):
        return isinstance(value, dict)
    if isinstance(pattern, str):
        if value == pattern:
            return True
        return any(
            all(_string_pattern(value, c.strip()) for c in alt.strip().split("&"))
            for alt in pattern.split("|")
        )
    return False


def _string_pattern(value: Any, pattern: str) -> bool:
    m = _RANGE.match(pattern)
    if m:
        lo, hi = m.group(2), m.group(3)
        if m.group(1):
            return _string_pattern(value, f"< {lo}") or _string_pattern(value, f"> {hi}")
        return _string_pattern(value, f">= {lo}") and _string_pattern(value, f"<= {hi}")
    op = ""
    for candidate in (">=", "<=", ">", "<", "!"):
        if len(pattern) >= 2 and pattern.startswith(candidate):
            op = candidate
            break
    operand = pattern[len(op):].strip()
    return _compare_duration(value, operand, op) or _compare_quantity(value, operand, op) or \
        _compare_string(value, operand, op)


def _ordered(a: Any, b: Any, op: str) -> bool:
    return {"": a == b, "!": a != b, ">": a > b, "<": a < b, ">=": a >= b, "<=": a <= b}[op]


def _compare_duration(value: Any, pattern: str, op: str) -> bool:
    if not isinstance(value, str):
        return False
    a, b = parse_duration(value), parse_duration(pattern)
    return a is not None and b is not None and _ordered(a, b, op)


def _compare_quantity(value: Any, pattern: str, op: str) -> bool:
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        return False
    a, b = parse_quantity(value), parse_quantity(pattern)
    return a is not None and b is not None and _ordered(a, b, op)


def _compare_string(value: Any, pattern: str, op: str) -> bool:
    if op not in ("", "!") or value is None or isinstance(value, (dict, list)):
        return False
    matched = wildcard_match(pattern, _to_go_string(value))
    return matched if op == "" else not matched


# ---------------------------------------------------------------------------------------
# Match and exclude.

def _split_kind(selector: str) -> tuple[str, str, str, str]:
    """(group, version, kind, subresource) of a kinds entry; '*' where unspecified."""
    parts = selector.split("/")
    sub = ""
    if len(parts) > 1 and parts[-1][:1].islower() and not parts[-2][:1].islower() and parts[-2] != "*":
        sub = parts.pop()
    if len(parts) == 1:
        return "*", "*", parts[0], sub
    if len(parts) == 2:
        if "." in parts[0]:
            return parts[0], "*", parts[1], sub
        return "*", parts[0], parts[1], sub  # Version/Kind: any group
    return parts[0], parts[1], "/".join(parts[2:]), sub


def _kind_matches(kinds: list, resource: dict) -> bool:
    api = resource.get("apiVersion") or ""
    group, _, version = api.rpartition("/")
    kind = resource.get("kind") or ""
    for selector in kinds:
        g, v, k, sub = _split_kind(str(selector))
        if sub:
            continue  # subresources are never the object itself
        if wildcard_match(k, kind) and wildcard_match(v, version) and wildcard_match(g, group):
            return True
    return False


def _selector_matches(selector: dict, labels: dict) -> bool:
    for k, v in (selector.get("matchLabels") or {}).items():
        hits = [lk for lk in labels if wildcard_match(k, lk)]
        if not hits or not any(wildcard_match(str(v), str(labels[h])) for h in hits):
            return False
    for expr in selector.get("matchExpressions") or []:
        key, op, values = expr.get("key"), expr.get("operator"), expr.get("values") or []
        present = key in labels
        if op == "In" and not (present and labels[key] in values):
            return False
        if op == "NotIn" and present and labels[key] in values:
            return False
        if op == "Exists" and not present:
            return False
        if op == "DoesNotExist" and present:
            return False
        if op not in ("In", "NotIn", "Exists", "DoesNotExist"):
            raise Unsupported(f"label selector operator {op}")
    return True


def _filter_matches(flt: dict, resource: dict, operation: str) -> bool:
    """One ResourceFilter (resources + subjects/roles) against the resource."""
    if flt.get("subjects") or flt.get("roles") or flt.get("clusterRoles"):
        return False  # no admission user information offline: these never match
    desc = flt.get("resources") or {}
    meta = resource.get("metadata") or {}
    name = meta.get("name") or ""
    kinds = desc.get("kinds")
    if kinds and not _kind_matches(kinds, resource):
        return False
    if desc.get("name") and not wildcard_match(desc["name"], name):
        return False
    if desc.get("names") and not any(wildcard_match(n, name) for n in desc["names"]):
        return False
    namespace = name if resource.get("kind") == "Namespace" else meta.get("namespace") or ""
    if desc.get("namespaces") and not any(wildcard_match(n, namespace) for n in desc["namespaces"]):
        return False
    if desc.get("annotations"):
        ann = meta.get("annotations") or {}
        for k, v in desc["annotations"].items():
            if not any(wildcard_match(k, ak) and wildcard_match(str(v), str(av)) for ak, av in ann.items()):
                return False
    if desc.get("selector") is not None and not _selector_matches(desc["selector"], meta.get("labels") or {}):
        return False
    if desc.get("namespaceSelector") is not None:
        raise Unsupported("namespaceSelector (namespace labels are not known offline)")
    return not (desc.get("operations") and operation not in desc["operations"])


def _block_matches(block: Any, resource: dict, operation: str) -> bool | None:
    """match/exclude block; None when it is empty (no constraint)."""
    if not block:
        return None
    if block.get("any"):
        return any(_filter_matches(f, resource, operation) for f in block["any"])
    if block.get("all"):
        return all(_filter_matches(f, resource, operation) for f in block["all"])
    if block.get("resources") or block.get("subjects") or block.get("roles") or block.get("clusterRoles"):
        return _filter_matches(block, resource, operation)
    return None


# ---------------------------------------------------------------------------------------
# Autogen for pod controllers.

_POD_CONTROLLERS = ["DaemonSet", "Deployment", "Job", "StatefulSet", "ReplicaSet", "ReplicationController"]
_AUTOGEN_ANNOTATION = "pod-policies.kyverno.io/autogen-controllers"


def _descriptions(rule: dict) -> list[dict]:
    out = []
    for key in ("match", "exclude"):
        block = rule.get(key) or {}
        if block.get("resources"):
            out.append(block["resources"])
        for f in (block.get("any") or []) + (block.get("all") or []):
            out.append(f.get("resources") or {})
    return out


def _autogen_controllers(policy: dict) -> list[str]:
    ann = (policy.get("metadata") or {}).get("annotations") or {}
    requested = ann.get(_AUTOGEN_ANNOTATION)
    if requested is not None and requested.strip() == "none":
        return []
    needed = False
    for rule in policy.get("spec", {}).get("rules") or []:
        if rule.get("generate") or (rule.get("mutate") or {}).get("patchesJson6902") or rule.get("verifyImages"):
            return []
        for desc in _descriptions(rule):
            kinds = desc.get("kinds") or []
            if desc.get("name") or desc.get("names") or desc.get("selector") is not None \
                    or desc.get("annotations") is not None:
                return []
            if len(kinds) > 1 and "Pod" in kinds:
                return []
            needed = needed or "Pod" in kinds
    if not needed:
        return []
    if requested:
        return [c.strip() for c in requested.split(",") if c.strip()]
    return _POD_CONTROLLERS + ["CronJob"]


def _shift_variables(value: Any, prefix: str) -> Any:
    """Rewrite request.object.spec/metadata references to the pod template."""
    if isinstance(value, str):
        if "request.object" not in value:
            return value
        value = re.sub(r"request\.object\.spec\b", f"request.object.{prefix}.spec", value)
        value = re.sub(r"request\.object\.metadata\b", f"request.object.{prefix}.metadata", value)
        return value
    if isinstance(value, list):
        return [_shift_variables(v, prefix) for v in value]
    if isinstance(value, dict):
        return {k: _shift_variables(v, prefix) for k, v in value.items()}
    return value


def _retarget(block: Any, kinds: list[str]) -> Any:
    if not block:
        return block
    out = json.loads(json.dumps(block))
    for desc in _descriptions({"match": out}):
        if "Pod" in (desc.get("kinds") or []):
            desc["kinds"] = list(kinds)
    return out


def _autogen_rules(rule: dict, controllers: list[str]) -> list[dict]:
    match_kinds = [k for d in _descriptions({"match": rule.get("match")}) for k in (d.get("kinds") or [])]
    if "Pod" not in match_kinds:
        return []
    rules = []
    plain = [c for c in controllers if c != "CronJob"]
    variants = []
    if plain:
        variants.append((f"autogen-{rule['name']}", plain, "spec.template", ["spec", "template"]))
    if "CronJob" in controllers:
        variants.append((f"autogen-cronjob-{rule['name']}", ["CronJob"], "spec.jobTemplate.spec.template",
                         ["spec", "jobTemplate", "spec", "template"]))
    for name, kinds, prefix, nest in variants:
        new = {k: v for k, v in rule.items() if k not in ("match", "exclude", "validate", "preconditions")}
        new["name"] = name
        new["match"] = _retarget(rule.get("match"), kinds)
        if rule.get("exclude"):
            new["exclude"] = _retarget(rule.get("exclude"), kinds)
        if "preconditions" in rule:
            new["preconditions"] = _shift_variables(rule["preconditions"], prefix)
        validate = dict(rule.get("validate") or {})

        def wrap(p: Any, nest: list[str] = nest) -> Any:
            for key in reversed(nest):
                p = {key: p}
            return p
        if "pattern" in validate:
            validate["pattern"] = wrap(_shift_variables(validate["pattern"], prefix))
        if "anyPattern" in validate:
            validate["anyPattern"] = [wrap(_shift_variables(p, prefix)) for p in validate["anyPattern"]]
        if "deny" in validate:
            validate["deny"] = _shift_variables(validate["deny"], prefix)
        if "foreach" in validate:
            validate["foreach"] = _shift_variables(validate["foreach"], prefix)
        new["validate"] = validate
        rules.append(new)
    return rules


_RULES_MEMO: dict[int, tuple[dict, Any, list[dict]]] = {}


def _cached_rules(policy: dict) -> list[dict]:
    """expand_rules, memoised per policy object (by identity of the policy and its spec;
    a caller that edits a policy's rules in place should pass a new dict)."""
    spec = policy.get("spec")
    hit = _RULES_MEMO.get(id(policy))
    if hit is not None and hit[0] is policy and hit[1] is spec:
        return hit[2]
    rules = expand_rules(policy)
    if len(_RULES_MEMO) > 512:
        _RULES_MEMO.clear()
    _RULES_MEMO[id(policy)] = (policy, spec, rules)
    return rules


def expand_rules(policy: dict) -> list[dict]:
    """The policy's rules followed by the autogen rules Kyverno would add."""
    rules = list((policy.get("spec") or {}).get("rules") or [])
    controllers = _autogen_controllers(policy)
    if not controllers:
        return rules
    out = list(rules)
    for rule in rules:
        out.extend(_autogen_rules(rule, controllers))
    return out


# ---------------------------------------------------------------------------------------
# Context and rule evaluation.

def _image_info(image: str) -> dict:
    ref = image
    digest = ""
    if "@" in ref:
        ref, digest = ref.split("@", 1)
    tag = ""
    slash = ref.rfind("/")
    colon = ref.rfind(":")
    if colon > slash:
        ref, tag = ref[:colon], ref[colon + 1:]
    first, _, rest = ref.partition("/")
    if rest and ("." in first or ":" in first or first == "localhost"):
        registry, path = first, rest
    else:
        registry, path = "docker.io", ref
    if not tag and not digest:
        tag = "latest"
    info = {"registry": registry, "path": path, "name": path.rsplit("/", 1)[-1], "tag": tag,
            "digest": digest, "reference": f"{registry}/{path}" + (f":{tag}" if tag else "") + (f"@{digest}" if digest else ""),
            "referenceWithTag": f"{registry}/{path}:{tag}" if tag else ""}
    return info


def _images(resource: dict) -> dict:
    spec = resource.get("spec") or {}
    kind = resource.get("kind")
    if kind == "CronJob":
        spec = ((((spec.get("jobTemplate") or {}).get("spec") or {}).get("template") or {}).get("spec")) or {}
    elif kind != "Pod":
        spec = ((spec.get("template") or {}).get("spec")) or {}
    out: dict = {}
    for key in ("initContainers", "containers", "ephemeralContainers"):
        items = spec.get(key) or []
        if items:
            out[key] = {c.get("name", ""): _image_info(str(c.get("image", ""))) for c in items
                        if isinstance(c, dict) and c.get("image")}
    return out


def _build_context(resource: dict | None, operation: str, old: dict | None, values: dict | None,
                   user: dict | None = None) -> dict:
    obj = resource if operation != "DELETE" else None
    ctx: dict = {
        "request": {"operation": operation, "object": obj, "oldObject": old,
                    "userInfo": user or {}, "namespace": ((resource or {}).get("metadata") or {}).get("namespace")},
        "images": _images(resource or {}),
    }
    for dotted, val in (values or {}).items():
        parts = str(dotted).split(".")
        cur = ctx
        for p in parts[:-1]:
            nxt = cur.get(p)
            if not isinstance(nxt, dict):
                nxt = cur[p] = {}
            cur = nxt
        cur[parts[-1]] = val
    return ctx


_VARS_MEMO: dict[int, tuple[Any, bool]] = {}


def _has_variables(value: Any) -> bool:
    """Whether a (long-lived) pattern contains `{{` or `$(` anywhere; memoised by identity."""
    hit = _VARS_MEMO.get(id(value))
    if hit is not None and hit[0] is value:
        return hit[1]
    result = "{{" in json.dumps(value) or "$(" in json.dumps(value)
    if len(_VARS_MEMO) > 20000:
        _VARS_MEMO.clear()
    _VARS_MEMO[id(value)] = (value, result)
    return result


def _validate(validate: dict, resource: dict, ctx: dict) -> tuple[str, str]:
    for key in ("podSecurity", "cel", "manifests", "assert"):
        if validate.get(key) is not None:
            raise Unsupported(f"validate.{key}")
    message = validate.get("message") or ""
    if validate.get("foreach") is not None:
        status, detail = _foreach(validate["foreach"], resource, ctx, 0)
        return status, (detail if status == PASS else f"{message} {detail}".strip())
    if "pattern" in validate and validate["pattern"] is not None:
        pattern = substitute(validate["pattern"], ctx) if _has_variables(validate["pattern"]) \
            else validate["pattern"]
        status, detail = match_pattern(resource, pattern)
        return status, (detail if status == PASS else f"{message} {detail}".strip())
    if validate.get("anyPattern") is not None:
        patterns = substitute(validate["anyPattern"], ctx) if _has_variables(validate["anyPattern"]) \
            else validate["anyPattern"]
        if not isinstance(patterns, list):
            raise KyvernoError("anyPattern must be a list")
        statuses = []
        for p in patterns:
            status, detail = match_pattern(resource, p)
            if status == PASS:
                return PASS, ""
            statuses.append((status, detail))
        if statuses and all(s == SKIP for s, _ in statuses):
            return SKIP, "; ".join(d for _, d in statuses)
        return FAIL, f"{message} " + "; ".join(d for s, d in statuses if s == FAIL)
    if validate.get("deny") is not None:
        deny = validate["deny"] or {}
        holds, _ = evaluate_conditions(deny.get("conditions"), ctx, soft=False)
        if holds:
            return FAIL, str(substitute(message, ctx, soft=True)) if "{{" in message else message
        return PASS, ""
    raise Unsupported("a validate rule without pattern, anyPattern or deny")


def _foreach(entries: Any, resource: dict, ctx: dict, nesting: int) -> tuple[str, str]:
    """validate.foreach: every element of each list must pass; skip when none applied."""
    if not isinstance(entries, list):
        raise KyvernoError("foreach must be a list")
    applied = 0
    for entry in entries:
        expr = str(entry.get("list") or "").strip()
        if expr.startswith("{{") and expr.endswith("}}"):
            expr = expr[2:-2]
        try:
            items = _resolve(expr, ctx)
        except NotFound:
            continue  # Kyverno skips a foreach whose list cannot be evaluated
        if not isinstance(items, list):
            items = [items]
        scope = entry.get("elementScope")
        for index, element in enumerate(items):
            if element is None:
                continue
            inner = dict(ctx)
            inner.update({"element": element, "elementIndex": index,
                          f"element{nesting}": element, f"elementIndex{nesting}": index})
            scoped = isinstance(element, dict) if scope is None else bool(scope)
            if scoped and not isinstance(element, dict):
                raise KyvernoError("elementScope: true needs elements that are objects")
            target = element if scoped else resource
            _load_context(entry.get("context"), inner)
            holds, _ = evaluate_conditions(entry.get("preconditions"), inner, soft=True)
            if not holds:
                continue
            if entry.get("foreach") is not None:
                status, detail = _foreach(entry["foreach"], target, inner, nesting + 1)
            else:
                status, detail = _validate({k: entry[k] for k in ("pattern", "anyPattern", "deny") if k in entry},
                                           target, inner)
            if status == SKIP:
                continue
            if status != PASS:
                return status, f"validation failure at element {index}: {detail}".strip()
            applied += 1
    if applied == 0:
        return SKIP, "no element of the foreach lists applied"
    return PASS, ""


def _load_context(entries: Any, ctx: dict) -> None:
    """Rule `context` entries; only `variable` entries can be evaluated offline."""
    for entry in entries or []:
        name = entry.get("name")
        variable = entry.get("variable")
        if variable is None:
            kinds = [k for k in ("configMap", "apiCall", "imageRegistry", "globalReference") if k in entry]
            raise Unsupported(f"rule context entry {kinds[0] if kinds else '?'} ({name})")
        value = None
        if "value" in variable:
            value = substitute(variable["value"], ctx)
        if variable.get("jmesPath"):
            path = substitute(variable["jmesPath"], ctx)
            try:
                value = _resolve(str(path), value if "value" in variable else ctx)
            except NotFound:
                value = None
        if value is None:
            if "default" not in variable:
                raise KyvernoError(f"context variable {name!r} resolved to null and has no default")
            value = substitute(variable["default"], ctx)
        ctx[name] = value


def _context_for(resource: dict, operation: str, old_resource: dict | None, values: dict | None) -> dict:
    target = resource if operation != "DELETE" else (old_resource or resource)
    if old_resource is None and operation == "UPDATE":
        old_resource = resource  # the CLI evaluates an UPDATE against the object itself
    return _build_context(target, operation, old_resource, values)


def evaluate_rule(policy_name: str, rule: dict, resource: dict, operation: str = "CREATE",
                  old_resource: dict | None = None, values: dict | None = None,
                  namespace: str | None = None, ctx: dict | None = None) -> RuleResult:
    name = rule.get("name", "")
    target = resource if operation != "DELETE" else (old_resource or resource)
    if namespace and ((target.get("metadata") or {}).get("namespace") or "") != namespace:
        return RuleResult(policy_name, name, SKIP, "outside the Policy's namespace", matched=False)
    if rule.get("validate") is None:
        raise Unsupported(f"rule {name!r}: only validate rules are supported")
    if not _block_matches(rule.get("match"), target, operation):
        return RuleResult(policy_name, name, SKIP, "resource does not match", matched=False)
    if _block_matches(rule.get("exclude"), target, operation):
        return RuleResult(policy_name, name, SKIP, "resource is excluded", matched=False)
    if ctx is None:
        ctx = _context_for(resource, operation, old_resource, values)
    try:
        if rule.get("context"):
            ctx = dict(ctx)  # the policy's rules share one context; keep variables per rule
            _load_context(rule["context"], ctx)
        holds, _ = evaluate_conditions(rule.get("preconditions"), ctx, soft=True)
        if not holds:
            return RuleResult(policy_name, name, SKIP, "preconditions not met")
        status, message = _validate(rule["validate"], target, ctx)
    except KyvernoError as exc:
        return RuleResult(policy_name, name, ERROR, str(exc))
    return RuleResult(policy_name, name, status, message)


def evaluate_policy(policy: dict, resource: dict, operation: str = "CREATE",
                    old_resource: dict | None = None, values: dict | None = None) -> list[RuleResult]:
    """Every rule (autogen included) of a Kyverno policy against one resource.

    Raises Unsupported when the policy uses a feature this matcher does not implement.
    """
    return _evaluate(policy, resource, operation, old_resource, values, strict=True)


_UNSUPPORTED = "unsupported"


def _evaluate(policy: dict, resource: dict, operation: str, old_resource: dict | None,
              values: dict | None, strict: bool) -> list[RuleResult]:
    """evaluate_policy; when not `strict`, a rule using an unsupported feature yields a
    result with status "unsupported" (the feature as message) instead of raising."""
    if not isinstance(policy, dict) or policy.get("kind") not in ("ClusterPolicy", "Policy"):
        raise KyvernoError("not a Kyverno ClusterPolicy or Policy")
    meta = policy.get("metadata") or {}
    name = meta.get("name", "")
    namespace = meta.get("namespace") or "default" if policy["kind"] == "Policy" else None
    rules = _cached_rules(policy)
    ctx = _context_for(resource, operation, old_resource, values) if rules else None
    results = []
    for rule in rules:
        try:
            results.append(evaluate_rule(name, rule, resource, operation, old_resource, values, namespace, ctx))
        except Unsupported as exc:
            if strict:
                raise
            results.append(RuleResult(name, rule.get("name", ""), _UNSUPPORTED, exc.feature))
    if str((meta.get("annotations") or {}).get("policies.kyverno.io/scored", "")).lower() == "false":
        # an unscored policy reports its failures as warnings
        results = [RuleResult(r.policy, r.rule, WARN, r.message, r.matched) if r.status == FAIL else r
                   for r in results]
    return results


# ---------------------------------------------------------------------------------------
# Kyverno CLI test suites.

@dataclass
class ExpectedResult:
    policy: str
    rule: str
    resource: str
    kind: str
    expected: str
    actual: str = ""
    detail: str = ""

    @property
    def met(self) -> bool:
        return self.expected == self.actual


@dataclass
class SuiteReport:
    path: str
    name: str
    results: list[ExpectedResult] = field(default_factory=list)
    unsupported: str = ""
    error: str = ""

    @property
    def passed(self) -> bool:
        return not self.unsupported and not self.error and all(r.met for r in self.results)


def _documents(load_yaml: Callable[[str], list], path: str) -> list[dict]:
    out = []
    for doc in load_yaml(path):
        if isinstance(doc, dict) and doc.get("kind") == "List" and isinstance(doc.get("items"), list):
            out.extend(d for d in doc["items"] if isinstance(d, dict))
        elif isinstance(doc, dict):
            out.append(doc)
    return out


def _values_for(values_doc: dict | None, policy: str, resource: str) -> dict:
    """Per-resource variables from a Values file (global values, then policy/resource values)."""
    if not values_doc:
        return {}
    merged: dict = {}
    merged.update(values_doc.get("globalValues") or {})
    for p in values_doc.get("policies") or []:
        if p.get("name") != policy:
            continue
        for r in p.get("resources") or []:
            if r.get("name") == resource:
                merged.update(r.get("values") or {})
    return merged


def run_test_suite(test: dict, base: str, load_yaml: Callable[[str], list],
                   join: Callable[[str, str], str]) -> SuiteReport:
    """Run one kyverno-test.yaml document. `load_yaml(path)` returns its documents."""
    name = str((test.get("metadata") or {}).get("name") or test.get("name") or "")
    report = SuiteReport(path=base, name=name)
    try:
        policies: dict[str, dict] = {}
        for p in test.get("policies") or []:
            for doc in _documents(load_yaml, join(base, p)):
                if doc.get("kind") in ("ClusterPolicy", "Policy"):
                    meta = doc.get("metadata") or {}
                    key = meta.get("name", "")
                    policies[key] = doc
                    if doc["kind"] == "Policy":
                        policies[f"{meta.get('namespace') or 'default'}/{key}"] = doc
                elif doc.get("kind"):
                    raise Unsupported(f"policy kind {doc.get('kind')}")
        resources: list[dict] = []
        for r in test.get("resources") or []:
            resources.extend(_documents(load_yaml, join(base, r)))
        values_doc = None
        if test.get("variables"):
            docs = load_yaml(join(base, test["variables"]))
            values_doc = docs[0] if docs else None
            if values_doc and (values_doc.get("subresources") or values_doc.get("namespaceSelector")):
                raise Unsupported("Values subresources / namespaceSelector")
        if test.get("userinfo"):
            raise Unsupported("userinfo in a test")
        cache: dict[tuple[str, int], dict[str, RuleResult]] = {}
        for entry in test.get("results") or []:
            names = entry.get("resources") or ([entry["resource"]] if entry.get("resource") else [])
            expected = str(entry.get("result") or entry.get("status") or "")
            pname = entry.get("policy", "")
            for rname in names:
                item = ExpectedResult(pname, entry.get("rule", ""), rname, entry.get("kind", ""), expected)
                report.results.append(item)
                policy = policies.get(pname)
                if policy is None:
                    item.actual, item.detail = "not found", f"policy {pname!r} is not in the suite"
                    continue
                found = _find_resource(resources, rname, entry)
                if found is None:
                    item.actual, item.detail = "not found", f"resource {rname!r} is not in the suite"
                    continue
                idx, resource = found
                key = (pname, idx)
                if key not in cache:
                    values = _values_for(values_doc, policy["metadata"]["name"],
                                         resource.get("metadata", {}).get("name", ""))
                    operation = str(values.pop("request.operation", "CREATE"))
                    results = _evaluate(policy, resource, operation, None, values, strict=False)
                    cache[key] = {r.rule: r for r in results}
                result = _pick(cache[key], item.rule)
                if result is None:
                    item.actual, item.detail = "not found", f"rule {item.rule!r} is not in the policy (nor autogen)"
                elif result.status == _UNSUPPORTED:
                    raise Unsupported(result.message)
                else:
                    item.actual, item.detail = result.status, result.message
    except Unsupported as exc:
        report.unsupported = exc.feature
    except KyvernoError as exc:
        report.error = str(exc)
    except OSError as exc:
        report.error = f"cannot read {getattr(exc, 'filename', None) or ''}: {exc.strerror or exc}"
    return report


def _pick(results: dict[str, RuleResult], rule: str) -> RuleResult | None:
    """The result for `rule`: like `kyverno test`, a plain rule name also names its
    autogen rules, and the one that applies to the resource's kind wins."""
    candidates = [r for name, r in results.items()
                  if name == rule or name in (f"autogen-{rule}", f"autogen-cronjob-{rule}")]
    for r in candidates:
        if r.matched:
            return r
    return candidates[0] if candidates else None


def _find_resource(resources: list[dict], name: str, entry: dict) -> tuple[int, dict] | None:
    namespace = entry.get("namespace")
    if "/" in name:
        namespace, name = name.rsplit("/", 1)
        if "/" in namespace:  # namespace/kind/name is not used by suites; keep the namespace part
            namespace = namespace.split("/", 1)[0]
    kind = entry.get("kind")
    candidates = []
    for i, r in enumerate(resources):
        meta = r.get("metadata") or {}
        if meta.get("name") != name:
            continue
        if kind and r.get("kind") != kind.rsplit("/", 1)[-1]:
            continue
        if namespace and (meta.get("namespace") or "default") != namespace:
            continue
        candidates.append((i, r))
    return candidates[0] if candidates else None
