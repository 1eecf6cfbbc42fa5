"""`itbench import` on ITBench scenarios the 50 reference ports do not cover.

ITBench's other public scenarios are written like the reference ones, with shapes none of the 50 has.
Each class of such shapes has its tests here:

1. a scheduled Chaos Mesh PodChaos without a duration: actions that take none (`pod-kill`, `container-kill`
   with its `containerNames`) and `pod-failure`, which then lasts until the experiment is deleted (ITBench's
   scenario 18);
2. every HTTPChaos action (abort, delay, replace, patch), each target, and the port, path, method, code and
   header selectors;
3. a fault, or ground truth, on an object the injection creates and the application lacks (the Secret
   `valkey-credentials` of `valkey-workload-changed-password`);
4. every argument every ITBench fault schema allows (schemas/json/faults/*.json; for the Chaos Mesh Schedule,
   the fields of the experiments its CRD holds), built by mutating reference index files: each imports and
   compiles clean, or is refused by a located diagnostic that names the argument;
5. a YAML "billion laughs" file: refused at once, located.

The fixtures (tests/cases/import/held-out/) are written as ITBench writes its index files and need nothing
outside the repository; class 4 reads ../shared/reference and is skipped without it.
"""

from __future__ import annotations

import base64
import copy
import json
import re
import time
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from itbench_dsl.cli import cli
from itbench_dsl.compiler import compile_source
from itbench_dsl.diagnostics import Diagnostics, render_human
from itbench_dsl.importer import import_path
from itbench_dsl.importer.located import MAX_VALUES, load
from itbench_dsl.faults.config import CORRUPTED_VALUE

REPO = Path(__file__).resolve().parents[2]
HELD_OUT = REPO / "tests" / "cases" / "import" / "held-out"
REFERENCE = REPO.parent / "shared" / "reference"
ITBENCH = REFERENCE / "itbench"
needs_reference = pytest.mark.skipif(not (ITBENCH / "schemas").is_dir(),
                                     reason=f"the shared reference folder is absent ({REFERENCE})")


def imported(path: Path) -> tuple[str | None, Diagnostics]:
    diags = Diagnostics()
    return import_path(path, diags), diags


def compiled(text: str) -> dict[str, bytes]:
    diags = Diagnostics()
    result = compile_source(text.encode("utf-8"), "imported.itb", diags)
    assert not diags.errors(), render_human(diags, color=False)
    return result.files


# the import leaves a Schedule's name to the compiler, saying so (W5005 at the name): ITBench names it after the fault
NAME_LEFT = "says what the fault does"


def unnamed(args: dict) -> dict:
    """Injection arguments without the name of the Schedule they create, which the port does not carry."""
    target = args.get("kubernetesObject") if isinstance(args, dict) else None
    if not isinstance(target, dict) or target.get("kind") != "Schedule" or not isinstance(target.get("metadata"), dict):
        return args
    return {**args, "kubernetesObject": {**target, "metadata": {k: v for k, v in target["metadata"].items()
                                                                 if k != "name"}}}


def said(diags: Diagnostics) -> list:
    """The import's diagnostics but the notes that a Schedule's name is left to the compiler, and that a Chaos Mesh
    fault's port poses the diagnosis alone (W5006: the agent could not end the experiment)."""
    return [d for d in diags.items if not (d.code == "W5005" and NAME_LEFT in d.message) and d.code != "W5006"]


def injected_args(files: dict[str, bytes]) -> list[dict]:
    scenario = yaml.safe_load(files["itbench/scenario.yaml"])
    return [unnamed(i["args"]) for f in scenario["spec"]["faults"] for i in f["injections"]]


def index_args(index: dict) -> list[dict]:
    return [unnamed(i["args"]) for d in index["disruptions"] for i in d["injections"]]


def docs(files: dict[str, bytes], name: str) -> list[dict]:
    return [d for d in yaml.safe_load_all(files[name].decode("utf-8")) if d] if name in files else []


