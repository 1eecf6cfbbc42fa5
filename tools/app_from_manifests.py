#!/usr/bin/env python3
"""Generate an `.itb` application topology from rendered Kubernetes manifests.

Maintainer tool for the standard library (itbench_dsl/stdlib/apps/*.itb): the app
files are generated from the upstream manifests, not typed by hand.

    python3 tools/app_from_manifests.py IN.yaml|FOLDER --name NAME --namespace NS -o OUT.itb \
        [--description TEXT] [--meta KEY=VALUE ...] [--preface LINE ...] \
        [--omit-configmap GLOB ...] [--omit-volume WORKLOAD/VOLUME ...] [--edge "A->B" ...] \
        [--no-derived-edges]

IN is one multi-document YAML file, or a folder: every `.yaml`/`.yml` file below it, in sorted
order (a manifest folder applied with `kubectl apply -Rf`).

What it does
  * Keeps every Deployment, StatefulSet, Service, ConfigMap, Secret, ServiceAccount,
    PersistentVolume, PersistentVolumeClaim, Role, ClusterRole, RoleBinding and ClusterRoleBinding
    (plus the Namespace, as the `namespace` statement). Objects are written sorted by
    kind, then by name; inside an object the manifest's order is kept (env order matters).
  * Leaves out PodDisruptionBudgets, ConfigMaps matching --omit-configmap,
    and the pod volumes --omit-volume names (with their mounts: a volume whose source the
    manifests do not hold); every omitted object and volume is listed in the header.
    A ConfigMap or Secret that a kept workload references cannot be omitted (error).
  * Drops only fields whose value is the Kubernetes default, so that dropping them
    changes nothing once applied (e.g. `protocol: TCP`, `type: ClusterIP`, empty maps);
    every dropped field is listed, with its count, in the header.
  * Fails on any field it does not know, so nothing is lost silently: extend the
    tool when a manifest uses something new.
  * Derives dependency edges (caller workload -> callee workload) from container env
    vars that name another Service's address (`X_ADDR=cart:8080`, `X_HOST=frontend`,
    `http://quote:8080`, `Host=postgresql;...`) and from URLs in container args,
    resolving the Service to the workload(s) it selects; --edge adds edges by hand.
    References through $(VAR) expansion are not followed (this is what keeps the
    telemetry export to $(OTEL_COLLECTOR_NAME) out of the graph).

Output is deterministic: the same input and arguments give byte-identical output.
"""
from __future__ import annotations

import argparse
import base64
import binascii
import collections
import fnmatch
import hashlib
import os
import re
from pathlib import Path
import shlex
import sys

import yaml

# ---------------------------------------------------------------------------------------
# values (the output is a tree built with itbench_dsl.builders, printed by the canonical printer)

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from itbench_dsl import ast  # noqa: E402
from itbench_dsl import builders as b  # noqa: E402
from itbench_dsl.printer import Notes, print_document  # noqa: E402

QUANTITY = re.compile(r"^[+-]?\d+(\.\d+)?([a-zA-Z]+(\d+(\.\d+)?[a-zA-Z]+)*)?$")


def scalar(v) -> ast.Value:
    """A plain value: strings quoted, bools as true/false, numbers as written."""
    if isinstance(v, (bool, int, float, str)):
        return b.literal(v)
    raise TypeError(f"not a scalar: {v!r}")


def quantity(v, where: str) -> ast.Value:
    s = str(v)
    if isinstance(v, bool) or not QUANTITY.match(s):
        raise Unsupported(f"{where}: not a quantity: {v!r}")
    return b.number(s)


def seconds(v, where: str) -> ast.Value:
    if isinstance(v, bool) or not isinstance(v, int):
        raise Unsupported(f"{where}: not a whole number of seconds: {v!r}")
    return b.number(f"{v}s")


def port_value(v, where: str) -> ast.Value:
    if isinstance(v, bool):
        raise Unsupported(f"{where}: bad port {v!r}")
    if isinstance(v, (int, str)):
        return b.literal(v)  # a number, or a named port
    raise Unsupported(f"{where}: bad port {v!r}")


def strlist(v, where: str) -> ast.Value:
    if not isinstance(v, list) or not all(isinstance(x, str) for x in v):
        raise Unsupported(f"{where}: expected a list of strings, got {v!r}")
    return b.literal(v)


def snake(name: str) -> str:
    return re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", name).lower()


class Unsupported(Exception):
    pass


# ---------------------------------------------------------------------------------------
# strict field access: every field of the manifest must be consumed or explicitly dropped


class Ctx:
    def __init__(self):
        self.dropped = collections.Counter()  # (generic path, value repr) -> count

    def drop(self, path: str, value) -> None:
        if value is None:
            shown = "null"
        elif value == {} or value == [] or value == "":
            shown = "empty " + ({dict: "map", list: "list", str: "string"}[type(value)])
        else:
            shown = "= " + (value if isinstance(value, str) and value else repr(value))
            if isinstance(value, bool):
                shown = "= " + ("true" if value else "false")
        self.dropped[(path, shown)] += 1


class F:
    """A manifest mapping whose keys must all be used (`get`) or dropped (`default`)."""

    def __init__(self, d, path: str, ctx: Ctx):
        if d is None:
            d = {}
        if not isinstance(d, dict):
            raise Unsupported(f"{path}: expected a mapping, got {type(d).__name__}")
        self.d, self.path, self.ctx, self.used = d, path, ctx, set()
        # what the API server sets and ignores on input (kompose writes them empty): dropped wherever they are
        for key in ("creationTimestamp", "status"):
            if key in d and d[key] in (None, {}, {"loadBalancer": {}}) and (key == "status") == ("." not in path):
                self.used.add(key)
                ctx.drop(f"{path}.{key}", d[key])

    def get(self, k, default=None):
        self.used.add(k)
        return self.d.get(k, default)

    def present(self, k) -> bool:
        """True when k has a non-empty value; an empty or null value is dropped here."""
        if k not in self.d:
            return False
        v = self.d[k]
        if v is None or v == {} or v == [] or v == "":
            self.used.add(k)
            self.ctx.drop(f"{self.path}.{k}", v)
            return False
        return True

    def sub(self, k) -> "F":
        return F(self.get(k), f"{self.path}.{k}", self.ctx)

    def default(self, k, *defaults):
        """Return the value, or None after recording it as dropped when it is a default."""
        if k not in self.d:
            return None
        v = self.get(k)
        if v is None or v == {} or v == [] or any(v == d and type(v) is type(d) for d in defaults):
            self.ctx.drop(f"{self.path}.{k}", v)
            return None
        return v

    def ignore(self, k, why_path=None):
        if k in self.d:
            self.used.add(k)
            self.ctx.drop(why_path or f"{self.path}.{k}", self.d[k])

    def done(self):
        rest = [k for k in self.d if k not in self.used]
        if rest:
            raise Unsupported(f"{self.path}: unsupported field(s) {', '.join(map(str, rest))}")


