"""`validate.cel`: a subset of CEL (the Common Expression Language), as Kyverno evaluates a rule's
expressions on the resource (`object`, `oldObject`, `request`, `namespaceObject`, `variables`).

The subset: literals (integers, doubles, strings, booleans, null, lists, maps), field selection and
indexing, `has()`, `!`, `-`, `&&` and `||` (which absorb an error the other side decides, as CEL's do),
`? :`, comparisons, `in`, `+ - * / %`, `size`, `string`, `int`, `double`, the string methods
`startsWith endsWith contains matches lowerAscii upperAscii`, those of cel-go's strings extension `split
join indexOf lastIndexOf replace`, `dyn()`, and the macros `all exists exists_one map filter`. Anything else raises `Unsupported` naming it; a missing field or a type mismatch is a CEL
error, which fails the rule (as Kyverno reports it: a validating admission policy failing closed). Bounded: an expression of at most 10,000 characters, nested at most
50 deep, and at most 200,000 evaluation steps for every rule of one policy against one resource together
(`Budget`; Kyverno too stops an expression over its cost budget).
"""

from typing import Any

from .outcomes import FAIL, PASS, KyvernoError, Unsupported
from .regex import search as regex_search

MAX_EXPRESSION = 10_000
MAX_DEPTH = 50
MAX_STEPS = 200_000  # evaluation steps of one policy against one resource, all its rules' CEL together


class Budget:
    """The steps left to the CEL of one policy against one resource (`evaluate_policy` opens one): each
    rule's expressions draw on it, so that many rules cannot multiply the bound."""

    left = MAX_STEPS

    @classmethod
    def open(cls) -> None:
        cls.left = MAX_STEPS


class CelError(Exception):
    """An error value of CEL (a missing field, a type mismatch): `&&` and `||` may absorb it."""


_PUNCT = ("&&", "||", "==", "!=", "<=", ">=", "<", ">", "!", "?", ":", "+", "-", "*", "/", "%", "(", ")", "[", "]",
          "{", "}", ",", ".")


def _tokens(text: str) -> list[tuple[str, Any]]:
    out, i = [], 0
    while i < len(text):
        c = text[i]
        if c.isspace():
            i += 1
        elif c.isdigit():
            j = i
            while j < len(text) and (text[j].isalnum() or text[j] == "."):
                if text[j] == "." and not (j + 1 < len(text) and text[j + 1].isdigit()):
                    break
                j += 1
            word = text[i:j]
            try:
                value = int(word.rstrip("uU"), 0) if not any(ch in word for ch in ".eE") or word.startswith("0x") \
                    else float(word)
            except ValueError:
                raise KyvernoError(f"CEL: bad number {word!r}") from None
            out.append(("lit", value))
            i = j
        elif c.isalpha() or c == "_":
            j = i
            while j < len(text) and (text[j].isalnum() or text[j] == "_"):
                j += 1
            word = text[i:j]
            if word in ("true", "false"):
                out.append(("lit", word == "true"))
            elif word == "null":
                out.append(("lit", None))
            elif word == "in":
                out.append(("op", "in"))
            elif word in ("r", "R", "b", "B") and j < len(text) and text[j] in "'\"":
                if word in ("b", "B"):
                    raise Unsupported("CEL bytes literals")
                quote, k = text[j], j + 1
                end = text.find(quote, k)
                if end < 0:
                    raise KyvernoError("CEL: unterminated string")
                out.append(("lit", text[k:end]))
                j = end + 1
            else:
                out.append(("id", word))
            i = j
        elif c in "'\"":
            if text.startswith(c * 3, i):
                raise Unsupported("CEL triple-quoted strings")
            j, chars = i + 1, []
            while j < len(text) and text[j] != c:
                if text[j] == "\\" and j + 1 < len(text):
                    esc = text[j + 1]
                    mapped = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", "'": "'", '"': '"', "?": "?"}.get(esc)
                    if mapped is None:
                        raise Unsupported(f"the CEL string escape \\{esc}")
                    chars.append(mapped)
                    j += 2
                else:
                    chars.append(text[j])
                    j += 1
            if j >= len(text):
                raise KyvernoError("CEL: unterminated string")
            out.append(("lit", "".join(chars)))
            i = j + 1
        else:
            op = next((p for p in _PUNCT if text.startswith(p, i)), None)
            if op is None:
                raise KyvernoError(f"CEL: unexpected character {c!r}")
            out.append(("op", op))
            i += len(op)
    out.append(("end", None))
    return out


