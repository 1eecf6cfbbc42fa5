"""Which engine grades a Rego artefact: OPA v1 when its binary is found, else regopy (docs/evaluator.md).

With the `opa` that `python tools/build_ecosystem.py opa` builds (or ITBENCH_TEST_OPA naming one), each
class where regopy (rego-cpp) departs from OPA v1 gets OPA's verdict: `every x in C { not e }`, a `(?i)`
regular expression, a module OPA refuses to compile (an unused or unsafe variable), a two-variable
`some k, v in X` in a comprehension. Those tests skip without the binary (and without Go). The engine's
choice (--opa, ITBENCH_OPA, `opa` on PATH, then regopy) and the way an `opa eval` run is read (its result,
its errors, its bounds) are checked everywhere with a stand-in `opa` script.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from test_evaluator import bundle, evaluator, run

REPO = Path(__file__).resolve().parents[2]
K8S = "cis-k8s-5-4-1-secret-env-opa"      # opa_kubectl: a `kubectl get -o json` List
HOSTS = "rhel9-sshd-permit-root-login-ansible-opa"  # ansible_opa: one item per host


def _load_build_ecosystem():
    spec = importlib.util.spec_from_file_location("build_ecosystem_rego", REPO / "tools" / "build_ecosystem.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclass looks its module up there
    spec.loader.exec_module(module)
    return module


def _opa() -> str | None:
    given = os.environ.get("ITBENCH_TEST_OPA")
    if given:
        return given if Path(given).is_file() else None
    tools = _load_build_ecosystem()
    if not tools.go_binary():
        return None
    path = tools.binary_path("opa")
    return str(path) if path.is_file() else None


OPA = _opa()
needs_opa = pytest.mark.skipif(OPA is None, reason="OPA is not built (python tools/build_ecosystem.py opa)")


def check(verdict: dict, check_id: str) -> dict:
    return next(c for c in verdict["checks"] if c["id"] == check_id)


def source(verdict: dict) -> str:
    """The engine a verdict names (`rego (opa 1.22.4)`), from its first gap check."""
    detail = next(c["detail"] for c in verdict["checks"] if c["id"].startswith("ciso.gap."))
    return detail[:detail.index(")") + 1]


# ---- the classes where regopy departs from OPA v1: OPA's verdict ------------------------------------------

# PermitRootLogin as sshd reads it: the first drop-in (by name) holding the keyword in any case, else the main file
PERMIT_ROOT = """
dropins(h) := [p |
	some p
	f := h.files[p]
	startswith(p, "/etc/ssh/sshd_config.d/")
	some k
	f[k]
	lower(k) == "permitrootlogin"
]

permit_root_login(h) := value if {
	paths := sort(dropins(h))
	some k, value in h.files[paths[0]]
	lower(k) == "permitrootlogin"
} else := value if {
	some k, value in h.files["/etc/ssh/sshd_config"]
	lower(k) == "permitrootlogin"
} else := "prohibit-password"
"""


# every host without a root login (OPA: right); regopy reads `every ... { not ... }` as always true
EVERY_NOT = """package check

default result := false

result if {
	every h in input.hosts {
		not permits_root(h)
	}
}

permits_root(h) if lower(permit_root_login(h)) != "no"
""" + PERMIT_ROOT

# OPA: false on every input that has a host (a deny-all); regopy: true where no host permits a root login
EVERY_NOT_DENY_ALL = """package check

default result := false

result if {
	every h in input.hosts {
		not h.name
	}
	not any_bad
}

any_bad if {
	some h in input.hosts
	lower(object.get(h.files, ["/etc/ssh/sshd_config", "PermitRootLogin"], "yes")) != "no"
}
"""

# sshd's keywords are case-insensitive: OPA honours RE2's (?i), regopy does not
CASE_FLAG = """package check

default result := false

result if count(bad_hosts) == 0

bad_hosts contains h.name if {
	some h in input.hosts
	value := permit_root_login(h)
	not regex.match(`(?i)^no$`, value)
}
""" + PERMIT_ROOT

# right, but with a rule OPA refuses to compile (`v` declared and unused): regopy accepts the module
UNUSED_VAR = EVERY_NOT.replace("result if {", """names_ok if {
	every k, v in input.hosts[0].files {
		startswith(k, "/")
	}
}

