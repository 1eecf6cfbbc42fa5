"""`itbench policy-test` on hostile and real input: never a hang, a traceback or "internal error".

One test per class of input: files that are not regular files (devices, FIFOs, folders, symlink
loops, unreadable, too large, not UTF-8), deep nesting and YAML aliases, null entries, values of the
wrong type anywhere in a suite, a policy or a resource (systematically: every value of a small valid
suite replaced by values of every other type), lists where the matcher once assumed maps, and every
construct of Kyverno's policy schema that the matcher does not implement (from shape.UNSUPPORTED:
each must be named, rule and field, and reported unsupported). Commands that could hang run in a
subprocess with a 10 s timeout; in-process runs are guarded by an alarm of the same length.
"""

from __future__ import annotations

import contextlib
import copy
import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from itbench_dsl.cli import cli
from itbench_dsl.runtime import kyverno as k

REPO = Path(__file__).resolve().parents[2]
REFERENCE = REPO.parent / "shared" / "reference" / "kyverno" / "policy-tests"
DOCS = REPO / "docs" / "policy-test.md"
LIMIT = 10  # seconds each command may take on these inputs

POLICY = {"apiVersion": "kyverno.io/v1", "kind": "ClusterPolicy",
          "metadata": {"name": "pol", "annotations": {"policies.kyverno.io/title": "t"}},
          "spec": {"validationFailureAction": "Enforce", "background": True, "rules": [{
              "name": "r",
              "match": {"any": [{"resources": {"kinds": ["Pod"], "namespaces": ["default"]}}]},
              "exclude": {"any": [{"resources": {"names": ["skip-*"]}}]},
              "preconditions": {"all": [{"key": "{{ request.operation }}", "operator": "NotEquals",
                                         "value": "DELETE"}]},
              "validate": {"message": "a team label is required",
                           "pattern": {"metadata": {"labels": {"team": "?*"}}}}}]}}
RESOURCE = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default",
                                                            "labels": {"team": "a"}},
            "spec": {"containers": [{"name": "c", "image": "nginx:1"}]}}
TEST = {"apiVersion": "cli.kyverno.io/v1alpha1", "kind": "Test", "metadata": {"name": "t"},
        "policies": ["policy.yaml"], "resources": ["resource.yaml"],
        "results": [{"policy": "pol", "rule": "r", "resources": ["p"], "kind": "Pod", "result": "pass"}]}


def write_suite(folder: Path, test=None, policy=None, resource=None) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name, doc in (("kyverno-test.yaml", TEST if test is None else test),
                      ("policy.yaml", POLICY if policy is None else policy),
                      ("resource.yaml", RESOURCE if resource is None else resource)):
        if isinstance(doc, str):
            (folder / name).write_text(doc)
        else:
            (folder / name).write_text(yaml.safe_dump(doc, sort_keys=False))
    return folder


