"""The evaluator file of a bundle: the runtime (`itbench_dsl/runtime/evaluator.py` with the state model,
`runtime/state.py`, in place of its import), the runtime modules its grading embeds, and the spec as one
line of data. Kept apart from the spec's derivation (backends/evaluator.py)
so that reading a bundle's evaluator (`spec_of`, `itbench run --dry-run`) loads no compiler."""

from __future__ import annotations

import functools
import json
import re
from importlib import resources

_MAIN = 'if __name__ == "__main__":\n    sys.exit(main(SPEC))\n'


_STATE_IMPORT = re.compile(r"^from \.state import \(.*?^\)\n", re.MULTILINE | re.DOTALL)


@functools.lru_cache(maxsize=1)
def runtime_source() -> str:
    """The runtime as one standalone file: evaluator.py, with state.py's text (its docstring dropped) where
    evaluator.py imports it, so the evaluator and the compiler read states with the same code."""
    runtime = resources.files("itbench_dsl").joinpath("runtime")
    evaluator = runtime.joinpath("evaluator.py").read_text(encoding="utf-8")
    state = runtime.joinpath("state.py").read_text(encoding="utf-8")
    body = state[state.index('"""', 3) + 3:].strip("\n")  # after the module's docstring
    found = _STATE_IMPORT.search(evaluator)
    if found is None:
        raise RuntimeError("runtime/evaluator.py does not import runtime/state.py as one `from .state import (...)`")
    return evaluator[:found.start()] + body + "\n" + evaluator[found.end():]


@functools.lru_cache(maxsize=None)
def package_source(module: str) -> str:
    """The source of one of the runtime's standard-library-only modules, embedded in evaluators: `module`
    is its path inside itbench_dsl/runtime/ without `.py` (`miniyaml`, `kyverno/policy`)."""
    path = resources.files("itbench_dsl").joinpath("runtime")
    for part in f"{module}.py".split("/"):
        path = path.joinpath(part)
    return path.read_text(encoding="utf-8")


def source_for_spec(spec: dict) -> str:
    """evaluator.py for a spec: the runtime, the embedded modules its grading needs, the spec as data."""
    text = json.dumps(spec, ensure_ascii=True, sort_keys=True, separators=(",", ":"))
    parts = [runtime_source().rstrip("\n") + "\n\n"]
    # the artefact the task class grades (ciso/tasks.py `TaskClass.artefact`), as the spec's contract says it
    kyverno = (((spec.get("ciso") or {}).get("contract") or {}).get("artefact")) == "kyverno"
    # a Pod Security enforce label a fault changed is judged by the pods it refuses: the matcher's
    # Pod Security Standards check (`pod_security_refused`)
    if kyverno or '"pod-security.kubernetes.io/enforce"' in text:
        # the Kyverno matcher and the YAML reader for the agent's policy, data here too: the matcher is the
        # modules of runtime/kyverno/ that policy evaluation needs, as (name, source) pairs in dependency
        # order, which the runtime runs as a package (they import each other relatively); the reader is
        # one module. Each runs in a module of its own (they may start with `from __future__`).
        from ..runtime.kyverno import EMBEDDED

        modules = "".join(f"    ({name!r}, {package_source(f'kyverno/{name}')!r}),\n" for name in EMBEDDED)
        parts.append(f"_KYVERNO_SOURCES = (\n{modules})\n")
    elif spec.get("mitigation") is not None:
        # the Pod Security checks alone, as a package of two modules: the safeguards judge the enforce label of
        # every namespace of the application by the pods it refuses (`admission_refused`)
        modules = "".join(f"    ({name!r}, {package_source(f'kyverno/{name}')!r}),\n" for name in ("outcomes", "pss"))
        parts.append(f"_PSS_SOURCES = (\n{modules})\n")
    if kyverno or '{"parse":"yaml"}' in text:  # a policy to read, or YAML held in a ConfigMap
        parts.append(f"_YAML_SOURCE = {package_source('miniyaml')!r}\n")
    parts.append(f"{_SPEC_PREFIX}{text!r})\n\n")
    parts.append(_MAIN)
    return "".join(parts)


_SPEC_PREFIX = "SPEC = json.loads("


def spec_of(source: str) -> dict | None:
    """The spec an evaluator.py grades against (None when the text holds no spec line): read back as
    data, never executed."""
    import ast as python_ast

    for line in source.splitlines():
        if line.startswith(_SPEC_PREFIX) and line.endswith(")"):
            try:
                return json.loads(python_ast.literal_eval(line[len(_SPEC_PREFIX):-1]))
            except (ValueError, SyntaxError):
                return None
    return None
