"""retarget: the scenario's fault moved to another topology object, with its meaning carried along.

A candidate is an object of a kind the fault accepts (its FaultKind's `targets`); the fault's own
check (run on every variant) decides whether it meets the preconditions, and a refused candidate
is skipped with the fault's message. The move is a renaming of *components* (a workload with its
pods, services and autoscaler) that keeps the topology's relations: the old target becomes the new
one, and every other component the ground truth names by its relation to the old target (a caller,
a caller's caller, a callee ...) becomes a component in the same relation to the new one, found
along the topology's dependency edges (one that is already in the scenario keeps its name). So:

- references follow their component: the fault and its waiters, pod patterns, the service that
  carries a component's requests, objects the fault creates (`schedule "cart-0ea5b89"` becomes
  `"ad-pod-kill"`), ground-truth group ids and filters, selectors on the old target's labels;
- alerts stay alerts the fault can raise (faults/alerting.py): on the new target, or on the image
  of the caller or callee they were on; an alert on a component with no image is dropped, and when
  none is left the fault's own alerts (ITBench's library) are expected on the new target;
- propagation chains are rewritten with the same renaming; a chain that no longer follows the
  topology is cut there, and then to the edges a root cause reaches (those downstream of a cut are not
  the new fault's, and the evaluator would grade them as the whole chain), with the groups only they named;
  a variant whose propagation cannot be kept at all is skipped; a moved chain's
  `condition` and `effect` (what the old target's failure did) give way to the compiler's neutral prose;
- every name, id, tag, prose and the scenario's own name carry the new names (names are matched
  as whole topology names, so `frontend` inside `frontend-proxy` is left alone, in any spelling of their
  parts: `Product catalog`, `product_catalog`, `ProductCatalog`, each written back in its own spelling);
- a root cause the move cannot account for (neither what the moved fault acts on nor what another fault
  acts on) makes the candidate a skip;
- values tied to the old target are derived from the new target's own healthy values: an optimum,
  a field predicate's value and a fault's figure that read a field of the old target (its memory
  limit, its replicas) become the new target's value of that field (the same value when they were
  the old target's healthy one, else the same ratio to it), and the prose that quotes them follows;
  a new target without that field is skipped with the reason;
- words of the old target's names that no other name carries (`valkey` of `valkey-cart`) are the
  old target's too: prose says the new target's name instead, and a fault argument that names one
  (a command that runs `valkey-cli`) cannot move, so the candidate is skipped.
"""

from __future__ import annotations

import dataclasses
import hashlib
import re

from decimal import Decimal

from itbench_dsl import ast, ir, units
from itbench_dsl.alerts import measures_container, measures_service
from itbench_dsl.backends.evaluator import _changes as fault_changes
from itbench_dsl.backends.manifests import topology_manifests
from itbench_dsl.faults import library_alerts
from itbench_dsl.faults.base import program_args
from itbench_dsl.faults.alerting import TRAFFIC, WORKLOAD, Places, scope
from itbench_dsl.runtime.state import image_ref, lookup, MISSING
from itbench_dsl.variants import (
    LANGUAGE_KIND,
    NAME_LIMIT,
    Context,
    Generator,
    Skip,
    Variant,
    expect_statements,
    faults_of,
    map_nodes,
    map_strings,
    object_refs,
    pin_generated_names,
    refs,
    split_chain,
    with_expect,
)

_WORKLOADS = ("deployment", "statefulset")


class RetargetGenerator(Generator):
    name = "retarget"
    summary = "the fault moved to every other object that meets its preconditions"

    def generate(self, ctx: Context):
        ctx = pin_generated_names(ctx)  # a default name hashes the old target's: the statements keep naming it
        faults = faults_of(ctx.document)
        injections = ctx.scenario.injections()
        if not faults or not injections:
            yield Skip("the scenario has no fault to move")
            return
        old = injections[0].target
        kind = injections[0].kind
        if old.kind == "Pod":  # a static pod: its fault is about the cluster, not one of the application's objects
            yield Skip(f"`{kind.name}` acts on a component the cluster provides ({old.name})")
            return
        candidates = [r for r in object_refs(ctx.scenario.topology, kind.targets) if r != old]
        if not candidates:
            yield Skip(f"the topology has no other {' or '.join(kind.targets)} for `{kind.name}`")
            return
        if ctx.n is not None:  # a seeded choice among the candidates, tried in that order
            candidates = ctx.rng.sample(candidates, len(candidates))
        takes_container = any(arg.name == "container" for arg in kind.args)
        has_container = any(isinstance(e, ast.Attr) and e.key == "container" for e in faults[0].entries or ())
        places = Places(ctx.scenario)
        healthy = Healthy(ctx.scenario)
        old_container = next((e.value.value for e in faults[0].entries or () if isinstance(e, ast.Attr)
                              and e.key == "container" and isinstance(e.value, ast.Str)), None)
        # arguments that mean something only inside the old target's program (a Java class, an HTTP path):
        # the fault moves only to a workload that runs the same image
        tied = sorted(program_args(kind) & {e.key for e in faults[0].entries or () if isinstance(e, ast.Attr)})
        program = _images(ctx.scenario.topology, old, old_container) if tied else set()
        # what the faults create keeps its name (pinned above): one named after another component
        # (faults/base.application_name) would name the target once the fault moves there
        created = [r.name for i in injections for r in i.created]
        for new in candidates:
            note = f"{kind.name}: {old.kind.lower()} {old.name} -> {new.name}"
            named = next((c for c in created if c.startswith(new.name + "-")), None)
            if named:
                yield Skip(f"{note}: the object the fault creates is named `{named}`, which would name the new target")
                continue
            role = _role_conflict(kind, ctx.scenario.topology, new)
            if role:
                yield Skip(f"{note}: {role}")
                continue
            if tied and not program & _images(ctx.scenario.topology, new, None):
                yield Skip(f"{note}: {', '.join(f'`{a}`' for a in tied)} of `{kind.name}` mean something only in "
                           f"{old.name}'s program ({', '.join(sorted(program)) or 'no image'}), which {new.name} "
                           f"does not run (W6001)")
                continue
            containers = [c.name for w in ctx.scenario.topology.workloads if w.kind == new.kind
                          and w.name == new.name and w.namespace == new.namespace for c in w.containers]
            each = takes_container and not has_container and len(containers) > 1
            # the fault must say which container when there are several: the first that can take it, its
            # figures derived from that container's own values
            for container in containers if each else [None]:
                what = f"{note} (container {container})" if container else note
                try:
                    document = Move(ctx, places, old, new, healthy, (old_container, container)).document()
                except Unmovable as exc:
                    yield Skip(f"{what}: {exc}")
                    continue
                yield Variant(with_container(document, container) if container else document, note=what,
                              name=document.name)
                # one variant per (workload, fault kind): another container of one deployment has the same
                # root cause and the same fix, a near-duplicate
                break


def _role_conflict(kind, topology: ir.Topology, ref: ir.ObjectRef) -> str | None:
    """Why the fault means nothing on `ref` given the workload's role, read from its kind and spec (None: it
    can move there). A fault that scales a workload's replicas (`workload.replicas:*`: idle replicas) assumes
    interchangeable replicas behind a Service: a StatefulSet's replicas each have their own identity and
    storage, a workload that mounts a PersistentVolumeClaim shares one volume, and a `Recreate` workload is
    declared never to run two pods side by side (a singleton): scaled up, each becomes a broken member, not
    idle capacity."""
    if not kind.mechanism.startswith("workload.replicas"):
        return None
    workload = next((w for w in topology.workloads if w.kind == ref.kind and w.name == ref.name
                     and w.namespace == ref.namespace), None)
    if workload is None:
        return None
    if workload.kind == "StatefulSet":
        return (f"`{kind.name}` scales interchangeable replicas, and StatefulSet `{ref.name}`'s replicas each have "
                "their own identity and storage (a stateful member, not idle capacity)")
    if any("persistentVolumeClaim" in v for v in workload.volumes):
        return (f"`{kind.name}` scales interchangeable replicas, and `{ref.name}` mounts a PersistentVolumeClaim "
                "(stateful: its replicas would share one volume)")
    if workload.strategy == "Recreate":
        return (f"`{kind.name}` scales interchangeable replicas, and `{ref.name}`'s `Recreate` strategy declares it "
                "a singleton (never two pods side by side)")
    engine = next((e for c in workload.containers for e in _engines(c.image)), None)
    if engine is not None:
        return (f"`{kind.name}` scales interchangeable replicas, and `{ref.name}` runs {engine}, a store whose "
                "data or cluster membership lives in each pod: its replicas, scaled up, are members that disagree "
                "or lose writes, not idle capacity, and scaling them back loses data")
    return None


