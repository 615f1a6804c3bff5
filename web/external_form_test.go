package web

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"

	"outcore/engine/vocab"
)

// TestExternalSystemFormOptions: the form has one input per declared
// option of a registered external system (its type and range as the hint,
// its default as the placeholder); a post setting them creates runs whose
// system entry and configuration's options carry the values (several
// values: one run set each); a value out of range, one of the wrong type
// and an undeclared option come back on the form (422) with the grid
// check's message, the first two next to their field; nothing is created.
func TestExternalSystemFormOptions(t *testing.T) {
	e := externalEnv(t)
	e.login()
	code, page := e.get("/experiments/new")
	for _, want := range []string{
		`name="ext.tiny-sgd.epochs"`, `id="ext-tiny-sgd-epochs"`, `placeholder="default 2"`, `int, 1 to 100`,
		`name="ext.tiny-sgd.train_limit"`, `placeholder="default 1200"`, `int, 0 to 100000000`, `id="err-ext-tiny-sgd-epochs"`,
	} {
		if code != 200 || !strings.Contains(page, want) {
			t.Errorf("form: %d, no %s", code, want)
		}
	}

	form := func(extra map[string]string) map[string][]string {
		v := validForm()
		v["variants"] = []string{"external:tiny-sgd"}
		v["repeats"] = []string{"1"}
		for k, x := range extra {
			v[k] = []string{x}
		}
		return v
	}
	for _, c := range []struct {
		name    string
		fields  map[string]string
		errID   string // the inline error's id
		message string
	}{
		{"out of range", map[string]string{"ext.tiny-sgd.epochs": "3, 500"}, "err-ext-tiny-sgd-epochs", `option &#34;epochs&#34;: 500 is outside [1, 100]`},
		{"not a number", map[string]string{"ext.tiny-sgd.train_limit": "many"}, "err-ext-tiny-sgd-train_limit", `option &#34;train_limit&#34;: &#34;many&#34; is not a number`},
		{"undeclared", map[string]string{"ext.tiny-sgd.command": "/bin/sh"}, "err-variants", `has no option &#34;command&#34;`},
		{"too many", map[string]string{"ext.tiny-sgd.epochs": seq(1, 100), "ext.tiny-sgd.train_limit": seq(0, 100)}, "err-variants", `make more than 10000 entries`},
		{"entry text", map[string]string{"ext.tiny-sgd.a=b,command": "/bin/sh"}, "err-variants", `is not an option name of external:tiny-sgd`},
	} {
		resp := e.post("/experiments", form(c.fields))
		b := body(t, resp)
		i := strings.Index(b, `id="`+c.errID+`"`)
		if resp.StatusCode != http.StatusUnprocessableEntity || i < 0 || !strings.Contains(b[i:min(len(b), i+400)], c.message) {
			t.Errorf("%s: %d; want 422 with %s at %s", c.name, resp.StatusCode, c.message, c.errID)
		}
		if c.errID != "err-variants" && !strings.Contains(b, `id="err-variants"></div>`) {
			t.Errorf("%s: the option's message is repeated on the variants", c.name)
		}
	}
	if n := experimentCount(t, e); n != 0 {
		t.Fatalf("refused forms created %d experiments", n)
	}

	// The live preview swaps the option's error in beside its field.
	pr := e.post("/experiments/preview", form(map[string]string{"ext.tiny-sgd.epochs": "0"}))
	if b := body(t, pr); pr.StatusCode != 200 || !strings.Contains(b, `id="err-ext-tiny-sgd-epochs" hx-swap-oob="true">external system &#34;tiny-sgd&#34;: option &#34;epochs&#34;: 0 is outside [1, 100]<`) {
		t.Errorf("preview: %d, no out-of-band error for the option:\n%s", pr.StatusCode, b)
	}
	pr = e.post("/experiments/preview", form(map[string]string{"ext.tiny-sgd.epochs": "2, 5"}))
	if b := body(t, pr); !strings.Contains(b, `id="preview-runs">4<`) {
		t.Errorf("preview of two epoch values at two limits: want 4 runs:\n%s", b)
	}

	// Options of a system that is not ticked are ignored.
	v := form(map[string]string{"ext.tiny-sgd.epochs": "500"})
	v["variants"] = []string{"pyg+"}
	if resp := e.post("/experiments", v); resp.StatusCode != http.StatusSeeOther {
		t.Errorf("options of an unticked system: %d, want 303", resp.StatusCode)
	}

	resp := e.post("/experiments", form(map[string]string{"ext.tiny-sgd.epochs": "3, 4", "ext.tiny-sgd.train_limit": "600"}))
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("valid options: %d %s", resp.StatusCode, body(t, resp))
	}
	var id int64
	if _, err := parseIDFromLocation(resp.Header.Get("Location"), &id); err != nil {
		t.Fatal(err)
	}
	runs := e.runs(id)
	var systems, epochs []string
	for _, r := range runs {
		full, err := e.st.Run(context.Background(), r.ID)
		if err != nil {
			t.Fatal(err)
		}
		var cfg vocab.Config
		if err := json.Unmarshal(full.Config, &cfg); err != nil {
			t.Fatal(err)
		}
		systems = append(systems, r.System)
		epochs = append(epochs, cfg.Options["epochs"])
		if cfg.System != "external:tiny-sgd" || cfg.Options["train_limit"] != "600" || len(cfg.Options) != 2 {
			t.Errorf("run %s: config system %q options %v", r.System, cfg.System, cfg.Options)
		}
	}
	slices.Sort(systems)
	slices.Sort(epochs)
	// 2 memory limits × 2 epoch values.
	if len(runs) != 4 || systems[0] != "external:tiny-sgd:epochs=3,train_limit=600" || systems[3] != "external:tiny-sgd:epochs=4,train_limit=600" ||
		!slices.Equal(epochs, []string{"3", "3", "4", "4"}) {
		t.Errorf("runs %v, epochs %v; want 4 runs with epochs 3 and 4, train_limit 600", systems, epochs)
	}
}

// parseIDFromLocation reads the id of "/experiments/ID".
func parseIDFromLocation(loc string, id *int64) (bool, error) {
	n, err := parseID(strings.TrimPrefix(loc, "/experiments/"))
	*id = n
	return true, err
}

// seq is "from, from+1, ..., to".
func seq(from, to int) string {
	var b strings.Builder
	for i := from; i <= to; i++ {
		if i > from {
			b.WriteString(", ")
		}
		b.WriteString(strconv.Itoa(i))
	}
	return b.String()
}
