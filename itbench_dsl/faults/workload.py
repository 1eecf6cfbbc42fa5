"""Faults that change a workload's pods: their image, environment, replica count, init containers,
command, resources and readiness probe."""

from __future__ import annotations

import copy

from .. import ir
from ..diagnostics import did_you_mean
from ..units import parse_cpu, parse_memory
from .base import (
    Acceptance,
    Arg,
    Checked,
    Effect,
    FaultInput,
    FaultKind,
    container_named,
    kobj,
    original,
    patched,
    pick_container,
    provide,
)

MANAGED_BY = {"app.kubernetes.io/managed-by": "itbench"}


# ---- nonexistent image -------------------------------------------------------------------------


def _check_nonexistent_image(f: FaultInput) -> Checked | None:
    container = pick_container(f)
    image = f.body.attr("image", "str")
    if container is None:
        return None
    if image is None:
        repository = container.image.rsplit(":", 1)[0] if ":" in container.image.rsplit("/", 1)[-1] else container.image
        image = f"{repository}:itbench-nonexistent"
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


# ---- modified environment variable ----------------------------------------------------------------


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


# ---- scaled to zero ----------------------------------------------------------------------------------


def _check_scaled_to_zero(f: FaultInput) -> Checked | None:
    workload: ir.Workload = f.obj
    if workload.replicas == 0:
        f.error("E2027", f"{workload.kind.lower()} `{workload.name}` already has 0 replicas: the fault would change "
                "nothing", f.fault.target.span, "already at zero")
        return None
    return Checked({"original_replicas": workload.replicas}, {"kubernetesObject": kobj(f.target)}, [])


def _inject_zero(injection, topology):
    return patched(topology, injection, lambda w, a: setattr(w, "replicas", 0))


# ---- init containers that never complete (crashing, hanging) ------------------------------------------

# ITBench's injections add an init container named `worker` (kubectl's strategic merge keys init containers
# by name), with the images its roles pin.
INIT_WORKER = "worker"
HANGING_IMAGE = ("registry.access.redhat.com/ubi10-minimal:10.2-1787204459"
                 "@sha256:07ab7c0a596785afa1de1963c1cac07f2b9df2e762b9d20d3433cff18ac1af18")
CRASHING_IMAGE = ("registry.access.redhat.com/ubi10/python-314-minimal:10.2-1787722346"
                  "@sha256:b7243a5f6ac9616eff0475c1a3caa4e71118d6d00151a82e019fd6f2260acc19")
CRASHING_HOME = "/opt/app-root/src"  # the image's $HOME
CRASHING_VOLUMES = ("config", "scripts")
# The ConfigMap the crashing init container reads: a configuration file cut short, and the script that loads it.
INVALID_CONFIG = '{\n  "service": "loader",\n  "retries": 3,\n  "endpoints": [\n    {"name": "primary", "url": "http://localhost:8080"'
LOAD_CONFIG = (
    "import json\n"
    "import pathlib\n"
    "\n"
    "# The configuration is truncated: json.loads raises and the init container exits with status 1.\n"
    "text = (pathlib.Path.home() / \"config\" / \"config.json\").read_text()\n"
    "print(\"loaded\", len(json.loads(text)), \"settings\")\n"
)


def _no_worker(f: FaultInput) -> bool:
    workload: ir.Workload = f.obj
    taken = [c.name for c in workload.init_containers + workload.containers]
    if INIT_WORKER in taken:
        f.error("E2011", f"{workload.kind.lower()} `{workload.name}` already has a container named `{INIT_WORKER}`: "
                "the fault's init container would replace it", f.fault.target.span, f"has a `{INIT_WORKER}` container",
                help=f"ITBench's injection adds an init container named `{INIT_WORKER}`; pick a workload without one")
        return False
    return True


def _crash_configmap_name(workload_name: str) -> str:
    return f"{workload_name}-config"


