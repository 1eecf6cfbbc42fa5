"""ITBench CISO interoperability: export (`itbench/` files, `--target itbench`) and import.

* the ported scenarios compile to ITBench's own CISO files (JSON and YAML loaded, goal text with
  whitespace normalised); every difference is one of the normalisations or differences listed in
  docs/itbench-ciso.md, and the test fails if a listed difference disappears;
* importing each reference folder gives formatted text that compiles back to ITBench's files,
  and importing the compiled folder again gives the same text (a fixed point);
* `itbench compile --target itbench` writes only ITBench's files, one folder per scenario, named
  as ITBench names them;
* every import diagnostic (E5050-E5054, W5050-W5053) is located in the ITBench file it is about;
  mutated and truncated reference files never raise.
"""

from __future__ import annotations

import json
import re
import shutil
import tempfile
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from support.compiling import compile_ok
from itbench_dsl import cli as cli_module
from itbench_dsl.backends import itbench_ciso
from itbench_dsl.ciso.tasks import BY_SCENARIO_TYPE
from itbench_dsl.compiler import compile_source
from itbench_dsl.diagnostics import Diagnostics, render_human
from itbench_dsl.importer.ciso import import_ciso, looks_like_ciso
from itbench_dsl.parser import parse_text
from itbench_dsl.printer import print_document

REPO = Path(__file__).resolve().parents[2]
REF = REPO.parent / "shared" / "reference" / "itbench" / "ciso"
DOC = REPO / "docs" / "itbench-ciso.md"
needs_ref = pytest.mark.skipif(not REF.is_dir(), reason="../shared/reference/itbench/ciso is not available")

IDS = ["1.gen-cis-b-k8s-kyverno", "2.gen-cis-b-k8s-kubectl-opa", "3.gen-cis-b-rhel9-ansible-opa",
       "4.upd-cis-b-k8s-kyverno"]
# reference files the harness brings itself or that are sample agent outputs (docs/itbench-ciso.md, "Left out")
LEFT_OUT = ("playbooks/", "examples/")
# our files ITBench's folder does not have: the files every domain writes, the compliant objects, and the
# goal text of the classes that keep it only inside playbooks/goal.yml
OURS_ONLY = {"scenario.yaml", "groundtruth.yaml", "groundtruth_v1.yaml", "manifests/compliant.yaml", "goal.txt"}
# differences that remain after the normalisations, each explained in docs/itbench-ciso.md under its key
KNOWN = {
    ("4.upd-cis-b-k8s-kyverno", "manifests/application.yaml"): ("pod-as-deployment", "role-left-out"),
    ("4.upd-cis-b-k8s-kyverno", "eval_config.yaml"): ("pod-as-deployment",),
}


def _ports() -> dict[str, Path]:
    out = {}
    for path in sorted((REPO / "scenarios" / "ciso").glob("*.itb")):
        match = re.search(r'itbench_id = "([^"]+)"', path.read_text(encoding="utf-8"))
        if match:
            assert match.group(1) not in out, f"two ports of {match.group(1)}"
            out[match.group(1)] = path
    return out


def _compile(text: str, path: str = "input.itb"):
    return compile_ok(text, path)


def _export(text: str) -> dict[str, bytes]:
    return itbench_ciso.export_files(_compile(text).files)


def _reference(itbench_id: str) -> dict[str, bytes]:
    folder = REF / itbench_id
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def _goal_template(itbench_id: str) -> str:
    """The goal text the class's playbooks/goal.yml builds from info.json (its variables left as placeholders)."""
    play = yaml.safe_load((REF / itbench_id / "playbooks" / "goal.yml").read_text())[0]
    fact = next(t["set_fact"]["goal_object"] for t in play["tasks"] if "goal_object" in t.get("set_fact", {}))
    info = json.loads((REF / itbench_id / "info.json").read_text())
    return fact["goal"].replace("{{ info_content.goal }}", info["goal"]).replace("{% raw %}", "").replace("{% endraw %}", "")


def _words(text: str) -> str:
    return " ".join(text.split())


def _load(name: str, data: bytes):
    if name.endswith(".json"):
        return json.loads(data)
    if name.endswith((".yaml", ".yml")):
        return [d for d in yaml.safe_load_all(data) if d is not None]
    return _words(data.decode("utf-8"))