# Programs that keep state in the pod itself (a database, a message broker, a consensus member): replicas of
# one behind a Service are not interchangeable. A cache that holds no data of record (memcached) is not one.
STATEFUL_ENGINES = {
    "postgres": "PostgreSQL", "postgresql": "PostgreSQL", "mysql": "MySQL", "mariadb": "MariaDB",
    "mongo": "MongoDB", "mongodb": "MongoDB", "redis": "Redis", "valkey": "Valkey", "keydb": "KeyDB",
    "kafka": "Kafka", "zookeeper": "ZooKeeper", "rabbitmq": "RabbitMQ", "nats": "NATS", "etcd": "etcd",
    "cassandra": "Cassandra", "elasticsearch": "Elasticsearch", "opensearch": "OpenSearch", "consul": "Consul",
    "clickhouse": "ClickHouse", "cockroach": "CockroachDB", "cockroachdb": "CockroachDB", "minio": "MinIO",
}


def _engines(image: str) -> list[str]:
    """The stateful engines an image names, in its repository or its tag (`postgres:16`,
    `ghcr.io/open-telemetry/demo:2.1.3-kafka`, `bitnami/mongodb`)."""
    words = re.split(r"[^a-z0-9]+", image_ref(image).lower().split("@")[0])
    return [STATEFUL_ENGINES[w] for w in words if w in STATEFUL_ENGINES]


def _images(topology: ir.Topology, ref: ir.ObjectRef, container: str | None) -> set[str]:
    """The images a workload runs (its named container's, when one is named), each in its one spelling."""
    return {image_ref(c.image) for w in topology.workloads if w.kind == ref.kind and w.name == ref.name
            and w.namespace == ref.namespace for c in w.containers if container is None or c.name == container}


class Unmovable(Exception):
    """The variant would not mean what its parent means around the new target (the reason)."""


def with_container(document: ast.Scenario, container: str) -> ast.Scenario:
    """The first fault with `container = "NAME"` added."""
    first = faults_of(document)[0]

    def visit(node):
        if node is first:
            return dataclasses.replace(node, entries=(node.entries or ()) + (ast.Attr("container", (), ast.Str(container)),))
        return None
    return map_nodes(document, visit)


def _graph(topology: ir.Topology) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    up: dict[str, list[str]] = {}
    down: dict[str, list[str]] = {}
    for a, b in topology.edges:
        down.setdefault(a, []).append(b)
        up.setdefault(b, []).append(a)
    return up, down


