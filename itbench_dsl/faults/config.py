"""Faults in an application's configuration and data: feature flags, secrets, the valkey cache."""

from __future__ import annotations

from .base import FaultKind

FAULTS: list[FaultKind] = []
