package e2e

import (
	"strings"
	"testing"
)

// TestHelmCheckpoints: the checkpoint store is an emptyDir of its own,
// mounted where BORIS_CHECKPOINT_DIR points, outside the workspace and
// /tmp (so --sandbox on can deny it to commands), bounded below the
// volume's size; checkpoints.enabled=false turns them off.
func TestHelmCheckpoints(t *testing.T) {
	r := helmTemplate(t)
	pod := r.deployments[0].Spec.Template.Spec
	c := pod.Containers[0]
	dir := env(t, c, "BORIS_CHECKPOINT_DIR").Value
	if m := mount(t, c, "checkpoints"); m.MountPath != dir || m.ReadOnly {
		t.Fatalf("checkpoints mounted at %s (read-only %v), BORIS_CHECKPOINT_DIR=%s", m.MountPath, m.ReadOnly, dir)
	}
	ws := env(t, c, "BORIS_WORKDIR").Value
	for _, other := range []string{ws, "/tmp"} {
		if dir == other || strings.HasPrefix(dir, other+"/") || strings.HasPrefix(other, dir+"/") {
			t.Fatalf("the checkpoint directory %s overlaps %s", dir, other)
		}
	}
	v := volume(t, pod, "checkpoints")
	if v.EmptyDir == nil || v.EmptyDir.SizeLimit == nil || v.EmptyDir.SizeLimit.String() != "2Gi" {
		t.Fatalf("checkpoints volume %+v, want an emptyDir of 2Gi", v.VolumeSource)
	}
	if e := env(t, c, "BORIS_CHECKPOINT_MAX_BYTES"); e.Value != "1GB" {
		t.Fatalf("BORIS_CHECKPOINT_MAX_BYTES=%q", e.Value)
	}
	off := helmTemplateSet(t, nil, []string{"checkpoints.enabled=false"}).deployments[0].Spec.Template.Spec
	if e := env(t, off.Containers[0], "BORIS_CHECKPOINTS"); e.Value != "off" {
		t.Fatalf("disabled: BORIS_CHECKPOINTS=%q", e.Value)
	}
	for _, v := range off.Volumes {
		if v.Name == "checkpoints" {
			t.Fatal("disabled: the checkpoints volume is still there")
		}
	}
}
