"""CISO task classes: one record per class, as a `FaultKind` is for faults.

A class says what the agent must produce (its submission files and the artefact the evaluator
grades, with the contract the prompt states), what the agent may change in the cluster to do it,
and how ITBench names and words the class (its scenario folder's `info.json` and goal text).
The checker, the prompt, the evaluator and the ITBench CISO backend all read it from here.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class TaskClass:
    """One CISO task class."""

    task: str  # the language's name (`task kyverno_policy`)
    scenario_type: str  # ITBench's id of the class (info.json `scenario_type`)
    incident_type: str  # info.json `incident_type`
    name: str  # info.json `name`, `{section}` filled in
    removal: str  # the file name of the removal tasks (ITBench's class 1 spells it differently)
    goal: str  # the goal text of the class's goal.yml, `{goal}` filled in
    artefact: str  # what the evaluator grades: "kyverno" (a ClusterPolicy) or "rego" (a Rego policy)
    submission: dict = field(default_factory=dict)  # the files the agent writes in its work folder
    write: tuple[tuple[str, ...], tuple[str, ...]] = ((), ())  # (namespaced, cluster) resources it must change
    updates: bool = False  # the agent edits a policy the scenario deploys (keeping its name and rules)
    platform: str = "k8s"  # what the gap is opened on: "k8s" (cluster objects) or "rhel9" (hosts, by playbooks)
    collects: bool = False  # the agent collects the objects itself with kubectl: its default access must reach them
    runnable: bool = False  # `itbench run` grades it (from the PolicyReports Kyverno writes)
    kubeconfig_data: bool = False  # ITBench's input.json of the class carries an empty `kubeconfig_data`
    # the class's harness (playbooks/evaluate.yml) reads the graded object from manifests/application.yaml as one
    # document (`from_yaml`): an export whose application.yaml holds more is refused (E3006)
    one_application_object: bool = False
    # the kubectl commands the class's prompt cites: the agent's access grants what they need (access.py)
    commands: tuple[str, ...] = ()
    # a Rego class's input: the shape its policy is graded on (INPUT_SHAPES), which its prompt states
    input: str = ""


# The goal texts are ITBench's, word for word (their spelling included): the agent sees this text.
_GOAL_KYVERNO = """\
I would like to check if the following condition is satisfiled, given a Kubernetes cluster with `kubeconfig.yaml`
    {goal}

To check the condition, do the following steps. 
- deploy a Kyverno policy to the cluster
- chcek if the policy is correctly deployed. 

If deploying the policy failed and if you can fix the issue, you will do it and try deploying again.
Once you get a final answer, you can quit the work.

The cluster's kubeconfig is at `{kubeconfig}`.
"""
_GOAL_OPA = """\
I would like to check if the following condition is satisfiled, given a Kubernetes cluster with `kubeconfig.yaml`
    {goal} 

To check the condition, do the following steps. 
- get related resource(s) on the cluster by kubectl command
- chcek if the conditions are satisfied by OPA Rego policy

for those steps, you need to create an OPA Rego policy `policy.rego`. 
Also, save the kubectl command as `script.sh` with the following design. 
- The script should output the collected related resources to a file named `collected_data.json` in the current working directory.
- Please remove any kubeconfig configuration (e.g. --kubeconfig args) from the script, as users will configure the kubeconfig using environment variables or other methods.

If running the policy failed and if you can fix the issue, you will do it and try running again.

Once you get a final answer, you can quit the work.

The cluster's kubeconfig is at `{kubeconfig}`.
"""
_GOAL_ANSIBLE = """\
I would like to check if the following condition is satisfiled, given a host name `{hosts}`, on RHEL by using Ansible Playbook and OPA Rego policy
    {goal} 

To check the condition, do the following steps. 
- collect configuration from the RHEL host and save it locally. you can use ansible-playbook to do that. 
- chcek if the condition is met by using rego policy with the input given by the step above. 

