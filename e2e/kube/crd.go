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
