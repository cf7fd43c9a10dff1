package e2e

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/release"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/cli-runtime/pkg/genericclioptions"

	"github.com/boris-mcp/boris/e2e/kube"
)

// The chart on a real Kubernetes: a single-node cluster started on this
// machine (package kube) for the tests that need it, with the boris
// images, a locally built pause image and the sidecar agent loaded into
// its containerd. Every release goes into its own namespace enforcing the
// Pod Security "restricted" profile, installed with Helm's Go packages.

var (
	clusterOnce sync.Once
	theCluster  *kube.Cluster
	clusterErr  error
)

// requireCluster starts the cluster on first use. It needs root; without
// it the test is skipped, except under CI, where that fails it. Call it
// after t.Parallel: the cluster then starts once the sequential tests are
// done, so it does not run beside the tenant tests, which measure latency.
func requireCluster(t *testing.T) *kube.Cluster {
	t.Helper()
	if os.Geteuid() != 0 {
		if inCI() {
			t.Fatal("CI is set and the Kubernetes tests need root")
		}
		t.Skip("the test cluster needs root")
	}
	requireImages(t)
	clusterOnce.Do(func() {
		ctx := context.Background()
		e2eDir := filepath.Join(repoRoot, "e2e")
		bin, err := kube.Binaries(ctx, filepath.Join(e2eDir, "kube", "k8sbin"), os.Stderr)
		if err != nil {
			clusterErr = err
			return
		}
		images, err := kube.BuildImages(ctx, e2eDir, os.Stderr)
		if err != nil {
			clusterErr = err
			return
		}
		boris, err := kube.BorisImages(chartDir())
		if err != nil {
			clusterErr = err
			return
		}
		for img, tags := range boris {
			images[img] = tags
		}
		// The toolchain images of the real-work tests, under their own names.
		images[imagePython], images[imageGo] = nil, nil
		theCluster, clusterErr = kube.Up(ctx, kube.Options{Dir: kube.DefaultDir, BinDir: bin, Images: images, Log: os.Stderr})
	})
	if clusterErr != nil {
		t.Fatalf("test cluster: %v", clusterErr)
	}
	return theCluster
}

// stopCluster takes the cluster down after the tests (from TestMain).
func stopCluster() {
	if theCluster != nil {
		if err := kube.Down(theCluster.Dir, os.Stderr); err != nil {
			fmt.Fprintln(os.Stderr, "kube: taking the test cluster down:", err)
		}
	}
}

// restrictedNamespace makes a namespace that enforces the Pod Security
// "restricted" profile, deleted when the test ends.
func restrictedNamespace(t *testing.T, c *kube.Cluster, name string) string {
	t.Helper()
	ctx := context.Background()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{
		"pod-security.kubernetes.io/enforce":         "restricted",
		"pod-security.kubernetes.io/enforce-version": "latest",
	}}}
	if _, err := c.Client.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = c.Client.CoreV1().Namespaces().Delete(context.Background(), name, metav1.DeleteOptions{})
	})
	return name
}

// kubeRelease is a Helm release of the chart on the cluster.
type kubeRelease struct {
	c        *kube.Cluster
	ns, name string
	cfg      *action.Configuration
	rel      *release.Release
}

func helmConfig(t *testing.T, c *kube.Cluster, ns string) *action.Configuration {
	t.Helper()
	flags := genericclioptions.NewConfigFlags(false)
	flags.KubeConfig, flags.Namespace = &c.Kubeconfig, &ns
	cfg := new(action.Configuration)
	if err := cfg.Init(flags, ns, "secret", func(string, ...any) {}); err != nil {
		t.Fatal(err)
	}
	return cfg
}

// helmInstall installs the chart with values files (relative to the
// chart) and --set assignments, and waits for its Deployment to be
// available through its probes.
func helmInstall(t *testing.T, c *kube.Cluster, ns, name string, files []string, set ...string) *kubeRelease {
	t.Helper()
	vals, err := chartValues(files, set)
	if err != nil {
		t.Fatal(err)
	}
	ch, err := loader.Load(chartDir())
	if err != nil {
		t.Fatal(err)
	}
	r := &kubeRelease{c: c, ns: ns, name: name, cfg: helmConfig(t, c, ns)}
	inst := action.NewInstall(r.cfg)
	inst.ReleaseName, inst.Namespace = name, ns
	inst.Wait, inst.Timeout = true, 3*time.Minute
	start := time.Now()
	if r.rel, err = inst.Run(ch, vals); err != nil {
		t.Fatalf("helm install %s %v: %v\n%s", name, files, err, r.diagnose())
	}
	t.Logf("helm install %s %v %v: Ready in %s", name, files, set, time.Since(start).Round(10*time.Millisecond))
	return r
}

