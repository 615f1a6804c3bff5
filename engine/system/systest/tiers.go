package systest

import (
	"testing"

	"outcore/engine/metrics"
)

// CheckTierChain fails t unless every input row of e (RowBytes each) was
// served by exactly one of the tiers, looked up in order (the accounting
// of metrics.EpochStats.Lookup): the first tier is asked for every row,
// each next one for what the one before missed, the last (the device)
// less the rows another batch's read in flight served, and the last
// serves every row that reaches it.
func CheckTierChain(t *testing.T, e metrics.EpochRecord, order ...string) {
	t.Helper()
	want := e.BytesNeeded / RowBytes
	for i, name := range order {
		tc := e.Tiers[name]
		if i == len(order)-1 {
			want -= e.RowsSharedInFlight
			if tc.Hits != tc.Lookups {
				t.Fatalf("tier %s: %d hits of %d lookups; tiers %+v", name, tc.Hits, tc.Lookups, e.Tiers)
			}
		}
		if tc.Lookups != want {
			t.Fatalf("tier %s: %d lookups, want %d; tiers %+v, %d shared, %d bytes needed", name, tc.Lookups, want, e.Tiers, e.RowsSharedInFlight, e.BytesNeeded)
		}
		want = tc.Lookups - tc.Hits
	}
}
