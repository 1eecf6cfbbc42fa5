"""Writing outputs to disk atomically: bundle folders, the other output folders, single files.

Every writer of the command line goes through here. A folder is first written to a hidden staging
folder beside its destination (`.NAME.XXXX`), then renamed into place; a previous folder at the
destination is first moved into a private hidden holder (`.NAME.old.XXXX/`) and deleted once the
new one is in place. So:

- a failure at any point leaves either the previous folder or the new one, never a half-written
  one, and no staging or holder folder (they are removed on errors, on Ctrl-C, and on SIGTERM
  while a folder is being written; only SIGKILL or a power loss can leave one);
- concurrent writers of the same destination each succeed or fail cleanly, and the last complete
  folder to be renamed into place wins (a writer whose rename loses the race moves the winner
  aside and tries again, a bounded number of times);
- something at the destination that this program did not write (a plain file, a symbolic link, a
  folder without the writer's marker, `bundle.lock` for bundles) is refused with an error naming
  its path, never replaced.

A single file is written to a unique temporary file beside it, then `os.replace`d into place.
Only the standard library is imported: every command module may import this one.
"""

from __future__ import annotations

import contextlib
import errno
import os
import random
import shutil
import signal
import stat
import tempfile
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

LOCK = "bundle.lock"  # written into every compiled bundle: it marks a folder as one `itbench compile` wrote
ATTEMPTS = 64  # renames a writer tries before giving up on a destination other writers keep replacing


class BundleError(Exception):
    """The output could not be written (I/O, a path that would leave the output folder, or a
    destination this program did not write)."""


def safe_relative(name: str) -> bool:
    parts = Path(name).parts
    return bool(parts) and not Path(name).is_absolute() and all(p not in ("..", ".", "") for p in parts) and "\\" not in name


def _reason(exc: OSError) -> str:
    return exc.strerror or str(exc)


def is_bundle(folder: Path) -> bool:
    """`folder` holds a `bundle.lock` (a regular file): a bundle `itbench compile` wrote."""
    return _regular_file(folder / LOCK)


def same_layout(files: dict[str, bytes]) -> Callable[[Path], bool]:
    """An owner test for outputs without `bundle.lock` (ITBench's own layout): a folder holds only
    top-level entries that the new files write again, and at least one of them as a regular file."""
    tops = {part for name in files for part in Path(name).parts[:1]}
    leaves = {name for name in files if len(Path(name).parts) == 1}

    def ours(folder: Path) -> bool:
        entries = os.listdir(folder)
        return set(entries) <= tops and any(_regular_file(folder / e) for e in entries if e in leaves)

    return ours


def _regular_file(path: Path) -> bool:
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False


def write_bundle(out_dir: Path, bundle_name: str, files: dict[str, bytes],
                 ours: Callable[[Path], bool] | None = None) -> Path:
    """Write `files` as `out_dir/bundle_name/` and return that path.

    An existing `out_dir/bundle_name` is replaced only when it is an empty folder or one `ours`
    accepts: by default one holding `bundle.lock` when `files` has one (a compiled bundle), else
    one of the same layout (`same_layout`)."""
    if not safe_relative(bundle_name) or len(Path(bundle_name).parts) != 1:
        raise BundleError(f"bundle name `{bundle_name}` is not a plain folder name")
    if ours is None:
        ours = is_bundle if LOCK in files else same_layout(files)
    out_dir = Path(out_dir)
    what = "a bundle folder itbench wrote (it has no bundle.lock)" if ours is is_bundle else "a folder itbench wrote"
    return write_folder(out_dir / bundle_name, files, ours, what)


