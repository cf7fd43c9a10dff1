package lsp

import (
	"encoding/json"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
)

// The part of the Language Server Protocol (3.17) boris speaks, written out
// here: the Go packages that carry the whole protocol's types are either
// unmaintained (go.lsp.dev/protocol, last released 2022, with zap as a
// dependency) or internal to gopls. These few structs are what the client
// sends and reads; unknown fields are ignored.

// uri is an LSP DocumentURI (file:// only).
type uri string

// fileURI returns the file URI of an absolute path.
func fileURI(path string) uri {
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(path)}
	return uri(u.String())
}

// path returns the absolute path of a file URI ("" for other schemes).
func (u uri) path() string {
	p, err := url.Parse(string(u))
	if err != nil || p.Scheme != "file" {
		return ""
	}
	return filepath.Clean(filepath.FromSlash(p.Path))
}

type position struct {
	Line      int `json:"line"`
	Character int `json:"character"`
}

type lspRange struct {
	Start position `json:"start"`
	End   position `json:"end"`
}

type location struct {
	URI   uri      `json:"uri"`
	Range lspRange `json:"range"`
}

// locationLink is what servers may answer definition-like requests with
// instead of a location.
type locationLink struct {
	TargetURI            uri      `json:"targetUri"`
	TargetRange          lspRange `json:"targetRange"`
	TargetSelectionRange lspRange `json:"targetSelectionRange"`
}

type textDocumentIdentifier struct {
	URI uri `json:"uri"`
}

type versionedTextDocumentIdentifier struct {
	URI     uri `json:"uri"`
	Version int `json:"version"`
}

type textDocumentItem struct {
	URI        uri    `json:"uri"`
	LanguageID string `json:"languageId"`
	Version    int    `json:"version"`
	Text       string `json:"text"`
}

type textDocumentPositionParams struct {
	TextDocument textDocumentIdentifier `json:"textDocument"`
	Position     position               `json:"position"`
}

type referenceParams struct {
	textDocumentPositionParams
	Context struct {
		IncludeDeclaration bool `json:"includeDeclaration"`
	} `json:"context"`
}

type didOpenParams struct {
	TextDocument textDocumentItem `json:"textDocument"`
}

type contentChange struct {
	Text string `json:"text"`
}

type didChangeParams struct {
	TextDocument   versionedTextDocumentIdentifier `json:"textDocument"`
	ContentChanges []contentChange                 `json:"contentChanges"`
	// WantDiagnostics is clangd's extension: true has it rebuild the file
	// and publish at once instead of after its debounce (50–500 ms).
	WantDiagnostics *bool `json:"wantDiagnostics,omitempty"`
}

// documentDiagnosticParams asks for a document's diagnostics (pull).
type documentDiagnosticParams struct {
	TextDocument textDocumentIdentifier `json:"textDocument"`
}

// documentDiagnosticReport is the answer of textDocument/diagnostic: a
// full report (kind "full"), or "unchanged", which boris never invites
// (it sends no previousResultId).
type documentDiagnosticReport struct {
	Kind  string       `json:"kind"`
	Items []diagnostic `json:"items"`
}

type didSaveParams struct {
	TextDocument textDocumentIdentifier `json:"textDocument"`
	Text         *string                `json:"text,omitempty"`
}

type didCloseParams struct {
	TextDocument textDocumentIdentifier `json:"textDocument"`
}

// File change types of workspace/didChangeWatchedFiles.
const (
	fileCreated = 1
	fileChanged = 2
	fileDeleted = 3
)

type fileEvent struct {
	URI  uri `json:"uri"`
	Type int `json:"type"`
}

type didChangeWatchedFilesParams struct {
	Changes []fileEvent `json:"changes"`
}

// Diagnostic severities.
const (
	SeverityError       = 1
	SeverityWarning     = 2
	SeverityInformation = 3
	SeverityHint        = 4
)

type diagnostic struct {
	Range    lspRange        `json:"range"`
	Severity int             `json:"severity"`
	Code     json.RawMessage `json:"code,omitempty"`
	Source   string          `json:"source"`
	Message  string          `json:"message"`
}

// codeString renders a diagnostic's code, a number or a string.
func (d *diagnostic) codeString() string {
	if len(d.Code) == 0 || string(d.Code) == "null" {
		return ""
	}
	var s string
	if json.Unmarshal(d.Code, &s) == nil {
		return s
	}
	return strings.TrimSpace(string(d.Code))
}

type publishDiagnosticsParams struct {
	URI         uri          `json:"uri"`
	Version     *int         `json:"version"`
	Diagnostics []diagnostic `json:"diagnostics"`
}

type documentSymbol struct {
	Name           string           `json:"name"`
	Detail         string           `json:"detail"`
	Kind           int              `json:"kind"`
	Range          lspRange         `json:"range"`
	SelectionRange lspRange         `json:"selectionRange"`
	Children       []documentSymbol `json:"children"`
	// Location is set instead of the ranges when the server answers with
	// SymbolInformation.
	Location      *location `json:"location"`
	ContainerName string    `json:"containerName"`
}

