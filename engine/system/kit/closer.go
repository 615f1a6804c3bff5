package kit

import (
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
)

// Closer gathers the errors of a System's Close: what it holds is closed
// in the order given, every error is kept, and Err joins them under the
// variant's name.
type Closer struct{ errs []error }

// Close closes each of cs that is not nil (a nil interface, pointer or
// func is skipped: a resource Prepare never opened).
func (c *Closer) Close(cs ...io.Closer) {
	for _, x := range cs {
		if x == nil {
			continue
		}
		if v := reflect.ValueOf(x); (v.Kind() == reflect.Pointer || v.Kind() == reflect.Func) && v.IsNil() {
			continue
		}
		c.errs = append(c.errs, x.Close())
	}
}

// Func closes with f unless it is nil (a Topology's close function).
func (c *Closer) Func(f func() error) {
	if f != nil {
		c.errs = append(c.errs, f())
	}
}

// Add keeps the errors of steps taken by the caller (memory freed).
func (c *Closer) Add(errs ...error) { c.errs = append(c.errs, errs...) }

// Remove removes the directory dir and all below it, unless dir is "" or
// keep (an option that keeps a run's files).
func (c *Closer) Remove(dir string, keep bool) {
	if dir != "" && !keep {
		c.errs = append(c.errs, os.RemoveAll(dir))
	}
}

// Err is nil when every step succeeded, else "close <name>: " and the
// errors joined.
func (c *Closer) Err(name string) error {
	if err := errors.Join(c.errs...); err != nil {
		return fmt.Errorf("close %s: %w", name, err)
	}
	return nil
}
