package cli

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"testing"
)

// discard is for commands whose output a test does not read.
var discard = Streams{Out: io.Discard, Err: io.Discard}

// runCLI runs outcore in-process as main does and returns its exit status and output.
func runCLI(args ...string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	code = Main(context.Background(), args, &out, &errb)
	return code, out.String(), errb.String()
}

// walk calls fn for every command of the tree with its path below the root.
func walk(c *Command, path []string, fn func(c *Command, path []string)) {
	fn(c, path)
	for _, sub := range c.Subcommands {
		walk(sub, append(append([]string(nil), path...), sub.Name), fn)
	}
}

func TestHelpExitsZeroEverywhere(t *testing.T) {
	n := 0
	walk(Root(), nil, func(c *Command, path []string) {
		n++
		forms := [][]string{append(append([]string{}, path...), "-h"), append(append([]string{}, path...), "--help"),
			append([]string{"help"}, path...)}
		for _, args := range forms {
			code, out, errOut := runCLI(args...)
			want := "usage: " + strings.Join(append([]string{"outcore"}, path...), " ")
			if code != 0 || !strings.HasPrefix(out, want) || errOut != "" {
				t.Errorf("outcore %s: exit %d, stdout %.60q, stderr %.60q; want 0 and help starting %q on stdout",
					strings.Join(args, " "), code, out, errOut, want)
			}
		}
	})
	if n < 20 {
		t.Errorf("only %d commands in the tree", n)
	}
	// A group's help lists its commands, a leaf's its flags.
	if _, out, _ := runCLI("exp", "help"); !strings.Contains(out, "export") || !strings.Contains(out, "create") {
		t.Errorf("exp help lists no commands:\n%s", out)
	}
	if _, out, _ := runCLI("help", "exp", "export"); !strings.Contains(out, "-figure") || !strings.Contains(out, "epoch-vs-mem") {
		t.Errorf("exp export help lists no flags or figures:\n%s", out)
	}
}

func TestUsageErrorsExitTwo(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string // in the error line
		help string // the usage printed after it
	}{
		{nil, "missing command", "usage: outcore <command>"},
		{[]string{"frobnicate"}, `unknown command "frobnicate"`, "usage: outcore <command>"},
		{[]string{"help", "nope"}, `unknown command "nope"`, "usage: outcore <command>"},
		{[]string{"exp"}, "missing command", "usage: outcore exp"},
		{[]string{"exp", "nope"}, `unknown command "nope"`, "usage: outcore exp"},
		{[]string{"exp", "show"}, "takes 1 argument, got none", "usage: outcore exp show"},
		{[]string{"exp", "show", "x"}, `experiment id "x"`, "usage: outcore exp show"},
		{[]string{"exp", "list", "--nope"}, "flag provided but not defined: -nope", "usage: outcore exp list"},
		{[]string{"data", "import", "csv"}, `unknown command "csv"`, "usage: outcore data import"},
		{[]string{"data", "gen", "--preset", "huge"}, "huge", "usage: outcore data gen"},
		{[]string{"train", "--fanout", "1,x"}, "--fanout", "usage: outcore train"},
		{[]string{"train", "stray"}, `unexpected argument "stray"`, "usage: outcore train"},
		{[]string{"version", "extra"}, "takes no arguments", "usage: outcore version"},
	} {
		code, out, errOut := runCLI(c.args...)
		if code != 2 || out != "" || !strings.Contains(errOut, c.want) || !strings.Contains(errOut, c.help) {
			t.Errorf("outcore %s: exit %d, stdout %q, stderr:\n%s\nwant exit 2, %q and %q on stderr",
				strings.Join(c.args, " "), code, out, errOut, c.want, c.help)
		}
	}
	// Other failures exit 1 without the usage.
	code, _, errOut := runCLI("data", "info", "nope", "--data-dir", t.TempDir())
	if code != 1 || strings.Contains(errOut, "usage:") || !strings.Contains(errOut, "outcore data info: ") {
		t.Errorf("missing dataset: exit %d, stderr %q", code, errOut)
	}
}

// TestDataDirFlag: every command that takes --data-dir has it from
// newFlagSet, with the one description.
func TestDataDirFlag(t *testing.T) {
	var with []string
	walk(Root(), nil, func(c *Command, path []string) {
		if c.Flags == nil {
			return
		}
		if f := c.Flags.Lookup("data-dir"); f != nil {
			with = append(with, strings.Join(path, " "))
			if f.Usage != dataDirHelp {
				t.Errorf("%v: --data-dir described as %q", path, f.Usage)
			}
		}
	})
	for _, want := range []string{"data gen", "data import npy", "data info", "train", "exp export", "exp delete", "serve"} {
		found := false
		for _, w := range with {
			found = found || w == want
		}
		if !found {
			t.Errorf("%s has no --data-dir (commands with it: %v)", want, with)
		}
	}
}

func TestParseArgsInterleavedAndDashDash(t *testing.T) {
	fs := newFlagSet("t", nil)
	name := fs.String("name", "", "")
	pos, err := parseArgs(fs, []string{"a", "--name", "n", "b", "--", "--name", "c"})
	if err != nil || *name != "n" || strings.Join(pos, " ") != "a b --name c" {
		t.Errorf("got %q %v name %q", pos, err, *name)
	}
}

func TestVersionCommand(t *testing.T) {
	code, out, _ := runCLI("version")
	if code != 0 || !strings.HasPrefix(out, "outcore devel") || !strings.Contains(out, "go1.") {
		t.Errorf("version: exit %d, %q", code, out)
	}
	if err := Run(context.Background(), discard, []string{"version", "--json"}); !errors.Is(err, ErrUsage) {
		t.Errorf("version --json: %v", err)
	}
}
