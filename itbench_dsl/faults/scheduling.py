"""Faults that keep a workload's pods from being scheduled or from starting: nodes, affinity, volumes, priorities, DNS."""

from __future__ import annotations

from .base import FaultKind

FAULTS: list[FaultKind] = []
