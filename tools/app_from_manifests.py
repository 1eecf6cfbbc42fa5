#!/usr/bin/env python3
"""Generate an `.itb` application topology from rendered Kubernetes manifests.

Maintainer tool for the standard library (itbench_dsl/stdlib/apps/*.itb): the app
files are generated from the upstream manifests, not typed by hand.

    python3 tools/app_from_manifests.py IN.yaml --name NAME --namespace NS -o OUT.itb \
        [--description TEXT] [--meta KEY=VALUE ...] [--preface LINE ...] \
        [--omit-configmap GLOB ...] [--edge "A->B" ...] [--no-derived-edges]

What it does
  * Keeps every Deployment, StatefulSet, Service, ConfigMap, Secret and ServiceAccount
    (plus the Namespace, as the `namespace` statement). Objects are written sorted by
    kind, then by name; inside an object the manifest's order is kept (env order matters).
  * Leaves out RBAC objects and PodDisruptionBudgets, and ConfigMaps matching
    --omit-configmap; every omitted object is listed with its reason in the header.
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
# lexical helpers

IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
QUANTITY = re.compile(r"^[+-]?\d+(\.\d+)?([a-zA-Z]+(\d+(\.\d+)?[a-zA-Z]+)*)?$")

# Words that are literal keywords of grammar/itbench.lark: the lexer turns them into
# keyword tokens even where a key is expected, so they must be written quoted.
GRAMMAR_KEYWORDS = {
    "after", "agent", "alert", "app", "before", "complexity", "compliant", "control",
    "default", "description", "domain", "exists", "expect", "fault", "firing", "gap",
    "group", "in", "metadata", "mitigated", "not", "on", "optimal", "param",
    "propagation", "ready", "absent", "root_cause", "run", "scenario", "solution", "step",
    "tags", "task", "topology", "use", "wait", "when", "within",
}


def _grammar_keywords() -> set[str]:
    """The fixed list above, plus any keyword the repository's grammar has gained."""
    here = os.path.dirname(os.path.abspath(__file__))
    path = os.path.join(here, os.pardir, "grammar", "itbench.lark")
    words = set(GRAMMAR_KEYWORDS)
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError:
        return words
    # string literals of the grammar that look like identifiers
    for m in re.finditer(r'"([A-Za-z_][A-Za-z0-9_]*)"', text):
        words.add(m.group(1))
    return words


KEYWORDS = _grammar_keywords()


def q(s: str) -> str:
    """A .itb string literal, quoted as the canonical printer quotes it."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from itbench_dsl.printer import quote

    return quote(s)


def key(k: str) -> str:
    if IDENT.match(k) and k not in KEYWORDS:
        return k
    return q(k)


def scalar(v) -> str:
    """A plain value: strings quoted, bools as true/false, numbers as written."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return repr(v)
    if isinstance(v, str):
        return q(v)
    raise TypeError(f"not a scalar: {v!r}")


def quantity(v, where: str) -> str:
    s = str(v)
    if isinstance(v, bool) or not QUANTITY.match(s):
        raise Unsupported(f"{where}: not a quantity: {v!r}")
    return s


def seconds(v, where: str) -> str:
    if isinstance(v, bool) or not isinstance(v, int):
        raise Unsupported(f"{where}: not a whole number of seconds: {v!r}")
    return f"{v}s"


def port_value(v, where: str) -> str:
    if isinstance(v, bool):
        raise Unsupported(f"{where}: bad port {v!r}")
    if isinstance(v, int):
        return str(v)
    if isinstance(v, str):
        return q(v)  # a named port
    raise Unsupported(f"{where}: bad port {v!r}")


def strlist(v, where: str) -> str:
    if not isinstance(v, list) or not all(isinstance(x, str) for x in v):
        raise Unsupported(f"{where}: expected a list of strings, got {v!r}")
    return "[" + ", ".join(q(x) for x in v) + "]"


