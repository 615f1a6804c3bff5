package executors

import (
	"encoding/json"
	"flag"
	"fmt"
	"sort"
	"sync"

	"outcore/experiments/grid"
)

// Local is the executor built into the queue: a child process of the
// queue process in its memory cgroup (package experiments). It needs no
// registration.
const Local = grid.ExecutorLocal

// Registration is how an executor makes itself known, once, from its
// package's init: the one place an executor is added
// (docs/ARCHITECTURE.md "Adding an executor").
type Registration struct {
	// Name is the executor's name: the value of a grid's "executor", of
	// `--executor` and of a run's executor column, and the grid key that
	// holds the executor's options block.
	Name string
	// CreateHelp and ServeHelp are paragraphs for the help of `outcore
	// exp create` and `outcore serve`, which take --executor.
	CreateHelp, ServeHelp string
	// CheckOptions checks a grid's options block without the queue: every
	// field at fault as a grid problem (grid.ProblemList) naming it as
	// "<name>.<field>".
	CheckOptions func(block json.RawMessage) error
	// Flags declares the executor's flags on fs and returns what reads
	// them, after parsing, into the executor's options (Config.Options);
	// its error is a usage error.
	Flags func(fs *flag.FlagSet) func() (any, error)
	// New returns the executor of a queue.
	New func(host Host, cfg Config) (Executor, error)
}

var (
	mu   sync.RWMutex
	regs = map[string]Registration{}
)

// Register adds an executor; a second one of a name, the name of the
// local executor or a registration missing a part is a programming error.
func Register(r Registration) {
	if r.Name == "" || r.Name == Local || r.CheckOptions == nil || r.Flags == nil || r.New == nil {
		panic(fmt.Sprintf("executors: incomplete registration %q", r.Name))
	}
	mu.Lock()
	defer mu.Unlock()
	if _, dup := regs[r.Name]; dup {
		panic(fmt.Sprintf("executors: %q registered twice", r.Name))
	}
	regs[r.Name] = r
	grid.RegisterExecutor(r.Name, r.CheckOptions)
}

// Lookup returns the registration of a name (none for the local executor).
func Lookup(name string) (Registration, bool) {
	mu.RLock()
	defer mu.RUnlock()
	r, ok := regs[name]
	return r, ok
}

// Registered lists the registrations, by name.
func Registered() []Registration {
	mu.RLock()
	defer mu.RUnlock()
	out := make([]Registration, 0, len(regs))
	for _, r := range regs {
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Names lists the executors a run may name: the local one first, then the
// registered ones by name (the grid language's list).
func Names() []string { return grid.ExecutorNames() }

// Valid checks an executor name.
func Valid(name string) error { return grid.ValidExecutor(name) }
