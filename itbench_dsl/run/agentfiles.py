"""The agent's folder as a run reads it: regular files only, each bounded, links never followed out of it.

Whatever the agent leaves in its folder is its own, and hostile as it likes: a named pipe (opening it
waits for a writer that never comes), a socket or a device (reading /dev/zero never ends), a file of
gigabytes, a link to a file it keeps writing after its budget or to one outside its folder (the bundle's
ground truth). Here nothing is opened that is not a regular file (`os.lstat`, then `O_NONBLOCK |
O_NOFOLLOW` and `fstat` again on what was opened), nothing is read past its bound, and nothing raises but
`Refused` (with the reason, for the verdict or the timeline).

- `read_regular(path, limit)`: the bytes of one regular file (a link is refused).
- `read_answer(folder, name, limit)`: the bytes of an answer file; a link is followed only while it stays
  inside the folder (its target, resolved, must be a regular file there).
- `snapshot_answers(folder, names, dest)`: the answer files' bytes as they are now, copied into `dest`
  (regular files of the run's own), with a manifest of what was kept and what was refused.
- `keep_folder(src, dst)`: the folder copied for the record: regular files (each and all bounded), folders
  and links (as links, never followed); anything else (a FIFO, a socket, a device) is skipped and listed.
"""

from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path

MAX_ANSWER_BYTES = 16 * 1024 * 1024  # an answer file (the evaluator reads no more either)
MAX_KEPT_FILE_BYTES = 64 * 1024 * 1024  # one file of the agent's folder copied to the run's workspace/
MAX_KEPT_BYTES = 512 * 1024 * 1024  # all of them together
MAX_KEPT_ENTRIES = 20_000  # files, folders and links copied
MAX_DEPTH = 64  # folders within folders
_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NOCTTY", 0)


class Refused(Exception):
    """A file of the agent's that is not read: the message says why (`is a named pipe (FIFO), ...`)."""

    @property
    def reason(self) -> str:
        return str(self)


