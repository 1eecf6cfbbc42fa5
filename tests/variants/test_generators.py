"""Variant generators (itbench_dsl/variants/) and `itbench generate`."""

from __future__ import annotations

import copy
import json
import re
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from itbench_dsl import variants as gen
from support.variants import parent, run
from itbench_dsl.cli import cli
from itbench_dsl.diagnostics import Diagnostics
from itbench_dsl.faults import FAULTS
from itbench_dsl.analysis.identity import scenario_digest
from itbench_dsl.parser import parse_text

REPO = Path(__file__).resolve().parents[2]
SCENARIOS = REPO / "scenarios"
LIBRARY = sorted(SCENARIOS.rglob("*.itb"))
BUILTINS = ("retarget", "sweep", "sample", "compose", "noise", "anonymize", "control")




def recheck(variant: gen.Generated) -> gen.Checked:
    """The variant's text parsed again and checked: what `itbench check` would say of the written file."""
    text = gen.variant_text(variant.document)
    document = parse_text(text, variant.file, Diagnostics())
    assert document == variant.document  # the printed file is the checked document
    return gen.check_document(document, variant.file)


# ---- discovery ---------------------------------------------------------------------------------------------


def test_every_builtin_is_available_and_loads():
    specs = gen.available()
    for name in BUILTINS:
        assert name in specs
        generator = gen.load_generator(name)
        assert generator.name == name and generator.summary


def test_the_builtins_ship_inside_the_package_and_are_listed_once():
    """One import package in the wheel, and one list of the built-ins (variants/builtin/): the
    distribution's entry points are for other packages' generators."""
    import tomllib

    from itbench_dsl.variants.builtin import BUILTINS as LISTED

    data = tomllib.loads((REPO / "pyproject.toml").read_text())
    assert data["tool"]["hatch"]["build"]["targets"]["wheel"]["packages"] == ["itbench_dsl"]
    assert gen.GROUP not in data["project"].get("entry-points", {})
    assert sorted(LISTED) == sorted(BUILTINS)
    for name, spec in LISTED.items():
        assert spec.startswith("itbench_dsl.variants.builtin." + name + ":")


def test_unknown_generator_is_a_usage_error(tmp_path):
    result = CliRunner().invoke(cli, ["generate", str(SCENARIOS / "sre/otel-ad-jvm-cpu-stress.itb"), "--with",
                                      "retarget,sweeep", "-o", str(tmp_path / "out")])
    assert result.exit_code == 2
    assert "did you mean `sweep`" in result.output
    assert not (tmp_path / "out").exists()


# ---- the command: reproducible, atomic ---------------------------------------------------------------------


def _generate(tmp_path: Path, name: str, args: list[str]) -> tuple[int, dict[str, bytes], str]:
    out = tmp_path / name
    result = CliRunner().invoke(cli, ["generate", *args, "-o", str(out)])
    files = {p.name: p.read_bytes() for p in sorted(out.iterdir())} if out.exists() else {}
    return result.exit_code, files, result.output


INPUTS = [str(SCENARIOS / "sre/otel-ad-jvm-cpu-stress.itb"), str(SCENARIOS / "sre/shop-cart-modified-env.itb")]


def test_same_inputs_and_seed_give_identical_bytes(tmp_path):
    args = [*INPUTS, "--with", "sample,noise", "--seed", "11", "-n", "3"]
    code_a, first, _ = _generate(tmp_path, "a", args)
    code_b, second, _ = _generate(tmp_path, "b", args)
    assert code_a == code_b == 0
    assert first == second
    assert {"index.json", "index.csv"} <= set(first) and len(first) > 2
    index = json.loads(first["index.json"])
    assert [row["file"] for row in index["variants"]] == sorted(set(first) - {"index.json", "index.csv"},
                                                                  key=[r["file"] for r in index["variants"]].index)
    for row in index["variants"]:
        assert row["chain"] == "sample,noise" and row["seed"] == 11 and re.fullmatch(r"[0-9a-f]{64}", row["semantic_hash"])
    assert len(first["index.csv"].decode().splitlines()) == len(index["variants"]) + 1
    from itbench_dsl.printer import print_document

    for row in index["variants"]:  # formatted: `itbench fmt` would change nothing
        text = first[row["file"]].decode()
        assert print_document(parse_text(text, row["file"]), text) == text


