package kube

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// Down stops the cluster kept in dir and removes everything it made: its
// processes and its pods' processes, mounts, network namespaces and
// cgroups, the bridge, its iptables chains, CNI's cached results, and dir.
// It works on a cluster that only partly started, and does nothing for
// one that is gone.
func Down(dir string, log io.Writer) error {
	if log == nil {
		log = io.Discard
	}
	if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	started := time.Time{}
	if b, err := os.ReadFile(filepath.Join(dir, "started")); err == nil {
		started, _ = time.Parse(time.RFC3339Nano, string(b))
	}
	var errs []error
	note := func(err error) {
		if err != nil {
			errs = append(errs, err)
		}
	}
	// Pods first, while the kubelet can still tear their networks down.
	// Nothing recreates them once the controllers are gone.
	stop(dir, log, sandboxController)
	stop(dir, log, "kube-controller-manager")
	deletePods(dir, log)
	for _, name := range []string{"kube-proxy", "kubelet", "kube-scheduler", "kube-apiserver"} {
		stop(dir, log, name)
	}
	note(removeContainers(dir, log))
	killCgroups()
	stop(dir, log, "containerd")
	killShims(dir)
	stop(dir, log, "etcd")
	note(cleanIptables(dir, log))
	if err := run("ip", "link", "show", Bridge); err == nil {
		note(run("ip", "link", "del", Bridge))
	}
	note(unmountUnder(dir))
	note(removeNetns(started))
	note(removeCgroups())
	removeCNIResults()
	removeContainerLogLinks(dir)
	if b, err := os.ReadFile(filepath.Join(dir, "host-paths")); err == nil {
		for _, p := range strings.Fields(string(b)) {
			if slices.Contains(hostPaths, p) { // never anything else, whatever the file says
				note(os.RemoveAll(p))
			}
		}
	}
	note(os.RemoveAll(dir))
	if len(errs) == 0 {
		fmt.Fprintf(log, "kube: cluster in %s removed\n", dir)
	}
	return errors.Join(errs...)
}

// stop ends a component: SIGTERM, then SIGKILL after 10 s.
func stop(dir string, log io.Writer, name string) {
	pid, err := readPid(filepath.Join(dir, "pids", name))
	if err != nil || !running(pid) {
		return
	}
	_ = syscall.Kill(pid, syscall.SIGTERM)
	deadline := time.Now().Add(10 * time.Second)
	for running(pid) && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if running(pid) {
		fmt.Fprintf(log, "kube: %s ignored SIGTERM for 10 s; killing it\n", name)
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
}

func running(pid int) bool { return syscall.Kill(pid, 0) == nil && !zombie(pid) }

// deletePods deletes every pod, if the API server answers, and waits (up
// to 60 s) for the kubelet to have stopped them all.
func deletePods(dir string, log io.Writer) {
	config, err := restConfig(filepath.Join(dir, "admin.kubeconfig"))
	if err != nil {
		return
	}
	config.Timeout = 5 * time.Second
	client, err := kubernetes.NewForConfig(config)
	if err != nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	pods, err := client.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
	if err != nil || len(pods.Items) == 0 {
		return
	}
	grace := int64(1)
	for _, p := range pods.Items {
		_ = client.CoreV1().Pods(p.Namespace).Delete(ctx, p.Name, metav1.DeleteOptions{GracePeriodSeconds: &grace})
	}
	for ctx.Err() == nil {
		left, err := client.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
		if err != nil || len(left.Items) == 0 {
			return
		}
		time.Sleep(250 * time.Millisecond)
	}
	fmt.Fprintln(log, "kube: pods still present after 60 s; removing their containers directly")
}

// removeContainers kills and deletes whatever containerd still runs.
func removeContainers(dir string, log io.Writer) error {
	sock := filepath.Join(dir, "containerd/containerd.sock")
	if _, err := os.Stat(sock); err != nil {
		return nil
	}
	ctr := func(args ...string) (string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		defer cancel()
		out, err := exec.CommandContext(ctx, "ctr", append([]string{"--address", sock, "-n", "k8s.io"}, args...)...).CombinedOutput()
		return string(out), err
	}
	tasks, err := ctr("tasks", "ls", "-q")
	if err != nil {
		return nil // containerd is not answering: the cgroup sweep ends the processes
	}
	for _, id := range strings.Fields(tasks) {
		_, _ = ctr("tasks", "kill", "-a", "-s", "SIGKILL", id)
		if _, err := ctr("tasks", "rm", "-f", id); err != nil {
			fmt.Fprintf(log, "kube: removing task %s: %v\n", id, err)
		}
	}
	containers, _ := ctr("containers", "ls", "-q")
	for _, id := range strings.Fields(containers) {
		_, _ = ctr("containers", "rm", id)
	}
	return nil
}

// cgroupRoots are the hierarchies that may hold the kubelet's kubepods
// tree (cgroup v1 controllers, or the v2 root).
func cgroupRoots() []string {
	var roots []string
	entries, _ := os.ReadDir("/sys/fs/cgroup")
	for _, e := range entries {
		if e.IsDir() {
			roots = append(roots, filepath.Join("/sys/fs/cgroup", e.Name(), "kubepods"))
		}
	}
	return append(roots, "/sys/fs/cgroup/kubepods")
}

// killCgroups SIGKILLs every process left in the kubelet's cgroups.
func killCgroups() {
	for round := 0; round < 20; round++ {
		found := false
		for _, root := range cgroupRoots() {
			_ = filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
				if err != nil || d.IsDir() || d.Name() != "cgroup.procs" {
					return nil
				}
				b, _ := os.ReadFile(path)
				for _, f := range strings.Fields(string(b)) {
					if pid, err := strconv.Atoi(f); err == nil {
						found = true
						_ = syscall.Kill(pid, syscall.SIGKILL)
					}
				}
				return nil
			})
		}
		if !found {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// removeCgroups removes the kubelet's cgroup trees, deepest first.
func removeCgroups() error {
	var errs []error
	for _, root := range cgroupRoots() {
		var dirs []string
		_ = filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				dirs = append(dirs, path)
			}
			return nil
		})
		sort.Slice(dirs, func(i, j int) bool { return len(dirs[i]) > len(dirs[j]) })
		for _, d := range dirs {
			if err := syscall.Rmdir(d); err != nil && !errors.Is(err, syscall.ENOENT) {
				errs = append(errs, fmt.Errorf("rmdir %s: %w", d, err))
			}
		}
	}
	return errors.Join(errs...)
}

