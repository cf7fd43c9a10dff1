package ignore

import "strings"

// Results of dowild, as in git's wildmatch.c.
const (
	wmMatch           = 0
	wmNoMatch         = 1
	wmAbortAll        = -1
	wmAbortToStarStar = -2
)

// wildmatch reports whether text matches the glob pattern with git's
// semantics. With pathname set (git's WM_PATHNAME), "*", "?" and bracket
// expressions never match "/", and "**" between slashes (or at either end)
// matches any number of directories.
func wildmatch(pattern, text string, pathname bool) bool {
	return dowild(pattern, text, pathname) == wmMatch
}

// dowild is a faithful port of git's dowild (wildmatch.c), including its
// quirks, so that .gitignore files mean exactly what they mean to git. The
// C code walks NUL-terminated strings; here the end of a string stands for
// the NUL. Patterns never contain NUL (Parse cuts lines there).
func dowild(p, text string, pathname bool) int {
	pi, ti := 0, 0
	for ; pi < len(p); pi, ti = pi+1, ti+1 {
		pch := p[pi]
		if ti >= len(text) && pch != '*' {
			return wmAbortAll
		}
		var tch byte
		if ti < len(text) {
			tch = text[ti]
		}
		switch pch {
		case '\\':
			// Literal match with the following character; a trailing
			// backslash compares against NUL and fails.
			pi++
			if pi >= len(p) {
				return wmNoMatch
			}
			if tch != p[pi] {
				return wmNoMatch
			}
			continue
		case '?':
			if pathname && tch == '/' {
				return wmNoMatch
			}
			continue
		case '*':
			var matchSlash bool
			pi++
			if pi < len(p) && p[pi] == '*' {
				prev := pi - 2 // the byte before the run of stars
				for pi++; pi < len(p) && p[pi] == '*'; pi++ {
				}
				switch {
				case !pathname:
					matchSlash = true
				case (prev < 0 || p[prev] == '/') &&
					(pi == len(p) || p[pi] == '/' || (p[pi] == '\\' && pi+1 < len(p) && p[pi+1] == '/')):
					// "**/" may match nothing: try the rest of the
					// pattern right here first.
					if pi < len(p) && p[pi] == '/' && dowild(p[pi+1:], text[ti:], pathname) == wmMatch {
						return wmMatch
					}
					matchSlash = true
				default:
					matchSlash = false
				}
			} else {
				matchSlash = !pathname
			}
			if pi == len(p) {
				// A trailing "**" matches everything, a trailing "*"
				// only if no slash follows.
				if !matchSlash && strings.IndexByte(text[ti:], '/') >= 0 {
					return wmNoMatch
				}
				return wmMatch
			} else if !matchSlash && p[pi] == '/' {
				// One star followed by a slash matches up to the next
				// directory separator; the loop consumes both slashes.
				slash := strings.IndexByte(text[ti:], '/')
				if slash < 0 {
					return wmNoMatch
				}
				ti += slash
				continue
			}
			for ti < len(text) {
				// Advance quickly to the next occurrence of a literal
				// that follows the star.
				if !isGlobSpecial(p[pi]) {
					want := p[pi]
					for ti < len(text) && (matchSlash || text[ti] != '/') && text[ti] != want {
						ti++
					}
					if ti >= len(text) || text[ti] != want {
						return wmNoMatch
					}
				}
				if m := dowild(p[pi:], text[ti:], pathname); m != wmNoMatch {
					if !matchSlash || m != wmAbortToStarStar {
						return m
					}
				} else if !matchSlash && text[ti] == '/' {
					return wmAbortToStarStar
				}
				ti++
			}
			return wmAbortAll
		case '[':
			pi++
			if pi >= len(p) {
				return wmAbortAll
			}
			pch = p[pi]
			if pch == '^' {
				pch = '!'
			}
			negated := pch == '!'
			if negated {
				pi++
				if pi >= len(p) {
					return wmAbortAll
				}
				pch = p[pi]
			}
			var prev byte
			matched := false
			for {
				if pi >= len(p) {
					return wmAbortAll
				}
				switch {
				case pch == '\\':
					pi++
					if pi >= len(p) {
						return wmAbortAll
					}
					pch = p[pi]
					if tch == pch {
						matched = true
					}
				case pch == '-' && prev != 0 && pi+1 < len(p) && p[pi+1] != ']':
					pi++
					pch = p[pi]
					if pch == '\\' {
						pi++
						if pi >= len(p) {
							return wmAbortAll
						}
						pch = p[pi]
					}
					if tch <= pch && tch >= prev {
						matched = true
					}
					pch = 0 // so that prev becomes 0
				case pch == '[' && pi+1 < len(p) && p[pi+1] == ':':
					pi += 2
					s := pi
					for pi < len(p) && p[pi] != ']' {
						pi++
					}
					if pi >= len(p) {
						return wmAbortAll
					}
					n := pi - s - 1
					if n < 0 || p[pi-1] != ':' {
						// No ":]": an ordinary "[" in the set.
						pi = s - 2
						pch = '['
						if tch == pch {
							matched = true
						}
						break
					}
					in, ok := posixClass(p[s:s+n], tch)
					if !ok {
						return wmAbortAll
					}
					if in {
						matched = true
					}
					pch = 0
				default:
					if tch == pch {
						matched = true
					}
				}
				prev = pch
				pi++
				if pi >= len(p) {
					return wmAbortAll
				}
				pch = p[pi]
				if pch == ']' {
					break
				}
			}
			if matched == negated || (pathname && tch == '/') {
				return wmNoMatch
			}
			continue
		default:
			if tch != pch {
				return wmNoMatch
			}
			continue
		}
	}
	if ti < len(text) {
		return wmNoMatch
	}
	return wmMatch
}

func isGlobSpecial(c byte) bool { return c == '*' || c == '?' || c == '[' || c == '\\' }

// posixClass evaluates [:name:] for c with git's ctype table (ASCII only,
// isspace without \v and \f). ok is false for an unknown class name.
func posixClass(name string, c byte) (in, ok bool) {
	isUpper := c >= 'A' && c <= 'Z'
	isLower := c >= 'a' && c <= 'z'
	isAlpha := isUpper || isLower
	isDigit := c >= '0' && c <= '9'
	isSpace := c == ' ' || c == '\t' || c == '\n' || c == '\r'
	isPrint := c >= 0x20 && c <= 0x7e
	switch name {
	case "alnum":
		return isAlpha || isDigit, true
	case "alpha":
		return isAlpha, true
	case "blank":
		return c == ' ' || c == '\t', true
	case "cntrl":
		return c < 0x20 || c == 0x7f, true
	case "digit":
		return isDigit, true
	case "graph":
		return isPrint && !isSpace, true
	case "lower":
		return isLower, true
	case "print":
		return isPrint, true
	case "punct":
		return isPrint && !isSpace && !isAlpha && !isDigit, true
	case "space":
		return isSpace, true
	case "upper":
		return isUpper, true
	case "xdigit":
		return isDigit || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'), true
	}
	return false, false
}
