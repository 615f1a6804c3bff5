package lint

import (
	"strings"
	"testing"
)

// TestLayers: the module (tests included) keeps the layer rules.
func TestLayers(t *testing.T) {
	pkgs := goList(t, "-test", "./...")
	if len(pkgs) < 20 {
		t.Fatalf("go list found %d packages", len(pkgs))
	}
	for _, v := range LayerViolations(pkgs) {
		t.Error(v)
	}
}

// TestLayerViolations checks the rules themselves on made-up packages.
func TestLayerViolations(t *testing.T) {
	pkgs := []Package{
		// allowed
		{ImportPath: "outcore/internal/osutil", Imports: []string{"unsafe", "golang.org/x/sys/unix", "syscall"}},
		{ImportPath: "outcore/engine/storage [outcore/engine/storage.test]", Imports: []string{"unsafe"}},
		{ImportPath: "outcore/engine/system/ginex", Imports: []string{"outcore/engine/system/kit", "outcore/engine/train", "outcore/engine/cache"}},
		{ImportPath: "outcore/engine/system/all", Imports: []string{"outcore/engine/system/ginex", "outcore/engine/system/gids"}},
		{ImportPath: "outcore/engine/system/ginex_test", Imports: []string{"outcore/engine/system/systest", "outcore/engine/system/ginex"}},
		{ImportPath: "outcore/engine/train", Imports: []string{"outcore/engine/metrics"}},
		// broken
		{ImportPath: "outcore/engine/system/diskgnn", Imports: []string{"unsafe", "golang.org/x/sys/unix"}},
		{ImportPath: "outcore/engine/system/gids_test", Imports: []string{"syscall"}},
		{ImportPath: "outcore/engine/system/helios", Imports: []string{"outcore/engine/system/gids"}},
		{ImportPath: "outcore/engine/system/ginex/sub", Imports: []string{"outcore/engine/system/gnndrive/x"}},
		{ImportPath: "outcore/engine/cache", Imports: []string{"outcore/engine/train"}},
		{ImportPath: "outcore/engine/metrics [outcore/engine/metrics.test]", Imports: []string{"outcore/engine/system/kit"}},
		{ImportPath: "outcore/report", Imports: []string{"unsafe"}},
	}
	got := LayerViolations(pkgs)
	want := []string{
		"outcore/engine/system/diskgnn imports unsafe",
		"outcore/engine/system/diskgnn imports golang.org/x/sys/unix",
		"outcore/engine/system/gids imports syscall",
		"outcore/engine/system/helios imports outcore/engine/system/gids",
		"outcore/engine/system/ginex/sub imports outcore/engine/system/gnndrive",
		"outcore/engine/cache imports outcore/engine/train",
		"outcore/engine/metrics imports outcore/engine/system/kit",
		"outcore/report imports unsafe",
	}
	if len(got) != len(want) {
		t.Fatalf("got %d violations, want %d:\n%s", len(got), len(want), strings.Join(got, "\n"))
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]+" (") {
			t.Errorf("violation %d = %q, want %q…", i, got[i], want[i])
		}
	}
}
