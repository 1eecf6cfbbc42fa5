"""The JMESPath subset of `{{ variables }}`, with Kyverno's own functions.

Kyverno's fork reports a missing map key as "not found" (an error that both sides of `||`, the left of
`&&`, `!`, comparisons, pipes, function arguments and multi-selects absorb into null, and that
preconditions turn into ""); this implementation does the same: `jmespath_search` raises `NotFound`
for a missing key on a bare path (a chain of fields and indexes, or the right of `&&`), `JMESPathError` for an expression it cannot parse or a function
given the wrong types, and `Unsupported` for a function it does not implement.
"""

import base64
import binascii
import json
import math
import re
from collections.abc import Callable
from fractions import Fraction
from typing import Any

from .outcomes import Unsupported
from .regex import regex_match, replace_all
from .values import _to_go_string, parse_quantity, wildcard_match


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
""", re.VERBOSE | re.ASCII)

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
        try:
            node = _Parser(expr).parse()
        except RecursionError:
            raise JMESPathError(f"the expression nests too deeply: {expr[:80]!r}") from None
        if len(_AST_CACHE) > 4096:
            _AST_CACHE.clear()
        _AST_CACHE[expr] = node
    return node


def jmespath_search(expr: str, data: Any) -> Any:
    """Evaluate `expr`; raises NotFound for a missing key outside projections."""
    try:
        return _eval(compile_jmespath(expr), data)
    except RecursionError:  # a chain of thousands of sub-expressions: the tree is evaluated recursively
        raise JMESPathError(f"the expression nests too deeply: {expr[:80]!r}") from None


# What a function given values of the wrong kind raises; each becomes a JMESPathError naming it.
_FUNCTION_ERRORS = (TypeError, ValueError, AttributeError, KeyError, IndexError, OverflowError,
                    ZeroDivisionError, re.error, binascii.Error, UnicodeError)


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
        # each side of a pipe absorbs "not found" into null (the fork's ASTPipe)
        return _soft(node[2], _soft(node[1], data))
    if kind == "or":
        # both sides of `||` absorb "not found" (the fork's ASTOrExpression); `&&` only its left
        left = _soft(node[1], data)
        return left if _truthy(left) else _soft(node[2], data)
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
        # a missing key in an argument is null (the fork's ASTFunctionExpression): not_null(a.b, `x`)
        args = [_soft(a, data) if a[0] != "expref" else ("expref", a[1]) for a in node[2]]
        try:
            return fn(*args)
        except _FUNCTION_ERRORS as exc:
            raise JMESPathError(f"{node[1]}(): {type(exc).__name__}: {exc}") from None
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


MAX_TEXT = 1_000_000  # characters of a string a function makes: nested replacements grow without end otherwise


def _replace(s: Any, old: Any, new: Any, n: int) -> str:
    text, old, new = _need(s, "string"), _need(old, "string"), _need(new, "string")
    count = (len(text) + 1 if old == "" else text.count(old)) if n < 0 else n
    if len(text) + count * max(0, len(new) - len(old)) > MAX_TEXT:
        raise ValueError(f"the result would be longer than {MAX_TEXT:,} characters")
    return text.replace(old, new, n)


def _by(fn: Callable, items: Any, ref: Any) -> Any:
    _need(items, "array")
    if not (isinstance(ref, tuple) and ref[0] == "expref"):
        raise JMESPathError("expected an expression reference (&expr)")
    return fn(items, key=lambda x: _eval(ref[1], x)) if items else None


def _lookup(obj: Any, key: Any) -> Any:
    """Kyverno's lookup(): an object's value at a string key, an array's item at an integer index (null out of
    range; pkg/engine/jmespath/functions.go, jpLookup)."""
    _need(key, "string", "number")
    if isinstance(_need(obj, "object", "array"), dict):
        return obj.get(_need(key, "string"))
    index = _need(key, "number")
    if index != int(index):
        raise JMESPathError(f"lookup(): argument #2: {index} is not an integer")
    return obj[int(index)] if 0 <= index < len(obj) else None


def _items(obj: Any, key_name: Any, value_name: Any) -> list:
    """Kyverno's items(): an object's entries, by key in sorted order, or an array's, by index, each as
    {key_name: key, value_name: value} (jpItems)."""
    key_name, value_name = _need(key_name, "string"), _need(value_name, "string")
    if isinstance(_need(obj, "object", "array"), dict):
        return [{key_name: k, value_name: obj[k]} for k in sorted(obj)]
    return [{key_name: i, value_name: v} for i, v in enumerate(obj)]


def _object_from_lists(keys: Any, values: Any) -> dict:
    """Kyverno's object_from_lists(): keys paired with values, null where the values run out
    (jpObjectFromLists; a key a number or boolean written as text)."""
    out = {}
    for i, key in enumerate(_need(keys, "array")):
        if isinstance(key, bool):
            key = "true" if key else "false"
        elif isinstance(key, (int, float)):
            key = str(int(key)) if key == int(key) else repr(key)
        elif not isinstance(key, str):
            raise JMESPathError("object_from_lists(): argument #1 must be an array of strings")
        out[key] = _need(values, "array")[i] if i < len(values) else None
    return out


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
    # Go's RE2 through a Pike machine (regex.py): bounded time, whatever pattern a policy gives
    "regex_match": lambda rx, s: regex_match(_need(rx, "string"), _to_go_string(s)),
    "pattern_match": lambda p, s: wildcard_match(_need(p, "string"), _to_go_string(s)),
    "regex_replace_all": lambda rx, s, new: replace_all(_need(rx, "string"), _to_go_string(s), _to_go_string(new)),
    "regex_replace_all_literal": lambda rx, s, new: replace_all(_need(rx, "string"), _to_go_string(s),
                                                                _to_go_string(new), literal=True),
    "split": lambda s, sep: _need(s, "string").split(_need(sep, "string")),
    "to_upper": lambda s: _need(s, "string").upper(),
    "to_lower": lambda s: _need(s, "string").lower(),
    "trim": lambda s, cut: _need(s, "string").strip(_need(cut, "string")),
    "trim_prefix": lambda s, p: _need(s, "string").removeprefix(_need(p, "string")),
    "replace_all": lambda s, old, new: _replace(s, old, new, -1),
    "replace": lambda s, old, new, n: _replace(s, old, new, int(n)),
    "truncate": lambda s, n: _need(s, "string")[: int(n)],
    "equal_fold": lambda a, b: _need(a, "string").casefold() == _need(b, "string").casefold(),
    "compare": lambda a, b: (a > b) - (a < b),
    "base64_decode": lambda s: base64.b64decode(_need(s, "string")).decode("utf-8", "replace"),
    "base64_encode": lambda s: base64.b64encode(_need(s, "string").encode()).decode(),
    "parse_json": lambda s: json.loads(_need(s, "string")),
    "lookup": _lookup,
    "items": _items,
    "object_from_lists": _object_from_lists,
    "label_match": lambda sel, labels: all((labels or {}).get(k) == v for k, v in _need(sel, "object").items()),
    "add": _arith(lambda a, b: a + b),
    "subtract": _arith(lambda a, b: a - b),
    "multiply": _arith(lambda a, b: a * b),
    "divide": _arith(lambda a, b: a / b),
    "modulo": _arith(lambda a, b: a % b),
}
