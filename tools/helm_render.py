#!/usr/bin/env python3
"""Render a Helm chart into plain manifests, for the subset of Helm's templates a chart uses.

Maintainer tool for the standard library: a chart is rendered here, then turned into an `.itb`
application by tools/app_from_manifests.py. No Helm binary is needed, and nothing outside the
subset is guessed at: a construct the renderer does not know is an error naming the template.

    python3 tools/helm_render.py CHART_FOLDER --release NAME --namespace NS [-o OUT.yaml]

What it renders, as `helm template` would:
  * the chart and its local subcharts (`charts/NAME/`, listed in Chart.yaml's `dependencies`, with
    their `condition` evaluated against the chart's values); a packaged subchart (`charts/*.tgz`)
    whose condition holds is an error (it would have to be unpacked and its templates rendered);
  * each subchart's `.Values`: its values.yaml, the parent's `global` and the parent's values under
    the subchart's name; `.Release.Name`, `.Release.Namespace`, `.Files.Get` (the chart's own files);
  * every `templates/*.yaml` (and below), after the `define`s of every `.tpl` of the chart and its
    parent (Helm shares named templates between a chart and its subcharts).

The template language subset: actions `{{ }}` with `-` trimming; `define`, `include`, `template`,
`if`/`else if`/`else`, `range` (with or without `$var :=`), `with`, `end`, comments; pipelines with
`|` and parentheses; values `.a.b`, `$`, `$var.a`, strings, numbers, `true`/`false`/`nil`; and the
functions default, quote, trim, indent, nindent, toString, int, printf (%s %d %v), ternary, hasKey,
eq, ne, not, and, or, tpl, include.

Bounded: templates nest at most MAX_DEPTH includes deep and the output is at most MAX_OUTPUT
characters. Output is deterministic: the documents in the order Helm sorts its templates (by file
path) and `---` between them.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

import yaml

MAX_DEPTH = 50
MAX_OUTPUT = 8 * 1024 * 1024


class RenderError(Exception):
    pass


# ---- parsing templates ---------------------------------------------------------------------------------

_ACTION = re.compile(r"\{\{(-?)(.*?)(-?)\}\}", re.S)


def _tokens(text: str, where: str) -> list[tuple[str, str]]:
    """The template as ("text", s) and ("action", s) pieces, trimming whitespace where `{{-`/`-}}` ask."""
    out: list[tuple[str, str]] = []
    pos = 0
    trim_next = False
    for m in _ACTION.finditer(text):
        chunk = text[pos:m.start()]
        if trim_next:
            chunk = chunk.lstrip()
        if m.group(1) == "-" and m.group(2)[:1] in " \t\n":
            chunk = chunk.rstrip()
        out.append(("text", chunk))
        body = m.group(2)
        trim_next = m.group(3) == "-" and body[-1:] in " \t\n"
        out.append(("action", body.strip()))
        pos = m.end()
    chunk = text[pos:]
    out.append(("text", chunk.lstrip() if trim_next else chunk))
    if "{{" in "".join(s for k, s in out if k == "text"):
        raise RenderError(f"{where}: an unclosed `{{{{`")
    return out


def parse(text: str, where: str, defines: dict) -> list:
    """A template's node list; `define` blocks go into `defines`."""
    tokens = _tokens(text, where)
    nodes, _ = _parse_nodes(tokens, 0, where, defines, top=True)
    return nodes


_BLOCK = re.compile(r"(if|range|with|define|else|end)\b(.*)\Z", re.S)


