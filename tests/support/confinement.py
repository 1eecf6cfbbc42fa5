"""What an agent's kubeconfig lets it do, asked of a real API server as the agent.

`assert_confined` checks a kubeconfig handed to an agent (by `itbench run`, Chainsaw's or Argo's handover): it holds
one user with a token and nothing else, the server takes the token as the agent's ServiceAccount, and the server
refuses that user what the bundle's access (the rights the prompt states) does not grant, asked one access review at
a time and once for real. Each refused right is first checked not to be granted, so the list cannot refuse what the
prompt grants.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import yaml

from itbench_dsl import access

# (verb, group, resource, namespace or None for cluster-wide): rights no agent's access grants
NOT_GRANTED = (
    ("get", "", "secrets", "default"),
    ("create", "", "pods", "kube-system"),
    ("delete", "apps", "deployments", "kube-system"),
    ("list", "rbac.authorization.k8s.io", "clusterroles", None),
    ("create", "rbac.authorization.k8s.io", "clusterrolebindings", None),
    ("impersonate", "", "serviceaccounts", None),
    ("create", "", "serviceaccounts/token", "{home}"),
    ("list", "chaos-mesh.org", "podchaos", "{home}"),
    ("list", "", "secrets", None),
    ("escalate", "rbac.authorization.k8s.io", "roles", "{home}"),
    # the cluster's own Secrets, namespaces removed, nodes made or removed: changed (a label, a cordon) at most
    ("get", "", "secrets", "kube-system"),
    ("list", "", "secrets", "kube-system"),
    ("delete", "", "namespaces", None),
    ("delete", "", "nodes", None),
)

# kubectl asks about a resource of a group the server does not serve (Istio's on a bare cluster) as of none
BUILTIN_GROUPS = ("", "apps", "batch", "autoscaling", "policy", "networking.k8s.io", "rbac.authorization.k8s.io")


def kubectl(binary: Path, kubeconfig: Path, *args: str, input: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([str(binary), "--kubeconfig", str(kubeconfig), *args], input=input, capture_output=True,
                          text=True, timeout=60)


def assert_confined(binary: Path, kubeconfig: Path, bundle: Path) -> dict:
    """The kubeconfig at `kubeconfig` holds the agent of `bundle` alone, and the server (reached with the `kubectl`
    at `binary`) refuses it what its access does not grant. Returns the kubeconfig."""
    config = yaml.safe_load(kubeconfig.read_text())
    [user] = config["users"]  # one user, a token alone: no client certificate, no other user to switch to
    assert set(user["user"]) == {"token"}, user["user"]
    assert {c["context"]["user"] for c in config["contexts"]} == {user["name"]}
    assert [c["name"] for c in config["clusters"]] == [config["contexts"][0]["context"]["cluster"]]

    scenario = json.loads((bundle / "scenario.json").read_text())
    account, home = scenario["agent"]["service_account"], scenario["agent"]["namespaces"][0]
    objects = [o for o in yaml.safe_load_all((bundle / "manifests" / "agent-access.yaml").read_text()) if o]
    who = kubectl(binary, kubeconfig, "auth", "whoami", "-o", "json")
    assert who.returncode == 0, who.stderr
    assert json.loads(who.stdout)["status"]["userInfo"]["username"] == f"system:serviceaccount:{home}:{account}"

    def may(verb: str, group: str, resource: str, namespace: str | None) -> bool:
        name, _, sub = resource.partition("/")
        args = ["auth", "can-i", verb, f"{name}.{group}" if group else name]
        args += [f"--subresource={sub}"] if sub else []
        args += ["-n", namespace] if namespace else ["--all-namespaces"]
        done = kubectl(binary, kubeconfig, *args)
        assert done.stdout.strip() in ("yes", "no"), done.stderr
        return done.stdout.strip() == "yes"

    granted = [(r.verb, r.group, r.resource, r.namespace) for r in access.account_requests(objects, account, home)
               if "*" not in (r.verb, r.group, r.resource) and r.group in BUILTIN_GROUPS]
    refused = [g for g in granted[:: max(1, len(granted) // 8)] if not may(g[0], g[1], g[2], g[3] or home)]
    assert granted and not refused, f"the agent's token is refused what its access grants: {refused}"
    for verb, group, resource, namespace in NOT_GRANTED:
        namespace = namespace.format(home=home) if namespace else None
        request = access.Request(verb, group, resource, namespace)
        assert not access.allows(objects, account, home, request), f"the access grants {request}: not a refusal"
        assert not may(verb, group, resource, namespace), f"the agent's token may {verb} {resource} in {namespace}"
    # and once for real, not only as a review
    for args in (("get", "secrets", "-n", "default"), ("get", "secrets", "-n", "kube-system"),
                 ("delete", "namespace", home, "--dry-run=server")):
        done = kubectl(binary, kubeconfig, *args)
        assert done.returncode != 0 and "forbidden" in done.stderr.lower(), (args, done.stderr)
    return config
