"""`validate.podSecurity`: the Pod Security Standards, as Kubernetes' pod-security-admission library checks
them (Kyverno's fork, policy/check_*.go, the `latest` version) on the pod a resource makes.

`evaluate(spec, resource)` -> (status, message): `fail` naming the checks that do not hold, `pass` when all
hold, `skip` for a resource that makes no pod. Levels: `privileged` (no check), `baseline`, `restricted`
(baseline's checks and its own; restricted volumes stand for the hostPath check). Every version is read as
`latest`; exclusions (`exclude`) are not supported (shape.py).
"""

from typing import Any

from .outcomes import FAIL, PASS, SKIP, KyvernoError

# the baseline level's lists, public: the agent's admission policy holds its pods to them (backends/manifests.node_reach)
CAPABILITIES_BASELINE = frozenset({"AUDIT_WRITE", "CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID", "KILL", "MKNOD",
                                   "NET_BIND_SERVICE", "SETFCAP", "SETGID", "SETPCAP", "SETUID", "SYS_CHROOT"})
SYSCTLS_BASELINE = frozenset({"kernel.shm_rmid_forced", "net.ipv4.ip_local_port_range", "net.ipv4.tcp_syncookies",
                              "net.ipv4.ping_group_range", "net.ipv4.ip_unprivileged_port_start",
                              "net.ipv4.ip_local_reserved_ports", "net.ipv4.tcp_keepalive_time",
                              "net.ipv4.tcp_fin_timeout", "net.ipv4.tcp_keepalive_intvl",
                              "net.ipv4.tcp_keepalive_probes", "net.ipv4.tcp_rmem", "net.ipv4.tcp_wmem"})
SELINUX_TYPES = frozenset({"", "container_t", "container_init_t", "container_kvm_t", "container_engine_t"})
_VOLUMES_RESTRICTED = frozenset({"configMap", "csi", "downwardAPI", "emptyDir", "ephemeral", "image",
                                 "persistentVolumeClaim", "projected", "secret"})
APPARMOR_ANNOTATION = "container.apparmor.security.beta.kubernetes.io/"


def _map(value: Any) -> dict:
    return value if isinstance(value, dict) else {}


def _pod(resource: dict) -> tuple[dict, dict] | None:
    """(the pod's metadata, its spec) of the pod `resource` makes; None for a resource that makes none."""
    kind = resource.get("kind")
    if kind == "Pod":
        return _map(resource.get("metadata")), _map(resource.get("spec"))
    spec = _map(resource.get("spec"))
    if kind == "CronJob":
        spec = _map(_map(spec.get("jobTemplate")).get("spec"))
    template = spec.get("template")
    if not isinstance(template, dict):
        return None
    return _map(template.get("metadata")), _map(template.get("spec"))


def _containers(spec: dict) -> list[dict]:
    return [c for key in ("initContainers", "containers", "ephemeralContainers")
            for c in (spec.get(key) if isinstance(spec.get(key), list) else []) if isinstance(c, dict)]


def _sc(holder: dict) -> dict:
    return _map(holder.get("securityContext"))


def _windows(spec: dict) -> bool:
    return _map(spec.get("os")).get("name") == "windows"


