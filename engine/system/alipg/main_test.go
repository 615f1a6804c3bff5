package alipg

import (
	"testing"

	"outcore/engine/system/systest"
)

// TestMain removes the shared test dataset after the package's tests.
func TestMain(m *testing.M) { systest.Main(m) }