def _check_crashing_init(f: FaultInput) -> Checked | None:
    workload: ir.Workload = f.obj
    configmap_name = f.body.attr("configmap_name", "str")
    ok = _no_worker(f)
    clashing = [v["name"] for v in workload.volumes if v.get("name") in CRASHING_VOLUMES]
    if clashing:
        f.error("E2011", f"{workload.kind.lower()} `{workload.name}` already has a volume `{clashing[0]}`: the fault's "
                "volume of the same name would replace it", f.fault.target.span, f"has a `{clashing[0]}` volume",
                help="the crashing init container mounts its ConfigMap through volumes `config` and `scripts`; "
                "pick a workload without them")
        ok = False
    name = _crash_configmap_name(workload.name)
    if any(c.name == name and c.namespace == workload.namespace for c in f.build.configmaps):
        f.error("E2011", f"the topology already declares configmap `{name}`: the fault's ConfigMap would overwrite it",
                f.fault.target.span, "its ConfigMap exists",
                help=f"the fault writes its failing script to ConfigMap `<workload>-config`; rename the topology's "
                f"configmap `{name}`")
        ok = False
    if not ok:
        return None
    configmap = ir.ObjectRef("v1", "ConfigMap", workload.namespace, name)
    itbench_args = {"kubernetesObject": kobj(f.target)}
    if configmap_name is not None:
        itbench_args["configMapName"] = configmap_name
    checked = Checked(
        {"container": INIT_WORKER, "configmap": name},
        itbench_args,
        # ITBench's ground truth lists the ConfigMap its injection creates among the entities
        side_objects=[configmap],
        created=[configmap],
    )
    manifest = _crashing_configmap_manifest(workload.namespace, name)
    return provide(f, checked, ir.ConfigMap(name, workload.namespace, dict(manifest["data"]),
                                            labels=dict(MANAGED_BY)), manifest, readers=[workload.name])


def _crashing_configmap_manifest(namespace: str, name: str) -> dict:
    return {
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": namespace, "labels": dict(MANAGED_BY)},
        "data": {"config": INVALID_CONFIG, "script": LOAD_CONFIG},
    }


def _crashing_configmap(injection: ir.Injection) -> dict:
    return _crashing_configmap_manifest(injection.target.namespace, injection.args["configmap"])


def _inject_crashing_init(injection, topology):
    def change(workload: ir.Workload, args):
        workload.init_containers = [*workload.init_containers, ir.Container(
            INIT_WORKER, CRASHING_IMAGE, command=["/bin/sh"], args=["-c", "python3.14 ~/scripts/load_config.py"],
            volume_mounts=[{"name": "config", "mountPath": f"{CRASHING_HOME}/config", "readOnly": True},
                           {"name": "scripts", "mountPath": f"{CRASHING_HOME}/scripts", "readOnly": True}],
        )]
        workload.volumes = [*workload.volumes, *(
            {"name": volume, "configMap": {"name": args["configmap"], "defaultMode": 0o755,
                                           "items": [{"key": key, "path": path}]}}
            for volume, key, path in (("config", "config", "config.json"), ("scripts", "script", "load_config.py")))]

    effect = patched(topology, injection, change)
    return Effect([_crashing_configmap(injection), *effect.apply], [])


def _revert_crashing_init(injection, topology):
    configmap = ir.ObjectRef("v1", "ConfigMap", injection.target.namespace, injection.args["configmap"])
    return Effect(original(injection, topology).apply, [configmap])


def _check_hanging_init(f: FaultInput) -> Checked | None:
    if not _no_worker(f):
        return None
    return Checked({"container": INIT_WORKER}, {"kubernetesObject": kobj(f.target)})


def _inject_hanging_init(injection, topology):
    def change(workload: ir.Workload, args):
        workload.init_containers = [*workload.init_containers, ir.Container(
            INIT_WORKER, HANGING_IMAGE, command=["/bin/sh"], args=["-c", "sleep infinity"])]

    return patched(topology, injection, change)


# ---- invalid container command ---------------------------------------------------------------------------


def _check_invalid_command(f: FaultInput) -> Checked | None:
    container = pick_container(f)
    command = f.body.attr("command", "str_list", default=["invalid-command"])
    if container is None or command is None:
        return None
    if not command:
        f.error("E2010", "`command` needs at least one item: an empty command runs the image's entrypoint",
                f.body.attr_span("command"), "empty command", help='write `command = ["invalid-command"]`')
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


# ---- insufficient resources, unassigned limits ----------------------------------------------------------


def _current(container: ir.Container, resource: str) -> str | None:
    """The container's limit for a resource, else its request (what the new limit must be below)."""
    for section in ("limits", "requests"):
        value = container.resources.get(section, {}).get(resource)
        if value is not None:
            return value
    return None


