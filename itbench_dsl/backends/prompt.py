"""The agent's task, rendered from Jinja2 templates shipped in the package.

Templates render in a sandbox with StrictUndefined: a value the scenario does not provide is
an error (E4001), never an empty string. The context holds only what the agent may know:
the application, its namespaces and the output contract; never the fault or the root cause.
"""

from __future__ import annotations

import functools
from importlib import resources as _resources

from jinja2 import FileSystemLoader, StrictUndefined, TemplateError
from jinja2.sandbox import SandboxedEnvironment

from .. import ir
from ..faults import itbench_entry


@functools.lru_cache(maxsize=1)
def _environment() -> SandboxedEnvironment:
    folder = _resources.files("itbench_dsl").joinpath("templates")
    return SandboxedEnvironment(loader=FileSystemLoader(str(folder)), undefined=StrictUndefined, autoescape=False,
                                keep_trailing_newline=True, trim_blocks=True, lstrip_blocks=True)


def context(scenario: ir.Scenario) -> dict:
    topology = scenario.topology
    app = topology.application
    app_description = None
    if app is not None:
        try:
            app_description = itbench_entry("applications", app).get("description")
        except FileNotFoundError:
            app_description = None
    compliance = scenario.compliance
    return {
        "scenario": {"name": scenario.name, "domain": scenario.domain},
        "application": {"name": app or "custom", "description": app_description},
        "namespaces": [n.name for n in topology.namespaces],
        "services": sorted({s.name for s in topology.services}),
        "agent": {"service_account": scenario.agent.service_account, "read": scenario.agent.read,
                  "write": scenario.agent.write},
        "control": None if compliance is None else {"id": compliance.control, "goal": compliance.goal,
                                                     "benchmark": compliance.benchmark, "task": compliance.task},
        "kubeconfig": "/etc/itbench/kubeconfig.yaml",
        "workspace": "/tmp/agent",
    }


def render(scenario: ir.Scenario) -> str:
    """The prompt text; raises TemplateError, which the compiler reports as E4001."""
    template = _environment().get_template(f"prompt/{scenario.domain}.md.j2")
    return template.render(**context(scenario))


__all__ = ["render", "context", "TemplateError"]