func (r *kubeRelease) upgrade(t *testing.T, files []string, set ...string) {
	t.Helper()
	vals, err := chartValues(files, set)
	if err != nil {
		t.Fatal(err)
	}
	ch, err := loader.Load(chartDir())
	if err != nil {
		t.Fatal(err)
	}
	up := action.NewUpgrade(r.cfg)
	up.Namespace, up.Wait, up.Timeout = r.ns, true, 3*time.Minute
	if r.rel, err = up.Run(r.name, ch, vals); err != nil {
		t.Fatalf("helm upgrade %s: %v\n%s", r.name, err, r.diagnose())
	}
}

func (r *kubeRelease) uninstall(t *testing.T) {
	t.Helper()
	un := action.NewUninstall(r.cfg)
	un.Wait, un.Timeout = true, 2*time.Minute
	if _, err := un.Run(r.name); err != nil {
		t.Fatalf("helm uninstall %s: %v", r.name, err)
	}
}

func (r *kubeRelease) fullname() string {
	if strings.Contains(r.name, "boris") {
		return r.name
	}
	return r.name + "-boris"
}

func (r *kubeRelease) selector() string {
	return labels.Set{"app.kubernetes.io/instance": r.name, "app.kubernetes.io/name": "boris"}.String()
}

// pods returns the release's pods that are not being deleted.
func (r *kubeRelease) pods(t *testing.T) []corev1.Pod {
	t.Helper()
	list, err := r.c.Client.CoreV1().Pods(r.ns).List(context.Background(), metav1.ListOptions{LabelSelector: r.selector()})
	if err != nil {
		t.Fatal(err)
	}
	var live []corev1.Pod
	for _, p := range list.Items {
		if p.DeletionTimestamp == nil {
			live = append(live, p)
		}
	}
	return live
}

// readyPod waits for exactly one Ready pod of the release other than
// those named in not, and returns it.
func (r *kubeRelease) readyPod(t *testing.T, not ...string) corev1.Pod {
	t.Helper()
	deadline := time.Now().Add(3 * time.Minute)
	for {
		var ready []corev1.Pod
		for _, p := range r.pods(t) {
			if podReady(p) && !contains(not, p.Name) {
				ready = append(ready, p)
			}
		}
		if len(ready) == 1 {
			return ready[0]
		}
		if time.Now().After(deadline) {
			t.Fatalf("no single Ready pod of %s (not %v) after 3 min\n%s", r.name, not, r.diagnose())
		}
		time.Sleep(250 * time.Millisecond)
	}
}

