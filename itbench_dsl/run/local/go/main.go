// Command localcluster is one binary holding the components of a local Kubernetes control plane,
// each built from its upstream Go module: the first argument names the component to run.
//
//	localcluster etcd --data-dir DIR --listen-client URL --listen-peer URL [--cert-file F --key-file F --trusted-ca-file F --client-cert-auth]
//	localcluster apiserver [kube-apiserver flags]
//	localcluster controller-manager [kube-controller-manager flags]
//	localcluster scheduler [kube-scheduler flags]
//	localcluster kwok [kwok flags]
//	localcluster kwok-stages          (prints kwok's default node and pod stages)
//	localcluster kubectl [kubectl arguments]
//	localcluster certs --dir DIR      (CA, serving and client certificates, service-account key)
//	localcluster version
package main

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

var components = map[string]func(args []string) int{
	"etcd":               runEtcd,
	"apiserver":          runAPIServer,
	"controller-manager": runControllerManager,
	"scheduler":          runScheduler,
	"kwok":               runKwok,
	"kwok-stages":        runKwokStages,
	"kubectl":            runKubectl,
	"certs":              runCerts,
	"version":            runVersion,
}

func usage() {
	names := make([]string, 0, len(components))
	for name := range components {
		names = append(names, name)
	}
	sort.Strings(names)
	fmt.Fprintf(os.Stderr, "usage: %s COMPONENT [ARGS...]\ncomponents: %s\n",
		filepath.Base(os.Args[0]), strings.Join(names, ", "))
}

func main() {
	name := filepath.Base(os.Args[0])
	// Called through a link named after a component (kubectl -> localcluster), run that component.
	if _, ok := components[name]; !ok {
		if len(os.Args) < 2 {
			usage()
			os.Exit(2)
		}
		name = os.Args[1]
		os.Args = append([]string{os.Args[0] + " " + name}, os.Args[2:]...)
	}
	run, ok := components[name]
	if !ok {
		fmt.Fprintf(os.Stderr, "unknown component %q\n", name)
		usage()
		os.Exit(2)
	}
	os.Exit(run(os.Args[1:]))
}
