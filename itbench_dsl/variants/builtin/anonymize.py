"""anonymize: consistent renaming of namespaces, objects and labels, so memorised names do not help.

A scenario that uses a standard application (`use app`) gets the application's topology inlined,
then renamed: the variant no longer names the application (its prompt, ground truth and bundle
speak only of the new names). Renamed, everywhere they occur (references, pod patterns, names of
objects faults create such as `schedule "cart-0ea5b89"`, label values, environment values,
ConfigMap data, hosts in commands and arguments, Chaos Mesh selectors and patterns, the prose of descriptions, alerts, propagations
and solutions): namespaces, every topology object, containers, and the application's own name.
New names are seeded draws of pronounceable words (`svc-tamo-bire`, `ns-kelu`), so a seed gives
one consistent renaming.

What is kept: label keys (`app.kubernetes.io/name`), container images (they must stay pullable),
commands and arguments but for the service hosts they reach (they name files and binaries inside the
images), fault kinds, and alert names. Applications whose metadata names runtime objects (book-info's Gateway) cannot be inlined:
a scenario that refers to such an object is skipped.
"""

from __future__ import annotations

import dataclasses
import hashlib
import re
from importlib import resources

from itbench_dsl import ast, ir
from itbench_dsl.diagnostics import Diagnostics
from itbench_dsl.variants import (Context, Generator, Skip, Variant, allow_lint, check_document, map_strings,
                                  pin_generated_names, refs)
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


_METADATA_CACHE: dict[str, dict] = {}


def app_metadata(name: str) -> dict:
    """The application's `metadata` entries (strings), e.g. `service_mesh`: its file parsed once per process."""
    if name not in _METADATA_CACHE:
        _METADATA_CACHE[name] = _app_metadata(name)
    return dict(_METADATA_CACHE[name])


def _app_metadata(name: str) -> dict:
    text = resources.files("itbench_dsl").joinpath(f"stdlib/apps/{name}.itb").read_text("utf-8")
    document = parse_text(text, f"{name}.itb", Diagnostics())
    out = {}
    for stmt in getattr(document, "statements", ()):
        if isinstance(stmt, ast.Metadata):
            out.update({e.key: e.value.value for e in stmt.entries
                        if isinstance(e, ast.Attr) and isinstance(e.value, ast.Str)})
    return out


def app_statements(name: str) -> tuple | None:
    if name not in _APP_CACHE:
        _APP_CACHE[name] = _app_statements(name)
    return _APP_CACHE[name]


def _word(rng, syllables: int) -> str:
    """A pronounceable word that is none of the words the agent may not read (`fake`, `bogus`: agent_view.py)."""
    from ...agent_view import ACTION_WORDS, JUDGMENT_WORDS

    while True:
        word = "".join(rng.choice(_CONSONANTS) + rng.choice(_VOWELS) for _ in range(syllables))
        if word not in JUDGMENT_WORDS and word not in ACTION_WORDS:
            return word


def original_names(ctx: Context) -> tuple[set[str], set[str]]:
    """(namespaces, other names) of the scenario's topology, containers and application."""
    topology = ctx.scenario.topology
    # what the cluster provides (kube-system, etcd) keeps its names: renamed, it would not exist; so does a
    # namespace every cluster creates (`default`), declared provided or not: the scenario does not own it
    provided = {n.name for n in topology.namespaces if n.provided}
    namespaces = {n.name for n in topology.namespaces} - provided - ir.CLUSTER_NAMESPACES
    names = set()
    for pool in (topology.workloads, topology.services, topology.configmaps, topology.secrets,
                 topology.service_accounts, topology.autoscalers, topology.roles, topology.role_bindings,
                 topology.claims, topology.storage_classes, topology.persistent_volumes):
        # storage classes and volumes are cluster-scoped: named by claims (`storage_class = ...`), renamed with them
        names |= {o.name for o in pool if getattr(o, "namespace", None) not in provided}
    # a class only the scenario's own volumes offer (static provisioning: the name binds a claim to a volume)
    names |= {v.storage_class for v in topology.persistent_volumes if v.storage_class}
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
    if topology.display_name:  # `topology "shop" { ... }`: the name the prompt says
        names.add(topology.display_name)
    names = {n for n in names if re.fullmatch(r"[a-z][a-z0-9-]*[a-z0-9]", n or "")} - namespaces - ir.CLUSTER_NAMESPACES
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


