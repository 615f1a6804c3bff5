// Package record writes the record protocol of external systems
// (docs/API.md, "External systems: the record protocol") from a Go
// program: one JSON object per line, each written whole in one write, so
// that a program killed mid-run loses none of the lines it finished. It
// imports only the standard library, for programs outside this module to
// copy or import; scripts/outcore_record.py is the same for Python.
package record

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
)

// EnvRecords is the environment variable outcore sets to the records path
// ("/dev/fd/N" for a descriptor); the program also gets it as
// --outcore-records=PATH.
const EnvRecords = "OUTCORE_RECORDS"

// Writer writes protocol lines; safe for concurrent use.
type Writer struct {
	mu     sync.Mutex
	w      io.Writer
	closer io.Closer
}

// NewWriter writes lines to w.
func NewWriter(w io.Writer) *Writer { return &Writer{w: w} }

// Open appends lines to the file at path ("/dev/fd/3" works for a
// descriptor outcore opened).
func Open(path string) (*Writer, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("record: %w", err)
	}
	return &Writer{w: f, closer: f}, nil
}

// OpenFD writes lines to the open descriptor fd.
func OpenFD(fd uintptr) *Writer {
	f := os.NewFile(fd, fmt.Sprintf("fd %d", fd))
	return &Writer{w: f, closer: f}
}

// FromEnv opens the path in $OUTCORE_RECORDS.
func FromEnv() (*Writer, error) {
	p := os.Getenv(EnvRecords)
	if p == "" {
		return nil, errors.New("record: $" + EnvRecords + " is not set (is the program run by outcore?)")
	}
	return Open(p)
}

// Tier is a cache tier's lookups and hits in an epoch.
type Tier struct {
	Lookups int64 `json:"lookups"`
	Hits    int64 `json:"hits"`
}

// Wall splits an epoch's wall time: computing (Train), waiting while a
// load or else a sampling was in progress, or waiting on neither (Stall).
type Wall struct {
	Sample float64 `json:"sample"`
	Load   float64 `json:"load"`
	Train  float64 `json:"train"`
	Stall  float64 `json:"stall"`
}

// Epoch is one finished epoch. Epoch counts from 0. Optional fields are
// left out when zero, pointers when nil; ValAcc set marks the epoch as
// evaluated.
type Epoch struct {
	Epoch          int                `json:"epoch"`
	EpochS         float64            `json:"epoch_s"`
	Warmup         bool               `json:"warmup,omitempty"`
	Stages         map[string]float64 `json:"stages,omitempty"`
	Wall           *Wall              `json:"wall,omitempty"`
	Batches        int                `json:"batches,omitempty"`
	BytesRead      int64              `json:"bytes_read,omitempty"`
	BytesNeeded    int64              `json:"bytes_needed,omitempty"`
	RowsFromDevice int64              `json:"rows_from_device,omitempty"`
	Tiers          map[string]Tier    `json:"tiers,omitempty"`
	TrainLoss      *float64           `json:"train_loss,omitempty"`
	TrainAcc       *float64           `json:"train_acc,omitempty"`
	ValAcc         *float64           `json:"val_acc,omitempty"`
	TestAcc        *float64           `json:"test_acc,omitempty"`
	EvalS          float64            `json:"eval_s,omitempty"`
	Counters       map[string]int64   `json:"counters,omitempty"`
	Extra          map[string]float64 `json:"extra,omitempty"`
}

// Summary closes a run the program finished.
type Summary struct {
	Epochs        int                `json:"epochs"`
	BestEpoch     int                `json:"best_epoch"` // -1: none
	BestValAcc    float64            `json:"best_val_acc,omitempty"`
	TestAcc       float64            `json:"test_acc,omitempty"`
	MeanEpochS    float64            `json:"mean_epoch_s,omitempty"`
	TotalS        float64            `json:"total_s,omitempty"`
	PrepareS      float64            `json:"prepare_s,omitempty"`
	PrepareStages map[string]float64 `json:"prepare_stages,omitempty"`
	Deviations    []string           `json:"deviations,omitempty"`
	Error         string             `json:"error,omitempty"`
}

// F is a helper for the optional numbers: record.F(0.93).
func F(v float64) *float64 { return &v }

// Epoch writes an epoch line.
func (w *Writer) Epoch(e Epoch) error {
	return w.line(struct {
		Type string `json:"type"`
		Epoch
	}{"epoch", e})
}

// Summary writes the summary line.
func (w *Writer) Summary(s Summary) error {
	return w.line(struct {
		Type string `json:"type"`
		Summary
	}{"summary", s})
}

// Log writes a log line; level is "info", "warn" or "error".
func (w *Writer) Log(level, msg string) error {
	return w.line(map[string]string{"type": "log", "level": level, "msg": msg})
}

func (w *Writer) line(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		// NaN and ±Inf: encoding/json refuses them, as outcore would.
		var ue *json.UnsupportedValueError
		if errors.As(err, &ue) {
			return fmt.Errorf("record: a value is not a finite number: %w", err)
		}
		return fmt.Errorf("record: %w", err)
	}
	b = append(b, '\n')
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.w == nil {
		return errors.New("record: writer is closed")
	}
	_, err = w.w.Write(b)
	return err
}

// Close closes the file or descriptor Open, OpenFD or FromEnv opened.
func (w *Writer) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	c := w.closer
	w.w, w.closer = nil, nil
	if c != nil {
		return c.Close()
	}
	return nil
}
