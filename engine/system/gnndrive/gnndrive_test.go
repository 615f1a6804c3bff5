package gnndrive

import (
	"testing"

	"outcore/engine/metrics"
	"outcore/engine/system/systest"
)

func TestMain(m *testing.M) { systest.Main(m) }

// TestGNNDriveSmallBuffer runs GNNDrive with a buffer at the N_e × M_b
// reservation, so slots are reused all the time.
func TestGNNDriveSmallBuffer(t *testing.T) {
	cfg := systest.Config(t, Name, map[string]string{"buffer_factor": "0.01", "extractors": "3", "samplers": "3"})
	r := systest.Run(t, cfg)
	var ev int64
	for _, e := range r.Epochs {
		ev += e.Counters["buffer_evictions"]
		if e.Tiers[metrics.TierCPU].Lookups == 0 {
			t.Fatalf("no buffer lookups: %+v", e.Tiers)
		}
	}
	if ev == 0 {
		t.Fatal("no slot was ever reused: the buffer was not small")
	}
}
