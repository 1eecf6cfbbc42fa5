"""CISO rendering: the manifests, policies and plays a scenario's compliance section compiles to, a pure
function of the IR (control id, task class, namespace). The catalogue they come from is `ciso/` (the
controls, the task classes); the checker records the same objects there (`ciso.checks`).
"""

from __future__ import annotations

from .. import ir
from ..ciso import CATALOGUE, DEFAULT_HOSTS, HOST_KIND, HostControl, K8sControl, host_groups, policy_name, ref
from ..ciso.k8s import MANAGED
from ..ciso.tasks import KYVERNO_CONTRACT, TASK_CLASSES


def _updates(task: str) -> bool:
    """Whether the task class edits a policy the scenario deploys (`TaskClass.updates`)."""
    cls = TASK_CLASSES.get(task)
    return cls is not None and cls.updates


def _single_namespace(scenario: ir.Scenario) -> str | None:
    namespaces = scenario.topology.namespaces
    return namespaces[0].name if len(namespaces) == 1 else None


def k8s_objects(scenario: ir.Scenario) -> tuple[list[dict], list[dict]]:
    """(gap manifests, compliant manifests) the catalogue contributes to a checked scenario.

    Empty unless the control is a Kubernetes catalogue control whose objects the checker recorded
    (a scenario with its own `gap`/`compliant` statements contributes none).
    """
    compliance = scenario.compliance
    control = CATALOGUE.get(compliance.control) if compliance else None
    namespace = _single_namespace(scenario)
    if not isinstance(control, K8sControl) or namespace is None:
        return [], []
    violating, compliant = control.objects(namespace, True), control.objects(namespace, False)
    if [ref(o) for o in violating] != compliance.gaps or [ref(o) for o in compliant] != compliance.compliant:
        return [], []  # the scenario's own gap objects (explicit `gap`/`compliant` statements)
    return violating, compliant


def update_target(scenario: ir.Scenario) -> str | None:
    """The name of the policy a kyverno_update agent edits."""
    compliance = scenario.compliance
    if compliance is None or not _updates(compliance.task):
        return None
    if compliance.policies:
        return compliance.update
    existing = existing_policy(scenario)
    return existing[0]["metadata"]["name"] if existing else None


def existing_policy(scenario: ir.Scenario) -> list[dict]:
    """The policies a kyverno_update scenario deploys for the agent to update: those its task declares (the one
    to edit first), or the catalogue control's too-weak ClusterPolicy."""
    compliance = scenario.compliance
    if compliance is not None and _updates(compliance.task) and compliance.policies:
        first = [p for p in compliance.policies if p["metadata"]["name"] == compliance.update]
        return first + [p for p in compliance.policies if p["metadata"]["name"] != compliance.update]
    control = CATALOGUE.get(compliance.control) if compliance else None
    namespace = _single_namespace(scenario)
    if compliance is None or not _updates(compliance.task) or not isinstance(control, K8sControl) \
            or not control.update_from or namespace is None or not k8s_objects(scenario)[0]:
        return []
    return [cluster_policy(policy_name(namespace), namespace, [CATALOGUE[c] for c in control.update_from])]


def artefact_contract(scenario: ir.Scenario) -> dict:
    """What the agent's artefact must be, as its prompt states it (ciso/tasks.py): for a Kyverno class the
    policy's kind, API version, audit mode and background checks and, for an update, the policy's name
    and the rules it must keep; for a Rego class, the package and rule the policy is queried through."""
    compliance = scenario.compliance
    task = TASK_CLASSES.get(compliance.task) if compliance is not None else None
    if task is None:
        return {}
    if task.artefact == "rego":
        return {"artefact": "rego", "package": "check", "rule": "result"}
    contract = {"artefact": "kyverno", **KYVERNO_CONTRACT}
    # what the ClusterPolicy CRD's schema refuses in a value (the API server refuses the policy)
    from ..validate import value_constraints

    contract["schema"] = [list(c) for c in value_constraints(f"{KYVERNO_CONTRACT['apiVersion']}/{KYVERNO_CONTRACT['kind']}")]
    if task.updates:
        existing = existing_policy(scenario)
        if existing:
            contract["name"] = existing[0]["metadata"]["name"]
            contract["rules"] = [r["name"] for r in existing[0]["spec"].get("rules", []) if "name" in r]
    return contract


def cluster_policy(name: str, namespace: str, controls: list[K8sControl]) -> dict:
    rules = [{
        "name": f"cis-{c.section.replace('.', '-')}-{c.slug}",
        "match": {"any": [{"resources": {"kinds": ["Pod"], "namespaces": [namespace]}}]},
        "validate": {"message": c.title, **c.validation},
    } for c in controls]
    return {"apiVersion": "kyverno.io/v1", "kind": "ClusterPolicy",
            "metadata": {"name": name, "labels": dict(MANAGED),
                         "annotations": {"policies.kyverno.io/title": "Existing security controls"}},
            "spec": {"validationFailureAction": "Audit", "background": True, "rules": rules}}


def playbooks(scenario: ir.Scenario) -> tuple[list[dict], list[dict]]:
    """(inject plays, revert plays) of a host control; empty for other scenarios."""
    compliance = scenario.compliance
    control = CATALOGUE.get(compliance.control) if compliance else None
    if not isinstance(control, HostControl):
        return [], []
    default_gap, default_baseline = host_groups(DEFAULT_HOSTS, compliance.control)
    hosts = next((r.name for r in compliance.gaps if r.kind == HOST_KIND), default_gap)
    # The baseline group keeps the compliant setting: a policy that fails every host is caught there.
    baseline = next((r.name for r in compliance.compliant if r.kind == HOST_KIND), default_baseline)
    return control.playbook(hosts, True) + control.playbook(baseline, False), control.playbook(hosts, False)
