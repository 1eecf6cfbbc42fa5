"""Text to AST: guards, the Lark LALR parser, and the tree-to-AST builder.

Every failure becomes a located diagnostic; nothing here raises at a caller. The Lark
parser is built once per process (building it costs ~50 ms; parsing a scenario ~1 ms), and Lark is
imported only then: a file whose parse is kept on disk (`parse_kept`) is read back without it.
"""

from __future__ import annotations

import functools
import re
from importlib import resources
from typing import TYPE_CHECKING

from . import ast
from .diagnostics import Diagnostics
from .source import SourceFile, Span

if TYPE_CHECKING:
    import lark
    from lark import Lark, Token, Tree

MAX_FILE_BYTES = 1024 * 1024
MAX_INT_DIGITS = 24  # of an integer literal: more than any field takes (int64 has 19 digits)
MAX_NESTING = 64


def grammar_text() -> str:
    """The grammar, package data beside this module (the repository's top-level `grammar/` links to it)."""
    return resources.files("itbench_dsl").joinpath("grammar/itbench.lark").read_text(encoding="utf-8")


@functools.lru_cache(maxsize=1)
def _parser() -> Lark:
    global lark, Token, Tree  # the module's names for Lark's, bound when the parser is first needed
    import lark
    from lark import Lark, Token, Tree

    from . import cache

    grammar = grammar_text()
    tables = cache.path_for("lark", grammar, lark.__version__)  # Lark checks the grammar's hash in the file too
    options = dict(parser="lalr", lexer="contextual", propagate_positions=True, maybe_placeholders=True)
    if tables is not None:
        try:
            return Lark(grammar, cache=str(tables), **options)
        except Exception:  # noqa: BLE001 - an unusable cache file: build without it
            pass
    return Lark(grammar, **options)


def parse_package_file(data: bytes, path: str, diags: Diagnostics) -> ast.Document | None:
    """`parse_bytes` for a file of the package (the standard library), whose parse is kept on disk
    (cache.py): the same bytes parse to the same AST. Only clean parses are kept."""
    from . import cache

    where = cache.path_for("ast", path, data)
    found = cache.load(where)
    if isinstance(found, tuple) and len(found) == 2 and isinstance(found[1], SourceFile):
        document, source = found
        diags.sources[path] = source
        return document
    errors_before = len(diags.items)
    document = parse_bytes(data, path, diags)
    if document is not None and len(diags.items) == errors_before:
        cache.store(where, (document, diags.sources[path]))
    return document


# parses of checked files kept on disk (cache.py): a library and its variants being edited
KEPT_PARSES = 4096


def parse_kept(source: SourceFile, diags: Diagnostics) -> tuple[ast.Document | ast.FaultLibrary | None, list[str]]:
    """`parse_recovering`, kept on disk by the file's path and text when the parse reports nothing (cache.py):
    checking an unchanged file again neither imports Lark nor builds its parser."""
    from . import cache

    where = cache.path_for("parse", source.path, source.text)
    found = cache.load(where)
    if isinstance(found, (ast.Scenario, ast.App, ast.FaultLibrary)):
        return found, []
    before = len(diags.items)
    document, dropped = parse_recovering(source, diags)
    if document is not None and not dropped and len(diags.items) == before:
        cache.store(where, document, keep=KEPT_PARSES)
    return document, dropped


@functools.lru_cache(maxsize=1)
def _terminal_display() -> dict[str, str]:
    """Human names for terminals in 'expected one of' lists."""
    names = {
        "NAME": "a name",
        "STRING": "a string",
        "SIGNED_INT": "an integer",
        "SIGNED_FLOAT": "a number",
        "QUANTITY": "a quantity",
        "PERCENT": "a percentage",
        "OP": "an operator (`==`, `!=`, `<`, `<=`, `>`, `>=`)",
        "$END": "end of file",
    }
    for terminal in _parser().terminals:
        if terminal.name not in names and terminal.pattern.type == "str":
            names[terminal.name] = f"`{terminal.pattern.value}`"
    return names


# ---- entry points ------------------------------------------------------------------


def decode(data: bytes, path: str, diags: Diagnostics) -> SourceFile | None:
    """Bytes to a SourceFile, refusing what is not a reasonable text file."""
    if len(data) > MAX_FILE_BYTES:
        source = SourceFile(path, "")
        diags.sources[path] = source
        diags.error("E1008", f"file is {len(data):,} bytes; the limit is {MAX_FILE_BYTES:,}", path)
        return None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        source = SourceFile(path, data[: exc.start].decode("utf-8", "replace"))
        diags.sources[path] = source
        diags.error("E1009", f"invalid UTF-8 byte 0x{data[exc.start]:02x}", path, source.span(exc.start, exc.start), "not UTF-8",
                    help="save the file as UTF-8 text")
        return None
    if text.startswith("\ufeff"):
        text = text[1:]
    source = SourceFile(path, text)
    diags.sources[path] = source
    nul = text.find("\x00")
    if nul != -1:
        diags.error("E1009", "the file contains a NUL byte: it is not a text file", path, source.span(nul, nul + 1), "NUL byte",
                    help="save the file as UTF-8 text")
        return None
    return source


