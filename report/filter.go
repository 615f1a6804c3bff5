package report

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode"

	"outcore/internal/units"
	"outcore/store"
)

// The filter bar of the experiment list and an experiment's queue (DESIGN
// §6): `system=ginex outcome=oom limit<128MiB tag=paper "free text"`.
//
//	query := term (space term)*
//	term  := key op value | value
//	op    := = | != | < | <= | > | >= | ~      (~: contains, any case)
//	value := a word, or "a quoted string" with \" and \\ escapes
//
// Run keys (system, outcome, limit, dim, batch, repeat, model, fanout,
// epoch_s, val) select runs; an experiment matches when one of its current
// runs meets them all. Experiment keys (name, tag, dataset, state, id)
// and free text (name, dataset, notes, tags, variants) select experiments.

// ErrFilter wraps every error of ParseFilter.
var ErrFilter = errors.New("filter")

// filterKey is one key of the filter language.
type filterKey struct {
	name    string   // canonical key
	aliases []string // other spellings
	run     bool     // a run field (store.Cond) rather than an experiment's
	field   string   // the store.RunFields field of a run key
	kind    string   // "text", "enum", "bytes", "int", "float"
	help    string
}

var filterKeys = []filterKey{
	{name: "system", aliases: []string{"variant"}, run: true, field: "system", kind: "text", help: "variant name"},
	{name: "outcome", aliases: []string{"status"}, run: true, field: "status", kind: "enum", help: "run status"},
	{name: "limit", aliases: []string{"mem_limit", "mem"}, run: true, field: "mem_limit", kind: "bytes", help: "memory limit (128MiB, 1GiB, none)"},
	{name: "dim", run: true, field: "dim", kind: "int", help: "feature dimension"},
	{name: "batch", run: true, field: "batch", kind: "int", help: "batch size"},
	{name: "repeat", run: true, field: "repeat", kind: "int", help: "repeat index"},
	{name: "model", run: true, field: "model", kind: "text", help: "GNN model"},
	{name: "fanout", run: true, field: "fanout", kind: "text", help: "fanout, e.g. 10,5"},
	{name: "epoch_s", aliases: []string{"epoch"}, run: true, field: "mean_epoch_s", kind: "float", help: "mean steady epoch time (s)"},
	{name: "val", aliases: []string{"best_val"}, run: true, field: "best_val", kind: "float", help: "best validation accuracy"},
	{name: "name", kind: "text", help: "experiment name"},
	{name: "tag", kind: "text", help: "experiment tag"},
	{name: "dataset", kind: "text", help: "dataset name"},
	{name: "state", kind: "enum", help: "experiment state"},
	{name: "id", kind: "int", help: "experiment id"},
}

// experimentStates are the values of state=.
var experimentStates = []string{"empty", "queued", "running", "finished", store.StatusCancelled, store.StatusInterrupted}

// FilterKeys names the filter's keys for help texts: "system (variant name), ...".
func FilterKeys() string {
	var parts []string
	for _, k := range filterKeys {
		parts = append(parts, k.name+" ("+k.help+")")
	}
	return strings.Join(parts, ", ")
}

// Term is one parsed condition: Key op Value, or free Text when Key is "".
type Term struct {
	Key   string
	Op    string
	Value string  // as written (unquoted)
	Num   float64 // the value as a number, for numeric keys (bytes for limit)
	Text  string  // free text
}

// Filter is a parsed filter query.
type Filter struct {
	Terms []Term
}

