"""CISO policy grading, class by class: what Kyverno makes of a policy beyond its text (autogen annotations,
background-mode refusals), twins with neutral names, bounded regular expressions, kept rules judged by their
effect, minimal-pair twins, per-namespace controls, and the policy features Kyverno evaluates offline."""

from __future__ import annotations

import copy

from test_ciso_finops_meaning import PRIVILEGED, _content_policy, _existing, failed, spec_of
from test_evaluator import run


def test_the_other_policies_keep_their_autogen_controllers():
    name = "trusted-registry-kyverno-update"
    policies = _existing(name)
    other = copy.deepcopy(policies[1])
    other["metadata"].setdefault("annotations", {})["pod-policies.kyverno.io/autogen-controllers"] = "none"
    verdict = run(name, None, None, task="policy", artifact=("kyverno", [policies[0], other]))
    others = next(c for c in verdict["checks"] if c["id"] == "ciso.others")
    assert not others["passed"] and "autogen" in others["detail"]
    unscored = copy.deepcopy(policies[1])
    unscored["metadata"].setdefault("annotations", {})["policies.kyverno.io/scored"] = "false"
    assert "ciso.others" in failed(run(name, None, None, task="policy", artifact=("kyverno", [policies[0], unscored])))
    # an annotation that changes nothing Kyverno does is no change
    noted = copy.deepcopy(policies[1])
    noted["metadata"].setdefault("annotations", {})["policies.kyverno.io/title"] = "retitled"
    assert "ciso.others" not in failed(run(name, None, None, task="policy", artifact=("kyverno", [policies[0], noted])))


def test_kyverno_refuses_user_variables_in_background_mode():
    name = "cis-k8s-5-2-2-privileged-kyverno"
    right = _content_policy(name, [PRIVILEGED])
    assert run(name, None, None, task="policy", artifact=("kyverno", [right]))["passed"]
    for variable in ("{{ request.userInfo.username }}", "{{serviceAccountName}}", "{{ request.roles }}"):
        rule = copy.deepcopy(PRIVILEGED)
        rule["preconditions"] = {"all": [{"key": variable, "operator": "NotEquals", "value": "admin"}]}
        verdict = run(name, None, None, task="policy", artifact=("kyverno", [_content_policy(name, [rule])]))
        contract = next(c for c in verdict["checks"] if c["id"] == "ciso.contract")
        assert not verdict["passed"] and not contract["passed"] and "Kyverno refuses" in contract["detail"], variable
    # a match block naming subjects is refused too; the object's own fields are fine
    rule = copy.deepcopy(PRIVILEGED)
    rule["exclude"] = {"any": [{"subjects": [{"kind": "User", "name": "admin"}]}]}
    assert "ciso.contract" in failed(run(name, None, None, task="policy",
                                         artifact=("kyverno", [_content_policy(name, [rule])])))
    rule = copy.deepcopy(PRIVILEGED)
    rule["preconditions"] = {"all": [{"key": "{{ request.object.spec.serviceAccountName || '' }}",
                                      "operator": "NotEquals", "value": "x"}]}
    assert "ciso.contract" not in failed(run(name, None, None, task="policy",
                                             artifact=("kyverno", [_content_policy(name, [rule])])))