def _check_insufficient_resources(f: FaultInput) -> Checked | None:
    container = pick_container(f)
    cpu = f.body.attr("cpu", "cpu", default="5m")
    memory = f.body.attr("memory", "memory", default="5Mi")
    if container is None or cpu is None or memory is None:
        return None
    ok, same = True, []
    for resource, value, parse in (("cpu", cpu, parse_cpu), ("memory", memory, parse_memory)):
        current = _current(container, resource)
        if current is None:
            continue
        if parse(value) == parse(current):
            same.append(resource)
        elif parse(value) > parse(current):
            f.error("E2011", f"{resource} {value} is not below container `{container.name}`'s current {resource} "
                    f"({current}): the fault would not starve it", f.body.attr_span(resource), "not below the current value",
                    help=f"pick a {resource} below {current}")
            ok = False
    if ok and len(same) == 2:
        f.error("E2027", f"container `{container.name}` already has cpu {cpu} and memory {memory}: the fault would "
                "change nothing", f.fault.target.span, "same resources")
        return None
    if not ok:
        return None
    return Checked(
        {"container": container.name, "cpu": cpu, "memory": memory, "original_resources": copy.deepcopy(container.resources)},
        {"container": {"name": container.name}, "kubernetesObject": kobj(f.target)},
    )


def _inject_resources(injection, topology):
    def change(workload, args):
        values = {"cpu": args["cpu"], "memory": args["memory"]}
        container = container_named(workload, args["container"])
        container.resources = {**container.resources, "limits": dict(values), "requests": dict(values)}

    return patched(topology, injection, change)


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


# ---- misconfigured readiness probe ----------------------------------------------------------------------


def _check_readiness_probe(f: FaultInput) -> Checked | None:
    workload: ir.Workload = f.obj
    container = pick_container(f)
    port = f.body.attr("port", "port", default=40)
    path = f.body.attr("path", "str", default="/ready")
    if container is None or port is None or path is None:
        return None
    if not path.startswith("/"):
        f.error("E2010", f"the probe path `{path}` must start with `/`", f.body.attr_span("path"), "not a path")
        return None
    served = [c.name for c in workload.containers for p in c.ports if p.port == port]
    if served:
        f.error("E2011", f"container `{served[0]}` listens on port {port}: the probe could succeed",
                f.body.attr_span("port") if f.body.has("port") else f.fault.target.span, "a port the pod serves",
                help="pick a port no container of the pod listens on")
        return None
    probe = {"failureThreshold": 3, "httpGet": {"path": path, "port": port, "scheme": "HTTP"}, "periodSeconds": 5,
             "successThreshold": 1, "timeoutSeconds": 3}
    current = copy.deepcopy(container.probes.get("readinessProbe") or {})
    if "httpGet" in current:  # Kubernetes' defaults, as the API server fills them in
        current["httpGet"].setdefault("scheme", "HTTP")
        for key, default in (("failureThreshold", 3), ("periodSeconds", 10), ("successThreshold", 1), ("timeoutSeconds", 1)):
            current.setdefault(key, default)
    if current == probe:
        f.error("E2027", f"container `{container.name}` already has this readiness probe: the fault would change nothing",
                f.fault.target.span, "same probe")
        return None
    return Checked(
        {"container": container.name, "probe": probe},
        {"container": {"name": container.name}, "kubernetesObject": kobj(f.target)},
    )


def _inject_readiness_probe(injection, topology):
    def change(workload, args):
        container = container_named(workload, args["container"])
        container.probes = {**container.probes, "readinessProbe": copy.deepcopy(args["probe"])}

    return patched(topology, injection, change)


# ---- unsupported architecture ----------------------------------------------------------------------------

# ITBench's images built for a single architecture, by the architecture they do NOT run on.
FOREIGN_IMAGES = {
    "amd64": "quay.io/it-bench/hello-bench-arm64:2.0.0@sha256:7b01b372f37e9dd2fa3b4f0f830c827469b9eafac9aa481ab77260264776b0aa",
    "arm64": "quay.io/it-bench/hello-bench-amd64:2.0.0@sha256:45787f89b1b523d0d890eebcadc0b59fbd58fac7f309136da63577b800ca802b",
}
ARCH_LABEL = "kubernetes.io/arch"


