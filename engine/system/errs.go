package system

import (
	"context"
	"sync"
)

// firstError keeps the first error of a pipeline's goroutines and cancels
// the pipeline when it arrives.
type firstError struct {
	mu     sync.Mutex
	err    error
	cancel context.CancelFunc
	onFail func(error)
}

// set records err if it is the first and cancels the pipeline.
func (f *firstError) set(err error) {
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
		if f.onFail != nil {
			f.onFail(err)
		}
		if f.cancel != nil {
			f.cancel()
		}
	}
}

// get returns the first error, or nil.
func (f *firstError) get() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.err
}