def write_folder(final: Path, files: dict[str, bytes], ours: Callable[[Path], bool],
                 what: str = "a folder itbench wrote") -> Path:
    """Make `final` a folder holding exactly `files` (relative path -> bytes), atomically.

    An existing `final` must be an empty folder or one `ours(folder)` accepts; anything else
    (a file, a symbolic link, another folder) is refused with BundleError, described as not
    being `what`."""
    final = Path(final)
    name = final.name
    if name in ("", ".", ".."):
        raise BundleError(f"{final}: not a plain folder name")
    for relative in files:
        if not safe_relative(relative):
            raise BundleError(f"output path `{relative}` would leave the bundle folder")
    parent = final.parent
    _refuse_foreign(final, ours, what)  # before anything is written: the clear error
    with _terminate_cleanly():
        try:
            parent.mkdir(parents=True, exist_ok=True)
            staging = Path(tempfile.mkdtemp(prefix=f".{name}.", dir=parent))
        except OSError as exc:
            raise BundleError(f"cannot create {parent}: {_reason(exc)}") from exc
        try:
            _fill(staging, files)
            os.chmod(staging, 0o755)
            _move_into_place(staging, final, ours, what)
        except OSError as exc:
            raise BundleError(f"cannot write {final}: {_reason(exc)}") from exc
        finally:  # errors, KeyboardInterrupt, SystemExit from SIGTERM: no staging folder stays
            if os.path.lexists(staging):
                shutil.rmtree(staging, ignore_errors=True)
    return final


def _fill(staging: Path, files: dict[str, bytes]) -> None:
    root = staging.resolve()
    for relative, content in sorted(files.items()):
        target = (staging / relative).resolve()
        if root not in target.parents:
            raise BundleError(f"output path `{relative}` would leave the bundle folder")
        target.parent.mkdir(parents=True, exist_ok=True)
        with open(target, "xb") as handle:  # a fresh file: never through a link planted in the staging folder
            handle.write(content)


def _refuse_foreign(final: Path, ours: Callable[[Path], bool], what: str) -> None:
    """BundleError unless `final` is absent, an empty folder, or a folder `ours` accepts.

    Other writers may move `final` away while we look: what vanishes meanwhile counts as absent
    (the rename step checks again, on a private copy)."""
    try:
        before = os.lstat(final)
    except FileNotFoundError:
        return
    except OSError as exc:
        raise BundleError(f"{final}: cannot read: {_reason(exc)}") from exc
    if stat.S_ISLNK(before.st_mode):
        raise BundleError(f"{final}: is a symbolic link, not {what}; remove it or choose another output folder")
    if not stat.S_ISDIR(before.st_mode):
        raise BundleError(f"{final}: exists and is not a folder; remove it or choose another output folder")
    try:
        accepted = not os.listdir(final) or ours(final)
    except FileNotFoundError:
        return
    except OSError as exc:
        raise BundleError(f"{final}: cannot read: {_reason(exc)}") from exc
    if not accepted and same_entry(final, before):
        raise BundleError(f"{final}: exists and is not {what}; it is never replaced: remove it or choose "
                          "another output folder")


def foreign_in(folder: Path, foreign: Callable[[Path], list[str]]) -> list[str]:
    """`foreign(folder)`: the entries of `folder` that its writer did not write, for a clear
    error before anything is written. A folder that is absent, or that another writer moves
    away while it is read, has none: the rename step checks again, on a private copy. Other
    OSErrors propagate."""
    try:
        before = os.lstat(folder)
        found = foreign(folder)
    except FileNotFoundError:
        return []
    return found if found and same_entry(folder, before) else []


def same_entry(path: Path, before: os.stat_result) -> bool:
    try:
        now = os.lstat(path)
    except OSError:
        return False
    return (now.st_dev, now.st_ino) == (before.st_dev, before.st_ino)


