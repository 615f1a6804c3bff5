package web

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"

	"outcore/engine/metrics"
	"outcore/engine/metrics/fields"
	"outcore/internal/units"
	"outcore/report"
	"outcore/store"
	"outcore/web/views"
)

// RunsHandler serves a run's page, its charts and its epochs as CSV, and
// cancels or retries it.
type RunsHandler struct {
	Store Store
	Queue Queue
}

// logTail is how many log lines a run page shows.
const logTail = 200

// runTitle names a run by its grid point.
func runTitle(r store.Run) string {
	parts := []string{r.System, report.MemLabel(r.MemLimitBytes)}
	if r.FeatureDim > 0 {
		parts = append(parts, "dim "+strconv.Itoa(r.FeatureDim))
	}
	if r.BatchSize > 0 {
		parts = append(parts, "batch "+strconv.Itoa(r.BatchSize))
	}
	parts = append(parts, fmt.Sprintf("repeat %d", r.Repeat))
	if r.Attempt > 1 {
		parts = append(parts, fmt.Sprintf("attempt %d", r.Attempt))
	}
	return strings.Join(parts, " · ")
}

// runFacts are the configuration lines of a run page; the log tells the
// page cache and I/O backend lines (runfacts.go).
func runFacts(r store.Run, logs []store.Event) []views.KV {
	yes := func(b bool) string {
		if b {
			return "yes"
		}
		return "no"
	}
	kv := []views.KV{
		{K: "variant", V: r.System}, {K: "dataset", V: r.Dataset}, {K: "model", V: r.Model},
		{K: "memory limit", V: memoryLimitFact(r)},
		{K: "limit enforced", V: yes(r.LimitEnforced) + note(r.LimitNote)},
		{K: "feature dim", V: dimLabel(r.FeatureDim)},
		{K: "batch size", V: strconv.Itoa(r.BatchSize)}, {K: "fanout", V: r.Fanout},
		{K: "compute", V: computeFact(r)},
		{K: "testbed", V: r.Testbed()}, // DESIGN §13: its settings are among the deviations below
		{K: "repeat", V: strconv.Itoa(r.Repeat)}, {K: "seed", V: seedOf(r.Config)}, {K: "attempt", V: strconv.Itoa(r.Attempt)},
		{K: "I/O backend", V: ioBackendFact(r, logs)},
		{K: "dataset out of the page cache before the run", V: pageCacheFact(r, logs)},
		{K: "I/O floor", V: ioFloorFact(r, logs)},
		{K: "queued", V: fmtTime(r.QueuedAt)}, {K: "started", V: fmtTime(r.StartedAt)}, {K: "ended", V: fmtTime(r.EndedAt)},
	}
	// Another executor's job, as the store keeps it (opaque text).
	if r.Executor != "" && r.Executor != store.ExecutorLocal {
		kv = append(kv, views.KV{K: "executor", V: r.Executor},
			views.KV{K: "job", V: orDash(r.JobID)},
			views.KV{K: "node", V: orDash(r.Node)},
			views.KV{K: "job state", V: orDash(r.JobState)})
	}
	var host metrics.HostFacts
	if json.Unmarshal(r.Host, &host) == nil && host.Hostname != "" {
		kv = append(kv,
			views.KV{K: "host", V: fmt.Sprintf("%s · %d cores · %s RAM · kernel %s", host.Hostname, host.Cores, units.Bytes(host.MemBytes), host.Kernel)},
			views.KV{K: "disk", V: orDash(host.DiskModel)},
			views.KV{K: "GPU", V: orDash(host.GPU)},
			views.KV{K: "GEMM", V: orDash(host.GEMM)})
		if host.Reclaim != "" {
			kv = append(kv, views.KV{K: "proactive reclaim", V: host.Reclaim + ": idle page cache paged out beside the memory limit"})
		}
	}
	kv = append(kv, views.KV{K: "versions", V: fmt.Sprintf("outcore %s · %s", orDash(r.OutcoreVersion), orDash(r.GoVersion))})
	return kv
}

func note(s string) string {
	if s == "" {
		return ""
	}
	return " (" + s + ")"
}

func orDash(s string) string {
	if s == "" {
		return "–"
	}
	return s
}

