package store

import (
	"fmt"

	"outcore/engine/vocab"
)

// ExecutorLocal is the executor of a run started as a child process of
// the queue process, and of an old run without one; every other executor
// is registered by its own package (experiments/executors), its name and
// its job's facts stored as opaque text (docs/ARCHITECTURE.md
// "Executors").
const ExecutorLocal = vocab.ExecutorLocal

// SetJob records a running run's job: its id, the node(s) it runs on
// (empty while pending) and the state its executor last reported, as
// opaque text.
func (t *Tx) SetJob(id int64, jobID, node, state string) error {
	if _, err := t.tx.ExecContext(t.ctx, `UPDATE runs SET job_id = ?, node = ?, job_state = ? WHERE id = ?`,
		jobID, node, state, id); err != nil {
		return fmt.Errorf("run %d job: %w", id, err)
	}
	return nil
}

// SetRecordsPos records how much of a run's records file is committed:
// call it in the transaction that commits what was read up to offset.
func (t *Tx) SetRecordsPos(id int64, file string, offset int64) error {
	if _, err := t.tx.ExecContext(t.ctx, `UPDATE runs SET records_file = ?, records_offset = ? WHERE id = ?`,
		file, offset, id); err != nil {
		return fmt.Errorf("run %d records position: %w", id, err)
	}
	return nil
}

// ResetExecution deletes a run's epochs and samples and clears its
// progress: a requeued job trains again from the start, and its
// epochs replace those of the execution that did not finish.
func (t *Tx) ResetExecution(id int64) error {
	for _, q := range []string{
		`DELETE FROM epochs WHERE run_id = ?`,
		`DELETE FROM samples WHERE run_id = ?`,
		`UPDATE runs SET epochs_done = 0, progress_json = NULL WHERE id = ?`,
	} {
		if _, err := t.tx.ExecContext(t.ctx, q, id); err != nil {
			return fmt.Errorf("reset run %d: %w", id, err)
		}
	}
	return nil
}

// SetLimit records whether a run's memory limit is enforced and how (a
// job's run learns it from the node, when the job starts).
func (t *Tx) SetLimit(id int64, enforced bool, note string) error {
	if _, err := t.tx.ExecContext(t.ctx, `UPDATE runs SET limit_enforced = ?, limit_note = ? WHERE id = ?`,
		b2i(enforced), note, id); err != nil {
		return fmt.Errorf("run %d limit: %w", id, err)
	}
	return nil
}
