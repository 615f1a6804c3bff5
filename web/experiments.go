package web

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"maps"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gofiber/fiber/v2"

	"outcore/engine/accel"
	"outcore/engine/dataset"
	"outcore/engine/vocab"
	"outcore/experiments/external"
	"outcore/experiments/grid"
	"outcore/internal/units"
	"outcore/internal/version"
	"outcore/report"
	"outcore/store"
	"outcore/web/views"
)

// ExperimentsHandler serves the experiment list, the new-experiment form,
// an experiment's page and its exports.
type ExperimentsHandler struct {
	Store   Store
	Queue   Queue
	DataDir string
	Jobs    *Jobs
	Digests *report.DigestCache // finished runs' epochs, summarised once
	Charts  *chartsCache        // encoded charts by the comparison's fingerprint
	Log     *log.Logger         // panics of streamed answers
	Bundles *heavySlots         // bundle.zip downloads written at once
}

// externalSystems is the queue's registry of external systems (nil when
// the queue has none: a test's fake).
func (h *ExperimentsHandler) externalSystems() *external.Registry {
	if q, ok := h.Queue.(interface{ External() *external.Registry }); ok {
		return q.External()
	}
	return nil
}

// externalOffers are the form's choices of the registered external
// systems: "external:NAME", its help and declared options as the note.
func externalOffers(ext *external.Registry) []views.FormOption {
	var out []views.FormOption
	for _, n := range ext.Names() {
		sys, _ := ext.Lookup(n)
		var opts []string
		for _, k := range slices.Sorted(maps.Keys(sys.Options)) {
			o := sys.Options[k]
			opts = append(opts, fmt.Sprintf("%s (%s, default %v)", k, o.Type, o.Default))
		}
		note := "external system registered by the operator"
		if sys.Help != "" {
			note += ": " + sys.Help
		}
		if len(opts) > 0 {
			note += "; options " + strings.Join(opts, ", ") + " (set under External system options below)"
		}
		out = append(out, views.FormOption{Value: external.Prefix + n, Label: external.Prefix + n, Note: note})
	}
	return out
}

// idParam reads the :id route parameter.
func idParam(c *fiber.Ctx) (int64, error) {
	id, err := parseID(c.Params("id"))
	if err != nil {
		return 0, fiber.NewError(fiber.StatusBadRequest, "id: "+err.Error())
	}
	return id, nil
}

// experimentParam is the experiment the :id route parameter names (400 for
// a malformed id, the store's error for one there is not).
func experimentParam(c *fiber.Ctx, st Store) (store.Experiment, error) {
	id, err := idParam(c)
	if err != nil {
		return store.Experiment{}, err
	}
	return st.Experiment(c.UserContext(), id)
}

// streamURL is a page's live stream, resuming after the store event the page was rendered at.
func streamURL(scope string, id int64, after int64) string {
	return fmt.Sprintf("/events?%s=%d&after=%d", scope, id, after)
}

// List handles GET /experiments.
func (h *ExperimentsHandler) List(c *fiber.Ctx) error {
	ctx := c.UserContext()
	after, err := h.Store.LastEventID(ctx)
	if err != nil {
		return err
	}
	exps, err := h.Store.ListExperiments(ctx)
	if err != nil {
		return err
	}
	v := views.ListView{Filter: strings.Clone(c.Query("q")), Sort: strings.Clone(c.Query("sort")), Total: len(exps), Keys: report.FilterKeys()}
	exps, err = filterExperiments(ctx, h.Store, exps, v.Filter, v.Sort)
	if err != nil {
		if !errors.Is(err, report.ErrFilter) {
			return err
		}
		v.Problem = err.Error()
		c.Status(fiber.StatusBadRequest)
	}
	for _, e := range exps {
		v.Rows = append(v.Rows, experimentRow(e))
	}
	v.Examples = h.annotateExamples(ctx, listExamples(h.DataDir))
	p := pageMeta(c, "Experiments", "experiments")
	p.Stream = fmt.Sprintf("/events?scope=%s&after=%d", ScopeExperiments, after)
	return renderPage(c, views.ExperimentsPage(p, v))
}

// filterExperiments keeps the experiments a filter query selects, in the
// order sort asks for; a query or sort key in error keeps them all and
// says why (an error wrapping report.ErrFilter).
func filterExperiments(ctx context.Context, st Store, exps []store.Experiment, q, sortKey string) ([]store.Experiment, error) {
	f, err := report.ParseFilter(q)
	if err != nil {
		return exps, err
	}
	if err := report.SortExperiments(exps, sortKey); err != nil {
		return exps, err
	}
	var withRuns map[int64]bool
	if conds := f.RunConds(); len(conds) > 0 {
		if withRuns, err = st.ExperimentsWithRuns(ctx, conds); err != nil {
			return nil, err
		}
	}
	out := exps[:0:0]
	for _, e := range exps {
		if withRuns != nil && !withRuns[e.ID] {
			continue
		}
		if f.MatchExperiment(e, experimentState(e.Counts)) {
			out = append(out, e)
		}
	}
	return out, nil
}

