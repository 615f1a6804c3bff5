package kit

// The skeleton every variant package shares (docs/ARCHITECTURE.md
// "Adding a system"): registration with options declared once (Register,
// options.go), the Name, Devices and Deviations a System reports (Base),
// and the least memory budget from the variant's pure sizing
// (Sizer.MinMemory, from the sizing Register takes). Deviations decided while a run prepares go through
// train.Env.Deviate, the one channel to the run's records.

import (
	"maps"

	"outcore/engine/train"
	"outcore/engine/vocab"
)

// Register registers the variant v describes (its Name, Paper, Summary,
// Order, InOrder or OwnSampling and stages, each package's own text;
// engine/vocab's registry) with its factory build (engine/train's), the
// options bind declares and its sizing size: the factory, v.Options and
// v.CheckOptions come from build and bind, so each default and range is
// declared once, and v.MinMemory is the floor of size (Sizer.MinMemory),
// so the floor and a run's plan come from the one sizing signature
// (memplan.go). A variant's registration is one call:
//
//	kit.Register(vocab.Variant{Name: Name, Paper: paper, Summary: summary, Order: 60, InOrder: kit.InOrderAlways()}, newX, (*options).bind, size)
//
// where size is func(kit.Sizing[options, profile]) plan and plan has
// Fits() bool. v.MinMemory must be unset: it is size's.
func Register[O, P any, V Fitter, S train.System](v vocab.Variant, build func(train.Config) (S, error), bind Bind[O], size func(Sizing[O, P]) V) {
	if v.MinMemory != nil {
		panic("kit.Register: " + v.Name + ": MinMemory is the sizing's floor (kit.Sizer.MinMemory), not set by hand")
	}
	v.Options = bind.Options()
	v.CheckOptions = bind.Check
	v.MinMemory = Sizer[O, P, V](size).MinMemory(bind.Parse)
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

// Sizing is what a variant's memory plan depends on: the host budget (0 =
// unlimited), the profiled (or estimated) workspace, the dataset's shape,
// the run's configuration, its parsed options and Prof, what the variant
// measures while it prepares besides the workspace (Ginex's reader
// buffers, DiskGNN's offline samples, MariusGNN's partition buckets;
// NoProfile for none). The zero Prof is the floor's (Sizer.MinMemory): a
// variant's sizing reads it as the most optimistic estimate known before
// a run, so the floor is a lower bound of what a run plans.
type Sizing[O, P any] struct {
	Budget int64
	WS     Workspace
	Shape  train.DatasetShape
	Cfg    train.Config
	Opt    O
	Prof   P
}

// NoProfile is the Prof of a variant whose plan needs nothing measured
// besides the workspace.
type NoProfile struct{}

// SizingOf is a run's sizing: env's host budget, dataset shape and
// configuration, the profiled workspace ws, the parsed options opt and the
// variant's measurements prof.
func SizingOf[O, P any](env *train.Env, ws Workspace, opt O, prof P) Sizing[O, P] {
	return Sizing[O, P]{Budget: env.MemBudget, WS: ws, Shape: env.Shape(), Cfg: env.Config, Opt: opt, Prof: prof}
}

// Fitter is a variant's plan as kit sizes it: whether it fits its budget.
type Fitter interface{ Fits() bool }

// Sizer is the one signature of a variant's sizing (its sizing.go): a
// pure function of Sizing to the variant's plan. Register takes it, so the
// floor (MinMemory) and a run's plan (Size, then Budget.Apply of the
// plan's kit.Plan) go through the same function.
type Sizer[O, P any, V Fitter] func(Sizing[O, P]) V

// Size is a run's plan of s by the variant's sizing and the least budget
// for which the same sizing, with s's workspace, shape, options and
// profile, fits (Sizer.Least): the number a refusal names
// (Plan.LeastBudget).
func Size[O, P any, V Fitter](size func(Sizing[O, P]) V, s Sizing[O, P]) (V, int64) {
	return size(s), Sizer[O, P, V](size).Least(s)
}

// Least is the least budget for which z's plan of s fits (MinBudget over
// s with its Budget varied, MinBudget's bounds).
func (z Sizer[O, P, V]) Least(s Sizing[O, P]) int64 {
	return MinBudget(func(budget int64) bool {
		s.Budget = budget
		return z(s).Fits()
	})
}

// MinMemory is train.Variant.MinMemory of the variant sized by z: Least
// with the lower-bound workspace of EstimateWorkspace and the zero Prof
// (0 when the options do not parse, which the configuration's validation
// reports, or the dataset has no nodes).
func (z Sizer[O, P, V]) MinMemory(parse func(train.Config) (O, error)) func(train.DatasetShape, train.Config) int64 {
	return func(shape train.DatasetShape, cfg train.Config) int64 {
		opt, err := parse(cfg)
		if err != nil || shape.Nodes < 1 {
			return 0
		}
		return z.Least(Sizing[O, P]{WS: EstimateWorkspace(shape, cfg), Shape: shape, Cfg: cfg, Opt: opt})
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
