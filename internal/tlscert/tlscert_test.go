package tlscert

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/boris-mcp/boris/internal/tlscert/certtest"
)

func write(t *testing.T, path string, data []byte) string {
	t.Helper()
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestLoad(t *testing.T) {
	ca := certtest.NewCA(t)
	a, b := ca.Issue(t, "a", "127.0.0.1"), ca.Issue(t, "b", "localhost")
	dir := t.TempDir()
	cert := write(t, filepath.Join(dir, "tls.crt"), a.CertPEM)
	key := write(t, filepath.Join(dir, "tls.key"), a.KeyPEM)
	otherKey := write(t, filepath.Join(dir, "other.key"), b.KeyPEM)
	combined := write(t, filepath.Join(dir, "combined.pem"), append(append([]byte{}, a.KeyPEM...), a.CertPEM...))
	garbled := write(t, filepath.Join(dir, "garbled.crt"), []byte("-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n"))
	missing := filepath.Join(dir, "missing")

	pair, err := Load(cert, key)
	if err != nil {
		t.Fatal(err)
	}
	if pair.Leaf == nil || !bytes.Equal(pair.Leaf.Raw, a.Leaf.Raw) {
		t.Fatalf("loaded leaf %v, want the certificate of the file", pair.Leaf)
	}
	// One file holding the key and the certificate serves as both.
	if _, err := Load(combined, combined); err != nil {
		t.Fatalf("combined PEM: %v", err)
	}
	for _, tt := range []struct {
		name      string
		cert, key string
		part      Part
		want      string
	}{
		{"missing certificate", missing, key, Cert, "no such file"},
		{"key as certificate", key, key, Cert, "holds no PEM certificate"},
		{"garbled certificate", garbled, key, Cert, garbled},
		{"missing key", cert, missing, Key, "no such file"},
		{"certificate as key", cert, cert, Key, cert},
		{"another certificate's key", cert, otherKey, Key, "private key does not match public key"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Load(tt.cert, tt.key)
			var le *Error
			if !errors.As(err, &le) || le.Part != tt.part || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v (part %v), want part %v mentioning %q", err, le, tt.part, tt.want)
			}
		})
	}
}

// The fingerprint is the SHA-256 of the DER, formatted as openssl prints
// it, so an operator can compare it with `openssl x509 -fingerprint`.
func TestFingerprint(t *testing.T) {
	p := certtest.NewCA(t).Issue(t, "x", "localhost")
	got := Fingerprint(p.Leaf)
	sum := sha256.Sum256(p.Leaf.Raw)
	if want := strings.ToUpper(hex.EncodeToString(sum[:])); strings.ReplaceAll(got, ":", "") != want {
		t.Fatalf("fingerprint %s, want the bytes %s", got, want)
	}
	if !regexp.MustCompile(`^([0-9A-F]{2}:){31}[0-9A-F]{2}$`).MatchString(got) {
		t.Fatalf("fingerprint %q is not 32 colon-separated upper-case hex bytes", got)
	}
	openssl, err := exec.LookPath("openssl")
	if err != nil {
		t.Log("no openssl to compare with")
		return
	}
	f := write(t, filepath.Join(t.TempDir(), "c.pem"), p.CertPEM)
	out, err := exec.Command(openssl, "x509", "-noout", "-fingerprint", "-sha256", "-in", f).Output()
	if err != nil {
		t.Fatal(err)
	}
	if _, fp, _ := strings.Cut(strings.TrimSpace(string(out)), "="); fp != got {
		t.Fatalf("openssl says %s, boris %s", fp, got)
	}
}

// logBuf is a concurrency-safe log sink.
type logBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuf) Write(p []byte) (int, error) { l.mu.Lock(); defer l.mu.Unlock(); return l.b.Write(p) }
func (l *logBuf) String() string              { l.mu.Lock(); defer l.mu.Unlock(); return l.b.String() }

