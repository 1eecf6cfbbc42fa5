"""The CISO policy-gap catalogue: CIS Kubernetes section 5 and CIS RHEL9 host controls.

A scenario may name a catalogue control (`control "cis-k8s-5.2.5"`) without `gap` or
`compliant` statements; the checker then records the catalogue's objects, rendered into the
scenario's single namespace, as the scenario's gap and compliant objects, and the backends
(backends/ciso.py) render the same manifests again from the IR (control id, task class,
namespace): the rendering is a pure function of those. A host control's gap is recorded as one reference of
kind `HostGroup` (api version `inventory.ansible.com/v1`) naming the Ansible inventory group.
"""

from __future__ import annotations

import hashlib
import re

from .. import ir
from .k8s import CONTROLS as K8S_CONTROLS
from .k8s import K8S_BENCHMARK, K8sControl
from .rhel9 import CONTROLS as HOST_CONTROLS
from .rhel9 import DEFAULT_HOSTS, RHEL9_BENCHMARK, HostControl
from .tasks import TASK_CLASSES

CATALOGUE: dict[str, K8sControl | HostControl] = {c.id: c for c in [*K8S_CONTROLS, *HOST_CONTROLS]}
HOST_API, HOST_KIND = "inventory.ansible.com/v1", "HostGroup"
CATALOGUE_PREFIXES = ("cis-k8s-", "rhel9-")


def is_group_name(name: str) -> bool:
    """An Ansible inventory group name: letters, digits and `_`, not starting with a digit."""
    return re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name) is not None


def lookup(control_id: str) -> K8sControl | HostControl | None:
    return CATALOGUE.get(control_id)


def looks_like_catalogue_id(control_id: str) -> bool:
    return control_id.startswith(CATALOGUE_PREFIXES)


def suggest(control_id: str) -> str | None:
    """A catalogue id close to `control_id`: a typo, or a bare CIS section number ("5.2.5")."""
    from ..diagnostics import did_you_mean
    by_section = [c.id for c in K8S_CONTROLS if c.section == control_id.removeprefix("cis-")]
    if by_section:
        return by_section[0]
    return did_you_mean(control_id, CATALOGUE)


def ref(obj: dict) -> ir.ObjectRef:
    meta = obj["metadata"]
    return ir.ObjectRef(obj["apiVersion"], obj["kind"], meta.get("namespace"), meta["name"])


def host_ref(hosts: str) -> ir.ObjectRef:
    return ir.ObjectRef(HOST_API, HOST_KIND, None, hosts)


def _updates(task: str) -> bool:
    """Whether the task class edits a policy the scenario deploys (`TaskClass.updates`)."""
    cls = TASK_CLASSES.get(task)
    return cls is not None and cls.updates


def policy_name(namespace: str) -> str:
    return f"{namespace}-security-controls"


def goal_text(control: K8sControl | HostControl, task: str, namespace: str | None) -> str:
    """The catalogue's goal: the CIS recommendation; for kyverno_update, the update to make (as ITBench words it)."""
    if not _updates(task) or not isinstance(control, K8sControl) or not control.update_from:
        return control.title
    existing = "\n".join(f"    {CATALOGUE[c].title}" for c in control.update_from)
    return (f"Currently, the Kyverno ClusterPolicy `{policy_name(namespace or 'default')}` is deployed in the "
            f"Kubernetes cluster. It enforces:\n\n{existing}\n\nThe internal security policy now also requires:\n\n"
            f"    {control.title}\n\nReview the existing policy and edit it directly to meet the new requirement. Do "
            "not create new policy resources and do not change the resource's name. Once you have completed the "
            "edits, update the existing resource in the Kubernetes cluster.")


