"""A host service control's gap variants include a host where the service is not installed (Ansible's
service_facts lists no unit of it): a Rego policy reading a missing unit as compliant misses it
(ciso/rhel9.py `HostControl.variants`)."""

from __future__ import annotations

from itbench_dsl.ciso.rhel9 import CONTROLS


def test_a_service_controls_gap_variants_leave_the_unit_out():
    services = [c for c in CONTROLS if c.kind == "service"]
    assert services
    for control in services:
        unit = f"{control.key}.service"
        gaps = dict(control.variants(True))
        assert "not installed" in gaps and unit not in gaps["not installed"]["services"]
        assert all(unit in facts["services"] for _, facts in control.variants(False))