def _check_unsupported_architecture(f: FaultInput) -> Checked | None:
    workload: ir.Workload = f.obj
    container = pick_container(f)
    arch = f.body.attr("node_architecture", "symbol", default="amd64")
    if arch is not None and arch not in FOREIGN_IMAGES:
        hint = did_you_mean(arch, FOREIGN_IMAGES)
        f.error("E2010", f"`{arch}` is not a node architecture ITBench has an image for", f.body.attr_span("node_architecture"),
                "unknown architecture", help=f"did you mean `{hint}`?" if hint else "architectures: amd64, arm64")
        return None
    if container is None or arch is None:
        return None
    pinned = workload.node_selector.get(ARCH_LABEL)
    if pinned is not None and pinned != arch:
        f.error("E2011", f"{workload.kind.lower()} `{workload.name}` already selects {pinned} nodes: its pods cannot "
                f"be placed on {arch} nodes", f.body.attr_span("node_architecture") if f.body.has("node_architecture")
                else f.fault.target.span, "conflicts with the node selector", help=f"write `node_architecture = {pinned}`")
        return None
    image = FOREIGN_IMAGES[arch]
    if container.image == image and pinned == arch:
        f.error("E2027", f"container `{container.name}` already runs the {arch}-incompatible image on {arch} nodes: "
                "the fault would change nothing", f.fault.target.span, "same image")
        return None
    return Checked(
        {"container": container.name, "image": image, "node_architecture": arch, "original_image": container.image},
        {"container": {"name": container.name}, "kubernetesObject": kobj(f.target)},
    )


def _inject_unsupported_architecture(injection, topology):
    def change(workload, args):
        container_named(workload, args["container"]).image = args["image"]
        workload.node_selector = {**workload.node_selector, ARCH_LABEL: args["node_architecture"]}

    return patched(topology, injection, change)


