package systest

import "testing"

// CheckSampleOnly runs one epoch of system with stages=sample (the shared
// option of kit/sample_only.go) and fails t unless the epoch sampled and
// trained nothing (no extract, no train, no batch; GNNDrive Fig. 2's
// "-only" runs) and the run records the deviation.
func CheckSampleOnly(t *testing.T, system string) {
	t.Helper()
	cfg := Config(t, system, map[string]string{"stages": "sample"})
	cfg.Epochs = 1
	r := Run(t, cfg)
	e := r.Epochs[0]
	if e.SampleS <= 0 || e.TrainS != 0 || e.ExtractS != 0 || e.Batches != 0 {
		t.Fatalf("sample %v s, extract %v s, train %v s, %d batches trained", e.SampleS, e.ExtractS, e.TrainS, e.Batches)
	}
	if !HasDeviation(r.Start.Deviations, "stages=sample") {
		t.Fatalf("deviations %q", r.Start.Deviations)
	}
}
