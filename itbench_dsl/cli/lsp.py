"""`itbench lsp`: the language server, over standard input and output."""

from __future__ import annotations

import click

from .common import UserError

INSTALL_HINT = 'the language server needs pygls; install it with `pip install "itbench-dsl[lsp]"` (or `pip install pygls`)'


@click.command("lsp")
@click.option("--stdio", is_flag=True, help="Use standard input and output (the default and only transport).")
def command(stdio: bool) -> None:
    """Run the language server for .itb files (diagnostics, hover, completion, formatting).

    It speaks the Language Server Protocol over standard input and output; an editor
    starts it (docs/editors.md shows how for VS Code, Neovim and others).

    \b
    Example:
      itbench lsp          # what an editor runs
    """
    try:
        import lsprotocol  # noqa: F401
        import pygls  # noqa: F401
    except ImportError as exc:
        raise UserError(INSTALL_HINT) from exc
    from ..lsp import serve

    serve()
