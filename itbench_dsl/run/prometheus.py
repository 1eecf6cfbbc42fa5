"""Prometheus's alerts (`GET /api/v1/alerts`), standard library only."""

from __future__ import annotations

import json
import urllib.error
import urllib.request

from . import ClusterError

MAX_BYTES = 64 * 1024 * 1024


def alerts(url: str, timeout: float = 30.0) -> dict:
    """The response of `{url}/api/v1/alerts`, as Prometheus returns it (the state's `alerts`)."""
    endpoint = url.rstrip("/") + "/api/v1/alerts"
    try:
        with urllib.request.urlopen(endpoint, timeout=timeout) as response:  # noqa: S310 - the user's Prometheus
            data = json.loads(response.read(MAX_BYTES).decode("utf-8"))
    except (OSError, ValueError, urllib.error.URLError) as exc:
        raise ClusterError(f"cannot read the alerts from {endpoint}: {exc}") from exc
    if not (isinstance(data, dict) and isinstance((data.get("data") or {}).get("alerts"), list)):
        raise ClusterError(f"{endpoint} did not answer as Prometheus's HTTP API does (no data.alerts)")
    return data


def firing(response: dict) -> list[str]:
    """The names of the alerts firing in a `/api/v1/alerts` response, sorted, each once."""
    names = set()
    for alert in response["data"]["alerts"]:
        if isinstance(alert, dict) and alert.get("state") == "firing":
            name = (alert.get("labels") or {}).get("alertname")
            if isinstance(name, str):
                names.add(name)
    return sorted(names)
