"""One rule for commands: each `itbench` command is a module of itbench_dsl/cli/ registered in
`cli.COMMANDS`, and the group imports it only when the command runs or `--help` lists it, so that
`itbench --version` and `itbench --help` import nothing heavy."""

from __future__ import annotations

import importlib
import importlib.util
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import click
import pytest

from itbench_dsl import cli

REPO = Path(__file__).resolve().parents[1]
HEAVY = ("itbench_dsl.compiler", "lark", "jsonschema", "jinja2", "yaml")


def _modules_after(code: str) -> set[str]:
    """The modules a fresh interpreter holds after running `code` (which may end in SystemExit)."""
    script = (f"import json, sys\ntry:\n    {code}\nexcept SystemExit:\n    pass\n"
              "sys.stdout = sys.__stdout__\nprint(json.dumps(sorted(sys.modules)))")
    env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.run([sys.executable, "-c", script], cwd=REPO, capture_output=True, text=True, timeout=60, env=env)
    assert proc.returncode == 0, proc.stderr
    return set(json.loads(proc.stdout.splitlines()[-1]))


@pytest.mark.parametrize("name", sorted(cli.COMMANDS))
def test_every_registered_command_imports_and_is_a_click_command(name: str):
    module, _, attribute = cli.COMMANDS[name].partition(":")
    assert module.startswith("itbench_dsl.cli.") and attribute
    command = getattr(importlib.import_module(module), attribute)
    assert isinstance(command, click.Command)
    if isinstance(command, click.Group):  # a group of subcommands (`itbench cluster up|down|build`), one level deep
        assert command.commands and not any(isinstance(c, click.Group) for c in command.commands.values())
    assert command.name == name
    assert cli.cli.get_command(click.Context(cli.cli), name) is command
    assert command.help and "itbench " + name in command.help  # an example


def test_every_command_module_is_registered():
    modules = {p.stem for p in (REPO / "itbench_dsl" / "cli").glob("*.py")} - {"__init__", "common"}
    assert modules == {target.partition(":")[0].rpartition(".")[2] for target in cli.COMMANDS.values()}
    assert importlib.util.find_spec("itbench_dsl.commands") is None  # the old home of some commands is gone


def test_help_lists_exactly_the_registry():
    proc = subprocess.run([sys.executable, "-m", "itbench_dsl", "--help"], cwd=REPO, capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 0, proc.stderr
    listed = re.findall(r"^  (\S+)  ", proc.stdout.partition("\nCommands:\n")[2], re.M)
    assert listed == sorted(cli.COMMANDS)
    assert cli.cli.list_commands(click.Context(cli.cli)) == sorted(cli.COMMANDS)
    assert cli.cli.get_command(click.Context(cli.cli), "bogus") is None


def test_importing_the_group_imports_nothing_heavy():
    loaded = _modules_after("import itbench_dsl.cli")
    assert "itbench_dsl.cli" in loaded
    assert not loaded & set(HEAVY), sorted(loaded & set(HEAVY))
    assert not any(m.startswith("itbench_dsl.cli.") and m != "itbench_dsl.cli.common" for m in loaded)


@pytest.mark.parametrize("argv", [["--version"], ["--help"], ["states", "--help"]])
def test_version_and_help_import_nothing_heavy(argv: list[str]):
    loaded = _modules_after(f"from itbench_dsl.cli import main; main({argv!r})")
    assert not loaded & set(HEAVY), sorted(loaded & set(HEAVY))
    if argv == ["--version"]:  # no command module either
        assert not any(m.startswith("itbench_dsl.cli.") and m != "itbench_dsl.cli.common" for m in loaded)
