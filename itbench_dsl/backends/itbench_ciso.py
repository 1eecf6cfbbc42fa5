"""ITBench's CISO scenario folder: the files its CISO harness reads, beside scenario.yaml.

ITBench's CISO scenarios are folders, one per task class (Kyverno policy, kubectl + OPA,
RHEL9 Ansible + OPA, Kyverno policy update), each with `info.json` (name, description, class,
goal), `input.json` (what the harness hands the agent), the goal text, `manifests/` (the objects
that open the policy gap), `tasks/` (the Ansible tasks that inject and remove it) and, for the
update class, `eval_config.yaml` (which policy must now fail which object, which policies must
not change). This module writes them from the IR, under `itbench/` in the bundle:

    itbench/info.json  itbench/input.json  itbench/goal.txt  itbench/status.template.json
    itbench/manifests/application.yaml     the gap and the objects it needs (not the compliant ones)
    itbench/manifests/compliant.yaml       the compliant objects that must stay passing (our addition)
    itbench/manifests/existing-policy.yaml the policy a kyverno_update agent edits
    itbench/tasks/fault_inject.yml, itbench/tasks/fault_remove[al].yml
    itbench/eval_config.yaml               kyverno_update only

The class's harness playbooks (`playbooks/goal.yml`, `playbooks/evaluate.yml`) and example
agent outputs (`examples/`) are the same for every scenario of a class and not written
(docs/itbench-ciso.md says why). Everything here is a pure function of the IR and of the
manifests the compiler already validated.
"""

from __future__ import annotations

import json
import re

from .. import ciso, ir, yamlout
from . import ciso as ciso_backend
from ..ciso.tasks import TASK_CLASSES

KUBECONFIG = "/etc/ciso-task-scenarios/kubeconfig.yaml"
SHARED_WORKSPACE = "/tmp/agent"
SSH_KEY = "/etc/ciso-task-scenarios/ssh_key"
# the namespace ITBench's harness deploys namespace-less manifests into (`target_ns`): its class-4
# manifests and example reports name it
TARGET_NAMESPACE = "paa"
# the harness's own variables, kept as placeholders in the goal text (its goal.yml fills them in)
KUBECONFIG_VAR = "{{ kubeconfig }}"
INVENTORY_VAR = "{{ path_to_inventory }}"


STATUS_TEMPLATE = {"status": {"conditions": [
    {"type": kind, "status": "False", "lastTransitionTime": "2024-01-01T00:00:00Z"}
    for kind in ("Deployed", "FaultInjected", "Destroyed")]}}
_SECTION = re.compile(r"\d+(\.\d+)*")


def section(scenario: ir.Scenario) -> str:
    """The control's section number ("5.2.5"): the catalogue's, or the control id when it is one;
    otherwise the scenario's name."""
    compliance = scenario.compliance
    entry = ciso.lookup(compliance.control) if compliance else None
    if entry is not None:
        return entry.section
    if compliance is not None and _SECTION.fullmatch(compliance.control):
        return compliance.control
    return scenario.name


def hosts(scenario: ir.Scenario) -> str:
    """ITBench's inventory group: the gap hosts as an ITBench run names them (`rhel9_servers`, one group), not the
    bundle's neutral pair of groups (`rhel9_servers_40bc`), which only the bundle's own inventory has."""
    group = next((r.name for r in scenario.compliance.gaps if r.kind == ciso.HOST_KIND),
                 ciso.host_groups(ciso.DEFAULT_HOSTS, scenario.compliance.control)[0])
    return ciso.host_prefix(group)


def _text(scenario: ir.Scenario, key: str, default: str) -> str:
    value = scenario.metadata.get(key)
    return value if isinstance(value, str) and value else default


def itbench_name(scenario: ir.Scenario) -> str:
    """info.json `name`: metadata `itbench_name`, or the class's pattern."""
    return _text(scenario, "itbench_name", TASK_CLASSES[scenario.compliance.task].name.format(section=section(scenario)))


def info_json(scenario: ir.Scenario) -> dict:
    """info.json; `name` and `description` may be given as metadata (`itbench_name`, `itbench_description`)."""
    cls = TASK_CLASSES[scenario.compliance.task]
    return {"name": itbench_name(scenario), "description": _text(scenario, "itbench_description", scenario.description),
            "incident_type": cls.incident_type, "scenario_type": cls.scenario_type, "goal": scenario.compliance.goal}


