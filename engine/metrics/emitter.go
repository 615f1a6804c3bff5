package metrics

import (
	"encoding/json"
	"fmt"
	"io"
	"sync"
	"time"
)

// Emitter writes records as JSON lines, one record per line. It is safe for
// concurrent use: each record is marshalled first and written with a single
// Write under a mutex, so lines from different goroutines never interleave.
type Emitter struct {
	mu    sync.Mutex
	w     io.Writer
	start time.Time
	err   error // first write error; later emits return it
}

// NewEmitter returns an emitter writing to w whose clock (T) starts now.
func NewEmitter(w io.Writer) *Emitter {
	return &Emitter{w: w, start: time.Now()}
}

// Start is the instant the run's clock started.
func (e *Emitter) Start() time.Time { return e.start }

// T is the number of seconds since the emitter was created.
func (e *Emitter) T() float64 { return time.Since(e.start).Seconds() }

// Emit writes rec (one of the *Record types, or any JSON-marshallable value)
// as one line. After a write error every later call returns that error.
func (e *Emitter) Emit(rec any) error {
	b, err := json.Marshal(rec)
	if err != nil {
		return fmt.Errorf("marshal %T record: %w", rec, err)
	}
	b = append(b, '\n')
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.err != nil {
		return e.err
	}
	if _, err := e.w.Write(b); err != nil {
		e.err = fmt.Errorf("write %T record: %w", rec, err)
		return e.err
	}
	return nil
}

// Log emits a LogRecord with the given level ("info", "warn", "error").
func (e *Emitter) Log(level, format string, args ...any) error {
	return e.Emit(LogRecord{Type: TypeLog, Level: level, Msg: fmt.Sprintf(format, args...), T: e.T()})
}

// Infof emits an info-level LogRecord.
func (e *Emitter) Infof(format string, args ...any) error { return e.Log("info", format, args...) }

// Warnf emits a warn-level LogRecord.
func (e *Emitter) Warnf(format string, args ...any) error { return e.Log("warn", format, args...) }