# ---------------------------------------------------------------------------------------
# converters: each returns the node of one object or entry


def map_block(name: str, m: dict) -> ast.Block:
    """`name { k = "v" ... }` for a string map."""
    return b.block(name, b.entries_of(m))


def labels_map(v, where: str) -> dict:
    if not isinstance(v, dict):
        raise Unsupported(f"{where}: expected a map")
    res = {}
    for k, x in v.items():
        if not isinstance(x, str):
            raise Unsupported(f"{where}.{k}: label/annotation values are strings, got {x!r}")
        res[str(k)] = x
    return res


def generic_block(name: str, f: F) -> ast.Block | None:
    """A nested object (securityContext) written with snake_case keys: maps become
    blocks, lists and scalars stay values. None when nothing is left."""

    def entries(d: dict) -> list[ast.Entry]:
        out = []
        for k, v in d.items():
            if v is None or v == {} or v == []:
                continue
            if isinstance(v, dict):
                out.append(b.block(snake(str(k)), entries(v)))
            elif isinstance(v, list):
                out.append(b.attr(snake(str(k)), ast.ListValue(tuple(scalar(x) for x in v))))
            else:
                out.append(b.attr(snake(str(k)), scalar(v)))
        return out

    for k in list(f.d):
        v = f.get(k)
        if v is None or v == {} or v == []:
            f.ctx.drop(f"{f.path}.{k}", v)
    body = {k: v for k, v in f.d.items() if not (v is None or v == {} or v == [])}
    return b.block(name, entries(body)) if body else None


def env_value(e: F, where: str) -> ast.Value:
    if "value" in e.d and "valueFrom" in e.d:
        raise Unsupported(f"{where}: both value and valueFrom")
    if "valueFrom" in e.d:
        vf = e.sub("valueFrom")
        kinds = [k for k in vf.d]
        if len(kinds) != 1:
            raise Unsupported(f"{vf.path}: expected one source, got {kinds}")
        kind = kinds[0]
        src = vf.sub(kind)
        if kind == "fieldRef":
            src.default("apiVersion", "v1")
            res = b.call("field", src.get("fieldPath"))
        elif kind == "secretKeyRef":
            if src.get("optional") is not None:
                raise Unsupported(f"{src.path}.optional")
            res = b.call("secret_key", src.get("name"), src.get("key"))
        elif kind == "configMapKeyRef":
            if src.get("optional") is not None:
                raise Unsupported(f"{src.path}.optional")
            res = b.call("configmap_key", src.get("name"), src.get("key"))
        elif kind == "resourceFieldRef":
            if src.get("containerName") is not None:
                raise Unsupported(f"{src.path}.containerName")
            div = src.d.get("divisor")
            if div is not None and str(div) == "1":
                src.ignore("divisor")
                div = None
            else:
                src.get("divisor")
            res = b.call("resource_field", src.get("resource"), *([str(div)] if div is not None else []))
        else:
            raise Unsupported(f"{vf.path}.{kind}")
        src.done()
        vf.done()
        return res
    v = e.get("value", "")
    if v is None:
        v = ""
    if not isinstance(v, str):
        raise Unsupported(f"{where}: env value must be a string, got {v!r}")
    return ast.Str(v)


def probe(kind: str, p: F) -> ast.Block:
    handlers = [k for k in ("httpGet", "tcpSocket", "exec", "grpc") if k in p.d]
    if len(handlers) != 1:
        raise Unsupported(f"{p.path}: expected one handler, got {handlers}")
    h = handlers[0]
    hf = p.sub(h)
    if h == "httpGet":
        if not isinstance(hf.get("path"), str):
            raise Unsupported(f"{hf.path}: httpGet without a path")
        parts = [b.attr("http_get", hf.get("path")), b.attr("port", port_value(hf.get("port"), hf.path))]
        scheme = hf.default("scheme", "HTTP")
        if scheme is not None:
            parts.append(b.attr("scheme", scheme))
        if hf.get("host") is not None:
            parts.append(b.attr("host", hf.get("host")))
        if hf.get("httpHeaders") is not None:
            raise Unsupported(f"{hf.path}.httpHeaders")
    elif h == "tcpSocket":
        parts = [b.attr("tcp", port_value(hf.get("port"), hf.path))]
        if hf.get("host") is not None:
            raise Unsupported(f"{hf.path}.host")
    elif h == "exec":
        parts = [b.attr("exec", strlist(hf.get("command"), hf.path))]
    else:
        parts = [b.attr("grpc", port_value(hf.get("port"), hf.path))]
        if hf.get("service") is not None:
            parts.append(b.attr("grpc_service", hf.get("service")))
    hf.done()
    for src, dst in (("initialDelaySeconds", "initial_delay"), ("periodSeconds", "period"),
                     ("timeoutSeconds", "timeout")):
        v = p.get(src)
        if v is not None:
            parts.append(b.attr(dst, seconds(v, p.path + "." + src)))
    v = p.get("failureThreshold")
    if v is not None:
        parts.append(b.attr("failure_threshold", int(v)))
    v = p.default("successThreshold", 1)
    if v is not None:
        parts.append(b.attr("success_threshold", int(v)))
    v = p.get("terminationGracePeriodSeconds")
    if v is not None:
        parts.append(b.attr("termination_grace_period", seconds(v, p.path)))
    p.done()
    return b.block("probe", parts, [kind])


def container(word: str, c: F, ctx: Ctx) -> ast.Block:
    name = c.get("name")
    body = [b.attr("image", c.get("image"))]
    if c.get("imagePullPolicy") is not None:
        body.append(b.attr("image_pull_policy", c.get("imagePullPolicy")))
    if c.present("command"):
        body.append(b.attr("command", strlist(c.get("command"), c.path + ".command")))
    if c.present("args"):
        body.append(b.attr("args", strlist(c.get("args"), c.path + ".args")))
    if c.present("workingDir"):
        body.append(b.attr("working_dir", c.get("workingDir")))
    c.default("terminationMessagePath", "/dev/termination-log")
    c.default("terminationMessagePolicy", "File")
    if c.present("ports"):
        body += [container_port(F(p, c.path + ".ports[]", ctx)) for p in c.get("ports")]
    if c.present("envFrom"):
        raise Unsupported(f"{c.path}.envFrom")
    if c.present("env"):
        body.append(env_block(c, ctx))
    if c.present("resources"):
        body += resources(c.sub("resources"))
    for src, kind in (("livenessProbe", "liveness"), ("readinessProbe", "readiness"),
                      ("startupProbe", "startup")):
        if c.present(src):
            body.append(probe(kind, c.sub(src)))
    if c.present("volumeMounts"):
        body += [mount(F(m, c.path + ".volumeMounts[]", ctx)) for m in c.get("volumeMounts")]
    if c.present("securityContext"):
        body += [x for x in [generic_block("security_context", c.sub("securityContext"))] if x is not None]
    c.done()
    return b.block(word, body, [name])


