package grid

import (
	"fmt"
	"os"
	"testing"

	"outcore/engine/train"
)

// TestMain registers the fake variants the tests' grids name, so that
// their cells' configurations validate; nothing ever trains on them.
func TestMain(m *testing.M) {
	for _, name := range []string{"fake", "fake2", "fake3"} {
		train.RegisterVariant(train.Variant{Name: name,
			New: func(train.Config) (train.System, error) { return nil, fmt.Errorf("fake system") }})
	}
	os.Exit(m.Run())
}
