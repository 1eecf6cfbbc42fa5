"""`itbench score`: verdicts aggregated into pass@k and mean score."""

from __future__ import annotations

from pathlib import Path

import click

from .common import UserError


@click.command("score")
@click.argument("results", type=click.Path(file_okay=False))
@click.option("--k", "ks", type=int, multiple=True, help="pass@k for this k too (repeatable); pass@1 is always shown.")
@click.option("--format", "fmt", type=click.Choice(("human", "json")), default="human", show_default=True,
              help="human: a table; json: for tools.")
def command(results: str, ks: tuple[int, ...], fmt: str) -> None:
    """Aggregate verdicts (one JSON file per trial) into pass@k and mean score ± standard error.

    Every *.json below RESULTS is a verdict of `evaluator.py` (scenario, passed, score), except in
    the run folders of `itbench run` (they hold timeline.jsonl), where only verdict.json is one;
    trials are grouped by scenario. Every run folder is a trial of each of its tasks: one without a
    verdict of a task (unfinished, its verdict.json malformed or lacking the task) is a failed one.
    A run found in two folders (a copy) is refused. pass@k is the unbiased estimator 1 - C(n-c,k)/C(n,k).

    \b
    Examples:
      itbench score results/ --k 3
      itbench score results/ --k 5 --format json
    """
    import json

    from ..runtime.scoring import ScoringError, aggregate, load_verdicts, notes, render_table

    try:
        verdicts = load_verdicts(Path(results))
        report = aggregate(verdicts, list(ks))
    except ScoringError as exc:
        raise UserError(str(exc)) from exc
    for note in notes(verdicts):  # runs counted as failed trials for a reason the table does not show
        click.echo(f"note: {note}", err=True)
    if fmt == "json":
        click.echo(json.dumps(report, indent=2))
    else:
        click.echo(render_table(report), nl=False)
