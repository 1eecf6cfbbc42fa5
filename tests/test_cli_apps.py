"""`itbench apps NAME`: what an application holds, down to each container's image, ports and resources, as text
and as JSON (the same facts)."""

from __future__ import annotations

import json

from click.testing import CliRunner

from itbench_dsl import cli as cli_module
from itbench_dsl.applications import app_names, app_topology


def run(*args: str):
    result = CliRunner().invoke(cli_module.cli, ["apps", *args])
    assert result.exit_code == 0, result.output
    return result.stdout


def test_json_lists_the_applications():
    listed = json.loads(run("--json"))["applications"]
    assert [a["name"] for a in listed] == app_names() and all(a["description"] for a in listed)


def test_json_shows_every_workload_with_its_containers():
    shown = json.loads(run("hotel-reservation", "--json"))
    build = app_topology("hotel-reservation")[0]
    assert {(w["namespace"], w["name"]) for w in shown["workloads"]} == {(w.namespace, w.name) for w in build.workloads}
    consul = next(w for w in shown["workloads"] if w["name"] == "consul")
    real = next(w for w in build.workloads if w.name == "consul").containers[0]
    assert consul["containers"][0]["image"] == real.image
    assert [p["port"] for p in consul["containers"][0]["ports"]] == [p.port for p in real.ports]
    assert consul["containers"][0]["resources"] == {k: dict(v) for k, v in real.resources.items()}


def test_text_shows_images_ports_requests_and_limits():
    text = run("opentelemetry-demo")
    shown = json.loads(run("opentelemetry-demo", "--json"))
    cart = next(w for w in shown["workloads"] if w["name"] == "cart")
    block = text.split("deployment otel-demo/cart ")[1].split("\n  deployment ")[0]
    container = cart["containers"][0]
    assert f"container cart: {container['image']}" in block
    assert "init container" in block  # its init containers are shown too
    for which, values in container["resources"].items():
        assert f"{which}: " + ", ".join(f"{k}={v}" for k, v in values.items()) in block
    assert "ports: " in block


def test_json_is_deterministic():
    assert run("book-info", "--json") == run("book-info", "--json")
