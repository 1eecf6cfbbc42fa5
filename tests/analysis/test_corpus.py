"""The adversarial corpus (itbench_dsl/analysis/corpus.py): it holds every class of trick for every scenario, and it
has teeth: an evaluator weakened the way the scorer once was (an inequality with the faulty value, names
matched by prefix, a missing kind taken as absent, the gap graded alone) is caught by `itbench check`."""

from __future__ import annotations

import copy
from functools import cache
from pathlib import Path

import pytest

from itbench_dsl.analysis import corpus, states
from itbench_dsl.compiler import compile_source
from itbench_dsl.analysis.corpus import FAIL, PASS, UNUSABLE, all_cases
from itbench_dsl.diagnostics import Diagnostics
from itbench_dsl.runtime import evaluator as runtime

ROOT = Path(__file__).resolve().parents[2]
LIBRARY = {p.stem: p for p in sorted((ROOT / "scenarios").rglob("*.itb"))}


@cache
def scenario(name: str):
    return compile_source(LIBRARY[name].read_bytes(), str(LIBRARY[name]), Diagnostics()).scenario


def names(name: str) -> dict[str, str]:
    return {case.name: case.want for case in all_cases(scenario(name))[1]}


@pytest.mark.parametrize("name", [n for n in LIBRARY if "/sre/" in str(LIBRARY[n])])
def test_every_sre_scenario_has_every_class_of_case(name):
    from itbench_dsl import tasks

    cases = names(name)
    wants = set(cases.values())
    s = scenario(name)
    posed = tasks.posed(s)
    # the states (and the inputs a grader must refuse) grade a mitigation: a diagnosis-only scenario has none
    # (the Chaos Mesh ones, whose repair the agent cannot perform: E2037)
    assert wants == ({PASS, FAIL, UNUSABLE} if "mitigate" in posed else {PASS, FAIL})
    if not s.injections():
        return
    for must in ("the healthy state", "the solved state", "the faulty state",
                 "the faulty state with every pod reporting ready and no alert",
                 "the solved state as an API server returns it") if "mitigate" in posed else ():
        assert must in cases, must
    if s.root_causes and "diagnose" in posed:
        for must in ("the perfect diagnosis", "an empty answer", "an answer with no `entities`",
                     "every object named as a root cause",
                     "the perfect diagnosis with each root cause spelled three ways"):
            assert must in cases, must
        assert any(n.startswith("an object that exists nowhere") for n in cases)
    if s.root_causes and "localize" in posed:
        # the same tricks on a localization: every object at once, a ghost, the causes spelled other ways
        for must in ("the perfect localization", "a localization that names nothing",
                     "every object named as a root cause (localization)",
                     "the perfect localization with each root cause spelled three ways"):
            assert must in cases, must
        assert any(n.startswith("an object that exists nowhere") and n.endswith("(localization)") for n in cases)


def test_the_corpus_of_a_field_fault_tries_other_wrong_values():
    cases = names("otel-ad-modified-target-port")
    assert cases["ad: spec.ports.[name=tcp-service].targetPort set to another wrong value"] == FAIL
    assert cases["ad: spec.ports.[name=tcp-service].targetPort set to the container's port name `service`"] == PASS
    flag = names("otel-ad-failure-flag")
    assert any("kept faulty in re-serialised data" in n for n in flag)


def _problems(name: str) -> list[tuple[str, str]]:
    return corpus.self_validate(scenario(name))


def test_sound_on_these_scenarios():
    for name in ("otel-ad-modified-target-port", "otel-checkout-payment-network-loss", "otel-ad-failure-flag",
                 "cis-k8s-5-2-2-privileged-kyverno"):
        assert _problems(name) == [], name


def test_it_catches_an_inequality_with_the_faulty_value(monkeypatch):
    """The old rule: a field is fixed when it no longer holds the faulty value (9999 -> 9998 passed)."""
    def inequality(entry, state):
        obj = state.get(entry["object"])
        if obj is None:
            return False, "missing"
        still = [c for c in entry["changes"] if runtime.at(obj, c["path"]) == c.get("faulty")]
        return not still, "inequality"

    monkeypatch.setattr(runtime, "field_check", inequality)
    monkeypatch.setattr(runtime, "service_check", lambda ref, state: (True, "not checked"))
    monkeypatch.setattr(runtime, "_unjudged_ports", lambda service, m: [])  # health.application's faulted ports
    problems = _problems("otel-ad-modified-target-port")
    assert problems and problems[0][0] == "E4004" and "set to another wrong value (must fail)" in problems[0][1]


