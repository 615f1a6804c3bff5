package web

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"outcore/engine/dataset"
	"outcore/engine/vocab"
	"outcore/experiments/external"
	"outcore/experiments/grid"
	"outcore/report"
	"outcore/web/views"
)

// Variants lists the variants the engine has registered, in display order.
func Variants() []string { return report.VariantOrder() }

// variantNote describes a registered variant in one line: its paper and
// what it does (vocab.Variant).
func variantNote(name string) string {
	v, ok := vocab.LookupVariant(name)
	if !ok {
		return ""
	}
	if v.Paper == "" {
		return name + ": " + v.Summary
	}
	return v.Paper + ": " + v.Summary
}

// defaultVariants are the variants the new-experiment form starts with:
// the first two paper variants in display order, the papers' common
// baseline (pyg+) and the system it was first the baseline of (Ginex
// §5.1). Both start below the features of the default dataset at the
// example's batch and fanout, so the form's first grid goes out of core.
func defaultVariants() []string {
	var papers []string
	for _, v := range vocab.Variants() {
		if v.Paper != "" && v.Name != vocab.ReferenceName {
			papers = append(papers, v.Name)
		}
	}
	return papers[:min(2, len(papers))]
}

// Models the form offers.
var Models = grid.Models

// FormInput is the new-experiment form as submitted, before validation.
type FormInput struct {
	Name        string
	DatasetMode string // "existing" or "generate"
	Dataset     string
	Preset      string
	NewDataset  string
	Variants    []string
	MemLimits   string
	Dims        string
	Batches     string
	Model       string
	Fanouts     string
	Compute     string // comma-separated compute modes ("" = cpu): cpu, none, model:PROFILE
	// Frontier makes the experiment a memory-frontier search
	// (experiments/frontier.go): the memory limits are probed, not listed.
	Frontier bool
	Epochs   string
	Repeats  string
	// RunOrder is the grid's run_order ("" = grid order;
	// experiments/grid/run_order.go).
	RunOrder string
	// SkipInfeasible: queue the cells that can start, record the others
	// as refused (the grid's "skip_infeasible").
	SkipInfeasible bool
	// Testbeds are the testbeds chosen (form_testbed.go; none or
	// this-host alone: this host as it is).
	Testbeds []string
	// IDs are the node numberings ticked (form_ids.go; none: the
	// dataset's own ids, no axis).
	IDs []string
	// OptionAxes are the variant options varied as axes: option key →
	// its comma-separated values (form fields "axis.options.KEY"; the
	// grid's "options.KEY" axes).
	OptionAxes map[string]string
	// ExternalOptions are the external systems' option fields as given:
	// system name → option key → comma-separated values (form fields
	// "ext.NAME.KEY"; form_external.go).
	ExternalOptions map[string]map[string]string
}

// OptionAxisField prefixes the form field of a variant option's axis:
// "axis.options.window".
const OptionAxisField = "axis." + grid.OptionsPrefix

// optionAxisOffers lists each option any variant declares once, in the
// variants' display order, with the variants that declare it: the form's
// optional option axes.
func optionAxisOffers(in FormInput) []views.OptionAxis {
	var out []views.OptionAxis
	at := map[string]int{}
	for _, name := range Variants() {
		v, ok := vocab.LookupVariant(name)
		if !ok {
			continue
		}
		for _, o := range v.Options {
			i, seen := at[o.Key]
			if !seen {
				i = len(out)
				at[o.Key] = i
				out = append(out, views.OptionAxis{Field: OptionAxisField + o.Key, Key: o.Key, Help: o.Help, Value: in.OptionAxes[o.Key]})
			}
			out[i].Variants = append(out[i].Variants, name)
		}
	}
	return out
}

// FormEnv answers what the form decides itself (the dataset choice) and
// checks the grid it builds. Check is the one validation every grid goes
// through, whatever its source (experiments.Manager.Check): the form's
// preview, its submit and the JSON API give the same answers.
type FormEnv struct {
	// Exists reports whether a dataset of that name is in the data directory.
	Exists func(name string) bool
	// Preset returns the meta a preset would generate, false if unknown.
	Preset func(name string) (dataset.Meta, bool)
	// ValidName checks a new dataset name (nil = valid).
	ValidName func(name string) error
	// Check lists the grid's problems; pending names a dataset the form
	// will generate before the experiment is created.
	Check func(g *grid.Grid, pending map[string]dataset.Meta) []grid.Problem
	// External is the operator's registry of external systems (nil =
	// none): the form's fields of their options are checked against it.
	External *external.Registry
}

// formFields maps grid keys (grid.Problem.Field) to form fields.
var formFields = map[string]string{
	"name": "name", "dataset": "dataset", grid.AxisSystem: "variants", grid.AxisMemLimit: "mem_limits",
	grid.AxisFeatureDim: "dims", grid.AxisBatchSize: "batches", grid.AxisModel: "model",
	grid.AxisFanout: "fanouts", grid.AxisCompute: "compute", "axes": "option_axes", "options": "option_axes", "frontier": "frontier", "epochs": "epochs", grid.AxisRepeat: "repeats", grid.AxisIDs: IDsField,
	"testbed": TestbedField,
}

