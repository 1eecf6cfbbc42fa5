"""Kyverno CLI test suites: `run_test_suite` runs one kyverno-test.yaml document as `kyverno test` does.

Each expected result (policy, rule, resource, result) is compared with what the matcher gives. Input
is checked before anything is evaluated: the test document and its Values file against the shapes
below, every policy against shape.POLICY, every resource's envelope; a value of the wrong type is a
`Malformed` error naming the file and the value's path (and line, when `locate` knows it). A result
that needs a feature the matcher lacks is reported `unsupported` with the feature named, never
passed. Not embedded in evaluators: they grade a policy, they do not run suites.
"""

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .outcomes import NOT_SUPPORTED, SKIP, KyvernoError, Malformed, RuleResult, _dotted
from .policy import _UNSUPPORTED, _evaluate
from .shape import STATUSES, check_policy, check_resource, check_tree, walk
from .shape import TEST as _TEST
from .shape import VALUES as _VALUES


@dataclass
class ExpectedResult:
    policy: str
    rule: str
    resource: str
    kind: str
    expected: str
    actual: str = ""
    detail: str = ""

    @property
    def met(self) -> bool:
        # `kyverno test` counts a result whose rule gave no response for the resource as met,
        # whatever it expected (its "Excluded" rows): the rule is not in the policy, its match or
        # exclude leaves the resource out, or an earlier rule applied under `applyRules: One`
        return self.actual == EXCLUDED or self.expected == self.actual

    @property
    def unsupported(self) -> bool:
        return self.actual == _UNSUPPORTED


@dataclass
class SuiteReport:
    path: str
    name: str
    results: list[ExpectedResult] = field(default_factory=list)
    unsupported: str = ""  # the first unsupported feature met, when any
    error: str = ""

    @property
    def status(self) -> str:
        """error (unusable input), fail (a result not met), unsupported (every result met or
        unsupported, one at least unsupported), or pass."""
        if self.error:
            return "error"
        if any(not r.met and not r.unsupported for r in self.results):
            return "fail"
        if self.unsupported or any(r.unsupported for r in self.results):
            return "unsupported"
        return "pass"

    @property
    def passed(self) -> bool:
        return self.status == "pass"


Locate = Callable[[Any, tuple], str]
EXCLUDED = "excluded"  # the rule gave no response for the resource


def _documents(docs: list, what: str) -> list[tuple[Any, tuple, dict]]:
    """The documents of a file, `List` documents unpacked: (document, path of the item in it, item)."""
    out = []
    for number, doc in enumerate(docs, 1):
        if not isinstance(doc, dict):
            raise Malformed(f"document {number} is {_kind_of(doc)}, not a {what} (a map)")
        if doc.get("kind") == "List" and "items" in doc:
            if not isinstance(doc["items"], list):
                raise Malformed("expected a list", ("items",), doc)
            for index, item in enumerate(doc["items"]):
                if not isinstance(item, dict):
                    raise Malformed(f"expected a {what} (a map), found {_kind_of(item)}", ("items", index), doc)
                out.append((doc, ("items", index), item))
        else:
            out.append((doc, (), doc))
    return out


def _kind_of(value: Any) -> str:
    return {type(None): "null", bool: "a boolean", int: "a number", float: "a number", str: "a string",
            list: "a list", dict: "a map"}.get(type(value), type(value).__name__)


def _values_for(values_doc: dict | None, policy: str, resource: str) -> tuple[dict, dict]:
    """Variables from a Values file: (global and per-resource values, per-rule values by rule name)."""
    if not values_doc:
        return {}, {}
    merged: dict = dict(values_doc.get("globalValues") or {})
    rules: dict[str, dict] = {}
    for p in values_doc.get("policies") or []:
        if p["name"] != policy:
            continue
        for r in p.get("resources") or []:
            if r["name"] == resource:
                merged.update(r.get("values") or {})
        for r in p.get("rules") or []:
            rules.setdefault(r["name"], {}).update(r.get("values") or {})
    return merged, rules


def _check(value: Any, shape: Any, document: Any) -> list[tuple[tuple, str]]:
    check_tree(value, document)
    found: list[tuple[tuple, str]] = []
    walk(value, shape, (), found, document)
    return found