def input_json(scenario: ir.Scenario) -> dict:
    cls = TASK_CLASSES[scenario.compliance.task]
    if cls.platform == "rhel9":
        return {"inventory_host": hosts(scenario), "target_server": {
            "address": "<IP address or hostname of the RHEL9 machine>",
            "username": "<Username to access the RHEL9 machine>",
            "sshkey": SSH_KEY, "python_interpreter": "/usr/bin/python3", "alias": "RHEL9 Machine"},
            "shared_workspace": SHARED_WORKSPACE}
    data = {"kubeconfig_data": ""} if cls.kubeconfig_data else {}
    return {**data, "shared_workspace": SHARED_WORKSPACE, "kubeconfig": KUBECONFIG}


def goal_text(scenario: ir.Scenario) -> str:
    """The goal the class's harness builds from info.json (goal.yml), its own variables left as placeholders."""
    cls = TASK_CLASSES[scenario.compliance.task]
    return cls.goal.format(goal=scenario.compliance.goal, kubeconfig=KUBECONFIG_VAR, inventory=INVENTORY_VAR,
                           hosts=hosts(scenario))


def _key(obj: dict) -> tuple:
    meta = obj.get("metadata", {})
    return obj.get("kind"), meta.get("namespace"), meta.get("name")


def split_manifests(scenario: ir.Scenario, manifests: dict[str, list[dict]]) -> tuple[list[dict], list[dict]]:
    """(application.yaml, compliant.yaml): the gap with the objects it needs, and the compliant objects.

    The harness deploys only what its tasks name, so every topology object but the namespaces
    (the harness's target namespace exists) goes to one of the two files."""
    compliant_keys = {(r.kind, r.namespace, r.name) for r in scenario.compliance.compliant}
    topology = [o for o in manifests.get("manifests/topology.yaml", []) if o.get("kind") != "Namespace"]
    compliant = [o for o in topology if _key(o) in compliant_keys]
    support = [o for o in topology if _key(o) not in compliant_keys]
    return support + list(manifests.get("inject/apply.yaml", [])), compliant


def _k8s_task(name: str, state: str, src: str) -> dict:
    return {"name": name, "kubernetes.core.k8s": {"kubeconfig": "{{ kubeconfig }}", "state": state,
                                                  "namespace": "{{ target_ns }}", "src": f"../manifests/{src}"}}


def tasks(scenario: ir.Scenario, compliant: bool, policies: bool) -> tuple[list[dict], list[dict]]:
    """(fault_inject.yml, the removal tasks) as ITBench's task lists (included by the harness's playbooks)."""
    cls = TASK_CLASSES[scenario.compliance.task]
    if cls.platform == "rhel9":
        control = ciso.lookup(scenario.compliance.control)
        if not isinstance(control, ciso.HostControl):
            return [], []
        return control.tasks(True), control.tasks(False)
    what = "resources" if cls.updates else "pods"
    inject = [_k8s_task(f"Deploy non compliant {what}", "present", "application.yaml")]
    remove = [_k8s_task("Delete the non compliant pods", "absent", "application.yaml")]
    if compliant:
        inject.append(_k8s_task("Deploy the compliant resources", "present", "compliant.yaml"))
        remove.append(_k8s_task("Delete the compliant resources", "absent", "compliant.yaml"))
    if policies:
        inject.append(_k8s_task("Deploy Policies", "present", "existing-policy.yaml"))
        remove.append({"name": "Delete all Policies/ClusterPolicies",
                       "command": 'kubectl delete policy,clusterpolicy --all --kubeconfig="{{ kubeconfig }}"'})
    return inject, remove


def _resource(ref: ir.ObjectRef) -> dict:
    out: dict = {"name": ref.name}
    if ref.namespace:
        out["namespace"] = ref.namespace
    out.update({"kind": ref.kind, "api_version": ref.api_version})
    return out


