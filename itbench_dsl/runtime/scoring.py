"""Aggregating evaluator verdicts over trials: pass@k and mean score with its standard error.

Standard library only. pass@k uses the unbiased estimator of Chen et al. (2021): with n trials of
which c passed, pass@k = 1 - C(n-c, k) / C(n, k), computed exactly with integers (math.comb)
and turned into a float once. The standard error is the sample standard deviation over sqrt(n)
(0 for a single trial).
"""

from __future__ import annotations

import json
import math
import os
import stat
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path


class ScoringError(ValueError):
    """Inputs pass@k or the aggregation cannot use; the message says why."""


def pass_at_k(n: int, c: int, k: int) -> float:
    """The probability that at least one of k trials drawn from n (c of them passing) passes."""
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in (n, c, k)):
        raise ScoringError("pass@k needs integer n, c and k")
    if n < 1:
        raise ScoringError("pass@k needs at least one trial")
    if not 0 <= c <= n:
        raise ScoringError(f"pass@k needs 0 <= c <= n (c={c}, n={n})")
    if k < 1:
        raise ScoringError(f"pass@{k}: k must be at least 1")
    if k > n:
        raise ScoringError(f"pass@{k} needs at least {k} trials, there are {n}")
    return float(1 - Fraction(math.comb(n - c, k), math.comb(n, k)))


def mean_and_stderr(values: list[float]) -> tuple[float, float]:
    if not values:
        raise ScoringError("no scores to average")
    n = len(values)
    mean = math.fsum(values) / n
    if n == 1:
        return mean, 0.0
    variance = math.fsum((v - mean) ** 2 for v in values) / (n - 1)
    return mean, math.sqrt(variance / n)


@dataclass
class ScenarioScore:
    scenario: str
    task: str  # the task graded ("diagnose", "mitigate", "policy"), "" for a verdict that names none
    trials: int
    passed: int
    mean: float
    stderr: float | None  # None for a single trial: one value has no spread to estimate
    pass_at: dict[int, float] = field(default_factory=dict)  # k -> pass@k (only the k <= trials)
    no_verdict: int = 0  # trials (runs) that ended without a verdict: failed, score 0

    def to_json(self) -> dict:
        return {"scenario": self.scenario, "task": self.task, "trials": self.trials, "passed": self.passed,
                "no_verdict": self.no_verdict, "mean_score": self.mean, "stderr": self.stderr,
                "pass_at_k": {str(k): v for k, v in sorted(self.pass_at.items())}}


def notes(verdicts: list[dict]) -> list[str]:
    """One line per run counted as a failed trial for a reason other than ending without a verdict (its verdict
    malformed, or lacking a task): what `itbench score` says besides its table."""
    out = []
    for v in verdicts:
        status = v.get("status") or ""
        if v.get("no_verdict") and (status.startswith("malformed verdict") or status == "the verdict lacks this task"):
            out.append(f"{v.get('run')}: {printable(v['task'] or '-')} counted as a failed trial: {printable(status)}")
    return out


def aggregate(verdicts: list[dict], ks: list[int]) -> dict:
    """Per scenario and task, and overall per task, figures from verdicts ({scenario, task, passed, score}).

    A scenario's diagnosis and mitigation are separate tasks with separate verdicts: they are never
    pooled. k = 1 is always computed. A requested k larger than a group's trial count is refused with
    the scenario named, so a table never mixes estimators over different k silently. Overall pass@k of
    a task is the mean of its scenarios' values (each scenario weighs the same, whatever its trial
    count); the overall mean score is the mean of the scenarios' means, with the standard error across
    scenarios.
    """
    ks = sorted({1, *ks})
    for k in ks:
        if k < 1:
            raise ScoringError(f"--k {k}: k must be at least 1")
    groups: dict[tuple[str, str], list[dict]] = {}
    for verdict in verdicts:
        groups.setdefault((verdict["scenario"], verdict.get("task") or ""), []).append(verdict)
    if not groups:
        raise ScoringError("no verdicts to score")
    rows = []
    for scenario, task in sorted(groups):
        trials = groups[(scenario, task)]
        n, c = len(trials), sum(1 for t in trials if t["passed"] is True)
        too_few = [k for k in ks if k > n]
        if too_few:
            what = f"scenario `{printable(scenario)}`" + (f" ({task})" if task else "")
            raise ScoringError(f"{what} has {n} trial{'s' * (n != 1)}: pass@{too_few[0]} needs at least "
                               f"{too_few[0]}")
        mean, stderr = mean_and_stderr([float(t["score"]) for t in trials])
        rows.append(ScenarioScore(scenario, task, n, c, mean, stderr if n > 1 else None,
                                  {k: pass_at_k(n, c, k) for k in ks}, sum(1 for t in trials if t.get("no_verdict"))))
    overall = []
    for task in sorted({r.task for r in rows}):
        mine = [r for r in rows if r.task == task]
        mean, stderr = mean_and_stderr([r.mean for r in mine])
        overall.append({
            "task": task, "scenarios": len(mine), "trials": sum(r.trials for r in mine),
            "passed": sum(r.passed for r in mine), "no_verdict": sum(r.no_verdict for r in mine),
            "mean_score": mean, "stderr": stderr if len(mine) > 1 else None,
            "pass_at_k": {str(k): math.fsum(r.pass_at[k] for r in mine) / len(mine) for k in ks},
        })
    return {"k": ks, "scenarios": [r.to_json() for r in rows], "overall": overall}