// ParseFilter parses a filter query; the error wraps ErrFilter and says
// what is wrong and where.
func ParseFilter(q string) (Filter, error) {
	var f Filter
	toks, err := lexFilter(q)
	if err != nil {
		return f, err
	}
	for _, tk := range toks {
		if tk.op == "" {
			f.Terms = append(f.Terms, Term{Text: tk.value})
			continue
		}
		k, ok := lookupKey(tk.key)
		if !ok {
			var names []string
			for _, k := range filterKeys {
				names = append(names, k.name)
			}
			return Filter{}, fmt.Errorf("%w: unknown key %q (known: %s)", ErrFilter, tk.key, strings.Join(names, ", "))
		}
		t := Term{Key: k.name, Op: tk.op, Value: tk.value}
		if tk.value == "" {
			return Filter{}, fmt.Errorf("%w: %s%s needs a value", ErrFilter, tk.key, tk.op)
		}
		numeric := k.kind == "bytes" || k.kind == "int" || k.kind == "float"
		if !numeric && tk.op != "=" && tk.op != "!=" && !(tk.op == "~" && k.kind == "text") {
			return Filter{}, fmt.Errorf("%w: %s takes = or !=%s, not %s", ErrFilter, k.name, map[bool]string{true: " or ~", false: ""}[k.kind == "text"], tk.op)
		}
		if numeric && tk.op == "~" {
			return Filter{}, fmt.Errorf("%w: %s is a number: use =, !=, <, <=, > or >=", ErrFilter, k.name)
		}
		switch k.kind {
		case "bytes":
			if strings.EqualFold(tk.value, "none") {
				t.Num = 0
				break
			}
			b, err := units.ParseMemLimit(tk.value, 0)
			if err != nil || b <= 0 {
				return Filter{}, fmt.Errorf("%w: %s: %q is not a size (e.g. 128MiB, 1GiB, none)", ErrFilter, k.name, tk.value)
			}
			t.Num = float64(b)
		case "int":
			n, err := strconv.ParseInt(tk.value, 10, 64)
			if err != nil {
				return Filter{}, fmt.Errorf("%w: %s: %q is not a whole number", ErrFilter, k.name, tk.value)
			}
			t.Num = float64(n)
		case "float":
			v, err := strconv.ParseFloat(tk.value, 64)
			if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
				return Filter{}, fmt.Errorf("%w: %s: %q is not a number", ErrFilter, k.name, tk.value)
			}
			t.Num = v
		case "enum":
			t.Value = strings.ToLower(tk.value)
			known := store.Statuses
			if k.name == "state" {
				known = experimentStates
			}
			if !slices.Contains(known, t.Value) {
				return Filter{}, fmt.Errorf("%w: %s: %q is not one of %s", ErrFilter, k.name, tk.value, strings.Join(known, ", "))
			}
		}
		f.Terms = append(f.Terms, t)
	}
	return f, nil
}

func lookupKey(name string) (filterKey, bool) {
	name = strings.ToLower(name)
	for _, k := range filterKeys {
		if k.name == name || slices.Contains(k.aliases, name) {
			return k, true
		}
	}
	return filterKey{}, false
}

// token is a lexed term: key op value, or a bare value.
type token struct{ key, op, value string }

// lexFilter splits a query into terms.
func lexFilter(q string) ([]token, error) {
	var out []token
	r := []rune(q)
	i := 0
	for {
		for i < len(r) && unicode.IsSpace(r[i]) {
			i++
		}
		if i == len(r) {
			return out, nil
		}
		start := i
		// A key: letters, digits and _, followed by an operator.
		j := i
		for j < len(r) && (r[j] == '_' || unicode.IsLetter(r[j]) || unicode.IsDigit(r[j])) {
			j++
		}
		op := ""
		if j > i && j < len(r) {
			for _, o := range []string{"!=", "<=", ">=", "=", "<", ">", "~"} {
				if strings.HasPrefix(string(r[j:min(len(r), j+2)]), o) {
					op = o
					break
				}
			}
		}
		var tk token
		if op != "" {
			tk.key, tk.op = string(r[i:j]), op
			i = j + len([]rune(op))
		}
		v, n, err := lexValue(r, i)
		if err != nil {
			return nil, fmt.Errorf("%w: at character %d: %v", ErrFilter, start+1, err)
		}
		tk.value, i = v, n
		if tk.op == "" && tk.value == "" {
			return nil, fmt.Errorf("%w: at character %d: %q is not a term", ErrFilter, start+1, string(r[start]))
		}
		out = append(out, tk)
	}
}

