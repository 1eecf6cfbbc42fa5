"""Replaying a solution's shell commands on a scenario's state, standard library only.

A scenario's solution is a list of steps, some with a shell command such as
`kubectl -n shop rollout undo deployment/cart`. To check that a declared solution really fixes
its scenario, each command is replayed on the faulty state (Kubernetes manifests as plain
dicts, keyed by kind, namespace and name) the way a cluster would carry it out:

* kubectl's part: the shell line is cut into commands (`&&`, `;`, pipes), each command's
  objects are found from the forms kubectl accepts (`deploy/x`, `deployment x`,
  `deployments.apps x`, `-l app=x`, `-f FILE`), and the verb becomes the change kubectl sends
  (a strategic-merge, merge or JSON patch, a replacement, a deletion);
* the API server's part: the change is merged as the server merges it, fields the server owns
  (status, uid, a Service's cluster IP) are kept, and the update is validated against the rules
  that refuse it on a real cluster (immutable fields, selectors, requests above limits), with
  the message the server answers.

Every command ends in an `Outcome`: "applied" (the command succeeded; the objects changed, or
it had nothing to change), "read-only" (it only reads), "refused" (kubectl or the API server
would answer an error, and the message is theirs) or "unsupported" (it cannot be replayed
faithfully: an interactive editor, a shell construct, a file that is not in the bundle).
`objects` is changed only when the outcome is "applied": a line that fails halfway leaves the
caller's state as it was, so the caller never has to undo anything.

Pods' status is not derived here: a changed manifest is the whole result, and the caller works
out what the pods do. Nothing from the rest of the package is imported, apart from the runtime's
YAML reader (miniyaml.py, itself standard library only), loaded when a YAML file or patch is read.
"""

from __future__ import annotations

import base64
import copy
import fnmatch
import json
import re
import shlex
import dataclasses
from dataclasses import dataclass
from fractions import Fraction
from collections.abc import Callable, Iterator
from typing import Any

__all__ = ["APPLIED", "READ_ONLY", "REFUSED", "RESTARTED_AT", "UNSUPPORTED", "Key", "Outcome", "replay"]

Key = tuple[str, str | None, str]

APPLIED, READ_ONLY, REFUSED, UNSUPPORTED = "applied", "read-only", "refused", "unsupported"

#: The time `kubectl rollout restart` writes into the pod template. kubectl writes the current
#: time; a fixed one keeps a replay deterministic.
RESTARTED_AT = "2026-01-01T00:00:00Z"
RESTARTED_AT_ANNOTATION = "kubectl.kubernetes.io/restartedAt"
LAST_APPLIED_ANNOTATION = "kubectl.kubernetes.io/last-applied-configuration"


@dataclass
class Outcome:
    status: str  # "applied" | "read-only" | "unsupported" | "refused"
    message: str  # one line: what was done, or why not
    execs: tuple[int, ...] = ()  # the indexes of the known `execs` the line ran (when it applied)


def replay(objects: dict[Key, dict], command: str, *, namespace: str | None = None,
           files: dict[str, bytes] | None = None, history: dict[Key, list[dict]] | None = None,
           execs: list[dict] | None = None) -> Outcome:
    """Replays one shell command line on `objects`, changing them in place only if it applies.

    `namespace` is the namespace a command works in when it names none (kubectl's context
    namespace); `files` the compiled bundle's files by relative path, for `-f FILE`; `history`
    the earlier pod templates of workloads, oldest first, for `rollout undo`; `execs` the
    commands run in pods whose effect is known (a fault's revert command, as `revert/exec.json`
    lists it: namespace, workload, container, command): a `kubectl exec` running one of them in
    its workload applies, and `Outcome.execs` says which. Any other `kubectl exec` is unsupported.
    """
    store = _Store(objects)
    ctx = _Context(store, namespace or "default", files or {}, history or {}, list(execs or ()))
    try:
        outcome = _run_line(ctx, command)
    except _Stop as stop:
        outcome = stop.outcome
    except Exception as exc:  # noqa: BLE001 - a replay answers; it never crashes the check that runs it
        return Outcome(UNSUPPORTED, _one_line(
            f"internal error while replaying {command!r}: {type(exc).__name__}: {exc}"))
    if outcome.status == APPLIED:
        store.commit()
        outcome.execs = tuple(dict.fromkeys(ctx.ran))
    return outcome


# --- outcomes and state -----------------------------------------------------------------------


class _Stop(Exception):
    """Ends a command early with its outcome: a refusal, or something that cannot be replayed."""

    def __init__(self, status: str, message: str) -> None:
        super().__init__(message)
        self.outcome = Outcome(status, _one_line(message))


def _refused(message: str) -> _Stop:
    return _Stop(REFUSED, message)


def _unsupported(message: str) -> _Stop:
    return _Stop(UNSUPPORTED, message)


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


class _Store:
    """The objects as the commands see them.

    Reads fall through to the caller's dict; writes are kept aside and reach it only through
    `commit`, once the whole line is known to apply. Stored objects are never edited in place:
    a change is always a new dict, so the caller's objects are untouched until then.
    """

    def __init__(self, base: dict[Key, dict]) -> None:
        self.base = base
        self.changes: dict[Key, dict | None] = {}  # None: deleted

    def get(self, key: Key) -> dict | None:
        if key in self.changes:
            return self.changes[key]
        return self.base.get(key)

    def put(self, key: Key, obj: dict) -> None:
        self.changes[key] = obj

    def delete(self, key: Key) -> None:
        self.changes[key] = None

    def keys(self) -> list[Key]:
        keys = [k for k in self.base if self.changes.get(k, self.base[k]) is not None]
        keys += [k for k, v in self.changes.items() if k not in self.base and v is not None]
        return keys

    def commit(self) -> None:
        for key, obj in self.changes.items():
            if obj is None:
                self.base.pop(key, None)
            else:
                self.base[key] = obj


@dataclass
class _Context:
    store: _Store
    namespace: str
    files: dict[str, bytes]
    history: dict[Key, list[dict]]
    execs: list[dict] = dataclasses.field(default_factory=list)
    ran: list[int] = dataclasses.field(default_factory=list)


# --- the shell line -----------------------------------------------------------------------------


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
        fd_match = re.search(r"(?:^|[ \t])(\d+)$", current)
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


def _program(words: list[str]) -> str:
    return words[0].rsplit("/", 1)[-1] if words else ""


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


# --- the kubectl command ------------------------------------------------------------------------

# flags that take a value (as `--flag value` or `--flag=value`); the others are switches
_VALUE_FLAGS = {
    "namespace", "context", "kubeconfig", "cluster", "user", "server", "as", "as-group", "as-uid", "token",
    "request-timeout", "v", "cache-dir", "certificate-authority", "client-certificate", "client-key",
    "tls-server-name", "username", "password", "profile", "profile-output", "output", "selector",
    "field-selector", "filename", "kustomize", "patch", "patch-file", "type", "replicas", "current-replicas",
    "resource-version", "timeout", "container", "containers", "env", "from", "prefix", "keys", "limits",
    "requests", "to-revision", "grace-period", "field-manager", "template", "sort-by", "label-columns",
    "image", "from-literal", "from-file", "from-env-file", "docker-server", "docker-username",
    "docker-password", "docker-email", "key", "cert", "overrides", "port", "target-port", "name", "labels",
    "chunk-size", "raw", "subresource", "for", "revision", "tail", "since", "since-time", "limit-bytes",
    "max-log-requests", "pod-running-timeout", "prune-allowlist", "applyset", "serviceaccount", "group",
    "clusterrole", "role", "resource", "verb", "resource-name", "hard", "scopes", "schedule", "restart",
    "show-kind", "output-watch-events", "selector-key",
}
_SHORT_VALUE = {"n": "namespace", "l": "selector", "f": "filename", "p": "patch", "o": "output", "c": "container",
                "e": "env", "s": "server", "k": "kustomize", "L": "label-columns"}
_SHORT_SWITCH = {"A": "all-namespaces", "R": "recursive", "w": "watch", "i": "stdin", "t": "tty", "q": "quiet",
                 "h": "help"}
_NUMBER = re.compile(r"-?\d+(\.\d*)?")


@dataclass
class _Invocation:
    """A kubectl command: its positional words (the verb first) and its flags, by long name."""

    program: str
    words: list[str]
    flags: dict[str, list[str]]
    namespace: str
    explicit_namespace: bool
    stdin: list[tuple[str, dict]] | None

    @property
    def verb(self) -> str:
        return self.words[0] if self.words else ""

    @property
    def text(self) -> str:
        return " ".join([self.program, *self.words[:2]])

    def last(self, *names: str) -> str | None:
        for name in names:
            if self.flags.get(name):
                return self.flags[name][-1]
        return None

    def values(self, *names: str) -> list[str]:
        return [value for name in names for value in self.flags.get(name, [])]

    def enabled(self, name: str) -> bool:
        """A switch: given bare, or with a value other than false."""
        value = self.last(name)
        return value is not None and value.lower() not in ("false", "0", "f")


def _invocation(ctx: _Context, words: list[str], stdin: list[tuple[str, dict]] | None) -> _Invocation:
    """Reads a kubectl command's words as kubectl's flag parser does.

    Flags may come anywhere (before the verb too); `--flag=value`, `--flag value` for the flags
    that take a value, `-n value`, `-nvalue` and `-n=value`; `--` ends the flags. The flags
    of every verb are read alike, as they do not clash where it matters.
    """
    flags: dict[str, list[str]] = {}
    positional: list[str] = []
    rest = words[1:]
    i = 0
    while i < len(rest):
        word = rest[i]
        if word == "--":
            positional.extend(rest[i + 1:])
            break
        if word.startswith("--") and len(word) > 2:
            name, eq, value = word[2:].partition("=")
            if not eq and name in _VALUE_FLAGS and i + 1 < len(rest):
                value = rest[i + 1]
                i += 1
            flags.setdefault(name, []).append(value)
        elif word.startswith("-") and len(word) > 1 and not _NUMBER.fullmatch(word):
            letter = word[1]
            if letter in _SHORT_VALUE:
                value = word[2:]
                if value.startswith("="):
                    value = value[1:]
                elif not value and i + 1 < len(rest):
                    value = rest[i + 1]
                    i += 1
                flags.setdefault(_SHORT_VALUE[letter], []).append(value)
            else:
                for letter in word[1:]:
                    flags.setdefault(_SHORT_SWITCH.get(letter, letter), []).append("")
        else:
            positional.append(word)
        i += 1
    explicit = bool(flags.get("namespace") and flags["namespace"][-1])
    namespace = flags["namespace"][-1] if explicit else ctx.namespace
    return _Invocation(_program(words), positional, flags, namespace, explicit, stdin)


def _dry_run(inv: _Invocation) -> bool:
    value = inv.last("dry-run")
    return value is not None and value.lower() not in ("none", "false")


_READ_ONLY_VERBS = {"get", "describe", "logs", "log", "top", "explain", "events", "version", "api-resources",
                    "api-versions", "cluster-info", "diff", "wait", "kustomize", "completion", "help", "options",
                    "status", "whoami"}
_READ_ONLY_SUBCOMMANDS = {
    "rollout": {"status", "history"},
    "auth": {"can-i", "whoami"},
    "config": {"view", "get-contexts", "current-context", "get-clusters", "get-users"},
    "plugin": {"list"},
}
_UNSUPPORTED_VERBS = {
    "edit": "opens an interactive editor, so the change is not in the command; write it as "
            "`kubectl patch`, `kubectl set` or `kubectl apply -f`",
    "exec": "runs a program inside a container, whose effect is not in any manifest",
    "port-forward": "forwards a port; it changes no object",
    "proxy": "runs a proxy; it changes no object",
    "attach": "attaches to a running container; it changes no object",
    "cp": "copies files into a container, which no manifest records",
    "debug": "starts a debugging container, which cannot be replayed",
    "drain": "evicts pods one by one, which cannot be replayed: use `kubectl cordon` and delete what must go",
}


def _dispatch(ctx: _Context, inv: _Invocation) -> Outcome:
    """Runs a kubectl command: read-only verbs change nothing, dry runs neither, the rest by their handler."""
    verb = inv.verb
    if not verb:
        return Outcome(READ_ONLY, f"`{inv.program}` without a command only prints its help")
    sub = inv.words[1] if len(inv.words) > 1 else ""
    if verb in _READ_ONLY_VERBS or sub in _READ_ONLY_SUBCOMMANDS.get(verb, ()):
        return Outcome(READ_ONLY, f"`{inv.text}` only reads, so it changes nothing")
    if verb == "exec" and ctx.execs:
        return _known_exec(ctx, inv)
    if verb in _UNSUPPORTED_VERBS:
        raise _unsupported(f"`{inv.program} {verb}` {_UNSUPPORTED_VERBS[verb]}")
    handler = _HANDLERS.get(verb)
    if handler is None:
        raise _unsupported(f"`{inv.text}` is not a kubectl command this replay carries out")
    if _dry_run(inv):
        return Outcome(READ_ONLY, f"`{inv.text}` with --dry-run changes nothing")
    if inv.last("kustomize") is not None:
        raise _unsupported("`-k` builds manifests with kustomize, which cannot be replayed")
    answer = handler(ctx, inv)
    return answer if isinstance(answer, Outcome) else Outcome(APPLIED, answer)


