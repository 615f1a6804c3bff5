package experiments

// Advancing a memory-frontier experiment (frontier.go, DESIGN §12): after
// each of its runs ends, every cell whose probes have all ended gets its
// next probe, a run like the cell's first at the limit NextFrontierProbe
// chooses, queued behind the runs already queued.

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"sync"

	"outcore/engine/dataset"
	"outcore/engine/train"
	"outcore/experiments/grid"
	"outcore/internal/units"
	"outcore/store"
)

// frontierMu serialises AdvanceFrontier (the queue's end-of-run hook and
// `exp create --wait` both call it).
var frontierMu sync.Mutex

// FrontierCell is one cell's state: its probes by limit, and the step the
// policy decides now.
type FrontierCell struct {
	System string
	Floor  int64
	Ceil   int64
	Probes []FrontierProbe
	Step   FrontierStep
}

// AdvanceFrontier queues the next probe of every cell of a frontier
// experiment whose probes have all ended, and returns how many it queued
// (0 for any other experiment). A cell with a cancelled or interrupted
// probe is left as it is (someone stopped it; retrying the run resumes).
// ended is the run whose end prompted the call (0: none): when its cell
// is done, the frontier is announced as an event of the experiment.
func (m *Manager) AdvanceFrontier(ctx context.Context, expID, ended int64) (int, error) {
	frontierMu.Lock()
	defer frontierMu.Unlock()
	cells, g, err := m.frontierCells(ctx, expID)
	if err != nil || g == nil {
		return 0, err
	}
	added := 0
	err = m.update(ctx, func(tx *store.Tx) error {
		added = 0
		for _, c := range cells {
			if c.next.Next == 0 {
				if c.next.Done && c.has(ended) {
					msg := fmt.Sprintf("frontier of %s: %s", c.first.System, FrontierText(c.FrontierCell))
					if err := tx.AppendEvent(&store.Event{ExperimentID: expID, Kind: store.EventExperiment, Msg: msg,
						Data: eventData(map[string]any{"action": "frontier", "system": c.first.System, "frontier_bytes": c.next.Frontier, "note": c.next.Note})}); err != nil {
						return err
					}
				}
				continue
			}
			cfg, err := train.ParseConfig(c.first.Config)
			if err != nil {
				return fmt.Errorf("frontier probe of run %d: %w", c.first.ID, err)
			}
			cfg.MemLimit, cfg.MemLimitBytes = strconv.FormatInt(c.next.Next, 10), c.next.Next
			b, err := json.Marshal(cfg)
			if err != nil {
				return err
			}
			r := store.Run{ExperimentID: expID, Seq: c.nextSeq, System: c.first.System, Dataset: c.first.Dataset, Model: c.first.Model,
				MemLimitBytes: c.next.Next, FeatureDim: c.first.FeatureDim, BatchSize: c.first.BatchSize, Fanout: c.first.Fanout,
				Repeat: c.first.Repeat, Compute: c.first.Compute, Config: b, Executor: c.first.Executor}
			if err := tx.InsertRun(&r); err != nil {
				return err
			}
			added++
		}
		return nil
	})
	if added > 0 {
		m.signal()
	}
	return added, err
}

// cellState is a cell of a frontier experiment as AdvanceFrontier sees it.
type cellState struct {
	FrontierCell
	first   store.Run // the probe at 100 %: the pattern of the next
	next    FrontierStep
	nextSeq int
	runs    []int64
}

// has reports whether run id is one of the cell's probes.
func (c cellState) has(id int64) bool {
	for _, r := range c.runs {
		if r == id && id != 0 {
			return true
		}
	}
	return false
}

// frontierCells reads a frontier experiment's cells with their probes and
// next steps; g is nil when the experiment is not a frontier search.
func (m *Manager) frontierCells(ctx context.Context, expID int64) ([]cellState, *grid.Grid, error) {
	e, err := m.st.Experiment(ctx, expID)
	if err != nil {
		return nil, nil, err
	}
	g, err := grid.ParseGrid(e.Grid)
	if err != nil || g == nil || g.Frontier == nil {
		return nil, nil, nil // not a (valid) frontier grid: nothing to advance
	}
	runs, err := m.st.Runs(ctx, store.RunFilter{ExperimentID: expID, Current: true})
	if err != nil {
		return nil, nil, err
	}
	groups := map[store.FrontierKey][]store.Run{}
	var keys []store.FrontierKey
	maxSeq := 0
	for _, r := range runs {
		maxSeq = max(maxSeq, r.Seq)
		k := store.FrontierKeyOf(r)
		if _, ok := groups[k]; !ok {
			keys = append(keys, k)
		}
		groups[k] = append(groups[k], r)
	}
	sort.Slice(keys, func(i, j int) bool { return groups[keys[i]][0].Seq < groups[keys[j]][0].Seq })
	var out []cellState
	seq := maxSeq + 1
	metas := map[string]dataset.Meta{}
	for _, k := range keys {
		rs := groups[k]
		c := cellState{}
		open, stopped := false, false
		for _, r := range rs {
			c.runs = append(c.runs, r.ID)
			switch {
			case !store.Finished(r.Status):
				open = true
			case r.Status == store.StatusCancelled || r.Status == store.StatusInterrupted:
				stopped = true
			}
			if r.MemLimitBytes > c.first.MemLimitBytes {
				c.first = r
			}
			p := FrontierProbe{Limit: r.MemLimitBytes, Epoch: r.EpochsDone > 0}
			if r.MeanEpochS != nil {
				p.EpochS = *r.MeanEpochS
			}
			if !r.StartedAt.IsZero() && r.EndedAt.After(r.StartedAt) {
				p.WallS = r.EndedAt.Sub(r.StartedAt).Seconds()
			}
			if store.Finished(r.Status) {
				c.Probes = append(c.Probes, p)
			}
		}
		c.System, c.Ceil = c.first.System, c.first.MemLimitBytes
		meta, ok := metas[k.Dataset]
		if !ok {
			if ds, err := dataset.OpenByName(m.opts.DataDir, k.Dataset); err == nil {
				meta = ds.Meta
				metas[k.Dataset] = meta
			}
		}
		if cfg, err := train.ParseConfig(c.first.Config); err == nil && m.opts.MinMemory != nil {
			c.Floor = m.opts.MinMemory(cfg, meta)
		}
		c.Step = NextFrontierProbe(c.Floor, c.Ceil, c.Probes, *g.Frontier)
		if !open && !stopped {
			c.next = c.Step
			c.nextSeq = seq
			if c.next.Next != 0 {
				seq++
			}
		}
		out = append(out, c)
	}
	return out, g, nil
}

// FrontierCells are a frontier experiment's cells with their probes, the
// floor and 100 % limits and what the policy decides (nil for another
// experiment): for the views and `exp frontier`.
func (m *Manager) FrontierCells(ctx context.Context, expID int64) ([]FrontierCell, error) {
	cs, g, err := m.frontierCells(ctx, expID)
	if err != nil || g == nil {
		return nil, err
	}
	out := make([]FrontierCell, len(cs))
	for i, c := range cs {
		out[i] = c.FrontierCell
	}
	return out, nil
}

// FrontierText says a cell's result in words.
func FrontierText(c FrontierCell) string {
	s := "none (no epoch finished)"
	if c.Step.Frontier > 0 {
		s = fmt.Sprintf("%s (floor %s, top probe %s, %d probes)", units.Bytes(c.Step.Frontier), units.Bytes(c.Floor), units.Bytes(c.Ceil), len(c.Probes))
	}
	if c.Step.Note != "" {
		s += "; " + c.Step.Note
	}
	return s
}
