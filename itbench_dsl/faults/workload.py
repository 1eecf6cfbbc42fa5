"""Faults that change a workload's pods: their image, environment, replica count, init containers,
command, resources and readiness and liveness probes."""

from __future__ import annotations

import copy

from .. import ir
from ..diagnostics import did_you_mean
from ..topology import DNS1123_LABEL
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



# ---- nonexistent image -------------------------------------------------------------------------


# ---- modified environment variable ----------------------------------------------------------------


# ---- scaled to zero ----------------------------------------------------------------------------------


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
    return provide(f, checked, ir.ConfigMap(name, workload.namespace, dict(manifest["data"])), manifest, readers=[workload.name])


def _crashing_configmap_manifest(namespace: str, name: str) -> dict:
    return {
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": namespace},
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


# ---- misconfigured liveness probe ----------------------------------------------------------------------

# The probe SREGym's liveness_probe_misconfiguration injects: one failure restarts the container.
LIVENESS_PROBE = {"failureThreshold": 1, "initialDelaySeconds": 10, "periodSeconds": 10, "successThreshold": 1,
                  "timeoutSeconds": 1}


def _check_liveness_probe(f: FaultInput) -> Checked | None:
    workload: ir.Workload = f.obj
    container = pick_container(f)
    port = f.body.attr("port", "port", default=8080)
    path = f.body.attr("path", "str", default="/healthz")
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
    probe = {**LIVENESS_PROBE, "httpGet": {"path": path, "port": port, "scheme": "HTTP"}}
    if container.probes.get("livenessProbe") == probe and workload.termination_grace_period_seconds == 0:
        f.error("E2027", f"container `{container.name}` already has this liveness probe: the fault would change nothing",
                f.fault.target.span, "same probe")
        return None
    return Checked({"container": container.name, "probe": probe},
                   {"container": {"name": container.name}, "kubernetesObject": kobj(f.target)})


def _inject_liveness_probe(injection, topology):
    def change(workload, args):
        container = container_named(workload, args["container"])
        container.probes = {**container.probes, "livenessProbe": copy.deepcopy(args["probe"])}
        workload.termination_grace_period_seconds = 0  # killed at once: the restarts come fast

    return patched(topology, injection, change)


# ---- removed environment variable ------------------------------------------------------------------------


def _check_removed_env(f: FaultInput) -> Checked | None:
    container = pick_container(f)
    name = f.body.attr("name", "str", required=True)
    if container is None or name is None:
        return None
    current = {e.name: e for e in container.env}
    if name not in current:
        hint = did_you_mean(name, current)
        f.error("E2021", f"container `{container.name}` has no environment variable `{name}` to remove",
                f.body.attr_span("name"), "not set in the container",
                help=f"did you mean `{hint}`?" if hint else f"its variables: {', '.join(current) or 'none'}")
        return None
    return Checked({"container": container.name, "name": name, "original_value": current[name].value},
                   {"container": {"env": {"name": name}, "name": container.name}, "kubernetesObject": kobj(f.target)})


def _inject_removed_env(injection, topology):
    def change(workload, args):
        container = container_named(workload, args["container"])
        container.env = [e for e in container.env if e.name != args["name"]]

    return patched(topology, injection, change)


# ---- init container waiting for a service that does not exist --------------------------------------------

# busybox 1.28's nslookup exits non-zero on NXDOMAIN (later releases regressed), so the loop never ends.
DEPENDENCY_WAIT_IMAGE = "busybox:1.28"


def _check_dependency_wait_init(f: FaultInput) -> Checked | None:
    workload: ir.Workload = f.obj
    name = f.body.attr("container_name", "str", default="init-config")
    service = f.body.attr("service", "str", required=True)
    if name is None or service is None:
        return None
    for value, key in ((name, "container_name"), (service, "service")):
        if len(value) > 63 or not DNS1123_LABEL.match(value):
            f.error("E2014", f"`{value}` is not a valid Kubernetes name", f.body.attr_span(key) or f.fault.target.span,
                    "invalid name", help="use lower-case letters, digits and `-`, starting and ending with a letter or digit")
            return None
    taken = [c.name for c in (*workload.containers, *workload.init_containers)]
    if name in taken:
        f.error("E2011", f"{workload.kind.lower()} `{workload.name}` already has a container `{name}`",
                f.body.attr_span("container_name") if f.body.has("container_name") else f.fault.target.span,
                "name taken", help="pick another `container_name`")
        return None
    if ("service", workload.namespace, service) in f.build.declared:
        f.error("E2011", f"service `{service}` exists in namespace `{workload.namespace}`: the init container would "
                "find it and complete", f.body.attr_span("service"), "an existing service",
                help="name a service the namespace does not have")
        return None
    fqdn = f"{service}.{workload.namespace}.svc.cluster.local"
    script = (f"echo 'waiting for {service} to become ready...'; until nslookup {fqdn} >/dev/null 2>&1; "
              f"do echo 'still waiting on {service}'; sleep 5; done")
    return Checked({"container": name, "service": service, "command": ["/bin/sh", "-c", script]},
                   {"kubernetesObject": kobj(f.target)})


def _inject_dependency_wait_init(injection, topology):
    def change(workload: ir.Workload, args):
        workload.init_containers = [*workload.init_containers, ir.Container(
            args["container"], DEPENDENCY_WAIT_IMAGE, command=list(args["command"]))]

    return patched(topology, injection, change)


# ---- probe on a path the application does not serve -------------------------------------------------------

PROBE_KINDS = ("liveness", "readiness", "startup")


def _check_unserved_probe_path(f: FaultInput) -> Checked | None:
    workload: ir.Workload = f.obj
    container = pick_container(f)
    paths = {kind: f.body.attr(kind, "str") for kind in PROBE_KINDS}
    if container is None or any(f.body.has(k) and v is None for k, v in paths.items()):
        return None
    paths = {k: v for k, v in paths.items() if v is not None}
    if not paths:
        f.error("E2007", "the fault needs the path of at least one probe: `liveness`, `readiness` or `startup`",
                f.fault.span, "which probe?", help='write `readiness = "/is_ready"`')
        return None
    # the paths the pod's own HTTP probes check, by port: the healthy pods pass them, so the application serves them
    served: dict = {}
    for c in workload.containers:
        for probe in c.probes.values():
            http = (probe or {}).get("httpGet") or {}
            if "path" in http:
                served.setdefault(http.get("port"), set()).add(http["path"])
    changed = {}
    for kind, path in paths.items():
        span = f.body.attr_span(kind)
        if not path.startswith("/"):
            f.error("E2010", f"the probe path `{path}` must start with `/`", span, "not a path")
            return None
        probe = container.probes.get(f"{kind}Probe") or {}
        http = probe.get("httpGet")
        if not http:
            f.error("E2011", f"container `{container.name}` has no HTTP {kind} probe whose path the fault could change",
                    span, f"no HTTP {kind} probe",
                    help=f"declare the healthy probe in the topology (`probe \"{kind}\" {{ http_get = \"/\"  port = 80 }}`); "
                         f"a probe on a port nothing serves is `misconfigured_{kind}_probe`" if kind != "startup" else
                         "declare the healthy probe in the topology")
            return None
        if path in served.get(http.get("port"), set()):
            f.error("E2011" if path != http.get("path") else "E2027",
                    f"`{path}` is a path the pod's own probes check on port {http.get('port')}: the application serves "
                    "it, so the probe would pass", span, "a served path",
                    help="give a path the application does not serve")
            return None
        changed[f"{kind}Probe"] = path
    return Checked({"container": container.name, "paths": changed},
                   {"container": {"name": container.name}, "kubernetesObject": kobj(f.target)})


def _inject_unserved_probe_path(injection, topology):
    def change(workload, args):
        container = container_named(workload, args["container"])
        probes = copy.deepcopy(container.probes)
        for key, path in args["paths"].items():
            probes[key]["httpGet"]["path"] = path
        container.probes = probes

    return patched(topology, injection, change)


# ---- memory limit below what the container uses ---------------------------------------------------------------


def _check_memory_limit(f: FaultInput) -> Checked | None:
    container = pick_container(f)
    memory = f.body.attr("memory", "memory", default="10Mi")
    if container is None or memory is None:
        return None
    span = f.body.attr_span("memory") if f.body.has("memory") else f.fault.target.span
    limit = container.resources.get("limits", {}).get("memory")
    request = container.resources.get("requests", {}).get("memory")
    if limit is not None and parse_memory(memory) == parse_memory(limit):
        f.error("E2027", f"container `{container.name}`'s memory limit is already {limit}: the fault would change nothing",
                span, "same limit")
        return None
    if limit is not None and parse_memory(memory) > parse_memory(limit):
        f.error("E2011", f"memory {memory} is not below container `{container.name}`'s current limit ({limit}): the "
                "fault would not starve it", span, "not below the current limit", help=f"pick a limit below {limit}")
        return None
    # kubernetes pkg/apis/core/validation/validation.go, validateResourceRequirements (v1.33): request <= limit
    if request is not None and parse_memory(memory) < parse_memory(request):
        f.error("E2011", f"memory {memory} is below container `{container.name}`'s memory request ({request}): the API "
                "server refuses a limit below the request", span, "below the request",
                help=f"pick a limit of at least {request}, or use `insufficient_resources` (requests and limits)")
        return None
    return Checked({"container": container.name, "memory": memory, "original_limit": limit},
                   {"container": {"name": container.name}, "kubernetesObject": kobj(f.target)})


def _inject_memory_limit(injection, topology):
    def change(workload, args):
        container = container_named(workload, args["container"])
        limits = {**container.resources.get("limits", {}), "memory": args["memory"]}
        container.resources = {**container.resources, "limits": limits}

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
        readiness="init", labels=("virtualization", "misconfiguration"),
        symptoms=('readiness', 'restarts'),
    ),
    FaultKind(
        "hanging_init_container", "hanging-kubernetes-workload-init-container", "workload.init-container:hanging",
        ("deployment", "statefulset"), "Adds an init container `worker` that sleeps forever, so the pods never start.",
        _check_hanging_init, _inject_hanging_init, original,
        preconditions=("The workload has no container or init container named `worker`.",),
        readiness="init", labels=("virtualization", "misconfiguration"),
        symptoms=('readiness',),
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
        readiness="crash", labels=("virtualization", "misconfiguration"),
        symptoms=('scheduling', 'readiness'),
        itbench_injects={"cpu": "5m", "memory": "5Mi"},  # ITBench writes 5m / 5Mi limits and requests
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
        readiness="unready", labels=("virtualization", "misconfiguration"),
        symptoms=('readiness', 'endpoints'),
        # ITBench's task writes its own probe: HTTP GET /ready on port 40 (inject_misconfigured_kubernetes_workload_
        # container_readiness_probe.yaml)
        itbench_injects={"probe.httpGet.port": 40, "probe.httpGet.path": "/ready"},
    ),
    # Faults ITBench does not have, after SREGym's problems (docs/peers.md).
    FaultKind(
        "misconfigured_liveness_probe", None, "workload.container.livenessProbe:misconfigured",
        ("deployment", "statefulset"),
        "Gives a container a liveness probe on a port nothing listens on (one failure restarts it) and no termination "
        "grace period, so its pods restart over and over.",
        _check_liveness_probe, _inject_liveness_probe, original,
        args=(Arg("container", "string", help="the container; required when the workload has several"),
              Arg("port", "port", default="8080", help="the probed port, which no container of the pod serves"),
              Arg("path", "string", default="/healthz", help="the probed HTTP path")),
        preconditions=("The container exists in the workload.", "No container of the pod listens on the probed port.",
                       "The probe or the grace period differs from the workload's."),
        alerts=("KubePodCrashLooping",),
        solutions=(
            {"steps": [{"text": "Revert the last change done to the manifest.",
                        "command": "kubectl -n {{ args.kubernetesObject.metadata.namespace }} rollout undo "
                                   "{{ args.kubernetesObject.kind | lower }}/{{ args.kubernetesObject.metadata.name }}"}]},
            {"steps": [{"text": "Manually edit the manifest and remove the faulty liveness probe, or point it at a "
                                "port and path the container serves.",
                        "command": "kubectl -n {{ args.kubernetesObject.metadata.namespace }} edit "
                                   "{{ args.kubernetesObject.kind | lower }} {{ args.kubernetesObject.metadata.name }}"}]},
        ),
        # a probe removed or corrected, any grace period: the pods' readiness (no more restarts) tells
        accept=(Acceptance(r".*\.livenessProbe(\..*)?", "changed"),
                Acceptance(r"spec\.template\.spec\.terminationGracePeriodSeconds", "any")),
        readiness="crash", labels=("virtualization", "misconfiguration"),
        symptoms=('restarts',),
    ),
    FaultKind(
        "removed_env", None, "workload.container.env:removed", ("deployment", "statefulset"),
        "Removes an environment variable a container needs, such as the address of a service it calls.",
        _check_removed_env, _inject_removed_env, original,
        args=(Arg("container", "string", help="the container; required when the workload has several"),
              Arg("name", "string", required=True, help="the environment variable, which must be set")),
        preconditions=("The container exists in the workload.", "The variable is set in the container."),
        alerts=(),
        solutions=(
            {"steps": [{"text": "Revert the last change done to the manifest.",
                        "command": "kubectl -n {{ args.kubernetesObject.metadata.namespace }} rollout undo "
                                   "{{ args.kubernetesObject.kind | lower }}/{{ args.kubernetesObject.metadata.name }}"}]},
            {"steps": [{"text": "Set the missing environment variable again with its correct value.",
                        "command": "kubectl -n {{ args.kubernetesObject.metadata.namespace }} set env "
                                   "{{ args.kubernetesObject.kind | lower }}/{{ args.kubernetesObject.metadata.name }} "
                                   "{{ args.container.env.name }}=<value>"}]},
        ),
        labels=("application", "misconfiguration"),
        symptoms=('requests', 'restarts'),
    ),
    FaultKind(
        "dependency_wait_init_container", None, "workload.init-container:waits-for-missing-service",
        ("deployment", "statefulset"),
        "Adds an init container that waits, resolving its name in a loop, for a service that does not exist, so the "
        "pods stay in `Init:0/1` and the rollout stalls.",
        _check_dependency_wait_init, _inject_dependency_wait_init, original,
        args=(Arg("service", "string", required=True, help="the service waited for, which the namespace does not have"),
              Arg("container_name", "string", default="init-config", help="the init container's name")),
        preconditions=("The service and container names are valid Kubernetes names.",
                       "The workload has no container or init container of that name.",
                       "The namespace declares no service of that name."),
        alerts=("KubeContainerWaiting",),
        solutions=(
            {"steps": [{"text": "Revert the last change done to the manifest.",
                        "command": "kubectl -n {{ args.kubernetesObject.metadata.namespace }} rollout undo "
                                   "{{ args.kubernetesObject.kind | lower }}/{{ args.kubernetesObject.metadata.name }}"}]},
            {"steps": [{"text": "Manually edit the manifest and remove the init container that waits for the missing "
                                "service.",
                        "command": "kubectl -n {{ args.kubernetesObject.metadata.namespace }} edit "
                                   "{{ args.kubernetesObject.kind | lower }} {{ args.kubernetesObject.metadata.name }}"}]},
        ),
        # removed, or pointed at a dependency that exists: the pods' readiness tells
        accept=(Acceptance(r"spec\.template\.spec\.initContainers(\..*)?", "changed"),),
        readiness="init", labels=("virtualization", "misconfiguration"),
        symptoms=('readiness',),
    ),
    FaultKind(
        "unserved_probe_path", None, "workload.container.probe.httpGet.path:unserved", ("deployment", "statefulset"),
        "Points a container's HTTP probes (liveness, readiness or startup) at paths the application does not serve: "
        "the port answers, with a 404, so a readiness probe keeps the pods unready and a liveness probe restarts them.",
        _check_unserved_probe_path, _inject_unserved_probe_path, original,
        args=(Arg("container", "string", help="the container; required when the workload has several"),
              Arg("liveness", "string", help="the liveness probe's new path"),
              Arg("readiness", "string", help="the readiness probe's new path"),
              Arg("startup", "string", help="the startup probe's new path")),
        preconditions=("The container exists in the workload.", "At least one of the three paths is given.",
                       "The container has an HTTP probe of each kind given (the fault changes its path only).",
                       "No HTTP probe of the pod checks that path on that port: the healthy pods pass those, so the "
                       "application serves them."),
        alerts=("KubePodNotReady",),
        solutions=(
            {"steps": [{"text": "Revert the last change done to the manifest.",
                        "command": "kubectl -n {{ args.kubernetesObject.metadata.namespace }} rollout undo "
                                   "{{ args.kubernetesObject.kind | lower }}/{{ args.kubernetesObject.metadata.name }}"}]},
            {"steps": [{"text": "Manually edit the manifest and point the failing probes at a path the container "
                                "serves.",
                        "command": "kubectl -n {{ args.kubernetesObject.metadata.namespace }} edit "
                                   "{{ args.kubernetesObject.kind | lower }} {{ args.kubernetesObject.metadata.name }}"}]},
        ),
        # any probe but the faulty one: the pods' readiness tells which path is served
        accept=(Acceptance(r".*\.(livenessProbe|readinessProbe|startupProbe)(\..*)?", "changed"),),
        readiness="unready", labels=("virtualization", "misconfiguration"),
        symptoms=('readiness', 'restarts'),
    ),
    FaultKind(
        "insufficient_memory_limit", None, "workload.container.resources.limits.memory:insufficient",
        ("deployment", "statefulset"),
        "Sets a container's memory limit below what it uses, leaving its requests and CPU as they are, so it is "
        "OOM-killed and restarts over and over.",
        _check_memory_limit, _inject_memory_limit, original,
        args=(Arg("container", "string", help="the container; required when the workload has several"),
              Arg("memory", "memory quantity", default="10Mi", help="the new memory limit")),
        preconditions=("The container exists in the workload.",
                       "The limit is below the container's current memory limit, if it has one.",
                       "The limit is not below the container's memory request (the API server would refuse it)."),
        alerts=("KubePodCrashLooping",),
        solutions=(
            {"steps": [{"text": "Revert the last change done to the manifest.",
                        "command": "kubectl -n {{ args.kubernetesObject.metadata.namespace }} rollout undo "
                                   "{{ args.kubernetesObject.kind | lower }}/{{ args.kubernetesObject.metadata.name }}"}]},
            {"steps": [{"text": "Raise the container's memory limit above what it uses.",
                        "command": "kubectl -n {{ args.kubernetesObject.metadata.namespace }} set resources "
                                   "{{ args.kubernetesObject.kind | lower }}/{{ args.kubernetesObject.metadata.name }} "
                                   "-c {{ args.container.name }} --limits=memory=<size>"}]},
        ),
        # any other limit, or none: the pods' readiness (no more OOM kills) tells
        accept=(Acceptance(r".*\.resources\.limits\.memory", "changed"),),
        readiness="crash", labels=("virtualization", "misconfiguration"),
        symptoms=('restarts',),
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
        readiness="crash", labels=("virtualization", "misconfiguration"),
        symptoms=('readiness', 'restarts'),
    ),
]