def literal(v) -> str:
    """Any YAML value as a .itb value (maps as `{k = v, ...}`, lists as `[...]`); keys kept
    verbatim. Used for objects passed through unchanged (affinity)."""
    if isinstance(v, dict):
        return "{" + ", ".join(f"{key(str(k))} = {literal(x)}" for k, x in v.items()) + "}"
    if isinstance(v, list):
        return "[" + ", ".join(literal(x) for x in v) + "]"
    return scalar(v)


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
# output


class Out:
    def __init__(self):
        self.lines: list[str] = []
        self.depth = 0

    def line(self, s: str = ""):
        self.lines.append(("  " * self.depth + s) if s else "")

    def open(self, s: str):
        self.line(s + " {")
        self.depth += 1

    def close(self):
        self.depth -= 1
        self.line("}")


INLINE_MAX = 110


def kv_entries(m: dict) -> list[str]:
    return [f"{key(str(k))} = {scalar(v) if not isinstance(v, str) else q(v)}" for k, v in m.items()]


def emit_map_block(out: Out, name: str, m: dict, *, inline_max: int = INLINE_MAX):
    """`name { k = v ... }` for a string map, on one line when short."""
    entries = kv_entries(m)
    one = f"{name} {{ {'  '.join(entries)} }}"
    if len(one) + 2 * out.depth <= inline_max:
        out.line(one)
    else:
        out.open(name)
        for e in entries:
            out.line(e)
        out.close()


def labels_map(v, where: str) -> dict:
    if not isinstance(v, dict):
        raise Unsupported(f"{where}: expected a map")
    res = {}
    for k, x in v.items():
        if not isinstance(x, str):
            raise Unsupported(f"{where}.{k}: label/annotation values are strings, got {x!r}")
        res[str(k)] = x
    return res


# ---------------------------------------------------------------------------------------
# converters


def generic_block(out: Out, name: str, f: F):
    """A nested object (securityContext) written with snake_case keys: maps become
    blocks, lists and scalars stay values. One line when short."""

    def render(d: dict) -> list[tuple[str, object]]:
        res = []
        for k, v in d.items():
            if v is None or v == {} or v == []:
                continue
            res.append((snake(str(k)), v))
        return res

    def inline(d) -> str:
        parts = []
        for k, v in render(d):
            if isinstance(v, dict):
                parts.append(f"{k} {{ {inline(v)} }}")
            elif isinstance(v, list):
                parts.append(f"{k} = [{', '.join(scalar(x) for x in v)}]")
            else:
                parts.append(f"{k} = {scalar(v)}")
        return "  ".join(parts)

    for k in list(f.d):
        v = f.get(k)
        if v is None or v == {} or v == []:
            f.ctx.drop(f"{f.path}.{k}", v)
    body = {k: v for k, v in f.d.items() if not (v is None or v == {} or v == [])}
    if not body:
        return
    one = f"{name} {{ {inline(body)} }}"
    if len(one) + 2 * out.depth <= INLINE_MAX:
        out.line(one)
        return
    out.open(name)

    def emit(d):
        for k, v in render(d):
            if isinstance(v, dict):
                out.open(k)
                emit(v)
                out.close()
            elif isinstance(v, list):
                out.line(f"{k} = [{', '.join(scalar(x) for x in v)}]")
            else:
                out.line(f"{k} = {scalar(v)}")

    emit(body)
    out.close()


def env_value(e: F, where: str) -> str:
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
            res = f"field({q(src.get('fieldPath'))})"
        elif kind == "secretKeyRef":
            if src.get("optional") is not None:
                raise Unsupported(f"{src.path}.optional")
            res = f"secret_key({q(src.get('name'))}, {q(src.get('key'))})"
        elif kind == "configMapKeyRef":
            if src.get("optional") is not None:
                raise Unsupported(f"{src.path}.optional")
            res = f"configmap_key({q(src.get('name'))}, {q(src.get('key'))})"
        elif kind == "resourceFieldRef":
            if src.get("containerName") is not None:
                raise Unsupported(f"{src.path}.containerName")
            div = src.d.get("divisor")
            if div is not None and str(div) == "1":
                src.ignore("divisor")
                div = None
            else:
                src.get("divisor")
            res = f"resource_field({q(src.get('resource'))}"
            res += f", {q(str(div))})" if div is not None else ")"
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
    return q(v)


