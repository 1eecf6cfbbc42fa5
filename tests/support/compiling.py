"""Helpers the test modules share: the repository's folders, compiling text, reading a bundle's YAML.

Test modules import them by name (`from support.compiling import compile_text`): pytest puts tests/ on the
import path (tests/conftest.py is there).
"""

from __future__ import annotations

from pathlib import Path

import yaml

from itbench_dsl.compiler import CompileResult, compile_source
from itbench_dsl.diagnostics import Diagnostics, render_human

REPO = Path(__file__).resolve().parents[2]
SCENARIOS = REPO / "scenarios"
REFERENCE = REPO.parent / "shared" / "reference"  # real data, beside the checkout in CI; tests skip without it


def compile_text(text: str | bytes, path: str = "input.itb", validate: bool = True) -> tuple[CompileResult, Diagnostics]:
    """Compile `text` as the file `path`: the result and every diagnostic."""
    data = text if isinstance(text, bytes) else text.encode("utf-8")
    diags = Diagnostics()
    return compile_source(data, path, diags, validate=validate), diags


def compile_files(text: str | bytes, path: str = "input.itb", validate: bool = True) -> tuple[dict[str, bytes], Diagnostics]:
    """Compile `text`: the bundle's files (empty with errors) and every diagnostic."""
    result, diags = compile_text(text, path, validate)
    return result.files, diags


def compile_ok(text: str | bytes, path: str = "input.itb", clean: bool = False) -> CompileResult:
    """Compile `text`, which must have no error (and, with `clean`, no diagnostic at all)."""
    result, diags = compile_text(text, path)
    assert not (diags.items if clean else diags.errors()), render_human(diags, color=False)
    assert result.files
    return result


def yaml_documents(files: dict[str, bytes], name: str) -> list[dict]:
    """The YAML documents of one file of a bundle (none when the bundle has no such file)."""
    return [d for d in yaml.safe_load_all(files[name].decode("utf-8")) if d] if name in files else []


def in_itbench_names(ours: dict, theirs: dict, scenario) -> dict:
    """`ours` (an ITBench file the port wrote, loaded) with the objects the port's faults create named as
    ITBench's own files name them (`importer.compat.renamed_objects`): a port names a created object so that
    its name does not tell the fault, and is otherwise equal to ITBench's file."""
    from itbench_dsl.backends.itbench import with_names
    from itbench_dsl.importer.compat import created_objects, renamed_objects

    renamed = renamed_objects(created_objects(scenario), [ours], [theirs])
    return with_names(ours, {new: old for old, (_, new) in renamed.items()})