# Where a topology's strings refer to objects. Only these are renamed; everything else is data a program
# reads (a Grafana datasource `type: jaeger`, a URL path `/jaeger/ui`, a domain `flagd.dev`) and stays.
LABEL_BLOCKS = ("labels", "object_labels", "selector", "match_labels", "peer_selector", "pod_selector",
                "namespace_selector")  # label values the topology connects by (selectors match labels)
HOST_BLOCKS = ("env", "data")  # values that may name a service as a host: `cart:7070`, `http://email:8080`
HOST_LISTS = ("args", "command")  # `--prometheus.server-url=http://prometheus:9090`
# the last word of a key whose value is a host (`"host": "cart"`, `redisHost: cart`, `db_address = 'cart'`): a
# bare name is a host only as such a key's value; `"name": "cart"` or `type: jaeger` is data
HOST_KEY_WORDS = frozenset({"host", "hostname", "addr", "address", "server", "endpoint", "url", "uri"})


def _is_host_key(key: str) -> bool:
    """Whether a key's last word says its value is a host, or a list of hosts in the plural (`hosts`,
    `hostnames` of a pod's hostAliases, `redisAddresses`, `bootstrap_servers`)."""
    words = re.findall(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])", key)
    if not words:
        return False
    word = words[-1].lower()
    return word in HOST_KEY_WORDS or word.endswith("s") and (word[:-1] in HOST_KEY_WORDS
                                                            or word.endswith("es") and word[:-2] in HOST_KEY_WORDS)


