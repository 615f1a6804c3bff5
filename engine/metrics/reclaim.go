package metrics

import (
	"slices"
	"sort"
	"strings"
	"sync"

	"outcore/internal/osutil"
)

// Proactive reclaim over a window (DESIGN §5, "Proactive reclaim"): a
// host can switch DAMON's pageout on or off while a run runs (one did so
// in the middle of an epoch), so the run's start is not enough. Every
// resource sample (once a second) and every pressure window's start and
// end look at the host's reclaim and note what they saw; a window then
// reports every reclaim seen from its start to its end.

// reclaimLog is what this process's observations saw: for each reclaim
// description, the number of the last observation that saw it.
type reclaimLog struct {
	mu   sync.Mutex
	seq  uint64
	last map[string]uint64
	read func() string // osutil.ProactiveReclaim; a fixture in tests
}

var reclaimSeen = &reclaimLog{last: map[string]uint64{}, read: osutil.ProactiveReclaim}

// observe reads the host's proactive reclaim now, notes it and returns
// the observation's number and what it saw.
func (l *reclaimLog) observe() (uint64, string) {
	d := l.read()
	l.mu.Lock()
	defer l.mu.Unlock()
	l.seq++
	if d != "" {
		l.last[d] = l.seq
	}
	return l.seq, d
}

// since is every reclaim seen by observation seq or a later one
// (MergeReclaim of them; "" when none was).
func (l *reclaimLog) since(seq uint64) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var seen []string
	for d, n := range l.last {
		if n >= seq {
			seen = append(seen, d)
		}
	}
	return MergeReclaim(seen...)
}

// reclaimSep separates the reclaimers of one description
// (osutil.ProactiveReclaim joins a host's with it).
const reclaimSep = "; "

// MergeReclaim is the reclaimers named in any of descs, each once, in a
// stable order, joined as osutil.ProactiveReclaim joins them ("" when
// none): a window that saw "a" and then "a; b" saw a and b.
func MergeReclaim(descs ...string) string {
	var out []string
	for _, d := range descs {
		if d == "" {
			continue
		}
		for _, r := range strings.Split(d, reclaimSep) {
			if !slices.Contains(out, r) {
				out = append(out, r)
			}
		}
	}
	sort.Strings(out)
	return strings.Join(out, reclaimSep)
}