def parse_bytes(data: bytes, path: str, diags: Diagnostics) -> ast.Document | None:
    source = decode(data, path, diags)
    return parse_source(source, diags) if source is not None else None


def parse_text(text: str, path: str = "<string>", diags: Diagnostics | None = None) -> ast.Document | None:
    diags = diags if diags is not None else Diagnostics()
    return parse_bytes(text.encode("utf-8", "surrogatepass"), path, diags)


def parse_source(source: SourceFile, diags: Diagnostics) -> ast.Document | None:
    """The file's AST, or None when it has an error. Every syntax error of the file is reported (the parse
    resumes at the next statement after each: `parse_recovering`)."""
    errors_before = len(diags.items)
    document, _dropped = parse_recovering(source, diags)
    return document if len(diags.items) == errors_before else None


MAX_SYNTAX_ERRORS = 20  # reported per file; after them the parse stops


def parse_recovering(source: SourceFile, diags: Diagnostics) -> tuple[ast.Document | ast.FaultLibrary | None, list[str]]:
    """Parse, reporting each syntax error and resuming after it: a closing bracket that the indentation
    shows missing is put where it is missing, otherwise the statement holding the error is dropped (its
    text blanked, every offset kept) and the text parsed again. Returns the AST of what parsed (None when
    nothing did) and the texts dropped, so that a caller checking the rest can tell a consequence of a
    dropped statement (a name it declared) from an error of its own."""
    path = source.path
    if not _check_nesting(source, diags):
        return None, []
    text = source.text
    dropped: list[str] = []
    last_region: tuple[int, int] | None = None
    tree = None
    for _round in range(MAX_SYNTAX_ERRORS):
        try:
            tree = _parser().parse(text)
            break
        except lark.exceptions.UnexpectedInput as exc:
            position = _error_position(exc, text)
            missing = _missing_closer(text, position)
            if missing is not None:
                at, opener, closer, overwrite = missing
                _report_missing_closer(source, at, opener, closer, diags)
                text = text[:overwrite] + closer + text[overwrite + 1:]
                continue
            consequence = last_region is not None and _only_blank_between(text, last_region[1], position)
            repair = None
            if not consequence:
                repair = _syntax_error(exc, source, diags, text)
            if repair is not None:  # a stray character or comma: drop it alone
                text = text[:repair[0]] + _blank(text[repair[0]:repair[1]]) + text[repair[1]:]
                continue
            region = _statement_region(text, last_region[0] if consequence else position)
            if region is None or not text[region[0]:region[1]].strip():
                return None, dropped
            dropped.append(text[region[0]:region[1]])
            text = text[:region[0]] + _blank(text[region[0]:region[1]]) + text[region[1]:]
            last_region = region
    if tree is None:
        return None, dropped
    if not tree.children:
        if not dropped:
            diags.error("E1001", "the file has no `scenario` or `app` block", path, source.span(0, 0))
        return None, dropped
    if all(child.data == "fault_kind" for child in tree.children):
        # a fault library file: any number of `fault_kind` declarations (docs/fault-kinds.md)
        builder = _Builder(source, diags)
        errors_before = len(diags.items)
        kinds = tuple(builder.fault_kind(child) for child in tree.children)
        return (ast.FaultLibrary(kinds, builder.span(tree)) if len(diags.items) == errors_before else None), dropped
    if len(tree.children) > 1:
        extra = tree.children[1]
        diags.error("E1010", "a file holds one `scenario` or `app`; this is a second one", path,
                    source.span(extra.meta.start_pos, extra.children[0].end_pos), "second top-level block",
                    help="put each scenario in its own file")
        return None, dropped
    builder = _Builder(source, diags)
    return builder.document(tree.children[0]), dropped


# ---- recovery after a syntax error ----------------------------------------------------------

_CLOSERS = {"{": "}", "[": "]", "(": ")"}


def _error_position(exc: lark.exceptions.UnexpectedInput, text: str) -> int:
    token = getattr(exc, "token", None)
    if token is not None and getattr(token, "type", None) != "$END" and token.start_pos is not None:
        return token.start_pos
    pos = getattr(exc, "pos_in_stream", None)
    if isinstance(exc, lark.exceptions.UnexpectedEOF) or pos is None or (token is not None and token.type == "$END"):
        return len(text)
    return pos


def _blank(text: str) -> str:
    """Spaces for every character but line breaks: offsets, lines and columns stay where they were."""
    return re.sub(r"[^\n]", " ", text)