def test_a_different_seed_gives_a_different_sample(tmp_path):
    _, first, _ = _generate(tmp_path, "a", [INPUTS[0], "--with", "sample", "--seed", "1", "-n", "4"])
    _, second, _ = _generate(tmp_path, "b", [INPUTS[0], "--with", "sample", "--seed", "2", "-n", "4"])
    hashes = [{r["semantic_hash"] for r in json.loads(f["index.json"])["variants"]} for f in (first, second)]
    assert hashes[0] and hashes[1] and hashes[0] != hashes[1]


def test_rerun_replaces_an_earlier_output_and_refuses_other_folders(tmp_path):
    args = [INPUTS[0], "--with", "sweep", "--seed", "1", "-n", "2"]
    assert _generate(tmp_path, "out", args)[0] == 0
    code, files, _ = _generate(tmp_path, "out", args)
    assert code == 0 and len(files) == 4
    other = tmp_path / "notes"
    other.mkdir()
    (other / "keep.txt").write_text("mine")
    result = CliRunner().invoke(cli, ["generate", *args, "-o", str(other)])
    assert result.exit_code == 2 and (other / "keep.txt").read_text() == "mine"
    assert [p.name for p in other.iterdir()] == ["keep.txt"]


def test_input_with_errors_writes_nothing(tmp_path):
    bad = tmp_path / "bad.itb"
    bad.write_text('scenario "bad" {\n  domain sre\n  complexity low\n  description "x"\n'
                   '  use app "opentelemetry-demo"\n  param p in [1, 2]\n'
                   '  fault idle_replicas on deployment "cart" { replicas = param(q) }\n}\n')
    code, files, output = _generate(tmp_path, "out", [str(bad), "--with", "sweep"])
    assert code == 1 and files == {}
    assert "E6001" in output and not (tmp_path / "out").exists()


def test_dedupe_by_semantic_hash_not_text():
    # the same variant reached twice (sweep then sample over the same domain) is kept once
    result = run("sweep,sample", ["sre/otel-flagd-io-latency.itb"], n=None)
    assert result.variants == [] and result.duplicates > 0  # every draw is a combination sweep already made
    result = run("sweep", ["sre/otel-flagd-io-latency.itb"])
    hashes = [v.semantic_hash for v in result.variants]
    assert len(hashes) == len(set(hashes)) == 3
    a = parent("sre/otel-flagd-io-latency.itb")
    renamed = gen.check_document(gen.without_itbench_id(type(a.document)(
        "another-name", a.document.statements)), "x.itb").scenario
    assert scenario_digest(renamed) == a.semantic_hash  # the name is not semantic
    assert scenario_digest(result.variants[0].scenario) != a.semantic_hash


# ---- every variant checks clean: a property over seeds and the library ------------------------------------


LIBRARY_RELS = [str(p.relative_to(SCENARIOS)) for p in LIBRARY]


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rel=st.sampled_from(LIBRARY_RELS), seed=st.integers(0, 2**32 - 1),
       names=st.sampled_from(["retarget", "sample", "sweep", "noise", "control", "anonymize", "retarget,noise",
                              "sample,control"]))
def test_every_variant_checks_clean(rel, seed, names):
    result = run(names, [rel], seed=seed, n=2)
    for variant in result.variants:
        checked = recheck(variant)
        assert checked.problems == [], (variant.name, checked.problems)
        assert len(variant.name) <= 63
    for skip in result.skips:
        assert skip.reason  # every skip says why


# ---- each generator's own property ----------------------------------------------------------------------