def _parse_nodes(tokens, i, where, defines, top=False, stop=("end",)):
    nodes = []
    while i < len(tokens):
        kind, value = tokens[i]
        if kind == "text":
            if value:
                nodes.append(("text", value))
            i += 1
            continue
        if value.startswith("/*"):
            i += 1
            continue
        m = _BLOCK.match(value)
        word, rest = (m.group(1), m.group(2).strip()) if m else (None, value)
        if word in ("end", "else"):
            if top:
                raise RenderError(f"{where}: `{value}` without an open block")
            return nodes, i
        if word == "define":
            name = _string_literal(rest, where)
            body, i = _parse_nodes(tokens, i + 1, where, defines)
            if tokens[i][1] != "end":
                raise RenderError(f"{where}: `define {name}` has an `else`")
            defines[name] = body
            i += 1
            continue
        if word in ("if", "with", "range"):
            body, i = _parse_nodes(tokens, i + 1, where, defines)
            branches = [(rest, body)]
            otherwise = None
            while tokens[i][1] != "end":
                tail = tokens[i][1][len("else"):].strip()
                body, i = _parse_nodes(tokens, i + 1, where, defines)
                if tail.startswith("if "):
                    branches.append((tail[3:].strip(), body))
                elif not tail:
                    otherwise = body
                else:
                    raise RenderError(f"{where}: `else {tail}` is not in the subset")
            nodes.append((word, branches, otherwise))
            i += 1
            continue
        nodes.append(("expr", value))
        i += 1
    if not top:
        raise RenderError(f"{where}: a block is not closed with `end`")
    return nodes, i


def _string_literal(text: str, where: str) -> str:
    m = re.fullmatch(r'"((?:[^"\\]|\\.)*)"', text.strip())
    if not m:
        raise RenderError(f"{where}: expected a string, got `{text}`")
    return bytes(m.group(1), "utf-8").decode("unicode_escape")


# ---- expressions ----------------------------------------------------------------------------------------

_TOKEN = re.compile(r'\s*("(?:[^"\\]|\\.)*"|\(|\)|\||:=|\$[A-Za-z_0-9]*(?:\.[A-Za-z_0-9]+)*|'
                    r'(?:\.[A-Za-z_0-9]+)+|\.|-?\d+(?:\.\d+)?|[A-Za-z_][A-Za-z_0-9]*)')
_NOVALUE = object()  # a missing map key (Go prints `<no value>`)
_NOPIPE = object()  # the first command of a pipeline: nothing piped in


def _lex(text: str, where: str) -> list[str]:
    out, pos = [], 0
    text = text.rstrip()
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if not m:
            raise RenderError(f"{where}: cannot read `{text[pos:]}` in `{text}`")
        out.append(m.group(1))
        pos = m.end()
    return out