def write(tmp_path: Path, index: dict, name: str = "9999.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(index, indent=4), "utf-8")
    return path


def line_of(path: Path, where: tuple) -> int:
    """The line of the value at `where` in a JSON or YAML file (or of its nearest ancestor)."""
    return load(path, Diagnostics()).span(where).line


def fixture(name: str) -> dict:
    return json.loads((HELD_OUT / name).read_text("utf-8"))


def assert_round_trip(path: Path) -> str:
    """The index imports without a diagnostic, and the port compiles to ITBench's own injection arguments."""
    text, diags = imported(path)
    assert text is not None and not said(diags), render_human(diags, color=False)
    assert injected_args(compiled(text)) == index_args(json.loads(path.read_text("utf-8")))
    return text


# ---- 1. PodChaos actions without a duration ------------------------------------------------------------------


@pytest.mark.parametrize("name,lines", [
    ("9101-checkout-pod-kill.json", ["fault pod_chaos on deployment \"checkout\"", "action = pod_kill", "mode = one",
                                     "every = 1m"]),
    ("9102-checkout-container-kill.json", ["action = container_kill", 'containers = ["checkout"]', "mode = fixed",
                                           "value = 1"]),
])
def test_scheduled_pod_chaos_without_duration_imports(name: str, lines: list[str]):
    text = assert_round_trip(HELD_OUT / name)
    for line in lines:
        assert line in text
    assert "duration" not in text


def test_a_chaos_port_poses_the_diagnosis_alone():
    """ITBench asks to mitigate; the agent may not list the Schedule whose removal would do it (E2037), so the port
    poses `tasks diagnose` and says so at the injection (W5006)."""
    path = HELD_OUT / "9101-checkout-pod-kill.json"
    text, diags = imported(path)
    assert text is not None, render_human(diags, color=False)
    (note,) = [d for d in diags.items if d.code == "W5006"]
    assert note.path.endswith(path.name) and note.span.line == line_of(path, ("disruptions", 0, "injections", 0))
    assert "Schedule `chaos-mesh/" in note.message and "tasks diagnose" in note.message
    assert "\n  tasks diagnose\n" in text
    diags = Diagnostics()
    compile_source(text.encode("utf-8"), "imported.itb", diags, validate=False)
    assert not diags.errors(), render_human(diags, color=False)


def test_a_duration_on_an_instantaneous_action_is_a_located_warning(tmp_path: Path):
    index = fixture("9101-checkout-pod-kill.json")
    chaos = index["disruptions"][0]["injections"][0]["args"]["scheduleSpec"]["podChaos"]
    chaos["duration"] = "30s"
    chaos["gracePeriod"] = 5
    path = write(tmp_path, index)
    text, diags = imported(path)
    assert text is not None and "grace_period = 5s" in text and "duration" not in text
    (warning,) = said(diags)
    at = ("disruptions", 0, "injections", 0, "args", "scheduleSpec", "podChaos", "duration")
    assert warning.code == "W5005" and "`duration`" in warning.message and warning.span.line == line_of(path, at)
    (args,) = injected_args(compiled(text))
    assert args["scheduleSpec"]["podChaos"]["gracePeriod"] == 5


def test_scheduled_pod_failure_without_duration_round_trips():
    """ITBench's scenario 18: a Schedule of `pod-failure` with no duration; the pods stay failed until the
    Schedule is deleted (Chaos Mesh 2.x's PodChaos webhook asks no duration; see docs/faults/pod_chaos.md)."""
    text = assert_round_trip(HELD_OUT / "9105-checkout-pod-failure.json")
    for line in ('fault pod_chaos on deployment "checkout"', "action = pod_failure", "every = 1m"):
        assert line in text
    assert "duration" not in text and "mode" not in text
    (schedule,) = [d for d in docs(compiled(text), "inject/apply.yaml") if d.get("kind") == "Schedule"]
    # one experiment at a time: the first, with no duration, holds the pods failed until the Schedule goes
    assert schedule["spec"]["concurrencyPolicy"] == "Forbid" and "duration" not in schedule["spec"]["podChaos"]
    assert schedule["spec"]["podChaos"]["action"] == "pod-failure"


@pytest.mark.parametrize("number", [18])
def test_itbench_held_out_scenario_round_trips(number: int):
    """ITBench's own index and compiled folder, where the shared reference holds them (it holds scenario 18 only
    when ITBench's public scenarios beyond the reference set are laid beside it)."""
    index = ITBENCH / "library" / "scenarios" / f"{number}.json"
    if not index.is_file():
        pytest.skip(f"the shared reference has no {index.name} ({index.parent})")
    expected = index_args(json.loads(index.read_text("utf-8")))
    folder = ITBENCH / "scenarios" / f"scenario_{number}"
    for path in (index, folder) if folder.is_dir() else (index,):
        # the ground truth's defects are warnings the port corrects (docs/itbench-compat.md), never errors
        text, diags = imported(path)
        assert text is not None and not diags.errors(), render_human(diags, color=False)
        assert "action = pod_failure" in text and "duration" not in text
        assert injected_args(compiled(text)) == expected


@pytest.mark.parametrize("edit,needle", [
    (lambda c: c.pop("containerNames"), "containers"),  # container-kill names its containers
    (lambda c: c.update(containerNames=["cart"]), "no container `cart`"),
])
def test_pod_chaos_requirements_are_located_errors(tmp_path: Path, edit, needle: str):
    index = fixture("9102-checkout-container-kill.json")
    edit(index["disruptions"][0]["injections"][0]["args"]["scheduleSpec"]["podChaos"])
    path = write(tmp_path, index)
    text, diags = imported(path)
    assert text is None
    errors = diags.errors()
    assert errors and all(e.code == "E5005" and e.span.line >= line_of(path, ("disruptions", 0, "injections", 0))
                          for e in errors), render_human(diags, color=False)
    assert any(needle in e.message for e in errors), render_human(diags, color=False)


# ---- 2. HTTPChaos: every action, both targets, every selector --------------------------------------------------


def _b64(text: str) -> str:
    return base64.b64encode(text.encode("utf-8")).decode("ascii")


HTTP_VARIANTS = {
    "abort-request": {},
    "abort-response": {"target": "Response", "code": 200, "response_headers": {"Content-Type": "application/grpc"}},
    "delay-request": {"abort": None, "delay": "2s", "request_headers": {"Content-Type": "application/grpc"}},
    "delay-response": {"abort": None, "delay": "1500ms", "target": "Response"},
    "replace-response": {"abort": None, "target": "Response", "method": None,
                         "replace": {"code": 503, "body": _b64('{"error": "unavailable"}'),
                                     "headers": {"Retry-After": "60"}}},
    "replace-request": {"abort": None, "replace": {"path": "/missing", "method": "GET", "queries": {"page": "2"}}},
    "patch-request": {"abort": None, "patch": {"body": {"type": "JSON", "value": '{"x": 1}'},
                                               "headers": [["X-Chaos", "1"]], "queries": [["debug", "1"]]}},
    "patch-response": {"abort": None, "target": "Response", "path": None,
                       "patch": {"body": {"type": "JSON", "value": '{"x": 1}'}, "headers": [["X-Chaos", "1"]]}},
}


def _http_index(changes: dict) -> dict:
    index = fixture("9103-product-catalog-http-abort.json")
    chaos = index["disruptions"][0]["injections"][0]["args"]["scheduleSpec"]["httpChaos"]
    for key, value in changes.items():
        if value is None:
            chaos.pop(key, None)
        else:
            chaos[key] = value
    return index


def test_http_abort_fixture_imports():
    text = assert_round_trip(HELD_OUT / "9103-product-catalog-http-abort.json")
    assert 'fault http_chaos on deployment "product-catalog"' in text
    for line in ("action = abort", "target = request", "port = 8080", 'method = "POST"',
                 'path = "/oteldemo.ProductCatalogService/*"'):
        assert line in text


@pytest.mark.parametrize("variant", sorted(HTTP_VARIANTS))
def test_every_http_action_and_target_round_trips(tmp_path: Path, variant: str):
    text = assert_round_trip(write(tmp_path, _http_index(HTTP_VARIANTS[variant])))
    assert f"action = {variant.split('-')[0]}" in text and f"target = {variant.split('-')[1]}" in text


@pytest.mark.parametrize("changes,at,needle", [
    ({"delay": "1s"}, ("delay",), "one action"),  # abort and delay at once
    ({"abort": False}, (), "none of"),  # no action at all
    ({"tls": {"secretName": "x", "secretNamespace": "y", "certName": "c", "keyName": "k"}}, ("tls",), "`tls`"),
    ({"abort": None, "replace": {"body": "not base64!"}}, ("replace", "body"), "base64"),
    ({"abort": None, "patch": {"body": {"type": "YAML", "value": "x: 1"}}}, ("patch", "body"), "`patch.body`"),
    ({"abort": None, "patch": {"headers": [["Set-Cookie", "a"], ["Set-Cookie", "b"]]}}, ("patch", "headers"),
     "twice"),
])
def test_http_shapes_the_language_cannot_say_are_located_refusals(tmp_path: Path, changes: dict, at: tuple,
                                                                   needle: str):
    path = write(tmp_path, _http_index(changes))
    text, diags = imported(path)
    assert text is None
    (error,) = diags.errors()
    base = ("disruptions", 0, "injections", 0, "args", "scheduleSpec", "httpChaos")
    assert error.code == "E5003" and needle in error.message, render_human(diags, color=False)
    assert error.span.line == line_of(path, base + at)


# ---- 3. objects the injection creates ----------------------------------------------------------------------


def test_a_fault_on_the_secret_an_earlier_injection_creates_imports():
    text = assert_round_trip(HELD_OUT / "9104-valkey-credentials-corrupted.json")
    assert 'fault corrupted_secret on secret "valkey-credentials"' in text
    files = compiled(text)
    injected = {(o["kind"], o["metadata"]["name"]): o for o in docs(files, "inject/apply.yaml")}
    assert injected[("Secret", "valkey-credentials")]["stringData"] == {
        "valkey-password": CORRUPTED_VALUE}
    assert [(o["kind"], o["metadata"]["name"]) for o in docs(files, "revert/delete.yaml")] == [
        ("Secret", "valkey-credentials")]


def test_a_fault_on_a_created_object_before_its_creation_is_a_located_error(tmp_path: Path):
    index = fixture("9104-valkey-credentials-corrupted.json")
    index["disruptions"].reverse()  # the secret does not exist yet: ITBench's own validation fails there too
    path = write(tmp_path, index)
    text, diags = imported(path)
    assert text is None
    (error,) = diags.errors()
    assert error.code == "E5005" and "valkey-credentials" in error.message and "kubernetesObject" in error.message
    assert error.span.line == line_of(path, ("disruptions", 0, "injections", 0, "args", "kubernetesObject"))


def test_ground_truth_on_the_created_secret_is_kept_as_written():
    text, diags = imported(HELD_OUT / "valkey-secret-root-cause")
    assert text is not None and not said(diags), render_human(diags, color=False)  # no W5002 retargeting
    assert 'group "valkey-credentials-secret-1" secret "valkey-credentials"' in text
    assert 'root_cause group "valkey-credentials-secret-1"' in text
    v1 = yaml.safe_load(compiled(text)["itbench/groundtruth_v1.yaml"])["spec"]
    group = next(g for g in v1["groups"] if g["id"] == "valkey-credentials-secret-1")
    assert group["kind"] == "Secret" and group["root_cause"] is True


# ---- 5. YAML alias bombs ------------------------------------------------------------------------------------


def _bomb(levels: int = 9, width: int = 9) -> str:
    lines = [f"a: &a [{', '.join(['x'] * width)}]"]
    for level in range(1, levels):
        name, previous = chr(ord("a") + level), chr(ord("a") + level - 1)
        lines.append(f"{name}: &{name} [{', '.join(['*' + previous] * width)}]")
    return "\n".join(lines) + f"\nspec: {{faults: *{chr(ord('a') + levels - 1)}}}\n"


@pytest.mark.parametrize("file_name", ["scenario.yaml", "groundtruth_v1.yaml"])
def test_a_billion_laughs_file_is_refused_at_once(tmp_path: Path, file_name: str):
    folder = tmp_path / "scenario_9"
    folder.mkdir()
    (folder / "scenario.yaml").write_text(
        (HELD_OUT / "valkey-secret-root-cause" / "scenario.yaml").read_text("utf-8"), "utf-8")
    (folder / file_name).write_text(_bomb(), "utf-8")
    start = time.monotonic()
    text, diags = imported(folder)
    assert time.monotonic() - start < 10
    assert text is None
    (error,) = diags.errors()
    assert error.code == "E5001" and str(MAX_VALUES) in error.message and error.path.endswith(file_name)
    # the line whose aliases multiply past the bound
    assert 1 < error.span.line <= 9


def test_a_value_that_contains_itself_is_refused(tmp_path: Path):
    folder = tmp_path / "scenario_9"
    folder.mkdir()
    (folder / "scenario.yaml").write_text("a: &a [1, *a]\nspec: {faults: *a}\n", "utf-8")
    text, diags = imported(folder)
    assert text is None
    (error,) = diags.errors()
    assert error.code == "E5001" and "contains it" in error.message and error.span.line == 1


def test_an_oversized_file_is_refused(tmp_path: Path):
    path = tmp_path / "9.json"
    path.write_text('{"id": 9, "description": "' + "x" * (5 * 1024 * 1024) + '"}', "utf-8")
    text, diags = imported(path)
    assert text is None and [e.code for e in diags.errors()] == ["E5001"]


def test_the_cli_reports_an_alias_bomb_without_a_traceback(tmp_path: Path):
    folder = tmp_path / "scenario_9"
    folder.mkdir()
    (folder / "scenario.yaml").write_text(_bomb(), "utf-8")
    result = CliRunner().invoke(cli, ["import", str(folder)])
    assert result.exit_code == 1 and "E5001" in result.output and "Traceback" not in result.output


# ---- 4. every argument of every ITBench fault schema ------------------------------------------------------------

SCHEMAS = ITBENCH / "schemas" / "json" / "faults"
INDEXES = ITBENCH / "library" / "scenarios"
CRDS = REFERENCE / "chaos-mesh" / "crds"
STATEFULSET = "opensearch"  # the OpenTelemetry Demo's StatefulSet, for `kind: StatefulSet`

# faults no reference index uses: their injection, in scenario 58's index (the OpenTelemetry Demo)
NEW_INJECTIONS = {
    "corrupted-kubernetes-secret-credentials": {"kubernetesObject": {
        "apiVersion": "v1", "kind": "Secret", "metadata": {"name": "grafana", "namespace": "otel-demo"}}},
    "deleted-kubernetes-service": {"kubernetesObject": {
        "apiVersion": "v1", "kind": "Service", "metadata": {"name": "cart", "namespace": "otel-demo"}}},
    "priority-kubernetes-workload-priority-preemption": {"kubernetesObject": {
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "cart", "namespace": "otel-demo"}}},
}
# values of the schemas' free-form arguments (a string, an integer): (fault id, path) -> values
SAMPLES = {
    ("opentelemetry-demo-feature-flag", ("flag", "state")): ["off", "no-such-variant"],
    ("kubernetes-api-server-request-surge", ("loadGenerator", "options", "requestsPerSecond")): [1, 0],
    ("modified-target-port-kubernetes-service", ("targetPort",)): [1234],  # no port of `ad` targets it
    ("modified-kubernetes-workload-container-environment-variable", ("container", "env", "value")): ["x:1"],
    ("modified-kubernetes-workload-container-environment-variable", ("container", "env", "name")): ["NO_SUCH_VAR"],
}


