"""One kubectl command as kubectl reads it: its words and flags (long, short, `--flag=value`), whether
it is a dry run, which verbs only read and which cannot be replayed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .state import _Context


def _program(words: list[str]) -> str:
    return words[0].rsplit("/", 1)[-1] if words else ""


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


_NUMBER = re.compile(r"-?\d+(\.\d*)?", re.ASCII)


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