class Renderer:
    def __init__(self, defines: dict, files: dict, release: dict, where: str):
        self.defines, self.files, self.release, self.where = defines, files, release, where
        self.depth = 0

    # -- nodes
    def run(self, nodes, dot, variables) -> str:
        out = []
        for node in nodes:
            kind = node[0]
            if kind == "text":
                out.append(node[1])
            elif kind == "expr":
                value = self.expression(node[1], dot, variables)
                if value != ("assign",):
                    out.append(_text(value))
            elif kind == "if":
                for condition, body in node[1]:
                    if _truthy(self.expression(condition, dot, variables)):
                        out.append(self.run(body, dot, dict(variables)))
                        break
                else:
                    if node[2] is not None:
                        out.append(self.run(node[2], dot, dict(variables)))
            elif kind == "with":
                (condition, body), = node[1]
                value = self.expression(condition, dot, variables)
                if _truthy(value):
                    out.append(self.run(body, value, dict(variables)))
                elif node[2] is not None:
                    out.append(self.run(node[2], dot, dict(variables)))
            elif kind == "range":
                (header, body), = node[1]
                out.append(self.range(header, body, node[2], dot, variables))
            if sum(len(p) for p in out) > MAX_OUTPUT:
                raise RenderError(f"{self.where}: the output passes {MAX_OUTPUT} characters")
        return "".join(out)

    def range(self, header, body, otherwise, dot, variables) -> str:
        m = re.fullmatch(r"(\$[A-Za-z_0-9]+)\s*(?:,\s*(\$[A-Za-z_0-9]+)\s*)?:=\s*(.*)", header, re.S)
        names = [n for n in (m.group(1), m.group(2)) if n] if m else []
        items = self.expression(m.group(3) if m else header, dot, variables)
        if items is None or items is _NOVALUE:
            items = []
        pairs = list(items.items()) if isinstance(items, dict) else list(enumerate(items))
        if isinstance(items, dict):
            pairs.sort(key=lambda kv: str(kv[0]))
        if not pairs:
            return self.run(otherwise, dot, dict(variables)) if otherwise is not None else ""
        out = []
        for key, item in pairs:
            scope = dict(variables)
            if len(names) == 1:
                scope[names[0]] = item
            elif len(names) == 2:
                scope[names[0]], scope[names[1]] = key, item
            out.append(self.run(body, item, scope))
        return "".join(out)

    # -- expressions
    def expression(self, text, dot, variables):
        tokens = _lex(text, self.where)
        if len(tokens) >= 2 and tokens[1] == ":=":
            variables[tokens[0]] = self.pipeline(tokens[2:], dot, variables)
            return ("assign",)
        return self.pipeline(tokens, dot, variables)

    def pipeline(self, tokens, dot, variables):
        stages, depth, current = [], 0, []
        for token in tokens:
            depth += token == "("
            depth -= token == ")"
            if token == "|" and depth == 0:
                stages.append(current)
                current = []
            else:
                current.append(token)
        stages.append(current)
        value = _NOPIPE
        for stage in stages:
            value = self.command(stage, dot, variables, value)
        return value

    def command(self, tokens, dot, variables, piped):
        args, i = [], 0
        while i < len(tokens):
            token = tokens[i]
            if token == "(":
                depth, j = 1, i + 1
                while depth:
                    if j >= len(tokens):
                        raise RenderError(f"{self.where}: unbalanced parentheses")
                    depth += tokens[j] == "("
                    depth -= tokens[j] == ")"
                    j += 1
                args.append(("value", self.pipeline(tokens[i + 1:j - 1], dot, variables)))
                i = j
                continue
            args.append(("token", token))
            i += 1
        if not args:
            raise RenderError(f"{self.where}: an empty command")
        head_kind, head = args[0]
        if head_kind == "token" and re.fullmatch(r"[A-Za-z_][A-Za-z_0-9]*", head) and head not in ("true", "false", "nil"):
            values = [self.operand(a, dot, variables) for a in args[1:]]
            if piped is not _NOPIPE:
                values.append(piped)
            return self.call(head, values, dot)
        if len(args) != 1 or piped is not _NOPIPE:
            raise RenderError(f"{self.where}: `{' '.join(str(a[1]) for a in args)}` is not a function call")
        return self.operand(args[0], dot, variables)

    def operand(self, arg, dot, variables):
        kind, token = arg
        if kind == "value":
            return token
        if token.startswith('"'):
            return _string_literal(token, self.where)
        if re.fullmatch(r"-?\d+", token):
            return int(token)
        if re.fullmatch(r"-?\d+\.\d+", token):
            return float(token)
        if token in ("true", "false"):
            return token == "true"
        if token == "nil":
            return None
        if token == ".":
            return dot
        if token.startswith("$"):
            name, _, path = token.partition(".")
            if name == "$":
                base = variables["$"]
            elif name in variables:
                base = variables[name]
            else:
                raise RenderError(f"{self.where}: undefined variable `{name}`")
            return _field(base, path.split(".") if path else [])
        if token.startswith("."):
            return _field(dot, token[1:].split("."))
        raise RenderError(f"{self.where}: `{token}` is not a value")

    def call(self, name, args, dot):
        def need(n):
            if len(args) != n:
                raise RenderError(f"{self.where}: `{name}` takes {n} argument(s), got {len(args)}")

        if name in ("include", "template"):
            need(2)
            return self.include(args[0], args[1])
        if name == "tpl":
            need(2)
            defines = dict(self.defines)
            nodes = parse(_text(args[0]), f"{self.where} (tpl)", defines)
            return self.nested(lambda: type(self)(defines, self.files, self.release, self.where).run(
                nodes, args[1], {"$": args[1]}))
        if name == "default":
            need(2)
            return args[1] if _truthy(args[1]) else args[0]
        if name == "quote":
            return " ".join('"' + _text(a).replace("\\", "\\\\").replace('"', '\\"') + '"' for a in args)
        if name == "trim":
            need(1)
            return _text(args[0]).strip()
        if name in ("indent", "nindent"):
            need(2)
            pad = " " * int(args[0])
            text = pad + _text(args[1]).replace("\n", "\n" + pad)
            return "\n" + text if name == "nindent" else text
        if name == "toString":
            need(1)
            return _text(args[0])
        if name == "int":
            need(1)
            return int(float(args[0])) if args[0] not in (None, _NOVALUE, "") else 0
        if name == "printf":
            if not args:
                raise RenderError(f"{self.where}: `printf` needs a format")
            values = iter(args[1:])
            return re.sub(r"%[sdv]", lambda m: _text(next(values)), _text(args[0]))
        if name == "ternary":
            need(3)
            return args[0] if _truthy(args[2]) else args[1]
        if name == "hasKey":
            need(2)
            return isinstance(args[0], dict) and args[1] in args[0]
        if name in ("eq", "ne"):
            need(2)
            same = _plain(args[0]) == _plain(args[1])
            return same if name == "eq" else not same
        if name == "not":
            need(1)
            return not _truthy(args[0])
        if name in ("and", "or"):
            result = args[0] if args else None
            for arg in args:
                result = arg
                if _truthy(arg) != (name == "and"):
                    return arg
            return result
        raise RenderError(f"{self.where}: the function `{name}` is not in the subset")

    def include(self, name, dot):
        if name not in self.defines:
            raise RenderError(f"{self.where}: no template named `{name}`")
        return self.nested(lambda: self.run(self.defines[name], dot, {"$": dot}))

    def nested(self, render):
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise RenderError(f"{self.where}: templates nest more than {MAX_DEPTH} deep")
        try:
            return render()
        finally:
            self.depth -= 1