// lexValue reads a bare word or a quoted string starting at i.
func lexValue(r []rune, i int) (string, int, error) {
	if i < len(r) && r[i] == '"' {
		var b strings.Builder
		for j := i + 1; j < len(r); j++ {
			switch r[j] {
			case '\\':
				if j+1 == len(r) {
					return "", 0, errors.New("a backslash ends the query")
				}
				j++
				b.WriteRune(r[j])
			case '"':
				return b.String(), j + 1, nil
			default:
				b.WriteRune(r[j])
			}
		}
		return "", 0, errors.New("unterminated quote")
	}
	j := i
	for j < len(r) && !unicode.IsSpace(r[j]) {
		if r[j] == '"' {
			return "", 0, errors.New(`a quote inside a word (quote the whole value: key="a b")`)
		}
		j++
	}
	return string(r[i:j]), j, nil
}

// quoteValue writes a value so that ParseFilter reads it back; free text
// is quoted also when it holds an operator (it would read as a term).
func quoteValue(v string, free bool) string {
	if v != "" && !strings.ContainsAny(v, "\"\\") && !strings.ContainsFunc(v, unicode.IsSpace) && !(free && strings.ContainsAny(v, "=<>~!")) {
		return v
	}
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(v) + `"`
}

// String writes the filter back as a query ParseFilter reads as f.
func (f Filter) String() string {
	var parts []string
	for _, t := range f.Terms {
		if t.Key == "" {
			parts = append(parts, quoteValue(t.Text, true))
			continue
		}
		parts = append(parts, t.Key+t.Op+quoteValue(t.Value, false))
	}
	return strings.Join(parts, " ")
}

// RunConds are the filter's run conditions for the store.
func (f Filter) RunConds() []store.Cond {
	var out []store.Cond
	for _, t := range f.Terms {
		k, ok := lookupKey(t.Key)
		if !ok || !k.run {
			continue
		}
		c := store.Cond{Field: k.field, Op: t.Op, Value: t.Value}
		switch k.kind {
		case "bytes", "int":
			c.Value = int64(t.Num)
		case "float":
			c.Value = t.Num
		}
		out = append(out, c)
		// A run without a limit (0) is not below any limit.
		if k.kind == "bytes" && (t.Op == "<" || t.Op == "<=") {
			out = append(out, store.Cond{Field: k.field, Op: ">", Value: int64(0)})
		}
	}
	return out
}

// OnlyRunTerms reports whether every term is a run key (no experiment
// key, no free text): what filters one experiment's runs.
func (f Filter) OnlyRunTerms() bool {
	for _, t := range f.Terms {
		if k, ok := lookupKey(t.Key); !ok || !k.run {
			return false
		}
	}
	return true
}

// MatchExperiment reports whether e meets the filter's experiment terms
// and free text (run terms are the store's: ExperimentsWithRuns).
func (f Filter) MatchExperiment(e store.Experiment, state string) bool {
	for _, t := range f.Terms {
		if t.Key == "" {
			hay := strings.ToLower(strings.Join(append(append([]string{e.Name, e.Dataset, e.Notes}, e.Tags...), e.Systems...), "\n"))
			if !strings.Contains(hay, strings.ToLower(t.Text)) {
				return false
			}
			continue
		}
		var ok bool
		switch t.Key {
		case "name":
			ok = matchText(e.Name, t)
		case "dataset":
			ok = matchText(e.Dataset, t)
		case "state":
			ok = (state == t.Value) == (t.Op == "=")
		case "id":
			ok = compare(float64(e.ID), t.Op, t.Num)
		case "tag":
			has := false
			for _, tag := range e.Tags {
				has = has || matchText(tag, Term{Op: map[bool]string{true: "~", false: "="}[t.Op == "~"], Value: t.Value})
			}
			ok = has == (t.Op != "!=")
		default:
			continue // a run term
		}
		if !ok {
			return false
		}
	}
	return true
}

