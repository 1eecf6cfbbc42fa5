"""Faults in an application's configuration and data: feature flags, secrets, the valkey cache."""

from __future__ import annotations

import copy
import json

from .. import ir
from ..diagnostics import did_you_mean
from .base import (
    Arg,
    Checked,
    Effect,
    FaultInput,
    FaultKind,
    container_named,
    created_by_fault,
    find_object,
    kobj,
    original,
    patched,
    pick_container,
    provide,
)

# ---- OpenTelemetry Demo feature flag ------------------------------------------------------------------

FLAGD_CONFIGMAP = "flagd-config"
FLAGD_DEPLOYMENT = "flagd"
# The deployment that reads each flag of the OpenTelemetry Demo: ITBench restarts it (and flagd) after the
# injection, so the new default variant is picked up (ITBench scenarios 1, 2, 4, 5, 7, 8, 10, 13, 14, 15).
# kafkaQueueProblems is read by checkout and fraud-detection, not by kafka (which is no flagd client), though
# ITBench's scenario 11 restarts kafka: flagd's restart alone makes the change visible to them.
FLAG_READERS = {
    "adFailure": "ad", "adHighCpu": "ad", "adManualGc": "ad", "cartFailure": "cart", "imageSlowLoad": "frontend",
    "loadGeneratorFloodHomepage": "load-generator", "paymentFailure": "payment",
    "paymentUnreachable": "payment", "productCatalogFailure": "product-catalog",
    "recommendationCacheFailure": "recommendation",
}


def _flagd_clients(f: FaultInput, namespace: str) -> set[str]:
    """The workloads of the namespace that ask flagd for flags: OpenFeature's flagd provider finds flagd through
    the `FLAGD_HOST` environment variable. Only these can read a flag (kafka, say, does not)."""
    return {w.name for w in f.build.workloads if w.namespace == namespace
            and any(e.name == "FLAGD_HOST" for c in [*w.containers, *w.init_containers] for e in c.env)}


def _flagd_document(configmap: ir.ConfigMap) -> tuple[str, dict] | None:
    """The data key of the configmap that holds flagd's flag definitions, and the parsed document."""
    for key in sorted(configmap.data):
        try:
            document = json.loads(configmap.data[key])
        except ValueError:
            continue
        if isinstance(document, dict) and isinstance(document.get("flags"), dict):
            return key, document
    return None


def _serialise(document: dict, like: str) -> str:
    """flagd JSON, key order kept, laid out as the original (2-space indent), deterministic."""
    return json.dumps(document, indent=2, ensure_ascii=False) + ("\n" if like.endswith("\n") else "")


def _check_feature_flag(f: FaultInput) -> Checked | None:
    configmap: ir.ConfigMap = f.obj
    flag = f.body.attr("flag", "str", required=True)
    state = f.body.attr("state", "str", required=True)
    if configmap.name != FLAGD_CONFIGMAP:
        f.error("E2011", f"the feature-flag fault edits configmap `{FLAGD_CONFIGMAP}`, not `{configmap.name}`",
                f.fault.target.span, "not flagd's configmap",
                help=f'ITBench\'s fault only acts on `configmap "{FLAGD_CONFIGMAP}"` (the OpenTelemetry Demo\'s flags)')
        return None
    found = _flagd_document(configmap)
    if found is None:
        f.error("E2011", f"configmap `{configmap.name}` holds no flagd flag definitions (a JSON document with `flags`)",
                f.fault.target.span, "no flagd JSON", help="use the OpenTelemetry Demo's `flagd-config`")
        return None
    key, document = found
    if flag is None or state is None:
        return None
    flags = document["flags"]
    if flag not in flags or not isinstance(flags[flag], dict):
        hint = did_you_mean(flag, list(flags))
        f.error("E2011", f"configmap `{configmap.name}` defines no feature flag `{flag}`", f.body.attr_span("flag"),
                "no such flag", help=f"did you mean `{hint}`?" if hint else "its flags: " + ", ".join(flags))
        return None
    variants = flags[flag].get("variants") or {}
    if state not in variants:
        hint = did_you_mean(state, list(variants))
        f.error("E2010", f"feature flag `{flag}` has no variant `{state}`", f.body.attr_span("state"),
                "no such variant", help=f"did you mean `{hint}`?" if hint else
                "its variants: " + ", ".join(f"`{v}`" for v in variants))
        return None
    current = flags[flag].get("defaultVariant")
    if current == state:
        f.error("E2027", f"feature flag `{flag}` is already `{state}`: the fault would change nothing",
                f.body.attr_span("state"), "already the default variant",
                help="pick another variant: " + ", ".join(f"`{v}`" for v in variants if v != state))
        return None
    namespace = configmap.namespace
    # the deployments to restart after the injection; the checker reports a group without them ("E2024"):
    # flagd, and the workload that reads the flag when the topology makes it a flagd client
    reader = FLAG_READERS.get(flag)
    restart = [name for name in (FLAGD_DEPLOYMENT, reader if reader in _flagd_clients(f, namespace) else None)
               if name and any(w.kind == "Deployment" and w.name == name and w.namespace == namespace
                               for w in f.build.workloads)]
    return Checked(
        {"key": key, "flag": flag, "state": state, "original_state": current, "restart": restart},
        {"flag": {"name": flag, "state": state}, "kubernetesObject": kobj(f.target)},
    )


