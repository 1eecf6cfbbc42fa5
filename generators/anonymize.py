"""anonymize: consistent renaming of namespaces, objects and labels, so memorised names do not help.

A scenario that uses a standard application (`use app`) gets the application's topology inlined,
then renamed: the variant no longer names the application (its prompt, ground truth and bundle
speak only of the new names). Renamed, everywhere they occur (references, pod patterns, names of
objects faults create such as `schedule "cart-pod-kill"`, label values, environment values,
ConfigMap data, Chaos Mesh selectors and patterns, the prose of descriptions, alerts, propagations
and solutions): namespaces, every topology object, containers, and the application's own name.
New names are seeded draws of pronounceable words (`svc-tamo-bire`, `ns-kelu`), so a seed gives
one consistent renaming.

What is kept: label keys (`app.kubernetes.io/name`), container images (they must stay pullable),
commands and arguments (they name files and binaries inside the images), fault kinds, and alert
names. Applications whose metadata names runtime objects (book-info's Gateway) cannot be inlined:
a scenario that refers to such an object is skipped.
"""

from __future__ import annotations

import dataclasses
import hashlib
import re
from importlib import resources

from itbench_dsl import ast
from itbench_dsl.diagnostics import Diagnostics
from itbench_dsl.generate import Context, Generator, Skip, Variant, allow_lint, check_document
from itbench_dsl.parser import parse_text

KEEP_KEYS = ("image", "command", "args")
LABELLED_NAMES = ("container", "init_container", "volume", "mount")  # `container "cart" {}`: names; port: below
_CONSONANTS = "bdfgklmnprstvz"
_VOWELS = "aeiou"


def _app_statements(name: str) -> tuple | None:
    text = resources.files("itbench_dsl").joinpath(f"stdlib/apps/{name}.itb").read_text("utf-8")
    document = parse_text(text, f"{name}.itb", Diagnostics())
    if not isinstance(document, ast.App):
        return None
    return tuple(s for s in document.statements if isinstance(s, (ast.Object, ast.Edge)))


_APP_CACHE: dict[str, tuple | None] = {}


def app_statements(name: str) -> tuple | None:
    if name not in _APP_CACHE:
        _APP_CACHE[name] = _app_statements(name)
    return _APP_CACHE[name]


def _word(rng, syllables: int) -> str:
    return "".join(rng.choice(_CONSONANTS) + rng.choice(_VOWELS) for _ in range(syllables))


def original_names(ctx: Context) -> tuple[set[str], set[str]]:
    """(namespaces, other names) of the scenario's topology, containers and application."""
    topology = ctx.scenario.topology
    # what the cluster provides (kube-system, etcd) keeps its names: renamed, it would not exist
    provided = {n.name for n in topology.namespaces if n.provided}
    namespaces = {n.name for n in topology.namespaces} - provided
    names = set()
    for pool in (topology.workloads, topology.services, topology.configmaps, topology.secrets,
                 topology.service_accounts, topology.autoscalers):
        names |= {o.name for o in pool if o.namespace not in provided}
    for workload in topology.workloads:
        if workload.namespace in provided:
            continue
        names |= {c.name for c in workload.containers}
        names |= {c.name for c in getattr(workload, "init_containers", None) or []}
        names |= {v for v in workload.labels.values() if isinstance(v, str)}
    for service in topology.services:
        if service.namespace in provided:
            continue
        names |= {v for v in (service.selector or {}).values() if isinstance(v, str)}
    if topology.application:
        names.add(topology.application)
    names = {n for n in names if re.fullmatch(r"[a-z][a-z0-9-]*[a-z0-9]", n or "")} - namespaces
    return namespaces, names


def renaming(ctx: Context) -> dict[str, str]:
    namespaces, names = original_names(ctx)
    mapping: dict[str, str] = {}
    used: set[str] = set()
    for prefix, pool in (("ns", sorted(namespaces)), ("svc", sorted(names))):
        for name in pool:
            while True:
                new = f"{prefix}-{_word(ctx.rng, 2)}-{_word(ctx.rng, 2)}"
                if new not in used and new not in names and new not in namespaces:
                    break
            used.add(new)
            mapping[name] = new
    return mapping