// Meta handles POST /experiments/:id/meta: rename, notes and tags (form
// fields name, notes, tags: comma- or space-separated). Refused values
// re-show the page with the reason.
func (h *ExperimentsHandler) Meta(c *fiber.Ctx) error {
	id, err := idParam(c)
	if err != nil {
		return err
	}
	ctx := c.UserContext()
	m := store.ExperimentMeta{Name: strings.Clone(c.FormValue("name")), Notes: strings.Clone(c.FormValue("notes")),
		Tags: strings.FieldsFunc(c.FormValue("tags"), func(r rune) bool { return r == ',' || r == ' ' || r == ';' })}
	for i := range m.Tags {
		m.Tags[i] = strings.Clone(m.Tags[i])
	}
	err = h.Queue.SetExperimentMeta(ctx, id, m)
	if err == nil {
		return redirect(c, fmt.Sprintf("/experiments/%d", id))
	}
	if !errors.Is(err, store.ErrInvalidMeta) {
		return err
	}
	v, verr := h.experimentPage(ctx, id, "", "")
	if verr != nil {
		return verr
	}
	// The refused values go back into the edit form only: the heading,
	// the notes and the tags keep showing what is stored.
	v.Unsaved = views.Unsaved{Name: m.Name, Notes: m.Notes, Set: true}
	v.TagsText, v.MetaError = strings.Join(m.Tags, ", "), err.Error()
	c.Status(fiber.StatusUnprocessableEntity)
	p := pageMeta(c, v.Name, "experiments")
	return renderPage(c, views.ExperimentPage(p, v))
}

// formEnv answers validation's questions from the data directory; the
// grid itself is checked by the queue (the one validation of every grid).
func (h *ExperimentsHandler) formEnv() (FormEnv, []dataset.Entry) {
	entries, _ := dataset.ListEntries(h.DataDir) // an unreadable folder shows as no datasets
	return FormEnv{
		Exists: func(name string) bool {
			for _, e := range entries {
				if e.Name == name {
					return e.Err == nil
				}
			}
			return false
		},
		Preset:    presetMeta,
		ValidName: dataset.ValidateName,
		Check:     h.Queue.Check,
		External:  h.externalSystems(),
	}, entries
}

// presetMeta is the meta a preset would generate, as its configuration
// predicts it (the checks of a grid on a dataset about to be generated
// read it): nodes and dimensions exactly, edges, classes and the splits'
// sizes as expected (nodes × mean degree, nodes × each split's share), so
// that a variant's floor is sized for the dataset it will run on.
func presetMeta(name string) (dataset.Meta, bool) {
	cfg, err := dataset.Preset(name)
	if err != nil {
		return dataset.Meta{}, false
	}
	share := func(f float64) int64 { return int64(float64(cfg.Nodes) * f) }
	return dataset.Meta{Name: name, Nodes: cfg.Nodes, Edges: share(cfg.AvgDegree), FeatureDim: cfg.FeatureDim, Classes: cfg.Classes,
		Train: share(cfg.TrainFrac), Val: share(cfg.ValFrac), Test: share(cfg.TestFrac),
		Source: dataset.Source{Kind: "generator", Generator: &cfg, Preset: name}}, true
}

// defaultForm is the form as first shown: the first dataset, the
// example's batch size and fanout (ExampleBatch, ExampleFanout), two
// variants at the limits the example would pick from their floors
// (defaultLimits), the cells below a floor skipped as the example's are,
// two repeats.
func defaultForm(entries []dataset.Entry, dataDir string) FormInput {
	def := vocab.DefaultConfig()
	in := FormInput{DatasetMode: "existing", Preset: "tiny", Model: def.Model, Variants: defaultVariants(),
		MemLimits: "25%, 50%, 100%", Batches: strconv.Itoa(ExampleBatch), Fanouts: grid.FormatFanout(ExampleFanout()),
		Epochs: "3", Repeats: "2", SkipInfeasible: true}
	for _, e := range entries {
		if e.Err == nil {
			in.Dataset = e.Name
			in.MemLimits = defaultLimits(in, e.Meta, dataDir)
			break
		}
	}
	if in.Dataset == "" {
		in.DatasetMode = "generate"
		in.NewDataset = "tiny"
	}
	return in
}

// formView fills the form's view model.
func formView(in FormInput, entries []dataset.Entry, g *grid.Grid, errs map[string]string, ext *external.Registry) views.ExperimentForm {
	f := views.ExperimentForm{
		Name: in.Name, DatasetMode: in.DatasetMode, Dataset: in.Dataset, Preset: in.Preset, NewDataset: in.NewDataset,
		MemLimits: in.MemLimits, Dims: in.Dims, Batches: in.Batches, Model: in.Model, Fanouts: in.Fanouts, Compute: in.Compute, Frontier: in.Frontier,
		Epochs: in.Epochs, Repeats: in.Repeats, RunOrder: in.RunOrder, Errors: errs, SkipInfeasible: in.SkipInfeasible,
	}
	for _, e := range entries {
		label := e.Name
		if e.Err != nil {
			continue
		}
		label = fmt.Sprintf("%s — %s nodes, %d dims, %s of features", e.Name, fmtInt(e.Meta.Nodes), e.Meta.FeatureDim, units.Bytes(e.Meta.FeatureBytes()))
		f.Datasets = append(f.Datasets, views.FormOption{Value: e.Name, Label: label, Selected: e.Name == in.Dataset})
	}
	for _, p := range dataset.PresetNames() {
		f.Presets = append(f.Presets, views.FormOption{Value: p, Label: presetLabel(p), Note: dataset.PresetDoc(p), Selected: p == in.Preset})
	}
	for _, v := range Variants() {
		f.Variants = append(f.Variants, views.FormOption{Value: v, Label: v, Note: variantNote(v), Selected: contains(in.Variants, v)})
	}
	// The operator's external systems (DESIGN §14) beside the variants;
	// their declared options are inputs of their own (form_external.go).
	for _, o := range externalOffers(ext) {
		o.Selected = contains(in.Variants, o.Value)
		f.Variants = append(f.Variants, o)
	}
	for _, m := range Models {
		f.Models = append(f.Models, views.FormOption{Value: m, Label: m, Selected: m == in.Model})
	}
	f.Profiles = strings.Join(accel.ProfileNames(), ", ")
	f.OptionAxes = optionAxisOffers(in)
	f.ExternalOptions = externalOptionOffers(in, ext)
	f.Testbeds = testbedOptions(in.Testbeds)
	f.IDs = idsOptions(in.IDs)
	if g != nil {
		f.Preview = views.Preview{Runs: g.Count(), Factors: Factors(g), Skip: in.SkipInfeasible, For: previewFor(g, errs)}
	}
	if len(errs) > 0 {
		f.Preview.Problem = "Fix the fields marked in red."
		if msg := errs[""]; msg != "" {
			f.Preview.Problem = msg
		}
	}
	return f
}

