package train

// The variant registry's runtime half: each registered variant's factory
// (Variant.New) beside its description, which lives in engine/vocab (the
// vocabulary leaf the grid and the viewers read without linking the
// runtime). RegisterVariant records both; LookupVariant and Variants give
// them back together.

import (
	"sync"

	"outcore/engine/vocab"
)

// Variant describes one registered training system (vocab.Variant) and
// builds it (New).
type Variant struct {
	vocab.Variant
	// New builds the system for a validated Config.
	New Factory
}

var (
	factMu    sync.RWMutex
	factories = map[string]Factory{}
)

// RegisterVariant makes v available under v.Name; variant packages call it
// from init (through engine/system/kit.Register). It panics on an empty or
// duplicate name, a nil factory or a malformed option declaration
// (programming errors).
func RegisterVariant(v Variant) {
	if v.Name == "" || v.New == nil {
		panic("train.RegisterVariant: empty name or nil factory")
	}
	vocab.RegisterVariant(v.Variant)
	factMu.Lock()
	factories[v.Name] = v.New
	factMu.Unlock()
}

func withFactory(d vocab.Variant) Variant {
	factMu.RLock()
	defer factMu.RUnlock()
	return Variant{Variant: d, New: factories[d.Name]}
}

// Variants lists the registered variants sorted by Order, then Name.
func Variants() []Variant {
	ds := vocab.Variants()
	out := make([]Variant, len(ds))
	for i, d := range ds {
		out[i] = withFactory(d)
	}
	return out
}

// LookupVariant returns the variant registered under name.
func LookupVariant(name string) (Variant, bool) {
	d, ok := vocab.LookupVariant(name)
	if !ok {
		return Variant{}, false
	}
	return withFactory(d), true
}

// Names lists the registered variants' names, sorted.
func Names() []string { return vocab.Names() }
