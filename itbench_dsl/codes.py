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
a keyword used where a name is expected, or a missing closing brace earlier in the file. A
trailing `,` that ends a list (`tasks detect, localize,`) is reported at the comma, and so is a
`,` between the entries of a block, which take none.

After a syntax error the parse resumes at the next statement (the statement in error is left
out), so one run reports every syntax error of the file and the errors of the statements that
parsed; an error that may only follow from the statement left out (one naming what it declared)
is not reported.

    deployment "web" { replicas 2 }      # wrong
    deployment "web" { replicas = 2 }    # right
"""),
        _c("E1003", "unterminated string", """
A string opened with `"` is not closed on the same line. Strings cannot span lines:
write a newline as `\\n`.

    description "Checkout fails     # wrong
    description "Checkout fails"    # right
"""),
        _c("E1004", "unclosed block", """
A `{` or `[` is not closed. When the indentation shows where the block ends (a later line starts
no further right than the line that opened it, or a `}` less indented than its opener closes it),
the diagnostic points at that place, `} missing here`, with a note at the opening bracket; the
parse then goes on as if it were there. Otherwise the file ended inside the block, and the
diagnostic points at the opening bracket that is still open.

    mitigated when {
      deployment "cart" ready
                             # <- `}` missing here
    alias deployment "cart"
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

Across files: two scenarios that one `itbench check` or `itbench compile` reads have the same name
(with `--target itbench`, the same ITBench folder). A bundle's folder is its scenario's name, so the
second would overwrite the first: `compile` writes the first and not the second.
"""),
        _c("E2003", "unknown name", """
A reference names an object that the topology does not declare. References are
`kind "name"` (for example `deployment "cart"`) and resolve within the topology the scenario
declares inline or imports with `use app`. The help suggests a similar name when one exists.

    fault nonexistent_image on deployment "cartt" { ... }
"""),
        _c("E2004", "wrong kind of target", """
The fault or statement needs a target of another kind. For example `scaled_to_zero` acts on
a deployment or statefulset, and `modified_target_port` on a service. In `mitigated when`,
`ready` tests workloads, pods and ingresses only (an ingress is ready when a controller of its
class would route each of its backends to ready pods): a ConfigMap or a Service is never ready,
so check the field the fault changes instead (`configmap "x" data["k"] == "v"`). A Job or a
CronJob runs to completion: `complete` tests it (and only it), `ready` does not.
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
the fault creates. Where two components meet only through others (a producer and a consumer of
one message broker, say), the edge says so with `indirect = true`; a chain of dependencies must
still join them.

    propagation service "checkout" -> service "accounting" {
      indirect = true     # checkout -> kafka <- accounting
    }
"""),
        _c("E2013", "missing required statement", """
A scenario needs `domain`, `complexity` and `description`, a topology (`use app` or
`topology { ... }`), and what its domain requires: SRE and FinOps scenarios need at least
one fault, CISO scenarios a `control`, a `task` and at least one `gap` object.
"""),
        _c("E2014", "invalid name", """
The topology's names are DNS-1123 labels (lower-case letters, digits and `-`, at most 63
characters, starting and ending with a letter or digit): what Kubernetes asks of a namespace, a
container, a volume (and, starting with a letter, of a Service), and the stricter form of the
DNS-1123 subdomain most other kinds take (kubernetes pkg/apis/core/validation, v1.33). A Chaos
Mesh experiment's name is a subdomain (dots allowed, at most 253 characters); a Schedule's is at
most 63, as Chaos Mesh writes it as a label value on each experiment it creates. Scenario names
follow the label rule because they name the bundle folder and the ITBench scenario.
"""),
        _c("E2015", "unknown object kind", """
The topology declares an object of a kind the language does not know. The error's help lists
the kinds it knows (namespaces, workloads, services, configuration, storage, RBAC and the
autoscaler); docs/language.md describes each.
"""),
        _c("E2016", "namespace not resolved", """
The object's namespace is not declared, or the topology declares several namespaces and the
object does not say which one it belongs to (`namespace = "..."`).
"""),
        _c("E2017", "unknown alert", """
The alert is in no alert catalogue: neither the standard one (the alerts of ITBench's monitoring
stack, each with its Prometheus rule: HighRequestErrorRate, HighRequestLatency, KubePodNotReady, ...)
nor the scenario's own `alert_rule "NAME" { expr = "..." }` declarations.
"""),
        _c("E2018", "alert rule redefines a standard alert", """