// previewFor names the form a preview answers: the dataset, batch sizes
// and fanouts of its grid (those whose field did not parse left out).
func previewFor(g *grid.Grid, errs map[string]string) string {
	var parts []string
	if g.Dataset != "" {
		parts = append(parts, "on "+g.Dataset)
	}
	if tb := testbedsOf(g); tb != "" {
		parts = append(parts, tb)
	}
	if errs["batches"] == "" && len(g.Axes.BatchSize) > 0 {
		var bs []string
		for _, b := range g.Axes.BatchSize {
			bs = append(bs, strconv.Itoa(b))
		}
		parts = append(parts, "batch "+strings.Join(bs, ", "))
	}
	if errs["fanouts"] == "" && len(g.Axes.Fanout) > 0 {
		var fs []string
		for _, f := range g.Axes.Fanout {
			fs = append(fs, grid.FormatFanout(f))
		}
		parts = append(parts, "fanout "+strings.Join(fs, "; "))
	}
	return strings.Join(parts, " · ")
}

// presetLabel names a preset with its size in a few words.
func presetLabel(p string) string {
	cfg, err := dataset.Preset(p)
	if err != nil {
		return p
	}
	return fmt.Sprintf("%s — %s nodes, %d dims, %s of features", p, fmtInt(cfg.Nodes), cfg.FeatureDim, units.Bytes(cfg.Nodes*int64(cfg.FeatureDim)*4))
}

// readForm reads the submitted form (DecodeForm); a body that is no form
// is refused with 400.
func readForm(c *fiber.Ctx) (FormInput, error) {
	in, err := DecodeForm(c.Get(fiber.HeaderContentType), c.Body())
	if err != nil {
		return in, fiber.NewError(fiber.StatusBadRequest, err.Error())
	}
	return in, nil
}

// New handles GET /experiments/new.
func (h *ExperimentsHandler) New(c *fiber.Ctx) error {
	env, entries := h.formEnv()
	in := defaultForm(entries, h.DataDir)
	g, _ := ValidateForm(in, env)
	f := formView(in, entries, g, nil, h.externalSystems())
	h.budgetView(c.UserContext(), &f, in, entries, g)
	return renderPage(c, views.NewExperimentPage(pageMeta(c, "New experiment", "new"), f))
}

// Preview handles POST /experiments/preview: the run count and the inline
// errors of the form as typed so far, answering the browser's request
// number (preview_seq, echoed as the preview's data-seq). A preview that
// fails is answered as a problem of the preview, never a 500 (the form
// on screen stays as it is; the server log has the details).
func (h *ExperimentsHandler) Preview(c *fiber.Ctx) error {
	seq, err := previewSeq(c.FormValue("preview_seq"))
	if err != nil {
		return fiber.NewError(fiber.StatusBadRequest, err.Error())
	}
	f, err := h.safePreview(c.UserContext(), c.Get(fiber.HeaderContentType), c.Body())
	if err != nil {
		return fiber.NewError(fiber.StatusBadRequest, err.Error())
	}
	f.Preview.Seq = seq
	c.Set(fiber.HeaderContentType, fiber.MIMETextHTMLCharsetUTF8)
	return views.PreviewResponse(f).Render(c.UserContext(), c.Response().BodyWriter())
}

// previewSeq reads the browser's preview request number ("" = none).
func previewSeq(s string) (uint64, error) {
	if s == "" {
		return 0, nil
	}
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("preview_seq: %q is not a request number (a whole number from 0)", units.Clip(s, 40))
	}
	return n, nil
}

// previewOf is the preview of a form body (contentType its type): the
// grid's run count, every field's problems, the cells that cannot start,
// the estimate and the limits the form would offer. An error is a body
// that is no form (DecodeForm).
func (h *ExperimentsHandler) previewOf(ctx context.Context, contentType string, body []byte) (views.ExperimentForm, error) {
	env, entries := h.formEnv()
	in, err := DecodeForm(contentType, body)
	if err != nil {
		return views.ExperimentForm{}, err
	}
	g, errs := ValidateForm(in, env)
	f := formView(in, entries, g, errs, h.externalSystems())
	h.budgetView(ctx, &f, in, entries, g)
	return f, nil
}

