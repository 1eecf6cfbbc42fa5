"""The CISO checks of a scenario: its control, task class, gap and compliant objects.

Called by the checker (checker.Checker.compliance) with the checker itself, whose topology the
objects resolve against and whose context takes the diagnostics; the catalogue is this package's
`__init__` (k8s.py, rhel9.py), the task classes `tasks.py`.
"""

from __future__ import annotations

from .. import ast, ir
from ..diagnostics import did_you_mean
from ..reader import Body
from ..topology import KINDS
from .tasks import CISO_TASKS, TASK_CLASSES
from . import (DEFAULT_HOSTS, HostControl, K8sControl, host_groups, goal_text, host_ref, is_group_name,
               looks_like_catalogue_id, lookup, policy_name, ref, suggest, task_policies)


def compliance(self, single: dict, domain: str | None) -> ir.Compliance | None:
    """The scenario's compliance: the control (from the catalogue, or declared), the task class, the gap and
    compliant objects; every error located. `self` is the checker, whose names the objects resolve against."""
    gaps = [s for s in self.doc.statements if isinstance(s, ast.Gap)]
    compliant = [s for s in self.doc.statements if isinstance(s, ast.Compliant)]
    control, task = single.get(ast.Control), single.get(ast.Task)
    if domain != "ciso":
        for stmt in [*gaps, *compliant, *(s for s in (control, task) if s)]:
            self.error("E2013", f"`{ast.keyword(stmt)}` belongs to CISO scenarios (domain ciso)", stmt.span)
        return None
    entry = lookup(control.id) if control is not None else None
    unknown = control is not None and entry is None and not gaps and looks_like_catalogue_id(control.id)
    if unknown:
        hint = suggest(control.id)
        self.error("E2010", f"`{control.id}` is not a control of the catalogue", control.span, "unknown control",
                   help=f"did you mean `{hint}`?" if hint else
                   "see docs/ciso.md for the catalogue, or declare the `gap` objects yourself")
    if control is None or task is None or (not gaps and entry is None and not unknown):
        missing = [w for w, s in (("control", control), ("task", task),
                                  ("gap", gaps or entry is not None or unknown)) if not s]
        self.error("E2013", f"a CISO scenario needs {', '.join(f'`{m}`' for m in missing)}", self.doc.name_span,
                   "incomplete CISO scenario", help="declare the control, the task class and the gap objects")
        return None
    if unknown:
        return None
    body = Body(self.ctx, control.entries, f"control `{control.id}`", control.span)
    goal = body.attr("goal", "str", required=entry is None)
    benchmark = body.attr("benchmark", "str", default=entry.benchmark if entry else "CIS Kubernetes Benchmark")
    hosts = body.attr("hosts", "str", default=DEFAULT_HOSTS) if isinstance(entry, HostControl) else None
    if hosts is not None and not is_group_name(hosts):
        self.error("E2010", f"`{hosts}` is not an Ansible inventory group name", body.attr_span("hosts"),
                   "invalid group name", help="use letters, digits and `_`, e.g. `rhel9_servers`")
        hosts = None
    given = body.attr("given", "bool", default=False)  # the prompt may name the gap objects (leakage lint)
    reads = body.attr("reads", "str_list", default=None)  # the fields the control reads (minimal pairs)
    body.finish()
    if reads is None:
        reads = list(entry.reads) if isinstance(entry, K8sControl) else []
    if task.kind not in CISO_TASKS:
        hint = did_you_mean(task.kind, CISO_TASKS)
        self.error("E2010", f"`{task.kind}` is not a CISO task class", task.span,
                   help=f"did you mean `{hint}`?" if hint else "classes: " + ", ".join(CISO_TASKS))
    elif entry is not None and task.kind not in entry.classes:
        self.error("E2010", f"control `{entry.id}` does not suit the task class `{task.kind}`", task.span,
                   "unsuitable task class", help=f"`{entry.id}` suits " + ", ".join(f"`{c}`" for c in entry.classes)
                   + " (docs/ciso.md lists the classes of every control)")
    policies, update = task_policies(self.ctx, task, self.locations)  # kyverno_update's existing policies
    if entry is not None and not gaps and not compliant:
        if hosts is None and isinstance(entry, HostControl):
            return None
        found = catalogue_compliance(self, entry, control, task, goal, benchmark, hosts)
        if found is not None:
            found.given, found.policies, found.update, found.reads = given, policies, update, list(reads)
        return found
    if isinstance(entry, K8sControl) and compliant and not gaps:
        self.error("E2013", f"`compliant` objects but no `gap` for catalogue control `{entry.id}`",
                   compliant[0].span, "no gap declared",
                   help="declare the `gap` objects too, or neither: the catalogue then provides both")
        return None
    if isinstance(entry, HostControl):
        self.error("E2010", f"host control `{entry.id}` takes no `gap` or `compliant` objects",
                   (gaps or compliant)[0].span, "a Kubernetes object",
                   help="remove the statement: the control's Ansible plays open and close the gap")
        return None
    gap_resolved = [(g, self.resolve(g.target, None, "gap")) for g in gaps]
    gap_refs = [r.ref for _, r in gap_resolved if r]
    for stmt, resolved in gap_resolved:
        if resolved is not None and kyverno_filtered(self, task, resolved.ref.namespace, stmt.span):
            break
    ok_resolved = [(c, self.resolve(c.target, None, "compliant object")) for c in compliant]
    ok_refs = [r.ref for _, r in ok_resolved if r]
    for stmt, resolved in ok_resolved:
        if resolved is not None and resolved.ref in gap_refs:
            ref = resolved.ref
            self.error("E2010", f"{ref.kind} `{ref.name}` cannot be both a gap and compliant", stmt.span,
                       "also a gap", help="remove the `gap` or the `compliant` statement")
    if goal is None and entry is not None:
        goal = goal_text(entry, task.kind, None)
    return ir.Compliance(control.id, benchmark, goal or "", task.kind, gap_refs, ok_refs, given, policies, update,
                         list(reads))