def _normalise(name: str, ours, ref):
    """The normalisations of docs/itbench-ciso.md ("Normalisations")."""
    if name.startswith("manifests/") and isinstance(ours, list):
        # namespace: ITBench's namespace-less manifests are deployed into the harness's target namespace
        for a, b in zip(ours, ref):
            if isinstance(b, dict) and "namespace" not in b.get("metadata", {}):
                a.get("metadata", {}).pop("namespace", None)
    if name == "eval_config.yaml" and ours and isinstance(ours[0], dict):  # compliant objects: our addition
        checks = [c for c in ours[0].get("check_violations", []) if c.get("expected_result") != "pass"]
        return [{**ours[0], "check_violations": checks}], ref
    if name.startswith("tasks/") and ours and isinstance(ours[0], list):
        tasks = [t for t in ours[0] if "compliant.yaml" not in json.dumps(t)]  # compliant objects: our addition
        if any("lineinfile" in json.dumps(t) for t in tasks):  # host tasks: what they set, not how
            return _host_effects(tasks), _host_effects(ref[0])
        return [tasks], ref
    return ours, ref


def _host_effects(tasks: list[dict]) -> list:
    out = []
    for task in tasks:
        for module, args in task.items():
            if module.endswith("lineinfile"):
                out.append(("line", args["path"], args["line"], args.get("state", "present")))
            elif module.endswith(("service", "systemd")):
                out.append(("service", args["name"], args.get("state"), args.get("enabled")))
    return out


# ---- export ---------------------------------------------------------------------------------------------------


@needs_ref
def test_every_reference_scenario_has_one_port():
    assert sorted(_ports()) == IDS


@needs_ref
@pytest.mark.parametrize("itbench_id", IDS)
def test_export_equals_reference(itbench_id: str):
    port = _ports()[itbench_id]
    ours, ref = _export(port.read_text(encoding="utf-8")), _reference(itbench_id)
    assert {n for n in ref if n not in ours and not n.startswith(LEFT_OUT)} <= \
        {n for (i, n) in KNOWN if i == itbench_id}, "a reference file has no counterpart"
    assert set(ours) - set(ref) <= OURS_ONLY
    compared = 0
    for name in sorted(set(ref) & set(ours) - {"goal.txt"}):  # goal.txt: the two tests below
        a, b = _normalise(name, _load(name, ours[name]), _load(name, ref[name]))
        if (itbench_id, name) in KNOWN:
            assert a != b, f"{name}: listed as a difference in docs/itbench-ciso.md but now equal: update the list"
        else:
            assert a == b, f"{name} differs from ITBench's"
            compared += 1
    assert compared >= 3


@needs_ref
@pytest.mark.parametrize("itbench_id", IDS)
def test_goal_text_is_the_class_goal(itbench_id: str):
    ours = _export(_ports()[itbench_id].read_text(encoding="utf-8"))
    assert _words(ours["goal.txt"].decode()) == _words(_goal_template(itbench_id))


@needs_ref
def test_class_one_goal_txt_differs_only_as_documented():
    """ITBench's 1/goal.txt is a rendering with the harness's paths filled in (docs: "goal-paths")."""
    ours = _export(_ports()["1.gen-cis-b-k8s-kyverno"].read_text(encoding="utf-8"))["goal.txt"].decode()
    filled = ours.replace("{{ kubeconfig }}", "/tmp/kubeconfig.agent.yaml") + \
        "\nYou can use \\'/tmp/agent-workspace\\' as your workdir.\n"
    assert _words(filled) == _words((REF / "1.gen-cis-b-k8s-kyverno" / "goal.txt").read_text())


@needs_ref
def test_docs_list_every_difference_and_normalisation():
    text = DOC.read_text(encoding="utf-8")
    for key in {*(k for keys in KNOWN.values() for k in keys), "namespace", "compliant-objects", "host-tasks",
                "goal-paths", "left-out"}:
        assert f"`{key}`" in text, key
    for itbench_id in IDS:
        assert itbench_id in text
    assert "itbench-ciso.md" in (REPO / "docs" / "ciso.md").read_text(encoding="utf-8")


@needs_ref
def test_export_writes_valid_tasks_and_manifests():
    for itbench_id, port in _ports().items():
        files = _export(port.read_text(encoding="utf-8"))
        cls = BY_SCENARIO_TYPE[json.loads(files["info.json"])["scenario_type"].lower()]
        assert "tasks/fault_inject.yml" in files and f"tasks/{cls.removal}" in files
        for name, data in files.items():
            if name.startswith("tasks/"):  # Ansible task lists: every task names one module
                for task in yaml.safe_load(data):
                    assert isinstance(task["name"], str) and len(set(task) - {"name", "changed_when"}) == 1
            if name.startswith("manifests/") and "src" in files["tasks/fault_inject.yml"].decode():
                assert f"../{name}" in files["tasks/fault_inject.yml"].decode(), f"{name} is never deployed"
        assert ("eval_config.yaml" in files) == (cls.task == "kyverno_update")


