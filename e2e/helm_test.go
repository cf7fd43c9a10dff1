package e2e

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"reflect"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// rendered is one `helm template` output, every object decoded strictly.
type rendered struct {
	deployments []appsv1.Deployment
	services    []corev1.Service
	secrets     []corev1.Secret
	pvcs        []corev1.PersistentVolumeClaim
	monitors    []serviceMonitor
}

// serviceMonitor is the part of monitoring.coreos.com/v1 ServiceMonitor the
// chart uses; decoding strictly into it catches misspelled fields.
type serviceMonitor struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name   string            `json:"name"`
		Labels map[string]string `json:"labels"`
	} `json:"metadata"`
	Spec struct {
		Selector struct {
			MatchLabels map[string]string `json:"matchLabels"`
		} `json:"selector"`
		NamespaceSelector struct {
			MatchNames []string `json:"matchNames"`
		} `json:"namespaceSelector"`
		Endpoints []struct {
			Port          string         `json:"port"`
			Scheme        string         `json:"scheme"`
			TLSConfig     map[string]any `json:"tlsConfig"`
			Path          string         `json:"path"`
			Interval      string         `json:"interval"`
			ScrapeTimeout string         `json:"scrapeTimeout"`
		} `json:"endpoints"`
	} `json:"spec"`
}

// decodeManifests splits a multi-document YAML stream and decodes each object
// into its Kubernetes API type, rejecting unknown and duplicate fields.
func decodeManifests(manifests []byte) (*rendered, error) {
	r := &rendered{}
	reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(manifests)))
	for {
		doc, err := reader.Read()
		if errors.Is(err, io.EOF) {
			return r, nil
		}
		if err != nil {
			return nil, err
		}
		if len(bytes.TrimSpace(stripComments(doc))) == 0 {
			continue
		}
		var meta struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
		}
		if err := yaml.Unmarshal(doc, &meta); err != nil {
			return nil, err
		}
		var target any
		switch meta.APIVersion + " " + meta.Kind {
		case "apps/v1 Deployment":
			r.deployments = append(r.deployments, appsv1.Deployment{})
			target = &r.deployments[len(r.deployments)-1]
		case "v1 Service":
			r.services = append(r.services, corev1.Service{})
			target = &r.services[len(r.services)-1]
		case "v1 Secret":
			r.secrets = append(r.secrets, corev1.Secret{})
			target = &r.secrets[len(r.secrets)-1]
		case "v1 PersistentVolumeClaim":
			r.pvcs = append(r.pvcs, corev1.PersistentVolumeClaim{})
			target = &r.pvcs[len(r.pvcs)-1]
		case "monitoring.coreos.com/v1 ServiceMonitor":
			r.monitors = append(r.monitors, serviceMonitor{})
			target = &r.monitors[len(r.monitors)-1]
		default:
			return nil, errors.New("unexpected object " + meta.APIVersion + " " + meta.Kind)
		}
		if err := yaml.UnmarshalStrict(doc, target); err != nil {
			return nil, errors.New(meta.Kind + ": " + err.Error() + "\n" + string(doc))
		}
	}
}

func stripComments(doc []byte) []byte {
	var out [][]byte
	for _, line := range bytes.Split(doc, []byte("\n")) {
		if !bytes.HasPrefix(bytes.TrimSpace(line), []byte("#")) {
			out = append(out, line)
		}
	}
	return bytes.Join(out, []byte("\n"))
}

// TestStrictDecodingCatchesTypos makes sure the checker itself would fail on
// a misspelled field, so the chart tests below mean something.
func TestStrictDecodingCatchesTypos(t *testing.T) {
	typo := `apiVersion: apps/v1
kind: Deployment
metadata:
  name: x
spec:
  template:
    spec:
      containers:
        - name: boris
          readinesProbe:
            httpGet: {path: /health, port: http}
`
	if _, err := decodeManifests([]byte(typo)); err == nil || !strings.Contains(err.Error(), "readinesProbe") {
		t.Fatalf("a misspelled field was accepted: %v", err)
	}
	if _, err := decodeManifests([]byte("apiVersion: v1\nkind: Service\nmetadata:\n  name: a\n  name: b\n")); err == nil {
		t.Fatal("a duplicate field was accepted")
	}
}