def test_retarget_moves_only_to_targets_meeting_preconditions():
    result = run("retarget", ["sre/otel-checkout-nonexistent-image.itb", "sre/shop-cart-modified-env.itb"])
    kind = FAULTS["nonexistent_image"]
    moved = [v for v in result.variants if v.parent.endswith("otel-checkout-nonexistent-image.itb")]
    assert len(moved) >= 15
    targets = set()
    for variant in moved:
        (injection,) = variant.scenario.injections()
        assert injection.fault == "nonexistent_image"
        assert injection.target.kind.lower() in kind.targets and injection.target.name != "checkout"
        targets.add(injection.target.name)
    assert len(targets) == len(moved) or any("container" in v.note for v in moved)
    # modified_env needs the variable REDIS_ADDR: only cart has it, so nothing can be moved
    assert not [v for v in result.variants if v.parent.endswith("shop-cart-modified-env.itb")]
    shop_skips = [s.reason for s in result.skips if s.parent.endswith("shop-cart-modified-env.itb")]
    # refused by the fault's own check (E2021), or before it: REDIS_ADDR names `redis`, which has no
    # counterpart (a callee) around the candidate, or the move would merge `cart` with a component it names
    assert shop_skips and all("E2021" in r or "no counterpart" in r or "merge two components" in r
                              for r in shop_skips)


def test_retarget_follows_created_objects_and_prunes_propagation():
    result = run("retarget", ["sre/otel-cart-pod-kill-loop.itb"], n=3)
    assert result.variants
    for variant in result.variants:
        target = variant.scenario.injections()[0].target.name
        created = variant.scenario.injections()[0].created[0].name
        # the schedule keeps its name (pinned: variants.pin_generated_names), another component's, never the new
        # target's (such a move is skipped), and the statements that refer to it still do
        assert not created.startswith(target + "-") and created == "product-catalog-local"
        for edge in variant.scenario.propagations:
            assert "cart" not in (edge.source.name, edge.target.name) or target == "cart"


def test_retarget_does_not_move_a_fault_onto_the_component_its_created_object_is_named_after():
    """otel-cart-pod-kill-loop's Schedule is `product-catalog-local`: moved onto product-catalog, it would name
    the target to whoever lists the Schedules."""
    result = run("retarget", ["sre/otel-cart-pod-kill-loop.itb"])
    assert "product-catalog" not in {v.scenario.injections()[0].target.name for v in result.variants}
    assert any("product-catalog" in s.reason and "would name the new target" in s.reason for s in result.skips)


def test_sweep_is_the_cartesian_product_of_param_domains():
    result = run("sweep", ["sre/otel-ad-jvm-cpu-stress.itb"])
    # every combination but the input's own; those with threads = 1 are refused with a reason (the prose's
    # `two busy threads` cannot be said of one thread)
    assert len(result.variants) + len(result.skips) == 4 * 3 - 1
    assert len(result.skips) == 3 and all("threads = 1" in s.reason for s in result.skips)
    args = {(v.scenario.injections()[0].args["spec"]["cpuCount"], v.scenario.injections()[0].args["spec"]["duration"])
            for v in result.variants}
    assert (2, "10m") not in args and (8, "15m") in args
    assert len(args) == 8


def test_sweep_skips_a_scenario_without_params():
    result = run("sweep", ["sre/otel-checkout-nonexistent-image.itb"])
    assert not result.variants and "no `param`" in result.skips[0].reason


def test_compose_ground_truth_contains_both_faults():
    rels = ["sre/otel-checkout-nonexistent-image.itb", "sre/otel-cart-pod-kill-loop.itb"]
    result = run("compose", rels)
    (variant,) = result.variants
    a, b = (parent(r).scenario for r in rels)
    assert len(variant.scenario.injections()) == 2
    assert {i.fault for i in variant.scenario.injections()} == {"nonexistent_image", "pod_chaos"}
    for ref in a.root_causes + b.root_causes:
        assert ref in variant.scenario.root_causes
    assert {x.name for x in a.alerts + b.alerts} <= {x.name for x in variant.scenario.alerts}
    # the oracle needs both repairs: the answer naming one root cause does not score 1
    from itbench_dsl.backends.evaluator import evaluator_spec
    from itbench_dsl.runtime.evaluator import evaluate
    from itbench_dsl.analysis.states import derive, perfect_answer

    states = derive(variant.scenario)
    spec = evaluator_spec(variant.scenario)
    perfect = perfect_answer(variant.scenario, states["faulty"])
    half = copy.deepcopy(perfect)
    half["entities"] = half["entities"][:1]
    assert evaluate(spec, copy.deepcopy(perfect), states["faulty"], task="diagnose")["metrics"]["root_cause_entity_recall"] == pytest.approx(1.0)
    assert evaluate(spec, half, states["faulty"], task="diagnose")["metrics"]["root_cause_entity_recall"] == pytest.approx(0.5)


