"""The shell line: cut into commands (`&&`, `||`, `;`, pipes, here-documents), each run in turn, a
pipe's JSON or YAML passed on as the next command's `-f -`.
"""

from __future__ import annotations

import copy
import re
import shlex
from dataclasses import dataclass

from .state import APPLIED, _Context, Outcome, READ_ONLY, _unsupported
from .command import _dry_run, _invocation, _program
from .files import _documents_of_path, _parse_documents
from .targets import _existing, _select
from .verbs import _dispatch, _generated


@dataclass
class _Stage:
    """One command of a pipeline: its words, and the file its standard input comes from."""

    words: list[str]
    stdin_path: str | None = None


_OUTPUT_OPERATORS = ("&>>", "&>", ">>", ">|", ">&", "<&", "<>", ">", "<")


_WORD_END = " \t\n|&;<>()"


class _LineScanner:
    """Cuts a shell line into pipelines (joined by `&&`, `;` or new lines) of stages (joined by `|`).

    Quotes are respected, so a `|` or `;` inside a JSON patch stays in its word; the words
    themselves are left to `shlex`. Redirections are taken out of the stages: `< FILE` becomes
    the stage's standard input, output redirections only move text and are dropped. Features
    whose effect cannot be known without a shell (substitutions, variables, subshells,
    here-documents, background jobs, `||`) stop the scan as unsupported.
    """

    def __init__(self, line: str) -> None:
        self.line = line
        self.i = 0
        self.pipelines: list[list[_Stage]] = []
        self.stages: list[_Stage] = []
        self.text: list[str] = []
        self.stdin: str | None = None
        self.piped = False  # the last stage ended with `|`, so another one must follow

    def run(self) -> list[list[_Stage]]:
        while self.i < len(self.line):
            self._step()
        self._end_pipeline()
        return self.pipelines

    def _step(self) -> None:
        line, i = self.line, self.i
        char = line[i]
        if char == "'":
            end = line.find("'", i + 1)
            if end < 0:
                raise _unsupported("an unterminated quote: the line is not a complete shell command")
            self.text.append(line[i:end + 1])
            self.i = end + 1
        elif char == '"':
            self._double_quoted()
        elif char == "\\":
            if i + 1 >= len(line):
                raise _unsupported("a line ending in `\\` is not a complete shell command")
            if line[i + 1] != "\n":  # a backslash-newline only continues the line
                self.text.append(line[i:i + 2])
            self.i += 2
        elif char == "#" and self._at_word_start():
            end = line.find("\n", i)
            self.i = len(line) if end < 0 else end
        elif char == "$":
            self._dollar(i)
            self.text.append(char)
            self.i += 1
        elif char == "`":
            raise _unsupported("command substitution (`...`) needs a shell to run it, so its result is unknown")
        elif line.startswith("&&", i):
            self._end_pipeline()
            self.i += 2
        elif line.startswith("||", i):
            raise _unsupported("`||` runs a command only when another one fails, which cannot be replayed")
        elif char == "|":
            self._end_stage(by_pipe=True)
            self.i += 2 if line.startswith("|&", i) else 1
        elif char in ";\n":
            self._end_pipeline()
            self.i += 1
        elif char == "&" and not line.startswith("&>", i):
            raise _unsupported("`&` runs a command in the background, which cannot be replayed")
        elif char in "<>&":
            self._redirect()
        elif char in "()":
            raise _unsupported("subshells and groups `( ... )` cannot be replayed")
        else:
            self.text.append(char)
            self.i += 1

    def _double_quoted(self) -> None:
        line, j = self.line, self.i + 1
        while j < len(line):
            char = line[j]
            if char == "\\" and j + 1 < len(line):
                j += 2
                continue
            if char == "`":
                raise _unsupported("command substitution (`...`) needs a shell to run it, so its result is unknown")
            if char == "$":
                self._dollar(j, quoted=True)
            if char == '"':
                self.text.append(line[self.i:j + 1])
                self.i = j + 1
                return
            j += 1
        raise _unsupported("an unterminated quote: the line is not a complete shell command")

    def _dollar(self, j: int, quoted: bool = False) -> None:
        following = self.line[j + 1:j + 2]
        if following == "(":
            raise _unsupported("command substitution `$(...)` needs a shell to run it, so its result is unknown")
        if following and (following.isalnum() or following in "_{@*#?$!-" or (not quoted and following in "'\"")):
            raise _unsupported("shell variables and expansions (`$...`) have values only a shell knows")

    def _at_word_start(self) -> bool:
        return not self.text or self.text[-1][-1:] in (" ", "\t", "\n")

    def _redirect(self) -> None:
        line = self.line
        if line.startswith("<<", self.i):
            raise _unsupported("here-documents (`<<`) cannot be replayed: put the manifest in a file of the bundle")
        current = "".join(self.text)
        fd_match = re.search(r"(?:^|[ \t])(\d+)$", current, re.ASCII)
        fd = None
        if fd_match:
            fd = int(fd_match.group(1))
            self.text = [current[:fd_match.start(1)]]
        op = next(o for o in _OUTPUT_OPERATORS if line.startswith(o, self.i))
        self.i += len(op)
        while self.i < len(line) and line[self.i] in " \t":
            self.i += 1
        start = self.i
        quote = None
        while self.i < len(line) and (quote or line[self.i] not in _WORD_END):
            char = line[self.i]
            if quote and char == quote:
                quote = None
            elif not quote and char in "'\"":
                quote = char
            self.i += 1
        raw = line[start:self.i]
        if not raw or quote:
            raise _unsupported(f"a redirection `{op}` without a target is not a complete shell command")
        if op == "<>":
            raise _unsupported("`<>` opens a file for reading and writing, which cannot be replayed")
        if op == "<" and (fd is None or fd == 0):
            try:
                self.stdin = " ".join(shlex.split(raw))
            except ValueError as exc:
                raise _unsupported(f"cannot read the shell words of `{raw}`: {exc}") from None

    def _end_stage(self, by_pipe: bool) -> None:
        text = "".join(self.text).strip()
        self.text = []
        if not text:
            if by_pipe or self.piped or self.stdin is not None:
                raise _unsupported("an empty command in a pipeline is not a complete shell command")
            return
        try:
            words = shlex.split(text)
        except ValueError as exc:
            raise _unsupported(f"cannot read the shell words of `{text}`: {exc}") from None
        self.stages.append(_Stage(words, self.stdin))
        self.stdin = None
        self.piped = by_pipe

    def _end_pipeline(self) -> None:
        self._end_stage(by_pipe=False)
        if self.stages:
            self.pipelines.append(self.stages)
        self.stages = []
        self.piped = False


