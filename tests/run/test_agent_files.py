"""The agent's folder as a run reads it (itbench_dsl/run/agentfiles.py): what an agent leaves there (a FIFO, a
socket, a device, a huge file, links to files it keeps writing or to files outside its folder) is never waited
on, never crashes the run and never changes the answer graded after its budget."""

from __future__ import annotations

import json
import os
import socket
import threading
from pathlib import Path

import pytest

from itbench_dsl.run import agentfiles
from itbench_dsl.run.agentfiles import Refused, keep_folder, read_answer, read_regular, snapshot_answers


def _no_hang(fn, seconds: float = 10.0):
    """fn() in a thread: it must return (or raise) within `seconds`."""
    out: dict = {}

    def run():
        try:
            out["value"] = fn()
        except BaseException as exc:  # noqa: BLE001 - handed back to the test
            out["error"] = exc

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), "hung"
    if "error" in out:
        raise out["error"]
    return out.get("value")


def _socket(path: Path) -> socket.socket:
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(path))
    return sock


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    work = tmp_path / "agent"
    work.mkdir()
    return work


def test_a_fifo_answer_is_refused_without_waiting(folder: Path):
    os.mkfifo(folder / "detection.json")
    with pytest.raises(Refused, match="named pipe"):
        _no_hang(lambda: read_answer(folder, "detection.json"))
    manifest = _no_hang(lambda: snapshot_answers(folder, ["detection.json"], folder.parent / "answers"))
    assert "named pipe" in manifest["detection.json"]["refused"]
    assert not (folder.parent / "answers" / "detection.json").exists()


def test_a_socket_a_device_and_a_huge_file_are_refused(folder: Path):
    sock = _socket(folder / "localization.json")
    try:
        with pytest.raises(Refused, match="socket"):
            read_answer(folder, "localization.json")
    finally:
        sock.close()
    with pytest.raises(Refused, match="character device"):
        read_regular("/dev/zero", 1024)
    huge = folder / "analysis.json"
    with open(huge, "wb") as handle:
        handle.truncate(agentfiles.MAX_ANSWER_BYTES + 1)  # sparse: no disk used
    with pytest.raises(Refused, match="the limit is"):
        read_answer(folder, "analysis.json")


def test_links_are_followed_only_inside_the_folder(folder: Path, tmp_path: Path):
    (folder / "real.json").write_text('{"anomaly": false}')
    (folder / "detection.json").symlink_to("real.json")
    assert read_answer(folder, "detection.json") == b'{"anomaly": false}'
    outside = tmp_path / "ground-truth.json"
    outside.write_text('{"secret": 1}')
    (folder / "localization.json").symlink_to(outside)
    with pytest.raises(Refused, match="outside the agent's folder"):
        read_answer(folder, "localization.json")
    (folder / "sub").mkdir()
    (folder / "analysis.json").symlink_to("sub/../../ground-truth.json")  # out, through a folder of its own
    with pytest.raises(Refused, match="outside"):
        read_answer(folder, "analysis.json")
    (folder / "diagnosis.json").symlink_to("nowhere.json")
    with pytest.raises(Refused, match="leads nowhere"):
        read_answer(folder, "diagnosis.json")
    (folder / "a").symlink_to("b")
    (folder / "b").symlink_to("a")
    with pytest.raises(Refused):
        read_answer(folder, "a")
    (folder / "dev.json").symlink_to("/dev/zero")
    with pytest.raises(Refused):
        _no_hang(lambda: read_answer(folder, "dev.json"))
    assert read_answer(folder, "absent.json") is None


def test_the_snapshot_is_the_answer_however_its_link_changes_later(folder: Path, tmp_path: Path):
    """What is graded is the bytes at the end of the budget: a link to a file the agent (or what it left
    running) keeps writing does not change the answer afterwards."""
    target = folder / "draft.json"
    target.write_text('{"anomaly": false}')
    (folder / "detection.json").symlink_to(target)
    (folder / "localization.json").write_text('{"root_cause": "x"}')
    dest = tmp_path / "answers"
    manifest = snapshot_answers(folder, ["detection.json", "localization.json", "analysis.json"], dest)
    target.write_text('{"anomaly": true, "noticed_at": "2026-01-01T00:00:00Z"}')  # after the budget
    assert (dest / "detection.json").read_text() == '{"anomaly": false}'
    assert not (dest / "detection.json").is_symlink()
    assert manifest["detection.json"]["link"] == str(target) and manifest["detection.json"]["bytes"] == 18
    assert set(manifest) == {"detection.json", "localization.json"}  # analysis.json was not written