MAX_VERDICT_BYTES = 16 * 1024 * 1024
RUN_MARKER, RUN_VERDICT = "timeline.jsonl", "verdict.json"  # a run folder of `itbench run` (run/runner.py)
RUN_RECORD = "run.json"  # what a run of `itbench run` ended as: scenario, status, tasks (run/runner.py)


def read_bounded(path: Path, limit: int = MAX_VERDICT_BYTES, head: bool = False) -> str:
    """The text of the regular file `path` (a link to one is followed), at most `limit` bytes (`head`: its first
    `limit` bytes, however long it is): a FIFO, a socket or a device is refused without waiting on it or
    reading it (ScoringError with the reason)."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        raise ScoringError(f"{path}: cannot be read: {exc.strerror or exc}") from None
    try:
        with os.fdopen(fd, "rb") as handle:
            info = os.fstat(handle.fileno())
            if not stat.S_ISREG(info.st_mode):
                raise ScoringError(f"{path}: not a regular file")
            if info.st_size > limit and not head:
                raise ScoringError(f"{path}: larger than {limit:,} bytes: not a verdict")
            data = handle.read(limit if head else limit + 1)
    except OSError as exc:
        raise ScoringError(f"{path}: cannot be read: {exc.strerror or exc}") from None
    if head:
        return data.decode("utf-8", errors="replace")
    if len(data) > limit:
        raise ScoringError(f"{path}: larger than {limit:,} bytes: not a verdict")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ScoringError(f"{path}: not a readable JSON file: {str(exc)[:200]}") from None


def _is_file(path: Path) -> bool:
    """A regular file (a link to one counts): a FIFO or a device named *.json is no verdict, and is not opened."""
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except (OSError, ValueError):
        return False


def verdicts_of(path: Path) -> list[dict]:
    """The verdicts of one verdict file, checked for the fields scoring reads (ScoringError otherwise): a
    verdict of several tasks (`tasks`, as an evaluator run without `--task` writes it) is one per task."""
    text = read_bounded(path)
    try:
        data = json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise ScoringError(f"{path}: not a readable JSON file: {str(exc)[:200]}") from exc
    if not isinstance(data, dict):
        raise ScoringError(f"{path}: a verdict is a JSON object")
    parts = data.get("tasks")
    if parts is not None and not (isinstance(parts, dict) and parts):
        raise ScoringError(f"{path}: `tasks` must be an object of one verdict per task")
    if parts is None:
        return [_verdict(path, data)]
    out = []
    for task, part in sorted(parts.items()):
        if not isinstance(part, dict):
            raise ScoringError(f"{path}: `tasks.{printable(str(task))}` is not a verdict")
        out.append(_verdict(path, {**part, "scenario": part.get("scenario", data.get("scenario")),
                                   "task": part.get("task", task)}))
    tasks = [v["task"] for v in out]
    if len(set(tasks)) != len(tasks):
        raise ScoringError(f"{path}: a task has two verdicts in `tasks`")
    return out


def load_verdicts(folder: Path) -> list[dict]:
    """Every verdict JSON file below `folder` (*.json, sorted; in a run folder of `itbench run`, only its
    verdict.json), checked for the fields scoring reads. A verdict of several tasks (`tasks`, as an evaluator
    run without `--task` writes it) counts as one verdict per task.

    Every run folder is a trial of each task it was run for: one whose verdict.json is missing, unreadable or
    malformed, or lacks one of its tasks, is a failed trial of that task (score 0, `no_verdict`, its `status`
    saying why), never dropped. A run found twice (one scenario and run id in two folders: a copy) is refused:
    counted twice, it would weigh twice."""
    if not folder.is_dir():
        raise ScoringError(f"{folder}: not a folder")
    files, runs = verdict_files(folder)
    if not files and not runs:
        raise ScoringError(f"{folder}: no .json verdict files and no run folders of `itbench run` in this folder")
    run_set = set(runs)
    verdicts, graded, malformed = [], {}, {}
    for path in files:
        in_run = path.name == RUN_VERDICT and path.parent in run_set
        try:
            found = verdicts_of(path)
        except ScoringError as exc:
            if not in_run:
                raise
            malformed[path.parent] = str(exc)  # the run is a trial: a failed one, said why
            continue
        if in_run:
            graded[path.parent] = found
        verdicts += found
    verdicts += unfinished_runs(runs, verdicts, graded, malformed)
    return verdicts


def verdict_files(folder: Path) -> tuple[list[Path], list[Path]]:
    """(the verdict files, the run folders) below `folder`. A folder of `itbench run` (it holds the
    harness's timeline.jsonl) keeps its state, timings and the agent's workspace beside its verdict: only
    its own verdict.json is one (none yet while the run is unfinished), and nothing below it is read, so
    run folders an agent writes into its workspace are never counted. Only regular files are read (a FIFO
    named *.json is no verdict and is never opened)."""
    files, runs = [], []
    for here, dirs, names in os.walk(folder):
        base = Path(here)
        if RUN_MARKER in names and _is_file(base / RUN_MARKER):
            runs.append(base)
            dirs[:] = []  # never descend into a run folder
            if RUN_VERDICT in names and os.path.lexists(base / RUN_VERDICT):
                files.append(base / RUN_VERDICT)  # read, or its run said to have a malformed verdict
            continue
        dirs.sort()
        files += [base / n for n in names if n.endswith(".json") and _is_file(base / n)]
    return sorted(files), sorted(runs)


def _run_record(folder: Path) -> dict:
    """A run folder's run.json, {} when it is missing or unreadable; else its timeline's first step (a run
    that died before run.json)."""
    record = {}
    if os.path.lexists(folder / RUN_RECORD):
        try:
            record = json.loads(read_bounded(folder / RUN_RECORD))
        except (ScoringError, ValueError, RecursionError):
            record = {}
    record = record if isinstance(record, dict) else {}
    return record or _timeline_start(folder / RUN_MARKER)


def unfinished_runs(runs: list[Path], verdicts: list[dict], graded: dict | None = None,
                    malformed: dict | None = None) -> list[dict]:
    """A trial failed, score 0, for each task of each run folder without a verdict of it: a run that ended
    without a verdict (the cluster failed, the run was interrupted or killed), whose verdict.json is
    malformed (`malformed`: folder -> why), or whose verdict lacks one of its tasks (`graded`: folder -> its
    verdicts) is a trial, and a failed one; dropped, it would lift pass@k over the runs that did finish. Its
    scenario and tasks come from its run.json, else from its timeline's first step (a run that died before
    run.json), else from its folder (`<results>/<scenario>/<run id>`) and the tasks the other verdicts of
    that scenario were graded on. A run found in two folders (a copy: one scenario, run id and start) is
    refused."""
    graded, malformed = graded or {}, malformed or {}
    out, seen = [], {}
    for folder in runs:
        record = _run_record(folder)
        scenario = record.get("scenario") if isinstance(record.get("scenario"), str) and record.get("scenario") \
            else folder.parent.name
        run_id = record.get("run_id") if isinstance(record.get("run_id"), str) and record.get("run_id") \
            else folder.name
        # one run: its scenario, its id and the moment its timeline began (runs given one --run-id in two
        # results folders began apart; a copy of a run folder did not)
        key = (scenario, run_id, _timeline_began(folder / RUN_MARKER))
        if key in seen:
            raise ScoringError(f"run {printable(run_id)} of scenario `{printable(scenario)}` is there twice: "
                               f"{seen[key]} and {folder} (a copy): a trial counts once; remove one")
        seen[key] = folder
        tasks = record.get("tasks")
        if not (isinstance(tasks, list) and tasks and all(isinstance(t, str) for t in tasks)):
            tasks = None
        if folder in graded:
            have = {v["task"] for v in graded[folder]}
            # a verdict of the run's own: only the tasks the run was run for that it lacks are missing
            if have == {""} and tasks is not None and len(tasks) == 1:
                have = set(tasks)  # a verdict that names no task, of a run of one
            missing = [t for t in tasks or [] if t not in have]
            why = "the verdict lacks this task"
        else:
            if tasks is None:
                tasks = sorted({v["task"] for v in verdicts if v["scenario"] == scenario}) or [""]
            missing = tasks
            why = f"malformed verdict: {malformed[folder]}" if folder in malformed else \
                record.get("status") if isinstance(record.get("status"), str) else "unfinished"
        for task in missing:
            out.append({"scenario": scenario, "task": task, "passed": False, "score": 0.0, "no_verdict": True,
                        "status": why, "run": str(folder)})
    return out


def _timeline_began(path: Path) -> str:
    """The time of a run's timeline's first step ("" without one)."""
    try:
        first = read_bounded(path, 64 * 1024, head=True).split("\n", 1)[0]
        event = json.loads(first)
    except (ScoringError, ValueError, RecursionError):
        return ""
    return str(event.get("t") or "") if isinstance(event, dict) else ""


def _timeline_start(path: Path) -> dict:
    """The scenario and tasks a run's timeline records at its start (`run`/`start`), {} without them."""
    try:
        text = read_bounded(path, 4 * 1024 * 1024, head=True)
    except ScoringError:
        return {}
    for line in text.splitlines()[:1000]:
        try:
            event = json.loads(line)
        except (ValueError, RecursionError):
            continue
        if isinstance(event, dict) and event.get("phase") == "run" and event.get("event") == "start" \
                and isinstance(event.get("scenario"), str):
            return {"scenario": event["scenario"], "tasks": event.get("tasks")}
    return {}