def run_test_suite(test: dict, base: str, load_yaml: Callable[[str], list],
                   join: Callable[[str, str], str], locate: Locate | None = None) -> SuiteReport:
    """Run one kyverno-test.yaml document. `load_yaml(path)` returns its documents; `locate(document,
    where)`, when given, says where a value of a loaded document is ("file:line:col", or ""), and
    `locate(None, (path,))` how to show the path of a file."""
    name = ""
    if isinstance(test, dict):
        meta = test.get("metadata")
        name = str((meta.get("name") if isinstance(meta, dict) else None) or test.get("name") or "")
    report = SuiteReport(path=base, name=name)
    current = [base]  # the file being read, for errors in documents `locate` does not know
    def load(path: str, where: tuple) -> list:
        """load_yaml, its errors saying which entry of the test names the file."""
        try:
            return load_yaml(path)
        except Malformed:
            raise
        except (KyvernoError, OSError) as exc:
            named = locate(test, where) if locate is not None else ""
            text = str(exc) if isinstance(exc, KyvernoError) else \
                f"cannot read {getattr(exc, 'filename', None) or path}: {exc.strerror or exc}"
            raise KyvernoError(f"{text} (named at {named or _dotted(where)})") from None

    try:
        _run(test, base, load, join, report, current)
    except Malformed as exc:
        where = ""
        if locate is not None:
            where = locate(exc.document, exc.where) if isinstance(exc.document, (dict, list)) else ""
            where = where or locate(None, (current[0],))
        path = f" at {_dotted(exc.where)}" if exc.where else ""
        report.error = f"{where or current[0]}: {exc.message}{path}"
    except KyvernoError as exc:
        report.error = str(exc)
    except OSError as exc:
        report.error = f"cannot read {getattr(exc, 'filename', None) or ''}: {exc.strerror or exc}"
    return report


def _run(test: Any, base: str, load: Callable[[str, tuple], list], join: Callable[[str, str], str],
         report: SuiteReport, current: list) -> None:
    if not isinstance(test, dict):
        raise Malformed(f"a Kyverno test must be a map, found {_kind_of(test)}", (), test)
    suite_unsupported = _check(test, _TEST, test)
    for index, entry in enumerate(test["results"]):
        for key in ("result", "status"):
            if entry.get(key) is not None and entry[key] not in STATUSES:
                raise Malformed(f"expected one of {', '.join(STATUSES)}, found {entry[key]!r}",
                                ("results", index, key), test)
        if entry.get("result") is None and entry.get("status") is None:
            raise Malformed("the field 'result' is required", ("results", index), test)

    policies: dict[str, dict] = {}
    other_kinds: dict[str, str] = {}  # policies of kinds the matcher does not evaluate, by name
    for number, p in enumerate(test.get("policies") or []):
        current[0] = join(base, p)
        for doc, where, item in _documents(load(current[0], ("policies", number)), "policy"):
            kind = item.get("kind")
            meta = item.get("metadata")
            key = str(meta.get("name") or "") if isinstance(meta, dict) else ""
            if kind in ("ClusterPolicy", "Policy"):
                if where:  # check_policy points into the policy itself: locate it in its List
                    check_tree(doc, doc)
                    _check_policy_in(doc, where, item)
                else:
                    check_policy(item)
                policies[key] = item
                if kind == "Policy":
                    policies[f"{meta.get('namespace') or 'default'}/{key}"] = item
            else:
                other_kinds[key] = str(kind)
    resources: dict[str, list[tuple[int, dict]]] = {}  # by name: results look resources up by name
    count = 0
    for number, r in enumerate(test.get("resources") or []):
        current[0] = join(base, r)
        for doc, where, item in _documents(load(current[0], ("resources", number)), "resource"):
            if where:
                check_tree(doc, doc)
                try:
                    check_resource(item, doc)
                except Malformed as exc:
                    raise Malformed(exc.message, where + exc.where, doc) from None
            else:
                check_resource(item)
            resources.setdefault((item.get("metadata") or {}).get("name") or "", []).append((count, item))
            count += 1
    values_doc = None
    values_unsupported: list[tuple[tuple, str]] = []
    if test.get("variables"):
        current[0] = join(base, test["variables"])
        docs = load(current[0], ("variables",))
        values_doc = docs[0] if docs else None
        if values_doc is not None:
            values_unsupported = _check(values_doc, _VALUES, values_doc)
    current[0] = base
    namespace_labels = None
    if values_doc and (values_doc.get("namespaceSelector") or values_doc.get("namespaces")):
        namespace_labels = {}
        for index, namespace in enumerate(values_doc.get("namespaces") or []):
            try:
                check_resource(namespace, values_doc)
            except Malformed as exc:
                raise Malformed(exc.message, ("namespaces", index) + exc.where, values_doc) from None
            meta = namespace.get("metadata") or {}
            namespace_labels[meta.get("name") or ""] = meta.get("labels") or {}
        namespace_labels.update({e["name"]: e.get("labels") or {} for e in values_doc.get("namespaceSelector") or []})

    blocking = [f"kyverno-test.yaml: {_dotted(w)}: {reason} is {NOT_SUPPORTED}"
                for w, reason in suite_unsupported if w[0] != "results"]
    blocking += [f"Values file: {_dotted(w)}: {reason} is {NOT_SUPPORTED}" for w, reason in values_unsupported]
    cache: dict[tuple[str, int], tuple[dict[str, RuleResult], set[str]]] = {}
    for index, entry in enumerate(test["results"]):
        names = entry.get("resources") or ([entry["resource"]] if entry.get("resource") else [])
        expected = str(entry.get("result") or entry.get("status"))
        pname = entry["policy"]
        own = [f"kyverno-test.yaml: {_dotted(w)}: {reason} is {NOT_SUPPORTED}"
               for w, reason in suite_unsupported if w[:2] == ("results", index)]
        for rname in names:
            item = ExpectedResult(pname, entry.get("rule") or "", rname, entry.get("kind") or "", expected)
            report.results.append(item)
            if blocking or own:
                _unsupported(report, item, (blocking + own)[0])
                continue
            policy = policies.get(pname)
            if policy is None:
                if pname in other_kinds:
                    _unsupported(report, item, f"policy {pname!r}: the policy kind {other_kinds[pname]} is "
                                               f"{NOT_SUPPORTED}")
                else:
                    item.actual, item.detail = "not found", f"policy {pname!r} is not in the suite"
                continue
            found = _find_resource(resources, rname, entry)
            if found is None:
                item.actual, item.detail = "not found", f"resource {rname!r} is not in the suite"
                continue
            idx, resource = found
            key = (pname, idx)
            if key not in cache:
                values, rule_values = _values_for(values_doc, policy["metadata"]["name"],
                                                  (resource.get("metadata") or {}).get("name", ""))
                operation = str(values.pop("request.operation", "CREATE"))
                results = _evaluate(policy, resource, operation, None, values, strict=False,
                                    rule_values=rule_values, namespace_labels=namespace_labels)
                cache[key] = ({r.rule: r for r in results}, _silent(policy, results))
            by_rule, silent = cache[key]
            result = _pick(by_rule, item.rule)
            if result is None:
                item.actual, item.detail = EXCLUDED, (f"rule {item.rule!r} is not in the policy (nor autogen): "
                                                      f"no rule response, which kyverno test counts as met")
            elif result.status == _UNSUPPORTED:
                _unsupported(report, item, f"policy {pname!r}: {result.message}")
            elif not result.matched or result.rule in silent:
                item.actual, item.detail = EXCLUDED, f"{result.message}: no rule response, which kyverno test counts as met"
            else:
                item.actual, item.detail = result.status, result.message


