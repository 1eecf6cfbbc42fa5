"""Components the cluster provides, for injections that act on the cluster itself.

An ITBench Chaos Mesh experiment may select pods outside the application, such as etcd's in
kube-system. The port must declare what it targets, in a namespace marked `provided`: the
declaration is copied from the catalogue of a kind cluster's kube-system
(`itbench_dsl/stdlib/cluster/kind.itb`), choosing the component whose pod labels the
experiment's selector matches.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from importlib import resources

from .. import ast, ir
from .. import builders as b
from ..diagnostics import Diagnostics
from ..reader import Context
from ..topology import TopologyBuild, TopologyBuilder

CATALOGUE = "stdlib/cluster/kind.itb"
_LANGUAGE_KIND = {"Pod": "static_pod", "Deployment": "deployment", "StatefulSet": "statefulset"}


@dataclass(frozen=True)
class Component:
    kind: str  # the language's kind: static_pod, deployment
    name: str
    namespace: str
    namespace_declaration: ast.Object  # the namespace's declaration, for a `topology` block
    declaration: ast.Object  # the component's declaration, saying which namespace it is in


@functools.lru_cache(maxsize=None)
def _catalogue() -> tuple[list[ast.Object], TopologyBuild]:
    from ..parser import parse_bytes

    data = resources.files("itbench_dsl").joinpath(CATALOGUE).read_bytes()
    diags = Diagnostics()
    document = parse_bytes(data, f"<stdlib>/{CATALOGUE}", diags)
    build = TopologyBuild()
    if document is None:
        return [], build
    TopologyBuilder(Context(diags, f"<stdlib>/{CATALOGUE}"), build).add_statements(document.statements)
    objects = [s for s in document.statements if isinstance(s, ast.Object)]
    return objects, build


def provided_component(namespace: str, labels: dict) -> Component | None:
    """The cluster component in `namespace` whose pods carry `labels`, with the statements that declare it."""
    objects, build = _catalogue()
    if not labels:
        return None
    matching = [w for w in build.workloads if w.namespace == namespace
                and all(w.labels.get(str(k)) == str(v) for k, v in labels.items())]
    if len(matching) != 1:
        return None
    workload = matching[0]
    kind = _LANGUAGE_KIND[workload.kind]
    declared = {(o.kind, o.name): o for o in objects}
    space = declared.get(("namespace", namespace))
    obj = declared.get((kind, workload.name))
    if space is None or obj is None:
        return None
    # the scenario holds the application's namespace too: the component says which one it is in
    declaration = b.obj(obj.kind, obj.name, (b.attr("namespace", namespace), *(obj.entries or ())))
    return Component(kind, workload.name, namespace, space, declaration)


def catalogue_workloads() -> list[ir.Workload]:
    return list(_catalogue()[1].workloads)