func dimLabel(d int) string {
	if d <= 0 {
		return "the dataset's"
	}
	return strconv.Itoa(d)
}

// measureKV are the run page's rows of the run's measurements
// (engine/metrics/fields.Runs with a Label), in their declared order: a
// dash where not measured (an accuracy of a run that trained no model),
// an Optional one left out; bytes in binary units.
func measureKV(r store.Run) []views.KV {
	v := r.Measures()
	var kv []views.KV
	for i := range fields.Runs {
		f := &fields.Runs[i]
		if f.Label == "" {
			continue
		}
		x, ok := f.Measured(v, r.Trains())
		switch {
		case !ok && f.Optional:
			continue
		case !ok:
			kv = append(kv, views.KV{K: f.Label, V: fmtPF(nil)})
		case f.Unit == "bytes":
			kv = append(kv, views.KV{K: f.Label, V: units.Bytes(int64(x))})
		default:
			kv = append(kv, views.KV{K: f.Label, V: fmtPF(&x)})
		}
	}
	return kv
}

// runSummary is what a finished run reported.
func runSummary(r store.Run) []views.KV {
	if !store.Finished(r.Status) {
		return nil
	}
	kv := []views.KV{{K: "outcome", V: r.Status}, {K: "epochs", V: strconv.Itoa(r.EpochsDone)}}
	kv = append(kv, measureKV(r)...)
	kv = append(kv, memoryKV(r)...)
	if r.ExitCode != nil {
		kv = append(kv, views.KV{K: "exit code", V: strconv.Itoa(*r.ExitCode)})
	}
	if r.Signal != "" {
		kv = append(kv, views.KV{K: "signal", V: r.Signal})
	}
	return kv
}

// runView builds a run page from the run, its epochs and its log events.
func runView(r store.Run, epochs []store.Epoch, logs []store.Event) views.RunView {
	v := views.RunView{
		ID: r.ID, ExperimentID: r.ExperimentID, Title: runTitle(r), Status: r.State(), Stall: r.Stall, Progress: runProgress(r),
		Facts: runFacts(r, logs), Summary: runSummary(r), StderrTail: r.StderrTail, Error: r.Error,
		Cause: oomCause(r, logs), PeakNote: peakNote(r),
		StartedMS:  msOf(r.StartedAt),
		ChartsURL:  fmt.Sprintf("/runs/%d/charts.json", r.ID),
		ExportBase: fmt.Sprintf("/experiments/%d/export", r.ExperimentID),
		CanCancel:  r.Status == store.StatusQueued || r.Status == store.StatusRunning,
		CanRetry:   store.Finished(r.Status) && !r.Superseded,
	}
	if store.Finished(r.Status) {
		v.EndedMS = msOf(r.EndedAt)
	}
	var cfg any
	if json.Unmarshal(r.Config, &cfg) == nil {
		if b, err := json.MarshalIndent(cfg, "", "  "); err == nil {
			v.Config = string(b)
		}
	}
	var devices map[string]string
	if json.Unmarshal(r.Devices, &devices) == nil {
		for _, k := range sortedKeys(devices) {
			v.Devices = append(v.Devices, views.KV{K: k, V: devices[k]})
		}
	}
	_ = json.Unmarshal(r.Deviations, &v.Deviations)
	recs := make([]metrics.EpochRecord, 0, len(epochs))
	for _, e := range epochs {
		v.Epochs = append(v.Epochs, epochRow(r, e.EpochRecord))
		recs = append(recs, e.EpochRecord)
	}
	// GIDS's accesses around its cache (every slot pinned by the window
	// or loading, DESIGN §5): reported where they happened
	if kv, ok := bypassKV(recs); ok && len(v.Summary) > 0 {
		v.Summary = append(v.Summary, kv)
	}
	// host pressure (DESIGN §5): flagged when busy, stated when recorded
	if p, busy := report.RunPressure(recs); p != nil {
		v.BusyHost = strings.Join(busy, "; ")
		if len(v.Summary) > 0 {
			v.Summary = append(v.Summary, views.KV{K: "host while training", V: report.PressureText(p)})
		}
	}
	if t := report.DiskText(recs); t != "" && len(v.Summary) > 0 {
		v.Summary = append(v.Summary, views.KV{K: "disk while training", V: t})
	}
	tail := logs
	if len(tail) > logTail {
		tail = tail[len(tail)-logTail:]
	}
	for _, ev := range tail {
		v.Logs = append(v.Logs, logLine(ev, r.StartedAt))
	}
	base := fmt.Sprintf("/runs/%d", r.ID)
	for _, entry := range report.ChartsOn(report.PageRun) {
		ch, _ := report.RunChart(entry.ID, store.Run{}, nil, nil)
		v.Charts = append(v.Charts, chartSlot(base, ch, entry.Wide))
	}
	return v
}

