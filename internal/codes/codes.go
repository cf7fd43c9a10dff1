// Package codes defines the error codes boris's tools answer with and an
// error type carrying one, so domain packages can say precisely what went
// wrong without knowing about MCP; the tool layer renders them as
// "[CODE] message".
package codes

import (
	"errors"
	"fmt"
)

// Code is an UPPER_SNAKE_CASE error code shown to the model.
type Code string

// The error codes.
const (
	InvalidInput         Code = "INVALID_INPUT"
	PathNotFound         Code = "PATH_NOT_FOUND"
	AccessDenied         Code = "ACCESS_DENIED"
	FileTooLarge         Code = "FILE_TOO_LARGE"
	IOError              Code = "IO_ERROR"
	FileNotViewed        Code = "FILE_NOT_VIEWED"
	FileChangedSinceView Code = "FILE_CHANGED_SINCE_VIEW"
	// The command codes keep the names they were published with, from
	// when bash was the only tool that ran commands; every command tool
	// (shell, exec_command, the task tools) answers with them.
	CommandEmpty          Code = "BASH_EMPTY_COMMAND"
	CommandStartFailed    Code = "BASH_START_FAILED"
	TaskLimit             Code = "BASH_TASK_LIMIT"
	TaskNotFound          Code = "BASH_TASK_NOT_FOUND"
	SessionClosed         Code = "SESSION_CLOSED"
	SessionNotFound       Code = "SESSION_NOT_FOUND"
	SessionLimit          Code = "SESSION_LIMIT"
	StrReplaceNotFound    Code = "STR_REPLACE_NOT_FOUND"
	StrReplaceAmbiguous   Code = "STR_REPLACE_AMBIGUOUS"
	GrepInvalidPattern    Code = "GREP_INVALID_PATTERN"
	GrepInvalidOutputMode Code = "GREP_INVALID_OUTPUT_MODE"
	GrepInvalidType       Code = "GREP_INVALID_TYPE"
	FindInvalidPattern    Code = "FIND_INVALID_PATTERN"
	FindInvalidType       Code = "FIND_INVALID_TYPE"
	EditorInvalidCommand  Code = "EDITOR_INVALID_COMMAND"
	PatchInvalid          Code = "PATCH_INVALID"
	PatchContextNotFound  Code = "PATCH_CONTEXT_NOT_FOUND"
	UndoNoHistory         Code = "UNDO_NO_HISTORY"

	// Language servers (the lsp tool).
	LSPNoServer    Code = "LSP_NO_SERVER"
	LSPStartFailed Code = "LSP_START_FAILED"
	LSPIndexing    Code = "LSP_INDEXING"
	LSPTimeout     Code = "LSP_TIMEOUT"
	LSPUnsupported Code = "LSP_UNSUPPORTED"
	LSPServerError Code = "LSP_SERVER_ERROR"
	// Checkpoints.
	CheckpointNotFound Code = "CHECKPOINT_NOT_FOUND"
	CheckpointTooLarge Code = "CHECKPOINT_TOO_LARGE"
	CheckpointDisabled Code = "CHECKPOINT_DISABLED"
	CheckpointFailed   Code = "CHECKPOINT_FAILED"
	// Workspaces (--isolation worktree, the workspace tool).
	WorkspaceLimit    Code = "WORKSPACE_LIMIT"
	WorkspaceNotFound Code = "WORKSPACE_NOT_FOUND"
	WorkspaceFailed   Code = "WORKSPACE_FAILED"
	// Command rules (--rules). RuleForbidden: a rule forbids what the call
	// would run or touch; nothing ran. RuleApprovalNeeded: a rule asks for
	// a human's approval (or what would run cannot be known before it
	// runs) and none could be had: the client cannot ask (no elicitation)
	// or no answer came in time. RuleDeclined: the human said no.
	RuleForbidden      Code = "RULE_FORBIDDEN"
	RuleApprovalNeeded Code = "RULE_APPROVAL_NEEDED"
	RuleDeclined       Code = "RULE_DECLINED"
)

// All lists every code, in the order above: the values a structured error
// result's code may take. A new code goes here too.
var All = []Code{
	InvalidInput, PathNotFound, AccessDenied, FileTooLarge, IOError, FileNotViewed,
	FileChangedSinceView, CommandEmpty, CommandStartFailed, TaskLimit,
	TaskNotFound, SessionClosed, SessionNotFound, SessionLimit, StrReplaceNotFound,
	StrReplaceAmbiguous, GrepInvalidPattern, GrepInvalidOutputMode, GrepInvalidType,
	FindInvalidPattern, FindInvalidType, EditorInvalidCommand, PatchInvalid,
	PatchContextNotFound, UndoNoHistory,
	LSPNoServer, LSPStartFailed, LSPIndexing, LSPTimeout, LSPUnsupported, LSPServerError,
	CheckpointNotFound, CheckpointTooLarge, CheckpointDisabled, CheckpointFailed,
	WorkspaceLimit, WorkspaceNotFound, WorkspaceFailed,
	RuleForbidden, RuleApprovalNeeded, RuleDeclined,
}

// Error is an operational failure reported to the model as a tool result.
type Error struct {
	Code Code
	// Message is boris's own wording.
	Message string
	// Param and Valid, when set, name the parameter whose value was
	// refused and the values it may take.
	Param string
	Valid []string
	// Fact, when set, holds the situation as data (a struct of the domain
	// package that made the error), so a tool dialect can word it the way
	// its models were trained to read it.
	Fact any
}

func (e *Error) Error() string { return "[" + string(e.Code) + "] " + e.Message }

// Errorf returns an *Error with a formatted message.
func Errorf(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// WithFact sets e's Fact and returns e.
func (e *Error) WithFact(fact any) *Error {
	e.Fact = fact
	return e
}

// WithValid sets the parameter at fault and its valid values, and returns e.
func (e *Error) WithValid(param string, valid ...string) *Error {
	e.Param, e.Valid = param, valid
	return e
}

// As returns the *Error in err's chain, if any.
func As(err error) (*Error, bool) {
	var e *Error
	ok := errors.As(err, &e)
	return e, ok
}
