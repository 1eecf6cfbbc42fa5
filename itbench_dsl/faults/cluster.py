"""Faults at the cluster level: network policies, resource quotas, API server load."""

from __future__ import annotations

from .base import FaultKind

FAULTS: list[FaultKind] = []