// runLogs reads a run's log and status events in order.
func runLogs(ctx context.Context, st Store, id int64) ([]store.Event, error) {
	logs, err := st.RunEvents(ctx, id, store.EventLog, store.EventStatus)
	if err != nil {
		return nil, err
	}
	sort.Slice(logs, func(i, j int) bool { return logs[i].ID < logs[j].ID })
	return logs, nil
}

// loadRun reads a run with its epochs and log.
func loadRun(ctx context.Context, st Store, id int64) (store.Run, []store.Epoch, []store.Event, error) {
	r, err := st.Run(ctx, id)
	if err != nil {
		return r, nil, nil, err
	}
	epochs, err := st.Epochs(ctx, id)
	if err != nil {
		return r, nil, nil, err
	}
	logs, err := runLogs(ctx, st, id)
	if err != nil {
		return r, nil, nil, err
	}
	return r, epochs, logs, nil
}

// Show handles GET /runs/:id.
func (h *RunsHandler) Show(c *fiber.Ctx) error {
	id, err := idParam(c)
	if err != nil {
		return err
	}
	ctx := c.UserContext()
	after, err := h.Store.LastEventID(ctx)
	if err != nil {
		return err
	}
	r, epochs, logs, err := loadRun(ctx, h.Store, id)
	if err != nil {
		return err
	}
	p := pageMeta(c, fmt.Sprintf("Run %d", id), "experiments")
	p.Stream = streamURL("run", id, after)
	return renderPage(c, views.RunPage(p, runView(r, epochs, logs)))
}

// ChartsJSON handles GET /runs/:id/charts.json.
func (h *RunsHandler) ChartsJSON(c *fiber.Ctx) error {
	id, err := idParam(c)
	if err != nil {
		return err
	}
	charts, err := report.LoadRunCharts(c.UserContext(), h.Store, id)
	if err != nil {
		return err
	}
	c.Set(fiber.HeaderCacheControl, "no-store")
	return c.JSON(fiber.Map{"charts": charts})
}

// ChartFile handles GET /runs/:id/charts/<chart>.{csv,svg,pdf}.
func (h *RunsHandler) ChartFile(c *fiber.Ctx) error {
	id, err := idParam(c)
	if err != nil {
		return err
	}
	chartID, ext, err := splitChartFile(c.Params("file"), report.RunChartIDs)
	if err != nil {
		return err
	}
	charts, err := report.LoadRunCharts(c.UserContext(), h.Store, id)
	if err != nil {
		return err
	}
	r, err := h.Store.Run(c.UserContext(), id)
	if err != nil {
		return err
	}
	meta := report.MetaOf(r.ExperimentID, []store.Run{r})
	meta.Run = id
	for _, ch := range charts {
		if ch.ID == chartID {
			return sendChart(c, ch, ext, report.FileName("run", id, chartID, ext), meta)
		}
	}
	return fiber.ErrNotFound
}

// Cancel handles POST /runs/:id/cancel.
func (h *RunsHandler) Cancel(c *fiber.Ctx) error {
	id, err := idParam(c)
	if err != nil {
		return err
	}
	if err := h.Queue.CancelRun(c.UserContext(), id); err != nil {
		return err
	}
	return doneOrRedirect(c, fmt.Sprintf("/runs/%d", id))
}