def run_cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    """The real command line, in a subprocess that may not outlive LIMIT seconds."""
    return subprocess.run([sys.executable, "-m", "itbench_dsl", "policy-test", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=LIMIT, check=False)


@contextlib.contextmanager
def alarm(seconds: int = LIMIT):
    """In-process guard: a TimeoutError if the block runs longer than `seconds`."""
    def fire(signum, frame):
        raise TimeoutError(f"took longer than {seconds} s")
    previous = signal.signal(signal.SIGALRM, fire)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def invoke(*args: str):
    """The command in-process (no exception may escape it), guarded by the alarm."""
    with alarm():
        return CliRunner().invoke(cli, ["policy-test", *args], catch_exceptions=False)


def assert_error(done, *needles: str) -> None:
    output = done.stdout + done.stderr if isinstance(done, subprocess.CompletedProcess) else done.output
    code = done.returncode if isinstance(done, subprocess.CompletedProcess) else done.exit_code
    assert code == 2, output
    assert "internal error" not in output and "Traceback" not in output, output
    assert "ERROR" in output, output
    for needle in needles:
        assert re.search(needle, output), (needle, output)


def suite_naming(tmp_path: Path, resource_file: str) -> Path:
    test = copy.deepcopy(TEST)
    test["resources"] = [resource_file]
    return write_suite(tmp_path / "suite", test=test)


# --- files that are not regular files ------------------------------------------------------------

@pytest.mark.parametrize("device", ["/dev/zero", "/dev/urandom"])
def test_device_file(tmp_path: Path, device: str) -> None:
    if not os.path.exists(device):
        pytest.skip(f"no {device} here")
    suite = suite_naming(tmp_path, device)
    assert_error(run_cli(str(suite), cwd=tmp_path), re.escape(device), "not a regular file", "character device")


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_fifo_resource_and_fifo_suite(tmp_path: Path) -> None:
    suite = suite_naming(tmp_path, "pipe.yaml")
    os.mkfifo(suite / "pipe.yaml")
    assert_error(run_cli(str(suite), cwd=tmp_path), r"pipe\.yaml: not a regular file \(a FIFO\)")
    fifo_suite = tmp_path / "fifo-suite"
    fifo_suite.mkdir()
    os.mkfifo(fifo_suite / "kyverno-test.yaml")  # found by the folder walk: reported, not skipped
    assert_error(run_cli(str(tmp_path / "fifo-suite"), cwd=tmp_path), "kyverno-test.yaml: not a regular file")


def test_folder_symlink_loop_and_missing_file(tmp_path: Path) -> None:
    suite = suite_naming(tmp_path, "folder")
    (suite / "folder").mkdir()
    assert_error(invoke(str(suite)), r"folder: not a regular file \(a folder\)")
    (suite / "loop-a").symlink_to(suite / "loop-b")
    (suite / "loop-b").symlink_to(suite / "loop-a")
    suite = suite_naming(tmp_path, "loop-a")
    assert_error(invoke(str(suite)), "loop-a: cannot read")
    suite = suite_naming(tmp_path, "absent.yaml")
    assert_error(invoke(str(suite)), "absent.yaml: cannot read")


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="root reads every file")
def test_unreadable_file(tmp_path: Path) -> None:
    suite = write_suite(tmp_path / "suite")
    (suite / "resource.yaml").chmod(0)
    try:
        assert_error(invoke(str(suite)), "resource.yaml: cannot read")
    finally:
        (suite / "resource.yaml").chmod(0o644)


def test_large_file_and_not_utf8(tmp_path: Path) -> None:
    suite = write_suite(tmp_path / "suite")
    with open(suite / "resource.yaml", "wb") as f:
        f.truncate(64 * 1024 * 1024)  # sparse: large without using the disk
    assert_error(invoke(str(suite)), "resource.yaml: the file is larger than")
    (suite / "resource.yaml").write_bytes(b"apiVersion: v1\nkind: \xff\xfe\n")
    assert_error(invoke(str(suite)), r"resource\.yaml:2:7: the file is not UTF-8")
    (suite / "resource.yaml").write_bytes(b"apiVersion: v1\x00\n")
    assert_error(invoke(str(suite)), r"resource\.yaml:1: the file holds a NUL")


@pytest.mark.parametrize("text,needle", [
    ("", r"kyverno-test\.yaml: holds 0 YAML documents"),
    ("---\n---\n", r"kyverno-test\.yaml: holds 0 YAML documents"),
    ("a: 1\n---\nb: 2\n", r"kyverno-test\.yaml:3:1: holds 2 YAML documents"),
    ("- policies\n", r"kyverno-test\.yaml:1:1: holds a list"),
    ("just text\n", r"kyverno-test\.yaml: holds a scalar value"),
    ("policies: [policy.yaml]\n", r"kyverno-test\.yaml:1:1: the field 'results' is required"),
])
def test_not_a_test_document(tmp_path: Path, text: str, needle: str) -> None:
    suite = write_suite(tmp_path / "suite", test=text)
    assert_error(invoke(str(suite)), needle)


# --- nesting and aliases -------------------------------------------------------------------------

DEEP = 10_000


