"""`use app "x" { options { ... } }` (ITBench's install options) and FinOps controls (no fault, no optimum)."""

from __future__ import annotations

from pathlib import Path

import yaml

from support.compiling import compile_text

FALSE_ALARM = '''scenario "spend-false-alarm" {
  domain finops
  complexity low
  description "The application autoscales as configured; spend alerts fire; nothing needs changing."
  metadata {
    control = true
  }
  use app "opentelemetry-demo" {
    options {
      autoscaling {
        kubernetes {
          hpa = true
        }
      }
    }
  }
  expect {
    root_cause namespace "otel-demo"
    alert CPUSpend on namespace "otel-demo"
  }
  solution "No change" {
    step "Leave the application as it is"
  }
}
'''


def _compile(text: str):
    return compile_text(text, "s.itb")


def test_application_options_reach_itbench_scenario_yaml():
    result, diags = _compile(FALSE_ALARM)
    assert not diags.errors(), [d.message for d in diags.errors()]
    scenario = yaml.safe_load(result.files["itbench/scenario.yaml"])
    assert scenario["spec"]["applications"]["opentelemetryDemo"] == {
        "enabled": True, "options": {"autoscaling": {"kubernetes": {"hpa": True}}}}
    assert scenario["spec"]["faults"] == []


def test_a_faults_own_options_merge_with_the_scenarios():
    # misconfigured_hpa asks for `autoscaling.kubernetes.hpa` itself; the scenario adds load generation
    library = (Path(__file__).resolve().parents[2] / "scenarios" / "finops" / "otel-frontend-hpa-misconfigured.itb")
    text = library.read_text("utf-8").replace('use app "opentelemetry-demo"', 'use app "opentelemetry-demo" {\n'
                                              "    options {\n      loadGeneration {\n        browserTraffic = true\n"
                                              "      }\n    }\n  }", 1)
    result, diags = _compile(text)
    assert not diags.errors(), [d.message for d in diags.errors()]
    options = yaml.safe_load(result.files["itbench/scenario.yaml"])["spec"]["applications"]["opentelemetryDemo"]["options"]
    assert options == {"autoscaling": {"kubernetes": {"hpa": True}}, "loadGeneration": {"browserTraffic": True}}


def test_a_finops_control_needs_no_fault_and_no_optimum_but_others_do():
    _, diags = _compile(FALSE_ALARM)
    assert not diags.errors()
    _, diags = _compile(FALSE_ALARM.replace("    control = true\n", "    note = 1\n"))
    messages = sorted(d.message for d in diags.errors())
    assert any("needs at least one `fault`" in m for m in messages)
    assert any("needs an `optimal` value" in m for m in messages)


def test_use_app_takes_options_only():
    _, diags = _compile(FALSE_ALARM.replace("    options {", "    colour = \"red\"\n    options {"))
    assert [d.code for d in diags.errors()] and "colour" in diags.errors()[0].message