func TestHelmDefault(t *testing.T) {
	r := helmTemplate(t)
	if len(r.deployments) != 1 || len(r.services) != 1 || len(r.secrets) != 1 || len(r.pvcs) != 0 || len(r.monitors) != 0 {
		t.Fatalf("objects: %d deployments, %d services, %d secrets, %d pvcs, %d monitors",
			len(r.deployments), len(r.services), len(r.secrets), len(r.pvcs), len(r.monitors))
	}
	d := r.deployments[0]
	pod := d.Spec.Template.Spec
	if *d.Spec.Replicas != 1 || len(pod.Containers) != 1 {
		t.Fatalf("replicas %d, containers %d", *d.Spec.Replicas, len(pod.Containers))
	}
	checkSelector(t, d)
	c := pod.Containers[0]
	checkBorisContainer(t, d, c, "rel-boris", "token")
	if v := volume(t, pod, "workspace"); v.EmptyDir == nil {
		t.Fatalf("workspace volume %+v, want an emptyDir", v.VolumeSource)
	}
	if pod.AutomountServiceAccountToken == nil || *pod.AutomountServiceAccountToken {
		t.Fatal("the service account token is mounted into a pod that runs arbitrary commands")
	}
	ann := d.Spec.Template.Annotations
	if ann["prometheus.io/scrape"] != "true" || ann["prometheus.io/port"] != "8080" || ann["prometheus.io/path"] != "/metrics" {
		t.Fatalf("scrape annotations: %v", ann)
	}

	s := r.services[0]
	if s.Name != "rel-boris" || len(s.Spec.Ports) != 1 || s.Spec.Ports[0].Port != 8080 || s.Spec.Ports[0].TargetPort.String() != "http" {
		t.Fatalf("service: %s %+v", s.Name, s.Spec.Ports)
	}
	if s.Spec.SessionAffinity != corev1.ServiceAffinityNone {
		t.Fatalf("one replica: sessionAffinity %q, want None", s.Spec.SessionAffinity)
	}
	for k, v := range s.Spec.Selector {
		if d.Spec.Template.Labels[k] != v {
			t.Fatalf("service selector %v does not select the pod labels %v", s.Spec.Selector, d.Spec.Template.Labels)
		}
	}
	sec := r.secrets[0]
	if sec.Name != "rel-boris" || len(sec.Data["token"]) < 32 {
		t.Fatalf("generated secret %s: token of %d bytes", sec.Name, len(sec.Data["token"]))
	}
}

func TestHelmSidecar(t *testing.T) {
	r := helmTemplate(t, "ci/sidecar-values.yaml")
	if len(r.deployments) != 1 || len(r.services) != 0 || len(r.secrets) != 1 {
		t.Fatalf("objects: %d deployments, %d services, %d secrets", len(r.deployments), len(r.services), len(r.secrets))
	}
	d := r.deployments[0]
	pod := d.Spec.Template.Spec
	var names []string
	for _, c := range pod.Containers {
		names = append(names, c.Name)
	}
	if !slices.Equal(names, []string{"boris", "agent"}) {
		t.Fatalf("containers %v, want [boris agent]", names)
	}
	boris, agent := pod.Containers[0], pod.Containers[1]
	checkBorisContainer(t, d, boris, "rel-boris", "token")
	if agent.Image != "ghcr.io/example/coding-agent:1.2.3" || !slices.Equal(agent.Command, []string{"/usr/local/bin/agent"}) ||
		!slices.Equal(agent.Args, []string{"--mcp-url", "$(BORIS_URL)"}) {
		t.Fatalf("agent: image %q command %v args %v", agent.Image, agent.Command, agent.Args)
	}
	if e := env(t, agent, "BORIS_URL"); e.Value != "http://localhost:8080/mcp" {
		t.Fatalf("agent BORIS_URL %q", e.Value)
	}
	if e := env(t, agent, "TASK"); e.Value != "fix the failing tests" {
		t.Fatalf("agent TASK %q", e.Value)
	}
	if ref := env(t, agent, "BORIS_TOKEN").ValueFrom; ref == nil || ref.SecretKeyRef == nil || ref.SecretKeyRef.Name != "rel-boris" || ref.SecretKeyRef.Key != "token" {
		t.Fatalf("agent BORIS_TOKEN: %+v", ref)
	}
	// One workspace volume, mounted in both containers.
	if v := volume(t, pod, "workspace"); v.EmptyDir == nil {
		t.Fatalf("workspace volume %+v, want an emptyDir", v.VolumeSource)
	}
	if m := mount(t, agent, "workspace"); m.MountPath != "/workspace" {
		t.Fatalf("agent mounts the workspace at %q", m.MountPath)
	}
	if m := mount(t, agent, "agent-tmp"); m.MountPath != "/tmp" {
		t.Fatalf("agent /tmp: %+v", m)
	}
	if sc := agent.SecurityContext; sc == nil || sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot {
		t.Fatalf("agent securityContext: %+v", sc)
	}
	if d.Spec.Template.Annotations["kubectl.kubernetes.io/default-container"] != "agent" {
		t.Fatalf("annotations: %v", d.Spec.Template.Annotations)
	}
	if out := helmTemplateFails(t, "agent.enabled=true"); !strings.Contains(out, "agent.image.repository is required") {
		t.Fatalf("sidecar without an agent image: %s", out)
	}
}

