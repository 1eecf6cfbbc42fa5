"""Every variant a generator writes passes `itbench check --strict`, with its parent beside it, and a
retargeted variant carries no value or word of the old target (docs/generators.md, Invariants).

A property over the library: hypothesis draws a generator, a scenario it applies to and a seed; the
run is capped (`-n 2`) so that the whole test takes seconds.
"""

from __future__ import annotations

import dataclasses
import functools
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from itbench_dsl import ast
from itbench_dsl import variants as gen
from itbench_dsl.backends.manifests import topology_manifests
from itbench_dsl.checking import check_files
from itbench_dsl.diagnostics import Diagnostics
from itbench_dsl.faults.alerting import Places
from itbench_dsl.runtime.state import lookup, MISSING
from support.compiling import library_sample

REPO = Path(__file__).resolve().parents[2]
LIBRARY = sorted(str(p.relative_to(REPO)) for p in (REPO / "scenarios").rglob("*.itb"))
PARAMS = [p for p in LIBRARY if re.search(r"^\s*param ", (REPO / p).read_text(), re.M)]
# scenarios whose fault is tied to values and words of its target (a memory limit, Valkey)
TIED = ["scenarios/finops/otel-ad-missing-memory-limit.itb", "scenarios/sre/otel-valkey-cart-memory-stress.itb",
        "scenarios/finops/otel-cart-overprovisioned-requests.itb", "scenarios/sre/k8sbench-fix-oomkilled.itb",
        # prose that spells the target's name spaced and capitalised (`Product catalog pod is ...`)
        "scenarios/sre/otel-product-catalog-invalid-command.itb"]
CASES = ([("retarget", p) for p in TIED + [p for p in LIBRARY if "/sre/otel-" in p][::9]]
         + [(g, p) for g in ("sweep", "sample") for p in PARAMS]
         + [(g, p) for g in ("noise", "anonymize", "control") for p in LIBRARY if "/sre/" in p][::7])


@functools.lru_cache(maxsize=None)
def parent(path: str) -> gen.Parent:
    loaded = gen.load_input((REPO / path).read_bytes(), path, Diagnostics())
    assert loaded is not None, path
    return loaded


def variants(generator: str, path: str, seed: int, n: int = 2) -> gen.RunResult:
    return gen.run([parent(path)], [(generator, gen.load_generator(generator))], seed, n)


def strict_findings(path: str, result: gen.RunResult) -> list[str]:
    jobs = [(path, (REPO / path).read_bytes())]
    jobs += [(f"variants/{v.file}", gen.variant_text(v.document).encode()) for v in result.variants]
    diags, _ = check_files(jobs)
    return [f"{d.path}: {d.code} {d.message}" for d in diags.items]


def _words(name: str) -> set[str]:
    return {w for w in re.split(r"[-_.]", name.lower()) if len(w) >= 3}


def _spelled(names) -> str:
    """An alternation of `names` (longest first) in any spelling: parts joined by `-`, `_`, a space or nothing
    (`product-catalog`, `Product catalog`, `PRODUCT_CATALOG`, `ProductCatalog`)."""
    return "|".join("[-_ ]?".join(map(re.escape, re.split(r"[-_]", n))) for n in sorted(names, key=len, reverse=True))


@settings(max_examples=5, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=st.sampled_from(CASES), seed=st.integers(0, 2**16))
def test_every_variant_checks_strict(case, seed):
    generator, path = case
    result = variants(generator, path, seed)
    assert strict_findings(path, result) == []


