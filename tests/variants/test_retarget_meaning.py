"""A retargeted variant means on its new target what its parent meant on the old one (docs/generators.md,
retarget): a fault whose arguments belong to the old target's program is not moved to another program."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from itbench_dsl import variants as gen
from itbench_dsl.diagnostics import Diagnostics
from itbench_dsl.faults.base import library_kind
from itbench_dsl.faults.base import program_args

REPO = Path(__file__).resolve().parents[2]


def run(path: str, text: str | None = None) -> gen.RunResult:
    data = text.encode() if text is not None else (REPO / path).read_bytes()
    loaded = gen.load_input(data, path, Diagnostics())
    assert loaded is not None, path
    return gen.run([loaded], [("retarget", gen.load_generator("retarget"))], 0, None)


def test_program_arguments_are_declared_by_the_kinds():
    assert {"class", "method", "rule_data"} <= program_args(library_kind("jvm_chaos"))
    assert "path" in program_args(library_kind("http_chaos"))
    assert not program_args(library_kind("pod_chaos"))


@pytest.mark.parametrize("path", ["scenarios/sre/otel-ad-jvm-latency-getads.itb",
                                  "scenarios/sre/otel-ad-jvm-cpu-stress.itb",
                                  "scenarios/sre/otel-quote-http-response-replace-500.itb"])
def test_a_program_tied_fault_is_not_moved_to_another_program(path):
    result = run(path)
    assert not result.variants, [v.note for v in result.variants]
    # each candidate is refused for its program, or first for the name of what the fault creates (faults/base)
    assert result.skips and all("program" in s.reason or "would name the new target" in s.reason
                                for s in result.skips if "->" in s.reason)


def test_a_program_tied_fault_moves_to_a_workload_running_the_same_image():
    """A workload that runs the old target's image has its Java class: the fault moves there, and only there."""
    path = "scenarios/sre/otel-ad-jvm-latency-getads.itb"
    loaded = gen.load_input((REPO / path).read_bytes(), path, Diagnostics())
    workloads = {w.name: w for w in loaded.scenario.topology.workloads}
    workloads["currency"].containers[0].image = workloads["ad"].containers[0].image
    result = gen.run([loaded], [("retarget", gen.load_generator("retarget"))], 0, None)
    moved = {v.note.split("->")[1].split()[0] for v in result.variants}
    refused = {s.reason.split("->")[1].split(":")[0].strip() for s in result.skips if "program" in s.reason}
    assert "currency" not in refused and moved == {"currency"}
    assert {"frontend", "valkey-cart", "quote"} <= refused


def test_a_fault_without_program_arguments_still_moves():
    result = run("scenarios/sre/otel-ad-jvm-latency-getads.itb".replace("ad-jvm-latency-getads", "currency-pod-failure"))
    assert not any("program" in s.reason for s in result.skips)


# ---- expected alerts follow the call graph around the new target ------------------------------------------

def _graph(topology):
    up, down = {}, {}
    for a, b in topology.edges:
        down.setdefault(a, set()).add(b)
        up.setdefault(b, set()).add(a)
    return up, down


def _reach(graph, start, avoid=None):
    seen, todo = set(), [c for c in start if c != avoid]
    while todo:
        for d in graph.get(todo.pop(), ()):
            if d not in seen and d != avoid:
                seen.add(d)
                todo.append(d)
    return seen


def alert_findings(loaded: gen.Parent, variant) -> list[str]:
    """Request alerts of a retargeted variant that the call graph around its new target cannot raise."""
    from itbench_dsl import ast
    from itbench_dsl.alerts import TRAFFIC, measures_service, SCOPES
    from itbench_dsl.faults.alerting import Places

    topology = loaded.scenario.topology
    places = Places(loaded.scenario)
    if places.wide:
        return []
    up, down = _graph(topology)
    statements = gen.expect_statements(variant.document)
    groups = {s.id: s.target for s in statements if isinstance(s, ast.GroundGroup)}
    fault = gen.faults_of(variant.document)[0]
    new = fault.target
    b = places.of(ir_ref(new))
    out = []
    for alert in (s for s in statements if isinstance(s, ast.Alert)):
        target = groups.get(alert.target.name) if alert.target.kind == "group" else alert.target
        if SCOPES.get(alert.name) != TRAFFIC or target is None or target.kind not in ("service", "deployment",
                                                                                       "statefulset", "pod"):
            continue
        c = places.of(ir_ref(target))
        where = f"{variant.note}: {alert.name} on {c}"
        if not measures_service(alert.name, topology.application, c):
            out.append(f"{where}: not measured there")
        elif alert.name in ("HighRequestErrorRate", "HighRequestLatency"):
            if c == b and new.kind == "service":
                out.append(f"{where}: the Service's own pods see no failing request")
            elif c != b and c not in _reach(up, [b]):
                out.append(f"{where}: does not call the target")
        elif alert.name == "NoRequestsReceived" and c != b:
            entries = [w for w in places.selecting.keys() | set(up) | set(down)
                       if w != b and _reach(up, [w]) <= _reach(down, [w]) | {w}]
            if c not in _reach(down, [b]) or c in _reach(down, entries, avoid=b):
                out.append(f"{where}: has callers that do not go through the target")
    return out


