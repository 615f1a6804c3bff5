package grid

// Variant entries of the system axis. A grid's "system" axis lists variant
// names; an entry may also carry options of that variant alone,
// "NAME:KEY=VALUE[,KEY=VALUE...]" (the form scripts/bench-variants.sh
// takes), so that one experiment compares, e.g., gnndrive with its CPU
// buffer and with feature_buffer=device next to pyg+, which declares
// neither option. The entry's options are merged over the grid's
// "options" for that entry's runs; the run keeps the whole entry as its
// system, so that comparisons show it as a series of its own.
//
// An external system (DESIGN §14) is "external:NAME[:KEY=VALUE,...]": the
// whole "external:NAME" is the entry's variant, and its options are the
// ones its registry declares (experiments/external), checked by Plan
// against World.External. The grid's "options" are the built-ins' and
// are not given to an external system.

import (
	"fmt"
	"strings"

	"outcore/experiments/external"
)

// SystemEntry is one value of the system axis: a variant and the options
// given with it.
type SystemEntry struct {
	Variant string
	Options map[string]string // nil when none
}

// ParseSystemEntry splits "NAME" or "NAME:KEY=VALUE[,KEY=VALUE...]".
func ParseSystemEntry(s string) (SystemEntry, error) {
	var name, rest string
	var withOpts bool
	if ext, isExt := external.ParseRef(strings.TrimSpace(s)); isExt {
		name, rest, withOpts = strings.Cut(ext, ":")
		name = strings.TrimSpace(name)
		if name == "" {
			return SystemEntry{Variant: external.Prefix}, fmt.Errorf("%q has no external system name (want external:NAME)", s)
		}
		name = external.Prefix + name
	} else {
		name, rest, withOpts = strings.Cut(s, ":")
	}
	e := SystemEntry{Variant: strings.TrimSpace(name)}
	if e.Variant == "" {
		return e, fmt.Errorf("%q has no variant name", s)
	}
	if !withOpts {
		return e, nil
	}
	e.Options = map[string]string{}
	for _, kv := range strings.Split(rest, ",") {
		k, v, ok := strings.Cut(kv, "=")
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if !ok || k == "" || v == "" {
			return e, fmt.Errorf("%q: option %q is not KEY=VALUE", s, kv)
		}
		if _, dup := e.Options[k]; dup {
			return e, fmt.Errorf("%q: option %s given twice", s, k)
		}
		e.Options[k] = v
	}
	return e, nil
}

// VariantOf is the variant name of a system-axis entry (the entry itself
// when it does not parse).
func VariantOf(entry string) string {
	if e, err := ParseSystemEntry(entry); err == nil {
		return e.Variant
	}
	return entry
}

// IsExternal reports whether a system-axis entry names an external system
// ("external:NAME...").
func IsExternal(entry string) bool {
	_, ok := external.ParseRef(strings.TrimSpace(entry))
	return ok
}
