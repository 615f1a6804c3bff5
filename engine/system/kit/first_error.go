package kit

import (
	"context"
	"sync"
)

// FirstError keeps the first error of a pipeline's goroutines and cancels
// the pipeline when it arrives. The zero value keeps errors only.
type FirstError struct {
	// Cancel, when set, is called once with the first error's arrival.
	Cancel context.CancelFunc
	// OnFail, when set, is called once with the first error (before
	// Cancel), e.g. to wake goroutines blocked in a shared buffer.
	OnFail func(error)

	mu  sync.Mutex
	err error
}

// Set records err if it is the first and cancels the pipeline; nil is
// ignored.
func (f *FirstError) Set(err error) {
	if err == nil {
		return
	}
	f.mu.Lock()
	first := f.err == nil
	if first {
		f.err = err
	}
	f.mu.Unlock()
	if first {
		if f.OnFail != nil {
			f.OnFail(err)
		}
		if f.Cancel != nil {
			f.Cancel()
		}
	}
}

// Err returns the first error, or nil.
func (f *FirstError) Err() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.err
}
