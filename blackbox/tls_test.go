package blackbox

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/boris-mcp/boris/internal/app"
	"github.com/boris-mcp/boris/internal/tlscert"
	"github.com/boris-mcp/boris/internal/tlscert/certtest"
)

// trusting is an HTTP transport that trusts only the pool's CAs.
func trusting(pool *x509.CertPool) *http.Transport {
	return &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, ForceAttemptHTTP2: true}
}

// writePair writes a pair as tls.crt and tls.key in a fresh directory.
func writePair(t *testing.T, p certtest.Pair) (cert, key string) {
	t.Helper()
	dir := t.TempDir()
	cert, key = filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	if err := os.WriteFile(cert, p.CertPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(key, p.KeyPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	return cert, key
}

// servedFingerprint is the fingerprint of the certificate a TLS handshake
// with addr (host:port) is served, verified against the pool.
func servedFingerprint(t *testing.T, addr string, pool *x509.CertPool) string {
	t.Helper()
	conn, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", addr, &tls.Config{RootCAs: pool, ServerName: "127.0.0.1"})
	if err != nil {
		t.Fatalf("TLS handshake with %s: %v", addr, err)
	}
	defer conn.Close()
	return tlscert.Fingerprint(conn.ConnectionState().PeerCertificates[0])
}

func hostPort(url string) string { return url[strings.Index(url, "://")+3:] }

// TestTLSServesMCP: with --tls-cert/--tls-key boris serves HTTPS on its
// port; the start-up log gives the https URL and the certificate's
// fingerprint; the go-sdk client trusting the test CA calls tools over it
// (HTTP/2); a client that does not trust the CA, or offers only TLS 1.1,
// is refused; /health and the container health probe work over HTTPS.
func TestTLSServesMCP(t *testing.T) {
	ca := certtest.NewCA(t)
	pair := ca.Issue(t, "boris", "127.0.0.1", "localhost")
	cert, key := writePair(t, pair)
	p := startInProcess(t, "--tls-cert="+cert, "--tls-key="+key, "--token=tls-token")
	port := portOf(p.url)
	if p.url != "https://127.0.0.1:"+port {
		t.Fatalf("server URL %q, want https", p.url)
	}
	fp := tlscert.Fingerprint(pair.Leaf)
	for _, want := range []string{"url=https://127.0.0.1:" + port + "/mcp", "tls_fingerprint=" + fp,
		"tls_not_after=" + pair.Leaf.NotAfter.UTC().Format(time.RFC3339), "tls_names=localhost,127.0.0.1"} {
		if !strings.Contains(p.logs.String(), want) {
			t.Fatalf("the listening line lacks %s:\n%s", want, p.logs)
		}
	}

	cs := connectClient(t, p.url, "tls-token", trusting(ca.Pool()), defaultClient, nil)
	if got := mustOK(t, cs, "bash", map[string]any{"command": "echo over-tls"}); !strings.Contains(got, "over-tls") {
		t.Fatalf("bash over HTTPS: %q", got)
	}
	handshake := connectClient(t, p.url, "tls-token", trusting(ca.Pool()), handshakeEra, nil)
	mustOK(t, handshake, "view", map[string]any{"path": "."})

	resp, err := (&http.Client{Transport: trusting(ca.Pool())}).Get(p.url + "/health")
	if err != nil {
		t.Fatal(err)
	}
	var health map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&health)
	resp.Body.Close()
	if resp.StatusCode != 200 || health["status"] != "ok" || resp.ProtoMajor != 2 {
		t.Fatalf("/health over HTTPS: %s %s %v", resp.Proto, resp.Status, health)
	}

	// A client that does not trust the CA fails the handshake; boris logs
	// that at debug, not as a warning.
	if _, err := http.Get(p.url + "/health"); err == nil || !errors.As(err, new(x509.UnknownAuthorityError)) {
		t.Fatalf("a client without the CA: %v, want an unknown-authority error", err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(p.logs.String(), "level=DEBUG msg=\"http: TLS handshake error") && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if !strings.Contains(p.logs.String(), "level=DEBUG msg=\"http: TLS handshake error") || strings.Contains(p.logs.String(), "level=WARN msg=\"http: TLS handshake error") {
		t.Fatalf("the refused handshake is not logged at debug:\n%s", p.logs)
	}

	for _, v := range []struct {
		max uint16
		ok  bool
	}{{tls.VersionTLS11, false}, {tls.VersionTLS12, true}, {tls.VersionTLS13, true}} {
		conn, err := tls.Dial("tcp", hostPort(p.url), &tls.Config{RootCAs: ca.Pool(), MinVersion: tls.VersionTLS10, MaxVersion: v.max})
		if err == nil {
			conn.Close()
		}
		if (err == nil) != v.ok {
			t.Errorf("a client up to %s: handshake error %v, want success %v", tls.VersionName(v.max), err, v.ok)
		}
	}

	// The container health probe: HTTPS when TLS is configured (the key
	// file is not needed for it); plain HTTP to this port is unhealthy.
	if err := app.Run(context.Background(), []string{"--healthcheck", "--port=" + port, "--tls-cert=" + cert, "--tls-key=" + key}, func(string) string { return "" }, nil, io.Discard, io.Discard); err != nil {
		t.Fatalf("healthcheck over HTTPS: %v", err)
	}
	env := map[string]string{"BORIS_TLS_CERT": cert, "BORIS_TLS_KEY": key}
	if err := app.Run(context.Background(), []string{"--healthcheck", "--port=" + port}, func(k string) string { return env[k] }, nil, io.Discard, io.Discard); err != nil {
		t.Fatalf("healthcheck with the TLS files from the environment: %v", err)
	}
	if err := app.Run(context.Background(), []string{"--healthcheck", "--port=" + port}, func(string) string { return "" }, nil, io.Discard, io.Discard); err == nil || !strings.Contains(err.Error(), "400") {
		t.Fatalf("a plain HTTP probe of the HTTPS port: %v, want unhealthy (400)", err)
	}
}

// TestTLSPlainHTTPRefused: plain HTTP to the TLS port gets net/http's 400
// "Client sent an HTTP request to an HTTPS server"; the go-sdk client
// pointed at http:// fails to connect with an error, not a hang; the
// server keeps serving HTTPS.
func TestTLSPlainHTTPRefused(t *testing.T) {
	ca := certtest.NewCA(t)
	cert, key := writePair(t, ca.Issue(t, "boris", "127.0.0.1"))
	p := startInProcess(t, "--tls-cert="+cert, "--tls-key="+key)
	plain := "http://" + hostPort(p.url)

	resp, err := (&http.Client{Timeout: 5 * time.Second}).Get(plain + "/health")
	if err != nil {
		t.Fatalf("plain GET: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), "Client sent an HTTP request to an HTTPS server") {
		t.Fatalf("plain HTTP to the TLS port: %s %q", resp.Status, body)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err = mcp.NewClient(&mcp.Implementation{Name: "boris-test", Version: "1"}, nil).
		Connect(ctx, &mcp.StreamableClientTransport{Endpoint: plain + "/mcp"}, nil)
	if err == nil || ctx.Err() != nil {
		t.Fatalf("go-sdk client over plain HTTP: err %v (context %v), want a prompt connect error", err, ctx.Err())
	}

	cs := connectClient(t, p.url, "", trusting(ca.Pool()), defaultClient, nil)
	mustOK(t, cs, "bash", map[string]any{"command": "true"})
}

// TestTLSRotation: the files as a Kubernetes Secret volume presents them
// (symlinks through ..data); cert-manager's rotation — an atomic swap of
// ..data — is served on new handshakes without a restart, and logged with
// the new fingerprint; a session opened before goes on working. A pair that
// does not load (a certificate with the wrong key) keeps the previous one
// served, with a warning.
func TestTLSRotation(t *testing.T) {
	ca := certtest.NewCA(t)
	first, second, third := ca.Issue(t, "first", "127.0.0.1"), ca.Issue(t, "second", "127.0.0.1"), ca.Issue(t, "third", "127.0.0.1")
	secret := certtest.NewSecretDir(t, t.TempDir(), first.Files())
	p := startInProcess(t, "--tls-cert="+secret.Path("tls.crt"), "--tls-key="+secret.Path("tls.key"))
	addr := hostPort(p.url)
	if got := servedFingerprint(t, addr, ca.Pool()); got != tlscert.Fingerprint(first.Leaf) {
		t.Fatalf("serving %s, want the first certificate", got)
	}
	before := connectClient(t, p.url, "", trusting(ca.Pool()), defaultClient, nil)
	mustOK(t, before, "bash", map[string]any{"command": "echo one > f"})

	secret.Update(t, second.Files())
	want := tlscert.Fingerprint(second.Leaf)
	deadline := time.Now().Add(10 * time.Second)
	got := ""
	for got != want && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
		got = servedFingerprint(t, addr, ca.Pool())
	}
	if got != want {
		t.Fatalf("after rotation still serving %s, want %s", got, want)
	}
	// The certificate is served a moment before its reload is logged.
	logged := func() bool {
		l := p.logs.String()
		return strings.Contains(l, `msg="TLS certificate reloaded"`) && strings.Contains(l, "tls_fingerprint="+want)
	}
	for !logged() && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if !logged() {
		t.Fatalf("the reload is not logged with the new fingerprint:\n%s", p.logs)
	}
	after := connectClient(t, p.url, "", trusting(ca.Pool()), defaultClient, nil)
	mustOK(t, after, "bash", map[string]any{"command": "true"})
	if got := mustOK(t, before, "bash", map[string]any{"command": "cat f"}); !strings.Contains(got, "one") {
		t.Fatalf("the session opened before the rotation: %q", got)
	}

	secret.Update(t, map[string][]byte{"tls.crt": third.CertPEM, "tls.key": second.KeyPEM})
	deadline = time.Now().Add(10 * time.Second)
	for !strings.Contains(p.logs.String(), "still serving the previous certificate") && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
		if got := servedFingerprint(t, addr, ca.Pool()); got != want {
			t.Fatalf("a mismatched pair replaced the certificate: serving %s", got)
		}
	}
	if !strings.Contains(p.logs.String(), `level=WARN msg="the TLS certificate files changed but do not load`) {
		t.Fatalf("no warning for a pair that does not load:\n%s", p.logs)
	}
	if got := servedFingerprint(t, addr, ca.Pool()); got != want {
		t.Fatalf("after a bad rotation serving %s, want still %s", got, want)
	}
}

// TestPlainHTTPTokenWarning: a token sent over plain HTTP beyond loopback
// crosses the network readable; boris says so at start-up, and only then.
func TestPlainHTTPTokenWarning(t *testing.T) {
	ca := certtest.NewCA(t)
	cert, key := writePair(t, ca.Issue(t, "boris", "127.0.0.1"))
	const warning = "the bearer token crosses the network in clear text"
	for _, c := range []struct {
		name string
		args []string
		warn bool
	}{
		{"every interface, token", []string{"--host=0.0.0.0", "--token=t"}, true},
		{"every interface, generated token", []string{"--host=0.0.0.0"}, true},
		{"every interface, token, TLS", []string{"--host=0.0.0.0", "--token=t", "--tls-cert=" + cert, "--tls-key=" + key}, false},
		{"loopback, token", []string{"--token=t"}, false},
		{"every interface, no auth", []string{"--host=0.0.0.0", "--no-auth"}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := startInProcess(t, c.args...)
			logs := p.logs.String()
			warned := strings.Contains(logs, "level=WARN msg=\"plain HTTP beyond loopback: "+warning) &&
				strings.Contains(logs, "--tls-cert/--tls-key, or put a TLS-terminating proxy in front")
			if warned != c.warn {
				t.Fatalf("warned %v, want %v:\n%s", warned, c.warn, logs)
			}
		})
	}
}

// TestTLSKeyDeniedToTheAgent: what the README and the Helm chart rely on.
// --deny-dir on the Secret's directory keeps the key from the file tools,
// and with --sandbox on from commands too, before and after a rotation
// (the new version is a directory created after start-up beneath the
// denied one), while boris itself goes on reading it.
func TestTLSKeyDeniedToTheAgent(t *testing.T) {
	l := newSBLayout(t)
	tlsDir := filepath.Join(l.root, "tls")
	if err := os.Mkdir(tlsDir, 0o755); err != nil {
		t.Fatal(err)
	}
	ca := certtest.NewCA(t)
	first, second := ca.Issue(t, "first", "127.0.0.1"), ca.Issue(t, "second", "127.0.0.1")
	secret := certtest.NewSecretDir(t, tlsDir, first.Files())
	cmd := exec.Command(binPath, "--port=0", "--workdir="+l.ws, "--sandbox=on", "--deny-dir="+tlsDir,
		"--tls-cert="+secret.Path("tls.crt"), "--tls-key="+secret.Path("tls.key"))
	cmd.Env = append(os.Environ(), "TMPDIR="+l.tmp)
	url, logs := serveBinary(t, cmd)
	cs := connectClient(t, url, "", trusting(ca.Pool()), defaultClient, nil)

	denied := func(when string) {
		t.Helper()
		mustErr(t, cs, "view", map[string]any{"path": secret.Path("tls.key")}, "ACCESS_DENIED")
		if code, out := bashExit(t, cs, "cat "+secret.Path("tls.key")); code == 0 || strings.Contains(out, "PRIVATE KEY") || !strings.Contains(out, "Permission denied") {
			t.Fatalf("%s: a command read the key: %q", when, out)
		}
	}
	denied("at start-up")
	secret.Update(t, second.Files())
	want := tlscert.Fingerprint(second.Leaf)
	deadline := time.Now().Add(10 * time.Second)
	for servedFingerprint(t, hostPort(url), ca.Pool()) != want {
		if time.Now().After(deadline) {
			t.Fatalf("the rotation was not served:\n%s", logs)
		}
		time.Sleep(100 * time.Millisecond)
	}
	denied("after the rotation")
}

// TestTLSHTTP2CancelAndShutdown: over TLS clients speak HTTP/2, where a
// client giving up on a call resets its stream rather than closing the
// connection. The command of a cancelled call still ends, and shutdown
// with a call in flight and a background task still ends every process
// within the budget.
func TestTLSHTTP2CancelAndShutdown(t *testing.T) {
	ca := certtest.NewCA(t)
	cert, key := writePair(t, ca.Issue(t, "boris", "127.0.0.1"))
	p := startInProcess(t, "--tls-cert="+cert, "--tls-key="+key)
	rt := trusting(ca.Pool())
	cs := connectClient(t, p.url, "", rt, handshakeEra, nil)

	resp, err := (&http.Client{Transport: rt}).Get(p.url + "/health")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.ProtoMajor != 2 {
		t.Fatalf("%s, want HTTP/2 over TLS", resp.Proto)
	}
	body := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"bash","arguments":{"command":"echo $$ > cancelled.pid; exec sleep 300"}}}`
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "POST", p.url+"/mcp", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Session-Id", cs.ID())
	req.Header.Set("Mcp-Protocol-Version", cs.InitializeResult().ProtocolVersion)
	errc := make(chan error, 1)
	go func() {
		resp, err := (&http.Client{Transport: rt}).Do(req)
		if err == nil {
			_, err = io.ReadAll(resp.Body)
			resp.Body.Close()
		}
		errc <- err
	}()
	pid := readPid(t, filepath.Join(p.dir, "cancelled.pid"))
	cancel() // the stream is reset; the connection stays
	<-errc
	waitGone(t, 7*time.Second, pid)
	mustOK(t, cs, "bash", map[string]any{"command": "true"})

	shutdownEndsCommands(t, p, cs)
}
