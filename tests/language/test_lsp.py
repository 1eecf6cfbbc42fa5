"""`itbench lsp`, driven over its protocol: a subprocess speaking JSON-RPC with Content-Length framing.

The client below is the test's own: it frames messages, reads them on a thread and waits for
answers with a timeout, so a server that hangs fails the test in seconds instead of blocking it.
"""

from __future__ import annotations

import json
import os
import queue
import re
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("pygls")
pytest.importorskip("lsprotocol")

from itbench_dsl import lsp  # noqa: E402
from itbench_dsl.faults import FAULTS  # noqa: E402
from itbench_dsl.printer import print_document  # noqa: E402
from itbench_dsl.parser import parse_text  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT = 20.0  # seconds for any one answer; the first check imports the compiler and builds the parser
URI = "file:///tmp/itbench-lsp-test/broken.itb"

# Two statements on one line (the language needs no separator): the unknown deployment comes after
# text outside the Basic Multilingual Plane, so UTF-16 (2 units for 😀) and code points differ.
BROKEN = """scenario "otel-checkout-broken" {
  domain sre
  complexity low
  description "Le paiement échoue 😀"  fault nonexistent_image on deployment "cartt"
  use app "opentelemetry-demo"
  expect {
    alert HighRequestErrorRate on service "frontend"
  }
}
"""
BROKEN_LINE = 3
# `  description "Le paiement échoue 😀"  fault nonexistent_image on deployment ` is 76 code points,
# 77 UTF-16 code units (😀 is a surrogate pair) and 80 UTF-8 bytes (é: 2, 😀: 4)
BROKEN_START = {"utf-16": 77, "utf-32": 76, "utf-8": 80}


class Client:
    def __init__(self, encodings: list[str] | None = None) -> None:
        self.stderr = tempfile.TemporaryFile()
        env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
        self.proc = subprocess.Popen([sys.executable, "-m", "itbench_dsl", "lsp"], cwd=ROOT, env=env,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.stderr)
        self.messages: queue.Queue = queue.Queue()
        self.notifications: list[dict] = []
        self.published: list[dict] = []  # every publishDiagnostics, in order
        self.next_id = 0
        threading.Thread(target=self._read, daemon=True).start()
        capabilities: dict = {"textDocument": {
            "hover": {"contentFormat": ["markdown", "plaintext"]},
            "completion": {"completionItem": {"snippetSupport": True}},
            "publishDiagnostics": {"relatedInformation": True, "versionSupport": True}}}
        if encodings is not None:
            capabilities["general"] = {"positionEncodings": encodings}
        self.initialized = self.request("initialize", {"processId": os.getpid(), "rootUri": None,
                                                       "capabilities": capabilities})
        self.notify("initialized", {})

    # ---- framing
    def _read(self) -> None:
        stream = self.proc.stdout
        while True:
            headers = {}
            while True:
                line = stream.readline()
                if not line:
                    self.messages.put(None)
                    return
                line = line.decode("ascii").strip()
                if not line:
                    break
                name, _, value = line.partition(":")
                headers[name.strip().lower()] = value.strip()
            body = stream.read(int(headers["content-length"]))
            self.messages.put(json.loads(body.decode("utf-8")))

    def send(self, message: dict) -> None:
        body = json.dumps({"jsonrpc": "2.0", **message}, ensure_ascii=False).encode("utf-8")
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.proc.stdin.flush()

    def _next(self, deadline: float) -> dict:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise AssertionError(f"no answer from the server in {TIMEOUT} s; stderr:\n{self.error_output()}")
        try:
            message = self.messages.get(timeout=remaining)
        except queue.Empty:
            raise AssertionError(f"no answer from the server in {TIMEOUT} s; stderr:\n{self.error_output()}") from None
        if message is None:
            raise AssertionError(f"the server closed its output; stderr:\n{self.error_output()}")
        if message.get("method") == "textDocument/publishDiagnostics":
            self.published.append(message["params"])
        return message

    def error_output(self) -> str:
        self.stderr.seek(0)
        return self.stderr.read().decode("utf-8", "replace")[-4000:]

    # ---- JSON-RPC
    def request(self, method: str, params) -> object:
        self.next_id += 1
        ident = self.next_id
        self.send({"id": ident, "method": method, "params": params})
        deadline = time.monotonic() + TIMEOUT
        while True:
            message = self._next(deadline)
            if message.get("id") == ident and "method" not in message:
                assert "error" not in message, message["error"]
                return message.get("result")
            if "method" in message and "id" in message:  # a request from the server: answer it
                self.send({"id": message["id"], "result": None})
            elif "method" in message:
                self.notifications.append(message)

    def notify(self, method: str, params) -> None:
        self.send({"method": method, "params": params})

    def diagnostics(self, uri: str, version: int | None = None) -> list[dict]:
        """The next publishDiagnostics for `uri` (for `version`, when given)."""
        deadline = time.monotonic() + TIMEOUT
        while True:
            for n, message in enumerate(self.notifications):
                params = message.get("params", {})
                if message["method"] == "textDocument/publishDiagnostics" and params.get("uri") == uri and (
                        version is None or params.get("version") == version):
                    del self.notifications[: n + 1]
                    return params["diagnostics"]
            message = self._next(deadline)
            if "method" in message and "id" not in message:
                self.notifications.append(message)
            elif "method" in message:
                self.send({"id": message["id"], "result": None})

    def open(self, uri: str, text: str, version: int = 1) -> None:
        self.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "itbench", "version": version,
                                                              "text": text}})

    def close(self) -> int:
        try:
            if self.proc.poll() is None:
                assert self.request("shutdown", None) is None
                self.notify("exit", None)
                return self.proc.wait(timeout=TIMEOUT)
            return self.proc.returncode
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()
            self.stderr.close()