class Move:
    """One retargeting: the component renaming and its application to the document."""

    def __init__(self, ctx: Context, places: Places, old: ir.ObjectRef, new: ir.ObjectRef,
                 healthy: "Healthy | None" = None, containers: tuple[str | None, str | None] = (None, None)) -> None:
        self.ctx, self.places, self.old, self.new = ctx, places, old, new
        # a fault's program arguments (a Java class, an HTTP path): the program's own words (`stale`)
        self.tied = program_args(ctx.scenario.injections()[0].kind)
        self.containers = containers  # the fault's container in the old target and in the new one, when named
        self.healthy = healthy or Healthy(ctx.scenario)
        self.topology = topology = ctx.scenario.topology
        self.workloads = {w.name: w for w in places.workloads}
        self.a, self.b = places.of(old), places.of(new)
        if self.a == self.b:
            raise Unmovable("the new target belongs to the old target's component")
        foreign = self._foreign_root()
        if foreign:
            raise Unmovable(foreign)
        # every name the scenario can mention, longest first: `frontend-proxy` is one name, not `frontend` + text
        self.known = sorted({w.name for w in topology.workloads} | {s.name for s in topology.services}
                            | {o.name for pool in (topology.configmaps, topology.secrets, topology.autoscalers,
                                                   topology.service_accounts) for o in pool}
                            | {old.name, new.name}, key=lambda s: (-len(s), s))
        # a name in prose may be plural (`carts`, one cart each), capitalised or upper-case (`Cart`, `CART_ADDR`),
        # and its parts spaced, snake or camel (`Product Catalog`, `product_catalog`, `ProductCatalog`): one
        # pattern, and each occurrence found again by its separator-free key
        self.pattern = _names_pattern(self.known)
        self.glued_pattern = _glued_pattern(self.known)
        self.key = {}
        for k in self.known:
            self.key.setdefault(_key(k), k)
        self.mentioned = self._mentioned()
        self.components = self._components()
        self.names = self._names()
        merged = self._merged()
        if merged:
            raise Unmovable(merged)
        self.old_words = self._old_words()
        self.word_pattern = (re.compile(r"(?<![A-Za-z0-9])(" + "|".join(map(re.escape, sorted(self.old_words)))
                                        + r")(?![A-Za-z0-9])", re.IGNORECASE) if self.old_words else None)
        self.values = self._values()

    def _foreign_root(self) -> str | None:
        """A root cause the move cannot carry (None: every one follows). A root cause is carried when it is what
        the moved fault acts on (the old target's component, or an object the fault creates), which the move
        renames, or what another fault acts on, which stays. Any other root cause (a component the parent ties
        to the old target by its own account: a callee, a workload reading a changed ConfigMap) has no
        counterpart the topology can justify around the new target."""
        first = self.ctx.scenario.injections()[0]
        own = {first.target, *first.created, *([first.root] if first.root else [])}
        others: set[str] = set()
        for group in self.ctx.scenario.faults:
            for injection in group.injections:
                if injection is first:
                    continue
                for ref in [injection.target, *injection.side_objects, *injection.created,
                            *([injection.root] if injection.root else [])]:
                    others.add(self.places.of(ref))
                    others |= self.places.readers(ref)
            if first not in group.injections:
                others |= {self.places.of(w.target) for w in group.waiters}
        for cause in self.ctx.scenario.root_causes:
            component = self.places.of(cause)
            if cause in own or component == self.a or component in others:
                continue
            return (f"the root cause {cause.kind} `{cause.name}` is not what `{first.fault}` acts on (`{self.old.name}`) "
                    f"nor what another fault acts on: its tie to the old target cannot be carried to `{self.new.name}`")
        return None

    # ---- the renaming --------------------------------------------------------------------------------

    def _mentioned(self) -> set[str]:
        """The components the scenario names outside its topology (references and text)."""
        out: set[str] = set()
        for stmt in self.ctx.document.statements:
            if isinstance(stmt, (ast.Topology, ast.UseApp)):
                continue
            for ref in refs(stmt):
                out.add(self._component_of_ref(ref))
            for text in _texts(stmt):
                for m in self.pattern.finditer(text):
                    name = self.key[_key(m.group(2))]
                    out.add(self.places.by_key.get(("Service", name), name))
        return {c for c in out if c}

    def _component_of_ref(self, ref: ast.Ref) -> str | None:
        name = ref.name.split("/")[-1]
        if ref.kind in _WORKLOADS:
            return name
        if ref.kind == "pod":
            return self.places.of(ir.ObjectRef("v1", "Pod", None, name))
        if ref.kind == "service":
            return self.places.of(ir.ObjectRef("v1", "Service", None, name))
        if ref.kind == "hpa":
            return self.places.by_key.get(("HorizontalPodAutoscaler", name))
        return None

    def _components(self) -> dict[str, str]:
        """Old component -> new: the target's, then each mentioned component reached from the old target
        along callers only or callees only (nearest first), with the components on the way: each is given
        an unused component in the same relation to its predecessor's image (its own name when that still
        fits). A component with no such counterpart has no image."""
        fixed = {c for c in self.places.footprint if c != self.a} | (self.mentioned - self._related())
        mapping = {self.a: self.b}
        used = fixed | {self.a, self.b}
        up, down = _graph(self.topology)
        for graph in (up, down):
            parent = {self.a: None}
            order, frontier = [], [self.a]
            while frontier:  # breadth-first, in name order: the nearest relation first, deterministically
                nxt = []
                for c in frontier:
                    for d in sorted(graph.get(c, ())):
                        if d not in parent:
                            parent[d] = c
                            order.append(d)
                            nxt.append(d)
                frontier = nxt
            for target in order:
                if target not in self.mentioned or target in fixed:
                    continue
                path = [target]
                while parent[path[-1]] != self.a:
                    path.append(parent[path[-1]])
                for d in reversed(path):
                    c = parent[d]
                    if d in mapping:
                        continue
                    if c not in mapping or d in fixed:
                        break
                    # one new component per old one: a name already standing for another component (the new
                    # target, an earlier image) cannot also stand for `d`, or two components of the ground truth
                    # would merge into one (a duplicate edge, a self edge)
                    # (a component the scenario names keeps its own name when it can: not given to another)
                    taken = set(mapping.values()) | (self.mentioned - {d})
                    options = sorted(x for x in graph.get(mapping[c], ()) if x in self.workloads
                                     and x not in taken and (x not in used or x == d))
                    choice = d if d in options else (options[0] if options else None)
                    if choice is None:
                        break
                    mapping[d] = choice
                    used.add(choice)
        return mapping

    def _related(self) -> set[str]:
        up, down = _graph(self.topology)
        out = set()
        for graph in (up, down):
            todo = [self.a]
            while todo:
                for d in graph.get(todo.pop(), ()):
                    if d not in out:
                        out.add(d)
                        todo.append(d)
        return out - {self.a}

    def _service(self, component: str, like: str | None = None) -> str | None:
        services = sorted(self.places.selecting.get(component, []))
        if component in services:
            return component
        if like is not None:
            for s in services:  # `cart-grpc` for `checkout-grpc`: the same suffix
                if like.split("-", 1)[-1] == s.split("-", 1)[-1]:
                    return s
        return services[0] if services else None

    def _names(self) -> dict[str, str]:
        """Every name that changes: components, their services, and the old target itself."""
        out = {self.old.name: self.new.name}
        for c, d in self.components.items():
            out.setdefault(c, d)
            for service in self.places.selecting.get(c, []):
                image = self._service(d, service)
                if image is not None:
                    out.setdefault(service, image)
        return out

    def _merged(self) -> str | None:
        """Two names of the scenario that the renaming would make one (a duplicate ground-truth edge, or an edge
        from an object to itself): the mapping must be one-to-one on what the scenario mentions."""
        by_image: dict[str, str] = {}
        for old, new in sorted(self.names.items()):
            if old not in self.mentioned and old not in (self.a, self.old.name) \
                    and not any(old in self.places.selecting.get(c, []) for c in self.mentioned):
                continue
            if new in by_image and by_image[new] != old:
                return (f"the renaming maps `{by_image[new]}` and `{old}` both onto `{new}`: the ground truth would "
                        "merge two components (a duplicate or self edge)")
            by_image[new] = old
        unchanged = (self.mentioned | {self.a}) - set(self.names)
        for old, new in self.names.items():
            if new in unchanged and new != old and old in self.mentioned | {self.a, self.old.name}:
                return (f"the renaming maps `{old}` onto `{new}`, which the scenario already names: the ground "
                        "truth would merge two components (a duplicate or self edge)")
        return None

    def unmapped(self) -> set[str]:
        """Components related to the old target that the ground truth names but that have no image."""
        return (self.mentioned & self._related()) - set(self.components) - {
            c for c in self.places.footprint if c != self.a}

    def _lost(self, stmt) -> str | None:
        """A component without image that a statement names (by reference or in its text)."""
        unmapped = self.unmapped()
        if not unmapped:
            return None
        names = {self._component_of_ref(r) for r in refs(stmt)}
        names |= {self.places.by_key.get(("Service", self.key[_key(m.group(2))]), self.key[_key(m.group(2))])
                  for text in _texts(stmt) for m in self.pattern.finditer(text)}
        found = sorted(unmapped & names)
        return found[0] if found else None

    def lost_reason(self, stmt, lost: str) -> str:
        """What a statement that names a component with no counterpart says, and why it has none."""
        what = {ast.Fault: "the fault", ast.Group: "the fault group", ast.Solution: "the solution",
                ast.Param: "a param", ast.Description: "the description"}.get(type(stmt), "the scenario")
        up, down = _graph(self.topology)
        if lost in _closure(up, self.a):
            relation, graph = "a caller", up
        elif lost in _closure(down, self.a):
            relation, graph = "a callee", down
        else:
            return f"{what} names `{lost}`, which the move has no counterpart for around `{self.b}`"
        head = f"{what} names `{lost}`, {relation} of `{self.a}`, which has no counterpart around `{self.b}`"
        if lost == self.b:
            return f"{head} (it is the new target itself)"
        options = sorted(graph.get(self.b, ()))
        return f"{head} (" + (f"its {relation[2:]}s {', '.join(options)} stand for other components" if options
                              else f"`{self.b}` has no {relation[2:]}") + ")"

    # ---- applying it ---------------------------------------------------------------------------------

    def text(self, value: str, glued: bool = True) -> str:
        """`value` with renamed names in the spelling of each occurrence; with `glued`, also a renamed name glued
        to `service` (ITBench's `cartservice`, `RecommendationService`, `recommendationservice-service-1`): an
        identifier of the component's own Service, which becomes the new component's (`adservice`). A program's
        own words (a fault's `program` arguments) are renamed without it: `oteldemo.AdService` is the program's."""
        if glued:
            value = self.glued_pattern.sub(self._glued_sub, value)

        def sub(m):
            prefix, found = m.group(1), m.group(2)
            new = self.names.get(self.key[_key(found)])
            if new is None:
                return m.group(0)
            plural = m.group(0)[len(m.group(1) or "") + (1 if prefix else 0) + len(found):]
            snake = "_" in (value[m.start() - 1:m.start()] + value[m.end():m.end() + 1])
            new = _case_like(found, new, snake, self.key[_key(found)])
            if plural:  # `carts` -> `ads`, `EMAILS` -> `ADS`
                plural = "es" if new.lower().endswith(("s", "x", "z")) else "s"
                new += plural.upper() if found.isupper() else plural
            if prefix:  # `deployment/checkout` in a command: the kind of the new workload
                workload = self.workloads.get(new)
                if workload is not None and workload.kind.lower() not in prefix.lower():
                    prefix = workload.kind.lower()
                return f"{prefix}/{new}"
            return new
        return self._words(self._quote_values(self.pattern.sub(sub, value)))

    def _glued_sub(self, m) -> str:
        found, suffix = m.group(1), m.group(2)
        new = self.names.get(self.key[_key(found)])
        return m.group(0) if new is None else _glued_like(found, suffix, new)

    # ---- values and words of the old target ------------------------------------------------------------

    def _old_words(self) -> set[str]:
        """Words of the old component's names (the workload, its services, the target) that no other name of
        the topology carries: `valkey` of `valkey-cart` (`cart` is the cart's own name)."""
        def words(name):
            return {w for w in re.split(r"[-_.]", name.lower()) if len(w) >= 3}
        own = {self.a, self.old.name} | set(self.places.selecting.get(self.a, []))
        own.discard(None)
        others = set(self.known) - own
        found = set().union(*(words(n) for n in own)) - set().union(*(words(n) for n in others), set())
        return found - set().union(*(words(n) for n in {self.b, self.new.name} if n), set())

    def _words(self, value: str) -> str:
        """Prose with the old target's own words (outside whole names) said of the new target."""
        if self.word_pattern is None:
            return value
        out, last = [], 0
        for m in self.pattern.finditer(value):  # names were renamed already: leave them whole
            out.append(self.word_pattern.sub(lambda w: _like(w.group(0), self.b), value[last:m.start()]))
            out.append(m.group(0))
            last = m.end()
        out.append(self.word_pattern.sub(lambda w: _like(w.group(0), self.b), value[last:]))
        return "".join(out)

    def stale(self, document: ast.Scenario) -> str | None:
        """A text of the variant that still names the old target, or a component that was renamed away, in
        any form (`Carts`, `the cart's`, `CART_ADDR`): the variant would say it of the wrong object."""
        images = {v.lower() for v in self.names.values()}
        gone = {k.lower() for k in self.names if k.lower() not in images}
        if not gone:
            return None
        # a name glued into a longer word (`productcatalogueservice`, `cartFailure`): not a name to rename (the rest
        # of the word is not the new target's), but it still says the old one. Unmistakable for a name of several
        # parts written without separators, and for any name before `service` (left only in a program's own words:
        # `text` renames `cartservice` elsewhere)
        parts = [re.escape(_key(k)) for k in sorted(gone) if re.search(r"[-_]", k)]
        parts.append(r"(?<![A-Za-z0-9])(?:" + "|".join(re.escape(_key(k)) for k in sorted(gone)) + r")services?(?![A-Za-z0-9])")
        glued = re.compile(r"[A-Za-z0-9]*(?:" + "|".join(parts) + r")[A-Za-z0-9]*", re.IGNORECASE)
        # a fault's program arguments (a Java class, an HTTP path) are the program's own words, and such a fault
        # moves only to a workload running the same program: `oteldemo.AdService` stays what that program calls it
        tied = self.tied
        for stmt in (*document.statements, document.name):
            if isinstance(stmt, (ast.Topology, ast.UseApp)):
                continue
            if isinstance(stmt, ast.Param):
                stmt = (stmt.domain, stmt.default)
            glued_texts = set(_texts(_without_entries(stmt, tied)))
            for text in _texts(stmt):
                for m in self.pattern.finditer(text):
                    name = self.key[_key(m.group(2))]
                    if name.lower() in gone:
                        now = self.names[name]
                        what = "the old target" if name in {self.old.name.lower(), (self.a or "").lower()} else \
                            f"`{name}`, which the move renames to `{now}`"
                        return f"{what}, as `{m.group(0)}` in \"{text}\""
                m = glued.search(text) if text in glued_texts else None
                if m:
                    return (f"`{m.group(0)}`, a renamed name glued into a longer word, in \"{text}\": only a name "
                            f"glued to `service` is the component's own identifier, renamed with it; any other word "
                            f"is the old target's program's or data's, untrue of the new target")
        return None

    def old_word_in(self, node) -> str | None:
        """An old target's word that a node's strings carry outside whole names."""
        if self.word_pattern is None:
            return None
        for text in _texts(node):
            m = self.word_pattern.search(self.pattern.sub(" ", text))
            if m:
                return m.group(0)
        return None

    def _values(self) -> dict[str, str]:
        """Value texts tied to the old target -> the new target's: optima, field predicates and fault figures
        that read one of the old target's fields (docstring of the module)."""
        out: dict[str, str] = {}
        old_obj = self.healthy.manifest(self.old, self.containers[0])
        new_obj = self.healthy.manifest(self.new, self.containers[1])
        if old_obj is None or new_obj is None:
            return out

        def derive(value, path, what):
            if not isinstance(value, (ast.Quantity, ast.Int)):
                return
            text = _value_text(value)
            before, after = lookup(old_obj, list(path)), lookup(new_obj, list(path))
            if before is MISSING or before is None:
                return
            if after is MISSING or after is None:
                raise Unmovable(f"{what} {text} is tied to `{self.old.name}`'s {'.'.join(path)} ({before}), "
                                f"which `{self.new.name}` does not set")
            new = _scaled(text, str(before), str(after))
            if new is None:
                return
            if out.get(text, new) != new:
                raise Unmovable(f"{text} stands for two values around `{self.new.name}`")
            if new != text:
                out[text] = new

        for stmt in expect_statements(self.ctx.document):
            if isinstance(stmt, ast.Optimal) and self._is_old(stmt.target):
                derive(stmt.value, stmt.path, "the optimum")
            if isinstance(stmt, ast.Mitigated):
                for p in stmt.predicates:
                    if isinstance(p, ast.FieldPredicate) and self._is_old(p.target) \
                            and all(isinstance(x, str) for x in p.path):
                        derive(p.value, p.path, "the predicate's value")
        first = faults_of(self.ctx.document)[0]
        for entry in first.entries or ():
            if isinstance(entry, ast.Attr) and isinstance(entry.value, (ast.Quantity, ast.Int)):
                path = self.healthy.changed_path(self.old, _value_text(entry.value))
                if path is not None:
                    derive(entry.value, path, f"the fault's `{entry.key}`")
        return out

    def _is_old(self, ref: ast.Ref) -> bool:
        return ref.kind == LANGUAGE_KIND.get(self.old.kind) and ref.name.split("/")[-1] == self.old.name

    def _quote_values(self, value: str) -> str:
        if not self.values:
            return value
        pattern = re.compile(r"(?<![A-Za-z0-9.])(" + "|".join(re.escape(k) for k in sorted(self.values, key=len,
                                                                                           reverse=True))
                             + r")(?![A-Za-z0-9.])")
        return pattern.sub(lambda m: self.values[m.group(1)], value)

    def value(self, value):
        """A figure of an optimum, a predicate or the fault, derived for the new target."""
        if isinstance(value, (ast.Quantity, ast.Int)):
            new = self.values.get(_value_text(value))
            if new is not None:
                return ast.Int(int(new), value.span) if isinstance(value, ast.Int) else ast.Quantity(new, value.span)
        return value

    def ref(self, ref: ast.Ref) -> ast.Ref | None:
        """The reference in the variant, or None when it names a component with no image."""
        namespace, _, name = ref.name.rpartition("/")
        prefix = namespace + "/" if namespace else ""
        if ref.kind == LANGUAGE_KIND.get(self.old.kind) and name == self.old.name:
            return dataclasses.replace(ref, kind=LANGUAGE_KIND.get(self.new.kind, ref.kind),
                                       name=prefix + self.new.name)
        component = self._component_of_ref(ref)
        if component is None or ref.kind not in _WORKLOADS + ("pod", "service", "hpa"):
            return dataclasses.replace(ref, name=prefix + self.text(name))  # ids, created objects: by name
        if component not in self.components:
            return None if component in self.unmapped() else ref
        image = self.components[component]
        if ref.kind in _WORKLOADS:
            workload = self.workloads.get(image)
            return dataclasses.replace(ref, kind=workload.kind.lower() if workload else ref.kind, name=prefix + image)
        if ref.kind == "pod":
            return dataclasses.replace(ref, name=prefix + image + name[len(component):])
        if ref.kind == "service":
            service = self._service(image, name)
            return dataclasses.replace(ref, name=prefix + service) if service else None
        hpa = next((h.name for h in self.topology.autoscalers if h.target.name == image), None)
        return dataclasses.replace(ref, name=prefix + hpa) if hpa else None

    def selector_value(self, key: str, value: str) -> str:
        """A label value of a selector in the fault: the old target's value becomes the new target's."""
        old, new = self.workloads.get(self.a), self.workloads.get(self.b)
        if old is not None and old.labels.get(key) == value:
            if new is None or key not in new.labels:
                raise Unmovable(f"`{self.b}` has no label `{key}` to select it by")
            return new.labels[key]
        return self.text(value)

    def node(self, node):
        """The statement with references, strings and prose renamed (selectors by label)."""
        def visit(n):
            if isinstance(n, ast.Block) and n.key.endswith("selector"):
                entries = tuple(dataclasses.replace(e, value=ast.Str(self.selector_value(e.key, e.value.value)))
                                if isinstance(e, ast.Attr) and isinstance(e.value, ast.Str) else e
                                for e in n.entries)
                return dataclasses.replace(n, entries=entries)
            return None

        # a fault's program arguments keep names glued into the program's own words (see `text`)
        program = {e.key: dataclasses.replace(e.value, value=self.text(e.value.value, glued=False))
                   for e in (node.entries or ()) if isinstance(node, ast.Fault) and isinstance(e, ast.Attr)
                   and e.key in self.tied and isinstance(e.value, ast.Str)} if isinstance(node, ast.Fault) else {}

        def rename(n):
            if isinstance(n, ast.Ref):
                return self.ref(n) or _DROPPED
            if isinstance(n, ast.Str):
                return dataclasses.replace(n, value=self.text(n.value))
            if isinstance(n, ast.Optimal) and self._is_new(n.target):
                return dataclasses.replace(n, value=self.value(n.value))
            if isinstance(n, ast.FieldPredicate) and self._is_new(n.target):
                return dataclasses.replace(n, value=self.value(n.value))
            if isinstance(n, ast.Fault):
                return dataclasses.replace(n, entries=tuple(
                    dataclasses.replace(e, value=program.get(e.key) or self.value(e.value))
                    if isinstance(e, ast.Attr) else e for e in n.entries or ())) if n.entries is not None else None
            if isinstance(n, ast.GroundGroup):
                return dataclasses.replace(n, id=self.text(n.id))
            if isinstance(n, ast.Description):
                return dataclasses.replace(n, text=self.text(n.text))
            if isinstance(n, ast.Solution):
                return dataclasses.replace(n, title=self.text(n.title),
                                           id=self.text(n.id) if n.id is not None else None)
            if isinstance(n, ast.Step):
                return dataclasses.replace(n, text=self.text(n.text),
                                           run=self.text(n.run) if n.run is not None else None)
            if isinstance(n, ast.Block) and n.key.endswith("selector"):
                return n  # done by `visit`, before the strings
            return None

        selected = map_nodes(node, visit)
        if selected is not node:
            # selector values are decided by label: protect them from the text renaming
            return _merge(map_nodes(node, rename), selected)
        return map_nodes(node, rename)

    def _is_new(self, ref: ast.Ref) -> bool:
        return ref.kind == LANGUAGE_KIND.get(self.new.kind) and ref.name.split("/")[-1] == self.new.name

    def document(self) -> ast.Scenario:
        statements = []
        for stmt in self.ctx.document.statements:
            if isinstance(stmt, (ast.Topology, ast.UseApp, ast.Expect)):
                statements.append(stmt)
                continue
            if isinstance(stmt, ast.Fault):
                # an object the fault creates is renamed; any other argument that names the old target's
                # technology (a command running `valkey-cli`, an address) cannot be carried over
                created = {r.name for i in self.ctx.scenario.injections() for r in i.created}
                word = self.old_word_in(tuple(e for e in stmt.entries or () if not (
                    isinstance(e, ast.Attr) and isinstance(e.value, ast.Str) and e.value.value in created)))
                if word:
                    raise Unmovable(f"the fault's arguments name `{word}`, which is `{self.old.name}`'s own")
            if isinstance(stmt, ast.Param):  # its values may name components (`redis:6380`), never its name
                lost = self._lost((stmt.domain, stmt.default))
                if lost:
                    raise Unmovable(self.lost_reason(stmt, lost))
                statements.append(dataclasses.replace(stmt, domain=self.node(stmt.domain),
                                                      default=self.node(stmt.default)))
                continue
            lost = self._lost(stmt) if not isinstance(stmt, ast.Description) else None  # said anew below
            if lost:
                raise Unmovable(self.lost_reason(stmt, lost))
            stmt = self.node(stmt)
            if _has_dropped(stmt):
                raise Unmovable("the fault or its group names a component that has no counterpart "
                                "around the new target")
            statements.append(stmt)
        document = dataclasses.replace(self.ctx.document, statements=tuple(statements))
        document = with_expect(document, self.expect())
        document = dataclasses.replace(document, name=self.name())
        document = self._healthy_figures(self._neutral_description(document))
        left = self.stale(document)
        if left:
            raise Unmovable(f"the variant's text would still name {left}")
        return document

    def _neutral_description(self, document: ast.Scenario) -> ast.Scenario:
        """The description said anew from the fault kind's own summary and the new target: the parent's
        states what the old target does for the application (`... cannot charge orders`), which the new
        target need not do."""
        kind = self.ctx.scenario.injections()[0].kind
        where = f"{self.new.kind[:1].lower()}{self.new.kind[1:]} `{self.new.name}`"
        text = f"{kind.summary.rstrip('.')}, here on {where}."
        return dataclasses.replace(document, statements=tuple(
            dataclasses.replace(s, text=text) if isinstance(s, ast.Description) else s for s in document.statements))

    def _healthy_figures(self, document: ast.Scenario) -> ast.Scenario:
        """Prose that quotes a healthy value of a field the fault changes in the old target (`correct port
        8080`) quotes the new target's healthy value of that field, read from the variant's own fault
        (the field at the same place); a value the new target does not have makes the candidate a skip."""
        old = _healthy_values(self.ctx.scenario, self.old)
        if not old:
            return document
        quoted = {text for text in old if any(_quotes(t, text) for stmt in document.statements
                                              if not isinstance(stmt, (ast.Topology, ast.UseApp, ast.Fault))
                                              for t in _prose(stmt))}
        if not quoted:
            return document
        from itbench_dsl.checker import check
        from itbench_dsl.diagnostics import Diagnostics

        scenario = check(document, self.ctx.parent.path, Diagnostics()).scenario
        new = _healthy_values(scenario, self.new) if scenario is not None else {}
        by_path = {path: text for text, path in new.items()}
        mapping = {}
        for text in sorted(quoted):
            after = by_path.get(old[text])
            if after is None:
                raise Unmovable(f"the prose quotes {text}, `{self.old.name}`'s healthy {old[text]}, which "
                                f"`{self.new.name}` does not have")
            if after != text:
                mapping[text] = after
        if not mapping:
            return document
        pattern = re.compile(r"(?<![A-Za-z0-9.\-])(" + "|".join(map(re.escape, sorted(mapping, key=len, reverse=True)))
                             + r")(?![A-Za-z0-9.\-])")

        def sub(value: str) -> str:
            return pattern.sub(lambda m: mapping[m.group(1)], value)

        return map_strings(document, sub, skip=(ast.Topology, ast.UseApp, ast.Fault))

    def name(self) -> str:
        """The parent's name renamed, with `-retarget`; one too long is cut at a word and told apart by a
        hash of its full form (never cut inside a word: `...-retarge-2`)."""
        return _short(self.text(self.ctx.document.name), "-retarget")

    def expect(self) -> list:
        kind = self.ctx.scenario.injections()[0].kind
        original = expect_statements(self.ctx.document)
        had_alerts = any(isinstance(s, ast.Alert) for s in original)
        had_chains = any(isinstance(s, ast.Propagation) for s in original)
        out, alerts, seen_ids = [], [], set()
        groups: dict[str, ast.Ref] = {}
        mapped = []
        for stmt in original:
            new = self.node(stmt)
            if isinstance(new, ast.GroundGroup):
                if _has_dropped(new) or new.id in seen_ids:
                    continue
                seen_ids.add(new.id)
                groups[new.id] = new.target
            mapped.append((stmt, new))
        ids = set(groups)
        dropped = []
        for stmt, new in mapped:
            if isinstance(new, ast.Alert):
                if _has_dropped(new) or (new.target.kind == "group" and new.target.name not in ids):
                    dropped.append(f"`{stmt.name}` on {stmt.target.kind} `{stmt.target.name}` has no counterpart "
                                   f"around `{self.b}`")
                    continue
                new = self._alert_on_service(new)
                if new not in alerts:
                    alerts.append(new)
                continue
            if isinstance(new, ast.Propagation):
                new = _prose_said_anew(stmt, new)
                chain = [r for r in new.chain if r is not _DROPPED and not (r.kind == "group" and r.name not in ids)]
                chain = [r for i, r in enumerate(chain) if i == 0 or chain[i - 1] != r]
                if len(set(chain)) != len(chain) and len(set(stmt.chain)) == len(stmt.chain):
                    raise Unmovable("the renaming makes a propagation chain pass one object twice ("
                                    + " -> ".join(f"{r.kind} {r.name}" for r in chain) + ")")
                for run in split_chain(tuple(chain), self.topology, groups) if len(chain) >= 2 else ():
                    edges = list(zip(run, run[1:]))
                    if any(a == b for a, b in edges):
                        raise Unmovable("the renaming makes a propagation edge from an object to itself")
                    out.append(dataclasses.replace(new, chain=run))
                continue
            if isinstance(new, (ast.RootCause, ast.Optimal)) and _has_dropped(new):
                raise Unmovable("a root cause names a component that has no counterpart around the new target")
            if isinstance(new, ast.Alias):
                members = tuple(m for m in new.members if m is not _DROPPED)
                if len(members) >= 2:
                    out.append(dataclasses.replace(new, members=members))
                continue
            if isinstance(new, ast.Mitigated):
                continue  # below, once the alerts are known
            out.append(new)
        if self._orphans(original, self.a) == set():  # the parent's chains all follow from its root causes
            out = self._reachable(out, self.b)
        # the groups the parent's chains named, which go where no statement of the variant names them any more
        orphaned = {r.name for _, new in mapped if isinstance(new, ast.Propagation) for r in new.chain
                    if r is not _DROPPED and r.kind == "group"}
        if had_chains and not any(isinstance(s, ast.Propagation) for s in out):
            raise Unmovable(f"the propagation cannot be rewritten along the topology around `{self.b}`")
        problems = [p for p in (self.alert_problem(a, groups) for a in alerts) if p]
        alerts = [a for a in alerts if self.alert_problem(a, groups) is None]
        if had_alerts and not alerts:
            own = self.own_alerts(kind)
            problems += [p for p in (self.alert_problem(a, groups) for a in own) if p]
            alerts = [a for a in own if self.alert_problem(a, groups) is None]
            if not alerts:
                if not own:
                    problems.append(f"`{kind.name}` raises no alert of its own on `{self.b}`")
                raise Unmovable("no expected alert can fire around the new target ("
                                + "; ".join(dict.fromkeys(dropped + problems)) + ")")
        expected = {a.name for a in alerts}
        raised = set(library_alerts(kind))
        for stmt, new in mapped:
            if isinstance(new, ast.Mitigated):
                predicates = tuple(p for p in new.predicates
                                   if not (isinstance(p, ast.AlertPredicate) and p.name not in expected | raised)
                                   and not _has_dropped(p))
                if not predicates:
                    raise Unmovable("no mitigation predicate is left around the new target")
                out.append(dataclasses.replace(new, predicates=predicates))
        if orphaned:  # a group only the cut edges named goes with them
            named = {r.name for s in alerts + out if not isinstance(s, ast.GroundGroup) for r in refs(s)
                     if r.kind == "group"}
            out = [s for s in out if not (isinstance(s, ast.GroundGroup) and s.id in orphaned - named)]
        return _fresh_group_ids(alerts + out)

    def _node(self, ref: ast.Ref, groups: dict[str, ast.Ref]):
        """What a chain entry stands for: its component (a group's target's; the pods and the service of one
        workload are one), else the reference itself."""
        if ref.kind == "group" and ref.name in groups:
            ref = groups[ref.name]
        component = self._component_of_ref(ref)
        return ("component", component) if component else (ref.kind, ref.name)

    def _graph(self, statements: list, target: str) -> tuple[set, list]:
        """The nodes the root causes (and the fault's target component) stand for, each alias's members joined,
        and every propagation edge as a pair of nodes."""
        groups = {s.id: s.target for s in statements if isinstance(s, ast.GroundGroup)}
        node = lambda ref: self._node(ref, groups)  # noqa: E731
        roots = {("component", target)}
        for s in statements:
            if isinstance(s, ast.RootCause):
                roots |= {node(r) for r in (s.target, *s.alternatives) if r is not _DROPPED}
        aliases = [{node(m) for m in s.members if m is not _DROPPED} for s in statements if isinstance(s, ast.Alias)]
        edges = [(node(a), node(b)) for s in statements if isinstance(s, ast.Propagation)
                 for a, b in zip(s.chain, s.chain[1:]) if a is not _DROPPED and b is not _DROPPED]
        edges += [(x, y) for members in aliases for x in members for y in members if x != y]
        return roots, edges

    def _reached(self, statements: list, target: str) -> set:
        roots, edges = self._graph(statements, target)
        seen, todo = set(roots), list(roots)
        while todo:
            at = todo.pop()
            for a, b in edges:
                if a == at and b not in seen:
                    seen.add(b)
                    todo.append(b)
        return seen

    def _orphans(self, statements: list, target: str) -> set:
        """The chain entries no root cause reaches along the propagation edges."""
        seen = self._reached(statements, target)
        return {a for a, _ in self._graph(statements, target)[1]} - seen

    def _reachable(self, statements: list, target: str) -> list:
        """The statements with each propagation chain cut to the part a root cause reaches: the move keeps the
        edges downstream of a cut (`checkout -> payment` once `postgresql -> checkout` has no counterpart),
        which the new root cause does not make fail and which the evaluator would grade as the whole chain."""
        seen = self._reached(statements, target)
        groups = {s.id: s.target for s in statements if isinstance(s, ast.GroundGroup)}
        out = []
        for s in statements:
            if isinstance(s, ast.Propagation):
                first = next((i for i, r in enumerate(s.chain) if self._node(r, groups) in seen), len(s.chain))
                if len(s.chain) - first >= 2:
                    out.append(dataclasses.replace(s, chain=s.chain[first:]) if first else s)
                continue
            out.append(s)
        return out

    def alert_problem(self, alert: ast.Alert, groups: dict[str, ast.Ref]) -> str | None:
        """Why a request alert cannot fire where the variant expects it, read from the call graph around
        the new target (None: it can). Errors and latency flow back to callers: HighRequestErrorRate and
        HighRequestLatency fire on the new target or a (transitive) caller of it, unless the new target is where
        requests start (an entry point, whose callers only call back what it calls). NoRequestsReceived fires
        on the new target, or on a callee whose every path from the application's entry points goes through
        it. A request alert needs a component that serves requests (a Service selects it or something calls
        it: a client such as a load generator does neither), and a Service the fault deletes carries none."""
        workload = self.workloads.get(self.b)
        if workload is not None and workload.containers and not any(
                measures_container(alert.name, self.topology.application, c.name) for c in workload.containers):
            return f"`{alert.name}`'s rules do not count `{self.b}`'s containers"
        if scope(alert.name) != TRAFFIC or self.places.wide:
            return None
        target = groups.get(alert.target.name) if alert.target.kind == "group" else alert.target
        if target is None or target.kind not in _WORKLOADS + ("pod", "service"):
            return None
        component = self._component_of_ref(target)
        if component is None:
            return None
        up, down = _graph(self.topology)
        if not measures_service(alert.name, self.topology.application, component):
            return f"`{alert.name}`'s rules do not measure `{component}`"
        if component not in self.places.selecting and not up.get(component):
            return f"`{component}` serves no requests (no Service selects it, nothing calls it)"
        if target.kind == "service" and self.new.kind == "Service" and target.name.split("/")[-1] == self.new.name \
                and _deletes(self.ctx.scenario.injections()[0].kind):
            return f"the fault deletes service `{self.new.name}`, which then carries no requests"
        if component == self.b:
            if self.new.kind == "Service" and alert.name in _ERRORS:
                return (f"requests to service `{self.new.name}` fail before they reach `{self.b}`'s pods: its "
                        "callers report them, not it")
            return None
        if alert.name in _ERRORS:
            if component not in _closure(up, self.b):
                return f"`{component}` does not call `{self.b}`"
            if _closure(up, self.b) <= _closure(down, self.b):
                # an entry point (the load generator): its callers only call back what it calls (a page it
                # serves), so a fault on it shows as silence downstream, not as errors at those callers
                return (f"`{self.b}` is where the application's requests start (each of its callers is one it "
                        f"calls): `{component}` does not fail through it")
        elif alert.name == "NoRequestsReceived":
            if component not in _closure(down, self.b):
                return f"`{component}` is not called through `{self.b}`"
            # the application's entry points: components all of whose (transitive) callers they call back
            # (the load generator and the proxy that also serves its page are one entry)
            entries = [c for c in self.workloads if c != self.b
                       and _closure(up, c) <= _closure(down, c) | {c}]
            if component in _closure(down, *entries, avoid=self.b):
                return f"`{component}` has callers that do not go through `{self.b}`"
        return None

    def _alert_on_service(self, alert: ast.Alert) -> ast.Alert:
        """A request alert on a workload that a service selects is measured on the service."""
        if scope(alert.name) == TRAFFIC and alert.target.kind in _WORKLOADS:
            service = self._service(alert.target.name.split("/")[-1])
            if service is not None:
                return dataclasses.replace(alert, target=ast.Ref("service", service))
        return alert

    def own_alerts(self, kind) -> list[ast.Alert]:
        """The alerts the fault itself raises (ITBench's library), on the new target."""
        out = []
        workload = self.workloads.get(self.b)
        for name in library_alerts(kind):
            if scope(name) == WORKLOAD and workload is not None:
                out.append(ast.Alert(name, ast.Ref("pod", f"{self.b}-*"), None))
            elif scope(name) == TRAFFIC:
                service = self._service(self.b)
                if service is not None:
                    out.append(ast.Alert(name, ast.Ref("service", service), None))
                elif workload is not None:
                    out.append(ast.Alert(name, ast.Ref(workload.kind.lower(), self.b), None))
        return out


