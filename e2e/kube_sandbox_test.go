package e2e

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"

	"github.com/boris-mcp/boris/e2e/kube"
)

// The agent-sandbox manifests (deploy/agent-sandbox) on the real cluster,
// with agent-sandbox's CRDs and its controller, both from the release the
// sandboxbin module pins.

var sandboxGVR = map[string]schema.GroupVersionResource{
	"SandboxTemplate": {Group: "extensions.agents.x-k8s.io", Version: "v1beta1", Resource: "sandboxtemplates"},
	"SandboxWarmPool": {Group: "extensions.agents.x-k8s.io", Version: "v1beta1", Resource: "sandboxwarmpools"},
	"SandboxClaim":    {Group: "extensions.agents.x-k8s.io", Version: "v1beta1", Resource: "sandboxclaims"},
	"NetworkPolicy":   {Group: "networking.k8s.io", Version: "v1", Resource: "networkpolicies"},
}

// readManifest reads one object of deploy/agent-sandbox.
func readManifest(t *testing.T, file string) *unstructured.Unstructured {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot, "deploy", "agent-sandbox", file))
	if err != nil {
		t.Fatal(err)
	}
	var obj map[string]any
	if err := yaml.Unmarshal(b, &obj); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return &unstructured.Unstructured{Object: obj}
}

