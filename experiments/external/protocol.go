package external

// The record protocol (docs/API.md, "External systems: the record
// protocol"): an external program writes one JSON object per line, and
// ParseLine turns each into outcore's own records (engine/metrics), so
// that the rest of the pipeline stores an external run's epochs like a
// built-in's.
//
// Checks here, one line at a time: JSON syntax, the type, no unknown
// field, every number finite and in its range (no negative seconds or
// bytes, ratios within [0, 1], hits within lookups), names of stages,
// tiers, counters and extra values well formed, the line's length.
// Checks that need more than one line are the ingester's: epochs strictly
// increasing and not beyond the run's epochs, one summary, its epoch count
// agreeing with the epochs stored, and wall_s and the log's t, which
// outcore's clock sets.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"regexp"
	"strings"
	"sync"

	"outcore/engine/metrics"
)

// MaxLineBytes bounds one protocol line; a longer one is refused.
const MaxLineBytes = 64 << 10

// Protocol record types.
const (
	LineEpoch   = metrics.TypeEpoch   // "epoch"
	LineLog     = metrics.TypeLog     // "log"
	LineSummary = metrics.TypeSummary // "summary"
)

// maxMapEntries bounds the stages, tiers, counters and extra of one line.
const maxMapEntries = 64

var keyRe = regexp.MustCompile(`^[a-z][a-z0-9_]{0,63}$`)

// LineError is a refused line: Field names the JSON field at fault ("" for
// the line as a whole).
type LineError struct {
	Field string
	Msg   string
}

func (e *LineError) Error() string {
	if e.Field == "" {
		return "record protocol: " + e.Msg
	}
	return fmt.Sprintf("record protocol: field %q: %s", e.Field, e.Msg)
}

func lineErr(field, format string, a ...any) error {
	return &LineError{Field: field, Msg: fmt.Sprintf(format, a...)}
}

// Record is one parsed line: exactly one of Epoch, Log and Summary is set,
// as Type says.
type Record struct {
	Type    string
	Epoch   *metrics.EpochRecord
	Log     *metrics.LogRecord
	Summary *metrics.SummaryRecord
}

// Tier is a tier's lookups and hits in an epoch line.
type Tier struct {
	Lookups *int64 `json:"lookups"`
	Hits    *int64 `json:"hits"`
}

// Wall is an epoch's wall-clock stage split (DESIGN §5, "Stage
// vocabulary"): seconds the trainer computed or waited on a load, a
// sampling, or neither.
type Wall struct {
	Sample *float64 `json:"sample"`
	Load   *float64 `json:"load"`
	Train  *float64 `json:"train"`
	Stall  *float64 `json:"stall"`
}

// Line is the JSON of one protocol line: every field a program may write.
type Line struct {
	Type string `json:"type"`

	// epoch
	Epoch          *int               `json:"epoch"`
	Warmup         *bool              `json:"warmup"`
	EpochS         *float64           `json:"epoch_s"`
	Stages         map[string]float64 `json:"stages"`
	Wall           *Wall              `json:"wall"`
	Batches        *int               `json:"batches"`
	BytesRead      *int64             `json:"bytes_read"`
	BytesNeeded    *int64             `json:"bytes_needed"`
	RowsFromDevice *int64             `json:"rows_from_device"`
	Tiers          map[string]Tier    `json:"tiers"`
	TrainLoss      *float64           `json:"train_loss"`
	TrainAcc       *float64           `json:"train_acc"`
	ValAcc         *float64           `json:"val_acc"`
	TestAcc        *float64           `json:"test_acc"`
	EvalS          *float64           `json:"eval_s"`
	Counters       map[string]int64   `json:"counters"`
	Extra          map[string]float64 `json:"extra"`

	// log
	Level *string `json:"level"`
	Msg   *string `json:"msg"`

	// summary
	Epochs        *int               `json:"epochs"`
	BestEpoch     *int               `json:"best_epoch"`
	BestValAcc    *float64           `json:"best_val_acc"`
	MeanEpochS    *float64           `json:"mean_epoch_s"`
	TotalS        *float64           `json:"total_s"`
	PrepareS      *float64           `json:"prepare_s"`
	PrepareStages map[string]float64 `json:"prepare_stages"`
	Deviations    []string           `json:"deviations"`
	Error         *string            `json:"error"`
}