class Renamer:
    def __init__(self, mapping: dict[str, str], ports: dict[str, str] | None = None) -> None:
        self.mapping = mapping
        self.ports = ports or {}  # port names (at most 15 characters) that contain an original name
        self.lower = {k.lower(): v for k, v in mapping.items()}
        keys = sorted(mapping, key=lambda s: (-len(s), s))
        self.pattern = re.compile(r"(?<![A-Za-z0-9_])(" + "|".join(re.escape(k) for k in keys) + r")(?![A-Za-z0-9_])",
                                  re.IGNORECASE) if keys else None

    def text(self, value: str) -> str:
        if self.pattern is None:
            return value
        return self.pattern.sub(lambda m: self.lower[m.group(1).lower()], value)

    def name(self, value: str) -> str:
        return "/".join(self.mapping.get(part, self.text(part)) for part in value.split("/"))

    def node(self, node, keep: bool = False):
        if isinstance(node, tuple):
            return tuple(self.node(n, keep) for n in node)
        if isinstance(node, ast.Str):
            if keep:
                return node
            if node.value in self.ports:  # `target = "jaeger-grpc"`, a probe's port
                return dataclasses.replace(node, value=self.ports[node.value])
            return dataclasses.replace(node, value=self.text(node.value))
        if isinstance(node, ast.Ref):
            return dataclasses.replace(node, name=self.name(node.name))
        if isinstance(node, ast.Object):
            return dataclasses.replace(node, name=self.name(node.name), entries=self.node(node.entries))
        if isinstance(node, ast.Edge):
            return dataclasses.replace(node, names=tuple(self.name(n) for n in node.names))
        if isinstance(node, (ast.Attr, ast.Block)):
            keep = keep or node.key in KEEP_KEYS
            if node.key == "port":
                labels = tuple(self.ports.get(label, label) for label in node.labels)
            elif node.key in LABELLED_NAMES:
                labels = tuple(self.name(label) for label in node.labels)
            else:
                labels = node.labels
            if isinstance(node, ast.Attr):
                return dataclasses.replace(node, labels=labels, value=self.node(node.value, keep))
            return dataclasses.replace(node, labels=labels, entries=self.node(node.entries, keep))
        if isinstance(node, ast.GroundGroup):
            return dataclasses.replace(node, id=self.text(node.id), target=self.node(node.target),
                                       entries=self.node(node.entries))
        if isinstance(node, ast.Description):
            return dataclasses.replace(node, text=self.text(node.text))
        if isinstance(node, ast.Solution):
            return dataclasses.replace(node, title=self.text(node.title), steps=self.node(node.steps))
        if isinstance(node, ast.Step):
            return dataclasses.replace(node, text=self.text(node.text),
                                       run=self.text(node.run) if node.run is not None else None)
        if isinstance(node, (ast.Int, ast.Float, ast.Quantity, ast.Percent, ast.Symbol)):
            return node
        if dataclasses.is_dataclass(node) and not isinstance(node, type):
            changes = {f.name: self.node(getattr(node, f.name), keep) for f in dataclasses.fields(node)
                       if f.compare and isinstance(getattr(node, f.name), (tuple, ast.Str, ast.Ref, ast.ListValue,
                                                                           ast.MapValue, ast.Call, ast.Pair))
                       or f.compare and dataclasses.is_dataclass(getattr(node, f.name))}
            return dataclasses.replace(node, **changes) if changes else node
        return node


class AnonymizeGenerator(Generator):
    name = "anonymize"
    summary = "consistent renaming of namespaces, objects and labels"

    def generate(self, ctx: Context):
        statements = []
        for stmt in ctx.document.statements:
            if isinstance(stmt, ast.UseApp):
                inlined = app_statements(stmt.name)
                if inlined is None:
                    yield Skip(f"application `{stmt.name}` cannot be read")
                    return
                statements.append(ast.Topology(inlined))
            elif isinstance(stmt, ast.Metadata):
                # free data that may name the original (ITBench ids, sources); a control says it is one
                kept = tuple(e for e in stmt.entries if e.key == "control")
                if kept:
                    statements.append(dataclasses.replace(stmt, entries=kept))
            else:
                statements.append(stmt)
        if any(r.kind == "gateway" for r in _refs(ctx.document)):
            yield Skip("the scenario refers to a gateway its application's installation deploys; "
                       "an inlined topology has none")
            return
        mapping = renaming(ctx)
        probe = Renamer(mapping)
        ports = {}
        for label in sorted(set(_port_labels(tuple(statements)))):
            if probe.text(label) != label:
                while True:
                    new = f"p-{_word(ctx.rng, 2)}"
                    if new not in ports.values():
                        break
                ports[label] = new
        for _ in range(4):
            renamer = Renamer(mapping, ports)
            document = dataclasses.replace(ctx.document, statements=tuple(renamer.node(s) for s in statements))
            problems = check_document(document, f"{ctx.parent.name}.itb").problems
            # a name a fault requires literally (ITBench's flag ConfigMap, say) is named in its message: keep it
            required = {n for n in mapping if problems and f"`{n}`" in problems[0] and mapping[n] != n}
            if not required:
                break
            mapping = {k: k if k in required else v for k, v in mapping.items()}
        digest = hashlib.sha256(f"{ctx.seed}\0{ctx.parent.name}".encode()).hexdigest()[:10]
        document = allow_lint(document, "W2002")  # the inlined application keeps the objects no fault touches
        yield Variant(document, note=f"{len(renamer.mapping)} names replaced", name=f"scenario-{digest}")


def _refs(node):
    if isinstance(node, ast.Ref):
        yield node
    elif isinstance(node, tuple):
        for n in node:
            yield from _refs(n)
    elif dataclasses.is_dataclass(node) and not isinstance(node, type):
        for f in dataclasses.fields(node):
            if f.compare:
                yield from _refs(getattr(node, f.name))


def _port_labels(node):
    if isinstance(node, (ast.Attr, ast.Block)) and node.key == "port":
        yield from node.labels
    if isinstance(node, tuple):
        for n in node:
            yield from _port_labels(n)
    elif isinstance(node, (ast.Topology, ast.Object, ast.Block)):
        yield from _port_labels(node.statements if isinstance(node, ast.Topology) else node.entries or ())
