package report

import (
	"os/exec"
	"strings"
	"testing"
)

// TestNoHTTP keeps package report free of HTTP: nothing it imports, directly
// or through other packages, is net/http, fiber, fasthttp or the dashboard.
func TestNoHTTP(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 10 {
		t.Fatalf("go list -deps listed only %v", deps)
	}
	for _, d := range deps {
		if d == "net/http" || strings.HasPrefix(d, "net/http/") ||
			strings.HasPrefix(d, "github.com/gofiber/") || strings.HasPrefix(d, "github.com/valyala/fasthttp") ||
			d == "outcore/web" || strings.HasPrefix(d, "outcore/web/") {
			t.Errorf("package report depends on %s", d)
		}
	}
}
