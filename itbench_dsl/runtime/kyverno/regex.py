"""Regular expressions as Kyverno's Go code runs them (RE2: no backtracking), in bounded time.

Python's `re` backtracks: a policy's `regex_match("(a+)+$", ...)` can take longer than the universe on a
subject of forty characters. This module reads the pattern (RE2's syntax translated where Python's differs, `_translate`) with
Python's own parser and runs it on a Pike
virtual machine (Thompson's construction with capture slots, leftmost-first as Go's regexp), whose time is
the subject's length times the program's size, whatever the pattern. What RE2 does not have (back
references, lookaround, atomic groups, possessive repeats) raises `Unsupported`, as do a pattern, a
subject or a program larger than the bounds below: a check the matcher cannot evaluate is never a pass.
Classes are ASCII, as Go's `\\d`, `\\w`, `\\s` and `\\b`; `$` without `(?m)` is the end of the text.
"""

from typing import Any

from .outcomes import NOT_SUPPORTED, Unsupported

try:  # Python 3.11 names the parser re._parser; earlier versions sre_parse
    from re import _constants as _C
    from re import _parser as _P
except ImportError:  # pragma: no cover - Python < 3.11
    import sre_constants as _C  # type: ignore[no-redef]
    import sre_parse as _P  # type: ignore[no-redef]

MAX_PATTERN = 2000  # characters of a pattern
MAX_SUBJECT = 100_000  # characters of a subject
MAX_PROGRAM = 5000  # instructions of a compiled pattern (counted repeats are unrolled)
MAX_WORK = 4_000_000  # subject characters times program instructions, per search

_WORD = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")
_DIGIT = frozenset("0123456789")
_SPACE = frozenset(" \t\n\r\f\v")
_CATEGORIES = {
    _C.CATEGORY_DIGIT: lambda c: c in _DIGIT, _C.CATEGORY_NOT_DIGIT: lambda c: c not in _DIGIT,
    _C.CATEGORY_WORD: lambda c: c in _WORD, _C.CATEGORY_NOT_WORD: lambda c: c not in _WORD,
    _C.CATEGORY_SPACE: lambda c: c in _SPACE, _C.CATEGORY_NOT_SPACE: lambda c: c not in _SPACE,
}


# RE2's syntax where Python's parser reads it otherwise (regexp/syntax): POSIX classes inside a bracket
# (`[[:alnum:]]`, `[[:^digit:]]`), Unicode classes (`\\pL`, `\\p{Lu}`, `\\PN`), `\\z` (end of text), `\\x{...}`,
# `\\Q...\\E` (quoted text); escapes RE2 refuses (`\\Z`, `\\u`, `\\U`, `\\N`) are errors, as Go's
# regexp.Compile returns. A POSIX or Unicode class is read as a stand-in character of Unicode's private use plane
# (`_STAND_INS`) that the compiler then turns into the class's test.
_POSIX = {
    "alnum": "0-9A-Za-z", "alpha": "A-Za-z", "ascii": "\\x00-\\x7f", "blank": "\\t ", "cntrl": "\\x00-\\x1f\\x7f",
    "digit": "0-9", "graph": "!-~", "lower": "a-z", "print": " -~", "punct": "!-/:-@\\[-`{-~",
    "space": "\\t\\n\\v\\f\\r ", "upper": "A-Z", "word": "0-9A-Za-z_", "xdigit": "0-9A-Fa-f",
}
_UNICODE = ("C", "Cc", "Cf", "Co", "Cs", "L", "Ll", "Lm", "Lo", "Lt", "Lu", "M", "Mc", "Me", "Mn", "N", "Nd", "Nl",
            "No", "P", "Pc", "Pd", "Pe", "Pf", "Pi", "Po", "Ps", "S", "Sc", "Sk", "Sm", "So", "Z", "Zl", "Zp", "Zs")
