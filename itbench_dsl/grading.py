"""Every check that grades a scenario, with where it comes from, read off the evaluator's spec.

`grading_checks(scenario, source_map)` walks `backends.evaluator.evaluator_spec`, the data the
bundle's evaluator.py grades against, and says for each check of the verdict (by the id the verdict
gives it) what it requires and where that comes from: a `mitigated when` predicate or an `optimal`
statement (with its line), an expected alert, the fault (what it changed, and what undoes it), or
one of the evaluator's own rules (health, safeguards), which no statement of the scenario names.
`itbench explain SCENARIO.itb` prints them, the scenario's docs page has them as a section, and the
lint rule W2012 compares a predicate with the checks the evaluator adds on the same field.
"""

from __future__ import annotations

from dataclasses import dataclass

from . import ir
from .runtime.evaluator import (any_parts, CHECK_WORD, DATAPLANE_LABEL, decided, enrolment_left_out, flag_outcomes,
                                RESERVED_SLACK, unenrolled_namespaces)
from .runtime.state import show_path
from .source import SourceMap

# where a check comes from, as `explain` and the docs page say it
PREDICATE, OPTIMUM, ALERT, FAULT, HEALTH, SAFEGUARD, TRUTH, POLICY = (
    "predicate", "optimum", "expected alert", "fault", "health rule", "safeguard rule", "ground truth", "policy")


@dataclass(frozen=True)
class GradingCheck:
    task: str  # the task whose verdict holds the check
    id: str  # the check's id in the verdict
    origin: str  # PREDICATE, OPTIMUM, ...
    line: int | None  # the line of the statement it comes from, when one does
    requires: str  # what passes it
    on_failure: bool = False  # in the verdict only when it fails (a broken answer's contract, say)


def _ref(ref: dict) -> str:
    from .runtime.state import ref_text

    return ref_text(ref)  # as the verdict's check ids spell it


def _shown(value) -> str:
    import json

    return value if isinstance(value, str) else json.dumps(value, sort_keys=True)


def _line(spans: list, index: int) -> int | None:
    return spans[index].line if 0 <= index < len(spans) and spans[index].line else None