def test_it_catches_names_matched_by_prefix(monkeypatch):
    """The old rule: ITBench's filters credited any name they match (`ad-other` for `ad`)."""
    original = runtime.Names._resolve

    def by_prefix(self, text, kind_hint):
        found = original(self, text, kind_hint)
        if found:
            return found
        namespace, kind, name = runtime.parse_name(text)
        return {k for n, keys in self.by_name.items() if name.startswith(n) for k in keys
                if kind is None or k[0] == self.kind_of(kind)}

    monkeypatch.setattr(runtime.Names, "_resolve", by_prefix)
    problems = dict(_problems("otel-checkout-nonexistent-image"))
    assert "E4005" in problems and "exists nowhere" in problems["E4005"]


def test_it_catches_missing_kinds_taken_as_absent(monkeypatch):
    monkeypatch.setattr(runtime, "required_missing", lambda spec, st: [])
    problems = dict(_problems("otel-frontend-ingress-blocked"))  # a NetworkPolicy: not in `kubectl get all`
    assert "`kubectl get all` (must refuse)" in problems["E4004"]


def test_it_catches_the_gap_graded_alone(monkeypatch):
    original = runtime.ciso

    def gap_only(spec, verdicts, checks, metrics, gap_only, source):
        score = original(spec, verdicts, checks, metrics, gap_only, source)
        checks[:] = [c for c in checks if not c["id"].startswith("ciso.compliant.")]
        return score

    monkeypatch.setattr(runtime, "ciso", gap_only)
    problems = dict(_problems("cis-k8s-5-2-2-privileged-kyverno"))
    assert "a deny-all policy's reports (must fail): it passed it" in problems["E4004"]


def test_it_catches_an_evaluator_that_trusts_the_pods_status(monkeypatch):
    """Fields not compared at all: every pod reporting ready is taken for a fix."""
    monkeypatch.setattr(runtime, "field_check", lambda entry, state: (True, "not checked"))
    problems = dict(_problems("shop-cart-modified-env"))  # an env var: no other check sees it
    assert "every pod reporting ready and no alert (must fail): it passed it" in problems["E4004"]


def test_it_catches_a_chain_graded_without_direction(monkeypatch):
    """The old rule: common subsequences of paths credited a reversed chain, or one junk edge out of the root
    cause, with one node of two (0.5, a pass)."""
    original = runtime.edge_stats

    def undirected(truth, predicted):
        return original(truth + [(b, a) for a, b in truth], predicted + [(b, a) for a, b in predicted])

    monkeypatch.setattr(runtime, "edge_stats", undirected)
    problems = dict(_problems("otel-checkout-nonexistent-image"))
    assert "the propagation chain reversed (must fail): it passed it" in problems["E4005"]


def test_it_catches_a_pod_credited_whatever_the_state_holds(monkeypatch):
    """`itbench run` once graded the diagnosis without the state: a pod named like the root cause's pods,
    that does not exist, was credited."""
    monkeypatch.setattr(runtime.Names, "_offline_pod", lambda self, namespace, name: (
        {("Pod", namespace, name)} if runtime.owner_from_name(name, namespace, self.workloads, self.static) else set()))
    problems = dict(_problems("otel-checkout-nonexistent-image"))
    assert "a pod that does not exist" in problems["E4005"]


@pytest.mark.parametrize("name", [n for n in LIBRARY if "/sre/" in str(LIBRARY[n])])
def test_every_chain_is_attacked_by_direction(name):
    from itbench_dsl import tasks
    from itbench_dsl.analysis.corpus import _chain_nodes

    s = scenario(name)
    spec, cases = all_cases(s)
    if not (s.root_causes and "diagnose" in tasks.posed(s) and any(_chain_nodes(spec))):
        return
    wants = {c.name: c.want for c in cases}
    # every chain with a direction (a cycle through aliases reads the same both ways)
    assert wants.get("the right root causes with the propagation chain reversed", FAIL) == FAIL
    assert wants["the perfect diagnosis with every edge given twice"] == PASS
    assert any(n.startswith("the right root causes with one invented edge") for n in wants)


