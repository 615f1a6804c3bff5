package train

// The reference pipeline: the plain, sequential sample → gather → train loop
// that every variant is compared against. No cache, no overlap, no
// reordering: for each batch of the epoch's standard order it samples the
// multi-hop neighbourhood, reads the feature rows of the input nodes from
// features.bin through engine/storage (O_DIRECT with the uring or pread
// backend, page cache with mmap), and trains one step (Sequential,
// sequential.go).

import (
	"context"
	"errors"
	"fmt"
	"time"

	"outcore/engine/storage"
	"outcore/engine/vocab"
)

// ReferenceName is the registered name of the reference pipeline
// (vocab.ReferenceName).
const ReferenceName = vocab.ReferenceName

func init() {
	RegisterVariant(Variant{New: func(cfg Config) (System, error) { return &reference{cfg: cfg}, nil }, Variant: vocab.Variant{
		Name:    ReferenceName,
		Summary: "the plain sequential sample → gather → train loop, no cache, no overlap",
		Options: []Option{{
			Key: "topology", Type: OptEnum, Values: []string{"memory", "mmap", "storage"},
			Default: "memory, or storage when the indices exceed a quarter of the memory budget",
			Help:    "where the graph's indices live while sampling: loaded whole, memory-mapped, or read through the run's storage backend",
		}},
		Order:   100,
		InOrder: map[string]string{},
	}})
}

type reference struct {
	*Sequential
	cfg       Config
	topoMode  string
	closeTopo func() error
	feats     *storage.File
}

func (r *reference) Name() string { return ReferenceName }

func (r *reference) Devices() map[string]string {
	return map[string]string{"sample": "cpu", "extract": "cpu", "train": "cpu"}
}

func (r *reference) Deviations() []string { return nil }

// Prepare opens the topology and the features file. Option "topology"
// chooses where indices live: memory, mmap or storage; by default memory
// when there is no memory limit or the indices take at most a quarter of it,
// else storage.
func (r *reference) Prepare(ctx context.Context, env *Env) error {
	idxBytes := env.Dataset.Edges() * 8
	mode := Opts(r.cfg.Options).String("topology", "")
	if mode == "" {
		mode = "memory"
		if env.MemBudget > 0 && idxBytes > env.MemBudget/4 {
			mode = "storage"
		}
	}
	r.topoMode = mode
	t0 := time.Now()
	topo, closeTopo, err := env.Topology(mode)
	if err != nil {
		return err
	}
	r.closeTopo = closeTopo
	env.PrepareStage("load_topology_s", time.Since(t0))
	env.Logf("reference: indices (%d MiB) via %s", idxBytes>>20, mode)
	if r.feats, err = env.OpenFeatures(); err != nil {
		return err
	}
	r.Sequential, err = NewSequential(env, topo, r.feats)
	return err
}

func (r *reference) Close() error {
	errs := []error{r.Sequential.Close()}
	if r.feats != nil {
		errs = append(errs, r.feats.Close())
	}
	if r.closeTopo != nil {
		errs = append(errs, r.closeTopo())
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("close reference: %w", err)
	}
	return nil
}