_DROPPED = ast.Ref("dropped", "")
_ERRORS = ("HighRequestErrorRate", "HighRequestLatency")  # measured where requests fail: they flow back to callers


_EDGE_PROSE = ("condition", "effect")


def _prose_said_anew(old: ast.Propagation, new: ast.Propagation) -> ast.Propagation:
    """A propagation the move renamed without its `condition` and `effect`: the parent's state what the old
    target's failure does to the application (`Checkout cannot read the cart`, `Orders fail`), which the new
    target's need not do (checkout only mails a confirmation), so each edge gets the compiler's neutral prose
    (`service email is degraded`, `service checkout is affected`, expectations.py). A chain the move left as it
    was, its prose unchanged (another fault's), keeps its own."""
    def names(p):
        return [(getattr(r, "kind", None), getattr(r, "name", None)) for r in p.chain]

    if names(old) == names(new) and old.entries == new.entries:
        return new
    entries = tuple(e for e in new.entries or () if not (isinstance(e, ast.Attr) and e.key in _EDGE_PROSE))
    return dataclasses.replace(new, entries=entries or None)


def _closure(graph: dict[str, list[str]], *start: str, avoid: str | None = None) -> set[str]:
    """The components reached from `start` along `graph` (not through `avoid`), `start` excluded."""
    seen: set[str] = set()
    todo = [c for c in start if c != avoid]
    while todo:
        for d in graph.get(todo.pop(), ()):
            if d not in seen and d != avoid:
                seen.add(d)
                todo.append(d)
    return seen - set(start)