def task_policies(ctx, task, locations: dict) -> tuple[list[dict], str | None]:
    """The existing policies a `kyverno_update` task declares, and the one the agent edits.

        task kyverno_update {
          update = "container-security-controls"        # default: the only policy
          policy "container-security-controls" {        # a Kyverno ClusterPolicy
            rule "disallow-privilege-escalation" {
              kinds = ["Pod"]                           # match.resources.kinds
              message = "Privilege escalation is not allowed."
              pattern = { spec = { containers = [{ "(name)" = "*", securityContext = { allowPrivilegeEscalation = false } }] } }
            }
          }
        }

    Other task classes take no fields (the body reports unknown ones)."""
    from ..diagnostics import did_you_mean
    from ..reader import Body
    body = Body(ctx, task.entries, f"task `{task.kind}`", task.span)
    if not _updates(task.kind):
        body.finish()
        return [], None
    policies: list[dict] = []
    update = body.attr("update", "str")
    for block in body.blocks("policy"):
        name = block.labels[0]
        if any(p["metadata"]["name"] == name for p in policies):
            ctx.error("E2002", f"policy `{name}` is declared twice", block.key_span, "second one")
            continue
        policy_body = Body(ctx, block.entries, f"policy `{name}`", block.span)
        rules = []
        for rule_block in policy_body.blocks("rule"):
            rule_body = Body(ctx, rule_block.entries, f"rule `{rule_block.labels[0]}`", rule_block.span)
            kinds = rule_body.attr("kinds", "str_list", default=["Pod"])
            message = rule_body.attr("message", "str")
            pattern = rule_body.attr("pattern", "any", required=True)
            rule_body.finish()
            if pattern is not None and not isinstance(pattern, dict):
                ctx.error("E2008", f"the `pattern` of rule `{rule_block.labels[0]}` is a map (`{{ spec = ... }}`)",
                          rule_body.attr_span("pattern"), "not a map")
                continue
            validate = {"message": message, "pattern": pattern} if message is not None else {"pattern": pattern}
            rules.append({"name": rule_block.labels[0], "match": {"resources": {"kinds": kinds}}, "validate": validate})
        policy_body.finish()
        if not rules:
            ctx.error("E2007", f"policy `{name}` needs at least one `rule`", block.key_span, "no rule",
                      help='add `rule "name" { kinds = ["Pod"]  message = "..."  pattern = { ... } }`')
            continue
        policies.append({"apiVersion": "kyverno.io/v1", "kind": "ClusterPolicy", "metadata": {"name": name},
                         "spec": {"rules": rules}})
        locations[("ClusterPolicy", None, name)] = (ctx.path, block.key_span)
    body.finish()
    names = [p["metadata"]["name"] for p in policies]
    if update is not None and update not in names:
        hint = did_you_mean(update, names)
        ctx.error("E2010", f"`update` names `{update}`, which the task does not declare", body.attr_span("update"),
                  "unknown policy", help=f"did you mean `{hint}`?" if hint else
                  "declare it: `policy \"NAME\" { rule ... }`" if not names else "declared: " + ", ".join(names))
        update = None
    elif update is None and len(names) > 1:
        ctx.error("E2007", "the task declares several policies: `update` must name the one the agent edits",
                  task.span, "which policy?", help=f'add `update = "{names[-1]}"`')
    elif update is None and names:
        update = names[0]
    return policies, update


def host_groups(hosts: str, control: str) -> tuple[str, str]:
    """(the inventory group the gap is opened on, the group of compliant hosts that must stay passing): two groups
    named alike, `<hosts>_<token>`, their tokens and which holds the gap decided by a hash of the control and
    `hosts`. The agent reads both names (the prompt's host pattern, the inventory): neither may say which hosts
    break the control (`..._baseline` did), and `hosts` alone would be the documented default gap group."""
    digest = hashlib.sha256(f"{control}/{hosts}".encode()).hexdigest()
    first, second = f"{hosts}_{digest[:4]}", f"{hosts}_{digest[4:8]}"
    if first == second:
        second = f"{hosts}_{digest[8:12]}"
    return (first, second) if int(digest[12], 16) % 2 else (second, first)


def host_prefix(group: str) -> str:
    """The `hosts` a group of `host_groups` was named from (`rhel9_servers` of `rhel9_servers_40bc`): ITBench's
    own inventory group, which an ITBench run provides."""
    head, _, token = group.rpartition("_")
    return head if head and re.fullmatch(r"[0-9a-f]{4}", token) else group


# words a host group's name may not hold: they say which hosts comply or break the control (agent_view.py)
HOST_GROUP_TELLING = frozenset("""
baseline compliant noncompliant compliance violating violation violations gap gaps good bad broken fixed
hardened insecure golden failing passing vulnerable unpatched patched
""".split())