def test_keep_folder_copies_regular_files_and_links_and_skips_the_rest(folder: Path, tmp_path: Path):
    (folder / "notes").mkdir()
    (folder / "notes" / "a.txt").write_text("a")
    (folder / "prompt.md").write_text("p")
    os.mkfifo(folder / "pipe")
    sock = _socket(folder / "notes" / "sock")
    (folder / "link").symlink_to("/etc/hostname")
    (folder / "loop").symlink_to("loop")
    (folder / "big.bin").write_bytes(b"x" * 2000)
    try:
        skipped = _no_hang(lambda: keep_folder(folder, tmp_path / "kept", file_limit=1000))
    finally:
        sock.close()
    kept = tmp_path / "kept"
    assert (kept / "notes" / "a.txt").read_text() == "a" and (kept / "prompt.md").read_text() == "p"
    assert os.readlink(kept / "link") == "/etc/hostname" and os.readlink(kept / "loop") == "loop"
    why = {s["path"]: s["why"] for s in skipped}
    assert "named pipe" in why["pipe"] and "socket" in why["notes/sock"] and "over 1,000" in why["big.bin"]
    assert not (kept / "pipe").exists() and not (kept / "big.bin").exists()


def test_keep_folder_bounds_the_total_and_the_entries(folder: Path, tmp_path: Path):
    for i in range(10):
        (folder / f"f{i}").write_bytes(b"y" * 100)
    skipped = keep_folder(folder, tmp_path / "kept", total_limit=450, entries=100)
    assert len(list((tmp_path / "kept").iterdir())) == 4 and len(skipped) == 6
    skipped = keep_folder(folder, tmp_path / "kept2", entries=3)
    assert len(list((tmp_path / "kept2").iterdir())) == 3 and "entries" in skipped[0]["why"]


