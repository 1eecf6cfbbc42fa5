package main

import (
	"fmt"
	"os"
	"runtime/debug"
)

// runVersion prints the versions of the modules the components come from.
func runVersion(args []string) int {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		fmt.Fprintln(os.Stderr, "version: no build information")
		return 1
	}
	fmt.Printf("go %s\n", info.GoVersion)
	wanted := map[string]bool{
		"k8s.io/kubernetes": true, "k8s.io/kubectl": true, "sigs.k8s.io/kwok": true,
		"go.etcd.io/etcd/server/v3": true,
	}
	for _, dep := range info.Deps {
		if wanted[dep.Path] {
			version := dep.Version
			if dep.Replace != nil {
				version = dep.Replace.Version
			}
			fmt.Printf("%s %s\n", dep.Path, version)
		}
	}
	return 0
}
