"""`ciso.general` and `ciso.kept` grade a policy on variants of the scenario's objects in what the control
does not read (itbench_dsl/ciso/variation.py): images, container names and places, env-var and Secret key
names, the workload kind, the security fields beyond the control, a binding's subject. A policy keyed on
what the scenario's objects happen to share, kept to `containers[0]` or to Deployments, or allowing only the
hardened baseline's exact values fails; the control's own rule over every container and pod kind passes.
With the variants off (`VARIED = False`) the narrow policies pass: these tests fail without the mechanism."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
from support.sshd_rego import effective_rule

from itbench_dsl import ciso
from itbench_dsl.ciso import variation
from itbench_dsl.compiler import compile_source
from itbench_dsl.diagnostics import Diagnostics
from itbench_dsl.runtime import evaluator

REPO = Path(__file__).resolve().parents[2]
SCENARIOS = REPO / "scenarios" / "ciso"


def spec_of(name: str) -> dict:
    from itbench_dsl.analysis.corpus import all_cases

    path = SCENARIOS / f"{name}.itb"
    result = compile_source(path.read_bytes(), str(path), Diagnostics())
    return all_cases(result.scenario)[0]


def policy(*rules, name="agent-policy") -> dict:
    return {"apiVersion": "kyverno.io/v1", "kind": "ClusterPolicy", "metadata": {"name": name},
            "spec": {"validationFailureAction": "Audit", "background": True,
                     "rules": [dict(r, name=f"r{i}") for i, r in enumerate(rules)]}}


def pod_rule(validate, kinds=("Pod",), **extra) -> dict:
    return {"match": {"any": [{"resources": {"kinds": list(kinds)}}]}, **extra,
            "validate": {"message": "violates the control", **validate}}


def general(spec, artifact, varied=True) -> bool:
    old = evaluator.VARIED
    evaluator.VARIED = varied
    try:
        verdict = evaluator.evaluate(spec, None, None, task="policy", artifact=artifact)
    finally:
        evaluator.VARIED = old
    checks = {c["id"]: c for c in verdict["checks"]}
    return verdict["passed"], checks


PRIVILEGED = {"pattern": {"spec": {"containers": [{"=(securityContext)": {"=(privileged)": "false"}}],
                                   "=(initContainers)": [{"=(securityContext)": {"=(privileged)": "false"}}],
                                   "=(ephemeralContainers)": [{"=(securityContext)": {"=(privileged)": "false"}}]}}}
ROOT = ciso.CATALOGUE["cis-k8s-5.2.7"].validation  # the pod's setting or each container's

NARROW_522 = {
    "keyed on the image and the container's name": pod_rule(
        {"pattern": {"spec": {"containers": [{"name": "app", "securityContext": {"privileged": "false"}}]}}},
        preconditions={"all": [{"key": "{{ request.object.spec.containers[0].image }}", "operator": "Equals",
                                "value": ciso.k8s.IMAGE}]}),
    "the first container alone": pod_rule({"deny": {"conditions": {"any": [{
        "key": "{{ request.object.spec.containers[0].securityContext.privileged || `false` }}",
        "operator": "Equals", "value": True}]}}}),
    # `kubectl debug --profile=sysadmin` adds a privileged ephemeral container
    "containers and init containers alone": pod_rule({"pattern": {"spec": {
        "containers": [{"=(securityContext)": {"=(privileged)": "false"}}],
        "=(initContainers)": [{"=(securityContext)": {"=(privileged)": "false"}}]}}}),
    "Deployments alone": pod_rule({"pattern": {"spec": {"template": {"spec": {"containers": [
        {"=(securityContext)": {"=(privileged)": "false"}}]}}}}}, kinds=("Deployment",)),
    "an explicit privileged: false": pod_rule({"pattern": {"spec": {"containers": [
        {"securityContext": {"privileged": False}}]}}}),
    "the whole hardened baseline": pod_rule({"pattern": {"spec": {
        "automountServiceAccountToken": False,
        "securityContext": {"runAsNonRoot": True, "runAsUser": 101, "runAsGroup": 101,
                            "seccompProfile": {"type": "RuntimeDefault"}},
        "containers": [{"securityContext": {"allowPrivilegeEscalation": False, "privileged": False,
                                            "capabilities": {"drop": ["ALL"]}}}]}}}),
    # the feature or the baseline rather than the control: these flag compliant objects a cluster holds
    "another control's field required (allowPrivilegeEscalation, 5.2.6)": pod_rule({"pattern": {"spec": {
        "containers": [{"securityContext": {"allowPrivilegeEscalation": "false", "=(privileged)": "false"}}]}}}),
    "any env var besides privilege": pod_rule({"pattern": {"spec": {"containers": [
        {"X(env)": "null", "X(envFrom)": "null", "=(securityContext)": {"=(privileged)": "false"}}]}}}),
    "any volume besides privilege": pod_rule({"pattern": {"spec": {"X(volumes)": "null", "containers": [
        {"=(securityContext)": {"=(privileged)": "false"}}]}}}),
}

NARROW_527 = {
    "runAsUser exactly 101": pod_rule({"pattern": {"spec": {"securityContext": {"runAsUser": 101}}}}),
    "only an explicit runAsUser: 0": pod_rule({"pattern": {"spec": {"=(securityContext)": {"=(runAsUser)": "!0"}}}}),
    # where the setting lives: a container's own applies over the pod's
    "the pod's level alone (a non-root pod passes a root container)": pod_rule(
        {"pattern": {"spec": {"securityContext": {"runAsNonRoot": "true", "=(runAsUser)": ">0"}}}}),
    "an explicit pod-level runAsUser (runAsNonRoot alone flagged)": pod_rule(
        {"pattern": {"spec": {"securityContext": {"runAsUser": ">0"}}}}),
}


@pytest.fixture(scope="module")
def privileged():
    return spec_of("cis-k8s-5-2-2-privileged-kyverno")


@pytest.fixture(scope="module")
def root():
    return spec_of("cis-k8s-5-2-7-root-user-kyverno")


def test_the_variants_vary_what_the_control_does_not_read(privileged):
    varied = privileged["ciso"]["variants"]
    kinds = {o["kind"] for o in varied["gaps"]}
    assert {"Deployment", "StatefulSet", "DaemonSet", "Job", "Pod"} <= kinds
    pods = [variation._pod(o) for o in varied["gaps"]]
    assert any(p.get("initContainers") for p in pods), "a gap in an init container"
    assert any(len(p["containers"]) > 1 and not (p["containers"][0].get("securityContext") or {}).get("privileged")
               for p in pods), "a gap container behind a compliant sidecar"
    assert any(c["image"] != ciso.k8s.IMAGE for p in pods for c in p["containers"])
    ok = [variation._pod(o) for o in varied["compliant"]]
    assert any("privileged" not in (c.get("securityContext") or {}) for p in ok for c in p["containers"])
    assert any((p.get("securityContext") or {}).get("runAsUser") not in (None, 101) for p in ok)


@pytest.mark.parametrize("control", [c for c in ciso.k8s.CONTROLS], ids=lambda c: c.id)
def test_variants_keep_their_side_and_break_no_other_control(control):
    namespace = "ciso-target"
    for violating in (True, False):
        for obj in control.objects(namespace, violating):
            if bool(control.probe([obj])) != violating:
                continue  # context (a service account, a Secret)
            before = variation._violations(obj)
            for copy_ in variation.variants(control, obj, violating):
                assert bool(control.probe([copy_])) == violating
                if not violating:  # a read field never varied into a gap, no other control broken
                    assert variation._violations(copy_) <= before
    assert variation.variants(control, {"kind": "Deployment"}, True) == []


@pytest.mark.parametrize("control", [c for c in ciso.k8s.CONTROLS], ids=lambda c: c.id)
def test_relaxed_compliant_variants_stay_compliant_with_their_control(control):
    """Where no other control is graded (a new policy), the compliant side's hardened baseline is relaxed: the
    variants may break other controls, never their own."""
    for obj in control.objects("ciso-target", False):
        if control.probe([obj]):
            continue
        for copy_ in variation.variants(control, obj, False, other_controls_graded=False):
            assert not control.probe([copy_])


def test_variants_are_deterministic(privileged):
    assert privileged["ciso"]["variants"] == spec_of("cis-k8s-5-2-2-privileged-kyverno")["ciso"]["variants"]


@pytest.mark.parametrize("why", sorted(NARROW_522))
def test_a_narrow_privileged_policy_fails_general(privileged, why):
    artifact = ("kyverno", [policy(NARROW_522[why])])
    passed, checks = general(privileged, artifact)
    assert not passed and not checks["ciso.general"]["passed"], why
    passed_off, checks_off = general(privileged, artifact, varied=False)
    assert checks_off["ciso.general"]["passed"], "without the variants the twins alone do not catch it"


@pytest.mark.parametrize("why", sorted(NARROW_527))
def test_a_narrow_root_policy_fails_general(root, why):
    artifact = ("kyverno", [policy(NARROW_527[why])])
    passed, checks = general(root, artifact)
    assert not passed and not checks["ciso.general"]["passed"], why
    _, checks_off = general(root, artifact, varied=False)
    assert checks_off["ciso.general"]["passed"]


def test_gap_and_compliant_variants_place_a_shared_setting_at_either_level(root):
    varied = root["ciso"]["variants"]
    gaps = [variation._pod(o) for o in varied["gaps"]]
    assert any((p.get("securityContext") or {}).get("runAsNonRoot") is True
               and any((c.get("securityContext") or {}).get("runAsUser") == 0 for c in p["containers"])
               for p in gaps), "a root container under a non-root pod"
    ok = [variation._pod(o) for o in varied["compliant"]]
    assert any("runAsNonRoot" not in (p.get("securityContext") or {})
               and all((c.get("securityContext") or {}).get("runAsNonRoot") is True for c in p["containers"])
               for p in ok), "each container non-root, the pod saying nothing"
    assert any((p.get("securityContext") or {}).get("runAsNonRoot") is True
               and "runAsUser" not in (p.get("securityContext") or {}) for p in ok), "runAsNonRoot alone"


SECCOMP_POD_LEVEL = pod_rule({"pattern": {"spec": {"securityContext": {"seccompProfile": {"type": "RuntimeDefault"}}}}})


def test_a_pod_level_seccomp_policy_misses_an_unconfined_container():
    spec = spec_of("cis-k8s-5-7-2-seccomp-kyverno")
    gaps = [variation._pod(o) for o in spec["ciso"]["variants"]["gaps"]]
    assert any(((p.get("securityContext") or {}).get("seccompProfile") or {}).get("type") == "RuntimeDefault"
               and any(((c.get("securityContext") or {}).get("seccompProfile") or {}).get("type") == "Unconfined"
                       for c in p["containers"]) for p in gaps)
    passed, checks = general(spec, ("kyverno", [policy(SECCOMP_POD_LEVEL)]))
    assert not passed and not checks["ciso.general"]["passed"]
    _, checks_off = general(spec, ("kyverno", [policy(SECCOMP_POD_LEVEL)]), varied=False)
    assert checks_off["ciso.general"]["passed"]
    assert general(spec, ("kyverno", [policy(pod_rule(ciso.CATALOGUE["cis-k8s-5.7.2"].validation))]))[0]


def test_the_probes_read_a_containers_setting_over_the_pods():
    root, seccomp = ciso.CATALOGUE["cis-k8s-5.2.7"], ciso.CATALOGUE["cis-k8s-5.7.2"]
    pod = {"securityContext": {"runAsNonRoot": True, "runAsUser": 101, "seccompProfile": {"type": "RuntimeDefault"}},
           "containers": [{"name": "a", "securityContext": {}}]}
    deployment = {"kind": "Pod", "metadata": {"name": "p"}, "spec": pod}
    assert not root.probe([deployment]) and not seccomp.probe([deployment])
    pod["containers"][0]["securityContext"] = {"runAsUser": 0, "seccompProfile": {"type": "Unconfined"}}
    assert root.probe([deployment]) and seccomp.probe([deployment])
    pod["securityContext"] = {}
    pod["containers"][0]["securityContext"] = {"runAsNonRoot": True, "seccompProfile": {"type": "RuntimeDefault"}}
    assert not root.probe([deployment]) and not seccomp.probe([deployment])


def test_the_right_policies_pass(privileged, root):
    assert general(privileged, ("kyverno", [policy(pod_rule(PRIVILEGED))]))[0]
    assert general(root, ("kyverno", [policy(pod_rule(ROOT))]))[0]


def test_a_binding_policy_keyed_on_the_subject_or_the_compliant_role_fails():
    spec = spec_of("cis-k8s-5-1-1-cluster-admin-kyverno")
    right = pod_rule({"pattern": {"roleRef": {"name": "!cluster-admin"}}}, kinds=("ClusterRoleBinding",))
    assert general(spec, ("kyverno", [policy(right)]))[0]
    narrow = {
        "service-account subjects alone": dict(right, preconditions={"all": [
            {"key": "{{ request.object.subjects[0].kind }}", "operator": "Equals", "value": "ServiceAccount"}]}),
        "every binding must grant view": pod_rule({"pattern": {"roleRef": {"name": "view"}}},
                                                  kinds=("ClusterRoleBinding",)),
    }
    for why, rule in narrow.items():
        passed, checks = general(spec, ("kyverno", [policy(rule)]))
        assert not checks["ciso.general"]["passed"], why
        assert general(spec, ("kyverno", [policy(rule)]), varied=False)[1]["ciso.general"]["passed"], why


def test_an_update_narrowed_to_a_baseline_value_loses_kept():
    from itbench_dsl.analysis.corpus import _perfect_policy, all_cases

    path = SCENARIOS / "cis-k8s-5-2-7-root-user-kyverno-update.itb"
    scenario = compile_source(path.read_bytes(), str(path), Diagnostics()).scenario
    spec = all_cases(scenario)[0]
    good = _perfect_policy(scenario, spec)
    assert evaluator.evaluate(spec, None, None, task="policy", artifact=("kyverno", [good]))["passed"]
    for key, value in (("{{ request.object.spec.securityContext.runAsGroup || `0` }}", 101),
                       ("{{ request.object.spec.containers[0].ports[0].containerPort || `0` }}", 8080)):
        narrowed = copy.deepcopy(good)
        for rule in narrowed["spec"]["rules"]:
            if not rule["name"].startswith("check"):
                rule["preconditions"] = {"all": [{"key": key, "operator": "Equals", "value": value}]}
        verdict = evaluator.evaluate(spec, None, None, task="policy", artifact=("kyverno", [narrowed]))
        kept = next(c for c in verdict["checks"] if c["id"] == "ciso.kept")
        assert not kept["passed"], key


def _narrowed_kept(edit) -> dict:
    """ciso.kept of the 5.2.12 update's perfect policy with its old rules (not the `check` ones) edited."""
    from itbench_dsl.analysis.corpus import _perfect_policy, all_cases

    path = SCENARIOS / "cis-k8s-5-2-12-host-path-kyverno-update.itb"
    scenario = compile_source(path.read_bytes(), str(path), Diagnostics()).scenario
    spec = all_cases(scenario)[0]
    narrowed = copy.deepcopy(_perfect_policy(scenario, spec))
    for rule in narrowed["spec"]["rules"]:
        if not rule["name"].startswith("check"):
            edit(rule)
    verdict = evaluator.evaluate(spec, None, None, task="policy", artifact=("kyverno", [narrowed]))
    return next(c for c in verdict["checks"] if c["id"] == "ciso.kept")


