package train

// A run under a paper's testbed (DESIGN §13, "How a run applies the
// mapping"): the mapping of engine/testbed, computed from the testbed's
// profile, the run's dataset and batch shape and this host's measured
// storage, is applied to the run's configuration before the variant is
// created, and every applied setting is recorded among the run's
// deviations with the mapping's rule words.

import (
	"outcore/engine/dataset"
	"outcore/engine/devprofile"
	"outcore/engine/metrics"
	"outcore/engine/testbed"
	"outcore/engine/vocab"
)

// IODepthOption is the variant option of the thread-per-request systems
// (ginex, pyg+) that emulates a host's I/O threads (DESIGN §13).
const IODepthOption = vocab.IODepthOption

// TestbedStorage is this host's storage as the mapping reads it, from the
// device profile of the file system the dataset is on (nil: not measured,
// every field zero).
func TestbedStorage(p *metrics.DeviceProfile, source string) testbed.Storage {
	if p == nil {
		return testbed.Storage{}
	}
	st := testbed.Storage{SeqBytesPerS: p.SeqBytesPerS, Source: source}
	st.RandReadIOPS, _ = p.BestIOPS(metrics.RequestClass(4096))
	return st
}

// MapTestbed computes the mapping of cfg's testbed for the dataset of meta
// in dsDir, with this host's storage profile from dataDir (devprofile).
func MapTestbed(cfg Config, meta dataset.Meta, dataDir, dsDir string) (testbed.Settings, error) {
	var st testbed.Storage
	if k, err := devprofile.KeyOf(dsDir); err == nil {
		if p, path, err := devprofile.Load(dataDir, k); err == nil {
			st = TestbedStorage(p, devprofile.Describe(p, path))
		}
	}
	return mapTestbed(cfg, meta, st)
}

func mapTestbed(cfg Config, meta dataset.Meta, st testbed.Storage) (testbed.Settings, error) {
	return vocab.MapTestbed(cfg, meta, st)
}

// ApplyTestbed applies the settings of a paper's testbed to cfg and
// returns the lines the run records among its deviations
// (vocab.ApplyTestbed, where the rules are: the grid's floor check applies
// the same).
func ApplyTestbed(cfg *Config, s testbed.Settings) []string { return vocab.ApplyTestbed(cfg, s) }