def emit_probe(out: Out, kind: str, p: F):
    parts = []
    handlers = [k for k in ("httpGet", "tcpSocket", "exec", "grpc") if k in p.d]
    if len(handlers) != 1:
        raise Unsupported(f"{p.path}: expected one handler, got {handlers}")
    h = handlers[0]
    hf = p.sub(h)
    if h == "httpGet":
        if not isinstance(hf.get("path"), str):
            raise Unsupported(f"{hf.path}: httpGet without a path")
        parts.append(f"http_get = {q(hf.get('path'))}")
        parts.append(f"port = {port_value(hf.get('port'), hf.path)}")
        scheme = hf.default("scheme", "HTTP")
        if scheme is not None:
            parts.append(f"scheme = {q(scheme)}")
        if hf.get("host") is not None:
            parts.append(f"host = {q(hf.get('host'))}")
        if hf.get("httpHeaders") is not None:
            raise Unsupported(f"{hf.path}.httpHeaders")
    elif h == "tcpSocket":
        parts.append(f"tcp = {port_value(hf.get('port'), hf.path)}")
        if hf.get("host") is not None:
            raise Unsupported(f"{hf.path}.host")
    elif h == "exec":
        parts.append(f"exec = {strlist(hf.get('command'), hf.path)}")
    else:
        parts.append(f"grpc = {port_value(hf.get('port'), hf.path)}")
        if hf.get("service") is not None:
            parts.append(f"grpc_service = {q(hf.get('service'))}")
    hf.done()
    for src, dst in (("initialDelaySeconds", "initial_delay"), ("periodSeconds", "period"),
                     ("timeoutSeconds", "timeout")):
        v = p.get(src)
        if v is not None:
            parts.append(f"{dst} = {seconds(v, p.path + '.' + src)}")
    v = p.get("failureThreshold")
    if v is not None:
        parts.append(f"failure_threshold = {int(v)}")
    v = p.default("successThreshold", 1)
    if v is not None:
        parts.append(f"success_threshold = {int(v)}")
    v = p.get("terminationGracePeriodSeconds")
    if v is not None:
        parts.append(f"termination_grace_period = {seconds(v, p.path)}")
    p.done()
    out.line(f"probe {q(kind)} {{ {'  '.join(parts)} }}")