// safePreview is previewOf with a panic answered as the preview's problem
// (and logged): a bug in a check must not take the form's preview down.
// FuzzPreview calls previewOf itself, so such a bug still fails a test.
func (h *ExperimentsHandler) safePreview(ctx context.Context, contentType string, body []byte) (f views.ExperimentForm, err error) {
	defer func() {
		if r := recover(); r != nil {
			lg := h.Log
			if lg == nil {
				lg = log.Default()
			}
			lg.Printf("preview: panic: %v\n%s", r, debug.Stack())
			f, err = views.ExperimentForm{}, nil
			f.Preview.Problem = fmt.Sprintf("The preview could not be computed for this form (%v): a bug, logged by the server. The fields are as you typed them; the submit checks them again.", r)
		}
	}()
	return h.previewOf(ctx, contentType, body)
}

// Create handles POST /experiments: a form (re-shown with inline errors on
// bad input) or a JSON grid (answered with JSON). A grid on a dataset to be
// generated starts a dataset job that creates the experiment when the
// dataset is ready.
func (h *ExperimentsHandler) Create(c *fiber.Ctx) error {
	ctx := c.UserContext()
	if strings.HasPrefix(c.Get(fiber.HeaderContentType), fiber.MIMEApplicationJSON) {
		return h.createJSON(c)
	}
	if ex := c.FormValue("example"); ex != "" {
		return h.startExample(c, ex)
	}
	env, entries := h.formEnv()
	in, err := readForm(c)
	if err != nil {
		return err
	}
	g, errs := ValidateForm(in, env)
	if len(errs) == 0 && in.DatasetMode == "generate" {
		cfg, _ := dataset.Preset(in.Preset)
		gridText, queue, preset := g.JSON(), h.Queue, strings.Clone(in.Preset)
		if _, err := h.Jobs.Generate(g.Dataset, preset, cfg, func(jctx context.Context) (string, error) {
			e, err := queue.Create(jctx, gridText)
			if err != nil {
				return "", fmt.Errorf("dataset ready, but the experiment was not created: %w", err)
			}
			return fmt.Sprintf("/experiments/%d", e.ID), nil
		}); err != nil {
			return jobsFull(c, err)
		}
		return redirect(c, "/datasets")
	}
	if len(errs) == 0 {
		e, err := h.Queue.Create(ctx, g.JSON())
		if err == nil {
			return redirect(c, fmt.Sprintf("/experiments/%d", e.ID))
		}
		if !errors.Is(err, grid.ErrInvalid) {
			return err
		}
		// The data directory changed since the check (another process).
		for _, p := range grid.ProblemsOf(err) {
			f := formField(p, false)
			if errs[f] != "" {
				errs[f] += "; "
			}
			errs[f] += p.Message
		}
	}
	c.Status(fiber.StatusUnprocessableEntity)
	f := formView(in, entries, g, errs, h.externalSystems())
	h.budgetView(ctx, &f, in, entries, g)
	return renderPage(c, views.NewExperimentPage(pageMeta(c, "New experiment", "new"), f))
}

// createJSON creates an experiment from a grid file's JSON. A grid with
// problems is answered 422 with every problem:
// {"error": "...", "field": <first problem's field>, "problems": [{"field", "message"}, ...]}.
func (h *ExperimentsHandler) createJSON(c *fiber.Ctx) error {
	var g json.RawMessage
	if err := json.Unmarshal(c.Body(), &g); err != nil {
		return c.Status(fiber.StatusBadRequest).JSON(fiber.Map{"error": "body: not JSON: " + err.Error()})
	}
	e, err := h.Queue.Create(c.UserContext(), g)
	if err != nil {
		if !errors.Is(err, grid.ErrInvalid) {
			return err
		}
		ps := grid.ProblemsOf(err)
		field := ""
		if len(ps) > 0 {
			field = ps[0].Field
		}
		return c.Status(fiber.StatusUnprocessableEntity).JSON(fiber.Map{"error": err.Error(), "field": field, "problems": ps})
	}
	url := fmt.Sprintf("/experiments/%d", e.ID)
	c.Set(fiber.HeaderLocation, url)
	return c.Status(fiber.StatusCreated).JSON(fiber.Map{"id": e.ID, "url": url, "runs": e.Counts.Total})
}

// startExample queues a ready-to-start grid file.
func (h *ExperimentsHandler) startExample(c *fiber.Ctx, file string) error {
	ctx := c.UserContext()
	g, err := h.exampleGrid(file)
	if err != nil {
		return fiber.NewError(fiber.StatusBadRequest, err.Error())
	}
	ex := h.annotateExample(ctx, views.Example{File: file, Name: g.Name, Dataset: g.Dataset, Runs: g.Count(), Summary: gridSummary(g)}, g)
	if c.FormValue("generate") != "" && ex.Generate != "" {
		// Make the missing dataset from the preset of its name, then
		// create the experiment (the datasets page shows the progress).
		cfg, _ := dataset.Preset(g.Dataset)
		gridText, queue := g.JSON(), h.Queue
		h.Jobs.Generate(g.Dataset, g.Dataset, cfg, func(jctx context.Context) (string, error) {
			e, err := queue.Create(jctx, gridText)
			if err != nil {
				return "", fmt.Errorf("dataset ready, but the experiment was not created: %w", err)
			}
			return fmt.Sprintf("/experiments/%d", e.ID), nil
		})
		return redirect(c, "/datasets")
	}
	if ex.Problem != "" || ex.Generate != "" {
		msg := ex.Problem
		if msg == "" {
			msg = fmt.Sprintf("dataset %q is missing: generate it first (%s)", g.Dataset, ex.Generate)
		}
		return fiber.NewError(fiber.StatusUnprocessableEntity, fmt.Sprintf("example %s: %s", file, msg))
	}
	if c.FormValue("confirm") == "" {
		// Say how many runs and how long before anything is queued.
		v := views.ExampleStart{Example: ex}
		seen := map[string]bool{}
		for _, r := range h.Queue.Refusals(g, nil) {
			if !seen[r.Reason] {
				seen[r.Reason] = true
				v.Reasons = append(v.Reasons, r.Reason)
			}
		}
		return renderPage(c, views.ExampleStartPage(pageMeta(c, "Start "+ex.Name, "experiments"), v))
	}
	e, err := h.Queue.Create(ctx, g.JSON())
	if err != nil {
		if errors.Is(err, grid.ErrInvalid) {
			return fiber.NewError(fiber.StatusUnprocessableEntity, fmt.Sprintf("example %s: %v", file, err))
		}
		return err
	}
	return redirect(c, fmt.Sprintf("/experiments/%d", e.ID))
}