def _inject_feature_flag(injection, topology):
    def change(configmap, args):
        text = configmap.data[args["key"]]
        document = json.loads(text)
        document["flags"][args["flag"]]["defaultVariant"] = args["state"]
        configmap.data[args["key"]] = _serialise(document, text)

    return patched(topology, injection, change)


def _feature_flag_waiters(injection: ir.Injection) -> list[tuple[str, ir.ObjectRef, str]]:
    namespace = injection.target.namespace
    out = []
    for name in injection.args["restart"]:
        why = ("flagd reads its flag definitions when it starts" if name == FLAGD_DEPLOYMENT else
               f"`{name}` reads feature flag `{injection.args['flag']}`, and only sees the change after a restart")
        out.append(("restart", ir.ObjectRef("apps/v1", "Deployment", namespace, name), why))
    return out


# ---- corrupted secret ------------------------------------------------------------------------------------

CORRUPTED_VALUE = "Zr7kN4cQ9bYs"  # a value as any; no word of the fault or the harness (agent_view.py)


def _secret_readers(f: FaultInput, secret: ir.Secret) -> list[str]:
    """The workloads of the namespace whose pods read the secret (env, envFrom-like sources, volumes)."""
    readers = []
    for w in f.build.workloads:
        if w.namespace != secret.namespace:
            continue
        refs = [e.value_from.get("secretKeyRef", {}).get("name") for c in [*w.containers, *w.init_containers]
                for e in c.env if e.value_from]
        refs += [v.get("secret", {}).get("secretName") for v in w.volumes]
        if secret.name in refs:
            readers.append(w.name)
    return sorted(readers)


def _check_corrupted_secret(f: FaultInput) -> Checked | None:
    secret: ir.Secret = f.obj
    key = f.body.attr("key", "str")
    value = f.body.attr("value", "str", default=CORRUPTED_VALUE)
    if not secret.data:
        f.error("E2011", f"secret `{secret.name}` holds no data to corrupt", f.fault.target.span, "empty secret")
        return None
    if key is not None and key not in secret.data:
        hint = did_you_mean(key, list(secret.data))
        f.error("E2011", f"secret `{secret.name}` has no key `{key}`", f.body.attr_span("key"), "no such key",
                help=f"did you mean `{hint}`?" if hint else "its keys: " + ", ".join(secret.data))
        return None
    if value is None:
        return None
    keys = [key] if key is not None else sorted(secret.data)
    if all(secret.data[k] == value for k in keys):
        f.error("E2027", f"the secret already holds `{value}`: the fault would change nothing",
                f.body.attr_span("value"), "same value")
        return None
    created = created_by_fault(f)  # a secret an earlier fault creates: the workloads it made read it
    readers = sorted({*_secret_readers(f, secret), *(created.readers if created is not None else ())})
    if not readers:
        f.error("E2011", f"no workload of the topology reads secret `{secret.name}`: corrupting it would break nothing",
                f.fault.target.span, "read by no workload",
                help="corrupt a secret a container reads (`secret_key(...)` in its env, or a secret volume)")
        return None
    args = {"keys": keys, "value": value, "readers": readers}
    if created is not None:
        args["created"] = copy.deepcopy(created.manifest)
    return Checked(args, {"kubernetesObject": kobj(f.target)}, agent_namespaces=[secret.namespace],
                   agent_resources=["secrets"])


def _inject_corrupted_secret(injection, topology):
    args = injection.args
    if "created" in args:  # a secret an earlier fault creates: its manifest, corrupted
        manifest = copy.deepcopy(args["created"])
        data = manifest.setdefault("stringData", {})
        for key in args["keys"]:
            manifest.get("data", {}).pop(key, None)
            data[key] = args["value"]
        return Effect([manifest], [])

    def change(secret, args):
        for key in args["keys"]:
            secret.data[key] = args["value"]

    return patched(topology, injection, change)


def _revert_corrupted_secret(injection, topology):
    if "created" in injection.args:  # the fault that creates the secret deletes it when reverted
        return Effect([], [])
    return original(injection, topology)


# ---- valkey: changed password ----------------------------------------------------------------------------

