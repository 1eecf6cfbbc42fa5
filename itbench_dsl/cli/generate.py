"""`itbench generate`: variants of scenarios from a chain of generators (itbench_dsl/variants/)."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from .common import (EXIT_CLEAN, EXIT_FINDINGS, UserError, collect, display, generate_owner, read, refuse_destination,
                     report, write_atomically)


WHAT = "the output of an earlier `itbench generate`"


def input_path(path: Path) -> str:
    """An input as index.json records it (`parent`): resolved, relative to the current folder when it is below
    or beside it, with `/` separators; the same file named two ways is recorded alike."""
    import os

    resolved = Path(os.path.realpath(path))
    try:
        text = os.path.relpath(resolved, os.path.realpath(os.getcwd()))
    except ValueError:  # another drive
        text = str(resolved)
    return display(Path(text).as_posix()) if os.sep == "/" else display(Path(text)).replace(os.sep, "/")


@click.command("generate")
@click.argument("files", nargs=-1, type=click.Path())
@click.option("--with", "generators", default="", metavar="G[,G...]",
              help="Generators to apply, in order; each one's variants feed the next (e.g. retarget,anonymize).")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of every random choice.")
@click.option("-n", "count", type=click.IntRange(min=1), default=None,
              help="Variants per input and generator (sample: draws per input; noise: variants per input).")
@click.option("-o", "--output", "output", type=click.Path(file_okay=False),
              help="Folder that receives the variants (.itb), index.json and index.csv.")
@click.option("--format", "fmt", type=click.Choice(("human", "concise", "json")), default="human", show_default=True,
              help="How diagnostics are printed.")
@click.option("--list", "list_only", is_flag=True, help="List the available generators and exit.")
@click.option("--progress/--no-progress", "progress", default=None,
              help="Show the variants checked and their rate on stderr (default: when stderr is a terminal).")
def command(files: tuple[str, ...], generators: str, seed: int, count: int | None, output: str | None, fmt: str,
                     list_only: bool, progress: bool | None) -> None:
    """Generate valid, distinct, reproducible variants of scenarios.

    Every variant passes `itbench check` (including self-validation); a generator that cannot
    produce a valid variant says why (W6001) and the run goes on. Variants with the same
    semantic hash (of the canonical IR) as an input or an earlier variant are dropped. OUTPUT
    is written whole or not at all, and replaces only an empty folder or an earlier run's output
    (its index.json lists every file in it); anything else there is refused. Built-in generators: retarget, sweep, sample, compose,
    noise, anonymize, control; others plug in through the entry-point group
    `itbench.generators` (docs/generators.md).

    \b
    Examples:
      itbench generate scenarios/sre/ --with retarget --seed 1 -o variants/
      itbench generate scenarios/sre/otel-ad-jvm-cpu-stress.itb --with sample,anonymize --seed 7 -n 5 -o out/
      itbench generate --list
    """
    from .. import variants as gen
    from ..diagnostics import Diagnostic, Diagnostics
    from ..source import NO_SPAN

    if list_only:
        for name, spec in gen.available().items():
            click.echo(f"{name:12} {spec}")
        return
    names = [n.strip() for n in generators.split(",") if n.strip()]
    if not files:
        raise UserError("no FILE given: `itbench generate FILE... --with G[,G...] -o DIR`")
    if not names:
        raise UserError("--with names no generator (`itbench generate --list` lists them)")
    if not output:
        raise UserError("no output folder: add `-o DIR`")
    # a folder that is not an earlier run's output is refused before anything is generated (and again when written)
    refuse_destination(Path(output), generate_owner(), WHAT)
    diags = Diagnostics()
    chain = []
    for name in names:
        try:
            chain.append((name, gen.load_generator(name)))
        except KeyError as exc:
            raise UserError(str(exc.args[0])) from exc
        except gen.GeneratorError as exc:
            diags.error("E6002", str(exc), "<generators>")
    paths = collect(files)
    parents = []
    for path in paths:
        parent = gen.load_input(read(path), input_path(path), diags)
        if parent is not None:
            parents.append(parent)
    if diags.has_errors:
        report(diags, fmt)
        click.echo("inputs have errors: nothing generated", err=True)
        sys.exit(EXIT_FINDINGS)

    import time

    show = progress if progress is not None else (sys.stderr.isatty() and fmt == "human")
    started = time.monotonic()
    state = {"stage": "", "last": 0.0}

    def line(result, final: bool = False) -> None:
        elapsed = max(time.monotonic() - started, 1e-9)
        text = (f"{state['stage']}: {result.attempted} variant{'s' * (result.attempted != 1)} checked, "
                f"{len(result.skips)} skipped, {result.attempted / elapsed:.1f}/s")
        click.echo(("\r" + text + "   ") if not final else ("\r" + text + "   \n"), err=True, nl=False)

    def on_stage(name: str, total: int) -> None:
        state["stage"] = f"{name} ({total} input{'s' * (total != 1)})"

    def on_variant(result) -> None:
        now = time.monotonic()
        if now - state["last"] >= 0.5:  # a line at most twice a second: the rate, not the noise
            state["last"] = now
            line(result)

    result = None
    try:
        result = gen.run(parents, chain, seed, count, on_stage=on_stage if show else None,
                         on_variant=on_variant if show else None)
    except gen.GeneratorError as exc:
        diags.error("E6002", str(exc), "<generators>")
    finally:
        if show and result is not None:
            line(result, final=True)
    if result is None:
        report(diags, fmt)
        sys.exit(EXIT_FINDINGS)

    spans = {p.path: p.document.name_span for p in parents}
    grouped: dict[tuple[str, str], list[str]] = {}
    for skip in result.skips:
        grouped.setdefault((skip.parent, skip.generator), []).append(skip.reason)
    for (parent, generator), reasons in grouped.items():
        more = f" (and {len(reasons) - 1} more; index.json lists them)" if len(reasons) > 1 else ""
        diags.add(Diagnostic("W6001", f"`{generator}`: {len(reasons)} skip{'s' * (len(reasons) != 1)} for this input: "
                             f"{reasons[0]}{more}", parent, spans.get(parent, NO_SPAN), "skipped"))

    if not result.variants:  # nothing to write: say why, and fail (a CI job that expected variants stops here)
        first = parents[0].path if parents else "<inputs>"
        diags.add(Diagnostic("E6003", f"nothing generated: {gen.why_nothing(result)}", first,
                             spans.get(first, NO_SPAN), "no variant"))
        report(diags, fmt)
        sys.exit(EXIT_FINDINGS)
    files_out = gen.output_files(result, names, seed, count)
    target = Path(output)
    write_atomically(target, files_out, generate_owner(), WHAT)
    report(diags, fmt)
    if fmt == "human":
        click.echo(f"{len(result.variants)} variant{'s' * (len(result.variants) != 1)} of {len(parents)} input"
                   f"{'s' * (len(parents) != 1)} -> {display(target)}/ ({result.duplicates} duplicate"
                   f"{'s' * (result.duplicates != 1)} removed, {len(result.skips)} skipped"
                   + (f", {result.unraisable} of them expecting an alert their faults cannot raise"
                      if result.unraisable else "") + ")", err=True)
    sys.exit(EXIT_CLEAN)
