package experiments

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"

	"outcore/engine/metrics"
	"outcore/experiments/grid"
	"outcore/internal/units"
	"outcore/store"
)

// A run's records are checked line by line before anything of them is
// stored (docs/ARCHITECTURE.md "Records"): a line that is not a record of
// this run is refused, and each refusal is logged with where the line was
// and why (ingester.refuse, ingestRecordLog), never stored and never
// dropped without a word. The record log keeps every line as the child
// wrote it.

// errNotRecord marks a line that is no record at all: stray output that
// does not start as a JSON object (a library printing on stdout).
var errNotRecord = errors.New("not a record: it does not start with {")

// record is one parsed record line; the field of its type is set.
type record struct {
	Type     string
	Start    *metrics.StartRecord
	Epoch    *metrics.EpochRecord
	Sample   *metrics.SampleRecord
	Progress *metrics.ProgressRecord
	Log      *metrics.LogRecord
	Summary  *metrics.SummaryRecord
	// RunID is the line's "run_id" when it has one (outcore train writes
	// none; a line naming a run must name this one).
	RunID *int64
}

// requiredFields are the fields each record type must have (not null),
// as engine/metrics writes them.
var requiredFields = map[string][]string{
	metrics.TypeStart:    {"system", "dataset"},
	metrics.TypeEpoch:    {"epoch", "epoch_s"},
	metrics.TypeSample:   {"t"},
	metrics.TypeProgress: {"epoch", "batch", "batches"},
	metrics.TypeLog:      {"level", "msg"},
	metrics.TypeSummary:  {"outcome", "epochs"},
}

// parseRecord reads one line as a record of engine/metrics, checking its
// schema: a JSON object with a known "type", the type's required fields,
// and every field of the right JSON type. Fields it does not know are
// allowed (a newer child), but "run_id" must be an integer. It does not
// know the run: recordCheck.accept checks the values against it.
func parseRecord(line []byte) (record, error) {
	var rec record
	line = bytes.TrimSpace(line)
	if len(line) == 0 || line[0] != '{' {
		return rec, errNotRecord
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(line, &fields); err != nil {
		return rec, fmt.Errorf("not valid JSON: %s", jsonError(err))
	}
	rawType, ok := fields["type"]
	if !ok || string(rawType) == "null" {
		return rec, errors.New(`required field "type" is missing`)
	}
	if err := json.Unmarshal(rawType, &rec.Type); err != nil {
		return rec, fmt.Errorf(`field "type" is %s, not a string`, jsonKind(rawType))
	}
	required, known := requiredFields[rec.Type]
	if !known {
		return rec, fmt.Errorf("unknown record type %q", units.Clip(rec.Type, 40))
	}
	for _, f := range required {
		if v, ok := fields[f]; !ok || string(v) == "null" {
			return rec, fmt.Errorf("required field %q is missing", f)
		}
	}
	if raw, ok := fields["run_id"]; ok {
		var id int64
		if err := json.Unmarshal(raw, &id); err != nil {
			return rec, fmt.Errorf(`field "run_id" is %s, not an integer`, jsonKind(raw))
		}
		rec.RunID = &id
	}
	var err error
	switch rec.Type {
	case metrics.TypeStart:
		rec.Start = new(metrics.StartRecord)
		err = json.Unmarshal(line, rec.Start)
	case metrics.TypeEpoch:
		rec.Epoch = new(metrics.EpochRecord)
		err = json.Unmarshal(line, rec.Epoch)
	case metrics.TypeSample:
		rec.Sample = new(metrics.SampleRecord)
		err = json.Unmarshal(line, rec.Sample)
	case metrics.TypeProgress:
		rec.Progress = new(metrics.ProgressRecord)
		err = json.Unmarshal(line, rec.Progress)
	case metrics.TypeLog:
		rec.Log = new(metrics.LogRecord)
		err = json.Unmarshal(line, rec.Log)
	case metrics.TypeSummary:
		rec.Summary = new(metrics.SummaryRecord)
		err = json.Unmarshal(line, rec.Summary)
	}
	if err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return rec, fmt.Errorf("field %q is %s, not %s", te.Field, describeJSONValue(te.Value), goKind(te.Type.Kind().String()))
		}
		return rec, fmt.Errorf("%s record: %s", rec.Type, jsonError(err))
	}
	return rec, nil
}

// jsonError is a decoding error in words, without Go's type names.
func jsonError(err error) string {
	return strings.TrimPrefix(err.Error(), "json: ")
}

// jsonKind names the JSON type of a raw value.
func jsonKind(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return "empty"
	}
	switch raw[0] {
	case '"':
		return "a string"
	case '{':
		return "an object"
	case '[':
		return "an array"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}

// describeJSONValue is UnmarshalTypeError.Value in words.
func describeJSONValue(v string) string {
	switch {
	case v == "string":
		return "a string"
	case v == "object", v == "array":
		return "an " + v
	case v == "bool":
		return "a boolean"
	case strings.HasPrefix(v, "number"):
		return v // "number 1.5": the number that does not fit
	}
	return v
}

// goKind is the JSON type a Go kind wants, in words.
func goKind(kind string) string {
	switch {
	case strings.HasPrefix(kind, "int"), strings.HasPrefix(kind, "uint"):
		return "an integer"
	case strings.HasPrefix(kind, "float"):
		return "a number"
	case kind == "string":
		return "a string"
	case kind == "bool":
		return "a boolean"
	case kind == "map", kind == "struct":
		return "an object"
	case kind == "slice":
		return "an array"
	}
	return "a " + kind
}