func podReady(p corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// diagnose describes the namespace's pods and events, for a failure.
func (r *kubeRelease) diagnose() string {
	ctx := context.Background()
	var b strings.Builder
	pods, _ := r.c.Client.CoreV1().Pods(r.ns).List(ctx, metav1.ListOptions{})
	for _, p := range pods.Items {
		fmt.Fprintf(&b, "pod %s: %s\n", p.Name, p.Status.Phase)
		for _, cs := range p.Status.ContainerStatuses {
			fmt.Fprintf(&b, "  container %s ready=%v restarts=%d state=%+v last=%+v\n", cs.Name, cs.Ready, cs.RestartCount, cs.State, cs.LastTerminationState)
			logs, _ := r.c.Client.CoreV1().Pods(r.ns).GetLogs(p.Name, &corev1.PodLogOptions{Container: cs.Name, TailLines: ptr(int64(20))}).DoRaw(ctx)
			fmt.Fprintf(&b, "  log: %s\n", bytes.TrimSpace(logs))
		}
	}
	slices, _ := r.c.Client.DiscoveryV1().EndpointSlices(r.ns).List(ctx, metav1.ListOptions{})
	for _, sl := range slices.Items {
		for _, e := range sl.Endpoints {
			fmt.Fprintf(&b, "endpointslice %s: %v ready=%v\n", sl.Name, e.Addresses, e.Conditions.Ready != nil && *e.Conditions.Ready)
		}
	}
	for _, p := range pods.Items {
		if resp, err := http.Get("http://" + p.Status.PodIP + ":8080/health"); err == nil {
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			fmt.Fprintf(&b, "pod %s at %s: /health %s %s\n", p.Name, p.Status.PodIP, resp.Status, body)
		} else {
			fmt.Fprintf(&b, "pod %s at %s: /health %v\n", p.Name, p.Status.PodIP, err)
		}
	}
	events, _ := r.c.Client.CoreV1().Events(r.ns).List(ctx, metav1.ListOptions{})
	for _, e := range events.Items {
		fmt.Fprintf(&b, "event %s %s: %s %s\n", e.InvolvedObject.Kind, e.InvolvedObject.Name, e.Reason, e.Message)
	}
	return b.String()
}

func ptr[T any](v T) *T { return &v }

// token reads the bearer token from the Secret the release uses.
func (r *kubeRelease) token(t *testing.T, secret, key string) string {
	t.Helper()
	s, err := r.c.Client.CoreV1().Secrets(r.ns).Get(context.Background(), secret, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Data[key]) == 0 {
		t.Fatalf("secret %s has no %q", secret, key)
	}
	return string(s.Data[key])
}

// serviceURL is the release's Service, reached from this machine through
// its cluster IP (kube-proxy routes it to a pod).
func (r *kubeRelease) serviceURL(t *testing.T) string {
	t.Helper()
	svc, err := r.c.Client.CoreV1().Services(r.ns).Get(context.Background(), r.fullname(), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	url := fmt.Sprintf("http://%s:%d", svc.Spec.ClusterIP, svc.Spec.Ports[0].Port)
	// A Ready pod reaches kube-proxy's rules a moment later (through its
	// EndpointSlice). Until then the cluster IP is not routed here, and a
	// connection may reach whatever the machine's network puts there (this
	// one has a proxy answering 404): poll on fresh connections, so that
	// none is kept and reused.
	poll := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := poll.Get(url + "/health")
		if err == nil {
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return url
			}
			err = fmt.Errorf("%s %v: %s", resp.Status, resp.Header, body)
		}
		if time.Now().After(deadline) {
			t.Fatalf("the Service %s does not answer after 30 s: %v\n%s", url, err, r.diagnose())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// emptyDirPath is where a pod's emptyDir volume lives on the node.
func emptyDirPath(c *kube.Cluster, pod corev1.Pod, volume string) string {
	return filepath.Join(c.Dir, "kubelet/root/pods", string(pod.UID), "volumes/kubernetes.io~empty-dir", volume)
}

// hostPathVolume makes a PersistentVolume backed by a directory on the
// node, writable by boris's user, for a claim in ns (or for any claim of
// the storage class when claim is "").
func hostPathVolume(t *testing.T, c *kube.Cluster, name, class, ns, claim string, size string) string {
	t.Helper()
	dir := filepath.Join(c.Dir, "volumes", name)
	if err := os.MkdirAll(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	pv := &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.PersistentVolumeSpec{
			Capacity:                      corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(size)},
			AccessModes:                   []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimDelete,
			StorageClassName:              class,
			PersistentVolumeSource:        corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: dir}},
		},
	}
	if claim != "" {
		pv.Spec.ClaimRef = &corev1.ObjectReference{Namespace: ns, Name: claim}
	}
	if _, err := c.Client.CoreV1().PersistentVolumes().Create(context.Background(), pv, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = c.Client.CoreV1().PersistentVolumes().Delete(context.Background(), name, metav1.DeleteOptions{})
	})
	return dir
}