def container_port(pf: F) -> ast.Entry:
    num = pf.get("containerPort")
    pname = pf.get("name")
    proto = pf.default("protocol", "TCP")
    if pf.get("hostPort") is not None:
        raise Unsupported(f"{pf.path}.hostPort")
    pf.done()
    labels = [pname] if pname is not None else []
    if proto is None:
        return b.attr("port", int(num), labels)
    return b.block("port", [b.attr("port", int(num)), b.attr("protocol", proto)], labels)


def env_block(c: F, ctx: Ctx) -> ast.Block:
    seen = set()
    entries = []
    for e in c.get("env"):
        ef = F(e, c.path + ".env[]", ctx)
        en = ef.get("name")
        if en in seen:
            raise Unsupported(f"{ef.path}: duplicate env var {en}")
        seen.add(en)
        entries.append(b.attr(en, env_value(ef, ef.path)))
        ef.done()
    return b.block("env", entries)


def resources(r: F) -> list[ast.Block]:
    parts = []
    for sect in ("limits", "requests"):
        if r.present(sect):
            m = r.get(sect)
            parts.append(b.block(sect, [b.attr(str(k), quantity(v, r.path + "." + sect + "." + str(k)))
                                        for k, v in m.items()]))
    r.done()
    return [b.block("resources", parts)] if parts else []


def mount(mf: F) -> ast.Entry:
    mname = mf.get("name")
    path = mf.get("mountPath")
    sub = mf.default("subPath", "")
    ro = mf.default("readOnly", False)
    if mf.get("mountPropagation") is not None or mf.get("subPathExpr") is not None:
        raise Unsupported(f"{mf.path}: mountPropagation/subPathExpr")
    mf.done()
    if sub is None and ro is None:
        return b.attr("mount", path, [mname])
    parts = [b.attr("path", path)]
    if sub is not None:
        parts.append(b.attr("sub_path", sub))
    if ro is not None:
        parts.append(b.attr("read_only", scalar(ro)))
    return b.block("mount", parts, [mname])


def volume(v: F) -> ast.Block:
    name = v.get("name")
    sources = [k for k in v.d if k != "name"]
    if len(sources) != 1:
        raise Unsupported(f"{v.path}: expected one volume source, got {sources}")
    s = sources[0]
    sf = v.sub(s)
    if s == "emptyDir":
        parts = [b.attr("empty_dir", True)] + empty_dir(sf)
    elif s in ("configMap", "secret"):
        parts = mounted_data(s, sf)
    elif s == "persistentVolumeClaim":
        parts = [b.attr("claim", sf.get("claimName"))]
        if sf.default("readOnly", False) is not None:
            parts.append(b.attr("read_only", True))
    else:
        raise Unsupported(f"{v.path}: volume source {s}")
    sf.done()
    v.done()
    return b.block("volume", parts, [name])


def empty_dir(sf: F) -> list[ast.Attr]:
    parts = []
    for k in list(sf.d):
        val = sf.get(k)
        if k == "sizeLimit":
            parts.append(b.attr("size_limit", quantity(val, sf.path)))
        elif k == "medium":
            parts.append(b.attr("medium", val))
        else:
            raise Unsupported(f"{sf.path}.{k}")
    return parts


def mounted_data(s: str, sf: F) -> list[ast.Entry]:
    """A ConfigMap or Secret volume: what it mounts, which keys where, the files' mode."""
    ref = sf.get("name") if s == "configMap" else sf.get("secretName")
    parts = [b.attr("configmap" if s == "configMap" else "secret", ref)]
    if sf.present("items"):
        items = []
        for it in sf.get("items"):
            itf = F(it, sf.path + ".items[]", sf.ctx)
            items.append(b.attr(itf.get("key"), itf.get("path")))
            if itf.get("mode") is not None:
                raise Unsupported(f"{itf.path}.mode")
            itf.done()
        parts.append(b.block("items", items))
    dm = sf.get("defaultMode")
    if dm is not None:
        parts.append(b.attr("default_mode", format(dm, "04o")))
    opt = sf.get("optional")
    if opt is not None:
        parts.append(b.attr("optional", scalar(opt)))
    return parts


WORKLOAD_WORD = {"Deployment": "deployment", "StatefulSet": "statefulset"}


def workload(doc: dict, ns: str, ctx: Ctx) -> ast.Object:
    kind = doc["kind"]
    top = F(doc, kind, ctx)
    top.get("apiVersion"), top.get("kind")
    meta = top.sub("metadata")
    name = meta.get("name")
    check_ns(meta, ns, f"{kind} {name}")
    spec = top.sub("spec")
    body = []
    if spec.get("replicas") is not None:
        body.append(b.attr("replicas", int(spec.get("replicas"))))
    tpl = spec.sub("template")
    tmeta = tpl.sub("metadata")
    pod = tpl.sub("spec")
    sa = pod.get("serviceAccountName")
    if sa is not None:
        body.append(b.attr("service_account", sa))
    if pod.get("serviceAccount") is not None and pod.get("serviceAccount") != sa:
        raise Unsupported(f"{pod.path}.serviceAccount differs from serviceAccountName")
    if tmeta.present("labels"):
        body.append(map_block("labels", labels_map(tmeta.get("labels"), tmeta.path + ".labels")))
    sel = spec.sub("selector")
    if sel.present("matchExpressions"):
        raise Unsupported(f"{sel.path}.matchExpressions")
    body.append(map_block("selector", labels_map(sel.get("matchLabels"), sel.path + ".matchLabels")))
    sel.done()
    if meta.present("labels"):
        body.append(map_block("object_labels", labels_map(meta.get("labels"), meta.path + ".labels")))
    if meta.present("annotations"):
        body.append(map_block("object_annotations", labels_map(meta.get("annotations"), meta.path)))
    if tmeta.present("annotations"):
        body.append(map_block("annotations", labels_map(tmeta.get("annotations"), tmeta.path)))
    # the pod template's own name is ignored by the API server
    tmeta.ignore("name", tmeta.path + ".name (ignored by the API server)")
    tmeta.done()
    body += statefulset_spec(spec, ctx) if kind == "StatefulSet" else deployment_spec(spec, ctx)
    spec.done()
    body += pod_spec(pod, ctx)
    pod.done()
    tpl.done()
    meta.done()
    top.done()
    return b.obj(WORKLOAD_WORD[kind], name, body)