_PRIVATE = 0xF0000  # Unicode's supplementary private use plane: no policy's pattern spells these
_STAND_INS: dict[int, Any] = {}


def _stand_in(key: tuple, test) -> str:
    """The stand-in character of a class (`key`: its kind, name and negation), its test recorded."""
    code = _PRIVATE + sorted(_STAND_KEYS).index(key) if key in _STAND_KEYS else None
    if code is None:
        raise ValueError(key)
    _STAND_INS[code] = test
    return chr(code)


def _posix_test(name: str, negate: bool):
    import re as _re
    compiled = _re.compile("[" + _POSIX[name] + "]")
    return lambda c: (compiled.fullmatch(c) is not None) != negate


def _unicode_test(name: str, negate: bool):
    import unicodedata
    return lambda c: unicodedata.category(c).startswith(name) != negate


_STAND_KEYS = {("posix", n, neg) for n in _POSIX for neg in (False, True)} | {
    ("unicode", n, neg) for n in _UNICODE for neg in (False, True)}


def _translate(pattern: str) -> str:
    """`pattern` (RE2 syntax) in the syntax Python's parser reads as RE2 means it (see `_POSIX` above)."""
    import re as _re

    if any(ord(c) >= _PRIVATE for c in pattern):
        raise Unsupported(f"the regular expression {pattern[:60]!r}: a private-use character is {NOT_SUPPORTED}")
    out, i, in_class = [], 0, False
    while i < len(pattern):
        c = pattern[i]
        if c == "\\" and i + 1 < len(pattern):
            e = pattern[i + 1]
            if e == "Q":  # quoted text up to \\E (or the end)
                end = pattern.find("\\E", i + 2)
                text = pattern[i + 2:] if end < 0 else pattern[i + 2:end]
                out.append("".join("\\" + ch if not ch.isalnum() else ch for ch in text))
                i = len(pattern) if end < 0 else end + 2
                continue
            if e in "pP":
                negate = e == "P"
                if pattern[i + 2:i + 3] == "{":
                    end = pattern.find("}", i + 3)
                    name = pattern[i + 3:end] if end > 0 else ""
                    step = end + 1 - i
                else:
                    name, step = pattern[i + 2:i + 3], 3
                if name.startswith("^"):
                    name, negate = name[1:], not negate
                if name == "Any":
                    out.append("[\\s\\S]" if not negate else "[^\\s\\S]")
                    i += step
                    continue
                if name not in _UNICODE:  # a script (Greek, Latin): the matcher has no script tables
                    raise Unsupported(f"the regular expression {pattern[:60]!r}: the Unicode class {name!r} is "
                                      f"{NOT_SUPPORTED}")
                out.append(_stand_in(("unicode", name, negate), _unicode_test(name, negate)))
                i += step
                continue
            if e == "z":
                out.append("\\Z")  # Python's end of text
                i += 2
                continue
            if e == "x" and pattern[i + 2:i + 3] == "{":
                end = pattern.find("}", i + 3)
                digits = pattern[i + 3:end] if end > 0 else ""
                if not digits or not all(d in "0123456789abcdefABCDEF" for d in digits) or int(digits, 16) > 0x10FFFF:
                    raise _re.error(f"invalid escape sequence: {pattern[i:end + 1]}")
                out.append("\\U%08x" % int(digits, 16))
                i = end + 1
                continue
            if e in "ZuUNg":
                raise _re.error(f"invalid escape sequence: \\{e}")
            out.append(pattern[i:i + 2])
            i += 2
            continue
        if in_class:
            if c == "[" and pattern[i + 1:i + 2] == ":":
                end = pattern.find(":]", i + 2)
                name = pattern[i + 2:end] if end > 0 else ""
                negate = name.startswith("^")
                name = name[1:] if negate else name
                if end > 0 and name in _POSIX:
                    out.append(_stand_in(("posix", name, negate), _posix_test(name, negate)))
                    i = end + 2
                    continue
                if end > 0 and all(ch.isalpha() for ch in name):
                    raise _re.error(f"invalid character class range: [:{name}:]")
            if c == "]" and not (out and out[-1] in ("[", "[^")):
                in_class = False
            elif c == "[":
                out.append("\\[")  # RE2 reads a `[` inside a class as itself
                i += 1
                continue
            out.append(c)
            i += 1
            continue
        if c == "[":
            in_class = True
            negated = pattern[i + 1:i + 2] == "^"
            out.append("[^" if negated else "[")
            i += 2 if negated else 1
            if pattern[i:i + 1] == "]":  # a `]` first in a class is a literal one
                out.append("\\]")
                i += 1
            continue
        out.append(c)
        i += 1
    return "".join(out)


