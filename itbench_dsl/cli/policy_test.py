"""`itbench policy-test`: Kyverno CLI test suites, offline, with itbench's own Kyverno matcher."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import click

from .common import EXIT_CLEAN, EXIT_ERROR, EXIT_FINDINGS, collect, display


@click.command("policy-test")
@click.argument("paths", nargs=-1, required=True, type=click.Path())
@click.option("--format", "fmt", type=click.Choice(("human", "json")), default="human", show_default=True,
              help="human: a table per suite, like `kyverno test`; json: for tools.")
@click.option("--failed-only", is_flag=True, help="In the table, show only the results that were not met.")
def command(paths: tuple[str, ...], fmt: str, failed_only: bool) -> None:
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

    from ..runtime import kyverno

    suites = collect(paths, "kyverno-test.yaml")

    def load_yaml(name: str) -> list:
        try:
            text = Path(name).read_text(encoding="utf-8")
            return [d for d in yaml.safe_load_all(text) if d is not None]
        except UnicodeDecodeError as exc:
            raise kyverno.KyvernoError(f"{display(Path(name))}: not UTF-8 text") from exc
        except yaml.YAMLError as exc:
            raise kyverno.KyvernoError(f"{display(Path(name))}: invalid YAML: {' '.join(str(exc).split())}") from exc

    reports = []
    for suite in suites:
        try:
            docs = load_yaml(str(suite))
        except OSError as exc:
            report = kyverno.SuiteReport(path=display(suite), name="", error=f"cannot read: {exc.strerror or exc}")
        except kyverno.KyvernoError as exc:
            report = kyverno.SuiteReport(path=display(suite), name="", error=str(exc))
        else:
            test = docs[0] if len(docs) == 1 and isinstance(docs[0], dict) else None
            if test is None or not isinstance(test.get("results"), list):
                report = kyverno.SuiteReport(path=display(suite), name="",
                                             error="not a Kyverno test (needs policies, resources and results)")
            else:
                report = kyverno.run_test_suite(test, str(suite.parent), load_yaml, os.path.join)
                report.path = display(suite)
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