def test_an_update_keeping_what_it_checked_keeps_kept():
    assert _narrowed_kept(lambda rule: None)["passed"]


@pytest.mark.parametrize("why,kind", [("to Deployments", "StatefulSet"), ("to RuntimeDefault pods", "Deployment")])
def test_an_old_rule_narrowed_to_the_kept_objects_kind_or_baseline_loses_kept(why, kind):
    def edit(rule):
        if why == "to Deployments":  # the same check, on Deployments' pod templates alone
            for entry in rule["match"].get("any") or [rule["match"]]:
                entry["resources"]["kinds"] = ["Deployment"]
            pattern = rule["validate"]["pattern"]
            rule["validate"]["pattern"] = {"spec": {"template": pattern}}
        else:
            rule["preconditions"] = {"all": [{
                "key": "{{ request.object.spec.securityContext.seccompProfile.type || '' }}",
                "operator": "Equals", "value": "RuntimeDefault"}]}
    kept = _narrowed_kept(edit)
    assert not kept["passed"] and kind in kept["detail"], kept["detail"]


@pytest.mark.parametrize("name", ["cis-k8s-5-2-7-root-user-kyverno-update", "cis-k8s-5-2-12-host-path-kyverno-update"])
def test_an_update_whose_new_rules_are_narrowed_to_unread_baseline_values_fails_general(name):
    """The gap objects' variants vary what the control does not read too (their group id, their ports): a
    precondition that holds on the gap objects alone no longer narrows the new rules to them."""
    from itbench_dsl.analysis.corpus import _perfect_policy, all_cases

    path = SCENARIOS / f"{name}.itb"
    scenario = compile_source(path.read_bytes(), str(path), Diagnostics()).scenario
    spec = all_cases(scenario)[0]
    good = _perfect_policy(scenario, spec)
    assert evaluator.evaluate(spec, None, None, task="policy", artifact=("kyverno", [good]))["passed"]
    pod = "request.object.spec.template.spec || request.object.spec"
    for key, operator, value in ((f"{{{{ ({pod}).securityContext.runAsGroup || `0` }}}}", "Equals", 101),
                                 (f"{{{{ ({pod}).containers[].ports[].containerPort || `[]` }}}}", "AnyIn", [8080]),
                                 (f"{{{{ to_string(({pod}).automountServiceAccountToken) }}}}", "Equals", "false")):
        narrowed = copy.deepcopy(good)
        for rule in narrowed["spec"]["rules"]:
            if rule["name"].startswith("check"):  # the rules the update adds
                rule["preconditions"] = {"all": [{"key": key, "operator": operator, "value": value}]}
        verdict = evaluator.evaluate(spec, None, None, task="policy", artifact=("kyverno", [narrowed]))
        general_check = next(c for c in verdict["checks"] if c["id"] == "ciso.general")
        assert not verdict["passed"] and not general_check["passed"], key