def test_it_catches_an_optimum_read_off_the_first_item(monkeypatch):
    """The old rule: `spec.metrics.resource.target.averageUtilization` read the first metric, so a cpu metric
    put before the faulty memory one passed."""
    original = runtime.lookup
    monkeypatch.setattr(runtime, "lookup", lambda obj, path: original(obj, [s for s in path if not isinstance(s, list)]))
    monkeypatch.setattr(runtime, "hpa_target_path", lambda optimum: None)  # the figure read as `lookup` reads it
    problems = dict(_problems("otel-frontend-hpa-misconfigured"))
    assert "a twin holding the optimum put first (must fail): it passed it" in problems["E4004"]


def test_it_catches_an_autoscaler_graded_by_one_metrics_text(monkeypatch):
    """The old rule: the optimum's metric read alone, so a second metric at 1% (the controller takes the largest
    replica count its metrics propose) passed and the equivalent AverageValue target failed."""
    monkeypatch.setattr(runtime, "hpa_target_path", lambda optimum: None)
    spec, cases = all_cases(scenario("otel-frontend-hpa-misconfigured"))
    wrong, indexed = set(), {}
    for case in cases:  # every case graded wrongly (self_validate's message names three per kind)
        if not case.run(spec, indexed)[0]:
            wrong.add(case.name)
    assert any(name.endswith("a second autoscaler metric, cpu at 1%") for name in wrong), sorted(wrong)
    assert any(name.endswith("the optimal target as the equivalent AverageValue 200Mi") for name in wrong), sorted(wrong)


def test_a_finops_control_is_answered_by_naming_nothing():
    cases = {c.name: c for c in all_cases(scenario("otel-autoscaling-spend-false-alarm"))[1]}
    assert cases["a control's answer that names nothing"].want == PASS
    assert _problems("otel-autoscaling-spend-false-alarm") == []


def test_it_catches_a_detection_time_taken_on_trust(monkeypatch):
    """The old rule: `noticed_at` alone, so a detection written hours late and backdated into the window passed."""
    original = runtime.detect_task
    monkeypatch.setattr(runtime, "detect_task", lambda spec, answer, injected_at, checks, metrics, answered_at=None:
                        original(spec, answer, injected_at, checks, metrics))
    problems = dict(_problems("hotel-reservation-mongodb-geo-revoked-role"))
    assert "written after the window and backdated into it (must fail): it passed it" in problems["E4005"]


def test_it_catches_rbac_read_from_one_rule(monkeypatch):
    """The old rule: a rule naming the verb and the resource was taken as a grant, whatever its resourceNames
    and whoever its binding binds."""
    monkeypatch.setattr(runtime, "rule_allows", lambda rule, verb, group, resource, subresource, name: (
        verb in rule.get("verbs", []) and resource in rule.get("resources", [])))
    monkeypatch.setattr(runtime, "binds", lambda binding, user, groups, namespace: True)
    monkeypatch.setattr(runtime, "grants_kept", lambda entries, state: [])  # the safeguard reads the same authorizer
    problems = _problems("k8sbench-fix-rbac-wrong-resource")
    # every binding taken to bind every subject also restores the role through any role that names the request
    # (a Role's rules are judged by the access they give), so the faulty state itself is passed
    assert any(code == "E4004" and ("restricted by resourceNames (must fail): it passed it" in message
                                    or "the faulty state (must fail): it passed it" in message)
               for code, message in problems), problems


@pytest.mark.parametrize("name, neutralised", [
    ("sregym-network-policy-block", "kept beside a policy admitting all to every pod (must pass)"),
    ("bookinfo-gateway-denies-get", "kept, AUDIT (must pass)"),
    ("bookinfo-productpage-strict-mtls", "kept, PERMISSIVE (must pass)"),
])
def test_it_catches_created_policies_judged_by_presence(monkeypatch, name, neutralised):
    """The old rule: an Istio policy was judged by its presence, a NetworkPolicy alone (a second policy that
    admits what it blocks, the union Kubernetes makes, was no fix)."""
    monkeypatch.setattr(runtime, "acts", lambda obj, state=None, fault=None: obj.get("kind") != "NetworkPolicy"
                        or runtime._isolates(obj))
    problems = _problems(name)
    assert any(code == "E4004" and neutralised in message for code, message in problems), problems


