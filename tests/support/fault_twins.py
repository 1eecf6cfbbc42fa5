"""The five workload faults of the standard library (`stdlib/faults/workload.itb`) as they were first written,
as Python `FaultKind`s. The package keeps one definition of each, the declared one; these stay here so that
tests/faults/test_fault_kinds.py can show the two definitions give the same bundles, byte for byte."""

from __future__ import annotations

from itbench_dsl import ir
from itbench_dsl.diagnostics import did_you_mean
from itbench_dsl.faults.base import (
    Acceptance,
    Arg,
    Checked,
    FaultInput,
    FaultKind,
    container_named,
    kobj,
    original,
    patched,
    pick_container,
)


def _check_nonexistent_image(f: FaultInput) -> Checked | None:
    container = pick_container(f)
    image = f.body.attr("image", "str")
    if container is None:
        return None
    if image is None:
        repository = container.image.rsplit(":", 1)[0] if ":" in container.image.rsplit("/", 1)[-1] else container.image
        image = f"{repository}:7f3a9c1e"
    if image == container.image:
        f.error("E2027", "the fault's image is the container's current image: the fault would change nothing",
                f.body.attr_span("image"), "same image")
        return None
    return Checked(
        {"container": container.name, "image": image, "original_image": container.image},
        {"container": {"name": container.name}, "kubernetesObject": kobj(f.target)},
        [],
    )


def _inject_image(injection, topology):
    return patched(topology, injection, lambda w, a: setattr(container_named(w, a["container"]), "image", a["image"]))


def _check_modified_env(f: FaultInput) -> Checked | None:
    container = pick_container(f)
    name = f.body.attr("name", "str", required=True)
    value = f.body.attr("value", "str", required=True)
    if container is None or name is None or value is None:
        return None
    current = {e.name: e for e in container.env}
    if name not in current:
        hint = did_you_mean(name, current)
        f.error("E2021", f"container `{container.name}` has no environment variable `{name}` to modify",
                f.body.attr_span("name"), "not set in the container",
                help=f"did you mean `{hint}`?" if hint else "the fault modifies an existing variable; "
                "to add one, change the topology")
        return None
    if current[name].value == value:
        f.error("E2027", f"`{name}` is already `{value}`: the fault would change nothing", f.body.attr_span("value"),
                "same value")
        return None
    return Checked(
        {"container": container.name, "name": name, "value": value, "original_value": current[name].value},
        {"container": {"env": {"name": name, "value": value}, "name": container.name}, "kubernetesObject": kobj(f.target)},
        [],
    )


def _inject_env(injection, topology):
    def change(workload, args):
        for env in container_named(workload, args["container"]).env:
            if env.name == args["name"]:
                env.value, env.value_from = args["value"], None

    return patched(topology, injection, change)


def _check_scaled_to_zero(f: FaultInput) -> Checked | None:
    workload: ir.Workload = f.obj
    if workload.replicas == 0:
        f.error("E2027", f"{workload.kind.lower()} `{workload.name}` already has 0 replicas: the fault would change "
                "nothing", f.fault.target.span, "already at zero")
        return None
    return Checked({"original_replicas": workload.replicas}, {"kubernetesObject": kobj(f.target)}, [])


def _inject_zero(injection, topology):
    return patched(topology, injection, lambda w, a: setattr(w, "replicas", 0))


def _check_invalid_command(f: FaultInput) -> Checked | None:
    container = pick_container(f)
    command = f.body.attr("command", "str_list", default=["/opt/service/bin/serve"])
    if container is None or command is None:
        return None
    if not command:
        f.error("E2010", "`command` needs at least one item: an empty command runs the image's entrypoint",
                f.body.attr_span("command"), "empty command", help='write `command = ["/opt/service/bin/serve"]`')
        return None
    if command == container.command:
        f.error("E2027", f"container `{container.name}` already runs this command: the fault would change nothing",
                f.body.attr_span("command"), "same command")
        return None
    return Checked(
        {"container": container.name, "command": command, "original_command": list(container.command)},
        {"container": {"name": container.name}, "kubernetesObject": kobj(f.target)},
    )


def _inject_command(injection, topology):
    return patched(topology, injection,
                   lambda w, a: setattr(container_named(w, a["container"]), "command", list(a["command"])))