// recordCheck checks a run's records against the run, in the order they
// come: the run id a line names, epochs within 0..epochs-1 of the run's
// configuration, epochs strictly increasing, samples' times strictly
// increasing, durations and counts not negative, the start record's
// system. Only accepted records move the order on.
type recordCheck struct {
	runID  int64
	system string
	epochs int // from the run's configuration; grid.MaxEpochs when unknown
	known  bool
	// lastEpoch and lastT are the last accepted epoch and sample time (-1:
	// none yet).
	lastEpoch int
	lastT     float64
}

// newRecordCheck is the check of run r's records, from its first record.
func newRecordCheck(r store.Run) *recordCheck {
	c := &recordCheck{runID: r.ID, system: r.System, epochs: grid.MaxEpochs, lastEpoch: -1, lastT: -1}
	// The run's system is its grid entry ("helios:cpu_cache=10%"); the
	// child's start record names the variant it runs ("helios").
	if e, err := grid.ParseSystemEntry(r.System); err == nil {
		c.system = e.Variant
	}
	var cfg struct {
		Epochs int `json:"epochs"`
	}
	// An external system's epochs are its own option's, not the
	// configuration's: only the grid's bound holds.
	if json.Unmarshal(r.Config, &cfg) == nil && cfg.Epochs > 0 && !grid.IsExternal(r.System) {
		c.epochs, c.known = cfg.Epochs, true
	}
	return c
}

// resume continues the check after what the store holds already: the
// last epoch and sample time stored (-1 for none), for a job's run read on
// from its committed offset.
func (c *recordCheck) resume(lastEpoch int, lastT float64) {
	c.lastEpoch, c.lastT = lastEpoch, lastT
}

// restart forgets the order: a new execution of a job (requeued)
// starts its epochs and samples again.
func (c *recordCheck) restart() { c.lastEpoch, c.lastT = -1, -1 }

// check parses a line and accepts it (errNotRecord for stray output).
func (c *recordCheck) check(line []byte) (record, error) {
	rec, err := parseRecord(line)
	if err != nil {
		return rec, err
	}
	return rec, c.accept(rec)
}

// accept checks a parsed record against the run and, when it is the
// run's, moves the order on.
func (c *recordCheck) accept(rec record) error {
	if rec.RunID != nil && *rec.RunID != c.runID {
		return fmt.Errorf("run_id %d is not this run's (run %d)", *rec.RunID, c.runID)
	}
	inRange := func(what string, epoch int) error {
		if epoch < 0 || epoch >= c.epochs {
			if c.known {
				return fmt.Errorf("%s %d is outside 0..%d (the run has %d epochs)", what, epoch, c.epochs-1, c.epochs)
			}
			return fmt.Errorf("%s %d is outside 0..%d", what, epoch, c.epochs-1)
		}
		return nil
	}
	switch rec.Type {
	case metrics.TypeStart:
		if c.system != "" && rec.Start.System != c.system {
			return fmt.Errorf("system %q is not this run's (%s)", units.Clip(rec.Start.System, 40), c.system)
		}
	case metrics.TypeEpoch:
		e := rec.Epoch
		if err := inRange("epoch", e.Epoch); err != nil {
			return err
		}
		if e.Epoch <= c.lastEpoch {
			return fmt.Errorf("epoch %d is out of order (after epoch %d: epochs come once each, in increasing order)", e.Epoch, c.lastEpoch)
		}
		if err := notNegative(field{"epoch_s", e.EpochS}, field{"wall_s", e.WallS}, field{"eval_s", e.EvalS},
			field{"batches", float64(e.Batches)}, field{"bytes_read", float64(e.BytesRead)}, field{"bytes_needed", float64(e.BytesNeeded)}); err != nil {
			return err
		}
		c.lastEpoch = e.Epoch
	case metrics.TypeSample:
		s := rec.Sample
		if err := notNegative(field{"t", s.T}, field{"rss_bytes", float64(s.RSSBytes)}, field{"cgroup_bytes", float64(s.CgroupBytes)}); err != nil {
			return err
		}
		if s.T <= c.lastT {
			return fmt.Errorf("sample at t=%v is out of order (after t=%v: samples come in increasing time)", s.T, c.lastT)
		}
		c.lastT = s.T
	case metrics.TypeProgress:
		p := rec.Progress
		if err := inRange("progress of epoch", p.Epoch); err != nil {
			return err
		}
		if err := notNegative(field{"batch", float64(p.Batch)}, field{"batches", float64(p.Batches)}); err != nil {
			return err
		}
	case metrics.TypeSummary:
		s := rec.Summary
		switch s.Outcome {
		case metrics.OutcomeDone, metrics.OutcomeFailed, metrics.OutcomeOOM, metrics.OutcomeCancelled, metrics.OutcomeInterrupted:
		default:
			return fmt.Errorf("summary outcome %q is not an outcome", units.Clip(s.Outcome, 40))
		}
		if s.Epochs < 0 || s.Epochs > c.epochs {
			return fmt.Errorf("summary of %d epochs is outside 0..%d", s.Epochs, c.epochs)
		}
	}
	return nil
}

// field is a named value of a record, for notNegative.
type field struct {
	name string
	v    float64
}

// notNegative says which of the values is negative (or NaN), if any.
func notNegative(fs ...field) error {
	for _, f := range fs {
		if f.v < 0 || math.IsNaN(f.v) {
			return fmt.Errorf("%s %v is negative", f.name, f.v)
		}
	}
	return nil
}

// refusalMsg is the event of a refused line: where it was, why, and the
// line itself, clipped and quoted.
func refusalMsg(where string, err error, line []byte) string {
	return fmt.Sprintf("%s refused, not stored: %v: %q", where, err, units.Clip(string(bytes.TrimSpace(line)), 200))
}

// maxRefusalEvents bounds the refusals an ingestion logs one by one; the
// rest are counted (a child that writes nothing but garbage must not
// flood the run's events).
const maxRefusalEvents = 100