def _schema_leaves(schema: dict, path: tuple = ()) -> list[tuple[tuple, dict]]:
    out = []
    for key, sub in (schema.get("properties") or {}).items():
        if sub.get("type") == "object" and sub.get("properties"):
            out += _schema_leaves(sub, path + (key,))
        else:
            out.append((path + (key,), sub))
    return out


def _templates() -> dict[str, tuple[Path, int, int]]:
    """ITBench id -> (a reference index that uses it, its disruption, its injection)."""
    out: dict = {}
    for path in sorted(INDEXES.glob("*.json"), key=lambda p: int(p.stem)):
        for d, disruption in enumerate(json.loads(path.read_text("utf-8")).get("disruptions", [])):
            for i, injection in enumerate(disruption["injections"]):
                out.setdefault(injection["id"], (path, d, i))
    return out


def _get(data, path):
    for key in path:
        data = data[key]
    return data


def _set(data: dict, path: tuple, value) -> None:
    for key in path[:-1]:
        if not isinstance(data.get(key), dict):
            data[key] = {}
        data = data[key]
    if value is _DROP:
        data.pop(path[-1], None)
    else:
        data[path[-1]] = value


_DROP = object()


def _schema_variants() -> list[tuple[str, tuple, object, dict]]:
    """(fault id, argument path, value, the injection's args) for every argument of every fault schema but the
    Chaos Mesh Schedule's: each enum value, and samples of the free-form ones (the reference's own value first)."""
    templates = _templates()
    out = []
    for schema_path in sorted(SCHEMAS.glob("*.json")):
        fault = schema_path.stem
        if fault == "scheduled-chaos-mesh-experiment":
            continue  # its experiments are Chaos Mesh's: _chaos_variants()
        if fault in templates:
            path, d, i = templates[fault]
            base = json.loads(path.read_text("utf-8"))["disruptions"][d]["injections"][i]["args"]
        else:
            base = copy.deepcopy(NEW_INJECTIONS[fault])
        for arg, schema in _schema_leaves(json.loads(schema_path.read_text("utf-8"))):
            if "enum" in schema:
                values = list(schema["enum"])
            elif schema.get("type") == "array":
                values = [[v] for v in schema["items"].get("enum", ["x"])] + [list(schema["items"].get("enum", []))]
            else:  # the reference's own value, the samples, and for a name one nothing has
                values = SAMPLES.get((fault, arg), [])
                try:
                    values = [_get(base, arg)] + values
                except (KeyError, TypeError):
                    values = values or (["x"] if schema.get("type") == "string" else [1])
                if schema.get("type") == "string" and (fault, arg) not in SAMPLES:
                    values.append(f"no-such-{str(arg[-1]).lower()}")
            for value in values:
                args = copy.deepcopy(base)
                _set(args, arg, value)
                if arg == ("kubernetesObject", "kind") and value == "StatefulSet":
                    args["kubernetesObject"]["metadata"]["name"] = STATEFULSET
                    if isinstance(args.get("container"), dict):
                        args["container"]["name"] = STATEFULSET
                out.append((fault, arg, value, args))
    return out


