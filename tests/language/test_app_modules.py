"""Applications as modules: local files, the search path, composition, renamed namespaces, and their errors."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from support.compiling import yaml_documents

from itbench_dsl.applications import app_search_path
from itbench_dsl.backends.evaluator_file import spec_of
from itbench_dsl.compiler import compile_source
from itbench_dsl.diagnostics import Diagnostics

DB_APP = '''app "db" {
  description "A database."
  namespace "data"
  persistentvolume "db-pv" {
    capacity = 1Gi
    storage_class = "db-storage"
    host_path = "/data/db"
  }
  persistentvolumeclaim "db-pvc" {
    storage = 1Gi
    storage_class = "db-storage"
    volume_name = "db-pv"
  }
  deployment "db" {
    image = "mongo:4.4.6"
    port "mongo" = 27017
    mount "data" = "/data/db"
    volume "data" { claim = "db-pvc" }
  }
  service "db" { port "mongo" = 27017 }
}
'''
SHOP_APP = '''app "shop" {
  description "A web shop and its database."
  use app "./db.itb"
  deployment "web" {
    namespace = "data"
    image = "nginx:1.27"
    port "http" = 8080
    env { DB_URL = "mongodb://db.data.svc.cluster.local:27017" }
  }
  "web" -> "db"
}
'''


def scenario(use: str, extra: str = "", target: str = 'deployment "db"') -> str:
    return f'''scenario "modules" {{
  domain sre
  complexity low
  description "The database of a locally written application stops pulling its image."
  {use}
  {extra}
  fault nonexistent_image on {target}
  expect {{ root_cause {target} }}
}}
'''


def _compile(folder: Path, text: str, name: str = "scenario.itb"):
    path = folder / name
    path.write_text(text)
    diags = Diagnostics()
    return compile_source(text.encode(), str(path), diags), diags, path


@pytest.fixture
def apps(tmp_path: Path) -> Path:
    (tmp_path / "apps").mkdir()
    (tmp_path / "apps" / "db.itb").write_text(DB_APP)
    (tmp_path / "apps" / "shop.itb").write_text(SHOP_APP)
    return tmp_path


def _manifests(result) -> dict:
    return {(d["kind"], d["metadata"]["name"]): d for d in yaml.safe_load_all(result.files["manifests/topology.yaml"])}


def test_a_local_application_and_its_imports(apps):
    result, diags, _ = _compile(apps, scenario('use app "./apps/shop.itb"'))
    assert not diags.has_errors, [d.message for d in diags.items]
    objects = _manifests(result)
    assert {("Deployment", "db"), ("Deployment", "web"), ("PersistentVolumeClaim", "db-pvc"),
            ("PersistentVolume", "db-pv")} <= set(objects)
    topology = result.scenario.topology
    assert topology.application is None and topology.display_name == "shop"
    assert ["web", "db"] in topology.edges


def test_the_search_path_and_the_project_file(apps):
    text = scenario('use app "shop"')
    result, diags, _ = _compile(apps, text)
    assert [d.code for d in diags.errors()] == ["E2001"]  # not on any path yet
    with app_search_path([apps / "apps"]):
        result, diags, _ = _compile(apps, text)
    assert not diags.has_errors and result.scenario.topology.display_name == "shop"
    (apps / "itbench.toml").write_text('[apps]\npath = ["apps"]\n')
    (apps / "scenarios").mkdir()
    result, diags, _ = _compile(apps / "scenarios", text)
    assert not diags.has_errors, [d.message for d in diags.items]


def test_an_inline_topology_has_a_name():
    text = scenario('topology "corner-shop" {\n namespace "shop"\n deployment "db" { image = "mongo:4.4.6" }\n }')
    diags = Diagnostics()
    result = compile_source(text.encode(), "inline.itb", diags)
    assert not diags.has_errors and result.scenario.topology.display_name == "corner-shop"
    assert b'"display_name": "corner-shop"' in result.files["scenario.json"]


def test_a_standard_application_keeps_its_bytes_without_a_name():
    diags = Diagnostics()
    result = compile_source(scenario('use app "hotel-reservation"', target='deployment "geo"').encode(), "h.itb", diags)
    assert not diags.has_errors, [d.message for d in diags.items]
    assert b"display_name" not in result.files["scenario.json"]


def test_a_namespace_override_moves_every_reference(apps):
    result, diags, _ = _compile(apps, scenario('use app "./apps/shop.itb" { namespace = "store" }',
                                               target='deployment "store/db"'))
    assert not diags.has_errors, [d.message for d in diags.items]
    objects = _manifests(result)
    assert objects[("Namespace", "store")] and ("Namespace", "data") not in objects
    assert all(d["metadata"].get("namespace") in (None, "store") for d in objects.values())
    env = objects[("Deployment", "web")]["spec"]["template"]["spec"]["containers"][0]["env"]
    assert env == [{"name": "DB_URL", "value": "mongodb://db.store.svc.cluster.local:27017"}]


def test_a_standard_application_namespace_override():
    diags = Diagnostics()
    text = scenario('use app "hotel-reservation" { namespace = "hotel" }', target='deployment "geo"')
    result = compile_source(text.encode(), "h.itb", diags)
    assert not diags.has_errors, [d.message for d in diags.items]
    assert {d["metadata"].get("namespace") for d in _manifests(result).values()} == {None, "hotel"}
    assert result.scenario.injections()[0].target.namespace == "hotel"


def test_an_override_of_a_namespace_the_app_lacks_is_located(apps):
    _, diags, path = _compile(apps, scenario('use app "./apps/shop.itb" { namespaces { "shop" = "x" } }'))
    errors = diags.errors()
    assert errors and errors[0].code == "E2016" and errors[0].path == str(path) and errors[0].span.line == 5


@pytest.mark.parametrize("files, code, words", [
    ({}, "E2001", "no application file"),
    ({"apps/missing.itb": 'app "a" {\n  use app "./b.itb"\n}\n', "apps/b.itb": 'app "b" {\n  use app "./missing.itb"\n}\n'},
     "E2031", "import cycle"),
    ({"apps/missing.itb": scenario('use app "hotel-reservation"')}, "E2032", "does not hold an `app` block"),
    ({"apps/missing.itb": 'app "book-info" {\n  namespace "x"\n}\n'}, "E2033", "standard-library"),
])
def test_import_errors_are_located(tmp_path, files, code, words):
    (tmp_path / "apps").mkdir()
    for name, text in files.items():
        (tmp_path / name).write_text(text.replace("./missing.itb", "./missing.itb"))
    if code == "E2031":  # a -> b -> a
        (tmp_path / "apps/b.itb").write_text('app "b" {\n  use app "./missing.itb"\n}\n')
    _, diags, path = _compile(tmp_path, scenario('use app "./apps/missing.itb"'))
    found = [d for d in diags.errors() if d.code == code]
    assert found, [(d.code, d.message) for d in diags.items]
    assert words in found[0].message
    assert found[0].span.line >= 1 and found[0].path  # located in the file holding the `use app`
    if code in ("E2001", "E2032", "E2033"):
        assert found[0].path == str(path) and found[0].span.line == 5


def test_two_files_with_one_application_name_clash(tmp_path):
    (tmp_path / "one.itb").write_text('app "same" {\n  namespace "a"\n}\n')
    (tmp_path / "two").mkdir()
    (tmp_path / "two" / "same.itb").write_text('app "same" {\n  namespace "b"\n}\n')
    (tmp_path / "top.itb").write_text('app "top" {\n  use app "./one.itb"\n  use app "./two/same.itb"\n  '
                                      'deployment "db" {\n    namespace = "a"\n    image = "x:1"\n  }\n}\n')
    _, diags, _ = _compile(tmp_path, scenario('use app "./top.itb"'))
    clash = [d for d in diags.errors() if d.code == "E2033"]
    assert clash and clash[0].span.line == 3 and clash[0].path.endswith("top.itb")


def test_hotel_reservation_scenario_compiles_and_validates():
    text = scenario('use app "hotel-reservation"', target='deployment "mongodb-geo"')
    diags = Diagnostics()
    result = compile_source(text.encode(), "hotel.itb", diags)  # validates every manifest against the schemas
    assert not diags.has_errors, [d.message for d in diags.items]
    objects = _manifests(result)
    claims = [name for kind, name in objects if kind == "PersistentVolumeClaim"]
    assert len(claims) == 6 and ("PersistentVolume", "geo-pv") in objects
    volumes = objects[("Deployment", "mongodb-geo")]["spec"]["template"]["spec"]["volumes"]
    assert {"name": "geo", "persistentVolumeClaim": {"claimName": "geo-pvc"}} in volumes


NAMESPACE_SCENARIO = '''scenario "hotel-namespace-deleted" {
  domain sre
  complexity medium
  description "The hotel's namespace is deleted: every service and database of the application disappears."
  use app "hotel-reservation"
  group {
    fault namespace_delete on namespace "hotel-reservation"
    wait after redeploy on namespace "hotel-reservation" { timeout = 10m }
  }
  expect {
    root_cause namespace "hotel-reservation"
    mitigated when { deployment "frontend" ready }
  }
  solution "Recreate the namespace and redeploy" {
    step "Recreate the namespace" run "kubectl create namespace hotel-reservation"
    step "Redeploy the application" run "kubectl apply -f manifests/topology.yaml"
  }
}
'''


def test_namespace_delete_and_its_redeploy_waiter():
    from itbench_dsl.checking import check_source

    diags = Diagnostics()
    result = compile_source(NAMESPACE_SCENARIO.encode(), "ns.itb", diags)
    assert not diags.has_errors, [d.message for d in diags.items]
    deleted = list(yaml.safe_load_all(result.files["inject/delete.yaml"]))
    assert deleted[0] == {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "hotel-reservation"}}
    assert ("PersistentVolumeClaim", "geo-pvc") in {(d["kind"], d["metadata"]["name"]) for d in deleted}
    restored = list(yaml.safe_load_all(result.files["revert/apply.yaml"]))
    assert restored[0]["kind"] == "Namespace" and len(restored) == len(deleted)
    waiter = result.scenario.faults[0].waiters[0]
    assert (waiter.kind, waiter.args) == ("redeploy", {"timeout_seconds": 600})
    truth = yaml.safe_load(result.files["itbench/groundtruth.yaml"])
    assert truth["spec"]["entities"] == [{"apiVersion": "v1", "kind": "Namespace",
                                          "metadata": {"name": "hotel-reservation"}}]
    assert "kubectl create namespace hotel-reservation" in str(truth["spec"]["solutions"])
    # self-validation: the evaluator grades its corpus right and the solution mitigates when replayed
    checked = check_source(NAMESPACE_SCENARIO.encode(), "ns.itb")
    assert not [d for d in checked.diagnostics if d.severity == "error"], [d.message for d in checked.diagnostics]


def test_namespace_delete_refuses_the_clusters_namespace():
    text = NAMESPACE_SCENARIO.replace('use app "hotel-reservation"', 'use app "hotel-reservation"\n  topology {\n'
                                      '    namespace "kube-system" { provided = true }\n  }').replace(
        'fault namespace_delete on namespace "hotel-reservation"', 'fault namespace_delete on namespace "kube-system"')
    diags = Diagnostics()
    compile_source(text.encode(), "ns.itb", diags)
    assert "E2011" in {d.code for d in diags.errors()}


def test_chaos_experiments_may_live_in_the_target_namespace():
    base = '''scenario "chaos-home" {
  domain sre
  complexity low
  description "Pods of the geo service are killed by a chaos experiment."
  use app "hotel-reservation"
  tasks diagnose
  fault pod_chaos on deployment "geo" { action = "pod-failure" duration = 5m OPTION }
  expect { root_cause deployment "geo" }
}
'''
    homes = []
    for option in ("", "in_target_namespace = true"):
        diags = Diagnostics()
        result = compile_source(base.replace("OPTION", option).encode(), "c.itb", diags)
        assert not diags.has_errors, [d.message for d in diags.items]
        homes.append(yaml_documents(result.files, "inject/apply.yaml")[0]["metadata"]["namespace"])
    assert homes == ["chaos-mesh", "hotel-reservation"]


# ---- SocialNetwork ---------------------------------------------------------------------------------------

SOCIAL = '''scenario "social-text" {
  domain sre
  complexity low
  description "The text service of the social network cannot pull its image."
  USE
  fault nonexistent_image on deployment "text-service"
  expect { root_cause deployment "text-service" }
}
'''


def test_social_network_is_listed_and_shown():
    from click.testing import CliRunner

    from itbench_dsl.cli.apps import command

    listing = CliRunner().invoke(command, [])
    assert listing.exit_code == 0 and "social-network  DeathStarBench SocialNetwork" in listing.output
    shown = CliRunner().invoke(command, ["social-network"])
    assert shown.exit_code == 0, shown.output
    assert "deployment (27):" in shown.output and "configmap (27):" in shown.output
    assert "social-network/nginx-thrift [8080=8080] -> nginx-thrift" in shown.output


def test_a_social_network_scenario_compiles_and_its_manifests_validate():
    diags = Diagnostics()
    result = compile_source(SOCIAL.replace("USE", 'use app "social-network"').encode(), "s.itb", diags)
    assert not diags.has_errors, [d.message for d in diags.items]
    objects = _manifests(result)
    assert sum(kind == "Deployment" for kind, _ in objects) == 27
    compose = objects[("Deployment", "compose-post-service")]["spec"]["template"]["spec"]
    # the services read their peers' addresses from the ConfigMap mounted beside the binary
    assert {"name": "compose-post-service-config", "configMap": {"name": "compose-post-service"}} in compose["volumes"]
    config = objects[("ConfigMap", "compose-post-service")]["data"]
    import json
    peers = json.loads(config["service-config.json"])
    assert peers["text-service"] == {"addr": "text-service", "port": 9090, "connections": 512, "timeout_ms": 10000,
                                     "keepalive_ms": 10000}
    assert "localAgentHostPort: \"jaeger:6831\"" in config["jaeger-config.yml"]
    # the left-out TLS volume (its Secret is not in the chart) has no mount left behind
    mongo = objects[("Deployment", "url-shorten-mongodb")]["spec"]["template"]["spec"]
    assert [v["name"] for v in mongo["volumes"]] == ["url-shorten-mongodb-config"]
    assert ["nginx-thrift", "compose-post-service"] in result.scenario.topology.edges


def test_a_moved_social_network_keeps_its_dns_suffix():
    diags = Diagnostics()
    text = SOCIAL.replace("USE", 'use app "social-network" { namespace = "sn" }')
    result = compile_source(text.encode(), "s.itb", diags)
    assert not diags.has_errors, [d.message for d in diags.items]
    nginx = _manifests(result)[("Deployment", "nginx-thrift")]["spec"]["template"]["spec"]["containers"][0]
    assert nginx["env"] == [{"name": "fqdn_suffix", "value": ".sn.svc.cluster.local"}]


def _regenerated_body(app: str, argv: list[str]) -> tuple[str, str]:
    """(the shipped file's text from `app "`, what the tool makes of the reference) for one application."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("app_from_manifests", Path("tools/app_from_manifests.py").resolve())
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    shipped = Path(f"itbench_dsl/stdlib/apps/{app}.itb").read_text()
    return shipped[shipped.index(f'app "{app}"'):], argv


def _header_command(app: str) -> list[str]:
    """The regeneration command recorded in the header of a shipped application."""
    import shlex

    lines = Path(f"itbench_dsl/stdlib/apps/{app}.itb").read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("#   python3 tools/app_from_manifests.py"))
    command = []
    for line in lines[start:]:
        command.append(line[len("#   "):].rstrip(" \\"))
        if not line.endswith("\\"):
            break
    return shlex.split(" ".join(command))[2:]


