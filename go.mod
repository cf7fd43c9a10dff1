module github.com/boris-mcp/boris

go 1.26.8

require (
	github.com/alecthomas/kong v1.17.0 // indirect
	github.com/bmatcuk/doublestar/v4 v4.10.4 // indirect
	github.com/modelcontextprotocol/go-sdk v1.8.0 // indirect
	golang.org/x/sys v0.49.0 // indirect
)
