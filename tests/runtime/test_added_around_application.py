"""What the agent adds around or into the application that harms it after the capture: a liveness probe that can
never succeed, an Istio AuthorizationPolicy refusing the application's requests, a scoped ResourceQuota."""

from __future__ import annotations

from itbench_dsl.runtime import evaluator as rt


def test_a_probe_that_can_never_succeed():
    assert rt.probe_never_succeeds({"exec": {"command": ["false"]}}, [])
    assert rt.probe_never_succeeds({"exec": {"command": ["sh", "-c", "exit 3"]}}, [])
    assert rt.probe_never_succeeds({"httpGet": {"path": "/", "port": 9999}}, [8080])
    assert rt.probe_never_succeeds({"tcpSocket": {"port": 8080}}, [8080]) is None
    assert rt.probe_never_succeeds({"exec": {"command": ["sh", "-c", "exit 0"]}}, []) is None
    assert rt.probe_never_succeeds({"exec": {"command": ["redis-cli", "ping"]}}, [6379]) is None


def _container(probe=None):
    return {"name": "web", "image": "nginx", "ports": [{"containerPort": 80}], **({"livenessProbe": probe} if probe else {})}


def test_probes_added_judges_the_check_not_its_timing():
    healthy = {"web": {"livenessProbe": {"tcpSocket": {"port": 80}}, "startupProbe": None, "serves": [80]}}
    deployment = {"kind": "Deployment", "spec": {"template": {"spec": {"containers": [
        _container({"tcpSocket": {"port": 80}, "initialDelaySeconds": 600})]}}}}
    assert rt.probes_added(healthy, deployment) is None
    deployment["spec"]["template"]["spec"]["containers"][0]["livenessProbe"] = {
        "httpGet": {"port": 9999}, "initialDelaySeconds": 600}
    assert "9999" in rt.probes_added(healthy, deployment)
    deployment["spec"]["template"]["spec"]["containers"][0]["startupProbe"] = {"exec": {"command": ["false"]}}
    deployment["spec"]["template"]["spec"]["containers"][0]["livenessProbe"] = {"tcpSocket": {"port": 80}}
    assert "startupProbe" in rt.probes_added(healthy, deployment)


def test_an_authorization_policy_by_what_it_refuses():
    def policy(action, rules):
        return {"spec": {"action": action, "rules": rules}}
    assert rt._authz_refuses(policy("DENY", [{}]))
    assert rt._authz_refuses(policy("DENY", [{"to": [{"operation": {"methods": ["TRACE"]}}]}])) is None
    assert rt._authz_refuses(policy("AUDIT", [{}])) is None
    assert rt._authz_refuses(policy("ALLOW", [{}])) is None
    only = [{"from": [{"source": {"principals": ["cluster.local/ns/nowhere/sa/nobody"]}}]}]
    assert rt._authz_refuses(policy("ALLOW", only))
    healthy = [{"from": [{"source": {"principals": ["cluster.local/ns/book-info/sa/productpage"]}}]}]
    assert rt._authz_refuses(policy("ALLOW", healthy + only), healthy, "ALLOW") is None
    assert rt._authz_refuses(policy("ALLOW", only), healthy, "ALLOW")


def test_a_scoped_quota_counts_the_pods_of_its_scopes():
    quota = {"spec": {"hard": {"pods": "0"}, "scopes": ["NotTerminating"]}}
    running = {"spec": {"containers": [{"name": "a"}]}}
    job = {"spec": {"containers": [{"name": "a"}], "activeDeadlineSeconds": 60}}
    assert rt._quota_counts(quota, running) and not rt._quota_counts(quota, job)
    best = {"spec": {"hard": {"pods": "0"}, "scopes": ["NotBestEffort"]}}
    assert not rt._quota_counts(best, running)
