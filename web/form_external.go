package web

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"outcore/experiments/external"
	"outcore/experiments/grid"
	"outcore/web/views"
)

// The form's fields of an external system's declared options (DESIGN §14):
// "ext.NAME.KEY", one per declared option of each registered system. The
// form turns the fields of a ticked "external:NAME" into its system
// entries "external:NAME:KEY=VALUE,..." — several comma-separated values
// of a field make one entry each (the product over the fields), so the
// values are an axis as for variant options — and the grid's check
// (Registry.CheckText in grid.Plan) refuses an undeclared option or a bad
// value. Fields of a system that is not ticked are ignored.

// ExternalOptionField prefixes the form field of an external system's
// option: "ext.tiny-sgd.epochs".
const ExternalOptionField = "ext."

// externalField is the form field of system name's option key.
func externalField(name, key string) string { return ExternalOptionField + name + "." + key }

// externalErrKey is the key of that field's inline error (and its input's
// id): "ext-NAME-KEY", safe in a CSS selector (htmx's out-of-band swap).
// Unique: a system name may hold "-", an option name never does.
func externalErrKey(name, key string) string { return "ext-" + name + "-" + key }

// splitExternalField reads a form field "ext.NAME.KEY"; ok is false for
// any other field.
func splitExternalField(field string) (name, key string, ok bool) {
	rest, ok := strings.CutPrefix(field, ExternalOptionField)
	if !ok {
		return "", "", false
	}
	name, key, ok = strings.Cut(rest, ".")
	return name, key, ok && name != "" && key != ""
}

// externalOptionText is an option key's text as the form may put it in a
// system entry: a word of a-z, 0-9 and _ (what a registry may declare,
// experiments/external). Anything else would change the entry's meaning
// (",", "=", ":"), so it is refused before an entry is built.
func externalOptionText(key string) bool {
	if key == "" || len(key) > 40 {
		return false
	}
	for _, r := range key {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_') {
			return false
		}
	}
	return true
}

// externalEntries turns the ticked systems into the system axis: a plain
// "external:NAME" whose option fields hold values becomes one entry per
// combination of those values ("external:NAME:k1=v1,k2=v2"); every other
// entry is kept as ticked. Each declared option's value is checked alone
// with reg.CheckText (the grid's check) and its message put on its field
// (fieldErrs: error key → message, the grid's problem without its
// "variants: "); the grid's check repeats those on the system axis
// (shown: the problems' messages), and ValidateForm drops the repeats. An option field with a name that is no option word is
// refused on "variants", naming it; an undeclared one reaches the grid's
// check, which refuses it by name.
func externalEntries(ticked []string, opts map[string]map[string]string, reg *external.Registry) (entries []string, fieldErrs map[string]string, shown map[string]bool, badNames []string) {
	fieldErrs, shown = map[string]string{}, map[string]bool{}
	for _, entry := range ticked {
		name, isExt := external.ParseRef(entry)
		set := opts[name]
		if !isExt || strings.Contains(name, ":") || len(set) == 0 {
			entries = append(entries, entry)
			continue
		}
		combos := []string{""}
		sys, _ := reg.Lookup(name)
		for _, key := range slices.Sorted(maps.Keys(set)) {
			if !externalOptionText(key) {
				badNames = append(badNames, fmt.Sprintf("variants: %s: %q is not an option name of %s", externalField(name, key), key, entry))
				continue
			}
			vals := splitList(set[key])
			if len(vals) == 0 {
				continue
			}
			if sys != nil {
				if _, declared := sys.Options[key]; declared {
					for _, v := range vals {
						if err := reg.CheckText(name, map[string]string{key: v}); err != nil {
							k, problem := externalErrKey(name, key), externalProblem(err)
							if shown[problem] {
								continue
							}
							shown[problem] = true
							msg := strings.TrimPrefix(problem, "variants: ") // it stands by its field
							if prev := fieldErrs[k]; prev != "" {
								msg = prev + "; " + msg
							}
							fieldErrs[k] = msg
						}
					}
				}
			}
			if len(combos)*len(vals) > grid.MaxRuns {
				badNames = append(badNames, fmt.Sprintf("variants: the values of %s's options make more than %d entries (a grid runs at most %d)", entry, grid.MaxRuns, grid.MaxRuns))
				combos = nil
				break
			}
			var next []string
			for _, c := range combos {
				for _, v := range vals {
					sep := ","
					if c == "" {
						sep = ""
					}
					next = append(next, c+sep+key+"="+v)
				}
			}
			combos = next
		}
		if combos == nil {
			entries = append(entries, entry) // refused above; the rest of the form is still checked
		}
		for _, c := range combos {
			if c == "" {
				entries = append(entries, entry)
			} else {
				entries = append(entries, entry+":"+c)
			}
		}
	}
	return entries, fieldErrs, shown, badNames
}

// externalProblem words a registry error as the grid's check does
// (grid.Plan: "variants: ..." without the registry's prefix).
func externalProblem(err error) string {
	return "variants: " + strings.TrimPrefix(err.Error(), external.ErrRegistry.Error()+": ")
}

// optionHint is a declared option's type and allowed values in words:
// "int, 1 to 100", "one of adam, sgd", "true or false".
func optionHint(o external.Option) string {
	switch o.Type {
	case external.TypeBool:
		return "bool: true or false"
	case external.TypeEnum:
		return "one of " + strings.Join(o.Values, ", ")
	}
	return fmt.Sprintf("%s, %s to %s", o.Type, bound(o.Min), bound(o.Max))
}

// bound writes a declared bound as the registry file has it: a number in
// full (100000000, not 1e+08), a size as written ("1GiB").
func bound(v any) string {
	if f, ok := v.(float64); ok {
		return strconv.FormatFloat(f, 'f', -1, 64)
	}
	return fmt.Sprint(v)
}

// externalOptionOffers are the form's inputs of each registered system's
// declared options, with the values given (in) and their errors' keys.
func externalOptionOffers(in FormInput, reg *external.Registry) []views.ExternalSystemOptions {
	var out []views.ExternalSystemOptions
	for _, n := range reg.Names() {
		sys, _ := reg.Lookup(n)
		if len(sys.Options) == 0 {
			continue
		}
		s := views.ExternalSystemOptions{System: external.Prefix + n, Help: sys.Help}
		for _, k := range slices.Sorted(maps.Keys(sys.Options)) {
			o := sys.Options[k]
			s.Options = append(s.Options, views.ExternalOption{
				Field: externalField(n, k), ID: externalErrKey(n, k), Key: k, Help: o.Help,
				Hint: optionHint(o), Placeholder: fmt.Sprintf("default %v", o.Default), Value: in.ExternalOptions[n][k],
			})
		}
		out = append(out, s)
	}
	return out
}

// dropRepeats removes from probs the system-axis problems whose message
// is shown on an option's field already.
func dropRepeats(probs []grid.Problem, shown map[string]bool) []grid.Problem {
	var out []grid.Problem
	for _, p := range probs {
		if p.Field == grid.AxisSystem && shown[p.Message] {
			continue
		}
		out = append(out, p)
	}
	return out
}