def statefulset_spec(spec: F, ctx: Ctx) -> list[ast.Attr]:
    body = [b.attr("service_name", spec.get("serviceName"))]
    pmp = spec.default("podManagementPolicy", "OrderedReady")
    if pmp is not None:
        body.append(b.attr("pod_management_policy", pmp))
    if spec.present("updateStrategy"):
        us = spec.sub("updateStrategy")
        t = us.get("type")
        if t == "RollingUpdate" and not us.d.get("rollingUpdate"):
            us.ignore("rollingUpdate")
            ctx.drop(us.path + ".type", t)
        else:
            raise Unsupported(f"{us.path}: {us.d}")
        us.done()
    if spec.present("volumeClaimTemplates"):
        raise Unsupported(f"{spec.path}.volumeClaimTemplates")
    spec.default("revisionHistoryLimit", 10)
    return body


def deployment_spec(spec: F, ctx: Ctx) -> list[ast.Attr]:
    body = []
    if spec.present("strategy"):
        st = spec.sub("strategy")
        t = st.get("type")
        ru = st.d.get("rollingUpdate")
        st.get("rollingUpdate")
        if ru:
            raise Unsupported(f"{st.path}.rollingUpdate parameters")
        if "rollingUpdate" in st.d:
            ctx.drop(st.path + ".rollingUpdate", ru)
        if t == "RollingUpdate":
            ctx.drop(st.path + ".type", t)
        else:
            body.append(b.attr("strategy", t))
        st.done()
    rhl = spec.default("revisionHistoryLimit", 10)
    if rhl is not None:
        body.append(b.attr("revision_history_limit", int(rhl)))
    for k in ("minReadySeconds", "progressDeadlineSeconds", "paused"):
        if spec.get(k) is not None:
            raise Unsupported(f"{spec.path}.{k}")
    return body


def pod_spec(pod: F, ctx: Ctx) -> list[ast.Entry]:
    """The pod template's own fields, its containers and its volumes."""
    body = []
    amt = pod.get("automountServiceAccountToken")
    if amt is not None:
        body.append(b.attr("automount_service_account_token", scalar(amt)))
    tgp = pod.get("terminationGracePeriodSeconds")
    if tgp is not None:
        body.append(b.attr("termination_grace_period", seconds(tgp, pod.path)))
    pod.default("shareProcessNamespace", False)
    pod.default("enableServiceLinks", True)
    pod.default("hostNetwork", False)
    pod.default("dnsPolicy", "ClusterFirst")
    pod.default("restartPolicy", "Always")
    pod.default("schedulerName", "default-scheduler")
    # the pod's own host name: without `subdomain` it makes no DNS record, so nothing else can see it
    pod.ignore("hostname", f"{pod.path}.hostname (the pod's own host name, no DNS record without subdomain)")
    if pod.present("securityContext"):
        body += [x for x in [generic_block("security_context", pod.sub("securityContext"))] if x is not None]
    if pod.present("affinity"):
        body.append(b.attr("affinity", b.literal(pod.get("affinity"))))
    if pod.present("initContainers"):
        body += [container("init_container", F(c, pod.path + ".initContainers[]", ctx), ctx)
                 for c in pod.get("initContainers")]
    body += [container("container", F(c, pod.path + ".containers[]", ctx), ctx) for c in pod.get("containers")]
    if pod.present("volumes"):
        body += [volume(F(v, pod.path + ".volumes[]", ctx)) for v in pod.get("volumes")]
    return body


def object_metadata(meta: F) -> list[ast.Block]:
    """An object's own labels and annotations."""
    body = []
    if meta.present("labels"):
        body.append(map_block("labels", labels_map(meta.get("labels"), meta.path + ".labels")))
    if meta.present("annotations"):
        body.append(map_block("annotations", labels_map(meta.get("annotations"), meta.path)))
    meta.done()
    return body


def service(doc: dict, ns: str, ctx: Ctx) -> ast.Object:
    top = F(doc, "Service", ctx)
    top.get("apiVersion"), top.get("kind")
    meta = top.sub("metadata")
    name = meta.get("name")
    check_ns(meta, ns, f"Service {name}")
    spec = top.sub("spec")
    body = object_metadata(meta)
    if spec.present("selector"):
        body.append(map_block("selector", labels_map(spec.get("selector"), spec.path + ".selector")))
    body += [service_port(F(p, spec.path + ".ports[]", ctx), ctx) for p in spec.get("ports") or []]
    t = spec.default("type", "ClusterIP")
    if t is not None:
        body.append(b.attr("type", t))
    cip = spec.get("clusterIP")
    if cip is not None:
        body.append(b.attr("cluster_ip", cip))
    pna = spec.default("publishNotReadyAddresses", False)
    if pna is not None:
        body.append(b.attr("publish_not_ready_addresses", scalar(pna)))
    spec.default("sessionAffinity", "None")
    spec.default("internalTrafficPolicy", "Cluster")
    for k in ("externalTrafficPolicy", "loadBalancerIP", "externalName", "ipFamilyPolicy",
              "ipFamilies", "clusterIPs", "sessionAffinityConfig", "externalIPs"):
        if spec.get(k) is not None:
            raise Unsupported(f"{spec.path}.{k}")
    spec.done()
    top.done()
    return b.obj("service", name, body)


def service_port(pf: F, ctx: Ctx) -> ast.Block:
    pname = pf.get("name")
    parts = [b.attr("port", int(pf.get("port")))]
    tp = pf.get("targetPort")
    if tp == 0:
        # the API server defaults targetPort 0 (like an absent one) to `port`
        ctx.drop(pf.path + ".targetPort", 0)
    elif tp is not None:
        parts.append(b.attr("target", port_value(tp, pf.path)))
    proto = pf.default("protocol", "TCP")
    if proto is not None:
        parts.append(b.attr("protocol", proto))
    if pf.get("appProtocol") is not None:
        parts.append(b.attr("app_protocol", pf.get("appProtocol")))
    if pf.get("nodePort") is not None:
        parts.append(b.attr("node_port", int(pf.get("nodePort"))))
    pf.done()
    return b.block("port", parts, [pname] if pname is not None else [])


