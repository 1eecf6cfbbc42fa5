"""Prometheus's alerts (`GET /api/v1/alerts`), standard library only."""

from __future__ import annotations

import json
import urllib.error
import urllib.request

from . import ClusterError

MAX_BYTES = 64 * 1024 * 1024


def _read(url: str, api: str, what: str, timeout: float) -> tuple[str, object]:
    """The endpoint `{url}/api/v1/{api}` and its JSON answer, at most MAX_BYTES read."""
    endpoint = url.rstrip("/") + "/api/v1/" + api
    try:
        with urllib.request.urlopen(endpoint, timeout=timeout) as response:  # noqa: S310 - the user's Prometheus
            return endpoint, json.loads(response.read(MAX_BYTES).decode("utf-8"))
    except (OSError, ValueError, urllib.error.URLError) as exc:
        raise ClusterError(f"cannot read the {what} from {endpoint}: {exc}") from exc


def alerts(url: str, timeout: float = 30.0) -> dict:
    """The response of `{url}/api/v1/alerts`, as Prometheus returns it (the state's `alerts`)."""
    endpoint, data = _read(url, "alerts", "alerts", timeout)
    if not (isinstance(data, dict) and isinstance((data.get("data") or {}).get("alerts"), list)):
        raise ClusterError(f"{endpoint} did not answer as Prometheus's HTTP API does (no data.alerts)")
    return data


def rule_groups(url: str, timeout: float = 30.0) -> set[str]:
    """The names of the rule groups Prometheus has loaded (`{url}/api/v1/rules`)."""
    endpoint, data = _read(url, "rules", "rules", timeout)
    groups = (data.get("data") or {}).get("groups") if isinstance(data, dict) else None
    if not isinstance(groups, list):
        raise ClusterError(f"{endpoint} did not answer as Prometheus's HTTP API does (no data.groups)")
    return {str(g.get("name")) for g in groups if isinstance(g, dict)}


def firing(response: dict) -> list[str]:
    """The names of the alerts firing in a `/api/v1/alerts` response, sorted, each once."""
    names = set()
    for alert in response["data"]["alerts"]:
        if isinstance(alert, dict) and alert.get("state") == "firing":
            name = (alert.get("labels") or {}).get("alertname")
            if isinstance(name, str):
                names.add(name)
    return sorted(names)


def instances(response: dict) -> set[tuple[str, tuple[tuple[str, str], ...]]]:
    """Every firing alert of a `/api/v1/alerts` response as (name, its labels): one alert rule fires once per
    label set (a namespace, a service), and each is told apart from the others by them."""
    out = set()
    for alert in response["data"]["alerts"]:
        if isinstance(alert, dict) and alert.get("state") == "firing":
            labels = alert.get("labels") if isinstance(alert.get("labels"), dict) else {}
            name = labels.get("alertname")
            if isinstance(name, str):
                out.add((name, tuple(sorted((str(k), str(v)) for k, v in labels.items()))))
    return out


def newly_firing(response: dict, baseline: dict | None, scopes: dict[str, tuple[str, ...]]) -> list[str]:
    """The expected alerts (`scopes`: name -> the namespaces it must fire in; empty: any) firing in `response`
    with a label set that did not fire in `baseline` (the alerts before the injection), in their namespaces
    (or with no namespace label). An alert that already fired before the injection, the same instance, is
    not the fault's: it proves nothing."""
    before = instances(baseline) if baseline is not None else set()
    found = set()
    for name, labels in instances(response) - before:
        if name not in scopes:
            continue
        namespace = dict(labels).get("namespace")
        if not scopes[name] or namespace is None or namespace in scopes[name]:
            found.add(name)
    return sorted(found)