func TestHelmPVC(t *testing.T) {
	r := helmTemplate(t, "ci/pvc-values.yaml")
	if len(r.pvcs) != 1 || len(r.secrets) != 0 {
		t.Fatalf("objects: %d pvcs, %d secrets (the token is in an existing secret)", len(r.pvcs), len(r.secrets))
	}
	pvc := r.pvcs[0]
	if pvc.Name != "rel-boris-workspace" || pvc.Spec.StorageClassName == nil || *pvc.Spec.StorageClassName != "standard" ||
		!slices.Equal(pvc.Spec.AccessModes, []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}) ||
		pvc.Spec.Resources.Requests.Storage().String() != "5Gi" {
		t.Fatalf("pvc: %s %+v", pvc.Name, pvc.Spec)
	}
	d := r.deployments[0]
	pod := d.Spec.Template.Spec
	if v := volume(t, pod, "workspace"); v.PersistentVolumeClaim == nil || v.PersistentVolumeClaim.ClaimName != pvc.Name {
		t.Fatalf("workspace volume %+v, want claim %s", v.VolumeSource, pvc.Name)
	}
	if d.Spec.Strategy.Type != appsv1.RecreateDeploymentStrategyType {
		t.Fatalf("strategy %q with a ReadWriteOnce claim, want Recreate", d.Spec.Strategy.Type)
	}
	c := pod.Containers[0]
	checkBorisContainer(t, d, c, "boris-token", "mcp-token")
	if !slices.Equal(c.Args, []string{"--allow-dir=/workspace", "--deny-dir=**/.env", "--deny-dir=*.{pem,key}"}) {
		t.Fatalf("args %q", c.Args)
	}
	if e := env(t, c, "BORIS_TIMEOUT"); e.Value != "300" {
		t.Fatalf("BORIS_TIMEOUT %q", e.Value)
	}
}

func TestHelmExistingClaim(t *testing.T) {
	r := helmTemplate(t, "ci/existing-claim-values.yaml")
	if len(r.pvcs) != 0 || len(r.secrets) != 1 {
		t.Fatalf("objects: %d pvcs (the claim exists), %d secrets", len(r.pvcs), len(r.secrets))
	}
	if got := string(r.secrets[0].Data["token"]); got != "not-a-real-token" {
		t.Fatalf("token %q, want the one from values", got)
	}
	if v := volume(t, r.deployments[0].Spec.Template.Spec, "workspace"); v.PersistentVolumeClaim == nil || v.PersistentVolumeClaim.ClaimName != "shared-code" {
		t.Fatalf("workspace volume %+v, want claim shared-code", v.VolumeSource)
	}
}