// exampleGrid reads an example's grid; its cells that cannot start are
// skipped and shown as refused (the start page lists them first).
func (h *ExperimentsHandler) exampleGrid(file string) (*grid.Grid, error) {
	b, err := readExample(h.DataDir, file)
	if err != nil {
		return nil, err
	}
	g, err := grid.ParseGrid(b)
	if err != nil {
		return nil, fmt.Errorf("example %s: %w", file, err)
	}
	g.SkipInfeasible = true
	g.Raw = g.JSON()
	return g, nil
}

// annotateExamples adds to each example what starting it means here.
func (h *ExperimentsHandler) annotateExamples(ctx context.Context, exs []views.Example) []views.Example {
	for i, ex := range exs {
		if ex.Problem != "" {
			continue
		}
		g, err := h.exampleGrid(ex.File)
		if err != nil {
			exs[i].Problem = err.Error()
			continue
		}
		exs[i] = h.annotateExample(ctx, ex, g)
	}
	return exs
}

// annotateExample fills an example's refused cells, estimated duration,
// and the offer to generate its missing dataset (or why it cannot start).
func (h *ExperimentsHandler) annotateExample(ctx context.Context, ex views.Example, g *grid.Grid) views.Example {
	meta, err := dataset.ReadMeta(filepath.Join(dataset.DatasetsDir(h.DataDir), g.Dataset))
	if err != nil {
		if cfg, perr := dataset.Preset(g.Dataset); perr == nil {
			fb := cfg.Nodes * int64(cfg.FeatureDim) * 4
			// generation writes about 250 MB/s here (the small preset's
			// 102 MB in 0.4 s), so a tenth of a second per 25 MB, at least 1 s
			ex.Generate = fmt.Sprintf("%s (%s of features, ~%s)", g.Dataset, units.Bytes(fb), units.Estimate(max(1, float64(fb)/250e6*1.5)))
			return ex
		}
		ex.Problem = fmt.Sprintf("dataset %q is missing and no preset has its name: make it with `outcore data gen` or `outcore data import`", g.Dataset)
		return ex
	}
	var msgs []string
	for _, p := range h.Queue.Check(g, nil) {
		msgs = append(msgs, p.Message)
	}
	if len(msgs) > 0 {
		ex.Problem = strings.Join(msgs, "; ")
		return ex
	}
	refused := h.Queue.Refusals(g, nil)
	ex.Refused = len(refused)
	ex.Estimate = gridEstimate(g, meta, loadPastRuns(ctx, h.Store, g.Dataset), refused)
	return ex
}

// redirect sends the browser on: HX-Redirect for htmx, 303 otherwise.
func redirect(c *fiber.Ctx, to string) error {
	if c.Get("HX-Request") != "" {
		c.Set("HX-Redirect", to)
		return c.SendStatus(fiber.StatusNoContent)
	}
	return c.Redirect(to, fiber.StatusSeeOther)
}

// experimentPage loads what an experiment page shows; runFilter, when
// set, is a filter query (run keys only) for the queue table, and runSort
// its order (report.SortRuns).
func (h *ExperimentsHandler) experimentPage(ctx context.Context, id int64, baseline, runFilter string, runSort ...string) (views.ExperimentView, error) {
	e, err := h.Store.Experiment(ctx, id)
	if err != nil {
		return views.ExperimentView{}, err
	}
	runs, err := h.Store.Runs(ctx, store.RunFilter{ExperimentID: id, Current: true})
	if err != nil {
		return views.ExperimentView{}, err
	}
	v := experimentView(e, runs, baseline)
	if v.Study, err = studyTable(ctx, h.Store, h.Digests, h.DataDir, e); err != nil {
		return views.ExperimentView{}, err
	}
	if len(runSort) > 0 && runSort[0] != "" {
		v.RunSort = runSort[0]
		sorted := append([]store.Run(nil), runs...)
		if err := report.SortRuns(sorted, runSort[0]); err != nil {
			v.RunProblem = err.Error()
		} else {
			v.Runs = v.Runs[:0]
			for _, r := range sorted {
				v.Runs = append(v.Runs, runRow(r))
			}
			runs = sorted
		}
	}
	if runFilter == "" {
		return v, nil
	}
	v.RunFilter = runFilter
	f, err := report.ParseFilter(runFilter)
	if err == nil && !f.OnlyRunTerms() {
		err = fmt.Errorf("%w: here only run keys (system, outcome, limit, dim, batch, repeat, model, fanout, epoch_s, val) select runs", report.ErrFilter)
	}
	if err != nil {
		v.RunProblem = err.Error()
		return v, nil
	}
	kept, err := h.Store.Runs(ctx, store.RunFilter{ExperimentID: id, Current: true, Conds: f.RunConds()})
	if err != nil {
		return v, err
	}
	if v.RunSort != "" {
		_ = report.SortRuns(kept, v.RunSort) // checked above
	}
	v.Runs = v.Runs[:0]
	for _, r := range kept {
		v.Runs = append(v.Runs, runRow(r))
	}
	v.Shown = len(kept)
	return v, nil
}