def ir_ref(ref):
    from itbench_dsl import ir
    kinds = {"service": "Service", "deployment": "Deployment", "statefulset": "StatefulSet", "pod": "Pod"}
    name = ref.name.split("/")[-1]
    if ref.kind == "pod":
        name = name.rstrip("*").rstrip("-")
        return ir.ObjectRef("apps/v1", "Deployment", None, name)
    return ir.ObjectRef("v1", kinds[ref.kind], None, name)


@pytest.mark.parametrize("path", ["scenarios/sre/otel-cart-deleted-service.itb",
                                  "scenarios/sre/otel-cart-service-target-port.itb"])
def test_request_alerts_of_a_service_fault_are_its_callers(path):
    """Requests to a broken Service fail before its pods: callers report them (never the Service itself,
    never a client the rules leave out such as the load generator); a deleted Service carries none."""
    loaded = gen.load_input((REPO / path).read_bytes(), path, Diagnostics())
    result = gen.run([loaded], [("retarget", gen.load_generator("retarget"))], 0, None)
    assert result.variants
    findings = [f for v in result.variants for f in alert_findings(loaded, v)]
    assert not findings, findings
    notes = {v.note.split("-> ")[1] for v in result.variants}
    assert "frontend-proxy" not in notes  # its only caller is the load generator, which no rule measures


def test_no_requests_received_only_where_every_path_goes_through_the_target():
    from itbench_dsl.variants.builtin.retarget import _closure
    up = {"b": ["a"], "c": ["b"], "d": ["b", "x"]}
    down = {"a": ["b"], "b": ["c", "d"], "x": ["d"]}
    assert _closure(down, "a", "x", avoid="b") == {"d"}  # d has a caller (x) that bypasses b; c does not
    assert _closure(up, "c") == {"a", "b"}


LIBRARY = sorted(str(p.relative_to(REPO)) for p in (REPO / "scenarios" / "sre").glob("*.itb"))


@pytest.mark.library
@pytest.mark.parametrize("path", LIBRARY[::4])
def test_every_retarget_variant_means_its_parent_around_the_new_target(path):
    """Over a sample of the library: a variant's fault carries no argument of the old target's program unless
    the new target runs that program, and its request alerts are ones the call graph around the new target
    raises."""
    from itbench_dsl import ast
    from itbench_dsl.variants.builtin.retarget import _images

    loaded = gen.load_input((REPO / path).read_bytes(), path, Diagnostics())
    if loaded is None:
        pytest.skip("not an input of the generators")
    result = gen.run([loaded], [("retarget", gen.load_generator("retarget"))], 0, 3)
    injections = loaded.scenario.injections()
    findings = []
    for v in result.variants:
        findings += alert_findings(loaded, v)
        kind = injections[0].kind
        fault = gen.faults_of(v.document)[0]
        tied = program_args(kind) & {e.key for e in fault.entries or () if isinstance(e, ast.Attr)}
        if tied:
            new = next(w for w in loaded.scenario.topology.workloads if w.name == fault.target.name.split("/")[-1])
            old = _images(loaded.scenario.topology, injections[0].target, None)
            if not old & {c.image for c in new.containers} and not old & _images(
                    loaded.scenario.topology, dataclasses_ref(new), None):
                findings.append(f"{v.note}: {sorted(tied)} moved to another program")
    assert not findings, findings


def dataclasses_ref(workload):
    from itbench_dsl import ir
    return ir.ObjectRef("apps/v1", workload.kind, workload.namespace, workload.name)


def test_prose_quotes_the_new_targets_healthy_value():
    """`correct port 8080` (the old target's healthy targetPort) becomes the new target's own port, or the
    candidate is skipped when the new target has no such value."""
    import re

    path = "scenarios/sre/otel-ad-modified-target-port.itb"
    loaded = gen.load_input((REPO / path).read_bytes(), path, Diagnostics())
    result = gen.run([loaded], [("retarget", gen.load_generator("retarget"))], 0, None)
    services = {s.name: s for s in loaded.scenario.topology.services}
    seen = set()
    for v in result.variants:
        new = gen.faults_of(v.document)[0].target.name
        ports = {str(p.target_port if p.target_port is not None else p.port) for p in services[new].ports}
        quoted = set(re.findall(r"correct port (\d+)", gen.variant_text(v.document)))
        assert quoted and quoted <= ports, (new, quoted, ports)
        seen |= quoted
    assert seen - {"8080"}, "no variant whose target's port differs"
    assert any("healthy" in s.reason for s in result.skips)