def _crd_spec(kind: str) -> dict:
    document = yaml.safe_load((CRDS / f"chaos-mesh.org_{kind.lower()}.yaml").read_text("utf-8"))
    version = next(v for v in document["spec"]["versions"] if v.get("storage", True))
    return version["schema"]["openAPIV3Schema"]["properties"]["spec"]


def _selector(component: str) -> dict:
    return {"labelSelectors": {"app.kubernetes.io/component": component}, "namespaces": ["otel-demo"]}


_JAVA = {"class": "oteldemo.AdService", "method": "getAds"}
# the kinds a Schedule holds that no fault of the library runs: its spec's field -> the kind
OTHER_SCHEDULE_KINDS = {"awsChaos": "AWSChaos", "azureChaos": "AzureChaos", "blockChaos": "BlockChaos",
                        "gcpChaos": "GCPChaos", "kernelChaos": "KernelChaos",
                        "physicalmachineChaos": "PhysicalMachineChaos", "workflow": "Workflow"}
# a working experiment per Chaos Mesh kind, and per value of its enumerated fields the fields that value needs
CHAOS_BASES = {
    "PodChaos": {"action": "pod-kill", "mode": "all", "selector": _selector("checkout")},
    "NetworkChaos": {"action": "delay", "mode": "all", "delay": {"latency": "100ms"},
                     "selector": _selector("product-catalog")},
    "StressChaos": {"mode": "all", "duration": "55s", "stressors": {"cpu": {"workers": 1, "load": 50}},
                    "selector": _selector("recommendation")},
    "HTTPChaos": {"mode": "all", "target": "Request", "port": 8080, "abort": True,
                  "selector": _selector("product-catalog")},
    "IOChaos": {"action": "latency", "mode": "all", "delay": "100ms", "volumePath": "/usr/src/app/products",
                "selector": _selector("product-catalog")},
    "DNSChaos": {"action": "error", "mode": "all", "selector": _selector("checkout")},
    "TimeChaos": {"mode": "all", "timeOffset": "-5m", "selector": _selector("checkout")},
    "JVMChaos": {"action": "gc", "mode": "all", "selector": _selector("ad")},
}
NEEDS = {
    ("PodChaos", ("action",), "pod-failure"): {"duration": "30s"},
    ("PodChaos", ("action",), "container-kill"): {"containerNames": ["checkout"]},
    ("NetworkChaos", ("action",), "loss"): {"delay": _DROP, "loss": {"loss": "50", "correlation": "25"}},
    ("NetworkChaos", ("action",), "duplicate"): {"delay": _DROP, "duplicate": {"duplicate": "50", "correlation": "0"}},
    ("NetworkChaos", ("action",), "corrupt"): {"delay": _DROP, "corrupt": {"corrupt": "50", "correlation": "0"}},
    ("NetworkChaos", ("action",), "partition"): {"delay": _DROP, "direction": "to",
                                              "target": {"mode": "all", "selector": _selector("payment")}},
    ("NetworkChaos", ("action",), "bandwidth"): {"delay": _DROP, "bandwidth": {"rate": "1mbps", "limit": 20971520,
                                                                            "buffer": 10000}},
    ("IOChaos", ("action",), "fault"): {"delay": _DROP, "errno": 5},
    ("IOChaos", ("action",), "attrOverride"): {"delay": _DROP, "attr": {"perm": 72}},
    ("IOChaos", ("action",), "mistake"): {"delay": _DROP, "mistake": {"filling": "zero", "maxOccurrences": 1,
                                                                   "maxLength": 10}},
    ("JVMChaos", ("action",), "latency"): {**_JAVA, "latency": 1000},
    ("JVMChaos", ("action",), "return"): {**_JAVA, "returnValue": "null"},
    ("JVMChaos", ("action",), "exception"): {**_JAVA, "exception": 'java.io.IOException("boom")'},
    ("JVMChaos", ("action",), "stress"): {"cpuCount": 1},
    ("JVMChaos", ("action",), "ruleData"): {
        "ruleData": "RULE r\nCLASS oteldemo.AdService\nMETHOD getAds\nAT ENTRY\nIF true\nDO return null\nENDRULE"},
    **{(kind, ("mode",), "fixed"): {"value": "1"} for kind in CHAOS_BASES},
    **{(kind, ("mode",), mode): {"value": "50"} for kind in CHAOS_BASES for mode in ("fixed-percent",
                                                                                       "random-max-percent")},
}
# the action (and the fields it needs) under which a field of the CRD means something
FIELD_NEEDS = {
    **{("HTTPChaos", (name,)): {"abort": _DROP} for name in ("delay", "replace", "patch")},
    ("HTTPChaos", ("code",)): {"target": "Response"}, ("HTTPChaos", ("response_headers",)): {"target": "Response"},
    ("PodChaos", ("containerNames",)): {"action": "container-kill"},
    **{("NetworkChaos", (name,)): {"action": name, "delay": _DROP, name: {name: "50"}}
       for name in ("loss", "duplicate", "corrupt")},
    ("NetworkChaos", ("bandwidth",)): NEEDS[("NetworkChaos", ("action",), "bandwidth")] | {"action": "bandwidth"},
    ("NetworkChaos", ("target",)): NEEDS[("NetworkChaos", ("action",), "partition")] | {"action": "partition"},
    ("StressChaos", ("stressors",)): {"stressors": {"cpu": {"workers": 1}, "memory": {"workers": 1}}},
    ("IOChaos", ("errno",)): {"action": "fault", "delay": _DROP},
    ("IOChaos", ("attr",)): NEEDS[("IOChaos", ("action",), "attrOverride")] | {"action": "attrOverride"},
    ("IOChaos", ("mistake",)): NEEDS[("IOChaos", ("action",), "mistake")] | {"action": "mistake"},
    **{("JVMChaos", (name,)): NEEDS[("JVMChaos", ("action",), action)] | {"action": action}
       for name, action in (("class", "latency"), ("method", "latency"), ("latency", "latency"),
                            ("returnValue", "return"), ("exception", "exception"), ("ruleData", "ruleData"))},
    **{("JVMChaos", (name,)): {"action": "stress"} for name in ("cpuCount", "memType")},
}
# values of free-form fields the language takes, where a placeholder would not do
CHAOS_SAMPLES = {
    ("selector", ("podPhaseSelectors",)): ["Running"], ("selector", ("namespaces",)): ["otel-demo"],
    ("TimeChaos", ("clockIds",)): ["CLOCK_REALTIME"], ("TimeChaos", ("timeOffset",)): "90s",
    ("DNSChaos", ("patterns",)): ["payment.*"], ("IOChaos", ("methods",)): ["read"],
    ("IOChaos", ("path",)): "/usr/src/app/products/*.json", ("HTTPChaos", ("path",)): "/api/*",
    ("HTTPChaos", ("method",)): "GET", ("HTTPChaos", ("code",)): 500, ("HTTPChaos", ("port",)): 8080,
}


