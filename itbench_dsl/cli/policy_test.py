"""`itbench policy-test`: Kyverno CLI test suites, offline, with itbench's own Kyverno matcher.

Everything a suite names is read through `_Reader`, which bounds what it reads: regular files only
(a device, a FIFO, a folder or a symlink loop is an error naming the file, never a hang), at most
MAX_BYTES each, UTF-8, YAML nested at most MAX_DEPTH levels and expanding through aliases to at most
MAX_VALUES values, never containing itself. It remembers where each document came from, so that the
suite runner's errors (a value of the wrong type, found by runtime/kyverno/shape.py) point at a line.
"""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path
from typing import Any

import click

from .common import EXIT_CLEAN, EXIT_ERROR, EXIT_FINDINGS, UserError, display

MAX_BYTES = 4 * 1024 * 1024  # a policy, a resource file or a suite is a few kilobytes
MAX_VALUES = 1_000_000  # values of one YAML document once its aliases are expanded


class _Reader:
    """Reads the YAML files of suites, bounded; keeps each document's nodes to locate its values."""

    def __init__(self) -> None:
        import yaml

        from ..runtime import kyverno

        self.yaml, self.kyverno = yaml, kyverno
        base = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

        class Loader(base):  # type: ignore[misc, valid-type]
            def construct_mapping(self, node, deep=False):  # keys as Kubernetes' YAML reader makes them
                data = super().construct_mapping(node, deep)
                if all(isinstance(k, str) for k in data):
                    return data
                return {_key(k): v for k, v in data.items()}

        # timestamps stay strings, as in Kubernetes objects (not datetime objects)
        Loader.add_constructor("tag:yaml.org,2002:timestamp", Loader.construct_yaml_str)
        self.Loader = Loader
        self.nodes: dict[int, tuple[Any, Any, str]] = {}  # id(document) -> (document, node, shown path)

    def error(self, shown: str, message: str, mark: Any = None) -> Exception:
        where = f"{shown}:{mark.line + 1}:{mark.column + 1}" if mark is not None else shown
        return self.kyverno.KyvernoError(f"{where}: {message}")

    def read_text(self, name: str) -> tuple[str, str]:
        path = Path(name)
        shown = display(path)
        try:
            info = os.stat(path)  # follows symlinks; a loop is ELOOP
        except OSError as exc:
            raise self.error(shown, f"cannot read: {exc.strerror or exc}") from None
        if not stat.S_ISREG(info.st_mode):
            raise self.error(shown, f"not a regular file ({_file_kind(info.st_mode)})")
        if info.st_size > MAX_BYTES:
            raise self.error(shown, f"the file is larger than {MAX_BYTES // (1024 * 1024)} MiB")
        try:  # O_NONBLOCK: should the file be swapped for a FIFO after the check, opening does not wait
            fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0))
            try:
                if not stat.S_ISREG(os.fstat(fd).st_mode):
                    raise self.error(shown, "not a regular file")
                with os.fdopen(fd, "rb", closefd=False) as f:
                    raw = f.read(MAX_BYTES + 1)
            finally:
                os.close(fd)
        except OSError as exc:
            raise self.error(shown, f"cannot read: {exc.strerror or exc}") from None
        if len(raw) > MAX_BYTES:
            raise self.error(shown, f"the file is larger than {MAX_BYTES // (1024 * 1024)} MiB")
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            line = raw.count(b"\n", 0, exc.start) + 1
            column = exc.start - (raw.rfind(b"\n", 0, exc.start) + 1) + 1
            raise self.kyverno.KyvernoError(f"{shown}:{line}:{column}: the file is not UTF-8 text") from None
        if "\x00" in text:
            line = text.count("\n", 0, text.index("\x00")) + 1
            raise self.kyverno.KyvernoError(f"{shown}:{line}: the file holds a NUL character: not YAML text")
        return shown, text.removeprefix("\ufeff")

    def load(self, name: str) -> list:
        """The non-empty YAML documents of the file `name`."""
        yaml = self.yaml
        shown, text = self.read_text(name)
        limit = self.kyverno.MAX_DEPTH
        try:
            # libyaml composes at most 1000 levels (deeper is a located scanner error; the pure-Python
            # loader's RecursionError is caught below); the nodes are measured before anything is built
            loader = self.Loader(text)
            try:
                nodes = []
                while loader.check_node():
                    nodes.append(loader.get_node())
                for node in nodes:  # before anything is built: aliases may multiply values without end
                    problem = _expansion_problem(node, limit)
                    if problem is not None:
                        raise self.error(shown, problem[0], problem[1].start_mark)
                documents = [(loader.construct_document(node), node) for node in nodes]
            finally:
                loader.dispose()
        except yaml.MarkedYAMLError as exc:
            mark = exc.problem_mark or exc.context_mark
            message = " ".join(str(exc.problem or exc.context or "").split())
            raise self.error(shown, f"invalid YAML: {message}", mark) from None
        except (yaml.YAMLError, ValueError, TypeError, OverflowError, RecursionError) as exc:
            raise self.error(shown, f"invalid YAML: {type(exc).__name__}: {exc}"[:300]) from None
        out = []
        for document, node in documents:
            if document is None:
                continue
            if isinstance(document, (dict, list)):
                self.nodes[id(document)] = (document, node, shown)
            out.append(document)
        return out

    def locate(self, document: Any, where: tuple) -> str:
        """`file:line:col` of the value at `where` in a document this reader loaded ("" if unknown);
        for no document and `where` = (path,), the path of that file as the command shows it."""
        if document is None:
            return display(Path(where[0])) if where else ""
        known = self.nodes.get(id(document)) if isinstance(document, (dict, list)) else None
        if known is None or known[0] is not document:
            return ""
        _, node, shown = known
        for part in where:
            child = None
            if isinstance(node, self.yaml.MappingNode):
                child = next((v for k, v in node.value if isinstance(k, self.yaml.ScalarNode) and k.value == part),
                             None)
            elif isinstance(node, self.yaml.SequenceNode) and isinstance(part, int) and part < len(node.value):
                child = node.value[part]
            if child is None:
                break
            node = child
        mark = node.start_mark
        return f"{shown}:{mark.line + 1}:{mark.column + 1}"