def test_compose_refuses_faults_that_cannot_coexist():
    from itbench_dsl.variants.builtin.compose import conflict

    a = parent("sre/otel-checkout-nonexistent-image.itb")
    assert conflict(a, a) == "the faults target the same object"
    assert conflict(a, parent("ciso/cis-5-2-5-host-network-kyverno.itb")).startswith("different domains (sre and ciso)")
    assert conflict(a, parent("sre/shop-cart-modified-env.itb")) == "different applications"


def test_noise_is_never_credited_as_a_root_cause():
    from itbench_dsl.backends.evaluator import evaluator_spec
    from itbench_dsl.runtime.evaluator import evaluate
    from itbench_dsl.analysis.states import derive, perfect_answer

    result = run("noise", ["sre/otel-checkout-nonexistent-image.itb"], seed=5, n=3)
    assert result.variants
    original = parent("sre/otel-checkout-nonexistent-image.itb").scenario
    for variant in result.variants:
        scenario = variant.scenario
        assert scenario.root_causes == original.root_causes
        names = {o.name for pool in (scenario.topology.workloads, scenario.topology.configmaps,
                                     scenario.topology.secrets, scenario.topology.service_accounts) for o in pool}
        before = {o.name for pool in (original.topology.workloads, original.topology.configmaps,
                                      original.topology.secrets, original.topology.service_accounts) for o in pool}
        added = sorted(names - before)
        assert added
        states = derive(scenario)
        spec = evaluator_spec(scenario)
        kinds = {**{o.name: o.kind for o in scenario.topology.workloads},
                 **{o.name: "ConfigMap" for o in scenario.topology.configmaps},
                 **{o.name: "Secret" for o in scenario.topology.secrets},
                 **{o.name: "ServiceAccount" for o in scenario.topology.service_accounts}}
        herring = {"entities": [{"name": f"otel-demo/{kinds[n]}/{n}", "contributing_factor": True} for n in added],
                   "propagations": [], "alerts_explained": []}
        verdict = evaluate(spec, herring, states["faulty"], task="diagnose")
        assert verdict["score"] == pytest.approx(0.0)
        assert verdict["metrics"]["root_cause_entity_recall"] == verdict["metrics"]["root_cause_entity_precision"] == 0
        perfect = perfect_answer(scenario, states["faulty"])
        assert evaluate(spec, perfect, states["faulty"], task="diagnose")["score"] == pytest.approx(1.0)


def _original_names(p: gen.Parent) -> set[str]:
    t = p.scenario.topology
    names = {n.name for n in t.namespaces} | {t.application} - {None}
    for pool in (t.workloads, t.services, t.configmaps, t.secrets, t.service_accounts, t.autoscalers):
        names |= {o.name for o in pool}
    return names


