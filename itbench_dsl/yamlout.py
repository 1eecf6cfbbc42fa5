"""A small YAML emitter for JSON-shaped data: block style, deterministic, safe quoting.

Why not PyYAML's dumper: it dominated compile time (~90 % of a scenario's compile), and its
output depends on whether libyaml is present. This emitter writes the JSON subset only
(dict, list, str, int, float, bool, None), quotes every string that any YAML 1.1 or 1.2
loader could read as something else (`yes`, `on`, `y`, `1:20`, `0x1F`, `~`, leading `-`,
`: `, ` #` ...), and never emits tags, anchors or flow collections with content, so no
scenario text can change the structure of the YAML it lands in. `yaml.safe_load` of the
output gives back the input (property-tested).
"""

from __future__ import annotations

import math
import re

# A plain scalar: starts with a letter, `_` or `/`; segments joined by single spaces or by `:`
# that is followed by more text; no `#` anywhere. Everything else is quoted.
_SEG = r"[A-Za-z0-9_./=@+()$,*<>^~?!%&'\"\[\]{}|\\-]"
_PLAIN = re.compile(rf"[A-Za-z_/]{_SEG}*(?:[: ]{_SEG}+)*")
# words that YAML 1.1 loaders (PyYAML, go-yaml v2 used by older kubectl) read as booleans or null
_RESERVED = {"y", "n", "yes", "no", "true", "false", "on", "off", "null"}
_ESCAPES = {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\t": "\\t", "\r": "\\r", "\0": "\\0"}


def _quote(text: str) -> str:
    out = ['"']
    for char in text:
        escaped = _ESCAPES.get(char)
        if escaped is not None:
            out.append(escaped)
        elif char.isprintable() and char not in "\u2028\u2029\ufeff":
            out.append(char)
        else:
            code = ord(char)
            out.append(f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}")
    out.append('"')
    return "".join(out)


def scalar(value) -> str:
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return ".nan"
        if math.isinf(value):
            return ".inf" if value > 0 else "-.inf"
        mantissa, _, exponent = repr(value).partition("e")
        if "." not in mantissa:  # YAML 1.1 floats need a dot, and a signed exponent (repr gives one)
            mantissa += ".0"
        return f"{mantissa}e{exponent}" if exponent else mantissa
    if isinstance(value, str):
        if _PLAIN.fullmatch(value) and value.lower() not in _RESERVED:
            return value
        return _quote(value)
    raise TypeError(f"cannot write {type(value).__name__} as YAML")


def _literal_block(text: str, indent: str) -> str | None:
    """`|` block for multi-line text when it can be written exactly; None otherwise."""
    if "\n" not in text or not text.strip("\n") or "\r" in text:
        return None
    if not text.replace("\n", "").replace("\t", "").isprintable() or any(c in text for c in "\u2028\u2029\ufeff"):
        return None
    body = text.rstrip("\n")
    trailing = len(text) - len(body)
    chomp = "-" if trailing == 0 else "" if trailing == 1 else "+"
    lines = body.split("\n")
    first = next(line for line in lines if line.strip() or line)
    indicator = "2" if first.startswith((" ", "\t")) else ""
    if any(line.endswith((" ", "\t")) for line in lines) or any(line.startswith("\t") for line in lines):
        return None
    child = indent + "  "
    out = [f"|{indicator}{chomp}"]
    out.extend(child + line if line else "" for line in lines)
    out.extend("" for _ in range(trailing - 1))
    return "\n".join(out)


def _emit(value, indent: str, out: list[str]) -> None:
    """Append the block-style lines of a dict or list at `indent`."""
    if isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, str):
                raise TypeError("YAML mapping keys must be strings here")
            _emit_entry(f"{indent}{scalar(key)}:", item, indent, out)
    else:
        for item in value:
            if isinstance(item, (dict, list)) and item:
                # "- first: value" (or "- - item") then the rest aligned under the first
                lines: list[str] = []
                _emit(item, indent + "  ", lines)
                lines[0] = f"{indent}- " + lines[0][len(indent) + 2:]
                out.extend(lines)
            else:
                _emit_entry(f"{indent}-", item, indent, out)


def _emit_entry(head: str, item, indent: str, out: list[str]) -> None:
    if isinstance(item, (dict, list)):
        if not item:
            out.append(head + (" {}" if isinstance(item, dict) else " []"))
        else:
            out.append(head)
            _emit(item, indent + "  ", out)
    elif isinstance(item, str) and "\n" in item:
        block = _literal_block(item, indent)
        out.append(f"{head} {block if block is not None else _quote(item)}")
    else:
        out.append(f"{head} {scalar(item)}")


def sorted_keys(value):
    """The same data with every mapping's keys in sorted order (ITBench writes its files so)."""
    if isinstance(value, dict):
        return {k: sorted_keys(value[k]) for k in sorted(value)}
    if isinstance(value, list):
        return [sorted_keys(v) for v in value]
    return value


def dump(value) -> str:
    """One document's body (no `---`)."""
    if isinstance(value, (dict, list)) and value:
        out: list[str] = []
        _emit(value, "", out)
        return "\n".join(out) + "\n"
    if isinstance(value, dict):
        return "{}\n"
    if isinstance(value, list):
        return "[]\n"
    return scalar(value) + "\n"


def dump_all(documents) -> str:
    return "".join("---\n" + dump(doc) for doc in documents)
