"""Mechanism identity: no two faults do the same thing; no two scenarios measure the same thing (W2001)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from itbench_dsl.cli import cli
from itbench_dsl.codes import CODES, severity_of
from itbench_dsl.compiler import compile_source
from itbench_dsl.diagnostics import Diagnostics, render_human
from itbench_dsl.faults import FAULTS
from itbench_dsl.analysis.mechanisms import (
    check_unique_mechanisms,
    duplicate_diagnostics,
    find_duplicates,
    mechanism_clashes,
    normalise_args,
    scenario_key,
)

REPO = Path(__file__).resolve().parents[2]

SHOP = '''scenario "{name}" {{
  domain sre
  complexity low
  description "The cart is misconfigured."
  topology {{
    namespace "shop"
    deployment "cart" {{
      container "cart" {{
        image = "ghcr.io/example/cart:1.0"
        port "grpc" = 7070
        env {{
          REDIS_ADDR = "redis:6379"
          LOG_LEVEL = "info"
        }}
      }}
    }}
    service "cart" {{
      port "grpc" = 7070
    }}
  }}
  fault modified_env on deployment "cart" {{
    name = "{env}"
    value = "{value}"
  }}
  expect {{
    alert HighRequestErrorRate on service "cart"
    mitigated when {{
      alert HighRequestErrorRate not firing
    }}
  }}
  solution "Restore the variable" {{
    step "Roll back" run "kubectl -n shop rollout undo deployment/cart"
  }}
}}
'''


def _scenario(name: str, env: str = "REDIS_ADDR", value: str = "redis:1"):
    diags = Diagnostics()
    result = compile_source(SHOP.format(name=name, env=env, value=value).encode(), f"{name}.itb", diags)
    assert not diags.errors(), render_human(diags)
    return result.scenario


# ---- (a) the library ------------------------------------------------------------------------------


def test_every_fault_has_a_mechanism():
    for kind in FAULTS.values():
        assert kind.mechanism and ":" in kind.mechanism, f"{kind.name}: mechanism `{kind.mechanism}` is not `part:how`"


def test_no_two_library_faults_share_a_mechanism():
    clashes = mechanism_clashes(FAULTS.values())
    assert not clashes, "; ".join(f"{a.name} and {b.name} are both {a.mechanism}" for a, b in clashes)
    check_unique_mechanisms(FAULTS.values())


def test_a_duplicate_new_fault_is_refused_naming_both():
    existing = FAULTS["scaled_to_zero"]
    copycat = dataclasses.replace(existing, name="zero_replicas", itbench_id=None)
    with pytest.raises(ValueError) as info:
        check_unique_mechanisms([*FAULTS.values(), copycat])
    message = str(info.value)
    assert "`zero_replicas`" in message and "`scaled_to_zero`" in message and existing.mechanism in message


# ---- (b) scenario keys -------------------------------------------------------------------------


def test_normalised_args_keep_where_and_drop_how_much():
    a = normalise_args({"container": "cart", "name": "X", "value": "1", "original_value": "0"})
    b = normalise_args({"container": "cart", "name": "X", "value": "2", "original_value": "0"})
    c = normalise_args({"container": "cart", "name": "Y", "value": "1"})
    assert a == b != c
    assert normalise_args({"autoscaler": "web", "resource": "cpu", "utilization": 1}) == \
        normalise_args({"autoscaler": "web", "resource": "cpu", "utilization": 2})
    # nested chaos specs: the action and the peer count, the amounts do not
    loss = {"spec": {"action": "loss", "loss": {"loss": "50"}, "target": {"selector": {"app": "b"}}}}
    loss_more = {"spec": {"action": "loss", "loss": {"loss": "90"}, "target": {"selector": {"app": "b"}}}}
    delay = {"spec": {"action": "delay", "delay": {"latency": "1s"}, "target": {"selector": {"app": "b"}}}}
    assert normalise_args(loss) == normalise_args(loss_more) != normalise_args(delay)


def test_scenario_key_is_a_multiset_of_mechanism_target_and_args():
    key = scenario_key(_scenario("a"))
    assert key == ((("workload.container.env:modified", "shop/Deployment/cart",
                     (("container", '"cart"'), ("name", '"REDIS_ADDR"'))), 1),)
    assert scenario_key(_scenario("b", value="other:2")) == key
    assert scenario_key(_scenario("c", env="LOG_LEVEL")) != key


def test_find_duplicates_pairs_same_mechanism_and_target():
    scenarios = [("a.itb", _scenario("a")), ("b.itb", _scenario("b", value="x:9")), ("c.itb", _scenario("c", env="LOG_LEVEL")),
                 ("d.itb", None)]
    pairs = find_duplicates(scenarios)
    assert [(first[0], second[0]) for first, second in pairs] == [("a.itb", "b.itb")]
    assert find_duplicates([("a.itb", _scenario("a")), ("a.itb", _scenario("a"))]) == []  # one file named twice


def test_the_scenario_library_has_no_duplicates():
    scenarios = []
    for path in sorted((REPO / "scenarios").rglob("*.itb")):
        diags = Diagnostics()
        scenarios.append((str(path), compile_source(path.read_bytes(), str(path), diags).scenario))
    pairs = find_duplicates(scenarios)
    assert not pairs, [(a[0], b[0]) for a, b in pairs]


# ---- W2001 through `itbench check`: an error fixture with two files -------------------------------------

W2001_EXPECTED = """\
warning[W2001]: scenario `shop-cart-redis-addr-again` duplicates `shop-cart-redis-addr` (a.itb): both inject `modified_env` on deployment `cart`
 --> b.itb:1:10
  |
