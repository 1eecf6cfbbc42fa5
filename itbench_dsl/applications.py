"""Applications as modules: what `use app "X"` names, loading it, composing imports, renaming namespaces.

`X` is either a file (`"./apps/shop.itb"`, `"../x.itb"`, an absolute path, anything ending in `.itb`),
read relative to the importing file, or a name, looked up as `NAME.itb` in the application search
path (the `--app-path` folders of the command line, then the `[apps] path` of the nearest
`itbench.toml`), then in the standard library (`itbench_dsl/stdlib/apps/`). A file must hold one
`app "NAME" { ... }` document; an application may itself `use app` others, whose objects become its
own (each imported once; a cycle is an error, E2031).

`use app "X" { namespace = "shop" }` (an application with one namespace) or
`{ namespaces { "old" = "new" } }` moves the application's objects to other namespaces; every
reference follows: the objects' namespaces, an autoscaler's target, affinity terms, the service
accounts role bindings name (cluster-scoped objects keep their names), and the in-cluster DNS names
(`NAME.old.svc...`) in environment values, commands, arguments and ConfigMap data.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import os
import re
import tomllib
from contextlib import contextmanager
from contextvars import ContextVar
from importlib import resources
from pathlib import Path

from . import ast, ir
from .diagnostics import Diagnostics, did_you_mean
from .reader import Context, entries_as_data
from .source import Span
from .topology import (
    DNS1123_LABEL,
    MESH_NAMESPACE_LABELS,
    Declared,
    TopologyBuild,
    TopologyBuilder,
)

PROJECT_FILE = "itbench.toml"
# the `--app-path` folders of the running command (set with app_search_path)
APP_PATH: ContextVar[tuple[str, ...]] = ContextVar("itbench_app_path", default=())


@contextmanager
def app_search_path(folders):
    """Look applications up in `folders` (before the project file's and the standard library) meanwhile."""
    token = APP_PATH.set(tuple(str(f) for f in folders))
    try:
        yield
    finally:
        APP_PATH.reset(token)


def is_file_reference(ref: str) -> bool:
    return ref.startswith(("./", "../", "/")) or ref.endswith(".itb")


@functools.lru_cache(maxsize=64)
def _project_file(folder: str) -> tuple[tuple[str, ...], str | None]:
    """The search path of the nearest itbench.toml at or above `folder`, and a problem reading it if any."""
    current = Path(folder)
    for candidate in (current, *current.parents):
        path = candidate / PROJECT_FILE
        if not path.is_file():
            continue
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
            return (), f"{path}: {exc}"
        entries = (data.get("apps") or {}).get("path", [])
        entries = [entries] if isinstance(entries, str) else entries
        if not isinstance(entries, list) or not all(isinstance(e, str) for e in entries):
            return (), f"{path}: `[apps] path` must be a folder or a list of folders"
        return tuple(str(candidate / e) for e in entries), None
    return (), None


def search_path(importer: str) -> tuple[list[str], str | None]:
    """The folders `use app "NAME"` looks in from the file `importer`: --app-path, then the project file's."""
    folder = os.path.abspath(os.path.dirname(importer) or ".")
    project, problem = _project_file(folder)
    return [*APP_PATH.get(), *project], problem


def _display(path: Path) -> str:
    try:
        return os.path.relpath(path)
    except ValueError:
        return str(path)


@dataclasses.dataclass(frozen=True)
class Source:
    """Where an application comes from: the standard library (`stdlib`, its name) or a file (its real path)."""

    kind: str  # stdlib | file
    key: str  # the name, or the resolved path
    display: str


def locate(ref: str, importer: str) -> tuple[Source | None, str]:
    """The application `ref` names from the file `importer`, or None and why not."""
    if is_file_reference(ref):
        path = Path(ref) if os.path.isabs(ref) else Path(os.path.dirname(importer) or ".") / ref
        if path.is_file():
            resolved = path.resolve()
            return Source("file", str(resolved), _display(resolved)), ""
        return None, f"no application file `{_display(path)}`"
    folders, problem = search_path(importer)
    for folder in folders:
        path = Path(folder) / f"{ref}.itb"
        if path.is_file():
            resolved = path.resolve()
            return Source("file", str(resolved), _display(resolved)), ""
    if ref in app_names():
        return Source("stdlib", ref, f"<stdlib>/apps/{ref}.itb"), ""
    where = ", ".join(folders) if folders else "no --app-path folder and no itbench.toml `[apps] path`"
    return None, f"unknown application `{ref}`" + (f" ({problem})" if problem else f" (searched: {where})")


# ---- loading and composing --------------------------------------------------------------------------------


@dataclasses.dataclass
class Loaded:
    build: TopologyBuild | None
    diags: Diagnostics
    name: str | None  # the `app` block's name


# the application files each file imports (real paths), recorded as they are read: a file's cache key holds
# the state of every file it imports, so that changing an imported file rebuilds its importers too
_IMPORTS: dict[str, set[str]] = {}


def _stat(path: str) -> tuple:
    try:
        stat = os.stat(path)
        return (path, stat.st_mtime_ns, stat.st_size)
    except OSError:
        return (path, 0, 0)


def _file_key(source: Source) -> tuple:
    """The file's state and that of every file it imports, transitively (as far as they are known)."""
    seen: list[str] = []
    todo = [source.key]
    while todo:
        path = todo.pop()
        if path in seen:
            continue
        seen.append(path)
        todo.extend(sorted(_IMPORTS.get(path, ())))
    return tuple(_stat(path) for path in seen)


def load(source: Source, stack: tuple[str, ...] = ()) -> Loaded:
    """An application's topology (its imports composed in), with the diagnostics of its files.

    `stack` holds the files being imported around this one, to find cycles. Each caller gets its
    own lists (TopologyBuild.copy)."""
    if source.kind == "stdlib":
        if source.key in stack:  # a library application importing itself: never built
            return Loaded(None, Diagnostics(), source.key)
        loaded = _stdlib(source.key)
    else:
        loaded = _file(_file_key(source), source.display, stack)
    build = loaded.build.copy() if loaded.build is not None else None
    return Loaded(build, loaded.diags, loaded.name)


@functools.lru_cache(maxsize=None)
def _stdlib(name: str) -> Loaded:
    build, diags = app_topology(name)
    if build is not None:
        build.modules = {name: f"<stdlib>/apps/{name}.itb"}
    return Loaded(build, diags, _app_built(name)[2])


_MAX_FILE_BYTES = 8 * 1024 * 1024  # beyond the parser's own limit: not read further


@functools.lru_cache(maxsize=64)
def _file(key: tuple, display: str, stack: tuple[str, ...]) -> Loaded:
    from .parser import parse_bytes

    path = key[0][0]
    diags = Diagnostics()
    try:
        with open(path, "rb") as handle:
            data = handle.read(_MAX_FILE_BYTES + 1)
    except OSError as exc:
        diags.error("E2001", f"cannot read application file `{display}`: {exc.strerror or exc}", display)
        return Loaded(None, diags, None)
    document = parse_bytes(data, display, diags)
    if document is None:
        return Loaded(None, diags, None)
    if not isinstance(document, ast.App):
        return Loaded(None, diags, "")  # "": not an application document (the importer reports it, located)
    build = compose(document, display, diags, (*stack, path))
    build.display_name = document.name
    build.modules[document.name] = display
    build.module_hashes[document.name] = hashlib.sha256(data).hexdigest()  # what was read, for bundle.lock
    return Loaded(build, diags, document.name)


def compose(app: ast.App, path: str, diags: Diagnostics, stack: tuple[str, ...]) -> TopologyBuild:
    """The topology of an application document: its imports first, then its own statements."""
    build = TopologyBuild()
    ctx = Context(diags, path)
    for use in (s for s in app.statements if isinstance(s, ast.UseApp)):
        imported = import_app(use, ctx, stack)
        if imported is not None:
            merge(build, imported, ctx, use.span)
    builder = TopologyBuilder(ctx, build)
    builder.add_statements(app.statements)
    builder.resolve_references()
    for stmt in app.statements:
        if isinstance(stmt, ast.Metadata):
            build.app_metadata = entries_as_data(stmt.entries)
    enrol_in_mesh(build)
    return build


def enrol_in_mesh(build: TopologyBuild) -> None:
    """An application installed in a service mesh (`service_mesh` in its metadata) has its namespaces enrolled
    by the installation: their manifests carry the mesh's label (ambient mode: istio.io/dataplane-mode), so a
    fault that takes a namespace out of the mesh and its revert act on what the topology deploys."""
    labels = MESH_NAMESPACE_LABELS.get(build.app_metadata.get("service_mesh"), {})
    if not labels:
        return
    workload_namespaces = {w.namespace for w in build.workloads}
    for index, namespace in enumerate(build.namespaces):
        if namespace.name in workload_namespaces and not namespace.provided:
            build.namespaces[index] = dataclasses.replace(namespace, labels={**labels, **namespace.labels})


def import_app(use: ast.UseApp, ctx: Context, stack: tuple[str, ...]) -> TopologyBuild | None:
    """`use app "X" { ... }` read from the file `ctx.path`: the application's topology, renamed as the body
    says, or None after reporting why not (at the statement)."""
    source, why = locate(use.name, ctx.path)
    if source is None:
        names = app_names()
        hint = did_you_mean(use.name, names) if not is_file_reference(use.name) else None
        ctx.error("E2001", why, use.span, "not found", help=f"did you mean `{hint}`?" if hint else
                  "known standard applications: " + ", ".join(names) + "; a local file is written "
                  '`use app "./apps/NAME.itb"` (relative to this file)')
        return None
    if source.key in stack:
        chain = " -> ".join(_display(Path(p)) for p in (*stack[stack.index(source.key):], source.key))
        ctx.error("E2031", f"application import cycle: {chain}", use.span, "imports itself",
                  help="move what the applications share into a third file that both import")
        return None
    if source.kind == "file" and stack:
        _IMPORTS.setdefault(stack[-1], set()).add(source.key)
    loaded = load(source, stack)
    ctx.diags.extend(loaded.diags.items)
    ctx.diags.sources.update(loaded.diags.sources)
    if loaded.name == "":
        ctx.error("E2032", f"`{source.display}` does not hold an `app` block", use.span, "not an application",
                  help='an application file holds one `app "NAME" { ... }` document')
        return None
    if loaded.build is None:
        return None
    if source.kind == "file" and loaded.name in app_names():
        ctx.error("E2033", f"application file `{source.display}` is named `{loaded.name}`, as a standard-library "
                  "application is", use.span, "name taken", help=f"rename its `app \"{loaded.name}\"` block")
    renames = namespace_renames(use, loaded.build, ctx)
    return rename_namespaces(loaded.build, renames) if renames else loaded.build


def merge(into: TopologyBuild, other: TopologyBuild, ctx: Context, span: Span) -> None:
    """Add an imported application's objects to `into`; a name both declare is E2002, an application
    name two files use is E2033 (at the importing statement)."""
    for name, where in other.modules.items():
        if name in into.modules and into.modules[name] != where:
            ctx.error("E2033", f"two applications are named `{name}`: {into.modules[name]} and {where}", span,
                      "name clash", help="rename one of the `app` blocks")
        into.modules.setdefault(name, where)
    fresh = {key: d for key, d in other.declared.items() if key not in into.declared}
    for key, declared in other.declared.items():
        first = into.declared.get(key)
        if first is not None and first is not declared:
            ctx.error("E2002", f"{declared.kind} `{declared.name}` is declared by two imported applications", span,
                      "declared twice", help=f"at {first.path}:{first.span.line} and "
                      f"{declared.path}:{declared.span.line}")
    keep = {id(d.obj) for d in fresh.values()}
    for pool in ("namespaces", "workloads", "services", "configmaps", "secrets", "service_accounts", "autoscalers",
                 "storage_classes", "persistent_volumes", "claims", "roles", "role_bindings"):
        getattr(into, pool).extend(o for o in getattr(other, pool) if id(o) in keep)
    into.declared.update(fresh)
    for name, digest in other.module_hashes.items():
        into.module_hashes.setdefault(name, digest)
    into.edges.extend(e for e in other.edges if e not in into.edges)
    if into.application is None:
        into.application = other.application
        into.app_metadata = dict(other.app_metadata)


# ---- namespaces ---------------------------------------------------------------------------------------


def namespace_renames(use: ast.UseApp, build: TopologyBuild, ctx: Context) -> dict[str, str]:
    """The `namespace = "new"` / `namespaces { "old" = "new" }` of a `use app` body, checked."""
    from .reader import Body

    if use.entries is None:
        return {}
    body = Body(ctx, use.entries, "`use app`", use.span)
    body.used = set(range(len(body.entries)))  # the other entries (options) are read by the checker
    single = body.attr("namespace", "str")
    mapping = body.string_map("namespaces")
    deployable = [n.name for n in build.namespaces if not n.provided]
    renames: dict[str, str] = {}
    if single is not None:
        if len(deployable) != 1:
            ctx.error("E2016", f"the application has {len(deployable)} namespaces ({', '.join(deployable)}): say which "
                      "one moves", body.attr_span("namespace"), "which namespace?",
                      help=f'write `namespaces {{ "{deployable[0] if deployable else "old"}" = "{single}" }}`')
        else:
            renames[deployable[0]] = single
    span = body.attr_span("namespaces") if mapping else body.attr_span("namespace")
    for old, new in mapping.items():
        if old not in deployable:
            hint = did_you_mean(old, deployable)
            ctx.error("E2016", f"the application has no namespace `{old}` to move", span, "unknown namespace",
                      help=f"did you mean `{hint}`?" if hint else "its namespaces: " + ", ".join(deployable))
            continue
        renames[old] = new
    for old, new in list(renames.items()):
        if len(new) > 63 or not DNS1123_LABEL.match(new):
            ctx.error("E2014", f"namespace name `{new}` is not a valid Kubernetes name", span, "invalid name",
                      help="use lower-case letters, digits and `-`")
            del renames[old]
        elif new in {n.name for n in build.namespaces} and new not in renames:
            ctx.error("E2002", f"the application already has a namespace `{new}`", span, "taken",
                      help="move it to a namespace of its own")
            del renames[old]
    return {old: new for old, new in renames.items() if old != new}


def _dns_rewriter(renames: dict[str, str]):
    pattern = re.compile(r"(?<![A-Za-z0-9-])(" + "|".join(re.escape(o) for o in sorted(renames, key=len, reverse=True))
                         + r")(?=\.svc\b)")
    return lambda text: pattern.sub(lambda m: renames[m.group(1)], text) if ".svc" in text else text


def rename_namespaces(build: TopologyBuild, renames: dict[str, str]) -> TopologyBuild:
    """A copy of `build` with its namespaces renamed and every reference to them following."""
    dns = _dns_rewriter(renames)

    def walk(value, key: str | None = None):
        if isinstance(value, str):
            return renames.get(value, value) if key == "namespace" else dns(value)
        if isinstance(value, list):
            if key == "namespaces":  # an affinity term's namespaces
                return [renames.get(v, v) if isinstance(v, str) else walk(v) for v in value]
            return [walk(v) for v in value]
        if isinstance(value, dict):
            return {k: walk(v, k) for k, v in value.items()}
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            changes = {f.name: walk(getattr(value, f.name), f.name) for f in dataclasses.fields(value)}
            if isinstance(value, ir.Namespace):
                changes["name"] = renames.get(value.name, value.name)
            return dataclasses.replace(value, **changes)
        return value

    renamed: dict[int, object] = {}
    metadata = dict(build.app_metadata)
    if any(old != new for old, new in renames.items()) and metadata.pop("itbench_key", None) is not None:
        # ITBench installs a standard application in its own namespaces: moved, it is deployed from the
        # bundle's manifests alone, and an ITBench export lists no application (export_findings says why)
        metadata["itbench_moved"] = True
    out = TopologyBuild(application=build.application, app_metadata=metadata,
                        edges=[list(e) for e in build.edges], display_name=build.display_name,
                        modules=dict(build.modules), module_hashes=dict(build.module_hashes))
    for pool in ("namespaces", "workloads", "services", "configmaps", "secrets", "service_accounts", "autoscalers",
                 "storage_classes", "persistent_volumes", "claims", "roles", "role_bindings"):
        for obj in getattr(build, pool):
            new = renamed[id(obj)] = walk(obj)
            getattr(out, pool).append(new)
    for (kind, namespace, name), declared in build.declared.items():
        namespace = renames.get(namespace, namespace) if kind != "namespace" else namespace
        if kind == "namespace":
            name = renames.get(name, name)
        obj = renamed.get(id(declared.obj), declared.obj)
        out.declared[(kind, namespace, name)] = dataclasses.replace(
            declared, name=name, namespace=declared.namespace and renames.get(declared.namespace, declared.namespace),
            obj=obj)
    gateway = out.app_metadata.get("gateway")
    if gateway is not None:
        def moved(entry):
            if isinstance(entry, str) and "/" in entry:
                namespace, _, name = entry.partition("/")
                return f"{renames.get(namespace, namespace)}/{name}"
            return entry
        out.app_metadata["gateway"] = [moved(g) for g in gateway] if isinstance(gateway, list) else moved(gateway)
    return out


__all__ = ["APP_PATH", "PROJECT_FILE", "Declared", "Loaded", "Source", "app_search_path", "compose", "import_app",
           "load", "locate", "merge", "rename_namespaces", "search_path"]


# ---- the standard library ---------------------------------------------------------------


def app_names() -> list[str]:
    folder = resources.files("itbench_dsl").joinpath("stdlib/apps")
    return sorted(p.name[: -len(".itb")] for p in folder.iterdir() if p.name.endswith(".itb"))


@functools.lru_cache(maxsize=None)
def load_app(name: str) -> tuple[ast.App | None, Diagnostics, str]:
    """Parse a standard-library application once per process."""
    from .parser import parse_package_file  # late: the parser is built on first use

    resource = resources.files("itbench_dsl").joinpath(f"stdlib/apps/{name}.itb")
    path = f"<stdlib>/apps/{name}.itb"
    diags = Diagnostics()
    document = parse_package_file(resource.read_bytes(), path, diags)
    if document is not None and not isinstance(document, ast.App):
        diags.error("E1002", "a standard-library application file must hold an `app` block", path, document.span)
        document = None
    return document, diags, path


def _app_build(name: str) -> tuple[TopologyBuild | None, Diagnostics]:
    return _app_built(name)[:2]


@functools.lru_cache(maxsize=None)
def _app_built(name: str) -> tuple[TopologyBuild | None, Diagnostics, str]:
    """A standard-library application's topology, its diagnostics and its name, built once per process and kept
    on disk (cache.py) for the next: keyed by the package's files, which are all it is made from (a standard
    application imports no other)."""
    from . import cache

    where = cache.path_for("stdlib-app", cache.package_digest(), name)
    found = cache.load(where)
    if isinstance(found, tuple) and len(found) == 3 and isinstance(found[1], Diagnostics):
        return found
    app, parse_diags, path = load_app(name)
    diags = Diagnostics(list(parse_diags.items), dict(parse_diags.sources))
    if app is None:
        return None, diags, name
    build = compose(app, path, diags, (name,))
    build.application = name
    build.modules[app.name] = path
    value = (build, diags, app.name)
    cache.store(where, value)
    return value


def app_topology(name: str) -> tuple[TopologyBuild | None, Diagnostics]:
    """A standard-library application's topology, built once per process.

    Each caller gets its own lists and index, sharing the (never mutated) objects: faults
    copy an object before they change it.
    """
    build, diags = _app_build(name)
    if build is None:
        return None, diags
    return build.copy(), diags