def _old_traces(path: str, variant) -> list[str]:
    """Values and words of the old target that a retargeted variant still carries."""
    source = parent(path).scenario
    old, new = source.injections()[0].target, variant.scenario.injections()[0].target
    topology = source.topology
    names = {o.name for pool in (topology.workloads, topology.services, topology.configmaps, topology.secrets)
             for o in pool}
    own = {old.name} | set(Places(source).selecting.get(old.name, []))  # the target and the services selecting it
    words = set().union(*map(_words, own)) - set().union(*map(_words, names - own), set()) - _words(new.name)
    text = "\n".join(line for line in gen.variant_text(variant.document).splitlines() if "use app" not in line)
    renamed = {n for n in own if n != new.name}
    spelled = re.compile(r"(?<![A-Za-z0-9])(" + _spelled(renamed) + r")(?:e?s)?(?![A-Za-z0-9])", re.IGNORECASE)
    found = [f"name `{m.group(0)}`" for m in spelled.finditer(re.sub(
        r"(?<![A-Za-z0-9])(" + _spelled(names - renamed) + r")(?![A-Za-z0-9])", " ", text, flags=re.IGNORECASE))]
    outside_names = re.sub(r"(?<![A-Za-z0-9])(" + _spelled(names) + r")(?![A-Za-z0-9])", " ", text,
                           flags=re.IGNORECASE)
    found += [f"word `{w}`" for w in sorted(words) if re.search(rf"(?<![A-Za-z0-9]){w}(?![A-Za-z0-9])", outside_names,
                                                               re.IGNORECASE)]
    objects = {(o["kind"], o["metadata"].get("namespace"), o["metadata"]["name"]): o
               for o in topology_manifests(topology, provided=True)}
    before, after = objects.get((old.kind, old.namespace, old.name)), objects.get((new.kind, new.namespace, new.name))
    parent_optima = [s for s in gen.expect_statements(parent(path).document) if isinstance(s, ast.Optimal)]
    for optimum in parent_optima:
        was, now = lookup(before, list(optimum.path)), lookup(after, list(optimum.path))
        if was is MISSING or now is MISSING or str(was) == str(now):
            continue
        if re.search(rf"(?<![A-Za-z0-9.]){re.escape(str(was))}(?![A-Za-z0-9.])", text):
            found.append(f"value {was} of `{old.name}` (`{new.name}` has {now})")
        mine = [s for s in gen.expect_statements(variant.document) if isinstance(s, ast.Optimal)]
        if getattr(optimum.value, "text", None) == str(was):
            assert any(getattr(s.value, "text", None) == str(now) for s in mine), (variant.name, now)
    return found


@pytest.mark.parametrize("path", TIED)
@settings(max_examples=1, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**16))
def test_retarget_carries_nothing_of_the_old_target(path, seed):
    result = variants("retarget", path, seed)
    assert result.variants or result.skips
    for variant in result.variants:
        assert _old_traces(path, variant) == [], variant.name


def test_retargeted_memory_limit_is_the_new_targets_own():
    """The ad service's limit (300Mi) is not kafka's fix: kafka's variant restores kafka's 600Mi."""
    result = gen.run([parent(TIED[0])], [("retarget", gen.load_generator("retarget"))], 0, None)
    kafka = next(v for v in result.variants if v.scenario.injections()[0].target.name == "kafka")
    text = gen.variant_text(kafka.document)
    assert "optimal deployment \"kafka\" resources.limits.memory = 600Mi" in text
    assert "300Mi" not in text and "--limits=memory=600Mi" in text
    assert len(result.variants) >= 15  # before, only the one target sharing ad's 300Mi passed


def test_retarget_words_of_the_old_target():
    """`valkey` is valkey-cart's own word (`cart` is the cart's name): prose says the new target's name, and a
    fault argument that names it (a command running `valkey-cli`) makes the candidate a skip."""
    from itbench_dsl.variants.builtin.retarget import Move, Unmovable
    from itbench_dsl.faults.alerting import Places

    source = parent(TIED[1])
    ctx = gen.Context(source, [source], 0, gen.rng_for(0, "retarget", source.name), None, "retarget")
    old = source.scenario.injections()[0].target
    new = next(r for r in gen.object_refs(source.scenario.topology, ["deployment"]) if r.name == "kafka")
    move = Move(ctx, Places(source.scenario), old, new)
    assert move.old_words == {"valkey"}
    assert move.text("Valkey pods under memory pressure") == "Kafka pods under memory pressure"
    assert move.old_word_in((ast.Str("valkey-cli FLUSHALL"),)) == "valkey"
    assert move.old_word_in((ast.Str("valkey-cart:6379"),)) is None  # a whole name is renamed, not refused
    fault = gen.faults_of(source.document)[0]
    entries = fault.entries + (ast.Attr("command", (), ast.Str("valkey-cli DEBUG SLEEP 30")),)
    document = gen.map_nodes(source.document, lambda n: dataclasses.replace(n, entries=entries) if n is fault else None)
    move.ctx = gen.Context(dataclasses.replace(source, document=document), [source], 0, ctx.rng, None, "retarget")
    with pytest.raises(Unmovable, match="`valkey`"):
        move.document()