// experimentView builds an experiment page from its runs (without epochs:
// charts load from charts.json, the accuracy table uses the runs' aggregates).
func experimentView(e store.Experiment, runs []store.Run, baseline string) views.ExperimentView {
	rd := make([]report.RunData, len(runs))
	rows := make([]views.RunRow, len(runs))
	for i, r := range runs {
		rd[i] = report.RunDataOf(r, nil)
		rows[i] = runRow(r)
	}
	cmp := report.NewComparison(rd)
	if !contains(cmp.Variants(), baseline) && len(cmp.Variants()) > 0 {
		baseline = cmp.Variants()[0]
	}
	s, en := runSpan(runs)
	gridText := string(e.Grid)
	var pretty json.RawMessage
	if json.Unmarshal(e.Grid, &pretty) == nil {
		if b, err := json.MarshalIndent(pretty, "", "  "); err == nil {
			gridText = string(b)
		}
	}
	v := views.ExperimentView{
		Notes: e.Notes, Tags: e.Tags, TagsText: strings.Join(e.Tags, ", "), Shown: len(runs),
		ID: e.ID, Name: experimentTitle(e), Dataset: e.Dataset, State: experimentState(e.Counts), Counts: counts(e.Counts),
		Created: fmtTime(e.CreatedAt), StartedMS: s, EndedMS: en, Grid: gridText, Runs: rows, Refused: refusedRows(e.Refused),
		Variants: cmp.Variants(), Baseline: baseline, Accuracy: accuracyRows(cmp),
		TimeLeft:   timeLeft(runs, time.Now()),
		CanCancel:  e.Counts.Queued+e.Counts.Running > 0,
		CanRequeue: e.Counts.Failed+e.Counts.Cancelled+e.Counts.Interrupted > 0,
		CanDelete:  e.Counts.Running == 0,
		ChartsURL:  fmt.Sprintf("/experiments/%d/charts.json", e.ID), RunsURL: fmt.Sprintf("/experiments/%d/runs.json", e.ID),
		ExportBase: fmt.Sprintf("/experiments/%d/export", e.ID),
	}
	if g, err := grid.ParseGrid(e.Grid); err == nil && g.Frontier != nil {
		v.Frontier = frontierFacts(runs)
	}
	base := fmt.Sprintf("/experiments/%d", e.ID)
	frames := report.NewComparison(nil) // titles and notes only: the data comes from charts.json
	// the page's charts; the accuracy is the table below them
	for _, entry := range report.ChartsOn(report.PageExperiment) {
		ch, _ := frames.Chart(entry.ID, baseline)
		slot := chartSlot(base, ch, entry.Wide)
		// the runs are the grid's cells from the start: an axis they do
		// not vary gets no chart, not even an empty frame until charts.json
		if ax := entry.Axis; ax != "" && len(runs) > 0 && !cmp.Varies(ax) {
			slot.Hidden = true
		}
		v.Charts = append(v.Charts, slot)
	}
	return v
}

// Show handles GET /experiments/:id.
func (h *ExperimentsHandler) Show(c *fiber.Ctx) error {
	id, err := idParam(c)
	if err != nil {
		return err
	}
	ctx := c.UserContext()
	after, err := h.Store.LastEventID(ctx)
	if err != nil {
		return err
	}
	v, err := h.experimentPage(ctx, id, c.Query("baseline"), strings.Clone(c.Query("runs")), strings.Clone(c.Query("rsort")))
	if err != nil {
		return err
	}
	p := pageMeta(c, v.Name, "experiments")
	p.Stream = streamURL("experiment", id, after)
	return renderPage(c, views.ExperimentPage(p, v))
}

// ChartsJSON handles GET /experiments/:id/charts.json?baseline=V.
func (h *ExperimentsHandler) ChartsJSON(c *fiber.Ctx) error {
	id, err := idParam(c)
	if err != nil {
		return err
	}
	cmp, err := report.LoadComparison(c.UserContext(), h.Store, h.Digests, id)
	if err != nil {
		return err
	}
	baseline, err := baselineParam(c, cmp)
	if err != nil {
		return err
	}
	c.Set(fiber.HeaderCacheControl, "no-store")
	c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSON)
	key := cmp.Fingerprint() + "/" + baseline
	if b, ok := h.Charts.get(key); ok {
		return c.Send(b)
	}
	b, err := json.Marshal(fiber.Map{"charts": cmp.Charts(baseline), "caveats": cmp.Caveats().Flags})
	if err != nil {
		return err
	}
	h.Charts.put(key, b)
	return c.Send(b)
}