for those steps, you need to create ansible playbook `playbook.yml` and OPA rego policy `policy.rego`.
If you can fix the generated code, do it and run the fixed code again.
Once you get a final answer, you can quit the work.

The Ansible inventory file (inventory.ansible.ini) for the target RHEL server is located at `{inventory}`.
"""
_GOAL_UPDATE = """\
{goal} 

The cluster's kubeconfig is at `{kubeconfig}`.
"""

# The input a Rego policy is graded on, by shape: the evaluator builds inputs of this shape holding the gap and
# compliant objects in several combinations (runtime/evaluator.py, rego_verdicts), and the class's prompt states
# it, the collecting script's output being the agent's own check. `list`: what `kubectl get KINDS -o json`
# writes; `hosts`: one item per host, each file's settings as `key: value` (the key as the file spells it,
# the value as text), the drop-ins a file includes among the files (sshd's /etc/ssh/sshd_config.d/*.conf, read
# before the main file), and each service as Ansible's `service_facts` reports it.
INPUT_SHAPES = {
    "list": {"apiVersion": "v1", "kind": "List", "items": ["<each object, as kubectl gives it with -o json>"]},
    "hosts": {"hosts": [{"name": "<host>",
                         "files": {"<path of a configuration file, or of a drop-in it includes>": {
                             "<Setting>": "<its value, as text>"}},
                         "services": {"<unit>.service": {"name": "<unit>.service", "source": "systemd",
                                                         "state": "running | stopped",
                                                         "status": "<as `systemctl is-enabled` says: enabled, "
                                                                   "disabled, masked, static, ...>"}}}]},
}

# The Kyverno artefact's contract, as every Kyverno prompt states it: a ClusterPolicy of kyverno.io/v1 that
# reports (Audit) and checks existing objects (background).
KYVERNO_CONTRACT = {"apiVersion": "kyverno.io/v1", "kind": "ClusterPolicy", "audit": True, "background": True}

TASK_CLASSES: dict[str, TaskClass] = {c.task: c for c in [
    TaskClass("kyverno_policy", "Gen-CIS-b-K8s-Kyverno", "policy_gen", "cis-b.{section}-gen", "fault_remove.yml",
              _GOAL_KYVERNO, "kyverno", {"policy": "policy.yaml"}, (("policies",), ("clusterpolicies",)),
              commands=("kubectl get polr -A", "kubectl get cpolr"), runnable=True, kubeconfig_data=True,
              one_application_object=True),
    TaskClass("opa_kubectl", "Gen-CIS-b-K8s-Kubectl-OPA", "k8s-opa-cis-b-gen", "k8s-opa/cis-b-gen/{section}",
              "fault_removal.yml", _GOAL_OPA, "rego",
              {"fetcher": "fetcher.sh", "policy": "policy.rego", "collected": "collected_data.json"}, collects=True,
              input="list"),
    TaskClass("ansible_opa", "Gen-CIS-b-RHEL9-Ansible-OPA", "rhel9-cis-b-gen", "rhel9/cis-b-gen/{section}",
              "fault_removal.yml", _GOAL_ANSIBLE, "rego",
              {"fetcher": "playbook.yml", "policy": "policy.rego", "collected": "collected_data.json"},
              platform="rhel9", input="hosts"),
    TaskClass("kyverno_update", "Upd-CIS-b-K8s-Kyverno", "policy-adapt", "policy-adapt/{section}",
              "fault_removal.yml", _GOAL_UPDATE, "kyverno", {"policy": "updated-policy.yaml"},
              (("policies",), ("clusterpolicies",)), updates=True, runnable=True),
]}
# the task classes a scenario may name (`task NAME`), each with ITBench's scenario type
CISO_TASKS = {c.task: c.scenario_type for c in TASK_CLASSES.values()}
# ITBench's `scenario_type` of a class (lower case) -> the class, for reading ITBench's folders
BY_SCENARIO_TYPE = {c.scenario_type.lower(): c for c in TASK_CLASSES.values()}
