"""A reader for the YAML that Kubernetes manifests and policies are written in, standard library only.

Generated evaluators run where only Python is installed, yet agents write Kyverno policies in
YAML. This reads the subset such files use: block mappings and sequences (compact `- key: v`
items included), flow collections (`[a, b]`, `{k: v}`), plain, single- and double-quoted
scalars, literal and folded block scalars with chomping and indentation indicators, comments,
and several documents separated by `---`. Plain scalars resolve as PyYAML's `safe_load` does
(YAML 1.1: `yes`/`no` are booleans, `0o7`/`0x1f` integers, `.inf` floats, `~` null), so a file
reads the same here and in the compiler's tests.

Line breaks are LF, CRLF and CR; NEL, LS and PS are content, as in YAML 1.2 (PyYAML, which
reads YAML 1.1, breaks lines at them).

Anchors (`&name`) and aliases (`*name`) on values, and merge keys (`<<: *name`, `<<: [*a, *b]`, explicit
keys winning, as PyYAML and Go's yaml read them), are read; an alias gives a copy of its anchor's value,
and copies past MAX_ALIAS_NODES nodes in all are refused (a "billion laughs" file).
Tags other than the standard `!!str`-style ones, anchors on mapping keys, complex keys (`? k`) and
directives are refused with `YAMLSubsetError`, which carries the line and column: a policy
that needs them is better converted to JSON than half-read. So are collections nested deeper
than MAX_DEPTH, before they exhaust the stack.
"""

import re

__all__ = ["YAMLSubsetError", "load_all"]


class YAMLSubsetError(ValueError):
    def __init__(self, message, line, column):
        super().__init__(f"line {line}, column {column}: {message}")
        self.line = line
        self.column = column


# YAML 1.1's implicit types, as PyYAML's SafeLoader resolves plain scalars
# YAML's white space is spaces and tabs (and line breaks): str.strip() would also take a no-break space
_BLANK = " \t\r\n"
_NULL = re.compile(r"~|null|Null|NULL|")
_BOOL = re.compile(r"yes|Yes|YES|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF")
_INT = re.compile(r"[-+]?0b[0-1_]+|[-+]?0[0-7_]+|[-+]?(?:0|[1-9][0-9_]*)|[-+]?0x[0-9a-fA-F_]+"
                  r"|[-+]?[1-9][0-9_]*(?::[0-5]?[0-9])+")
_FLOAT = re.compile(r"[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+][0-9]+)?|\.[0-9_]+(?:[eE][-+][0-9]+)?"
                    r"|[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN)")
_STD_TAGS = ("!!str", "!!int", "!!float", "!!bool", "!!null", "!!map", "!!seq")


def _sexagesimal(text, convert):
    sign = -1 if text.startswith("-") else 1
    value = 0
    for part in text.lstrip("+-").split(":"):
        value = value * 60 + convert(part)
    return sign * value


def resolve_plain(text):
    """The value of a plain scalar, as YAML 1.1's resolver (PyYAML's) gives it."""
    if _NULL.fullmatch(text):
        return None
    if _BOOL.fullmatch(text):
        return text.lower() in ("yes", "true", "on")
    if _INT.fullmatch(text):
        body = text.replace("_", "")
        sign = -1 if body.startswith("-") else 1
        digits = body.lstrip("+-")
        if ":" in digits:
            return _sexagesimal(body, int)
        if digits.startswith("0b"):
            return sign * int(digits[2:], 2)
        if digits.startswith("0x"):
            return sign * int(digits[2:], 16)
        if digits.startswith("0") and digits != "0":
            return sign * int(digits, 8)
        return sign * int(digits)
    if _FLOAT.fullmatch(text):
        body = text.replace("_", "").lower()
        if body.endswith("inf"):
            return float("-inf") if body.startswith("-") else float("inf")
        if body.endswith("nan"):
            return float("nan")
        if ":" in body:
            return _sexagesimal(body, float)
        return float(body)
    return text