@needs_ref
def test_sre_and_finops_bundles_have_no_ciso_files():
    text = (REPO / "scenarios" / "sre" / "otel-checkout-nonexistent-image.itb").read_text(encoding="utf-8")
    files = _compile(text).files
    assert not any(n.startswith("itbench/") and n.split("/", 1)[1] not in OURS_ONLY for n in files)


# ---- import ---------------------------------------------------------------------------------------------------


def _import(path: Path) -> tuple[str | None, Diagnostics]:
    diags = Diagnostics()
    return import_ciso(path, diags), diags


def _codes(diags: Diagnostics) -> list[str]:
    return sorted(d.code for d in diags.items)


EXPECTED_WARNINGS = {"1.gen-cis-b-k8s-kyverno": ["W5054"], "2.gen-cis-b-k8s-kubectl-opa": ["W5054"],
                     "3.gen-cis-b-rhel9-ansible-opa": [],
                     "4.upd-cis-b-k8s-kyverno": ["W5050", "W5053"]}


@needs_ref
@pytest.mark.parametrize("itbench_id", IDS)
def test_import_is_formatted_compiles_to_itbench_and_is_a_fixed_point(itbench_id: str, tmp_path: Path):
    text, diags = _import(REF / itbench_id)
    assert text is not None and not diags.has_errors, render_human(diags)
    assert _codes(diags) == EXPECTED_WARNINGS[itbench_id]
    assert all(Path(d.path).is_relative_to(REF / itbench_id) and d.span.line >= 1 for d in diags.items)
    document = parse_text(text, "imported.itb", Diagnostics())
    assert document is not None and print_document(document, text) == text  # fmt-clean
    assert f'itbench_id = "{itbench_id}"' in text
    files = _export(text)
    ref = _reference(itbench_id)
    for name in ("info.json", "input.json", "manifests/application.yaml", "tasks/fault_inject.yml"):
        if name in ref and (itbench_id, name) not in KNOWN:
            a, b = _normalise(name, _load(name, files[name]), _load(name, ref[name]))
            assert a == b, name
    # the compiled folder imports to the same text
    folder = tmp_path / itbench_id
    for name, data in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_bytes(data)
    again, diags2 = _import(folder)
    assert again == text, render_human(diags2)


@needs_ref
def test_port_with_compliant_objects_round_trips(tmp_path: Path):
    """Our own export (compliant.yaml included) imports back to the same gap and compliant objects."""
    port = _ports()["1.gen-cis-b-k8s-kyverno"]
    files = _export(port.read_text(encoding="utf-8"))
    folder = tmp_path / "1.gen-cis-b-k8s-kyverno"
    for name, data in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_bytes(data)
    text, diags = _import(folder)
    assert text is not None and not diags.items, render_human(diags)
    assert 'gap deployment "nginx-deployment"' in text and 'compliant deployment "nginx-compliant"' in text
    assert _export(text)["manifests/compliant.yaml"] == files["manifests/compliant.yaml"]


@needs_ref
def test_looks_like_ciso(tmp_path: Path):
    for itbench_id in IDS:
        assert looks_like_ciso(REF / itbench_id) and looks_like_ciso(REF / itbench_id / "info.json")
    assert not looks_like_ciso(REPO / "scenarios" / "ciso" / "cis-5-2-5-host-network-kyverno.itb")
    assert not looks_like_ciso(tmp_path / "missing")
    assert not looks_like_ciso(tmp_path)
    sre = REPO.parent / "shared" / "reference" / "itbench" / "scenarios"
    if sre.is_dir():
        assert not any(looks_like_ciso(p) for p in sorted(sre.iterdir())[:5])


# ---- located errors and warnings --------------------------------------------------------------------------------


def _copy(tmp_path: Path, itbench_id: str) -> Path:
    folder = tmp_path / itbench_id
    shutil.copytree(REF / itbench_id, folder)
    return folder


def _one(diags: Diagnostics, code: str):
    found = [d for d in diags.items if d.code == code]
    assert len(found) == 1, render_human(diags)
    return found[0]