# a control the scenario declares with two requirements (no root, a trusted registry) and no catalogue twin: the
# gap object violates both, so gap variants violating each alone grade a policy that checks only one
TRUSTED = pod_rule({"deny": {"conditions": {"any": [{
    "key": "{{ request.object.spec.template.spec.[containers, initContainers][][].image }}", "operator": "AnyNotIn",
    "value": ["trusted-registry.com/*"]}]}}}, kinds=("Deployment",))
NON_ROOT = pod_rule({"pattern": {"spec": {"template": {"spec": {"containers": [
    {"securityContext": {"runAsNonRoot": True}}]}}}}}, kinds=("Deployment",))


def trusted_registry_update(*new_rules):
    spec = spec_of("trusted-registry-kyverno-update")
    existing = copy.deepcopy(evaluator_existing(spec))
    existing["spec"]["rules"] = list(existing["spec"]["rules"]) + [
        dict(r, name=f"new-{i}") for i, r in enumerate(new_rules)]
    return spec, ("kyverno", [existing] + [copy.deepcopy(p) for p in spec["ciso"].get("others", [])])


def evaluator_existing(spec):
    from itbench_dsl.backends import ciso as ciso_backend  # noqa: F401 - the policy to update, as compiled
    path = SCENARIOS / "trusted-registry-kyverno-update.itb"
    result = compile_source(path.read_bytes(), str(path), Diagnostics())
    return ciso_backend.existing_policy(result.scenario)[0]