@pytest.mark.parametrize("name, attribute, weakened, case", [
    ("otel-payment-cordoned-node", "placed_parts", lambda fault, parts, state: parts,
     "pods scheduled on kind-worker, the node they are pinned to (must pass)"),
    ("otel-payment-unschedulable-anti-affinity", "placed_parts", lambda fault, parts, state: parts,
     "undone by removing its DaemonSet alone, the anti-affinity left (must pass)"),
    ("otel-cart-service-target-port", "resolved_ports", lambda obj, path, state, observed, expected: (observed, expected),
     "set to the container's port name `service` (must pass)"),
])
def test_it_catches_faults_judged_by_their_parts_not_their_effect(monkeypatch, name, attribute, weakened, case):
    """The old rules: a scheduling fault undone only when every part is, a predicate reading a named target port
    as text. (A Role's access restored through another role: tests/runtime/test_mitigation_effects.py, as the
    library's one RBAC fault is graded by a `can` predicate that hides it from the corpus.)"""
    monkeypatch.setattr(runtime, attribute, weakened)
    problems = _problems(name)
    assert any(code == "E4004" and case in message for code, message in problems), problems


@pytest.mark.parametrize("name, kind", [("otel-ad-failure-flag", "ConfigMap"), ("otel-grafana-corrupted-secret", "Secret")])
def test_it_catches_configuration_judged_by_name(monkeypatch, name, kind):
    """The old rule: a ConfigMap or Secret judged by its name, not by what the workloads read, so a new one with
    the healthy data the workload reads failed and the named one restored while the workload reads a faulty copy
    passed."""
    monkeypatch.setattr(runtime, "field_check", lambda entry, state: runtime._fields_hold(
        {k: v for k, v in entry.items() if k != "readers"}, None, state))
    problems = " ".join(text for _, text in _problems(name))
    assert f"a new {kind} with the healthy data, its readers pointed at it, the named one left faulty (must pass): " \
           "it failed it" in problems
    assert f"the named {kind} restored, its readers pointed at a copy holding the faulty data (must fail): " \
           "it passed it" in problems


def test_it_catches_a_deleted_configmap_judged_by_name(monkeypatch):
    """The old rule: a ConfigMap the fault deleted is back when one of its name holds its data (and exists when
    one of its name does), so a copy its readers read under another name failed, and the named one restored while
    the readers read a copy holding other data passed."""
    monkeypatch.setattr(runtime, "restored_check", lambda entry, state: runtime._restored_named(entry, state))
    original = runtime.predicate_check
    monkeypatch.setattr(runtime, "predicate_check", lambda pred, state, created=None: original(
        {k: v for k, v in pred.items() if k != "readers"}, state, created))
    problems = " ".join(text for _, text in _problems("sregym-missing-configmap-social-network"))
    assert "recreated under another name with its healthy data, its readers pointed at it, the named ConfigMap left " \
           "deleted (must pass): it failed it" in problems
    assert "the named ConfigMap restored, its readers pointed at a new one holding other data (must fail): " \
           "it passed it" in problems


def test_it_catches_flagd_flags_read_off_the_named_configmap(monkeypatch):
    """The old rule: the safeguard read flagd's flags off `flagd-config` by name, whatever flagd reads."""
    original = runtime.flags_kept
    monkeypatch.setattr(runtime, "flags_kept", lambda entries, state: original(
        [{k: v for k, v in e.items() if k != "readers"} for e in entries], state))
    problems = " ".join(text for _, text in _problems("otel-checkout-nonexistent-image"))
    assert "the flags moved to a new ConfigMap flagd is pointed at, flag adFailure turned to on there, the named " \
           "one left healthy (must fail): it passed it" in problems
    assert "which flagd no longer reads (must pass): it failed it" in problems


