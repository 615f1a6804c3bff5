package grid

import (
	"os"
	"testing"

	"outcore/engine/vocab"
)

// TestMain registers the fake variants the tests' grids name, so that
// their cells' configurations validate; nothing ever trains on them. The
// grid links no runtime, so the default system, the reference, is
// described here as engine/train describes it (name and option).
func TestMain(m *testing.M) {
	for _, name := range []string{"fake", "fake2", "fake3"} {
		vocab.RegisterVariant(vocab.Variant{Name: name})
	}
	vocab.RegisterVariant(vocab.Variant{Name: vocab.ReferenceName, Order: 100, InOrder: map[string]string{},
		Options: []vocab.Option{{Key: "topology", Type: vocab.OptEnum, Values: []string{"memory", "mmap", "storage"}}}})
	os.Exit(m.Run())
}
