package web

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"runtime/debug"
	"strings"

	"github.com/a-h/templ"

	"outcore/engine/metrics"
	"outcore/report"
	"outcore/store"
	"outcore/web/views"
)

// Feed turns the store's event log into the pages' live updates: it
// follows the log through the runner's subscription (woken by each commit),
// renders for each event the HTML fragments the pages showing it need
// (out-of-band swaps keyed by element id) and publishes them on the hub
// under the event's own id.
type Feed struct {
	Source interface {
		SubscribeFrom(lastID int64) (<-chan store.Event, func())
	}
	Store Store
	// DataDir and Digests serve a study's table (re-rendered as runs end).
	DataDir string
	Digests *report.DigestCache
	Hub     *Hub
	Log     *log.Logger
	cursor  int64 // the newest store event handled
}

// maxFeedBatch bounds how many events one publish carries.
const maxFeedBatch = 500

// Run follows the event log until ctx ends or the subscription closes.
func (f *Feed) Run(ctx context.Context) {
	ch, stop := f.Source.SubscribeFrom(f.cursor)
	defer stop()
	for {
		var batch []store.Event
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-ch:
			if !ok {
				return
			}
			batch = append(batch, ev)
		}
	drain:
		for len(batch) < maxFeedBatch {
			select {
			case ev, ok := <-ch:
				if !ok {
					break drain
				}
				batch = append(batch, ev)
			default:
				break drain
			}
		}
		if err := f.handleSafe(ctx, batch); err != nil && ctx.Err() == nil {
			f.Log.Printf("live feed: %v", err)
		}
	}
}

// handleSafe is Handle; a panic (a bug rendering an update) loses that
// batch's updates, not the server.
func (f *Feed) handleSafe(ctx context.Context, evs []store.Event) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic publishing events %d..%d: %v\n%s", evs[0].ID, evs[len(evs)-1].ID, p, debug.Stack())
		}
	}()
	return f.Handle(ctx, evs)
}

// Handle publishes the updates of a batch of events (in id order). An
// event whose update cannot be rendered is logged and skipped.
func (f *Feed) Handle(ctx context.Context, evs []store.Event) error {
	var out []Event
	var firstErr error
	for i, ev := range evs {
		if superseded(evs, i) {
			continue
		}
		more, err := f.updates(ctx, ev)
		if err != nil {
			if firstErr == nil {
				firstErr = fmt.Errorf("event %d (%s): %w", ev.ID, ev.Kind, err)
			}
			continue
		}
		out = append(out, more...)
	}
	f.Hub.Publish(out...)
	if n := len(evs); n > 0 {
		f.cursor = evs[n-1].ID
		f.Hub.Advance(f.cursor)
	}
	return firstErr
}

// superseded reports whether a later event of the batch makes evs[i]
// redundant: a progress record or sample followed by a newer one of the same run.
func superseded(evs []store.Event, i int) bool {
	ev := evs[i]
	if ev.Kind != store.EventProgress && ev.Kind != store.EventSample {
		return false
	}
	for _, later := range evs[i+1:] {
		if later.RunID == ev.RunID && later.Kind == ev.Kind {
			return true
		}
	}
	return false
}

// fragments collects the out-of-band swaps of one update. Every swap sits
// in its own <template>, so table rows parse wherever they appear and htmx
// (2.x) finds them there.
type fragments struct {
	ctx context.Context
	b   strings.Builder
	err error
}

func (fr *fragments) add(c templ.Component) {
	if fr.err != nil {
		return
	}
	fr.err = c.Render(fr.ctx, &fr.b)
}

// raw adds literal HTML.
func (fr *fragments) raw(s string) { fr.b.WriteString(s) }

// swap adds a wrapper element carrying hx-swap-oob (e.g.
// "innerHTML:#queue-rows") whose children are c's output.
func (fr *fragments) swap(tag, oob string, c templ.Component) {
	fr.raw(fmt.Sprintf(`<template><%s hx-swap-oob="%s">`, tag, templ.EscapeString(oob)))
	fr.add(c)
	fr.raw("</" + tag + "></template>")
}

// appendTo adds c's output at the end (or start) of a container; app.js
// drops any appended element whose id the page already has, so a repeated
// event never shows twice.
func (fr *fragments) appendTo(tag, where, target string, c templ.Component) {
	fr.raw(fmt.Sprintf(`<template><%s hx-swap-oob="%s:%s" data-append>`, tag, where, templ.EscapeString(target)))
	fr.add(c)
	fr.raw("</" + tag + "></template>")
}

// self adds a component that carries its own hx-swap-oob attribute.
func (fr *fragments) self(c templ.Component) {
	fr.raw("<template>")
	fr.add(c)
	fr.raw("</template>")
}

