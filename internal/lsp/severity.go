package lsp

// SeverityName names a diagnostic severity.
func SeverityName(s int) string {
	switch s {
	case SeverityWarning:
		return "warning"
	case SeverityInformation:
		return "info"
	case SeverityHint:
		return "hint"
	}
	return "error"
}