def _field(value, path):
    for part in path:
        if part == "":
            continue
        if isinstance(value, dict):
            value = value.get(part, _NOVALUE)
        elif isinstance(value, _Files) and part == "Get":
            return value
        else:
            return _NOVALUE
    return value


def _plain(value):
    return None if value is _NOVALUE else value


def _truthy(value) -> bool:
    return value is True or value not in (None, _NOVALUE, False, 0, "", [], {})


def _text(value) -> str:
    """A value printed as Go's templates print it."""
    if value is _NOVALUE:
        return "<no value>"
    if value is None:
        return "<nil>"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value).removesuffix(".0") if value.is_integer() and abs(value) < 1e21 else repr(value)
    if isinstance(value, (dict, list)):
        raise RenderError(f"printing a {type(value).__name__} is not in the subset")
    return str(value)


class _Files:
    """`.Files`: `.Files.Get "path"` reads a file of the chart."""

    def __init__(self, root: Path):
        self.root = root


# ---- charts ------------------------------------------------------------------------------------------


def _merge(base: dict, override: dict) -> dict:
    out = dict(base)
    for key, value in override.items():
        out[key] = _merge(out[key], value) if isinstance(out.get(key), dict) and isinstance(value, dict) else value
    return out


def _load_yaml(path: Path) -> dict:
    data = yaml.safe_load(path.read_text(encoding="utf-8")) if path.is_file() else None
    return data if isinstance(data, dict) else {}


def _defines_of(chart: Path, defines: dict) -> None:
    for path in sorted((chart / "templates").rglob("*.tpl")):
        parse(path.read_text(encoding="utf-8"), str(path), defines)


def _lookup(values: dict, dotted: str):
    value = values
    for part in dotted.split("."):
        value = value.get(part) if isinstance(value, dict) else None
    return value