// updates renders what one store event changes on each page.
func (f *Feed) updates(ctx context.Context, ev store.Event) ([]Event, error) {
	switch ev.Kind {
	case store.EventExperiment:
		return f.experimentChanged(ctx, ev)
	case store.EventStatus:
		return f.statusChanged(ctx, ev)
	case store.EventEpoch:
		return f.epochArrived(ctx, ev)
	case store.EventProgress:
		return f.progressed(ctx, ev)
	case store.EventSample:
		return []Event{{ID: ev.ID, Scope: RunScope(ev.RunID), Name: EventUpdate, Data: ChartsMarker}}, nil
	case store.EventLog:
		return f.logged(ctx, ev)
	}
	return nil, nil
}

// experimentRowUpdate re-renders an experiment's line of the list (inserted when new).
func (f *Feed) experimentRowUpdate(ctx context.Context, id int64) (string, bool, error) {
	e, err := f.Store.Experiment(ctx, id)
	if err != nil {
		if isNotFound(err) {
			return fmt.Sprintf(`<template><tr id="exp-%d" hx-swap-oob="delete"></tr></template>`, id), false, nil
		}
		return "", false, err
	}
	row := experimentRow(e)
	fr := &fragments{ctx: ctx}
	fr.raw(`<div id="no-experiments" hx-swap-oob="delete"></div>`)
	fr.appendTo("tbody", "afterbegin", "#experiment-rows", views.ExperimentRowView(row, ""))
	fr.self(views.ExperimentRowView(row, "true"))
	return fr.b.String(), true, fr.err
}

// experimentPageUpdate re-renders an experiment page's summary, queue rows
// and accuracy table.
func (f *Feed) experimentPageUpdate(ctx context.Context, id int64) (string, error) {
	e, err := f.Store.Experiment(ctx, id)
	if err != nil {
		return "", err
	}
	runs, err := f.Store.Runs(ctx, store.RunFilter{ExperimentID: id, Current: true})
	if err != nil {
		return "", err
	}
	v := experimentView(e, runs, "")
	fr := &fragments{ctx: ctx}
	fr.swap("div", "innerHTML:#experiment-summary", views.ExperimentSummaryBody(v))
	fr.swap("tbody", "innerHTML:#queue-rows", templ.ComponentFunc(func(ctx context.Context, w io.Writer) error {
		for _, r := range v.Runs {
			if err := views.RunRowView(r, "").Render(ctx, w); err != nil {
				return err
			}
		}
		return nil
	}))
	fr.swap("tbody", "innerHTML:#accuracy-rows", views.AccuracyRows(v.Accuracy))
	if st, err := studyTable(ctx, f.Store, f.Digests, f.DataDir, e); err == nil && st != nil {
		fr.swap("div", "innerHTML:#study-box", views.StudyTable(*st))
	}
	fr.raw(ChartsMarker)
	return fr.b.String(), fr.err
}

func (f *Feed) experimentChanged(ctx context.Context, ev store.Event) ([]Event, error) {
	row, exists, err := f.experimentRowUpdate(ctx, ev.ExperimentID)
	if err != nil {
		return nil, err
	}
	out := []Event{{ID: ev.ID, Scope: ScopeExperiments, Name: EventUpdate, Data: row}}
	if !exists {
		return append(out, Event{ID: ev.ID, Scope: ExperimentScope(ev.ExperimentID), Name: EventReload, Data: "experiment deleted"}), nil
	}
	page, err := f.experimentPageUpdate(ctx, ev.ExperimentID)
	if err != nil {
		return nil, err
	}
	return append(out, Event{ID: ev.ID, Scope: ExperimentScope(ev.ExperimentID), Name: EventUpdate, Data: page}), nil
}

// statusChanged updates the list row, the experiment page and the run page.
func (f *Feed) statusChanged(ctx context.Context, ev store.Event) ([]Event, error) {
	r, err := f.Store.Run(ctx, ev.RunID)
	if isNotFound(err) {
		return nil, nil // deleted since; its experiment event follows
	}
	if err != nil {
		return nil, err
	}
	row, _, err := f.experimentRowUpdate(ctx, r.ExperimentID)
	if err != nil {
		return nil, err
	}
	out := []Event{{ID: ev.ID, Scope: ScopeExperiments, Name: EventUpdate, Data: row}}
	page, err := f.experimentPageUpdate(ctx, r.ExperimentID)
	if err != nil {
		return nil, err
	}
	out = append(out, Event{ID: ev.ID, Scope: ExperimentScope(r.ExperimentID), Name: EventUpdate, Data: page})
	runPage, err := f.runPageUpdate(ctx, r, &ev)
	if err != nil {
		return nil, err
	}
	return append(out, Event{ID: ev.ID, Scope: RunScope(r.ID), Name: EventUpdate, Data: runPage}), nil
}