def docs_markdown() -> str:
    """docs/ciso.md: the catalogue as tables."""
    classes = lambda c: ", ".join(f"`{k}`" for k in c.classes)  # noqa: E731
    lines = [
        "# CISO policy-gap catalogue", "",
        "This file is generated from `itbench_dsl/ciso/` by `python tools/gen_docs.py`.", "",
        "A CISO scenario may name a catalogue control with no `gap` or `compliant` statement:",
        "", "```", 'control "cis-k8s-5.2.5"', "task kyverno_policy", 'topology { namespace "ciso-target" }', "```", "",
        "The compiler then renders the control's violating objects (the gap: `inject/apply.yaml`, removed by",
        "`revert/delete.yaml`) and its compliant counterpart (`manifests/topology.yaml`) into the scenario's single",
        "namespace, with stable names (`<slug>-a` and `<slug>-b`, which is which fixed per control and said by",
        "neither; cluster-scoped objects carry the namespace as prefix). The goal text defaults to the CIS recommendation. Workloads start from one hardened baseline",
        "(non-root user 101, RuntimeDefault seccomp, no privilege escalation, all capabilities dropped, no",
        "service-account token), and each control changes only the fields it is about: a compliant object differs",
        "from its gap object only in the fields the control reads (its `reads`; a control a scenario declares",
        "itself says them: `control \"ID\" { reads = [\"spec.template.spec.hostNetwork\"] }`, `*` any key or index),",
        "and `tests/ciso/test_ciso_minimal_pairs.py` checks it on the catalogue and the library. For `kyverno_update`, the",
        "too-weak existing policy (`manifests/existing-policy.yaml`, a Kyverno ClusterPolicy",
        "`<namespace>-security-controls`, validated against the vendored Kyverno schema) enforces the controls",
        "listed under *update from*; the agent must extend it with the scenario's control.",
        "A `kyverno_update` task may declare its existing policies itself instead (`task kyverno_update { update =",
        '"name"  policy "name" { rule "name" { kinds = ["Pod"]  message = "..."  pattern = { ... } } } }`): the',
        "agent edits the `update` policy and must leave the others unchanged.",
        "Because every compliant object is the hardened baseline and every gap object shares its image and",
        "container, the evaluator also grades a policy on variants (`ciso/variation.py`, the spec's `ciso.variants`):",
        "copies in what the control does not read (images, container names, a compliant sidecar first, the gap in an",
        "init container or in an ephemeral container of a bare Pod (what `kubectl debug` adds; the probes read",
        "ephemeral containers as Pod Security does), env-var and Secret key names, the same pod template as a Deployment, StatefulSet, DaemonSet,",
        "Job or bare Pod, a `false` left implicit, other user ids and ports, a binding's subject kind, another",
        "read-only role; on a gap too, each security field or port the control does not read moved or left",
        "implicit, so that a precondition on a baseline value the gap objects share, `runAsGroup: 101` or",
        "`containerPort: 8080`, does not narrow a policy to them), the object as a cluster holds it (the",
        "ServiceAccount token's projected volume mounted, resource requests and limits, a pod `fsGroup`, an init",
        "container and three containers, three replicas: a precondition on their absence, no volume or no limits,",
        "does not narrow a policy to bare test pods) and, for a gap, each field the control reads left",
        "out in turn (never one the API server requires: a variant it would refuse, `validate.py`, is dropped), the",
        "violating value varied (`variation.VIOLATING_VALUES`: another added capability, host path or host port, a",
        "wildcard verb or resource) and the compliant example's guards added beside the violation (`drop: [ALL]`",
        "beside an added `NET_RAW`, which the runtime applies after the drop), a compliant item put first in each",
        "list holding the violation (`variation.BENIGN_ITEMS`: a read-only rule before the risky one, an `emptyDir`",
        "before the `hostPath`, a plain env var, port or added capability first, a named verb beside `*`) and a",
        "Role's rules as a ClusterRole's. Where a control reads a setting",
        "Kubernetes lets both the pod's and each container's",
        "`securityContext` hold (`runAsNonRoot`, `runAsUser`, `seccompProfile`: a container's own applies over the",
        "pod's), the setting moves too: into every container (gap and compliant), a container overriding a",
        "compliant pod with the violating value (`runAsUser: 0` under a non-root pod; `seccompProfile: Unconfined`,",
        "the violating value the control spells out, `K8sControl.spelled`, where the gap leaves it out), and on",
        "the compliant side each such pod setting left out where the rest complies (`runAsNonRoot: true` alone);",
        "the probes read each container's effective setting. The control's probe keeps a",
        "variant only where it reads it as it reads the original, as written and as the API server stores it (a",
        "port of a pod on the host's network gets `hostPort`); a compliant variant breaks no catalogue control",
        "the original keeps, on every task class: no policy is required to accept an object breaking another CIS",
        "control (Kyverno's `disallow-host-namespaces`, flagging hostPID, hostIPC and hostNetwork together, is a",
        "right policy of CIS 5.2.3, 5.2.4 and 5.2.5). A control a scenario declares itself is judged by the catalogue control reading the",
        "same fields, where that control's probe reads its objects alike. Otherwise, where its `reads` cover",
        "several independent requirements (the gap and compliant objects differ in read fields of different",
        "objects: the containers' `image` and their `securityContext`, as in \"no root and a trusted registry\"), it",
        "gets a gap variant per requirement violating it alone (`variation.isolated`: the gap object with every other",
        "differing group set as the compliant object holds it), so a policy checking only one requirement misses a",
        "gap; a declared control whose differing fields form one group has no variants but the registry's below. Where",
        "a requirement is the image's registry (the group's `image`, whose registry host, the part before the first `/`",
        "holding a `.`, differs between the gap and the compliant object), its variant comes with three more",
        "(`variation._registry_variants`): the image from look-alike hosts the trusted host's name begins",
        "(`trusted-registry.com.attacker.example/...`, `trusted-registry.com-mirror.example.org/...`: a pattern",
        "`trusted-registry.com*` admits them, `trusted-registry.com/*` does not) and the gap's containers as init",
        "containers behind the compliant object's (a rule over `containers` alone misses them). A variant is labelled a gap",
        "only where what its fields mean makes it one (`k8s.MEANINGS`; the effective user: a container runs as root",
        "unless `runAsNonRoot: true` or a `runAsUser` above 0 holds for it, its own setting over the pod's): a group",
        "differing only by a guard the compliant object adds (`runAsNonRoot: true` beside the gap's `runAsUser: 1000`)",
        "violates nothing alone, so its variant leaves the field of the same meaning out too (no `runAsUser`), or is",
        "dropped where that does not violate; a catalogue control's gap variants are held to the same meanings.",
        "A Kubernetes control also grades as compliant what Kubernetes itself keeps in the gap's namespaces (the",
        "spec's `ciso.system`: the Service `kubernetes` in `default`, the ServiceAccount `default` and the ConfigMap",
        "`kube-root-ca.crt` in every namespace, `k8s.system_objects`; for a control judged per object the Namespace",
        "too), those the control's probe passes (not the ServiceAccount `default` for CIS 5.1.5 and 5.1.6, whose",
        "audits ask it for `automountServiceAccountToken: false`: left ungraded), never deployed nor twinned: a",
        "policy failing every object of",
        "another kind (`kinds: [\"*\"]`), or every object of `default` for CIS 5.7.4, fails.",
        "A host control (`ciso/rhel9.py`) declares what else breaks it, and its gap host gets a variant per setting",
        "(`HostControl.variants`): the other violating values (`PermitRootLogin prohibit-password`,",
        "`without-password`, `forced-commands-only`), the violating value in another case where the program reads any",
        "case (`Yes`), the setting left out where the program's default violates (sshd's `prohibit-password`,",
        "`MaxAuthTries 6`, `PASS_MAX_DAYS 99999`), the values the program reads as \"no limit\" (`unlimited`:",
        "`LoginGraceTime 0` by sshd_config(5), `PASS_MAX_DAYS -1` by login.defs(5)), an sshd time in other units",
        "(`time_format`: `LoginGraceTime 5m`; `1m` complies), and for a service, running in every unit-file state but",
        "`enabled` (`disabled`, `masked`, `enabled-runtime`, `static`, ...: CIS asks `systemctl is-enabled` to print",
        "`enabled`), and not installed at all (no entry of the unit in the host's services, as Ansible's",
        "`service_facts` leaves out a unit that does not exist); its compliant host gets the other compliant values (`No`, `MaxAuthTries 3`, `LoginGraceTime 1m`)",
        "and the setting left out where the program's default complies (sshd_config(5): `HostbasedAuthentication`,",
        "`PermitEmptyPasswords`, `PermitUserEnvironment` and `X11Forwarding` default to `no`, `IgnoreRhosts` to `yes`), so",
        "a policy that flags every host without an explicit compliant line fails `ciso.general`. Both sides also get",
        "hosts whose other catalogue settings are stock (each line left out, the program's default deciding: a stock",
        "RHEL 9 host's `PASS_MAX_DAYS 99999`, no `MaxAuthTries`) or all violating, this control's setting as the",
        "original holds it: a policy judging the setting only where an unrelated one is hardened fails.",
        "An sshd setting is also varied in drop-ins (`dropins`: RHEL 9's sshd_config includes",
        "`/etc/ssh/sshd_config.d/*.conf` at its top and sshd keeps the first value it reads): a gap host whose drop-in",
        "holds the violating value over a compliant main file, a compliant one whose drop-in holds the compliant value",
        "over a violating main file, the keyword in lower case (`HostControl.setting` resolves them so). A policy keyed",
        "on the literal `yes`, on the service being stopped, on the main file alone, or comparing a bound as a bare",
        "number fails `ciso.general`; a right one reads the setting as the program does and compares its value",
        "case-insensitively with the compliant ones, a missing setting being its default.",
        "`opa_kubectl` is offered where the agent's default access can collect the objects: not for RBAC objects",
        "(its role cannot read roles and bindings) nor for the `default` namespace (outside its namespaces).",
        "The Kyverno classes are offered where the control is judged per object: a validate rule sees one object,",
        "so a control on what a namespace holds (`cis-k8s-5.3.2`, its NetworkPolicies) needs the cluster read",
        "through an `apiCall`, which no offline grading evaluates; `compile` refuses the pair (E2010).",
        "",
        "Host controls compile to Ansible play lists: `inject/playbook.yml` sets the violating value,",
        "`revert/playbook.yml` the compliant one. They run on two inventory groups named alike, "
        f"`<hosts>_<token>`: `hosts` defaults to `{DEFAULT_HOSTS}` (ITBench's `inventory_host`; "
        "`control \"ID\" { hosts = \"prefix\" }` names another), the tokens and which group holds the gap "
        "come from a hash of the control and `hosts`, so that neither the names nor their order (the prompt sorts "
        "them) say which hosts break the control. ITBench's export (`input.json`'s `inventory_host`, its goal) names "
        "`hosts` itself: an ITBench run provides that one group, the gap's hosts.",
        f"In `scenario.json`, the gap of a host control is one reference of kind `{HOST_KIND}` (`{HOST_API}`)",
        "naming the group. The Rego policy of an `ansible_opa` task is graded on inputs of one item per host",
        "(`{\"hosts\": [{\"name\", \"files\": {path: {Setting: value}}, \"services\": {unit: service_facts}}]}`, the",
        "shape the prompt states): the gap's hosts hold the control's setting at its violating value, the",
        "baseline's at its compliant one, and both every other catalogue host setting at its compliant value.",
        "", "## ITBench's CISO folders", "",
        "Every CISO bundle's `itbench/` folder holds the files ITBench's CISO harness reads (`info.json`,",
        "`input.json`, `goal.txt`, `manifests/`, `tasks/`, `eval_config.yaml` for `kyverno_update`);",
        "`itbench compile --target itbench` writes them alone, one folder per scenario named by its ITBench id,",
        "and `itbench import` reads such a folder back. The four public ITBench CISO scenarios are ported in",
        "`scenarios/ciso/`; [itbench-ciso.md](itbench-ciso.md) compares them with ITBench's files and lists every",
        "difference.",
        "", f"## {K8S_BENCHMARK}, section 5", "",
        "| id | section | title | classes | violating | compliant | update from |",
        "|---|---|---|---|---|---|---|",
    ]
    for c in K8S_CONTROLS:
        update = ", ".join(f"`{u}`" for u in c.update_from) if any(_updates(t) for t in c.classes) else ""
        lines.append(f"| `{c.id}` | {c.section} | {c.title} | {classes(c)} | {c.violating} | {c.compliant} | {update} |")
    lines += ["", f"## {RHEL9_BENCHMARK}", "",
              "| id | section | title | classes | setting | violating | compliant |", "|---|---|---|---|---|---|---|"]
    for c in HOST_CONTROLS:
        where = f"`{c.key}` in `{c.path}`" if c.path else f"service `{c.key}`"
        lines.append(f"| `{c.id}` | {c.section} | {c.title} | {classes(c)} | {where} | {c.violating} | {c.compliant} |")
    return "\n".join(lines) + "\n"


__all__ = ["CATALOGUE", "K8S_CONTROLS", "HOST_CONTROLS", "K8sControl", "HostControl", "lookup", "goal_text",
           "docs_markdown", "DEFAULT_HOSTS", "HOST_GROUP_TELLING", "host_ref", "host_groups", "host_prefix", "ref"]