@pytest.mark.parametrize("app", ["social-network", "opentelemetry-demo"])
def test_the_shipped_application_is_what_the_tools_make_of_the_reference(app, tmp_path, monkeypatch):
    from support.compiling import REFERENCE, REPO

    if not REFERENCE.is_dir():
        pytest.skip("no ../shared/reference")
    import importlib.util
    import sys

    monkeypatch.chdir(REPO)
    tools = {}
    for name in ("app_from_manifests", "helm_render"):
        spec = importlib.util.spec_from_file_location(name, REPO / "tools" / f"{name}.py")
        tools[name] = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(tools[name])
    argv = _header_command(app)
    if app == "social-network":  # rendered from the Helm chart first, as the header says
        rendered = tmp_path / "social-network.yaml"
        assert tools["helm_render"].main([str(REFERENCE / "apps/social-network/helm-chart/socialnetwork"),
                                          "--release", "social-network", "--namespace", "social-network",
                                          "-o", str(rendered)]) == 0
        argv[0] = str(rendered)
    out = tmp_path / "out.itb"
    argv[argv.index("-o") + 1] = str(out)
    monkeypatch.setattr(sys, "argv", ["app_from_manifests.py"])
    assert tools["app_from_manifests"].main(argv) == 0
    shipped = (REPO / f"itbench_dsl/stdlib/apps/{app}.itb").read_text()
    made = out.read_text()
    assert made[made.index(f'app "{app}"'):] == shipped[shipped.index(f'app "{app}"'):]


