"""Starting and stopping the local control plane: `up(dir)` and `down(dir)`.

`up` writes into DIR: `pki/` (CA, certificates, service-account key; `pki/etcd/`, etcd's own CA and
certificates, readable by their owner alone), `kubeconfig` (admin, the one to
use), `conf/` (the components' kubeconfigs and kwok's stages), `etcd/` (data), `logs/` (one log per
component), `bin/kubectl` (a link to the binary, which runs kubectl under that name) and
`state.json` (pids, process start times, ports, and the paths `up` created). Every component
listens on 127.0.0.1 only, on ports chosen free; etcd answers only over TLS to the API server's client
certificate, so a process beside it (the agent's) cannot read or write the store past RBAC. `down` stops the processes of state.json (SIGTERM,
then SIGKILL after a bound; a pid is signalled only while its start time is still the recorded one)
and removes exactly those paths. Every wait has a bound.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from .build import LocalClusterError

STATE = "state.json"
SERVICE_CIDR = "10.96.0.0/16"
SERVICE_IP = "10.96.0.1"
POD_CIDR = "10.244.0.0/16"
NODE_PREFIX = "kwok-node-"
STOP_GRACE = 10.0  # seconds between SIGTERM and SIGKILL
COMPONENTS = ("etcd", "apiserver", "controller-manager", "scheduler", "kwok")
# what `up` creates inside DIR, removed by `down`
WRITES = ("pki", "conf", "etcd", "logs", "bin", "kubeconfig", STATE)


def _say(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


@dataclass
class LocalCluster:
    """A started local control plane."""

    dir: Path
    kubeconfig: Path
    server: str
    binary: Path
    state: dict = field(default_factory=dict)

    def kubectl(self, *args: str, input: str | None = None, timeout: float = 60.0) -> subprocess.CompletedProcess:
        """Run the built kubectl against this cluster (as the admin), capturing its output."""
        return subprocess.run([str(self.binary), "kubectl", "--kubeconfig", str(self.kubeconfig), *args],
                              input=input, capture_output=True, text=True, timeout=timeout)


def up(directory: Path | str, *, nodes: int = 1, timeout: float = 120.0, binary: Path | None = None,
       say: Callable[[str], None] = _say) -> LocalCluster:
    """Start a local control plane whose files live in `directory`; return when it is ready.

    Builds the binary first when the cache has none (build.build). Ready means: the API server's
    /readyz answers ok, the controller manager and the scheduler answer /healthz, `nodes` kwok nodes
    are Ready and the `default` ServiceAccount exists. On a failure, what was started is stopped and
    the error quotes the failing component's log."""
    from .build import build

    directory = Path(directory).absolute()
    _claim(directory)
    binary = Path(binary) if binary else build(say=say)
    started = time.monotonic()
    deadline = started + timeout
    state: dict = {"version": 1, "binary": str(binary), "processes": {}, "ports": {},
                   "created_dir": not directory.exists(), "writes": list(WRITES)}
    directory.mkdir(parents=True, exist_ok=True)
    for sub in ("pki", "conf", "etcd", "logs", "bin"):
        (directory / sub).mkdir(exist_ok=True)
    (directory / "pki").chmod(0o700)
    (directory / "bin" / "kubectl").symlink_to(binary)  # the binary runs the component its name says
    _write_state(directory, state)
    try:
        cluster = _start(directory, binary, state, nodes, deadline, say)
    except BaseException:
        try:
            down(directory, say=lambda _m: None)
        except LocalClusterError:
            pass
        raise
    say(f"local control plane ready in {time.monotonic() - started:.1f}s: {cluster.server}")
    return cluster


