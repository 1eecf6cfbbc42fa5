r"""The TextMate grammar of .itb files (editors/vscode/syntaxes/itbench.tmLanguage.json).

Its regexes are compiled with Python's `re` and run by a small TextMate matcher written here (match
rules with captures, begin/end rules, includes). The grammar keeps to the regex syntax Oniguruma and
`re` share: a pattern using an Oniguruma-only construct (\G, \h, possessive quantifiers, ...) is not
compiled here, and the test lists it and fails, since the matcher could not run it. When node and
the extension's npm devDependencies are installed (`npm install` in editors/vscode), every library
scenario is also tokenized by vscode-textmate + vscode-oniguruma, the engine VS Code uses, and the
two tokenizations must agree character for character.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from functools import lru_cache
from pathlib import Path

import pytest

from itbench_dsl.vocabulary import KNOWN_ALERTS
from itbench_dsl.faults import FAULTS

ROOT = Path(__file__).resolve().parents[2]
EXTENSION = ROOT / "editors" / "vscode"
GRAMMAR_PATH = EXTENSION / "syntaxes" / "itbench.tmLanguage.json"
LIBRARY = sorted((ROOT / "scenarios").rglob("*.itb")) + sorted((ROOT / "itbench_dsl" / "stdlib" / "apps").glob("*.itb"))
# constructs Oniguruma has and Python's re does not
ONIGURUMA_ONLY = re.compile(r"\\[GhHAzK]|\(\?<[A-Za-z]|\\p\{|\\k<|[*+?}]\+|\(\?~|\\[xo]\{")


@lru_cache(maxsize=1)
def grammar() -> dict:
    return json.loads(GRAMMAR_PATH.read_text(encoding="utf-8"))


def all_rules(node, path="") -> list[tuple[str, dict]]:
    out = []
    if isinstance(node, dict):
        if any(k in node for k in ("match", "begin", "include", "patterns")):
            out.append((path, node))
        for key, value in node.items():
            out += all_rules(value, f"{path}/{key}")
    elif isinstance(node, list):
        for i, value in enumerate(node):
            out += all_rules(value, f"{path}/{i}")
    return out


def regexes() -> list[tuple[str, str]]:
    return [(f"{path}/{key}", rule[key]) for path, rule in all_rules(grammar()) for key in ("match", "begin", "end")
            if key in rule]


# ---- a small TextMate matcher -------------------------------------------------------------------------------


class Matcher:
    """Tokenizes lines the TextMate way: at each position the earliest match among the active
    patterns wins (ties go to the end pattern of the open begin/end rule, then to list order)."""

    def __init__(self, grammar: dict) -> None:
        self.grammar = grammar
        self.repository = grammar.get("repository", {})
        self.compiled: dict[str, re.Pattern] = {}

    def regex(self, text: str) -> re.Pattern:
        if text not in self.compiled:
            self.compiled[text] = re.compile(text)
        return self.compiled[text]

    def expand(self, patterns: list[dict]) -> list[dict]:
        out = []
        for rule in patterns:
            if "include" in rule:
                name = rule["include"]
                target = {"patterns": self.grammar["patterns"]} if name == "$self" else self.repository[name[1:]]
                out += self.expand([target])
            elif "match" in rule or "begin" in rule:
                out.append(rule)
            else:
                out += self.expand(rule.get("patterns", []))
        return out

    def tokenize(self, text: str) -> list[list[list[str]]]:
        """The scopes of every character of every line."""
        base = [self.grammar["scopeName"]]
        stack: list[tuple[dict, list[str]]] = []  # open begin/end rules with their scopes
        lines = []
        for line in re.split(r"\r\n|\r|\n", text):
            lines.append(self.line(line, base, stack))
        return lines

    def line(self, line: str, base: list[str], stack) -> list[list[str]]:
        scopes: list[list[str]] = [None] * len(line)  # type: ignore[list-item]
        pos = 0
        while pos <= len(line):
            rule, outer = stack[-1] if stack else (None, base)
            patterns = self.expand(rule.get("patterns", []) if rule else self.grammar["patterns"])
            best = None
            if rule is not None:
                m = self.regex(rule["end"]).search(line, pos)
                if m:
                    best = (m.start(), 0, m, "end", rule)
            for order, candidate in enumerate(patterns, 1):
                m = self.regex(candidate.get("match") or candidate["begin"]).search(line, pos)
                if m and (best is None or (m.start(), order) < best[:2]):
                    best = (m.start(), order, m, "begin" if "begin" in candidate else "match", candidate)
            if best is None:
                break
            start, _, m, how, candidate = best
            self.fill(scopes, pos, start, outer)
            if how == "end":
                self.fill(scopes, m.start(), m.end(), outer)
                self.captures(scopes, m, candidate.get("endCaptures", candidate.get("captures", {})), outer)
                stack.pop()
                outer = stack[-1][1] if stack else base
            else:
                inner = outer + (candidate["name"].split() if "name" in candidate else [])
                self.fill(scopes, m.start(), m.end(), inner)
                key = "captures" if how == "match" else "beginCaptures"
                self.captures(scopes, m, candidate.get(key, candidate.get("captures", {})), inner)
                if how == "begin":
                    stack.append((candidate, inner))
            if m.end() == m.start():
                if how == "match":
                    pos = m.end() + 1
                    continue
                if how == "end" and m.end() >= len(line):
                    pos = len(line) + 1
                    continue
            pos = m.end()
        outer = stack[-1][1] if stack else base
        self.fill(scopes, 0, len(line), outer, only_empty=True)
        return scopes

    @staticmethod
    def fill(scopes, start, end, value, only_empty=False) -> None:
        for i in range(start, min(end, len(scopes))):
            if not only_empty or scopes[i] is None:
                scopes[i] = list(value)

    @staticmethod
    def captures(scopes, m: re.Match, captures: dict, outer: list[str]) -> None:
        for group, capture in sorted(captures.items(), key=lambda kv: int(kv[0])):
            index = int(group)
            if m.group(index) is None or "name" not in capture:
                continue
            for i in range(m.start(index), m.end(index)):
                scopes[i] = (scopes[i] if scopes[i] is not None else list(outer)) + capture["name"].split()


def tokens(text: str) -> list[tuple[str, str]]:
    """(text, innermost scope) runs of the first line, leaving out what is plain source."""
    scopes = Matcher(grammar()).tokenize(text)[0]
    out: list[tuple[str, str]] = []
    for char, scope in zip(text, scopes):
        name = scope[-1]
        if out and out[-1][1] == name:
            out[-1] = (out[-1][0] + char, name)
        else:
            out.append((char, name))
    return [(t, s) for t, s in out if s != "source.itb"]


# ---- the file ---------------------------------------------------------------------------------------------------


def test_grammar_is_well_formed_json_for_itb_files():
    g = grammar()
    assert g["scopeName"] == "source.itb" and g["fileTypes"] == ["itb"]
    names = set(g["repository"])
    for path, rule in all_rules(g):
        if "include" in rule:
            assert rule["include"] == "$self" or rule["include"][1:] in names, path
        if "begin" in rule:
            assert "end" in rule, path


def test_every_regex_compiles():
    skipped = [(where, text) for where, text in regexes() if ONIGURUMA_ONLY.search(text)]
    for where, text in regexes():
        if (where, text) in skipped:
            continue
        try:
            re.compile(text)
        except re.error as exc:
            pytest.fail(f"{where}: {text!r} does not compile: {exc}")
    assert not skipped, f"patterns using Oniguruma-only constructs (not checked here): {skipped}"


def test_grammar_file_is_generated_from_the_registries():
    proc = subprocess.run([sys.executable, str(EXTENSION / "gen_grammar.py"), "--check"], capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    fault_rule = grammar()["repository"]["fault"]["match"]
    listed = re.search(r"\(\?:\(([^)]*)\)", fault_rule).group(1).split("|")
    assert sorted(listed) == sorted(FAULTS)


def test_extension_manifest_contributes_the_language_grammar_and_configuration():
    manifest = json.loads((EXTENSION / "package.json").read_text(encoding="utf-8"))
    language = manifest["contributes"]["languages"][0]
    assert language["extensions"] == [".itb"]
    assert (EXTENSION / language["configuration"]).is_file()
    config = json.loads((EXTENSION / language["configuration"]).read_text(encoding="utf-8"))
    assert config["comments"]["lineComment"] == "#"
    assert ["{", "}"] in config["brackets"]
    contributed = manifest["contributes"]["grammars"][0]
    assert contributed["scopeName"] == grammar()["scopeName"]
    assert (EXTENSION / contributed["path"]).resolve() == GRAMMAR_PATH
    assert (EXTENSION / manifest["main"]).is_file()


# ---- what it says about lines -------------------------------------------------------------------------------------


def test_keywords_kinds_and_fault_kinds():
    assert tokens('  fault nonexistent_image on deployment "checkout" {') == [
        ("fault", "keyword.control.itb"), ("nonexistent_image", "entity.name.function.fault.itb"),
        ("on", "keyword.other.itb"), ("deployment", "entity.name.type.kind.itb"),
        ('"', "punctuation.definition.string.begin.itb"), ("checkout", "string.quoted.double.itb"),
        ('"', "punctuation.definition.string.end.itb"), ("{", "punctuation.section.block.itb")]
    # a kind outside the library may be a project's own (`use faults`): named as such, never marked invalid
    assert tokens("  fault no_such_fault on")[1] == ("no_such_fault", "entity.name.function.fault.declared.itb")
    alert = KNOWN_ALERTS[0]
    assert tokens(f"    alert {alert} not firing") == [
        ("alert", "keyword.control.itb"), (alert, "entity.name.tag.alert.itb"), ("not", "keyword.other.itb"),
        ("firing", "keyword.other.itb")]


def test_a_keyword_used_as_a_key_is_a_key():
    assert tokens('labels { app = "web" }')[:3] == [  # `labels` is a plain name: left out by tokens()
        ("{", "punctuation.section.block.itb"), ("app", "variable.other.property.itb"),
        ("=", "keyword.operator.assignment.itb")]
    assert tokens('use app "book-info"')[:2] == [("use", "keyword.control.itb"), ("app", "keyword.control.itb")]


def test_strings_and_escapes():
    assert tokens(r'description "say \"hi\" \u00e9 \q"') == [
        ("description", "keyword.control.itb"), ('"', "punctuation.definition.string.begin.itb"),
        ("say ", "string.quoted.double.itb"), (r"\"", "constant.character.escape.itb"),
        ("hi", "string.quoted.double.itb"), (r"\"", "constant.character.escape.itb"),
        (" ", "string.quoted.double.itb"), (r"\u00e9", "constant.character.escape.itb"),
        (" ", "string.quoted.double.itb"), (r"\q", "invalid.illegal.escape.itb"),
        ('"', "punctuation.definition.string.end.itb")]
    # a `#` inside a string is not a comment; an unterminated string ends with its line
    assert tokens('x = "a # b"')[-2] == ("a # b", "string.quoted.double.itb")
    lines = Matcher(grammar()).tokenize('x = "open\ndomain sre')
    assert lines[1][0][-1] == "keyword.control.itb"


def test_comments():
    assert tokens('domain sre   # the "SRE" domain')[-2:] == [
        ("#", "punctuation.definition.comment.itb"), (' the "SRE" domain', "comment.line.number-sign.itb")]


def test_quantities_with_units_percentages_numbers_and_booleans():
    line = "cpu = 250m  memory = 64Mi  within 1h30m  cpu = 80%  replicas = 2  x = 1.5  host_network = true"
    found = [t for t in tokens(line) if not t[1].startswith(("variable.", "keyword.operator"))]
    assert found == [
        ("250", "constant.numeric.quantity.itb"), ("m", "keyword.other.unit.itb"),
        ("64", "constant.numeric.quantity.itb"), ("Mi", "keyword.other.unit.itb"),
        ("within", "keyword.other.itb"),
        ("1", "constant.numeric.quantity.itb"), ("h30m", "keyword.other.unit.itb"),
        ("80", "constant.numeric.percentage.itb"), ("%", "keyword.other.unit.itb"),
        ("2", "constant.numeric.itb"), ("1.5", "constant.numeric.itb"),
        ("true", "constant.language.boolean.itb")]


def test_edges_and_comparisons():
    assert [t for t in tokens('"frontend" -> "cart"  spec.replicas >= 1') if t[1].startswith("keyword")] == [
        ("->", "keyword.operator.arrow.itb"), (">=", "keyword.operator.comparison.itb")]


def test_the_library_has_nothing_the_grammar_calls_invalid():
    matcher = Matcher(grammar())
    for path in LIBRARY:
        for number, line in enumerate(matcher.tokenize(path.read_text(encoding="utf-8")), 1):
            bad = {s for scope in line for s in scope if s.startswith("invalid")}
            assert not bad, f"{path}:{number}: {bad}"


# ---- the engine VS Code uses ------------------------------------------------------------------------------------


def test_vscode_textmate_agrees_on_every_library_file():
    node = shutil.which("node")
    modules = EXTENSION / "node_modules"
    if node is None or not (modules / "vscode-textmate").is_dir() or not (modules / "vscode-oniguruma").is_dir():
        pytest.skip("needs node and `npm install` in editors/vscode (vscode-textmate, vscode-oniguruma)")
    proc = subprocess.run([node, str(EXTENSION / "test" / "tokenize.js"), *map(str, LIBRARY)], capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    matcher = Matcher(grammar())
    keywords = 0
    for path in LIBRARY:
        text = path.read_text(encoding="utf-8")
        ours = matcher.tokenize(text)
        for number, (line, theirs, mine) in enumerate(zip(re.split(r"\r\n|\r|\n", text), result[str(path)], ours), 1):
            # vscode-textmate counts UTF-16 code units: map them to code points
            index = [i for i, c in enumerate(line) for _ in range(2 if ord(c) > 0xFFFF else 1)] + [len(line)]
            per_char: list = [None] * len(line)
            for start, end, scopes in theirs:
                for i in range(index[start], index[end] if end < len(index) else len(line)):
                    per_char[i] = scopes
            assert per_char == mine, f"{path}:{number}: {line!r}"
            assert not any(s.startswith("invalid") for scopes in per_char for s in scopes), f"{path}:{number}"
            keywords += sum(1 for scopes in per_char if scopes and scopes[-1] == "keyword.control.itb")
    assert keywords > 1000


def test_extension_starts_itbench_lsp_for_itb_documents():
    """extension.js, activated with stand-ins for the editor's API (editors/vscode/test/activate.js)."""
    node = shutil.which("node")
    if node is None:
        pytest.skip("needs node")

    def activate(settings: dict) -> dict:
        proc = subprocess.run([node, str(EXTENSION / "test" / "activate.js"), json.dumps(settings)],
                              capture_output=True, text=True, timeout=60)
        assert proc.returncode == 0, proc.stderr
        return json.loads(proc.stdout)

    default = activate({})
    assert default["started"] == 1 and default["subscriptions"] == 1
    (client,) = default["clients"]
    assert client["serverOptions"]["run"] == {"command": "itbench", "args": ["lsp"]}
    assert client["clientOptions"]["documentSelector"] == [{"language": "itbench"}]
    chosen = activate({"itbench.server.command": "/opt/venv/bin/itbench"})
    assert chosen["clients"][0]["serverOptions"]["run"]["command"] == "/opt/venv/bin/itbench"
    assert activate({"itbench.server.enabled": False})["clients"] == []
