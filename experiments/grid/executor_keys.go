package grid

// The executor keys of a grid file (docs/ARCHITECTURE.md "Executors"):
// "executor" names the executor of the grid's runs, and a key named after
// a registered executor holds that executor's options block. The grid
// checks only that the executor is registered and hands the block, as
// given, to the executor's own CheckOptions (experiments/executors); it
// stores the block opaque for the executor to read again.

import (
	"bytes"
	"encoding/json"
	"strings"

	"outcore/experiments/executors"
)

// ValidExecutor checks an executor name.
func ValidExecutor(name string) error { return executors.Valid(name) }

// isExecutorKey reports whether a grid's top-level key is "executor" or
// a registered executor's options block.
func isExecutorKey(key string) bool {
	if key == "executor" {
		return true
	}
	_, ok := executors.Lookup(key)
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
	reg, _ := executors.Lookup(key)
	if err := reg.CheckOptions(v); err != nil {
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
	names := executors.Names()
	for i, n := range names {
		names[i] = `"` + n + `"`
	}
	return strings.Join(names, " or ")
}