func TestHelmServiceMonitor(t *testing.T) {
	r := helmTemplate(t, "ci/servicemonitor-values.yaml")
	if len(r.monitors) != 1 || len(r.services) != 1 {
		t.Fatalf("objects: %d monitors, %d services", len(r.monitors), len(r.services))
	}
	if *r.deployments[0].Spec.Replicas != 2 {
		t.Fatalf("replicas %d", *r.deployments[0].Spec.Replicas)
	}
	s := r.services[0]
	// Sessions are per-pod state: with two replicas a client must stay on one.
	if s.Spec.SessionAffinity != corev1.ServiceAffinityClientIP || s.Spec.SessionAffinityConfig == nil {
		t.Fatalf("two replicas: sessionAffinity %q, want ClientIP", s.Spec.SessionAffinity)
	}
	m := r.monitors[0]
	if m.APIVersion != "monitoring.coreos.com/v1" || m.Metadata.Labels["release"] != "prometheus" {
		t.Fatalf("monitor: %s %v", m.APIVersion, m.Metadata.Labels)
	}
	if len(m.Spec.Endpoints) != 1 || m.Spec.Endpoints[0].Port != "http" || m.Spec.Endpoints[0].Path != "/metrics" || m.Spec.Endpoints[0].Interval != "15s" {
		t.Fatalf("endpoints: %+v", m.Spec.Endpoints)
	}
	if !slices.Equal(m.Spec.NamespaceSelector.MatchNames, []string{"agents"}) {
		t.Fatalf("namespaceSelector: %v", m.Spec.NamespaceSelector.MatchNames)
	}
	for k, v := range m.Spec.Selector.MatchLabels {
		if s.Labels[k] != v {
			t.Fatalf("monitor selector %v does not select the service labels %v", m.Spec.Selector.MatchLabels, s.Labels)
		}
	}
	if out := helmTemplateFails(t, "metrics.serviceMonitor.enabled=true", "service.enabled=false"); !strings.Contains(out, "needs service.enabled") {
		t.Fatalf("ServiceMonitor without a Service: %s", out)
	}
}

// checkBorisContainer asserts what every rendering of the boris container
// must have: probes on /health, the non-root read-only security context, the
// token file from the secret, the workspace and /tmp mounts.
func checkBorisContainer(t *testing.T, d appsv1.Deployment, c corev1.Container, secret, key string) {
	t.Helper()
	if c.Name != "boris" || c.Image != "ghcr.io/boris-mcp/boris:0.1.0" {
		t.Fatalf("container %s image %s", c.Name, c.Image)
	}
	if len(c.Ports) != 1 || c.Ports[0].Name != "http" || c.Ports[0].ContainerPort != 8080 {
		t.Fatalf("ports %+v", c.Ports)
	}
	for name, p := range map[string]*corev1.Probe{"liveness": c.LivenessProbe, "readiness": c.ReadinessProbe} {
		if p == nil || p.HTTPGet == nil || p.HTTPGet.Path != "/health" || p.HTTPGet.Port.String() != "http" {
			t.Fatalf("%s probe %+v, want GET /health on http", name, p)
		}
	}
	pod := d.Spec.Template.Spec
	psc := pod.SecurityContext
	if psc == nil || psc.RunAsNonRoot == nil || !*psc.RunAsNonRoot || psc.RunAsUser == nil || *psc.RunAsUser != 65532 || psc.FSGroup == nil || *psc.FSGroup != 65532 {
		t.Fatalf("pod securityContext %+v", psc)
	}
	sc := c.SecurityContext
	if sc == nil || sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot || sc.RunAsUser == nil || *sc.RunAsUser != 65532 ||
		sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem ||
		sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation ||
		sc.Capabilities == nil || !slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) {
		t.Fatalf("container securityContext %+v", sc)
	}
	checkTokenFile(t, pod, c, secret, key)
	if e := env(t, c, "BORIS_WORKDIR"); e.Value != "/workspace" {
		t.Fatalf("BORIS_WORKDIR %q", e.Value)
	}
	// Set by the chart, not left to the image: a toolchainImage has none.
	if e := env(t, c, "BORIS_HOST"); e.Value != "0.0.0.0" {
		t.Fatalf("BORIS_HOST %q", e.Value)
	}
	if m := mount(t, c, "workspace"); m.MountPath != "/workspace" || m.ReadOnly {
		t.Fatalf("workspace mount %+v", m)
	}
	if m := mount(t, c, "tmp"); m.MountPath != "/tmp" {
		t.Fatalf("tmp mount %+v", m)
	}
	if v := volume(t, pod, "tmp"); v.EmptyDir == nil {
		t.Fatalf("tmp volume %+v, want an emptyDir", v.VolumeSource)
	}
	if c.Resources.Requests.Memory().IsZero() || c.Resources.Limits.Memory().IsZero() {
		t.Fatalf("resources %+v", c.Resources)
	}
}

