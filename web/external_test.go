package web

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"outcore/experiments"
	"outcore/experiments/external"
	"outcore/store"
)

// externalEnv is a test env whose queue has the worked example,
// examples/external/tiny_sgd.py, registered as tiny-sgd.
func externalEnv(t *testing.T) *testEnv {
	t.Helper()
	prog, err := filepath.Abs("../examples/external/tiny_sgd.py")
	if err != nil {
		t.Fatal(err)
	}
	reg := map[string]any{"systems": []any{map[string]any{
		"name": "tiny-sgd", "help": "the worked example", "command": []string{prog},
		"options": map[string]any{
			"epochs":      map[string]any{"type": "int", "min": 1, "max": 100, "default": 2},
			"train_limit": map[string]any{"type": "int", "min": 0, "max": 100000000, "default": 1200},
		},
	}}}
	b, _ := json.Marshal(reg)
	p := filepath.Join(t.TempDir(), "systems.json")
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	r, err := external.Load(p)
	if err != nil {
		t.Fatal(err)
	}
	return newEnvWith(t, t.TempDir(), func(o *experiments.Options) { o.External = r })
}

// TestExternalSystemAPIAndForm: the API and the form accept a registered
// external system by name and refuse an unregistered one, an undeclared
// option (a command, an environment) and a grid key giving a command,
// naming what is wrong; the form offers the registered system with its
// declared options; an API-created run of it runs to done on the
// dashboard's queue, its epochs stored.
func TestExternalSystemAPIAndForm(t *testing.T) {
	e := externalEnv(t)
	e.login()
	for _, c := range []struct{ grid, want string }{
		{`{"dataset":"tiny","axes":{"system":["external:nope"]}}`, `"nope" is not a registered external system`},
		{`{"dataset":"tiny","axes":{"system":["external:tiny-sgd:command=/bin/sh"]}}`, `no option \"command\"`},
		{`{"dataset":"tiny","axes":{"system":["external:tiny-sgd:env=LD_PRELOAD"]}}`, `no option \"env\"`},
		{`{"dataset":"tiny","axes":{"system":["external:tiny-sgd:lr=0.1"]}}`, `no option \"lr\"`},
		{`{"dataset":"tiny","command":["/bin/sh"],"axes":{"system":["external:tiny-sgd"]}}`, `command`},
	} {
		code, m := e.api("POST", "/api/experiments", c.grid)
		if code != http.StatusUnprocessableEntity || !strings.Contains(fmt.Sprint(m), strings.ReplaceAll(c.want, `\"`, `"`)) {
			t.Errorf("%s: %d %v, want 422 naming %s", c.grid, code, m, c.want)
		}
	}
	if n := experimentCount(t, e); n != 0 {
		t.Fatalf("refused grids created %d experiments", n)
	}

	// The form offers it beside the variants, its options described.
	code, page := e.get("/experiments/new")
	if code != 200 || !strings.Contains(page, `value="external:tiny-sgd"`) || !strings.Contains(page, "train_limit (int, default 1200)") {
		t.Errorf("form: %d, external system not offered with its options", code)
	}
	v := validForm()
	v["variants"] = []string{"pyg+", "external:nope"}
	if resp := e.post("/experiments", v); resp.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(body(t, resp), "is not a registered external system") {
		t.Errorf("form with an unregistered external system: %d", resp.StatusCode)
	}

	if _, err := os.Stat("/usr/bin/python3"); err != nil {
		t.Skip("no /usr/bin/python3 for the example")
	}
	code, m := e.api("POST", "/api/experiments", `{"name":"byo","dataset":"tiny","axes":{"system":["external:tiny-sgd:epochs=2"],"mem_limit":["256MiB"]}}`)
	if code != http.StatusCreated {
		t.Fatalf("create: %d %v", code, m)
	}
	id := int64(m["id"].(float64))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- e.mgr.Run(ctx) }()
	defer func() { cancel(); <-done }()
	var run store.Run
	waitFor(t, 60*time.Second, "the external run to finish", func() bool {
		runs := e.runs(id)
		if len(runs) == 1 && store.Finished(runs[0].Status) {
			run = runs[0]
			return true
		}
		return false
	})
	if run.Status != store.StatusDone || run.System != "external:tiny-sgd:epochs=2" {
		t.Fatalf("run %s %s: %s", run.System, run.Status, run.Error)
	}
	if eps, err := e.st.Epochs(context.Background(), run.ID); err != nil || len(eps) != 2 {
		t.Errorf("%d epochs stored (%v), want 2", len(eps), err)
	}
}
