package store_test

import (
	"context"
	"testing"

	"outcore/engine/metrics"
	"outcore/store"
	"outcore/store/storetest"
)

// Host pressure comes back as stored: per second and per epoch, with an
// unavailable PSI kept unavailable (nil), not 0.
func TestHostPressureRoundTrip(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(ctx, t.TempDir()+"/db.sqlite")
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	_, runs, err := storetest.Experiment(ctx, st, "pressure", []storetest.Run{{System: "pyg+", MemLimit: 64 << 20, Epochs: 2, EpochS: 1, Outcome: store.StatusDone}})
	if err != nil {
		t.Fatal(err)
	}
	check := func(what string, p *metrics.HostPressure) {
		t.Helper()
		want := storetest.QuietHost()
		if p == nil || p.Load1 != want.Load1 || p.OthersCPUPct != want.OthersCPUPct || p.PSICPUPct == nil || *p.PSICPUPct != *want.PSICPUPct ||
			p.PSIIOPct == nil || *p.PSIIOPct != *want.PSIIOPct || p.PSIMemoryPct != nil {
			t.Errorf("%s: host pressure %+v, want %+v", what, p, want)
		}
	}
	eps, err := st.Epochs(ctx, runs[0].ID)
	if err != nil || len(eps) != 2 {
		t.Fatalf("epochs %d %v", len(eps), err)
	}
	check("epoch", eps[0].HostPressure)
	smp, err := st.Samples(ctx, runs[0].ID, 0, 0, 0)
	if err != nil || len(smp) == 0 {
		t.Fatalf("samples %d %v", len(smp), err)
	}
	check("sample", smp[0].Host)
	series, err := st.SampleSeries(ctx, runs[0].ID, 0, 0, 10)
	if err != nil || len(series) == 0 {
		t.Fatalf("series %d %v", len(series), err)
	}
	check("sample series", series[0].Host)
}