def emit_container(out: Out, word: str, c: F, ctx: Ctx):
    name = c.get("name")
    out.open(f"{word} {q(name)}")
    out.line(f"image = {q(c.get('image'))}")
    if c.get("imagePullPolicy") is not None:
        out.line(f"image_pull_policy = {q(c.get('imagePullPolicy'))}")
    if c.present("command"):
        out.line(f"command = {strlist(c.get('command'), c.path + '.command')}")
    if c.present("args"):
        out.line(f"args = {strlist(c.get('args'), c.path + '.args')}")
    if c.present("workingDir"):
        out.line(f"working_dir = {q(c.get('workingDir'))}")
    c.default("terminationMessagePath", "/dev/termination-log")
    c.default("terminationMessagePolicy", "File")
    if c.present("ports"):
        for p in c.get("ports"):
            pf = F(p, c.path + ".ports[]", ctx)
            num = pf.get("containerPort")
            pname = pf.get("name")
            proto = pf.default("protocol", "TCP")
            if pf.get("hostPort") is not None:
                raise Unsupported(f"{pf.path}.hostPort")
            pf.done()
            label = f" {q(pname)}" if pname is not None else ""
            if proto is None:
                out.line(f"port{label} = {int(num)}")
            else:
                out.line(f"port{label} {{ port = {int(num)}  protocol = {q(proto)} }}")
    if c.present("envFrom"):
        raise Unsupported(f"{c.path}.envFrom")
    if c.present("env"):
        seen = set()
        out.open("env")
        for e in c.get("env"):
            ef = F(e, c.path + ".env[]", ctx)
            en = ef.get("name")
            if en in seen:
                raise Unsupported(f"{ef.path}: duplicate env var {en}")
            seen.add(en)
            out.line(f"{key(en)} = {env_value(ef, ef.path)}")
            ef.done()
        out.close()
    if c.present("resources"):
        r = c.sub("resources")
        parts = []
        for sect in ("limits", "requests"):
            if r.present(sect):
                m = r.get(sect)
                items = "  ".join(f"{key(str(k))} = {quantity(v, r.path + '.' + sect + '.' + str(k))}"
                                  for k, v in m.items())
                parts.append(f"{sect} {{ {items} }}")
        r.done()
        if parts:
            out.line(f"resources {{ {'  '.join(parts)} }}")
    for src, kind in (("livenessProbe", "liveness"), ("readinessProbe", "readiness"),
                      ("startupProbe", "startup")):
        if c.present(src):
            emit_probe(out, kind, c.sub(src))
    if c.present("volumeMounts"):
        for m in c.get("volumeMounts"):
            mf = F(m, c.path + ".volumeMounts[]", ctx)
            mname = mf.get("name")
            path = mf.get("mountPath")
            sub = mf.default("subPath", "")
            ro = mf.default("readOnly", False)
            if mf.get("mountPropagation") is not None or mf.get("subPathExpr") is not None:
                raise Unsupported(f"{mf.path}: mountPropagation/subPathExpr")
            mf.done()
            if sub is None and ro is None:
                out.line(f"mount {q(mname)} = {q(path)}")
            else:
                extra = ""
                if sub is not None:
                    extra += f"  sub_path = {q(sub)}"
                if ro is not None:
                    extra += f"  read_only = {scalar(ro)}"
                out.line(f"mount {q(mname)} {{ path = {q(path)}{extra} }}")
    if c.present("securityContext"):
        generic_block(out, "security_context", c.sub("securityContext"))
    c.done()
    out.close()


def emit_volume(out: Out, v: F):
    name = v.get("name")
    sources = [k for k in v.d if k != "name"]
    if len(sources) != 1:
        raise Unsupported(f"{v.path}: expected one volume source, got {sources}")
    s = sources[0]
    sf = v.sub(s)
    parts = []
    if s == "emptyDir":
        if sf.d:
            for k in list(sf.d):
                val = sf.get(k)
                if k == "sizeLimit":
                    parts.append(f"size_limit = {quantity(val, sf.path)}")
                elif k == "medium":
                    parts.append(f"medium = {q(val)}")
                else:
                    raise Unsupported(f"{sf.path}.{k}")
            parts.insert(0, "empty_dir = true")
        else:
            parts.append("empty_dir = true")
    elif s in ("configMap", "secret"):
        ref = sf.get("name") if s == "configMap" else sf.get("secretName")
        parts.append(f"{'configmap' if s == 'configMap' else 'secret'} = {q(ref)}")
        if sf.present("items"):
            items = []
            for it in sf.get("items"):
                itf = F(it, sf.path + ".items[]", sf.ctx)
                items.append(f"{key(itf.get('key'))} = {q(itf.get('path'))}")
                if itf.get("mode") is not None:
                    raise Unsupported(f"{itf.path}.mode")
                itf.done()
            parts.append(f"items {{ {'  '.join(items)} }}")
        dm = sf.get("defaultMode")
        if dm is not None:
            parts.append(f"default_mode = {q(format(dm, '04o'))}")
        opt = sf.get("optional")
        if opt is not None:
            parts.append(f"optional = {scalar(opt)}")
    elif s == "persistentVolumeClaim":
        parts.append(f"claim = {q(sf.get('claimName'))}")
        ro = sf.default("readOnly", False)
        if ro is not None:
            parts.append("read_only = true")
    else:
        raise Unsupported(f"{v.path}: volume source {s}")
    sf.done()
    v.done()
    out.line(f"volume {q(name)} {{ {'  '.join(parts)} }}")


