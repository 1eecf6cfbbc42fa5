"""Right fixes the mitigation grading must not refuse (docs/evaluator.md, "Fields by meaning"): an environment
variable is the value the kubelet gives the container (through `envFrom`, `valueFrom` or `$(NAME)` expansion as
well as a literal `value`); a resource quantity is its value however written. Each right fix is beside a near
miss the grading must still refuse. The states are the compiler's derived ones, edited as an agent would.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

from test_evaluator import derived, failed, mitigate, obj  # noqa: E402

from itbench_dsl.runtime import evaluator as rt  # noqa: E402


def _container(state: dict, kind: str, name: str) -> dict:
    return obj(state, kind, name)["spec"]["template"]["spec"]["containers"][0]


def _config_map(state: dict, name: str, namespace: str, data: dict) -> None:
    state["resources"]["items"].append({"apiVersion": "v1", "kind": "ConfigMap",
                                        "metadata": {"name": name, "namespace": namespace}, "data": data})


# ---- the kubelet's `$(NAME)` expansion ---------------------------------------------------------------------


@pytest.mark.parametrize("text, want", [
    ("redis:$(PORT)", "redis:6379"),
    ("redis:$$(PORT)", "redis:$(PORT)"),  # `$$` is one literal `$`
    ("redis:$(NONE)", "redis:$(NONE)"),  # an undefined name stays as written
    ("redis:$(PORT", "redis:$(PORT"),  # unclosed
    ("a$b$", "a$b$"),  # a `$` before anything else stays
    ("$$$$", "$$"),
    ("$(PORT)$(PORT)", "63796379"),
])
def test_expansion_follows_the_kubelet(text, want):
    assert rt.expand_env(text, {"PORT": "6379"}) == want


def test_the_environment_is_envfrom_then_env_in_order():
    state = rt.State({"resources": {"items": [
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a", "namespace": "ns"},
         "data": {"HOST": "redis", "PORT": "1", "bad key": "x"}},
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "b", "namespace": "ns"}, "data": {"PORT": "2"}},
    ]}, "captured": ["ns/ConfigMap"]})
    container = {"envFrom": [{"configMapRef": {"name": "a"}}, {"configMapRef": {"name": "b"}, "prefix": "B_"},
                             {"configMapRef": {"name": "b"}}, {"configMapRef": {"name": "gone", "optional": True}}],
                 "env": [{"name": "ADDR", "value": "$(HOST):$(PORT)"}, {"name": "HOST", "value": "other"}]}
    env = rt.container_env(container, state, "ns")
    assert env == {"HOST": "other", "PORT": "2", "B_PORT": "2", "ADDR": "redis:2"}
    container["envFrom"].append({"configMapRef": {"name": "gone"}})  # required and missing: the container never starts
    assert rt.container_env(container, state, "ns") is None


# ---- an environment variable the fault changed, restored through its sources --------------------------------

ENV_CASES = [  # scenario, workload, variable, healthy value (a field change, and a scenario's own predicate)
    ("shop-cart-modified-env", "cart", "REDIS_ADDR", "redis:6379"),
    ("otel-shipping-quote-address", "shipping", "QUOTE_ADDR", "http://quote:8080"),
    ("sregym-missing-env-variable-astronomy-shop", "frontend", "CART_ADDR", "cart:8080"),
]


def _sourced(name, workload, variable, how, value):
    state = derived(name, "solved")
    container = _container(state, "Deployment", workload)
    namespace = obj(state, "Deployment", workload)["metadata"]["namespace"]
    container["env"] = [e for e in container.get("env") or [] if e["name"] != variable]
    head, tail = value[:len(value) // 2], value[len(value) // 2:]
    if how == "envFrom":
        _config_map(state, "fix", namespace, {variable: value})
        container["envFrom"] = [{"configMapRef": {"name": "fix"}}]
    elif how == "prefix":
        _config_map(state, "fix", namespace, {variable[3:]: value})
        container["envFrom"] = [{"configMapRef": {"name": "fix"}, "prefix": variable[:3]}]
    elif how == "expanded":
        container["env"] += [{"name": "PART", "value": tail}, {"name": variable, "value": f"{head}$(PART)"}]
    elif how == "escaped":
        container["env"] += [{"name": "PART", "value": tail}, {"name": variable, "value": f"{head}$$(PART)"}]
    elif how == "defined later":
        container["env"] += [{"name": variable, "value": f"{head}$(PART)"}, {"name": "PART", "value": tail}]
    elif how == "overridden":
        _config_map(state, "fix", namespace, {variable: value})
        container["envFrom"] = [{"configMapRef": {"name": "fix"}}]
        container["env"].append({"name": variable, "value": value + "-other"})
    return state


@pytest.mark.parametrize("name, workload, variable, value", ENV_CASES)
@pytest.mark.parametrize("how", ["envFrom", "prefix", "expanded"])
def test_a_variable_restored_through_its_sources_passes(name, workload, variable, value, how):
    verdict = mitigate(name, _sourced(name, workload, variable, how, value))
    assert verdict["passed"], failed(verdict)


@pytest.mark.parametrize("name, workload, variable, value", ENV_CASES)
@pytest.mark.parametrize("how", ["escaped", "defined later", "overridden"])
def test_a_variable_the_container_does_not_get_healthy_fails(name, workload, variable, value, how):
    assert not mitigate(name, _sourced(name, workload, variable, how, value))["passed"]


@pytest.mark.parametrize("name, workload, variable, value", ENV_CASES)
def test_a_variable_from_envfrom_holding_the_wrong_value_fails(name, workload, variable, value):
    assert not mitigate(name, _sourced(name, workload, variable, "envFrom", value + "-other"))["passed"]


# ---- quantities by value ------------------------------------------------------------------------------------

RESOURCES = "otel-postgresql-insufficient-resources"


@pytest.mark.parametrize("memory, passes", [("100Mi", True), ("102400Ki", True), ("0.09765625Gi", True),
                                            ("200Mi", True), ("1Gi", True), ("99Mi", False), ("5Mi", False)])
def test_a_memory_limit_is_compared_by_value(memory, passes):
    state = derived(RESOURCES, "solved")
    _container(state, "Deployment", "postgresql").setdefault("resources", {}).setdefault("limits", {})["memory"] = memory
    assert mitigate(RESOURCES, state)["passed"] is passes


OOM = "k8sbench-fix-oomkilled"


@pytest.mark.parametrize("cpu", ["0.1", "100m", 0.1, "1", "1000m", 1, None])
def test_a_cpu_limit_written_otherwise_raised_or_removed_passes(cpu):
    state = derived(OOM, "solved")
    limits = _container(state, "Deployment", "backend-api")["resources"]["limits"]
    if cpu is None:
        limits.pop("cpu")
    else:
        limits["cpu"] = cpu
    verdict = mitigate(OOM, state)
    assert verdict["passed"], failed(verdict)


@pytest.mark.parametrize("a, b, equal", [("1", "1000m", True), ("0.5", "500m", True), (1, "1000m", True),
                                         ("1Gi", "1024Mi", True), ("1G", "1000M", True), ("1Gi", "1G", False),
                                         ("500m", "0.50", True), ("1e3", "1k", True), ("1", "1m", False)])
def test_quantities_compare_by_value(a, b, equal):
    assert rt.same(a, b) is equal