// fieldsOf lists, for each line type, the fields it may carry ("type"
// aside).
var fieldsOf = map[string][]string{
	LineEpoch: {"epoch", "warmup", "epoch_s", "stages", "wall", "batches", "bytes_read", "bytes_needed",
		"rows_from_device", "tiers", "train_loss", "train_acc", "val_acc", "test_acc", "eval_s", "counters", "extra"},
	LineLog:     {"level", "msg"},
	LineSummary: {"epochs", "best_epoch", "best_val_acc", "test_acc", "mean_epoch_s", "total_s", "prepare_s", "prepare_stages", "deviations", "error"},
}

// builtinStage maps the stage names with their own EpochRecord field.
var builtinStage = map[string]bool{"sample": true, "extract": true, "train": true, "stall": true}

// epochKeys are the JSON keys EpochRecord declares: an extra value may not
// take one.
var epochKeys = sync.OnceValue(func() map[string]bool {
	keys := map[string]bool{}
	t := reflect.TypeFor[metrics.EpochRecord]()
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		if name != "" && name != "-" {
			keys[name] = true
		}
	}
	return keys
})

var nonNumber = regexp.MustCompile(`"([^"\\]{1,64})"\s*:\s*(-?Infinity|NaN)`)

// ParseLine parses one protocol line (without its newline) into outcore's
// records. A refusal is a *LineError naming the field.
func ParseLine(line []byte) (Record, error) {
	line = bytes.TrimSpace(line)
	if len(line) > MaxLineBytes {
		return Record{}, lineErr("", "line of %d bytes, longer than %d", len(line), MaxLineBytes)
	}
	if len(line) == 0 {
		return Record{}, lineErr("", "empty line")
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(line, &raw); err != nil {
		if m := nonNumber.FindSubmatch(line); m != nil {
			return Record{}, lineErr(string(m[1]), "%s is not a JSON number (Python: json.dumps(..., allow_nan=False) and a finite value)", m[2])
		}
		return Record{}, lineErr("", "not a JSON object: %v", err)
	}
	var typ string
	if t, ok := raw["type"]; !ok {
		return Record{}, lineErr("type", "missing (want epoch, log or summary)")
	} else if err := json.Unmarshal(t, &typ); err != nil {
		return Record{}, lineErr("type", "not a string")
	}
	allowed, ok := fieldsOf[typ]
	if !ok {
		return Record{}, lineErr("type", "%q is not a record type (want epoch, log or summary)", typ)
	}
	for k := range raw {
		if k != "type" && !contains(allowed, k) {
			return Record{}, lineErr(k, "unknown field for a %s line (it has: %s)", typ, strings.Join(allowed, ", "))
		}
	}
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	var l Line
	if err := dec.Decode(&l); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return Record{}, lineErr(te.Field, "a JSON %s where a %v belongs", te.Value, te.Type)
		}
		return Record{}, lineErr("", "%v", err)
	}
	switch typ {
	case LineEpoch:
		e, err := l.epoch()
		return Record{Type: typ, Epoch: e}, err
	case LineLog:
		g, err := l.log()
		return Record{Type: typ, Log: g}, err
	default:
		s, err := l.summary()
		return Record{Type: typ, Summary: s}, err
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// seconds checks a duration: finite and not negative.
func seconds(field string, v float64) error {
	if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
		return lineErr(field, "%v seconds: want a finite, non-negative number", v)
	}
	return nil
}

// ratio checks an accuracy: within [0, 1].
func ratio(field string, v *float64) (float64, error) {
	if v == nil {
		return 0, nil
	}
	if !(*v >= 0 && *v <= 1) {
		return 0, lineErr(field, "%v: want a ratio in [0, 1] (accuracy as a fraction, not a percentage)", *v)
	}
	return *v, nil
}

func count(field string, v *int64) (int64, error) {
	if v == nil {
		return 0, nil
	}
	if *v < 0 {
		return 0, lineErr(field, "%d: want a count ≥ 0", *v)
	}
	return *v, nil
}

func checkKeys[V any](field string, m map[string]V) error {
	if len(m) > maxMapEntries {
		return lineErr(field, "%d entries, more than %d", len(m), maxMapEntries)
	}
	for k := range m {
		if !keyRe.MatchString(k) {
			return lineErr(field+"."+k, "not a name (want a lower-case letter, then up to 63 of a-z, 0-9 and _)")
		}
	}
	return nil
}