def _sample(name: str, schema: dict):
    kind = schema.get("type")
    if kind == "string":
        return "1s" if name.lower() in ("duration", "delay", "latency", "jitter", "timeoffset") else "x"
    if kind == "integer":
        return 1
    if kind == "boolean":
        return True
    if kind == "array":
        items = schema.get("items", {})
        return [["x", "y"]] if items.get("type") == "array" else [{}] if items.get("type") == "object" else ["x"]
    if kind == "object":
        return {} if schema.get("properties") else {"x": "y"}
    return "x"


def _crd_fields(schema: dict, path: tuple = (), depth: int = 0) -> list[tuple[tuple, dict]]:
    out = []
    for name, sub in (schema.get("properties") or {}).items():
        out.append((path + (name,), sub))
        if sub.get("type") == "object" and sub.get("properties") and depth < 2:
            out += _crd_fields(sub, path + (name,), depth + 1)
    return out


def _chaos_variants() -> list[tuple[str, tuple, object, dict]]:
    """The Schedule's `type` (every kind a Schedule holds), its own fields, and for each kind the library runs
    every field of the experiment's CRD (and of its selector): each enum value (with what it needs), a
    sample of the others."""
    from itbench_dsl.faults.chaos import SCHEDULE_FIELDS

    template = json.loads((INDEXES / "17.json").read_text("utf-8"))["disruptions"][0]["injections"][0]["args"]
    out = []

    def schedule(kind: str, body: dict, extra: dict | None = None) -> dict:
        args = copy.deepcopy(template)
        args["scheduleSpec"] = {SCHEDULE_FIELDS[kind]: body, "type": kind, **(extra or {})}
        return args

    schedule_spec = _crd_spec("schedules")
    kinds = {field: kind for kind, field in SCHEDULE_FIELDS.items()} | OTHER_SCHEDULE_KINDS
    for field_name, sub in schedule_spec["properties"].items():  # every kind a Schedule may create
        if field_name in kinds:
            kind = kinds[field_name]
            body = copy.deepcopy(CHAOS_BASES.get(kind, {}))
            for value in (kind, kind.lower()):  # as Chaos Mesh spells it, and misspelt
                args = copy.deepcopy(template)
                args["scheduleSpec"] = {field_name: body, "type": value}
                out.append(("scheduled-chaos-mesh-experiment", ("scheduleSpec", "type"), value, args))
        elif field_name != "type":
            for value in sub.get("enum") or [_sample(field_name, sub)]:
                out.append(("scheduled-chaos-mesh-experiment", ("scheduleSpec", field_name), value,
                            schedule("PodChaos", copy.deepcopy(CHAOS_BASES["PodChaos"]), {field_name: value})))
    for arg, values in ((("kubernetesObject", "apiVersion"), ["chaos-mesh.org/v1alpha1", "chaos-mesh.org/v1"]),
                        (("kubernetesObject", "kind"), ["Schedule", "PodChaos"]),
                        (("kubernetesObject", "metadata", "name"), ["checkout-pod-kill", "Not_A_Name"]),
                        (("kubernetesObject", "metadata", "namespace"), ["chaos-mesh", "default"])):
        for value in values:  # the Schedule object: ITBench's enum value, and one it does not allow
            args = schedule("PodChaos", copy.deepcopy(CHAOS_BASES["PodChaos"]))
            _set(args, arg, value)
            out.append(("scheduled-chaos-mesh-experiment", arg, value, args))
    for kind, field_name in SCHEDULE_FIELDS.items():
        spec = _crd_spec(kind)
        fields = [(p, s) for p, s in _crd_fields(spec) if p[0] != "selector"]
        fields += [(("selector",) + p, s) for p, s in _crd_fields(spec["properties"]["selector"]) if len(p) == 1]
        for path, sub in fields:
            if path == ("selector", "labelSelectors"):  # the same pods, by another of their labels
                component = CHAOS_BASES[kind]["selector"]["labelSelectors"]["app.kubernetes.io/component"]
                values = [{"app.kubernetes.io/name": component}]
            elif path[0] == "selector":
                values = [CHAOS_SAMPLES.get(("selector", path[1:]), _sample(path[-1], sub))]
            elif "enum" in sub:
                values = list(sub["enum"])
            else:
                values = [CHAOS_SAMPLES.get((kind, path), _sample(path[-1], sub))]
            for value in values:
                body = copy.deepcopy(CHAOS_BASES[kind])
                needs = {**FIELD_NEEDS.get((kind, path[:1]), {}),
                         **(NEEDS.get((kind, path, value), {}) if isinstance(value, str) else {})}
                for key, need in needs.items():
                    _set(body, (key,), need if need is _DROP else copy.deepcopy(need))
                _set(body, path, value)
                out.append(("scheduled-chaos-mesh-experiment", ("scheduleSpec", field_name) + path, value,
                            schedule(kind, body)))
    return out