VALKEY_SECRET = "valkey-credentials"  # the names ITBench's fault creates and its solutions name
VALKEY_SECRET_KEY = "valkey-password"
VALKEY_SCRIPT_CONFIGMAP = "valkey-storage-script"
# the script's file name and where it is mounted: named as an application names its entry point, not after what
# the script does (the agent reads both in the pod's command: agent_view.py)
VALKEY_SCRIPT = "entrypoint.sh"
VALKEY_SCRIPT_MOUNT = "/opt/valkey"
VALKEY_PASSWORD = "Hq3vT8mW2pLx"  # a password as any; no word of the fault or the harness
def _valkey_container(f: FaultInput) -> ir.Container | None:
    container = pick_container(f)
    if container is None:
        return None
    image = container.image.rsplit("/", 1)[-1].split(":", 1)[0].split("@", 1)[0]
    if image not in ("valkey", "redis"):
        f.error("E2011", f"container `{container.name}` runs `{container.image}`, not Valkey", f.fault.target.span,
                "not a Valkey workload", help="target the workload that runs the valkey (or redis) image, such as "
                "`valkey-cart`")
        return None
    return container


def _check_valkey_password(f: FaultInput) -> Checked | None:
    container = _valkey_container(f)
    if container is None:
        return None
    if "--requirepass" in container.args or "--requirepass" in container.command:
        f.error("E2011", f"container `{container.name}` already requires a password", f.fault.target.span,
                "already password-protected", help="the fault sets a password on a Valkey that has none")
        return None
    workload: ir.Workload = f.obj
    secret = ir.ObjectRef("v1", "Secret", workload.namespace, VALKEY_SECRET)
    checked = Checked({"container": container.name, "password": VALKEY_PASSWORD},
                      {"container": {"name": container.name}, "kubernetesObject": kobj(f.target)}, created=[secret],
                      agent_namespaces=[workload.namespace], agent_resources=["secrets"])
    # the faults after this one may act on the Secret the injection creates (ITBench names it in its solutions)
    return provide(f, checked, ir.Secret(VALKEY_SECRET, workload.namespace, {VALKEY_SECRET_KEY: VALKEY_PASSWORD}),
                   _valkey_secret_manifest(workload.namespace, VALKEY_PASSWORD), readers=[workload.name])


def _valkey_secret_manifest(namespace: str, password: str) -> dict:
    return {"apiVersion": "v1", "kind": "Secret",
            "metadata": {"name": VALKEY_SECRET, "namespace": namespace},
            "type": "Opaque", "stringData": {VALKEY_SECRET_KEY: password}}


def _valkey_secret(injection: ir.Injection) -> dict:
    return _valkey_secret_manifest(injection.target.namespace, injection.args["password"])


def _inject_valkey_password(injection, topology):
    def change(workload, args):
        container = container_named(workload, args["container"])
        container.env.append(ir.EnvVar("VALKEY_PASSWORD", value_from={
            "secretKeyRef": {"name": VALKEY_SECRET, "key": VALKEY_SECRET_KEY}}))
        # the image's entrypoint runs valkey-server when the first argument is an option
        container.args = [*container.args, "--requirepass", "$(VALKEY_PASSWORD)"]

    effect = patched(topology, injection, change)
    return Effect([_valkey_secret(injection), *effect.apply], [])


def _revert_with_created(injection, topology):
    return Effect([copy.deepcopy(find_object(topology, injection.target))], list(injection.created))


# ---- valkey: out of memory -------------------------------------------------------------------------------

VALKEY_OOM_SCRIPT = """#!/bin/sh
valkey-server "$@" &
data=valkey
while true; do
  data="$data$data"
done
"""


def _check_valkey_oom(f: FaultInput) -> Checked | None:
    container = _valkey_container(f)
    if container is None:
        return None
    if "memory" not in container.resources.get("limits", {}):
        f.error("E2028", f"container `{container.name}` has no memory limit: the memory-consuming process would not "
                "be OOM-killed, it would starve the node instead", f.fault.target.span, "no memory limit",
                help="add `resources { limits { memory = 64Mi } }` to the container")
        return None
    workload: ir.Workload = f.obj
    configmap = ir.ObjectRef("v1", "ConfigMap", workload.namespace, VALKEY_SCRIPT_CONFIGMAP)
    checked = Checked({"container": container.name, "configmap": VALKEY_SCRIPT_CONFIGMAP, "script": VALKEY_SCRIPT,
                       "mount_path": VALKEY_SCRIPT_MOUNT},
                      {"container": {"name": container.name}, "kubernetesObject": kobj(f.target)}, created=[configmap])
    manifest = _valkey_oom_configmap(workload.namespace, VALKEY_SCRIPT_CONFIGMAP, VALKEY_SCRIPT)
    return provide(f, checked, ir.ConfigMap(VALKEY_SCRIPT_CONFIGMAP, workload.namespace,
                                            dict(manifest["data"])),
                   manifest, readers=[workload.name])


