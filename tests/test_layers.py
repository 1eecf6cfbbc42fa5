"""The package's imports run one way. Every import counts, those inside functions too: a cycle hidden
behind a late import is still a cycle. Beside the no-cycle rule, a few layers are named so an import
cannot climb over them (docs/architecture.md, "Rules the tests enforce")."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "itbench_dsl"
ROOT = "itbench_dsl"


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    return {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _resolve(importer: str, is_package: bool, node: ast.ImportFrom) -> str:
    if node.level == 0:
        return node.module or ""
    base = importer.split(".")
    if not is_package:
        base = base[:-1]
    if node.level > 1:
        base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def import_graph() -> dict[str, set[str]]:
    """module -> the package's modules it imports (an imported name that is a submodule counts as that
    submodule; any other name as the module that defines it)."""
    modules = _modules()
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        tree = ast.parse(path.read_text("utf-8"), str(path))
        is_package = path.name == "__init__.py"
        for node in ast.walk(tree):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = _resolve(name, is_package, node)
                for alias in node.names:
                    sub = f"{base}.{alias.name}"
                    targets.append(sub if sub in modules else base)
            for target in targets:
                while target and target not in modules:  # `import itbench_dsl.x.y` of an attribute path
                    target = target.rpartition(".")[0]
                if target.startswith(ROOT) and target != name:
                    graph[name].add(target)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = [0]

    def visit(node: str) -> None:
        work = [(node, iter(sorted(graph[node])))]
        index[node] = low[node] = counter[0]
        counter[0] += 1
        stack.append(node)
        on_stack.add(node)
        while work:
            current, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter[0]
                    counter[0] += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[current] = min(low[current], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[current])
            if low[current] == index[current]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == current:
                        break
                if len(component) > 1:
                    found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(found)


def _under(module: str, prefix: str) -> bool:
    return module == prefix or module.startswith(prefix + ".")


# (importer, imported, why): no module under the first may import one under the second
FORBIDDEN = [
    ("itbench_dsl.faults", "itbench_dsl.backends", "the fault library sits below the backends that render it"),
    ("itbench_dsl.faults", "itbench_dsl.compiler", "the compiler drives the fault library, not the reverse"),
    ("itbench_dsl.faults", "itbench_dsl.run.lifecycle", "a run of a bundle sits above the compiler's fault library"),
    ("itbench_dsl.checker", "itbench_dsl.backends", "checking makes the IR the backends read"),
    ("itbench_dsl.backends", "itbench_dsl.compiler", "the compiler calls the backends, not the reverse"),
    ("itbench_dsl.backends", "itbench_dsl.checking", "the backends read the IR, not the checks run after them"),
    ("itbench_dsl.vocabulary", "itbench_dsl.ciso", "the word lists sit below the catalogue"),
    ("itbench_dsl.diagnostics", "itbench_dsl.compiler", "the lowest module points at nothing above it"),
    ("itbench_dsl.expectations", "itbench_dsl.checker", "the checker mixes the expectations in, not the reverse"),
]
# the kubectl replay (runtime/kubectl/), bottom to top: each module imports only those before it
KUBECTL = ["state", "command", "resources", "files", "targets", "server", "patches", "verbs", "shell", "replay"]
FACE = "itbench_dsl"  # the package face (`__init__.py`): only the entry points above it may import it
ABOVE_THE_FACE = ("itbench_dsl.cli", "itbench_dsl.__main__")


def test_the_package_has_no_import_cycle():
    found = cycles(import_graph())
    assert not found, "import cycles (inner imports included): " + "; ".join(" <-> ".join(c) for c in found)


def test_no_import_climbs_over_a_layer():
    graph = import_graph()
    climbs = [f"{a} imports {b}: {why}"
              for low, high, why in FORBIDDEN
              for a in graph if _under(a, low)
              for b in graph[a] if _under(b, high)]
    climbs += [f"{a} imports the package face; take what it needs from the module that defines it"
               for a in graph if FACE in graph[a] and not any(_under(a, m) for m in ABOVE_THE_FACE)]
    assert not climbs, "\n".join(climbs)


def test_the_kubectl_replay_imports_run_down_its_layers():
    graph = import_graph()
    prefix = "itbench_dsl.runtime.kubectl."
    modules = sorted(m[len(prefix):] for m in graph if m.startswith(prefix))
    assert modules == sorted(KUBECTL), "runtime/kubectl/ has modules the layer list does not name (or lacks some)"
    climbs = [f"kubectl.{a} imports kubectl.{b[len(prefix):]}"
              for index, a in enumerate(KUBECTL) for b in graph[prefix + a]
              if b.startswith(prefix) and KUBECTL.index(b[len(prefix):]) >= index]
    assert not climbs, "\n".join(climbs)


def test_every_import_of_the_package_names_a_module_that_exists():
    """An import inside a function runs only when the function does: a module moved to another folder must
    not leave one behind that names its old place."""
    modules = _modules()
    missing = []
    for name, path in modules.items():
        tree = ast.parse(path.read_text("utf-8"), str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (node.level or (node.module or "").startswith(ROOT)):
                base = _resolve(name, path.name == "__init__.py", node)
                if base not in modules:
                    missing.append(f"{path.relative_to(PACKAGE.parent)}:{node.lineno}: no module {base}")
            elif isinstance(node, ast.Import):
                missing += [f"{path.relative_to(PACKAGE.parent)}:{node.lineno}: no module {alias.name}"
                            for alias in node.names if alias.name.startswith(ROOT) and alias.name not in modules]
    assert not missing, "\n".join(missing)


RUNTIME = "itbench_dsl.runtime"


def private_runtime_imports() -> list[str]:
    """Each import of a `_`-prefixed name from a runtime module by a module outside the runtime."""
    modules = _modules()
    found = []
    for name, path in modules.items():
        if _under(name, RUNTIME):
            continue
        tree = ast.parse(path.read_text("utf-8"), str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                base = _resolve(name, path.name == "__init__.py", node)
                if _under(base, RUNTIME):
                    found += [f"{path.relative_to(PACKAGE.parent)}:{node.lineno}: {base} {alias.name}"
                              for alias in node.names if alias.name.startswith("_")]
    return found


def test_the_compiler_imports_only_public_names_of_the_runtime():
    """The runtime is a public layer: what the compiler reads of it (the state model, runtime/state.py, and
    the grading, runtime/evaluator.py) is named without a leading `_`, so a private helper of the runtime can
    change without the compiler noticing."""
    found = private_runtime_imports()
    assert not found, "private runtime names imported from outside the runtime:\n" + "\n".join(found)


def test_the_cycle_finder_finds_a_cycle_hidden_in_a_function():
    """The finder itself: two modules that import each other, one of them late, are one cycle."""
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert cycles(graph) == [["a", "b", "c"]]
    tree = ast.parse("def f():\n    from .topology import KINDS\n")
    node = next(n for n in ast.walk(tree) if isinstance(n, ast.ImportFrom))
    assert _resolve("itbench_dsl.applications", False, node) == "itbench_dsl.topology"