@pytest.mark.parametrize("text", [
    "spec: " + "[" * DEEP + "]" * DEEP,  # flow lists
    "spec: " + "{a: " * DEEP + "1" + "}" * DEEP,  # flow maps
    "spec:\n  x:\n    " + "- " * DEEP + "x\n",  # block lists
    "spec:\n" + "".join(" " * i + f"k{i}:\n" for i in range(1, 400)) + " " * 400 + "v: 1\n",  # block maps
], ids=["flow-lists", "flow-maps", "block-lists", "block-maps"])
@pytest.mark.parametrize("where", ["resource", "policy"])
def test_deep_nesting(tmp_path: Path, text: str, where: str) -> None:
    header = ("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n" if where == "resource" else
              "apiVersion: kyverno.io/v1\nkind: ClusterPolicy\nmetadata: {name: pol}\n")
    suite = write_suite(tmp_path / "suite", **{where: header + text})
    assert_error(run_cli(str(suite), cwd=tmp_path), rf"{where}\.yaml:\d+:\d+: .*(nesting|nesting depth)")


def test_deep_values_in_process_and_aliases(tmp_path: Path) -> None:
    deep: object = "x"
    for _ in range(DEEP):
        deep = {"a": [deep]}
    with pytest.raises(k.Malformed, match="nesting deeper than"):
        k.evaluate_policy(POLICY, {**RESOURCE, "spec": deep})
    with pytest.raises(k.Malformed, match="nesting deeper than"):
        k.evaluate_policy({**POLICY, "spec": {"rules": [{**POLICY["spec"]["rules"][0], "validate": {
            "pattern": deep}}]}}, RESOURCE)
    cyclic: list = []
    cyclic.append(cyclic)
    with pytest.raises(k.Malformed):
        k.evaluate_policy(POLICY, {**RESOURCE, "spec": cyclic})
    suite = write_suite(tmp_path / "s1", resource="apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: &a [*a]\n")
    assert_error(invoke(str(suite)), r"resource\.yaml:4:\d+: an alias refers to a value that contains it")
    laughs = "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n"
    laughs += "".join(f"  a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]\n" for i in range(1, 9))
    suite = write_suite(tmp_path / "s2", resource=laughs)
    assert_error(invoke(str(suite)), r"resource\.yaml:\d+:\d+: the YAML document expands to more than")


def test_long_jmespath_chain_and_many_variables() -> None:
    chain = "{{ request.object" + ".a" * 5000 + " }}"
    rule = {**POLICY["spec"]["rules"][0], "validate": {"message": "m", "deny": {"conditions": {"any": [
        {"key": chain, "operator": "Equals", "value": "x"}]}}}}
    with alarm():
        results = k.evaluate_policy({**POLICY, "spec": {"rules": [rule]}}, RESOURCE)
    assert results[0].status == "error" and "nests too deeply" in results[0].message
    many = "{{ request.operation }}" * 5000
    rule["validate"]["deny"]["conditions"]["any"][0]["key"] = many
    with alarm():
        results = k.evaluate_policy({**POLICY, "spec": {"rules": [rule]}}, RESOURCE)
    assert results[0].status == "error" and "variables in one string" in results[0].message


def test_many_resources_and_results(tmp_path: Path) -> None:
    """Results find their resource by name, not by a scan of every resource for every result."""
    n = 6_000
    resources = "".join(f"---\n{{apiVersion: v1, kind: Pod, metadata: {{name: p{i}, namespace: default, "
                        f"labels: {{team: a}}}}}}\n" for i in range(n))
    results = "".join(f"- {{policy: pol, rule: r, resources: [p{i}], kind: Pod, result: pass}}\n" for i in range(n))
    suite = write_suite(tmp_path / "suite", resource=resources,
                        test="policies: [policy.yaml]\nresources: [resource.yaml]\nresults:\n" + results)
    done = run_cli("--format", "json", str(suite), cwd=tmp_path)
    summary = json.loads(done.stdout)["summary"]
    assert done.returncode == 0 and summary["met"] == n, summary


def test_wildcards_take_linear_time() -> None:
    with alarm(2):
        assert not k.wildcard_match("*a" * 40 + "*b", "a" * 20000)
        assert k.wildcard_match("*a?c*", "xxabcxx") and not k.wildcard_match("*a?c*", "xxacxx")


# --- null entries and values of the wrong type -----------------------------------------------------

