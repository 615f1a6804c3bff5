package experiments

// The I/O floor without a manual step (DESIGN §11): the dashboard measures
// the storage holding its datasets once, in the background, when this
// host has no profile of it (ProbeStorage, with progress for the pages);
// a run about to start waits for that measurement (or takes it itself:
// devprofile.Ensure), so its epochs carry io_floor_s; and the epochs
// recorded before a profile existed get their floor filled in from the
// device reads they kept (FillIOFloors).

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"outcore/engine/dataset"
	"outcore/engine/devprofile"
	"outcore/engine/metrics"
	"outcore/store"
)

// StorageStatus is where the measurement of this host's storage stands,
// for the dashboard.
type StorageStatus struct {
	// State is "" (not asked), "measuring", "ready" (a profile is there),
	// "off" (devprofile.ProbeEnv) or "failed".
	State string
	devprofile.Progress
	Note    string    // the outcome's line: which profile, or why none
	Path    string    // the profile's file
	Started time.Time // when the measurement started
	Filled  int       // epochs whose floor was filled in afterwards
}

// storageProbe holds the manager's StorageStatus.
type storageProbe struct {
	mu sync.Mutex
	st StorageStatus
}

func (p *storageProbe) set(f func(*StorageStatus)) {
	p.mu.Lock()
	f(&p.st)
	p.mu.Unlock()
}

// StorageStatus says where the measurement of this host's storage stands.
func (m *Manager) StorageStatus() StorageStatus {
	m.probe.mu.Lock()
	defer m.probe.mu.Unlock()
	return m.probe.st
}

// ProbeStorage measures the storage holding the data directory's datasets
// in the background when this host has no profile of it, and then fills
// in the floor of the stored epochs that lack one. It returns at once;
// StorageStatus follows it, and done (when not nil) is closed at its end.
func (m *Manager) ProbeStorage(ctx context.Context) (done <-chan struct{}) {
	ch := make(chan struct{})
	dsDir := dataset.DatasetsDir(m.opts.DataDir)
	if err := os.MkdirAll(dsDir, 0o755); err != nil {
		m.probe.set(func(s *StorageStatus) { s.State, s.Note = "failed", fmt.Sprintf("no I/O floor: %v", err) })
		close(ch)
		return ch
	}
	m.probe.set(func(s *StorageStatus) { s.State, s.Started = "measuring", time.Now() })
	go func() {
		defer close(ch)
		o, err := devprofile.Ensure(ctx, m.opts.DataDir, dsDir, func(p devprofile.Progress) {
			m.probe.set(func(s *StorageStatus) { s.Progress = p })
			m.hub.kick()
		})
		if err != nil { // the server is stopping
			m.probe.set(func(s *StorageStatus) { s.State, s.Note = "failed", err.Error() })
			return
		}
		state := "ready"
		switch {
		case o.Profile == nil && devprofile.ProbeOff():
			state = "off"
		case o.Profile == nil:
			state = "failed"
		}
		m.probe.set(func(s *StorageStatus) { s.State, s.Note, s.Path = state, o.Note, o.Path })
		if o.Measured {
			m.opts.Logf("storage: %s", o.Note)
		}
		if o.Profile != nil {
			n, err := m.FillIOFloors(ctx)
			if err != nil {
				m.opts.Logf("storage: filling in the I/O floor of earlier runs: %v", err)
			}
			m.probe.set(func(s *StorageStatus) { s.Filled = n })
		}
		m.hub.kick()
	}()
	return ch
}

// ensureStorage makes sure the storage the run's dataset is on was
// measured before the child starts (waiting for the dashboard's
// measurement, or measuring it here), and logs what the run's floor will
// be measured against.
func (m *Manager) ensureStorage(ctx context.Context, r store.Run) {
	dsDir := filepath.Join(dataset.DatasetsDir(m.opts.DataDir), r.Dataset)
	o, err := devprofile.Ensure(ctx, m.opts.DataDir, dsDir, nil)
	switch {
	case err != nil:
		return // stopping: the run's own outcome says so
	case o.Measured:
		m.logEvent(r, "info", o.Note)
	case o.Waited > 0:
		m.logEvent(r, "info", fmt.Sprintf("waited %.1f s for the measurement of this host's storage: %s", o.Waited.Seconds(), o.Note))
	case o.Profile == nil && !devprofile.ProbeOff():
		m.logEvent(r, "warn", o.Note) // the measurement failed (off: the child's own log line says so)
	}
}

// FillIOFloors fills in the I/O floor of the stored epochs that have none
// and kept their device reads, from the data directory's profiles of
// their runs' hosts and storage, and refreshes those runs' digests
// (Options.Finished). It returns how many epochs it filled in.
func (m *Manager) FillIOFloors(ctx context.Context) (int, error) {
	n, runs, err := FillIOFloors(ctx, m.st, m.opts.DataDir)
	for _, id := range runs {
		if m.opts.Finished != nil {
			if ferr := m.opts.Finished(ctx, id); ferr != nil {
				m.opts.Logf("run %d digest: %v", id, ferr)
			}
		}
	}
	if len(runs) > 0 {
		m.hub.kick()
	}
	return n, err
}

// FillIOFloors fills in the I/O floor of st's epochs that have none and
// kept their device reads, from dataDir's device profile of each run's
// host and storage (devprofile.Load), with one event per run saying so.
// It returns the epochs filled in and the runs they belong to.
func FillIOFloors(ctx context.Context, st *store.Store, dataDir string) (int, []int64, error) {
	pending, err := st.FloorlessEpochs(ctx)
	if err != nil || len(pending) == 0 {
		return 0, nil, err
	}
	type found struct {
		p    *metrics.DeviceProfile
		path string
	}
	profiles := map[devprofile.Key]found{}
	profileOf := func(h metrics.HostFacts) found {
		k := devprofile.Key{Host: h.Hostname, Storage: h.Storage}
		if f, ok := profiles[k]; ok {
			return f
		}
		var f found
		if k.Host != "" && k.Storage != "" {
			f.p, f.path, _ = devprofile.Load(dataDir, k)
		}
		profiles[k] = f
		return f
	}
	filled := 0
	var runs []int64
	for i := 0; i < len(pending); {
		j := i
		for j < len(pending) && pending[j].RunID == pending[i].RunID {
			j++
		}
		run := pending[i:j]
		i = j
		f := profileOf(run[0].Host)
		if f.p == nil {
			continue
		}
		n := 0
		err := st.Update(ctx, func(tx *store.Tx) error {
			n = 0
			for _, e := range run {
				rec := e.EpochRecord
				if !metrics.FillIOFloor(&rec, f.p) {
					continue
				}
				ok, err := tx.SetIOFloor(e.RunID, rec.Epoch, *rec.IOFloorS, rec.IOEfficiency, rec.DiskService)
				if err != nil {
					return err
				}
				if ok {
					n++
				}
			}
			if n == 0 {
				return nil
			}
			if err := tx.MarkIOFloorsFilled(run[0].RunID); err != nil {
				return err
			}
			return tx.AppendEvent(&store.Event{ExperimentID: run[0].ExperimentID, RunID: run[0].RunID, Kind: store.EventLog, Level: "info",
				Msg: fmt.Sprintf("%s %d epochs recorded before the storage was measured, from %s", devprofile.FloorFilledIn, n, devprofile.Describe(f.p, f.path))})
		})
		if err != nil {
			return filled, runs, err
		}
		if n > 0 {
			filled += n
			runs = append(runs, run[0].RunID)
		}
	}
	return filled, runs, nil
}
