"""`itbench import`: ITBench scenarios to formatted `.itb` source.

`import_path(path, diags)` picks the importer for what `path` is: a CISO scenario (`ciso.py`), or an
SRE/FinOps index file (`N.json`) or compiled folder (`scenario_N/`) (`sre.py`). Diagnostics point into the ITBench files; a scenario that cannot be imported gives errors and None.
"""

from __future__ import annotations

from pathlib import Path

from ..diagnostics import Diagnostics


def import_path(path: Path, diags: Diagnostics) -> str | None:
    from . import ciso
    from .sre import import_sre

    path = Path(path)
    if ciso.looks_like_ciso(path):
        return ciso.import_ciso(path, diags)

    return import_sre(path, diags)