// runPageUpdate re-renders a run page's header and summary, and appends
// the event to its log when it is one.
func (f *Feed) runPageUpdate(ctx context.Context, r store.Run, logEv *store.Event) (string, error) {
	epochs, err := f.Store.Epochs(ctx, r.ID)
	if err != nil {
		return "", err
	}
	logs, err := runLogs(ctx, f.Store, r.ID)
	if err != nil {
		return "", err
	}
	v := runView(r, epochs, logs)
	v.Logs = nil
	fr := &fragments{ctx: ctx}
	fr.swap("div", "innerHTML:#run-header", views.RunHeaderBody(v))
	fr.swap("div", "innerHTML:#run-facts", views.RunFacts(v))
	fr.swap("div", "innerHTML:#run-summary", views.RunSummaryBody(v))
	if logEv != nil {
		fr.appendTo("div", "beforeend", "#log-lines", views.LogLineView(logLine(*logEv, r.StartedAt)))
	}
	fr.raw(ChartsMarker)
	return fr.b.String(), fr.err
}

// epochArrived appends the epoch to the run page and refreshes the charts
// and the run's queue row.
func (f *Feed) epochArrived(ctx context.Context, ev store.Event) ([]Event, error) {
	var rec metrics.EpochRecord
	if err := json.Unmarshal(ev.Data, &rec); err != nil {
		return nil, fmt.Errorf("epoch record: %w", err)
	}
	r, err := f.Store.Run(ctx, ev.RunID)
	if isNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	fr := &fragments{ctx: ctx}
	fr.appendTo("tbody", "beforeend", "#epoch-rows", views.EpochRowView(epochRow(r, rec)))
	runPage, err := f.runPageUpdate(ctx, r, nil)
	if err != nil {
		return nil, err
	}
	fr.raw(runPage)
	exp := &fragments{ctx: ctx}
	exp.self(views.RunRowView(runRow(r), "true"))
	exp.raw(ChartsMarker)
	if fr.err != nil || exp.err != nil {
		return nil, fmt.Errorf("render: %v %v", fr.err, exp.err)
	}
	return []Event{
		{ID: ev.ID, Scope: ExperimentScope(r.ExperimentID), Name: EventUpdate, Data: exp.b.String()},
		{ID: ev.ID, Scope: RunScope(r.ID), Name: EventUpdate, Data: fr.b.String()},
	}, nil
}

// progressed moves the run's progress bars.
func (f *Feed) progressed(ctx context.Context, ev store.Event) ([]Event, error) {
	r, err := f.Store.Run(ctx, ev.RunID)
	if isNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if len(ev.Data) > 0 {
		r.Progress = ev.Data // the event's record, even if the row moved on
	}
	p := runProgress(r)
	exp := &fragments{ctx: ctx}
	exp.swap("div", fmt.Sprintf("innerHTML:#run-progress-%d", r.ID), views.ProgressBar(p))
	run := &fragments{ctx: ctx}
	run.swap("div", "innerHTML:#run-progress", views.ProgressBar(p))
	if exp.err != nil || run.err != nil {
		return nil, fmt.Errorf("render: %v %v", exp.err, run.err)
	}
	return []Event{
		{ID: ev.ID, Scope: ExperimentScope(r.ExperimentID), Name: EventUpdate, Data: exp.b.String()},
		{ID: ev.ID, Scope: RunScope(r.ID), Name: EventUpdate, Data: run.b.String()},
	}, nil
}

// logged appends a log line to the run page.
func (f *Feed) logged(ctx context.Context, ev store.Event) ([]Event, error) {
	if ev.RunID == 0 {
		return nil, nil
	}
	r, err := f.Store.Run(ctx, ev.RunID)
	if isNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	fr := &fragments{ctx: ctx}
	fr.appendTo("div", "beforeend", "#log-lines", views.LogLineView(logLine(ev, r.StartedAt)))
	// The child's start record arrives as a log line and fills in the backend,
	// devices and deviations.
	logs, err := runLogs(ctx, f.Store, r.ID)
	if err != nil {
		return nil, err
	}
	fr.swap("div", "innerHTML:#run-facts", views.RunFacts(runView(r, nil, logs)))
	if fr.err != nil {
		return nil, fr.err
	}
	return []Event{{ID: ev.ID, Scope: RunScope(ev.RunID), Name: EventUpdate, Data: fr.b.String()}}, nil
}
