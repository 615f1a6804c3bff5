package dglondisk

// DGL-OnDisk's one mechanism (DiskGNN §7.1: "we also altered DGL for
// disk-based training (called DGL-OnDisk) by directly using pread to read
// the node features from disk"; §7.2: "DGL-OnDisk needs to read every node
// feature from disk (without CPU and GPU cache)"): the graph structure in
// memory, and each batch's input rows read from the features file one
// pread per row, no row shared with another or kept between batches, in
// DGL's plain sample → gather → train loop (§7.1, "following the
// open-source example from DGL").

import (
	"context"
	"time"

	"outcore/engine/storage"
	"outcore/engine/system/kit"
	"outcore/engine/train"
)

type dglOnDisk struct {
	kit.Base
	*train.Sequential // DGL's example loop: RunEpoch
	opt               options
	closeTopo         func() error
	feats             *storage.File
}

func (d *dglOnDisk) Prepare(ctx context.Context, env *train.Env) error {
	t0 := time.Now()
	topo, closeTopo, err := env.Topology("memory")
	if err != nil {
		return err
	}
	d.closeTopo = closeTopo
	env.PrepareStage("load_topology_s", time.Since(t0))
	// the memory plan: profile, size, apply (kit/memplan.go). The
	// profile's base holds the indices loaded above; the plan counts them
	// itself, so it sizes with the base less them (kit.ProfilePinned).
	prof, err := kit.ProfilePinned(ctx, env, topo, d.opt.profile)
	if err != nil {
		return err
	}
	p, least := kit.Size(size, kit.SizingOf(env, prof.PlanWS, d.opt, kit.NoProfile{}))
	if _, err := prof.Budget.Apply(p.memory(env.MemBudget, least)); err != nil {
		return err
	}
	// one pread per feature row, O_DIRECT: no page cache between the
	// reads and the disk, no block shared between rows
	if d.feats, err = env.OpenFeaturesWith(storage.BackendPread, func(o *storage.Options) {
		o.BlockSize = d.opt.readBlock
		o.SeparateReads = true
	}); err != nil {
		return err
	}
	d.Sequential, err = train.NewSequential(env, topo, d.feats)
	if err == nil {
		env.Logf("dgl-ondisk: graph structure in memory; every input row read with its own pread of %d B blocks, no feature cache", d.opt.readBlock)
	}
	return err
}

func (d *dglOnDisk) Close() error {
	var c kit.Closer
	c.Close(d.Sequential, d.feats)
	c.Func(d.closeTopo)
	return c.Err(Name)
}
