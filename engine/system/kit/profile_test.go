package kit

import (
	"context"
	"testing"

	"outcore/engine/dataset"
	"outcore/engine/metrics"
	"outcore/engine/system/systest"
	"outcore/engine/train"
	"outcore/engine/vocab"
	"outcore/internal/osutil"
)

// profileProbe is a variant that profiles over the memory-mapped indices
// and counts the indices' resident pages right after profiling and after
// sampling one more batch.
type profileProbe struct{ afterProfile, afterSample int }

var probe profileProbe

const probeName = "kit-profile-probe"

func init() {
	train.RegisterVariant(train.Variant{
		Variant: vocab.Variant{Name: probeName, Summary: "test: page cache after profiling", Order: 1000},
		New:     func(train.Config) (train.System, error) { return &probeSystem{}, nil },
	})
}

type probeSystem struct{}

func (*probeSystem) Name() string { return probeName }

func (*probeSystem) Prepare(ctx context.Context, env *train.Env) error {
	topo, closeTopo, err := env.Topology("mmap")
	if err != nil {
		return err
	}
	defer closeTopo()
	path := env.Dataset.Path(dataset.IndicesFile)
	if err := osutil.DropFileCache(path); err != nil {
		return err
	}
	if _, err := ProfileWorkspace(ctx, env, topo, 4); err != nil {
		return err
	}
	m, err := osutil.MapFile(path)
	if err != nil {
		return err
	}
	defer m.Close()
	count := func() int {
		vec := make([]byte, (len(m.Data)+osutil.PageSize()-1)/osutil.PageSize())
		if err := osutil.Mincore(m.Data, vec); err != nil {
			return -1
		}
		n := 0
		for _, v := range vec {
			n += int(v & 1)
		}
		return n
	}
	probe.afterProfile = count()
	s, err := env.NewSampler(topo)
	if err != nil {
		return err
	}
	if _, err := s.Sample(0, 0, env.EpochBatches(0)[0]); err != nil {
		return err
	}
	probe.afterSample = count()
	return nil
}

func (*probeSystem) RunEpoch(context.Context, *train.Env, int, *metrics.EpochStats) error { return nil }
func (*probeSystem) Close() error                                                         { return nil }

// TestProfileLeavesNoWarmIndices: the profiling's sampling through the
// memory-mapped indices leaves none of their pages in the page cache for
// the first epoch to find (the control: sampling one batch afterwards
// does make pages resident, so the count can see them).
func TestProfileLeavesNoWarmIndices(t *testing.T) {
	cfg := systest.Config(t, probeName, nil)
	cfg.Epochs = 1
	systest.Run(t, cfg)
	if probe.afterSample <= 0 {
		t.Skipf("sampling left %d resident index pages: this file system does not show the page cache (tmpfs?)", probe.afterSample)
	}
	if probe.afterProfile != 0 {
		t.Fatalf("%d index pages resident after profiling, want 0", probe.afterProfile)
	}
}
