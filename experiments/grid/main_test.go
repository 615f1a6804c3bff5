package grid

import (
	"os"
	"testing"

	"outcore/engine/vocab"
)

// TestMain registers the fake variants the tests' grids name, so that
// their cells' configurations validate; nothing ever trains on them.
func TestMain(m *testing.M) {
	for _, name := range []string{"fake", "fake2", "fake3"} {
		vocab.RegisterVariant(vocab.Variant{Name: name})
	}
	os.Exit(m.Run())
}
