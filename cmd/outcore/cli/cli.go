// Package cli implements outcore's command line (DESIGN §8): one tree of
// commands (Root), one way to parse flags (newFlagSet, parseArgs), one way
// to ask for help and one way to fail. main.go only calls Main.
//
//   - `-h`, `--help`, `outcore help CMD [SUB]` and `outcore CMD help [SUB]`
//     print a command's help on stdout and exit 0.
//   - A mistake in how a command was called (unknown flag or subcommand,
//     wrong argument count, bad flag value) prints the error and the
//     command's help on stderr and exits 2; other failures print the error
//     and exit 1.
//   - Every command that reads or writes a data directory takes --data-dir,
//     declared once (newFlagSet).
//
// Each file here holds one command group: data, train, systems, bench, exp,
// serve, version.
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"

	// Every training-system variant registers itself with engine/train.
	_ "outcore/engine/system/all"
)

// ErrUsage marks an error caused by how a command was called; Main prints
// the command's help after it and exits with status 2.
var ErrUsage = errors.New("usage")

// Streams are where a command writes: Out its results, Err progress,
// warnings and errors.
type Streams struct {
	Out, Err io.Writer
}

// Command is one command of the tree: a group with Subcommands, or a leaf
// with Exec.
type Command struct {
	Name    string
	Aliases []string
	Args    string // the usage line after the command's path: "ID --figure NAME [flags]"
	Short   string // one line in the parent's list
	Long    string // paragraphs after the usage line in the help

	// Flags of a leaf (nil: none). parseArgs fills them; a leaf whose flags
	// must be read in two passes (train) sets Parse instead.
	Flags            *flag.FlagSet
	Parse            func(args []string) (positional []string, err error)
	MinArgs, MaxArgs int // positional arguments a leaf takes

	Subcommands []*Command
	Exec        func(ctx context.Context, s Streams, args []string) error

	path string // "outcore exp export", set as the tree is walked
}

// Root is outcore's command tree.
func Root() *Command {
	return &Command{
		Name: "outcore",
		Args: "<command> [flags]",
		Long: "outcore trains graph neural networks whose node features live on an SSD, with the\n" +
			"disk-based training systems of five papers as variants, and serves a dashboard to\n" +
			"run and compare them.",
		Subcommands: []*Command{dataCmd(), trainCmd(), systemsCmd(), benchCmd(), expCmd(), serveCmd(), versionCmd()},
	}
}

// Main runs the command line args (without the program name) and returns
// the process's exit status.
func Main(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	err := Run(ctx, Streams{Out: stdout, Err: stderr}, args)
	if err == nil {
		return 0
	}
	var ce *cmdError
	if !errors.As(err, &ce) {
		fmt.Fprintf(stderr, "outcore: %v\n", err)
		return 1
	}
	msg := ce.err.Error()
	if errors.Is(ce.err, ErrUsage) {
		msg = strings.TrimPrefix(msg, ErrUsage.Error()+": ")
	}
	fmt.Fprintf(stderr, "%s: %s\n", ce.cmd.path, msg)
	var ve *valueError
	if errors.As(ce.err, &ve) {
		// A value the command refused (a configuration that does not
		// validate, a limit below the floor): the message alone, the last
		// line a supervisor reads (the runner's ERROR column), not the
		// flag list after it.
		return 2
	}
	if errors.Is(ce.err, ErrUsage) {
		fmt.Fprintln(stderr)
		ce.cmd.help(stderr)
		return 2
	}
	return 1
}

// Run runs the command line args on the tree of Root. Its errors are
// *cmdError naming the command; errors.Is sees through them.
func Run(ctx context.Context, s Streams, args []string) error {
	root := Root()
	root.path = root.Name
	return root.run(ctx, s, args)
}

// cmdError is an error of one command.
type cmdError struct {
	cmd *Command
	err error
}

func (e *cmdError) Error() string { return e.cmd.path + ": " + e.err.Error() }
func (e *cmdError) Unwrap() error { return e.err }

// valueError is a usage error (ErrUsage: exit status 2) about a value
// the command was given, not about how it was called: Main prints its
// message without the command's help.
type valueError struct{ err error }

func (e *valueError) Error() string   { return e.err.Error() }
func (e *valueError) Unwrap() []error { return []error{ErrUsage, e.err} }

// badValue makes err a valueError.
func badValue(err error) error { return &valueError{err} }

// usagef makes a usage error.
func usagef(format string, a ...any) error {
	return fmt.Errorf("%w: %s", ErrUsage, fmt.Sprintf(format, a...))
}

func isHelp(arg string) bool {
	return arg == "help" || arg == "-h" || arg == "--help" || arg == "-help"
}

func (c *Command) run(ctx context.Context, s Streams, args []string) error {
	for _, sub := range c.Subcommands {
		sub.path = c.path + " " + sub.Name
	}
	if len(c.Subcommands) > 0 {
		if len(args) == 0 {
			return &cmdError{c, usagef("missing command")}
		}
		if isHelp(args[0]) {
			target, err := c.lookup(args[1:])
			if err != nil {
				return err
			}
			target.help(s.Out)
			return nil
		}
		sub := c.find(args[0])
		if sub == nil {
			return &cmdError{c, usagef("unknown command %q", args[0])}
		}
		return sub.run(ctx, s, args[1:])
	}
	parse := c.Parse
	if parse == nil {
		parse = func(args []string) ([]string, error) { return parseArgs(c.Flags, args) }
	}
	pos, err := parse(args)
	if errors.Is(err, flag.ErrHelp) {
		c.help(s.Out)
		return nil
	}
	if err != nil {
		if !errors.Is(err, ErrUsage) {
			err = fmt.Errorf("%w: %v", ErrUsage, err)
		}
		return &cmdError{c, err}
	}
	if len(pos) < c.MinArgs || len(pos) > c.MaxArgs {
		return &cmdError{c, usagef("%s", argCountError(c.MinArgs, c.MaxArgs, pos))}
	}
	if err := c.Exec(ctx, s, pos); err != nil {
		var ce *cmdError
		if errors.As(err, &ce) {
			return err
		}
		return &cmdError{c, err}
	}
	return nil
}