def configmap(doc: dict, ns: str, ctx: Ctx) -> ast.Object:
    top = F(doc, "ConfigMap", ctx)
    top.get("apiVersion"), top.get("kind")
    meta = top.sub("metadata")
    name = meta.get("name")
    check_ns(meta, ns, f"ConfigMap {name}")
    body = object_metadata(meta)
    if top.present("binaryData"):
        raise Unsupported(f"ConfigMap {name}: binaryData")
    if top.get("immutable") is not None:
        raise Unsupported(f"ConfigMap {name}: immutable")
    data = top.get("data") or {}
    body.append(b.block("data", [b.attr(str(k), v if isinstance(v, str) else str(v)) for k, v in data.items()]))
    top.done()
    return b.obj("configmap", name, body)


def secret(doc: dict, ns: str, ctx: Ctx) -> ast.Object:
    top = F(doc, "Secret", ctx)
    top.get("apiVersion"), top.get("kind")
    meta = top.sub("metadata")
    name = meta.get("name")
    check_ns(meta, ns, f"Secret {name}")
    body = object_metadata(meta)
    t = top.get("type")
    if t is not None:
        body.append(b.attr("type", t))
    values = {}
    for k, v in (top.get("data") or {}).items():
        try:
            values[str(k)] = base64.b64decode(v or "", validate=True).decode("utf-8")
        except (binascii.Error, UnicodeDecodeError) as exc:
            raise Unsupported(f"Secret {name}.data.{k}: not base64 of UTF-8 text ({exc})")
    for k, v in (top.get("stringData") or {}).items():
        values[str(k)] = str(v)
    if top.get("immutable") is not None:
        raise Unsupported(f"Secret {name}: immutable")
    body.append(b.block("data", b.entries_of(values)))
    top.done()
    return b.obj("secret", name, body)


def serviceaccount(doc: dict, ns: str, ctx: Ctx) -> ast.Object:
    top = F(doc, "ServiceAccount", ctx)
    top.get("apiVersion"), top.get("kind")
    meta = top.sub("metadata")
    name = meta.get("name")
    check_ns(meta, ns, f"ServiceAccount {name}")
    body = object_metadata(meta)
    amt = top.get("automountServiceAccountToken")
    if amt is not None:
        body.append(b.attr("automount_service_account_token", scalar(amt)))
    if top.present("imagePullSecrets") or top.present("secrets"):
        raise Unsupported(f"ServiceAccount {name}: imagePullSecrets/secrets")
    top.done()
    return b.obj("serviceaccount", name, body)


def rbac_rule(rf: F) -> ast.Block:
    parts = []
    for key, word in (("apiGroups", "api_groups"), ("resources", "resources"), ("resourceNames", "resource_names"),
                      ("nonResourceURLs", "non_resource_urls"), ("verbs", "verbs")):
        if key in rf.d and (rf.d[key] or key == "verbs"):
            parts.append(b.attr(word, strlist(rf.get(key), f"{rf.path}.{key}")))
        else:
            rf.default(key)
    rf.done()
    return b.block("rule", parts)


def rbac_role(doc: dict, ns: str, ctx: Ctx) -> ast.Object:
    kind = doc.get("kind")
    top = F(doc, kind, ctx)
    top.get("apiVersion"), top.get("kind")
    meta = top.sub("metadata")
    name = meta.get("name")
    if kind == "Role":
        check_ns(meta, ns, f"Role {name}")
    elif meta.get("namespace") is not None:
        raise Unsupported(f"ClusterRole {name}: a namespace on a cluster-scoped object")
    body = object_metadata(meta)
    if top.present("aggregationRule"):
        raise Unsupported(f"{kind} {name}: aggregationRule")
    rules = top.get("rules")
    if not isinstance(rules, list):
        raise Unsupported(f"{kind} {name}: rules is not a list")
    body += [rbac_rule(F(r, f"{kind}.rules[]", ctx)) for r in rules]
    top.done()
    return b.obj(kind.lower(), name, body)


SUBJECT_WORD = {"ServiceAccount": "service_account", "User": "user", "Group": "group"}


def rbac_binding(doc: dict, ns: str, ctx: Ctx) -> ast.Object:
    kind = doc.get("kind")
    top = F(doc, kind, ctx)
    top.get("apiVersion"), top.get("kind")
    meta = top.sub("metadata")
    name = meta.get("name")
    if kind == "RoleBinding":
        check_ns(meta, ns, f"RoleBinding {name}")
    elif meta.get("namespace") is not None:
        raise Unsupported(f"ClusterRoleBinding {name}: a namespace on a cluster-scoped object")
    body = object_metadata(meta)
    ref = top.sub("roleRef")
    if ref.get("apiGroup") != "rbac.authorization.k8s.io" or ref.get("kind") not in ("Role", "ClusterRole"):
        raise Unsupported(f"{kind} {name}: roleRef {ref.d!r}")
    body.append(b.attr("role" if ref.get("kind") == "Role" else "clusterrole", ref.get("name")))
    ref.done()
    subjects = []
    for sd in top.get("subjects") or []:
        sf = F(sd, f"{kind}.subjects[]", ctx)
        word = SUBJECT_WORD.get(sf.get("kind"))
        if word is None:
            raise Unsupported(f"{kind} {name}: subject kind {sd.get('kind')!r}")
        if word == "service_account":
            subjects.append(b.call(word, sf.get("name"), sf.get("namespace") or ns))  # the namespace is explicit
        else:
            if sf.get("apiGroup") != "rbac.authorization.k8s.io":
                raise Unsupported(f"{kind} {name}: subject apiGroup {sd.get('apiGroup')!r}")
            subjects.append(b.call(word, sf.get("name")))
        sf.done()
    body.append(b.attr("subjects", ast.ListValue(tuple(subjects))))
    top.done()
    return b.obj(kind.lower(), name, body)