@pytest.fixture(scope="module")
def client():
    c = Client()
    yield c
    c.close()


def position(text: str, needle: str, after: int = 0, encoding: str = "utf-16") -> dict:
    """The LSP position of the character `after` characters into the first `needle` in `text`."""
    offset = text.index(needle) + after
    line = text.count("\n", 0, offset)
    start = text.rfind("\n", 0, offset) + 1
    return {"line": line, "character": lsp.units(text[start:offset], encoding)}


def test_initialize_advertises_the_features(client):
    capabilities = client.initialized["capabilities"]
    assert capabilities["positionEncoding"] == "utf-16"
    assert capabilities["hoverProvider"]
    assert capabilities["documentFormattingProvider"]
    assert '"' in capabilities["completionProvider"]["triggerCharacters"]
    assert client.initialized["serverInfo"]["name"] == "itbench"


def test_diagnostic_range_counts_utf16_code_units(client):
    client.open(URI, BROKEN)
    found = client.diagnostics(URI, 1)
    unknown = [d for d in found if d["code"] == "E2003"]
    assert len(unknown) == 1, found
    d = unknown[0]
    assert d["range"] == {"start": {"line": BROKEN_LINE, "character": BROKEN_START["utf-16"]},
                          "end": {"line": BROKEN_LINE, "character": BROKEN_START["utf-16"] + len('"cartt"')}}
    assert d["range"]["start"] == position(BROKEN, '"cartt"')  # the same, computed from the text
    assert d["severity"] == 1 and d["source"] == "itbench"
    assert "unknown deployment `cartt`" in d["message"] and "`cart`" in d["message"]  # with its help


def test_change_is_checked_again_and_only_the_last_version_is_published(client):
    uri = "file:///tmp/itbench-lsp-test/changing.itb"
    client.open(uri, BROKEN)
    assert any(d["code"] == "E2003" for d in client.diagnostics(uri, 1))
    start = position(BROKEN, '"cartt"', 1)
    end = position(BROKEN, '"cartt"', 6)
    # three quick edits: `cartt` -> `x` -> `y` -> `checkout`; the debounce checks the last one only
    for version, (new, length) in enumerate((("x", 5), ("y", 1), ("checkout", 1)), 2):
        stop = {"line": end["line"], "character": start["character"] + length}
        client.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": version},
                                                 "contentChanges": [{"range": {"start": start, "end": stop},
                                                                     "text": new}]})
        end = stop
    found = client.diagnostics(uri, 4)
    assert not [d for d in found if d["code"] == "E2003"], found
    assert [p["version"] for p in client.published if p["uri"] == uri] == [1, 4]