@pytest.mark.parametrize("file,path,message", [
    ("test", ("policies",), r"kyverno-test\.yaml:\d+:\d+: a list entry is null at policies\[0\]"),
    ("test", ("resources",), r"kyverno-test\.yaml:\d+:\d+: a list entry is null at resources\[0\]"),
    ("test", ("results",), r"kyverno-test\.yaml:\d+:\d+: a list entry is null at results\[0\]"),
    ("policy", ("spec", "rules"), r"policy\.yaml:\d+:\d+: a list entry is null at spec\.rules\[0\]"),
    ("policy", ("spec", "rules", 0, "match", "any"),
     r"policy\.yaml:\d+:\d+: a list entry is null at spec\.rules\[0\]\.match\.any\[0\]"),
])
def test_null_entries(tmp_path: Path, file: str, path: tuple, message: str) -> None:
    docs = {"test": copy.deepcopy(TEST), "policy": copy.deepcopy(POLICY)}
    target = docs[file]
    for part in path:
        target = target[part]
    target.insert(0, None)
    suite = write_suite(tmp_path / "suite", test=docs["test"], policy=docs["policy"])
    assert_error(invoke(str(suite)), message)


def _paths(value, where=()):
    yield where
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _paths(item, where + (key,))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _paths(item, where + (index,))


def _replace(doc, where, new):
    doc = copy.deepcopy(doc)
    if not where:
        return new
    target = doc
    for part in where[:-1]:
        target = target[part]
    target[where[-1]] = new
    return doc


WRONG = [None, "text", 7, True, [], ["x"], {}, {"a": "b"}, [None], [[1]]]


@pytest.mark.parametrize("file", ["test", "policy", "resource"])
def test_every_value_of_every_wrong_type(tmp_path: Path, file: str) -> None:
    """Each value of a valid suite replaced by values of other types: the command gives a result or a
    located error (file:line:col, the value's path), never an internal error, within the time limit."""
    base = {"test": TEST, "policy": POLICY, "resource": RESOURCE}[file]
    name = {"test": "kyverno-test.yaml", "policy": "policy.yaml", "resource": "resource.yaml"}[file]
    runs = errors = 0
    for where in _paths(base):
        for new in WRONG:
            suite = write_suite(tmp_path / f"s{runs}", **{file: _replace(base, where, new)})
            done = invoke("--format", "json", str(suite))
            runs += 1
            assert done.exit_code in (0, 1, 2), done.output
            data = json.loads(done.stdout)
            status = data["suites"][0]["status"]
            if status == "error":
                errors += 1
                error = data["suites"][0]["error"]
                assert re.search(rf"{re.escape(name)}(:\d+:\d+)?: |named at .*{re.escape(name)}:\d+:\d+", error), error
                assert done.exit_code == 2
            else:
                assert done.exit_code == (0 if status == "pass" else 1)
    assert runs > 100 and errors > runs // 4  # most replacements are wrong types, and each was caught


# --- lists where the matcher once assumed maps ---------------------------------------------------

@pytest.mark.parametrize("body", [
    {"spec": {"template": [{"kind": "Deployment"}]}},  # OpenShift Template objects: spec.template is a list
    {"spec": {"template": {"spec": ["x"]}}},
    {"spec": {"template": {"spec": {"containers": {"name": "c"}}}}},
    {"spec": {"template": {"spec": {"containers": ["nginx", None, 3, {"image": ["x"]}]}}}},
    {"spec": {"jobTemplate": [1]}},
    {"spec": "text"},
    {"spec": None},
])
@pytest.mark.parametrize("kind", ["Deployment", "CronJob", "Pod", "Template"])
def test_list_where_map(kind: str, body: dict) -> None:
    policy = copy.deepcopy(POLICY)
    policy["spec"]["rules"][0]["match"] = {"any": [{"resources": {"kinds": [kind]}}]}
    policy["spec"]["rules"][0]["validate"] = {"message": "m", "deny": {"conditions": {"any": [
        {"key": "{{ images.containers.*.tag || `[]` }}", "operator": "AnyIn", "value": ["latest"]},
        {"key": "{{ request.object.spec.template.spec.containers[0].name || '' }}", "operator": "Equals",
         "value": "x"}]}}}
    resource = {"apiVersion": "v1", "kind": kind, "metadata": {"name": "r"}, **body}
    with alarm():
        results = k.evaluate_policy(policy, resource)
    assert {r.status for r in results} <= {"pass", "fail", "skip", "error"}


