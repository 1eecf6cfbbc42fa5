"""`itbench docs`: a page per scenario and the library's index; docs/scenarios/ is current; the folder is
replaced atomically (stale pages go, a failure leaves the previous pages, foreign files stop it)."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from itbench_dsl import cli, ir_text, scenario_docs
from itbench_dsl.compiler import compile_source
from itbench_dsl.diagnostics import Diagnostics

REPO = Path(__file__).resolve().parents[2]
SCENARIOS = REPO / "scenarios"
DOCS = REPO / "docs" / "scenarios"
CASES = REPO / "tests" / "cases" / "graph"


def invoke(*args: str):
    try:
        runner = CliRunner(mix_stderr=False)
    except TypeError:
        runner = CliRunner()
    return runner.invoke(cli.cli, list(args), catch_exceptions=False)


def library_files(folder: Path, out_dir: Path) -> dict[str, str]:
    from itbench_dsl.cli.docs import library_items

    diags = Diagnostics()
    items = library_items(sorted(folder.rglob("*.itb")), out_dir, diags)
    assert not diags.has_errors, [f"{d.path}: {d.message}" for d in diags.errors()]
    return scenario_docs.render_library(items)


def test_docs_scenarios_is_current():
    expected = library_files(SCENARIOS, DOCS)
    hint = f"docs/scenarios/ is stale: run `{scenario_docs.REGENERATE}`"
    assert DOCS.is_dir(), hint
    assert sorted(p.name for p in DOCS.iterdir()) == sorted(expected), hint
    for name, text in expected.items():
        assert (DOCS / name).read_text(encoding="utf-8") == text, f"{hint} ({name} differs)"


@pytest.fixture
def library(tmp_path: Path) -> Path:
    """Two scenarios in a folder of their own."""
    folder = tmp_path / "scenarios" / "sre"
    folder.mkdir(parents=True)
    for case in ("inline-shop", "inline-chaos"):
        shutil.copy(CASES / case / "input.itb", folder / f"{case}.itb")
    return tmp_path / "scenarios"


def test_a_page_says_what_the_scenario_is(library: Path, tmp_path: Path):
    out = tmp_path / "docs" / "scenarios"
    result = invoke("docs", str(library), "-o", str(out))
    assert result.exit_code == 0, result.stderr
    assert sorted(p.name for p in out.iterdir()) == ["README.md", "inline-chaos.md", "inline-shop.md"]
    page = (out / "inline-shop.md").read_text(encoding="utf-8")
    assert page.startswith(scenario_docs.MARKER)
    assert "# inline-shop" in page and "| Domain | SRE |" in page and "| Complexity | medium |" in page
    # the description's quotes and brackets are kept as text, not read as Markdown
    assert '"checkout" and the \\[storefront\\] fail.' in page
    for heading in ("## Picture", "## Fault", "## Expected alerts", "## Root cause", "## Propagation",
                    "## Mitigated when (within 10m)", "## Solution"):
        assert f"\n{heading}\n" in page, heading
    assert "- `nonexistent_image` on `deployment \"cart\"`" in page
    assert "  - image: `ghcr.io/example/cart:0.0.0-missing`" in page
    assert "`HighRequestErrorRate` on `service \"checkout\"`: Checkout \"fails\" \\<fast\\>" in page
    assert "1. `deployment \"cart\"` → `pod \"cart-*\"` — condition: cart has no running pods" in page
    assert "- `deployment \"cart\" ready within 5m`" in page and "- `alert HighRequestErrorRate not firing`" in page
    assert "1. Undo the rollout: `kubectl -n shop rollout undo deployment/cart`" in page
    block = re.search(r"```mermaid\n(.*?)```", page, re.S).group(1)
    from itbench_dsl import graph

    scenario = compile_source((CASES / "inline-shop" / "input.itb").read_bytes(), "x.itb", Diagnostics()).scenario
    assert block == graph.render(scenario, "mermaid")
    link = re.search(r"\| Source \| \[[^\]]+\]\(([^)]+)\) \|", page).group(1)
    assert (out / link).resolve() == (library / "sre" / "inline-shop.itb").resolve()


def test_the_index_lists_every_scenario(library: Path, tmp_path: Path):
    out = tmp_path / "pages"
    assert invoke("docs", str(library), "-o", str(out)).exit_code == 0
    index = (out / "README.md").read_text(encoding="utf-8")
    rows = [line for line in index.splitlines() if line.startswith("| [")]
    assert [re.match(r"\| \[([^\]]+)\]", r).group(1) for r in rows] == ["inline-chaos", "inline-shop"]
    shop = next(r for r in rows if "inline-shop" in r)
    cells = [c.strip() for c in shop.strip("|").split(" | ")]
    assert cells[1:6] == ["SRE", "medium", "`nonexistent_image`", "`HighRequestErrorRate`", "—"]
    for row in rows:
        for target in re.findall(r"\]\(([^)]+)\)", row):
            assert (out / target).exists(), target
    assert "2 scenarios: 2 SRE." in index


def test_stale_pages_go_and_output_is_deterministic(library: Path, tmp_path: Path):
    out = tmp_path / "pages"
    assert invoke("docs", str(library), "-o", str(out)).exit_code == 0
    first = {p.name: p.read_bytes() for p in out.iterdir()}
    assert invoke("docs", str(library), "-o", str(out)).exit_code == 0
    assert {p.name: p.read_bytes() for p in out.iterdir()} == first
    (library / "sre" / "inline-chaos.itb").unlink()
    assert invoke("docs", str(library), "-o", str(out)).exit_code == 0
    assert sorted(p.name for p in out.iterdir()) == ["README.md", "inline-shop.md"]
    assert "inline-chaos" not in (out / "README.md").read_text(encoding="utf-8")
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []  # no staging folder left


def test_errors_leave_the_previous_pages(library: Path, tmp_path: Path):
    out = tmp_path / "pages"
    assert invoke("docs", str(library), "-o", str(out)).exit_code == 0
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    broken = library / "sre" / "inline-shop.itb"
    broken.write_text(broken.read_text(encoding="utf-8").replace('"cart" {\n    image = "ghcr.io/example/cart:0',
                                                                  '"kart" {\n    image = "ghcr.io/example/cart:0'),
                      encoding="utf-8")
    result = invoke("docs", str(library), "-o", str(out))
    assert result.exit_code == 1
    assert re.search(r"inline-shop\.itb:\d+:\d+", result.stderr) and "nothing written" in result.stderr
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before


def test_a_folder_with_other_files_is_refused(library: Path, tmp_path: Path):
    out = tmp_path / "docs"
    out.mkdir()
    (out / "language.md").write_text("# hand-written\n", encoding="utf-8")
    result = invoke("docs", str(library), "-o", str(out))
    assert result.exit_code == 2 and "language.md" in result.stderr
    assert [p.name for p in out.iterdir()] == ["language.md"]


def test_duplicate_scenario_names_are_refused(library: Path, tmp_path: Path):
    shutil.copy(library / "sre" / "inline-shop.itb", library / "copy.itb")
    result = invoke("docs", str(library), "-o", str(tmp_path / "pages"))
    assert result.exit_code == 2 and "inline-shop" in result.stderr and "unique" in result.stderr
    assert not (tmp_path / "pages").exists()


def test_markdown_escaping():
    assert scenario_docs.md("a|b <script> *x* [y](z) `c` &amp;") == \
        "a\\|b \\<script\\> \\*x\\* \\[y\\](z) \\`c\\` &amp;amp;"
    assert scenario_docs.md("two\nlines") == "two lines"
    assert scenario_docs.code("a`b") == "``a`b``"
    assert scenario_docs.code("`x`") == "`` `x` ``"
    assert scenario_docs.code("a|b", in_table=True) == "`a\\|b`"


def test_every_domain_gets_its_sections():
    pages = {}
    for name in ("ciso/cis-5-2-5-host-network-kyverno", "finops/otel-cart-overprovisioned-requests"):
        path = SCENARIOS / f"{name}.itb"
        if not path.exists():
            pytest.skip(f"{path} is not in the library")
        result = compile_source(path.read_bytes(), str(path), Diagnostics())
        pages[name.split("/")[0]] = scenario_docs.page(scenario_docs.Item(result.scenario, f"../../scenarios/{name}.itb"))
    assert "## Control" in pages["ciso"] and "Objects that open the policy gap:" in pages["ciso"]
    assert "policy gap" in pages["ciso"] and "## Fault" not in pages["ciso"]
    assert "## Optimum" in pages["finops"] and "resources.requests.memory" in pages["finops"]


def test_a_control_has_no_root_cause_and_says_so(tmp_path: Path):
    """A scenario with no fault: its page and index name no root cause and no empty fault."""
    controls = []
    for path in sorted(SCENARIOS.rglob("*.itb")):
        result = compile_source(path.read_bytes(), str(path), Diagnostics())
        if result.scenario is not None and not result.scenario.injections() and result.scenario.compliance is None:
            controls.append(scenario_docs.Item(result.scenario, f"../../{path.relative_to(REPO)}"))
    if not controls:
        pytest.skip("the library holds no control scenario")
    for item in controls:
        page = scenario_docs.page(item)
        assert "## Root cause" not in page and "root cause<br>" not in page
        assert "nothing is wrong" in page
        row = next(line for line in scenario_docs.index(controls).splitlines() if f"[{item.scenario.name}]" in line)
        assert "| none (a control) |" in row and "`  `" not in row


def test_a_predicate_path_is_written_as_the_language_writes_it():
    """Selections, indexes, quoted keys and parse steps, as `mitigated when` writes them (the docs' pages)."""
    path = ["spec", "ports", ["name", "http"], "targetPort"]
    assert ir_text.path_text(path) == 'spec.ports[name="http"].targetPort'
    path = ["data", "demo.flagd.json", {"parse": "json"}, "flags", "x", "defaultVariant"]
    assert ir_text.path_text(path) == 'data["demo.flagd.json"] as json .flags.x.defaultVariant'
    assert ir_text.path_text(["spec", "containers", 0, "image"]) == "spec.containers[0].image"


def test_a_page_lists_every_check_that_grades_the_scenario():
    """The Grading section is the evaluator's checks, per task, each with its origin: the hidden ones too."""
    from itbench_dsl.checking import check_source
    from itbench_dsl.grading import grading_checks

    path = SCENARIOS / "finops" / "otel-ad-missing-memory-limit.itb"
    scenario = check_source(path.read_bytes(), str(path), lint=False).scenario
    page = scenario_docs.page(scenario_docs.Item(scenario, "x.itb"))
    section = page.split("## Grading", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| `")]
    checks = grading_checks(scenario)
    assert [row.split("`")[1] for row in rows] == [c.id for c in checks]
    assert "| `safeguards` | safeguard rule |" in section and "| `finops.proximity.0` | optimum |" in section