def _tagged(tag, text, line, column):
    if tag == "!!str":
        return text
    if tag == "!!null":
        return None
    value = resolve_plain(text)
    if tag == "!!float" and isinstance(value, str):
        try:
            return float(text.replace("_", ""))
        except ValueError:
            raise YAMLSubsetError(f"{text!r} is not a valid float", line, column) from None
    wanted = {"!!int": int, "!!float": (float, int), "!!bool": bool}[tag]
    if isinstance(value, bool) != (tag == "!!bool") or not isinstance(value, wanted):
        raise YAMLSubsetError(f"{text!r} is not a valid {tag[2:]}", line, column)
    return float(value) if tag == "!!float" else value


class _Line:
    __slots__ = ("number", "indent", "text")

    def __init__(self, number, indent, text):
        self.number = number
        self.indent = indent
        self.text = text


_ESCAPES = {"0": "\0", "a": "\a", "b": "\b", "t": "\t", "\t": "\t", "n": "\n", "v": "\v", "f": "\f", "r": "\r",
            "e": "\x1b", " ": " ", '"': '"', "/": "/", "\\": "\\", "N": "\x85", "_": "\xa0", "L": "\u2028",
            "P": "\u2029"}


MAX_DEPTH = 100  # collections nested in one another: more than any manifest or policy, well within Python's stack
MAX_ALIAS_NODES = 100_000  # nodes that aliases may copy in one file: far beyond a policy, far below exhausting memory
# an anchor's or alias's name: any characters but white space and flow indicators (YAML 1.2's ns-anchor-char)
_ANCHOR_NAME = re.compile(r"[^ \t\n,\[\]{}]+")


