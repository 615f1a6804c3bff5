package web

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"outcore/engine/metrics"
	"outcore/engine/metrics/fields"
	"outcore/experiments/grid"
	"outcore/report"
	"outcore/store"
)

// APIHandler is the JSON API (docs/API.md): experiments, runs, epochs and
// samples to read; create, cancel, retry, edit. Creating goes through the
// queue's validation, the one the form uses. Errors are
// {"error": "...", "status": N}.
type APIHandler struct {
	Store Store
	Queue Queue
}

// APICounts are an experiment's current runs by status.
type APICounts struct {
	Total       int `json:"total"`
	Queued      int `json:"queued"`
	Running     int `json:"running"`
	Done        int `json:"done"`
	Failed      int `json:"failed"`
	OOM         int `json:"oom"`
	Cancelled   int `json:"cancelled"`
	Interrupted int `json:"interrupted"`
	// CancelledUnstarted of the cancelled never started; Refused cells
	// were skipped at creation (not runs, not in total).
	CancelledUnstarted int `json:"cancelled_unstarted"`
	Refused            int `json:"refused"`
}

// APIExperiment is an experiment in the API.
type APIExperiment struct {
	ID           int64           `json:"id"`
	Name         string          `json:"name"`
	Dataset      string          `json:"dataset"`
	State        string          `json:"state"`
	Counts       APICounts       `json:"counts"`
	Systems      []string        `json:"systems"`
	Tags         []string        `json:"tags"`
	Notes        string          `json:"notes"`
	CreatedAt    time.Time       `json:"created_at"`
	FirstStarted *time.Time      `json:"first_started,omitempty"`
	LastEnded    *time.Time      `json:"last_ended,omitempty"`
	Grid         json.RawMessage `json:"grid,omitempty"`
	// Refused are the cells skipped at creation because they cannot
	// start, each with its reason (with a single experiment).
	Refused []store.RefusedCell `json:"refused,omitempty"`
	URL     string              `json:"url"`
}

// APIRun is a run in the API.
type APIRun struct {
	ID             int64           `json:"id"`
	ExperimentID   int64           `json:"experiment_id"`
	Seq            int             `json:"seq"`
	Attempt        int             `json:"attempt"`
	RetryOf        int64           `json:"retry_of,omitempty"`
	Superseded     bool            `json:"superseded"`
	Status         string          `json:"status"` // "stalled": running, but its child writes no records (Stall says why)
	Stall          string          `json:"stall,omitempty"`
	System         string          `json:"system"`
	Dataset        string          `json:"dataset"`
	Model          string          `json:"model"`
	MemLimitBytes  int64           `json:"mem_limit_bytes"`
	FeatureDim     int             `json:"feature_dim"`
	BatchSize      int             `json:"batch_size"`
	Fanout         string          `json:"fanout"`
	Compute        string          `json:"compute"` // DESIGN §10; outside "cpu" best_val_acc and test_acc are null
	Testbed        string          `json:"testbed"` // DESIGN §13; "this-host" for a run whose config names none
	Repeat         int             `json:"repeat"`
	LimitEnforced  bool            `json:"limit_enforced"`
	LimitNote      string          `json:"limit_note"`
	CacheDropped   bool            `json:"cache_dropped"`
	IOBackend      string          `json:"io_backend"`
	OutcoreVersion string          `json:"outcore_version"`
	ExitCode       *int            `json:"exit_code"`
	Signal         string          `json:"signal,omitempty"`
	Error          string          `json:"error,omitempty"`
	EpochsDone     int             `json:"epochs_done"`
	QueuedAt       time.Time       `json:"queued_at"`
	StartedAt      *time.Time      `json:"started_at,omitempty"`
	EndedAt        *time.Time      `json:"ended_at,omitempty"`
	Config         json.RawMessage `json:"config,omitempty"`
	Host           json.RawMessage `json:"host,omitempty"`
	Deviations     json.RawMessage `json:"deviations,omitempty"`
	URL            string          `json:"url"`
	// Measures are the run's measurements (engine/metrics/fields.Runs),
	// each a key of the object: a number, null when not measured (and,
	// for the accuracies, outside compute cpu).
	Measures []APIMeasure `json:"-"`
}

