#!/usr/bin/env python3
"""Build the ecosystem's own command-line tools (OPA, the Kyverno CLI, Chainsaw) from their Go modules.

    python tools/build_ecosystem.py [TOOL...] [--print-path] [--cache-dir DIR]

Each tool is the `tool` of a small Go module under `tools/ecosystem/<tool>/` whose go.mod and
go.sum pin every version (one module per tool, so that one tool's upgrade never moves the other's
dependencies). `go build` (symbols and DWARF left out) compiles it from the Go module proxy into
`$XDG_CACHE_HOME/itbench/ecosystem/<hash>/bin/<binary>`, where the hash covers the module's
go.mod and go.sum, the tool's package, the build flags and the Go version: a second run finds the
binary and builds nothing, a changed pin builds anew in another folder. Nothing prebuilt is
downloaded.

`--print-path` prints, for each tool, the path its binary has (or will have) and builds
nothing; tests use `binary_path()` the same way and skip when the file is absent.
`--timeout SECONDS` bounds the builds together (a stopped build resumes from Go's caches next time).
Exit 0 when every requested tool is built, 1 when a build fails or overruns, 2 when Go is absent.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent / "ecosystem"
# -s -w: no symbol table or DWARF (the Kyverno CLI is 382 MiB with them)
BUILD_FLAGS = ("-ldflags=-s -w",)


@dataclass(frozen=True)
class Tool:
    name: str       # the folder under tools/ecosystem/ and the name users give
    package: str    # the Go package of the command
    binary: str     # the file name of the built command


TOOLS = {  # built in this order: OPA, which grading uses (docs/evaluator.md) and builds fastest, first
    "opa": Tool("opa", "github.com/open-policy-agent/opa", "opa"),
    "kyverno": Tool("kyverno", "github.com/kyverno/kyverno/cmd/cli/kubectl-kyverno", "kyverno"),
    "chainsaw": Tool("chainsaw", "github.com/kyverno/chainsaw", "chainsaw"),
}


class BuildError(Exception):
    """A build that cannot run or failed; the message says what to do."""


def go_binary() -> str | None:
    return shutil.which("go")


def go_version(go: str | None = None) -> str | None:
    go = go or go_binary()
    if not go:
        return None
    try:
        out = subprocess.run([go, "env", "GOVERSION"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out.stdout.strip() or None


def cache_root() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "itbench" / "ecosystem"


def module_dir(tool: Tool) -> Path:
    return ROOT / tool.name


def pinned_version(tool: Tool) -> str:
    """The version go.mod pins for the module that provides the tool's package."""
    best = ""
    for line in (module_dir(tool) / "go.mod").read_text().splitlines():
        parts = line.strip().split()
        if len(parts) >= 2 and tool.package.startswith(parts[0]) and len(parts[0]) > len(best.split(" ")[0]):
            best = f"{parts[0]} {parts[1]}"
    return best


def build_hash(tool: Tool, version: str | None) -> str:
    digest = hashlib.sha256()
    for part in (tool.package, version or "no-go", *BUILD_FLAGS,
                 (module_dir(tool) / "go.mod").read_bytes(), (module_dir(tool) / "go.sum").read_bytes()):
        digest.update(part if isinstance(part, bytes) else part.encode())
        digest.update(b"\0")
    return digest.hexdigest()[:16]


def binary_path(name: str, cache: Path | None = None, version: str | None = None) -> Path:
    """Where the tool's binary is (or would be) for the pinned module and this machine's Go."""
    tool = TOOLS[name]
    version = version if version is not None else go_version()
    return (cache or cache_root()) / build_hash(tool, version) / "bin" / tool.binary


def build(name: str, cache: Path | None = None, out=sys.stderr, timeout: float | None = None) -> Path:
    """Build one tool unless its binary is already there; returns the binary's path. A build still
    running after `timeout` seconds is stopped with everything it started (Go's caches keep what
    was compiled, so the next build resumes)."""
    tool = TOOLS[name]
    go = go_binary()
    if not go:
        raise BuildError(f"{name}: Go is not installed; install Go (go.dev) to build the ecosystem's tools")
    version = go_version(go)
    target = binary_path(name, cache, version)
    if target.is_file() and os.access(target, os.X_OK):
        print(f"{name}: up to date ({pinned_version(tool)}) at {target}", file=out, flush=True)
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(f"{target.name}.partial-{os.getpid()}")  # two builds never share it
    print(f"{name}: building {pinned_version(tool)} with {version} (a cold build downloads and compiles "
          f"the whole module graph; later runs reuse Go's caches) ...", file=out, flush=True)
    started = time.monotonic()
    proc = subprocess.Popen([go, "build", *BUILD_FLAGS, "-o", str(partial), tool.package],
                            cwd=module_dir(tool), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            start_new_session=True)
    try:
        output, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        partial.unlink(missing_ok=True)
        raise BuildError(f"{name}: go build {tool.package} did not finish in {timeout:.0f} s; stopped "
                         "(run again: Go's caches keep what was compiled)") from None
    if proc.returncode != 0:
        partial.unlink(missing_ok=True)
        tail = "\n".join(output.strip().splitlines()[-20:])
        raise BuildError(f"{name}: go build {tool.package} failed (exit {proc.returncode}):\n{tail}")
    partial.replace(target)
    size = target.stat().st_size / 2**20
    print(f"{name}: built in {time.monotonic() - started:.0f} s ({size:.0f} MiB) at {target}", file=out, flush=True)
    return target


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("tools", nargs="*", metavar="TOOL",
                        help=f"tools to build (default: all of {', '.join(TOOLS)})")
    parser.add_argument("--print-path", action="store_true", help="print each binary's path; build nothing")
    parser.add_argument("--cache-dir", type=Path, help=f"cache folder (default {cache_root()})")
    parser.add_argument("--timeout", type=float, help="stop when the builds together take longer (seconds)")
    args = parser.parse_args(argv)
    names = args.tools or list(TOOLS)
    unknown = [name for name in names if name not in TOOLS]
    if unknown:
        parser.error(f"unknown tool {unknown[0]!r} (choose from {', '.join(TOOLS)})")
    if args.print_path:
        for name in names:
            print(binary_path(name, args.cache_dir))
        return 0
    if not go_binary():
        print("build_ecosystem: Go is not installed; install Go (go.dev) to build "
              + ", ".join(names), file=sys.stderr)
        return 2
    status = 0
    deadline = time.monotonic() + args.timeout if args.timeout else None
    for name in names:
        left = None if deadline is None else max(1.0, deadline - time.monotonic())
        try:
            build(name, args.cache_dir, timeout=left)
        except BuildError as err:
            print(f"build_ecosystem: {err}", file=sys.stderr)
            status = 1
    return status


if __name__ == "__main__":
    sys.exit(main())