func matchText(s string, t Term) bool {
	switch t.Op {
	case "~":
		return strings.Contains(strings.ToLower(s), strings.ToLower(t.Value))
	case "!=":
		return !strings.EqualFold(s, t.Value)
	}
	return strings.EqualFold(s, t.Value)
}

func compare(a float64, op string, b float64) bool {
	switch op {
	case "=":
		return a == b
	case "!=":
		return a != b
	case "<":
		return a < b
	case "<=":
		return a <= b
	case ">":
		return a > b
	case ">=":
		return a >= b
	}
	return false
}

// SortExperiments orders experiments by key ("created", "name", "runs",
// "id"; a leading "-" reverses), newest first by default; an unknown key
// is an error naming the known ones.
func SortExperiments(exps []store.Experiment, key string) error {
	desc := strings.HasPrefix(key, "-")
	key = strings.TrimPrefix(key, "-")
	var less func(a, b store.Experiment) bool
	switch key {
	case "", "created":
		less = func(a, b store.Experiment) bool {
			if !a.CreatedAt.Equal(b.CreatedAt) {
				return a.CreatedAt.Before(b.CreatedAt)
			}
			return a.ID < b.ID
		}
		if key == "" {
			desc = true
		}
	case "name":
		less = func(a, b store.Experiment) bool { return strings.ToLower(a.Name) < strings.ToLower(b.Name) }
	case "runs":
		less = func(a, b store.Experiment) bool { return a.Counts.Total < b.Counts.Total }
	case "id":
		less = func(a, b store.Experiment) bool { return a.ID < b.ID }
	default:
		return fmt.Errorf("%w: sort by %q: want created, name, runs or id (a leading - reverses)", ErrFilter, key)
	}
	sort.SliceStable(exps, func(i, j int) bool {
		if desc {
			return less(exps[j], exps[i])
		}
		return less(exps[i], exps[j])
	})
	return nil
}

// RunSortKeys are the keys SortRuns takes (a leading "-" reverses).
var RunSortKeys = []string{"seq", "system", "limit", "status", "epoch_s", "val", "started"}

// SortRuns orders runs by key (RunSortKeys; "" keeps the grid order, a
// leading "-" reverses); runs without a value (no mean epoch time yet)
// come last either way. An unknown key is an error naming the known ones.
func SortRuns(runs []store.Run, key string) error {
	desc := strings.HasPrefix(key, "-")
	key = strings.TrimPrefix(key, "-")
	num := func(p *float64) (float64, bool) {
		if p == nil {
			return 0, false
		}
		return *p, true
	}
	var val func(r store.Run) (float64, string, bool)
	switch key {
	case "", "seq":
		val = func(r store.Run) (float64, string, bool) { return float64(r.Seq), "", true }
	case "system":
		val = func(r store.Run) (float64, string, bool) { return 0, r.System, true }
	case "status":
		val = func(r store.Run) (float64, string, bool) { return 0, r.Status, true }
	case "limit":
		val = func(r store.Run) (float64, string, bool) {
			if r.MemLimitBytes <= 0 {
				return math.Inf(1), "", true
			}
			return float64(r.MemLimitBytes), "", true
		}
	case "epoch_s":
		val = func(r store.Run) (float64, string, bool) { v, ok := num(r.MeanEpochS); return v, "", ok }
	case "val":
		val = func(r store.Run) (float64, string, bool) { v, ok := num(r.BestValAcc); return v, "", ok }
	case "started":
		val = func(r store.Run) (float64, string, bool) {
			return float64(r.StartedAt.UnixMilli()), "", !r.StartedAt.IsZero()
		}
	default:
		return fmt.Errorf("%w: sort runs by %q: want %s (a leading - reverses)", ErrFilter, key, strings.Join(RunSortKeys, ", "))
	}
	sort.SliceStable(runs, func(i, j int) bool {
		ni, si, oki := val(runs[i])
		nj, sj, okj := val(runs[j])
		if oki != okj {
			return oki // runs with a value first
		}
		if ni == nj && si == sj {
			return false
		}
		less := ni < nj || (ni == nj && si < sj)
		if desc {
			return !less
		}
		return less
	})
	return nil
}
