"""Chaos Mesh faults: pod_chaos, network_chaos, stress_chaos, http_chaos, io_chaos, dns_chaos, time_chaos, jvm_chaos.

* Every library scenario using them compiles clean; inject/ applies exactly the objects the
  faults create (a Schedule, or the experiment itself for a one-shot use), each valid against
  the vendored CRD schemas; revert/ deletes exactly those and changes nothing else.
* The scheduled form carries ITBench's id and `kubernetesObject` + `scheduleSpec` arguments, valid
  against the fault's `arguments.jsonSchema`, and its `scheduleSpec` is the Schedule's own spec; the
  one-shot form stays out of ITBench's scenario.yaml and gets its own solution.
* Each action's fields become Chaos Mesh's, typed; a broken value is refused by the checker with a
  located error before any manifest exists (also values the CRD schema alone would accept).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from support.compiling import in_itbench_names
from jsonschema import Draft202012Validator

from support.compiling import compile_files, yaml_documents
from itbench_dsl.compiler import compile_source
from itbench_dsl.diagnostics import Diagnostics, render_human
from itbench_dsl.faults import FAULTS, itbench_entry
from itbench_dsl.faults.base import NAME_WORDS


def _default(name: str) -> bool:
    """A default name of an experiment on cart in the tests' shop: the application's other component and a
    word (faults/base.application_name), which says nothing of the fault nor of its target."""
    component, _, word = name.rpartition("-")
    return component == "redis" and word in NAME_WORDS
from itbench_dsl.validate import validate_object


REPO = Path(__file__).resolve().parents[2]
REFERENCE = REPO.parent / "shared" / "reference" / "itbench" / "scenarios"
CHAOS_FAULTS = ("pod_chaos", "network_chaos", "stress_chaos", "http_chaos", "io_chaos", "dns_chaos", "time_chaos",
                "jvm_chaos")
CHAOS_SCENARIOS = sorted(
    p for p in (REPO / "scenarios").rglob("*.itb")
    if any(f"fault {name} " in p.read_text("utf-8") for name in CHAOS_FAULTS)
)

# diagnosis only: the agent may not end a Chaos Mesh object, so `mitigate` is not posed (E2037)
SHOP = '''scenario "shop-chaos" {
  domain sre
  complexity low
  description "Chaos in the shop."
  tasks diagnose
  topology {
    namespace "shop"
    deployment "cart" {
      replicas = 2
      container "cart" {
        image = "ghcr.io/example/cart:1.0"
        port "grpc" = 7070
        port "http" = 8080
        mount "data" = "/var/lib/cart"
      }
      volume "data" {
        empty_dir = true
      }
      container "sidecar" {
        image = "ghcr.io/example/proxy:1.0"
      }
    }
    deployment "redis" {
      image = "redis:7.2"
      port "redis" = 6379
    }
    service "cart" {
      port "http" = 8080
    }
    service "redis" {
      port "redis" = 6379
    }
    "cart" -> "redis"
  }
FAULT
}
'''


def compile_text(text: str, validate: bool = True) -> tuple[dict[str, bytes], Diagnostics]:
    return compile_files(text, validate=validate)


def compile_fault(fault: str, validate: bool = True):
    return compile_text(SHOP.replace("FAULT", fault), validate)


def ok(fault: str) -> dict[str, bytes]:
    files, diags = compile_fault(fault)
    assert not diags.items, render_human(diags, color=False)
    return files


def codes(fault: str, validate: bool = True) -> list[str]:
    _, diags = compile_fault(fault, validate)
    return [d.code for d in diags.items]


docs = yaml_documents


def injections(files) -> list[dict]:
    return [i for g in json.loads(files["scenario.json"])["faults"] for i in g["injections"]]


def only_object(files) -> dict:
    objects = docs(files, "inject/apply.yaml")
    assert len(objects) == 1
    return objects[0]


def spec_of(files) -> dict:
    obj = only_object(files)
    if obj["kind"] == "Schedule":
        return obj["spec"][next(k for k in obj["spec"] if k.endswith("Chaos"))]
    return obj["spec"]


# ---- the library's scenarios ---------------------------------------------------------------------------


def test_there_are_chaos_scenarios_for_every_kind_and_action():
    text = "\n".join(p.read_text("utf-8") for p in CHAOS_SCENARIOS)
    for name in CHAOS_FAULTS:
        assert f"fault {name} " in text
    for action in ("delay", "loss", "duplicate", "corrupt", "partition", "bandwidth", "pod_kill", "pod_failure",
                   "container_kill", "abort", "replace", "patch", "latency", "fault", "error", "rule_data", "stress"):
        assert f"action = {action}\n" in text, action


@pytest.mark.parametrize("path", CHAOS_SCENARIOS, ids=lambda p: p.stem)
def test_library_scenario_inject_and_revert(path: Path):
    diags = Diagnostics()
    files = compile_source(path.read_bytes(), str(path.relative_to(REPO)), diags).files
    assert not diags.items, render_human(diags, color=False)
    applied = docs(files, "inject/apply.yaml")
    created = [o for o in applied if o["apiVersion"] == "chaos-mesh.org/v1alpha1"]
    chaos = [i for i in injections(files) if i["fault"] in CHAOS_FAULTS]
    only_chaos = len(chaos) == len(injections(files))  # a scenario may mix chaos with other faults
    # inject creates one object per fault: the Schedule or the one-shot experiment, nothing of the topology
    assert len(created) == len(chaos)
    if only_chaos:
        assert applied == created
    by_name = {(o["kind"], o["metadata"]["name"]): o for o in created}  # the injection writes a kind in name order
    for injection in chaos:
        obj = by_name[(injection["root"]["kind"], injection["root"]["name"])]
        assert obj["apiVersion"] == "chaos-mesh.org/v1alpha1"
        assert obj["metadata"]["namespace"] == "chaos-mesh"
        assert "labels" not in obj["metadata"]  # no harness marker an agent could select by
        assert validate_object(obj) == [], validate_object(obj)
        selector = (obj["spec"] if obj["kind"] != "Schedule" else
                    obj["spec"][next(k for k in obj["spec"] if k.endswith("Chaos"))])["selector"]
        assert selector["namespaces"] == [injection["target"]["namespace"]]
    # revert deletes exactly what inject created, and restores nothing since nothing was changed
    if only_chaos:
        assert "inject/delete.yaml" not in files and "revert/apply.yaml" not in files
    deleted = [d for d in docs(files, "revert/delete.yaml") if d["apiVersion"] == "chaos-mesh.org/v1alpha1"]
    assert sorted((d["kind"], d["metadata"]["name"], d["metadata"]["namespace"]) for d in deleted) == sorted(
        (o["kind"], o["metadata"]["name"], "chaos-mesh") for o in created)
    # the agent may neither see nor remove them (a PodChaos names the fault's kind and target: E4010), so the
    # scenario does not ask it to mitigate (E2037)
    access = docs(files, "manifests/agent-access.yaml")
    assert not any("chaos-mesh.org" in rule["apiGroups"] for d in access for rule in d.get("rules") or [])
    assert "mitigate" not in [t["name"] for t in json.loads(files["scenario.json"])["tasks"] or []]


@pytest.mark.parametrize("path", CHAOS_SCENARIOS, ids=lambda p: p.stem)
def test_scheduled_uses_carry_itbench_arguments(path: Path):
    diags = Diagnostics()
    files = compile_source(path.read_bytes(), str(path.relative_to(REPO)), diags).files
    schema = Draft202012Validator(itbench_entry("faults", "scheduled-chaos-mesh-experiment")["arguments"]["jsonSchema"])
    scenario_yaml = docs(files, "itbench/scenario.yaml")[0]
    listed = [i for f in scenario_yaml["spec"]["faults"] for i in f["injections"]
              if i["id"] == "scheduled-chaos-mesh-experiment"]
    schedules = {o["metadata"]["name"]: o for o in docs(files, "inject/apply.yaml") if o["kind"] == "Schedule"}
    assert len(listed) == len(schedules)
    for injection in listed:
        args = injection["args"]
        assert list(schema.iter_errors(args)) == []
        schedule = schedules[args["kubernetesObject"]["metadata"]["name"]]
        chaos_type = args["scheduleSpec"]["type"]
        field = next(k for k in args["scheduleSpec"] if k != "type")
        # what ITBench would create is what the bundle creates
        assert schedule["spec"]["type"] == chaos_type and schedule["spec"][field] == args["scheduleSpec"][field]


def test_scenario_62_scenario_yaml_is_itbench_s():
    """Mirrored without an id (ITBench's ground truth lists one solution for two schedules); its scenario.yaml is equal."""
    reference = REFERENCE / "scenario_62" / "scenario.yaml"
    if not reference.is_file():
        pytest.skip("no shared reference")
    path = REPO / "scenarios" / "sre" / "otel-valkey-cart-stress-and-network-delay.itb"
    result = compile_source(path.read_bytes(), "x.itb", Diagnostics())
    ours = docs(result.files, "itbench/scenario.yaml")[0]
    theirs = yaml.safe_load(reference.read_text("utf-8"))
    ours["metadata"] = theirs["metadata"]
    # the Schedules' names are the compiler's (ITBench's tell the fault); otherwise the file is ITBench's
    assert in_itbench_names(ours, theirs, result.scenario) == theirs


# ---- one-shot and scheduled forms ------------------------------------------------------------------------


def test_one_shot_creates_the_experiment_and_stays_out_of_itbench_scenario():
    files = ok('''  fault pod_chaos on deployment "cart" {
    action = pod_kill
  }''')
    obj = only_object(files)
    name = obj["metadata"]["name"]
    assert obj["kind"] == "PodChaos" and _default(name)
    assert obj["spec"] == {"action": "pod-kill", "mode": "all",
                           "selector": {"labelSelectors": {"app.kubernetes.io/name": "cart"}, "namespaces": ["shop"]}}
    (injection,) = injections(files)
    assert injection["itbench_id"] == "" and injection["root"]["kind"] == "PodChaos"
    assert docs(files, "itbench/scenario.yaml")[0]["spec"]["faults"] == []
    truth = docs(files, "itbench/groundtruth.yaml")[0]["spec"]
    assert truth["entities"] == [{"apiVersion": "chaos-mesh.org/v1alpha1", "kind": "PodChaos",
                                  "metadata": {"name": name, "namespace": "chaos-mesh"}}]
    commands = [s.get("command") for s in truth["solutions"][0][0]["steps"]]
    assert "kubectl -n chaos-mesh delete podchaos " + name in commands
    assert [(d["kind"], d["metadata"]["name"]) for d in docs(files, "revert/delete.yaml")] == [("PodChaos", name)]


def test_every_wraps_the_experiment_in_a_schedule_with_itbench_s_solution():
    files = ok('''  fault pod_chaos on deployment "cart" {
    action = pod_kill
    every = 30s
  }''')
    obj = only_object(files)
    assert obj["kind"] == "Schedule"
    assert obj["spec"]["schedule"] == "@every 30s" and obj["spec"]["type"] == "PodChaos"
    assert obj["spec"]["podChaos"]["action"] == "pod-kill"
    (injection,) = injections(files)
    assert injection["itbench_id"] == "scheduled-chaos-mesh-experiment"
    assert injection["itbench_args"]["scheduleSpec"] == {"podChaos": obj["spec"]["podChaos"], "type": "PodChaos"}
    truth = docs(files, "itbench/groundtruth.yaml")[0]["spec"]
    assert _default(obj["metadata"]["name"])
    assert truth["solutions"][0][0]["steps"][0]["command"].startswith("kubectl -n chaos-mesh annotate schedule "
                                                                      + obj["metadata"]["name"])


@pytest.mark.parametrize("written,expected", [
    ('"*/5 * * * *"', "*/5 * * * *"), ('"@hourly"', "@hourly"), ('"@every 90s"', "@every 1m30s"),
    ('"@every 1m30s"', "@every 1m30s"), ('"0 9-17 * * mon-fri"', "0 9-17 * * mon-fri"),
])
def test_schedule_strings(written: str, expected: str):
    files = ok(f'''  fault pod_chaos on deployment "cart" {{
    action = pod_kill
    schedule = {written}
  }}''')
    assert only_object(files)["spec"]["schedule"] == expected


@pytest.mark.parametrize("mode,value,expected", [
    ("one", None, ("one", None)), ("fixed", "1", ("fixed", "1")), ("fixed_percent", "50%", ("fixed-percent", "50")),
    ("random_max_percent", "30%", ("random-max-percent", "30")),
])
def test_modes_are_written_explicitly(mode, value, expected):
    line = f"\n    value = {value}" if value else ""
    spec = spec_of(ok(f'''  fault pod_chaos on deployment "cart" {{
    action = pod_kill
    mode = {mode}{line}
  }}'''))
    assert (spec["mode"], spec.get("value")) == expected


def test_pod_phases_and_selector_override():
    spec = spec_of(ok('''  fault pod_chaos on deployment "cart" {
    action = pod_failure
    duration = 90s
    pod_phases = ["Running"]
    selector {
      "app.kubernetes.io/name" = "cart"
    }
  }'''))
    assert spec["selector"]["podPhaseSelectors"] == ["Running"] and spec["duration"] == "1m30s"


# ---- each kind's actions ------------------------------------------------------------------------------


def test_pod_chaos_actions():
    assert spec_of(ok('''  fault pod_chaos on deployment "cart" {
    action = container_kill
    containers = ["sidecar"]
  }'''))["containerNames"] == ["sidecar"]
    assert spec_of(ok('''  fault pod_chaos on deployment "cart" {
    action = pod_kill
    grace_period = 10s
  }'''))["gracePeriod"] == 10
    spec = spec_of(ok('''  fault pod_chaos on deployment "cart" {
    action = pod_failure
    duration = 5m
  }'''))
    assert spec["action"] == "pod-failure" and spec["duration"] == "5m"


@pytest.mark.parametrize("timing", ["", "\n    every = 1m", '\n    schedule = "*/5 * * * *"'])
def test_pod_failure_without_duration_lasts_until_reverted(timing: str):
    # Chaos Mesh 2.x asks no duration of pod-failure (api/v1alpha1/podchaos_webhook.go): the pods stay
    # failed until the experiment (or the Schedule that made it) is deleted, which the revert does
    files = ok(f'''  fault pod_chaos on deployment "cart" {{
    action = pod_failure{timing}
  }}''')
    obj = only_object(files)
    spec = spec_of(files)
    assert spec["action"] == "pod-failure" and "duration" not in spec
    assert obj["kind"] == ("Schedule" if timing else "PodChaos")
    if timing:
        assert obj["spec"]["concurrencyPolicy"] == "Forbid"  # no second experiment while the first holds
    deleted = [(o["kind"], o["metadata"]["name"]) for o in docs(files, "revert/delete.yaml")]
    assert (obj["kind"], obj["metadata"]["name"]) in deleted


@pytest.mark.parametrize("fields,expected", [
    ("action = delay\n    latency = 200ms\n    jitter = 10ms\n    correlation = 25%",
     {"delay": {"latency": "200ms", "jitter": "10ms", "correlation": "25"}}),
    ("action = delay\n    latency = 2s", {"delay": {"latency": "2000ms"}}),
    ("action = loss\n    loss = 30%", {"loss": {"loss": "30", "correlation": "0"}}),
    ("action = duplicate\n    duplicate = 40%", {"duplicate": {"duplicate": "40", "correlation": "0"}}),
    ("action = corrupt\n    corrupt = 5%\n    correlation = 1%", {"corrupt": {"corrupt": "5", "correlation": "1"}}),
    ('action = bandwidth\n    rate = "1mbps"', {"bandwidth": {"rate": "1mbps", "limit": 20971520, "buffer": 10000}}),
    ('action = partition\n    peer = "redis"\n    direction = both',
     {"direction": "both", "target": {"mode": "all", "selector": {
         "labelSelectors": {"app.kubernetes.io/name": "redis"}, "namespaces": ["shop"]}}}),
])
def test_network_chaos_actions(fields: str, expected: dict):
    spec = spec_of(ok(f'''  fault network_chaos on deployment "cart" {{
    {fields}
    duration = 30s
  }}'''))
    for key, value in expected.items():
        assert spec[key] == value


@pytest.mark.parametrize("block,expected", [
    ("cpu {\n      workers = 2\n      load = 80%\n    }", {"cpu": {"workers": 2, "load": 80}}),
    ("memory {\n      workers = 1\n      size = 256Mi\n    }", {"memory": {"workers": 1, "size": "256MiB"}}),
    ("memory {\n      workers = 1\n      size = 128M\n    }", {"memory": {"workers": 1, "size": "128MB"}}),
    ('memory {\n      workers = 4\n      size = 80%\n      oom_score_adj = -1000\n      options = ["--vm-hang", "0"]\n    }',
     {"memory": {"workers": 4, "size": "80%", "oomScoreAdj": -1000, "options": ["--vm-hang", "0"]}}),
])
def test_stress_chaos_stressors(block: str, expected: dict):
    files = ok(f'''  fault stress_chaos on deployment "cart" {{
    duration = 1m
    containers = ["cart"]
    {block}
  }}''')
    spec = spec_of(files)
    assert spec["stressors"] == expected and spec["containerNames"] == ["cart"]
    assert _default(only_object(files)["metadata"]["name"])


@pytest.mark.parametrize("fields,expected", [
    ("action = abort\n    target = request", {"abort": True, "target": "Request"}),
    ("action = delay\n    target = response\n    delay = 1500ms", {"delay": "1500ms", "target": "Response"}),
    ('action = replace\n    target = response\n    code = 200\n    replace {\n      code = 503\n      body = "down"\n'
     '      headers {\n        "Retry-After" = "60"\n      }\n    }',
     # the replaced body in base64 ("down"): Chaos Mesh reads it as bytes
     {"code": 200, "replace": {"code": 503, "body": "ZG93bg==", "headers": {"Retry-After": "60"}}}),
    ('action = replace\n    target = request\n    method = "GET"\n    replace {\n      path = "/missing"\n'
     '      method = "DELETE"\n    }', {"method": "GET", "replace": {"path": "/missing", "method": "DELETE"}}),
    ('action = patch\n    target = request\n    path = "/api/*"\n    patch {\n      body = "{\\"x\\": 1}"\n'
     '      queries {\n        "debug" = "1"\n      }\n    }',
     {"path": "/api/*", "patch": {"body": {"type": "JSON", "value": '{"x": 1}'}, "queries": [["debug", "1"]]}}),
])
def test_http_chaos_actions(fields: str, expected: dict):
    spec = spec_of(ok(f'''  fault http_chaos on deployment "cart" {{
    {fields}
    port = 8080
  }}'''))
    assert spec["port"] == 8080
    for key, value in expected.items():
        assert spec[key] == value


# ---- broken values: refused by the checker, located, before any schema runs -----------------------------------

BROKEN = [
    # (fault body, code): each refused at compile time; validate=False shows no schema is involved
    ('action = pod_kil', "E2010"),
    ('action = pod_kill\n    mode = evry', "E2010"),
    ('action = container_kill\n    containers = ["cart", "sidecars"]', "E2020"),
    ('action = container_kill', "E2007"),
    ('action = pod_kill\n    schedule = "61 * * * *"', "E2010"),
    ('action = pod_kill\n    mode = fixed_percent\n    value = 0%', "E2010"),
    ('action = pod_kill\n    pod_phases = ["Runing"]', "E2010"),
]


@pytest.mark.parametrize("body,code", BROKEN)
def test_broken_pod_chaos_values_are_refused_by_the_checker(body: str, code: str):
    fault = f'  fault pod_chaos on deployment "cart" {{\n    {body}\n  }}'
    assert codes(fault, validate=False) == [code]
    assert codes(fault) == [code]


def test_values_the_crd_schema_accepts_are_still_refused():
    # the Schedule the checker refuses would pass the CRD schema: the admission rules are the checker's
    schedule = {
        "apiVersion": "chaos-mesh.org/v1alpha1", "kind": "Schedule",
        "metadata": {"name": "redis-main", "namespace": "chaos-mesh"},
        "spec": {"schedule": "@every 60s", "type": "StressChaos", "stressChaos": {
            "mode": "all", "selector": {"namespaces": ["shop"]}, "stressors": {"cpu": {"workers": 0}}}},
    }
    assert validate_object(schedule) == []
    assert codes('''  fault stress_chaos on deployment "cart" {
    every = 1m
    cpu {
      workers = 0
    }
  }''') == ["E2010"]
    http = {"apiVersion": "chaos-mesh.org/v1alpha1", "kind": "HTTPChaos",
            "metadata": {"name": "redis-main", "namespace": "chaos-mesh"},
            "spec": {"mode": "all", "selector": {"namespaces": ["shop"]}, "target": "Request", "port": 9999,
                     "abort": True}}
    assert validate_object(http) == []
    assert codes('''  fault http_chaos on deployment "cart" {
    action = abort
    target = request
    port = 9999
  }''') == ["E2022"]
    # container-kill without containerNames: the schema allows it, Chaos Mesh's PodChaos webhook does not
    assert codes('''  fault pod_chaos on deployment "cart" {
    action = container_kill
  }''') == ["E2007"]


def test_a_broken_value_the_schema_also_refuses_never_reaches_it():
    # `mode = every` would fail the CRD's enum (E3001); the checker stops it first, at the value
    fault = '''  fault network_chaos on deployment "cart" {
    action = loss
    loss = 10%
    mode = every
  }'''
    _, diags = compile_fault(fault)
    line = SHOP.replace("FAULT", fault).splitlines().index("    mode = every") + 1
    (diag,) = diags.items
    assert (diag.code, diag.span.line, diag.span.column) == ("E2010", line, 12) and "selection mode" in diag.message


def test_every_error_is_reported_in_one_run():
    found = codes('''  fault http_chaos on deployment "cart" {
    action = delay
    target = request
    port = 9090
    method = "GETT"
    code = 200
    delay = 1s
  }''')
    assert sorted(found) == ["E2010", "E2010", "E2022"]


def test_documentation_fields():
    for name in CHAOS_FAULTS:
        kind = FAULTS[name]
        assert kind.itbench_id == "scheduled-chaos-mesh-experiment"
        assert kind.args and kind.preconditions and kind.creates and kind.domains == ("sre",)
        assert kind.targets == ("deployment", "statefulset", "static_pod")  # a static pod: etcd, say


@pytest.mark.parametrize("fields,expected", [
    ('action = latency\n    delay = 200ms\n    percent = 50%', {"action": "latency", "delay": "200ms", "percent": 50}),
    ('action = fault\n    errno = 28\n    path = "/var/lib/cart/**/*"\n    methods = ["write", "fsync"]',
     {"action": "fault", "errno": 28, "path": "/var/lib/cart/**/*", "methods": ["write", "fsync"]}),
    ("action = attr_override\n    attr {\n      perm = 0\n      kind = directory\n    }",
     {"action": "attrOverride", "attr": {"perm": 0, "kind": "directory"}}),
    ("action = mistake\n    mistake {\n      filling = random\n      max_occurrences = 2\n      max_length = 64\n    }",
     {"action": "mistake", "mistake": {"filling": "random", "maxOccurrences": 2, "maxLength": 64}}),
])
def test_io_chaos_actions(fields: str, expected: dict):
    files = ok(f'''  fault io_chaos on deployment "cart" {{
    {fields}
    volume_path = "/var/lib/cart"
  }}''')
    spec = spec_of(files)
    assert spec["volumePath"] == "/var/lib/cart"
    for key, value in expected.items():
        assert spec[key] == value
    assert _default(only_object(files)["metadata"]["name"])


def test_io_chaos_volume_of_a_named_container():
    # the sidecar mounts nothing: naming it makes the mount path unknown
    assert codes('''  fault io_chaos on deployment "cart" {
    action = latency
    delay = 1s
    volume_path = "/var/lib/cart"
    containers = ["sidecar"]
  }''') == ["E2011"]


def test_dns_chaos():
    spec = spec_of(ok('''  fault dns_chaos on deployment "cart" {
    action = random
    patterns = ["redis", "redis.*", "re?is"]
    every = 5m
    duration = 1m
  }'''))
    assert spec["action"] == "random" and spec["patterns"] == ["redis", "redis.*", "re?is"]
    # no pattern: every domain name
    assert "patterns" not in spec_of(ok('''  fault dns_chaos on deployment "cart" {
    action = error
  }'''))


def test_time_chaos():
    files = ok('''  fault time_chaos on deployment "cart" {
    offset = 1h30m
    backwards = true
    clocks = ["CLOCK_REALTIME", "CLOCK_MONOTONIC"]
    containers = ["cart"]
  }''')
    spec = spec_of(files)
    assert spec["timeOffset"] == "-1h30m" and spec["clockIds"] == ["CLOCK_REALTIME", "CLOCK_MONOTONIC"]
    assert _default(only_object(files)["metadata"]["name"])
    assert spec_of(ok('''  fault time_chaos on deployment "cart" {
    offset = 10m
  }'''))["timeOffset"] == "10m"


@pytest.mark.parametrize("fields,expected", [
    ('action = latency\n    class = "shop.Cart"\n    method = "get"\n    latency = 2s',
     {"action": "latency", "class": "shop.Cart", "method": "get", "latency": 2000}),
    ('action = return\n    class = "shop.Cart"\n    method = "size"\n    return_value = "0"',
     {"action": "return", "returnValue": "0"}),
    ('action = exception\n    class = "shop.Cart"\n    method = "get"\n    exception = "java.io.IOException(\\"boom\\")"',
     {"action": "exception", "exception": 'java.io.IOException("boom")'}),
    ("action = stress\n    cpu_count = 2", {"action": "stress", "cpuCount": 2}),
    ("action = gc\n    port = 9288", {"action": "gc", "port": 9288}),
    ('action = rule_data\n    rule_data = "RULE r\\nCLASS shop.Cart\\nMETHOD get\\nAT ENTRY\\nIF true\\nDO return null\\nENDRULE"',
     {"action": "ruleData"}),
])
def test_jvm_chaos_actions(fields: str, expected: dict):
    spec = spec_of(ok(f'''  fault jvm_chaos on deployment "cart" {{
    {fields}
    every = 2m
  }}'''))
    for key, value in expected.items():
        assert spec[key] == value


@pytest.mark.parametrize("fault,code", [
    ('io_chaos on deployment "cart" {\n    action = fault\n    errno = 200\n    volume_path = "/var/lib/cart"', "E2010"),
    ('io_chaos on deployment "cart" {\n    action = latency\n    delay = 1s\n    volume_path = "/data"', "E2011"),
    ('dns_chaos on deployment "cart" {\n    action = eror', "E2010"),
    ('dns_chaos on deployment "cart" {\n    action = error\n    patterns = ["Redis Host"]', "E2010"),
    ('time_chaos on deployment "cart" {\n    offset = 0s', "E2010"),
    ('jvm_chaos on deployment "cart" {\n    action = latency\n    class = "shop Cart"\n    method = "get"\n    latency = 1s', "E2010"),
    ('jvm_chaos on deployment "cart" {\n    action = stress', "E2007"),
    ('jvm_chaos on deployment "cart" {\n    action = return\n    class = "shop.Cart"\n    method = "get"', "E2007"),
])
def test_broken_io_dns_time_jvm_values_are_refused_by_the_checker(fault: str, code: str):
    text = f"  fault {fault}\n  }}"
    assert codes(text, validate=False) == [code]


def test_one_printer_of_durations():
    """units.format_duration is the one printer: a value is never written two ways."""
    from itbench_dsl.units import format_duration, parse_duration, parse_go_duration

    for seconds, text in ((90, "1m30s"), (300, "5m"), (0.5, "500ms"), (1.5, "1500ms"), (0, "0s"), (5400, "1h30m"),
                          (7261, "2h1m1s"), (90.25, "1m30s250ms")):
        assert format_duration(seconds) == text
        assert parse_go_duration(text) == parse_duration(text) or text == "0s"
        assert float(parse_go_duration(text)) == seconds
    assert parse_go_duration("1.5h") == 5400 and parse_go_duration("-5s") == -5 and parse_go_duration("5") is None


# ---- HTTP header selectors, and a mode's figure ------------------------------------------------------------


def test_http_chaos_selects_by_request_and_response_headers():
    spec = spec_of(ok('''  fault http_chaos on deployment "cart" {
    action = abort
    target = response
    port = 8080
    request_headers {
      "Content-Type" = "application/json"
    }
    response_headers {
      "X-Cache" = "miss"
    }
  }'''))
    assert spec["request_headers"] == {"Content-Type": "application/json"}
    assert spec["response_headers"] == {"X-Cache": "miss"}


@pytest.mark.parametrize("body,code", [
    # response headers exist only on the response
    ('target = request\n    response_headers {\n      "X-Cache" = "miss"\n    }', "E2010"),
    # a header name is an HTTP token
    ('target = request\n    request_headers {\n      "Content Type" = "x"\n    }', "E2010"),
])
def test_http_header_selectors_are_checked(body: str, code: str):
    assert codes(f'  fault http_chaos on deployment "cart" {{\n    action = abort\n    port = 8080\n    {body}\n  }}',
                 validate=False) == [code]


@pytest.mark.parametrize("mode", ["fixed", "fixed_percent", "random_max_percent"])
def test_a_mode_with_a_figure_says_it_needs_value_at_the_mode(mode: str):
    fault = f'  fault pod_chaos on deployment "cart" {{\n    action = pod_kill\n    mode = {mode}\n  }}'
    _, diags = compile_fault(fault)
    (diag,) = diags.items
    line = SHOP.replace("FAULT", fault).splitlines().index(f"    mode = {mode}") + 1
    assert (diag.code, diag.span.line) == ("E2007", line) and f"mode `{mode}` needs `value`" in diag.message


# ---- rules read from Chaos Mesh's source (chaos-mesh/chaos-mesh 608b61e7, api/v1alpha1) -------------------------


@pytest.mark.parametrize("cron", ["*/30 * * * * *", "0 */5 * * * *", "*/5 * * * *", "@hourly", "@every 2m"])
def test_cron_schedules_chaos_mesh_parses_are_accepted(cron: str):
    # StandardCronParser (schedule_types.go): an optional leading seconds field, then the standard five
    obj = only_object(ok(f'''  fault pod_chaos on deployment "cart" {{
    action = pod_kill
    schedule = "{cron}"
  }}'''))
    assert obj["spec"]["schedule"] == cron


@pytest.mark.parametrize("cron", ["60 * * * * *", "* * * * * * *", "* * * *"])
def test_cron_schedules_chaos_mesh_cannot_parse_are_refused(cron: str):
    assert codes(f'''  fault pod_chaos on deployment "cart" {{
    action = pod_kill
    schedule = "{cron}"
  }}''') == ["E2010"]


@pytest.mark.parametrize("rate,accepted", [("1mbps", True), ("10 MBPS", True), ("100kbit", True),
                                           ("1.5mbps", False), ("mbps", False), ("10 megabits", False)])
def test_bandwidth_rate_follows_chaos_mesh_rate_validate(rate: str, accepted: bool):
    # Rate.Validate (networkchaos_webhook.go): case-insensitive unit, whole number (strconv.ParseUint)
    fault = f'''  fault network_chaos on deployment "cart" {{
    action = bandwidth
    rate = "{rate}"
  }}'''
    assert codes(fault) == ([] if accepted else ["E2010"])


@pytest.mark.parametrize("name,timing,accepted", [
    ("cart.failure", "", True),  # a custom resource's name is a DNS-1123 subdomain
    ("c" * 200, "", True),
    ("c" * 254, "", False),
    ("c" * 63, "\n    every = 1m", True),
    ("c" * 64, "\n    every = 1m", False),  # a Schedule's name labels the experiments it spawns
    ("Cart", "", False),
])
def test_experiment_and_schedule_names(name: str, timing: str, accepted: bool):
    fault = f'''  fault pod_chaos on deployment "cart" {{
    action = pod_kill
    name = "{name}"{timing}
  }}'''
    assert codes(fault) == ([] if accepted else ["E2014"])


@pytest.mark.parametrize("timing,accepted", [("every = 1s", True), ("every = 500ms", False), ("every = 1500ms", False),
                                             ('schedule = "@every 2500ms"', False), ("every = 90s", True)])
def test_schedule_intervals_are_whole_seconds(timing: str, accepted: bool):
    # robfig/cron's Every (Chaos Mesh's Schedule): below 1s rounds up to 1s, fractions of a second are dropped
    assert codes(f'''  fault pod_chaos on deployment "cart" {{
    action = pod_kill
    {timing}
  }}''') == ([] if accepted else ["E2010"])