class _Reader:
    def __init__(self, text):
        self.raw = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
        self.depth = 0
        self.anchors = {}
        self.copied = 0  # nodes copied by aliases so far (MAX_ALIAS_NODES)

    # ---- anchors and aliases ------------------------------------------------------------------------

    def _anchor_name(self, text, index, line, column):
        """(name, end) of the anchor or alias whose `&`/`*` is at text[index]."""
        match = _ANCHOR_NAME.match(text, index + 1)
        if match is None:
            raise YAMLSubsetError(f"`{text[index]}` without a name", line.number, column + 1)
        return match.group(0), match.end()

    def _alias(self, name, line, column):
        """A copy of the value anchored as `name` (values are trees here, as JSON is)."""
        if name not in self.anchors:
            raise YAMLSubsetError(f"the alias *{name} names no anchor before it", line.number, column + 1)
        value = self.anchors[name]
        self.copied += _count_nodes(value)
        if self.copied > MAX_ALIAS_NODES:
            raise YAMLSubsetError(f"aliases copy more than {MAX_ALIAS_NODES} nodes", line.number, column + 1)
        return _copy(value)

    def _deeper(self, line, column):
        """Enter one more level of nesting; YAMLSubsetError past MAX_DEPTH (a file built to exhaust the stack)."""
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise YAMLSubsetError(f"collections nest deeper than {MAX_DEPTH} levels", line.number, column)

    # ---- documents ----------------------------------------------------------------------------------

    def documents(self):
        bounds, start = [], 0
        for index, line in enumerate(self.raw):
            if line.startswith("%"):
                raise YAMLSubsetError("directives are not supported", index + 1, 1)
            if line == "---" or line.startswith(("--- ", "---\t")):
                rest = line[3:].strip(_BLANK)
                bounds.append((start, index))
                start = index + 1
                if rest and not rest.startswith("#"):  # `--- value`: the document starts on this line
                    self.raw[index] = rest
                    start = index
            elif line == "..." or line.startswith("... "):
                bounds.append((start, index))
                start = index + 1
        bounds.append((start, len(self.raw)))
        out = []
        for first, end in bounds:
            lines = self._lines(first, end)
            content = [line for line in lines if line.indent >= 0]
            if not content:
                continue
            self.lines, self.pos = lines, 0
            value = self.node(content[0].indent)
            self._skip_blank()
            if self.pos < len(self.lines):
                line = self.lines[self.pos]
                raise YAMLSubsetError("unexpected content (wrong indentation?)", line.number, line.indent + 1)
            out.append(value)
        return out

    def _lines(self, first, end):
        lines = []
        for index in range(first, end):
            text = self.raw[index]
            stripped = text.lstrip(" ")
            if not stripped.strip(_BLANK) or stripped.startswith("#"):
                lines.append(_Line(index + 1, -1, text))  # blank or comment: kept for block scalars
                continue
            lines.append(_Line(index + 1, len(text) - len(stripped), text))
        return lines

    # ---- block structure ----------------------------------------------------------------------------

    def _skip_blank(self):
        while self.pos < len(self.lines) and self.lines[self.pos].indent < 0:
            self.pos += 1

    def node(self, indent):
        self._skip_blank()
        self._deeper(self.lines[self.pos], self.lines[self.pos].indent + 1)
        try:
            return self._node(indent)
        finally:
            self.depth -= 1

    def _node(self, indent):
        line = self.lines[self.pos]
        content = line.text[line.indent:]
        if content.startswith("\t"):
            raise YAMLSubsetError("tabs cannot indent YAML", line.number, line.indent + 1)
        if content == "-" or content.startswith("- ") or content.startswith("-\t"):
            return self.sequence(line.indent)
        if self._mapping_key(content, line) is not None:
            return self.mapping(line.indent)
        # a scalar or flow collection standing alone, possibly over several lines
        self.pos += 1
        return self.inline_value(content, line, line.indent, line.indent)

    def sequence(self, indent):
        items = []
        while self.pos < len(self.lines):
            self._skip_blank()
            if self.pos >= len(self.lines):
                break
            line = self.lines[self.pos]
            content = line.text[line.indent:]
            if line.indent < indent:
                break
            if line.indent > indent:
                raise YAMLSubsetError("unexpected indentation in a sequence", line.number, line.indent + 1)
            if not (content == "-" or content.startswith("- ") or content.startswith("-\t")):
                break
            rest = content[1:].lstrip(" \t")
            if not rest or rest.startswith("#"):
                self.pos += 1
                items.append(self._nested(indent))
                continue
            inner = indent + (len(content) - len(rest))
            if rest.startswith("- ") or rest == "-" or self._mapping_key(rest, line) is not None:
                # a compact nested collection: read it as if it started on its own line at `inner`
                self.lines[self.pos] = _Line(line.number, inner, " " * inner + rest)
                items.append(self.node(inner))
                continue
            self.pos += 1
            items.append(self.inline_value(rest, line, inner, indent))
        return items

    def mapping(self, indent):
        result, merged = {}, []
        while self.pos < len(self.lines):
            self._skip_blank()
            if self.pos >= len(self.lines):
                break
            line = self.lines[self.pos]
            if line.indent < indent:
                break
            if line.indent > indent:
                raise YAMLSubsetError("unexpected indentation in a mapping", line.number, line.indent + 1)
            content = line.text[line.indent:]
            if content.startswith("\t"):
                raise YAMLSubsetError("tabs cannot indent YAML", line.number, line.indent + 1)
            split = self._mapping_key(content, line)
            if split is None:
                if content.startswith("- ") or content == "-":
                    break
                raise YAMLSubsetError("expected `key: value`", line.number, line.indent + 1)
            key, rest, rest_column = split
            if key in result:
                raise YAMLSubsetError(f"duplicate key {key!r}", line.number, line.indent + 1)
            self.pos += 1
            if not rest or rest.startswith("#"):
                value = self._nested(indent, allow_sequence_at_same_indent=True)
            else:
                value = self.inline_value(rest, line, rest_column, indent, after_key=True)
            if key == "<<":  # a merge key: the mappings it names give the keys this one does not
                sources = value if isinstance(value, list) else [value]
                if not all(isinstance(m, dict) for m in sources):
                    raise YAMLSubsetError("a merge key (`<<`) takes a mapping or a list of mappings", line.number,
                                          line.indent + 1)
                merged.extend(sources)
                continue
            result[key] = value
        for source in merged:  # explicit keys win, then the earlier of the merged mappings
            for key, value in source.items():
                result.setdefault(key, value)
        return result

    def _nested(self, indent, allow_sequence_at_same_indent=False):
        """The value on the lines below a `key:` or `-` with nothing after it."""
        self._skip_blank()
        if self.pos >= len(self.lines):
            return None
        line = self.lines[self.pos]
        content = line.text[line.indent:]
        if line.indent > indent:
            return self.node(line.indent)
        if allow_sequence_at_same_indent and line.indent == indent and (content.startswith("- ") or content == "-"):
            return self.sequence(indent)
        return None

    def _mapping_key(self, content, line):
        """(key, rest, column of rest) when `content` starts with `key:`; else None."""
        if content.startswith("? "):
            raise YAMLSubsetError("complex mapping keys are not supported", line.number, line.indent + 1)
        if content[:1] in ("&", "*"):
            # `&a` or `*a` heads a value; one heading a key (`&a key: v`, `*a : v`) is refused
            _, end = self._anchor_name(content, 0, line, line.indent)
            rest = content[end:].lstrip(" \t")
            if content[:1] == "*" and rest.startswith(":") or rest and self._mapping_key(rest, line) is not None:
                raise YAMLSubsetError("anchors and aliases on mapping keys are not supported", line.number,
                                      line.indent + 1)
            return None
        if content[:1] == "!":
            tag, _, rest = content.partition(" ")
            if rest.strip(_BLANK) and self._mapping_key(rest.strip(_BLANK), line) is not None:
                raise YAMLSubsetError("tags on mapping keys are not supported", line.number, line.indent + 1)
            return None
        if content[:1] in ('"', "'"):
            try:
                end, key = self._quoted(content, 0, line)
            except _Unterminated:
                return None
            after = content[end:].lstrip(" ")
            if not after.startswith(":") or (len(after) > 1 and after[1] not in " \t"):
                return None
            rest = after[1:].lstrip(" \t")
            return key, rest, line.indent + len(content) - len(rest)
        if content[:1] in ("[", "{", "-", "|", ">", "!", "%", "@", "`", "#"):
            if not (content[:1] == "-" and len(content) > 1 and content[1] not in " \t"):
                return None
        match = re.match(r"((?:[^:# \t]|:(?=[^ \t])|[ \t]+(?=[^# \t:]|:[^ \t])|(?<=[^ \t])#)*?)[ \t]*:(?:[ \t]+|$)", content)
        if match is None:
            return None
        key_text = match.group(1)
        if not key_text:
            return None
        rest = content[match.end():]
        key = resolve_plain(key_text)
        return key, rest.strip(" \t") if not rest.lstrip(" \t").startswith(("|", ">")) else rest.lstrip(" \t"), \
            line.indent + match.end()

    # ---- values on one line (and their continuations) ---------------------------------------------

    def inline_value(self, text, line, column, parent_indent, after_key=False):
        text = text.rstrip(" \t")
        head = text[:1]
        if head == "*":
            name, end = self._anchor_name(text, 0, line, column)
            trailing = text[end:].strip(_BLANK)
            if trailing and not trailing.startswith("#"):
                raise YAMLSubsetError("unexpected text after an alias", line.number, column + end + 1)
            return self._alias(name, line, column)
        if head == "&":
            name, end = self._anchor_name(text, 0, line, column)
            rest = text[end:].lstrip(" \t")
            if rest and not rest.startswith("#"):
                value = self.inline_value(rest, line, column + len(text) - len(rest), parent_indent, after_key)
            else:  # the anchored node is on the lines below
                value = self._nested(parent_indent, allow_sequence_at_same_indent=after_key)
            self.anchors[name] = value
            return value
        if head == "!":
            tag, _, rest = text.partition(" ")
            if tag not in _STD_TAGS:
                raise YAMLSubsetError(f"the tag {tag} is not supported", line.number, column + 1)
            value = self.inline_value(rest.lstrip(" "), line, column + len(tag) + 1, parent_indent) if rest.strip(_BLANK) \
                else self._nested(parent_indent)
            if tag in ("!!map", "!!seq"):
                return value
            # a scalar tag: the scalar's text (quoted or plain) read as the tag says
            scalar = value if isinstance(value, str) else _strip_comment(rest.strip(_BLANK))
            return _tagged(tag, scalar, line.number, column + 1)
        if head in ("|", ">"):
            return self.block_scalar(text, line, column, parent_indent)
        if head in ("[", "{"):
            source, start = self._gather_flow(text, line, column)
            value, end = self.flow(source, start, line)
            trailing = source[end:].strip(_BLANK)
            if trailing and not trailing.startswith("#"):
                raise YAMLSubsetError("unexpected text after a flow collection", line.number, column + end + 1)
            return value
        if head in ('"', "'"):
            source = text
            while True:
                try:
                    end, value = self._quoted(source, 0, line)
                    break
                except _Unterminated:
                    if self.pos >= len(self.lines):
                        raise YAMLSubsetError("unterminated quoted string", line.number, column + 1) from None
                    following = self.lines[self.pos]
                    self.pos += 1
                    source += "\n" + following.text
            trailing = source[end:].strip(_BLANK)
            if trailing and not trailing.startswith("#"):
                raise YAMLSubsetError("unexpected text after a quoted string", line.number, column + end + 1)
            return value
        value = _strip_comment(text)
        # plain multi-line scalars: continuation lines indented deeper than the parent
        parts = [value]
        while self.pos < len(self.lines):
            following = self.lines[self.pos]
            if following.indent < 0:
                blank_run = 0
                probe = self.pos
                while probe < len(self.lines) and self.lines[probe].indent < 0:
                    if self.lines[probe].text.strip(_BLANK).startswith("#"):  # a comment ends a plain scalar
                        return resolve_plain(value) if len(parts) == 1 else _fold_plain(parts)
                    blank_run += 1
                    probe += 1
                if probe < len(self.lines) and self.lines[probe].indent > parent_indent:
                    parts.extend([""] * blank_run)
                    self.pos = probe
                    continue
                break
            if following.indent <= parent_indent:
                break
            content = following.text[following.indent:]
            if self._mapping_key(content, following) is not None or content.startswith("- "):
                raise YAMLSubsetError("a mapping or sequence cannot follow a scalar here", following.number,
                                      following.indent + 1)
            parts.append(_strip_comment(content.rstrip(_BLANK)))
            self.pos += 1
        return resolve_plain(value) if len(parts) == 1 else _fold_plain(parts)

    def block_scalar(self, header, line, column, parent_indent):
        match = re.fullmatch(r"([|>])([1-9]?)([-+]?)([1-9]?)([ \t]+#.*)?", header)
        if match is None:
            raise YAMLSubsetError(f"bad block scalar header {header!r}", line.number, column + 1)
        style, chomp = match.group(1), match.group(3)
        explicit = match.group(2) or match.group(4)
        body = []
        indent = parent_indent + int(explicit) if explicit else None
        while self.pos < len(self.lines):
            following = self.lines[self.pos]
            raw = following.text
            if not raw.strip(_BLANK):
                body.append("")
                self.pos += 1
                continue
            leading = len(raw) - len(raw.lstrip(" "))
            if indent is None:
                if leading <= parent_indent:
                    break
                indent = leading
            if leading < indent:
                break
            body.append(raw[indent:])
            self.pos += 1
        # trailing blank lines belong to chomping
        content = body
        trailing = 0
        while content and content[-1] == "":
            content = content[:-1]
            trailing += 1
        if style == "|":
            text = "\n".join(content)
        else:
            text = _fold_block(content)
        if not content:
            return "" if chomp != "+" else "\n" * trailing
        if chomp == "-":
            return text
        if chomp == "+":
            return text + "\n" + "\n" * trailing
        return text + "\n"

    # ---- flow collections -------------------------------------------------------------------------

    def _gather_flow(self, text, line, column):
        """The flow collection's text, joined over lines until its brackets balance."""
        source = text
        while _flow_depth(source) > 0:
            if self.pos >= len(self.lines):
                raise YAMLSubsetError("unterminated flow collection", line.number, column + 1)
            following = self.lines[self.pos]
            self.pos += 1
            source += "\n" + following.text  # quoted scalars fold this break; elsewhere it is space
        return source, 0

    def flow(self, source, index, line):
        self._deeper(line, index + 1)
        try:
            return self._flow(source, index, line)
        finally:
            self.depth -= 1

    def _flow(self, source, index, line):
        opener = source[index]
        closer = "]" if opener == "[" else "}"
        index += 1
        items = [] if opener == "[" else {}
        while True:
            index = _skip_space(source, index)
            if index >= len(source):
                raise YAMLSubsetError("unterminated flow collection", line.number, index + 1)
            if source[index] == closer:
                return items, index + 1
            key, index = self.flow_scalar(source, index, line, stops=",:" + closer if opener == "{" else ",]:")
            if opener == "{" and isinstance(key, (dict, list)):  # `{{ x }}`: a collection cannot be a key
                raise YAMLSubsetError("a flow collection as a mapping key", line.number, index + 1)
            index = _skip_space(source, index)
            if index < len(source) and source[index] == ":":
                index = _skip_space(source, index + 1)
                if index < len(source) and source[index] in ",}]":
                    value = None
                else:
                    value, index = self.flow_scalar(source, index, line, stops="," + closer)
                if opener == "[":
                    items.append({key: value})
                else:
                    items[key] = value
            elif opener == "{":
                items[key] = None
            else:
                items.append(key)
            index = _skip_space(source, index)
            if index < len(source) and source[index] == ",":
                index += 1
            elif index < len(source) and source[index] == closer:
                continue
            else:
                raise YAMLSubsetError(f"expected `,` or `{closer}` in a flow collection", line.number, index + 1)

    def flow_scalar(self, source, index, line, stops):
        head = source[index]
        if head in ("[", "{"):
            return self.flow(source, index, line)
        if head in ('"', "'"):
            try:
                end, value = self._quoted(source, index, line)
                return value, end
            except _Unterminated:
                raise YAMLSubsetError("unterminated quoted string", line.number, index + 1) from None
        if head == "?" and source[index + 1: index + 2] in (" ", "\n", ""):
            raise YAMLSubsetError("complex mapping keys are not supported", line.number, index + 1)
        if head == "*":
            name, end = self._anchor_name(source, index, line, index)
            return self._alias(name, line, index), end
        if head == "&":
            name, end = self._anchor_name(source, index, line, index)
            start = _skip_space(source, end)
            if start >= len(source) or source[start] in ",]}":  # an anchored empty node
                value, end = None, start
            else:
                value, end = self.flow_scalar(source, start, line, stops)
            self.anchors[name] = value
            return value, end
        if head == "!":
            raise YAMLSubsetError("tags are not supported in flow collections", line.number, index + 1)
        end = index
        while end < len(source):
            char = source[end]
            if char in ",[]{}" and char in stops + "[]{}":
                break
            if char == ":" and (end + 1 >= len(source) or source[end + 1] in " ,]}"):
                break
            if char == "#" and source[end - 1] in " \t\n":
                break
            end += 1
        return resolve_plain(re.sub(r"[ \t]*\n[ \t]*", " ", source[index:end].strip(_BLANK))), end

    def _quoted(self, source, index, line):
        """(end, value) of the quoted scalar at `index`; raises _Unterminated at the end of `source`."""
        quote = source[index]
        lines = [[]]  # per source line: (character, escaped) pairs
        joins = []  # joins[i]: line i ends in an escaped line break
        position = index + 1
        while True:
            if position >= len(source):
                raise _Unterminated()
            char = source[position]
            if quote == "'" and char == "'":
                if source[position + 1: position + 2] == "'":
                    lines[-1].append(("'", True))
                    position += 2
                    continue
                return position + 1, _fold_quoted(lines, joins)
            if quote == '"' and char == '"':
                return position + 1, _fold_quoted(lines, joins)
            if char == "\n":
                joins.append(False)
                lines.append([])
                position += 1
                continue
            if quote == '"' and char == "\\":
                if position + 1 >= len(source):
                    raise _Unterminated()
                code = source[position + 1]
                if code == "\n":
                    joins.append(True)
                    lines.append([])
                    position += 2
                    continue
                if code in _ESCAPES:
                    lines[-1].append((_ESCAPES[code], True))
                    position += 2
                    continue
                lengths = {"x": 2, "u": 4, "U": 8}
                if code in lengths:
                    digits = source[position + 2: position + 2 + lengths[code]]
                    if len(digits) == lengths[code] and all(c in "0123456789abcdefABCDEF" for c in digits):
                        lines[-1].append((chr(int(digits, 16)), True))
                        position += 2 + lengths[code]
                        continue
                raise YAMLSubsetError(f"unknown escape \\{code}", line.number, position + 1)
            lines[-1].append((char, False))
            position += 1


