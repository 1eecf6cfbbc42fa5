"""E4010: a name the scenario gives its own objects exempts no word of the fault kind's. Only the names a library
application had before the scenario (and kinds, images) do; and a name the scenario gives (a namespace, an
object of its topology, its application) is read for words that say what is wrong or name the harness, as a
value is. A word of the scenario's name stays the application's where the application uses it (`shop-cart-`)."""

from __future__ import annotations

import pytest
from test_agent_view import SHOP, _findings

CRASHING = """scenario "web-command" {{
  domain sre
  complexity low
  description "The web deployment's container runs a command its image cannot execute."
  topology "{topology}" {{
    namespace "{namespace}"
    deployment "{deployment}" {{
      labels {{ app = "nginx" }}
      container "nginx" {{ image = "nginx" }}
    }}
  }}
  fault invalid_command on deployment "{deployment}" {{
    command = ["/bin/sh", "-c", "python3 -c 'print(1)'"]
  }}
  expect {{
    alert KubePodCrashLooping on pod "{deployment}-*"
    root_cause deployment "{deployment}"
    mitigated when {{ deployment "{deployment}" ready }}
  }}
}}
"""


def _whys(**names) -> list[str]:
    text = CRASHING.format(**({"topology": "web", "namespace": "web", "deployment": "app"} | names))
    return [f"{f.kind} {f.field} {f.why}" for f in _findings(text)]


def test_the_control_is_clean():
    assert _whys() == []


@pytest.mark.parametrize("names, said", [
    ({"namespace": "invalid-command"}, "`invalid`"),
    ({"topology": "invalid-command"}, "`invalid`"),
    ({"deployment": "invalid-command"}, "`invalid`"),
    ({"namespace": "broken-app"}, "`broken`"),
    ({"namespace": "itbench-run"}, "`itbench`"),
    ({"namespace": "chaos-lab"}, "`chaos`"),
    ({"deployment": "faulty"}, "`faulty`"),
])
def test_a_name_the_scenario_gives_after_the_fault_is_found(names, said):
    found = _whys(**names)
    assert found and any(said in why for why in found), found


def test_an_application_word_in_the_scenarios_name_is_still_the_applications():
    assert _findings(SHOP.format(name="shop-cart-nonexistent-image", uses="",
                                 faults='fault nonexistent_image on deployment "cart"')) == []
