package grid

import (
	"strings"
	"testing"

	"outcore/engine/dataset"
	"outcore/engine/vocab"
)

// TestFloorConfig: the floor check before a run sees the config after its
// testbed's mapping (DESIGN §13): the paper GPU's compute, the mapped
// epochs and device budget; a config on this host is left as it is.
func TestFloorConfig(t *testing.T) {
	meta := dataset.Meta{Name: "tiny", Nodes: 8192, FeatureDim: 32, Train: 4960}
	cfg := vocab.DefaultConfig()
	cfg.Dataset, cfg.System, cfg.Testbed, cfg.Epochs = "tiny", "gids", "gids-vldb24", 0
	got := FloorConfig(cfg, meta)
	if !strings.HasPrefix(got.Compute, "model:") || got.Epochs < 3 || got.DeviceMem == "" || got.DeviceMemBytes <= 0 {
		t.Errorf("mapped: compute %q, epochs %d, device_mem %q (%d bytes); want the mapping's", got.Compute, got.Epochs, got.DeviceMem, got.DeviceMemBytes)
	}
	if cfg.Compute != vocab.DefaultConfig().Compute || cfg.Epochs != 0 {
		t.Errorf("FloorConfig changed its argument: %+v", cfg)
	}
	cfg.Testbed = "this-host"
	cfg.Epochs = 2
	if got := FloorConfig(cfg, meta); got.Compute != cfg.Compute || got.DeviceMem != cfg.DeviceMem || got.Epochs != 2 {
		t.Errorf("this-host changed: %+v", got)
	}
	// the floor function sees the mapped config in Plan's path
	cfg.Testbed, cfg.System = "ginex-vldb22", "ginex"
	if got := FloorConfig(cfg, meta); got.Options[vocab.IODepthOption] == "" && got.Compute == cfg.Compute {
		t.Errorf("ginex under ginex-vldb22: neither compute nor io_depth mapped: %+v", got)
	}
}