def test_openshift_template_suite(tmp_path: Path) -> None:
    """The shape of kyverno/policies' openshift/disallow-deprecated-apis: a Template whose
    spec.template is not a map, under a policy whose rule matches every kind."""
    policy = copy.deepcopy(POLICY)
    policy["spec"]["rules"][0]["match"] = {"any": [{"resources": {"kinds": ["*"]}}]}
    policy["spec"]["rules"][0]["validate"] = {"message": "deprecated", "deny": {}}
    policy["spec"]["rules"][0].pop("preconditions")
    resource = {"apiVersion": "template.openshift.io/v1", "kind": "Template", "metadata": {"name": "p"},
                "objects": [], "spec": {"template": ["a", "b"]}}
    test = copy.deepcopy(TEST)
    test["results"][0].update(kind="Template", result="fail")
    suite = write_suite(tmp_path / "suite", test=test, policy=policy, resource=resource)
    done = invoke(str(suite))
    assert done.exit_code == 0, done.output


# --- unsupported constructs ----------------------------------------------------------------------

def _set_path(doc: dict, schema_path: str, value) -> tuple:
    """Put `value` at a schema path (`spec.rules[].validate.cel`) of `doc`; the concrete path."""
    parts = re.findall(r"[^.\[\]]+|\[\]", schema_path)
    target, concrete = doc, []
    for i, part in enumerate(parts):
        last = i == len(parts) - 1
        if part == "[]":
            if not target:
                target.append({"name": "x"} if last else {})
            concrete.append(0)
            if last:
                target[0] = value
            target = target[0]
            continue
        nxt = parts[i + 1] if not last else None
        if last:
            target[part] = value
        elif not isinstance(target.get(part), (dict, list)):
            target[part] = [] if nxt == "[]" else {}
        concrete.append(part)
        target = target[part]
    return tuple(concrete)


@pytest.mark.parametrize("schema_path", sorted(k.UNSUPPORTED))
def test_each_unsupported_field_is_named(tmp_path: Path, schema_path: str) -> None:
    """Every field of shape.UNSUPPORTED, put into a valid suite (its policy, its test or a Values
    file): the result is unsupported, naming the field (and the rule, for a policy's field)."""
    doc_name, _, field_path = schema_path.partition(".") if schema_path[0].isupper() else ("", "", schema_path)
    for sample in ("x", ["x"], {"a": "x"}):  # the first the field's own shape accepts
        policy, test = copy.deepcopy(POLICY), copy.deepcopy(TEST)
        values = {"apiVersion": "cli.kyverno.io/v1alpha1", "kind": "Values",
                  "policies": [{"name": "pol", "rules": [{"name": "r"}]}]}
        target = {"": policy, "Test": test, "Values": values}[doc_name]
        _set_path(target, field_path, sample)
        if doc_name == "Values":
            test["variables"] = "values.yaml"
        suite = write_suite(tmp_path / f"suite-{len(str(sample))}", test=test, policy=policy)
        (suite / "values.yaml").write_text(yaml.safe_dump(values))
        done = invoke("--format", "json", str(suite))
        report = json.loads(done.stdout)["suites"][0]
        if report["status"] != "error":
            break
    assert done.exit_code == 1, done.output
    assert report["status"] == "unsupported", report
    result = report["results"][0]
    assert result["unsupported"] and not result["met"]
    dotted = field_path.replace("[]", "[0]")
    assert dotted in result["detail"] and k.NOT_SUPPORTED in result["detail"], result["detail"]
    if not doc_name:
        assert "rule 'r'" in result["detail"], result["detail"]
    human = invoke(str(suite))
    assert "UNSUPPORTED" in human.output and dotted in human.output


def _with(rule_update: dict | None = None, **spec) -> dict:
    policy = copy.deepcopy(POLICY)
    policy["spec"]["rules"][0].update(rule_update or {})
    policy["spec"].update(spec)
    return policy