def _claim(directory: Path) -> None:
    """Refuse a folder that holds a running control plane or files that `up` did not write."""
    if not directory.exists():
        return
    if not directory.is_dir():
        raise LocalClusterError(f"{directory}: not a folder")
    state_file = directory / STATE
    if state_file.is_file():
        state = _read_state(directory)
        alive = [name for name, p in state.get("processes", {}).items() if _alive(p)]
        if alive:
            raise LocalClusterError(f"{directory}: a local control plane is running there ({', '.join(alive)}); "
                                    f"stop it with `itbench cluster down {directory}` first")
        down(directory, say=lambda _m: None)  # a stale one: clear what it wrote
        return
    foreign = sorted(p.name for p in directory.iterdir())
    if foreign:
        raise LocalClusterError(f"{directory}: the folder is not empty ({', '.join(foreign[:5])}"
                                f"{', ...' if len(foreign) > 5 else ''}); name a new or empty folder with -o")


def _start(directory: Path, binary: Path, state: dict, nodes: int, deadline: float,
           say: Callable[[str], None]) -> LocalCluster:
    pki, conf, logs = directory / "pki", directory / "conf", directory / "logs"
    ports = dict(zip(("etcd", "etcd-peer", "apiserver", "controller-manager", "scheduler"), _free_ports(5)))
    state["ports"] = ports
    _write_state(directory, state)
    server = f"https://127.0.0.1:{ports['apiserver']}"

    _check_call([str(binary), "certs", "--dir", str(pki), "--service-ip", SERVICE_IP], "certs", deadline)
    kubeconfig = directory / "kubeconfig"
    _write_kubeconfig(kubeconfig, server, pki, "admin")
    for user in ("controller-manager", "scheduler", "kwok"):
        _write_kubeconfig(conf / f"{user}.kubeconfig", server, pki, user)
    stages = _check_call([str(binary), "kwok-stages"], "kwok-stages", deadline)
    (conf / "kwok-stages.yaml").write_text(stages)

    def start(name: str, args: list[str]) -> None:
        _spawn(directory, binary, state, name, args, say)

    etcd_pki = pki / "etcd"
    start("etcd", ["--data-dir", str(directory / "etcd"),
                   "--listen-client", f"https://127.0.0.1:{ports['etcd']}",
                   "--listen-peer", f"https://127.0.0.1:{ports['etcd-peer']}",
                   "--cert-file", str(etcd_pki / "server.crt"), "--key-file", str(etcd_pki / "server.key"),
                   "--trusted-ca-file", str(etcd_pki / "ca.crt"), "--client-cert-auth"])
    etcd_client = etcd_context(pki)
    _wait(lambda: _https_ok(f"https://127.0.0.1:{ports['etcd']}/health", etcd_client), "etcd /health", ["etcd"],
          state, deadline)

    start("apiserver", [
        "--bind-address=127.0.0.1", "--advertise-address=127.0.0.1", f"--secure-port={ports['apiserver']}",
        f"--etcd-servers=https://127.0.0.1:{ports['etcd']}", f"--etcd-cafile={etcd_pki / 'ca.crt'}",
        f"--etcd-certfile={etcd_pki / 'client.crt'}", f"--etcd-keyfile={etcd_pki / 'client.key'}",
        f"--tls-cert-file={pki / 'apiserver.crt'}", f"--tls-private-key-file={pki / 'apiserver.key'}",
        f"--client-ca-file={pki / 'ca.crt'}",
        "--authorization-mode=Node,RBAC",
        "--enable-admission-plugins=NodeRestriction,LimitRanger,ResourceQuota,PodSecurity,ServiceAccount",
        "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
        f"--service-account-key-file={pki / 'sa.pub'}",
        f"--service-account-signing-key-file={pki / 'sa.key'}",
        f"--service-cluster-ip-range={SERVICE_CIDR}",
        # the kubernetes Service gets no endpoints: the API server listens on loopback only
        "--allow-privileged=true", "--endpoint-reconciler-type=none",
        "--profiling=false", "--v=1",
    ])
    admin = _admin_context(pki)
    _wait(lambda: _https_ok(f"{server}/readyz", admin), "kube-apiserver /readyz", ["etcd", "apiserver"], state,
          deadline)

    start("controller-manager", [
        f"--kubeconfig={conf / 'controller-manager.kubeconfig'}",
        f"--authentication-kubeconfig={conf / 'controller-manager.kubeconfig'}",
        f"--authorization-kubeconfig={conf / 'controller-manager.kubeconfig'}",
        "--bind-address=127.0.0.1", f"--secure-port={ports['controller-manager']}",
        "--leader-elect=false", "--use-service-account-credentials=true", "--controllers=*",
        f"--service-account-private-key-file={pki / 'sa.key'}", f"--root-ca-file={pki / 'ca.crt'}",
        f"--cluster-signing-cert-file={pki / 'ca.crt'}", f"--cluster-signing-key-file={pki / 'ca.key'}",
        f"--service-cluster-ip-range={SERVICE_CIDR}",
        "--profiling=false", "--v=1",
    ])
    start("scheduler", [
        f"--kubeconfig={conf / 'scheduler.kubeconfig'}",
        f"--authentication-kubeconfig={conf / 'scheduler.kubeconfig'}",
        f"--authorization-kubeconfig={conf / 'scheduler.kubeconfig'}",
        "--bind-address=127.0.0.1", f"--secure-port={ports['scheduler']}",
        "--leader-elect=false", "--profiling=false", "--v=1",
    ])
    start("kwok", _kwok_args(conf))
    unverified = ssl.create_default_context()
    unverified.check_hostname = False
    unverified.verify_mode = ssl.CERT_NONE  # the components' self-signed serving certificates, on loopback
    for name in ("controller-manager", "scheduler"):
        url = f"https://127.0.0.1:{ports[name]}/healthz"
        _wait(lambda url=url: _https_ok(url, unverified), f"kube-{name} /healthz", [name], state, deadline)

    names = [f"{NODE_PREFIX}{i}" for i in range(nodes)]
    for name in names:
        _create(f"{server}/api/v1/nodes", admin, _node(name))
    _wait(lambda: all(_node_ready(server, admin, n) for n in names), f"kwok node{'s' * (nodes > 1)} Ready",
          ["kwok", "apiserver"], state, deadline)
    _wait(lambda: _http_get(f"{server}/api/v1/namespaces/default/serviceaccounts/default", admin) is not None,
          "the default ServiceAccount", ["controller-manager"], state, deadline)
    state["server"] = server
    state["nodes"] = names
    _write_state(directory, state)
    return LocalCluster(directory, kubeconfig, server, binary, state)


