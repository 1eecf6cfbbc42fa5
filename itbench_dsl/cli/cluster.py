"""`itbench cluster`: a local Kubernetes control plane (`up`, `down`, `build`)."""

from __future__ import annotations

import click

from .common import UserError

DEFAULT_DIR = "itbench-cluster"


@click.group("cluster")
def command() -> None:
    """A real Kubernetes control plane on this machine, for trying a bundle or an agent without a cluster.

    \b
    It runs etcd, kube-apiserver (RBAC and Node authorization, service-account tokens, admission
    with ResourceQuota, LimitRange and Pod Security), kube-controller-manager, kube-scheduler and
    kwok, which plays the nodes and the pods' status: pods are scheduled, get an IP and become
    Running and Ready, but no container runs. Everything listens on 127.0.0.1, on free ports.

    \b
    The components are built from their own Go modules (k8s.io/kubernetes, sigs.k8s.io/kwok,
    etcd), versions pinned in the package, on first use: that needs Go 1.26 or newer and takes
    several minutes once; the binary is cached (~/.cache/itbench, or $XDG_CACHE_HOME/itbench).

    \b
    Examples:
      itbench cluster up -o ./cluster          # prints the kubeconfig to use
      ./cluster/bin/kubectl --kubeconfig ./cluster/kubeconfig get nodes
      itbench run out/BUNDLE --kubeconfig ./cluster/kubeconfig --agent ./agent.sh
      itbench cluster down ./cluster
    """


def _error(exc: Exception) -> UserError:
    return UserError(str(exc))


@command.command("build")
@click.option("--force", is_flag=True, help="Build again even when the cache has the binary.")
def build_command(force: bool) -> None:
    """Build the control plane's binary into the cache, and print its path (nothing is started).

    `itbench cluster up` builds on first use all the same; this is for CI and for warming the cache.
    Needs Go 1.26 or newer; a first build takes several minutes, a cached one nothing.

    \b
    Example:
      itbench cluster build
    """
    from ..run.local import LocalClusterError, build

    try:
        path = build(force=force)
    except LocalClusterError as exc:
        raise _error(exc) from exc
    click.echo(str(path))


@command.command("up")
@click.option("-o", "--output", "directory", default=DEFAULT_DIR, show_default=True,
              type=click.Path(file_okay=False),
              help="The folder for the cluster's files (kubeconfig, certificates, etcd data, logs): new or empty.")
@click.option("--nodes", default=1, show_default=True, type=click.IntRange(1, 100), help="How many kwok nodes.")
@click.option("--timeout", default=120.0, show_default=True, type=click.FloatRange(1, 3600),
              help="Seconds to wait for the control plane to be ready (the build, if any, is not counted).")
def up_command(directory: str, nodes: int, timeout: float) -> None:
    """Start a local control plane with its files in DIR (-o), and wait until it is ready (~15 s once built).

    \b
    Examples:
      itbench cluster up -o cluster/ --nodes 3
      cluster/bin/kubectl --kubeconfig cluster/kubeconfig get pods -A

    \b
    DIR gets:
      kubeconfig   the admin's kubeconfig (group system:masters)
      bin/kubectl  the kubectl built with it
      logs/        one log per component
      state.json   the processes and ports, for `itbench cluster down DIR`
    The processes keep running after this command returns; stop them with `itbench cluster down DIR`.
    """
    from pathlib import Path

    from ..run.local import LocalClusterError, up

    try:
        cluster = up(Path(directory), nodes=nodes, timeout=timeout)
    except LocalClusterError as exc:
        raise _error(exc) from exc
    click.echo(str(cluster.kubeconfig))
    click.echo(f"kubeconfig: {cluster.kubeconfig}\nkubectl:    {cluster.dir / 'bin' / 'kubectl'} --kubeconfig "
               f"{cluster.kubeconfig} get nodes\nstop:       itbench cluster down {directory}", err=True)


@command.command("down")
@click.argument("directory", type=click.Path(file_okay=False))
def down_command(directory: str) -> None:
    """Stop the control plane that `itbench cluster up -o DIRECTORY` started, and remove the files it wrote.

    The API server's clients stop first, then the API server, then etcd: each gets SIGTERM, then SIGKILL if
    it is still running 10 seconds later.

    \b
    Example:
      itbench cluster down cluster/
    """
    from pathlib import Path

    from ..run.local import LocalClusterError, down

    try:
        down(Path(directory))
    except LocalClusterError as exc:
        raise _error(exc) from exc
