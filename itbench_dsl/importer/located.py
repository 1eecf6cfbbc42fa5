"""ITBench files read with the position of every value, so that import diagnostics point into them.

`load(path, diags)` returns a `Located`: the plain data and a map from each value's path (a tuple of
keys and list indexes) to its offset in the text. YAML positions come from `yaml.compose`; JSON
positions from a small scanner that walks the text `json` has already accepted.

What is read is bounded: a file larger than MAX_BYTES, or a YAML document whose aliases expand it past
MAX_VALUES values (a "billion laughs" file: `b: &b [*a, *a, ...]` nested level upon level) or make a value
contain itself, is an E5001 error pointing at the alias that multiplies, not a hang.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from json.decoder import scanstring
from pathlib import Path
from typing import Any

import yaml

from ..diagnostics import Diagnostics
from ..source import NO_SPAN, SourceFile, Span

_WS = " \t\r\n"
MAX_BYTES = 4 * 1024 * 1024  # larger files are not ITBench scenario files
MAX_VALUES = 200_000  # nor are YAML documents with more values than this, their aliases expanded


@dataclass
class Located:
    path: str  # as diagnostics show it
    source: SourceFile
    data: Any
    offsets: dict[tuple, int] = field(default_factory=dict)

    def span(self, where: tuple = ()) -> Span:
        """The span of the value at `where`, or of its nearest ancestor that has a position."""
        where = tuple(where)
        while where and where not in self.offsets:
            where = where[:-1]
        offset = self.offsets.get(where)
        if offset is None:
            return NO_SPAN
        end = offset + 1
        text = self.source.text
        while end < len(text) and text[end] not in "\n,:}]":
            end += 1
        return self.source.span(offset, max(offset + 1, min(end, len(text))))

    def error(self, diags: Diagnostics, code: str, message: str, where: tuple = (), label: str = "", help: str = ""):
        diags.error(code, message, self.path, self.span(where), label, help)


def display_path(path: Path) -> str:
    import os

    try:
        return os.path.relpath(path)
    except ValueError:
        return str(path)


def read_bounded(path: Path, limit: int) -> bytes:
    """The bytes of the regular file `path`, at most `limit` + 1 of them (the caller reports a larger file).
    ValueError for a FIFO, a device or a folder, refused without reading it (opening a FIFO does not wait
    for a writer); OSError when it cannot be read."""
    import os
    import stat

    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0))
    with os.fdopen(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise ValueError("is not a regular file")
        return handle.read(limit + 1)


def load(path: Path, diags: Diagnostics) -> Located | None:
    """Read a JSON or YAML file (by its suffix). A file that cannot be read or parsed is an E5001 error."""
    shown = display_path(path)
    try:
        raw = read_bounded(path, MAX_BYTES)
    except OSError as exc:
        diags.error("E5001", f"cannot read `{shown}`: {exc.strerror or exc}", shown, NO_SPAN, "",
                    "check the path and the file's permissions")
        return None
    except ValueError as exc:
        diags.error("E5001", f"`{shown}` {exc}", shown, NO_SPAN, "", "an ITBench scenario file is a regular file")
        return None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        source = SourceFile(shown, raw.decode("utf-8", "replace"))
        diags.sources[shown] = source
        diags.error("E5001", "the file is not UTF-8 text", shown, source.span(exc.start, exc.start + 1),
                    "invalid byte", "ITBench files are UTF-8 JSON or YAML")
        return None
    if len(raw) > MAX_BYTES:
        diags.error("E5001", f"the file is larger than {MAX_BYTES // (1024 * 1024)} MiB", shown, NO_SPAN, "",
                    "an ITBench scenario file is a few kilobytes of JSON or YAML")
        return None
    if text.startswith("\ufeff"):
        text = text[1:]
    source = SourceFile(shown, text)
    diags.sources[shown] = source
    if not text.strip():
        diags.error("E5001", "the file is empty", shown, NO_SPAN, "", "an ITBench scenario file holds a JSON or YAML mapping")
        return None
    if path.suffix == ".json":
        return _load_json(shown, source, diags)
    return _load_yaml(shown, source, diags)


def _load_json(shown: str, source: SourceFile, diags: Diagnostics) -> Located | None:
    text = source.text
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        diags.error("E5001", f"the file is not valid JSON: {exc.msg}", shown, source.span(exc.pos, exc.pos + 1),
                    "here", "ITBench scenario index files are JSON")
        return None
    except RecursionError:
        diags.error("E5001", "the file nests too deeply", shown, NO_SPAN)
        return None
    except ValueError as exc:  # an integer of more digits than Python converts (4300)
        diags.error("E5001", f"the file is not usable JSON: {str(exc).split(';')[0]}", shown, NO_SPAN)
        return None
    located = Located(shown, source, data)
    try:
        _scan_json(text, 0, (), located.offsets, 0)
    except (ValueError, IndexError, RecursionError):  # positions are a convenience: the data is already read
        pass
    return located


def _skip(text: str, i: int) -> int:
    while i < len(text) and text[i] in _WS:
        i += 1
    return i


_DECODER = json.JSONDecoder()


def _scan_json(text: str, i: int, where: tuple, offsets: dict, depth: int) -> int:
    i = _skip(text, i)
    offsets[where] = i
    if depth > 200:
        raise ValueError("too deep")
    char = text[i]
    if char == "{":
        i = _skip(text, i + 1)
        if text[i] == "}":
            return i + 1
        while True:
            key, i = scanstring(text, _skip(text, i) + 1)
            i = _skip(text, i)
            i = _scan_json(text, i + 1, where + (key,), offsets, depth + 1)  # past ':'
            i = _skip(text, i)
            if text[i] == "}":
                return i + 1
            i += 1  # ','
    if char == "[":
        i = _skip(text, i + 1)
        if text[i] == "]":
            return i + 1
        index = 0
        while True:
            i = _skip(text, _scan_json(text, i, where + (index,), offsets, depth + 1))
            index += 1
            if text[i] == "]":
                return i + 1
            i += 1
    _, end = _DECODER.raw_decode(text, i)
    return end


def _load_yaml(shown: str, source: SourceFile, diags: Diagnostics) -> Located | None:
    text = source.text
    loader_class = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        loader = loader_class(text)  # one parse gives the nodes (with their marks) and the data
        try:
            nodes = []
            while loader.check_node():
                nodes.append(loader.get_node())
            nodes = [n for n in nodes if not (isinstance(n, yaml.ScalarNode) and n.tag.endswith(":null"))]
            for node in nodes:  # before anything walks the values: aliases may multiply them without bound
                problem = _expansion_problem(node)
                if problem is not None:
                    message, at = problem
                    diags.error("E5001", message, shown, source.span(at.start_mark.index, at.start_mark.index + 1),
                                "here", "ITBench files do not repeat values through YAML aliases; write the values "
                                "out, once each")
                    return None
            documents = [loader.construct_document(n) for n in nodes]
        finally:
            loader.dispose()
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        span = source.span(mark.index, mark.index + 1) if mark is not None else NO_SPAN
        diags.error("E5001", f"the file is not valid YAML: {exc.problem or exc.context}", shown, span, "here",
                    "ITBench's compiled scenario files are YAML")
        return None
    except (yaml.YAMLError, RecursionError, ValueError, TypeError) as exc:
        diags.error("E5001", f"the file is not valid YAML: {type(exc).__name__}", shown, NO_SPAN)
        return None
    if len(documents) != 1 or len(nodes) != 1:
        diags.error("E5001", f"the file holds {len(documents)} YAML documents, not one", shown, NO_SPAN, "",
                    "an ITBench scenario file is one YAML mapping")
        return None
    located = Located(shown, source, documents[0])
    _walk_yaml(nodes[0], (), located.offsets, 0)
    return located


def _walk_yaml(node, where: tuple, offsets: dict, depth: int) -> None:
    offsets[where] = node.start_mark.index
    if depth > 200:
        return
    if isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            if isinstance(key, yaml.ScalarNode):
                _walk_yaml(value, where + (key.value,), offsets, depth + 1)
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            _walk_yaml(item, where + (index,), offsets, depth + 1)


def _children(node) -> list:
    if isinstance(node, yaml.MappingNode):
        return [part for pair in node.value for part in pair]
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    return []


def _expansion_problem(root) -> tuple[str, object] | None:
    """Why the document cannot be read for its aliases, and the node to point at: a value that contains
    itself, or more than MAX_VALUES values once every alias is expanded (the node where they multiply).

    Aliases share nodes, so the expanded size of each node is computed once (no expansion takes place);
    the walk keeps its own stack, as documents may nest deeper than Python recurses."""
    sizes: dict[int, int] = {}
    open_nodes: set[int] = set()
    stack: list[tuple[object, bool]] = [(root, False)]
    while stack:
        node, done = stack.pop()
        key = id(node)
        if done:
            open_nodes.discard(key)
            sizes[key] = min(MAX_VALUES + 1, 1 + sum(sizes[id(child)] for child in _children(node)))
            continue
        if key in sizes:
            continue
        if key in open_nodes:
            return "an alias refers to a value that contains it: the value would never end", node
        open_nodes.add(key)
        stack.append((node, True))
        for child in _children(node):
            if id(child) in open_nodes:
                return "an alias refers to a value that contains it: the value would never end", child
            if id(child) not in sizes:
                stack.append((child, False))
    if sizes[id(root)] <= MAX_VALUES:
        return None
    node = root  # down to the node whose own children multiply past the bound
    while True:
        bigger = [c for c in _children(node) if sizes[id(c)] > MAX_VALUES]
        if not bigger:
            break
        node = bigger[0]
    return (f"the YAML document expands to more than {MAX_VALUES} values through its aliases (a \"billion laughs\" "
            "file)"), node
