"""The registry of diagnostic codes. A code never changes meaning; each has one page.

Families: E1xxx syntax, E2xxx names, types, units and scenario semantics, E3xxx validity
of generated Kubernetes and CRD objects, E4xxx code-generation contracts, W lint.
`itbench explain CODE` prints the page.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Code:
    code: str
    title: str
    page: str

    @property
    def severity(self) -> str:
        return "warning" if self.code.startswith("W") else "error"


def _c(code: str, title: str, page: str) -> tuple[str, Code]:
    return code, Code(code, title, page.strip("\n"))


CODES: dict[str, Code] = dict(
    [
        _c("E1001", "empty file", """
The file contains no `scenario` or `app` block. Every `.itb` file holds exactly one.

    scenario "checkout-bad-image" {
      domain sre
      ...
    }
"""),
        _c("E1002", "syntax error", """
The parser met a token it did not expect here. The message lists what may come at this
place. Common causes: a missing `=` in `key = value`, a missing comma between list items,
a keyword used where a name is expected, or a missing closing brace earlier in the file.

    deployment "web" { replicas 2 }      # wrong
    deployment "web" { replicas = 2 }    # right
"""),
        _c("E1003", "unterminated string", """
A string opened with `"` is not closed on the same line. Strings cannot span lines:
write a newline as `\\n`.

    description "Checkout fails     # wrong
    description "Checkout fails"    # right
"""),
        _c("E1004", "unexpected end of file", """
The file ended inside a block: a `{` or `[` is not closed. The diagnostic points at the
opening bracket that is still open.
"""),
        _c("E1005", "invalid character", """
The character cannot start any token of the language. Names are ASCII letters, digits and
underscores; other text belongs in double-quoted strings.
"""),
        _c("E1006", "invalid escape in string", """
Strings accept the escapes `\\"`, `\\\\`, `\\n`, `\\t`, `\\r` and `\\uXXXX` (four hex digits).
Any other backslash sequence is an error, so that no text means something unintended.
"""),
        _c("E1007", "nesting too deep", """
Blocks, lists and maps nest at most 64 levels. Deeper nesting is never needed by a scenario
and is refused before parsing, so that no input can exhaust the compiler.
"""),
        _c("E1008", "file too large", """
A scenario file is at most 1 MiB. Larger inputs are refused before parsing. Split data into
an application topology (`app`) or keep large payloads out of the scenario.
"""),
        _c("E1009", "file is not UTF-8 text", """
The file contains bytes that are not valid UTF-8, or NUL bytes: it is not a text file.
Save it as UTF-8.
"""),
        _c("E1010", "more than one top-level block", """
A file holds exactly one `scenario` or one `app`. Put each scenario in its own file.
"""),
        _c("E2001", "unknown application", """
`use app "NAME"` names an application topology that the standard library does not ship.
The message lists the known ones; `itbench apps` prints them too.
"""),
        _c("E2002", "duplicate name", """
Two objects of the same kind in the same namespace have the same name, or a statement that
may appear once (such as `domain`) appears twice. The note points at the first one.
"""),
        _c("E2003", "unknown name", """
A reference names an object that the topology does not declare. References are
`kind "name"` (for example `deployment "cart"`) and resolve within the topology the scenario
declares inline or imports with `use app`. The help suggests a similar name when one exists.

    fault nonexistent_image on deployment "cartt" { ... }
"""),
        _c("E2004", "wrong kind of target", """
The fault or statement needs a target of another kind. For example `scaled_to_zero` acts on
a deployment or statefulset, and `modified_target_port` on a service.
"""),
        _c("E2005", "unknown fault or waiter kind", """
`fault KIND on ...` names a fault the library does not have (or `wait ... KIND` a waiter).
`itbench explain faults` lists them.
"""),
        _c("E2006", "unknown field", """
The block does not accept this field. The help suggests the closest accepted field.
"""),
        _c("E2007", "missing required field", """
A field that this block or fault requires is missing.
"""),
        _c("E2008", "wrong type", """
The value has the wrong type for this field: for example a string where an integer is
expected, or a list where a single value is expected.
"""),
        _c("E2009", "wrong unit", """
The value's unit does not fit the field. Units are decided by the field, not by the
lexer: `250m` is a quarter of a CPU in a `cpu` field, and `5m` is five minutes in a
duration field. Durations take `ms`, `s`, `m`, `h` (and combinations like `1h30m`);
memory takes `Ki`, `Mi`, `Gi`, `Ti` (or `k`, `M`, `G`, `T`); CPU takes `m` or a plain
number.

    resources { requests { memory = 5m } }   # wrong: 5m is milli-units, not memory
    within 250Mi                             # wrong: a duration was expected