def _wrong(name: str, weaken=None) -> list[str]:
    """The cases of a scenario's corpus its evaluator grades wrongly, by name (`weaken`: an edit of its spec)."""
    spec, cases = all_cases(scenario(name))
    if weaken is not None:
        spec = copy.deepcopy(spec)
        weaken(spec)
    out = []
    for case in cases:
        try:
            verdict = runtime.evaluate(spec, case.answer, case.state, task=case.task, artifact=case.artifact,
                                       injected_at=case.injected_at, answered_at=case.answered_at)
            got = PASS if verdict["passed"] else FAIL
        except runtime.InputError:
            got = UNUSABLE
        if got != case.want:
            out.append(case.name)
    return out


def test_it_catches_other_workloads_judged_by_readiness_alone(monkeypatch):
    """The old rule: a workload neither the faults act on nor the ground truth names was only read as ready, so
    a database switched to `sleep infinity`, another resolver on its pods, a squeezed limit passed."""
    def weaken(spec):
        m = spec["mitigation"]
        m.pop("application")
        for entry in m["programs"]:
            for key in runtime.POD_BEHAVIOUR:
                entry["keep"]["spec"]["template"]["spec"].pop(key, None)

    # stability read for the workloads health.ready reads only
    original, ready = runtime.settled_problem, {r["name"] for r in all_cases(
        scenario("sregym-network-policy-block"))[0]["mitigation"]["ready"]}
    monkeypatch.setattr(runtime, "settled_problem", lambda obj, state: original(obj, state) if (
        obj.get("metadata") or {}).get("name") in ready else None)
    wrong = " | ".join(_wrong("sregym-network-policy-block", weaken))
    for what in ("with its container's command replaced by `sleep infinity`", "with its container's image replaced "
                 "by busybox", "with its pods given dnsPolicy Default", "OOM-killed after the fix",
                 "its pods given an outside resolver beside the fix"):
        assert what in wrong, what


def test_it_catches_other_configuration_limits_added_and_storage_swapped(monkeypatch):
    """The old rule: another workload's ConfigMap was judged only while nothing read it, a limit only where one
    existed, a claim only while the template named it; so a reader's configuration rewritten or re-pointed, a
    1Mi limit added, a database's claim swapped for an emptyDir, passed."""
    for name in ("configs_kept", "floors_kept", "storage_kept"):
        monkeypatch.setattr(runtime, name, lambda entries, state: [])
    wrong = " | ".join(_wrong("sregym-missing-configmap-social-network") + _wrong("sregym-network-policy-block"))
    for what in ("which another workload reads as a file, rewritten", "pointed at a copy holding other data",
                 "given a memory limit of 1Mi where it had none", "given a CPU limit of 1m where it had none",
                 "given a pod-level memory limit of 1Mi", "swapped for an emptyDir", "swapped for a hostPath",
                 "no longer mounted"):
        assert what in wrong, what


def test_it_catches_a_controls_pod_spec_read_by_its_containers_alone(monkeypatch):
    """The old rule: a control compared only the containers' program and inputs, so `dnsPolicy: Default` (the
    fault another scenario injects) made on a healthy system passed."""
    monkeypatch.setattr(runtime, "program_kept", lambda keep, obj, options=None: True)
    monkeypatch.setattr(runtime, "_POD_SECTION", None)
    monkeypatch.setitem(runtime.CLOSED_SECTIONS, "Deployment", [["spec", "selector"],
                                                                ["spec", "template", "spec", "containers"]])
    wrong = " | ".join(_wrong("hotel-reservation-noop-detection"))
    assert "pods are given dnsPolicy Default" in wrong and "pods are given an outside resolver" in wrong


def test_it_catches_autoscalers_read_by_name(monkeypatch):
    """The old rule: only the topology's autoscaler, by name, so a second one on the same workload (the HPA
    controller then scales neither: AmbiguousSelector) passed."""
    monkeypatch.setattr(runtime, "shared_autoscalers", lambda spec, state: [])
    wrong = _wrong("otel-frontend-hpa-misconfigured")
    assert "frontend: a second autoscaler on its workload, the faulty target kept" in wrong
    assert "frontend: a second autoscaler on its workload, a copy of the fixed one" in wrong


