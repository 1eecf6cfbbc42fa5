"""Writing a compiled bundle to disk, atomically and inside its output folder only.

The files are first written to a hidden temporary folder next to the destination, then the
folder is renamed into place: a failure at any point leaves either the previous bundle or
nothing, never a half-written one.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path


class BundleError(Exception):
    """The bundle could not be written (I/O, or a path that would leave the output folder)."""


def safe_relative(name: str) -> bool:
    parts = Path(name).parts
    return bool(parts) and not Path(name).is_absolute() and all(p not in ("..", ".", "") for p in parts) and "\\" not in name


def write_bundle(out_dir: Path, bundle_name: str, files: dict[str, bytes]) -> Path:
    """Write `files` as `out_dir/bundle_name/` and return that path."""
    if not safe_relative(bundle_name) or len(Path(bundle_name).parts) != 1:
        raise BundleError(f"bundle name `{bundle_name}` is not a plain folder name")
    for name in files:
        if not safe_relative(name):
            raise BundleError(f"output path `{name}` would leave the bundle folder")
    out_dir = Path(out_dir)
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
        final = out_dir / bundle_name
        staging = Path(tempfile.mkdtemp(prefix=f".{bundle_name}.", dir=out_dir))
    except OSError as exc:
        raise BundleError(f"cannot create {out_dir}: {exc.strerror or exc}") from exc
    try:
        root = staging.resolve()
        for name, content in sorted(files.items()):
            target = (staging / name).resolve()
            if root not in target.parents:
                raise BundleError(f"output path `{name}` would leave the bundle folder")
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(content)
        os.chmod(staging, 0o755)
        previous = None
        if final.exists():
            previous = Path(tempfile.mkdtemp(prefix=f".{bundle_name}.old.", dir=out_dir))
            previous.rmdir()
            final.rename(previous)
        try:
            staging.rename(final)
        except OSError:
            if previous is not None:  # put the previous folder back
                previous.rename(final)
            raise
        if previous is not None:
            shutil.rmtree(previous, ignore_errors=True)
        return final
    except OSError as exc:
        shutil.rmtree(staging, ignore_errors=True)
        raise BundleError(f"cannot write the bundle {bundle_name}: {exc.strerror or exc}") from exc
    except BundleError:
        shutil.rmtree(staging, ignore_errors=True)
        raise