// tokenDir and tokenFile are where the chart mounts the token Secret and
// the file boris reads.
const (
	tokenDir  = "/etc/boris/auth"
	tokenFile = tokenDir + "/token"
)

// checkTokenFile asserts that boris reads its tokens from the Secret as a
// file (BORIS_TOKEN_FILE), never from its environment: the key mounted as
// "token", the whole volume (a subPath is never updated), read-only, mode
// 0440 (the group is the pod's fsGroup, boris's user's).
func checkTokenFile(t *testing.T, pod corev1.PodSpec, c corev1.Container, secret, key string) {
	t.Helper()
	for _, e := range c.Env {
		if e.Name == "BORIS_TOKEN" {
			t.Fatalf("boris gets BORIS_TOKEN in its environment: %+v", e)
		}
	}
	if e := env(t, c, "BORIS_TOKEN_FILE"); e.Value != tokenFile || e.ValueFrom != nil {
		t.Fatalf("BORIS_TOKEN_FILE %+v, want %s", e, tokenFile)
	}
	if m := mount(t, c, "auth"); m.MountPath != tokenDir || !m.ReadOnly || m.SubPath != "" {
		t.Fatalf("auth mount %+v, want %s read-only, the whole volume", m, tokenDir)
	}
	v := volume(t, pod, "auth").Secret
	if v == nil || v.SecretName != secret || len(v.Items) != 1 || v.Items[0].Key != key || v.Items[0].Path != "token" ||
		v.DefaultMode == nil || *v.DefaultMode != 0o440 || v.Items[0].Mode != nil {
		t.Fatalf("auth volume %+v, want Secret %s key %s as token, mode 0440", v, secret, key)
	}
	if fs := pod.SecurityContext.FSGroup; fs == nil || *fs != 65532 {
		t.Fatalf("fsGroup %v: the token file (mode 0440) is readable by boris's user through it", fs)
	}
}

// TestHelmNoAuth: auth.enabled=false mounts no token and says so to boris.
func TestHelmNoAuth(t *testing.T) {
	r := helmTemplateSet(t, nil, []string{"auth.enabled=false"})
	if len(r.secrets) != 0 {
		t.Fatalf("%d secrets without auth", len(r.secrets))
	}
	pod := r.deployments[0].Spec.Template.Spec
	c := pod.Containers[0]
	if e := env(t, c, "BORIS_NO_AUTH"); e.Value != "true" {
		t.Fatalf("BORIS_NO_AUTH %q", e.Value)
	}
	for _, e := range c.Env {
		if strings.HasPrefix(e.Name, "BORIS_TOKEN") {
			t.Errorf("without auth: %s set", e.Name)
		}
	}
	for _, v := range pod.Volumes {
		if v.Name == "auth" {
			t.Errorf("without auth: the token volume is rendered")
		}
	}
}

func checkSelector(t *testing.T, d appsv1.Deployment) {
	t.Helper()
	for k, v := range d.Spec.Selector.MatchLabels {
		if d.Spec.Template.Labels[k] != v {
			t.Fatalf("selector %v does not match the pod labels %v", d.Spec.Selector.MatchLabels, d.Spec.Template.Labels)
		}
	}
}

func env(t *testing.T, c corev1.Container, name string) corev1.EnvVar {
	t.Helper()
	for _, e := range c.Env {
		if e.Name == name {
			return e
		}
	}
	t.Fatalf("container %s has no %s", c.Name, name)
	return corev1.EnvVar{}
}

func mount(t *testing.T, c corev1.Container, name string) corev1.VolumeMount {
	t.Helper()
	for _, m := range c.VolumeMounts {
		if m.Name == name {
			return m
		}
	}
	t.Fatalf("container %s does not mount %s", c.Name, name)
	return corev1.VolumeMount{}
}

