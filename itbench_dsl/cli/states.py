"""`itbench states`: the healthy, faulty and solved states a scenario's self-validation grades, as files."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import click

from .common import EXIT_CLEAN, EXIT_FINDINGS, FORMATS, UserError, collect, display, read, report, summary

STATES = ("healthy", "faulty", "solved")
FILES = tuple(f"{state}.json" for state in STATES)
REPORT = "observe.json"  # --observe: the observed and derived verdicts, compared


@click.command("states")
@click.argument("files", nargs=-1, required=True, type=click.Path(), metavar="SCENARIO...")
@click.option("-o", "--output", "output", required=True, type=click.Path(file_okay=False),
              help="Folder that receives one folder per scenario (DIR/<scenario-name>/) with healthy.json, "
                   "faulty.json and solved.json.")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="human", show_default=True,
              help="How diagnostics are printed.")
@click.option("-q", "--quiet", is_flag=True, help="Print nothing but diagnostics.")
@click.option("--observe", is_flag=True,
              help="Capture the states on a local control plane instead of deriving them (docs/observe.md): "
                   "deploy, inject, apply the first solution with kubectl, grade each state and compare with "
                   "the derived states' verdicts (OUTPUT/<scenario>/observe.json).")
@click.option("--kubeconfig", type=click.Path(dir_okay=False),
              help="--observe: the control plane to use (a kubeconfig of `itbench cluster up`, whose kwok gets "
                   "the faults' stages); without it one is started in a temporary folder and stopped after.")
@click.option("--ready-timeout", type=float, default=90.0, show_default=True,
              help="--observe: seconds the workloads may take to become ready after the deploy.")
def command(files: tuple[str, ...], output: str, fmt: str, quiet: bool, observe: bool, kubeconfig: str | None,
            ready_timeout: float) -> None:
    """Write the states a scenario's self-validation grades: healthy, faulty and solved.

    Each SCENARIO file (or every .itb below a folder) is checked as `itbench check` checks
    it; a scenario without errors becomes OUTPUT/<scenario-name>/ with healthy.json (the topology
    settled), faulty.json (after the fault: changed objects, pods not ready, the expected
    alerts firing) and solved.json (after the revert). They are in the state format of
    `evaluator.py --state` (resources, alerts, policyReports, costs; docs/evaluator.md),
    derived offline with no cluster, and the same bytes on every run: inputs to test an
    agent's tooling or an evaluator with. CISO scenarios get the same three files.

    Each scenario's folder is written atomically. An existing OUTPUT/<scenario-name>/ is
    replaced only when it holds nothing but these three files. A file with errors is
    reported and skipped (exit code 1); the other scenarios are still written.

    \b
    Examples:
      itbench states scenarios/sre/otel-cart-deleted-service.itb -o states/
      itbench states scenarios/ -o states/                # every scenario of the library
      itbench compile scenarios/sre/otel-cart-deleted-service.itb -o out/
      itbench evaluate out/otel-cart-deleted-service --task mitigate \\
          --state states/otel-cart-deleted-service/faulty.json     # fails; healthy.json passes
    """
    from ..checking import check_source, drop_allowed
    from ..diagnostics import Diagnostics
    from ..analysis.states import derive

    paths = collect(files)
    diags = Diagnostics()
    checks = []
    found = []  # (path, scenario) of every file without errors
    names: dict[str, str] = {}
    for path in paths:
        one = check_source(read(path), display(path))
        checks.append(one.slim())  # without the bundle's bytes, which are not written here
        diags.extend(one.diagnostics)
        diags.sources.update(one.sources)
        scenario = one.result.scenario
        if one.has_errors:
            continue
        if scenario is None:
            if not quiet and fmt == "human":
                click.echo(f"{display(path)}: an application, not a scenario: no states", err=True)
            continue
        if scenario.name in names:  # refused before anything is written
            raise UserError(f"{display(path)}: scenario `{scenario.name}` is also in {names[scenario.name]}; "
                            "scenario names must be unique")
        names[scenario.name] = display(path)
        found.append((path, scenario))
    drop_allowed(diags, set(), checks)  # the warnings a scenario allows (`metadata { lint_allow = [...] }`)

    out_dir = Path(output)
    for _, scenario in found:  # every destination is checked before anything is written
        refuse(out_dir, scenario.name)
    if observe:
        failed = observe_all(found, out_dir, kubeconfig, ready_timeout, quiet or fmt != "human")
        report(diags, fmt)
        sys.exit(EXIT_FINDINGS if diags.has_errors or failed else EXIT_CLEAN)
    if kubeconfig:
        raise UserError("--kubeconfig is for --observe")
    for path, scenario in found:
        states = derive(scenario)
        where = write_folder(out_dir, scenario.name, {f"{state}.json": encode(states[state]) for state in STATES})
        if not quiet and fmt == "human":
            click.echo(f"wrote {display(path)} -> {display(where)}/ ({', '.join(FILES)})", err=True)
    report(diags, fmt)
    if not quiet and fmt == "human":
        click.echo(summary(diags, len(paths), "checked"), err=True)
    sys.exit(EXIT_FINDINGS if diags.has_errors else EXIT_CLEAN)


def encode(state: dict) -> bytes:
    """A state as the file holds it: JSON, keys sorted, one space of indentation, a final newline."""
    import json

    return (json.dumps(state, indent=1, sort_keys=True) + "\n").encode("utf-8")


def foreign_files(folder: Path) -> list[str]:
    """Entries of `folder` other than the three state files (sorted)."""
    return sorted(p.name for p in folder.iterdir() if p.name not in (*FILES, REPORT) or p.is_symlink() or not p.is_file())


def refuse(out_dir: Path, name: str) -> None:
    """UserError unless `out_dir/name` is absent, or a folder that holds only (some of) the three state files."""
    if name in ("", ".", "..") or "/" in name or os.sep in name or (os.altsep and os.altsep in name):
        raise UserError(f"scenario name `{name}` is not a plain folder name")
    final = out_dir / name
    if final.is_symlink() or (final.exists() and not final.is_dir()):
        raise UserError(f"{display(final)}: exists and is not a folder; remove it or choose another output folder")
    if final.is_dir():
        from ..bundle import foreign_in

        try:
            others = foreign_in(final, foreign_files)
        except OSError as exc:
            raise UserError(f"{display(final)}: cannot read: {exc.strerror or exc}") from exc
        if others:
            raise UserError(f"{display(final)}: not empty and not written by `itbench states` (it holds "
                            f"{', '.join(others[:3])}{', ...' if len(others) > 3 else ''}); choose another folder")


def write_folder(out_dir: Path, name: str, files: dict[str, bytes]) -> Path:
    """Write `files` as `out_dir/name/` atomically (bundle.write_folder), replacing only a folder of state files."""
    from ..bundle import BundleError, write_folder as write

    refuse(out_dir, name)

    try:
        return write(out_dir / name, files, lambda folder: not foreign_files(folder), "a folder of `itbench states` files")
    except BundleError as exc:
        raise UserError(str(exc)) from exc


def observe_all(found: list, out_dir: Path, kubeconfig: str | None, ready_timeout: float, quiet: bool) -> int:
    """`--observe`: each scenario observed on one control plane (run/observe.py); the number that differ from
    their derived states or could not be observed for a failure."""
    import contextlib
    import json
    import tempfile

    from ..bundle import write_bundle
    from ..compiler import compile_source
    from ..diagnostics import Diagnostics
    from ..run import ClusterError
    from ..run.local import LocalClusterError, down, up
    from ..run.local.plane import restage
    from ..run.observe import kubectl_path, observe_scenario

    counts = {"agree": 0, "differ": 0, "unobservable": 0, "ungraded": 0, "failed": 0}
    with tempfile.TemporaryDirectory(prefix="itbench-observe-") as temporary, contextlib.ExitStack() as stack:
        work = Path(temporary)
        if kubeconfig:
            folder = Path(kubeconfig).absolute().parent
            cluster_dir = folder if (folder / "state.json").is_file() else None
            if cluster_dir is not None:  # kwok's default stages back, once, after the last scenario
                stack.callback(lambda: restage(cluster_dir, [], say=lambda _m: None))
            else:
                click.echo(f"{display(kubeconfig)}: not a control plane of `itbench cluster up`: kwok's stages "
                           "cannot be set, pods become Ready whatever the fault", err=True)
        else:
            cluster_dir = work / "cluster"
            try:
                started = up(cluster_dir)
            except LocalClusterError as exc:
                raise UserError(str(exc)) from exc
            stack.callback(lambda: down(cluster_dir))
            kubeconfig = str(started.kubeconfig)
        for path, scenario in found:
            result = compile_source(read(path), display(path), Diagnostics())
            bundle = write_bundle(work / "bundles", scenario.name, result.files)
            try:
                obs = observe_scenario(scenario, bundle, kubeconfig, cluster_dir=cluster_dir,
                                       kubectl=kubectl_path(cluster_dir), work=work / "runs" / scenario.name,
                                       ready_timeout=ready_timeout, progress=None if quiet else sys.stderr,
                                       restore_stages=False)
            except (ClusterError, LocalClusterError) as exc:
                raise UserError(f"{display(path)}: {exc}") from exc
            files = {f"{name}.json": encode(state) for name, state in obs.states.items()}
            files[REPORT] = (json.dumps(obs.report(), indent=1, sort_keys=True) + "\n").encode("utf-8")
            where = write_folder(out_dir, scenario.name, files)
            key = ("agree" if obs.agree else "differ") if obs.status == "observed" else obs.status
            counts[key] += 1
            if not quiet:
                line = {"agree": "derived and observed verdicts agree", "differ": "; ".join(obs.differences),
                        "unobservable": obs.detail, "ungraded": obs.detail, "failed": obs.detail}[key]
                click.echo(f"{display(path)}: {key}: {line} ({obs.seconds:.0f} s) -> {display(where)}/", err=True)
    if not quiet:
        click.echo(f"{len(found)} scenario(s) observed: {counts['agree']} agree with their derived states, "
                   f"{counts['differ']} differ, {counts['unobservable']} unobservable here, {counts['ungraded']} with no "
                   f"task graded on the state, {counts['failed']} failed",
                   err=True)
    return counts["differ"] + counts["failed"]