def _verdict(path: Path, data: dict) -> dict:
    scenario, passed, score, task = data.get("scenario"), data.get("passed"), data.get("score"), data.get("task")
    if not isinstance(scenario, str) or not scenario:
        raise ScoringError(f"{path}: the verdict has no `scenario` name")
    if task is not None and not isinstance(task, str):
        raise ScoringError(f"{path}: `task` must be a string")
    if not isinstance(passed, bool):
        raise ScoringError(f"{path}: `passed` must be true or false")
    if isinstance(score, bool) or not isinstance(score, (int, float)) or not math.isfinite(score):
        raise ScoringError(f"{path}: `score` must be a number")
    if not 0.0 <= score <= 1.0:
        raise ScoringError(f"{path}: `score` must be between 0 and 1, not {score:g}")
    return {"scenario": scenario, "task": task or "", "passed": passed, "score": float(score)}


def printable(text: str) -> str:
    """A name as a table may show it: control characters (ANSI escapes, line breaks) written as escapes."""
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in text)


def render_table(report: dict) -> str:
    """A fixed-width table: one row per scenario and task, then one overall row per task."""
    ks = report["k"]
    with_tasks = any(s["task"] for s in report["scenarios"])
    missing = any(s.get("no_verdict") for s in report["scenarios"])  # runs that ended without a verdict
    header = ["scenario", *(["task"] if with_tasks else []), "trials", "passed", *(["no verdict"] if missing else []),
              *(f"pass@{k}" for k in ks), "mean ± se"]

    def spread(mean: float, stderr: float | None) -> str:
        return f"{mean:.3f} ± {stderr:.3f}" if stderr is not None else f"{mean:.3f} (1 trial)"

    rows = []
    for s in report["scenarios"]:
        rows.append([printable(s["scenario"]), *([s["task"] or "-"] if with_tasks else []), str(s["trials"]),
                     str(s["passed"]), *([str(s.get("no_verdict", 0))] if missing else []),
                     *(f"{s['pass_at_k'][str(k)]:.3f}" for k in ks),
                     spread(s["mean_score"], s["stderr"])])
    footers = []
    for o in report["overall"]:
        footers.append([f"overall ({o['scenarios']} scenarios)", *([o["task"] or "-"] if with_tasks else []),
                        str(o["trials"]), str(o["passed"]), *([str(o.get("no_verdict", 0))] if missing else []),
                        *(f"{o['pass_at_k'][str(k)]:.3f}" for k in ks),
                        spread(o["mean_score"], o["stderr"]) if o["stderr"] is not None or o["scenarios"] == 1
                        else f"{o['mean_score']:.3f}"])
    widths = [max(len(r[i]) for r in [header, *rows, *footers]) for i in range(len(header))]

    def line(cells: list[str]) -> str:
        return "  ".join(c.ljust(w) if i == 0 or (with_tasks and i == 1) else c.rjust(w)
                         for i, (c, w) in enumerate(zip(cells, widths))).rstrip()

    rule = "  ".join("-" * w for w in widths)
    return "\n".join([line(header), rule, *(line(r) for r in rows), rule, *(line(f) for f in footers)]) + "\n"
