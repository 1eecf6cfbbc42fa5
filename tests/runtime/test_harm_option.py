"""A fault whose harm is an option of its container's program (`FaultKind.harm_option`, docs/evaluator.md
`fields.REF`): the valkey password is judged by whether valkey still asks one, its `--requirepass` expanded from
the container's environment as the kubelet expands `$(NAME)`, not by its arguments and variable field by field.
The states are the compiler's derived ones edited by hand as an agent would."""

from __future__ import annotations

import base64
import copy
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

from test_evaluator import derived, failed, mitigate, obj  # noqa: E402

from itbench_dsl.runtime import evaluator as rt  # noqa: E402

VALKEY = "otel-valkey-cart-changed-password"  # valkey-cart: args --requirepass $(VALKEY_PASSWORD), from a Secret


def _container(state):
    return next(c for c in obj(state, "Deployment", "valkey-cart")["spec"]["template"]["spec"]["containers"]
                if c["name"] == "valkey-cart")


def _neutralised(args="keep", env="keep", password="keep"):
    """The solved state (statuses, alerts quiet) with valkey-cart's container and the fault's Secret as the fault
    left them, then `args`, `env` (the VALKEY_PASSWORD variable) and the Secret's `password` as given."""
    faulty, state = derived(VALKEY, "faulty"), derived(VALKEY, "solved")
    container = _container(state)
    container.clear()
    container.update(copy.deepcopy(_container(faulty)))
    secret = copy.deepcopy(obj(faulty, "Secret", "valkey-credentials"))
    state["resources"]["items"].append(secret)
    if args != "keep":
        container.pop("args", None)
        if args is not None:
            container["args"] = args
    if env != "keep":
        container["env"] = [e for e in container.get("env") or [] if e["name"] != "VALKEY_PASSWORD"]
    if password != "keep":
        secret.pop("stringData", None)
        secret["data"] = {"valkey-password": base64.b64encode(password.encode()).decode()}
    return state


@pytest.mark.parametrize("args, env, password, passed", [
    ("keep", "keep", "", True),  # the Secret's value emptied: `--requirepass ""` asks no password
    (None, "keep", "keep", True),  # the arguments removed: nothing reads the variable left behind
    (["--requirepass", ""], None, "keep", True),
    ("keep", "keep", "keep", False),  # the fault itself
    ("keep", "keep", "another", False),  # another password the clients do not know
    ("keep", None, "keep", False),  # the variable removed: `$(VALKEY_PASSWORD)` stays a literal password
    (["--requirepass=secret"], None, "keep", False),
    (["sleep", "infinity"], "keep", "keep", False),  # no longer valkey: health.program
])
def test_the_valkey_password_is_judged_by_whether_valkey_still_asks_one(args, env, password, passed):
    verdict = mitigate(VALKEY, _neutralised(args, env, password))
    assert verdict["passed"] is passed, [(c["id"], c["detail"]) for c in verdict["checks"] if not c["passed"]]
    if args == ["sleep", "infinity"]:
        assert "health.program.otel-demo/Deployment/valkey-cart" in failed(verdict)


def test_an_option_is_read_after_the_kubelet_expands_its_arguments():
    container = {"args": ["--port", "6379", "--requirepass", "$(P)"]}
    assert rt.option_value(container, {"P": "x"}, "--requirepass") == "x"
    assert rt.option_value(container, {"P": ""}, "--requirepass") == ""
    assert rt.option_value(container, {}, "--requirepass") == "$(P)"
    assert rt.option_value({"command": ["valkey-server", "--requirepass=y"]}, {}, "--requirepass") == "y"
    assert rt.option_value({"args": ["--port", "6379"]}, {}, "--requirepass") is None