def _only_blank_between(text: str, start: int, end: int) -> bool:
    """Nothing but white space and comments in text[start:end]."""
    if end < start:
        return True
    return not re.sub(r"#[^\n]*", "", text[start:end]).strip()


def _openers_at(text: str, pos: int) -> list[int]:
    """The offsets of the brackets still open at `pos`, outermost first."""
    stack: list[int] = []
    for match in _SCAN.finditer(text, 0, pos):
        char = match.group()
        if char in "[{(":
            stack.append(match.start())
        elif char in "]})" and stack:
            stack.pop()
    return stack


def _line_start(text: str, pos: int) -> int:
    return text.rfind("\n", 0, pos) + 1


def _indent(text: str, pos: int) -> int:
    """The white space before the first character of the line holding `pos`."""
    line = text[_line_start(text, pos):_line_end(text, pos)]
    return len(line) - len(line.lstrip(" \t"))


def _code_end(text: str, line_start: int) -> int:
    """The end of the code before `line_start`: the last line holding code, without its comment."""
    end = len(text[:line_start].rstrip())
    while end > 0:
        start = _line_start(text, end)
        comment = next((m.start() for m in _SCAN.finditer(text, start, end) if m.group().startswith("#")), None)
        if comment is None:
            return end
        end = len(text[:comment].rstrip())
    return end


def _code_lines(text: str, end: int):
    """(offset of the first character, that character) of each line before `end` that holds code."""
    offset = 0
    while offset < end:
        newline = text.find("\n", offset)
        newline = len(text) if newline == -1 else newline
        stripped = text[offset:newline].lstrip(" \t")
        if stripped and not stripped.startswith("#"):
            first = newline - len(text[offset:newline].lstrip(" \t"))
            if first < end:
                yield first, text[first]
        offset = newline + 1


def _code_lines_open(text: str, end: int):
    """`_code_lines` with the brackets still open at each line's first character (a list, outermost first,
    read before the next item)."""
    stack: list[int] = []
    scan = _SCAN.finditer(text)
    pending = next(scan, None)
    for first, char in _code_lines(text, end):
        while pending is not None and pending.start() < first:
            bracket = pending.group()
            if bracket in "[{(":
                stack.append(pending.start())
            elif bracket in "]})" and stack:
                stack.pop()
            pending = next(scan, None)
        yield first, char, stack


def _missing_closer(text: str, pos: int) -> tuple[int, int, str, int] | None:
    """A bracket whose closing bracket the indentation shows missing before `pos`: the first line that starts
    no further right than the line that opened a bracket still open there (and does not close it).
    Returns (where the closer is missing, the opener, the closer, the offset of a white-space character to
    overwrite with it), or None when the indentation shows nothing."""
    still_open = set(_openers_at(text, pos))
    if not still_open:
        return None
    closed_by = _closers(text)
    for first, char, stack in _code_lines_open(text, pos + 1):
        if not stack:
            continue
        top = stack[-1]
        # a line less indented than the line that opened the bracket it is in: the bracket's closer is
        # missing when the line closes another one (`}` of the block around it) or when the bracket is open
        # still where the parse failed
        if char not in "]})" and top not in still_open and not (
                text[top] == "{" and top in closed_by and _indent(text, closed_by[top]) < _indent(text, top)):
            continue
        if _line_start(text, top) == _line_start(text, first):
            continue
        indent, opened = _indent(text, first), _indent(text, top)
        if char in "]})":
            if indent >= opened:
                continue
        elif indent > opened or opened == 0:  # a file that does not indent its top-level block shows nothing
            continue
        # the closer belongs at the end of the code before this line
        at = _code_end(text, _line_start(text, first))
        if at <= top or at >= len(text) or text[at] not in " \t\n":
            return None
        return at, top, _CLOSERS[text[top]], at
    return None


def _closers(text: str) -> dict[int, int]:
    """The offset of the bracket that closes each bracket (by nesting alone)."""
    stack: list[int] = []
    out: dict[int, int] = {}
    for match in _SCAN.finditer(text):
        char = match.group()
        if char in "[{(":
            stack.append(match.start())
        elif char in "]})" and stack:
            out[stack.pop()] = match.start()
    return out


def _report_missing_closer(source: SourceFile, at: int, opener: int, closer: str, diags: Diagnostics) -> None:
    from .diagnostics import Diagnostic, Note

    line, _column = source.position(opener)
    diags.add(Diagnostic("E1004", f"`{source.text[opener]}` opened on line {line} is not closed", source.path,
                         source.span(at, at), f"`{closer}` missing here",
                         help=f"close the block with `{closer}` where it ends (the next line is indented as the line "
                              f"that opened it)",
                         notes=(Note(f"opened here, line {line}", source.span(opener, opener + 1)),)))