def _names(text: str, arg: tuple, value) -> bool:
    """Whether a diagnostic's text names the argument (its key, or the key of a mapping it is in, below
    `scheduleSpec.<experiment>`), or the value given it."""
    def snake(name: str) -> str:
        return re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", name).lower().replace("-", "_")

    keys = [str(k) for k in (arg[2:] if arg[0] == "scheduleSpec" and len(arg) > 2 else arg)]
    candidates = {".".join(map(str, arg))} | set(keys) | {snake(k) for k in keys}
    if isinstance(value, (str, int)) and not isinstance(value, bool) and str(value):
        candidates |= {str(value), snake(str(value))}
    return any(f"`{c}" in text or f"{c}`" in text for c in candidates)


def _variant_ids() -> list:
    if not SCHEMAS.is_dir():
        return []
    return _schema_variants() + _chaos_variants()


VARIANTS = _variant_ids()


@needs_reference
def test_every_fault_schema_and_chaos_kind_is_covered():
    """Every schema, every argument of it, every enum value; every kind a Schedule holds, every field of the
    experiments of the kinds the library runs."""
    from itbench_dsl.faults.chaos import SCHEDULE_FIELDS

    assert {f for f, *_ in VARIANTS} == {p.stem for p in SCHEMAS.glob("*.json")}
    given = {(f, a, json.dumps(v, sort_keys=True)) for f, a, v, _ in VARIANTS}
    for schema_path in SCHEMAS.glob("*.json"):
        for arg, schema in _schema_leaves(json.loads(schema_path.read_text("utf-8"))):
            assert any(f == schema_path.stem and a == arg for f, a, _ in given), (schema_path.stem, arg)
            for value in schema.get("enum", []) + [[v] for v in schema.get("items", {}).get("enum", [])]:
                assert (schema_path.stem, arg, json.dumps(value)) in given, (schema_path.stem, arg, value)
    chaos = {a[1] for f, a, *_ in VARIANTS if a[0] == "scheduleSpec" and len(a) > 2}
    assert chaos == set(SCHEDULE_FIELDS.values())
    for kind, field_name in SCHEDULE_FIELDS.items():
        for path, schema in _crd_fields(_crd_spec(kind)):
            arg = ("scheduleSpec", field_name) + path
            if path[0] != "selector" or len(path) == 2:  # the selector: by each of its own fields
                assert any(a == arg for _, a, _ in given), arg
            for value in schema.get("enum", []):
                assert ("scheduled-chaos-mesh-experiment", arg, json.dumps(value)) in given, (arg, value)


