"""Aggregating evaluator verdicts over trials: pass@k and mean score with its standard error.

Standard library only. pass@k uses the unbiased estimator of Chen et al. (2021): with n trials of
which c passed, pass@k = 1 - C(n-c, k) / C(n, k), computed exactly with integers (math.comb)
and turned into a float once. The standard error is the sample standard deviation over sqrt(n)
(0 for a single trial).
"""

from __future__ import annotations

import json
import math
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
    trials: int
    passed: int
    mean: float
    stderr: float
    pass_at: dict[int, float] = field(default_factory=dict)  # k -> pass@k (only the k <= trials)

    def to_json(self) -> dict:
        return {"scenario": self.scenario, "trials": self.trials, "passed": self.passed,
                "mean_score": self.mean, "stderr": self.stderr,
                "pass_at_k": {str(k): v for k, v in sorted(self.pass_at.items())}}


def aggregate(verdicts: list[dict], ks: list[int]) -> dict:
    """Per scenario and overall figures from verdicts ({scenario, passed, score, ...}).

    k = 1 is always computed. A requested k larger than a scenario's trial count is refused with
    the scenario named, so a table never mixes estimators over different k silently. Overall
    pass@k is the mean of the per-scenario values (each scenario weighs the same, whatever its
    trial count); the overall mean score is the mean of the scenarios' means, with the standard
    error across scenarios.
    """
    ks = sorted({1, *ks})
    for k in ks:
        if k < 1:
            raise ScoringError(f"--k {k}: k must be at least 1")
    groups: dict[str, list[dict]] = {}
    for verdict in verdicts:
        groups.setdefault(verdict["scenario"], []).append(verdict)
    if not groups:
        raise ScoringError("no verdicts to score")
    scenarios = []
    for name in sorted(groups):
        trials = groups[name]
        n, c = len(trials), sum(1 for t in trials if t["passed"] is True)
        too_few = [k for k in ks if k > n]
        if too_few:
            raise ScoringError(f"scenario `{name}` has {n} trial{'s' * (n != 1)}: pass@{too_few[0]} needs at least "
                               f"{too_few[0]}")
        mean, stderr = mean_and_stderr([float(t["score"]) for t in trials])
        scenarios.append(ScenarioScore(name, n, c, mean, stderr, {k: pass_at_k(n, c, k) for k in ks}))
    overall_mean, overall_stderr = mean_and_stderr([s.mean for s in scenarios])
    overall = {
        "scenarios": len(scenarios), "trials": sum(s.trials for s in scenarios),
        "passed": sum(s.passed for s in scenarios), "mean_score": overall_mean, "stderr": overall_stderr,
        "pass_at_k": {str(k): math.fsum(s.pass_at[k] for s in scenarios) / len(scenarios) for k in ks},
    }
    return {"k": ks, "scenarios": [s.to_json() for s in scenarios], "overall": overall}


def load_verdicts(folder: Path) -> list[dict]:
    """Every verdict JSON file below `folder` (*.json, sorted), checked for the fields scoring reads."""
    if not folder.is_dir():
        raise ScoringError(f"{folder}: not a folder")
    files = sorted(p for p in folder.rglob("*.json") if p.is_file())
    if not files:
        raise ScoringError(f"{folder}: no .json verdict files in this folder")
    verdicts = []
    for path in files:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise ScoringError(f"{path}: not a readable JSON file: {exc}") from exc
        if not isinstance(data, dict):
            raise ScoringError(f"{path}: a verdict is a JSON object")
        scenario, passed, score = data.get("scenario"), data.get("passed"), data.get("score")
        if not isinstance(scenario, str) or not scenario:
            raise ScoringError(f"{path}: the verdict has no `scenario` name")
        if not isinstance(passed, bool):
            raise ScoringError(f"{path}: `passed` must be true or false")
        if isinstance(score, bool) or not isinstance(score, (int, float)) or not math.isfinite(score):
            raise ScoringError(f"{path}: `score` must be a number")
        verdicts.append({"scenario": scenario, "passed": passed, "score": float(score)})
    return verdicts


def render_table(report: dict) -> str:
    """A fixed-width table: one row per scenario, then the overall row."""
    ks = report["k"]
    header = ["scenario", "trials", "passed", *(f"pass@{k}" for k in ks), "mean ± se"]
    rows = []
    for s in report["scenarios"]:
        rows.append([s["scenario"], str(s["trials"]), str(s["passed"]),
                     *(f"{s['pass_at_k'][str(k)]:.3f}" for k in ks), f"{s['mean_score']:.3f} ± {s['stderr']:.3f}"])
    o = report["overall"]
    footer = [f"overall ({o['scenarios']} scenarios)", str(o["trials"]), str(o["passed"]),
              *(f"{o['pass_at_k'][str(k)]:.3f}" for k in ks), f"{o['mean_score']:.3f} ± {o['stderr']:.3f}"]
    widths = [max(len(r[i]) for r in [header, *rows, footer]) for i in range(len(header))]

    def line(cells: list[str]) -> str:
        return "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths))).rstrip()

    rule = "  ".join("-" * w for w in widths)
    return "\n".join([line(header), rule, *(line(r) for r in rows), rule, line(footer)]) + "\n"