result if {""", 1)

# right, but `_` unsafe under `not`: OPA refuses the module
UNSAFE_VAR = """package check

default result := false

result if {
	not input.hosts[_].files["/etc/ssh/sshd_config"].PermitRootLogin == "yes"
	count(bad) == 0
}

bad contains h.name if {
	some h in input.hosts
	lower(object.get(h.files, ["/etc/ssh/sshd_config", "PermitRootLogin"], "yes")) != "no"
}
"""

# a two-variable `some k, v in X` in an array comprehension (OPA v1's own idiom): regopy refuses the module
TWO_VAR_SOME = """package check

default result := false

result if count(offending) == 0

offending := [i | some i, item in input.items; secret_in_env(item)]

pod_spec(item) := item.spec if item.kind == "Pod"

pod_spec(item) := item.spec.template.spec if item.spec.template

pod_spec(item) := item.spec.jobTemplate.spec.template.spec if item.spec.jobTemplate

containers(spec) := array.concat(array.concat(object.get(spec, "containers", []),
	object.get(spec, "initContainers", [])), object.get(spec, "ephemeralContainers", []))

secret_in_env(item) if {
	spec := pod_spec(item)
	some c in containers(spec)
	some e in object.get(c, "env", [])
	e.valueFrom.secretKeyRef
}

secret_in_env(item) if {
	spec := pod_spec(item)
	some c in containers(spec)
	some e in object.get(c, "envFrom", [])
	e.secretRef
}
"""

# (scenario, policy, OPA's verdict, what ciso.verdicts says when OPA refuses the module)
CLASSES = {
    "every-not": (HOSTS, EVERY_NOT, True, None),
    "every-not-deny-all": (HOSTS, EVERY_NOT_DENY_ALL, False, None),
    "regex-case-flag": (HOSTS, CASE_FLAG, True, None),
    "unused-var": (HOSTS, UNUSED_VAR, False, "declared var v unused"),
    "unsafe-var": (HOSTS, UNSAFE_VAR, False, "rego_unsafe_var_error"),
    "two-var-some-in-comprehension": (K8S, TWO_VAR_SOME, True, None),
}


@needs_opa
@pytest.mark.parametrize("name", CLASSES)
def test_opa_gives_its_verdict_on_each_class_regopy_misjudges(name, monkeypatch):
    scenario, policy, passed, refused = CLASSES[name]
    monkeypatch.setenv("ITBENCH_OPA", OPA)
    verdict = run(scenario, None, None, task="policy", artifact=("rego", policy))
    assert source(verdict).startswith("rego (opa 1."), verdict["checks"]
    assert verdict["passed"] is passed, [c for c in verdict["checks"] if not c["passed"]]
    if refused:
        assert refused in check(verdict, "ciso.verdicts")["detail"]
        assert verdict["score"] == 0.0


@needs_opa
def test_opa_minimal_forms(monkeypatch):
    """The reproductions' minimal forms, on the engine itself: OPA's value on one input."""
    monkeypatch.setenv("ITBENCH_OPA", OPA)
    ns = evaluator(HOSTS)
    name, evaluate = ns["rego_engine"]()
    assert name.startswith("opa 1.")
    head = "package check\n\ndefault result := false\n\n"
    assert evaluate(head + "result if { every e in input.t { not e } }\n", [{"t": [True]}, {"t": [False]}]) == [
        "fail", "pass"]
    assert evaluate(head + 'result if regex.match("(?i)^permitrootlogin\\\\s+yes", input.v)\n',
                    [{"v": "PermitRootLogin yes"}]) == ["pass"]
    assert evaluate(head + "result if count({k | some k, v in input.o; v == 1}) == 1\n",
                    [{"o": {"a": 1, "b": 2}}]) == ["pass"]
    with pytest.raises(ns["RegoRefused"], match="declared var v unused"):
        evaluate(head + 'result if { every k, v in input.o { startswith(k, "a") } }\n', [{"o": {"a": 1}}])


@needs_opa
def test_opa_evaluates_every_input_of_a_grading_at_once(monkeypatch):
    """One `opa eval` per grading (the objects, then their twins), whatever the number of inputs; an input
    whose `result` is undefined is an `error` verdict on that input alone, and an evaluation error on one input
    (a conflict between rule values) still fails the policy with OPA's reason."""
    monkeypatch.setenv("ITBENCH_OPA", OPA)
    ns = evaluator(HOSTS)
    evals = []
    real_run = subprocess.run

    def counting(command, *args, **kwargs):
        if command[1:2] == ["eval"]:
            evals.append(command[-1])
        return real_run(command, *args, **kwargs)

    monkeypatch.setattr(subprocess, "run", counting)
    verdict = run(HOSTS, None, None, task="policy", artifact=("rego", CASE_FLAG))
    assert verdict["passed"] and source(verdict).startswith("rego (opa 1.")
    assert evals == [ns["OPA_BATCH_QUERY"]] * 2
    _, evaluate = ns["rego_engine"]()
    head = "package check\n\n"
    evals.clear()
    assert evaluate(head + "result := input.x == 1 if input.x != 2\n", [{"x": 1}, {"x": 2}, {"x": 3}]) == [
        "pass", "error", "fail"]
    assert evals == [ns["OPA_BATCH_QUERY"]]
    conflict = head + "result if input.x == 1\nresult if input.x == 3\nresult := false if input.x == 3\n"
    with pytest.raises(ns["RegoRefused"], match="policy.rego:5: eval_conflict_error: rule data.check.result produced "
                                                "conflicting values"):
        evaluate(conflict, [{"x": 1}, {"x": 3}, {"x": 2}])
    # the batch, then each input alone up to the one that errs
    assert evals[1:] == [ns["OPA_BATCH_QUERY"], "data.check.result", "data.check.result"]


@needs_opa
def test_itbench_evaluate_names_opa(tmp_path):
    folder = _bundle_dir(tmp_path, HOSTS)
    policy = tmp_path / "policy.rego"
    policy.write_text(CASE_FLAG)
    out = _itbench_evaluate(folder, "--artifact", str(policy), "--opa", OPA, "--json")
    assert out.returncode == 0, out.stderr
    verdict = json.loads(out.stdout)
    assert verdict["passed"] and source(verdict).startswith("rego (opa 1.")


# ---- the engine's choice and the fallback, with a stand-in `opa` ------------------------------------------

def _stand_in(folder: Path, version: str, body: str) -> Path:
    """An `opa` script that says `version` and runs `body` (sh) for `opa eval`."""
    folder.mkdir(parents=True, exist_ok=True)
    script = folder / "opa"
    script.write_text(f'#!/bin/sh\nif [ "$1" = version ]; then echo "Version: {version}"; exit 0; fi\n{body}\n')
    script.chmod(0o755)
    return script


ONE_TRUE = "echo '{\"result\": [{\"expressions\": [{\"value\": true, \"text\": \"data.check.result\"}]}]}'"
# true on every input: `opa eval ... data.check.result` on one input ($8, the query), or the batch query on the
# list of inputs (inputs.json): a pair [i, true] for each
ALL_TRUE = (f'"{sys.executable}" -c "import json; n = len(json.load(open(\'inputs.json\'))); '
            "print(json.dumps({'result': [{'expressions': [{'value': [[i, True] for i in range(n)]}]}]}))\"")
TRUE = f'if [ "$8" = data.check.result ]; then {ONE_TRUE}; else {ALL_TRUE}; fi'


@pytest.fixture
def no_opa(monkeypatch, tmp_path):
    """No OPA anywhere: no ITBENCH_OPA, and a PATH without `opa`."""
    monkeypatch.delenv("ITBENCH_OPA", raising=False)
    monkeypatch.setenv("PATH", _path(tmp_path / "empty"))
    return tmp_path


def _path(first: Path) -> str:
    """A PATH of `first`, the system's folders and Go's (where the ecosystem's binaries are looked up), without `opa`."""
    go = shutil.which("go")
    folders = [str(first), "/usr/bin", "/bin"] + ([str(Path(go).parent)] if go else [])
    return ":".join(f for f in folders if f == str(first) or not (Path(f) / "opa").exists())


def test_without_opa_regopy_grades(no_opa):
    pytest.importorskip("regopy")
    verdict = run(HOSTS, None, None, task="policy", artifact=("rego", EVERY_NOT))
    assert source(verdict) == "rego (regopy)"


def test_opa_on_path_grades(no_opa, monkeypatch):
    folder = no_opa / "bin"
    _stand_in(folder, "1.99.0", TRUE)
    monkeypatch.setenv("PATH", _path(folder))
    verdict = run(HOSTS, None, None, task="policy", artifact=("rego", EVERY_NOT))
    assert source(verdict) == "rego (opa 1.99.0)"
    # true on every input: the gap host passes, which it must not
    assert not verdict["passed"] and "pass" in next(
        c["detail"] for c in verdict["checks"] if c["id"].startswith("ciso.gap."))


def test_opa_0x_on_path_is_passed_over(no_opa, monkeypatch):
    pytest.importorskip("regopy")
    folder = no_opa / "bin"
    _stand_in(folder, "0.70.0", TRUE)
    monkeypatch.setenv("PATH", _path(folder))
    assert source(run(HOSTS, None, None, task="policy", artifact=("rego", EVERY_NOT))) == "rego (regopy)"


def test_the_environment_goes_before_path_and_none_means_regopy(no_opa, monkeypatch):
    pytest.importorskip("regopy")
    on_path = _stand_in(no_opa / "bin", "1.98.0", TRUE)
    named = _stand_in(no_opa / "named", "1.99.0", TRUE)
    monkeypatch.setenv("PATH", _path(on_path.parent))
    monkeypatch.setenv("ITBENCH_OPA", str(named))
    assert source(run(HOSTS, None, None, task="policy", artifact=("rego", EVERY_NOT))) == "rego (opa 1.99.0)"
    monkeypatch.setenv("ITBENCH_OPA", "none")
    assert source(run(HOSTS, None, None, task="policy", artifact=("rego", EVERY_NOT))) == "rego (regopy)"


def test_a_named_binary_that_is_not_opa_v1_is_refused(no_opa, monkeypatch):
    ns = evaluator(HOSTS)
    monkeypatch.setenv("ITBENCH_OPA", str(no_opa / "nowhere" / "opa"))
    with pytest.raises(ns["InputError"], match="not the binary of OPA v1"):
        ns["evaluate"](ns["SPEC"], None, None, task="policy", artifact=("rego", EVERY_NOT))


def test_no_engine_at_all_is_an_unusable_input(no_opa, monkeypatch):
    ns = evaluator(HOSTS)
    monkeypatch.setitem(sys.modules, "regopy", None)  # `import regopy` fails
    with pytest.raises(ns["InputError"], match="no Rego engine"):
        ns["evaluate"](ns["SPEC"], None, None, task="policy", artifact=("rego", EVERY_NOT))
    # a recorded result still grades
    ns["evaluate"](ns["SPEC"], None, None, task="policy", opa_result={})


def test_opa_refusing_the_module_fails_the_policy_with_its_reason(no_opa, monkeypatch):
    error = {"errors": [{"message": "declared var v unused", "code": "rego_compile_error",
                         "location": {"file": "policy.rego", "row": 9, "col": 2}}]}
    named = _stand_in(no_opa / "bin", "1.99.0", f"echo '{json.dumps(error)}'; exit 1")
    monkeypatch.setenv("ITBENCH_OPA", str(named))
    verdict = run(HOSTS, None, None, task="policy", artifact=("rego", EVERY_NOT))
    assert not verdict["passed"] and verdict["score"] == 0.0
    assert check(verdict, "ciso.verdicts")["detail"] == ("the Rego artefact does not evaluate (OPA): policy.rego:9: "
                                                         "rego_compile_error: declared var v unused")
    assert source(verdict) == "rego (opa 1.99.0: not evaluated)"


@pytest.mark.parametrize("body", [
    "head -c 3000000 /dev/zero | tr '\\0' x",   # output beyond OPA_OUTPUT
    "echo 'fatal error: runtime: out of memory'; exit 2",  # Go out of its memory
    "sleep 30",  # beyond the wall-clock bound
])
def test_an_opa_run_over_its_bounds_fails_the_policy(no_opa, monkeypatch, body):
    named = _stand_in(no_opa / "bin", "1.99.0", body)
    monkeypatch.setenv("ITBENCH_OPA", str(named))
    ns = evaluator(HOSTS)
    ns["OPA_SECONDS"] = 2
    verdict = ns["evaluate"](ns["SPEC"], None, None, task="policy", artifact=("rego", EVERY_NOT))
    assert not verdict["passed"]
    assert "goes over its budget" in check(verdict, "ciso.verdicts")["detail"]


def test_an_undefined_result_is_an_error_verdict(no_opa, monkeypatch):
    named = _stand_in(no_opa / "bin", "1.99.0", "echo '{}'")
    monkeypatch.setenv("ITBENCH_OPA", str(named))
    verdict = run(HOSTS, None, None, task="policy", artifact=("rego", EVERY_NOT))
    assert not verdict["passed"] and verdict["metrics"]["compliant_passed"] == 0.0


def test_opa_eval_is_run_as_the_prompt_defines_the_result(no_opa, monkeypatch):
    """One `opa eval --data policy.rego --input inputs.json QUERY` per grading: the result as the prompt defines
    it (`data.check.result`) on each input of the list, the policy and the inputs as given."""
    seen = no_opa / "seen"
    named = _stand_in(no_opa / "bin", "1.99.0", f'echo "$@" >> {seen}; cp policy.rego {seen}.rego; '
                      f"cp inputs.json {seen}.json; {TRUE}")
    monkeypatch.setenv("ITBENCH_OPA", str(named))
    ns = evaluator(HOSTS)
    ns["evaluate"](ns["SPEC"], None, None, task="policy", artifact=("rego", EVERY_NOT))
    query = ns["OPA_BATCH_QUERY"]
    assert "data.check.result with input as" in query
    # two gradings (the objects, then their twins for ciso.general): one `opa eval` each
    assert seen.read_text().splitlines() == [" ".join(["eval", "--format", "json", "--data", "policy.rego", "--input",
                                                       "inputs.json", query])] * 2
    assert Path(f"{seen}.rego").read_text() == EVERY_NOT
    inputs = json.loads(Path(f"{seen}.json").read_text())
    assert len(inputs) > 2 and all("hosts" in document for document in inputs)


# the batch fails as a whole (an evaluation error on some input, or a bound); alone, the input holding `bad`
# gives a conflict error, the others true
CONFLICT = {"errors": [{"message": "rule data.check.result produced conflicting values", "code": "eval_conflict_error",
                        "location": {"file": "policy.rego", "row": 5, "col": 1}}]}
ALONE = (f"if grep -q bad input.json; then echo '{json.dumps(CONFLICT)}'; exit 2; fi; {ONE_TRUE}")


@pytest.mark.parametrize("batch", [f"echo '{json.dumps(CONFLICT)}'; exit 2", "sleep 30",
                                   "echo 'fatal error: runtime: out of memory'; exit 2"])
def test_a_batch_that_fails_is_evaluated_input_by_input(no_opa, monkeypatch, batch):
    """An error of one input stops the whole batch (Rego cannot catch it per input): each input is then
    evaluated alone, in order, and the one that errs says so as it did alone; a bound on the batch is no verdict."""
    seen = no_opa / "seen"
    named = _stand_in(no_opa / "bin", "1.99.0", f'echo "$8" >> {seen}; '
                      f'if [ "$8" = data.check.result ]; then {ALONE}; else {batch}; fi')
    monkeypatch.setenv("ITBENCH_OPA", str(named))
    ns = evaluator(HOSTS)
    monkeypatch.setitem(ns, "OPA_SECONDS", 2)
    _, evaluate = ns["rego_engine"]()
    assert evaluate("package check\n", [{"a": 1}, {"a": 2}, {"a": 3}]) == ["pass"] * 3
    assert seen.read_text().splitlines() == [ns["OPA_BATCH_QUERY"]] + ["data.check.result"] * 3
    seen.unlink()
    with pytest.raises(ns["RegoRefused"], match="policy.rego:5: eval_conflict_error: rule data.check.result produced"):
        evaluate("package check\n", [{"a": 1}, {"a": "bad"}, {"a": 3}])
    assert seen.read_text().splitlines() == [ns["OPA_BATCH_QUERY"]] + ["data.check.result"] * 2


def test_each_object_is_stored_once_per_grading(no_opa, monkeypatch):
    """The inputs of a grading hold the same objects many times: each is put in its stored form once."""
    named = _stand_in(no_opa / "bin", "1.99.0", TRUE)
    monkeypatch.setenv("ITBENCH_OPA", str(named))
    ns = evaluator(K8S)
    stored = []
    real = ns["as_stored"]
    monkeypatch.setitem(ns, "as_stored", lambda obj: stored.append(obj) or real(obj))
    ns["rego_verdicts"](ns["SPEC"], "package check\n", None)
    assert stored and len({id(obj) for obj in stored}) == len(stored)


def test_an_input_left_out_of_the_batch_is_an_error_verdict(no_opa, monkeypatch):
    """The batch's pairs map back to their inputs by index; an input without a pair (`result` undefined there)
    is an `error` verdict, and a batch answer that is no list of pairs is evaluated input by input."""
    pairs = {"result": [{"expressions": [{"value": [[2, False], [0, True], [3, {"x": 1}]]}]}]}
    named = _stand_in(no_opa / "bin", "1.99.0", f"echo '{json.dumps(pairs)}'")
    monkeypatch.setenv("ITBENCH_OPA", str(named))
    _, evaluate = evaluator(HOSTS)["rego_engine"]()
    assert evaluate("package check\n", [{}, {}, {}, {}]) == ["pass", "error", "fail", "error"]
    # index 4 of four inputs: not OPA's answer to the batch; each input alone gives this same output (no result)
    pairs["result"][0]["expressions"][0]["value"].append([4, True])
    _stand_in(no_opa / "bin", "1.99.0", f"echo '{json.dumps(pairs)}'")
    assert evaluate("package check\n", [{}, {}, {}, {}]) == ["error"] * 4


# ---- `itbench evaluate`: --opa passed on, the built binary found --------------------------------------------

def _bundle_dir(tmp_path: Path, name: str) -> Path:
    folder = tmp_path / name
    folder.mkdir()
    for path, data in bundle(name)[1].items():
        (folder / path).parent.mkdir(parents=True, exist_ok=True)
        (folder / path).write_bytes(data if isinstance(data, bytes) else data.encode())
    return folder


def _itbench_evaluate(*args, env=None):
    return subprocess.run([sys.executable, "-m", "itbench_dsl", "evaluate", *map(str, args)],
                          capture_output=True, text=True, env=env, check=False, timeout=600)


def test_itbench_evaluate_passes_opa_on(no_opa):
    pytest.importorskip("regopy")
    folder = _bundle_dir(no_opa, HOSTS)
    policy = no_opa / "policy.rego"
    policy.write_text(EVERY_NOT)
    named = _stand_in(no_opa / "bin", "1.99.0", TRUE)
    out = _itbench_evaluate(folder, "--artifact", policy, "--opa", named, "--json")
    assert out.returncode == 0, out.stderr
    assert source(json.loads(out.stdout)) == "rego (opa 1.99.0)"
    out = _itbench_evaluate(folder, "--artifact", policy, "--opa", "none", "--json")
    assert source(json.loads(out.stdout)) == "rego (regopy)"
    out = _itbench_evaluate(folder, "--artifact", policy, "--opa", no_opa / "nowhere", "--json")
    assert out.returncode == 2 and "not the binary of OPA v1" in out.stderr


def test_itbench_evaluate_finds_the_built_opa(no_opa, monkeypatch):
    tools = _load_build_ecosystem()
    if not tools.go_binary():
        pytest.skip("Go is not installed: there is no built OPA to find")
    from itbench_dsl.cli.evaluate import built_opa

    monkeypatch.setenv("XDG_CACHE_HOME", str(no_opa / "cache"))
    assert built_opa() is None
    target = tools.binary_path("opa")
    _stand_in(target.parent, "1.97.0", TRUE)
    assert built_opa() == str(target)
    folder = _bundle_dir(no_opa, HOSTS)
    policy = no_opa / "policy.rego"
    policy.write_text(EVERY_NOT)
    out = _itbench_evaluate(folder, "--artifact", policy, "--json")
    assert out.returncode == 0, out.stderr
    assert source(json.loads(out.stdout)) == "rego (opa 1.97.0)"