// APIMeasure is one run measurement of the API's run object.
type APIMeasure struct {
	Key   string
	Value any // float64, int64 or nil
}

// MarshalJSON writes the run with its measurements as keys of the object,
// after the declared ones.
func (a APIRun) MarshalJSON() ([]byte, error) {
	type plain APIRun
	b, err := json.Marshal(plain(a))
	if err != nil {
		return nil, err
	}
	b = b[:len(b)-1] // the closing brace
	for _, m := range a.Measures {
		k, err := json.Marshal(m.Key)
		if err != nil {
			return nil, err
		}
		v, err := json.Marshal(m.Value)
		if err != nil {
			return nil, fmt.Errorf("run %d %s: %w", a.ID, m.Key, err)
		}
		b = append(append(append(append(b, ','), k...), ':'), v...)
	}
	return append(b, '}'), nil
}

// APIEpoch is one epoch record of a run, as the child wrote it: every key
// of the stored record JSON, those EpochRecord does not declare
// (EpochRecord.Extra, a metric declared only in engine/metrics/fields)
// included, after run_id and received_at.
type APIEpoch struct {
	RunID      int64     `json:"run_id"`
	ReceivedAt time.Time `json:"received_at"`
	metrics.EpochRecord
}

// MarshalJSON writes the epoch as the API has it (the record's own
// JSON, which json.Marshal of the struct would cut to its declared keys).
func (a APIEpoch) MarshalJSON() ([]byte, error) {
	return a.EpochRecord.JSONWith(struct {
		RunID      int64     `json:"run_id"`
		ReceivedAt time.Time `json:"received_at"`
	}{a.RunID, a.ReceivedAt})
}