class Renamer:
    """A renaming applied by structure: references (object names, `namespace = ...`, pod patterns, the
    names of objects faults create, ids), label values of selectors and labels, service host names in
    environment values, ConfigMap data and arguments, and prose. Strings of other fields are renamed only
    when their whole value is a name being renamed."""

    def __init__(self, mapping: dict[str, str], ports: dict[str, str] | None = None,
                 namespaces: set[str] | None = None) -> None:
        self.mapping = mapping
        self.ports = ports or {}  # port names (at most 15 characters) that contain an original name
        self.namespaces = namespaces or set()
        self.lower = {k.lower(): v for k, v in mapping.items()}
        keys = sorted(mapping, key=lambda s: (-len(s), s))
        alternation = "|".join(re.escape(k) for k in keys)
        # a name in prose may be plural or capitalised (`Ads are slow`, `pages with ads`): renamed all the same
        self.pattern = re.compile(r"(?<![A-Za-z0-9_])(" + alternation + r")((?<=[sxz])es|(?<![sxz])s)?"
                                  r"(?![A-Za-z0-9_])", re.IGNORECASE) if keys else None
        # a host: a whole DNS label at a host position. After a scheme or `@` (`http://email`, `user@cart`) it is
        # a host before a port, a path, a namespace or cluster domain, a delimiter or the end; after `=`, a quote, a
        # space, a comma or the start, only before a port or a domain (`cart:7070`, `kafka.otel-demo.svc`), or
        # as the `key=NAME` value of an option or a connection string (`--host=cart`, `Host=postgresql;...`).
        # A bare word (`type: jaeger`, the binary `geo` of a command) is data.
        namespace_names = "|".join(re.escape(n) for n in sorted(self.namespaces | {"svc"}, key=len, reverse=True))
        domain = r"\.(?:" + namespace_names + r")(?![A-Za-z0-9-])"
        self.host = re.compile(
            r"(?:(?<=//)|(?<=@))(" + alternation + r")(?=:\d|/|" + domain + r"|[\s\"',;)]|$)"
            r"|(?:(?<=[=\s,;\"'(\[])|^)(" + alternation + r")(?=:\d|" + domain + r")"
            r"|(?<=[A-Za-z]=)(" + alternation + r")(?=[;,\s\"']|$)") if keys else None
        # a key and a bare, optionally quoted, name as its value, in JSON, YAML or an ini/TOML line; the key's last
        # word decides (HOST_KEY_WORDS)
        self.keyed = re.compile(r"(?<![A-Za-z0-9_.-])([A-Za-z][A-Za-z0-9_.-]*)(\\?[\"']?[ \t]*[:=][ \t]*\\?[\"']?)("
                                + alternation + r")(?=\\?[\"'\s,;}\]]|$)", re.MULTILINE) if keys else None
        # a key and a list as its value, whose items are hosts when the key says so (HOST_KEY_WORDS, plural): a flow
        # list (`"hosts": ["cart", "email"]`, `servers = ['kafka']`) or a YAML block list (`hostnames:` then `- cart`)
        key = r"(?<![A-Za-z0-9_.-])([A-Za-z][A-Za-z0-9_.-]*)"
        self.keyed_list = re.compile(key + r"(\\?[\"']?[ \t]*[:=][ \t]*)(\[[^\]\n]*\]|[ \t]*\n(?:[ \t]*-[ \t]*[^\n]*(?:\n|$))+)")
        self.item = re.compile(r"(?:(?<=[\[,-])|(?<=[\[,-][ \t])|(?<=[\[,-][ \t][ \t]))(\\?[\"']?)(" + alternation
                               + r")(?=\\?[\"']?[ \t]*(?:[,\]\n]|$))") if keys else None

    def text(self, value: str) -> str:
        """Prose and derived names: every whole name."""
        if self.pattern is None:
            return value
        return self.pattern.sub(lambda m: self.lower[m.group(1).lower()] + ("s" if m.group(2) else ""), value)

    def hosts(self, value: str) -> str:
        """A value that may name services as hosts: only those names."""
        if self.host is None:
            return value
        value = self.host.sub(lambda m: self.mapping[m.group(1) or m.group(2) or m.group(3)], value)

        def keyed(m):
            if not _is_host_key(m.group(1)):
                return m.group(0)
            return m.group(1) + m.group(2) + self.mapping[m.group(3)]

        def keyed_list(m):
            if not _is_host_key(m.group(1)):
                return m.group(0)
            items = self.item.sub(lambda i: i.group(1) + self.mapping[i.group(2)], m.group(3))
            return m.group(1) + m.group(2) + items
        return self.keyed_list.sub(keyed_list, self.keyed.sub(keyed, value))

    def exact(self, value: str) -> str:
        return self.mapping.get(value, value)

    def name(self, value: str) -> str:
        return "/".join(self.mapping.get(part, self.text(part)) for part in value.split("/"))

    # ---- the topology: by field --------------------------------------------------------------------

    def topology_value(self, value, how):
        if isinstance(value, ast.Str):
            return dataclasses.replace(value, value=how(value.value))
        if isinstance(value, ast.ListValue):
            return dataclasses.replace(value, items=tuple(self.topology_value(i, how) for i in value.items))
        if isinstance(value, ast.MapValue):
            return dataclasses.replace(value, pairs=tuple(dataclasses.replace(p, value=self.topology_value(p.value, how))
                                                          for p in value.pairs))
        if isinstance(value, ast.Call):  # `secret("grafana", "password")`: object references
            return dataclasses.replace(value, args=tuple(self.topology_value(a, self.exact) for a in value.args))
        return value

    def topology_entry(self, entry, how=None):
        if isinstance(entry, ast.Attr):
            if entry.key in HOST_LISTS:  # kept but for the hosts a program reaches (`--url=http://prometheus:9090`)
                field_how = self.hosts
            elif entry.key in KEEP_KEYS:
                return entry
            elif entry.key == "port" or entry.key == "target":
                field_how = lambda v: self.ports.get(v, self.exact(v))  # noqa: E731 - a port by name
            elif _is_host_key(entry.key):  # `hostnames = ["cart.shop.svc"]` of a hostAliases entry: hosts
                field_how = lambda v: self.hosts(self.exact(v))  # noqa: E731
            else:
                field_how = how or self.exact
            labels = self.labels(entry)
            return dataclasses.replace(entry, labels=labels, value=self.topology_value(entry.value, field_how))
        if isinstance(entry, ast.Block):
            if entry.key in LABEL_BLOCKS:
                inner = self.exact
            elif entry.key in HOST_BLOCKS:
                inner = lambda v: self.hosts(self.exact(v))  # noqa: E731 - a bare name is its service
            else:
                inner = how
            return dataclasses.replace(entry, labels=self.labels(entry),
                                       entries=tuple(self.topology_entry(e, inner) for e in entry.entries))
        return entry

    def labels(self, node) -> tuple:
        if node.key == "port":
            return tuple(self.ports.get(label, label) for label in node.labels)
        if node.key in LABELLED_NAMES:
            return tuple(self.name(label) for label in node.labels)
        return node.labels

    def topology(self, node):
        if isinstance(node, ast.Object):
            return dataclasses.replace(node, name=self.name(node.name),
                                       entries=tuple(self.topology_entry(e) for e in node.entries or ()))
        if isinstance(node, ast.Edge):
            return dataclasses.replace(node, names=tuple(self.name(n) for n in node.names))
        return node

    # ---- the rest of the scenario: references, derived names and prose ----------------------------

    def node(self, node, keep: bool = False):
        if isinstance(node, tuple):
            return tuple(self.node(n, keep) for n in node)
        if isinstance(node, ast.Topology):
            return dataclasses.replace(node, statements=tuple(self.topology(s) for s in node.statements))
        if isinstance(node, ast.Str):
            if keep:
                return node
            if node.value in self.ports:  # `target = "jaeger-grpc"`, a probe's port
                return dataclasses.replace(node, value=self.ports[node.value])
            return dataclasses.replace(node, value=self.text(node.value))
        if isinstance(node, ast.Ref):
            return dataclasses.replace(node, name=self.name(node.name))
        if isinstance(node, (ast.Attr, ast.Block)):
            keep = keep or node.key in KEEP_KEYS
            labels = self.labels(node)
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


