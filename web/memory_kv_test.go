package web

import (
	"encoding/json"
	"strings"
	"testing"

	"outcore/engine/metrics"
	"outcore/store"
)

// A finished run's page shows its memory contract side by side: host
// budget and host peak (the cgroup peak less what the device tiers and the
// model step held), device budget and tiers, the model step, and the
// allowance beside the cgroup's peak; a run without an account shows none.
func TestRunSummaryShowsMemoryByPart(t *testing.T) {
	peak := int64(400 << 20)
	r := store.Run{Status: store.StatusDone, PeakCgroupBytes: &peak,
		Summary: json.RawMessage(`{"memory":{"host_budget_bytes":268435456,"device_budget_bytes":104857600,"device_tiers":{"gpu_cache":62914560,"batch_inputs":20971520},"device_tier_bytes":83886080,"model_step_bytes":41943040}}`)}
	got := map[string]string{}
	for _, kv := range runSummary(r) {
		got[kv.K] = kv.V
	}
	for k, want := range map[string]string{
		"host: budget · peak":                         "256MiB · 280MiB",
		"gpu: budget · tiers held":                    "100MiB · 80MiB (batch_inputs 20MiB, gpu_cache 60MiB)",
		"outside the budgets: model step":             "40MiB",
		"allowance (host + gpu + step) · cgroup peak": "396MiB · 400MiB",
	} {
		if !strings.HasPrefix(got[k], want) {
			t.Errorf("%s: %q, want %q", k, got[k], want)
		}
	}
	r.Summary = json.RawMessage(`{"outcome":"done"}`)
	for _, kv := range runSummary(r) {
		if strings.Contains(kv.K, "device") {
			t.Errorf("run without a memory account shows %q", kv.K)
		}
	}
}

// GIDS's bypasses are reported on the run page when they happened.
func TestBypassReported(t *testing.T) {
	eps := []metrics.EpochRecord{
		{Counters: map[string]int64{"gpu_cache_hits": 10, "gpu_cache_misses": 60, "gpu_cache_bypass": 30}},
		{Counters: map[string]int64{"gpu_cache_hits": 50, "gpu_cache_misses": 50}},
	}
	kv, ok := bypassKV(eps)
	if !ok || kv.V != "30 of 200 cache accesses (15.0 %) read around the cache" {
		t.Fatalf("%+v %v", kv, ok)
	}
	if _, ok := bypassKV(eps[1:]); ok {
		t.Fatal("no bypass reported as one")
	}
}