def test_anonymize_leaves_no_original_name(tmp_path):
    rels = ["sre/otel-cart-pod-kill-loop.itb", "sre/shop-cart-modified-env.itb"]
    code, files, output = _generate(tmp_path, "out", [str(SCENARIOS / r) for r in rels]
                                    + ["--with", "anonymize", "--seed", "4"])
    assert code == 0, output
    variants = {k: v.decode() for k, v in files.items() if k.endswith(".itb")}
    assert len(variants) == 2
    parents = {row["file"]: row["parent"] for row in json.loads(files["index.json"])["variants"]}
    for file, text in variants.items():
        names = _original_names(parent(str((REPO / parents[file]).resolve().relative_to(SCENARIOS)))) - {"flagd-config"}
        # a name inside a file or URL path (`/etc/flagd`) is no reference; a host after `//` is
        pattern = re.compile(r"(?<![A-Za-z0-9_.-])(?<![^/]/)(" + "|".join(map(re.escape, sorted(names, key=len, reverse=True)))
                             + r")(?![A-Za-z0-9_])(?!\.(?:ini|json|ya?ml|conf|cfg|txt|sh|py|properties|xml)\b)")
        kept = _kept_values(text)
        # inside a ConfigMap's `data { ... }` or a container's `env { ... }` only host names are references
        # (`cart:7070`, `http://email:8080`, `x.<ns>.svc`): a telemetry name `frontend-web` or a path is data
        hosts = re.compile(r"(?<![A-Za-z0-9_.-])(" + "|".join(map(re.escape, sorted(names, key=len, reverse=True)))
                           + r")(?=:\d|\.[a-z0-9-]+\.svc|\.svc)")
        data_depth = 0
        for line in text.splitlines():
            if data_depth:
                data_depth += line.count("{") - line.count("}")
                assert not hosts.findall(line), (file, line)
                continue
            if re.match(r"^\s*(data|env) \{\s*$", line):
                data_depth = 1
                continue
            if line.strip() in kept:
                continue
            if re.match(r'^\s*"[^"]*" = "', line):  # ConfigMap data: only its host names are references
                continue
            found = pattern.findall(re.sub(r'^\s*"[^"]*" = ', "", line))  # data keys are file names: kept
            assert not found, (file, line, found)
        checked = gen.check_document(parse_text(text, file, Diagnostics()), file)
        assert checked.problems == []
        assert checked.scenario.topology.application is None
        assert not set(checked.scenario.topology.namespaces[0].name.split("-")) & names


def _kept_values(text: str) -> set[str]:
    """Lines of the values anonymize keeps on purpose: images, commands, arguments."""
    kept, inside = set(), False
    for line in text.splitlines():
        stripped = line.strip()
        if re.match(r"(image|command|args) = ", stripped):
            kept.add(stripped)
            inside = stripped.endswith("[")
        elif inside:
            kept.add(stripped)
            inside = stripped != "]"
    return kept


def test_anonymize_renames_ground_truth_and_prompt_consistently():
    result = run("anonymize", ["sre/otel-checkout-nonexistent-image.itb"], seed=9)
    (variant,) = result.variants
    scenario = variant.scenario
    (root,) = scenario.root_causes
    assert root.name != "checkout" and root.namespace != "otel-demo"
    assert any(w.name == root.name for w in scenario.topology.workloads)
    from itbench_dsl.compiler import emit as codegen

    _, files = codegen(scenario, Diagnostics(), variant.file)
    for name in ("prompt.md", "itbench/groundtruth.yaml", "itbench/groundtruth_v1.yaml", "evaluator.py"):
        text = files[name].decode()
        assert not re.search(r"(?<![\w.-])(checkout|otel-demo|opentelemetry-demo)(?![\w])", text), name


def test_control_has_no_fault_and_passes_the_healthy_state():
    from itbench_dsl.backends.evaluator import evaluator_spec
    from itbench_dsl.runtime.evaluator import evaluate
    from itbench_dsl.analysis.states import derive

    result = run("control", ["sre/otel-checkout-nonexistent-image.itb", "sre/otel-cart-deleted-service.itb",
                             "finops/otel-recommendation-idle-replicas.itb"])
    assert len(result.variants) == 2
    assert any("SRE" in s.reason for s in result.skips)
    for variant in result.variants:
        scenario = variant.scenario
        assert scenario.injections() == [] and scenario.root_causes == [] and scenario.alerts == []
        assert scenario.metadata.get("control") is True
        states = derive(scenario)
        verdict = evaluate(evaluator_spec(scenario), None, states["healthy"], task="mitigate")
        assert verdict["passed"] is True
        # the parent's faulty cluster is not healthy for the control's oracle either
        parent_scenario = parent("sre/" + variant.parent.split("/")[-1]).scenario
        assert evaluate(evaluator_spec(scenario), None, derive(parent_scenario)["faulty"], task="mitigate")["passed"] is False