def _valkey_oom_configmap(namespace: str, name: str, script: str) -> dict:
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": name, "namespace": namespace},
            "data": {script: VALKEY_OOM_SCRIPT}}


def _inject_valkey_oom(injection, topology):
    args = injection.args

    def change(workload, args):
        container = container_named(workload, args["container"])
        workload.volumes = [*workload.volumes, {"name": "storage-script",
                                                "configMap": {"name": args["configmap"], "defaultMode": 0o755}}]
        container.volume_mounts = [*container.volume_mounts, {"name": "storage-script",
                                                              "mountPath": args["mount_path"], "readOnly": True}]
        container.command = ["/bin/sh", f"{args['mount_path']}/{args['script']}"]

    configmap = _valkey_oom_configmap(injection.target.namespace, args["configmap"], args["script"])
    effect = patched(topology, injection, change)
    return Effect([configmap, *effect.apply], [])


FAULTS = [
    FaultKind(
        "feature_flag", "opentelemetry-demo-feature-flag", "configmap.flagd.defaultVariant:changed", ("configmap",),
        "Turns on one of the OpenTelemetry Demo's implemented failures by changing a flagd feature flag's default "
        "variant.",
        _check_feature_flag, _inject_feature_flag, original,
        args=(Arg("flag", "string", required=True, help="the flag's name in flagd's JSON, e.g. `cartFailure`"),
              Arg("state", "string", required=True, help="the variant to make the default, e.g. `on` or `100%`")),
        preconditions=("The configmap is `flagd-config` and holds flagd's flag definitions.",
                       "The flag is defined there.", "The flag has the variant.",
                       "The variant is not already the flag's default.",
                       "The fault's group restarts flagd, and the deployment that reads the flag, after the injection."),
        needs_waiters=_feature_flag_waiters,
        labels=("application", "code_defect"),
        symptoms=('requests',),
    ),
    FaultKind(
        "corrupted_secret", "corrupted-kubernetes-secret-credentials", "secret.data:corrupted", ("secret",),
        "Replaces the credentials in a secret with invalid ones, so the workloads that read it fail to authenticate.",
        _check_corrupted_secret, _inject_corrupted_secret, _revert_corrupted_secret,
        args=(Arg("key", "string", default="every key", help="the key of the secret to corrupt"),
              Arg("value", "string", default=f"`{CORRUPTED_VALUE}`", help="the invalid value written in its place")),
        preconditions=("The secret holds data, and the key when one is named.",
                       "The new value differs from the current one.",
                       "A workload of the topology reads the secret.",
                       "The secret is the topology's, or one an earlier fault of the scenario creates (the valkey "
                       "password's `valkey-credentials`): then the workloads that fault makes read it count."),
        labels=("application", "authentication_issue"),
        symptoms=('requests', 'restarts'),
    ),
    FaultKind(
        "valkey_changed_password", "valkey-workload-changed-password", "valkey.password:changed",
        ("deployment", "statefulset"),
        "Sets a password on a Valkey workload its clients do not know, so they cannot authenticate.",
        _check_valkey_password, _inject_valkey_password, _revert_with_created,
        args=(Arg("container", "string", help="the Valkey container; required when the workload has several"),),
        preconditions=("The container exists and runs the valkey (or redis) image.",
                       "The container does not already require a password."),
        creates=f"Secret `{VALKEY_SECRET}` (key `{VALKEY_SECRET_KEY}`) in the workload's namespace, read by the "
                "container's new `--requirepass`; the faults after it may target the Secret",
        labels=("application", "authentication_issue"),
        symptoms=('requests',),
        # judged by whether valkey still asks a password: the Secret's value emptied, or the arguments removed
        harm_option="--requirepass",
    ),
    FaultKind(
        "valkey_out_of_memory", "valkey-workload-out-of-memory", "valkey.container.memory:exhausted",
        ("deployment", "statefulset"),
        "Runs a memory-consuming process next to Valkey, so the container is OOM-killed and crash-loops.",
        _check_valkey_oom, _inject_valkey_oom, _revert_with_created,
        args=(Arg("container", "string", help="the Valkey container; required when the workload has several"),),
        preconditions=("The container exists and runs the valkey (or redis) image.",
                       "The container has a memory limit."),
        creates=f"ConfigMap `{VALKEY_SCRIPT_CONFIGMAP}` holding the script the container now runs; the statements "
                "after it may name the ConfigMap",
        readiness="crash",
        symptoms=('restarts',),
    ),
]
