package main

import (
	"k8s.io/component-base/cli"
	kubectlcmd "k8s.io/kubectl/pkg/cmd"
	kubectlutil "k8s.io/kubectl/pkg/cmd/util"
	apiserver "k8s.io/kubernetes/cmd/kube-apiserver/app"
	controllermanager "k8s.io/kubernetes/cmd/kube-controller-manager/app"
	scheduler "k8s.io/kubernetes/cmd/kube-scheduler/app"
)

func runAPIServer(args []string) int {
	command := apiserver.NewAPIServerCommand()
	command.SetArgs(args)
	return cli.Run(command)
}

func runControllerManager(args []string) int {
	command := controllermanager.NewControllerManagerCommand()
	command.SetArgs(args)
	return cli.Run(command)
}

func runScheduler(args []string) int {
	command := scheduler.NewSchedulerCommand()
	command.SetArgs(args)
	return cli.Run(command)
}

func runKubectl(args []string) int {
	command := kubectlcmd.NewDefaultKubectlCommand()
	command.SetArgs(args)
	if err := cli.RunNoErrOutput(command); err != nil {
		kubectlutil.CheckErr(err)
		return 1
	}
	return 0
}