@pytest.mark.parametrize("policy,test_update,values,needle", [
    (_with({"preconditions": [{"key": "a", "operator": "Matches", "value": "b"}]}), {}, None,
     r"spec\.rules\[0\]\.preconditions\[0\]\.operator: the condition operator 'Matches'"),
    (_with({"context": [{"name": "hosts", "apiCall": {"urlPath": "/api/v1/x"}}]}), {}, None,
     r"rule 'r': the context entry 'hosts' of type apiCall"),
    (_with({"context": [{"name": "cm", "configMap": {"name": "x", "namespace": "y"}}]}), {}, None,
     r"context entry 'cm' of type configMap"),
    (_with({"match": {"any": [{"resources": {"kinds": ["Pod"], "namespaceSelector": {
        "matchLabels": {"a": "b"}}}}]}}), {}, None, r"namespaceSelector"),
    (_with({"validate": {"message": "m", "deny": {"conditions": [
        {"key": "{{ time_now() }}", "operator": "Equals", "value": "x"}]}}}), {}, None,
     r"JMESPath function time_now"),
    (_with({"validate": {"message": "m", "pattern": {"metadata": {"name": "$(./kind)"}}}}), {}, None,
     r"\$\(\.\.\.\) references"),
    (_with(), {"userinfo": "user.yaml"}, None, r"kyverno-test\.yaml: userinfo: admission user information"),
    (_with(), {"exceptions": ["x.yaml"]}, None, r"kyverno-test\.yaml: exceptions: policy exceptions"),
    (_with(), {"results": [{**TEST["results"][0], "patchedResources": "p.yaml"}]}, None,
     r"results\[0\]\.patchedResources"),
    (_with(), {"variables": "values.yaml"}, {"policies": [{"name": "pol", "rules": [
        {"name": "r", "foreachValues": {"a": [1]}}]}]}, r"Values file: policies\[0\]\.rules\[0\]\.foreachValues"),
    (_with(), {"variables": "values.yaml"}, {"subresources": [{}]}, r"Values file: subresources"),
    (_with({"validate": {"message": "m", "patern": {"kind": "Pod"}}}), {}, None,
     r"rule 'r': spec\.rules\[0\]\.validate\.patern: a field unknown to Kyverno's schema"),
    (_with({"validate": {"message": "m", "pattern": {"metadata": {"name": "{{@}}"}}}}), {}, None, r"\{\{@\}\}"),
    (_with({"match": {"any": [{"resources": {"kinds": ["Pod"], "selector": {"matchExpressions": [
        {"key": "a", "operator": "Gt", "values": ["1"]}]}}}]}}), {}, None,
     r"rule 'r': the label selector operator 'Gt'"),
], ids=["operator", "apiCall", "configMap", "namespaceSelector", "jmespath-function", "reference",
        "userinfo", "exceptions", "patchedResources", "foreachValues", "subresources", "unknown-field",
        "self-reference", "selector-operator"])
def test_each_unsupported_value_is_named(tmp_path: Path, policy: dict, test_update: dict, values, needle: str) -> None:
    test = {**copy.deepcopy(TEST), **test_update}
    suite = write_suite(tmp_path / "suite", test=test, policy=policy)
    if values is not None:
        (suite / "values.yaml").write_text(yaml.safe_dump({"apiVersion": "cli.kyverno.io/v1alpha1",
                                                           "kind": "Values", **values}))
    done = invoke("--format", "json", str(suite))
    assert done.exit_code == 1, done.output
    suite_report = json.loads(done.stdout)["suites"][0]
    assert suite_report["status"] == "unsupported", suite_report
    assert re.search(needle, suite_report["unsupported"]), suite_report["unsupported"]
    assert k.NOT_SUPPORTED in suite_report["unsupported"]


def test_other_policy_kinds_are_unsupported(tmp_path: Path) -> None:
    policy = {"apiVersion": "policies.kyverno.io/v1alpha1", "kind": "ValidatingPolicy",
              "metadata": {"name": "pol"}, "spec": {"validations": [{"expression": "true"}]}}
    suite = write_suite(tmp_path / "suite", policy=policy)
    done = invoke("--format", "json", str(suite))
    report = json.loads(done.stdout)["suites"][0]
    assert done.exit_code == 1 and report["status"] == "unsupported"
    assert "policy kind ValidatingPolicy" in report["unsupported"]