def test_a_declared_two_requirement_control_gets_a_gap_variant_per_requirement():
    spec = spec_of("trusted-registry-kyverno-update")
    varied = spec["ciso"]["variants"]["gaps"]
    images = sorted(c["image"] for v in varied for c in v["spec"]["template"]["spec"].get("initContainers", [])
                    + v["spec"]["template"]["spec"]["containers"])
    roots = sorted(str(v["spec"]["template"]["spec"]["containers"][0]["securityContext"].get("runAsNonRoot"))
                   for v in varied)
    # one per requirement, and for the registry's: look-alike hosts and the image in an init container
    assert images == ["trusted-registry.com-mirror.example.org/test-image", "trusted-registry.com.attacker.example/test-image",
                      "trusted-registry.com/test-image", "trusted-registry.com/test-image",
                      "untrusted-registry.com/test-image", "untrusted-registry.com/test-image"]
    assert roots == ["None", "True", "True", "True", "True"]
    assert spec["ciso"]["variants"]["compliant"] == []


@pytest.mark.parametrize("rules,passes", [((TRUSTED,), False), ((NON_ROOT,), False), ((TRUSTED, NON_ROOT), True)],
                         ids=["registry only", "non-root only", "both"])
def test_a_policy_checking_one_of_two_declared_requirements_fails_general(rules, passes):
    spec, artifact = trusted_registry_update(*rules)
    passed, checks = general(spec, artifact)
    assert checks["ciso.general"]["passed"] is passes, checks["ciso.general"]["detail"]
    if not passes:  # the single gap object violates both: without the variants the half policy passes
        assert general(spec, artifact, varied=False)[1]["ciso.general"]["passed"]


