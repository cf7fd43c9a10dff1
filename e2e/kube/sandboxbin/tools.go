//go:build tools

// Package sandboxbin only names the agent-sandbox controller, so that go
// mod tidy keeps what it needs.
package sandboxbin

import _ "sigs.k8s.io/agent-sandbox/cmd/agent-sandbox-controller"