def _deletes(kind) -> bool:
    """Whether the fault kind deletes its target (its mechanism says so: `deleted_service`, ...)."""
    return "delete" in (kind.mechanism or "").lower() or kind.name.startswith("deleted_")


class Healthy:
    """The scenario's objects as the healthy cluster runs them, and what its first fault changes in them."""

    def __init__(self, scenario: ir.Scenario) -> None:
        self.scenario = scenario
        self.objects = {(o.get("kind"), (o.get("metadata") or {}).get("namespace"), o["metadata"]["name"]): o
                        for o in topology_manifests(scenario.topology, provided=True)}
        self._changes = None

    def manifest(self, ref: ir.ObjectRef, container: str | None = None) -> dict | None:
        """The object; with `container`, that container first among its pod's (what the evaluator's lookup
        reads first)."""
        obj = self.objects.get((ref.kind, ref.namespace, ref.name))
        pod = ((obj or {}).get("spec") or {}).get("template", {}).get("spec") if container else None
        if not isinstance(pod, dict) or not isinstance(pod.get("containers"), list):
            return obj
        ordered = sorted(pod["containers"], key=lambda c: c.get("name") != container)
        template = {**obj["spec"]["template"], "spec": {**pod, "containers": ordered}}
        return {**obj, "spec": {**obj["spec"], "template": template}}

    def changed_path(self, ref: ir.ObjectRef, text: str) -> tuple[str, ...] | None:
        """The field of `ref` the fault sets to `text` (a figure of its arguments), as a path from the
        container (or the object) that the evaluator's lookup reads; None when the fault sets no field to it."""
        if self._changes is None:
            self._changes = fault_changes(self.scenario)[0]
        for entry in self._changes:
            obj = entry["object"]
            if (obj["kind"], obj["namespace"], obj["name"]) != (ref.kind, ref.namespace, ref.name):
                continue
            for change in entry["changes"]:
                if str(change.get("faulty")) == text and "healthy" in change:
                    path = change["path"]
                    last = max((i for i, seg in enumerate(path) if not isinstance(seg, str)), default=-1)
                    tail = tuple(seg for seg in path[last + 1:] if isinstance(seg, str))
                    return tail or None
        return None