# the effective user: `runAsNonRoot: true` or a positive `runAsUser`, either guarantee keeps a container off root
EITHER_NON_ROOT = pod_rule({"anyPattern": [
    {"spec": {"template": {"spec": {"containers": [{"securityContext": {"runAsNonRoot": True}}]}}}},
    {"spec": {"template": {"spec": {"containers": [{"securityContext": {"runAsUser": ">0"}}]}}}}]},
    kinds=("Deployment",))


def test_an_isolated_gap_variant_violates_its_requirement_by_what_the_fields_mean():
    # the gap runs as UID 1000 without runAsNonRoot: its securityContext alone is no root container, so the
    # variant isolating it leaves the UID out too, and every gap variant is one by the effective user
    spec = spec_of("trusted-registry-kyverno-update")
    for v in spec["ciso"]["variants"]["gaps"]:
        pod = v["spec"]["template"]["spec"]
        trusted = all(c["image"].startswith("trusted-registry.com/")
                      for c in pod["containers"] + pod.get("initContainers", []))
        assert not trusted or ciso.k8s.MEANINGS[0][1]([v]), v
    uid = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
           "spec": {"containers": [{"name": "c", "image": "i", "securityContext": {"runAsUser": 1000}}]}}
    assert variation.mislabelled(uid, {"runAsNonRoot"})
    uid["spec"]["securityContext"] = {"runAsUser": 0}  # the pod's root UID under the container's own UID
    assert variation.mislabelled(uid, {"runAsNonRoot", "runAsUser"})
    uid["spec"]["containers"][0]["securityContext"] = {}
    assert not variation.mislabelled(uid, {"runAsNonRoot", "runAsUser"})


def test_either_non_root_guarantee_with_the_registry_passes_general():
    spec, artifact = trusted_registry_update(TRUSTED, EITHER_NON_ROOT)
    passed, checks = general(spec, artifact)
    assert checks["ciso.general"]["passed"], checks["ciso.general"]["detail"]


def test_a_catalogue_gap_variant_is_kept_only_where_the_fields_mean_a_violation(root):
    assert root["ciso"]["variants"]["gaps"]
    for v in root["ciso"]["variants"]["gaps"]:
        assert ciso.k8s.MEANINGS[0][1]([v]), v


HEAD = "package check\n\ndefault result := false\n\nresult if count(violations) == 0\n\n"
HOST_POLICIES = {
    "rhel9-auditd-enabled-ansible-opa": (
        'host.services["auditd.service"].state == "stopped"',  # the service stopped, not its being disabled
        # not enabled, or not there at all (a host without the unit: service_facts lists none)
        'not host.services["auditd.service"].status == "enabled"'),
    "rhel9-sshd-permit-root-login-ansible-opa": (
        'host.files["/etc/ssh/sshd_config"].PermitRootLogin == "yes"',  # the literal yes alone
        # the setting as sshd reads it: the first drop-in holding it (keywords in any case), else the main file
        'not lower(effective(host, "permitrootlogin", "prohibit-password")) in ["no"]'),
}
EFFECTIVE = effective_rule("effective")


