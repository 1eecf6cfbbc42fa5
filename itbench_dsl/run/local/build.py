"""Building the local control plane's binary from the Go module in `go/`, cached.

The binary lands in `<cache>/localcluster/<digest>/localcluster`, where `<cache>` is
`$ITBENCH_CACHE_DIR`, else `$XDG_CACHE_HOME/itbench`, else `~/.cache/itbench`, and `<digest>` is the
sha256 of go.mod, go.sum, the Go sources and the linker flags: a changed source builds anew (and
the binaries of other digests are removed then), an unchanged one is built once. Concurrent
builds of the same digest wait for each other (a lock file), and a binary is renamed into place
only when complete. Go's own caches (GOCACHE, GOMODCACHE) apply as usual.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Callable


class LocalClusterError(Exception):
    """Building, starting or stopping the local control plane failed; the message says what to do."""


GO_DIR = Path(__file__).resolve().parent / "go"
BINARY = "localcluster"
MIN_GO = (1, 26)
BUILD_TIMEOUT = 90 * 60.0  # seconds; a cold build on 2 cores takes a fraction of this
PROGRESS_EVERY = 20.0  # seconds between progress lines while Go builds

NO_GO = (
    "Go is not installed (no `go` on PATH): the local control plane (kube-apiserver, controller manager, "
    "scheduler, kwok, kubectl, etcd) is built from its Go modules on first use. Install Go {need} or newer "
    "and try again (set ITBENCH_GO to the `go` binary if it is not on PATH), or use a cluster you already "
    "have: `itbench run BUNDLE --kubeconfig FILE`."
)


def _say(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def find_go() -> str:
    """The `go` command: $ITBENCH_GO, else `go` on PATH; its version must be at least MIN_GO."""
    need = ".".join(map(str, MIN_GO))
    go = os.environ.get("ITBENCH_GO") or shutil.which("go")
    if not go:
        raise LocalClusterError(NO_GO.format(need=need))
    try:
        out = subprocess.run([go, "env", "GOVERSION"], capture_output=True, text=True, timeout=60,
                             stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise LocalClusterError(f"{go}: cannot run it ({exc}); " + NO_GO.format(need=need)) from exc
    match = re.match(r"go(\d+)\.(\d+)", out.stdout.strip())
    if out.returncode != 0 or not match:
        raise LocalClusterError(f"{go} env GOVERSION failed: {(out.stderr or out.stdout).strip()[-500:]}")
    if (int(match[1]), int(match[2])) < MIN_GO:
        raise LocalClusterError(f"{go} is {out.stdout.strip()}; the local control plane needs Go {need} or newer. "
                                f"Install it, or use a cluster you already have (--kubeconfig FILE).")
    return go


def sources() -> list[Path]:
    """The files the binary is built from, in a fixed order."""
    files = [GO_DIR / "go.mod", GO_DIR / "go.sum"] + sorted(GO_DIR.glob("*.go"))
    missing = [str(f) for f in files if not f.is_file()]
    if missing:
        raise LocalClusterError(f"the Go module of the local control plane is incomplete: missing {', '.join(missing)}")
    return files


def digest() -> str:
    """sha256 over the names and contents of `sources()` and the linker flags."""
    h = hashlib.sha256(_version_flags().encode() + b"\0")
    for path in sources():
        data = path.read_bytes()
        h.update(f"{path.name}\0{len(data)}\0".encode())
        h.update(data)
    return h.hexdigest()


def cache_dir() -> Path:
    root = os.environ.get("ITBENCH_CACHE_DIR")
    if root:
        return Path(root)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "itbench"


def binary_path() -> Path:
    """Where the binary of the current sources is (or will be) built."""
    return cache_dir() / "localcluster" / digest()[:24] / BINARY


def versions() -> dict[str, str]:
    """The pinned versions of the components' modules, read from go.mod."""
    text = (GO_DIR / "go.mod").read_text()
    found = {}
    for module in ("k8s.io/kubernetes", "sigs.k8s.io/kwok", "go.etcd.io/etcd/server/v3"):
        match = re.search(rf"^\s*{re.escape(module)} (v\S+)", text, re.M)
        if match:
            found[module] = match[1]
    return found


def _version_flags() -> str:
    """The linker flags that give the components their release version, as Kubernetes' own build does
    (`/version`, `kubectl version`); without them they report v0.0.0-master."""
    version = versions().get("k8s.io/kubernetes", "")
    match = re.fullmatch(r"v(\d+)\.(\d+)\.\d+", version)
    if not match:
        return ""
    flags = []
    for package in ("k8s.io/component-base/version", "k8s.io/client-go/pkg/version"):
        flags += [f"-X {package}.gitVersion={version}", f"-X {package}.gitMajor={match[1]}",
                  f"-X {package}.gitMinor={match[2]}", f"-X {package}.gitTreeState=clean"]
    return " ".join(flags)