def _healthy_values(scenario: ir.Scenario, ref: ir.ObjectRef) -> dict[str, str]:
    """The healthy values of the fields the scenario's first fault changes in `ref` (numbers of three
    characters or more: a port, a quantity), each with the field's path (list items by position kind)."""
    out: dict[str, str] = {}
    for entry in fault_changes(scenario)[0]:
        obj = entry["object"]
        if (obj["kind"], obj["name"]) != (ref.kind, ref.name):
            continue
        for change in entry["changes"]:
            healthy = change.get("healthy")
            if isinstance(healthy, bool) or not isinstance(healthy, (int, str)) or len(str(healthy)) < 3:
                continue
            if isinstance(healthy, str) and _magnitude(healthy) is None:
                continue
            path = ".".join(seg if isinstance(seg, str) else "[]" for seg in change["path"])
            out.setdefault(str(healthy), path)
    return out


def _prose(node):
    """The strings of a statement a reader reads (values, prose, steps), not its references' names."""
    if isinstance(node, ast.Ref):
        return
    yield from (t for t in _texts(node) if not isinstance(node, ast.Ref))


def _quotes(text: str, value: str) -> bool:
    return re.search(r"(?<![A-Za-z0-9.\-])" + re.escape(value) + r"(?![A-Za-z0-9.\-])", text) is not None