func optTime(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

func rawOr(b json.RawMessage) json.RawMessage {
	if len(b) == 0 || !json.Valid(b) {
		return nil
	}
	return b
}

func apiExperiment(e store.Experiment, withGrid bool) APIExperiment {
	c := e.Counts
	x := APIExperiment{ID: e.ID, Name: e.Name, Dataset: e.Dataset, State: experimentState(c),
		Counts:  APICounts{c.Total, c.Queued, c.Running, c.Done, c.Failed, c.OOM, c.Cancelled, c.Interrupted, c.CancelledUnstarted, c.Refused},
		Systems: e.Systems, Tags: e.Tags, Notes: e.Notes, CreatedAt: e.CreatedAt,
		FirstStarted: optTime(e.FirstStarted), LastEnded: optTime(e.LastEnded), URL: fmt.Sprintf("/api/experiments/%d", e.ID)}
	if x.Systems == nil {
		x.Systems = []string{}
	}
	if x.Tags == nil {
		x.Tags = []string{}
	}
	if withGrid {
		x.Grid = rawOr(e.Grid)
		x.Refused = e.Refused
	}
	return x
}

func apiRun(r store.Run, full bool) APIRun {
	x := APIRun{ID: r.ID, ExperimentID: r.ExperimentID, Seq: r.Seq, Attempt: r.Attempt, RetryOf: r.RetryOf, Superseded: r.Superseded,
		Status: r.State(), Stall: r.Stall, System: r.System, Dataset: r.Dataset, Model: r.Model, MemLimitBytes: r.MemLimitBytes,
		FeatureDim: r.FeatureDim, BatchSize: r.BatchSize, Fanout: r.Fanout, Compute: r.Compute, Testbed: r.Testbed(), Repeat: r.Repeat,
		LimitEnforced: r.LimitEnforced, LimitNote: r.LimitNote, CacheDropped: r.CacheDropped, IOBackend: r.IOBackend,
		OutcoreVersion: r.OutcoreVersion, ExitCode: r.ExitCode, Signal: r.Signal, Error: r.Error, EpochsDone: r.EpochsDone,
		QueuedAt: r.QueuedAt, StartedAt: optTime(r.StartedAt), EndedAt: optTime(r.EndedAt),
		URL: fmt.Sprintf("/api/runs/%d", r.ID)}
	v := r.Measures()
	for i := range fields.Runs {
		f := &fields.Runs[i]
		x.Measures = append(x.Measures, APIMeasure{f.Key, f.JSON(v, r.Trains())})
	}
	if full {
		x.Config, x.Host, x.Deviations = rawOr(r.Config), rawOr(r.Host), rawOr(r.Deviations)
	}
	return x
}

// badRequest is a 400 whose message is the error's.
func badRequest(err error) error { return fiber.NewError(fiber.StatusBadRequest, err.Error()) }

// ListExperiments handles GET /api/experiments?q=FILTER&sort=KEY.
func (h *APIHandler) ListExperiments(c *fiber.Ctx) error {
	exps, err := h.Store.ListExperiments(c.UserContext())
	if err != nil {
		return err
	}
	exps, err = filterExperiments(c.UserContext(), h.Store, exps, c.Query("q"), c.Query("sort"))
	if err != nil {
		if errors.Is(err, report.ErrFilter) {
			return badRequest(err)
		}
		return err
	}
	out := make([]APIExperiment, len(exps))
	for i, e := range exps {
		out[i] = apiExperiment(e, false)
	}
	return c.JSON(fiber.Map{"experiments": out})
}

// GetExperiment handles GET /api/experiments/:id.
func (h *APIHandler) GetExperiment(c *fiber.Ctx) error {
	e, err := experimentParam(c, h.Store)
	if err != nil {
		return err
	}
	return c.JSON(apiExperiment(e, true))
}

// ExperimentRuns handles GET /api/experiments/:id/runs?runs=FILTER&sort=KEY&all=1
// (all: superseded attempts too; sort: report.RunSortKeys).
func (h *APIHandler) ExperimentRuns(c *fiber.Ctx) error {
	id, err := idParam(c)
	if err != nil {
		return err
	}
	ctx := c.UserContext()
	if _, err := h.Store.Experiment(ctx, id); err != nil {
		return err
	}
	f, err := report.ParseFilter(c.Query("runs"))
	if err == nil && !f.OnlyRunTerms() {
		err = fmt.Errorf("%w: runs= takes run keys only", report.ErrFilter)
	}
	if err != nil {
		return badRequest(err)
	}
	runs, err := h.Store.Runs(ctx, store.RunFilter{ExperimentID: id, Current: c.Query("all") == "", Conds: f.RunConds()})
	if err != nil {
		return err
	}
	if err := report.SortRuns(runs, c.Query("sort")); err != nil {
		return badRequest(err)
	}
	out := make([]APIRun, len(runs))
	for i, r := range runs {
		out[i] = apiRun(r, false)
	}
	return c.JSON(fiber.Map{"runs": out})
}

// GetRun handles GET /api/runs/:id.
func (h *APIHandler) GetRun(c *fiber.Ctx) error {
	id, err := idParam(c)
	if err != nil {
		return err
	}
	r, err := h.Store.Run(c.UserContext(), id)
	if err != nil {
		return err
	}
	return c.JSON(apiRun(r, true))
}

// RunEpochs handles GET /api/runs/:id/epochs.
func (h *APIHandler) RunEpochs(c *fiber.Ctx) error {
	id, err := idParam(c)
	if err != nil {
		return err
	}
	ctx := c.UserContext()
	if _, err := h.Store.Run(ctx, id); err != nil {
		return err
	}
	eps, err := h.Store.Epochs(ctx, id)
	if err != nil {
		return err
	}
	out := make([]APIEpoch, len(eps))
	for i, e := range eps {
		out[i] = APIEpoch{RunID: e.RunID, ReceivedAt: e.ReceivedAt, EpochRecord: e.EpochRecord}
	}
	return c.JSON(fiber.Map{"epochs": out})
}

// RunSamples handles GET /api/runs/:id/samples?from=S&to=S&limit=N.
func (h *APIHandler) RunSamples(c *fiber.Ctx) error {
	id, err := idParam(c)
	if err != nil {
		return err
	}
	num := func(name string) (float64, error) {
		s := c.Query(name)
		if s == "" {
			return 0, nil
		}
		v, err := strconv.ParseFloat(s, 64)
		if err != nil || v < 0 {
			return 0, fmt.Errorf("%s: %q is not a number of seconds ≥ 0", name, s)
		}
		return v, nil
	}
	from, err := num("from")
	if err != nil {
		return badRequest(err)
	}
	to, err := num("to")
	if err != nil {
		return badRequest(err)
	}
	limit := 0
	if s := c.Query("limit"); s != "" {
		if limit, err = strconv.Atoi(s); err != nil || limit < 0 {
			return badRequest(fmt.Errorf("limit: %q is not a whole number ≥ 0", s))
		}
	}
	ctx := c.UserContext()
	if _, err := h.Store.Run(ctx, id); err != nil {
		return err
	}
	ss, err := h.Store.Samples(ctx, id, from, to, 0)
	if err != nil {
		return err
	}
	ss = thinSamples(ss, limit)
	out := make([]metrics.SampleRecord, len(ss))
	for i, s := range ss {
		out[i] = s.SampleRecord
	}
	return c.JSON(fiber.Map{"samples": out})
}

// CreateExperiment handles POST /api/experiments: a grid file's JSON, the
// queue's validation (the form's), 201 with the experiment or 422 with
// every problem.
func (h *APIHandler) CreateExperiment(c *fiber.Ctx) error {
	var g json.RawMessage
	if err := json.Unmarshal(c.Body(), &g); err != nil {
		return badRequest(fmt.Errorf("body: not JSON: %v", err))
	}
	e, err := h.Queue.Create(c.UserContext(), g)
	if err != nil {
		if !errors.Is(err, grid.ErrInvalid) {
			return err
		}
		return c.Status(fiber.StatusUnprocessableEntity).JSON(invalidBody(err))
	}
	c.Set(fiber.HeaderLocation, fmt.Sprintf("/api/experiments/%d", e.ID))
	return c.Status(fiber.StatusCreated).JSON(apiExperiment(e, true))
}

// invalidBody is the 422 answer of a grid the queue refused: every
// problem, each with its field (grid.ProblemsOf).
func invalidBody(err error) fiber.Map {
	ps := grid.ProblemsOf(err)
	field := ""
	if len(ps) > 0 {
		field = ps[0].Field
	}
	return fiber.Map{"error": err.Error(), "status": fiber.StatusUnprocessableEntity, "field": field, "problems": ps}
}

// action runs a state change and answers with the experiment or run after it.
func (h *APIHandler) experimentAction(do func(c *fiber.Ctx, id int64) error) fiber.Handler {
	return func(c *fiber.Ctx) error {
		id, err := idParam(c)
		if err != nil {
			return err
		}
		if err := do(c, id); err != nil {
			return err
		}
		e, err := h.Store.Experiment(c.UserContext(), id)
		if err != nil {
			return err
		}
		return c.JSON(apiExperiment(e, false))
	}
}

// CancelExperiment handles POST /api/experiments/:id/cancel.
func (h *APIHandler) CancelExperiment(c *fiber.Ctx) error {
	return h.experimentAction(func(c *fiber.Ctx, id int64) error {
		_, err := h.Queue.CancelExperiment(c.UserContext(), id)
		return err
	})(c)
}

// RetryExperiment handles POST /api/experiments/:id/retry.
func (h *APIHandler) RetryExperiment(c *fiber.Ctx) error {
	return h.experimentAction(func(c *fiber.Ctx, id int64) error {
		_, err := h.Queue.RetryExperiment(c.UserContext(), id)
		return err
	})(c)
}

// EditExperiment handles POST /api/experiments/:id/meta with
// {"name": ..., "notes": ..., "tags": [...]} (fields left out keep their value).
func (h *APIHandler) EditExperiment(c *fiber.Ctx) error {
	return h.experimentAction(func(c *fiber.Ctx, id int64) error {
		e, err := h.Store.Experiment(c.UserContext(), id)
		if err != nil {
			return err
		}
		var in struct {
			Name  *string   `json:"name"`
			Notes *string   `json:"notes"`
			Tags  *[]string `json:"tags"`
		}
		if err := json.Unmarshal(c.Body(), &in); err != nil {
			return badRequest(fmt.Errorf("body: not JSON: %v", err))
		}
		m := store.ExperimentMeta{Name: e.Name, Notes: e.Notes, Tags: e.Tags}
		if in.Name != nil {
			m.Name = *in.Name
		}
		if in.Notes != nil {
			m.Notes = *in.Notes
		}
		if in.Tags != nil {
			m.Tags = *in.Tags
		}
		err = h.Queue.SetExperimentMeta(c.UserContext(), id, m)
		if errors.Is(err, store.ErrInvalidMeta) {
			return fiber.NewError(fiber.StatusUnprocessableEntity, err.Error())
		}
		return err
	})(c)
}

// DeleteExperiment handles POST /api/experiments/:id/delete.
func (h *APIHandler) DeleteExperiment(c *fiber.Ctx) error {
	id, err := idParam(c)
	if err != nil {
		return err
	}
	if err := h.Queue.DeleteExperiment(c.UserContext(), id); err != nil {
		return err
	}
	return c.JSON(fiber.Map{"deleted": id})
}

// CancelRun handles POST /api/runs/:id/cancel.
func (h *APIHandler) CancelRun(c *fiber.Ctx) error {
	id, err := idParam(c)
	if err != nil {
		return err
	}
	if err := h.Queue.CancelRun(c.UserContext(), id); err != nil {
		return err
	}
	r, err := h.Store.Run(c.UserContext(), id)
	if err != nil {
		return err
	}
	return c.JSON(apiRun(r, false))
}

// RetryRun handles POST /api/runs/:id/retry: the new attempt.
func (h *APIHandler) RetryRun(c *fiber.Ctx) error {
	id, err := idParam(c)
	if err != nil {
		return err
	}
	nr, err := h.Queue.RetryRun(c.UserContext(), id)
	if err != nil {
		return err
	}
	c.Set(fiber.HeaderLocation, fmt.Sprintf("/api/runs/%d", nr.ID))
	return c.Status(fiber.StatusCreated).JSON(apiRun(nr, false))
}

// CSRFToken handles GET /api/csrf: the token a client repeats in the
// X-CSRF-Token header of its POSTs (the cookie comes with it).
func (h *APIHandler) CSRFToken(c *fiber.Ctx) error {
	return c.JSON(fiber.Map{"token": Token(c), "header": CSRFHeader, "cookie": CSRFCookie})
}

// isAPI reports whether a request is for the JSON API.
func isAPI(c *fiber.Ctx) bool { return strings.HasPrefix(c.Path(), "/api/") }

// thinSamples keeps at most n of a run's samples, evenly spaced over the
// whole range, the first and the last included (n <= 0: all), as
// docs/API.md says of samples?limit=N: the shape of the run, not its
// first N seconds.
func thinSamples(ss []store.Sample, n int) []store.Sample {
	if n <= 0 || len(ss) <= n {
		return ss
	}
	if n == 1 {
		return ss[:1]
	}
	out := make([]store.Sample, n)
	for i := range out {
		out[i] = ss[i*(len(ss)-1)/(n-1)]
	}
	return out
}