// RunsView handles GET /experiments/:id/runs.json?group=KEY: the runs
// across parallel axes, grouped by KEY (report.Parallel; 400 for a key
// there is not).
func (h *ExperimentsHandler) RunsView(c *fiber.Ctx) error {
	e, err := experimentParam(c, h.Store)
	if err != nil {
		return err
	}
	id := e.ID
	runs, err := h.Store.Runs(c.UserContext(), store.RunFilter{ExperimentID: id, Current: true})
	if err != nil {
		return err
	}
	v, err := report.Parallel(runs, c.Query("group"))
	if err != nil {
		return fiber.NewError(fiber.StatusBadRequest, err.Error())
	}
	c.Set(fiber.HeaderCacheControl, "no-store")
	return c.JSON(v)
}

// chartsCache keeps the encoded charts of the last comparisons by their
// fingerprint: a settled experiment's page draws them once. A nil
// *chartsCache caches nothing; it is safe for concurrent use.
type chartsCache struct {
	mu    sync.Mutex
	max   int
	order []string
	m     map[string][]byte
}

func newChartsCache(max int) *chartsCache { return &chartsCache{max: max, m: map[string][]byte{}} }

func (c *chartsCache) get(key string) ([]byte, bool) {
	if c == nil || strings.HasPrefix(key, "/") {
		return nil, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	b, ok := c.m[key]
	return b, ok
}

func (c *chartsCache) put(key string, b []byte) {
	if c == nil || strings.HasPrefix(key, "/") {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.m[key]; !ok {
		c.order = append(c.order, key)
	}
	c.m[key] = b
	for len(c.order) > c.max {
		delete(c.m, c.order[0])
		c.order = c.order[1:]
	}
}

// baselineParam reads ?baseline=, which must name a variant of the comparison.
func baselineParam(c *fiber.Ctx, cmp *report.Comparison) (string, error) {
	b := c.Query("baseline")
	if b != "" && !contains(cmp.Variants(), b) {
		return "", fiber.NewError(fiber.StatusBadRequest, fmt.Sprintf("baseline: %q is not a variant of this experiment", b))
	}
	return b, nil
}

// splitChartFile reads "<chart>.<ext>" with ext csv, svg or pdf.
func splitChartFile(file string, known []string) (id, ext string, err error) {
	i := strings.LastIndexByte(file, '.')
	if i < 0 {
		return "", "", fiber.NewError(fiber.StatusNotFound, fmt.Sprintf("chart file %q: want <chart>.csv, .svg or .pdf", file))
	}
	id, ext = file[:i], file[i+1:]
	if err := report.CheckChart(id, known); err != nil {
		return "", "", fiber.NewError(fiber.StatusNotFound, err.Error())
	}
	if report.CheckFormat(ext) != nil {
		return "", "", fiber.NewError(fiber.StatusNotFound, fmt.Sprintf("chart file %q: want .csv, .svg or .pdf", file))
	}
	return id, ext, nil
}

// chartContentTypes are the media types of report.ExportFormats.
var chartContentTypes = map[string]string{
	report.FormatCSV: "text/csv; charset=utf-8",
	report.FigureSVG: "image/svg+xml",
	report.FigurePDF: "application/pdf",
}

// sendChart writes a chart as CSV data or as a figure (?size=wide|column,
// report.FigureSizes) carrying meta.
func sendChart(c *fiber.Ctx, ch report.Chart, ext, filename string, meta report.FigureMeta) error {
	size := c.Query("size")
	if err := report.CheckSize(size); err != nil {
		return fiber.NewError(fiber.StatusBadRequest, "size: "+err.Error())
	}
	c.Set(fiber.HeaderContentDisposition, fmt.Sprintf(`attachment; filename="%s"`, filename))
	c.Set(fiber.HeaderContentType, chartContentTypes[ext])
	err := report.WriteChartWith(c.Response().BodyWriter(), ch, ext, report.FigureOptions{Size: size, Meta: meta})
	if errors.Is(err, report.ErrNoData) {
		c.Set(fiber.HeaderContentDisposition, "")
		return fiber.NewError(fiber.StatusConflict, fmt.Sprintf("chart %s has no data yet: %s", ch.ID, ch.Empty))
	}
	return err
}

// ChartFile handles GET /experiments/:id/charts/<chart>.{csv,svg,pdf}.
func (h *ExperimentsHandler) ChartFile(c *fiber.Ctx) error {
	id, err := idParam(c)
	if err != nil {
		return err
	}
	chartID, ext, err := splitChartFile(c.Params("file"), report.ChartIDs)
	if err != nil {
		return err
	}
	cmp, err := report.LoadComparison(c.UserContext(), h.Store, h.Digests, id)
	if err != nil {
		return err
	}
	baseline, err := baselineParam(c, cmp)
	if err != nil {
		return err
	}
	ch, _ := cmp.Chart(chartID, baseline)
	return sendChart(c, ch, ext, report.FileName("experiment", id, chartID, ext), cmp.Meta())
}

// Export handles GET /experiments/:id/export/{runs,epochs,samples}.csv,
// streamed from the store in constant memory.
func (h *ExperimentsHandler) Export(c *fiber.Ctx) error {
	id, err := idParam(c)
	if err != nil {
		return err
	}
	what, ok := strings.CutSuffix(c.Params("file"), ".csv")
	if !ok || !contains(store.ExportKinds, what) {
		return fiber.NewError(fiber.StatusNotFound, fmt.Sprintf("export %q: want one of runs.csv, epochs.csv, samples.csv", c.Params("file")))
	}
	if _, err := h.Store.Experiment(c.UserContext(), id); err != nil {
		return err
	}
	c.Set(fiber.HeaderContentType, "text/csv; charset=utf-8")
	c.Set(fiber.HeaderContentDisposition, fmt.Sprintf(`attachment; filename="experiment-%d-%s.csv"`, id, what))
	st := h.Store
	lg := h.Log
	if lg == nil {
		lg = log.Default()
	}
	c.Context().SetBodyStreamWriter(safeStream(lg, "CSV export", func(w *bufio.Writer) {
		if err := st.ExportCSV(context.Background(), w, id, what); err != nil {
			// The status is sent already; say so in the body, where a reader sees it.
			fmt.Fprintf(w, "\n# export stopped: %v\n", err)
		}
	}))
	return nil
}

// Bundle handles GET /experiments/:id/bundle.zip: the paper bundle
// (report.WriteBundle), streamed; ?size= picks the figures' size preset.
func (h *ExperimentsHandler) Bundle(c *fiber.Ctx) error {
	id, err := idParam(c)
	if err != nil {
		return err
	}
	size := strings.Clone(c.Query("size"))
	if err := report.CheckSize(size); err != nil {
		return fiber.NewError(fiber.StatusBadRequest, "size: "+err.Error())
	}
	if _, err := h.Store.Experiment(c.UserContext(), id); err != nil {
		return err
	}
	src, ok := h.Store.(report.BundleSource)
	if !ok {
		return fiber.NewError(fiber.StatusNotImplemented, "this store cannot export bundles")
	}
	// The slot is held while the zip is written: the stream writer runs
	// (and gives it back) even when the client goes away.
	if err := h.Bundles.take(); err != nil {
		return busy(c, err)
	}
	c.Set(fiber.HeaderContentType, "application/zip")
	c.Set(fiber.HeaderContentDisposition, fmt.Sprintf(`attachment; filename="%s"`, report.BundleFileName(id)))
	opts := report.BundleOptions{Version: version.String(), DataDir: h.DataDir, Size: size}
	c.Context().SetBodyStreamWriter(func(w *bufio.Writer) {
		defer h.Bundles.release()
		safeStream(h.Log, "bundle.zip", func(w *bufio.Writer) {
			if err := report.WriteBundle(context.Background(), w, src, id, opts); err != nil {
				// The status is sent already: the zip is cut short and will not open.
				fmt.Fprintf(w, "\n# bundle stopped: %v\n", err)
			}
		})(w)
	})
	return nil
}

// Cancel handles POST /experiments/:id/cancel: queued runs are cancelled,
// running ones stopped.
func (h *ExperimentsHandler) Cancel(c *fiber.Ctx) error {
	id, err := idParam(c)
	if err != nil {
		return err
	}
	if _, err := h.Queue.CancelExperiment(c.UserContext(), id); err != nil {
		return err
	}
	return doneOrRedirect(c, "/experiments/"+strconv.FormatInt(id, 10))
}

// Retry handles POST /experiments/:id/retry: the experiment's failed,
// cancelled and interrupted runs join the queue again (a new attempt each).
func (h *ExperimentsHandler) Retry(c *fiber.Ctx) error {
	id, err := idParam(c)
	if err != nil {
		return err
	}
	if _, err := h.Queue.RetryExperiment(c.UserContext(), id); err != nil {
		return err
	}
	return doneOrRedirect(c, "/experiments/"+strconv.FormatInt(id, 10))
}

// Rerun handles POST /experiments/:id/rerun: a new experiment from the
// same grid file (every setting, option and axis as before; the name
// marked as a re-run), queued at once, and its page.
func (h *ExperimentsHandler) Rerun(c *fiber.Ctx) error {
	e, err := experimentParam(c, h.Store)
	if err != nil {
		return err
	}
	id, ctx := e.ID, c.UserContext()
	g, err := grid.ParseGrid(e.Grid)
	if err != nil {
		return fiber.NewError(fiber.StatusUnprocessableEntity, fmt.Sprintf("experiment %d: its grid no longer parses: %v", id, err))
	}
	g.Name = rerunName(experimentTitle(e), id)
	g.Raw = g.JSON()
	ne, err := h.Queue.Create(ctx, g.Raw)
	if err != nil {
		if errors.Is(err, grid.ErrInvalid) {
			return fiber.NewError(fiber.StatusUnprocessableEntity, fmt.Sprintf("re-run of experiment %d: %v", id, err))
		}
		return err
	}
	return redirect(c, fmt.Sprintf("/experiments/%d", ne.ID))
}

// rerunName names a re-run of experiment id: its name and where it came
// from, within the name's length limit.
func rerunName(name string, id int64) string {
	suffix := fmt.Sprintf(" (re-run of #%d)", id)
	if r := []rune(name); len(r)+len([]rune(suffix)) > store.MaxNameLen {
		name = string(r[:max(0, store.MaxNameLen-len([]rune(suffix)))])
	}
	return name + suffix
}

// Delete handles POST /experiments/:id/delete.
func (h *ExperimentsHandler) Delete(c *fiber.Ctx) error {
	id, err := idParam(c)
	if err != nil {
		return err
	}
	if err := h.Queue.DeleteExperiment(c.UserContext(), id); err != nil {
		return err
	}
	return redirect(c, "/experiments")
}

// refusedRows are an experiment's refused cells as the page lists them.
func refusedRows(cells []store.RefusedCell) []views.RefusedRow {
	var out []views.RefusedRow
	for _, c := range cells {
		out = append(out, views.RefusedRow{Seq: c.Seq, System: c.System, Limit: units.Bytes(c.MemLimitBytes),
			Dataset: c.Dataset, Reason: c.Reason, Repeat: c.Repeat + 1})
	}
	return out
}
