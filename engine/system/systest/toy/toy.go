// Package toy is the smallest variant on the skeleton of
// docs/ARCHITECTURE.md "Adding a system", built from nothing but that
// section: options declared once through a kit.Binder, kit.Register,
// kit.Base, kit.MinMemoryOf over a pure plan, files through train.Env,
// and the plain sample → gather → train loop of the reference
// (train.Sequential, embedded for RunEpoch). It belongs
// to no paper and to no command: engine/system/all's tests import it
// (toy_test.go), so the shared suites run it beside the real variants and
// check that the skeleton alone makes a variant that trains, reports and
// validates like them.
package toy

import (
	"context"
	"time"

	"outcore/engine/storage"
	"outcore/engine/system/kit"
	"outcore/engine/train"
)

// Name is the registered name of the toy variant; paper and summary
// are its lines in the registry (outcore systems, the dashboard).
const (
	Name    = "toy"
	paper   = `none: the worked example of docs/ARCHITECTURE.md "Adding a system" (a test variant)`
	summary = "the reference's sequential loop, built on the variant skeleton"
)

func init() {
	kit.Register(train.Variant{Name: Name, Paper: paper, Summary: summary, Order: 1000, MinMemory: minMemory, InOrder: kit.InOrderAlways()}, newToy, (*options).bind)
}

// options are the toy's settings.
type options struct {
	topology  string
	readBlock int64
	profile   int
}

func (o *options) bind(b *kit.Binder) {
	b.Enum(&o.topology, "topology", "memory", []string{"memory", "mmap", "storage"}, "where the graph's indices live while sampling")
	b.ReadBlock(&o.readBlock, 4096, "no artifact: the page size")
	b.ProfileBatches(&o.profile, "to size the plan (unused: the plan is the estimate)")
}

var parseOptions = kit.Bind[options]((*options).bind).Parse

// feasible: the budget holds the process, one step and one batch with its
// input, and the reserve (the indices in memory come on top).
func feasible(s kit.Sizing[options]) bool {
	need := s.WS.BaseBytes + s.WS.ArenaBytes + s.WS.StepExtra + s.WS.BatchBytes + int64(s.WS.MaxInputs)*s.Shape.RowBytes()
	if s.Opt.topology == "memory" {
		need += s.Shape.IndicesBytes()
	}
	return s.Budget <= 0 || need+kit.ReserveBytes(s.Budget) <= s.Budget
}

var minMemory = kit.MinMemoryOf(parseOptions, feasible)

type toy struct {
	kit.Base
	*train.Sequential // the reference's loop: RunEpoch
	opt               options
	closeTopo         func() error
	feats             *storage.File
}

func newToy(cfg train.Config) (*toy, error) {
	opt, err := parseOptions(cfg)
	if err != nil {
		return nil, err
	}
	return &toy{opt: opt, Base: kit.NewBase(Name, kit.OnCPU("sample", "extract", "train"),
		"a test variant: it implements no paper")}, nil
}

func (t *toy) Prepare(ctx context.Context, env *train.Env) error {
	t0 := time.Now()
	topo, closeTopo, err := env.Topology(t.opt.topology)
	if err != nil {
		return err
	}
	t.closeTopo = closeTopo
	env.PrepareStage("load_topology_s", time.Since(t0))
	if t.opt.readBlock != 4096 {
		env.Deviate("read_block=%d", t.opt.readBlock)
	}
	if t.feats, err = env.OpenFeaturesWith(storage.BackendPread, func(o *storage.Options) { o.BlockSize = t.opt.readBlock }); err != nil {
		return err
	}
	t.Sequential, err = train.NewSequential(env, topo, t.feats)
	return err
}

func (t *toy) Close() error {
	var c kit.Closer
	c.Close(t.Sequential, t.feats)
	c.Func(t.closeTopo)
	return c.Err(Name)
}
