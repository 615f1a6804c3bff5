package external

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
)

// RunFiles are the paths outcore hands an external program for one run.
type RunFiles struct {
	// Dataset is the dataset's directory (its files: docs/API.md, "The
	// dataset directory's files"); the program only reads it.
	Dataset string
	// Records is where the program writes its records (the record
	// protocol, docs/API.md): a file path, or "/dev/fd/N" for a
	// descriptor the runner opened for it.
	Records string
	// Scratch is the run's own directory for anything the program writes
	// (removed with the run's scratch); also its HOME and TMPDIR.
	Scratch string
	// RunID identifies the run in outcore's store.
	RunID int64
}

// The arguments outcore appends after the declared options, in this
// order; a declared option can never take these names (they start with
// "outcore").
const (
	ArgDataset = "--outcore-dataset"
	ArgRecords = "--outcore-records"
	ArgScratch = "--outcore-scratch"
)

// The environment variables outcore sets for the program, besides those
// of EnvBase and the operator's Env of the system.
const (
	EnvDataset = "OUTCORE_DATASET"
	EnvRecords = "OUTCORE_RECORDS"
	EnvScratch = "OUTCORE_SCRATCH"
	EnvRunID   = "OUTCORE_RUN_ID"
)

// EnvBase is the fixed environment every external program starts from:
// nothing of the server's own environment is passed on.
var EnvBase = []string{
	"PATH=/usr/local/bin:/usr/bin:/bin",
	"LANG=C.UTF-8",
	"PYTHONUNBUFFERED=1",
	"PYTHONDONTWRITEBYTECODE=1",
}

func (f RunFiles) check() error {
	for _, p := range []struct{ name, v string }{{"dataset", f.Dataset}, {"records", f.Records}, {"scratch", f.Scratch}} {
		if p.v == "" {
			return fmt.Errorf("%w: the run's %s path is empty", ErrRegistry, p.name)
		}
		if strings.IndexByte(p.v, 0) >= 0 {
			return fmt.Errorf("%w: the run's %s path has a NUL byte", ErrRegistry, p.name)
		}
	}
	return nil
}

// Argv is the whole argument vector of a run of s, its program first: the
// declared command as the registry has it, then "--NAME=VALUE" for every
// declared option sorted by name (the request's value, else the
// default), then ArgDataset, ArgRecords and ArgScratch with the run's
// paths ("--outcore-dataset=DIR"). A request contributes nothing but
// option values Resolve accepted; it is run without a shell.
func Argv(s *System, options map[string]any, files RunFiles) ([]string, error) {
	if s == nil {
		return nil, errors.New("external: Argv of no system")
	}
	vals, err := s.Resolve(options)
	if err != nil {
		return nil, err
	}
	if err := files.check(); err != nil {
		return nil, err
	}
	argv := slices.Clone(s.Command)
	names := make([]string, 0, len(vals))
	for n := range vals {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		argv = append(argv, "--"+n+"="+vals[n])
	}
	argv = append(argv,
		ArgDataset+"="+files.Dataset,
		ArgRecords+"="+files.Records,
		ArgScratch+"="+files.Scratch)
	return argv, nil
}

// Env is the whole environment of a run of s: EnvBase, HOME and TMPDIR
// set to the scratch directory, the operator's Env of the system (sorted),
// then the OUTCORE_* variables with the run's paths, which nothing before
// them can override.
func Env(s *System, files RunFiles) ([]string, error) {
	if err := files.check(); err != nil {
		return nil, err
	}
	env := slices.Clone(EnvBase)
	env = append(env, "HOME="+files.Scratch, "TMPDIR="+files.Scratch)
	if s != nil {
		keys := make([]string, 0, len(s.Env))
		for k := range s.Env {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			env = setEnv(env, k, s.Env[k])
		}
	}
	env = append(env,
		EnvDataset+"="+files.Dataset,
		EnvRecords+"="+files.Records,
		EnvScratch+"="+files.Scratch,
		fmt.Sprintf("%s=%d", EnvRunID, files.RunID))
	return env, nil
}

// setEnv replaces k's entry in env or appends one.
func setEnv(env []string, k, v string) []string {
	for i, e := range env {
		if strings.HasPrefix(e, k+"=") {
			env[i] = k + "=" + v
			return env
		}
	}
	return append(env, k+"="+v)
}