// epoch checks an epoch line and makes its EpochRecord.
func (l *Line) epoch() (*metrics.EpochRecord, error) {
	if l.Epoch == nil {
		return nil, lineErr("epoch", "missing (the epoch's number, from 0)")
	}
	if *l.Epoch < 0 || *l.Epoch > 1<<20 {
		return nil, lineErr("epoch", "%d: want 0 to %d", *l.Epoch, 1<<20)
	}
	if l.EpochS == nil {
		return nil, lineErr("epoch_s", "missing (the epoch's seconds, evaluation excluded)")
	}
	if err := seconds("epoch_s", *l.EpochS); err != nil {
		return nil, err
	}
	e := &metrics.EpochRecord{Type: metrics.TypeEpoch, Epoch: *l.Epoch, EpochS: *l.EpochS}
	if l.Warmup != nil {
		e.Warmup = *l.Warmup
	}
	if err := checkKeys("stages", l.Stages); err != nil {
		return nil, err
	}
	for name, v := range l.Stages {
		name = strings.TrimSuffix(name, "_s")
		if err := seconds("stages."+name, v); err != nil {
			return nil, err
		}
		switch name {
		case "sample":
			e.SampleS = v
		case "extract":
			e.ExtractS = v
		case "train":
			e.TrainS = v
		case "stall":
			e.StallS = v
		default:
			if e.Stages == nil {
				e.Stages = map[string]float64{}
			}
			e.Stages[name+"_s"] = v
		}
	}
	if w := l.Wall; w != nil {
		sum := 0.0
		for _, p := range []struct {
			name string
			v    *float64
			dst  *float64
		}{{"sample", w.Sample, &e.WallSampleS}, {"load", w.Load, &e.WallLoadS}, {"train", w.Train, &e.WallTrainS}, {"stall", w.Stall, &e.WallStallS}} {
			if p.v == nil {
				continue
			}
			if err := seconds("wall."+p.name, *p.v); err != nil {
				return nil, err
			}
			*p.dst = *p.v
			sum += *p.v
		}
		if sum > e.EpochS*1.01+0.01 {
			return nil, lineErr("wall", "its parts add up to %.3f s, more than epoch_s %.3f s (they split the epoch's wall time)", sum, e.EpochS)
		}
	}
	if l.Batches != nil {
		if *l.Batches < 0 {
			return nil, lineErr("batches", "%d: want a count ≥ 0", *l.Batches)
		}
		e.Batches = *l.Batches
	}
	var err error
	if e.BytesRead, err = count("bytes_read", l.BytesRead); err != nil {
		return nil, err
	}
	if e.BytesNeeded, err = count("bytes_needed", l.BytesNeeded); err != nil {
		return nil, err
	}
	if e.RowsFromDevice, err = count("rows_from_device", l.RowsFromDevice); err != nil {
		return nil, err
	}
	if err := checkKeys("tiers", l.Tiers); err != nil {
		return nil, err
	}
	for name, t := range l.Tiers {
		if t.Lookups == nil || t.Hits == nil {
			return nil, lineErr("tiers."+name, "want {\"lookups\": N, \"hits\": M}")
		}
		if *t.Lookups < 0 || *t.Hits < 0 || *t.Hits > *t.Lookups {
			return nil, lineErr("tiers."+name, "hits %d of lookups %d: want 0 ≤ hits ≤ lookups", *t.Hits, *t.Lookups)
		}
		if e.Tiers == nil {
			e.Tiers = map[string]metrics.TierCount{}
		}
		e.Tiers[name] = metrics.TierCount{Lookups: *t.Lookups, Hits: *t.Hits}
	}
	if l.TrainLoss != nil {
		if math.IsNaN(*l.TrainLoss) || math.IsInf(*l.TrainLoss, 0) || *l.TrainLoss < 0 {
			return nil, lineErr("train_loss", "%v: want a finite loss ≥ 0", *l.TrainLoss)
		}
		e.TrainLoss = *l.TrainLoss
	}
	if e.TrainAcc, err = ratio("train_acc", l.TrainAcc); err != nil {
		return nil, err
	}
	if e.ValAcc, err = ratio("val_acc", l.ValAcc); err != nil {
		return nil, err
	}
	if e.TestAcc, err = ratio("test_acc", l.TestAcc); err != nil {
		return nil, err
	}
	e.Evaluated = l.ValAcc != nil
	if l.TestAcc != nil && l.ValAcc == nil {
		return nil, lineErr("test_acc", "given without val_acc (an evaluated epoch has both)")
	}
	if l.EvalS != nil {
		if err := seconds("eval_s", *l.EvalS); err != nil {
			return nil, err
		}
		e.EvalS = *l.EvalS
	}
	if err := checkKeys("counters", l.Counters); err != nil {
		return nil, err
	}
	for name, v := range l.Counters {
		if v < 0 {
			return nil, lineErr("counters."+name, "%d: want a count ≥ 0", v)
		}
		if e.Counters == nil {
			e.Counters = map[string]int64{}
		}
		e.Counters[name] = v
	}
	if err := checkKeys("extra", l.Extra); err != nil {
		return nil, err
	}
	for name, v := range l.Extra {
		if epochKeys()[name] {
			return nil, lineErr("extra."+name, "is one of outcore's own epoch fields; give it its own field or another name")
		}
		b, err := json.Marshal(v)
		if err != nil {
			return nil, lineErr("extra."+name, "%v", err)
		}
		if e.Extra == nil {
			e.Extra = map[string]json.RawMessage{}
		}
		e.Extra[name] = b
	}
	return e, nil
}