def _statement_region(text: str, pos: int) -> tuple[int, int] | None:
    """[start, end) of the statement (or entry) holding offset `pos`: from the first character of the line
    that starts it, at the nesting of `pos`, to the end of the line where the brackets it opened are closed,
    or to the bracket that closes the block around it."""
    pos = min(pos, len(text))
    stack = _openers_at(text, pos)
    depth = len(stack)
    floor = stack[-1] + 1 if stack else 0
    start = pos
    for first, char, open_there in _code_lines_open(text, pos + 1):
        if first >= floor and len(open_there) == depth and char not in "]})":
            start = first
    nesting = depth
    end = len(text)
    for match in re.finditer(r'"(?:[^"\\\n]|\\.)*"?|#[^\n]*|[\[\]{}()]|\n', text[start:]):
        char = match.group()
        offset = start + match.start()
        if char == "\n":
            if nesting <= depth and offset >= pos:
                end = offset
                break
        elif char in "[{(":
            nesting += 1
        elif char in "]})":
            nesting -= 1
            if nesting < depth:
                end = offset
                break
    if end <= start:
        end = min(len(text), max(start + 1, _line_end(text, pos)))
    return start, end


def _line_end(text: str, pos: int) -> int:
    end = text.find("\n", pos)
    return len(text) if end == -1 else end


# ---- guards ----------------------------------------------------------------------------

_SCAN = re.compile(r'"(?:[^"\\\n]|\\.)*"?|#[^\n]*|[\[\]{}()]')


def _check_nesting(source: SourceFile, diags: Diagnostics) -> bool:
    """Refuse nesting deeper than MAX_NESTING before Lark sees the text (no recursion blow-up)."""
    depth = 0
    for match in _SCAN.finditer(source.text):
        char = match.group()
        if char in "[{(":
            depth += 1
            if depth > MAX_NESTING:
                diags.error("E1007", f"brackets nest deeper than {MAX_NESTING} levels", source.path,
                            source.span(match.start(), match.end()), "too deep")
                return False
        elif char in "]})":
            depth = max(0, depth - 1)
    return True


# statements whose value follows the keyword (`domain sre`), where authors of YAML write `domain: sre`
_KEYWORD_STATEMENTS = ("domain", "complexity", "description", "tags", "task", "tasks", "metadata", "agent",
                       "topology", "expect", "cause", "analysis")


def _syntax_error(exc: lark.exceptions.UnexpectedInput, source: SourceFile, diags: Diagnostics,
                  text: str | None = None) -> tuple[int, int] | None:
    """Report one syntax error, with help that fits where it is. `text` is the text the parser read (the
    file with earlier errors' statements blanked). Returns the range to drop when dropping it alone lets
    the parse go on (a stray `:` or comma), else None (the caller drops the statement)."""
    path = source.path
    text = source.text if text is None else text
    pos = getattr(exc, "pos_in_stream", None)
    if pos is None:
        pos = len(text)
    if isinstance(exc, lark.exceptions.UnexpectedCharacters):
        char = text[pos] if pos < len(text) else ""
        if char == '"':
            end = text.find("\n", pos)
            end = len(text) if end == -1 else end
            diags.error("E1003", "string is not closed before the end of the line", path, source.span(pos, end),
                        "unterminated string", help='close it with `"`; write a newline inside a string as `\\n`')
            return None
        shown = char if char.isprintable() else f"U+{ord(char):04X}"
        help = "names are letters, digits and `_`; put other text in double quotes"
        if char in ":;":
            before = text[_line_start(text, pos):pos].split()
            word = before[-1] if len(before) == 1 else ""
            if char == ":" and word in _KEYWORD_STATEMENTS:
                help = f"a statement's value follows its keyword with no `:`: write `{word} ...`"
            elif char == ":" and word:
                help = f"a field is written `{word} = value` and a block `{word} {{ ... }}`"
            elif char == ";":
                help = "statements and entries need no separator: remove the `;`"
        diags.error("E1005", f"unexpected character `{shown}`", path, source.span(pos, pos + 1), "not valid here",
                    help=help)
        return (pos, pos + 1) if char in ":;" else None
    token = getattr(exc, "token", None)
    # the comparison operators first: after a field path they are what is most often meant
    expected_terminals = set(getattr(exc, "expected", None) or ())
    expected = sorted({_terminal_display().get(t, t) for t in expected_terminals},
                      key=lambda e: (not e.startswith("an operator"), e))
    if isinstance(exc, lark.exceptions.UnexpectedEOF) or (token is not None and token.type == "$END"):
        opener = _last_open_bracket(text)
        span = source.span(opener, opener + 1) if opener is not None else source.span(len(text), len(text))
        closer = {"{": "}", "[": "]", "(": ")"}.get(text[opener]) if opener is not None else None
        diags.error("E1004", "the file ends before this block is closed", path, span, "opened here and never closed",
                    help=f"close it with `{closer}`" if closer else (f"expected {_expected_list(expected)}" if expected else ""))
        return None
    assert token is not None
    where = _statement_keyword(text, token.start_pos if token.start_pos is not None else pos)
    if where.partition(" in ")[0] == "patch":  # the tests belong to `require`, whose parse states a patch shares
        expected = [e for e in expected if not e.startswith("an operator") and e not in _TEST_WORDS]
    start = token.start_pos if token.start_pos is not None else pos
    end = token.end_pos if token.end_pos is not None else start + 1
    shown = str(token)[:40]
    comma = _trailing_comma(text, start)
    if comma is not None and "COMMA" not in expected_terminals:
        diags.error("E1002", "a `,` with no item after it", path, source.span(comma, comma + 1), "trailing comma",
                    help=f"remove the `,`: no item follows it (`{shown}` comes next)")
        return comma, comma + 1
    comma = _line_ending_comma(text, start)
    if comma is not None:
        line = source.position(start)[0]
        first = text[_line_start(text, start):].split(None, 1)[0][:40]
        diags.error("E1002", "a `,` with no item after it", path, source.span(comma, comma + 1), "trailing comma",
                    help=f"remove the `,`: the list goes on past the end of the line, so `{first}` on line {line} "
                         f"was read as one more item")
        return comma, comma + 1
    before = text[_line_start(text, start):start].split()
    if shown in ("=", ":") and len(before) == 1 and before[0] in _KEYWORD_STATEMENTS:
        diags.error("E1002", f"unexpected `{shown}`", path, source.span(start, end), f"expected {_expected_list(expected)}",
                    help=f"a statement's value follows its keyword with no `{shown}`: write `{before[0]} ...`")
        return start, end
    if shown == "," and "COMMA" not in expected_terminals:
        diags.error("E1002", "unexpected `,`", path, source.span(start, end), "no separator here",
                    help="the entries of a block are written one after another, with no `,` between them; "
                         "commas separate the items of a list `[...]` or a map `{ a = 1, b = 2 }`")
        return start, end
    expected_text = _expected_list(expected)
    diags.error("E1002", f"unexpected `{shown}`", path, source.span(start, end), f"expected {expected_text}",
                help=_syntax_help(shown, expected, where))
    return None