class _Program:
    def __init__(self, source: str) -> None:
        self.code: list[tuple] = []
        self.groups = 1
        self.names: dict[str, int] = {}
        self.source = source


def _refuse(pattern: str, why: str) -> Unsupported:
    return Unsupported(f"the regular expression {pattern[:60]!r}: {why} is {NOT_SUPPORTED}")


def _charset(items: list, fold: bool):
    tests = []
    negate = False
    for op, arg in items:
        if op is _C.NEGATE:
            negate = True
        elif op is _C.LITERAL and arg in _STAND_INS:
            tests.append(_STAND_INS[arg])
        elif op is _C.LITERAL:
            tests.append(lambda c, ch=chr(arg): c == ch)
        elif op is _C.RANGE:
            tests.append(lambda c, lo=arg[0], hi=arg[1]: lo <= ord(c) <= hi)
        elif op is _C.CATEGORY:
            tests.append(_CATEGORIES[arg])
        else:
            raise Unsupported(f"the character class item {op}")

    def test(c: str) -> bool:
        hit = any(t(c) for t in tests) or (fold and any(t(o) for o in (c.lower(), c.upper()) if o != c for t in tests))
        return hit != negate
    return test


def _compile(program: _Program, items: Any, flags: int) -> None:
    code = program.code
    for op, arg in items:
        if len(code) > MAX_PROGRAM:
            raise _refuse(program.source, f"a program of more than {MAX_PROGRAM} steps")
        fold = bool(flags & _C.SRE_FLAG_IGNORECASE)
        if op is _C.LITERAL and arg in _STAND_INS:
            code.append(("char", _STAND_INS[arg]))
        elif op is _C.LITERAL:
            ch = chr(arg)
            code.append(("char", (lambda c, ch=ch: c.lower() == ch.lower()) if fold else (lambda c, ch=ch: c == ch)))
        elif op is _C.NOT_LITERAL:
            ch = chr(arg)
            code.append(("char", (lambda c, ch=ch: c.lower() != ch.lower()) if fold else (lambda c, ch=ch: c != ch)))
        elif op is _C.ANY:
            code.append(("char", (lambda c: True) if flags & _C.SRE_FLAG_DOTALL else (lambda c: c != "\n")))
        elif op is _C.IN:
            code.append(("char", _charset(arg, fold)))
        elif op is _C.SUBPATTERN:
            group, add, delete, body = arg
            inner = (flags | add) & ~delete
            if group is not None:
                code.append(("save", 2 * group))
            _compile(program, body, inner)
            if group is not None:
                code.append(("save", 2 * group + 1))
        elif op is _C.BRANCH:
            jumps = []
            branches = arg[1]
            for index, branch in enumerate(branches):
                if index < len(branches) - 1:
                    split = len(code)
                    code.append(None)
                    _compile(program, branch, flags)
                    jumps.append(len(code))
                    code.append(None)
                    code[split] = ("split", split + 1, len(code))
                else:
                    _compile(program, branch, flags)
            for at in jumps:
                code[at] = ("jmp", len(code))
        elif op in (_C.MAX_REPEAT, _C.MIN_REPEAT):
            low, high, body = arg
            greedy = op is _C.MAX_REPEAT
            if low > 1000 or (high is not _C.MAXREPEAT and high > 1000):
                raise _refuse(program.source, "a repeat count above 1000 (RE2's limit)")
            for _ in range(low):
                _compile(program, body, flags)
            if high is _C.MAXREPEAT:
                loop = len(code)
                code.append(None)
                _compile(program, body, flags)
                code.append(("jmp", loop))
                code[loop] = ("split", loop + 1, len(code)) if greedy else ("split", len(code), loop + 1)
            else:
                holes = []
                for _ in range(high - low):
                    holes.append(len(code))
                    code.append(None)
                    _compile(program, body, flags)
                for at in holes:
                    code[at] = ("split", at + 1, len(code)) if greedy else ("split", len(code), at + 1)
        elif op is _C.AT:
            code.append(("at", arg, bool(flags & _C.SRE_FLAG_MULTILINE)))
        elif op is _C.CATEGORY:
            code.append(("char", _CATEGORIES[arg]))
        else:
            what = {_C.GROUPREF: "a back reference", _C.GROUPREF_EXISTS: "a conditional group",
                    _C.ASSERT: "a lookaround", _C.ASSERT_NOT: "a lookaround"}.get(op, f"the construct {op}")
            raise _refuse(program.source, what + " (Go's RE2 has none)")


