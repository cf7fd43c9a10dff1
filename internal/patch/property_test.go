package patch

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// vocab is small so that lines repeat and hunks can be ambiguous, and
// holds lines that look like patch syntax, blank lines, whitespace
// variants and typographic punctuation.
var vocab = []string{
	"a", "b", "c", "", "", "  ", "}", "\tindent", "x := 1", "x := 1  ", "  x := 1",
	"*** End of File", "*** End Patch", "@@ foo", "@@", "-neg", "+pos", "func f() {",
	"return nil", "naïve – dash", "-1 +1 @@",
}

// editOp is one step of a line diff.
type editOp struct {
	kind  byte // ' ', '-' or '+'
	text  string
	a     int // lines of A before this one
	block int // index of the change block; -1 for ' '
}

// lineDiff diffs a and b by their longest common subsequence.
func lineDiff(a, b []string) []editOp {
	n, m := len(a), len(b)
	lcs := make([][]int, n+1)
	for i := range lcs {
		lcs[i] = make([]int, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var ops []editOp
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && a[i] == b[j]:
			ops = append(ops, editOp{kind: ' ', text: a[i], a: i})
			i++
			j++
		case j < m && (i == n || lcs[i][j+1] >= lcs[i+1][j]):
			ops = append(ops, editOp{kind: '+', text: b[j], a: i})
			j++
		default:
			ops = append(ops, editOp{kind: '-', text: a[i], a: i})
			i++
		}
	}
	block := -1
	for k := range ops {
		if ops[k].kind == ' ' {
			ops[k].block = -1
			continue
		}
		if k == 0 || ops[k-1].kind == ' ' {
			block++
		}
		ops[k].block = block
	}
	return ops
}

// firstExact returns the first index at or after from where pattern occurs
// exactly in lines, or -1.
func firstExact(lines, pattern []string, from int) int {
	for i := from; i+len(pattern) <= len(lines); i++ {
		if slices.Equal(lines[i:i+len(pattern)], pattern) {
			return i
		}
	}
	return -1
}

// writeUpdate writes a V4A update section that turns a into b: hunks with
// ctx lines of context, close changes merged, and each hunk made to locate
// unambiguously with "@@" headers or by widening its leading context.
func writeUpdate(r *rand.Rand, a, b []string, ctx int) string {
	ops := lineDiff(a, b)
	type block struct{ as, ae int }
	var blocks []block
	for _, op := range ops {
		if op.block < 0 {
			continue
		}
		end := op.a
		if op.kind == '-' {
			end++
		}
		if op.block == len(blocks) {
			blocks = append(blocks, block{op.a, end})
		} else {
			blocks[op.block].ae = max(blocks[op.block].ae, end)
		}
	}

	var out strings.Builder
	out.WriteString("*** Update File: f.txt\n")
	pos := 0 // where Apply will search from, in a
	for bi := 0; bi < len(blocks); {
		bj := bi
		for bj+1 < len(blocks) && blocks[bj+1].as-blocks[bj].ae <= 2*ctx {
			bj++
		}
		hs := max(pos, blocks[bi].as-ctx)
		he := min(len(a), blocks[bj].ae+ctx)

		var headers []string
		searchFrom := pos
		if len(a) > 0 {
			if firstExact(a, a[hs:he], pos) != hs || r.IntN(3) == 0 {
				// Look for header lines that make the hunk unique.
				for try := 0; try < 8 && hs > pos; try++ {
					h := pos + r.IntN(hs-pos)
					hdr, ok := atHeader("@@ " + a[h])
					if !ok || hdr != a[h] || isBlank(a[h]) || firstExact(a, a[h:h+1], searchFrom) != h {
						continue
					}
					if firstExact(a, a[hs:he], h+1) == hs {
						headers = append(headers, a[h])
						searchFrom = h + 1
						break
					}
				}
			}
			if firstExact(a, a[hs:he], searchFrom) != hs {
				// Widen the leading context back to where the search
				// starts: a pattern that starts there is found there.
				hs = searchFrom
			}
		}

		var body []string
		for _, op := range ops {
			switch {
			case op.block >= bi && op.block <= bj:
				body = append(body, string(op.kind)+op.text)
			case op.kind == ' ' && op.a >= hs && op.a < he:
				if op.text == "" && r.IntN(2) == 0 {
					body = append(body, "") // the stripped form
				} else {
					body = append(body, " "+op.text)
				}
			}
		}
		// A first hunk may go without "@@" unless its first line would be
		// taken for a blank line between hunks.
		if bi > 0 || len(headers) > 0 || isBlank(body[0]) || r.IntN(2) == 0 {
			if len(headers) == 0 {
				out.WriteString("@@\n")
			}
			for _, h := range headers {
				out.WriteString("@@ " + h + "\n")
			}
		}
		for _, l := range body {
			out.WriteString(l + "\n")
		}
		if he == len(a) && r.IntN(2) == 0 {
			out.WriteString("*** End of File\n")
		}
		pos = he
		bi = bj + 1
	}
	return out.String()
}

