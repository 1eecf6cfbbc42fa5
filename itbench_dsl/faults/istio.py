"""Faults in the Istio service mesh."""

from __future__ import annotations

from .base import FaultKind

FAULTS: list[FaultKind] = []