An `alert_rule` declares a name the standard alert catalogue already defines. Give the rule a
name of its own, or expect the standard alert without declaring it: a bundle holds one rule set
per alert name.
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
        _c("E2029", "the cluster provides this object", """
The object can only exist because the cluster runs it: a static pod (etcd, the API server) is
started by the kubelet from a manifest on the node, so no scenario can deploy one. Declare it in
a namespace the cluster provides, `namespace "kube-system" { provided = true }`: what is declared
there can be a fault's target and is present in the derived states, but is never deployed.
"""),
        _c("E2030", "a group filter names other objects", """
A ground-truth group stands for one object (or the pods of one workload), and ITBench's evaluators
find the objects an answer names through the group's `filter` regular expressions. A filter that
matches every object of its kind (`".*"`, `"frontend|.*"`) makes every answer of that kind right
for that group: write a filter that matches the group's own object, as the derived filters do
(`"cart\\b"`, `"cart-.*"` for its pods), or leave `filter` out to have it derived.
"""),
        _c("E2031", "application import cycle", """
`use app "./x.itb"` imports an application file that, directly or through the files it imports,
imports the file being read. An application is a tree of imports: move what two applications
share into a third file that both import.
"""),
        _c("E2032", "not an application file", """
`use app "PATH"` names a file (or a name found on the application search path) that does not hold
an `app "NAME" { ... }` document: a scenario file, say. Import the application file itself.
"""),
        _c("E2033", "application name clash", """
Two different application files imported into one scenario carry the same application name, or a
local application file takes the name of a standard-library application. The name is what prompts
and `itbench apps` show, so it must say which application it is: rename one of the `app` blocks.
"""),
        _c("E2034", "the claim cannot bind", """
A PersistentVolumeClaim names, with `volume_name`, a PersistentVolume that cannot satisfy it: the
volume's storage class differs from the claim's, its capacity is below the claim's `storage`, or it
does not offer the claim's access modes. Kubernetes would leave the claim Pending and every pod
mounting it unscheduled. Make the two agree.
"""),
        _c("E2035", "the faults cannot raise this alert here", """
An expected alert must be one the scenario's faults can raise where it is expected
(itbench_dsl/faults/alerting.py). Pod-state alerts (KubePodNotReady, KubePodCrashLooping, ...)
fire only on a component a fault changes: its target, what it changes or creates, its waiters'
targets, the workloads reading a ConfigMap or Secret it changes. Request alerts
(HighRequestErrorRate, NoRequestsReceived, ...) fire where the faults' traffic reaches: those
components and every one the topology's dependency edges join to them; they are measured on the
Service that carries the requests, not on a workload a Service selects. A fault on a namespace,
gateway, node or cluster component acts everywhere. A pod-state alert is not raised on the pods of a
workload whose new pods a quota the faults create refuses at admission (insufficient_resource_quota,
memory_resource_quota): a refused pod never exists, so no series of it is there to be seen; the workload's
missing replicas tell (an `alert_rule` comparing kube_deployment_status_replicas_available with
kube_deployment_spec_replicas).

    fault nonexistent_image on deployment "checkout"
    expect {
      alert KubePodNotReady on pod "frontend-*"     # E2035: no fault changes frontend's pods
      alert HighRequestErrorRate on service "frontend"   # right: a caller of checkout
    }
"""),
        _c("E2050", "unknown argument type", """
An `arg` of a `fault_kind` declares a type the language does not have. The types are `string`,
`integer`, `port`, `boolean`, `name`, `strings` (a list of strings), `duration`, `cpu`, `memory`
and `container` (a container of the target workload; its only one when left out). See
docs/fault-kinds.md.
"""),
        _c("E2051", "argument not declared", """
A `fault_kind` uses `arg(NAME)` (in a patch, a precondition, `exec`, `itbench_args` or `at`) for an
argument it does not declare. Declare it: `arg "NAME" { type = "string" }`.
"""),
        _c("E2052", "path not in the target's schema", """
A `patch` or `require` path of a `fault_kind` is not a field of one of its target kinds (from the
object's root, as in a manifest: `spec.template.spec.containers[name=arg(container)].image`), or goes
through a list without choosing an item (`containers[name=...]`, `[0]`).
"""),
        _c("E2053", "fault kind clashes with the library", """
A `fault_kind` declared in a project file has the name of a fault of the library (`itbench faults`
lists them), or its mechanism: a new name for what a library fault does is a duplicate fault (as two
scenarios injecting one mechanism on one target are duplicates, W2001). Give it another name, or use
the library's fault.
"""),
        _c("E2054", "exec without revert", """
A `fault_kind`'s `exec` runs a command in the target's pods; what it changes is in no manifest, so
the revert cannot restore it by itself. Give the command that undoes it: `revert = [...]`.
"""),
        _c("E2055", "not a fault library", """
`use faults "PATH"` names a file that cannot be read, or that holds no `fault_kind` declarations. The
path is relative to the scenario's folder.
"""),
        _c("E2056", "pod field that cannot change in place", """
A fault on a bare `pod` changes a field of its spec that Kubernetes fixes when the pod is created: the
API server refuses such an update (`pod updates may not change fields other than ...`). A running pod
changes in place only its containers' `image`, `activeDeadlineSeconds`, `terminationGracePeriodSeconds`
and added `tolerations`. Anything else (a command, an environment variable, a probe, resources, a node
selector) is changed by replacing the pod: delete it and create it changed. Target what runs the pod
(a deployment's pod template), or a field the pod changes in place (`nonexistent_image`); or, for a
kind declared in the language, say `recreate = [pod]`: the injection deletes the pod and creates it changed.
"""),
        _c("E2057", "Kyverno task in a namespace Kyverno does not process", """
A `kyverno_policy` or `kyverno_update` scenario is graded from the PolicyReports Kyverno writes for the
objects of its namespace. Kyverno's default configuration (the `resourceFilters` of its ConfigMap, the
Helm chart's `config.resourceFilters`) excludes `kube-system`, `kube-public`, `kube-node-lease` and the
namespace Kyverno runs in (`kyverno`) from admission and background scans: no report ever names an
object there, so no policy the agent writes can pass. Put the gap and compliant objects in a namespace
of their own (`topology { namespace "ciso-target" }`).
"""),
        _c("E2040", "regular expression not accepted", """
`PATH matches "RE"` takes a regular expression in RE2's syntax, matched against the whole value
(it is anchored: `matches "v1"` does not match `v1.2`; write `"v1.*"`). The evaluator runs it with
Python's `re`, so what RE2 does not have is refused: backreferences (`\\1`), lookahead and
lookbehind (`(?=`, `(?<=`), atomic groups, possessive repetition and conditionals; so is what could
take exponential time, an unbounded repetition inside a repetition (`(a+)+`, `([a-z]+\\.)*`),
a count above 1000 (`{1,5000}`) and an expression longer than 1000 characters.

    # in a string, a backslash is written twice: the expression `v1\\..*` is "v1\\\\..*"
    deployment "web" containers[name="app"].image matches "registry.example.com/web:v1\\\\..*"
"""),
        _c("E2036", "a task the scenario cannot pose", """
A `tasks` statement poses what the scenario can grade. A control (a scenario with no fault) poses
`detect` (the right answer: nothing is wrong) and `mitigate` (the right answer: change nothing),
never `localize`, `diagnose` or `analyze`, and declares no `analysis` labels: there is nothing to
localize or classify. `localize` and `diagnose` read the same answer and grade the same causes
(`diagnose` also grades how the incident spread): a scenario poses one of them.

    tasks detect within 10m, mitigate     # a control
    tasks detect, localize, analyze, mitigate
"""),
        _c("E2037", "the agent cannot perform the mitigation posed", """
A task the agent cannot perform is not posed. The scenario poses `mitigate` (a `tasks` statement that
names it, or the default `diagnose, mitigate`), and undoing one of its faults means ending an object of a
fault tool (a Chaos Mesh experiment or Schedule, `access.FAULT_TOOL_GROUPS`) that the agent's access does
not let it list and delete (or pause): the access never grants a fault tool's kinds, whose objects name
the fault (E4010). The tool's object is needed gone when
- a `mitigated when` predicate names it (`schedule "otel-demo-5d0c9a1e2b" absent`);
- the grader checks the fault's created objects gone (every `mitigated when` but `only`): a Chaos Mesh
  experiment acts until it is deleted or paused, whatever the agent does to the application;
- it is a Schedule (`every = 30s`, `schedule = "..."`): it starts the experiment again, `only` or not.

A one-shot experiment under `mitigated when only { ... }` is left be: the predicates and readiness
decide, and the agent may bring the application back by its own objects. A prompt that cites a command
reading the tool's kinds grants them (`access.cited_commands`), and then the task stands.

Pose the diagnosis instead (`tasks diagnose`, or `tasks detect, localize`; `analyze` with an
`analysis` block, as Chaos Mesh's kinds give no labels), with no `mitigated when` (nothing grades it),
or inject the fault so that the agent can undo it: a change to the application's own objects
(`modified_env`, `scaled_to_zero`, a NetworkPolicy it may delete).

    fault pod_chaos on deployment "cart" { action = pod_kill  every = 30s }
    tasks diagnose                          # not the default `diagnose, mitigate`
"""),
        _c("E3001", "generated object is not valid", """
An object the compiler generated does not validate against the vendored schema of its kind
(Kubernetes v1.33, Chaos Mesh v1alpha1). The message gives the JSON path inside the object.
Usually a value written in the scenario reaches a field that rejects it.
"""),
        _c("E3002", "generated object breaks a Kubernetes rule", """
An object the compiler generated breaks a rule the schemas do not encode, one the Kubernetes
API server enforces in code, so the object would be refused when applied:
- a workload's selector does not match its pod template labels;
- a name or label is not valid (DNS-1123 names, label and annotation syntax);
- a port is out of range;
- in a pod spec (a Pod, or the template of a Deployment, StatefulSet, DaemonSet, Job, CronJob):
  - a container sets `allowPrivilegeEscalation: false` with `privileged: true` (or adds
    `CAP_SYS_ADMIN`): a privileged container can always escalate, so drop one of the two;
  - a port name appears twice in one container, a host port twice among the containers;
  - a volume name appears twice, or a volume has no source or more than one;
  - a `volumeMounts` entry names no volume of the pod, or two mounts of a container share a
    `mountPath`;
  - a resource request is above its limit (compared by value: `500m` < `1`, `512Mi` < `1Gi`);
  - a probe or lifecycle hook has no handler or more than one (`exec`, `httpGet`, `tcpSocket`,
    `grpc` or `sleep`);
  - an environment variable has both a non-empty `value` and a `valueFrom`.
Each rule is the API server's (kubernetes `pkg/apis/core/validation`, v1.33; tests/support/apiserver_rules.py
lists them with an object that breaks each), with two exceptions: a variable set twice in one
container, which the API server accepts with a warning (the later value wins), is refused as the
compiler's own rule; and a Chaos Mesh selector's labels and namespaces, which the API server does
not check: Chaos Mesh parses the labels when it selects pods (the experiment then fails), and a
namespace that is not a DNS-1123 label selects nothing.
The message gives the JSON path of the offending field inside the object, and the error points at
the statement that generated it.
"""),
        _c("W3001", "ITBench's layout cannot carry the topology", """
`itbench compile --target itbench` writes only ITBench's own files. Its `scenario.yaml` names the
applications to deploy by their ITBench key (`opentelemetryDemo`, `bookInfo`), so a scenario whose
topology is written inline, or whose application ITBench does not install (HotelReservation), has
no application to name: the file says `applications: {}` and ITBench would deploy none of its
objects. A fault on one of those objects is refused (E3005). Use a standard application, or run the
full bundle (`manifests/topology.yaml` holds the inline objects).
"""),
        _c("W3002", "ITBench injects the fault with its own values", """
`itbench compile --target itbench` writes ITBench's scenario.yaml, which carries a fault's target and
the few arguments ITBench's fault schema has fields for. For the others ITBench's injection task
applies values of its own: `insufficient_resources` always writes 5m / 5Mi limits and requests,
`misconfigured_hpa` always sets a CPU target of 20% and a memory target of 30%,
`misconfigured_readiness_probe` always probes `GET /ready` on port 40, and `modified_target_port` always
points the port at 9999 (each kind's table of them: `itbench_injects`, `itbench faults`). A scenario whose
argument differs (a memory of 48Mi, a utilisation of 1%, a probe on port 8080) is exported all the same, but an ITBench
run of it injects another fault than the one its ground truth, alerts and prose describe, and
variants differing only in such an argument export alike. Write the argument as ITBench injects it,
or run the full bundle (`itbench run`), which injects the scenario's own fault.
"""),
        _c("E3004", "ITBench cannot inject a fault of the scenario", """
`itbench compile --target itbench` writes ITBench's own files, and ITBench injects only the faults
of its fault library (`itbench faults` marks them with their ITBench id). A fault ITBench lacks (a
one-shot chaos experiment, a fault declared in the language, most of this project's own kinds)
cannot be listed in its scenario.yaml: ITBench would inject the other faults only, or nothing
(`faults: []`). The ground truth (root causes, propagation, expected alerts, solution) grades the
whole incident and cannot be split by fault, so an export that left a fault out would grade an
agent on a root cause that was never injected. The export is refused and nothing is written for
that scenario. Compile the full bundle instead (its `inject/` folder applies every fault; `itbench
run` runs it), or use faults ITBench has.
"""),
        _c("E3007", "ITBench's patch cannot change a variable set by valueFrom", """
`itbench compile --target itbench`: ITBench's task for `modified_env`
(inject_modified_kubernetes_workload_container_environment_variable.yaml) applies the container's new env
entry `{name, value}` with kubernetes.core.k8s `state: patched`, a strategic merge that merges it into the
entry of the same name. Where the container sets the variable by `valueFrom` (a fieldRef, a ConfigMap or
Secret key), the merge keeps `valueFrom` beside the new `value`, and the API server refuses an env var that
has both: ITBench's injection fails while the export's ground truth grades the fault. The native bundle
writes the entry whole, so the two targets would pose different things; the ITBench export is not written.

    fault modified_env on deployment "cart" { name = "OTEL_SERVICE_NAME"  value = "nothing" }
                                    # E3007: OTEL_SERVICE_NAME is set by valueFrom.fieldRef

Modify a variable the container sets by `value`, or run the full bundle (`itbench run`).
"""),
        _c("E3006", "ITBench's CISO harness grades one object", """
`itbench compile --target itbench`, CISO class Gen-CIS-b-K8s-Kyverno: ITBench's harness
(playbooks/evaluate.yml) learns which object to grade by reading manifests/application.yaml with
`from_yaml`, a single-document load, and hands its kind, namespace and name to its evaluation. An
export whose application.yaml holds several objects (a gap's ServiceAccount beside its binding, two
gap objects) cannot be read there: every ITBench run of it would fail in evaluation, or, read
another way, grade the first object alone. The export is refused and nothing is written for that
scenario. Give the scenario one gap object that needs no other, or run the full bundle (`itbench
run`), which grades every gap object.
"""),
        _c("E3005", "ITBench does not deploy the fault's target", """
`itbench compile --target itbench`: the scenario's application is not one ITBench installs (an
inline topology, an application such as HotelReservation, or a standard application moved to
another namespace by `use app "X" { namespace = ... }`: ITBench installs it in its own), so its
scenario.yaml says
`applications: {}` (W3001), and a fault on one of the application's objects would be injected into
an object that does not exist in ITBench's cluster, while the ground truth grades the incident as
if it ran. The export is refused and nothing is written for that scenario. Use an application
ITBench installs, or run the full bundle (`itbench run`).
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
        _c("E4004", "the evaluator grades a state of its own scenario wrongly (the healthy one fails, or the faulty one passes)", """
`itbench check` grades the scenario's adversarial corpus with its own evaluator (docs/evaluator.md,
`itbench_dsl/analysis/corpus.py`): states derived from what the scenario compiles to, each with the verdict
it must get. The healthy and solved states, and the solved state as an API server returns it, must
pass; the faulty state must fail, also when every pod reports ready and no alert fires, and so must
each changed field set to another wrong value, JSON re-serialised with the fault kept, an object
the fault created left in place, a deleted object recreated wrong, the workload running another
image or scaled to zero. A state without the alerts or kinds the evaluator reads must be refused.
A CISO scenario grades the agent's policy: a perfect policy's reports must pass; a deny-all or
allow-all policy, no report, or a policy that breaks the prompt's contract must not. The message
names the cases graded wrongly and the checks that decided them.