@pytest.mark.parametrize("name", sorted(HOST_POLICIES))
def test_a_host_policy_keyed_on_one_facet_of_the_violating_value_fails_general(name):
    pytest.importorskip("regopy")
    spec = spec_of(name)
    narrow, right = (("rego", HEAD + f"violations contains host.name if {{\n  some host in input.hosts\n  {cond}\n}}\n"
                      + EFFECTIVE) for cond in HOST_POLICIES[name])
    assert not general(spec, narrow)[1]["ciso.general"]["passed"]
    assert general(spec, narrow, varied=False)[1]["ciso.general"]["passed"]  # fails without the variants
    passed, checks = general(spec, right)
    assert passed, {k: c["detail"] for k, c in checks.items() if not c["passed"]}


def test_host_variants_hold_the_other_violating_and_compliant_settings():
    control = ciso.CATALOGUE["rhel9-sshd-permit-root-login"]
    main = {c: f["files"]["/etc/ssh/sshd_config"].get("PermitRootLogin", "<absent>") for c, f in control.variants(True)
            if "drop-in" not in c}
    # the violating value beside the other catalogue settings as a host ships them and violating too
    assert {main.pop("the other settings stock"), main.pop("the other settings violating")} == {"yes"}
    assert set(main.values()) == {"prohibit-password", "without-password", "forced-commands-only", "Yes", "<absent>"}
    # as sshd reads them (the first drop-in holding the keyword, in any case, over the main file)
    assert {control.setting(f) for _, f in control.variants(True)} == {
        "prohibit-password", "without-password", "forced-commands-only", "Yes", "yes"}
    assert {control.setting(f) for _, f in control.variants(False)} == {"No", "no"}
    auditd = ciso.CATALOGUE["rhel9-auditd-enabled"]
    assert {(f["services"]["auditd.service"]["state"], f["services"]["auditd.service"]["status"])
            for c, f in auditd.variants(True) if not c.startswith("the other settings") and c != "not installed"} == {
                ("running", s) for s in ("disabled", "masked", "enabled-runtime", "static", "indirect", "linked",
                                         "generated")}
    assert "auditd.service" not in dict(auditd.variants(True))["not installed"]["services"]


def test_host_variants_hold_the_programs_no_limit_values_and_other_units():
    """A bound's gap hosts include the value the program reads as "no limit" (sshd_config(5): LoginGraceTime 0;
    login.defs(5): PASS_MAX_DAYS -1) and, for an sshd time, the same times in other units (`5m`; `1m` complies)."""
    grace = ciso.CATALOGUE["rhel9-sshd-login-grace-time"]
    assert {"0", "5m", "1m1s"} <= {grace.setting(f) for _, f in grace.variants(True)}
    assert {"1m", "30s"} <= {grace.setting(f) for _, f in grace.variants(False)}
    days = ciso.CATALOGUE["rhel9-password-max-days"]
    assert "-1" in {days.setting(f) for _, f in days.variants(True)}
    assert ciso.rhel9.time_spelling("3661") == "1h1m1s" and ciso.rhel9.time_spelling("0") is None


def test_sshd_host_variants_set_the_setting_in_drop_ins_read_first():
    """sshd keeps the first value it reads, and RHEL 9's sshd_config includes /etc/ssh/sshd_config.d/*.conf at its
    top: a gap host whose drop-in holds the violating value over a compliant main file, and a compliant one whose
    drop-in holds the compliant value over a violating main file."""
    control = ciso.CATALOGUE["rhel9-sshd-x11-forwarding"]
    for violating in (True, False):
        dropped = [f for c, f in control.variants(violating) if "drop-in" in c]
        assert dropped and all(any(p.startswith("/etc/ssh/sshd_config.d/") for p in f["files"]) for f in dropped)
        for f in dropped:
            main = f["files"]["/etc/ssh/sshd_config"]["X11Forwarding"]
            assert (control.setting(f).lower() == "yes") == violating and (main.lower() == "yes") != violating \
                or len([p for p in f["files"] if p.startswith("/etc/ssh/sshd_config.d/")]) > 1


NARROW_HOST_POLICIES = {
    # a numeric bound blind to the programs' "no limit" values and units (LoginGraceTime 0 or 5m, PASS_MAX_DAYS -1)
    "rhel9-sshd-login-grace-time": 'to_number(host.files["/etc/ssh/sshd_config"].LoginGraceTime) > 60',
    "rhel9-password-max-days": 'to_number(host.files["/etc/login.defs"].PASS_MAX_DAYS) > 365',
    # the main file alone, blind to the drop-ins sshd reads first
    "rhel9-sshd-permit-root-login": 'lower(host.files["/etc/ssh/sshd_config"].PermitRootLogin) != "no"',
    # a blocklist of two unit-file states (enabled-runtime, static, ... are not `enabled` either)
    "rhel9-auditd-enabled": 'host.services["auditd.service"].status in ["disabled", "masked"]',
}


