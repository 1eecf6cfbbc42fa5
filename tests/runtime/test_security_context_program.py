"""A securityContext changed beside a fix is judged as part of the program (runtime/evaluator.py,
security_problems and security_restricted): a change that keeps the program from writing what it writes,
starting as its entrypoint does, or being started at all fails; hardening the program tolerates passes."""

from __future__ import annotations

from itbench_dsl.analysis.corpus import FAIL, PASS
from itbench_dsl.runtime.evaluator import security_problems, security_restricted

from tests.analysis.test_corpus import _problems, names

NGINX = {"name": "web", "image": "nginx:1.25"}
VALKEY = {"name": "valkey", "image": "valkey/valkey:8.1.3-alpine"}
MONGO = {"name": "db", "image": "mongo:4.4.6", "args": ["--auth"]}
MEMCACHED = {"name": "cache", "image": "memcached:1.6"}
UNKNOWN = {"name": "app", "image": "ghcr.io/example/app:1"}


def test_a_read_only_root_filesystem_fails_where_the_program_writes_outside_its_volumes():
    assert "readOnlyRootFilesystem" in security_problems(NGINX, {}, {"readOnlyRootFilesystem": True}, [])
    assert security_problems(NGINX, {}, {"readOnlyRootFilesystem": True}, ["/var/cache/nginx"]) == {}
    assert "readOnlyRootFilesystem" in security_problems(MONGO, {}, {"readOnlyRootFilesystem": True}, ["/data/db"])
    # valkey writes /data, its image's VOLUME: a writable directory of the node under containerd
    assert security_problems(VALKEY, {}, {"readOnlyRootFilesystem": True}, []) == {}
    assert security_problems(UNKNOWN, {}, {"readOnlyRootFilesystem": True}, []) == {}


def test_users_and_capabilities():
    assert "runAsNonRoot" in security_problems(MEMCACHED, {}, {"runAsNonRoot": True}, [])  # USER memcache: a name
    assert "runAsNonRoot" in security_problems(NGINX, {"runAsNonRoot": True}, {}, [])
    assert "runAsNonRoot" in security_problems(UNKNOWN, {}, {"runAsNonRoot": True, "runAsUser": 0}, [])
    assert security_problems(UNKNOWN, {}, {"runAsNonRoot": True}, []) == {}
    assert "runAsUser" in security_problems(VALKEY, {}, {"runAsUser": 1000}, [])
    assert security_problems(VALKEY, {}, {"runAsUser": 999}, []) == {}
    assert security_problems(VALKEY, {}, {"runAsUser": 1000}, ["/data"]) == {}
    # started as root, the entrypoint switches user: SETUID and SETGID it needs
    assert "capabilities" in security_problems(MONGO, {}, {"capabilities": {"drop": ["ALL"]}}, [])
    assert security_problems(MONGO, {}, {"capabilities": {"drop": ["ALL"], "add": ["SETUID", "SETGID"]}}, []) == {}
    assert security_problems(VALKEY, {}, {"runAsUser": 999, "capabilities": {"drop": ["ALL"]}}, []) == {}
    assert security_problems(MEMCACHED, {}, {"capabilities": {"drop": ["ALL"]}}, []) == {}
    # a command of its own: the image's entrypoint does not run, nor switches user
    assert security_problems({**MONGO, "command": ["mongod"]}, {}, {"capabilities": {"drop": ["ALL"]}}, []) == {}
    # a store whose writes its configuration decides, run with a configuration of its own: not judged
    assert security_problems({**VALKEY, "args": ["/etc/valkey.conf"]}, {}, {"runAsUser": 1000}, []) == {}


def _workload(container, pod_sc=None):
    return {"kind": "Deployment", "spec": {"template": {"spec": {"securityContext": pod_sc or {},
                                                                 "containers": [container]}}}}


def test_only_a_restriction_the_healthy_securitycontext_did_not_make():
    healthy = {"pod": {}, "containers": {"web": {}}}
    hardened = {**NGINX, "securityContext": {"allowPrivilegeEscalation": False,
                                             "seccompProfile": {"type": "RuntimeDefault"}}}
    assert security_restricted(healthy, _workload(hardened)) is None
    assert "read-only" in security_restricted(healthy, _workload({**NGINX, "securityContext": {
        "readOnlyRootFilesystem": True}}))
    already = {"pod": {}, "containers": {"web": {"readOnlyRootFilesystem": True}}}
    assert security_restricted(already, _workload({**NGINX, "securityContext": {"readOnlyRootFilesystem": True}})) is None


def test_corpus_cases_both_ways():
    for name in ("k8sbench-fix-crashloop", "otel-valkey-cart-changed-password"):
        cases = {k: v for k, v in names(name).items() if "hardened" in k or "program runs with" in k
                 or "program cannot run with" in k}
        assert PASS in cases.values() and FAIL in cases.values(), cases
        assert _problems(name) == [], name