1 | scenario "shop-cart-redis-addr-again" {
  |          ^^^^^^^^^^^^^^^^^^^^^^^^^^^^ same mechanism on the same target
  |
note: `shop-cart-redis-addr` is in a.itb (at 1:10)
help: change the target or the fault mechanism, or drop one of the two scenarios
"""


def _runner() -> CliRunner:
    try:
        return CliRunner(mix_stderr=False)
    except TypeError:  # click >= 8.2 always keeps them apart
        return CliRunner()


def _write_pair(folder: Path) -> None:
    (folder / "a.itb").write_text(SHOP.format(name="shop-cart-redis-addr", env="REDIS_ADDR", value="redis:1"))
    (folder / "b.itb").write_text(SHOP.format(name="shop-cart-redis-addr-again", env="REDIS_ADDR", value="nowhere:2"))


def test_w2001_is_registered_as_a_warning():
    assert "W2001" in CODES and severity_of("W2001") == "warning"
    assert "duplicate" in CODES["W2001"].page and "change the target" in CODES["W2001"].page.lower()


def test_w2001_fixture_two_files(tmp_path: Path, monkeypatch):
    _write_pair(tmp_path)
    monkeypatch.chdir(tmp_path)
    result = _runner().invoke(cli, ["check", "a.itb", "b.itb"])
    assert result.exit_code == 0, result.output  # a warning alone does not change the exit code
    assert result.stderr == W2001_EXPECTED + "2 files checked, 0 errors, 1 warning\n"


def test_w2001_json_and_with_errors(tmp_path: Path, monkeypatch):
    _write_pair(tmp_path)
    monkeypatch.chdir(tmp_path)
    result = _runner().invoke(cli, ["check", "--format", "json", "a.itb", "b.itb"])
    data = json.loads(result.stdout)
    assert [(d["code"], d["severity"], d["path"], d["line"]) for d in data["diagnostics"]] == [
        ("W2001", "warning", "b.itb", 1)]
    # with an error in another file, the exit code is the error's
    (tmp_path / "c.itb").write_text("scenario \"broken\" {\n")
    result = _runner().invoke(cli, ["check", "a.itb", "b.itb", "c.itb"])
    assert result.exit_code == 1
    assert "W2001" in result.stderr and "E1004" in result.stderr


def test_no_w2001_for_different_targets(tmp_path: Path, monkeypatch):
    (tmp_path / "a.itb").write_text(SHOP.format(name="a", env="REDIS_ADDR", value="x:1"))
    (tmp_path / "b.itb").write_text(SHOP.format(name="b", env="LOG_LEVEL", value="debug"))
    monkeypatch.chdir(tmp_path)
    result = _runner().invoke(cli, ["check", "a.itb", "b.itb"])
    assert result.exit_code == 0 and "W2001" not in result.output


def test_duplicate_diagnostics_without_sources_has_no_span():
    diags = duplicate_diagnostics([("a.itb", _scenario("a")), ("b.itb", _scenario("b"))])
    assert [d.code for d in diags] == ["W2001"] and diags[0].path == "b.itb"
