package kube

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensions "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

// ApplyCRDFile creates the CustomResourceDefinition in a YAML file and
// waits until the API server serves it.
func ApplyCRDFile(ctx context.Context, c *Cluster, path string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var crd apiextensionsv1.CustomResourceDefinition
	if err := yaml.UnmarshalStrict(b, &crd); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	client, err := apiextensions.NewForConfig(c.Config)
	if err != nil {
		return err
	}
	if _, err := client.ApiextensionsV1().CustomResourceDefinitions().Create(ctx, &crd, metav1.CreateOptions{FieldValidation: "Strict"}); err != nil {
		return fmt.Errorf("creating the CRD %s: %w", crd.Name, err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		got, err := client.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, crd.Name, metav1.GetOptions{})
		if err == nil {
			for _, cond := range got.Status.Conditions {
				if cond.Type == apiextensionsv1.Established && cond.Status == apiextensionsv1.ConditionTrue {
					return nil
				}
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the CRD %s is not established after 30 s (%v)", crd.Name, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// ApplyCRDFromModule applies a CRD file shipped in a Go module at a
// pinned version (module@version), fetched through the module proxy into
// Go's module cache.
func ApplyCRDFromModule(ctx context.Context, c *Cluster, moduleAtVersion, file string) error {
	out, err := exec.CommandContext(ctx, "go", "mod", "download", "-json", moduleAtVersion).Output()
	if err != nil {
		return fmt.Errorf("go mod download %s: %w", moduleAtVersion, err)
	}
	var info struct{ Dir, Error string }
	if err := json.Unmarshal(out, &info); err != nil || info.Dir == "" {
		return fmt.Errorf("go mod download %s: %v %s", moduleAtVersion, err, info.Error)
	}
	return ApplyCRDFile(ctx, c, filepath.Join(info.Dir, file))
}

// SandboxCRDs are the CustomResourceDefinitions of agent-sandbox, as its
// module ships them.
var SandboxCRDs = []string{
	"k8s/crds/agents.x-k8s.io_sandboxes.yaml",
	"k8s/crds/extensions.agents.x-k8s.io_sandboxtemplates.yaml",
	"k8s/crds/extensions.agents.x-k8s.io_sandboxwarmpools.yaml",
	"k8s/crds/extensions.agents.x-k8s.io_sandboxclaims.yaml",
}

// sandboxController names the agent-sandbox controller among the
// cluster's processes (pids/, logs/).
const sandboxController = "agent-sandbox-controller"

// StartSandboxController runs agent-sandbox's controller (the binary
// SandboxController built) on the node as the cluster's administrator,
// with its extensions (templates, warm pools, claims), until Down. It
// runs without its webhook: the objects are created at the version the
// CRDs store (v1beta1), so no conversion is asked of it.
func (c *Cluster) StartSandboxController(path string) error {
	err := c.spawnEnv(sandboxController, []string{"KUBECONFIG=" + c.Kubeconfig}, path,
		"--extensions", "--enable-webhook=false", "--leader-elect=false",
		"--metrics-bind-address=0", "--health-probe-bind-address=0")
	if err != nil {
		return err
	}
	// It is up once it has not died for a moment; what it does shows in
	// the objects it reconciles.
	time.Sleep(time.Second)
	if !c.alive(sandboxController) {
		return fmt.Errorf("%s exited\n%s", sandboxController, c.logTail(sandboxController))
	}
	return nil
}

// SandboxControllerLog is the end of the controller's log, for failures.
func (c *Cluster) SandboxControllerLog() string { return c.logTail(sandboxController) }