def test_a_generator_that_raises_is_e6002_and_writes_nothing(tmp_path, monkeypatch):
    class Broken(gen.Generator):
        name = "broken"
        summary = "raises"

        def generate(self, ctx):
            raise RuntimeError("boom")

    from itbench_dsl.variants.builtin import BUILTINS as LISTED

    monkeypatch.setitem(LISTED, "broken", "tests_broken:Broken")
    module = type(sys)("tests_broken")
    module.Broken = Broken
    monkeypatch.setitem(sys.modules, "tests_broken", module)
    code, files, output = _generate(tmp_path, "out", [INPUTS[0], "--with", "broken"])
    assert code == 1 and files == {}
    assert "E6002" in output and "boom" in output


def test_control_of_a_scenario_posing_tasks_poses_only_what_a_control_can(tmp_path):
    """A control keeps `detect` and `mitigate`, drops localize/analyze and the analysis labels, and checks clean."""
    from itbench_dsl import tasks

    source = (SCENARIOS / "sre" / "otel-checkout-nonexistent-image.itb").read_text("utf-8")
    text = source.replace('  use app "opentelemetry-demo"', '  tasks detect, localize, analyze, mitigate\n\n'
                          '  use app "opentelemetry-demo"', 1)
    text = text.replace("  expect {\n", '  expect {\n    analysis {\n      system_level = "application"\n'
                        '      fault_type = "misconfiguration"\n    }\n', 1)
    path = tmp_path / "posed.itb"
    path.write_text(text, "utf-8")
    diags = Diagnostics()
    loaded = gen.load_input(path.read_bytes(), str(path), diags)
    assert loaded is not None, [d.message for d in diags.items]
    result = gen.run([loaded], [("control", gen.load_generator("control"))], 1, None)
    (variant,) = result.variants
    assert tasks.posed(variant.scenario) == ["detect", "mitigate"]
    again = recheck(variant)
    assert again.scenario is not None and not again.problems, again.problems


def test_retarget_runs_on_every_library_scenario():
    """No fault target kind (RBAC, storage, ...) stops a generator: each input gives variants or skips."""
    parents = [parent(str(p.relative_to(SCENARIOS))) for p in LIBRARY if "/sre/" in str(p)]
    result = gen.run(parents, [("retarget", gen.load_generator("retarget"))], 0, 1)
    assert result.attempted >= 1 and len(result.variants) + len(result.skips) >= 1


def _draws_accounted(reason: str) -> int:
    found = re.search(r"\bdraws (\d+)-(\d+) not made\b", reason)
    if found:
        return int(found.group(2)) - int(found.group(1)) + 1
    assert re.search(r"\bdraw \d+ (repeats (draw \d+|the input's own values)|not made)\b", reason), reason
    return 1


@pytest.mark.parametrize("n", [1, 5, 11, 30])
@pytest.mark.parametrize("seed", [0, 1, 7])
def test_every_sample_draw_is_written_or_accounted_for(n, seed):
    """A draw that repeats an earlier one (or the input) is a skip that says so, never a silent loss: the
    variants, the duplicates removed and the draws the skips name add up to `-n`."""
    result = run("sample", ["sre/shop-cart-modified-env.itb"], seed=seed, n=n)
    accounted = sum(_draws_accounted(s.reason) for s in result.skips)
    assert len(result.variants) + result.duplicates + accounted == n, [s.reason for s in result.skips]


def test_a_repeated_draw_is_reported_on_stderr_and_in_the_index(tmp_path):
    out = tmp_path / "out"
    result = CliRunner().invoke(cli, ["generate", str(SCENARIOS / "sre/shop-cart-modified-env.itb"), "--with",
                                      "sample", "-n", "11", "--seed", "0", "-o", str(out)])
    assert result.exit_code == 0, result.output
    index = json.loads((out / "index.json").read_text())
    repeats = [s["reason"] for s in index["skipped"] if " repeats " in s["reason"]]
    assert repeats and len(index["variants"]) + index["duplicates_removed"] + len(index["skipped"]) == 11
    assert "W6001" in result.output and " repeats " in result.output


