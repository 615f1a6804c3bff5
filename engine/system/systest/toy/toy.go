// Package toy is the smallest variant on the skeleton of
// docs/ARCHITECTURE.md "Adding a system", built from nothing but that
// section: options declared once through a kit.Binder, kit.Register with
// the sizing of one signature (its floor), kit.Base, the shared preparation of
// the memory plan (profile, size, kit.Budget.Apply), files through train.Env,
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
	"outcore/engine/vocab"
)

// Name is the registered name of the toy variant; paper and summary
// are its lines in the registry (outcore systems, the dashboard).
const (
	Name    = "toy"
	paper   = `none: the worked example of docs/ARCHITECTURE.md "Adding a system" (a test variant)`
	summary = "the reference's sequential loop, built on the variant skeleton"
)

func init() {
	kit.Register(vocab.Variant{Name: Name, Paper: paper, Summary: summary, Order: 1000, InOrder: kit.InOrderAlways()}, newToy, (*options).bind, size)
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
	b.ProfileBatches(&o.profile, "to size the plan")
}

var parseOptions = kit.Bind[options]((*options).bind).Parse

// plan is the toy's memory plan: what the budget must hold — the
// process, one step and one batch with its input, and the reserve (the
// indices in memory come on top) — and whether it does.
type plan struct {
	need     int64 // without the reserve
	heap     int64 // the Go heap it plans for
	feasible bool
}

// size is the toy's sizing, a pure function of kit.Sizing (the profiled
// workspace in a run, kit.EstimateWorkspace for the floor).
func size(s kit.Sizing[options, kit.NoProfile]) plan {
	p := plan{heap: s.WS.BaseBytes + s.WS.ArenaBytes + s.WS.StepExtra + s.WS.BatchBytes + int64(s.WS.MaxInputs)*s.Shape.RowBytes()}
	p.need = p.heap
	if s.Opt.topology == "memory" {
		p.need += s.Shape.IndicesBytes()
		p.heap += s.Shape.IndicesBytes()
	}
	p.feasible = s.Budget <= 0 || p.need+kit.ReserveBytes(s.Budget) <= s.Budget
	return p
}

// Fits is whether the budget holds the plan (kit.Fitter).
func (p plan) Fits() bool { return p.feasible }

// memory is the plan as the shared preparation applies it: nothing held
// outside the budget but the model step, nothing cut, one phase.
func (p plan) memory() kit.Plan {
	return kit.Plan{Fits: p.feasible, Heap: &kit.GoHeap{HeapNeed: p.heap}}
}

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
	// the memory plan: profile, size, apply (kit/memplan.go)
	budget := kit.NewBudget(env)
	ws, err := budget.ProfileStage(ctx, time.Now(), topo, t.opt.profile)
	if err != nil {
		return err
	}
	p := size(kit.SizingOf(env, ws, t.opt, kit.NoProfile{}))
	if !p.feasible {
		env.Warnf("toy: the %d MiB budget cannot hold the process, a step and a batch (%d MiB): expect an OOM kill", env.MemBudget>>20, p.need>>20)
	}
	if _, err := budget.Apply(p.memory()); err != nil {
		return err
	}
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