When a state that must pass fails (`predicate N fails states that must pass: the healthy state
...`), the predicate does not hold on the healthy application: its path names a field the object
does not hold (a map key the schema leaves open, such as a label or `resources.limits.KEY`), its
value is not the healthy one, or it reads a field a controller sets (a claim's `status.phase`),
which the derived states hold only as the topology declares it. The message says what the field
held and what the predicate wanted; compare the path with `itbench apps NAME` or the topology.

When the faulty state passes, the `mitigated when` block only names alerts the fault does not raise,
or objects the fault does not change; add a predicate the fault breaks (`deployment "x" ready`,
`schedule "x" absent`, `alert HighRequestErrorRate not firing` with the alert in `expect`). A CISO
scenario needs compliant objects, so that a deny-all policy can fail.
"""),
        _c("E4005", "the perfect diagnosis does not score 1", """
`itbench check` grades answers to the diagnosis with the scenario's evaluator: the ground truth
itself (the root causes as entities `namespace/Kind/name`, the propagation edges), with extra
spellings and in ITBench's 2025 shape, must pass with score 1; an empty answer, the root cause
without its propagation, a sibling that shares the root cause's name as a prefix, the name of an
object that exists nowhere, or every object at once must not, nor an answer with no `entities`
(a fail with the reason). Otherwise the root causes or propagations of `expect` do not match the
ground-truth groups the evaluator scores with (a pod pattern that matches no pod, a root cause
outside the topology graph), and no agent could reach a full score, or a wrong one could.
"""),
        _c("E4006", "the scenario's first solution does not mitigate", """
`itbench check` replays the first `solution`'s commands (`step "..." run "kubectl ..."`) on the
faulty state as a cluster would carry them out, and grades the result as the mitigation. Either
the API server would refuse a step (an immutable field, such as a PersistentVolumeClaim's storage
class; a selector change), or the solution leaves the fault in place (a created object, a field
still wrong). The scenario's own answer fails its grader: fix the solution, or the expectations.
Steps without `run` are prose for the agent and are not replayed.
"""),
        _c("E4010", "the agent can read the answer in the cluster", """
`itbench check` reads what the agent reads, from the compiled bundle (`itbench_dsl/agent_view.py`): every
object its RBAC (`manifests/agent-access.yaml`) lets it get or list among the topology, the objects the
injection applies or creates, the alert rules and an existing policy, and its own access objects; of each,
its name, namespace, labels and annotations (and its pod template's), and every string value it holds (an
image, a command, a node selector, a storage class, a ConfigMap's file names and content); every rule
group's name and every alert's name, labels and annotations (Prometheus serves them to anyone at
`/api/v1/rules`); the prompt; the namespaces. None may name
- the scenario (its whole name);
- the fault's vocabulary: the words of the fault kind's name and of its mechanism's qualifier
  (`workload.replicas:zero`: "zero"), and the words of the scenario's name, less the application's own words
  (every word of its objects' names, labels, images: a service named "cart" is the application's; a word of
  the fault kind's only where a library application had it before the scenario, or a kind or an image says it:
  a namespace, an object or an application the scenario names after the fault, `invalid-command` for
  `invalid_command`, exempts nothing), less
  the nouns of where the fault acts ("workload", "container"), and less what the prompt says (a CISO
  control). A created object's name may say its kind and its fields (a ResourceQuota `...-quota`); a fault
  tool's object (Chaos Mesh's) may say its type only: `cart-pod-kill` restates its spec, and whoever lists the
  PodChaos objects reads the fault (the default names are another component's name and a common word,
  `currency-main`, naming neither the target nor the action); a created object's name may not say what it does to the application either (`deny`,
  `block`, `isolate`, `untrusted`, ...: `deny-all-cart`, `test-untrusted-registry`), nor a word that says
  what is wrong or what a fault does;