// formField is the form field a problem is about ("" = the whole form).
func formField(p grid.Problem, generate bool) string {
	f := formFields[p.Field]
	if f == "dataset" && generate {
		return "new_dataset"
	}
	return f
}

// ValidateForm reads the form into an grid.Grid and checks it with
// env.Check. errs maps form field names to what is wrong, in words (all
// problems of a field, joined); it is empty when the grid is valid. The
// grid is nil only when the form could not be read into one.
func ValidateForm(in FormInput, env FormEnv) (*grid.Grid, map[string]string) {
	errs := map[string]string{}
	addErr := func(field, msg string) {
		if prev := errs[field]; prev != "" {
			msg = prev + "; " + msg
		}
		errs[field] = msg
	}
	var pending map[string]dataset.Meta
	dsName := ""
	generate := false
	switch in.DatasetMode {
	case "generate":
		generate = true
		meta, ok := env.Preset(in.Preset)
		if !ok {
			addErr("preset", fmt.Sprintf("preset: unknown preset %q (have %s)", in.Preset, strings.Join(dataset.PresetNames(), ", ")))
		}
		nd := strings.TrimSpace(in.NewDataset)
		switch {
		case nd == "":
			addErr("new_dataset", "new dataset: give the generated dataset a name")
		case env.ValidName(nd) != nil:
			addErr("new_dataset", "new dataset: "+env.ValidName(nd).Error())
		case env.Exists(nd):
			addErr("new_dataset", fmt.Sprintf("new dataset: %q exists already; pick another name or use it as an existing dataset", nd))
		case ok:
			meta.Name = nd
			pending = map[string]dataset.Meta{nd: meta}
		}
		dsName = nd
	case "existing", "":
		if in.Dataset == "" {
			addErr("dataset", "dataset: choose a dataset (or generate one from a preset)")
		} else if !env.Exists(in.Dataset) {
			addErr("dataset", fmt.Sprintf("dataset: no dataset named %q in the data directory", in.Dataset))
		}
		dsName = in.Dataset
	default:
		addErr("dataset", fmt.Sprintf("dataset: unknown choice %q", in.DatasetMode))
	}

	systems, extErrs, extShown, extBad := externalEntries(in.Variants, in.ExternalOptions, env.External)
	for k, msg := range extErrs {
		addErr(k, msg)
	}
	for _, msg := range extBad {
		addErr("variants", msg)
	}
	axes := grid.Axes{System: systems, Model: []string{in.Model}}
	if len(in.Variants) == 0 {
		addErr("variants", "variants: tick at least one")
	}
	switch lims := splitList(in.MemLimits); {
	case in.Frontier:
		// the memory limits are probed (experiments/frontier.go)
	case len(lims) > 0:
		axes.MemLimit = lims
	default:
		// An empty field must not silently mean "no limit" (an experiment
		// that is not out of core): that is asked for with "none".
		addErr("mem_limits", `memory limits: give at least one (a size, a percentage of the features, or "none" for no limit)`)
	}
	if modes := splitList(in.Compute); len(modes) > 0 {
		axes.Compute = modes
	}
	keys := make([]string, 0, len(in.OptionAxes))
	for k := range in.OptionAxes {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		ax := grid.PathAxis{Path: grid.OptionsPrefix + k}
		for _, val := range splitList(in.OptionAxes[k]) {
			b, _ := json.Marshal(val)
			ax.Values = append(ax.Values, b)
		}
		if len(ax.Values) > 0 {
			axes.Extra = append(axes.Extra, ax)
		}
	}
	var err error
	if axes.FeatureDim, err = parseInts(in.Dims); err != nil {
		addErr("dims", "feature dimensions: "+err.Error())
	}
	// An empty batch or fanout field is an error: it must not silently
	// become the engine's default (the grid would not be the form's).
	if axes.BatchSize, err = parseInts(in.Batches); err != nil {
		addErr("batches", "batch sizes: "+err.Error())
	} else if len(axes.BatchSize) == 0 {
		addErr("batches", fmt.Sprintf("batch sizes: give at least one (e.g. %d)", ExampleBatch))
	}
	if axes.Fanout, err = parseFanouts(in.Fanouts); err != nil {
		addErr("fanouts", "fanouts: "+err.Error())
	} else if len(axes.Fanout) == 0 {
		addErr("fanouts", fmt.Sprintf("fanouts: give at least one (e.g. %s: neighbours per layer, outermost first)", grid.FormatFanout(ExampleFanout())))
	}
	base := map[string]any{}
	if msg := formTestbeds(in.Testbeds, base, &axes); msg != "" {
		addErr(TestbedField, msg)
	}
	if msg := formIDs(in.IDs, &axes); msg != "" {
		addErr(IDsField, msg)
	}
	if n, err := parseWhole(in.Epochs); err != nil {
		addErr("epochs", "epochs: "+err.Error())
	} else {
		base["epochs"] = n
	}
	if n, err := parseWhole(in.Repeats); err != nil {
		addErr("repeats", "repeats: "+err.Error())
	} else {
		axes.Repeat = n
	}
	g, err := grid.NewGrid(strings.TrimSpace(in.Name), dsName, base, axes)
	if err != nil {
		addErr("", err.Error())
		return nil, errs
	}
	if in.Frontier {
		g.Frontier = &grid.FrontierSpec{}
		g.Raw = g.JSON()
	}
	if ro := strings.TrimSpace(in.RunOrder); ro != "" && ro != grid.OrderGrid {
		if !slices.Contains(grid.RunOrders, ro) {
			addErr("run_order", fmt.Sprintf("run order: %q is not one of %s", ro, strings.Join(grid.RunOrders, ", ")))
		} else {
			g.RunOrder = ro
			g.Raw = g.JSON()
		}
	}
	if in.SkipInfeasible {
		g.SkipInfeasible = true
		g.Raw = g.JSON()
	}
	var probs []grid.Problem
	if errs["dataset"] != "" || errs["new_dataset"] != "" || errs["preset"] != "" {
		probs = g.Problems() // the dataset is unknown: its checks would only repeat that
	} else {
		probs = dropRepeats(env.Check(g, pending), extShown)
	}
	for _, p := range probs {
		f := formField(p, generate)
		if f == "variants" && len(in.Variants) == 0 {
			continue
		}
		if _, bad := errs[f]; bad && (f == "epochs" || f == "repeats" || f == "dims" || f == "batches" || f == "fanouts") {
			continue // the text did not parse; its value is not the user's
		}
		addErr(f, p.Message)
	}
	return g, errs
}