def persistent_volume(doc: dict, ns: str, ctx: Ctx) -> ast.Object:
    top = F(doc, "PersistentVolume", ctx)
    top.get("apiVersion"), top.get("kind")
    meta = top.sub("metadata")
    name = meta.get("name")
    body = object_metadata(meta)
    spec = top.sub("spec")
    capacity = spec.sub("capacity")
    body.append(b.attr("capacity", quantity(capacity.get("storage"), capacity.path)))
    capacity.done()
    body.append(b.attr("access_modes", strlist(spec.get("accessModes"), spec.path)))
    if spec.present("storageClassName"):
        body.append(b.attr("storage_class", spec.get("storageClassName")))
    policy = spec.get("persistentVolumeReclaimPolicy")
    if policy is not None:
        body.append(b.attr("reclaim_policy", policy))
    spec.default("volumeMode", "Filesystem")
    if spec.present("hostPath"):
        hp = spec.sub("hostPath")
        body.append(b.attr("host_path", hp.get("path")))
        if hp.get("type") is not None:
            body.append(b.attr("host_path_type", hp.get("type")))
        hp.done()
    elif spec.present("local"):
        local = spec.sub("local")
        body.append(b.attr("local_path", local.get("path")))
        local.done()
    else:
        raise Unsupported(f"PersistentVolume {name}: volume source {sorted(spec.d)}")
    spec.done()
    meta.done()
    top.done()
    return b.obj("persistentvolume", name, body)


def persistent_volume_claim(doc: dict, ns: str, ctx: Ctx) -> ast.Object:
    top = F(doc, "PersistentVolumeClaim", ctx)
    top.get("apiVersion"), top.get("kind")
    meta = top.sub("metadata")
    name = meta.get("name")
    check_ns(meta, ns, f"PersistentVolumeClaim {name}")
    body = object_metadata(meta)
    spec = top.sub("spec")
    requests = spec.sub("resources").sub("requests")
    body.append(b.attr("storage", quantity(requests.get("storage"), requests.path)))
    requests.done()
    body.append(b.attr("access_modes", strlist(spec.get("accessModes"), spec.path)))
    if spec.present("storageClassName"):
        body.append(b.attr("storage_class", spec.get("storageClassName")))
    if spec.get("volumeName") is not None:
        body.append(b.attr("volume_name", spec.get("volumeName")))
    spec.default("volumeMode", "Filesystem")
    spec.done()
    meta.done()
    top.done()
    return b.obj("persistentvolumeclaim", name, body)


def omit_volumes(docs: list[dict], specs: list[str]) -> list[str]:
    """Remove each `WORKLOAD/VOLUME` pod volume, and its mounts, from the manifests; a line per volume."""
    lines = []
    for spec in specs:
        workload_name, sep, volume_name = spec.partition("/")
        if not sep:
            raise Unsupported(f"--omit-volume {spec!r}: expected WORKLOAD/VOLUME")
        found = [d for d in docs if d["kind"] in WORKLOAD_WORD and d["metadata"]["name"] == workload_name]
        if not found:
            raise Unsupported(f"--omit-volume {spec!r}: no workload {workload_name}")
        pod = found[0]["spec"]["template"]["spec"]
        volumes = [v for v in pod.get("volumes") or [] if v.get("name") == volume_name]
        if not volumes:
            raise Unsupported(f"--omit-volume {spec!r}: {workload_name} has no volume {volume_name}")
        pod["volumes"] = [v for v in pod["volumes"] if v.get("name") != volume_name]
        if not pod["volumes"]:
            del pod["volumes"]
        mounts = []
        for c in (pod.get("containers") or []) + (pod.get("initContainers") or []):
            kept = [m for m in c.get("volumeMounts") or [] if m.get("name") != volume_name]
            mounts += [f"{c['name']}:{m['mountPath']}" for m in c.get("volumeMounts") or [] if m.get("name") == volume_name]
            if "volumeMounts" in c:
                c["volumeMounts"] = kept
                if not kept:
                    del c["volumeMounts"]
        source = {k: v for k, v in volumes[0].items() if k != "name"}
        lines.append(f"{workload_name} volume {volume_name} {source} (mounted at {', '.join(mounts) or 'nowhere'})")
    return lines


def check_ns(meta: F, ns: str, what: str):
    got = meta.get("namespace")
    if got is not None and got != ns:
        raise Unsupported(f"{what}: namespace {got!r} differs from --namespace {ns!r}")


# ---------------------------------------------------------------------------------------
# omissions

def omit_reason(doc: dict, docs: list[dict]) -> str:
    kind = doc["kind"]
    if kind == "PodDisruptionBudget":
        spec = doc.get("spec", {})
        rule = ", ".join(f"{k} {v}" for k, v in spec.items() if k != "selector")
        sel = (spec.get("selector") or {}).get("matchLabels", {})
        return (f"voluntary-eviction policy only ({rule}, selector "
                f"{', '.join(f'{k}={v}' for k, v in sel.items())}); no effect on the running topology")
    if kind == "ConfigMap":
        data = doc.get("data") or {}
        size = sum(len(v) for v in data.values())
        files = ", ".join(data) or "no data"
        why = f"{files}, {size} bytes"
        labels = (doc.get("metadata") or {}).get("labels") or {}
        users = sidecar_users(labels, docs)
        if users:
            why += f"; loaded only by {users}; observability content, not read by the application"
        else:
            why += "; not referenced by any workload"
        return why
    raise AssertionError(kind)


def sidecar_users(labels: dict, docs: list[dict]) -> str:
    """Containers of the k8s-sidecar kind (env LABEL=<label key>) that would pick up an
    object carrying `labels`."""
    found = []
    for d in docs:
        if d["kind"] not in WORKLOAD_WORD:
            continue
        for c in d["spec"]["template"]["spec"].get("containers") or []:
            for e in c.get("env") or []:
                if e.get("name") == "LABEL" and e.get("value") in labels:
                    found.append(f"{d['kind']} {d['metadata']['name']} container {c['name']} "
                                 f"(label {e['value']})")
    return "; ".join(found)


def references(docs: list[dict]) -> set[tuple[str, str]]:
    """(kind, name) of ConfigMaps and Secrets referenced by workloads."""
    refs = set()
    for d in docs:
        if d["kind"] not in WORKLOAD_WORD:
            continue
        pod = d["spec"]["template"]["spec"]
        for v in pod.get("volumes") or []:
            if "configMap" in v:
                refs.add(("ConfigMap", v["configMap"]["name"]))
            if "secret" in v:
                refs.add(("Secret", v["secret"]["secretName"]))
        for c in (pod.get("containers") or []) + (pod.get("initContainers") or []):
            for e in c.get("env") or []:
                vf = e.get("valueFrom") or {}
                if "configMapKeyRef" in vf:
                    refs.add(("ConfigMap", vf["configMapKeyRef"]["name"]))
                if "secretKeyRef" in vf:
                    refs.add(("Secret", vf["secretKeyRef"]["name"]))
    return refs


# ---------------------------------------------------------------------------------------
# dependency edges