def test_a_scenario_edit_shows_the_quick_diagnostics_before_the_self_validation(client):
    from tests.language.test_checking import BLIND

    uri = "file:///tmp/itbench-lsp-test/blind.itb"
    # a text no earlier check has validated (the marker is new on every run), so its self-validation is not on disk
    text = BLIND.replace("A fault nothing observes", f"A fault nothing observes ({time.time_ns()})")
    client.open(uri, text)
    first = client.diagnostics(uri, 1)
    assert not {"E4004", "E4006"} & {d["code"] for d in first}, first
    # the same version again, once the self-validation has run: its findings, located at the predicate
    second = client.diagnostics(uri, 1)
    assert [d["code"] for d in second] == ["E4004", "E4006"]
    assert second[0]["range"]["start"] == position(text, 'deployment "cart" absent')


def test_syntax_error_is_reported_where_it_is(client):
    uri = "file:///tmp/itbench-lsp-test/syntax.itb"
    text = 'scenario "x" {\n  domain sre\n  complexity = low\n}\n'
    client.open(uri, text)
    found = client.diagnostics(uri, 1)
    assert [d["code"] for d in found] == ["E1002"]
    assert found[0]["range"]["start"] == position(text, "= low")


GOOD = """scenario "otel-cart-stress" {
  domain sre
  complexity low
  description "Cart runs hot."
  use app "opentelemetry-demo"
  fault misconfigured_readiness_probe on deployment "cart" {
    
  }
}
"""


def test_lint_findings_arrive_as_warnings(client):
    pytest.importorskip("itbench_dsl.analysis.lint")
    uri = "file:///tmp/itbench-lsp-test/lint.itb"
    client.open(uri, GOOD)  # compiles clean, but has no `solution`
    found = {d["code"]: d for d in client.diagnostics(uri, 1)}
    assert found["W2004"]["severity"] == 2
    assert found["W2004"]["range"]["start"] == position(GOOD, '"otel-cart-stress"')
    assert not [d for d in found.values() if d["severity"] == 1]


def test_completion_inside_a_fault_block_offers_its_arguments(client):
    uri = "file:///tmp/itbench-lsp-test/complete.itb"
    client.open(uri, GOOD)
    result = client.request("textDocument/completion", {"textDocument": {"uri": uri},
                                                        "position": position(GOOD, "    \n", 4)})
    labels = [i["label"] for i in result["items"]]
    assert labels == [a.name for a in FAULTS["misconfigured_readiness_probe"].args]
    assert all(i["insertText"] == f"{i['label']} = " for i in result["items"])


def test_completion_after_fault_offers_every_fault_kind_with_its_page(client):
    uri = "file:///tmp/itbench-lsp-test/kinds.itb"
    text = GOOD.replace("  fault misconfigured", "  fault \n  fault misconfigured")
    client.open(uri, text)
    result = client.request("textDocument/completion", {"textDocument": {"uri": uri},
                                                        "position": position(text, "fault \n", 6)})
    items = {i["label"]: i for i in result["items"]}
    assert set(items) == set(FAULTS)
    assert "**fault `nonexistent_image`**" in items["nonexistent_image"]["documentation"]["value"]


def test_completion_of_topology_names_inside_a_half_written_reference(client):
    uri = "file:///tmp/itbench-lsp-test/names.itb"
    text = GOOD.replace('deployment "cart" {', 'deployment "ch')  # unterminated: the file does not parse
    client.open(uri, text)
    pos = position(text, 'deployment "ch', len('deployment "ch'))
    result = client.request("textDocument/completion", {"textDocument": {"uri": uri}, "position": pos})
    items = {i["label"]: i for i in result["items"]}
    assert {"checkout", "cart", "frontend"} <= set(items)
    edit = items["checkout"]["textEdit"]  # replaces what is typed inside the string and closes it
    assert edit["newText"] == 'checkout"'
    assert edit["range"]["start"] == position(text, 'deployment "ch', len('deployment "'))
    assert edit["range"]["end"] == pos