class _Parser:
    def __init__(self, text: str) -> None:
        if len(text) > MAX_EXPRESSION:
            raise KyvernoError(f"CEL: an expression longer than {MAX_EXPRESSION} characters")
        self.tokens, self.pos, self.depth = _tokens(text), 0, 0

    def peek(self, kind: str, value: Any = None) -> bool:
        tok = self.tokens[self.pos]
        return tok[0] == kind and (value is None or tok[1] == value)

    def take(self, kind: str, value: Any = None) -> Any:
        if not self.peek(kind, value):
            raise KyvernoError(f"CEL: expected {value or kind}, found {self.tokens[self.pos][1]!r}")
        self.pos += 1
        return self.tokens[self.pos - 1][1]

    def expr(self) -> tuple:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise KyvernoError(f"CEL: an expression nested more than {MAX_DEPTH} deep")
        node = self.binary(0)
        if self.peek("op", "?"):
            self.pos += 1
            then = self.expr()
            self.take("op", ":")
            node = ("?", node, then, self.expr())
        self.depth -= 1
        return node

    _LEVELS = (("||",), ("&&",), ("==", "!=", "<", "<=", ">", ">=", "in"), ("+", "-"), ("*", "/", "%"))

    def binary(self, level: int) -> tuple:
        if level == len(self._LEVELS):
            return self.unary()
        node = self.binary(level + 1)
        while self.tokens[self.pos][0] == "op" and self.tokens[self.pos][1] in self._LEVELS[level]:
            op = self.take("op")
            node = (op, node, self.binary(level + 1))
        return node

    def unary(self) -> tuple:
        if self.peek("op", "!") or self.peek("op", "-"):
            op = self.take("op")
            self.depth += 1
            if self.depth > MAX_DEPTH:
                raise KyvernoError(f"CEL: an expression nested more than {MAX_DEPTH} deep")
            inner = self.unary()
            self.depth -= 1
            return ("not" if op == "!" else "neg", inner)
        return self.member()

    def args(self) -> list:
        items = []
        while not self.peek("op", ")"):
            items.append(self.expr())
            if not self.peek("op", ")"):
                self.take("op", ",")
        self.take("op", ")")
        return items

    def member(self) -> tuple:
        node = self.primary()
        while True:
            if self.peek("op", "."):
                self.pos += 1
                if self.peek("op", "?"):  # optional field selection: `object.?spec.?x`
                    self.pos += 1
                    node = ("ofield", node, self.take("id"))
                    continue
                name = self.take("id")
                if self.peek("op", "("):
                    self.pos += 1
                    node = ("call", name, node, self.args())
                else:
                    node = ("field", node, name)
            elif self.peek("op", "["):
                self.pos += 1
                optional = self.peek("op", "?")  # optional index: `m[?'k']`, `list[?0]`
                if optional:
                    self.pos += 1
                index = self.expr()
                self.take("op", "]")
                node = ("oindex" if optional else "index", node, index)
            else:
                return node

    def primary(self) -> tuple:
        kind, value = self.tokens[self.pos]
        if kind == "lit":
            self.pos += 1
            return ("lit", value)
        if kind == "id":
            self.pos += 1
            if self.peek("op", "("):
                self.pos += 1
                return ("call", value, None, self.args())
            return ("id", value)
        if self.peek("op", "("):
            self.pos += 1
            node = self.expr()
            self.take("op", ")")
            return node
        if self.peek("op", "["):
            self.pos += 1
            items = []
            while not self.peek("op", "]"):
                items.append(self.expr())
                if not self.peek("op", "]"):
                    self.take("op", ",")
            self.take("op", "]")
            return ("list", items)
        if self.peek("op", "{"):
            self.pos += 1
            pairs = []
            while not self.peek("op", "}"):
                key = self.expr()
                self.take("op", ":")
                pairs.append((key, self.expr()))
                if not self.peek("op", "}"):
                    self.take("op", ",")
            self.take("op", "}")
            return ("map", pairs)
        raise KyvernoError(f"CEL: unexpected {value!r}")