"""),
        _c("E2010", "invalid value", """
The value is not one of those this field accepts (for example `domain` must be `sre`,
`ciso` or `finops`; `complexity` must be `low`, `medium` or `high`), or it is out of its
range (a port must be 1 to 65535, replicas cannot be negative).
"""),
        _c("E2011", "fault precondition not met", """
The fault would deploy but do nothing, or fail on a live cluster, because the topology does
not have what it acts on. ITBench finds these only on a cluster; the compiler finds them here.
The common preconditions have codes of their own (E2020 to E2028); E2011 covers the others.
"""),
        _c("E2012", "propagation does not follow the topology", """
A propagation edge `a -> b` must follow the application's structure: an edge of the
topology between the components of `a` and `b` (in either direction, since errors flow back
to callers), the same component (deployment -> pod -> service of one workload), or an object
the fault creates.
"""),
        _c("E2013", "missing required statement", """
A scenario needs `domain`, `complexity` and `description`, a topology (`use app` or
`topology { ... }`), and what its domain requires: SRE and FinOps scenarios need at least
one fault, CISO scenarios a `control`, a `task` and at least one `gap` object.
"""),
        _c("E2014", "invalid name", """
Kubernetes names must be DNS-1123 labels (lower-case letters, digits and `-`, at most 63
characters, starting and ending with a letter or digit). Scenario names follow the same rule
because they name the bundle folder and the ITBench scenario.
"""),
        _c("E2015", "unknown object kind", """
The topology declares an object of a kind the language does not know. Known kinds:
namespace, deployment, statefulset, service, configmap, secret, serviceaccount, hpa.
"""),
        _c("E2016", "namespace not resolved", """
The object's namespace is not declared, or the topology declares several namespaces and the
object does not say which one it belongs to (`namespace = "..."`).
"""),
        _c("E2017", "unknown alert", """
The alert is not one the benchmark's monitoring stack defines. Known alerts are those of
ITBench's fault library (HighRequestErrorRate, HighRequestLatency, KubePodNotReady, ...).
"""),
        _c("E2020", "no such container", """
The fault names a container the workload does not have. The help lists the workload's containers.
A workload with several containers needs `container = "..."` to say which one the fault acts on.
"""),
        _c("E2021", "no such environment variable", """
The fault modifies an environment variable that the container does not set. A fault that edits
a variable needs the variable to exist: on a cluster the injection would add it, which is another
fault. To add a variable, change the topology.
"""),
        _c("E2022", "no such port", """
The fault names a port the object does not have (a service port by name, a container port by
number or name).
"""),
        _c("E2023", "no such autoscaler", """
The fault acts on a workload's HorizontalPodAutoscaler, and the topology declares none for it.
Declare one: `hpa "NAME" { workload = "NAME"  min = 1  max = 5  cpu = 80% }`.
"""),
        _c("E2024", "a required waiter is missing", """
The fault only takes effect after a waiter runs: a feature flag, for instance, is read when the
workload restarts, so ITBench restarts flagd (and the service that reads the flag) after changing
ConfigMap flagd-config. Put the fault in a group with the waiter:
`group "name" { fault ...  wait after restart on deployment "flagd" }`.
"""),
        _c("E2025", "no service mesh", """
The fault acts on an Istio service mesh (mutual TLS, an authorization policy, ambient mode), and
the application does not run in one. Use an application whose metadata declares `service_mesh`,
such as `book-info`.
"""),
        _c("E2026", "the selector matches no pod", """
A Chaos Mesh or other label selector would select no pod of the topology, so the fault would
do nothing. Use labels of the target workload's pod template (its `labels` block).
"""),
        _c("E2027", "the fault would change nothing", """
The fault's arguments equal what the topology already has (the same image, the same value,
zero replicas already, the same target port ...): it would deploy and change nothing.
"""),
        _c("E2028", "the resource is not requested", """
Utilisation of CPU or memory is measured against the containers' requests (a limit alone sets the
request). A fault or autoscaler on a resource the containers do not request has no effect.
Add `resources { requests { cpu = ... } }` or act on a resource that is requested.
"""),
        _c("E3001", "generated object is not valid", """
