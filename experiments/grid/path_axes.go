package grid

// Axes over any configuration path (issue 34 item 4). Besides the named
// axes (system, model, ...), a grid's "axes" may vary any run setting by
// its JSON key ("device_mem": ["1GiB", "4GiB"], "eval_every": [1, 5]) or
// a variant option by "options.KEY" ("options.window": [0, 4, 8]). Each
// value is checked as that key would be in the grid's base settings; an
// option axis must be an option of every variant of the grid. A cell
// carries its values into its run's configuration (runConfig), and the
// run's cell is read back from its stored configuration (store.Run.Cell).

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"outcore/engine/vocab"
)

// OptionsPrefix starts an axis over a variant option: "options.window".
const OptionsPrefix = "options."

// PathAxis is an axis over one configuration path.
type PathAxis struct {
	// Path is a run setting's JSON key ("device_mem") or "options.KEY".
	Path string
	// Values are the axis values as given (compact JSON). An option's
	// value may be written as a string, a number or true/false.
	Values []json.RawMessage
}

// AxisValue is a cell's value on a PathAxis.
type AxisValue struct {
	Path  string
	Value json.RawMessage
}

// namedOrFixed are the configuration keys that are not path axes: the
// named axes (system, model, fanout, batch, compute, mem_limit) and the
// keys a grid sets otherwise (dataset, options as a whole).
var namedOrFixed = []string{"dataset", "options", "system", "model", "fanout", "batch", "compute", "mem_limit", "ids"}

// PathAxisKeys are the run settings an axis may vary by their key.
func PathAxisKeys() []string {
	var out []string
	for _, k := range configKeys() {
		if !slices.Contains(namedOrFixed, k) {
			out = append(out, k)
		}
	}
	return out
}

// IsOptionPath reports whether path names a variant option, and its key.
func IsOptionPath(path string) (string, bool) {
	k, ok := strings.CutPrefix(path, OptionsPrefix)
	return k, ok && k != ""
}

// isPathAxis reports whether an axes key is a configuration path.
func isPathAxis(path string) bool {
	if _, ok := IsOptionPath(path); ok {
		return true
	}
	return slices.Contains(PathAxisKeys(), path)
}

// OptionString is an option axis value as the configuration's option
// string: a string as it is, a number as written, true/false.
func OptionString(v json.RawMessage) (string, bool) {
	var s string
	if json.Unmarshal(v, &s) == nil {
		return s, true
	}
	var b bool
	if json.Unmarshal(v, &b) == nil {
		return strconv.FormatBool(b), true
	}
	var n json.Number
	dec := json.NewDecoder(bytes.NewReader(v))
	dec.UseNumber()
	if dec.Decode(&n) == nil {
		return n.String(), true
	}
	return "", false
}

// parsePathAxis reads the values of a path axis.
func parsePathAxis(path string, v json.RawMessage, a *Axes, ps *ProblemList) {
	field := "axes"
	if !isPathAxis(path) {
		ps.Add(field, "axes: %q is not an axis nor a setting of a run (axes are %s; or any run setting: %s; or options.KEY for a variant option)",
			path, strings.Join(AxisNames, ", "), strings.Join(PathAxisKeys(), ", "))
		return
	}
	var items []json.RawMessage
	if err := json.Unmarshal(v, &items); err != nil || len(items) == 0 {
		ps.Add(field, "axes: %q: want a non-empty list of values", path)
		return
	}
	ax := PathAxis{Path: path}
	for _, it := range items {
		var c bytes.Buffer
		if err := json.Compact(&c, it); err != nil {
			ps.Add(field, "axes: %q: %v", path, err)
			continue
		}
		ax.Values = append(ax.Values, c.Bytes())
	}
	a.Extra = append(a.Extra, ax)
	sort.Slice(a.Extra, func(i, j int) bool { return a.Extra[i].Path < a.Extra[j].Path })
}

// pathAxisProblems checks the path axes against the limits and each
// value as the key would be checked in the grid's base settings (option
// values against their variants: OptionAxisProblems).
func pathAxisProblems(g *Grid) []Problem {
	var ps ProblemList
	var baseOpts map[string]string
	if raw, ok := g.Base["options"]; ok {
		_ = json.Unmarshal(raw, &baseOpts)
	}
	for _, ax := range g.Axes.Extra {
		if len(ax.Values) > MaxAxisValues {
			ps.Add("axes", "axes: %q: %d values, at most %d", ax.Path, len(ax.Values), MaxAxisValues)
		}
		seen := map[string]bool{}
		key, isOpt := IsOptionPath(ax.Path)
		if isOpt {
			if _, both := baseOpts[key]; both {
				ps.Add("axes", "axes: %q: given both in \"options\" and as an axis; keep one", ax.Path)
			}
		} else if _, both := g.Base[ax.Path]; both {
			ps.Add("axes", "axes: %q: given both at the top level and as an axis; keep one", ax.Path)
		}
		for _, v := range ax.Values {
			if msg := pathValueProblem(ax.Path, v); msg != "" {
				ps.Add("axes", "axes: %q: %s", ax.Path, msg)
				continue
			}
			k := string(v)
			if isOpt {
				k, _ = OptionString(v)
			}
			if seen[k] {
				ps.Add("axes", "axes: %q: %s is listed twice", ax.Path, truncateRaw(v))
			}
			seen[k] = true
		}
	}
	return ps
}

