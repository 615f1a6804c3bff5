package grid

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// gridtest is an executor registered for the grid's tests (as
// experiments/executors.Register registers a real one): its options
// block takes a "width" of at least 0 and nothing else.
func init() {
	RegisterExecutor("gridtest", func(block json.RawMessage) error {
		var o struct {
			Width int `json:"width"`
		}
		dec := json.NewDecoder(bytes.NewReader(block))
		dec.DisallowUnknownFields()
		var ps ProblemList
		if err := dec.Decode(&o); err != nil {
			return ps.Add("gridtest", "gridtest: %v", err).Err()
		}
		if o.Width < 0 {
			ps.Add("gridtest.width", "gridtest.width: %d is below 0", o.Width)
		}
		return ps.Err()
	})
}

// TestExecutorKeys: the grid checks only that an executor is registered;
// a key named after one is that executor's options block, handed to its
// check (its problems kept, naming the field) and kept opaque, as given;
// other keys stay configuration.
func TestExecutorKeys(t *testing.T) {
	g, err := ParseGrid([]byte(`{"dataset":"tiny","system":"pyg+","executor":"gridtest","gridtest":{ "width": 3 }}`))
	if err != nil {
		t.Fatal(err)
	}
	if g.Executor != "gridtest" || string(g.ExecutorOptions["gridtest"]) != `{"width":3}` || g.Base["gridtest"] != nil {
		t.Fatalf("executor %q, blocks %s, base %v", g.Executor, g.ExecutorOptions, g.Base)
	}
	back, err := ParseGrid(g.JSON())
	if err != nil || string(back.ExecutorOptions["gridtest"]) != `{"width":3}` || back.Executor != "gridtest" {
		t.Fatalf("JSON %s reads back as %+v, %v", g.JSON(), back, err)
	}
	for _, c := range []struct{ grid, field, want string }{
		{`"gridtest":{"width":-2}`, "gridtest.width", "gridtest.width: -2 is below 0"},
		{`"gridtest":{"height":1}`, "gridtest", `unknown field "height"`},
		{`"executor":"pbs"`, "executor", `executor: unknown executor "pbs" (executors: local, gridtest)`},
		{`"executor":7`, "executor", `executor: want "local" or "gridtest"`},
	} {
		_, err := ParseGrid([]byte(`{"dataset":"tiny","system":"pyg+",` + c.grid + `}`))
		ps := ProblemsOf(err)
		if len(ps) != 1 || ps[0].Field != c.field || !strings.Contains(ps[0].Message, c.want) {
			t.Errorf("%s: problems %+v, want one of field %q saying %q", c.grid, ps, c.field, c.want)
		}
	}
	if err := ValidExecutor("local"); err != nil {
		t.Errorf("local: %v", err)
	}
}