def _run_line(ctx: _Context, line: str) -> Outcome:
    """Runs the line's pipelines in order; the first that does not apply decides the outcome."""
    if not isinstance(line, str):
        raise _unsupported("the command is not text")
    pipelines = _LineScanner(line).run()
    if not pipelines:
        raise _unsupported("an empty command: nothing to replay")
    done = []
    for stages in pipelines:
        outcome = _run_pipeline(ctx, stages)
        if outcome.status not in (APPLIED, READ_ONLY):
            return outcome
        done.append(outcome)
    status = APPLIED if any(o.status == APPLIED for o in done) else READ_ONLY
    return Outcome(status, "; ".join(o.message for o in done))


_KUBECTL = ("kubectl", "k", "oc")


# programs that only transform text: after a command that reads, a pipeline through them reads too
_TEXT_FILTERS = {"grep", "egrep", "fgrep", "head", "tail", "awk", "sed", "jq", "yq", "wc", "sort", "uniq",
                 "cut", "tr", "less", "more", "cat", "column", "base64", "tee", "nl", "fold", "rev"}


_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")


def _run_pipeline(ctx: _Context, stages: list[_Stage]) -> Outcome:
    """A pipeline changes the cluster only where a kubectl command reads manifests from its input.

    `producer | kubectl apply -f -` is replayed when the producer's output is known (a kubectl
    generator with `--dry-run=client -o yaml`, `kubectl get -o yaml`, `cat FILE`, `echo`); a
    command followed by text filters (`kubectl get pods | grep x`) is that command alone.
    """
    first = stages[0]
    if len(stages) > 1 and any(_program(s.words) in _KUBECTL for s in stages[1:]):
        if len(stages) != 2:
            raise _unsupported("a pipeline through several commands into kubectl cannot be replayed")
        return _run_stage(ctx, stages[1], _produce(ctx, first))
    for stage in stages[1:]:
        if _program(stage.words) not in _TEXT_FILTERS:
            raise _unsupported(f"`{_program(stage.words)}` in a pipeline cannot be replayed")
    return _run_stage(ctx, first, _redirected_input(ctx, first))


def _redirected_input(ctx: _Context, stage: _Stage) -> list[tuple[str, dict]] | None:
    if stage.stdin_path is None:
        return None
    return _documents_of_path(ctx, stage.stdin_path)


def _run_stage(ctx: _Context, stage: _Stage, stdin: list[tuple[str, dict]] | None) -> Outcome:
    words = stage.words
    head = words[0]
    if _ASSIGNMENT.match(head):
        raise _unsupported(f"environment assignments in front of a command (`{head}`) cannot be replayed")
    if head == "sudo":
        raise _unsupported("`sudo` cannot be replayed: run kubectl directly")
    if _program(words) not in _KUBECTL:
        raise _unsupported(f"`{head}` is not kubectl: only kubectl commands are replayed")
    inv = _invocation(ctx, words, stdin)
    return _dispatch(ctx, inv)


def _produce(ctx: _Context, stage: _Stage) -> list[tuple[str, dict]]:
    """The manifests a pipeline's first command writes, for a kubectl command reading `-f -`."""
    words = stage.words
    program = _program(words)
    if program == "cat":
        paths = [w for w in words[1:] if not w.startswith("-")]
        if not paths:
            if stage.stdin_path is None:
                raise _unsupported("`cat` without a file copies its own input, which is unknown")
            paths = [stage.stdin_path]
        return [doc for path in paths for doc in _documents_of_path(ctx, path)]
    if program == "echo":
        text = " ".join(w for w in words[1:] if w not in ("-n", "-e", "-E"))
        return [("-", doc) for doc in _parse_documents(text, "the echoed text")]
    if program in _KUBECTL:
        inv = _invocation(ctx, words, None)
        output = (inv.last("output") or "").lower()
        if inv.verb == "create" and _dry_run(inv) and output in ("yaml", "json"):
            return [("-", _generated(ctx, inv))]
        if inv.verb == "get" and output in ("yaml", "json"):
            found = _existing(ctx, _select(ctx, inv, inv.words[1:], verb="get"))
            return [("-", copy.deepcopy(obj)) for _, obj in found]
    raise _unsupported(f"what `{' '.join(words)}` writes into the pipe is unknown: only "
                       "`kubectl create ... --dry-run=client -o yaml`, `kubectl get ... -o yaml`, "
                       "`cat FILE` and `echo` can feed a kubectl command")
