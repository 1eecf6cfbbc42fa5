"""The `itbench` command line.

Exit codes: 0 clean, 1 findings (diagnostics of error severity, or files `fmt --check`
would change), 2 usage, I/O or internal errors. No traceback reaches a user unless
`--debug` is given. Only commands that talk to a cluster may import the kubernetes client.
"""

from __future__ import annotations

import difflib
import os
import sys
from pathlib import Path

import click

from . import __version__

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2
FORMATS = ("human", "concise", "json", "github", "sarif")  # diagnostics.RENDERERS, without importing it here
HINT_LEVELS = ("none", "topology", "localized")  # backends/prompt.HINT_LEVELS, without importing Jinja here


class UserError(click.ClickException):
    """An I/O or usage problem, reported as one line and exit code 2."""

    exit_code = EXIT_ERROR

    def show(self, file=None) -> None:
        click.echo(f"error: {self.format_message()}", err=True)


def _collect(paths: tuple[str, ...], pattern: str = "*.itb") -> list[Path]:
    """Files named on the command line, and every file matching `pattern` below each folder, in sorted order."""
    files: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            found = sorted(p for p in path.rglob(pattern) if p.is_file())
            if not found:
                raise UserError(f"{raw}: no {pattern.lstrip('*')} files in this folder")
            files.extend(found)
        elif path.is_file():
            files.append(path)
        elif path.exists():
            raise UserError(f"{raw}: not a regular file")
        else:
            raise UserError(f"{raw}: no such file or folder")
    return files


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as exc:
        raise UserError(f"{path}: cannot read: {exc.strerror or exc}") from exc


def _display(path: Path) -> str:
    try:
        return os.path.relpath(path)
    except ValueError:
        return str(path)


def _report(diags, fmt: str) -> None:
    from .diagnostics import RENDERERS, render_human

    if fmt == "human":
        color = sys.stderr.isatty() and "NO_COLOR" not in os.environ
        text = render_human(diags, color=color)
        if text:
            click.echo(text, err=True, nl=False)
        return
    text = RENDERERS[fmt](diags)
    if text:
        click.echo(text, nl=False)


def _summary(diags, files: int, verb: str) -> str:
    errors = len(diags.errors())
    warnings = sum(1 for d in diags.items if d.severity == "warning")
    parts = [f"{files} file{'s' * (files != 1)} {verb}"]
    parts.append(f"{errors} error{'s' * (errors != 1)}")
    if warnings:
        parts.append(f"{warnings} warning{'s' * (warnings != 1)}")
    return ", ".join(parts)


# Commands that live in their own module under itbench_dsl/commands/, imported only when used
# (or when `--help` lists them), so that `itbench --version` and the common commands start fast.
LAZY_COMMANDS = {
    "import": "itbench_dsl.commands.importer:import_command",
    "generate": "itbench_dsl.commands.generate:generate_command",
    "graph": "itbench_dsl.commands.graph:graph_command",
    "docs": "itbench_dsl.commands.docs:docs_command",
    "lsp": "itbench_dsl.commands.lsp:lsp_command",
}