// pathValueProblem checks one value of a path axis alone ("" when it is
// fine): its type, its range, and what the configuration's Validate says
// of that key.
func pathValueProblem(path string, v json.RawMessage) string {
	if _, isOpt := IsOptionPath(path); isOpt {
		if _, ok := OptionString(v); !ok {
			return fmt.Sprintf("%s is not an option value (a string, a number or true/false)", truncateRaw(v))
		}
		return ""
	}
	var msgs []string
	for _, p := range baseProblems(map[string]json.RawMessage{path: v}) {
		msgs = append(msgs, strings.TrimPrefix(p.Message, path+": "))
	}
	if len(msgs) > 0 {
		return strings.Join(msgs, "; ")
	}
	cfg := vocab.DefaultConfig()
	b, _ := json.Marshal(map[string]json.RawMessage{path: v})
	_ = json.Unmarshal(b, &cfg)
	cfg.Dataset = "axis-check"
	if err := cfg.Validate(); err != nil {
		msg := strings.TrimPrefix(err.Error(), vocab.ErrConfig.Error()+": ")
		if rest, ok := strings.CutPrefix(msg, path+": "); ok {
			return fmt.Sprintf("%s: %s", truncateRaw(v), rest)
		}
	}
	return ""
}

// OptionAxisProblems checks the option axes against the grid's variants:
// each must be an option of every variant (naming those that lack it),
// each value one the option takes, and no variant entry may set the
// option too. (*Manager).Check and Plan report them.
func OptionAxisProblems(g *Grid) []Problem {
	var ps ProblemList
	systems := g.Axes.System
	if systems == nil {
		systems = []string{vocab.DefaultConfig().System}
	}
	var baseOpts map[string]string
	if raw, ok := g.Base["options"]; ok {
		_ = json.Unmarshal(raw, &baseOpts)
	}
	for _, ax := range g.Axes.Extra {
		key, isOpt := IsOptionPath(ax.Path)
		if !isOpt {
			continue
		}
		var lack []string
		for _, s := range systems {
			e, err := ParseSystemEntry(s)
			if err != nil {
				continue // reported with the variants
			}
			v, ok := vocab.LookupVariant(e.Variant)
			if !ok {
				continue
			}
			if _, declared := v.Option(key); !declared {
				its := "it has none"
				if len(v.Options) > 0 {
					its = "its options are " + strings.Join(v.OptionKeys(), ", ")
				}
				lack = append(lack, fmt.Sprintf("%s has no option %q (%s)", e.Variant, key, its))
				continue
			}
			if _, set := e.Options[key]; set {
				ps.Add("axes", "axes: %q: the variant entry %q sets it too; keep one", ax.Path, s)
				continue
			}
			for _, val := range ax.Values {
				str, ok := OptionString(val)
				if !ok {
					continue // reported by Problems
				}
				cfg := vocab.DefaultConfig()
				cfg.Dataset, cfg.System = "axis-check", e.Variant
				cfg.Options = map[string]string{}
				for k, o := range baseOpts {
					cfg.Options[k] = o
				}
				for k, o := range e.Options {
					cfg.Options[k] = o
				}
				cfg.Options[key] = str
				if err := cfg.Validate(); err != nil {
					msg := strings.TrimPrefix(err.Error(), vocab.ErrConfig.Error()+": ")
					if rest, ok := strings.CutPrefix(msg, ax.Path+": "); ok {
						ps.Add("axes", "axes: %q: %s (%s)", ax.Path, rest, e.Variant)
					}
				}
			}
		}
		if len(lack) > 0 {
			ps.Add("axes", "axes: %q: %s; an option axis must be an option of every variant of the grid", ax.Path, strings.Join(lack, "; "))
		}
	}
	return ps
}

// applyPathValues sets a cell's path-axis values in a run's settings m
// (the keys of vocab.Config's JSON).
func applyPathValues(m map[string]any, vals []AxisValue) error {
	for _, av := range vals {
		if key, isOpt := IsOptionPath(av.Path); isOpt {
			s, ok := OptionString(av.Value)
			if !ok {
				return fmt.Errorf("axes: %q: %s is not an option value", av.Path, truncateRaw(av.Value))
			}
			opts := map[string]string{}
			switch cur := m["options"].(type) {
			case map[string]string:
				for k, v := range cur {
					opts[k] = v
				}
			case json.RawMessage:
				if err := json.Unmarshal(cur, &opts); err != nil {
					return fmt.Errorf("options: %v", err)
				}
			}
			opts[key] = s
			m["options"] = opts
			continue
		}
		m[av.Path] = av.Value
	}
	return nil
}

// JSON is the cell's values on the grid's path axes as a JSON object,
// {"device_mem":"2GiB","options.window":4}; "{}" without path axes.
func (c Cell) JSON() json.RawMessage {
	m := map[string]json.RawMessage{}
	for _, av := range c.Extra {
		m[av.Path] = av.Value
	}
	b, _ := json.Marshal(m)
	return b
}

// CellWords writes a run's cell (store.Run.Cell) for people:
// "device_mem=2GiB options.window=4" ("" for "" or "{}").
func CellWords(cell string) string {
	var m map[string]json.RawMessage
	if json.Unmarshal([]byte(cell), &m) != nil || len(m) == 0 {
		return ""
	}
	parts := make([]string, 0, len(m))
	for _, k := range sortedKeys(m) {
		v := string(m[k])
		if s, ok := OptionString(m[k]); ok {
			v = s
		}
		parts = append(parts, k+"="+v)
	}
	return strings.Join(parts, " ")
}