// TestKubeAgentSandbox applies the manifests as shipped, with strict
// field validation, in a namespace enforcing the restricted profile:
// the warm pool's sandboxes start from the template and become Ready
// through boris's probes, a claim takes one, and an MCP client reaches
// boris on that pod's IP with the token, writing into the sandbox's own
// claim. Deleting the claim ends its pod.
func TestKubeAgentSandbox(t *testing.T) {
	t.Parallel()
	c := requireCluster(t)
	ctx := context.Background()
	e2eDir := filepath.Join(repoRoot, "e2e")
	moduleDir := filepath.Join(e2eDir, "kube", "sandboxbin")
	version, err := os.ReadFile(filepath.Join(moduleDir, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	at := kube.SandboxModule + "@" + requiredVersion(t, string(version), kube.SandboxModule)
	for _, crd := range kube.SandboxCRDs {
		if err := kube.ApplyCRDFromModule(ctx, c, at, crd); err != nil {
			t.Fatal(err)
		}
	}
	ctrl, err := kube.SandboxController(ctx, moduleDir, os.Stderr)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.StartSandboxController(ctrl); err != nil {
		t.Fatal(err)
	}
	dyn, err := dynamic.NewForConfig(c.Config)
	if err != nil {
		t.Fatal(err)
	}

	ns := restrictedNamespace(t, c, "agent-sandbox")
	// What the template expects to find: the token's Secret and a default
	// StorageClass, here backed by volumes on the node.
	const token = "a-token-for-the-sandboxes"
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "boris-token"}, StringData: map[string]string{"token": token}}
	if _, err := c.Client.CoreV1().Secrets(ns).Create(ctx, secret, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	sc := &storagev1.StorageClass{
		ObjectMeta:  metav1.ObjectMeta{Name: "sandbox-local", Annotations: map[string]string{"storageclass.kubernetes.io/is-default-class": "true"}},
		Provisioner: "kubernetes.io/no-provisioner",
	}
	if _, err := c.Client.StorageV1().StorageClasses().Create(ctx, sc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = c.Client.StorageV1().StorageClasses().Delete(context.Background(), sc.Name, metav1.DeleteOptions{})
	})
	for i := range 3 { // the pool's two and the one replacing the claimed one
		hostPathVolume(t, c, fmt.Sprintf("%s-ws-%d", ns, i), sc.Name, ns, "", "5Gi")
	}

	create := func(file string) *unstructured.Unstructured {
		t.Helper()
		obj := readManifest(t, file)
		gvr, ok := sandboxGVR[obj.GetKind()]
		if !ok {
			t.Fatalf("%s: unexpected kind %s", file, obj.GetKind())
		}
		got, err := dyn.Resource(gvr).Namespace(ns).Create(ctx, obj, metav1.CreateOptions{FieldValidation: "Strict"})
		if err != nil {
			t.Fatalf("%s: the API server refuses it: %v", file, err)
		}
		return got
	}
	create("networkpolicy.yaml")
	create("sandboxtemplate.yaml")
	pool := create("warmpool.yaml")
	replicas, _, _ := unstructured.NestedInt64(pool.Object, "spec", "replicas")

	// The pool fills through boris's readiness probe.
	var status map[string]any
	waitUntil(t, 3*time.Minute, func() (bool, string) {
		p, err := dyn.Resource(sandboxGVR["SandboxWarmPool"]).Namespace(ns).Get(ctx, "boris", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		ready, _, _ := unstructured.NestedInt64(p.Object, "status", "readyReplicas")
		status, _, _ = unstructured.NestedMap(p.Object, "status")
		return ready == replicas, fmt.Sprintf("pool status %v", status)
	}, func() string { return sandboxDiagnose(c, ns) })

	claim := create("claim.yaml")
	var podIP, sandboxName string
	waitUntil(t, 2*time.Minute, func() (bool, string) {
		cl, err := dyn.Resource(sandboxGVR["SandboxClaim"]).Namespace(ns).Get(ctx, claim.GetName(), metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		conds, _, _ := unstructured.NestedSlice(cl.Object, "status", "conditions")
		ready := false
		for _, cond := range conds {
			m, _ := cond.(map[string]any)
			if m["type"] == "Ready" && m["status"] == "True" {
				ready = true
			}
		}
		ips, _, _ := unstructured.NestedStringSlice(cl.Object, "status", "sandbox", "podIPs")
		sandboxName, _, _ = unstructured.NestedString(cl.Object, "status", "sandbox", "name")
		if ready && len(ips) > 0 {
			podIP = ips[0]
			return true, ""
		}
		return false, fmt.Sprintf("claim status %v", cl.Object["status"])
	}, func() string { return sandboxDiagnose(c, ns) })

	pod := sandboxPod(t, c, ns, sandboxName)
	if !podReady(pod) {
		t.Fatalf("the claimed sandbox's pod %s is not Ready", pod.Name)
	}
	// The NetworkPolicy shipped beside the template selects its pods.
	np, err := c.Client.NetworkingV1().NetworkPolicies(ns).Get(ctx, "boris-sandbox", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sel, err := metav1.LabelSelectorAsSelector(&np.Spec.PodSelector)
	if err != nil || !sel.Matches(labels.Set(pod.Labels)) {
		t.Fatalf("the NetworkPolicy's selector %v does not select the sandbox pod (labels %v): %v", sel, pod.Labels, err)
	}

	url := "http://" + podIP + ":8080"
	exerciseTools(t, url, token)
	cs := connect(t, url, token)
	mustOK(t, cs, "create_file", map[string]any{"path": "from-the-agent.txt", "content": "in the sandbox's claim\n"})
	cs.Close()
	if onNode := claimDir(t, c, ns, pod); onNode == "" {
		t.Fatal("the workspace is not a claim")
	} else if b, err := os.ReadFile(filepath.Join(onNode, "from-the-agent.txt")); err != nil || string(b) != "in the sandbox's claim\n" {
		t.Fatalf("the sandbox's claim on the node: %q %v", b, err)
	}
	resp, err := http.Post(url+"/mcp", "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("without the token: %s, want 401", resp.Status)
	}

	if err := dyn.Resource(sandboxGVR["SandboxClaim"]).Namespace(ns).Delete(ctx, claim.GetName(), metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitPodGone(t, c, ns, pod.Name, time.Minute)
	// Before the controller stops: the pool and template, so that the
	// namespace's deletion finds nothing holding a finalizer.
	_ = dyn.Resource(sandboxGVR["SandboxWarmPool"]).Namespace(ns).Delete(ctx, "boris", metav1.DeleteOptions{})
	_ = dyn.Resource(sandboxGVR["SandboxTemplate"]).Namespace(ns).Delete(ctx, "boris", metav1.DeleteOptions{})

	toolchainSandbox(t, c, dyn, ns, token)
}

// toolchainSandbox: sandboxtemplate-toolchain.yaml with the Python
// toolchain image as its image and the checkout's owner (uid 1000) as its
// user — the two lines its comment says to change — and its claim on a
// volume holding a Python project's checkout; a warm pool of one, a claim,
// and the project's real work through the sandbox's boris.
func toolchainSandbox(t *testing.T, c *kube.Cluster, dyn dynamic.Interface, ns, token string) {
	ctx := context.Background()
	const class = "sandbox-checkout"
	sc := &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: class}, Provisioner: "kubernetes.io/no-provisioner"}
	if _, err := c.Client.StorageV1().StorageClasses().Create(ctx, sc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = c.Client.StorageV1().StorageClasses().Delete(context.Background(), class, metav1.DeleteOptions{})
	})
	dir := hostPathVolume(t, c, ns+"-checkout", class, ns, "", "5Gi")
	checkout(t, pythonProject, dir, checkoutUID)

	tmpl := readManifest(t, "sandboxtemplate-toolchain.yaml")
	spec := []string{"spec", "podTemplate", "spec"}
	containers, _, _ := unstructured.NestedSlice(tmpl.Object, append(spec, "containers")...)
	inits, _, _ := unstructured.NestedSlice(tmpl.Object, append(spec, "initContainers")...)
	boris := containers[0].(map[string]any)
	boris["image"] = imagePython
	for _, ctr := range []any{boris, inits[0]} {
		sctx := ctr.(map[string]any)["securityContext"].(map[string]any)
		sctx["runAsUser"], sctx["runAsGroup"] = int64(checkoutUID), int64(checkoutUID)
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(unstructured.SetNestedSlice(tmpl.Object, containers, append(spec, "containers")...))
	must(unstructured.SetNestedSlice(tmpl.Object, inits, append(spec, "initContainers")...))
	for _, k := range []string{"runAsUser", "runAsGroup", "fsGroup"} {
		must(unstructured.SetNestedField(tmpl.Object, int64(checkoutUID), append(spec, "securityContext", k)...))
	}
	claims, _, _ := unstructured.NestedSlice(tmpl.Object, "spec", "volumeClaimTemplates")
	must(unstructured.SetNestedField(claims[0].(map[string]any), class, "spec", "storageClassName"))
	must(unstructured.SetNestedSlice(tmpl.Object, claims, "spec", "volumeClaimTemplates"))
	if _, err := dyn.Resource(sandboxGVR["SandboxTemplate"]).Namespace(ns).Create(ctx, tmpl, metav1.CreateOptions{FieldValidation: "Strict"}); err != nil {
		t.Fatalf("sandboxtemplate-toolchain.yaml: the API server refuses it: %v", err)
	}
	pool := readManifest(t, "warmpool.yaml")
	pool.SetName("boris-toolchain")
	must(unstructured.SetNestedField(pool.Object, int64(1), "spec", "replicas"))
	must(unstructured.SetNestedField(pool.Object, "boris-toolchain", "spec", "sandboxTemplateRef", "name"))
	start := time.Now()
	if _, err := dyn.Resource(sandboxGVR["SandboxWarmPool"]).Namespace(ns).Create(ctx, pool, metav1.CreateOptions{FieldValidation: "Strict"}); err != nil {
		t.Fatal(err)
	}
	// The pool's sandbox becomes Ready through boris's probe in the
	// toolchain image; the claim then takes it, volume and all.
	waitUntil(t, 3*time.Minute, func() (bool, string) {
		p, err := dyn.Resource(sandboxGVR["SandboxWarmPool"]).Namespace(ns).Get(ctx, "boris-toolchain", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		ready, _, _ := unstructured.NestedInt64(p.Object, "status", "readyReplicas")
		return ready == 1, fmt.Sprintf("pool status %v", p.Object["status"])
	}, func() string { return sandboxDiagnose(c, ns) })
	poolReady := time.Since(start)
	claim := readManifest(t, "claim.yaml")
	claim.SetName("agent-toolchain")
	must(unstructured.SetNestedField(claim.Object, "boris-toolchain", "spec", "warmPoolRef", "name"))
	if _, err := dyn.Resource(sandboxGVR["SandboxClaim"]).Namespace(ns).Create(ctx, claim, metav1.CreateOptions{FieldValidation: "Strict"}); err != nil {
		t.Fatal(err)
	}
	var podIP, name string
	waitUntil(t, 3*time.Minute, func() (bool, string) {
		cl, err := dyn.Resource(sandboxGVR["SandboxClaim"]).Namespace(ns).Get(ctx, "agent-toolchain", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		ips, _, _ := unstructured.NestedStringSlice(cl.Object, "status", "sandbox", "podIPs")
		name, _, _ = unstructured.NestedString(cl.Object, "status", "sandbox", "name")
		if len(ips) > 0 && name != "" {
			if p, err := c.Client.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{}); err == nil && podReady(*p) {
				podIP = ips[0]
				return true, ""
			}
		}
		return false, fmt.Sprintf("claim status %v", cl.Object["status"])
	}, func() string { return sandboxDiagnose(c, ns) })
	pod := sandboxPod(t, c, ns, name)
	t.Logf("the toolchain sandbox: pool created → its sandbox Ready in %s (the pod created → Ready %s by the kubelet's timestamps); claimed and Ready %s later",
		poolReady.Round(10*time.Millisecond), readySince(pod), (time.Since(start) - poolReady).Round(10*time.Millisecond))
	if onNode := claimDir(t, c, ns, pod); onNode != dir {
		t.Fatalf("the sandbox's workspace is %q, not the checkout's volume %s", onNode, dir)
	}
	realWork(t, "kubernetes, agent-sandbox's toolchain template", "http://"+podIP+":8080", token, pythonProject, dir)
	_ = dyn.Resource(sandboxGVR["SandboxClaim"]).Namespace(ns).Delete(ctx, "agent-toolchain", metav1.DeleteOptions{})
	_ = dyn.Resource(sandboxGVR["SandboxWarmPool"]).Namespace(ns).Delete(ctx, "boris-toolchain", metav1.DeleteOptions{})
	_ = dyn.Resource(sandboxGVR["SandboxTemplate"]).Namespace(ns).Delete(ctx, "boris-toolchain", metav1.DeleteOptions{})
	waitPodGone(t, c, ns, pod.Name, time.Minute)
}

// requiredVersion reads module's version from a go.mod's text.
func requiredVersion(t *testing.T, gomod, module string) string {
	t.Helper()
	for _, line := range strings.Split(gomod, "\n") {
		f := strings.Fields(strings.TrimPrefix(strings.TrimSpace(line), "require "))
		if len(f) >= 2 && f[0] == module {
			return f[1]
		}
	}
	t.Fatalf("go.mod does not require %s", module)
	return ""
}

// waitUntil polls cond for up to limit; on timeout it fails with cond's
// last word and the diagnosis.
func waitUntil(t *testing.T, limit time.Duration, cond func() (bool, string), diagnose func() string) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for {
		ok, why := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %s: %s\n%s", limit, why, diagnose())
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// sandboxPod is the pod of the named Sandbox (it carries its name).
func sandboxPod(t *testing.T, c *kube.Cluster, ns, sandbox string) corev1.Pod {
	t.Helper()
	pods, err := c.Client.CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pods.Items {
		if p.Name == sandbox {
			return p
		}
	}
	t.Fatalf("no pod for the sandbox %q among %d\n%s", sandbox, len(pods.Items), sandboxDiagnose(c, ns))
	return corev1.Pod{}
}

// claimDir is the directory on the node behind the pod's workspace
// claim ("" when the workspace is not a claim).
func claimDir(t *testing.T, c *kube.Cluster, ns string, pod corev1.Pod) string {
	t.Helper()
	ctx := context.Background()
	for _, v := range pod.Spec.Volumes {
		if v.Name != "workspace" || v.PersistentVolumeClaim == nil {
			continue
		}
		pvc, err := c.Client.CoreV1().PersistentVolumeClaims(ns).Get(ctx, v.PersistentVolumeClaim.ClaimName, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		pv, err := c.Client.CoreV1().PersistentVolumes().Get(ctx, pvc.Spec.VolumeName, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return pv.Spec.HostPath.Path
	}
	return ""
}

// sandboxDiagnose describes the namespace's pods, claims and events and
// the end of the controller's log.
func sandboxDiagnose(c *kube.Cluster, ns string) string {
	ctx := context.Background()
	var b strings.Builder
	if pods, err := c.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{}); err == nil {
		for _, p := range pods.Items {
			fmt.Fprintf(&b, "pod %s: %s %v\n", p.Name, p.Status.Phase, p.Status.Conditions)
		}
	}
	if pvcs, err := c.Client.CoreV1().PersistentVolumeClaims(ns).List(ctx, metav1.ListOptions{}); err == nil {
		for _, p := range pvcs.Items {
			fmt.Fprintf(&b, "pvc %s: %s %s\n", p.Name, p.Status.Phase, p.Spec.VolumeName)
		}
	}
	if ev, err := c.Client.CoreV1().Events(ns).List(ctx, metav1.ListOptions{}); err == nil {
		for _, e := range ev.Items {
			fmt.Fprintf(&b, "event %s %s: %s\n", e.InvolvedObject.Name, e.Reason, e.Message)
		}
	}
	b.WriteString(c.SandboxControllerLog())
	return b.String()
}

// TestAgentSandboxTemplateMatchesChart: the SandboxTemplate's pod is the
// chart's default pod in what makes it safe and healthy — the pod's and
// the container's security contexts, probes, resources, grace period,
// no service account token, the token read from a file, and the image of
// the chart's appVersion — so the two do not drift apart. Its pod spec decodes strictly.
func TestAgentSandboxTemplateMatchesChart(t *testing.T) {
	tmpl := readManifest(t, "sandboxtemplate.yaml")
	raw, _, _ := unstructured.NestedMap(tmpl.Object, "spec", "podTemplate", "spec")
	b, err := yaml.Marshal(raw)
	if err != nil {
		t.Fatal(err)
	}
	var pod corev1.PodSpec
	if err := yaml.UnmarshalStrict(b, &pod); err != nil {
		t.Fatalf("the template's pod spec: %v", err)
	}
	chart := helmTemplate(t).deployments[0].Spec.Template.Spec
	boris, want := pod.Containers[0], chart.Containers[0]
	for _, c := range []struct {
		what      string
		got, want any
	}{
		{"pod securityContext", pod.SecurityContext, chart.SecurityContext},
		{"container securityContext", boris.SecurityContext, want.SecurityContext},
		{"livenessProbe", boris.LivenessProbe, want.LivenessProbe},
		{"readinessProbe", boris.ReadinessProbe, want.ReadinessProbe},
		{"resources", boris.Resources, want.Resources},
		{"image", boris.Image, want.Image},
		{"terminationGracePeriodSeconds", pod.TerminationGracePeriodSeconds, chart.TerminationGracePeriodSeconds},
		{"automountServiceAccountToken", pod.AutomountServiceAccountToken, chart.AutomountServiceAccountToken},
		{"enableServiceLinks", pod.EnableServiceLinks, chart.EnableServiceLinks},
	} {
		if !reflect.DeepEqual(c.got, c.want) {
			t.Errorf("%s: the template has %+v, the chart %+v", c.what, c.got, c.want)
		}
	}
	for _, name := range []string{"BORIS_HOST", "BORIS_PORT", "BORIS_WORKDIR", "HOME", "BORIS_CHECKPOINT_DIR", "BORIS_CHECKPOINT_MAX_BYTES"} {
		if envValue(boris, name) != envValue(want, name) {
			t.Errorf("%s: the template has %q, the chart %q", name, envValue(boris, name), envValue(want, name))
		}
	}
	// The checkpoint store: the same emptyDir at the same place.
	mountOf := func(c corev1.Container, name string) string {
		for _, m := range c.VolumeMounts {
			if m.Name == name {
				return m.MountPath
			}
		}
		return ""
	}
	volumeOf := func(p corev1.PodSpec, name string) any {
		for _, v := range p.Volumes {
			if v.Name == name {
				return v.VolumeSource
			}
		}
		return nil
	}
	if g, w := mountOf(boris, "checkpoints"), mountOf(want, "checkpoints"); g != w || g == "" {
		t.Errorf("checkpoints mount: the template has %q, the chart %q", g, w)
	}
	if g, w := volumeOf(pod, "checkpoints"), volumeOf(chart, "checkpoints"); !reflect.DeepEqual(g, w) {
		t.Errorf("checkpoints volume: the template has %+v, the chart %+v", g, w)
	}
	// The token: a file from the Secret boris-token (key token), mounted
	// as the chart mounts its own Secret.
	checkTokenFile(t, pod, boris, "boris-token", "token")
}

// templatePod decodes a SandboxTemplate's pod spec strictly.
func templatePod(t *testing.T, file string) corev1.PodSpec {
	t.Helper()
	raw, _, _ := unstructured.NestedMap(readManifest(t, file).Object, "spec", "podTemplate", "spec")
	b, err := yaml.Marshal(raw)
	if err != nil {
		t.Fatal(err)
	}
	var pod corev1.PodSpec
	if err := yaml.UnmarshalStrict(b, &pod); err != nil {
		t.Fatalf("%s's pod spec: %v", file, err)
	}
	return pod
}

// TestAgentSandboxToolchainTemplate: sandboxtemplate-toolchain.yaml is
// sandboxtemplate.yaml's pod with boris injected into another image — the
// init container, the boris-bin emptyDir and its read-only mount, the
// image and the command differ, nothing else — and its init container is
// the chart's toolchainImage one.
func TestAgentSandboxToolchainTemplate(t *testing.T) {
	plain, tc := templatePod(t, "sandboxtemplate.yaml"), templatePod(t, "sandboxtemplate-toolchain.yaml")
	if len(tc.InitContainers) != 1 || len(tc.Containers) != 1 {
		t.Fatalf("%d init containers, %d containers", len(tc.InitContainers), len(tc.Containers))
	}
	boris := tc.Containers[0]
	if boris.Image == plain.Containers[0].Image || !reflect.DeepEqual(boris.Command, []string{"/opt/boris/boris"}) {
		t.Fatalf("workspace container: image %s command %v", boris.Image, boris.Command)
	}
	if m := mount(t, boris, "boris-bin"); m.MountPath != "/opt/boris" || !m.ReadOnly {
		t.Fatalf("boris-bin mount %+v", m)
	}
	if v := volume(t, tc, "boris-bin"); v.EmptyDir == nil {
		t.Fatalf("boris-bin volume %+v", v.VolumeSource)
	}
	chart := helmTemplateSet(t, nil, []string{"toolchainImage.repository=python", "toolchainImage.tag=3.12-bookworm"}).deployments[0].Spec.Template.Spec
	want := chart.InitContainers[0]
	got := tc.InitContainers[0]
	for _, c := range []struct {
		what      string
		got, want any
	}{
		{"name", got.Name, want.Name},
		{"image", got.Image, want.Image},
		{"command", got.Command, want.Command},
		{"securityContext", got.SecurityContext, want.SecurityContext},
		{"resources", got.Resources, want.Resources},
		{"volumeMounts", got.VolumeMounts, want.VolumeMounts},
		{"boris-bin volume", volume(t, tc, "boris-bin").VolumeSource, volume(t, chart, "boris-bin").VolumeSource},
	} {
		if !reflect.DeepEqual(c.got, c.want) {
			t.Errorf("init container %s: the template has %+v, the chart %+v", c.what, c.got, c.want)
		}
	}
	// Without what injection adds, the two pods are the same.
	tc.InitContainers = nil
	var vols []corev1.Volume
	for _, v := range tc.Volumes {
		if v.Name != "boris-bin" {
			vols = append(vols, v)
		}
	}
	tc.Volumes = vols
	var mounts []corev1.VolumeMount
	for _, m := range boris.VolumeMounts {
		if m.Name != "boris-bin" {
			mounts = append(mounts, m)
		}
	}
	boris.VolumeMounts, boris.Image, boris.Command = mounts, plain.Containers[0].Image, nil
	tc.Containers = []corev1.Container{boris}
	if !reflect.DeepEqual(tc, plain) {
		t.Fatalf("beyond the injection the toolchain template differs from sandboxtemplate.yaml:\n%+v\n%+v", tc, plain)
	}
}