def parse(text: str) -> tuple:
    parser = _Parser(text)
    node = parser.expr()
    if not parser.peek("end"):
        raise KyvernoError(f"CEL: unexpected {parser.tokens[parser.pos][1]!r} after the expression")
    return node


_MACROS = ("all", "exists", "exists_one", "map", "filter")


class Optional:
    """A CEL optional value (`optional.of(x)`, `optional.none()`, the result of `.?f` and `[?k]`)."""

    __slots__ = ("present", "value")

    def __init__(self, present: bool, value: Any = None) -> None:
        self.present, self.value = present, value

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Optional) and self.present == other.present and (
            not self.present or _equal(self.value, other.value))

    def __hash__(self) -> int:
        return hash(self.present)

    def __repr__(self) -> str:
        return f"optional.of({self.value!r})" if self.present else "optional.none()"


NONE = Optional(False)


def _equal(a: Any, b: Any) -> bool:
    numeric = all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in (a, b))
    return a == b and (type(a) is type(b) or numeric)


def _select(target: Any, key: Any, optional: bool) -> Any:
    """`target.key` / `target[key]`; with `optional` (`.?`, `[?]`, or a selection on an optional value, which
    CEL treats alike), an absent key or index is `optional.none()` and a present one `optional.of(value)`."""
    if isinstance(target, Optional):
        if not target.present:
            return NONE
        target, optional = target.value, True
    if isinstance(target, dict):
        if key not in target:
            if optional:
                return NONE
            raise CelError(f"no such key: {key}")
        value = target[key]
    elif isinstance(target, list) and isinstance(key, int) and not isinstance(key, bool):
        if not 0 <= key < len(target):
            if optional:
                return NONE
            raise CelError(f"index out of range: {key}")
        value = target[key]
    else:
        raise CelError(f"no such overload for selecting {key!r} on {type(target).__name__}")
    return Optional(True, value) if optional else value


# the methods of cel-go's strings extension (ext.Strings, which Kubernetes' and Kyverno's CEL environments load)
_STRINGS_EXTENSION = ("split", "join", "indexOf", "lastIndexOf", "replace")
_NO_OVERLOAD = object()


def _typed(values: list, *types: type) -> bool:
    """`values` are of `types`, in order (a CEL int is no bool)."""
    return len(values) == len(types) and all(isinstance(v, t) and not (t is int and isinstance(v, bool))
                                             for v, t in zip(values, types))


def _strings_extension(name: str, text: str, values: list) -> Any:
    """`text.name(values...)` as cel-go's strings extension computes it (indexes count code points, as its
    runes do); _NO_OVERLOAD where no overload takes these arguments."""
    if name == "split" and (_typed(values, str) or _typed(values, str, int)):
        sep, limit = values[0], (values[1] if len(values) == 2 else -1)
        if limit == 0:
            return []
        parts = list(text) if sep == "" else text.split(sep)  # Go's strings.Split: "" splits each character
        return parts if limit < 0 or len(parts) <= limit else parts[:limit - 1] + [sep.join(parts[limit - 1:])]
    if name in ("indexOf", "lastIndexOf") and (_typed(values, str) or _typed(values, str, int)):
        sub = values[0]
        if len(values) == 2 and not 0 <= values[1] <= len(text):
            raise CelError(f"index out of range: {values[1]}")
        if name == "indexOf":
            return text.find(sub, values[1] if len(values) == 2 else 0)
        return text.rfind(sub, 0, values[1] + len(sub) if len(values) == 2 else len(text))
    if name == "replace" and (_typed(values, str, str) or _typed(values, str, str, int)):
        return text.replace(values[0], values[1], values[2] if len(values) == 3 else -1)
    return _NO_OVERLOAD


