"""A third-party generator (tests/plugins/) installed through its entry point, offline.

The package's distribution metadata (`*.dist-info/METADATA` and `entry_points.txt`, what `pip
install` writes) goes into a temporary folder on `sys.path`, next to the package's code: the
standard `importlib.metadata` discovery then finds it under the group `itbench.generators`.
"""

from __future__ import annotations

import json
import shutil
import tomllib
from pathlib import Path

from click.testing import CliRunner

from itbench_dsl import variants as gen
from itbench_dsl.cli import cli

HERE = Path(__file__).resolve().parents[1]
PLUGIN = HERE / "plugins"
SHOP = HERE.parent / "scenarios" / "sre" / "shop-cart-modified-env.itb"


def install(site: Path) -> None:
    """What `pip install tests/plugins` would leave in site-packages, written by hand."""
    project = tomllib.loads((PLUGIN / "pyproject.toml").read_text())["project"]
    shutil.copytree(PLUGIN / "itbench_replicas_gen", site / "itbench_replicas_gen")
    dist = site / f"{project['name'].replace('-', '_')}-{project['version']}.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {project['name']}\nVersion: {project['version']}\n")
    groups = project["entry-points"]
    lines = []
    for group, entries in groups.items():
        lines.append(f"[{group}]")
        lines += [f"{name} = {value}" for name, value in entries.items()]
    (dist / "entry_points.txt").write_text("\n".join(lines) + "\n")


def test_third_party_generator_is_discovered_and_runs(tmp_path, monkeypatch):
    site = tmp_path / "site"
    site.mkdir()
    install(site)
    assert "replicas" not in gen.available()
    monkeypatch.syspath_prepend(str(site))
    specs = gen.available()
    assert specs["replicas"] == "itbench_replicas_gen:ReplicasGenerator"
    assert {"retarget", "sweep", "control"} <= set(specs)  # the built-ins are still there

    out = tmp_path / "out"
    result = CliRunner().invoke(cli, ["generate", str(SHOP), "--with", "replicas,anonymize", "--seed", "3", "-o", str(out)])
    assert result.exit_code == 0, result.output
    index = json.loads((out / "index.json").read_text())
    assert [row["chain"] for row in index["variants"]] == ["replicas,anonymize"] * 2
    for row in index["variants"]:
        text = (out / row["file"]).read_text()
        assert "replicas = 2" in text or "replicas = 3" in text
    listed = CliRunner().invoke(cli, ["generate", "--list"])
    assert listed.exit_code == 0
    assert "replicas" in listed.output and "itbench_replicas_gen:ReplicasGenerator" in listed.output


def test_plugin_skips_what_it_cannot_vary(tmp_path, monkeypatch):
    site = tmp_path / "site"
    site.mkdir()
    install(site)
    monkeypatch.syspath_prepend(str(site))
    other = HERE.parent / "scenarios" / "sre" / "otel-checkout-nonexistent-image.itb"
    out = tmp_path / "out"
    result = CliRunner().invoke(cli, ["generate", str(other), "--with", "replicas", "-o", str(out)])
    # nothing produced: the run says why (E6003, with the plugin's reason) and fails, writing nothing
    assert result.exit_code == 1
    assert "W6001" in result.output and "not declared in the scenario's own topology" in result.output
    assert "E6003" in result.output and "`replicas` made no variant of its 1 input" in result.output
    assert not out.exists()