# --- resource types -----------------------------------------------------------------------------


@dataclass(frozen=True)
class _Resource:
    kind: str
    plural: str
    group: str  # "" for the core group
    namespaced: bool
    short: tuple[str, ...] = ()
    builtin: bool = True  # a type of Kubernetes itself (strategic merge works), not a custom resource

    @property
    def names(self) -> tuple[str, ...]:
        return (self.kind.lower(), self.plural, *self.short)

    @property
    def noun(self) -> str:
        """How the API server names the type in its messages: `deployments.apps`."""
        return f"{self.plural}.{self.group}" if self.group else self.plural

    def ref(self, name: str) -> str:
        """How kubectl names an object in its messages: `deployment.apps/cart`."""
        return f"{self.kind.lower()}{'.' + self.group if self.group else ''}/{name}"


def _builtin(kind: str, plural: str, group: str, namespaced: bool = True, *short: str) -> _Resource:
    return _Resource(kind, plural, group, namespaced, short)


def _custom(kind: str, plural: str, group: str, namespaced: bool = True, *short: str) -> _Resource:
    return _Resource(kind, plural, group, namespaced, short, builtin=False)


_CHAOS_KINDS = ("PodChaos", "NetworkChaos", "StressChaos", "IOChaos", "HTTPChaos", "DNSChaos", "TimeChaos",
                "JVMChaos", "KernelChaos", "AWSChaos", "GCPChaos", "AzureChaos", "BlockChaos",
                "PhysicalMachineChaos", "PodNetworkChaos", "PodIOChaos", "PodHttpChaos")

_RESOURCES: tuple[_Resource, ...] = (
    _builtin("Pod", "pods", "", True, "po"),
    _builtin("Service", "services", "", True, "svc"),
    _builtin("ConfigMap", "configmaps", "", True, "cm"),
    _builtin("Secret", "secrets", ""),
    _builtin("ServiceAccount", "serviceaccounts", "", True, "sa"),
    _builtin("Namespace", "namespaces", "", False, "ns"),
    _builtin("Node", "nodes", "", False, "no"),
    _builtin("PersistentVolumeClaim", "persistentvolumeclaims", "", True, "pvc"),
    _builtin("PersistentVolume", "persistentvolumes", "", False, "pv"),
    _builtin("ResourceQuota", "resourcequotas", "", True, "quota"),
    _builtin("LimitRange", "limitranges", "", True, "limits"),
    _builtin("Endpoints", "endpoints", "", True, "ep"),
    _builtin("Event", "events", "", True, "ev"),
    _builtin("ReplicationController", "replicationcontrollers", "", True, "rc"),
    _builtin("Deployment", "deployments", "apps", True, "deploy"),
    _builtin("StatefulSet", "statefulsets", "apps", True, "sts"),
    _builtin("DaemonSet", "daemonsets", "apps", True, "ds"),
    _builtin("ReplicaSet", "replicasets", "apps", True, "rs"),
    _builtin("ControllerRevision", "controllerrevisions", "apps"),
    _builtin("HorizontalPodAutoscaler", "horizontalpodautoscalers", "autoscaling", True, "hpa"),
    _builtin("Job", "jobs", "batch"),
    _builtin("CronJob", "cronjobs", "batch", True, "cj"),
    _builtin("NetworkPolicy", "networkpolicies", "networking.k8s.io", True, "netpol"),
    _builtin("Ingress", "ingresses", "networking.k8s.io", True, "ing"),
    _builtin("IngressClass", "ingressclasses", "networking.k8s.io", False),
    _builtin("PodDisruptionBudget", "poddisruptionbudgets", "policy", True, "pdb"),
    _builtin("PriorityClass", "priorityclasses", "scheduling.k8s.io", False, "pc"),
    _builtin("Role", "roles", "rbac.authorization.k8s.io"),
    _builtin("RoleBinding", "rolebindings", "rbac.authorization.k8s.io"),
    _builtin("ClusterRole", "clusterroles", "rbac.authorization.k8s.io", False),
    _builtin("ClusterRoleBinding", "clusterrolebindings", "rbac.authorization.k8s.io", False),
    _builtin("StorageClass", "storageclasses", "storage.k8s.io", False, "sc"),
    _builtin("CustomResourceDefinition", "customresourcedefinitions", "apiextensions.k8s.io", False, "crd", "crds"),
    _custom("Schedule", "schedules", "chaos-mesh.org"),
    _custom("Workflow", "workflows", "chaos-mesh.org", True, "wf"),
    _custom("StatusCheck", "statuschecks", "chaos-mesh.org"),
    *(_custom(kind, kind.lower(), "chaos-mesh.org") for kind in _CHAOS_KINDS),
    _custom("AuthorizationPolicy", "authorizationpolicies", "security.istio.io", True, "ap"),
    _custom("PeerAuthentication", "peerauthentications", "security.istio.io", True, "pa"),
    _custom("RequestAuthentication", "requestauthentications", "security.istio.io", True, "ra"),
    _custom("VirtualService", "virtualservices", "networking.istio.io", True, "vs"),
    _custom("DestinationRule", "destinationrules", "networking.istio.io", True, "dr"),
    _custom("Gateway", "gateways", "networking.istio.io", True, "gw"),
    _custom("ServiceEntry", "serviceentries", "networking.istio.io", True, "se"),
    _custom("Sidecar", "sidecars", "networking.istio.io"),
    _custom("ClusterPolicy", "clusterpolicies", "kyverno.io", False, "cpol"),
    _custom("Policy", "policies", "kyverno.io", True, "pol"),
    _custom("PolicyReport", "policyreports", "wgpolicyk8s.io", True, "polr"),
    _custom("ClusterPolicyReport", "clusterpolicyreports", "wgpolicyk8s.io", False, "cpolr"),
)
# `kubectl get all` and `kubectl delete all`
_CATEGORY_ALL = ("Pod", "Service", "ReplicationController", "DaemonSet", "Deployment", "ReplicaSet", "StatefulSet",
                 "HorizontalPodAutoscaler", "CronJob", "Job")


def _group_of(api_version: Any) -> str:
    text = api_version if isinstance(api_version, str) else ""
    return text.rpartition("/")[0]


def _plural_of(kind: str) -> str:
    word = kind.lower()
    if word.endswith(("s", "x", "ch", "sh")):
        return word + "es"
    if word.endswith("y") and word[-2:-1] not in ("a", "e", "o", "u"):
        return word[:-1] + "ies"
    return word + "s"


def _known_resources(ctx: _Context) -> list[_Resource]:
    """Kubernetes' and the usual add-ons' types, then those only the objects themselves tell of."""
    known = list(_RESOURCES)
    kinds = {r.kind for r in known}
    for key in ctx.store.keys():
        kind = key[0]
        if isinstance(kind, str) and kind and kind not in kinds:
            obj = ctx.store.get(key) or {}
            known.append(_custom(kind, _plural_of(kind), _group_of(obj.get("apiVersion")), key[1] is not None))
            kinds.add(kind)
    return known


def _known_exec(ctx: _Context, inv: _Invocation) -> Outcome:
    """`kubectl exec WORKLOAD [-c CONTAINER] -- COMMAND...` running a command whose effect is known (`execs`):
    the same words in the same container of the same workload (kubectl's default container when `-c` is
    left out: the pod's `kubectl.kubernetes.io/default-container`, else its first)."""
    args = inv.words[1:]
    kind_word, slash, name = args[0].partition("/") if args else ("", "", "")
    if slash and name:
        res = _resource(ctx, kind_word)
        obj = ctx.store.get(_key(res, inv.namespace, name))
        if obj is None:
            raise _not_found(res, name)
        container = inv.last("container")
        if container is None:
            template = (obj.get("spec") or {}).get("template") or {}
            annotations = (template.get("metadata") or {}).get("annotations") or {}
            containers = [c.get("name") for c in (template.get("spec") or {}).get("containers") or []]
            container = annotations.get("kubectl.kubernetes.io/default-container") or (containers[:1] or [None])[0]
        for index, step in enumerate(ctx.execs):
            workload = step.get("workload") or {}
            if (step.get("namespace"), workload.get("kind"), workload.get("name"), step.get("container"),
                    list(step.get("command") or ())) == (inv.namespace, res.kind, name, container, args[1:]):
                ctx.ran.append(index)
                return Outcome(APPLIED, f"ran `{' '.join(args[1:])[:80]}` in {res.ref(name)}, container {container}")
    raise _unsupported(f"`{inv.program} exec` {_UNSUPPORTED_VERBS['exec']}, and it is not the revert command of "
                       "the scenario's exec fault (the same command, in the same container of the same workload)")


def _resource(ctx: _Context, word: str) -> _Resource:
    """The type a kubectl argument names: `deploy`, `deployments`, `Deployment`, `deployments.apps`..."""
    wanted = word.lower()
    known = _known_resources(ctx)
    for res in known:
        if wanted in res.names:
            return res
    base, dot, group = wanted.partition(".")
    if dot:
        for res in known:
            if base in res.names and res.group and (group == res.group or group.endswith("." + res.group)):
                return res
    raise _refused(f'error: the server doesn\'t have a resource type "{word}"')


def _resource_of(ctx: _Context, manifest: dict) -> _Resource:
    """The type of a manifest from a file, by kind and API group (a kind alone when the group is unknown)."""
    kind = manifest.get("kind")
    if not isinstance(kind, str) or not kind:
        raise _refused("error: error validating data: kind not set")
    group = _group_of(manifest.get("apiVersion"))
    known = _known_resources(ctx)
    for res in known:
        if res.kind == kind and res.group == group:
            return res
    for res in known:
        if res.kind == kind:
            return res
    return _custom(kind, _plural_of(kind), group, True)


def _key(res: _Resource, namespace: str | None, name: str) -> Key:
    return (res.kind, namespace if res.namespaced else None, name)


def _not_found(res: _Resource, name: str, when: str = "") -> _Stop:
    return _refused(f'Error from server (NotFound): {when}{res.noun} "{name}" not found')


# --- which objects a command names --------------------------------------------------------------


@dataclass(frozen=True)
class _Target:
    res: _Resource
    key: Key
    source: str | None = None  # the file that named it, for kubectl's "error when ..." wording

    @property
    def name(self) -> str:
        return self.key[2]


def _select(ctx: _Context, inv: _Invocation, args: list[str], *, verb: str) -> list[_Target]:
    """The objects named by `TYPE NAME...`, `TYPE/NAME...`, `TYPE -l SELECTOR`, `TYPE --all` or `-f FILE`."""
    if inv.values("filename"):
        if args:
            raise _refused("error: specifying a resource by name and with -f at the same time is not allowed")
        targets = []
        for source, manifest in _manifests(ctx, inv):
            res, key, _ = _identify(ctx, inv, manifest)
            targets.append(_Target(res, key, source))
        return targets
    if not args:
        raise _refused("error: You must provide one or more resources by argument or filename.")
    namespace = inv.namespace
    if "/" in args[0]:
        targets = []
        for arg in args:
            kind, slash, name = arg.partition("/")
            if not slash or not kind or not name:
                raise _refused("error: there is no need to specify a resource type as a separate argument when "
                               "passing arguments in resource/name form")
            res = _resource(ctx, kind)
            targets.append(_Target(res, _key(res, namespace, name)))
        return targets
    types = _types(ctx, args[0])
    names = args[1:]
    selector = inv.last("selector")
    fields = inv.last("field-selector")
    if names:
        if selector is not None:
            raise _refused("error: name cannot be provided when a selector is specified")
        return [_Target(res, _key(res, namespace, name)) for res in types for name in names]
    if selector is None and fields is None and not inv.enabled("all"):
        if verb == "delete":
            raise _refused("error: resource(s) were provided, but no name, label selector, or --all flag specified")
        raise _refused("error: resource(s) were provided, but no name was specified")
    requirements = _parse_selector(selector or "")
    field_requirements = _parse_field_selector(fields or "")
    every_namespace = inv.enabled("all-namespaces")
    targets = []
    for res in types:
        found = []
        for key in ctx.store.keys():
            if key[0] != res.kind or (res.namespaced and not every_namespace and key[1] != namespace):
                continue
            obj = ctx.store.get(key) or {}
            if _matches(requirements, _labels(obj)) and _fields_match(field_requirements, key):
                found.append(key)
        targets += [_Target(res, key) for key in sorted(found, key=lambda k: (k[1] or "", k[2]))]
    return targets


