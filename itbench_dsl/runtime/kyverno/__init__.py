"""An offline matcher of Kyverno validation semantics, standard library only.

The `evaluator.py` of every bundle graded with Kyverno embeds the modules of this package that policy
evaluation needs (`EMBEDDED`, in dependency order) to grade Kyverno artefacts without a cluster, so
they import nothing but the standard library and each other (relatively). The package implements what
`kyverno test` needs for validate rules: match and exclude, preconditions, `validate.pattern`,
`anyPattern` and `deny`, the anchors and value operators of patterns, a JMESPath subset for
`{{ variables }}`, and autogen rules for pod controllers. A feature it does not implement raises
`Unsupported` naming it, so that a caller can say why it cannot grade, never pass silently; input of
the wrong shape raises `Malformed` naming the path of the value.

    outcomes.py    statuses, RuleResult, Unsupported, KyvernoError and Malformed
    values.py      wildcards, quantities, Go durations, Go string forms, numeric ranges
    regex.py       regular expressions as Go's RE2 runs them, on a Pike machine: bounded time
    jmespath.py    the JMESPath subset of `{{ variables }}`, with Kyverno's functions
    conditions.py  variable substitution, condition operators, preconditions and deny
    patterns.py    patterns: anchors, value operators, arrays (`match_pattern`, `validate_value`)
    cel.py         validate.cel: a CEL subset (fields, has, comparisons, all/exists/map/filter)
    pss.py         validate.podSecurity: the Pod Security Standards, baseline and restricted
    resources.py   which resources a rule applies to: kinds, selectors, match and exclude blocks
    shape.py       the types of a policy's fields and of a resource's envelope, checked before
                   evaluation; the machine-readable list of unsupported constructs (UNSUPPORTED)
    autogen.py     the rules Kyverno adds for the controllers of Pods
    policy.py      a policy against one resource: context, validate, foreach, every rule's result
    suite.py       Kyverno CLI test suites (`itbench policy-test`; not embedded)

Annotations are evaluated (no `from __future__ import annotations`) so that dataclasses work when
these sources are exec'd outside the package, as the generated evaluators do.

Entry points: `evaluate_policy(policy, resource, operation)` -> list of `RuleResult`, and
`run_test_suite(test_document, base_folder, load_yaml, join)` for Kyverno CLI test suites.
"""

from .autogen import expand_rules
from .conditions import evaluate_conditions, evaluate_operator, substitute
from .jmespath import JMESPathError, NotFound, jmespath_search
from .outcomes import NOT_SUPPORTED, KyvernoError, Malformed, RuleResult, Unsupported
from .patterns import match_pattern, validate_value
from .policy import evaluate_policy, evaluate_rule
from .pss import evaluate as pss_evaluate  # the evaluator judges a Pod Security label by it
from .resources import _filter_matches, _kind_matches  # noqa: F401 - the tests read them here
from .shape import MAX_DEPTH, UNSUPPORTED, UNSUPPORTED_VALUES, check_policy, check_resource, check_tree
from .suite import ExpectedResult, SuiteReport, run_test_suite
from .values import parse_duration, parse_quantity, wildcard_match

# The modules an evaluator embeds to grade a policy, in dependency order: each imports only modules
# before it. The suite runner is not among them.
EMBEDDED = ("outcomes", "values", "regex", "jmespath", "conditions", "patterns", "pss", "cel", "resources", "shape", "autogen",
    "policy")

__all__ = [
    "EMBEDDED",
    "MAX_DEPTH",
    "NOT_SUPPORTED",
    "UNSUPPORTED",
    "UNSUPPORTED_VALUES",
    "ExpectedResult",
    "JMESPathError",
    "KyvernoError",
    "Malformed",
    "NotFound",
    "RuleResult",
    "SuiteReport",
    "Unsupported",
    "check_policy",
    "check_resource",
    "check_tree",
    "evaluate_conditions",
    "evaluate_operator",
    "evaluate_policy",
    "evaluate_rule",
    "expand_rules",
    "jmespath_search",
    "match_pattern",
    "parse_duration",
    "parse_quantity",
    "pss_evaluate",
    "run_test_suite",
    "substitute",
    "validate_value",
    "wildcard_match",
]