def grading_checks(scenario: ir.Scenario, source_map: SourceMap | None = None, document=None) -> list[GradingCheck]:
    """Every check of every task the scenario's evaluator grades, in the verdict's order per task."""
    from .backends.evaluator import PROXIMITY_THRESHOLD, dotted, evaluator_spec
    from .ir_text import path_text, predicate_text

    spec = evaluator_spec(scenario)
    predicates = source_map.predicates if source_map is not None else []
    injections = source_map.injections if source_map is not None else []
    optimum_lines = _optimum_lines(document)
    out: list[GradingCheck] = []
    for task in spec["tasks"]:
        add = lambda *a: out.append(GradingCheck(task, *a))  # noqa: E731
        if task == "mitigate" and spec.get("finops"):
            band = 1 - PROXIMITY_THRESHOLD
            for i, o in enumerate(spec["finops"]["optimal"]):
                add(f"finops.proximity.{i}", OPTIMUM, optimum_lines[i] if i < len(optimum_lines) else None,
                    f"{_ref(o['object'])} {path_text(o['path'])} within {band:.0%} of {_shown(o['value'])} "
                    f"(proximity >= {PROXIMITY_THRESHOLD}); the task's score is the mean proximity")
        if task == "mitigate" and spec.get("mitigation"):
            m = spec["mitigation"]
            declared = scenario.mitigation.predicates if scenario.mitigation else []
            for i, p in enumerate(declared):
                add(f"mitigation.predicate.{i}", PREDICATE, _line(predicates, i), predicate_text(p))
            for a in m["alerts"]:
                add(f"mitigation.alert.{a['alert']}", ALERT, None,
                    f"alert {a['alert']}, which `expect` lists, neither firing nor pending (the prompt: the incident "
                    "is over when its alerts stop)")
            why = ("every workload of the topology: spend cut by breaking a service is no saving"
                   if spec["domain"] == "finops" else "a workload the faults act on or the ground truth names")
            for ref in m["ready"]:
                add(f"health.ready.{_ref(ref)}", HEALTH, None,
                    f"{_ref(ref)} has finished its rollout and its pods are ready ({why})")
            if m.get("only"):  # `mitigated when only`: the predicates, alerts and readiness, and no harm done
                _application(add)
                _safeguards(add, spec)
                continue
            for entry in m["programs"]:
                add(f"health.program.{_ref(entry['object'])}", HEALTH, None,
                    f"{_ref(entry['object'])} still runs its own containers, images, commands, arguments, environment "
                    "and pod labels")
            for ref in m["services"]:
                add(f"health.service.{_ref(ref)}", HEALTH, None,
                    f"{_ref(ref)}, which a fault acts on, selects ready pods and reaches their ports")
            _application(add)
            seen: set[str] = set()
            for index, fault in enumerate(m["faults"]):
                line = _line(injections, index)
                parts = []
                for entry in fault["fields"]:
                    wants = []
                    for change in entry["changes"]:
                        path = dotted(change["path"])
                        if change.get("governed_by"):
                            wants.append(f"{path}: decided by {change['governed_by']}")
                        elif change.get("accept"):
                            accept = change["accept"]
                            value = _shown(change.get("healthy")) if accept["value"] == "healthy" else \
                                _shown(accept["value"])
                            wants.append(f"{path} {accept['op']} {value}" if accept["op"] not in ("any", "present",
                                                                                               "changed")
                                         else f"{path}: {accept['op']} (the fault accepts other fixes)")
                        elif change.get("compare") == "flagd":
                            values = flag_outcomes(change.get("healthy")) or []
                            wants.append(f"flagd flag {path} evaluates to {' or '.join(_shown(v) for v in values)} "
                                         "as its healthy form does, whatever its variants are called")
                        elif change.get("absent"):
                            wants.append(f"{path} gone (the fault added it)")
                        else:
                            wants.append(f"{path} == {_shown(change['healthy'])} (its healthy value)")
                    if fault["undone_by"] == "any" and len(any_parts(fault)) + len(fault["created"]) > 1:
                        # each change is a part, as the evaluator reads it (runtime/evaluator.py, mitigation_checks)
                        counted = [id(c) for e, c in any_parts(fault) if e is entry]
                        parts += [(f"fields.{_ref(entry['object'])}.{show_path(c['path'])}", w)
                                  for c, w in zip(entry["changes"], wants) if id(c) in counted]
                    elif not decided(entry) and enrolment_left_out(entry)["changes"]:
                        # else the deciding statement is its check (listed above); a namespace's ambient enrolment
                        # label is its `enrolled` check
                        kept = enrolment_left_out(entry)["changes"]
                        parts.append((f"fields.{_ref(entry['object'])}", "; ".join(
                            w for c, w in zip(entry["changes"], wants) if any(c is k for k in kept))))
                if fault.get("option"):  # its harm is an option of the program (runtime/evaluator.py, option_parts)
                    o = fault["option"]
                    parts = [(i, f"{w}; or, whatever its changes to container {o['container'] or 'any'} hold, the "
                              f"program gets no {o['option']}, or an empty one" if i.startswith(
                                  f"fields.{_ref(o['object'])}") else w) for i, w in parts]
                for ref in fault["created"]:
                    parts.append((f"created.{_ref(ref)}", f"{_ref(ref)}, which the fault created, gone or without its effect, "
                                  "and no object of its kind doing what it did under another name"))
                for ref in unenrolled_namespaces(fault):
                    parts.append((f"enrolled.{_ref(ref)}", f"every pod of namespace {ref['name']} back in the Istio "
                                  f"ambient mesh: every pod and workload's pod template enrolled, by the namespace's "
                                  f"label {DATAPLANE_LABEL}=ambient or by its own, and none labelled "
                                  f"{DATAPLANE_LABEL}=none (the pod's label wins over the namespace's)"))
                if fault["undone_by"] == "any" and len(parts) > 1:
                    add(f"fault.{index}.{fault['fault']}", FAULT, line,
                        f"`{fault['fault']}` undone through any one of: " + "; ".join(f"{i}: {w}" for i, w in parts))
                else:
                    for check_id, wants in parts:
                        if check_id in seen:  # an object two faults touch is checked once, as the first says
                            continue
                        seen.add(check_id)
                        add(check_id, FAULT, line, f"`{fault['fault']}` undone: {wants}")
            for entry in m["restored"]:
                add(f"restored.{_ref(entry['object'])}", FAULT, None,
                    f"{_ref(entry['object'])}, which a fault deleted, back with the fields it had")
            _safeguards(add, spec)
            for entry in m.get("unchanged", []):
                add(f"unchanged.{_ref(entry['object'])}", HEALTH, None,
                    f"{_ref(entry['object'])} as the topology deploys it (a control: nothing to fix)")
            if spec.get("finops") and "spend" in spec["finops"]:
                add("finops.spend", HEALTH, None,
                    "every workload of the topology costs within the threshold of its healthy spend (replica floor "
                    "times each container's request), above or below: spend cut where the fault made it, never "
                    "moved elsewhere")
                add("finops.reserved", HEALTH, None,
                    "the CPU and memory the application reserves (the topology's workloads and any copy of "
                    "them, at their replica floor, and the other pods their selectors select) at most "
                    f"{RESERVED_SLACK:.0%} above the healthy figure: a saving is not moved to a copy, nor into "
                    "raised requests")
        if task == "diagnose" and spec.get("diagnosis"):
            d = spec["diagnosis"]
            roots = [g["component"] for g in d["groups"] if g["root_cause"]]
            add("diagnosis.root_cause", TRUTH, None, "the root cause named exactly: " + ", ".join(roots))
            from .runtime.evaluator import CHAIN_PASS, Diagnosis
            from .runtime.state import EMPTY_STATE, State

            # the chain as the evaluator grades it: nodes joined by alias and component, edges a root cause reaches
            graded = Diagnosis(spec, State(EMPTY_STATE)).graded_chain()
            if graded is not None:  # a chain between components: graded (else nothing to grade)
                count = len(graded[0])  # the contracted chain's edges the evaluator grades, not the raw edges
                add("diagnosis.propagation", TRUTH, None,
                    f"the propagation chain ({count} edge(s) graded, of the {len(d['propagations'])} the ground "
                    f"truth lists, joined by alias and component) followed in its "
                    f"direction: at least {CHAIN_PASS:g} of the edges a root cause reaches given (where it reaches "
                    f"none, the chain from its entries), and more than {CHAIN_PASS:g} of the edges given right (an "
                    f"edge bridging a gap of the truth's chain counts neither way)")
        if task == "diagnose" and spec.get("finops"):
            if any(spec["finops"].get("accept") or []) and spec["finops"]["findings"]:
                add("finops.type", TRUTH, None, "each found object's `type` is the kind of waste it is: one value of "
                    "the closed vocabulary (" + ", ".join(sorted(set(spec["finops"]["types"].values()))) + ")")
            names = sorted({_ref(r) for group in spec["finops"]["findings"] for r in group})
            add("finops.resource", TRUTH, None, "the wasteful objects named, each fault's: " + ", ".join(names))
        if task == "policy" and spec.get("ciso"):
            c = spec["ciso"]
            if any((g.get("metadata") or {}).get("name") for g in c["gaps"]):
                add("ciso.general", POLICY, None, "renamed copies of the gap objects fail the policy too (judged when "
                    "the policy runs offline: a Kyverno artefact, Rego with OPA or regopy, or a Kyverno policy graded "
                    "from PolicyReports, read back from the state; where it cannot be judged, a recorded `opa eval` result "
                    "or a Kyverno policy missing from the state, it fails as unchecked; a Rego policy graded from "
                    "PolicyReports: not graded)")
            if (c.get("contract") or {}).get("artefact") == "kyverno":
                add("ciso.contract", POLICY, None, "the Kyverno policy keeps the prompt's contract (kind, name, "
                    "audit, background); a broken contract scores 0")
                add("ciso.verdicts", POLICY, None, "the embedded matcher evaluates the Kyverno artefact offline (a "
                    "construct it lacks, or a regular expression beyond its bounds, fails as unchecked)", True)
            # Rego: on every input of the prompt's shape that holds the object (runtime rego_inputs)
            rego = " (Rego: on every input that holds it)" if (c.get("contract") or {}).get("artefact") == "rego" else ""
            for obj in c["gaps"]:
                add(f"ciso.gap.{_ref(_manifest_ref(obj))}", POLICY, None,
                    f"the policy reports {_ref(_manifest_ref(obj))}, which breaks control {c['control']}{rego}")
            for obj in c["compliant"]:
                add(f"ciso.compliant.{_ref(_manifest_ref(obj))}", POLICY, None,
                    f"the policy passes {_ref(_manifest_ref(obj))}, which complies{rego}")
            for obj in c.get("system", []):
                add(f"ciso.compliant.{_ref(_manifest_ref(obj))}", POLICY, None,
                    f"the policy passes {_ref(_manifest_ref(obj))}, which Kubernetes itself keeps in its namespace")
            if c.get("kept"):
                add("ciso.kept", POLICY, None, f"the updated policy still flags the {len(c['kept'])} violation(s) "
                    "the policy to update flagged (a rule kept by name must keep what it checks)")
            if c.get("others"):
                add("ciso.others", POLICY, None, f"the {len(c['others'])} other existing polic(ies) left unchanged")
        if task in CHECK_WORD:
            add(f"{CHECK_WORD[task]}.answer", TRUTH, None, "the answer file is written, readable and keeps the task's "
                "contract (docs/evaluator.md); a missing or broken answer fails the task", True)
        if task == "detect":
            add("detection.anomaly", TRUTH, None, "the right answer to whether an anomaly happened")
            if spec["detection"]["fault"]:  # a control's right answer is `false`, whatever its time
                add("detection.noticed_at", TRUTH, None, "noticed within the detection window")
        if task == "localize":
            add("localization.root_cause", TRUTH, None, "the root causes named exactly")
        if task == "analyze":
            add("analysis.system_level", TRUTH, None, "the system level label")
            add("analysis.fault_type", TRUTH, None, "the fault type label")
    return out


