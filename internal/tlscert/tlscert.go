// Package tlscert serves a TLS certificate and its key from two files and
// picks up new files without a restart.
//
// The files are watched the way Kubernetes updates a Secret volume (which
// cert-manager rotates): the paths are symlinks through a "..data" link
// that is swapped atomically to a new directory, so the paths never change
// but the files they resolve to do. A Reloader therefore stats the paths
// (following links) at most once a second, on a TLS handshake, and reads
// the pair again when either file's identity, size or modification time
// has changed. There is no watcher goroutine to stop: a server that stops
// handshaking stops checking.
package tlscert

import (
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Part names the file of a pair an Error is about.
type Part int

// The parts of a key pair.
const (
	Cert Part = iota + 1
	Key
)

// Error is a key pair that does not load, and the file at fault: Cert when
// the certificate file cannot be read or holds no certificate, Key for
// everything else (unreadable, not a private key, or not the key of the
// certificate).
type Error struct {
	Part Part
	Err  error
}

func (e *Error) Error() string { return e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// Load reads a PEM certificate (the leaf first, then any intermediates) and
// its PEM private key.
func Load(certFile, keyFile string) (*tls.Certificate, error) {
	certPEM, err := os.ReadFile(certFile)
	if err != nil {
		return nil, &Error{Cert, err}
	}
	// tls.X509KeyPair says little about which input is wrong; the
	// certificate is checked alone first so the error can name its file.
	var leaf *pem.Block
	for rest := certPEM; leaf == nil; {
		var b *pem.Block
		if b, rest = pem.Decode(rest); b == nil {
			break
		}
		if b.Type == "CERTIFICATE" {
			leaf = b
		}
	}
	if leaf == nil {
		return nil, &Error{Cert, fmt.Errorf("%s holds no PEM certificate (a block starting -----BEGIN CERTIFICATE-----)", certFile)}
	}
	if _, err := x509.ParseCertificate(leaf.Bytes); err != nil {
		return nil, &Error{Cert, fmt.Errorf("%s: %w", certFile, err)}
	}
	keyPEM, err := os.ReadFile(keyFile)
	if err != nil {
		return nil, &Error{Key, err}
	}
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, &Error{Key, fmt.Errorf("%s: %w", keyFile, err)}
	}
	if pair.Leaf == nil { // GODEBUG=x509keypairleaf=0
		if pair.Leaf, err = x509.ParseCertificate(pair.Certificate[0]); err != nil {
			return nil, &Error{Cert, fmt.Errorf("%s: %w", certFile, err)}
		}
	}
	return &pair, nil
}

// Fingerprint is the SHA-256 of a certificate's DER encoding, as
// upper-case hex bytes joined by colons: what
// `openssl x509 -noout -fingerprint -sha256 -in tls.crt` prints.
func Fingerprint(c *x509.Certificate) string {
	sum := sha256.Sum256(c.Raw)
	var b strings.Builder
	for i, x := range sum {
		if i > 0 {
			b.WriteByte(':')
		}
		fmt.Fprintf(&b, "%02X", x)
	}
	return b.String()
}

// checkEvery is how often, at most, a Reloader looks at its files.
const checkEvery = time.Second

// Reloader holds the current key pair of two files and reloads it when
// they change. Its GetCertificate goes in a tls.Config.
type Reloader struct {
	certFile, keyFile string
	logger            *slog.Logger
	every             time.Duration

	cur  atomic.Pointer[tls.Certificate]
	next atomic.Int64 // unix nanoseconds of the next check

	mu      sync.Mutex // one check at a time; guards the fields below
	seen    stamps     // the files as last loaded
	racy    bool       // seen was taken too soon after a write to trust
	lastErr string     // the last load error reported
}

// stamps identify the files last looked at: nil when a stat failed.
type stamps struct{ cert, key os.FileInfo }

func (a stamps) same(b stamps) bool { return sameFile(a.cert, b.cert) && sameFile(a.key, b.key) }

// recent reports whether a file was modified so shortly before now that
// another write within the file system's timestamp granularity (a clock
// tick, or seconds on some network file systems) could leave its stamp
// unchanged: a file rewritten in place with the same size. Such stamps are
// not trusted and the files are read again at the next check, as git
// treats "racily clean" index entries.
func (a stamps) recent(now time.Time) bool {
	for _, fi := range []os.FileInfo{a.cert, a.key} {
		if fi != nil && now.Sub(fi.ModTime()) < racyWindow {
			return true
		}
	}
	return false
}

// racyWindow is how recent a modification must be for its stamp not to
// be trusted.
const racyWindow = 2 * time.Second

func sameFile(a, b os.FileInfo) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return os.SameFile(a, b) && a.Size() == b.Size() && a.ModTime().Equal(b.ModTime())
}

