package tool

import "strconv"

// Text helpers every family's renderers share.

// AppendLineNo appends a line number right-aligned in six columns and a
// tab, as cat -n does.
func AppendLineNo(b []byte, n int) []byte {
	var digits [20]byte
	d := strconv.AppendInt(digits[:0], int64(n), 10)
	for i := len(d); i < 6; i++ {
		b = append(b, ' ')
	}
	return append(append(b, d...), '\t')
}

// Plural is the "s" of a count other than one.
func Plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