_TEST_WORDS = {"`contains`", "`exists`", "`in`", "`matches`", "`not`"}


def _trailing_comma(text: str, pos: int) -> int | None:
    """The offset of a `,` that is the last code before `pos` (on this line, or ending an earlier line)."""
    end = _code_end(text, pos) if _only_blank_between(text, _line_start(text, pos), pos) else len(text[:pos].rstrip())
    return end - 1 if end > 0 and text[end - 1] == "," else None


def _line_ending_comma(text: str, pos: int) -> int | None:
    """The `,` that ends the code line before the one holding `pos`, when the line holding `pos` starts as far
    left as the statement that comma is in (it starts a statement of its own: the comma is a trailing one)."""
    line = _line_start(text, pos)
    end = _code_end(text, line)
    if end <= 0 or text[end - 1] != ",":
        return None
    region = _statement_region(text, end - 1)
    if region is None or _indent(text, pos) != _indent(text, region[0]):
        return None
    if not re.match(r"[A-Za-z_]", text[line:].lstrip(" \t")):  # a line of values continues the list
        return None
    return end - 1


def _statement_keyword(text: str, pos: int) -> str:
    """The first word of the statement holding `pos`, and of the block around it: `patch`, `mitigated`..."""
    region = _statement_region(text, pos)
    words = re.findall(r"[A-Za-z_][A-Za-z0-9_]*", text[region[0]:pos]) if region else []
    first = words[0] if words else ""
    openers = _openers_at(text, pos)
    if openers:
        line = text[_line_start(text, openers[-1]):openers[-1]].split()
        return f"{first} in {line[0]}" if line else first
    return first


def _expected_list(expected: list[str]) -> str:
    if len(expected) > 8:
        return ", ".join(expected[:8]) + f" or {len(expected) - 8} more"
    if len(expected) > 1:
        return ", ".join(expected[:-1]) + " or " + expected[-1]
    return expected[0] if expected else "something else"


def _syntax_help(token: str, expected: list[str], where: str = "") -> str:
    statement, _, block = where.partition(" in ")
    if statement == "patch":
        return ("a patch is `patch PATH = VALUE`: PATH is field names joined by `.`, with `[N]`, `[\"key\"]` or "
                "`[name = VALUE]` steps (docs/fault-kinds.md, Reference)")
    if statement == "require":
        return ("a precondition is `require PATH OP VALUE` or `require arg(NAME) OP VALUE` "
                "(docs/fault-kinds.md, Reference)")
    if any(e.startswith("an operator") for e in expected) and (block == "mitigated" or not block):
        return ("a field predicate is `REF PATH OP VALUE`; OP is one of == != < <= > >= contains in matches, "
                "or the path ends with `exists` or `not exists` (docs/language.md, operators)")
    if "`=`" in expected and "`{`" in expected:
        return "a field is written `key = value` and a block `key { ... }`"
    if "`,`" in expected:
        return "separate list items with commas"
    return ""


