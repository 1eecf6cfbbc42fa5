"""Which requests an Ingress sends where, as the routes check reads it (ingress-nginx's matching)."""

from itbench_dsl.runtime.evaluator import ingress_route
from itbench_dsl.runtime.state import State


def service(name, app, port=80):
    return {"apiVersion": "v1", "kind": "Service", "metadata": {"namespace": "shop", "name": name},
            "spec": {"selector": {"app": app}, "ports": [{"name": "http", "port": port, "targetPort": port}]}}


STATE = State({"resources": {"items": [service("web", "web"), service("api", "api", 8080),
                                       service("api-copy", "api", 8080)]}})


def ingress(paths, host="shop.example.com", annotations=None, name="shop"):
    return {"kind": "Ingress", "metadata": {"namespace": "shop", "name": name, "annotations": annotations or {}},
            "spec": {"ingressClassName": "nginx", "rules": [{"host": host, "http": {"paths": [
                {"path": p, "pathType": t, "backend": {"service": {"name": s, "port": {"name": "http"}}}}
                for p, t, s in paths]}}]}}


def where(ingresses, path, host="shop.example.com"):
    return {(o[1][1], o[2]) if o[0] == "service" else o for o in ingress_route(ingresses, host, path, STATE)}


def test_longest_prefix_by_path_element():
    shop = [ingress([("/", "Prefix", "web"), ("/api", "Prefix", "api")])]
    assert where(shop, "/api/orders") == {('{"app": "api"}', "/api/orders")}
    assert where(shop, "/apix") == {('{"app": "web"}', "/apix")}


def test_exact_does_not_take_sub_paths():
    shop = [ingress([("/", "Prefix", "web"), ("/api", "Exact", "api")])]
    assert where(shop, "/api") == {('{"app": "api"}', "/api")}
    assert where(shop, "/api/orders") == {('{"app": "web"}', "/api/orders")}


def test_wildcard_host_and_no_match():
    shop = [ingress([("/", "Prefix", "web")], host="*.example.com")]
    assert where(shop, "/", host="shop.example.com") == {('{"app": "web"}', "/")}
    assert where(shop, "/", host="a.b.example.com") == set()


def test_rewrite_target_changes_the_path_sent():
    shop = [ingress([("/api(/|$)(.*)", "ImplementationSpecific", "api")],
                    annotations={"nginx.ingress.kubernetes.io/rewrite-target": "/$2"})]
    assert where(shop, "/api/orders") == {('{"app": "api"}', "/orders")}


def test_same_pods_through_another_service():
    assert where([ingress([("/", "Prefix", "api")])], "/x") == where([ingress([("/", "Prefix", "api-copy")])], "/x")