def _types(ctx: _Context, word: str) -> list[_Resource]:
    """The types of a `TYPE[,TYPE...]` argument; `all` is kubectl's category of workloads and services."""
    types: list[_Resource] = []
    for part in word.split(","):
        if not part:
            continue
        if part.lower() == "all":
            types += [r for r in _RESOURCES if r.kind in _CATEGORY_ALL]
        else:
            types.append(_resource(ctx, part))
    if not types:
        raise _refused("error: You must provide one or more resources by argument or filename.")
    return types


def _existing(ctx: _Context, targets: list[_Target]) -> Iterator[tuple[_Target, dict]]:
    """Each target with its object as it is when its turn comes (after the changes to the ones before)."""
    for target in targets:
        obj = ctx.store.get(target.key)
        if obj is None:
            raise _not_found(target.res, target.name, _when(target, "retrieving"))
        yield target, obj


def _when(target: _Target, doing: str) -> str:
    return f'error when {doing} "{target.source}": ' if target.source else ""


def _labels(obj: dict) -> dict:
    meta = obj.get("metadata")
    labels = meta.get("labels") if isinstance(meta, dict) else None
    return labels if isinstance(labels, dict) else {}


_REQUIREMENT = re.compile(r"\s*(?P<key>[^\s!=(),]+)\s*(?P<op>==|=|!=)\s*(?P<value>[^\s!=(),]*)\s*")
_SET_REQUIREMENT = re.compile(r"\s*(?P<key>[^\s!=(),]+)\s+(?P<op>in|notin)\s*\((?P<values>[^()]*)\)\s*")
_EXISTS = re.compile(r"\s*(?P<neg>!?)\s*(?P<key>[^\s!=(),]+)\s*")


def _parse_selector(text: str) -> list[tuple[str, str, frozenset[str]]]:
    """A label selector as (key, operator, values) requirements, all of which must hold."""
    requirements = []
    for part in _split_outside_parentheses(text):
        if not part.strip():
            continue
        if m := _SET_REQUIREMENT.fullmatch(part):
            values = frozenset(v.strip() for v in m["values"].split(",") if v.strip())
            requirements.append((m["key"], m["op"], values))
        elif m := _REQUIREMENT.fullmatch(part):
            requirements.append((m["key"], "!=" if m["op"] == "!=" else "=", frozenset([m["value"]])))
        elif m := _EXISTS.fullmatch(part):
            requirements.append((m["key"], "!" if m["neg"] else "exists", frozenset()))
        else:
            raise _refused(f"error: unable to parse requirement: {part.strip()}")
    return requirements


def _split_outside_parentheses(text: str) -> list[str]:
    parts, depth, current = [], 0, []
    for char in text:
        depth += {"(": 1, ")": -1}.get(char, 0)
        if char == "," and depth == 0:
            parts.append("".join(current))
            current = []
        else:
            current.append(char)
    parts.append("".join(current))
    return parts


def _matches(requirements: list[tuple[str, str, frozenset[str]]], labels: dict) -> bool:
    for key, op, values in requirements:
        present = key in labels
        value = str(labels.get(key))
        if op == "=" and not (present and value in values):
            return False
        if op == "!=" and present and value in values:
            return False
        if op == "in" and not (present and value in values):
            return False
        if op == "notin" and present and value in values:
            return False
        if op == "exists" and not present:
            return False
        if op == "!" and present:
            return False
    return True


def _parse_field_selector(text: str) -> list[tuple[str, str, str]]:
    requirements = []
    for part in text.split(","):
        if not part.strip():
            continue
        m = _REQUIREMENT.fullmatch(part)
        if not m or m["key"] not in ("metadata.name", "metadata.namespace"):
            raise _unsupported(f"the field selector `{part.strip()}` cannot be replayed on manifests")
        requirements.append((m["key"], "!=" if m["op"] == "!=" else "=", m["value"]))
    return requirements


def _fields_match(requirements: list[tuple[str, str, str]], key: Key) -> bool:
    for field, op, value in requirements:
        actual = key[2] if field == "metadata.name" else (key[1] or "")
        if (actual == value) != (op == "="):
            return False
    return True


# --- files --------------------------------------------------------------------------------------


def _manifests(ctx: _Context, inv: _Invocation) -> list[tuple[str, dict]]:
    """The manifests of every `-f` of the command, with the file each came from."""
    out = []
    for path in inv.values("filename"):
        if path == "-":
            if inv.stdin is None:
                raise _unsupported("`-f -` reads manifests from standard input, which is unknown here")
            out += inv.stdin
        elif re.match(r"[a-z][a-z0-9+.-]*://", path, re.I):
            raise _unsupported(f"`{path}` is fetched from the network, so what it contains is unknown")
        else:
            out += _documents_of_path(ctx, path)
    return out


def _bundle_paths(ctx: _Context, path: str) -> list[str]:
    """The bundle files a path names: as given, relative to the bundle root, or under a folder.

    A solution may name a bundle file from elsewhere (`./revert/apply.yaml`,
    `bundle/revert/apply.yaml`, `/tmp/x/revert/apply.yaml`): the longest tail that is a file, or
    a folder of files, of the bundle is taken.
    """
    parts = [p for p in path.split("/") if p not in ("", ".")]
    for start in range(len(parts)):
        candidate = "/".join(parts[start:])
        if candidate in ctx.files:
            return [candidate]
        folder = [f for f in sorted(ctx.files) if f.startswith(candidate + "/")
                  and f.lower().endswith((".yaml", ".yml", ".json"))]
        if folder:
            return folder
    return []


def _documents_of_path(ctx: _Context, path: str) -> list[tuple[str, dict]]:
    """The manifests of a bundle file (or folder), each with the file it came from."""
    found = _bundle_paths(ctx, path)
    if not found:
        raise _unsupported(f'the path "{path}" is not a file of the compiled bundle, so what it contains is unknown')
    out = []
    for name in found:
        try:
            text = ctx.files[name].decode("utf-8")
        except (UnicodeDecodeError, AttributeError):
            raise _refused(f"error: error parsing {name}: not UTF-8 text") from None
        out += [(name, doc) for doc in _parse_documents(text, name)]
    return out


def _parse_documents(text: str, what: str) -> list[dict]:
    """The objects of a YAML or JSON text; a `List` stands for its items."""
    stripped = text.strip()
    if stripped.startswith(("{", "[")):
        try:
            docs = [json.loads(stripped)]
        except ValueError:
            docs = _yaml_documents(text, what)
    else:
        docs = _yaml_documents(text, what)
    out = []
    for doc in docs:
        if isinstance(doc, list):
            doc = {"kind": "List", "items": doc}
        if not isinstance(doc, dict):
            raise _refused(f"error: error parsing {what}: a manifest must be a mapping")
        if isinstance(doc.get("kind"), str) and doc["kind"].endswith("List") and isinstance(doc.get("items"), list):
            for item in doc["items"]:
                if not isinstance(item, dict):
                    raise _refused(f"error: error parsing {what}: a list item must be a mapping")
                out.append(item)
        elif doc:
            out.append(doc)
    return out


def _yaml_documents(text: str, what: str) -> list[Any]:
    """YAML through the package's standard-library reader, imported only when YAML is met."""
    try:
        from .miniyaml import load_all
    except ImportError:
        raise _unsupported(f"{what} is YAML, and no YAML reader is available here") from None
    try:
        return load_all(text)
    except (ValueError, RecursionError) as exc:
        raise _refused(f"error: error parsing {what}: {exc}") from None


def _identify(ctx: _Context, inv: _Invocation, manifest: dict) -> tuple[_Resource, Key, dict]:
    """A manifest's type and key, with the namespace kubectl gives it when it has none."""
    res = _resource_of(ctx, manifest)
    meta = manifest.get("metadata")
    if not isinstance(meta, dict) or not isinstance(meta.get("name"), str) or not meta["name"]:
        raise _refused("error: resource name may not be empty")
    namespace = meta.get("namespace")
    if not res.namespaced:
        return res, _key(res, None, meta["name"]), manifest
    if namespace in (None, ""):
        namespace = inv.namespace
        manifest = {**manifest, "metadata": {**meta, "namespace": namespace}}
    elif not isinstance(namespace, str):
        raise _refused("error: the namespace of the provided object is not text")
    elif inv.explicit_namespace and namespace != inv.namespace:
        raise _refused(f'error: the namespace from the provided object "{namespace}" does not match the namespace '
                       f'"{inv.namespace}". You must pass \'--namespace={namespace}\' to perform this operation.')
    return res, _key(res, namespace, meta["name"]), manifest


# --- verbs --------------------------------------------------------------------------------------

_SCALABLE = {"Deployment", "StatefulSet", "ReplicaSet", "ReplicationController"}


def _scale(ctx: _Context, inv: _Invocation) -> str:
    """`kubectl scale`: the replica count, after the `--current-replicas` precondition holds."""
    wanted = _count(inv.last("replicas"), required=True)
    current = _count(inv.last("current-replicas"), required=False)
    messages = []
    for target, obj in _existing(ctx, _select(ctx, inv, inv.words[1:], verb="scale")):
        if target.res.kind not in _SCALABLE:
            raise _refused("Error from server (NotFound): the server could not find the requested resource")
        spec = _spec(obj)
        have = spec.get("replicas", 1)
        if current is not None and current != -1 and have != current:
            raise _refused(f"error: Expected replicas to be {current}, was {have}")
        new = copy.deepcopy(obj)
        _dict_at(new, "spec")["replicas"] = wanted
        changed = _update(ctx, target, obj, new)
        messages.append(f"{target.res.ref(target.name)} scaled" + ("" if changed else " (no change)"))
    return _joined(messages)


def _count(text: str | None, required: bool) -> int | None:
    """A `--replicas`/`--current-replicas` value, refused as kubectl refuses it."""
    if text is None:
        if required:
            raise _refused('error: required flag(s) "replicas" not set')
        return None
    try:
        value = int(text)
    except ValueError:
        raise _refused(f'error: invalid argument "{text}" for "--replicas" flag: strconv.ParseInt: parsing '
                       f'"{text}": invalid syntax') from None
    if value < 0 and required:
        raise _refused("error: The --replicas=COUNT flag is required, and COUNT must be greater than or equal to 0")
    return value


def _patch(ctx: _Context, inv: _Invocation) -> str:
    """`kubectl patch`: a strategic-merge (the default), merge (RFC 7386) or JSON (RFC 6902) patch."""
    if inv.last("subresource"):
        raise _unsupported("patching a subresource (`--subresource`) cannot be replayed")
    text = inv.last("patch")
    if text is None and inv.last("patch-file"):
        docs = _bundle_paths(ctx, inv.last("patch-file") or "")
        if not docs:
            raise _unsupported(f'the patch file "{inv.last("patch-file")}" is not a file of the compiled bundle')
        text = ctx.files[docs[0]].decode("utf-8", "replace")
    if not text:
        raise _refused("error: must specify --patch or --patch-file containing the contents of the patch")
    kind = (inv.last("type") or "strategic").lower()
    if kind not in ("strategic", "merge", "json"):
        raise _refused(f'error: --type must be one of [json merge strategic], not "{kind}"')
    patch = _parse_patch(text)
    messages = []
    for target, obj in _existing(ctx, _select(ctx, inv, inv.words[1:], verb="patch")):
        new = _patched(target.res, obj, patch, kind)
        _check_identity(target, new)
        changed = _update(ctx, target, obj, new)
        messages.append(f"{target.res.ref(target.name)} patched" + ("" if changed else " (no change)"))
    return _joined(messages)


