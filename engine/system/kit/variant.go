package kit

// The skeleton every variant package shares (docs/ARCHITECTURE.md
// "Adding a system"): registration with options declared once (Register,
// options.go), the Name, Devices and Deviations a System reports (Base),
// and the least memory budget from the variant's pure sizing
// (MinMemoryOf). Deviations decided while a run prepares go through
// train.Env.Deviate, the one channel to the run's records.

import (
	"maps"

	"outcore/engine/train"
	"outcore/engine/vocab"
)

// Register registers the variant v describes (its Name, Paper, Summary,
// Order, MinMemory, InOrder or OwnSampling and stages, each package's own
// text; engine/vocab's registry) with its factory build (engine/train's),
// and the options bind declares: the factory, v.Options and
// v.CheckOptions come from build and bind, so each default
// and range is declared once and a variant's registration is one call:
//
//	kit.Register(vocab.Variant{Name: Name, Paper: paper, Summary: summary, Order: 60, MinMemory: minMemory, InOrder: kit.InOrderAlways()}, newX, (*options).bind)
func Register[O any, S train.System](v vocab.Variant, build func(train.Config) (S, error), bind Bind[O]) {
	v.Options = bind.Options()
	v.CheckOptions = bind.Check
	train.RegisterVariant(train.Variant{Variant: v, New: func(cfg train.Config) (train.System, error) { return build(cfg) }})
}

// InOrderAlways is train.Variant.InOrder for a variant that trains the
// reference's batch order under any options (no option needs a value).
func InOrderAlways() map[string]string { return map[string]string{} }

// Base is what a System reports of itself before it runs: its registered
// name, the device of each stage and its deviations from its paper known
// from the configuration alone (train.Describer). A variant embeds it.
type Base struct {
	name       string
	devices    map[string]string
	deviations []string
}

// NewBase is the Base of the variant name whose stages run on devices,
// departing from its paper by deviations.
func NewBase(name string, devices map[string]string, deviations ...string) Base {
	return Base{name: name, devices: devices, deviations: deviations}
}

// Name is the registered name.
func (b *Base) Name() string { return b.name }

// Devices is the device of each stage ("sample": "cpu").
func (b *Base) Devices() map[string]string { return maps.Clone(b.devices) }

// Deviations are the deviations known before the run prepares.
func (b *Base) Deviations() []string { return append([]string(nil), b.deviations...) }

// OnCPU maps each stage to "cpu".
func OnCPU(stages ...string) map[string]string {
	m := make(map[string]string, len(stages))
	for _, s := range stages {
		m[s] = "cpu"
	}
	return m
}

// Sizing is what a variant's memory plan depends on besides what the
// variant derives from it: the host budget (0 = unlimited), the profiled
// (or estimated) workspace, the dataset's shape, the run's configuration
// and its parsed options.
type Sizing[O any] struct {
	Budget int64
	WS     Workspace
	Shape  train.DatasetShape
	Cfg    train.Config
	Opt    O
}

// SizingOf is a run's sizing: env's host budget, dataset shape and
// configuration, the profiled workspace ws and the parsed options opt (the
// same signature MinMemoryOf sizes the estimate with).
func SizingOf[O any](env *train.Env, ws Workspace, opt O) Sizing[O] {
	return Sizing[O]{Budget: env.MemBudget, WS: ws, Shape: env.Shape(), Cfg: env.Config, Opt: opt}
}

// MinMemoryOf is train.Variant.MinMemory for a variant whose plan is
// feasible(s): the smallest budget it finds feasible with the
// lower-bound workspace of EstimateWorkspace (0 when the options do not
// parse, which the configuration's validation reports, or the dataset
// has no nodes).
func MinMemoryOf[O any](parse func(train.Config) (O, error), feasible func(Sizing[O]) bool) func(train.DatasetShape, train.Config) int64 {
	return func(shape train.DatasetShape, cfg train.Config) int64 {
		opt, err := parse(cfg)
		if err != nil || shape.Nodes < 1 {
			return 0
		}
		s := Sizing[O]{WS: EstimateWorkspace(shape, cfg), Shape: shape, Cfg: cfg, Opt: opt}
		return MinBudget(func(budget int64) bool {
			s.Budget = budget
			return feasible(s)
		})
	}
}

// New is a variant's constructor from its options' parse and a build of
// the system: the options are parsed (a configuration error names the
// option) and handed to build with the configuration.
func New[O, S any](parse func(train.Config) (O, error), build func(train.Config, O) S) func(train.Config) (S, error) {
	return func(cfg train.Config) (S, error) {
		opt, err := parse(cfg)
		if err != nil {
			var zero S
			return zero, err
		}
		return build(cfg, opt), nil
	}
}