def _check_unassigned_limits(f: FaultInput) -> Checked | None:
    container = pick_container(f)
    if container is None:
        return None
    if not container.resources.get("limits"):
        f.error("E2027", f"container `{container.name}` has no resource limits to remove: the fault would change nothing",
                f.body.attr_span("container") if f.body.has("container") else f.fault.target.span, "no limits",
                help="pick a container with `resources { limits { ... } }`")
        return None
    return Checked(
        {"container": container.name, "original_limits": dict(container.resources["limits"])},
        {"container": {"name": container.name}, "kubernetesObject": kobj(f.target)},
    )


def _inject_unassigned_limits(injection, topology):
    def change(workload, args):
        container = container_named(workload, args["container"])
        container.resources = {k: v for k, v in container.resources.items() if k != "limits"}

    return patched(topology, injection, change)


TWINS: dict[str, FaultKind] = {kind.name: kind for kind in [
    FaultKind(
        "nonexistent_image", "nonexistent-kubernetes-workload-container-image", "workload.container.image:unpullable",
        ("deployment", "statefulset", "job", "cronjob", "pod"), "Replaces a container's image with a tag that does not exist.",
        _check_nonexistent_image, _inject_image, original,
        args=(Arg("container", "string", help="the container; required when the workload has several"),
              Arg("image", "string", default="the image's repository with tag `7f3a9c1e`, a tag no registry has (it reads as a commit's, not as the fault)",
                  help="the image reference that cannot be pulled")),
        preconditions=("The container exists in the workload.", "The new image differs from the container's image."),
        readiness="image", labels=("virtualization", "misconfiguration"),
    ),
    FaultKind(
        "modified_env", "modified-kubernetes-workload-container-environment-variable", "workload.container.env:modified",
        ("deployment", "statefulset", "job", "cronjob"), "Changes the value of an environment variable a container already has.",
        _check_modified_env, _inject_env, original,
        args=(Arg("container", "string", help="the container; required when the workload has several"),
              Arg("name", "string", required=True, help="the environment variable, which must already be set"),
              Arg("value", "string", required=True, help="its new value")),
        preconditions=("The container exists in the workload.", "The variable is already set in the container.",
                       "The new value differs from the current one."),
        labels=("application", "misconfiguration"),
    ),
    FaultKind(
        "scaled_to_zero", "scaled-to-zero-kubernetes-workload", "workload.replicas:zero", ("deployment", "statefulset"),
        "Scales a workload to zero replicas.", _check_scaled_to_zero, _inject_zero, original,
        preconditions=("The workload has at least one replica.",),
        accept=(Acceptance(r"spec\.replicas", ">="),),  # back to at least its replicas
        labels=("virtualization", "operation_error"),
    ),
    FaultKind(
        "invalid_command", "invalid-kubernetes-workload-container-command", "workload.container.command:invalid",
        ("deployment", "statefulset", "job", "cronjob"), "Replaces a container's command with one that does not exist in its image.",
        _check_invalid_command, _inject_command, original,
        args=(Arg("container", "string", help="the container; required when the workload has several"),
              Arg("command", "list of strings", default='`["/opt/service/bin/serve"]`', help="the command that cannot run")),
        preconditions=("The container exists in the workload.", "The command is not empty.",
                       "The command differs from the container's command."),
        readiness="crash", labels=("virtualization", "misconfiguration"),
    ),
    FaultKind(
        "unassigned_limits", "unassigned-kubernetes-workload-container-resource-limits",
        "workload.container.resources.limits:removed", ("deployment", "statefulset", "job", "cronjob"),
        "Removes a container's resource limits, so it may use up its node's memory and CPU.",
        _check_unassigned_limits, _inject_unassigned_limits, original,
        args=(Arg("container", "string", help="the container; required when the workload has several"),),
        preconditions=("The container exists in the workload.", "The container has resource limits."),
        # limits set again, of any size; the requests are not what the fault is about
        accept=(Acceptance(r".*\.resources\.limits\..*", "present"), Acceptance(r".*\.resources\.requests(\..*)?", "any")),
        labels=("virtualization", "misconfiguration"),
    ),
]}