def with_mesh(statements: tuple, mesh: str) -> tuple:
    """An inlined application's namespaces labelled as members of its mesh: the installation enrols them
    (metadata `service_mesh`; topology.MESH_NAMESPACE_LABELS), which the inlined topology says with the labels."""
    from itbench_dsl.topology import MESH_NAMESPACE_LABELS

    added = tuple(ast.Attr(key, (), ast.Str(value)) for key, value in MESH_NAMESPACE_LABELS[mesh].items())

    def visit(stmt):
        if not (isinstance(stmt, ast.Object) and stmt.kind == "namespace"):
            return stmt
        entries = tuple(stmt.entries or ())
        blocks = [e for e in entries if isinstance(e, ast.Block) and e.key == "labels"]
        if blocks:
            entries = tuple(dataclasses.replace(e, entries=e.entries + added) if e is blocks[0] else e
                            for e in entries)
        else:
            entries = entries + (ast.Block("labels", (), added),)
        return dataclasses.replace(stmt, entries=entries)
    return tuple(visit(s) for s in statements)


class AnonymizeGenerator(Generator):
    name = "anonymize"
    summary = "consistent renaming of namespaces, objects and labels"

    def generate(self, ctx: Context):
        ctx = pin_generated_names(ctx)  # a default name hashes the target's: renamed with the statements naming it
        statements = []
        for stmt in ctx.document.statements:
            if isinstance(stmt, ast.UseApp):
                inlined = app_statements(stmt.name)
                if inlined is None:
                    yield Skip(f"application `{stmt.name}` cannot be read")
                    return
                mesh = app_metadata(stmt.name).get("service_mesh")
                if mesh:
                    from itbench_dsl.topology import MESH_NAMESPACE_LABELS
                    if str(mesh) not in MESH_NAMESPACE_LABELS:
                        yield Skip(f"application `{stmt.name}` runs in a `{mesh}` mesh, which an inlined "
                                   "topology cannot state")
                        return
                    inlined = with_mesh(inlined, str(mesh))
                statements.append(ast.Topology(inlined))
            elif isinstance(stmt, ast.Metadata):
                # free data that may name the original (ITBench ids, sources); a control says it is one
                kept = tuple(e for e in stmt.entries if e.key == "control")
                if kept:
                    statements.append(dataclasses.replace(stmt, entries=kept))
            else:
                statements.append(stmt)
        if any(r.kind == "gateway" for r in refs(ctx.document)):
            yield Skip("the scenario refers to a gateway its application's installation deploys; "
                       "an inlined topology has none")
            return
        mapping = renaming(ctx)
        namespaces = {mapping.get(n, n) for n in original_names(ctx)[0]} | set(original_names(ctx)[0])
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
            renamer = Renamer(mapping, ports, set(namespaces))
            document = dataclasses.replace(ctx.document, statements=tuple(renamer.node(s) for s in statements))
            problems = check_document(document, f"{ctx.parent.name}.itb").problems
            # a name a fault requires literally (ITBench's flag ConfigMap, say) is named in its message: keep it
            required = {n for n in mapping if problems and f"`{n}`" in problems[0] and mapping[n] != n}
            if not required:
                break
            mapping = {k: k if k in required else v for k, v in mapping.items()}
        document = _fresh_hashes(document, ctx.rng)
        left = leftover(document, ctx, mapping)
        if left:
            yield Skip(f"the variant would still name the original: {left}")
            return
        digest = hashlib.sha256(f"{ctx.seed}\0{ctx.parent.name}".encode()).hexdigest()[:10]
        if any(isinstance(s, ast.UseApp) for s in ctx.document.statements):
            # the inlined application keeps the objects no fault touches, which W2002 would report
            document = allow_lint(document, "W2002")
        yield Variant(document, note=f"{len(renamer.mapping)} names replaced", name=f"scenario-{digest}")


