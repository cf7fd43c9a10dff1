package e2e

import (
	"net/http"
	"slices"
	"strings"
	"testing"
)

// TestImagesListenOnEveryInterfaceWithAToken: both images set
// BORIS_HOST=0.0.0.0 (a container is reached through its published port),
// so `docker run` without a token prints a generated one and /mcp wants
// it; BORIS_NO_AUTH=true serves without one and says so.
func TestImagesListenOnEveryInterfaceWithAToken(t *testing.T) {
	requireImages(t)
	for _, image := range []string{imageLatest, imageDistroless} {
		t.Run(image, func(t *testing.T) {
			t.Parallel()
			srv := startBoris(t, spec{image: image})
			log := srv.logs(t)
			if !strings.Contains(log, "msg=listening addr=0.0.0.0:8080") || !strings.Contains(log, `reachable_from="every network interface"`) {
				t.Fatalf("start-up log:\n%s", log)
			}
			if srv.token == "" || strings.Count(log, srv.token) != 1 {
				t.Fatalf("the generated token is not shown exactly once:\n%s", log)
			}
			req, _ := http.NewRequest(http.MethodPost, srv.url+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
			req.Header.Set("Content-Type", "application/json")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusUnauthorized {
				t.Fatalf("/mcp without the token: %d", resp.StatusCode)
			}
			if names := toolNames(t, srv.connect(t)); !slices.Contains(names, "view") {
				t.Fatalf("tools with the token: %v", names)
			}

			open := startBoris(t, spec{image: image, env: map[string]string{"BORIS_NO_AUTH": "true"}})
			log = open.logs(t)
			if strings.Contains(log, "generated bearer token") || !strings.Contains(log, "level=WARN msg=\"no authentication (--no-auth)") {
				t.Fatalf("BORIS_NO_AUTH log:\n%s", log)
			}
			if names := toolNames(t, connect(t, open.url, "")); !slices.Contains(names, "view") {
				t.Fatalf("tools without a token: %v", names)
			}
		})
	}
}