FAULTS = [
    FaultKind(
        "nonexistent_image", "nonexistent-kubernetes-workload-container-image", "workload.container.image:unpullable",
        ("deployment", "statefulset"), "Replaces a container's image with a tag that does not exist.",
        _check_nonexistent_image, _inject_image, original,
        args=(Arg("container", "string", help="the container; required when the workload has several"),
              Arg("image", "string", default="the image's repository with tag `itbench-nonexistent`",
                  help="the image reference that cannot be pulled")),
        preconditions=("The container exists in the workload.", "The new image differs from the container's image."),
    ),
    FaultKind(
        "modified_env", "modified-kubernetes-workload-container-environment-variable", "workload.container.env:modified",
        ("deployment", "statefulset"), "Changes the value of an environment variable a container already has.",
        _check_modified_env, _inject_env, original,
        args=(Arg("container", "string", help="the container; required when the workload has several"),
              Arg("name", "string", required=True, help="the environment variable, which must already be set"),
              Arg("value", "string", required=True, help="its new value")),
        preconditions=("The container exists in the workload.", "The variable is already set in the container.",
                       "The new value differs from the current one."),
    ),
    FaultKind(
        "scaled_to_zero", "scaled-to-zero-kubernetes-workload", "workload.replicas:zero", ("deployment", "statefulset"),
        "Scales a workload to zero replicas.", _check_scaled_to_zero, _inject_zero, original,
        preconditions=("The workload has at least one replica.",),
        accept=(Acceptance(r"spec\.replicas", ">="),),  # back to at least its replicas
    ),
    FaultKind(
        "crashing_init_container", "crashing-kubernetes-workload-init-container", "workload.init-container:crashing",
        ("deployment", "statefulset"),
        "Adds an init container `worker` whose script fails to parse its (truncated) configuration, so the pods "
        "never start.",
        _check_crashing_init, _inject_crashing_init, _revert_crashing_init,
        args=(Arg("configmap_name", "string", help="recorded as ITBench's `configMapName` argument (its scenario 59 "
                  "names `features`); ITBench's injection does not read it, the ConfigMap is always `<workload>-config`"),),
        preconditions=("The workload has no container or init container named `worker`.",
                       "The workload has no volume named `config` or `scripts`.",
                       "The topology declares no ConfigMap `<workload>-config` in the workload's namespace."),
        creates="ConfigMap `<workload>-config` (the script and its truncated configuration), mounted by the init "
                "container; the statements after it may name the ConfigMap",
    ),
    FaultKind(
        "hanging_init_container", "hanging-kubernetes-workload-init-container", "workload.init-container:hanging",
        ("deployment", "statefulset"), "Adds an init container `worker` that sleeps forever, so the pods never start.",
        _check_hanging_init, _inject_hanging_init, original,
        preconditions=("The workload has no container or init container named `worker`.",),
    ),
    FaultKind(
        "invalid_command", "invalid-kubernetes-workload-container-command", "workload.container.command:invalid",
        ("deployment", "statefulset"), "Replaces a container's command with one that does not exist in its image.",
        _check_invalid_command, _inject_command, original,
        args=(Arg("container", "string", help="the container; required when the workload has several"),
              Arg("command", "list of strings", default='`["invalid-command"]`', help="the command that cannot run")),
        preconditions=("The container exists in the workload.", "The command is not empty.",
                       "The command differs from the container's command."),
    ),
    FaultKind(
        "insufficient_resources", "insufficient-kubernetes-workload-container-resources",
        "workload.container.resources:insufficient", ("deployment", "statefulset"),
        "Sets a container's CPU and memory requests and limits far below what it needs (OOMKilled, throttled).",
        _check_insufficient_resources, _inject_resources, original,
        args=(Arg("container", "string", help="the container; required when the workload has several"),
              Arg("cpu", "CPU quantity", default="5m", help="the new CPU request and limit"),
              Arg("memory", "memory quantity", default="5Mi", help="the new memory request and limit")),
        preconditions=("The container exists in the workload.",
                       "`cpu` is a CPU quantity and `memory` a memory quantity.",
                       "Each is not above the container's current limit (else request) of that resource.",
                       "They do not both equal the current values."),
        # limits at least as high as before; requests are the scheduler's business, readiness tells
        accept=(Acceptance(r".*\.resources\.limits(\..*)?", ">="), Acceptance(r".*\.resources\.requests(\..*)?", "any")),
    ),
    FaultKind(
        "unassigned_limits", "unassigned-kubernetes-workload-container-resource-limits",
        "workload.container.resources.limits:removed", ("deployment", "statefulset"),
        "Removes a container's resource limits, so it may use up its node's memory and CPU.",
        _check_unassigned_limits, _inject_unassigned_limits, original,
        args=(Arg("container", "string", help="the container; required when the workload has several"),),
        preconditions=("The container exists in the workload.", "The container has resource limits."),
        # limits set again, of any size; the requests are not what the fault is about
        accept=(Acceptance(r".*\.resources\.limits\..*", "present"), Acceptance(r".*\.resources\.requests(\..*)?", "any")),
    ),
    FaultKind(
        "misconfigured_readiness_probe", "misconfigured-kubernetes-workload-container-readiness-probe",
        "workload.container.readinessProbe:misconfigured", ("deployment", "statefulset"),
        "Gives a container a readiness probe on a port nothing listens on, so its pods never become ready.",
        _check_readiness_probe, _inject_readiness_probe, original,
        args=(Arg("container", "string", help="the container; required when the workload has several"),
              Arg("port", "port", default="40", help="the probed port, which no container of the pod serves"),
              Arg("path", "string", default="/ready", help="the probed HTTP path")),
        preconditions=("The container exists in the workload.", "No container of the pod listens on the probed port.",
                       "The probe differs from the container's readiness probe."),
        # a probe that is removed or corrected: the pods' readiness tells which probe works
        accept=(Acceptance(r".*\.readinessProbe(\..*)?", "changed"),),
    ),
    FaultKind(
        "unsupported_architecture_image", "unsupported-architecture-kubernetes-workload-container-image",
        "workload.container.image:foreign-architecture", ("deployment", "statefulset"),
        "Replaces a container's image with one built for another CPU architecture than the nodes the pods are "
        "pinned to (through the `kubernetes.io/arch` node label; ITBench pins one worker node by host name).",
        _check_unsupported_architecture, _inject_unsupported_architecture, original,
        args=(Arg("container", "string", help="the container; required when the workload has several"),
              Arg("node_architecture", "name", default="amd64",
                  help="the nodes' architecture, amd64 or arm64: the image is built for the other one")),
        preconditions=("The container exists in the workload.", "`node_architecture` is amd64 or arm64.",
                       "The workload's node selector does not pin another architecture.",
                       "The container does not already run that image on those nodes."),
    ),
]
