"""Output folders (`-o`): a command replaces only an empty folder or exactly an earlier output of its own
(bundle.Owner: a record of this program that lists every file there, or only files it writes again);
anything else is refused with an error that names the folder and what is in the way, and nothing is written."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from itbench_dsl.bundle import Layout, Listed, folder_files, lock_listing
from itbench_dsl.cli import cli
from itbench_dsl.variants import index_listing

REPO = Path(__file__).resolve().parents[1]
SCENARIO = REPO / "scenarios/sre/shop-cart-modified-env.itb"
OTHER = REPO / "scenarios/sre/otel-cart-deleted-service.itb"


def invoke(*args: str):
    return CliRunner().invoke(cli, [str(a) for a in args])


def tree(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


# ---- generate -----------------------------------------------------------------------------------------------


GENERATE = ["generate", str(SCENARIO), "--with", "sweep", "-n", "1", "-o"]


@pytest.mark.parametrize("plant", [
    "index-not-ours",  # an index.json of something else, beside the user's files
    "index-ours-plus-file",  # an earlier run's output, with the user's file added
    "index-ours-plus-folder",  # ... with a subfolder added
    "index-ours-missing-variant",  # an index.json that lists a file the folder does not hold
    "no-index",
])
def test_generate_refuses_a_folder_that_is_not_exactly_an_earlier_run(tmp_path, plant):
    out = tmp_path / "o7"
    if plant.startswith("index-ours"):
        assert invoke(*GENERATE, out).exit_code == 0
    else:
        out.mkdir()
        (out / "index.json").write_text("{}\n" if plant == "index-not-ours" else "")
        if plant == "no-index":
            (out / "index.json").unlink()
    if plant in ("index-not-ours", "index-ours-plus-file", "no-index"):
        shutil.copy(OTHER, out / "mine.itb")
    if plant in ("index-not-ours", "index-ours-plus-folder"):
        (out / "sub").mkdir()
        (out / "sub" / "data.bin").write_bytes(b"x")
    if plant == "index-ours-missing-variant":
        for p in out.glob("*.itb"):
            p.unlink()
    before = tree(out)
    result = invoke(*GENERATE, out)
    assert result.exit_code == 2, result.output
    assert f"{out}: exists and is not the output of an earlier `itbench generate`" in result.output
    assert tree(out) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["o7"]  # no staging folder left


def test_generate_replaces_its_own_earlier_output_and_an_empty_folder(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    assert invoke(*GENERATE, out).exit_code == 0
    first = tree(out)
    result = invoke("generate", str(SCENARIO), "--with", "sweep", "-n", "2", "-o", out)
    assert result.exit_code == 0, result.output
    assert len(tree(out)) == len(first) + 1


def test_generate_refuses_before_generating(tmp_path, monkeypatch):
    import itbench_dsl.variants as gen

    out = tmp_path / "out"
    out.mkdir()
    (out / "keep.txt").write_text("mine")
    monkeypatch.setattr(gen, "run", lambda *a, **k: pytest.fail("generated into a refused folder"))
    result = invoke(*GENERATE, out)
    assert result.exit_code == 2 and "`keep.txt`" in result.output


def test_index_listing_takes_only_an_index_this_program_writes():
    ours = {"generators": ["sweep"], "seed": 0, "n": 1, "variants": [{"file": "a.itb"}], "skipped": [],
            "duplicates_removed": 0}
    assert index_listing(json.dumps(ours).encode()) == {"a.itb"}
    for bad in ({}, {**ours, "extra": 1}, {**ours, "variants": [{"file": "../x.itb"}]},
                {**ours, "variants": [{"file": "sub/x.itb"}]}, {**ours, "variants": [{"file": "x.txt"}]},
                {**ours, "variants": "a.itb"}):
        assert index_listing(json.dumps(bad).encode()) is None, bad


# ---- compile --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("target", ["bundle", "itbench", "chainsaw", "argo"])
def test_compile_refuses_an_earlier_bundle_holding_a_file_it_did_not_write(tmp_path, target):
    out = tmp_path / "out"
    source = OTHER if target == "itbench" else SCENARIO  # ITBench deploys no inline topology (E3005)
    assert invoke("compile", source, "-o", out, "-q", "--target", target).exit_code == 0
    assert invoke("compile", source, "-o", out, "-q", "--target", target).exit_code == 0  # its own: replaced
    (folder,) = out.iterdir()
    (folder / "manifests").mkdir(exist_ok=True)
    (folder / "manifests" / "mine.yaml").write_text("mine\n")
    before = tree(out)
    result = invoke("compile", source, "-o", out, "-q", "--target", target)
    assert result.exit_code == 2, result.output
    assert f"{folder}: exists and is not" in result.output and "manifests/mine.yaml" in result.output
    assert tree(out) == before


def test_compile_writes_no_bundle_when_another_destination_is_refused(tmp_path):
    out = tmp_path / "out"
    (out / "shop-cart-modified-env").mkdir(parents=True)
    (out / "shop-cart-modified-env" / "notes.txt").write_text("mine")
    result = invoke("compile", OTHER, SCENARIO, "-o", out, "-q")
    assert result.exit_code == 2, result.output
    assert sorted(p.name for p in out.iterdir()) == ["shop-cart-modified-env"]  # the other bundle not written


def test_a_lock_that_is_not_ours_does_not_make_a_bundle(tmp_path):
    folder = tmp_path / "b"
    folder.mkdir()
    (folder / "bundle.lock").write_text('{"files": {}}')
    (folder / "mine.txt").write_text("x")
    owner = Listed("bundle.lock", lock_listing)
    assert not owner(folder) and "was not written by itbench" in owner.problem(folder)
    (folder / "bundle.lock").write_text('{"compiler": "itbench-dsl 1", "files": {"mine.txt": ""}}')
    assert owner(folder)


def test_a_layout_owner_takes_only_files_written_again(tmp_path):
    folder = tmp_path / "b"
    (folder / "manifests").mkdir(parents=True)
    (folder / "scenario.yaml").write_text("x")
    owner = Layout({"scenario.yaml": b"", "manifests/a.yaml": b""})
    assert owner(folder) is False  # an empty subfolder is something in the way
    (folder / "manifests" / "a.yaml").write_text("x")
    assert owner(folder)
    os.symlink(folder / "scenario.yaml", folder / "manifests" / "link.yaml")
    assert not owner(folder) and "manifests/link.yaml" in owner.problem(folder)
    files, others = folder_files(folder)
    assert files == {"scenario.yaml", "manifests/a.yaml"} and others == ["manifests/link.yaml"]


# ---- docs and states: their own strict owners -----------------------------------------------------------------


def test_docs_and_states_refuse_a_folder_with_a_file_they_did_not_write(tmp_path):
    for args, folder in ((["docs", SCENARIO, "-o", tmp_path / "pages"], tmp_path / "pages"),
                         (["states", SCENARIO, "-o", tmp_path / "states"], tmp_path / "states" / SCENARIO.stem)):
        assert invoke(*args).exit_code == 0
        (folder / "sub").mkdir()
        (folder / "sub" / "mine.txt").write_text("mine")
        before = tree(folder)
        result = invoke(*args)
        assert result.exit_code == 2, result.output
        assert tree(folder) == before