def test_a_bare_pod_is_attacked_by_its_replacement():
    """A bare pod is fixed by replacing it: the corpus tries it recreated healthy (a fix), deleted (none), and
    being deleted (none)."""
    cases = names("k8sbench-fix-image-pull-bare-pod")
    assert cases["the solved state, pod app deleted and created again healthy"] == PASS
    assert cases["the solved state, pod app deleted and not created again"] == FAIL
    assert cases["the solved state, app being deleted"] == FAIL
    # recreated as `kubectl run` makes it (its one container named after the pod): the fix; running `sleep
    # infinity` instead of its image's program: none
    assert cases["the solved state, pod app recreated by `kubectl run` (its container named after it)"] == PASS
    assert cases["the solved state, pod app recreated running `sleep infinity`"] == FAIL
    assert _problems("k8sbench-fix-image-pull-bare-pod") == []


def test_another_workloads_environment_containers_and_pod_side_ports_are_attacked():
    """Another workload's environment (an address pointed at nothing fails, the same Service spelled in full
    passes), a container or init container added, its one container renamed; a Service's named targetPort
    broken from the pods' side; a Service made node-local."""
    cases = names("otel-accounting-scaled-to-zero")
    want = {
        "the fix leaves another workload, ad, with its container ad's OTEL_COLLECTOR_NAME pointed at an address that "
        "names no Service": FAIL,
        "another workload, ad: its container ad's OTEL_COLLECTOR_NAME spelled with the Service's full name": PASS,
        "the fix leaves another workload, ad, with a container added": FAIL,
        "the fix leaves another workload, ad, with an init container added": FAIL,
        "another workload, ad: its one container renamed": PASS,
        "the fix leaves the container port grafana Service grafana names renamed": FAIL,
        "the fix leaves the container port grafana Service grafana names made another protocol": FAIL,
        "Service ad made node-local (internalTrafficPolicy Local), its clients on another node": FAIL,
        "Service ad made node-local (internalTrafficPolicy Local), every pod on one node": PASS,
    }
    assert {k: cases.get(k) for k in want} == want
    assert _problems("otel-accounting-scaled-to-zero") == []



def test_a_dns_fault_leaves_the_whole_resolver_to_its_own_check():
    """`dnsPolicy` and `dnsConfig` are one setting (the resolver the kubelet writes from both): where a fault
    changes one, the program check keeps neither, so `None` with the cluster's nameserver, searches and ndots,
    which the fault's check reads as the cluster's resolver, is no change of program."""
    spec, _ = all_cases(scenario("otel-frontend-failing-dns-policy"))
    for entry in spec["mitigation"]["programs"]:
        if entry["object"]["name"] == "frontend":
            pod = entry["keep"]["spec"]["template"]["spec"]
            assert "dnsPolicy" not in pod and "dnsConfig" not in pod, pod
    assert names("otel-frontend-failing-dns-policy")[
        "frontend: dnsPolicy None with the cluster DNS Service's IP, the namespace's searches and ndots:5"] == PASS
    assert _problems("otel-frontend-failing-dns-policy") == []


def _mitigated(name: str):
    """A library scenario posing `mitigate` beside its diagnosis, the prompt handing the agent Chaos Mesh's
    kinds (tests/runtime/test_evaluator.MITIGATED)."""
    import sys

    sys.path.insert(0, str(ROOT / "tests" / "runtime"))
    from test_evaluator import MITIGATED, bundle

    return bundle(name + MITIGATED)[0]


@pytest.mark.parametrize("name, musts", [
    ("otel-checkout-payment-network-loss+", {
        "Schedule postgresql-main kept, selecting no pod": PASS,
        "Schedule postgresql-main kept, its mode picking no pod (fixed, value 0)": PASS,
        "Schedule postgresql-main kept, its target picking no peer (fixed-percent, value 0)": PASS,
        "Schedule postgresql-main kept, a loss of 0 %": PASS,
        "Schedule postgresql-main kept, a loss of 30 %": FAIL,
        "Schedule postgresql-main deleted, a copy with its selector and target swapped (the same pods cut apart "
        "the other way)": FAIL,
        "Schedule postgresql-main deleted, a copy partitioning what it dropped": FAIL}),
    ("otel-checkout-insufficient-quota", {
        "ResourceQuota prometheus-main deleted, a stricter quota (one pod fewer)": FAIL,
        "ResourceQuota prometheus-main deleted, a quota of its amounts under their other names": FAIL,
        "ResourceQuota prometheus-main deleted, a quota of its amounts beside another key": FAIL}),
    ("sregym-namespace-memory-limit", {
        "ResourceQuota memory-quota deleted, a quota of its amounts under their other names": FAIL,
        "ResourceQuota memory-quota deleted, a quota of its amounts beside another key": FAIL}),
])
def test_created_objects_are_attacked_by_their_effect(name, musts):
    """A chaos object or a quota the fault created, edited in place or replaced, is graded by what it still
    does: neutralised it passes, its harm done otherwise (the other way round, a partition, a stricter or
    respelled quota) it fails."""
    s = _mitigated(name.rstrip("+")) if name.endswith("+") else scenario(name)
    spec, cases = all_cases(s)
    found = {c.name: c for c in cases}
    for what, want in musts.items():
        assert what in found and found[what].want == want, what
        assert found[what].run(spec)[0], what