def test_the_parent_is_recorded_as_one_normalised_path(tmp_path, monkeypatch):
    """The same input named two ways (`./a/../x.itb`, a link) gives the same index bytes."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "in" / "a").mkdir(parents=True)
    (tmp_path / "in" / "x.itb").write_bytes((SCENARIOS / "sre/shop-cart-modified-env.itb").read_bytes())
    (tmp_path / "link.itb").symlink_to(tmp_path / "in" / "x.itb")
    outputs = []
    for k, name in enumerate(["in/x.itb", "./in/a/../x.itb", str(tmp_path / "in/x.itb"), "link.itb"]):
        result = CliRunner().invoke(cli, ["generate", name, "--with", "sweep", "-n", "1", "-o", f"out{k}"])
        assert result.exit_code == 0, result.output
        outputs.append((tmp_path / f"out{k}" / "index.json").read_bytes())
    assert len(set(outputs)) == 1
    assert json.loads(outputs[0])["variants"][0]["parent"] == "in/x.itb"


@pytest.mark.parametrize("n", [3, 12])
def test_every_noise_draw_is_written_or_accounted_for(n):
    result = run("noise", ["sre/shop-cart-modified-env.itb"], seed=3, n=n)
    accounted = sum(_draws_accounted(s.reason) if "draw" in s.reason else 1 for s in result.skips)
    assert len(result.variants) + result.duplicates + accounted == n, [s.reason for s in result.skips]


def test_every_lint_code_a_generator_allows_is_documented():
    """What a generator writes into a variant's metadata (`lint_allow`) is in docs/generators.md, with the
    generator that writes it."""
    from itbench_dsl.analysis.lint import allowed_codes

    docs = (REPO / "docs/generators.md").read_text()
    rows = {line.split("|")[1].strip().strip("`"): line for line in docs.splitlines() if line.startswith("| `")}
    for name in ("noise", "sweep", "sample"):
        result = run(name, ["sre/shop-cart-modified-env.itb"], seed=1, n=2)
        assert result.variants
        for variant in result.variants:
            for code in allowed_codes(variant.scenario):
                assert code in docs, (name, code)
                assert code in rows[name] or code == "W2001", (name, code)  # W2001: the run adds it to every family


def test_compose_does_not_depend_on_the_order_of_its_inputs():
    """Each pair is composed once, under the input whose name sorts first: the inputs given in either order
    write the same variants, under the same names, with the same tasks and prose."""
    rels = ["sre/otel-checkout-nonexistent-image.itb", "sre/otel-cart-pod-kill-loop.itb",
            "sre/sregym-incorrect-port-assignment.itb"]
    rels = [r for r in rels if (SCENARIOS / r).is_file()]
    forward = run("compose", rels)
    backward = run("compose", rels[::-1])
    assert forward.variants
    texts = lambda result: sorted((v.file, gen.variant_text(v.document)) for v in result.variants)  # noqa: E731
    assert texts(forward) == texts(backward)


# ---- chains: W2001's identity across steps --------------------------------------------------------------


_MOVED = '''scenario "ad-bad-image" {
  domain sre
  complexity low
  description "The ad service is redeployed with an image tag that does not exist."
  use app "opentelemetry-demo"

  fault nonexistent_image on deployment "ad" {
    image = "ghcr.io/open-telemetry/demo:7f3a9c1e"
  }

  expect {
    root_cause deployment "ad"
    mitigated when {
      deployment "ad" ready within 5m
    }
  }

  solution "Roll back" {
    step "Roll back" run "kubectl -n otel-demo rollout undo deployment/ad"
  }
}
'''
_WORKLOADS = ("ad", "quote", "currency", "email")


class _Move(gen.Generator):
    """Moves the fault onto each other workload of _WORKLOADS by renaming it in the text, with a mitigation
    window told apart by path (so no two variants are one semantic hash)."""

    name = "move"
    summary = "move the fault onto another workload"

    def generate(self, ctx):
        text = gen.variant_text(ctx.document)
        here = re.search(r'fault nonexistent_image on deployment "([a-z]+)"', text).group(1)
        minutes = int(re.search(r"within (\d+)m", text).group(1))
        for k, there in enumerate(_WORKLOADS):
            if there == here:
                continue
            moved = re.sub(rf"\b{here}\b", there, text).replace(f"within {minutes}m", f"within {minutes * 10 + k}m")
            yield gen.Variant(parse_text(moved, f"{there}.itb", Diagnostics()))


def test_a_chain_never_writes_two_variants_of_one_mechanism_on_one_target():
    """move,move goes back onto the input's target (ad) and reaches each other target by two paths: W2001's key
    (mechanism and target) is the identity, not only the semantic hash; the folder passes `check --strict`."""
    from itbench_dsl.analysis.mechanisms import scenario_key

    diags = Diagnostics()
    loaded = gen.load_input(_MOVED.encode(), "ad-bad-image.itb", diags)
    result = gen.run([loaded], [("move", _Move()), ("move", _Move())], 1)
    keys = [scenario_key(v.scenario) for v in result.variants]
    assert scenario_key(loaded.scenario) not in keys  # never back on the input's own fault and target
    assert len(keys) == len(set(keys)) == 3  # quote, currency, email once each
    assert result.duplicates == 6  # ad three times, the other targets each by a second path
    checked = [gen.check_document(v.document, f"{v.name}.itb") for v in result.variants]
    assert all(c.scenario is not None and not c.warnings for c in checked)


def test_a_delay_below_the_latency_alert_threshold_is_a_skip():
    """sweep's 1s delay on ad adds less than HighRequestLatency's 1.5s bound: the variant would expect an alert
    its fault cannot raise, so it is a skip that says so; the larger delays are written."""
    from itbench_dsl.alerts import latency_threshold

    assert latency_threshold("HighRequestLatency", "opentelemetry-demo") == 1.5
    assert latency_threshold("HighRequestErrorRate", "opentelemetry-demo") is None
    result = run("sweep", ["sre/otel-ad-http-response-delay.itb"])
    assert result.variants and all("delay = 1s" not in v.note for v in result.variants)
    assert any("delay = 1s" in s.reason and "HighRequestLatency" in s.reason and "1.5s" in s.reason
               for s in result.skips), [s.reason for s in result.skips]


def test_a_finops_variant_whose_waste_is_within_the_reserved_tolerance_is_a_skip():
    """cart's 160Mi requests x10 reserve far beyond the healthy application; moved onto a 20Mi container the same
    factor adds 180 MiB, within the evaluator's own `finops.reserved` tolerance: its MemorySpend budget alert
    could not be told from the healthy spend, so the candidate is a skip; the written variants still waste."""
    result = run("retarget", ["finops/otel-cart-overprovisioned-requests.itb"], n=3)
    lost = [s.reason for s in result.skips if "within the evaluator's tolerance" in s.reason]
    assert lost and all("MemorySpend would not fire" in r for r in lost), [s.reason for s in result.skips]
    assert result.variants
    for v in result.variants:
        over, _ = gen._waste_over(v.scenario, {})
        assert over, v.name


def test_a_retarget_onto_where_requests_start_keeps_no_error_alert_at_its_callers():
    """frontend-proxy calls the load generator only to serve its page back: a DNS fault on the load generator
    silences the application, it raises no errors at frontend-proxy, so that alert is no counterpart."""
    result = run("retarget", ["sre/otel-frontend-failing-dns-policy.itb"], seed=2, n=4)
    assert result.variants
    assert not any("load-generator" in v.name for v in result.variants)
    assert any("-> load-generator" in s.reason and "`load-generator` is where the application's requests start"
               in s.reason for s in result.skips), [s.reason for s in result.skips]
