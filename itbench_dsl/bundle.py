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
  folder that is not recognised strictly as an earlier output: a record of this program that lists
  every file of the folder, `bundle.lock` for bundles and `index.json` for variants, or only files the
  writer writes again) is refused with an error naming its path and what is in the way, never replaced.

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


WALK_LIMIT = 100_000  # entries of an existing output folder looked at before it is refused as not ours
RECORD_LIMIT = 64 * 1024 * 1024  # bytes of a record (bundle.lock, index.json) read to recognise an output


def folder_files(folder: Path) -> tuple[set[str], list[str]]:
    """The regular files below `folder` as relative POSIX paths, and the other entries (symbolic links,
    devices, empty folders) as relative paths, a folder's with a final `/`. Links are never followed;
    past WALK_LIMIT entries the rest counts as one other entry."""
    files: set[str] = set()
    others: list[str] = []
    seen = 0
    for root, dirs, names in os.walk(folder, followlinks=False):
        base = Path(root).relative_to(folder)
        for name in sorted(dirs + names):
            seen += 1
            if seen > WALK_LIMIT:
                others.append(f"(more than {WALK_LIMIT} entries)")
                return files, others
            relative = (base / name).as_posix()
            try:
                mode = os.lstat(Path(root) / name).st_mode
            except OSError:
                others.append(relative)
                continue
            if stat.S_ISREG(mode):
                files.add(relative)
            elif stat.S_ISDIR(mode):
                try:
                    empty = not os.listdir(Path(root) / name)
                except OSError:
                    empty = True
                if empty:
                    others.append(relative + "/")
            else:
                others.append(relative)
    return files, others


def _read_record(path: Path) -> bytes | None:
    """The bytes of the regular file `path` (never through a link, a FIFO or a device), None when it
    cannot be read or is larger than RECORD_LIMIT."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
                     | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return None
    with os.fdopen(fd, "rb") as handle:
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode) or info.st_size > RECORD_LIMIT:
                return None
            data = handle.read(RECORD_LIMIT + 1)
        except OSError:
            return None
    return data if len(data) <= RECORD_LIMIT else None


def _shown(names: list[str]) -> str:
    return ", ".join(f"`{n}`" for n in names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")


class Owner:
    """An owner test (`ours(folder)`) that can also say why a folder is not ours (`problem(folder)`), for an
    error that names what is in the way. Every output folder of the command line is recognised by one:
    an earlier output is replaced only when nothing in it would be lost that its writer did not write."""

    def problem(self, folder: Path) -> str | None:  # pragma: no cover - the interface
        raise NotImplementedError

    def __call__(self, folder: Path) -> bool:
        return self.problem(Path(folder)) is None


class Listed(Owner):
    """An earlier output recognised by the record its writer left in it (`record`: bundle.lock,
    index.json): the record is a regular file that `listing(bytes)` accepts, returning the files it
    lists (None: not a record this program wrote), and every file of the folder (below it too) is the
    record, a listed file or one of `also`. With `exact`, every listed file is also there."""

    def __init__(self, record: str, listing: Callable[[bytes], set[str] | None], also: frozenset[str] = frozenset(),
                 exact: bool = False) -> None:
        self.record, self.listing, self.also, self.exact = record, listing, frozenset(also), exact

    def problem(self, folder: Path) -> str | None:
        files, others = folder_files(folder)
        if self.record not in files:
            return f"it has no {self.record} and holds {_shown(sorted(files) + sorted(others))}"
        data = _read_record(Path(folder) / self.record)
        try:
            listed = self.listing(data) if data is not None else None
        except Exception:  # noqa: BLE001 - a record that does not parse is not ours
            listed = None
        if listed is None:
            return f"its {self.record} was not written by itbench"
        foreign = sorted(files - listed - self.also - {self.record}) + sorted(others)
        if foreign:
            return f"it holds {_shown(foreign)}, which its {self.record} does not list"
        missing = sorted(listed - files)
        if self.exact and missing:
            return f"its {self.record} lists {_shown(missing)}, which it does not hold"
        return None


class Layout(Owner):
    """An earlier output without a record (ITBench's own layout): every file of the folder, below it too,
    is a path the new files write again, and at least one is there."""

    def __init__(self, files: dict[str, bytes] | set[str]) -> None:
        self.paths = frozenset(Path(name).as_posix() for name in files)

    def problem(self, folder: Path) -> str | None:
        found, others = folder_files(folder)
        foreign = sorted(found - self.paths) + sorted(others)
        if foreign:
            return f"it holds {_shown(foreign)}, which itbench does not write there"
        if not found:
            return "it holds none of the files itbench writes there"
        return None


def lock_listing(data: bytes) -> set[str] | None:
    """The files a `bundle.lock` lists, when it is one `itbench compile` wrote."""
    import json

    lock = json.loads(data.decode("utf-8"))
    if not isinstance(lock, dict) or not str(lock.get("compiler", "")).startswith("itbench-dsl ") \
            or not isinstance(lock.get("files"), dict) or not all(isinstance(k, str) and safe_relative(k)
                                                                  for k in lock["files"]):
        return None
    return set(lock["files"])


def is_bundle(folder: Path) -> bool:
    """`folder` is a bundle `itbench compile` wrote: a `bundle.lock` of this program, and only files it lists."""
    return Listed(LOCK, lock_listing)(folder)


def bundle_owner(files: dict[str, bytes]) -> Owner:
    """The owner test of a bundle folder about to hold `files`: its earlier bundle (bundle.lock lists its
    files; a target's own additions, chainsaw-test.yaml, are files written again)."""
    return Listed(LOCK, lock_listing, also=frozenset(files))


def same_layout(files: dict[str, bytes]) -> Owner:
    """The owner test of outputs without `bundle.lock` (ITBench's own layout): Layout."""
    return Layout(files)


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
    what = "a folder itbench wrote"
    if ours is None:
        ours = bundle_owner(files) if LOCK in files else same_layout(files)
        what = "a bundle folder itbench wrote" if LOCK in files else what
    out_dir = Path(out_dir)
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
        raise BundleError(f"{final}: exists and is not {what}{_why(ours, final)}; it is never replaced: remove it "
                          "or choose another output folder")


def check_destination(final: Path, ours: Callable[[Path], bool], what: str = "a folder itbench wrote") -> None:
    """BundleError (naming what is in the way) unless write_folder(final, ..., ours) may replace `final`:
    for a command to refuse before it writes anything."""
    _refuse_foreign(Path(final), ours, what)


def _why(ours: Callable[[Path], bool], folder: Path) -> str:
    problem = getattr(ours, "problem", None)
    if problem is None:
        return ""
    try:
        said = problem(folder)
    except OSError:
        return ""
    return f" ({said})" if said else ""


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