class _Unterminated(Exception):
    pass


def _fold_quoted(lines, joins):
    """Line folding inside quoted scalars: a break becomes a space, n blank lines n breaks, an
    escaped break joins the lines; white space around breaks goes, escaped white space stays."""
    texts = []
    for number, chars in enumerate(lines):
        first, last = 0, len(chars)
        if number > 0:
            while first < last and chars[first][0] in " \t" and not chars[first][1]:
                first += 1
        if number < len(lines) - 1 and not joins[number]:
            while last > first and chars[last - 1][0] in " \t" and not chars[last - 1][1]:
                last -= 1
        texts.append("".join(c for c, _ in chars[first:last]))
    out, breaks = texts[0], 0
    for number in range(1, len(texts)):
        piece = texts[number]
        if joins[number - 1]:
            out += piece
        elif not piece and number < len(texts) - 1:
            breaks += 1
            continue
        else:
            out += ("\n" * breaks if breaks else " ") + piece
        breaks = 0
    return out


def _strip_comment(text):
    match = re.search(r"[ \t]#", text)
    return (text[: match.start()] if match else text).rstrip(" \t")


def _fold_plain(parts):
    out = parts[0]
    empties = 0
    for piece in parts[1:]:
        if not piece:
            empties += 1
            continue
        out += ("\n" * empties if empties else " ") + piece.strip(_BLANK)
        empties = 0
    return out


