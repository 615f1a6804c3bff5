package experiments

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"outcore/engine/dataset"
	"outcore/engine/train"
	"outcore/engine/vocab"
	"outcore/experiments/external"
	"outcore/experiments/grid"
	"outcore/store"
)

func TestParseSystemEntry(t *testing.T) {
	for _, c := range []struct {
		in   string
		want grid.SystemEntry
		bad  string
	}{
		{in: "gnndrive", want: grid.SystemEntry{Variant: "gnndrive"}},
		{in: "gnndrive:feature_buffer=device", want: grid.SystemEntry{Variant: "gnndrive", Options: map[string]string{"feature_buffer": "device"}}},
		{in: "ginex: read_block=512 , superbatch=10", want: grid.SystemEntry{Variant: "ginex", Options: map[string]string{"read_block": "512", "superbatch": "10"}}},
		{in: ":a=b", bad: "no variant name"},
		{in: "gnndrive:", bad: "not KEY=VALUE"},
		{in: "gnndrive:a", bad: "not KEY=VALUE"},
		{in: "gnndrive:a=1,a=2", bad: "given twice"},
		{in: "external:tiny-sgd", want: grid.SystemEntry{Variant: "external:tiny-sgd"}},
		{in: "external:tiny-sgd:lr=0.1, epochs=3", want: grid.SystemEntry{Variant: "external:tiny-sgd", Options: map[string]string{"lr": "0.1", "epochs": "3"}}},
		{in: "external:", bad: "no external system name"},
		{in: "external::lr=1", bad: "no external system name"},
		{in: "external:tiny-sgd:lr", bad: "not KEY=VALUE"},
	} {
		got, err := grid.ParseSystemEntry(c.in)
		if c.bad != "" {
			if err == nil || !strings.Contains(err.Error(), c.bad) {
				t.Errorf("%q: err %v, want %q", c.in, err, c.bad)
			}
			continue
		}
		if err != nil || got.Variant != c.want.Variant || len(got.Options) != len(c.want.Options) {
			t.Errorf("%q: got %+v, %v; want %+v", c.in, got, err, c.want)
			continue
		}
		for k, v := range c.want.Options {
			if got.Options[k] != v {
				t.Errorf("%q: option %s = %q, want %q", c.in, k, got.Options[k], v)
			}
		}
	}
}

// TestGridVariantEntries: a system-axis entry with options of its own
// runs its variant with those options over the grid's, keeps the entry as
// the run's system, and an entry naming an option its variant lacks is a
// problem naming it.
func TestGridVariantEntries(t *testing.T) {
	h := newHarness(t, nil)
	e := h.create(`{"dataset":"tiny","epochs":1,"options":{"epoch_ms":"5"},
		"axes":{"system":["fake","fake:report_ms=7,epoch_ms=9"]}}`)
	runs, err := h.st.Runs(context.Background(), store.RunFilter{ExperimentID: e.ID})
	if err != nil || len(runs) != 2 {
		t.Fatalf("runs %v, %v", runs, err)
	}
	for _, r := range runs {
		var cfg train.Config
		if err := json.Unmarshal(r.Config, &cfg); err != nil {
			t.Fatal(err)
		}
		switch r.System {
		case "fake":
			if cfg.System != "fake" || cfg.Options["epoch_ms"] != "5" || cfg.Options["report_ms"] != "" {
				t.Errorf("plain entry: config %s %v", cfg.System, cfg.Options)
			}
		case "fake:report_ms=7,epoch_ms=9":
			if cfg.System != "fake" || cfg.Options["epoch_ms"] != "9" || cfg.Options["report_ms"] != "7" {
				t.Errorf("entry with options: config %s %v", cfg.System, cfg.Options)
			}
		default:
			t.Errorf("run system %q", r.System)
		}
	}
	_, err = h.m.Create(context.Background(), []byte(`{"dataset":"tiny","axes":{"system":["fake","fake:nosuch=1","fake:bad"]}}`))
	if err == nil || !errors.Is(err, grid.ErrInvalid) || !strings.Contains(err.Error(), `fake has no option "nosuch"`) || !strings.Contains(err.Error(), "not KEY=VALUE") {
		t.Fatalf("bad entries: %v", err)
	}
}

// TestExternalNoFloor: an external system has no memory floor: a cell of
// one below every built-in's floor is planned, not refused, while the
// built-in's cell beside it is; its run keeps the entry's options and
// "external:NAME" as its configuration's system.
func TestExternalNoFloor(t *testing.T) {
	reg, err := external.Parse([]byte(`{"systems":[{"name":"prog","command":["/bin/true"],
		"options":{"epochs":{"type":"int","min":1,"max":9,"default":1}}}]}`), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	dir := newDataDir(t)
	g, err := grid.ParseGrid([]byte(`{"dataset":"tiny","epochs":1,"skip_infeasible":true,
		"axes":{"system":["reference","external:prog:epochs=3"],"mem_limit":["16MiB"]}}`))
	if err != nil {
		t.Fatal(err)
	}
	w := grid.World{DataDir: dir, External: reg, MinMem: func(vocab.Config, dataset.Meta) int64 { return 1 << 40 }}
	specs, _, ps, refused := grid.Plan(g, w, true)
	if len(ps) > 0 {
		t.Fatalf("problems: %v", ps)
	}
	if len(specs) != 1 || specs[0].System != "external:prog:epochs=3" || len(refused) != 1 || refused[0].System != "reference" {
		t.Fatalf("specs %+v, refused %+v: want the external cell planned and reference's refused", specs, refused)
	}
	cfg := specs[0].Config
	if cfg.System != "external:prog" || cfg.Options["epochs"] != "3" || cfg.MemLimitBytes != 16<<20 {
		t.Errorf("config: system %q, options %v, limit %d", cfg.System, cfg.Options, cfg.MemLimitBytes)
	}
	// Without the registry the same grid is refused, naming the system.
	w.External = nil
	if _, _, ps, _ := grid.Plan(g, w, true); len(ps) == 0 || !strings.Contains(ps[0].Message, `"prog" is not a registered external system`) {
		t.Errorf("without a registry: %v", ps)
	}
}