An object the compiler generated does not validate against the vendored schema of its kind
(Kubernetes v1.33, Chaos Mesh v1alpha1). The message gives the JSON path inside the object.
Usually a value written in the scenario reaches a field that rejects it.
"""),
        _c("E3002", "generated object breaks a Kubernetes rule", """
An object the compiler generated breaks a rule the schemas do not encode: a workload's
selector does not match its pod template labels, a name or label is not valid, a port is
out of range.
"""),
        _c("E3003", "generated object has an unknown kind", """
The compiler emitted an object whose apiVersion and kind have no vendored schema. This is
a compiler defect; please report it.
"""),
        _c("E4001", "template could not be rendered", """
A prompt or documentation template referred to a value the scenario does not provide.
Templates render with StrictUndefined, so a missing value is an error, never an empty string.
"""),
        _c("E4002", "output path leaves the output folder", """
A generated file name would resolve outside the bundle folder. Names come from the
scenario; the compiler refuses rather than write anywhere else.
"""),
        _c("E4003", "the prompt leaks the answer", """
The agent's prompt names what the agent is asked to find: the fault mechanism (the fault kind,
its ITBench id, its words such as "nonexistent image", "scaled to zero", "Chaos Mesh"), a
root-cause object or an object the fault acts on (with its kind, `Deployment/checkout`,
"the checkout deployment", or by its bare name when the name is distinctive), or a CISO gap
object. A benchmark whose prompt gives the answer measures nothing. The message says which
word leaked, what it gives away and the template line it came from.

Fix it where the word comes from:
- a template (`itbench_dsl/templates/prompt/`): reword the line, or drop the value it prints;
- scenario text a template prints (a CISO `goal`, say): describe the control, not the objects
  that break it, and leave the fault's words out;
- a name: a distinctive object name that states the fault (`checkout-broken-image`) leaks
  wherever it is printed; rename the object.

Namespaces, the application, and what the hint level gives (`--hints topology`: every component
and its calls; `--hints localized`: where the symptoms are, never the root cause) may appear.
A CISO scenario that hands its objects to the agent on purpose says so in its control:

    control "cis-k8s-5.2.5" { given = true }   # the prompt lists the gap and compliant objects
"""),
        _c("E4004", "the evaluator cannot tell the faulty state from the healthy one", """
`itbench check` derives three cluster states from what the scenario compiles to (healthy: the
topology running; faulty: after `inject/`; solved: after `revert/`) and runs the scenario's
evaluator on each with no agent answer. The verdict must fail on the faulty state and pass on the
healthy and solved ones; otherwise the benchmark would score a broken cluster as mitigated, or a
repaired one as broken. The message says which state got the wrong verdict and the checks that
decided it. A CISO scenario grades the agent's policy, not the cluster: there the policy reports
of a perfect policy (the gap objects fail, the compliant ones pass) must pass, and no report or an
always-fail policy must not.

Usual causes: the `mitigated when` block only names alerts the fault does not raise, or objects
the fault does not change; add a predicate the fault breaks (`deployment "x" ready`, `schedule "x"
absent`, `alert HighRequestErrorRate not firing` with the alert in `expect`).
"""),
        _c("E4005", "the perfect diagnosis does not score 1", """
`itbench check` submits the ground truth itself as the agent's diagnosis (the root causes as
entities `namespace/Kind/name`, the propagation edges) on the faulty state: it must score 1, and
an empty diagnosis must score 0. Otherwise the root causes or propagations of `expect` do not
match the ground-truth groups the evaluator scores with (a pod pattern that matches no pod, a
root cause outside the topology graph), and no agent could reach a full score.
"""),
        _c("W2001", "scenario duplicates another", """
Two of the checked scenarios inject the same fault mechanism on the same target (the same
container, variable, port or autoscaler): they measure the same thing, whatever values they use.
Contributors proposed many duplicate "new" faults and scenarios to ITBench; this catches them.
Change the target or the mechanism, or drop one of the two. `itbench check` reports it when it
checks several files; it is a warning, so it does not change the exit code.

    fault modified_env on deployment "cart" { name = "REDIS_ADDR"  value = "x:1" }   # a.itb
    fault modified_env on deployment "cart" { name = "REDIS_ADDR"  value = "y:2" }   # b.itb: W2001
"""),
    ]
)


def severity_of(code: str) -> str:
    return "warning" if code.startswith("W") else "error"


def explain(code: str) -> str | None:
    entry = CODES.get(code.upper())
    if entry is None:
        return None
    return f"{entry.code}: {entry.title}\n\n{entry.page}\n"