- in a value a fault writes (a created object's, or what a patch adds: a new image tag, a node selector, a
  script's name), a word that says what is wrong (`nonexistent`, `missing`, `invalid`, `broken`, `itbench`,
  ...) or what the fault does (`fill`, `kill`, `hog`, ...), or a word of the fault kind's name or mechanism
  in a name-like value (no spaces). In the application's own values, a word that says what is wrong in a
  name-like value (an image `web:broken`, a node selector `broken-nodes`), and in the names the scenario gives
  (its topology's objects and namespaces, its application's name) a word that says what is wrong or names the
  harness (`broken-app`, `faulty`, `itbench-run`, `chaos-lab`) that no library application's name holds. Not read: a value's words the
  patch kept, enumerated values (`Ingress`, `DENY`: capitalised), a kind or API version, the spec of a fault
  tool's object (a PodChaos's `action: pod-kill` is the fault the agent is to find), and the agent's own
  access objects' rules (the same in every scenario of an application, E4025);
- a marker: a label or annotation only injected objects or the agent's own access objects carry
  (`app.kubernetes.io/managed-by: itbench` on what a fault creates, or on the agent's Role), a word of the harness in a created object's name (`-gap`, `-injected`), or a part
  of a created object's name of a shape no name of the application's objects has: a hash (`5d0c9a1e2b`,
  `x7k2p`: letters and digits mixed) or a long number (`-[0-9a-f]{10}$` lists what a fault created when no
  object of the application ends so);
- a fingerprint: an object a fault creates without a label that more than half of the application's objects
  in its namespace carry (`app.kubernetes.io/component`, `part-of`): `kubectl get -l '!app.kubernetes.io/component'`
  would list it alone. The compiler gives created objects those labels (a value most objects share, else
  the target's own value); an image from a registry the application does not use is W2016;
- a host control's inventory group named after what its hosts are (`..._baseline`, `..._compliant`): the
  prompt's host pattern names both groups, which `ciso.host_groups` names alike (`<hosts>_<token>`);
- the agent's own rules (`agent_view.access_findings`): a rule that reads a fault tool's API group
  (`chaos-mesh.org`; a PodChaos names the fault's kind and target) when no command the prompt cites reads
  it, and a rule that lets it exec into, attach to or port-forward to a pod, or mint a token, of a service
  account that may do more than the agent (`access.wider_than`), or create a pod, a workload or a Secret in
  a namespace where such an account is when no admission policy of the agent's refuses it (a pod names the
  account it runs as; a Secret of type `kubernetes.io/service-account-token` is filled with the account's
  token; `backends/manifests.pod_guard` writes the policy): the message names the role, the rule
  (`rules[3]`) and the account.

The message names the object, the file it comes from, the field (`spec.template.spec.containers[0].image`)
and what it gives away. Fix it where it comes from: give the fault a value that says nothing (an image tag
as a commit's, `7f3a9c1e`; a node named as a cloud names its nodes; a script `entrypoint.sh`), rename the
object a fault creates (`name = "..."` of the fault) after the application's objects, or name an alert the
scenario declares (`alert_rule`) and its text after the symptom it measures (`DeploymentRunsNoReplica`, not
`DeploymentScaledToZero`). The harness tracks what it created by the bundle's inject/ and revert/ files and
the run's timeline, never by a label the agent can read.
"""),
        _c("E4025", "the agent's access depends on the scenario", """
An incident's agent (domains sre and finops) has the same access in every scenario of an application:
what it can read and change (`kubectl auth can-i --list`) must not tell one scenario's fault from
another's. The access is derived from the application and the domain (`expectations.application_access`): the
domain's defaults and every resource a library fault leaves its root cause in (Secrets, ResourceQuotas,
NetworkPolicies, Roles, Istio policies, ...), read and changed in the application's namespaces (no
exec, attach or port-forward where a pod runs with a wider token than the agent's); namespaces and nodes,
changed (a namespace also made again) but never deleted, and no node made; the `kube-system` namespace, read only and without its Secrets. Never a fault tool's kinds (Chaos Mesh's): a fault's need of them
is not the agent's (W2017 says where a solution would still need them).

The error is reported where a scenario's `agent` statement changes that access, and where a fault says
the agent needs access (to find and undo it) that the derived access lacks: grant it to every scenario in
`expectations.INCIDENT_RESOURCES`, not in one.
"""),
        _c("E4026", "the agent may not run the scenario's own solution", """
`itbench check` replays the first solution as the cluster's admin (E4006); this check reads its kubectl
steps as the agent's token would send them (`access.command_rights`: get, describe, delete, patch, edit,
label, annotate, scale, rollout, set, logs, exec, cordon), and the changes each replayed step makes
(an object created, changed or deleted, whatever command made it: `kubectl apply -f`), and asks the
agent's access (`manifests/agent-access.yaml`) whether the RBAC authorizer would allow each request (its
verb, API group, resource, namespace and object name, against `resourceNames`). In a further solution a
refused change is W2010. A refused request
means the task cannot be solved with the access the agent is given: widen the application's access
(`expectations.INCIDENT_RESOURCES`), or fix the rule's API group.
"""),
        _c("W2015", "a fault has no symptom the scenario shows", """