func volume(t *testing.T, pod corev1.PodSpec, name string) corev1.Volume {
	t.Helper()
	for _, v := range pod.Volumes {
		if v.Name == name {
			return v
		}
	}
	t.Fatalf("the pod has no volume %s", name)
	return corev1.Volume{}
}

// TestHelmSandbox: the sandbox values become BORIS_SANDBOX* variables, a
// bare YAML on (read as true) included; by default none is set.
func TestHelmSandbox(t *testing.T) {
	r := helmTemplate(t, "ci/sandbox-values.yaml")
	c := r.deployments[0].Spec.Template.Spec.Containers[0]
	for name, want := range map[string]string{"BORIS_SANDBOX": "on", "BORIS_SANDBOX_NET": "443,80", "BORIS_SANDBOX_WRITE": "/cache"} {
		if e := env(t, c, name); e.Value != want {
			t.Errorf("%s=%q, want %q", name, e.Value, want)
		}
	}
	// The writable path exists in the pod: an emptyDir is mounted there.
	spec := r.deployments[0].Spec.Template.Spec
	mounted := ""
	for _, m := range c.VolumeMounts {
		if m.MountPath == "/cache" {
			mounted = m.Name
		}
	}
	if mounted == "" {
		t.Fatalf("nothing mounted at /cache: %+v", c.VolumeMounts)
	}
	for _, v := range spec.Volumes {
		if v.Name == mounted && v.EmptyDir == nil {
			t.Fatalf("volume %s is not an emptyDir: %+v", mounted, v)
		}
	}
	def := helmTemplate(t).deployments[0].Spec.Template.Spec.Containers[0]
	for _, e := range def.Env {
		if e.Name == "BORIS_SANDBOX" && e.Value != "off" || e.Name == "BORIS_SANDBOX_NET" || e.Name == "BORIS_SANDBOX_WRITE" {
			t.Errorf("default values set %s=%q", e.Name, e.Value)
		}
	}
}