HOST = r"[a-z0-9](?:[-a-z0-9]*[a-z0-9])?"
URL_RE = re.compile(r"[a-zA-Z][a-zA-Z0-9+.-]*://(" + HOST + r")(?=[:/]|$)")
HOSTPORT_RE = re.compile(r"^(" + HOST + r"):\d+$")
CONNSTR_RE = re.compile(r"(?:^|;)\s*(?:Host|Server|host)\s*=\s*(" + HOST + r")\s*(?:;|$)")


def host_refs(var: str, value: str) -> list[str]:
    hosts = [m.group(1) for m in URL_RE.finditer(value)]
    for item in value.split(","):
        m = HOSTPORT_RE.match(item.strip())
        if m:
            hosts.append(m.group(1))
    hosts += [m.group(1) for m in CONNSTR_RE.finditer(value)]
    if (var.endswith("_HOST") or var.endswith("_ADDR")) and re.fullmatch(HOST, value):
        hosts.append(value)
    return hosts


def derive_edges(docs: list[dict]):
    """Edges (caller, callee, evidence) from env vars and container args, plus the host
    references that name no Service of the file."""
    workloads = {d["metadata"]["name"]: d for d in docs if d["kind"] in WORKLOAD_WORD}
    services = {d["metadata"]["name"]: d for d in docs if d["kind"] == "Service"}

    def selected(svc):
        sel = svc["spec"].get("selector") or {}
        if not sel:
            return []
        res = []
        for wn, w in workloads.items():
            labels = w["spec"]["template"]["metadata"].get("labels") or {}
            if all(labels.get(k) == v for k, v in sel.items()):
                res.append(wn)
        return res

    edges = collections.defaultdict(list)
    unresolved = []
    for wn, w in sorted(workloads.items()):
        for c in w["spec"]["template"]["spec"].get("containers") or []:
            refs = []
            for e in c.get("env") or []:
                if isinstance(e.get("value"), str):
                    refs += [(h, f"container {c['name']} env {e['name']}={e['value']}")
                             for h in host_refs(e["name"], e["value"])]
            for a in c.get("args") or []:
                refs += [(m.group(1), f"container {c['name']} arg {a}") for m in URL_RE.finditer(a)]
            for h, why in refs:
                if h in services:
                    for callee in selected(services[h]):
                        if callee != wn:
                            edges[(wn, callee)].append(why)
                elif h not in ("localhost",) and not re.fullmatch(r"[\d.]+", h):
                    unresolved.append(f"{wn}: {why}")
    return edges, unresolved


# ---------------------------------------------------------------------------------------


KEEP = {"ServiceAccount": serviceaccount, "Secret": secret,
        "ConfigMap": configmap, "Deployment": workload,
        "StatefulSet": workload, "Service": service, "PersistentVolume": persistent_volume,
        "PersistentVolumeClaim": persistent_volume_claim, "ClusterRole": rbac_role, "Role": rbac_role,
        "ClusterRoleBinding": rbac_binding, "RoleBinding": rbac_binding}
KIND_ORDER = ["ServiceAccount", "ClusterRole", "Role", "ClusterRoleBinding", "RoleBinding", "Secret", "ConfigMap",
              "PersistentVolume", "PersistentVolumeClaim", "Deployment", "StatefulSet", "Service"]
ALWAYS_OMIT = {"PodDisruptionBudget"}


def generate(text: str, args) -> str:
    docs = [d for d in yaml.safe_load_all(text) if d]
    ctx = Ctx()
    omitted_volumes = omit_volumes(docs, args.omit_volume)
    namespaces = [d for d in docs if d["kind"] == "Namespace"]
    for d in namespaces:
        if d["metadata"]["name"] != args.namespace:
            raise Unsupported(f"Namespace {d['metadata']['name']} differs from --namespace")
    kept, omitted = [], []
    for d in docs:
        kind, name = d["kind"], d["metadata"]["name"]
        if kind == "Namespace":
            continue
        if kind in ALWAYS_OMIT:
            omitted.append(d)
        elif kind == "ConfigMap" and any(fnmatch.fnmatchcase(name, g) for g in args.omit_configmap):
            omitted.append(d)
        elif kind in KEEP:
            kept.append(d)
        else:
            raise Unsupported(f"{kind} {name}: kind not handled (keep or omit it explicitly)")
    needed = references(kept)
    for d in omitted:
        if (d["kind"], d["metadata"]["name"]) in needed:
            raise Unsupported(f"{d['kind']} {d['metadata']['name']} is referenced by a workload; "
                              "it cannot be omitted")
    seen = set()
    for d in kept:
        k = (d["kind"], d["metadata"]["name"])
        if k in seen:
            raise Unsupported(f"duplicate {k}")
        seen.add(k)

    notes = Notes()  # the header and the blank lines between kinds
    body = [namespace_object(namespaces, args.namespace, ctx)]
    counts = collections.Counter()
    for kind in KIND_ORDER:
        group = sorted((d for d in kept if d["kind"] == kind), key=lambda d: d["metadata"]["name"])
        for i, d in enumerate(group):
            body.append(notes.add(KEEP[kind](d, args.namespace, ctx), blank_line=i == 0))
            counts[kind] += 1

    # edges
    workload_names = {d["metadata"]["name"] for d in kept if d["kind"] in WORKLOAD_WORD}
    derived, unresolved = ({}, []) if args.no_derived_edges else derive_edges(kept)
    hand = []
    for e in args.edge:
        parts = [p.strip() for p in e.split("->")]
        if len(parts) < 2 or not all(parts):
            raise Unsupported(f"--edge {e!r}: expected A->B")
        for a, z in zip(parts, parts[1:]):
            hand.append((a, z))
    all_edges = set(derived) | set(hand)
    for a, z in sorted(all_edges):
        for n in (a, z):
            if n not in workload_names:
                raise Unsupported(f"edge {a} -> {z}: {n} is not a workload of this app")
    for i, (a, z) in enumerate(sorted(all_edges)):
        body.append(notes.add(b.edge(a, z), blank_line=i == 0))

    document = b.app(args.name, app_head(args) + body)
    header = header_lines(text, args, docs, counts, omitted, ctx, all_edges, derived, hand, unresolved)
    if omitted_volumes:
        at = header.index("# Mapping notes: pod template labels/annotations -> labels/annotations, the workload's own")
        header[at:at] = ["# Volumes omitted (--omit-volume; their source is not in the manifests):"] + \
            [f"#   - {line}" for line in omitted_volumes]
    try:
        notes.add(document, before=header)
    except ValueError as exc:  # a --preface with a line break
        raise Unsupported(f"the header cannot be written as comments: {exc}")
    return printed(document, notes)