A fault whose effect nothing in the scenario would show makes the task unanswerable by observation: the
agent is told alerts fire, and none does. Each fault kind declares its symptoms (`symptoms` of its record,
`itbench faults`): `readiness` (the target's pods stop being ready or available), `restarts` (its
containers restart), `scheduling` (its pods stay Pending), `endpoints` (a Service selects no pod) and
`scaling` (an autoscaler scales it) show in `kubectl get`; `requests`, `latency`, `access` and `cost` show
only through an alert or a probe. A scenario whose faults all have symptoms of the second kind must expect
an alert (`expect { alert ... }`, a catalogue alert or its own `alert_rule`) or run a `probe`.

Fix it by expecting the alert that measures the symptom (an `alert_rule` on the metric the fault moves), or
by a probe the evaluator runs; a scenario ported from a benchmark whose prompt states the symptom may allow
the warning (`metadata { lint_allow = ["W2015"] }`) and say why.
"""),
        _c("W2019", "the fault is too small to raise the alert", """
An expected latency alert fires above a request duration (its rule compares a latency quantile with a
bound: HighRequestLatency's is 1.5s on the OpenTelemetry demo), and every fault of the scenario is a fixed
delay (an HTTPChaos `delay`, a NetworkChaos `delay` with its jitter, a JVMChaos `latency`: one sleep
per call of its method) that adds no more than that bound,
even summed. The alert would fire only if the application were already that slow: the ground truth
names an alert the fault does not raise. The variant generators skip such a variant (a `sweep` value
below the threshold) by the same comparison (itbench_dsl/faults/alerting.py).

    fault http_chaos on deployment "ad" { action = delay  target = response  port = 8080  delay = 1s }
    expect {
      alert HighRequestLatency on service "ad"     # W2019: fires above 1.5s, the fault adds 1s
    }

Make the delay longer than the threshold, or expect an alert the fault crosses.
"""),
        _c("W2020", "the fault ends before the alert can fire", """
An alert fires once its rule's condition has held for the rule's `for` (KubePodCrashLooping: 15 minutes;
HighRequestErrorRate on the OpenTelemetry demo: 3 minutes, over a `rate(...[2m])`). A fault that acts only for
a bounded time (a Chaos Mesh experiment created once with a `duration`, or an instant action such as a PodChaos
`pod_kill`) can keep that condition true for at most its acting time plus, for each burst, the window its
rule's range vectors look back (what the fault caused stays in `rate(...[2m])` for 2 minutes after it) and, for
a fault that acts on pods (`restarts`, `readiness`), 5 minutes of the kubelet's restart back-off; a rule that
tests an absence (`... == 0`, `absent_over_time`) holds only from a whole window into the fault. When no rule
of an expected alert can hold long enough, the alert never fires: the ground truth names an alert the run
will not see. The message says what the rule needs and how long the faults act; the warning is at the fault
that acts longest. Faults that act until they are undone (no `duration`), a Schedule whose bursts run into
each other, and alerts whose rule reads a recorded series (the recording rule's window is not known) are not
judged. The variant generators skip such a variant (a `sweep` of `duration`) by the same comparison
(itbench_dsl/faults/alerting.py).

    fault http_chaos on deployment "product-catalog" { action = abort  target = response  port = 8080
                                                       duration = 30s }     # W2020
    expect {
      alert KubePodCrashLooping on deployment "product-catalog"   # must hold 15m; the fault acts 30s
    }

Let the fault act longer (a longer `duration`, or none: it then acts until the experiment is deleted, which
the solution does), or expect an alert it can raise in that time.
"""),
        _c("W2022", "the alert fires after the run stops waiting", """
A run waits a bounded time for the expected alerts after the injection: ITBench's runs and the Chainsaw and
Argo gates 30 minutes; `itbench run` its `--alert-timeout` (15 minutes), or what the expected alerts' rules need
when that is longer. An alert fires only once its rule's condition has held for the rule's `for` and an
evaluation has seen it (about two more minutes); a rule whose `for` is as long as that wait or longer
(KubeContainerWaiting: 1 hour) is never seen firing in time, and the alerts phase stops the run before the
agent. The warning is at the `alert` statement.

    expect {
      alert KubeContainerWaiting on pod "email-*"    # W2022: must hold 1h, the runs wait 30m
    }

Expect an alert whose rule fires sooner (KubePodNotReady, 15 minutes, for a pod that stays Pending).
"""),
        _c("W2021", "the mitigation is graded before the autoscaler scales in", """
A HorizontalPodAutoscaler scales its workload in only after its scale-down stabilization window
(`behavior.scaleDown.stabilizationWindowSeconds`, 300 s by default) and on its next sync (every 15 s): a
fix of an autoscaler the faults scaled out (a utilisation target set back) shows in the replicas minutes
later. A scenario that grades `mitigate` on what only that scale-in brings back (an `optimal` or a `mitigated
when` bound on the workload's replicas, an alert whose rule reads the autoscaler's replicas such as
KubeHpaMaxedOut, which the mitigation needs quiet) grades a right fix as a failure while the window runs. A run
waits for the mitigation's checks to hold as long as the scenario declares, and no longer (`mitigated when
within D` and the predicates' own `within`, the longest, from the end of the agent's work: docs/running.md);
without a declared window it grades at once. The warning is at the `within` when there is one, else at the
first check the scale-in decides (faults/autoscaling.py).

    expect {
      optimal deployment "frontend" spec.replicas = 1       # W2021: no window; the scale-in takes 5m15s
    }

Declare a window that covers the scale-in (`mitigated when within 6m { deployment "frontend" ready }`). The
run stops waiting as soon as the checks hold, so a right fix costs no more than its own time.
"""),
        _c("W2017", "a solution step acts on a fault tool's objects", """
The first solution's step acts on a fault tool's objects (Chaos Mesh's: `kubectl -n chaos-mesh delete
schedule ...`), which the agent's access never grants: listing them would name the fault's kind and its
target (E4010). The replay runs as the admin and passes; the agent cannot take the step. It is reported
where `mitigate` is posed only (otherwise the solution is the operator's, for readers and the ground
truth); a posed `mitigate` whose grader needs the tool's object gone is refused at compile time (E2037),
so the warning is left for a solution that ends an experiment the grader does not ask gone (`mitigated
when only`).

Decide what the task is: a scenario meant to have the agent find and remove the tool's objects grants it in
the prompt (a command the prompt cites, `access.cited_commands`, adds the rights it needs, and E4010 then
leaves the rule be); otherwise pose the tasks the agent can answer by observation (`tasks diagnose`), or
allow the warning (`metadata { lint_allow = ["W2017"] }`) and say why.
"""),
        _c("W2016", "an object a fault creates looks unlike the application's", """
An object a fault creates (a Deployment, a DaemonSet, a Job) runs an image from a registry no object of
the application pulls from (`registry.access.redhat.com/ubi...` beside an application pulled from
`ghcr.io`): whoever lists the pods' images (`kubectl get pods -o jsonpath='{..image}'`) finds the fault's
pods without diagnosing anything. `itbench check` compares the registry of every image the injection
writes (in the objects it creates, and in the application's own objects it changes: a replaced container
image, an added init or ephemeral container, any image the application's object did not run) with those of
the application's objects, and flags an image whose reference names the harness (`quay.io/it-bench/...`)
whatever its registry (`agent_view.foreign_images`; a fault tool's objects, Chaos Mesh's, are the tool's and
are not read).

The labels are the compiler's: an object a fault creates wears the labels the application's objects in
its namespace share, and those each object carries with a value of its own (`app.kubernetes.io/component`,
`app.kubernetes.io/name`) with its target's values (`backends/faults.py`); one that still lacks a label
most of the application's objects there carry is an E4010 finding ("a fingerprint").

Fix it by pulling the fault's image from a registry the application uses (a mirror), or allow the
warning (`metadata { lint_allow = ["W2016"] }`) and say why.
"""),
        _c("W2018", "a fault creates the only object of its kind", """
An object a fault creates is the only one of its kind that the agent can list where it is (its
namespace; the cluster, for a cluster-wide kind): the application has no NetworkPolicy, ResourceQuota or
LimitRange there, so `kubectl get networkpolicies -n shop` lists the fault's object alone, however well it is
named and labelled. Its kind is the tell. `itbench check` compares the kind of every object the injection
creates, and the agent's access lets it list, with the objects the run puts beside it: the application's,
the agent's own access objects, those every namespace and cluster holds (a ConfigMap, a ServiceAccount, the
nodes) and those the application's objects make (its workloads' pods) (`agent_view.lone_kinds`). A fault
tool's objects (Chaos Mesh's) are not read: the agent may not list them (E4010).

The compiler gives the application harmless objects (decoys) of the policy and quota kinds a fault
creates alone (docs/fault-kinds.md, "Decoys"); the warning remains where no decoy can be made: a kind with
no recipe (a PersistentVolumeClaim, a DaemonSet, a PeerAuthentication), or no component the fault's object
leaves free.
Fix it by declaring objects of that kind in that namespace in the topology, harmless ones, or allow the
warning (`metadata { lint_allow = ["W2018"] }`) and say why.
"""),
        _c("W2001", "scenario duplicates another", """
Two of the checked scenarios inject the same fault mechanism on the same target (the same
container, variable, port or autoscaler): they measure the same thing, whatever values they use.
Contributors proposed many duplicate "new" faults and scenarios to ITBench; this catches them.
Change the target or the mechanism, or drop one of the two. `itbench check` reports it when it
checks several files; it is a warning, so it does not change the exit code. It is reported at the later
of the two files (in the order given), with a note naming the first; a duplicate is a relation of the pair,
so a pair is allowed when either file allows it (`metadata { lint_allow = ["W2001"] }`, which `itbench
generate` writes into the deliberate members of a family: `itbench check --strict PARENT VARIANT` passes in
either order). The same holds for W2006.

    fault modified_env on deployment "cart" { name = "REDIS_ADDR"  value = "x:1" }   # a.itb
    fault modified_env on deployment "cart" { name = "REDIS_ADDR"  value = "y:2" }   # b.itb: W2001
"""),
        # -- lint (W2002-W2099): itbench_dsl/analysis/lint.py --
        _c("W2002", "unused topology object", """
An object of the scenario's inline `topology` that nothing refers to: no fault, waiter, alert, root
cause, propagation, mitigation predicate, optimum, gap or compliant statement names it, no
dependency edge connects it, and it belongs to no workload that is in use (a workload's services,
autoscaler, configmaps, secrets and service account belong to it). It is deployed for nothing, or a
reference to it was forgotten. Objects of an application imported with `use app` are never
reported, nor namespaces. A scenario whose extra objects are deliberate red herrings says so in
its metadata: `metadata { lint_allow = ["W2002"] }` (any warning code can be allowed this way).

    topology {
      namespace "shop"
      deployment "cart" { image = "ghcr.io/example/cart:1.0" }
      deployment "legacy" { image = "ghcr.io/example/legacy:1.0" }   # W2002: nothing uses it
    }
    fault scaled_to_zero on deployment "cart"
"""),
        _c("W2003", "fault with no observable success criterion", """
An SRE fault whose repair nothing in the scenario can observe: no `mitigated when` predicate
names what the fault changes (its target, what it creates or changes, their services and pods),
no `alert NAME not firing` predicate names an alert of `expect`, and no alert can tell: `expect`
lists no alert on a component where the fault acts (its target's, that of another fault of its
group, which is one incident, or that of a waiter of its group: a feature flag acts where its
readers restart) or on one the propagation chains reach from there. Add a
predicate the fault breaks and the solution restores, or the alert the fault raises. (E4004 is the
error when the evaluator grades a state of its own scenario wrongly.)

    fault scaled_to_zero on deployment "cart"
    expect {
      mitigated when { deployment "cart" ready within 5m }   # observes the fault: no W2003
    }
"""),
        _c("W2004", "missing solution", """
An SRE or FinOps scenario with no `solution` block. The ground truth's recommended actions come
from it, and a reviewer needs it to see that the scenario can be solved by an agent with the
access the scenario grants. A CISO scenario needs none: its solution is the policy or playbook
the agent writes, which the evaluator checks against the gap and compliant objects. Nor does a
control (a scenario with no fault): nothing is broken, and the right mitigation changes nothing.

    solution "Scale cart back up" {
      step "Scale up" run "kubectl -n shop scale deployment/cart --replicas=1"
    }
"""),
        _c("W2005", "duplicate fault mechanism in one scenario", """
Two faults of one scenario have the same mechanism on the same target and place (the same
container, variable, port or resource), whatever their values: the second overwrites or repeats
the first. The note points at the first. Across files, the same check is W2001.

    fault modified_env on deployment "cart" { name = "REDIS_ADDR"  value = "x:1" }
    fault modified_env on deployment "cart" { name = "REDIS_ADDR"  value = "y:2" }   # W2005
"""),
        _c("W2006", "scenario identical to another", """
Two checked scenarios mean the same thing: their IR (scenario.json) is identical once the name,
description, tags and metadata are left out (the rule compares a sha256 of the canonical JSON, keys
sorted). The later one (in the order the files are given) is reported, with a note naming the
first. Change what the scenario measures (topology, faults, expectations) or drop one. A scenario
with the same faults but other expectations is W2001 instead.
"""),
        _c("W2007", "empty or placeholder description", """
The description is empty, a placeholder (`TODO`, `TBD`, `FIXME`, `...`, `description`), the
scenario's name again, or shorter than three words. It is shown in the scenario index and to
reviewers: say in a sentence what breaks and what users see. (A missing description is the error
E2013.)

    description "TODO"                                                 # W2007
    description "Cart is scaled to zero, so checkout cannot add items." # right
"""),
        _c("W2008", "complexity inconsistent with the propagation length", """
The declared `complexity` does not fit the propagation chains of `expect`. The rule counts the
hops between components along the longest chain (a workload, its pods and the services selecting
it are one component; an object a fault creates belongs to the fault's target): `low` allows at
most 2 hops, `high` needs at least 1, `medium` accepts any length. Complexity also weighs how
subtle the fault is (ITBench rates a JVM exception inside one service `high`), so only clear
contradictions are reported: a `low` incident whose symptoms travel 3 hops or more, a `high` one
whose effects never leave the faulty component. Scenarios without `propagation` are not judged.

    complexity low
    propagation service "db" -> service "cart" -> service "checkout" -> service "frontend"   # 3 hops: W2008
"""),
        _c("W2011", "an unordered list read by position", """
A `mitigated when` predicate reads an item of a list by its position (`rules[0]`), and that list has
no order that matters: an RBAC role's rules, a binding's subjects, a container's env and ports, a
pod's containers and volumes, an autoscaler's metrics (lint.UNORDERED_LISTS). A right fix that adds
the missing item after the others, or a cluster that returns the items in another order, fails it.
Select the item by what it is.

    role "r" rules[0].verbs contains "list"                            # W2011
    role "r" rules contains { resources = ["pods"], verbs = ["list"] } # right: some rule holds these
    deployment "web" containers[name="app"].args contains "--port=80"   # right: the container by its name
"""),
        _c("W2012", "the evaluator's own checks disagree with the scenario", """
What passes a scenario is more than its `mitigated when`: the evaluator also grades the fields the
fault changed (back at their healthy value, or a value the fault accepts), the FinOps optimum
(within 10% of it: proximity 0.9), the workloads' health and the safeguards (`itbench explain
FILE.itb` lists every check and where it comes from). This warning says where a statement of the
scenario and one of those checks disagree on the same object, so that the author sees what the
agent is graded on:

- a field predicate that compares a figure an `optimal` statement also grades: `<= 64Mi` accepts
  64Mi, which scores proximity 0 against an optimum of 20Mi (the proximity check passes 18Mi to
  22Mi only), and a predicate that refuses part of that band fails a fix the proximity passes;
- a field the fault changed that no statement names, beside one that a statement names on the
  same object (`resources.limits.memory` beside a predicate on `resources.requests.memory`): the
  evaluator wants it back at exactly its healthy value, which the scenario never says;
- a predicate stating a least count of a workload's replicas below the count the safeguards keep
  (the replicas it was deployed with): `spec.replicas >= 1` on a Deployment deployed with 2 accepts
  1, which the safeguards fail (`scaled to 1, below the 2 it was deployed with`). A predicate is
  judged by the counts it accepts, not by its operator: `> 0`, `>= 1`, `!= 0` and `in [1, 2]`
  accept the same low counts and are warned alike; one that only caps the count (`<= 3`) is not.

    optimal deployment "cart" resources.limits.memory = 20Mi
    mitigated when {
      deployment "cart" resources.limits.memory <= 64Mi     # W2012: 64Mi fails the proximity check
    }

State the band the optimum passes (`>= 18Mi` and `<= 22Mi`) or leave the figure to the optimum;
name the hidden field too (a predicate or an optimum then decides it). Allow it per scenario with
`metadata { lint_allow = ["W2012"] }` when the difference is meant.
"""),
        _c("W2013", "root-cause groups of one object", """
Two `root_cause` groups stand for one object (the same kind, namespace and name, or the pods of one
workload): an answer naming that object is credited with both root causes, and the object the second
group was meant for (another fault's Schedule, say) is never graded. Point each group at its own
fault's object.

    group "stress-1" schedule "cart-stress"
    group "delay-1" schedule "cart-stress"      # meant: schedule "cart-delay"
    root_cause group "stress-1"
    root_cause group "delay-1"                  # W2013
"""),
        _c("W2014", "an install option the native bundle does not install", """
`use app "NAME" { options { ... } }` gives ITBench's installer options; they go to the ITBench export's
`scenario.yaml` only. The native bundle (the manifests `itbench run` deploys, its evaluator's topology,
capture list and states) installs what the topology declares, so an option it has nothing for poses
another incident natively: `hpa = true` with no autoscaler in the topology leaves nothing to scale, and
no autoscaler safeguard grades the fix. Declare in `topology` what the option makes (a
`horizontalpodautoscaler` for `hpa`), or allow the warning where the native run need not have it.

    use app "opentelemetry-demo" {
      options { autoscaling { kubernetes { hpa = true } } }     # W2014 unless the topology has an autoscaler
    }
"""),
        _c("W2009", "a solution step cannot be replayed", """
`itbench check` replays each solution's commands on the faulty state to show that the solution
mitigates (E4006, W2010). This step's command cannot be replayed: an interactive editor (`kubectl
edit`), a file that is not in the bundle, a shell construct (`$(...)`, `||`, a here-document). Write
the change as a command that states it (`kubectl patch ... -p '...'`, `kubectl set image ...`,
`kubectl apply -f revert/apply.yaml`), or as prose without `run`.
"""),
        _c("W2010", "a further solution does not mitigate", """
A solution after the first, replayed on the faulty state, does not mitigate, or the API server
would refuse one of its steps (an immutable field, a selector change). Agents and readers take a
scenario's solutions as right answers: correct the solution, or drop it.
"""),
        # -- import of ITBench SRE/FinOps files (E5001-E5049, W5001-W5049): itbench_dsl/importer/ --
        _c("E5001", "unreadable ITBench file", """
An ITBench file given to `itbench import` (or one of its scenario's other files) cannot be read:
it is missing, empty, not UTF-8, or not valid JSON (index files, `N.json`) or YAML (`scenario.yaml`,
`groundtruth.yaml`, `groundtruth_v1.yaml`). The diagnostic points at the place the parser stopped.

    {"id": 16, "category": "sre",      <- a truncated index file: E5001 at its end
"""),
        _c("E5002", "unexpected ITBench file shape", """
The ITBench file parses, but a field the import needs is missing or has the wrong type: an
injection without `id`, `spec.faults` that is not a list, a v1 group without `kind`. The diagnostic
points at the field.

    spec:
      faults: {injections: []}     # E5002: `spec.faults` should be a list
"""),
        _c("E5003", "ITBench id the library does not have", """
An injection, waiter or application names an ITBench id that no fault, waiter or standard-library
application maps to, or its arguments lack what the mapping needs (the injection's
`kubernetesObject`). `itbench faults` lists each fault with its ITBench id; `itbench apps` the
applications.
"""),
        _c("E5004", "not an ITBench scenario", """
`itbench import` takes an ITBench scenario index file (`library/scenarios/N.json`) or a compiled
scenario folder (`scenario_N/`, holding `scenario.yaml` and the ground-truth files). The path is
neither.

    itbench import ../ITBench/scenarios/sre/project/roles/scenarios/files/scenario_16/
"""),
        _c("E5005", "imported scenario does not compile", """
The scenario written from the ITBench files fails the checker in its faults or its head: a fault's
precondition does not hold in the standard library's topology (an etcd pod the application does not
run), or a FinOps scenario has no fault to measure. The message gives the checker's reason; the
ground-truth statements the checker refuses are not errors but W5004.
"""),
        _c("W5001", "undefined v1 group id", """
`groundtruth_v1.yaml` names a group id (in an alert, a propagation, an alias) that no group
defines, or an alert with no group id at all. When exactly one defined id extends the name
(`ad-service` for `ad-service-1`) the import reads it as that id; otherwise the reference is left
out. Either way the port says so, and docs/itbench-compat.md lists the difference.
"""),
        _c("W5002", "v1 group names what the injection does not create", """
A root-cause group of `groundtruth_v1.yaml` names an object that the scenario's injection neither
creates nor changes (a `NetworkChaos` called `delay-otel-demo-product-catalog-1` where the injection
creates a Schedule; or ITBench's name of the Schedule, `product-catalog-network-delay`, which the port
leaves to the compiler because it says what the fault does). The port keeps the group id and points
the group at the object the injection does create.
"""),
        _c("W5003", "v1 and v2 ground truths disagree", """
A root-cause group of `groundtruth_v1.yaml` names none of the entities of `groundtruth.yaml` (v2),
which are the objects the injections act on: the two files of one scenario say different things
caused the incident. The port keeps v1's causal graph (as `expect` statements) and derives v2 from
its faults, as the compiler always does; docs/itbench-compat.md lists the scenario.
"""),
        _c("W5004", "v1 statement left out of the port", """
A group, alert, propagation or alias of `groundtruth_v1.yaml` cannot be said in the port: it names an
object the topology does not have, an alert the monitoring stack does not define, or an edge that
does not follow the topology's dependencies. The message gives the checker's reason; statements
that name a left-out group are left out with it.
"""),
        _c("W5005", "port differs from ITBench's compiled file", """
The port compiles to a `scenario.yaml` or `groundtruth.yaml` that differs from ITBench's (YAML
loaded, key order ignored), or an injection argument has no counterpart in the fault it maps to.
The message names the first differing fields. docs/itbench-compat.md lists every such difference of
the reference scenarios with its reason.
"""),
        _c("W5006", "ITBench's mitigation task left out of the port", """
ITBench asks every SRE and FinOps scenario to diagnose and mitigate. Where undoing a fault means ending
a fault tool's object the agent's access never reaches (a Chaos Mesh Schedule or experiment: E2037), the
mitigation is a task the agent cannot perform, and the port poses the diagnosis alone (`tasks
diagnose`). The warning is at the injection; ITBench's ground truth and solutions are kept (the
solutions are the operator's).
"""),
        # -- import of ITBench CISO files (E5050-E5099, W5050-W5099): itbench_dsl/importer/ciso.py --
        _c("E5050", "unreadable ITBench CISO file", """
A file of the ITBench CISO scenario folder cannot be read: it is not UTF-8 text, it is larger
than 4 MiB, or it is not valid JSON (`info.json`, `input.json`) or YAML (`manifests/*.yaml`,
`tasks/*.yml`, `eval_config.yaml`). The diagnostic points at the place the parser stopped.

    {"name": "cis-b.5.2.5-gen", "goal": "Minimize ..."     # E5050: the object is never closed
"""),
        _c("E5051", "ITBench CISO file missing", """
The folder lacks a file its class needs: `info.json` always; `manifests/application.yaml` for the
Kubernetes classes (Gen-CIS-b-K8s-Kyverno, Gen-CIS-b-K8s-Kubectl-OPA, Upd-CIS-b-K8s-Kyverno);
`tasks/fault_inject.yml` for Gen-CIS-b-RHEL9-Ansible-OPA. Import the scenario's folder, with all
its files, not one file copied out of it.
"""),
        _c("E5052", "malformed ITBench CISO content", """
A file parses but does not have the shape ITBench gives it: `info.json` must be an object with
non-empty strings `name`, `scenario_type` and `goal`; a manifest document must be a mapping with
`apiVersion`, `kind` and `metadata.name`; `eval_config.yaml` holds a mapping whose
`check_violations` is a list of checks, each naming a `resource` by `kind` and `name`.

    {"name": "cis-b.5.2.5-gen", "scenario_type": "Gen-CIS-b-K8s-Kyverno"}   # E5052: no `goal`
"""),
        _c("E5053", "unknown ITBench CISO scenario class", """
`scenario_type` in `info.json` is not one of ITBench's CISO classes: Gen-CIS-b-K8s-Kyverno (task
`kyverno_policy`), Gen-CIS-b-K8s-Kubectl-OPA (`opa_kubectl`), Gen-CIS-b-RHEL9-Ansible-OPA
(`ansible_opa`) and Upd-CIS-b-K8s-Kyverno (`kyverno_update`). The class decides what the agent
writes, so the import cannot guess it. The comparison ignores case.
"""),
        _c("E5054", "policy gap the language cannot express", """
The scenario's gap has no counterpart in the language: no object of `manifests/application.yaml`
is of a kind the language declares (Deployment, StatefulSet, ServiceAccount), or the RHEL9
injection tasks set no setting of a catalogue host control (docs/ciso.md: sshd settings,
login.defs, auditd) to a non-compliant value. Without a gap the scenario would test nothing, so
nothing is written. Extend the catalogue, or port the scenario by hand with a control that exists.
"""),
        _c("W5050", "ITBench object left out of the import", """
An object of the ITBench scenario (a Pod, a Role, an existing Kyverno policy, ...) is of a kind the
language cannot declare, so the imported scenario does not have it. The compiled scenario then
differs from ITBench's: check whether the gap still opens without it. Existing policies of the
update class come from a catalogue control in the language (docs/ciso.md, *update from*).
"""),
        _c("W5051", "ITBench field left out of the import", """
A field of an imported object (a probe, a volume, an environment variable read from a source the
language does not name, ...) has no counterpart in the language's topology statements; the
imported object is written without it. If the field is what opens the policy gap, the imported
scenario no longer tests the same thing: port it by hand.
"""),
        _c("W5053", "ITBench Pod imported as a Deployment", """
The language declares workloads, not bare Pods, so an ITBench manifest's Pod is imported as a
Deployment of one replica with the same pod spec (its name, service account, containers and
security context). Kyverno applies a policy written for Pods to a Deployment's pod template as
well (its rule auto-generation), so the same policy reports the same gap; ITBench's evaluation
config then names a Deployment where it named a Pod.
"""),
        _c("W5054", "compliant object added by the import", """
ITBench's scenario deploys only the objects that open the gap, and its evaluation grades only
those: a policy that fails every object scores as well as a right one. A scenario here must also
name an object that stays compliant (`itbench check` refuses one without, E4004), so for a
catalogue control the import adds, for each gap object, a copy of it with the fields the control
reads set as the catalogue's compliant example sets them (its own name and label values, nothing
else changed: the pair differs in what the control reads alone, so no policy tells them apart by
anything else); where no copy can be made (a control that declares no fields it reads), the
catalogue's compliant example itself. Replace it with an object of the scenario's own application
if one fits better.
"""),
        _c("W5052", "inconsistent ITBench CISO file", """
Two parts of the ITBench scenario disagree, or one disagrees with its class: `incident_type`
does not match `scenario_type`, the injection sets another value than the catalogue control's
violating one, `inventory_host` is not an inventory group name, or `eval_config.yaml` checks a
resource the manifests do not declare. The import follows the class and the catalogue, and says
which value it kept.
"""),
        # -- generators (E6001-E6099, W6001-W6099): itbench_dsl/variants/ --
        _c("E6001", "unknown param", """
A value written `param(NAME)` stands for the value of the scenario's `param NAME`: its default,
or its first value when it has no default. `itbench generate --with sweep` (every value of the
domain) and `--with sample` (seeded draws) produce variants by changing it. NAME must be declared
in the same scenario.

    param loss in [10%, 25%, 50%] default 25%
    fault network_chaos on deployment "payment" {
      action = loss
      loss = param(loss)          # param(los) would be E6001
    }
"""),
        _c("E6002", "a generator failed", """
`itbench generate` ran a generator that raised an error or returned something that is not a
scenario. Nothing is written. The message names the generator and its input; a built-in generator
failing is a bug in itbench, a third-party one (registered under the entry-point group
`itbench.generators`) a bug in that package. See docs/generators.md for the plugin API.
"""),
        _c("E6003", "a run produced no variant", """
`itbench generate` ended with no variant to write: every input was skipped by a generator of the
chain (`--with retarget,sweep` on scenarios that declare no `param`: `sweep` has nothing to vary),
or every variant duplicated an input. The message names the first generator that made nothing and
its most frequent reasons. Nothing is written and the exit code is 1, so that a job that expects
variants does not go on with none. Choose generators that apply to the inputs (`sweep` and `sample`
need `param` statements; docs/generators.md).
"""),
        _c("W6001", "a generator skipped an input", """
A generator could not produce a valid variant from this input and says why: `sweep` and `sample`
need `param` statements used as `param(NAME)`, `retarget` needs another object that meets the
fault's preconditions, `compose` needs a second scenario on the same topology whose faults can
coexist with this one's, and any generated variant that fails `itbench check` (including
self-validation) is skipped with the first error it raised. Nothing is wrong with the input; it
is a warning, so it does not change the exit code.
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