def _key(key: Any) -> str:
    if isinstance(key, str):
        return key
    if key is None:
        return "null"
    if isinstance(key, bool):
        return "true" if key else "false"
    return str(key)


def _file_kind(mode: int) -> str:
    for test, name in ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return name
    return "not a file"


def _children(node: Any) -> list:
    import yaml

    if isinstance(node, yaml.MappingNode):
        return [part for pair in node.value for part in pair]
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    return []


def _expansion_problem(root: Any, limit: int) -> tuple[str, Any] | None:
    """Why a composed YAML document cannot be built, and the node to point at: nesting deeper than
    `limit`, more than MAX_VALUES values once its aliases are expanded, or a value that contains itself
    (which nests without end). The expanded tree is walked with an explicit stack and a budget of
    MAX_VALUES nodes, so the walk itself is bounded whatever the aliases do."""
    import yaml

    containers = (yaml.MappingNode, yaml.SequenceNode)
    stack: list[tuple[Any, int, Any]] = [(root, 0, None)]  # (node, depth, the parent's entry)
    visited = 0
    while stack:
        entry = stack.pop()
        node, depth, _ = entry
        visited += 1
        if visited > MAX_VALUES:
            return f"the YAML document expands to more than {MAX_VALUES} values through its aliases", node
        if depth > limit:
            seen: set[int] = set()
            chain = entry
            while chain is not None:  # the path down to this node: does a node repeat on it?
                if id(chain[0]) in seen:
                    return "an alias refers to a value that contains it: the value would never end", chain[0]
                seen.add(id(chain[0]))
                chain = chain[2]
            return f"nesting deeper than {limit} levels", node
        for child in _children(node):
            if isinstance(child, containers):
                stack.append((child, depth + 1, entry))
            else:
                visited += 1
    return None


def _suites(paths: tuple[str, ...]) -> list[Path]:
    """The suites named: files as given, and every kyverno-test.yaml below each folder (whatever its
    type, so that a FIFO or a dangling link there is reported, not skipped)."""
    files: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            found = sorted(path.rglob("kyverno-test.yaml"))
            if not found:
                raise UserError(f"{raw}: no kyverno-test.yaml files in this folder")
            files.extend(found)
        elif os.path.lexists(path):
            files.append(path)
        else:
            raise UserError(f"{raw}: no such file or folder")
    return files


@click.command("policy-test")
@click.argument("paths", nargs=-1, required=True, type=click.Path())
@click.option("--format", "fmt", type=click.Choice(("human", "json")), default="human", show_default=True,
              help="human: a table per suite, like `kyverno test`; json: for tools.")