@needs_ref
def test_e5050_malformed_json_is_located(tmp_path: Path):
    folder = _copy(tmp_path, "1.gen-cis-b-k8s-kyverno")
    (folder / "info.json").write_text('{\n  "name": "cis-b.5.2.5-gen",\n  "goal": \n}\n')
    text, diags = _import(folder)
    d = _one(diags, "E5050")
    assert text is None and d.path == str(folder / "info.json") and (d.span.line, d.span.column) == (4, 1)
    assert "malformed JSON" in d.message


@needs_ref
def test_e5050_malformed_yaml_and_bad_encoding(tmp_path: Path):
    folder = _copy(tmp_path, "1.gen-cis-b-k8s-kyverno")
    (folder / "manifests" / "application.yaml").write_text("apiVersion: apps/v1\nkind: [Deployment\nmetadata: {}\n")
    text, diags = _import(folder)
    d = _one(diags, "E5050")
    assert text is None and d.path.endswith("manifests/application.yaml") and d.span.line >= 2
    (folder / "manifests" / "application.yaml").write_bytes(b"kind: Deployment\nname: \xff\xfe\n")
    text, diags = _import(folder)
    d = _one(diags, "E5050")
    assert text is None and "UTF-8" in d.message and d.span.line == 2


@needs_ref
def test_e5051_missing_files(tmp_path: Path):
    folder = _copy(tmp_path, "2.gen-cis-b-k8s-kubectl-opa")
    (folder / "manifests" / "application.yaml").unlink()
    text, diags = _import(folder)
    assert text is None and _one(diags, "E5051").path == str(folder / "manifests" / "application.yaml")
    empty = tmp_path / "empty"
    empty.mkdir()
    text, diags = _import(empty)
    assert text is None and _one(diags, "E5051").path == str(empty / "info.json")


@needs_ref
def test_e5052_wrong_shapes(tmp_path: Path):
    folder = _copy(tmp_path, "1.gen-cis-b-k8s-kyverno")
    info = folder / "info.json"
    data = json.loads(info.read_text())
    info.write_text(json.dumps({**data, "goal": 42}, indent=2))
    text, diags = _import(folder)
    d = _one(diags, "E5052")
    assert text is None and "`goal` must be a non-empty string, not a number" in d.message and d.span.line == 6
    info.write_text("[1, 2]")
    assert _one(_import(folder)[1], "E5052").message.endswith("not a list")
    info.write_text(json.dumps(data))
    (folder / "manifests" / "application.yaml").write_text("apiVersion: apps/v1\nkind: Deployment\nspec: {}\n")
    text, diags = _import(folder)
    d = _one(diags, "E5052")
    assert text is None and "`metadata.name`" in d.message and d.span.line == 1


@needs_ref
def test_e5053_unknown_class(tmp_path: Path):
    folder = _copy(tmp_path, "1.gen-cis-b-k8s-kyverno")
    info = folder / "info.json"
    info.write_text(info.read_text().replace("Gen-CIS-b-K8s-Kyverno", "Gen-CIS-b-K8s-Kyverne"))
    text, diags = _import(folder)
    d = _one(diags, "E5053")
    assert text is None and (d.span.line, d.span.column) == (5, 21) and "Gen-CIS-b-K8s-Kyverno" in d.help


@needs_ref
def test_e5054_gap_not_expressible(tmp_path: Path):
    folder = _copy(tmp_path, "3.gen-cis-b-rhel9-ansible-opa")
    tasks = folder / "tasks" / "fault_inject.yml"
    tasks.write_text(tasks.read_text().replace("/etc/ssh/sshd_config", "/etc/other.conf"))
    text, diags = _import(folder)
    d = _one(diags, "E5054")
    assert text is None and d.path == str(tasks) and d.span.line == 1
    folder = _copy(tmp_path, "2.gen-cis-b-k8s-kubectl-opa")
    (folder / "manifests" / "application.yaml").write_text(
        "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: other\n")
    text, diags = _import(folder)
    assert text is None and _one(diags, "E5054") and _one(diags, "W5050").span.line == 1


@needs_ref
def test_w5050_w5053_located_in_scenario_4():
    _, diags = _import(REF / "4.upd-cis-b-k8s-kyverno")
    where = sorted((Path(d.path).name, d.span.line, d.code) for d in diags.items)
    assert where == [("application.yaml", 7, "W5050"), ("application.yaml", 17, "W5053")]


@needs_ref
def test_w5051_fields_left_out(tmp_path: Path):
    folder = _copy(tmp_path, "1.gen-cis-b-k8s-kyverno")
    app = folder / "manifests" / "application.yaml"
    app.write_text(app.read_text().replace("        ports:\n", "        livenessProbe:\n          tcpSocket:\n"
                                                               "            port: 80\n        ports:\n"))
    text, diags = _import(folder)
    d = _one(diags, "W5051")
    assert text is not None and "livenessProbe" in d.message and d.span.line == 21
    assert _export(text)["manifests/application.yaml"]  # still compiles