// Log levels a log line may have.
var logLevels = []string{"info", "warn", "error"}

// maxMsgBytes bounds a log line's message.
const maxMsgBytes = 4096

func (l *Line) log() (*metrics.LogRecord, error) {
	if l.Msg == nil {
		return nil, lineErr("msg", "missing")
	}
	if *l.Msg == "" {
		return nil, lineErr("msg", "empty")
	}
	if len(*l.Msg) > maxMsgBytes {
		return nil, lineErr("msg", "%d bytes, more than %d", len(*l.Msg), maxMsgBytes)
	}
	level := "info"
	if l.Level != nil {
		level = *l.Level
	}
	if !contains(logLevels, level) {
		return nil, lineErr("level", "%q: want info, warn or error", level)
	}
	return &metrics.LogRecord{Type: metrics.TypeLog, Level: level, Msg: *l.Msg}, nil
}

// summary checks a summary line. The program says what it trained; the
// outcome, peaks and memory account are outcore's (the runner's own
// measurements), so a summary line cannot carry them.
func (l *Line) summary() (*metrics.SummaryRecord, error) {
	if l.Epochs == nil {
		return nil, lineErr("epochs", "missing (the number of epochs run)")
	}
	if *l.Epochs < 0 || *l.Epochs > 1<<20 {
		return nil, lineErr("epochs", "%d: want 0 to %d", *l.Epochs, 1<<20)
	}
	s := &metrics.SummaryRecord{Type: metrics.TypeSummary, Epochs: *l.Epochs, BestEpoch: -1}
	if l.BestEpoch != nil {
		if *l.BestEpoch < -1 || *l.BestEpoch >= max(*l.Epochs, 1) && *l.BestEpoch != -1 {
			return nil, lineErr("best_epoch", "%d: want -1 (none) or an epoch below epochs %d", *l.BestEpoch, *l.Epochs)
		}
		s.BestEpoch = *l.BestEpoch
	}
	var err error
	if s.BestValAcc, err = ratio("best_val_acc", l.BestValAcc); err != nil {
		return nil, err
	}
	if s.TestAcc, err = ratio("test_acc", l.TestAcc); err != nil {
		return nil, err
	}
	for _, p := range []struct {
		name string
		v    *float64
		dst  *float64
	}{{"mean_epoch_s", l.MeanEpochS, &s.MeanEpochS}, {"total_s", l.TotalS, &s.TotalS}, {"prepare_s", l.PrepareS, &s.PrepareS}} {
		if p.v == nil {
			continue
		}
		if err := seconds(p.name, *p.v); err != nil {
			return nil, err
		}
		*p.dst = *p.v
	}
	if err := checkKeys("prepare_stages", l.PrepareStages); err != nil {
		return nil, err
	}
	for name, v := range l.PrepareStages {
		if err := seconds("prepare_stages."+name, v); err != nil {
			return nil, err
		}
		if s.PrepareStages == nil {
			s.PrepareStages = map[string]float64{}
		}
		s.PrepareStages[strings.TrimSuffix(name, "_s")+"_s"] = v
	}
	if len(l.Deviations) > maxMapEntries {
		return nil, lineErr("deviations", "%d entries, more than %d", len(l.Deviations), maxMapEntries)
	}
	for i, d := range l.Deviations {
		if d == "" || len(d) > maxMsgBytes {
			return nil, lineErr(fmt.Sprintf("deviations[%d]", i), "want a sentence of 1 to %d bytes", maxMsgBytes)
		}
	}
	s.Deviations = l.Deviations
	if l.Error != nil {
		if len(*l.Error) > maxMsgBytes {
			return nil, lineErr("error", "%d bytes, more than %d", len(*l.Error), maxMsgBytes)
		}
		s.Error = *l.Error
	}
	return s, nil
}