def test_keep_folder_never_follows_a_linked_folder(folder: Path, tmp_path: Path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret").write_text("s")
    (folder / "dir").symlink_to(outside, target_is_directory=True)
    keep_folder(folder, tmp_path / "kept")
    assert (tmp_path / "kept" / "dir").is_symlink() and json.dumps(sorted(os.listdir(tmp_path / "kept"))) == '["dir"]'


# ---- the evaluator's own reading of its inputs (runtime/evaluator.py: --agent-output, --state, --artifact) ------

SCENARIO = "bookinfo-gateway-denies-get"


@pytest.fixture(scope="module")
def detect_bundle(tmp_path_factory) -> Path:
    from support.compiling import SCENARIOS, compile_ok

    source = (SCENARIOS / "sre" / f"{SCENARIO}.itb").read_text()
    source = source.replace("  domain sre\n", "  domain sre\n  tasks detect within 10m, localize, mitigate\n", 1)
    result = compile_ok(source.encode(), f"{SCENARIO}.itb")
    root = tmp_path_factory.mktemp("bundle")
    for name, data in result.files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_bytes(data)
    from itbench_dsl.analysis import states

    faulty = states.derive(result.scenario)["faulty"]
    (root / "faulty.json").write_text(json.dumps(faulty))
    (root / "right.json").write_text(json.dumps(states.perfect_answer(result.scenario, faulty)))
    return root


def _evaluate(bundle: Path, *args: str):
    import subprocess
    import sys

    return subprocess.run([sys.executable, "-S", str(bundle / "evaluator.py"), *args], capture_output=True, text=True,
                          timeout=60, check=False)


def test_the_evaluator_fails_an_answer_that_is_a_fifo_or_a_link_out_of_the_folder(detect_bundle: Path,
                                                                                   folder: Path, tmp_path: Path):
    """In the agent's work folder, a FIFO answer fails its task with the reason (never waited on) and a link to a
    right answer outside the folder fails too; the other tasks are graded."""
    os.mkfifo(folder / "detection.json")
    outside = tmp_path / "outside.json"
    outside.write_text((detect_bundle / "right.json").read_text())
    (folder / "diagnosis.json").symlink_to(outside)
    state = str(detect_bundle / "faulty.json")
    proc = _evaluate(detect_bundle, "--agent-output", str(folder), "--state", state,
                     "--injected-at", "2026-01-01T00:00:00Z")
    assert proc.returncode == 0, proc.stderr
    tasks = json.loads(proc.stdout)["tasks"]
    assert not tasks["detect"]["passed"] and "not a regular file" in str(tasks["detect"]["checks"])
    assert not tasks["localize"]["passed"] and "outside the agent's folder" in tasks["localize"]["checks"][0]["detail"]
    # the same answer as a file of the folder, or a link to one there, is read
    (folder / "diagnosis.json").unlink()
    (folder / "mine.json").write_text((detect_bundle / "right.json").read_text())
    (folder / "diagnosis.json").symlink_to("mine.json")
    proc = _evaluate(detect_bundle, "--task", "localize", "--agent-output", str(folder), "--state", state)
    assert proc.returncode == 0 and json.loads(proc.stdout)["passed"], proc.stdout + proc.stderr


@pytest.mark.parametrize("option", ["--agent-output", "--state", "--artifact"])
def test_the_evaluator_refuses_a_fifo_a_device_and_a_huge_input(detect_bundle: Path, tmp_path: Path, option: str):
    from itbench_dsl.runtime.evaluator import MAX_INPUT_BYTES

    fifo, huge = tmp_path / "in.json", tmp_path / "huge.json"
    os.mkfifo(fifo)
    with open(huge, "wb") as handle:
        handle.truncate(MAX_INPUT_BYTES + 1)  # sparse
    task = {"--agent-output": "localize", "--state": "mitigate", "--artifact": "mitigate"}[option]
    rest = [] if option == "--state" else ["--state", str(detect_bundle / "faulty.json")]
    for given, message in ((fifo, "not a regular file"), ("/dev/zero", "not a regular file"),
                           (huge, "the limit is")):
        proc = _evaluate(detect_bundle, "--task", task, option, str(given), *rest)
        assert proc.returncode == 2 and message in proc.stderr and "Traceback" not in proc.stderr, (given, proc.stderr)


# ---- when the detection was noticed: self-reported, bounded by the run's own record -------------------------


def _detect(bundle: Path, work: Path, noticed_at: str, answered_at: str | None) -> dict:
    (work / "detection.json").write_text(json.dumps({"anomaly": True, "noticed_at": noticed_at}))
    proc = _evaluate(bundle, "--task", "detect", "--agent-output", str(work), "--state", str(bundle / "faulty.json"),
                     "--injected-at", "2026-01-01T00:00:00Z",
                     *(["--answered-at", answered_at] if answered_at else []))
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_a_noticed_at_in_the_future_or_before_the_injection_never_improves_the_verdict(detect_bundle: Path,
                                                                                      folder: Path):
    """The earlier of `noticed_at` and the run's `answered_at` is the detection's time: a claim later than the
    answer's appearance is worth what the appearance is (never more), and one before the injection fails."""
    honest = _detect(detect_bundle, folder, "2026-01-01T00:02:00Z", "2026-01-01T00:02:00Z")
    future = _detect(detect_bundle, folder, "2099-01-01T00:00:00Z", "2026-01-01T00:02:00Z")
    assert honest["passed"] and future["passed"]
    assert future["metrics"]["time_to_detect_seconds"] == honest["metrics"]["time_to_detect_seconds"] == 120
    assert not _detect(detect_bundle, folder, "2099-01-01T00:00:00Z", None)["passed"]  # self-reported only
    late = _detect(detect_bundle, folder, "2099-01-01T00:00:00Z", "2026-01-01T02:00:00Z")
    assert not late["passed"]
    for answered in (None, "2026-01-01T00:02:00Z"):
        early = _detect(detect_bundle, folder, "2025-12-31T23:59:00Z", answered)
        assert not early["passed"] and "before the injection" in json.dumps(early["checks"])


def test_each_attempt_times_its_own_answer():
    """A resumed run grades the last attempt's answer with that attempt's `answered_at`, never an earlier one's."""
    from itbench_dsl.run.runner import Prior

    start = {"phase": "run", "event": "start"}
    first = [start, {"phase": "inject", "event": "step", "injected_at": "2026-01-01T00:00:00Z"},
             {"phase": "agent", "event": "step", "answered_at": "2026-01-01T00:01:00Z"}]
    assert Prior.of(first).answered_at == "2026-01-01T00:01:00Z"
    assert Prior.of([*first, start, {"phase": "inject", "event": "step",
                                     "injected_at": "2026-01-01T01:00:00Z"}]).answered_at is None


def test_a_resumed_cleanup_puts_back_what_the_interrupted_attempt_recorded():
    """The nodes and namespaces recorded before the fault (the deploy's `marks` step) outlive an interrupted attempt:
    its resumed revert puts them back; once they are, nothing is left to put back."""
    from itbench_dsl.run.runner import Prior

    marks = {"nodes": {"n": {"labels": {}, "annotations": {}, "taints": None, "unschedulable": None}},
             "namespaces": {"default": {"labels": {}, "annotations": {}}}}
    events = [{"phase": "run", "event": "start"}, {"phase": "deploy", "event": "step", "action": "marks", "marks": marks},
              {"phase": "inject", "event": "start"}]
    assert Prior.of(events).marks == marks and not Prior.of(events).cleaned
    assert Prior.of([*events, {"phase": "revert", "event": "step", "action": "marks-restored"}]).marks is None


def test_keep_folder_names_a_file_of_any_bytes_printably(folder: Path, tmp_path: Path):
    name = os.fsdecode(b"bad-\xff-name")
    os.mkfifo(folder / name)
    skipped = keep_folder(folder, tmp_path / "kept")
    assert skipped[0]["path"] == "bad-\\xff-name" and skipped[0]["path"].encode("utf-8")
