package lsp

import (
	"bytes"
	"unicode/utf16"
	"unicode/utf8"
)

// Columns: the tool's line and character are 1-based and count
// characters (Unicode code points), as editors show them; the protocol's
// are 0-based and count UTF-16 code units, or bytes when the server agreed
// to UTF-8. These convert between the two on one line's text.

// lineAt returns line n (0-based) of content without its line ending, and
// whether it exists.
func lineAt(content []byte, n int) ([]byte, bool) {
	if n < 0 {
		return nil, false
	}
	start := 0
	for i := 0; i < n; i++ {
		j := bytes.IndexByte(content[start:], '\n')
		if j < 0 {
			return nil, false
		}
		start += j + 1
	}
	line := content[start:]
	if j := bytes.IndexByte(line, '\n'); j >= 0 {
		line = line[:j]
	}
	return bytes.TrimSuffix(line, []byte{'\r'}), true
}

// lineCount is the number of lines view shows for content (a final
// newline ends the last line rather than starting another); at least 1.
func lineCount(content []byte) int {
	n := bytes.Count(content, []byte{'\n'})
	if len(content) > 0 && content[len(content)-1] != '\n' {
		n++
	}
	return max(n, 1)
}

// toUnits converts a 0-based character index on line to the server's
// 0-based column: UTF-16 code units, or bytes with utf8.
func toUnits(line []byte, char int, utf8Units bool) int {
	units := 0
	for i, n := 0, 0; i < len(line) && n < char; n++ {
		r, size := utf8.DecodeRune(line[i:])
		if utf8Units {
			units += size
		} else {
			units += utf16.RuneLen(r)
			if units < 0 {
				units++ // invalid rune: one unit
			}
		}
		i += size
	}
	return units
}

// fromUnits converts a server's 0-based column on line to a 0-based
// character index.
func fromUnits(line []byte, units int, utf8Units bool) int {
	chars, u := 0, 0
	for i := 0; i < len(line) && u < units; {
		r, size := utf8.DecodeRune(line[i:])
		if utf8Units {
			u += size
		} else if n := utf16.RuneLen(r); n > 0 {
			u += n
		} else {
			u++
		}
		i += size
		chars++
	}
	return chars
}

// charCount is the number of characters on a line.
func charCount(line []byte) int { return utf8.RuneCount(line) }