@pytest.mark.parametrize("control", sorted(NARROW_HOST_POLICIES))
def test_a_host_policy_blind_to_the_programs_semantics_fails_general(control):
    pytest.importorskip("regopy")
    source = (f'scenario "s" {{\n  domain ciso\n  complexity low\n  description "d"\n'
              f'  control "{control}" {{ hosts = "rhel9_servers" }}\n  task ansible_opa\n'
              f'  topology {{ namespace "ciso-workspace" }}\n}}\n')
    from itbench_dsl.analysis.corpus import all_cases

    result = compile_source(source.encode(), "s.itb", Diagnostics())
    spec, cases = all_cases(result.scenario)
    narrow = ("rego", HEAD + f"violations contains host.name if {{\n  some host in input.hosts\n"
                             f"  {NARROW_HOST_POLICIES[control]}\n}}\n")
    assert not general(spec, narrow)[1]["ciso.general"]["passed"]
    assert general(spec, narrow, varied=False)[1]["ciso.general"]["passed"]  # passes without the variants
    right = [c for c in cases if c.name.startswith("a right Rego policy")]
    assert right
    for case in right:
        passed, checks = general(spec, case.artifact)
        assert passed, {k: c["detail"] for k, c in checks.items() if not c["passed"]}


# the settings whose program default complies (sshd_config(5): HostbasedAuthentication, PermitEmptyPasswords,
# PermitUserEnvironment and X11Forwarding default to no, IgnoreRhosts to yes)
DEFAULT_COMPLIES = sorted(c.id for c in ciso.CATALOGUE.values() if isinstance(c, ciso.HostControl)
                          and c.default is not None and c.default in (c.compliant, *c.also_compliant))


def test_every_sshd_setting_defaulting_to_compliance_is_varied_left_out():
    assert set(DEFAULT_COMPLIES) == {"rhel9-sshd-hostbased-auth", "rhel9-sshd-permit-empty-passwords",
                                     "rhel9-sshd-permit-user-environment", "rhel9-sshd-ignore-rhosts",
                                     "rhel9-sshd-x11-forwarding"}
    for id in DEFAULT_COMPLIES:
        control = ciso.CATALOGUE[id]
        left_out = [f for c, f in control.variants(False) if c == f"without {control.key}"]
        assert len(left_out) == 1 and control.key not in left_out[0]["files"][control.path]
        assert control.setting(left_out[0]) == control.default
        assert not any(c == f"without {control.key}" for c, _ in control.variants(True))


@pytest.mark.parametrize("control", DEFAULT_COMPLIES)
def test_a_host_policy_demanding_a_setting_the_default_meets_fails_general(control):
    """A compliant host may leave the setting to the program's default (sshd's `X11Forwarding no`); a policy that
    flags every host without an explicit compliant line misjudges it, and fails `ciso.general` on that host."""
    pytest.importorskip("regopy")
    c = ciso.CATALOGUE[control]
    source = (f'scenario "s" {{\n  domain ciso\n  complexity low\n  description "d"\n'
              f'  control "{control}" {{ hosts = "rhel9_servers" }}\n  task ansible_opa\n'
              f'  topology {{ namespace "ciso-workspace" }}\n}}\n')
    from itbench_dsl.analysis.corpus import all_cases

    spec, cases = all_cases(compile_source(source.encode(), "s.itb", Diagnostics()).scenario)
    # the setting as sshd reads it, but with no default: a host without the line is flagged
    explicit = ("rego", HEAD + f"violations contains host.name if {{\n  some host in input.hosts\n"
                               f"  not lower(effective(host, {c.key.lower()!r}, \"<absent>\")) == {c.compliant!r}\n}}\n"
                .replace("'", '"') + EFFECTIVE)
    passed, checks = general(spec, explicit)
    assert not passed and [k for k, v in checks.items() if not v["passed"]] == ["ciso.general"]
    assert "twins of the compliant objects" in checks["ciso.general"]["detail"]
    # for that host alone: without it among the compliant variants the policy passes
    kept = copy.deepcopy(spec)
    kept["ciso"]["variants"]["compliant"] = [v for v in kept["ciso"]["variants"]["compliant"]
                                             if c.key in v["host"]["files"][c.path]]
    assert len(kept["ciso"]["variants"]["compliant"]) == len(spec["ciso"]["variants"]["compliant"]) - 1
    assert general(kept, explicit)[0]
    right = [k for k in cases if k.name.startswith("a right Rego policy")]
    assert right
    for case in right:
        passed, checks = general(spec, case.artifact)
        assert passed, {k: c["detail"] for k, c in checks.items() if not c["passed"]}


# whole Pod Security profiles: every rule of theirs is a catalogue control, and a compliant variant breaks no
# catalogue control its original keeps (variation.variants), so a profile flags no compliant object
PROFILES = {level: pod_rule({"podSecurity": {"level": level, "version": "latest"}},
                            kinds=("Pod", "Deployment", "StatefulSet", "DaemonSet", "Job"))
            for level in ("baseline", "restricted")}


