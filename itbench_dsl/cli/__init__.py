"""The `itbench` command line.

Exit codes: 0 clean, 1 findings (diagnostics of error severity, or files `fmt --check`
would change), 2 usage, I/O or internal errors. No traceback reaches a user unless
`--debug` is given. Only commands that talk to a cluster may import the kubernetes client.

Every command lives in its own module of this package, registered in COMMANDS; the group imports a
command's module only when the command runs or `--help` lists it, so that `itbench --version` and
`itbench --help` start fast. What the commands share is in `common.py`. A command module imports
nothing heavy (the compiler, lark, jsonschema, jinja2, yaml) at its top, only inside the command.
"""

from __future__ import annotations

import contextlib
import importlib
import sys

import click

from ..version import __version__
from .common import EXIT_CLEAN, EXIT_ERROR, EXIT_FINDINGS  # noqa: F401  (the exit codes, for callers)

# name -> "module:attribute" of the click command; `itbench --help` lists exactly these, sorted
COMMANDS = {
    "compile": "itbench_dsl.cli.compile:command",
    "check": "itbench_dsl.cli.check:command",
    "fmt": "itbench_dsl.cli.fmt:command",
    "explain": "itbench_dsl.cli.explain:command",
    "schema": "itbench_dsl.cli.schema:command",
    "apps": "itbench_dsl.cli.apps:command",
    "faults": "itbench_dsl.cli.faults:command",
    "evaluate": "itbench_dsl.cli.evaluate:command",
    "score": "itbench_dsl.cli.score:command",
    "policy-test": "itbench_dsl.cli.policy_test:command",
    "import": "itbench_dsl.cli.importer:command",
    "generate": "itbench_dsl.cli.generate:command",
    "graph": "itbench_dsl.cli.graph:command",
    "docs": "itbench_dsl.cli.docs:command",
    "lsp": "itbench_dsl.cli.lsp:command",
    "states": "itbench_dsl.cli.states:command",
    "run": "itbench_dsl.cli.run:command",
    "snapshot": "itbench_dsl.cli.snapshot:command",
    "plan": "itbench_dsl.cli.plan:command",
    "cluster": "itbench_dsl.cli.cluster:command",
}


def load_command(name: str) -> click.Command:
    """The click command registered as `name` (its module is imported on the first call)."""
    module, _, attribute = COMMANDS[name].partition(":")
    return getattr(importlib.import_module(module), attribute)


class Group(click.Group):
    """The `itbench` group: its commands are those of COMMANDS, each imported when first asked for."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        return load_command(name) if name in COMMANDS else None

    # A usage error quotes what was typed (`No such option: ...`): escape what a terminal would act on
    def make_context(self, *args, **kwargs) -> click.Context:
        with _terminal_safe_errors():
            return super().make_context(*args, **kwargs)

    def invoke(self, ctx: click.Context):
        with _terminal_safe_errors():
            return super().invoke(ctx)


@contextlib.contextmanager
def _terminal_safe_errors():
    try:
        yield
    except click.ClickException as exc:
        from .common import terminal

        exc.message = terminal(exc.message)
        raise


@click.group(cls=Group, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
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