_PROGRAMS: dict[str, _Program] = {}


def compile_regex(pattern: str) -> _Program:
    hit = _PROGRAMS.get(pattern)
    if hit is not None:
        return hit
    if len(pattern) > MAX_PATTERN:
        raise _refuse(pattern, f"a pattern longer than {MAX_PATTERN} characters")
    try:
        parsed = _P.parse(_translate(pattern), 0)
    except RecursionError:
        raise _refuse(pattern, "a pattern nested this deeply") from None
    # re.error (a malformed pattern) propagates: the caller reports it as Kyverno does a bad regex
    program = _Program(pattern)
    state = parsed.state
    program.groups = state.groups
    program.names = dict(state.groupdict)
    flags = state.flags
    if flags & _C.SRE_FLAG_VERBOSE:
        raise _refuse(pattern, "the (?x) flag (Go's RE2 has none)")
    try:
        _compile(program, parsed, flags)
    except RecursionError:
        raise _refuse(pattern, "a pattern nested this deeply") from None
    program.code.append(("match",))
    if len(program.code) > MAX_PROGRAM:
        raise _refuse(pattern, f"a program of more than {MAX_PROGRAM} steps")
    if len(_PROGRAMS) > 512:
        _PROGRAMS.clear()
    _PROGRAMS[pattern] = program
    return program


def _at(kind: Any, multiline: bool, text: str, i: int) -> bool:
    if kind is _C.AT_BEGINNING:
        return i == 0 or (multiline and text[i - 1] == "\n")
    if kind is _C.AT_BEGINNING_STRING:
        return i == 0
    if kind is _C.AT_END:
        return i == len(text) or (multiline and text[i] == "\n")
    if kind is _C.AT_END_STRING:
        return i == len(text)
    word_before = i > 0 and text[i - 1] in _WORD
    word_after = i < len(text) and text[i] in _WORD
    if kind is _C.AT_BOUNDARY:
        return word_before != word_after
    if kind is _C.AT_NON_BOUNDARY:
        return word_before == word_after
    raise Unsupported(f"the assertion {kind}")


