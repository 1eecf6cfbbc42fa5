"""A thin layer over the official kubernetes client: what a run and a snapshot ask of the API server.

Objects are plain dicts in and out. Every client, HTTP and discovery error becomes a ClusterError
naming the object and the API's own message; "not found" is an answer (None, False), not an error.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from collections.abc import Callable, Iterable

from . import ClusterError, require_client
from .lifecycle import FIELD_MANAGER, WORKLOAD_KINDS, Ref
from ..runtime.state import workload_pod_refusal, workload_ready

MAX_EXEC_OUTPUT = 1024 * 1024  # of each stream of a command run in a pod, what is kept (as the evaluator's capture)


def ready(obj: dict) -> bool:
    """A workload whose rollout is complete, or a Pod that is running and ready: the evaluator's own test
    (runtime/state.py `workload_ready`), so a run waits for exactly what grading calls ready. Other
    kinds are ready once they exist."""
    if obj.get("kind") not in WORKLOAD_KINDS and obj.get("kind") != "Pod":
        return True
    return workload_ready(obj, zero_ok=True)


class Cluster:
    """The cluster a kubeconfig (and context) points at."""

    def __init__(self, kubeconfig: str, context: str | None = None, timeout: float = 30.0):
        require_client()
        from kubernetes import config

        try:
            self.api_client = config.new_client_from_config(config_file=str(kubeconfig), context=context)
        except Exception as exc:  # ConfigException, OSError, YAML and type errors of a malformed file
            raise ClusterError(f"{kubeconfig}: cannot use this kubeconfig"
                               + (f" (context {context})" if context else "") + f": {exc}") from exc
        self.api_client.configuration.retries = 1  # an unreachable server fails fast, not after urllib3's 3 retries
        self.timeout = timeout
        self._cache_dir = tempfile.mkdtemp(prefix="itbench-discovery-")
        self._dyn = None
        self._resources: dict[tuple[str, str], object] = {}

    def close(self) -> None:
        shutil.rmtree(self._cache_dir, ignore_errors=True)
        try:
            self.api_client.close()
        except Exception:  # noqa: BLE001 - closing a pool must not mask the run's outcome
            pass

    def __enter__(self) -> "Cluster":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # -- plumbing -------------------------------------------------------------------------------------

    @property
    def host(self) -> str:
        return self.api_client.configuration.host

    def _call(self, what: str, fn: Callable, not_found=ClusterError, url: str | None = None):
        """`fn()`, its failures as ClusterErrors naming `what` and, for an answer that is not the API's (not
        JSON, not an object, fields of the wrong type), the request's URL (`url`: a path on the server)."""
        from kubernetes.client.exceptions import ApiException
        from kubernetes.dynamic.exceptions import DynamicApiError, NotFoundError, ResourceNotFoundError

        where = f" ({self.host}{url})" if url else f" ({self.host})"
        try:
            return fn()
        except NotFoundError:
            if not_found is ClusterError:
                raise ClusterError(f"{what}: not found") from None
            return not_found
        except ResourceNotFoundError as exc:
            raise ClusterError(f"{what}: the API does not serve it ({exc})") from None
        except DynamicApiError as exc:
            raise ClusterError(f"{what}: {exc.status} {_api_message(exc)}") from None
        except ApiException as exc:
            if exc.status == 404 and not_found is not ClusterError:
                return not_found
            raise ClusterError(f"{what}: {exc.status} {exc.reason}: {str(exc.body or '')[:300]}") from None
        except OSError as exc:  # urllib3 connection errors are OSErrors
            raise ClusterError(f"{what}: cannot reach {self.host}: {str(exc)[:300]}") from None
        except (ValueError, KeyError, TypeError, AttributeError, IndexError) as exc:
            # bad JSON is a ValueError; an answer of the wrong shape fails inside the client with the others
            raise ClusterError(f"{what}: the server's answer{where} is not a Kubernetes API answer: "
                               f"{type(exc).__name__}: {str(exc)[:300]}") from None
        except Exception as exc:  # urllib3.MaxRetryError and friends
            if type(exc).__module__.startswith("urllib3"):
                raise ClusterError(f"{what}: cannot reach {self.host}: {str(exc)[:300]}") from None
            raise

    @property
    def dyn(self):
        if self._dyn is None:
            from kubernetes.dynamic import DynamicClient

            cache = os.path.join(self._cache_dir, "discovery.json")
            self._dyn = self._call(f"discovery at {self.host}", lambda: DynamicClient(self.api_client, cache_file=cache),
                                   url="/apis")
        return self._dyn

    def resource(self, api_version: str, kind: str):
        """The API resource serving `kind` in `api_version`, by discovery; None when it is not served."""
        key = (api_version, kind)
        if key not in self._resources:
            from kubernetes.dynamic.exceptions import ResourceNotFoundError

            try:
                found = self._call(f"discovery of {api_version} {kind}",
                                   lambda: self.dyn.resources.get(api_version=api_version, kind=kind),
                                   url=_discovery_path(api_version))
            except ClusterError as exc:
                if "the API does not serve it" not in str(exc):
                    raise
                found = None
            except ResourceNotFoundError:
                found = None
            if found is None:
                # the client's discovery reads a group version that fails to answer (503 from an aggregated
                # API whose server is down, an answer that is not JSON) as one serving nothing: ask it again
                self._confirm_not_served(api_version, kind)
            self._resources[key] = found
        return self._resources[key]

    def _confirm_not_served(self, api_version: str, kind: str) -> None:
        """Raise ClusterError unless the API's own discovery document of `api_version` says it does not serve
        `kind` (the group version is absent: 404, or it answers without the kind)."""
        import json

        path = _discovery_path(api_version)
        what = f"discovery of {api_version} {kind}"
        try:
            response = self.dyn.request("get", path, serialize=False, _request_timeout=self.timeout)
        except Exception as exc:  # noqa: BLE001 - the API's error answer, or the connection's failure
            status = getattr(exc, "status", None)
            if status == 404:
                return
            if isinstance(status, int):
                raise ClusterError(f"{what}: GET {self.host}{path} answered {status} {getattr(exc, 'reason', '')}"
                                   f": {_api_message(exc)}; the API group is registered but its discovery "
                                   "fails, so whether it serves the kind is unknown") from None
            raise ClusterError(f"{what}: cannot reach {self.host}: {str(exc)[:300]}") from None
        raw = getattr(response, "data", b"") or b""
        try:
            document = json.loads(raw.decode("utf-8"))
        except (ValueError, UnicodeDecodeError, AttributeError):
            document = None
        if not isinstance(document, dict) or not isinstance(document.get("resources"), list):
            raise ClusterError(f"{what}: GET {self.host}{path} answered {str(raw[:120])!r}, not an APIResourceList")
        listed = {r.get("kind") for r in document["resources"] if isinstance(r, dict) and "/" not in str(r.get("name"))}
        if kind in listed:  # the client's cache was stale: it is served after all
            self._dyn = None
            raise ClusterError(f"{what}: the API lists it at {path} but the client's discovery did not; run again")

    def _resource_of(self, ref: Ref):
        res = self.resource(ref.api_version, ref.kind)
        if res is None:
            raise ClusterError(f"{ref}: the API does not serve {ref.api_version} {ref.kind}")
        return res

    def served_kinds(self, group: str) -> dict[str, str]:
        """{Kind: apiVersion} of every kind the API serves in `group` (preferred version first)."""
        out: dict[str, str] = {}
        for res in self._call(f"discovery of {group or 'core'}", lambda: list(self.dyn.resources.search(group=group))):
            if "/" in getattr(res, "name", "") or not getattr(res, "kind", None) or res.kind.endswith("List"):
                continue
            out.setdefault(res.kind, res.group_version)
        return out

    def kind_api_version(self, kind: str, prefer: tuple[str, ...] = ("", "apps")) -> str | None:
        """The apiVersion the API serves `kind` in (the core group, then apps, then any, by name); None
        when no group serves it."""
        found = self._call(f"discovery of {kind}", lambda: list(self.dyn.resources.search(kind=kind)))
        versions = sorted({r.group_version for r in found if "/" not in r.name and r.kind == kind},
                          key=lambda v: (v.rpartition("/")[0] not in prefer, prefer.index(v.rpartition("/")[0])
                                         if v.rpartition("/")[0] in prefer else 0, v))
        return versions[0] if versions else None

    # -- reading --------------------------------------------------------------------------------------

    def version(self) -> dict:
        import json

        def read():
            answer = self.dyn.request("get", "/version", serialize=False, _request_timeout=self.timeout)
            data = json.loads(answer.data.decode("utf-8"))
            if not isinstance(data, dict):
                raise ValueError(f"a JSON {type(data).__name__}, not an object")
            return data

        return self._call(f"GET {self.host}/version", read, url="/version")

    def get(self, ref: Ref) -> dict | None:
        res = self._resource_of(ref)
        found = self._call(f"get {ref}", lambda: self.dyn.get(res, name=ref.name, namespace=ref.namespace,
                                                              _request_timeout=self.timeout).to_dict(),
                           not_found=None, url=_path(res, ref))
        if found is not None and not isinstance(found, dict):
            raise ClusterError(f"get {ref}: the server's answer ({self.host}{_path(res, ref)}) is not an object")
        return found

    def list(self, api_version: str, kind: str, namespace: str | None = None,
             label_selector: str | None = None) -> tuple[list[dict], str]:
        """(items, resourceVersion) of a kind, in a namespace or the whole cluster. Items carry their
        apiVersion and kind (a list's items do not), without managedFields (as `kubectl get -o json`)."""
        ref = Ref(api_version, kind, namespace, "")
        res = self._resource_of(ref)
        where = f" in {namespace}" if namespace else ""
        found = self._call(f"list {kind}{where}", lambda: self.dyn.get(
            res, namespace=namespace if res.namespaced else None, label_selector=label_selector,
            _request_timeout=self.timeout).to_dict(), url=_path(res, ref, name=False))
        if not isinstance(found, dict) or not isinstance(found.get("items") or [], list):
            raise ClusterError(f"list {kind}{where}: the server's answer ({self.host}{_path(res, ref, name=False)}) "
                               "is not a list of objects")
        items = []
        for item in found.get("items") or []:
            item = {"apiVersion": res.group_version, "kind": kind, **item}
            (item.get("metadata") or {}).pop("managedFields", None)
            items.append(item)
        return items, (found.get("metadata") or {}).get("resourceVersion") or ""

    # -- writing --------------------------------------------------------------------------------------

    def apply(self, obj: dict) -> dict:
        """Server-side apply (field manager FIELD_MANAGER, conflicts forced: the run owns its objects)."""
        ref = Ref.of(obj)
        res = self._resource_of(ref)
        return self._call(f"apply {ref}", lambda: self.dyn.server_side_apply(
            res, body=obj, name=ref.name, namespace=ref.namespace, field_manager=FIELD_MANAGER,
            force_conflicts=True, _request_timeout=self.timeout).to_dict(), url=_path(res, ref))

    def patch(self, ref: Ref, patch: dict, subresource: str | None = None) -> dict:
        res = self._resource_of(ref)
        return self._call(f"patch {ref}", lambda: self.dyn.patch(
            res, body=patch, name=ref.name, namespace=ref.namespace, content_type="application/merge-patch+json",
            field_manager=FIELD_MANAGER, _request_timeout=self.timeout).to_dict(), url=_path(res, ref))

    def delete(self, ref: Ref) -> bool:
        """Delete an object; False when it was already gone."""
        res = self._resource_of(ref)
        done = self._call(f"delete {ref}", lambda: self.dyn.delete(
            res, name=ref.name, namespace=ref.namespace, propagation_policy="Background",
            _request_timeout=self.timeout), not_found=False, url=_path(res, ref))
        return done is not False

    def create(self, api_version: str, kind: str, body: dict, what: str) -> dict:
        res = self._resource_of(Ref(api_version, kind, None, ""))
        return self._call(what, lambda: self.dyn.create(res, body=body, _request_timeout=self.timeout).to_dict(),
                          url=_path(res, Ref(api_version, kind, None, ""), name=False))

    def dry_run(self, obj: dict) -> dict:
        """Create `obj` in the server's dry run: authorized and admitted as a create is, stored nowhere."""
        ref = Ref.of(obj)
        res = self._resource_of(ref)
        return self._call(f"create {ref} (dry run)", lambda: self.dyn.create(
            res, body=obj, namespace=ref.namespace, dry_run="All", _request_timeout=self.timeout).to_dict(),
            url=_path(res, ref, name=False))

    # -- commands in pods ------------------------------------------------------------------------------

    def exec_pod(self, workload: Ref, container: str) -> str:
        """The pod a command runs in: the first (by name) ready, not terminating pod the workload's
        `spec.selector.matchLabels` selects that is the workload's own (runtime.state.workload_pod_refusal: its
        controller chain leads to the workload by uid, a Deployment's through its current ReplicaSet, and it runs
        the workload's pod template). Another pod carrying the labels, even one naming the ReplicaSet as its
        controller, never runs the grader's probe nor an inject or revert step."""
        obj = self.get(workload)
        if obj is None:
            raise ClusterError(f"exec in {workload}: not found")
        labels = ((obj.get("spec") or {}).get("selector") or {}).get("matchLabels") or {}
        if not labels:
            raise ClusterError(f"exec in {workload}: it has no spec.selector.matchLabels to find its pods by")
        selector = ",".join(f"{k}={v}" for k, v in sorted(labels.items()))
        pods, _ = self.list("v1", "Pod", workload.namespace, selector)
        replicasets = None
        if obj.get("kind") == "Deployment":
            replicasets, _ = self.list("apps/v1", "ReplicaSet", workload.namespace, selector)
        live = [p for p in pods if ready(p) and not (p.get("metadata") or {}).get("deletionTimestamp")]
        refused = {p["metadata"]["name"]: workload_pod_refusal(obj, p, replicasets) for p in live}
        names = sorted(name for name, why in refused.items() if why is None)
        if not names:
            why = "; ".join(f"{name}: {why}" for name, why in sorted(refused.items()))[:500]
            raise ClusterError(f"exec in {workload}: no ready pod of its own ({len(pods)} pod(s) labelled {selector}"
                               + (f"; {why}" if why else "") + ")")
        return names[0]

    def exec(self, workload: Ref, container: str, command: list[str] | tuple[str, ...], timeout: float,
             cap: int = MAX_EXEC_OUTPUT) -> dict:
        """Run `command` in `container` of one ready pod of `workload` through the pods/exec subresource (the
        websocket channel protocol): `{exit_code, stdout, stderr, pod}` (`pod`: the pod it ran in), each stream kept up to `cap` bytes (the rest
        read and dropped) and decoded as UTF-8 (errors replaced). A command still running after `timeout`
        seconds, or a pod that cannot be reached, is a ClusterError; a non-zero exit is a result."""
        from kubernetes import client as k8s
        from kubernetes.stream import stream

        pod = self.exec_pod(workload, container)
        what = f"exec in {workload.namespace}/Pod/{pod} container {container}"
        core = k8s.CoreV1Api(self.api_client)
        ws = self._call(what, lambda: stream(
            core.connect_get_namespaced_pod_exec, pod, workload.namespace, command=list(command), container=container,
            stdin=False, stdout=True, stderr=True, tty=False, _preload_content=False, binary=True,
            _request_timeout=self.timeout))
        kept = {1: bytearray(), 2: bytearray()}
        status = b""
        deadline = time.monotonic() + timeout
        try:
            while ws.is_open():
                left = deadline - time.monotonic()
                if left <= 0:
                    raise ClusterError(f"{what}: `{' '.join(command)[:200]}` still running after {timeout:g} s")
                try:
                    ws.update(timeout=min(left, 1.0))
                except Exception as exc:  # noqa: BLE001 - the socket's errors, whatever their class
                    raise ClusterError(f"{what}: the connection failed: {str(exc)[:300]}") from None
                for channel in (1, 2):
                    data = ws.read_channel(channel)
                    room = cap - len(kept[channel])
                    if data and room > 0:
                        kept[channel] += data[:room]
                status += ws.read_channel(3) or b""
                ws.read_all()  # the client also keeps every stream whole for read_all(): drop it as it comes
                if len(status) > 64 * 1024:
                    raise ClusterError(f"{what}: the error channel sent more than 64 KiB")
        finally:
            ws.close(timeout=1)  # a command cut short: do not wait long for the server's close answer
        return {"exit_code": _exit_code(what, status), "stdout": kept[1].decode("utf-8", "replace"),
                "stderr": kept[2].decode("utf-8", "replace"), "pod": pod}

    # -- access ---------------------------------------------------------------------------------------

    def may(self, verb: str, group: str, resource: str, namespace: str | None) -> bool:
        """SelfSubjectAccessReview: may the caller do this?"""
        name, _, sub = resource.partition("/")
        attrs = {"verb": verb, "group": group, "resource": name}
        if sub:
            attrs["subresource"] = sub
        if namespace:
            attrs["namespace"] = namespace
        body = {"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview",
                "spec": {"resourceAttributes": attrs}}
        answer = self.create("authorization.k8s.io/v1", "SelfSubjectAccessReview", body,
                             f"access review ({verb} {resource})")
        return bool((answer.get("status") or {}).get("allowed"))

    def rules_review(self, namespace: str) -> dict:
        """SelfSubjectRulesReview: the status of what the API server lets the caller do in `namespace` (its
        `resourceRules`, `nonResourceRules` and whether the list is `incomplete`)."""
        body = {"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectRulesReview",
                "spec": {"namespace": namespace}}
        answer = self.create("authorization.k8s.io/v1", "SelfSubjectRulesReview", body,
                             f"rules review (in {namespace})")
        return answer.get("status") or {}

    def whoami(self) -> str:
        """The user the API server authenticates this client as (SelfSubjectReview)."""
        body = {"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}
        answer = self.create("authentication.k8s.io/v1", "SelfSubjectReview", body, "who am I (SelfSubjectReview)")
        user = ((answer.get("status") or {}).get("userInfo") or {}).get("username")
        if not isinstance(user, str) or not user:
            raise ClusterError("who am I (SelfSubjectReview): the API named no user")
        return user

    def token(self, account: Ref, seconds: int) -> str:
        """A token of `account` that expires in `seconds` (TokenRequest)."""
        body = {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
                "spec": {"audiences": [], "expirationSeconds": int(seconds)}}
        path = f"/api/v1/namespaces/{account.namespace}/serviceaccounts/{account.name}/token"
        answer = self._call(f"token for {account}", lambda: self.dyn.request(
            "post", path, body=body, _request_timeout=self.timeout).to_dict(), url=path)
        if not isinstance(answer, dict):
            raise ClusterError(f"token for {account}: the server's answer ({self.host}{path}) is not a TokenRequest")
        token = (answer.get("status") or {}).get("token")
        if not isinstance(token, str) or not token:
            raise ClusterError(f"token for {account}: the API returned no token")
        return token

    def kubeconfig_for(self, token: str, namespace: str) -> dict:
        """A kubeconfig that reaches this cluster with `token` (the caller's server and CA)."""
        import base64

        conf = self.api_client.configuration
        cluster: dict = {"server": conf.host}
        if conf.ssl_ca_cert:
            with open(conf.ssl_ca_cert, "rb") as handle:
                cluster["certificate-authority-data"] = base64.b64encode(handle.read()).decode("ascii")
        if not conf.verify_ssl:
            cluster["insecure-skip-tls-verify"] = True
        if getattr(conf, "tls_server_name", None):
            cluster["tls-server-name"] = conf.tls_server_name
        return {"apiVersion": "v1", "kind": "Config", "current-context": "itbench-agent",
                "clusters": [{"name": "itbench", "cluster": cluster}],
                "users": [{"name": "itbench-agent", "user": {"token": token}}],
                "contexts": [{"name": "itbench-agent", "context": {"cluster": "itbench", "user": "itbench-agent",
                                                                   "namespace": namespace}}]}

    # -- waiting --------------------------------------------------------------------------------------

    def wait(self, refs: Iterable[Ref], done: Callable[[dict | None], bool], timeout: float,
             on_progress: Callable[[Ref], None] | None = None, stop: Callable[[], bool] | None = None) -> list[Ref]:
        """Wait until `done(object or None)` holds for every ref, watching each (kind, namespace) for
        changes; returns the refs still waiting when `timeout` seconds have passed, or as soon as `stop()`
        holds (empty: all done). The bound is the client's own: a watch is asked to end in at most
        WATCH_CHUNK seconds and its socket gives up a little after, so a server that ignores `timeoutSeconds`
        or goes silent cannot hold the wait past its deadline."""
        deadline = time.monotonic() + timeout
        groups: dict[tuple[str, str, str | None], set[str]] = {}
        for ref in refs:
            groups.setdefault((ref.api_version, ref.kind, ref.namespace), set()).add(ref.name)
        left: list[Ref] = []
        for (api_version, kind, namespace), names in groups.items():
            pending = self._wait_group(api_version, kind, namespace, set(names), done, deadline, on_progress,
                                       stop or (lambda: False))
            left += [Ref(api_version, kind, namespace, n) for n in sorted(pending)]
        return left

    def _wait_group(self, api_version, kind, namespace, pending: set[str], done, deadline, on_progress,
                    stop) -> set[str]:
        from kubernetes import watch

        res = self._resource_of(Ref(api_version, kind, namespace, ""))
        while pending:
            items, version = self.list(api_version, kind, namespace)
            present = {i["metadata"]["name"]: i for i in items}
            for name in sorted(pending):
                if done(present.get(name)):
                    pending.discard(name)
                    if on_progress:
                        on_progress(Ref(api_version, kind, namespace, name))
            remaining = deadline - time.monotonic()
            if not pending or remaining <= 0 or stop():
                break
            chunk = max(1, min(int(remaining + 0.999), WATCH_CHUNK))
            watcher = watch.Watch()
            try:
                stream = watcher.stream(res.get, namespace=namespace if res.namespaced else None,
                                        resource_version=version, serialize=False, timeout_seconds=chunk,
                                        _request_timeout=(min(self.timeout, chunk + 1.0),
                                                          min(chunk, max(remaining, 0.1)) + 1.0))
                for event in stream:
                    obj = event.get("raw_object") if isinstance(event, dict) else None
                    obj = obj if isinstance(obj, dict) else {}
                    name = (obj.get("metadata") or {}).get("name") if isinstance(obj.get("metadata"), dict) else None
                    if name in pending and done(None if event.get("type") == "DELETED" else obj):
                        pending.discard(name)
                        if on_progress:
                            on_progress(Ref(api_version, kind, namespace, name))
                    if not pending or time.monotonic() >= deadline or stop():
                        break
            except ClusterError:
                raise
            except Exception as exc:  # a dropped or timed-out watch: list again (the loop), unless the server is gone
                if type(exc).__module__.startswith(("urllib3", "kubernetes")) or isinstance(exc, (OSError, ValueError)):
                    time.sleep(min(0.5, max(0.0, deadline - time.monotonic())))
                else:
                    raise
            finally:
                watcher.stop()
        return pending


WATCH_CHUNK = 10  # seconds a watch of a wait lasts before it is listed again (and `stop` and the deadline read)


def _exit_code(what: str, status: bytes) -> int:
    """The exit code the error channel's Status reports (v4.channel.k8s.io): Success is 0; a failure with an
    ExitCode cause is that code; any other failure (no such container, the command not found) is an error."""
    import json

    try:
        answer = json.loads(status.decode("utf-8", "replace")) if status.strip() else None
    except ValueError:
        answer = None
    if not isinstance(answer, dict):
        raise ClusterError(f"{what}: the connection closed without the command's status")
    if answer.get("status") == "Success":
        return 0
    causes = ((answer.get("details") or {}).get("causes") or []) if isinstance(answer.get("details"), dict) else []
    for cause in causes:
        if isinstance(cause, dict) and cause.get("reason") == "ExitCode":
            try:
                return int(cause.get("message"))
            except (TypeError, ValueError):
                break
    raise ClusterError(f"{what}: {str(answer.get('message') or answer.get('reason') or answer)[:300]}")


def _api_message(exc) -> str:
    import json

    try:
        body = json.loads(exc.body) if getattr(exc, "body", None) else {}
        return str(body.get("message") or exc.reason or exc.summary())[:300]
    except (ValueError, AttributeError, TypeError):
        return str(getattr(exc, "reason", "") or exc)[:300]


def _discovery_path(api_version: str) -> str:
    """The discovery document of a group version: /api/v1 for the core group, /apis/GROUP/VERSION for others."""
    return f"/apis/{api_version}" if "/" in api_version else f"/api/{api_version}"


def _path(res, ref: Ref, name: bool = True) -> str:
    """The URL path of an object (or, without `name`, of its collection) as the resource discovery found serves it."""
    where = f"/namespaces/{ref.namespace}" if ref.namespace and getattr(res, "namespaced", True) else ""
    tail = f"/{ref.name}" if name and ref.name else ""
    return f"{_discovery_path(ref.api_version)}{where}/{getattr(res, 'name', '') or ref.kind.lower()}{tail}"


def workload_refs(refs: Iterable[Ref]) -> list[Ref]:
    return [r for r in refs if r.kind in WORKLOAD_KINDS]