def test_names_and_group_ids_are_derived_anew():
    from itbench_dsl import ast
    from itbench_dsl.variants.builtin.retarget import _fresh_group_ids, _short

    long = "otel-" + "-".join(["frontend-proxy"] * 5)
    short = _short(long, "-retarget")
    assert len(short) <= gen.NAME_LIMIT and short.endswith("-retarget")
    head = short[: -len("-retarget")].rsplit("-", 1)[0]
    assert long.startswith(head + "-") and len(short[: -len("-retarget")].rsplit("-", 1)[1]) == 6  # whole words + hash
    assert _short("otel-cart-pod-kill", "-retarget") == "otel-cart-pod-kill-retarget"
    group = ast.GroundGroup("tamper-body-otel-demo-emailservice-1", ast.Ref("service", "cart"), None)
    alert = ast.Alert("HighRequestErrorRate", ast.Ref("group", "tamper-body-otel-demo-emailservice-1"), None)
    out = _fresh_group_ids([group, alert])
    assert out[0].id == "cart-service-1" and out[1].target.name == "cart-service-1"


def test_a_variant_describes_its_new_target_neutrally():
    path = "scenarios/sre/otel-ad-modified-target-port.itb"
    loaded = gen.load_input((REPO / path).read_bytes(), path, Diagnostics())
    result = gen.run([loaded], [("retarget", gen.load_generator("retarget"))], 0, 2)
    from itbench_dsl import ast
    for v in result.variants:
        new = gen.faults_of(v.document)[0].target.name
        text = next(s.text for s in v.document.statements if isinstance(s, ast.Description))
        assert f"`{new}`" in text and "ad" not in text.split()


def test_one_variant_per_workload_and_fault_kind():
    """Another container of one deployment is the same root cause with the same fix: one variant only."""
    path = "scenarios/finops/otel-ad-missing-memory-limit.itb"
    result = run(path)
    targets = [v.note.split("-> ")[1].split(" (")[0] for v in result.variants]
    assert targets and len(targets) == len(set(targets)), targets


def test_propagation_prose_of_the_old_target_is_said_anew():
    """The parent's `condition`/`effect` state what the old target's failure does (`Checkout cannot read the cart`,
    `Orders fail`); renamed word for word they are untrue of the new target (email: orders are still placed).
    Each moved edge gets the compiler's neutral prose; a chain the move leaves as it was keeps its own."""
    from itbench_dsl import ast
    from itbench_dsl.checker import check
    from itbench_dsl.variants.builtin.retarget import _prose_said_anew

    path = "scenarios/sre/otel-cart-service-target-port.itb"
    result = run(path)
    assert result.variants
    for v in result.variants:
        chains = [s for s in gen.expect_statements(v.document) if isinstance(s, ast.Propagation)]
        assert chains and not any(isinstance(e, ast.Attr) and e.key in ("condition", "effect")
                                  for s in chains for e in s.entries or ()), v.note
        scenario = check(v.document, path, Diagnostics()).scenario
        for edge in scenario.propagations:
            assert edge.condition == f"{edge.source.kind} {edge.source.name} is degraded"
            assert edge.effect == f"{edge.target.kind} {edge.target.name} is affected"
    kept = ast.Propagation((ast.Ref("service", "a"), ast.Ref("service", "b")),
                           (ast.Attr("condition", (), ast.Str("b calls a")), ast.Attr("indirect", (), ast.Symbol("true"))))
    assert _prose_said_anew(kept, kept) is kept
    moved = _prose_said_anew(kept, dataclasses.replace(kept, chain=(ast.Ref("service", "c"), kept.chain[1])))
    assert [e.key for e in moved.entries] == ["indirect"]


def test_a_moved_chain_keeps_only_the_edges_its_new_root_cause_reaches():
    """The move cuts the edges from the old target that have no counterpart (postgresql -> checkout for a crash-
    looping grafana); the edges downstream of the cut (checkout -> payment) are then reached from no root cause,
    and the evaluator would grade them as the whole chain: they go too, with the groups only they named, and a
    candidate left with no edge is skipped. Each variant's chain starts at its root cause."""
    from itbench_dsl import ast
    from itbench_dsl.backends import itbench as itbench_backend
    from itbench_dsl.checker import check

    path = "scenarios/sre/otel-postgresql-insufficient-resources.itb"
    result = run(path)
    assert result.variants
    names = [v.document.name for v in result.variants]
    assert not any("grafana" in n or "valkey-cart" in n for n in names), names  # nothing of the chain is theirs
    for v in result.variants:
        scenario = check(v.document, path, Diagnostics()).scenario

        def node(ref):
            return itbench_backend._component(ref, scenario) or (ref.kind, ref.name)

        seen = {node(r) for r in scenario.root_causes}
        edges = [(node(e.source), node(e.target)) for e in scenario.propagations]
        assert edges, v.note
        grew = True
        while grew:
            grew = False
            for a, b in edges:
                if a in seen and b not in seen:
                    seen.add(b)
                    grew = True
        assert all(a in seen for a, _ in edges), (v.note, [e for e in edges if e[0] not in seen])
        statements = gen.expect_statements(v.document)
        named = {r.name for s in statements if not isinstance(s, ast.GroundGroup) for r in gen.refs(s)
                 if r.kind == "group"}
        assert {s.id for s in statements if isinstance(s, ast.GroundGroup)} <= named, v.note  # none left over