def test_sweep_names_and_prose_say_the_new_value(tmp_path):
    source = (REPO / "scenarios/finops/otel-cart-overprovisioned-requests.itb").read_text()
    source = source.replace('scenario "otel-cart-overprovisioned-requests"', 'scenario "otel-cart-requests-factor-10"')
    source = source.replace("raised to ten times", "raised 10 times")
    loaded = gen.load_input(source.encode(), "cart.itb", Diagnostics())
    result = gen.run([loaded], [("sweep", gen.load_generator("sweep"))], 0, None)
    assert sorted(v.name for v in result.variants) == [f"otel-cart-requests-factor-{n}" for n in (20, 4, 6, 8)]
    for v in result.variants:
        text = gen.variant_text(v.document)
        factor = v.name.rsplit("-", 1)[1]
        prose = "\n".join(line for line in text.splitlines() if not line.strip().startswith("param "))
        assert f"raised {factor} times" in text and not re.search(r"(?<![\w.])10(?![\w.%])", prose), v.name
    jobs = [("cart.itb", source.encode())] + [(v.file, gen.variant_text(v.document).encode()) for v in result.variants]
    diags, _ = check_files(jobs)
    assert [d.code for d in diags.items] == []  # no W2001 between the family's members


def test_a_run_that_produces_nothing_says_why_and_fails(tmp_path):
    """`--with retarget,sweep` on a scenario without `param`: E6003 names `sweep` and its reason, exit 1, nothing written."""
    from click.testing import CliRunner

    from itbench_dsl.cli import cli

    out = tmp_path / "out"
    result = CliRunner().invoke(cli, ["generate", str(REPO / "scenarios/sre/otel-checkout-nonexistent-image.itb"),
                                      "--with", "retarget,sweep", "-n", "1", "-o", str(out)])
    assert result.exit_code == 1, result.output
    assert "E6003" in result.output and "`sweep` made no variant" in result.output
    assert "declares no `param`" in result.output
    assert not out.exists()


def test_two_inputs_moved_onto_one_target_are_one_variant():
    """Both clock scenarios retargeted: each target gets the time fault once (W2001 would report the second),
    and the whole output passes `check --strict` beside its inputs."""
    inputs = ["scenarios/sre/otel-cart-clock-skew.itb", "scenarios/sre/otel-payment-clock-forward.itb"]
    result = gen.run([parent(p) for p in inputs], [("retarget", gen.load_generator("retarget"))], 0, None)
    targets = [v.scenario.injections()[0].target.name for v in result.variants]
    assert len(targets) == len(set(targets)) and result.duplicates > 0
    jobs = [(p, (REPO / p).read_bytes()) for p in inputs]
    jobs += [(f"variants/{v.file}", gen.variant_text(v.document).encode()) for v in result.variants]
    diags, _ = check_files(jobs)
    assert [f"{d.path}: {d.code}" for d in diags.items] == []


@pytest.mark.library
@pytest.mark.parametrize("path", library_sample([p for p in LIBRARY if "/ciso/" not in p], 3))
def test_every_retarget_variant_of_the_library_carries_nothing_of_the_old_target(path):
    """Over the library (SRE and FinOps; every third scenario, all with ITBENCH_TEST_LIBRARY=all), a seeded
    variant of each scenario: strict-clean beside its parent, and no name of the old target in any spelling,
    word of it or value of it left."""
    result = variants("retarget", path, 0, n=1)
    assert strict_findings(path, result) == []
    for variant in result.variants:
        assert _old_traces(path, variant) == [], variant.name
