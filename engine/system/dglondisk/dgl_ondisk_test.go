package dglondisk

import (
	"slices"
	"testing"

	"outcore/engine/system/systest"
)

// TestEveryRowFromDisk: DGL-OnDisk keeps no feature cache (DiskGNN §7.2),
// so every input row of every batch is read from the device, each by its
// own read of one 4 KiB block (the shared dataset's rows never straddle
// one), and it trains the reference's model.
func TestEveryRowFromDisk(t *testing.T) {
	r := systest.Run(t, systest.Config(t, Name, nil))
	for i, e := range r.Epochs {
		if e.RowsFromDevice == 0 || e.RowsFromDevice*systest.RowBytes != e.BytesNeeded {
			t.Errorf("epoch %d: %d rows from the device, %d bytes needed (%d rows): every row should come from the device", i, e.RowsFromDevice, e.BytesNeeded, e.BytesNeeded/systest.RowBytes)
		}
		if want := e.RowsFromDevice * 4096; e.FeatureBytesRead != want {
			t.Errorf("epoch %d: %d feature bytes read, want one 4 KiB block per row (%d)", i, e.FeatureBytesRead, want)
		}
	}
	if a, b := r.Losses(), systest.Reference(t).Losses(); !slices.Equal(a, b) {
		t.Errorf("losses %v, the reference's %v", a, b)
	}
	if !systest.HasDeviation(r.Start.Deviations, "O_DIRECT pread") {
		t.Errorf("deviations %q do not state the guessed reads", r.Start.Deviations)
	}
}
