package grid

import (
	"strings"
	"testing"
)

// TestRangesAtCreation: general run settings out of their range are
// refused when the grid is parsed, each naming its key and the range
// (before, "weight_decay": 1e308 and the like were accepted and failed, or
// silently misbehaved, at run time).
func TestRangesAtCreation(t *testing.T) {
	for _, c := range []struct{ setting, want string }{
		{`"weight_decay":1e308`, "weight_decay: 1e+308 is not a number from 0 to 1"},
		{`"weight_decay":-0.1`, "weight_decay: -0.1 is not a number from 0 to 1"},
		{`"lr":1e300`, "lr: 1e+300 is not a number from 0 (excluded) to 10"},
		{`"lr":0`, "lr: 0 is not a number from 0 (excluded) to 10"},
		{`"dropout":1`, "dropout: 1 is not a number from 0 to 1 (excluded)"},
		{`"eval_max_nodes":2147483648`, "eval_max_nodes: 2147483648 is not a whole number from -1 to 1073741824"},
		{`"queue_depth":5000`, "queue_depth: 5000 is not a whole number from 0 to 4096"},
		{`"epochs":0`, `epochs: 0 asks for a paper testbed's epochs, but the run's testbed is "this-host"`},
		{`"hidden":100000`, "hidden: 100000 is not a whole number from 1 to 8192"},
		{`"warmup_epochs":5000`, "warmup_epochs: 5000 is not a whole number from 0 to 999"},
		{`"batch_size":2097152`, "batch sizes: 2097152 is not a whole number from 1 to 1048576"},
		{`"fanout":[10,100000]`, "each layer's fanout is a whole number from 1 to 1000"},
		{`"mem_limit":"1e-30"`, `"1e-30" is zero`},
		{`"gridtest":{"width":-1}`, "gridtest.width: -1 is below 0"},
	} {
		_, err := ParseGrid([]byte(`{"dataset":"tiny","system":"pyg+",` + c.setting + `}`))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.setting, err, c.want)
		}
	}
	for _, ok := range []string{`"weight_decay":0.0005`, `"lr":0.01`, `"dropout":0.5`, `"eval_max_nodes":-1`, `"queue_depth":64`} {
		if _, err := ParseGrid([]byte(`{"dataset":"tiny","system":"pyg+",` + ok + `}`)); err != nil {
			t.Errorf("%s refused: %v", ok, err)
		}
	}
}

func TestMemLimitProblem(t *testing.T) {
	for _, c := range []struct {
		s    string
		fb   int64
		want string
	}{
		{"1e-30", 0, "is zero"},
		{"1000", 0, "below 1MiB"},
		{"0.0001%", 1 << 30, "below 1MiB"},
		{"-5MiB", 0, "is negative"},
		{"2GiB", 0, ""},
		{"25%", 1 << 30, ""},
		{"none", 0, ""},
		{"", 0, ""},
	} {
		got := MemLimitProblem(c.s, c.fb)
		if c.want == "" && got != "" || c.want != "" && !strings.Contains(got, c.want) {
			t.Errorf("MemLimitProblem(%q, %d) = %q, want %q", c.s, c.fb, got, c.want)
		}
	}
}
