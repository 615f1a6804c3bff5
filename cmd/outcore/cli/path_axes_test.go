package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"outcore/store"
)

// TestExpCreateOptionAxis: a grid whose axes vary a variant option
// ("options.window": [0, 4, 8]) and a run setting (device_mem) makes one
// run per value, each configured with its value; a bad path or value is
// refused naming the axis and the value (issue 34 item 4).
func TestExpCreateOptionAxis(t *testing.T) {
	dir := t.TempDir()
	if code, _, stderr := runCLI("data", "gen", "--preset", "tiny", "--quiet", "--data-dir", dir); code != 0 {
		t.Fatalf("data gen: %s", stderr)
	}
	grid := filepath.Join(dir, "grid.json")
	write := func(s string) {
		if err := os.WriteFile(grid, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(`{"dataset":"tiny","system":"gids","epochs":1,"axes":{"options.window":[0,4,8]}}`)
	if code, _, stderr := runCLI("exp", "create", "--file", grid, "--data-dir", dir); code != 0 {
		t.Fatalf("create: exit %d: %s", code, stderr)
	}
	write(`{"dataset":"tiny","system":"pyg+","epochs":1,"axes":{"device_mem":["1GiB","2GiB"]}}`)
	if code, _, stderr := runCLI("exp", "create", "--file", grid, "--data-dir", dir); code != 0 {
		t.Fatalf("create device_mem axis: exit %d: %s", code, stderr)
	}
	ctx := context.Background()
	st, err := store.OpenDataDir(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	runs, err := st.Runs(ctx, store.RunFilter{})
	st.Close()
	if err != nil || len(runs) != 5 {
		t.Fatalf("runs: %d, %v; want 3 + 2", len(runs), err)
	}
	var windows, mems []string
	for _, r := range runs {
		var cfg struct {
			Options   map[string]string `json:"options"`
			DeviceMem string            `json:"device_mem"`
		}
		if err := json.Unmarshal(r.Config, &cfg); err != nil {
			t.Fatal(err)
		}
		if r.ExperimentID == runs[0].ExperimentID {
			windows = append(windows, cfg.Options["window"])
		} else {
			mems = append(mems, cfg.DeviceMem)
		}
	}
	slices.Sort(windows)
	if !slices.Equal(windows, []string{"0", "4", "8"}) || !slices.Equal(mems, []string{"1GiB", "2GiB"}) {
		t.Errorf("windows %v, device_mem %v", windows, mems)
	}

	for _, c := range []struct{ grid, want string }{
		{`{"dataset":"tiny","system":"gids","axes":{"options.windw":[0,4]}}`, `axes: "options.windw": gids has no option "windw"`},
		{`{"dataset":"tiny","axes":{"system":["gids","pyg+"],"options.window":[0,4]}}`, `axes: "options.window": pyg+ has no option "window"`},
		{`{"dataset":"tiny","system":"gids","axes":{"options.window":[0,-4]}}`, `axes: "options.window": -4 is out of range`},
		{`{"dataset":"tiny","system":"gids","axes":{"device_mem":["1GiB","lots"]}}`, `axes: "device_mem": "lots"`},
		{`{"dataset":"tiny","system":"gids","axes":{"windows":[0,4]}}`, `axes: "windows" is not an axis nor a setting of a run`},
	} {
		write(c.grid)
		code, _, stderr := runCLI("exp", "create", "--file", grid, "--data-dir", dir)
		if code != 2 || !strings.Contains(stderr, c.want) {
			t.Errorf("%s: exit %d, stderr %q; want exit 2 saying %q", c.grid, code, stderr, c.want)
		}
	}
}