// exerciseTools calls every tool boris lists, each the way an agent
// would, in a fresh workspace directory; it fails if a listed tool was
// not exercised.
func exerciseTools(t *testing.T, url, token string) {
	t.Helper()
	cs := connect(t, url, token)
	defer cs.Close()
	ctx := context.Background()
	list, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	done := map[string]bool{}
	use := func(tool string, args map[string]any, want string) {
		t.Helper()
		text := mustOK(t, cs, tool, args)
		if !strings.Contains(text, want) {
			t.Fatalf("%s %v: %q lacks %q", tool, args, text, want)
		}
		done[tool] = true
	}
	use("create_file", map[string]any{"path": "tools/a.go", "content": "package a\n\nfunc A() int { return 1 }\n"}, "tools/a.go")
	use("view", map[string]any{"path": "tools/a.go"}, "func A() int")
	use("str_replace", map[string]any{"path": "tools/a.go", "old_str": "return 1", "new_str": "return 2"}, "return 2")
	use("apply_patch", map[string]any{"input": "*** Begin Patch\n*** Add File: tools/b.go\n+package a\n*** End Patch\n"}, "tools/b.go")
	use("grep", map[string]any{"pattern": "return 2", "path": "tools"}, "a.go")
	use("find", map[string]any{"pattern": "*.go", "path": "tools"}, "b.go")
	use("bash", map[string]any{"command": "cat tools/a.go | grep -c return"}, "1")
	// Every change above, by the edits and the command, as one diff.
	use("checkpoint", map[string]any{"action": "diff"}, "+func A() int { return 2 }")
	// The image carries no language server: the call says which is
	// missing and how to add one.
	if text := mustErr(t, cs, "lsp", map[string]any{"operation": "documentSymbol", "filePath": "tools/a.go"}, "LSP_NO_SERVER"); !strings.Contains(text, "gopls not found on PATH") {
		t.Fatalf("lsp without a server: %q", text)
	}
	done["lsp"] = true
	started := mustOK(t, cs, "bash", map[string]any{"command": "read line; echo got $line; sleep 300", "run_in_background": true, "interactive": true})
	m := regexp.MustCompile(`task_id: (\S+)`).FindStringSubmatch(started)
	if m == nil {
		t.Fatalf("no task id in %q", started)
	}
	use("task_input", map[string]any{"task_id": m[1], "input": "hello\n", "wait_ms": 2000}, "got hello")
	use("task_output", map[string]any{"task_id": m[1]}, "")
	use("task_kill", map[string]any{"task_id": m[1]}, "")
	for _, tool := range list.Tools {
		if !done[tool.Name] {
			t.Errorf("tool %s is listed but this test does not exercise it", tool.Name)
		}
	}
}