// TestHelmTLS: tls.secretName mounts the kubernetes.io/tls Secret read-only
// at /etc/boris/tls, points BORIS_TLS_CERT/BORIS_TLS_KEY at its files,
// denies the directory to the file tools, and turns the probes, the scrape
// annotations, the Service port, the ServiceMonitor, the sidecar's URL and
// the notes to HTTPS. Without it none of that is rendered.
func TestHelmTLS(t *testing.T) {
	const dir = "/etc/boris/tls"
	def := helmTemplate(t)
	dc := def.deployments[0].Spec.Template.Spec.Containers[0]
	for _, e := range dc.Env {
		if strings.HasPrefix(e.Name, "BORIS_TLS_") {
			t.Errorf("default values set %s", e.Name)
		}
	}
	for _, m := range dc.VolumeMounts {
		if m.MountPath == dir {
			t.Errorf("default values mount %s", dir)
		}
	}
	if p := dc.LivenessProbe.HTTPGet; p.Scheme != "" && p.Scheme != corev1.URISchemeHTTP {
		t.Errorf("default liveness probe scheme %q", p.Scheme)
	}
	if port := def.services[0].Spec.Ports[0]; port.Name != "http" || port.AppProtocol != nil {
		t.Errorf("default service port %+v", port)
	}
	if _, ok := def.deployments[0].Spec.Template.Annotations["prometheus.io/scheme"]; ok || slices.Contains(dc.Args, "--deny-dir="+dir) {
		t.Errorf("default values: scrape scheme annotation or TLS deny rendered: %v %v", def.deployments[0].Spec.Template.Annotations, dc.Args)
	}

	r := helmTemplateSet(t, nil, []string{"tls.secretName=boris-tls", "metrics.serviceMonitor.enabled=true",
		"metrics.serviceMonitor.tlsConfig.ca.secret.name=boris-tls", "metrics.serviceMonitor.tlsConfig.ca.secret.key=ca.crt",
		"metrics.serviceMonitor.tlsConfig.serverName=rel-boris.agents.svc"})
	d := r.deployments[0]
	pod := d.Spec.Template.Spec
	c := pod.Containers[0]
	checkBorisContainer(t, d, c, "rel-boris", "token")
	if v := volume(t, pod, "tls"); v.Secret == nil || v.Secret.SecretName != "boris-tls" {
		t.Fatalf("tls volume %+v, want Secret boris-tls", v.VolumeSource)
	}
	if m := mount(t, c, "tls"); m.MountPath != dir || !m.ReadOnly || m.SubPath != "" {
		t.Fatalf("tls mount %+v, want %s read-only, the whole volume (a subPath is never updated)", m, dir)
	}
	if e := env(t, c, "BORIS_TLS_CERT"); e.Value != dir+"/tls.crt" {
		t.Fatalf("BORIS_TLS_CERT %q", e.Value)
	}
	if e := env(t, c, "BORIS_TLS_KEY"); e.Value != dir+"/tls.key" {
		t.Fatalf("BORIS_TLS_KEY %q", e.Value)
	}
	if !slices.Contains(c.Args, "--deny-dir="+dir) {
		t.Fatalf("args %q: the file tools may read the key", c.Args)
	}
	for name, p := range map[string]*corev1.Probe{"liveness": c.LivenessProbe, "readiness": c.ReadinessProbe} {
		if p.HTTPGet.Scheme != corev1.URISchemeHTTPS {
			t.Errorf("%s probe scheme %q, want HTTPS", name, p.HTTPGet.Scheme)
		}
	}
	if a := d.Spec.Template.Annotations["prometheus.io/scheme"]; a != "https" {
		t.Errorf("prometheus.io/scheme %q", a)
	}
	port := r.services[0].Spec.Ports[0]
	if port.Name != "https" || port.AppProtocol == nil || *port.AppProtocol != "https" || port.TargetPort.String() != "http" {
		t.Errorf("service port %+v, want https (appProtocol https) to the container's port", port)
	}
	ep := r.monitors[0].Spec.Endpoints[0]
	ca, _ := ep.TLSConfig["ca"].(map[string]any)
	secret, _ := ca["secret"].(map[string]any)
	if ep.Port != "https" || ep.Scheme != "https" || secret["name"] != "boris-tls" || secret["key"] != "ca.crt" || ep.TLSConfig["serverName"] != "rel-boris.agents.svc" {
		t.Errorf("ServiceMonitor endpoint %+v", ep)
	}

	// A probe that names its scheme keeps it.
	r = helmTemplateSet(t, nil, []string{"tls.secretName=boris-tls", "livenessProbe.httpGet.scheme=HTTP"})
	if c := r.deployments[0].Spec.Template.Spec.Containers[0]; c.LivenessProbe.HTTPGet.Scheme != corev1.URISchemeHTTP || c.ReadinessProbe.HTTPGet.Scheme != corev1.URISchemeHTTPS {
		t.Errorf("probe schemes %q %q, want the given HTTP kept and HTTPS added", c.LivenessProbe.HTTPGet.Scheme, c.ReadinessProbe.HTTPGet.Scheme)
	}

	r = helmTemplateSet(t, []string{"ci/sidecar-values.yaml"}, []string{"tls.secretName=boris-tls"})
	agent := r.deployments[0].Spec.Template.Spec.Containers[1]
	if e := env(t, agent, "BORIS_URL"); e.Value != "https://localhost:8080/mcp" {
		t.Errorf("agent BORIS_URL %q", e.Value)
	}
	for _, m := range agent.VolumeMounts {
		if m.Name == "tls" {
			t.Errorf("the agent container mounts the TLS Secret")
		}
	}

	notes := helmNotes(t, "tls.secretName=boris-tls")
	if !strings.Contains(notes, "https://rel-boris.agents.svc:8080/mcp") || !strings.Contains(notes, "Secret boris-tls") {
		t.Errorf("notes:\n%s", notes)
	}
	if notes := helmNotes(t); !strings.Contains(notes, "http://rel-boris.agents.svc:8080/mcp") || strings.Contains(notes, "TLS") {
		t.Errorf("default notes:\n%s", notes)
	}
}