func argCountError(lo, hi int, pos []string) string {
	var want string
	switch {
	case lo == hi && lo == 0:
		want = "no arguments"
	case lo == hi && lo == 1:
		want = "1 argument"
	case lo == hi:
		want = fmt.Sprintf("%d arguments", lo)
	default:
		want = fmt.Sprintf("%d to %d arguments", lo, hi)
	}
	if len(pos) == 0 {
		return "takes " + want + ", got none"
	}
	return fmt.Sprintf("takes %s, got %d (%s)", want, len(pos), strings.Join(pos, " "))
}

// find returns the subcommand called name (or an alias of it).
func (c *Command) find(name string) *Command {
	for _, sub := range c.Subcommands {
		if sub.Name == name || slices.Contains(sub.Aliases, name) {
			return sub
		}
	}
	return nil
}

// lookup walks names down the tree from c ("help exp export").
func (c *Command) lookup(names []string) (*Command, error) {
	cur := c
	for _, n := range names {
		sub := cur.find(n)
		if sub == nil {
			return nil, &cmdError{cur, usagef("unknown command %q", n)}
		}
		for _, s := range sub.Subcommands {
			s.path = sub.path + " " + s.Name
		}
		cur = sub
	}
	return cur, nil
}

// help writes the command's help: usage line, description, subcommands, flags.
func (c *Command) help(w io.Writer) {
	fmt.Fprintf(w, "usage: %s %s\n", c.path, c.Args)
	if c.Long != "" {
		fmt.Fprintf(w, "\n%s\n", strings.TrimSpace(c.Long))
	} else if c.Short != "" {
		fmt.Fprintf(w, "\n%s.\n", strings.ToUpper(c.Short[:1])+c.Short[1:])
	}
	if len(c.Subcommands) > 0 {
		fmt.Fprintln(w, "\ncommands:")
		width := 0
		for _, sub := range c.Subcommands {
			width = max(width, len(sub.Name))
		}
		for _, sub := range c.Subcommands {
			fmt.Fprintf(w, "  %-*s  %s\n", width, sub.Name, sub.Short)
		}
		fmt.Fprintf(w, "\nRun '%s help <command>' (or '%s <command> -h') for a command's flags.\n", c.path, c.path)
	}
	if c.Flags != nil && hasFlags(c.Flags) {
		fmt.Fprintln(w, "\nflags:")
		c.Flags.SetOutput(w)
		c.Flags.PrintDefaults()
		c.Flags.SetOutput(io.Discard)
	}
}

func hasFlags(fs *flag.FlagSet) bool {
	n := 0
	fs.VisitAll(func(*flag.Flag) { n++ })
	return n > 0
}

// dataDirHelp is the one description of --data-dir.
const dataDirHelp = "data directory (default $OUTCORE_DATA, else $XDG_DATA_HOME/outcore, else ~/.local/share/outcore)"

// newFlagSet is the flag set of every command: parse errors come back to
// Main, which prints them with the help (the flag package prints nothing).
// With dataDir non-nil it has --data-dir, bound to *dataDir.
func newFlagSet(name string, dataDir *string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	if dataDir != nil {
		fs.StringVar(dataDir, "data-dir", *dataDir, dataDirHelp)
	}
	return fs
}

// parseOver parses args in two passes, for commands whose flags override a
// base value that a flag chooses (a preset, a config file). The first pass,
// over a scratch value, reads the flags that choose the base; base returns
// it; the second pass binds every flag onto the base (flags declare the
// target's current values as their defaults), so flags given override it
// and flags left out keep its values. flags makes a flag set bound to *v.
func parseOver[T any](args []string, flags func(v *T) *flag.FlagSet, base func() (T, error)) (T, *flag.FlagSet, []string, error) {
	var scratch T
	if _, err := parseArgs(flags(&scratch), args); err != nil {
		return scratch, nil, nil, err
	}
	v, err := base()
	if err != nil {
		return v, nil, nil, err
	}
	fs := flags(&v)
	pos, err := parseArgs(fs, args)
	return v, fs, pos, err
}

// flagGiven reports whether the command line set the flag.
func flagGiven(fs *flag.FlagSet, name string) bool {
	given := false
	fs.Visit(func(f *flag.Flag) { given = given || f.Name == name })
	return given
}

// parseArgs parses flags that may come before, between or after positional
// arguments (`import linqs DIR --name cora`) and returns the positional
// ones; everything after "--" is positional. Its errors are flag.ErrHelp
// (-h, --help) or usage errors.
func parseArgs(fs *flag.FlagSet, args []string) ([]string, error) {
	if fs == nil {
		fs = newFlagSet("", nil)
	}
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, err
			}
			return nil, fmt.Errorf("%w: %v", ErrUsage, err)
		}
		rest := fs.Args()
		if n := len(args) - len(rest); n > 0 && args[n-1] == "--" {
			return append(pos, rest...), nil // the flag package stopped at "--"
		}
		if len(rest) == 0 {
			return pos, nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}
