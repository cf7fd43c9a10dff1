package server

import (
	"encoding/json"
	"fmt"
)

// needsInitialize reports whether a request is one the handshake era
// allows only after initialize: a call (it has an id) of a method other
// than initialize, ping and server/discover, whose params carry no _meta
// protocol version (a request that does belongs to the 2026-07-28
// revision, which has no initialize). The SDK refuses such a call with a
// JSON-RPC error of code 0, which is no valid code and says nothing of
// what to do, so boris answers it itself (see beforeInitialize).
func needsInitialize(method string, isCall bool, params []byte) bool {
	if !isCall {
		return false
	}
	switch method {
	case "initialize", "ping", "server/discover":
		return false
	}
	var probe struct {
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	if len(params) > 0 && json.Unmarshal(params, &probe) == nil {
		if _, ok := probe.Meta[metaProtocolVersion]; ok {
			return false
		}
	}
	return true
}

// beforeInitialize is the message a call that came before initialize is
// answered with (JSON-RPC -32600, invalid request).
func beforeInitialize(method string) string {
	return fmt.Sprintf("%q came before initialize: send initialize first, then notifications/initialized, then your requests (or, at protocol %s or later, send each request with its MCP-Protocol-Version and its _meta protocol version)", method, statelessVersion)
}