def _parse_patch(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        pass
    docs = _yaml_documents(text, "the patch")
    if len(docs) != 1:
        raise _refused(f'error: unable to parse "{text}": the patch must be one JSON or YAML document')
    return docs[0]


def _patched(res: _Resource, obj: dict, patch: Any, kind: str) -> dict:
    """The object after a patch of the given type; custom resources take no strategic merge, as on a cluster."""
    if kind == "json":
        if not isinstance(patch, list):
            raise _refused("The request is invalid: the server rejected our request due to an error in our "
                           "request (a JSON patch is a list of operations)")
        return _json_patch(obj, patch)
    if not isinstance(patch, dict):
        raise _refused("The request is invalid: the server rejected our request due to an error in our "
                       "request (the patch is not an object)")
    if kind == "merge":
        return _merge_patch(obj, patch)
    if not res.builtin:
        raise _refused("Error from server (UnsupportedMediaType): the body of the request was in an unknown "
                       "format - accepted media types include: application/json-patch+json, "
                       "application/merge-patch+json, application/apply-patch+yaml")
    return _strategic_merge(obj, patch, res.kind)


def _check_identity(target: _Target, new: Any) -> None:
    """A patch cannot rename an object or move it to another namespace."""
    if not isinstance(new, dict):
        raise _refused("The request is invalid: the server rejected our request due to an error in our request")
    meta = new.get("metadata") if isinstance(new.get("metadata"), dict) else {}
    if meta.get("name") != target.name:
        raise _refused(f"Error from server (BadRequest): the name of the object ({meta.get('name')}) does not match "
                       f"the name on the URL ({target.name})")
    if target.res.namespaced and meta.get("namespace") not in (None, target.key[1]):
        raise _refused("Error from server (BadRequest): the namespace of the provided object does not match the "
                       "namespace sent on the request")


# where a type keeps its pod spec, for `kubectl set` and the validation of pod templates
_POD_SPEC_PATHS = {
    "Pod": ("spec",),
    "Deployment": ("spec", "template", "spec"),
    "StatefulSet": ("spec", "template", "spec"),
    "DaemonSet": ("spec", "template", "spec"),
    "ReplicaSet": ("spec", "template", "spec"),
    "ReplicationController": ("spec", "template", "spec"),
    "Job": ("spec", "template", "spec"),
    "CronJob": ("spec", "jobTemplate", "spec", "template", "spec"),
}


def _set(ctx: _Context, inv: _Invocation) -> str | Outcome:
    sub = inv.words[1] if len(inv.words) > 1 else ""
    handler = {"image": _set_image, "env": _set_env, "resources": _set_resources,
               "serviceaccount": _set_serviceaccount, "sa": _set_serviceaccount}.get(sub)
    if handler is None:
        raise _unsupported(f"`{inv.program} set {sub}` is not replayed" if sub else "`set` needs a subcommand")
    return handler(ctx, inv, inv.words[2:])


def _split_changes(args: list[str], what: str) -> tuple[list[str], list[str]]:
    """kubectl's split of `set env`/`label`/`annotate` arguments: objects first, then `K=V` and `K-`."""
    resources: list[str] = []
    changes: list[str] = []
    for arg in args:
        if "=" in arg or arg.endswith("-"):
            changes.append(arg)
        elif changes:
            raise _refused(f"error: all resources must be specified before {what} changes: {arg}")
        else:
            resources.append(arg)
    return resources, changes


def _pod_spec(target: _Target, obj: dict) -> dict:
    """The pod spec inside `obj` (a copy being edited), made if the type has one and it is missing."""
    path = _POD_SPEC_PATHS.get(target.res.kind)
    if path is None:
        raise _refused(f"error: {target.res.ref(target.name)} is not a pod and has no pod template")
    node = obj
    for step in path:
        node = _dict_at(node, step)
    return node


def _containers(spec: dict) -> list[dict]:
    out = []
    for field in ("initContainers", "containers"):
        value = spec.get(field)
        if isinstance(value, list):
            out += [c for c in value if isinstance(c, dict)]
    return out


def _set_image(ctx: _Context, inv: _Invocation, args: list[str]) -> str:
    """`kubectl set image`: CONTAINER=IMAGE for each container named (`*` for all of them)."""
    resources = [a for a in args if "=" not in a]
    images = [a.partition("=")[::2] for a in args if "=" in a]
    if not images:
        raise _refused("error: at least one image update is required")
    messages = []
    for target, obj in _existing(ctx, _select(ctx, inv, resources, verb="set")):
        new = copy.deepcopy(obj)
        containers = _containers(_pod_spec(target, new))
        for name, image in images:
            chosen = [c for c in containers if name == "*" or c.get("name") == name]
            if not chosen:
                raise _refused(f'error: unable to find container named "{name}"')
            for container in chosen:
                container["image"] = image
        changed = _update(ctx, target, obj, new)
        messages.append(f"{target.res.ref(target.name)} image updated" + ("" if changed else " (no change)"))
    return _joined(messages)


def _set_env(ctx: _Context, inv: _Invocation, args: list[str]) -> str | Outcome:
    """`kubectl set env`: K=V sets (in place, or appended), K- removes, in the containers chosen by -c."""
    if inv.last("from") is not None or inv.values("from-file", "from-env-file"):
        raise _unsupported("`kubectl set env --from` reads keys from another object, which is not replayed")
    if inv.enabled("list") or inv.enabled("resolve"):
        return Outcome(READ_ONLY, f"`{inv.text}` --list only reads, so it changes nothing")
    resources, changes = _split_changes(args, "environment")
    changes += inv.values("env")
    sets: list[tuple[str, str]] = []
    removals: list[str] = []
    for change in changes:
        if "=" in change:
            name, _, value = change.partition("=")
            if not name:
                raise _refused(f"error: invalid environment variable: {change}")
            sets.append((name, value))
        elif change.endswith("-") and len(change) > 1:
            removals.append(change[:-1])
        else:
            raise _refused(f"error: environment variables must be of the form key=value: {change}")
    if not sets and not removals:
        raise _refused("error: at least one environment variable must be provided")
    selector = inv.last("containers", "container") or "*"
    messages = []
    for target, obj in _existing(ctx, _select(ctx, inv, resources, verb="set")):
        new = copy.deepcopy(obj)
        chosen = [c for c in _containers(_pod_spec(target, new)) if fnmatch.fnmatchcase(str(c.get("name")), selector)]
        if not chosen:
            messages.append(f"warning: {target.res.kind}/{target.name} does not have any containers matching "
                            f'"{selector}"')
            continue
        for container in chosen:
            _edit_env(container, sets, removals)
        changed = _update(ctx, target, obj, new)
        messages.append(f"{target.res.ref(target.name)} env updated" + ("" if changed else " (no change)"))
    return _joined(messages)


def _edit_env(container: dict, sets: list[tuple[str, str]], removals: list[str]) -> None:
    """kubectl's env update: a variable keeps its place when set again (a `valueFrom` gives way to the value)."""
    env = [e for e in container.get("env") or [] if isinstance(e, dict)]
    for name, value in sets:
        entry = {"name": name, "value": value} if value != "" else {"name": name}  # the API drops an empty value
        for i, existing in enumerate(env):
            if existing.get("name") == name:
                env[i] = entry
                break
        else:
            env.append(entry)
    env = [e for e in env if e.get("name") not in removals]
    if env:
        container["env"] = env
    else:
        container.pop("env", None)


_QUANTITY = re.compile(r"([+-]?(?:\d+(?:\.\d*)?|\.\d+))(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E|[eE][+-]?\d+)?")
_SUFFIX = {"": 1, "n": Fraction(1, 10**9), "u": Fraction(1, 10**6), "m": Fraction(1, 1000), "k": 10**3,
           "M": 10**6, "G": 10**9, "T": 10**12, "P": 10**15, "E": 10**18, "Ki": 2**10, "Mi": 2**20,
           "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}


def _quantity(value: Any) -> Fraction | None:
    """A Kubernetes quantity (`250m`, `1.5Gi`, `2e3`) as an exact number, or None if it is not one."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return Fraction(value)
    if not isinstance(value, str):
        return None
    m = _QUANTITY.fullmatch(value.strip())
    if not m:
        return None
    suffix = m.group(2) or ""
    number = Fraction(m.group(1))
    if suffix[:1] in ("e", "E"):
        return number * Fraction(10) ** int(suffix[1:])
    return number * _SUFFIX[suffix]


def _resource_list(text: str | None) -> dict[str, str]:
    """A `--limits`/`--requests` value (`cpu=200m,memory=512Mi`), its quantities checked as kubectl checks them."""
    if not text:
        return {}
    out = {}
    for part in text.split(","):
        name, eq, value = part.partition("=")
        if not eq or not name:
            raise _refused(f"error: invalid argument syntax {part}, expected <resource>=<value>")
        if _quantity(value) is None:
            raise _refused("error: quantities must match the regular expression "
                           "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'")
        out[name] = value
    return out


def _set_resources(ctx: _Context, inv: _Invocation, args: list[str]) -> str:
    """`kubectl set resources`: the limits and requests given, in the containers chosen by -c."""
    limits = _resource_list(inv.last("limits"))
    requests = _resource_list(inv.last("requests"))
    if not limits and not requests:
        raise _refused("error: you must specify an update to requests or limits (in the form of --requests/--limits)")
    selector = inv.last("containers", "container") or "*"
    messages = []
    for target, obj in _existing(ctx, _select(ctx, inv, args, verb="set")):
        new = copy.deepcopy(obj)
        chosen = [c for c in _containers(_pod_spec(target, new)) if fnmatch.fnmatchcase(str(c.get("name")), selector)]
        if not chosen:
            raise _refused(f"error: unable to find container named {selector}")
        for container in chosen:
            resources = _dict_at(container, "resources")
            if limits:
                _dict_at(resources, "limits").update(limits)
            if requests:
                _dict_at(resources, "requests").update(requests)
        changed = _update(ctx, target, obj, new)
        messages.append(f"{target.res.ref(target.name)} resource requirements updated"
                        + ("" if changed else " (no change)"))
    return _joined(messages)


def _set_serviceaccount(ctx: _Context, inv: _Invocation, args: list[str]) -> str:
    """`kubectl set serviceaccount`: the pod spec's serviceAccountName."""
    if len(args) < 2:
        raise _refused("error: serviceaccount is required")
    account = args[-1]
    messages = []
    for target, obj in _existing(ctx, _select(ctx, inv, args[:-1], verb="set")):
        new = copy.deepcopy(obj)
        _pod_spec(target, new)["serviceAccountName"] = account
        changed = _update(ctx, target, obj, new)
        messages.append(f"{target.res.ref(target.name)} serviceaccount updated" + ("" if changed else " (no change)"))
    return _joined(messages)


_ROLLOUT_KINDS = {"Deployment", "StatefulSet", "DaemonSet"}


def _rollout(ctx: _Context, inv: _Invocation) -> str:
    """`kubectl rollout undo|restart|pause|resume` on each object named."""
    sub = inv.words[1] if len(inv.words) > 1 else ""
    handler = {"undo": _rollout_undo, "restart": _rollout_restart,
               "pause": _rollout_pause, "resume": _rollout_pause}.get(sub)
    if handler is None:
        raise _unsupported(f"`{inv.program} rollout {sub}` is not replayed")
    messages = []
    for target, obj in _existing(ctx, _select(ctx, inv, inv.words[2:], verb="rollout")):
        messages.append(handler(ctx, inv, target, obj))
    return _joined(messages)


def _rollout_error(target: _Target, text: str) -> _Stop:
    return _refused(f'error: {target.res.noun} "{target.name}" {text}')


def _rollout_undo(ctx: _Context, inv: _Invocation, target: _Target, obj: dict) -> str:
    """`kubectl rollout undo`: the last earlier template that differs, or revision `--to-revision`."""
    if target.res.kind not in _ROLLOUT_KINDS:
        raise _refused(f'error: no rollbacker has been implemented for "{target.res.group}, Kind={target.res.kind}"')
    spec = _spec(obj)
    if spec.get("paused") is True:
        raise _refused(f"error: you cannot rollback a paused deployment; resume it first with 'kubectl rollout "
                       f"resume {target.res.ref(target.name)}' and try again")
    revisions = [t for t in ctx.history.get(target.key) or [] if isinstance(t, dict)]
    current = _template_identity(spec.get("template"))
    wanted = _count_flag(inv.last("to-revision"))
    if wanted:
        if wanted > len(revisions):
            raise _refused(f"error: unable to find specified revision {wanted} in history")
        chosen = revisions[wanted - 1]
        if _template_identity(chosen) == current:
            return (f"{target.res.ref(target.name)} skipped rollback "
                    f"(current template already matches revision {wanted})")
    else:
        earlier = [t for t in revisions if _template_identity(t) != current]
        if not earlier:
            if target.res.kind == "Deployment":
                raise _refused(f'error: no rollout history found for deployment "{target.name}"')
            raise _refused("error: no last revision to roll back to")
        chosen = earlier[-1]
    new = copy.deepcopy(obj)
    template = copy.deepcopy(chosen)
    labels = _labels(template)
    labels.pop("pod-template-hash", None)  # the ReplicaSet's label, not the workload's
    _dict_at(new, "spec")["template"] = template
    _update(ctx, target, obj, new)
    return f"{target.res.ref(target.name)} rolled back"


def _template_identity(template: Any) -> Any:
    """A pod template as a rollout compares it: without the ReplicaSet's pod-template-hash label."""
    template = copy.deepcopy(template) if isinstance(template, dict) else {}
    meta = template.get("metadata")
    if isinstance(meta, dict) and isinstance(meta.get("labels"), dict):
        meta["labels"].pop("pod-template-hash", None)
    return _pruned(template)


def _count_flag(text: str | None) -> int:
    if text is None:
        return 0
    try:
        value = int(text)
    except ValueError:
        raise _refused(f'error: invalid argument "{text}" for "--to-revision" flag') from None
    if value < 0:
        raise _refused(f"error: unable to find specified revision {value} in history")
    return value


def _rollout_restart(ctx: _Context, inv: _Invocation, target: _Target, obj: dict) -> str:
    """`kubectl rollout restart`: a restartedAt annotation on the pod template, so its pods are replaced."""
    if target.res.kind not in _ROLLOUT_KINDS:
        raise _rollout_error(target, "restarting is not supported")
    spec = _spec(obj)
    if target.res.kind == "Deployment" and spec.get("paused") is True:
        raise _rollout_error(target, "can't restart paused deployment (run rollout resume first)")
    new = copy.deepcopy(obj)
    template = _dict_at(_dict_at(new, "spec"), "template")
    _dict_at(_dict_at(template, "metadata"), "annotations")[RESTARTED_AT_ANNOTATION] = RESTARTED_AT
    _update(ctx, target, obj, new)
    return f"{target.res.ref(target.name)} restarted"


def _rollout_pause(ctx: _Context, inv: _Invocation, target: _Target, obj: dict) -> str:
    """`kubectl rollout pause|resume`: a Deployment's spec.paused."""
    pause = inv.words[1] == "pause"
    if target.res.kind != "Deployment":
        raise _rollout_error(target, "pausing is not supported" if pause else "resuming is not supported")
    spec = _spec(obj)
    if bool(spec.get("paused")) == pause:
        raise _rollout_error(target, "is already paused" if pause else "is not paused")
    new = copy.deepcopy(obj)
    if pause:
        _dict_at(new, "spec")["paused"] = True
    else:
        _dict_at(new, "spec").pop("paused", None)  # false is the default, and the API drops it
    _update(ctx, target, obj, new)
    return f"{target.res.ref(target.name)} {'paused' if pause else 'resumed'}"


def _delete(ctx: _Context, inv: _Invocation) -> str:
    """`kubectl delete`: the objects named; a namespace takes everything in it along."""
    ignore_missing = inv.enabled("ignore-not-found")
    targets = _select(ctx, inv, inv.words[1:], verb="delete")
    messages = []
    for target in targets:
        if ctx.store.get(target.key) is None:
            if ignore_missing:
                continue
            raise _not_found(target.res, target.name, _when(target, "deleting"))
        ctx.store.delete(target.key)
        if target.res.kind == "Namespace":
            for key in ctx.store.keys():
                if key[1] == target.name:
                    ctx.store.delete(key)
        messages.append(f'{target.res.kind.lower()}{"." + target.res.group if target.res.group else ""} '
                        f'"{target.name}" deleted')
    return _joined(messages) if messages else "No resources found"


_LABEL_NAME = re.compile(r"([A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)")
_LABEL_VALUE = re.compile(r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?")
_DNS_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")


def _label(ctx: _Context, inv: _Invocation) -> str | Outcome:
    return _metadata_map(ctx, inv, "labels")


def _annotate(ctx: _Context, inv: _Invocation) -> str | Outcome:
    return _metadata_map(ctx, inv, "annotations")


def _metadata_map(ctx: _Context, inv: _Invocation, field: str) -> str | Outcome:
    """`kubectl label|annotate`: k=v sets (refused over another value without --overwrite), k- removes."""
    what = "label" if field == "labels" else "annotation"
    if inv.enabled("list"):
        return Outcome(READ_ONLY, f"`{inv.text}` --list only reads, so it changes nothing")
    resources, changes = _split_changes(inv.words[1:], what)
    if not changes:
        raise _refused(f"error: at least one {what} update is required")
    sets, removals = {}, []
    for change in changes:
        if "=" in change:
            key, _, value = change.partition("=")
            _check_metadata_key(key, what)
            if field == "labels" and not (len(value) <= 63 and _LABEL_VALUE.fullmatch(value)):
                raise _refused(f'error: invalid label value: "{change}": a valid label must be an empty string or '
                               "consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
                               "alphanumeric character")
            sets[key] = value
        else:
            key = change[:-1]
            _check_metadata_key(key, what)
            removals.append(key)
    overwrite = inv.enabled("overwrite")
    messages = []
    for target, obj in _existing(ctx, _select(ctx, inv, resources, verb=what)):
        new = copy.deepcopy(obj)
        meta = _dict_at(new, "metadata")
        current = meta.get(field) if isinstance(meta.get(field), dict) else {}
        for key, value in sets.items():
            if key in current and current[key] != value and not overwrite:
                raise _refused(f"error: '{key}' already has a value ({current[key]}), and --overwrite is false")
        updated = {k: v for k, v in current.items() if k not in removals}
        updated.update(sets)
        if updated:
            meta[field] = updated
        else:
            meta.pop(field, None)
        changed = _update(ctx, target, obj, new)
        if field == "annotations":  # kubectl says "annotated" whatever happened
            verb = "annotated" if changed else "annotated (no change)"
        else:
            verb = "labeled" if changed and len(updated) >= len(current) else "unlabeled" if changed else "not labeled"
        messages.append(f"{target.res.ref(target.name)} {verb}")
    return _joined(messages)


def _check_metadata_key(key: str, what: str) -> None:
    prefix, slash, name = key.rpartition("/")
    valid_prefix = not slash or (len(prefix) <= 253 and bool(_DNS_SUBDOMAIN.fullmatch(prefix)))
    if not (len(name) <= 63 and _LABEL_NAME.fullmatch(name) and valid_prefix):
        raise _refused(f'error: invalid {what} spec: "{key}": a valid name must consist of alphanumeric characters, '
                       "'-', '_' or '.', and must start and end with an alphanumeric character, with an optional "
                       "DNS subdomain prefix and '/'")


def _cordon(ctx: _Context, inv: _Invocation) -> str:
    return _schedulable(ctx, inv, cordon=True)


def _uncordon(ctx: _Context, inv: _Invocation) -> str:
    return _schedulable(ctx, inv, cordon=False)


def _schedulable(ctx: _Context, inv: _Invocation, cordon: bool) -> str:
    """`kubectl cordon|uncordon`: a node's spec.unschedulable."""
    args = inv.words[1:]
    if not args and inv.last("selector") is None:
        raise _refused(f"error: USAGE: {'cordon' if cordon else 'uncordon'} NODE [flags]")
    names = args if args and all("/" in a for a in args) else ["node", *args]
    messages = []
    for target, obj in _existing(ctx, _select(ctx, inv, names, verb="cordon")):
        if target.res.kind != "Node":
            raise _refused(f"error: {target.res.ref(target.name)} is not a node")
        new = copy.deepcopy(obj)
        if cordon:
            _dict_at(new, "spec")["unschedulable"] = True
        else:
            _dict_at(new, "spec").pop("unschedulable", None)
        changed = _update(ctx, target, obj, new)
        word = "cordoned" if cordon else "uncordoned"
        messages.append(f"{target.res.ref(target.name)} {word if changed else 'already ' + word}")
    return _joined(messages)


_TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")


def _taint(ctx: _Context, inv: _Invocation) -> str:
    """`kubectl taint nodes NODE key=value:Effect ... key:Effect- key-`."""
    args = inv.words[1:]
    if not args:
        raise _refused("error: at least one taint update is required")
    if "/" in args[0] or inv.last("selector") is not None or inv.enabled("all"):
        resources, specs = args[:1], args[1:]
    else:
        resources, specs = args[:2], args[2:]
    if not specs:
        raise _refused("error: at least one taint update is required")
    adds, removals = [], []
    for spec in specs:
        if spec.endswith("-"):
            key, _, effect = spec[:-1].partition(":")
            removals.append((key.partition("=")[0], effect))
            continue
        body, colon, effect = spec.rpartition(":")
        key, _, value = body.partition("=")
        if not colon or not key:
            raise _refused(f"error: invalid taint spec: {spec}, the taint must be key=value:effect or key:effect")
        if effect not in _TAINT_EFFECTS:
            raise _refused(f"error: invalid taint effect: {effect}, unsupported taint effect")
        adds.append({"key": key, **({"value": value} if value else {}), "effect": effect})
    overwrite = inv.enabled("overwrite")
    messages = []
    for target, obj in _existing(ctx, _select(ctx, inv, resources, verb="taint")):
        if target.res.kind != "Node":
            raise _refused(f'error: resource type "{target.res.plural}" is not supported by taint')
        new = copy.deepcopy(obj)
        spec = _dict_at(new, "spec")
        taints = [t for t in spec.get("taints") or [] if isinstance(t, dict)]
        for key, effect in removals:
            kept = [t for t in taints if not (t.get("key") == key and (not effect or t.get("effect") == effect))]
            if len(kept) == len(taints):
                raise _refused(f'error: taint "{key}{":" + effect if effect else ""}" not found')
            taints = kept
        for taint in adds:
            same = [i for i, t in enumerate(taints)
                    if t.get("key") == taint["key"] and t.get("effect") == taint["effect"]]
            if same and not overwrite:
                raise _refused(f"error: Node {target.name} already has {taint['key']} taint(s) with same effect(s) "
                               "and --overwrite is false")
            taints = [t for i, t in enumerate(taints) if i not in same] + [taint]
        if taints:
            spec["taints"] = taints
        else:
            spec.pop("taints", None)
        _update(ctx, target, obj, new)
        word = "tainted" if adds and not removals else "untainted" if removals and not adds else "modified"
        messages.append(f"{target.res.ref(target.name)} {word}")
    return _joined(messages)


def _apply(ctx: _Context, inv: _Invocation) -> str:
    """`kubectl apply -f`: each manifest merged over the live object, or created.

    The merge is the patch kubectl sends: the manifest's fields over the live ones (strategic
    merge for Kubernetes' types, JSON merge for custom resources), so fields the manifest leaves
    out stay as they are. When the live object carries kubectl's last-applied-configuration
    annotation, the fields that configuration had and the manifest dropped are removed too, as
    kubectl's three-way merge does; the annotation is then updated (it is not added to an object
    that lacks it, to keep replayed manifests as the caller's).
    """
    if inv.enabled("prune"):
        raise _unsupported("`kubectl apply --prune` deletes objects the files do not mention, which is not replayed")
    if not inv.values("filename"):
        raise _refused("error: must specify one of -f and -k")
    server_side = inv.enabled("server-side")
    messages = []
    for source, manifest in _manifests(ctx, inv):
        res, key, manifest = _identify(ctx, inv, manifest)
        target = _Target(res, key, source)
        live = ctx.store.get(key)
        if live is None:
            _create_object(ctx, target, manifest)
            messages.append(f"{res.ref(key[2])} {'serverside-applied' if server_side else 'created'}")
            continue
        new = _applied(res, live, manifest)
        changed = _update(ctx, target, live, new)
        word = "serverside-applied" if server_side else "configured" if changed else "unchanged"
        messages.append(f"{res.ref(key[2])} {word}")
    return _joined(messages)


def _applied(res: _Resource, live: dict, manifest: dict) -> dict:
    """The object `kubectl apply` makes of a live one and a manifest (see `_apply`)."""
    merge: Callable[[dict, dict], dict] = (
        (lambda a, b: _strategic_merge(a, b, res.kind)) if res.builtin else _merge_patch)
    new = merge(live, _without_nulls(manifest))
    last_text = _dig(live, "metadata", "annotations", LAST_APPLIED_ANNOTATION)
    if isinstance(last_text, str):
        try:
            last = json.loads(last_text)
        except ValueError:
            last = None
        if isinstance(last, dict):
            new = merge(new, _removals(last, manifest, res))
        record = copy.deepcopy(manifest)
        recorded = _dig(record, "metadata", "annotations")
        if isinstance(recorded, dict):
            recorded.pop(LAST_APPLIED_ANNOTATION, None)
        _dict_at(_dict_at(new, "metadata"), "annotations")[LAST_APPLIED_ANNOTATION] = (
            json.dumps(record, separators=(",", ":"), sort_keys=True) + "\n")
    return new


def _without_nulls(value: Any) -> Any:
    """A manifest as kubectl reads it: a key set to null is a key not set."""
    if isinstance(value, dict):
        return {k: _without_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_without_nulls(v) for v in value]
    return value


def _removals(last: dict, manifest: dict, res: _Resource, path: tuple[str, ...] = ()) -> dict:
    """The patch that deletes what the last applied configuration had and the manifest dropped."""
    patch: dict = {}
    for key, old in last.items():
        if key not in manifest or manifest[key] is None:
            patch[key] = None
            continue
        new = manifest[key]
        if isinstance(old, dict) and isinstance(new, dict):
            sub = _removals(old, new, res, path + (key,))
            if sub:
                patch[key] = sub
        elif isinstance(old, list) and isinstance(new, list) and res.builtin:
            merge_key = _merge_key(res.kind, path + (key,))
            if merge_key is None:
                continue
            entries = []
            for item in old:
                if not isinstance(item, dict) or merge_key not in item:
                    continue
                kept = [n for n in new if isinstance(n, dict) and n.get(merge_key) == item[merge_key]]
                if not kept:
                    entries.append({merge_key: item[merge_key], "$patch": "delete"})
                else:
                    sub = _removals(item, kept[0], res, path + (key,))
                    if sub:
                        entries.append({merge_key: item[merge_key], **sub})
            if entries:
                patch[key] = entries
    return patch


def _create(ctx: _Context, inv: _Invocation) -> str:
    """`kubectl create -f` (refused over an existing object), or a generator: secret, configmap, namespace."""
    if len(inv.words) > 1:
        manifest = _generated(ctx, inv)
        res, key, manifest = _identify(ctx, inv, manifest)
        if ctx.store.get(key) is not None:
            raise _refused(f'Error from server (AlreadyExists): {res.noun} "{key[2]}" already exists')
        _create_object(ctx, _Target(res, key), manifest)
        return f"{res.ref(key[2])} created"
    if not inv.values("filename"):
        raise _refused("error: must specify one of -f and -k")
    messages = []
    for source, manifest in _manifests(ctx, inv):
        res, key, manifest = _identify(ctx, inv, manifest)
        if ctx.store.get(key) is not None:
            raise _refused(f'Error from server (AlreadyExists): error when creating "{source}": {res.noun} '
                           f'"{key[2]}" already exists')
        _create_object(ctx, _Target(res, key, source), manifest)
        messages.append(f"{res.ref(key[2])} created")
    return _joined(messages)


def _generated(ctx: _Context, inv: _Invocation) -> dict:
    """The object a `kubectl create <generator>` command makes."""
    what = inv.words[1].lower() if len(inv.words) > 1 else ""
    args = inv.words[2:]
    if what == "secret":
        if not args or args[0] != "generic":
            raise _unsupported(f"`{inv.program} create secret {args[0] if args else ''}` is not replayed; "
                               "use `create secret generic`")
        args = args[1:]
    if what not in ("secret", "configmap", "cm", "namespace", "ns", "serviceaccount", "sa"):
        raise _unsupported(f"`{inv.program} create {what}` is not replayed")
    if len(args) != 1:
        raise _refused(f"error: exactly one NAME is required, got {len(args)}")
    name = args[0]
    meta: dict = {"name": name}
    if what in ("namespace", "ns"):
        return {"apiVersion": "v1", "kind": "Namespace", "metadata": meta}
    meta["namespace"] = inv.namespace
    if what in ("serviceaccount", "sa"):
        return {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": meta}
    data = _literal_data(ctx, inv)
    if what == "secret":
        encoded = {k: base64.b64encode(v.encode("utf-8")).decode("ascii") for k, v in data.items()}
        secret = {"apiVersion": "v1", "kind": "Secret", "metadata": meta}
        if encoded:
            secret["data"] = encoded
        secret["type"] = inv.last("type") or "Opaque"
        return secret
    configmap = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta}
    if data:
        configmap["data"] = data
    return configmap


def _literal_data(ctx: _Context, inv: _Invocation) -> dict[str, str]:
    """A generator's data, sorted by key as kubectl writes it.

    `--from-literal=k=v` gives a key; `--from-file` too, for files of the bundle.
    """
    if inv.values("from-env-file"):
        raise _unsupported("`--from-env-file` is not replayed")
    data: dict[str, str] = {}
    for literal in inv.values("from-literal"):
        key, eq, value = literal.partition("=")
        if not eq or not key:
            raise _refused(f"error: invalid literal source {literal}, expected key=value")
        data[key] = value
    for source in inv.values("from-file"):
        key, eq, path = source.partition("=")
        if not eq:
            key, path = source.rsplit("/", 1)[-1], source
        found = _bundle_paths(ctx, path)
        if len(found) != 1:
            raise _unsupported(f'the path "{path}" is not a file of the compiled bundle, so what it contains '
                               "is unknown")
        data[key] = ctx.files[found[0]].decode("utf-8", "replace")
    return dict(sorted(data.items()))


def _replace(ctx: _Context, inv: _Invocation) -> str:
    """`kubectl replace -f`: the manifest becomes the object (refused if it is missing); `--force` recreates."""
    if not inv.values("filename"):
        raise _refused("error: must specify --filename to replace")
    force = inv.enabled("force")
    messages = []
    for source, manifest in _manifests(ctx, inv):
        res, key, manifest = _identify(ctx, inv, manifest)
        target = _Target(res, key, source)
        live = ctx.store.get(key)
        if live is None:
            raise _not_found(res, key[2], _when(target, "replacing"))
        if force:
            ctx.store.delete(key)
            _create_object(ctx, target, manifest)
        else:
            _update(ctx, target, live, copy.deepcopy(manifest))
        messages.append(f"{res.ref(key[2])} replaced")
    return _joined(messages)


_HANDLERS: dict[str, Callable[[_Context, _Invocation], str | Outcome]] = {
    "scale": _scale, "patch": _patch, "set": _set, "rollout": _rollout, "delete": _delete, "label": _label,
    "annotate": _annotate, "apply": _apply, "create": _create, "replace": _replace, "cordon": _cordon,
    "uncordon": _uncordon, "taint": _taint,
}


def _joined(messages: list[str]) -> str:
    return "; ".join(messages) if messages else "No resources found"


def _dig(value: Any, *keys: str) -> Any:
    """`value[k1][k2]...`, or None where a step is missing or not a map."""
    for key in keys:
        if not isinstance(value, dict):
            return None
        value = value.get(key)
    return value


def _dict_at(node: dict, key: str) -> dict:
    """`node[key]` as a dict, made (or replacing a value that is not one) so it can be edited."""
    value = node.get(key)
    if not isinstance(value, dict):
        value = {}
        node[key] = value
    return value


# --- patches ------------------------------------------------------------------------------------

_CONTAINER_LISTS = ("containers", "initContainers", "ephemeralContainers")
# list fields Kubernetes merges item by item in a strategic merge, with the key that pairs the
# items (the patchMergeKey of its Go types); other lists are replaced whole
_POD_SPEC_MERGE_KEYS = {"containers": "name", "initContainers": "name", "ephemeralContainers": "name",
                        "volumes": "name", "imagePullSecrets": "name", "hostAliases": "ip",
                        "topologySpreadConstraints": "topologyKey", "schedulingGates": "name",
                        "resourceClaims": "name"}
_CONTAINER_MERGE_KEYS = {"env": "name", "volumeMounts": "mountPath", "volumeDevices": "devicePath",
                         "ports": "containerPort"}


def _merge_key(kind: str, path: tuple[str, ...]) -> str | None:
    """The key a strategic merge pairs a list's items by, or None for a list replaced whole."""
    if not path:
        return None
    field, parent = path[-1], path[-2] if len(path) > 1 else None
    if parent in _CONTAINER_LISTS:
        return _CONTAINER_MERGE_KEYS.get(field)
    if parent == "spec" and field in _POD_SPEC_MERGE_KEYS and kind in _POD_SPEC_PATHS:
        return _POD_SPEC_MERGE_KEYS[field]
    if kind == "Service" and path == ("spec", "ports"):
        return "port"
    if kind == "ServiceAccount" and path == ("secrets",):
        return "name"
    if path == ("metadata", "ownerReferences"):
        return "uid"
    if field == "conditions":
        return "type"
    return None


_PRIMITIVE_SETS = {("metadata", "finalizers")}  # lists of strings a strategic merge unites


def _strategic_merge(original: Any, patch: dict, kind: str, path: tuple[str, ...] = ()) -> dict:
    """A strategic merge patch, as the API server applies it to Kubernetes' own types.

    Maps merge key by key (`null` deletes a key); lists with a merge key merge item by item;
    other lists are replaced. The directives `$patch: replace|delete` (on a map or a list item),
    `$retainKeys`, `$deleteFromPrimitiveList/<field>` and `$setElementOrder/<field>` are honoured.
    """
    base = original if isinstance(original, dict) else {}
    directive = patch.get("$patch")
    if directive == "replace":
        return _strategic_merge({}, {k: v for k, v in patch.items() if k != "$patch"}, kind, path)
    result = copy.deepcopy(base)
    orders: dict[str, list] = {}
    for key, value in patch.items():
        if key in ("$patch", "$retainKeys"):
            continue
        if key.startswith("$deleteFromPrimitiveList/"):
            field = key.partition("/")[2]
            if isinstance(result.get(field), list) and isinstance(value, list):
                result[field] = [item for item in result[field] if item not in value]
            continue
        if key.startswith("$setElementOrder/"):
            if isinstance(value, list):
                orders[key.partition("/")[2]] = value
            continue
        if value is None or (isinstance(value, dict) and value.get("$patch") == "delete"):
            result.pop(key, None)
        elif isinstance(value, dict):
            result[key] = _strategic_merge(result.get(key), value, kind, path + (key,))
        elif isinstance(value, list):
            result[key] = _strategic_list(result.get(key), value, kind, path + (key,))
        else:
            result[key] = copy.deepcopy(value)
    for field, order in orders.items():
        if isinstance(result.get(field), list):
            result[field] = _ordered(result[field], order, _merge_key(kind, path + (field,)))
    retain = patch.get("$retainKeys")
    if isinstance(retain, list):
        result = {k: v for k, v in result.items() if k in retain}
    return result


def _strategic_list(original: Any, patch: list, kind: str, path: tuple[str, ...]) -> list:
    """A list under a strategic merge: merged item by item when the field has a merge key, else replaced."""
    merge_key = _merge_key(kind, path)
    current = original if isinstance(original, list) else []
    if any(isinstance(item, dict) and item.get("$patch") == "replace" for item in patch):
        return [_cleaned(item, kind, path) for item in patch
                if not (isinstance(item, dict) and item.get("$patch") in ("replace", "delete"))]
    if path in _PRIMITIVE_SETS:
        merged = list(current)
        merged += [item for item in patch if item not in merged]
        return copy.deepcopy(merged)
    if merge_key is None:
        return [_cleaned(item, kind, path) for item in patch
                if not (isinstance(item, dict) and item.get("$patch") == "delete")]
    result = copy.deepcopy(current)
    for item in patch:
        if not isinstance(item, dict) or merge_key not in item:
            raise _refused(f"Error from server: map: {_go_map(item)} does not contain declared merge key: {merge_key}")
        matching = [i for i, existing in enumerate(result)
                    if isinstance(existing, dict) and existing.get(merge_key) == item[merge_key]]
        if item.get("$patch") == "delete":
            result = [existing for i, existing in enumerate(result) if i not in matching]
        elif matching:
            result[matching[0]] = _strategic_merge(result[matching[0]], item, kind, path)
        else:
            result.append(_cleaned(item, kind, path))
    return result


def _cleaned(item: Any, kind: str, path: tuple[str, ...]) -> Any:
    """A patch value as it lands in the object: directives and nulls taken out."""
    if isinstance(item, dict):
        return _strategic_merge({}, item, kind, path)
    return copy.deepcopy(item)


def _ordered(items: list, order: list, merge_key: str | None) -> list:
    """Items in a `$setElementOrder` order; items it does not name keep their place after those it does."""
    def identity(item: Any) -> Any:
        if merge_key and isinstance(item, dict):
            return item.get(merge_key)
        return item
    wanted = [identity(o) for o in order]

    def position(item: Any) -> int:
        ident = identity(item)
        return wanted.index(ident) if ident in wanted else len(wanted)
    return sorted(items, key=position)


def _merge_patch(original: Any, patch: Any) -> Any:
    """A JSON merge patch (RFC 7386): maps merge, `null` deletes, anything else replaces."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    result = copy.deepcopy(original) if isinstance(original, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = _merge_patch(result.get(key), value)
    return result


def _json_patch(document: dict, operations: list) -> Any:
    """A JSON patch (RFC 6902): add, remove, replace, move, copy and test, on JSON pointers."""
    doc: Any = copy.deepcopy(document)
    for operation in operations:
        if not isinstance(operation, dict) or not isinstance(operation.get("path"), str):
            raise _json_patch_error("each operation needs an op and a path")
        op = operation.get("op")
        path = operation["path"]
        if op == "add":
            doc = _pointer_add(doc, path, _operand(operation))
        elif op == "remove":
            doc, _ = _pointer_remove(doc, path)
        elif op == "replace":
            doc = _pointer_replace(doc, path, _operand(operation))
        elif op in ("move", "copy"):
            source = operation.get("from")
            if not isinstance(source, str):
                raise _json_patch_error(f"{op} needs a from")
            if op == "move":
                if path != source and path.startswith(source + "/"):
                    raise _json_patch_error(f"cannot move {source} into itself")
                doc, value = _pointer_remove(doc, source)
            else:
                value = copy.deepcopy(_pointer_get(doc, source))
            doc = _pointer_add(doc, path, value)
        elif op == "test":
            if _pointer_get(doc, path) != _operand(operation):
                raise _json_patch_error(f"testing value {path} failed")
        else:
            raise _json_patch_error(f"unexpected op {op!r}")
    return doc


def _json_patch_error(detail: str) -> _Stop:
    return _refused("The request is invalid: the server rejected our request due to an error in our request "
                    f"({detail})")


def _operand(operation: dict) -> Any:
    if "value" not in operation:
        raise _json_patch_error(f"{operation.get('op')} operation needs a value")
    return copy.deepcopy(operation["value"])


def _pointer(path: str) -> list[str]:
    if path == "":
        return []
    if not path.startswith("/"):
        raise _json_patch_error(f"the path {path!r} does not start with /")
    return [token.replace("~1", "/").replace("~0", "~") for token in path[1:].split("/")]


def _index(container: list, token: str, path: str, allow_end: bool) -> int:
    """A JSON pointer token as a list index; `-` (the end) only where an item is added."""
    if token == "-" and allow_end:
        return len(container)
    if not re.fullmatch(r"0|[1-9][0-9]*", token):
        raise _json_patch_error(f"doc is missing path: {path}")
    index = int(token)
    if index > len(container) - (0 if allow_end else 1):
        raise _json_patch_error(f"doc is missing path: {path}")
    return index


def _pointer_parent(doc: Any, tokens: list[str], path: str) -> Any:
    node = doc
    for token in tokens[:-1]:
        if isinstance(node, dict) and token in node:
            node = node[token]
        elif isinstance(node, list):
            node = node[_index(node, token, path, allow_end=False)]
        else:
            raise _json_patch_error(f"doc is missing path: {path}")
    return node


def _pointer_get(doc: Any, path: str) -> Any:
    tokens = _pointer(path)
    if not tokens:
        return doc
    parent = _pointer_parent(doc, tokens, path)
    if isinstance(parent, dict) and tokens[-1] in parent:
        return parent[tokens[-1]]
    if isinstance(parent, list):
        return parent[_index(parent, tokens[-1], path, allow_end=False)]
    raise _json_patch_error(f"doc is missing path: {path}")


def _pointer_add(doc: Any, path: str, value: Any) -> Any:
    tokens = _pointer(path)
    if not tokens:
        return value
    parent = _pointer_parent(doc, tokens, path)
    if isinstance(parent, dict):
        parent[tokens[-1]] = value
    elif isinstance(parent, list):
        parent.insert(_index(parent, tokens[-1], path, allow_end=True), value)
    else:
        raise _json_patch_error(f"doc is missing path: {path}")
    return doc


def _pointer_replace(doc: Any, path: str, value: Any) -> Any:
    tokens = _pointer(path)
    if not tokens:
        return value
    parent = _pointer_parent(doc, tokens, path)
    if isinstance(parent, dict) and tokens[-1] in parent:
        parent[tokens[-1]] = value
    elif isinstance(parent, list):
        parent[_index(parent, tokens[-1], path, allow_end=False)] = value
    else:
        raise _json_patch_error(f"doc is missing key: {path}")
    return doc


def _pointer_remove(doc: Any, path: str) -> tuple[Any, Any]:
    tokens = _pointer(path)
    if not tokens:
        return None, doc
    parent = _pointer_parent(doc, tokens, path)
    if isinstance(parent, dict) and tokens[-1] in parent:
        return doc, parent.pop(tokens[-1])
    if isinstance(parent, list):
        return doc, parent.pop(_index(parent, tokens[-1], path, allow_end=False))
    raise _json_patch_error(f"doc is missing path: {path}")


# --- the API server's write path ----------------------------------------------------------------

_SERVER_METADATA = ("uid", "resourceVersion", "creationTimestamp", "generation", "managedFields", "selfLink",
                    "deletionTimestamp")


def _create_object(ctx: _Context, target: _Target, manifest: dict) -> None:
    """Stores a new object, after the checks the API server makes on creation."""
    _check_decodes(target, manifest)
    new = copy.deepcopy(manifest)
    new.pop("status", None)
    if target.res.kind == "Secret":
        _fold_string_data(new)
        new.setdefault("type", "Opaque")
    errors = _object_errors(target.res, new)
    if errors:
        raise _invalid(target, errors)
    ctx.store.put(target.key, new)


def _update(ctx: _Context, target: _Target, old: dict, new: dict) -> bool:
    """Stores an updated object as the API server would, and tells whether it changed.

    The server keeps what it owns (status, uid and the other server-set metadata, a Service's
    allocated addresses), then validates the update; a refused update raises with its message.
    """
    _check_decodes(target, new)
    new = _server_owned(target.res, old, new)
    errors = _update_errors(ctx, target, old, new) + _object_errors(target.res, new)
    if errors:
        raise _invalid(target, errors)
    if new == old:
        return False
    meta = new.get("metadata")
    if isinstance(meta, dict) and isinstance(meta.get("generation"), int) and new.get("spec") != old.get("spec"):
        meta["generation"] += 1
    ctx.store.put(target.key, new)
    return True


def _check_decodes(target: _Target, obj: dict) -> None:
    """The API server's first step, decoding into the Go type: a replica count given as text fails.

    `"replicas": "3"` is a common slip in a hand-written patch, and the server rejects it before
    any validation.
    """
    replicas = _dig(obj, "spec", "replicas")
    if target.res.kind in _SCALABLE and replicas is not None and (
            not isinstance(replicas, int) or isinstance(replicas, bool)):
        go_type = {str: "string", float: "number", bool: "bool", list: "array"}.get(type(replicas), "object")
        raise _refused(f'Error from server (BadRequest): {target.res.kind} in version "v1" cannot be handled as a '
                       f"{target.res.kind}: json: cannot unmarshal {go_type} into Go struct field "
                       f"{target.res.kind}Spec.spec.replicas of type int32")


def _invalid(target: _Target, errors: list[str]) -> _Stop:
    """A validation refusal worded as kubectl shows it: one cause, or several in brackets."""
    detail = errors[0] if len(errors) == 1 else "[" + ", ".join(errors) + "]"
    return _refused(f'The {target.res.kind} "{target.name}" is invalid: {detail}')


def _server_owned(res: _Resource, old: dict, new: dict) -> dict:
    """`new` with what a client cannot change put back: server metadata, status, allocations."""
    new = copy.deepcopy(new)
    old_meta = old.get("metadata") if isinstance(old.get("metadata"), dict) else {}
    meta = _dict_at(new, "metadata")
    for field in _SERVER_METADATA:
        if field in old_meta:
            meta[field] = copy.deepcopy(old_meta[field])
        else:
            meta.pop(field, None)
    for field in ("kind", "apiVersion"):
        if field in old:
            new[field] = old[field]
    if "status" in old:
        new["status"] = copy.deepcopy(old["status"])
    else:
        new.pop("status", None)
    if res.kind == "Secret":
        _fold_string_data(new)
    if res.kind == "Service":
        _keep_service_allocations(old, new)
    return new


def _fold_string_data(secret: dict) -> None:
    """The API server stores a Secret's stringData as base64 data, and never stringData itself."""
    strings = secret.pop("stringData", None)
    if isinstance(strings, dict) and strings:
        data = _dict_at(secret, "data")
        for key, value in strings.items():
            data[key] = base64.b64encode(str(value).encode("utf-8")).decode("ascii")


def _service_type(spec: dict) -> str:
    return spec.get("type") or "ClusterIP"


def _keep_service_allocations(old: dict, new: dict) -> None:
    """What the API server does to a Service's addresses on update.

    Addresses an update leaves out are kept (they were allocated, not written); turning the
    Service into an ExternalName drops those the update left unchanged; leaving NodePort or
    LoadBalancer for ClusterIP drops the node ports likewise.
    """
    old_spec = old.get("spec") if isinstance(old.get("spec"), dict) else {}
    spec = _dict_at(new, "spec")
    old_type, new_type = _service_type(old_spec), _service_type(spec)
    if new_type == "ExternalName":
        if old_type != "ExternalName":
            for field in ("clusterIP", "clusterIPs", "ipFamilies", "ipFamilyPolicy"):
                if spec.get(field) == old_spec.get(field):
                    spec.pop(field, None)
        return
    if old_type == "ExternalName":
        return
    if not spec.get("clusterIP") and old_spec.get("clusterIP"):
        spec["clusterIP"] = old_spec["clusterIP"]
    if not spec.get("clusterIPs") and old_spec.get("clusterIPs"):
        spec["clusterIPs"] = copy.deepcopy(old_spec["clusterIPs"])
    if (spec.get("clusterIP") != old_spec.get("clusterIP") and spec.get("clusterIPs") == old_spec.get("clusterIPs")
            and spec.get("clusterIP") and isinstance(spec.get("clusterIPs"), list)):
        spec["clusterIPs"] = [spec["clusterIP"], *spec["clusterIPs"][1:]]
    node_ports = new_type in ("NodePort", "LoadBalancer")
    old_ports = {p.get("port"): p for p in old_spec.get("ports") or [] if isinstance(p, dict)}
    for port in spec.get("ports") or []:
        if not isinstance(port, dict):
            continue
        previous = old_ports.get(port.get("port"), {})
        if node_ports and "nodePort" not in port and "nodePort" in previous:
            port["nodePort"] = previous["nodePort"]
        left_node_ports = old_type in ("NodePort", "LoadBalancer") and not node_ports
        if left_node_ports and port.get("nodePort") == previous.get("nodePort"):
            port.pop("nodePort", None)


def _update_errors(ctx: _Context, target: _Target, old: dict, new: dict) -> list[str]:
    """The API server's refusals of an update, by type (Kubernetes' validation of updates)."""
    check = _UPDATE_CHECKS.get(target.res.kind)
    return check(ctx, target, old, new) if check else []


def _spec(obj: dict) -> dict:
    spec = obj.get("spec")
    return spec if isinstance(spec, dict) else {}


def _pruned(value: Any) -> Any:
    """A value as Go compares it after decoding: null, empty maps, lists and strings are absent."""
    if isinstance(value, dict):
        out = {k: _pruned(v) for k, v in value.items()}
        return {k: v for k, v in out.items() if v not in (None, {}, [], "")}
    if isinstance(value, list):
        return [_pruned(v) for v in value]
    return value


def _selector_errors(ctx: _Context, target: _Target, old: dict, new: dict) -> list[str]:
    """apps/v1 workloads: the selector never changes."""
    old_selector = _pruned(_spec(old).get("selector"))
    new_selector = _pruned(_spec(new).get("selector"))
    if old_selector != new_selector:
        return [f"spec.selector: Invalid value: {_go_selector(_spec(new).get('selector'))}: field is immutable"]
    return []


_STATEFULSET_MUTABLE = ("replicas", "ordinals", "template", "updateStrategy", "persistentVolumeClaimRetentionPolicy",
                        "minReadySeconds")
_STATEFULSET_DEFAULTS = {"podManagementPolicy": "OrderedReady", "revisionHistoryLimit": 10}


def _statefulset_errors(ctx: _Context, target: _Target, old: dict, new: dict) -> list[str]:
    """A StatefulSet's spec only changes in replicas, template, update strategy and a few more."""
    def fixed(obj: dict) -> Any:
        spec = {**_STATEFULSET_DEFAULTS, **_spec(obj)}
        return _pruned({k: v for k, v in spec.items() if k not in _STATEFULSET_MUTABLE})
    if fixed(old) != fixed(new):
        return ["spec: Forbidden: updates to statefulset spec for fields other than 'replicas', 'ordinals', "
                "'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' "
                "are forbidden"]
    return []


def _job_errors(ctx: _Context, target: _Target, old: dict, new: dict) -> list[str]:
    """A Job's selector and pod template are fixed once it exists."""
    errors = []
    if _pruned(_spec(old).get("selector")) != _pruned(_spec(new).get("selector")):
        errors.append(f"spec.selector: Invalid value: {_go_selector(_spec(new).get('selector'))}: field is immutable")
    if _pruned(_spec(old).get("template")) != _pruned(_spec(new).get("template")):
        errors.append("spec.template: Invalid value: core.PodTemplateSpec{...}: field is immutable")
    return errors


def _pvc_errors(ctx: _Context, target: _Target, old: dict, new: dict) -> list[str]:
    """A claim's spec is fixed, but for a bound claim's storage request (up only) and attributes class."""
    old_spec, new_spec = copy.deepcopy(_spec(old)), copy.deepcopy(_spec(new))
    if not old_spec.get("volumeName"):
        old_spec["volumeName"] = new_spec.get("volumeName")  # the binder sets it once
    beta_class = _dig(old, "metadata", "annotations", "volume.beta.kubernetes.io/storage-class")
    if old_spec.get("storageClassName") is None and new_spec.get("storageClassName") is not None and (
            beta_class is None or beta_class == new_spec.get("storageClassName")):
        new_spec.pop("storageClassName", None)  # a class may be set once on a claim that had none
    status = old.get("status") if isinstance(old.get("status"), dict) else {}
    bound = status.get("phase") in (None, "Bound")
    if bound:
        requests = _dig(new_spec, "resources", "requests")
        if isinstance(requests, dict):
            old_requests = _dig(old_spec, "resources", "requests") or {}
            if "storage" in old_requests:
                requests["storage"] = old_requests["storage"]
            else:
                requests.pop("storage", None)
        if "volumeAttributesClassName" in new_spec:
            new_spec["volumeAttributesClassName"] = old_spec.get("volumeAttributesClassName")
    errors = []
    if _pruned(old_spec) != _pruned(new_spec):
        errors.append("spec: Forbidden: spec is immutable after creation except resources.requests and "
                      "volumeAttributesClassName for bound claims")
    old_size = _quantity(_dig(old, "spec", "resources", "requests", "storage"))
    new_size = _quantity(_dig(new, "spec", "resources", "requests", "storage"))
    if old_size is not None and new_size is not None and new_size < old_size:
        errors.append("spec.resources.requests.storage: Forbidden: field can not be less than previous value")
    if not errors and old_size is not None and new_size is not None and new_size > old_size:
        _check_resize(ctx, target, new)
    return errors


def _check_resize(ctx: _Context, target: _Target, claim: dict) -> None:
    """The admission check on a claim's growth: its storage class must allow volume expansion.

    Checked only when the state holds the StorageClass; without it the class is unknown.
    """
    name = _spec(claim).get("storageClassName")
    if not isinstance(name, str):
        return
    storage_class = ctx.store.get(("StorageClass", None, name))
    if storage_class is not None and storage_class.get("allowVolumeExpansion") is not True:
        raise _refused(f'Error from server (Forbidden): persistentvolumeclaims "{target.name}" is forbidden: only '
                       "dynamically provisioned pvc can be resized and the storageclass that provisions the pvc must "
                       "support resize")


_POD_UPDATABLE = ("`spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,"
                  "`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` "
                  "(allow it to be set to 1 if it was previously negative)")


def _pod_errors(ctx: _Context, target: _Target, old: dict, new: dict) -> list[str]:
    """A pod's spec is fixed but for images, a shorter deadline, more tolerations and fewer scheduling gates."""
    old_spec, new_spec = _spec(old), copy.deepcopy(_spec(new))
    for field in ("containers", "initContainers"):
        if len(old_spec.get(field) or []) != len(new_spec.get(field) or []):
            return [f"spec.{field}: Forbidden: pod updates may not add or remove containers"]
    errors = []
    old_deadline, new_deadline = old_spec.get("activeDeadlineSeconds"), new_spec.get("activeDeadlineSeconds")
    if new_deadline is None and old_deadline is not None:
        errors.append("spec.activeDeadlineSeconds: Invalid value: \"null\": must not update from a positive "
                      "integer to nil value")
    elif isinstance(new_deadline, int) and isinstance(old_deadline, int) and new_deadline > old_deadline:
        errors.append(f"spec.activeDeadlineSeconds: Invalid value: {new_deadline}: must be less than or equal to "
                      "previous value")
    if not _only_added(old_spec.get("tolerations") or [], new_spec.get("tolerations") or []):
        errors.append("spec.tolerations: Forbidden: existing toleration can not be modified except its "
                      "tolerationSeconds")
    for field in ("containers", "initContainers"):
        for before, after in zip(old_spec.get(field) or [], new_spec.get(field) or []):
            if isinstance(before, dict) and isinstance(after, dict):
                after["image"] = before.get("image")
    for field in ("activeDeadlineSeconds", "tolerations", "schedulingGates"):
        new_spec[field] = old_spec.get(field)
    grace = old_spec.get("terminationGracePeriodSeconds")
    if isinstance(grace, int) and grace < 0 and new_spec.get("terminationGracePeriodSeconds") == 1:
        new_spec["terminationGracePeriodSeconds"] = grace
    if _pruned(new_spec) != _pruned(old_spec):
        errors.append(f"spec: Forbidden: pod updates may not change fields other than {_POD_UPDATABLE}")
    return errors


def _only_added(old: list, new: list) -> bool:
    """Whether every old toleration is still there (its tolerationSeconds may change)."""
    def essence(toleration: Any) -> Any:
        return _pruned({k: v for k, v in toleration.items() if k != "tolerationSeconds"}) \
            if isinstance(toleration, dict) else toleration
    remaining = [essence(t) for t in new]
    return all(essence(t) in remaining for t in old)


def _service_errors(ctx: _Context, target: _Target, old: dict, new: dict) -> list[str]:
    """A Service's cluster IPs never change once allocated, unless it is (or becomes) an ExternalName."""
    old_spec, new_spec = _spec(old), _spec(new)
    if "ExternalName" in (_service_type(old_spec), _service_type(new_spec)):
        return []
    if old_spec.get("clusterIP") == "None" and new_spec.get("clusterIP") == "None":
        return []
    old_ips = _cluster_ips(old_spec)
    new_ips = _cluster_ips(new_spec)
    shown = "[]string{" + ", ".join(json.dumps(ip) for ip in new_ips) + "}" if new_ips else "[]string(nil)"
    if not old_ips:
        return []
    if not new_ips:
        return [f"spec.clusterIPs[0]: Invalid value: {shown}: primary clusterIP can not be unset"]
    for i, ip in enumerate(old_ips[:len(new_ips)]):
        if new_ips[i] != ip:
            return [f"spec.clusterIPs[{i}]: Invalid value: {shown}: may not change once set"]
    return []


def _cluster_ips(spec: dict) -> list[str]:
    ips = spec.get("clusterIPs")
    if isinstance(ips, list) and ips:
        return [str(ip) for ip in ips]
    ip = spec.get("clusterIP")
    return [str(ip)] if ip else []


def _immutable_data_errors(ctx: _Context, target: _Target, old: dict, new: dict) -> list[str]:
    """A ConfigMap or Secret marked immutable keeps its data (and the mark) forever; a Secret its type."""
    errors = []
    if target.res.kind == "Secret" and (old.get("type") or "Opaque") != (new.get("type") or "Opaque"):
        errors.append(f"type: Invalid value: {json.dumps(new.get('type') or 'Opaque')}: field is immutable")
    if old.get("immutable") is True:
        if new.get("immutable") is not True:
            errors.append("immutable: Forbidden: field is immutable when `immutable` is set")
        for field in ("data", "binaryData"):
            if _pruned(old.get(field)) != _pruned(new.get(field)):
                errors.append(f"{field}: Forbidden: field is immutable when `immutable` is set")
    return errors


def _priority_class_errors(ctx: _Context, target: _Target, old: dict, new: dict) -> list[str]:
    """A PriorityClass's value and preemption policy are fixed once it exists."""
    errors = []
    if old.get("value") != new.get("value"):
        errors.append("value: Forbidden: may not be changed in an update.")
    if old.get("preemptionPolicy") != new.get("preemptionPolicy") and "preemptionPolicy" in new:
        errors.append(f"preemptionPolicy: Invalid value: {json.dumps(new.get('preemptionPolicy'))}: field is immutable")
    return errors


def _binding_errors(ctx: _Context, target: _Target, old: dict, new: dict) -> list[str]:
    """A (Cluster)RoleBinding's roleRef is fixed once it exists."""
    if _pruned(old.get("roleRef")) != _pruned(new.get("roleRef")):
        ref = new.get("roleRef") if isinstance(new.get("roleRef"), dict) else {}
        shown = (f'rbac.RoleRef{{APIGroup:{json.dumps(ref.get("apiGroup", ""))}, '
                 f'Kind:{json.dumps(ref.get("kind", ""))}, Name:{json.dumps(ref.get("name", ""))}}}')
        return [f"roleRef: Invalid value: {shown}: cannot change roleRef"]
    return []


_UPDATE_CHECKS: dict[str, Callable[[_Context, _Target, dict, dict], list[str]]] = {
    "Deployment": _selector_errors, "ReplicaSet": _selector_errors, "DaemonSet": _selector_errors,
    "StatefulSet": _statefulset_errors, "Job": _job_errors, "PersistentVolumeClaim": _pvc_errors,
    "Pod": _pod_errors, "Service": _service_errors, "ConfigMap": _immutable_data_errors,
    "Secret": _immutable_data_errors, "PriorityClass": _priority_class_errors,
    "RoleBinding": _binding_errors, "ClusterRoleBinding": _binding_errors,
}


def _object_errors(res: _Resource, obj: dict) -> list[str]:
    """Checks every write of a workload or pod passes: replicas, selector against labels, requests and limits."""
    path = _POD_SPEC_PATHS.get(res.kind)
    if path is None:
        return []
    errors = []
    spec = _spec(obj)
    replicas = spec.get("replicas")
    if res.kind in _SCALABLE and isinstance(replicas, int) and not isinstance(replicas, bool) and replicas < 0:
        errors.append(f"spec.replicas: Invalid value: {replicas}: must be greater than or equal to 0")
    if res.kind in ("Deployment", "StatefulSet", "DaemonSet", "ReplicaSet"):
        template = spec.get("template") if isinstance(spec.get("template"), dict) else {}
        selector = spec.get("selector")
        labels = _labels(template)
        if isinstance(selector, dict) and not _selector_selects(selector, labels):
            errors.append(f"spec.template.metadata.labels: Invalid value: {_go_string_map(labels)}: `selector` does "
                          "not match template `labels`")
    pod_spec: Any = obj
    for step in path:
        pod_spec = pod_spec.get(step) if isinstance(pod_spec, dict) else None
    if isinstance(pod_spec, dict):
        errors += _resource_errors(pod_spec, ".".join(path))
    return errors


def _selector_selects(selector: dict, labels: dict) -> bool:
    """Whether a LabelSelector (matchLabels and matchExpressions) selects these labels."""
    match_labels = selector.get("matchLabels") or {}
    if not isinstance(match_labels, dict):
        return False
    if any(labels.get(k) != v for k, v in match_labels.items()):
        return False
    for expression in selector.get("matchExpressions") or []:
        if not isinstance(expression, dict):
            return False
        op = str(expression.get("operator", ""))
        values = frozenset(str(v) for v in expression.get("values") or [])
        requirement = {"In": "in", "NotIn": "notin", "Exists": "exists", "DoesNotExist": "!"}.get(op)
        if requirement is None or not _matches([(str(expression.get("key")), requirement, values)], labels):
            return False
    return True


def _resource_errors(pod_spec: dict, prefix: str) -> list[str]:
    """A container may not request more of a resource than its limit."""
    errors = []
    for field in ("initContainers", "containers"):
        for i, container in enumerate(pod_spec.get(field) or []):
            resources = container.get("resources") if isinstance(container, dict) else None
            if not isinstance(resources, dict):
                continue
            limits = resources.get("limits") if isinstance(resources.get("limits"), dict) else {}
            requests = resources.get("requests") if isinstance(resources.get("requests"), dict) else {}
            for name, request in requests.items():
                wanted, ceiling = _quantity(request), _quantity(limits.get(name))
                if wanted is not None and ceiling is not None and wanted > ceiling:
                    errors.append(f'{prefix}.{field}[{i}].resources.requests: Invalid value: "{request}": must be '
                                  f"less than or equal to {name} limit of {limits[name]}")
    return errors


def _go_string_map(value: Any) -> str:
    """A map[string]string as Go's %#v prints it, as the API server's messages show values."""
    if not isinstance(value, dict) or not value:
        return "map[string]string(nil)"
    return "map[string]string{" + ", ".join(f"{json.dumps(str(k))}:{json.dumps(str(v))}"
                                            for k, v in sorted(value.items(), key=lambda kv: str(kv[0]))) + "}"


def _go_selector(selector: Any) -> str:
    """A LabelSelector as Go's %#v prints it in the API server's messages."""
    selector = selector if isinstance(selector, dict) else {}
    expressions = selector.get("matchExpressions")
    if isinstance(expressions, list) and expressions:
        shown = ", ".join(
            f"v1.LabelSelectorRequirement{{Key:{json.dumps(str(e.get('key', '')))}, "
            f"Operator:{json.dumps(str(e.get('operator', '')))}, Values:[]string{{"
            + ", ".join(json.dumps(str(v)) for v in e.get("values") or []) + "}}"
            for e in expressions if isinstance(e, dict))
        expressions_text = f"[]v1.LabelSelectorRequirement{{{shown}}}"
    else:
        expressions_text = "[]v1.LabelSelectorRequirement(nil)"
    return (f"v1.LabelSelector{{MatchLabels:{_go_string_map(selector.get('matchLabels'))}, "
            f"MatchExpressions:{expressions_text}}}")


def _go_map(value: Any) -> str:
    """A map as Go's %v prints it (`map[k:v]`), as in the strategic-merge errors."""
    if isinstance(value, dict):
        return "map[" + " ".join(f"{k}:{_go_map(v)}" for k, v in sorted(value.items(), key=lambda kv: str(kv[0]))) + "]"
    if isinstance(value, list):
        return "[" + " ".join(_go_map(v) for v in value) + "]"
    if value is None:
        return "<nil>"
    if isinstance(value, bool):
        return str(value).lower()
    return str(value)
