package experiments

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"outcore/engine/metrics"
	"outcore/store"
)

// RecordLogFile is the name of a run's record log in its run directory.
const RecordLogFile = "records.jsonl"

// recordLogPath is where run id's record log lives.
func (m *Manager) recordLogPath(id int64) string { return filepath.Join(m.runDir(id), RecordLogFile) }

// recordLog is a run's record log: every stdout line of its child, in
// order, appended before the line is stored. It is the source of truth for
// what the child reported (docs/ARCHITECTURE.md, "Records"): a server that
// dies before storing a record, or a store that refuses it, loses nothing
// the log holds — the next queue process ingests it (ingestRecordLog).
//
// When a write fails (a full disk) the line is kept in memory with every
// later one, the file is cut back to its last whole line, and the backlog
// is written again on the next append or retry.
type recordLog struct {
	path    string
	f       *os.File // nil until it could be opened
	size    int64    // bytes of whole lines written
	backlog [][]byte
	fault   func() error // test hook: fails a write when it returns an error
}

func (l *recordLog) open() error {
	if l.f != nil {
		return nil
	}
	f, err := os.OpenFile(l.path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("record log: %w", err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return fmt.Errorf("record log: %w", err)
	}
	l.f, l.size = f, st.Size()
	return nil
}

// append logs one line (a newline is added when missing).
func (l *recordLog) append(line []byte) error {
	b := append([]byte(nil), bytes.TrimRight(line, "\n")...)
	l.backlog = append(l.backlog, append(b, '\n'))
	return l.retry()
}

// retry writes the backlog; on failure it keeps what was not written.
func (l *recordLog) retry() error {
	if len(l.backlog) == 0 {
		return nil
	}
	if err := l.open(); err != nil {
		return err
	}
	for len(l.backlog) > 0 {
		var err error
		if l.fault != nil {
			err = l.fault()
		}
		var n int
		if err == nil {
			n, err = l.f.Write(l.backlog[0])
		}
		if err != nil {
			if n > 0 {
				l.f.Truncate(l.size) // no half line in the log
			}
			return fmt.Errorf("record log %s: %w", l.path, err)
		}
		l.size += int64(n)
		l.backlog[0] = nil
		l.backlog = l.backlog[1:]
	}
	l.backlog = nil
	return nil
}

// pending is the number of lines not yet written.
func (l *recordLog) pending() int { return len(l.backlog) }

func (l *recordLog) close() {
	if l.f != nil {
		l.f.Close()
	}
}

// loggedRecords are the records of a record log that the store keeps.
type loggedRecords struct {
	epochs     []metrics.EpochRecord
	samples    []metrics.SampleRecord
	deviations []string
	lines      int
}

// readRecordLog reads a record log; lines that are not records (a line cut
// by a crash, stray output) are skipped.
func readRecordLog(path string) (loggedRecords, error) {
	var out loggedRecords
	f, err := os.Open(path)
	if err != nil {
		return out, err
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 64<<10)
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 && bytes.HasSuffix(line, []byte("\n")) {
			out.lines++
			var head struct {
				Type string `json:"type"`
			}
			if json.Unmarshal(line, &head) == nil {
				switch head.Type {
				case metrics.TypeEpoch:
					var r metrics.EpochRecord
					if json.Unmarshal(line, &r) == nil {
						out.epochs = append(out.epochs, r)
					}
				case metrics.TypeSample:
					var r metrics.SampleRecord
					if json.Unmarshal(line, &r) == nil {
						out.samples = append(out.samples, r)
					}
				case metrics.TypeSummary:
					var r metrics.SummaryRecord
					if json.Unmarshal(line, &r) == nil && len(r.Deviations) > 0 {
						out.deviations = r.Deviations
					}
				}
			}
		}
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return out, err
		}
	}
}

// ingestRecordLog stores what run r's record log holds and the store does
// not: epochs and samples (both idempotent by key) and the summary's
// deviations. The queue process calls it for runs a dead server left
// running, before marking them interrupted.
func (m *Manager) ingestRecordLog(ctx context.Context, r store.Run) error {
	recs, err := readRecordLog(m.recordLogPath(r.ID))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	stored, err := m.st.Epochs(ctx, r.ID)
	if err != nil {
		return err
	}
	have := map[int]bool{}
	for _, e := range stored {
		have[e.Epoch] = true
	}
	var missing []metrics.EpochRecord
	for _, e := range recs.epochs {
		if !have[e.Epoch] {
			missing = append(missing, e)
		}
	}
	if len(missing) == 0 && len(recs.samples) == 0 && recs.deviations == nil {
		return nil
	}
	return m.update(ctx, func(tx *store.Tx) error {
		for i := range missing {
			if err := tx.InsertEpoch(r.ID, &missing[i]); err != nil {
				return err
			}
		}
		if err := tx.InsertSamples(r.ID, recs.samples); err != nil {
			return err
		}
		if recs.deviations != nil {
			if err := tx.SetDeviations(r.ID, recs.deviations); err != nil {
				return err
			}
		}
		if len(missing) == 0 {
			return nil
		}
		return tx.AppendEvent(&store.Event{ExperimentID: r.ExperimentID, RunID: r.ID, Kind: store.EventLog, Level: "warn",
			Msg: fmt.Sprintf("%d epoch(s) the child reported were not stored before the server stopped; ingested them from %s", len(missing), RecordLogFile)})
	})
}