// changesEnd reports whether turning a into b removes a's last line or
// adds lines after it: only then may the end of the file change.
func changesEnd(a, b []string) bool {
	for _, op := range lineDiff(a, b) {
		if op.kind == '-' && op.a == len(a)-1 || op.kind == '+' && op.a == len(a) {
			return true
		}
	}
	return false
}

// randomLines returns n lines drawn from vocab.
func randomLines(r *rand.Rand, n int) []string {
	lines := make([]string, n)
	for i := range lines {
		lines[i] = vocab[r.IntN(len(vocab))]
	}
	return lines
}

// randomEdit returns a copy of a with a few lines replaced, deleted or
// inserted; never equal to a.
func randomEdit(r *rand.Rand, a []string) []string {
	b := slices.Clone(a)
	for range 1 + r.IntN(5) {
		i := r.IntN(len(b) + 1)
		switch r.IntN(3) {
		case 0:
			b = slices.Insert(b, i, vocab[r.IntN(len(vocab))])
		case 1:
			if i < len(b) {
				b = slices.Delete(b, i, i+1)
			}
		default:
			if i < len(b) {
				b[i] = "new " + vocab[r.IntN(len(vocab))]
			}
		}
	}
	if slices.Equal(a, b) {
		b = append(b, "appended")
	}
	return b
}

func join(lines []string, eol string, final bool) string {
	if len(lines) == 0 {
		return ""
	}
	s := strings.Join(lines, eol)
	if final {
		s += eol
	}
	return s
}

func TestApplyRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for n := range 1000 {
		a := randomLines(r, r.IntN(40))
		b := randomEdit(r, a)
		eol := "\n"
		if r.IntN(4) == 0 {
			eol = "\r\n"
		}
		// An empty last line without a line ending is no line at all.
		final := r.IntN(4) != 0 || len(a) > 0 && a[len(a)-1] == ""
		content := join(a, eol, final)
		// The result ends every line with the file's first line ending,
		// "\n" when it has none, but for a last line that stays last,
		// which keeps its own.
		pref := eol
		if len(a) == 0 || len(a) == 1 && !final {
			pref = "\n"
		}
		want := join(b, pref, final || changesEnd(a, b))
		patchText := "*** Begin Patch\n" + writeUpdate(r, a, b, 1+r.IntN(3)) + "*** End Patch\n"

		p, err := Parse(patchText)
		if err != nil {
			t.Fatalf("case %d: Parse: %v\npatch:\n%s", n, err, patchText)
		}
		got, err := Apply(content, p.Sections[0].Hunks)
		if err != nil {
			t.Fatalf("case %d: Apply: %v\nfile: %q\npatch:\n%s", n, err, content, patchText)
		}
		if got != want {
			t.Fatalf("case %d: Apply =\n%q\nwant\n%q\nfile: %q\npatch:\n%s", n, got, want, content, patchText)
		}
	}
}