@pytest.mark.parametrize("name, level", [("cis-5-2-5-host-network-kyverno", "baseline"),
                                         ("cis-k8s-5-2-2-privileged-kyverno", "baseline"),
                                         ("cis-k8s-5-2-2-privileged-kyverno", "restricted")])
def test_a_whole_pod_security_profile_is_a_right_policy_of_one_of_its_controls(name, level):
    """(The host-network scenario's own compliant object runs as root: Restricted flags it, rightly failing.)"""
    spec = spec_of(name)
    passed, checks = general(spec, ("kyverno", [policy(PROFILES[level])]))
    assert passed, {k: c["detail"] for k, c in checks.items() if not c["passed"]}


def test_no_compliant_variant_breaks_a_catalogue_control_its_original_keeps(privileged):
    breaks = set().union(*(variation._violations(v) for v in privileged["ciso"]["variants"]["compliant"]))
    # the namespace's own controls (a default ServiceAccount, no NetworkPolicy) hold for the original alike
    assert not {c for c in breaks if c.startswith("cis-k8s-5.2.")}, breaks
    for graded in (True, False):
        control = ciso.CATALOGUE["cis-k8s-5.2.5"]
        obj = control.objects("ciso-target", False)[0]
        made = variation.variants(control, obj, False, other_controls_graded=graded)
        assert made and all(variation._violations(v) <= variation._violations(obj) for v in made)


# a list's items read by a control: a gap variant puts a compliant item first (variation.BENIGN_ITEMS)
LISTED = {"cis-k8s-5.1.2": "rules", "cis-k8s-5.1.3": "rules", "cis-k8s-5.1.7": "subjects",
          "cis-k8s-5.2.8": "add", "cis-k8s-5.2.12": "volumes", "cis-k8s-5.2.13": "ports", "cis-k8s-5.4.1": "env"}


def _lists(node, key):
    if isinstance(node, dict):
        for k, v in node.items():
            if k == key and isinstance(v, list):
                yield v
            yield from _lists(v, key)
    elif isinstance(node, list):
        for v in node:
            yield from _lists(v, key)


@pytest.mark.parametrize("control_id", sorted(LISTED))
def test_a_gap_variant_holds_the_violating_item_behind_a_compliant_one(control_id):
    control, key = ciso.CATALOGUE[control_id], LISTED[control_id]
    gaps = [o for o in control.objects("ciso-target", True) if control.probe([o])]
    varied = [v for g in gaps for v in variation.variants(control, g, True)]
    # the variant's first item alone does not violate: a policy reading only `[0]` misses the variant
    behind = [v for v in varied for items in _lists(v, key) if len(items) > 1
              and items[0] in variation.BENIGN_ITEMS.values()]
    assert behind, f"no gap variant of {control_id} with a compliant first item in `{key}`"


def _foreach_rule(kinds, conditions, list_="request.object.rules"):
    return pod_rule({"foreach": [{"list": list_, "deny": {"conditions": {"any": conditions}}}]}, kinds=kinds)


WILDCARD = [{"key": "{{ element.%s || `[]` }}" % f, "operator": "Equals", "value": ["*"]}
            for f in ("verbs", "resources", "apiGroups")]
FIRST_ITEM = {
    "a Role's wildcard as the whole list, Roles alone": ("cis-k8s-5-1-3-rbac-wildcard-kyverno", policy(
        _foreach_rule(["Role"], WILDCARD))),
    "a Role's first rule alone": ("cis-k8s-5-1-3-rbac-wildcard-kyverno", policy(pod_rule({"deny": {"conditions": {
        "any": [{"key": "{{ contains(request.object.rules[0].verbs, '*') }}", "operator": "Equals", "value": True}]}}},
        kinds=("Role", "ClusterRole")))),
}


@pytest.mark.parametrize("why", sorted(FIRST_ITEM))
def test_a_policy_reading_the_first_item_or_the_whole_wildcard_list_fails_general(why):
    name, artifact = FIRST_ITEM[why]
    spec = spec_of(name)
    passed, checks = general(spec, ("kyverno", [artifact]))
    assert not passed and not checks["ciso.general"]["passed"], why
    _, checks_off = general(spec, ("kyverno", [artifact]), varied=False)
    assert checks_off["ciso.general"]["passed"], "without the variants the twins alone do not catch it"


def test_a_wildcard_policy_on_roles_and_cluster_roles_passes_general():
    spec = spec_of("cis-k8s-5-1-3-rbac-wildcard-kyverno")
    right = policy(_foreach_rule(["Role", "ClusterRole"], [
        {"key": "{{ contains(element.%s || `[]`, '*') }}" % f, "operator": "Equals", "value": True}
        for f in ("verbs", "resources", "apiGroups")]))
    passed, checks = general(spec, ("kyverno", [right]))
    assert checks["ciso.general"]["passed"], checks["ciso.general"]
