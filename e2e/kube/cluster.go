// Package kube runs a throwaway single-node Kubernetes cluster on this
// machine for the chart's end-to-end tests: etcd, the control plane and a
// kubelet with its own containerd, a CNI bridge and kube-proxy, with the
// images it needs loaded from the local Docker engine. Nothing is pulled.
//
// The Kubernetes binaries are built from the module proxy at the version
// pinned in k8sbin/go.mod (Go caches the build); etcd, containerd, runc
// and the CNI plugins come from Debian's packages. The cluster needs root
// and touches host state — the cni0 bridge, iptables chains, network
// namespaces, cgroups — so one runs at a time, and Down removes all of it.
//
// Facts it is built on: the API server listens on the bridge's address, not
// loopback, so that pods reach it through the kubernetes Service; a kernel
// with cgroup v1 needs the kubelet's failCgroupV1: false (cgroupfs driver);
// a root without CAP_SYS_RESOURCE needs containerd's
// restrict_oom_score_adj; Docker's FORWARD policy (DROP) needs the CNI
// firewall plugin to let pod traffic through.
package kube

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// The cluster's fixed addresses: one at a time runs on a machine.
const (
	Bridge      = "cni0"
	BridgeIP    = "10.88.0.1" // the API server and the node listen here
	PodCIDR     = "10.88.0.0/16"
	ServiceCIDR = "10.96.0.0/16"
	NodeName    = "boris-node"
	apiPort     = 6443
	etcdPort    = 12379
	etcdPeer    = 12380
	networkName = "boris-kube"
	// PauseImage is the sandbox image containerd is told to use; Up loads
	// a locally built one under this name.
	PauseImage = "registry.k8s.io/pause:3.10"
)

// DefaultDir is where the cluster keeps its state unless told otherwise.
const DefaultDir = "/tmp/boris-kube"

// Options configure Up.
type Options struct {
	// Dir holds every file the cluster makes (DefaultDir if empty).
	Dir string
	// BinDir holds kube-apiserver, kube-controller-manager,
	// kube-scheduler, kubelet and kube-proxy (see Binaries).
	BinDir string
	// Images are loaded from the Docker engine into the node's containerd,
	// each under its own name and the extra names it maps to.
	Images map[string][]string
	// Log receives progress lines (nil: discarded).
	Log io.Writer
}

// Cluster is a running cluster.
type Cluster struct {
	Dir        string
	Kubeconfig string
	Config     *rest.Config
	Client     kubernetes.Interface
	binDir     string
	log        io.Writer
}

