package results

import "encoding/json"

// Exec is the result of Codex's unified exec tools (exec_command,
// write_stdin) in --openai-compat, and of shell there: Codex's own output
// schema, field for field.
type Exec struct {
	ChunkID            string  `json:"chunk_id,omitempty"`
	WallTimeSeconds    float64 `json:"wall_time_seconds"`
	ExitCode           *int    `json:"exit_code,omitempty"`
	SessionID          *int    `json:"session_id,omitempty"`
	OriginalTokenCount *int64  `json:"original_token_count,omitempty"`
	Output             string  `json:"output"`
}

// ExecSchema is Codex's output schema of exec_command and write_stdin
// (codex-rs: unified_exec_output_schema), exactly: its fields, types,
// descriptions, required list and closed object. A failed call's
// structured content fits it too: output holds the error text
// ("[CODE] message").
var ExecSchema = json.RawMessage(`{"type":"object","properties":{"chunk_id":{"type":"string","description":"Chunk identifier included when the response reports one."},"wall_time_seconds":{"type":"number","description":"Elapsed wall time spent waiting for output in seconds."},"exit_code":{"type":"number","description":"Process exit code when the command finished during this call."},"session_id":{"type":"number","description":"Session identifier to pass to write_stdin when the process is still running."},"original_token_count":{"type":"number","description":"Approximate token count before output truncation."},"output":{"type":"string","description":"Command output text, possibly truncated."}},"required":["wall_time_seconds","output"],"additionalProperties":false}`)