def _check_policy_in(doc: dict, where: tuple, item: dict) -> None:
    try:
        check_policy(item)
    except Malformed as exc:
        raise Malformed(exc.message, where + exc.where, doc) from None


def _unsupported(report: SuiteReport, item: ExpectedResult, feature: str) -> None:
    item.actual, item.detail = _UNSUPPORTED, feature
    report.unsupported = report.unsupported or feature


def _silent(policy: dict, results: list[RuleResult]) -> set[str]:
    """The rules that match yet give Kyverno no response: under `applyRules: One`, Kyverno stops
    at the first rule that applied, and the rules after it are never run."""
    if str(policy["spec"].get("applyRules") or "") != "One":
        return set()
    silent: set[str] = set()
    applied = False
    for r in results:
        if applied:
            silent.add(r.rule)
        elif r.matched and r.status != SKIP:
            applied = True
    return silent


def _pick(results: dict[str, RuleResult], rule: str) -> RuleResult | None:
    """The result for `rule`: like `kyverno test`, a plain rule name also names its
    autogen rules, and the one that applies to the resource's kind wins."""
    candidates = [r for name, r in results.items()
                  if name == rule or name in (f"autogen-{rule}", f"autogen-cronjob-{rule}")]
    for r in candidates:
        if r.matched:
            return r
    return candidates[0] if candidates else None


def _find_resource(resources: dict[str, list[tuple[int, dict]]], name: str, entry: dict) -> tuple[int, dict] | None:
    namespace = entry.get("namespace")
    if "/" in name:
        namespace, name = name.rsplit("/", 1)
        if "/" in namespace:  # namespace/kind/name is not used by suites; keep the namespace part
            namespace = namespace.split("/", 1)[0]
    kind = entry.get("kind")
    candidates = []
    for i, r in resources.get(name, ()):
        meta = r.get("metadata") or {}
        if kind and r.get("kind") != kind.rsplit("/", 1)[-1]:
            continue
        if namespace and (meta.get("namespace") or "default") != namespace:
            continue
        candidates.append((i, r))
    return candidates[0] if candidates else None