def _fold_block(lines):
    """Folded (`>`) scalars: a single break between two ordinary lines becomes a space, n blank
    lines give n breaks; lines indented further than the block (and breaks around them) are kept."""
    out, previous_normal, breaks, started = "", False, 0, False
    for line in lines:
        if line == "":
            breaks += 1
            continue
        normal = not line.startswith((" ", "\t"))
        if not started:
            separator = "\n" * breaks
        elif previous_normal and normal:
            separator = "\n" * breaks if breaks else " "
        else:
            separator = "\n" * (breaks + 1)
        out += separator + line
        started, previous_normal, breaks = True, normal, 0
    return out


def _count_nodes(value):
    """Nodes of a value (each collection and each scalar one)."""
    count, stack = 0, [value]
    while stack:
        node = stack.pop()
        count += 1
        if isinstance(node, dict):
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return count


def _copy(value):
    if isinstance(value, dict):
        return {key: _copy(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_copy(item) for item in value]
    return value


def _flow_depth(text):
    depth, quote, index = 0, None, 0
    while index < len(text):
        char = text[index]
        if quote:
            if char == "\\" and quote == '"':
                index += 1
            elif char == quote:
                quote = None
        elif char in "\"'" and (index == 0 or text[index - 1] in " ,[{:"):
            quote = char
        elif char in "[{":
            depth += 1
        elif char in "]}":
            depth -= 1
        elif char == "#" and (index == 0 or text[index - 1] in " \t"):
            break
        index += 1
    return depth


def _skip_space(source, index):
    while index < len(source) and source[index] in " \t\n":
        index += 1
    return index


def load_all(text):
    """Every document of `text` (a str), as dicts, lists and scalars; empty documents are skipped."""
    if text.startswith("\ufeff"):
        text = text[1:]
    return [doc for doc in _Reader(text).documents() if doc is not None]
