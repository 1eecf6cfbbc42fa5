"""One run reports every error of a file: the parse resumes after a syntax error (parser.parse_recovering)
and what parsed is checked (compiler.check_after_syntax_errors), without the errors that only follow from a
statement the parse dropped. The fixtures under tests/cases/errors show the renderings; these tests pin
the counts, the places and the drivers (the command line, the language server's analysis)."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from itbench_dsl import lsp
from itbench_dsl.checking import check_source
from itbench_dsl import cli as cli_module

FOUR = Path(__file__).resolve().parents[1] / "cases/errors/E1002-four-mistakes-one-run/input.itb"

HEAD = '''scenario "shop-cart" {
  domain sre
  complexity low
  description "The cart deployment is scaled to zero."
'''


def errors(text: str) -> list:
    return [d for d in check_source(text.encode(), "input.itb").diagnostics if d.severity == "error"]


def test_four_independent_mistakes_are_four_errors_in_one_run():
    found = errors(FOUR.read_text())
    assert sorted(d.code for d in found) == ["E1002", "E2003", "E2006", "E2008"]
    assert sorted(d.span.line for d in found) == [5, 11, 15, 18]


def test_the_language_server_reports_them_all_too():
    analysis = lsp.analyze(FOUR.read_text(), "input.itb")
    assert sorted(d.code for d in analysis.diagnostics if d.severity == "error") == ["E1002", "E2003", "E2006", "E2008"]


def test_the_command_line_reports_them_all(tmp_path):
    path = tmp_path / "four.itb"
    path.write_bytes(FOUR.read_bytes())
    result = CliRunner().invoke(cli_module.cli, ["check", "--format", "concise", str(path)])
    assert result.exit_code == 1
    lines = [line for line in result.stdout.splitlines() if "error[" in line]
    assert sorted(line.split("error[")[1][:5] for line in lines) == ["E1002", "E2003", "E2006", "E2008"]


def test_three_syntax_errors_in_three_statements_are_three_errors():
    text = HEAD + '''  tags ["a" "b"]
  topology {
    namespace "shop"
    deployment "cart" {
      image = "ghcr.io/example/cart:1.0"
      replicas = = 2
    }
  }
  fault scaled_to_zero on deployment "cart" { after 5m }
}
'''
    found = errors(text)
    assert [(d.code, d.span.line) for d in found] == [("E1002", 5), ("E1002", 10), ("E1002", 13)]


def test_a_dropped_statement_does_not_cascade():
    # the broken object is dropped: the fault on it and the root cause naming it are not reported as unknown
    text = HEAD + '''  topology {
    namespace "shop"
    deployment "cart" {
      image = "ghcr.io/example/cart:1.0"
      replicas = = 2
    }
  }
  fault scaled_to_zero on deployment "cart"
  expect {
    root_cause deployment "cart"
  }
}
'''
    found = errors(text)
    assert [(d.code, d.span.line) for d in found] == [("E1002", 9)]


def test_a_missing_brace_is_reported_where_it_is_missing_and_the_rest_is_checked():
    text = HEAD + '''  topology {
    namespace "shop"
    deployment "cart" {
      image = "ghcr.io/example/cart:1.0"
    service "cart" {
      port "http" = 8080
    }
  }
  fault scaled_to_zero on deployment "kart"
}
'''
    found = errors(text)
    assert [(d.code, d.span.line) for d in found] == [("E1004", 8), ("E2003", 13)]
    assert found[0].span.column == len('      image = "ghcr.io/example/cart:1.0"') + 1
    assert found[0].notes[0].span.line == 7  # the `{` it belongs to


def test_a_closed_list_written_over_several_lines_is_not_a_missing_bracket():
    text = HEAD + '''  tags ["a",
"b"]
  topology {
    namespace "shop"
    deployment "cart" { image = "x" 4 }
  }
}
'''
    found = errors(text)
    assert [d.code for d in found] == ["E1002"] and found[0].span.line == 9


def test_recovery_is_deterministic_and_bounded():
    text = HEAD + "  topology {\n" + "    deployment = = =\n" * 60 + "  }\n}\n"
    first = check_source(text.encode(), "input.itb").diagnostics
    again = check_source(text.encode(), "input.itb").diagnostics
    assert first == again
    assert 1 <= len(first) <= 20
