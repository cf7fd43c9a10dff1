package e2e

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// testCA issues the certificates of the TLS tests; nothing is committed,
// every key is made by the test.
type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
}

func newTestCA(t *testing.T) *testCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "boris e2e CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageCertSign, BasicConstraintsValid: true, IsCA: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return &testCA{cert, key}
}

func (ca *testCA) pool() *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(ca.cert)
	return p
}

// issue makes a server certificate for the DNS name and returns it with
// the files of a kubernetes.io/tls Secret (tls.crt, tls.key).
func (ca *testCA) issue(t *testing.T, serial int64, dnsName string) (*x509.Certificate, map[string][]byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: dnsName}, DNSNames: []string{dnsName},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return leaf, map[string][]byte{
		"tls.crt": pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		"tls.key": pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}),
	}
}

// fingerprint is boris's tls_fingerprint: SHA-256 of the DER, upper-case
// hex bytes joined by colons.
func fingerprint(c *x509.Certificate) string {
	sum := sha256.Sum256(c.Raw)
	parts := make([]string, len(sum))
	for i, b := range sum {
		parts[i] = fmt.Sprintf("%02X", b)
	}
	return strings.Join(parts, ":")
}

// secretVolume is a host directory laid out as the kubelet lays out a
// Secret volume: the files of each version in a hidden timestamped
// directory, ..data a symlink to the current one, each file a symlink
// through ..data (relative links, so they resolve inside a container too).
type secretVolume struct {
	dir, current string
	version      int
}

func newSecretVolume(t *testing.T, files map[string][]byte) *secretVolume {
	t.Helper()
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o755); err != nil { // the container's user reads it
		t.Fatal(err)
	}
	v := &secretVolume{dir: dir}
	v.update(t, files)
	for name := range files {
		if err := os.Symlink(filepath.Join("..data", name), filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	return v
}

// update writes a new version and swaps ..data to it with one rename, then
// removes the old version: what the kubelet does when the Secret changes.
func (v *secretVolume) update(t *testing.T, files map[string][]byte) {
	t.Helper()
	v.version++
	ts := fmt.Sprintf("..%s.%d", time.Now().UTC().Format("2006_01_02_15_04_05"), v.version)
	if err := os.Mkdir(filepath.Join(v.dir, ts), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, data := range files {
		p := filepath.Join(v.dir, ts, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(filepath.Join(v.dir, ts), 0o755); err != nil {
		t.Fatal(err)
	}
	tmp := filepath.Join(v.dir, "..data_tmp")
	if err := os.Symlink(ts, tmp); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(v.dir, "..data")); err != nil {
		t.Fatal(err)
	}
	if v.current != "" {
		if err := os.RemoveAll(filepath.Join(v.dir, v.current)); err != nil {
			t.Fatal(err)
		}
	}
	v.current = ts
}

// TestTLSFromMountedSecret: boris:latest with BORIS_TLS_CERT/BORIS_TLS_KEY
// pointing into a read-only mount laid out as a Kubernetes Secret volume
// serves HTTPS. The go-sdk client trusting the test CA calls tools; the
// start-up log has the https URL and the fingerprint; the image's
// HEALTHCHECK (boris --healthcheck, over HTTPS) passes; plain HTTP to the
// port gets 400. Rotating the Secret (a ..data swap, as the kubelet does
// when cert-manager renews) is served on new connections while the
// container keeps running, never restarted, and the open session goes on.
func TestTLSFromMountedSecret(t *testing.T) {
	requireImages(t)
	t.Parallel()
	ca := newTestCA(t)
	first, firstFiles := ca.issue(t, 2, "boris.test")
	second, secondFiles := ca.issue(t, 3, "boris.test")
	vol := newSecretVolume(t, firstFiles)
	// The client dials the published port on whatever host testcontainers
	// picks; it verifies the name the certificate holds.
	clientTLS := &tls.Config{RootCAs: ca.pool(), ServerName: "boris.test"}
	srv := startBoris(t, spec{
		image: imageLatest,
		env: map[string]string{
			"BORIS_TOKEN":    "e2e-tls-token",
			"BORIS_TLS_CERT": "/etc/boris/tls/tls.crt",
			"BORIS_TLS_KEY":  "/etc/boris/tls/tls.key",
		},
		mounts:         map[string]string{vol.dir: "/etc/boris/tls"},
		tls:            clientTLS,
		healthInterval: time.Second,
	})
	if !strings.HasPrefix(srv.url, "https://") {
		t.Fatalf("reached at %s, want https", srv.url)
	}
	log := srv.logs(t)
	for _, want := range []string{"url=https://127.0.0.1:8080/mcp", "tls_fingerprint=" + fingerprint(first), "tls_names=boris.test"} {
		if !strings.Contains(log, want) {
			t.Fatalf("the start-up log lacks %s:\n%s", want, log)
		}
	}
	cs := srv.connect(t)
	if got := bash(t, cs, "echo over-tls > /tmp/mark; cat /tmp/mark"); !strings.Contains(got, "over-tls") {
		t.Fatalf("bash over HTTPS: %q", got)
	}
	srv.waitHealthy(t, 30*time.Second)

	hostPort := strings.TrimPrefix(srv.url, "https://")
	resp, err := (&http.Client{Timeout: 5 * time.Second}).Get("http://" + hostPort + "/health")
	if err != nil {
		t.Fatalf("plain HTTP: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), "HTTP request to an HTTPS server") {
		t.Fatalf("plain HTTP to the TLS port: %s %q", resp.Status, body)
	}

	started := srv.inspect(t).State.StartedAt
	vol.update(t, secondFiles)
	served := func() string {
		conn, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", hostPort, clientTLS)
		if err != nil {
			t.Fatalf("TLS handshake: %v", err)
		}
		defer conn.Close()
		return fingerprint(conn.ConnectionState().PeerCertificates[0])
	}
	want := fingerprint(second)
	got := ""
	for deadline := time.Now().Add(15 * time.Second); got != want && time.Now().Before(deadline); {
		time.Sleep(200 * time.Millisecond)
		got = served()
	}
	if got != want {
		t.Fatalf("after the Secret rotated still serving %s, want %s", got, want)
	}
	// The new certificate is served the moment it is stored; the log line
	// follows it, and the engine's log reaches us a little later.
	reloaded := func(log string) bool {
		return strings.Contains(log, `msg="TLS certificate reloaded"`) && strings.Contains(log, "tls_fingerprint="+want)
	}
	log = srv.logs(t)
	for deadline := time.Now().Add(10 * time.Second); !reloaded(log) && time.Now().Before(deadline); log = srv.logs(t) {
		time.Sleep(200 * time.Millisecond)
	}
	if !reloaded(log) {
		t.Fatalf("the reload is not logged with the new fingerprint:\n%s", log)
	}
	fresh := srv.connect(t)
	bash(t, fresh, "true")
	if got := bash(t, cs, "cat /tmp/mark"); !strings.Contains(got, "over-tls") {
		t.Fatalf("the session opened before the rotation: %q", got)
	}
	info := srv.inspect(t)
	if !info.State.Running || info.State.StartedAt != started || info.RestartCount != 0 {
		t.Fatalf("the container restarted: running %v, started %s (was %s), restarts %d", info.State.Running, info.State.StartedAt, started, info.RestartCount)
	}
}