def render_chart(chart: Path, release: str, namespace: str) -> list[tuple[str, str]]:
    """(template path, rendered text) of the chart and its enabled local subcharts, in Helm's order."""
    meta = _load_yaml(chart / "Chart.yaml")
    values = _load_yaml(chart / "values.yaml")
    parent_defines: dict = {}
    _defines_of(chart, parent_defines)
    charts = [(chart, values, meta.get("name", chart.name))]
    for dep in meta.get("dependencies") or []:
        name, condition = dep["name"], dep.get("condition")
        enabled = condition is None or any(_lookup(values, c.strip()) is True for c in condition.split(","))
        folder = chart / "charts" / name
        if not enabled:
            continue
        if not folder.is_dir():
            raise RenderError(f"subchart `{name}` is enabled but is not an unpacked folder under charts/")
        sub_values = _merge(_load_yaml(folder / "values.yaml"), values.get(name) or {})
        sub_values["global"] = _merge(sub_values.get("global") or {}, values.get("global") or {})
        charts.append((folder, sub_values, name))
    rendered = []
    for folder, chart_values, name in charts:
        defines = dict(parent_defines)
        _defines_of(folder, defines)
        files = _Files(folder)
        top = {"Values": chart_values, "Release": {"Name": release, "Namespace": namespace, "Service": "Helm"},
               "Chart": _load_yaml(folder / "Chart.yaml"), "Files": files}
        for path in sorted(p for p in (folder / "templates").rglob("*") if p.suffix in (".yaml", ".yml")):
            where = f"{name}/{path.relative_to(folder)}"
            nodes = parse(path.read_text(encoding="utf-8"), where, defines)
            renderer = _ChartRenderer(defines, files, top, where)
            rendered.append((where, renderer.run(nodes, top, {"$": top})))
    return rendered


class _ChartRenderer(Renderer):
    def call(self, name, args, dot):
        if name == "Get" or (args and isinstance(args[0], _Files)):
            raise RenderError(f"{self.where}: `.Files` is used as `.Files.Get \"path\"`")
        return super().call(name, args, dot)

    def command(self, tokens, dot, variables, piped):
        # `.Files.Get "path"` / `$.Files.Get "path"`: a method call, the one the chart makes
        if tokens and tokens[0].endswith(".Files.Get"):
            files = self.operand(("token", tokens[0][: -len(".Get")]), dot, variables)
            if not isinstance(files, _Files) or len(tokens) != 2:
                raise RenderError(f"{self.where}: `.Files.Get` takes one path")
            path = self.operand(("token", tokens[1]), dot, variables)
            target = (files.root / _text(path)).resolve()
            if files.root.resolve() not in target.parents or not target.is_file():
                return ""  # Helm returns "" for a file the chart does not hold
            return target.read_text(encoding="utf-8")
        return super().command(tokens, dot, variables, piped)


def manifests(chart: Path, release: str, namespace: str) -> str:
    """Every rendered document as one multi-document YAML text (empty documents left out)."""
    out = []
    for where, text in render_chart(chart, release, namespace):
        for document in re.split(r"(?m)^---\s*$", text):
            if not document.strip():
                continue
            try:
                parsed = yaml.safe_load(document)
            except yaml.YAMLError as exc:
                raise RenderError(f"{where} renders YAML that does not parse: {exc}") from exc
            if parsed is None:
                continue
            out.append(f"# Source: {where}\n" + document.strip("\n") + "\n")
    return "---\n".join(out)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("chart", help="the chart's folder (holding Chart.yaml)")
    ap.add_argument("--release", required=True, help="the release name (.Release.Name)")
    ap.add_argument("--namespace", required=True, help="the namespace (.Release.Namespace)")
    ap.add_argument("-o", "--output", help="output file (default: stdout)")
    args = ap.parse_args(argv)
    try:
        text = manifests(Path(args.chart), args.release, args.namespace)
    except (RenderError, OSError, yaml.YAMLError) as exc:
        print(f"helm_render: {exc}", file=sys.stderr)
        return 1
    if args.output:
        Path(args.output).write_text(text, encoding="utf-8", newline="\n")
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
