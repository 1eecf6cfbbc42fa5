"""`itbench import`: ITBench scenarios to formatted `.itb` source.

`import_path(path, diags)` picks the importer for what `path` is: a CISO scenario (`ciso.py`, when
present), or an SRE/FinOps index file (`N.json`) or compiled folder (`scenario_N/`) (`sre.py`).
Diagnostics point into the ITBench files; a scenario that cannot be imported gives errors and None.
"""

from __future__ import annotations

from pathlib import Path

from ..diagnostics import Diagnostics


def import_path(path: Path, diags: Diagnostics) -> str | None:
    path = Path(path)
    try:
        from . import ciso  # the CISO importer, when it is part of the package
    except ImportError:
        ciso = None
    if ciso is not None and ciso.looks_like_ciso(path):
        return ciso.import_ciso(path, diags)
    from .sre import import_sre

    return import_sre(path, diags)