_HASHED = re.compile(r"(?<![A-Za-z0-9])((?:svc|ns)-[a-z]+-[a-z]+)-([0-9a-f]{7})(?![A-Za-z0-9])")


def _strings(document: ast.Scenario, fn) -> ast.Scenario:
    """`fn` applied to every string of the document outside its topology: references, arguments, prose."""
    return map_strings(document, fn, names=True)


def _fresh_hashes(document: ast.Scenario, rng) -> ast.Scenario:
    """A renamed object's name that keeps the parent's hash suffix (`svc-nanu-banu-82a1388`, the schedule a
    fault creates, named from a hash of the original target) gets a seeded suffix of its own: the parent's hash
    would identify it."""
    fresh: dict[str, str] = {}

    def sub(m):
        if m.group(2) not in fresh:
            fresh[m.group(2)] = "".join(rng.choice("0123456789abcdef") for _ in range(7))
        return f"{m.group(1)}-{fresh[m.group(2)]}"
    return _strings(document, lambda text: _HASHED.sub(sub, text))


def leftover(document: ast.Scenario, ctx: Context, mapping: dict[str, str]) -> str | None:
    """An identifying token of the parent left in what the variant shows (outside the topology's program data:
    images, commands, ConfigMap data): the application's name, a renamed name in any case or plural, the
    parent's hash suffixes, the parent's scenario name."""
    tokens = {k for k, v in mapping.items() if k != v}
    hashes = {m.group(1) for s in refs(ctx.document) for m in re.finditer(r"-([0-9a-f]{7})$", s.name)}
    pattern = re.compile(r"(?<![A-Za-z0-9_])(" + "|".join(re.escape(t) for t in sorted(tokens, key=len, reverse=True))
                         + r")(?:e?s)?(?![A-Za-z0-9_])", re.IGNORECASE) if tokens else None
    found: list[str] = []

    def look(text: str) -> str:
        if pattern is not None and not found:
            m = pattern.search(text)
            if m:
                found.append(f"`{m.group(0)}` in \"{text[:80]}\"")
        for h in hashes:
            if not found and h in text:
                found.append(f"the parent's hash `{h}` in \"{text[:80]}\"")
        if not found and ctx.parent.name in text:
            found.append(f"the parent's name in \"{text[:80]}\"")
        return text
    _strings(dataclasses.replace(document, name=""), look)
    return found[0] if found else _topology_leftover(document, tokens)


def _topology_leftover(document: ast.Scenario, tokens: set[str]) -> str | None:
    """A parent's name the variant's topology still holds where the renaming would have renamed it: an object's
    name, a reference (a claim, a storage class, a ConfigMap), a label value, a host a program reaches in an
    environment value, ConfigMap data, a command or its arguments. The renaming itself finds them: each original
    is mapped to a marked copy of itself, and a topology statement it changes still names the original."""
    if not tokens:
        return None
    namespaces = {o.name for s in document.statements if isinstance(s, ast.Topology)
                  for o in s.statements if isinstance(o, ast.Object) and o.kind == "namespace"}
    probe = Renamer({t: f"\u27e6{t}\u27e7" for t in tokens}, namespaces=namespaces | tokens)
    for stmt in document.statements:
        if not isinstance(stmt, ast.Topology):
            continue
        for obj in stmt.statements:
            renamed = probe.topology(obj)
            if renamed != obj:
                name = re.search("\u27e6([^\u27e7]*)\u27e7", repr(renamed))
                where = f"{obj.kind} \"{obj.name}\"" if isinstance(obj, ast.Object) else "an edge"
                return f"`{name.group(1) if name else '?'}` in the topology's {where}"
    return None


def _port_labels(node):
    if isinstance(node, (ast.Attr, ast.Block)) and node.key == "port":
        yield from node.labels
    if isinstance(node, tuple):
        for n in node:
            yield from _port_labels(n)
    elif isinstance(node, (ast.Topology, ast.Object, ast.Block)):
        yield from _port_labels(node.statements if isinstance(node, ast.Topology) else node.entries or ())