def test_the_helm_renderer_refuses_what_it_does_not_know(tmp_path):
    import importlib.util

    from support.compiling import REPO

    spec = importlib.util.spec_from_file_location("helm_render", REPO / "tools" / "helm_render.py")
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    chart = tmp_path / "chart"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: c\nversion: 0.1.0\n")
    (chart / "values.yaml").write_text("name: web\nports: [80, 81]\n")
    (chart / "templates" / "_h.tpl").write_text('{{- define "c.port" }}port-{{ . }}{{- end }}')
    (chart / "templates" / "cm.yaml").write_text(
        'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Values.name | quote }}\n  namespace: {{ .Release.Namespace }}\n'
        'data:\n{{- range $i, $p := .Values.ports }}\n  {{ include "c.port" $p }}: "{{ $i }}"\n{{- end }}\n')
    documents = list(yaml.safe_load_all(tool.manifests(chart, "r", "ns")))
    assert documents == [{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "web", "namespace": "ns"},
                          "data": {"port-80": "0", "port-81": "1"}}]
    (chart / "templates" / "cm.yaml").write_text("name: {{ .Values.name | upper }}\n")
    with pytest.raises(tool.RenderError, match="`upper` is not in the subset"):
        tool.manifests(chart, "r", "ns")
    (chart / "templates" / "cm.yaml").write_text('{{- define "loop" }}{{ include "loop" . }}{{ end }}{{ include "loop" . }}')
    with pytest.raises(tool.RenderError, match="nest more than"):
        tool.manifests(chart, "r", "ns")