// newReloader serves the Secret directory's pair, checking on every
// handshake.
func newReloader(t *testing.T, s *certtest.SecretDir) (*Reloader, *logBuf) {
	t.Helper()
	logs := &logBuf{}
	r, err := New(s.Path("tls.crt"), s.Path("tls.key"), slog.New(slog.NewTextHandler(logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	r.every = 0
	r.next.Store(0)
	return r, logs
}

func served(t *testing.T, r *Reloader) string {
	t.Helper()
	c, err := r.GetCertificate(nil)
	if err != nil || c == nil {
		t.Fatalf("GetCertificate: %v %v", c, err)
	}
	return Fingerprint(c.Leaf)
}

// A Secret volume's atomic ..data swap is picked up; a pair that does not
// load (a certificate with another one's key) keeps the previous one
// served and is reported once; the next good pair is served.
func TestReloadSecretRotation(t *testing.T) {
	ca := certtest.NewCA(t)
	first, second, third := ca.Issue(t, "first", "localhost"), ca.Issue(t, "second", "localhost"), ca.Issue(t, "third", "localhost")
	s := certtest.NewSecretDir(t, t.TempDir(), first.Files())
	r, logs := newReloader(t, s)
	if got := served(t, r); got != Fingerprint(first.Leaf) {
		t.Fatalf("serving %s, want the first certificate", got)
	}
	if cfg := r.Config(); cfg.MinVersion < 0x0303 || cfg.GetCertificate == nil {
		t.Fatalf("config %+v: want TLS 1.2 at least and the reloader's certificate", cfg)
	}
	served(t, r) // unchanged files: nothing logged
	if logs.String() != "" {
		t.Fatalf("logged without a change:\n%s", logs)
	}

	s.Update(t, second.Files())
	if got := served(t, r); got != Fingerprint(second.Leaf) {
		t.Fatalf("after rotation serving %s, want the second certificate %s", got, Fingerprint(second.Leaf))
	}
	if !strings.Contains(logs.String(), `level=INFO msg="TLS certificate reloaded"`) ||
		!strings.Contains(logs.String(), "tls_fingerprint="+Fingerprint(second.Leaf)) {
		t.Fatalf("no info line with the new fingerprint:\n%s", logs)
	}

	s.Update(t, map[string][]byte{"tls.crt": third.CertPEM, "tls.key": second.KeyPEM})
	for range 3 {
		if got := served(t, r); got != Fingerprint(second.Leaf) {
			t.Fatalf("a mismatched pair replaced the served certificate: %s", got)
		}
	}
	if n := strings.Count(logs.String(), "level=WARN"); n != 1 || !strings.Contains(logs.String(), "still serving the previous certificate") {
		t.Fatalf("%d warnings for one bad pair:\n%s", n, logs)
	}

	s.Update(t, third.Files())
	if got := served(t, r); got != Fingerprint(third.Leaf) {
		t.Fatalf("after a good pair serving %s, want the third certificate", got)
	}
}

// Files rewritten in place, the certificate first and half-written: the
// old pair is served until both are complete.
func TestReloadHalfWritten(t *testing.T) {
	ca := certtest.NewCA(t)
	first, second := ca.Issue(t, "first", "localhost"), ca.Issue(t, "second", "localhost")
	dir := t.TempDir()
	cert := write(t, filepath.Join(dir, "tls.crt"), first.CertPEM)
	key := write(t, filepath.Join(dir, "tls.key"), first.KeyPEM)
	logs := &logBuf{}
	r, err := New(cert, key, slog.New(slog.NewTextHandler(logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	r.every = 0
	r.next.Store(0)
	write(t, cert, second.CertPEM[:len(second.CertPEM)/2])
	if got := served(t, r); got != Fingerprint(first.Leaf) {
		t.Fatalf("serving %s from a half-written certificate", got)
	}
	write(t, cert, second.CertPEM) // the new certificate, the old key
	if got := served(t, r); got != Fingerprint(first.Leaf) {
		t.Fatalf("serving %s with the old key", got)
	}
	write(t, key, second.KeyPEM)
	if got := served(t, r); got != Fingerprint(second.Leaf) {
		t.Fatalf("serving %s once both files are written, want the second certificate", got)
	}
	if n := strings.Count(logs.String(), "level=WARN"); n != 2 {
		t.Fatalf("%d warnings, want one for each broken state:\n%s", n, logs)
	}
}

// Handshakes look at the files at most once per interval.
func TestReloadChecksAtMostOncePerInterval(t *testing.T) {
	ca := certtest.NewCA(t)
	first, second := ca.Issue(t, "first", "localhost"), ca.Issue(t, "second", "localhost")
	s := certtest.NewSecretDir(t, t.TempDir(), first.Files())
	r, _ := newReloader(t, s)
	r.every = time.Hour
	now := time.Now()
	r.check(now) // looks, and sets the next look an hour on
	s.Update(t, second.Files())
	r.check(now.Add(time.Minute))
	if got := Fingerprint(r.Certificate().Leaf); got != Fingerprint(first.Leaf) {
		t.Fatal("the files were looked at again within the interval")
	}
	r.check(now.Add(time.Hour + time.Second))
	if got := Fingerprint(r.Certificate().Leaf); got != Fingerprint(second.Leaf) {
		t.Fatal("the rotation was not picked up after the interval")
	}
}

// Concurrent handshakes during rotations always get a whole pair (run
// with -race).
func TestReloadConcurrent(t *testing.T) {
	ca := certtest.NewCA(t)
	pairs := []certtest.Pair{ca.Issue(t, "a", "localhost"), ca.Issue(t, "b", "localhost")}
	s := certtest.NewSecretDir(t, t.TempDir(), pairs[0].Files())
	r, _ := newReloader(t, s)
	want := map[string]bool{Fingerprint(pairs[0].Leaf): true, Fingerprint(pairs[1].Leaf): true}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	errs := make(chan string, 8)
	for range 8 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				c, _ := r.GetCertificate(nil)
				if fp := Fingerprint(c.Leaf); !want[fp] {
					errs <- fp
					return
				}
			}
		})
	}
	for i := range 50 {
		s.Update(t, pairs[i%2].Files())
	}
	close(stop)
	wg.Wait()
	close(errs)
	for fp := range errs {
		t.Fatalf("served an unknown certificate %s", fp)
	}
}

// A pair rewritten in place with files of the same size within one tick of
// the file system's clock leaves every stamp as it was (forced here with
// Chtimes); the stamps of files written so recently are not trusted, so
// the new pair is still read.
func TestReloadSameStampRewrite(t *testing.T) {
	ca := certtest.NewCA(t)
	first, second := ca.Issue(t, "first", "localhost"), ca.Issue(t, "second", "localhost")
	// Text outside PEM blocks is ignored: both versions of each file are
	// padded to one size.
	pad := func(a, b []byte) ([]byte, []byte) {
		a, b = append([]byte{}, a...), append([]byte{}, b...)
		for len(a) < len(b) {
			a = append(a, '\n')
		}
		for len(b) < len(a) {
			b = append(b, '\n')
		}
		return a, b
	}
	cert1, cert2 := pad(first.CertPEM, second.CertPEM)
	key1, key2 := pad(first.KeyPEM, second.KeyPEM)
	dir := t.TempDir()
	cert := write(t, filepath.Join(dir, "tls.crt"), cert1)
	key := write(t, filepath.Join(dir, "tls.key"), key1)
	r, err := New(cert, key, slog.New(slog.NewTextHandler(&logBuf{}, nil)))
	if err != nil {
		t.Fatal(err)
	}
	r.every = 0
	r.next.Store(0)
	if got := served(t, r); got != Fingerprint(first.Leaf) {
		t.Fatal("not serving the first certificate")
	}
	for path, data := range map[string][]byte{cert: cert2, key: key2} {
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		write(t, path, data)
		if err := os.Chtimes(path, fi.ModTime(), fi.ModTime()); err != nil {
			t.Fatal(err)
		}
	}
	if got := served(t, r); got != Fingerprint(second.Leaf) {
		t.Fatalf("a same-stamp rewrite was missed: serving %s, want the second certificate", got)
	}
}
