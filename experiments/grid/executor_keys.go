package grid

// The executor keys of a grid file (docs/ARCHITECTURE.md "Executors"):
// "executor" names the executor of the grid's runs, and a key named after
// a registered executor holds that executor's options block. The grid
// checks only that the executor is registered and hands the block, as
// given, to the executor's own check, which the executor registered here
// through experiments/executors.Register (the grid, a leaf, imports no
// executor); it stores the block opaque for the executor to read again.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"

	"outcore/engine/vocab"
)

// ExecutorLocal is the executor built into the queue (vocab's name, which
// the store keeps for runs without another).
const ExecutorLocal = vocab.ExecutorLocal

var (
	execMu     sync.RWMutex
	execChecks = map[string]func(json.RawMessage) error{}
)

// RegisterExecutor makes an executor's name and the check of its options
// block known to the grid language; experiments/executors.Register calls
// it, once per executor. A second registration of a name, the local
// executor's name or a missing check is a programming error.
func RegisterExecutor(name string, check func(block json.RawMessage) error) {
	if name == "" || name == ExecutorLocal || name == "executor" || check == nil {
		panic(fmt.Sprintf("grid: bad executor registration %q", name))
	}
	execMu.Lock()
	defer execMu.Unlock()
	if _, dup := execChecks[name]; dup {
		panic(fmt.Sprintf("grid: executor %q registered twice", name))
	}
	execChecks[name] = check
}

// ExecutorNames lists the executors a run may name: the local one first,
// then the registered ones by name.
func ExecutorNames() []string {
	execMu.RLock()
	defer execMu.RUnlock()
	names := make([]string, 0, len(execChecks))
	for n := range execChecks {
		names = append(names, n)
	}
	sort.Strings(names)
	return append([]string{ExecutorLocal}, names...)
}

// executorCheck is the options check of a registered executor.
func executorCheck(name string) (func(json.RawMessage) error, bool) {
	execMu.RLock()
	defer execMu.RUnlock()
	c, ok := execChecks[name]
	return c, ok
}

// ValidExecutor checks an executor name.
func ValidExecutor(name string) error {
	names := ExecutorNames()
	for _, e := range names {
		if name == e {
			return nil
		}
	}
	return fmt.Errorf("unknown executor %q (executors: %s)", name, strings.Join(names, ", "))
}

// isExecutorKey reports whether a grid's top-level key is "executor" or
// a registered executor's options block.
func isExecutorKey(key string) bool {
	if key == "executor" {
		return true
	}
	_, ok := executorCheck(key)
	return ok
}

// parseExecutorKey parses a grid's "executor" or an executor's options
// block.
func parseExecutorKey(g *Grid, key string, v json.RawMessage) error {
	if key == "executor" {
		if err := json.Unmarshal(v, &g.Executor); err != nil {
			return invalid("executor", "want %s", quotedNames())
		}
		if err := ValidExecutor(g.Executor); err != nil {
			return invalid("executor", "%v", err)
		}
		return nil
	}
	check, _ := executorCheck(key)
	if err := check(v); err != nil {
		if ps := ProblemsOf(err); len(ps) > 0 {
			return err
		}
		return invalid(key, "%v", err)
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, v); err != nil {
		return invalid(key, "%v", err)
	}
	if g.ExecutorOptions == nil {
		g.ExecutorOptions = map[string]json.RawMessage{}
	}
	g.ExecutorOptions[key] = compact.Bytes()
	return nil
}

// quotedNames lists the executor names for a message: "local" or "x".
func quotedNames() string {
	names := ExecutorNames()
	for i, n := range names {
		names[i] = `"` + n + `"`
	}
	return strings.Join(names, " or ")
}