def test_completion_of_statement_keywords_by_context(client):
    uri = "file:///tmp/itbench-lsp-test/keywords.itb"
    text = GOOD.replace("  use app", "  expect {\n    \n  }\n  use app")
    client.open(uri, text)
    at_scenario = client.request("textDocument/completion", {"textDocument": {"uri": uri},
                                                             "position": position(text, "  use app")})
    in_expect = client.request("textDocument/completion", {"textDocument": {"uri": uri},
                                                           "position": position(text, "    \n  }\n  use", 4)})
    assert {"domain", "fault", "expect", "topology"} <= {i["label"] for i in at_scenario["items"]}
    assert {i["label"] for i in in_expect["items"]} == {"alert", "root_cause", "propagation", "mitigated", "optimal", "analysis"}


def test_hover_shows_the_fault_page_the_code_page_and_the_object(client):
    client.open(URI.replace("broken", "hover"), GOOD)
    uri = URI.replace("broken", "hover")
    client.diagnostics(uri, 1)
    fault = client.request("textDocument/hover", {"textDocument": {"uri": uri},
                                                  "position": position(GOOD, "misconfigured_readiness_probe", 3)})
    assert fault["contents"]["kind"] == "markdown"
    assert fault["contents"]["value"].startswith("**fault `misconfigured_readiness_probe`**")
    assert fault["range"]["start"] == position(GOOD, "misconfigured_readiness_probe")
    obj = client.request("textDocument/hover", {"textDocument": {"uri": uri},
                                                "position": position(GOOD, 'deployment "cart"', 2)})
    assert "namespace `otel-demo`" in obj["contents"]["value"]
    # over the error of a broken document: the page of its code
    broken = URI.replace("broken", "hover-broken")
    client.open(broken, BROKEN)
    client.diagnostics(broken, 1)
    code = client.request("textDocument/hover", {"textDocument": {"uri": broken},
                                                 "position": position(BROKEN, '"cartt"', 2)})
    assert "E2003" in code["contents"]["value"]


def test_formatting_rewrites_the_document_and_leaves_a_broken_one_alone(client):
    uri = "file:///tmp/itbench-lsp-test/format.itb"
    messy = GOOD.replace("  domain sre", "domain    sre").replace("    \n", "")
    client.open(uri, messy)
    edits = client.request("textDocument/formatting", {"textDocument": {"uri": uri},
                                                       "options": {"tabSize": 2, "insertSpaces": True}})
    assert len(edits) == 1
    assert edits[0]["range"] == {"start": {"line": 0, "character": 0},
                                 "end": {"line": messy.count("\n"), "character": 0}}
    assert edits[0]["newText"] == print_document(parse_text(messy), messy)
    assert "\n  domain sre\n" in edits[0]["newText"]
    # formatted text: no edit; a syntax error: no edit
    client.open(uri + "2", edits[0]["newText"])
    assert client.request("textDocument/formatting", {"textDocument": {"uri": uri + "2"},
                                                      "options": {"tabSize": 2, "insertSpaces": True}}) == []
    assert client.request("textDocument/formatting", {"textDocument": {"uri": "file:///tmp/itbench-lsp-test/syntax.itb"},
                                                      "options": {"tabSize": 2, "insertSpaces": True}}) in ([], None)


@pytest.mark.parametrize("encoding", ["utf-32", "utf-8"])
def test_other_position_encodings_when_the_client_offers_them(encoding):
    other = Client([encoding, "utf-16"])
    try:
        assert other.initialized["capabilities"]["positionEncoding"] == encoding
        other.open(URI, BROKEN)
        found = [d for d in other.diagnostics(URI, 1) if d["code"] == "E2003"]
        assert found[0]["range"]["start"] == {"line": BROKEN_LINE, "character": BROKEN_START[encoding]}
    finally:
        assert other.close() == 0


def test_shutdown_and_exit_end_the_process_cleanly():
    c = Client()
    assert c.close() == 0


def test_without_pygls_the_command_says_how_to_install_it():
    code = ("import sys; sys.modules['pygls'] = None; sys.modules['lsprotocol'] = None; "
            "from itbench_dsl.cli import main; main(['lsp'])")
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=TIMEOUT)
    assert proc.returncode == 2
    assert "pip install" in proc.stderr and "pygls" in proc.stderr and "Traceback" not in proc.stderr