// Factors describes a grid's expansion in words: "3 variants × 2 memory
// limits × 2 repeats".
func Factors(g *grid.Grid) string {
	if g == nil {
		return ""
	}
	part := func(n int, one, many string) string {
		if n == 1 {
			return "1 " + one
		}
		return strconv.Itoa(n) + " " + many
	}
	a := g.Axes
	parts := []string{part(len(a.System), "variant", "variants")}
	if n := len(a.Model); n > 1 {
		parts = append(parts, part(n, "model", "models"))
	}
	if n := len(a.MemLimit); n > 0 {
		parts = append(parts, part(n, "memory limit", "memory limits"))
	}
	if n := len(a.FeatureDim); n > 0 {
		parts = append(parts, part(n, "dimension", "dimensions"))
	}
	if n := len(a.BatchSize); n > 0 {
		parts = append(parts, part(n, "batch size", "batch sizes"))
	}
	if n := len(a.Fanout); n > 0 {
		parts = append(parts, part(n, "fanout", "fanouts"))
	}
	if n := len(a.Compute); n > 0 {
		parts = append(parts, part(n, "compute mode", "compute modes"))
	}
	if n := len(a.IDs); n > 0 {
		parts = append(parts, part(n, "id numbering", "id numberings"))
	}
	for _, ax := range a.Extra {
		parts = append(parts, fmt.Sprintf("%d × %s", len(ax.Values), ax.Path))
	}
	parts = append(parts, part(max(1, a.Repeat), "repeat", "repeats"))
	if g.Frontier != nil {
		parts = append(parts, "memory-frontier probes (about 5–12 runs per variant, added as they end)")
	}
	return strings.Join(parts, " × ")
}

// splitList splits a comma-separated list, dropping empty items.
func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// parseWhole reads one whole number (its range is the grid's check).
func parseWhole(s string) (int, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, errors.New("required")
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0, fmt.Errorf("%q is not a whole number", s)
	}
	return n, nil
}

// parseInts reads a comma-separated list of whole numbers; empty = none.
func parseInts(s string) ([]int, error) {
	var out []int
	for _, it := range splitList(s) {
		n, err := strconv.Atoi(it)
		if err != nil {
			return nil, fmt.Errorf("%q is not a whole number", it)
		}
		out = append(out, n)
	}
	return out, nil
}

// parseFanouts reads fanouts separated by ';' (or new lines), each a comma
// list of per-layer counts.
func parseFanouts(s string) ([][]int, error) {
	s = strings.ReplaceAll(s, "\n", ";")
	var out [][]int
	for _, f := range strings.Split(s, ";") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		var layers []int
		for _, l := range strings.Split(f, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(l))
			if err != nil {
				return nil, fmt.Errorf("%q: each layer's fanout is a whole number (or -1 for all neighbours)", f)
			}
			layers = append(layers, n)
		}
		out = append(out, layers)
	}
	return out, nil
}
