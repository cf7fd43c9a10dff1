package main

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/boris-mcp/boris/bench/internal/kit"
	"github.com/boris-mcp/boris/internal/patch/corpus"
)

// runCorpus applies every commit of repo's history as a patch, rounds
// times in each style, over stdio and HTTP, and prints the latency of the
// apply_patch calls.
func runCorpus(bin, tmp, repo string, rounds int) error {
	r, err := corpus.Open(repo)
	if err != nil {
		return err
	}
	defer r.Close()
	revs, err := r.History()
	if err != nil {
		return err
	}
	var commits []*corpus.Commit
	skipped := 0
	for _, rev := range revs {
		c, err := r.Load(rev)
		if err != nil {
			return err
		}
		skipped += len(c.Skipped)
		if len(c.Files) > 0 {
			commits = append(commits, c)
		}
	}

	work := filepath.Join(tmp, "corpus")
	if err := os.Mkdir(work, 0o755); err != nil {
		return err
	}
	ctx := context.Background()
	stdio, _ := kit.Stdio(ctx, bin, "--workdir="+work, "--log-level=error")
	defer stdio.Close()
	server, url := kit.HTTP(bin, "--workdir="+work)
	defer func() { _ = server.Process.Kill(); _ = server.Wait() }()
	web, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil).
		Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url + "/mcp"}, nil)
	if err != nil {
		return err
	}
	defer web.Close()

	type patchCase struct {
		c    *corpus.Commit
		text string
		dir  string
	}
	var cases [2][]patchCase
	var stats [2]corpus.Stats
	var bytesTotal [2]int
	for i, c := range commits {
		for _, style := range []corpus.Style{corpus.Headers, corpus.Bare} {
			prefix := fmt.Sprintf("%04d-%s/", i, style)
			secs, st := c.Sections(style, prefix)
			stats[style].Add(st)
			text := corpus.Text(secs)
			bytesTotal[style] += len(text)
			cases[style] = append(cases[style], patchCase{c, text, filepath.Join(work, prefix)})
		}
	}
	fmt.Printf("apply_patch on the history of %s: %d commits (%d with nothing a patch can express, %d files left out), %d rounds, through MCP\n\n",
		repo, len(revs), len(revs)-len(commits), skipped, rounds)

	transports := []struct {
		name string
		cs   *mcp.ClientSession
	}{{"stdio", stdio}, {"HTTP", web}}
	// d and one (the patches of a single file, whose time is not mostly
	// the fsyncs of many files' atomic writes) by style and transport.
	// Styles and transports take turns on each commit, so that the
	// machine's drift hits all alike.
	var d, one [2][2][]time.Duration
	for round := range rounds {
		for k := range commits {
			for _, style := range []corpus.Style{corpus.Headers, corpus.Bare} {
				pc := cases[style][k]
				for t, tr := range transports {
					if err := setUp(pc.dir, pc.c); err != nil {
						return err
					}
					start := time.Now()
					res, err := tr.cs.CallTool(ctx, &mcp.CallToolParams{Name: "apply_patch", Arguments: map[string]any{"input": pc.text}})
					took := time.Since(start)
					if err != nil || res.IsError {
						return fmt.Errorf("commit %s, %s, %s: %v %v", pc.c.ID[:12], style, tr.name, err, res)
					}
					d[style][t] = append(d[style][t], took)
					if len(pc.c.Files) == 1 {
						one[style][t] = append(one[style][t], took)
					}
					if round == 0 {
						if msg := check(pc.dir, pc.c); msg != "" {
							return fmt.Errorf("commit %s, %s, %s: %s", pc.c.ID[:12], style, tr.name, msg)
						}
					}
				}
			}
		}
	}
	row := func(tr, what string, d []time.Duration) {
		fmt.Printf("  %-6s %-12s %5d calls  p50 %8s  p90 %8s  p99 %8s  max %8s\n", tr, what, len(d),
			kit.Pct(d, 50).Round(10*time.Microsecond), kit.Pct(d, 90).Round(10*time.Microsecond),
			kit.Pct(d, 99).Round(10*time.Microsecond), kit.Pct(d, 100).Round(10*time.Microsecond))
	}
	for _, style := range []corpus.Style{corpus.Headers, corpus.Bare} {
		s := stats[style]
		fmt.Printf("%s: %d patches, %d sections, %d hunks (%d with a header, %d repeated or passed), %.1f KB a patch on average\n",
			style, len(cases[style]), s.Sections, s.Hunks, s.Headers, s.Repeated, float64(bytesTotal[style])/float64(len(cases[style]))/1024)
		for t, tr := range transports {
			row(tr.name, "all patches", d[style][t])
			if len(one[style][t]) > 0 {
				row(tr.name, "one file", one[style][t])
			}
		}
		fmt.Println()
	}
	return nil
}

// setUp makes dir hold exactly the parent's versions of the commit's
// files.
func setUp(dir string, c *corpus.Commit) error {
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, f := range c.Files {
		if f.From == "" {
			continue
		}
		p := filepath.Join(dir, f.From)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, f.Before, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// check says how dir differs from the commit's files, "" when it holds
// exactly them.
func check(dir string, c *corpus.Commit) string {
	want := map[string][]byte{}
	for _, f := range c.Files {
		if f.To != "" {
			want[f.To] = f.After
		}
	}
	var diffs []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		got, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if w, ok := want[rel]; !ok || !bytes.Equal(got, w) {
			diffs = append(diffs, rel)
		}
		delete(want, rel)
		return nil
	})
	if err != nil {
		return err.Error()
	}
	for rel := range want {
		diffs = append(diffs, rel+" (missing)")
	}
	if len(diffs) > 0 {
		return "differs from the commit: " + strings.Join(diffs, ", ")
	}
	return ""
}