@click.option("--failed-only", is_flag=True, help="In the table, show only the results that were not met.")
def command(paths: tuple[str, ...], fmt: str, failed_only: bool) -> None:
    """Run Kyverno CLI test suites offline with itbench's own Kyverno matcher.

    Each PATH is a kyverno-test.yaml file or a folder: every kyverno-test.yaml below it
    (including .kyverno-test/ folders) is a suite. Each expected result (policy, rule,
    resource, pass/fail/skip) is reported as met, not met, or unsupported: validate rules
    with pattern, anyPattern, deny, foreach and preconditions, anchors, wildcards, operators,
    JMESPath variables and autogen rules are supported; a result that needs anything else is
    reported unsupported, with the rule and the field named (docs/policy-test.md).

    Exit codes: 0 every expected result met, 1 some not met or unsupported,
    2 unusable input (no suite found, unreadable, invalid or malformed files).

    \b
    Examples:
      itbench policy-test ../shared/reference/kyverno/policy-tests/
      itbench policy-test --format json policies/my-policy/.kyverno-test/kyverno-test.yaml
    """
    import json

    from ..runtime import kyverno

    suites = _suites(paths)
    reports = []
    for suite in suites:
        reader = _Reader()  # per suite: its memory of documents goes with it
        try:
            docs = reader.load(str(suite))
        except kyverno.KyvernoError as exc:
            report = kyverno.SuiteReport(path=display(suite), name="", error=str(exc))
        else:
            if len(docs) != 1 or not isinstance(docs[0], dict):
                what = f"{len(docs)} YAML documents" if len(docs) != 1 else \
                    f"a {'list' if isinstance(docs[0], list) else 'scalar value'}"
                at = (reader.locate(docs[min(1, len(docs) - 1)], ()) if docs else "") or display(suite)
                report = kyverno.SuiteReport(path=display(suite), name="", error=(
                    f"{at}: holds {what}, not one Kyverno test (a map with policies, resources and results)"))
            else:
                report = kyverno.run_test_suite(docs[0], str(suite.parent), reader.load, os.path.join,
                                                reader.locate)
                report.path = display(suite)
        reports.append(report)

    statuses = [r.status for r in reports]
    if fmt == "json":
        click.echo(json.dumps({
            "suites": [{
                "path": r.path, "name": r.name, "status": r.status, "passed": r.passed,
                "unsupported": r.unsupported or None, "error": r.error or None,
                "results": [{"policy": x.policy, "rule": x.rule, "resource": x.resource, "kind": x.kind,
                             "expected": x.expected, "actual": x.actual, "met": x.met,
                             "unsupported": x.unsupported, "detail": x.detail}
                            for x in r.results],
            } for r in reports],
            "summary": {"suites": len(reports), "passed": statuses.count("pass"),
                        "failed": statuses.count("fail"), "unsupported": statuses.count("unsupported"),
                        "errors": statuses.count("error"),
                        "results": sum(len(r.results) for r in reports),
                        "met": sum(x.met for r in reports for x in r.results),
                        "results_unsupported": sum(x.unsupported for r in reports for x in r.results)},
        }, indent=2))
    else:
        from ..diagnostics import (
            escape_controls,  # names and messages come from the input: print them inert
        )

        for r in reports:
            title = escape_controls(f"{r.path}" + (f" ({r.name})" if r.name else ""))
            if r.error:
                click.echo(f"ERROR  {title}: {escape_controls(r.error)}")
                continue
            met = sum(x.met for x in r.results)
            unsupported = sum(x.unsupported for x in r.results)
            line = f"{r.status.upper()}  {title}: {met}/{len(r.results)} results met"
            if unsupported:
                line += f", {unsupported} unsupported: {escape_controls(r.unsupported)}"
            click.echo(line)
            rows = [x for x in r.results if not (failed_only and x.met)]
            if not rows or (r.passed and failed_only):
                continue
            table = [("ID", "POLICY", "RULE", "RESOURCE", "RESULT", "REASON")]
            for i, x in enumerate(rows, 1):
                if x.met:
                    result, reason = "Pass", "Ok"
                elif x.unsupported:
                    result, reason = "Unsupported", x.detail
                else:
                    result = "Fail"
                    reason = f"Want {x.expected}, got {x.actual}" + (f": {x.detail}" if x.detail else "")
                table.append(tuple(escape_controls(cell) for cell in (
                    str(i), x.policy, x.rule, f"{x.kind}/{x.resource}", result, reason[:160])))
            widths = [max(len(row[c]) for row in table) for c in range(5)]
            for row in table:
                click.echo("  " + "  ".join(cell.ljust(widths[c]) for c, cell in enumerate(row[:5])) + "  " + row[5])
        counts = ", ".join(f"{statuses.count(s)} {s}" for s in ("fail", "unsupported", "error") if s in statuses)
        click.echo(f"{statuses.count('pass')} of {len(reports)} suite(s) passed" + (f" ({counts})" if counts else ""),
                   err=True)
    sys.exit(EXIT_ERROR if "error" in statuses else EXIT_CLEAN if set(statuses) <= {"pass"} else EXIT_FINDINGS)
