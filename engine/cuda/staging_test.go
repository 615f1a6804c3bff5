//go:build cgo

package cuda

import (
	"math/rand/v2"
	"testing"
)

// TestStagedCopy: a staged copy longer than all the slots together (so
// every slot is reused, and the last chunk is partial) lands on the device
// equal to its source, twice in a row into the same buffer, as does one
// shorter than a slot; an oversized copy is an error.
func TestStagedCopy(t *testing.T) {
	d := openOrSkip(t)
	n := (stagingSlots+2)*stagingSlotBytes/4 + 12345
	rng := rand.New(rand.NewPCG(7, 7))
	b, err := d.Alloc(int64(n) * 4)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Free(b)
	for round := 0; round < 2; round++ {
		h := make([]float32, n)
		for i := range h {
			h[i] = rng.Float32()
		}
		if err := d.PutF32Staged(b, h); err != nil {
			t.Fatal(err)
		}
		if err := d.SyncStaging(); err != nil {
			t.Fatal(err)
		}
		got := make([]float32, n)
		if err := d.GetF32(got, b); err != nil {
			t.Fatal(err)
		}
		for i := range h {
			if got[i] != h[i] {
				t.Fatalf("round %d: element %d of %d is %v, want %v", round, i, n, got[i], h[i])
			}
		}
	}
	small := []float32{1, 2, 3}
	if err := d.PutF32Staged(b, small); err != nil {
		t.Fatal(err)
	}
	got := make([]float32, 4)
	if err := d.GetF32(got, b); err != nil || got[0] != 1 || got[2] != 3 {
		t.Fatalf("short copy: %v %v", got, err)
	}
	if err := d.PutF32Staged(b, make([]float32, n+1)); err == nil {
		t.Fatal("a copy larger than the buffer was accepted")
	}
}