def search(pattern: str, text: str, start: int = 0) -> list | None:
    """The leftmost-first match of `pattern` in `text` from `start`, as Go's regexp finds it: its capture
    slots (start and end of the match, then of each group; None for a group that took no part), or None."""
    program = compile_regex(pattern)
    if len(text) > MAX_SUBJECT or (len(text) + 1) * len(program.code) > MAX_WORK:
        raise _refuse(pattern, f"a subject of {len(text)} characters for a program of {len(program.code)} steps "
                               "(beyond the matcher's bound)")
    code = program.code
    slots = 2 * program.groups
    matched = None

    def add(threads: list, seen: set, pc: int, caps: tuple, i: int) -> None:
        stack = [(pc, caps)]
        while stack:
            pc, caps = stack.pop()
            if pc in seen:
                continue
            seen.add(pc)
            inst = code[pc]
            kind = inst[0]
            if kind == "jmp":
                stack.append((inst[1], caps))
            elif kind == "split":
                stack.append((inst[2], caps))  # the second choice is explored after the first
                stack.append((inst[1], caps))
            elif kind == "save":
                if inst[1] < slots:
                    caps = caps[:inst[1]] + (i,) + caps[inst[1] + 1:]
                stack.append((pc + 1, caps))
            elif kind == "at":
                if _at(inst[1], inst[2], text, i):
                    stack.append((pc + 1, caps))
            else:
                threads.append((pc, caps))

    clist: list = []
    for i in range(start, len(text) + 1):
        if matched is None:  # a new thread starts here, after every thread that started earlier
            seen = {pc for pc, _ in clist}
            caps = (i, None) + (None,) * (slots - 2)
            add(clist, seen, 0, caps, i)
        if not clist:
            if matched is not None:
                break
            continue
        nlist: list = []
        nseen: set = set()
        for pc, caps in clist:
            inst = code[pc]
            if inst[0] == "match":
                matched = caps[:1] + (i,) + caps[2:]
                break  # the threads after this one have lower priority
            if i < len(text) and inst[1](text[i]):
                add(nlist, nseen, pc + 1, caps, i + 1)
        clist = nlist
    return list(matched) if matched is not None else None


def regex_match(pattern: str, text: str) -> bool:
    return search(pattern, text) is not None


def _expand(template: str, caps: list, text: str, program: _Program) -> str:
    """Go's Regexp.Expand: `$1`, `${1}`, `$name`, `${name}`, `$$`; an unknown group is empty."""
    out, i = [], 0
    while i < len(template):
        c = template[i]
        if c != "$" or i + 1 >= len(template):
            out.append(c)
            i += 1
            continue
        if template[i + 1] == "$":
            out.append("$")
            i += 2
            continue
        if template[i + 1] == "{":
            end = template.find("}", i + 2)
            name = template[i + 2:end] if end > 0 else ""
            if end < 0 or not name or not all(ch in _WORD for ch in name):
                out.append(c)
                i += 1
                continue
            i = end + 1
        else:
            j = i + 1
            while j < len(template) and template[j] in _WORD:
                j += 1
            name = template[i + 1:j]
            if not name:
                out.append(c)
                i += 1
                continue
            i = j
        index = int(name) if name.isdigit() else program.names.get(name)
        if index is not None and index < program.groups and caps[2 * index] is not None:
            out.append(text[caps[2 * index]:caps[2 * index + 1]])
    return "".join(out)


def replace_all(pattern: str, text: str, replacement: str, literal: bool = False) -> str:
    """Go's ReplaceAllString (or ReplaceAllLiteralString), step for step: successive matches from a search
    position that always advances, no replacement for an empty match right after another match."""
    program = compile_regex(pattern)
    out, search_pos, last_end, size = [], 0, 0, 0
    while search_pos <= len(text):
        caps = search(pattern, text, search_pos)
        if caps is None:
            break
        begin, end = caps[0], caps[1]
        out.append(text[last_end:begin])
        if end > last_end or begin == 0:
            out.append(replacement if literal else _expand(replacement, caps, text, program))
            size += len(out[-1]) + len(out[-2])
            if size > MAX_SUBJECT * 10:
                raise _refuse(pattern, f"a replacement longer than {MAX_SUBJECT * 10:,} characters")
        last_end = end
        search_pos = search_pos + 1 if search_pos + 1 > end else end
    out.append(text[last_end:])
    return "".join(out)