def _application(add) -> None:
    add("health.application", HEALTH, None,
        "the whole application serves: every other workload of the topology ready, every other Service "
        "selecting ready pods and leading its ports where they led (a fix that breaks another part fails)")


def _safeguards(add, spec: dict) -> None:
    minimum = sorted({w["min_replicas"] for w in spec["workloads"]})
    kept = (spec.get("mitigation") or {}).get("collateral") or {}
    more = "".join(text for key, text in (
        ("autoscalers", ", every autoscaler with its target and at least its replica bounds"),
        ("flags", ", every other flagd flag evaluating as when healthy"),
        ("grants", ", no subject granted more than when healthy"),
        ("unread", ", every ConfigMap, Secret and ServiceAccount nothing reads kept as deployed")) if kept.get(key))
    add("safeguards", SAFEGUARD, None,
        f"every workload of the topology scaled to at least {'/'.join(map(str, minimum)) or 1} replica(s) "
        f"as deployed, every service with its selector{more}, nothing taken out of service")


def _manifest_ref(obj: dict) -> dict:
    meta = obj.get("metadata") or {}
    return {"kind": obj.get("kind"), "namespace": meta.get("namespace"), "name": meta.get("name")}


def _optimum_lines(document) -> list[int | None]:
    """The line of each `optimal` statement of the document, in order (the IR's `optimal` order)."""
    from . import ast

    if document is None:
        return []
    expect = [s for s in document.statements if isinstance(s, ast.Expect)]
    return [s.span.line or None for e in expect for s in e.statements if isinstance(s, ast.Optimal)]


def text(scenario: ir.Scenario, checks: list[GradingCheck], path: str | None = None) -> str:
    """The checks as `itbench explain SCENARIO` prints them, task by task."""
    lines = [f"{scenario.name}: {len(checks)} check{'s' * (len(checks) != 1)} grade this scenario "
             "(its evaluator's spec; docs/evaluator.md defines them)"]
    for task in dict.fromkeys(c.task for c in checks):
        lines += ["", task]
        for c in (c for c in checks if c.task == task):
            where = f"{c.origin}" + (f", {path or 'line'}:{c.line}" if c.line else "") + (
                ", only when it fails" if c.on_failure else "")
            lines.append(f"  {c.id}  [{where}]")
            lines.append(f"      {c.requires}")
    return "\n".join(lines) + "\n"
