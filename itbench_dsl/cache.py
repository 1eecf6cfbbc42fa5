"""What does not change between runs, kept on disk: the parser's tables, the standard library's parsed
files and composed application topologies (applications._app_built), a mark that the package checked its standard fault library clean (faults/declared.load_stdlib), a
checked file's parse (parser.parse_kept), its objects' validation results (validate.validate_all), parsed
ConfigMap YAML (serialize), the compiled prompt templates (backends/prompt) and a scenario's self-validation
results. Every process would otherwise import Lark, jsonschema and PyYAML, build the parser and the validators,
parse the standard library and grade a scenario's corpus again, which is most of the time `itbench check FILE`
takes.

The cache is an optimisation only: an entry is keyed by everything it is made from (the package's version,
the source of the modules that shape it, the Python that runs it, the input bytes), written atomically, and any failure to read or
write it is ignored (the work is done again). Kinds with an entry per input (`store(..., keep=N)`) keep their
N most recent entries. `ITBENCH_CACHE_DIR` moves it; `ITBENCH_CACHE_DIR=""` turns it
off. The default folder is `$XDG_CACHE_HOME/itbench` (`~/.cache/itbench`).
"""

from __future__ import annotations

import functools
import hashlib
import os
import pickle
import sys
import tempfile
from importlib import resources
from pathlib import Path

from .version import __version__

# the modules whose code decides what a cached AST holds
_AST_SOURCES = ("ast.py", "parser.py", "source.py", "grammar/itbench.lark")


def folder() -> Path | None:
    """The cache folder, created on first use; None when caching is off or the folder cannot be made."""
    configured = os.environ.get("ITBENCH_CACHE_DIR")
    if configured is not None and not configured.strip():
        return None
    if configured:
        base = Path(configured)
    else:
        xdg = os.environ.get("XDG_CACHE_HOME")
        base = (Path(xdg) if xdg else Path.home() / ".cache") / "itbench"
    try:
        base.mkdir(parents=True, exist_ok=True)
    except OSError:
        return None
    return base if os.access(base, os.W_OK) else None


@functools.lru_cache(maxsize=1)
def code_digest() -> str:
    """A digest of the package's version and of the code that shapes a parsed file."""
    digest = hashlib.sha256(__version__.encode())
    package = resources.files("itbench_dsl")
    for name in _AST_SOURCES:
        try:
            digest.update(package.joinpath(name).read_bytes())
        except OSError:
            digest.update(b"?")
    return digest.hexdigest()[:24]


@functools.lru_cache(maxsize=1)
def package_digest() -> str:
    """A digest of the package's version and of every file of the package, by path, size, modification time
    and inode: what a result computed by much of the package (self-validation) depends on. Reading every
    file's bytes on each start would cost more than the cache saves; an edited or reinstalled file changes
    its size, time or inode."""
    digest = hashlib.sha256(__version__.encode())
    root = Path(str(resources.files("itbench_dsl")))

    def visit(folder: str) -> None:
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError:
            digest.update(b"?")
            return
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                if entry.name != "__pycache__":
                    visit(entry.path)
                continue
            try:
                stat = entry.stat()
            except OSError:
                digest.update(b"?")
                continue
            digest.update(f"{entry.path}\0{stat.st_size}\0{stat.st_mtime_ns}\0{stat.st_ino}\n".encode("utf-8",
                                                                                                      "surrogatepass"))

    visit(str(root))
    return digest.hexdigest()[:24]


@functools.lru_cache(maxsize=None)
def module_stamp(name: str) -> str:
    """Where the installed module `name` is and its files' sizes, modification times and inodes (those of its
    package's top folder), without importing it: what a result a third-party module computes depends on (an
    upgrade rewrites its files). "?" when it cannot be found."""
    import importlib.util

    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return "?"
    if spec is None or not spec.origin:
        return "?"
    parts = [spec.origin]
    try:
        for entry in sorted(os.scandir(os.path.dirname(spec.origin)), key=lambda e: e.name):
            if entry.is_file():
                stat = entry.stat()
                parts.append(f"{entry.name}\0{stat.st_size}\0{stat.st_mtime_ns}\0{stat.st_ino}")
    except OSError:
        parts.append("?")
    return hashlib.sha256("\n".join(parts).encode("utf-8", "surrogatepass")).hexdigest()[:24]


def path_for(kind: str, *parts: bytes | str) -> Path | None:
    """Where the entry of `kind` made from `parts` lives (None when caching is off)."""
    base = folder()
    if base is None:
        return None
    # the Python too: an entry is a pickle of this interpreter's objects (another version may read it differently)
    digest = hashlib.sha256(f"{code_digest()}\0{sys.implementation.cache_tag}\0{sys.version}".encode())
    for part in parts:
        digest.update(part if isinstance(part, bytes) else part.encode("utf-8", "surrogatepass"))
        digest.update(b"\0")
    return base / f"{kind}-{digest.hexdigest()[:32]}.pickle"


def load(path: Path | None):
    """The object stored at `path`, or None."""
    if path is None:
        return None
    try:
        with open(path, "rb") as handle:
            return pickle.load(handle)
    except Exception:  # noqa: BLE001 - a missing, partial or stale entry is rebuilt
        return None


def store(path: Path | None, value, keep: int | None = None) -> None:
    """Write `value` at `path` atomically (a reader never sees half an entry); failures are ignored. With
    `keep`, the entries of the same kind beyond the `keep` most recently written are removed, on one store in
    about keep/16 (chosen by the entry's digest; listing a large folder on every store would cost more than
    an entry saves): the folder holds at most about keep entries of the kind, and a few more between prunes."""
    if path is None:
        return
    if keep is not None and _prune_due(path.name, keep):
        prune(path.parent, path.name.partition("-")[0], keep - 1)
    try:
        handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
        with os.fdopen(handle, "wb") as out:
            pickle.dump(value, out, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(temporary, path)
    except Exception:  # noqa: BLE001 - a cache that cannot be written is only slower
        try:
            os.unlink(temporary)
        except (OSError, UnboundLocalError):
            pass


def _prune_due(name: str, keep: int) -> bool:
    digest = name.partition("-")[2][:8]
    try:
        return int(digest, 16) % max(1, keep // 16) == 0
    except ValueError:  # not a path_for name: prune every time
        return True


def prune(base: Path, kind: str, keep: int) -> None:
    """Remove the entries of `kind` in `base` beyond the `keep` most recently written."""
    try:
        entries = [e for e in os.scandir(base) if e.name.startswith(kind + "-") and e.name.endswith(".pickle")]
        if len(entries) <= keep:
            return
        entries.sort(key=lambda e: e.stat().st_mtime_ns, reverse=True)
        for entry in entries[max(keep, 0):]:
            os.unlink(entry.path)
    except OSError:  # another process pruned first, or the folder went away: a later store prunes again
        pass