WORKLOAD_WORD = {"Deployment": "deployment", "StatefulSet": "statefulset"}


def emit_workload(out: Out, doc: dict, ns: str, ctx: Ctx):
    kind = doc["kind"]
    top = F(doc, kind, ctx)
    top.get("apiVersion"), top.get("kind")
    meta = top.sub("metadata")
    name = meta.get("name")
    check_ns(meta, ns, f"{kind} {name}")
    spec = top.sub("spec")
    out.open(f"{WORKLOAD_WORD[kind]} {q(name)}")
    if spec.get("replicas") is not None:
        out.line(f"replicas = {int(spec.get('replicas'))}")
    tpl = spec.sub("template")
    tmeta = tpl.sub("metadata")
    pod = tpl.sub("spec")
    sa = pod.get("serviceAccountName")
    if sa is not None:
        out.line(f"service_account = {q(sa)}")
    if pod.get("serviceAccount") is not None and pod.get("serviceAccount") != sa:
        raise Unsupported(f"{pod.path}.serviceAccount differs from serviceAccountName")
    if tmeta.present("labels"):
        emit_map_block(out, "labels", labels_map(tmeta.get("labels"), tmeta.path + ".labels"))
    sel = spec.sub("selector")
    if sel.present("matchExpressions"):
        raise Unsupported(f"{sel.path}.matchExpressions")
    emit_map_block(out, "selector", labels_map(sel.get("matchLabels"), sel.path + ".matchLabels"))
    sel.done()
    if meta.present("labels"):
        emit_map_block(out, "object_labels", labels_map(meta.get("labels"), meta.path + ".labels"))
    if meta.present("annotations"):
        emit_map_block(out, "object_annotations", labels_map(meta.get("annotations"), meta.path))
    if tmeta.present("annotations"):
        emit_map_block(out, "annotations", labels_map(tmeta.get("annotations"), tmeta.path))
    # the pod template's own name is ignored by the API server
    tmeta.ignore("name", tmeta.path + ".name (ignored by the API server)")
    tmeta.done()
    if kind == "StatefulSet":
        out.line(f"service_name = {q(spec.get('serviceName'))}")
        pmp = spec.default("podManagementPolicy", "OrderedReady")
        if pmp is not None:
            out.line(f"pod_management_policy = {q(pmp)}")
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
    else:
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
                out.line(f"strategy = {q(t)}")
            st.done()
        rhl = spec.default("revisionHistoryLimit", 10)
        if rhl is not None:
            out.line(f"revision_history_limit = {int(rhl)}")
        for k in ("minReadySeconds", "progressDeadlineSeconds", "paused"):
            if spec.get(k) is not None:
                raise Unsupported(f"{spec.path}.{k}")
    spec.done()
    # pod-level fields
    amt = pod.get("automountServiceAccountToken")
    if amt is not None:
        out.line(f"automount_service_account_token = {scalar(amt)}")
    tgp = pod.get("terminationGracePeriodSeconds")
    if tgp is not None:
        out.line(f"termination_grace_period = {seconds(tgp, pod.path)}")
    pod.default("shareProcessNamespace", False)
    pod.default("enableServiceLinks", True)
    pod.default("hostNetwork", False)
    pod.default("dnsPolicy", "ClusterFirst")
    pod.default("restartPolicy", "Always")
    pod.default("schedulerName", "default-scheduler")
    if pod.present("securityContext"):
        generic_block(out, "security_context", pod.sub("securityContext"))
    if pod.present("affinity"):
        out.line(f"affinity = {literal(pod.get('affinity'))}")
    if pod.present("initContainers"):
        for c in pod.get("initContainers"):
            emit_container(out, "init_container", F(c, pod.path + ".initContainers[]", ctx), ctx)
    for c in pod.get("containers"):
        emit_container(out, "container", F(c, pod.path + ".containers[]", ctx), ctx)
    if pod.present("volumes"):
        for v in pod.get("volumes"):
            emit_volume(out, F(v, pod.path + ".volumes[]", ctx))
    pod.done()
    tpl.done()
    meta.done()
    top.done()
    out.close()