@needs_reference
@pytest.mark.parametrize("fault,arg,value,args", VARIANTS,
                         ids=[f"{f}:{'.'.join(map(str, a))}={json.dumps(v, default=str)[:40]}"
                              for f, a, v, _ in VARIANTS])
def test_every_schema_argument_imports_or_is_refused_where_it_stands(tmp_path: Path, fault: str, arg: tuple,
                                                                     value, args: dict):
    source, d, _ = _templates().get(fault, (INDEXES / "58.json", 0, 0))
    index = json.loads(source.read_text("utf-8"))
    index["id"] = index["index"] = 9999
    index["disruptions"] = [index["disruptions"][d]]
    index["disruptions"][0]["injections"] = [{"args": args, "id": fault}]
    path = write(tmp_path, index)
    text, diags = imported(path)
    injection = ("disruptions", 0, "injections", 0)
    at = injection + ("args",) + arg
    located = load(path, Diagnostics())
    # the lines from the injection down to the argument: where a diagnostic about it points
    lines = {located.span(at[:n]).line for n in range(len(injection), len(at) + 1)}
    inside = {located.span(p).line for p in located.offsets if p[:len(injection)] == injection}
    about = [d for d in diags.items if d.span.line in lines and _names(f"{d.message} {d.label} {d.help}", arg, value)]
    for d in diags.items:
        assert Path(d.path).resolve() == path.resolve(), (d.code, d.path)
        assert d.span.line >= 1
    shown = render_human(diags, color=False)
    if text is None:
        assert diags.errors(), "a refused import says why"
        # at the argument and naming it, or (a precondition the changed argument breaks elsewhere, such as a
        # StatefulSet without the Deployment's container) at the injection, naming the argument at fault
        assert any(d.severity == "error" for d in about) or any(
            d.span.line in inside and "(argument `" in d.message for d in diags.errors()), (
            f"no error at the argument names it:\n{shown}")
        return
    files = compiled(text)  # an import is a scenario that compiles clean
    if _normal(injected_args(files)[0]) != _normal(unnamed(args)):  # what the port cannot carry is said, at the argument
        assert about, f"the port differs from ITBench's arguments, unsaid:\n{text}\n{shown}"