# ---- bundle.lock and `itbench check --app-path` ---------------------------------------------------------------


def test_the_lock_hashes_the_imported_application_files(apps):
    import json

    text = scenario('use app "./apps/shop.itb"')
    first, diags, _ = _compile(apps, text)
    assert not diags.has_errors
    lock = json.loads(first.files["bundle.lock"])
    assert sorted(lock["application_files_sha256"]) == ["db", "shop"]
    (apps / "apps" / "db.itb").write_text(DB_APP.replace("mongo:4.4.6", "mongo:4.4.7"))
    second, diags, _ = _compile(apps, text)
    assert not diags.has_errors
    changed = json.loads(second.files["bundle.lock"])["application_files_sha256"]
    assert changed["db"] != lock["application_files_sha256"]["db"]
    assert changed["shop"] == lock["application_files_sha256"]["shop"]
    standard = compile_source(SOCIAL.replace("USE", 'use app "social-network"').encode(), "s.itb", Diagnostics())
    assert "application_files_sha256" not in json.loads(standard.files["bundle.lock"])


def test_check_takes_the_app_path_to_its_workers(apps, monkeypatch):
    from click.testing import CliRunner

    from itbench_dsl.checking import check_files
    from itbench_dsl.cli.check import command

    (apps / "scenarios").mkdir()
    for name in ("a", "b"):
        (apps / "scenarios" / f"{name}.itb").write_text(scenario('use app "shop"').replace('"modules"', f'"{name}"'))
    monkeypatch.chdir(apps)
    without = CliRunner().invoke(command, ["--format", "concise", "scenarios"])
    assert without.exit_code == 1 and "E2001" in without.output
    with_path = CliRunner().invoke(command, ["--format", "concise", "--app-path", "apps", "-j", "2", "scenarios"])
    assert "error" not in with_path.output, with_path.output
    jobs = [(str(p), p.read_bytes()) for p in sorted((apps / "scenarios").glob("*.itb"))]
    diags, _ = check_files(jobs, workers=2, app_path=[str(apps / "apps")])
    assert not diags.has_errors, [d.message for d in diags.items]