class _Eval:
    def __init__(self, env: dict) -> None:
        self.env, self.steps = env, 0

    def run(self, node: tuple, scope: dict) -> Any:
        self.steps += 1
        Budget.left -= 1
        if Budget.left < 0:
            raise KyvernoError("CEL: the policy's expressions exceed their evaluation budget")
        kind = node[0]
        if kind == "lit":
            return node[1]
        if kind == "id":
            if node[1] in scope:
                return scope[node[1]]
            if node[1] in self.env:
                return self.env[node[1]]
            raise Unsupported(f"the CEL variable {node[1]!r}")
        if kind in ("field", "ofield"):
            target = self.run(node[1], scope)
            if kind == "field" and not isinstance(target, (dict, Optional)):
                raise CelError(f"no field {node[2]!r} on {type(target).__name__}")
            return _select(target, node[2], kind == "ofield")
        if kind in ("index", "oindex"):
            return _select(self.run(node[1], scope), self.run(node[2], scope), kind == "oindex")
        if kind == "list":
            return [self.run(n, scope) for n in node[1]]
        if kind == "map":
            return {self.run(k, scope): self.run(v, scope) for k, v in node[1]}
        if kind in ("&&", "||"):
            decisive = kind == "||"
            error = None
            for side in (node[1], node[2]):
                try:
                    value = self.run(side, scope)
                except CelError as exc:
                    error = exc
                    continue
                if not isinstance(value, bool):
                    error = CelError(f"no such overload for {kind}")
                    continue
                if value is decisive:
                    return decisive
            if error is not None:
                raise error
            return not decisive
        if kind == "?":
            condition = self.run(node[1], scope)
            if not isinstance(condition, bool):
                raise CelError("no such overload for ?:")
            return self.run(node[2] if condition else node[3], scope)
        if kind == "not":
            value = self.run(node[1], scope)
            if not isinstance(value, bool):
                raise CelError("no such overload for !")
            return not value
        if kind == "neg":
            value = self.run(node[1], scope)
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise CelError("no such overload for -")
            return -value
        if kind == "call":
            return self.call(node, scope)
        return self.binary(kind, self.run(node[1], scope), self.run(node[2], scope))

    @staticmethod
    def binary(op: str, a: Any, b: Any) -> Any:
        numeric = all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in (a, b))
        if op == "==":
            return a == b and (type(a) is type(b) or numeric)
        if op == "!=":
            return not (a == b and (type(a) is type(b) or numeric))
        if op == "in":
            if isinstance(b, (list, dict)):
                return any(x == a and (type(x) is type(a) or numeric) for x in b)
            raise CelError("no such overload for in")
        if op in ("<", "<=", ">", ">="):
            if not (numeric or (type(a) is type(b) and isinstance(a, str))):
                raise CelError(f"no such overload for {op}")
            return {"<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b}[op]
        if op == "+":
            if numeric or (type(a) is type(b) and isinstance(a, (str, list))):
                return a + b
            raise CelError("no such overload for +")
        if not numeric:
            raise CelError(f"no such overload for {op}")
        if op == "*":
            return a * b
        if b == 0:
            raise CelError("division by zero")
        if op == "/":
            return int(a / b) if isinstance(a, int) and isinstance(b, int) else a / b
        return a - b if op == "-" else (int(a - b * int(a / b)) if isinstance(a, int) and isinstance(b, int)
                                        else a % b)

    def call(self, node: tuple, scope: dict) -> Any:
        _, name, target, args = node
        if name == "has" and target is None:
            if len(args) != 1 or args[0][0] != "field":
                raise KyvernoError("CEL: has() takes one field selection")
            holder = self.run(args[0][1], scope)
            if isinstance(holder, Optional):  # has(a.?b.c): absent anywhere on the way is false
                if not holder.present:
                    return False
                holder = holder.value
            if not isinstance(holder, dict):
                raise CelError("has() on a value that is not a map")
            return args[0][2] in holder
        if target is not None and target[0] == "id" and target[1] == "optional" and "optional" not in scope \
                and "optional" not in self.env:
            values = [self.run(a, scope) for a in args]
            if name == "of" and len(values) == 1:
                return Optional(True, values[0])
            if name == "none" and not values:
                return NONE
            if name == "ofNonZeroValue" and len(values) == 1:
                zero = values[0] in (None, False, 0, 0.0, "", [], {}) and not (
                    isinstance(values[0], bool) and values[0] is True)
                return NONE if zero else Optional(True, values[0])
            raise Unsupported(f"the CEL function optional.{name}()")
        if target is not None and name in ("orValue", "hasValue", "value", "or"):
            subject = self.run(target, scope)
            if isinstance(subject, Optional):
                if name == "hasValue" and not args:
                    return subject.present
                if name == "value" and not args:
                    if not subject.present:
                        raise CelError("optional.none() dereference")
                    return subject.value
                if name == "orValue" and len(args) == 1:
                    return subject.value if subject.present else self.run(args[0], scope)
                if name == "or" and len(args) == 1:
                    if subject.present:
                        return subject
                    other = self.run(args[0], scope)
                    if not isinstance(other, Optional):
                        raise CelError("no such overload for or")
                    return other
            raise CelError(f"no such overload for {name}")
        if name in _MACROS and target is not None:
            return self.macro(name, self.run(target, scope), args, scope)
        values = [self.run(a, scope) for a in args]
        subject = self.run(target, scope) if target is not None else None
        if target is None and name == "dyn" and len(values) == 1:
            return values[0]  # a type assertion only: the value itself
        if target is None and name in ("size", "string", "int", "double", "bool") and len(values) == 1:
            subject, values = values[0], []
        if name == "size" and not values:
            if isinstance(subject, (str, list, dict)):
                return len(subject)
            raise CelError("no such overload for size")
        if name == "string" and not values:
            if isinstance(subject, bool):
                return "true" if subject else "false"
            if isinstance(subject, (str, int, float)):
                return str(subject)
            raise CelError("no such overload for string")
        if name == "int" and not values:
            try:
                return int(subject) if not isinstance(subject, bool) else _raise(CelError("no such overload for int"))
            except (TypeError, ValueError):
                raise CelError("no such overload for int") from None
        if name == "double" and not values:
            try:
                return float(subject) if not isinstance(subject, bool) else _raise(CelError("no such overload"))
            except (TypeError, ValueError):
                raise CelError("no such overload for double") from None
        if isinstance(subject, str):
            if name == "startsWith" and len(values) == 1 and isinstance(values[0], str):
                return subject.startswith(values[0])
            if name == "endsWith" and len(values) == 1 and isinstance(values[0], str):
                return subject.endswith(values[0])
            if name == "contains" and len(values) == 1 and isinstance(values[0], str):
                return values[0] in subject
            if name == "matches" and len(values) == 1 and isinstance(values[0], str):
                return regex_search(values[0], subject) is not None
            if name == "lowerAscii" and not values:
                return "".join(ch.lower() if ch.isascii() else ch for ch in subject)
            if name == "upperAscii" and not values:
                return "".join(ch.upper() if ch.isascii() else ch for ch in subject)
            strings = _strings_extension(name, subject, values)
            if strings is not _NO_OVERLOAD:
                return strings
        if isinstance(subject, list) and name == "join" and len(values) <= 1:
            if not all(isinstance(v, str) for v in subject + values):
                raise CelError("no such overload for join")
            return (values[0] if values else "").join(subject)
        if name in ("startsWith", "endsWith", "contains", "matches", "lowerAscii", "upperAscii") + _STRINGS_EXTENSION:
            raise CelError(f"no such overload for {name}")
        raise Unsupported(f"the CEL function {name}()")

    def macro(self, name: str, items: Any, args: list, scope: dict) -> Any:
        if isinstance(items, dict):
            items = list(items)
        if not isinstance(items, list):
            raise CelError(f"no such overload for {name}")
        if not args or args[0][0] != "id" or len(args) not in (2, 3) or (len(args) == 3 and name != "map"):
            raise KyvernoError(f"CEL: {name}() takes a variable and an expression")
        var = args[0][1]
        results = []
        error = None
        for item in items:
            inner = {**scope, var: item}
            try:
                if name == "map":
                    if len(args) == 3:
                        keep = self.run(args[1], inner)
                        if keep is not True:
                            continue
                    results.append(self.run(args[-1], inner))
                    continue
                value = self.run(args[1], inner)
            except CelError as exc:
                if name in ("map", "filter"):
                    raise
                error = error or exc
                continue
            if not isinstance(value, bool):
                raise CelError(f"no such overload for {name}")
            if name == "all" and value is False:
                return False
            if name == "exists" and value is True:
                return True
            if name == "filter" and value:
                results.append(item)
            if name == "exists_one" and value:
                results.append(item)
        if name == "all":
            if error:
                raise error
            return True
        if name == "exists":
            if error:
                raise error
            return False
        if name == "exists_one":
            if error:
                raise error
            return len(results) == 1
        return results


class _Variables(dict):
    """`variables.NAME`: each evaluated when first read (an unread variable's error is no error), once."""

    def __init__(self, evaluator: "_Eval", nodes: dict) -> None:
        super().__init__({name: None for name in nodes})
        self.evaluator, self.nodes, self.done = evaluator, nodes, {}

    def __getitem__(self, name: str) -> Any:
        if name not in self.done:
            self.done[name] = self.evaluator.run(self.nodes[name], {})
        return self.done[name]


def _raise(exc: Exception):
    raise exc


_PARSED: dict[str, tuple] = {}


def _parsed(text: str) -> tuple:
    hit = _PARSED.get(text)
    if hit is None:
        hit = parse(text)
        if len(_PARSED) > 1024:
            _PARSED.clear()
        _PARSED[text] = hit
    return hit


def _environment(cel: dict, resource: dict, ctx: dict) -> "_Eval":
    request = ctx.get("request") or {}
    meta = resource.get("metadata") if isinstance(resource.get("metadata"), dict) else {}
    namespace = meta.get("namespace")
    env = {"object": resource, "oldObject": request.get("oldObject"),
           "request": {"operation": request.get("operation"), "namespace": namespace,
                       "name": meta.get("name"), "userInfo": request.get("userInfo") or {}},
           "namespaceObject": {"metadata": {"name": namespace}} if namespace else None}
    evaluator = _Eval(env)
    env["variables"] = _Variables(evaluator, {str(v["name"]): _parsed(str(v["expression"]))
                                              for v in cel.get("variables") or [] if isinstance(v, dict)})
    return evaluator


def matched(conditions: list, variables: list, resource: dict, ctx: dict) -> Any:
    """A ValidatingPolicy's matchConditions: True when every one holds, False when one does not, else the
    error (a string) of the first in error (a false condition decides first, as the API server's do)."""
    evaluator = _environment({"variables": variables}, resource, ctx)
    error = None
    try:
        for entry in conditions if isinstance(conditions, list) else []:
            expression = str((entry or {}).get("expression", "")) if isinstance(entry, dict) else ""
            try:
                value = evaluator.run(_parsed(expression), {})
            except CelError as exc:
                error = error or f"matchCondition {expression[:80]!r} resulted in error: {exc}"
                continue
            if value is False:
                return False
            if value is not True:
                error = error or f"matchCondition {expression[:80]!r} is not a boolean"
    except RecursionError:
        raise KyvernoError("CEL: the expression nests too deeply") from None
    return error or True


def validate(cel: dict, resource: dict, ctx: dict, message: str = "") -> tuple[str, str]:
    """A rule's `validate.cel` against `resource`: pass when every expression holds, fail naming the first
    that does not; a CEL error is the rule's `error`."""
    if cel.get("paramKind") or cel.get("paramRef"):
        raise Unsupported("CEL parameters (validate.cel.paramKind, paramRef)")
    evaluator = _environment(cel, resource, ctx)
    try:
        for entry in cel.get("expressions") or []:
            expression = str(entry.get("expression", ""))
            tree = _parsed(expression)
            try:
                value = evaluator.run(tree, {})
            except CelError as exc:  # as a ValidatingAdmissionPolicy whose failure policy is Fail: a violation
                return FAIL, f"expression {expression[:80]!r} resulted in error: {exc}"
            if value is not True:
                if value is not False:
                    return FAIL, f"expression {expression[:80]!r} is not a boolean"
                said = entry.get("message") or message or f"failed expression: {expression}"
                return FAIL, str(said)
    except RecursionError:
        raise KyvernoError("CEL: the expression nests too deeply") from None
    return PASS, ""