# the namespaces Kyverno's default configuration leaves alone (its Helm chart's `config.resourceFilters`:
# `[*/*,kube-system,*]`, `[*/*,kube-public,*]`, `[*/*,kube-node-lease,*]` and the namespace Kyverno runs in,
# `kyverno`): no admission review, no background scan, so no PolicyReport ever names an object there
KYVERNO_FILTERED_NAMESPACES = ("kube-system", "kube-public", "kube-node-lease", "kyverno")


def kyverno_filtered(self, task: ast.Task, namespace: str | None, span) -> bool:
    """Report (E2057) a Kyverno task whose graded objects live in a namespace Kyverno filters by default: the run
    is graded from PolicyReports Kyverno never writes there, so no policy can pass it."""
    cls = TASK_CLASSES.get(task.kind)
    if cls is None or cls.artefact != "kyverno" or namespace not in KYVERNO_FILTERED_NAMESPACES:
        return False
    self.error("E2057", f"Kyverno never reports on namespace `{namespace}`: its default resourceFilters exclude it",
               span, "no PolicyReport can name these objects",
               help="put the objects in a namespace of their own (`namespace \"ciso-target\"`); Kyverno's default "
               "configuration skips " + ", ".join(f"`{n}`" for n in KYVERNO_FILTERED_NAMESPACES))
    return True


def catalogue_compliance(self, entry, control: ast.Control, task: ast.Task, goal: str | None, benchmark: str,
                         hosts: str | None) -> ir.Compliance | None:
    """A catalogue control with no `gap`/`compliant` statements: the catalogue's objects are the gap."""
    if isinstance(entry, HostControl):
        return ir.Compliance(control.id, benchmark, goal or goal_text(entry, task.kind, None), task.kind,
                             *([host_ref(g)] for g in host_groups(hosts, entry.id)))
    namespaces = [n.name for n in self.state.build.namespaces]
    if len(namespaces) != 1:
        if not self.state.incomplete:
            self.error("E2010", f"catalogue control `{entry.id}` needs exactly one namespace in the topology, "
                       f"found {len(namespaces)}", control.span, "where would its objects go?",
                       help='declare one namespace (`topology { namespace "ciso-target" }`), or declare the '
                       "`gap` and `compliant` objects yourself")
        return None
    namespace = namespaces[0]
    if kyverno_filtered(self, task, namespace, control.span):
        return None
    gap_objects, ok_objects = entry.objects(namespace, True), entry.objects(namespace, False)
    declared = {(KINDS[k][1], ns or None, n) for (k, ns, n) in self.state.build.declared}
    for obj in gap_objects + ok_objects:
        key = (obj["kind"], obj["metadata"].get("namespace"), obj["metadata"]["name"])
        if key in declared:
            self.error("E2010", f"{key[0]} `{key[2]}` of catalogue control `{entry.id}` is also declared in the "
                       "topology", control.span, "name clash", help="rename the topology object")
            return None
        self.locations[key] = (self.ctx.path, control.span)
    if task.kind in TASK_CLASSES and TASK_CLASSES[task.kind].updates:
        self.locations[("ClusterPolicy", None, policy_name(namespace))] = (self.ctx.path, task.span)
    return ir.Compliance(control.id, benchmark, goal or goal_text(entry, task.kind, namespace), task.kind,
                         [ref(o) for o in gap_objects], [ref(o) for o in ok_objects])