@needs_ref
def test_w5052_inconsistencies(tmp_path: Path):
    folder = _copy(tmp_path, "3.gen-cis-b-rhel9-ansible-opa")
    info = folder / "info.json"
    info.write_text(info.read_text().replace('"rhel9-cis-b-gen"', '"something-else"'))
    (folder / "input.json").write_text(json.dumps({"inventory_host": "rhel9 servers"}))
    text, diags = _import(folder)
    assert text is not None and _codes(diags) == ["W5052", "W5052"]
    assert {Path(d.path).name for d in diags.items} == {"info.json", "input.json"}
    tasks = folder / "tasks" / "fault_inject.yml"
    tasks.write_text(tasks.read_text().replace("X11Forwarding yes", "X11Forwarding maybe"))
    text, diags = _import(folder)
    assert any(d.code == "W5052" and d.path == str(tasks) and d.span.line == 4 for d in diags.items)


@needs_ref
def test_host_group_from_input_json(tmp_path: Path):
    folder = _copy(tmp_path, "3.gen-cis-b-rhel9-ansible-opa")
    data = json.loads((folder / "input.json").read_text())
    (folder / "input.json").write_text(json.dumps({**data, "inventory_host": "edge_hosts"}))
    text, diags = _import(folder)
    assert text is not None and 'hosts = "edge_hosts"' in text
    # ITBench's export names ITBench's own group, which its run provides; the bundle's inventory has the gap's
    # group `<hosts>_<token>`, named alike the compliant group (ciso.host_groups)
    assert json.loads(_export(text)["input.json"])["inventory_host"] == "edge_hosts"
    from support.compiling import compile_text

    result, _ = compile_text(text.encode(), "imported.itb", validate=False)
    inventory = b"".join(v for k, v in result.files.items() if "inventory" in k or k == "prompt.md")
    assert b"edge_hosts_" in inventory


# ---- fuzz: mutated and truncated reference files ------------------------------------------------------------------

FUZZ_FILES = [(i, n) for i in IDS for n in _reference(i) if not n.startswith(LEFT_OUT)] if REF.is_dir() else []


@needs_ref
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(FUZZ_FILES or [("", "")]), st.integers(min_value=0, max_value=10_000),
       st.sampled_from(["truncate", "delete", "insert", "replace"]), st.binary(min_size=1, max_size=4))
@needs_ref
def test_mutated_files_give_located_diagnostics_never_a_traceback(target, position, how, junk):
    itbench_id, name = target
    if not itbench_id:
        return
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / itbench_id
        shutil.copytree(REF / itbench_id, folder)
        path = folder / name
        data = path.read_bytes()
        at = position % (len(data) + 1)
        data = {"truncate": data[:at], "delete": data[:at] + data[at + len(junk):],
                "insert": data[:at] + junk + data[at:], "replace": data[:at] + junk + data[at + len(junk):]}[how]
        path.write_bytes(data)
        diags = Diagnostics()
        text = import_ciso(folder, diags)
        assert (text is None) == diags.has_errors
        for d in diags.items:
            assert Path(d.path).is_relative_to(folder) and d.span.line >= 1 and d.span.column >= 1
        render_human(diags)
        if text is not None:
            assert parse_text(text, "fuzz.itb", Diagnostics()) is not None
            compile_source(text.encode(), "fuzz.itb", Diagnostics())  # may report errors, never raises


# ---- itbench compile --target itbench ----------------------------------------------------------------------------


def _invoke(*args: str):
    return CliRunner().invoke(cli_module.cli, list(args), catch_exceptions=False)


