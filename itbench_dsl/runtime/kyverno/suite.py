"""Kyverno CLI test suites: `run_test_suite` runs one kyverno-test.yaml document as `kyverno test` does.

Each expected result (policy, rule, resource, result) is compared with what the matcher gives; a suite
that needs a feature the matcher lacks is reported `unsupported`, never passed. Not embedded in
evaluators: they grade a policy, they do not run suites.
"""

from collections.abc import Callable
from dataclasses import dataclass, field

from .outcomes import KyvernoError, RuleResult, Unsupported
from .policy import _UNSUPPORTED, _evaluate


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
        return self.expected == self.actual


@dataclass
class SuiteReport:
    path: str
    name: str
    results: list[ExpectedResult] = field(default_factory=list)
    unsupported: str = ""
    error: str = ""

    @property
    def passed(self) -> bool:
        return not self.unsupported and not self.error and all(r.met for r in self.results)


def _documents(load_yaml: Callable[[str], list], path: str) -> list[dict]:
    out = []
    for doc in load_yaml(path):
        if isinstance(doc, dict) and doc.get("kind") == "List" and isinstance(doc.get("items"), list):
            out.extend(d for d in doc["items"] if isinstance(d, dict))
        elif isinstance(doc, dict):
            out.append(doc)
    return out


def _values_for(values_doc: dict | None, policy: str, resource: str) -> dict:
    """Per-resource variables from a Values file (global values, then policy/resource values)."""
    if not values_doc:
        return {}
    merged: dict = {}
    merged.update(values_doc.get("globalValues") or {})
    for p in values_doc.get("policies") or []:
        if p.get("name") != policy:
            continue
        for r in p.get("resources") or []:
            if r.get("name") == resource:
                merged.update(r.get("values") or {})
    return merged


def run_test_suite(test: dict, base: str, load_yaml: Callable[[str], list],
                   join: Callable[[str, str], str]) -> SuiteReport:
    """Run one kyverno-test.yaml document. `load_yaml(path)` returns its documents."""
    name = str((test.get("metadata") or {}).get("name") or test.get("name") or "")
    report = SuiteReport(path=base, name=name)
    try:
        policies: dict[str, dict] = {}
        for p in test.get("policies") or []:
            for doc in _documents(load_yaml, join(base, p)):
                if doc.get("kind") in ("ClusterPolicy", "Policy"):
                    meta = doc.get("metadata") or {}
                    key = meta.get("name", "")
                    policies[key] = doc
                    if doc["kind"] == "Policy":
                        policies[f"{meta.get('namespace') or 'default'}/{key}"] = doc
                elif doc.get("kind"):
                    raise Unsupported(f"policy kind {doc.get('kind')}")
        resources: list[dict] = []
        for r in test.get("resources") or []:
            resources.extend(_documents(load_yaml, join(base, r)))
        values_doc = None
        if test.get("variables"):
            docs = load_yaml(join(base, test["variables"]))
            values_doc = docs[0] if docs else None
            if values_doc and (values_doc.get("subresources") or values_doc.get("namespaceSelector")):
                raise Unsupported("Values subresources / namespaceSelector")
        if test.get("userinfo"):
            raise Unsupported("userinfo in a test")
        cache: dict[tuple[str, int], dict[str, RuleResult]] = {}
        for entry in test.get("results") or []:
            names = entry.get("resources") or ([entry["resource"]] if entry.get("resource") else [])
            expected = str(entry.get("result") or entry.get("status") or "")
            pname = entry.get("policy", "")
            for rname in names:
                item = ExpectedResult(pname, entry.get("rule", ""), rname, entry.get("kind", ""), expected)
                report.results.append(item)
                policy = policies.get(pname)
                if policy is None:
                    item.actual, item.detail = "not found", f"policy {pname!r} is not in the suite"
                    continue
                found = _find_resource(resources, rname, entry)
                if found is None:
                    item.actual, item.detail = "not found", f"resource {rname!r} is not in the suite"
                    continue
                idx, resource = found
                key = (pname, idx)
                if key not in cache:
                    values = _values_for(values_doc, policy["metadata"]["name"],
                                         resource.get("metadata", {}).get("name", ""))
                    operation = str(values.pop("request.operation", "CREATE"))
                    results = _evaluate(policy, resource, operation, None, values, strict=False)
                    cache[key] = {r.rule: r for r in results}
                result = _pick(cache[key], item.rule)
                if result is None:
                    item.actual, item.detail = "not found", f"rule {item.rule!r} is not in the policy (nor autogen)"
                elif result.status == _UNSUPPORTED:
                    raise Unsupported(result.message)
                else:
                    item.actual, item.detail = result.status, result.message
    except Unsupported as exc:
        report.unsupported = exc.feature
    except KyvernoError as exc:
        report.error = str(exc)
    except OSError as exc:
        report.error = f"cannot read {getattr(exc, 'filename', None) or ''}: {exc.strerror or exc}"
    return report


def _pick(results: dict[str, RuleResult], rule: str) -> RuleResult | None:
    """The result for `rule`: like `kyverno test`, a plain rule name also names its
    autogen rules, and the one that applies to the resource's kind wins."""
    candidates = [r for name, r in results.items()
                  if name == rule or name in (f"autogen-{rule}", f"autogen-cronjob-{rule}")]
    for r in candidates:
        if r.matched:
            return r
    return candidates[0] if candidates else None


def _find_resource(resources: list[dict], name: str, entry: dict) -> tuple[int, dict] | None:
    namespace = entry.get("namespace")
    if "/" in name:
        namespace, name = name.rsplit("/", 1)
        if "/" in namespace:  # namespace/kind/name is not used by suites; keep the namespace part
            namespace = namespace.split("/", 1)[0]
    kind = entry.get("kind")
    candidates = []
    for i, r in enumerate(resources):
        meta = r.get("metadata") or {}
        if meta.get("name") != name:
            continue
        if kind and r.get("kind") != kind.rsplit("/", 1)[-1]:
            continue
        if namespace and (meta.get("namespace") or "default") != namespace:
            continue
        candidates.append((i, r))
    return candidates[0] if candidates else None