def namespace_object(namespaces: list[dict], ns: str, ctx: Ctx) -> ast.Object:
    """`namespace "NS"`, with the Namespace object's labels and annotations when the manifests have it."""
    if not namespaces:
        return b.obj("namespace", ns)
    nm = F(namespaces[0]["metadata"], "Namespace.metadata", ctx)
    nm.get("name")
    entries = []
    if nm.present("labels"):
        entries.append(map_block("labels", labels_map(nm.get("labels"), nm.path)))
    if nm.present("annotations"):
        entries.append(map_block("annotations", labels_map(nm.get("annotations"), nm.path)))
    nm.done()
    return b.obj("namespace", ns, entries or None)


def app_head(args) -> list:
    """The app's description and metadata (`--description`, `--meta KEY=VALUE`)."""
    head = [b.description(args.description)] if args.description else []
    if args.meta:
        entries = []
        for m in args.meta:
            k, sep, v = m.partition("=")
            if not sep:
                raise Unsupported(f"--meta {m!r}: expected KEY=VALUE")
            entries.append(b.attr(k, v))
        head.append(b.metadata(entries))
    return head


def header_lines(text: str, args, docs, counts, omitted, ctx: Ctx, all_edges, derived, hand, unresolved) -> list[str]:
    """The comment above `app`: the preface, how to regenerate the file, and what was kept, left out or derived."""
    h = []
    for p in args.preface:
        h.append(f"# {p}".rstrip())
    if args.preface:
        h.append("#")
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]
    argv = [a for a in args.argv]
    h.append(f"# Generated by tools/app_from_manifests.py from {os.path.basename(args.input)}"
             f" (sha256 {digest}...); regenerate, do not edit:")
    # one option per line, as a copy-pasteable shell command
    groups, cur = [], []
    for a in argv:
        if a.startswith("-") and cur:
            groups.append(cur)
            cur = []
        cur.append(a)
    if cur:
        groups.append(cur)
    cmd = ["python3 tools/app_from_manifests.py " + shlex.join(groups[0])] if groups else []
    cmd += ["  " + shlex.join(g) for g in groups[1:]]
    for i, c in enumerate(cmd):
        h.append("#   " + c + (" \\" if i < len(cmd) - 1 else ""))
    h.append("#")
    in_counts = collections.Counter(d["kind"] for d in docs)
    h.append("# Objects kept (in this file / in the manifests):")
    for kind in KIND_ORDER + ["Namespace"]:
        if in_counts.get(kind) or counts.get(kind):
            n = counts.get(kind, 0) if kind != "Namespace" else 1
            h.append(f"#   {kind}: {n} / {in_counts.get(kind, 0)}")
    if omitted:
        h.append("# Objects omitted:")
        for d in sorted(omitted, key=lambda d: (d["kind"], d["metadata"]["name"])):
            h.append(f"#   - {d['kind']} {d['metadata']['name']}: {omit_reason(d, docs)}")
    if ctx.dropped:
        h.append("# Fields dropped because their value is the Kubernetes default (no effect once applied):")
        for (path, shown), n in sorted(ctx.dropped.items()):
            h.append(f"#   - {path} {shown} (x{n})")
    h.append("# Mapping notes: pod template labels/annotations -> labels/annotations, the workload's own")
    h.append("#   metadata -> object_labels/object_annotations; securityContext -> security_context with")
    h.append("#   snake_case keys; affinity is passed through verbatim (Kubernetes field names).")
    if all_edges:
        h.append("# Dependency edges (caller -> callee workload):")
        for a, z in sorted(all_edges):
            src = []
            if (a, z) in derived:
                src.append("; ".join(sorted(set(derived[(a, z)]))))
            if (a, z) in hand:
                src.append("hand-added (--edge)")
            h.append(f"#   {a} -> {z}: {'; '.join(src)}")
    if unresolved:
        h.append("# Host references that name no Service of this file (no edge):")
        for u in sorted(set(unresolved)):
            h.append(f"#   - {u}")
    return h


def printed(document: ast.App, notes: Notes) -> str:
    """The app in `itbench fmt`'s layout, read back once: what does not parse (a value nested deeper than
    the parser takes) is an error, not a broken library file."""
    from itbench_dsl.diagnostics import Diagnostics, render_human
    from itbench_dsl.parser import parse_text

    problem = b.too_deep(document)
    if problem is not None:
        raise Unsupported(f"the generated text does not parse: {problem}")
    text = print_document(document, notes=notes)
    diags = Diagnostics()
    if parse_text(text, "<generated>", diags) is None:
        raise Unsupported("the generated text does not parse:\n" + render_human(diags))
    return text


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("input", help="rendered manifests (multi-document YAML), or a folder of them")
    ap.add_argument("--name", required=True, help="app name (the `app \"NAME\"` label)")
    ap.add_argument("--namespace", required=True, help="namespace of the application")
    ap.add_argument("-o", "--output", help="output .itb file (default: stdout)")
    ap.add_argument("--description", help="the app's description")
    ap.add_argument("--meta", action="append", default=[], metavar="KEY=VALUE",
                    help="a metadata entry (repeatable, kept in order)")
    ap.add_argument("--preface", action="append", default=[], metavar="LINE",
                    help="a comment line for the top of the file (repeatable)")
    ap.add_argument("--omit-configmap", action="append", default=[], metavar="GLOB",
                    help="leave out ConfigMaps whose name matches GLOB (repeatable)")
    ap.add_argument("--omit-volume", action="append", default=[], metavar="WORKLOAD/VOLUME",
                    help="leave out a pod volume and its mounts (repeatable)")
    ap.add_argument("--edge", action="append", default=[], metavar="A->B[->C]",
                    help="a hand-added dependency edge or chain between workloads (repeatable)")
    ap.add_argument("--no-derived-edges", action="store_true",
                    help="do not derive edges from env vars and args")
    args = ap.parse_args(argv)
    # the regeneration command recorded in the header, as given
    rec = list(argv)
    args.argv = rec
    if os.path.isdir(args.input):  # every manifest below the folder, in sorted order
        files = sorted(p for p in Path(args.input).rglob("*") if p.suffix in (".yaml", ".yml") and p.is_file())
        text = "\n---\n".join(p.read_text(encoding="utf-8") for p in files)
    else:
        with open(args.input, encoding="utf-8") as f:
            text = f.read()
    try:
        result = generate(text, args)
    except Unsupported as exc:
        print(f"app_from_manifests: {exc}", file=sys.stderr)
        return 1
    if args.output:
        with open(args.output, "w", encoding="utf-8", newline="\n") as f:
            f.write(result)
    else:
        sys.stdout.write(result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