// TestHelmToolchainImage: toolchainImage runs the workspace container from
// another image with boris injected by an init container, and keeps
// everything else — the security contexts (the init container's too),
// probes (HTTPS with TLS), the token file, checkpoints, the sidecar agent.
func TestHelmToolchainImage(t *testing.T) {
	r := helmTemplateSet(t, nil, []string{"toolchainImage.repository=python", "toolchainImage.tag=3.12-bookworm",
		"agent.enabled=true", "agent.image.repository=ghcr.io/example/coding-agent", "tls.secretName=boris-tls"})
	d := r.deployments[0]
	pod := d.Spec.Template.Spec
	if len(pod.InitContainers) != 1 || len(pod.Containers) != 2 {
		t.Fatalf("%d init containers, %d containers", len(pod.InitContainers), len(pod.Containers))
	}
	ini, boris := pod.InitContainers[0], pod.Containers[0]
	if ini.Name != "install-boris" || ini.Image != "ghcr.io/boris-mcp/boris:0.1.0" ||
		!slices.Equal(ini.Command, []string{"/usr/local/bin/boris", "install", "/opt/boris"}) {
		t.Fatalf("init container %s: image %s command %v", ini.Name, ini.Image, ini.Command)
	}
	if !reflect.DeepEqual(ini.SecurityContext, boris.SecurityContext) {
		t.Fatalf("the init container's securityContext %+v differs from boris's %+v", ini.SecurityContext, boris.SecurityContext)
	}
	if m := mount(t, ini, "boris-bin"); m.MountPath != "/opt/boris" || m.ReadOnly {
		t.Fatalf("init container's mount %+v", m)
	}
	if ini.Resources.Limits.Memory().IsZero() {
		t.Fatalf("init container resources %+v", ini.Resources)
	}
	if boris.Image != "python:3.12-bookworm" || !slices.Equal(boris.Command, []string{"/opt/boris/boris"}) {
		t.Fatalf("workspace container: image %s command %v", boris.Image, boris.Command)
	}
	if m := mount(t, boris, "boris-bin"); m.MountPath != "/opt/boris" || !m.ReadOnly {
		t.Fatalf("workspace container's mount of boris %+v", m)
	}
	if v := volume(t, pod, "boris-bin"); v.EmptyDir == nil {
		t.Fatalf("boris-bin volume %+v, want an emptyDir", v.VolumeSource)
	}
	// Everything else as without toolchainImage.
	same := boris
	same.Image = "ghcr.io/boris-mcp/boris:0.1.0"
	checkBorisContainer(t, d, same, "rel-boris", "token")
	if p := boris.ReadinessProbe; p.HTTPGet.Scheme != corev1.URISchemeHTTPS {
		t.Fatalf("readiness probe with TLS: %+v", p.HTTPGet)
	}
	if e := env(t, boris, "BORIS_CHECKPOINT_DIR"); e.Value != "/var/lib/boris/checkpoints" {
		t.Fatalf("BORIS_CHECKPOINT_DIR %q", e.Value)
	}
	if e := env(t, boris, "HOME"); e.Value != "/tmp" {
		t.Fatalf("HOME %q", e.Value)
	}
	mount(t, boris, "checkpoints")
	mount(t, boris, "tls")
	if pod.Containers[1].Name != "agent" {
		t.Fatalf("second container %s, want the agent", pod.Containers[1].Name)
	}

	// The test value set: the e2e toolchain image, run as the checkout's owner.
	r = helmTemplate(t, "ci/toolchain-values.yaml")
	pod = r.deployments[0].Spec.Template.Spec
	if pod.Containers[0].Image != "boris-e2e/go:latest" || *pod.SecurityContext.RunAsUser != 1000 || *pod.InitContainers[0].SecurityContext.RunAsUser != 1000 {
		t.Fatalf("ci/toolchain-values.yaml: image %s, pod uid %d", pod.Containers[0].Image, *pod.SecurityContext.RunAsUser)
	}
	if v := volume(t, pod, "workspace"); v.PersistentVolumeClaim == nil || v.PersistentVolumeClaim.ClaimName != "checkout" {
		t.Fatalf("workspace %+v", v.VolumeSource)
	}
	// Without toolchainImage there is no init container.
	if n := len(helmTemplate(t).deployments[0].Spec.Template.Spec.InitContainers); n != 0 {
		t.Fatalf("%d init containers by default", n)
	}
}