class LazyGroup(click.Group):
    """A click group that imports a command's module the first time the command is asked for."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(set(super().list_commands(ctx)) | {n for n in LAZY_COMMANDS if self._available(n)})

    def get_command(self, ctx: click.Context, name: str):
        command = super().get_command(ctx, name)
        if command is None and name in LAZY_COMMANDS and self._available(name):
            import importlib

            module, _, attr = LAZY_COMMANDS[name].partition(":")
            command = getattr(importlib.import_module(module), attr)
            self.add_command(command, name)
        return command

    @staticmethod
    def _available(name: str) -> bool:
        import importlib.util

        module = LAZY_COMMANDS[name].partition(":")[0]
        try:
            return importlib.util.find_spec(module) is not None
        except ModuleNotFoundError:
            return False


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, "--version", prog_name="itbench")
@click.option("--debug", is_flag=True, help="Show Python tracebacks for internal errors.")
@click.pass_context
def cli(ctx: click.Context, debug: bool) -> None:
    """Write ITBench scenarios as short .itb files; compile them to everything a benchmark run needs.

    \b
    A first session:
      itbench check scenarios/                     # check every scenario, write nothing
      itbench compile scenarios/sre/otel-checkout-nonexistent-image.itb -o out/
      itbench fmt --check scenarios/               # are the files formatted?
      itbench explain E2003                        # what does this diagnostic mean?

    Exit codes: 0 clean, 1 findings, 2 usage, I/O or internal errors.
    """
    ctx.obj = {"debug": debug}


@cli.command()
@click.argument("files", nargs=-1, required=True, type=click.Path())
@click.option("-o", "--output", "output", required=True, type=click.Path(file_okay=False),
              help="Folder that receives one bundle folder per scenario (DIR/<scenario-name>/).")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="human", show_default=True,
              help="How diagnostics are printed.")
@click.option("-q", "--quiet", is_flag=True, help="Print nothing but diagnostics.")
@click.option("--hints", type=click.Choice(HINT_LEVELS), default="none", show_default=True,
              help="What the agent's prompt gives away: none (the application and namespaces), topology (also the "
                   "components and their calls), localized (also where the symptoms are, never the root cause).")
@click.option("--target", type=click.Choice(("bundle", "itbench")), default="bundle", show_default=True,
              help="bundle: the full bundle; itbench: only ITBench's own files, in its layout (OUTPUT/<ITBench folder>/).")
def compile(files: tuple[str, ...], output: str, fmt: str, quiet: bool, hints: str, target: str) -> None:
    """Compile scenarios into bundles.

    Each FILE (or every .itb below a folder) becomes OUTPUT/<scenario-name>/ with
    manifests/, inject/, revert/, itbench/ (scenario.yaml, groundtruth.yaml,
    groundtruth_v1.yaml), prompt.md, scenario.json and bundle.lock. A bundle is written
    atomically: a scenario with errors leaves nothing behind.

    With --target itbench, each scenario becomes OUTPUT/<folder>/ holding only ITBench's files
    (scenario.yaml, groundtruth.yaml, groundtruth_v1.yaml; for CISO also info.json, input.json,
    goal.txt, manifests/, tasks/ and eval_config.yaml), named as ITBench names it (scenario_<id>
    for SRE and FinOps, the id for CISO, the scenario's name when it has no ITBench id).

    \b
    Example:
      itbench compile scenarios/sre/otel-checkout-nonexistent-image.itb -o out/
      itbench compile scenarios/ciso/ -o itbench-out/ --target itbench
    """
    from .backends.itbench_ciso import export_files, export_folder
    from .bundle import BundleError, write_bundle
    from .compiler import compile_source
    from .diagnostics import Diagnostics

    paths = _collect(files)
    diags = Diagnostics()
    compiled = []
    names: dict[str, str] = {}
    for path in paths:
        before = len(diags.errors())
        result = compile_source(_read(path), _display(path), diags, hints=hints)
        if len(diags.errors()) > before or not result.files:
            continue
        folder = result.name if target == "bundle" else export_folder(result.scenario)
        if folder in names:  # refused before anything is written
            what = f"scenario `{folder}`" if target == "bundle" else f"ITBench folder `{folder}`"
            raise UserError(f"{_display(path)}: {what} is also compiled from {names[folder]}; "
                            f"scenario names{'' if target == 'bundle' else ' and ITBench ids'} must be unique")
        names[folder] = _display(path)
        compiled.append((path, folder, result.files if target == "bundle" else export_files(result.files)))
    for path, folder, written in compiled:
        try:
            where = write_bundle(Path(output), folder, written)
        except BundleError as exc:
            raise UserError(str(exc)) from exc
        if not quiet and fmt == "human":
            click.echo(f"compiled {_display(path)} -> {_display(where)}/ ({len(written)} files)", err=True)
    _report(diags, fmt)
    if not quiet and fmt == "human":
        click.echo(_summary(diags, len(paths), "compiled"), err=True)
    sys.exit(EXIT_FINDINGS if diags.has_errors else EXIT_CLEAN)


@cli.command()
@click.argument("paths", nargs=-1, type=click.Path())
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="human", show_default=True,
              help="human: with source excerpts; concise: one line each; json: for tools; github: GitHub Actions "
                   "annotations; sarif: SARIF 2.1.0 (code scanning).")
@click.option("--strict", is_flag=True, help="Warnings count as errors for the exit code.")
@click.option("--ignore", "ignored", multiple=True, metavar="CODE",
              help="Do not report this warning code (repeatable, or comma-separated: --ignore W2002,W2004).")
@click.option("-j", "--jobs", "processes", type=click.IntRange(min=1), default=None,
              help="Processes to check with (default: one per CPU core, up to 8, from 48 files on).")
@click.option("--hints", type=click.Choice(HINT_LEVELS), default="none", show_default=True,
              help="What the agent's prompt gives away: none (the application and namespaces), topology (also the "
                   "components and their calls), localized (also where the symptoms are, never the root cause).")
def check(paths: tuple[str, ...], fmt: str, strict: bool, ignored: tuple[str, ...], processes: int | None,
          hints: str) -> None:
    """Check scenarios as compile does, then lint them; write nothing.

    Everything compile checks (including output validation), the scenario's self-validation
    (its evaluator fails on the faulty state, passes on the healthy and solved ones), and the
    lint rules (W codes: `itbench explain W2002`) on every file that has no error. A folder
    means every .itb file below it; with no PATH, the `scenarios/` folder of the current folder
    when there is one (a repository's library), else every .itb file below the current folder.

    Warnings can be turned off for a run (--ignore W2002) or for one scenario, in its metadata:
    `metadata { lint_allow = ["W2002"] }` (a scenario with deliberate red herrings, say).
    Errors cannot.

    Exit code 0 clean (warnings allowed), 1 when an error is found (or a warning, with
    --strict), 2 for usage and I/O errors.

    \b
    Examples:
      itbench check                                  # scenarios/ (or every .itb here)
      itbench check --strict --format github scenarios/
      itbench check --format sarif scenarios/ > itbench.sarif
    """
    from .checking import check_files, workers_for
    from .codes import CODES

    ignore = {c.strip().upper() for value in ignored for c in value.split(",") if c.strip()}
    for code in sorted(ignore):
        if code not in CODES:
            raise click.UsageError(f"--ignore {code}: no such diagnostic code (`itbench explain` lists them)")
        if CODES[code].severity != "warning":
            raise click.UsageError(f"--ignore {code}: only warnings can be ignored, {code} is an error")
    if not paths:
        paths = ("scenarios",) if Path("scenarios").is_dir() else (".",)
        if paths == (".",) and not any(p.is_file() for p in Path(".").rglob("*.itb")):
            raise click.UsageError("no PATH given, and no scenarios/ folder or .itb file below the current folder")
    files = _collect(paths)
    jobs = [(_display(path), _read(path)) for path in files]
    diags, _ = check_files(jobs, hints, workers_for(len(jobs), processes), ignore)
    _report(diags, fmt)
    if fmt in ("human", "github"):
        click.echo(_summary(diags, len(files), "checked"), err=True)
    failed = diags.has_errors or (strict and bool(diags.items))
    sys.exit(EXIT_FINDINGS if failed else EXIT_CLEAN)


@cli.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path())
@click.option("--check", "check_only", is_flag=True, help="Change nothing; exit 1 if a file is not formatted.")
@click.option("--diff", "show_diff", is_flag=True, help="Change nothing; print what would change.")
def fmt(paths: tuple[str, ...], check_only: bool, show_diff: bool) -> None:
    """Format .itb files in the canonical layout (comments are kept).

    \b
    Examples:
      itbench fmt scenarios/
      itbench fmt --check scenarios/      # in CI
    """
    from .diagnostics import Diagnostics
    from .parser import decode, parse_source
    from .printer import print_document

    files = _collect(paths)
    diags = Diagnostics()
    changed = []
    for path in files:
        data = _read(path)
        source = decode(data, _display(path), diags)
        document = parse_source(source, diags) if source is not None else None
        if document is None:
            continue
        formatted = print_document(document, source.text)
        if formatted == source.text:
            continue
        changed.append(path)
        if show_diff:
            click.echo("".join(difflib.unified_diff(source.text.splitlines(True), formatted.splitlines(True),
                                                    f"a/{_display(path)}", f"b/{_display(path)}")), nl=False)
        elif check_only:
            click.echo(f"would reformat {_display(path)}", err=True)
        else:
            replace_file(path, formatted)
            click.echo(f"reformatted {_display(path)}", err=True)
    _report(diags, "human")
    if diags.has_errors:
        sys.exit(EXIT_FINDINGS)
    if (check_only or show_diff) and changed:
        sys.exit(EXIT_FINDINGS)
    sys.exit(EXIT_CLEAN)


def replace_file(path: Path, text: str) -> None:
    """Write `text` to `path` atomically (a temporary file renamed into place)."""
    temporary = path.with_name(f".{path.name}.itbench-tmp")
    try:
        temporary.write_text(text, encoding="utf-8")
        os.replace(temporary, path)
    except OSError as exc:
        temporary.unlink(missing_ok=True)
        raise UserError(f"{path}: cannot write: {exc.strerror or exc}") from exc


@cli.command()
@click.argument("code", required=False)
def explain(code: str | None) -> None:
    """Explain a diagnostic code (E2003), or list them all.

    \b
    Examples:
      itbench explain E2003
      itbench explain            # every code with its title
    """
    from .codes import CODES
    from .codes import explain as explain_code

    if code is None:
        for entry in CODES.values():
            click.echo(f"{entry.code}  {entry.title}")
        return
    page = explain_code(code)
    if page is None:
        raise UserError(f"no diagnostic code {code}; `itbench explain` lists them")
    click.echo(page, nl=False)


@cli.command()
def schema() -> None:
    """Print the JSON Schema of the scenario IR (the scenario.json of every bundle).

    \b
    Example:
      itbench schema > scenario-ir.schema.json
    """
    import json

    from .ir import json_schema

    click.echo(json.dumps(json_schema(), indent=2))


@cli.command()
def apps() -> None:
    """List the applications `use app "NAME"` can import.

    \b
    Example:
      itbench apps
    """
    from .topology import app_names, load_app

    for name in app_names():
        app = load_app(name)[0]
        description = next((s.text for s in app.statements if type(s).__name__ == "Description"), "") if app else ""
        click.echo(f"{name}  {description}")


@cli.command()
def faults() -> None:
    """List the faults `fault KIND on TARGET` accepts, with their ITBench ids.

    \b
    Example:
      itbench faults
    """
    from .faults import FAULTS

    width = max(len(name) for name in FAULTS)
    for kind in FAULTS.values():
        click.echo(f"{kind.name:{width}}  on {'|'.join(kind.targets):24} {kind.itbench_id or '(not in ITBench)'}")
        click.echo(f"{'':{width}}     {kind.summary}")


@cli.command()
@click.argument("bundle", type=click.Path(file_okay=False))
@click.option("--agent-output", "agent_output", type=click.Path(dir_okay=False),
              help="The agent's answer (JSON); leave out to grade the state alone.")
@click.option("--state", "state", required=True, type=click.Path(dir_okay=False),
              help="The state snapshot (JSON): resources, alerts, policyReports, costs.")
@click.option("--task", type=click.Choice(("diagnose", "mitigate")), help="SRE: what to grade (default: from the answer).")
@click.option("--artifact", type=click.Path(dir_okay=False), help="CISO: the agent's policy (Kyverno JSON/YAML or .rego).")
@click.option("--opa-result", "opa_result", type=click.Path(dir_okay=False),
              help="CISO Rego: a recorded `opa eval` result per object.")
@click.option("--gap-only", is_flag=True, help="CISO: grade only the gap, as ITBench does.")
@click.option("--timeout", default=120.0, show_default=True, help="Seconds the evaluator may run.")
def evaluate(bundle: str, agent_output: str | None, state: str, task: str | None, artifact: str | None,
             opa_result: str | None, gap_only: bool, timeout: float) -> None:
    """Run a bundle's evaluator.py on an agent's answer and a state; print its verdict.

    The evaluator runs as the bundle ships it, in a subprocess with this Python, so the
    verdict is the one a benchmark run gets. Exit codes are the evaluator's: 0 it ran (pass
    or fail: see `passed`), 2 its inputs are unusable (the reason on stderr).

    \b
    Example:
      itbench evaluate out/otel-checkout-nonexistent-image --agent-output answer.json --state state.json
    """
    import subprocess

    script = Path(bundle) / "evaluator.py"
    if not Path(bundle).is_dir():
        raise UserError(f"{bundle}: no such bundle folder")
    if not script.is_file():
        raise UserError(f"{bundle}: not a bundle with an evaluator (no evaluator.py); compile the scenario again")
    files = (("--agent-output", agent_output), ("--state", state), ("--artifact", artifact), ("--opa-result", opa_result))
    command = [sys.executable, str(script)]
    for option, value in files:
        if value is None:
            continue
        if not Path(value).is_file():
            raise UserError(f"{option} {value}: no such file")
        command += [option, str(Path(value).resolve())]
    if task is not None:
        command += ["--task", task]
    if gap_only:
        command.append("--gap-only")
    try:
        proc = subprocess.run(command, capture_output=True, text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired as exc:
        raise UserError(f"{script}: the evaluator ran longer than {timeout:g} s") from exc
    except OSError as exc:
        raise UserError(f"{script}: cannot run: {exc.strerror or exc}") from exc
    if proc.stdout:
        click.echo(proc.stdout, nl=False)
    if proc.stderr:
        click.echo(proc.stderr, err=True, nl=False)
    if proc.returncode not in (EXIT_CLEAN, EXIT_ERROR):  # 0 ran, 2 unusable inputs; anything else is a crash
        click.echo(f"error: {script} failed (exit code {proc.returncode})", err=True)
        sys.exit(EXIT_ERROR)
    sys.exit(proc.returncode)


@cli.command()
@click.argument("results", type=click.Path(file_okay=False))
@click.option("--k", "ks", type=int, multiple=True, help="pass@k for this k too (repeatable); pass@1 is always shown.")
@click.option("--format", "fmt", type=click.Choice(("human", "json")), default="human", show_default=True,
              help="human: a table; json: for tools.")
def score(results: str, ks: tuple[int, ...], fmt: str) -> None:
    """Aggregate verdicts (one JSON file per trial) into pass@k and mean score ± standard error.

    Every *.json below RESULTS is a verdict of `evaluator.py` (scenario, passed, score);
    trials are grouped by scenario. pass@k is the unbiased estimator 1 - C(n-c,k)/C(n,k).

    \b
    Examples:
      itbench score results/ --k 3
      itbench score results/ --k 5 --format json
    """
    import json

    from .scoring import ScoringError, aggregate, load_verdicts, render_table

    try:
        report = aggregate(load_verdicts(Path(results)), list(ks))
    except ScoringError as exc:
        raise UserError(str(exc)) from exc
    if fmt == "json":
        click.echo(json.dumps(report, indent=2))
    else:
        click.echo(render_table(report), nl=False)


@cli.command("policy-test")
@click.argument("paths", nargs=-1, required=True, type=click.Path())
@click.option("--format", "fmt", type=click.Choice(("human", "json")), default="human", show_default=True,
              help="human: a table per suite, like `kyverno test`; json: for tools.")
@click.option("--failed-only", is_flag=True, help="In the table, show only the results that were not met.")
def policy_test(paths: tuple[str, ...], fmt: str, failed_only: bool) -> None:
    """Run Kyverno CLI test suites offline with itbench's own Kyverno matcher.

    Each PATH is a kyverno-test.yaml file or a folder: every kyverno-test.yaml below it
    (including .kyverno-test/ folders) is a suite. Each expected result (policy, rule,
    resource, pass/fail/skip) is reported as met or not. Supported: validate rules with
    pattern, anyPattern, deny and preconditions, anchors, wildcards, operators, JMESPath
    variables and autogen rules; a suite using anything else is reported as unsupported,
    with the feature named (docs/policy-test.md).

    Exit codes: 0 every expected result met, 1 some not met or a suite unsupported,
    2 unusable input (no suite found, unreadable or invalid files).

    \b
    Examples:
      itbench policy-test ../shared/reference/kyverno/policy-tests/
      itbench policy-test --format json policies/my-policy/.kyverno-test/kyverno-test.yaml
    """
    import json

    import yaml

    from . import kyverno

    suites = _collect(paths, "kyverno-test.yaml")

    def load_yaml(name: str) -> list:
        try:
            text = Path(name).read_text(encoding="utf-8")
            return [d for d in yaml.safe_load_all(text) if d is not None]
        except UnicodeDecodeError as exc:
            raise kyverno.KyvernoError(f"{_display(Path(name))}: not UTF-8 text") from exc
        except yaml.YAMLError as exc:
            raise kyverno.KyvernoError(f"{_display(Path(name))}: invalid YAML: {' '.join(str(exc).split())}") from exc

    reports = []
    for suite in suites:
        try:
            docs = load_yaml(str(suite))
        except OSError as exc:
            report = kyverno.SuiteReport(path=_display(suite), name="", error=f"cannot read: {exc.strerror or exc}")
        except kyverno.KyvernoError as exc:
            report = kyverno.SuiteReport(path=_display(suite), name="", error=str(exc))
        else:
            test = docs[0] if len(docs) == 1 and isinstance(docs[0], dict) else None
            if test is None or not isinstance(test.get("results"), list):
                report = kyverno.SuiteReport(path=_display(suite), name="",
                                             error="not a Kyverno test (needs policies, resources and results)")
            else:
                report = kyverno.run_test_suite(test, str(suite.parent), load_yaml, os.path.join)
                report.path = _display(suite)
        reports.append(report)

    unusable = any(r.error for r in reports)
    all_met = all(r.passed for r in reports)
    if fmt == "json":
        click.echo(json.dumps({
            "suites": [{
                "path": r.path, "name": r.name, "passed": r.passed,
                "unsupported": r.unsupported or None, "error": r.error or None,
                "results": [{"policy": x.policy, "rule": x.rule, "resource": x.resource, "kind": x.kind,
                             "expected": x.expected, "actual": x.actual, "met": x.met, "detail": x.detail}
                            for x in r.results],
            } for r in reports],
            "summary": {"suites": len(reports), "passed": sum(r.passed for r in reports),
                        "results": sum(len(r.results) for r in reports),
                        "met": sum(x.met for r in reports for x in r.results)},
        }, indent=2))
    else:
        for r in reports:
            title = f"{r.path}" + (f" ({r.name})" if r.name else "")
            if r.error:
                click.echo(f"ERROR  {title}: {r.error}")
                continue
            if r.unsupported:
                click.echo(f"UNSUPPORTED  {title}: {r.unsupported}")
                continue
            met = sum(x.met for x in r.results)
            click.echo(f"{'PASS' if r.passed else 'FAIL'}  {title}: {met}/{len(r.results)} results met")
            rows = [x for x in r.results if not (failed_only and x.met)]
            if not rows or (r.passed and failed_only):
                continue
            table = [("ID", "POLICY", "RULE", "RESOURCE", "RESULT", "REASON")]
            for i, x in enumerate(rows, 1):
                reason = "Ok" if x.met else f"Want {x.expected}, got {x.actual}" + (f": {x.detail}" if x.detail else "")
                table.append((str(i), x.policy, x.rule, f"{x.kind}/{x.resource}", "Pass" if x.met else "Fail",
                              reason[:160]))
            widths = [max(len(row[c]) for row in table) for c in range(5)]
            for row in table:
                click.echo("  " + "  ".join(cell.ljust(widths[c]) for c, cell in enumerate(row[:5])) + "  " + row[5])
        passed = sum(r.passed for r in reports)
        click.echo(f"{passed} of {len(reports)} suite(s) passed", err=True)
    sys.exit(EXIT_ERROR if unusable else EXIT_CLEAN if all_met else EXIT_FINDINGS)


def main(argv: list[str] | None = None) -> None:
    debug = "--debug" in (argv if argv is not None else sys.argv[1:])
    try:
        cli.main(args=argv, prog_name="itbench", standalone_mode=False)
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
    except click.ClickException as exc:
        exc.show()
        sys.exit(EXIT_ERROR)
    except click.exceptions.Abort:
        click.echo("aborted", err=True)
        sys.exit(EXIT_ERROR)
    except KeyboardInterrupt:
        sys.exit(130)
    except SystemExit:
        raise
    except BaseException as exc:  # an internal error: never a traceback unless asked for
        if debug:
            raise
        click.echo(f"internal error: {type(exc).__name__}: {exc}\n"
                   "This is a bug in itbench; run again with --debug for the traceback.", err=True)
        sys.exit(EXIT_ERROR)
