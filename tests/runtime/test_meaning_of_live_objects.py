"""What live objects mean, beside what their names say: an image pinned by the digest its tag ran as, a NoExecute
taint tolerated for a while only, a volume over the content an image serves, an ingress annotation that refuses
requests."""

from __future__ import annotations

from itbench_dsl.runtime import evaluator as ev
from itbench_dsl.runtime.state import State, content_hidden

D = "sha256:" + "a1" * 32


def _pod(name, image, image_id=None, tolerations=None, node="worker"):
    status = {"phase": "Running", "containerStatuses": [{"name": "app", "image": image,
                                                         **({"imageID": image_id} if image_id else {})}]}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "ns"},
            "spec": {"nodeName": node, "containers": [{"name": "app", "image": image}],
                     **({"tolerations": tolerations} if tolerations else {})}, "status": status}


def _state(*items, **extra):
    return State({"resources": {"kind": "List", "items": list(items)}, **extra})


def test_a_digest_alone_is_read_as_the_tag_the_state_shows_running_as_it():
    ran = _pod("old", "ghcr.io/x/demo:1.0", "ghcr.io/x/demo@" + D)
    st = _state(_pod("new", "ghcr.io/x/demo@" + D), incident={"resources": {"kind": "List", "items": [ran]}})
    assert st.get({"kind": "Pod", "namespace": "ns", "name": "new"})["spec"]["containers"][0]["image"] \
        == "ghcr.io/x/demo:1.0@" + D


def test_a_digest_no_tag_ran_as_stays_tagless():
    ran = _pod("old", "ghcr.io/x/demo:1.0", "ghcr.io/x/demo@" + D)
    other = "sha256:" + "b2" * 32
    st = _state(_pod("new", "ghcr.io/x/demo@" + other), incident={"resources": {"kind": "List", "items": [ran]}})
    assert st.get({"kind": "Pod", "namespace": "ns", "name": "new"})["spec"]["containers"][0]["image"] \
        == "ghcr.io/x/demo@" + other


def _tainted(seconds):
    toleration = {"key": "maintenance", "operator": "Exists", "effect": "NoExecute",
                  **({"tolerationSeconds": seconds} if seconds is not None else {})}
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "worker"},
            "spec": {"taints": [{"key": "maintenance", "value": "drain", "effect": "NoExecute"}]}}
    spec = {"workloads": [{"kind": "Deployment", "namespace": "ns", "name": "app"}], "mitigation": {"faults": []}}
    return ev.nodes_kept(spec, _state(node, _pod("app-abc-xyz12", "nginx:1.27", tolerations=[toleration])))


def test_a_noexecute_taint_tolerated_for_a_while_evicts():
    assert _tainted(600)
    assert _tainted(0)
    assert not _tainted(None)


def test_a_volume_over_the_content_an_image_serves_hides_it():
    assert content_hidden("nginx:latest", "/usr/share/nginx/html/")
    assert content_hidden("docker.io/library/nginx:1.27", "/usr/share/nginx")
    assert not content_hidden("nginx:latest", "/var/cache/nginx")
    assert not content_hidden("ghcr.io/example/api:1.4.0", "/usr/share/nginx/html")


def test_annotations_that_refuse_requests_change_the_route():
    for name in ("whitelist-source-range", "denylist-source-range", "auth-url", "server-snippet"):
        assert "nginx.ingress.kubernetes.io/" + name in ev.ROUTE_ANNOTATIONS