def _move_into_place(staging: Path, final: Path, ours: Callable[[Path], bool], what: str) -> None:
    """Rename `staging` to `final`; a folder already there is moved into a private holder first.

    rename(2) of a folder succeeds onto an absent or empty folder and fails (ENOTEMPTY, EEXIST)
    onto a full one, so a writer never overwrites what it did not check: when another writer's
    folder arrives between our move and our rename, the rename fails and we go round again, and
    the last writer to rename wins. What is moved aside is checked again in the private holder,
    where no other writer can change it."""
    holder: Path | None = None
    previous: Path | None = None
    keep_holder = placed = False
    try:
        for attempt in range(ATTEMPTS):
            try:
                os.rename(staging, final)
                placed = True
                return
            except OSError as exc:
                if exc.errno not in (errno.ENOTEMPTY, errno.EEXIST, errno.ENOTDIR, errno.EISDIR):
                    raise
            _refuse_foreign(final, ours, what)
            if holder is None:
                holder = Path(tempfile.mkdtemp(prefix=f".{final.name}.old.", dir=final.parent))
            previous = holder / str(attempt)
            try:
                os.rename(final, previous)
            except FileNotFoundError:  # another writer moved it away first
                continue
            if not _ours_or_empty(previous, ours):  # it changed since we looked: put it back, refuse
                with contextlib.suppress(OSError):
                    os.rename(previous, final)
                if os.path.lexists(previous):
                    keep_holder = True  # never delete what we did not write
                    raise BundleError(f"{final}: was replaced while itbench wrote it by something itbench did "
                                      f"not write; that is kept at {previous}")
                raise BundleError(f"{final}: exists and is not {what}; it is never replaced")
        raise BundleError(f"{final}: other writers kept replacing it; gave up after {ATTEMPTS} attempts")
    finally:
        if not placed and previous is not None and os.path.lexists(previous) and not os.path.lexists(final):
            with contextlib.suppress(OSError):  # interrupted between the two renames: the previous folder goes back
                os.rename(previous, final)
        if holder is not None and not (keep_holder and previous is not None and os.path.lexists(previous)):
            shutil.rmtree(holder, ignore_errors=True)


def _ours_or_empty(folder: Path, ours: Callable[[Path], bool]) -> bool:
    try:
        if os.path.islink(folder) or not os.path.isdir(folder):
            return False
        return not os.listdir(folder) or ours(folder)
    except OSError:
        return False


def write_file(path: Path, data: bytes) -> None:
    """Replace the file `path` with `data` atomically (a unique temporary file beside it, renamed).

    A symbolic link is followed (its target is replaced, the link stays); a folder or a device
    at `path` is refused. A new file gets the usual permissions (0666 less the umask), an
    existing one keeps its own."""
    path = Path(path)
    if os.path.islink(path):
        path = Path(os.path.realpath(path))
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        mode = None
    except OSError as exc:
        raise BundleError(f"{path}: cannot write: {_reason(exc)}") from exc
    if mode is not None and not stat.S_ISREG(mode):
        raise BundleError(f"{path}: exists and is not a regular file; choose another output file")
    with _terminate_cleanly():
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise BundleError(f"{path}: cannot write: {_reason(exc)}") from exc
        temporary = None
        try:
            for _ in range(100):
                candidate = path.with_name(f".{path.name}.{random.getrandbits(40):010x}.tmp")
                try:
                    fd = os.open(candidate, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
                except FileExistsError:
                    continue
                temporary = candidate
                break
            else:
                raise BundleError(f"{path}: cannot write: no free temporary name beside it")
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
                if mode is not None:
                    os.fchmod(handle.fileno(), stat.S_IMODE(mode))
            os.replace(temporary, path)
            temporary = None
        except OSError as exc:
            raise BundleError(f"{path}: cannot write: {_reason(exc)}") from exc
        finally:
            if temporary is not None:
                with contextlib.suppress(OSError):
                    os.unlink(temporary)


@contextlib.contextmanager
def _terminate_cleanly() -> Iterator[None]:
    """While writing, SIGTERM (and SIGHUP) exit through SystemExit, so `finally` blocks remove the
    staging and holder folders. Only in the main thread, and only where the signal has its default
    action (a program that handles it itself keeps its handler)."""
    installed: dict[int, object] = {}
    if threading.current_thread() is threading.main_thread():
        for signum in (signal.SIGTERM, getattr(signal, "SIGHUP", None)):
            if signum is None:
                continue
            try:
                if signal.getsignal(signum) is signal.SIG_DFL:
                    installed[signum] = signal.signal(signum, _exit_on_signal)
            except (ValueError, OSError):
                pass
    try:
        yield
    finally:
        for signum, previous in installed.items():
            with contextlib.suppress(ValueError, OSError):
                signal.signal(signum, previous)


def _exit_on_signal(signum, frame) -> None:
    raise SystemExit(128 + signum)