def _short(name: str, suffix: str) -> str:
    """`name` + `suffix` within NAME_LIMIT: cut after a whole word, with a hash of the full name."""
    if len(name) + len(suffix) <= NAME_LIMIT:
        return name + suffix
    digest = hashlib.sha1(name.encode()).hexdigest()[:6]
    room = NAME_LIMIT - len(suffix) - len(digest) - 1
    head = name[:room + 1]
    head = head[:head.rfind("-")] if "-" in head else name[:room]
    return f"{head.rstrip('-')}-{digest}{suffix}"


def _fresh_group_ids(statements: list) -> list:
    """Ground-truth group ids derived anew from what each group names (`cart-service-1`, `cart-pod-1`), so
    that no id carries an old target's word (`tamper-body-otel-demo-emailservice-1`); every reference to a
    group (alerts, chains, root causes, aliases, a cause's `group_id`) follows."""
    ids: dict[str, str] = {}
    count: dict[str, int] = {}
    for stmt in statements:
        if isinstance(stmt, ast.GroundGroup) and stmt.id not in ids:
            base = re.sub(r"[^a-z0-9]+", "-", stmt.target.name.split("/")[-1].lower()).strip("-") or "group"
            stem = f"{base}-{stmt.target.kind}"
            count[stem] = count.get(stem, 0) + 1
            ids[stmt.id] = f"{stem}-{count[stem]}"
    if all(k == v for k, v in ids.items()):
        return statements

    def visit(n):
        if isinstance(n, ast.GroundGroup):
            return dataclasses.replace(n, id=ids.get(n.id, n.id))
        if isinstance(n, ast.Ref) and n.kind == "group":
            return dataclasses.replace(n, name=ids.get(n.name, n.name))
        if isinstance(n, ast.Str) and n.value in ids:
            return dataclasses.replace(n, value=ids[n.value])
        return None
    return [map_nodes(stmt, visit) for stmt in statements]