@needs_ref
def test_target_itbench_layout(tmp_path: Path):
    ports = _ports()
    sre = REPO / "scenarios" / "finops" / "otel-three-hpas-misconfigured.itb"
    plain = REPO / "scenarios" / "ciso" / "cis-k8s-5-2-2-privileged-kyverno.itb"
    out = tmp_path / "out"
    result = _invoke("compile", *map(str, ports.values()), str(sre), str(plain), "-o", str(out), "--target", "itbench")
    assert result.exit_code == 0, result.output
    itbench_id = re.search(r"itbench_id = (\d+)", sre.read_text()).group(1)
    assert sorted(p.name for p in out.iterdir()) == sorted([*IDS, f"scenario_{itbench_id}", "cis-k8s-5-2-2-privileged-kyverno"])
    assert sorted(p.name for p in (out / f"scenario_{itbench_id}").iterdir()) == \
        ["groundtruth.yaml", "groundtruth_v1.yaml", "scenario.yaml"]
    for itbench_id, port in ports.items():
        written = {p.relative_to(out / itbench_id).as_posix(): p.read_bytes()
                   for p in (out / itbench_id).rglob("*") if p.is_file()}
        assert written == _export(port.read_text(encoding="utf-8"))
        assert not {"prompt.md", "bundle.lock", "evaluator.py"} & set(written)
    # the default target is still the full bundle
    bundle = tmp_path / "bundle"
    assert _invoke("compile", str(ports[IDS[0]]), "-o", str(bundle)).exit_code == 0
    assert (bundle / "cis-5-2-5-host-network-kyverno" / "itbench" / "info.json").is_file()
    assert (bundle / "cis-5-2-5-host-network-kyverno" / "bundle.lock").is_file()


@needs_ref
def test_target_itbench_refuses_two_scenarios_with_one_id(tmp_path: Path):
    port = _ports()[IDS[0]]
    twin = tmp_path / "twin.itb"
    twin.write_text(port.read_text().replace('scenario "cis-5-2-5-host-network-kyverno"', 'scenario "twin"'))
    out = tmp_path / "out"
    result = _invoke("compile", str(port), str(twin), "-o", str(out), "--target", "itbench")
    # the second of one ITBench folder is E2002 at its name, and only the first is written
    assert result.exit_code == 1 and "E2002" in result.output and "ITBench folder `1.gen-cis-b-k8s-kyverno`" in result.output
    assert [p.name for p in out.iterdir()] == ["1.gen-cis-b-k8s-kyverno"]


@needs_ref
def test_target_itbench_writes_nothing_for_a_broken_scenario(tmp_path: Path):
    broken = tmp_path / "broken.itb"
    broken.write_text(_ports()[IDS[0]].read_text().replace("task kyverno_policy", "task kyverno_polcy"))
    out = tmp_path / "out"
    result = _invoke("compile", str(broken), "-o", str(out), "--target", "itbench")
    assert result.exit_code == 1 and (not out.exists() or not any(out.iterdir()))


# ---- kyverno_update: the existing policies declared in the task ---------------------------------------------------

UPDATE = '''scenario "update-test" {
  domain ciso
  complexity high
  description "Extend a deployed policy."
  control "policy" {
    goal = "Extend the existing policies: also prohibit root containers."
  }
  task kyverno_update {
    update = "second"
    policy "first" {
      rule "no-default-sa" {
        message = "A non-default service account must be specified."
        pattern = { spec = { serviceAccountName = "!default" } }
      }
    }
    policy "second" {
      rule "no-escalation" {
        kinds = ["Pod", "Deployment"]
        pattern = { spec = { containers = [{ "(name)" = "*", securityContext = { allowPrivilegeEscalation = false } }] } }
      }
    }
  }
  topology {
    namespace "paa"
    deployment "alpha" {
      image = "nginx:1.27"
      security_context {
        run_as_user = 0
      }
    }
    deployment "beta" {
      image = "nginx:1.27"
      security_context {
        run_as_user = 1000
        run_as_non_root = true
      }
    }
  }
  gap deployment "alpha"
  compliant deployment "beta"
}
'''


def test_declared_policies_are_deployed_and_the_updated_one_is_named():
    result = _compile(UPDATE)
    compliance = result.scenario.compliance
    assert [p["metadata"]["name"] for p in compliance.policies] == ["first", "second"] and compliance.update == "second"
    deployed = list(yaml.safe_load_all(result.files["manifests/existing-policy.yaml"]))
    assert [p["metadata"]["name"] for p in deployed] == ["second", "first"]  # the one to edit first (the prompt's)
    assert deployed[0]["spec"]["rules"][0] == {
        "name": "no-escalation", "match": {"resources": {"kinds": ["Pod", "Deployment"]}},
        "validate": {"pattern": {"spec": {"containers": [{"(name)": "*", "securityContext": {
            "allowPrivilegeEscalation": False}}]}}}}
    assert "ClusterPolicy `second`" in result.files["prompt.md"].decode()
    files = itbench_ciso.export_files(result.files)
    assert [p["metadata"]["name"] for p in yaml.safe_load_all(files["manifests/existing-policy.yaml"])] == ["first", "second"]
    config = yaml.safe_load(files["eval_config.yaml"])
    assert config["check_unchanged_policies"] == [{"policy_name": "first"}]
    assert [(c["policy_name"], c["resource"]["name"], c["expected_result"]) for c in config["check_violations"]] == \
        [("second", "alpha", "fail"), ("second", "beta", "pass")]
    assert json.loads(result.files["scenario.json"])["compliance"]["update"] == "second"


