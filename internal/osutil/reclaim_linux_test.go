package osutil

import (
	"os"
	"path/filepath"
	"testing"
)

// TestProactiveReclaimAt reads fixture sysfs trees built here, shaped as
// DAMON's sysfs interface and the damon_reclaim module's parameters.
func TestProactiveReclaimAt(t *testing.T) {
	mk := func(root, p, content string) {
		t.Helper()
		p = filepath.Join(root, p)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(content+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	kdamond := func(root, id, state, action string) {
		kd := "kernel/mm/damon/admin/kdamonds/" + id
		mk(root, kd+"/state", state)
		mk(root, kd+"/contexts/0/operations", "paddr")
		mk(root, kd+"/contexts/0/monitoring_attrs/intervals/aggr_us", "5000000")
		s := kd + "/contexts/0/schemes/0"
		mk(root, s+"/action", action)
		mk(root, s+"/access_pattern/age/min", "12")
		mk(root, s+"/quotas/bytes", "134217728")
		mk(root, s+"/quotas/reset_interval_ms", "1000")
		mk(root, s+"/watermarks/metric", "none")
	}

	none := t.TempDir()
	if got := proactiveReclaimAt(none); got != "" {
		t.Errorf("empty tree: %q", got)
	}

	on := t.TempDir()
	kdamond(on, "0", "on", "pageout")
	want := "DAMON pageout (kdamond 0) of the host's memory idle ≥ 60 s, up to 128 MiB/s"
	if got := proactiveReclaimAt(on); got != want {
		t.Errorf("pageout on:\n got %q\nwant %q", got, want)
	}

	off := t.TempDir()
	kdamond(off, "0", "off", "pageout")
	kdamond(off, "1", "on", "stat") // monitors, reclaims nothing
	if got := proactiveReclaimAt(off); got != "" {
		t.Errorf("off or not pageout: %q", got)
	}

	mod := t.TempDir()
	p := "module/damon_reclaim/parameters/"
	mk(mod, p+"enabled", "Y")
	mk(mod, p+"min_age", "120000000")
	mk(mod, p+"quota_sz", "134217728")
	mk(mod, p+"quota_reset_interval_ms", "2000")
	want = "damon_reclaim of the host's memory idle ≥ 120 s, up to 64 MiB/s, when free memory is within its watermarks"
	if got := proactiveReclaimAt(mod); got != want {
		t.Errorf("damon_reclaim:\n got %q\nwant %q", got, want)
	}
	mk(mod, p+"enabled", "N")
	if got := proactiveReclaimAt(mod); got != "" {
		t.Errorf("damon_reclaim disabled: %q", got)
	}
}