// New loads the pair; it fails if the files do not load now.
func New(certFile, keyFile string, logger *slog.Logger) (*Reloader, error) {
	r := &Reloader{certFile: certFile, keyFile: keyFile, logger: logger, every: checkEvery}
	r.seen = r.stat()
	r.racy = r.seen.recent(time.Now())
	pair, err := Load(certFile, keyFile)
	if err != nil {
		return nil, err
	}
	r.cur.Store(pair)
	r.next.Store(time.Now().Add(r.every).UnixNano())
	return r, nil
}

// Certificate is the pair being served.
func (r *Reloader) Certificate() *tls.Certificate { return r.cur.Load() }

// GetCertificate serves the current pair, first reloading it if the files
// changed and a second has passed since the last look.
func (r *Reloader) GetCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	r.check(time.Now())
	return r.cur.Load(), nil
}

// Config is a server configuration serving the Reloader's pair, TLS 1.2 or
// later.
func (r *Reloader) Config() *tls.Config {
	return &tls.Config{MinVersion: tls.VersionTLS12, GetCertificate: r.GetCertificate}
}

// check reloads the pair if it is time to look and the files changed.
// Handshakes arriving while another one checks do not wait for it: they
// are served the current pair.
func (r *Reloader) check(now time.Time) {
	if now.UnixNano() < r.next.Load() || !r.mu.TryLock() {
		return
	}
	defer r.mu.Unlock()
	r.next.Store(now.Add(r.every).UnixNano())
	st := r.stat()
	if st.same(r.seen) && !r.racy {
		return
	}
	r.seen, r.racy = st, st.recent(now)
	old := r.cur.Load()
	pair, err := Load(r.certFile, r.keyFile)
	if err != nil {
		// Reported once per distinct problem, not at every check: a
		// rotation that completes changes the files again.
		if msg := err.Error(); msg != r.lastErr {
			r.lastErr = msg
			r.logger.Warn("the TLS certificate files changed but do not load as a key pair; still serving the previous certificate",
				"error", msg, "tls_cert", r.certFile, "tls_key", r.keyFile, "tls_fingerprint", Fingerprint(old.Leaf))
		}
		return
	}
	r.lastErr = ""
	if Fingerprint(pair.Leaf) == Fingerprint(old.Leaf) {
		return // the same certificate written again
	}
	r.cur.Store(pair)
	r.logger.Info("TLS certificate reloaded", "tls_cert", r.certFile,
		"tls_fingerprint", Fingerprint(pair.Leaf), "tls_not_after", pair.Leaf.NotAfter.UTC().Format(time.RFC3339),
		"previous_fingerprint", Fingerprint(old.Leaf))
	if now.After(pair.Leaf.NotAfter) {
		r.logger.Warn("the new TLS certificate has expired", "tls_not_after", pair.Leaf.NotAfter.UTC().Format(time.RFC3339))
	}
}

func (r *Reloader) stat() stamps {
	var st stamps
	if fi, err := os.Stat(r.certFile); err == nil {
		st.cert = fi
	}
	if fi, err := os.Stat(r.keyFile); err == nil {
		st.key = fi
	}
	return st
}
