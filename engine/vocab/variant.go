package vocab

// The variant registry: every training system (reference, pyg+, ginex,
// gnndrive, ...) is one package that registers one Variant from its init
// function, describing itself — its paper, its options, the least memory
// budget it can start with — next to its factory. Everything that lists or
// describes variants (the `outcore systems` command, the dashboard form
// and chart order, the grid's memory check, the docs table) reads this
// registry; engine/system/all imports every variant package
// (docs/ARCHITECTURE.md "Adding a system").

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"

	"outcore/engine/dataset"
	"outcore/internal/units"
)

// ReferenceName is the registered name of the reference pipeline
// (engine/train's reference.go), the default system.
const ReferenceName = "reference"

// Option types (Option.Type).
const (
	OptInt    = "int"
	OptFloat  = "float"
	OptBool   = "bool"
	OptString = "string"
	// OptBytes is a byte count with a unit ("64MiB") or a percentage.
	OptBytes = "bytes"
	// OptEnum is one of Option.Values.
	OptEnum = "enum"
)

// Option declares one variant-specific setting (Config.Options, `--opt
// key=value`). A key no variant option declares is a configuration error.
type Option struct {
	Key     string   `json:"key"`
	Type    string   `json:"type"`
	Default string   `json:"default"`
	Help    string   `json:"help"`
	Values  []string `json:"values,omitempty"` // OptEnum only
	// Range is the accepted range in words ("1..4096", "> 0"), "" when
	// any value of the type is accepted.
	Range string `json:"range,omitempty"`
}

// DatasetShape is what a variant may know of a dataset before opening its
// files: the counts of meta.json. MinMemory and the variants' pure sizing
// functions take it.
type DatasetShape struct {
	Nodes      int64
	Edges      int64
	FeatureDim int
	Classes    int
	Train      int64
	Val        int64
	Test       int64
	// FirstBatchInputs is the input-node count of the run's first training
	// mini-batch when it was sampled (ProbeShape), a lower bound of the
	// largest; 0 when unknown.
	FirstBatchInputs int64
	// FirstBatchBytes is that batch's ids and blocks
	// (graph.MiniBatch.Bytes) and FirstBatchHopEntries the neighbour
	// entries of its largest hop; 0 when unknown.
	FirstBatchBytes, FirstBatchHopEntries int64
}

// ShapeOf returns the shape recorded in a dataset's meta.json.
func ShapeOf(m dataset.Meta) DatasetShape {
	return DatasetShape{
		Nodes: m.Nodes, Edges: m.Edges, FeatureDim: m.FeatureDim, Classes: m.Classes,
		Train: m.Train, Val: m.Val, Test: m.Test,
	}
}

// RowBytes is the size of one float32 feature row.
func (s DatasetShape) RowBytes() int64 { return int64(s.FeatureDim) * 4 }

// FeatureBytes is the size of the feature table (features.bin).
func (s DatasetShape) FeatureBytes() int64 { return s.Nodes * s.RowBytes() }

// IndptrBytes is the size of the CSC indptr array (indptr.bin).
func (s DatasetShape) IndptrBytes() int64 { return 8 * (s.Nodes + 1) }

// IndicesBytes is the size of the CSC indices array (indices.bin).
func (s DatasetShape) IndicesBytes() int64 { return 8 * s.Edges }

// MaxInputBound is the most input nodes a training batch can have: the
// seeds times 1 + f1 + f1·f2 + … (all fanouts positive), or every node.
func MaxInputBound(shape DatasetShape, cfg Config) int64 {
	b := int64(cfg.Batch)
	if b <= 0 || b > shape.Train {
		b = shape.Train
	}
	total, level := b, b
	for _, f := range cfg.Fanout {
		if f < 0 {
			return shape.Nodes
		}
		level *= int64(f)
		total += level
		if total >= shape.Nodes {
			return shape.Nodes
		}
	}
	return total
}

// Variant describes one registered training system.
type Variant struct {
	// Name is the value of Config.System ("ginex").
	Name string
	// Paper is the paper the variant implements, with its venue ("" for a
	// baseline of no paper).
	Paper string
	// Summary is one line on what the variant does.
	Summary string
	// Options are every key the variant reads from Config.Options.
	Options []Option
	// CheckOptions, when not nil, parses a configuration's options as
	// the variant will and reports the first value it refuses (out of
	// range, not of its syntax): Validate calls it, so a bad value fails
	// when a configuration is checked, not when the run starts.
	// engine/system/kit.Register derives it with Options from one
	// declaration.
	CheckOptions func(cfg Config) error
	// MinMemory is the variant's own floor for a host memory budget in
	// bytes on a dataset of this shape (nil: no floor of its own). A
	// budget below it is refused before a run starts; it must be a lower
	// bound (budgets above it that still run out of memory are results).
	MinMemory func(shape DatasetShape, cfg Config) int64
	// Order is the display order in charts and forms (the papers' order:
	// pyg+ 10, ginex 20, mariusgnn 30, gnndrive 40, diskgnn 50, gids 60,
	// helios 70, reference 100).
	Order int
	// InOrder, when not nil, are options under which the variant trains
	// the epoch's batches in the standard order with the reference's
	// feature rows, so that its losses equal the reference pipeline's
	// exactly (engine/system/all's tests check it). Nil: the variant
	// reorders batches by design and is held to the reference's accuracy.
	InOrder map[string]string
	// OwnSampling marks a variant that draws its own mini-batches by
	// design (MariusGNN's DENSE samples of the resident partitions only):
	// its losses and bytes needed differ from the reference pipeline's,
	// and engine/system/all's tests check that they differ and that it
	// still learns, instead of holding it to the reference's accuracy.
	OwnSampling bool
	// NestedStages are the stages this variant times inside another of
	// its stages (child → parent), besides metrics.NestedStages (forward
	// and backward inside train). Stage breakdowns stack only top-level
	// stages and show a nested one as a share of its parent (DESIGN §6).
	NestedStages map[string]string
	// WallStages maps the variant's own stages to the wall-clock stage
	// (metrics.StageSample or metrics.StageExtract) the trainer's waits
	// during them count as (DESIGN §5, "Stage vocabulary"); an undeclared
	// stage's waits are stall.
	WallStages map[string]string
}