def build(*, timeout: float = BUILD_TIMEOUT, say: Callable[[str], None] = _say, force: bool = False) -> Path:
    """The binary, built first when the cache has none for these sources. Progress goes to `say`."""
    target = binary_path()
    if target.is_file() and os.access(target, os.X_OK) and not force:
        return target
    go = find_go()
    target.parent.mkdir(parents=True, exist_ok=True)
    with open(target.parent / "build.lock", "w") as lock:
        started = time.monotonic()
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            say(f"another build of the local control plane is under way ({target.parent}); waiting for it")
            while True:
                try:
                    fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() - started > timeout:
                        raise LocalClusterError(f"waited {timeout:.0f}s for another build of {target}; "
                                                f"remove {target.parent / 'build.lock'} if no build is running")
                    time.sleep(1.0)
        if target.is_file() and os.access(target, os.X_OK) and not force:
            return target
        _run_build(go, target, timeout, say)
    return target


def _run_build(go: str, target: Path, timeout: float, say: Callable[[str], None]) -> None:
    pinned = ", ".join(f"{m} {v}" for m, v in versions().items())
    say(f"building the local control plane (etcd, kube-apiserver, kube-controller-manager, kube-scheduler, "
        f"kwok, kubectl) from {pinned}")
    say(f"  into {target}; a first build downloads the modules and compiles for several minutes, later runs "
        f"use the cache")
    partial = Path(tempfile.mkdtemp(prefix=".build-", dir=target.parent)) / BINARY
    env = dict(os.environ)
    env["GOFLAGS"] = (env.get("GOFLAGS", "") + " -mod=readonly").strip()
    command = [go, "build", "-v", "-trimpath", "-buildvcs=false", f"-ldflags=-s -w {_version_flags()}",
               "-o", str(partial), "."]
    started = time.monotonic()
    tail: list[str] = []
    counts = {"packages": 0, "downloads": 0}
    last = {"package": ""}

    def read(stream) -> None:
        for line in stream:
            line = line.rstrip("\n")
            if line.startswith("go: downloading "):
                counts["downloads"] += 1
            elif line and not line.startswith(("go: ", "#")) and " " not in line:
                counts["packages"] += 1
                last["package"] = line
            tail.append(line)
            del tail[:-40]

    try:
        process = subprocess.Popen(command, cwd=GO_DIR, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                   stderr=subprocess.STDOUT, text=True)  # our process group: our signals reach it
    except OSError as exc:
        raise LocalClusterError(f"cannot run {go}: {exc}") from exc
    reader = threading.Thread(target=read, args=(process.stdout,), daemon=True)
    reader.start()
    try:
        while True:
            try:
                process.wait(timeout=PROGRESS_EVERY)
                break
            except subprocess.TimeoutExpired:
                elapsed = time.monotonic() - started
                if elapsed > timeout:
                    _kill(process)
                    raise LocalClusterError(f"the build of the local control plane took over {timeout:.0f}s and "
                                            f"was stopped; last output:\n" + "\n".join(tail[-15:]))
                say(f"  building: {_clock(elapsed)} elapsed, {counts['packages']} packages compiled"
                    + (f", {counts['downloads']} modules downloaded" if counts["downloads"] else "")
                    + (f" (last: {last['package']})" if last["package"] else ""))
    except BaseException:
        _kill(process)
        shutil.rmtree(partial.parent, ignore_errors=True)
        raise
    reader.join(timeout=10)
    elapsed = time.monotonic() - started
    if process.returncode != 0:
        shutil.rmtree(partial.parent, ignore_errors=True)
        raise LocalClusterError(f"`go build` of the local control plane failed (exit {process.returncode}) after "
                                f"{_clock(elapsed)}, in {GO_DIR}:\n" + "\n".join(tail[-25:]))
    os.replace(partial, target)
    shutil.rmtree(partial.parent, ignore_errors=True)
    _prune(target.parent)
    size = target.stat().st_size / 2**20
    say(f"built the local control plane in {_clock(elapsed)}: {target} ({size:.0f} MiB)")


def _prune(keep: Path) -> None:
    """Remove the binaries of other sources (earlier versions of the package): ~190 MiB each. One that
    another process is building (its lock held) stays."""
    for folder in keep.parent.iterdir():
        if folder == keep or not folder.is_dir():
            continue
        try:
            with open(folder / "build.lock", "a") as lock:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
                shutil.rmtree(folder, ignore_errors=True)
        except OSError:
            continue


def _kill(process: subprocess.Popen) -> None:
    try:
        process.kill()
    except (ProcessLookupError, PermissionError):
        pass
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        pass


def _clock(seconds: float) -> str:
    minutes, secs = divmod(int(seconds), 60)
    return f"{minutes}m{secs:02d}s" if minutes else f"{seconds:.1f}s"