def _last_open_bracket(text: str) -> int | None:
    stack: list[int] = []
    for match in _SCAN.finditer(text):
        char = match.group()
        if char in "[{(":
            stack.append(match.start())
        elif char in "]})" and stack:
            stack.pop()
    return stack[-1] if stack else None


# ---- tree to AST --------------------------------------------------------------------------

_ESCAPES = {'"': '"', "\\": "\\", "n": "\n", "t": "\t", "r": "\r"}
_ESCAPE_RE = re.compile(r"\\(u[0-9A-Fa-f]{4}|.)")


def _name(node: Tree | Token) -> str:
    """The text of a name that may also be a keyword (`soft_name` in the grammar)."""
    return str(node.children[0]) if isinstance(node, Tree) else str(node)


class _Builder:
    def __init__(self, source: SourceFile, diags: Diagnostics) -> None:
        self.source = source
        self.diags = diags

    # spans
    def span(self, node: Tree | Token) -> Span:
        if isinstance(node, Token):
            return self.source.span(node.start_pos, node.end_pos)
        meta = node.meta
        if getattr(meta, "empty", True):
            return self.source.span(0, 0)
        return self.source.span(meta.start_pos, meta.end_pos)

    def string(self, token: Token) -> str:
        raw = str(token)[1:-1]
        if "\\" not in raw:
            return raw

        def replace(match: re.Match) -> str:
            seq = match.group(1)
            if seq in _ESCAPES:
                return _ESCAPES[seq]
            start = token.start_pos + 1 + match.start()
            if seq.startswith("u") and len(seq) == 5:
                if not 0xD800 <= int(seq[1:], 16) <= 0xDFFF:
                    return chr(int(seq[1:], 16))
                self.diags.error("E1006", f"`\\{seq}` is a UTF-16 surrogate, not a character", self.source.path,
                                 self.source.span(start, start + 1 + len(seq)), "not a character",
                                 help="write the character itself (the file is UTF-8)")
                return seq
            self.diags.error("E1006", f"unknown escape `\\{seq}`", self.source.path,
                             self.source.span(start, start + 1 + len(seq)), "not an escape",
                             help='use \\" \\\\ \\n \\t \\r or \\uXXXX')
            return seq

        return _ESCAPE_RE.sub(replace, raw)

    # documents
    def document(self, tree: Tree) -> ast.Document:
        name_token, *stmts = tree.children
        builder = ast.Scenario if tree.data == "scenario" else ast.App
        return builder(self.string(name_token), tuple(self.statement(s) for s in stmts), self.span(tree), self.span(name_token))

    def fault_kind(self, tree: Tree) -> ast.FaultKindDecl:
        name_token, *stmts = tree.children
        items = []
        for stmt in stmts:
            if stmt.data == "patch":
                path, value, body = stmt.children
                items.append(ast.Patch(tuple(self.path_step(p) for p in path.children), self.value(value),
                                       self.optional_body(body), self.span(stmt), self.span(path)))
            elif stmt.data == "require":
                subject, test, body = stmt.children
                op, value = self.test(test)
                if subject.data == "arg_subject":
                    call, arg = subject.children
                    subject_value = ast.Call(str(call), (ast.Symbol(str(arg), self.span(arg)),), self.span(subject))
                else:
                    subject_value = tuple(self.path_step(p) for p in subject.children)
                items.append(ast.Require(subject_value, op, value, self.optional_body(body), self.span(stmt),
                                         self.span(subject)))
            else:
                items.append(self.entry(stmt))
        return ast.FaultKindDecl(self.string(name_token), tuple(items), self.span(tree), self.span(name_token))

    def statement(self, tree: Tree):
        handler = getattr(self, "stmt_" + tree.data)
        return handler(tree, self.span(tree))

    def stmt_domain(self, t, span):
        return ast.Domain(str(t.children[0]), span)

    def stmt_complexity(self, t, span):
        return ast.Complexity(str(t.children[0]), span)

    def stmt_description(self, t, span):
        return ast.Description(self.string(t.children[0]), span)

    def stmt_tags(self, t, span):
        return ast.Tags(self.value(t.children[0]), span)

    def stmt_metadata(self, t, span):
        return ast.Metadata(self.body(t.children[0]), span)

    def stmt_use_app(self, t, span):
        return ast.UseApp(self.string(t.children[0]), self.optional_body(t.children[1]), span)

    def stmt_use_faults(self, t, span):
        return ast.UseFaults(self.string(t.children[0]), span, self.span(t.children[0]))

    def stmt_probe(self, t, span):
        name, ref, body = t.children
        return ast.Probe(self.string(name), self.ref(ref), self.optional_body(body), span, self.span(name))

    def stmt_probe_pred(self, t, span):
        name, field, test = t.children
        op, value = self.test(test)
        return ast.ProbePredicate(self.string(name), str(field), op, value, span, self.span(name), self.span(field))

    def stmt_access_pred(self, t, span):
        ability, subject, verb, resource, namespace = t.children
        return ast.AccessPredicate(str(ability.children[0]) == "can", self.ref(subject), self.string(verb),
                                   self.string(resource), self.ref(namespace) if namespace is not None else None,
                                   span, self.span(verb), self.span(resource))

    def stmt_agent(self, t, span):
        return ast.Agent(self.body(t.children[0]), span)

    def stmt_control(self, t, span):
        return ast.Control(self.string(t.children[0]), self.optional_body(t.children[1]), span)

    def stmt_task(self, t, span):
        return ast.Task(str(t.children[0]), self.optional_body(t.children[1]), span)

    def stmt_tasks(self, t, span):
        return ast.Tasks(tuple(ast.TaskItem(str(i.children[0]), self.within(i.children[1]), self.span(i))
                               for i in t.children), span)

    def stmt_gap(self, t, span):
        return ast.Gap(self.ref(t.children[0]), span)

    def stmt_compliant(self, t, span):
        return ast.Compliant(self.ref(t.children[0]), span)

    def stmt_alert_rule(self, t, span):
        name, body = t.children
        return ast.AlertRule(self.string(name), self.optional_body(body), span, self.span(name))

    def stmt_param(self, t, span):
        name, domain, default = t.children
        default_value = self.value(default.children[0]) if default is not None else None
        return ast.Param(str(name), self.value(domain), default_value, span)

    def stmt_topology(self, t, span):
        name, *stmts = t.children  # the optional name is None when absent
        return ast.Topology(tuple(self.statement(s) for s in stmts), span,
                            self.string(name) if name is not None else None)

    def stmt_object(self, t, span):
        kind, name, body = t.children
        return ast.Object(str(kind), self.string(name), self.optional_body(body), span, self.span(kind), self.span(name))

    def stmt_edge(self, t, span):
        return ast.Edge(tuple(self.string(n) for n in t.children), span, tuple(self.span(n) for n in t.children))

    def stmt_fault(self, t, span):
        kind, ref, body = t.children
        return ast.Fault(str(kind), self.ref(ref), self.optional_body(body), span, self.span(kind))

    def stmt_wait(self, t, span):
        when, kind, ref, body = t.children
        return ast.Wait(str(when.children[0]), str(kind), self.ref(ref), self.optional_body(body), span, self.span(kind))

    def stmt_group(self, t, span):
        name, *items = t.children
        return ast.Group(self.string(name) if name is not None else None, tuple(self.statement(i) for i in items), span)

    def stmt_expect(self, t, span):
        return ast.Expect(tuple(self.statement(s) for s in t.children), span)

    def stmt_alert(self, t, span):
        name, ref, body = t.children
        return ast.Alert(str(name), self.ref(ref), self.optional_body(body), span, self.span(name))

    def stmt_root_cause(self, t, span):
        first, *others = t.children
        return ast.RootCause(self.ref(first), span, tuple(self.ref(r) for r in others))

    def stmt_propagation(self, t, span):
        *refs, body = t.children
        return ast.Propagation(tuple(self.ref(r) for r in refs), self.optional_body(body), span)

    def stmt_ground_group(self, t, span):
        name, ref, body = t.children
        return ast.GroundGroup(self.string(name), self.ref(ref), self.optional_body(body), span, self.span(name))

    def stmt_alias(self, t, span):
        return ast.Alias(tuple(self.ref(r) for r in t.children), span)

    def stmt_cause(self, t, span):
        return ast.Cause(self.body(t.children[0]), span)

    def stmt_analysis(self, t, span):
        return ast.Analysis(self.body(t.children[0]), span)

    def stmt_mitigated(self, t, span):
        only, within, *preds = t.children
        return ast.Mitigated(self.within(within), tuple(self.statement(p) for p in preds), span, only is not None)

    def stmt_state_pred(self, t, span):
        ref, state, within = t.children
        return ast.StatePredicate(self.ref(ref), str(state.children[0]), self.within(within), span)

    def stmt_field_pred(self, t, span):
        ref, path, test = t.children
        op, value = self.test(test)
        return ast.FieldPredicate(self.ref(ref), tuple(self.path_step(p) for p in path.children), op, value, span,
                                  self.span(path))

    def test(self, t: Tree) -> tuple[str, ast.Value | None]:
        if t.data == "compare_test":
            return str(t.children[0]), self.value(t.children[1])
        if t.data == "matches_test":
            token = t.children[0]
            return "matches", ast.Str(self.string(token), self.span(token))
        if t.data in ("contains_test", "in_test"):
            return t.data[:-len("_test")], self.value(t.children[0])
        return ("exists" if t.data == "exists_test" else "not exists"), None

    def path_step(self, t: Tree | Token) -> ast.PathStep:
        kind = t.data if isinstance(t, Tree) else ""
        if kind == "soft_name":
            return _name(t)
        if kind == "name_step":
            return _name(t.children[0])
        if kind == "key_step":
            return self.string(t.children[0])
        if kind == "index_step":
            return ast.Index(int(t.children[0]), self.span(t))
        if kind == "select_step":
            key, value = t.children
            return ast.Select(".".join(_name(p) for p in key.children), self.value(value), self.span(t))
        if kind == "parse_step":
            return ast.ParseAs(str(t.children[0]), self.span(t))
        raise AssertionError(f"unknown path step {kind}")

    def stmt_scope_pred(self, t, span):
        what, selector, namespace, within = t.children
        return ast.ScopePredicate(str(what), self.value(selector) if selector is not None else None,
                                  self.ref(namespace) if namespace is not None else None, self.within(within), span,
                                  self.span(what))

    def stmt_alert_pred(self, t, span):
        name, negated = t.children
        return ast.AlertPredicate(str(name), not negated.children, span)

    def stmt_optimal(self, t, span):
        ref, path, value = t.children
        return ast.Optimal(self.ref(ref), tuple(_name(p) for p in path.children), self.value(value), span)

    def stmt_solution(self, t, span):
        title, solution_id, *steps = t.children
        identifier = self.string(solution_id.children[0]) if solution_id is not None else None
        id_span = self.span(solution_id) if solution_id is not None else ast.NO_SPAN
        return ast.Solution(self.string(title), tuple(self.step(s) for s in steps), span, identifier, id_span)

    def step(self, t: Tree) -> ast.Step:
        text, run = t.children
        return ast.Step(self.string(text), self.string(run.children[0]) if run is not None else None, self.span(t))

    def within(self, t: Tree | None) -> ast.Quantity | None:
        if t is None:
            return None
        token = t.children[0]
        return ast.Quantity(str(token), self.span(token))

    # shared pieces
    def ref(self, t: Tree) -> ast.Ref:
        kind, name = t.children
        return ast.Ref(str(kind), self.string(name), self.span(t), self.span(kind), self.span(name))

    def optional_body(self, t: Tree | None) -> tuple[ast.Entry, ...] | None:
        return self.body(t) if t is not None else None

    def body(self, t: Tree) -> tuple[ast.Entry, ...]:
        return tuple(self.entry(e) for e in t.children)

    def key(self, t: Tree) -> str:
        child = t.children[0]
        return self.string(child) if isinstance(child, Token) and child.type == "STRING" else _name(child)

    def entry(self, t: Tree) -> ast.Entry:
        key_tree, *rest = t.children
        labels = tuple(self.string(x) for x in rest[:-1])
        if t.data == "attr":
            return ast.Attr(self.key(key_tree), labels, self.value(rest[-1]), self.span(t), self.span(key_tree))
        return ast.Block(self.key(key_tree), labels, self.body(rest[-1]), self.span(t), self.span(key_tree))

    def value(self, t: Tree) -> ast.Value:
        span = self.span(t)
        kind = t.data
        if kind == "string":
            return ast.Str(self.string(t.children[0]), span)
        if kind == "integer":
            digits = str(t.children[0])
            if sum(c.isdigit() for c in digits) > MAX_INT_DIGITS:  # and int() of thousands of digits raises
                self.diags.error("E2010", f"an integer of {len(digits.lstrip('+-')):,} digits is out of range",
                                 self.source.path, span, f"more than {MAX_INT_DIGITS} digits")
                return ast.Int(0, span)
            return ast.Int(int(digits), span)
        if kind == "float":
            return ast.Float(str(t.children[0]).lstrip("+"), span)
        if kind == "quantity":
            return ast.Quantity(str(t.children[0]).lstrip("+"), span)
        if kind == "percent":
            return ast.Percent(str(t.children[0])[:-1].lstrip("+"), span)
        if kind == "symbol":
            return ast.Symbol(str(t.children[0]), span)
        if kind == "call":
            name, *args = t.children
            return ast.Call(str(name), tuple(self.value(a) for a in args if a is not None), span)
        if kind == "list":
            return ast.ListValue(tuple(self.value(v) for v in t.children if v is not None), span)
        if kind == "map":
            return ast.MapValue(tuple(self.pair(p) for p in t.children if p is not None), span)
        raise AssertionError(f"unknown value node {kind}")

    def pair(self, t: Tree) -> ast.Pair:
        key_tree, value = t.children
        return ast.Pair(self.key(key_tree), self.value(value), self.span(t))