// TestKubeStandalone installs the chart with its defaults in a namespace
// enforcing the restricted profile and uses it as an agent elsewhere in
// the cluster would: through the Service, with the token from the chart's
// Secret. Then it upgrades the release, deletes its pod, and uninstalls.
func TestKubeStandalone(t *testing.T) {
	t.Parallel()
	c := requireCluster(t)
	ns := restrictedNamespace(t, c, "standalone")
	r := helmInstall(t, c, ns, "agents", nil)
	pod := r.readyPod(t)
	url := r.serviceURL(t)

	// Without the token: 401.
	resp, err := http.Post(url+"/mcp", "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("without a token: %s, want 401", resp.Status)
	}
	if ready := readySince(pod); ready > 0 {
		t.Logf("the chart's default pod: created → Ready in %s (kubelet's timestamps, 1 s resolution)", ready)
	}
	token := r.token(t, r.fullname(), "token")
	exerciseTools(t, url, token)

	// A file create_file writes is in the pod's workspace volume, as the
	// node holds it.
	cs := connect(t, url, token)
	mustOK(t, cs, "create_file", map[string]any{"path": "from-kube.txt", "content": "written through the Service\n"})
	cs.Close()
	onNode := filepath.Join(emptyDirPath(c, pod, "workspace"), "from-kube.txt")
	if b, err := os.ReadFile(onNode); err != nil || string(b) != "written through the Service\n" {
		t.Fatalf("the workspace volume on the node: %q %v", b, err)
	}

	// helm upgrade rolls the pod: a new one is Ready, the old one goes.
	r.upgrade(t, nil, "config.timeout=120")
	rolled := r.readyPod(t, pod.Name)
	if v := envValue(rolled.Spec.Containers[0], "BORIS_TIMEOUT"); v != "120" {
		t.Fatalf("after the upgrade BORIS_TIMEOUT=%q", v)
	}
	waitPodGone(t, c, ns, pod.Name, time.Minute)

	// A deleted pod is replaced; boris ends its commands within the grace
	// period, and none survives on the node.
	cs = connect(t, url, token)
	marker := fmt.Sprintf("kube-sigterm-%d", time.Now().UnixNano())
	mustOK(t, cs, "bash", map[string]any{"command": "sleep 600 # " + marker, "run_in_background": true})
	cs.Close()
	if len(processesWith(marker)) == 0 {
		t.Fatal("the background command is not running on the node")
	}
	start := time.Now()
	if err := c.Client.CoreV1().Pods(ns).Delete(context.Background(), rolled.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitPodGone(t, c, ns, rolled.Name, 30*time.Second) // the chart's terminationGracePeriodSeconds
	t.Logf("pod terminated %s after deletion", time.Since(start).Round(100*time.Millisecond))
	if left := processesWith(marker); len(left) > 0 {
		t.Fatalf("processes of the deleted pod survive: %v", left)
	}
	r.readyPod(t, pod.Name, rolled.Name)

	// helm uninstall leaves nothing of the release behind.
	r.uninstall(t)
	waitNothingLeft(t, r)
}

func envValue(c corev1.Container, name string) string {
	for _, e := range c.Env {
		if e.Name == name {
			return e.Value
		}
	}
	return ""
}

func waitPodGone(t *testing.T, c *kube.Cluster, ns, name string, limit time.Duration) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for {
		_, err := c.Client.CoreV1().Pods(ns).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil && strings.Contains(err.Error(), "not found") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("pod %s still there after %s (err %v)", name, limit, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// processesWith lists the node's processes whose command line contains s
// (the cluster's pods are processes of this machine).
func processesWith(s string) []string {
	var found []string
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || !bytes.Contains(b, []byte(s)) {
			continue
		}
		stat, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if i := bytes.LastIndexByte(stat, ')'); i > 0 && len(stat) > i+2 && stat[i+2] == 'Z' {
			continue
		}
		if e.Name() != fmt.Sprint(os.Getpid()) {
			found = append(found, e.Name()+": "+strings.ReplaceAll(string(b), "\x00", " "))
		}
	}
	return found
}

// waitNothingLeft waits for every namespaced object of the release to be
// gone after an uninstall.
func waitNothingLeft(t *testing.T, r *kubeRelease) {
	t.Helper()
	ctx := context.Background()
	sel := metav1.ListOptions{LabelSelector: "app.kubernetes.io/instance=" + r.name}
	deadline := time.Now().Add(time.Minute)
	for {
		var left []string
		if l, err := r.c.Client.AppsV1().Deployments(r.ns).List(ctx, sel); err == nil {
			for _, o := range l.Items {
				left = append(left, "deployment/"+o.Name)
			}
		}
		if l, err := r.c.Client.AppsV1().ReplicaSets(r.ns).List(ctx, sel); err == nil {
			for _, o := range l.Items {
				left = append(left, "replicaset/"+o.Name)
			}
		}
		if l, err := r.c.Client.CoreV1().Pods(r.ns).List(ctx, sel); err == nil {
			for _, o := range l.Items {
				left = append(left, "pod/"+o.Name)
			}
		}
		if l, err := r.c.Client.CoreV1().Services(r.ns).List(ctx, sel); err == nil {
			for _, o := range l.Items {
				left = append(left, "service/"+o.Name)
			}
		}
		if l, err := r.c.Client.CoreV1().PersistentVolumeClaims(r.ns).List(ctx, sel); err == nil {
			for _, o := range l.Items {
				left = append(left, "pvc/"+o.Name)
			}
		}
		for _, s := range []metav1.ListOptions{sel, {LabelSelector: "owner=helm,name=" + r.name}} { // the chart's, Helm's records
			if l, err := r.c.Client.CoreV1().Secrets(r.ns).List(ctx, s); err == nil {
				for _, o := range l.Items {
					left = append(left, "secret/"+o.Name)
				}
			}
		}
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("left after helm uninstall: %v", left)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// TestKubeValueFiles installs the chart with each of its ci/ value files,
// unchanged, in namespaces enforcing the restricted profile, and checks
// that each becomes Ready and does what the file is for.
func TestKubeValueFiles(t *testing.T) {
	t.Parallel()
	c := requireCluster(t)
	files, err := filepath.Glob(filepath.Join(chartDir(), "ci", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no value files: %v", err)
	}
	checks := map[string]func(t *testing.T, r *kubeRelease){
		"existing-claim-values.yaml": checkExistingClaim,
		"pvc-values.yaml":            checkPVC,
		"sandbox-values.yaml":        checkSandbox,
		"servicemonitor-values.yaml": checkServiceMonitor,
		"sidecar-values.yaml":        checkSidecar,
		"toolchain-values.yaml":      checkToolchain,
	}
	for _, f := range files {
		base := filepath.Base(f)
		check := checks[base]
		if check == nil {
			t.Errorf("%s has no check here: add one", base)
			continue
		}
		t.Run(base, func(t *testing.T) {
			t.Parallel()
			ns := restrictedNamespace(t, c, strings.TrimSuffix(base, "-values.yaml"))
			prepare(t, c, ns, base)
			r := helmInstall(t, c, ns, "rel", []string{"ci/" + base})
			check(t, r)
			r.uninstall(t)
			waitNothingLeft(t, r)
		})
	}
}

// prepare makes what a value file expects to find in the cluster.
func prepare(t *testing.T, c *kube.Cluster, ns, file string) {
	t.Helper()
	ctx := context.Background()
	switch file {
	case "existing-claim-values.yaml":
		hostPathVolume(t, c, ns+"-shared-code", "", ns, "shared-code", "1Gi")
		pvc := &corev1.PersistentVolumeClaim{
			ObjectMeta: metav1.ObjectMeta{Name: "shared-code"},
			Spec: corev1.PersistentVolumeClaimSpec{
				AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
				StorageClassName: ptr(""),
				VolumeName:       ns + "-shared-code",
				Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
			},
		}
		if _, err := c.Client.CoreV1().PersistentVolumeClaims(ns).Create(ctx, pvc, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	case "pvc-values.yaml":
		sc := &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "standard"}, Provisioner: "kubernetes.io/no-provisioner"}
		if _, err := c.Client.StorageV1().StorageClasses().Create(ctx, sc, metav1.CreateOptions{}); err != nil && !strings.Contains(err.Error(), "already exists") {
			t.Fatal(err)
		}
		hostPathVolume(t, c, ns+"-standard", "standard", ns, "rel-boris-workspace", "5Gi")
		secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "boris-token"}, StringData: map[string]string{"mcp-token": "a-token-managed-by-the-user"}}
		if _, err := c.Client.CoreV1().Secrets(ns).Create(ctx, secret, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	case "servicemonitor-values.yaml":
		installServiceMonitorCRD(t, c)
	case "toolchain-values.yaml":
		// A Go project's checkout, owned by the developer (uid 1000), on
		// a volume of the node, claimed as "checkout".
		dir := hostPathVolume(t, c, ns+"-checkout", "", ns, "checkout", "1Gi")
		checkout(t, goProject, dir, checkoutUID)
		pvc := &corev1.PersistentVolumeClaim{
			ObjectMeta: metav1.ObjectMeta{Name: "checkout"},
			Spec: corev1.PersistentVolumeClaimSpec{
				AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
				StorageClassName: ptr(""),
				VolumeName:       ns + "-checkout",
				Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
			},
		}
		if _, err := c.Client.CoreV1().PersistentVolumeClaims(ns).Create(ctx, pvc, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
}

// checkToolchain: boris injected into the Go toolchain image by the
// chart's toolchainImage runs as the checkout's owner, says at start-up
// which language servers it found, and does a Go project's real work
// through the Service.
func checkToolchain(t *testing.T, r *kubeRelease) {
	pod := r.readyPod(t)
	if ready := readySince(pod); ready > 0 {
		t.Logf("toolchainImage pod: created → Ready in %s (kubelet's timestamps, 1 s resolution)", ready)
	}
	logs, err := r.c.Client.CoreV1().Pods(r.ns).GetLogs(pod.Name, &corev1.PodLogOptions{Container: "boris"}).DoRaw(context.Background())
	if err != nil || !bytes.Contains(logs, []byte("go=/usr/local/bin/gopls")) {
		t.Fatalf("boris's start-up log does not name gopls as found: %v\n%s", err, logs)
	}
	realWork(t, "kubernetes, the chart's toolchainImage", r.serviceURL(t), r.token(t, "rel-boris", "token"), goProject,
		filepath.Join(r.c.Dir, "volumes", r.ns+"-checkout"))
	// The cost of the injection, measured when asked for (it installs
	// releases over and over): BORIS_E2E_READY_ROUNDS=N.
	if n, _ := strconv.Atoi(os.Getenv("BORIS_E2E_READY_ROUNDS")); n > 0 {
		compareReady(t, r.c, r.ns, n)
	}
}

// compareReady installs the chart's default pod and the same with
// toolchainImage (the Python toolchain image) in turns, rounds times each,
// and logs how long each took from `helm install` to its pod being Ready,
// as this test sees it (polled every 50 ms) and by the kubelet's
// timestamps.
func compareReady(t *testing.T, c *kube.Cluster, ns string, rounds int) {
	variants := []struct {
		name string
		set  []string
	}{
		{"plain", []string{"service.enabled=false"}},
		{"injected", []string{"service.enabled=false", "toolchainImage.repository=boris-e2e/python"}},
	}
	ch, err := loader.Load(chartDir())
	if err != nil {
		t.Fatal(err)
	}
	took := map[string][]time.Duration{}
	for i := range rounds {
		for _, v := range variants {
			name := fmt.Sprintf("%s-%d", v.name, i)
			vals, err := chartValues(nil, v.set)
			if err != nil {
				t.Fatal(err)
			}
			r := &kubeRelease{c: c, ns: ns, name: name, cfg: helmConfig(t, c, ns)}
			inst := action.NewInstall(r.cfg)
			inst.ReleaseName, inst.Namespace = name, ns
			start := time.Now()
			if r.rel, err = inst.Run(ch, vals); err != nil {
				t.Fatalf("helm install %s: %v", name, err)
			}
			pod := r.readyPod(t)
			d := time.Since(start)
			took[v.name] = append(took[v.name], d)
			t.Logf("ready time, round %d, %-8s: helm install → Ready %6.2fs (created → Ready %s by the kubelet)", i+1, v.name, d.Seconds(), readySince(pod))
			r.uninstall(t)
			waitNothingLeft(t, r)
		}
	}
	median := func(ds []time.Duration) time.Duration {
		s := slices.Clone(ds)
		slices.Sort(s)
		return s[len(s)/2]
	}
	p, in := median(took["plain"]), median(took["injected"])
	t.Logf("ready time, median of %d: plain %.2fs, injected %.2fs (%.2f×)", rounds, p.Seconds(), in.Seconds(), in.Seconds()/p.Seconds())
}

// readySince is how long the pod took from its creation to Ready, by the
// kubelet's timestamps (0 when not known).
func readySince(p corev1.Pod) time.Duration {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
			return c.LastTransitionTime.Sub(p.CreationTimestamp.Time)
		}
	}
	return 0
}

// checkExistingClaim: the workspace is the claim the user made, and a file
// boris writes is in the volume behind it.
func checkExistingClaim(t *testing.T, r *kubeRelease) {
	r.readyPod(t)
	cs := connect(t, r.serviceURL(t), "not-a-real-token")
	defer cs.Close()
	mustOK(t, cs, "create_file", map[string]any{"path": "on-the-claim.txt", "content": "kept\n"})
	onNode := filepath.Join(r.c.Dir, "volumes", r.ns+"-shared-code", "on-the-claim.txt")
	if b, err := os.ReadFile(onNode); err != nil || string(b) != "kept\n" {
		t.Fatalf("the claim's volume: %q %v", b, err)
	}
}

// checkPVC: the chart's claim is bound; the token is the user's Secret's;
// the deny list with braces (*.{pem,key}) started boris and holds.
func checkPVC(t *testing.T, r *kubeRelease) {
	r.readyPod(t)
	cs := connect(t, r.serviceURL(t), "a-token-managed-by-the-user")
	defer cs.Close()
	mustOK(t, cs, "bash", map[string]any{"command": "echo secret > server.key && echo x > .env"})
	mustErr(t, cs, "view", map[string]any{"path": "server.key"}, "ACCESS_DENIED")
	mustErr(t, cs, "view", map[string]any{"path": ".env"}, "ACCESS_DENIED")
	onNode := filepath.Join(r.c.Dir, "volumes", r.ns+"-standard", "server.key")
	if _, err := os.Stat(onNode); err != nil {
		t.Fatalf("the chart's claim's volume: %v", err)
	}
}

// checkSandbox: under the Landlock sandbox a command writes in the
// workspace, /tmp and the mounted /cache, and nowhere else the container
// could write (/dev/shm is writable to it without the sandbox).
func checkSandbox(t *testing.T, r *kubeRelease) {
	r.readyPod(t)
	cs := connect(t, r.serviceURL(t), r.token(t, "rel-boris", "token"))
	defer cs.Close()
	mustOK(t, cs, "bash", map[string]any{"command": "touch /workspace/ok /tmp/ok /cache/ok"})
	text, isErr := call(t, cs, "bash", map[string]any{"command": "touch /dev/shm/outside"})
	if !isErr && !strings.Contains(text, "exit_code: 1") || !strings.Contains(text, "Permission denied") {
		t.Fatalf("a write outside the sandbox: %q", text)
	}
}

// checkServiceMonitor: two replicas Ready behind a ClientIP-affine
// Service, and the ServiceMonitor the chart made.
func checkServiceMonitor(t *testing.T, r *kubeRelease) {
	ctx := context.Background()
	d, err := r.c.Client.AppsV1().Deployments(r.ns).Get(ctx, r.fullname(), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if d.Status.ReadyReplicas != 2 {
		t.Fatalf("ready replicas %d, want 2", d.Status.ReadyReplicas)
	}
	svc, err := r.c.Client.CoreV1().Services(r.ns).Get(ctx, r.fullname(), metav1.GetOptions{})
	if err != nil || svc.Spec.SessionAffinity != corev1.ServiceAffinityClientIP {
		t.Fatalf("service affinity: %v %v", svc.Spec.SessionAffinity, err)
	}
	raw, err := r.c.Client.CoreV1().RESTClient().Get().AbsPath("/apis/monitoring.coreos.com/v1/namespaces", r.ns, "servicemonitors", r.fullname()).DoRaw(ctx)
	if err != nil || !bytes.Contains(raw, []byte(`"interval":"15s"`)) {
		t.Fatalf("servicemonitor: %v %s", err, raw)
	}
}

// checkSidecar: the agent container reached boris on localhost with the
// chart's token, ran a command and created a file, and saw both in its own
// mount of the shared workspace.
func checkSidecar(t *testing.T, r *kubeRelease) {
	pod := r.readyPod(t)
	deadline := time.Now().Add(2 * time.Minute)
	for {
		logs, err := r.c.Client.CoreV1().Pods(r.ns).GetLogs(pod.Name, &corev1.PodLogOptions{Container: "agent"}).DoRaw(context.Background())
		if err == nil && bytes.Contains(logs, []byte("agent-report ")) {
			line := string(logs[bytes.Index(logs, []byte("agent-report ")):])
			if !strings.Contains(line, `"ok":true`) || !strings.Contains(line, `"seen_bash":"written by bash\n"`) ||
				!strings.Contains(line, `"seen_created":"written by create_file\n"`) || !strings.Contains(line, "/workspace") {
				t.Fatalf("the agent's report: %s", line)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no report from the agent: %v %s\n%s", err, logs, r.diagnose())
		}
		time.Sleep(time.Second)
	}
}

// installServiceMonitorCRD installs the Prometheus Operator's
// ServiceMonitor CRD, from its module at a pinned version (Go's module
// cache keeps it), once.
var serviceMonitorOnce sync.Once

func installServiceMonitorCRD(t *testing.T, c *kube.Cluster) {
	t.Helper()
	var err error
	serviceMonitorOnce.Do(func() {
		err = kube.ApplyCRDFromModule(context.Background(), c, "github.com/prometheus-operator/prometheus-operator@v0.85.0",
			"example/prometheus-operator-crd/monitoring.coreos.com_servicemonitors.yaml")
	})
	if err != nil {
		t.Fatal(err)
	}
}
