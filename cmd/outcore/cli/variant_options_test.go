package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestExpCreateRefusesBadVariantOptions: a variant option out of its
// declared range, or free text where the variant has a syntax of its own,
// fails when the experiment is created (issue 22: samplers "-5" and
// io_threads 1e8 were accepted and failed only at run time), naming the
// option.
func TestExpCreateRefusesBadVariantOptions(t *testing.T) {
	dir := t.TempDir()
	if code, _, stderr := runCLI("data", "gen", "--preset", "tiny", "--quiet", "--data-dir", dir); code != 0 {
		t.Fatalf("data gen: %s", stderr)
	}
	grid := filepath.Join(dir, "grid.json")
	for _, c := range []struct{ grid, want string }{
		{`{"dataset":"tiny","system":"pyg+","options":{"samplers":"-5"}}`, `options.samplers: -5 is out of range, want 1..4096`},
		{`{"dataset":"tiny","system":"ginex","options":{"io_threads":"100000000"}}`, `options.io_threads: 100000000 is out of range`},
		{`{"dataset":"tiny","system":"pyg+","options":{"io_threads":"1e8"}}`, `options.io_threads: "1e8" is not an integer`},
		{`{"dataset":"tiny","system":"diskgnn","options":{"disk_budget":"as much as you like"}}`, `options.disk_budget: "as much as you like": want unlimited`},
		{`{"dataset":"tiny","system":"gids","options":{"peak_percent":"1.5"}}`, `options.peak_percent: 1.5 is out of range`},
		{`{"dataset":"tiny","axes":{"system":["gnndrive:read_block=3000"]}}`, `options.read_block: 3000 is out of range, want a power of two`},
	} {
		if err := os.WriteFile(grid, []byte(c.grid), 0o644); err != nil {
			t.Fatal(err)
		}
		code, _, stderr := runCLI("exp", "create", "--file", grid, "--data-dir", dir)
		if code != 2 || !strings.Contains(stderr, c.want) {
			t.Errorf("%s: exit %d, stderr %q; want exit 2 saying %q", c.grid, code, firstLine(stderr), c.want)
		}
	}
	if err := os.WriteFile(grid, []byte(`{"dataset":"tiny","system":"pyg+","options":{"samplers":"2"}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := runCLI("exp", "create", "--file", grid, "--data-dir", dir); code != 0 {
		t.Errorf("samplers 2: exit %d: %s", code, stderr)
	}
}