// Option returns the declared option key.
func (v Variant) Option(key string) (Option, bool) {
	for _, o := range v.Options {
		if o.Key == key {
			return o, true
		}
	}
	return Option{}, false
}

// OptionKeys lists the declared option keys in declaration order.
func (v Variant) OptionKeys() []string {
	keys := make([]string, len(v.Options))
	for i, o := range v.Options {
		keys[i] = o.Key
	}
	return keys
}

var (
	regMu    sync.RWMutex
	registry = map[string]Variant{}
)

// RegisterVariant makes v's description available under v.Name
// (train.RegisterVariant calls it with the variant's factory beside). It
// panics on an empty or duplicate name or a malformed option declaration
// (programming errors).
func RegisterVariant(v Variant) {
	if v.Name == "" {
		panic("train.RegisterVariant: empty name")
	}
	seen := map[string]bool{}
	for _, o := range v.Options {
		if o.Key == "" || seen[o.Key] {
			panic(fmt.Sprintf("train.RegisterVariant: %s: empty or duplicate option key %q", v.Name, o.Key))
		}
		seen[o.Key] = true
		switch o.Type {
		case OptInt, OptFloat, OptBool, OptString, OptBytes:
		case OptEnum:
			if len(o.Values) == 0 {
				panic(fmt.Sprintf("train.RegisterVariant: %s: enum option %q lists no values", v.Name, o.Key))
			}
		default:
			panic(fmt.Sprintf("train.RegisterVariant: %s: option %q has type %q", v.Name, o.Key, o.Type))
		}
	}
	regMu.Lock()
	defer regMu.Unlock()
	if _, dup := registry[v.Name]; dup {
		panic(fmt.Sprintf("train.RegisterVariant: system %q registered twice", v.Name))
	}
	registry[v.Name] = v
}

// Variants lists the registered variants sorted by Order, then Name.
func Variants() []Variant {
	regMu.RLock()
	out := make([]Variant, 0, len(registry))
	for _, v := range registry {
		out = append(out, v)
	}
	regMu.RUnlock()
	sort.Slice(out, func(i, j int) bool {
		if out[i].Order != out[j].Order {
			return out[i].Order < out[j].Order
		}
		return out[i].Name < out[j].Name
	})
	return out
}

// LookupVariant returns the variant registered under name.
func LookupVariant(name string) (Variant, bool) {
	regMu.RLock()
	defer regMu.RUnlock()
	v, ok := registry[name]
	return v, ok
}

// Names lists the registered variants' names, sorted.
func Names() []string {
	regMu.RLock()
	defer regMu.RUnlock()
	out := make([]string, 0, len(registry))
	for k := range registry {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// checkOptions reports the first option of cfg that v does not declare,
// or whose value does not parse as its declared type (naming the known
// keys), then what v.CheckOptions refuses.
func (v Variant) checkOptions(cfg Config) error {
	opts := cfg.Options
	keys := make([]string, 0, len(opts))
	for k := range opts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		o, ok := v.Option(k)
		if !ok {
			known := "none"
			if len(v.Options) > 0 {
				known = strings.Join(v.OptionKeys(), ", ")
			}
			return fmt.Errorf("%w: options.%s: %s has no option %q (known: %s)", ErrConfig, k, v.Name, k, known)
		}
		if err := o.check(opts[k]); err != nil {
			return fmt.Errorf("%w: options.%s: %v", ErrConfig, k, err)
		}
	}
	if v.CheckOptions != nil {
		return v.CheckOptions(cfg)
	}
	return nil
}

// check parses s as the option's type.
func (o Option) check(s string) error {
	t := strings.TrimSpace(s)
	var err error
	switch o.Type {
	case OptInt:
		_, err = strconv.Atoi(t)
		if err != nil {
			return fmt.Errorf("%q is not an integer", s)
		}
	case OptFloat:
		if _, err = strconv.ParseFloat(t, 64); err != nil {
			return fmt.Errorf("%q is not a number", s)
		}
	case OptBool:
		if _, err = strconv.ParseBool(t); err != nil {
			return fmt.Errorf("%q is not true/false", s)
		}
	case OptBytes:
		if err = units.CheckMemLimit(t); err != nil {
			return err
		}
	case OptEnum:
		for _, v := range o.Values {
			if s == v {
				return nil
			}
		}
		return fmt.Errorf("%q, want one of %s", s, strings.Join(o.Values, ", "))
	}
	return nil
}