def emit_service(out: Out, doc: dict, ns: str, ctx: Ctx):
    top = F(doc, "Service", ctx)
    top.get("apiVersion"), top.get("kind")
    meta = top.sub("metadata")
    name = meta.get("name")
    check_ns(meta, ns, f"Service {name}")
    spec = top.sub("spec")
    out.open(f"service {q(name)}")
    if meta.present("labels"):
        emit_map_block(out, "labels", labels_map(meta.get("labels"), meta.path + ".labels"))
    if meta.present("annotations"):
        emit_map_block(out, "annotations", labels_map(meta.get("annotations"), meta.path))
    meta.done()
    if spec.present("selector"):
        emit_map_block(out, "selector", labels_map(spec.get("selector"), spec.path + ".selector"))
    for p in spec.get("ports") or []:
        pf = F(p, spec.path + ".ports[]", ctx)
        pname = pf.get("name")
        parts = [f"port = {int(pf.get('port'))}"]
        tp = pf.get("targetPort")
        if tp == 0:
            # the API server defaults targetPort 0 (like an absent one) to `port`
            ctx.drop(pf.path + ".targetPort", 0)
        elif tp is not None:
            parts.append(f"target = {port_value(tp, pf.path)}")
        proto = pf.default("protocol", "TCP")
        if proto is not None:
            parts.append(f"protocol = {q(proto)}")
        if pf.get("appProtocol") is not None:
            parts.append(f"app_protocol = {q(pf.get('appProtocol'))}")
        if pf.get("nodePort") is not None:
            parts.append(f"node_port = {int(pf.get('nodePort'))}")
        pf.done()
        label = f" {q(pname)}" if pname is not None else ""
        out.line(f"port{label} {{ {'  '.join(parts)} }}")
    t = spec.default("type", "ClusterIP")
    if t is not None:
        out.line(f"type = {q(t)}")
    cip = spec.get("clusterIP")
    if cip is not None:
        out.line(f"cluster_ip = {q(cip)}")
    pna = spec.default("publishNotReadyAddresses", False)
    if pna is not None:
        out.line(f"publish_not_ready_addresses = {scalar(pna)}")
    spec.default("sessionAffinity", "None")
    spec.default("internalTrafficPolicy", "Cluster")
    for k in ("externalTrafficPolicy", "loadBalancerIP", "externalName", "ipFamilyPolicy",
              "ipFamilies", "clusterIPs", "sessionAffinityConfig", "externalIPs"):
        if spec.get(k) is not None:
            raise Unsupported(f"{spec.path}.{k}")
    spec.done()
    top.done()
    out.close()


def emit_configmap(out: Out, doc: dict, ns: str, ctx: Ctx):
    top = F(doc, "ConfigMap", ctx)
    top.get("apiVersion"), top.get("kind")
    meta = top.sub("metadata")
    name = meta.get("name")
    check_ns(meta, ns, f"ConfigMap {name}")
    out.open(f"configmap {q(name)}")
    if meta.present("labels"):
        emit_map_block(out, "labels", labels_map(meta.get("labels"), meta.path + ".labels"))
    if meta.present("annotations"):
        emit_map_block(out, "annotations", labels_map(meta.get("annotations"), meta.path))
    meta.done()
    if top.present("binaryData"):
        raise Unsupported(f"ConfigMap {name}: binaryData")
    if top.get("immutable") is not None:
        raise Unsupported(f"ConfigMap {name}: immutable")
    data = top.get("data") or {}
    if data:
        out.open("data")
        for k, v in data.items():
            out.line(f"{q(str(k))} = {q(str(v) if not isinstance(v, str) else v)}")
        out.close()
    else:
        out.line("data {}")
    top.done()
    out.close()


