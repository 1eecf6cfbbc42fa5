"""noise: benign red herrings added to the topology, which the evaluator never credits.

Each variant adds one to three objects (seeded choices) named after a real component, so that they
look related to it: a ConfigMap of debug overrides, an old token Secret, a ServiceAccount, or an
idle pause-container Deployment. They change no existing object, select no existing pod and
are not in the ground truth: an agent that names one as a root cause gets no credit for it.
Nothing refers to them, on purpose: W2002 (an unused topology object) would report each, so every
variant allows it, `metadata { lint_allow = ["W2002"] }` (docs/generators.md), and passes `itbench
check --strict`. `-n` sets the number of variants per input (3 by default); every draw is written or
a skip that says why (a set drawn before, no name left free). CISO scenarios are left alone: an
extra object could itself break the control under test. FinOps scenarios get no red herring that runs pods:
an idle pause Deployment with requests is itself waste, which an agent would be right to remove and name.
"""

from __future__ import annotations

import dataclasses
import math

from itbench_dsl import ast
from itbench_dsl.variants import Context, Generator, Skip, Variant, allow_lint

DEFAULT_VARIANTS = 3


def _attr(key: str, value) -> ast.Attr:
    return ast.Attr(key, (), value)


def _data(pairs: dict[str, str]) -> ast.Block:
    return ast.Block("data", (), tuple(_attr(k, ast.Str(v)) for k, v in pairs.items()))


def _configmap(component: str, rng) -> tuple[str, str, list]:
    level = rng.choice(["debug", "trace", "info"])
    return "configmap", f"{component}-overrides", [_data({"log-level": level, "cache.enabled": rng.choice(["true", "false"])})]


def _secret(component: str, rng) -> tuple[str, str, list]:
    token = "".join(rng.choice("0123456789abcdef") for _ in range(32))
    return "secret", f"{component}-legacy-token", [_data({"token": token})]


def _serviceaccount(component: str, rng) -> tuple[str, str, list]:
    return "serviceaccount", f"{component}-debug", []


def _deployment(component: str, rng) -> tuple[str, str, list]:
    return "deployment", f"canary-{component}", [  # not `{component}-...`: pod patterns `{component}-*`
        _attr("image", ast.Str("registry.k8s.io/pause:3.10")),
        _attr("replicas", ast.Int(1)),
        ast.Block("resources", (), (ast.Block("requests", (), (_attr("cpu", ast.Quantity("10m")),
                                                             _attr("memory", ast.Quantity("16Mi")))),
                                    ast.Block("limits", (), (_attr("memory", ast.Quantity("32Mi")),)))),
    ]


MAKERS = (_configmap, _secret, _serviceaccount, _deployment)


def _costs(maker) -> bool:
    """Whether a maker's red herring runs pods (and so costs CPU and memory)."""
    return maker(" ", _Fixed())[0] in ("deployment", "statefulset")


class _Fixed:
    """A stand-in random generator, to learn a maker's kind and name without drawing."""

    def choice(self, items):
        return items[0]


class NoiseGenerator(Generator):
    name = "noise"
    summary = "benign red-herring objects the evaluator does not credit"

    def generate(self, ctx: Context):
        if ctx.scenario.domain == "ciso":
            yield Skip("noise is not added to CISO scenarios: an extra object could break the control under test")
            return
        topology = ctx.scenario.topology
        workloads = sorted((w.namespace, w.name) for w in topology.workloads)
        if not workloads:
            yield Skip("the topology has no workload to name red herrings after")
            return
        # in FinOps the objective is spend: an idle pause Deployment with resource requests is real waste, which
        # an agent would be right to remove and to name, and which raises the namespace's cost the alerts and the
        # optimum read; a FinOps red herring costs nothing (a ConfigMap, a Secret, a ServiceAccount)
        makers = tuple(m for m in MAKERS if ctx.scenario.domain != "finops" or not _costs(m))
        several = len(topology.namespaces) > 1
        taken = {(kind, n) for kind, pool in (("configmap", topology.configmaps), ("secret", topology.secrets),
                                             ("serviceaccount", topology.service_accounts),
                                             ("deployment", topology.workloads)) for n in (o.name for o in pool)}
        taken |= {("service", s.name) for s in topology.services}
        # the distinct sets of red herrings (kind and name) bound the variants: stop when all are drawn
        singles = len({(m(c, _Fixed())[0], m(c, _Fixed())[1]) for _, c in workloads for m in makers} - taken)
        space = sum(math.comb(singles, k) for k in (1, 2, 3))
        drawn: dict[frozenset, int] = {}  # a set of red herrings -> the draw that made it
        misses = 0
        draws = ctx.n if ctx.n is not None else DEFAULT_VARIANTS
        for k in range(1, draws + 1):
            if len(drawn) >= space or misses > 20 * space + 100:
                which = f"draw {k}" if k == draws else f"draws {k}-{draws}"
                yield Skip(f"{which} not made: the red herrings are exhausted ({len(drawn)} distinct sets drawn)")
                return
            count = ctx.rng.randint(1, 3)
            objects, notes = [], []
            for _ in range(count):
                namespace, component = ctx.rng.choice(workloads)
                kind, name, entries = ctx.rng.choice(makers)(component, ctx.rng)
                if (kind, name) in taken or any(n == name for _, n in notes) or len(name) > 63:
                    continue
                if several:
                    entries = [_attr("namespace", ast.Str(namespace))] + entries
                objects.append(ast.Object(kind, name, tuple(entries)))
                notes.append((kind, name))
            key = frozenset(notes)
            if not objects or key in drawn:  # a set drawn before: no new variant, and the draw says so
                misses += 1
                yield Skip(f"draw {k} repeats draw {drawn[key]}'s red herrings" if objects else
                           f"draw {k} drew only names the topology already has")
                continue
            drawn[key] = k
            document = dataclasses.replace(ctx.document, statements=ctx.document.statements
                                           + (ast.Topology(tuple(objects)),))
            document = allow_lint(document, "W2002")  # red herrings are unused on purpose
            yield Variant(document, note="red herrings: " + ", ".join(f"{k} {n}" for k, n in notes))