def test_values_give_context_and_namespace_labels(tmp_path: Path) -> None:
    """What makes the cluster-reading constructs usable: a Values file giving their variables."""
    policy = _with({"context": [{"name": "hosts", "apiCall": {"urlPath": "/x", "jmesPath": "items"}}],
                    "match": {"any": [{"resources": {"kinds": ["Pod"], "namespaceSelector": {
                        "matchLabels": {"env": "prod"}}}}]},
                    "validate": {"message": "m", "deny": {"conditions": {"any": [
                        {"key": "{{ request.object.metadata.name }}", "operator": "AnyIn",
                         "value": "{{ hosts }}"}]}}}})
    test = {**copy.deepcopy(TEST), "variables": "values.yaml"}
    test["results"][0]["result"] = "fail"
    suite = write_suite(tmp_path / "suite", test=test, policy=policy)
    values = {"apiVersion": "cli.kyverno.io/v1alpha1", "kind": "Values",
              "namespaceSelector": [{"name": "default", "labels": {"env": "prod"}}],
              "policies": [{"name": "pol", "rules": [{"name": "r", "values": {"hosts": ["p", "q"]}}]}]}
    (suite / "values.yaml").write_text(yaml.safe_dump(values))
    done = invoke(str(suite))
    assert done.exit_code == 0, done.output
    values["namespaceSelector"][0]["labels"]["env"] = "dev"  # the namespace no longer matches: skip
    (suite / "values.yaml").write_text(yaml.safe_dump(values))
    test["results"][0]["result"] = "skip"
    (suite / "kyverno-test.yaml").write_text(yaml.safe_dump(test))
    assert invoke(str(suite)).exit_code == 0
    del values["namespaceSelector"]  # the labels from Namespace objects instead
    values["namespaces"] = [{"apiVersion": "v1", "kind": "Namespace",
                             "metadata": {"name": "default", "labels": {"env": "prod"}}}]
    (suite / "values.yaml").write_text(yaml.safe_dump(values))
    test["results"][0]["result"] = "fail"
    (suite / "kyverno-test.yaml").write_text(yaml.safe_dump(test))
    assert invoke(str(suite)).exit_code == 0
    values["namespaces"][0]["metadata"]["labels"] = ["env"]
    (suite / "values.yaml").write_text(yaml.safe_dump(values))
    assert_error(invoke(str(suite)),
                 r"values\.yaml:\d+:\d+: expected a map, found a list at namespaces\[0\]\.metadata\.labels")


def test_control_characters_are_printed_inert(tmp_path: Path) -> None:
    resource = copy.deepcopy(RESOURCE)
    resource["metadata"]["labels"] = {"\x1b[2Jteam": ["a"]}
    suite = write_suite(tmp_path / "suite", resource=resource)
    done = invoke(str(suite))
    assert done.exit_code == 2 and "\x1b" not in done.output and "\\u001b[2Jteam" in done.output, done.output


def test_docs_list_every_unsupported_construct() -> None:
    text = DOCS.read_text(encoding="utf-8")
    for path in k.UNSUPPORTED:
        assert f"`{path}`" in text, f"docs/policy-test.md does not list {path}"
    for construct in k.UNSUPPORTED_VALUES:
        assert construct in text, f"docs/policy-test.md does not list {construct}"


# --- real suites ---------------------------------------------------------------------------------

@pytest.mark.skipif(not REFERENCE.is_dir(), reason=f"reference suites not found under {REFERENCE}")
def test_reference_suites_through_the_command() -> None:
    """Every reference suite through the real command: no internal error, and each suite either
    agrees with its expected results or is unsupported or unusable (a file it names is missing)."""
    done = subprocess.run([sys.executable, "-m", "itbench_dsl", "policy-test", "--format", "json", str(REFERENCE)],
                          capture_output=True, text=True, timeout=300, check=False)
    assert "internal error" not in done.stderr and "Traceback" not in done.stderr, done.stderr
    data = json.loads(done.stdout)
    statuses = [s["status"] for s in data["suites"]]
    assert len(statuses) >= 90 and "fail" not in statuses, [s["path"] for s in data["suites"] if s["status"] == "fail"]
    for suite in data["suites"]:
        if suite["status"] == "error":
            assert "cannot read" in suite["error"], suite["error"]
    assert statuses.count("pass") >= len(statuses) // 2