def _errors(text: str) -> list:
    diags = Diagnostics()
    compile_source(text.encode(), "input.itb", diags)
    return [(d.code, d.span.line, d.message) for d in diags.errors()]


@pytest.mark.parametrize("change, code, line, words", [
    (('update = "second"', 'update = "secnd"'), "E2010", 9, "`update` names `secnd`"),
    (('    update = "second"\n', ''), "E2007", 8, "`update` must name"),
    (('policy "second"', 'policy "first"'), "E2002", 16, "policy `first` is declared twice"),
    (('pattern = { spec = { serviceAccountName = "!default" } }', 'pattern = ["x"]'), "E2008", 13, "is a map"),
    (('        message = "A non-default service account must be specified."\n'
      '        pattern = { spec = { serviceAccountName = "!default" } }\n', ''), "E2007", 11, "needs `pattern`"),
    (('task kyverno_update {', 'task kyverno_policy {'), "E2006", 9, "has no field `update`"),
])
def test_policy_declaration_errors_are_located(change, code, line, words):
    old, new = change
    assert old in UPDATE
    errors = _errors(UPDATE.replace(old, new, 1))
    assert any(c == code and ln == line and words in m for c, ln, m in errors), errors


def test_an_invalid_policy_name_is_reported_at_the_policy():
    errors = _errors(UPDATE.replace('policy "first"', 'policy "First_Policy"'))
    assert any(c.startswith("E3") and ln == 10 for c, ln, _ in errors), errors


def test_a_policy_without_rules_is_an_error():
    text = UPDATE.replace('''    policy "first" {
      rule "no-default-sa" {
        message = "A non-default service account must be specified."
        pattern = { spec = { serviceAccountName = "!default" } }
      }
    }
''', '    policy "first" {\n    }\n')
    assert ("E2007", 10, "policy `first` needs at least one `rule`") in _errors(text)


# ---- generality: folders the reference does not have ---------------------------------------------------------------

RICH_DEPLOYMENT = {
    "apiVersion": "apps/v1", "kind": "Deployment",
    "metadata": {"name": "api", "namespace": "shop", "labels": {"tier": "backend"}},
    "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "api"}},
             "template": {"metadata": {"labels": {"app": "api", "version": "v1"}, "annotations": {"team": "core"}},
                          "spec": {"serviceAccountName": "api", "automountServiceAccountToken": False,
                                   "securityContext": {"runAsNonRoot": True, "runAsUser": 1000,
                                                       "seccompProfile": {"type": "RuntimeDefault"}},
                                   "containers": [{
                                       "name": "api", "image": "registry.example/api:1.2", "args": ["--serve"],
                                       "ports": [{"containerPort": 8080, "name": "http"}],
                                       "env": [{"name": "MODE", "value": "prod"}],
                                       "resources": {"requests": {"cpu": "100m", "memory": "64Mi"},
                                                     "limits": {"memory": "128Mi"}},
                                       "securityContext": {"privileged": True, "allowPrivilegeEscalation": True,
                                                           "capabilities": {"add": ["NET_ADMIN"]}}}]}}}}
SERVICE_ACCOUNT = {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "api", "namespace": "shop"}}


def _folder(tmp_path: Path, name: str, files: dict[str, object]) -> Path:
    folder = tmp_path / name
    for path, data in files.items():
        (folder / path).parent.mkdir(parents=True, exist_ok=True)
        text = json.dumps(data, indent=2) if path.endswith(".json") else \
            yaml.safe_dump_all(data, sort_keys=False) if isinstance(data, list) else data
        (folder / path).write_text(text)
    return folder