type workspaceSymbolParams struct {
	Query string `json:"query"`
}

type hoverResult struct {
	Contents json.RawMessage `json:"contents"`
	Range    *lspRange       `json:"range"`
}

type callHierarchyItem struct {
	Name           string          `json:"name"`
	Kind           int             `json:"kind"`
	Detail         string          `json:"detail,omitempty"`
	URI            uri             `json:"uri"`
	Range          lspRange        `json:"range"`
	SelectionRange lspRange        `json:"selectionRange"`
	Data           json.RawMessage `json:"data,omitempty"`
}

type callHierarchyIncomingCall struct {
	From       callHierarchyItem `json:"from"`
	FromRanges []lspRange        `json:"fromRanges"`
}

type callHierarchyOutgoingCall struct {
	To         callHierarchyItem `json:"to"`
	FromRanges []lspRange        `json:"fromRanges"`
}

type callHierarchyCallsParams struct {
	Item callHierarchyItem `json:"item"`
}

// progressParams is $/progress: a token and a work-done value.
type progressParams struct {
	Token json.RawMessage `json:"token"`
	Value struct {
		Kind       string `json:"kind"`
		Title      string `json:"title"`
		Message    string `json:"message"`
		Percentage *int   `json:"percentage"`
	} `json:"value"`
}

type registrationParams struct {
	Registrations []struct {
		ID              string          `json:"id"`
		Method          string          `json:"method"`
		RegisterOptions json.RawMessage `json:"registerOptions"`
	} `json:"registrations"`
}

type unregistrationParams struct {
	Unregisterations []struct {
		ID     string `json:"id"`
		Method string `json:"method"`
	} `json:"unregisterations"`
}

type fileSystemWatcher struct {
	// GlobPattern is a pattern string or a RelativePattern
	// {baseUri, pattern}.
	GlobPattern json.RawMessage `json:"globPattern"`
	Kind        *int            `json:"kind"`
}

type watchedFilesOptions struct {
	Watchers []fileSystemWatcher `json:"watchers"`
}

type showMessageParams struct {
	Type    int    `json:"type"`
	Message string `json:"message"`
}

// serverCapabilities is what boris reads of the initialize result. The
// providers are booleans or option objects: present and not false means
// supported.
type serverCapabilities struct {
	PositionEncoding        string          `json:"positionEncoding"`
	TextDocumentSync        json.RawMessage `json:"textDocumentSync"`
	DefinitionProvider      json.RawMessage `json:"definitionProvider"`
	ReferencesProvider      json.RawMessage `json:"referencesProvider"`
	HoverProvider           json.RawMessage `json:"hoverProvider"`
	DocumentSymbolProvider  json.RawMessage `json:"documentSymbolProvider"`
	WorkspaceSymbolProvider json.RawMessage `json:"workspaceSymbolProvider"`
	ImplementationProvider  json.RawMessage `json:"implementationProvider"`
	CallHierarchyProvider   json.RawMessage `json:"callHierarchyProvider"`
	// DiagnosticProvider: the server answers textDocument/diagnostic
	// (pull diagnostics).
	DiagnosticProvider json.RawMessage `json:"diagnosticProvider"`
}

type initializeResult struct {
	Capabilities serverCapabilities `json:"capabilities"`
	ServerInfo   *struct {
		Name    string `json:"name"`
		Version string `json:"version"`
	} `json:"serverInfo"`
	// OffsetEncoding is clangd's pre-3.17 spelling of PositionEncoding.
	OffsetEncoding string `json:"offsetEncoding"`
}

// supported reports whether a provider capability is present and not false.
func supported(raw json.RawMessage) bool {
	s := strings.TrimSpace(string(raw))
	return s != "" && s != "false" && s != "null"
}

// syncOptions reads textDocumentSync: whether the server wants didSave,
// and with the text.
func syncOptions(raw json.RawMessage) (save, saveText bool) {
	var obj struct {
		Save json.RawMessage `json:"save"`
	}
	if json.Unmarshal(raw, &obj) != nil || !supported(obj.Save) {
		return false, false
	}
	var so struct {
		IncludeText bool `json:"includeText"`
	}
	_ = json.Unmarshal(obj.Save, &so)
	return true, so.IncludeText
}

// Symbol kinds, named as the protocol names them (lower case).
var symbolKinds = [...]string{1: "file", "module", "namespace", "package", "class", "method", "property", "field", "constructor", "enum", "interface", "function", "variable", "constant", "string", "number", "boolean", "array", "object", "key", "null", "enum member", "struct", "event", "operator", "type parameter"}

// KindName names a symbol kind.
func KindName(k int) string {
	if k > 0 && k < len(symbolKinds) {
		return symbolKinds[k]
	}
	return "symbol " + strconv.Itoa(k)
}