def _normal(data):
    """ITBench's arguments with each Go duration as its length of time: `1s` and `1000ms` are one delay."""
    if isinstance(data, dict):
        return {k: _normal(v) for k, v in data.items()}
    if isinstance(data, list):
        return [_normal(v) for v in data]
    if isinstance(data, str) and not data.isdigit():
        from itbench_dsl.units import parse_go_duration

        seconds = parse_go_duration(data)
        return data if seconds is None else seconds
    return data


def test_a_schedule_named_after_its_fault_is_named_by_the_compiler():
    """ITBench's `checkout-pod-kill` tells whoever lists the Schedules what the fault does (E4010): the import
    leaves the name out, saying so at it, and the port checks clean (no leak, every ground truth retargeted)."""
    from itbench_dsl.checking import check_source

    path = HELD_OUT / "9101-checkout-pod-kill.json"
    text, diags = imported(path)
    (note,) = [d for d in diags.items if NAME_LEFT in d.message]
    at = ("disruptions", 0, "injections", 0, "args", "kubernetesObject", "metadata", "name")
    assert note.code == "W5005" and "`checkout-pod-kill`" in note.message and note.span.line == line_of(path, at)
    assert "checkout-pod-kill" not in text.split("\n", 1)[1]  # nowhere but the comment naming the source
    checked = check_source(text.encode(), "imported.itb")
    assert not [d for d in checked.diagnostics if d.code == "E4010"], render_human(checked.diagnostics, color=False)
