package docgen

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"unicode"
)

// Slug is the anchor GitHub gives a heading: lowercase, spaces to '-',
// every other character that is not a letter, a digit, '-' or '_'
// removed. Inline markup (backquotes, emphasis, links) goes first.
func Slug(heading string) string {
	h := linkRE.ReplaceAllString(heading, "$1")
	var b strings.Builder
	for _, r := range strings.ToLower(h) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

var (
	linkRE    = regexp.MustCompile(`!?\[([^\]]*)\]\(([^)\s]*)(?:\s+"[^"]*")?\)`)
	headingRE = regexp.MustCompile(`^(#{1,6})\s+(.*?)\s*#*\s*$`)
	fenceRE   = regexp.MustCompile("^\\s*(```|~~~)")
	anchorRE  = regexp.MustCompile(`<a\s+(?:name|id)="([^"]+)"`)
)

// Anchors are the anchors of a Markdown document: its headings' slugs,
// duplicates numbered -1, -2, … as GitHub does, and explicit
// <a name="…"> targets. Headings inside code fences do not count.
func Anchors(doc string) map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	for _, line := range prose(doc) {
		for _, m := range anchorRE.FindAllStringSubmatch(line, -1) {
			out[m[1]] = true
		}
		m := headingRE.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		s := Slug(m[2])
		if n := seen[s]; n > 0 {
			out[fmt.Sprintf("%s-%d", s, n)] = true
		} else {
			out[s] = true
		}
		seen[s]++
	}
	return out
}

// prose is a document's lines outside code fences.
func prose(doc string) []string {
	var out []string
	var fence string
	for _, line := range strings.Split(doc, "\n") {
		if m := fenceRE.FindStringSubmatch(line); m != nil {
			switch {
			case fence == "":
				fence = m[1]
			case m[1] == fence:
				fence = ""
			}
			continue
		}
		if fence == "" {
			out = append(out, line)
		}
	}
	return out
}

// Link is a relative link found in a document.
type Link struct {
	Line   int
	Target string
}

// Links are the relative links (and in-page anchors) of a document
// outside code fences and inline code; absolute URLs and mailto: are left
// out.
func Links(doc string) []Link {
	var out []Link
	var fence string
	for i, line := range strings.Split(doc, "\n") {
		if m := fenceRE.FindStringSubmatch(line); m != nil {
			switch {
			case fence == "":
				fence = m[1]
			case m[1] == fence:
				fence = ""
			}
			continue
		}
		if fence != "" {
			continue
		}
		for _, m := range linkRE.FindAllStringSubmatch(stripCode(line), -1) {
			t := m[2]
			if t == "" || strings.Contains(t, "://") || strings.HasPrefix(t, "mailto:") {
				continue
			}
			out = append(out, Link{Line: i + 1, Target: t})
		}
	}
	return out
}

// stripCode blanks inline code spans, where brackets are not links.
func stripCode(line string) string {
	parts := strings.Split(line, "`")
	for i := 1; i < len(parts); i += 2 {
		if i < len(parts)-1 { // a closed span
			parts[i] = ""
		}
	}
	return strings.Join(parts, "`")
}

// CheckLinks checks the relative links of the Markdown files (paths
// relative to root): each must name an existing file or directory and,
// with a #fragment into a Markdown file, one of its anchors. It returns
// one line per broken link.
func CheckLinks(root string, files []string) ([]string, error) {
	var problems []string
	anchors := map[string]map[string]bool{}
	anchorsOf := func(path string) (map[string]bool, error) {
		if a, ok := anchors[path]; ok {
			return a, nil
		}
		data, err := os.ReadFile(filepath.Join(root, path))
		if err != nil {
			return nil, err
		}
		a := Anchors(string(data))
		anchors[path] = a
		return a, nil
	}
	for _, file := range files {
		data, err := os.ReadFile(filepath.Join(root, file))
		if err != nil {
			return nil, err
		}
		for _, l := range Links(string(data)) {
			target, frag, _ := strings.Cut(l.Target, "#")
			path := file
			if target != "" {
				path = filepath.ToSlash(filepath.Join(filepath.Dir(file), target))
				if _, err := os.Stat(filepath.Join(root, path)); err != nil {
					problems = append(problems, fmt.Sprintf("%s:%d: %s: no such file %s", file, l.Line, l.Target, path))
					continue
				}
			}
			if frag == "" || !strings.HasSuffix(path, ".md") {
				continue
			}
			a, err := anchorsOf(path)
			if err != nil {
				return nil, err
			}
			if !a[frag] {
				problems = append(problems, fmt.Sprintf("%s:%d: %s: %s has no heading with anchor #%s", file, l.Line, l.Target, path, frag))
			}
		}
	}
	return problems, nil
}
