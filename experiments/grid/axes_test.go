package grid

import (
	"strings"
	"testing"

	"outcore/engine/vocab"
)

func init() {
	// a fake variant with an option, for the option axes
	vocab.RegisterVariant(vocab.Variant{Name: "fakeopt",
		Options: []vocab.Option{{Key: "window", Type: vocab.OptInt, Default: "8"}, {Key: "mode", Type: vocab.OptEnum, Values: []string{"a", "b"}, Default: "a"}}})
}

// TestConfigPathAxes: an axis over a run setting or a variant option
// expands into one cell per value, each carried into its run's
// configuration.
func TestConfigPathAxes(t *testing.T) {
	g, err := ParseGrid([]byte(`{"dataset":"tiny","system":"fakeopt","axes":{"options.window":[0,4,8],"device_mem":["1GiB","2GiB"]}}`))
	if err != nil {
		t.Fatal(err)
	}
	if n := g.Count(); n != 6 {
		t.Fatalf("count %d, want 6", n)
	}
	var got []string
	for _, c := range g.Cells() {
		cfg, err := g.CellConfig(c)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, cfg.Options["window"]+"/"+cfg.DeviceMem)
		if cj := string(c.JSON()); !strings.Contains(cj, `"options.window":`) || !strings.Contains(cj, `"device_mem":`) {
			t.Errorf("cell JSON %s lacks its axes", cj)
		}
	}
	if want := "0/1GiB 4/1GiB 8/1GiB 0/2GiB 4/2GiB 8/2GiB"; strings.Join(got, " ") != want {
		t.Errorf("cells %v, want %s", got, want)
	}
	// path axes expand by path (device_mem outside options.window)
	// the grid's JSON reads back into the same axes
	g2, err := ParseGrid(g.JSON())
	if err != nil || g2.Count() != 6 || len(g2.Axes.Extra) != 2 {
		t.Fatalf("round trip: %v %+v", err, g2.Axes)
	}
}

func TestConfigPathAxisProblems(t *testing.T) {
	for _, c := range []struct{ grid, want string }{
		{`{"dataset":"tiny","axes":{"colour":[1,2]}}`, `axes: "colour" is not an axis nor a setting of a run`},
		{`{"dataset":"tiny","axes":{"eval_every":[1,"often"]}}`, `axes: "eval_every": "often" is not a value of the right type`},
		{`{"dataset":"tiny","axes":{"eval_every":[1,5000]}}`, `axes: "eval_every": 5000 is not a whole number from 0 to 1000`},
		{`{"dataset":"tiny","axes":{"device_mem":["1GiB","lots"]}}`, `axes: "device_mem": "lots"`},
		{`{"dataset":"tiny","axes":{"device_mem":[]}}`, `axes: "device_mem": want a non-empty list of values`},
		{`{"dataset":"tiny","axes":{"device_mem":["1GiB","1GiB"]}}`, `axes: "device_mem": "1GiB" is listed twice`},
		{`{"dataset":"tiny","eval_every":2,"axes":{"eval_every":[1,2]}}`, `axes: "eval_every": given both at the top level and as an axis`},
		{`{"dataset":"tiny","options":{"window":"2"},"axes":{"options.window":[1,2]}}`, `axes: "options.window": given both in "options" and as an axis`},
		{`{"dataset":"tiny","axes":{"options.window":[[1]]}}`, `axes: "options.window": [1] is not an option value`},
		{`{"dataset":"tiny","axes":{"dataset":["a","b"]}}`, `axes: "dataset" is not an axis`},
	} {
		_, err := ParseGrid([]byte(c.grid))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v; want it to say %q", c.grid, err, c.want)
		}
	}
}

// TestOptionAxisPlan: an option axis must be an option of every variant
// of the grid, and each value one the option takes.
func TestOptionAxisPlan(t *testing.T) {
	for _, c := range []struct{ grid, want string }{
		{`{"dataset":"tiny","axes":{"system":["fakeopt","fake"],"options.window":[0,4]}}`, `axes: "options.window": fake has no option "window"`},
		{`{"dataset":"tiny","system":"fakeopt","axes":{"options.window":[0,"wide"]}}`, `axes: "options.window": "wide" is not an integer`},
		{`{"dataset":"tiny","system":"fakeopt","axes":{"options.mode":["a","c"]}}`, `axes: "options.mode": "c", want one of a, b`},
		{`{"dataset":"tiny","axes":{"system":["fakeopt:window=2"],"options.window":[0,4]}}`, `axes: "options.window": the variant entry "fakeopt:window=2" sets it too`},
	} {
		g, err := ParseGrid([]byte(c.grid))
		if err != nil {
			t.Fatalf("%s: %v", c.grid, err)
		}
		ps := OptionAxisProblems(g)
		var msgs []string
		for _, p := range ps {
			msgs = append(msgs, p.Message)
		}
		if !strings.Contains(strings.Join(msgs, "; "), c.want) {
			t.Errorf("%s: problems %q; want one saying %q", c.grid, msgs, c.want)
		}
	}
}

// TestTestbedKeyAndAxis: a grid names a testbed as a key or varies it as
// an axis (DESIGN §13); epochs 0 (the mapping's) is taken only under a
// paper's testbed; a wrong type names the type a testbed takes.
func TestTestbedKeyAndAxis(t *testing.T) {
	g, err := ParseGrid([]byte(`{"dataset":"tiny","testbed":"gids-vldb24","epochs":0}`))
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := g.CellConfig(g.Cells()[0])
	if err != nil || cfg.Testbed != "gids-vldb24" || cfg.Epochs != 0 {
		t.Fatalf("cell config %+v, %v: want testbed gids-vldb24, epochs 0", cfg, err)
	}
	g, err = ParseGrid([]byte(`{"dataset":"tiny","epochs":2,"axes":{"testbed":["this-host","ginex-vldb22"]}}`))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range g.Cells() {
		cfg, err := g.CellConfig(c)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, cfg.Testbed)
	}
	if strings.Join(got, " ") != "this-host ginex-vldb22" {
		t.Errorf("testbed axis cells %v", got)
	}
	for _, c := range []struct{ grid, want string }{
		{`{"dataset":"tiny","epochs":0}`, `epochs: 0 asks for a paper testbed's epochs, but the run's testbed is "this-host"`},
		{`{"dataset":"tiny","testbed":"this-host","epochs":0}`, `epochs: 0 asks for a paper testbed's epochs`},
		{`{"dataset":"tiny","testbed":7}`, `testbed: 7 is not a value of the right type (want a string)`},
		{`{"dataset":"tiny","step_dilation":"x"}`, `(want a number)`},
		{`{"dataset":"tiny","testbed":"mars-1"}`, `unknown testbed "mars-1"`},
		{`{"dataset":"tiny","axes":{"testbed":["gids-vldb24","mars-1"]}}`, `mars-1`},
	} {
		_, err := ParseGrid([]byte(c.grid))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.grid, err, c.want)
		}
	}
}