WHOLE_NAMESPACE = '''scenario "shop-namespace-deleted" {
  domain sre
  complexity low
  description "The shop's namespace is deleted: its services, its tool pod and its ingress disappear."
  topology {
    namespace "shop"
    serviceaccount "tool"
    role "reader" {
      rule {
        api_groups = [""]
        resources = ["configmaps"]
        verbs = ["get"]
      }
    }
    rolebinding "reader" {
      role = "reader"
      subjects = [service_account("tool")]
    }
    deployment "web" {
      image = "nginx:1.27"
      port "http" = 80
    }
    service "web" {
      port "http" = 80
    }
    pod "tool" {
      restart_policy = "Always"
      service_account = "tool"
      image = "busybox:1.36"
      command = ["sleep", "86400"]
    }
    ingress "shop" {
      class = "nginx"
      rule "shop.example.com" {
        path "/" {
          service = "web"
          port = "http"
        }
      }
    }
  }
  group {
    fault namespace_delete on namespace "shop"
    wait after redeploy on namespace "shop" { timeout = 5m }
  }
  expect {
    root_cause namespace "shop"
    mitigated when { deployment "web" ready }
  }
  solution "Recreate the namespace and redeploy" {
    step "Recreate the namespace" run "kubectl create namespace shop"
    step "Redeploy the application" run "kubectl apply -f manifests/topology.yaml"
  }
}
'''