// killShims ends containerd's shims for this cluster (their command line
// names its socket).
func killShims(dir string) {
	sock := filepath.Join(dir, "containerd/containerd.sock")
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if bytes.Contains(cmdline, []byte("containerd-shim")) && bytes.Contains(cmdline, []byte(sock)) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// cleanIptables removes kube-proxy's chains (kube-proxy --cleanup) and the
// CNI plugins' (CNI-*), with every rule that jumps to them.
func cleanIptables(dir string, log io.Writer) error {
	if b, err := os.ReadFile(filepath.Join(dir, "bindir")); err == nil {
		_ = exec.Command(filepath.Join(strings.TrimSpace(string(b)), "kube-proxy"), "--cleanup").Run()
	}
	var errs []error
	for _, tool := range []string{"iptables", "ip6tables"} {
		saved, err := exec.Command(tool + "-save").Output()
		if err != nil {
			continue
		}
		var kept bytes.Buffer
		removed := 0
		for _, line := range strings.SplitAfter(string(saved), "\n") {
			if ours(line) {
				removed++
				continue
			}
			kept.WriteString(line)
		}
		if removed == 0 {
			continue
		}
		restore := exec.Command(tool + "-restore")
		restore.Stdin = &kept
		if out, err := restore.CombinedOutput(); err != nil {
			errs = append(errs, fmt.Errorf("%s-restore: %v: %s", tool, err, out))
			continue
		}
		fmt.Fprintf(log, "kube: removed %d %s lines of the cluster's chains\n", removed, tool)
	}
	return errors.Join(errs...)
}

// ours reports an iptables-save line that declares, fills or jumps to a
// chain of kube-proxy (KUBE-*) or of the CNI plugins (CNI-*).
func ours(line string) bool {
	for _, prefix := range []string{"KUBE-", "CNI-"} {
		if strings.HasPrefix(line, ":"+prefix) || strings.HasPrefix(line, "-A "+prefix) ||
			strings.Contains(line, " -j "+prefix) || strings.Contains(line, " -g "+prefix) {
			return true
		}
	}
	return false
}

// unmountUnder detaches every mount under dir, deepest first.
func unmountUnder(dir string) error {
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return err
	}
	var points []string
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) > 4 && (f[4] == dir || strings.HasPrefix(f[4], dir+"/")) {
			points = append(points, unescapeMount(f[4]))
		}
	}
	sort.Slice(points, func(i, j int) bool { return len(points[i]) > len(points[j]) })
	var errs []error
	for _, p := range slices.Compact(points) {
		if err := syscall.Unmount(p, syscall.MNT_DETACH); err != nil && !errors.Is(err, syscall.EINVAL) && !errors.Is(err, syscall.ENOENT) {
			errs = append(errs, fmt.Errorf("unmount %s: %w", p, err))
		}
	}
	return errors.Join(errs...)
}

func unescapeMount(s string) string {
	r := strings.NewReplacer(`\040`, " ", `\011`, "\t", `\012`, "\n", `\134`, `\`)
	return r.Replace(s)
}

// removeNetns removes the network namespaces CNI made for the cluster's
// pods: cni-* under /var/run/netns created since the cluster started.
func removeNetns(started time.Time) error {
	entries, err := os.ReadDir("/var/run/netns")
	if err != nil {
		return nil
	}
	var errs []error
	for _, e := range entries {
		info, err := e.Info()
		if err != nil || !strings.HasPrefix(e.Name(), "cni-") || info.ModTime().Before(started) {
			continue
		}
		p := filepath.Join("/var/run/netns", e.Name())
		_ = syscall.Unmount(p, syscall.MNT_DETACH)
		if err := os.Remove(p); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// removeCNIResults removes the results libcni cached for the cluster's
// network (named <network>-<container>-<interface>).
func removeCNIResults() {
	matches, _ := filepath.Glob(filepath.Join("/var/lib/cni/results", networkName+"-*"))
	for _, m := range matches {
		_ = os.Remove(m)
	}
}

// removeContainerLogLinks removes the kubelet's links in
// /var/log/containers that point into the cluster's pod logs.
func removeContainerLogLinks(dir string) {
	entries, _ := os.ReadDir("/var/log/containers")
	for _, e := range entries {
		p := filepath.Join("/var/log/containers", e.Name())
		if target, err := os.Readlink(p); err == nil && strings.HasPrefix(target, dir+"/") {
			_ = os.Remove(p)
		}
	}
}