def _spawn(directory: Path, binary: Path, state: dict, name: str, args: list[str],
           say: Callable[[str], None]) -> None:
    """Start one component, its output to logs/NAME.log, and record it in state.json."""
    logs = directory / "logs"
    log = open(logs / f"{name}.log", "ab")
    try:
        process = subprocess.Popen([str(binary), name, *args], stdin=subprocess.DEVNULL, stdout=log,
                                   stderr=subprocess.STDOUT, start_new_session=True, cwd=directory)
    finally:
        log.close()
    state["processes"][name] = {"pid": process.pid, "start": _start_time(process.pid),
                                "log": str(logs / f"{name}.log")}
    _write_state(directory, state)
    say(f"  started {name} (pid {process.pid})")


def _kwok_args(conf: Path) -> list[str]:
    return [f"--kubeconfig={conf / 'kwok.kubeconfig'}", f"--config={conf / 'kwok-stages.yaml'}",
            "--manage-all-nodes=true", f"--cidr={POD_CIDR}", "--node-ip=127.0.0.1",
            "--node-lease-duration-seconds=40"]


def restage(directory: Path | str, stages: list[dict], *, timeout: float = 30.0,
            say: Callable[[str], None] = _say) -> None:
    """Give kwok kwok's default stages plus `stages` (kwok Stage objects, first in precedence by their
    weight): its configuration is rewritten and kwok restarted, which matches every pod again. `stages`
    empty goes back to the defaults. Bounded: kwok must run again within `timeout` seconds."""
    directory = Path(directory).absolute()
    state = _read_state(directory)
    binary = Path(state["binary"])
    conf = directory / "conf"
    text = _check_call([str(binary), "kwok-stages"], "kwok-stages", time.monotonic() + timeout)
    docs = [text.strip()] + [json.dumps(s, indent=1, sort_keys=True) for s in stages]  # JSON is YAML
    temporary = conf / ".kwok-stages.yaml.tmp"
    temporary.write_text("\n---\n".join(docs) + "\n")
    os.replace(temporary, conf / "kwok-stages.yaml")
    kwok = state["processes"].get("kwok")
    if kwok is not None and _alive(kwok):
        _stop([kwok], ["kwok"], STOP_GRACE, directory)
    # the stopped kwok held the nodes' leases: a new one would wait for them to expire (40 s) before it
    # renews them, and the node controller marks a node without a renewed lease NotReady soon after
    admin = _admin_context(directory / "pki")
    for node in state.get("nodes") or []:
        _delete(f"{state['server']}/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/{node}", admin)
    _spawn(directory, binary, state, "kwok", _kwok_args(conf), lambda _m: None)
    time.sleep(1.5)  # kwok reads its configuration at start: still running after it means it took it
    if not _alive(state["processes"]["kwok"]):
        raise LocalClusterError(f"kwok exited with the new stages; the end of its log "
                                f"({state['processes']['kwok']['log']}):\n{_tail(state, 'kwok')}")
    say(f"kwok restarted with {len(stages)} stage(s) of the scenario")