def _baseline(meta: dict, spec: dict, restricted: bool) -> list[str]:
    bad = []
    containers = _containers(spec)
    psc = _sc(spec)
    if _map(psc.get("windowsOptions")).get("hostProcess") is True or any(
            _map(_sc(c).get("windowsOptions")).get("hostProcess") is True for c in containers):
        bad.append("hostProcess")
    if any(spec.get(k) is True for k in ("hostNetwork", "hostPID", "hostIPC")):
        bad.append("host namespaces")
    if any(_sc(c).get("privileged") is True for c in containers):
        bad.append("privileged")
    if any(str(cap) not in CAPABILITIES_BASELINE
           for c in containers for cap in (_map(_sc(c).get("capabilities")).get("add") or [])):
        bad.append("non-default capabilities")
    if not restricted and any(isinstance(v, dict) and v.get("hostPath") is not None for v in spec.get("volumes") or []):
        bad.append("hostPath volumes")
    if any(isinstance(p, dict) and p.get("hostPort") not in (None, 0)
           for c in containers for p in (c.get("ports") if isinstance(c.get("ports"), list) else [])):
        bad.append("hostPort")
    annotations = _map(meta.get("annotations"))
    if any(str(k).startswith(APPARMOR_ANNOTATION) and not (v == "runtime/default" or str(v).startswith("localhost/"))
           for k, v in annotations.items()) or any(
            _map(holder.get("appArmorProfile")).get("type") not in (None, "RuntimeDefault", "Localhost")
            for holder in [psc] + [_sc(c) for c in containers]):
        bad.append("AppArmor")
    for holder in [psc] + [_sc(c) for c in containers]:
        options = holder.get("seLinuxOptions")
        if isinstance(options, dict) and (options.get("type", "") not in SELINUX_TYPES
                                          or options.get("user") or options.get("role")):
            bad.append("seLinuxOptions")
            break
    if any(_sc(c).get("procMount") not in (None, "Default") for c in containers):
        bad.append("procMount")
    if any(_map(holder.get("seccompProfile")).get("type") == "Unconfined" for holder in [psc] + [_sc(c) for c in containers]):
        bad.append("seccompProfile")
    if any(isinstance(s, dict) and s.get("name") not in SYSCTLS_BASELINE for s in psc.get("sysctls") or []):
        bad.append("forbidden sysctls")
    for c in containers:
        handlers = [_map(c.get(p)) for p in ("livenessProbe", "readinessProbe", "startupProbe")]
        handlers += [_map(_map(c.get("lifecycle")).get(p)) for p in ("postStart", "preStop")]
        if any(_map(h.get(k)).get("host") for h in handlers for k in ("httpGet", "tcpSocket")):
            bad.append("host probes and lifecycle hooks")
            break
    return bad


def _restricted(spec: dict) -> list[str]:
    bad = []
    containers = _containers(spec)
    psc = _sc(spec)
    windows = _windows(spec)
    if any(isinstance(v, dict) and not any(k in _VOLUMES_RESTRICTED for k in v if k != "name")
           for v in spec.get("volumes") or []):
        bad.append("restricted volume types")
    if not windows and any(_sc(c).get("allowPrivilegeEscalation") is not False for c in containers):
        bad.append("allowPrivilegeEscalation != false")
    # (the library relaxes these two for pods in a user namespace only behind a switch Kyverno leaves off)
    pod_non_root = psc.get("runAsNonRoot")
    if pod_non_root is False or any(_sc(c).get("runAsNonRoot") is False for c in containers) or any(
            _sc(c).get("runAsNonRoot") is None and pod_non_root is not True for c in containers):
        bad.append("runAsNonRoot != true")
    if psc.get("runAsUser") == 0 or any(_sc(c).get("runAsUser") == 0 for c in containers):
        bad.append("runAsUser=0")
    if not windows:
        valid = ("RuntimeDefault", "Localhost")
        pod_profile = psc.get("seccompProfile")
        pod_type = _map(pod_profile).get("type")
        if pod_profile is not None and pod_type not in valid or any(
                (_map(_sc(c).get("seccompProfile")).get("type") not in valid) if _sc(c).get("seccompProfile") is not None
                else pod_type not in valid for c in containers):
            bad.append("seccompProfile")
        for c in containers:
            caps = _map(_sc(c).get("capabilities"))
            if "ALL" not in [str(d) for d in caps.get("drop") or []] or any(
                    str(a) != "NET_BIND_SERVICE" for a in caps.get("add") or []):
                bad.append("unrestricted capabilities")
                break
    return bad


def evaluate(settings: dict, resource: dict) -> tuple[str, str]:
    level = str(settings.get("level") or "")
    if level not in ("privileged", "baseline", "restricted"):
        raise KyvernoError(f"podSecurity.level must be privileged, baseline or restricted, not {level!r}")
    pod = _pod(resource)
    if pod is None:
        return SKIP, "the resource makes no pod"
    meta, spec = pod
    if level == "privileged":
        return PASS, ""
    bad = _baseline(meta, spec, level == "restricted")
    if level == "restricted":
        bad += _restricted(spec)
    if bad:
        return FAIL, f"violates PodSecurity \"{level}:latest\": " + ", ".join(bad)
    return PASS, ""