# ---- the position helpers on their own ---------------------------------------------------------------------


LIBRARY = sorted((ROOT / "scenarios").rglob("*.itb"))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(["a", "é", "😀", "\n", "\r\n", "\r", '"', " "]), max_size=30).map("".join), st.data())
def test_offset_round_trip_on_any_text(text, data):
    """offset_at inverts (line, units of the line up to the offset) for every encoding."""
    lines = re.split(r"\r\n|\r|\n", text)
    line = data.draw(st.integers(0, len(lines) - 1))
    column = data.draw(st.integers(0, len(lines[line])))
    start = sum(len(x) for x in lines[:line]) + sum(len(m) for m in re.findall(r"\r\n|\r|\n", text)[:line])
    for encoding in ("utf-8", "utf-16", "utf-32"):
        units = lsp.units(lines[line][:column], encoding)
        assert lsp.offset_at(text, line, units, encoding) == start + column


@settings(max_examples=80, deadline=None)
@given(st.sampled_from(LIBRARY), st.floats(0, 1))
def test_completion_and_hover_anywhere_in_a_half_typed_library_file(path, fraction):
    """Cut a library scenario anywhere (as if being typed): completion and hover at the cut never fail,
    and inside a fault block they offer exactly that fault's arguments."""
    text = path.read_text(encoding="utf-8")
    offset = int(len(text) * fraction)
    prefix = text[:offset]
    items = lsp.complete(prefix, offset, lsp.imported_topology(prefix))
    assert all(isinstance(i.label, str) and i.label for i in items)
    lsp.hover(prefix, offset, None, ())
    ctx = lsp.context_at(prefix, offset)
    if ctx.string is None and not ctx.tokens and ctx.headers and ctx.headers[-1][:1] == ["fault"]:
        kind = FAULTS[ctx.headers[-1][1]]
        assert [i.label for i in items] == [a.name for a in kind.args]


# ---- completion and hover on their own ----------------------------------------------------------------------


def test_container_names_of_the_fault_target_inside_its_container_argument():
    text = GOOD.replace("    \n", '    container = "')
    offset = text.index('container = "') + len('container = "')
    build = lsp.imported_topology(text)
    cart = next(d.obj for d in build.find("deployment", "cart"))
    items = lsp.complete(text, offset, build)
    assert [i.label for i in items] == [c.name for c in cart.containers]
    assert items[0].replace == (offset, offset)


def test_hover_on_use_app_shows_the_application():
    text = 'scenario "x" {\n  use app "book-info"\n}\n'
    markdown, (start, end) = lsp.hover(text, text.index("book-info"), None, ())
    assert markdown.startswith("**app `book-info`** (standard library)")
    assert text[start:end] == 'app "book-info"'


def test_hover_on_a_code_written_in_a_comment():
    text = 'scenario "x" {  # see E2003\n}\n'
    markdown, (start, end) = lsp.hover(text, text.index("E2003") + 2, None, ())
    assert markdown.startswith("**E2003: ") and text[start:end] == "E2003"


def test_after_a_whole_argument_on_the_line_the_next_argument_is_offered():
    text = GOOD.replace("    \n", '    port = 8080  pa')
    offset = text.index("  pa") + 4
    assert [i.label for i in lsp.complete(text, offset, None)] == [
        a.name for a in FAULTS["misconfigured_readiness_probe"].args]
    half = GOOD.replace("    \n", "    port = ")  # no value yet: nothing to offer
    assert lsp.complete(half, half.index("port = ") + 7, None) == []


def test_hover_on_a_fault_argument_shows_its_type_and_help():
    text = GOOD.replace("    \n", "    port = 8080\n")
    markdown, (start, end) = lsp.hover(text, text.index("port = ") + 1, None, ())
    arg = next(a for a in FAULTS["misconfigured_readiness_probe"].args if a.name == "port")
    assert markdown.startswith("**argument of `misconfigured_readiness_probe`**") and arg.help in markdown
    assert text[start:end] == "port"
