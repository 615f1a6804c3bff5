package metrics

import (
	"strings"
	"testing"
	"time"
)

// A host that switches its proactive reclaim on and off again inside a
// window: the window's end sees it off, but a sample in between saw it
// on, so the window reports it and counts as busy; a window that starts
// after it went off reports none.
func TestReclaimSeenInsideAWindow(t *testing.T) {
	const damon = "DAMON pageout (kdamond 0) of the host's memory idle ≥ 60 s, up to 128 MiB/s"
	state := ""
	saved := reclaimSeen
	reclaimSeen = &reclaimLog{last: map[string]uint64{}, read: func() string { return state }}
	t.Cleanup(func() { reclaimSeen = saved })

	epoch := NewPressureMeter()
	state = damon
	s := NewResourceSampler(time.Now()).Sample() // a sample while it is on
	if s.Host == nil || s.Host.Reclaim != damon {
		t.Fatalf("the sample while reclaim was on: %+v", s.Host)
	}
	state = ""
	p := epoch.Stop()
	if p.Reclaim != damon {
		t.Fatalf("epoch reclaim %q, want the one seen inside it", p.Reclaim)
	}
	if why := BusyReasons(p); len(why) == 0 || !strings.Contains(why[0], "proactive reclaim was on ("+damon+")") {
		t.Errorf("busy reasons %v", why)
	}
	if s := NewResourceSampler(time.Now()).Sample(); s.Host != nil && s.Host.Reclaim != "" {
		t.Errorf("a sample with reclaim off: %q", s.Host.Reclaim)
	}

	later := NewPressureMeter()
	if p := later.Stop(); p.Reclaim != "" || len(BusyReasons(p)) != 0 {
		t.Errorf("a window after reclaim went off: %q, busy %v", p.Reclaim, BusyReasons(p))
	}

	// two reclaimers seen in one window are both reported, in a stable order
	w := NewPressureMeter()
	state = "b"
	reclaimSeen.observe()
	state = "a"
	if p := w.Stop(); p.Reclaim != "a; b" {
		t.Errorf("two reclaimers: %q", p.Reclaim)
	}
}