def test_namespace_delete_takes_and_gives_back_every_object_of_the_namespace_bare_pods_included():
    """Deleting a namespace deletes everything in it: a bare Pod (no controller makes it again), an Ingress, its
    Roles and RoleBindings are listed as deleted, so the revert recreates them and the evaluator wants them back."""
    diags = Diagnostics()
    result = compile_source(WHOLE_NAMESPACE.encode(), "ns.itb", diags)
    assert not diags.has_errors, [d.message for d in diags.items]
    deleted = {(d["kind"], d["metadata"]["name"]) for d in yaml.safe_load_all(result.files["inject/delete.yaml"])}
    wanted = {("Pod", "tool"), ("Ingress", "shop"), ("Role", "reader"), ("RoleBinding", "reader"),
              ("Deployment", "web"), ("Service", "web"), ("ServiceAccount", "tool"), ("Namespace", "shop")}
    assert wanted <= deleted
    restored = {(d["kind"], d["metadata"]["name"]) for d in yaml.safe_load_all(result.files["revert/apply.yaml"])}
    assert restored == deleted
    [pod] = [d for d in yaml.safe_load_all(result.files["revert/apply.yaml"]) if d["kind"] == "Pod"]
    assert pod["spec"]["containers"][0]["command"] == ["sleep", "86400"]
    # self-validation: the evaluator wants the bare pod back as it was, and the replayed solution gives it
    from itbench_dsl.checking import check_source

    checked = check_source(WHOLE_NAMESPACE.encode(), "ns.itb")
    assert not [d for d in checked.diagnostics if d.severity == "error"], [d.message for d in checked.diagnostics]
    spec = spec_of(result.files["evaluator.py"].decode())
    assert ("Pod", "tool") in {(r["object"]["kind"], r["object"]["name"]) for r in spec["mitigation"]["restored"]}