// Up starts a cluster and returns it once the node is Ready. A cluster
// left behind in the same directory is taken down first. On failure
// everything started is taken down again and the error names what failed,
// with the end of that component's log.
func Up(ctx context.Context, o Options) (c *Cluster, err error) {
	if o.Dir == "" {
		o.Dir = DefaultDir
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
	if err := preflight(o.BinDir); err != nil {
		return nil, err
	}
	if _, err := os.Stat(o.Dir); err == nil {
		fmt.Fprintf(o.Log, "kube: removing the cluster left in %s\n", o.Dir)
		if err := Down(o.Dir, o.Log); err != nil {
			return nil, fmt.Errorf("removing the old cluster: %w", err)
		}
	}
	for _, d := range []string{"logs", "pids", "etcd", "cni/net.d", "cni/ipam", "containerd", "kubelet", "volumes"} {
		if err := os.MkdirAll(filepath.Join(o.Dir, d), 0o755); err != nil {
			return nil, err
		}
	}
	// Host directories the cluster's programs make outside Dir (the
	// kubelet's device-plugin socket, CNI's cache, the pods' network
	// namespaces and log links): the ones not there now go at Down.
	var made []string
	for _, p := range hostPaths {
		if _, err := os.Lstat(p); errors.Is(err, os.ErrNotExist) {
			made = append(made, p)
		}
	}
	for name, content := range map[string]string{"started": time.Now().Format(time.RFC3339Nano), "bindir": o.BinDir, "host-paths": strings.Join(made, "\n")} {
		if err := os.WriteFile(filepath.Join(o.Dir, name), []byte(content), 0o644); err != nil {
			return nil, err
		}
	}
	defer func() {
		if err != nil {
			_ = Down(o.Dir, o.Log)
		}
	}()
	c = &Cluster{Dir: o.Dir, Kubeconfig: filepath.Join(o.Dir, "admin.kubeconfig"), binDir: o.BinDir, log: o.Log}
	start := time.Now()
	if err := c.network(); err != nil {
		return nil, err
	}
	p, err := newPKI(filepath.Join(o.Dir, "pki"), []net.IP{net.ParseIP(BridgeIP)}, NodeName)
	if err != nil {
		return nil, err
	}
	server := fmt.Sprintf("https://%s:%d", BridgeIP, apiPort)
	for _, k := range []struct{ file, user string }{{"admin.kubeconfig", "admin"}, {"kubelet.kubeconfig", "kubelet"}, {"kube-proxy.kubeconfig", "kube-proxy"}} {
		if err := p.kubeconfig(filepath.Join(o.Dir, k.file), server, k.user); err != nil {
			return nil, err
		}
	}
	if err := c.startEtcd(ctx); err != nil {
		return nil, err
	}
	if err := c.startControlPlane(ctx, p); err != nil {
		return nil, err
	}
	if c.Config, err = restConfig(c.Kubeconfig); err != nil {
		return nil, err
	}
	if c.Client, err = kubernetes.NewForConfig(c.Config); err != nil {
		return nil, err
	}
	if err := c.startContainerd(ctx); err != nil {
		return nil, err
	}
	if err := c.loadImages(ctx, o.Images); err != nil {
		return nil, err
	}
	if err := c.startNode(ctx, p); err != nil {
		return nil, err
	}
	fmt.Fprintf(o.Log, "kube: cluster up in %s, kubeconfig %s\n", time.Since(start).Round(100*time.Millisecond), c.Kubeconfig)
	return c, nil
}

// preflight names what is missing before anything is touched.
func preflight(binDir string) error {
	if os.Geteuid() != 0 {
		return errors.New("the test cluster needs root (it makes a bridge, iptables rules and network namespaces)")
	}
	var missing []string
	for cmd, pkg := range map[string]string{"etcd": "etcd-server", "containerd": "containerd", "ctr": "containerd", "runc": "runc", "iptables": "iptables", "iptables-save": "iptables", "ip": "iproute2", "docker": "docker.io (a Docker engine, to export images)"} {
		if _, err := exec.LookPath(cmd); err != nil {
			missing = append(missing, fmt.Sprintf("%s (Debian: %s)", cmd, pkg))
		}
	}
	for _, plugin := range []string{"bridge", "host-local", "portmap", "firewall", "loopback"} {
		if _, err := os.Stat(filepath.Join(cniBinDir, plugin)); err != nil {
			missing = append(missing, fmt.Sprintf("the CNI plugin %s in %s (Debian: containernetworking-plugins)", plugin, cniBinDir))
		}
	}
	for _, b := range components {
		if _, err := os.Stat(filepath.Join(binDir, b)); err != nil {
			missing = append(missing, fmt.Sprintf("%s in %s (see Binaries)", b, binDir))
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("the test cluster cannot start; missing: %s", strings.Join(missing, "; "))
	}
	if _, err := os.Stat("/proc/sys/net/bridge/bridge-nf-call-iptables"); err != nil {
		return errors.New("the kernel's br_netfilter module is not loaded (modprobe br_netfilter): kube-proxy cannot see bridged pod traffic without it")
	}
	return nil
}

const cniBinDir = "/usr/lib/cni"

// hostPaths are the directories outside its own that the cluster's
// programs may create.
var hostPaths = []string{"/var/lib/kubelet", "/var/lib/cni", "/var/run/netns", "/var/log/containers", "/var/log/pods"}

// components are the Kubernetes binaries the cluster runs.
var components = []string{"kube-apiserver", "kube-controller-manager", "kube-scheduler", "kubelet", "kube-proxy"}

// network makes the bridge with the gateway address (the API server binds
// to it before any pod exists), lets the kernel forward, and writes the
// CNI configuration.
func (c *Cluster) network() error {
	for _, s := range []struct{ key, val string }{{"net/ipv4/ip_forward", "1"}, {"net/bridge/bridge-nf-call-iptables", "1"}} {
		if err := os.WriteFile("/proc/sys/"+s.key, []byte(s.val), 0o644); err != nil {
			return fmt.Errorf("sysctl %s: %w", s.key, err)
		}
	}
	if err := run("ip", "link", "add", Bridge, "type", "bridge"); err != nil {
		return err
	}
	if err := run("ip", "addr", "add", BridgeIP+"/16", "dev", Bridge); err != nil {
		return err
	}
	if err := run("ip", "link", "set", Bridge, "up"); err != nil {
		return err
	}
	conf := fmt.Sprintf(`{
  "cniVersion": "1.0.0",
  "name": %q,
  "plugins": [
    {"type": "bridge", "bridge": %q, "isGateway": true, "ipMasq": true, "hairpinMode": true,
     "ipam": {"type": "host-local", "dataDir": %q, "ranges": [[{"subnet": %q, "gateway": %q}]], "routes": [{"dst": "0.0.0.0/0"}]}},
    {"type": "portmap", "capabilities": {"portMappings": true}},
    {"type": "firewall"}
  ]
}
`, networkName, Bridge, filepath.Join(c.Dir, "cni/ipam"), PodCIDR, BridgeIP)
	return os.WriteFile(filepath.Join(c.Dir, "cni/net.d/10-boris-kube.conflist"), []byte(conf), 0o644)
}

func (c *Cluster) startEtcd(ctx context.Context) error {
	url := fmt.Sprintf("http://127.0.0.1:%d", etcdPort)
	peer := fmt.Sprintf("http://127.0.0.1:%d", etcdPeer)
	if err := c.spawn("etcd", "etcd", "--name=boris-kube", "--data-dir="+filepath.Join(c.Dir, "etcd"),
		"--listen-client-urls="+url, "--advertise-client-urls="+url,
		"--listen-peer-urls="+peer, "--initial-advertise-peer-urls="+peer, "--initial-cluster=boris-kube="+peer,
		"--unsafe-no-fsync"); err != nil {
		return err
	}
	return c.waitFor(ctx, "etcd", 30*time.Second, func() error { return httpOK(http.DefaultClient, url+"/health") })
}

func (c *Cluster) startControlPlane(ctx context.Context, p *pki) error {
	pk := p.path
	if err := c.spawn("kube-apiserver", c.bin("kube-apiserver"),
		fmt.Sprintf("--etcd-servers=http://127.0.0.1:%d", etcdPort),
		"--bind-address="+BridgeIP, "--advertise-address="+BridgeIP, fmt.Sprintf("--secure-port=%d", apiPort),
		"--service-cluster-ip-range="+ServiceCIDR,
		"--client-ca-file="+pk("ca.crt"), "--tls-cert-file="+pk("apiserver.crt"), "--tls-private-key-file="+pk("apiserver.key"),
		"--kubelet-client-certificate="+pk("admin.crt"), "--kubelet-client-key="+pk("admin.key"),
		"--kubelet-certificate-authority="+pk("ca.crt"), "--kubelet-preferred-address-types=InternalIP", // no cluster DNS
		"--service-account-issuer=https://kubernetes.default.svc", "--service-account-key-file="+pk("sa.pub"),
		"--service-account-signing-key-file="+pk("sa.key"),
		"--authorization-mode=Node,RBAC", "--enable-admission-plugins=NodeRestriction",
		"--profiling=false", "--cert-dir="+filepath.Join(c.Dir, "pki/apiserver-generated")); err != nil {
		return err
	}
	client, err := p.client("admin")
	if err != nil {
		return err
	}
	if err := c.waitFor(ctx, "kube-apiserver", 90*time.Second, func() error {
		return httpOK(client, fmt.Sprintf("https://%s:%d/readyz", BridgeIP, apiPort))
	}); err != nil {
		return err
	}
	admin := filepath.Join(c.Dir, "admin.kubeconfig")
	if err := c.spawn("kube-controller-manager", c.bin("kube-controller-manager"),
		"--kubeconfig="+admin, "--authentication-kubeconfig="+admin, "--authorization-kubeconfig="+admin,
		"--bind-address=127.0.0.1", "--leader-elect=false", "--use-service-account-credentials=true",
		"--service-account-private-key-file="+pk("sa.key"), "--root-ca-file="+pk("ca.crt"),
		"--cluster-signing-cert-file="+pk("ca.crt"), "--cluster-signing-key-file="+pk("ca.key"),
		"--allocate-node-cidrs=false", "--cert-dir="+filepath.Join(c.Dir, "pki/controller-manager")); err != nil {
		return err
	}
	return c.spawn("kube-scheduler", c.bin("kube-scheduler"),
		"--kubeconfig="+admin, "--authentication-kubeconfig="+admin, "--authorization-kubeconfig="+admin,
		"--bind-address=127.0.0.1", "--leader-elect=false", "--cert-dir="+filepath.Join(c.Dir, "pki/scheduler"))
}

func (c *Cluster) containerdSocket() string {
	return filepath.Join(c.Dir, "containerd/containerd.sock")
}

func (c *Cluster) startContainerd(ctx context.Context) error {
	d := filepath.Join(c.Dir, "containerd")
	config := fmt.Sprintf(`version = 2
root = %q
state = %q
[grpc]
  address = %q
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = %q
  restrict_oom_score_adj = true
  disable_apparmor = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
        Root = %q
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = %q
    conf_dir = %q
`, filepath.Join(d, "root"), filepath.Join(d, "state"), c.containerdSocket(), PauseImage, filepath.Join(d, "runc"), cniBinDir, filepath.Join(c.Dir, "cni/net.d"))
	path := filepath.Join(d, "config.toml")
	if err := os.WriteFile(path, []byte(config), 0o644); err != nil {
		return err
	}
	if err := c.spawn("containerd", "containerd", "--config="+path); err != nil {
		return err
	}
	return c.waitFor(ctx, "containerd", 30*time.Second, func() error {
		return exec.CommandContext(ctx, "ctr", "--address", c.containerdSocket(), "version").Run()
	})
}

// loadImages copies images from the Docker engine into the node's
// containerd and gives them their extra names.
func (c *Cluster) loadImages(ctx context.Context, images map[string][]string) error {
	if len(images) == 0 {
		return nil
	}
	var names []string
	for img := range images {
		names = append(names, img)
	}
	save := exec.CommandContext(ctx, "docker", append([]string{"save"}, names...)...)
	imp := exec.CommandContext(ctx, "ctr", "--address", c.containerdSocket(), "-n", "k8s.io", "images", "import", "--no-unpack", "-")
	pipe, err := save.StdoutPipe()
	if err != nil {
		return err
	}
	imp.Stdin = pipe
	var saveErr, impOut bytes.Buffer
	save.Stderr = &saveErr
	imp.Stdout, imp.Stderr = &impOut, &impOut
	if err := save.Start(); err != nil {
		return fmt.Errorf("docker save: %w", err)
	}
	if err := imp.Run(); err != nil {
		_ = save.Wait()
		return fmt.Errorf("ctr images import: %v: %s", err, impOut.String())
	}
	if err := save.Wait(); err != nil {
		return fmt.Errorf("docker save %v: %v: %s", names, err, saveErr.String())
	}
	for img, tags := range images {
		for _, tag := range tags {
			if err := run("ctr", "--address", c.containerdSocket(), "-n", "k8s.io", "images", "tag", "--force", normalize(img), normalize(tag)); err != nil {
				return err
			}
		}
	}
	fmt.Fprintf(c.log, "kube: loaded %d images\n", len(images))
	return nil
}

// normalize gives an image reference the full form containerd stores it
// under (docker.io/library/boris:latest for boris:latest).
func normalize(ref string) string {
	name := ref
	if i := strings.IndexByte(name, '/'); i < 0 {
		name = "docker.io/library/" + name
	} else if first := name[:i]; !strings.ContainsAny(first, ".:") && first != "localhost" {
		name = "docker.io/" + name
	}
	if !strings.Contains(name[strings.LastIndexByte(name, '/')+1:], ":") && !strings.Contains(name, "@") {
		name += ":latest"
	}
	return name
}

func (c *Cluster) startNode(ctx context.Context, p *pki) error {
	kubeletDir := filepath.Join(c.Dir, "kubelet")
	config := fmt.Sprintf(`apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: %s
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: %q}
authorization:
  mode: Webhook
tlsCertFile: %q
tlsPrivateKeyFile: %q
cgroupDriver: cgroupfs
failCgroupV1: false
failSwapOn: false
containerRuntimeEndpoint: unix://%s
podLogsDir: %q
resolvConf: /etc/resolv.conf
imageGCHighThresholdPercent: 100
evictionHard:
  memory.available: "100Mi"
  nodefs.available: "1%%"
  imagefs.available: "1%%"
  nodefs.inodesFree: "1%%"
serializeImagePulls: false
`, BridgeIP, p.path("ca.crt"), p.path("kubelet-serving.crt"), p.path("kubelet-serving.key"), c.containerdSocket(), filepath.Join(c.Dir, "pod-logs"))
	if err := p.issue("kubelet-serving", NodeName, nil, []string{NodeName, "localhost"}, []net.IP{net.ParseIP(BridgeIP), net.IPv4(127, 0, 0, 1)}, true); err != nil {
		return err
	}
	path := filepath.Join(kubeletDir, "config.yaml")
	if err := os.WriteFile(path, []byte(config), 0o644); err != nil {
		return err
	}
	if err := c.spawn("kubelet", c.bin("kubelet"), "--config="+path, "--kubeconfig="+filepath.Join(c.Dir, "kubelet.kubeconfig"),
		"--root-dir="+filepath.Join(kubeletDir, "root"), "--cert-dir="+filepath.Join(kubeletDir, "pki"),
		"--hostname-override="+NodeName, "--node-ip="+BridgeIP); err != nil {
		return err
	}
	proxyConfig := fmt.Sprintf(`apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
mode: iptables
clusterCIDR: %s
clientConnection: {kubeconfig: %q}
hostnameOverride: %s
bindAddress: 127.0.0.1
healthzBindAddress: 127.0.0.1:10256
metricsBindAddress: 127.0.0.1:10249
conntrack: {maxPerCore: 0, min: 0}
`, PodCIDR, filepath.Join(c.Dir, "kube-proxy.kubeconfig"), NodeName)
	proxyPath := filepath.Join(c.Dir, "kube-proxy.yaml")
	if err := os.WriteFile(proxyPath, []byte(proxyConfig), 0o644); err != nil {
		return err
	}
	if err := c.spawn("kube-proxy", c.bin("kube-proxy"), "--config="+proxyPath); err != nil {
		return err
	}
	if err := c.waitFor(ctx, "kubelet", 120*time.Second, func() error {
		n, err := c.Client.CoreV1().Nodes().Get(ctx, NodeName, metav1.GetOptions{})
		if err != nil {
			return err
		}
		for _, cond := range n.Status.Conditions {
			if cond.Type == corev1.NodeReady {
				if cond.Status == corev1.ConditionTrue {
					return nil
				}
				return fmt.Errorf("node not Ready: %s", cond.Message)
			}
		}
		return errors.New("node has no Ready condition yet")
	}); err != nil {
		return err
	}
	return c.waitFor(ctx, "kube-proxy", 60*time.Second, func() error { return httpOK(http.DefaultClient, "http://127.0.0.1:10256/healthz") })
}

// restConfig loads a kubeconfig with its certificates read in: client-go
// caches connections by the certificate files' names, and a new cluster
// in the same directory has new certificates under the same names.
func restConfig(kubeconfig string) (*rest.Config, error) {
	config, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, err
	}
	return config, rest.LoadTLSFiles(config)
}

func (c *Cluster) bin(name string) string { return filepath.Join(c.binDir, name) }

// spawn starts a component in its own session (so that it outlives the
// process that started it, for `make cluster-up`), with its output in
// logs/<name>.log and its pid in pids/<name>.
func (c *Cluster) spawn(name, path string, args ...string) error {
	return c.spawnEnv(name, nil, path, args...)
}

// spawnEnv is spawn with variables added to the environment.
func (c *Cluster) spawnEnv(name string, env []string, path string, args ...string) error {
	logf, err := os.OpenFile(filepath.Join(c.Dir, "logs", name+".log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer logf.Close()
	cmd := exec.Command(path, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start %s: %w", name, err)
	}
	go func() { _ = cmd.Wait() }() // reap it if it dies while we run
	fmt.Fprintf(c.log, "kube: started %s (pid %d)\n", name, cmd.Process.Pid)
	return os.WriteFile(filepath.Join(c.Dir, "pids", name), []byte(strconv.Itoa(cmd.Process.Pid)), 0o644)
}

// waitFor polls ready until it succeeds, the component dies, or limit
// passes; the error then quotes the end of the component's log.
func (c *Cluster) waitFor(ctx context.Context, name string, limit time.Duration, ready func() error) error {
	deadline := time.Now().Add(limit)
	var last error
	for {
		if last = ready(); last == nil {
			return nil
		}
		if !c.alive(name) {
			return fmt.Errorf("%s exited: %v\n%s", name, last, c.logTail(name))
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("%s not ready after %s: %v\n%s", name, limit, last, c.logTail(name))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func (c *Cluster) alive(name string) bool {
	pid, err := readPid(filepath.Join(c.Dir, "pids", name))
	return err == nil && syscall.Kill(pid, 0) == nil && !zombie(pid)
}

func (c *Cluster) logTail(name string) string {
	b, _ := os.ReadFile(filepath.Join(c.Dir, "logs", name+".log"))
	if len(b) > 3000 {
		b = b[len(b)-3000:]
	}
	return fmt.Sprintf("--- end of %s's log ---\n%s", name, b)
}

// client returns an HTTPS client that presents the named certificate and
// trusts the cluster's CA.
func (p *pki) client(name string) (*http.Client, error) {
	cert, err := tls.LoadX509KeyPair(p.path(name+".crt"), p.path(name+".key"))
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	pool.AddCert(p.caCert)
	return &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{Certificates: []tls.Certificate{cert}, RootCAs: pool}}}, nil
}

func httpOK(client *http.Client, url string) error {
	resp, err := client.Get(url)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 2000))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s: %s", url, resp.Status, body)
	}
	return nil
}

func run(name string, args ...string) error {
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s %s: %v: %s", name, strings.Join(args, " "), err, bytes.TrimSpace(out))
	}
	return nil
}

func readPid(path string) (int, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(strings.TrimSpace(string(b)))
}

func zombie(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	i := bytes.LastIndexByte(b, ')')
	return i > 0 && len(b) > i+2 && b[i+2] == 'Z'
}
