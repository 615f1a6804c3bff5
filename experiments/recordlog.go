package experiments

import (
	"bufio"
	"bytes"
	"context"
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

// loggedRecords are the records of a record log that the store keeps,
// and the lines refused (not the run's records, recordcheck.go).
type loggedRecords struct {
	epochs     []metrics.EpochRecord
	samples    []metrics.SampleRecord
	deviations []string
	lines      int // whole lines
	refused    []refusedLine
}

// refusedLine is a line of a record log that is not a record of its run.
type refusedLine struct {
	n    int // its line number, from 1
	err  error
	text []byte
}

// errCutLine refuses the last line of a log when it has no newline: the
// writer stopped in the middle of it (a crash).
var errCutLine = errors.New("the line is cut: it has no newline at its end (the writer stopped while writing it)")

// readRecordLog reads run r's record log, checking every line against
// the run (recordCheck: its id, its epochs' range and order, each
// record's schema) from the first: what is not the run's records (stray
// output, a corrupt line, another run's record, an epoch out of range or
// order, a last line cut by a crash) is refused, with its line number and
// why.
func readRecordLog(path string, r store.Run) (loggedRecords, error) {
	var out loggedRecords
	f, err := os.Open(path)
	if err != nil {
		return out, err
	}
	defer f.Close()
	check := newRecordCheck(r)
	br := bufio.NewReaderSize(f, 64<<10)
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 && !bytes.HasSuffix(line, []byte("\n")) {
			out.refused = append(out.refused, refusedLine{n: out.lines + 1, err: errCutLine, text: line})
		}
		if len(line) > 0 && bytes.HasSuffix(line, []byte("\n")) {
			out.lines++
			rec, cerr := check.check(line)
			switch {
			case len(bytes.TrimSpace(line)) == 0:
			case cerr != nil:
				out.refused = append(out.refused, refusedLine{n: out.lines, err: cerr, text: line})
			case rec.Epoch != nil:
				out.epochs = append(out.epochs, *rec.Epoch)
			case rec.Sample != nil:
				out.samples = append(out.samples, *rec.Sample)
			case rec.Summary != nil && len(rec.Summary.Deviations) > 0:
				out.deviations = rec.Summary.Deviations
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
// deviations, of the lines that are the run's records (readRecordLog).
// The queue process calls it for runs a dead server left running, before
// marking them interrupted, with logRefusals: each line refused is logged
// (an event of the run and the server's log) with its line number and
// why. The ingester of a live run calls it without: it logged them as
// they came.
func (m *Manager) ingestRecordLog(ctx context.Context, r store.Run, logRefusals bool) error {
	recs, err := readRecordLog(m.recordLogPath(r.ID), r)
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
	var refusals []*store.Event
	if logRefusals {
		for i, l := range recs.refused {
			if i == maxRefusalEvents {
				msg := fmt.Sprintf("%d more lines of %s were refused, not stored, as not this run's records (the first %d are logged one by one)",
					len(recs.refused)-i, RecordLogFile, maxRefusalEvents)
				m.opts.Logf("run %d: %s", r.ID, msg)
				refusals = append(refusals, &store.Event{ExperimentID: r.ExperimentID, RunID: r.ID, Kind: store.EventLog, Level: "warn", Msg: msg})
				break
			}
			msg := refusalMsg(fmt.Sprintf("%s line %d", RecordLogFile, l.n), l.err, l.text)
			m.opts.Logf("run %d: %s", r.ID, msg)
			refusals = append(refusals, &store.Event{ExperimentID: r.ExperimentID, RunID: r.ID, Kind: store.EventLog, Level: "warn", Msg: msg})
		}
	}
	if len(missing) == 0 && len(recs.samples) == 0 && recs.deviations == nil && len(refusals) == 0 {
		return nil
	}
	return m.update(ctx, func(tx *store.Tx) error {
		for _, ev := range refusals {
			if err := tx.AppendEvent(ev); err != nil {
				return err
			}
		}
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
