// Package tokens holds the bearer tokens boris accepts on /mcp: those given
// with --token (BORIS_TOKEN), fixed for the life of the process, and those of
// a token file (--token-file), read again whenever the file changes.
//
// Each token is its own credential, named "token-N": the --token tokens
// take 1…k in their order, then every token of the file gets the next
// number the first time it is seen. A number is never reused, so the
// sessions of a token that was removed can never be found under another
// one, not even under the same token added back later.
//
// The file is watched the way the TLS pair is (see package tlscert), for
// the same reasons: a Kubernetes Secret volume updates its files by swapping
// a "..data" symlink, and an operator may rewrite the file in place. Here
// the content itself is compared, once a second: a token file is a few
// hundred bytes, and a removed token must stop working even when no client
// is asking — its sessions are closed (see Watch).
package tokens

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// MaxFileSize bounds a token file: more than any list of tokens needs, so
// a path pointing at the wrong, large file fails instead of being held in
// memory.
const MaxFileSize = 1 << 20

// CheckEvery is how often Watch looks at the token file.
const CheckEvery = time.Second

// Parse reads tokens from a token file's content: one per line, surrounding
// whitespace trimmed; blank lines and lines starting with # are skipped. A
// token must not contain whitespace or commas (BORIS_TOKEN separates tokens
// with commas; a line "a,b" is a mistake, not a token). Duplicates are
// dropped. No token at all is an error.
func Parse(data []byte) ([]string, error) {
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 4096), MaxFileSize)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if strings.ContainsAny(line, " \t\v\f\r,") {
			return nil, fmt.Errorf("line %d holds more than a token (a space or a comma): give one token per line", n)
		}
		if !slices.Contains(out, line) {
			out = append(out, line)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, errors.New("it holds no token: give one token per line (blank lines and lines starting with # are skipped)")
	}
	return out, nil
}

// ReadFile reads and parses a token file.
func ReadFile(path string) ([]string, error) {
	data, err := readFile(path)
	if err != nil {
		return nil, err
	}
	toks, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return toks, nil
}

func readFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if len(data) > MaxFileSize {
		return nil, fmt.Errorf("%s is larger than %d bytes: not a token file", path, MaxFileSize)
	}
	return data, nil
}

// Options configure a Set.
type Options struct {
	// Static are the tokens of --token, in order.
	Static []string
	// File is the token file's path ("" for none).
	File string
	// Logger gets the reloads and the problems with the file.
	Logger *slog.Logger
}

// Set is the bearer tokens accepted now. Its methods are safe for
// concurrent use.
type Set struct {
	static []string
	file   string
	logger *slog.Logger

	cur atomic.Pointer[snapshot]

	mu      sync.Mutex        // one check at a time; guards the fields below
	names   map[string]string // token → credential, for the tokens accepted now
	next    int               // the number of the next new credential
	seen    []byte            // the file's content as last read
	lastErr string            // the last problem with the file reported
}

// snapshot is what Match compares against: the digests of the tokens and
// their credentials, in the same order.
type snapshot struct {
	sums  [][sha256.Size]byte
	creds []string
}

// New returns the Set of the static tokens and, when a file is given, the
// tokens it holds now; a file that cannot be read or holds no token is an
// error.
func New(opts Options) (*Set, error) {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	s := &Set{static: opts.Static, file: opts.File, logger: opts.Logger, names: map[string]string{}, next: 1}
	for _, t := range opts.Static {
		s.name(t)
	}
	if s.file != "" {
		data, err := readFile(s.file)
		if err != nil {
			return nil, err
		}
		toks, err := Parse(data)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", s.file, err)
		}
		s.seen = data
		for _, t := range toks {
			s.name(t)
		}
	}
	s.publish()
	return s, nil
}

// name returns a token's credential, numbering it if it is new.
func (s *Set) name(tok string) string {
	if c, ok := s.names[tok]; ok {
		return c
	}
	c := "token-" + strconv.Itoa(s.next)
	s.next++
	s.names[tok] = c
	return c
}

// publish makes the current names the tokens Match accepts.
func (s *Set) publish() {
	snap := &snapshot{}
	for tok, c := range s.names {
		snap.sums = append(snap.sums, sha256.Sum256([]byte(tok)))
		snap.creds = append(snap.creds, c)
	}
	s.cur.Store(snap)
}

// Match returns the credential of a presented token. Every accepted token
// is compared, in constant time, whichever matches.
func (s *Set) Match(tok string) (cred string, ok bool) {
	snap := s.cur.Load()
	sum := sha256.Sum256([]byte(tok))
	match := -1
	for i := range snap.sums {
		match = subtle.ConstantTimeSelect(subtle.ConstantTimeCompare(sum[:], snap.sums[i][:]), i, match)
	}
	if match < 0 {
		return "", false
	}
	return snap.creds[match], true
}

// Len is the number of tokens accepted now.
func (s *Set) Len() int { return len(s.cur.Load().sums) }

// File is the token file's path, "" when there is none.
func (s *Set) File() string { return s.file }

// Watch looks at the token file every interval (CheckEvery when zero)
// until ctx is done, and calls revoked with the credentials of the tokens a
// change removed, after they stopped being accepted. Without a file it
// returns at once.
func (s *Set) Watch(ctx context.Context, interval time.Duration, revoked func(creds []string)) {
	if s.file == "" {
		return
	}
	if interval <= 0 {
		interval = CheckEvery
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if gone := s.Check(); len(gone) > 0 && revoked != nil {
				revoked(gone)
			}
		}
	}
}

// Check reads the token file and, if its content changed and holds
// tokens, makes them the file's tokens; it returns the credentials of the
// tokens no longer accepted. A file that cannot be read, or holds no
// token, leaves the tokens as they were and is logged as a warning (once
// per distinct problem).
func (s *Set) Check() (revoked []string) {
	if s.file == "" {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	data, err := readFile(s.file)
	if err == nil && bytes.Equal(data, s.seen) {
		s.lastErr = ""
		return nil
	}
	var toks []string
	if err == nil {
		if toks, err = Parse(data); err != nil {
			err = fmt.Errorf("%s: %w", s.file, err)
		}
	}
	if err != nil {
		if msg := err.Error(); msg != s.lastErr {
			s.lastErr = msg
			s.logger.Warn("the token file cannot be used; the tokens it held before stay valid until it can",
				"token_file", s.file, "error", msg, "tokens", s.Len())
		}
		return nil
	}
	s.seen, s.lastErr = data, ""
	keep := map[string]bool{}
	for _, t := range s.static {
		keep[t] = true
	}
	var added []string
	for _, t := range toks {
		keep[t] = true
		if _, ok := s.names[t]; !ok {
			added = append(added, s.name(t))
		}
	}
	for t, c := range s.names {
		if !keep[t] {
			delete(s.names, t)
			revoked = append(revoked, c)
		}
	}
	slices.Sort(revoked)
	s.publish()
	if len(added) > 0 || len(revoked) > 0 {
		s.logger.Info("token file reloaded", "token_file", s.file, "tokens", s.Len(),
			"added", strings.Join(added, ","), "removed", strings.Join(revoked, ","))
	}
	return revoked
}