def _value_text(value) -> str:
    return str(value.value) if isinstance(value, ast.Int) else value.text


def _magnitude(text: str) -> tuple[str, Decimal] | None:
    """A figure's dimension and size: memory in bytes, CPU in cores, a plain number."""
    try:
        return "count", Decimal(int(text))
    except ValueError:
        pass
    for dimension, parse in (("memory", units.parse_memory), ("cpu", units.parse_cpu)):
        try:
            return dimension, Decimal(parse(text))
        except units.UnitError:
            continue
    return None


def _scaled(text: str, before: str, after: str) -> str | None:
    """`text` for the new target: `after` when `text` is `before` (by meaning), else `text` times after/before,
    in `text`'s own unit. None when the figures are not of one dimension."""
    a, b, c = _magnitude(text), _magnitude(before), _magnitude(after)
    if a is None or b is None or c is None or not (a[0] == b[0] == c[0]):
        return None
    if a[1] == b[1]:
        return after
    if b[1] == 0:
        return None
    size = a[1] * c[1] / b[1]
    m = re.fullmatch(r"([0-9.]+)([A-Za-z]*)", text)
    suffix = m.group(2) if m else ""
    unit = Decimal(units.MEMORY_SUFFIXES[suffix]) if a[0] == "memory" else (
        Decimal("0.001") if suffix == "m" else Decimal(1))
    number = max(int((size / unit).to_integral_value()), 1 if a[1] > 0 else 0)
    return f"{number}{suffix}"


_SEPARATORS = "-_ "


def _key(name: str) -> str:
    """A name's spelling-free key: `Product Catalog`, `product_catalog` and `ProductCatalog` are `productcatalog`."""
    return re.sub(r"[-_ ]", "", name.lower())


def _names_pattern(names) -> re.Pattern:
    """Whole occurrences of `names` (longest first) in any spelling: their parts joined by `-`, `_`, a space or
    nothing (`product-catalog`, `Product Catalog`, `PRODUCT_CATALOG`, `ProductCatalog`), a `deployment/` prefix
    (group 1), the name (group 2) and a plural."""
    spelled = ("[-_ ]?".join(map(re.escape, re.split(r"[-_]", k))) for k in names)
    return re.compile(r"(?<![A-Za-z0-9])(?:(deployments?|statefulsets?|deploy|sts)/)?(" + "|".join(spelled)
                      + r")(?:(?<=[sxz])es|(?<![sxz])s)?(?![A-Za-z0-9])", re.IGNORECASE)


def _glued_pattern(names) -> re.Pattern:
    """`names` (any spelling, separators left out or not) glued to `service` or `services` (group 2)."""
    spelled = ("[-_ ]?".join(map(re.escape, re.split(r"[-_]", k))) for k in names)
    return re.compile(r"(?<![A-Za-z0-9])(" + "|".join(spelled) + r")(services?)(?![a-z0-9])", re.IGNORECASE)


def _glued_like(found: str, suffix: str, name: str) -> str:
    """`name` glued to `suffix` as `found` was: `cartservice` -> `productcatalogservice`, `CartService` ->
    `ProductCatalogService`, `CARTSERVICE` -> `PRODUCTCATALOGSERVICE`."""
    parts = [p for p in re.split(r"[-_.]", name) if p]
    if found.isupper() and len(found) > 1:
        return "".join(parts).upper() + suffix
    camel = suffix[:1].isupper() or any(c.isupper() for c in found[1:])
    joined = "".join(p[:1].upper() + p[1:] if i and camel else p for i, p in enumerate(parts))
    return (joined[:1].upper() + joined[1:] if found[:1].isupper() else joined) + suffix


def _case_like(found: str, name: str, snake: bool = False, old: str | None = None) -> str:
    """`name` written in the spelling of the occurrence `found` (of the name `old`): `CART` -> `PRODUCT_CATALOG`
    (upper snake, an environment variable's name), `Cart` -> `Product-catalog`, `cart_addr`'s `cart` ->
    `product_catalog`; a name of several parts found spaced or joined keeps that separator and the case of its
    parts: `Product Catalog` -> `Frontend Proxy`, `Product catalog` -> `Frontend proxy`, `ProductCatalog` ->
    `FrontendProxy`, `productcatalog` -> `frontendproxy`."""
    separator = next((c for c in found if c in _SEPARATORS), "")
    in_parts = old is not None and len(re.split(r"[-_]", old)) > 1 and separator in (" ", "")
    if in_parts:
        parts = re.split(r"[-_]", name)
        if found.isupper() and len(found) > 1:
            return separator.join(parts).upper()
        found_parts = found.split(" ") if separator else re.findall(r"[A-Z]?[^A-Z]*", found)
        title = len([p for p in found_parts if p]) > 1 and all(p[:1].isupper() for p in found_parts[1:] if p)
        first = found[:1].isupper()
        return separator.join(p[:1].upper() + p[1:] if (i and title) or (not i and first) else p
                              for i, p in enumerate(parts))
    if snake or separator == "_" or found.isupper() and len(found) > 1:
        name = name.replace("-", "_").replace(".", "_")
    if found.isupper() and len(found) > 1:
        return name.upper()
    if found[:1].isupper():
        return name[:1].upper() + name[1:]
    return name


def _like(found: str, name: str) -> str:
    """`name` written as `found` is: capitalised when it is."""
    return name[:1].upper() + name[1:] if found[:1].isupper() else name


def _has_dropped(node) -> bool:
    return any(r is _DROPPED for r in refs(node))


def _without_entries(node, keys):
    """`node` with the entries of the given keys taken out of every fault statement in it."""
    if isinstance(node, ast.Fault) and keys:
        return dataclasses.replace(node, entries=tuple(e for e in node.entries or ()
                                                       if not (isinstance(e, ast.Attr) and e.key in keys)))
    if isinstance(node, tuple):
        return tuple(_without_entries(n, keys) for n in node)
    if dataclasses.is_dataclass(node) and not isinstance(node, type) and keys:
        changes = {f.name: _without_entries(getattr(node, f.name), keys) for f in dataclasses.fields(node)
                   if f.init and isinstance(getattr(node, f.name), (tuple, ast.Fault))}
        return dataclasses.replace(node, **changes) if changes else node
    return node


def _texts(node):
    """Every string of a statement: values, ids, prose."""
    if isinstance(node, str):
        yield node
    elif isinstance(node, tuple):
        for n in node:
            yield from _texts(n)
    elif dataclasses.is_dataclass(node) and not isinstance(node, type):
        for f in dataclasses.fields(node):
            if f.compare and f.name not in ("kind", "key", "state", "op", "when"):
                yield from _texts(getattr(node, f.name))


def _merge(renamed, selected):
    """`renamed` with every selector block taken from `selected` (the two trees have the same shape)."""
    if isinstance(renamed, tuple):
        return tuple(_merge(a, b) for a, b in zip(renamed, selected))
    if isinstance(renamed, ast.Block) and renamed.key.endswith("selector"):
        return selected
    if dataclasses.is_dataclass(renamed) and not isinstance(renamed, type) and type(renamed) is type(selected):
        changes = {}
        for f in dataclasses.fields(renamed):
            a, b = getattr(renamed, f.name), getattr(selected, f.name)
            if f.compare and (isinstance(a, tuple) or dataclasses.is_dataclass(a)):
                changes[f.name] = _merge(a, b)
        return dataclasses.replace(renamed, **changes) if changes else renamed
    return renamed
