package report

import (
	"testing"

	"outcore/engine/system/systest"
)

// TestMain removes the shared training dataset of the tests that train
// the reference pipeline (systest).
func TestMain(m *testing.M) { systest.Main(m) }