def down(directory: Path | str, *, grace: float = STOP_GRACE, say: Callable[[str], None] = _say) -> list[str]:
    """Stop the processes of `directory`'s control plane and remove what `up` wrote; the names stopped."""
    directory = Path(directory).absolute()
    if not (directory / STATE).is_file():
        raise LocalClusterError(f"{directory}: no local control plane here (no {STATE}; `itbench cluster up -o "
                                f"{directory}` writes one)")
    state = _read_state(directory)
    processes = state.get("processes", {})
    # the API server's clients first, then the API server, then etcd: each stops while what it talks to runs
    stages = [[n for n in processes if n not in ("apiserver", "etcd")], ["apiserver"], ["etcd"]]
    running, killed = [], []
    for stage in stages:
        names = [n for n in stage if n in processes and _alive(processes[n])]
        running += names
        killed += _stop([processes[n] for n in names], names, grace, directory)
    for name in state.get("writes", WRITES):
        path = directory / name
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path, ignore_errors=True)
        elif path.exists() or path.is_symlink():
            path.unlink()
    if state.get("created_dir"):
        try:
            directory.rmdir()
        except OSError:
            pass
    if running:
        say(f"stopped {', '.join(running)}" + (f" ({', '.join(killed)} killed after {grace:.0f}s)" if killed else ""))
    return running


def _stop(processes: list[dict], names: list[str], grace: float, directory: Path) -> list[str]:
    """SIGTERM, then SIGKILL to those still running after `grace` seconds; the names killed."""
    for process in processes:
        _signal(process, signal.SIGTERM)
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline and any(_alive(p) for p in processes):
        time.sleep(0.05)
    stubborn = [(n, p) for n, p in zip(names, processes) if _alive(p)]
    for _name, process in stubborn:
        _signal(process, signal.SIGKILL)
    deadline = time.monotonic() + 5.0
    while time.monotonic() < deadline and any(_alive(p) for _n, p in stubborn):
        time.sleep(0.05)
    left = [(n, p) for n, p in stubborn if _alive(p)]
    if left:
        raise LocalClusterError(f"{directory}: could not stop {', '.join(n for n, _p in left)} "
                                f"(pids {', '.join(str(p['pid']) for _n, p in left)})")
    return [n for n, _p in stubborn]


# --- processes -------------------------------------------------------------------------------------------