def test_a_dns_fault_undone_by_any_part_is_attacked_with_the_nodes_resolver():
    """A DNS fault undone by any part: its nameserver removed while the pods get `dnsPolicy: Default` (the
    node's resolver, no cluster Service) leaves it acting, and so does its dnsConfig restored alone beside its
    `None` (no nameserver at all); the cluster's policy restored beside the nameserver undoes it."""
    cases = names("sregym-wrong-dns-policy-hotel-reservation")
    assert cases["profile: dnsPolicy Default (the node's resolver), the fault's dnsConfig removed"] == FAIL
    undone = {name: want for name, want in cases.items() if name.startswith("`external_dns_resolver`")}
    assert [w for n, w in undone.items() if "dnsConfig.nameservers alone" in n] == [FAIL], undone
    assert [w for n, w in undone.items() if "dnsPolicy alone" in n] == [PASS], undone
    assert _problems("sregym-wrong-dns-policy-hotel-reservation") == []


def test_a_deleted_configmap_is_attacked_with_its_data_under_binary_data():
    """The kubelet writes a ConfigMap's `binaryData` keys as files like its `data` keys: the deleted ConfigMap
    recreated with its data under `binaryData` is back for readers that mount it."""
    assert names("sregym-missing-configmap-social-network")[
        "media-mongodb: recreated with its data under binaryData (read as files only)"] == PASS
    assert _problems("sregym-missing-configmap-social-network") == []


def test_a_fault_whose_harm_is_an_option_is_attacked_through_the_option():
    """The valkey password (`harm_option` `--requirepass`): the option taken out of the arguments or given an
    empty value, the variable and the Secret left, is a fix; another value is none."""
    cases = names("otel-valkey-cart-changed-password")
    assert cases["valkey-cart: the fault's --requirepass taken out of its arguments, the rest of its changes left"] == PASS
    assert cases["valkey-cart: the fault's --requirepass given an empty value, the rest of its changes left"] == PASS
    assert cases["valkey-cart: the fault's --requirepass given another value, the rest of its changes left"] == FAIL
    assert _problems("otel-valkey-cart-changed-password") == []


def test_it_catches_a_compliant_default_never_graded(monkeypatch):
    """A host leaving a setting to its program's default (sshd's `X11Forwarding no`) complies: a policy demanding
    the line spelled out is a false pass where no compliant host the grader builds leaves it out."""
    from itbench_dsl.ciso import rhel9

    name = "rhel9-sshd-x11-forwarding-ansible-opa"
    case = "that policy demanding the setting spelled out (a host leaving it to its compliant default)"
    assert names(name)[case] == FAIL
    assert _problems(name) == []
    variants = rhel9.HostControl.variants
    monkeypatch.setattr(rhel9.HostControl, "variants", lambda self, violating: [
        (c, f) for c, f in variants(self, violating) if violating or not c.startswith("without ")])
    assert [(code, case in message) for code, message in _problems(name)] == [("E4004", True)]


def test_a_probe_answered_by_a_pod_that_only_claims_the_workload_fails():
    name = "hotel-reservation-mongodb-geo-revoked-role"
    cases = names(name)
    assert cases["probe geo-roles: answered by the workload's own pod"] == PASS
    assert cases["probe geo-roles: answered by the agent's pod claiming the workload's ReplicaSet"] == FAIL
    assert cases["probe geo-roles: answered by a pod the state does not hold"] == FAIL
    assert _problems(name) == []
