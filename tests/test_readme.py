"""The README's examples are the files they name, and its commands exist."""

from __future__ import annotations

import re

from support.compiling import REPO


README = (REPO / "README.md").read_text("utf-8")


def test_the_example_scenario_is_the_library_file_it_names():
    blocks = re.findall(r"```\n(scenario \"([a-z0-9-]+)\" \{\n.*?\n\}\n)```", README, re.S)
    assert blocks, "the README shows no scenario"
    for text, name in blocks:
        files = list((REPO / "scenarios").rglob(f"{name}.itb"))
        assert len(files) == 1, f"the README's scenario {name} is not a library file"
        assert files[0].read_text("utf-8") == text, f"the README's {name} differs from {files[0]}"


def test_the_first_command_compiles_a_library_file():
    first = re.search(r"itbench compile (scenarios/\S+\.itb)", README)
    assert first and (REPO / first.group(1)).is_file()


def test_every_command_in_the_table_is_registered():
    from itbench_dsl.cli import COMMANDS

    named = set(re.findall(r"^\| `itbench ([a-z-]+)", README, re.M))
    assert named, "the README's command table is empty"
    assert named <= set(COMMANDS), f"the README names commands that do not exist: {sorted(named - set(COMMANDS))}"
