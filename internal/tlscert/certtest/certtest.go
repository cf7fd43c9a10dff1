// Package certtest makes throwaway certificate authorities and server
// certificates for tests, and lays files out as Kubernetes lays out a
// Secret volume, so that rotating them can be tested the way cert-manager
// does it. Nothing it makes is meant to outlive a test.
package certtest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// CA is a certificate authority that issues server certificates.
type CA struct {
	Cert *x509.Certificate
	key  *ecdsa.PrivateKey
}

// NewCA makes a CA valid from an hour ago for a day.
func NewCA(t testing.TB) *CA {
	t.Helper()
	key := newKey(t)
	tmpl := &x509.Certificate{
		SerialNumber:          serial(t),
		Subject:               pkix.Name{CommonName: "boris test CA"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return &CA{Cert: cert, key: key}
}

// Pool is a pool holding only the CA, for a client's RootCAs.
func (ca *CA) Pool() *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(ca.Cert)
	return p
}

// PEM is the CA certificate in PEM.
func (ca *CA) PEM() []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca.Cert.Raw})
}

// Pair is a server certificate and its key, in PEM as tls.crt and tls.key
// of a kubernetes.io/tls Secret hold them.
type Pair struct {
	Leaf    *x509.Certificate
	CertPEM []byte
	KeyPEM  []byte
}

// Issue makes a server certificate for the hosts (IP addresses or DNS
// names), valid from an hour ago for a day, with the common name cn.
func (ca *CA) Issue(t testing.TB, cn string, hosts ...string) Pair {
	t.Helper()
	return ca.IssueUntil(t, cn, time.Now().Add(24*time.Hour), hosts...)
}

// IssueUntil is Issue with the end of the validity: a time past makes an
// expired certificate.
func (ca *CA) IssueUntil(t testing.TB, cn string, notAfter time.Time, hosts ...string) Pair {
	t.Helper()
	key := newKey(t)
	tmpl := &x509.Certificate{
		SerialNumber: serial(t),
		Subject:      pkix.Name{CommonName: cn},
		NotBefore:    notAfter.Add(-25 * time.Hour),
		NotAfter:     notAfter,
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.Cert, &key.PublicKey, ca.key)
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
	return Pair{
		Leaf:    leaf,
		CertPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		KeyPEM:  pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}),
	}
}

// Files are the tls.crt and tls.key of a kubernetes.io/tls Secret.
func (p Pair) Files() map[string][]byte {
	return map[string][]byte{"tls.crt": p.CertPEM, "tls.key": p.KeyPEM}
}

func newKey(t testing.TB) *ecdsa.PrivateKey {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return key
}

func serial(t testing.TB) *big.Int {
	t.Helper()
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// SecretDir is a directory laid out as the kubelet lays out a Secret
// volume: each version of the files in a hidden timestamped directory,
// "..data" a symlink to the current one, and each file a symlink through
// "..data". Update swaps "..data" with one rename, so a reader sees the
// old files or the new ones, never a mixture.
type SecretDir struct {
	Dir     string
	version int
	current string
}

// NewSecretDir lays the files out in dir, which must exist. Files and
// directories are world-readable, so a container user can read them
// through a bind mount.
func NewSecretDir(t testing.TB, dir string, files map[string][]byte) *SecretDir {
	t.Helper()
	s := &SecretDir{Dir: dir}
	s.Update(t, files)
	for name := range files {
		if err := os.Symlink(filepath.Join("..data", name), filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

// Path is the path of a file, as a pod sees it (through the symlinks).
func (s *SecretDir) Path(name string) string { return filepath.Join(s.Dir, name) }

// Update writes a new version of the files and swaps "..data" to it
// atomically, then removes the old version, as the kubelet does.
func (s *SecretDir) Update(t testing.TB, files map[string][]byte) {
	t.Helper()
	s.version++
	ts := fmt.Sprintf("..%s_%d", time.Now().UTC().Format("2006_01_02_15_04_05.000000000"), s.version)
	dir := filepath.Join(s.Dir, ts)
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil { // whatever the umask
		t.Fatal(err)
	}
	for name, data := range files {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tmp := filepath.Join(s.Dir, "..data_tmp")
	if err := os.Symlink(ts, tmp); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(s.Dir, "..data")); err != nil {
		t.Fatal(err)
	}
	if s.current != "" {
		if err := os.RemoveAll(filepath.Join(s.Dir, s.current)); err != nil {
			t.Fatal(err)
		}
	}
	s.current = ts
}
