"""A local Kubernetes control plane, built from the components' own Go modules.

- `go/`: a small Go module (`itbench.dev/localcluster`) whose one binary holds etcd (its `embed`
  package), kube-apiserver, kube-controller-manager and kube-scheduler (their `app` packages of
  `k8s.io/kubernetes`), kwok's controller (`sigs.k8s.io/kwok`: fake nodes, pod status by its Stages),
  kubectl, and a `certs` command for the cluster's CA, certificates and service-account key. The
  versions are pinned in its go.mod and go.sum. It ships inside the package as data.
- `build.py`: finding `go`, building that module into a cache folder keyed by the sources' digest,
  with progress on standard error; the clear error when Go is absent.
- `plane.py`: `up(dir)` starts the components on free loopback ports and waits until they are ready;
  `down(dir)` stops them and removes what `up` wrote.

Only the standard library is used: the package needs no extra dependency for this.
"""

from __future__ import annotations

from .build import LocalClusterError, binary_path, build, find_go
from .plane import LocalCluster, down, up

__all__ = ["LocalClusterError", "LocalCluster", "binary_path", "build", "down", "find_go", "up"]
