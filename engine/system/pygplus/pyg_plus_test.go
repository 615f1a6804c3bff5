package pygplus

import (
	"slices"
	"testing"

	"outcore/engine/system/systest"
)

// TestGatherThreadTrainsTheSameModel: gathering batch i+1 while batch i
// trains (the artifact's gather thread) feeds the trainer the same batches
// in the same order with the same rows as the inline gather, so the losses
// are equal; the deviations say which one ran.
func TestGatherThreadTrainsTheSameModel(t *testing.T) {
	run := func(overlap string) systest.Result {
		return systest.Run(t, systest.Config(t, Name, map[string]string{"overlap": overlap}))
	}
	over, inline := run("true"), run("false")
	if a, b := over.Losses(), inline.Losses(); !slices.Equal(a, b) {
		t.Fatalf("losses with the gather thread %v, inline %v", a, b)
	}
	if !systest.HasDeviation(over.Start.Deviations, "gather thread overlaps") || !systest.HasDeviation(inline.Start.Deviations, "overlap=false") {
		t.Fatalf("deviations %q / %q do not name the gather's placement", over.Start.Deviations, inline.Start.Deviations)
	}
	for i, e := range over.Epochs {
		if e.ExtractS == 0 {
			t.Fatalf("epoch %d: no gather time recorded", i)
		}
	}
}

// TestSampleOnly: with stages=sample an epoch samples every batch and
// trains none, and says so (systest.CheckSampleOnly).
func TestSampleOnly(t *testing.T) { systest.CheckSampleOnly(t, Name) }
