"""itbench: a language and compiler for ITBench scenarios.

The package's public face, for code that uses the toolchain as a library (the command line is
`itbench`, in `itbench_dsl/cli/`):

    import itbench_dsl as itb

    document, diagnostics = itb.parse(text, "checkout.itb")        # the AST, None when it has errors
    checked = itb.check(text, "checkout.itb")                      # all `itbench check FILE` reports
    result, diagnostics = itb.compile(text, "checkout.itb")        # result.files: the bundle, by path
    verdict = itb.evaluate("out/checkout", task="mitigate", state=state)   # a bundle's verdict

Each function imports what it needs when it is called, so importing the package costs nothing
(the command line starts fast). Anything else is internal: its names may change.
"""

from __future__ import annotations

from .version import __version__

__all__ = ["__version__", "check", "compile", "evaluate", "parse"]


def _data(text: str | bytes) -> bytes:
    return text if isinstance(text, bytes) else text.encode("utf-8", "surrogatepass")


def parse(text: str | bytes, path: str = "<string>"):
    """(the document's AST or None, its diagnostics): parsing alone, nothing checked."""
    from .diagnostics import Diagnostics
    from .parser import parse_bytes

    diagnostics = Diagnostics()
    document = parse_bytes(_data(text), path, diagnostics)
    return document, diagnostics


def check(text: str | bytes, path: str = "<string>", hints: str = "none"):
    """Everything `itbench check` reports for one file (checking.FileCheck): its diagnostics (errors,
    self-validation, lint), the compile result (AST, source map, IR, bundle) and, when clean, the
    checked scenario (`.scenario`)."""
    from .checking import check_source

    return check_source(_data(text), path, hints)


def compile(text: str | bytes, path: str = "<string>", hints: str = "none"):  # noqa: A001 - the verb of the API
    """(compiler.CompileResult, its diagnostics): the bundle's files are `result.files` (empty when there
    are errors), `result.scenario` the IR."""
    from .compiler import compile_source
    from .diagnostics import Diagnostics

    diagnostics = Diagnostics()
    result = compile_source(_data(text), path, diagnostics, hints=hints)
    return result, diagnostics


def evaluate(bundle, *, answer: dict | None = None, state: dict | None = None, task: str | None = None,
             artifact: tuple | None = None, opa_result: dict | None = None, injected_at: str | None = None,
             answers: dict | None = None) -> dict:
    """A verdict (docs/evaluator.md) of `bundle`: a compiled bundle's folder, a compile result, or an
    evaluator spec. Unusable inputs raise the runtime's InputError, as the standalone evaluator exits 2.
    `answers` gives each task graded on an answer its own ({task: answer}); `injected_at` (RFC 3339) is
    when the fault was injected, what the detect task times against."""
    from pathlib import Path

    from .backends.evaluator import evaluator_spec, spec_of
    from .runtime.evaluator import evaluate as grade

    if isinstance(bundle, dict):
        spec = bundle
    elif isinstance(bundle, (str, Path)):
        spec = spec_of((Path(bundle) / "evaluator.py").read_text(encoding="utf-8"))
        if spec is None:
            raise ValueError(f"{bundle}: its evaluator.py holds no spec")
    elif getattr(bundle, "scenario", None) is not None:
        spec = evaluator_spec(bundle.scenario)
    else:
        raise TypeError("evaluate takes a bundle folder, a compile result or an evaluator spec")
    return grade(spec, answer, state, task=task, artifact=artifact, opa_result=opa_result, injected_at=injected_at,
                 answers=answers)