def eval_config(scenario: ir.Scenario, policies: list[dict]) -> dict:
    """kyverno_update: the edited policy must fail every gap object (and, our addition, pass every
    compliant one); every other existing policy must stay as it was."""
    names = [p["metadata"]["name"] for p in policies]
    namespace = next((r.namespace for r in scenario.compliance.gaps if r.namespace), TARGET_NAMESPACE)
    target = ciso_backend.update_target(scenario) or ciso.policy_name(namespace)
    checks = [{"policy_name": target, "resource": _resource(r), "expected_result": "fail"}
              for r in scenario.compliance.gaps]
    checks += [{"policy_name": target, "resource": _resource(r), "expected_result": "pass"}
               for r in scenario.compliance.compliant]
    return {"check_violations": checks,
            "check_unchanged_policies": [{"policy_name": n} for n in names if n != target]}


def dump_json(data) -> bytes:
    return (json.dumps(data, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def dump_yaml(documents: list[dict]) -> bytes:
    return yamlout.dump_all(documents).encode("utf-8")


def bundle_files(scenario: ir.Scenario, manifests: dict[str, list[dict]]) -> dict[str, bytes]:
    """The CISO harness's files under `itbench/`; empty for SRE and FinOps scenarios."""
    if scenario.compliance is None or scenario.compliance.task not in TASK_CLASSES:
        return {}
    cls = TASK_CLASSES[scenario.compliance.task]
    files = {
        "itbench/info.json": dump_json(info_json(scenario)),
        "itbench/input.json": dump_json(input_json(scenario)),
        "itbench/goal.txt": goal_text(scenario).encode("utf-8"),
        "itbench/status.template.json": dump_json(STATUS_TEMPLATE),
    }
    # the task's own policies in their declared order; else the catalogue's
    policies = list(scenario.compliance.policies or manifests.get("manifests/existing-policy.yaml", []))
    application, compliant = ([], []) if cls.platform == "rhel9" else split_manifests(scenario, manifests)
    if application:
        files["itbench/manifests/application.yaml"] = dump_yaml(application)
    if compliant:
        files["itbench/manifests/compliant.yaml"] = dump_yaml(compliant)
    if policies:
        files["itbench/manifests/existing-policy.yaml"] = dump_yaml(policies)
    inject, remove = tasks(scenario, bool(compliant), bool(policies))
    if inject:
        files["itbench/tasks/fault_inject.yml"] = yamlout.dump(inject).encode("utf-8")
    if remove:
        files["itbench/tasks/" + cls.removal] = yamlout.dump(remove).encode("utf-8")
    if cls.updates:
        files["itbench/eval_config.yaml"] = yamlout.dump(eval_config(scenario, policies)).encode("utf-8")
    return files


# ---- `itbench compile --target itbench`: ITBench's own layout, every domain -------------------------------


def export_folder(scenario: ir.Scenario) -> str:
    """The folder ITBench keeps the scenario in: `scenario_<id>` for SRE and FinOps
    (`scenarios/sre/.../files/scenario_N`), the id itself for CISO; the scenario's name without an id."""
    itbench_id = scenario.metadata.get("itbench_id")
    if itbench_id in (None, ""):
        return scenario.name
    return str(itbench_id) if scenario.domain == "ciso" else f"scenario_{itbench_id}"


def export_findings(result) -> list:
    """What ITBench's layout cannot carry of a compiled scenario (a CompileResult). Its ground truth grades
    the whole incident, so an export ITBench would run a part of is refused: a fault ITBench's fault library
    lacks (E3004), a fault on an object ITBench does not deploy (E3005). An SRE or FinOps scenario.yaml names
    its application by ITBench key, so the objects of an inline topology, or of an application ITBench does
    not install, are not in it (W3001)."""
    from .. import ast
    from ..diagnostics import Diagnostic

    scenario = result.scenario
    found = _missing_faults(result) + _fixed_arguments(result) + _merged_env(result)
    if scenario.domain == "ciso":
        return found + _application_objects(result)
    if scenario.topology.application_key is not None:
        return found
    app = scenario.topology.application
    where = next((s.span for s in result.document.statements if isinstance(s, (ast.UseApp, ast.Topology))),
                 result.document.span)
    moved = _moved(app)
    what = (f"application `{app}` is moved out of the namespace ITBench installs it in" if moved else
            f"application `{app}` is not one ITBench installs" if app else "an inline topology has no ITBench key")
    fix = (f'keep `{app}` in its own namespace (no `namespace` in `use app`)' if moved else
           'use an application ITBench installs (`use app "opentelemetry-demo"`)')
    return found + _undeployed_targets(result, what, fix) + [
        Diagnostic("W3001", f"scenario `{scenario.name}`: ITBench's scenario.yaml names the applications to "
                   f"install by ITBench key, and {what}: `applications` is empty and its objects are not deployed "
                   "by ITBench", result.path, where, "not in ITBench's files", help=f"{fix}, or run the full bundle")]


def _moved(app: str | None) -> bool:
    """Whether `app` is a standard application ITBench installs, which the scenario moved to other namespaces
    (rename_namespaces drops its ITBench key: ITBench would install it where the faults do not act)."""
    from ..applications import app_names, app_topology

    if not app or app not in app_names():
        return False
    build, _ = app_topology(app)
    return build is not None and build.app_metadata.get("itbench_key") is not None


def _fault_span(result, injection):
    from .. import ast

    faults = (f for s in result.document.statements
              for f in (s.items if isinstance(s, ast.Group) else (s,)))  # a group's faults too
    stmt = next((f for f in faults if isinstance(f, ast.Fault) and f.kind == injection.fault), None)
    return stmt.span if stmt is not None else result.document.name_span


def _undeployed_targets(result, what: str, fix: str) -> list:
    """E3005 for each fault ITBench would inject into an object of the scenario's own namespaces, when ITBench
    deploys none of them (`applications: {}`): the injection meets no object, and the ground truth grades an
    incident that cannot occur."""
    from ..diagnostics import Diagnostic

    scenario = result.scenario
    undeployed = {n.name for n in scenario.topology.namespaces if not n.provided}
    out = []
    for injection in scenario.injections():
        if injection.itbench_id and injection.target.namespace in undeployed:  # else E3004 reports it
            target = f"{injection.target.kind.lower()} `{injection.target.name}`"
            out.append(Diagnostic(
                "E3005", f"fault `{injection.fault}` on {target}: {what}, so ITBench deploys no "
                f"`{injection.target.namespace}` object and its injection meets nothing, while the ground truth "
                f"grades the incident: the ITBench export of `{scenario.name}` is not written",
                result.path, _fault_span(result, injection), "ITBench does not deploy this target",
                help=f"{fix}, or run the full bundle (`itbench run`)"))
    return out


def _application_objects(result) -> list:
    """E3006 when the class's harness reads the graded object from application.yaml as one document
    (TaskClass.one_application_object) and the export's holds several (the gap's ServiceAccount beside its
    binding, two gap objects): ITBench's evaluation could not read it, or would grade the first object alone."""
    import yaml

    from ..diagnostics import Diagnostic

    scenario = result.scenario
    cls = TASK_CLASSES.get(scenario.compliance.task) if scenario.compliance is not None else None
    data = (result.files or {}).get("itbench/manifests/application.yaml")
    if cls is None or not cls.one_application_object or not data:
        return []
    objects = [d for d in yaml.safe_load_all(data.decode("utf-8")) if isinstance(d, dict)]
    if len(objects) <= 1:
        return []
    listed = ", ".join(f"{o.get('kind')} `{(o.get('metadata') or {}).get('name')}`" for o in objects)
    return [Diagnostic(
        "E3006", f"scenario `{scenario.name}`: ITBench's {cls.scenario_type} harness reads the one object it grades "
        f"from manifests/application.yaml as a single document, and this export's holds {len(objects)} ({listed}): "
        "ITBench could not grade it, so the ITBench export is not written", result.path,
        result.document.name_span, "ITBench grades one object here",
        help="give the scenario one gap object that needs no other (or run the full bundle, `itbench run`, which "
             "grades every gap object)")]


def _fixed_arguments(result) -> list:
    """W3002 for each argument of a fault ITBench's scenario.yaml has no field for (FaultKind.itbench_injects) whose
    value differs from what ITBench's injection task applies: the export's ITBench run injects another fault (a
    magnitude, a metric) than the one the scenario's ground truth and prose describe."""
    from ..diagnostics import Diagnostic

    out = []
    for injection in result.scenario.injections():
        fixed = getattr(injection.kind, "itbench_injects", None) or {}
        if not injection.itbench_id:
            continue
        for key, value in fixed.items():
            # a key reads the checked arguments, a dotted one inside them (`probe.httpGet.port`: the argument `port`)
            given = injection.args
            for step in key.split("."):
                given = given.get(step) if isinstance(given, dict) else None
            name = key.rsplit(".", 1)[-1]
            if name in injection.itbench_args or (value is not None and given == value):
                continue
            applies = ("its own values, which no value of it says" if value is None else f"`{value}`")
            out.append(Diagnostic(
                "W3002", f"fault `{injection.fault}`: ITBench's scenario.yaml has no field for `{name}` "
                f"({given!r} here); ITBench's injection task applies {applies}, so an ITBench run of this export "
                "injects another fault than the one its ground truth grades", result.path,
                _fault_span(result, injection), "ITBench injects its own value",
                help=(f"write `{name}` as ITBench injects it ({value}), or " if value is not None else "")
                + "run the full bundle (`itbench run`), which injects the scenario's fault"))
    return out


# ITBench's injection tasks that write a container's env entry by a strategic-merge patch (kubernetes.core.k8s
# `state: patched`): the entry is merged into the one of the same name, whatever else it holds
_ENV_PATCH_FAULTS = frozenset({"modified-kubernetes-workload-container-environment-variable"})


def _merged_env(result) -> list:
    """E3007 for each fault whose ITBench task writes an environment variable's `value` by a strategic-merge patch
    where the container sets that variable by `valueFrom`: the merge keeps `valueFrom` beside the new `value`,
    which the API server refuses (an env var has one or the other), so ITBench's injection fails while the
    export's ground truth grades the fault. The native bundle writes the entry whole."""
    from ..diagnostics import Diagnostic

    out = []
    for injection in result.scenario.injections():
        if injection.itbench_id not in _ENV_PATCH_FAULTS:
            continue
        target = injection.target
        workload = next((w for w in result.scenario.topology.workloads if (w.kind, w.namespace, w.name)
                         == (target.kind, target.namespace, target.name)), None)
        if workload is None:
            continue
        name, wanted = injection.args.get("name"), injection.args.get("container")
        containers = [c for c in workload.containers if wanted in (None, "", c.name)]
        if len(containers) != 1:
            continue
        entry = next((e for e in containers[0].env if e.name == name), None)
        if entry is None or not entry.value_from:
            continue
        out.append(Diagnostic(
            "E3007", f"fault `{injection.fault}`: container `{containers[0].name}` sets `{name}` by `valueFrom`, and "
            "ITBench's injection task writes the new `value` by a strategic-merge patch, which keeps `valueFrom` "
            "beside it: the API server refuses the patch, so ITBench would not inject the fault the export's ground "
            "truth grades; the ITBench export is not written", result.path, _fault_span(result, injection),
            "set by valueFrom in the container",
            help="modify a variable the container sets by `value`, or run the full bundle (`itbench run`), which "
                 "writes the entry whole"))
    return out


def _missing_faults(result) -> list:
    """E3004 for each fault ITBench's fault library does not have: its scenario.yaml cannot list it, so ITBench
    would not inject it, while the ground truth (root causes, propagation, alerts, solution) grades the whole
    incident and cannot be split by fault. The export is refused, whether other faults are left or not."""
    from ..diagnostics import Diagnostic

    scenario = result.scenario
    injections = scenario.injections()
    out = []
    for injection in injections:
        if injection.itbench_id:
            continue
        target = f"{injection.target.kind.lower()} `{injection.target.name}`"
        left = sum(1 for i in injections if i.itbench_id)
        if left:
            effect = (f"ITBench's scenario.yaml would list the other {'fault' if left == 1 else f'{left} faults'} "
                      "only, while its ground truth grades the whole incident")
        else:
            effect = "its scenario.yaml would say `faults: []` and ITBench would inject nothing"
        out.append(Diagnostic(
            "E3004", f"fault `{injection.fault}` on {target} is not one ITBench's fault library has: {effect}, "
            f"so the ITBench export of `{scenario.name}` is not written", result.path, _fault_span(result, injection),
            "ITBench cannot inject this",
            help="compile the full bundle (its inject/ folder applies the fault, `itbench run` runs it), or use "
                 "a fault ITBench has (`itbench faults` marks them)"))
    return out


def export_files(files: dict[str, bytes]) -> dict[str, bytes]:
    """A compiled bundle's ITBench files, at the paths ITBench's layout gives them."""
    return {name.removeprefix("itbench/"): content for name, content in files.items() if name.startswith("itbench/")}