def kind_of(mode: int) -> str:
    """What a file that is not a regular one is, in words."""
    for test, name in ((stat.S_ISFIFO, "a named pipe (FIFO)"), (stat.S_ISSOCK, "a socket"),
                       (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                       (stat.S_ISDIR, "a folder"), (stat.S_ISLNK, "a symbolic link")):
        if test(mode):
            return name
    return "not a regular file"


def read_regular(path: Path | str, limit: int) -> bytes:
    """The bytes of the regular file `path` (its last component no link), at most `limit` of them.
    FileNotFoundError when there is none; Refused for anything else that is not such a file."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        raise
    except OSError as exc:
        raise Refused(f"cannot be read: {exc.strerror or exc}") from None
    if not stat.S_ISREG(info.st_mode):
        raise Refused(f"is {kind_of(info.st_mode)}, not a regular file")
    if info.st_size > limit:
        raise Refused(f"is {info.st_size:,} bytes: the limit is {limit:,}")
    try:
        fd = os.open(path, _OPEN_FLAGS)  # replaced by a link or a FIFO meanwhile: ELOOP, or opened without waiting
    except FileNotFoundError:
        raise
    except OSError as exc:
        raise Refused(f"cannot be read: {exc.strerror or exc}") from None
    try:
        with os.fdopen(fd, "rb") as handle:
            info = os.fstat(handle.fileno())
            if not stat.S_ISREG(info.st_mode):
                raise Refused(f"is {kind_of(info.st_mode)}, not a regular file")
            data = handle.read(limit + 1)
    except OSError as exc:
        raise Refused(f"cannot be read: {exc.strerror or exc}") from None
    if len(data) > limit:  # it grew while read
        raise Refused(f"is over the limit of {limit:,} bytes")
    return data


def _inside(root: str, path: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def resolve_answer(folder: Path, name: str) -> tuple[Path | None, str | None]:
    """(the file `folder/name` stands for, the link's target as shown when it is a link); (None, None) when
    there is none. A link is followed only to a file inside the folder: one that leads out of it (or
    nowhere, or round in a loop) is Refused."""
    path = Path(folder) / name
    if not os.path.lexists(path):
        return None, None
    if not os.path.islink(path):
        return path, None
    try:
        shown = os.readlink(path)
    except OSError as exc:
        raise Refused(f"is a link that cannot be read: {exc.strerror or exc}") from None
    root = os.path.realpath(folder)
    try:
        target = os.path.realpath(path, strict=True)
    except OSError as exc:
        raise Refused(f"is a link to {shown[:200]!r}, which leads nowhere ({exc.strerror or exc})") from None
    if not _inside(root, target):
        raise Refused(f"is a link to {shown[:200]!r}, outside the agent's folder: an answer is a file the agent "
                      "wrote there")
    return Path(target), shown


def read_answer(folder: Path, name: str, limit: int = MAX_ANSWER_BYTES) -> bytes | None:
    """The bytes of the answer file `name` in the agent's `folder` as they are now (None: there is none).
    Refused: not a regular file, over `limit`, a link out of the folder."""
    path, _ = resolve_answer(folder, name)
    if path is None:
        return None
    try:
        return read_regular(path, limit)
    except FileNotFoundError:
        return None  # removed meanwhile


def snapshot_answers(folder: Path, names: list[str], dest: Path, limit: int = MAX_ANSWER_BYTES) -> dict:
    """The answer files `names` of the agent's `folder`, as they are at this moment, copied into `dest`
    (created; a regular file of the run's for each answer kept): {name: {"bytes", "sha256"[, "link"]} |
    {"refused": why}}; a name the agent did not write is left out."""
    dest.mkdir(parents=True, exist_ok=True)
    manifest: dict[str, dict] = {}
    for name in sorted(set(names)):
        try:
            path, shown = resolve_answer(folder, name)
            data = None if path is None else read_regular(path, limit)
        except FileNotFoundError:
            data, shown = None, None
        except Refused as exc:
            manifest[name] = {"refused": f"{name} {exc.reason}"}
            continue
        if data is None:
            continue
        (dest / name).write_bytes(data)
        manifest[name] = {"bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}
        if shown is not None:
            manifest[name]["link"] = shown
    return manifest


def keep_folder(src: Path, dst: Path, file_limit: int = MAX_KEPT_FILE_BYTES, total_limit: int = MAX_KEPT_BYTES,
                entries: int = MAX_KEPT_ENTRIES) -> list[dict]:
    """Copy the agent's folder `src` into `dst` for the record (folders made, regular files copied, links copied
    as links and never followed); what is not copied is returned, {"path", "why"} each: a FIFO, a socket or a
    device (never opened), a file over `file_limit`, what is past `total_limit` bytes or `entries` entries,
    folders deeper than MAX_DEPTH, what cannot be read. Never raises for what the agent left."""
    skipped: list[dict] = []
    total, count = 0, 0
    dst.mkdir(parents=True, exist_ok=True)
    stack: list[tuple[Path, Path, int, str]] = [(Path(src), Path(dst), 0, "")]
    while stack:
        here, there, depth, rel = stack.pop()
        try:
            names = sorted(os.listdir(here))
        except OSError as exc:
            skipped.append({"path": rel or ".", "why": f"cannot be listed: {exc.strerror or exc}"})
            continue
        for name in names:
            path, target = here / name, there / name
            shown = os.fsencode(f"{rel}{name}").decode("utf-8", "backslashreplace")  # a name in any bytes, shown
            try:
                info = os.lstat(path)
            except OSError as exc:
                skipped.append({"path": shown, "why": f"cannot be read: {exc.strerror or exc}"})
                continue
            if count >= entries:
                skipped.append({"path": shown, "why": f"past the first {entries:,} entries"})
                continue
            mode = info.st_mode
            try:
                if stat.S_ISLNK(mode):
                    if os.path.lexists(target):
                        os.unlink(target)
                    os.symlink(os.readlink(path), target)
                elif stat.S_ISDIR(mode):
                    if depth + 1 > MAX_DEPTH:
                        skipped.append({"path": shown, "why": f"deeper than {MAX_DEPTH} folders"})
                        continue
                    target.mkdir(exist_ok=True)
                    stack.append((path, target, depth + 1, f"{rel}{name}/"))
                elif stat.S_ISREG(mode):
                    if info.st_size > file_limit:
                        skipped.append({"path": shown, "why": f"{info.st_size:,} bytes: over {file_limit:,}"})
                        continue
                    if total + info.st_size > total_limit:
                        skipped.append({"path": shown, "why": f"past {total_limit:,} bytes copied"})
                        continue
                    try:
                        data = read_regular(path, file_limit)
                    except FileNotFoundError:
                        continue
                    total += len(data)
                    if os.path.islink(target) or os.path.isfile(target):
                        os.unlink(target)  # never written through a link
                    target.write_bytes(data)
                    os.chmod(target, (stat.S_IMODE(info.st_mode) & 0o777) | stat.S_IRUSR | stat.S_IWUSR)
                else:
                    skipped.append({"path": shown, "why": f"{kind_of(mode)}: not copied"})
                    continue
            except Refused as exc:
                skipped.append({"path": shown, "why": exc.reason})
                continue
            except OSError as exc:
                skipped.append({"path": shown, "why": f"cannot be copied: {exc.strerror or exc}"})
                continue
            count += 1
    return skipped
