"""`itbench fmt`: .itb files in the canonical layout."""

from __future__ import annotations

import sys

import click

from .common import (
    EXIT_CLEAN,
    EXIT_FINDINGS,
    collect,
    display,
    read,
    replace_file,
    report,
    terminal,
)


@click.command("fmt")
@click.argument("paths", nargs=-1, required=True, type=click.Path())
@click.option("--check", "check_only", is_flag=True, help="Change nothing; exit 1 if a file is not formatted.")
@click.option("--diff", "show_diff", is_flag=True, help="Change nothing; print what would change.")
def command(paths: tuple[str, ...], check_only: bool, show_diff: bool) -> None:
    """Format .itb files in the canonical layout (comments are kept).

    \b
    Examples:
      itbench fmt scenarios/
      itbench fmt --check scenarios/      # in CI
    """
    import difflib

    from ..diagnostics import Diagnostics
    from ..parser import decode, parse_source
    from ..printer import print_document

    files = collect(paths)
    diags = Diagnostics()
    changed = []
    for path in files:
        data = read(path)
        source = decode(data, display(path), diags)
        document = parse_source(source, diags) if source is not None else None
        if document is None:
            continue
        formatted = print_document(document, source.text)
        if formatted == source.text:
            continue
        changed.append(path)
        if show_diff:
            diff = difflib.unified_diff(source.text.splitlines(True), formatted.splitlines(True),
                                        f"a/{display(path)}", f"b/{display(path)}")
            click.echo(terminal("".join(diff)), nl=False)  # the old lines may hold raw escapes
        elif check_only:
            click.echo(f"would reformat {display(path)}", err=True)
        else:
            replace_file(path, formatted)
            click.echo(f"reformatted {display(path)}", err=True)
    report(diags, "human")
    if diags.has_errors:
        sys.exit(EXIT_FINDINGS)
    if (check_only or show_diff) and changed:
        sys.exit(EXIT_FINDINGS)
    sys.exit(EXIT_CLEAN)
