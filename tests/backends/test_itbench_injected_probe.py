"""W3002 by the fault kinds' table (FaultKind.itbench_injects): misconfigured_readiness_probe's port and path,
which ITBench's scenario.yaml has no field for and its injection task writes as its own (GET /ready on port 40)."""

from __future__ import annotations

import re

from support.compiling import SCENARIOS
from test_cli import invoke


def test_a_readiness_probe_itbench_writes_otherwise_is_warned(tmp_path, reference):
    task = (reference / "itbench" / "roles" / "faults" / "tasks" /
            "inject_misconfigured_kubernetes_workload_container_readiness_probe.yaml").read_text(encoding="utf-8")
    path_value, port = re.search(r"path: (\S+)\s+port: (\d+)", task).groups()
    assert (path_value, port) == ("/ready", "40")
    source = (SCENARIOS / "sre" / "otel-frontend-misconfigured-readiness-probe.itb").read_text(encoding="utf-8")
    same = invoke("compile", str(SCENARIOS / "sre" / "otel-frontend-misconfigured-readiness-probe.itb"), "--target",
                  "itbench", "-o", str(tmp_path / "same"))
    assert same.exit_code == 0 and "W3002" not in same.stderr, same.stderr
    changed = source.replace('    container = "frontend"\n', '    container = "frontend"\n    port = 41\n')
    path = tmp_path / "changed.itb"
    path.write_text(changed, encoding="utf-8")
    result = invoke("compile", str(path), "--target", "itbench", "-o", str(tmp_path / "out"))
    assert result.exit_code == 0, result.stderr
    assert result.stderr.count("warning[W3002]") == 1 and "`port`" in result.stderr and "applies `40`" in result.stderr


def test_a_target_port_itbench_writes_otherwise_is_warned(tmp_path, reference):
    task = (reference / "itbench" / "roles" / "faults" / "tasks" /
            "inject_modified_target_port_kubernetes_service.yaml").read_text(encoding="utf-8")
    assert re.search(r"targetPort: 9999\b", task)
    moved = invoke("compile", str(SCENARIOS / "sre" / "otel-cart-service-target-port.itb"), "--target", "itbench",
                   "-o", str(tmp_path / "moved"))
    assert moved.exit_code == 0 and moved.stderr.count("warning[W3002]") == 1 and "applies `9999`" in moved.stderr
    same = invoke("compile", str(SCENARIOS / "sre" / "otel-ad-modified-target-port.itb"), "--target", "itbench",
                  "-o", str(tmp_path / "same"))
    assert same.exit_code == 0 and "W3002" not in same.stderr, same.stderr