def emit_secret(out: Out, doc: dict, ns: str, ctx: Ctx):
    top = F(doc, "Secret", ctx)
    top.get("apiVersion"), top.get("kind")
    meta = top.sub("metadata")
    name = meta.get("name")
    check_ns(meta, ns, f"Secret {name}")
    out.open(f"secret {q(name)}")
    if meta.present("labels"):
        emit_map_block(out, "labels", labels_map(meta.get("labels"), meta.path + ".labels"))
    if meta.present("annotations"):
        emit_map_block(out, "annotations", labels_map(meta.get("annotations"), meta.path))
    meta.done()
    t = top.get("type")
    if t is not None:
        out.line(f"type = {q(t)}")
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
    out.open("data")
    for k, v in values.items():
        out.line(f"{q(k)} = {q(v)}")
    out.close()
    top.done()
    out.close()


def emit_serviceaccount(out: Out, doc: dict, ns: str, ctx: Ctx):
    top = F(doc, "ServiceAccount", ctx)
    top.get("apiVersion"), top.get("kind")
    meta = top.sub("metadata")
    name = meta.get("name")
    check_ns(meta, ns, f"ServiceAccount {name}")
    body = Out()
    body.depth = out.depth + 1
    if meta.present("labels"):
        emit_map_block(body, "labels", labels_map(meta.get("labels"), meta.path + ".labels"))
    if meta.present("annotations"):
        emit_map_block(body, "annotations", labels_map(meta.get("annotations"), meta.path))
    meta.done()
    amt = top.get("automountServiceAccountToken")
    if amt is not None:
        body.line(f"automount_service_account_token = {scalar(amt)}")
    if top.present("imagePullSecrets") or top.present("secrets"):
        raise Unsupported(f"ServiceAccount {name}: imagePullSecrets/secrets")
    top.done()
    if body.lines:
        out.line(f"serviceaccount {q(name)} {{")
        out.lines.extend(body.lines)
        out.line("}")
    else:
        out.line(f"serviceaccount {q(name)} {{}}")


def check_ns(meta: F, ns: str, what: str):
    got = meta.get("namespace")
    if got is not None and got != ns:
        raise Unsupported(f"{what}: namespace {got!r} differs from --namespace {ns!r}")


# ---------------------------------------------------------------------------------------
# omissions

RBAC_REASON = ("RBAC of the observability stack; not an application component "
               "(the app language has no RBAC objects)")


def omit_reason(doc: dict, docs: list[dict]) -> str:
    kind = doc["kind"]
    if kind in ("ClusterRole", "Role"):
        rules = doc.get("rules") or []
        res = sorted({r for rule in rules for r in (rule.get("resources") or [])})
        return f"{RBAC_REASON}; grants access to {', '.join(res) or 'nothing'}"
    if kind in ("ClusterRoleBinding", "RoleBinding"):
        subj = ", ".join(f"{s.get('kind')} {s.get('name')}" for s in doc.get("subjects") or [])
        ref = doc.get("roleRef", {})
        return f"{RBAC_REASON}; binds {ref.get('kind')} {ref.get('name')} to {subj}"
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


KEEP = {"ServiceAccount": emit_serviceaccount, "Secret": emit_secret,
        "ConfigMap": emit_configmap, "Deployment": emit_workload,
        "StatefulSet": emit_workload, "Service": emit_service}
KIND_ORDER = ["ServiceAccount", "Secret", "ConfigMap", "Deployment", "StatefulSet", "Service"]
ALWAYS_OMIT = {"ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding", "PodDisruptionBudget"}