@needs_ref
def test_an_unseen_kubernetes_scenario_round_trips(tmp_path: Path):
    info = {"name": "cis-b.5.2.2-gen", "description": "CIS Benchmark for K8S 5.2.2 (Kyverno)",
            "incident_type": "policy_gen", "scenario_type": "Gen-CIS-b-K8s-Kyverno",
            "goal": "Minimize the admission of privileged containers."}
    folder = _folder(tmp_path, "9.gen-cis-b-k8s-kyverno-privileged", {
        "info.json": info, "input.json": json.loads((REF / IDS[0] / "input.json").read_text()),
        "manifests/application.yaml": [SERVICE_ACCOUNT, RICH_DEPLOYMENT]})
    text, diags = _import(folder)
    assert text is not None and _codes(diags) == ["W5054"], render_human(diags)  # a compliant object is added
    assert 'control "cis-k8s-5.2.2"' in text and 'gap deployment "api"' in text and "serviceaccount" in text
    files = _export(text)
    assert json.loads(files["info.json"]) == info
    assert list(yaml.safe_load_all(files["manifests/application.yaml"])) == [SERVICE_ACCOUNT, RICH_DEPLOYMENT]


@needs_ref
def test_an_unseen_host_control_is_recognised_by_its_setting(tmp_path: Path):
    info = {"name": "rhel9/cis-b-gen/5.2.7", "description": "CIS Benchmark for RHEL9 5.2.7",
            "incident_type": "rhel9-cis-b-gen", "scenario_type": "Gen-CIS-b-RHEL9-Ansible-OPA",
            "goal": "Ensure SSH root login is disabled"}
    tasks = [{"name": "Permit root login", "lineinfile": {"path": "/etc/ssh/sshd_config", "regexp": "^PermitRootLogin",
                                                          "line": "PermitRootLogin yes"}}]
    folder = _folder(tmp_path, "9.gen-cis-b-rhel9-root-login",
                     {"info.json": info, "tasks/fault_inject.yml": yaml.safe_dump(tasks, sort_keys=False)})
    text, diags = _import(folder)
    assert text is not None and not diags.items, render_human(diags)
    assert 'control "rhel9-sshd-permit-root-login"' in text
    info["goal"] = "Disable root logins over SSH"  # not the catalogue's wording: kept
    (folder / "info.json").write_text(json.dumps(info))
    text, _ = _import(folder)
    assert json.loads(_export(text)["info.json"]) == info
    files = _export(text)
    assert json.loads(files["info.json"]) == info
    assert _host_effects(yaml.safe_load(files["tasks/fault_inject.yml"])) == \
        [("line", "/etc/ssh/sshd_config", "PermitRootLogin yes", "present"), ("service", "sshd", "restarted", None)]


@needs_ref
def test_yaml_alias_bombs_are_refused_quickly(tmp_path: Path):
    folder = _copy(tmp_path, "1.gen-cis-b-k8s-kyverno")
    lines = ['a0: &a0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    lines += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]" for i in range(1, 10)]
    (folder / "manifests" / "application.yaml").write_text(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: x\n  annotations:\n"
        + "".join(f"    {line}\n" for line in lines))
    text, diags = _import(folder)
    assert text is None and "expands to more than" in _one(diags, "E5050").message
    (folder / "manifests" / "application.yaml").write_text("apiVersion: v1\nkind: Pod\nmetadata: &m\n  name: x\n  m: *m\n")
    text, diags = _import(folder)
    assert text is None and "alias that contains itself" in _one(diags, "E5050").message


@needs_ref
def test_a_pattern_deeper_than_the_language_allows_is_an_error(tmp_path: Path):
    folder = _copy(tmp_path, "4.upd-cis-b-k8s-kyverno")
    policy = folder / "manifests" / "existing-policy.yaml"
    deep = "[" * 70 + "]" * 70
    policy.write_text(policy.read_text().replace('serviceAccountName: "!default"', f"serviceAccountName: {deep}"))
    text, diags = _import(folder)
    d = _one(diags, "E5052")
    assert text is None and "nest deeper" in d.message and d.path.endswith("info.json")


@needs_ref
@pytest.mark.parametrize("itbench_id", IDS)
def test_import_exits_clean_only_when_the_result_passes_check(itbench_id: str, tmp_path: Path):
    """`itbench import` runs what `itbench check` runs (self-validation included) on what it writes."""
    from itbench_dsl.checking import check_source

    out = tmp_path / "imported.itb"
    result = CliRunner().invoke(cli_module.cli, ["import", str(REF / itbench_id), "-o", str(out)])
    assert out.is_file()
    checked = check_source(out.read_bytes(), str(out), lint=False)
    assert result.exit_code == (1 if checked.has_errors else 0), result.output
    if checked.has_errors:
        assert "does not pass `itbench check`" in result.output
    # a catalogue control's import gains a compliant object, so that an always-fail policy fails
    if "W5054" in EXPECTED_WARNINGS[itbench_id]:
        assert not checked.has_errors and "compliant deployment" in out.read_text("utf-8")
