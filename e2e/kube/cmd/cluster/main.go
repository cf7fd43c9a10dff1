// Command cluster starts and stops the throwaway single-node Kubernetes
// cluster the chart's tests run on (package kube), for use by hand:
//
//	make cluster-up     # go run ./kube/cmd/cluster up, from e2e/
//	export KUBECONFIG=/tmp/boris-kube/admin.kubeconfig
//	make cluster-down   # go run ./kube/cmd/cluster down
//
// up needs the boris images (make images) and root. bin only builds the
// Kubernetes binaries and the agent-sandbox controller (or finds them
// built) and prints where they are.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/boris-mcp/boris/e2e/kube"
)

func main() {
	dir := flag.String("dir", kube.DefaultDir, "where the cluster keeps its state")
	flag.Parse()
	if flag.NArg() != 1 || (flag.Arg(0) != "up" && flag.Arg(0) != "down" && flag.Arg(0) != "bin") {
		fmt.Fprintln(os.Stderr, "usage: cluster [-dir DIR] up|down|bin")
		os.Exit(2)
	}
	if err := run(flag.Arg(0), *dir); err != nil {
		fmt.Fprintln(os.Stderr, "cluster:", err)
		os.Exit(1)
	}
}

func run(what, dir string) error {
	if what == "down" {
		return kube.Down(dir, os.Stderr)
	}
	ctx := context.Background()
	e2eDir, err := os.Getwd()
	if err != nil {
		return err
	}
	bin, err := kube.Binaries(ctx, filepath.Join(e2eDir, "kube", "k8sbin"), os.Stderr)
	if err != nil {
		return err
	}
	if what == "bin" {
		ctrl, err := kube.SandboxController(ctx, filepath.Join(e2eDir, "kube", "sandboxbin"), os.Stderr)
		if err != nil {
			return err
		}
		fmt.Println(bin)
		fmt.Println(ctrl)
		return nil
	}
	images, err := kube.BuildImages(ctx, e2eDir, os.Stderr)
	if err != nil {
		return err
	}
	boris, err := kube.BorisImages(filepath.Join(e2eDir, "..", "helm", "boris"))
	if err != nil {
		return err
	}
	for img, tags := range boris {
		images[img] = tags
	}
	c, err := kube.Up(ctx, kube.Options{Dir: dir, BinDir: bin, Images: images, Log: os.Stderr})
	if err != nil {
		return err
	}
	fmt.Printf("export KUBECONFIG=%s\n", c.Kubeconfig)
	return nil
}