def _start_time(pid: int) -> int | None:
    """The start time of `pid` (clock ticks since boot, /proc/PID/stat field 22), None where unknown."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return int(stat.rpartition(")")[2].split()[19])


def _alive(process: dict) -> bool:
    """Whether the recorded process still runs (not a zombie, and the pid not reused since)."""
    pid = process.get("pid")
    if not isinstance(pid, int) or pid <= 0:
        return False
    try:  # reap it when it is our child
        done, _ = os.waitpid(pid, os.WNOHANG)
        if done == pid:
            return False
    except ChildProcessError:
        pass
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    except OSError:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            pass
        return True
    fields = stat.rpartition(")")[2].split()
    if fields[0] == "Z":
        return False
    recorded = process.get("start")
    return recorded is None or int(fields[19]) == recorded


def _signal(process: dict, sig: int) -> None:
    if not _alive(process):
        return
    try:
        os.killpg(process["pid"], sig)  # each component leads its own session and group
    except (ProcessLookupError, PermissionError):
        try:
            os.kill(process["pid"], sig)
        except (ProcessLookupError, PermissionError):
            pass


def _check_call(command: list[str], what: str, deadline: float) -> str:
    try:
        out = subprocess.run(command, capture_output=True, text=True, stdin=subprocess.DEVNULL,
                             timeout=max(1.0, deadline - time.monotonic()))
    except subprocess.TimeoutExpired as exc:
        raise LocalClusterError(f"{what}: no answer in time") from exc
    except OSError as exc:
        raise LocalClusterError(f"{what}: cannot run {command[0]}: {exc}") from exc
    if out.returncode != 0:
        raise LocalClusterError(f"{what} failed (exit {out.returncode}): {out.stderr.strip()[-2000:]}")
    return out.stdout


def _wait(ready: Callable[[], bool], what: str, watch: list[str], state: dict, deadline: float) -> None:
    """Poll `ready` until it holds; fail when a watched component exits or the deadline passes."""
    while True:
        for name in state["processes"]:
            if not _alive(state["processes"][name]):
                raise LocalClusterError(f"{name} exited while waiting for {what}; the end of its log "
                                        f"({state['processes'][name]['log']}):\n{_tail(state, name)}")
        try:
            if ready():
                return
        except OSError:
            pass
        if time.monotonic() > deadline:
            logs = "\n".join(f"--- {n} ({state['processes'][n]['log']}):\n{_tail(state, n)}"
                             for n in watch if n in state["processes"])
            raise LocalClusterError(f"timed out waiting for {what}; the end of the logs:\n{logs}")
        time.sleep(0.2)


def _tail(state: dict, name: str, lines: int = 20) -> str:
    try:
        text = Path(state["processes"][name]["log"]).read_text(errors="replace")
    except OSError:
        return "(no log)"
    return "\n".join(text.splitlines()[-lines:]) or "(empty log)"


def _free_ports(count: int) -> list[int]:
    sockets = []
    try:
        for _ in range(count):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.bind(("127.0.0.1", 0))
            sockets.append(s)
        return [s.getsockname()[1] for s in sockets]
    finally:
        for s in sockets:
            s.close()


# --- files -----------------------------------------------------------------------------------------------

def _read_state(directory: Path) -> dict:
    try:
        state = json.loads((directory / STATE).read_text())
    except (OSError, ValueError) as exc:
        raise LocalClusterError(f"{directory / STATE}: unreadable ({exc})") from exc
    if not isinstance(state, dict) or not isinstance(state.get("processes"), dict):
        raise LocalClusterError(f"{directory / STATE}: not a state file of `itbench cluster up`")
    return state


def _write_state(directory: Path, state: dict) -> None:
    temporary = directory / f".{STATE}.tmp"
    temporary.write_text(json.dumps(state, indent=2, sort_keys=True) + "\n")
    os.replace(temporary, directory / STATE)


def _write_kubeconfig(path: Path, server: str, pki: Path, user: str) -> None:
    config = {
        "apiVersion": "v1", "kind": "Config", "preferences": {},
        "clusters": [{"name": "itbench-local", "cluster": {
            "server": server, "certificate-authority": str(pki / "ca.crt")}}],
        "users": [{"name": user, "user": {
            "client-certificate": str(pki / f"{user}.crt"), "client-key": str(pki / f"{user}.key")}}],
        "contexts": [{"name": "itbench-local", "context": {"cluster": "itbench-local", "user": user}}],
        "current-context": "itbench-local",
    }
    path.write_text(json.dumps(config, indent=2) + "\n")
    path.chmod(0o600)


# --- HTTP ------------------------------------------------------------------------------------------------

def _admin_context(pki: Path) -> ssl.SSLContext:
    context = ssl.create_default_context(cafile=str(pki / "ca.crt"))
    context.load_cert_chain(str(pki / "admin.crt"), str(pki / "admin.key"))
    return context


def etcd_context(pki: Path) -> ssl.SSLContext:
    """TLS as the one client etcd answers (the API server's certificate of etcd's own CA, pki/etcd/)."""
    context = ssl.create_default_context(cafile=str(pki / "etcd" / "ca.crt"))
    context.load_cert_chain(str(pki / "etcd" / "client.crt"), str(pki / "etcd" / "client.key"))
    return context


def _https_ok(url: str, context: ssl.SSLContext) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=3, context=context) as answer:
            return answer.status == 200
    except (urllib.error.URLError, OSError, ValueError):
        return False


def _http_get(url: str, context: ssl.SSLContext) -> dict | None:
    try:
        with urllib.request.urlopen(url, timeout=5, context=context) as answer:
            return json.loads(answer.read())
    except (urllib.error.URLError, OSError, ValueError):
        return None


def _create(url: str, context: ssl.SSLContext, body: dict) -> None:
    request = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST",
                                     headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=10, context=context):
            return
    except urllib.error.HTTPError as exc:
        if exc.code == 409:  # exists
            return
        raise LocalClusterError(f"POST {url}: HTTP {exc.code}: {exc.read()[:500].decode(errors='replace')}") from exc
    except (urllib.error.URLError, OSError) as exc:
        raise LocalClusterError(f"POST {url}: {exc}") from exc


def _delete(url: str, context: ssl.SSLContext) -> None:
    """DELETE `url`; one already gone is fine."""
    request = urllib.request.Request(url, method="DELETE")
    try:
        with urllib.request.urlopen(request, timeout=10, context=context):
            return
    except urllib.error.HTTPError as exc:
        if exc.code == 404:
            return
        raise LocalClusterError(f"DELETE {url}: HTTP {exc.code}: {exc.read()[:500].decode(errors='replace')}") from exc
    except (urllib.error.URLError, OSError) as exc:
        raise LocalClusterError(f"DELETE {url}: {exc}") from exc


def _node(name: str) -> dict:
    """A node for kwok to manage (kwok's node-initialize stage fills its status: Ready, addresses)."""
    return {
        "apiVersion": "v1", "kind": "Node",
        "metadata": {
            "name": name,
            "annotations": {"node.alpha.kubernetes.io/ttl": "0", "kwok.x-k8s.io/node": "fake"},
            "labels": {"kubernetes.io/hostname": name, "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64",
                       "kubernetes.io/role": "agent", "node-role.kubernetes.io/agent": "", "type": "kwok"},
        },
        "status": {
            "allocatable": {"cpu": "32", "memory": "256Gi", "pods": "110"},
            "capacity": {"cpu": "32", "memory": "256Gi", "pods": "110"},
        },
    }


def _node_ready(server: str, context: ssl.SSLContext, name: str) -> bool:
    node = _http_get(f"{server}/api/v1/nodes/{name}", context)
    conditions = ((node or {}).get("status") or {}).get("conditions") or []
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions)