def generate(text: str, args) -> str:
    docs = [d for d in yaml.safe_load_all(text) if d]
    ctx = Ctx()
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

    body = Out()
    body.depth = 1
    if namespaces:
        nm = F(namespaces[0]["metadata"], "Namespace.metadata", ctx)
        nm.get("name")
        if nm.present("labels") or nm.present("annotations"):
            body.open(f"namespace {q(args.namespace)}")
            if nm.present("labels"):
                emit_map_block(body, "labels", labels_map(nm.get("labels"), nm.path))
            if nm.present("annotations"):
                emit_map_block(body, "annotations", labels_map(nm.get("annotations"), nm.path))
            body.close()
        else:
            body.line(f"namespace {q(args.namespace)}")
        nm.done()
    else:
        body.line(f"namespace {q(args.namespace)}")
    counts = collections.Counter()
    for kind in KIND_ORDER:
        group = sorted((d for d in kept if d["kind"] == kind), key=lambda d: d["metadata"]["name"])
        if not group:
            continue
        body.line()
        for d in group:
            KEEP[kind](body, d, args.namespace, ctx)
            counts[kind] += 1

    # edges
    workload_names = {d["metadata"]["name"] for d in kept if d["kind"] in WORKLOAD_WORD}
    derived, unresolved = ({}, []) if args.no_derived_edges else derive_edges(kept)
    hand = []
    for e in args.edge:
        parts = [p.strip() for p in e.split("->")]
        if len(parts) < 2 or not all(parts):
            raise Unsupported(f"--edge {e!r}: expected A->B")
        for a, b in zip(parts, parts[1:]):
            hand.append((a, b))
    all_edges = set(derived) | set(hand)
    for a, b in sorted(all_edges):
        for n in (a, b):
            if n not in workload_names:
                raise Unsupported(f"edge {a} -> {b}: {n} is not a workload of this app")
    if all_edges:
        body.line()
        for a, b in sorted(all_edges):
            body.line(f"{q(a)} -> {q(b)}")

    # header
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
        for a, b in sorted(all_edges):
            src = []
            if (a, b) in derived:
                src.append("; ".join(sorted(set(derived[(a, b)]))))
            if (a, b) in hand:
                src.append("hand-added (--edge)")
            h.append(f"#   {a} -> {b}: {'; '.join(src)}")
    if unresolved:
        h.append("# Host references that name no Service of this file (no edge):")
        for u in sorted(set(unresolved)):
            h.append(f"#   - {u}")

    lines = h + [""]
    lines.append(f"app {q(args.name)} {{")
    if args.description:
        lines.append(f"  description {q(args.description)}")
    if args.meta:
        entries = []
        for m in args.meta:
            k, sep, v = m.partition("=")
            if not sep:
                raise Unsupported(f"--meta {m!r}: expected KEY=VALUE")
            entries.append(f"{key(k)} = {q(v)}")
        lines.append("  metadata {")
        lines += [f"    {e}" for e in entries]
        lines.append("  }")
    lines += body.lines
    lines.append("}")
    return "\n".join(lines) + "\n"


def canonical(text: str) -> str:
    """The generated file in `itbench fmt`'s layout (comments kept), so the library stays formatted."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from itbench_dsl.diagnostics import Diagnostics, render_human
    from itbench_dsl.parser import parse_text
    from itbench_dsl.printer import print_document

    diags = Diagnostics()
    document = parse_text(text, "<generated>", diags)
    if document is None:
        raise Unsupported("the generated text does not parse:\n" + render_human(diags))
    return print_document(document, text)


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("input", help="rendered manifests (multi-document YAML)")
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
    ap.add_argument("--edge", action="append", default=[], metavar="A->B[->C]",
                    help="a hand-added dependency edge or chain between workloads (repeatable)")
    ap.add_argument("--no-derived-edges", action="store_true",
                    help="do not derive edges from env vars and args")
    args = ap.parse_args(argv)
    # the regeneration command recorded in the header, as given
    rec = list(argv)
    args.argv = rec
    with open(args.input, encoding="utf-8") as f:
        text = f.read()
    try:
        result = canonical(generate(text, args))
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
