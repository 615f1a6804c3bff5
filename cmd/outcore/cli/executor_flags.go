package cli

import (
	"flag"
	"slices"
	"strings"

	"outcore/experiments/executors"
)

// executorFlags are the executor flags of `outcore serve` and `outcore
// exp create` (docs/ARCHITECTURE.md "Executors"): --executor, and the
// flags each registered executor declares itself (executors.Registration's
// Flags).
type executorFlags struct {
	executor string
	read     map[string]func() (any, error) // by executor name
}

func addExecutorFlags(fs *flag.FlagSet, executorDoc string) *executorFlags {
	f := &executorFlags{read: map[string]func() (any, error){}}
	fs.StringVar(&f.executor, "executor", "", executorDoc)
	for _, reg := range executors.Registered() {
		f.read[reg.Name] = reg.Flags(fs)
	}
	return f
}

// executorNames is the executors for flag help: "local or x".
func executorNames(sep string) string { return strings.Join(executors.Names(), sep) }

// executorHelp joins the registered executors' paragraphs of one help.
func executorHelp(pick func(executors.Registration) string) string {
	var ps []string
	for _, reg := range executors.Registered() {
		if p := pick(reg); p != "" {
			ps = append(ps, p)
		}
	}
	return strings.Join(ps, "\n\n")
}

// executors returns the default executor and the executors the queue
// offers: --executor names one or several, the first the default
// ("local,NAME"); default local. A grid may name only these.
func (f *executorFlags) executors() (string, []string, error) {
	if f.executor == "" {
		return "", nil, nil
	}
	var list []string
	for _, e := range strings.Split(f.executor, ",") {
		e = strings.TrimSpace(e)
		if executors.Valid(e) != nil {
			names := executors.Names()
			return "", nil, usagef("--executor %q: want %s, or several (%s: the first is the default)", f.executor,
				strings.Join(names, " or "), strings.Join(names, ","))
		}
		if !slices.Contains(list, e) {
			list = append(list, e)
		}
	}
	return list[0], list, nil
}

// options returns the default executor and each registered executor's
// options as its flags give them.
func (f *executorFlags) options() (string, map[string]any, error) {
	opts := map[string]any{}
	for _, reg := range executors.Registered() {
		o, err := f.read[reg.Name]()
		if err != nil {
			return "", nil, usagef("%v", err)
		}
		opts[reg.Name] = o
	}
	executor, _, err := f.executors()
	return executor, opts, err
}
