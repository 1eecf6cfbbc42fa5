"""The run carries out every waiter the language offers (faults/waiters.py) rather than stopping on one."""

from types import SimpleNamespace

from itbench_dsl.faults.waiters import WAITERS
from itbench_dsl.run import runner
from itbench_dsl.run.lifecycle import Ref, Waiter


class FakeCluster:
    """Deployments and StatefulSets of one namespace, and the calls the waiter makes on them."""

    def __init__(self):
        self.objects = {("Deployment", "web"), ("Deployment", "api"), ("StatefulSet", "db")}
        self.patched: list[tuple[Ref, dict]] = []
        self.waited: list[Ref] = []

    def list(self, api_version, kind, namespace=None, label_selector=None):
        return [{"metadata": {"name": name}} for k, name in sorted(self.objects) if k == kind], "1"

    def get(self, ref):
        return {"spec": {"selector": {"matchLabels": {"app": ref.name}}}}

    def delete(self, ref):
        pass

    def patch(self, ref, body):
        self.patched.append((ref, body))

    def wait(self, refs, test, timeout, on_ready, stop=None):
        self.waited.extend(refs)
        return []


def _run(cluster):
    run = object.__new__(runner.Run)
    run.cluster, run.waited = cluster, 0.0
    run.options = SimpleNamespace(ready_timeout=5.0)
    run.log = lambda *a, **k: None
    run._cut = lambda: False
    return run


def test_redeploy_restarts_every_workload_of_the_namespace_and_waits_for_it():
    cluster = FakeCluster()
    _run(cluster)._waiter(Waiter("redeploy", "after", Ref("v1", "Namespace", None, "shop"), {"timeout_seconds": 60}))
    restarted = sorted((r.kind, r.namespace, r.name) for r, _ in cluster.patched)
    assert restarted == [("Deployment", "shop", "api"), ("Deployment", "shop", "web"), ("StatefulSet", "shop", "db")]
    assert all(body["spec"]["template"]["metadata"]["annotations"]["kubectl.kubernetes.io/restartedAt"]
               for _, body in cluster.patched)
    assert sorted(r.name for r in cluster.waited) == ["api", "db", "web"]


def test_every_waiter_kind_of_the_language_is_one_the_run_knows():
    cluster = FakeCluster()
    run = _run(cluster)
    for kind in sorted(WAITERS):
        target = Ref("apps/v1", "Deployment", "shop", "web") if kind != "redeploy" else Ref("v1", "Namespace", None, "shop")
        run._waiter(Waiter(kind, "after", target, {"replicas": 1, "seconds": 0, "timeout_seconds": 1}))
