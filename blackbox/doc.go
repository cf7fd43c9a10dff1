// Package blackbox holds boris's black-box tests; it has no code of its
// own. They build the real binary once (TestMain, from the module root,
// with the boris_sandboxtest tag) and drive it as its users do: with the
// official MCP Go SDK client over stdio and HTTP, with raw JSON-RPC lines,
// curl-like HTTP requests, a headless browser, and the scripted sessions of
// testdata/ whose answers are pinned in golden files (-update rewrites
// them). Some run boris in process through app.Run instead, where a test
// needs its log or many servers quickly. All share one harness,
// harness_test.go.
package blackbox