// Retry handles POST /runs/:id/retry: a new attempt joins the queue, and
// the browser goes to its page (HX-Redirect for the buttons, 303 for a
// plain form): the retried run's page would show the run that ended.
func (h *RunsHandler) Retry(c *fiber.Ctx) error {
	id, err := idParam(c)
	if err != nil {
		return err
	}
	nr, err := h.Queue.RetryRun(c.UserContext(), id)
	if err != nil {
		return err
	}
	return redirect(c, fmt.Sprintf("/runs/%d", nr.ID))
}

// doneOrRedirect answers an action: htmx buttons get 204 (the page's live
// stream shows the change), plain forms a redirect.
func doneOrRedirect(c *fiber.Ctx, to string) error {
	if c.Get("HX-Request") != "" {
		return c.SendStatus(fiber.StatusNoContent)
	}
	return c.Redirect(to, fiber.StatusSeeOther)
}

// memoryKV shows the run's memory contract side by side (DESIGN §2 "One
// memory contract"): each part's budget and what it held at the peak.
func memoryKV(r store.Run) []views.KV {
	m, ok := report.MemoryOf(r)
	if !ok {
		return nil
	}
	b := units.Bytes
	budget := func(v int64) string {
		if v <= 0 {
			return "none"
		}
		return b(v)
	}
	kv := []views.KV{
		{K: "host: budget · peak", V: budget(m.HostBudget) + " · " + b(m.HostPeak) + " (cgroup peak less GPU tiers and model step)"},
		{K: "gpu: budget · tiers held", V: budget(m.DeviceBudget) + " · " + b(m.DeviceHeld) + deviceTierList(m.DeviceTiers)},
		{K: "outside the budgets: model step", V: b(m.ModelStep)},
	}
	if m.Allowance > 0 {
		kv = append(kv, views.KV{K: "allowance (host + gpu + step) · cgroup peak", V: b(m.Allowance) + " · " + b(m.CgroupPeak)})
	}
	return kv
}

func deviceTierList(t map[string]int64) string {
	if len(t) == 0 {
		return ""
	}
	names := make([]string, 0, len(t))
	for k := range t {
		names = append(names, k)
	}
	sort.Strings(names)
	parts := make([]string, len(names))
	for i, k := range names {
		parts[i] = k + " " + units.Bytes(t[k])
	}
	return " (" + strings.Join(parts, ", ") + ")"
}

// seedOf is the run's seed from its configuration ("–" when it has none):
// each repeat of a grid has its own (grid.RepeatSeed).
func seedOf(cfg json.RawMessage) string {
	var c struct {
		Seed *int64 `json:"seed"`
	}
	if json.Unmarshal(cfg, &c) != nil || c.Seed == nil {
		return "–"
	}
	return strconv.FormatInt(*c.Seed, 10)
}

// bypassKV sums a run's cache accesses that went around a cache whose
// slots were all pinned (counter gpu_cache_bypass, GIDS) over its epochs,
// beside the cache's accesses; false when no epoch bypassed.
func bypassKV(eps []metrics.EpochRecord) (views.KV, bool) {
	var by, acc int64
	for _, e := range eps {
		c := e.Counters
		by += c["gpu_cache_bypass"]
		acc += c["gpu_cache_hits"] + c["gpu_cache_shared"] + c["gpu_cache_misses"] + c["gpu_cache_bypass"]
	}
	if by == 0 || acc == 0 {
		return views.KV{}, false
	}
	return views.KV{K: "cache bypass (every slot pinned)", V: fmt.Sprintf("%d of %d cache accesses (%.1f %%) read around the cache", by, acc, 100*float64(by)/float64(acc))}, true
}

// memoryLimitFact names the run's host budget and, where it held its model
// step or GPU tiers beside it, the larger limit its cgroup had in force.
func memoryLimitFact(r store.Run) string {
	budget := report.MemLabel(r.MemLimitBytes)
	if cg := r.CgroupLimit(); r.MemLimitBytes > 0 && cg > r.MemLimitBytes {
		return fmt.Sprintf("host budget %s; cgroup limit in force %s (the budget and what the run held beside it: the model step, GPU tiers; see the deviations)", budget, report.MemLabel(cg))
	}
	if r.MemLimitBytes > 0 && r.LimitEnforced {
		return "host budget " + budget + " (the cgroup limit in force)"
	}
	return budget
}
